"""softfp8 in PyTorch: zero-copy exchange and exact quantise / matmul custom ops.

``import softfp8.torch`` needs PyTorch (``pip install 'softfp8[torch]'``); nothing else
in softfp8 imports it.  docs/frameworks.md, "PyTorch", is the reference:

- ``to_torch(arr)`` / ``from_torch(t, fmt=None)``: a softfp8 array and a CPU tensor
  sharing memory; presets PyTorch has travel as its dtypes (torch.float8_e4m3fn, ...,
  float16, bfloat16), every other format as a uint8 / uint16 code tensor whose format
  is passed alongside (the ``fmt`` argument of every op below).
- ``quantize``, ``dequantize``, ``fake_quantize``, ``matmul``, ``scaled_mm``,
  ``fp8_matmul``: ``torch.library`` custom ops (namespace ``softfp8``) with fake
  implementations, so ``torch.compile`` traces them; each runs softfp8's NumPy API on
  views of the tensors (CPU only), in the softfp8 context of the calling thread, and
  raises that context's sticky flags (read them with ``softfp8.collect_flags()``).
- autograd: ``fake_quantize`` passes the gradient through unchanged (straight-through,
  not clipped at saturation); ``quantize`` / ``dequantize`` as PyTorch's dtype casts;
  ``fp8_matmul`` computes both gradient products by the forward's recipe (gradient
  quantised to ``grad_fmt``, the same accumulation); ``matmul`` / ``scaled_mm`` have none.
- ``Linear``: a drop-in for ``torch.nn.Linear`` whose GEMMs follow a ``softfp8.nn.Recipe``
  (softfp8/torch_nn.py; docs/training.md, "FP8 layers with state").
"""
from __future__ import annotations

import contextlib

try:
    import torch
except ImportError as e:     # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError("softfp8.torch needs PyTorch: pip install 'softfp8[torch]' "
                      f"(importing torch failed: {e})") from e

import numpy as np

from . import _context, _formats, gemm
from ._interop import _code_dtype, _torch_native, from_torch, to_torch
from ._validation import format_or_none
from .matrix_units import BlockFMA, MatrixUnit
from .torch_nn import Linear

__all__ = ["to_torch", "from_torch", "torch_dtype", "quantize", "dequantize", "fake_quantize",
           "matmul", "scaled_mm", "fp8_matmul", "Linear"]

# --------------------------------------------------------------------------
# formats, accumulation models and output types as the ops' string arguments
# --------------------------------------------------------------------------

# A custom op's schema takes strings, not softfp8 objects: a format travels as its
# name (lookup(name) gives it back), an accumulation model as a profile name or its
# repr.  Formats and models with no such name are entered in these tables, per process,
# when a wrapper first sees them (equal objects get the same key: no recompilation of a
# graph for a new but equal model).
_FORMATS: dict = {}        # key -> Format (formats lookup() cannot name)
_FORMAT_KEYS: dict = {}    # Format -> key
_MODELS: dict = {}         # key -> model object
_FLOATS = {"float32": (np.float32, torch.float32), "float64": (np.float64, torch.float64)}


def _fmt_name(fmt, what="fmt"):
    if isinstance(fmt, str) and fmt in _FORMATS:
        return fmt
    f = format_or_none(fmt)
    if f is None and isinstance(fmt, str):
        f = _formats.lookup(fmt)
    if f is None:
        raise TypeError(f"{what} must be a softfp8 format, its name or its dtype, got {fmt!r}")
    key = _FORMAT_KEYS.get(f)
    if key is not None:
        return key
    try:
        known = _formats.lookup(f.name) == f
    except (TypeError, ValueError):
        known = False
    key = f.name if known else f"{f.name}#{len(_FORMATS)}"
    if not known:
        _FORMATS[key] = f
    _FORMAT_KEYS[f] = key
    return key


def _fmt(name):
    return _FORMATS.get(name) or _formats.lookup(name)


def _out_name(out_dtype, what="out_dtype"):
    """'float32' / 'float64' or a format name (float16 and bfloat16 are softfp8 presets)."""
    for key, (npt, tt) in _FLOATS.items():
        if out_dtype is npt or out_dtype is tt or out_dtype == key or \
                (isinstance(out_dtype, np.dtype) and out_dtype == np.dtype(npt)):
            return key
    if isinstance(out_dtype, torch.dtype):
        return _fmt_name(from_torch(out_dtype), what)
    return _fmt_name(out_dtype, what)


