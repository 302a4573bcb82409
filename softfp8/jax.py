"""softfp8 in JAX (docs/frameworks.md, "JAX"): exact quantise / dequantise and the exact
matrix product as XLA FFI custom calls on CPU, jit- and vmap-compatible, with
straight-through and matmul gradients (``jax.custom_vjp``); and the exchange of arrays.

The ops run softfp8's C code (softfp8/_core/xla_ffi.c) inside the compiled XLA program:
no Python callback.  Results and flags are those of softfp8's NumPy casts and
``softfp8.matmul``, bit for bit.

Presets that JAX knows (float8_e4m3fn, float8_e5m2, the FNUZ types, float8_e4m3,
float8_e3m4, float8_e4m3b11fnuz, float8_e8m0fnu, bfloat16, float16) travel as those JAX
dtypes; every other format as uint8 / uint16 code arrays, the format given alongside.
"""
from __future__ import annotations

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised without jax only
    raise ImportError("softfp8.jax needs JAX: pip install 'softfp8[jax]' (installs jax and jaxlib)") from exc

import functools

import numpy as np

from ._jax_ffi import (_as_float32, _code_dtype, _convert, _env, _fmt, _format_of_array, _matmul_call,
                       _model_attr, _scale_operand, _scaled_mm_call, _seed_operand, _unit_call, _unit_ints,
                       native_dtype)
from . import matrix_units as _mu
from .jax_nn import Linear
from ._interop import from_ml_dtypes, to_ml_dtypes
from ._validation import format_or_none

__all__ = ["quantize", "dequantize", "fake_quantize", "matmul", "scaled_mm", "to_jax", "from_jax", "native_dtype",
           "Linear"]


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3, 4))
def _q_ste(x, seed, fmt, env, out_dtype):
    return _convert(x, seed, fmt, env, 1, out_dtype)


def _q_ste_fwd(x, seed, fmt, env, out_dtype):
    return _convert(x, seed, fmt, env, 1, out_dtype), None


def _q_ste_bwd(fmt, env, out_dtype, res, g):
    # straight through: the cotangent of the values, widened to float32; none for the seed
    return g[0].astype(jnp.float32), np.zeros((2,), dtype=jax.dtypes.float0)


_q_ste.defvjp(_q_ste_fwd, _q_ste_bwd)


def quantize(x, fmt, *, rounding="nearest_even", seed=None, saturate=None, tininess="after", sr_bits=32,
             codes=False, return_flags=False):
    """x (float32; float16 / bfloat16 widened exactly) rounded once into fmt, as
    ``x.astype(fmt)`` does in NumPy under ``softfp8.rounding(rounding, seed=seed)``,
    ``softfp8.saturation(saturate)`` and ``softfp8.tininess(tininess)``.

    Returns the JAX native dtype of a preset JAX knows (unless ``codes=True``), else uint8 /
    uint16 codes; with ``return_flags=True`` also the sticky flags (uint8, softfp8.Flags
    bits) of the call -- one per vmapped batch element.  ``seed``: rounding="stochastic"
    only, an integer or a uint32 (lo, hi) array (may be traced); element i of the result
    takes the random word of softfp8's generator (seed, stream 0, index i), so the result
    equals NumPy's first stochastic cast in ``softfp8.rounding("stochastic", seed=seed)``.
    Gradient: straight through for native outputs (the cotangent, widened to float32);
    none through code outputs (as ``x.astype(jnp.uint8)``)."""
    f = _fmt(fmt, "quantize")
    env = _env(rounding, saturate, tininess, sr_bits, f.name, "quantize")
    s = _seed_operand(seed, rounding, "quantize")
    x = _as_float32(x, "quantize")
    nd = None if codes else native_dtype(f)
    if nd is None:
        y, fl = _convert(jax.lax.stop_gradient(x), s, f, env, 1, _code_dtype(f))
    else:
        y, fl = _q_ste(x, s, f, env, nd)
    return (y, fl) if return_flags else y


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def _dq_ste(c, fmt, env):
    return _convert(c, jnp.zeros((2,), jnp.uint32), fmt, env, 0, jnp.float32)


def _dq_ste_fwd(c, fmt, env):
    return _dq_ste(c, fmt, env), None


def _dq_ste_bwd(fmt, env, res, g):
    return (g[0].astype(native_dtype(fmt)),)


_dq_ste.defvjp(_dq_ste_fwd, _dq_ste_bwd)


def dequantize(c, fmt=None, *, rounding="nearest_even", saturate=None, tininess="after", return_flags=False):
    """The values of codes c as float32 (``a.astype(np.float32)`` in NumPy): c a native JAX
    array of a preset (fmt inferred) or uint8 / uint16 codes with fmt given.  Exact for
    every format whose values binary32 holds; rounded by ``rounding`` (deterministic
    modes) otherwise.  Gradient: the cotangent rounded into the native dtype (nearest
    even); none for code arrays."""
    c = jnp.asarray(c)
    f = _format_of_array(c, fmt, "dequantize")
    if rounding == "stochastic":
        raise ValueError("softfp8.jax.dequantize: rounding='stochastic' is not offered (round the result "
                         "with quantize instead)")
    env = _env(rounding, saturate, tininess, 32, f.name, "dequantize")
    if c.dtype == jnp.dtype(_code_dtype(f)) and c.dtype != native_dtype(f):
        y, fl = _convert(c, jnp.zeros((2,), jnp.uint32), f, env, 0, jnp.float32)
    else:
        y, fl = _dq_ste(c, f, env)
    return (y, fl) if return_flags else y


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _fake(x, q):
    return q(x)


