"""softfp8.torch: zero-copy exchange, the custom ops, autograd and torch.compile.

Runs with the `torch` extra installed (the README's command installs it); expected
codes come from softfp8's exact core (`softfp8.bits`) -- what is tested here is the
bridge -- except the PyTorch float8 casts, compared code for code with softfp8."""
from __future__ import annotations

import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import _context, _registry, bits

try:
    import torch
except ImportError:
    # skipped only outside CI: the README's command (and so .ci/run) installs the extra
    if os.environ.get("CI"):
        raise ImportError("CI must run the PyTorch tests: install the extra, pip install -e '.[test,torch,jax]'")
    pytest.skip("PyTorch not installed: pip install -e '.[torch]'", allow_module_level=True)
import softfp8.torch as st  # noqa: E402

PRESETS = softfp8.presets()
NATIVE = {r.name: r.torch for r in _registry.ROWS if r.torch}
OTHER = [n for n in PRESETS if n not in NATIVE]
# formats of the other families: codes too
EXTRA = [softfp8.cfloat8_143(bias=20), softfp8.shp(bias=3, subnormals="ieee"),
         softfp8.p3109.format(8, 3, domain="extended"),
         softfp8.format(exp_bits=5, man_bits=6, bias=15)]
MODES = [m for m in _context.ROUNDING_MODES if m != "stochastic"]


def _all_codes(fmt):
    return np.arange(1 << fmt.bits, dtype=np.uint32).astype(fmt.storage)


def _ptr(a):
    return a.__array_interface__["data"][0]


# ---------------------------------------------------------------- exchange

def test_native_round_trips_share_memory():
    assert len(NATIVE) == 7 and set(NATIVE) == {"e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "float16",
                                                 "bfloat16", "float8_e8m0fnu"}
    for name, attr in NATIVE.items():
        fmt = PRESETS[name]
        arr = _all_codes(fmt).view(fmt.dtype)
        t = softfp8.to_torch(arr)
        assert t.dtype == getattr(torch, attr) and st.torch_dtype(fmt) == t.dtype
        assert t.data_ptr() == arr.ctypes.data
        # PyTorch decodes every code to softfp8's value (NaNs by NaN-ness)
        theirs = t.to(torch.float64).numpy()
        ours = bits.to_float(arr.view(fmt.storage), fmt)[0]
        assert np.array_equal(np.isnan(theirs), np.isnan(ours)), name
        ok = ~np.isnan(ours)
        assert np.array_equal(theirs[ok], ours[ok]), name
        back = softfp8.from_torch(t)
        assert back.dtype == fmt.dtype and back.ctypes.data == t.data_ptr()
        assert np.array_equal(back.view(fmt.storage), arr.view(fmt.storage))
        assert softfp8.from_torch(t.dtype) == fmt.dtype


def test_code_round_trips_share_memory():
    assert len(PRESETS) == 18 and len(OTHER) == 11
    for fmt in [PRESETS[n] for n in OTHER] + EXTRA:
        arr = _all_codes(fmt).view(fmt.dtype)
        t = st.to_torch(arr)
        assert t.dtype == (torch.uint8 if fmt.bits <= 8 else torch.uint16), fmt.name
        assert t.data_ptr() == arr.ctypes.data
        assert np.array_equal(t.numpy(), arr.view(fmt.storage))
        back = st.from_torch(t, fmt)
        assert back.dtype == fmt.dtype and back.ctypes.data == t.data_ptr()
        assert st.from_torch(t, fmt.name).dtype == fmt.dtype


