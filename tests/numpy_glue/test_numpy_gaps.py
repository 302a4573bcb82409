"""The last gaps against NumPy's float16 and ml_dtypes (issue 24, item 3), one test each:
np.spacing of NaN / infinity, safe casts of formats with NaN and infinities, errstate
when filling arrays from Python objects, promotion with complex numbers and with
ml_dtypes' types, format(x, ''), softfp8.savez / load, Python and NumPy scalars with
parametric formats, tolist, batched einsum.  Expected values come from NumPy's own
float16 side by side, exact Fractions, or the reference model (tests/models/rational.py).
"""
import io
import json
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import bits

from ..models import rational as ref


def _codes(a):
    a = np.asarray(a)
    return a.view(a.dtype.format.storage)


# --------------------------------------------------------------------------
# np.spacing(inf / NaN): invalid, as NumPy's float16
# --------------------------------------------------------------------------

SPECIALS = [softfp8.float16, softfp8.e5m2, softfp8.e4m3, softfp8.bfloat16, softfp8.e4m3fnuz,
            softfp8.p3109.format(8, 3, domain="extended")]


@pytest.mark.parametrize("fmt", SPECIALS, ids=lambda f: f.name)
def test_spacing_of_nan_and_inf_is_invalid(fmt):
    vals = [math.nan, math.inf, -math.inf] if fmt.specials in ("ieee", "p3109") else [math.nan]
    codes = np.array([fmt.encode(v) for v in vals], dtype=fmt.storage)
    r, fl = bits.spacing(fmt, codes)
    assert np.isnan(bits.to_float(r, fmt)[0]).all()
    assert ((fl & int(softfp8.Flags.INVALID)) != 0).all(), fl
    for v, c in zip(vals, codes):
        with np.errstate(invalid="raise"):
            with pytest.raises(FloatingPointError, match="invalid value encountered in spacing"):
                np.spacing(np.array([c], fmt.storage).view(fmt.dtype))
            if fmt is softfp8.float16:   # side by side with NumPy's own float16
                with pytest.raises(FloatingPointError, match="invalid value encountered in spacing"):
                    np.spacing(np.float16(v))
    # finite operands still raise nothing invalid
    one = np.array([fmt.encode(1.0)], fmt.storage)
    assert not int(bits.spacing(fmt, one)[1][0]) & int(softfp8.Flags.INVALID)


# --------------------------------------------------------------------------
# safe casts: a NaN stays a NaN, every other value exactly
# --------------------------------------------------------------------------

_IEEE = {np.float16: (10, -24, 65504.0), np.float32: (23, -149, float(np.finfo(np.float32).max)),
         np.float64: (52, -1074, float(np.finfo(np.float64).max))}


def _exact_in(v, t):
    """v (a Fraction, a binary64 value) is a value of NumPy float type t."""
    with np.errstate(all="ignore"):
        x = t(float(v))
    return math.isfinite(x) and Fraction(float(x)) == v


def _fits(r, t):
    """Every finite value of reference format r is a value of IEEE type t: as many
    mantissa bits at most, its max within t's, its smallest subnormal on t's grid."""
    man, qmin, tmax = _IEEE[t]
    q = r.qmin - 1 if r.subnormals == "tesla" else r.qmin   # r's smallest quantum
    return r.man_bits <= man and r.max_value <= tmax and q >= qmin


@pytest.mark.parametrize("name", sorted(softfp8.presets()))
def test_safe_casts_every_preset(name):
    """np.can_cast(format, t) is True exactly when every value converts exactly: a NaN
    stays a NaN (quieting a signalling NaN loses nothing), infinities stay infinities."""
    fmt = softfp8.presets()[name]
    r = ref.preset(name)
    real_of = {np.float16: np.float16, np.float32: np.float32, np.float64: np.float64,
               np.longdouble: np.float64, np.complex64: np.float32, np.complex128: np.float64}
    for t, real in real_of.items():
        if fmt.bits <= 8:   # every code, decoded by the reference
            want = all(d.kind in ("nan", "inf") or _exact_in(d.value, real)
                       for d in (ref.decode(r, c) for c in range(1 << fmt.bits)))
        else:
            want = _fits(r, real)
        assert np.can_cast(fmt.dtype, t) == want, (name, t)
    # the formats with NaN or infinities that ml_dtypes' testCanCast names
    if name in ("e5m2", "bfloat16", "float8_e4m3", "float8_e3m4", "float16"):
        assert np.can_cast(fmt.dtype, np.float32) and np.can_cast(fmt.dtype, np.float64)


