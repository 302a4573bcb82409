"""Stochastic conversions between formats (a source of at most 16 bits into an
8-bit format): stochastic.c's sfp8f_run_conv_sr through a table built from the
core (ts by a binary search over the random word, checked at both words).

Every source code, two seeds, 32 / 17 / 12 / 3 random bits (the AVX-512 kernel
decides on the top 12 bits and leaves ties to the full table), both saturation
and tininess settings, per-element flags, at every SIMD level, against the core
(fast paths off) with the same seed and element indices; and the same calls
through NumPy casts under every calling convention."""

import itertools

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb

from .test_fast_paths import SIMD_LEVELS, fast_mode, isolated
from .test_fast_layouts import N, check_stochastic_casts

DSTS = ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "hfp8_143", "hfp8_152"]
PAIRS = ([("bfloat16", d) for d in DSTS] + [("float16", d) for d in ("e4m3", "e5m2", "e4m3fnuz")] +
         [("hfp16_169", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e4m3fnuz", "e4m3")])


def _fmt(name):
    return getattr(softfp8, name)


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{s}-{d}" for s, d in PAIRS])
@isolated
def test_stochastic_convert_every_code(src, dst):
    s, d = _fmt(src), _fmt(dst)
    codes = np.arange(1 << s.bits, dtype=np.uint32).astype(s.storage)
    count = 0
    for seed, nbits, sat, tin in itertools.product((1, 2**64 - 3), (32, 17, 12, 3), (False, True),
                                                   ("after", "before")):
        kw = dict(rounding="stochastic", seed=seed, sr_bits=nbits, saturate=sat, tininess=tin)
        with fast_mode(0, SIMD_LEVELS[-1]):
            ref = sfb.convert(codes, s, d, **kw)
        for simd in SIMD_LEVELS:
            with fast_mode(2, simd):
                got = sfb.convert(codes, s, d, **kw)
            bad = np.flatnonzero((ref[0] != got[0]) | (ref[1] != got[1]))
            assert bad.size == 0, (f"{src}->{dst} seed={seed} sr_bits={nbits} sat={sat} tininess={tin} "
                                   f"simd={simd}: code {codes[bad[0]]:#x} core {ref[0][bad[0]]}/{ref[1][bad[0]]} "
                                   f"fast {got[0][bad[0]]}/{got[1][bad[0]]}")
            count += codes.size
    assert count == 2 * 4 * 2 * 2 * len(SIMD_LEVELS) * (1 << s.bits)


def test_stochastic_convert_rounds_both_ways():
    """The table really draws: a bfloat16 value between two E4M3 neighbours goes to
    both, in proportion to its distance (1.0625 lies half way from 1.0 to 1.125;
    1.09375 three quarters)."""
    x = np.full(200_000, 1.0625, dtype=np.float32).astype(softfp8.bfloat16.dtype)
    with softfp8.rounding("stochastic", seed=5):
        y = x.astype(softfp8.e4m3.dtype).astype(np.float64)
    assert set(np.unique(y)) == {1.0, 1.125}
    assert abs(float(np.mean(y == 1.125)) - 0.5) < 0.01
    x = np.full(200_000, 1.09375, dtype=np.float32).astype(softfp8.bfloat16.dtype)
    with softfp8.rounding("stochastic", seed=6):
        y = x.astype(softfp8.e4m3.dtype).astype(np.float64)
    assert abs(float(np.mean(y == 1.125)) - 0.75) < 0.01


@pytest.mark.parametrize("src,dst", [("bfloat16", "e4m3"), ("float16", "e5m2"), ("e4m3", "e5m2")],
                         ids=lambda v: v)
def test_stochastic_convert_layouts(src, dst):
    """The same conversions through NumPy casts under every calling convention (strided,
    reversed, zero-stride, unaligned, in-place copies) equal the core's, with the same seed."""
    s, d = _fmt(src), _fmt(dst)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1 << s.bits, size=N, dtype=np.uint32).astype(s.storage).view(s.dtype)
    n = check_stochastic_casts(x, d, buffered=True)
    assert n == (9 if s.bits > 8 else 8)  # cast_cases: ufunc out= only from float types, unaligned from two-byte codes


@isolated
def test_stochastic_convert_codes_above_width():
    """A 7-bit source's storage codes 128..255 read as code & 127, as by the core
    (through NumPy: softfp8.bits refuses codes above the width)."""
    s = softfp8.format(exp_bits=3, man_bits=3, bias=3, name="e3m3_srcv")
    codes = np.tile(np.arange(256, dtype=np.uint8), 64)

    def run(c):
        with softfp8.rounding("stochastic", seed=9, sr_bits=5):
            return c.view(s.dtype).astype(softfp8.e5m2.dtype).view(np.uint8)
    with fast_mode(0, SIMD_LEVELS[-1]):
        ref, low = run(codes), run(codes & 127)
    assert np.array_equal(ref, low)
    count = 0
    for simd in SIMD_LEVELS:
        with fast_mode(2, simd):
            assert np.array_equal(run(codes), ref), simd
        count += codes.size
    assert count == 256 * 64 * len(SIMD_LEVELS)


def _unary_layouts(uf, x, what, seed, nbits):
    """uf(x) under a seeded stochastic rounding through every calling convention of a
    unary ufunc (tests/fast/test_fast_layouts.py unary_cases), against the core;
    returns the number of cases."""
    from .test_fast_layouts import check, unary_cases
    n = 0
    for lab, fn in unary_cases(uf, x, False).items():
        def seeded(g, fn=fn):
            with softfp8.rounding("stochastic", seed=seed, sr_bits=nbits), np.errstate(all="ignore"):
                return fn(g)
        check(seeded, f"{what} stochastic {lab}", seed=n)
        n += 1
    return n


# ---- unary operations of 8-bit formats under stochastic rounding (T_SRUN tables) ----

UNARY = ["sqrt", "exp", "log", "tanh", "reciprocal", "square", "floor", "sin", "exp2", "cbrt", "arctan", "degrees"]


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "hfp8_143", "hfp8_152"])
@isolated
def test_stochastic_unary8_every_code(name):
    """Every code of the format through each unary operation: two seeds, 32 / 17 / 12 / 3
    random bits, both saturation and tininess settings, per-element flags, every SIMD
    level, against the core with the same seed."""
    f = _fmt(name)
    codes = np.arange(256, dtype=np.uint8)
    count = 0
    for op in UNARY:
        fn = getattr(sfb, op)
        for seed, nbits, sat, tin in itertools.product((1, 2**64 - 3), (32, 17, 12, 3), (False, True),
                                                       ("after", "before")):
            kw = dict(rounding="stochastic", seed=seed, sr_bits=nbits, saturate=sat, tininess=tin)
            with fast_mode(0, SIMD_LEVELS[-1]):
                ref = fn(f, codes, **kw)
            for simd in SIMD_LEVELS:
                with fast_mode(2, simd):
                    got = fn(f, codes, **kw)
                bad = np.flatnonzero((ref[0] != got[0]) | (ref[1] != got[1]))
                assert bad.size == 0, (f"{name} {op} seed={seed} sr_bits={nbits} sat={sat} tininess={tin} "
                                       f"simd={simd}: code {bad[0]:#x} core {ref[0][bad[0]]}/{ref[1][bad[0]]} "
                                       f"fast {got[0][bad[0]]}/{got[1][bad[0]]}")
                count += codes.size
    assert count == len(UNARY) * 2 * 4 * 2 * 2 * len(SIMD_LEVELS) * 256


