"""Per-tensor scaling and loss scaling for low-precision training (docs/training.md).

``amax``, ``compute_scale`` (Transformer Engine's ``scale = fmt_max / amax / 2**margin``),
the scaled cast ``quantize`` returning a ``ScaledArray`` (codes + the float32 scale used and
its inverse), the stateful recipes ``CurrentScaling``, ``DelayedScaling`` (amax history),
Graphcore's ``Fp8Amax`` / ``Fp8CScale`` (power-of-two scaling biases), ``select_bias`` (the
exponent bias of a Tesla CFloat8 / SHP format chosen from amax) and ``LossScaler`` (dynamic
loss scaling driven by softfp8's sticky overflow / invalid flags).

Every scaled value is rounded once, from the exact product ``x * scale``, by softfp8's own
cast in the context's (or the given) rounding mode, stochastic rounding included; scales
are computed exactly and rounded once to float32.
"""
from __future__ import annotations

import contextlib
import functools
import math
import numbers
from fractions import Fraction

import numpy as np

from . import _context, _dtypes, _formats  # noqa: F401  (_dtypes: Format.dtype hooks)
from ._context import Flags
from ._formats import TeslaFamily
from ._validation import _as_int, _choice, as_format, binary32_scales

__all__ = ["amax", "compute_scale", "quantize", "ScaledArray", "CurrentScaling",
           "DelayedScaling", "fp8_amax_bias", "Fp8Amax", "Fp8CScale", "select_bias",
           "BiasSelection", "LossScaler", "LossScaleStep"]

F32_MAX = float(np.finfo(np.float32).max)
F32_MIN_SUBNORMAL = math.ldexp(1.0, -149)
_BIAS_MIN, _BIAS_MAX = -149, 127          # power-of-two scales that float32 holds
_RANGE_LIMIT = 960                        # quantize: formats within 2^-960 .. 2^960
_TINY, _HUGE = math.ldexp(1.0, -1000), math.ldexp(1.0, 1000)
_LOW24 = np.uint64((1 << 24) - 1)
_BIG_X, _SMALL_X = math.ldexp(1.0, 800), math.ldexp(1.0, -800)


# --------------------------------------------------------------------------
# exact helpers
# --------------------------------------------------------------------------

def _floor_log2(q):
    """floor(log2(q)) of a positive Fraction, exactly."""
    n, d = q.numerator, q.denominator
    e = n.bit_length() - d.bit_length()
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1
    return e


def _round_f32(q):
    """A positive Fraction rounded to nearest-even float32 (as a Python float; inf past
    float32's max, 0.0 below half its smallest subnormal)."""
    e = _floor_log2(q)
    if e > 128:
        return math.inf
    k = max(e - 23, -149)
    num, den = (q.numerator, q.denominator << k) if k >= 0 else (q.numerator << -k, q.denominator)
    m, r = divmod(num, den)
    if 2 * r > den or (2 * r == den and m & 1):
        m += 1
    v = math.ldexp(m, k) if m else 0.0
    return math.inf if v > F32_MAX else v


def _as_float64(x, what="x"):
    """x as a float64 array (exact for every softfp8 format, float16/32/64 and ints below
    2**53)."""
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind in "USVMmc":
        raise TypeError(f"{what} must be a real numeric array, got dtype {a.dtype}")
    if a.dtype.kind == "b":
        raise TypeError(f"{what} must be a real numeric array, got a bool array")
    return a.astype(np.float64)


def _margin(margin):
    """2**-margin as a Fraction (exact for integer margins; a float margin uses its float64
    power of two, as Transformer Engine's float32 code does)."""
    if isinstance(margin, (bool, np.bool_)) or not isinstance(margin, numbers.Real):
        raise TypeError(f"margin must be a real number, got {margin!r}")
    if not math.isfinite(float(margin)):
        raise ValueError(f"margin must be finite, got {margin!r}")
    if float(margin) == int(margin):
        return Fraction(1, 2 ** int(margin)) if margin >= 0 else Fraction(2 ** int(-margin))
    return Fraction(2.0 ** -float(margin))