# --------------------------------------------------------------------------
# errstate when filling an array from Python objects, as float16
# --------------------------------------------------------------------------

FILLERS = {
    "np.array": lambda d, x: np.array([x], dtype=d),
    "setitem": lambda d, x: np.zeros(2, d).__setitem__(0, x),
    "np.full": lambda d, x: np.full(2, x, dtype=d),
    "scalar": lambda d, x: np.dtype(d).type(x),
    "numpy scalar": lambda d, x: np.array([np.float64(x)], dtype=d),
}


@pytest.mark.parametrize("how", sorted(FILLERS))
def test_errstate_on_array_creation_like_float16(how):
    fill = FILLERS[how]
    for d in (np.float16, softfp8.e4m3.dtype, softfp8.cfloat8_143(bias=40).dtype):
        big = 1e6
        with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow encountered in cast"):
            fill(d, big)
        with pytest.warns(RuntimeWarning, match="overflow encountered in cast"):
            fill(d, big)
        with np.errstate(over="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error")
            fill(d, big)
        # underflow: reported exactly where float16 reports it (by NumPy's casts, as of
        # np.float64 scalars; not by float16's setitem).  A parametric format takes a
        # Python number through float64 in np.full / np.copyto (docs/numpy.md), whose
        # cast reports it.
        if d != softfp8.cfloat8_143(bias=40).dtype:
            with np.errstate(under="raise"):
                assert _raises(lambda: fill(d, 1e-30)) == _raises(lambda: fill(np.float16, 1e-30)), how


def test_filling_raises_the_sticky_overflow_flag():
    with softfp8.collect_flags() as fl, np.errstate(over="ignore"):
        np.array([1e6], dtype=softfp8.e4m3.dtype)
    assert fl.overflow and fl.inexact


def _raises(fn):
    try:
        fn()
    except FloatingPointError:
        return True
    return False


# --------------------------------------------------------------------------
# promotion with complex numbers and with ml_dtypes' types
# --------------------------------------------------------------------------

def test_complex_operands_promote():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(20).astype(np.float32).astype(softfp8.e5m2.dtype)
    xv = x.astype(np.float64)
    for c in (np.complex64, np.complex128):
        z = (rng.standard_normal(20) + 1j * rng.standard_normal(20)).astype(c)
        assert np.array_equal(z == x, z == xv) and np.array_equal(x != z, xv != z)
        s = z + x
        assert s.dtype == np.result_type(c, np.float16) and np.array_equal(s, (z + xv).astype(s.dtype))
        assert np.array_equal(np.multiply(x, z), (xv * z).astype(s.dtype))
    assert (1j + x).dtype == np.complex64 and np.array_equal(1j + x, 1j + xv.astype(np.complex64))


def _rank(values):
    """Smallest NumPy float (1: float16, 2: float32, 3: float64) holding every value."""
    for rank, t in ((1, np.float16), (2, np.float32), (3, np.float64)):
        with np.errstate(all="ignore"):
            if all(Fraction(float(t(float(v)))) == v for v in values):
                return rank
    return 0


