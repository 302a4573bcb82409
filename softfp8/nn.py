"""FP8 training recipes as one object, and a NumPy linear layer that keeps their state.

``Recipe`` says how the three GEMMs of a linear layer (forward ``x @ W.T``, data gradient
``g @ W``, weight gradient ``g.T @ x``) see their operands: the scaling (none, current or
delayed per-tensor, OCP MX or NVFP4 blocks, DeepSeek-V3 tiles), the formats of the
forward operands and of the gradients, how the GEMM combines codes and scales, and the
accumulation model or matrix-unit profile.  A recipe holds no state; ``Linear`` holds
the state one layer needs (amax histories, the step count that seeds stochastic rounding)
and computes forward and backward passes with it.  docs/training.md ("softfp8.nn")
specifies every choice.

    from softfp8 import nn
    recipe = nn.Recipe("delayed", accumulation="h100")
    layer = nn.Linear(784, 128, recipe=recipe, seed=0)
    y = layer(x)                       # float32 (N, 128)
    gx = layer.backward(gy)            # float32 (N, 784); layer.weight_grad, layer.bias_grad
"""
from __future__ import annotations

import numpy as np

from . import _formats, gemm as _gemm, mx, scaling
from ._validation import _as_int, _choice

__all__ = ["Recipe", "Linear", "LayerState", "SCALINGS", "GEMMS", "matmul_f32"]

SCALINGS = ("none", "current", "delayed", "mx", "nvfp4", "tiles")
GEMMS = ("dequantized", "scaled", "unit")
_PER_TENSOR = ("current", "delayed")
_BLOCK_KINDS = {"mx": {"x": "mxfp8_e4m3", "w": "mxfp8_e4m3", "g": "mxfp8_e5m2"},
                "nvfp4": dict.fromkeys("xwg", "nvfp4")}
ROLES = ("x", "w", "g")


def _format_arg(x, what):
    """softfp8.lookup (a format, its dtype or its name), the error naming the argument."""
    try:
        return _formats.lookup(x)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{what}: {e}") from None


def matmul_f32(a, b):
    """float32 matmul on one thread in a fixed order (NumPy's einsum loops, no BLAS): the
    same bits run after run and machine after machine of one NumPy build."""
    return np.einsum("ik,kj->ij", a, b)


