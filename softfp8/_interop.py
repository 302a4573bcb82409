"""Zero-copy views between softfp8 arrays and ml_dtypes / PyTorch (optional)."""
from __future__ import annotations

import numpy as np

from . import _formats
from ._dtypes import dtype_of, format_of

# softfp8 preset name -> ml_dtypes attribute / torch dtype attribute
_ML_DTYPES = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
              "e5m2fnuz": "float8_e5m2fnuz", "bfloat16": "bfloat16"}
_TORCH = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
          "e5m2fnuz": "float8_e5m2fnuz", "bfloat16": "bfloat16", "float16": "float16"}


def _preset_of(arr):
    fmt = format_of(np.asarray(arr).dtype)
    if fmt is None or fmt._family != "preset":
        raise TypeError(f"expected a softfp8 array of one of {', '.join(_ML_DTYPES)}, "
                        f"got dtype {np.asarray(arr).dtype}")
    return fmt


def to_ml_dtypes(arr):
    """View a softfp8 array as the ml_dtypes array of the same format (no copy)."""
    import ml_dtypes

    fmt = _preset_of(arr)
    if fmt.name not in _ML_DTYPES:
        raise TypeError(f"ml_dtypes has no equivalent of softfp8.{fmt.name}")
    return np.asarray(arr).view(fmt.storage).view(getattr(ml_dtypes, _ML_DTYPES[fmt.name]))


def from_ml_dtypes(arr):
    """View an ml_dtypes array as the softfp8 array of the same format (no copy)."""
    import ml_dtypes

    arr = np.asarray(arr)
    for name, attr in _ML_DTYPES.items():
        if arr.dtype == np.dtype(getattr(ml_dtypes, attr)):
            fmt = _formats.PRESETS[name]
            return arr.view(fmt.storage).view(dtype_of(fmt))
    raise TypeError(f"no softfp8 format matches ml_dtypes dtype {arr.dtype}")


def to_torch(arr):
    """A PyTorch tensor sharing memory with a softfp8 array (contiguous arrays)."""
    import torch

    fmt = _preset_of(arr)
    if fmt.name not in _TORCH:
        raise TypeError(f"PyTorch has no equivalent of softfp8.{fmt.name}")
    codes = np.ascontiguousarray(np.asarray(arr).view(fmt.storage))
    t = torch.from_numpy(codes.view(np.int8 if fmt.bits == 8 else np.int16))
    return t.view(getattr(torch, _TORCH[fmt.name]))


def from_torch(tensor):
    """A softfp8 array sharing memory with a PyTorch tensor of a matching dtype."""
    import torch

    for name, attr in _TORCH.items():
        if hasattr(torch, attr) and tensor.dtype == getattr(torch, attr):
            fmt = _formats.PRESETS[name]
            raw = tensor.view(torch.int8 if fmt.bits == 8 else torch.int16).numpy()
            return raw.view(fmt.storage).view(dtype_of(fmt))
    raise TypeError(f"no softfp8 format matches torch dtype {tensor.dtype}")
