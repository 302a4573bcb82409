"""IEEE P3109 formats and projection (docs/semantics.md, section "IEEE P3109").

``format(k, p, signed=True, domain="finite")`` is the P3109 format
Binary{k}p{p}{s|u}{e|f} as a softfp8 :class:`~softfp8.Format` (a NumPy dtype like
every format); ``project(x, fmt, ...)`` is the report's projection of real values
(float16/32/64 arrays or arrays of any softfp8 format) into it with an explicit
rounding mode and saturation mode.

Everything numeric runs in C: ``project`` is ``sfp8_p3109_project_value`` per element
(the input's exact value rounded once by the core, then the report's Saturate),
``apply`` is ``sfp8_p3109_apply`` (core_p3109.c: the operation's row of the table,
exact and rounded once, then the report's projection and special values; the
companions SFP8_P3109 of softfp8/_core/ops.def name the rows), and the block
operations of clause 5 are core_p3109_block.c (exact, one rounding); this module
checks arguments and maps names.  The stochastic variants map onto the core's
stochastic rule (docs/semantics.md): StochasticA(n, r) *is* softfp8's ``stochastic``
rounding with N = n random bits R = r; StochasticB(n, r) is the same rule with N = n +
1 and R = 2r + 1; StochasticC(n, r) equals StochasticB except on the exact midpoints
of its n-bit grid, where it truncates when r is odd: those elements are found exactly
from the input's significand and exponent and are rounded toward zero.
"""
from __future__ import annotations

import numpy as np

from . import _ext, _formats, bits
from ._dtypes import format_of
from ._validation import _as_int, _choice

__all__ = ["format", "project", "apply", "OPERATIONS", "format_info", "round_of", "sat_of",
           "convert_to_block", "convert_from_block", "convert_to_block_max_abs_finite",
           "block_reduce_add", "block_reduce_multiply", "block_dot_product", "block_op", "scaled_op",
           "ROUNDING_MODES", "SATURATION_MODES"]

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
    words = None
    n = 0
    if variant is not None:
        n = 8 if sr_bits is None else _as_int(sr_bits, "sr_bits")
        top = 32 if variant == "A" else 31
        if not 1 <= n <= top:
            raise ValueError(f"sr_bits must be between 1 and {top} for Stochastic{variant}, "
                             f"got {sr_bits!r}")
        r = _random(shape, n, random_bits, seed)
        words = (r if variant == "A" else 2 * r + 1).astype(np.uint32).reshape(-1)
    nan, pinf, ninf, _ = _classes(codes, src)
    sig, exp = _parts(codes, src)
    kind = np.where(nan, 2, np.where(pinf | ninf, 1, 0)).astype(np.uint8).reshape(-1)
    if src is np.float64:   # -0 keeps its sign (a signed format's -0)
        sign = np.signbit(codes).astype(np.uint8).reshape(-1) & (kind != 2)
    else:
        sign = np.asarray(bits.signbit(src, codes.reshape(-1))).astype(np.uint8) & (kind != 2)
    args = (kind, sign, sig.astype(np.uint64).reshape(-1), exp.astype(np.int64).reshape(-1))
    out = np.empty(kind.size, dtype=fmt.storage)
    sbits = None if variant is None else (n if variant == "A" else n + 1)
    _ext.p3109_project_values(fmt.params, _env_of(fmt, mode, sbits), words, *args, out,
                              SATURATION_MODES.index(saturation))
    if variant == "C":   # the midpoints of the n-bit grid whose r is odd: toward zero
        mid = _midpoints(codes, src, fmt, n, r).reshape(-1)
        if mid.any():
            tz = np.empty(int(mid.sum()), dtype=fmt.storage)
            _ext.p3109_project_values(fmt.params, _env_of(fmt, mode, sbits), None, *(a[mid] for a in args), tz,
                                      SATURATION_MODES.index(saturation), bits.ROUNDING_MODES.index("toward_zero"))
            out[mid] = tz
    return out.reshape(shape).view(fmt.dtype)


