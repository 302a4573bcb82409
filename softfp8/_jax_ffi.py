"""The XLA FFI plumbing of softfp8.jax and softfp8.jax_nn: registration of the C handlers
(softfp8/_core/xla_ffi.c), the attributes they take (formats, environments, accumulation
models) and one call wrapper per handler.  The public functions are softfp8.jax's."""
from __future__ import annotations

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised without jax only
    raise ImportError("softfp8.jax needs JAX: pip install 'softfp8[jax]' (installs jax and jaxlib)") from exc

import ctypes

import numpy as np

from . import _context, _ext, _registry, gemm as _gemm, matrix_units as _mu
from ._formats import lookup


_TARGETS = {"convert": "softfp8_convert", "matmul": "softfp8_matmul", "scaled_mm": "softfp8_scaled_mm",
            "scaled_convert": "softfp8_scaled_convert", "delayed_update": "softfp8_delayed_update",
            "unit_matmul": "softfp8_unit_matmul", "scale_product": "softfp8_scale_product",
            "block_quantize": "softfp8_block_quantize", "block_values": "softfp8_block_values",
            "tile_quantize": "softfp8_tile_quantize"}


_registered = False


def _register():
    """Register the C handlers (softfp8/_core/xla_ffi.c, exported by the extension
    module softfp8._ext) with XLA once: their addresses as PyCapsules."""
    global _registered
    if not _registered:
        lib = ctypes.CDLL(_ext.__file__)  # the loaded extension (dlopen returns it again)
        for name, target in _TARGETS.items():
            cap = jax.ffi.pycapsule(getattr(lib, "sfp8_xla_" + name))
            jax.ffi.register_ffi_target(target, cap, platform="cpu", api_version=1)
        _registered = True


# JAX dtypes of the presets XLA stores one element per byte or two (float4 / float6 are
# packed sub-byte types in XLA: those presets use code arrays)
_NATIVE = {"float16": "float16"}


_NATIVE.update({row.name: row.ml_dtypes for row in _registry.ROWS if row.ml_dtypes})


def native_dtype(fmt):
    """The JAX dtype of a preset JAX knows (jnp.float8_e4m3fn for "e4m3", ...), or None."""
    fmt = _fmt(fmt, "native_dtype")
    name = _NATIVE.get(fmt.name)
    if name is None or name.startswith(("float4", "float6")):
        return None
    dt = getattr(jnp, name, None)
    return None if dt is None else jnp.dtype(dt)


def _fmt(fmt, what):
    """softfp8.lookup (a format, its dtype or its name), the error naming the function."""
    try:
        return lookup(fmt)
    except TypeError:
        raise TypeError(f"softfp8.jax.{what}: expected a softfp8 format, preset name or dtype, "
                        f"got {fmt!r}") from None


def _code_dtype(fmt):
    return jnp.uint8 if fmt.bits <= 8 else jnp.uint16


def _format_of_array(x, fmt, what):
    """The format of an operand: fmt, or the preset of x's native JAX dtype."""
    if fmt is not None:
        f = _fmt(fmt, what)
        nd = native_dtype(f)
        if x.dtype not in (jnp.dtype(_code_dtype(f)),) and x.dtype != nd:
            raise TypeError(f"softfp8.jax.{what}: an array of {f.name} must have dtype "
                            f"{jnp.dtype(_code_dtype(f)).name}" + (f" or {nd.name}" if nd is not None else "")
                            + f", got {x.dtype}")
        return f
    for name, ml in _NATIVE.items():
        dt = getattr(jnp, ml, None)
        if dt is not None and x.dtype == jnp.dtype(dt):
            return lookup(name)
    raise TypeError(f"softfp8.jax.{what}: cannot tell the format of an array of dtype {x.dtype}: pass "
                    f"fmt= (uint8 / uint16 code arrays) or use a JAX float8 / bfloat16 / float16 dtype")


