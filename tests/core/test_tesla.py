"""Tesla CFloat8 / SHP / UHP quirks.

Expected values are written out from the Tesla document (Tables 3-6 and the
text around them) and SPEC.md, or computed by the independent Fraction model of
tests/models/fraction_model.py -- never by softfp8.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import softfp8
import softfp8.bits as sb

from ..models.fraction_model import (DENORMAL, DIVBYZERO, INEXACT, INVALID, OVERFLOW,
                                     ROUNDINGS, SPECS, UNDERFLOW)

FAMILIES = ("cfloat8_143", "cfloat8_152", "shp")
LAYOUT = {"cfloat8_143": (8, 4, 3), "cfloat8_152": (8, 5, 2), "shp": (16, 5, 10)}


def make(family, bias, subnormals=None):
    factory = getattr(softfp8, family)
    if subnormals is None:
        return factory(bias=bias)
    return factory(bias=bias, subnormals=subnormals)


def f64(values):
    return np.asarray(values, dtype=np.float64)


def from_f64_bits(bits):
    return np.asarray(bits, dtype=np.uint64).view(np.float64)


def one(codes_flags):
    c, f = codes_flags
    return int(np.asarray(c)), int(np.asarray(f))


# ---------------------------------------------------------------------------
# ranges of the Tesla tables
# ---------------------------------------------------------------------------

# Table 4 (CFloat8_1_4_3): bias -> (Emin, Emax), normal range 1.000 x 2^Emin .. 1.111 x 2^Emax
TABLE4 = {0: (1, 15), 1: (0, 14), 2: (-1, 13), 3: (-2, 12), 31: (-30, -16),
          60: (-59, -45), 61: (-60, -46), 62: (-61, -47), 63: (-62, -48)}
# Table 5 (CFloat8_1_5_2): normal range 1.00 x 2^Emin .. 1.11 x 2^Emax
TABLE5 = {0: (1, 31), 1: (0, 30), 2: (-1, 29), 3: (-2, 28), 31: (-30, 0),
          60: (-59, -29), 61: (-60, -30), 62: (-61, -31), 63: (-62, -32)}


@pytest.mark.parametrize("bias", sorted(TABLE4))
def test_table4_cfloat8_143(bias):
    emin, emax = TABLE4[bias]
    fmt = make("cfloat8_143", bias)
    assert fmt.min_normal == 2.0 ** emin
    assert fmt.max == 1.875 * 2.0 ** emax  # 1.111b
    vals, fl = sb.to_float(np.array([0x08, 0x7F, 0x88, 0xFF]), fmt)
    assert list(np.asarray(vals)) == [2.0 ** emin, 1.875 * 2.0 ** emax,
                                      -(2.0 ** emin), -1.875 * 2.0 ** emax]
    assert not np.asarray(fl).any()


@pytest.mark.parametrize("bias", sorted(TABLE5))
def test_table5_cfloat8_152(bias):
    emin, emax = TABLE5[bias]
    fmt = make("cfloat8_152", bias)
    assert fmt.min_normal == 2.0 ** emin
    assert fmt.max == 1.75 * 2.0 ** emax  # 1.11b
    vals, fl = sb.to_float(np.array([0x04, 0x7F, 0x84, 0xFF]), fmt)
    assert list(np.asarray(vals)) == [2.0 ** emin, 1.75 * 2.0 ** emax,
                                      -(2.0 ** emin), -1.75 * 2.0 ** emax]
    assert not np.asarray(fl).any()


def test_table_extremes_written_out():
    assert make("cfloat8_143", 0).max == 1.875 * 2.0 ** 15 == 61440.0
    assert make("cfloat8_143", 0).min_normal == 2.0
    assert make("cfloat8_143", 63).min_normal == 2.0 ** -62
    assert make("cfloat8_143", 63).max == 1.875 * 2.0 ** -48
    assert make("cfloat8_152", 0).max == 1.75 * 2.0 ** 31
    assert make("cfloat8_152", 0).min_normal == 2.0
    assert make("cfloat8_152", 63).min_normal == 2.0 ** -62
    assert make("cfloat8_152", 63).max == 1.75 * 2.0 ** -32
    assert make("shp", 0).max == (2 - 2.0 ** -10) * 2.0 ** 31
    assert make("shp", 63).min_normal == 2.0 ** -62
    assert make("shp", 63).max == (2 - 2.0 ** -10) * 2.0 ** -32


@pytest.mark.parametrize("family", FAMILIES)
def test_properties_every_bias(family):
    bits, E, M = LAYOUT[family]
    top = {"cfloat8_143": Fraction(15, 8), "cfloat8_152": Fraction(7, 4),
           "shp": 2 - Fraction(1, 2 ** 10)}[family]
    for bias in range(64):
        fmt = make(family, bias)
        emax = (2 ** E - 1) - bias
        assert fmt.max == float(top * Fraction(2) ** emax), (family, bias)
        assert fmt.min_normal == 2.0 ** (1 - bias), (family, bias)
        assert fmt.min_subnormal == 2.0 ** (-bias - M), (family, bias)  # 0.0..01 x 2^-bias
        assert fmt.eps == 2.0 ** -M
        assert fmt.bias == bias and fmt.exp_bits == E and fmt.man_bits == M
        assert fmt.bits == bits and fmt.signed is True
        assert fmt.specials == "none" and fmt.subnormals == "tesla"
        assert fmt.saturate is True
        assert fmt.name == f"{family}(bias={bias})"
        assert fmt.storage == (np.dtype(np.uint8) if bits == 8 else np.dtype(np.uint16))
        fi = make(family, bias, "ieee")
        assert fi.subnormals == "ieee"
        assert fi.min_subnormal == 2.0 ** (1 - bias - M)
        assert fi.max == fmt.max and fi.min_normal == fmt.min_normal


# ---------------------------------------------------------------------------
# decoding: literal subnormals 2^-bias x 0.m, every code
# ---------------------------------------------------------------------------

SUB_BIASES = (0, 1, 7, 15, 20, 31, 62, 63)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("bias", SUB_BIASES)
def test_subnormals_literal(family, bias):
    bits, E, M = LAYOUT[family]
    sbit = 1 << (bits - 1)
    fmt = make(family, bias)
    fmt_ieee = make(family, bias, "ieee")
    ms = np.arange(1, 2 ** M)
    codes = np.concatenate([ms, ms | sbit])
    expected = [m / 2.0 ** M * 2.0 ** -bias for m in range(1, 2 ** M)]
    expected = expected + [-v for v in expected]
    vals, fl = sb.to_float(codes, fmt)
    assert np.asarray(vals).tolist() == expected
    assert np.all(np.asarray(fl) == DENORMAL)  # every operand here is subnormal
    vals_i, fl_i = sb.to_float(codes, fmt_ieee)
    assert np.asarray(vals_i).tolist() == [2 * v for v in expected]  # 2^(1-bias) x 0.m
    assert np.all(np.asarray(fl_i) == DENORMAL)
    assert len(expected) == 2 * (2 ** M - 1)
    # the scalar decode method agrees
    for m in (1, 2 ** M - 1):
        assert fmt.decode(m) == m / 2.0 ** M * 2.0 ** -bias
        assert fmt.decode(m | sbit) == -(m / 2.0 ** M * 2.0 ** -bias)


@pytest.mark.parametrize("family", ("cfloat8_143", "cfloat8_152"))
def test_every_code_every_bias(ref, family):
    n = 0
    codes = np.arange(256)
    for bias in range(64):
        for subn in ("tesla", "ieee"):
            spec = ref.tesla_spec(family, bias, subn)
            fmt = make(family, bias, subn)
            vals, fl = sb.to_float(codes, fmt)
            exp = [ref.decode_float(spec, c) for c in range(256)]
            assert np.asarray(vals).tolist() == exp, (family, bias, subn)
            exp_fl = [DENORMAL if ref.classify(spec, c) == "sub" else 0 for c in range(256)]
            assert np.asarray(fl).tolist() == exp_fl
            n += 256
    assert n == 2 * 64 * 256


@pytest.mark.parametrize("bias", (0, 15, 31, 63))
def test_every_code_shp(ref, bias):
    spec = ref.tesla_spec("shp", bias)
    fmt = make("shp", bias)
    codes = np.arange(65536)
    vals, fl = sb.to_float(codes, fmt)
    vals = np.asarray(vals)
    assert vals.shape == (65536,)
    # exact reference: sign * (1.m or literal 0.m) * 2^e, built with ldexp (exact)
    c = codes
    sign = np.where(c & 0x8000, -1.0, 1.0)
    ef = (c >> 10) & 0x1F
    mf = (c & 0x3FF).astype(np.float64)
    exp = np.where(ef == 0, np.ldexp(mf, -bias - 10), np.ldexp(mf + 1024, ef - bias - 10))
    exp = sign * exp
    assert np.array_equal(vals, exp)
    assert np.array_equal(np.signbit(vals), np.signbit(exp))  # -0 stays -0
    assert np.array_equal(np.asarray(fl), np.where((ef == 0) & ((c & 0x3FF) != 0), DENORMAL, 0))
    # spot-check against the Fraction model
    for code in (0x0001, 0x03FF, 0x0400, 0x7BFF, 0x7FFF, 0x8001, 0xFFFF):
        assert vals[code] == ref.decode_float(spec, code)


# ---------------------------------------------------------------------------
# rounding across the gap (largest subnormal (1-2^-M) 2^-bias .. 2^(1-bias))
# ---------------------------------------------------------------------------

GAP_BIASES = (0, 1, 20, 63)


def gap_points(M, bias):
    L = (1 - Fraction(1, 2 ** M)) * Fraction(2) ** -bias
    H = Fraction(2) ** (1 - bias)
    mid = (L + H) / 2
    assert float(mid) == mid  # dyadic: exact in float64
    m = float(mid)
    return L, H, mid, {
        "below": np.nextafter(m, 0.0),
        "at": m,
        "above": np.nextafter(m, np.inf),
    }


def gap_explicit(mode, sign, where):
    """'L' (largest subnormal, odd code) or 'H' (smallest normal, even code)."""
    if mode == "nearest_even":
        return "L" if where == "below" else "H"  # tie -> even code = H
    if mode == "nearest_away":
        return "L" if where == "below" else "H"
    if mode == "toward_zero":
        return "L"
    if mode == "upward":
        return "L" if sign else "H"
    if mode == "downward":
        return "H" if sign else "L"
    if mode == "to_odd":
        return "L"  # truncation gives L, whose code is already odd
    raise ValueError(mode)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("bias", GAP_BIASES)
@pytest.mark.parametrize("mode", ROUNDINGS)
def test_gap_midpoint(ref, family, bias, mode):
    bits, E, M = LAYOUT[family]
    sbit = 1 << (bits - 1)
    fmt = make(family, bias)
    spec = ref.tesla_spec(family, bias)
    L, H, mid, pts = gap_points(M, bias)
    code = {"L": 2 ** M - 1, "H": 2 ** M}
    n = 0
    for tininess in ("after", "before"):
        for sign in (0, 1):
            for where, x in pts.items():
                xv = -x if sign else x
                got = one(sb.from_float(f64([xv]).reshape(()), fmt, rounding=mode,
                                        tininess=tininess))
                exp_code = code[gap_explicit(mode, sign, where)] | (sbit if sign else 0)
                # x is well inside the gap: inexact, and tiny under both rules
                # (its unbounded-exponent rounding is about 1.5 x 2^-bias < 2^(1-bias))
                assert got == (exp_code, INEXACT | UNDERFLOW), (
                    f"{fmt.name} {mode} tininess={tininess} x={xv!r} ({where} midpoint "
                    f"{float(mid)!r}): got {got[0]:#x} flags {got[1]:#x}, "
                    f"expected {exp_code:#x} flags {INEXACT | UNDERFLOW:#x}")
                assert got == tuple(ref.round_float(spec, xv, mode, tininess=tininess)[:2])
                n += 1
    assert n == 12


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("bias", GAP_BIASES)
@pytest.mark.parametrize("mode", ROUNDINGS)
@pytest.mark.parametrize("tininess", ("after", "before"))
def test_gap_many_points(ref, family, bias, mode, tininess):
    bits, E, M = LAYOUT[family]
    fmt = make(family, bias)
    spec = ref.tesla_spec(family, bias)
    L, H, mid, _ = gap_points(M, bias)
    Lf, Hf = float(L), float(H)
    sp = 2.0 ** (-bias - M)
    xs = [Lf, np.nextafter(Lf, 0), np.nextafter(Lf, 1.0), 2.0 ** -bias, 0.95 * Hf, Hf / 3 * 2,
          float(mid) - sp / 4, float(mid) + sp / 4, np.nextafter(Hf, 0), Hf,
          np.nextafter(Hf, 1.0), Lf - sp / 2, Lf - sp, Hf - sp / 2, Hf - sp,
          Hf - sp / 2 - sp / 8, Hf - sp / 2 + sp / 8]
    xs = xs + [-x for x in xs]
    codes, flags = sb.from_float(f64(xs), fmt, rounding=mode, tininess=tininess)
    got = list(zip(np.asarray(codes).tolist(), np.asarray(flags).tolist()))
    exp = [tuple(ref.round_float(spec, x, mode, tininess=tininess)[:2]) for x in xs]
    bad = [(x, g, e) for x, g, e in zip(xs, got, exp) if g != e]
    assert not bad, f"{fmt.name} {mode} {tininess}: (x, got, expected) {bad[:6]}"
    assert len(got) == 34


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("bias", (0, 20, 63))
def test_gap_arithmetic(family, bias):
    """largest subnormal + smallest subnormal = 2^-bias exactly, inside the gap."""
    bits, E, M = LAYOUT[family]
    fmt = make(family, bias)
    L, minsub, H = 2 ** M - 1, 1, 2 ** M
    # 2^-bias is 2^(-bias-M) above L and 2^-bias below H: nearest is L
    for mode, exp in (("nearest_even", L), ("nearest_away", L), ("toward_zero", L),
                      ("downward", L), ("upward", H), ("to_odd", L)):
        got = one(sb.add(fmt, L, minsub, rounding=mode))
        assert got == (exp, INEXACT | UNDERFLOW | DENORMAL), (mode, got)
    # smallest normal - smallest subnormal = 2^(1-bias) - 2^(-bias-M): inside the gap,
    # 2^(-bias-M) below H and 2^-bias above L -> nearest is H, inexact
    got = one(sb.sub(fmt, H, minsub))
    assert got[0] == H and got[1] & INEXACT and got[1] & DENORMAL


def _exhaustive(ref, family, bias, op, mode):
    bits, E, M = LAYOUT[family]
    spec = ref.tesla_spec(family, bias)
    fmt = make(family, bias)
    n = 2 ** bits
    a = np.repeat(np.arange(n), n)
    b = np.tile(np.arange(n), n)
    func = {"add": sb.add, "mul": sb.mul}[op]
    codes, flags = func(fmt, a, b, rounding=mode)
    codes = np.asarray(codes).tolist()
    flags = np.asarray(flags).tolist()
    dec = [ref.decode(spec, c) for c in range(n)]
    cls_sub = [ref.classify(spec, c) == "sub" for c in range(n)]
    cache = {}
    bad = []
    for i in range(n * n):
        x, y = dec[i // n], dec[i % n]
        va, vb = (x[1], x[2]), (y[1], y[2])
        s, m = ref.add_values(va, vb, mode) if op == "add" else ref.mul_values(va, vb)
        key = (s, m)
        if key not in cache:
            cache[key] = ref.round_value(spec, s, m, mode)
        ec, ef = cache[key]
        if cls_sub[i // n] or cls_sub[i % n]:
            ef |= DENORMAL
        if codes[i] != ec or flags[i] != ef:
            bad.append((f"{i // n:#x}", f"{i % n:#x}", f"got {codes[i]:#x}/{flags[i]:#x}",
                        f"expected {ec:#x}/{ef:#x}"))
    assert not bad, f"{fmt.name} {op} {mode}: {len(bad)} mismatches, e.g. {bad[:8]}"
    return n * n


@pytest.mark.slow
@pytest.mark.parametrize("family", ("cfloat8_143", "cfloat8_152"))
@pytest.mark.parametrize("op", ("add", "mul"))
@pytest.mark.parametrize("mode", ("nearest_even", "upward", "to_odd"))
def test_exhaustive_arith(ref, family, op, mode):
    bias = 5 if op == "add" else 12
    assert _exhaustive(ref, family, bias, op, mode) == 65536


# ---------------------------------------------------------------------------
# clamping: overflow, +-inf and NaN give +-max whatever the saturate option
# ---------------------------------------------------------------------------

SNAN64 = 0x7FF0000000000001
QNAN64_NEG = 0xFFF8000000000123


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("bias", (0, 31, 63))
@pytest.mark.parametrize("saturate", (None, False, True))
@pytest.mark.parametrize("mode", ROUNDINGS)
def test_clamping_conversions(family, bias, saturate, mode):
    bits, E, M = LAYOUT[family]
    fmt = make(family, bias)
    pmax = (1 << (bits - 1)) - 1  # 0.11..1.11..1
    nmax = (1 << bits) - 1
    maxv = float(fmt.max)

    def b64(v):
        return int(np.array([v], dtype=np.float64).view(np.uint64)[0])

    cases = [  # (float64 bit pattern, expected code, expected flags)
        (b64(np.inf), pmax, 0),
        (b64(-np.inf), nmax, 0),
        (0x7FF8000000000000, pmax, INVALID),
        (QNAN64_NEG, pmax, INVALID),  # a negative NaN also gives +max
        (SNAN64, pmax, INVALID),
        (b64(2 * maxv), pmax, OVERFLOW | INEXACT),
        (b64(-2 * maxv), nmax, OVERFLOW | INEXACT),
        (b64(1e300), pmax, OVERFLOW | INEXACT),
        (b64(-1e300), nmax, OVERFLOW | INEXACT),
        (b64(maxv), pmax, 0),
        (b64(-maxv), nmax, 0),
    ]
    x = from_f64_bits([c[0] for c in cases])
    codes, flags = sb.from_float(x, fmt, rounding=mode, saturate=saturate)
    got = list(zip(np.asarray(codes).tolist(), np.asarray(flags).tolist()))
    exp = [(c[1], c[2]) for c in cases]
    assert got == exp, [(c[0], g, e) for c, g, e in zip(cases, got, exp) if g != e]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("mode", ROUNDINGS)
def test_clamping_just_above_max(ref, family, mode):
    bits, E, M = LAYOUT[family]
    fmt = make(family, 10)
    spec = ref.tesla_spec(family, 10)
    maxv = fmt.max
    ulp = 2.0 ** ((2 ** E - 1) - 10 - M)
    xs = [maxv + ulp / 4, maxv + ulp / 2, maxv + ulp * 3 / 4, maxv + ulp, np.nextafter(maxv, np.inf)]
    xs = xs + [-x for x in xs]
    for sat in (None, False, True):
        codes, flags = sb.from_float(f64(xs), fmt, rounding=mode, saturate=sat)
        got = list(zip(np.asarray(codes).tolist(), np.asarray(flags).tolist()))
        exp = [tuple(ref.round_float(spec, x, mode)[:2]) for x in xs]
        assert got == exp, (mode, sat, xs, got, exp)
    # sanity of the model itself: max + 1 ulp always overflows into max
    assert ref.round_float(spec, maxv + ulp, mode)[:2] == ((1 << (bits - 1)) - 1,
                                                           OVERFLOW | INEXACT)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("saturate", (None, False, True))
@pytest.mark.parametrize("mode", ROUNDINGS)
def test_clamping_arithmetic(family, saturate, mode):
    bits, E, M = LAYOUT[family]
    fmt = make(family, 7)
    sbit = 1 << (bits - 1)
    pmax, nmax = sbit - 1, (1 << bits) - 1
    one_code = (7 << M)  # exponent field = bias -> 1.0
    opts = dict(rounding=mode, saturate=saturate)
    assert one(sb.mul(fmt, pmax, pmax, **opts)) == (pmax, OVERFLOW | INEXACT)
    assert one(sb.mul(fmt, nmax, pmax, **opts)) == (nmax, OVERFLOW | INEXACT)
    assert one(sb.add(fmt, pmax, pmax, **opts)) == (pmax, OVERFLOW | INEXACT)
    assert one(sb.sub(fmt, nmax, pmax, **opts)) == (nmax, OVERFLOW | INEXACT)
    # x / 0 is an exact infinity: delivered as max, divbyzero only
    assert one(sb.div(fmt, one_code, 0, **opts)) == (pmax, DIVBYZERO)
    assert one(sb.div(fmt, one_code | sbit, 0, **opts)) == (nmax, DIVBYZERO)
    assert one(sb.div(fmt, one_code, sbit, **opts)) == (nmax, DIVBYZERO)
    # 0/0 is NaN: +max with invalid only
    assert one(sb.div(fmt, 0, 0, **opts)) == (pmax, INVALID)
    # sqrt of a negative: NaN -> +max, invalid only
    assert one(sb.sqrt(fmt, one_code | sbit, **opts)) == (pmax, INVALID)


@pytest.mark.parametrize("family", FAMILIES)
def test_clamping_from_other_formats(family):
    fmt = make(family, 40)
    bits, E, M = LAYOUT[family]
    pmax, nmax = (1 << (bits - 1)) - 1, (1 << bits) - 1
    # e5m2: +inf 0x7C, -inf 0xFC, qNaN 0x7E, sNaN 0x7D
    codes, flags = sb.convert(np.array([0x7C, 0xFC, 0x7E, 0xFE, 0x7D]), softfp8.e5m2, fmt)
    assert np.asarray(codes).tolist() == [pmax, nmax, pmax, pmax, pmax]
    assert np.asarray(flags).tolist() == [0, 0, INVALID, INVALID, INVALID]
    # e5m2 57344 (0x7B) is far above max for bias 40 (max < 2^(31-40+1)): overflow
    codes, flags = sb.convert(np.array([0x7B, 0xFB]), softfp8.e5m2, fmt)
    assert np.asarray(codes).tolist() == [pmax, nmax]
    assert np.asarray(flags).tolist() == [OVERFLOW | INEXACT] * 2


# ---------------------------------------------------------------------------
# bias validation, format identity
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("bad", (-1, 64, 1.5, "x", 100, -63))
def test_bias_validation(family, bad):
    factory = getattr(softfp8, family)
    with pytest.raises((ValueError, TypeError)) as ei:
        factory(bias=bad)
    msg = str(ei.value)
    if isinstance(bad, str):
        assert issubclass(ei.type, TypeError), ei.type
        assert repr(bad) in msg or f'"{bad}"' in msg, msg
    else:
        assert str(bad) in msg, msg
    if isinstance(bad, int):
        assert issubclass(ei.type, ValueError), ei.type


@pytest.mark.parametrize("family", FAMILIES)
def test_bias_required_and_bounds(family):
    factory = getattr(softfp8, family)
    with pytest.raises(TypeError):
        factory()
    assert factory(bias=0).bias == 0
    assert factory(bias=63).bias == 63
    with pytest.raises((ValueError, TypeError)) as ei:
        factory(bias=20, subnormals="flush-ish")
    assert "flush-ish" in str(ei.value)


@pytest.mark.parametrize("family", FAMILIES)
def test_bias_identity(family):
    factory = getattr(softfp8, family)
    a, b, c = factory(bias=3), factory(bias=3), factory(bias=4)
    assert a == b and hash(a) == hash(b)
    assert not (a != b)
    assert a != c and not (a == c)
    assert a != factory(bias=3, subnormals="ieee")
    assert factory(bias=3, subnormals="ieee") == factory(bias=3, subnormals="ieee")
    assert len({factory(bias=k) for k in range(64)}) == 64
    assert len({factory(bias=k) for k in range(64)} | {factory(bias=k) for k in range(64)}) == 64
    d = {a: "x"}
    assert d[b] == "x"
    # different families with equal bias differ
    others = [f for f in FAMILIES if f != family]
    for o in others:
        assert getattr(softfp8, o)(bias=3) != a


# ---------------------------------------------------------------------------
# UHP
# ---------------------------------------------------------------------------

UHP_ONE = 31 << 10          # 0x7C00
UHP_TWO = 32 << 10
UHP_INF = 0xFC00
UHP_NAN = 0xFE00
UHP_MAX = 0xFBFF
UHP_SUBS = (0x0001, 0x0200, 0x03FF)
ALL_MODES = ROUNDINGS


def test_uhp_layout():
    u = softfp8.uhp
    assert u.bits == 16 and u.signed is False and u.exp_bits == 6 and u.man_bits == 10
    assert u.bias == 31 and u.subnormals == "flush" and u.specials == "ieee"
    assert u.max == (2 - 2.0 ** -10) * 2.0 ** 31
    assert u.min_normal == 2.0 ** -30
    vals, fl = sb.to_float(np.array([UHP_ONE, UHP_TWO, UHP_MAX, UHP_INF, 0x0400, 0]), u)
    vals = np.asarray(vals)
    assert vals[:3].tolist() == [1.0, 2.0, (2 - 2.0 ** -10) * 2.0 ** 31]
    assert vals[3] == np.inf and vals[4] == 2.0 ** -30 and vals[5] == 0.0
    assert not np.asarray(fl).any()
    vals, fl = sb.to_float(np.array([UHP_NAN, 0xFC01, 0xFFFF]), u)
    assert np.isnan(np.asarray(vals)).all()


@pytest.mark.parametrize("mode", ALL_MODES)
def test_uhp_subnormal_operands_flush(mode):
    u = softfp8.uhp
    o = dict(rounding=mode)
    for s in UHP_SUBS:
        for dt in (np.float64, np.float32):
            v, f = sb.to_float(np.array(s), u, dtype=dt, **o)
            assert float(np.asarray(v)) == 0.0 and not np.signbit(np.asarray(v))
            assert int(np.asarray(f)) == DENORMAL
        assert one(sb.add(u, s, UHP_ONE, **o)) == (UHP_ONE, DENORMAL)
        assert one(sb.add(u, s, s, **o)) == (0, DENORMAL)
        assert one(sb.mul(u, s, UHP_TWO, **o)) == (0, DENORMAL)
        assert one(sb.mul(u, s, UHP_INF, **o)) == (UHP_NAN, INVALID | DENORMAL)  # 0 * inf
        assert one(sb.div(u, UHP_ONE, s, **o)) == (UHP_INF, DIVBYZERO | DENORMAL)  # 1 / 0
        assert one(sb.div(u, s, UHP_ONE, **o)) == (0, DENORMAL)
        assert one(sb.sub(u, UHP_ONE, s, **o)) == (UHP_ONE, DENORMAL)
        assert one(sb.sqrt(u, s, **o)) == (0, DENORMAL)
        # to float16: read as zero
        assert one(sb.convert(np.array(s), u, softfp8.float16, **o)) == (0, DENORMAL)


TINY_VALUES = (2.0 ** -31, 0.75 * 2.0 ** -30, 2.0 ** -40, 3 * 2.0 ** -40, 2.0 ** -1000,
               1023 * 2.0 ** -40, 2.0 ** -1022)


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("tininess", ("after", "before"))
def test_uhp_tiny_results_flush(ref, mode, tininess):
    u = softfp8.uhp
    o = dict(rounding=mode, tininess=tininess)
    codes, flags = sb.from_float(f64(TINY_VALUES), u, **o)
    assert np.asarray(codes).tolist() == [0] * len(TINY_VALUES)
    assert np.asarray(flags).tolist() == [UNDERFLOW | INEXACT] * len(TINY_VALUES)
    # arithmetic: 2^-20 * 2^-20 = 2^-40, 2^-30 / 4, 2^-30 - 2^-31 ... are all tiny
    c20 = (31 - 20) << 10
    assert one(sb.mul(u, c20, c20, **o)) == (0, UNDERFLOW | INEXACT)
    assert one(sb.div(u, 0x0400, 33 << 10, **o)) == (0, UNDERFLOW | INEXACT)  # 2^-30 / 4
    assert one(sb.sub(u, 0x0401, 0x0400, **o)) == (0, UNDERFLOW | INEXACT)  # 2^-40
    # -tiny: rounds to zero, delivered as +0 (no sign bit)
    codes, flags = sb.from_float(-f64(TINY_VALUES), u, **o)
    assert np.asarray(codes).tolist() == [0] * len(TINY_VALUES)
    assert np.asarray(flags).tolist() == [UNDERFLOW | INEXACT] * len(TINY_VALUES)
    # a float64 subnormal source is also subnormal in its own format: denormal too
    assert one(sb.from_float(f64(5e-324), u, **o)) == (0, UNDERFLOW | INEXACT | DENORMAL)
    # the model agrees on all of these
    for x in TINY_VALUES:
        assert ref.round_float(SPECS["uhp"], x, mode, tininess=tininess)[:2] == (
            0, UNDERFLOW | INEXACT)


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("tininess", ("after", "before"))
def test_uhp_near_min_normal(ref, mode, tininess):
    u = softfp8.uhp
    mn = 2.0 ** -30
    xs = [mn * (1 - 2.0 ** -12), mn * (1 - 2.0 ** -11), mn * (1 - 2.0 ** -11 - 2.0 ** -14),
          mn * (1 - 2.0 ** -10), mn, mn * (1 + 2.0 ** -11), np.nextafter(mn, 0)]
    codes, flags = sb.from_float(f64(xs), u, rounding=mode, tininess=tininess)
    got = list(zip(np.asarray(codes).tolist(), np.asarray(flags).tolist()))
    exp = [tuple(ref.round_float(SPECS["uhp"], x, mode, tininess=tininess)[:2]) for x in xs]
    assert got == exp, (xs, got, exp)
    # before-rounding tininess flushes everything below 2^-30
    if tininess == "before":
        assert [g for g in got[:4]] == [(0, UNDERFLOW | INEXACT)] * 4


def test_uhp_canonical_nan():
    u = softfp8.uhp
    zero = 0
    assert one(sb.mul(u, zero, UHP_INF)) == (UHP_NAN, INVALID)
    assert one(sb.mul(u, UHP_INF, zero)) == (UHP_NAN, INVALID)
    assert one(sb.sub(u, UHP_INF, UHP_INF)) == (UHP_NAN, INVALID)
    assert one(sb.div(u, zero, zero)) == (UHP_NAN, INVALID)
    assert one(sb.div(u, UHP_INF, UHP_INF)) == (UHP_NAN, INVALID)
    assert one(sb.fma(u, zero, UHP_INF, UHP_ONE)) == (UHP_NAN, INVALID)
    # NaN operands with payloads: canonical result; signalling ones raise invalid
    for qnan in (0xFE01, 0xFF00, 0xFFFF):
        assert one(sb.add(u, qnan, UHP_ONE)) == (UHP_NAN, 0)
        assert one(sb.mul(u, UHP_ONE, qnan)) == (UHP_NAN, 0)
        assert one(sb.sqrt(u, qnan)) == (UHP_NAN, 0)
    for snan in (0xFC01, 0xFDFF):
        assert one(sb.add(u, snan, UHP_ONE)) == (UHP_NAN, INVALID)
        assert one(sb.div(u, UHP_ONE, snan)) == (UHP_NAN, INVALID)
    # conversions of NaNs (float32 with payload / negative / signalling; float64; float16)
    x32 = np.array([0x7FC12345, 0xFFC00001, 0x7FFFFFFF], dtype=np.uint32).view(np.float32)
    codes, flags = sb.from_float(x32, u)
    assert np.asarray(codes).tolist() == [UHP_NAN] * 3
    assert np.asarray(flags).tolist() == [0, 0, 0]
    x32s = np.array([0x7F800001, 0xFFA00000], dtype=np.uint32).view(np.float32)
    codes, flags = sb.from_float(x32s, u)
    assert np.asarray(codes).tolist() == [UHP_NAN] * 2
    assert np.asarray(flags).tolist() == [INVALID] * 2
    x64 = from_f64_bits([0x7FF8000000000ABC, 0xFFF8000000000000, SNAN64])
    codes, flags = sb.from_float(x64, u)
    assert np.asarray(codes).tolist() == [UHP_NAN] * 3
    assert np.asarray(flags).tolist() == [0, 0, INVALID]
    codes, flags = sb.convert(np.array([0x7E01, 0xFE00, 0x7C01]), softfp8.float16, u)
    assert np.asarray(codes).tolist() == [UHP_NAN] * 3
    assert np.asarray(flags).tolist() == [0, 0, INVALID]


@pytest.mark.parametrize("mode", ALL_MODES)
def test_uhp_no_negatives(mode):
    u = softfp8.uhp
    o = dict(rounding=mode)
    xs = f64([-1.0, -2.0 ** -29, -1e30, -np.inf, -65504.0, -(2.0 ** -30)])
    codes, flags = sb.from_float(xs, u, **o)
    assert np.asarray(codes).tolist() == [UHP_NAN] * 6
    assert np.asarray(flags).tolist() == [INVALID] * 6  # invalid only: no overflow/inexact
    assert one(sb.from_float(f64(-0.0), u, **o)) == (0, 0)  # -0 -> +0
    assert one(sb.sub(u, UHP_ONE, UHP_TWO, **o)) == (UHP_NAN, INVALID)
    assert one(sb.sub(u, UHP_ONE, UHP_ONE, **o)) == (0, 0)  # exact zero: +0, downward too
    assert one(sb.sub(u, 0, UHP_INF, **o)) == (UHP_NAN, INVALID)  # -inf
    # float16 negatives
    codes, flags = sb.convert(np.array([0xBC00, 0x8000, 0xFC00]), softfp8.float16, u, **o)
    assert np.asarray(codes).tolist() == [UHP_NAN, 0, UHP_NAN]
    assert np.asarray(flags).tolist() == [INVALID, 0, INVALID]


@pytest.mark.parametrize("mode", ALL_MODES)
def test_uhp_infinity(mode):
    u = softfp8.uhp
    o = dict(rounding=mode)
    assert one(sb.from_float(f64(np.inf), u, **o)) == (UHP_INF, 0)
    assert one(sb.div(u, UHP_ONE, 0, **o)) == (UHP_INF, DIVBYZERO)
    assert one(sb.add(u, UHP_INF, UHP_ONE, **o)) == (UHP_INF, 0)
    assert one(sb.mul(u, UHP_INF, UHP_TWO, **o)) == (UHP_INF, 0)
    assert one(sb.sqrt(u, UHP_INF, **o)) == (UHP_INF, 0)
    big = one(sb.from_float(f64(2.0 ** 33), u, **o))
    if mode in ("nearest_even", "nearest_away", "upward"):
        assert big == (UHP_INF, OVERFLOW | INEXACT)
    else:  # toward_zero, downward, to_odd: max finite
        assert big == (UHP_MAX, OVERFLOW | INEXACT)
    assert one(sb.from_float(f64(np.inf), u, saturate=True, **o)) == (UHP_MAX, 0)
    assert one(sb.mul(u, UHP_MAX, UHP_TWO, saturate=True, **o)) == (UHP_MAX, OVERFLOW | INEXACT)
    v, f = sb.to_float(np.array(UHP_INF), u)
    assert float(np.asarray(v)) == np.inf and int(np.asarray(f)) == 0


# ---------------------------------------------------------------------------
# random and boundary conversions into Tesla formats and UHP, against the model
# ---------------------------------------------------------------------------


def _probe_values(ref, spec, seed):
    """Random float64 values over the whole range of spec, every midpoint between
    adjacent values (and its float64 neighbours), and the values themselves."""
    rng = np.random.default_rng(seed)
    lo = math.log2(float(ref.min_subnormal(spec))) - 3
    hi = math.log2(float(ref.max_value(spec))) + 2
    xs = list(np.exp2(rng.uniform(lo, hi, 300)) * rng.choice([-1.0, 1.0], 300))
    # positive codes 0 .. max_code are in increasing order of value in these formats
    top_code = ref.max_code(spec)
    if top_code > 150:
        edges = {0, 1, 2 ** spec.M - 2, 2 ** spec.M - 1, 2 ** spec.M, top_code - 1}
        cs = sorted(set(rng.integers(0, top_code, 150).tolist()) | edges)
    else:
        cs = range(top_code)
    for c in cs:
        v0, v1 = ref.decode(spec, c, True)[2], ref.decode(spec, c + 1, True)[2]
        assert v0 < v1
        m = float((v0 + v1) / 2)
        for x in (m, np.nextafter(m, 0), np.nextafter(m, np.inf), float(v1)):
            xs += [x, -x]
    top = float(ref.max_value(spec))
    xs += [top * 1.03125, top * 1.0625, -top * 1.0625, top * 2, 0.0, -0.0]
    return np.array(xs, dtype=np.float64)


PROBE_FORMATS = [("cfloat8_143", 0), ("cfloat8_143", 37), ("cfloat8_152", 5),
                 ("cfloat8_152", 63), ("shp", 24), ("uhp", None)]


@pytest.mark.parametrize("family,bias", PROBE_FORMATS)
@pytest.mark.parametrize("tininess", ("after", "before"))
def test_conversions_vs_model(ref, family, bias, tininess):
    if family == "uhp":
        spec, fmt = SPECS["uhp"], softfp8.uhp
    else:
        spec, fmt = ref.tesla_spec(family, bias), make(family, bias)
    xs = _probe_values(ref, spec, PROBE_FORMATS.index((family, bias)))
    n = 0
    for mode in ROUNDINGS:
        codes, flags = sb.from_float(xs, fmt, rounding=mode, tininess=tininess)
        got = list(zip(np.asarray(codes).tolist(), np.asarray(flags).tolist()))
        exp = [tuple(ref.round_float(spec, x, mode, tininess=tininess)[:2]) for x in xs]
        bad = [(float(x), f"{g[0]:#x}/{g[1]:#x}", f"{e[0]:#x}/{e[1]:#x}")
               for x, g, e in zip(xs, got, exp) if g != e]
        assert not bad, f"{fmt.name} {mode} {tininess}: {len(bad)} (x, got, expected): {bad[:6]}"
        n += len(xs)
    # stochastic with explicit random bits
    rng = np.random.default_rng(5)
    for N in (1, 3, 32):
        R = rng.integers(0, 2 ** 32, size=xs.shape, dtype=np.uint64).astype(np.uint32)
        codes, flags = sb.from_float(xs, fmt, rounding="stochastic", tininess=tininess,
                                     sr_bits=N, random_bits=R)
        got = list(zip(np.asarray(codes).tolist(), np.asarray(flags).tolist()))
        exp = [tuple(ref.round_float(spec, x, "stochastic", tininess=tininess, sr_bits=N,
                                     R=int(r))[:2]) for x, r in zip(xs, R)]
        bad = [(float(x), int(r), g, e) for x, r, g, e in zip(xs, R, got, exp) if g != e]
        assert not bad, f"{fmt.name} stochastic N={N} {tininess}: {bad[:6]}"
        n += len(xs)
    assert n == 9 * len(xs) and len(xs) > 600
