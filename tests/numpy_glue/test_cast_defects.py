"""Regression tests for the cast defects of issue 8.

* long double sources and destinations are exact: an x87 80-bit value is decoded
  bit by bit and rounded once (it used to be rounded to float64 first);
* NumPy integer scalars (every width, signed and unsigned) and lists of them
  take the exact integer path, as Python ints and integer arrays do;
* uint64 arrays and scalars above 2**63 are exact;
* codes above a format's width (a format narrower than its uint8/uint16
  storage) are read as ``code & ((1 << bits) - 1)`` by every cast.

Expected values come from tests/reference.py (exact Fraction arithmetic, never
softfp8) or from the raw bit fields of the inputs.
"""

import random
import sys
import warnings
import zlib
from fractions import Fraction

import numpy as np
import pytest

try:  # inside the tests package (tests/numpy_glue/)
    from ..models import rational as ref
except ImportError:  # a top-level test module next to tests/reference.py
    import reference as ref

import softfp8

MODES = ref.MODES  # the six deterministic rounding modes
assert len(MODES) == 6
INEXACT, UNDERFLOW, OVERFLOW, INVALID, DENORMAL = (ref.INEXACT, ref.UNDERFLOW, ref.OVERFLOW,
                                                  ref.INVALID, ref.DENORMAL)
TARGETS = ["e4m3", "e5m2", "bfloat16", "float16"]

X87 = np.finfo(np.longdouble).nmant == 63 and np.dtype(np.longdouble).itemsize in (12, 16)
needs_x87 = pytest.mark.skipif(not X87, reason="long double is not the x87 80-bit format")

# The x87 extended format as a reference format: 15 exponent bits, bias 16383,
# 63 stored fraction bits (the integer bit is implicit in the reference model).
LDREF = ref.make_format(15, 63, 16383, name="x87 extended")


def dt(fmt):
    return np.dtype(fmt.dtype)


def codes_of(arr):
    return arr.view(np.uint8 if arr.dtype.itemsize == 1 else np.uint16)


def sf_format(rf):
    """The softfp8 format of a reference format made by ref.make_format."""
    return softfp8.format(exp_bits=rf.exp_bits, man_bits=rf.man_bits, bias=rf.bias,
                          specials=rf.specials, subnormals=rf.subnormals, signed=rf.signed,
                          saturate=rf.saturate)


