"""softfp8 formats under dask.array (softfp8/dask.py): exact chunked sums, matmul,
stochastic casts keyed on the global index, storage.  Skipped without dask."""
import os
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import bits

da = pytest.importorskip("dask.array")
sd = pytest.importorskip("softfp8.dask")

from ..models import rational as ref  # noqa: E402

CHUNKS_2D = [(12, 10), (5, 3), (1, 10), (7, 7), (12, 1)]


def _view(a, fmt):
    return np.asarray(a).view(fmt.storage)


def _random(fmt, shape, seed, scale=4.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(np.float32).astype(fmt)


def _exact(x, fmt):
    """Exact sum of the finite values of x as a Fraction (independent of softfp8.dask)."""
    vals = bits.to_float(_view(x, fmt), fmt, np.float64)[0]
    return sum((Fraction(float(v)) for v in vals.reshape(-1)), Fraction(0))


def test_import_softfp8_does_not_import_dask():
    import subprocess
    import sys
    code = "import sys, softfp8; assert 'dask' not in sys.modules, 'dask imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_plain_dask_elementwise_and_minmax():
    x = np.linspace(-3, 3, 20).astype(np.float32)
    xs = x.astype(softfp8.e4m3)
    dx = da.from_array(x, chunks=7).astype(softfp8.e4m3)
    assert dx.dtype == xs.dtype
    for got, want in [(np.add(dx, dx), xs + xs), (np.sqrt(abs(dx)), np.sqrt(abs(xs))),
                      (dx * 3, xs * 3), (dx.map_blocks(np.negative), -xs)]:
        assert np.array_equal(_view(got.compute(), softfp8.e4m3), _view(want, softfp8.e4m3))
    assert np.array_equal((dx < 1).compute(), xs < 1)
    assert float(dx.max().compute()) == 3.0 and float(sd.min(dx).compute()) == -3.0


def test_dask_own_sum_still_refused_by_numpy():
    # documents why softfp8.dask.sum exists (docs/dask.md); if NumPy or Dask lift
    # the restriction this test tells us
    dx = da.from_array(np.ones(4, np.float32), chunks=2).astype(softfp8.e4m3)
    with pytest.raises(TypeError, match="new user DType instance"):
        dx.sum().compute()
    # Dask's own matmul: one inner chunk is one NumPy matmul per block (exact), several
    # inner chunks sum block products the same refused way
    a = _random(softfp8.e4m3, (6, 8), 30, 3.0)
    one = (da.from_array(a, chunks=(3, 8)) @ da.from_array(a.T.copy(), chunks=(8, 2))).compute()
    assert np.array_equal(_view(one, softfp8.e4m3), _view(a @ a.T, softfp8.e4m3))
    with pytest.raises(TypeError, match="new user DType instance"):
        (da.from_array(a, chunks=(3, 4)) @ da.from_array(a.T.copy(), chunks=(4, 2))).compute()


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "bfloat16", "float16"])
def test_sum_equals_one_call_for_every_chunking(name):
    fmt = getattr(softfp8, name)
    x = _random(fmt, (12, 10), 1)
    one = bits.sum(fmt, _view(x, fmt))[0]
    exact = _exact(x, fmt)
    want_code = ref.round_pack(ref.preset(name), 0, exact)[0]
    assert int(one) == want_code
    rows = bits.sum(fmt, _view(x, fmt), axis=1)[0]
    cols = bits.sum(fmt, _view(x, fmt), axis=0)[0]
    for ch in CHUNKS_2D:
        dx = da.from_array(x, chunks=ch)
        assert int(_view(sd.sum(dx).compute(), fmt)) == want_code, ch
        assert np.array_equal(_view(sd.sum(dx, axis=1).compute(), fmt), rows), ch
        assert np.array_equal(_view(sd.sum(dx, axis=0, keepdims=True).compute(), fmt),
                              cols[None, :]), ch
        assert sd.sum(dx, dtype=np.float64).compute() == float(exact), ch
        f32 = np.asarray(sd.sum(dx, dtype=np.float32).compute())
        assert f32.dtype == np.float32
        assert int(f32.view(np.uint32)) == ref.round_pack(ref.preset("float32"), 0, exact)[0], ch


def test_sum_float32_output_is_one_rounding():
    # values whose exact sum needs more than 24 bits: float32 accumulation per
    # chunk would round; the exact path rounds once
    fmt = softfp8.e4m3
    x = np.array([448.0] * 40000 + [2.0 ** -9] * 3, dtype=np.float32).astype(fmt)
    exact = Fraction(448 * 40000) + Fraction(3, 512)
    for ch in [(40003,), (1000,), (7,)]:
        dx = da.from_array(x, chunks=ch)
        got = sd.sum(dx, dtype=np.float32).compute()
        assert Fraction(float(got)) == Fraction(float(np.float32(float(exact))))
        assert sd.sum(dx, dtype=np.float64).compute() == float(exact)
        with softfp8.rounding("upward"):
            up = sd.sum(dx, dtype=np.float32).compute()
        assert Fraction(float(up)) > exact and float(up) == float(
            np.nextafter(np.float32(float(exact)), np.float32(np.inf)))


