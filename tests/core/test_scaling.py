"""softfp8.scaling (docs/training.md "Per-tensor scaling" and "Loss scaling").

Expected values come from exact references written here from the sources (Transformer
Engine's scale formula and delayed-scaling update, Graphcore's eq. (3), the Tesla formats'
max, PyTorch GradScaler's rule) with Python fractions, and from tests.models.rational for
the one rounding of each scaled value -- never from softfp8.scaling itself.  The loss
scaler sees real flags raised by real softfp8 operations.
"""
from __future__ import annotations

import math
from collections import deque
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import scaling as S

# the loss-scaler tests overflow on purpose: NumPy's cast warnings are expected there
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

from ..models import rational as ref

F32_MAX = Fraction(float(np.finfo(np.float32).max))
MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")


# --------------------------------------------------------------------------
# independent references
# --------------------------------------------------------------------------

def ref_f32(q):
    """Nearest-even float32 of a positive Fraction, by comparing the exact distances of
    the float32 candidates around float(q) (values past float32's max: inf)."""
    if q >= F32_MAX + Fraction(2) ** 103:          # half an ulp past max: overflow
        return math.inf
    c = np.float32(float(min(q, F32_MAX)))
    cands = {c, np.nextafter(c, np.float32(np.inf)), np.nextafter(c, np.float32(0))}
    cands = [v for v in cands if np.isfinite(v)]
    best = min(cands, key=lambda v: (abs(Fraction(float(v)) - q),
                                     int(np.array(v, np.float32).view(np.uint32)) & 1))
    return float(best)


def ref_scale(amax, fmt_max, margin=0, pow2=False, eps=0.0, fallback=1.0):
    """Transformer Engine's compute_scale_from_amax / delayed-scaling update, exactly."""
    a = float(amax)
    if a < eps:
        a = eps
    if math.isnan(a) or math.isinf(a) or a == 0:
        return fallback
    s = ref_f32(Fraction(fmt_max) / Fraction(a) / Fraction(2) ** margin)
    if s == math.inf:
        s = float(F32_MAX)
    if pow2:
        e = 0
        while 2.0 ** (e + 1) <= s:
            e += 1
        while 2.0 ** e > s:
            e -= 1
        s = 2.0 ** e
    return s


def ref_floor_log2(q):
    b = 0
    while Fraction(2) ** (b + 1) <= q:
        b += 1
    while Fraction(2) ** b > q:
        b -= 1
    return b


def ref_fmt(fmt):
    """The rational model's format for a softfp8 format (by parameters)."""
    return ref.make_format(fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.specials, fmt.subnormals,
                           fmt.signed, fmt.saturate)


def ref_round(rf, v, mode, saturate=True):
    """Code of the exact value v (Fraction, or a float special) rounded once into rf."""
    if isinstance(v, float):
        if math.isnan(v):
            code = ref.deliver(rf, ("N", None, False), mode, saturate)[0]
            return None if ref.is_nan(rf, code) else code   # a NaN: compared by class
        sign = 1 if v < 0 else 0
        return ref.deliver(rf, ("I", sign), mode, saturate)[0]
    return ref.round_pack(rf, 1 if v < 0 else 0, abs(v), mode, saturate)[0]


def exact_product(x, s):
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return x
    if x == 0:
        return Fraction(0)   # zero sign handled by the caller
    return Fraction(x) * Fraction(float(s))


def check_codes(sa, xs, scale, fmt, mode, saturate=True):
    """Compare every code of ScaledArray sa with the exact reference; returns the count."""
    rf = ref_fmt(fmt)
    codes = np.asarray(sa.codes).view(fmt.storage).ravel()
    xs = np.asarray(xs, dtype=np.float64).ravel()
    sc = np.broadcast_to(np.asarray(scale, np.float64), np.shape(sa.codes)).ravel()
    for i, (x, s) in enumerate(zip(xs, sc)):
        v = exact_product(x, s)
        if isinstance(v, Fraction) and v == 0:
            want = rf.sign_bit if math.copysign(1.0, x) < 0 else 0
        else:
            want = ref_round(rf, v, mode, saturate)
        if want is None:
            assert fmt.classify(int(codes[i])) in ("qnan", "snan"), (i, x, s)
        else:
            assert int(codes[i]) == want, (fmt.name, mode, i, x, s, hex(int(codes[i])), hex(want))
    return len(xs)


def ref_value(fmt, code):
    d = ref.decode(ref_fmt(fmt), int(code))
    return d.value if d.kind == "finite" else None


# --------------------------------------------------------------------------
# amax
# --------------------------------------------------------------------------

