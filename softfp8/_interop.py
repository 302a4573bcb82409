"""Zero-copy views between softfp8 arrays and ml_dtypes / PyTorch (optional).

Which preset matches which ml_dtypes / torch type is the ``ml_dtypes`` and
``torch`` column of softfp8/_registry.py.
"""
from __future__ import annotations

import numpy as np

from . import _ext, _formats, _registry
from . import bits as _bits
from ._dtypes import dtype_of, format_of
from ._validation import format_or_none

# softfp8 preset name -> ml_dtypes attribute / torch dtype attribute (from the registry)
_ML_DTYPES = {row.name: row.ml_dtypes for row in _registry.ROWS if row.ml_dtypes}
_TORCH = {row.name: row.torch for row in _registry.ROWS if row.torch}


def _preset_of(x, table, library):
    """The preset of a softfp8 array, dtype or format that `library` has (TypeError otherwise)."""
    fmt = format_or_none(x)
    if fmt is None:
        fmt = format_of(np.asarray(x).dtype)
    if fmt is None or fmt._family != "preset" or fmt.name not in table:
        what = f"softfp8.{fmt.name}" if fmt is not None else f"dtype {np.asarray(x).dtype}"
        raise TypeError(f"{library} has no equivalent of {what}; softfp8 formats it has: "
                        f"{', '.join(table)}")
    return fmt


def _is_dtype_like(x):
    return format_or_none(x) is not None


def to_ml_dtypes(arr):
    """View a softfp8 array as the ml_dtypes array of the same format (no copy).

    Given a softfp8 format or dtype instead of an array, returns the ml_dtypes dtype."""
    import ml_dtypes

    fmt = _preset_of(arr, _ML_DTYPES, "ml_dtypes")
    target = np.dtype(getattr(ml_dtypes, _ML_DTYPES[fmt.name]))
    if _is_dtype_like(arr):
        return target
    return np.asarray(arr).view(fmt.storage).view(target)


def _ml_match(dt):
    import ml_dtypes

    for name, attr in _ML_DTYPES.items():
        if dt == np.dtype(getattr(ml_dtypes, attr)):
            return _formats.PRESETS[name]
    raise TypeError(f"no softfp8 format matches ml_dtypes dtype {dt}; ml_dtypes types with an "
                    f"equivalent: {', '.join(_ML_DTYPES.values())}")


def from_ml_dtypes(arr):
    """View an ml_dtypes array as the softfp8 array of the same format (no copy).

    Given an ml_dtypes dtype (or type) instead of an array, returns the softfp8 dtype."""
    if isinstance(arr, (np.dtype, type)):
        return dtype_of(_ml_match(np.dtype(arr)))
    arr = np.asarray(arr)
    fmt = _ml_match(arr.dtype)
    return arr.view(fmt.storage).view(dtype_of(fmt))


def _torch_native(torch, fmt):
    """The torch dtype with exactly the codes of `fmt` (registry column), else None."""
    if fmt._family != "preset" or fmt.name not in _TORCH:
        return None
    return getattr(torch, _TORCH[fmt.name], None)


def _code_dtype(torch, fmt):
    """The torch integer dtype of `fmt`'s codes: uint8 (<= 8 bits) or uint16."""
    return torch.uint8 if fmt.storage.itemsize == 1 else torch.uint16


def to_torch(arr):
    """A PyTorch CPU tensor sharing memory with a softfp8 array (docs/frameworks.md).

    Presets that PyTorch has (e4m3, e5m2, e4m3fnuz, e5m2fnuz, float8_e8m0fnu, float16,
    bfloat16) become tensors of that torch dtype; every other format a torch.uint8 /
    torch.uint16 tensor of its codes (the format travels alongside: pass it to
    ``from_torch(t, fmt)`` and to the ops of softfp8.torch).  Strided arrays keep their
    strides (no copy); negative strides, which PyTorch cannot express, raise ValueError.
    Given a softfp8 format or dtype instead of an array, returns the torch dtype (native
    or the code dtype)."""
    import torch

    fmt = format_or_none(arr)
    if fmt is not None:
        return _torch_native(torch, fmt) or _code_dtype(torch, fmt)
    a = np.asarray(arr)
    fmt = format_of(a.dtype)
    if fmt is None:
        raise TypeError(f"softfp8.to_torch takes a softfp8 array, got an array of dtype {a.dtype}")
    if any(s < 0 for s in a.strides):
        raise ValueError(f"softfp8.to_torch: the array has a negative stride {a.strides}, which a "
                         f"PyTorch tensor cannot share: pass a copy (np.ascontiguousarray)")
    native = _torch_native(torch, fmt)
    if native is None:
        return torch.from_numpy(a.view(fmt.storage))
    signed = np.int8 if fmt.storage.itemsize == 1 else np.int16
    return torch.from_numpy(a.view(signed)).view(native)


