"""softfp8: bit-exact arithmetic for FP8 and other small floating-point formats.

Formats: ``e4m3``, ``e5m2``, ``e4m3fnuz``, ``e5m2fnuz``, ``cfloat8_143(bias=..)``,
``cfloat8_152(bias=..)``, ``shp(bias=..)``, ``uhp``, ``hfp8_143``, ``hfp8_152``,
``hfp16_169``, ``float16``, ``bfloat16`` and ``format(...)`` for any other.
The bit-level golden model is :mod:`softfp8.bits`.
"""
import os as _os

from ._formats import (  # noqa: F401
    Format, TeslaFamily, bfloat16, cfloat8_143, cfloat8_152, e4m3, e4m3fnuz, e5m2, e5m2fnuz,
    float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float16, format, hfp8_143,
    hfp8_152, hfp16_169, lookup, presets, shp, uhp,
)
from . import bits  # noqa: F401
from ._context import (  # noqa: F401
    Flags, clear_flags, collect_flags, get_flags, get_rounding, get_saturation, get_tininess,
    rounding, saturation, tininess,
)
from ._dtypes import SoftScalar, finfo, fma, matmul  # noqa: F401
from ._io import load, save  # noqa: F401
from ._interop import from_ml_dtypes, from_torch, to_ml_dtypes, to_torch  # noqa: F401

__version__ = "0.1.0"


def get_include():
    """Folder holding ``softfp8/softfp8.h`` (the public C API), as numpy.get_include()."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    installed = _os.path.join(here, "include")
    if _os.path.isfile(_os.path.join(installed, "softfp8", "softfp8.h")):
        return installed
    return _os.path.join(_os.path.dirname(here), "include")


__all__ = ["Format", "Flags", "SoftScalar", "finfo", "fma", "matmul", "save", "load", "to_ml_dtypes",
           "from_ml_dtypes", "to_torch", "from_torch", "rounding", "saturation",
           "tininess", "get_rounding", "get_saturation", "get_tininess", "get_flags",
           "clear_flags", "collect_flags", "bits", "format", "presets", "lookup", "get_include",
           "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "cfloat8_143", "cfloat8_152", "shp", "uhp",
           "hfp8_143", "hfp8_152", "hfp16_169", "float16", "bfloat16", "float8_e4m3fn",
           "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