def test_amax_nan_inf_empty_axis():
    x = np.array([[1.0, -3.0, np.nan], [0.001, 2.5, -7.0]])
    assert S.amax(x) == 7.0
    assert S.amax(x, nan="propagate") != S.amax(x, nan="propagate")      # NaN
    np.testing.assert_array_equal(S.amax(x, axis=1), [3.0, 7.0])
    np.testing.assert_array_equal(S.amax(x, axis=0, nan="propagate"), [1.0, 3.0, np.nan])
    assert S.amax(np.array([np.nan, np.nan])) == 0.0
    assert S.amax(np.array([1.0, -np.inf])) == math.inf
    assert S.amax(np.zeros((0, 3))) == 0.0
    assert S.amax(np.zeros((2, 3))) == 0.0
    assert S.amax(x, axis=1, keepdims=True).shape == (2, 1)
    # softfp8 arrays: the exact value of the largest magnitude code
    e = np.array([-448.0, 1.5, 0.001953125], dtype=np.float64).astype(softfp8.e4m3.dtype)
    assert S.amax(e) == 448.0
    assert S.amax(np.float32(-0.1)) == float(np.float32(0.1))
    with pytest.raises(ValueError, match="'mean'"):
        S.amax(x, nan="mean")
    with pytest.raises(TypeError, match="bool"):
        S.amax(np.array([True]))


# --------------------------------------------------------------------------
# compute_scale
# --------------------------------------------------------------------------

def _amax_cases(rng):
    a = list(rng.uniform(0, 1, 60) * 10.0 ** rng.integers(-40, 38, 60))
    a += list(np.abs(rng.standard_normal(30)).astype(np.float32).astype(np.float64))
    a += [1.0, 448.0, 3.0, 7.0, 1e-45, 1e-40, 2.0 ** -149, 1e-38, 1e38, 3.4e38, 1e300, 1e-300,
          0.0, math.inf, math.nan, 5e-324]
    return np.array(a)


@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.e5m2, softfp8.bfloat16,
                                 softfp8.cfloat8_143(bias=20)], ids=lambda f: f.name)
def test_compute_scale_matches_reference(fmt):
    rng = np.random.default_rng(11)
    amaxes = _amax_cases(rng)
    n = 0
    for margin in (0, 3, -2):
        for pow2 in (False, True):
            got = S.compute_scale(amaxes, fmt, margin=margin, pow2=pow2)
            assert got.dtype == np.float32 and got.shape == amaxes.shape
            for a, g in zip(amaxes, got):
                want = ref_scale(a, Fraction(fmt.max), margin, pow2)
                if want == 0.0:                     # below float32: its smallest subnormal
                    want = 2.0 ** -149
                assert float(g) == want, (fmt.name, a, margin, pow2, float(g), want)
                n += 1
    assert n == 6 * len(amaxes)


def test_compute_scale_edges_and_numpy_float32_division():
    e4 = softfp8.e4m3
    # TE's rule: 0, inf, NaN -> 1; tiny amax -> float32 max; eps floors amax
    np.testing.assert_array_equal(S.compute_scale([0.0, np.inf, np.nan], e4), [1, 1, 1])
    assert S.compute_scale(1e-45, e4) == np.finfo(np.float32).max
    assert S.compute_scale(0.0, e4, eps=1.0) == np.float32(448.0)
    assert S.compute_scale(1e-30, e4, eps=2.0) == np.float32(224.0)
    assert S.compute_scale(np.nan, e4, eps=2.0) == 1.0
    # pow2 keeps the power of two of the float32 scale (mantissa cleared)
    assert S.compute_scale(3.0, e4, pow2=True) == 128.0
    assert S.compute_scale(3.0, e4) == np.float32(448.0) / np.float32(3.0)
    # margin 0 and float32 amax: exactly TE's float32 division __fdiv_rn(max, amax)
    rng = np.random.default_rng(5)
    a32 = (rng.uniform(0.5, 1, 2000) * 2.0 ** rng.integers(-100, 100, 2000)).astype(np.float32)
    for fmt in (softfp8.e4m3, softfp8.e5m2):
        want = np.float32(fmt.max) / a32
        np.testing.assert_array_equal(S.compute_scale(a32, fmt), want)
    with pytest.raises(ValueError, match="-1"):
        S.compute_scale(-1.0, e4)
    with pytest.raises(ValueError, match="eps"):
        S.compute_scale(1.0, e4, eps=-1)
    with pytest.raises(TypeError, match="margin"):
        S.compute_scale(1.0, e4, margin="3")
    with pytest.raises(TypeError, match="fmt"):
        S.compute_scale(1.0, np.float32)


# --------------------------------------------------------------------------
# quantize: every scaled value rounded once from the exact product
# --------------------------------------------------------------------------

def _hard_inputs(fmt, scale, rng):
    """float64 inputs whose exact products with scale sit at or a hair off the format's
    rounding boundaries (midpoints), plus random 53-bit values, specials and extremes."""
    rf = ref_fmt(fmt)
    vals = []
    for c in rng.integers(0, rf.max_code, 40):
        lo = ref.decode(rf, int(c)).value
        hi = ref.decode(rf, int(c) + 1).value
        mid = (lo + hi) / 2
        x = float(mid / Fraction(float(scale)))          # product within 2^-53 of mid
        m, e = math.frexp(x)
        x30 = math.ldexp(round(m * 2 ** 30), e - 30)     # 30 significant bits: 54-bit product
        vals += [x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf), -x, x30]
    vals += list(rng.standard_normal(40) * float(fmt.max) / float(scale))
    vals += [0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 1e-300, 5e-324,
             3 * float(fmt.max) / float(scale), float(fmt.min_subnormal) / float(scale) / 3]
    return np.array(vals)


