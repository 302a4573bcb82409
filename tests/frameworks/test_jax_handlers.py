"""The FFI handlers of softfp8.jax.Linear (softfp8/_core/xla_ffi.c: scaled_convert,
delayed_update, block_quantize, block_values, tile_quantize, scale_product) against their
NumPy twins -- softfp8.scaling.quantize / ScaledArray.dequantize / DelayedScaling,
softfp8.mx.quantize / BlockArray.dequantize / quantize_tiles, NumPy's float32 multiply --
over their parameter space: every preset the NumPy function takes, every rounding mode
(stochastic with a seed: the same random words), saturation on and off, scales of any
value (powers of two or not, float32 subnormals, near float32's max), special inputs
(zeros, subnormals, infinities, NaN, values past the format's range), blocks and tiles
whole and partial, raw codes above a format's width.  The handlers run the same C
conversions as NumPy's casts (the driver, the block quantiser), so these tests check
what is theirs: the exact products and quotients, the scales, the calling convention
(contiguous rows, the random-word order) and XLA's flush-to-zero environment."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import softfp8
from softfp8 import mx, scaling

jax = pytest.importorskip("jax", reason="softfp8[jax] not installed")
import jax.numpy as jnp  # noqa: E402

from softfp8 import _jax_ffi as F  # noqa: E402

MODES = softfp8._context.ROUNDING_MODES
LEVELS = sorted({0, softfp8._ext.simd_level()})


@pytest.fixture(autouse=True, params=LEVELS, ids=lambda lv: f"simd{lv}")
def simd(request):
    """Every test at the portable level and at the machine's SIMD level (the handlers run
    the driver's families at the current level)."""
    prev = softfp8._ext.set_simd(request.param)
    yield request.param
    softfp8._ext.set_simd(prev)
SEED = 0x0123456789ABCDEF
E4 = softfp8.lookup("e4m3")


def _seed(mode):
    return jnp.array([SEED & 0xFFFFFFFF, SEED >> 32], jnp.uint32) if mode == "stochastic" else jnp.zeros(2, jnp.uint32)


def _ctx(mode, saturate=True):
    stack = contextlib.ExitStack()
    stack.enter_context(softfp8.rounding(mode, seed=SEED) if mode == "stochastic" else softfp8.rounding(mode))
    stack.enter_context(softfp8.saturation(saturate))
    stack.enter_context(np.errstate(all="ignore"))
    return stack


def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _f32_bits(v):
    return int(np.float32(v).view(np.uint32).view(np.int32))


def _inputs(rng, n=3000):
    """float32 values across the range, subnormals, the specials and signed zeros"""
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-40, 40, n))).astype(np.float32)
    x[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -149, -2.0 ** -140, 3.0e38, -3.4e38, 1.0, 448.0, 57344.0]
    return x


SCALES = [1.0, 2.0 ** -10, 448.0 / 3.7, 2.0 ** -140, 2.0 ** -149, 3.0e38, 0.1]
SCALED_FORMATS = [n for n in sorted(softfp8.presets())
                  if n not in ("float8_e8m0fnu",)]          # no finite max for scaling


