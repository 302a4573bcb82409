"""Fraction model: an exact reference model of softfp8's rounding, written on
``fractions.Fraction``.

Written from SPEC.md and the Tesla document only, independently of softfp8 (it
never imports it) and of the other model, ``tests.models.rational`` (it shares
no code with it; the flag constants and format parameters are deliberately
restated here).  Expected values of the tests that use it come from here.

Covers: the preset formats' parameters (``SPECS``) and the Tesla families
(``tesla_spec``); classifying, decoding and encoding codes; rounding an exact
rational or a float64 into a format in every rounding mode (including stochastic
rounding with a given random word and to_odd), with saturation, tininess before/
after rounding, overflow and the flags of SPEC.md; exact sums and products of
decoded values.  Tests reach it as ``from tests.models import fraction_model``
or through the ``ref`` fixture of ``tests/conftest.py``.
"""

from __future__ import annotations

import math
from collections import namedtuple
from fractions import Fraction

# --------------------------------------------------------------------------
# flags (SoftFloat layout + denormal), written out independently of softfp8
# --------------------------------------------------------------------------

INEXACT = 0x01
UNDERFLOW = 0x02
OVERFLOW = 0x04
DIVBYZERO = 0x08
INVALID = 0x10
DENORMAL = 0x20

ROUNDINGS = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")

# --------------------------------------------------------------------------
# format descriptions, from SPEC.md section 2 (not from softfp8)
# --------------------------------------------------------------------------

Spec = namedtuple("Spec", "bits signed E M bias specials subnormals saturate")

SPECS = {
    "e4m3": Spec(8, True, 4, 3, 7, "fn", "ieee", False),
    "e5m2": Spec(8, True, 5, 2, 15, "ieee", "ieee", False),
    "e4m3fnuz": Spec(8, True, 4, 3, 8, "fnuz", "ieee", False),
    "e5m2fnuz": Spec(8, True, 5, 2, 16, "fnuz", "ieee", False),
    "uhp": Spec(16, False, 6, 10, 31, "ieee", "flush", False),
    "hfp8_143": Spec(8, True, 4, 3, 4, "none", "ieee", True),
    "hfp8_152": Spec(8, True, 5, 2, 15, "ieee", "ieee", False),
    "hfp16_169": Spec(16, True, 6, 9, 31, "ieee", "ieee", False),
    "float16": Spec(16, True, 5, 10, 15, "ieee", "ieee", False),
    "bfloat16": Spec(16, True, 8, 7, 127, "ieee", "ieee", False),
    # ml_dtypes' float8_e4m3, float8_e3m4, float8_e4m3b11fnuz (from its documentation)
    "float8_e4m3": Spec(8, True, 4, 3, 7, "ieee", "ieee", False),
    "float8_e3m4": Spec(8, True, 3, 4, 3, "ieee", "ieee", False),
    "float8_e4m3b11fnuz": Spec(8, True, 4, 3, 11, "fnuz", "ieee", False),
    # OCP MX v1.0 element formats (ml_dtypes' names): no inf/NaN, saturating
    "float4_e2m1fn": Spec(4, True, 2, 1, 1, "none", "ieee", True),
    "float6_e2m3fn": Spec(6, True, 2, 3, 1, "none", "ieee", True),
    "float6_e3m2fn": Spec(6, True, 3, 2, 3, "none", "ieee", True),
    # OCP MX's scale: 2^(code - 127), code 0xFF NaN, no zero (exponent field 0 is the
    # binade 2^-127: subnormals "nozero", docs/semantics.md)
    "float8_e8m0fnu": Spec(8, False, 8, 0, 127, "fn", "nozero", False),
    # NVFP4's block scale: the non-negative half of E4M3 (7 bits, 0x7F NaN)
    "ue4m3": Spec(7, False, 4, 3, 7, "fn", "ieee", False),
}

TESLA_LAYOUT = {"cfloat8_143": (8, 4, 3), "cfloat8_152": (8, 5, 2), "shp": (16, 5, 10)}


def tesla_spec(family: str, bias: int, subnormals: str = "tesla") -> Spec:
    bits, E, M = TESLA_LAYOUT[family]
    return Spec(bits, True, E, M, bias, "none", subnormals, True)


def pow2(k: int) -> Fraction:
    return Fraction(2) ** k


