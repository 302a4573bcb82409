"""softfp8 audit: how far another implementation's results are from correct rounding.

Given another implementation's results for an operation of a format -- a vector file
in ``softfp8 ver``'s line format, or a Python callable run on the format's codes
(``numpy.exp`` on ml_dtypes' bfloat16 arrays, a PyTorch float8 cast, ...) -- report
per operation and rounding mode:

* correct: results equal to softfp8's correctly rounded result (NaNs by class);
* faithful: results equal to one of the two format values bracketing the exact
  result (softfp8's results rounded downward and upward);
* max_ulp: the largest |result - exact| in units in the last place of the exact
  result (the exact value taken in binary64, far below the formats' ulps: a
  measurement, not a proof);
* kappa: the IEEE P3109 figure (Interim Report v4.0, 4.4): NaN if the results do
  not match on NaNs, infinity if they do not match on infinities, else the largest
  number of the format's finite values between a result and the correct one
  (inclusive of the former, exclusive of the latter): 0 when every result is
  correctly rounded.

``audit_results`` compares results you have; ``audit_callable`` runs a callable;
``audit_vectors`` reads a vector file.  The CLI: ``softfp8 audit``.
"""
from __future__ import annotations

import dataclasses
import importlib
import io
import math

import numpy as np

from . import bits, vectors
from ._validation import as_format

__all__ = ["AuditRow", "audit_results", "audit_callable", "audit_vectors", "operands_for", "format_row"]

_NUMPY64 = {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
            "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "cbrt": np.cbrt, "sin": np.sin,
            "cos": np.cos, "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
            "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "arcsinh": np.arcsinh, "arccosh": np.arccosh,
            "arctanh": np.arctanh, "reciprocal": lambda x: 1 / x, "square": np.square,
            "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "power": np.power,
            "hypot": np.hypot, "arctan2": np.arctan2, "logaddexp": np.logaddexp,
            "logaddexp2": np.logaddexp2, "convert": lambda x: x}


@dataclasses.dataclass
class AuditRow:
    """The audit of one operation of one format in one rounding mode."""
    fmt: str
    op: str
    rounding: str
    total: int
    correct: int
    faithful: int
    max_ulp: float
    kappa: float            # NaN, inf, or an int
    nan_mismatches: int
    inf_mismatches: int


def _index(fmt):
    """Position of every finite code of fmt in the value order (zeros share one)."""
    codes = np.arange(1 << fmt.bits, dtype=np.int64)
    v, _ = bits.to_float(codes.astype(fmt.storage), fmt)
    v = np.asarray(v, np.float64)
    fin = np.isfinite(v)
    uniq = np.unique(v[fin])
    idx = np.full(codes.size, -1, np.int64)
    idx[fin] = np.searchsorted(uniq, v[fin])
    return idx, v


def _ulp(fmt, x):
    """The ulp of fmt at the magnitudes x (binary64)."""
    emin = 1 - fmt.bias
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.abs(x)))
    e = np.where(np.isfinite(e), np.maximum(e, emin), emin)
    return np.ldexp(1.0, (e - fmt.man_bits).astype(np.int64))


