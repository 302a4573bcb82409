"""softfp8.torch_nn.Linear: a PyTorch layer whose GEMMs follow a softfp8.nn.Recipe.

Each training step of a small two-layer network in PyTorch is replayed by NumPy
``softfp8.nn.Linear`` twins fed the same inputs, weights and output gradients: every
output, input gradient, weight gradient and bias gradient must agree bit for bit (the
NumPy layer's GEMMs are proven against Fractions in tests/tools/test_nn.py).  The float32
layer is compared with float64 arithmetic."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from softfp8 import nn  # noqa: E402
from softfp8.torch_nn import Linear  # noqa: E402

RECIPES = {
    "delayed": lambda: nn.Recipe("delayed", amax_history_len=4),
    "current-unit-h100": lambda: nn.Recipe("current", accumulation="h100"),
    "current-hfp8-acc": lambda: nn.Recipe("current", fmt="e4m3", grad_fmt="e5m2", gemm="scaled",
                                          accumulation=nn._gemm.Accumulation(accumulator="bfloat16", promote_every=16)),
    "mx": lambda: nn.Recipe("mx"),
    "mxfp4-sr": lambda: nn.Recipe("mx", kinds="mxfp4", stochastic_gradients=True, seed=7),
    "nvfp4-sr": lambda: nn.Recipe("nvfp4", stochastic_gradients=True, seed=3),
    "tiles": lambda: nn.Recipe("tiles"),
}


def _same(a, b, what):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else a
    assert a.dtype == b.dtype and a.shape == b.shape, what
    assert np.array_equal(a.view(np.uint32), np.ascontiguousarray(b).view(np.uint32)), what


@pytest.mark.parametrize("name", list(RECIPES))
def test_training_replayed_bit_exactly(name):
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    sizes = (40, 24, 5)
    layers = [Linear(a, b, recipe=RECIPES[name](), index=i) for i, (a, b) in enumerate(zip(sizes, sizes[1:]))]
    twins = [nn.Linear(a, b, recipe=RECIPES[name](), weight=l.weight.detach().numpy().copy(),
                       bias_init=l.bias.detach().numpy().copy(), index=i)
             for i, ((a, b), l) in enumerate(zip(zip(sizes, sizes[1:]), layers))]
    lr = np.float32(0.05)
    checked = 0
    for step in range(4):
        x = rng.standard_normal((16, sizes[0])).astype(np.float32)
        xt = torch.from_numpy(x).requires_grad_(True)
        h = torch.relu(layers[0](xt))
        out = layers[1](h)
        gy = torch.from_numpy(rng.standard_normal((16, sizes[-1])).astype(np.float32))
        out.backward(gy)
        # the NumPy twins, with the same inputs and gradients
        h0 = twins[0](x)
        _same(h, np.maximum(h0, 0), (name, step, "h"))
        o1 = twins[1](np.maximum(h0, 0))
        _same(out, o1, (name, step, "out"))
        g1 = twins[1].backward(gy.numpy())
        g0 = twins[0].backward(g1 * (h0 > 0))
        _same(xt.grad, g0, (name, step, "input grad"))
        for l, t in zip(layers, twins):
            _same(l.weight.grad, t.weight_grad, (name, step, "weight grad"))
            _same(l.bias.grad, t.bias_grad, (name, step, "bias grad"))
            checked += 2
            with torch.no_grad():           # plain SGD, the same float32 operations in both
                l.weight -= torch.from_numpy(lr * t.weight_grad)
                l.bias -= torch.from_numpy(lr * t.bias_grad)
                l.weight.grad = l.bias.grad = None
            t.weight = t.weight - lr * t.weight_grad
            t.bias = t.bias - lr * t.bias_grad
    assert checked == 16
    assert layers[0]._core.step == 4 and layers[0].state.step == 3   # the last pass computed


def test_float32_layer_and_leading_shapes():
    torch.manual_seed(0)
    layer = Linear(6, 3)
    ref = torch.nn.Linear(6, 3)
    assert layer.weight.shape == ref.weight.shape and layer.bias.shape == ref.bias.shape
    x = torch.randn(2, 4, 6, requires_grad=True)
    y = layer(x)
    assert y.shape == (2, 4, 3)
    w, b = layer.weight.detach().double(), layer.bias.detach().double()
    torch.testing.assert_close(y.double(), x.detach().double() @ w.T + b, rtol=1e-5, atol=1e-5)
    y.sum().backward()
    torch.testing.assert_close(x.grad.double(), torch.ones(2, 4, 3, dtype=torch.float64) @ w, rtol=1e-5,
                               atol=1e-5)
    torch.testing.assert_close(layer.weight.grad.double(),
                               torch.ones(8, 3, dtype=torch.float64).T @ x.detach().double().reshape(8, 6),
                               rtol=1e-5, atol=1e-4)
    assert "recipe=softfp8.nn.Recipe('none'" in repr(layer)


def test_bad_input():
    layer = Linear(4, 2, recipe=nn.Recipe("delayed"))
    with pytest.raises(TypeError, match="float64"):
        layer(torch.zeros(3, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"\(\.\.\., 4\).*\(3, 5\)"):
        layer(torch.zeros(3, 5))
    with pytest.raises(ValueError, match="cuda"):
        Linear(4, 2, device="cuda")
    with pytest.raises(TypeError, match="recipe"):
        Linear(4, 2, recipe="delayed")
