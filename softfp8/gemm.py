"""Matrix products under hardware accumulation models, and FP8 scaled matmul.

``Accumulation`` describes how a matrix unit sums products (a product format, an
accumulator format with its rounding, promotion of partial sums into a running
sum every N products); ``matmul(a, b, accumulation=...)`` and ``scaled_mm``
compute with it bit-exactly in C, in the matrix engine (softfp8/_core/mm/,
docs/matrix-engine.md).  The models are specified in docs/training.md, section
"Accumulation models".
"""
from __future__ import annotations

import numpy as np

from . import _context, _ext
from . import bits as _bits
from . import matrix_units as _mu
from ._dtypes import _matmul_shape, dtype_of, format_of
from ._dtypes import matmul as _exact_matmul
from ._formats import lookup
from ._validation import _as_int, binary32_scales, format_or_none

_STOCHASTIC = _context.ROUNDING_MODES.index("stochastic")
_F32_MAX = float(np.finfo(np.float32).max)
_NUMPY_FLOATS = {"float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
                 "float16": np.dtype(np.float16)}


class _Target:
    """A format the kernel rounds into: C parameters, the Format (None for
    binary32/64), the NumPy dtype of results, and a name for messages."""
    __slots__ = ("params", "fmt", "dtype", "name")

    def __init__(self, params, fmt, dtype, name):
        self.params, self.fmt, self.dtype, self.name = params, fmt, dtype, name

    def __eq__(self, other):
        return isinstance(other, _Target) and self.params == other.params and self.dtype == other.dtype

    def __hash__(self):
        return hash((self.params, self.dtype))


def _target(x, what, allow_float64=False):
    """Resolve a format, softfp8 dtype, NumPy float dtype / type or name."""
    fmt = format_or_none(x)
    if fmt is None and isinstance(x, str):
        if x in _NUMPY_FLOATS:
            x = _NUMPY_FLOATS[x]
        else:
            try:
                fmt = lookup(x)
            except (KeyError, ValueError, TypeError):
                raise ValueError(f"{what}: unknown format name {x!r}") from None
    if fmt is not None:
        return _Target(fmt.params, fmt, dtype_of(fmt), fmt.name)
    try:
        dt = np.dtype(x)
    except TypeError:
        dt = None
    if dt == np.float32:
        return _Target(_ext.BINARY32, None, dt, "float32")
    if dt == np.float64 and allow_float64:
        return _Target(_ext.BINARY64, None, dt, "float64")
    if dt == np.float16:   # IEEE binary16: softfp8.float16's codes, NumPy's dtype
        f16 = lookup("float16")
        return _Target(f16.params, f16, dt, "float16")
    if dt is not None and dt.name == "bfloat16" and dt.itemsize == 2:   # ml_dtypes.bfloat16
        bf = lookup("bfloat16")
        return _Target(bf.params, bf, dt, "bfloat16")
    allowed = "float32, float64, float16, " if allow_float64 else "float32, float16, "
    raise TypeError(f"{what} must be {allowed}bfloat16 or a softfp8 format, got {x!r}")


def _mode(mode, what):
    if mode is None:
        return None
    _context._mode_index(mode)   # TypeError / ValueError naming the mode
    if mode == "stochastic":
        raise ValueError(f"{what}='stochastic' is not modelled: accumulation models use the "
                         f"deterministic rounding modes")
    return mode