def test_strided_views_share_memory():
    base = np.arange(60, dtype=np.uint8).reshape(6, 10).view(softfp8.e4m3.dtype)
    for arr in (base[::2, 1::3], base.T, base[:, 4]):
        t = softfp8.to_torch(arr)
        assert t.data_ptr() == _ptr(arr)
        assert t.stride() == tuple(s // arr.itemsize for s in arr.strides)
        assert np.array_equal(t.view(torch.uint8).numpy(), arr.view(np.uint8))
        back = softfp8.from_torch(t)
        assert _ptr(back) == _ptr(arr) and back.strides == arr.strides
    c = np.arange(12, dtype=np.uint8).reshape(3, 4).view(softfp8.e3m4.dtype).T
    tc = softfp8.to_torch(c)
    assert tc.dtype == torch.uint8 and tc.data_ptr() == _ptr(c)
    with pytest.raises(ValueError, match="negative stride"):
        softfp8.to_torch(base[::-1])


def test_exchange_bad_input():
    with pytest.raises(TypeError, match="give their format"):
        softfp8.from_torch(torch.zeros(3, dtype=torch.uint8))
    with pytest.raises(TypeError, match="uint16"):
        softfp8.from_torch(torch.zeros(3, dtype=torch.uint8), softfp8.hfp16_169)
    with pytest.raises(TypeError, match="float32"):
        softfp8.from_torch(torch.zeros(3))
    with pytest.raises(TypeError, match="holds e4m3 values, not e5m2"):
        softfp8.from_torch(torch.zeros(3, dtype=torch.float8_e4m3fn), softfp8.e5m2)
    with pytest.raises(ValueError, match="device meta"):
        softfp8.from_torch(torch.zeros(3, dtype=torch.uint8, device="meta"), "e3m4")
    with pytest.raises(TypeError, match="float64"):
        softfp8.to_torch(np.zeros(2))


def test_dlpack_status():
    a = np.array([1.5, -2.0], dtype=softfp8.e4m3.dtype)
    if softfp8._interop.DLPACK:            # NumPy >= 2.5: register_dlpack_dtype
        t = torch.from_dlpack(a)
        assert t.dtype == torch.float8_e4m3fn and t.data_ptr() == a.ctypes.data
        b = np.from_dlpack(t)
        assert b.dtype == softfp8.e4m3.dtype and b.ctypes.data == t.data_ptr()
    else:                                  # NumPy 2.4 refuses; docs/frameworks.md quotes it
        with pytest.raises(BufferError, match="DLPack only supports signed/unsigned integers"):
            torch.from_dlpack(a)
    # the documented route works under both
    assert softfp8.to_torch(a).data_ptr() == a.ctypes.data


def test_torch_is_optional():
    """import softfp8 never imports torch; without torch softfp8.torch names the extra."""
    code = ("import sys; import softfp8, softfp8.mx, softfp8.gemm; assert 'torch' not in sys.modules;"
            "sys.modules['torch'] = None\n"
            "try:\n import softfp8.torch\nexcept ImportError as e:\n print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'softfp8[torch]'" in out


# ---------------------------------------------------------------- quantize

def _sample(fmt, n=3000, seed=0):
    """float32 values around every code of fmt (midpoints, neighbours), specials and randoms."""
    rng = np.random.default_rng(seed)
    with np.errstate(all="ignore"):
        vals = bits.to_float(_all_codes(fmt), fmt)[0]
    fin = vals[np.isfinite(vals)]
    fin = np.unique(fin)
    mids = (fin[1:] + fin[:-1]) / 2
    near = np.concatenate([fin, mids, np.nextafter(mids.astype(np.float32), np.float32(np.inf)),
                           np.nextafter(mids.astype(np.float32), np.float32(-np.inf)),
                           fin * 1.25, fin * 0.75])
    raw = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    spec = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 1e-30], np.float32)
    with np.errstate(over="ignore"):        # bfloat16's 1.25 * max is inf in float32
        return np.concatenate([near.astype(np.float32), -near.astype(np.float32), raw, spec])


