"""softfp8.dask: softfp8 formats in ``dask.array`` with softfp8's semantics.

Dask is optional: ``import softfp8`` never imports it; ``import softfp8.dask``
needs ``dask[array]`` (``pip install softfp8[dask]``).  See docs/dask.md.

Plain ``dask.array`` already handles softfp8 dtypes element by element
(``astype``, ufuncs, comparisons, ``map_blocks``, ``max``/``min``).  This module
adds what a chunked computation cannot get right by itself:

- :func:`sum` and :func:`mean`: the exact sum of all chunks rounded ONCE, equal
  to softfp8's one-call ``np.sum`` / ``softfp8.bits.sum`` whatever the chunking
  (``dx.sum()`` itself fails in Dask: it passes a descriptor instance as
  ``dtype=`` to ``np.sum``, which NumPy refuses for new-style user DTypes);
- :func:`matmul`: exact dot products rounded once, as ``softfp8.matmul``;
- :func:`astype`: casts whose stochastic rounding is keyed on the global element
  index, so results do not depend on chunking or scheduling;
- :func:`save` / :func:`load`: ``.npy`` files (or a Zarr array) of codes plus the
  format's description.
"""
from __future__ import annotations

import builtins
import json
import math
import os
from fractions import Fraction
from numbers import Integral

import dask.array as da
import numpy as np

from . import _context, _ext, bits
from ._cache import LRU as _LRU
from ._dtypes import dtype_of, format_of
from ._dtypes import matmul as _matmul
from ._io import _describe, _rebuild
from ._validation import _as_int, as_format, format_or_none

__all__ = ["sum", "mean", "max", "min", "matmul", "exact_split_k", "astype", "save", "load"]

_FLOAT_OUT = (np.dtype(np.float32), np.dtype(np.float64))


def _format_of_array(x, what="x"):
    fmt = format_of(x.dtype)
    if fmt is None:
        raise TypeError(f"softfp8.dask: {what} must be a Dask array of a softfp8 format, "
                        f"got dtype {x.dtype}")
    return fmt


def _as_dask(x, what="x"):
    if not isinstance(x, da.Array):
        raise TypeError(f"softfp8.dask: {what} must be a dask.array.Array, got "
                        f"{type(x).__name__} (wrap it with dask.array.from_array)")
    return x


# --------------------------------------------------------------------------
# exact sums: per chunk an exact partial, one rounding at the end
# --------------------------------------------------------------------------

class _Tables:
    """Per format: every code's value as an integer number of units 2**-q (q such
    that every finite value is an integer number of units) and its class."""

    _cache = _LRU("dask tables")

    def __new__(cls, fmt):
        t = cls._cache.get(fmt.params)
        if t is None:
            t = super().__new__(cls)
            t._build(fmt)
            t = cls._cache.setdefault(fmt.params, t)
        return t

    def _build(self, fmt):
        codes = np.arange(1 << fmt.bits, dtype=np.int64).astype(fmt.storage)
        vals = bits.to_float(codes, fmt, np.float64, **bits.FIXED)[0]
        finite = np.isfinite(vals)
        mags = np.abs(vals[finite & (vals != 0)])
        # to_float is exact when every nonzero value is a normal binary64 number
        # (at most 16 significant bits); a factory format with a huge bias is not
        if mags.size and (mags.min() < 2.0 ** -1022 or mags.max() >= 2.0 ** 1023):
            raise ValueError(f"softfp8.dask: {fmt.name} has values outside the binary64 "
                             f"normal range; no exact Dask sum")
        ratios = [float(v).as_integer_ratio() if f else (0, 1) for v, f in zip(vals, finite)]
        # the unit 2**-q: the smallest power of two every finite value is a multiple of
        self.q = builtins.max(d.bit_length() - 1 for _, d in ratios)
        self.nan = np.isnan(vals)
        self.pinf = np.isposinf(vals)
        self.ninf = np.isneginf(vals)
        self.pzero = (vals == 0) & ~np.signbit(vals)
        self.nzero = (vals == 0) & np.signbit(vals)
        self.nonzero = finite & (vals != 0)
        units = [n << (self.q - d.bit_length() + 1) for n, d in ratios]
        self.span = builtins.max(abs(u) for u in units).bit_length()
        self.units64 = np.array(units, dtype=np.int64) if self.span <= 62 else None
        self.units_obj = np.array(units, dtype=object)
        # one code of each kind, for the specials and the sign of an exact zero
        self.one = int(bits.from_float(np.float64(1.0), fmt, **bits.FIXED)[0])
        self.neg_one = int(bits.from_float(np.float64(-1.0), fmt, **bits.FIXED)[0]) \
            if fmt.signed else None
        self.code_of = {k: (int(np.flatnonzero(getattr(self, k))[0])
                            if getattr(self, k).any() else None)
                        for k in ("pinf", "ninf", "pzero", "nzero")}


