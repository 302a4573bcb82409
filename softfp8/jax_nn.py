"""softfp8.jax.Linear: the JAX twin of ``softfp8.nn.Linear`` (docs/frameworks.md, "JAX
layers").

JAX programs are pure functions, so the layer holds no arrays: ``init`` gives the
parameters, ``init_state`` the recipe's state (the step, and per role the amax history and
scale of delayed scaling), and ``apply(params, state, x)`` returns ``(y, state)``.  It
runs under ``jit`` and is differentiated by ``jax.grad`` with the recipe's backward pass:
the gradient g quantised by the recipe (stochastically with ``stochastic_gradients``), the
data gradient g @ W and the weight gradient g.T @ x by the recipe's GEMM.  The g role's
delayed-scaling state changes in the backward pass; as Flax's FP8 layers do
("OVERWRITE_WITH_GRADIENT"), its new value is the cotangent JAX returns for
``state["g"]``, and ``next_state(state_after_forward, state_cotangent)`` puts the two
together.

Every quantisation and scale computation is an XLA FFI call into softfp8's C code
(xla_ffi.c: scaled_convert, delayed_update, block_quantize, block_values, tile_quantize, scaled_mm,
unit_matmul, scale_product), so y, the data gradient, the weight gradient and the state are
those of ``softfp8.nn.Linear`` bit for bit for the recipes with gemm "scaled" or "unit".
JAX's own arithmetic: the float32 GEMM of gemm "dequantized" / scaling "none" (XLA's dot,
whose summation order differs from NumPy's), the bias add and the bias gradient (XLA's
column sums).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import nn as _nn, scaling as _scaling
from ._validation import _as_int
from . import matrix_units as _mu, mx as _mx
from ._formats import lookup
from ._jax_ffi import (_block_quantize, _block_values, _delayed_update, _env, _matmul_call, _model_attr,
                       _scale_product, _scaled_convert, _scaled_mm_call, _tile_quantize, _unit_call, _unit_ints)

__all__ = ["Linear"]

ROLES = ("x", "w", "g")
# MXINT8's elements: the helper format whose values times 64 are the integers (softfp8.mx)
_INT8_HELPER = _mx._make_format(**_mx._INT8_HELPER)


def _target_bits(fmt, margin):
    """The float32 bits of fmt.max * 2**-margin (the scale's target), which must be a float32."""
    t32 = _scaling._target_f32(_scaling._fmt_max(fmt) * _scaling._margin(margin))
    if t32 is None:
        raise ValueError(f"softfp8.jax.Linear: {fmt.name}'s max * 2**-{margin!r} is not a float32 value; "
                         f"use an integer margin within float32's range")
    return int(np.float32(t32).view(np.uint32).view(np.int32))


def _seed_words(base, step):
    """(base + 8 * step) mod 2**64 as uint32 (lo, hi); base a Python int, step traced int32."""
    lo0, hi0 = jnp.uint32(base & 0xFFFFFFFF), jnp.uint32(base >> 32)
    lo = lo0 + step.astype(jnp.uint32) * jnp.uint32(8)
    hi = hi0 + (lo < lo0).astype(jnp.uint32)
    return jnp.stack([lo, hi])


class _Q(NamedTuple):
    """A per-tensor quantised operand: codes, scale, scale_inv (float32 scalars); a pytree."""
    codes: jax.Array
    scale: jax.Array
    scale_inv: jax.Array

    @property
    def T(self):
        return _Q(self.codes.T, self.scale, self.scale_inv)


class _QB(NamedTuple):
    """A block-quantised operand in rows layout (its blocks along the last axis): element
    codes, scale codes (E8M0, or NVFP4's UE4M3), the tensor scale (NVFP4; else 1)."""
    codes: jax.Array
    scales: jax.Array
    ts: jax.Array


def _e8m0_values(codes):
    """float32 2^(code - 127) of E8M0 codes by their bits (no arithmetic: no flush); the NaN
    code 0xFF gives infinity, which scaled_mm refuses (a block held an infinity or a NaN)."""
    c = codes.astype(jnp.uint32)
    return jax.lax.bitcast_convert_type(jnp.where(c == 0, jnp.uint32(0x00400000), c << 23), jnp.float32)


class Linear:
    """y = x @ weight.T + bias in JAX with a ``softfp8.nn.Recipe`` (None: float32).

    Takes the per-tensor recipes (scaling "none", "current" or "delayed"; every gemm:
    "dequantized", "scaled" with exact products or a sequential ``softfp8.Accumulation``,
    "unit" with a matrix-unit profile, a BlockFMA or the pairwise / Kahan orders) and the
    block recipes (every MX kind, NVFP4, DeepSeek tiles); stochastic gradients: every
    ``softfp8.nn.Recipe``.
    """

    def __init__(self, in_features, out_features, bias=True, *, recipe=None, index=0):
        self.in_features = _as_int(in_features, "in_features")
        self.out_features = _as_int(out_features, "out_features")
        if self.in_features < 1 or self.out_features < 1:
            raise ValueError(f"in_features and out_features must be >= 1, got {in_features!r}, {out_features!r}")
        if recipe is not None and not isinstance(recipe, _nn.Recipe):
            raise TypeError(f"recipe must be a softfp8.nn.Recipe or None, got {recipe!r}")
        r = self.recipe = recipe or _nn.Recipe("none")
        self.bias = bool(bias)
        self.index = _as_int(index, "index")
        if r.scaling in ("current", "delayed"):
            self._targets = {role: _target_bits(r.grad_fmt if role == "g" else r.fmt, r.margin) for role in ROLES}
        self._fn = self._build()

    def __repr__(self):
        return (f"softfp8.jax.Linear({self.in_features}, {self.out_features}, bias={self.bias}, "
                f"recipe={self.recipe!r})")

    # -- parameters and state
    def init(self, seed=0):
        """{"weight": (out, in), "bias": (out,)} float32: softfp8.nn.Linear(..., seed=seed)'s values."""
        ref = _nn.Linear(self.in_features, self.out_features, self.bias, seed=seed)
        p = {"weight": jnp.asarray(ref.weight)}
        if self.bias:
            p["bias"] = jnp.asarray(ref.bias)
        return p

    def init_state(self):
        """The step (int32 0) and, for delayed scaling, per role an amax history of zeros and
        the scale 1.0 (float32)."""
        st = {"step": jnp.zeros((), jnp.int32)}
        if self.recipe.scaling == "delayed":
            n = self.recipe.amax_history_len
            for role in ROLES:
                st[role] = {"history": jnp.zeros((n,), jnp.float32), "scale": jnp.ones((), jnp.float32)}
        return st

    @staticmethod
    def next_state(forward_state, state_cotangent):
        """The state for the next step: ``forward_state`` (from ``apply``) with the g role's
        delayed-scaling state taken from ``state_cotangent`` (jax.grad's result for the state)."""
        st = dict(forward_state)
        if "g" in st:
            st["g"] = state_cotangent["g"]
        return st

    def apply(self, params, state, x):
        """(y, state after the forward pass) for x (N, in_features) float32."""
        x = jnp.asarray(x)
        if x.dtype != jnp.float32 or x.ndim != 2 or x.shape[1] != self.in_features:
            raise ValueError(f"softfp8.jax.Linear: x must be float32 of shape (N, {self.in_features}), "
                             f"got {x.dtype}{x.shape}")
        w = jnp.asarray(params["weight"])
        if w.dtype != jnp.float32 or w.shape != (self.out_features, self.in_features):
            raise ValueError(f"softfp8.jax.Linear: weight must be float32 of shape "
                             f"{(self.out_features, self.in_features)}, got {w.dtype}{w.shape}")
        b = params.get("bias") if self.bias else None
        y, st = self._fn(x, w, state)
        return (y + b if b is not None else y), st

    __call__ = apply

    # -- the recipe's steps
    def _quantize(self, t, role, st, step):
        """(quantised t, new role state): the scaled cast of softfp8.scaling / DelayedScaling."""
        r = self.recipe
        fmt = r.grad_fmt if role == "g" else r.fmt
        stochastic = role == "g" and r.stochastic_gradients
        env = _env("stochastic" if stochastic else "nearest_even", True, "after", 32, fmt.name, "Linear")
        if stochastic:
            seed = _seed_words((r.seed * 1_000_003 + self.index * 2) % 2 ** 64, step)
        else:
            seed = jnp.zeros((2,), jnp.uint32)
        delayed = r.scaling == "delayed"
        scale = st[role]["scale"] if delayed else jnp.ones((), jnp.float32)
        rule = (0 if delayed else 1, self._targets[role], int(r.pow2 and not delayed))
        codes, _, amax, used, inv = _scaled_convert(t, scale, seed, fmt, env, rule, 1)
        new = None
        if delayed:
            algo = 0 if r.amax_compute_algo == "max" else 1
            hist, sc = _delayed_update(st[role]["history"], amax, st[role]["scale"], (algo, self._targets[role]))
            new = {"history": hist, "scale": sc}
        return _Q(codes, used, inv), new

    @staticmethod
    def _values(q, fmt):
        """float32 values of a quantised operand: RN(codes / scale) (ScaledArray.dequantize)."""
        env = _env("nearest_even", None, "after", 32, fmt.name, "Linear")
        return _scaled_convert(q.codes, q.scale, jnp.zeros((2,), jnp.uint32), fmt, env, (0, 0, 0), 0)[0]

    def _matmul(self, a, b, fa, fb):
        """float32 a @ b of two quantised operands (or float32 arrays for scaling "none")."""
        r = self.recipe
        if r.scaling == "none":
            return jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST)
        if r.gemm == "dequantized":
            return jnp.dot(self._values(a, fa), self._values(b, fb), precision=jax.lax.Precision.HIGHEST)
        env = _env("nearest_even", None, "after", 32, "binary32", "Linear")
        if r.gemm == "unit":      # the unit's product of the codes, then one float32 multiply by sa_inv * sb_inv
            if _mu.handles(r.accumulation, None):
                y, _ = _unit_call(a.codes, b.codes, _unit_ints(r.accumulation, fa, fb))
            else:
                y, _ = _matmul_call(a.codes, b.codes, fa, fb, env, _model_attr(r.accumulation, fa))
            return _scale_product(y, a.scale_inv, b.scale_inv)
        y, _ = _scaled_mm_call(a.codes, b.codes, a.scale_inv.reshape(1, 1), b.scale_inv.reshape(1, 1), fa, fb, env,
                               _model_attr(r.accumulation, fa))
        return y

    def _qblock(self, t, role, axis, step):
        """t quantised for role along axis (mx.quantize(t, kind, axis=axis), or DeepSeek tiles:
        mx.quantize_tiles of t or t.T), in rows layout; tiles' scales are float32 values."""
        r = self.recipe
        rows = t if axis == 1 else t.T
        stochastic = role == "g" and r.stochastic_gradients
        if r.scaling == "tiles":
            fe = r.grad_fmt if role == "g" else r.fmt
        else:
            k = _mx.KINDS[r.kinds[role]]
            fe = k.format() or _INT8_HELPER
        env = _env("stochastic" if stochastic else "nearest_even", True, "after", 32, fe.name, "Linear")
        if stochastic:
            seed = _seed_words((r.seed * 1_000_003 + self.index * 2 + axis) % 2 ** 64, step)
        else:
            seed = jnp.zeros((2,), jnp.uint32)
        if r.scaling == "tiles":
            codes, scales, _ = _tile_quantize(rows, seed, (128, 128) if role == "w" else (1, 128), fe, env)
            return _QB(codes, scales, jnp.ones((), jnp.float32))
        nv = k.name == "nvfp4"
        kind = (int(nv), _mx.SCALE_RULES.index("floor"), k.emax, k.mbits,
                int(np.float32(k.elem_max).view(np.uint32).view(np.int32)), k.block, int(k.elem == "int8"))
        codes, scales, ts, _ = _block_quantize(rows, seed, kind, fe, lookup("e4m3"), env)
        return _QB(codes, scales, ts)

    def _bmatmul(self, qa, qb, ra, rb):
        """float32 A @ B of block-quantised A (qa's rows) and B (qb's rows, transposed); ra, rb: roles."""
        r = self.recipe
        if r.scaling == "tiles":     # scaled_mm with the tiles' float32 scales as its grids
            fa, fb = (r.grad_fmt if x == "g" else r.fmt for x in (ra, rb))
            if r.gemm == "dequantized":
                one, e4 = jnp.ones((), jnp.float32), lookup("e4m3")
                va = _block_values(qa.codes, qa.scales, one, 2, 128, fa, e4, tr=128 if ra == "w" else 1)
                vb = _block_values(qb.codes, qb.scales, one, 2, 128, fb, e4, tr=128 if rb == "w" else 1)
                return jnp.dot(va, vb.T, precision=jax.lax.Precision.HIGHEST)
            for q, name in ((qa, ra), (qb, rb)):
                if q.codes.shape[1] % 128 or (name == "w" and q.codes.shape[0] % 128):
                    raise ValueError(f"softfp8.jax.Linear: DeepSeek tiles need whole tiles (multiples of 128), "
                                     f"got a {name} operand of shape {q.codes.shape}")
            env = _env("nearest_even", None, "after", 32, "binary32", "Linear")
            y, _ = _scaled_mm_call(qa.codes, qb.codes.T, qa.scales, qb.scales.T, fa, fb, env,
                                   _model_attr(r.accumulation, fa))
            return y
        ka, kb = _mx.KINDS[r.kinds[ra]], _mx.KINDS[r.kinds[rb]]
        fa, fb = ka.format() or _INT8_HELPER, kb.format() or _INT8_HELPER
        if r.gemm == "dequantized":
            e4 = lookup("e4m3")
            va = _block_values(qa.codes, qa.scales, qa.ts, ka.name == "nvfp4", ka.block, fa, e4, ka.elem == "int8")
            vb = _block_values(qb.codes, qb.scales, qb.ts, kb.name == "nvfp4", kb.block, fb, e4, kb.elem == "int8")
            return jnp.dot(va, vb.T, precision=jax.lax.Precision.HIGHEST)
        k = qa.codes.shape[1]
        if k % ka.block:
            raise ValueError(f"softfp8.jax.Linear: gemm='scaled' with MX blocks of {ka.block} needs the reduction "
                             f"dimension to be a multiple of it, got {k}")
        env = _env("nearest_even", None, "after", 32, "binary32", "Linear")
        y, _ = _scaled_mm_call(qa.codes, qb.codes.T, _e8m0_values(qa.scales), _e8m0_values(qb.scales).T, fa, fb, env,
                               _model_attr(r.accumulation, fa), scale_exact=True)
        return y

    def _build_blocks(self):
        """forward / backward of the block scalings: each tensor quantised along the reduction
        axis of the GEMM it enters (softfp8.nn.Linear's cache keys (role, axis))."""
        q, mm = self._qblock, self._bmatmul

        @jax.custom_vjp
        def core(x, w, st):
            return core_fwd(x, w, st)[0]

        def core_fwd(x, w, st):
            step = st["step"]
            y = mm(q(x, "x", 1, step), q(w.T, "w", 0, step), "x", "w")          # x @ W.T
            return (y, {**st, "step": step + 1}), (x, w, st)

        def core_bwd(saved, cot):
            x, w, st = saved
            g, step = cot[0], st["step"]
            wgrad = mm(q(x, "x", 0, step), q(g, "g", 0, step), "x", "g").T       # (x.T @ g).T
            xgrad = mm(q(g, "g", 1, step), q(w.T, "w", 1, step), "g", "w")       # g @ W
            return xgrad, wgrad, jax.tree_util.tree_map(_zero_cotangent, st)

        core.defvjp(core_fwd, core_bwd)
        return core

    def _build(self):
        if self.recipe.kinds or self.recipe.scaling == "tiles":
            return self._build_blocks()
        r = self.recipe
        none = r.scaling == "none"
        fx, fg = r.fmt, r.grad_fmt

        def forward(x, w, st):
            step = st["step"]
            new = dict(st)
            new["step"] = step + 1
            if none:
                qx, qwt = x, w.T
            else:
                qx, nx = self._quantize(x, "x", st, step)
                qwt, nw = self._quantize(w.T, "w", st, step)
                if nx is not None:
                    new["x"], new["w"] = nx, nw
            return self._matmul(qx, qwt, fx, fx), new, (qx, qwt)

        def backward(res, g, gstate, step):
            qx, qwt = res
            if none:
                qg, ng = g, None
            else:
                qg, ng = self._quantize(g, "g", {"g": gstate} if gstate is not None else {}, step)
            wgrad = self._matmul(qx.T, qg, fx, fg).T                     # (x.T @ g).T
            xgrad = self._matmul(qg, qwt.T, fg, fx)                      # g @ W
            return xgrad, wgrad, ng

        delayed = r.scaling == "delayed"

        @jax.custom_vjp
        def core(x, w, st):
            y, new, _ = forward(x, w, st)
            return y, new

        def core_fwd(x, w, st):
            y, new, res = forward(x, w, st)
            return (y, new), (res, st.get("g"), st["step"], st)

        def core_bwd(saved, cot):
            res, gstate, step, st = saved
            gy = cot[0]
            xgrad, wgrad, ng = backward(res, gy, gstate, step)
            st_cot = jax.tree_util.tree_map(_zero_cotangent, st)
            if delayed:
                st_cot["g"] = ng
            return xgrad, wgrad, st_cot

        core.defvjp(core_fwd, core_bwd)
        return core


def _zero_cotangent(v):
    v = jnp.asarray(v)
    if jnp.issubdtype(v.dtype, jnp.integer):
        return np.zeros(v.shape, dtype=jax.dtypes.float0)
    return jnp.zeros_like(v)
