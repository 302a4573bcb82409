"""IEEE P3109 (Interim Report v4.0) operations with the report's projection
(softfp8.p3109.apply, the format-level and block operations) against a reference
written from the report: the omega definitions of 4.10-4.11 (their special values),
the exact value of the operation (Fractions; for the transcendental functions the
MPFR records of tests/models/mpref*.py, whose special values the report shares but
for the cases listed in OMEGA_NAN), then RoundToPrecision, Saturate and Encode of
tests/core/test_p3109.py (4.7.3-4.7.6).

Formats: the report's required sets F8 (Binary8p4se, Binary8p3se) and F4
(Binary4p2sf) (4.5), plus Binary8p4sf and Binary8p3ue.  Unary operations: every
code in the 6 deterministic rounding modes x 3 saturation modes; binary: 600
pairs per format in 4 projections; ternary: 500 triples in 2 (the unary
functions other than FULL: 4 projections).
"""
from fractions import Fraction
import math

import numpy as np
import pytest

import softfp8
from softfp8 import p3109

from ..models import mpref as mp
from ..models import mpref_ieee as mi
from ..models import rational as R
from .test_p3109 import MODES, NAN, NINF, PINF, SATS, project_ref, ref_format, sf_format

FORMATS = [(8, 4, True, True), (8, 3, True, True), (4, 2, True, False), (8, 4, True, False), (8, 3, False, True)]
FN = {"Sqrt": "sqrt", "Exp": "exp", "Exp2": "exp2", "Log": "log", "Log2": "log2", "LogOnePlus": "log1p",
      "ExpMinusOne": "expm1", "Sin": "sin", "Cos": "cos", "Tan": "tan", "ArcSin": "arcsin",
      "ArcCos": "arccos", "ArcTan": "arctan", "Sinh": "sinh", "Cosh": "cosh", "Tanh": "tanh",
      "ArcSinh": "arcsinh", "ArcCosh": "arccosh", "ArcTanh": "arctanh"}
FN_IEEE = {"RSqrt": "rsqrt", "SinPi": "sinpi", "CosPi": "cospi", "TanPi": "tanpi", "ArcSinPi": "arcsinpi",
           "ArcCosPi": "arccospi", "ArcTanPi": "arctanpi", "Softplus": "softplus"}
FN2 = {"Hypot": ("hypot", mp), "ArcTan2": ("arctan2", mp), "ArcTan2Pi": ("arctan2pi", mi)}


def _key(X):
    if X == NAN:
        return ("N", False)
    if X in (PINF, NINF):
        return ("I", 1 if X == NINF else 0)
    if X == 0:
        return ("Z", 0)
    return float(X)


def _value(rec):
    """A record (mpref) as a report datum: Fraction (sticky: just above the 64-bit
    truncation), PINF, NINF, NAN."""
    k, s, sig, e, sticky = rec[:5]
    if k == "N":
        return NAN
    if k == "I":
        return NINF if s else PINF
    if k == "Z":
        return Fraction(0)
    # exp(2^31) of a wide unsigned format has a 3e9-bit exponent: beyond 2^+-1024 every
    # 8-bit format's projection is decided by the sign and which side (overflow, or a
    # nonzero value below half the smallest subnormal), so the exponent is clamped there
    e = max(-1024, min(1024, e))
    v = Fraction(sig) * Fraction(2) ** (e - 63)
    if sticky:
        v += Fraction(2) ** (e - 63 - 40)   # strictly inside the truncation's unit: 104 bits
    return -v if s else v


def _sgn(X):
    return -1 if X == NINF or (isinstance(X, Fraction) and X < 0) else 1 if X != 0 else 0


def _lt(X, Y):
    o = {NINF: -1, PINF: 1}
    if X in o or Y in o:
        return (o.get(X, 0), 0 if X in o else X) < (o.get(Y, 0), 0 if Y in o else Y)
    return X < Y