# An exact partial per output element, as one record: s = the exact sum in units
# 2**-q (int64 when provably exact for the whole reduction, else Python integers),
# nan = the first NaN code met in C order (-1: none), kinds = bit set of _KINDS met.
_KINDS = ("pinf", "ninf", "pzero", "nzero", "nonzero")


def _partial_dtype(exact_int64):
    return np.dtype([("s", np.int64 if exact_int64 else object), ("nan", np.int32),
                     ("kinds", np.int64)])


def _last(x, axis):
    """x with the reduced axes moved last and merged: shape (kept..., R)."""
    kept = [i for i in range(x.ndim) if i not in axis]
    y = np.transpose(x, kept + list(axis))
    return y.reshape(y.shape[:len(kept)] + (-1,))


def _keep(out, shape, axis):
    """Reshape a result over the kept axes back to keepdims form."""
    return out.reshape(tuple(1 if i in axis else n for i, n in enumerate(shape)))


def _first_nan(nan_codes, has):
    """Along the last axis: the first entry where has is set, -1 where none."""
    if has.shape[-1] == 0:
        return np.full(has.shape[:-1], -1, dtype=np.int32)
    first = np.take_along_axis(nan_codes, has.argmax(axis=-1)[..., None], axis=-1)[..., 0]
    return np.where(has.any(axis=-1), first, -1).astype(np.int32)


def _exact_chunk(x, axis, keepdims, tables, pdt):
    """The exact partials (keepdims form) of one block."""
    codes = np.ascontiguousarray(x).view(_storage_of(x))
    c = _last(codes, axis)
    out = np.empty(c.shape[:-1], dtype=pdt)
    if out.size == 1:
        out.reshape(-1)[0] = _exact_histogram(c.reshape(-1), tables)
        return _keep(out, x.shape, axis)
    c = c.astype(np.intp)
    n = c.shape[-1]
    if tables.units64 is not None and n < (1 << builtins.max(0, 62 - tables.span)):
        out["s"] = tables.units64[c].sum(axis=-1)            # int64, provably exact
    else:
        out["s"] = tables.units_obj[c].sum(axis=-1) if n else 0
    out["nan"] = _first_nan(c, tables.nan[c])
    kinds = np.zeros(c.shape[:-1], dtype=np.int64)
    for bit, name in enumerate(_KINDS):
        kinds |= getattr(tables, name)[c].any(axis=-1).astype(np.int64) << bit
    out["kinds"] = kinds
    return _keep(out, x.shape, axis)


def _exact_histogram(c, tables):
    """(s, nan, kinds) of a 1-D run of codes from its histogram: the counts times
    each code's units, in Python integers (one pass over the data)."""
    counts = np.bincount(c, minlength=tables.nan.size)
    present = np.flatnonzero(counts)
    s = builtins.sum(int(counts[k]) * int(tables.units_obj[k]) for k in present)
    first = -1
    if tables.nan[present].any():
        first = int(c[np.argmax(tables.nan[c])])
    kinds = 0
    for bit, name in enumerate(_KINDS):
        if getattr(tables, name)[present].any():
            kinds |= 1 << bit
    return (s, first, kinds)


def _storage_of(x):
    return format_of(x.dtype).storage


def _combine(p, axis, keepdims):
    """Partials concatenated along the reduced axes, added in C order."""
    c = _last(p, axis)
    out = np.empty(c.shape[:-1], dtype=p.dtype)
    out["s"] = c["s"].sum(axis=-1) if c.shape[-1] else 0
    out["nan"] = _first_nan(c["nan"], c["nan"] >= 0)
    out["kinds"] = np.bitwise_or.reduce(c["kinds"], axis=-1) if c.shape[-1] else 0
    return _keep(out, p.shape, axis)


