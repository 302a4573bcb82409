"""IEEE 754-2019 operations that are not element operations of the op table:
the conformance predicates (5.7.1), radix (5.7.2), the 22 comparison predicates
(5.6.1, 5.11), conversions to and from decimal and hexadecimal character
sequences (5.4.2, 5.4.3, 5.12), the operations on subsets of flags (5.7.4) and
on the dynamic rounding mode (9.3).  Everything else of the standard is a row
of the operation table (``softfp8.bits``, NumPy ufuncs) or a reduction in
``softfp8.bits``; docs/conformance.md lists every operation and where it is.

Flags and modes are softfp8's context (``softfp8.rounding()``,
``softfp8.get_flags()``): per thread and asyncio task.
"""
from __future__ import annotations

import decimal
from fractions import Fraction
import re

import numpy as np

from . import _context, bits
from ._context import Flags
from ._validation import as_format

__all__ = ["payload_of", "nan_with_payload", "is754version1985", "is754version2008", "is754version2019", "radix", "COMPARISONS",
           "compare", "from_decimal_string", "to_decimal_string", "from_hex_string", "to_hex_string",
           "lower_flags", "raise_flags", "test_flags", "test_saved_flags", "restore_flags",
           "save_all_flags", "get_binary_rounding_direction", "set_binary_rounding_direction",
           "save_modes", "restore_modes", "default_modes"]


# ---- 5.7.1 conformance predicates, 5.7.2 radix ----

def is754version1985():
    """False: softfp8 follows IEEE 754-2019 (5.7.1)."""
    return False


def is754version2008():
    """False: softfp8 follows IEEE 754-2019 (5.7.1)."""
    return False


def is754version2019():
    """True (5.7.1), for the operations softfp8 provides (docs/conformance.md)."""
    return True


def radix(fmt):
    """2: every softfp8 format is binary (5.7.2)."""
    as_format(fmt, "fmt")
    return 2


# ---- 5.6.1 / 5.11 the comparison predicates ----

# name -> (signals invalid for every NaN operand, the relations for which it is true:
# -1 less, 0 equal, 1 greater, 2 unordered)  (IEEE 754-2019 Tables 5.1-5.3)
COMPARISONS = {
    "compareQuietEqual": (False, {0}), "compareQuietNotEqual": (False, {-1, 1, 2}),
    "compareSignalingEqual": (True, {0}), "compareSignalingGreater": (True, {1}),
    "compareSignalingGreaterEqual": (True, {0, 1}), "compareSignalingLess": (True, {-1}),
    "compareSignalingLessEqual": (True, {-1, 0}), "compareSignalingNotEqual": (True, {-1, 1, 2}),
    "compareSignalingNotGreater": (True, {-1, 0, 2}), "compareSignalingLessUnordered": (True, {-1, 2}),
    "compareSignalingNotLess": (True, {0, 1, 2}), "compareSignalingGreaterUnordered": (True, {1, 2}),
    "compareQuietGreater": (False, {1}), "compareQuietGreaterEqual": (False, {0, 1}),
    "compareQuietLess": (False, {-1}), "compareQuietLessEqual": (False, {-1, 0}),
    "compareQuietUnordered": (False, {2}), "compareQuietNotGreater": (False, {-1, 0, 2}),
    "compareQuietLessUnordered": (False, {-1, 2}), "compareQuietNotLess": (False, {0, 1, 2}),
    "compareQuietGreaterUnordered": (False, {1, 2}), "compareQuietOrdered": (False, {-1, 0, 1}),
}
assert len(COMPARISONS) == 22