@pytest.mark.parametrize("name", list(PRESETS))
def test_quantize_bit_exact_every_mode(name):
    fmt = PRESETS[name]
    x = _sample(fmt)
    tx = torch.from_numpy(x)
    for mode in MODES:
        for sat in (True, False):
            want, fl = bits.from_float(x, fmt, rounding=mode, saturate=sat)
            with softfp8.collect_flags() as got:
                q = st.quantize(tx, fmt, rounding=mode, saturate=sat)
            assert q.dtype == st.torch_dtype(fmt)
            codes = softfp8.from_torch(q, fmt).view(fmt.storage)
            assert np.array_equal(codes, want), (name, mode, sat)
            assert int(got.flags) == int(np.bitwise_or.reduce(fl)), (name, mode, sat)
            back = st.dequantize(q, fmt)
            assert back.dtype == torch.float32
            ref = bits.to_float(want, fmt, dtype=np.float32)[0]
            assert np.array_equal(back.numpy(), ref, equal_nan=True)


def test_quantize_other_formats_and_inputs():
    for fmt in EXTRA:
        x = _sample(fmt, 500)
        want = bits.from_float(x, fmt, rounding="toward_zero")[0]
        q = st.quantize(torch.from_numpy(x), fmt, rounding="toward_zero")
        assert np.array_equal(st.from_torch(q, fmt).view(fmt.storage), want), fmt.name
    # float64, float16 and bfloat16 sources are converted exactly, rounded once
    x64 = np.array([1.0 + 2.0**-30, 300.0, -17.5, 2.0**-9 * 0.75], np.float64)
    want = bits.from_float(x64, softfp8.e4m3, rounding="upward")[0]
    got = st.quantize(torch.from_numpy(x64), "e4m3", rounding="upward")
    assert np.array_equal(got.view(torch.uint8).numpy(), want)
    h = np.array([1.0009765625, 65504.0, -2.0**-24, 300.5], np.float16)
    want = bits.from_float(h.astype(np.float64), softfp8.e5m2, rounding="downward")[0]
    got = st.quantize(torch.from_numpy(h), softfp8.e5m2, rounding="downward")
    assert np.array_equal(got.view(torch.uint8).numpy(), want)
    assert st.fake_quantize(torch.from_numpy(h), "e5m2").dtype == torch.float16
    bf = torch.tensor([1.0078125, -3.25, 1e-3], dtype=torch.bfloat16)
    want = softfp8.from_torch(bf).astype(softfp8.e4m3.dtype).view(np.uint8)
    assert np.array_equal(st.quantize(bf, softfp8.e4m3).view(torch.uint8).numpy(), want)


def test_quantize_stochastic_seeded_and_tininess():
    x = _sample(softfp8.e4m3, 2000)
    tx = torch.from_numpy(x)
    a = st.quantize(tx, "e4m3", rounding="stochastic", seed=7)
    b = st.quantize(tx, "e4m3", rounding="stochastic", seed=7)
    c = st.quantize(tx, "e4m3", rounding="stochastic", seed=8)
    assert torch.equal(a.view(torch.uint8), b.view(torch.uint8))
    assert not torch.equal(a.view(torch.uint8), c.view(torch.uint8))
    with softfp8.rounding("stochastic", seed=7), np.errstate(all="ignore"):
        want = x.astype(softfp8.e4m3.dtype).view(np.uint8)
    assert np.array_equal(a.view(torch.uint8).numpy(), want)
    # tininess: 0x1.ep-7 rounds to the smallest normal of E4M3 (2^-6); "before" calls it tiny
    t = torch.tensor([2.0**-6 * (1 - 2.0**-5)])
    for rule in ("after", "before"):
        with softfp8.collect_flags() as fl:
            st.quantize(t, "e4m3", tininess=rule)
        assert bool(fl.flags & softfp8.Flags.UNDERFLOW) == (rule == "before")