@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.e5m2, softfp8.cfloat8_152(bias=9),
                                 softfp8.float16], ids=lambda f: f.name)
def test_quantize_exact_given_scale_all_modes(fmt):
    rng = np.random.default_rng(3)
    n = 0
    for scale in (np.float32(1.0), np.float32(0.3), np.float32(3.7e5), np.float32(2.0 ** -20)):
        xs = _hard_inputs(fmt, scale, rng)
        for mode in MODES:
            sa = S.quantize(xs, fmt, scale=scale, rounding=mode)
            assert sa.codes.dtype == fmt.dtype and sa.scale == scale and sa.amax is None
            n += check_codes(sa, xs, scale, fmt, mode)
    assert n == 4 * 6 * 251


def test_quantize_not_saturating_and_input_dtypes():
    e4 = softfp8.e4m3
    x = np.array([1000.0, -1000.0, 1.0])
    sa = S.quantize(x, e4, scale=1.0, saturate=None)     # e4m3's default: no saturation
    assert [e4.classify(int(c)) for c in sa.codes.view(np.uint8)[:2]] == ["qnan", "qnan"]
    sa = S.quantize(x, e4, scale=1.0)                    # default: saturate
    np.testing.assert_array_equal(sa.codes.astype(np.float64), [448, -448, 1])
    # float32, float16, integer and softfp8 inputs give the same codes as their float64 values
    r = np.random.default_rng(2).standard_normal(64)
    for src in (np.float32, np.float16, softfp8.bfloat16.dtype):
        xa = r.astype(src)
        a = S.quantize(xa, e4, scale=np.float32(5.3))
        b = S.quantize(xa.astype(np.float64), e4, scale=np.float32(5.3))
        np.testing.assert_array_equal(a.codes.view(np.uint8), b.codes.view(np.uint8))
        check_codes(a, xa.astype(np.float64), np.float32(5.3), e4, "nearest_even")
    ints = S.quantize(np.arange(-5, 6), e4, scale=0.5)
    np.testing.assert_array_equal(ints.codes.astype(np.float64), np.arange(-5, 6) * 0.5)


def test_quantize_current_scaling_per_tensor_and_per_axis():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 5)) * np.array([1e-3, 1, 50, 1e4, 3e-7])
    fmt = softfp8.e5m2
    sa = S.quantize(x, fmt)
    want = ref_scale(np.max(np.abs(x)), Fraction(fmt.max))
    assert sa.scale.dtype == np.float32 and sa.scale.shape == () and float(sa.scale) == want
    assert sa.amax == np.max(np.abs(x))
    check_codes(sa, x, sa.scale, fmt, "nearest_even")
    # per channel (axis=1: one scale per column)
    sa = S.quantize(x, fmt, axis=1, margin=1)
    assert sa.scale.shape == (1, 5) and sa.axis == 1
    for j in range(5):
        assert float(sa.scale[0, j]) == ref_scale(np.max(np.abs(x[:, j])), Fraction(fmt.max), 1)
    check_codes(sa, x, sa.scale, fmt, "nearest_even")
    # the largest magnitude of each column lands at or below max * 2^-margin
    assert np.all(np.abs(sa.codes.astype(np.float64)).max(axis=0) <= fmt.max / 2)
    sa = S.quantize(x[None], fmt, axis=(0, 2))
    assert sa.scale.shape == (1, 1, 5)
    # all-zero tensor: scale 1, zeros; inf / NaN inside: the amax ignores NaN, inf -> scale 1
    z = S.quantize(np.zeros((3, 3)), fmt)
    assert z.scale == 1.0 and not np.any(z.codes.view(np.uint8))
    w = S.quantize(np.array([2.0, np.nan, -1.0]), fmt)
    assert float(w.scale) == ref_scale(2.0, Fraction(fmt.max))
    w = S.quantize(np.array([2.0, np.inf]), fmt)
    assert w.scale == 1.0
    with pytest.raises(ValueError, match="out of bounds"):
        S.quantize(x, fmt, axis=2)
    with pytest.raises(ValueError, match="does not broadcast"):
        S.quantize(x, fmt, scale=np.ones(6, np.float32))
    with pytest.raises(ValueError, match="-2.0"):
        S.quantize(x, fmt, scale=-2.0)