@pytest.mark.parametrize("op", ["sqrt", "exp", "tanh"])
def test_stochastic_unary8_layouts(op):
    """np.sqrt / np.exp / np.tanh of E4M3 under a seeded stochastic rounding: every calling
    convention of a unary ufunc (strided, reversed, zero-stride, in place, out= aliasing,
    where=) against the core."""
    x = np.random.default_rng(4).integers(0, 256, size=N, dtype=np.uint8).view(softfp8.e4m3.dtype)
    assert _unary_layouts(getattr(np, op), x, f"e4m3 {op}", 3, 6) == 11


# ---- sqrt of 16-bit formats under stochastic rounding (stochastic.c sr16_one, sr16d_avx512 op 4) ----

def _fmt16(name):
    return softfp8.shp(bias=15) if name == "shp" else _fmt(name)


@pytest.mark.parametrize("name", ["float16", "bfloat16", "hfp16_169", "shp", "uhp"])
@isolated
def test_stochastic_sqrt16_every_code(name):
    """Every code (exact roots, subnormals, negative values, NaN, infinity included):
    two seeds, 32 / 17 / 3 random bits, saturation and tininess settings, per-element
    flags, every SIMD level, against the core with the same seed."""
    f = _fmt16(name)
    codes = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    count = 0
    for seed, nbits, (sat, tin) in itertools.product((1, 2**64 - 3), (32, 17, 3),
                                                     ((False, "after"), (True, "before"))):
        kw = dict(rounding="stochastic", seed=seed, sr_bits=nbits, saturate=sat, tininess=tin)
        with fast_mode(0, SIMD_LEVELS[-1]):
            ref = sfb.sqrt(f, codes, **kw)
        for simd in SIMD_LEVELS:
            with fast_mode(2, simd):
                got = sfb.sqrt(f, codes, **kw)
            bad = np.flatnonzero((ref[0] != got[0]) | (ref[1] != got[1]))
            assert bad.size == 0, (f"{name} sqrt seed={seed} sr_bits={nbits} sat={sat} simd={simd}: code "
                                   f"{bad[0]:#x} core {ref[0][bad[0]]}/{ref[1][bad[0]]} fast "
                                   f"{got[0][bad[0]]}/{got[1][bad[0]]}")
            count += codes.size
    assert count == 2 * 3 * 2 * len(SIMD_LEVELS) * 65536


