"""The BLAS paths of the matrix engine (softfp8/_core/mm/mm_blas.c; docs/matrix-engine.md):
softfp8.scaled_mm with per-tensor scales and softfp8.matmul of mixed formats, run by a
float64 GEMM with a per-element exactness certificate and Ziv's test, must give the codes
and flags of the engine's generic exact kernel (fast paths off) on random and adversarial
inputs, and the exact dot product of Python fractions rounded once.
"""
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import _ext, gemm
from softfp8._dtypes import format_of
from softfp8._formats import lookup

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")
OUTS = (np.float32, softfp8.e4m3.dtype, softfp8.e5m2.dtype, np.float16, "bfloat16")

pytestmark = pytest.mark.skipif(not _ext.fast_enabled(), reason="fast paths disabled")


def _core(a, b, sa, sb, out):
    """The generic exact kernel (fast paths off) on the same operands: (result, flags)."""
    tgt = gemm._target(out, "out", allow_float64=True)
    m, k = a.shape
    p = b.shape[1]
    s1 = gemm._scale(sa, "scale_a", m, k, 1, None)
    s2 = gemm._scale(sb, "scale_b", k, p, 0, None)
    res = np.empty((m, p), dtype=tgt.dtype)
    prev = _ext.set_fast(0)
    try:
        fl = gemm._run(a, b, res, format_of(a.dtype), format_of(b.dtype), None, tgt, 0,
                       s1[0], s1[1], s2[0], s2[1], 0)
    finally:
        _ext.set_fast(prev)
    return res, fl


def _fast(a, b, sa, sb, out):
    with softfp8.collect_flags() as col:
        r = softfp8.scaled_mm(a, b, sa, sb, out_dtype=out)
    return r, int(col.flags)


def _bits(r):
    return r.view(np.uint8 if r.dtype.itemsize == 1 else np.uint16 if r.dtype.itemsize == 2
                  else np.uint32)


def _same(a, b, sa, sb, out, mode):
    with softfp8.rounding(mode):
        r1, f1 = _core(a, b, sa, sb, out)
        r2, f2 = _fast(a, b, sa, sb, out)
    assert np.array_equal(_bits(r1), _bits(r2)), (mode, out, np.argwhere(_bits(r1) != _bits(r2))[:3])
    assert f1 == f2, (mode, out, softfp8.Flags(f1), softfp8.Flags(f2))


def _codes(rng, shape, fmt, spread):
    """Values of fmt spread over 2^-spread .. 2^spread around 1, random signs."""
    x = rng.standard_normal(shape) * np.exp2(rng.uniform(-spread, spread, shape))
    return np.clip(x, -fmt.max, fmt.max).astype(fmt.dtype)