def omega(op, *X):
    """The report's omega-operation (4.10-4.11) on data (Fraction, PINF, NINF, NAN)."""
    if op in ("MinimumNumber", "MaximumNumber", "MinimumMagnitudeNumber", "MaximumMagnitudeNumber",
              "MinimumFinite", "MaximumFinite"):
        x, y = X
        if x == NAN and y == NAN:
            return NAN
        if x == NAN or y == NAN:
            return y if x == NAN else x
        if op.endswith("Finite"):
            if (x in (PINF, NINF)) != (y in (PINF, NINF)):
                return y if x in (PINF, NINF) else x
            return omega("Minimum" if op.startswith("Min") else "Maximum", x, y)
        return omega(op[:-len("Number")], x, y)
    if NAN in X:
        return NAN
    if op == "Abs":
        return PINF if X[0] in (PINF, NINF) else abs(X[0])
    if op == "Negate":
        return {PINF: NINF, NINF: PINF}.get(X[0], -X[0] if isinstance(X[0], Fraction) else X[0])
    if op == "Convert":
        return X[0]
    if op == "CopySign":
        x, y = X
        neg = y == NINF or (isinstance(y, Fraction) and y < 0)
        m = PINF if x in (PINF, NINF) else abs(x)
        return (NINF if m == PINF else -m) if neg else m
    if op in ("Add", "Subtract", "FAA"):
        terms = list(X)
        if op == "Subtract":
            terms[1] = omega("Negate", terms[1])
        infs = {t for t in terms if t in (PINF, NINF)}
        if len(infs) == 2:
            return NAN
        if infs:
            return infs.pop()
        return sum(terms, Fraction(0))
    if op in ("Multiply", "FMA"):
        x, y = X[:2]
        if (x in (PINF, NINF) or y in (PINF, NINF)) and 0 in (x, y):
            return NAN
        if x in (PINF, NINF) or y in (PINF, NINF):
            p = PINF if _sgn(x) * _sgn(y) > 0 else NINF
        else:
            p = x * y
        return p if op == "Multiply" else omega("Add", p, X[2])
    if op == "Divide":
        x, y = X
        if y == 0:
            return NAN                                    # 4.10.5: Divide(*, 0) = NaN
        if x in (PINF, NINF):
            return NAN if y in (PINF, NINF) else (PINF if _sgn(x) * _sgn(y) > 0 else NINF)
        if y in (PINF, NINF):
            return Fraction(0)
        return x / y
    if op == "Recip":
        x = X[0]
        if x == 0:
            return NAN                                    # 4.10.8
        return Fraction(0) if x in (PINF, NINF) else 1 / x
    if op in ("Minimum", "Maximum"):
        x, y = X
        if op == "Minimum":
            return x if _lt(x, y) else y
        return y if _lt(x, y) else x
    if op in ("MinimumMagnitude", "MaximumMagnitude"):
        x, y = X
        ax, ay = omega("Abs", x), omega("Abs", y)
        if ax == ay:
            return omega(op.replace("Magnitude", ""), x, y)
        small = _lt(ax, ay)
        return (x if small else y) if op == "MinimumMagnitude" else (y if small else x)
    if op == "Clamp":
        x, lo, hi = X
        if _lt(hi, lo):
            return NAN
        if not _lt(lo, x):
            return lo
        if not _lt(x, hi):
            return hi
        return x
    if op in FN or op in FN_IEEE:
        x = X[0]
        if op in ("RSqrt",) and x == 0:
            return NAN                                    # 4.10.8: RSqrt(0) = NaN
        if op == "TanPi" and isinstance(x, Fraction) and (2 * x).denominator == 1 and (2 * x).numerator % 2:
            return NAN                                    # 4.10.12: TanPi where cos(pi x) = 0
        if op in FN:
            return _value(mp.unary_exact(FN[op], _key(x)))
        return _value(mi.unary_exact(FN_IEEE[op], _key(x)))
    if op in FN2:
        x, y = X
        if op in ("ArcTan2", "ArcTan2Pi") and ((x == 0 and y == 0) or (x in (PINF, NINF) and y in (PINF, NINF))):
            return NAN                                    # 4.10.15, 4.10.16
        fn, mod = FN2[op]
        rec = mp.binary_exact(fn, _key(x), _key(y)) if mod is mp else mi._BINARY_FN[fn](_key(x), _key(y))
        return _value(rec)
    raise ValueError(op)


ARITY = {op: p3109_row.arity for op, p3109_row in
         ((op, softfp8.bits.OPERATIONS[row]) for op, row in p3109.OPERATIONS.items())}
UNARY = [op for op, a in ARITY.items() if a == 1]
BINARY = [op for op, a in ARITY.items() if a == 2]
TERNARY = [op for op, a in ARITY.items() if a == 3]
assert len(UNARY) + len(BINARY) + len(TERNARY) == len(p3109.OPERATIONS) == 52


def _operands(F, n, arity, seed):
    rng = np.random.default_rng([seed, F.k, F.p, arity])
    if arity == 1:
        return (np.arange(2 ** F.k),)
    return tuple(rng.integers(0, 2 ** F.k, n) for _ in range(arity))


def _check(op, key, configs, n):
    F, f = ref_format(*key), sf_format(*key)
    ops = _operands(F, n, ARITY[op], hash(op) % 1000)
    data = [[F.values[c] for c in o.tolist()] for o in ops]
    exact = [omega(op, *xs) for xs in zip(*data)]
    bad, total = [], 0
    memo = {}
    for mode, sat in configs:
        got = p3109.apply(op, *(o.astype(f.storage).view(f.dtype) for o in ops), rounding=mode,
                          saturation=sat).view(f.storage)
        for i, X in enumerate(exact):
            want = memo.get((X, sat, mode))
            if want is None:
                want = memo[(X, sat, mode)] = project_ref(F, X, sat, mode)
            if int(got[i]) != want:
                bad.append((op, F, mode, sat, [F.values[int(o[i])] for o in ops], int(got[i]), want))
            total += 1
    return total, bad