def test_pytorch_float8_casts_code_for_code():
    """PyTorch's float32 -> float8 casts against softfp8's, on every float32 near an
    E4M3 / E5M2 value plus random bit patterns.  PyTorch 2.13 rounds to nearest even;
    its float8_e4m3fn cast saturates (overflow and +-inf give +-448: softfp8's
    saturate=True), the other three do not (e5m2 overflows to inf, the FNUZ types to
    their NaN 0x80: saturate=False).  NaN inputs give NaN codes in both (softfp8 keeps
    the payload's top bits where the format has several NaN codes, PyTorch 0x7f/0xff)."""
    for fmt, dt, sat in ((softfp8.e4m3, torch.float8_e4m3fn, True), (softfp8.e5m2, torch.float8_e5m2, False),
                         (softfp8.e4m3fnuz, torch.float8_e4m3fnuz, False),
                         (softfp8.e5m2fnuz, torch.float8_e5m2fnuz, False)):
        x = _sample(fmt, 20000, seed=3)
        theirs = torch.from_numpy(x).to(dt).view(torch.uint8).numpy()
        ours = bits.from_float(x, fmt, rounding="nearest_even", saturate=sat)[0]
        nan = np.isnan(x)
        assert nan.sum() >= 1 and (np.abs(x) > fmt.max).sum() > 100
        assert np.array_equal(theirs[~nan], ours[~nan]), fmt.name
        assert np.isnan(bits.to_float(theirs[nan], fmt)[0]).all()
        # the other saturation differs exactly on the values beyond the largest finite one
        other = bits.from_float(x, fmt, rounding="nearest_even", saturate=not sat)[0]
        differ = (other != ours) & ~nan
        assert differ.any() and (np.abs(x[differ]) > fmt.max).all()


def test_flags_reach_the_caller():
    with softfp8.collect_flags() as fl:
        st.quantize(torch.tensor([1000.0]), "e4m3", saturate=False)
    assert fl.flags == softfp8.Flags.OVERFLOW | softfp8.Flags.INEXACT
    with softfp8.collect_flags() as fl:
        st.quantize(torch.tensor([1.5]), "e4m3")
    assert fl.flags == 0
    # the backward pass runs on the caller's thread: its flags reach the caller's context
    y = st.fp8_matmul(torch.ones(2, 2, requires_grad=True), torch.ones(2, 2))
    with softfp8.collect_flags() as fl:
        y.backward(torch.full((2, 2), 1e6))       # beyond E5M2's 57344: saturated, flagged
    assert fl.flags == softfp8.Flags.OVERFLOW | softfp8.Flags.INEXACT


def test_ops_bad_input():
    x = torch.ones(3)
    for call in (lambda t: st.quantize(t, "e4m3"), lambda t: st.fake_quantize(t, "e4m3"),
                 lambda t: st.dequantize(t.to(torch.float8_e4m3fn)), lambda t: st.matmul(t, t, fmt_a="e4m3"),
                 lambda t: st.fp8_matmul(t, t)):
        with pytest.raises(ValueError, match="is on device meta; softfp8 computes on CPU tensors only"):
            call(torch.ones(3, 3, device="meta"))
    with pytest.raises(TypeError, match="floating-point tensor, got torch.int32"):
        st.quantize(torch.ones(3, dtype=torch.int32), "e4m3")
    with pytest.raises(ValueError, match="unknown format 'e9m9'"):
        st.quantize(x, "e9m9")
    with pytest.raises(ValueError, match="'up'"):
        st.quantize(x, "e4m3", rounding="up")
    with pytest.raises(TypeError, match="travels as torch.uint8; got a torch.float32"):
        st.dequantize(x, "e3m4")
    with pytest.raises(TypeError, match="give their format"):
        st.dequantize(torch.zeros(3, dtype=torch.uint8))
    q = st.quantize(torch.ones(2, 3), "e4m3")
    with pytest.raises(ValueError, match="inner dimensions 3 and 2 differ"):
        st.matmul(q, q)
    with pytest.raises(ValueError, match="unknown matrix unit profile 'h1000'"):
        st.matmul(q, q.t(), accumulation="h1000")
    with pytest.raises(ValueError, match="seed"):
        st.quantize(x, "e4m3", rounding="stochastic", seed=2**63)


# ---------------------------------------------------------------- products

def _q(x, fmt):
    return st.quantize(torch.from_numpy(np.asarray(x, np.float32)), fmt)


