"""IEEE P3109 formats and projection (docs/semantics.md, section "IEEE P3109").

``format(k, p, signed=True, domain="finite")`` is the P3109 format
Binary{k}p{p}{s|u}{e|f} as a softfp8 :class:`~softfp8.Format` (a NumPy dtype like
every format); ``project(x, fmt, ...)`` is the report's projection of real values
(float16/32/64 arrays or arrays of any softfp8 format) into it with an explicit
rounding mode and saturation mode.

Projection runs through softfp8's exact core: one conversion rounds each element
once (``softfp8.bits.convert``), its per-element overflow flag and the input's class
then decide what the saturation mode makes of overflow, infinities and negative values
in unsigned formats.  The stochastic variants map onto the core's stochastic rule
(docs/semantics.md): StochasticA(n, r) *is* softfp8's ``stochastic`` rounding with
N = n random bits R = r; StochasticB(n, r) is the same rule with N = n + 1 and
R = 2r + 1; StochasticC(n, r) equals StochasticB except on the exact midpoints of its
n-bit grid, where it truncates when r is odd: those elements are found exactly from
the input's significand and exponent and take the core's toward-zero result.
"""
from __future__ import annotations

import numpy as np

from . import _formats, bits
from ._context import Flags
from ._dtypes import format_of
from ._validation import _as_int, _choice

__all__ = ["format", "project", "ROUNDING_MODES", "SATURATION_MODES"]

# P3109 rounding-mode names -> softfp8's (the softfp8 names are accepted too)
ROUNDING_MODES = {
    "TowardZero": "toward_zero",
    "TowardNegative": "downward",
    "TowardPositive": "upward",
    "NearestTiesToEven": "nearest_even",
    "NearestTiesToAway": "nearest_away",
    "ToOdd": "to_odd",
}
SATURATION_MODES = ("SatFinite", "SatPropagate", "SatNone")
_STOCHASTIC = ("A", "B", "C")


def format(k, p, signed=True, domain="finite"):
    """The P3109 format Binary{k}p{p}{s|u}{e|f}: width k (3..15 bits), precision p
    (1..k-1 signed, 1..k unsigned), ``domain`` "finite" (no infinities) or
    "extended" (+-inf at the extreme codes).  Named as the report names it, in lower
    case ("binary8p4se"); the same object for the same arguments, and
    ``softfp8.lookup("binary8p4se")`` returns it too."""
    return _formats.p3109_format(k, p, signed=signed, domain=domain)


def _rounding(rounding, sr):
    """(softfp8 mode, stochastic variant or None)."""
    if sr is not None:
        _choice(sr, _STOCHASTIC, "sr")
        if rounding is not None:
            raise ValueError(f"give either rounding= or sr=, not both (rounding={rounding!r}, "
                             f"sr={sr!r})")
        return "stochastic", sr
    if rounding is None:
        return "nearest_even", None
    if isinstance(rounding, str) and rounding.startswith("Stochastic") and rounding[10:] in _STOCHASTIC:
        return "stochastic", rounding[10:]
    if isinstance(rounding, str) and rounding in ROUNDING_MODES:
        return ROUNDING_MODES[rounding], None
    if isinstance(rounding, str) and rounding in ROUNDING_MODES.values():
        return rounding, None
    raise ValueError(f"unknown rounding {rounding!r}: expected one of "
                     f"{', '.join(ROUNDING_MODES)}, StochasticA/B/C (or sr='A'/'B'/'C'), or "
                     f"softfp8's names {', '.join(ROUNDING_MODES.values())}")


def _source(x):
    """(codes or float64 values to convert, the source endpoint for bits.convert)."""
    fmt = format_of(getattr(x, "dtype", None)) if hasattr(x, "dtype") else None
    if fmt is not None:
        return np.asarray(x).view(fmt.storage), fmt
    arr = np.asarray(x)
    if arr.dtype.kind in "biu":
        f = arr.astype(np.float64)
        back = f.astype(arr.dtype) if arr.dtype.kind != "b" else f.astype(bool)
        if not np.array_equal(back, arr) or (arr.dtype.kind in "iu" and arr.size and
                                             np.abs(f).max() > 2.0 ** 53):
            raise ValueError("integer input has values float64 cannot hold exactly; "
                             "convert it to floats first")
        arr = f
    if arr.dtype.kind != "f" or arr.dtype.itemsize > 8:
        raise TypeError(f"project needs float16/float32/float64 values or a softfp8 array, "
                        f"got dtype {arr.dtype}")
    return arr.astype(np.float64), np.float64