@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "upward", "downward"])
def test_sum_specials_and_zero_signs(mode):
    fmt = softfp8.e5m2
    cases = [[1.0, np.nan, 2.0], [np.inf, 1.0], [np.inf, -np.inf], [-0.0, -0.0],
             [0.0, -0.0], [3.0, -3.0], [-0.0, 3.0, -3.0], [-np.inf, 5.0, 57344.0],
             [57344.0, 57344.0], [-57344.0] * 3]
    for case in cases:
        x = np.array(case * 3, dtype=np.float32).astype(fmt)
        want = bits.sum(fmt, _view(x, fmt), rounding=mode)[0]
        for ch in [(len(x),), (1,), (2,)]:
            got = sd.sum(da.from_array(x, chunks=ch), rounding=mode).compute()
            assert int(_view(got, fmt)) == int(want), (case, ch, mode)


def test_sum_stochastic_matches_one_call():
    fmt = softfp8.e4m3
    x = _random(fmt, (40, 30), 3)
    want = bits.sum(fmt, _view(x, fmt), axis=0, rounding="stochastic", seed=9)[0]
    for ch in [(40, 30), (7, 4)]:
        got = sd.sum(da.from_array(x, chunks=ch), axis=0, rounding="stochastic", seed=9)
        assert np.array_equal(_view(got.compute(), fmt), want)


def test_mean_rounds_once():
    fmt = softfp8.e4m3
    x = _random(fmt, (9, 7), 5)
    exact = _exact(x, fmt)
    want = ref.round_pack(ref.preset("e4m3"), 0, exact / 63)[0]
    wrows = [ref.round_pack(ref.preset("e4m3"), 0, _exact(x[i], fmt) / 7)[0] for i in range(9)]
    for ch in [(9, 7), (2, 3)]:
        dx = da.from_array(x, chunks=ch)
        assert int(_view(sd.mean(dx).compute(), fmt)) == want
        assert list(_view(sd.mean(dx, axis=1).compute(), fmt)) == wrows
    with pytest.raises(ValueError, match="empty"):
        sd.mean(da.from_array(x[:0], chunks=1))


def test_bad_arguments():
    dx = da.from_array(np.ones(4, np.float32), chunks=2)
    with pytest.raises(TypeError, match="softfp8 format"):
        sd.sum(dx)
    with pytest.raises(TypeError, match="dask.array"):
        sd.sum(np.ones(3))
    ex = dx.astype(softfp8.e4m3)
    with pytest.raises(TypeError, match="dtype"):
        sd.sum(ex, dtype=np.int32)
    with pytest.raises(ValueError, match="axis 2"):
        sd.sum(ex, axis=2)
    with pytest.raises(ValueError, match="seed"):
        sd.astype(dx, softfp8.e4m3, rounding="stochastic")
    huge = softfp8.format(exp_bits=14, man_bits=1, bias=8191)
    with pytest.raises(ValueError, match="outside the binary64"):
        sd.sum(da.from_array(np.zeros(3, np.float32).astype(huge), chunks=2))
    with pytest.raises(TypeError, match="one format"):
        sd.matmul(ex.reshape(2, 2), ex.reshape(2, 2).astype(softfp8.e5m2))


@pytest.mark.parametrize("fmt_name", ["e4m3", "e5m2", "bfloat16"])
def test_astype_stochastic_independent_of_chunking_and_scheduler(fmt_name):
    fmt = getattr(softfp8, fmt_name)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((10, 10)).astype(np.float32)
    want = bits.from_float(x, fmt, rounding="stochastic", seed=42)[0]
    nearest = bits.from_float(x, fmt)[0]
    assert (want != nearest).sum() > 5          # the test can see a keying error
    with softfp8.rounding("stochastic", seed=42):
        assert np.array_equal(_view(x.astype(fmt), fmt), want)
    n = 0
    for ch in [(10, 10), 10, 7, (3, 5), (7, 3), (1, 1)]:
        for sched in ("threads", "synchronous"):
            dx = da.from_array(x, chunks=ch)
            got = sd.astype(dx, fmt, rounding="stochastic", seed=42).compute(scheduler=sched)
            assert got.dtype == fmt.dtype
            assert np.array_equal(_view(got, fmt), want), (ch, sched)
            n += 1
    assert n == 12
    # 1-D and a softfp8 source (e4m3 -> e5m2 narrows)
    y = rng.standard_normal(101).astype(np.float64)
    w1 = bits.from_float(y, fmt, rounding="stochastic", seed=3)[0]
    for ch in [(101,), (10,), (7,)]:
        got = sd.astype(da.from_array(y, chunks=ch), fmt, rounding="stochastic", seed=3)
        assert np.array_equal(_view(got.compute(), fmt), w1)
    src = x.astype(softfp8.e4m3)
    w2 = bits.convert(_view(src, softfp8.e4m3), softfp8.e4m3, softfp8.e5m2,
                      rounding="stochastic", seed=5)[0]
    got = sd.astype(da.from_array(src, chunks=(3, 5)), softfp8.e5m2, rounding="stochastic",
                    seed=5).compute()
    assert np.array_equal(_view(got, softfp8.e5m2), w2)