def test_matmul_and_scaled_mm_match_numpy():
    rng = np.random.default_rng(1)
    xa, xb = rng.standard_normal((5, 40)), rng.standard_normal((40, 3))
    for fa, fb in ((softfp8.e4m3, softfp8.e4m3), (softfp8.e4m3, softfp8.e5m2), (softfp8.e3m4, softfp8.e3m4)):
        a, b = _q(xa, fa), _q(xb, fb)
        na, nb = st.from_torch(a, fa), st.from_torch(b, fb)
        for acc in (None, softfp8.Accumulation(accumulator="bfloat16", promote_every=16),
                    "h100" if {fa.name, fb.name} <= {"e4m3", "e5m2"} else None):
            got = st.matmul(a, b, fmt_a=fa, fmt_b=fb, accumulation=acc)
            model = softfp8.Accumulation.profile(acc) if isinstance(acc, str) else acc
            want = softfp8.matmul(na, nb, out_dtype=np.float32, accumulation=model)
            assert got.dtype == torch.float32 and np.array_equal(got.numpy(), want)
        got = st.scaled_mm(a, b, torch.tensor(0.5), torch.full((1, 3), 2.0), fmt_a=fa, fmt_b=fb)
        assert np.array_equal(got.numpy(), softfp8.scaled_mm(na, nb, np.float32(0.5), np.full((1, 3), 2.0,
                                                                                            np.float32)))
    # result in a format: its torch type
    a, b = _q(xa, "e4m3"), _q(xb, "e4m3")
    out = st.matmul(a, b, out_dtype=softfp8.e4m3)
    assert out.dtype == torch.float8_e4m3fn
    want = softfp8.matmul(softfp8.from_torch(a), softfp8.from_torch(b), out_dtype=softfp8.e4m3)
    assert np.array_equal(out.view(torch.uint8).numpy(), want.view(np.uint8))


def _exact_f32(a, b):
    """float32 of the exact product a @ b (float64 inputs whose sums float64 holds exactly)."""
    out = np.empty((a.shape[0], b.shape[1]), np.float32)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = sum((Fraction(float(u)) * Fraction(float(v)) for u, v in zip(a[i], b[:, j])), Fraction(0))
            assert Fraction(float(s)) == s        # float64 holds it: one rounding to float32 below
            out[i, j] = np.float32(float(s))
    return out


def _hand_q(x, fmt):
    return bits.to_float(bits.from_float(np.asarray(x, np.float64), fmt, rounding="nearest_even",
                                         saturate=True)[0], fmt)[0]


def test_fp8_matmul_gradients_by_hand():
    rng = np.random.default_rng(2)
    x0, w0, g0 = rng.standard_normal((4, 8)), rng.standard_normal((8, 3)), rng.standard_normal((4, 3))
    x = torch.tensor(x0, dtype=torch.float32, requires_grad=True)
    w = torch.tensor(w0, dtype=torch.float32, requires_grad=True)
    y = st.fp8_matmul(x, w)
    xs, ws, gs = (np.float32(v).astype(np.float64) for v in (x0, w0, g0))
    qx, qw, qg = _hand_q(xs, softfp8.e4m3), _hand_q(ws, softfp8.e4m3), _hand_q(gs, softfp8.e5m2)
    assert np.array_equal(y.detach().numpy(), _exact_f32(qx, qw))
    y.backward(torch.tensor(g0, dtype=torch.float32))
    assert np.array_equal(x.grad.numpy(), _exact_f32(qg, qw.T))
    assert np.array_equal(w.grad.numpy(), _exact_f32(qx.T, qg))