def floor_log2(x: Fraction) -> int:
    """floor(log2(x)) for a positive rational, exactly."""
    x = Fraction(x)
    assert x > 0
    e = x.numerator.bit_length() - x.denominator.bit_length()
    # now 2^(e-1) < x < 2^(e+1)
    if pow2(e) > x:
        e -= 1
    assert pow2(e) <= x < pow2(e + 1)
    return e


def sign_bit(spec: Spec) -> int:
    return (1 << (spec.bits - 1)) if spec.signed else 0


def code_mask(spec: Spec) -> int:
    return (1 << spec.bits) - 1


def max_fields(spec: Spec):
    top = (1 << spec.E) - 1
    allm = (1 << spec.M) - 1
    if spec.specials == "ieee":
        return top - 1, allm
    if spec.specials == "fn":   # with no mantissa bits, the whole top binade is the NaN
        return (top, allm - 1) if spec.M else (top - 1, 0)
    return top, allm  # fnuz, none


def max_value(spec: Spec) -> Fraction:
    ef, mf = max_fields(spec)
    return Fraction((1 << spec.M) + mf) * pow2(ef - spec.bias - spec.M)


def max_code(spec: Spec) -> int:
    ef, mf = max_fields(spec)
    return (ef << spec.M) | mf


def min_normal(spec: Spec) -> Fraction:
    # "nozero": the exponent field 0 holds the smallest normal binade 2^-bias
    return pow2(-spec.bias) if spec.subnormals == "nozero" else pow2(1 - spec.bias)


def min_subnormal(spec: Spec) -> Fraction:
    if spec.subnormals == "nozero":
        return min_normal(spec)
    if spec.subnormals == "tesla":
        return pow2(-spec.bias - spec.M)
    return pow2(1 - spec.bias - spec.M)


def canonical_nan(spec: Spec) -> int:
    if spec.specials == "ieee":
        top = (1 << spec.E) - 1
        return (top << spec.M) | (1 << (spec.M - 1))
    if spec.specials == "fn":   # all ones below the sign bit (all ones if unsigned)
        return code_mask(spec) & ~sign_bit(spec)
    if spec.specials == "fnuz":
        return 1 << (spec.bits - 1)
    raise ValueError("no NaN in a 'none' format")


def inf_code(spec: Spec) -> int:
    assert spec.specials == "ieee"
    return ((1 << spec.E) - 1) << spec.M


def classify(spec: Spec, code: int) -> str:
    """'zero' | 'sub' | 'normal' | 'inf' | 'qnan' | 'snan'."""
    code = int(code)
    assert 0 <= code <= code_mask(spec)
    sbit = sign_bit(spec)
    mag = code & ~sbit if spec.signed else code
    ef = mag >> spec.M
    mf = mag & ((1 << spec.M) - 1)
    top = (1 << spec.E) - 1
    if spec.specials == "ieee" and ef == top:
        if mf == 0:
            return "inf"
        return "qnan" if mf >> (spec.M - 1) else "snan"
    if spec.specials == "fn" and ef == top and mf == (1 << spec.M) - 1:
        return "qnan"
    if spec.specials == "fnuz" and code == sbit:
        return "qnan"
    if ef == 0 and spec.subnormals != "nozero":
        return "zero" if mf == 0 else "sub"
    return "normal"


def is_nan(spec: Spec, code: int) -> bool:
    return classify(spec, code) in ("qnan", "snan")


def decode(spec: Spec, code: int, literal_flush: bool = False):
    """Exact value of a code: ('nan',) | ('inf', sign) | ('num', sign, Fraction).

    Flush-format subnormals read as zero unless literal_flush is given."""
    code = int(code)
    cls = classify(spec, code)
    sign = 1 if (spec.signed and code & sign_bit(spec)) else 0
    if cls in ("qnan", "snan"):
        return ("nan",)
    if cls == "inf":
        return ("inf", sign)
    mag = code & ~sign_bit(spec) if spec.signed else code
    ef = mag >> spec.M
    mf = mag & ((1 << spec.M) - 1)
    if ef == 0 and spec.subnormals != "nozero":
        if mf == 0:
            return ("num", sign, Fraction(0))
        if spec.subnormals == "tesla":
            return ("num", sign, mf * pow2(-spec.bias - spec.M))
        if spec.subnormals == "flush" and not literal_flush:
            return ("num", sign, Fraction(0))
        return ("num", sign, mf * pow2(1 - spec.bias - spec.M))
    return ("num", sign, ((1 << spec.M) + mf) * pow2(ef - spec.bias - spec.M))


