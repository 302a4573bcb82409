"""Trigonometric and hyperbolic functions, degrees and radians (elem_trig.c):

* the special values of C99 Annex F (F.9.1 - F.9.2) and IEEE 754-2019 9.2,
  written from the standards as literal float16 codes;
* custom formats whose values lie far outside binary64's and binary128's
  exponent ranges (bias up to +-2^20): random codes of every function in every
  rounding mode, checked against MPFR (gmpy2) with a 200-bit value and the
  exact rational reference's one rounding (tests/models/rational.py);
* NumPy: out=, where=, np.errstate.

The exhaustive proof over every 8- and 16-bit code is tests/core/test_elementary.py.
"""
from fractions import Fraction

import gmpy2
import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb

from ..models import rational as ref

NX, UF, OF, DZ, NV = ref.INEXACT, ref.UNDERFLOW, ref.OVERFLOW, ref.DIVBYZERO, ref.INVALID
F16 = softfp8.float16
P0, N0, ONE, MONE, TWO, HALF = 0x0000, 0x8000, 0x3C00, 0xBC00, 0x4000, 0x3800
INF, NINF, QNAN, SNAN = 0x7C00, 0xFC00, 0x7E00, 0x7D00
# pi and its fractions in float16, nearest-even (pi = 3.140625 + 0.00096...)
PI, PI2, PI4, PI34 = 0x4248, 0x3E48, 0x3A48, 0x40B6

UNARY_CASES = [
    # sin, cos, tan: F.9.1.5-7 (+-0 kept, +-inf invalid)
    ("sin", P0, P0, 0), ("sin", N0, N0, 0), ("sin", INF, QNAN, NV), ("sin", NINF, QNAN, NV),
    ("cos", P0, ONE, 0), ("cos", N0, ONE, 0), ("cos", INF, QNAN, NV), ("cos", NINF, QNAN, NV),
    ("tan", P0, P0, 0), ("tan", N0, N0, 0), ("tan", INF, QNAN, NV), ("tan", NINF, QNAN, NV),
    # arcsin, arccos, arctan: F.9.1.1-3
    ("arcsin", P0, P0, 0), ("arcsin", N0, N0, 0), ("arcsin", ONE, PI2, NX),
    ("arcsin", MONE, PI2 | 0x8000, NX), ("arcsin", 0x3C01, QNAN, NV), ("arcsin", INF, QNAN, NV),
    ("arccos", ONE, P0, 0), ("arccos", MONE, PI, NX), ("arccos", P0, PI2, NX),
    ("arccos", N0, PI2, NX), ("arccos", 0xBC01, QNAN, NV), ("arccos", NINF, QNAN, NV),
    ("arctan", P0, P0, 0), ("arctan", N0, N0, 0), ("arctan", INF, PI2, NX),
    ("arctan", NINF, PI2 | 0x8000, NX),
    # sinh, cosh, tanh: F.9.2.5-6, F.9.2.4 (cosh)
    ("sinh", P0, P0, 0), ("sinh", N0, N0, 0), ("sinh", INF, INF, 0), ("sinh", NINF, NINF, 0),
    ("cosh", P0, ONE, 0), ("cosh", N0, ONE, 0), ("cosh", INF, INF, 0), ("cosh", NINF, INF, 0),
    ("tanh", P0, P0, 0), ("tanh", N0, N0, 0), ("tanh", INF, ONE, 0), ("tanh", NINF, MONE, 0),
    # arcsinh, arccosh, arctanh: F.9.2.1-3
    ("arcsinh", P0, P0, 0), ("arcsinh", N0, N0, 0), ("arcsinh", INF, INF, 0),
    ("arcsinh", NINF, NINF, 0),
    ("arccosh", ONE, P0, 0), ("arccosh", INF, INF, 0), ("arccosh", HALF, QNAN, NV),
    ("arccosh", P0, QNAN, NV), ("arccosh", N0, QNAN, NV), ("arccosh", NINF, QNAN, NV),
    ("arctanh", P0, P0, 0), ("arctanh", N0, N0, 0), ("arctanh", ONE, INF, DZ),
    ("arctanh", MONE, NINF, DZ), ("arctanh", TWO, QNAN, NV), ("arctanh", INF, QNAN, NV),
    # degrees, radians: products
    ("degrees", P0, P0, 0), ("degrees", N0, N0, 0), ("degrees", INF, INF, 0),
    ("radians", NINF, NINF, 0), ("radians", N0, N0, 0), ("radians", 0x59A0, PI, NX),  # 180 deg
    ("degrees", ONE, 0x5329, NX),                                         # 57.28...
    # NaN operands: quiet propagation, signalling -> quiet + invalid
    ("sin", QNAN, QNAN, 0), ("arccosh", 0xFE00, 0xFE00, 0), ("tanh", SNAN, 0x7F00, NV),
]


