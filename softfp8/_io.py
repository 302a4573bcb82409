"""softfp8.save / softfp8.savez / softfp8.load: bit-exact array files without pickle.

The file is a NumPy ``.npz`` archive holding the codes (``uint8``/``uint16``
view of the array) and a JSON description of the format, so it can also be
read by plain NumPy (``np.load(f)["codes"]``) without executing code.

``save`` writes one array (entries ``codes`` and ``format``); ``savez`` several,
softfp8 and NumPy ones, under np.savez's names (``arr_0``, ... for positional arrays,
the keyword names otherwise), each softfp8 array as its codes, with one JSON entry
``__softfp8__`` naming the format of each.  ``load`` reads both: an array for a
``save`` file, a dict of arrays for a ``savez`` file.

np.save / np.savez cannot do this without pickle: NumPy's ``write_array``
(numpy/lib/_format_impl.py) pickles every array whose DType is not a legacy one
(``if array.dtype.hasobject or not dtype_class._legacy:`` ... ``pickle.dump(array,
fp, ...)``), so a plain ``np.load`` refuses such a file unless ``allow_pickle=True``.
"""
from __future__ import annotations

import json
import zipfile

import numpy as np

from . import _formats
from ._dtypes import dtype_of, format_of

_VERSION = 1
_SAVEZ_KEY = "__softfp8__"


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


def savez(file, *args, **kwds):
    """Save several arrays in one ``.npz`` without pickle, as ``np.savez``: positional
    arrays as ``arr_0``, ``arr_1``, ..., keyword arrays under their names.  softfp8
    arrays (any format) are stored bit-exactly as codes; NumPy arrays of numeric,
    boolean and string dtypes as they are.  ``softfp8.load`` returns a dict of them."""
    named = {f"arr_{i}": a for i, a in enumerate(args)}
    for key, value in kwds.items():
        if key in named:
            raise TypeError(f"softfp8.savez: cannot use un-named variables and keyword {key}")
        named[key] = value
    if _SAVEZ_KEY in named:
        raise ValueError(f"softfp8.savez: the name {_SAVEZ_KEY!r} is reserved for the formats")
    entries, formats = {}, {}
    for key, value in named.items():
        arr = np.asarray(value)
        fmt = format_of(arr.dtype)
        if fmt is not None:
            entries[key] = np.array(arr, copy=None, order="C").view(fmt.storage)
            formats[key] = _describe(fmt)
        elif arr.dtype.hasobject or not type(arr.dtype)._legacy:
            raise TypeError(f"softfp8.savez: array {key!r} has dtype {arr.dtype}, which np.savez "
                            f"would pickle; softfp8.savez stores softfp8 and NumPy numeric arrays")
        else:
            entries[key] = arr
    meta = np.array(json.dumps({"softfp8": _VERSION, "arrays": formats}))
    np.savez(file, **entries, **{_SAVEZ_KEY: meta})


def _open(file):
    """(NpzFile) of a softfp8 file, or ValueError naming the file."""
    try:
        z = np.load(file, allow_pickle=False)
    except (ValueError, EOFError, OSError, zipfile.BadZipFile) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise  # FileNotFoundError, PermissionError, ...: they name the path
        raise ValueError(f"{file!r} is not a softfp8 array file ({exc})") from None
    if not hasattr(z, "files"):  # a plain .npy array
        raise ValueError(f"{file!r} is not a softfp8 array file (a plain .npy array)")
    return z


_READ_ERRORS = (ValueError, OSError, EOFError, zipfile.BadZipFile, RuntimeError, NotImplementedError,
                KeyError)   # bad JSON, truncated, flag bits flipped (zipfile: "encrypted")


def _with_format(codes, fmt, file):
    if codes.dtype != fmt.storage:
        raise ValueError(f"{file!r}: codes stored as {codes.dtype}, expected {fmt.storage}")
    return codes.view(dtype_of(fmt))


def _load_savez(z, file):
    try:
        meta = json.loads(str(z[_SAVEZ_KEY]))
        arrays = {key: z[key] for key in z.files if key != _SAVEZ_KEY}
    except _READ_ERRORS as exc:
        raise ValueError(f"{file!r}: corrupted softfp8 array file ({exc})") from None
    formats = meta.get("arrays") if isinstance(meta, dict) and meta.get("softfp8") == _VERSION else None
    if not isinstance(formats, dict) or not set(formats) <= set(arrays):
        raise ValueError(f"{file!r}: corrupted softfp8 array file (format entry {meta!r})")
    for key, desc in formats.items():
        arrays[key] = _with_format(arrays[key], _rebuild(desc, file), file)
    return arrays


def load(file):
    """Load a file written by softfp8.save (the array) or softfp8.savez (a dict of the
    arrays by name, in the order they were saved)."""
    z = _open(file)
    with z:
        if _SAVEZ_KEY in z.files:
            return _load_savez(z, file)
        if "codes" not in z.files or "format" not in z.files:
            raise ValueError(f"{file!r} is not a softfp8 array file (expected 'codes' and "
                             f"'format' entries, found {z.files})")
        try:
            desc = json.loads(str(z["format"]))
            codes = z["codes"]
        except _READ_ERRORS as exc:
            raise ValueError(f"{file!r}: corrupted softfp8 array file ({exc})") from None
        fmt = _rebuild(desc, file)
    return _with_format(codes, fmt, file)
