"""Block (microscaling) formats: OCP MX v1.0, NVIDIA NVFP4 and DeepSeek-V3 tiles.

``quantize(x, kind, axis=-1, scale_rule=None, rounding=None)`` splits ``x`` into blocks
along ``axis`` and returns a :class:`BlockArray` holding the element codes, one scale per
block (and, for NVFP4, one float32 tensor scale).  ``quantize_tiles(x, tile)`` does the
same with DeepSeek-V3's float32-scaled 1x128 / 128x128 tiles.  The rules, the decisions
where the sources are silent, and the packed bit order are in docs/training.md, section
"Block formats (MX, NVFP4, DeepSeek tiles)".

Every element is rounded once, from the exact quotient x / scale, by softfp8's own cast
(the context's rounding mode, stochastic rounding included, always saturating), so the
result is bit-exact and reproducible.
"""
import contextlib
import math
import secrets
from fractions import Fraction

import numpy as np

from ._formats import NAMED, Format
from ._formats import format as _make_format
from ._context import _current, get_rounding, rounding as _rounding_ctx
from ._context import saturation as _saturation_ctx
from . import _ext
from . import bits as _bits
from . import _dtypes  # noqa: F401  (registers Format.dtype)
from . import gemm as _gemm

__all__ = ["BlockArray", "quantize", "quantize_tiles", "element_format", "KINDS",
           "SCALE_RULES", "pack_fp4", "unpack_fp4", "pack_fp6", "unpack_fp6"]

E8M0_NAN = 0xFF
E8M0_BIAS = 127
SCALE_RULES = ("floor", "ceil", "even", "rceil")

# element formats by their OCP names -> (preset name once merged, parameters until then)
_ELEMENTS = {
    "e2m1": ("float4_e2m1fn", dict(exp_bits=2, man_bits=1, bias=1, specials="none")),
    "e2m3": ("float6_e2m3fn", dict(exp_bits=2, man_bits=3, bias=1, specials="none")),
    "e3m2": ("float6_e3m2fn", dict(exp_bits=3, man_bits=2, bias=3, specials="none")),
    "e4m3": ("e4m3", None),
    "e5m2": ("e5m2", None),
}


def element_format(name):
    """The softfp8 Format of an MX / NVFP4 element type: "e2m1", "e2m3", "e3m2", "e4m3",
    "e5m2".  The one place that maps names to formats: the preset (``float4_e2m1fn`` ...)
    when the registry has it, else the identical ``softfp8.format(..., specials="none")``."""
    try:
        preset, params = _ELEMENTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown element format {name!r}; expected one of "
                         f"{sorted(_ELEMENTS)}") from None
    fmt = NAMED.get(preset)
    if isinstance(fmt, Format):
        return fmt
    return _make_format(**params)


# MXINT8's element: 8-bit two's complement k, value k / 64 (k = -127..127 produced; -128
# decodes to -2).  It is rounded through a helper float format whose subnormals are exactly
# k / 64 for |k| < 128 (exp_bits=1, man_bits=7, bias=0), so every rounding mode, stochastic
# included, is softfp8's own.
_INT8_HELPER = dict(exp_bits=1, man_bits=7, bias=0, specials="none")
_INT8_MAX = 127


class _Kind:
    """One block format: element type, block size, scale type, and the element's emax
    (exponent of its largest normal), mantissa bits and largest value (OCP MX v1.0 table;
    tests/numpy_glue/test_mx.py checks them against the formats)."""
    __slots__ = ("name", "elem", "block", "scale", "emax", "mbits", "elem_max")

    def __init__(self, name, elem, block, scale, emax, mbits, elem_max):
        self.name, self.elem, self.block, self.scale = name, elem, block, scale
        self.emax, self.mbits, self.elem_max = emax, mbits, Fraction(elem_max)

    def format(self):
        return None if self.elem == "int8" else element_format(self.elem)


KINDS = {k.name: k for k in (
    _Kind("mxfp8_e4m3", "e4m3", 32, "e8m0", 8, 3, 448),
    _Kind("mxfp8_e5m2", "e5m2", 32, "e8m0", 15, 2, 57344),
    _Kind("mxfp6_e2m3", "e2m3", 32, "e8m0", 2, 3, Fraction(15, 2)),
    _Kind("mxfp6_e3m2", "e3m2", 32, "e8m0", 4, 2, 28),
    _Kind("mxfp4", "e2m1", 32, "e8m0", 2, 1, 6),
    _Kind("mxint8", "int8", 32, "e8m0", 0, 6, Fraction(_INT8_MAX, 64)),
    _Kind("nvfp4", "e2m1", 16, "ue4m3", 2, 1, 6),
)}
_TILES = {(1, 128): "tile_1x128", (128, 128): "tile_128x128"}

# ---------------------------------------------------------------------------------------
# argument checks


