"""``softfp8.torch_nn.Linear``: a drop-in for ``torch.nn.Linear`` whose three GEMMs follow a
``softfp8.nn.Recipe`` (docs/training.md, "FP8 layers with state"; docs/frameworks.md).

The layer's arithmetic is ``softfp8.nn.Linear``'s, run on zero-copy NumPy views of the
CPU tensors: forward ``x @ W.T + b``, the data gradient ``g @ W`` and the weight gradient
``g.T @ x`` with the recipe's quantisation, GEMM and accumulation, and the bias gradient
``g.sum(0)`` -- so a NumPy ``softfp8.nn.Linear`` with the same recipe, weights and inputs
gives the same bits (tests/frameworks/test_torch_nn.py checks every step of a training
run).  The recipe's state (amax histories, the step that seeds stochastic rounding) lives
in the module.  CPU float32 tensors only; other devices or dtypes raise a ValueError /
TypeError naming them.  Needs PyTorch (``pip install 'softfp8[torch]'``).
"""
from __future__ import annotations

import math

import numpy as np

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised without torch
    raise ImportError("softfp8.torch_nn needs PyTorch: pip install 'softfp8[torch]'") from exc

from . import nn as _nn

__all__ = ["Linear"]


def _array(t, what):
    """A float32 NumPy view of a CPU tensor (a copy only if it is not contiguous)."""
    if t.device.type != "cpu":
        raise ValueError(f"softfp8.torch_nn.Linear computes on the CPU; {what} is on {t.device}")
    if t.dtype != torch.float32:
        raise TypeError(f"softfp8.torch_nn.Linear takes float32 tensors; {what} has dtype {t.dtype}")
    return t.detach().contiguous().numpy()


class _LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, core):
        lead = x.shape[:-1]
        core.weight = _array(weight, "weight")
        core.bias = None if bias is None else _array(bias, "bias")
        y = core.forward(_array(x, "input").reshape(-1, x.shape[-1]))
        ctx.core, ctx.saved, ctx.lead, ctx.has_bias = core, core._saved, lead, bias is not None
        return torch.from_numpy(np.ascontiguousarray(y)).reshape(*lead, y.shape[-1])

    @staticmethod
    def backward(ctx, gy):
        core = ctx.core
        core._saved = ctx.saved            # this call's operands, whatever ran since
        g = _array(gy, "grad_output").reshape(-1, gy.shape[-1])
        gx = core.backward(g, input_grad=ctx.needs_input_grad[0])
        gw = torch.from_numpy(core.weight_grad) if ctx.needs_input_grad[1] else None
        gb = torch.from_numpy(np.ascontiguousarray(core.bias_grad)) if ctx.has_bias and ctx.needs_input_grad[2] \
            else None
        gx = None if gx is None else torch.from_numpy(np.ascontiguousarray(gx)).reshape(*ctx.lead, gx.shape[-1])
        return gx, gw, gb, None


class Linear(torch.nn.Module):
    """``torch.nn.Linear(in_features, out_features, bias)`` with ``recipe`` (a
    ``softfp8.nn.Recipe``; None: float32 GEMMs in a fixed order) deciding its GEMMs.
    Parameters and initialisation as torch.nn.Linear's (``weight`` (out, in), ``bias``
    (out,)); ``index`` seeds the stochastic rounding of its gradients.  Inputs of any
    leading shape (..., in_features)."""

    def __init__(self, in_features, out_features, bias=True, *, recipe=None, index=0, device=None,
                 dtype=None):
        super().__init__()
        if device is not None and torch.device(device).type != "cpu":
            raise ValueError(f"softfp8.torch_nn.Linear computes on the CPU, not on {device}")
        if dtype is not None and dtype != torch.float32:
            raise TypeError(f"softfp8.torch_nn.Linear keeps float32 parameters, not {dtype}")
        self._core = _nn.Linear(in_features, out_features, bias, recipe=recipe, index=index)
        self.in_features, self.out_features = self._core.in_features, self._core.out_features
        self.weight = torch.nn.Parameter(torch.empty(out_features, in_features))
        self.bias = torch.nn.Parameter(torch.empty(out_features)) if bias else None
        self.reset_parameters()

    @property
    def recipe(self):
        return self._core.recipe

    @property
    def state(self):
        """The recipe's per-layer state (softfp8.nn.LayerState: amax histories, step)."""
        return self._core._state

    def reset_parameters(self):
        """torch.nn.Linear's initialisation (kaiming-uniform weight, uniform bias)."""
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            torch.nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        if x.shape[-1:] != (self.in_features,):
            raise ValueError(f"input must have shape (..., {self.in_features}), got {tuple(x.shape)}")
        return _LinearFn.apply(x, self.weight, self.bias, self._core)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, recipe={self.recipe!r}")
