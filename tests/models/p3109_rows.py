"""The P3109 projection applied to softfp8's core rows, in NumPy (the former
softfp8.p3109.apply, kept as the independent reference of the C projection
core_p3109.c / sfp8_p3109_apply).

It calls the table's rows through softfp8.bits (the exact core, proven against
tests/models/mpref*.py and the rational model elsewhere) and re-implements, in
NumPy, everything the C code adds: -0 operands, the saturating / non-saturating
pair, the unsigned format's signed twin, the report's extra NaN cases (4.10) and
Saturate (4.7.5).  It never calls softfp8.p3109.apply nor _ext.p3109_run.

``apply_ref(op, fmt, codes, mode, saturation, random_bits=None, sr_bits=None)``:
op a P3109 name, codes a list of 1-D code arrays, mode a softfp8 rounding name,
random_bits / sr_bits the core's stochastic words (StochasticA / B already mapped).
"""
from __future__ import annotations

import numpy as np

import softfp8
from softfp8 import bits
from softfp8._context import Flags

# P3109 name -> softfp8.bits row, written from the report's list of operations (4.10-4.11)
ROWS = {
    "Abs": "abs", "Negate": "neg", "CopySign": "copysign", "Add": "add", "Subtract": "sub",
    "Multiply": "mul", "Divide": "div", "FMA": "fma", "FAA": "faa", "Sqrt": "sqrt", "Recip": "reciprocal",
    "RSqrt": "rsqrt", "Exp": "exp", "Exp2": "exp2", "Log": "log", "Log2": "log2", "LogOnePlus": "log1p",
    "ExpMinusOne": "expm1", "Sin": "sin", "Cos": "cos", "Tan": "tan", "ArcSin": "arcsin", "ArcCos": "arccos",
    "ArcTan": "arctan", "Sinh": "sinh", "Cosh": "cosh", "Tanh": "tanh", "ArcSinh": "arcsinh",
    "ArcCosh": "arccosh", "ArcTanh": "arctanh", "SinPi": "sinpi", "CosPi": "cospi", "TanPi": "tanpi",
    "ArcSinPi": "arcsinpi", "ArcCosPi": "arccospi", "ArcTanPi": "arctanpi", "Softplus": "softplus",
    "Hypot": "hypot", "ArcTan2": "arctan2", "ArcTan2Pi": "arctan2pi", "Minimum": "min", "Maximum": "max",
    "MinimumNumber": "minnum", "MaximumNumber": "maxnum", "MinimumMagnitude": "minmag",
    "MaximumMagnitude": "maxmag", "MinimumMagnitudeNumber": "minmagnum",
    "MaximumMagnitudeNumber": "maxmagnum", "MinimumFinite": "min_finite", "MaximumFinite": "max_finite",
    "Clamp": "clamp", "Convert": "pos",
}


def saturate_codes(fmt, base, nan, pinf, ninf, above, below, mode, saturation):
    """P3109 4.7.5 Saturate (v4.0) given the rounded results and the case masks."""
    sp = fmt._special()
    mhi = sp["max"]
    sign = (1 << (fmt.bits - 1)) if fmt.signed else 0
    mlo = mhi | sign if fmt.signed else 0
    ext = fmt.specials in ("ieee", "p3109")
    nan_code = sp["default_nan"]
    inf = int(bits.convert(np.array([np.inf]), np.float64, fmt, saturate=False)[0][0]) if ext else mhi
    ninf_code = (inf | sign) if ext and fmt.signed else None
    out = np.array(base, dtype=np.int64, copy=True)
    if saturation == "SatFinite":
        vals = (mhi, mlo, mhi, mlo)
    elif saturation == "SatPropagate":
        vals = (inf if ext else mhi, ninf_code if ninf_code is not None else mlo, mhi, mlo)
    else:
        above_v = mhi if mode in ("toward_zero", "downward") or (mode == "to_odd" and not fmt.signed and ext) \
            else (inf if ext else mhi)
        below_v = mlo if mode in ("toward_zero", "upward") else (
            ninf_code if ninf_code is not None else (nan_code if not fmt.signed else mlo))
        vals = (inf if ext else mhi, ninf_code if ninf_code is not None else (nan_code if not fmt.signed else mlo),
                above_v, below_v)
    for mask, v in zip((pinf, ninf, above, below), vals):
        out = np.where(mask, v, out)
    out = np.where(nan, nan_code, out)
    return out.astype(fmt.storage)


