"""Fast paths of fma, 16-bit add/sub/mul, stochastic casts and matmul against the core.

Reference: the same call with the fast paths off (``_ext.set_fast(0)``: the exact
core, checked by the rest of the suite against rational arithmetic and TestFloat).
The fast variant runs eager (``set_fast(2)``).  ``softfp8.bits`` gives per-element
flags; ufunc and cast calls give the OR of the flags of the call.  Each test runs
in a forked child (``isolated`` from test_fast_paths) so its tables are fresh.
"""
import contextlib
import itertools
import os
import zlib
from fractions import Fraction

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb
from softfp8 import _ext

from .test_fast_paths import SIMD_LEVELS, fast_mode, isolated

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")


@contextlib.contextmanager
def level(n):
    prev = _ext.set_fast(n)
    try:
        yield
    finally:
        _ext.set_fast(prev)


def _bits_pair(fn, *args, **kw):
    with level(0):
        ref = fn(*args, **kw)
    with level(2):
        got = fn(*args, **kw)
    return ref, got


def _assert_same(ref, got, what):
    rc, rf = ref
    gc, gf = got
    bad = np.flatnonzero((np.asarray(rc) != np.asarray(gc)) | (np.asarray(rf) != np.asarray(gf)))
    assert bad.size == 0, f"{what}: first mismatch at {bad[0]}: core {rc[bad[0]]}/{rf[bad[0]]} fast {gc[bad[0]]}/{gf[bad[0]]}"
    return np.asarray(rc).size


def _special_biased_codes(rng, fmt, n):
    """Uniform codes, plus operands near max, min normal and zero."""
    bits = fmt.bits
    u = rng.integers(0, 1 << bits, size=n, dtype=np.uint32)
    mx = int(fmt.encode(fmt.max))
    k = n // 4
    near = rng.integers(-64, 65, size=k) + np.where(rng.random(k) < 0.5, mx, 1 << fmt.man_bits)
    if fmt.signed:
        near = np.clip(near, 0, (1 << (bits - 1)) - 1).astype(np.uint32)
        near |= (rng.random(k) < 0.5).astype(np.uint32) << (bits - 1)
    else:
        near = np.clip(near, 0, (1 << bits) - 1).astype(np.uint32)
    u[:k] = near
    return u


def _narrow_codes(rng, fmt, n):
    """Codes of values within 2^+-10 of 1 (1% zeros): whole SIMD blocks of sums that
    are exact in binary64 (the kernels' no-TwoSum blocks) and of normal results."""
    M, bias = fmt.man_bits, fmt.bias
    e = rng.integers(max(1, bias - 10), min((1 << fmt.exp_bits) - 1, bias + 11), size=n, dtype=np.uint32)
    u = (e << M) | rng.integers(0, 1 << M, size=n, dtype=np.uint32)
    if fmt.signed:
        u |= (rng.random(n) < 0.5).astype(np.uint32) << (fmt.bits - 1)
    u[rng.random(n) < 0.01] = 0
    return u


# ---- 16-bit add / sub / mul / div / fma against the core: per operation, mode and
#      format 5 * 10^6 random operand tuples for float16 and bfloat16 (10^7 per
#      operation and mode over the two), 10^6 for hfp16_169, SHP and UHP, split over
#      the SIMD levels of the machine; SOFTFP8_PROOF16=1 adds test_16bit_arith_proof:
#      10^7 tuples per operation, mode and format at every SIMD level ----

A16_FUNCS = {"add": sfb.add, "sub": sfb.sub, "mul": sfb.mul, "div": sfb.div, "fma": sfb.fma}
A16_NAMES = ["float16", "bfloat16", "hfp16_169", "shp", "uhp"]


def _fmt16(name):
    return softfp8.shp(bias=15) if name == "shp" else getattr(softfp8, name)


def _a16_operands(rng, fmt, n, chunk, nops):
    """Operand code arrays of chunk number chunk: values near 1 (whole SIMD blocks of
    normal results, sums exact or not in binary32/binary64) in chunks 1 and 3, else
    uniform codes biased to max, min normal and zero."""
    gen = _narrow_codes if chunk % 5 in (1, 3) else _special_biased_codes
    return [gen(rng, fmt, n) for _ in range(nops)]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "fma"])
@pytest.mark.parametrize("name", A16_NAMES)
@isolated
def test_16bit_arith_random(op, name):
    fmt = _fmt16(name)
    per_chunk = 1_000_000 if name in ("float16", "bfloat16") else 200_000
    rng = np.random.default_rng(zlib.crc32(f"a16 {op} {name}".encode()))
    fn = A16_FUNCS[op]
    count = 0
    per_level = dict.fromkeys(SIMD_LEVELS, 0)
    for mode in MODES:
        for chunk in range(5):
            simd = SIMD_LEVELS[chunk % len(SIMD_LEVELS)]
            ops = _a16_operands(rng, fmt, per_chunk, chunk, 3 if op == "fma" else 2)
            with fast_mode(2, simd):
                got = fn(fmt, *ops, rounding=mode)
            with fast_mode(0, simd):
                ref = fn(fmt, *ops, rounding=mode)
            k = _assert_same(ref, got, f"{name} {op} {mode} simd={simd}")
            count += k
            per_level[simd] += k
    assert count == 6 * 5 * per_chunk
    assert all(v >= 6 * per_chunk for v in per_level.values()), per_level