def test_dequantize_rounds_once():
    rng = np.random.default_rng(9)
    x = rng.standard_normal(300) * 10
    fmt = softfp8.e4m3
    sa = S.quantize(x, fmt, scale=np.float32(3.3))
    assert sa.scale_inv == np.float32(1) / np.float32(3.3)
    d32, d64 = sa.dequantize(), sa.dequantize(np.float64)
    assert d32.dtype == np.float32 and d64.dtype == np.float64
    for c, g32, g64 in zip(sa.codes.view(np.uint8), d32, d64):
        q = ref_value(fmt, c) / Fraction(float(np.float32(3.3)))
        want32 = math.copysign(ref_f32(abs(q)), q) if q else 0.0
        assert float(g32) == want32
        assert Fraction(float(g64)) == Fraction(float(q)) if q else g64 == 0
    with pytest.raises(ValueError, match="float16"):
        sa.dequantize(np.float16)


def test_quantize_stochastic_brackets_and_reproducible():
    rng = np.random.default_rng(4)
    fmt = softfp8.e4m3
    x = rng.standard_normal(400) * 30
    s = np.float32(1.7)
    a = S.quantize(x, fmt, scale=s, rounding="stochastic", seed=42)
    b = S.quantize(x, fmt, scale=s, rounding="stochastic", seed=42)
    c = S.quantize(x, fmt, scale=s, rounding="stochastic", seed=43)
    np.testing.assert_array_equal(a.codes.view(np.uint8), b.codes.view(np.uint8))
    assert np.any(a.codes.view(np.uint8) != c.codes.view(np.uint8))
    rf = ref_fmt(fmt)
    ups = 0
    for xi, code in zip(x, a.codes.view(np.uint8)):
        v = Fraction(float(xi)) * Fraction(float(s))
        down = ref_round(rf, v, "toward_zero")
        up = ref_round(rf, v, "upward" if v > 0 else "downward")
        assert int(code) in (down, up)
        ups += int(code) == up != down
    assert 100 < ups < 300
    # in a seeded context, without seed=: the context's stream
    with softfp8.rounding("stochastic", seed=42):
        d = S.quantize(x, fmt, scale=s)
    with softfp8.rounding("stochastic", seed=42):
        e = S.quantize(x, fmt, scale=s)
    np.testing.assert_array_equal(d.codes.view(np.uint8), e.codes.view(np.uint8))


def test_quantize_raises_the_cast_flags():
    with softfp8.collect_flags() as fl:
        S.quantize(np.array([1000.0]), softfp8.e4m3, scale=1.0)
    assert fl.overflow and fl.inexact
    with softfp8.collect_flags() as fl:
        S.quantize(np.array([1.0, 2.0]), softfp8.e4m3, scale=1.0)
    assert fl.flags == 0


# --------------------------------------------------------------------------
# delayed scaling, step by step
# --------------------------------------------------------------------------

class RefDelayed:
    """Written from TE's docs: the scale of step t comes from the amaxes of the L steps
    before t (max or the most recent); 0 / inf / NaN keep the previous scale."""

    def __init__(self, L, algo, fmt_max, margin):
        self.hist = deque(maxlen=L)
        self.algo, self.fmt_max, self.margin = algo, fmt_max, margin
        self.scale = 1.0

    def step(self, a):
        used = self.scale
        self.hist.append(a)
        if self.algo == "max":
            finite = [v for v in self.hist if not math.isnan(v)]
            m = max(finite) if finite else 0.0
        else:
            m = self.hist[-1]
        self.scale = ref_scale(m, self.fmt_max, self.margin, fallback=self.scale)
        return used


@pytest.mark.parametrize("algo", ["max", "most_recent"])
@pytest.mark.parametrize("L", [1, 3, 16])
def test_delayed_scaling_history(algo, L):
    fmt = softfp8.e4m3
    rng = np.random.default_rng(L)
    mags = list(10.0 ** rng.uniform(-3, 3, 30))
    mags[5] = 0.0                      # an all-zero tensor
    mags[9] = math.inf                 # a tensor holding an infinity
    mags[17] = 1e-44                   # scale overflows float32
    dl = S.DelayedScaling(margin=2, amax_history_len=L, amax_compute_algo=algo, fmt=fmt)
    rd = RefDelayed(L, algo, Fraction(fmt.max), 2)
    assert dl.scale == 1.0
    for t, m in enumerate(mags):
        x = rng.standard_normal(8) * m
        if m == 0:
            x[:] = 0
        elif math.isinf(m):
            x[0] = math.inf
        else:
            x[0] = m                   # amax exactly m
        a = float(np.max(np.abs(x)))
        used = rd.step(a)
        sa = dl.quantize(x)
        assert float(sa.scale) == used, (t, float(sa.scale), used)
        assert float(dl.scale) == rd.scale
        assert dl.amax_history[-1] == a and dl.amax_history[0] == 0 or L == 1
        check_codes(sa, x, sa.scale, fmt, "nearest_even")
    # NaN amaxes recorded by hand: "max" skips them, "most_recent" keeps the scale
    for a in (float("nan"), 0.5, float("nan")):
        before = float(dl.scale)
        rd.step(a)
        dl.record(a)
        dl.update()
        assert float(dl.scale) == rd.scale
        if algo == "most_recent" and a != a:
            assert rd.scale == before