@functools.lru_cache(maxsize=256)     # Format objects are immutable and hashable
def _fmt_max(fmt):
    m = fmt.max
    if not math.isfinite(m):
        raise ValueError(f"{fmt.name} has no finite max value usable for scaling")
    return Fraction(m)


def _nonneg(value, what):
    v = float(value)
    if v < 0:
        raise ValueError(f"{what} must be >= 0, got {value!r}")
    return v


# --------------------------------------------------------------------------
# amax and the scale
# --------------------------------------------------------------------------

def amax(x, axis=None, *, keepdims=False, nan="ignore"):
    """max(|x|) over ``axis`` (NumPy's meaning: the axes reduced), as float64.

    ``nan="ignore"`` (default) skips NaNs like the fmaxf reductions of FP8 hardware
    libraries (an all-NaN or empty slice gives 0); ``nan="propagate"`` returns NaN for a
    slice holding one.  An infinity gives inf.  The value is exact: it is one of |x|.
    """
    _choice(nan, ("ignore", "propagate"), "nan")
    a = np.abs(_as_float64(x))
    red = np.fmax if nan == "ignore" else np.maximum
    out = red.reduce(a, axis=axis, keepdims=keepdims, initial=0.0)
    return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else out


def _scale_one(a, target, pow2, eps, fallback):
    """Transformer Engine's scale of one amax value (docs/training.md)."""
    if eps > 0 and a < eps:                  # NaN compares false: left as NaN
        a = eps
    if not (math.isfinite(a) and a > 0):      # 0, inf, NaN: no information
        return fallback
    s = _round_f32(target / Fraction(a))
    if s == math.inf:
        s = F32_MAX
    elif s == 0.0:
        s = F32_MIN_SUBNORMAL
    if pow2:
        s = math.ldexp(1.0, math.frexp(s)[1] - 1)
    return s


def compute_scale(amax, fmt, margin=0, pow2=False, eps=0.0):
    """float32 scale(s) mapping ``amax`` to ``fmt.max * 2**-margin``.

    ``scale = RN_f32(fmt.max / amax / 2**margin)`` computed exactly and rounded once (as
    Transformer Engine's ``compute_scale_from_amax``): ``amax`` below ``eps`` is raised to
    ``eps``; an amax of 0, inf or NaN gives 1.0; a quotient past float32's max gives
    float32's max (one below its smallest subnormal gives that subnormal); ``pow2=True``
    keeps only the power of two of the float32 scale (its mantissa bits cleared).
    ``amax`` may be a scalar or an array (one scale per element).
    """
    fmt = as_format(fmt)
    target = _fmt_max(fmt) * _margin(margin)
    eps = _nonneg(eps, "eps")
    if not math.isfinite(eps):
        raise ValueError(f"eps must be finite, got {eps!r}")
    pow2 = bool(pow2)
    a = np.asarray(amax, dtype=np.float64)
    if np.any(a < 0):
        raise ValueError(f"amax must be >= 0, got {a[a < 0].flat[0]!r}")
    if a.ndim == 0 and not pow2:   # one amax: _scales_f32's float32 division, on scalars
        t32 = _target_f32(target)
        av = max(float(a), eps)
        a32 = np.float32(av)
        if t32 is not None and math.isfinite(av) and av > 0 and float(a32) == av and a32 > 0:
            with np.errstate(over="ignore"):
                q = t32 / a32
            return (np.float32(F32_MAX) if q == np.inf else
                    np.float32(F32_MIN_SUBNORMAL) if q == 0 else q)
    out = _scales_f32(a, target, pow2, eps)
    return out[()] if out.ndim == 0 else out


@functools.lru_cache(maxsize=256)
def _target_f32(target):
    """target (a Fraction) as a float32 if it is one exactly, else None."""
    t32 = np.float32(float(target))
    return t32 if np.isfinite(t32) and Fraction(float(t32)) == target else None


