"""softfp8.testing: assertions for tests of code that uses softfp8.

* ``assert_flags(expected, exact=True)`` / ``assert_no_flags(ignore=())``: context
  managers checking the sticky flags raised inside their block;
* ``assert_codes_equal(actual, expected, nan="class")``: bit-for-bit comparison of
  softfp8 arrays (or code arrays with ``fmt=``) with a numpy.testing-style report.

The pytest fixture ``softfp8_isolated`` lives in ``softfp8.pytest_plugin``.
"""
from __future__ import annotations

import contextlib
import warnings as _w

import numpy as np

from . import _context, bits
from ._formats import lookup
from ._validation import _as_bool, as_format, format_or_none

__all__ = ["assert_flags", "assert_no_flags", "assert_codes_equal"]

_ALL = int(sum(_context.Flags))
_MAX_SHOWN = 10


# --------------------------------------------------------------------------
# flags
# --------------------------------------------------------------------------

def _to_flags(spec, what):
    """softfp8.Flags of a Flags value, an int, a flag name or an iterable of them."""
    if isinstance(spec, _context.Flags):
        return spec
    if isinstance(spec, (bool, np.bool_)):
        raise TypeError(f"{what} must be softfp8.Flags, an int, a flag name or an iterable of "
                        f"them, got {spec!r}")
    if isinstance(spec, (int, np.integer)):
        v = int(spec)
        if not 0 <= v <= _ALL:
            raise ValueError(f"{what}: {spec!r} is not a combination of softfp8 flags "
                             f"(0..{_ALL:#04x})")
        return _context.Flags(v)
    if isinstance(spec, str):
        name = spec.strip().upper()
        if name not in _context.Flags.__members__:
            names = ", ".join(f.name.lower() for f in _context.Flags)
            raise ValueError(f"{what}: unknown flag name {spec!r} (expected one of {names})")
        return _context.Flags[name]
    try:
        items = list(spec)
    except TypeError:
        raise TypeError(f"{what} must be softfp8.Flags, an int, a flag name or an iterable of "
                        f"them, got {spec!r}") from None
    out = _context.Flags(0)
    for item in items:
        if not isinstance(item, (str, int, np.integer)) or isinstance(item, (bool, np.bool_)):
            raise TypeError(f"{what}: {item!r} is not a flag (softfp8.Flags, an int or a name)")
        out |= _to_flags(item, what)
    return out


def _names(flags):
    """'overflow, inexact' (in bit order), or 'none'."""
    names = [f.name.lower() for f in _context.Flags if flags & f]
    return ", ".join(names) if names else "none"


_WARNINGS = ("check", "swallow", "pass")


@contextlib.contextmanager
def assert_flags(expected, exact=True, warnings="pass"):
    """Assert the sticky flags the block raises.

    ``exact=True``: the raised flags equal ``expected``; ``exact=False``: they include
    it.  ``expected`` is a softfp8.Flags, an int, a flag name ("overflow") or an
    iterable of them.  The block runs as under ``softfp8.collect_flags()`` (yielded:
    ``fl.flags``), so flags raised before it do not count and the ones it raises stay
    raised outside.  An exception from the block propagates unchanged.

    NumPy's RuntimeWarnings of the block (``invalid value encountered``, ``overflow``,
    ``divide by zero``, ``underflow`` under np.errstate): ``warnings="pass"`` (default)
    lets them through; ``"swallow"`` hides them; ``"check"`` hides them and asserts that
    NumPy warned for each of invalid, divide-by-zero and overflow that ``expected``
    holds (and, with ``exact=True``, for no other of them).
    """
    want = _to_flags(expected, "expected")
    _as_bool(exact, "exact")
    if warnings not in _WARNINGS:
        raise ValueError(f"warnings must be one of {', '.join(map(repr, _WARNINGS))}, "
                         f"got {warnings!r}")

    with _context.collect_flags() as col:
        if warnings == "pass":
            yield col
        else:
            with _w.catch_warnings(record=True) as caught:
                _w.simplefilter("always", RuntimeWarning)
                yield col
            seen = {w for w in ("invalid", "divide", "overflow")
                    for m in caught if issubclass(m.category, RuntimeWarning) and w in str(m.message)}
            for m in caught:                       # other warnings go on as usual
                if not issubclass(m.category, RuntimeWarning):
                    _w.warn_explicit(m.message, m.category, m.filename, m.lineno)
            if warnings == "check":
                _check_warnings(want, seen, exact)
    got = col.flags
    missing = want & ~got
    unexpected = (got & ~want) if exact else _context.Flags(0)
    if missing or unexpected:
        kind = "exactly" if exact else "at least"
        raise AssertionError(f"softfp8 flags differ: expected {kind} {{{_names(want)}}}, raised "
                             f"{{{_names(got)}}}; missing {{{_names(missing)}}}, unexpected "
                             f"{{{_names(unexpected)}}}")


def _check_warnings(want, seen, exact):
    F = _context.Flags
    expect = {name for name, flag in (("invalid", F.INVALID), ("divide", F.DIVBYZERO),
                                      ("overflow", F.OVERFLOW)) if want & flag}
    missing, extra = expect - seen, (seen - expect) if exact else set()
    if missing or extra:
        raise AssertionError(f"NumPy RuntimeWarnings differ from the flags: expected warnings for "
                             f"{sorted(expect) or 'none'}, got {sorted(seen) or 'none'}")


