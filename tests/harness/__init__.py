"""The differential harness: every fast family and every matrix path of softfp8,
registered with its parameter space, proven bit- and flag-identical to the exact core.

Layout (docs/testing.md, "The differential harness"):
  names.py        the expected entry names (the ONE place switched to the C hooks at merge)
  machinery.py    switches, observation, comparison, Case, prove()
  space.py        formats, environments, inputs (boundary / random / exhaustive), shapes
  conventions.py  every NumPy calling convention, applied to a ufunc or a cast
  families.py     one entry per fast family (driver.c's ladder)
  matrix.py       one entry per matrix path, plus the public entry points above them
  registry.py     the registry (name -> Entry)
  test_harness.py the generic test: every entry, every part, every SIMD level
  test_guard.py   registry == hooks, coverage counters, case counts
"""