def from_torch(tensor, fmt=None):
    """A softfp8 array sharing memory with a PyTorch CPU tensor (docs/frameworks.md).

    A tensor of a dtype with a softfp8 preset (float8_e4m3fn, ..., float16, bfloat16)
    gives that preset's array; a uint8 / uint16 (or int8 / int16) tensor of codes needs
    ``fmt``, the format of its codes.  Given a torch dtype instead of a tensor, returns
    the softfp8 dtype."""
    import torch

    want = None if fmt is None else _formats.lookup(fmt)
    if isinstance(tensor, torch.dtype):
        dt, is_tensor = tensor, False
    elif isinstance(tensor, torch.Tensor):
        dt, is_tensor = tensor.dtype, True
    else:
        raise TypeError(f"softfp8.from_torch takes a torch.Tensor or torch.dtype, got "
                        f"{type(tensor).__name__}")
    fmt = None
    for name, attr in _TORCH.items():
        if getattr(torch, attr, None) == dt:
            fmt = _formats.PRESETS[name]
    if fmt is not None and want is not None and want != fmt:
        raise TypeError(f"softfp8.from_torch: a {dt} tensor holds {fmt.name} values, not {want.name}")
    if fmt is None:
        codes = {torch.uint8: 1, torch.int8: 1, torch.uint16: 2, torch.int16: 2}
        if dt not in codes:
            raise TypeError(f"no softfp8 format matches torch dtype {dt}: give a tensor of a torch "
                            f"float8 type, float16 or bfloat16, or a uint8 / uint16 code tensor "
                            f"with fmt=")
        if want is None:
            raise TypeError(f"softfp8.from_torch: a {dt} tensor holds codes; give their format "
                            f"(fmt=)")
        if codes[dt] != want.storage.itemsize:
            raise TypeError(f"softfp8.from_torch: {want.name} codes are {want.storage}, got a {dt} "
                            f"tensor")
        fmt = want
    if not is_tensor:
        return dtype_of(fmt)
    if tensor.device.type != "cpu":
        raise ValueError(f"softfp8.from_torch: the tensor is on device {tensor.device}; softfp8 "
                         f"shares memory with CPU tensors only (move it with .cpu())")
    signed = torch.int8 if fmt.storage.itemsize == 1 else torch.int16
    raw = tensor.detach().view(signed).numpy()
    return raw.view(fmt.storage).view(dtype_of(fmt))


# --------------------------------------------------------------------------
# astype between softfp8 and ml_dtypes dtypes (softfp8/_core/npy/casts.c)
# --------------------------------------------------------------------------

_ML_CAST: dict = {}


