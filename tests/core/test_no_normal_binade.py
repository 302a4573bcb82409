"""Formats with no normal binade below the special exponent (one exponent bit, IEEE
specials): the values are 0, the subnormals and infinity; a value rounding past the
largest subnormal overflows (the carry lands on the infinity's encoding).

Expected results from the value set written out by hand (not from the core): e1m2 with
bias 2 has the magnitudes 0, 1/8, 2/8, 3/8 and infinity at code 4.
"""
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import bits

FMT = softfp8.format(exp_bits=1, man_bits=2, bias=2, specials="ieee", signed=True, subnormals="ieee")
FINITE = [Fraction(k, 8) for k in range(4)]
MAXF = FINITE[-1]
OV, IX = int(softfp8.Flags.OVERFLOW), int(softfp8.Flags.INEXACT)


def expected(x, mode, sat):
    """(code, overflow?) of x rounded into FMT by mode, the value set written out."""
    sign = x < 0
    m = abs(Fraction(x))
    if m >= Fraction(1, 2):   # beyond the top even with an unbounded exponent: overflow in every mode
        to_inf = mode == "nearest_even" or (mode == "upward") != sign and mode != "toward_zero"
        return (4 if to_inf and not sat else 3) | (8 if sign else 0), True
    lo = max(v for v in FINITE if v <= m) if m <= MAXF else MAXF
    up = min((v for v in FINITE if v >= m), default=None)     # None: past the top (2^-1 next)
    nxt = up if up is not None else Fraction(1, 2)
    if m == lo:
        r = lo
    elif mode == "toward_zero":
        r = lo
    elif mode in ("upward", "downward"):
        r = nxt if (mode == "upward") != sign else lo
    else:
        mid = (lo + nxt) / 2
        r = nxt if m > mid or (m == mid and (nxt * 8) % 2 == 0) else lo
    if r > MAXF:
        code = 3 if sat else 4
        return code | (8 if sign else 0), True
    return int(r * 8) | (8 if sign else 0), False


def test_carry_past_the_largest_subnormal_overflows():
    xs = [k / 64 for k in range(0, 64)] + [0.3750375, 0.4375, 0.45, 0.49999]
    n = 0
    for x in xs + [-x for x in xs if x]:
        for mode in ("nearest_even", "toward_zero", "upward", "downward"):
            for sat in (False, True):
                code, fl = bits.from_float(np.array([x]), FMT, rounding=mode, saturate=sat, tininess="before")
                want, ov = expected(x, mode, sat)
                assert int(code[0]) == want, (x, mode, sat, int(code[0]), want)
                assert bool(int(fl[0]) & OV) == ov, (x, mode, sat, int(fl[0]))
                if ov:
                    assert int(fl[0]) & IX
                n += 1
    assert n == (len(xs) * 2 - 1) * 4 * 2


@pytest.mark.parametrize("fast", [0, 2])
def test_the_fast_casts_agree(fast):
    from softfp8 import _ext
    x = np.array([0.3750375, 0.45, -0.45, 0.4375] * 16)
    prev = _ext.set_fast(fast)
    try:
        with softfp8.rounding("upward"), softfp8.saturation(True), np.errstate(over="ignore"):
            r = x.astype(FMT.dtype).view(np.uint8)[:4]
    finally:
        _ext.set_fast(prev)
    assert [int(c) for c in r] == [3, 3, 0xB, 3]