class Accumulation:
    """How a matrix unit accumulates a dot product (docs/training.md, "Accumulation models").

    ``product``: None (exact products) or a format the products are rounded into
    (with ``product_rounding``, default ``rounding``).  ``accumulator``: the format
    the sequential sum is held in ("float32" -- IEEE binary32 --, "float16",
    "bfloat16" or any softfp8 format), rounded after every addition with
    ``rounding`` (None: the context's mode when the product runs).
    ``promote_every``: None, or N >= 1: the accumulator restarts every N products
    and each partial sum is added into a running sum of format ``promoted``
    (binary32 by default, rounded to nearest even), as IBM's chunk-based
    accumulation and the promotion of DeepSeek-V3's FP8 GEMMs do.
    ``order``: "sequential" (products added in order of the inner index), "pairwise"
    (a binary tree) or "kahan" (compensated; docs/matrix-units.md, "Further orders").
    ``Accumulation.profile(name)``: a real GPU's matrix unit (docs/matrix-units.md).
    """

    __slots__ = ("product", "accumulator", "rounding", "product_rounding", "promote_every",
                 "promoted", "order", "_prod", "_acc", "_prom")

    def __init__(self, product=None, accumulator="float32", rounding=None, promote_every=None,
                 order="sequential", product_rounding=None, promoted="float32"):
        self._prod = None if product is None else _target(product, "Accumulation product")
        self._acc = _target(accumulator, "Accumulation accumulator")
        self._prom = _target(promoted, "Accumulation promoted")
        self.rounding = _mode(rounding, "rounding")
        self.product_rounding = _mode(product_rounding, "product_rounding")
        if promote_every is not None:
            promote_every = _as_int(promote_every, "promote_every")
            if promote_every < 1:
                raise ValueError(f"promote_every must be None or >= 1, got {promote_every}")
        if order not in ("sequential", "pairwise", "kahan"):
            if not isinstance(order, str):
                raise TypeError(f"order must be a string ('sequential', 'pairwise', 'kahan'), got {order!r}")
            raise ValueError(f"unknown order {order!r}: 'sequential', 'pairwise' or 'kahan'")
        self.product = product
        self.accumulator = accumulator
        self.promote_every = promote_every
        self.promoted = promoted
        self.order = order

    profile = staticmethod(_mu.profile)

    def __repr__(self):
        parts = [f"product={self._prod.name if self._prod else None}",
                 f"accumulator={self._acc.name!r}", f"rounding={self.rounding!r}",
                 f"promote_every={self.promote_every!r}"]
        if self.product_rounding is not None:
            parts.append(f"product_rounding={self.product_rounding!r}")
        if self._prom.name != "float32":
            parts.append(f"promoted={self._prom.name!r}")
        if self.order != "sequential":
            parts.append(f"order={self.order!r}")
        return f"softfp8.Accumulation({', '.join(parts)})"


def _env(target, rounding):
    env = _bits._env(target.fmt, rounding, None, None, None)
    if env[0] == _STOCHASTIC:
        raise ValueError(f"stochastic rounding (from the softfp8 context) is not modelled by "
                         f"accumulation models; rounding into {target.name} needs a "
                         f"deterministic mode")
    return env


def _model(acc):
    if acc is None or (isinstance(acc, str) and acc == "exact"):
        return None
    if _mu.is_block_model(acc) or (isinstance(acc, Accumulation) and acc.order != "sequential"):
        raise TypeError(f"softfp8.scaled_mm does not model {acc!r} yet: matrix units, BlockFMA and the "
                        f"pairwise and Kahan orders are computed by softfp8.matmul")
    if not isinstance(acc, Accumulation):
        raise TypeError(f"accumulation must be None, 'exact' or a softfp8.Accumulation, "
                        f"got {acc!r}")
    return acc


def _run(a2, b2, res, fa, fb, model, out, promote, sa=None, sa_block=(1, 1), sb=None,
         sb_block=(1, 1), kblock=0, scale_exact=False):
    """res[...] = a2 @ b2 (2-D) under model (None: exact) by the matrix engine; returns the
    flags.  The engine picks the path (BLAS with an exactness certificate, integer dot
    products, the model kernels, the generic kernel: docs/matrix-engine.md).  scale_exact:
    the scales are powers of two multiplied exactly (mx.matmul), else rounded to binary32."""
    out_env = _env(out, None)
    if model is None:
        exact, fp, envp, facc, envacc, fprom, envprom = True, None, out_env, out.params, out_env, \
            _ext.BINARY32, out_env
    else:
        exact = False
        envacc = _env(model._acc, model.rounding)
        facc = model._acc.params
        fp = model._prod.params if model._prod is not None else None
        envp = _env(model._prod, model.product_rounding or model.rounding) if fp else envacc
        fprom = model._prom.params
        envprom = _env(model._prom, "nearest_even")
    return _ext.gemm(fa.params, fb.params, exact, fp, envp, facc, envacc, promote, fprom, envprom,
                     out.params, out_env, a2, b2, res, sa, sa_block, sb, sb_block, kblock,
                     scale_exact=scale_exact)


def _operands(a, b, what):
    a = np.asarray(a)
    b = np.asarray(b)
    fa, fb = format_of(a.dtype), format_of(b.dtype)
    if fa is None or fb is None:
        raise TypeError(f"{what} needs softfp8 arrays, got {a.dtype} and {b.dtype}")
    return a, b, fa, fb


