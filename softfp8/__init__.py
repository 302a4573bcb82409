"""softfp8: bit-exact arithmetic for FP8 and other small floating-point formats.

Formats: the presets of softfp8/_registry.py as module attributes (``e4m3``, ``e5m2``,
``float8_e4m3``, ``float8_e3m4``, ``bfloat16``, ...; ``presets()`` lists them), the
Tesla families ``cfloat8_143(bias=..)``, ``cfloat8_152(bias=..)``, ``shp(bias=..)``,
and ``format(...)`` for any other.  The bit-level golden model is :mod:`softfp8.bits`.
"""
import os as _os

from ._formats import NAMED as _NAMED
from ._formats import Format, TeslaFamily, format, lookup, presets  # noqa: F401
from ._context import (  # noqa: F401
    Flags, clear_flags, collect_flags, get_flags, get_rounding, get_saturation, get_tininess,
    rounding, saturation, tininess, isa, get_isa,
)
from . import bits  # noqa: F401
from ._dtypes import SoftScalar, finfo, fma, matmul  # noqa: F401
from ._dtypes import OWN_UFUNCS as _OWN_UFUNCS
from . import _printing  # noqa: F401  (installs NumPy array printing)
from ._io import load, save, savez  # noqa: F401
from ._interop import from_ml_dtypes, from_torch, to_ml_dtypes, to_torch  # noqa: F401
from . import scaling  # noqa: F401
from . import mx  # noqa: F401  (block formats: OCP MX, NVFP4, DeepSeek-V3 tiles)
from . import nn  # noqa: F401  (FP8 training recipes and a NumPy linear layer)
from . import p3109  # noqa: F401
from .gemm import Accumulation, matmul, scaled_mm  # noqa: F401,F811  (matmul: with accumulation=)
from .matrix_units import BlockFMA, MatrixUnit  # noqa: F401  (docs/matrix-units.md)

# every preset, alias and Tesla family (softfp8.e4m3, softfp8.float8_e4m3fn, softfp8.shp, ...)
globals().update(_NAMED)
# softfp8's own ufuncs (softfp8.fma, softfp8.nextup, softfp8.total_order, ...: the op-table
# rows whose ufunc NumPy does not have)
globals().update(_OWN_UFUNCS)

__version__ = "0.1.0"


def get_include():
    """Folder holding ``softfp8/softfp8.h`` (the public C API), as numpy.get_include()."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    installed = _os.path.join(here, "include")
    if _os.path.isfile(_os.path.join(installed, "softfp8", "softfp8.h")):
        return installed
    return _os.path.join(_os.path.dirname(here), "include")


def get_library_dir():
    """Folder holding libsoftfp8 (``libsoftfp8.so`` and ``libsoftfp8.a``, the C core with
    the API of ``softfp8/softfp8.h``) and ``pkgconfig/softfp8.pc``."""
    return _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "lib")


def get_libraries():
    """Library names to link, as for ``-l``: ``["softfp8"]``."""
    return ["softfp8"]


__all__ = ["Format", "Flags", "SoftScalar", "finfo", "fma", "matmul", "Accumulation", "BlockFMA", "MatrixUnit",
           "scaled_mm",
           "save", "savez", "load", "to_ml_dtypes", "from_ml_dtypes", "to_torch", "from_torch", "rounding", "saturation",
           "tininess", "isa", "get_isa", "get_rounding", "get_saturation", "get_tininess", "get_flags",
           "clear_flags", "collect_flags", "bits", "p3109", "format", "presets", "lookup",
           "get_include", "get_library_dir", "get_libraries", "scaling", "mx", *_NAMED,
           *sorted(set(_OWN_UFUNCS) - {"fma"})]