def cast_flags(src, dtype, mode="nearest_even", tininess="after"):
    """src.astype(dtype) under mode/tininess -> (result, flags raised)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        with softfp8.rounding(mode), softfp8.tininess(tininess), softfp8.collect_flags() as fl:
            r = src.astype(dtype)
    return r, int(fl.flags)


# --------------------------------------------------------------------------
# long double (x87 extended) helpers: build values from bit fields
# --------------------------------------------------------------------------

def ld_array(fields):
    """np.longdouble array from (sign, biased exponent, 64-bit significand) triples."""
    size = np.dtype(np.longdouble).itemsize
    buf = b"".join(m.to_bytes(8, "little") + ((s << 15) | e).to_bytes(2, "little")
                   + bytes(size - 10) for s, e, m in fields)
    return np.frombuffer(buf, dtype=np.longdouble).copy()


def ld_fields(x):
    """(sign, biased exponent, significand) of a long double."""
    b = np.asarray(x, dtype=np.longdouble).tobytes()[:10]
    se = int.from_bytes(b[8:10], "little")
    return se >> 15, se & 0x7FFF, int.from_bytes(b[:8], "little")


def ld_value(e, m):
    """Exact magnitude of a finite x87 value (denormals and pseudo-denormals: exponent 1)."""
    return Fraction(m) * Fraction(2) ** (max(e, 1) - 16383 - 63)


def ld_expected(rf, sign, e, m, mode, tininess="after"):
    """(code, flags) of a finite long double rounded into rf."""
    fl = DENORMAL if e == 0 and m != 0 else 0
    code, rfl = ref.round_pack(rf, sign, ld_value(e, m), mode, None, tininess == "before")
    return code, rfl | fl


def _exponent_range(rf):
    """(mantissa bits, smallest normal exponent, largest field exponent) of a model format."""
    return rf.man_bits, 1 - rf.bias, (1 << rf.exp_bits) - 1 - rf.bias


def near_boundaries(rf, rng, n):
    """Random finite x87 (sign, e, m) near the rounding points of rf, across its range."""
    M, emin, emax = _exponent_range(rf)
    out = []
    for _ in range(n):
        E = rng.randint(emin - M - 3, emax + 2)          # binade [2^E, 2^(E+1))
        top = rng.getrandbits(M) | (1 << M)               # M+1 leading bits
        k = 63 - M                                        # bits below the format's lsb
        half = 1 << (k - 1)
        low = rng.choice([0, half, half - 1, half + 1, 1, (1 << k) - 1,
                          rng.getrandbits(k), half + rng.getrandbits(k - 8)])
        m = (top << k) | low
        out.append((rng.getrandbits(1), E + 16383, m))
    return out


# --------------------------------------------------------------------------
# (a) long double -> format
# --------------------------------------------------------------------------

@needs_x87
def test_issue_example_long_double():
    x = np.longdouble(1) + np.longdouble(2) ** -4 + np.longdouble(2) ** -60
    assert ld_fields(x) == (0, 16383, (1 << 63) | (1 << 59) | (1 << 3))
    assert float(np.array(x).astype(softfp8.e4m3.dtype)) == 1.125
    assert float(np.array([x], dtype=softfp8.e4m3.dtype)[0]) == 1.125
    a = np.zeros(1, softfp8.e4m3.dtype)
    a[0] = x
    assert float(a[0]) == 1.125


@needs_x87
@pytest.mark.parametrize("name", TARGETS)
@pytest.mark.parametrize("mode", MODES)
def test_long_double_near_rounding_points(name, mode):
    rf = ref.preset(name)
    f = getattr(softfp8, name)
    rng = random.Random(zlib.crc32(("%s %s" % (name, mode)).encode()))
    fields = near_boundaries(rf, rng, 300)
    src = ld_array(fields)
    # whole-array cast: every code exact, flags the OR of the elements'
    got, gotfl = cast_flags(src, dt(f), mode)
    want_all = 0
    bad = []
    for i, (s, e, m) in enumerate(fields):
        code, wfl = ld_expected(rf, s, e, m, mode)
        want_all |= wfl
        if int(codes_of(got)[i]) != code:
            bad.append((i, hex(m), e - 16383, hex(int(codes_of(got)[i])), hex(code)))
    assert not bad, bad[:10]
    assert gotfl == want_all
    # one element at a time: flags per element (array cast and scalar assignment)
    n = 0
    for s, e, m in fields[:60]:
        code, wfl = ld_expected(rf, s, e, m, mode)
        r, rfl = cast_flags(ld_array([(s, e, m)]), dt(f), mode)
        assert (int(codes_of(r)[0]), rfl) == (code, wfl), (s, e, hex(m))
        x = ld_array([(s, e, m)])[0]
        a = np.zeros(1, dt(f))
        with softfp8.rounding(mode), softfp8.collect_flags() as fl:
            a[0] = x
        assert (int(codes_of(a)[0]), int(fl.flags)) == (code, wfl), (s, e, hex(m))
        n += 1
    assert n == 60


@needs_x87
@pytest.mark.parametrize("tininess", ["after", "before"])
def test_long_double_tininess(tininess):
    rf = ref.preset("e5m2")
    rng = random.Random(7)
    # values around the smallest normal and subnormals
    fields = [(s, e, m) for s, e, m in near_boundaries(rf, rng, 400) if e - 16383 < -13]
    assert len(fields) > 20
    for s, e, m in fields:
        code, wfl = ld_expected(rf, s, e, m, "nearest_even", tininess)
        r, rfl = cast_flags(ld_array([(s, e, m)]), softfp8.e5m2.dtype, "nearest_even", tininess)
        assert (int(codes_of(r)[0]), rfl) == (code, wfl), (s, e, hex(m))


@needs_x87
@pytest.mark.parametrize("name", TARGETS)
@pytest.mark.parametrize("mode", MODES)
def test_long_double_extremes(name, mode):
    """Huge and tiny long doubles (beyond float64), denormals, pseudo-denormals."""
    rf = ref.preset(name)
    f = getattr(softfp8, name)
    top = 1 << 63
    cases = [
        (0, 0x7FFE, (1 << 64) - 1),          # largest long double
        (1, 0x7FFE, (1 << 64) - 1),
        (0, 16383 + 13287, top | 12345),     # ~1e4000
        (1, 16383 + 13287, top),
        (0, 16383 - 13288, top | 99),        # ~1e-4000
        (1, 16383 - 13288, top),
        (0, 1, top),                         # smallest normal
        (0, 0, 1),                           # smallest denormal
        (1, 0, (1 << 63) - 1),               # largest denormal
        (0, 0, top | 5),                     # pseudo-denormal (integer bit set, exponent 0)
        (0, 16383 + 1100, top | (1 << 40)),  # beyond float64, within long double
        (0, 16383 - 1100, top),
        (0, 0, 0), (1, 0, 0),                # zeros
    ]
    src = ld_array(cases)
    got, _ = cast_flags(src, dt(f), mode)
    for i, (s, e, m) in enumerate(cases):
        code, wfl = ld_expected(rf, s, e, m, mode)
        assert int(codes_of(got)[i]) == code, (s, e, hex(m))
        r, rfl = cast_flags(ld_array([(s, e, m)]), dt(f), mode)
        assert (int(codes_of(r)[0]), rfl) == (code, wfl), (s, e, hex(m))


@needs_x87
def test_long_double_issue_flags():
    with np.errstate(all="ignore"):
        for name, want in (("e5m2", "inf"), ("e4m3", "nan")):
            f = getattr(softfp8, name)
            with softfp8.collect_flags() as fl:
                r = np.array([np.longdouble("1e4000")]).astype(f.dtype)
            assert fl.overflow and fl.inexact, (name, fl)
            assert np.isinf(r.astype(np.float64)[0]) if want == "inf" else np.isnan(
                r.astype(np.float64)[0])
            with softfp8.collect_flags() as fl:
                r = np.array([np.longdouble("1e-4000")]).astype(f.dtype)
            assert fl.underflow and fl.inexact and not fl.overflow, (name, fl)
            assert float(r[0]) == 0.0


@needs_x87
@pytest.mark.parametrize("name", TARGETS)
def test_long_double_specials(name):
    rf = ref.preset(name)
    f = getattr(softfp8, name)
    top = 1 << 63
    for sign in (0, 1):
        code, wfl = ref.deliver(rf, ("I", sign))
        r, rfl = cast_flags(ld_array([(sign, 0x7FFF, top)]), dt(f))
        assert (int(codes_of(r)[0]), rfl) == (code, wfl), ("inf", sign)
        for m, quiet in ((top | (1 << 62), True), (top | (1 << 62) | 77, True),
                         (top | 1, False), (top | (1 << 61), False)):
            r, rfl = cast_flags(ld_array([(sign, 0x7FFF, m)]), dt(f))
            assert np.isnan(r.astype(np.float64)[0]), hex(m)
            assert rfl == (0 if quiet else INVALID), (hex(m), rfl)
            x = ld_array([(sign, 0x7FFF, m)])[0]
            if ld_fields(x) == (sign, 0x7FFF, m):  # NumPy kept the scalar's bits
                a = np.zeros(1, dt(f))
                with softfp8.collect_flags() as fl:
                    a[0] = x
                assert np.isnan(a.astype(np.float64)[0]) and int(fl.flags) == rfl, hex(m)
    # invalid encodings (unnormals, pseudo-infinity, pseudo-NaN) read as an invalid NaN
    for s, e, m in ((0, 16383, 1 << 62), (0, 0x7FFF, 0), (1, 0x7FFF, 1 << 62)):
        r, rfl = cast_flags(ld_array([(s, e, m)]), dt(f))
        assert np.isnan(r.astype(np.float64)[0]) and rfl == INVALID, (s, e, hex(m))


# --------------------------------------------------------------------------
# (a) format -> long double: exact (or rounded once for formats beyond its range)
# --------------------------------------------------------------------------

def x87_bytes(code):
    """x87 bytes (10) of an LDREF code."""
    sign = code >> 78
    e = (code >> 63) & 0x7FFF
    frac = code & ((1 << 63) - 1)
    m = frac | ((1 << 63) if e != 0 else 0)
    return m.to_bytes(8, "little") + ((sign << 15) | e).to_bytes(2, "little")


TO_LD_FORMATS = [
    ref.preset("e4m3"), ref.preset("e5m2"), ref.preset("e4m3fnuz"), ref.preset("bfloat16"),
    ref.preset("float16"), ref.preset("uhp"),
    ref.make_format(5, 2, -1100),        # beyond float64, inside long double
    ref.make_format(4, 3, 16400),        # reaching into the long double denormals
    ref.make_format(4, 3, 20000),        # below long double: underflows
    ref.make_format(6, 1, -16350),       # above long double: overflows
    ref.make_format(5, 4, 15),           # 10 bits in uint16
    ref.make_format(3, 2, 3, subnormals="flush"),
]


@needs_x87
@pytest.mark.parametrize("rf", TO_LD_FORMATS, ids=lambda r: r.name)
@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "upward", "downward"])
def test_to_long_double(rf, mode):
    f = getattr(softfp8, rf.name) if rf.name in ref.PRESET_TABLE else sf_format(rf)
    ncodes = 1 << rf.bits
    codes = np.arange(ncodes, dtype=np.uint8 if rf.bits <= 8 else np.uint16)
    src = codes.view(dt(f))
    got, gotfl = cast_flags(src, np.longdouble, mode)
    raw = got.tobytes()
    size = got.dtype.itemsize
    want_all = 0
    bad = []
    n = 0
    for c in range(ncodes):
        desc, ofl = ref.exact_convert(rf, LDREF, c)
        g = raw[c * size:c * size + 10]
        if desc[0] == "N":
            s, e, m = ld_fields(got[c])
            ok = e == 0x7FFF and m & ((1 << 63) - 1) != 0
            want_all |= ofl
        else:
            code, dfl = ref.deliver(LDREF, desc, mode)
            want_all |= ofl | dfl
            ok = g == x87_bytes(code)
        if not ok:
            bad.append((hex(c), g.hex()))
        n += 1
    assert n == ncodes
    assert not bad, bad[:10]
    assert gotfl == want_all


@needs_x87
def test_long_double_round_trip_scalars():
    """Every e5m2 / bfloat16 value survives format -> long double scalar -> format."""
    n = 0
    for name in ("e5m2", "bfloat16"):
        f = getattr(softfp8, name)
        codes = np.arange(1 << f.bits, dtype=np.uint8 if f.bits <= 8 else np.uint16)
        arr = codes.view(dt(f))
        with np.errstate(invalid="ignore"):
            lds = arr.astype(np.longdouble)
        back = np.zeros(len(codes), dt(f))
        for i in range(0, len(codes), 97):
            back[i] = lds[i]
            n += 1
        sel = slice(0, len(codes), 97)
        nan = np.isnan(lds[sel])
        assert np.array_equal(codes_of(back[sel])[~nan], codes[sel][~nan])
    assert n == 3 + 676


# --------------------------------------------------------------------------
# (b) integers: NumPy scalars, lists of them and uint64 arrays, exactly
# --------------------------------------------------------------------------

def test_issue_example_int64_scalar():
    v = 2**62 + 2**54 + 1
    r = np.array(np.int64(v), dtype=softfp8.bfloat16.dtype)
    assert int(r.astype(np.float64)) == 2**62 + 2**55
    with softfp8.rounding("upward"), softfp8.collect_flags() as fl:
        r = np.array(np.int64(2**60 + 1), dtype=softfp8.bfloat16.dtype)
    assert int(r.astype(np.float64)) == 2**60 + 2**53
    assert fl.inexact


def int_near_boundaries(rf, rng, n, lo, hi):
    """Random integers in [lo, hi] near the rounding points of rf."""
    M = rf.man_bits
    out = []
    while len(out) < n:
        nb = rng.randint(1, hi.bit_length())
        if nb <= M + 1:
            v = rng.getrandbits(nb)
        else:
            k = nb - M - 1
            half = 1 << (k - 1)
            low = rng.choice([0, half, half - 1, half + 1, 1, (1 << k) - 1, rng.getrandbits(k)])
            v = ((rng.getrandbits(M) | (1 << M)) << k) | low
        if rng.getrandbits(1) and lo < 0:
            v = -v
        if lo <= v <= hi:
            out.append(v)
    return out


INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
             np.intc, np.longlong, np.ulonglong]


@pytest.mark.parametrize("name", TARGETS)
@pytest.mark.parametrize("mode", MODES)
def test_integer_scalars_lists_arrays(name, mode):
    rf = ref.preset(name)
    f = getattr(softfp8, name)
    d = dt(f)
    rng = random.Random(zlib.crc32(("%s %s int" % (name, mode)).encode()))
    n = 0
    for t in INT_TYPES:
        info = np.iinfo(t)
        vals = int_near_boundaries(rf, rng, 40, int(info.min), int(info.max))
        want = [ref.round_pack(rf, 0, v, mode) for v in vals]
        # scalars, one at a time, with their flags
        for v, (code, wfl) in zip(vals, want):
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                with softfp8.rounding(mode), softfp8.collect_flags() as fl:
                    r = np.array(t(v), dtype=d)
                assert (int(codes_of(r.reshape(1))[0]), int(fl.flags)) == (code, wfl), (t, v)
                a = np.zeros(1, d)
                with softfp8.rounding(mode), softfp8.collect_flags() as fl:
                    a[0] = t(v)
                assert (int(codes_of(a)[0]), int(fl.flags)) == (code, wfl), (t, v)
            n += 1
        wcodes = [c for c, _ in want]
        wall = 0
        for _, w in want:
            wall |= w
        # a list of scalars
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            with softfp8.rounding(mode), softfp8.collect_flags() as fl:
                r = np.array([t(v) for v in vals], dtype=d)
        assert [int(c) for c in codes_of(r)] == wcodes, t
        assert int(fl.flags) == wall, t
        # an array cast
        r, rfl = cast_flags(np.array(vals, dtype=t), d, mode)
        assert [int(c) for c in codes_of(r)] == wcodes, t
        assert rfl == wall, t
    assert n == 40 * len(INT_TYPES)


def test_uint64_above_2_63():
    rf = ref.preset("bfloat16")
    vals = [2**64 - 1, 2**63 + 2**55, 2**63 + 2**55 + 1, 2**63 + 2**56 + 2**55, 2**63 + 1,
            2**64 - 2**55, 2**64 - 2**55 - 1]
    for mode in MODES:
        want = [ref.round_pack(rf, 0, v, mode) for v in vals]
        r, rfl = cast_flags(np.array(vals, dtype=np.uint64), softfp8.bfloat16.dtype, mode)
        assert [int(c) for c in codes_of(r)] == [c for c, _ in want], mode
        for v, (code, wfl) in zip(vals, want):
            with softfp8.rounding(mode), softfp8.collect_flags() as fl:
                r = np.array(np.uint64(v), dtype=softfp8.bfloat16.dtype)
            assert (int(codes_of(r.reshape(1))[0]), int(fl.flags)) == (code, wfl), (mode, v)


# --------------------------------------------------------------------------
# (d) codes above a format's width: every cast reads code & ((1 << bits) - 1)
# --------------------------------------------------------------------------

NARROW = [
    dict(exp_bits=1, man_bits=0, bias=0, specials="none"),     # 2 bits
    dict(exp_bits=2, man_bits=1, bias=1),                      # 4 bits
    dict(exp_bits=3, man_bits=2, bias=3),                      # 6 bits
    dict(exp_bits=4, man_bits=2, bias=7, specials="fn"),       # 7 bits
    dict(exp_bits=4, man_bits=2, bias=7, signed=False, specials="none"),
    dict(exp_bits=5, man_bits=4, bias=15),                     # 10 bits in uint16
    dict(exp_bits=5, man_bits=8, bias=15, subnormals="flush"),  # 14 bits
]

NARROW_TARGETS = [np.float16, np.float32, np.float64, np.longdouble, np.int8, np.int64,
                  np.uint8, np.uint64, np.bool_, "e4m3", "bfloat16", "wide"]


@pytest.mark.parametrize("kw", NARROW, ids=lambda k: "%(exp_bits)d-%(man_bits)d" % k +
                         ("-" + k["specials"] if "specials" in k else "")
                         + ("-u" if k.get("signed") is False else ""))
@pytest.mark.parametrize("n", [7, 5000])
def test_codes_above_width_are_masked(kw, n):
    f = softfp8.format(**kw)
    d = dt(f)
    st = np.uint8 if d.itemsize == 1 else np.uint16
    mask = (1 << f.bits) - 1
    rng = np.random.default_rng(f.bits * 1000 + n)
    raw = rng.integers(0, np.iinfo(st).max + 1, n, dtype=st)
    raw[:3] = [mask + 1, np.iinfo(st).max, mask]
    assert (raw > mask).any()
    masked = raw & st(mask)
    wide = softfp8.format(exp_bits=6, man_bits=9, bias=31)
    checked = 0
    for t in NARROW_TARGETS:
        if t in ("e4m3", "bfloat16"):
            td = dt(getattr(softfp8, t))
        elif t == "wide":
            td = dt(wide)
        else:
            td = np.dtype(t)
        for mode in ("nearest_even", "upward"):
            a, afl = cast_flags(raw.view(d), td, mode)
            b, bfl = cast_flags(masked.view(d), td, mode)
            assert a.tobytes() == b.tobytes(), (t, mode)
            assert afl == bfl, (t, mode)
            checked += 1
    assert checked == 2 * len(NARROW_TARGETS)
    # scalars read from such an array
    arr = raw.view(d)
    for i in range(min(n, 50)):
        x, y = arr[i], masked.view(d)[i]
        fx, fy = float(x), float(y)
        assert (fx == fy) or (fx != fx and fy != fy), (hex(int(raw[i])), fx, fy)
        z = np.zeros(1, dt(wide))
        z[0] = x
        w = np.zeros(1, dt(wide))
        w[0] = y
        assert z.tobytes() == w.tobytes()


# --------------------------------------------------------------------------
# decimal strings, Fraction and Decimal objects: exact, rounded once
# (they used to go through float(), i.e. rounded twice)
# --------------------------------------------------------------------------

def format_fraction(x, places):
    """x (a multiple of 10**-places) as a decimal numeral with `places` digits after the point."""
    n = x * 10 ** places
    assert n.denominator == 1
    digits = str(abs(n.numerator)).rjust(places + 1, "0")
    return ("-" if n < 0 else "") + digits[:-places] + "." + digits[-places:]


def decimal_cases(rf, rng, n):
    """Decimal numerals at, 10^-places above and below values and midpoints of rf."""
    M, emin, emax = _exponent_range(rf)
    out = []
    for _ in range(n):
        E = rng.randint(emin - M - 2, emax + 1)
        q = E - M - 1
        base = (rng.getrandbits(M + 1) | (1 << (M + 1)) | 1) * Fraction(2) ** q  # a midpoint
        if rng.getrandbits(1):
            base += Fraction(2) ** q  # a value of rf (or the next binade)
        places = max(30, 25 - q)
        x = (base + rng.choice([0, 1, -1]) * Fraction(1, 10 ** places)) * rng.choice([1, -1])
        if rng.getrandbits(1):
            s = format_fraction(x, places)
        else:
            s = format_fraction(x * 1000, places - 3) + "e-3"
        out.append(s)
    return out


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "bfloat16"])
@pytest.mark.parametrize("mode", MODES)
def test_decimal_strings_fractions_decimals(name, mode):
    import decimal

    rf = ref.preset(name)
    d = dt(getattr(softfp8, name))
    rng = random.Random(zlib.crc32(("%s %s dec" % (name, mode)).encode()))
    strs = decimal_cases(rf, rng, 60)
    want = [ref.round_pack(rf, 0, Fraction(s), mode) for s in strs]
    n = 0
    with decimal.localcontext() as ctx:
        ctx.prec = 400
        for s, (code, wfl) in zip(strs, want):
            for obj in (s, s.encode(), Fraction(s), decimal.Decimal(s)):
                a = np.zeros(1, d)
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    with softfp8.rounding(mode), softfp8.collect_flags() as fl:
                        a[0] = obj
                assert (int(codes_of(a)[0]), int(fl.flags)) == (code, wfl), (s, type(obj))
                n += 1
    assert n == 4 * 60
    # a string array cast
    r, rfl = cast_flags(np.array(strs), d, mode)
    assert [int(c) for c in codes_of(r)] == [c for c, _ in want]
    wall = 0
    for _, w in want:
        wall |= w
    assert rfl == wall


def test_decimal_string_extremes():
    f = softfp8.e5m2
    rf = ref.preset("e5m2")
    cases = ["1e400", "-1e400", "1e-400", "-1e-400", "1e99999999999999999999", "1e-99999999999999999999",
             "0." + "0" * 5000 + "1", "1" + "0" * 5000, "1.25" + "0" * 6000 + "1", "-0.0", "0e5",
             " 1.25 ", "+.5", "5.", "1_000.5", "57344.000000000000000000001", "61439.99999999999999999"]
    for s in cases:
        old_limit = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)  # Fraction() of the 5000-digit numerals
        try:
            fr = None if "e99999" in s or "e-99999" in s else Fraction(s.replace("_", "").strip())
        finally:
            sys.set_int_max_str_digits(old_limit)
        a = np.zeros(1, f.dtype)
        with np.errstate(all="ignore"), softfp8.collect_flags() as fl:
            a[0] = s
        if fr is None:
            huge = "e-" not in s
            assert fl.inexact and (fl.overflow if huge else fl.underflow), s
            assert float(a[0]) == (np.inf if huge else 0.0), s
            continue
        zero_sign = 1 if fr == 0 and s.strip().startswith("-") else 0
        code, wfl = ref.round_pack(rf, zero_sign, fr, "nearest_even")
        assert (int(codes_of(a)[0]), int(fl.flags)) == (code, wfl), s
    for s in ("inf", "-Infinity", "nan", "-nan"):
        a = np.zeros(1, f.dtype)
        with softfp8.collect_flags() as fl:
            a[0] = s
        assert np.isnan(float(a[0])) if "nan" in s else float(a[0]) == float(s), s
        assert int(fl.flags) == 0, s
    for bad in ("abc", "1e", "--1", ""):
        with pytest.raises(ValueError):
            np.zeros(1, f.dtype)[0] = bad


# --------------------------------------------------------------------------
# stochastic rounding: the same core decision as the float64 / int64 paths
# --------------------------------------------------------------------------

@needs_x87
@pytest.mark.parametrize("name", ["e4m3", "bfloat16"])
def test_stochastic_long_double_and_integers(name):
    f = getattr(softfp8, name)
    rng = np.random.default_rng(11)
    x = rng.uniform(-100, 100, 3000)
    ints = rng.integers(-2**40, 2**40, 3000)

    def sr(src):
        with softfp8.rounding("stochastic", seed=1234), np.errstate(all="ignore"):
            return codes_of(src.astype(f.dtype))

    # values exact in float64: identical codes whatever the source type
    assert np.array_equal(sr(x.astype(np.longdouble)), sr(x))
    assert np.array_equal(sr(ints.astype(np.float64)), sr(ints))
    # below float64's precision: 1 + 2^-60 and 1.125 - 2^-62 are inexact, and their
    # 32-bit stochastic fractions are 0 and 2^32 - 1 (float64 would see 1 and 1.125)
    top = 1 << 63
    src = ld_array([(0, 16383, top | 8)] * 50 + [(0, 16383, top | (1 << 60) - 2)] * 50)
    with softfp8.rounding("stochastic", seed=99), softfp8.collect_flags() as fl:
        r = src.astype(softfp8.e4m3.dtype).astype(np.float64)
    assert fl.inexact
    assert (r[:50] == 1.0).all() and (r[50:] == 1.125).all()


@pytest.mark.parametrize("mode", MODES)
def test_python_ints_beyond_64_bits(mode):
    rf = ref.preset("bfloat16")
    rng = random.Random(zlib.crc32(mode.encode()))
    vals = [2**64, 2**64 + 1, -(2**64) - 1, 2**127 + 2**119, 2**127 + 2**119 + 1, -(2**127 + 2**119),
            2**128 - 1, 2**200]
    vals += [s * int_near_boundaries(rf, rng, 1, 0, 2**130)[0] for s in (1, -1) * 20]
    for v in vals:
        code, wfl = ref.round_pack(rf, 0, v, mode)
        a = np.zeros(1, softfp8.bfloat16.dtype)
        with np.errstate(all="ignore"), softfp8.rounding(mode), softfp8.collect_flags() as fl:
            a[0] = v
        assert (int(codes_of(a)[0]), int(fl.flags)) == (code, wfl), v