def test_stochastic_sqrt16_layouts():
    """np.sqrt of bfloat16 under a seeded stochastic rounding, every calling convention of
    a unary ufunc, against the core."""
    x = np.abs(np.random.default_rng(8).standard_normal(N)).astype(softfp8.bfloat16.dtype)
    n = _unary_layouts(np.sqrt, x, "bfloat16 sqrt", 3, 20)
    assert n == 12  # unary_cases adds an unaligned operand for two-byte codes


# ---- into 16-bit formats: conversions and unary operations (stochastic.c sfp8f_srw tables,
#      run by the portable loop or the SIMD kernels fast_simd.c sfp8s_wide_sr_avx512 / _avx2) ----

# a 12-bit format: codes 4096..65535 of its uint16 storage lie above its width
E5M6 = softfp8.format(exp_bits=5, man_bits=6, bias=15, name="e5m6_srw")

WIDE = [("convert", "float16", "bfloat16"), ("convert", "bfloat16", "float16"), ("convert", "e5m2", "hfp16_169"),
        ("convert", "bfloat16", "e5m6"), ("convert", "e5m6", "float16"),
        ("exp", "bfloat16", None), ("tanh", "float16", None), ("log", "hfp16_169", None), ("exp", "e5m6", None),
        ("reciprocal", "uhp", None)]


def _fmtw(name):
    return E5M6 if name == "e5m6" else _fmt16(name)


