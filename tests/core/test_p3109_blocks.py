"""The P3109 block operations (clause 5) in C (core_p3109_block.c, through
softfp8.p3109) against the Fraction reference written from the report
(tests/core/test_p3109.py's project_ref / Saturate and test_p3109_ops.py's
omega-operations): the exact value of each definition -- scaled elements, sums,
products, dot products, quotients by the scale -- projected once.

Every block size class (1, 2, 7, 32, 33: within, at and across a 32-element block's
boundary), scale formats unsigned and signed with special scales (0, NaN, +-inf,
the extremes), element and result formats signed / unsigned, finite / extended, every
deterministic rounding mode x every saturation mode; stochastic words separately.
The elementary functions on blocks (5.4) against MPFR (tests/models/mpref.py,
mpref_ieee.py through test_p3109_ops.omega) at the exact scaled operands.
"""
from fractions import Fraction

import numpy as np
import pytest

from softfp8 import p3109

from .test_p3109 import MODES, NAN, NINF, PINF, SATS, project_ref, ref_format, sf_format
from ..models import mpref as mp
from ..models import mpref_ieee as mi
from .test_p3109_ops import _value, omega

# (scale format, element format, result format) keys (k, p, signed, extended)
CONFIGS = [
    ((8, 1, False, False), (8, 4, True, True), (8, 4, True, False)),
    ((8, 2, False, True), (8, 3, True, False), (8, 3, False, True)),
    ((8, 4, True, True), (6, 3, False, True), (8, 5, True, True)),
]
SIZES = (1, 2, 7, 32, 33)


def _v(F, c):
    return F.values[int(c)]


def _scales(Fs, rng):
    """special and ordinary scale codes of Fs"""
    codes = {c for c, v in enumerate(Fs.values) if v in (NAN, PINF, NINF) or v == 0}
    fin = [c for c, v in enumerate(Fs.values) if isinstance(v, Fraction) and v != 0]
    return sorted(codes) + [fin[0], fin[-1]] + [int(c) for c in rng.choice(fin, 2, replace=False)]


def _div(z, S):
    """omega-BlockProject's quotient (5.1.2)"""
    if S == NAN or z == NAN:
        return NAN
    if S == 0:
        return Fraction(0)
    if S in (PINF, NINF):
        sz = 1 if z == PINF or (isinstance(z, Fraction) and z > 0) else -1 if z != 0 else 0
        return Fraction(sz * (1 if S == PINF else -1))
    if z in (PINF, NINF):
        return z if S > 0 else omega("Negate", z)
    return z / S


def _fold(op, start, zs):
    r = start
    for z in zs:
        r = omega(op, r, z)
    return r


