"""NumPy array printing of softfp8 arrays.

Element strings are the format's shortest round-tripping decimals
(``Format.shortest``), laid out by NumPy's float rules.
"""
from __future__ import annotations

import decimal

import numpy as np

from . import bits as _bits
from ._dtypes import SoftScalar, finfo, format_of


def _sci_parts(s):
    """('-', '1', '5', -3) for the shortest string '-0.0015'."""
    d = decimal.Decimal(s)
    if d == 0:
        return ("-" if d.is_signed() else ""), "0", "", 0
    t = d.normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    return ("-" if t.sign else ""), digits[0], digits[1:], d.adjusted()


class _SoftFloatFormat:
    """NumPy array-print element formatter for softfp8 arrays, following
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
            parts = [_sci_parts(fmt.shortest(c)) for c in uniq]
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
        s = self.fmt.shortest(code)
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


def install():
    """Route NumPy's array printing of softfp8 arrays to _SoftFloatFormat (idempotent)."""
    try:
        from numpy._core import arrayprint as ap
    except ImportError:  # pragma: no cover - older layouts
        return
    original = ap._get_format_function
    if getattr(original, "_softfp8", False):
        return

    def _get_format_function(data, **options):
        if format_of(data.dtype) is not None:
            return _SoftFloatFormat(data)
        return original(data, **options)

    _get_format_function._softfp8 = True
    ap._get_format_function = _get_format_function


install()