def audit_results(fmt, op, operands, results, rounding="nearest_even", saturate=None, exact64=None):
    """Audit ``results`` (codes of fmt, or floats of the source for op "convert")
    of ``op`` on ``operands`` (code arrays of fmt; op "convert": one float32 or
    float64 array) against softfp8's correctly rounded results in ``rounding``.
    ``exact64``: the exact results in binary64 for max_ulp (default: NumPy's binary64
    function of the operands where softfp8 knows it, else max_ulp is NaN)."""
    fmt = as_format(fmt, "fmt")
    results = np.asarray(results).reshape(-1).astype(np.int64)
    if op == "convert":
        src = np.asarray(operands[0])
        want, _ = bits.convert(src, src.dtype.type, fmt, rounding=rounding, saturate=saturate)
        lo, _ = bits.convert(src, src.dtype.type, fmt, rounding="downward", saturate=saturate)
        hi, _ = bits.convert(src, src.dtype.type, fmt, rounding="upward", saturate=saturate)
        vals = [src.astype(np.float64)]
    else:
        row = bits.OPERATIONS[op]
        fn = getattr(bits, op)
        kw = dict(saturate=saturate)
        want = fn(fmt, *operands, rounding=rounding, **kw)[0]
        lo = fn(fmt, *operands, rounding="downward", **kw)[0]
        hi = fn(fmt, *operands, rounding="upward", **kw)[0]
        vals = [np.asarray(bits.to_float(o, fmt)[0], np.float64) for o in operands]
        del row
    want, lo, hi = (np.asarray(a).reshape(-1).astype(np.int64) for a in (want, lo, hi))
    if results.size != want.size:
        raise ValueError(f"{results.size} results for {want.size} operands")
    idx, value = _index(fmt)
    m = (1 << fmt.bits) - 1
    r, w, lo, hi = results & m, want & m, lo & m, hi & m
    rn, wn = np.isnan(value[r]), np.isnan(value[w])
    ri, wi = np.isinf(value[r]), np.isinf(value[w])
    correct = (r == w) | (rn & wn)
    faithful = correct | (r == lo) | (r == hi)
    nan_mis = int((rn != wn).sum())
    both_fin = ~rn & ~wn & ~ri & ~wi
    inf_mis = int((~rn & ~wn & ((ri != wi) | (ri & wi & (np.signbit(value[r]) != np.signbit(value[w]))))).sum())
    if nan_mis:
        kappa = math.nan
    elif inf_mis:
        kappa = math.inf
    else:
        d = np.abs(idx[r] - idx[w])[both_fin]
        kappa = float(d.max()) if d.size else 0.0
    if exact64 is None and op in _NUMPY64:
        with np.errstate(all="ignore"):
            exact64 = _NUMPY64[op](*vals)
    if exact64 is not None:
        ex = np.asarray(exact64, np.float64).reshape(-1)
        ok = np.isfinite(ex) & both_fin
        with np.errstate(all="ignore"):
            err = np.abs(value[r][ok] - ex[ok]) / _ulp(fmt, ex[ok])
        max_ulp = float(err.max()) if err.size else 0.0
    else:
        max_ulp = math.nan
    return AuditRow(fmt.name, op, rounding, int(r.size), int(correct.sum()), int(faithful.sum()), max_ulp, kappa,
                    nan_mis, inf_mis)


def operands_for(fmt, op, pairs=200_000, seed=0, src=np.float32):
    """The operands an audit runs: every code (unary), every pair (8-bit binary) or
    ``pairs`` random pairs; for "convert", float values of ``src``: every value of
    fmt, the midpoints of neighbours and their src neighbours, and random values
    in fmt's range."""
    fmt = as_format(fmt, "fmt")
    n = 1 << fmt.bits
    codes = np.arange(n, dtype=np.int64)
    if op == "convert":
        v, _ = bits.to_float(codes.astype(fmt.storage), fmt)
        v = np.unique(np.asarray(v, np.float64)[np.isfinite(v)])
        mid = (v[:-1] + v[1:]) / 2
        s = np.asarray(mid, src)
        pts = np.concatenate([v, mid, np.nextafter(s, np.inf).astype(np.float64),
                              np.nextafter(s, -np.inf).astype(np.float64)])
        rng = np.random.default_rng(seed)
        top = min(np.abs(v).max() * 1.2, float(np.finfo(src).max))
        pts = np.concatenate([pts, rng.uniform(-top, top, 100_000)])
        return (pts.astype(src),)
    arity = bits.OPERATIONS[op].arity
    if arity == 1:
        return (codes.astype(fmt.storage),)
    if n ** arity <= 1 << 16:
        g = np.meshgrid(*[codes] * arity, indexing="ij")
        return tuple(x.reshape(-1).astype(fmt.storage) for x in g)
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(0, n, pairs).astype(fmt.storage) for _ in range(arity))


