"""The two independent exact reference models of the softfp8 tests.

* ``rational``: integer/dyadic exact model of every operation (decode, exact
  results as descriptors, one rounding into the destination), with whole-array
  helpers for the exhaustive comparisons.
* ``fraction_model``: ``fractions.Fraction`` model of decoding and rounding into a
  format (presets and Tesla families), used by the API, stochastic and Tesla tests.

Both are written from SPEC.md, never import softfp8 and share no code with each
other, so that tests cross-checking them (``tests/core/test_reference.py``)
compare two separate readings of the specification.
"""
