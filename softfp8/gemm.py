"""Matrix products under hardware accumulation models, and FP8 scaled matmul.

``Accumulation`` describes how a matrix unit sums products (a product format, an
accumulator format with its rounding, promotion of partial sums into a running
sum every N products); ``matmul(a, b, accumulation=...)`` and ``scaled_mm``
compute with it bit-exactly in C (softfp8/_core/gemm.c).  The models are
specified in docs/training.md, section "Accumulation models".
"""
from __future__ import annotations

import math

import numpy as np

from . import _context, _ext
from . import bits as _bits
from ._dtypes import _matmul_shape, dtype_of, format_of
from ._dtypes import matmul as _exact_matmul
from ._context import Flags
from ._formats import convert_codes, lookup
from ._validation import _as_int, format_or_none

_STOCHASTIC = _context.ROUNDING_MODES.index("stochastic")
_NUMPY_FLOATS = {"float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
                 "float16": np.dtype(np.float16)}


_LOW24 = np.uint64((1 << 24) - 1)
_BIG_X, _SMALL_X = math.ldexp(1.0, 800), math.ldexp(1.0, -800)
_TINY, _HUGE = math.ldexp(1.0, -1000), math.ldexp(1.0, 1000)


def _scaled_odd(x, s):
    """x * s (float64 arrays, s positive finite float32 values) rounded to odd at 53 bits,
    values beyond 2^+-1000 replaced by +-2^+-1000.  Rounding this once into a format of at
    most 16 bits gives the rounding of the exact product in every mode (SPEC §3)."""
    x, s = np.broadcast_arrays(x, s)
    shape = x.shape
    x, s = x.reshape(-1), s.reshape(-1)
    out = x * s                               # right for zeros, infinities and NaNs
    # exact already where x has at most 29 significant bits (float32 and narrower inputs
    # included: 29 + 24 <= 53 bits) and 2^-800 <= |x| <= 2^800; the rest goes the long way
    ax = np.abs(x)
    m = (((x.view(np.uint64) & _LOW24) != 0) | (ax > _BIG_X) | (ax < _SMALL_X)) \
        & (ax <= np.finfo(np.float64).max) & (ax != 0)
    if not m.any():
        return out.reshape(shape)
    xm, xe = np.frexp(x[m])
    sm, se = np.frexp(s[m])
    c = xm * 134217729.0                      # Veltkamp split: 26 + 26 bits
    hi = c - (c - xm)
    lo = xm - hi
    p1, p2 = hi * sm, lo * sm                 # exact (<= 50-bit products)
    p = p1 + p2                               # TwoSum: p + err == p1 + p2 exactly
    bb = p - p1
    err = (p1 - (p - bb)) + (p2 - bb)
    even = (p.view(np.uint64) & 1) == 0
    fix = (err != 0) & even
    p[fix] = np.nextafter(p[fix], np.copysign(np.inf, err[fix]))
    t = xe.astype(np.int64) + se              # |p| in [1/4, 1): value p * 2^t
    v = np.ldexp(p, np.clip(t, -1010, 1010))
    v = np.where(t < -990, np.copysign(_TINY, p), v)
    v = np.where(t > 990, np.copysign(_HUGE, p), v)
    out[m] = v
    return out.reshape(shape)


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
    ``order``: "sequential" (products added in order of the inner index).
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
        if order != "sequential":
            if not isinstance(order, str):
                raise TypeError(f"order must be a string ('sequential'), got {order!r}")
            raise ValueError(f"unknown order {order!r}: only 'sequential' is modelled")
        self.product = product
        self.accumulator = accumulator
        self.promote_every = promote_every
        self.promoted = promoted
        self.order = order

    def __repr__(self):
        parts = [f"product={self._prod.name if self._prod else None}",
                 f"accumulator={self._acc.name!r}", f"rounding={self.rounding!r}",
                 f"promote_every={self.promote_every!r}"]
        if self.product_rounding is not None:
            parts.append(f"product_rounding={self.product_rounding!r}")
        if self._prom.name != "float32":
            parts.append(f"promoted={self._prom.name!r}")
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
    if not isinstance(acc, Accumulation):
        raise TypeError(f"accumulation must be None, 'exact' or a softfp8.Accumulation, "
                        f"got {acc!r}")
    return acc


def _publish(fl):
    if fl:
        cell = _context._current().cell
        cell.flags = cell.flags | int(fl)


def _run(a2, b2, res, fa, fb, model, out, promote, sa=None, sa_block=(1, 1), sb=None,
         sb_block=(1, 1), kblock=0):
    """res[...] = a2 @ b2 (2-D) under model (None: exact); returns the flags."""
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
                     out.params, out_env, a2, b2, res, sa, sa_block, sb, sb_block, kblock)


