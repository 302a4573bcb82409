"""The matrix engine (softfp8/_core/mm/, docs/matrix-engine.md): its registered paths, the
BLAS routines it is handed, regression cases of the defects the differential search
found (issue 21), and a fixed slice of that search (tests/numpy_glue/mm_diffsearch.py:
every fast path against the generic kernel, codes and flags).

Expected values come from the exact reference (tests/models/rational.py, Python
Fractions) or from NumPy's binary64 arithmetic where it is exact; "fast == generic"
comparisons run the engine with fast paths off (``_ext.set_fast(0)``) as the other side.
"""
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import _ext

from ..models import rational as ref
from . import mm_diffsearch

MODES = ref.MODES
LEVELS = tuple(range(_ext.simd_level() + 1))
PATHS = ("blas_bound", "blas_ziv", "int_dot", "model_f32", "model_odd", "model_fma16", "block_fma", "orders")


def raw(r):
    r = np.asarray(r)
    return r.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[r.dtype.itemsize])


def run(call, fast=1, simd=None, blas=None):
    """(result, flags, {path: calls}) of call() with the fast paths at `fast`."""
    pf = _ext.set_fast(fast)
    ps = _ext.set_simd(_ext.simd_level() if simd is None else simd)
    pb = _ext.set_blas(blas)["previous"] if blas else None
    _ext.reset_matrix_path_counts()
    try:
        with softfp8.collect_flags() as fl, np.errstate(all="ignore"):
            r = call()
    finally:
        _ext.set_fast(pf)
        _ext.set_simd(ps)
        if pb:
            _ext.set_blas(pb)
    paths = {}
    for (name, _lv), n in _ext.matrix_path_counts().items():
        if n:
            paths[name] = paths.get(name, 0) + n
    return r, int(fl.flags), paths


def same(call, **kw):
    """call() with fast paths on equals the generic kernel: returns (result, flags, paths)."""
    want, wf, _ = run(call, fast=0)
    got, gf, paths = run(call, **kw)
    assert np.array_equal(raw(got), raw(want)), np.argwhere(raw(got) != raw(want))[:5]
    assert gf == wf, (softfp8.Flags(gf), softfp8.Flags(wf))
    return got, gf, paths


# --------------------------------------------------------------------------
# the registry
# --------------------------------------------------------------------------

def test_registry():
    reg = _ext.matrix_paths()
    assert tuple(p["name"] for p in reg) == PATHS
    for p in reg:
        assert 0 in p["levels"] and set(p["levels"]) <= {0, 1, 2} and p["what"]
    counts = _ext.matrix_path_counts()
    assert set(counts) == {(n, lv) for n in PATHS for lv in range(3)}
    _ext.reset_matrix_path_counts()
    assert not any(_ext.matrix_path_counts().values())


def _calls():
    """One call per registered path, built so that path runs (and only the generic kernel
    otherwise); sizes past the model kernels' gate of 65,536 multiply-adds."""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((48, 70)) * 4).astype(np.float32)
    y = (rng.standard_normal((70, 40)) * 4).astype(np.float32)
    a8, b8, b5 = x.astype(softfp8.e4m3), y.astype(softfp8.e4m3), y.astype(softfp8.e5m2)
    a5 = x.astype(softfp8.e5m2)
    big_a, big_b = np.tile(a8, (1, 10)), np.tile(b5, (10, 1))   # 48 x 700 x 40
    acc = softfp8.Accumulation
    return {
        "blas_bound": lambda: a8 @ b8,
        "blas_ziv": lambda: a5 @ b5,
        "int_dot": lambda: softfp8.scaled_mm(a8, b5, np.full((48, 1), 3.0, np.float32), 0.5),
        "model_f32": lambda: softfp8.matmul(big_a, big_b, accumulation=acc()),
        # (a float32 accumulator rounded upward is model_f32's at level 1: mm_model.c f32_directed)
        "model_odd": lambda: softfp8.matmul(big_a, big_b, accumulation=acc(accumulator=np.float32,
                                                                            rounding="nearest_away")),
        "model_fma16": lambda: softfp8.matmul(big_a, big_b, accumulation=acc(accumulator="float16")),
        "block_fma": lambda: softfp8.matmul(a8, b8, out_dtype=np.float32, accumulation=acc.profile("h100")),
        "orders": lambda: softfp8.matmul(big_a, big_b, out_dtype=np.float32,
                                         accumulation=acc(accumulator=np.float32, order="kahan")),
    }