def compare(name, fmt, a, b):
    """The comparison predicate ``name`` of IEEE 754-2019 5.6.1 (e.g.
    "compareSignalingLess") on codes a, b of fmt: (bool array, flags), from
    softfp8.bits.compare's relation (the signaling ones raise invalid for any NaN
    operand, the quiet ones for signalling NaNs only)."""
    if name not in COMPARISONS:
        raise ValueError(f"unknown comparison predicate {name!r}; IEEE 754-2019 5.6.1 names: "
                         f"{', '.join(COMPARISONS)}")
    signaling, true_for = COMPARISONS[name]
    rel, flags = bits.compare(fmt, a, b, signaling=signaling)
    return np.isin(rel, sorted(true_for)), flags


# ---- 5.4.2, 5.4.3, 5.12 character sequences ----

_NUM = re.compile(r"^\s*([+-])?(?:(inf(?:inity)?)|(s?nan)(?:\((\d*)\))?|"
                  r"(0x[0-9a-f]*\.?[0-9a-f]*(?:p[+-]?\d+)?)|(\d*\.?\d*(?:e[+-]?\d+)?))\s*$", re.I)


def _parse(text):
    """(kind, Fraction or sign, payload): kind 'num', 'inf', 'nan', 'snan'."""
    if not isinstance(text, str):
        raise TypeError(f"expected a string, got {text!r}")
    m = _NUM.match(text)
    if not m or not any(m.group(i) for i in (2, 3, 5, 6)) or (m.group(6) is not None and
                                                              not re.search(r"\d", m.group(6) or "")):
        raise ValueError(f"not a number: {text!r}")
    neg = m.group(1) == "-"
    if m.group(2):
        return "inf", neg, None
    if m.group(3):
        return m.group(3).lower(), neg, int(m.group(4)) if m.group(4) else 0
    if m.group(5):
        h = m.group(5)[2:].lower()
        mant, _, exp = h.partition("p")
        whole, _, frac = mant.partition(".")
        if not (whole + frac):
            raise ValueError(f"not a number: {text!r}")
        v = Fraction(int(whole + frac, 16), 16 ** len(frac)) * Fraction(2) ** int(exp or 0)
        return "num", -v if neg else v, None
    v = Fraction(decimal.Decimal(m.group(6)))
    return "num", -v if neg else v, None


def _from_string(text, fmt, opts):
    fmt = as_format(fmt, "fmt")
    kind, v, payload = _parse(text)
    if kind == "inf":
        return bits.convert(np.array([-np.inf if v else np.inf]), np.float64, fmt, **opts)
    if kind in ("nan", "snan"):
        code = bits.set_payload_signaling if kind == "snan" else bits.set_payload
        if fmt.specials != "ieee":
            c, fl = bits.convert(np.array([np.nan]), np.float64, fmt, **opts)
            return c, fl
        p, _ = bits.from_int64(np.array([payload]), fmt)
        c, _ = code(fmt, p)
        if v:
            c = bits.neg(fmt, c)
        return c, np.zeros(1, np.uint8)
    if v == 0:
        z = bits.convert(np.array([-0.0 if text.strip().startswith("-") else 0.0]), np.float64, fmt,
                         **opts)
        return z
    num, den = abs(v.numerator), v.denominator
    # num / den exactly: 128 bits of quotient and a sticky remainder, 2^e scale
    sh = max(0, 130 - (num.bit_length() - den.bit_length()))
    q, r = divmod(num << sh, den)
    return bits.round_exact(fmt, [v < 0], [2 * q + (1 if r else 0)], [-sh - 1], **opts)


def from_decimal_string(text, fmt, rounding=None, saturate=None, tininess=None, seed=None,
                        sr_bits=None):
    """convertFromDecimalCharacter (5.4.2, 5.12.2): the decimal string (also "inf",
    "nan", "nan(payload)", "snan") rounded ONCE into fmt, in any mode.  Returns
    (code, flags)."""
    opts = dict(rounding=rounding, saturate=saturate, tininess=tininess, seed=seed, sr_bits=sr_bits)
    c, fl = _from_string(text, fmt, opts)
    return int(np.asarray(c).reshape(-1)[0]), int(np.asarray(fl).reshape(-1)[0])