# ---- the BLAS path of the exact model (docs/training.md, "Scaled matmul on BLAS") ----
#
# Every value of a format of at most 16 bits with IEEE subnormals, and every product of
# two such values, is exact in binary64 (significands of at most 26 bits, exponents far
# inside binary64's range).  If S = sum |a_l b_l| < 2^(qa + qb + 53), where 2^qa and 2^qb
# are the least significant bits present in a's row and b's column, every partial sum of
# the products is an integer multiple of 2^(qa + qb) below 2^53 of them: exact in binary64
# whatever the order, blocking or FMA use of the float64 GEMM (np.matmul, BLAS dgemm).
# S itself is computed by a second dgemm, whose relative error is below K * 2^-53: the
# test S~ < 2^(qa + qb + 52) proves S < 2^(qa + qb + 53).  The exact sum D is then scaled
# by s = RN_f32(sa * sb) and rounded to odd at 53 bits (_scaled_odd), which one rounding
# into a format of at most 24 significant bits (p >= q + 2) cannot tell from D * s; that
# rounding is the core's binary64 conversion, in the output's environment.  Elements that
# fail the test or sum to zero (the sign of an exact zero sum follows the products' zero
# signs) are recomputed by the exact accumulator; inputs holding NaN or infinity go to it
# whole.

_BLAS_TABLES: dict = {}


def _blas_table(fmt):
    """(binary64 values, non-finite mask, exponent of the least significant bit (4096 for
    zeros), subnormal mask) per code of fmt; None if fmt does not qualify."""
    t = _BLAS_TABLES.get(fmt.params)
    if t is None and fmt.params not in _BLAS_TABLES:
        if (fmt.bits <= 16 and fmt.subnormals == "ieee" and fmt.man_bits <= 25
                and fmt.min_subnormal >= 2.0 ** -400 and fmt.max <= 2.0 ** 400):
            n = 1 << fmt.bits
            v = convert_codes(fmt.params, _ext.BINARY64, np.arange(n, dtype=np.uint64))[0]
            v = v.view(np.float64)
            fin = np.isfinite(v)
            lsb = np.full(n, 4096, dtype=np.int16)
            for c in np.flatnonzero(fin & (v != 0)):
                mant, e = math.frexp(abs(float(v[c])))
                i = int(mant * 2.0 ** 53)
                lsb[c] = e - 53 + (i & -i).bit_length() - 1
            sub = fin & (v != 0) & (np.abs(v) < fmt.min_normal)
            t = (v, ~fin, lsb, sub)
        _BLAS_TABLES[fmt.params] = t
    return t


_DOWNWARD = _context.ROUNDING_MODES.index("downward")
_F32_TINY = 2.0 ** -126
_F32_MAX = float(np.finfo(np.float32).max)
assert Flags.INEXACT == 1


def _round_f64(y, out, env):
    """(y rounded once into out, uint8 flags per element): the core's conversion from
    binary64 in env; binary32 results in nearest-even mode that are normal numbers by the
    hardware's conversion (the same rounding; inexact is the only flag it can raise)."""
    if out.params == _ext.BINARY32 and env[0] == 0:
        with np.errstate(over="ignore"):
            r = y.astype(np.float32)
        fl = (r.astype(np.float64) != y).view(np.uint8)    # Flags.INEXACT == 1
        ar = np.abs(r)
        hard = ~((ar > _F32_TINY) & (ar <= _F32_MAX))     # |r| > 2^-126: |y| > 2^-126 too
        if hard.any():
            codes, fl[hard] = convert_codes(_ext.BINARY64, out.params, y[hard].view(np.uint64),
                                            env=env)
            r[hard] = codes.astype(np.uint32).view(np.float32)
        return r, fl
    codes, fl = convert_codes(_ext.BINARY64, out.params, y.view(np.uint64), env=env)
    edt = np.uint32 if out.params == _ext.BINARY32 else np.uint8 if out.fmt.bits <= 8 \
        else np.uint16
    return codes.astype(edt).view(out.dtype), fl


