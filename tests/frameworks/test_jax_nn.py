"""softfp8.jax.Linear (docs/frameworks.md, "JAX layers"): the JAX layer under jit and grad
against the NumPy layer softfp8.nn.Linear -- outputs, data and weight gradients and the
delayed-scaling state bit for bit, step after step, for the per-tensor recipes -- the
float32 GEMM recipes against a float32 error bound of the exact product, inputs the
scale computation could flush (subnormal amaxes, infinities, NaN), and bad calls."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import nn

jax = pytest.importorskip("jax", reason="softfp8[jax] not installed")
import jax.numpy as jnp  # noqa: E402

import softfp8.jax as sj  # noqa: E402

FIN, FOUT, N = 40, 24, 8
BIT_EXACT = [
    nn.Recipe("delayed"),
    nn.Recipe("delayed", margin=1, amax_history_len=2, amax_compute_algo="most_recent"),
    nn.Recipe("current"),
    nn.Recipe("current", pow2=True, fmt="e5m2", grad_fmt="e4m3"),
    nn.Recipe("current", stochastic_gradients=True, seed=5),
    nn.Recipe("delayed", stochastic_gradients=True, seed=2**64 - 3, amax_history_len=1),
    nn.Recipe("delayed", accumulation=softfp8.Accumulation(accumulator=softfp8.bfloat16)),
    nn.Recipe("current", fmt="e3m4", grad_fmt="e5m2fnuz"),
    nn.Recipe("delayed", accumulation="h100"),
    nn.Recipe("current", accumulation="mi300x", fmt="e4m3fnuz", grad_fmt="e5m2fnuz"),
    nn.Recipe("delayed", accumulation=softfp8.Accumulation(accumulator=softfp8.bfloat16, order="kahan")),
    nn.Recipe("current", gemm="unit", accumulation=softfp8.Accumulation(accumulator=np.float16)),
    nn.Recipe("current", gemm="unit"),
]


def _bits(a):
    return np.asarray(a).view(np.uint32)


def _pair(recipe, bias=True, index=2):
    ref = nn.Linear(FIN, FOUT, bias, recipe=recipe, seed=3, index=index)
    lay = sj.Linear(FIN, FOUT, bias, recipe=recipe, index=index)
    return ref, lay


def _step_fn(lay):
    def f(params, state, x, gy):
        y, st = lay.apply(params, state, x)
        return jnp.sum(y * gy), (y, st)
    return jax.jit(jax.grad(f, argnums=(0, 1, 2), has_aux=True, allow_int=True))


def _run(recipe, xs, gys, bias=True):
    """Both layers through the same steps (the weights kept equal); per step the JAX and
    NumPy results."""
    ref, lay = _pair(recipe, bias)
    params, state = lay.init(seed=3), lay.init_state()
    assert np.array_equal(np.asarray(params["weight"]), ref.weight)
    step = _step_fn(lay)
    out = []
    for x, gy in zip(xs, gys):
        y = ref(x)
        gx = ref.backward(gy)
        (gp, gs, gxj), (yj, st) = step(params, state, x, gy)
        state = lay.next_state(st, gs)
        snap = {r: (sc.amax_history, sc.scale) for r, sc in ref._state.scalers.items()}
        out.append(((y, gx, ref.weight_grad, ref.bias_grad), (yj, gxj, gp["weight"], gp.get("bias")),
                    (ref.step, snap), state))
        # the same SGD update on both sides, so later steps see new weights and amaxes
        ref.weight = ref.weight - np.float32(0.5) * ref.weight_grad
        params = {**params, "weight": jnp.asarray(ref.weight)}
    return out


def _data(steps, seed=1, scale=3.0):
    rng = np.random.default_rng(seed)
    xs = [(rng.standard_normal((N, FIN)) * scale * (1 + t)).astype(np.float32) for t in range(steps)]
    gys = [(rng.standard_normal((N, FOUT)) * 1e-3).astype(np.float32) for t in range(steps)]
    return xs, gys


def _check_state(recipe, ref, state, t):
    """The JAX state after step t equals the NumPy layer's (step, per role history and scale)."""
    step, snap = ref
    assert int(state["step"]) == step == t + 1
    if recipe.scaling == "delayed":
        assert sorted(snap) == ["g", "w", "x"]
        for role, (hist, scale) in snap.items():
            assert np.array_equal(np.asarray(state[role]["history"], np.float64), hist), (t, role)
            assert _bits(np.float32(state[role]["scale"])) == _bits(scale), (t, role)