def _out_np(name):
    return np.dtype(_FLOATS[name][0]) if name in _FLOATS else _fmt(name).dtype


def torch_dtype(fmt):
    """The torch dtype a format travels as: its native type, else torch.uint8 / uint16."""
    f = _fmt(_fmt_name(fmt))
    return _torch_native(torch, f) or _code_dtype(torch, f)


def _out_torch(name):
    return _FLOATS[name][1] if name in _FLOATS else torch_dtype(name)


def _model_key(acc):
    if acc is None or (isinstance(acc, str) and acc == "exact"):
        return ""
    if isinstance(acc, str):
        acc = gemm.Accumulation.profile(acc)      # a profile name (ValueError if unknown)
        return acc.name
    if not isinstance(acc, (gemm.Accumulation, MatrixUnit, BlockFMA)):
        raise TypeError(f"accumulation must be None, 'exact', a profile name, a softfp8.Accumulation, "
                        f"MatrixUnit or BlockFMA, got {acc!r}")
    if isinstance(acc, MatrixUnit) and acc.name in gemm._mu.profiles():
        return acc.name
    key = repr(acc) if not isinstance(acc, MatrixUnit) else f"{acc!r}#{id(acc)}"
    stored = _MODELS.get(key)
    if stored is None or repr(stored) != repr(acc):    # new, or the stored one was changed since
        _MODELS[key] = acc
    return key


def _model(key):
    if key == "":
        return None
    return _MODELS.get(key) or gemm.Accumulation.profile(key)


# --------------------------------------------------------------------------
# tensors <-> NumPy views
# --------------------------------------------------------------------------

def _cpu(t, op, what):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"softfp8.torch.{op}: {what} must be a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise ValueError(f"softfp8.torch.{op}: {what} is on device {t.device}; softfp8 computes on "
                         f"CPU tensors only (move it with .cpu())")
    return t


def _values(t, op, what="x"):
    """A NumPy view of a tensor of real values: float32/float64/float16 as NumPy's own,
    bfloat16 and the float8 types as their softfp8 presets."""
    _cpu(t, op, what)
    if t.dtype in (torch.float32, torch.float64, torch.float16):
        return t.detach().resolve_conj().numpy()
    if t.is_floating_point():
        return from_torch(t)
    raise TypeError(f"softfp8.torch.{op}: {what} must be a floating-point tensor, got {t.dtype}")


def _codes(t, name, op, what):
    """A softfp8 view of a tensor holding format `name` (native dtype or codes)."""
    _cpu(t, op, what)
    fmt = _fmt(name)
    expect = torch_dtype(fmt)
    if t.dtype != expect:
        raise TypeError(f"softfp8.torch.{op}: {what} holds {fmt.name}, which travels as {expect}; "
                        f"got a {t.dtype} tensor")
    return from_torch(t, fmt)


def _tensor(arr):
    """The tensor of a NumPy result (shares its memory)."""
    if arr.dtype in (np.float32, np.float64):
        return torch.from_numpy(np.ascontiguousarray(arr))
    return to_torch(np.ascontiguousarray(arr))


@contextlib.contextmanager
def _settings(rounding, saturate, tininess, seed, sr_bits):
    with contextlib.ExitStack() as st:
        if rounding is not None or seed is not None:
            mode = rounding if rounding is not None else _context.get_rounding()
            st.enter_context(_context.rounding(mode, seed=seed, sr_bits=sr_bits))
        if saturate is not None:
            st.enter_context(_context.saturation(saturate))
        if tininess is not None:
            st.enter_context(_context.tininess(tininess))
        yield


def _quantize_np(x, fmt, rounding, saturate, tininess, seed, sr_bits):
    with _settings(rounding, saturate, tininess, seed, sr_bits), np.errstate(all="ignore"):
        return x.astype(_fmt(fmt).dtype, order="C")


def _dequantize_np(a, out):
    with np.errstate(all="ignore"):
        return a.astype(_out_np(out), order="C")


# --------------------------------------------------------------------------
# the custom ops
# --------------------------------------------------------------------------