def _env_of(fmt, mode, sr_bits):
    """The core environment of a projection in mode: the context's tininess and isa,
    sr_bits random bits (saturation is the projection's own)."""
    return bits._env(fmt, mode, False, None, sr_bits) + (bits._isa(None),)


# ----------------------------------------------------------------------------
# operations with the report's projection (4.7.3, 4.10-4.11)
# ----------------------------------------------------------------------------

# P3109 name -> softfp8.bits row: the P3109 companions of the operation table
# (softfp8/_core/ops.def, SFP8_P3109), run in C by core_p3109.c with the projection
_TABLE = _ext.p3109_table()
OPERATIONS = {name: _ext.op_table()[row][0] for name, row in _TABLE}
_OP_ID = {name: i for i, (name, _) in enumerate(_TABLE)}


def _stochastic_kw(rounding, sr, sr_bits, random_bits, seed, shape):
    mode, variant = _rounding(rounding, sr)
    if variant == "C":
        raise ValueError("StochasticC is provided for conversions (project) only: the operations "
                         "take StochasticA and StochasticB")
    if variant is None:
        if sr_bits is not None or random_bits is not None or seed is not None:
            raise ValueError("sr_bits=, random_bits= and seed= apply to stochastic rounding only")
        return mode, {}
    n = 8 if sr_bits is None else _as_int(sr_bits, "sr_bits")
    top = 32 if variant == "A" else 31
    if not 1 <= n <= top:
        raise ValueError(f"sr_bits must be between 1 and {top} for Stochastic{variant}, got {sr_bits!r}")
    r = _random(shape, n, random_bits, seed).reshape(-1)
    if variant == "A":
        return mode, {"sr_bits": n, "random_bits": r.astype(np.uint32)}
    return mode, {"sr_bits": n + 1, "random_bits": (2 * r + 1).astype(np.uint32)}


def apply(op, *operands, rounding=None, saturation="SatFinite", sr=None, sr_bits=None, random_bits=None,
          seed=None, out_format=None):
    """The P3109 operation ``op`` (a name of OPERATIONS: "Add", "Exp", "SinPi",
    "Clamp", ...) on arrays of softfp8 formats (P3109 formats, or external ones:
    float16, bfloat16), result in their format, with the report's projection:
    ``rounding`` (NearestTiesToEven ..., StochasticA / StochasticB, or softfp8's
    names) and ``saturation`` SatFinite / SatPropagate / SatNone (4.7.3-4.7.5), and
    its special values (4.10-4.11: x / 0, Recip(0), RSqrt(0), ArcTan2(0, 0) are
    NaN; there is no -0).  The value is the exact result rounded once by the core;
    the report defines no flags (softfp8's context flags are not touched).

    Mixed formats (the report's Op<fx, fy, fr>, Annex G group A): operands of different
    formats, or ``out_format`` (the result's format fr) different from theirs, run as the
    block operation BlockOp on blocks of scale 1 (5.4: Project_fr(op(1 X, 1 Y) / 1) is
    Project_fr(op(X, Y))); every operation has this form, and the operands broadcast."""
    if op not in OPERATIONS:
        raise ValueError(f"unknown P3109 operation {op!r}; known: {', '.join(OPERATIONS)}")
    row = bits.OPERATIONS[OPERATIONS[op]]
    if len(operands) != row.arity:
        raise TypeError(f"{op} takes {row.arity} operand(s), got {len(operands)}")
    _choice(saturation, SATURATION_MODES, "saturation")
    fmts = [format_of(getattr(x, "dtype", None)) for x in operands]
    if any(f is None for f in fmts):
        raise TypeError(f"{op}: operands must be arrays of a softfp8 format, got dtypes "
                        f"{[getattr(x, 'dtype', type(x).__name__) for x in operands]}")
    fmt = fmts[0]
    fr = fmt if out_format is None else _fmt(out_format, "out_format")
    if any(f != fmt for f in fmts) or fr != fmt:
        arrs = np.broadcast_arrays(*(np.asarray(x).view(f.storage) for x, f in zip(operands, fmts)))
        one = _formats.p3109_format(8, 1, signed=False, domain="finite")
        one_code = int(bits.from_float(np.array([1.0]), one)[0][0])
        blocks = [(one_code, np.ascontiguousarray(a).reshape(-1)) for a in arrs]
        _, out = block_op(op, blocks, [one] * len(blocks), fmts, one_code, one, fr, rounding, saturation,
                          **_kw(sr, sr_bits, random_bits, seed))
        return np.asarray(out).reshape(arrs[0].shape).view(fr.dtype)
    arrs = np.broadcast_arrays(*(np.asarray(x).view(fmt.storage) for x in operands))
    shape = arrs[0].shape
    codes = tuple(np.ascontiguousarray(a).reshape(-1) for a in arrs)
    mode, kw = _stochastic_kw(rounding, sr, sr_bits, random_bits, seed, shape)
    # the row's environment as softfp8.bits builds it (the context's tininess and isa;
    # saturate is the projection's), then the C projection (core_p3109.c) per element
    out = np.empty(codes[0].size, dtype=fmt.storage)
    _ext.p3109_run(_OP_ID[op], fmt.params, _env_of(fmt, mode, kw.get("sr_bits")), kw.get("random_bits"), codes, out,
                   SATURATION_MODES.index(saturation))
    return out.reshape(shape).view(fmt.dtype)