def from_hex_string(text, fmt, rounding=None, saturate=None, tininess=None, seed=None, sr_bits=None):
    """convertFromHexCharacter (5.4.3, 5.12.3): a C99 hexadecimal string
    ("0x1.8p-3") rounded once into fmt.  Returns (code, flags)."""
    if not isinstance(text, str) or "0x" not in text.lower() and not re.search(r"inf|nan", text, re.I):
        raise ValueError(f"not a hexadecimal floating-point string: {text!r}")
    return from_decimal_string(text, fmt, rounding, saturate, tininess, seed, sr_bits)


def _value(fmt, code):
    cls, sign, sig, exp = bits.exact_values(fmt, np.array([code]))
    return int(cls[0]), int(sign[0]), int(sig[0]), int(exp[0])


def to_decimal_string(fmt, code, digits=None, rounding="nearest_even"):
    """convertToDecimalCharacter (5.4.2, 5.12.2): the value of code as a decimal
    string, exactly (digits=None: every binary value has a finite decimal expansion)
    or correctly rounded to ``digits`` significant digits (rounding: nearest_even,
    nearest_away, toward_zero, upward, downward)."""
    fmt = as_format(fmt, "fmt")
    cls, sign, sig, exp = _value(fmt, code)
    s = "-" if sign else ""
    if cls == 1:
        return s + "inf"
    if cls >= 2:
        return s + ("snan" if cls == 3 else "nan")
    v = Fraction(sig) * Fraction(2) ** exp
    d = decimal.Decimal(v.numerator) / decimal.Decimal(v.denominator) if v else decimal.Decimal(0)
    with decimal.localcontext() as ctx:
        ctx.prec = 100000
        d = decimal.Decimal(v.numerator) / decimal.Decimal(v.denominator) if v else decimal.Decimal(0)
        if digits is not None:
            if not isinstance(digits, int) or digits < 1:
                raise ValueError(f"digits must be a positive integer, got {digits!r}")
            modes = {"nearest_even": decimal.ROUND_HALF_EVEN, "nearest_away": decimal.ROUND_HALF_UP,
                     "toward_zero": decimal.ROUND_DOWN, "upward": decimal.ROUND_CEILING,
                     "downward": decimal.ROUND_FLOOR}
            if rounding not in modes:
                raise ValueError(f"rounding must be one of {', '.join(modes)}, got {rounding!r}")
            ctx.prec = digits
            ctx.rounding = modes[rounding]
            d = ctx.plus(-d if sign else d)
            return format(d, "e") if d else s + "0"
    return s + format(d.normalize() if d else d, "f")


def to_hex_string(fmt, code):
    """convertToHexCharacter (5.4.3, 5.12.3): the exact value of code in C99
    hexadecimal notation ("0x1.8p+1"), "inf" / "nan" for the specials."""
    fmt = as_format(fmt, "fmt")
    cls, sign, sig, exp = _value(fmt, code)
    s = "-" if sign else ""
    if cls == 1:
        return s + "inf"
    if cls >= 2:
        return s + ("snan" if cls == 3 else "nan")
    if sig == 0:
        return s + "0x0p+0"
    e = exp + sig.bit_length() - 1
    frac = sig - (1 << (sig.bit_length() - 1))
    nb = sig.bit_length() - 1
    hexd = (nb + 3) // 4
    f = format(frac << (4 * hexd - nb), "x").rjust(hexd, "0").rstrip("0") if nb else ""
    return "%s0x1%s%sp%+d" % (s, "." if f else "", f, e)


# ---- 9.7 NaN payloads, with the payload as an integer ----

def _payload_format(fmt, what):
    fmt = as_format(fmt, "fmt")
    if fmt.specials != "ieee" or fmt.man_bits < 2:
        raise ValueError(f"{what}: format {fmt.name} has no NaN payloads (specials {fmt.specials!r}, "
                         f"{fmt.man_bits} mantissa bits): payloads need an IEEE-style format with at "
                         f"least 2 mantissa bits")
    return fmt


