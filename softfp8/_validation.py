"""Argument checks shared by every softfp8 module (the leaf of the import graph).

Import order of the package, each module importing only earlier ones:
_validation -> _registry -> _formats -> _context -> bits -> _dtypes -> _printing / _io /
_interop -> __main__ (tests/tools/test_import_graph.py checks it).
"""
from __future__ import annotations

import math
import operator

import numpy as np


class FormatBase:
    """Marker base class of softfp8.Format, so that this leaf module can
    recognise formats without importing the module that defines them."""

    __slots__ = ()


def _as_int(value, what):
    """operator.index with a message naming the bad value (bools refused)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {value!r}") from None


def _choice(value, choices, what):
    """value if it is one of the strings in choices (TypeError / ValueError otherwise)."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, one of {', '.join(choices)}; got {value!r}")
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}: expected one of {', '.join(choices)}")
    return value


def _as_bool(value, what):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be a bool, got {value!r}")
    return bool(value)


def format_or_none(x):
    """The softfp8 format of x, or None: x may be a format, a softfp8 dtype
    (descriptor), or a type NumPy turns into one (a softfp8 DType class of a
    fixed format or its scalar type)."""
    if isinstance(x, FormatBase):
        return x
    if isinstance(x, np.dtype):
        fmt = getattr(x, "format", None)
        return fmt if isinstance(fmt, FormatBase) else None
    if isinstance(x, type):
        try:
            # a DType class makes its default descriptor (a parametric family's refuses:
            # TypeError); a scalar type is what np.dtype maps to its DType's descriptor
            d = x() if issubclass(x, np.dtype) else np.dtype(x)
        except (TypeError, ValueError):
            return None
        fmt = getattr(d, "format", None)
        return fmt if isinstance(fmt, FormatBase) else None
    return None


def as_format(x, what="fmt"):
    """The softfp8 format of a format or dtype-like (see format_or_none); TypeError naming x
    otherwise.  Wherever softfp8 accepts a format it accepts its dtype too."""
    fmt = format_or_none(x)
    if fmt is None:
        raise TypeError(f"{what} must be a softfp8 format or its dtype (e.g. softfp8.e4m3 or "
                        f"softfp8.e4m3.dtype), got {x!r}")
    return fmt


def _f32_of_rational(x):
    """x (an int, or a number with as_integer_ratio) rounded once to nearest-even binary32:
    27 significant bits of |x| and a sticky bit, exact in binary64, then NumPy's cast."""
    n, d = (int(x), 1) if isinstance(x, (int, np.integer)) else x.as_integer_ratio()
    if n == 0:
        return np.float32(0.0)
    k = 26 - (abs(n).bit_length() - d.bit_length())    # |n / d| * 2**k has 26..27 bits
    q, r = divmod(abs(n) << k, d) if k >= 0 else divmod(abs(n), d << -k)
    try:
        v = math.ldexp(q | (r != 0), -k)
    except OverflowError:
        v = math.inf
    with np.errstate(over="ignore"):
        return np.float32(-v if n < 0 else v)


def binary32_scales(scale, what):
    """Scales as softfp8.scaling.quantize and softfp8.scaled_mm take them (docs/training.md):
    every value rounded once, to nearest even, to binary32 -- floats of at most 64 bits and
    softfp8 values through their exact float64 value, integers and long doubles from their
    exact value -- and each result finite and positive (ValueError naming the first bad
    value).  Returns a float32 array of scale's shape."""
    if isinstance(scale, (bool, np.bool_)):
        raise TypeError(f"{what} must be a number or an array of numbers, got {scale!r}")
    if isinstance(scale, (int, np.integer)) or (isinstance(scale, np.floating) and scale.dtype.itemsize > 8):
        arr = np.asarray(scale if isinstance(scale, np.floating) else int(scale), dtype=object)
    else:
        arr = np.asarray(scale)
    dt = arr.dtype
    if dt.kind == "O" and arr.ndim == 0 and isinstance(arr[()], (int, np.integer, np.floating)):
        s32 = np.asarray(_f32_of_rational(arr[()]))
    elif dt.kind not in "fiu" and not isinstance(getattr(dt, "format", None), FormatBase):
        raise TypeError(f"{what} must be a float, integer or softfp8 array, got dtype {dt}")
    elif (dt.kind == "f" and dt.itemsize > 8) or (dt.kind in "iu" and arr.size and
                                                   int(np.max(np.abs(arr.astype(object)))) > 2 ** 53):
        s32 = np.array([_f32_of_rational(int(v) if dt.kind in "iu" else v) for v in arr.ravel()],
                       dtype=np.float32).reshape(arr.shape)
    else:
        with np.errstate(over="ignore"):
            s32 = arr.astype(np.float64).astype(np.float32)
    bad = ~(np.isfinite(s32) & (s32 > 0))
    if bad.any():
        v = arr[bad].flat[0] if arr.ndim else arr[()]
        v = v.item() if isinstance(v, np.generic) and v.dtype.itemsize <= 8 else v
        raise ValueError(f"{what} must hold finite positive scales (each rounded to the nearest "
                         f"binary32 must stay finite and non-zero), got {v!r}")
    return s32