# ----------------------------------------------------------------------------
# format-level operations (4.14), projection specification operations (4.15)
# ----------------------------------------------------------------------------

def format_info(fmt):
    """The format-level operations of 4.14 for a P3109 (or external) format: a dict
    BitwidthOf, PrecisionOf, SignednessOf ("Signed" / "Unsigned"), DomainOf
    ("Finite" / "Extended"), ExponentBitwidthOf, TrailingSignificandBitwidthOf,
    ExponentBiasOf (integers), MaxFiniteOf, MinFiniteOf, MinPositiveOf,
    MaxSubnormalOf, MinNormalOf (codes of fmt; MaxSubnormalOf the NaN when no value
    is subnormal)."""
    fmt = _formats.as_format(fmt, "fmt")
    sp = fmt._special()
    sign = (1 << (fmt.bits - 1)) if fmt.signed else 0
    ext = fmt.specials in ("ieee", "p3109")
    sub_max = (1 << fmt.man_bits) - 1 if fmt.man_bits and fmt.subnormals in ("ieee", "tesla") else None
    return {
        "BitwidthOf": fmt.bits, "PrecisionOf": fmt.man_bits + 1,
        "SignednessOf": "Signed" if fmt.signed else "Unsigned",
        "DomainOf": "Extended" if ext else "Finite",
        "ExponentBitwidthOf": fmt.exp_bits, "TrailingSignificandBitwidthOf": fmt.man_bits,
        "ExponentBiasOf": fmt.bias, "MaxFiniteOf": sp["max"],
        "MinFiniteOf": sp["max"] | sign if fmt.signed else 0,
        "MinPositiveOf": sp["min_subnormal"], "MaxSubnormalOf": sub_max if sub_max is not None else sp["default_nan"],
        "MinNormalOf": sp["min_normal"],
    }


def round_of(spec):
    """RoundOf (4.15) of a projection specification (rounding, saturation)."""
    return spec[0]


def sat_of(spec):
    """SatOf (4.15) of a projection specification (rounding, saturation)."""
    _choice(spec[1], SATURATION_MODES, "saturation")
    return spec[1]


# ----------------------------------------------------------------------------
# block operations (clause 5): exact arithmetic, one projection per result, in C
# (softfp8/_core/core_p3109_block.c)
# ----------------------------------------------------------------------------

def _fmt(f, what):
    return _formats.as_format(f, what)