ALL18 = [(m, s) for m in MODES for s in SATS]
# every projection for these; four for the other functions (the projection is one code path)
FULL = ("Abs", "Negate", "Convert", "Sqrt", "Recip", "RSqrt", "Exp", "Log", "TanPi", "Softplus")
FOUR = [("NearestTiesToEven", "SatFinite"), ("TowardPositive", "SatNone"), ("ToOdd", "SatPropagate"),
        ("TowardZero", "SatNone")]


@pytest.mark.parametrize("key", FORMATS, ids=lambda k: "binary%dp%d%s%s" % (k[0], k[1], "su"[not k[2]], "fe"[k[3]]))
def test_elementwise_projection(key):
    total, bad = 0, []
    for op in UNARY:
        t, b = _check(op, key, ALL18 if op in FULL else FOUR, 0)
        total += t
        bad += b
    for op in BINARY:
        t, b = _check(op, key, FOUR, 600)
        total += t
        bad += b
    for op in TERNARY:
        t, b = _check(op, key, FOUR[:2], 500)
        total += t
        bad += b
    k = key[0]
    assert total == (len(FULL) * 18 + (len(UNARY) - len(FULL)) * 4) * 2 ** k + len(BINARY) * 600 * 4 + \
        len(TERNARY) * 500 * 2
    assert not bad, "%d mismatches, e.g. %s" % (len(bad), bad[:8])


def test_apply_stochastic_and_bad_input():
    f = p3109.format(8, 4, domain="extended")
    x = np.arange(256, dtype=np.uint8).view(f.dtype)
    r = np.random.default_rng(1).integers(0, 8, 256)
    a = p3109.apply("Exp", x, sr="A", sr_bits=3, random_bits=r)
    down = p3109.apply("Exp", x, rounding="TowardZero")
    up = p3109.apply("Exp", x, rounding="TowardPositive")
    ok = (a.view(np.uint8) == down.view(np.uint8)) | (a.view(np.uint8) == up.view(np.uint8))
    assert ok.all()
    with pytest.raises(ValueError, match="unknown P3109 operation 'Exp10'"):
        p3109.apply("Exp10", x)
    with pytest.raises(TypeError, match="Add takes 2 operand"):
        p3109.apply("Add", x)
    # operands of different formats: the report's Add<fx, fy, fr>, result in x's format
    # (values: test_p3109_blocks.py::test_apply_mixed_formats)
    mixed = p3109.apply("Add", x, np.zeros(256, np.uint8).view(softfp8.e4m3.dtype))
    assert mixed.dtype == x.dtype and mixed.shape == x.shape
    with pytest.raises(ValueError, match="StochasticC is provided for conversions"):
        p3109.apply("Exp", x, sr="C")


def test_format_level_operations():
    """4.14 for every P3109 format of widths 3..8, from the report's formulas and
    its decoding (test_p3109's reference)."""
    n = 0
    for k in range(3, 9):
        for s in (True, False):
            for p in range(1, k if s else k + 1):
                for e in (False, True):
                    F, f = ref_format(k, p, s, e), sf_format(k, p, s, e)
                    info = p3109.format_info(f)
                    assert info["BitwidthOf"] == k and info["PrecisionOf"] == p
                    assert info["SignednessOf"] == ("Signed" if s else "Unsigned")
                    assert info["DomainOf"] == ("Extended" if e else "Finite")
                    assert info["ExponentBitwidthOf"] == (k - p if s else k - p + 1)
                    assert info["TrailingSignificandBitwidthOf"] == p - 1
                    assert info["ExponentBiasOf"] == (2 ** (k - p - 1) if s else 2 ** (k - p))
                    fin = [v for v in F.values if isinstance(v, Fraction)]
                    assert F.values[info["MaxFiniteOf"]] == max(fin)
                    assert F.values[info["MinFiniteOf"]] == min(fin)
                    assert F.values[info["MinPositiveOf"]] == min(v for v in fin if v > 0)
                    subs = [v for v in fin if 0 < v < Fraction(2) ** (1 - F.bias)]
                    assert F.values[info["MaxSubnormalOf"]] == (max(subs) if subs else NAN)
                    assert F.values[info["MinNormalOf"]] == Fraction(2) ** (1 - F.bias)
                    n += 1
    assert n == 120
    assert p3109.round_of(("TowardZero", "SatNone")) == "TowardZero"
    assert p3109.sat_of(("TowardZero", "SatNone")) == "SatNone"