def _fake_fwd(x, q):
    return q(x), None


def _fake_bwd(q, res, g):
    return (g,)


_fake.defvjp(_fake_fwd, _fake_bwd)


def fake_quantize(x, fmt, *, rounding="nearest_even", seed=None, saturate=None, tininess="after", sr_bits=32):
    """dequantize(quantize(x, fmt, ...)) as float32, with the straight-through gradient
    (the float32 cotangent unchanged): the quantisation step of FP8 training."""
    f = _fmt(fmt, "fake_quantize")
    env = _env(rounding, saturate, tininess, sr_bits, f.name, "fake_quantize")
    s = _seed_operand(seed, rounding, "fake_quantize")
    x = _as_float32(x, "fake_quantize")

    def q(v):
        c, _ = _convert(v, s, f, env, 1, _code_dtype(f))
        y, _ = _convert(c, jnp.zeros((2,), jnp.uint32), f, _env("nearest_even", None, "after", 32, f.name,
                                                                  "fake_quantize"), 0, jnp.float32)
        return y
    return _fake(x, q)


class _Unit:
    """A matrix-unit model (a profile, a BlockFMA, the pairwise / Kahan orders) as a static
    argument: hashed by identity; its C encoding is made per operand-format pair."""
    __slots__ = ("acc",)

    def __init__(self, acc):
        self.acc = acc


def _product(a, b, fa, fb, env, model):
    """The FFI product: unit_matmul for a _Unit, else matmul (exact, or the sequential model's
    attribute)."""
    if isinstance(model, _Unit):
        return _unit_call(a, b, _unit_ints(model.acc, fa, fb))
    return _matmul_call(a, b, fa, fb, env, model)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3, 4, 5, 6))
def _mm(a, b, fa, fb, env, grad_fmt, model):
    return _product(a, b, fa, fb, env, model)


def _mm_fwd(a, b, fa, fb, env, grad_fmt, model):
    return _product(a, b, fa, fb, env, model), (a, b)


def _requant(v, f, like):
    """float32 v rounded (nearest even) into f, as an array of like's dtype."""
    nd = native_dtype(f)
    env = _env("nearest_even", None, "after", 32, f.name, "matmul")
    c, _ = _convert(v, jnp.zeros((2,), jnp.uint32), f, env, 1, like.dtype if like.dtype == nd else _code_dtype(f))
    return c


def _mm_bwd(fa, fb, env, grad_fmt, model, res, g):
    a, b = res
    gf = _fmt(grad_fmt, "matmul")
    gq = _requant(g[0], gf, jnp.zeros((), native_dtype(gf) or _code_dtype(gf)))
    swap = tuple(range(a.ndim - 2)) + (a.ndim - 1, a.ndim - 2)
    da, _ = _product(gq, jnp.transpose(b, swap), gf, fb, env, model)
    db, _ = _product(jnp.transpose(a, swap), gq, fa, gf, env, model)
    return _requant(da, fa, a), _requant(db, fb, b)


_mm.defvjp(_mm_fwd, _mm_bwd)


