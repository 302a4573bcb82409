"""softfp8.bits.sum: the exact sum of codes rounded once (the array driver's exact
reduction, reachable from the golden-model API), against the independent rational
model: the exact sum of the decoded values rounded by the model's round-and-pack."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import bits

from ..models import rational as ref

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")
DENORMAL = 0x20
FORMATS = ("e4m3", "e5m2", "e4m3fnuz", "hfp8_143", "float16", "bfloat16", "uhp")


def _expected(rf, codes, mode, saturate):
    """(code, flags) of the exactly rounded sum of finite codes, by the model."""
    vals = [ref.decode(rf, int(c)) for c in codes]
    flags = DENORMAL if any(ref.is_subnormal(rf, int(c)) for c in codes) else 0
    if not len(codes):
        return ref.round_pack(rf, 0, 0, mode, saturate)[0], 0
    exact = sum((v.value for v in vals), Fraction(0))
    if exact == 0:
        nonzero = any(v.value != 0 for v in vals)
        signs = {v.sign for v in vals}
        if nonzero or len(signs) > 1:
            sign = 1 if mode == "downward" else 0
        else:
            sign = signs.pop()
        code, fl = ref.round_pack(rf, sign, 0, mode, saturate)
        return code, fl | flags
    code, fl = ref.round_pack(rf, 0, exact, mode, saturate)
    return code, fl | flags


@pytest.mark.parametrize("name", FORMATS)
def test_sum_rounds_once(name):
    fmt = getattr(softfp8, name)
    rf = ref.preset(name)
    allc = np.arange(1 << fmt.bits, dtype=np.int64)
    finite = np.array([c for c in allc if ref.decode(rf, int(c)).kind in ("finite", "zero")])
    # every code but the NaNs and infinities (counted from the format's definition)
    nonfinite = {"e4m3": 2, "e5m2": 8, "e4m3fnuz": 1, "hfp8_143": 0, "float16": 2048,
                 "bfloat16": 256, "uhp": 1024}[name]
    assert finite.size == (1 << fmt.bits) - nonfinite, finite.size
    rng = np.random.default_rng(5)
    checked = 0
    for trial in range(40):
        n = int(rng.integers(0, 60))
        # small magnitudes mostly (cancellation and subnormals), some large ones
        pool = finite if trial % 3 else finite[np.argsort(np.abs([float(ref.decode(rf, int(c)).value or 0)
                                                                   for c in finite]))[:64]]
        codes = rng.choice(pool, n).astype(fmt.storage)
        for mode in MODES:
            for sat in (False, True):
                got, gfl = bits.sum(fmt, codes, rounding=mode, saturate=sat)
                want, wfl = _expected(rf, codes, mode, sat)
                assert (int(got), int(gfl)) == (int(want), int(wfl)), (trial, mode, sat, codes)
                checked += 1
    assert checked == 40 * len(MODES) * 2


def test_sum_axis_and_specials():
    fmt = softfp8.e5m2
    inf, nan = 0x7C, 0x7E
    one, three, two = 0x3C, 0x42, 0x40  # E5M2 1.0, 3.0, 2.0 (sign 0, exponent 15/16, mantissa)
    a = np.array([[one, one, one], [inf, one, 0], [inf, inf | 0x80, one]], dtype=np.uint8)
    got, fl = bits.sum(fmt, a, axis=1)
    assert got.shape == (3,)
    assert int(got[0]) == three and fl[0] == 0
    assert int(got[1]) == inf and fl[1] == 0
    assert fmt.classify(int(got[2])) in ("qnan", "snan") and fl[2] & 0x10  # inf - inf: invalid
    col, cfl = bits.sum(fmt, a, axis=0)
    assert col.shape == (3,)
    # columns: 1 + inf + inf = inf; 1 + 1 + (-inf) = -inf; 1 + 0 + 1 = 2
    assert [int(c) for c in col] == [inf, inf | 0x80, two] and not cfl.any()
    assert fmt.classify(int(bits.sum(fmt, [nan, one])[0])) == "qnan"
    assert int(bits.sum(fmt, np.zeros(0, np.uint8))[0]) == 0
    with pytest.raises(ValueError, match="axis 2"):
        bits.sum(fmt, a, axis=2)


def test_sum_stochastic_is_seeded():
    fmt = softfp8.e4m3
    codes = bits.from_float(np.linspace(0.1, 3.3, 50), fmt)[0].reshape(5, 10)
    r1 = bits.sum(fmt, codes, axis=1, rounding="stochastic", seed=11)[0]
    r2 = bits.sum(fmt, codes, axis=1, rounding="stochastic", seed=11)[0]
    np.testing.assert_array_equal(r1, r2)
    lo = bits.sum(fmt, codes, axis=1, rounding="downward")[0]
    hi = bits.sum(fmt, codes, axis=1, rounding="upward")[0]
    assert all(int(x) in (int(a), int(b)) for x, a, b in zip(r1, lo, hi))


@pytest.mark.parametrize("name", FORMATS)
def test_sum_of_zeros_keeps_their_sign(name):
    """IEEE 754 6.3: x + x keeps x's sign, zeros included; +0 + -0 is +0 except when
    rounding downward.  Through bits.sum, np.add.reduce and matmul (the exact
    accumulator) against the model, in every mode."""
    fmt = getattr(softfp8, name)
    rf = ref.preset(name)
    pz = int(fmt.encode(0.0))
    nz = int(fmt.encode(-0.0))
    checked = 0
    for codes in ([pz] * 3, [nz] * 3, [pz, nz], [nz, pz, nz], [pz]):
        codes = np.array(codes, dtype=fmt.storage)
        for mode in MODES:
            want, wfl = _expected(rf, codes, mode, False)
            got, gfl = bits.sum(fmt, codes, rounding=mode, saturate=False)
            assert (int(got), int(gfl)) == (int(want), int(wfl)), (codes, mode)
            with softfp8.rounding(mode):
                red = np.add.reduce(codes.view(fmt.dtype))
                ones = np.full((1, codes.size), fmt.encode(1.0), dtype=fmt.storage).view(fmt.dtype)
                mm = ones @ codes.view(fmt.dtype).reshape(-1, 1)
            assert int(np.asarray(red).view(fmt.storage)) == int(want), (codes, mode, "reduce")
            assert int(mm.view(fmt.storage)[0, 0]) == int(want), (codes, mode, "matmul")
            checked += 1
    assert checked == 5 * len(MODES)
