"""Issue 9, "scalars and arrays like np.float16": softfp8 scalars and arrays next
to np.float16 (comparisons with foreign objects, the scalar type on sequences,
complex casts, str / bytes promotion and casts, overflow of casts from strings and
objects, printing, spacing of the largest value, hashing) and astype between
softfp8 and ml_dtypes dtypes.

Expected values: NumPy's float16 itself (side by side), or the independent exact
model tests/models/rational.py (codes decoded and rounded exactly), or ml_dtypes'
own decoding of its codes.
"""

import math
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import softfp8

from ..models import rational as ref
from .test_numpy_dtypes import A, codes_all

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")
PRESETS = list(softfp8.presets().values())
PIDS = [f.name for f in PRESETS]
EIGHT = [f for f in PRESETS if f.bits == 8]
EIDS = [f.name for f in EIGHT]
CF = softfp8.cfloat8_143(bias=7)


def C(arr):
    arr = np.asarray(arr)
    return arr.view(np.uint8 if arr.dtype.itemsize == 1 else np.uint16)


def model(fmt):
    """The model's format of the same parameters (restated from the format's attributes)."""
    return ref.make_format(fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.specials, fmt.subnormals,
                           fmt.signed, fmt.saturate)


def value(mfmt, code):
    """Exact value of a code as a float (nan / +-inf / signed zero kept)."""
    d = ref.decode(mfmt, int(code))
    if d.kind == "nan":
        return math.nan
    if d.kind == "inf":
        return -math.inf if d.sign else math.inf
    if d.kind == "zero":
        return -0.0 if d.sign else 0.0
    return float(d.value)  # exact: every <= 16-bit value is a float64


def outcome(fn):
    try:
        r = fn()
    except TypeError:
        return TypeError
    return bool(r)


# --------------------------------------------------------------------------
# 1. comparisons with foreign objects
# --------------------------------------------------------------------------

FOREIGN = [None, "a", {}, object(), 1j, 2 + 0j, 3 - 1j, np.complex64(2), np.complex128(1 + 1j),
           Decimal("2"), Decimal("3"), Decimal("1.5"), Fraction(5, 2)]
OPS = {"==": lambda x, o: x == o, "!=": lambda x, o: x != o, "<": lambda x, o: x < o,
       "<=": lambda x, o: x <= o, ">": lambda x, o: x > o, ">=": lambda x, o: x >= o}


@pytest.mark.parametrize("fmt", PRESETS + [CF], ids=PIDS + ["cf143"])
def test_scalar_comparisons_with_foreign_objects_like_float16(fmt):
    s, h = fmt.dtype.type(2.0), np.float16(2.0)
    assert float(s) == 2.0
    n = 0
    for o in FOREIGN:
        for name, op in OPS.items():
            want = outcome(lambda: op(h, o))
            got = outcome(lambda: op(s, o))
            assert got == want, (fmt.name, o, name, got, want)
            n += 1
    assert n == 13 * 6
    # the equality results are plain bools, as NumPy's scalars give
    assert (s == None) is False or (s == None) == np.False_  # noqa: E711
    assert not (s == "a") and (s != "a") and not (s == 1j) and (s != 1j)


# --------------------------------------------------------------------------
# 2. the scalar type on sequences and arrays
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", PRESETS + [CF], ids=PIDS + ["cf143"])
def test_scalar_type_on_sequences_gives_arrays(fmt):
    t = fmt.dtype.type
    m = model(fmt)
    for src in ([1, 2.5, -3], (0.1, 7), np.array([[1.5, 2.25]]), range(4), np.arange(3, dtype=np.int16)):
        r = t(src)
        assert isinstance(r, np.ndarray) and r.dtype == fmt.dtype
        flat = np.asarray(src, dtype=np.float64).ravel()
        assert r.shape == np.shape(np.asarray(src))
        want = [ref.round_pack(m, 0, Fraction(float(x)))[0] for x in flat]
        assert C(r).ravel().tolist() == want
    # like np.float16: a 0-d array gives a scalar
    z = t(np.array(1.5))
    assert isinstance(z, softfp8.SoftScalar) and float(z) == value(m, ref.round_pack(m, 0, 1.5)[0])
    assert isinstance(np.float16(np.array(1.5)), np.float16)
    assert isinstance(np.float16([1, 2]), np.ndarray)