def _round_odd(num, den):
    """num/den (integers, den > 0) rounded to binary64 with round-to-odd: a
    nonzero value whose low bits were dropped gets its last bit set, so a second
    rounding to at most 51 bits (softfp8's formats, float32) is a correct one."""
    neg = num < 0
    num = -num if neg else num
    if num == 0:
        return 0.0
    k = num.bit_length() - den.bit_length() - 60
    qt, r = divmod(num, den << k) if k >= 0 else divmod(num << -k, den)
    extra = qt.bit_length() - 53
    m = qt >> extra
    if r or qt & ((1 << extra) - 1):
        m |= 1
    f = math.ldexp(m, k + extra)
    return -f if neg else f


def _round_f64(num, den, mode):
    """num/den correctly rounded to binary64 in a deterministic rounding mode."""
    exact = Fraction(num, den)
    f = float(exact)  # nearest-even
    if mode == "nearest_even" or Fraction(f) == exact or math.isinf(f):
        return f
    lo, hi = (f, math.nextafter(f, math.inf)) if Fraction(f) < exact else \
        (math.nextafter(f, -math.inf), f)
    if mode == "nearest_away":
        mid = (Fraction(lo) + Fraction(hi)) / 2
        if exact != mid:
            return f
        return hi if exact > 0 else lo
    if mode == "toward_zero":
        return lo if exact > 0 else hi
    if mode == "upward":
        return hi
    if mode == "downward":
        return lo
    if mode == "to_odd":
        return lo if int(np.float64(lo).view(np.uint64)) & 1 else hi
    raise ValueError(f"softfp8.dask: float64 output does not support rounding {mode!r}")


def _special_codes(tables, nan, kinds, s):
    """The codes whose softfp8 sum gives the result of a partial with a NaN, an
    infinity or an exact zero sum (None for an ordinary nonzero finite sum)."""
    if nan >= 0:
        return [nan]
    if kinds & 3:
        return [tables.code_of[k] for b, k in enumerate(("pinf", "ninf")) if kinds >> b & 1]
    if s != 0:
        return None
    rep = [tables.code_of[k] for b, k in ((2, "pzero"), (3, "nzero")) if kinds >> b & 1]
    if kinds >> 4 & 1:       # cancelling nonzero values: x + (-x)
        rep += [tables.one, tables.neg_one]
    return rep or [tables.code_of["pzero"]]


def _finish(parts, fmt, tables, den, dtype, opts):
    """Round each exact partial (divided by den) once into dtype (fmt or float)."""
    flat = parts.reshape(-1)
    s, nan, kinds = flat["s"], flat["nan"], flat["kinds"]
    scale = den << tables.q
    ordinary = (nan < 0) & ((kinds & 3) == 0) & (s != 0)
    # exact in binary64 (a sum below 2**53 units): no rounding before the final one
    direct = np.zeros_like(ordinary)
    if den == 1 and s.dtype != object:
        direct = ordinary & (np.abs(s) < 2 ** 53)
    odd = np.zeros(flat.size, dtype=np.float64)
    odd[direct] = np.ldexp(s[direct].astype(np.float64), -tables.q)
    for i in np.flatnonzero(ordinary & ~direct):
        odd[i] = _round_odd(int(s[i]), scale)
    special = {int(i): np.array(_special_codes(tables, int(nan[i]), int(kinds[i]), int(s[i])),
                                dtype=fmt.storage)
               for i in np.flatnonzero(~ordinary)}
    mode = opts["rounding"]
    sopts = {k: v for k, v in opts.items() if k != "random_bits"}
    if dtype == np.dtype(np.float64):
        out = odd.copy()
        for i in np.flatnonzero(ordinary & ~direct):
            out[i] = _round_f64(int(s[i]), scale, mode)
        for i, rep in special.items():
            out[i] = bits.to_float(bits.sum(fmt, rep, **sopts)[0], fmt, np.float64)[0]
        return out.reshape(parts.shape)
    if dtype == np.dtype(np.float32):
        out = bits.convert(odd, np.float64, np.float32, **opts)[0]
        for i, rep in special.items():
            out[i] = bits.to_float(bits.sum(fmt, rep, **sopts)[0], fmt, np.float32)[0]
        return out.reshape(parts.shape)
    codes = bits.from_float(odd, fmt, **opts)[0]
    for i, rep in special.items():
        codes[i] = bits.sum(fmt, rep, **sopts)[0]
    return codes.view(dtype).reshape(parts.shape)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    try:
        ax = (axis,) if isinstance(axis, Integral) else tuple(axis)
    except TypeError:
        raise TypeError(f"softfp8.dask: axis must be None, an int or a tuple of ints, "
                        f"got {axis!r}") from None
    out = []
    for a in ax:
        if not isinstance(a, Integral) or not -ndim <= a < ndim:
            raise ValueError(f"softfp8.dask: axis {a!r} is out of bounds for an array of "
                             f"{ndim} dimensions")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"softfp8.dask: repeated axis in {axis!r}")
    return tuple(sorted(out))