def _check_exact(recipe, out):
    cases = 0
    for t, ((y, gx, wg, bg), (yj, gxj, wgj, bgj), ref, state) in enumerate(out):
        for what, a, b in (("y", y, yj), ("grad_x", gx, gxj), ("weight_grad", wg, wgj)):
            assert np.array_equal(_bits(a), _bits(b)), f"{recipe} step {t}: {what} differs"
            cases += a.size
        # XLA sums the bias gradient in its own order: within the float32 bound
        np.testing.assert_allclose(np.asarray(bgj), bg, rtol=0, atol=N * 2.0 ** -23 * float(np.max(np.abs(bg))) + 1e-30)
        _check_state(recipe, ref, state, t)
    return cases


@pytest.mark.parametrize("recipe", BIT_EXACT, ids=repr)
def test_linear_equals_numpy_layer(recipe):
    """Four steps of forward and backward with SGD in between: y, grad_x, weight_grad and the
    delayed-scaling state of all three roles equal to softfp8.nn.Linear's, bit for bit."""
    xs, gys = _data(4)
    with np.errstate(all="ignore"):
        out = _run(recipe, xs, gys)
    assert _check_exact(recipe, out) == 4 * (N * FOUT + N * FIN + FOUT * FIN)


@pytest.mark.parametrize("recipe", [nn.Recipe("current"), nn.Recipe("delayed", amax_history_len=3)], ids=repr)
def test_inputs_the_scale_could_flush(recipe):
    """Activations whose amax is a float32 subnormal (XLA's threads flush those: the scale is
    computed in C in the IEEE environment), huge ones (the scale at float32's least
    subnormal), and steps with infinities and NaN (amax skips NaN; an infinite amax keeps
    the scale): still the NumPy layer's bits."""
    rng = np.random.default_rng(7)
    base = rng.standard_normal((N, FIN)).astype(np.float32)
    xs = [base * np.float32(2.0 ** -140), base * np.float32(2.0 ** 120), base.copy(), base * np.float32(2.0 ** -130)]
    xs[2][0, 0], xs[2][1, 1] = np.inf, np.nan
    gys = [(rng.standard_normal((N, FOUT)) * 2.0 ** -135).astype(np.float32) for _ in xs]
    with np.errstate(all="ignore"):
        out = _run(recipe, xs, gys, bias=False)
    for t, ((y, gx, wg, _), (yj, gxj, wgj, _), ref, state) in enumerate(out):
        for what, a, b in (("y", y, yj), ("grad_x", gx, gxj), ("weight_grad", wg, wgj)):
            assert np.array_equal(_bits(a), _bits(b)), f"step {t}: {what} differs"
        _check_state(recipe, ref, state, t)
    # the first step really had a subnormal amax, and its current scale is the float32 quotient
    amax = np.max(np.abs(xs[0]))
    assert 0 < amax < np.finfo(np.float32).tiny
    with np.errstate(over="ignore"):
        assert np.isinf(np.float32(448) / amax)       # the scale is float32's max: the clamp was taken


