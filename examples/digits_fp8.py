#!/usr/bin/env python
"""Train a 64-128-10 MLP on scikit-learn's digits in PyTorch with an FP8 recipe, replay every
layer's arithmetic bit-exactly in NumPy with softfp8, and compare with float32.

    python examples/digits_fp8.py [--epochs 20] [--seed 0] [--recipe delayed|mxfp8|h100|nvfp4]

The FP8 network is built from ``softfp8.torch_nn.Linear`` layers, a drop-in for
``torch.nn.Linear`` whose three GEMMs follow a ``softfp8.nn.Recipe``.  The float32 twin
uses ``torch.nn.Linear``, and both start from the same weights.  Loss (cross entropy),
ReLU, optimiser (SGD with momentum) and batches are PyTorch's and identical for both.  At every step the
FP8 layers' outputs and gradients are checked against NumPy ``softfp8.nn.Linear``
twins fed the same inputs, weights and output gradients: every element of every tensor
must agree bit for bit (the count is printed).  Needs torch and scikit-learn
(``load_digits`` ships with scikit-learn: no download).  docs/frameworks.md quotes a run.
"""
import argparse
import os
import sys
import time

import numpy as np

if __name__ == "__main__":   # the softfp8 of this checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

from softfp8 import nn  # noqa: E402
from softfp8.torch_nn import Linear  # noqa: E402

RECIPES = {
    "delayed": lambda: nn.Recipe("delayed"),                       # E4M3 / E5M2, amax history 16
    "mxfp8": lambda: nn.Recipe("mx"),                              # MXFP8 blocks of 32
    "h100": lambda: nn.Recipe("current", accumulation="h100"),    # H100's FP8 tensor core
    "nvfp4": lambda: nn.Recipe("nvfp4", stochastic_gradients=True, seed=1),
}
SIZES = (64, 128, 10)


def data(seed):
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    order = np.random.default_rng(seed).permutation(len(y))
    x, y = x[order], y[order]
    return (x[:1197], y[:1197]), (x[1197:], y[1197:])


def model(layer_cls, **kw):
    return torch.nn.Sequential(layer_cls(SIZES[0], SIZES[1], **kw.get("l0", {})), torch.nn.ReLU(),
                               layer_cls(SIZES[1], SIZES[2], **kw.get("l1", {})))


class Replay:
    """NumPy softfp8.nn.Linear twins of a model's FP8 layers, checked at every step."""

    def __init__(self, net, recipe):
        self.layers = [net[0], net[2]]
        self.twins = [nn.Linear(l.in_features, l.out_features, recipe=recipe(), index=i)
                      for i, l in enumerate(self.layers)]
        self.grads = [None, None]
        self.elements = 0
        for i, l in enumerate(self.layers):
            l.register_forward_hook(self._hook(i))

    def _hook(self, i):
        def hook(mod, inp, out):          # keep the layer's output gradient
            if out.requires_grad:
                out.register_hook(lambda g: self.grads.__setitem__(i, g))
        return hook

    def forward(self, x):
        self.x = [x]
        for t, l in zip(self.twins, self.layers):
            t.weight = l.weight.detach().numpy().copy()
            t.bias = l.bias.detach().numpy().copy()
        h = self.twins[0](x)
        self.h = h
        self.out = self.twins[1](np.maximum(h, 0))
        return self.out

    def check(self, name, a, b):
        a = a.detach().numpy()
        if not np.array_equal(a.view(np.uint32), np.ascontiguousarray(b).view(np.uint32)):
            raise AssertionError(f"{name}: the PyTorch layer and its NumPy replay differ")
        self.elements += a.size

    def backward(self):
        g1 = self.twins[1].backward(self.grads[1].numpy())
        self.twins[0].backward(g1 * (self.h > 0), input_grad=False)
        for l, t in zip(self.layers, self.twins):
            self.check("weight gradient", l.weight.grad, t.weight_grad)
            self.check("bias gradient", l.bias.grad, t.bias_grad)


def train(net, tr, te, epochs, seed, replay=None):
    (x, y), (xt, yt) = tr, te
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    gen = np.random.default_rng(seed + 1)
    t0 = time.perf_counter()
    steps = 0
    for _ in range(epochs):
        order = gen.permutation(len(y))
        for k in range(0, len(y), 64):
            idx = order[k:k + 64]
            xb = torch.from_numpy(x[idx])
            out = net(xb)
            if replay is not None:
                replay.check("output", out, replay.forward(x[idx]))
            loss = torch.nn.functional.cross_entropy(out, torch.from_numpy(y[idx]))
            opt.zero_grad()
            loss.backward()
            if replay is not None:
                replay.backward()
            opt.step()
            steps += 1
    with torch.no_grad():
        out = net(torch.from_numpy(xt))
        test_loss = float(torch.nn.functional.cross_entropy(out, torch.from_numpy(yt)))
        acc = float((out.argmax(1).numpy() == yt).mean())
    return {"steps": steps, "loss": test_loss, "accuracy": acc, "seconds": time.perf_counter() - t0}


def run(recipe="delayed", epochs=20, seed=0):
    tr, te = data(seed)
    torch.manual_seed(seed)
    fp8 = model(Linear, l0={"recipe": RECIPES[recipe](), "index": 0}, l1={"recipe": RECIPES[recipe](), "index": 1})
    f32 = model(torch.nn.Linear)
    f32.load_state_dict(fp8.state_dict())           # the same initial weights
    replay = Replay(fp8, RECIPES[recipe])
    r8 = train(fp8, tr, te, epochs, seed, replay)
    r32 = train(f32, tr, te, epochs, seed)
    return r8, r32, replay.elements


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--recipe", choices=list(RECIPES), default="delayed")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    r8, r32, n = run(a.recipe, a.epochs, a.seed)
    print(f"digits, MLP {'-'.join(map(str, SIZES))}, {a.epochs} epochs ({r8['steps']} steps of 64), "
          f"SGD momentum 0.9, lr 0.1, seed {a.seed}")
    for name, r in ((f"fp8 ({a.recipe})", r8), ("float32", r32)):
        print(f"  {name:18s} test loss {r['loss']:.4f}  accuracy {100 * r['accuracy']:.1f}%  {r['seconds']:.1f} s")
    print(f"  replayed bit-exactly by softfp8.nn.Linear: {n} elements (outputs, weight and bias gradients)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