def _env(rounding, saturate, tininess, sr_bits, fmt_name, what):
    idx = _context._mode_index(rounding)
    if saturate is None:
        sat = -1
    elif isinstance(saturate, (bool, np.bool_)):
        sat = int(bool(saturate))
    else:
        raise TypeError(f"softfp8.jax.{what}: saturate must be True, False or None, got {saturate!r}")
    if tininess not in ("after", "before"):
        raise ValueError(f"softfp8.jax.{what}: tininess must be 'after' or 'before', got {tininess!r}")
    if isinstance(sr_bits, bool) or not isinstance(sr_bits, (int, np.integer)) or not 1 <= sr_bits <= 32:
        raise ValueError(f"softfp8.jax.{what}: sr_bits must be an integer 1..32, got {sr_bits!r}")
    return (idx, sat, int(tininess == "before"), int(sr_bits))  # hashable: a static argument


def _seed_operand(seed, rounding, what):
    """The uint32 (lo, hi) seed operand (zeros for the deterministic modes)."""
    if rounding != "stochastic":
        if seed is not None:
            raise ValueError(f"softfp8.jax.{what}: seed= is for rounding='stochastic' only")
        return jnp.zeros((2,), jnp.uint32)
    if seed is None:
        raise ValueError(f"softfp8.jax.{what}: rounding='stochastic' needs seed= (an integer 0..2**64-1 or "
                         f"a uint32 array of shape (2,): (low, high) words); JAX has no hidden random state")
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        s = int(seed)
        if not 0 <= s < 2**64:
            raise ValueError(f"softfp8.jax.{what}: seed must be in 0..2**64-1, got {seed!r}")
        return jnp.array([s & 0xFFFFFFFF, s >> 32], dtype=jnp.uint32)
    s = jnp.asarray(seed)
    if s.dtype != jnp.uint32 or s.shape != (2,):
        raise TypeError(f"softfp8.jax.{what}: a seed array must be uint32 of shape (2,), got {s.dtype}{s.shape}")
    return s


def _as_float32(x, what):
    x = jnp.asarray(x)
    if x.dtype not in (jnp.float32, jnp.float16, jnp.bfloat16):
        raise TypeError(f"softfp8.jax.{what}: x must be float32 (float16 / bfloat16 are widened exactly), "
                        f"got {x.dtype}; round wider values to float32 first")
    return x.astype(jnp.float32)


def _convert(x, seed, fmt, env, to_fmt, out_dtype):
    _register()
    batch = seed.shape[:-1]
    call = jax.ffi.ffi_call(_TARGETS["convert"],
                            (jax.ShapeDtypeStruct(x.shape, out_dtype), jax.ShapeDtypeStruct(batch, jnp.uint8)),
                            vmap_method="broadcast_all")
    return call(x, seed, dir=np.int32(to_fmt), fmt=np.array(fmt.params, np.int32), env=np.array(env, np.int32))


def _model_attr(acc, fa):
    """The handler's "model" attribute (int32[38], xla_ffi.c attr_model) of a sequential
    softfp8.Accumulation, its roundings taken as softfp8.matmul takes them; None: exact."""
    if acc is not None and (_mu.is_block_model(acc) or getattr(acc, "order", "sequential") != "sequential"):
        raise TypeError(f"softfp8.jax.matmul models sequential softfp8.Accumulation models only (matrix-unit "
                        f"profiles, BlockFMA and the pairwise / Kahan orders: softfp8.matmul in NumPy), got {acc!r}")
    model = _gemm._model(acc)
    if model is None:
        return None
    envacc = _gemm._env(model._acc, model.rounding)[:4]
    if model._prod is not None:
        fp, envp = model._prod.params, _gemm._env(model._prod, model.product_rounding or model.rounding)[:4]
    else:
        fp, envp = fa.params, envacc
    promote = 0 if model.promote_every is None else int(model.promote_every)
    if promote >= 2**31:
        raise ValueError(f"softfp8.jax.matmul: promote_every {promote} too large (< 2**31)")
    v = ((int(model._prod is not None),) + tuple(fp) + tuple(envp) + tuple(model._acc.params) + tuple(envacc)
         + (promote,) + tuple(model._prom.params) + tuple(_gemm._env(model._prom, "nearest_even")[:4]))
    assert len(v) == 38
    return v