# --------------------------------------------------------------------------
# 3. complex casts
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", PRESETS + [CF], ids=PIDS + ["cf143"])
def test_complex_casts_like_float16(fmt):
    m = model(fmt)
    re = np.array([1.5, -0.3, 1e5, 3.0, 0.0, np.inf, -2.0 ** -20])
    im = np.array([2.0, 1.0, -1.0, 0.0, 5.0, 1.0, 3.0])
    for ct in (np.complex64, np.complex128, np.clongdouble):
        z = (re + 1j * im).astype(ct)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with np.errstate(all="ignore"):
                got = z.astype(fmt.dtype)
                np.array([1 + 1j]).astype(np.float16)
        kinds = [x.category for x in w]
        assert kinds.count(np.exceptions.ComplexWarning) == 2, kinds
        real = z.real.astype(np.float64)
        want = [ref.round_pack(m, int(math.copysign(1, x) < 0), abs(Fraction(x)))[0] if math.isfinite(x)
                else ref.convert(ref.FLOAT64, m, int(np.float64(x).view(np.uint64)))[0] for x in real]
        assert C(got).tolist() == want
        # format -> complex: the exact value and +0 imaginary parts, a safe cast where float16's is
        codes = codes_all(fmt)
        with np.errstate(all="ignore"):
            back = A(codes, fmt).astype(ct)
        exact = np.array([value(m, c) for c in codes])
        assert np.array_equal(back.real.astype(np.float64), exact, equal_nan=True)
        assert np.all(back.imag == 0) and not np.signbit(back.imag).any()
    # safe where the real part holds every value (e4m3 -> complex64, as float16's)
    assert np.can_cast(softfp8.e4m3.dtype, np.complex64) and np.can_cast(np.float16, np.complex64)
    assert np.can_cast(fmt.dtype, np.complex128, "same_kind")
    assert not np.can_cast(np.complex64, fmt.dtype, "same_kind")
    # scalars: a NumPy complex gives its real part with the warning, a Python complex
    # is a TypeError -- both as np.float16
    with pytest.warns(np.exceptions.ComplexWarning):
        s = fmt.dtype.type(np.complex128(2 + 5j))
    assert float(s) == 2.0
    for bad in (1j, 2 + 0j):
        with pytest.raises(TypeError):
            np.float16(bad)
        with pytest.raises(TypeError, match="complex"):
            fmt.dtype.type(bad)
    # promotion with complex follows the float the format promotes to
    assert np.result_type(softfp8.e4m3.dtype, np.complex64) == np.complex64
    assert np.result_type(softfp8.bfloat16.dtype, np.complex64) == np.complex64
    assert np.result_type(softfp8.e4m3.dtype, np.complex128) == np.complex128
    a = np.array([1.5, 2.0], softfp8.e4m3.dtype)
    assert (a + 1j).dtype == (np.array([1.5, 2.0], np.float16) + 1j).dtype == np.complex64
    assert (a == 1.5 + 0j).tolist() == [True, False]


# --------------------------------------------------------------------------
# 4. str / bytes
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", PRESETS + [CF], ids=PIDS + ["cf143"])
def test_string_promotion_and_casts_like_float16(fmt):
    d = fmt.dtype
    for k in ("U", "S", "U5", "S3"):
        assert np.promote_types(d, k) == np.promote_types(np.float16, k)
        assert np.promote_types(k, d) == np.promote_types(k, np.float16)
    assert np.promote_types(d, "U") == np.dtype("<U32")
    for k in ("U", "U32", "U10", "S"):
        for casting in ("safe", "same_kind"):
            assert np.can_cast(d, k, casting) == np.can_cast(np.float16, k, casting), (k, casting)
    a = np.array([1.5, 2.0, -0.25], d)
    h = np.array([1.5, 2.0, -0.25], np.float16)
    txt = np.array(["1.5", "x", "-0.25"])
    for arr in (a, h):
        cat = np.concatenate([arr, txt])
        assert cat.dtype == np.dtype("<U32") and cat[4] == "x"
    for o in (txt, "1.5", b"1.5", txt.astype("S")):
        assert (a == o).tolist() == (h == o).tolist() == [False] * 3
        assert (a != o).tolist() == (h != o).tolist() == [True] * 3
        for op in (np.less, np.add):
            with pytest.raises(TypeError):
                op(h, o)
            with pytest.raises(TypeError):
                op(a, o)
    # astype(str) / "U" / "S": the text of str(scalar), which reads back as the value
    codes = codes_all(fmt) if fmt.bits == 8 else codes_all(fmt)[::13]   # 5042 of 65536
    x = A(codes, fmt)
    for k in (str, "U", "S"):
        s = x.astype(k)
        assert s.dtype == np.dtype("<U32" if k != "S" else "S32")
        texts = [t.decode() if isinstance(t, bytes) else t for t in s.tolist()]
        assert texts == [str(x[i]) for i in range(codes.size)]
    m = model(fmt)
    exact = [value(m, c) for c in codes]
    assert all(math.isnan(v) == (t == "nan") for t, v in zip(texts, exact))
    if fmt.bits == 8:   # the exact value
        assert all(math.isnan(v) or float(t) == v for t, v in zip(texts, exact))
    else:               # a text that reads back as the same value (uhp flushes subnormals)
        back = C(np.array([t for t in texts if t != "nan"]).astype(fmt.dtype))
        assert [value(m, c) for c in back] == [v for v, t in zip(exact, texts) if t != "nan"]
    # a given shorter length truncates as NumPy does
    assert np.array([448.0], softfp8.e4m3.dtype).astype("U3")[0] == "448"


