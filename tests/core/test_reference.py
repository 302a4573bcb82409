"""Self-checks of tests/models/rational.py, independent of softfp8's C core.

* Berkeley TestFloat 3e vectors for float16 (every 20th line of every file),
* SPEC's worked examples and hand-checked special cases,
* a second, naive implementation of rounding (sorted value lists + Fractions) that
  round_pack must agree with on many random values in every 8-bit format,
* the vectorised ``Table`` delivery agrees with the scalar ``deliver``.
"""

import gzip
import os
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from ..models import rational as ref
from ..models.rational import (DENORMAL, DIVBYZERO, INEXACT, INVALID, OVERFLOW, UNDERFLOW)

HERE = Path(__file__).resolve().parent
VECTORS = Path(os.environ.get("SOFTFP8_VECTORS", HERE.parents[2] / "shared" / "vectors"))
TF_DIR = VECTORS / "testfloat-f16"

EIGHT_BIT = ref.eight_bit_formats()

# --------------------------------------------------------------------------
# TestFloat vectors
# --------------------------------------------------------------------------

TF_MODES = {"near_even": "nearest_even", "minMag": "toward_zero", "min": "downward",
            "max": "upward", "near_maxMag": "nearest_away", "odd": "to_odd"}
TF_FMT = {"f16": ref.preset("float16"), "bf16": ref.preset("bfloat16"),
          "f32": ref.FLOAT32, "f64": ref.FLOAT64}
TF_FUNCS = {
    # name: (number of operands, operand format, result format, reference callable)
    "f16_add": (2, "f16", "f16", ref.add),
    "f16_sub": (2, "f16", "f16", ref.sub),
    "f16_mul": (2, "f16", "f16", ref.mul),
    "f16_div": (2, "f16", "f16", ref.div),
    "f16_sqrt": (1, "f16", "f16", ref.sqrt),
    "f16_mulAdd": (3, "f16", "f16", ref.fma),
    "f32_to_f16": (1, "f32", "f16", None),
    "f64_to_f16": (1, "f64", "f16", None),
    "f16_to_f32": (1, "f16", "f32", None),
    "f32_to_bf16": (1, "f32", "bf16", None),
    "bf16_to_f32": (1, "bf16", "f32", None),
}
# full level-1 sets: number of lines per file (README)
TF_LINES = {"f16_add": 46464, "f16_sub": 46464, "f16_mul": 46464, "f16_div": 46464,
            "f16_mulAdd": 200000}
SAMPLE = 20


@pytest.mark.parametrize("func", sorted(TF_FUNCS))
def test_testfloat_vectors(func):
    if not TF_DIR.is_dir():
        pytest.skip("TestFloat vectors not found at %s (set SOFTFP8_VECTORS)" % TF_DIR)
    nops, sf, df, fn = TF_FUNCS[func]
    src, dst = TF_FMT[sf], TF_FMT[df]
    n = 0
    nfiles = 0
    bad = []
    for tfm, mode in TF_MODES.items():
        for tin in ("after", "before"):
            path = TF_DIR / ("%s_%s_%s.txt.gz" % (func, tfm, tin))
            assert path.is_file(), path
            nfiles += 1
            with gzip.open(path, "rt") as fh:
                lines = fh.read().split("\n")
            lines = [ln for ln in lines if ln.strip()]
            if func in TF_LINES:
                assert len(lines) == TF_LINES[func], (path, len(lines))
            assert len(lines) > 100
            for ln in lines[::SAMPLE]:
                parts = [int(p, 16) for p in ln.split()]
                ops, want, wflags = parts[:nops], parts[nops], parts[nops + 1]
                if fn is None:
                    got, gflags = ref.convert(src, dst, ops[0], mode, tininess=tin)
                else:
                    got, gflags = fn(dst, *ops, mode=mode, tininess=tin)
                gflags &= ~DENORMAL
                if ref.is_nan(dst, want):
                    ok = ref.is_nan(dst, got)
                else:
                    ok = got == want
                if not ok or gflags != wflags:
                    bad.append((path.name, ln, hex(got), hex(gflags)))
                n += 1
    assert nfiles == 12
    assert not bad, "%d mismatches, first: %r" % (len(bad), bad[:10])
    if func in TF_LINES:
        assert n == 12 * len(range(0, TF_LINES[func], SAMPLE))
    assert n >= 12 * 20


