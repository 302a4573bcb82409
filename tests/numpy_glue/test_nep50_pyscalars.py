"""Python int/float operands of softfp8 arrays (NEP 50, issue 9), against the
independent exact reference model (tests/models/rational.py) and Fractions:

- comparisons compare EXACT values (the Python number is never rounded), every code
  of the 8-bit formats (sampled codes of the 16-bit ones) against numbers inside and
  outside the format's range, NaN, infinities, signed zeros, huge ints;
- arithmetic rounds the number into the array's own format (its bias / custom
  parameters) in the context's mode, then operates; the flags of that rounding (the
  overflow of 150000.0 into E4M3) reach softfp8's sticky flags and np.errstate;
- maximum/minimum/fmax/fmin and np.clip select by exact comparison and round only a
  selected number;
- the result stays in the array's format for presets, Tesla formats with a bias and
  softfp8.format(...) formats; NumPy scalars (np.float64, np.int32) promote to float64.
"""
import math
import struct
import warnings
from fractions import Fraction

import numpy as np
import pytest

import softfp8

from ..models import rational as ref

INF = math.inf


def _pair(fmt, r):
    return fmt, r


# (softfp8 format, reference format): every 8-bit preset, Tesla formats with a bias,
# custom formats (fn; flush; values beyond binary64 on both sides, which take the
# core's comparison route instead of the binary64 one)
EIGHT = ([(getattr(softfp8, n), ref.preset(n)) for n in ref.EIGHT_BIT_PRESETS]
         + [(softfp8.cfloat8_143(bias=10), ref.cfloat8_143(10)),
            (softfp8.cfloat8_143(bias=63), ref.cfloat8_143(63)),
            (softfp8.cfloat8_152(bias=40, subnormals="ieee"), ref.cfloat8_152(40, "ieee")),
            (softfp8.format(exp_bits=4, man_bits=3, bias=7, specials="fn"),
             ref.make_format(4, 3, 7, "fn")),
            (softfp8.format(exp_bits=4, man_bits=3, bias=3, subnormals="flush"),
             ref.make_format(4, 3, 3, "ieee", "flush")),
            (softfp8.format(exp_bits=5, man_bits=2, bias=-1100),
             ref.make_format(5, 2, -1100)),
            (softfp8.format(exp_bits=5, man_bits=2, bias=1100, subnormals="flush"),
             ref.make_format(5, 2, 1100, "ieee", "flush"))])
SIXTEEN = [(softfp8.float16, ref.preset("float16")),
           (softfp8.shp(bias=20), ref.shp(20)),
           (softfp8.format(exp_bits=12, man_bits=3, bias=2047), ref.make_format(12, 3, 2047)),
           (softfp8.format(exp_bits=12, man_bits=3, bias=2047, subnormals="flush"),
            ref.make_format(12, 3, 2047, "ieee", "flush"))]
IDS8 = [f.name.split(",")[0] + ("_" + str(i)) for i, (f, _) in enumerate(EIGHT)]


def codes_of(r):
    if r.bits <= 8:
        return np.arange(1 << r.bits, dtype=np.uint32)
    c = np.arange(0, 1 << r.bits, 29, dtype=np.uint32)
    return np.unique(np.concatenate([c, [r.max_code, r.max_code - 1, 1, 2, r.min_normal_code,
                                          r.sign_bit | 1, r.sign_bit | r.max_code]]))


def as_array(fmt, codes):
    return np.asarray(codes, dtype=np.uint32).astype(fmt.storage).view(fmt.dtype)


def raw(arr):
    arr = np.asarray(arr)
    return arr.view(arr.dtype.format.storage).astype(np.int64)


def ref_value(r, code):
    """exact value of a code: Fraction, +-inf, or None for NaN"""
    d = ref.decode(r, int(code))
    if d.kind == "nan":
        return None
    if d.kind == "inf":
        return -INF if d.sign else INF
    return d.value


def num_value(x):
    if isinstance(x, float):
        if math.isnan(x):
            return None
        return x if math.isinf(x) else Fraction(x)
    return Fraction(x)


def relation(a, b):
    if a is None or b is None:
        return None
    return (a > b) - (a < b)