def _block_codes(x, f, what):
    """contiguous 1-D codes of format f"""
    arr = np.asarray(x)
    if arr.dtype.kind not in "uib" and arr.size:
        raise TypeError(f"{what} must be integer codes of {f.name}, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr.astype(np.int64).reshape(-1) & ((1 << f.bits) - 1)).astype(f.storage)


def _scale_code(s, f, what):
    s = _as_int(s, what)
    if not 0 <= s < (1 << f.bits):
        raise ValueError(f"{what} must be a code of {f.name} (0..{(1 << f.bits) - 1}), got {s}")
    return s


def _run_block(what, fr, fmts, scales, blocks, rounding, saturation, kw, elementwise):
    """One block operation in C: out codes (elementwise) or the one result code."""
    _choice(saturation, SATURATION_MODES, "saturation")
    n = blocks[0].size
    mode, skw = _stochastic_kw(rounding, kw.get("sr"), kw.get("sr_bits"), kw.get("random_bits"), kw.get("seed"),
                               (n if elementwise else 1,))
    out = np.empty(n, fr.storage) if elementwise else None
    res, _ = _ext.p3109_block(what, _env_of(fr, mode, skw.get("sr_bits")), skw.get("random_bits"),
                              SATURATION_MODES.index(saturation), tuple(f.params for f in fmts), scales, blocks,
                              out, kw.get("op", -1))
    return out if elementwise else res


def _kw(sr, sr_bits, random_bits, seed):
    return {"sr": sr, "sr_bits": sr_bits, "random_bits": random_bits, "seed": seed}


def convert_from_block(s, x, fs, fx, fr, rounding=None, saturation="SatFinite", *, sr=None, sr_bits=None,
                       random_bits=None, seed=None):
    """ConvertFromBlock (5.2.1): r_i = Project_fr(S X_i) for the block (s, x): s a
    code of fs, x codes of fx.  Returns codes of fr."""
    fs, fx, fr = _fmt(fs, "fs"), _fmt(fx, "fx"), _fmt(fr, "fr")
    return _run_block("from", fr, (fs, fx, fr), (_scale_code(s, fs, "s"),), (_block_codes(x, fx, "x"),),
                      rounding, saturation, _kw(sr, sr_bits, random_bits, seed), True)


def convert_to_block(x, s, fx, fs, fr, rounding=None, saturation="SatFinite", *, sr=None, sr_bits=None,
                     random_bits=None, seed=None):
    """ConvertToBlock (5.2.2): (s, [Project_fr(X_i / S)]) with the given scale s
    (omega-BlockProject 5.1.2: S or Z_i NaN gives NaN, S = 0 gives 0, S infinite
    sgn(Z_i) sgn(S))."""
    fs, fx, fr = _fmt(fs, "fs"), _fmt(fx, "fx"), _fmt(fr, "fr")
    return s, _run_block("to", fr, (fx, fs, fr), (_scale_code(s, fs, "s"),), (_block_codes(x, fx, "x"),),
                         rounding, saturation, _kw(sr, sr_bits, random_bits, seed), True)


def convert_to_block_max_abs_finite(x, fx, fs, fr, rounding_s=None, saturation_s="SatFinite", rounding=None,
                                    saturation="SatFinite", *, sr=None, sr_bits=None, random_bits=None, seed=None):
    """ConvertToBlockMaxAbsFinite (5.2.3): S = the largest finite |X_i| (reduce of
    MaximumFinite from NaN: NaN if every x_i is NaN, +inf if none is finite), s =
    Project_fs,rho_s(S), then ConvertToBlock with s.  Returns (s, codes of fr)."""
    fs, fx, fr = _fmt(fs, "fs"), _fmt(fx, "fx"), _fmt(fr, "fr")
    xs = _block_codes(x, fx, "x")
    s = int(_run_block("maxabs", fs, (fx, fs), (), (xs,), rounding_s, saturation_s, _kw(None, None, None, None),
                       False))
    return convert_to_block(xs, s, fx, fs, fr, rounding, saturation, sr=sr, sr_bits=sr_bits,
                            random_bits=random_bits, seed=seed)


def block_reduce_add(s, x, fs, fx, fr, rounding=None, saturation="SatFinite", **kw):
    """BlockReduceAdd (5.3.1): Project_fr(0 + S X_1 + ... + S X_B), exact (the
    superaccumulator), rounded once."""
    fs, fx, fr = _fmt(fs, "fs"), _fmt(fx, "fx"), _fmt(fr, "fr")
    return int(_run_block("add", fr, (fs, fx, fr), (_scale_code(s, fs, "s"),), (_block_codes(x, fx, "x"),),
                          rounding, saturation, kw, False))


def block_reduce_multiply(s, x, fs, fx, fr, rounding=None, saturation="SatFinite", **kw):
    """BlockReduceMultiply (5.3.1): Project_fr(1 * S X_1 * ... * S X_B), exact (a big
    integer), rounded once."""
    fs, fx, fr = _fmt(fs, "fs"), _fmt(fx, "fx"), _fmt(fr, "fr")
    return int(_run_block("multiply", fr, (fs, fx, fr), (_scale_code(s, fs, "s"),), (_block_codes(x, fx, "x"),),
                          rounding, saturation, kw, False))


def block_dot_product(sx, x, sy, y, fsx, fx, fsy, fy, fr, rounding=None, saturation="SatFinite", **kw):
    """BlockDotProduct (5.3.2): Project_fr(sum of (Sx X_i)(Sy Y_i)), exact, rounded once."""
    fsx, fx, fsy, fy, fr = (_fmt(f, n) for f, n in ((fsx, "fsx"), (fx, "fx"), (fsy, "fsy"), (fy, "fy"), (fr, "fr")))
    xs, ys = _block_codes(x, fx, "x"), _block_codes(y, fy, "y")
    if xs.size != ys.size:
        raise ValueError(f"blocks of different sizes: {xs.size} and {ys.size}")
    return int(_run_block("dot", fr, (fsx, fx, fsy, fy, fr), (_scale_code(sx, fsx, "sx"), _scale_code(sy, fsy, "sy")),
                          (xs, ys), rounding, saturation, kw, False))


# the elementwise block operations computed exactly (5.4), and their arity
_EXACT_OPS = {"Convert": 1, "Abs": 1, "Negate": 1, "Recip": 1, "Sqrt": 1, "RSqrt": 1, "Add": 2, "Subtract": 2, "Multiply": 2, "Divide": 2,
              "CopySign": 2, "Minimum": 2, "Maximum": 2, "MinimumNumber": 2, "MaximumNumber": 2,
              "MinimumMagnitude": 2, "MaximumMagnitude": 2, "MinimumMagnitudeNumber": 2,
              "MaximumMagnitudeNumber": 2, "MinimumFinite": 2, "MaximumFinite": 2, "FMA": 3, "FAA": 3, "Clamp": 3}

# the unary elementary functions of 5.4 as block operations: f(S X) correctly rounded
# (core_p3109_block.c through the value-level entries of elem*.c)
_ELEM_OPS = ("Exp", "Exp2", "Log", "Log2", "LogOnePlus", "ExpMinusOne", "Sin", "Cos", "Tan", "ArcSin", "ArcCos",
             "ArcTan", "Sinh", "Cosh", "Tanh", "ArcSinh", "ArcCosh", "ArcTanh", "SinPi", "CosPi", "TanPi",
             "ArcSinPi", "ArcCosPi", "ArcTanPi", "Softplus")
_ELEM_OPS2 = ("Hypot", "ArcTan2", "ArcTan2Pi")
_BLOCK_OPS = dict(_EXACT_OPS, **{op: 1 for op in _ELEM_OPS}, **{op: 2 for op in _ELEM_OPS2})


def _odd_bits(code, f):
    """bits of the odd part of the significand of code's value (0: not finite non-zero)"""
    v = float(bits.to_float(np.array([code], f.storage), f)[0][0])
    if not np.isfinite(v) or v == 0:
        return 0
    num, den = abs(v).as_integer_ratio()
    return (num // (num & -num)).bit_length()


def block_op(op, blocks, fss, fxs, sr_, fs, fr, rounding=None, saturation="SatFinite", **kw):
    """An elementwise block operation (5.4): blocks = [(s_k, x_k)] with formats fss[k],
    fxs[k] (each block its own formats: the mixed-format specializations); the result
    block (sr_, [Project_fr(op(S_1 X_1i, ...) / S_r)]), rounded once in C.  op is one
    of _EXACT_OPS (Convert, Abs, Negate, Recip, Sqrt, RSqrt, Add, Subtract, Multiply,
    Divide, CopySign, the ten selections of 4.11.1-4.11.3, FMA, FAA, Clamp: exact, a
    quotient or a square root on the scaled operands) or a unary elementary function
    of _ELEM_OPS (Exp, Exp2, Log, Log2, LogOnePlus, ExpMinusOne, the trigonometric,
    hyperbolic and pi-trigonometric functions and their inverses, Softplus) or
    Hypot / ArcTan2 / ArcTan2Pi of two blocks (_ELEM_OPS2): f at the exact S X, correctly
    rounded.  Stochastic rounding of an elementary
    function needs p(fr) + 1 + sr_bits + (bits of S_r's odd significand) <= 49
    (docs/semantics.md, "P3109 operations")."""
    if op not in _BLOCK_OPS:
        raise ValueError(f"block_op {op!r} is not a block operation of softfp8: it provides "
                         f"{', '.join(_BLOCK_OPS)}")
    if len(blocks) != _BLOCK_OPS[op] or len(fss) != len(blocks) or len(fxs) != len(blocks):
        raise ValueError(f"block_op {op!r} takes {_BLOCK_OPS[op]} block(s) with one scale format and one "
                         f"element format each, got {len(blocks)} block(s), {len(fss)} and {len(fxs)} formats")
    fss = [_fmt(f, "fs") for f in fss]
    fxs = [_fmt(f, "fx") for f in fxs]
    fs, fr = _fmt(fs, "fs"), _fmt(fr, "fr")
    arrs = [_block_codes(x, f, "x") for (_, x), f in zip(blocks, fxs)]
    if len({a.size for a in arrs}) != 1:
        raise ValueError("blocks of different sizes")
    fmts = tuple(g for pair in zip(fss, fxs) for g in pair) + (fs, fr)
    scales = tuple(_scale_code(s, f, "s") for (s, _), f in zip(blocks, fss)) + (_scale_code(sr_, fs, "sr_"),)
    mode, variant = _rounding(rounding, kw.get("sr"))
    if (op in _ELEM_OPS or op in _ELEM_OPS2) and mode == "stochastic":
        n = 8 if kw.get("sr_bits") is None else _as_int(kw["sr_bits"], "sr_bits")
        need = fr.man_bits + 2 + n + (variant == "B") + _odd_bits(scales[-1], fs)
        if need > 49:
            raise ValueError(f"block_op {op!r} in Stochastic{variant} with sr_bits={n}: precision of {fr.name} + 1 + "
                             f"sr_bits + the bits of sr_={scales[-1]}'s odd significand is {need}, above 49")
    return sr_, _run_block("op", fr, fmts, scales, tuple(arrs), rounding, saturation, dict(kw, op=_OP_ID[op]), True)


def scaled_op(op, operands, fss, fxs, fr, rounding=None, saturation="SatFinite", **kw):
    """ScaledOp (5.5): the block operation on blocks of one element with result
    scale 1: operands = [(s_k, x_k)] (codes), formats fss, fxs; returns the code of fr."""
    one = _formats.p3109_format(8, 1, signed=False, domain="finite")
    one_code = int(bits.from_float(np.array([1.0]), one)[0][0])
    _, r = block_op(op, [(s, [x]) for s, x in operands], fss, fxs, one_code, one, fr, rounding, saturation, **kw)
    return int(r[0])
