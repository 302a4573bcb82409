"""Issue 21, defect 2: 16-bit add / subtract / multiply / divide through binary32
(the AVX2 and AVX-512 kernels of the arith16 and sr_arith16 families) on formats
whose finite values reach 2^128.

Root cause: the kernels' cover test (a16_f32_ok, in the arith16 family) bounded the
format's exponents by the field below the all-ones one, which is the largest
finite binade only when the all-ones field holds infinities and NaNs.  Formats
without infinities (specials 'fn', 'none') have finite values there; with bias
127 they reach [2^128, 2^129), which binary32 rounds to infinity, and infinity's
code ((129 - emin) << M) then lies inside the format's finite range instead of
above it: no overflow lane, a wrong code (0x1ff0 for 0x1ffe) and no overflow
flag.  The bits above the width play no part (the reproducer's 0x5ed6 reads as
0x1ed6 on every path, which gives the same result).

Expected values: the Fraction model (tests/models/fraction_model.py) for the
reported case; the exact core (fast paths off) for the others, at every SIMD
level, deterministic and stochastic.  Cost: about 1 s.
"""
import numpy as np
import pytest

import softfp8
from softfp8 import _ext
from tests.models import fraction_model as fm

from tests.harness.machinery import LEVELS as SIMD_LEVELS

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd", "stochastic")
REPORTED = dict(exp_bits=8, man_bits=4, bias=127, specials="fn", subnormals="flush", signed=True, saturate=True)


def _switch(fast, simd):
    return _ext.set_fast(fast), _ext.set_simd(simd)


def _restore(prev):
    _ext.set_simd(prev[1])
    _ext.set_fast(prev[0])


def test_reported_multiply():
    f = softfp8.format(**REPORTED)
    spec = fm.Spec(13, True, 8, 4, 127, "fn", "flush", True)
    a, b = 0xDFF, 0x5ED6
    mask = (1 << 13) - 1
    want, wfl = fm.round_value(spec, *fm.mul_values(fm.decode(spec, a & mask)[1:], fm.decode(spec, b & mask)[1:]),
                               mode="nearest_even")
    assert (want, wfl) == (0x1FFE, fm.OVERFLOW | fm.INEXACT)
    x = np.full(4096, a, np.uint16).view(f)
    y = np.full(4096, b, np.uint16).view(f)
    runs = 0
    for fast, simd in [(0, 0)] + [(v, s) for v in (1, 2) for s in SIMD_LEVELS]:
        prev = _switch(fast, simd)
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                got = np.multiply(x, y).view(np.uint16)
            with np.errstate(over="raise", invalid="ignore"), pytest.raises(FloatingPointError, match="overflow"):
                np.multiply(x, y)
        finally:
            _restore(prev)
        assert np.all(got == want), (fast, simd, hex(int(got[0])))
        runs += 1
    assert runs == 1 + 2 * len(SIMD_LEVELS)


# formats with finite values at and above 2^128 (and two whose values stay below it,
# still taken by the binary32 kernels), 9..16 bits, M <= 10 (the binary32 kernels' cover)
FORMATS = [
    REPORTED,
    dict(exp_bits=8, man_bits=7, bias=127, specials="none", subnormals="ieee", signed=True),
    dict(exp_bits=8, man_bits=3, bias=127, specials="fn", subnormals="ieee", signed=False),
    dict(exp_bits=8, man_bits=7, bias=127, specials="fn", subnormals="ieee", signed=True),
    dict(exp_bits=8, man_bits=1, bias=128, specials="none", subnormals="tesla", signed=True),
    dict(exp_bits=8, man_bits=6, bias=128, specials="fn", subnormals="ieee", signed=True),
]


def _codes(g, f, n):
    """Raw storage codes (bits above the width set at random), most in the top binades."""
    M, E, bits = f.man_bits, f.exp_bits, f.bits
    top = (1 << E) - 1 - g.integers(0, 4, n)
    c = (top << M) | g.integers(0, 1 << M, n) | (g.integers(0, 2, n) << (bits - 1) if f.signed else 0)
    c = np.where(g.random(n) < 0.2, g.integers(0, 1 << bits, n), c)
    return (c | (g.integers(0, 1 << 16, n) & ~((1 << bits) - 1))).astype(np.uint16)


@pytest.mark.parametrize("k", range(len(FORMATS)))
def test_top_binades_against_core(k):
    f = softfp8.format(**FORMATS[k])
    g = np.random.default_rng(2100 + k)
    n = 2048
    x, y = _codes(g, f, n), _codes(g, f, n)
    cases = 0
    for mode in MODES:
        env = (MODES.index(mode), 0, 0, 32)
        rngp = (1, 12345 + k, 0, 0)
        for op in ("add", "sub", "mul", "div"):
            results = []
            for fast, simd in [(0, 0)] + [(2, s) for s in SIMD_LEVELS]:
                out, fl = np.zeros(n, np.uint16), np.zeros(n, np.uint8)
                prev = _switch(fast, simd)
                try:
                    _ext.run(_ext.OPS[op], f.params, env, rngp, None, (x, y), out, fl)
                finally:
                    _restore(prev)
                results.append((out, fl))
            for (out, fl), simd in zip(results[1:], SIMD_LEVELS):
                what = f"{f.params} {mode} {op} simd={simd}"
                assert np.array_equal(out, results[0][0]), what
                assert np.array_equal(fl, results[0][1]), what
                cases += n
    assert cases == len(MODES) * 4 * len(SIMD_LEVELS) * n
