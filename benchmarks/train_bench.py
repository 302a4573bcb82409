#!/usr/bin/env python
"""FP8 training run of a small MLP, three backends side by side (issue 10's training row).

A 64-256-10 ReLU MLP trained for 15 epochs on 1797 x 64 inputs in [0, 16] (the shape of
scikit-learn's digits set; generated here: 10 class prototypes plus noise, fixed seeds),
with softfp8.demo's training loop (float32 master weights, Adam, cosine decay, batches of
128 drawn with replacement: 15 epochs = ceil(15 * 1797 / 128) = 211 steps).  Every matmul
of both layers -- forward x @ w, data gradient g @ w.T, weight gradient x.T @ g -- sees
operands quantised with per-tensor current scaling (scale = RN_f32(max / amax)): E4M3
activations and weights, E5M2 gradients, float32 results.  Backends:

- ``softfp8``: ``softfp8.scaling.quantize`` (one rounding of x * scale) and
  ``softfp8.scaled_mm`` of the codes: every matmul is the exact dot product rounded once
  to float32 (mixed E4M3 x E5M2 in the backward pass);
- ``ml_dtypes``: the same recipe as an ml_dtypes user writes it: the scale in float32,
  ``(x * s).astype(float8_e4m3fn / float8_e5m2)`` (clipped to the format's max: FP8
  training casts saturate), and float32 matmuls of the codes upcast to float32, times
  1/(s_a s_b) (each dot product rounded at every float32 addition);
- ``float32``: no quantisation, float32 matmuls.

Same data, initial weights and batches for each.  ``python benchmarks/train_bench.py``
prints seconds, test loss and accuracy per backend (one thread, as benchmarks/bench.py).
"""
import os

if __name__ == "__main__":   # one BLAS thread, before numpy is imported (as bench.py)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

if __name__ == "__main__":   # the softfp8 of this checkout, not an installed one
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from softfp8 import demo, nn  # noqa: E402

try:
    import ml_dtypes  # noqa: E402
except ImportError:  # pragma: no cover - optional peer
    ml_dtypes = None

SAMPLES, FEATURES, HIDDEN, CLASSES = 1797, 64, 256, 10
SIZES = (FEATURES, HIDDEN, CLASSES)
EPOCHS, QUICK_EPOCHS = 15, 3
BATCH = 128
LR = 0.01


def digits_like(n=SAMPLES, seed=0, noise=9.0):
    """(x float32 (n, 64) of integers in [0, 16], labels (n,)): 10 prototypes drawn
    uniformly in [0, 16]^64 (seed 0, shared by every split), a sample is its class's
    prototype plus N(0, noise^2) per pixel, rounded and clipped to [0, 16] like the
    digits set's pixel counts.  Inputs are divided by 16 for training."""
    protos = np.random.default_rng(0).uniform(0.0, 16.0, (CLASSES, FEATURES))
    rng = np.random.default_rng(seed + 1)
    y = rng.permutation(np.arange(n) % CLASSES)
    x = np.clip(np.rint(protos[y] + rng.normal(0.0, noise, (n, FEATURES))), 0, 16) + 0.0
    return x.astype(np.float32), y                 # + 0.0: no -0 from rint (-0.4)


def make_data(n=SAMPLES):
    """Training set (1797 points) and a held-out test set of the same size."""
    (x, y), (xt, yt) = digits_like(n, seed=0), digits_like(n, seed=1)
    return (x / np.float32(16), y), (xt / np.float32(16), yt)


def steps_for(epochs, n=SAMPLES, batch=BATCH):
    return math.ceil(epochs * n / batch)


# ------------------------------------------------------------------ backends ----

class _BlasF32(nn.Recipe):
    """float32 operands, BLAS matmuls."""

    def __init__(self):
        super().__init__("none")

    def matmul(self, a, b):
        return np.matmul(self.values(a), self.values(b))


class Float32(demo.Recipe):
    """float32 everywhere, BLAS matmuls."""
    name = "float32"
    what = "float32 operands, float32 matmuls (the reference)"
    layers = (0, 1)

    def layer_recipe(self):
        return _BlasF32()