def test_delayed_scaling_record_then_update_and_bad_args():
    dl = S.DelayedScaling(amax_history_len=4, fmt=softfp8.e5m2)
    dl.record(3.0)
    dl.record(5.0)
    dl.record(4.0)            # the step's slot keeps the max
    np.testing.assert_array_equal(dl.amax_history, [5.0, 0, 0, 0])
    dl.update()
    np.testing.assert_array_equal(dl.amax_history, [0, 0, 0, 5.0])
    assert float(dl.scale) == ref_f32(Fraction(57344, 5))
    sa = dl.quantize(np.ones(3), update=False)
    assert float(sa.scale) == ref_f32(Fraction(57344, 5))
    np.testing.assert_array_equal(dl.amax_history, [1.0, 0, 0, 5.0])
    with pytest.raises(ValueError, match="'mean'"):
        S.DelayedScaling(amax_compute_algo="mean")
    with pytest.raises(ValueError, match="0"):
        S.DelayedScaling(amax_history_len=0)


# --------------------------------------------------------------------------
# Graphcore FP8-AMAX / FP8-CSCALE
# --------------------------------------------------------------------------

def test_fp8_amax_bias_known_inputs():
    e4, e5 = softfp8.e4m3, softfp8.e5m2
    # eq. (3): floor(log2(maxnum / amax)) - margin
    assert S.fp8_amax_bias(3.0, e4) == 7          # 448/3 = 149.3
    assert S.fp8_amax_bias(1.0, e5) == 15         # 57344 = 1.75 * 2^15
    assert S.fp8_amax_bias(1.0, e4, margin=3) == 5
    assert S.fp8_amax_bias(448.0, e4) == 0
    assert S.fp8_amax_bias(449.0, e4) == -1
    assert S.fp8_amax_bias(1e6, e4) == -12
    assert S.fp8_amax_bias(0.0, e4) == 0 and S.fp8_amax_bias(math.inf, e4) == 0
    assert S.fp8_amax_bias(math.nan, e4) == 0
    assert S.fp8_amax_bias(1e-300, e4) == 127 and S.fp8_amax_bias(1e300, e4) == -149
    rng = np.random.default_rng(8)
    amaxes = rng.uniform(0.5, 1, 300) * 2.0 ** rng.integers(-60, 60, 300)
    # exact boundaries: amax = 448 / 2^k gives k; one ulp above gives k - 1
    ks = np.arange(-20, 21)
    bounds = 448.0 / 2.0 ** ks
    amaxes = np.concatenate([amaxes, bounds, np.nextafter(bounds, np.inf)])
    got = S.fp8_amax_bias(amaxes, e4, margin=1)
    for a, g in zip(amaxes, got):
        assert g == ref_floor_log2(Fraction(448) / Fraction(float(a))) - 1
    np.testing.assert_array_equal(got[300:341], ks - 1)
    np.testing.assert_array_equal(got[341:], ks - 2)
    # where RN_f32(448/amax) rounds up to a power of two, TE's pow2 scale and eq. (3) differ
    a = 448.0 / (2.0 ** 10 * (1 - 2.0 ** -30))
    assert S.fp8_amax_bias(a, e4) == 9
    assert S.compute_scale(a, e4, pow2=True) == 2.0 ** 10


def test_fp8_amax_and_cscale_recipes():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, 8)) * 0.01
    r = S.Fp8Amax(softfp8.e4m3, margin=3)
    sa = r.quantize(x)
    b = ref_floor_log2(Fraction(448) / Fraction(float(np.max(np.abs(x))))) - 3
    assert r.bias == b and sa.bias == b and float(sa.scale) == 2.0 ** b
    check_codes(sa, x, sa.scale, softfp8.e4m3, "nearest_even")
    r = S.Fp8Amax(softfp8.e5m2, axis=0)
    sa = r.quantize(x)
    assert sa.scale.shape == (4, 1)
    for i in range(4):
        bi = ref_floor_log2(Fraction(57344) / Fraction(float(np.max(np.abs(x[i])))))
        assert float(sa.scale[i, 0]) == 2.0 ** bi
    check_codes(sa, x, sa.scale, softfp8.e5m2, "nearest_even")
    c = S.Fp8CScale(10, softfp8.e4m3)
    for mode in ("nearest_even", "toward_zero"):
        sa = c.quantize(x, rounding=mode)
        assert sa.scale == 1024.0 and sa.bias == 10
        check_codes(sa, x, 1024.0, softfp8.e4m3, mode)
    with pytest.raises(ValueError, match="200"):
        S.Fp8CScale(200)