def test_ml_dtypes_promotion():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    floats = {1: np.float16, 2: np.float32, 3: np.float64}
    rng = np.random.default_rng(2)
    for name in ("e4m3", "e5m2", "bfloat16", "cfloat8_143"):
        fmt = softfp8.cfloat8_143(bias=10) if name == "cfloat8_143" else softfp8.presets()[name]
        r = ref.family("cfloat8_143", 10) if name == "cfloat8_143" else ref.preset(name)
        # the Tesla family's rank covers every bias: float32
        mine = 2 if name == "cfloat8_143" else _rank(
            [d.value for d in (ref.decode(r, c) for c in range(1 << fmt.bits)) if d.kind in ("finite", "zero")])
        a = rng.standard_normal(16).astype(np.float32).astype(fmt.dtype)
        for ml in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
            t = getattr(ml_dtypes, ml)
            m = rng.standard_normal(16).astype(np.float32).astype(t)
            mv = m.astype(np.float64)
            # ml_dtypes' casts into float16 are unsafe: at least float32
            want = floats[max(mine, _rank([Fraction(float(v)) for v in mv if math.isfinite(v)]), 2)]
            for got in (a + m, m + a):
                assert got.dtype == want, (name, ml, got.dtype)
                assert np.array_equal(got, (a.astype(np.float64) + mv).astype(want))
            assert np.result_type(a, m) == want and np.promote_types(a.dtype, m.dtype) == want
            assert np.array_equal(a < m, a.astype(np.float64) < mv)
    custom = np.ones(3, softfp8.format(exp_bits=4, man_bits=3, bias=7).dtype)
    assert (custom + np.ones(3, ml_dtypes.float8_e4m3fn)).dtype == np.float64


# --------------------------------------------------------------------------
# format(x, '') as NumPy's scalars: the Python float's text
# --------------------------------------------------------------------------

def test_format_like_numpy_scalars():
    codes = np.arange(1 << 16, dtype=np.uint16)
    f16 = codes.view(np.float16)
    s16 = codes.view(softfp8.float16.dtype)
    for i in range(0, 1 << 16, 97):
        assert format(s16[i], "") == format(f16[i], "") == format(float(f16[i]), "")
        assert f"{s16[i]:.4e}" == f"{f16[i]:.4e}"
    b = np.array([0.0078125, 1.0078125, 3.3895313892515355e38], np.float32).astype(softfp8.bfloat16.dtype)
    assert [f"{x}" for x in b] == ["0.0078125", "1.0078125", "3.3895313892515355e+38"]
    assert [str(x) for x in b] == ["0.0078", "1.01", "3.39e+38"]    # str: NumPy's float16 rule


# --------------------------------------------------------------------------
# softfp8.savez / softfp8.load
# --------------------------------------------------------------------------

def test_savez_load_several_arrays():
    rng = np.random.default_rng(4)
    arrays = {
        "e4m3": rng.integers(0, 256, (3, 5)).astype(np.uint8).view(softfp8.e4m3.dtype),
        "tesla": rng.integers(0, 256, 7).astype(np.uint8).view(softfp8.cfloat8_143(bias=41).dtype),
        "custom": rng.integers(0, 1 << 16, 4).astype(np.uint16).view(
            softfp8.format(exp_bits=6, man_bits=9, bias=40, signed=False).dtype),
        "f32": rng.standard_normal(3).astype(np.float32),
        "zero_d": np.array(3, np.uint8).view(softfp8.e5m2.dtype).reshape(()),
    }
    buf = io.BytesIO()
    softfp8.savez(buf, arrays["e4m3"], **{k: v for k, v in arrays.items() if k != "e4m3"})
    buf.seek(0)
    back = softfp8.load(buf)
    assert list(back) == ["arr_0", "tesla", "custom", "f32", "zero_d"]
    for key, got in zip(back, [arrays[k] for k in ("e4m3", "tesla", "custom", "f32", "zero_d")]):
        assert back[key].dtype == got.dtype and back[key].shape == got.shape
        assert back[key].tobytes() == got.tobytes(), key   # bit-exact, bits above the width too
    # plain NumPy reads it without pickle: the codes and the JSON description
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as z:
        assert z["tesla"].dtype == np.uint8 and np.array_equal(z["tesla"], arrays["tesla"].view(np.uint8))
        meta = json.loads(str(z["__softfp8__"]))
        assert meta["arrays"]["tesla"]["name"] == "cfloat8_143(bias=41)" and "f32" not in meta["arrays"]
    with pytest.raises(ValueError, match="reserved"):
        softfp8.savez(io.BytesIO(), __softfp8__=arrays["f32"])
    with pytest.raises(TypeError, match="pickle"):
        softfp8.savez(io.BytesIO(), o=np.array([None]))
    # np.savez pickles DType-API arrays (numpy/lib/_format_impl.py write_array): a plain
    # np.load refuses them; docs/numpy.md says so
    buf = io.BytesIO()
    with pytest.warns(UserWarning, match="pickle"):
        np.savez(buf, x=arrays["e4m3"])
    buf.seek(0)
    with pytest.raises(ValueError, match="allow_pickle"):
        np.load(buf)["x"]