def test_fake_quantize_straight_through():
    x = torch.tensor([0.3, 1000.0, -1e-9, 2.5], requires_grad=True)
    y = st.fake_quantize(x, "e4m3", saturate=True)
    assert y.detach().tolist() == [0.3125, 448.0, -0.0, 2.5]
    y.backward(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    assert x.grad.tolist() == [1.0, 2.0, 3.0, 4.0]      # unchanged, saturated element too


def test_casts_differentiate_as_torch_casts():
    """quantize / dequantize pass gradients as x.to(torch.float8_e4m3fn) does (cast to the
    other side's dtype); matmul / scaled_mm refuse with a message naming fp8_matmul."""
    x = torch.tensor([0.3, 1000.0, -2.5], requires_grad=True)
    g = torch.tensor([0.1, 3.0, -700.0])
    st.dequantize(st.quantize(x, "e4m3")).backward(g)
    x2 = x.detach().clone().requires_grad_()
    x2.to(torch.float8_e4m3fn).to(torch.float32).backward(g)
    assert torch.equal(x.grad, x2.grad) and x.grad.tolist() == [0.1015625, 3.0, -448.0]
    assert not st.quantize(x, "e3m4").requires_grad          # codes carry no gradient
    q = st.quantize(torch.ones(2, 2), "e4m3").requires_grad_()
    with pytest.raises(RuntimeError, match="matmul has no gradient.*fp8_matmul"):
        st.matmul(q, q).sum().backward()


# ---------------------------------------------------------------- torch.library

OPCHECK_ALL = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
OPCHECK_NO_SCHEMA = OPCHECK_ALL[1:]


def test_opcheck_every_op():
    from torch.library import opcheck
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((4, 6)), dtype=torch.float32)
    w = torch.tensor(rng.standard_normal((6, 5)), dtype=torch.float32)
    qa, qb = st.quantize(x, "e4m3"), st.quantize(w, "e5m2")
    ca = st.quantize(x, "e3m4")
    ops = torch.ops.softfp8
    cases = [
        (ops.quantize, (x, "e4m3", None, None, None, None, 32)),
        (ops.quantize, (x, "hfp16_169", "toward_zero", True, "before", None, 32)),
        (ops.quantize, (x, "e4m3", "stochastic", None, None, 5, 8)),
        # the backward (opcheck sums the outputs: PyTorch has no float8 sum, so bfloat16 here)
        (ops.quantize, (x.clone().requires_grad_(), "bfloat16", "upward", None, None, None, 32)),
        (ops.dequantize, (st.quantize(x, "bfloat16").requires_grad_(), "bfloat16", "float64")),
        (ops.dequantize, (qa, "e4m3", "float32")),
        (ops.dequantize, (ca, "e3m4", "bfloat16")),
        (ops.fake_quantize, (x.clone().requires_grad_(), "e5m2", None, True, None, None, 32)),
        (ops.matmul, (qa, "e4m3", qb, "e5m2", "float32", "")),
        (ops.matmul, (qa, "e4m3", qb, "e5m2", "float32", "h100")),
        (ops.matmul, (ca, "e3m4", st.quantize(w, "e3m4"), "e3m4", "e3m4", "")),
        (ops.scaled_mm, (qa, "e4m3", qb, "e5m2", torch.tensor(0.5), torch.tensor(4.0), "float32", "", None,
                         None)),
        (ops.scaled_mm, (ca, "e3m4", st.quantize(w, "e3m4"), "e3m4", torch.full((4, 1), 0.5),
                         torch.tensor(4.0), "float64", "", None, None)),
        (ops.fp8_matmul, (x.clone().requires_grad_(), w.clone().requires_grad_(), "e4m3", "e5m2", "")),
    ]
    for op, args in cases:
        eight = any(isinstance(a, torch.Tensor) and a.dtype.itemsize == 1 and a.is_floating_point() for a in args)
        # opcheck's test_schema compares inputs before / after with torch.allclose, which has no
        # float8 kernel ("mul_cpu_reduced_float" not implemented for 'Float8_e4m3fn'); the
        # code-tensor cases above run it on the same ops
        opcheck(op, args, test_utils=OPCHECK_NO_SCHEMA if eight else OPCHECK_ALL)
    assert {op._qualified_op_name for op, _ in cases} == {"softfp8::" + n for n in
                                             ("quantize", "dequantize", "fake_quantize", "matmul", "scaled_mm",
                                              "fp8_matmul")}