@pytest.mark.parametrize("name", PATHS)
def test_each_path_runs_and_equals_the_generic_kernel(name):
    """Each path, at every SIMD level it has its own kernels for (and the machine has),
    runs on its call and gives the generic kernel's codes and flags."""
    call = _calls()[name]
    levels = next(p["levels"] for p in _ext.matrix_paths() if p["name"] == name)
    for lv in LEVELS:
        _, _, paths = same(call, simd=lv)
        assert paths.get(name) == 1, (name, lv, paths)
        counts = _ext.matrix_path_counts()
        want = max(x for x in levels if x <= lv)
        assert counts[(name, want)] == 1, (name, lv, {k: v for k, v in counts.items() if v})


def test_fast_off_runs_no_path():
    for name, call in _calls().items():
        assert run(call, fast=0)[2] == {}, name


# --------------------------------------------------------------------------
# the BLAS routines
# --------------------------------------------------------------------------

def test_blas_routines_agree():
    """NumPy's OpenBLAS dgemm called by symbol, the numpy.matmul callback and no BLAS
    give the same codes and flags (float16 and E5M2 through the certificate and Ziv's test,
    E4M3 through the format bound)."""
    info = _ext.blas_info()
    assert info["using"] in ("native", "numpy")
    modes = ["numpy", "none"] + (["native"] if info["native_symbol"] else [])
    rng = np.random.default_rng(8)
    for fmt in (softfp8.float16, softfp8.e5m2, softfp8.e4m3):
        a = (rng.standard_normal((33, 70)) * 8).astype(np.float32).astype(fmt.dtype)
        b = (rng.standard_normal((70, 65)) * 8).astype(np.float32).astype(fmt.dtype)
        results = [run(lambda: a @ b, blas=m) for m in modes]
        for r, f, _ in results[1:]:
            assert np.array_equal(raw(r), raw(results[0][0])) and f == results[0][1], fmt
        assert results[1][2] == {} or set(results[1][2]) <= {"int_dot"}   # 'none': no BLAS path
    with pytest.raises(ValueError, match="'none', 'numpy'"):
        _ext.set_blas("mkl")


# --------------------------------------------------------------------------
# regression cases of the issue-21 defects
# --------------------------------------------------------------------------

def test_scaled_mm_model_with_a_scale_that_is_not_a_power_of_two():
    """Issue 21, defect 1: scaled_mm with an accumulation model returned garbage for scales
    that are not powers of two on calls of 65,536 multiply-adds or more (a 53-bit
    significand times a 24-bit scale overflowed 64 bits)."""
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 8, (64, 64)).astype(np.float32).astype(softfp8.e4m3)
    b = rng.integers(-8, 8, (64, 16)).astype(np.float32).astype(softfp8.e4m3)
    acc = softfp8.Accumulation(accumulator=np.float32)
    for sa in (0.3, 0.1, 1 / 3, 3.0, 1e-20, 7e30):
        s = np.float32(sa)
        call = lambda: softfp8.scaled_mm(a, b, s, np.float32(1.0), out_dtype=np.float32, accumulation=acc)  # noqa
        got, _, paths = same(call)
        assert paths == {"model_f32": 1}
        # integer sums below 2^12 are exact in binary32; S * s exact in binary64; one rounding
        S = a.astype(np.float64) @ b.astype(np.float64)
        assert np.array_equal(got, (S * np.float64(s)).astype(np.float32)), sa