@pytest.mark.parametrize("fn,a,code,flags", UNARY_CASES)
def test_unary_special_values(fn, a, code, flags):
    got, fl = getattr(sfb, fn)(F16, np.array([a], np.uint16))
    assert (hex(int(got[0])), int(fl[0])) == (hex(code), flags)


ARCTAN2_CASES = [  # F.9.1.4, (y, x)
    (P0, P0, P0, 0), (N0, P0, N0, 0), (P0, N0, PI, NX), (N0, N0, PI | 0x8000, NX),
    (P0, MONE, PI, NX), (N0, MONE, PI | 0x8000, NX), (P0, ONE, P0, 0), (N0, ONE, N0, 0),
    (MONE, P0, PI2 | 0x8000, NX), (MONE, N0, PI2 | 0x8000, NX), (ONE, P0, PI2, NX),
    (ONE, N0, PI2, NX), (ONE, NINF, PI, NX), (MONE, NINF, PI | 0x8000, NX),
    (ONE, INF, P0, 0), (MONE, INF, N0, 0), (INF, ONE, PI2, NX), (NINF, MONE, PI2 | 0x8000, NX),
    (INF, P0, PI2, NX), (INF, NINF, PI34, NX), (NINF, NINF, PI34 | 0x8000, NX),
    (INF, INF, PI4, NX), (NINF, INF, PI4 | 0x8000, NX), (ONE, ONE, PI4, NX),
    (QNAN, ONE, QNAN, 0), (ONE, QNAN, QNAN, 0), (SNAN, ONE, 0x7F00, NV),
]


@pytest.mark.parametrize("y,x,code,flags", ARCTAN2_CASES)
def test_arctan2_special_values(y, x, code, flags):
    got, fl = sfb.arctan2(F16, np.array([y], np.uint16), np.array([x], np.uint16))
    assert (hex(int(got[0])), int(fl[0])) == (hex(code), flags)


def test_saturation_and_none_formats():
    # saturating: exact infinities become +-max with no flag; a domain error stays NaN
    mx = 0x7BFF
    got, fl = sfb.sinh(F16, np.array([INF, NINF], np.uint16), saturate=True)
    assert list(got) == [mx, mx | 0x8000] and list(fl) == [0, 0]
    got, fl = sfb.arctanh(F16, np.array([ONE], np.uint16), saturate=True)
    assert (int(got[0]), int(fl[0])) == (mx, DZ)
    # a Tesla format (no inf, no NaN): overflow gives max; a domain error invalid + max
    cf = softfp8.cfloat8_143(bias=7)
    big = 0x7F                                          # cf's max, 240 * 2^(7-7)...
    got, fl = sfb.cosh(cf, np.array([big], np.uint8))
    assert (int(got[0]), int(fl[0]) & (OF | NX)) == (big, OF | NX)
    got, fl = sfb.arcsin(cf, np.array([big], np.uint8))
    assert int(fl[0]) & NV and int(got[0]) == big


# --------------------------------------------------------------------------
# far exponent ranges against MPFR
# --------------------------------------------------------------------------

CTX = gmpy2.context(precision=200, round=gmpy2.RoundToZero, emax=1 << 30, emin=-(1 << 30))
MP = {"sin": gmpy2.sin, "cos": gmpy2.cos, "tan": gmpy2.tan, "arcsin": gmpy2.asin,
      "arccos": gmpy2.acos, "arctan": gmpy2.atan, "sinh": gmpy2.sinh, "cosh": gmpy2.cosh,
      "tanh": gmpy2.tanh, "arcsinh": gmpy2.asinh, "arccosh": gmpy2.acosh,
      "arctanh": gmpy2.atanh,
      "degrees": lambda x: x * 180 / gmpy2.const_pi(),
      "radians": lambda x: x * gmpy2.const_pi() / 180}