def _load(spec):
    """module:attribute (dotted attributes allowed) -> the object."""
    mod, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"expected module:attribute, got {spec!r}")
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def audit_callable(fn, fmt, op, dtype, rounding="nearest_even", operands=None, src=np.float32, **kw):
    """Run ``fn`` -- the other implementation of ``op`` -- on operands of fmt viewed
    as ``dtype`` (its array type with fmt's bit layout: ml_dtypes.bfloat16, ...;
    op "convert": fn receives src floats and returns dtype values) and audit its
    results.  ``fn`` and ``dtype`` may be "module:attribute" strings."""
    fmt = as_format(fmt, "fmt")
    fn = _load(fn) if isinstance(fn, str) else fn
    dtype = np.dtype(_load(dtype) if isinstance(dtype, str) else dtype)
    if dtype.itemsize != np.dtype(fmt.storage).itemsize:
        raise ValueError(f"dtype {dtype} has {dtype.itemsize} bytes per element; {fmt.name} has "
                         f"{np.dtype(fmt.storage).itemsize}")
    ops = operands if operands is not None else operands_for(fmt, op, src=src)
    with np.errstate(all="ignore"):
        if op == "convert":
            res = fn(ops[0])
        else:
            res = fn(*(np.ascontiguousarray(o).view(dtype) for o in ops))
    res = np.ascontiguousarray(np.asarray(res, dtype=dtype)).view(fmt.storage)
    return audit_results(fmt, op, ops, res, rounding=rounding, **kw)


def audit_vectors(stream, fmt, op, rounding="nearest_even", saturate=None):
    """Audit a vector file in ``softfp8 ver``'s line format (operands, result,
    flags; flags are not audited)."""
    fmt = as_format(fmt, "fmt")
    widths = vectors.columns(fmt, op, rounding)
    if isinstance(stream, (str, bytes)):
        stream = io.BytesIO(stream.encode() if isinstance(stream, str) else stream)
    lines = [ln.split() for ln in stream.read().decode().splitlines() if ln.strip()]
    if not lines:
        raise ValueError("no vector lines")
    arity = bits.OPERATIONS[op].arity
    for i, ln in enumerate(lines):
        if len(ln) != len(widths):
            raise ValueError(f"line {i + 1}: {len(ln)} columns, expected {len(widths)}")
    cols = np.array([[int(t, 16) for t in ln] for ln in lines], np.int64)
    ops = tuple(cols[:, k].astype(fmt.storage) for k in range(arity))
    return audit_results(fmt, op, ops, cols[:, -2], rounding=rounding, saturate=saturate)


def format_row(row: AuditRow) -> str:
    """One line of the audit table."""
    k = "NaN" if math.isnan(row.kappa) else ("inf" if math.isinf(row.kappa) else "%d" % row.kappa)
    u = "-" if math.isnan(row.max_ulp) else "%.4g" % row.max_ulp
    return ("%-16s %-10s %-13s %9d %9d (%6.2f%%) %9d (%6.2f%%) max_ulp %-7s kappa %s" % (
        row.fmt, row.op, row.rounding, row.total, row.correct, 100.0 * row.correct / max(row.total, 1),
        row.faithful, 100.0 * row.faithful / max(row.total, 1), u, k))


def cli(args, fmt, out=print) -> int:
    """``softfp8 audit FORMAT OP [FILE] [--callable M:F --dtype M:T] [--from float32|float64]
    [--rounding MODE]``: audit a vector file (FILE, or stdin) or a callable."""
    if args.callable:
        if not args.dtype:
            raise ValueError("--callable needs --dtype module:attribute (the other library's array type)")
        src = {"float32": np.float32, "float64": np.float64}[args.src]
        row = audit_callable(args.callable, fmt, args.op, args.dtype, rounding=args.rounding, src=src)
    else:
        if args.input in (None, "-"):
            import sys
            data = sys.stdin.buffer.read()
        else:
            with open(args.input, "rb") as fh:
                data = fh.read()
        row = audit_vectors(data, fmt, args.op, rounding=args.rounding)
    out("format           op         rounding          results   correct              faithful")
    out(format_row(row))
    return 0
