"""Stochastic rounding (SPEC.md section 3).

Expected values come from exact arithmetic in the tests (Fractions, value tables
built by tests.models.fraction_model, NumPy's own float16 decoding) -- never from softfp8.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import softfp8
import softfp8.bits as sb

from ..models import fraction_model as ref
from ..models.fraction_model import DENORMAL, INEXACT, INVALID, OVERFLOW, SPECS, UNDERFLOW


# random_bits is always given with the full result shape here: docs/python-api.md says it
# is "broadcast with the operands", but whether it may *enlarge* the result shape is not
# pinned down (the implementation broadcasts it to the operands' shape only).


def sr(x, fmt, **kw):
    codes, flags = sb.from_float(x, fmt, rounding="stochastic", **kw)
    return np.asarray(codes), np.asarray(flags)


def value_table(spec):
    """float64 value of every code (NaN for NaN codes), from the reference model."""
    return np.array([ref.decode_float(spec, c) for c in range(2 ** spec.bits)])


def positive_grid(spec):
    t = value_table(spec)
    t = t[np.isfinite(t) & (t >= 0)]
    return np.unique(t)


def check_neighbours(x, codes, spec, table=None):
    """Every result is the value itself (if exact) or one of its two neighbours."""
    table = value_table(spec) if table is None else table
    grid = positive_grid(spec)
    ax = np.abs(x.astype(np.float64)).ravel()
    y = table[codes.ravel().astype(np.int64)]
    i = np.searchsorted(grid, ax, side="right") - 1
    lo = grid[i]
    hi = grid[np.minimum(i + 1, len(grid) - 1)]
    ay = np.abs(y)
    exact = lo == ax
    ok = np.where(exact, ay == ax, (ay == lo) | (ay == hi))
    ok &= (np.signbit(y) == np.signbit(x.ravel())) | (ay == 0)
    assert ok.all(), f"{np.count_nonzero(~ok)} results are not a neighbour of their input"
    return (~exact) & (ay == hi)  # rounded up in magnitude


# ---------------------------------------------------------------------------
# (1) reproducibility and layout independence
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def x2d():
    rng = np.random.default_rng(7)
    return (rng.uniform(-8, 8, size=(300, 400))).astype(np.float32)


@pytest.mark.parametrize("name", ("e4m3", "float16", "cfloat8_152"))
def test_same_seed_same_result(x2d, name):
    fmt = softfp8.cfloat8_152(bias=12) if name == "cfloat8_152" else getattr(softfp8, name)
    spec = ref.tesla_spec("cfloat8_152", 12) if name == "cfloat8_152" else SPECS[name]
    c1, f1 = sr(x2d, fmt, seed=1234)
    c2, f2 = sr(x2d, fmt, seed=1234)
    assert c1.shape == x2d.shape == f1.shape
    assert np.array_equal(c1, c2) and np.array_equal(f1, f2)
    c3, _ = sr(x2d, fmt, seed=1235)
    assert not np.array_equal(c1, c3)  # the seed matters
    up = check_neighbours(x2d, c1, spec)
    assert 0.2 < up.mean() < 0.8  # both directions are taken


def test_layout_independence(x2d):
    fmt = softfp8.e4m3
    c, f = sr(x2d, fmt, seed=99)
    big = np.zeros((600, 1200), np.float32)
    big[::2, ::3] = x2d
    variants = {
        "fortran": np.asfortranarray(x2d),
        "transposed-copy": np.ascontiguousarray(x2d.T).T,
        "strided": big[::2, ::3],
        "reversed-twice": np.ascontiguousarray(x2d[::-1, ::-1])[::-1, ::-1],
    }
    for label, xv in variants.items():
        assert np.array_equal(xv, x2d)
        cv, fv = sr(xv, fmt, seed=99)
        assert cv.shape == c.shape
        assert np.array_equal(cv, c), label
        assert np.array_equal(fv, f), label
    # float64 input holding the same values: same exact values -> same result
    cv, fv = sr(x2d.astype(np.float64), fmt, seed=99)
    assert np.array_equal(cv, c)
    # flat C-order index is what matters: reshapes and prefixes agree
    cr, _ = sr(x2d.ravel(), fmt, seed=99)
    assert np.array_equal(cr, c.ravel())
    cr, _ = sr(x2d.reshape(600, 200), fmt, seed=99)
    assert np.array_equal(cr, c.reshape(600, 200))
    for k in (1, 100, 8191, 8192, 8193, 50000):
        cp, _ = sr(x2d.ravel()[:k], fmt, seed=99)
        assert np.array_equal(cp, c.ravel()[:k]), k
    cp, _ = sr(x2d[:100], fmt, seed=99)
    assert np.array_equal(cp, c[:100])


def test_bits_do_not_depend_on_values():
    """Element i's random bits depend on (seed, i) only: replacing other elements
    (e.g. by exact values, which need no randomness) does not change element i."""
    fmt = softfp8.e4m3
    n = 100_003
    x = np.full(n, 1.0 + 0.5 / 8, dtype=np.float64)  # halfway between 1.0 and 1.125
    c, _ = sr(x, fmt, seed=5)
    assert set(np.unique(c).tolist()) == {0x38, 0x39}
    rng = np.random.default_rng(1)
    mask = rng.random(n) < 0.5
    x2 = x.copy()
    x2[mask] = 2.0  # exact
    c2, f2 = sr(x2, fmt, seed=5)
    assert np.all(c2[mask] == 0x40) and np.all(f2[mask] == 0)
    assert np.array_equal(c2[~mask], c[~mask])
    # no periodicity at typical buffer sizes (a restarted counter would repeat)
    for period in (1024, 4096, 8192, 16384, 32768, 65536):
        assert not np.array_equal(c[:n - period], c[period:]), period
    # unseeded calls draw fresh seeds
    u1, _ = sr(x, fmt)
    u2, _ = sr(x, fmt)
    assert not np.array_equal(u1, u2)


def test_broadcast_layout_arithmetic():
    fmt = softfp8.e4m3
    spec = SPECS["e4m3"]
    rng = np.random.default_rng(3)
    # random finite non-NaN positive codes
    a = rng.integers(0x20, 0x50, size=(257, 1))  # 2^-3 .. 7.5: products stay finite
    b = rng.integers(0x20, 0x50, size=(1, 129))
    c1, f1 = sb.mul(fmt, a, b, rounding="stochastic", seed=77)
    c1, f1 = np.asarray(c1), np.asarray(f1)
    assert c1.shape == (257, 129)
    A = np.ascontiguousarray(np.broadcast_to(a, (257, 129)))
    B = np.asfortranarray(np.broadcast_to(b, (257, 129)))
    c2, f2 = sb.mul(fmt, A, B, rounding="stochastic", seed=77)
    assert np.array_equal(np.asarray(c2), c1) and np.array_equal(np.asarray(f2), f1)
    c3, f3 = sb.mul(fmt, A.ravel(), B.ravel(), rounding="stochastic", seed=77)
    assert np.array_equal(np.asarray(c3), c1.ravel())
    # results are neighbours of the exact products
    table = value_table(spec)
    exact = table[A] * table[B]  # exact in float64 (8 + 8 significant bits)
    check_neighbours(exact, c1, spec, table)


# ---------------------------------------------------------------------------
# (2) unbiased
# ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ("e4m3", "float16"))
def test_unbiased(name):
    fmt = getattr(softfp8, name)
    spec = SPECS[name]
    n = 10_000_000
    rng = np.random.default_rng(2025)
    e = rng.integers(-3, 4, size=n)
    x = (rng.uniform(1.0, 2.0, size=n) * np.exp2(e)).astype(np.float32)
    x[rng.random(n) < 0.5] *= -1
    del e
    negative = np.signbit(x)
    codes, flags = sr(x, fmt, seed=4242)
    assert codes.shape == (n,)
    if name == "float16":
        y = codes.astype(np.uint16).view(np.float16).astype(np.float64)  # NumPy decodes
    else:
        y = value_table(spec)[codes.astype(np.int64)]
    del codes
    xd = x.astype(np.float64)
    del x
    ex = np.frexp(xd)[1] - 1  # |x| in [2^ex, 2^(ex+1)), all normal in the target
    ulp = np.ldexp(1.0, ex - spec.M)
    del ex
    err = (y - xd) / ulp  # exact: y - x is exact in float64, ulp a power of two
    del y
    assert np.all(np.abs(err) < 1)
    f = np.abs(np.fmod(xd, ulp)) / ulp  # exact fraction f of the way up (in magnitude)
    del xd, ulp
    inexact = f != 0
    assert np.array_equal((flags & INEXACT) != 0, inexact)
    mean_err = err.mean()
    assert abs(mean_err) < 1e-3, f"{name}: mean error {mean_err} ulp"
    # rounded up in magnitude <=> |y| > |x| <=> the error has the sign of x
    rounded_up = inexact & np.where(negative, err < 0, err > 0)
    assert np.array_equal(np.abs(err[inexact]),
                          np.where(rounded_up, 1 - f, f)[inexact])  # moved by f or 1 - f
    # P(up | f) = f: check per bucket of f (a coin flip would pass the mean test)
    for lo in np.arange(0, 1, 0.1):
        sel = inexact & (f >= lo) & (f < lo + 0.1)
        assert sel.sum() > 100_000
        p = rounded_up[sel].mean()
        fm = f[sel].mean()
        assert abs(p - fm) < 0.01, f"{name}: f in [{lo:.1f}, {lo + 0.1:.1f}): P(up) {p} vs {fm}"


# ---------------------------------------------------------------------------
# (3) explicit random bits: exactly floor(f * 2^N) of the 2^N values of R round up
# ---------------------------------------------------------------------------


def _cases():
    e4 = SPECS["e4m3"]
    cases = []
    for k in (1, 77, 128, 200, 255):
        cases.append(("e4m3", e4, 1.0 + k / 256 / 8))  # f = k/256, dyadic
    for fr in (1 / 3, 0.7, 0.1, 0.999):
        cases.append(("e4m3", e4, 1.0 + fr / 8))  # non-dyadic f
    cases.append(("e4m3", e4, -(1.0 + 77 / 256 / 8)))
    cases.append(("e4m3", e4, 300.0))
    cases.append(("e5m2", SPECS["e5m2"], 3.0 + 1 / 3))
    cases.append(("float16", SPECS["float16"], 1.0 + 0.3 * 2.0 ** -10))
    cases.append(("bfloat16", SPECS["bfloat16"], -(2.0 ** 100) * (1 + 0.45 * 2.0 ** -7)))
    # Tesla gap: neighbours (7/8) 2^-5 and 2^-4 for cfloat8_143(bias=5)
    cases.append(("cfloat8_143(5)", ref.tesla_spec("cfloat8_143", 5), 101 / 2 ** 11))  # f = 5/8
    L, H = 7 / 8 * 2.0 ** -5, 2.0 ** -4
    cases.append(("cfloat8_143(5)", ref.tesla_spec("cfloat8_143", 5), L + (H - L) / 3))
    cases.append(("cfloat8_143(5)", ref.tesla_spec("cfloat8_143", 5), -(L + (H - L) * 0.9)))
    Ls, Hs = (1 - 2.0 ** -10) * 2.0 ** -20, 2.0 ** -19
    cases.append(("shp(20)", ref.tesla_spec("shp", 20), Ls + (Hs - Ls) * 0.37))
    # just below the smallest normal 2^-6: f = 3/4 on the subnormal grid but 1/2 on
    # the unbounded-exponent grid (which decides tininess-after, with the same R)
    cases.append(("e4m3", e4, 2.0 ** -6 - 2.0 ** -11))
    cases.append(("float16", SPECS["float16"], -(2.0 ** -14 - 2.0 ** -25 - 2.0 ** -27)))
    # below the smallest subnormal
    cases.append(("e4m3", e4, 0.3 * 2.0 ** -9))
    cases.append(("e4m3", e4, -0.8 * 2.0 ** -9))
    cases.append(("cfloat8_152(3)", ref.tesla_spec("cfloat8_152", 3), 0.6 * 2.0 ** -5))
    return cases


CASES = _cases()


def _format(label):
    if label.startswith(("cfloat8", "shp")):
        fam, bias = label.rstrip(")").split("(")
        return getattr(softfp8, fam)(bias=int(bias))
    return getattr(softfp8, label)


def _neighbours(spec, x):
    """(lower code, upper code, exact fraction f) of x, in magnitude."""
    s, m = ref.to_fraction(x)
    lo_code, _ = ref.round_value(spec, s, m, "toward_zero")
    up_code, _ = ref.round_value(spec, s, m, "upward" if s == 0 else "downward")
    lo = ref.decode(spec, lo_code)[2]
    up = ref.decode(spec, up_code)[2]
    assert lo < m < up
    return lo_code, up_code, (m - lo) / (up - lo)


@pytest.mark.parametrize("tininess", ("after", "before"))
@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0]}:{c[2]!r}" for c in CASES])
def test_random_bits_exact_count(case, tininess):
    label, spec, x = CASES[case]
    fmt = _format(label)
    lo_code, up_code, f = _neighbours(spec, x)
    total = 0
    rng = np.random.default_rng(case)
    for N in range(1, 9):
        R = np.arange(2 ** N, dtype=np.uint32)
        codes, flags = sr(np.full(R.shape, x), fmt, sr_bits=N, random_bits=R,
                          tininess=tininess)
        assert codes.shape == (2 ** N,)
        n_up = math.floor(f * 2 ** N)
        exp_codes = np.where(R >= 2 ** N - n_up, up_code, lo_code)
        assert np.array_equal(codes, exp_codes), (label, x, N, float(f), codes.tolist())
        assert int(np.count_nonzero(codes == up_code)) == n_up
        # flags: as the model says for each R (inexact, underflow where tiny)
        exp_flags = [ref.round_float(spec, x, "stochastic", sr_bits=N, R=int(r),
                                     tininess=tininess)[1] for r in R]
        assert flags.tolist() == exp_flags
        assert all(fl & INEXACT for fl in exp_flags)
        # high bits above the low N are ignored
        high = rng.integers(0, 2 ** 32, size=2 ** N, dtype=np.uint64).astype(np.uint32)
        R_hi = (high & np.uint32((0xFFFFFFFF << N) & 0xFFFFFFFF)) | R
        assert not np.array_equal(R_hi, R) or N == 32
        codes_hi, flags_hi = sr(np.full(2 ** N, x), fmt, sr_bits=N, random_bits=R_hi,
                                tininess=tininess)
        assert np.array_equal(codes_hi, codes) and np.array_equal(flags_hi, flags)
        total += 2 ** N
    assert total == 510


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0]}:{c[2]!r}" for c in CASES])
@pytest.mark.parametrize("N", (12, 16, 24, 31, 32))
def test_random_bits_threshold_wide(case, N):
    """For wide N: R = 2^N - floor(f 2^N) is the first value that rounds up."""
    label, spec, x = CASES[case]
    fmt = _format(label)
    lo_code, up_code, f = _neighbours(spec, x)
    n_up = math.floor(f * 2 ** N)
    thr = 2 ** N - n_up
    Rs = [r for r in (0, 1, thr - 2, thr - 1, thr, thr + 1, 2 ** N - 1) if 0 <= r < 2 ** N]
    R = np.array(Rs, dtype=np.uint32)
    codes, _ = sr(np.full(R.shape, x), fmt, sr_bits=N, random_bits=R)
    exp = [up_code if r >= thr else lo_code for r in Rs]
    assert codes.tolist() == exp, (label, x, N, Rs)
    # default sr_bits is 32
    if N == 32:
        codes32, _ = sr(np.full(R.shape, x), fmt, random_bits=R)
        assert codes32.tolist() == exp


def test_random_bits_arithmetic():
    fmt = softfp8.e4m3
    # 1.125 * 1.125 = 1.265625 = 1.25 + (1/8) * 0.125 -> f = 1/8 between 0x3A and 0x3B
    # 1.125 + 0.0625 (0x2C... 2^-4 = exp field 3 -> 0x18) = 1.1875 -> f = 1/2, 0x39/0x3A
    for N in range(1, 9):
        R = np.arange(2 ** N, dtype=np.uint32)
        c39 = np.full(R.shape, 0x39)
        codes, flags = sb.mul(fmt, c39, 0x39, rounding="stochastic", sr_bits=N, random_bits=R)
        codes = np.asarray(codes)
        assert codes.tolist() == [0x3B if r >= 2 ** N - (2 ** N // 8) else 0x3A for r in R]
        assert np.all(np.asarray(flags) == INEXACT)
        codes, flags = sb.add(fmt, c39, 0x18, rounding="stochastic", sr_bits=N, random_bits=R)
        assert np.asarray(codes).tolist() == [0x3A if r >= 2 ** (N - 1) else 0x39 for r in R]
        codes, flags = sb.fma(fmt, c39, 0x39, 0x00, rounding="stochastic", sr_bits=N,
                              random_bits=R)
        assert np.asarray(codes).tolist() == [0x3B if r >= 2 ** N - (2 ** N // 8) else 0x3A
                                              for r in R]


# ---------------------------------------------------------------------------
# (4) exact values, +-0, +-inf, NaN never change
# ---------------------------------------------------------------------------

EXACT_FORMATS = ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "hfp8_143", "float16", "bfloat16",
                 "uhp", "cfloat8_143(9)", "shp(40)")


@pytest.mark.parametrize("label", EXACT_FORMATS)
def test_exact_values_unchanged(label):
    fmt = _format(label)
    if label.startswith(("cfloat8", "shp")):
        fam, bias = label.rstrip(")").split("(")
        spec = ref.tesla_spec(fam, int(bias))
    else:
        spec = SPECS[label]
    codes = np.arange(2 ** spec.bits)
    cls = [ref.classify(spec, c) for c in codes]
    keep = np.array([k in ("zero", "sub", "normal", "inf") for k in cls])
    if spec.subnormals == "flush":
        keep &= np.array([k != "sub" for k in cls])
    codes = codes[keep]
    x = np.array([ref.decode_float(spec, c) for c in codes])
    n = 0
    for N, R in ((32, 0xFFFFFFFF), (32, 0), (1, 1), (7, 0x5A5A5A5A)):
        got, flags = sr(x, fmt, sr_bits=N, random_bits=np.uint32(R))
        assert np.array_equal(got, codes), label
        assert not flags.any()
        n += len(codes)
    got, flags = sr(x, fmt, seed=11)
    assert np.array_equal(got, codes) and not flags.any()
    assert n == 4 * len(codes) and len(codes) > 0


@pytest.mark.parametrize("name", ("e4m3", "e5m2", "e4m3fnuz", "float16", "bfloat16"))
def test_zero_inf_nan_unchanged(name):
    fmt = getattr(softfp8, name)
    spec = SPECS[name]
    sbit = 1 << (spec.bits - 1)
    x = np.array([0.0, -0.0, np.nan, -np.nan])
    for R in (0, 0xFFFFFFFF):
        codes, flags = sr(x, fmt, random_bits=np.uint32(R))
        assert codes[0] == 0
        assert codes[1] == (0 if spec.specials == "fnuz" else sbit)  # fnuz has no -0
        assert ref.is_nan(spec, int(codes[2])) and ref.is_nan(spec, int(codes[3]))
        assert not flags.any()
        if spec.specials == "ieee":
            codes, flags = sr(np.array([np.inf, -np.inf]), fmt, random_bits=np.uint32(R))
            inf = ref.inf_code(spec)
            assert codes.tolist() == [inf, inf | sbit] and not flags.any()
    # arithmetic: exact results are unchanged too (x + 0, x * 1)
    if spec.bits == 8:
        codes = np.array([c for c in range(256) if ref.classify(spec, c) in
                          ("zero", "sub", "normal", "inf")])
        one_code = ref.encode_finite(spec, 0, Fraction(1))
        got, flags = sb.mul(fmt, codes, one_code, rounding="stochastic",
                            random_bits=np.uint32(0xFFFFFFFF))
        assert np.array_equal(np.asarray(got), codes)
        subn = np.array([ref.classify(spec, c) == "sub" for c in codes])
        assert np.array_equal(np.asarray(flags), np.where(subn, DENORMAL, 0))
        got, flags = sb.add(fmt, codes, 0, rounding="stochastic", random_bits=np.uint32(0xFFFFFFFF))
        # x + (+0) = x except -0 + +0 = +0
        exp = np.where(codes == sbit, 0, codes)
        assert np.array_equal(np.asarray(got), exp)


# ---------------------------------------------------------------------------
# (5) below the smallest subnormal: between 0 and that subnormal
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("label,minsub", [("e4m3", 2.0 ** -9), ("e5m2", 2.0 ** -16),
                                          ("float16", 2.0 ** -24), ("cfloat8_143(5)", 2.0 ** -8),
                                          ("shp(3)", 2.0 ** -13)])
def test_below_smallest_subnormal(label, minsub):
    fmt = _format(label)
    bits = 16 if label in ("float16",) or label.startswith("shp") else 8
    sbit = 1 << (bits - 1)
    n = 200_000
    for frac in (0.25, 0.75, 2.0 ** -10):
        x = np.full(n, frac * minsub)
        codes, flags = sr(x, fmt, seed=31)
        assert set(np.unique(codes).tolist()) <= {0, 1}
        p = np.mean(codes == 1)
        assert abs(p - frac) < 0.006, (label, frac, p)
        assert np.all(flags == (UNDERFLOW | INEXACT))
        codes, flags = sr(-x, fmt, seed=31)
        assert set(np.unique(codes).tolist()) <= {sbit, sbit | 1}  # -0 or -minsub
        assert abs(np.mean(codes == (sbit | 1)) - frac) < 0.006
    # 2^-21 of the way up: R needs its top 21 of 32 bits set
    x = np.float64(2.0 ** -21 * minsub)
    R = np.array([0, 2 ** 32 - 2 ** 11 - 1, 2 ** 32 - 2 ** 11, 2 ** 32 - 1], dtype=np.uint32)
    x = np.full(R.shape, x)
    codes, _ = sr(x, fmt, random_bits=R)
    assert codes.tolist() == [0, 0, 1, 1]
    codes, _ = sr(x, fmt, sr_bits=8, random_bits=R)
    assert codes.tolist() == [0, 0, 0, 0]  # floor(2^-21 * 2^8) = 0: never up


@pytest.mark.parametrize("mode_R", (0, 0xFFFFFFFF))
def test_uhp_stochastic_flushes_tiny(mode_R):
    u = softfp8.uhp
    x = np.array([2.0 ** -31, 0.75 * 2.0 ** -30, 2.0 ** -40, -(2.0 ** -35)])
    codes, flags = sr(x, u, random_bits=np.uint32(mode_R))
    assert codes.tolist() == [0, 0, 0, 0]
    assert flags.tolist() == [UNDERFLOW | INEXACT] * 4
    # a negative value that rounds to something non-zero is NaN (invalid only)
    codes, flags = sr(np.array([-1.3]), u, random_bits=np.uint32(mode_R))
    assert codes.tolist() == [0xFE00] and flags.tolist() == [INVALID]


# ---------------------------------------------------------------------------
# (6) rounding up past max finite is an overflow, delivered as nearest does
# ---------------------------------------------------------------------------

OVF = [
    # label, x (f = 1/2 between max and the next grid point), saturate, code if up, if down
    ("e5m2", 61440.0, None, 0x7C, 0x7B),
    ("e5m2", -(61440.0), None, 0xFC, 0xFB),
    ("e5m2", 61440.0, True, 0x7B, 0x7B),
    ("e4m3", 464.0, None, 0x7F, 0x7E),
    ("e4m3", -464.0, None, 0xFF, 0xFE),
    ("e4m3", 464.0, False, 0x7F, 0x7E),
    ("e4m3", 464.0, True, 0x7E, 0x7E),
    ("e4m3", -464.0, True, 0xFE, 0xFE),
    ("e4m3fnuz", 248.0, None, 0x80, 0x7F),
    ("e4m3fnuz", -248.0, None, 0x80, 0xFF),
    ("float16", 65520.0, None, 0x7C00, 0x7BFF),
    ("float16", 65520.0, True, 0x7BFF, 0x7BFF),
    ("bfloat16", -float((2 - 2.0 ** -7 + 2.0 ** -8) * 2.0 ** 127), None, 0xFF80, 0xFF7F),
    ("cfloat8_143(7)", 496.0, None, 0x7F, 0x7F),
    ("cfloat8_143(7)", -496.0, False, 0xFF, 0xFF),
    ("uhp", (2 - 2.0 ** -11) * 2.0 ** 31, None, 0xFC00, 0xFBFF),
    ("hfp8_143", 3968.0, None, 0x7F, 0x7F),
]


@pytest.mark.parametrize("case", OVF, ids=[f"{c[0]}:{c[1]}:{c[2]}" for c in OVF])
def test_overflow(case):
    label, x, sat, c_up, c_down = case
    fmt = _format(label)
    R = np.array([0, 1], dtype=np.uint32)  # N = 1, f = 1/2: R = 1 rounds up
    codes, flags = sr(np.full(2, x), fmt, sr_bits=1, random_bits=R, saturate=sat)
    assert codes.tolist() == [c_down, c_up]
    assert flags.tolist() == [INEXACT, OVERFLOW | INEXACT]
    # the model agrees
    spec = (ref.tesla_spec("cfloat8_143", 7) if label.startswith("cfloat8")
            else SPECS[label])
    for r, c, fl in ((0, c_down, INEXACT), (1, c_up, OVERFLOW | INEXACT)):
        assert ref.round_float(spec, x, "stochastic", saturate=sat, sr_bits=1, R=r)[:2] == (c, fl)


def test_overflow_far_above_max():
    fmt = softfp8.e4m3
    for x, exp in ((1000.0, 0x7F), (-1000.0, 0xFF), (1e30, 0x7F)):
        codes, flags = sr(np.full(64, x), fmt, seed=3)
        assert np.all(codes == exp) and np.all(flags == OVERFLOW | INEXACT)
        codes, flags = sr(np.full(64, x), fmt, seed=3, saturate=True)
        assert np.all(codes == (exp & 0x80 | 0x7E)) and np.all(flags == OVERFLOW | INEXACT)
    codes, flags = sr(np.full(64, 1e6), softfp8.e5m2, seed=3)
    assert np.all(codes == 0x7C) and np.all(flags == OVERFLOW | INEXACT)