def decode_float(spec: Spec, code: int, literal_flush: bool = False) -> float:
    d = decode(spec, code, literal_flush)
    if d[0] == "nan":
        return math.nan
    if d[0] == "inf":
        return -math.inf if d[1] else math.inf
    v = float(d[2])
    assert Fraction(v) == d[2], "value not exact in float64"
    return -v if d[1] else v


def to_fraction(x) -> tuple[int, Fraction]:
    """(sign, magnitude) of a finite Python/NumPy float, exactly."""
    x = float(x)
    assert math.isfinite(x)
    return (1 if math.copysign(1.0, x) < 0 else 0), Fraction(abs(x))


# --------------------------------------------------------------------------
# rounding
# --------------------------------------------------------------------------


def _unbounded_neighbours(spec: Spec, mag: Fraction):
    """Neighbours of mag on the grid of M fraction bits with unbounded exponent:
    ((lower, lower_code_parity), (upper, upper_code_parity))."""
    e = floor_log2(mag)
    ulp = pow2(e - spec.M)
    k = math.floor(mag / ulp)
    lower = k * ulp
    upper = (k + 1) * ulp

    def parity(kk, ee):
        # virtual code ((ee + bias) << M) | (kk - 2^M), only its last bit matters
        if kk == (1 << (spec.M + 1)):
            kk, ee = 1 << spec.M, ee + 1
        return ((((ee + spec.bias) << spec.M) | (kk - (1 << spec.M))) & 1)

    return (lower, parity(k, e)), (upper, parity(k + 1, e))


def _format_neighbours(spec: Spec, mag: Fraction):
    """Neighbours of mag among the real values of the format (the grid above
    max finite continues with the unbounded exponent range)."""
    mn = min_normal(spec)
    if mag >= mn or spec.subnormals in ("flush", "nozero"):
        return _unbounded_neighbours(spec, mag)
    if spec.subnormals == "ieee":
        sp = pow2(1 - spec.bias - spec.M)
        k = math.floor(mag / sp)
        return (k * sp, k & 1), ((k + 1) * sp, (k + 1) & 1)
    # tesla: literal subnormals k * 2^(-bias-M), k < 2^M, then a gap up to 2^(1-bias)
    sp = pow2(-spec.bias - spec.M)
    largest = ((1 << spec.M) - 1) * sp
    if mag < largest:
        k = math.floor(mag / sp)
        return (k * sp, k & 1), ((k + 1) * sp, (k + 1) & 1)
    return (largest, ((1 << spec.M) - 1) & 1), (mn, (1 << spec.M) & 1)


def _pick(mag, lo, up, mode, sign, sr_bits, R):
    lower, lp = lo
    upper, upp = up
    if mag == lower:
        return lower
    if mode in ("nearest_even", "nearest_away"):
        mid = (lower + upper) / 2
        if mag < mid:
            return lower
        if mag > mid:
            return upper
        if mode == "nearest_away":
            return upper
        return lower if lp == 0 else upper
    if mode == "toward_zero":
        return lower
    if mode == "upward":
        return lower if sign else upper
    if mode == "downward":
        return upper if sign else lower
    if mode == "to_odd":
        return lower if lp == 1 else upper
    if mode == "stochastic":
        f = (mag - lower) / (upper - lower)
        n = 1 << sr_bits
        r = int(R) & (n - 1)
        return upper if math.floor(f * n) + r >= n else lower
    raise ValueError(mode)


def encode_finite(spec: Spec, sign: int, mag: Fraction) -> int:
    """Code of a value of the format (0 <= mag <= max), with sign."""
    mn = min_normal(spec)
    if mag == 0:
        assert spec.subnormals != "nozero"
        c = 0
    elif mag < mn:
        if spec.subnormals == "tesla":
            k = mag / pow2(-spec.bias - spec.M)
        else:
            k = mag / pow2(1 - spec.bias - spec.M)
        assert k.denominator == 1 and 0 < k < (1 << spec.M), (spec, mag)
        c = int(k)
    else:
        e = floor_log2(mag)
        k = mag / pow2(e - spec.M)
        assert k.denominator == 1
        c = ((e + spec.bias) << spec.M) | (int(k) - (1 << spec.M))
    assert mag <= max_value(spec)
    if sign and spec.signed and not (spec.specials == "fnuz" and c == 0):
        c |= sign_bit(spec)
    return c


