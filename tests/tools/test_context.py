"""Context defaults for softfp8.bits and the stochastic operation counter."""
import numpy as np
import pytest

import softfp8
from softfp8 import bits

E = softfp8.e4m3
X = np.linspace(0.01, 1.0, 4096)  # almost all values inexact in E4M3


def test_bits_defaults_follow_the_context():
    # toward_zero truncates 1.99 to 1.875; an explicit option still wins
    x = np.array([1.99, -1.99])
    assert bits.from_float(x, E)[0].tolist() == [0x40, 0xC0]  # 2.0 nearest
    with softfp8.rounding("toward_zero"):
        assert bits.from_float(x, E)[0].tolist() == [0x3F, 0xBF]
        assert bits.from_float(x, E, rounding="nearest_even")[0].tolist() == [0x40, 0xC0]
    with softfp8.saturation(True):
        assert int(bits.from_float(np.float64(1e6), E)[0]) == 0x7E  # max, not NaN
    assert int(bits.from_float(np.float64(1e6), E)[0]) == 0x7F
    t2 = np.float64((1 - 2.0 ** -12) * 2.0 ** -14)  # rounds up to the smallest normal:
    # tiny before rounding, not after
    with softfp8.tininess("before"):
        assert int(bits.from_float(t2, softfp8.float16)[1]) & 0x02
    assert not int(bits.from_float(t2, softfp8.float16)[1]) & 0x02


def _sr(fn):
    with softfp8.rounding("stochastic", seed=99):
        return fn()


def test_seeded_context_is_reproducible_and_never_reuses_bits():
    def prog():
        out = []
        out.append(X.astype(E.dtype).view(np.uint8))
        with softfp8.saturation(True):          # nested block keeps the seed
            out.append(X.astype(E.dtype).view(np.uint8))
        with softfp8.collect_flags():
            out.append(X.astype(E.dtype).view(np.uint8))
        out.append(X.astype(E.dtype).view(np.uint8))
        out.append(bits.from_float(X, E)[0])      # bits defaults use the context too
        out.append(bits.from_float(X, E)[0])
        return out

    first, second = _sr(prog), _sr(prog)
    assert len(first) == 6
    for a, b in zip(first, second):
        assert np.array_equal(a, b)               # same program, same bits
    for i in range(len(first)):
        for j in range(i + 1, len(first)):        # successive operations differ
            assert not np.array_equal(first[i], first[j]), (i, j)
    # every result is one of the two neighbours of the exact value
    lo, _ = bits.from_float(X, E, rounding="toward_zero")
    hi, _ = bits.from_float(X, E, rounding="upward")
    for r in first:
        assert np.all((r == lo) | (r == hi))


def test_reseeding_inside_restarts_the_sequence():
    def prog():
        a = X.astype(E.dtype).view(np.uint8)
        with softfp8.rounding("stochastic", seed=99):
            b = X.astype(E.dtype).view(np.uint8)
        return a, b

    a, b = _sr(prog)
    assert np.array_equal(a, b)  # same seed, first operation of each sequence


@pytest.mark.parametrize("mode", ["nearest_even", "upward"])
def test_printing_ignores_the_context(mode):
    a = np.array([0.1, 300.0], dtype=E.dtype)
    want = str(a)
    with softfp8.rounding(mode):
        assert str(a) == want
    with softfp8.rounding("stochastic", seed=1):
        assert str(a) == want