# --------------------------------------------------------------------------
# Format table
# --------------------------------------------------------------------------

def test_table_max_values_match_spec():
    for name in ref.PRESET_TABLE:
        assert ref.preset(name).max_value == ref.SPEC_MAX[name], name
    n = 0
    for fam in ref.FAMILY_TABLE:
        for b in range(64):
            f = ref.family(fam, b)
            assert f.max_value == ref.SPEC_FAMILY_MAX[fam](b)
            assert f.min_normal == Fraction(2) ** (1 - b)
            assert f.min_subnormal == Fraction(2) ** (-b - f.man_bits)   # tesla: 2^-bias * 0.m
            assert ref.family(fam, b, "ieee").min_subnormal == Fraction(2) ** (1 - b - f.man_bits)
            n += 1
    assert n == 3 * 64
    for bad in (-1, 64, 1.0, True, "3"):
        with pytest.raises(ValueError):
            ref.cfloat8_143(bad)


def test_decode_examples():
    e4m3, e5m2 = ref.preset("e4m3"), ref.preset("e5m2")
    assert ref.decode(e4m3, 0x7E).value == 448
    assert ref.decode(e4m3, 0x7F).kind == "nan" and ref.decode(e4m3, 0xFF).kind == "nan"
    assert ref.decode(e4m3, 0x78).value == 256          # top binade is finite in fn
    assert ref.decode(e4m3, 0x01).value == Fraction(1, 512)
    assert ref.decode(e4m3, 0x80).kind == "zero" and ref.decode(e4m3, 0x80).sign == 1
    assert ref.decode(e5m2, 0x7C).kind == "inf" and ref.decode(e5m2, 0xFC).sign == 1
    assert ref.decode(e5m2, 0x7D).kind == "nan" and not ref.decode(e5m2, 0x7D).quiet
    assert ref.decode(e5m2, 0x7E).quiet
    fz = ref.preset("e4m3fnuz")
    assert ref.decode(fz, 0x80).kind == "nan"
    assert ref.decode(fz, 0x7F).value == 240
    assert ref.decode(fz, 0xFF).value == -240
    uhp = ref.preset("uhp")
    assert ref.decode(uhp, 0xFC00).kind == "inf"
    assert ref.decode(uhp, 0xFE00).kind == "nan"
    assert ref.decode(uhp, 0x0001).kind == "zero" and ref.decode(uhp, 1).subnormal   # flushed
    assert ref.decode(uhp, 0x0400).value == Fraction(1, 2 ** 30)
    c = ref.cfloat8_143(7)
    assert ref.decode(c, 0x01).value == Fraction(1, 2 ** 10)        # 2^-7 * 0.001
    assert ref.decode(c, 0x07).value == Fraction(7, 2 ** 10)
    assert ref.decode(c, 0x08).value == Fraction(1, 2 ** 6)         # gap (7/1024, 16/1024)
    assert ref.decode(c, 0x7F).value == Fraction(15, 8) * 2 ** 8
    assert ref.decode(c, 0xFF).value == -Fraction(15, 8) * 2 ** 8
    ci = ref.cfloat8_143(7, "ieee")
    assert ref.decode(ci, 0x07).value == Fraction(14, 2 ** 10)
    h = ref.preset("hfp8_143")
    assert ref.decode(h, 0x7F).value == 3840
    assert ref.decode(h, 0x01).value == Fraction(1, 2 ** 6)


# --------------------------------------------------------------------------
# SPEC worked examples and special cases
# --------------------------------------------------------------------------