def _infinity_result(spec: Spec, sign: int, saturating: bool):
    """Code delivered for an infinite value (no flags of its own)."""
    if not spec.signed and sign:
        return canonical_nan(spec), INVALID
    if saturating or spec.specials == "none":
        return encode_finite(spec, sign, max_value(spec)), 0
    if spec.specials == "ieee":
        return inf_code(spec) | (sign_bit(spec) if sign else 0), 0
    if spec.specials == "fn":
        return canonical_nan(spec) | (sign_bit(spec) if sign else 0), 0
    return canonical_nan(spec), 0  # fnuz


def round_value(spec: Spec, sign: int, mag: Fraction, mode: str = "nearest_even",
                saturate=None, tininess: str = "after", sr_bits: int = 32, R: int = 0):
    """(code, flags) of the exact finite value (-1)^sign * mag rounded into spec."""
    mag = Fraction(mag)
    assert mag >= 0
    sat = spec.specials == "none" or (spec.saturate if saturate is None else bool(saturate))
    flags = 0
    nozero = spec.subnormals == "nozero"
    if mag == 0:
        if nozero:   # zero is not in the value set: the NaN, invalid
            return canonical_nan(spec), INVALID
        return encode_finite(spec, sign if spec.signed else 0, mag), 0
    if nozero and sign and not spec.signed:
        return canonical_nan(spec), INVALID
    mn = min_normal(spec)
    ub = _pick(mag, *_unbounded_neighbours(spec, mag), mode, sign, sr_bits, R)
    tiny = (mag < mn) if tininess == "before" else (ub < mn)
    if nozero and mag < mn:
        # below the smallest value there is no neighbour: the smallest, in every mode
        return encode_finite(spec, sign, mn), INEXACT | (UNDERFLOW if tiny else 0)
    if spec.subnormals == "flush":
        if tiny:
            r = Fraction(0)
            flags |= UNDERFLOW | INEXACT
        else:
            r = ub
            if r != mag:
                flags |= INEXACT
    else:
        r = _pick(mag, *_format_neighbours(spec, mag), mode, sign, sr_bits, R)
        if r != mag:
            flags |= INEXACT
            if tiny:
                flags |= UNDERFLOW
    if not spec.signed and sign and r != 0:
        return canonical_nan(spec), INVALID
    if r > max_value(spec):
        flags |= OVERFLOW | INEXACT
        to_inf = (mode in ("nearest_even", "nearest_away", "stochastic")
                  or (mode == "upward" and not sign) or (mode == "downward" and sign))
        if sat or not to_inf:
            return encode_finite(spec, sign, max_value(spec)), flags
        code, _ = _infinity_result(spec, sign, False)
        return code, flags
    return encode_finite(spec, sign if spec.signed else 0, r), flags


def round_float(spec: Spec, x: float, mode: str = "nearest_even", saturate=None,
                tininess: str = "after", sr_bits: int = 32, R: int = 0, snan: bool = False):
    """(code, flags, nan_result) for a float64 source value x (a conversion)."""
    x = float(x)
    if math.isnan(x):
        if spec.specials == "none":
            return encode_finite(spec, 0, max_value(spec)), INVALID, False
        return canonical_nan(spec), (INVALID if snan else 0), True
    if math.isinf(x):
        sat = spec.saturate if saturate is None else bool(saturate)
        code, fl = _infinity_result(spec, 1 if x < 0 else 0, sat)
        return code, fl, is_nan(spec, code)
    s, m = to_fraction(x)
    code, fl = round_value(spec, s, m, mode, saturate, tininess, sr_bits, R)
    return code, fl, is_nan(spec, code)


def add_values(a, b, mode):
    """Exact sum of two decoded finite values -> (sign, mag)."""
    (sa, ma), (sb, mb) = a, b
    v = (-ma if sa else ma) + (-mb if sb else mb)
    if v == 0:
        if ma == 0 and mb == 0 and sa == sb:
            return sa, Fraction(0)
        return (1 if mode == "downward" else 0), Fraction(0)
    return (1 if v < 0 else 0), abs(v)


def mul_values(a, b):
    (sa, ma), (sb, mb) = a, b
    return sa ^ sb, ma * mb
