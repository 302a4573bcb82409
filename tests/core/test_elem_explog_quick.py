"""Quick checks of the exponential / logarithm / power family (elem_explog.c).

1. Special values and exact cases written from C99 Annex F, IEEE 754-2019 9.2 and
   SPEC section 7 (codes through softfp8.bits on float16, flags compared exactly).
2. MPFR-checked random cases (gmpy2): every function, every rounding mode (stochastic
   with given random bits), saturate and tininess settings, on float16, bfloat16, e4m3
   and custom formats with bias +-2^20 (huge and tiny arguments).  The MPFR value is
   computed at 400 bits toward zero; an inexact one is replaced by the point half an
   ulp beyond it (the exact value lies in that ulp, which holds no rounding boundary),
   and rounded once by tests/models/rational.py.  The exhaustive proof is h-elemtest's
   tests/core/test_elementary.py.
3. NumPy: loops, out= / where=, reductions without identity, np.errstate.
"""
from fractions import Fraction
import math

import gmpy2
import numpy as np
import pytest

from ..models import rational as ref

import softfp8
import softfp8.bits as sfb

UNARY = ("exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt")
BINARY = ("power", "hypot", "logaddexp", "logaddexp2")
NX, UF, OF, DZ, NV, DN = (ref.INEXACT, ref.UNDERFLOW, ref.OVERFLOW, ref.DIVBYZERO,
                          ref.INVALID, ref.DENORMAL)
INF, NAN = math.inf, math.nan

# ---------------------------------------------------------------------------
# 1. special values and exact cases (float16)
# ---------------------------------------------------------------------------

F16 = softfp8.lookup("float16")
SNAN16 = 0x7D00  # signalling NaN of float16


def _c(x):
    if isinstance(x, str):  # a code
        return int(x, 16)
    return int(np.array(x, dtype=np.float16).view(np.uint16))