def test_spec_e4m3_overflow_example():
    e4m3 = ref.preset("e4m3")
    assert ref.round_pack(e4m3, 0, 464) == (0x7E, INEXACT)
    assert ref.round_pack(e4m3, 0, 465) == (0x7F, OVERFLOW | INEXACT)
    assert ref.round_pack(e4m3, 1, 465) == (0xFF, OVERFLOW | INEXACT)
    assert ref.round_pack(e4m3, 0, 465, saturate=True) == (0x7E, OVERFLOW | INEXACT)
    assert ref.round_pack(e4m3, 0, 465, "toward_zero") == (0x7E, INEXACT)   # truncates to 448
    assert ref.round_pack(e4m3, 0, 465, "downward") == (0x7E, INEXACT)
    assert ref.round_pack(e4m3, 0, 481, "toward_zero") == (0x7E, OVERFLOW | INEXACT)
    assert ref.round_pack(e4m3, 1, 465, "downward") == (0xFF, OVERFLOW | INEXACT)
    assert ref.round_pack(e4m3, 0, 449, "upward") == (0x7F, OVERFLOW | INEXACT)
    assert ref.round_pack(e4m3, 0, 449, "toward_zero") == (0x7E, INEXACT)
    # to_odd: truncate to 448 (even code 0x7E), set the last bit -> 480 > max: overflow
    assert ref.round_pack(e4m3, 0, 449, "to_odd") == (0x7E, OVERFLOW | INEXACT)
    e5m2 = ref.preset("e5m2")
    assert ref.round_pack(e5m2, 0, 61440) == (0x7C, OVERFLOW | INEXACT)
    assert ref.round_pack(e5m2, 0, 61439) == (0x7B, INEXACT)
    assert ref.round_pack(e5m2, 1, 10 ** 6, "upward") == (0xFB, OVERFLOW | INEXACT)
    fz = ref.preset("e4m3fnuz")
    assert ref.round_pack(fz, 0, 10 ** 6) == (0x80, OVERFLOW | INEXACT)
    assert ref.round_pack(fz, 1, 10 ** 6, saturate=True) == (0xFF, OVERFLOW | INEXACT)
    c = ref.cfloat8_143(7)
    assert ref.round_pack(c, 1, 10 ** 6, saturate=False) == (0xFF, OVERFLOW | INEXACT)


def test_tesla_gap_rounding():
    c = ref.cfloat8_143(7)          # subnormals k/1024, k=1..7; smallest normal 16/1024
    u = Fraction(1, 1024)
    assert ref.round_pack(c, 0, 7 * u) == (0x07, 0)
    assert ref.round_pack(c, 0, Fraction(23, 2) * u) == (0x08, UNDERFLOW | INEXACT)  # tie: even code
    assert ref.round_pack(c, 0, Fraction(23, 2) * u, "to_odd") == (0x07, UNDERFLOW | INEXACT)
    assert ref.round_pack(c, 0, Fraction(23, 2) * u, "nearest_away") == (0x08, UNDERFLOW | INEXACT)
    assert ref.round_pack(c, 0, 11 * u) == (0x07, UNDERFLOW | INEXACT)
    assert ref.round_pack(c, 0, 12 * u) == (0x08, UNDERFLOW | INEXACT)
    assert ref.round_pack(c, 1, 12 * u, "downward") == (0x88, UNDERFLOW | INEXACT)
    assert ref.round_pack(c, 1, 12 * u, "upward") == (0x87, UNDERFLOW | INEXACT)
    # just below 2^-6: rounds to 2^-6 on the unbounded grid too -> not tiny after rounding
    x = 16 * u - Fraction(1, 2 ** 20)
    assert ref.round_pack(c, 0, x) == (0x08, INEXACT)
    assert ref.round_pack(c, 0, x, tininess_before=True) == (0x08, UNDERFLOW | INEXACT)
    # stochastic in the gap: f = (x - 7u) / (9u)
    x = 10 * u                      # f = 1/3
    th = (2 ** 32) // 3             # floor(f * 2^32)
    assert ref.round_pack(c, 0, x, "stochastic", R=2 ** 32 - th - 1)[0] == 0x07
    assert ref.round_pack(c, 0, x, "stochastic", R=2 ** 32 - th)[0] == 0x08
    assert ref.round_pack(c, 0, x, "stochastic", R=2 ** 32 - 1, N=1)[0] == 0x07   # floor(f*2)=0
    assert ref.round_pack(c, 0, x, "stochastic", R=0)[0] == 0x07


