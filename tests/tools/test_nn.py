"""softfp8.nn: the recipe object and the NumPy linear layer.

Each GEMM the layer computes is checked against a reference written here from the
recipe's definition (docs/training.md, "softfp8.nn"): operands decoded by ml_dtypes (an
independent decoder), dot products summed exactly in Fractions and rounded once to float32
by a nearest-even rule written here, scales from the amax rule of docs/training.md."""
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import nn

ml_dtypes = pytest.importorskip("ml_dtypes")

E4M3_MAX, E5M2_MAX = 448.0, 57344.0
ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def _rn_f32(x):
    """Fraction x rounded to nearest-even float32 (x in float32's normal range or 0)."""
    if x == 0:
        return np.float32(0)
    f = np.float32(float(x))           # within one ulp
    cands = (f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf)))
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - x), int(np.array(c).view(np.uint32)) & 1))


def _decode(codes, name):
    return np.ascontiguousarray(codes).view(np.uint8).view(ML[name]).astype(np.float64)


def _scale(amax, fmax):
    """The per-tensor scale: RN_f32(fmax / amax) (docs/training.md, current scaling)."""
    return _rn_f32(Fraction(fmax) / Fraction(float(amax)))


def _ref_codes(t, scale, name):
    """E4M3 / E5M2 codes of t * scale, saturating, nearest even (by ml_dtypes); t * scale
    is exact in binary64 for float32 t and scale."""
    fmax = E4M3_MAX if name == "e4m3" else E5M2_MAX
    v = np.clip(t.astype(np.float64) * np.float64(scale), -fmax, fmax)
    return v.astype(ML[name]).view(np.uint8)


def _data(shape, seed, spread=3.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * np.exp(rng.uniform(-spread, spread, shape))).astype(np.float32)