# inexact entries: the nearest float16 of a float64 value far from a float16 midpoint
SPECIAL = [
    ("exp2", (-INF,), 0.0, 0), ("exp2", (INF,), INF, 0), ("exp2", (-0.0,), 1.0, 0),
    ("exp2", (3.0,), 8.0, 0), ("exp2", (-3.0,), 0.125, 0), ("exp2", (0.5,), 2 ** 0.5, NX),
    ("exp2", (100.0,), INF, OF | NX), ("exp2", (-100.0,), 0.0, UF | NX),
    ("expm1", (-INF,), -1.0, 0), ("expm1", (INF,), INF, 0), ("expm1", (-0.0,), -0.0, 0),
    ("expm1", (0.0,), 0.0, 0), ("expm1", (-20.0,), -1.0, NX),
    ("log", (0.0,), -INF, DZ), ("log", (-0.0,), -INF, DZ), ("log", (-1.0,), NAN, NV),
    ("log", (-INF,), NAN, NV), ("log", (INF,), INF, 0), ("log", (1.0,), 0.0, 0),
    ("log", (2.0,), math.log(2), NX),
    ("log2", (8.0,), 3.0, 0), ("log2", (0.125,), -3.0, 0), ("log2", (1.0,), 0.0, 0),
    ("log2", (2.0 ** -24,), -24.0, DN), ("log2", (3.0,), math.log2(3), NX),
    ("log10", (1000.0,), 3.0, 0), ("log10", (100.0,), 2.0, 0), ("log10", (10000.0,), 4.0, 0),
    ("log10", (0.0,), -INF, DZ), ("log10", (2.0,), math.log10(2), NX),
    ("log1p", (-1.0,), -INF, DZ), ("log1p", (-2.0,), NAN, NV), ("log1p", (-INF,), NAN, NV),
    ("log1p", (-0.0,), -0.0, 0), ("log1p", (0.0,), 0.0, 0), ("log1p", (INF,), INF, 0),
    ("cbrt", (-8.0,), -2.0, 0), ("cbrt", (27.0,), 3.0, 0), ("cbrt", (0.125,), 0.5, 0),
    ("cbrt", (-INF,), -INF, 0), ("cbrt", (-0.0,), -0.0, 0), ("cbrt", (2.0,), 2 ** (1 / 3), NX),
    ("power", (NAN, 0.0), 1.0, 0), ("power", (NAN, -0.0), 1.0, 0), ("power", (1.0, NAN), 1.0, 0),
    ("power", ("7d00", 0.0), NAN, NV), ("power", (1.0, "7d00"), NAN, NV),
    ("power", (-1.0, INF), 1.0, 0), ("power", (-1.0, -INF), 1.0, 0),
    ("power", (0.0, -1.0), INF, DZ), ("power", (-0.0, -1.0), -INF, DZ),
    ("power", (-0.0, -2.0), INF, DZ), ("power", (-0.0, -0.5), INF, DZ),
    ("power", (-0.0, 3.0), -0.0, 0), ("power", (-0.0, 2.0), 0.0, 0), ("power", (-0.0, 0.5), 0.0, 0),
    ("power", (0.0, -INF), INF, 0), ("power", (-0.0, INF), 0.0, 0),
    ("power", (0.5, INF), 0.0, 0), ("power", (2.0, INF), INF, 0),
    ("power", (0.5, -INF), INF, 0), ("power", (-2.0, -INF), 0.0, 0),
    ("power", (-INF, 3.0), -INF, 0), ("power", (-INF, -3.0), -0.0, 0),
    ("power", (-INF, 2.0), INF, 0), ("power", (-INF, -2.0), 0.0, 0),
    ("power", (-INF, 0.5), INF, 0), ("power", (INF, -1.0), 0.0, 0), ("power", (INF, 0.5), INF, 0),
    ("power", (-8.0, 0.5), NAN, NV), ("power", (-2.0, 1.5), NAN, NV),
    ("power", (2.0, 3.0), 8.0, 0), ("power", (-2.0, 3.0), -8.0, 0), ("power", (-2.0, -3.0), -0.125, 0),
    ("power", (2.0, -3.0), 0.125, 0), ("power", (4.0, 1.5), 8.0, 0), ("power", (4.0, -1.5), 0.125, 0),
    ("power", (9.0, 0.5), 3.0, 0), ("power", (0.015625, 0.5), 0.125, 0), ("power", (81.0, 0.25), 3.0, 0),
    ("power", (3.0, -1.0), 1 / 3, NX), ("power", (10.0, 10.0), INF, OF | NX),
    ("power", (2.0, 0.5), 2 ** 0.5, NX),
    ("hypot", (3.0, 4.0), 5.0, 0), ("hypot", (-5.0, 12.0), 13.0, 0), ("hypot", (INF, NAN), INF, 0),
    ("hypot", (NAN, -INF), INF, 0), ("hypot", (-0.0, -0.0), 0.0, 0), ("hypot", (-3.0, 0.0), 3.0, 0),
    ("hypot", (NAN, 1.0), NAN, 0), ("hypot", (1.0, 1.0), 2 ** 0.5, NX),
    ("hypot", (60000.0, 60000.0), INF, OF | NX),
    ("logaddexp", (1.0, -INF), 1.0, 0), ("logaddexp", (-0.0, -INF), 0.0, 0),
    ("logaddexp", (INF, INF), INF, 0), ("logaddexp", (-INF, -INF), -INF, 0),
    ("logaddexp", (INF, -INF), INF, 0), ("logaddexp", (NAN, -INF), NAN, 0),
    ("logaddexp", (0.0, 0.0), math.log(2), NX),
    ("logaddexp2", (3.0, 3.0), 4.0, 0), ("logaddexp2", (-1.0, -1.0), 0.0, 0),
    ("logaddexp2", (0.5, 0.5), 1.5, 0), ("logaddexp2", (-INF, 2.5), 2.5, 0),
    ("logaddexp2", (1000.0, 1000.0), 1001.0, 0), ("logaddexp2", (1.0, 2.0), math.log2(6), NX),
]