# --------------------------------------------------------------------------
# bias selection for the bias-parametric presets
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ref.FAMILY_TABLE))
def test_select_bias_every_family_and_bias(name):
    assert set(ref.FAMILY_TABLE) == set(softfp8._formats.FAMILIES)
    n = 0
    for sub in ("tesla", "ieee"):
        fam = getattr(softfp8, name)
        maxes = [ref.decode(ref.family(name, b, sub), ref.family(name, b, sub).max_code).value
                 for b in range(64)]
        for b in range(64):
            m = maxes[b]
            f = S.select_bias(float(m), fam, subnormals=sub)
            assert f == fam(bias=b, subnormals=sub), (name, b, f)
            above = float(m) * (1 + 2.0 ** -40)
            want = b - 1 if b > 0 else 0
            assert S.select_bias(above, name, subnormals=sub).bias == want
            # margin 2: amax * 4 must fit
            want2 = max(bb for bb in range(64) if maxes[bb] >= 4 * m) if maxes[0] >= 4 * m else 0
            assert S.select_bias(float(m), name, margin=2, subnormals=sub).bias == want2
            n += 3
        assert S.select_bias(0.0, fam).bias == 63
        assert S.select_bias(1e300, fam).bias == 0
        assert S.select_bias(math.inf, fam).bias == 0
    assert n == 2 * 64 * 3
    with pytest.raises(ValueError, match="NaN"):
        S.select_bias(math.nan, name)


def test_bias_selection_recipe_quantizes_unscaled():
    x = np.random.default_rng(1).standard_normal(50) * 0.02
    r = S.BiasSelection("cfloat8_143")
    sa = r.quantize(x)
    a = Fraction(float(np.max(np.abs(x))))
    b = max(bb for bb in range(64)
            if ref.decode(ref.cfloat8_143(bb), ref.cfloat8_143(bb).max_code).value >= a)
    assert sa.fmt == softfp8.cfloat8_143(bias=b) and sa.bias == b and sa.scale == 1.0
    check_codes(sa, x, 1.0, sa.fmt, "nearest_even")
    with pytest.raises(ValueError, match="e4m3"):
        S.select_bias(1.0, "e4m3")


# --------------------------------------------------------------------------
# loss scaling on real flags
# --------------------------------------------------------------------------

def ref_loss_scale(found, init=2.0 ** 16, growth=2.0, backoff=0.5, interval=2000):
    """PyTorch GradScaler's update rule: the scale after each step."""
    s, k, out = init, 0, []
    for f in found:
        if f:
            s, k = s * backoff, 0
        else:
            k += 1
            if k == interval:
                s, k = s * growth, 0
        out.append(s)
    return out


def test_loss_scaler_sequence_with_real_overflows():
    e5 = softfp8.e5m2
    g = np.array([1.5, -0.75, 3.0], dtype=np.float64)
    ls = S.LossScaler(init_scale=2.0 ** 10, growth_interval=3)
    seen, scales = [], []
    for t in range(40):
        st = ls.step(lambda s: (g * s * (2.0 ** 6 if t % 7 == 3 else 1.0)).astype(e5.dtype)
                     * e5.dtype.type(4.0), ls.scale)
        seen.append(st.skipped)
        scales.append(ls.scale)
        # the scaled gradients overflow e5m2 (max 57344) exactly when 3 * scale * 4 > max
        big = 3.0 * st.scale * (2.0 ** 6 if t % 7 == 3 else 1.0) * 4
        assert st.skipped == (big > 61440), (t, st.scale)   # 61440: e5m2's overflow threshold
        assert bool(st.flags & softfp8.Flags.OVERFLOW) == st.skipped
    assert scales == ref_loss_scale(seen, init=2.0 ** 10, interval=3)
    assert any(seen) and not all(seen)
    assert ls.steps == 40 and ls.skipped_steps == sum(seen)


def test_loss_scaler_invalid_check_and_context_manager():
    e5 = softfp8.e5m2
    ls = S.LossScaler(init_scale=8.0, growth_interval=2)
    with ls.step() as st:                       # inf - inf: invalid
        a = np.array([np.inf], dtype=np.float64).astype(e5.dtype)
        _ = a - a
    assert st.skipped and st.flags & softfp8.Flags.INVALID and ls.scale == 4.0
    with ls.step() as st:                       # inexact / underflow do not skip
        _ = np.array([1e-9, 0.1]).astype(e5.dtype)
    assert not st.skipped and st.flags and ls.scale == 4.0
    with ls.step() as st:
        assert not st.check(np.ones(3, np.float32))
    assert ls.scale == 8.0 and ls.growth_tracker == 0
    with ls.step() as st:                       # plain float32 NaN from NumPy: check()
        assert st.check(np.array([1.0, np.nan], np.float32))
    assert st.skipped and ls.scale == 4.0
    # flags raised before the step do not count; the step's flags stay sticky outside
    softfp8.clear_flags()
    with softfp8.saturation(False):
        np.array([1e6]).astype(e5.dtype)
    assert softfp8.get_flags() & softfp8.Flags.OVERFLOW
    with ls.step() as st:
        pass
    assert not st.skipped and softfp8.get_flags() & softfp8.Flags.OVERFLOW
    softfp8.clear_flags()
    # an exception leaves the scaler unchanged
    before = (ls.scale, ls.steps, ls.growth_tracker)
    with pytest.raises(ZeroDivisionError):
        ls.step(lambda: 1 / 0)
    assert (ls.scale, ls.steps, ls.growth_tracker) == before
    # growth stops below float32's max; custom flags
    big = S.LossScaler(init_scale=2.0 ** 127, growth_interval=1)
    big.step(lambda: None)
    assert big.scale == 2.0 ** 127
    dz = S.LossScaler(flags=softfp8.Flags.DIVBYZERO)
    with dz.step() as st:
        one = np.array([1.0]).astype(e5.dtype)
        _ = one / (one - one)
    assert st.skipped and dz.scale == 2.0 ** 15