@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_block_operations_every_mode(cfg):
    keys = CONFIGS[cfg]
    (Fs, Fx, Fr), (fs, fx, fr) = [ref_format(*k) for k in keys], [sf_format(*k) for k in keys]
    rng = np.random.default_rng(cfg)
    n = 0
    for s in _scales(Fs, rng):
        S = _v(Fs, s)
        for size in SIZES:
            x, y, w = rng.integers(0, 1 << keys[1][0], (3, size))
            X, Y, W = ([_v(Fx, c) for c in a] for a in (x, y, w))
            Z = [omega("Multiply", S, v) for v in X]
            ZY = [omega("Multiply", S, v) for v in Y]
            ZW = [omega("Multiply", S, v) for v in W]
            total = _fold("Add", Fraction(0), Z)
            prod = _fold("Multiply", Fraction(1), Z)
            dot = _fold("Add", Fraction(0), [omega("Multiply", a, b) for a, b in zip(Z, ZY)])
            for mode in MODES:
                for sat in SATS:
                    P = lambda v: project_ref(Fr, v, sat, mode)   # noqa: E731
                    assert list(p3109.convert_from_block(s, x, fs, fx, fr, mode, sat)) == [P(z) for z in Z]
                    assert list(p3109.convert_to_block(x, s, fx, fs, fr, mode, sat)[1]) == \
                        [P(_div(v, S)) for v in X]
                    assert p3109.block_reduce_add(s, x, fs, fx, fr, mode, sat) == P(total)
                    assert p3109.block_reduce_multiply(s, x, fs, fx, fr, mode, sat) == P(prod)
                    assert p3109.block_dot_product(s, x, s, y, fs, fx, fs, fx, fr, mode, sat) == P(dot)
                    for op, blocks, want in (
                            ("Add", (x, y), [omega("Add", a, b) for a, b in zip(Z, ZY)]),
                            ("Subtract", (x, y), [omega("Subtract", a, b) for a, b in zip(Z, ZY)]),
                            ("Multiply", (x, y), [omega("Multiply", a, b) for a, b in zip(Z, ZY)]),
                            ("FMA", (x, y, w), [omega("FMA", a, b, c) for a, b, c in zip(Z, ZY, ZW)]),
                            ("FAA", (x, y, w), [omega("FAA", a, b, c) for a, b, c in zip(Z, ZY, ZW)]),
                            ("Negate", (x,), [omega("Negate", a) for a in Z]),
                            ("Abs", (x,), [omega("Abs", a) for a in Z])):
                        k = len(blocks)
                        _, got = p3109.block_op(op, [(s, b) for b in blocks], [fs] * k, [fx] * k, s, fs, fr,
                                                mode, sat)
                        assert list(got) == [P(_div(z, S)) for z in want], (op, s, size, mode, sat)
                    n += 1
            # ConvertToBlockMaxAbsFinite: the scale in each mode, then the block
            fin = [abs(v) for v in X if isinstance(v, Fraction)]
            M = max(fin) if fin else (PINF if any(v in (PINF, NINF) for v in X) else NAN)
            for mode in MODES:
                s_got, got = p3109.convert_to_block_max_abs_finite(x, fx, fs, fr, mode, "SatFinite",
                                                                   "NearestTiesToEven", "SatNone")
                assert s_got == project_ref(Fs, M, "SatFinite", mode)
                assert list(got) == [project_ref(Fr, _div(v, _v(Fs, s_got)), "SatNone", "NearestTiesToEven")
                                     for v in X]
    assert n == len(_scales(Fs, np.random.default_rng(cfg))) * len(SIZES) * len(MODES) * len(SATS)


def test_stochastic_words_and_bad_calls():
    """StochasticA words reach each element of an elementwise block operation and the
    one rounding of a reduction (the same results as softfp8's exact rounding)."""
    keys = CONFIGS[0]
    (Fs, Fx, Fr), (fs, fx, fr) = [ref_format(*k) for k in keys], [sf_format(*k) for k in keys]
    rng = np.random.default_rng(11)
    x = rng.integers(0, 256, 33)
    s = 120
    r = rng.integers(0, 1 << 8, 33)
    a = p3109.convert_from_block(s, x, fs, fx, fr, sr="A", sr_bits=8, random_bits=r)
    for i in range(33):
        assert a[i] == p3109.convert_from_block(s, [x[i]], fs, fx, fr, sr="A", sr_bits=8, random_bits=[r[i]])[0]
    up = p3109.block_reduce_add(s, x, fs, fx, fr, sr="A", sr_bits=8, random_bits=[255])
    down = p3109.block_reduce_add(s, x, fs, fx, fr, sr="A", sr_bits=8, random_bits=[0])
    tot = _fold("Add", Fraction(0), [omega("Multiply", _v(Fs, s), _v(Fx, c)) for c in x])
    assert {up, down} <= {project_ref(Fr, tot, "SatFinite", m) for m in ("TowardZero", "TowardPositive",
                                                                         "TowardNegative")}
    with pytest.raises(ValueError, match="saturation"):
        p3109.block_reduce_add(s, x, fs, fx, fr, saturation="SatSome")
    with pytest.raises(ValueError, match="different sizes"):
        p3109.block_dot_product(s, x, s, x[:3], fs, fx, fs, fx, fr)
    with pytest.raises(ValueError, match="takes 2 block"):
        p3109.block_op("Add", [(s, x)], [fs], [fx], s, fs, fr)
    with pytest.raises(ValueError, match="must be a code of"):
        p3109.block_reduce_add(256, x, fs, fx, fr)