def _out_dtype(dtype, fmt):
    if dtype is None:
        return dtype_of(fmt)
    fo = format_or_none(dtype)
    if fo is not None:
        if fo != fmt:
            raise TypeError(f"softfp8.dask: dtype {dtype!r} must be the array's own format "
                            f"{fmt.name}, float32 or float64")
        return dtype_of(fmt)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt not in _FLOAT_OUT:   # (np.dtype(None) is float64: `None in` is True)
        raise TypeError(f"softfp8.dask: dtype must be None, the array's format, float32 or "
                        f"float64; got {dtype!r}")
    return dt


def _exact_reduce(x, axis, keepdims, dtype, split_every, count, options, what):
    x = _as_dask(x)
    fmt = _format_of_array(x)
    ax = _axes(axis, x.ndim)
    out_dt = _out_dtype(dtype, fmt)
    env, opts, seed, stream = _capture(fmt, *options, what)
    stochastic = env[0] == bits._STOCHASTIC
    if stochastic and out_dt == np.dtype(np.float64):
        raise ValueError(f"softfp8.dask.{what}: float64 output does not support stochastic "
                         f"rounding")
    tables = _Tables(fmt)
    den = 1
    if count:
        den = int(np.prod([x.shape[a] for a in ax], dtype=object)) if ax else 1
        if den == 0:
            raise ValueError("softfp8.dask.mean of an empty selection (no elements)")

    total = int(np.prod([x.shape[a] for a in ax], dtype=object)) if ax else 1
    # int64 partials when no sum of the whole reduction can leave int64
    pdt = _partial_dtype(tables.units64 is not None
                         and tables.span + total.bit_length() <= 62)

    def chunk(b, axis, keepdims):
        return _exact_chunk(b, axis, keepdims, tables, pdt)

    def aggregate(p, axis, keepdims):
        r = _combine(p, axis, keepdims)
        return r if keepdims else r.reshape([n for i, n in enumerate(r.shape) if i not in axis])

    def finish(parts, block_info=None):
        o = dict(opts)
        if stochastic:
            # the random word of result i (global C-order index), as bits.sum draws it
            info = block_info[0]
            starts, run = _runs(info["array-location"], info["shape"])
            idx = (starts[:, None] + np.arange(run, dtype=np.int64)[None, :]).reshape(-1)
            o["random_bits"] = np.array([_ext.random_u32(seed, stream, int(i)) for i in idx],
                                        dtype=np.uint32)
        return _finish(parts, fmt, tables, den, out_dt, o)

    nd = x.ndim if keepdims else x.ndim - len(ax)
    parts = da.reduction(x, chunk, aggregate, axis=ax, keepdims=keepdims, dtype=pdt,
                         split_every=split_every, combine=_combine, concatenate=True,
                         meta=np.empty((0,) * nd, dtype=pdt))
    return parts.map_blocks(finish, dtype=out_dt, meta=np.empty((0,) * nd, dtype=out_dt))


def _capture(fmt, rounding, saturate, tininess, seed, sr_bits, what):
    """The options of a Dask graph, fixed when the graph is built (worker threads
    do not see the caller's softfp8 context): (env, options for softfp8.bits
    calls, seed, stream).  Stochastic rounding takes seed= or, as softfp8.bits
    does, the seed of an enclosing rounding("stochastic", seed=...) block and the
    next operation's stream; without either it is refused (not reproducible)."""
    env = bits._env(fmt, rounding, saturate, tininess, sr_bits)
    if saturate is None:
        saturate = _context.get_saturation()
    opts = {"rounding": bits.ROUNDING_MODES[env[0]], "saturate": saturate,
            "tininess": "before" if env[2] else "after", "sr_bits": env[3]}
    stream = 0
    if seed is not None:
        seed = bits._check_seed(seed)
    elif env[0] == bits._STOCHASTIC:
        st = _context._current()
        if not (st.seeded and st.rounding == bits._STOCHASTIC):
            raise ValueError(f"softfp8.dask.{what}: stochastic rounding needs seed= (an "
                             f"integer in 0..2**64-1) or an enclosing "
                             f"softfp8.rounding('stochastic', seed=...) to be reproducible")
        seed, stream = st.seed, st.counter
        st.counter += 1
    return env, opts, seed, stream