def test_stochastic_basics():
    e4m3 = ref.preset("e4m3")
    # 1 + 1/32 lies 1/4 of the way from 1 (0x38) to 1.125 (0x39)
    x = 1 + Fraction(1, 32)
    assert ref.round_pack(e4m3, 0, x, "stochastic", R=3 * 2 ** 30 - 1) == (0x38, INEXACT)
    assert ref.round_pack(e4m3, 0, x, "stochastic", R=3 * 2 ** 30) == (0x39, INEXACT)
    assert ref.round_pack(e4m3, 0, x, "stochastic", R=2, N=2) == (0x38, INEXACT)
    assert ref.round_pack(e4m3, 0, x, "stochastic", R=3, N=2) == (0x39, INEXACT)
    assert ref.round_pack(e4m3, 0, x, "stochastic", R=0xFFFFFFF7, N=2) == (0x39, INEXACT)
    assert ref.round_pack(e4m3, 0, 1, "stochastic", R=2 ** 32 - 1) == (0x38, 0)
    # past max: overflow delivered like the nearest modes
    assert ref.round_pack(e4m3, 0, 449, "stochastic", R=2 ** 32 - 1) == (0x7F, OVERFLOW | INEXACT)
    assert ref.round_pack(e4m3, 0, 449, "stochastic", R=0) == (0x7E, INEXACT)


def test_flush_uhp():
    u = ref.preset("uhp")
    one = next(c for c in range(0x10000) if ref.decode(u, c).value == 1)
    assert one == 31 << 10
    two = 32 << 10
    mn = 0x0400                   # 2^-30
    sub1 = 0x0001
    # subnormal operands are read as zero and raise denormal
    assert ref.add(u, sub1, 0) == (0, DENORMAL)
    assert ref.mul(u, sub1, one) == (0, DENORMAL)
    assert ref.convert(u, ref.FLOAT32, sub1) == (0, DENORMAL)
    # tiny results are zero with underflow+inexact in every mode, both tininess rules
    half = 30 << 10
    for m in ref.MODES:
        for tin in ("after", "before"):
            assert ref.mul(u, mn, half, m, tininess=tin) == (0, UNDERFLOW | INEXACT)
    # just below the smallest normal: tininess after rounding decides
    x = Fraction(1, 2 ** 30) * (1 - Fraction(1, 2 ** 12))
    assert ref.round_pack(u, 0, x) == (mn, INEXACT)
    assert ref.round_pack(u, 0, x, tininess_before=True) == (0, UNDERFLOW | INEXACT)
    assert ref.round_pack(u, 0, x, "toward_zero") == (0, UNDERFLOW | INEXACT)
    # negatives: NaN 0xFE00 with invalid only; a negative that rounds to zero gives +0
    assert ref.sub(u, one, two) == (0xFE00, INVALID)
    assert ref.sub(u, one, one, "downward") == (0, 0)
    assert ref.sub(u, 0, 0xFC00) == (0xFE00, INVALID)
    assert ref.round_pack(u, 1, 10 ** 30) == (0xFE00, INVALID)
    assert ref.round_pack(u, 1, Fraction(1, 2 ** 40)) == (0, UNDERFLOW | INEXACT)
    assert ref.round_pack(u, 0, 2 ** 33) == (0xFC00, OVERFLOW | INEXACT)
    assert ref.round_pack(u, 0, 2 ** 33, saturate=True) == (0xFBFF, OVERFLOW | INEXACT)
    # every NaN UHP produces is 0xFE00
    assert ref.add(u, 0xFC01, one) == (0xFE00, INVALID)
    assert ref.add(u, 0xFF00, one) == (0xFE00, 0)
    assert ref.convert(ref.preset("e5m2"), u, 0xFE) == (0xFE00, 0)
    assert ref.convert(ref.preset("e5m2"), u, 0xBC) == (0xFE00, INVALID)   # -1