def _bound_ok(c, a, b):
    """|c - a @ b| <= k 2^-23 sum |a||b| elementwise (float32 GEMM, any order), exactly in float64."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = a64 @ b64           # k <= 64 products of 24-bit numbers: exact to 2^-50 relative, far below the bound
    mag = np.abs(a64) @ np.abs(b64)
    return np.all(np.abs(c.astype(np.float64) - exact) <= a.shape[1] * 2.0 ** -23 * mag + 1e-300)


@pytest.mark.parametrize("recipe", [nn.Recipe("delayed", gemm="dequantized"), nn.Recipe("none")], ids=repr)
def test_float32_gemm_recipes(recipe):
    """gemm "dequantized" and scaling "none" multiply float32 values in XLA's own order: the
    quantised operands are the NumPy layer's (its recorded values), the products within the
    float32 bound of their exact value, and the delayed state equal."""
    xs, gys = _data(3)
    ref, lay = _pair(recipe, bias=False)
    ref.record = True
    params, state = lay.init(seed=3), lay.init_state()
    step = _step_fn(lay)
    for x, gy in zip(xs, gys):
        ref(x)
        ref.backward(gy)
        (gp, gs, gxj), (yj, st) = step(params, state, x, gy)
        state = lay.next_state(st, gs)
        qx = ref.recorded["x"][1].reshape(x.shape)
        qg = ref.recorded["g"][1].reshape(gy.shape)
        qw = ref.recipe.values(ref._saved["q"][("w", None)]).T if recipe.scaling != "none" else ref.weight
        assert _bound_ok(np.asarray(yj), qx, qw.T)
        assert _bound_ok(np.asarray(gxj), qg, qw)
        assert _bound_ok(np.asarray(gp["weight"]), qg.T, qx)
    if recipe.scaling == "delayed":
        for role in "xwg":
            assert np.array_equal(np.asarray(state[role]["history"], np.float64),
                                  ref._state.scalers[role].amax_history)


BLOCKS = [nn.Recipe("mx", accumulation=softfp8.Accumulation(accumulator="float32")),
          nn.Recipe("mx", kinds={"x": "mxfp6_e2m3", "w": "mxfp4", "g": "mxfp6_e3m2"},
                    accumulation=softfp8.Accumulation(accumulator=softfp8.bfloat16, promote_every=32),
                    stochastic_gradients=True, seed=11),
          nn.Recipe("mx"), nn.Recipe("nvfp4"), nn.Recipe("nvfp4", stochastic_gradients=True, seed=4),
          nn.Recipe("mx", kinds="mxfp8_e5m2", stochastic_gradients=True, seed=9),
          nn.Recipe("mx", kinds="mxint8"),
          nn.Recipe("mx", kinds={"x": "mxint8", "w": "mxfp8_e4m3", "g": "mxint8"}, stochastic_gradients=True, seed=2),
          nn.Recipe("tiles"), nn.Recipe("tiles", stochastic_gradients=True, seed=3, grad_fmt="e4m3"),
          nn.Recipe("tiles", accumulation=softfp8.Accumulation(accumulator="float32", promote_every=128)),
          nn.Recipe("tiles", gemm="dequantized")]


@pytest.mark.parametrize("recipe", BLOCKS, ids=repr)
def test_block_scalings(recipe):
    """MX (MXINT8 too), NVFP4 and DeepSeek-tile recipes over 3 steps with SGD (the reductions 64, 32 and 32
    long: whole MX blocks; 256, 128, 128 for tiles): with gemm "scaled" (tiles; MX with an
    accumulation model) y, grad_x and weight_grad
    equal softfp8.nn.Linear's bit for bit; with gemm "dequantized" the products of XLA's dot
    lie within the float32 bound of the exact product of the NumPy layer's quantised
    operands (each block quantisation along its GEMM's reduction axis, stochastic gradients
    seeded per axis), so a different quantisation would be caught."""
    fin, fout, n = (256, 128, 128) if recipe.scaling == "tiles" else (64, 32, 32)
    rng = np.random.default_rng(5)
    ref = nn.Linear(fin, fout, False, recipe=recipe, seed=3, index=1)
    lay = sj.Linear(fin, fout, False, recipe=recipe, index=1)
    params, state = lay.init(seed=3), lay.init_state()
    step = _step_fn(lay)
    exact = recipe.gemm == "scaled"
    for t in range(3):
        x = (rng.standard_normal((n, fin)) * 2.0 ** rng.integers(-8, 8, (n, fin))).astype(np.float32)
        gy = (rng.standard_normal((n, fout)) * 1e-3).astype(np.float32)
        y = ref(x)
        gx = ref.backward(gy)
        (gp, _, gxj), (yj, state) = step(params, state, x, gy)
        if exact:
            for what, a, b in (("y", y, yj), ("grad_x", gx, gxj), ("weight_grad", ref.weight_grad, gp["weight"])):
                assert np.array_equal(_bits(a), _bits(b)), f"{recipe} step {t}: {what} differs"
        else:
            qv = {key: ref.recipe.values(v) for key, v in ref._saved["q"].items()}
            assert _bound_ok(np.asarray(yj), qv[("x", 1)], qv[("w", 0)])
            assert _bound_ok(np.asarray(gxj), qv[("g", 1)], qv[("w", 1)].T)
            assert _bound_ok(np.asarray(gp["weight"]).T, qv[("x", 0)].T, qv[("g", 0)])
        assert int(state["step"]) == ref.step == t + 1
        ref.weight = ref.weight - np.float32(0.5) * ref.weight_grad
        params = {"weight": jnp.asarray(ref.weight)}


def test_scaled_cast_against_fractions():
    """The scaled cast the layer runs (current scaling, E4M3, saturating), element by element
    against the exact product x * scale rounded to nearest even in Fractions, and the scale
    against RN_f32(448 / amax) in Fractions."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(4096) * np.exp2(rng.integers(-30, 30, 4096))).astype(np.float32)
    x[:4] = [0.0, -0.0, 2.0 ** -149, -3.0e38]
    fmt = softfp8.lookup("e4m3")
    env = sj._env("nearest_even", True, "after", 32, "e4m3", "test")
    target = int(np.float32(448).view(np.uint32).view(np.int32))
    codes, _, amax, scale, inv = softfp8._jax_ffi._scaled_convert(
        jnp.asarray(x), jnp.ones((), jnp.float32), jnp.zeros((2,), jnp.uint32), fmt, env, (1, target, 0), 1)
    amax = float(amax)
    assert amax == float(np.max(np.abs(x)))
    want = Fraction(448) / Fraction(amax)
    s = float(np.float32(scale))
    lo, hi = np.nextafter(np.float32(s), np.float32(0)), np.nextafter(np.float32(s), np.float32(np.inf))
    assert abs(Fraction(s) - want) <= min(abs(Fraction(float(lo)) - want), abs(Fraction(float(hi)) - want))
    assert float(np.float32(inv)) == float(np.float32(1) / np.float32(s))
    import ml_dtypes
    table = np.arange(0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)  # codes 0..0x7e
    vals = [Fraction(float(v)) for v in table]
    got = np.asarray(codes).view(np.uint8)
    for xi, gi in zip(x, got):
        mag = abs(Fraction(float(xi)) * Fraction(s))
        k = min(range(len(vals)), key=lambda c: (abs(vals[c] - mag), c % 2))   # nearest, ties to the even code
        want = k | (0x80 if np.signbit(xi) else 0)                              # beyond 448: 448 (saturating)
        assert gi == want, (xi, hex(gi), hex(want))
    assert got.size == 4096