def test_savez_load_corrupted_format_entry():
    buf = io.BytesIO()
    softfp8.savez(buf, a=np.zeros(2, softfp8.e4m3.dtype))
    buf.seek(0)
    with np.load(buf) as z:
        entries = {k: z[k] for k in z.files}
    for bad in ('{"softfp8": 1, "arrays": {"b": {}}}', '{"softfp8": 1, "arrays": {"a": 5}}', "[1]", "{"):
        out = io.BytesIO()
        np.savez(out, a=entries["a"], __softfp8__=np.array(bad))
        out.seek(0)
        with pytest.raises(ValueError):
            softfp8.load(out)


# --------------------------------------------------------------------------
# NumPy limits documented in docs/numpy.md, and what to use instead
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", [softfp8.cfloat8_143(bias=10), softfp8.format(exp_bits=4, man_bits=3, bias=7)],
                         ids=["cf143_10", "custom"])
def test_python_and_numpy_scalars_with_parametric_formats(fmt):
    x = np.array([1.5, -2.0, 0.25], np.float32).astype(fmt.dtype)
    m = np.array([True, False, True])
    # ufuncs: a Python number is rounded into the array's own format (pyscalar loops)
    assert (x * 2.0).dtype == fmt.dtype and (0.5 + x).dtype == fmt.dtype
    # np.where with a Python number cannot stay in a parametric format (docs/numpy.md:
    # NumPy's can_cast_pyscalar_scalar_to asks the DType for a descriptor without a
    # value); the format's own scalar does
    w = np.where(m, x, x.dtype.type(0.5))
    assert w.dtype == fmt.dtype and w.astype(np.float64).tolist() == [1.5, 0.5, 0.25]
    assert np.where(m, x, 0.5).dtype == np.float64
    # NumPy scalars promote by the DType class: a Tesla family holds float32, a custom
    # format (one DType class for every layout) promotes to float64
    want = np.float32 if fmt.name.startswith("cfloat8") else np.float64
    assert (x * np.float32(2)).dtype == want
    assert np.array_equal(x * np.float32(2), x.astype(np.float64) * 2)


def test_tolist_gives_scalars_and_the_documented_float_path():
    x = np.array([1.5, 448.0, 2.0 ** -9], np.float32).astype(softfp8.e4m3.dtype)
    # NumPy reads both x[i] and x.tolist() through the DType's one getitem (docs/numpy.md)
    assert all(isinstance(v, softfp8.SoftScalar) for v in x.tolist())
    assert json.dumps(x.astype(np.float64).tolist()) == "[1.5, 448.0, 0.001953125]"


def test_batched_einsum_as_documented():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32).astype(softfp8.e4m3.dtype)
    b = rng.standard_normal((2, 4, 5)).astype(np.float32).astype(softfp8.e4m3.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for eq, want in (("bij,bjk->bik", a @ b), ("bij,bkj->bik", a @ np.swapaxes(b, 1, 2).swapaxes(1, 2)),
                         ("bij,jk->bik", a @ b[0])):
            ops = (a, np.swapaxes(b, 1, 2)) if eq == "bij,bkj->bik" else (a, b[0]) if eq == "bij,jk->bik" else (a, b)
            got = np.einsum(eq, *ops, optimize=True)
            assert got.dtype == a.dtype and np.array_equal(_codes(got), _codes(want)), eq
        # an index summed over one operand only needs einsum's own sum kernel
        with pytest.raises(TypeError, match="invalid data type for einsum"):
            np.einsum("bij,bjk->bk", a, b, optimize=True)
