"""benchmarks/train_bench.py: the softfp8 backend of issue 10's FP8 training run really
computes every matmul exactly (each result equals the exact dot product of the decoded
codes times RN_f32(sa * sb), rounded once to float32, computed here with integers and
Fractions), and training lowers the loss.  Two epochs on a slice of the data."""
import importlib.util
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import softfp8
from softfp8 import demo, nn

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("train_bench", ROOT / "benchmarks" / "train_bench.py")
tb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tb)

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

# lowest bit of each format (E4M3 2^-9, E5M2 2^-16): codes * 2^LOW are integers
LOW = {"e4m3": 9, "e5m2": 16}


def _decode(codes, fmt):
    """The codes' values as float64 by ml_dtypes (an independent decoder) when installed."""
    if ml_dtypes is not None:
        dt = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}[fmt.name]
        return np.ascontiguousarray(codes).view(np.uint8).view(dt).astype(np.float64)
    return codes.astype(np.float64)


def _round_f32(x: Fraction) -> np.float32:
    """x rounded to nearest-even float32 (x in float32's normal range or zero)."""
    if x == 0:
        return np.float32(0)
    f = np.float32(float(x))
    cands = (f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf)))
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - x),
                                     int(np.array(c).view(np.uint32)) & 1))


def _check(a, b, got):
    """got == the exact scaled dot products rounded once; returns the number of elements."""
    av, bv = _decode(a.codes, a.fmt), _decode(b.codes, b.fmt)
    ia = np.ldexp(av, LOW[a.fmt.name]).astype(np.int64)        # exact integers
    ib = np.ldexp(bv, LOW[b.fmt.name]).astype(np.int64)
    assert np.array_equal(np.ldexp(ia.astype(np.float64), -LOW[a.fmt.name]), av)
    n = ia @ ib                                  # |n| < 2^50 * k < 2^63: exact in int64
    s = Fraction(float(np.float32(float(a.scale_inv) * float(b.scale_inv))))
    unit = Fraction(1, 2 ** (LOW[a.fmt.name] + LOW[b.fmt.name])) * s
    assert got.dtype == np.float32
    for (i, j), v in np.ndenumerate(n):
        want = _round_f32(int(v) * unit)
        assert got[i, j] == want, (i, j, got[i, j], want)
        if v == 0:   # -0 only if every product is -0 (nearest even)
            neg = np.signbit(av[i]) != np.signbit(bv[:, j])
            allneg = not np.any((av[i] != 0) & (bv[:, j] != 0)) and neg.all()
            assert bool(np.signbit(got[i, j])) == allneg, (i, j)
    return n.size


class _RecordingRecipe(nn.Recipe):
    """The benchmark's softfp8 layer recipe, keeping every matmul's operands and result."""

    def matmul(self, a, b):
        out = super().matmul(a, b)
        Recording.log.append((self.materialise(a), self.materialise(b), out))
        return out


class Recording(tb.Softfp8):
    log: list = []
    recipe_class = _RecordingRecipe


def test_every_matmul_exact_and_loss_decreases():
    Recording.log = []
    (x, y), (xt, yt) = tb.make_data()
    data = ((x[:256], y[:256]), (xt[:64], yt[:64]))
    steps = tb.steps_for(2, 256)                  # 2 epochs = 4 batches of 128
    with softfp8.rounding("nearest_even"):
        res = demo.train(Recording, data, steps, 0, sizes=(64, 32, 10), batch=tb.BATCH, lr=tb.LR)
    # 5 matmuls per step (2 forward, 1 data gradient, 2 weight gradients) + 2 for the test set
    assert len(Recording.log) == 5 * steps + 2
    kinds = {(a.fmt.name, b.fmt.name) for a, b, _ in Recording.log}
    assert kinds == {("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3")}
    n = sum(_check(a, b, out) for a, b, out in Recording.log)
    assert n == steps * (128 * 32 + 128 * 10 + 32 * 10 + 128 * 32 + 64 * 32) + 64 * (32 + 10)
    assert res.curve[-1] < res.curve[0]
    assert np.isfinite(res.loss)


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes not installed")
def test_backends_agree_roughly():
    """One epoch on a slice: the three backends reach similar losses (same data and init)."""
    (x, y), (xt, yt) = tb.make_data()
    data = ((x[:512], y[:512]), (xt[:256], yt[:256]))
    losses = {name: tb.run(name, epochs=1, data=data).loss for name in tb.BACKENDS}
    assert abs(losses["softfp8"] - losses["float32"]) < 0.25 * losses["float32"] + 0.05
    assert abs(losses["ml_dtypes"] - losses["float32"]) < 0.25 * losses["float32"] + 0.05