def test_float16_astype_str_equals_numpy_all_codes():
    h = np.arange(65536, dtype=np.uint16)
    mine = h.view(softfp8.float16.dtype)
    theirs = h.view(np.float16)
    assert mine.astype(str).tolist() == theirs.astype(str).tolist()
    assert mine.astype("S").tolist() == theirs.astype("S").tolist()
    assert len(h) == 65536


# --------------------------------------------------------------------------
# 5. overflow and bad values in casts from strings and objects
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.e5m2, softfp8.float16, softfp8.bfloat16,
                                 softfp8.e4m3fnuz], ids=["e4m3", "e5m2", "float16", "bf16", "fnuz"])
def test_overflowing_string_and_object_casts_warn_like_float16(fmt):
    big = "23490349034" if fmt.name != "bfloat16" else "1e39"
    sources = [np.array([big]), np.array([big.encode()]), np.array([big], dtype=object),
               np.array([float(big)], dtype=object), np.array([int(float(big))], dtype=object)]
    for src in sources:
        for target in (np.float16, fmt.dtype):
            if target is np.float16 and fmt.name == "bfloat16":
                continue
            with np.errstate(over="raise"):
                with pytest.raises(FloatingPointError, match="overflow"):
                    src.astype(target)
            with pytest.warns(RuntimeWarning, match="overflow"):
                src.astype(target)
        softfp8.clear_flags()
        with np.errstate(all="ignore"):
            r = src.astype(fmt.dtype)
        assert softfp8.get_flags() & softfp8.Flags.OVERFLOW
        m = model(fmt)
        assert int(C(r)[0]) == ref.round_pack(m, 0, Fraction(int(float(big))) if "e" not in big
                                              else Fraction(10) ** 39)[0]
    # in range: no warning, the exact decimal rounded once
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            r = np.array(["1.0625", "-3"], dtype=object).astype(fmt.dtype)
    m = model(fmt)
    assert C(r).tolist() == [ref.round_pack(m, 0, Fraction(17, 16))[0], ref.round_pack(m, 1, 3)[0]]
    for bad in (np.array(["12abc"]), np.array([b"12abc"]), np.array(["12abc"], dtype=object)):
        with pytest.raises(ValueError, match="12abc"):
            bad.astype(fmt.dtype)


def test_object_array_cast_mixed_elements():
    e4, e5 = softfp8.e4m3, softfp8.e5m2
    src = np.array([1.5, e5.dtype.type(3.0), "2.5", np.float32(7), 9, Fraction(1, 3), np.int8(-4)], dtype=object)
    r = src.astype(e4.dtype)
    m = model(e4)
    want = [ref.round_pack(m, 0, Fraction(x))[0] for x in (1.5, 3, Fraction(5, 2), 7, 9, Fraction(1, 3))]
    want.append(ref.round_pack(m, 1, 4)[0])
    assert C(r).tolist() == want
    with pytest.raises(TypeError, match="None"):
        np.array([None], dtype=object).astype(e4.dtype)


# --------------------------------------------------------------------------
# 6. astype between softfp8 and ml_dtypes dtypes
# --------------------------------------------------------------------------

ml_dtypes = pytest.importorskip("ml_dtypes")