def _as_float64(x, name="x"):
    """x as a float64 array, exactly (refuses what float64 cannot hold exactly)."""
    if isinstance(x, BlockArray):
        raise TypeError(f"{name} is already a BlockArray; call .dequantize() first")
    arr = np.asarray(x)
    dt = arr.dtype
    if isinstance(dt, np.dtype) and dt.kind == "f" and dt.itemsize <= 8:
        return arr.astype(np.float64)
    if dt.kind in "iub":
        out = arr.astype(np.float64)
        if dt.kind != "b" and dt.itemsize == 8 and np.any(np.abs(out) > 2.0 ** 53):
            bad = arr.reshape(-1)[np.argmax(np.abs(out.reshape(-1)) > 2.0 ** 53)]
            raise ValueError(f"{name} holds the integer {int(bad)}, not exact in float64")
        return out
    if _is_softfp8(dt):
        return arr.astype(np.float64)
    raise TypeError(f"{name} must be a real array (floats of at most 64 bits, integers or a "
                    f"softfp8 dtype), got dtype {dt}")


def _source(x):
    """x as the block quantiser reads it: a native float32 / float64 array as it is,
    anything else exactly in float64 (_as_float64, which also refuses bad input)."""
    if not isinstance(x, BlockArray):
        arr = np.asarray(x)
        if arr.dtype in (np.dtype(np.float32), np.dtype(np.float64)):
            return arr
    return _as_float64(x)


def _is_softfp8(dt):
    return type(dt).__module__.split(".")[0] == "softfp8"


def _check_axis(axis, ndim):
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for an array of {ndim} dimension(s)")
    return int(axis) % ndim


def _check_block(block, default):
    if block is None:
        return default
    if isinstance(block, (bool, np.bool_)) or not isinstance(block, (int, np.integer)):
        raise TypeError(f"block must be a positive int, got {block!r}")
    if block < 1:
        raise ValueError(f"block must be a positive int, got {block}")
    return int(block)


def _check_rounding(rounding, seed):
    if rounding is not None and not isinstance(rounding, str):
        raise TypeError(f"rounding must be a rounding-mode name or None, got {rounding!r}")
    return rounding, seed


# ---------------------------------------------------------------------------------------
# exact arithmetic helpers (vectorised)

_STOCHASTIC = 6          # sfp8_rounding's SFP8_ROUND_STOCHASTIC (the context's mode index)
_TINY = 2.0 ** -900      # far below every element's smallest subnormal (see _exact_quotient)
_SPLIT = 134217729.0     # 2**27 + 1 (Veltkamp)