def sum(x, axis=None, dtype=None, keepdims=False, split_every=None, rounding=None,
        saturate=None, tininess=None, seed=None, sr_bits=None):
    """Exact sum of a softfp8 Dask array, rounded once.

    Each chunk yields an exact partial sum (an integer number of units 2**-q, the
    largest power of two dividing every finite value of the format, plus which
    NaN / infinities / zeros it met);
    partials add exactly, and only the final result is rounded: into the
    array's format (default, equal to softfp8's one-call ``np.sum`` /
    ``softfp8.bits.sum`` for any chunking), or into float32 / float64 with
    ``dtype=`` (the exact sum correctly rounded once).  Options as softfp8.bits;
    left at None they come from the softfp8 context when the graph is built.
    Stochastic rounding keys result i on (seed, stream, index i), as bits.sum
    does (seed= or the enclosing seeded context, as for :func:`astype`).
    Flags are not collected.
    """
    return _exact_reduce(x, axis, keepdims, dtype, split_every, False,
                         (rounding, saturate, tininess, seed, sr_bits), "sum")


def mean(x, axis=None, dtype=None, keepdims=False, split_every=None, rounding=None,
         saturate=None, tininess=None, seed=None, sr_bits=None):
    """Exact mean (exact sum / count) rounded ONCE; NumPy's ``np.mean`` of a
    softfp8 array rounds twice (the sum, then the quotient), so the two can differ
    by one unit in the last place (docs/dask.md)."""
    return _exact_reduce(x, axis, keepdims, dtype, split_every, True,
                         (rounding, saturate, tininess, seed, sr_bits), "mean")


def max(x, axis=None, keepdims=False, split_every=None):
    """Maximum (NaN-propagating): exact per chunk, so Dask's own reduction is
    already softfp8's result; provided for symmetry with :func:`sum`."""
    _format_of_array(_as_dask(x))
    _axes(axis, x.ndim)   # the message of sum's
    return da.max(x, axis=axis, keepdims=keepdims, split_every=split_every)


def min(x, axis=None, keepdims=False, split_every=None):
    """Minimum (NaN-propagating); see :func:`max`."""
    _format_of_array(_as_dask(x))
    _axes(axis, x.ndim)   # the message of sum's
    return da.min(x, axis=axis, keepdims=keepdims, split_every=split_every)


# --------------------------------------------------------------------------
# casts keyed on the global element index
# --------------------------------------------------------------------------