# ml_dtypes' float types, restated from ml_dtypes' documentation (exp bits, mantissa
# bits, bias, specials); the model gives the expected codes
ML = {
    "float8_e4m3fn": (4, 3, 7, "fn"), "float8_e5m2": (5, 2, 15, "ieee"),
    "float8_e4m3fnuz": (4, 3, 8, "fnuz"), "float8_e5m2fnuz": (5, 2, 16, "fnuz"),
    "float8_e4m3b11fnuz": (4, 3, 11, "fnuz"), "float8_e4m3": (4, 3, 7, "ieee"),
    "float8_e3m4": (3, 4, 3, "ieee"), "float4_e2m1fn": (2, 1, 1, "none"),
    "float6_e2m3fn": (2, 3, 1, "none"), "float6_e3m2fn": (3, 2, 3, "none"),
    "bfloat16": (8, 7, 127, "ieee"),
}
ML = {k: v for k, v in ML.items() if hasattr(ml_dtypes, k)}
ML8 = [k for k in ML if k != "bfloat16"]


def ml_model(name):
    e, m, b, sp = ML[name]
    return ref.make_format(e, m, b, sp, "ieee", True, sp == "none")


def ml_codes(name):
    e, m, _, _ = ML[name]
    n = 1 << (1 + e + m)
    return np.arange(n, dtype=np.uint8 if n <= 256 else np.uint16)


def check_codes(got, want, dst_model):
    """Codes equal; NaN results compared by class (the model's NaN codes of fn formats
    carry a sign; SPEC section 5)."""
    got = [int(x) for x in got]
    bad = [(g, w) for g, w in zip(got, want)
           if g != w and not (ref.decode(dst_model, g).kind == "nan" == ref.decode(dst_model, w).kind)]
    assert bad == [], bad[:5]
    return len(got)


def test_ml_dtypes_model_matches_ml_dtypes_values():
    """The restated ml_dtypes parameters decode every code to ml_dtypes' own value."""
    n = 0
    for name in ML:
        codes = ml_codes(name)
        with np.errstate(all="ignore"):
            theirs = codes.view(getattr(ml_dtypes, name)).astype(np.float64)
        mine = np.array([value(ml_model(name), c) for c in codes])
        assert np.array_equal(np.signbit(mine[~np.isnan(mine)]), np.signbit(theirs[~np.isnan(theirs)]))
        assert np.array_equal(mine, theirs, equal_nan=True), name
        n += codes.size
    assert n == 7 * 256 + 16 + 2 * 64 + 65536


def test_ml_dtypes_8bit_pairs_exhaustive():
    """Every code of every 8-bit softfp8 preset into every 8-bit-or-narrower ml_dtypes
    type and back, correctly rounded once (nearest-even, formats' default saturation)."""
    total = 0
    for fmt in EIGHT:
        src = codes_all(fmt)
        fm = model(fmt)
        for name in ML8:
            t = getattr(ml_dtypes, name)
            mm = ml_model(name)
            with np.errstate(all="ignore"):
                out = A(src, fmt).astype(t)
            want = [ref.convert(fm, mm, int(c), saturate=False if mm.specials != "none" else None)[0]
                    for c in src]
            total += check_codes(out.view(np.uint8), want, mm)
            mc = ml_codes(name)
            with np.errstate(all="ignore"):
                back = mc.view(t).astype(fmt.dtype)
            want = [ref.convert(mm, fm, int(c))[0] for c in mc]
            total += check_codes(C(back), want, fm)
    assert len(EIGHT) == 10 and len(ML8) == 10
    assert total == 10 * (10 * 256 + 7 * 256 + 16 + 2 * 64)


@pytest.mark.parametrize("mode", MODES)
def test_ml_dtypes_casts_follow_modes_saturation_and_flags(mode):
    e5, e4 = softfp8.e5m2, softfp8.e4m3
    src = codes_all(e5)
    mm = ml_model("float8_e4m3fn")
    for sat in (False, True):
        with softfp8.rounding(mode), softfp8.saturation(sat), softfp8.collect_flags() as fl:
            with np.errstate(all="ignore"):
                out = A(src, e5).astype(ml_dtypes.float8_e4m3fn)
        want = [ref.convert(model(e5), mm, int(c), mode=mode, saturate=sat) for c in src]
        check_codes(out.view(np.uint8), [w[0] for w in want], mm)
        raised = 0
        for w in want:
            raised |= w[1]
        assert int(fl.flags) & 0x1F == raised & 0x1F
        mc = ml_codes("float8_e5m2")
        with softfp8.rounding(mode), softfp8.saturation(sat):
            with np.errstate(all="ignore"):
                back = mc.view(ml_dtypes.float8_e5m2).astype(e4.dtype)
        check_codes(C(back), [ref.convert(ml_model("float8_e5m2"), model(e4), int(c), mode=mode,
                                          saturate=sat)[0] for c in mc], model(e4))
    # overflow into an ml_dtypes type warns under errstate as float16's casts do
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            np.array([57344.0], e5.dtype).astype(ml_dtypes.float8_e4m3fn)