class Recipe:
    """One FP8 training recipe (docs/training.md, "softfp8.nn").

    ``scaling``: "none" (float32 operands), "current" (per-tensor scale from each tensor's
    own amax, ``softfp8.scaling.quantize``), "delayed" (Transformer Engine's
    ``DelayedScaling``: the scale from an amax history of ``amax_history_len`` steps),
    "mx" (OCP MX blocks of 32 along each GEMM's reduction axis; ``kinds`` per role, by
    default MXFP8 E4M3 for x and w, E5M2 for g), "nvfp4" (NVFP4 blocks of 16) or "tiles"
    (DeepSeek-V3: 1 x 128 tiles of activations and gradients, 128 x 128 blocks of weights,
    float32 scales).  ``fmt`` / ``grad_fmt``: the formats of x and w / of g for the
    per-tensor and tile scalings (E4M3 / E5M2, NVIDIA's "HYBRID").
    ``gemm``: how a GEMM combines codes and scales: "dequantized" (operands dequantised to
    float32, a float32 GEMM: what emulation on a CPU does), "scaled"
    (``softfp8.scaled_mm``: each product times the float32 product of the scales, summed
    exactly or under ``accumulation``) or "unit" (a matrix unit: ``softfp8.matmul`` of the
    codes under ``accumulation`` into float32, then one float32 multiply by the product of
    the two inverse scales, as a GPU's epilogue applies them).  The default is "unit" for a
    matrix-unit profile, a BlockFMA or the pairwise / Kahan orders (softfp8.matmul alone
    computes them), "dequantized" for none, MX and NVFP4 without an accumulation model, and
    "scaled" otherwise.  "unit" takes per-tensor
    scalings only, "scaled" takes every scaling but NVFP4 (whose two-level scales are not
    one float32 factor).  ``accumulation``: None (exact dot products, one rounding), a
    ``softfp8.Accumulation`` or the name of a matrix-unit profile ("h100", ...).
    ``stochastic_gradients``: round g stochastically, seeded from ``seed``, the layer's
    index, its step and the reduction axis.  ``margin``, ``pow2``: as in
    ``softfp8.scaling``; ``amax_compute_algo``: "max" or "most_recent".
    """

    __slots__ = ("scaling", "fmt", "grad_fmt", "kinds", "gemm", "accumulation", "margin", "pow2",
                 "amax_history_len", "amax_compute_algo", "stochastic_gradients", "seed")

    def __init__(self, scaling="delayed", *, fmt="e4m3", grad_fmt="e5m2", kinds=None, gemm=None,
                 accumulation=None, margin=0, pow2=False, amax_history_len=16,
                 amax_compute_algo="max", stochastic_gradients=False, seed=0):
        self.scaling = _choice(scaling, SCALINGS, "scaling")
        self.fmt = _format_arg(fmt, "fmt")
        self.grad_fmt = _format_arg(grad_fmt, "grad_fmt")
        if scaling == "tiles":
            for name, f in (("fmt", self.fmt), ("grad_fmt", self.grad_fmt)):
                if f.bits != 8:
                    raise ValueError(f"tiles take 8-bit formats; {name} is {f.name} ({f.bits} bits)")
        self.kinds = self._kinds(kinds)
        if isinstance(accumulation, str):
            accumulation = _gemm.Accumulation.profile(accumulation)
        # matrix units, BlockFMA and the pairwise / Kahan orders run in softfp8.matmul only
        unit_only = accumulation is not None and (
            _gemm._mu.is_block_model(accumulation) or
            (isinstance(accumulation, _gemm.Accumulation) and accumulation.order != "sequential"))
        if gemm is None:
            gemm = ("unit" if unit_only else
                    "dequantized" if scaling in ("mx", "nvfp4", "none") and accumulation is None
                    else "scaled")
        self.gemm = _choice(gemm, GEMMS, "gemm")
        if unit_only and self.gemm != "unit":
            raise ValueError(f"{accumulation!r} runs in softfp8.matmul only: it needs gemm='unit' "
                             f"(a per-tensor scaling), not gemm={self.gemm!r}")
        if self.gemm == "unit" and scaling not in _PER_TENSOR:
            raise ValueError(f"gemm='unit' applies one scale per operand after the unit: it takes "
                             f"the per-tensor scalings {_PER_TENSOR}, not scaling={scaling!r}")
        if self.gemm != "dequantized" and scaling == "none":
            raise ValueError(f"scaling='none' has no codes: gemm must be 'dequantized', got {gemm!r}")
        if self.gemm == "scaled" and scaling == "nvfp4":
            raise ValueError("gemm='scaled' needs one float32 scale per block; NVFP4's UE4M3 block "
                             "scale times its float32 tensor scale is not one: use gemm='dequantized'")
        if accumulation is not None and self.gemm == "dequantized":
            raise ValueError("gemm='dequantized' is a float32 GEMM: an accumulation model needs "
                             "gemm='scaled' or 'unit'")
        self.accumulation = accumulation
        self.margin = margin
        self.pow2 = bool(pow2)
        self.amax_history_len = _as_int(amax_history_len, "amax_history_len")
        if self.amax_history_len < 1:
            raise ValueError(f"amax_history_len must be >= 1, got {amax_history_len!r}")
        self.amax_compute_algo = _choice(amax_compute_algo, ("max", "most_recent"), "amax_compute_algo")
        self.stochastic_gradients = bool(stochastic_gradients)
        self.seed = _as_int(seed, "seed") % 2 ** 64

    def _kinds(self, kinds):
        if self.scaling not in _BLOCK_KINDS:
            if kinds is not None:
                raise ValueError(f"kinds is for scaling 'mx' or 'nvfp4', not {self.scaling!r}")
            return None
        out = dict(_BLOCK_KINDS[self.scaling])
        if kinds is not None:
            if isinstance(kinds, str):
                kinds = dict.fromkeys(ROLES, kinds)
            if not isinstance(kinds, dict) or set(kinds) - set(ROLES):
                raise ValueError(f"kinds must be a block kind or a dict over roles {ROLES}, got {kinds!r}")
            out.update(kinds)
        for role, k in out.items():
            if k not in mx.KINDS:
                raise ValueError(f"unknown block kind {k!r} for role {role!r}; known: {', '.join(mx.KINDS)}")
            if (self.scaling == "nvfp4") != (k == "nvfp4"):
                raise ValueError(f"scaling={self.scaling!r} takes {'nvfp4' if self.scaling == 'nvfp4' else 'MX'} "
                                 f"kinds, got {k!r} for role {role!r}")
        return out

    @property
    def per_tensor(self):
        """True when an operand's quantisation does not depend on the GEMM's reduction axis."""
        return self.scaling in _PER_TENSOR or self.scaling == "none"

    def __repr__(self):
        parts = [repr(self.scaling), f"gemm={self.gemm!r}"]
        if self.scaling in _PER_TENSOR or self.scaling == "tiles":
            parts += [f"fmt={self.fmt.name}", f"grad_fmt={self.grad_fmt.name}"]
        if self.kinds:
            parts.append(f"kinds={self.kinds!r}")
        if self.accumulation is not None:
            parts.append(f"accumulation={self.accumulation!r}")
        if self.stochastic_gradients:
            parts.append(f"stochastic_gradients=True, seed={self.seed}")
        return f"softfp8.nn.Recipe({', '.join(parts)})"

    # -- one layer's quantisation and GEMMs (state lives in the layer's LayerState)
    def quantize(self, t, role, axis, state):
        """t (2-D float32) quantised for role "x", "w" or "g", its blocks / tiles along
        ``axis`` (0 or 1), the reduction axis of the GEMM it enters (``transpose`` turns it
        for the other side); ``state``: the layer's ``LayerState`` (amax histories, step,
        index).  Override it (with ``values``, ``matmul``, ``transpose``) for a recipe of
        your own."""
        s = self.scaling
        fmt = self.grad_fmt if role == "g" else self.fmt
        opts = {}
        if role == "g" and self.stochastic_gradients:
            opts = {"rounding": "stochastic",
                    "seed": (self.seed * 1_000_003 + state.step * 8 + state.index * 2 + axis) % 2 ** 64}
        if s == "none":
            return t
        if s == "current":
            return scaling.quantize(t, fmt, margin=self.margin, pow2=self.pow2, **opts)
        if s == "delayed":
            if role not in state.scalers:
                state.scalers[role] = scaling.DelayedScaling(
                    margin=self.margin, amax_history_len=self.amax_history_len,
                    amax_compute_algo=self.amax_compute_algo, fmt=fmt)
            return state.scalers[role].quantize(t, **opts)
        if s == "tiles":
            tile = (128, 128) if role == "w" else (1, 128)
            src = t if axis == 1 else t.T         # 1 x 128 tiles run along the last axis
            return _Tiled(mx.quantize_tiles(src, tile, fmt=fmt, **opts), transposed=axis == 0)
        return mx.quantize(t, self.kinds[role], axis=axis, **opts)

    def values(self, q):
        """float32 values of a quantised operand."""
        if isinstance(q, _Transposed):
            return self.values(q.q).T
        if isinstance(q, np.ndarray):
            return q
        if isinstance(q, _Tiled):
            v = q.block.dequantize(np.float32)
            return v.T if q.transposed else v
        return q.dequantize(np.float32)

    def matmul(self, a, b):
        """float32 a @ b of two quantised operands (a blocked along axis 1, b along axis 0)."""
        if self.gemm == "dequantized":
            return matmul_f32(self.values(a), self.values(b))
        a, b = _materialise(a), _materialise(b)
        if self.gemm == "unit":
            acc = _gemm.matmul(a.codes, b.codes, out_dtype=np.float32, accumulation=self.accumulation)
            return acc * (a.scale_inv * b.scale_inv)
        if isinstance(a, scaling.ScaledArray):
            return _gemm.scaled_mm(a.codes, b.codes, a.scale_inv, b.scale_inv, out_dtype=np.float32,
                                  accumulation=self.accumulation)
        if isinstance(a, _Tiled):
            ca, sa, ba = a.operand()
            cb, sb, bb = b.operand()
            return _gemm.scaled_mm(ca, cb, sa, sb, out_dtype=np.float32, accumulation=self.accumulation,
                                  block_a=ba, block_b=bb)
        return mx.matmul(a, b, out_dtype=np.float32, accumulation=self.accumulation)

    @staticmethod
    def transpose(q):
        """The quantised operand of the transposed tensor (the same codes and scales)."""
        return q.q if isinstance(q, _Transposed) else _Transposed(q)

    @staticmethod
    def materialise(q):
        """A quantised operand as the codes-and-scales object a GEMM takes (a transposed
        one as the ScaledArray / BlockArray of the transposed tensor)."""
        return _materialise(q)