def special_floats(r):
    mx = r.max_value
    sub = r.min_subnormal
    out = [0.0, -0.0, 0.1, -0.1, 1.0, 1.4, -3.0, 1000.0, -1000.0, 150000.0, 1e300, -1e300,
           INF, -INF, math.nan, 5e-324, -5e-324, 2.0 ** -20]
    for v in (mx, mx * (1 + Fraction(1, 2 ** (r.man_bits + 1))), mx * 2, sub, sub / 2, sub * 3 / 2,
              r.min_normal * Fraction(3, 4)):
        f = float(v) if abs(v) < Fraction(2) ** 1024 else INF
        out += [f, -f]
    return out


INTS = [0, 1, -3, 448, 449, 57344, 2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 62, -(2 ** 62),
        2 ** 63 - 1, -(2 ** 63)]

OPS = [("==", np.equal, lambda t: t == 0), ("!=", np.not_equal, lambda t: t != 0),
       ("<", np.less, lambda t: t == -1), ("<=", np.less_equal, lambda t: t in (-1, 0)),
       (">", np.greater, lambda t: t == 1), (">=", np.greater_equal, lambda t: t in (0, 1))]


def check_comparisons(fmt, r):
    codes = codes_of(r)
    a = as_array(fmt, codes)
    vals = [ref_value(r, c) for c in codes]
    count = 0
    for x in special_floats(r) + INTS:
        xv = num_value(x)
        rel = [relation(v, xv) for v in vals]
        for name, uf, truth in OPS:
            expect = np.array([t is not None and truth(t) for t in rel])
            if name == "!=":
                expect = np.array([t is None or t != 0 for t in rel])
            got = uf(a, x)
            assert got.dtype == np.bool_
            bad = np.nonzero(got != expect)[0]
            assert bad.size == 0, (fmt, name, x, [hex(int(codes[i])) for i in bad[:5]])
            # reflected: x OP a is a (reflected OP) x
            rrel = [None if t is None else -t for t in rel]
            rexpect = np.array([t is not None and truth(t) for t in rrel])
            if name == "!=":
                rexpect = expect
            assert np.array_equal(uf(x, a), rexpect), (fmt, "reflected", name, x)
            # fewer elements than codes: element by element instead of a per-code table
            assert np.array_equal(uf(a[:100], x), expect[:100]), (fmt, "short", name, x)
            count += 2 * len(codes)
    return count


@pytest.mark.parametrize("fmt,r", EIGHT, ids=IDS8)
def test_comparisons_exact_every_code(fmt, r):
    n = check_comparisons(fmt, r)
    assert n == 256 * 12 * (len(special_floats(r)) + len(INTS))


@pytest.mark.parametrize("fmt,r", SIXTEEN, ids=["float16", "shp20", "wide", "wide_flush"])
def test_comparisons_exact_16bit_sample(fmt, r):
    n = check_comparisons(fmt, r)
    assert n == len(codes_of(r)) * 12 * (len(special_floats(r)) + len(INTS))


def test_comparisons_examples_from_the_issue():
    q = np.array([-448.0, -1.5, 0.0, 1.5, 448.0], dtype=softfp8.e4m3)
    with np.errstate(all="raise"), softfp8.collect_flags() as fl:
        assert (q < 1000.0).all() and (q > -1000.0).all()
        assert not (q == 0.1).any() and (q != 0.1).all()
        assert (q <= 448).all() and not (q > 448).any()
        assert (q < 2 ** 63 - 1).all()
    assert fl.flags == 0     # comparisons never round, so they raise nothing
    cf = np.array([0.25, 1.0], dtype=softfp8.cfloat8_143(bias=10))
    assert (cf < 1e10).all() and not (cf == 0.3).any()


def test_python_int_beyond_int64_is_an_error():
    """NumPy hands a Python int over as int64 (its default for PyLong); beyond that it
    raises OverflowError, as for an int64 array (never a silent wrong answer)."""
    q = np.array([1.0], dtype=softfp8.e4m3)
    with pytest.raises(OverflowError):
        q < 2 ** 70
    with pytest.raises(OverflowError):
        np.arange(3) + 2 ** 70      # NumPy's own int64 arrays do the same