PROOF16 = os.environ.get("SOFTFP8_PROOF16") == "1"


@pytest.mark.slow
@pytest.mark.skipif(not PROOF16, reason="opt-in: SOFTFP8_PROOF16=1 (about 10^9 core evaluations)")
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("name", A16_NAMES)
@isolated
def test_16bit_arith_proof(op, name):
    """10^7 random operand tuples per operation, rounding mode and format, each compared
    with the core at every SIMD level of the machine (per-element codes and flags)."""
    fmt = _fmt16(name)
    rng = np.random.default_rng(zlib.crc32(f"proof16 {op} {name}".encode()))
    fn = A16_FUNCS[op]
    per_level = dict.fromkeys(SIMD_LEVELS, 0)
    for mode in MODES:
        for chunk in range(10):
            ops = _a16_operands(rng, fmt, 1_000_000, chunk, 2)
            with fast_mode(0, SIMD_LEVELS[0]):
                ref = fn(fmt, *ops, rounding=mode)
            for simd in SIMD_LEVELS:
                with fast_mode(2, simd):
                    got = fn(fmt, *ops, rounding=mode)
                per_level[simd] += _assert_same(ref, got, f"{name} {op} {mode} simd={simd}")
    print(f"proof16 {name} {op}: {per_level}")
    assert all(v == 6 * 10_000_000 for v in per_level.values()), per_level


# ---- 16-bit comparisons and maximum / minimum on order keys (fast/order16.c):
#      400,000 operand pairs per operation and format (NaNs, zeros of both signs,
#      subnormals, equal operands and uniform codes), per-element flags ----

ORDER16_FUNCS = {"max": sfb.max, "min": sfb.min, "maxnum": sfb.maxnum, "minnum": sfb.minnum,
                 "eq": sfb.eq, "ne": sfb.ne, "lt": sfb.lt, "le": sfb.le, "gt": sfb.gt, "ge": sfb.ge}
ORDER16_FORMATS = {
    "float16": softfp8.float16, "bfloat16": softfp8.bfloat16, "hfp16_169": softfp8.hfp16_169,
    "shp": softfp8.shp(bias=15), "uhp": softfp8.uhp,
    "fnuz_flush": softfp8.format(exp_bits=5, man_bits=10, bias=15, specials="fnuz", subnormals="flush"),
    "e3m6_none": softfp8.format(exp_bits=3, man_bits=6, bias=3, specials="none"),
}


def _order_operands(rng, fmt, n):
    u = _special_biased_codes(rng, fmt, n) if fmt.signed else rng.integers(0, 1 << fmt.bits, n, dtype=np.uint32)
    v = u.copy()
    rng.shuffle(v)
    sign = np.uint32(1 << (fmt.bits - 1)) if fmt.signed else np.uint32(0)
    sub = rng.integers(1, 1 << fmt.man_bits, n, dtype=np.uint32) | (sign * (rng.random(n) < 0.5))
    pick = rng.random(n)
    v = np.where(pick < 0.1, u, v)                                        # equal operands
    v = np.where((pick >= 0.1) & (pick < 0.2), sign * (rng.random(n) < 0.5), v)  # +-0
    v = np.where((pick >= 0.2) & (pick < 0.25), sub, v)                   # subnormals
    return u, v.astype(np.uint32)


@pytest.mark.parametrize("name", sorted(ORDER16_FORMATS))
@isolated
def test_order16_random(name):
    fmt = ORDER16_FORMATS[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    count = 0
    for op, fn in ORDER16_FUNCS.items():
        a, b = _order_operands(rng, fmt, 400_000)
        for x, y in ((a, b), (b, a)):
            got, ref = None, None
            with fast_mode(2, SIMD_LEVELS[0]):
                got = fn(fmt, x[:200_000], y[:200_000])
            with fast_mode(0, SIMD_LEVELS[0]):
                ref = fn(fmt, x[:200_000], y[:200_000])
            count += _assert_same(ref, got, f"{name} {op}")
    assert count == len(ORDER16_FUNCS) * 400_000


FORMATS16 = {"float16": softfp8.float16, "bfloat16": softfp8.bfloat16, "hfp16_169": softfp8.hfp16_169,
             "shp": softfp8.shp(bias=15), "uhp": softfp8.uhp}


@pytest.mark.parametrize("name", sorted(FORMATS16))
@isolated
def test_16bit_arith_configs(name):
    """Every deterministic configuration (saturation, tininess) on 2*10^5 pairs, ufunc OR-flags
    too (at every SIMD level).  SHP (Tesla subnormals, no specials) and UHP (unsigned,
    flushed subnormals): SIMD kernels for normal lanes, the core for the rest."""
    fmt = FORMATS16[name]
    rng = np.random.default_rng(7)
    count = 0
    for mode, sat, tin in itertools.product(MODES, (False, True), ("after", "before")):
        a = _special_biased_codes(rng, fmt, 200_000)
        b = _special_biased_codes(rng, fmt, 200_000)
        for op, uf in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)):
            ref, got = _bits_pair(getattr(sfb, op), fmt, a, b, rounding=mode, saturate=sat, tininess=tin)
            count += _assert_same(ref, got, f"{name} {op} {mode} sat={sat} {tin}")
            x = a.astype(np.uint16).view(fmt.dtype)
            y = b.astype(np.uint16).view(x.dtype)
            outs = []
            for lv, simd in [(0, 0)] + [(2, s) for s in SIMD_LEVELS]:
                with fast_mode(lv, simd), softfp8.rounding(mode), softfp8.saturation(sat), softfp8.tininess(tin), \
                        softfp8.collect_flags() as fl, np.errstate(all="ignore"):
                    r = uf(x, y)
                outs.append((r.view(np.uint16).tobytes(), int(fl.flags)))
            assert all(o == outs[0] for o in outs[1:]), f"{name} {uf.__name__} {mode} sat={sat} {tin}"
    assert count == 24 * 4 * 200_000