class _Transposed:
    """A quantised operand seen transposed (materialised only where a GEMM takes codes)."""

    __slots__ = ("q",)

    def __init__(self, q):
        self.q = q


def _materialise(q):
    if not isinstance(q, _Transposed):
        return q
    q = q.q
    if isinstance(q, scaling.ScaledArray):
        return scaling.ScaledArray(q.codes.T, q.scale, q.fmt)
    if isinstance(q, _Tiled):
        return _Tiled(q.block, not q.transposed)
    return mx.BlockArray(q.elements.T, q.scales.T, kind=q.kind, axes=(1 - q.axes[0],),
                         block=q.blocks, tensor_scale=q.tensor_scale, fmt=q._fmt)


class _Tiled:
    """DeepSeek tiles of t (``transposed`` False) or of t.T (True): the operand is t."""

    __slots__ = ("block", "transposed")

    def __init__(self, block, transposed):
        self.block = block
        self.transposed = transposed

    def operand(self):
        """(codes, scales, block shape) of t as ``scaled_mm`` takes them."""
        codes, scales = self.block.elements, self.block.scales
        blk = tuple(self.block.blocks)
        if len(blk) == 1:
            blk = (1, blk[0])
        if self.transposed:
            codes, scales, blk = codes.T, scales.T, blk[::-1]
        return codes, scales, blk