def matmul(a, b, fmt_a=None, fmt_b=None, *, rounding="nearest_even", saturate=None, tininess="after",
           accumulation=None, grad_format="e5m2", return_flags=False):
    """The exact matrix product of a (..., m, k) and b (..., k, p) rounded once into float32
    (``softfp8.matmul(a, b, out_dtype=np.float32)``, of two formats too: E4M3 x E5M2).
    Operands: native JAX arrays of presets (formats inferred) or uint8 / uint16 codes with
    fmt_a / fmt_b; leading batch dims must be equal.  Deterministic rounding modes.
    ``accumulation``: as ``softfp8.matmul(..., accumulation=)`` takes it -- a
    ``softfp8.Accumulation`` (sequential, pairwise or Kahan; its roundings are resolved at
    trace time as softfp8.matmul resolves them, from the softfp8 context), a
    ``softfp8.BlockFMA`` or a matrix-unit profile (``softfp8.Accumulation.profile("h100")``,
    for the input formats the unit takes; ``rounding`` must stay "nearest_even" there).
    Gradient (native operands): the cotangent rounded into ``grad_format`` (nearest even),
    then dA = G @ B^T and dB = A^T @ G by this same exact op, each rounded into its
    operand's format -- the FP8 training recipe's backward products."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    fa = _format_of_array(a, fmt_a, "matmul")
    fb = _format_of_array(b, fmt_b, "matmul")
    if rounding == "stochastic":
        raise ValueError("softfp8.jax.matmul: rounding='stochastic' is not offered for the product")
    if a.ndim < 2 or b.ndim != a.ndim or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise ValueError(f"softfp8.jax.matmul: shapes {a.shape} and {b.shape} do not fit (..., m, k) @ "
                         f"(..., k, p) with equal batch dims")
    env = _env(rounding, saturate, tininess, 32, "binary32", "matmul")
    if _mu.handles(accumulation, None):
        if rounding != "nearest_even":
            raise ValueError(f"softfp8.jax.matmul: rounding={rounding!r} does not apply to {accumulation!r}, "
                             f"whose roundings the model fixes")
        _unit_ints(accumulation, fa, fb)          # unsupported formats: the profile's ValueError, now
        model = _Unit(accumulation)
    else:
        model = _model_attr(accumulation, fa)
    if native_dtype(fa) == a.dtype and native_dtype(fb) == b.dtype:
        _fmt(grad_format, "matmul")
        y, fl = _mm(a, b, fa, fb, env, grad_format, model)
    else:
        y, fl = _product(jax.lax.stop_gradient(a), jax.lax.stop_gradient(b), fa, fb, env, model)
    return (y, fl) if return_flags else y


def scaled_mm(a, b, scale_a, scale_b, fmt_a=None, fmt_b=None, *, accumulation=None, rounding="nearest_even",
              saturate=None, tininess="after", return_flags=False):
    """``softfp8.scaled_mm(a, b, scale_a, scale_b, out_dtype=np.float32, accumulation=)``:
    result[i, j] = sum over k of a[i, k] * b[k, j] * s, s = sa * sb rounded to float32, summed
    exactly and rounded once (or as the sequential ``accumulation`` model sums). a (m, k),
    b (k, p): native arrays or codes with fmt_a / fmt_b (E4M3 x E5M2 allowed); scales:
    positive finite float32 -- a scalar (per tensor) or a 2-D grid dividing its operand
    ((m, 1) per row of a, (1, p) per column of b, (m, k / 128) 1 x 128 tiles, ...); they may
    be traced values (a non-positive or non-finite scale is an error raised by the call).
    Not differentiated (train with fake_quantize / matmul)."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    fa = _format_of_array(a, fmt_a, "scaled_mm")
    fb = _format_of_array(b, fmt_b, "scaled_mm")
    if rounding == "stochastic":
        raise ValueError("softfp8.jax.scaled_mm: rounding='stochastic' is not offered for the product")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"softfp8.jax.scaled_mm: shapes {a.shape} and {b.shape} do not fit (m, k) @ (k, p)")
    sa, sb = _scale_operand(scale_a, "scale_a"), _scale_operand(scale_b, "scale_b")
    for s, what, (r, c) in ((sa, "scale_a", a.shape), (sb, "scale_b", b.shape)):
        if r % s.shape[0] or c % s.shape[1]:
            raise ValueError(f"softfp8.jax.scaled_mm: {what} grid {s.shape} does not divide its operand ({r}, {c})")
    env = _env(rounding, saturate, tininess, 32, "binary32", "scaled_mm")
    model = _model_attr(accumulation, fa)
    y, fl = _scaled_mm_call(a, b, sa, sb, fa, fb, env, model)
    return (y, fl) if return_flags else y


# ---- exchange ----

def to_jax(arr):
    """A softfp8 NumPy array as a JAX array: a preset JAX knows as its JAX dtype, every
    other format as its uint8 / uint16 codes (returns (array, format) then).  Through
    ``jax.device_put(..., may_alias=True)``: on CPU a C-contiguous array whose data is
    64-byte aligned is shared, not copied (equal data pointers; do not write the NumPy
    array while JAX uses it), any other is copied once.  ``jnp.asarray`` and DLPack
    refuse softfp8's dtypes (docs/frameworks.md, "JAX", "Exchange")."""
    a = np.asarray(arr)
    f = format_or_none(a.dtype)
    if f is None:
        raise TypeError(f"softfp8.jax.to_jax needs a softfp8 array, got dtype {a.dtype}")
    nd = native_dtype(f)
    if nd is None:
        return _put(a.view(f.storage)), f
    return _put(a.view(np.float16) if f.name == "float16" else to_ml_dtypes(a))


def _put(a):
    try:
        return jax.device_put(a, may_alias=True)
    except TypeError:  # a JAX without may_alias (before 0.5): device_put aliases what it can
        return jax.device_put(a)


def from_jax(x, fmt=None):
    """A JAX array as a softfp8 NumPy array: a native float8 / bfloat16 / float16 array
    (format inferred), or uint8 / uint16 codes with fmt.  On CPU the result is a
    read-only view of JAX's buffer (no copy: the data pointers are equal)."""
    x = jnp.asarray(x)
    f = _format_of_array(x, fmt, "from_jax")
    host = np.asarray(x)
    if fmt is None or host.dtype == native_dtype(f):
        if f.name == "float16":
            return host.view(f.dtype)
        return from_ml_dtypes(host)
    return host.view(f.dtype)