# ---- fma of 8-bit formats ----

@pytest.mark.parametrize("simd", SIMD_LEVELS)
@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
@isolated
def test_fma_exhaustive_nearest_even(name, simd):
    """All 2^24 operand triples, default configuration, per-element flags, at every
    SIMD level (AVX-512: fast_simd.c's sfp8s_fma8_avx512, else the portable loop)."""
    fmt = getattr(softfp8, name)
    _ext.set_simd(simd)
    c = np.arange(256, dtype=np.uint32)
    a, b = np.repeat(c, 256), np.tile(c, 256)
    count = 0
    for z in range(256):
        cc = np.full(65536, z, dtype=np.uint32)
        ref, got = _bits_pair(sfb.fma, fmt, a, b, cc, rounding="nearest_even")
        count += _assert_same(ref, got, f"{name} fma c={z}")
    assert count == 1 << 24


FMA_FORMATS = ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "hfp8_143", "hfp8_152"]


@pytest.mark.parametrize("name", FMA_FORMATS + ["cf143"])
@isolated
def test_fma_random_all_configs(name):
    fmt = softfp8.cfloat8_143(bias=7) if name == "cf143" else getattr(softfp8, name)
    rng = np.random.default_rng(11)
    count = 0
    for mode, sat, tin in itertools.product(MODES, (False, True), ("after", "before")):
        a, b, c = (rng.integers(0, 256, size=200_000, dtype=np.uint32) for _ in range(3))
        ref, got = _bits_pair(sfb.fma, fmt, a, b, c, rounding=mode, saturate=sat, tininess=tin)
        count += _assert_same(ref, got, f"{name} fma {mode} sat={sat} {tin}")
        # the ufunc (OR-flags per call) and per-element flags at every SIMD level
        # (AVX-512: sfp8s_fma8_avx512, AVX2: sfp8s_fma8_avx2, else the portable loop)
        x, y, z = (v.astype(np.uint8).view(fmt.dtype) for v in (a, b, c))
        outs = []
        for lv, simd in [(0, SIMD_LEVELS[0])] + [(2, s) for s in SIMD_LEVELS]:
            with fast_mode(lv, simd), softfp8.rounding(mode), softfp8.saturation(sat), softfp8.tininess(tin), \
                    softfp8.collect_flags() as fl, np.errstate(all="ignore"):
                r = softfp8.fma(x, y, z)
                per = sfb.fma(fmt, a, b, c, rounding=mode, saturate=sat, tininess=tin)
            outs.append((r.view(np.uint8).tobytes(), int(fl.flags), per[0].tobytes(), per[1].tobytes()))
        assert all(o == outs[0] for o in outs[1:]), f"{name} fma ufunc {mode} sat={sat} {tin}"
        assert outs[0][2:] == (ref[0].tobytes(), ref[1].tobytes())
    assert count == 24 * 200_000


# ---- stochastic float32/float64 -> 8-bit casts (stochastic.c) and 16-bit casts (cast16.c) ----

@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "hfp8_143", "hfp8_152",
                                  "float4_e2m1fn", "ue4m3", "float8_e8m0fnu",
                                  "float16", "bfloat16", "hfp16_169", "uhp", "shp20"])