def test_mixed_formats_codes_above_the_width_and_extreme_biases():
    """Issue 21, defect 2: mixed-format softfp8.matmul on BLAS raised IndexError for storage
    codes above the width and OverflowError for biases near +-2^20; the engine computes
    (bits above the width ignored, as the core reads codes)."""
    rng = np.random.default_rng(1)
    f12 = softfp8.format(exp_bits=5, man_bits=6, bias=15)            # 12 bits in uint16
    codes = rng.integers(0, 1 << 12, (9, 20))
    high = codes | (rng.integers(0, 16, codes.shape) << 12)
    a_clean = codes.astype(np.uint16).view(f12.dtype)
    a_high = high.astype(np.uint16).view(f12.dtype)
    b = (rng.standard_normal((20, 7))).astype(np.float32).astype(softfp8.e5m2)
    for out in (np.float32, np.float64, softfp8.e4m3):
        want = run(lambda: softfp8.matmul(a_clean, b, out_dtype=out), fast=0)
        got, gf, paths = same(lambda: softfp8.matmul(a_high, b, out_dtype=out))
        assert np.array_equal(raw(got), raw(want[0])) and gf == want[1]
    for bias in (2 ** 20, -(2 ** 20), 2 ** 20 - 5):
        fx = softfp8.format(exp_bits=4, man_bits=3, bias=bias)
        ax = rng.integers(0, 256, (5, 12)).astype(np.uint8).view(fx.dtype)
        for out in (np.float32, np.float64, softfp8.e5m2):
            same(lambda: softfp8.matmul(ax, b[:12], out_dtype=out))


def test_dgemm_overflow_never_decides_a_result():
    """Issue 21, defect 3: an 8-bit FNUZ-style format with Tesla subnormals and values near
    2^520 -- products past binary64's range -- gave NaN / -inf from the dgemm where the
    exact sum is +inf; the BLAS paths now check the formats' ranges."""
    f = softfp8.format(exp_bits=4, man_bits=3, bias=-505, specials="fnuz", subnormals="tesla")
    fr = ref.make_format(4, 3, -505, "fnuz", "tesla")
    big, mid = 0x7F, 0x30                      # the largest value (~2^520.9), 2^511
    assert ref.decode(fr, mid).value == Fraction(2) ** 511
    a = np.array([[big] + [mid | 0x80] * 40], np.uint8).view(f.dtype)
    b = np.array([[big] + [mid] * 40], np.uint8).T.copy().view(f.dtype)
    exact = ref.decode(fr, big).value ** 2 - 40 * Fraction(2) ** 1022
    assert exact > 0
    for out, rf in ((np.float64, ref.FLOAT64), (np.float32, ref.FLOAT32)):
        got, flags, _ = same(lambda: softfp8.matmul(a, b, out_dtype=out))
        code, fl = ref.round_pack(rf, 0, exact)
        assert int(raw(got)[0, 0]) == code and flags == fl


def test_exact_accumulator_infinity_sign_without_negative_zero():
    """The exact kernel's infinity of a product with one negative operand in a P3109 format
    (no -0: the sign bit of the zero code is the NaN) is -inf, not +inf."""
    f = softfp8.p3109.format(8, 3, domain="extended")
    fr = ref.make_format(f.exp_bits, f.man_bits, f.bias, f.specials, f.subnormals, f.signed, f.saturate)
    codes = [c for c in range(256) if ref.decode(fr, c).kind == "inf"]
    pinf = next(c for c in codes if not ref.decode(fr, c).sign)
    one = next(c for c in range(256) if ref.decode(fr, c).kind == "finite" and ref.decode(fr, c).value == -1)
    a = np.array([[pinf, 0]], np.uint8).view(f.dtype)
    b = np.array([[one], [one]], np.uint8).view(f.dtype)
    for out in (None, np.float32):
        got, _, _ = same(lambda: a @ b if out is None else softfp8.matmul(a, b, out_dtype=out))
        v = got.astype(np.float64) if out is None else got
        assert np.isneginf(v).all(), got


