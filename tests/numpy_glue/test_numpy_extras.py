"""matmul, save/load, interop: checked against exact rational arithmetic."""
import io
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import bits

FORMATS = [softfp8.e4m3, softfp8.e5m2, softfp8.cfloat8_143(bias=7), softfp8.hfp8_143]


def _finite_codes(fmt, rng, shape):
    codes = np.arange(1 << fmt.bits, dtype=np.uint32)
    vals, _ = bits.to_float(codes, fmt)
    # keep the exact dot products exact float64 values (span of products <= 53 bits)
    mag = np.abs(vals)
    ok = codes[np.isfinite(vals) & ((mag == 0) | ((mag >= 2.0**-8) & (mag <= 2.0**9)))]
    return rng.choice(ok, size=shape).astype(fmt.storage)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_matmul_exact_dot_rounded_once(fmt):
    rng = np.random.default_rng(7)
    n_cases = 0
    for (m, k, p) in [(1, 1, 1), (3, 5, 4), (8, 33, 2), (2, 64, 3)]:
        a = _finite_codes(fmt, rng, (m, k)).view(fmt.dtype)
        b = _finite_codes(fmt, rng, (k, p)).view(fmt.dtype)
        av = bits.to_float(a.view(fmt.storage), fmt)[0]
        bv = bits.to_float(b.view(fmt.storage), fmt)[0]
        exact = [[sum(Fraction(av[i, l]) * Fraction(bv[l, j]) for l in range(k)) for j in range(p)]
                 for i in range(m)]
        ex64 = np.array([[float(x) for x in row] for row in exact])
        # the exact dot products of these formats are exact float64 values
        assert all(Fraction(ex64[i, j]) == exact[i][j] for i in range(m) for j in range(p))
        with softfp8.collect_flags(), np.errstate(all="ignore"):
            got = (a @ b).view(fmt.storage)
            got32 = softfp8.matmul(a, b, out_dtype=np.float32)
            got64 = softfp8.matmul(a, b, out_dtype=np.float64)
        want, _ = bits.from_float(ex64, fmt)
        assert np.array_equal(got, want)
        assert np.array_equal(got32, ex64.astype(np.float32))
        assert np.array_equal(got64, ex64)
        n_cases += m * p
    assert n_cases == 1 + 12 + 16 + 6


def test_matmul_shapes_and_vectors():
    e = softfp8.e4m3
    a = np.ones((2, 3, 4), dtype=e.dtype)
    b = np.ones((4, 5), dtype=e.dtype)
    assert (a @ b).shape == (2, 3, 5)
    v = np.ones(4, dtype=e.dtype)
    assert float((v @ v)) == 4.0
    assert softfp8.matmul(v, v, out_dtype=np.float32) == np.float32(4.0)
    with pytest.raises(TypeError, match="softfp8.matmul"):
        softfp8.matmul(np.ones((2, 2)), np.ones((2, 2)))


def test_matmul_specials_and_flags():
    e = softfp8.e5m2
    a = np.array([[np.inf, 1.0]], dtype=e.dtype)
    b = np.array([[0.0], [1.0]], dtype=e.dtype)
    with softfp8.collect_flags() as fl, np.errstate(all="ignore"):
        r = a @ b
    assert np.isnan(r[0, 0].item()) and fl.invalid
    big = np.full((1, 2), 57344.0, dtype=e.dtype)
    with softfp8.collect_flags() as fl, np.errstate(all="ignore"):
        r = big @ big.T
    assert np.isinf(float(r[0, 0])) and fl.overflow and fl.inexact


@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.cfloat8_152(bias=33), softfp8.uhp,
                                 softfp8.format(exp_bits=3, man_bits=1, bias=2, name="e3m1")],
                         ids=lambda f: f.name)
def test_save_load_roundtrip_bit_exact(fmt):
    codes = np.arange(1 << min(fmt.bits, 12), dtype=fmt.storage).reshape(-1, 4)
    a = codes.view(fmt.dtype)
    buf = io.BytesIO()
    softfp8.save(buf, a)
    buf.seek(0)
    b = softfp8.load(buf)
    assert b.dtype == a.dtype and b.shape == a.shape
    assert np.array_equal(b.view(fmt.storage), codes)
    assert b.size == codes.size


def test_np_save_plain_load_does_not_return_raw_bytes():
    a = np.array([1.5, 2.0], dtype=softfp8.e4m3.dtype)
    buf = io.BytesIO()
    with pytest.warns(UserWarning):
        np.save(buf, a)
    buf.seek(0)
    with pytest.raises(ValueError):
        np.load(buf)  # allow_pickle=False: refuses instead of returning bytes
    buf.seek(0)
    b = np.load(buf, allow_pickle=True)
    assert b.dtype == a.dtype and np.array_equal(b.view(np.uint8), a.view(np.uint8))


def test_save_rejects_non_softfp8():
    with pytest.raises(TypeError, match="softfp8.save"):
        softfp8.save(io.BytesIO(), np.ones(3))


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "bfloat16"])
def test_ml_dtypes_zero_copy(name):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    fmt = softfp8.presets()[name]
    codes = np.arange(1 << fmt.bits, dtype=np.uint32).astype(fmt.storage)
    a = codes.view(fmt.dtype)
    m = softfp8.to_ml_dtypes(a)
    assert np.shares_memory(a, m)
    back = softfp8.from_ml_dtypes(m)
    assert np.shares_memory(back, a) and back.dtype == a.dtype
    # values agree where ml_dtypes defines them (NaNs by class)
    ours = bits.to_float(codes, fmt)[0]
    theirs = m.astype(np.float64)
    both_nan = np.isnan(ours) & np.isnan(theirs)
    assert np.all(both_nan | (ours == theirs))


def test_torch_zero_copy():
    torch = pytest.importorskip("torch")
    a = np.array([1.5, -2.0, 448.0], dtype=softfp8.e4m3.dtype)
    t = softfp8.to_torch(a)
    assert t.dtype == torch.float8_e4m3fn
    assert t.float().tolist() == [1.5, -2.0, 448.0]
    b = softfp8.from_torch(t)
    assert np.array_equal(b.view(np.uint8), a.view(np.uint8))


@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.e5m2, softfp8.cfloat8_143(bias=7),
                                 softfp8.float16], ids=lambda f: f.name)
def test_strings_parse_like_float(fmt):
    texts = ["1.5", "-0.1", "300", "1e-3", "nan", "-inf", "0", "-0.0", " 2.5 "]
    want, _ = bits.from_float(np.array([float(t) for t in texts]), fmt)
    for arr in (np.array(texts), np.array([t.encode() for t in texts])):
        with np.errstate(all="ignore"):
            got = arr.astype(fmt.dtype).view(fmt.storage)
            got2 = np.array(list(arr), dtype=fmt.dtype).view(fmt.storage)
        nan = np.array([t == "nan" and fmt.specials != "none" for t in texts])
        assert np.array_equal(got[~nan], want[~nan]) and np.array_equal(got2[~nan], want[~nan])
        assert np.all(np.isnan(bits.to_float(got[nan], fmt)[0]))
    with pytest.raises(ValueError, match="'x'"):
        np.array(["x"], dtype=fmt.dtype)
    with pytest.raises(ValueError, match="abc"):
        np.array(["1", "abc"]).astype(fmt.dtype)