def payload_of(fmt, codes):
    """The payloads of NaN codes of fmt as integers (getPayload, 9.7); -1 for codes
    that are not NaNs.  A format without payloads is a ValueError naming it."""
    fmt = _payload_format(fmt, "payload_of")
    c = bits._codes(codes, fmt, "codes").astype(np.int64)
    nan = np.asarray(bits.isnan(fmt, c))
    return np.where(nan, c & ((1 << (fmt.man_bits - 1)) - 1), -1)


def nan_with_payload(fmt, payloads, signaling=False):
    """The positive quiet (signalling) NaN codes of fmt with the given integer
    payloads (setPayload / setPayloadSignaling, 9.7).  A payload too wide for the
    format (or 0 for a signalling NaN, which would be infinity), a negative one, or a
    format without payloads is a ValueError naming the value."""
    fmt = _payload_format(fmt, "nan_with_payload")
    p = np.asarray(payloads)
    if p.dtype.kind not in "ui":
        raise TypeError(f"payloads must be integers, got dtype {p.dtype}")
    top = (1 << (fmt.man_bits - 1)) - 1
    low = 1 if signaling else 0
    if p.size and (p.min() < low or p.max() > top):
        bad = int(p.min()) if p.min() < low else int(p.max())
        raise ValueError(f"payload {bad} is {'too wide' if bad > top else 'not valid'} for {fmt.name} "
                         f"({'signalling ' if signaling else ''}payloads are {low}..{top})")
    quiet = 0 if signaling else 1 << (fmt.man_bits - 1)
    return ((((1 << fmt.exp_bits) - 1) << fmt.man_bits) | quiet | p.astype(np.int64)).astype(fmt.storage)


# ---- 5.7.4 operations on subsets of flags ----

def lower_flags(flags):
    """lowerFlags: clear the given flags of the current context."""
    cur = _context._current()
    cur.cell.flags &= ~int(Flags(flags))


def raise_flags(flags):
    """raiseFlags: raise the given flags in the current context."""
    cur = _context._current()
    cur.cell.flags |= int(Flags(flags))


def test_flags(flags):
    """testFlags: whether any of the given flags is raised."""
    return bool(int(_context.get_flags()) & int(Flags(flags)))


def test_saved_flags(saved, flags):
    """testSavedFlags: whether any of the given flags is in a saved set."""
    return bool(int(Flags(saved)) & int(Flags(flags)))


def restore_flags(saved, flags):
    """restoreFlags: set the given flags to their state in ``saved``."""
    cur = _context._current()
    mask = int(Flags(flags))
    cur.cell.flags = (cur.cell.flags & ~mask) | (int(Flags(saved)) & mask)


def save_all_flags():
    """saveAllFlags: the current flags (a Flags value)."""
    return _context.get_flags()


# ---- 9.3 dynamic modes ----

def get_binary_rounding_direction():
    """getBinaryRoundingDirection: the current rounding mode (softfp8's name)."""
    return _context.get_rounding()


def set_binary_rounding_direction(mode):
    """setBinaryRoundingDirection: set the rounding mode of the current context
    (as with fesetround; ``softfp8.rounding()`` scopes it to a block instead)."""
    _context._current().rounding = _context._mode_index(mode)


def save_modes():
    """saveModes: the current rounding, saturation and tininess modes."""
    cur = _context._current()
    return (cur.rounding, cur.saturate, cur.tininess_before, cur.sr_bits)


def restore_modes(modes):
    """restoreModes: modes saved by save_modes()."""
    cur = _context._current()
    cur.rounding, cur.saturate, cur.tininess_before, cur.sr_bits = modes


def default_modes():
    """defaultModes: nearest_even, each format's saturation, tininess after, 32
    stochastic bits."""
    restore_modes((0, -1, 0, 32))