@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.e5m2, softfp8.bfloat16])
def test_zero_sums_on_blas(fmt):
    """Zero sums on the BLAS paths (blas_bound for E4M3, blas_ziv otherwise; rows wholly
    certified and rounded straight, and element by element): zero rows and columns of +0,
    of -0 and of both, products that are all zeros in non-zero lines, cancellations, in
    every mode and with 64+ and fewer columns -- the generic kernel's signs and flags."""
    rng = np.random.default_rng(13)
    one, mone = np.float32(1.0).astype(fmt.dtype), np.float32(-1.0).astype(fmt.dtype)
    pz, nz = np.float32(0.0).astype(fmt.dtype), np.float32(-0.0).astype(fmt.dtype)
    for p in (70, 9):
        a = (rng.standard_normal((12, 16)) * 2).astype(np.float32).astype(fmt.dtype)
        b = (rng.standard_normal((16, p)) * 2).astype(np.float32).astype(fmt.dtype)
        a[0], a[1], a[2] = pz, nz, np.where(rng.random(16) < 0.5, pz, nz)
        b[:, 0], b[:, 1], b[:, 2] = pz, nz, np.where(rng.random(16) < 0.5, pz, nz)
        a[3, :8], a[3, 8:], b[:8, 3], b[8:, 3] = one, pz, nz, one      # zero products, non-zero lines
        a[4, :8], a[4, 8:], b[:8, 4], b[8:, 4] = one, mone, one, one  # a cancellation
        for mode in MODES:
            def call():
                with softfp8.rounding(mode):
                    return softfp8.matmul(a, b, out_dtype=np.float32)
            # fast=2: tables built eagerly, so the bfloat16 decode table of these short calls
            # (840 outputs, below the 65,536 / 16 gate) does not depend on what the cache holds
            got, _, paths = same(call, fast=2)
            assert set(paths) <= {"blas_bound", "blas_ziv", "int_dot"} and len(paths) >= 1
            assert np.signbit(got[1, 0]) and not np.signbit(got[0, 0]) and np.signbit(got[0, 1])
            assert np.signbit(got[4, 4]) == (mode == "downward")


def test_certificate_statistics_stay_normal():
    """Mixed formats whose products are binary64 numbers but one of whose sums of squares
    underflows (values near 2^-600): the certificate's norm bound would be 0 and certify a
    rounded sum (found by the differential search, case 13:2025); such formats take the exact
    kernels, whose results are the exact dot products rounded once."""
    tiny = softfp8.format(exp_bits=5, man_bits=8, bias=620)
    rng = np.random.default_rng(2025)
    a = (rng.standard_normal((5, 32)) * 8).astype(np.float32).astype(softfp8.bfloat16.dtype)
    b = rng.integers(0x100, 0x400, (32, 7))              # values near 2^-619 and 2^-589:
    b[1::2] += 0x1B00                                      # sums of 60+ bits, inexact
    b = b.astype(np.uint16).view(tiny.dtype)
    fa, fb = ref.preset("bfloat16"), ref.make_format(5, 8, 620)
    for mode in ("to_odd", "upward", "toward_zero"):
        def call():
            with softfp8.rounding(mode):
                return softfp8.matmul(a, b, out_dtype=np.float64)
        got, flags, paths = same(call, fast=2)   # eager: the 14-bit format's tables are built
        assert "blas_ziv" not in paths and flags & ref.INEXACT
        for i, j in ((0, 0), (4, 6)):
            ex = sum(ref.decode(fa, int(a.view(np.uint16)[i, l])).value *
                     ref.decode(fb, int(b.view(np.uint16)[l, j])).value for l in range(32))
            assert int(raw(got)[i, j]) == ref.round_pack(ref.FLOAT64, 0, ex, mode)[0]


def test_outputs_beyond_binary64():
    """Outputs in formats whose values lie beyond binary64's range (biases near +-2^20):
    every sum overflows (or underflows) there, the core's conversion of the certified sums
    says so, and Ziv's test is off -- it would accept codes whose binary64 value is 0 or
    infinite with inexact alone (search cases 14:1538, 14:2888)."""
    rng = np.random.default_rng(14)
    a = (rng.standard_normal((9, 96)) * 8).astype(np.float32).astype(softfp8.e5m2)
    b = (rng.standard_normal((96, 70)) * 8).astype(np.float32).astype(softfp8.e5m2fnuz)
    # every row and column from 2^-17 to 2^15: no certificate, Ziv's test decides
    a[:, 0], a[:, 1] = softfp8.e5m2.max, softfp8.e5m2.min_subnormal
    b[2], b[3] = softfp8.e5m2fnuz.max, softfp8.e5m2fnuz.min_subnormal
    outs = [(softfp8.format(exp_bits=9, man_bits=2, bias=2 ** 20 - 5, specials="fn"), ref.OVERFLOW),
            (softfp8.format(exp_bits=4, man_bits=7, bias=-(2 ** 20), specials="fn", subnormals="nozero",
                            saturate=True), ref.UNDERFLOW)]
    for out, flag in outs:
        for mode in ("to_odd", "nearest_away", "upward"):
            def call():
                with softfp8.rounding(mode), softfp8.tininess("before"):
                    return softfp8.matmul(a, b, out_dtype=out)
            _, flags, paths = same(call)
            assert paths.get("blas_ziv") == 1 and flags & flag, (out, mode, paths)


