"""softfp8.save / softfp8.load: bit-exact array files without pickle.

The file is a NumPy ``.npz`` archive holding the codes (``uint8``/``uint16``
view of the array) and a JSON description of the format, so it can also be
read by plain NumPy (``np.load(f)["codes"]``) without executing code.
"""
from __future__ import annotations

import json
import zipfile

import numpy as np

from . import _formats
from ._dtypes import dtype_of, format_of

_VERSION = 1


def _describe(fmt):
    return {"softfp8": _VERSION, "name": fmt.name, "family": fmt._family,
            "params": list(fmt.params)}


def _rebuild(desc, file):
    if not isinstance(desc, dict) or desc.get("softfp8") != _VERSION:
        raise ValueError(f"{file!r} is not a softfp8 array file (missing or unknown "
                         f"'format' entry: {desc!r})")
    name, family, params = desc.get("name"), desc.get("family"), desc.get("params")
    if (not isinstance(name, str) or family not in ("preset", "tesla", "factory")
            or not isinstance(params, list) or len(params) != 8
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in params)
            or not 0 <= params[5] < len(_formats.SPECIALS)
            or not 0 <= params[6] < len(_formats.SUBNORMALS)
            or not 1 <= params[0] <= 16 or not -(1 << 20) <= params[4] <= 1 << 20
            or not all(0 <= params[i] <= 16 for i in (1, 2, 3, 7))):
        raise ValueError(f"{file!r}: corrupted softfp8 format description {desc!r}")
    if family == "factory":
        try:
            return _formats._rebuild(name, family, tuple(params))
        except TypeError as exc:   # e.g. a sign field of 2
            raise ValueError(f"{file!r}: corrupted softfp8 format description {desc!r} "
                             f"({exc})") from None
    # a preset or Tesla format: the registry's own object, and the file must agree with it
    try:
        fmt = _formats.lookup(name)
    except (ValueError, TypeError):
        fmt = None
    if fmt is None or fmt._family != family or fmt.params != tuple(params):
        raise ValueError(f"{file!r}: format description {desc!r} does not match the softfp8 "
                         f"format named {name!r}")
    return fmt


def save(file, arr):
    """Save a softfp8 array (any format, parametric included) bit-exactly."""
    arr = np.asarray(arr)
    fmt = format_of(arr.dtype)
    if fmt is None:
        raise TypeError(f"softfp8.save needs a softfp8 array, got dtype {arr.dtype}; "
                        f"use np.save for NumPy dtypes")
    # np.ascontiguousarray would turn a 0-d array into shape (1,)
    codes = np.array(arr, copy=None, order="C").view(fmt.storage)
    meta = np.array(json.dumps(_describe(fmt)))
    np.savez(file, codes=codes, format=meta)


def load(file):
    """Load an array written by softfp8.save."""
    try:
        z = np.load(file, allow_pickle=False)
    except (ValueError, EOFError, OSError, zipfile.BadZipFile) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise  # FileNotFoundError, PermissionError, ...: they name the path
        raise ValueError(f"{file!r} is not a softfp8 array file ({exc})") from None
    if not hasattr(z, "files"):  # a plain .npy array
        raise ValueError(f"{file!r} is not a softfp8 array file (a plain .npy array)")
    with z:
        if "codes" not in z.files or "format" not in z.files:
            raise ValueError(f"{file!r} is not a softfp8 array file (expected 'codes' and "
                             f"'format' entries, found {z.files})")
        try:
            desc = json.loads(str(z["format"]))
            codes = z["codes"]
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, RuntimeError, NotImplementedError,
                KeyError) as exc:  # bad JSON, truncated, flag bits flipped (zipfile: "encrypted")
            raise ValueError(f"{file!r}: corrupted softfp8 array file ({exc})") from None
        fmt = _rebuild(desc, file)
    if codes.dtype != fmt.storage:
        raise ValueError(f"{file!r}: codes stored as {codes.dtype}, expected {fmt.storage}")
    return codes.view(dtype_of(fmt))