def _fr(F, c):
    return F.values[int(c)]


def test_block_operations():
    """5.2-5.5 with Binary8p1uf scales (the report's F_s) and random blocks of 32
    Binary8p4se / Binary8p3se elements, results in the same formats and in
    binary16: exact sums / products / quotients projected once (test_p3109's
    reference), every saturation mode."""
    rng = np.random.default_rng(5)
    fs_key = (8, 1, False, False)
    Fs, fs = ref_format(*fs_key), sf_format(*fs_key)
    n = 0
    for xkey, rkey in [((8, 4, True, True), (8, 4, True, True)), ((8, 3, True, True), (8, 4, True, False))]:
        Fx, fx = ref_format(*xkey), sf_format(*xkey)
        Fr, fr = ref_format(*rkey), sf_format(*rkey)
        for trial in range(12):
            s = int(rng.integers(100, 160))                       # 2^(s - 127)-ish scales
            x = rng.integers(0, 256, 32)
            y = rng.integers(0, 256, 32)
            S = _fr(Fs, s)
            X = [_fr(Fx, c) for c in x]
            Y = [_fr(Fx, c) for c in y]
            Z = [omega("Multiply", S, v) for v in X]
            for mode, sat in FOUR:
                # ConvertFromBlock: Project(S X_i)
                got = p3109.convert_from_block(s, x, fs, fx, fr, mode, sat)
                assert [int(g) for g in got] == [project_ref(Fr, z, sat, mode) for z in Z]
                # BlockReduceAdd / Multiply / DotProduct
                tot = Fraction(0)
                for z in Z:
                    tot = omega("Add", tot, z)
                assert p3109.block_reduce_add(s, x, fs, fx, fr, mode, sat) == project_ref(Fr, tot, sat, mode)
                prod = Fraction(1)
                for z in Z[:6]:
                    prod = omega("Multiply", prod, z)
                assert p3109.block_reduce_multiply(s, x[:6], fs, fx, fr, mode, sat) == project_ref(Fr, prod, sat, mode)
                dot = Fraction(0)
                for a, b in zip(Z, [omega("Multiply", S, v) for v in Y]):
                    dot = omega("Add", dot, omega("Multiply", a, b))
                assert p3109.block_dot_product(s, x, s, y, fs, fx, fs, fx, fr, mode, sat) == \
                    project_ref(Fr, dot, sat, mode)
                # ConvertToBlock with the given scale: Project(X_i / S)
                s2, got = p3109.convert_to_block(x, s, fx, fs, fr, mode, sat)
                want = [project_ref(Fr, NAN if v == NAN else (v if v in (PINF, NINF) else v / S), sat, mode)
                        for v in X]
                assert s2 == s and [int(g) for g in got] == want
                # BlockAdd (5.4) and ScaledMultiply (5.5)
                sr_, got = p3109.block_op("Add", [(s, x), (s, y)], [fs, fs], [fx, fx], s, fs, fr, mode, sat)
                want = [project_ref(Fr, (lambda v: v if v in (NAN, PINF, NINF) else v / S)(
                    omega("Add", a, omega("Multiply", S, b))), sat, mode) for a, b in zip(Z, Y)]
                assert [int(g) for g in got] == want
                g = p3109.scaled_op("Multiply", [(s, int(x[0])), (s, int(y[0]))], [fs, fs], [fx, fx], fr, mode, sat)
                assert g == project_ref(Fr, omega("Multiply", Z[0], omega("Multiply", S, Y[0])), sat, mode)
                n += 1
        # ConvertToBlockMaxAbsFinite: S = max finite |X_i|, rounded up, elements saturated
        x = rng.integers(0, 256, 32)
        X = [_fr(Fx, c) for c in x]
        fin = [abs(v) for v in X if isinstance(v, Fraction)]
        S = max(fin) if fin else PINF
        s_want = project_ref(Fs, S, "SatFinite", "TowardPositive")
        s, got = p3109.convert_to_block_max_abs_finite(x, fx, fs, fr, "TowardPositive", "SatFinite",
                                                        "NearestTiesToEven", "SatFinite")
        assert s == s_want
        Sv = _fr(Fs, s)
        assert [int(g) for g in got] == [project_ref(Fr, v if v in (NAN, PINF, NINF) else (
            Fraction(0) if Sv == 0 else v / Sv), "SatFinite", "NearestTiesToEven") for v in X]
    assert n == 2 * 12 * 4
    with pytest.raises(ValueError, match="block_op 'Exp10' is not a block operation"):
        p3109.block_op("Exp10", [(1, [0])], [fs], [fs], 1, fs, fs)