TRIG = ("sin", "cos", "tan")
FAR = 1 << 22         # beyond every format: values are replaced by +-2^(+-FAR) * 1.5


def _dy(n, e):
    """n * 2^e as a Fraction (fast for huge |e|)."""
    return Fraction(n << e) if e >= 0 else Fraction(n, 1 << -e)


def _exact(fn, n, e):
    """f(n 2^e) (non-dyadic) as a Fraction strictly inside the 200-bit truncation
    interval, or None for a domain error."""
    with gmpy2.context(CTX):
        x = gmpy2.mul_2exp(gmpy2.mpfr(n, 64), e)                       # exact
        y = MP[fn](x)
        if gmpy2.is_nan(y):
            return None
        sgn = 1 if y > 0 else -1
        if gmpy2.is_infinite(y) or gmpy2.get_exp(y) > FAR:
            return _dy(3 * sgn, FAR - 1)
        if gmpy2.get_exp(y) < -FAR:
            return _dy(3 * sgn, -FAR - 1)
        m, ex = y.as_mantissa_exp()
        # the exact value lies strictly inside (m, m + 1) * 2^ex in magnitude
        return _dy(2 * int(m) + sgn, int(ex) - 1)


FAR_FORMATS = [(4, 3, 1 << 20), (4, 3, -(1 << 20)), (4, 3, 20000), (4, 3, -20000),
               (4, 3, 2000), (4, 3, -2000), (5, 10, (1 << 20) - 7), (5, 10, 16390),
               (5, 10, -16390), (4, 3, -16360), (11, 4, 1023), (14, 1, 8191), (12, 3, -100)]


@pytest.mark.parametrize("eb,mb,bias", FAR_FORMATS)
def test_far_exponents_against_mpfr(eb, mb, bias):
    sf = softfp8.format(exp_bits=eb, man_bits=mb, bias=bias)
    rf = ref.make_format(eb, mb, bias)
    rng = np.random.default_rng([eb, mb, bias & 0xFFFFFFFF])
    bits = 1 + eb + mb
    maxfin = ((1 << eb) - 1) << mb                    # first inf code
    cases = 0
    for fn in MP:
        # +-1 (poles, exact results: in the tables above) left out;
        # half anywhere, half with values in [2^-40, 2^24] where the format has them
        near = np.clip(bias + rng.integers(-40, 25, 6), 1, (1 << eb) - 2)
        codes = np.concatenate([rng.integers(1, maxfin, 6),
                                (near << mb) | rng.integers(0, 1 << mb, 6)])
        codes = np.concatenate([codes, codes | (1 << (bits - 1))])
        codes = codes.astype(np.uint16 if bits > 8 else np.uint8)
        ops = ref.operands(rf)
        codes = codes[[not (ops[c][3] <= 0 and ops[c][2] == 1 << -ops[c][3]) for c in codes]]
        wants = []
        for c in codes:
            kind, sign, n, e, _, sub = ops[int(c)]
            n = -n if sign else n
            top = abs(n).bit_length() - 1 + e
            den = ref.DENORMAL if sub else 0
            if fn in TRIG and top >= 16384:
                wants.append(("huge", den))   # documented limitation: NaN + invalid
            else:
                wants.append((_exact(fn, n, e), den))
        for mode in ref.ALL_MODES:
            R = rng.integers(0, 1 << 32, codes.size, dtype=np.uint64).astype(np.uint32)
            kw = {"random_bits": R} if mode == "stochastic" else {}
            got, gotf = getattr(sfb, fn)(sf, codes, rounding=mode, **kw)
            for i, (ex, den) in enumerate(wants):
                g = (int(got[i]), int(gotf[i]))
                if ex is None or ex == "huge":      # domain error / beyond binary128
                    assert (g[1], ref.is_nan(rf, g[0])) == (NV | den, True), (fn, hex(int(codes[i])))
                    continue
                want, wf = ref.round_pack(rf, 0, ex, mode, R=int(R[i]) if kw else None)
                assert g == (want, wf | den), (fn, mode, hex(int(codes[i])))
                cases += 1
    assert cases >= len(MP) * 24 * 7 * 0.4           # most cases are checked, not skipped


# --------------------------------------------------------------------------
# NumPy
# --------------------------------------------------------------------------