def _product_call(target, a, b):
    """ffi_call of a product handler (matmul, unit_matmul): float32 (..., m, p) and flags (...)."""
    _register()
    batch = a.shape[:-2]
    return jax.ffi.ffi_call(_TARGETS[target], (jax.ShapeDtypeStruct(batch + (a.shape[-2], b.shape[-1]), jnp.float32),
                                               jax.ShapeDtypeStruct(batch, jnp.uint8)),
                            vmap_method="broadcast_all")


def _matmul_call(a, b, fa, fb, env, model=None):
    call = _product_call("matmul", a, b)
    extra = {} if model is None else {"model": np.array(model, np.int32)}
    return call(a, b, fmt_a=np.array(fa.params, np.int32), fmt_b=np.array(fb.params, np.int32),
                env=np.array(env, np.int32), **extra)


def _scale_operand(s, what):
    if isinstance(s, (int, float, np.floating)) and not isinstance(s, bool):
        if float(np.float32(s)) != float(s):
            raise ValueError(f"softfp8.jax.scaled_mm: {what} {s!r} is not a binary32 value (round it to float32)")
        s = np.float32(s)
    s = jnp.asarray(s)
    if s.dtype != jnp.float32:
        raise TypeError(f"softfp8.jax.scaled_mm: {what} must be float32, got {s.dtype}")
    if s.ndim == 0:
        s = s.reshape(1, 1)
    if s.ndim != 2:
        raise ValueError(f"softfp8.jax.scaled_mm: {what} must be a scalar or a 2-D grid, got shape {s.shape}")
    return s


def _unit_ints(acc, fa, fb):
    """The "unit" attribute (matrix_units.model_ints) of a matrix unit, a BlockFMA or the pairwise /
    Kahan orders for operands of formats fa, fb and float32 outputs."""
    return _mu.model_ints(_mu.c_model(acc, fa.params, fb.params, fa.name, fb.name, _mu._out_target(np.float32, True)))


def _unit_call(a, b, ints):
    """xla_ffi.c unit_matmul: (float32 (..., m, p), flags (...))."""
    return _product_call("unit_matmul", a, b)(a, b, unit=ints)


def _scale_product(x, s1, s2):
    """xla_ffi.c scale_product: x * (s1 * s2) in binary32 (float32 scalars s1, s2)."""
    _register()
    call = jax.ffi.ffi_call(_TARGETS["scale_product"], jax.ShapeDtypeStruct(x.shape, jnp.float32))
    return call(x, s1, s2)


def _scaled_mm_call(a, b, sa, sb, fa, fb, env, model, scale_exact=False):
    """xla_ffi.c scaled_mm of codes a (m, k), b (k, p) and float32 scale grids: (float32 (m, p), flags)."""
    _register()
    call = jax.ffi.ffi_call(_TARGETS["scaled_mm"], (jax.ShapeDtypeStruct((a.shape[0], b.shape[1]), jnp.float32),
                                                   jax.ShapeDtypeStruct((), jnp.uint8)),
                            vmap_method="broadcast_all")
    extra = {} if model is None else {"model": np.array(model, np.int32)}
    if scale_exact:
        extra["scale_exact"] = np.int32(1)
    ops = [jax.lax.stop_gradient(v) for v in (a, b, sa, sb)]
    return call(*ops, fmt_a=np.array(fa.params, np.int32), fmt_b=np.array(fb.params, np.int32),
                env=np.array(env, np.int32), **extra)


_SCALAR_OUTS = 4  # scaled_convert's results after y: flags, amax, the scale used, its inverse