MORE = {"Divide": 2, "Recip": 1, "Sqrt": 1, "RSqrt": 1, "CopySign": 2, "Minimum": 2, "Maximum": 2, "MinimumNumber": 2, "MaximumNumber": 2,
        "MinimumMagnitude": 2, "MaximumMagnitude": 2, "MinimumMagnitudeNumber": 2, "MaximumMagnitudeNumber": 2,
        "MinimumFinite": 2, "MaximumFinite": 2, "Clamp": 3, "FMA": 3, "Add": 2}


def _omega(op, *X):
    if op == "Recip":
        return omega("Divide", Fraction(1), X[0])
    if op == "Sqrt":   # the MPFR record of sqrt at S X (a binary64 value): 64 bits and sticky
        x = X[0]
        if x == NAN or x == NINF or (isinstance(x, Fraction) and x < 0):
            return NAN
        return x if x in (PINF, 0) else _value(mp.unary_exact("sqrt", float(x)))
    if op == "RSqrt":  # 4.10.8: RSqrt(0) = NaN; MPFR's rec_sqrt otherwise
        x = X[0]
        if x == NAN or x == NINF or x == 0 or (isinstance(x, Fraction) and x < 0):
            return NAN
        return Fraction(0) if x == PINF else _value(mi.unary_exact("rsqrt", float(x)))
    return omega(op, *X)


@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_mixed_format_quotients_and_selections(cfg):
    """Divide, Recip, Sqrt and RSqrt (MPFR), CopySign, the selections of 4.11.1-4.11.3 and Clamp as block
    operations (5.4), each operand block in its own scale and element formats (the
    mixed-format specializations), result scale in a third: every mode x saturation."""
    keys = CONFIGS[cfg]
    Fr, fr = ref_format(*keys[2]), sf_format(*keys[2])
    blocks_k = [(CONFIGS[(cfg + j) % 3][0], CONFIGS[(cfg + j) % 3][1]) for j in range(3)]
    Fb = [(ref_format(*a), ref_format(*b)) for a, b in blocks_k]
    fb = [(sf_format(*a), sf_format(*b)) for a, b in blocks_k]
    Fsr, fsr = ref_format(*CONFIGS[(cfg + 1) % 3][0]), sf_format(*CONFIGS[(cfg + 1) % 3][0])
    rng = np.random.default_rng(50 + cfg)
    n = 0
    for sr_ in _scales(Fsr, rng)[::2]:
        SR = _v(Fsr, sr_)
        scales = [int(rng.choice(_scales(Fs, rng))) for Fs, _ in Fb]
        xs = [rng.integers(0, 1 << k[1][0], 33) for k in blocks_k]
        Z = [[omega("Multiply", _v(Fs, s), _v(Fx, c)) for c in x] for (Fs, Fx), s, x in zip(Fb, scales, xs)]
        for op, k in MORE.items():
            want_exact = [_div(_omega(op, *zs[:k]), SR) for zs in zip(*Z)]
            for mode in MODES:
                for sat in SATS:
                    _, got = p3109.block_op(op, list(zip(scales[:k], xs[:k])), [f for f, _ in fb[:k]],
                                            [f for _, f in fb[:k]], sr_, fsr, fr, mode, sat)
                    assert list(got) == [project_ref(Fr, v, sat, mode) for v in want_exact], (op, mode, sat)
                    n += got.size
    assert n == len(_scales(Fsr, np.random.default_rng(50 + cfg))[::2]) * len(MORE) * 18 * 33


# ---- the elementary functions of 5.4 on blocks: f(S X) / S_r, correctly rounded ----