@pytest.mark.parametrize("what,src,dst", WIDE, ids=[f"{w}-{s}-{d}" for w, s, d in WIDE])
@isolated
def test_stochastic_wide_every_code(what, src, dst):
    """Every source code: two seeds, 32 / 17 / 3 random bits, two saturation / tininess
    settings, per-element flags, against the core with the same seed, at every SIMD
    level (eager tables: the SIMD kernels run every call, 16 / 8 codes at a time, and
    the portable loop the tail)."""
    s = _fmtw(src)
    codes = np.arange(1 << s.bits, dtype=np.uint32).astype(s.storage)
    count = 0
    for seed, nbits, (sat, tin) in itertools.product((1, 2**64 - 3), (32, 17, 3),
                                                     ((False, "after"), (True, "before"))):
        kw = dict(rounding="stochastic", seed=seed, sr_bits=nbits, saturate=sat, tininess=tin)

        def run():
            if what == "convert":
                return sfb.convert(codes, s, _fmtw(dst), **kw)
            return getattr(sfb, what)(s, codes, **kw)
        with fast_mode(0, SIMD_LEVELS[-1]):
            ref = run()
        for simd in SIMD_LEVELS:
            with fast_mode(2, simd):
                got = run()
            bad = np.flatnonzero((ref[0] != got[0]) | (ref[1] != got[1]))
            assert bad.size == 0, (f"{what} {src}->{dst} seed={seed} sr_bits={nbits} sat={sat} simd={simd}: "
                                   f"code {codes[bad[0]]:#x} core {ref[0][bad[0]]}/{ref[1][bad[0]]} "
                                   f"fast {got[0][bad[0]]}/{got[1][bad[0]]}")
            count += codes.size
    assert count == 2 * 3 * 2 * len(SIMD_LEVELS) * (1 << s.bits)


def test_stochastic_wide_rounds_both_ways():
    """The kernels really draw: exp of a bfloat16 value whose exact exponential lies
    between two bfloat16 neighbours gives both, in proportion to its distance (the
    fraction from the lower neighbour computed with mpmath), at every SIMD level."""
    import mpmath
    x = np.full(100_003, 0.5, dtype=np.float32).astype(softfp8.bfloat16.dtype)
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(0.5))
        lo = mpmath.mpf(1.6484375)  # bfloat16 neighbours of e^0.5 = 1.6487...: ulp 2^-7
        frac = float((e - lo) / mpmath.mpf(2) ** -7)
    for simd in SIMD_LEVELS:
        with fast_mode(2, simd), softfp8.rounding("stochastic", seed=7):
            y = np.exp(x).astype(np.float64)
        assert set(np.unique(y)) == {1.6484375, 1.65625}, simd
        assert abs(float(np.mean(y == 1.65625)) - frac) < 0.01, simd


def test_stochastic_wide_layouts():
    """float16 -> bfloat16 and E5M2 -> bfloat16 casts and np.exp of bfloat16 under a seeded
    stochastic rounding, through NumPy's calling conventions (strided, reversed, zero
    stride, unaligned, in place, out= aliasing the input, where=), against the core."""
    rng = np.random.default_rng(12)
    h = rng.standard_normal(N).astype(np.float32).astype(softfp8.float16.dtype)
    assert check_stochastic_casts(h, softfp8.bfloat16, buffered=True) == 9
    e5 = rng.integers(0, 256, size=N, dtype=np.uint8).view(softfp8.e5m2.dtype)
    assert check_stochastic_casts(e5, softfp8.bfloat16, buffered=True) == 8
    assert _unary_layouts(np.exp, h.astype(softfp8.bfloat16.dtype), "bfloat16 exp", 4, 9) == 12
    assert _unary_layouts(np.tanh, h, "float16 tanh", 5, 32) == 12


@isolated
def test_stochastic_wide_codes_above_width():
    """Storage codes above a 12-bit format's width read as code & 4095, as by the core:
    np.exp of it and its casts into float16, every SIMD level, with the codes' order
    shuffled (every table entry, random offsets in the 16 / 8-lane blocks)."""
    codes = np.random.default_rng(13).permutation(np.arange(1 << 16, dtype=np.uint32)).astype(np.uint16)

    def run(c):
        with softfp8.rounding("stochastic", seed=9, sr_bits=11), np.errstate(all="ignore"):
            x = c.view(E5M6.dtype)
            return np.exp(x).view(np.uint16), x.astype(softfp8.float16.dtype).view(np.uint16)
    with fast_mode(0, SIMD_LEVELS[-1]):
        ref, low = run(codes), run(codes & 4095)
    assert all(np.array_equal(r, w) for r, w in zip(ref, low))
    count = 0
    for simd in SIMD_LEVELS:
        with fast_mode(2, simd):
            got = run(codes)
        for r, g in zip(ref, got):
            assert np.array_equal(g, r), simd
            count += g.size
    assert count == 2 * 65536 * len(SIMD_LEVELS)