def _classes(codes, src):
    """(nan, +inf, -inf, negative) masks of the input."""
    if src is np.float64:
        v = codes
    else:  # softfp8 format: its class via an exact, non-saturating toward-zero decode
        v, _ = bits.convert(codes, src, np.float64, rounding="toward_zero", saturate=False)
    with np.errstate(invalid="ignore"):
        return np.isnan(v), v == np.inf, v == -np.inf, np.signbit(v) & ~np.isnan(v)


def _parts(codes, src):
    """Exact (sig, exp) int64 arrays with |x| = sig * 2^exp (sig = 0 for zero, inf
    and NaN)."""
    if src is np.float64:
        finite = np.isfinite(codes)
        m, e = np.frexp(np.where(finite, np.abs(codes), 0.0))
        sig = np.ldexp(m, 53).astype(np.int64)
        return sig, e.astype(np.int64) - 53
    c = codes.astype(np.int64)
    mag = c & ((1 << (src.bits - 1)) - 1) if src.signed else c
    M = src.man_bits
    field, mant = mag >> M, mag & ((1 << M) - 1)
    sub_exp = {"ieee": 1 - src.bias, "tesla": -src.bias, "flush": None}[src.subnormals]
    normal = field > 0
    sig = np.where(normal, mant | (1 << M), mant if sub_exp is not None else 0)
    exp = np.where(normal, field - src.bias - M, (sub_exp or 0) - M)
    nan, pinf, ninf, _ = _classes(codes, src)
    return np.where(nan | pinf | ninf, 0, sig).astype(np.int64), exp.astype(np.int64)


def _midpoints(codes, src, fmt, n, r):
    """StochasticC's exceptions: |x| / 2^q has fraction nu with nu * 2^(n+1) = 2T - 1
    exactly, T = 2^n - r odd, where q = max(floor(log2|x|), 1 - bias) - p + 1 is the
    quantum of fmt at x (p = man_bits + 1)."""
    sig, exp = _parts(codes, src)
    nz = sig != 0
    s1 = np.where(nz, sig, 1)
    low = s1 & -s1  # lowest set bit (a power of two below 2^53: log2 is exact)
    tz = np.log2(low.astype(np.float64)).astype(np.int64)
    odd, e_odd = s1 >> tz, exp + tz
    flog2 = exp + np.floor(np.log2(s1.astype(np.float64))).astype(np.int64)
    # correct the float log2 near powers of two (s1 < 2^53)
    flog2 = np.where((s1 >> (flog2 - exp).clip(0, 62)) == 0, flog2 - 1, flog2)
    flog2 = np.where((s1 >> (flog2 - exp + 1).clip(0, 62)) > 0, flog2 + 1, flog2)
    q = np.maximum(flog2, 1 - fmt.bias) - (fmt.man_bits + 1) + 1
    on_grid = nz & (e_odd + n + 1 - q == 0)
    j = odd & ((1 << (n + 1)) - 1)         # nu * 2^(n+1), an odd integer on the grid
    T = (1 << n) - r
    return on_grid & (j == 2 * T - 1) & ((T & 1) == 1)


def _random(shape, n, random_bits, seed):
    if random_bits is not None:
        rb = np.asarray(random_bits)
        if rb.dtype.kind not in "ui":
            raise TypeError(f"random_bits must be an integer array, got dtype {rb.dtype}")
        if rb.size and (rb.min() < 0 or rb.max() >= (1 << n)):
            bad = rb.min() if rb.min() < 0 else rb.max()
            raise ValueError(f"random_bits values must lie in 0..2**{n}-1 (n = sr_bits = {n}), "
                             f"got {int(bad)}")
        try:
            return np.broadcast_to(rb, shape).astype(np.int64)
        except ValueError:
            raise ValueError(f"random_bits of shape {rb.shape} does not broadcast to the input "
                             f"shape {shape}") from None
    if seed is not None:
        seed = _as_int(seed, "seed")
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return np.random.default_rng(seed).integers(0, 1 << n, size=shape, dtype=np.int64)