@isolated
def test_stochastic_cast(name):
    fmt = softfp8.shp(bias=20) if name == "shp20" else getattr(softfp8, name)
    dt = fmt.dtype
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(300_000) * 8).astype(np.float32)
    x[::7] = 0
    x[1::11] *= 1e-3
    x[2::13] = rng.integers(0, 2**32, size=x[2::13].size, dtype=np.uint32).view(np.float32)
    x[3::101] = np.float32(1e30)
    count = 0
    # the core; eager tables at every SIMD level (the AVX-512 kernel of fast_simd.c, else
    # stochastic.c's loop); the default mode
    variants = [(0, SIMD_LEVELS[-1])] + [(2, s) for s in SIMD_LEVELS] + [(1, SIMD_LEVELS[0])]
    y = rng.standard_normal(300_000) * np.exp2(rng.integers(-24, 14, size=300_000))  # all 53 bits
    x[4::17] = y[4::17] * 1e-2  # subnormal results
    y[::9] = x[::9]
    for src in (x, x.astype(np.float64), x[::-3], y):
        for sat, nbits, seed in itertools.product((False, True), (32, 9, 1), (1, 2**63 + 5)):
            outs = []
            tin = "before" if sat else "after"  # both tininess rules (subnormal results)
            for lv, simd in variants:
                with fast_mode(lv, simd), softfp8.rounding("stochastic", seed=seed, sr_bits=nbits), \
                        softfp8.saturation(sat), softfp8.tininess(tin), softfp8.collect_flags() as fl, \
                        np.errstate(all="ignore"):
                    r1 = src.astype(dt)
                    r2 = src[: src.size // 2].astype(dt)  # the next operation: another stream
                    # per-element flags (softfp8.bits), contiguous source
                    r3 = sfb.from_float(np.ascontiguousarray(src), fmt, rounding="stochastic", saturate=sat,
                                        tininess=tin, seed=seed, sr_bits=nbits)
                outs.append((r1.view(np.uint8).tobytes(), r2.view(np.uint8).tobytes(), int(fl.flags),
                             r3[0].tobytes(), r3[1].tobytes()))
            assert all(o == outs[0] for o in outs[1:]), f"{name} {src.dtype} sat={sat} sr_bits={nbits} seed={seed}"
            count += src.size
    assert count == 12 * (300_000 + 300_000 + 100_000 + 300_000)


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e4m3fnuz", "ue4m3", "hfp8_152"])
@isolated
def test_stochastic_cast_f64_whole_range(name):
    """float64 bit patterns with every exponent field (beyond binary32's range both ways,
    binary64 subnormals, zeros, infinities, NaN payloads) mixed into blocks of ordinary
    values: the SIMD kernels' binary64 keys (AVX-512: key64x16f's fallback; AVX2: the
    out-of-range lanes of sr_key256) and subnormal results, at every SIMD level against
    the core, per-element flags, both tininess rules."""
    fmt = getattr(softfp8, name)
    rng = np.random.default_rng(17)
    n = 40_000
    bits = (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)) | \
        (rng.integers(0, 2048, n, dtype=np.uint64) << np.uint64(52)) | \
        rng.integers(0, 1 << 52, n, dtype=np.uint64)
    bits[::5] &= np.uint64(0x800FFFFFFFFFFFFF)  # zeros and binary64 subnormals
    bits[1::7] |= np.uint64(0x7FF) << np.uint64(52)  # infinities and NaNs
    x = bits.view(np.float64).copy()
    x[2::3] = rng.standard_normal(x[2::3].size) * 4  # ordinary lanes in the same blocks
    x[3::11] = rng.standard_normal(x[3::11].size) * 2.0 ** -9  # subnormal results
    count = 0
    for seed, nbits, tin in itertools.product((1, 2**63 + 5), (32, 9), ("after", "before")):
        kw = dict(rounding="stochastic", seed=seed, sr_bits=nbits, tininess=tin)
        with fast_mode(0, SIMD_LEVELS[-1]), np.errstate(all="ignore"):
            ref = sfb.from_float(x, fmt, **kw)
        for simd in SIMD_LEVELS:
            with fast_mode(2, simd), np.errstate(all="ignore"):
                got = sfb.from_float(x, fmt, **kw)
            assert np.array_equal(ref[0], got[0]) and np.array_equal(ref[1], got[1]), \
                f"{name} seed={seed} sr_bits={nbits} {tin} simd={simd}"
            count += n
    assert count == 8 * len(SIMD_LEVELS) * n


def _sr_boundary_values(fmt, dtype, rng):
    """Every finite value of fmt (both signs) and, around each, the values a stochastic
    cast must tell apart: the neighbours one ulp of dtype away, the midpoints to the next
    value and one ulp either side of them, a random point between, plus zeros, values far
    below the smallest subnormal, beyond the largest finite value, binary32 subnormals
    and infinities / NaN; shuffled so that every kind shares SIMD blocks with the others."""
    codes = np.arange(1 << fmt.bits, dtype=np.uint32)
    vals = np.array([fmt.decode(int(c)) for c in codes], dtype=np.float64)
    fin = np.unique(np.abs(vals[np.isfinite(vals)]))
    nxt = np.append(fin[1:], fin[-1] * 2)
    mid = (fin + nxt) / 2
    out = [fin, nxt, mid, fin + (nxt - fin) * rng.random(fin.size),
           np.asarray([0.0, fmt.min_subnormal / 3, fmt.min_subnormal / 2, fmt.min_subnormal * 1e-9,
                       fmt.max * 1.5, fmt.max * 4, 1e30, np.inf, np.nan, 1e-40, 1e-44])]
    v = np.concatenate(out).astype(dtype)
    v = np.concatenate([v, np.nextafter(v, dtype(np.inf)), np.nextafter(v, dtype(0))])
    v = np.concatenate([v, -v])
    return rng.permutation(np.tile(v, 3))


_SR_ARITH_FORMATS = {
    "e4m3": softfp8.e4m3, "e5m2": softfp8.e5m2, "e4m3fnuz": softfp8.e4m3fnuz,
    "e5m2fnuz": softfp8.e5m2fnuz, "hfp8_143": softfp8.hfp8_143, "float4_e2m1fn": softfp8.float4_e2m1fn,
    # custom formats at the edges of the arithmetic kernel's cover (fast_simd.c, sr_arith16):
    # M = 4, a large emin, emin = -125 (its smallest subnormal is binary32's 2^-126) and
    # emin = 126 (its largest values beyond binary32's), and emin = -126 and 127 (outside:
    # the key table's kernel)
    "e3m4": softfp8.format(exp_bits=3, man_bits=4, bias=3),
    "e5m2b3": softfp8.format(exp_bits=5, man_bits=2, bias=3),
    "e6m1b126": softfp8.format(exp_bits=6, man_bits=1, bias=126),
    "e6m1b127": softfp8.format(exp_bits=6, man_bits=1, bias=127),
    "e4m3bm125": softfp8.format(exp_bits=4, man_bits=3, bias=-125),
    "e4m3bm126": softfp8.format(exp_bits=4, man_bits=3, bias=-126),
}