def test_model_kernels_need_normal_binary64_products():
    """Operand formats each in the model kernels' range whose products are not (values near
    2^-540: products near 2^-1080, below binary64's subnormals) take the generic kernel:
    the product table would hold zeros (found by the differential search, case 12:285)."""
    f = softfp8.format(exp_bits=4, man_bits=3, bias=540)
    rng = np.random.default_rng(12)
    a = rng.integers(0x08, 0x70, (6, 40)).astype(np.uint8).view(f.dtype)
    b = rng.integers(0x08, 0x70, (40, 5)).astype(np.uint8).view(f.dtype)
    for acc in ("float32", "float16", softfp8.e5m2):
        got, flags, paths = same(lambda: softfp8.matmul(a, b, out_dtype=np.float32,
                                                        accumulation=softfp8.Accumulation(accumulator=acc)), fast=2)
        assert paths == {} and flags & ref.UNDERFLOW and not np.asarray(got).any()


# --------------------------------------------------------------------------
# the derived roundings of the BLAS paths
# --------------------------------------------------------------------------

def _bf16_row(value):
    """bfloat16-exact pieces (8 significant bits each) summing to the integer `value`."""
    parts, v, sh = [], int(value), 0
    while v:
        if v & 0xFF:
            parts.append(float(v & 0xFF) * 2.0 ** sh)
        v >>= 8
        sh += 8
    return np.array(parts, np.float64)