def _two_prod(a, b):
    """a*b = p + e exactly (Dekker), for float64 arrays whose products stay normal."""
    p = a * b
    ca = _SPLIT * a
    ah = ca - (ca - a)
    al = a - ah
    cb = _SPLIT * b
    bh = cb - (cb - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _exact_quotient(x, d):
    """x / d as a float64 that rounds like the exact quotient into any element format.

    d > 0 finite.  The result is the quotient rounded to odd at 53 bits (every format here
    has at most 8 significant bits, and 8 + 32 stochastic bits + 2 <= 53, so one later
    rounding of it equals one rounding of the exact quotient in every mode, SPEC §3), or,
    when the quotient is below 2**-900 in magnitude, +-2**-900, which every mode rounds as
    it rounds the true quotient (to 0 or the smallest subnormal)."""
    e = np.frexp(d)[1]
    dn = np.ldexp(d, 1 - e)                       # [1, 2), exact
    with np.errstate(over="ignore"):              # inf: the cast saturates it
        xn = np.ldexp(x, 1 - e)                   # exact unless it underflows (then tiny)
    tiny = (x != 0) & (np.abs(xn) < 2.0 * _TINY)
    xs = np.where(tiny, 1.0, xn)
    if np.all(dn == 1.0):                         # a power-of-two divisor: exact already
        return np.where(tiny, np.copysign(_TINY, x), xs)
    with np.errstate(invalid="ignore", over="ignore"):
        q = xs / dn
        p, err = _two_prod(q, dn)
        rem = (xs - p) - err                      # x - q*d exactly (RN division remainder)
    fix = (rem != 0) & ((q.view(np.int64) & 1) == 0) & np.isfinite(q)
    if np.any(fix):
        q[fix] = np.nextafter(q[fix], np.where(rem[fix] > 0, np.inf, -np.inf))
    q = np.where(tiny, np.copysign(_TINY, x), q)
    return q


def _cast(q, fmt, rounding, seed):
    """One softfp8 cast of the float64 array q into fmt: the given (or context) rounding
    mode, saturating (OCP MX: values beyond the largest normal are clamped to it)."""
    with contextlib.ExitStack() as stack:
        _cast_context(stack, rounding, seed)
        return q.astype(fmt.dtype)


def _cast_context(stack, rounding, seed):
    """The element casts' context: the given (or the context's) rounding mode and stream,
    saturating, overflow not reported."""
    if rounding is not None or seed is not None:    # else the context's mode and stream
        stack.enter_context(_rounding_ctx(rounding or get_rounding(), seed=seed,
                                          sr_bits=_current().sr_bits))
    stack.enter_context(_saturation_ctx(True))
    stack.enter_context(np.errstate(over="ignore"))   # saturation is the rule here


def _cast_int8(q, rounding, seed):
    """MXINT8 elements: round q * 64 to an integer in the context mode, clamp to +-127."""
    helper = _make_format(**_INT8_HELPER)
    codes = _cast(q, helper, rounding, seed)
    k = np.rint(codes.astype(np.float64) * 64.0)
    return np.clip(k, -_INT8_MAX, _INT8_MAX).astype(np.int8)


def _round_scale(a, d, fmt):
    """RNE of the exact quotient a / d into fmt (saturating): codes in fmt.storage.
    Scales always round to nearest even, whatever the context (the recipes define them so)."""
    q = _exact_quotient(a, d)
    codes, _ = _bits.from_float(q, fmt, rounding="nearest_even", saturate=True)
    return codes


def _f32_nearest(fr):
    """float32 nearest (ties to even) to the Fraction fr >= 0: one rounding."""
    f = float(fr)                                  # correctly rounded to float64
    if Fraction(f) != fr and (np.float64(f).view(np.int64) & 1) == 0:
        f = float(np.nextafter(f, np.inf if Fraction(f) < fr else -np.inf))   # to odd
    with np.errstate(over="ignore"):
        return np.float32(f)                       # inf beyond float32: the caller refuses


# ---------------------------------------------------------------------------------------
# blocking


def _blocks(xm, block):
    """xm (..., n) -> (..., nb, block) padded with zeros (a zero never changes an amax)."""
    n = xm.shape[-1]
    nb = -(-n // block)
    pad = nb * block - n
    if pad:
        xm = np.concatenate([xm, np.zeros(xm.shape[:-1] + (pad,), np.float64)], axis=-1)
    return xm.reshape(xm.shape[:-1] + (nb, block)), n


def _amax_special(xb):
    """(amax over finite entries, block holds a NaN or an infinity) per block."""
    a = np.abs(xb)
    finite = np.isfinite(a)
    amax = np.max(np.where(finite, a, 0.0), axis=-1, initial=0.0)
    return amax, ~np.all(finite, axis=-1)


def _shared_exp(amax, kind, rule):
    """Unclamped shared exponent per block (int64) for amax > 0 (finite)."""
    m, e = np.frexp(amax)                  # amax = m * 2**e, m in [0.5, 1)
    fl = e.astype(np.int64) - 1            # floor(log2(amax))
    if rule == "floor":
        return fl - kind.emax
    if rule == "ceil":
        return fl + (m != 0.5) - kind.emax
    if rule == "even":
        # amax's significand rounded to the element's mantissa width, ties up: past
        # 2 - 2**-(mbits+1) it becomes 2, one binade higher
        return fl + (2.0 * m >= 2.0 - 2.0 ** -(kind.mbits + 1)) - kind.emax
    # rceil: the smallest k with amax <= elem_max * 2**k
    emax_val = float(kind.elem_max)
    k0 = fl - (math.frexp(emax_val)[1] - 1)
    q = np.ldexp(amax, -k0)                # in [2**floor(log2 max), 2**(..+1)), exact
    return k0 + (q > emax_val)


def quantize(x, kind, axis=-1, scale_rule=None, rounding=None, *, block=None, seed=None,
             tensor_scale=None):
    """Quantise x into a block format; returns a :class:`BlockArray`.

    kind: "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "mxint8" (OCP MX
    v1.0, blocks of 32, E8M0 scales) or "nvfp4" (E2M1, blocks of 16, UE4M3 block scales and
    a float32 tensor scale).  axis: the blocked axis; a last block shorter than ``block`` is
    quantised as if padded with zeros.  scale_rule (MX only): "floor" (the spec, default),
    "ceil", "even" or "rceil".  rounding: element rounding mode (None: the context's);
    seed: stochastic-rounding seed.  block: block size (default the kind's).  tensor_scale
    (NVFP4 only): the float32 decode scale to use instead of amax / (6 * 448).
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"unknown block format kind {kind!r}; expected one of {sorted(KINDS)}")
    k = KINDS[kind]
    src = _source(x)
    if src.ndim == 0:
        raise ValueError("x must have at least one dimension to block")
    ax = _check_axis(axis, src.ndim)
    bs = _check_block(block, k.block)
    rounding, seed = _check_rounding(rounding, seed)
    if kind == "nvfp4":
        if scale_rule is not None:
            raise ValueError(f"scale_rule={scale_rule!r}: NVFP4's block scale has one rule "
                             "(amax / 6 rounded to UE4M3); pass scale_rule=None")
        rule = None
    else:
        if tensor_scale is not None:
            raise ValueError(f"tensor_scale={tensor_scale!r} is for kind='nvfp4' only")
        rule = "floor" if scale_rule is None else scale_rule
        if rule not in SCALE_RULES:
            raise ValueError(f"unknown scale_rule {scale_rule!r}; expected one of {SCALE_RULES}")
    fast = _quantize_fast(src, k, ax, bs, rule, rounding, seed, tensor_scale)
    if fast is not None:
        return fast
    x64 = src.astype(np.float64)                             # exact
    if kind == "nvfp4":
        return _quantize_nvfp4(x64, k, ax, bs, rounding, seed, tensor_scale)

    xb, n = _blocks(np.moveaxis(x64, ax, -1), bs)
    amax, special = _amax_special(xb)
    pos = amax > 0
    shared = np.full(amax.shape, -E8M0_BIAS, np.int64)       # all-zero block: 2**-127
    if np.any(pos):
        shared[pos] = _shared_exp(amax[pos], k, rule)
    shared = np.maximum(shared, -E8M0_BIAS)                  # E8M0's smallest scale
    nan = special | (shared > E8M0_BIAS)                     # no E8M0 holds it: NaN
    scales = np.where(nan, E8M0_NAN, shared + E8M0_BIAS).astype(np.uint8)
    d = np.ldexp(1.0, np.where(nan, 0, shared))[..., None]
    xq = np.where(nan[..., None], 0.0, xb)                   # a NaN block's elements: zero
    q = _exact_quotient(xq, np.broadcast_to(d, xq.shape))
    q = q.reshape(q.shape[:-2] + (q.shape[-2] * q.shape[-1],))[..., :n]
    if k.elem == "int8":
        el = _cast_int8(q, rounding, seed)
    else:
        el = _cast(q, k.format(), rounding, seed)
    return BlockArray(np.moveaxis(el, -1, ax), np.moveaxis(scales, -1, ax), kind=kind,
                      axes=(ax,), block=(bs,))


_NVFP4_DEN = 6 * 448      # E2M1 max * E4M3 max


def _tensor_scale(t_amax, tensor_scale):
    """NVFP4's float32 tensor scale: tensor_scale checked, or nearest to t_amax / (6 * 448)
    (the largest block amax), 1.0 for an all-zero tensor."""
    if tensor_scale is None:
        if t_amax == 0:
            return np.float32(1.0)
        ts = _f32_nearest(Fraction(t_amax) / _NVFP4_DEN)
        if not np.isfinite(ts):
            raise ValueError(f"amax {t_amax!r} gives a tensor scale beyond float32")
        return np.float32(2.0 ** -149) if ts == 0 else ts
    ts = np.float32(tensor_scale)
    if not (np.isfinite(ts) and ts > 0) or float(ts) != float(tensor_scale):
        raise ValueError(f"tensor_scale must be a positive finite float32 value, got "
                         f"{tensor_scale!r}")
    return ts


def _cast_env():
    """(envp, rngp, stochastic) of a NumPy cast made now (npy/context.c, loopdata_new): the
    context's environment and, for stochastic rounding, the stream it would take."""
    st = _current()
    envp = (st.rounding, int(st.saturate > 0), st.tininess_before, st.sr_bits, st.isa)
    stoch = st.rounding == _STOCHASTIC
    if not stoch:
        return envp, (0, 0, 0, 0), False
    seed = st.seed if st.seeded else secrets.randbits(64)
    return envp, (1, seed, st.counter, 0), True


def _count_cast():
    """Take the stream a NumPy cast made now would take (the reference's exact casts)."""
    st = _current()
    st.counter += st.rounding == _STOCHASTIC


def _quantize_fast(src, k, ax, bs, rule, rounding, seed, tensor_scale):
    """The C block quantiser (softfp8/_core/quantize.h): the same BlockArray as the
    Python path below (its reference: what runs with the fast paths off), or None where
    it declines (fast paths off, an empty array, an ISA convention in the context, or
    np.errstate asking to hear of underflow: the reference's cast reports it)."""
    if not _ext.fast_enabled() or src.size == 0 or _current().isa or np.geterr()["under"] != "ignore":
        return None
    xm = np.moveaxis(src, ax, -1)
    lead, n = xm.shape[:-1], xm.shape[-1]
    x2 = xm.reshape(-1, n)
    if not x2.flags.c_contiguous and x2.dtype.itemsize * n >= 64:
        x2 = np.ascontiguousarray(x2)    # rows of one stride: the contiguous (SIMD) kernels
    nb = -(-n // bs)
    amax = np.empty(x2.shape[0] * nb)
    special = np.empty(amax.size, np.uint8)
    t_amax = _ext.block_amax(x2, bs, amax, special)
    if t_amax is None:
        return None
    nv = k.name == "nvfp4"
    int8 = k.elem == "int8"
    ts = _tensor_scale(t_amax, tensor_scale) if nv else None
    fmt = _make_format(**_INT8_HELPER) if int8 else k.format()
    kindp = (int(nv), 0 if nv else SCALE_RULES.index(rule), k.emax, k.mbits, float(k.elem_max),
             float(ts) if nv else 0.0, int(int8))
    scales = np.empty(amax.size, np.uint8)
    out = np.empty(x2.size, np.int8 if int8 else fmt.storage)
    sfmt = element_format("e4m3").params if nv else None
    if nv:
        _count_cast()                    # the reference's cast of the scales to float64
    with contextlib.ExitStack() as stack:
        _cast_context(stack, rounding, seed)
        envp, rngp, stoch = _cast_env()
        fl = _ext.block_finish(x2, bs, kindp, fmt.params, sfmt, amax, special, scales, out, envp, rngp)
        if fl is None:
            return None
        st = _current()
        st.counter += stoch
        st.cell.flags |= fl
    el = out.reshape(lead + (n,))
    if not int8:
        el = el.view(fmt.dtype)
    else:
        _count_cast()                    # the reference's cast of the helper's codes to float64
    return BlockArray(np.moveaxis(el, -1, ax), np.moveaxis(scales.reshape(lead + (nb,)), -1, ax), kind=k.name,
                      axes=(ax,), block=(bs,), tensor_scale=ts)


def _quantize_nvfp4(x64, k, ax, bs, rounding, seed, tensor_scale):
    e4m3 = element_format("e4m3")
    xm = np.moveaxis(x64, ax, -1)
    xb, n = _blocks(xm, bs)
    amax, special = _amax_special(xb)
    ts = _tensor_scale(float(np.max(amax, initial=0.0)), tensor_scale)
    # block scale: UE4M3 nearest to block_amax / 6 / tensor_scale (saturating at 448)
    den = np.full(amax.shape, 6.0 * float(ts))
    sc = _round_scale(amax, den, e4m3)
    sc = np.where(special, 0x7F, sc).astype(np.uint8)        # E4M3 NaN: the block is NaN
    sval = np.where(special, 0.0, sc.view(e4m3.dtype).astype(np.float64))
    live = sval > 0
    d = np.where(live, sval * float(ts), 1.0)[..., None]     # exact: 4 x 24 bits
    xq = np.where(live[..., None], xb, 0.0)                  # zero / NaN scale: zeros
    q = _exact_quotient(xq, np.broadcast_to(d, xq.shape))
    q = q.reshape(q.shape[:-2] + (q.shape[-2] * q.shape[-1],))[..., :n]
    el = _cast(q, k.format(), rounding, seed)
    return BlockArray(np.moveaxis(el, -1, ax), np.moveaxis(sc, -1, ax), kind="nvfp4",
                      axes=(ax,), block=(bs,), tensor_scale=ts)


def quantize_tiles(x, tile=(1, 128), rounding=None, *, seed=None, fmt=None):
    """DeepSeek-V3 fine-grained FP8: tiles of ``tile`` = (1, 128) (activations: per row,
    128 consecutive elements of the last axis) or (128, 128) (weights: blocks of the last
    two axes), each with a float32 scale = amax / fmt.max (nearest float32; 1.0 for an
    all-zero tile) and elements fmt(x / scale) (fmt: E4M3 by default; saturating, rounded
    in the given or the context's mode).  Edge tiles may be partial."""
    t = tuple(tile) if isinstance(tile, (tuple, list)) else tile
    if t not in _TILES:
        raise ValueError(f"tile must be (1, 128) or (128, 128), got {tile!r}")
    fmt = element_format("e4m3") if fmt is None else fmt
    if not isinstance(fmt, Format) or fmt.bits != 8:
        raise TypeError(f"fmt must be an 8-bit softfp8 Format, got {fmt!r}")
    x64 = _as_float64(x)
    rounding, seed = _check_rounding(rounding, seed)
    if x64.ndim < (2 if t == (128, 128) else 1):
        raise ValueError(f"tile {t} needs an array of at least {2 if t[0] > 1 else 1} "
                         f"dimension(s), got shape {x64.shape}")
    axes = (x64.ndim - 2, x64.ndim - 1) if t == (128, 128) else (x64.ndim - 1,)
    blk = (128, 128) if t == (128, 128) else (128,)
    xt, shape = _tiles(x64, axes, blk)          # (..., nb0, [nb1,] cells)
    a = np.abs(xt)
    finite = np.isfinite(a)
    amax = np.max(np.where(finite, a, 0.0), axis=-1, initial=0.0)
    special = ~np.all(finite, axis=-1)
    scale = _f32_scale(amax, float(fmt.max))
    scale = np.where(special, np.float32(np.nan), scale).astype(np.float32)
    d = np.where(special, 1.0, scale.astype(np.float64))[..., None]
    xq = np.where(special[..., None], 0.0, xt)
    q = _exact_quotient(xq, np.broadcast_to(d, xq.shape))
    q = _untile(q, axes, blk, shape)
    el = _cast(q, fmt, rounding, seed)
    return BlockArray(el, scale, kind=_TILES[t], axes=axes, block=blk, fmt=fmt)


def _f32_scale(amax, fmax):
    """float32 nearest to amax / fmax per tile, exactly (one rounding); 1.0 for amax 0."""
    q = _exact_quotient(amax, np.full(amax.shape, fmax))       # to odd at 53 bits
    with np.errstate(over="ignore"):
        out = q.astype(np.float32)                             # one more rounding: exact
    if np.any(np.isinf(out)):
        bad = float(amax[np.isinf(out)].reshape(-1)[0])
        raise ValueError(f"a tile's amax {bad!r} needs a scale beyond float32")
    out = np.where(amax == 0, np.float32(1.0), out)
    out = np.where((out == 0) & (amax > 0), np.float32(2.0 ** -149), out)
    return out.astype(np.float32)


def _tiles(x, axes, blk):
    """Move the tiled axes last, pad with zeros, and gather each tile's cells last."""
    xm = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    shape = xm.shape
    lead = shape[:-len(axes)]
    pads = [(0, 0)] * len(lead) + [(0, -(-s // b) * b - s) for s, b in zip(shape[len(lead):], blk)]
    xp = np.pad(xm, pads)
    if len(axes) == 1:
        return xp.reshape(lead + (xp.shape[-1] // blk[0], blk[0])), shape
    n0, n1 = xp.shape[-2] // blk[0], xp.shape[-1] // blk[1]
    xp = xp.reshape(lead + (n0, blk[0], n1, blk[1]))
    xp = np.moveaxis(xp, -3, -2)                 # (..., n0, n1, b0, b1)
    return xp.reshape(lead + (n0, n1, blk[0] * blk[1])), shape


def _untile(q, axes, blk, shape):
    lead = shape[:-len(axes)]
    if len(axes) == 1:
        out = q.reshape(lead + (q.shape[-2] * blk[0],))[..., :shape[-1]]
    else:
        n0, n1 = q.shape[-3], q.shape[-2]
        out = q.reshape(lead + (n0, n1, blk[0], blk[1]))
        out = np.moveaxis(out, -2, -3).reshape(lead + (n0 * blk[0], n1 * blk[1]))
        out = out[..., :shape[-2], :shape[-1]]
    nd = len(shape)
    return np.moveaxis(out, tuple(range(nd - len(axes), nd)), axes)


# ---------------------------------------------------------------------------------------
# the block array


class BlockArray:
    """Elements + one scale per block (+ the NVFP4 tensor scale).

    ``elements``: the element codes in the input's shape (a softfp8 array of the element
    format; int8 for MXINT8).  ``scales``: the input's shape with each blocked axis of
    length n replaced by ceil(n / block): E8M0 codes (uint8, value 2**(code-127), 0xFF NaN)
    for MX, UE4M3 codes (uint8: E4M3 codes with the sign bit 0) for NVFP4, float32 for the
    DeepSeek tiles.  ``tensor_scale``: NVFP4's float32 decode scale (else None).
    ``axis``/``block``: the blocked axis and block size (tuples of two for 128x128 tiles).
    """

    __slots__ = ("elements", "scales", "tensor_scale", "kind", "axes", "blocks", "_fmt")

    def __init__(self, elements, scales, *, kind, axes, block, tensor_scale=None, fmt=None):
        self.elements = elements
        self.scales = scales
        self.kind = kind
        self.axes = tuple(axes)
        self.blocks = tuple(block)
        self.tensor_scale = tensor_scale
        if fmt is None and kind in KINDS:
            fmt = KINDS[kind].format()
        self._fmt = fmt

    # -- attributes
    @property
    def shape(self):
        return self.elements.shape

    @property
    def ndim(self):
        return self.elements.ndim

    @property
    def axis(self):
        return self.axes[0] if len(self.axes) == 1 else self.axes

    @property
    def block(self):
        return self.blocks[0] if len(self.blocks) == 1 else self.blocks

    @property
    def element_format(self):
        """The elements' softfp8 Format (None for MXINT8's int8 elements)."""
        return self._fmt

    @property
    def scale_format(self):
        if self.kind == "nvfp4":
            return "ue4m3"
        return "float32" if self.kind in _TILES.values() else "e8m0"

    def __repr__(self):
        return (f"BlockArray(kind={self.kind!r}, shape={self.shape}, axis={self.axis}, "
                f"block={self.block}, scales={self.scale_format}{self.scales.shape}"
                + (f", tensor_scale={float(self.tensor_scale)!r}" if self.tensor_scale
                   is not None else "") + ")")

    # -- values
    def scale_values(self):
        """The block scales as float64 values (NaN for a NaN scale)."""
        if self.scale_format == "e8m0":
            c = self.scales.astype(np.int64)
            return np.where(c == E8M0_NAN, np.nan, np.ldexp(1.0, c - E8M0_BIAS))
        if self.scale_format == "ue4m3":
            return (self.scales & 0x7F).view(element_format("e4m3").dtype).astype(np.float64)
        return self.scales.astype(np.float64)

    def element_values(self):
        """The elements' own values (before scaling) as float64."""
        if self.kind == "mxint8":
            return self.elements.astype(np.float64) / 64.0
        return self.elements.astype(np.float64)

    def _expand(self, s):
        for ax, b in zip(self.axes, self.blocks):
            s = np.repeat(s, b, axis=ax)
            s = np.take(s, np.arange(self.shape[ax]), axis=ax)
        return s

    def dequantize(self, dtype=np.float32):
        """element * block scale (* tensor scale), computed exactly in float64 then cast
        once to dtype (a NumPy float dtype or a softfp8 format / dtype: context rounding).
        A block whose scale is NaN dequantises to NaN."""
        v = self.element_values() * self._expand(self.scale_values())
        if self.tensor_scale is not None:
            v = v * float(self.tensor_scale)    # exact: <= 4 + 4 + 24 significant bits
        if isinstance(dtype, Format):
            dtype = dtype.dtype
        return v.astype(dtype)

    # -- slicing along the non-blocked axes
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if sum(k is Ellipsis for k in key) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if Ellipsis in key:
            i = next(j for j, k in enumerate(key) if k is Ellipsis)
            fill = self.ndim - (len(key) - 1)
            key = key[:i] + (slice(None),) * fill + key[i + 1:]
        if len(key) > self.ndim:
            raise IndexError(f"too many indices for a BlockArray of {self.ndim} dimension(s)")
        key = key + (slice(None),) * (self.ndim - len(key))
        ekey, skey, new_axes, dropped = [], [], [], 0
        for d, k in enumerate(key):
            if d in self.axes:
                b = self.blocks[self.axes.index(d)]
                ek, sk = self._block_slice(d, k, b)
                ekey.append(ek)
                skey.append(sk)
                new_axes.append(d - dropped)
                continue
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer, slice)):
                raise TypeError(f"BlockArray index along axis {d} must be an int or a slice, "
                                f"got {k!r}")
            if not isinstance(k, slice):
                n = self.shape[d]
                if not -n <= k < n:
                    raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
                dropped += 1
            ekey.append(k)
            skey.append(k)
        return BlockArray(self.elements[tuple(ekey)], self.scales[tuple(skey)], kind=self.kind,
                          axes=new_axes, block=self.blocks, tensor_scale=self.tensor_scale,
                          fmt=self._fmt)

    def _block_slice(self, d, k, b):
        """A slice of a blocked axis: whole blocks only (start a multiple of the block
        size, stop a multiple or the end, step 1)."""
        n = self.shape[d]
        if not isinstance(k, slice):
            raise IndexError(f"axis {d} is blocked (block {b}): index it with a slice of "
                             f"whole blocks, not {k!r}")
        start, stop, step = k.indices(n)
        if step != 1 or start % b or (stop % b and stop != n) or stop < start:
            raise IndexError(f"slice {k!r} of blocked axis {d} (size {n}, block {b}) does not "
                             "cover whole blocks")
        return slice(start, stop), slice(start // b, -(-stop // b))

    # -- packed storage
    def pack(self):
        """Sub-byte storage: a dict with "data" (uint8 bytes: the elements in C order of the
        array with the blocked axis moved last, two FP4 per byte or four FP6 per three
        bytes; one byte per 8-bit element), "scales", "tensor_scale" and the metadata
        BlockArray.unpack needs ("kind", "shape", "axes", "block", "fmt")."""
        el = self.elements
        for i, ax in enumerate(self.axes):
            el = np.moveaxis(el, ax, el.ndim - len(self.axes) + i)
        codes = np.ascontiguousarray(el).view(np.uint8).reshape(-1)
        bits = 8 if self._fmt is None else self._fmt.bits
        data = {4: pack_fp4, 6: pack_fp6}.get(bits, np.copy)(codes)
        return {"kind": self.kind, "shape": self.shape, "axes": self.axes,
                "block": self.blocks, "fmt": self._fmt, "data": data,
                "scales": self.scales.copy(), "tensor_scale": self.tensor_scale}

    @classmethod
    def unpack(cls, packed):
        """Rebuild a BlockArray from the dict returned by :meth:`pack`."""
        try:
            kind, shape, axes = packed["kind"], tuple(packed["shape"]), tuple(packed["axes"])
            blk, fmt, data = tuple(packed["block"]), packed["fmt"], packed["data"]
            scales, ts = packed["scales"], packed["tensor_scale"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a packed BlockArray: {exc!r}") from None
        count = int(np.prod(shape))
        bits = 8 if fmt is None else fmt.bits
        if bits == 4:
            codes = unpack_fp4(data, count)
        elif bits == 6:
            codes = unpack_fp6(data, count)
        else:
            codes = np.asarray(data, np.uint8).reshape(-1)
            if codes.size != count:
                raise ValueError(f"packed data holds {codes.size} elements, shape {shape} "
                                 f"needs {count}")
        moved = [s for d, s in enumerate(shape) if d not in axes] + [shape[a] for a in axes]
        el = codes.view(np.int8 if fmt is None else fmt.dtype).reshape(moved)
        for i in reversed(range(len(axes))):
            el = np.moveaxis(el, el.ndim - len(axes) + i, axes[i])
        return cls(el, scales, kind=kind, axes=axes, block=blk, tensor_scale=ts, fmt=fmt)


# ---------------------------------------------------------------------------------------
# packed sub-byte storage: a little-endian bit stream, element i in bits [w*i, w*i + w)


def _codes_of(codes, width, name):
    arr = np.asarray(codes)
    if arr.dtype.kind not in "iu":
        if _is_softfp8(arr.dtype) and arr.dtype.itemsize == 1:
            arr = arr.view(np.uint8)
        else:
            raise TypeError(f"{name} needs integer codes (or a softfp8 array), got dtype "
                            f"{arr.dtype}")
    flat = arr.reshape(-1)
    bad = (flat < 0) | (flat >= (1 << width))
    if np.any(bad):
        raise ValueError(f"{name}: code {int(flat[np.argmax(bad)])} does not fit in {width} "
                         "bits")
    return flat.astype(np.uint8)


def _pack_bits(flat, width):
    bits = np.unpackbits(flat[:, None], axis=1, bitorder="little")[:, :width]
    return np.packbits(bits.reshape(-1), bitorder="little")


def _unpack_bits(data, count, width, name):
    arr = np.asarray(data)
    if arr.dtype != np.uint8:
        raise TypeError(f"{name} needs a uint8 array, got dtype {arr.dtype}")
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)) \
            or count < 0:
        raise ValueError(f"{name}: count must be a non-negative int, got {count!r}")
    need = -(-count * width // 8)
    flat = arr.reshape(-1)
    if flat.size != need:
        raise ValueError(f"{name}: {count} codes of {width} bits need {need} bytes, got "
                         f"{flat.size}")
    bits = np.unpackbits(flat, bitorder="little")[:count * width].reshape(count, width)
    out = np.zeros((count, 8), np.uint8)
    out[:, :width] = bits
    return np.packbits(out, axis=1, bitorder="little").reshape(-1)


def pack_fp4(codes):
    """Two 4-bit codes per byte: code 2i in the low nibble of byte i, code 2i+1 in the high
    nibble (codes taken in C order; an odd count leaves the last high nibble 0)."""
    return _pack_bits(_codes_of(codes, 4, "pack_fp4"), 4)


def unpack_fp4(data, count=None):
    """Inverse of pack_fp4: ``count`` codes (default 2 * len(data)) as uint8."""
    if count is None:
        count = 2 * np.asarray(data).size
    return _unpack_bits(data, count, 4, "unpack_fp4")


def pack_fp6(codes):
    """Four 6-bit codes per three bytes: the codes form a little-endian bit stream, code i
    in bits 6i..6i+5 (bit 0 = least significant bit of byte 0); ceil(6n / 8) bytes."""
    return _pack_bits(_codes_of(codes, 6, "pack_fp6"), 6)


def unpack_fp6(data, count=None):
    """Inverse of pack_fp6: ``count`` codes (default 4 * len(data) // 3) as uint8."""
    if count is None:
        count = 8 * np.asarray(data).size // 6
    return _unpack_bits(data, count, 6, "unpack_fp6")


def matmul(a, b, out_dtype=np.float32, accumulation=None):
    """The block-format dot product of two MX BlockArrays: a (M x K, blocked along K,
    axis 1) times b (K x N, blocked along K, axis 0), same kind family and block size.

    Each product is element_a * element_b * 2^(ea + eb) with the blocks' E8M0 scales
    2^ea, 2^eb multiplied exactly (OCP MX v1.0 §6.2: 2^-254 .. 2^254, beyond binary32),
    summed under ``accumulation`` (a ``softfp8.Accumulation``; None: the exact dot product
    rounded once into ``out_dtype``, P3109's BlockDotProduct) by the matrix engine with the
    block scales as per-block scales (``softfp8.scaled_mm``'s model, but with exact scale
    products: scaled_mm rounds sa * sb to binary32 as torch._scaled_mm does).  E8M0 has no
    subnormals: no scale raises the denormal flag (2^-127, code 0, is an ordinary scale).
    MXINT8 and NVFP4 are refused (their element or tensor scales are not powers of two:
    dequantize them, or call ``softfp8.scaled_mm`` directly); a block with the NaN scale
    (it held an infinity or a NaN) is a ValueError naming it."""
    for name, x, ax in (("a", a, 1), ("b", b, 0)):
        if not isinstance(x, BlockArray):
            raise TypeError(f"softfp8.mx.matmul: {name} must be a BlockArray, got {type(x).__name__}")
        if x.kind not in KINDS or x.kind in ("mxint8", "nvfp4"):
            raise ValueError(f"softfp8.mx.matmul: {name} has kind {x.kind!r}; only the MX float kinds "
                             f"({', '.join(k for k in KINDS if k.startswith('mxfp'))}) are supported")
        if x.ndim != 2 or x.axes != (ax,):
            raise ValueError(f"softfp8.mx.matmul: {name} must be 2-D and blocked along axis {ax} "
                             f"(the inner dimension), got shape {x.shape} blocked along {x.axis}")
        nan = np.argwhere(x.scales == E8M0_NAN)
        if nan.size:
            raise ValueError(f"softfp8.mx.matmul: {name} has the NaN scale in block {tuple(map(int, nan[0]))} "
                             "(it held an infinity or a NaN)")
    if a.block != b.block:
        raise ValueError(f"softfp8.mx.matmul: block sizes {a.block} and {b.block} differ")
    k = a.block
    sa = a.scale_values().astype(np.float32)     # powers of two 2^-127..2^127: exact
    sb = b.scale_values().astype(np.float32)
    return _gemm._scaled_mm(a.elements, b.elements, sa, sb, out_dtype, accumulation, (1, k), (k, 1),
                            True, "mx.matmul")
