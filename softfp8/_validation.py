"""Argument checks shared by every softfp8 module (the leaf of the import graph).

Import order of the package, each module importing only earlier ones:
_validation -> _registry -> _formats -> _context -> bits -> _dtypes -> _printing / _io /
_interop -> __main__ (tests/tools/test_import_graph.py checks it).
"""
from __future__ import annotations

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