ELEM = ("Exp", "Exp2", "Log", "Log2", "LogOnePlus", "ExpMinusOne", "Sin", "Cos", "Tan", "ArcSin", "ArcCos",
        "ArcTan", "Sinh", "Cosh", "Tanh", "ArcSinh", "ArcCosh", "ArcTanh", "SinPi", "CosPi", "TanPi",
        "ArcSinPi", "ArcCosPi", "ArcTanPi", "Softplus")


def _unit_scales(Fs):
    """finite non-zero scale codes of value in [1/8, 2] (arguments where the functions turn)"""
    return [c for c, v in enumerate(Fs.values) if isinstance(v, Fraction) and Fraction(1, 8) <= abs(v) <= 2]


def _elem_want(op, Z, SR):
    """the reference datum of op(z) / S_r: MPFR's 64-bit truncation and sticky at the exact
    z = S X (test_p3109_ops.omega: C99 F.9 / IEEE 754 9.2.1 specials, P3109's TanPi NaN),
    divided by S_r (omega-BlockProject 5.1.2)"""
    return [_div(omega(op, z), SR) for z in Z]


@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_elementary_block_ops_every_mode(cfg):
    """Every unary elementary function of 5.4 as BlockOp: Project_fr(f(S X_i) / S_r) against
    MPFR at the exact S X (up to 8 + 8 significant bits, beyond the element format), the
    result scale S_r in a third format (non-power-of-two significands in configs 1 and 2):
    special, extreme and unit-range scales, block sizes 1, 2, 7, 32, 33 (one per
    function and scale, in turn), every deterministic mode x saturation."""
    keys = CONFIGS[cfg]
    (Fs, Fx, Fr), (fs, fx, fr) = [ref_format(*k) for k in keys], [sf_format(*k) for k in keys]
    Fsr, fsr = ref_format(*CONFIGS[(cfg + 1) % 3][0]), sf_format(*CONFIGS[(cfg + 1) % 3][0])
    rng = np.random.default_rng(70 + cfg)
    scales = _scales(Fs, rng) + [int(c) for c in rng.choice(_unit_scales(Fs), 3, replace=False)]
    srs = [int(c) for c in rng.choice(_unit_scales(Fsr), 2, replace=False)] + _scales(Fsr, rng)[::3]
    n = cases = 0
    for j, s in enumerate(scales):
        S = _v(Fs, s)
        for k, op in enumerate(ELEM):
            size = SIZES[(j + k) % len(SIZES)]
            sr_ = srs[(j + k) % len(srs)]
            x = rng.integers(0, 1 << keys[1][0], size)
            want = _elem_want(op, [omega("Multiply", S, _v(Fx, c)) for c in x], _v(Fsr, sr_))
            for mode in MODES:
                for sat in SATS:
                    _, got = p3109.block_op(op, [(s, x)], [fs], [fx], sr_, fsr, fr, mode, sat)
                    assert list(got) == [project_ref(Fr, v, sat, mode) for v in want], (op, s, sr_, mode, sat)
                    n += got.size
                    cases += 1
    assert cases == len(scales) * len(ELEM) * len(MODES) * len(SATS)
    assert n == sum(SIZES[(j + k) % len(SIZES)] for j in range(len(scales)) for k in range(len(ELEM))) * 18