# --------------------------------------------------------------------------
# arithmetic: the number rounded into the array's format, then the operation
# --------------------------------------------------------------------------

def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def ref_round_number(r, x, mode):
    if isinstance(x, float):
        return ref.convert(ref.FLOAT64, r, f64_bits(x), mode)
    return ref.round_pack(r, 0, Fraction(x), mode)


REF_OPS = {np.add: ref.add, np.subtract: ref.sub, np.multiply: ref.mul, np.true_divide: ref.div}
ARITH = [EIGHT[0], EIGHT[1], EIGHT[len(ref.EIGHT_BIT_PRESETS)],
         EIGHT[len(ref.EIGHT_BIT_PRESETS) + 3], EIGHT[len(ref.EIGHT_BIT_PRESETS) + 2]]
NUMBERS = [2, 3, -7, 0.5, 0.1, 3.0, 150000.0, 1e-30, -0.0, 100000]
MASK = int(softfp8.Flags.INEXACT | softfp8.Flags.OVERFLOW | softfp8.Flags.UNDERFLOW
           | softfp8.Flags.INVALID | softfp8.Flags.DIVBYZERO)


def same_code(r, got, want):
    if ref.is_nan(r, want):
        return ref.is_nan(r, got)
    return got == want


# every format in nearest-even; the directed modes on e4m3 (keeps the file fast)
ARITH_CASES = ([(f, r, "nearest_even") for f, r in ARITH]
               + [(ARITH[0][0], ARITH[0][1], m) for m in ("toward_zero", "upward")])


@pytest.mark.parametrize("fmt,r,mode", ARITH_CASES,
                         ids=[f"{f.name.split(',')[0]}-{m}" for f, _, m in ARITH_CASES])
def test_arithmetic_rounds_the_number_into_the_format(fmt, r, mode):
    codes = codes_of(r)
    a = as_array(fmt, codes)
    n = 0
    for uf, rop in REF_OPS.items():
        for x in NUMBERS:
            xc, xfl = ref_round_number(r, x, mode)
            for reflected in (False, True):
                with softfp8.rounding(mode), softfp8.collect_flags() as fl, \
                        np.errstate(all="ignore"):
                    res = uf(x, a) if reflected else uf(a, x)
                assert res.dtype == fmt.dtype
                got = raw(res)
                want_fl = xfl
                for i, c in enumerate(codes):
                    w, wfl = rop(r, xc, int(c), mode) if reflected else rop(r, int(c), xc, mode)
                    want_fl |= wfl
                    assert same_code(r, int(got[i]), w), (fmt, uf.__name__, x, reflected, hex(int(c)))
                    n += 1
                assert int(fl.flags) & MASK == want_fl & MASK, (fmt, uf.__name__, x, reflected)
    assert n == 4 * len(NUMBERS) * 2 * len(codes)