def _runs(loc, shape):
    """(block start offsets, run length) of the C-contiguous runs of a block
    located at loc = [(start, stop), ...] in an array of the given global shape:
    the trailing axes the block spans fully merge into one run."""
    nd = len(shape)
    k = nd  # axes k.. are spanned fully
    while k > 0 and loc[k - 1] == (0, shape[k - 1]):
        k -= 1
    j = builtins.max(k - 1, 0)  # the run covers part of axis j and all of j+1..
    run = int(np.prod([b - a for a, b in loc[j:]], dtype=np.int64)) if nd else 1
    strides = np.ones(nd, dtype=np.int64)
    for i in range(nd - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    outer = [np.arange(a, b, dtype=np.int64) * strides[i] for i, (a, b) in enumerate(loc[:j])]
    starts = np.zeros(1, dtype=np.int64)
    for o in outer:
        starts = (starts[:, None] + o[None, :]).reshape(-1)
    base = int(loc[j][0] * strides[j]) if nd else 0
    return starts + base, run


def _cast_block(block, block_info, src, dst, env, seed, stream):
    sp, sst, sfdt, sfmt = src
    dp, dstor, dfdt, dfmt = dst
    info = block_info[0]
    a = np.ascontiguousarray(block)
    codes = a.view(sst).reshape(-1)
    out = np.empty(codes.size, dtype=dstor)
    flags = np.zeros(codes.size, dtype=np.uint8)
    if env[0] != bits._STOCHASTIC:  # no random words: the whole block in one call
        starts, run = np.zeros(1, dtype=np.int64), codes.size
    else:
        starts, run = _runs(info["array-location"], info["shape"])
    for r, g in enumerate(starts):
        sl = slice(r * run, (r + 1) * run)
        _ext.convert(sp, dp, env, (1, seed, stream, int(g)), None, codes[sl], out[sl], flags[sl])
    out = out.reshape(a.shape)
    return out.view(dfdt if dfdt is not None else dtype_of(dfmt))


def astype(x, dtype, rounding=None, saturate=None, tininess=None, seed=None, sr_bits=None):
    """Cast a Dask array (float32, float64 or a softfp8 format) to a softfp8
    format or float32/float64, rounding once per element.

    Under stochastic rounding the random word of the element at global C-order
    flat index i is ``random_u32(seed, 0, i)``, the word the one-call
    ``softfp8.bits.convert(..., seed=seed)`` of the whole array draws for it; so
    the result does not depend on the chunking or on the scheduler.  Stochastic
    rounding needs seed= or an enclosing ``softfp8.rounding("stochastic",
    seed=...)`` (whose seed and next operation stream it takes, as a NumPy cast
    there would); an unseeded graph is refused.  Options left at None come from
    the softfp8 context when the graph is built.  Flags are not collected.
    """
    x = _as_dask(x)
    src = bits._endpoint(x.dtype if format_of(x.dtype) is not None else x.dtype.type, "x")
    dst = bits._endpoint(dtype, "dtype")
    env, _, seed, stream = _capture(dst[3], rounding, saturate, tininess, seed, sr_bits,
                                    "astype")
    out_dt = dst[2] if dst[2] is not None else dtype_of(dst[3])
    return da.map_blocks(_cast_block, x, dtype=out_dt, src=src, dst=dst, env=env,
                         seed=seed or 0, stream=stream,
                         meta=np.empty((0,) * x.ndim, dtype=out_dt))


# --------------------------------------------------------------------------
# matmul: exact dot products, one rounding
# --------------------------------------------------------------------------

def _mm_block(a, b, out_dtype, mode):
    rounding, saturate, tininess = mode
    with _context.rounding(rounding), _context.saturation(saturate), \
            _context.tininess(tininess):
        return _matmul(a, b, out_dtype=out_dtype)


def _mm_partial(a, b):
    return _matmul(a, b, out_dtype=np.float64)[:, None, :]


def _mm_round(s, fmt, out_dt, mode):
    opts = dict(zip(("rounding", "saturate", "tininess"), mode))
    if out_dt == np.dtype(np.float64):
        return s
    if out_dt == np.dtype(np.float32):
        return bits.convert(s, np.float64, np.float32, **opts)[0]
    return bits.from_float(s, fmt, **opts)[0].view(out_dt)


def exact_split_k(fmt, k):
    """True when block partial products in float64 (each the exact block dot
    product) and their float64 sum are provably exact for inner dimension k:
    every product is an integer number of units 2**-2q below 2**(2*span), so a
    sum of k of them needs at most 2*span + ceil(log2(k)) <= 53 bits."""
    k = _as_int(k, "softfp8.dask.exact_split_k: k")
    if k < 1:
        raise ValueError(f"softfp8.dask.exact_split_k: k must be >= 1, got {k!r}")
    t = _Tables(as_format(fmt))
    return 2 * t.span + builtins.max(int(k) - 1, 0).bit_length() <= 53


def matmul(a, b, out_dtype=None):
    """Matrix product of two 2-D softfp8 Dask arrays of one format, equal to the
    one-call ``softfp8.matmul(a, b, out_dtype)``: every element is the exact dot
    product rounded once (context rounding when the graph is built; not
    stochastic) into the format (default), float32 or float64.

    When the inner dimension has several chunks and :func:`exact_split_k` holds
    (finite E4M3 with k < 2**17, for example) the partial block products are
    exact float64 values summed exactly and rounded once; otherwise the inner
    blocks are concatenated so each output block is one softfp8.matmul call
    (exact for every format, more memory per task).
    """
    a, b = _as_dask(a, "a"), _as_dask(b, "b")
    fa = _format_of_array(a, "a")
    _format_of_array(b, "b")
    if a.dtype != b.dtype:
        raise TypeError(f"softfp8.dask.matmul needs operands of one format, got {a.dtype} "
                        f"and {b.dtype}")
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"softfp8.dask.matmul needs 2-D operands, got shapes {a.shape} "
                         f"and {b.shape}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"softfp8.dask.matmul: shapes {a.shape} and {b.shape} do not fit "
                         f"(inner dimensions {a.shape[1]} and {b.shape[0]} differ)")
    out_dt = _out_dtype(out_dtype, fa)
    mode = (_context.get_rounding(), _context.get_saturation(), _context.get_tininess())
    if mode[0] == "stochastic":
        raise ValueError("softfp8.dask.matmul does not support stochastic rounding")
    b = b.rechunk({0: a.chunks[1]})
    k = a.shape[1]
    if len(a.chunks[1]) > 1 and exact_split_k(fa, k):
        part = da.blockwise(_mm_partial, "ikj", a, "ik", b, "kj", dtype=np.float64,
                            adjust_chunks={"k": 1}, concatenate=False,
                            meta=np.empty((0, 0, 0), dtype=np.float64))
        s = part.sum(axis=1)
        return s.map_blocks(_mm_round, fa, out_dt, mode, dtype=out_dt,
                            meta=np.empty((0, 0), dtype=out_dt))
    od = None if out_dtype is None else out_dt
    return da.blockwise(_mm_block, "ij", a, "ik", b, "kj", dtype=out_dt, concatenate=True,
                        out_dtype=od, mode=mode, meta=np.empty((0, 0), dtype=out_dt))