def test_astype_3d_runs():
    x = np.random.default_rng(2).standard_normal((4, 5, 6)).astype(np.float32)
    want = bits.from_float(x, softfp8.e4m3, rounding="stochastic", seed=1)[0]
    for ch in [(4, 5, 6), (2, 5, 6), (3, 2, 6), (1, 5, 4), (3, 3, 3)]:
        got = sd.astype(da.from_array(x, chunks=ch), softfp8.e4m3, rounding="stochastic",
                        seed=1).compute()
        assert np.array_equal(_view(got, softfp8.e4m3), want), ch


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "bfloat16"])
@pytest.mark.parametrize("out_dtype", [None, np.float32, np.float64])
def test_matmul_equals_one_call(name, out_dtype):
    fmt = getattr(softfp8, name)
    A = _random(fmt, (9, 13), 11, 3.0)
    B = _random(fmt, (13, 6), 12, 3.0)
    want = softfp8.matmul(A, B, out_dtype=out_dtype)
    # independent check of one element: exact dot rounded once
    fa = bits.to_float(_view(A, fmt), fmt)[0]
    fb = bits.to_float(_view(B, fmt), fmt)[0]
    dot = sum((Fraction(float(fa[0, k])) * Fraction(float(fb[k, 0])) for k in range(13)),
              Fraction(0))
    if out_dtype is None:
        assert int(_view(want, fmt)[0, 0]) == ref.round_pack(ref.preset(name), 0, dot)[0]
    for ca, cb in [((9, 13), (13, 6)), ((4, 5), (5, 4)), ((3, 13), (6, 2)), ((2, 4), (7, 3))]:
        got = sd.matmul(da.from_array(A, chunks=ca), da.from_array(B, chunks=cb),
                        out_dtype=out_dtype).compute()
        assert got.dtype == want.dtype
        assert np.array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))


def test_exact_split_k_bounds():
    assert sd.exact_split_k(softfp8.e4m3, 2 ** 17)       # 2*18 + 17 = 53
    assert not sd.exact_split_k(softfp8.e4m3, 2 ** 17 + 1)
    assert not sd.exact_split_k(softfp8.e5m2, 2)         # 2*32 > 53


@pytest.mark.parametrize("suffix", ["", ".zarr"])
def test_save_load_round_trip(tmp_path, suffix):
    if suffix:
        pytest.importorskip("zarr")
    for name in ["e4m3", "bfloat16"]:
        fmt = getattr(softfp8, name)
        x = _random(fmt, (9, 13), 4)
        p = os.path.join(tmp_path, name + suffix)
        sd.save(p, da.from_array(x, chunks=(4, 5)))
        y = sd.load(p)
        assert y.dtype == x.dtype
        assert np.array_equal(_view(y.compute(), fmt), _view(x, fmt))
    if not suffix:
        codes = np.load(os.path.join(tmp_path, "e4m3", "codes.npy"))   # plain NumPy reads it
        assert codes.dtype == np.uint8
        with pytest.raises(ValueError, match="no format.json"):
            sd.load(os.path.join(tmp_path, "nothing"))