def omega_nan(op, vals):
    """Where the report's operation gives NaN but IEEE 754's does not (4.10)."""
    x = vals[0]
    y = vals[1] if len(vals) > 1 else None
    with np.errstate(all="ignore"):
        if op == "Divide":
            return y == 0
        if op in ("Recip", "RSqrt"):
            return x == 0
        if op in ("ArcTan2", "ArcTan2Pi"):
            return ((x == 0) & (y == 0)) | (np.isinf(x) & np.isinf(y))
        if op == "TanPi":
            return np.isfinite(x) & (np.mod(2 * x, 2) == 1)
        if op in ("Hypot", "CopySign"):
            return np.isnan(x) | np.isnan(y)
    return np.zeros(np.shape(x), bool)


def twin(fmt):
    """The signed format with fmt's exponent, mantissa and bias."""
    sp = {"p3109": "p3109", "fn": "fnuz", "ieee": "ieee", "fnuz": "fnuz", "none": "none"}[fmt.specials]
    return softfp8.format(exp_bits=fmt.exp_bits, man_bits=fmt.man_bits, bias=fmt.bias, specials=sp,
                          subnormals=fmt.subnormals, signed=True)


def apply_ref(op, fmt, codes, mode, saturation, random_bits=None, sr_bits=None):
    """Codes of the P3109 operation op with the projection (mode, saturation)."""
    row = bits.OPERATIONS[ROWS[op]]
    kw = {} if random_bits is None else {"random_bits": random_bits, "sr_bits": sr_bits}
    codes = [np.asarray(c).astype(fmt.storage).reshape(-1) for c in codes]
    vals = [np.asarray(bits.to_float(c, fmt)[0]) for c in codes]
    codes = [np.where((v == 0) & np.signbit(v), 0, c).astype(fmt.storage) for c, v in zip(codes, vals)]
    fn = getattr(bits, row.name)
    if row.rounds:
        cs, fs = fn(fmt, *codes, rounding=mode, saturate=True, **kw)
        cn, fnf = fn(fmt, *codes, rounding=mode, saturate=False, **kw)
    else:
        res = fn(fmt, *codes)
        cs, fs = res if isinstance(res, tuple) else (res, np.zeros(codes[0].shape, np.uint8))
        cn, fnf = cs, fs
    cs, cn = np.asarray(cs).reshape(-1), np.asarray(cn).reshape(-1)
    nan_s = np.asarray(bits.isnan(fmt, cs)).reshape(-1)
    nan_n = np.asarray(bits.isnan(fmt, cn)).reshape(-1)
    inf_n = np.asarray(bits.isinf(fmt, cn)).reshape(-1)
    neg_s = np.asarray(bits.signbit(fmt, cs)).reshape(-1)
    over = (np.asarray(fnf).reshape(-1) & int(Flags.OVERFLOW)) != 0
    exact_inf = (inf_n | nan_n) & ~nan_s & ~over
    nan = nan_s.copy()
    above, below = over & ~neg_s, over & neg_s
    pinf, ninf = exact_inf & ~neg_s, exact_inf & neg_s
    if not fmt.signed:
        tw = twin(fmt)
        tc = [np.asarray(bits.convert(c, fmt, tw)[0]) for c in codes]
        tr = fn(tw, *tc, rounding=mode, saturate=False, **kw) if row.rounds else fn(tw, *tc)
        tr = np.asarray(tr[0] if isinstance(tr, tuple) else tr).reshape(-1)
        tv = np.asarray(bits.to_float(tr, tw)[0])
        neg_t = (tv < 0) & ~np.isnan(tv)
        ninf = ninf | (neg_t & np.isinf(tv) & ~over)
        below = below | (neg_t & ~np.isinf(tv)) | (neg_t & np.isinf(tv) & over)
        nan = nan & ~neg_t
    nan = nan | omega_nan(op, vals)
    out = saturate_codes(fmt, cs, nan, pinf & ~nan, ninf & ~nan, above & ~nan, below & ~nan, mode, saturation)
    ov = np.asarray(bits.to_float(out, fmt)[0])
    return np.where((ov == 0) & np.signbit(ov), 0, out).astype(fmt.storage)