def _scales_f32(a, target, pow2, eps):
    """compute_scale's values for an array of amaxes.  Where the amax (after eps) and the
    target max * 2**-margin are float32 values, float32 division is the one rounding of
    the exact quotient (IEEE 754), so NumPy computes those; the others go through
    fractions one by one."""
    shape = a.shape
    with np.errstate(all="ignore"):
        a = np.where(a < eps, eps, a).reshape(-1)
        out = np.ones(a.shape, dtype=np.float32)           # 0, inf, NaN: 1.0
        info = np.isfinite(a) & (a > 0)
        t32 = _target_f32(target)
        slow = info
        if t32 is not None:
            a32 = a.astype(np.float32)
            fast = info & (a32.astype(np.float64) == a) & (a32 > 0)
            q = t32 / a32
            q = np.where(np.isinf(q), np.float32(F32_MAX), q)
            q = np.where(q == 0, np.float32(F32_MIN_SUBNORMAL), q)
            if pow2:
                q = np.ldexp(np.float32(1.0), np.frexp(q)[1] - 1).astype(np.float32)
            out[fast] = q[fast]
            slow = info & ~fast
    for i in np.flatnonzero(slow):
        out[i] = _scale_one(float(a[i]), target, pow2, 0.0, 1.0)
    return out.reshape(shape)


# --------------------------------------------------------------------------
# the scaled cast
# --------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)
def _check_range(fmt):
    lim = math.ldexp(1.0, _RANGE_LIMIT)
    if not (fmt.min_subnormal >= 1.0 / lim and fmt.max <= lim):
        raise ValueError(f"quantize supports formats whose values lie within 2^-{_RANGE_LIMIT}"
                         f" .. 2^{_RANGE_LIMIT}; {fmt.name} does not")


def _scaled_odd(x, s):
    """x * s (float64 arrays, s positive finite float32 values) rounded to odd at 53 bits,
    values beyond 2^+-1000 replaced by +-2^+-1000.  Rounding this once into a format of at
    most 16 bits gives the rounding of the exact product in every mode (SPEC §3)."""
    x, s = np.broadcast_arrays(x, s)
    shape = x.shape
    x, s = x.reshape(-1), s.reshape(-1)
    out = x * s                               # right for zeros, infinities and NaNs
    # exact already where x has at most 29 significant bits (float32 and narrower inputs
    # included: 29 + 24 <= 53 bits) and 2^-800 <= |x| <= 2^800; the rest goes the long way
    ax = np.abs(x)
    m = (((x.view(np.uint64) & _LOW24) != 0) | (ax > _BIG_X) | (ax < _SMALL_X)) \
        & (ax <= np.finfo(np.float64).max) & (ax != 0)
    if not m.any():
        return out.reshape(shape)
    xm, xe = np.frexp(x[m])
    sm, se = np.frexp(s[m])
    c = xm * 134217729.0                      # Veltkamp split: 26 + 26 bits
    hi = c - (c - xm)
    lo = xm - hi
    p1, p2 = hi * sm, lo * sm                 # exact (<= 50-bit products)
    p = p1 + p2                               # TwoSum: p + err == p1 + p2 exactly
    bb = p - p1
    err = (p1 - (p - bb)) + (p2 - bb)
    even = (p.view(np.uint64) & 1) == 0
    fix = (err != 0) & even
    p[fix] = np.nextafter(p[fix], np.copysign(np.inf, err[fix]))
    t = xe.astype(np.int64) + se              # |p| in [1/4, 1): value p * 2^t
    v = np.ldexp(p, np.clip(t, -1010, 1010))
    v = np.where(t < -990, np.copysign(_TINY, p), v)
    v = np.where(t > 990, np.copysign(_HUGE, p), v)
    out[m] = v
    return out.reshape(shape)


def _as_scale(scale, shape):
    s32 = binary32_scales(scale, "scale")     # nearest-even float32, finite and positive
    fits = s32.ndim <= len(shape) and all(a in (1, b) for a, b in zip(s32.shape[::-1],
                                                                      shape[::-1]))
    if not fits:
        raise ValueError(f"scale of shape {s32.shape} does not broadcast to x's shape {shape}")
    return s32


def _axes(axis, ndim):
    """(kept axes, reduced axes) for a channel axis (None: per tensor)."""
    if axis is None:
        return (), tuple(range(ndim))
    keep = axis if isinstance(axis, tuple) else (axis,)
    norm = []
    for a in keep:
        a = _as_int(a, "axis")
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        norm.append(a % ndim)
    if len(set(norm)) != len(norm):
        raise ValueError(f"repeated axis in {axis!r}")
    return tuple(norm), tuple(i for i in range(ndim) if i not in norm)