def matmul(a, b, c=None, out_dtype=None, out=None, accumulation=None):
    """Matrix product of two softfp8 arrays (np.matmul's shapes and broadcasting), plus C.

    ``accumulation=None``: every output element is the exact dot product rounded
    once (context rounding) into ``out_dtype`` -- the operands' format by default,
    float32 or float64 (the tensor-core pattern).  With an ``Accumulation`` the
    products are summed as that model specifies (docs/training.md, "Accumulation
    models").  The operands may have different formats (E4M3 x E5M2, ...): then
    ``out_dtype`` defaults to float32 and may be float32, float64, float16,
    bfloat16 or any softfp8 format.  ``out`` must have the result's shape and dtype.
    ``c``: A @ B + C, C of the output's dtype, broadcast to the result's shape, entering
    where the model puts it; ``accumulation`` may also be a matrix unit
    (``Accumulation.profile(name)``) or a ``softfp8.BlockFMA`` (docs/matrix-units.md).
    """
    if _mu.handles(accumulation, c):
        return _mu.matmul(a, b, c, out_dtype, out, accumulation)
    a, b, fa, fb = _operands(a, b, "softfp8.matmul")
    model = _model(accumulation)
    if model is None and a.dtype == b.dtype:
        return _exact_matmul(a, b, out_dtype=out_dtype, out=out)
    if out_dtype is None:
        out_dtype = _mu.default_out_dtype(model, a.dtype, b.dtype)
    tgt = _target(out_dtype, "softfp8.matmul out_dtype", allow_float64=True)
    shape = _matmul_shape(a, b)
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"softfp8.matmul out must be a NumPy array, got {type(out).__name__}")
        if out.dtype != tgt.dtype:
            raise TypeError(f"softfp8.matmul: out has dtype {out.dtype}, expected {tgt.dtype}")
        if out.shape != shape:
            raise ValueError(f"softfp8.matmul: out has shape {out.shape}, expected {shape} "
                             f"(the product of shapes {a.shape} and {b.shape})")
    a2 = a[np.newaxis, :] if a.ndim == 1 else a
    b2 = b[:, np.newaxis] if b.ndim == 1 else b
    m, p = a2.shape[-2], b2.shape[-1]
    promote = 0 if model is None or model.promote_every is None else model.promote_every
    if a2.ndim == 2 and b2.ndim == 2:     # one product: no batch to broadcast
        res = np.empty((m, p), dtype=tgt.dtype)
        return _mu.finish(res, a.ndim, b.ndim, out, _run(a2, b2, res, fa, fb, model, tgt, promote))
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    res = np.empty(batch + (m, p), dtype=tgt.dtype)
    A = np.broadcast_to(a2, batch + a2.shape[-2:])
    B = np.broadcast_to(b2, batch + b2.shape[-2:])
    fl = 0
    for idx in np.ndindex(*batch):
        fl |= _run(A[idx], B[idx], res[idx], fa, fb, model, tgt, promote)
    return _mu.finish(res, a.ndim, b.ndim, out, fl)