def test_context_is_captured_when_the_graph_is_built():
    x = np.random.default_rng(8).standard_normal((6, 7)).astype(np.float32)
    fmt = softfp8.e4m3
    # a seeded stochastic context: the graph takes its seed and next stream, so
    # it equals the NumPy cast made at the same position of the block
    with softfp8.rounding("stochastic", seed=77):
        g1 = sd.astype(da.from_array(x, chunks=(4, 3)), fmt)
        g2 = sd.astype(da.from_array(x, chunks=(2, 7)), fmt)
    with softfp8.rounding("stochastic", seed=77):
        w1 = x.astype(fmt)
        w2 = x.astype(fmt)
    assert not np.array_equal(_view(w1, fmt), _view(w2, fmt))
    assert np.array_equal(_view(g1.compute(scheduler="threads"), fmt), _view(w1, fmt))
    assert np.array_equal(_view(g2.compute(scheduler="threads"), fmt), _view(w2, fmt))
    # a directed mode captured at build time applies in the worker threads
    e = x.astype(softfp8.e5m2)
    with softfp8.rounding("downward"):
        g = sd.sum(da.from_array(e, chunks=(2, 2)), axis=0)
        w = bits.sum(softfp8.e5m2, _view(e, softfp8.e5m2), axis=0)[0]
    assert np.array_equal(_view(g.compute(scheduler="threads"), softfp8.e5m2), w)
    assert not np.array_equal(w, bits.sum(softfp8.e5m2, _view(e, softfp8.e5m2), axis=0)[0])
    with pytest.raises(ValueError, match="stochastic"):
        sd.sum(da.from_array(e, chunks=2), dtype=np.float64, rounding="stochastic", seed=1)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # worker threads
def test_matmul_captures_rounding_and_saturation():
    fmt = softfp8.e4m3
    A = _random(fmt, (6, 40), 21, 8.0)
    B = _random(fmt, (40, 5), 22, 8.0)
    with np.errstate(over="ignore"):
        plain = softfp8.matmul(A, B)
        assert np.isnan(plain.astype(np.float32)).any()     # overflow -> NaN (E4M3 has no inf)
        for ch in [((3, 7), (7, 2)), ((6, 40), (40, 5))]:
            got = sd.matmul(da.from_array(A, chunks=ch[0]), da.from_array(B, chunks=ch[1]))
            assert np.array_equal(_view(got.compute(), fmt), _view(plain, fmt))
    for ctx in (lambda: softfp8.rounding("upward"), lambda: softfp8.saturation(True)):
        with ctx(), np.errstate(over="ignore"):
            want = softfp8.matmul(A, B)
            g1 = sd.matmul(da.from_array(A, chunks=(3, 7)), da.from_array(B, chunks=(7, 2)))
            g2 = sd.matmul(da.from_array(A, chunks=(6, 40)), da.from_array(B, chunks=(40, 5)))
        assert not np.array_equal(_view(want, fmt), _view(plain, fmt))
        for g in (g1, g2):
            assert np.array_equal(_view(g.compute(scheduler="threads"), fmt), _view(want, fmt))


def _all_formats():
    return (list(softfp8.presets().values())
            + [softfp8.cfloat8_143(bias=20), softfp8.cfloat8_152(bias=0), softfp8.shp(bias=15)])


@pytest.mark.parametrize("fmt", _all_formats(), ids=lambda f: f.name)
def test_sum_every_format_random_codes(fmt):
    """Random codes (specials included) and random finite codes of every preset and
    Tesla family, three rounding modes, whole-array and row sums, two chunkings."""
    rng = np.random.default_rng(2)
    codes = rng.integers(0, fmt.code_mask + 1, 4000).astype(fmt.storage)
    vals = bits.to_float(codes, fmt)[0]
    finite = codes[np.isfinite(vals)][:120]
    assert finite.size == 120
    n = 0
    for c in (codes[:120], finite):
        x = c.view(fmt.dtype)
        for mode in ("nearest_even", "toward_zero", "downward"):
            want = bits.sum(fmt, c, rounding=mode)[0]
            wrows = bits.sum(fmt, c.reshape(12, 10), axis=1, rounding=mode)[0]
            for ch, rch in ((120, (12, 10)), (17, (5, 3))):
                got = sd.sum(da.from_array(x, chunks=ch), rounding=mode).compute()
                rows = sd.sum(da.from_array(x.reshape(12, 10), chunks=rch), axis=1,
                              rounding=mode).compute()
                assert int(_view(got, fmt)) == int(want), (mode, ch)
                assert np.array_equal(_view(rows, fmt), wrows), (mode, rch)
                n += 1
    assert n == 12


@pytest.mark.parametrize("name", ["e4m3", "float8_e3m4", "e4m3fnuz"])
def test_matmul_split_k_with_nans(name):
    fmt = getattr(softfp8, name)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 13)).astype(np.float32)
    B = rng.standard_normal((13, 4)).astype(np.float32)
    A[1, 3], A[2, 2], B[5, 1] = np.nan, -np.nan, np.nan
    A, B = A.astype(fmt), B.astype(fmt)
    assert sd.exact_split_k(fmt, 13)
    for od in (None, np.float32, np.float64):
        want = np.asarray(softfp8.matmul(A, B, out_dtype=od))
        assert np.isnan(want.astype(np.float64)).sum() == 11  # rows 1, 2 (8) + column 1 (3)
        got = sd.matmul(da.from_array(A, chunks=(2, 5)), da.from_array(B, chunks=(5, 2)),
                        out_dtype=od).compute()
        assert np.array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8))