@pytest.mark.parametrize("fn,args,want,flags", SPECIAL,
                         ids=[f"{s[0]}{s[1]}" for s in SPECIAL])
def test_special_values(fn, args, want, flags):
    codes = [np.array([_c(a)], dtype=np.uint16) for a in args]
    for mode in ref.ALL_MODES if flags == 0 else ("nearest_even",):
        out, fl = getattr(sfb, fn)(F16, *codes, rounding=mode, random_bits=np.array([7], np.uint32))
        got = np.array(out, dtype=np.uint16).view(np.float16)[0]
        if math.isnan(want):
            assert np.isnan(got), (fn, args, mode, got)
        else:
            assert out[0] == _c(want), (fn, args, mode, got, want)
        assert int(fl[0]) == flags, (fn, args, mode, int(fl[0]), flags)


# ---------------------------------------------------------------------------
# 2. MPFR-checked random cases
# ---------------------------------------------------------------------------

PREC = 400
FAR = 1 << 21  # an exponent beyond every format (|exponents| <= 2^20 + 2^16 + 16)


def _mp(v):
    return gmpy2.mpfr(v.numerator) / v.denominator


def _approx(fn):
    with gmpy2.context(precision=PREC, round=gmpy2.RoundToZero) as c:
        r = fn()
        inexact, under, over = c.inexact, c.underflow, c.overflow
    if gmpy2.is_zero(r) and under:
        return ("D", 1 if gmpy2.is_signed(r) else 0, -FAR)
    if gmpy2.is_infinite(r) and over:
        return ("D", 1 if r < 0 else 0, FAR)
    if abs(gmpy2.get_exp(r)) > (1 << 22):
        return ("D", 1 if r < 0 else 0, FAR if gmpy2.get_exp(r) > 0 else -FAR)
    n, d = r.as_integer_ratio()
    v = Fraction(n, d)
    if not inexact:
        return ("X", v)
    half = Fraction(2) ** (gmpy2.get_exp(r) - PREC - 1)
    return ("A", v + half if r > 0 else v - half)


def _unary_ref(name, d):
    k, s, v = d.kind, d.sign, d.value
    if k == "nan":
        return ("N", not d.quiet)
    if name == "exp2":
        return (("Z", 0) if s else ("I", 0, 0)) if k == "inf" else \
            ("X", Fraction(1)) if k == "zero" else _approx(lambda: gmpy2.exp2(_mp(v)))
    if name == "expm1":
        return (("X", Fraction(-1)) if s else ("I", 0, 0)) if k == "inf" else \
            ("Z", s) if k == "zero" else _approx(lambda: gmpy2.expm1(_mp(v)))
    if name in ("log", "log2", "log10"):
        if k == "zero":
            return ("I", 1, DZ)
        if s:
            return ("N", True)
        if k == "inf":
            return ("I", 0, 0)
        return ("Z", 0) if v == 1 else _approx(lambda: getattr(gmpy2, name)(_mp(v)))
    if name == "log1p":
        if k == "zero":
            return ("Z", s)
        if k == "inf":
            return ("N", True) if s else ("I", 0, 0)
        if v == -1:
            return ("I", 1, DZ)
        return ("N", True) if v < -1 else _approx(lambda: gmpy2.log1p(_mp(v)))
    assert name == "cbrt"
    return ("I", s, 0) if k == "inf" else ("Z", s) if k == "zero" else \
        _approx(lambda: gmpy2.cbrt(_mp(v)))


