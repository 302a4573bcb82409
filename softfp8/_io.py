"""softfp8.save / softfp8.load: bit-exact array files without pickle.

The file is a NumPy ``.npz`` archive holding the codes (``uint8``/``uint16``
view of the array) and a JSON description of the format, so it can also be
read by plain NumPy (``np.load(f)["codes"]``) without executing code.
"""
from __future__ import annotations

import json

import numpy as np

from . import _formats
from ._dtypes import dtype_of, format_of

_VERSION = 1


def _describe(fmt):
    return {"softfp8": _VERSION, "name": fmt.name, "family": fmt._family,
            "params": list(fmt.params)}


def _rebuild(desc):
    if not isinstance(desc, dict) or desc.get("softfp8") != _VERSION:
        raise ValueError("not a softfp8 array file (missing or unknown 'format' entry)")
    params = tuple(int(x) for x in desc["params"])
    fmt = _formats._rebuild(desc["name"], desc["family"], params)
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
    with np.load(file, allow_pickle=False) as z:
        if "codes" not in z.files or "format" not in z.files:
            raise ValueError("not a softfp8 array file (expected 'codes' and 'format' entries)")
        desc = json.loads(str(z["format"]))
        fmt = _rebuild(desc)
        codes = z["codes"]
    if codes.dtype != fmt.storage:
        raise ValueError(f"softfp8 file: codes stored as {codes.dtype}, expected {fmt.storage}")
    return codes.view(dtype_of(fmt))