def test_float32_layer_forward_backward():
    x = _data((7, 5), 0)
    layer = nn.Linear(5, 3, seed=4)
    w, b = layer.weight.astype(np.float64), layer.bias.astype(np.float64)
    assert layer.weight.shape == (3, 5) and layer.bias.shape == (3,)
    assert np.all(np.abs(w) <= 1 / np.sqrt(5))
    y = layer(x)
    assert y.dtype == np.float32 and y.shape == (7, 3)
    np.testing.assert_allclose(y, x.astype(np.float64) @ w.T + b, rtol=1e-5, atol=1e-5)
    gy = _data((7, 3), 1)
    gx = layer.backward(gy)
    np.testing.assert_allclose(gx, gy.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer.weight_grad, gy.astype(np.float64).T @ x, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(layer.bias_grad, gy.astype(np.float64).sum(0), rtol=1e-5, atol=1e-6)
    assert layer.weight_grad.shape == (3, 5) and layer.step == 1


def test_current_scaling_unit_gemm_exact():
    """gemm='unit': RN_f32(exact dot of the codes) * RN_f32(sa_inv * sb_inv), every GEMM."""
    x, gy = _data((6, 9), 2), _data((6, 4), 3)
    layer = nn.Linear(9, 4, recipe=nn.Recipe("current", fmt="e4m3", grad_fmt="e4m3", gemm="unit"), seed=1,
                      bias=False)
    w = layer.weight.copy()
    y = layer(x)
    gx = layer.backward(gy)
    sx, sw, sg = (_scale(np.max(np.abs(t)), E4M3_MAX) for t in (x, w, gy))
    cx, cw, cg = (_decode(_ref_codes(t, s, "e4m3"), "e4m3") for t, s in ((x, sx), (w, sw), (gy, sg)))
    inv = {k: np.float32(1) / s for k, s in (("x", sx), ("w", sw), ("g", sg))}
    cases = 0
    for a, b, (ka, kb), got in ((cx, cw.T, "xw", y), (cg, cw, "gw", gx), (cx.T, cg, "xg", layer.weight_grad.T)):
        f = np.float32(inv[ka] * inv[kb])
        for (i, j), v in np.ndenumerate(got):
            dot = sum(Fraction(float(a[i, k])) * Fraction(float(b[k, j])) for k in range(a.shape[1]))
            assert v == np.float32(_rn_f32(dot) * f), (ka + kb, i, j)
            cases += 1
    assert cases == 6 * 4 + 6 * 9 + 9 * 4


def test_delayed_scaling_history_and_gemm():
    """The scale used at step t comes from the amaxes of earlier steps (history of 2)."""
    recipe = nn.Recipe("delayed", amax_history_len=2, gemm="scaled")
    layer = nn.Linear(8, 3, recipe=recipe, seed=0, bias=False)
    xs = [_data((5, 8), 10 + k, spread=1.0) * np.float32(4.0 ** k) for k in range(4)]
    amaxes = []
    for k, x in enumerate(xs):
        w = layer.weight.copy()
        y = layer(x)
        # scale of x at step k: 1.0 at first, then from the max amax of steps k-2 .. k-1
        want = np.float32(1.0) if k == 0 else _scale(max(amaxes[-2:]), E4M3_MAX)
        amaxes.append(float(np.max(np.abs(x))))
        sw = np.float32(1.0) if k == 0 else _scale(float(np.max(np.abs(w))), E4M3_MAX)
        cx = _decode(_ref_codes(x, want, "e4m3"), "e4m3")
        cw = _decode(_ref_codes(w, sw, "e4m3"), "e4m3")
        s = np.float32((np.float32(1) / want) * (np.float32(1) / sw))
        for (i, j), v in np.ndenumerate(y):
            dot = sum(Fraction(float(cx[i, q])) * Fraction(float(cw[j, q])) for q in range(8))
            assert v == _rn_f32(dot * Fraction(float(s))), (k, i, j)
        layer.backward(np.ones_like(y), input_grad=False)
    assert layer.step == 4
    hist = layer._state.scalers["x"].amax_history
    assert list(hist) == [0.0, amaxes[-1]]     # slot 0 cleared for the next step, then the last


def test_tiles_gemm_against_fractions():
    """DeepSeek tiles: sum over 128-blocks of the codes' exact products times RN_f32(sa * sb),
    rounded once; K = 200 crosses a tile boundary (a partial tile of 72)."""
    x, gy = _data((3, 200), 5), _data((3, 2), 6)
    layer = nn.Linear(200, 2, recipe=nn.Recipe("tiles"), seed=2, bias=False)
    y = layer(x)
    layer.backward(gy)
    q = layer._saved["q"]
    qx, qw = q[("x", 1)].block, q[("w", 0)].block
    assert qx.scales.shape == (3, 2) and qw.scales.shape == (1, 2)      # w: tiles of W (2, 200)
    ax = _decode(qx.elements.view(np.uint8), "e4m3")
    aw = _decode(qw.elements.view(np.uint8), "e4m3")
    for (i, j), v in np.ndenumerate(y):
        tot = Fraction(0)
        for kb in range(2):
            s = Fraction(float(np.float32(qx.scales[i, kb] * qw.scales[j // 128, kb])))
            ks = range(128 * kb, min(200, 128 * kb + 128))
            tot += s * sum(Fraction(float(ax[i, k])) * Fraction(float(aw[j, k])) for k in ks)
        assert v == _rn_f32(tot), (i, j)
    # the scales themselves: RN_f32(amax / 448) per tile
    for i in range(3):
        for kb in range(2):
            amax = np.max(np.abs(x[i, 128 * kb:128 * kb + 128]))
            assert qx.scales[i, kb] == _rn_f32(Fraction(float(amax)) / 448)


@pytest.mark.parametrize("scaling", ["mx", "nvfp4"])
def test_block_recipes_blocks_along_each_reduction_axis(scaling):
    """Block formats quantise each tensor per GEMM along that GEMM's reduction axis; the
    dequantised float32 GEMM equals the float64 product of the dequantised operands up to
    float32 summation."""
    x, gy = _data((40, 70), 7, 1.0), _data((40, 33), 8, 1.0)
    layer = nn.Linear(70, 33, recipe=nn.Recipe(scaling), seed=3, bias=False)
    y = layer(x)
    gx = layer.backward(gy)
    q = layer._saved["q"]
    assert set(q) == {("x", 1), ("w", 0), ("x", 0), ("g", 0), ("g", 1), ("w", 1)}
    blk = 16 if scaling == "nvfp4" else 32
    for (role, axis), arr in q.items():
        assert arr.axes == (axis,) and arr.blocks == (blk,), (role, axis)
    xv = q[("x", 1)].dequantize(np.float64)
    wv = q[("w", 0)].dequantize(np.float64)
    np.testing.assert_allclose(y, xv @ wv, rtol=1e-5, atol=1e-5 * np.abs(xv @ wv).max())
    gv = q[("g", 1)].dequantize(np.float64)
    wv1 = q[("w", 1)].dequantize(np.float64)
    np.testing.assert_allclose(gx, gv @ wv1.T, rtol=1e-5, atol=1e-5 * np.abs(gv @ wv1.T).max())
    assert gx.shape == x.shape and layer.weight_grad.shape == (33, 70)


def test_mx_exact_block_gemm_matches_mx_matmul_definition():
    """scaling='mx', gemm='scaled': the GEMM is mx.matmul (exact block products)."""
    x = _data((4, 64), 9, 1.0)
    layer = nn.Linear(64, 5, recipe=nn.Recipe("mx", gemm="scaled"), seed=5, bias=False)
    y = layer(x)
    q = layer._saved["q"]
    xa, wa = q[("x", 1)], q[("w", 0)]
    xv, wv = xa.dequantize(np.float64), wa.dequantize(np.float64)
    for (i, j), v in np.ndenumerate(y):      # products of MX values are exact in binary64
        dot = sum(Fraction(float(xv[i, k])) * Fraction(float(wv[k, j])) for k in range(64))
        assert v == _rn_f32(dot), (i, j)


def test_stochastic_gradients_are_seeded_per_layer_and_step():
    def run(seed, index):
        layer = nn.Linear(32, 16, recipe=nn.Recipe("mx", kinds="mxfp4", stochastic_gradients=True, seed=seed),
                          seed=0, index=index)
        x, gy = _data((8, 32), 1, 1.0), _data((8, 16), 2, 1.0)
        out = []
        for _ in range(2):
            layer(x)
            out.append(layer.backward(gy))
        return out
    a, b = run(1, 0), run(1, 0)
    assert all(np.array_equal(p, q) for p, q in zip(a, b))
    assert not np.array_equal(a[0], a[1])            # another step, other random bits
    assert not np.array_equal(run(2, 0)[0], a[0])
    assert not np.array_equal(run(1, 1)[0], a[0])


def test_profile_recipe_uses_the_unit():
    r = nn.Recipe("current", accumulation="h100")
    assert r.gemm == "unit" and isinstance(r.accumulation, softfp8.MatrixUnit)
    x = _data((4, 64), 3, 1.0)
    layer = nn.Linear(64, 8, recipe=r, seed=0, bias=False)
    y = layer(x)
    q = layer._saved["q"]
    qx, qw = q[("x", None)], q[("w", None)]
    want = softfp8.matmul(qx.codes, qw.codes, out_dtype=np.float32, accumulation=r.accumulation)
    assert np.array_equal(y, want * (qx.scale_inv * qw.scale_inv))


@pytest.mark.parametrize("kwargs, exc, mention", [
    ({"scaling": "fp8"}, ValueError, "'fp8'"),
    ({"scaling": "mx", "gemm": "unit"}, ValueError, "scaling='mx'"),
    ({"scaling": "nvfp4", "gemm": "scaled"}, ValueError, "NVFP4"),
    ({"scaling": "none", "gemm": "scaled"}, ValueError, "'scaled'"),
    ({"scaling": "current", "accumulation": "h100", "gemm": "scaled"}, ValueError, "gemm='unit'"),
    ({"scaling": "current", "accumulation": "h99"}, ValueError, "h99"),
    ({"scaling": "mx", "kinds": "mxfp9"}, ValueError, "mxfp9"),
    ({"scaling": "current", "fmt": "e9m9"}, ValueError, "e9m9"),
    ({"scaling": "tiles", "fmt": "float16"}, ValueError, "float16"),
    ({"scaling": "delayed", "amax_history_len": 0}, ValueError, "0"),
    ({"scaling": "mx", "accumulation": softfp8.Accumulation(), "gemm": "dequantized"}, ValueError, "dequantized"),
])
def test_bad_recipes(kwargs, exc, mention):
    with pytest.raises(exc, match=None) as info:
        nn.Recipe(**kwargs)
    assert mention in str(info.value)


def test_bad_layer_input():
    layer = nn.Linear(4, 2)
    with pytest.raises(RuntimeError, match="before forward"):
        layer.backward(np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match=r"\(N, 4\).*\(3, 5\)"):
        layer(np.zeros((3, 5), np.float32))
    with pytest.raises(TypeError, match="complex"):
        layer(np.zeros((3, 4), np.complex64))
    layer(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="2 rows"):
        layer.backward(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"weight must have shape \(2, 4\)"):
        nn.Linear(4, 2, weight=np.zeros((4, 2)))
    with pytest.raises(TypeError, match="recipe"):
        nn.Linear(4, 2, recipe="delayed")
    with pytest.raises(ValueError, match=">= 1"):
        nn.Linear(0, 2)