def _operands(rng, case):
    """Operand pairs: random, huge dynamic range, cancellation, signed zero rows."""
    fa = (softfp8.e4m3, softfp8.e5m2)[case % 2]
    fb = (softfp8.e5m2, softfp8.e4m3, softfp8.e5m2, softfp8.e4m3)[case % 4]
    m, k, p = (int(v) for v in rng.integers(1, 24, 3))
    kind = case % 6
    if kind == 4:
        k = max(k, 12)
    if kind == 2:
        k = 2 * max(k // 2, 1)
    a = _codes(rng, (m, k), fa, 2 if kind == 0 else 12)
    b = _codes(rng, (k, p), fb, 2 if kind == 0 else 20)
    if kind == 2:     # cancellation: the second half of the products cancels the first
        h = k // 2
        a[:, h:] = a[:, :h]
        b[h:] = -b[:h].astype(np.float64).astype(fb.dtype)
    if kind == 3:     # signed zeros: whole zero rows / columns of either sign
        a[rng.random(m) < 0.5] = np.float64(-0.0)
        b[:, rng.random(p) < 0.3] = 0.0
        a[rng.random((m, k)) < 0.3] = 0.0
    if kind == 4:     # the extremes of both formats in one dot product: element (0, 0)
        a[0, :10], a[0, 10] = fa.max, fa.min_subnormal      # fails the exactness test
        b[:10, 0], b[10, 0] = -fb.max, fb.min_subnormal
        a.flat[rng.integers(0, a.size, 3)] = fa.max
        b.flat[rng.integers(0, b.size, 3)] = fb.min_subnormal
    if kind == 5:     # every code; NaN and infinity only in every other case
        a = rng.integers(0, 256, (m, k), dtype=np.uint8).view(fa.dtype)
        b = rng.integers(0, 256, (k, p), dtype=np.uint8).view(fb.dtype)
        if case % 4 < 2:
            with np.errstate(invalid="ignore"):     # signalling NaN codes
                a[~np.isfinite(a.astype(np.float64))] = 0.0
                b[~np.isfinite(b.astype(np.float64))] = 0.0
    return a, b


SCALES = [(1.0, 1.0), (0.37, 3.1), (2.0 ** 60, 2.0 ** 60), (2.0 ** -60, 2.0 ** -60),
          (2.0 ** -70, 2.0 ** -70), (2.0 ** 100, 2.0 ** 100), (1e-40, 1.0), (3e38, 7.0)]


@pytest.mark.parametrize("case", range(48))
def test_blas_path_equals_accumulator(case):
    rng = np.random.default_rng(1000 + case)
    a, b = _operands(rng, case)
    n = 0
    for sa, sb in SCALES[:3] + [SCALES[3 + case % 5]]:
        sa, sb = np.float32(sa), np.float32(sb)
        for out in OUTS:
            for mode in MODES:
                _same(a, b, sa, sb, out, mode)
                n += 1
    assert n == 4 * len(OUTS) * len(MODES)


def test_nan_and_inf_inputs():
    rng = np.random.default_rng(7)
    a, b = _codes(rng, (9, 17), softfp8.e4m3, 3), _codes(rng, (17, 5), softfp8.e5m2, 3)
    for put in ("nan_a", "inf_b", "both"):
        aa, bb = a.copy(), b.copy()
        if put in ("nan_a", "both"):
            aa[2, 3] = np.nan
        if put in ("inf_b", "both"):
            bb[4, 1] = -np.inf
            bb[5, 1] = np.inf
        for mode in MODES:
            _same(aa, bb, np.float32(0.5), np.float32(3.0), np.float32, mode)


def test_16bit_operands():
    rng = np.random.default_rng(3)
    bf, f16 = lookup("bfloat16"), lookup("float16")
    a = _codes(rng, (11, 40), bf, 30)
    b = _codes(rng, (40, 7), f16, 6)
    b[:20] = -b[20:].astype(np.float64).astype(f16.dtype)
    for mode in MODES:
        _same(a, b, np.float32(1.5), np.float32(0.75), np.float32, mode)


def _round_f32_rne(x: Fraction) -> np.float32:
    """x rounded to nearest-even float32 (finite, normal range), from Fractions only."""
    f = np.float32(float(x))
    cands = {f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))}
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - x),
                                     int(np.array(c).view(np.uint32)) & 1))
    return best