def _ml_cast_format(dt):
    """The softfp8 format with exactly the codes and values of ml_dtypes float dtype
    `dt`, read from ml_dtypes.finfo and the dtype's own values, and checked on every
    code; the registry's preset where a row names the type (float8_e8m0fnu, which no
    finfo-built format can express: no zero, no sign); TypeError when softfp8 has none."""
    import ml_dtypes

    dt = np.dtype(dt)
    for name, attr in _ML_DTYPES.items():   # a preset with this ml_dtypes type (registry)
        if dt == np.dtype(getattr(ml_dtypes, attr)):
            return _formats.PRESETS[name]
    info = ml_dtypes.finfo(dt)
    bits = int(info.bits)
    codes = np.arange(1 << bits, dtype=np.uint8 if bits <= 8 else np.uint16)
    error = TypeError(f"softfp8 has no format with the values of ml_dtypes {dt}: it cannot cast to or "
                      f"from it")
    if dt.itemsize != codes.itemsize:
        raise error
    with np.errstate(all="ignore"):
        vals = codes.view(dt).astype(np.float64)
    nan = np.isnan(vals)
    specials = ("ieee" if np.isinf(vals).any() else
                "fnuz" if nan.sum() == 1 else "fn" if nan.any() else "none")
    try:
        fmt = _formats.format(exp_bits=int(info.nexp), man_bits=int(info.nmant), bias=1 - int(info.minexp),
                              specials=specials, subnormals="ieee", saturate=False)
    except (TypeError, ValueError):
        raise error from None
    if fmt.bits != bits:
        raise error
    # the format must decode every code to the value ml_dtypes gives it
    mine = _bits.to_float(codes, fmt, **_bits.FIXED)[0]
    same = (mine == vals) & (np.signbit(mine) == np.signbit(vals))
    if not np.all(same | (np.isnan(mine) & nan)):
        raise error
    return fmt


def _ml_cast_dtype(dt):
    """Hook of the C casts: the softfp8 dtype used for ml_dtypes dtype `dt` (cached).

    Its default saturation is off, as ml_dtypes' own casts (float32 -> float8_e4m3fn
    overflows to NaN); softfp8.saturation(True) applies as to every cast."""
    dt = np.dtype(dt)
    r = _ML_CAST.get(dt)
    if r is None:
        r = dtype_of(_ml_cast_format(dt))
        _ML_CAST[dt] = r
    return r



# --------------------------------------------------------------------------
# DLPack (NumPy >= 2.5: numpy.dtypes.register_dlpack_dtype)
# --------------------------------------------------------------------------

# DLDataTypeCode of DLPack's dlpack.h (DLPack 1.1: kDLFloat 2, kDLBfloat 4, the FP8
# codes 7..14), keyed by the ml_dtypes name that DLPack's names follow (registry column).
# kDLFloat6_* (15, 16) and kDLFloat4_e2m1fn (17) are specified with bits 6 and 4, which
# NumPy cannot register: register_dlpack_dtype requires bits == 8 * itemsize (dlpack.c,
# "number of bits must match the dtype's elsize").
_DLPACK_CODES = {
    "bfloat16": 4, "float8_e3m4": 7, "float8_e4m3": 8, "float8_e4m3b11fnuz": 9,
    "float8_e4m3fn": 10, "float8_e4m3fnuz": 11, "float8_e5m2": 12, "float8_e5m2fnuz": 13,
    "float8_e8m0fnu": 14,
}
_DLPACK_FLOAT = 2   # kDLFloat: IEEE binary16 is softfp8.float16


def _dlpack_table():
    """{softfp8 preset name: (DLPack code, bits)} of the presets DLPack has a type for."""
    out = {name: (_DLPACK_CODES[ml], 8 * _formats.PRESETS[name].storage.itemsize)
           for name, ml in _ML_DTYPES.items() if ml in _DLPACK_CODES}
    out["float16"] = (_DLPACK_FLOAT, 16)
    return out


def _register_dlpack():
    """Let np.from_dlpack / ndarray.__dlpack__ carry the presets DLPack names.

    Export (softfp8 -> DLPack) is always registered.  Import (DLPack -> NumPy) gives
    softfp8's dtype unless another package registered the same (code, bits) first
    (NumPy then raises ValueError and keeps the first; its own types -- float16 for
    kDLFloat bits 16 -- always win on import)."""
    register = getattr(getattr(np, "dtypes", None), "register_dlpack_dtype", None)
    if register is None:      # NumPy 2.4: np.from_dlpack refuses softfp8 arrays
        return {}
    done = {}
    for name, key in _dlpack_table().items():
        try:
            register(key, dtype_of(_formats.PRESETS[name]))
        except ValueError:
            pass
        done[name] = key
    return done


DLPACK = _register_dlpack()

_ext.set_ml_hook(_ml_cast_dtype)