@torch.library.custom_op("softfp8::quantize", mutates_args=())
def _quantize(x: torch.Tensor, fmt: str, rounding: str | None, saturate: bool | None,
              tininess: str | None, seed: int | None, sr_bits: int) -> torch.Tensor:
    return _tensor(_quantize_np(_values(x, "quantize"), fmt, rounding, saturate, tininess, seed, sr_bits))


@_quantize.register_fake
def _(x, fmt, rounding, saturate, tininess, seed, sr_bits):
    return torch.empty(x.shape, dtype=torch_dtype(fmt))


@torch.library.custom_op("softfp8::dequantize", mutates_args=())
def _dequantize(q: torch.Tensor, fmt: str, out: str) -> torch.Tensor:
    return _tensor(_dequantize_np(_codes(q, fmt, "dequantize", "q"), out))


@_dequantize.register_fake
def _(q, fmt, out):
    return torch.empty(q.shape, dtype=_out_torch(out))


@torch.library.custom_op("softfp8::fake_quantize", mutates_args=())
def _fake_quantize(x: torch.Tensor, fmt: str, rounding: str | None, saturate: bool | None,
                   tininess: str | None, seed: int | None, sr_bits: int) -> torch.Tensor:
    q = _quantize_np(_values(x, "fake_quantize"), fmt, rounding, saturate, tininess, seed, sr_bits)
    back = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16"}.get(x.dtype)
    return _tensor(_dequantize_np(q, back or _out_name(from_torch(x.dtype))))


@_fake_quantize.register_fake
def _(x, fmt, rounding, saturate, tininess, seed, sr_bits):
    return torch.empty(x.shape, dtype=x.dtype)


def _no_context(ctx, inputs, output):
    pass


def _ste_backward(ctx, grad):
    # straight-through: the gradient passes unchanged (not clipped at saturation)
    return grad, None, None, None, None, None, None


_fake_quantize.register_autograd(_ste_backward, setup_context=_no_context)


# quantize / dequantize differentiate as PyTorch's own dtype casts (x.to(torch.float8_e4m3fn)):
# the gradient is cast to the other side's dtype (through float8 in quantize's backward, so
# rounded there: fake_quantize passes it exactly); code tensors carry no gradient.
def _register_cast(op, nargs):
    def setup(ctx, inputs, output):
        ctx.dtype = inputs[0].dtype

    def backward(ctx, grad):
        return (grad.to(ctx.dtype),) + (None,) * nargs
    op.register_autograd(backward, setup_context=setup)


_register_cast(_quantize, 6)
_register_cast(_dequantize, 2)