def test_special_values():
    e4m3, e5m2, fz = ref.preset("e4m3"), ref.preset("e5m2"), ref.preset("e4m3fnuz")
    c = ref.cfloat8_152(20)
    one8 = 0x38
    # signed zeros
    assert ref.sub(e4m3, one8, one8) == (0x00, 0)
    assert ref.sub(e4m3, one8, one8, "downward") == (0x80, 0)
    assert ref.add(e4m3, 0x80, 0x80) == (0x80, 0)
    assert ref.add(e4m3, 0x80, 0x00) == (0x00, 0)
    assert ref.add(e4m3, 0x80, 0x00, "downward") == (0x80, 0)
    assert ref.mul(e4m3, 0xB8, 0x00) == (0x80, 0)
    assert ref.mul(fz, 0xC0, 0x00) == (0x00, 0)                  # fnuz has no -0
    assert ref.sqrt(e4m3, 0x80) == (0x80, 0)
    assert ref.sqrt(e5m2, 0xFC) == (0x7E, INVALID)
    assert ref.round_pack(fz, 1, Fraction(1, 2 ** 40)) == (0x00, UNDERFLOW | INEXACT)
    # invalid operations: canonical NaNs
    assert ref.add(e5m2, 0x7C, 0xFC) == (0x7E, INVALID)
    assert ref.mul(e5m2, 0x00, 0xFC) == (0x7E, INVALID)
    assert ref.div(e4m3, 0x00, 0x80) == (0x7F, INVALID)
    assert ref.div(fz, 0x00, 0x00) == (0x80, INVALID)
    assert ref.div(c, 0x00, 0x00) == (0x7F, INVALID)             # none: NaN -> +max, invalid
    assert ref.sqrt(c, 0xBC) == (0x7F, INVALID)
    # division by zero
    assert ref.div(e5m2, 0xBC, 0x00) == (0xFC, DIVBYZERO)
    assert ref.div(e5m2, 0xBC, 0x00, saturate=True) == (0xFB, DIVBYZERO)
    assert ref.div(e4m3, 0xB8, 0x00) == (0xFF, DIVBYZERO)        # NaN stand-in keeps the sign
    assert ref.div(e4m3, 0x38, 0x80) == (0xFF, DIVBYZERO)
    assert ref.div(e4m3, 0x38, 0x00, saturate=True) == (0x7E, DIVBYZERO)
    assert ref.div(fz, 0xB8, 0x00) == (0x80, DIVBYZERO)
    assert ref.div(c, 0xB8, 0x00) == (0xFF, DIVBYZERO)
    # NaN propagation (quieted) and signalling NaNs
    assert ref.add(e5m2, 0x7D, 0x7F) == (0x7F, INVALID)
    assert ref.add(e5m2, 0xFF, 0x7D) == (0xFF, INVALID)
    assert ref.add(e5m2, 0x3C, 0xFD) == (0xFF, INVALID)
    assert ref.sqrt(e5m2, 0x7D) == (0x7F, INVALID)
    assert ref.fma(e5m2, 0x00, 0x7C, 0x7E) == (0x7E, INVALID)  # fma(0, inf, qNaN)
    assert ref.fma(e5m2, 0x7C, 0x3C, 0xFC) == (0x7E, INVALID)
    assert ref.fma(e5m2, 0x7E, 0x7C, 0x00)[1] == 0
    assert ref.fma(e5m2, 0x3C, 0x3C, 0xBC) == (0x00, 0)
    assert ref.fma(e5m2, 0x3C, 0x3C, 0xBC, "downward") == (0x80, 0)
    assert ref.fma(e5m2, 0x80, 0x3C, 0x80) == (0x80, 0)
    assert ref.fma(e5m2, 0x80, 0x3C, 0x00) == (0x00, 0)
    # conversions of specials
    assert ref.convert(e5m2, e4m3, 0xFC) == (0xFF, 0)
    assert ref.convert(e5m2, e4m3, 0xFC, saturate=True) == (0xFE, 0)
    assert ref.convert(e5m2, fz, 0x7C) == (0x80, 0)
    assert ref.convert(e5m2, c, 0x7C) == (0x7F, 0)
    assert ref.convert(e5m2, c, 0xFE) == (0x7F, INVALID)
    assert ref.convert(e5m2, c, 0xFD) == (0x7F, INVALID)
    assert ref.convert(e5m2, e4m3, 0x7D) == (0x7F, INVALID)
    assert ref.convert(e5m2, e4m3, 0x7E) == (0x7F, 0)
    assert ref.convert(e4m3, e5m2, 0xFF)[1] == 0
    assert ref.convert(e4m3, ref.FLOAT32, 0x01) == (0x3B000000, DENORMAL)
    # denormal flag for every subnormal operand, also next to NaNs
    assert ref.add(e5m2, 0x01, 0x7E) == (0x7E, DENORMAL)
    assert ref.mul(e5m2, 0x01, 0x00) == (0x00, DENORMAL)
    assert ref.mul(c, 0x01, 0x3C)[1] & DENORMAL