# --------------------------------------------------------------------------
# storage: codes plus the format's description
# --------------------------------------------------------------------------

def _codes_view(b):
    return np.ascontiguousarray(b).view(format_of(b.dtype).storage)


def save(path, x):
    """Store a softfp8 Dask array as codes plus the format's description.

    A path ending in ``.zarr`` writes a Zarr array (needs ``zarr``) whose
    attribute ``softfp8`` holds the description; any other path is a folder
    holding ``codes.npy`` (the uint8/uint16 codes, written chunk by chunk through
    a memory map) and ``format.json``.  :func:`load` reads both back.
    """
    x = _as_dask(x)
    fmt = _format_of_array(x)
    codes = x.map_blocks(_codes_view, dtype=fmt.storage,
                         meta=np.empty((0,) * x.ndim, dtype=fmt.storage))
    desc = _describe(fmt)
    path = os.fspath(path)
    if path.endswith(".zarr"):
        import zarr
        z = zarr.open_array(path, mode="w", shape=x.shape, dtype=fmt.storage,
                            chunks=tuple(c[0] if c else 1 for c in x.chunks))
        z.attrs["softfp8"] = desc
        da.store(codes, z, lock=False)
        return
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "format.json"), "w") as fh:
        json.dump(desc, fh)
    mm = np.lib.format.open_memmap(os.path.join(path, "codes.npy"), mode="w+",
                                   dtype=fmt.storage, shape=x.shape)
    da.store(codes, mm, lock=False)
    mm.flush()
    del mm


def load(path, chunks="auto"):
    """A Dask array of the softfp8 format written by :func:`save`."""
    path = os.fspath(path)
    if path.endswith(".zarr"):
        import zarr
        z = zarr.open_array(path, mode="r")
        desc = z.attrs.get("softfp8")
        if desc is None:
            raise ValueError(f"{path!r} is not a softfp8 Zarr array (no 'softfp8' attribute)")
        fmt = _rebuild(dict(desc), path)
        src = z
        if chunks == "auto":
            chunks = z.chunks
    else:
        try:
            with open(os.path.join(path, "format.json")) as fh:
                desc = json.load(fh)
        except FileNotFoundError:
            raise ValueError(f"{path!r} is not a softfp8 Dask store (no format.json)") from None
        except ValueError as exc:
            raise ValueError(f"{path!r}: corrupted format.json ({exc})") from None
        fmt = _rebuild(desc, path)
        src = np.load(os.path.join(path, "codes.npy"), mmap_mode="r", allow_pickle=False)
    if np.dtype(src.dtype) != fmt.storage:
        raise ValueError(f"{path!r}: codes stored as {src.dtype}, expected {fmt.storage}")
    codes = da.from_array(src, chunks=chunks)
    dt = dtype_of(fmt)
    return codes.map_blocks(lambda c: np.ascontiguousarray(c).view(dt), dtype=dt,
                            meta=np.empty((0,) * codes.ndim, dtype=dt))