@contextlib.contextmanager
def _rounding_env(rounding, seed, saturate):
    with contextlib.ExitStack() as stack:
        if rounding is not None or seed is not None:
            mode = rounding if rounding is not None else _context.get_rounding()
            stack.enter_context(_context.rounding(mode, seed=seed))
        if saturate is not None:
            stack.enter_context(_context.saturation(saturate))
        stack.enter_context(np.errstate(all="ignore"))
        yield


class ScaledArray:
    """Codes of ``x * scale`` in a softfp8 format plus the float32 scale used.

    ``codes``: array of ``fmt.dtype``; ``scale`` / ``scale_inv``: float32 (a scalar per
    tensor, else an array of x's rank, of size 1 along the reduced axes, so it broadcasts
    against ``codes``); ``scale_inv = RN_f32(1/scale)``; ``amax``: the amax the scale came
    from (None when the scale was given); ``axis``: the channel axes (None per tensor).
    """

    __slots__ = ("codes", "scale", "scale_inv", "fmt", "axis", "amax", "bias")

    def __init__(self, codes, scale, fmt, axis=None, amax=None, bias=None):
        self.codes = codes
        self.scale = scale
        self.scale_inv = np.float32(1.0) / scale
        self.fmt = fmt
        self.axis = axis
        self.amax = amax
        self.bias = bias

    shape = property(lambda self: self.codes.shape)
    dtype = property(lambda self: self.codes.dtype)

    def dequantize(self, dtype=np.float32):
        """codes / scale rounded once (nearest even) to float32 or float64."""
        dt = np.dtype(dtype)
        if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dequantize supports float32 and float64, got {dtype!r}")
        with np.errstate(all="ignore"):
            # float64 division rounds once; to float32 the second rounding is innocuous
            # (53 >= 2*24 + 2 and both operands are float32 values: Figueroa 1995)
            v = self.codes.astype(np.float64) / np.asarray(self.scale, dtype=np.float64)
        return v.astype(dt)

    def __repr__(self):
        return (f"ScaledArray(fmt={self.fmt.name}, shape={self.shape}, scale={self.scale!r}, "
                f"axis={self.axis!r})")


def quantize(x, fmt, scale=None, *, axis=None, margin=0, pow2=False, eps=0.0,
             rounding=None, seed=None, saturate=True):
    """Scaled cast: codes of ``x * scale`` in ``fmt``, with the scale used.

    ``scale=None`` computes it from ``amax`` (``compute_scale(amax, fmt, margin, pow2,
    eps)``), per tensor (``axis=None``) or per channel: ``axis`` (an int or a tuple) names
    the axes that keep one scale per index, as ``torch.quantize_per_channel``; amax is
    reduced over the others.  A given ``scale`` (positive, rounded to nearest float32,
    which must be finite and non-zero) must broadcast to x's shape.  The exact product is rounded once by softfp8's cast:
    ``rounding`` / ``seed`` as ``softfp8.rounding`` (None: the context's), ``saturate``
    (default True, as FP8 training casts saturate; None: the format's default).  The cast
    raises softfp8's sticky flags as any cast does.
    """
    if (scale is None and axis is None and type(margin) is int and margin == 0 and pow2 is False
            and rounding is None and seed is None and saturate is True and isinstance(eps, float)
            and eps == 0.0
            and type(x) is np.ndarray and x.dtype in _NARROW):
        out = _quantize_tensor(x, fmt)
        if out is not None:
            return out
    fmt = as_format(fmt)
    _check_range(fmt)
    xf = _as_float64(x)
    keep, red = _axes(axis, xf.ndim)
    a = None
    if scale is None:
        a = amax(xf, axis=red, keepdims=bool(keep))
        s = compute_scale(a, fmt, margin=margin, pow2=pow2, eps=eps)
    else:
        s = _as_scale(scale, xf.shape)
    narrow = getattr(x, "dtype", None) in (np.float32, np.float16)
    return _cast(xf, fmt, s, rounding, seed, saturate, axis=axis, amax=a, narrow=narrow)


_NARROW = (np.dtype(np.float32), np.dtype(np.float16))