def _mm_shape(a, b):
    """np.matmul's result shape (operands of >= 1 dimension)."""
    if a.dim() == 0 or b.dim() == 0:
        raise ValueError(f"softfp8.torch.matmul: operands must have at least 1 dimension, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    sa = (1,) + tuple(a.shape) if a.dim() == 1 else tuple(a.shape)
    sb = tuple(b.shape) + (1,) if b.dim() == 1 else tuple(b.shape)
    if sa[-1] != sb[-2]:
        raise ValueError(f"softfp8.torch.matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         f"fit (inner dimensions {sa[-1]} and {sb[-2]} differ)")
    batch = tuple(torch.broadcast_shapes(sa[:-2], sb[:-2]))
    return batch + ((sa[-2],) if a.dim() > 1 else ()) + ((sb[-1],) if b.dim() > 1 else ())


@torch.library.custom_op("softfp8::matmul", mutates_args=())
def _matmul(a: torch.Tensor, fmt_a: str, b: torch.Tensor, fmt_b: str, out: str,
            accumulation: str) -> torch.Tensor:
    an, bn = _codes(a, fmt_a, "matmul", "a"), _codes(b, fmt_b, "matmul", "b")
    with np.errstate(all="ignore"):
        res = gemm.matmul(an, bn, out_dtype=_out_np(out), accumulation=_model(accumulation))
    return _tensor(np.asarray(res))


@_matmul.register_fake
def _(a, fmt_a, b, fmt_b, out, accumulation):
    return torch.empty(_mm_shape(a, b), dtype=_out_torch(out))


@torch.library.custom_op("softfp8::scaled_mm", mutates_args=())
def _scaled_mm(a: torch.Tensor, fmt_a: str, b: torch.Tensor, fmt_b: str, scale_a: torch.Tensor,
               scale_b: torch.Tensor, out: str, accumulation: str, block_a: list[int] | None,
               block_b: list[int] | None) -> torch.Tensor:
    an, bn = _codes(a, fmt_a, "scaled_mm", "a"), _codes(b, fmt_b, "scaled_mm", "b")
    sa, sb = _values(scale_a, "scaled_mm", "scale_a"), _values(scale_b, "scaled_mm", "scale_b")
    with np.errstate(all="ignore"):
        res = gemm.scaled_mm(an, bn, sa, sb, out_dtype=_out_np(out), accumulation=_model(accumulation),
                             block_a=None if block_a is None else tuple(block_a),
                             block_b=None if block_b is None else tuple(block_b))
    return _tensor(res)


@_scaled_mm.register_fake
def _(a, fmt_a, b, fmt_b, scale_a, scale_b, out, accumulation, block_a, block_b):
    return torch.empty((a.shape[0], b.shape[1]), dtype=_out_torch(out))


def _no_gradient(name):
    def backward(ctx, grad):
        raise RuntimeError(f"softfp8.torch.{name} has no gradient (its operands are quantised tensors); "
                           f"softfp8.torch.fp8_matmul(x, w) computes x @ w with FP8 training's gradients")
    return backward


_matmul.register_autograd(_no_gradient("matmul"), setup_context=_no_context)
_scaled_mm.register_autograd(_no_gradient("scaled_mm"), setup_context=_no_context)


@torch.library.custom_op("softfp8::fp8_matmul", mutates_args=())
def _fp8_matmul(x: torch.Tensor, w: torch.Tensor, fmt: str, grad_fmt: str,
                accumulation: str) -> torch.Tensor:
    qx = _quantize(x, fmt, "nearest_even", True, None, None, 32)
    qw = _quantize(w, fmt, "nearest_even", True, None, None, 32)
    return _matmul(qx, fmt, qw, fmt, "float32", accumulation)


@_fp8_matmul.register_fake
def _(x, w, fmt, grad_fmt, accumulation):
    return torch.empty(_mm_shape(x, w), dtype=torch.float32)


def _fp8_setup(ctx, inputs, output):
    x, w, fmt, grad_fmt, accumulation = inputs
    ctx.save_for_backward(x, w)
    ctx.recipe = (fmt, grad_fmt, accumulation)


def _fp8_backward(ctx, grad):
    x, w = ctx.saved_tensors
    fmt, grad_fmt, acc = ctx.recipe
    q = torch.ops.softfp8.quantize
    qg = q(grad.contiguous(), grad_fmt, "nearest_even", True, None, None, 32)
    gx = gw = None
    if ctx.needs_input_grad[0]:
        qw = q(w, fmt, "nearest_even", True, None, None, 32)
        gx = torch.ops.softfp8.matmul(qg, grad_fmt, qw.t(), fmt, "float32", acc).to(x.dtype)
    if ctx.needs_input_grad[1]:
        qx = q(x, fmt, "nearest_even", True, None, None, 32)
        gw = torch.ops.softfp8.matmul(qx.t(), fmt, qg, grad_fmt, "float32", acc).to(w.dtype)
    return gx, gw, None, None, None


_fp8_matmul.register_autograd(_fp8_backward, setup_context=_fp8_setup)


# --------------------------------------------------------------------------
# the public functions (softfp8 objects in, the ops' string arguments out)
# --------------------------------------------------------------------------

def _seed(seed):
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or None, got {seed!r}")
    if not 0 <= int(seed) < 2 ** 63:
        raise ValueError(f"seed must be in 0..2**63-1 (a torch int64), got {seed!r}")
    return int(seed)


def _mode(rounding):
    if rounding is not None:
        _context._mode_index(rounding)          # TypeError / ValueError naming the mode
    return rounding


def quantize(x, fmt, *, rounding=None, saturate=None, tininess=None, seed=None, sr_bits=32):
    """x (float32/64/16, bfloat16 or a float8 tensor) rounded once into `fmt`: a tensor
    of fmt's torch type (``torch_dtype(fmt)``: native or uint8/uint16 codes).  Options
    left at None come from softfp8's context; ``seed`` makes stochastic rounding
    reproducible (element i uses the stream of ``softfp8.rounding('stochastic',
    seed=seed)``).  Differentiable as x.to(dtype) is (the gradient cast back to x's dtype);
    ``fake_quantize`` passes it exactly."""
    return torch.ops.softfp8.quantize(_cpu(x, "quantize", "x"), _fmt_name(fmt), _mode(rounding), saturate,
                                      tininess, _seed(seed), int(sr_bits))


def dequantize(q, fmt=None, dtype=torch.float32):
    """The values of a tensor in format `fmt` (inferred from a native dtype) as `dtype`
    (float32, float64, float16 or bfloat16), rounded in the context's mode where needed."""
    _cpu(q, "dequantize", "q")
    if fmt is None:
        fmt = from_torch(q.dtype)       # TypeError for code tensors: their format is needed
    return torch.ops.softfp8.dequantize(q, _fmt_name(fmt), _out_name(dtype, "dtype"))


def fake_quantize(x, fmt, *, rounding=None, saturate=None, tininess=None, seed=None, sr_bits=32):
    """quantize then dequantize, in x's dtype; differentiable (straight-through)."""
    return torch.ops.softfp8.fake_quantize(_cpu(x, "fake_quantize", "x"), _fmt_name(fmt), _mode(rounding),
                                           saturate, tininess, _seed(seed), int(sr_bits))


def _operand_fmt(t, fmt, what):
    _cpu(t, "matmul", what)
    if fmt is None:
        fmt = from_torch(t.dtype)
    return _fmt_name(fmt, f"fmt_{what}")


def matmul(a, b, *, fmt_a=None, fmt_b=None, out_dtype=torch.float32, accumulation=None):
    """softfp8.matmul of two quantised tensors (native dtypes, or codes with fmt_a / fmt_b):
    exact with one rounding into out_dtype (accumulation=None), or summed by an
    Accumulation, a matrix-unit profile (its name or object) or a BlockFMA."""
    return torch.ops.softfp8.matmul(a, _operand_fmt(a, fmt_a, "a"), b, _operand_fmt(b, fmt_b, "b"),
                                    _out_name(out_dtype), _model_key(accumulation))


def scaled_mm(a, b, scale_a, scale_b, *, fmt_a=None, fmt_b=None, out_dtype=torch.float32,
              accumulation=None, block_a=None, block_b=None):
    """softfp8.scaled_mm (torch._scaled_mm's FP8 GEMM) of two quantised 2-D tensors; the
    scales are float32 tensors (0-d per tensor, (M, 1) / (1, N) per row / column, or block
    grids with block_a / block_b)."""
    def scale(s, what):
        if not isinstance(s, torch.Tensor):
            s = torch.tensor(s, dtype=torch.float32)
        return _cpu(s, "scaled_mm", what)
    return torch.ops.softfp8.scaled_mm(
        a, _operand_fmt(a, fmt_a, "a"), b, _operand_fmt(b, fmt_b, "b"), scale(scale_a, "scale_a"),
        scale(scale_b, "scale_b"), _out_name(out_dtype), _model_key(accumulation),
        None if block_a is None else list(block_a), None if block_b is None else list(block_b))


def fp8_matmul(x, w, *, fmt="e4m3", grad_fmt="e5m2", accumulation=None):
    """x @ w as FP8 training computes it, differentiable: x and w (float tensors, x of
    shape (..., K), w (K, N)) rounded to nearest even, saturating, into `fmt`, multiplied
    by softfp8.matmul under `accumulation` into float32.  Backward: the incoming gradient
    g is quantised the same way into `grad_fmt`; dx = Q(g) @ Q(w)^T and dw = Q(x)^T @ Q(g)
    by the same accumulation, into float32 (then x's / w's dtype)."""
    _cpu(x, "fp8_matmul", "x")
    _cpu(w, "fp8_matmul", "w")
    if x.dim() < 2 or w.dim() != 2:
        raise ValueError(f"softfp8.torch.fp8_matmul: x must have at least 2 dimensions and w 2, got shapes "
                         f"{tuple(x.shape)} and {tuple(w.shape)}")
    lead = x.shape[:-1]
    out = torch.ops.softfp8.fp8_matmul(x.reshape(-1, x.shape[-1]), w, _fmt_name(fmt),
                                       _fmt_name(grad_fmt, "grad_fmt"), _model_key(accumulation))
    return out.reshape(*lead, out.shape[-1])