def _binary_ref(name, a, b):
    """Finite and zero operands only (special operands are in SPECIAL)."""
    x = a.value if a.kind == "finite" else Fraction(0)
    y = b.value if b.kind == "finite" else Fraction(0)
    if name == "power":
        if b.kind == "zero" or x == 1:
            return ("X", Fraction(1))
        odd = y.denominator == 1 and y.numerator % 2 == 1
        if a.kind == "zero":
            sg = a.sign if odd else 0
            return ("I", sg, DZ) if y < 0 else ("Z", sg)
        if x < 0 and y.denominator != 1:
            return ("N", True)
        return _approx(lambda: _mp(x) ** _mp(y))
    if name == "hypot":
        return ("Z", 0) if x == y == 0 else _approx(lambda: gmpy2.hypot(_mp(x), _mp(y)))
    m, n = max(x, y), min(x, y)
    if name == "logaddexp2" and x == y:
        return ("Z", 0) if x == -1 else ("X", x + 1)
    if m != 0 and ((m - n > 300 and abs(m) > Fraction(1, 2 ** 200)) or abs(m) > 2 ** 200):
        # m + L, 0 < L far below m's rounding boundaries
        e = m.numerator.bit_length() - m.denominator.bit_length()
        return ("A", m + Fraction(2) ** (e - 900))
    if m == 0 and n < -(1 << 22):
        return ("D", 0, -FAR)

    def f():
        with gmpy2.context(gmpy2.get_context(), precision=PREC + 200):
            t = (gmpy2.log1p(gmpy2.exp(_mp(n) - _mp(m))) if name == "logaddexp" else
                 gmpy2.log1p(gmpy2.exp2(_mp(n) - _mp(m))) / gmpy2.const_log2())
            t = _mp(m) + t
        return +t
    return _approx(f)


def _expected(fmt, desc, mode, sat, tin, R):
    k = desc[0]
    tb = "before" if tin else "after"
    if k in ("X", "A"):
        code, fl = ref.round_pack(fmt, 0, desc[1], mode, sat, tin, R, 32)
    elif k == "D":
        code, fl = ref.deliver(fmt, ("F", desc[1], ("d", 1, desc[2])), mode, sat, tb, R, 32)
    elif k == "I":
        code, fl = ref.deliver(fmt, ("I", desc[1]), mode, sat, tb, R, 32)
        fl |= desc[2]
    elif k == "Z":
        code, fl = ref.deliver(fmt, ("Z", desc[1]), mode, sat, tb, R, 32)
    else:
        code, fl = None, (NV if desc[1] else 0)
        if fmt.specials == "none":
            code = fmt.max_code
    return code, fl


def _sfmt(fmt):
    o = getattr(fmt, "origin", None)
    if o and o[0] == "preset":
        return softfp8.lookup(o[1])
    return softfp8.format(exp_bits=fmt.exp_bits, man_bits=fmt.man_bits, bias=fmt.bias,
                          specials=fmt.specials, subnormals=fmt.subnormals,
                          signed=fmt.signed, saturate=fmt.saturate)


RANDOM_FORMATS = [ref.preset("float16"), ref.preset("bfloat16"), ref.preset("e4m3"),
                  ref.make_format(5, 2, 2 ** 20), ref.make_format(5, 2, -2 ** 20),
                  ref.make_format(8, 7, -2 ** 20 + 9, specials="fn"),
                  ref.make_format(6, 1, 2 ** 20 - 5, specials="none", saturate=True)]
# cases per (function, format, configuration); the reference's exact values of formats with
# bias +-2^20 are million-bit fractions, so fewer there
def _n_per(fmt):
    return 40 if abs(fmt.bias) < 1000 else 2
CONFIGS = [(m, False, False) for m in ref.ALL_MODES] + [("upward", True, True),
                                                       ("stochastic", True, True)]


def _finite_codes(fmt, rng, n):
    out = []
    while len(out) < n:
        c = int(rng.integers(0, 1 << fmt.bits))
        if ref.decode(fmt, c).kind in ("finite", "zero"):
            out.append(c)
    return out