@pytest.mark.parametrize("name", SCALED_FORMATS)
def test_scaled_cast_against_scaling_quantize(name):
    """scaled_convert (given scale) == scaling.quantize(x, fmt, scale=s): codes and flags,
    every mode (stochastic: the same seed's words), saturating and not, scales of any value;
    then the dequantisation == ScaledArray.dequantize(float32) of every code, raw codes above
    the width included (they read as code & mask)."""
    fmt = softfp8.lookup(name)
    rng = np.random.default_rng(len(name))
    x = _inputs(rng)
    cases = 0
    for mode in MODES:
        for sat in (True, False):
            for s in SCALES[: 7 if mode == "nearest_even" else 3]:
                s32 = np.float32(s)
                env = F._env(mode, sat, "after", 32, fmt.name, "test")
                codes, fl, amax, used, inv = F._scaled_convert(jnp.asarray(x), jnp.asarray(s32), _seed(mode), fmt, env,
                                                               (0, 0, 0), 1)
                with _ctx(mode, sat), softfp8.collect_flags() as wfl:
                    want = scaling.quantize(x, fmt, scale=s32, rounding=mode, seed=SEED if mode == "stochastic"
                                            else None, saturate=sat)
                assert np.array_equal(_bits(codes), _bits(want.codes)), (name, mode, sat, s)
                assert int(fl) == int(wfl.flags) & 0x3F, (name, mode, sat, s)
                assert float(used) == float(s32) and _bits(inv) == _bits(want.scale_inv)
                assert float(amax) == float(np.fmax.reduce(np.abs(x), initial=0))
                cases += x.size
    assert cases == x.size * 2 * (7 + 6 * 3)
    # dequantise: every code (and codes with the bits above the width set) by every scale
    n = 1 << fmt.bits
    codes = np.arange(n, dtype=np.uint32)
    raw = codes | ((np.arange(n, dtype=np.uint32) % 7) << fmt.bits if fmt.bits < 8 else 0)
    store = np.uint8 if fmt.bits <= 8 else np.uint16
    for s in SCALES:
        s32 = np.float32(s)
        env = F._env("nearest_even", None, "after", 32, fmt.name, "test")
        y = F._scaled_convert(jnp.asarray(raw.astype(store)), jnp.asarray(s32), jnp.zeros(2, jnp.uint32), fmt, env,
                              (0, 0, 0), 0)[0]
        with np.errstate(all="ignore"):
            want = scaling.ScaledArray(codes.astype(store).view(fmt.dtype), s32, fmt).dequantize(np.float32)
        assert np.array_equal(_bits(y), _bits(want)), (name, s)


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "float4_e2m1fn", "float16", "bfloat16", "hfp8_143"])
def test_current_scale_against_scaling_quantize(name):
    """scaled_convert with the current scale (rule 1) == scaling.quantize(x, fmt, margin=,
    pow2=): the scale and the codes, for amaxes subnormal, ordinary, near float32's max,
    zero, infinite; a subnormal target (margin 140), whose quotients are subnormal or
    underflow to zero (then float32's least subnormal)."""
    fmt = softfp8.lookup(name)
    rng = np.random.default_rng(5)
    base = rng.standard_normal(500).astype(np.float32)
    cases = 0
    for k, mult in enumerate((2.0 ** -140, 1.0, 1e-30, 1e30, 0.0)):
        x = (base * np.float32(mult)).astype(np.float32)
        if k == 2:
            x[3] = np.inf
        for margin in (0, 3, 140):        # 140: a subnormal float32 target, quotients that underflow
            for pow2 in (False, True):
                t = scaling._target_f32(scaling._fmt_max(fmt) * scaling._margin(margin))
                assert t is not None                  # a float32 target (subnormal for margin 140)
                env = F._env("nearest_even", True, "after", 32, fmt.name, "test")
                codes, _, _, used, _ = F._scaled_convert(jnp.asarray(x), jnp.ones((), jnp.float32),
                                                         jnp.zeros(2, jnp.uint32), fmt, env,
                                                         (1, _f32_bits(t), int(pow2)), 1)
                with np.errstate(all="ignore"):
                    want = scaling.quantize(x, fmt, margin=margin, pow2=pow2)
                assert _bits(np.float32(used)) == _bits(np.float32(want.scale)), (name, mult, margin, pow2)
                assert np.array_equal(_bits(codes), _bits(want.codes)), (name, mult, margin, pow2)
                cases += 1
    assert cases == 5 * 3 * 2


def test_delayed_update_against_delayed_scaling():
    """delayed_update == DelayedScaling.record + update: histories of lengths 1, 2, 5 with
    NaN, zeros, subnormal and infinite amaxes, both amax algorithms, margins 0 and 2."""
    rng = np.random.default_rng(9)
    amaxes = [0.0, 1.0, np.nan, 2.0 ** -140, np.inf, 3.0e38, 448.0, 1e-3, 0.0, 7.5]
    cases = 0
    for n in (1, 2, 5):
        for algo in ("max", "most_recent"):
            for margin in (0, 2, 140):
                d = scaling.DelayedScaling(margin=margin, amax_history_len=n, amax_compute_algo=algo, fmt=E4)
                hist, scale = jnp.zeros(n, jnp.float32), jnp.ones((), jnp.float32)
                t = _f32_bits(scaling._target_f32(scaling._fmt_max(E4) * scaling._margin(margin)))
                for a in list(amaxes) + list(rng.random(5)):
                    a32 = np.float32(a)
                    d.record(float(a32))
                    d.update()
                    hist, scale = F._delayed_update(hist, jnp.asarray(a32), scale, (0 if algo == "max" else 1, t))
                    assert np.array_equal(np.asarray(hist, np.float64), d.amax_history, equal_nan=True), (n, algo, a)
                    assert _bits(np.float32(scale)) == _bits(d.scale), (n, algo, margin, a)
                    cases += 1
    assert cases == 3 * 2 * 3 * 15


def _block_input(rng, rows, n):
    x = (rng.standard_normal((rows, n)) * np.exp2(rng.integers(-20, 20, (rows, n)))).astype(np.float32)
    x[0, :5] = [np.nan, 1.0, -2.0, 0.0, 3.0]          # a block with a NaN
    x[1, :] = 0.0                                       # an all-zero row
    x[2, 1] = -np.inf
    x[3, :] = np.float32(2.0 ** -140)                   # subnormal amax
    x[4, 3] = 3.0e38
    return x