class LayerState:
    """What a recipe keeps per layer: ``scalers`` (role -> DelayedScaling), ``step`` (the
    forward pass being computed: 0, 1, ...) and ``index`` (the layer's position)."""

    __slots__ = ("scalers", "step", "index")

    def __init__(self, index=0):
        self.scalers = {}
        self.step = 0
        self.index = index


class Linear:
    """y = x @ weight.T + bias in NumPy with a ``Recipe`` (None: float32 throughout).

    ``weight``: float32 (out_features, in_features), PyTorch's layout; ``bias``: float32
    (out_features,) or None.  Initial values: ``weight=`` / ``bias=`` if given, else
    PyTorch's default (uniform in +-1/sqrt(in_features), from ``seed``).  ``forward(x)``
    (or calling the layer) quantises x and the weight by the recipe (the layer's own amax
    histories; one quantisation of each tensor per step, reused by the backward pass where
    the recipe is per-tensor) and keeps what ``backward(grad_y)`` needs; ``backward``
    returns grad_x (None with ``input_grad=False``) and sets ``weight_grad`` and
    ``bias_grad``.  ``index``: the layer's position, which seeds stochastic rounding of
    its gradients.  ``step``: how many forward passes the layer has run.  With ``record``
    set, ``recorded`` keeps (exact, quantised float32) pairs of the activations ("x") and
    gradients ("g") of the last pass.
    """

    def __init__(self, in_features, out_features, bias=True, *, recipe=None, weight=None,
                 bias_init=None, seed=0, index=0):
        self.in_features = _as_int(in_features, "in_features")
        self.out_features = _as_int(out_features, "out_features")
        if self.in_features < 1 or self.out_features < 1:
            raise ValueError(f"in_features and out_features must be >= 1, got "
                             f"{in_features!r}, {out_features!r}")
        if recipe is not None and not isinstance(recipe, Recipe):
            raise TypeError(f"recipe must be a softfp8.nn.Recipe or None, got {recipe!r}")
        self.recipe = recipe or Recipe("none")
        self.index = _as_int(index, "index")
        shape = (self.out_features, self.in_features)
        rng = np.random.default_rng(seed)
        bound = 1.0 / np.sqrt(self.in_features)
        self.weight = self._param(weight, shape, "weight", lambda: rng.uniform(-bound, bound, shape))
        if bias is False or bias is None:
            if bias_init is not None:
                raise ValueError("bias_init given for a layer without bias")
            self.bias = None
        else:
            self.bias = self._param(bias_init, (self.out_features,), "bias_init",
                                    lambda: rng.uniform(-bound, bound, self.out_features))
        self.weight_grad = self.bias_grad = None
        self.step = 0
        self.record = False
        self.recorded = {}
        self._state = LayerState(self.index)
        self._saved = None

    @staticmethod
    def _param(value, shape, name, init):
        v = np.asarray(init() if value is None else value)
        if v.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {v.shape}")
        if not np.issubdtype(v.dtype, np.floating) or v.dtype.itemsize > 8:
            raise TypeError(f"{name} must be a float array, got dtype {v.dtype}")
        return np.array(v, dtype=np.float32)

    def _input(self, x, name, width):
        x = np.asarray(x)
        if x.dtype != np.float32:
            if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
                raise TypeError(f"{name} must be a float32 array, got dtype {x.dtype}")
            x = x.astype(np.float32)
        if x.ndim != 2 or x.shape[1] != width:
            raise ValueError(f"{name} must have shape (N, {width}), got {x.shape}")
        return x

    def _q(self, t, role, axis):
        """t quantised for a reduction along ``axis``, once per pass (per tensor: once)."""
        r = self.recipe
        key = (role, None if r.per_tensor else axis)
        cache = self._saved["q"]
        if key not in cache:
            self._state.step = self._saved["step"]
            cache[key] = r.quantize(t, role, axis, self._state)
        return cache[key]

    def _keep(self, role, exact, q):
        if self.record:
            self.recorded[role] = (np.asarray(exact, np.float32).ravel(),
                                   np.asarray(self.recipe.values(q), np.float32).ravel())

    def forward(self, x):
        x = self._input(x, "x", self.in_features)
        # the weight as the (in, out) C-ordered operand of x @ W.T
        wt = np.ascontiguousarray(self.weight.T)
        self._saved = {"x": x, "wt": wt, "q": {}, "step": self.step}
        r = self.recipe
        qx = self._q(x, "x", 1)
        self._keep("x", x, qx)
        y = r.matmul(qx, self._q(wt, "w", 0))
        self.step += 1
        return y + self.bias if self.bias is not None else y

    __call__ = forward

    def backward(self, grad_y, input_grad=True):
        if self._saved is None:
            raise RuntimeError("backward() before forward()")
        g = self._input(grad_y, "grad_y", self.out_features)
        x, wt = self._saved["x"], self._saved["wt"]
        if g.shape[0] != x.shape[0]:
            raise ValueError(f"grad_y has {g.shape[0]} rows, the forward input had {x.shape[0]}")
        r = self.recipe
        wg = r.matmul(r.transpose(self._q(x, "x", 0)), self._q(g, "g", 0))      # x.T @ g
        self.weight_grad = np.ascontiguousarray(wg.T)
        self.bias_grad = g.sum(axis=0) if self.bias is not None else None
        if not input_grad:
            return None
        qg = self._q(g, "g", 1)
        self._keep("g", g, qg)
        return r.matmul(qg, r.transpose(self._q(wt, "w", 1)))                  # g @ W

    def __repr__(self):
        return (f"softfp8.nn.Linear({self.in_features}, {self.out_features}, "
                f"bias={self.bias is not None}, recipe={self.recipe!r})")