def project(x, fmt, rounding=None, saturation="SatFinite", *, sr=None, sr_bits=None,
            random_bits=None, seed=None):
    """P3109 projection of x into the P3109 (or any softfp8) format ``fmt``.

    x: float16/32/64 values or an array of a softfp8 format (converted exactly).
    rounding: "NearestTiesToEven" (default), "NearestTiesToAway", "TowardZero",
    "TowardPositive", "TowardNegative", "ToOdd" (or softfp8's names), or
    "StochasticA"/"StochasticB"/"StochasticC" (the same as ``sr=``).
    saturation: "SatFinite" (overflow and infinities to the largest finite value),
    "SatPropagate" (finite overflow saturates, infinities stay infinite where fmt has
    them), "SatNone" (overflow follows the rounding mode: toward the finite range for
    TowardZero and the directed mode pointing inwards, infinity otherwise, NaN in the
    finite domain).
    sr: "A", "B" or "C": stochastic rounding with n = ``sr_bits`` random bits (1..32
    for A, 1..31 for B and C; default 8) and the per-element random integers
    ``random_bits`` (0 <= r < 2^n, broadcast to x's shape) or, without them, drawn from
    ``numpy.random.default_rng(seed)``.

    Returns an array of fmt's dtype with x's shape.  The report defines no flags: the
    softfp8 context's sticky flags are not touched.
    """
    fmt = _formats.as_format(fmt, "fmt")
    mode, variant = _rounding(rounding, sr)
    _choice(saturation, SATURATION_MODES, "saturation")
    if variant is None and (sr_bits is not None or random_bits is not None or seed is not None):
        raise ValueError("sr_bits=, random_bits= and seed= apply to stochastic rounding only "
                         "(sr='A'/'B'/'C')")
    codes, src = _source(x)
    shape = codes.shape
    kw = {}
    if variant is not None:
        n = 8 if sr_bits is None else _as_int(sr_bits, "sr_bits")
        top = 32 if variant == "A" else 31
        if not 1 <= n <= top:
            raise ValueError(f"sr_bits must be between 1 and {top} for Stochastic{variant}, "
                             f"got {sr_bits!r}")
        r = _random(shape, n, random_bits, seed)
        if variant == "A":
            kw = {"sr_bits": n, "random_bits": r.astype(np.uint32)}
        else:
            kw = {"sr_bits": n + 1, "random_bits": (2 * r + 1).astype(np.uint32)}
    sat = saturation != "SatNone"
    out, fl = bits.convert(codes, src, fmt, rounding=mode, saturate=sat, **kw)
    out = np.array(out, dtype=fmt.storage, copy=True).reshape(shape)
    fl = np.asarray(fl).reshape(shape)
    if variant == "C":
        mid = _midpoints(codes, src, fmt, n, r)
        if mid.any():
            tz, tfl = bits.convert(codes, src, fmt, rounding="toward_zero", saturate=sat)
            out = np.where(mid, np.asarray(tz).reshape(shape), out).astype(fmt.storage)
            fl = np.where(mid, np.asarray(tfl).reshape(shape), fl)
    _saturate(out, fl, codes, src, fmt, mode, saturation)
    return out.view(fmt.dtype)


def _saturate(out, fl, codes, src, fmt, mode, saturation):
    """Apply the saturation mode to the core's result in place: the core rounded once
    (saturating for SatFinite / SatPropagate); this sets what the report's Saturate
    step decides differently: infinities under SatPropagate, negative values of
    unsigned formats (the core's NaN) and overflow under SatNone."""
    nan, pinf, ninf, neg = _classes(codes, src)
    sp = fmt._special()
    mx, nan_code = sp["max"], sp["default_nan"]
    sign = (1 << (fmt.bits - 1)) if fmt.signed else 0
    extended = fmt.specials in ("ieee", "p3109")
    inf_code = None
    if extended:
        inf_code = int(bits.convert(np.array([np.inf]), np.float64, fmt, rounding="nearest_even",
                                    saturate=False)[0][0])
    if saturation == "SatPropagate" and extended:
        out[pinf] = inf_code
        if fmt.signed:
            out[ninf] = inf_code | sign
    if not fmt.signed:
        # a negative value rounded to a negative number: m_lo = 0 where the report
        # saturates (SatFinite, SatPropagate; SatNone with TowardZero / TowardPositive)
        to_zero = neg & ~nan & (out == nan_code)
        if saturation == "SatNone":
            to_zero &= ~ninf & (mode in ("toward_zero", "upward"))
        out[to_zero] = 0
    if saturation == "SatNone":
        over = (fl & int(Flags.OVERFLOW)) != 0
        inward = (mode == "toward_zero") | ((mode == "downward") & ~neg) | ((mode == "upward") & neg)
        outward = over & ~inward
        if extended:
            out[outward] = np.where(neg[outward], inf_code | sign, inf_code)
        else:
            out[outward] = nan_code
        to_max = over & inward
        out[to_max] = np.where(neg[to_max], mx | sign, mx)