@functools.lru_cache(maxsize=256)
def _tensor_target(fmt):
    """(the Format, fmt.max as a float32 if it is one exactly, else None) for
    _quantize_tensor (fmt as quantize accepts it; Format objects and dtypes hash)."""
    f = as_format(fmt)
    _check_range(f)
    return f, _target_f32(_fmt_max(f))


def _quantize_tensor(x, fmt):
    """quantize(x, fmt) with every option at its default, x a float32 / float16 array: the
    same amax (|x|'s max, NaNs ignored, exact in x's own type), compute_scale's scalar
    float32 division and _cast's exact product and saturating cast, without the general
    path's float64 copies and option handling.  None where that path must decide (fmt not
    hashable, fmt.max not a float32, an amax of 0, inf or NaN)."""
    try:
        f, t32 = _tensor_target(fmt)
    except TypeError:                          # unhashable fmt: the general path
        return None
    if t32 is None:
        return None
    a32 = np.fmax.reduce(np.abs(x), axis=None, initial=0).astype(np.float32)
    if not (np.isfinite(a32) and a32 > 0):
        return None
    with np.errstate(over="ignore"):
        q = t32 / a32
    s = (np.float32(F32_MAX) if q == np.inf else
         np.float32(F32_MIN_SUBNORMAL) if q == 0 else q)
    y = np.multiply(x, np.float64(s), dtype=np.float64)   # exact: <= 24 + 24 bits
    with _context.saturation(True), np.errstate(all="ignore"):
        codes = y.astype(f.dtype)
    return ScaledArray(codes, s, f, axis=None, amax=np.float64(a32))


def _cast(xf, fmt, s, rounding, seed, saturate, axis=None, amax=None, bias=None, narrow=False):
    # narrow: xf holds float32 / float16 values, whose products with a float32 scale are
    # exact binary64 numbers (at most 48 bits, within 2^-298 .. 2^256)
    s64 = np.asarray(s, dtype=np.float64)
    y = xf * s64 if narrow else _scaled_odd(xf, s64)
    with _rounding_env(rounding, seed, saturate):
        codes = y.astype(fmt.dtype)
    s = np.float32(s) if np.ndim(s) == 0 else s
    return ScaledArray(codes, s, fmt, axis=axis, amax=amax, bias=bias)


# --------------------------------------------------------------------------
# recipes
# --------------------------------------------------------------------------

def _default_fmt(fmt):
    return as_format(_formats.PRESETS["e4m3"] if fmt is None else fmt)


class CurrentScaling:
    """Just-in-time scaling: each ``quantize(x)`` computes the scale from x's own amax
    (Transformer Engine's ``Float8CurrentScaling``)."""

    def __init__(self, fmt=None, *, margin=0, pow2=False, eps=0.0, axis=None):
        self.fmt = _default_fmt(fmt)
        compute_scale(1.0, self.fmt, margin, pow2, eps)       # validate the options
        self.margin, self.pow2, self.eps, self.axis = margin, bool(pow2), eps, axis
        self.scale = None

    def quantize(self, x, *, rounding=None, seed=None, saturate=True):
        out = quantize(x, self.fmt, axis=self.axis, margin=self.margin, pow2=self.pow2,
                       eps=self.eps, rounding=rounding, seed=seed, saturate=saturate)
        self.scale = out.scale
        return out

    def __repr__(self):
        return (f"CurrentScaling(fmt={self.fmt.name}, margin={self.margin}, "
                f"pow2={self.pow2}, eps={self.eps}, axis={self.axis!r})")