def _blas_exact(a2, b2, fa, fb, s_a, s_b, out, fallback):
    """(result, flags) of the exact model with per-tensor binary32 scales s_a, s_b (floats)
    by the float64 GEMM, or None where the BLAS path does not apply (then the caller runs
    the exact accumulator).  fallback(rows, cols) -> (result, flags) runs the exact
    accumulator on a[rows] @ b[:, cols]."""
    m, k = a2.shape
    p = b2.shape[1]
    if not _ext.fast_enabled() or m * p == 0 or k == 0:
        return None
    if out.params != _ext.BINARY32 and (out.fmt is None or out.fmt.man_bits > 23):
        return None                                   # float64 output: no double rounding
    ta, tb = _blas_table(fa), _blas_table(fb)
    if ta is None or tb is None:
        return None
    ca = a2.view(np.uint8 if fa.bits <= 8 else np.uint16)
    cb = b2.view(np.uint8 if fb.bits <= 8 else np.uint16)
    A, B = np.take(ta[0], ca), np.take(tb[0], cb)
    absa, absb = np.abs(A), np.abs(B)
    ma, mb = absa.max(axis=1), absb.max(axis=0)
    if not (np.isfinite(ma).all() and np.isfinite(mb).all()):
        return None                                   # NaN or infinity: the accumulator
    if min(s_a, s_b) < _F32_TINY:
        return None                                   # a subnormal scale (denormal flag)
    s64 = s_a * s_b                                   # exact; RN_f32 by the hardware
    s = float(np.float32(s64)) if s64 < 2.0 ** 128 else math.inf
    if not _F32_TINY <= s < math.inf:
        return None                                   # underflow / overflow: the accumulator
    sfl = int(Flags.INEXACT) if s != s64 else 0
    D = A @ B
    # 2^(qa + 26) per row of a, 2^(qb + 26) per column of b: their product is the bound
    la = np.ldexp(1.0, np.minimum(np.take(ta[2], ca).min(axis=1) + 26, 500))
    lb = np.ldexp(1.0, np.minimum(np.take(tb[2], cb).min(axis=0) + 26, 500))
    # cheap sufficient test: k max|a_i| max|b_j| < 2^(qa_i + qb_j + 51); the elements that
    # fail it get the per-element test on S (a dgemm on their rows and columns only)
    ra, rb = ma * k / la, mb / lb
    bad = np.zeros(D.shape, dtype=bool)
    if ra.max() * rb.max() >= 0.5:
        cand = np.multiply.outer(ra, rb) >= 0.5
        r, c = np.flatnonzero(cand.any(axis=1)), np.flatnonzero(cand.any(axis=0))
        S = absa[r] @ absb[:, c]
        bad[np.ix_(r, c)] = cand[np.ix_(r, c)] & ~(S < np.multiply.outer(la[r], lb[c]))
    env = _env(out, None)
    zero = (D == 0) & ~bad
    if zero.any():   # the sign of an exact zero sum, as the accumulator gives it
        down = env[0] == _DOWNWARD
        neg = np.full(D.shape, down)                  # cancellation: -0 only downward
        # every product a zero (S = 0): in a zero row of a or a zero column of b, or found
        # by a dgemm of |a| and |b| on the other zero sums' rows and columns
        only = zero & ((ma == 0)[:, None] | (mb == 0)[None, :])
        rest = zero & ~only
        if rest.any():
            r, c = np.flatnonzero(rest.any(axis=1)), np.flatnonzero(rest.any(axis=0))
            only[np.ix_(r, c)] |= rest[np.ix_(r, c)] & ((absa[r] @ absb[:, c]) == 0)
        ii, jj = np.nonzero(only)
        if len(ii):   # then the zero signs decide: -0 if every product is -0
            na, nb = np.signbit(A), np.signbit(B)
            rn, cn = na.sum(axis=1)[ii], nb.sum(axis=0)[jj]
            # products of sign -: sum over l of (a_il < 0) xor (b_lj < 0), read off the
            # row's and column's sign counts when either has one sign only
            cnt = np.select([rn == 0, rn == k, cn == 0, cn == k], [cn, k - cn, rn, k - rn], -1)
            g = np.flatnonzero(cnt < 0)
            if len(g):   # the others by a dgemm of sign bits on their rows and columns
                r, ir = np.unique(ii[g], return_inverse=True)
                c, ic = np.unique(jj[g], return_inverse=True)
                ar, bc = na[r].astype(np.float64), nb[:, c].astype(np.float64)
                cnt[g] = (ar @ (1.0 - bc) + (1.0 - ar) @ bc)[ir, ic]
            neg[ii, jj] = np.where(cnt == k, True, np.where(cnt == 0, False, down))
        D[zero] = np.where(neg[zero], -0.0, 0.0)
    y = D * s                                         # exact where D has <= 29 bits
    odd = (D.view(np.uint64) & _LOW24) != 0
    if odd.any():
        y[odd] = _scaled_odd(D[odd], s)
    y = y.reshape(-1)
    res, fl = _round_f64(y, out, env)
    fl[bad.reshape(-1)] = 0
    flags = int(np.bitwise_or.reduce(fl)) | sfl
    if np.take(ta[3], ca).any() or np.take(tb[3], cb).any():
        flags |= int(Flags.DENORMAL)
    res = res.reshape(m, p)
    if bad.any():
        rows, cols = np.flatnonzero(bad.any(axis=1)), np.flatnonzero(bad.any(axis=0))
        sub, fl2 = fallback(rows, cols)
        res[np.ix_(rows, cols)] = sub
        flags |= fl2
    return res, flags


