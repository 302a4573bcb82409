"""fma under stochastic rounding: the fast path (stochastic.c's sfp8f_run_fma_sr, its
loop and fast_simd.c's sfp8s_fma_sr_avx512) against the exact core with the same seed
and element indices, codes and per-element flags, at every SIMD level of the machine.

8-bit formats: all 2^24 operand triples; 16-bit formats: random triples of three
kinds (uniform codes biased to the extremes, values near 1, and addends that cancel
the product to within a few ulps: exact zeros, results below 2^emin, sums whose
binary64 value TwoSum must round to odd).  The layouts a 3-input ufunc is called
with are in test_fast_layouts.py::test_fma_layouts.
"""
import itertools

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb

from .test_fast_arith import _assert_same, _fmt16, _narrow_codes, _special_biased_codes
from .test_fast_paths import SIMD_LEVELS, fast_mode, isolated

# (seed, random bits, saturate, tininess): every setting of the rule's inputs
SETTINGS_8 = [(1, 32, False, "after"), (2**64 - 3, 3, True, "before")]
SETTINGS_16 = [(seed, nbits, sat, "before" if sat else "after")
               for seed, nbits, sat in itertools.product((1, 2**64 - 3), (32, 17, 3), (False, True))]


def _versus_core(fmt, a, b, c, setting, what):
    """fma of the code arrays under one setting: every SIMD level against the core;
    returns the number of elements compared."""
    seed, nbits, sat, tin = setting
    kw = dict(rounding="stochastic", seed=seed, sr_bits=nbits, saturate=sat, tininess=tin)
    with fast_mode(0, SIMD_LEVELS[-1]):
        ref = sfb.fma(fmt, a, b, c, **kw)
    count = 0
    for simd in SIMD_LEVELS:
        with fast_mode(2, simd):
            got = sfb.fma(fmt, a, b, c, **kw)
        count += _assert_same(ref, got, f"{what} {setting} simd={simd}")
    return count


@pytest.mark.parametrize("setting", SETTINGS_8, ids=lambda s: f"N{s[1]}-{s[3]}")
@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
@isolated
def test_sr_fma_8bit_exhaustive(name, setting):
    """All 2^24 triples (x, y all 65,536 pairs per call, z one code per call: the
    random words differ from call to call through the seed)."""
    fmt = getattr(softfp8, name)
    codes = np.arange(256, dtype=np.uint32)
    a, b = np.repeat(codes, 256), np.tile(codes, 256)
    count = 0
    for z in range(256):
        s = (setting[0] + 7919 * z) % 2**64
        count += _versus_core(fmt, a, b, np.full(65536, z, dtype=np.uint32), (s,) + setting[1:], f"{name} z={z}")
    assert count == len(SIMD_LEVELS) << 24


def _cancelling(rng, fmt, n):
    """x, y near 1; z the code of -(x*y) rounded to the format, moved by -2..2 codes:
    exact zeros, tiny results and far sums."""
    x, y = _narrow_codes(rng, fmt, n), _narrow_codes(rng, fmt, n)
    dt = fmt.dtype
    isz = np.dtype(dt).itemsize
    kind = np.uint8 if isz == 1 else np.uint16
    xv = x.astype(kind).view(dt).astype(np.float64)
    yv = y.astype(kind).view(dt).astype(np.float64)
    with np.errstate(all="ignore"):
        z = (-(xv * yv)).astype(dt).view(kind).astype(np.int64)
    sign = z & (1 << (fmt.bits - 1)) if fmt.signed else 0
    mag = np.clip((z - sign) + rng.integers(-2, 3, size=n), 0, (1 << (fmt.bits - fmt.signed)) - 1)
    return x, y, (mag | sign).astype(np.uint32)


@pytest.mark.parametrize("name", ["float16", "bfloat16", "hfp16_169", "shp", "uhp"])
@isolated
def test_sr_fma_16bit_random(name):
    """Per setting 3n triples (n = 300,000 for float16 and bfloat16, 100,000 for the
    others): 10.8 million per format for float16 and bfloat16."""
    fmt = _fmt16(name)
    n = 300_000 if name in ("float16", "bfloat16") else 100_000
    rng = np.random.default_rng(29)
    count = 0
    for setting in SETTINGS_16:
        kinds = [[_special_biased_codes(rng, fmt, n) for _ in range(3)],
                 [_narrow_codes(rng, fmt, n) for _ in range(3)],
                 list(_cancelling(rng, fmt, n))]
        a, b, c = (np.concatenate(col) for col in zip(*kinds))
        count += _versus_core(fmt, a, b, c, setting, name)
    assert count == len(SETTINGS_16) * len(SIMD_LEVELS) * 3 * n


@pytest.mark.parametrize("name", ["hfp8_143", "hfp8_152", "e4m3fnuz", "cf143"])
@isolated
def test_sr_fma_8bit_other_formats(name):
    """The other 8-bit families (Tesla subnormals: the normal-range rule and the core;
    FNUZ: not covered, the core): 200,000 uniform triples per setting."""
    fmt = softfp8.cfloat8_143(bias=7) if name == "cf143" else getattr(softfp8, name)
    rng = np.random.default_rng(31)
    count = 0
    for setting in SETTINGS_16[:4]:
        a, b, c = (rng.integers(0, 256, size=200_000, dtype=np.uint32) for _ in range(3))
        count += _versus_core(fmt, a, b, c, setting, name)
    assert count == 4 * len(SIMD_LEVELS) * 200_000


def test_sr_fma_is_fast_path_and_reproducible():
    """The ufunc under a seeded context: reproducible, and the same codes with the
    fast paths on and off."""
    fmt = softfp8.e4m3
    rng = np.random.default_rng(5)
    x, y, z = (rng.standard_normal(50_000).astype(np.float32).astype(fmt.dtype) for _ in range(3))
    with softfp8.rounding("stochastic", seed=11):
        r1 = softfp8.fma(x, y, z)
    with softfp8.rounding("stochastic", seed=11):
        r2 = softfp8.fma(x, y, z)
    assert np.array_equal(r1.view(np.uint8), r2.view(np.uint8))
    with fast_mode(0):
        with softfp8.rounding("stochastic", seed=11):
            r0 = softfp8.fma(x, y, z)
    assert np.array_equal(r0.view(np.uint8), r1.view(np.uint8))