def test_equals_fractions():
    """An independent reference: exact dot products of the decoded values (ml_dtypes'
    decoding when installed, else softfp8's) as Fractions, times RN_f32(sa * sb), rounded
    once to float32 (nearest even)."""
    rng = np.random.default_rng(11)
    n = 0
    for case in range(6):
        a, b = _codes(rng, (7, 33), softfp8.e4m3, 5), _codes(rng, (33, 6), softfp8.e5m2, 9)
        sa, sb = np.float32(rng.uniform(0.01, 100)), np.float32(rng.uniform(0.01, 100))
        with softfp8.rounding("nearest_even"):
            got = softfp8.scaled_mm(a, b, sa, sb)
        s = Fraction(float(np.float32(float(sa) * float(sb))))
        try:
            import ml_dtypes
            av = a.view(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
            bv = b.view(np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float64)
        except ImportError:
            av, bv = a.astype(np.float64), b.astype(np.float64)
        for i in range(7):
            for j in range(6):
                exact = sum(Fraction(float(av[i, l])) * Fraction(float(bv[l, j]))
                            for l in range(33)) * s
                if exact != 0:
                    assert got[i, j] == _round_f32_rne(exact), (case, i, j)
                    n += 1
    assert n > 200


def _paths(call):
    """{path name: calls} of the matrix engine's fast paths during call()."""
    _ext.reset_matrix_path_counts()
    call()
    out = {}
    for (name, _level), n in _ext.matrix_path_counts().items():
        out[name] = out.get(name, 0) + n
    return {k: v for k, v in out.items() if v}


def test_blas_path_is_taken():
    """One call of the BLAS path finishes every element: those failing the exactness test
    by the integer kernel inside the same call, NaN / infinity rows by their special
    products (the engine's path counters, softfp8._ext.matrix_path_counts)."""
    rng = np.random.default_rng(5)
    a, b = _codes(rng, (64, 128), softfp8.e4m3, 2), _codes(rng, (128, 48), softfp8.e5m2, 2)
    run = lambda: softfp8.scaled_mm(a, b, np.float32(2.0), np.float32(0.5))   # noqa: E731
    assert _paths(run) == {"blas_ziv": 1}
    a[3] = 0.0                           # element (3, 7): twenty products +-448 * 57344 that
    a[3, 5:25] = softfp8.e4m3.max           # cancel, and 2^-9 * 2^-16: sum |a b| > 2^53 * 2^-25
    a[3, 25] = softfp8.e4m3.min_subnormal   # (no certificate), Ziv's interval holds 0 -> the
    b[5:15, 7] = softfp8.e5m2.max           # integer kernel
    b[15:25, 7] = -softfp8.e5m2.max
    b[25, 7] = softfp8.e5m2.min_subnormal
    assert _paths(run) == {"blas_ziv": 1, "int_dot": 1}
    want, wf = _core(a, b, np.float32(2.0), np.float32(0.5), np.float32)
    got, gf = _fast(a, b, np.float32(2.0), np.float32(0.5), np.float32)
    assert np.array_equal(_bits(got), _bits(want)) and gf == wf
    a[0, 0] = np.nan
    assert _paths(run) == {"blas_ziv": 1, "int_dot": 1}


def test_mixed_matmul_uses_it():
    rng = np.random.default_rng(9)
    a, b = _codes(rng, (3, 10, 20), softfp8.e4m3, 6), _codes(rng, (20, 8), softfp8.e5m2, 6)
    for mode in MODES:
        with softfp8.rounding(mode):
            with softfp8.collect_flags() as c1:
                got = softfp8.matmul(a, b)
            ref, fl = [], 0
            for t in range(3):
                r, f = _core(a[t], b, np.float32(1), np.float32(1), np.float32)
                ref.append(r)
                fl |= f
        assert np.array_equal(_bits(got), _bits(np.stack(ref))) and int(c1.flags) == fl


@pytest.mark.parametrize("case", range(12))
def test_tininess_and_saturation_near_the_limits(case):
    """Results around binary32's smallest normal and largest finite numbers (and E4M3's),
    with tininess detected before and after rounding and saturation on and off."""
    rng = np.random.default_rng(2000 + case)
    a, b = _operands(rng, case)
    # scale products putting typical sums near 2^-126 (float32 underflow) / near the max
    for sa, sb in ((2.0 ** -63, 2.0 ** -62), (2.0 ** -64, 1.5 * 2.0 ** -62),
                   (2.0 ** 60, 2.0 ** 62), (2.0 ** -8, 2.0 ** -9)):
        for tin in ("before", "after"):
            for sat in (True, False):
                with softfp8.tininess(tin), softfp8.saturation(sat):
                    for out in (np.float32, softfp8.e4m3.dtype, np.float16):
                        for mode in ("nearest_even", "upward", "toward_zero"):
                            _same(a, b, np.float32(sa), np.float32(sb), out, mode)


def test_rounds_up_to_the_smallest_normal():
    """Sums whose scaled value lies just below 2^-126 and rounds up to it in binary32:
    tiny before rounding (underflow with tininess "before"), not after.  The operands are
    searched for (two products each, the scale chosen from the sum) so that the case
    really occurs; checked in both tininess modes against the accumulator."""
    rng = np.random.default_rng(42)
    e4, e5 = softfp8.e4m3, softfp8.e5m2
    tiny = Fraction(2) ** -126
    found = 0
    for _ in range(4000):
        a = _codes(rng, (1, 2), e4, 4)
        b = _codes(rng, (2, 1), e5, 8)
        d = sum(Fraction(float(a[0, l])) * Fraction(float(b[l, 0])) for l in range(2))
        if d <= 0:
            continue
        s = np.float32(float(tiny / d))
        for _ in range(3):
            y = d * Fraction(float(s))
            if tiny - Fraction(2) ** -151 < y < tiny:     # rounds up even at 24 bits
                break
            s = np.nextafter(s, np.float32(np.inf) if y < tiny else np.float32(0))
        else:
            continue
        sa = np.float32(2.0 ** -63)
        sb = np.float32(float(s) * 2.0 ** 63)      # sa * sb == s exactly
        for tin in ("before", "after"):
            with softfp8.tininess(tin):
                _same(a, b, sa, sb, np.float32, "nearest_even")
                with softfp8.rounding("nearest_even"), softfp8.collect_flags() as col:
                    r = softfp8.scaled_mm(a, b, sa, sb)
            assert r[0, 0] == np.float32(2.0 ** -126)
            assert bool(col.flags & softfp8.Flags.UNDERFLOW) == (tin == "before")
        found += 1
    assert found >= 5


def _mid_operands(u, v, neg):
    """One dot product of three E4M3 x E5M2 products: 2^23 + u/2 + v 2^-24 (a 48-bit sum),
    negated if neg (sb = -b)."""
    a = np.array([[256.0, u, v * 2.0 ** -9]]).astype(softfp8.e4m3.dtype)
    b = np.array([[2.0 ** 15], [0.5], [2.0 ** -15]]) * (-1.0 if neg else 1.0)
    return a, _lanes(b.astype(softfp8.e5m2.dtype))


def _lanes(b):
    """b's column in 7 of 9 columns, zero columns at 2 and 7: the finisher's vector lanes
    (4 at a time) with and without a lane left to the general code, and a scalar tail."""
    cols = [b[:, :1]] * 9
    cols[2] = cols[7] = np.zeros_like(b[:, :1])
    return np.concatenate(cols, axis=1)


def _is_f32_midpoint(y):
    m, e = np.frexp(abs(y))          # |y| = m 2^e, m in [0.5, 1): binary32 keeps 24 bits
    t = Fraction(float(m)) * 2 ** 25
    return t.denominator == 1 and t.numerator % 2 == 1


def test_binary32_midpoints_decided_by_the_product_error():
    """sum * scale whose binary64 rounding y is exactly a binary32 midpoint while the exact
    value is not (the finisher's fma error decides the direction), positive and negative,
    scaled to 2^23, to binary32's top binade and next to its smallest normal, in every
    mode: codes and flags equal to the accumulator and to Fractions rounded once."""
    found = {}
    for u in [u for u in range(-8, 9) if u]:
        for v in range(-7, 8):
            for w in range(-30, 30):
                s1 = 1.0 + w * 2.0 ** (-23 if w > 0 else -24)    # binary32 numbers near 1
                for neg in (False, True):
                    a, b = _mid_operands(u, v, neg)
                    x = sum(Fraction(float(a[0, l])) * Fraction(float(b[l, 0])) for l in range(3))
                    xs = x * Fraction(s1)
                    y = float(xs)
                    if xs == y or not _is_f32_midpoint(y):
                        continue
                    even = Fraction(float(np.float32(y)))     # ties-to-even of y
                    f = np.float32(y)
                    other = np.nextafter(f, np.float32(np.inf if float(f) < y else -np.inf))
                    lo, hi = sorted((Fraction(float(f)), Fraction(float(other))))
                    exact = hi if xs > y else lo            # y is a midpoint: xs's side decides
                    key = (neg, xs > y, even == exact)
                    found[key] = found.get(key, 0) + 1
                    if found[key] > 4:
                        continue
                    for t, (pa, pb) in enumerate(((0, 0), (100, -26), (-120, -28))):
                        sa = np.float32(s1 * 2.0 ** pa)
                        sb = np.float32(2.0 ** pb)
                        r, _ = _fast(a, b, sa, sb, np.float32)
                        want = exact * Fraction(2) ** (pa + pb)
                        if t < 2:                       # normal results: exactly `want`
                            for col in (0, 1, 3, 4, 5, 6, 8):
                                assert Fraction(float(r[0, col])) == want, (u, v, w, neg, t, col)
                        for mode in MODES:
                            _same(a, b, sa, sb, np.float32, mode)
    # both signs, both sides of the midpoint, the tie's even neighbour right and wrong
    assert len(found) == 8 and min(found.values()) >= 1, found


def test_binary32_limits_exactly():
    """Sums scaled exactly onto binary32's largest finite number and smallest normal, and
    one ulp either side, in every mode and both signs."""
    a = np.array([[256.0, 1.0]]).astype(softfp8.e4m3.dtype)
    cases = 0
    for sign in (1.0, -1.0):
        for lowb in (-0.5, 0.5, -0.25):
            b = _lanes((sign * np.array([[2.0 ** 15], [lowb]])).astype(softfp8.e5m2.dtype))
            for sa, sb in ((2.0 ** 60, 2.0 ** 45), (2.0 ** 60, 2.0 ** 44), (2.0 ** -60, 2.0 ** -89),
                           (2.0 ** -60, 2.0 ** -88), (2.0 ** -60, 2.0 ** -90)):
                for mode in MODES:
                    _same(a, b, np.float32(sa), np.float32(sb), np.float32, mode)
                    cases += 1
    assert cases == 2 * 3 * 5 * len(MODES)