def _operands(a, b, what):
    a = np.asarray(a)
    b = np.asarray(b)
    fa, fb = format_of(a.dtype), format_of(b.dtype)
    if fa is None or fb is None:
        raise TypeError(f"{what} needs softfp8 arrays, got {a.dtype} and {b.dtype}")
    return a, b, fa, fb


def matmul(a, b, out_dtype=None, out=None, accumulation=None):
    """Matrix product of two softfp8 arrays (np.matmul's shapes and broadcasting).

    ``accumulation=None``: every output element is the exact dot product rounded
    once (context rounding) into ``out_dtype`` -- the operands' format by default,
    float32 or float64 (the tensor-core pattern).  With an ``Accumulation`` the
    products are summed as that model specifies (docs/training.md, "Accumulation
    models").  The operands may have different formats (E4M3 x E5M2, ...): then
    ``out_dtype`` defaults to float32 and may be float32, float64, float16,
    bfloat16 or any softfp8 format.  ``out`` must have the result's shape and dtype.
    """
    a, b, fa, fb = _operands(a, b, "softfp8.matmul")
    model = _model(accumulation)
    if model is None and a.dtype == b.dtype:
        return _exact_matmul(a, b, out_dtype=out_dtype, out=out)
    if out_dtype is None:
        out_dtype = a.dtype if a.dtype == b.dtype else np.float32
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
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    m, p = a2.shape[-2], b2.shape[-1]
    res = np.empty(batch + (m, p), dtype=tgt.dtype)
    A = np.broadcast_to(a2, batch + a2.shape[-2:])
    B = np.broadcast_to(b2, batch + b2.shape[-2:])
    promote = 0 if model is None or model.promote_every is None else model.promote_every
    fl = 0
    for idx in np.ndindex(*batch):
        ai, bi = A[idx], B[idx]
        fast = None
        if model is None:
            def exact_part(rows, cols, ai=ai, bi=bi):
                part = np.empty((len(rows), len(cols)), dtype=tgt.dtype)
                return part, _run(ai[rows], bi[:, cols], part, fa, fb, None, tgt, 0)
            fast = _blas_exact(ai, bi, fa, fb, 1.0, 1.0, tgt, exact_part)
        if fast is not None:
            res[idx] = fast[0]
            fl |= fast[1]
        else:
            fl |= _run(ai, bi, res[idx], fa, fb, model, tgt, promote)
    _publish(fl)
    if a.ndim == 1:
        res = res[..., 0, :]
    if b.ndim == 1:
        res = res[..., 0]
    if out is not None:
        out[...] = res
        return out
    return res


def _scale(s, what, rows, cols, kdim, block):
    """(uint32 C array of binary32 scales, (block rows, block cols)) for an operand of
    shape (rows, cols); kdim: 1 if the operand's inner dimension is its columns (a), 0 (b)."""
    arr = np.asarray(s)
    if format_of(arr.dtype) is None and arr.dtype.kind not in "fiu":
        raise TypeError(f"{what} must be a float array or a softfp8 array, got dtype {arr.dtype}")
    with np.errstate(all="ignore"):
        s32 = arr.astype(np.float32)
        wide = arr.astype(np.float64)
    if not np.array_equal(s32.astype(np.float64), wide, equal_nan=True):
        raise ValueError(f"{what} holds values that are not exactly binary32 (scales are float32)")
    v = s32.astype(np.float64)
    bad = ~(np.isfinite(v) & (v > 0))
    if bad.any():
        raise ValueError(f"{what} must hold finite positive scales, got {v[bad].flat[0]!r}")
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
    if model is None and sa.size == 1 and sb.size == 1 and not kblock:
        def exact_part(rows, cols):
            part = np.empty((len(rows), len(cols)), dtype=tgt.dtype)
            return part, _run(a[rows], b[:, cols], part, fa, fb, None, tgt, 0, sa, (len(rows), k),
                              sb, (k, len(cols)), 0)
        fast = _blas_exact(a, b, fa, fb, float(sa.view(np.float32)[0, 0]),
                           float(sb.view(np.float32)[0, 0]), tgt, exact_part)
        if fast is not None:
            _publish(fast[1])
            return fast[0]
    res = np.empty((m, p), dtype=tgt.dtype)
    fl = _run(a, b, res, fa, fb, model, tgt, promote, sa, blka, sb, blkb, kblock)
    _publish(fl)
    return res