class DelayedScaling:
    """Transformer Engine's delayed scaling of one tensor.

    State: ``amax_history`` (length ``amax_history_len``; index 0 is the slot of the
    current step) and ``scale`` (float32, 1.0 at first).  ``quantize(x)`` casts with the
    current scale, records amax(x) in slot 0 (max with what the step already recorded) and,
    unless ``update=False``, calls ``update()``: the amax used is the max of the whole
    history (``"max"``, NaN entries skipped) or slot 0 (``"most_recent"``); the history is
    rolled by one (slot 0 goes to the end) and slot 0 cleared; the new scale is
    ``RN_f32(fmt.max * 2**-margin / amax)``, float32's max if that overflows, and the old
    scale when the amax is 0, inf or NaN.  So the scale used at step t comes from the amaxes
    of steps t-L .. t-1 only.
    """

    def __init__(self, margin=0, amax_history_len=1024, amax_compute_algo="max", fmt=None):
        self.fmt = _default_fmt(fmt)
        self._target = _fmt_max(self.fmt) * _margin(margin)
        n = _as_int(amax_history_len, "amax_history_len")
        if n < 1:
            raise ValueError(f"amax_history_len must be >= 1, got {amax_history_len!r}")
        self.amax_compute_algo = _choice(amax_compute_algo, ("max", "most_recent"),
                                         "amax_compute_algo")
        self.margin = margin
        self.amax_history_len = n
        self._history = np.zeros(n, dtype=np.float64)
        self._scale = 1.0

    scale = property(lambda self: np.float32(self._scale), doc="float32 scale of the next cast")
    scale_inv = property(lambda self: np.float32(1.0) / np.float32(self._scale))

    @property
    def amax_history(self):
        """A copy of the history (index 0: the current step's slot)."""
        return self._history.copy()

    def record(self, amax_value):
        """Record an amax for the current step (slot 0 keeps the max, NaN skipped)."""
        a = _nonneg(amax_value, "amax")
        self._history[0] = np.fmax(self._history[0], a)

    def update(self):
        """End of step: compute the next scale from the history, then roll it."""
        h = self._history
        a = float(np.fmax.reduce(h)) if self.amax_compute_algo == "max" else float(h[0])
        self._history = np.roll(h, -1)
        self._history[0] = 0.0
        self._scale = _scale_one(a, self._target, False, 0.0, self._scale)
        return self.scale

    def quantize(self, x, *, update=True, rounding=None, seed=None, saturate=True):
        # a float32 / float16 array is read in its own dtype: its amax (exact: one of |x|,
        # NaN skipped as amax does) and its products with the float32 scale, exact in
        # binary64 (_cast's narrow product), without a float64 copy
        narrow = isinstance(x, np.ndarray) and x.dtype in (np.float32, np.float16)
        xf = x if narrow else _as_float64(x)
        a = np.float64(np.fmax.reduce(np.abs(x), axis=None, initial=0)) if narrow else amax(xf)
        out = _cast(xf, self.fmt, np.float32(self._scale), rounding, seed, saturate, amax=a,
                    narrow=narrow)
        self.record(a)
        if update:
            self.update()
        return out

    def __repr__(self):
        return (f"DelayedScaling(margin={self.margin}, amax_history_len="
                f"{self.amax_history_len}, amax_compute_algo={self.amax_compute_algo!r}, "
                f"fmt={self.fmt.name})")


def _bias_one(a, maxnum, margin):
    if not (math.isfinite(a) and a > 0):
        return 0
    b = _floor_log2(maxnum / Fraction(a)) - margin
    return min(max(b, _BIAS_MIN), _BIAS_MAX)


def fp8_amax_bias(amax, fmt, margin=0):
    """Graphcore's FP8-AMAX scaling bias (Perez et al. 2023, §2.3 eq. (3) and Figure 1's
    ``compute_bias``): ``floor(log2(fmt.max / amax)) - margin``, computed exactly; 0 for an
    amax of 0, inf or NaN; clamped to -149 .. 127 (2**bias a float32).  Scalar or array."""
    fmt = as_format(fmt)
    maxnum = _fmt_max(fmt)
    margin = _as_int(margin, "margin")
    a = np.asarray(amax, dtype=np.float64)
    if np.any(a < 0):
        raise ValueError(f"amax must be >= 0, got {a[a < 0].flat[0]!r}")
    out = np.array([_bias_one(float(v), maxnum, margin) for v in a.flat],
                   dtype=np.int64).reshape(a.shape)
    return int(out) if out.ndim == 0 else out


def _pow2_scale(bias):
    return np.ldexp(np.float32(1.0), np.asarray(bias, dtype=np.int32)).astype(np.float32)