class Softfp8(demo.Recipe):
    """E4M3 / E5M2 codes by softfp8's scaled cast, exact scaled_mm to float32."""
    name = "softfp8"
    what = ("E4M3 x/w, E5M2 g, per-tensor current scaling; softfp8.scaled_mm: exact dot, "
            "one rounding to float32")
    layers = (0, 1)
    recipe_class = nn.Recipe

    def layer_recipe(self):
        return self.recipe_class("current", fmt=demo.E4M3, grad_fmt=demo.E5M2, gemm="scaled")


class _MlDtypesRecipe(nn.Recipe):
    """The same recipe written with ml_dtypes casts and float32 matmuls."""

    def __init__(self):
        super().__init__("current")

    def quantize(self, t, role, axis, state):
        dt = ml_dtypes.float8_e5m2 if role == "g" else ml_dtypes.float8_e4m3fn
        fmax = np.float32(ml_dtypes.finfo(dt).max)
        amax = np.max(np.abs(t))
        s = fmax / amax if np.isfinite(amax) and amax > 0 else np.float32(1)
        if not np.isfinite(s):
            s = np.float32(np.finfo(np.float32).max)
        codes = np.clip(t * s, -fmax, fmax).astype(dt)
        return codes, np.float32(1) / s

    def values(self, q):
        return q[0].astype(np.float32) * q[1]

    def transpose(self, q):
        return q[0].T, q[1]

    def matmul(self, a, b):
        return np.matmul(a[0].astype(np.float32), b[0].astype(np.float32)) * (a[1] * b[1])


class MlDtypes(demo.Recipe):
    """The same recipe written with ml_dtypes casts and float32 matmuls."""
    name = "ml_dtypes"
    what = ("E4M3 x/w, E5M2 g, per-tensor current scaling; ml_dtypes casts, float32 "
            "matmul of the upcast codes")
    layers = (0, 1)

    def layer_recipe(self):
        return _MlDtypesRecipe()


BACKENDS = {"float32": Float32, "ml_dtypes": MlDtypes, "softfp8": Softfp8}


def run(backend, epochs=EPOCHS, seed=0, data=None, n=SAMPLES):
    """Train with one backend (a name of BACKENDS or a demo.Recipe class): demo.Result
    (seconds, test loss and accuracy, training loss curve)."""
    cls = BACKENDS[backend] if isinstance(backend, str) else backend
    if cls is MlDtypes and ml_dtypes is None:
        raise RuntimeError("the ml_dtypes backend needs ml_dtypes (pip install ml_dtypes)")
    data = make_data(n) if data is None else data
    return demo.train(cls, data, steps_for(epochs, len(data[0][1])), seed, sizes=SIZES,
                      batch=BATCH, lr=LR)


def compare(epochs=EPOCHS, repeats=3, backends=None):
    """Side by side: each repeat trains every backend once, in turn (so that machine load
    drifts hit all alike); {name: (median seconds, demo.Result of the last run)}."""
    names = list(BACKENDS) if backends is None else list(backends)
    if ml_dtypes is None and "ml_dtypes" in names:
        names.remove("ml_dtypes")
    data = make_data()
    times = {n: [] for n in names}
    last = {}
    for _ in range(repeats):
        for n in names:
            last[n] = run(n, epochs, data=data)
            times[n].append(last[n].seconds)
    return {n: (statistics.median(times[n]), last[n]) for n in names}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("--backends", default=",".join(BACKENDS),
                   help="comma-separated subset of " + ", ".join(BACKENDS))
    p.add_argument("--repeats", type=int, default=3, help="runs per backend (median)")
    args = p.parse_args(argv)
    print(f"MLP {'-'.join(map(str, SIZES))}, {SAMPLES} x {FEATURES} inputs, {args.epochs} "
          f"epochs = {steps_for(args.epochs)} steps of batches of {BATCH}, median of "
          f"{args.repeats} runs per backend, backends in turn")
    for name, (sec, r) in compare(args.epochs, args.repeats, args.backends.split(",")).items():
        print(f"{name:10s} {sec:7.3f} s  test loss {r.loss:.4f}  accuracy "
              f"{100 * r.accuracy:.1f}%  (final training loss {r.curve[-1]:.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