@pytest.mark.parametrize("kind", list(mx.KINDS))
def test_block_quantize_and_values_against_mx(kind):
    """block_quantize == mx.quantize(x, kind, axis=1) (elements, scales, NVFP4's tensor scale)
    and block_values == BlockArray.dequantize(float32), every MX / NVFP4 kind, rows whose
    length is a whole number of blocks and not (partial last block), nearest even, toward
    zero and stochastic (the same seed's words), NaN / infinity / zero / subnormal blocks;
    the values also from element codes with the bits above the width set."""
    k = mx.KINDS[kind]
    fe = k.format() or softfp8._formats.format(**mx._INT8_HELPER)
    rng = np.random.default_rng(len(kind))
    cases = 0
    for n in (k.block * 3, k.block * 2 + 5):
        x = _block_input(rng, 7, n)
        for mode in ("nearest_even", "toward_zero", "stochastic"):
            env = F._env(mode, True, "after", 32, fe.name, "test")
            kd = (int(kind == "nvfp4"), mx.SCALE_RULES.index("floor"), k.emax, k.mbits, _f32_bits(k.elem_max),
                  k.block, int(k.elem == "int8"))
            el, sc, ts, _ = F._block_quantize(jnp.asarray(x), _seed(mode), kd, fe, E4, env)
            with np.errstate(all="ignore"):
                want = mx.quantize(x, kind, axis=1, rounding=mode, seed=SEED if mode == "stochastic" else None)
            assert np.array_equal(np.asarray(el), want.elements.view(np.uint8)), (kind, n, mode)
            assert np.array_equal(np.asarray(sc), want.scales), (kind, n, mode)
            if kind == "nvfp4":
                assert _bits(np.float32(ts)) == _bits(np.float32(want.tensor_scale))
            v = F._block_values(el, sc, ts, kind == "nvfp4", k.block, fe, E4, k.elem == "int8")
            with np.errstate(all="ignore"):
                wv = want.dequantize(np.float32)
            assert np.array_equal(_bits(v), _bits(wv)), (kind, n, mode)
            if fe.bits < 8 and k.elem != "int8":      # raw codes above the width read as code & mask
                high = np.asarray(el) | np.uint8(0xFF << fe.bits & 0xFF)
                v2 = F._block_values(jnp.asarray(high), sc, ts, kind == "nvfp4", k.block, fe, E4)
                assert np.array_equal(_bits(v2), _bits(wv)), (kind, n, mode)
            cases += x.size
    assert cases == 7 * (k.block * 3 + k.block * 2 + 5) * 3


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "float8_e3m4", "hfp8_143", "e4m3fnuz"])
def test_tile_quantize_against_quantize_tiles(name):
    """tile_quantize == mx.quantize_tiles (codes and float32 scales) for 1 x 128 and 128 x 128
    tiles, whole and partial (130 x 200), every rounding mode (stochastic: the same seed's
    words), tiles with NaN / infinity, all-zero and subnormal-amax tiles, values near
    float32's max; block_values (float32 tile scales) == BlockArray.dequantize(float32)."""
    fmt = softfp8.lookup(name)
    rng = np.random.default_rng(len(name) + 40)
    cases = 0
    for shape in ((128, 256), (130, 200)):
        x = (rng.standard_normal(shape) * np.exp2(rng.integers(-30, 30, shape))).astype(np.float32)
        x[0, 5], x[129 if shape[0] > 128 else 127, 3] = np.nan, np.inf
        x[5, :128] = 0.0
        x[6, :128] = np.float32(2.0 ** -145)
        x[7, 0] = np.float32(3.0e38)
        for tile in ((1, 128), (128, 128)):
            for mode in MODES:
                env = F._env(mode, True, "after", 32, fmt.name, "test")
                codes, sc, _ = F._tile_quantize(jnp.asarray(x), _seed(mode), tile, fmt, env)
                with np.errstate(all="ignore"):
                    want = mx.quantize_tiles(x, tile, rounding=mode, seed=SEED if mode == "stochastic" else None,
                                             fmt=fmt)
                assert np.array_equal(np.asarray(codes), want.elements.view(np.uint8)), (name, shape, tile, mode)
                assert np.array_equal(_bits(sc), _bits(want.scales.reshape(np.asarray(sc).shape))), \
                    (name, shape, tile, mode)
                v = F._block_values(codes, sc, jnp.ones((), jnp.float32), 2, 128, fmt, E4, tr=tile[0])
                with np.errstate(all="ignore"):
                    wv = want.dequantize(np.float32)
                assert np.array_equal(_bits(v), _bits(wv)), (name, shape, tile, mode)
                cases += x.size
    assert cases == (128 * 256 + 130 * 200) * 2 * len(MODES)


def test_scale_product_against_numpy():
    """scale_product == NumPy's float32 x * (s1 * s2), subnormal results and products included
    (XLA's own multiply would flush them)."""
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(4000) * np.exp2(rng.integers(-60, 60, 4000))).astype(np.float32)
    x[:4] = [np.inf, -0.0, np.nan, 2.0 ** -149]
    cases = 0
    for s1, s2 in ((1.0, 1.0), (2.0 ** -70, 2.0 ** -60), (3.0, 1.0 / 3.0), (2.0 ** 100, 2.0 ** 27), (1e-20, 1e-20)):
        a, b = np.float32(s1), np.float32(s2)
        y = F._scale_product(jnp.asarray(x), jnp.asarray(a), jnp.asarray(b))
        with np.errstate(all="ignore"):
            want = x * (a * b)
        assert np.array_equal(_bits(y), _bits(want)), (s1, s2)
        cases += x.size
    assert cases == 5 * 4000