class Fp8Amax:
    """Graphcore's FP8-AMAX: per tensor (or per channel with ``axis``) and per call, scale
    by ``2**fp8_amax_bias(amax(x), fmt, margin)``."""

    def __init__(self, fmt=None, *, margin=0, axis=None):
        self.fmt = _default_fmt(fmt)
        self.margin = _as_int(margin, "margin")
        self.axis = axis
        self.bias = None

    def quantize(self, x, *, rounding=None, seed=None, saturate=True):
        xf = _as_float64(x)
        keep, red = _axes(self.axis, xf.ndim)
        a = amax(xf, axis=red, keepdims=bool(keep))
        self.bias = fp8_amax_bias(a, self.fmt, self.margin)
        return _cast(xf, self.fmt, _pow2_scale(self.bias), rounding, seed, saturate,
                     axis=self.axis, amax=a, bias=self.bias)

    def __repr__(self):
        return f"Fp8Amax(fmt={self.fmt.name}, margin={self.margin}, axis={self.axis!r})"


class Fp8CScale:
    """Graphcore's FP8-CSCALE: one constant scaling bias for every tensor and step
    (scale ``2**bias``)."""

    def __init__(self, bias, fmt=None):
        b = _as_int(bias, "bias")
        if not _BIAS_MIN <= b <= _BIAS_MAX:
            raise ValueError(f"bias must be in {_BIAS_MIN}..{_BIAS_MAX} (2**bias a float32), "
                             f"got {bias!r}")
        self.bias = b
        self.fmt = _default_fmt(fmt)

    def quantize(self, x, *, rounding=None, seed=None, saturate=True):
        return _cast(_as_float64(x), self.fmt, _pow2_scale(self.bias), rounding, seed,
                     saturate, bias=self.bias)

    def __repr__(self):
        return f"Fp8CScale(bias={self.bias}, fmt={self.fmt.name})"


def _family(family):
    if isinstance(family, TeslaFamily):
        return family
    if isinstance(family, str):
        fam = _formats.FAMILIES.get(family)
        if fam is not None:
            return fam
    raise ValueError(f"family must be a bias-parametric family "
                     f"({', '.join(_formats.FAMILIES)}), got {family!r}")


def select_bias(amax, family, *, margin=0, subnormals="tesla"):
    """The format of a bias-parametric family (``cfloat8_143``, ``cfloat8_152``, ``shp``)
    whose exponent bias is the largest in 0..63 with ``amax * 2**margin <= max`` (the
    finest grid that still holds amax: Tesla's configurable bias, IBM HFP8's choice of the
    bias from the tensor's range).  Bias 0 when even that max is too small (the formats
    saturate), 63 for an all-zero tensor; a NaN amax is a ValueError."""
    fam = _family(family)
    a = float(amax)
    if math.isnan(a):
        raise ValueError(f"amax must not be NaN, got {amax!r}")
    if a < 0:
        raise ValueError(f"amax must be >= 0, got {amax!r}")
    need = Fraction(a) / _margin(_as_int(margin, "margin")) if math.isfinite(a) else None
    for b in range(63, -1, -1):
        f = fam(bias=b, subnormals=subnormals)
        if need is not None and Fraction(f.max) >= need:
            return f
    return fam(bias=0, subnormals=subnormals)


class BiasSelection:
    """Tesla / IBM HFP8 style: each ``quantize(x)`` casts x unscaled into the family's
    format whose bias ``select_bias(amax(x), family, margin=...)`` picks."""

    def __init__(self, family, *, margin=0, subnormals="tesla"):
        self.family = _family(family)
        self.margin = _as_int(margin, "margin")
        self.subnormals = _choice(subnormals, ("tesla", "ieee"), "subnormals")
        self.fmt = None

    def quantize(self, x, *, rounding=None, seed=None, saturate=True):
        xf = _as_float64(x)
        a = amax(xf)
        self.fmt = select_bias(a, self.family, margin=self.margin, subnormals=self.subnormals)
        return _cast(xf, self.fmt, np.float32(1.0), rounding, seed, saturate, amax=a,
                     bias=self.fmt.bias)


# --------------------------------------------------------------------------
# dynamic loss scaling on flags
# --------------------------------------------------------------------------