@pytest.mark.parametrize("fmt", RANDOM_FORMATS, ids=[f.name for f in RANDOM_FORMATS])
def test_random_against_mpfr(fmt):
    sf = _sfmt(fmt)
    rng = np.random.default_rng(abs(hash(fmt.name)) % 2 ** 32)
    checked = 0
    N_PER = _n_per(fmt)
    for name in UNARY + BINARY:
        arity = 2 if name in BINARY else 1
        for mode, sat, tin in CONFIGS:
            ops = [_finite_codes(fmt, rng, N_PER) for _ in range(arity)]
            R = rng.integers(0, 2 ** 32, N_PER, dtype=np.uint32)
            out, fl = getattr(sfb, name)(sf, *[np.array(o, dtype=sf.storage) for o in ops],
                                         rounding=mode, saturate=sat,
                                         tininess="before" if tin else "after", random_bits=R)
            for i in range(N_PER):
                dec = [ref.decode(fmt, o[i]) for o in ops]
                desc = _unary_ref(name, dec[0]) if arity == 1 else _binary_ref(name, *dec)
                code, flags = _expected(fmt, desc, mode, sat, tin,
                                        int(R[i]) if mode == "stochastic" else None)
                got_c, got_f = int(out[i]), int(fl[i]) & ~DN
                where = (name, fmt.name, mode, sat, tin, [hex(o[i]) for o in ops])
                if code is None:
                    assert ref.is_nan(fmt, got_c) and got_f == flags, where
                else:
                    assert (got_c, got_f) == (code, flags), (where, hex(got_c), hex(code), got_f, flags)
                checked += 1
    assert checked == len(UNARY + BINARY) * len(CONFIGS) * N_PER


# ---------------------------------------------------------------------------
# 3. NumPy
# ---------------------------------------------------------------------------

def test_numpy_loops_and_reductions():
    e4 = softfp8.e4m3
    a = np.array([1, 2, 4, 0.5], dtype=e4)
    assert np.log2(a).astype(np.float64).tolist() == [0, 1, 2, -1]
    assert np.power(a, np.array(2, dtype=e4)).astype(np.float64).tolist() == [1, 4, 16, 0.25]
    out = np.zeros(4, dtype=e4)
    np.cbrt(np.array([8, -27, 1, 64], dtype=e4), out=out, where=np.array([1, 0, 1, 0], bool))
    assert out.astype(np.float64).tolist() == [2, 0, 1, 0]
    # in order, no identity claimed: hypot(hypot(3, 4), 12) = 13
    assert float(np.hypot.reduce(np.array([3, 4, 12], dtype=e4))) == 13
    assert np.logaddexp2.accumulate(np.array([1, 1, 2], dtype=e4)).astype(np.float64).tolist() == [1, 2, 3]
    for uf in (np.hypot, np.logaddexp, np.logaddexp2, np.power):
        with pytest.raises(ValueError):
            uf.reduce(np.array([], dtype=e4))


def test_numpy_errstate():
    f16 = softfp8.float16
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError, match="divide"):
            np.log(np.array([0.0], dtype=f16))
        with pytest.raises(FloatingPointError, match="invalid"):
            np.log10(np.array([-1.0], dtype=f16))
        with pytest.raises(FloatingPointError, match="overflow"):
            np.exp2(np.array([100.0], dtype=f16))
        with pytest.raises(FloatingPointError, match="divide"):
            np.power(np.array([0.0], dtype=f16), np.array([-1.0], dtype=f16))
        # exact results raise nothing
        np.power(np.array([4.0], dtype=f16), np.array([1.5], dtype=f16))
        np.hypot(np.array([3.0], dtype=f16), np.array([4.0], dtype=f16))


def test_issue_example_bfloat16_power():
    """power(3.65625, 0.109375) in bfloat16 is just below a midpoint: 0x3f93 (issue 9)."""
    b = softfp8.bfloat16
    r = np.power(np.array([3.65625], dtype=b), np.array([0.109375], dtype=b))
    assert int(r.view(np.uint16)[0]) == 0x3F93