def test_sqrt_exact_and_irrational():
    f16 = ref.preset("float16")
    # sqrt(2) in float16: 1.4140625 (0x3DA8), inexact
    two = 0x4000
    assert ref.sqrt(f16, two) == (0x3DA8, INEXACT)
    assert ref.sqrt(f16, 0x4400) == (0x4000, 0)             # sqrt(4) = 2
    # brute force: every positive finite float16, nearest-even result brackets sqrt
    n = 0
    for code in range(1, 0x7C00, 7):
        x = ref.decode(f16, code).value
        r, fl = ref.sqrt(f16, code)
        y = ref.decode(f16, r).value
        lo = ref.decode(f16, r - 1).value if r > 0 else Fraction(0)
        hi = ref.decode(f16, r + 1).value
        # y is the nearest: (y+lo)/2 <= sqrt(x) <= (y+hi)/2, compared by squares
        assert ((y + lo) / 2) ** 2 <= x <= ((y + hi) / 2) ** 2
        assert (fl & INEXACT == 0) == (y * y == x)
        n += 1
    assert n == len(range(1, 0x7C00, 7))


# --------------------------------------------------------------------------
# Naive second implementation of rounding, for cross-checking round_pack
# --------------------------------------------------------------------------

def _naive_points(fmt):
    """Sorted (value, code magnitude) of all non-negative finite values, plus the next
    point above max on the unbounded-exponent grid."""
    pts = {}
    for code in range(fmt.max_code + 1):
        d = ref.decode(fmt, code)
        if d.kind in ("zero", "finite"):
            pts[d.value] = code
    ulp_max = Fraction(2) ** ((fmt.max_code >> fmt.man_bits) - fmt.bias - fmt.man_bits)
    mx = max(pts)
    pts[mx + ulp_max] = fmt.max_code + 1
    return sorted(pts.items())