def _scaled_convert(t, scale, seed, fmt, env, rule, to_fmt):
    """xla_ffi.c scaled_convert: to_fmt 1, float32 t -> codes of t * scale (rule: (0 the scale given / 1 the
    current scale from amax(t), the target's float32 bits, pow2)); to_fmt 0, codes t -> float32 t / scale.
    Returns (y, flags, amax, scale used, 1 / scale used)."""
    _register()
    y = jax.ShapeDtypeStruct(t.shape, _code_dtype(fmt) if to_fmt else jnp.float32)
    outs = (y, jax.ShapeDtypeStruct((), jnp.uint8)) + (jax.ShapeDtypeStruct((), jnp.float32),) * (_SCALAR_OUTS - 1)
    call = jax.ffi.ffi_call(_TARGETS["scaled_convert"], outs)
    return call(jax.lax.stop_gradient(t), scale, seed, dir=np.int32(to_fmt), rule=np.array(rule, np.int32),
                fmt=np.array(fmt.params, np.int32), env=np.array(env, np.int32))


def _delayed_update(history, amax, scale, rule):
    """xla_ffi.c delayed_update (rule: (amax algorithm 0 max / 1 most recent, the target's float32 bits)):
    (the new amax history, the new scale)."""
    _register()
    call = jax.ffi.ffi_call(_TARGETS["delayed_update"],
                            (jax.ShapeDtypeStruct(history.shape, jnp.float32), jax.ShapeDtypeStruct((), jnp.float32)))
    return call(history, amax, scale, rule=np.array(rule, np.int32))


def _block_quantize(x, seed, kind, efmt, sfmt, env):
    """xla_ffi.c block_quantize of the rows of float32 x (rows, n): (element codes, scale codes, tensor
    scale, flags); kind = (nvfp4, rule, emax, mbits, largest value's float32 bits, block size, int8)."""
    _register()
    rows, n = x.shape
    nb = -(-n // kind[5])
    call = jax.ffi.ffi_call(_TARGETS["block_quantize"],
                            (jax.ShapeDtypeStruct((rows, n), jnp.uint8), jax.ShapeDtypeStruct((rows, nb), jnp.uint8),
                             jax.ShapeDtypeStruct((), jnp.float32), jax.ShapeDtypeStruct((), jnp.uint8)))
    return call(jax.lax.stop_gradient(x), seed, kind=np.array(kind, np.int32), efmt=np.array(efmt.params, np.int32),
                sfmt=np.array(sfmt.params, np.int32), env=np.array(env, np.int32))


def _block_values(codes, scales, ts, mode, bs, efmt, sfmt, int8=False, tr=1):
    """xla_ffi.c block_values: float32 values of element codes (rows, n) with their block scales (mode 0: E8M0
    codes, 1: NVFP4's UE4M3 codes, 2: float32 tile scales of tr rows) and tensor scale."""
    _register()
    call = jax.ffi.ffi_call(_TARGETS["block_values"], jax.ShapeDtypeStruct(codes.shape, jnp.float32))
    return call(codes, scales, ts, kind=np.array((int(mode), bs, int(int8), tr), np.int32),
                efmt=np.array(efmt.params, np.int32), sfmt=np.array(sfmt.params, np.int32))


def _tile_quantize(x, seed, tile, efmt, env):
    """xla_ffi.c tile_quantize (mx.quantize_tiles) of float32 rows x: (codes, float32 scales, flags)."""
    _register()
    r, c = x.shape
    grid = (-(-r // tile[0]), -(-c // tile[1]))
    call = jax.ffi.ffi_call(_TARGETS["tile_quantize"],
                            (jax.ShapeDtypeStruct((r, c), jnp.uint8), jax.ShapeDtypeStruct(grid, jnp.float32),
                             jax.ShapeDtypeStruct((), jnp.uint8)))
    fmax = int(np.float32(efmt.max).view(np.uint32).view(np.int32))
    return call(jax.lax.stop_gradient(x), seed, tile=np.array(tuple(tile) + (fmax,), np.int32),
                efmt=np.array(efmt.params, np.int32), env=np.array(env, np.int32))