def test_ml_dtypes_bfloat16_all_codes():
    bf = getattr(ml_dtypes, "bfloat16")
    codes = ml_codes("bfloat16")
    mm = ml_model("bfloat16")
    n = 0
    # ml bfloat16 -> softfp8 bfloat16 and back: the identity (NaNs by class)
    with np.errstate(invalid="ignore"):   # signalling NaNs raise invalid (IEEE)
        x = codes.view(bf).astype(softfp8.bfloat16.dtype)
        y = A(codes, softfp8.bfloat16).astype(bf)
    n += check_codes(C(x), codes.tolist(), mm)
    n += check_codes(y.view(np.uint16), codes.tolist(), mm)
    # every ml bfloat16 code rounded into E4M3, and every float16 code into ml bfloat16
    with np.errstate(all="ignore"):
        z = codes.view(bf).astype(softfp8.e4m3.dtype)
    e4 = model(softfp8.e4m3)
    n += check_codes(C(z), [ref.convert(mm, e4, int(c))[0] for c in codes], e4)
    with np.errstate(all="ignore"):
        w = A(codes, softfp8.float16).astype(bf)
    f16 = model(softfp8.float16)
    n += check_codes(w.view(np.uint16), [ref.convert(f16, mm, int(c))[0] for c in codes], mm)
    assert n == 4 * 65536
    assert np.can_cast(softfp8.e4m3.dtype, bf) and not np.can_cast(bf, softfp8.e4m3.dtype)
    # float8_e8m0fnu has a preset (no zero): casts work, 1.0 is code 127
    assert np.array([1.0], softfp8.e4m3.dtype).astype(ml_dtypes.float8_e8m0fnu).view(np.uint8)[0] == 127


# --------------------------------------------------------------------------
# 7. printing
# --------------------------------------------------------------------------

def test_float16_scalars_print_like_numpy_all_codes():
    h = np.arange(65536, dtype=np.uint16)
    mine, theirs = h.view(softfp8.float16.dtype), h.view(np.float16)
    n = 0
    for i in range(0, 65536, 3):
        s, t = mine[i], theirs[i]
        assert str(s) == str(t), hex(i)
        assert repr(s) == f"float16({str(t)})"
        n += 1
    assert n == 21846
    assert str(softfp8.float16.dtype.type(65504)) == str(np.float16(65504)) == "6.55e+04"
    for arr in (np.array([65504, 1.5, np.nan, -np.inf]), np.array([[1e-7, 3], [2, 1000]]),
                np.array([0.1, 0.2, 0.3])):
        assert str(arr.astype(softfp8.float16.dtype)) == str(arr.astype(np.float16))
        assert repr(arr.astype(softfp8.float16.dtype)) == \
            repr(arr.astype(np.float16)).replace("dtype=float16", "dtype=softfp8.float16")


@pytest.mark.parametrize("fmt", EIGHT + [CF, softfp8.cfloat8_152(bias=40)],
                         ids=EIDS + ["cf143", "cf152b40"])
def test_eight_bit_formats_print_exact_values(fmt):
    codes = codes_all(fmt)
    m = model(fmt)
    x = A(codes, fmt)
    for i, c in enumerate(codes):
        v = value(m, c)
        want = repr(v)       # Python's float text of the (float64) value
        if math.isfinite(v) and v != 0:
            assert float(want) == v
            if fmt in EIGHT and m.subnormals != "nozero":  # short exact decimals (not 2^-127)
                assert Fraction(want) == ref.decode(m, int(c)).value
        s = x[i]
        assert str(s) == want
        assert repr(s).endswith(f"({want})") or repr(s).endswith(f"({want}, bias={fmt.bias})")
    vals = np.array([value(m, c) for c in codes])
    assert str(x) == str(vals)


def test_eight_bit_examples():
    e4 = softfp8.e4m3.dtype
    assert [str(e4.type(v)) for v in (288, 416, 448, 0.001953125)] == \
        ["288.0", "416.0", "448.0", "0.001953125"]
    assert repr(e4.type(448)) == "e4m3(448.0)"
    assert str(np.array([288, 416, 448], e4)) == "[288. 416. 448.]"


# --------------------------------------------------------------------------
# 8. spacing of the largest finite value
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", EIGHT + [softfp8.float16, softfp8.bfloat16, CF],
                         ids=EIDS + ["float16", "bfloat16", "cf143"])