def test_elementary_block_ops_overflow_underflow():
    """S X where f's value leaves fr's range after the division by S_r: exp / exp2 /
    expm1 / sinh / cosh / softplus of large |S X| (overflow and underflow), log / log2 /
    arcsinh of huge S X, tan near its poles' neighbourhood, with the smallest and largest
    result scales: every deterministic mode x saturation (SatNone's infinities and
    SatFinite's clamps), against MPFR."""
    keys = CONFIGS[0]
    (Fs, Fx, Fr), (fs, fx, fr) = [ref_format(*k) for k in keys], [sf_format(*k) for k in keys]
    fin = [c for c, v in enumerate(Fs.values) if isinstance(v, Fraction) and v != 0]
    big = [c for c in fin if 16 <= Fs.values[c] <= 2 ** 20][:4]
    xs = np.array([c for c, v in enumerate(Fx.values) if isinstance(v, Fraction) and v != 0 and
                   abs(v) >= Fraction(1, 2)][::5])
    srs = (fin[0], fin[len(fin) // 2], fin[-1])
    ops = ("Exp", "Exp2", "ExpMinusOne", "Sinh", "Cosh", "Softplus", "Log", "Log2", "ArcSinh", "Tan")
    top = max(abs(v) for v in Fr.values if isinstance(v, Fraction))
    ends = {c for c, v in enumerate(Fr.values) if v in (PINF, NINF) or (isinstance(v, Fraction) and abs(v) == top)}
    n = saturated = 0
    for s in big:
        Z = [omega("Multiply", _v(Fs, s), _v(Fx, c)) for c in xs]
        for sr_ in srs:
            for op in ops:
                want = _elem_want(op, Z, _v(Fs, sr_))
                for mode in MODES:
                    for sat in SATS:
                        _, got = p3109.block_op(op, [(s, xs)], [fs], [fx], sr_, fs, fr, mode, sat)
                        ref = [project_ref(Fr, v, sat, mode) for v in want]
                        assert list(got) == ref, (op, s, sr_, mode, sat)
                        n += got.size
                        saturated += sum(c in ends for c in ref)
    assert n == len(big) * len(srs) * len(ops) * len(xs) * len(MODES) * len(SATS)
    assert saturated > n // 10   # the set does reach the range's ends


def test_elementary_block_ops_stochastic_and_bad_calls():
    """StochasticA reaches each element (the same as a one-element call, and one of the
    two directed roundings); the 49-bit bound of stochastic rounding with a wide result
    scale is refused with a ValueError naming the values; the elementary functions take
    one block."""
    keys = CONFIGS[0]
    (Fs, Fx, Fr), (fs, fx, fr) = [ref_format(*k) for k in keys], [sf_format(*k) for k in keys]
    rng = np.random.default_rng(12)
    s = _unit_scales(Fs)[0]
    x = rng.integers(0, 256, 33)
    r = rng.integers(0, 1 << 16, 33)
    want = _elem_want("Exp", [omega("Multiply", _v(Fs, s), _v(Fx, c)) for c in x], Fraction(1))
    one = [c for c, v in enumerate(Fs.values) if v == 1][0]
    _, a = p3109.block_op("Exp", [(s, x)], [fs], [fx], one, fs, fr, sr="A", sr_bits=16, random_bits=r)
    for i in range(33):
        _, b = p3109.block_op("Exp", [(s, x[i:i + 1])], [fs], [fx], one, fs, fr, sr="A", sr_bits=16,
                              random_bits=r[i:i + 1])
        assert a[i] == b[0]
        assert a[i] in {project_ref(Fr, want[i], "SatFinite", m) for m in ("TowardNegative", "TowardPositive")}
    f15, Fsr, fsr = sf_format(15, 14, True, True), ref_format(8, 4, True, True), sf_format(8, 4, True, True)
    wide = [c for c, v in enumerate(Fsr.values) if v == Fraction(15, 8)][0]   # 4-bit odd significand
    with pytest.raises(ValueError, match=f"sr_bits=32: .* sr_={wide}'s odd significand is 51, above 49"):
        p3109.block_op("Exp", [(s, x)], [fs], [fx], wide, fsr, f15, sr="A", sr_bits=32,
                       random_bits=np.zeros(33, np.uint32))
    _, got = p3109.block_op("Exp", [(s, x)], [fs], [fx], wide, fsr, f15, sr="A", sr_bits=30,
                            random_bits=np.zeros(33, np.uint32))          # 49: allowed
    assert got.size == 33
    # the C function refuses the same call before writing any element (a bad call)
    from softfp8 import _ext
    out = np.full(33, 0x1234, f15.storage)
    with pytest.raises(ValueError, match="bad call"):
        _ext.p3109_block("op", p3109._env_of(f15, "stochastic", 32), np.zeros(33, np.uint32), 0,
                         (fs.params, fx.params, fsr.params, f15.params), (s, wide),
                         (x.astype(fx.storage),), out, p3109._OP_ID["Exp"])
    assert (out == 0x1234).all()
    with pytest.raises(ValueError, match="takes 1 block"):
        p3109.block_op("Sin", [(s, x), (s, x)], [fs, fs], [fx, fx], one, fs, fr)
    with pytest.raises(ValueError, match="not a block operation"):
        p3109.block_op("Log10", [(s, x)], [fs], [fx], one, fs, fr)


def test_elementary_block_ops_wide_products():
    """S X with 17 significant bits (a 7-bit scale significand times a 10-bit element one:
    wider than every storage format, the case the value-level entries exist for) and a
    result scale with a 5-bit odd significand, 12-bit result: every function, 33
    elements, every deterministic mode x saturation, against MPFR."""
    ks, kx, ksr, kr = (8, 7, True, True), (12, 10, True, True), (8, 6, False, True), (12, 9, True, False)
    (Fs, Fx, Fsr, Fr), (fs, fx, fsr, fr) = [ref_format(*k) for k in (ks, kx, ksr, kr)], \
        [sf_format(*k) for k in (ks, kx, ksr, kr)]
    rng = np.random.default_rng(90)
    odd7 = [c for c in _unit_scales(Fs) if (Fs.values[c] * 64).denominator == 1 and (Fs.values[c] * 64) % 2]
    odd5 = [c for c in _unit_scales(Fsr) if (Fsr.values[c] * 32).denominator == 1 and (Fsr.values[c] * 32) % 2]
    assert odd7 and odd5
    fin = [c for c, v in enumerate(Fx.values) if isinstance(v, Fraction) and v != 0]
    n = wide = widest = 0
    for k, op in enumerate(ELEM):
        s, sr_ = int(rng.choice(odd7)), int(rng.choice(odd5))
        x = rng.choice(fin, 33)
        Z = [omega("Multiply", _v(Fs, s), _v(Fx, c)) for c in x]
        odd = [abs(z.numerator) // (abs(z.numerator) & -abs(z.numerator)) for z in Z]
        wide += sum(m.bit_length() > 10 for m in odd)
        widest = max(widest, max(m.bit_length() for m in odd))
        want = _elem_want(op, Z, _v(Fsr, sr_))
        for mode in MODES:
            for sat in SATS:
                _, got = p3109.block_op(op, [(s, x)], [fs], [fx], sr_, fsr, fr, mode, sat)
                assert list(got) == [project_ref(Fr, v, sat, mode) for v in want], (op, s, sr_, mode, sat)
                n += got.size
    assert n == len(ELEM) * 33 * len(MODES) * len(SATS)
    assert wide > len(ELEM) * 33 // 2 and widest == 17   # most products are wider than the formats


@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_elementary_block_ops_two_blocks(cfg):
    """Hypot (4.10.14: NaN with a NaN operand), ArcTan2(S_y Y, S_x X) and ArcTan2Pi as BlockOp
    of two blocks in their own formats (4.10.15-16: NaN at (0, 0) and (+-inf, +-inf)),
    including exact hypotenuses, against MPFR at the exact scaled
    operands: special and unit-range scales, 33 elements, every deterministic mode x
    saturation."""
    keys = CONFIGS[cfg]
    Fr, fr = ref_format(*keys[2]), sf_format(*keys[2])
    ky, kx = CONFIGS[cfg], CONFIGS[(cfg + 1) % 3]
    (Fsy, Fy, Fsx, Fx), (fsy, fy, fsx, fx) = [ref_format(*k) for k in (ky[0], ky[1], kx[0], kx[1])], \
        [sf_format(*k) for k in (ky[0], ky[1], kx[0], kx[1])]
    Fsr, fsr = ref_format(*CONFIGS[(cfg + 2) % 3][0]), sf_format(*CONFIGS[(cfg + 2) % 3][0])
    rng = np.random.default_rng(110 + cfg)
    pairs = [(a, b) for a in _scales(Fsy, rng)[::2] + _unit_scales(Fsy)[:2]
             for b in _unit_scales(Fsx)[:1] + _scales(Fsx, rng)[1::3]]
    n = 0
    for j, (sy, sx) in enumerate(pairs):
        sr_ = int(rng.choice(_unit_scales(Fsr)))
        y, x = rng.integers(0, 1 << ky[1][0], 33), rng.integers(0, 1 << kx[1][0], 33)
        Zy = [omega("Multiply", _v(Fsy, sy), _v(Fy, c)) for c in y]
        Zx = [omega("Multiply", _v(Fsx, sx), _v(Fx, c)) for c in x]
        for op in ("Hypot", "ArcTan2", "ArcTan2Pi"):
            want = [_div(omega(op, a, b), _v(Fsr, sr_)) for a, b in zip(Zy, Zx)]
            for mode in MODES:
                for sat in SATS:
                    _, got = p3109.block_op(op, [(sy, y), (sx, x)], [fsy, fsx], [fy, fx], sr_, fsr, fr, mode, sat)
                    assert list(got) == [project_ref(Fr, v, sat, mode) for v in want], (op, sy, sx, mode, sat)
                    n += got.size
    assert n == len(pairs) * 3 * 33 * len(MODES) * len(SATS)


def test_hypot_block_exact_hypotenuses():
    """Hypot(S 3 2^j, S 4 2^j) = 5 S 2^j exactly (the exact-square path at the scaled operands,
    S = 3/2 in config 1's scale format): divided by S_r = S it is representable (every mode
    gives it, no rounding), by S_r = 1 it is rounded; every mode x saturation."""
    keys = CONFIGS[1]
    (Fs, Fx, Fr), (fs, fx, fr) = [ref_format(*k) for k in keys], [sf_format(*k) for k in keys]
    three = [c for c, v in enumerate(Fx.values) if isinstance(v, Fraction) and v > 0 and
             (v / 3).numerator == 1 and ((v / 3).denominator & ((v / 3).denominator - 1)) == 0]
    four = [c for c, v in enumerate(Fx.values) if isinstance(v, Fraction) and v == Fx.values[three[0]] * 4 / 3]
    s = [c for c, v in enumerate(Fs.values) if v == Fraction(3, 2)][0]
    one = [c for c, v in enumerate(Fs.values) if v == 1][0]
    assert three and four
    y, x = np.array(three[:1] * 3), np.array(four[:1] * 3)
    exact = 0
    for sr_ in (s, one):          # 5 2^j / 1: exact; 5 (3/2) 2^j: 4 bits, rounded in fr (p = 3)
        want = Fraction(3, 2) * 5 * Fx.values[three[0]] / 3 / Fs.values[sr_]
        for mode in MODES:
            for sat in SATS:
                _, got = p3109.block_op("Hypot", [(s, y), (s, x)], [fs, fs], [fx, fx], sr_, fs, fr, mode, sat)
                assert list(got) == [project_ref(Fr, want, sat, mode)] * 3
                exact += Fr.values[int(got[0])] == want
    assert exact == len(MODES) * len(SATS)   # with S_r = S every mode gives 5 2^j exactly


@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_elementary_block_ops_stochastic_exact(cfg):
    """StochasticA and StochasticB (n = 4, 16 random bits, a random word per element) of every
    unary elementary function and ArcTan2 against the reference's stochastic rounding of
    MPFR's value divided by S_r (non-power-of-two S_r in configs 1, 2), every saturation."""
    keys = CONFIGS[cfg]
    (Fs, Fx, Fr), (fs, fx, fr) = [ref_format(*k) for k in keys], [sf_format(*k) for k in keys]
    Fsr, fsr = ref_format(*CONFIGS[(cfg + 1) % 3][0]), sf_format(*CONFIGS[(cfg + 1) % 3][0])
    rng = np.random.default_rng(130 + cfg)
    n_el = 0
    for k, op in enumerate(ELEM + ("ArcTan2",)):
        s = int(rng.choice(_unit_scales(Fs) + _scales(Fs, rng)[-4:]))
        sr_ = int(rng.choice(_unit_scales(Fsr)))
        blocks = [rng.integers(0, 1 << keys[1][0], 11) for _ in range(1 + (op == "ArcTan2"))]
        Z = [[omega("Multiply", _v(Fs, s), _v(Fx, c)) for c in b] for b in blocks]
        want = [_div(omega(op, *zs), _v(Fsr, sr_)) for zs in zip(*Z)]
        for variant in "AB":
            for nbits in (4, 16):
                r = rng.integers(0, 1 << nbits, 11)
                for sat in SATS:
                    _, got = p3109.block_op(op, [(s, b) for b in blocks], [fs] * len(blocks), [fx] * len(blocks),
                                            sr_, fsr, fr, saturation=sat, sr=variant, sr_bits=nbits, random_bits=r)
                    assert list(got) == [project_ref(Fr, v, sat, variant, nbits, int(ri)) for v, ri in zip(want, r)], \
                        (op, variant, nbits, sat)
                    n_el += got.size
    assert n_el == (len(ELEM) + 1) * 2 * 2 * len(SATS) * 11


MIXED_OPS = {"Add": 2, "Multiply": 2, "Divide": 2, "FMA": 3, "Sqrt": 1, "Convert": 1, "MaximumMagnitude": 2,
             "Exp": 1, "ArcTan2": 2}


@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_apply_mixed_formats(cfg):
    """p3109.apply on operands of different formats into a third (the report's Op<fx, fy, fr>,
    Annex G group A) against the report's definitions (omega, MPFR for Sqrt / Exp /
    ArcTan2), every deterministic mode x saturation; every code of the first operand's
    format against random codes of the others, broadcast."""
    fmts_k = [CONFIGS[cfg][1], CONFIGS[(cfg + 1) % 3][1], CONFIGS[(cfg + 2) % 3][1]]
    Fk = [ref_format(*k) for k in fmts_k]
    fk = [sf_format(*k) for k in fmts_k]
    Fr, fr = ref_format(*CONFIGS[cfg][2]), sf_format(*CONFIGS[cfg][2])
    rng = np.random.default_rng(90 + cfg)
    n = 0
    for op, k in MIXED_OPS.items():
        xs = [np.arange(1 << fmts_k[0][0])] + [rng.integers(0, 1 << fmts_k[j][0], 1 << fmts_k[0][0])
                                                 for j in range(1, k)]
        arrs = [x.astype(f.storage).view(f.dtype) for x, f in zip(xs, fk[:k])]
        vals = [[_v(F, c) for c in x] for x, F in zip(xs, Fk[:k])]
        if op == "Exp":
            want = [omega("Exp", *z) for z in zip(*vals)]
        else:
            want = [_omega(op, *z) for z in zip(*vals)]
        for mode in MODES:
            for sat in SATS:
                got = p3109.apply(op, *arrs, rounding=mode, saturation=sat, out_format=fr)
                assert got.dtype == fr.dtype and got.shape == arrs[0].shape
                assert list(got.view(fr.storage)) == [project_ref(Fr, v, sat, mode) for v in want], (op, mode, sat)
                n += got.size
    assert n == len(MIXED_OPS) * 18 * (1 << fmts_k[0][0])
    assert set(p3109.OPERATIONS) <= set(p3109._BLOCK_OPS)      # every operation has its mixed-format form
    with pytest.raises(TypeError, match="out_format"):
        p3109.apply("Exp", arrs[0], out_format="no such format")