@pytest.mark.parametrize("name", list(_SR_ARITH_FORMATS))
@isolated
def test_stochastic_cast_boundaries(name):
    """The stochastic casts float32/float64 -> 8-bit at every rounding boundary of the
    format (the AVX-512 kernel computes both neighbours by arithmetic for these formats:
    fast_simd.c, sr_arith16), with few random bits (sr_bits 1..3: t + R = 2^N ties are
    common) and all 32, both tininess rules (the binade below 2^emin), saturation on and
    off, odd lengths (the 16-lane tail), per-element flags (softfp8.bits) and the flags'
    OR without them (astype), at every SIMD level against the core."""
    fmt = _SR_ARITH_FORMATS[name]
    rng = np.random.default_rng(23)
    # finite magnitudes: the codes 0..max of the positive half (all of them finite and
    # ordered in these formats); the value set is 3 copies of (4 per magnitude + 11
    # extras), with its two neighbours, both signs
    mags = int(fmt.encode(fmt.max)) + 1
    sizes = [(3 * 3 * 2 * (4 * mags + 11) // 32 - 1) * 32 + 21] * 2
    count = 0
    for dtype in (np.float32, np.float64):
        x = _sr_boundary_values(fmt, dtype, rng)
        x = x[: (x.size // 32 - 1) * 32 + 21]  # a tail of 16 + 5
        for seed, nbits, tin, sat in itertools.product((5, 2**64 - 3), (1, 2, 3, 32), ("after", "before"),
                                                       (False, True)):
            kw = dict(rounding="stochastic", seed=seed, sr_bits=nbits, tininess=tin, saturate=sat)
            outs = []
            for lv, simd in [(0, SIMD_LEVELS[-1])] + [(2, s) for s in SIMD_LEVELS]:
                with fast_mode(lv, simd), np.errstate(all="ignore"):
                    per = sfb.from_float(x, fmt, **kw)
                    with softfp8.rounding("stochastic", seed=seed, sr_bits=nbits), softfp8.tininess(tin), \
                            softfp8.saturation(sat), softfp8.collect_flags() as fl:
                        whole = x.astype(fmt.dtype)
                outs.append((per[0].tobytes(), per[1].tobytes(), whole.view(np.uint8).tobytes(), int(fl.flags)))
            for k, o in enumerate(outs[1:]):
                assert o == outs[0], f"{name} {dtype.__name__} seed={seed} sr_bits={nbits} {tin} sat={sat} variant {k}"
            count += x.size
    assert count == 32 * sum(sizes)


# ---- matmul: the binary64 BLAS path ----

@pytest.mark.parametrize("name", ["e4m3", "e4m3fnuz", "hfp8_143", "e5m2", "cf143_60"])
@isolated
def test_matmul_paths(name):
    fmt = softfp8.cfloat8_143(bias=60) if name == "cf143_60" else getattr(softfp8, name)
    dt = fmt.dtype
    rng = np.random.default_rng(5)
    cases = 0
    for m, n, p in ((1, 1, 1), (3, 17, 5), (33, 64, 20), (8, 300, 9)):
        A = rng.integers(0, 256, size=(m, n), dtype=np.uint8)
        B = rng.integers(0, 256, size=(n, p), dtype=np.uint8)
        # mostly finite values; some rows of zeros (exact-zero results) and cancellations
        clean = np.vectorize(lambda c: 0 if fmt.classify(int(c)) in ("snan", "qnan", "inf") else c)
        A, B = clean(A).astype(np.uint8), clean(B).astype(np.uint8)
        A[0] = 0
        if m > 2:
            A[1] = A[2] ^ (1 << 7) if fmt.signed else A[2]
        for variant in ("plain", "transposed", "nan"):
            a, b = A.view(dt), B.view(dt)
            if variant == "transposed":
                a, b = np.ascontiguousarray(a.T).T, np.asfortranarray(b)
            if variant == "nan":
                a = a.copy()
                nan = [c for c in range(256) if fmt.classify(c) in ("qnan", "snan")]
                a.view(np.uint8)[-1, -1] = nan[0] if nan else 0x7f
            for mode in MODES:
                for out in (None, np.float32, np.float64):
                    outs = []
                    for lv in (0, 2):
                        with level(lv), softfp8.rounding(mode), softfp8.collect_flags() as fl, \
                                np.errstate(all="ignore"):
                            r = softfp8.matmul(a, b, out_dtype=out)
                        outs.append((np.ascontiguousarray(r).tobytes(), int(fl.flags)))
                    assert outs[0] == outs[1], f"{name} {m}x{n}x{p} {variant} {mode} out={out}"
                    cases += 1
    assert cases == 4 * 3 * 6 * 3


# ---- the comparisons above really ran fast paths: each builds its tables ----

def _path_calls():
    e4 = softfp8.e4m3.dtype
    c8 = np.arange(256, dtype=np.uint8).view(e4)
    x32 = np.linspace(-500, 500, 70_000, dtype=np.float32)
    f16 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(softfp8.float16.dtype)
    m = np.full((8, 8), 0x38, dtype=np.uint8).view(e4)  # 1.0
    m16 = np.full((8, 8), 0x3C00, dtype=np.uint16).view(softfp8.float16.dtype)  # 1.0
    return {
        "binary8 ufunc": lambda: np.add(np.repeat(c8, 256), np.tile(c8, 256)),
        "unary": lambda: np.sqrt(c8),
        "cast 8-bit -> float32": lambda: c8.astype(np.float32),
        "cast float32 -> 8-bit": lambda: x32.astype(e4),
        "cast float64 -> 8-bit": lambda: x32.astype(np.float64).astype(e4),
        "sum": lambda: c8[c8 == c8].sum(),
        "fma": lambda: softfp8.fma(c8, c8, c8),
        "16-bit add": lambda: f16 + f16,
        "stochastic cast": lambda: _stochastic(x32, e4),
        "matmul (binary64 BLAS)": lambda: softfp8.matmul(m, m, out_dtype=np.float32),
        "matmul 16-bit (dgemm + Ziv)": lambda: np.matmul(m16, m16),
        "bits.add": lambda: sfb.add(softfp8.e4m3, np.arange(256) % 256, np.arange(256)[::-1]),
    }


def _stochastic(x, dt):
    with softfp8.rounding("stochastic", seed=1):
        return x.astype(dt)


@pytest.mark.parametrize("path", list(_path_calls()))
@isolated
def test_fast_path_engages(path):
    """Each fast path finds or builds its tables in eager mode, and looks up none with
    the fast paths off -- so the fast-vs-core comparisons compare different code.
    Counted by the cache's hits + builds, whatever earlier tests left in the cache."""
    call = _path_calls()[path]

    def used():
        st = _ext.fast_cache_stats()
        return st["hits"] + st["builds"], st["hits"] + st["misses"]

    with level(0), np.errstate(all="ignore"):
        before = used()
        call()
        assert used() == before, "fast-path tables looked up with the fast paths off"
    with level(2), np.errstate(all="ignore"):
        call()
    assert used()[0] > before[0], f"{path}: no fast-path table was found or built"


# ---- binary64 keys through binary32 (fast_simd.c, key64x8f); casts into E4M3 and
#      E5M2 take fast/cast64.c's arithmetic kernel, those into the unsigned UE4M3 the keys ----

@pytest.mark.parametrize("name", ["e4m3", "e5m2", "ue4m3"])
@isolated
def test_float64_key_blocks(name):
    """float64 -> 8-bit casts (nearest, stochastic) on blocks of 16 lanes of one kind each, so that
    the AVX-512 kernels take their binary32-conversion key on every block of ordinary lanes
    (exponents at the edges of binary32's normal range, every low-bit pattern class) and
    key64x8 on the others (tiny, subnormal, huge, NaN payloads); codes and each block's flags
    against the core."""
    fmt = getattr(softfp8, name)
    rng = np.random.default_rng(17)
    blocks = []
    for e in (1, 2, 895, 896, 897, 898, 1000, 1023, 1149, 1150, 1151, 1152, 2046):
        for low in (0, 1, 1 << 28, 1 << 29, (1 << 46) - 1, 1 << 45, 1 << 46):
            m = (rng.integers(0, 1 << 52, 16, dtype=np.uint64) & ~np.uint64((1 << 47) - 1)) | np.uint64(low)
            s = rng.integers(0, 2, 16, dtype=np.uint64) << np.uint64(63)
            blocks.append(s | (np.uint64(e) << np.uint64(52)) | (m & np.uint64((1 << 52) - 1)))
    for special in (0, 0x7FF << 52, (0x7FF << 52) | 1, (0x7FF << 52) | (1 << 51), 1, (1 << 52) - 1):
        blocks.append(np.full(16, special, dtype=np.uint64) | (rng.integers(0, 2, 16, dtype=np.uint64) << np.uint64(63)))
    x = np.concatenate(blocks).view(np.float64)

    def run(rounding, sat):
        """codes of the whole array, the flags of each block's call"""
        kw = dict(seed=5) if rounding == "stochastic" else {}
        codes, flags = [], []
        for k in range(0, x.size, 16):  # stochastic: each call its own stream, the same in both runs
            with softfp8.rounding(rounding, **kw), softfp8.saturation(sat), softfp8.collect_flags() as fl, \
                    np.errstate(all="ignore"):
                codes.append(x[k:k + 16].astype(fmt.dtype).view(np.uint8))
            flags.append(int(fl.flags))
        return np.concatenate(codes), np.array(flags)

    count = 0
    for rounding in ("nearest_even", "toward_zero", "upward", "stochastic"):
        for sat in (False, True):
            with fast_mode(0, SIMD_LEVELS[-1]):
                ref = run(rounding, sat)
            for simd in SIMD_LEVELS:
                with fast_mode(2, simd):
                    got = run(rounding, sat)
                assert np.array_equal(ref[0], got[0]) and np.array_equal(ref[1], got[1]), \
                    f"{name} {rounding} sat={sat} simd={simd}"
                count += x.size
    assert count == 4 * 2 * len(SIMD_LEVELS) * x.size


# ---- add / subtract / multiply of 8-bit formats under stochastic rounding ----

@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "hfp8_143", "hfp8_152"])
@isolated
def test_stochastic_arith8(name):
    """Every operand pair (NaN, infinity, zeros, subnormals included), two seeds, 32, 17, 12
    and 3 random bits (the AVX-512 kernel decides on the top 12 and leaves ties to the
    full table), both saturation settings, per-element flags, at every SIMD level
    (stochastic.c's sfp8f_run_arith_sr (run_arith8_sr): fast_simd.c's sfp8s_arith8_sr_avx512 or its loop)."""
    c = np.arange(256, dtype=np.uint32)
    count = _stochastic_arith_versus_core(getattr(softfp8, name), np.repeat(c, 256), np.tile(c, 256),
                                          (32, 17, 12, 3), False, (sfb.add, sfb.sub, sfb.mul, sfb.div))
    assert count == 4 * 16 * len(SIMD_LEVELS) * 65536


def _stochastic_arith_versus_core(fmt, a, b, nbits_list, both_tininess, fns=(sfb.add, sfb.sub, sfb.mul)):
    """fns (add / sub / mul, for 8-bit formats div too) of codes a, b under stochastic
    rounding, two seeds, the given random bits, both saturation settings (and tininess
    rules): every SIMD level against the core with the same seed; returns the number of
    elements compared."""
    count = 0
    for fn in fns:
        for seed, nbits, sat in itertools.product((1, 2**64 - 3), nbits_list, (False, True)):
            kw = dict(rounding="stochastic", seed=seed, sr_bits=nbits, saturate=sat)
            if both_tininess:
                kw["tininess"] = "before" if sat else "after"
            with fast_mode(0, SIMD_LEVELS[-1]):
                ref = fn(fmt, a, b, **kw)
            for simd in SIMD_LEVELS:
                with fast_mode(2, simd):
                    got = fn(fmt, a, b, **kw)
                count += _assert_same(ref, got, f"{fmt.name} {fn.__name__} seed={seed} sr_bits={nbits} sat={sat} "
                                                f"simd={simd}")
    return count


# ---- add / subtract / multiply of 16-bit formats under stochastic rounding ----

def _close_pairs(rng, fmt, n):
    """Operand pairs whose binary exponents differ by at most 3 (whole blocks of the
    binary32 kernel, fast_simd.c's sr16f_avx512: exact sums and products), centred per
    pair on 1, on the square roots of the smallest normal and of the largest finite
    value (products near 2^emin and near overflow), or near the top and the bottom
    exponent fields (sums that overflow or cancel below 2^emin); 0.5% of the operands
    replaced by uniform codes (NaN, infinity, zeros, subnormals inside such blocks)."""
    M, bias, top = fmt.man_bits, fmt.bias, (1 << fmt.exp_bits) - 2
    centres = np.array([bias, (bias + 1) // 2, bias + (top - bias) // 2, top - 3, 4])
    c = centres[rng.integers(0, len(centres), size=n)]
    pair = []
    for _ in range(2):
        e = np.clip(c + rng.integers(-3, 4, size=n), 1, top).astype(np.uint32)
        u = (e << M) | rng.integers(0, 1 << M, size=n, dtype=np.uint32)
        if fmt.signed:
            u |= (rng.random(n) < 0.5).astype(np.uint32) << (fmt.bits - 1)
        hit = rng.random(n) < 0.005
        u[hit] = rng.integers(0, 1 << fmt.bits, size=int(hit.sum()), dtype=np.uint32)
        pair.append(u)
    return pair


# SOFTFP8_SR16_RANDOM=k: k operand pairs of each of the three kinds per setting
# (default 40_000; 350_000 gives >= 10^6 elements per format, operation and setting)
SR16_RANDOM = int(os.environ.get("SOFTFP8_SR16_RANDOM") or 40_000)


@pytest.mark.parametrize("name", A16_NAMES)
@isolated
def test_stochastic_arith16(name):
    """add / sub / mul / div of random operand pairs (uniform codes with NaN, infinity, subnormals and pairs near
    max and min normal; narrow codes whose results are normal; close pairs, _close_pairs),
    two seeds, 32, 17 and 3 random bits, both saturation and tininess settings, per-element
    flags, at every SIMD level (stochastic.c's sfp8f_run_arith_sr (run_arith16_sr):
    fast_simd.c's sfp8s_arith16_sr_avx512 (sr16f_avx512 / sr16q_run / sr16d_avx512) or its loop),
    against the core with the same seed and element indices."""
    fmt = _fmt16(name)
    rng = np.random.default_rng(11)
    n = SR16_RANDOM
    ca, cb = _close_pairs(rng, fmt, n)
    a = np.concatenate([_special_biased_codes(rng, fmt, n), _narrow_codes(rng, fmt, n), ca])
    b = np.concatenate([_special_biased_codes(rng, fmt, n), _narrow_codes(rng, fmt, n), cb])
    count = _stochastic_arith_versus_core(fmt, a, b, (32, 17, 3), True, (sfb.add, sfb.sub, sfb.mul, sfb.div))
    assert count == 4 * 12 * len(SIMD_LEVELS) * 3 * n


# ---- stochastic divide and square root of 16-bit formats (fast_simd.c, sr16q_run: binary16 and
#      bfloat16 decoded by conversion, hfp16_169 / SHP / UHP arithmetically through binary32,
#      E3M12 through binary64) ----

def _fmt16q(name):
    return softfp8.format(exp_bits=3, man_bits=12, bias=3, name="e3m12") if name == "e3m12" else _fmt16(name)


@pytest.mark.parametrize("name", A16_NAMES + ["e3m12"])
@isolated
def test_stochastic_sqrt16(name):
    """sqrt of every code (and of every code again in a shuffled order, other random
    words) under stochastic rounding: two seeds, 32, 17 and 3 random bits, both
    saturation and tininess settings, per-element flags, at every SIMD level, against
    the core with the same seed and element indices."""
    fmt = _fmt16q(name)
    codes = np.arange(1 << fmt.bits, dtype=np.uint32)
    a = np.concatenate([codes, np.random.default_rng(12).permutation(codes)])
    count = _stochastic_arith_versus_core(fmt, a, a, (32, 17, 3), True, (lambda f, x, y, **kw: sfb.sqrt(f, x, **kw),))
    assert count == 12 * len(SIMD_LEVELS) * 2 * (1 << fmt.bits)


@isolated
def test_stochastic_div16_wide():
    """divide of E3M12 (12 fraction bits: 2M + N <= 52 for N = 17 and 3, the kernel's
    binary64 decoding a16_load512; N = 32 the loop) as test_stochastic_arith16."""
    fmt = _fmt16q("e3m12")
    rng = np.random.default_rng(13)
    n = SR16_RANDOM
    ca, cb = _close_pairs(rng, fmt, n)
    a = np.concatenate([_special_biased_codes(rng, fmt, n), _narrow_codes(rng, fmt, n), ca])
    b = np.concatenate([_special_biased_codes(rng, fmt, n), _narrow_codes(rng, fmt, n), cb])
    count = _stochastic_arith_versus_core(fmt, a, b, (32, 17, 3), True, (sfb.div,))
    assert count == 12 * len(SIMD_LEVELS) * 3 * n


_M64 = (1 << 64) - 1
_MIX = (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53)
_GOLD = 0x9E3779B97F4A7C15


def _mix64(z):  # rng.h sfp8r_mix64
    for c in _MIX:
        z ^= z >> 33
        z = (z * c) & _M64
    return z ^ (z >> 33)


def _unmix64(z):  # its inverse (x ^ x >> 33 is its own inverse on 64 bits)
    for c in reversed(_MIX):
        z ^= z >> 33
        z = (z * pow(c, -1, 1 << 64)) & _M64
    return z ^ (z >> 33)


def _index_with_word(seed, word):
    """An element index whose random word (rng.h sfp8r_bits, stream 0) is word: the
    generator's bijections undone."""
    seed_key = _mix64((seed + 0x94D049BB133111EB) & _M64)
    stream_key = 0x632BE59BD9B4E019
    h = _unmix64(_unmix64((word << 32) | 0x5EED) ^ seed_key)
    return ((h - stream_key) * pow(_GOLD, -1, 1 << 64)) & _M64


@isolated
def test_stochastic_sqrt16_grid_roots():
    """Square roots whose binary64 rounding d lies on the grid of 2^(E-M-N) that decides
    stochastic rounding (N = 32 random bits) while the root is not d: when the root is
    below d its kept bits K and fraction t are those of the binary64 number below d
    (fast_simd.c, sr16q_half), which changes the result only for one random word in
    2^32.  Each such code at lanes 3, 12 and 27 of a 32-element call whose element index
    gives that lane exactly that word (the generator inverted), so a kernel using d's
    K and t fails; against the core at every SIMD level.  E3M12: binary16 and bfloat16
    have no such root (their roots have at most 2^12 significands, the grid of 2^(E-M-32)
    catches none)."""
    fmt = _fmt16q("e3m12")
    M, N, seed = fmt.man_bits, 32, 2**64 - 3
    sh = 52 - M
    # the positive normal codes below the top exponent field, decoded from their fields
    codes = np.arange(1 << (M + fmt.exp_bits), dtype=np.uint32)
    e = (codes >> M).astype(np.int64)
    vals = np.ldexp(1.0 + (codes & ((1 << M) - 1)) / 2.0**M, e - fmt.bias)
    ok = (e > 0) & (e < (1 << fmt.exp_bits) - 1)
    d = np.sqrt(vals[ok])
    bits = d.view(np.uint64)
    on_grid = (bits & np.uint64((1 << (sh - N)) - 1)) == 0
    cases = []
    for c, x, root, b in zip(codes[ok][on_grid], vals[ok][on_grid], d[on_grid], bits[on_grid]):
        fx, fr = Fraction(float(x)), Fraction(float(root))
        if fr * fr == fx:
            continue  # an exact root
        below = fr * fr > fx  # the root is below d
        kb = int(b) - 1 if below else int(b)
        t = (kb & ((1 << sh) - 1)) >> (sh - N)
        cases.append((int(c), below, (1 << N) - 1 - t))  # the word at the rounding decision's edge
    assert (len(cases), sum(below for _, below, _ in cases)) == (93, 48)
    env = sfb._env(fmt, "stochastic", False, "after", N)
    op = sfb.OPERATIONS["sqrt"].id
    count = 0
    for c, below, word in cases:
        idx = _index_with_word(seed, word)
        assert _ext.random_u32(seed, 0, idx) == word
        x = np.full(32, c, dtype=np.uint16)
        for lane in (3, 12, 27):
            runs = [(0, SIMD_LEVELS[-1])] + [(2, s) for s in SIMD_LEVELS]
            res = []
            for lv, simd in runs:
                out, fl = np.empty(32, np.uint16), np.zeros(32, np.uint8)
                with fast_mode(lv, simd):
                    _ext.run(op, fmt.params, env, (1, seed, 0, (idx - lane) & _M64), None, (x,), out, fl)
                res.append((out, fl))
            for (out, fl), (lv, simd) in zip(res[1:], runs[1:]):
                count += _assert_same(res[0], (out, fl), f"{fmt.name} sqrt code {c:#x} lane {lane} simd={simd}")
    assert count == len(cases) * 3 * len(SIMD_LEVELS) * 32