class _Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w1 = torch.nn.Parameter(torch.randn(6, 8, generator=g) * 0.5)
        self.w2 = torch.nn.Parameter(torch.randn(8, 2, generator=g) * 0.5)

    def forward(self, x):
        h = torch.relu(st.fp8_matmul(x, self.w1, accumulation="h100"))
        h = st.fake_quantize(h, "e4m3")
        return st.fp8_matmul(h, self.w2)


def test_torch_compile_traces_without_graph_breaks():
    import torch._dynamo
    torch._dynamo.reset()
    model = _Tiny()
    x = torch.randn(5, 6, generator=torch.Generator().manual_seed(1))
    eager = model(x)
    eager.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)   # fullgraph: no break
    out = compiled(x)
    out.sum().backward()
    assert torch.equal(out, eager)
    for p, g in zip(model.parameters(), grads):
        assert torch.equal(p.grad, g)
    explain = torch._dynamo.explain(model)(x)
    assert explain.graph_break_count == 0 and explain.graph_count == 1


def test_formats_and_models_through_the_schema():
    """Formats lookup() cannot name and model objects reach the ops by per-process keys;
    equal models share a key (a compiled graph is not rebuilt for a new, equal one)."""
    odd = softfp8.format(exp_bits=4, man_bits=3, bias=8, specials="fn", name="e4m3")   # not the preset
    x = torch.tensor([0.3, 1000.0, -2.75])
    q = st.quantize(x, odd, saturate=False)
    want = bits.from_float(x.numpy(), odd, saturate=False)[0]
    assert np.array_equal(q.numpy(), want) and q.dtype == torch.uint8
    assert st.quantize(x, "e4m3").dtype == torch.float8_e4m3fn       # the preset is unaffected
    key = st._fmt_name(odd)
    assert key != "e4m3" and st.torch_dtype(key) == torch.uint8
    torch.library.opcheck(torch.ops.softfp8.quantize, (x, key, None, False, None, None, 32))
    # (no NaN here: opcheck compares eager and traced outputs with NaN != NaN)
    torch.library.opcheck(torch.ops.softfp8.dequantize, (st.quantize(x, odd, saturate=True), key, "float64"))
    m1 = softfp8.Accumulation(accumulator="bfloat16", promote_every=4)
    m2 = softfp8.Accumulation(accumulator="bfloat16", promote_every=4)
    assert st._model_key(m1) == st._model_key(m2) != st._model_key(softfp8.Accumulation())
    assert st._model_key(softfp8.Accumulation.profile("h100")) == "h100" == st._model_key("h100")
    block = softfp8.BlockFMA(block=16, extra_bits=3)
    a = st.quantize(torch.randn(3, 32, generator=torch.Generator().manual_seed(4)), "e4m3")
    got = st.matmul(a, a.t(), accumulation=block)
    na = softfp8.from_torch(a)
    assert np.array_equal(got.numpy(), softfp8.matmul(na, na.T, out_dtype=np.float32, accumulation=block))


def test_dequantize_ignores_bits_above_the_width():
    """Raw codes above a format's width (docs/architecture.md: those bits are ignored): all
    256 uint8 codes of every sub-byte preset dequantise as code & mask, decoded by ml_dtypes
    where it has the format, else by softfp8's NumPy cast of the masked codes."""
    import ml_dtypes
    codes = np.arange(256, dtype=np.uint8)
    checked = 0
    for name, fmt in PRESETS.items():
        if fmt.bits % 8 == 0:
            continue
        masked = codes & np.uint8((1 << fmt.bits) - 1)
        ml = getattr(ml_dtypes, name, None)
        want = (masked.view(ml) if ml is not None else masked.view(fmt.dtype)).astype(np.float32)
        got = st.dequantize(torch.from_numpy(codes.copy()), fmt).numpy()
        assert np.array_equal(got, want, equal_nan=True), name
        checked += codes.size
    assert checked == 4 * 256