def test_loss_scaler_defaults_and_bad_args():
    ls = S.LossScaler()
    assert (ls.scale, ls.growth_factor, ls.backoff_factor, ls.growth_interval) == \
        (65536.0, 2.0, 0.5, 2000)
    assert ls.flags == softfp8.Flags.OVERFLOW | softfp8.Flags.INVALID
    for kw, word in ((dict(init_scale=0), "init_scale"), (dict(growth_factor=1.0), "growth"),
                     (dict(backoff_factor=1.5), "backoff"), (dict(growth_interval=0), "interval"),
                     (dict(flags=0), "flags")):
        with pytest.raises(ValueError, match=word):
            S.LossScaler(**kw)
    with pytest.raises(TypeError, match="callable"):
        ls.step(3)


def test_delayed_scaling_docs_table():
    """The step-by-step table of docs/training.md (L = 2, E4M3, margin 0)."""
    dl = S.DelayedScaling(amax_history_len=2, fmt=softfp8.e4m3)
    rows = [(2.0, 1.0, [0, 2], 224.0), (4.0, 224.0, [0, 4], 112.0),
            (1.0, 112.0, [0, 1], 112.0), (0.0, 112.0, [0, 0], 448.0)]
    for a, used, hist, nxt in rows:
        sa = dl.quantize(np.array([a, -a / 2]))
        assert (float(sa.scale), list(dl.amax_history), float(dl.scale)) == (used, hist, nxt)


E4 = softfp8.e4m3
BAD = [  # (label, thunk, exception, regex naming the bad value)
    ("quantize fmt str", lambda: S.quantize([1.0], "e4m3"), TypeError, r"'e4m3'"),
    ("quantize x str", lambda: S.quantize(["a"], E4), TypeError, r"<U1"),
    ("quantize rounding", lambda: S.quantize([1.0], E4, rounding="bogus"), ValueError, r"'bogus'"),
    ("quantize seed", lambda: S.quantize([1.0], E4, rounding="stochastic", seed=-1),
     ValueError, r"-1"),
    ("quantize saturate", lambda: S.quantize([1.0], E4, saturate="yes"), TypeError, r"'yes'"),
    ("quantize axis float", lambda: S.quantize([[1.0]], E4, axis=1.5), TypeError, r"1\.5"),
    ("quantize axis repeated", lambda: S.quantize([[1.0]], E4, axis=(0, -2)), ValueError,
     r"\(0, -2\)"),
    ("quantize scale 0", lambda: S.quantize([1.0], E4, scale=0.0), ValueError, r"0\.0"),
    ("quantize scale inf", lambda: S.quantize([1.0], E4, scale=np.inf), ValueError, r"inf"),
    ("quantize wide format", lambda: S.quantize([1.0], softfp8.format(
        exp_bits=8, man_bits=3, bias=2000)), ValueError, r"bias=2000"),
    ("amax axis", lambda: S.amax(np.ones(3), axis=4), ValueError, r"4"),
    ("amax nan", lambda: S.amax(np.ones(3), nan=1), TypeError, r"got 1"),
    ("compute_scale amax str", lambda: S.compute_scale("x", E4), ValueError, r"'x'"),
    ("compute_scale amax -2", lambda: S.compute_scale([1.0, -2.0], E4), ValueError, r"-2\.0"),
    ("compute_scale eps nan", lambda: S.compute_scale(1.0, E4, eps=np.nan), ValueError, r"nan"),
    ("compute_scale margin inf", lambda: S.compute_scale(1.0, E4, margin=np.inf), ValueError,
     r"inf"),
    ("dequantize dtype", lambda: S.quantize([1.0], E4).dequantize("bogus"), TypeError,
     r"bogus"),
    ("DelayedScaling len", lambda: S.DelayedScaling(amax_history_len=2.5), TypeError, r"2\.5"),
    ("DelayedScaling algo", lambda: S.DelayedScaling(amax_compute_algo=3), TypeError, r"got 3"),
    ("DelayedScaling margin", lambda: S.DelayedScaling(margin="2"), TypeError, r"'2'"),
    ("DelayedScaling fmt", lambda: S.DelayedScaling(fmt="e5m2"), TypeError, r"'e5m2'"),
    ("DelayedScaling record -1", lambda: S.DelayedScaling().record(-1.0), ValueError, r"-1\.0"),
    ("fp8_amax_bias margin", lambda: S.fp8_amax_bias(1.0, E4, margin=0.5), TypeError, r"0\.5"),
    ("fp8_amax_bias amax -3", lambda: S.fp8_amax_bias(-3.0, E4), ValueError, r"-3\.0"),
    ("Fp8Amax margin", lambda: S.Fp8Amax(margin="x"), TypeError, r"'x'"),
    ("Fp8CScale bias", lambda: S.Fp8CScale(1.5), TypeError, r"1\.5"),
    ("select_bias family", lambda: S.select_bias(1.0, 42), ValueError, r"got 42"),
    ("select_bias amax", lambda: S.select_bias("x", "shp"), ValueError, r"'x'"),
    ("select_bias amax -1", lambda: S.select_bias(-1.0, "shp"), ValueError, r"-1\.0"),
    ("select_bias subnormals", lambda: S.select_bias(1.0, "shp", subnormals="x"), ValueError,
     r"'x'"),
    ("BiasSelection subnormals", lambda: S.BiasSelection("shp", subnormals=None), TypeError,
     r"None"),
    ("LossScaler init_scale", lambda: S.LossScaler(init_scale="big"), ValueError, r"'big'"),
    ("LossScaler init_scale inf", lambda: S.LossScaler(init_scale=np.inf), ValueError, r"inf"),
    ("LossScaler interval", lambda: S.LossScaler(growth_interval=2.0), TypeError, r"2\.0"),
    ("LossScaler flags", lambda: S.LossScaler(flags="overflow"), ValueError, r"'overflow'"),
    ("LossScaleStep check str", lambda: S.LossScaleStep(1.0).check(["a"]),
     TypeError, r"<U1"),
]


