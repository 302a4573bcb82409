"""softfp8 test suite; subfolders mirror the architecture layers (docs/architecture.md):

* ``models/``     the two independent exact reference models (no softfp8 import)
* ``core/``       the C core through ``softfp8.bits`` against the models and vectors
* ``numpy_glue/`` the NumPy DTypes, casts, ufuncs and matmul
* ``fast/``       fast paths, proven bit- and flag-identical to the exact core
* ``tools/``      Python front: context, CLI, packaging
"""