@contextlib.contextmanager
def assert_no_flags(ignore=()):
    """Assert the block raises no sticky flag other than those in ``ignore`` (same
    forms as ``assert_flags``'s ``expected``)."""
    skip = _to_flags(ignore, "ignore")
    with _context.collect_flags() as col:
        yield col
    unexpected = col.flags & ~skip
    if unexpected:
        extra = f" (ignored: {{{_names(skip)}}})" if skip else ""
        raise AssertionError(f"softfp8 flags raised: {{{_names(unexpected)}}}, expected none"
                             f"{extra}")


# --------------------------------------------------------------------------
# codes
# --------------------------------------------------------------------------

def _codes_of(x, fmt, what, fallback=None):
    """(codes as a uint64 array, format) of a softfp8 array or an integer code array
    (of format fmt, else fallback)."""
    arr = np.asarray(x)
    own = format_or_none(arr.dtype)
    if own is not None:
        if fmt is not None and own != fmt:
            raise AssertionError(f"{what} is a {own.name} array, expected {fmt.name}")
        return arr.view(own.storage).astype(np.uint64), own
    if fmt is None:
        fmt = fallback
    if fmt is None:
        raise TypeError(f"{what} has dtype {arr.dtype}, not a softfp8 format: pass fmt= to "
                        f"compare code arrays")
    if arr.dtype.kind not in "iu" and not (arr.dtype == object and arr.size == 0):
        raise TypeError(f"{what}: codes must be integers, got dtype {arr.dtype}")
    if arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        bad = lo if lo < 0 else hi
        if lo < 0 or hi > fmt.code_mask:
            raise ValueError(f"{what}: code {bad} out of range for {fmt.name} "
                             f"(0..{fmt.code_mask})")
    return arr.astype(np.uint64), fmt


def _nan_class(fmt, codes, mask):
    """Array: 1 for quiet NaN codes, 2 for signalling ones, 0 elsewhere (where mask)."""
    out = np.zeros(codes.shape, dtype=np.int8)
    if mask.any():
        sel = codes[mask]
        uniq, inv = np.unique(sel, return_inverse=True)
        kinds = np.array([2 if fmt.classify(int(c)) == "snan" else 1 for c in uniq], dtype=np.int8)
        out[mask] = kinds[inv.reshape(-1)]
    return out


def _describe(fmt, code):
    cls = fmt.classify(code)
    value = cls if cls in ("qnan", "snan") else repr(fmt.decode(code))   # exact value
    width = (fmt.bits + 3) // 4
    return f"0x{code:0{width}x} ({value})"


def assert_codes_equal(actual, expected, nan="class", fmt=None, err_msg=""):
    """Assert two softfp8 arrays hold the same codes, element for element.

    ``actual``/``expected``: softfp8 arrays, or integer code arrays when ``fmt`` (a
    format, its dtype or its name) is given (a softfp8 array must then be of that format).  Shapes must be equal (no
    broadcasting).  ``nan="class"``: two NaN codes are equal when both are quiet or
    both signalling; ``nan="bits"``: NaNs too must match bit for bit.  The default is
    ``nan="class"``: NaN payloads and signs are not compared unless ``nan="bits"``.
    """
    if nan not in ("class", "bits"):
        raise ValueError(f"nan must be 'class' or 'bits', got {nan!r}")
    if not isinstance(err_msg, str):
        raise TypeError(f"err_msg must be a string, got {err_msg!r}")
    if fmt is not None:
        fmt = lookup(fmt) if isinstance(fmt, str) else as_format(fmt)
    a, fa = _codes_of(actual, fmt, "actual")
    b, fb = _codes_of(expected, fmt, "expected", fallback=fa)
    if fa != fb:
        raise AssertionError(f"actual is a {fa.name} array, expected is a {fb.name} array")
    f = fa
    head = f"Codes not equal ({f.name}, nan={nan!r})" + (f"\n{err_msg}" if err_msg else "")
    if a.shape != b.shape:
        raise AssertionError(f"{head}\nshapes differ: actual {a.shape}, expected {b.shape}")
    equal = a == b
    if nan == "class" and a.size:
        # codes in the storage dtype for the bit-level predicate
        na = bits.isnan(f, a.astype(f.storage))
        nb = bits.isnan(f, b.astype(f.storage))
        both = na & nb & ~equal
        if both.any():
            equal |= both & (_nan_class(f, a, both) == _nan_class(f, b, both))
    if equal.all():
        return
    bad = np.flatnonzero(~equal.reshape(-1))
    total = a.size
    lines = [head,
             f"Mismatched elements: {bad.size} / {total} ({100.0 * bad.size / total:.3g}%)",
             f"First {min(bad.size, _MAX_SHOWN)} mismatches (index: actual vs expected):"]
    fa_flat, fb_flat = a.reshape(-1), b.reshape(-1)
    for k in bad[:_MAX_SHOWN]:
        idx = tuple(int(i) for i in np.unravel_index(int(k), a.shape))
        where = "[" + ", ".join(map(str, idx)) + "]"
        lines.append(f" {where}: {_describe(f, int(fa_flat[k]))} vs {_describe(f, int(fb_flat[k]))}")
    raise AssertionError("\n".join(lines))