def test_bad_calls():
    with pytest.raises(ValueError, match="needs the reduction dimension to be a multiple of it, got 40"):
        lay = sj.Linear(40, 32, recipe=nn.Recipe("mx", accumulation=softfp8.Accumulation(accumulator="float32")))
        lay.apply(lay.init(), lay.init_state(), jnp.zeros((32, 40), jnp.float32))
    with pytest.raises(ValueError, match=r"DeepSeek tiles need whole tiles \(multiples of 128\), got a x operand of "
                                         r"shape \(4, 100\)"):
        lay = sj.Linear(100, 128, recipe=nn.Recipe("tiles"))
        lay.apply(lay.init(), lay.init_state(), jnp.zeros((4, 100), jnp.float32))
    with pytest.raises(ValueError, match=r"max \* 2\*\*-0.5 is not a float32 value"):
        sj.Linear(4, 4, recipe=nn.Recipe("current", margin=0.5))
    with pytest.raises(TypeError, match="recipe must be a softfp8.nn.Recipe"):
        sj.Linear(4, 4, recipe="delayed")
    lay = sj.Linear(4, 3, recipe=nn.Recipe("current"))
    p, s = lay.init(), lay.init_state()
    with pytest.raises(ValueError, match=r"x must be float32 of shape \(N, 4\), got float32\(2, 5\)"):
        lay.apply(p, s, jnp.zeros((2, 5), jnp.float32))
    with pytest.raises(ValueError, match=r"weight must be float32 of shape \(3, 4\)"):
        lay.apply({"weight": jnp.zeros((4, 3), jnp.float32)}, s, jnp.zeros((2, 4), jnp.float32))
    # the C handler's own check of a given scale
    fmt = softfp8.lookup("e4m3")
    env = sj._env("nearest_even", True, "after", 32, "e4m3", "test")
    with pytest.raises(Exception, match="scaled_convert: scale 0xbf800000 at flat index 0: scales must be positive"):
        jax.block_until_ready(softfp8._jax_ffi._scaled_convert(
            jnp.ones(3, jnp.float32), -jnp.ones((), jnp.float32), jnp.zeros((2,), jnp.uint32), fmt, env, (0, 0, 0), 1))