class LossScaleStep:
    """What one ``LossScaler.step`` saw: ``scale`` used, ``flags`` raised in the step,
    ``skipped`` (an overflow / invalid flag was raised: do not apply the update), ``value``
    (what ``step(fn)``'s fn returned)."""

    __slots__ = ("scale", "flags", "skipped", "value", "_extra")

    def __init__(self, scale):
        self.scale = scale
        self.flags = Flags(0)
        self.skipped = False
        self.value = None
        self._extra = Flags(0)

    def check(self, *arrays):
        """Count non-finite values of plain (non-softfp8) arrays as an invalid flag of the
        step, e.g. float32 gradients computed by NumPy.  Returns True if any was found."""
        bad = any(not np.all(np.isfinite(_as_float64(a, "array"))) for a in arrays)
        if bad:
            self._extra |= Flags.INVALID
        return bad

    def __repr__(self):
        return (f"LossScaleStep(scale={self.scale}, flags={self.flags!r}, "
                f"skipped={self.skipped})")


class LossScaler:
    """Dynamic loss scaling driven by softfp8's sticky flags.

    Defaults as PyTorch's GradScaler: ``init_scale=2**16``, ``growth_factor=2``,
    ``backoff_factor=0.5``, ``growth_interval=2000``.  A step in which any flag of
    ``flags`` (default OVERFLOW | INVALID) is raised is skipped and the scale multiplied by
    ``backoff_factor``; after ``growth_interval`` consecutive clean steps the scale is
    multiplied by ``growth_factor`` (never past float32's max).

        with scaler.step() as st:          # the step's flags are collected
            grads = backward(loss * scaler.scale)
        if not st.skipped:
            apply(grads / st.scale)

    or ``st = scaler.step(fn, *args)`` (fn runs inside the block; ``st.value`` its result).
    """

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, *, flags=Flags.OVERFLOW | Flags.INVALID):
        self.scale = float(init_scale)
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"init_scale must be positive and finite, got {init_scale!r}")
        self.growth_factor = float(growth_factor)
        if not (math.isfinite(self.growth_factor) and self.growth_factor > 1):
            raise ValueError(f"growth_factor must be > 1, got {growth_factor!r}")
        self.backoff_factor = float(backoff_factor)
        if not 0 < self.backoff_factor < 1:
            raise ValueError(f"backoff_factor must be in (0, 1), got {backoff_factor!r}")
        self.growth_interval = _as_int(growth_interval, "growth_interval")
        if self.growth_interval < 1:
            raise ValueError(f"growth_interval must be >= 1, got {growth_interval!r}")
        if not isinstance(flags, (int, Flags)) or isinstance(flags, bool) or not 0 < flags < 64:
            raise ValueError(f"flags must be a non-empty softfp8.Flags, got {flags!r}")
        self.flags = Flags(flags)
        self.growth_tracker = 0
        self.steps = 0
        self.skipped_steps = 0

    def update(self, found_inf):
        """Apply one step's outcome (True: overflow / invalid seen) to the scale."""
        self.steps += 1
        if found_inf:
            self.skipped_steps += 1
            self.scale *= self.backoff_factor
            self.growth_tracker = 0
            return
        self.growth_tracker += 1
        if self.growth_tracker == self.growth_interval:
            self.growth_tracker = 0
            grown = self.scale * self.growth_factor
            if grown <= F32_MAX:
                self.scale = grown

    @contextlib.contextmanager
    def _block(self):
        st = LossScaleStep(self.scale)
        with _context.collect_flags() as col:
            yield st
        st.flags = col.flags | st._extra
        st.skipped = bool(st.flags & self.flags)
        self.update(st.skipped)

    def step(self, fn=None, /, *args, **kwargs):
        """``step()``: a context manager yielding the ``LossScaleStep``; ``step(fn, ...)``:
        run fn(*args, **kwargs) as that block and return the ``LossScaleStep``.  If the
        block raises, the exception propagates and the scaler is unchanged."""
        if fn is None:
            return self._block()
        if not callable(fn):
            raise TypeError(f"step() takes a callable, got {fn!r}")
        with self._block() as st:
            st.value = fn(*args, **kwargs)
        return st

    def __repr__(self):
        return (f"LossScaler(scale={self.scale}, growth_tracker={self.growth_tracker}, "
                f"steps={self.steps}, skipped_steps={self.skipped_steps})")