def _near_midpoints(p):
    """(c, M) for the grid of p significant bits on [1, 2): M = 1 + (2m + 1) 2^-p a midpoint,
    s = 3 * 2^-54, c = (M 2^54 + eta) / 3 an integer below 2^53 with eta = -1, 0, +1 (one
    each): c s = M + eta 2^-54 -- for eta != 0 within half a binary64 ulp of M, so the
    binary64 product RN(c s) is M itself and only its error says which side c s is on."""
    out = {}
    for m in range(8):
        N = 2 ** 54 + (2 * m + 1) * 2 ** (54 - p)
        eta = {0: 0, 1: -1, 2: 1}[N % 3]
        out.setdefault(eta, ((N + eta) // 3, Fraction(N, 2 ** 54)))
    return [out[e] for e in (-1, 0, 1)]


OUTS = [(np.float32, ref.FLOAT32, 24), ("bfloat16", ref.preset("bfloat16"), 8),
        (np.float16, ref.preset("float16"), 11)]


@pytest.mark.parametrize("level", LEVELS)
def test_scales_of_any_value(level):
    """Exact sums c times a scale s of more than one significant bit with c s just below, at
    and just above a midpoint of the output's grid (_near_midpoints): the product rounded to
    odd (mm_odd_scale, DERIVED) then rounded once must give the exact reference's code and
    flags in every mode, at every SIMD level; rounding RN(c s) instead would tie."""
    count = 0
    s32 = np.float32(3 * 2.0 ** -54)
    for out, rf, prec in OUTS:
        for c, M in _near_midpoints(prec):
            row = _bf16_row(c)
            a = row[None, :].astype(np.float32).astype(softfp8.bfloat16.dtype)
            b = np.ones((row.size, 1), np.float32).astype(softfp8.bfloat16.dtype)
            assert int(a.astype(np.float64).sum()) == c and c < 2 ** 53
            assert Fraction(float(c) * float(s32)) == M    # the binary64 product: the midpoint
            for mode in MODES:
                def call():
                    with softfp8.rounding(mode):
                        return softfp8.scaled_mm(a, b, s32, np.float32(1.0), out_dtype=out)
                got, flags, paths = run(call, fast=2, simd=level)   # eager: whatever the table cache holds
                assert paths == {"blas_ziv": 1}, paths
                code, fl = ref.round_pack(rf, 0, Fraction(c) * Fraction(float(s32)), mode)
                assert int(raw(got)[0, 0]) == code, (out, c, mode)
                assert flags == fl, (out, c, mode, softfp8.Flags(flags), softfp8.Flags(fl))
                count += 1
    assert count == 3 * 3 * 6


@pytest.mark.parametrize("level", LEVELS)
def test_binary32_results_near_the_limits(level):
    """Certified sums rounded to binary32 by the hardware conversion (AVX-512) or the
    rounder, with scale pairs putting typical sums on both sides of 2^-126 and of the
    largest binary32, in every mode: vectors of 8 and the scalar tail (11 columns)."""
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((13, 9)) * 4).astype(np.float16).view(softfp8.float16.dtype)
    b = (rng.standard_normal((9, 11)) * 4).astype(np.float16).view(softfp8.float16.dtype)
    for sa, sb in ((2.0 ** -63, 2.0 ** -64), (2.0 ** 60, 2.0 ** 64), (2.0 ** -75, 2.0 ** -52)):
        for mode in MODES:
            def call():
                with softfp8.rounding(mode):
                    return softfp8.scaled_mm(a, b, np.float32(sa), np.float32(sb), out_dtype=np.float32)
            assert same(call, fast=2, simd=level)[2] == {"blas_ziv": 1}


# --------------------------------------------------------------------------
# block products and stochastic outputs
# --------------------------------------------------------------------------

def test_k_blocked_exact_products_zero_signs_and_modes():
    """K-blocked scales (MX-style, 1 x 4 tiles of a): the integer kernel against the
    generic kernel -- exact zero sums from cancellation across blocks and from -0 products,
    in every mode, and against the exact reference."""
    e4 = softfp8.e4m3
    fr = ref.preset("e4m3")
    a = np.array([[0x38, 0x38, 0x00, 0x00, 0xB8, 0xB8, 0x00, 0x00],     # 1 1 0 0 -1 -1 0 0
                  [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],     # -0 ...
                  [0x48, 0x01, 0x30, 0xC0, 0x3C, 0x5A, 0x11, 0x77]], np.uint8).view(e4.dtype)
    b = np.array([[0x38] * 8, [0x38] * 8, [0x40, 0x40, 0x3A, 0x3A, 0x38, 0x38, 0x50, 0x2C]],
                 np.uint8).T.copy().view(e4.dtype)   # 8 x 3
    sa = np.array([[2.0, 2.0], [1.0, 0.5], [0.25, 3.0]], np.float32)   # per 1 x 4 tile
    for mode in MODES:
        def call():
            with softfp8.rounding(mode):
                return softfp8.scaled_mm(a, b, sa, np.float32(1.0), out_dtype=np.float32, block_a=(1, 4))
        got, _, paths = same(call)
        assert paths == {"int_dot": 1}
        for i in range(3):
            for j in range(3):
                terms = [ref.decode(fr, int(a.view(np.uint8)[i, l])).value *
                         ref.decode(fr, int(b.view(np.uint8)[l, j])).value *
                         Fraction(float(sa[i, l // 4])) for l in range(8)]
                s = sum(terms)
                if s == 0:   # -0 only from every product -0 (row 1 times positive b), or downward
                    neg = i == 1 or (mode == "downward")
                    assert np.signbit(got[i, j]) == neg, (mode, i, j)
                else:
                    assert int(raw(got)[i, j]) == ref.round_pack(ref.FLOAT32, 0, s, mode)[0], (mode, i, j)


def test_stochastic_matmul_is_the_generic_kernel():
    """np.matmul under stochastic rounding: one random word per output in row-major order,
    the same with fast paths on (the generic kernel runs: no path claims it)."""
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((5, 30)) * 4).astype(np.float32).astype(softfp8.e4m3)
    b = (rng.standard_normal((30, 6)) * 4).astype(np.float32).astype(softfp8.e4m3)

    def call():
        with softfp8.rounding("stochastic", seed=11):
            return np.stack([a @ b, a @ b])
    got, _, paths = same(call)
    assert paths == {} and not np.array_equal(raw(got[0]), raw(got[1]))


# --------------------------------------------------------------------------
# the differential search, a fixed slice
# --------------------------------------------------------------------------

def test_differential_search_slice():
    """160 cases of tests/numpy_glue/mm_diffsearch.py (seed 21): no disagreement."""
    found, n = mm_diffsearch.search(21, 160)
    assert n == 160 and not found, "\n".join(found)
