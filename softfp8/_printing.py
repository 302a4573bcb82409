"""Printing of softfp8 scalars and arrays (docs/numpy.md, "Printing").

The text of one value (``_text``), used by str(), repr(), ``astype(str)`` and
array printing:

- ``softfp8.float16``: exactly NumPy's text for np.float16 (NumPy prints it);
- formats of at most 8 bits: the exact decimal value, as Python prints the
  float of the same value (``288.0``, ``448.0``, ``0.001953125``); every such
  value is a float64, so the text also reads back as the same code;
- other formats (bfloat16, 16-bit custom formats): the format's shortest
  round-tripping decimal (``Format.shortest``).

Arrays: ``softfp8.float16`` arrays are printed by NumPy's own float16
formatter, arrays of formats of at most 8 bits by NumPy's float64 formatter
on their exact values (so exactly as ``np.array(values)`` prints), and the
other formats lay the shortest texts out by NumPy's float rules.
"""
from __future__ import annotations

import decimal

import numpy as np

from . import _formats
from . import bits as _bits
from ._dtypes import SoftScalar, finfo, format_of


def _as_np_float16(code):
    return np.array(code, dtype=np.uint16).view(np.float16)[()]


def _text(fmt, code):
    """str() of the value with code `code` of format `fmt`."""
    if fmt == _formats.float16:
        return str(_as_np_float16(code))
    if fmt.bits <= 8:
        return repr(fmt.decode(code))
    return fmt.shortest(code)


def _scalar_str(self):
    return _text(self.format, self.code)


def _scalar_repr(self):
    fmt = self.format
    text = _text(fmt, self.code)
    if fmt._family == "tesla":
        family, _, rest = fmt.name.partition("(")
        return f"{family}({text}, {rest[:-1]})"
    return f"{fmt.name}({text})"


def _sci_parts(s):
    """('-', '1', '5', -3) for the shortest string '-0.0015'."""
    d = decimal.Decimal(s)
    if d == 0:
        return ("-" if d.is_signed() else ""), "0", "", 0
    t = d.normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    return ("-" if t.sign else ""), digits[0], digits[1:], d.adjusted()


class _SoftFloatFormat:
    """NumPy array-print element formatter for 16-bit softfp8 arrays other than
    float16 (bfloat16, custom formats), following
    NumPy's float rules (unique digits, positional unless the magnitudes ask
    for scientific notation) with the shortest strings of the format."""

    def __init__(self, data):
        fmt = format_of(data.dtype)
        codes = np.asarray(data).reshape(-1).view(fmt.storage)
        vals = _bits.to_float(codes, fmt, **_bits.FIXED)[0]
        finite = np.isfinite(vals)
        nonzero = np.abs(vals[finite & (vals != 0)])
        self.fmt = fmt
        self.exp = False
        if nonzero.size:
            # NumPy's rule with 10**precision as the cutoff (as for float16); formats
            # with fewer digits than float16 use float16's cutoff 1e3
            cutoff = 10.0 ** min(8, max(3, finfo(fmt).precision))
            mx, mn = nonzero.max(), nonzero.min()
            self.exp = bool(mx >= cutoff or mn < 1e-4 or mx / mn > 1e3)
        uniq = [int(c) for c in np.unique(codes[finite])]
        if self.exp:
            parts = [_sci_parts(_text(fmt, c)) for c in uniq]
            self.frac = max((len(p[2]) for p in parts), default=0)
            self.expw = max((len(str(abs(p[3]))) for p in parts), default=2)
            self.expw = max(self.expw, 2)
            strs = [self._raw(c) for c in uniq]
            self.width = max((len(x) for x in strs), default=0)
            self.left = self.right = 0
        else:
            strs = [self._raw(c) for c in uniq]
            parts = [x.partition(".") for x in strs]
            self.left = max((len(p[0]) for p in parts), default=0)
            self.right = max((len(p[2]) for p in parts), default=0)
            if not finite.all():
                # room for nan/inf as NumPy leaves it
                neginf = bool(np.any(np.isneginf(vals)))
                offset = self.right + 1
                self.left = max(self.left, 3 - offset, 3 + neginf - offset)
            self.width = self.left + 1 + self.right

    def _raw(self, code):
        s = _text(self.fmt, code)
        if s in ("nan", "inf", "-inf"):
            return s
        if self.exp:
            sign, lead, rest, ex = _sci_parts(s)
            if float(s) == 0:
                lead, rest, ex = "0", "", 0
            elif len(rest) < self.frac:
                # NumPy (Dragon4 with min_digits) continues with the exact value's digits
                v = self.fmt.decode(code)
                m, _, e = f"{v:.{self.frac}e}".partition("e")
                sign, (lead, _, rest), ex = ("-" if v < 0 else ""), m.lstrip("-").partition("."), int(e)
            rest = rest.ljust(self.frac, "0")
            return f"{sign}{lead}.{rest}e{'-' if ex < 0 else '+'}{str(abs(ex)).zfill(self.expw)}"
        if s.endswith(".0"):
            s = s[:-1]
        return s

    def __call__(self, x):
        code = int(x.code) if isinstance(x, SoftScalar) else int(x)
        s = self._raw(code)
        if s in ("nan", "inf", "-inf") or self.exp:
            return s.rjust(self.width)
        left, dot, right = s.partition(".")
        return left.rjust(self.left) + dot + right.ljust(self.right)


class _NumpyFormat:
    """NumPy's own element formatter on the NumPy floats of the same values:
    np.float16 for softfp8.float16, float64 (exact) for formats of <= 8 bits."""

    def __init__(self, data, fmt, original, options):
        self.fmt = fmt
        codes = np.asarray(data).view(fmt.storage)
        if fmt == _formats.float16:
            same = codes.view(np.float16)
        else:
            same = _bits.to_float(codes.reshape(-1), fmt, **_bits.FIXED)[0].reshape(codes.shape)
        self.inner = original(same, **options)

    def __call__(self, x):
        code = int(x.code) if isinstance(x, SoftScalar) else int(x)
        if self.fmt == _formats.float16:
            return self.inner(_as_np_float16(code))
        return self.inner(np.float64(self.fmt.decode(code)))


def install():
    """Route NumPy's array printing of softfp8 arrays to _SoftFloatFormat and
    the scalars' str / repr to _text (idempotent)."""
    SoftScalar.__str__ = _scalar_str
    SoftScalar.__repr__ = _scalar_repr
    try:
        from numpy._core import arrayprint as ap
    except ImportError:  # pragma: no cover - older layouts
        return
    original = ap._get_format_function
    if getattr(original, "_softfp8", False):
        return

    def _get_format_function(data, **options):
        fmt = format_of(data.dtype)
        if fmt is not None and (fmt == _formats.float16 or fmt.bits <= 8):
            return _NumpyFormat(data, fmt, original, options)
        if fmt is not None:
            return _SoftFloatFormat(data)
        return original(data, **options)

    _get_format_function._softfp8 = True
    ap._get_format_function = _get_format_function


install()