def _naive_unbounded_tiny(fmt, sign, x, mode, R, N):
    """Is the unbounded-exponent rounding of x (precision M+1) below 2^emin?"""
    e = 0
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    q = Fraction(2) ** (e - fmt.man_bits)
    lo = (x // q) * q
    hi = lo + q
    up = _naive_up(mode, sign, x, lo, hi, ((x // q) % 2) == 0, R, N)
    r = hi if up else lo
    return r < fmt.min_normal


def _naive_up(mode, sign, x, lo, hi, lo_even, R, N):
    if x == lo:
        return False
    if mode == "nearest_even":
        return x - lo > hi - x or (x - lo == hi - x and not lo_even)
    if mode == "nearest_away":
        return x - lo >= hi - x
    if mode == "toward_zero":
        return False
    if mode == "upward":
        return sign == 0
    if mode == "downward":
        return sign == 1
    if mode == "to_odd":
        return lo_even
    f = (x - lo) / (hi - lo)
    return int(f * 2 ** N) + (R % 2 ** N) >= 2 ** N


def _naive_round(fmt, pts, sign, x, mode, sat, tin, R=None, N=32):
    vals = [p[0] for p in pts]
    import bisect
    i = bisect.bisect_right(vals, x) - 1
    if not fmt.signed and sign:   # (8-bit unsigned: E8M0, no zero) no negative value
        return fmt.nan_code, INVALID
    if i < 0:   # below the smallest value of a format with no zero: that value
        code, inexact = pts[0][1], True
    elif i == len(vals) - 1:
        code, inexact = fmt.max_code + 1, True
    else:
        lo, hi = pts[i], pts[i + 1]
        up = _naive_up(mode, sign, x, lo[0], hi[0], lo[1] % 2 == 0, R, N)
        code = hi[1] if up else lo[1]
        inexact = x != lo[0]
    satur = sat if fmt.specials != "none" else True
    if code > fmt.max_code:
        fl = OVERFLOW | INEXACT
        to_inf = mode in ("nearest_even", "nearest_away", "stochastic") or \
            (mode == "upward" and sign == 0) or (mode == "downward" and sign == 1)
        if satur or not to_inf:
            return (0x80 if sign else 0) | fmt.max_code, fl
        if fmt.specials == "ieee":
            return (0x80 if sign else 0) | fmt.inf_code, fl
        if fmt.specials == "fn":
            return (0x80 if sign else 0) | fmt.mag_mask, fl
        return 0x80, fl
    fl = INEXACT if inexact else 0
    if inexact and x < fmt.min_normal:
        if tin == "before" or _naive_unbounded_tiny(fmt, sign, x, mode, R, N):
            fl |= UNDERFLOW
    if code == 0 and fmt.specials == "fnuz":
        return 0, fl
    return (0x80 if sign else 0) | code, fl


def _interesting_values(fmt, rng, count):
    """Random positive Fractions spread over the format's range, many near
    representable values, midpoints, the Tesla gap and overflow boundary."""
    pts = [p[0] for p in _naive_points(fmt)]
    out = []
    for _ in range(count):
        r = rng.random()
        i = rng.randrange(len(pts) - 1)
        a, b = pts[i], pts[i + 1]
        if r < 0.25:
            out.append((a + b) / 2)
        elif r < 0.5:
            t = Fraction(rng.randrange(1, 2 ** 20), 2 ** 20)
            out.append(a + (b - a) * t)
        elif r < 0.6:
            eps = Fraction(1, 2 ** rng.randrange(10, 40))
            out.append((a + b) / 2 + rng.choice((-1, 1)) * (b - a) * eps)
        elif r < 0.7:
            out.append(b - (b - a) * Fraction(1, rng.randrange(2, 1000)))
        elif r < 0.8:
            out.append(pts[-1] * Fraction(rng.randrange(1, 4000), 1000))
        elif r < 0.9:
            out.append(fmt.min_subnormal * Fraction(rng.randrange(1, 3000), 1000))
        else:
            out.append(b if b != pts[-1] else a)
    return [v for v in out if v > 0]


@pytest.mark.parametrize("fmt", EIGHT_BIT, ids=lambda f: f.name)
def test_round_pack_vs_naive(fmt):
    rng = random.Random(hash(fmt.name) & 0xFFFF)
    pts = _naive_points(fmt)
    xs = _interesting_values(fmt, rng, 600)
    n = 0
    for x in xs:
        for sign in (0, 1):
            for mode in ref.ALL_MODES:
                for sat in (False, True):
                    for tin in ("after", "before"):
                        R = N = None
                        if mode == "stochastic":
                            N = rng.choice((1, 2, 5, 32))
                            R = rng.randrange(2 ** 32)
                        want = _naive_round(fmt, pts, sign, x, mode, sat, tin, R, N or 32)
                        got = ref.round_pack(fmt, sign, x, mode, sat, tin == "before",
                                             R=R, N=N or 32)
                        assert got == want, (fmt.name, x, sign, mode, sat, tin, R, N)
                        n += 1
    assert n == len(xs) * 2 * 7 * 4
    assert len(xs) >= 590


# --------------------------------------------------------------------------
# Vectorised Table == scalar deliver
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", EIGHT_BIT[:7] + [ref.preset("uhp"), ref.shp(40)],
                         ids=lambda f: f.name)
def test_table_matches_scalar(fmt):
    rng = random.Random(7)
    if fmt.bits == 8:
        triples = [(rng.randrange(256), rng.randrange(256), rng.randrange(256))
                   for _ in range(3000)]
    else:
        triples = [(rng.randrange(65536), rng.randrange(65536), rng.randrange(65536))
                   for _ in range(3000)]
    ops = ["add", "sub", "mul", "div", "fma", "sqrt"]
    items = []
    for i, (a, b, c) in enumerate(triples):
        op = ops[i % 6]
        args = {"sqrt": (a,), "fma": (a, b, c)}.get(op, (a, b))
        items.append(ref.EXACT_OPS[op](fmt, *args))
    table, idx, opfl = ref.build_table(fmt, items)
    R = np.array([rng.randrange(2 ** 32) for _ in items], dtype=np.uint32)
    n = 0
    for mode in ref.ALL_MODES:
        for sat in (False, True):
            for tin in ("after", "before"):
                N = 7 if sat else 32
                Rm = R if mode == "stochastic" else None
                codes, fl, _ = table.evaluate(idx, mode, sat, tin, R=Rm, N=N)
                for j, (d, f0) in enumerate(items):
                    c, f = ref.deliver(fmt, d, mode, sat, tin,
                                       int(R[j]) if Rm is not None else None, N)
                    assert (int(codes[j]), int(fl[j])) == (c, f), (fmt.name, d, mode, sat, tin)
                    n += 1
    assert n == 3000 * 7 * 4