def test_overflow_of_the_number_reaches_errstate_and_flags():
    q = np.array([1.5, -2.0], dtype=softfp8.e4m3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
            q / 150000.0
        with pytest.raises(RuntimeWarning, match="overflow"):
            q / 150000.0
        with np.errstate(all="ignore"), softfp8.collect_flags() as fl:
            r = q / 150000.0
        assert fl.overflow and np.isnan(r.astype(np.float64)).all()
        # float16 in the same spirit: the scalar's overflow is reported
        with pytest.raises(RuntimeWarning, match="overflow"):
            np.array([1.0], dtype=np.float16) / 150000.0
        # an exact number raises nothing
        with np.errstate(all="raise"), softfp8.collect_flags() as fl:
            q * 2
        assert fl.flags == 0


# --------------------------------------------------------------------------
# selections and clip: exact comparison, only a selected number is rounded
# --------------------------------------------------------------------------

def ref_select(r, c, x, op, mode):
    """(code, flags) of op(code, x) by exact selection; None when NaN is involved"""
    v, xv = ref_value(r, c), num_value(x)
    if v is None or xv is None:
        return None
    t = relation(v, xv)
    take_x = t == (-1 if op in ("max", "fmax") else 1)
    if t == 0 or not take_x:
        return c, 0
    return ref_round_number(r, x, mode)


SEL = {"max": np.maximum, "min": np.minimum, "fmax": np.fmax, "fmin": np.fmin}


@pytest.mark.parametrize("fmt,r", EIGHT[:2] + EIGHT[len(ref.EIGHT_BIT_PRESETS):][:4],
                         ids=IDS8[:2] + IDS8[len(ref.EIGHT_BIT_PRESETS):][:4])
def test_selections_exact(fmt, r):
    codes = codes_of(r)
    a = as_array(fmt, codes)
    n = 0
    for name, uf in SEL.items():
        for x in [0.1, -0.1, 1000.0, -1000.0, 1e300, 2, 1.4, -(2 ** 62)]:
            with np.errstate(all="ignore"):
                got = raw(uf(a, x))
                got_r = raw(uf(x, a))
                # element by element (fewer elements than codes) = per-code table
                assert np.array_equal(raw(uf(a[:100], x)), got[:100])
            for i, c in enumerate(codes):
                w = ref_select(r, int(c), x, name, "nearest_even")
                if w is None:
                    continue
                if relation(ref_value(r, c), num_value(x)) == 0 and ref_value(r, c) == 0:
                    continue     # equal zeros: ordered by the operation (checked below)
                assert same_code(r, int(got[i]), w[0]), (fmt, name, x, hex(int(c)))
                assert same_code(r, int(got_r[i]), w[0]), (fmt, name, x, hex(int(c)))
                n += 1
    assert n > 4 * 8 * 200
    q = np.array([-0.0, 0.0], dtype=fmt.dtype) if r.signed and r.specials != "fnuz" else None
    if q is not None:
        assert np.signbit(np.maximum(q, -0.0).astype(np.float64)).tolist() == [True, False]
        assert np.signbit(np.maximum(q, 0.0).astype(np.float64)).tolist() == [False, False]
        assert np.signbit(np.minimum(q, -0.0).astype(np.float64)).tolist() == [True, True]


def test_minimum_with_an_unrepresentable_bound_is_not_nan():
    q = np.array([1.5, 448.0, -448.0], dtype=softfp8.e4m3)
    with np.errstate(all="raise"):
        assert raw(np.minimum(q, 1000.0)).tolist() == raw(q).tolist()
        assert raw(np.maximum(q, -1e300)).tolist() == raw(q).tolist()
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        np.maximum(q, 1000.0)      # the selected 1000 overflows in E4M3


@pytest.mark.parametrize("fmt,r", [EIGHT[0], EIGHT[len(ref.EIGHT_BIT_PRESETS)],
                                   EIGHT[len(ref.EIGHT_BIT_PRESETS) + 3]],
                         ids=["e4m3", "cf143_10", "custom_fn"])
def test_clip_exact(fmt, r):
    codes = codes_of(r)
    a = as_array(fmt, codes)
    bounds = [(0, 1), (0.1, 0.2), (-1000.0, 1000.0), (0, 1000), (-0.5, 2 ** 40), (2, 1)]
    n = 0
    for lo, hi in bounds:
        with np.errstate(all="raise"):
            got = np.clip(a, lo, hi)
            short = raw(np.clip(a[:100], lo, hi))     # element by element
        assert got.dtype == fmt.dtype
        got = raw(got)
        assert np.array_equal(short, got[:100])
        for i, c in enumerate(codes):
            v = ref_value(r, c)
            if v is None:
                assert ref.is_nan(r, int(got[i]))
                continue
            sel, val = ("x", v)
            if val < num_value(lo):
                sel, val = "lo", num_value(lo)
            if val > num_value(hi):
                sel, val = "hi", num_value(hi)
            want = int(c) if sel == "x" else ref_round_number(r, lo if sel == "lo" else hi,
                                                              "nearest_even")[0]
            assert int(got[i]) == want, (fmt, lo, hi, hex(int(c)))
            n += 1
    # bounds given as arrays of the format
    lo_a, hi_a = np.array(-2.0, dtype=fmt.dtype), np.array(3.0, dtype=fmt.dtype)
    got = raw(np.clip(a, lo_a, hi_a))
    for i, c in enumerate(codes):
        v = ref_value(r, c)
        if v is not None:
            w = int(raw(lo_a)) if v < -2 else int(raw(hi_a)) if v > 3 else int(c)
            assert int(got[i]) == w
            n += 1
    assert n > 6 * 200
    # NaN bound: NaN, as NumPy's float clip
    if r.specials != "none":
        assert np.isnan(np.clip(a[:3], math.nan, 1).astype(np.float64)).all()


# --------------------------------------------------------------------------
# the format is kept (NEP 50) for every kind of format; NumPy scalars are strong
# --------------------------------------------------------------------------

KINDS = [softfp8.e4m3, softfp8.cfloat8_143(bias=10), softfp8.shp(bias=20),
         softfp8.format(exp_bits=4, man_bits=3, bias=7)]


@pytest.mark.parametrize("fmt", KINDS, ids=["e4m3", "cf143_10", "shp20", "custom"])
def test_results_stay_in_the_format(fmt):
    d = fmt.dtype
    a = np.array([0.5, 1.5, -2.0], dtype=d)
    with np.errstate(all="ignore"):   # 2**62 - a overflows in every one of these formats
        results = (a * 2, 0.5 + a, a / 3.0, a - 1, 2 ** 62 - a, np.maximum(a, 0),
                   np.clip(a, 0, 1), np.clip(a, -1.0, 1), np.fmin(1.0, a),
                   np.full(3, 1.5, dtype=d), np.copysign(a, -1.0), np.nextafter(a, 10.0))
    for r in results:
        assert r.dtype == d
    assert (a < 1).dtype == np.bool_
    # NumPy scalars and float64 arrays are not Python numbers: float64, exact values
    for other in (np.float64(2.0), np.int32(3), np.array([2.0, 2.0, 2.0])):
        r = a * other
        assert r.dtype == np.float64
        assert r.tolist() == [float(v) * float(other if np.ndim(other) == 0 else 2.0) for v in a]
    # arrays of a custom format take NumPy floats like presets do
    r16 = (a + np.float16(1)).dtype
    assert r16 == np.result_type(d, np.float16)
    assert r16 == {0: np.float16, 1: np.float32, 2: np.float32, 3: np.float64}[KINDS.index(fmt)]
    assert np.concatenate([a, np.array([1.0])]).dtype == np.float64


def test_where_with_python_numbers():
    """np.where keeps presets in the format; for parametric formats NumPy 2.4 cannot find
    the descriptor of the number without a value (see docs/numpy.md) and the result is
    float64 with exact values, as before."""
    q = np.array([1.5, -2.0], dtype=softfp8.e4m3)
    r = np.where(q > 0, q, 0.0)
    assert r.dtype == q.dtype and r.astype(np.float64).tolist() == [1.5, 0.0]
    cf = np.array([1.5, -2.0], dtype=softfp8.cfloat8_143(bias=10))
    r = np.where(cf > 0, cf, 0.0)
    assert r.dtype == np.float64 and r.tolist() == [1.5, 0.0]
    assert np.where(cf > 0, cf, np.zeros(2, dtype=cf.dtype)).dtype == cf.dtype


def test_stochastic_rounding_of_the_number():
    """Under stochastic rounding each element rounds the number with its own bits (a
    stream of its own, reproducible under a seed): 1.0 * 0.1 gives the two E4M3
    neighbours of 0.1, about in proportion; so does minimum (no per-code table then)."""
    r = ref.preset("e4m3")
    lo = ref_round_number(r, 0.1, "downward")[0]
    hi = ref_round_number(r, 0.1, "upward")[0]
    a = np.ones(4000, dtype=softfp8.e4m3)
    outs = []
    for uf in (np.multiply, np.minimum):
        for _ in range(2):
            with softfp8.rounding("stochastic", seed=1234):
                outs.append(raw(uf(a, 0.1)))
        assert np.array_equal(outs[-1], outs[-2])            # reproducible
        got = outs[-1]
        assert set(np.unique(got).tolist()) == {lo, hi}
        p_hi = float((Fraction(0.1) - ref_value(r, lo)) / (ref_value(r, hi) - ref_value(r, lo)))
        assert abs(np.mean(got == hi) - p_hi) < 0.05