@pytest.mark.parametrize("label,fn,exc,pattern", BAD, ids=[r[0] for r in BAD])
def test_bad_input_names_the_value(label, fn, exc, pattern):
    with pytest.raises(exc, match=pattern):
        fn()


def test_compute_scale_scalar_path_equals_array_path():
    """compute_scale of one amax (a scalar fast path) equals the array path's element,
    bit for bit, including 0 / inf / NaN / eps / overflowing and underflowing quotients."""
    n = 0
    for fmt in (softfp8.e4m3, softfp8.e5m2):
        for a in (0.0, np.inf, np.nan, 1e-40, 2.5e-45, 3e38, 448.0, 1.0000001, 0.1, 7.0):
            for m in (0, 3, 200, -100):
                for eps in (0.0, 1e-3):
                    s1 = S.compute_scale(a, fmt, margin=m, eps=eps)
                    s2 = S.compute_scale(np.array([a]), fmt, margin=m, eps=eps)[0]
                    assert isinstance(s1, np.float32)
                    assert s1.view(np.uint32) == s2.view(np.uint32), (fmt.name, a, m, eps)
                    n += 1
    assert n == 2 * 10 * 4 * 2


def test_per_tensor_defaults_shortcut_equals_general_path():
    """quantize(x, fmt) of a float32 / float16 array with every option at its default takes
    a shortcut (scaling._quantize_tensor): codes, scale, amax and flags equal to the general
    path's (the same values as float64, which the shortcut never takes), for random, tiny,
    huge, NaN / inf-holding and all-zero arrays, in several context rounding modes."""
    import softfp8
    from softfp8 import scaling as sc
    rng = np.random.default_rng(77)
    base = rng.standard_normal((33, 17)) * np.exp2(rng.uniform(-30, 30, (33, 17)))
    arrays = [base, base * 2.0 ** -100, base * 2.0 ** 90, np.zeros((4, 5)), -np.zeros(3),
              np.where(rng.random((33, 17)) < 0.1, np.nan, base),
              np.where(rng.random((33, 17)) < 0.1, np.inf, base), np.array(3.0)]
    # one element: amax * scale lands on fmt.max, just past it when the scale rounded up
    # (saturation then decides the code in the upward mode)
    arrays += [np.array([v]) for v in rng.uniform(1.0, 2.0, 24)]
    cases = 0
    for arr in arrays:
        for dt in (np.float32, np.float16):
            with np.errstate(all="ignore"):
                x = arr.astype(dt)
            for fmt in (softfp8.e4m3, softfp8.e5m2, softfp8.e4m3.dtype):
                for mode in ("nearest_even", "toward_zero", "upward"):
                    with softfp8.rounding(mode):
                        with softfp8.collect_flags() as c1:
                            got = sc.quantize(x, fmt)
                        with softfp8.collect_flags() as c2:
                            want = sc.quantize(x.astype(np.float64), fmt)
                    assert np.array_equal(got.codes.view(np.uint8), want.codes.view(np.uint8))
                    assert got.codes.dtype == want.codes.dtype and got.fmt == want.fmt
                    assert type(got.scale) is type(want.scale) and got.scale == want.scale
                    assert got.scale_inv == want.scale_inv and got.axis is want.axis
                    assert (got.amax is None) == (want.amax is None)
                    assert got.amax is None or float(got.amax) == float(want.amax)
                    assert int(c1.flags) == int(c2.flags), (mode, fmt, dt)
                    cases += 1
    assert cases == len(arrays) * 2 * 3 * 3