def test_numpy_out_where_errstate():
    a = np.array([0x00, 0x38, 0x7E, 0x47], np.uint8).view(softfp8.e4m3.dtype)  # 0, 1, 448, 1.875
    out = np.full(4, 0x55, np.uint8).view(softfp8.e4m3.dtype)
    np.sin(a, out=out, where=np.array([True, True, False, True]))
    want = sfb.sin(softfp8.e4m3, a.view(np.uint8))[0]
    assert list(out.view(np.uint8)) == [want[0], want[1], 0x55, want[3]]
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            np.cosh(a)                                     # cosh(448) overflows
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError):
            np.arcsin(a)                                   # arcsin(448)
    one = np.array([0x38], np.uint8).view(softfp8.e4m3.dtype)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            np.arctanh(one)
    with np.errstate(all="ignore"):
        d = np.degrees(a)
        r = np.radians(a)
        t = np.arctan2(a, a[::-1])
    assert list(d.view(np.uint8)) == list(sfb.degrees(softfp8.e4m3, a.view(np.uint8))[0])
    assert list(r.view(np.uint8)) == list(sfb.radians(softfp8.e4m3, a.view(np.uint8))[0])
    assert list(t.view(np.uint8)) == list(sfb.arctan2(softfp8.e4m3, a.view(np.uint8),
                                                      a[::-1].view(np.uint8))[0])


WIDE_FORMATS = [(11, 4, 1023), (14, 1, 8191), (12, 3, -100), (4, 3, 1 << 20), (5, 10, -16390)]


@pytest.mark.parametrize("eb,mb,bias", WIDE_FORMATS)
def test_arctan2_wide_ranges_against_mpfr(eb, mb, bias):
    """arctan2 of finite non-zero pairs whose quotient spans thousands of binades
    (the asymptotic paths |y/x| < 2^-26 with x > 0 or x < 0, |y/x| > 2^59)."""
    sf = softfp8.format(exp_bits=eb, man_bits=mb, bias=bias)
    rf = ref.make_format(eb, mb, bias)
    rng = np.random.default_rng([eb, mb, bias & 0xFFFFFFFF, 2])
    bits = 1 + eb + mb
    n = 40
    codes = rng.integers(1, ((1 << eb) - 1) << mb, (2, n)) | (rng.integers(0, 2, (2, n)) << (bits - 1))
    # pairs with equal significands: a dyadic quotient 2^-k, k = 0..3 and, where the
    # exponent field allows, 27..70 (the path that rounds "just below" y/x)
    mag = (1 << (eb + mb)) - 1
    shift = np.where(np.arange(12) < 4, np.arange(12) % 4, rng.integers(27, 71, 12))
    field = np.minimum((codes[0, :12] & mag) >> mb, (1 << eb) - 2 - 70)
    if field.min() >= 1:
        codes[0, :12] = (codes[0, :12] & ~mag) | (field << mb) | (codes[0, :12] & ((1 << mb) - 1))
        codes[1, :12] = (codes[1, :12] & ~mag) | (codes[0, :12] & mag) + (shift << mb)
    codes = codes.astype(np.uint16 if bits > 8 else np.uint8)
    ops = ref.operands(rf)
    wants = []
    for a, b in codes.T:
        _, sy, ny, ey, _, suby = ops[int(a)]
        _, sx, nx, ex, _, subx = ops[int(b)]
        with gmpy2.context(CTX):
            v = gmpy2.atan2(gmpy2.mul_2exp(gmpy2.mpfr(-ny if sy else ny, 64), ey),
                            gmpy2.mul_2exp(gmpy2.mpfr(-nx if sx else nx, 64), ex))
            m, e2 = v.as_mantissa_exp()
        sg = 1 if m > 0 else -1
        wants.append((_dy(2 * int(m) + sg, int(e2) - 1),
                      ref.DENORMAL if suby or subx else 0))
    cases = 0
    for mode in ref.ALL_MODES:
        R = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        kw = {"random_bits": R} if mode == "stochastic" else {}
        got, gotf = sfb.arctan2(sf, codes[0], codes[1], rounding=mode, **kw)
        for i, (ex, den) in enumerate(wants):
            want, wf = ref.round_pack(rf, 0, ex, mode, R=int(R[i]) if kw else None)
            assert (int(got[i]), int(gotf[i])) == (want, wf | den), \
                (mode, hex(int(codes[0, i])), hex(int(codes[1, i])))
            cases += 1
    assert cases == n * 7