def _scale(s, what, rows, cols, kdim, block):
    """(uint32 C array of binary32 scales, (block rows, block cols)) for an operand of
    shape (rows, cols); kdim: 1 if the operand's inner dimension is its columns (a), 0 (b).
    Scales are rounded to binary32 as scaling.quantize rounds a given scale."""
    if block is None and type(s) in (float, np.float32, np.float64) and 0 < s <= _F32_MAX \
            and float(np.float32(s)) == float(s):
        # a per-tensor binary32 scale, the common case: no array checks
        return (np.full((1, 1), s, dtype=np.float32).view(np.uint32),
                (max(rows, 1), max(cols, 1)), 0)
    s32 = binary32_scales(s, what)
    if s32.size == 1 and block is None:
        blk = (max(rows, 1), max(cols, 1))          # per tensor
        s2 = s32.reshape(1, 1)
    else:
        if s32.ndim != 2:
            raise ValueError(f"{what} must be a scalar (per tensor) or 2-D, got shape {s32.shape}")
        s2 = s32
        ns_r, ns_c = s2.shape
        if block is not None:
            if (not isinstance(block, tuple) or len(block) != 2):
                raise TypeError(f"block for {what} must be a (rows, cols) tuple, got {block!r}")
            blk = (_as_int(block[0], "block rows"), _as_int(block[1], "block cols"))
            if blk[0] < 1 or blk[1] < 1:
                raise ValueError(f"block for {what} must be at least (1, 1), got {block!r}")
        elif (rows % ns_r if ns_r else 1) or (cols % ns_c if ns_c else 1):
            raise ValueError(f"{what} has shape {s2.shape}, which does not tile an operand of "
                             f"shape {(rows, cols)}: give the block shape (block_a= / block_b=)")
        else:
            blk = (max(rows // ns_r, 1), max(cols // ns_c, 1))
        need = (-(-rows // blk[0]), -(-cols // blk[1]))
        if (ns_r, ns_c) != need:
            raise ValueError(f"{what} has shape {s2.shape}, expected {need} for blocks of "
                             f"{blk} over an operand of shape {(rows, cols)}")
    k = cols if kdim == 1 else rows
    kb = blk[kdim] if blk[kdim] < k else 0
    return np.ascontiguousarray(s2, dtype=np.float32).view(np.uint32), blk, kb


def scaled_mm(a, b, scale_a, scale_b, out_dtype=np.float32, accumulation=None, *,
              block_a=None, block_b=None):
    """FP8 GEMM with scales, as torch._scaled_mm and cuBLASLt define it (docs/training.md).

    ``a`` (M x K) and ``b`` (K x N): softfp8 arrays, of any formats (E4M3 x E5M2 for
    the backward pass).  ``scale_a`` / ``scale_b``: positive float32 scales (any
    float or softfp8 array whose values are exact binary32), the factors that map
    codes back to real values (real a = codes * scale_a): a scalar (per tensor),
    shape (M, 1) for a / (1, N) for b (per row / per column), or a 2-D block grid
    (e.g. (M, K/128) for 1 x 128 tiles of a, (K/128, N/128) for 128 x 128 blocks of
    b; ``block_a`` / ``block_b`` give the block shape where the grid does not divide
    the operand).  Result[i, j] = sum over k of a[i,k] * b[k,j] * s with
    s = sa * sb rounded to float32, summed under ``accumulation`` (None: exactly,
    one rounding into ``out_dtype``): float32 (default), float64, float16,
    bfloat16 or a softfp8 format such as E4M3.  Scales that vary along K (block
    scales) are applied to each chunk of products as it is promoted (the chunk is
    the K-block unless ``promote_every`` divides it).
    """
    return _scaled_mm(a, b, scale_a, scale_b, out_dtype, accumulation, block_a, block_b, False,
                      "scaled_mm")


def _scaled_mm(a, b, scale_a, scale_b, out_dtype, accumulation, block_a, block_b, scale_exact, what):
    """scaled_mm; scale_exact: the scales are powers of two (E8M0 values) whose products are
    exact and raise no flag (softfp8.mx.matmul), not rounded to binary32."""
    a, b, fa, fb = _operands(a, b, "softfp8.scaled_mm")
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"softfp8.scaled_mm needs 2-D operands, got shapes {a.shape} and {b.shape}")
    m, k = a.shape
    if b.shape[0] != k:
        raise ValueError(f"softfp8.scaled_mm: shapes {a.shape} and {b.shape} do not fit (inner "
                         f"dimensions {k} and {b.shape[0]} differ)")
    p = b.shape[1]
    model = _model(accumulation)
    tgt = _target(out_dtype, "softfp8.scaled_mm out_dtype", allow_float64=True)
    sa, blka, kba = _scale(scale_a, "scale_a", m, k, 1, block_a)
    sb, blkb, kbb = _scale(scale_b, "scale_b", k, p, 0, block_b)
    if kba and kbb and kba != kbb:
        raise ValueError(f"scale_a and scale_b block the inner dimension differently "
                         f"({kba} and {kbb} products): use one K-block size")
    kblock = kba or kbb
    promote = 0
    if model is not None:
        promote = model.promote_every or 0
        if kblock:
            if promote == 0:
                promote = kblock
            elif kblock % promote:
                raise ValueError(f"promote_every={promote} must divide the scales' K-block "
                                 f"of {kblock} products")
    res = np.empty((m, p), dtype=tgt.dtype)
    fl = _run(a, b, res, fa, fb, model, tgt, promote, sa, blka, sb, blkb, kblock, scale_exact)
    _context.publish_flags(fl, what)
    return res