def test_spacing_of_max_overflows(fmt):
    m = model(fmt)
    dec = [ref.decode(m, c) for c in range(1 << fmt.bits)]
    top = max(d.value for d in dec if d.kind == "finite")
    mx = next(c for c, d in enumerate(dec) if d.kind == "finite" and d.value == top)
    neg = [c for c, d in enumerate(dec) if d.kind == "finite" and d.value == -top]
    beyond = Fraction(2) ** (2 ** fmt.exp_bits - fmt.bias + 1)   # above max in every format
    for mode in MODES:
        for sat in (False, True):
            for code, sign in [(mx, 0)] + [(c, 1) for c in neg]:
                with softfp8.rounding(mode), softfp8.saturation(sat), softfp8.collect_flags() as fl:
                    with np.errstate(all="ignore"):
                        r = np.spacing(A([code], fmt))
                want, wfl = ref.round_pack(m, sign, beyond, mode=mode, saturate=sat or m.saturate)
                check_codes(C(r), [want], m)
                assert int(fl.flags) & 0x1F == wfl & 0x1F == ref.OVERFLOW | ref.INEXACT
    if fmt == softfp8.float16:
        with np.errstate(over="raise"):
            with pytest.raises(FloatingPointError):
                np.spacing(np.float16(65504))
            with pytest.raises(FloatingPointError):
                np.spacing(A([mx], fmt))
        with np.errstate(all="ignore"):
            assert np.isinf(np.spacing(np.array([65504], np.float16))[0])
            assert np.isinf(float(np.spacing(A([mx], fmt))[0]))
    # E4M3 (fn, no infinity) without saturation: NaN with overflow; saturating: max
    if fmt == softfp8.e4m3:
        with np.errstate(all="ignore"):
            assert math.isnan(float(np.spacing(A([mx], fmt))[0]))
            with softfp8.saturation(True):
                assert float(np.spacing(A([mx], fmt))[0]) == 448.0
    # negative values keep their sign (documented; np.float16 gives positive spacing)
    if fmt.signed:   # (unsigned E8M0 has no negative value)
        one = A([ref.round_pack(m, 1, 1)[0]], fmt)
        assert float(np.spacing(one)[0]) == -float(np.spacing(-one)[0]) < 0


# --------------------------------------------------------------------------
# 9. hashing
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", EIGHT + [softfp8.float16, softfp8.bfloat16, CF],
                         ids=EIDS + ["float16", "bfloat16", "cf143"])
def test_hash_equals_hash_of_the_float(fmt):
    codes = codes_all(fmt)
    m = model(fmt)
    x = A(codes, fmt)
    step = 1 if fmt.bits == 8 else 17
    n = 0
    for i in range(0, codes.size, step):
        s = x[i]
        v = value(m, codes[i])
        if math.isnan(v):
            assert hash(s) == hash(s) and s in {s} and s in {s: 1}
            h = np.float16(np.nan)
            assert hash(h) == hash(h)
        else:
            assert hash(s) == hash(v), (hex(int(codes[i])), v)
            assert {s: 1}[v] == 1
        n += 1
    assert n == (codes.size + step - 1) // step


def test_scalar_power_is_the_correctly_rounded_power():
    """Scalar ** (and reflected **) go through np.power: one rounding, flags, errstate."""
    two = np.array([0x40], dtype=np.uint8).view(softfp8.e4m3.dtype)[0]   # E4M3 2.0
    assert (two ** 2).code == 0x48 and (2 ** two).code == 0x48           # 4.0, exact
    assert (two ** two).code == 0x48
    # 2 ** 0.5 = 1.41421...: E4M3 neighbours 1.375 (0x3B) and 1.5 (0x3C); nearest is 1.375
    assert (two ** 0.5).code == 0x3B
    with softfp8.rounding("upward"):
        assert (two ** 0.5).code == 0x3C
    with softfp8.collect_flags() as fl, np.errstate(over="ignore"):
        r = two ** 100                                                   # 2^100: overflow
    assert softfp8.Flags.OVERFLOW in fl.flags and np.isnan(float(r))
    with pytest.raises(TypeError):
        pow(two, 2, 3)
    h = np.array([3.0], dtype=softfp8.float16.dtype)[0]
    assert float(h ** 2) == 9.0 and type(h ** 2) is type(h)
    assert str(np.finfo(softfp8.e4m3.dtype)).startswith("Machine parameters for e4m3")
