"""Independent exact reference implementation of softfp8's semantics (SPEC.md).

``tests.models.rational`` (formerly ``tests/reference.py``) is written
independently of softfp8 (it never imports it: the comparison helpers at the end
take the module as an argument) and of the other model,
``tests.models.fraction_model`` (no shared code; the flag constants and format
parameters are deliberately restated).  It covers every operation of the core --
add, sub, mul, div, fma, sqrt, conversions between formats and from/to
float32/float64, round_pack -- in every rounding mode, with saturation,
tininess and every flag, plus whole-array helpers for the exhaustive tests.

Written from /work/shared/SPEC.md only.  Every result is computed exactly with
Python integers (values are kept as ``n * 2**e`` dyadics, ``n/d * 2**e``
rationals or ``sqrt(n) * 2**h``) and rounded once into the destination format;
no float arithmetic is ever used for a result.

Layers
------
* ``Fmt`` and the table of format parameters transcribed from SPEC §2.
* ``decode(fmt, code)``: the exact value a code stands for (as operations read it).
* ``exact_*``: the exact (extended-real) result of an operation as a hashable
  *descriptor* plus the flags the operation itself raises (denormal, invalid,
  divbyzero).  Descriptors:

  - ``('F', sign, mag)``      finite non-zero, magnitude ``mag`` (see below)
  - ``('Z', sign)``           exact zero of a known sign
  - ``('C',)``                exact zero from cancellation (+0, -0 when rounding downward)
  - ``('I', sign)``           exact infinity
  - ``('N', code, from_nan)`` NaN; ``code`` is a (quieted) operand NaN to propagate
                              (same-format operations) or None; ``from_nan`` tells
                              whether a NaN operand caused it (then tests compare by class)

  magnitudes: ``('d', n, e)`` = n*2**e (n odd), ``('r', n, d, e)`` = n/d*2**e,
  ``('s', n, h)`` = sqrt(n)*2**h.
* ``deliver(fmt, desc, mode, saturate, tininess, R, N)``: one rounding into the
  format (SPEC §1, §3, §4, §5) -> ``(code, flags)``.
* Scalar operations ``add sub mul div fma sqrt convert round_pack`` -> ``(code, flags)``.
* ``Table``: deduplicated descriptors delivered for whole arrays at once with
  NumPy (integer selection logic only; the exact work is done per distinct value).

Decisions where SPEC.md (and IEEE 754) leave room -- each is checked by the tests:
* Tininess (also for `tesla` and `flush`): before = exact |x| < 2^(1-bias); after =
  |x| rounded to M+1 significant bits with unbounded exponent is < 2^(1-bias).
  Stochastic rounding uses the same R on that unbounded grid.
* "Even code" = least significant bit of the code is 0 (Tesla gap ties go to the
  smallest normal; to_odd in the gap keeps the largest subnormal).
* to_odd in `fn` E4M3: x in (448, 480) truncates to 448 (code 0x7E, even), setting
  the last bit gives 480 > max, so it is an overflow (delivered as 448, OF|NX).
* `denormal` is raised whenever an operand is subnormal, whatever else happens
  (also next to NaN operands and in invalid operations).
* NaNs of `fn`/`fnuz` formats are quiet (no invalid when propagated).
* fma(0, inf, qNaN) raises invalid.  NaN results caused by a NaN operand are
  compared by class (except UHP: always 0xFE00; fnuz: its one NaN).
* UHP (unsigned): a negative result that is non-zero after rounding -- including
  -inf and a negative overflow -- is 0xFE00 with `invalid` only; one that rounds
  (flushes) to zero is +0 with the usual flags; -0 is +0.
* `none` formats ignore saturate=False (they always saturate).
* A `flush` format's smallest subnormal (SPEC §6 property) is its smallest normal.
* `nozero` formats (E8M0; docs/semantics.md "Formats with no zero"): exponent field 0
  is the normal binade 2^-bias; there is no zero and no subnormal.  An exact zero
  result is the canonical NaN with `invalid`; a negative result in an unsigned one is
  the NaN with `invalid` only; a non-zero magnitude below 2^-bias is delivered as
  2^-bias (every mode) with `inexact`, plus `underflow` if tiny.
"""

from __future__ import annotations

from collections import namedtuple
from fractions import Fraction
from math import gcd, isqrt

import numpy as np

INEXACT = 0x01
UNDERFLOW = 0x02
OVERFLOW = 0x04
DIVBYZERO = 0x08
INVALID = 0x10
DENORMAL = 0x20

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")
ALL_MODES = MODES + ("stochastic",)
TININESS = ("after", "before")

_P = 34                       # extra fraction bits kept beyond the rounding position
_PMASK = (1 << _P) - 1
_HALF = 1 << (_P - 1)


# --------------------------------------------------------------------------
# Formats (SPEC §2)
# --------------------------------------------------------------------------

class Fmt:
    """Parameters of one format plus derived constants (all exact integers)."""

    __slots__ = ("name", "bits", "signed", "exp_bits", "man_bits", "bias", "specials",
                 "subnormals", "saturate", "emin", "qmin", "sign_bit", "mag_mask",
                 "max_code", "inf_code", "nan_code", "qnan_bit", "min_normal_code",
                 "origin", "_ops", "_key")

    def __init__(self, name, bits, signed, exp_bits, man_bits, bias, specials,
                 subnormals, saturate):
        if specials not in ("ieee", "fn", "fnuz", "none", "p3109"):
            raise ValueError(specials)
        if subnormals not in ("ieee", "tesla", "flush", "nozero"):
            raise ValueError(subnormals)
        if bits != exp_bits + man_bits + (1 if signed else 0):
            raise ValueError("inconsistent bit counts for %s" % name)
        if exp_bits < 1 or man_bits < 0:
            raise ValueError(name)
        self.name = name
        self.bits = bits
        self.signed = bool(signed)
        self.exp_bits = exp_bits
        self.man_bits = man_bits
        self.bias = bias
        self.specials = specials
        self.subnormals = subnormals
        self.saturate = bool(saturate)
        M, E = man_bits, exp_bits
        nozero = subnormals == "nozero"
        if nozero and specials not in ("ieee", "fn"):
            raise ValueError("a format with no zero needs a NaN (specials ieee or fn)")
        # the smallest normal binade is exponent field 1, or field 0 with no zero
        self.emin = (0 if nozero else 1) - bias    # exponent of the smallest normal
        self.qmin = self.emin - M                  # quantum of binade emin (ieee subnormal quantum)
        self.sign_bit = (1 << (bits - 1)) if signed else 0
        self.mag_mask = (1 << (E + M)) - 1
        self.min_normal_code = 0 if nozero else 1 << M
        self.qnan_bit = (1 << (M - 1)) if M > 0 else 0
        all_ones_exp = ((1 << E) - 1) << M
        if specials == "ieee":
            self.max_code = all_ones_exp - 1
            self.inf_code = all_ones_exp
            self.nan_code = all_ones_exp | self.qnan_bit       # positive quiet NaN
        elif specials == "fn":
            # S.1..1.1..1 is the NaN; with M = 0 that is the whole top binade
            self.max_code = self.mag_mask - 1 if M else all_ones_exp - 1
            self.inf_code = None
            self.nan_code = self.mag_mask                       # S.1..1.1..1, sign 0
        elif specials == "fnuz":
            self.max_code = self.mag_mask
            self.inf_code = None
            self.nan_code = self.sign_bit                       # the "-0" code
        elif specials == "p3109":
            # IEEE P3109 extended domain: signed: NaN = the "-0" code, +-inf = S.1..1;
            # unsigned: NaN = all ones, +inf = all ones - 1
            if signed:
                self.max_code = self.mag_mask - 1
                self.inf_code = self.mag_mask
                self.nan_code = self.sign_bit
            else:
                self.max_code = self.mag_mask - 2
                self.inf_code = self.mag_mask - 1
                self.nan_code = self.mag_mask
        else:
            self.max_code = self.mag_mask
            self.inf_code = None
            self.nan_code = None
        if specials == "fnuz" and not signed:
            raise ValueError("fnuz needs a sign bit")
        self.origin = ("format", name)
        self._ops = None
        self._key = (bits, self.signed, E, M, bias, specials, subnormals, self.saturate)

    def __repr__(self):
        return "Fmt(%s)" % self.name

    def __eq__(self, other):
        return isinstance(other, Fmt) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    @property
    def ncodes(self):
        return 1 << self.bits

    # exact characteristic values (Fractions)
    @property
    def max_value(self):
        return _code_value(self, self.max_code)

    @property
    def min_normal(self):
        return Fraction(2) ** self.emin

    @property
    def min_subnormal(self):
        # a `flush` format stores no subnormal: its smallest positive value is the
        # smallest normal (our decision; SPEC §6 does not say)
        if self.man_bits == 0 or self.subnormals in ("flush", "nozero"):
            return self.min_normal
        q = self.qmin - 1 if self.subnormals == "tesla" else self.qmin
        return Fraction(2) ** q

    @property
    def storage(self):
        return np.uint8 if self.bits <= 8 else (np.uint16 if self.bits <= 16 else
                                                 (np.uint32 if self.bits <= 32 else np.uint64))


# The table, transcribed from SPEC §2:
#   name: (bits, signed, exp_bits, man_bits, bias, specials, subnormals, default saturate)
# `none` formats always saturate, so their default saturation is True; the others
# default to not saturating (SPEC §4).
PRESET_TABLE = {
    "e4m3":      (8, True, 4, 3, 7, "fn", "ieee", False),
    "e5m2":      (8, True, 5, 2, 15, "ieee", "ieee", False),
    "e4m3fnuz":  (8, True, 4, 3, 8, "fnuz", "ieee", False),
    "e5m2fnuz":  (8, True, 5, 2, 16, "fnuz", "ieee", False),
    "uhp":       (16, False, 6, 10, 31, "ieee", "flush", False),
    "hfp8_143":  (8, True, 4, 3, 4, "none", "ieee", True),
    "hfp8_152":  (8, True, 5, 2, 15, "ieee", "ieee", False),
    "hfp16_169": (16, True, 6, 9, 31, "ieee", "ieee", False),
    "float16":   (16, True, 5, 10, 15, "ieee", "ieee", False),
    "bfloat16":  (16, True, 8, 7, 127, "ieee", "ieee", False),
    # ml_dtypes' other 8-bit formats (from its documentation; non-saturating as ml_dtypes)
    "float8_e4m3":        (8, True, 4, 3, 7, "ieee", "ieee", False),
    "float8_e3m4":        (8, True, 3, 4, 3, "ieee", "ieee", False),
    "float8_e4m3b11fnuz": (8, True, 4, 3, 11, "fnuz", "ieee", False),
    # OCP MX v1.0 (ml_dtypes' names): FP4 / FP6 elements, finite only and saturating
    "float4_e2m1fn": (4, True, 2, 1, 1, "none", "ieee", True),
    "float6_e2m3fn": (6, True, 2, 3, 1, "none", "ieee", True),
    "float6_e3m2fn": (6, True, 3, 2, 3, "none", "ieee", True),
    # the MX scale E8M0: unsigned, 2^(code-127), 0xFF NaN, no zero
    "float8_e8m0fnu": (8, False, 8, 0, 127, "fn", "nozero", False),
    # NVFP4's scale: E4M3 without its sign bit (7 bits; 0x7F NaN)
    "ue4m3": (7, False, 4, 3, 7, "fn", "ieee", False),
}
# Tesla families: (bits, signed, exp_bits, man_bits, specials, default saturate); bias 0..63
FAMILY_TABLE = {
    "cfloat8_143": (8, True, 4, 3, "none", True),
    "cfloat8_152": (8, True, 5, 2, "none", True),
    "shp":         (16, True, 5, 10, "none", True),
}
# Max finite column of SPEC §2 (exact), for the self-check of the table.
SPEC_MAX = {
    "e4m3": Fraction(448),
    "e5m2": Fraction(57344),
    "e4m3fnuz": Fraction(240),
    "e5m2fnuz": Fraction(57344),
    "uhp": (2 - Fraction(1, 2 ** 10)) * 2 ** 31,
    "hfp8_143": Fraction(3840),
    "hfp8_152": Fraction(57344),
    "hfp16_169": (2 - Fraction(1, 2 ** 9)) * 2 ** 31,
    "float16": Fraction(65504),
    "bfloat16": (2 - Fraction(1, 2 ** 7)) * Fraction(2) ** 127,
    "float8_e4m3": Fraction(240),
    "float8_e3m4": Fraction(31, 2),
    "float8_e4m3b11fnuz": Fraction(30),
    "float4_e2m1fn": Fraction(6),
    "float6_e2m3fn": Fraction(15, 2),
    "float6_e3m2fn": Fraction(28),
    "float8_e8m0fnu": Fraction(2) ** 127,
    "ue4m3": Fraction(448),
}
SPEC_FAMILY_MAX = {
    "cfloat8_143": lambda b: Fraction(15, 8) * Fraction(2) ** (15 - b),
    "cfloat8_152": lambda b: Fraction(7, 4) * Fraction(2) ** (31 - b),
    "shp": lambda b: (2 - Fraction(1, 2 ** 10)) * Fraction(2) ** (31 - b),
}

# NumPy's own partners for conversions (IEEE binary32/binary64).
FLOAT32 = Fmt("float32", 32, True, 8, 23, 127, "ieee", "ieee", False)
FLOAT64 = Fmt("float64", 64, True, 11, 52, 1023, "ieee", "ieee", False)
FLOAT32.origin = ("numpy", "float32")
FLOAT64.origin = ("numpy", "float64")

# 8-bit presets of the table: every one is covered exhaustively (tests check that
# softfp8's registry has no other 8-bit preset)
EIGHT_BIT_PRESETS = tuple(n for n, row in PRESET_TABLE.items() if row[0] == 8)


# 8-bit formats the comparison tests cover exhaustively.
def eight_bit_formats():
    return ([preset(n) for n in EIGHT_BIT_PRESETS]
            + [cfloat8_143(b) for b in (0, 7, 31, 63)]
            + [cfloat8_152(b) for b in (0, 7, 31, 63)]
            + [cfloat8_143(7, "ieee"), cfloat8_152(0, "ieee")])

_cache = {}


def preset(name):
    if name not in _cache:
        if name == "float32":
            return FLOAT32
        if name == "float64":
            return FLOAT64
        _cache[name] = Fmt(name, *PRESET_TABLE[name])
        _cache[name].origin = ("preset", name)
    return _cache[name]


def family(name, bias, subnormals="tesla"):
    if not isinstance(bias, int) or isinstance(bias, bool) or not 0 <= bias <= 63:
        raise ValueError("bias must be an int 0..63, got %r" % (bias,))
    if subnormals not in ("tesla", "ieee"):
        raise ValueError(subnormals)
    bits, signed, E, M, specials, sat = FAMILY_TABLE[name]
    full = "%s(bias=%d)" % (name, bias) if subnormals == "tesla" else \
        "%s(bias=%d, subnormals=ieee)" % (name, bias)
    if full not in _cache:
        _cache[full] = Fmt(full, bits, signed, E, M, bias, specials, subnormals, sat)
        _cache[full].origin = ("family", name, bias, subnormals)
    return _cache[full]


def cfloat8_143(bias, subnormals="tesla"):
    return family("cfloat8_143", bias, subnormals)


def cfloat8_152(bias, subnormals="tesla"):
    return family("cfloat8_152", bias, subnormals)


def shp(bias, subnormals="tesla"):
    return family("shp", bias, subnormals)


def make_format(exp_bits, man_bits, bias, specials="ieee", subnormals="ieee",
                signed=True, saturate=None, name=None):
    if saturate is None:
        saturate = specials == "none"
    bits = exp_bits + man_bits + (1 if signed else 0)
    return Fmt(name or "fmt(%d,%d,%d,%s,%s,%s)" % (exp_bits, man_bits, bias, specials,
                                                 subnormals, signed),
               bits, signed, exp_bits, man_bits, bias, specials, subnormals, saturate)


# --------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------

Decoded = namedtuple("Decoded", "kind sign value quiet subnormal")
# kind: 'zero' | 'finite' | 'inf' | 'nan'; value: Fraction (signed; 0 for zeros) or None;
# quiet: for NaNs (fn/fnuz NaNs count as quiet); subnormal: exponent field 0, mantissa != 0.


def _fields(fmt, code):
    if not 0 <= code < (1 << fmt.bits):
        raise ValueError("code %r out of range for %s" % (code, fmt.name))
    sign = 1 if (fmt.sign_bit and code & fmt.sign_bit) else 0
    mag = code & fmt.mag_mask
    return sign, mag >> fmt.man_bits, mag & ((1 << fmt.man_bits) - 1), mag


def _operand(fmt, code):
    """(kind, sign, n, e, signalling, subnormal) with kind in 'NIZF'; value n*2**e."""
    sign, ex, m, mag = _fields(fmt, code)
    M = fmt.man_bits
    sp = fmt.specials
    if sp == "ieee" and ex == (1 << fmt.exp_bits) - 1:
        if m == 0:
            return ("I", sign, 0, 0, False, False)
        return ("N", sign, 0, 0, not (m & fmt.qnan_bit), False)
    if sp == "fn" and mag == fmt.mag_mask:
        return ("N", sign, 0, 0, False, False)
    if sp == "fnuz" and code == fmt.sign_bit:
        return ("N", 0, 0, 0, False, False)
    if sp == "p3109":
        if code == fmt.nan_code:
            return ("N", 0, 0, 0, False, False)
        if mag == fmt.inf_code:
            return ("I", sign, 0, 0, False, False)
    if ex == 0 and fmt.subnormals != "nozero":
        if m == 0:
            return ("Z", sign, 0, 0, False, False)
        if fmt.subnormals == "flush":
            return ("Z", sign, 0, 0, False, True)
        if fmt.subnormals == "tesla":
            return ("F", sign, m, fmt.qmin - 1, False, True)
        return ("F", sign, m, fmt.qmin, False, True)
    return ("F", sign, (1 << M) | m, ex - fmt.bias - M, False, False)


def operands(fmt):
    """Cached operand tuples for every code of a format of at most 16 bits."""
    if fmt._ops is None:
        fmt._ops = [_operand(fmt, c) for c in range(1 << fmt.bits)]
    return fmt._ops


def _opnd(fmt, code):
    if fmt.bits <= 16:
        return operands(fmt)[code]
    return _operand(fmt, code)


def decode(fmt, code):
    kind, sign, n, e, snan, sub = _operand(fmt, code)
    if kind == "N":
        return Decoded("nan", sign, None, not snan, False)
    if kind == "I":
        return Decoded("inf", sign, None, None, False)
    if kind == "Z":
        return Decoded("zero", sign, Fraction(0), None, sub)
    v = Fraction(n) * Fraction(2) ** e
    return Decoded("finite", sign, -v if sign else v, None, sub)


def _code_value(fmt, code):
    d = decode(fmt, code)
    return d.value


def is_nan(fmt, code):
    return _opnd(fmt, code)[0] == "N"


def is_nan_array(fmt, codes):
    codes = np.asarray(codes).astype(np.int64)
    mag = codes & fmt.mag_mask
    if fmt.specials == "ieee":
        M = fmt.man_bits
        return ((mag >> M) == (1 << fmt.exp_bits) - 1) & ((mag & ((1 << M) - 1)) != 0)
    if fmt.specials == "fn":
        return mag == fmt.mag_mask
    if fmt.specials in ("fnuz", "p3109"):
        return codes == fmt.nan_code
    return np.zeros(codes.shape, bool)


def is_subnormal(fmt, code):
    return _opnd(fmt, code)[5]


# --------------------------------------------------------------------------
# Exact magnitudes
# --------------------------------------------------------------------------

def _dy(n, e):
    """Normalised dyadic magnitude key for n*2**e, n > 0."""
    tz = (n & -n).bit_length() - 1
    return ("d", n >> tz, e + tz)


def _rat(n, d, e):
    """Normalised n/d*2**e, n, d > 0."""
    g = gcd(n, d)
    if g != 1:
        n //= g
        d //= g
    tz = (n & -n).bit_length() - 1
    n >>= tz
    e += tz
    tz = (d & -d).bit_length() - 1
    d >>= tz
    e -= tz
    if d == 1:
        return ("d", n, e)
    return ("r", n, d, e)


def _sqrt_mag(n, e):
    """sqrt(n*2**e) for n > 0."""
    if e & 1:
        n <<= 1
        e -= 1
    h = e >> 1
    while n & 3 == 0:
        n >>= 2
        h += 1
    r = isqrt(n)
    if r * r == n:
        return _dy(r, h)
    return ("s", n, h)


def mag_from_fraction(x):
    """Magnitude key of a positive Fraction/int."""
    x = Fraction(x)
    if x <= 0:
        raise ValueError("positive value expected")
    return _rat(x.numerator, x.denominator, 0)


def mag_value(mag):
    """Exact value of a magnitude (Fraction; sqrt magnitudes are not rational -> error)."""
    if mag[0] == "d":
        return Fraction(mag[1]) * Fraction(2) ** mag[2]
    if mag[0] == "r":
        return Fraction(mag[1], mag[2]) * Fraction(2) ** mag[3]
    raise ValueError("irrational")


def _ilog2(mag):
    k = mag[0]
    if k == "d":
        return mag[1].bit_length() - 1 + mag[2]
    if k == "r":
        n, d, e = mag[1], mag[2], mag[3]
        t = n.bit_length() - d.bit_length()
        if t >= 0:
            ge = n >= (d << t)
        else:
            ge = (n << -t) >= d
        return (t if ge else t - 1) + e
    n, h = mag[1], mag[2]
    return ((n.bit_length() - 1) >> 1) + h


def _floor_scaled(mag, s):
    """(floor(mag * 2**s), exact?)."""
    k = mag[0]
    if k == "d":
        n, t = mag[1], mag[2] + s
        if t >= 0:
            return n << t, True
        return n >> -t, (n & ((1 << -t) - 1)) == 0
    if k == "r":
        n, d, t = mag[1], mag[2], mag[3] + s
        if t >= 0:
            n <<= t
        else:
            d <<= -t
        q, r = divmod(n, d)
        return q, r == 0
    n, t = mag[1], mag[2] + s
    if t >= 0:
        X = n << (2 * t)
        r = isqrt(X)
        return r, r * r == X
    sh = -2 * t
    X = n >> sh
    r = isqrt(X)
    return r, (X << sh) == n and r * r == X


# --------------------------------------------------------------------------
# Rounding (SPEC §1, §3, §4, §5)
# --------------------------------------------------------------------------
# analysis tuple A:
#  0 lo     code magnitude of the lower neighbour (unbounded exponent above)
#  1 hi     code magnitude of the upper neighbour
#  2 rel    -1/0/+1: value below/at/above the midpoint of the neighbours
#  3 exact  value == lower neighbour
#  4 lo_even  lower neighbour's code is even
#  5 fsn    floor(f * 2**32), f the fraction of the way from lo to hi
#  6 tiny_b value < smallest normal (tininess before rounding)
#  7 ub_top value in [2**(emin-1), 2**emin) and its unbounded-exponent rounding
#           may reach 2**emin (so tininess-after depends on the rounding)
#  8 rel_u, 9 exact_u, 10 lo_even_u, 11 fsn_u: same as 2..5 on the unbounded grid


def _relf(fr, ex):
    if fr > _HALF:
        return 1
    if fr == _HALF:
        return 0 if ex else 1
    return -1


def analyze(fmt, mag):
    M = fmt.man_bits
    emin = fmt.emin
    k = _ilog2(mag)
    tiny_b = k < emin
    nozero = fmt.subnormals == "nozero"
    if nozero and tiny_b:   # below the smallest value: delivered as it (_select)
        lo, hi, rel, exact, lo_even, fsn = 0, 0, 0, False, True, 0
    elif not tiny_b or fmt.subnormals == "ieee":
        q = (k if k >= emin else emin) - M
        F, ex = _floor_scaled(mag, _P - q)
        fr = F & _PMASK
        # binade emin starts at code magnitude 2^M (field 1), or 0 with no zero (field 0)
        lo = ((q - fmt.qmin) << M) + (F >> _P) - ((1 << M) if nozero else 0)
        hi = lo + 1
        rel = _relf(fr, ex)
        exact = fr == 0 and ex
        lo_even = not (lo & 1)
        fsn = fr >> (_P - 32)
    elif fmt.subnormals == "tesla":
        F, ex = _floor_scaled(mag, _P - (fmt.qmin - 1))
        I = F >> _P
        fr = F & _PMASK
        smax = (1 << M) - 1
        if I < smax or (I == smax and fr == 0 and ex):
            lo, hi = I, I + 1
            rel = _relf(fr, ex)
            exact = fr == 0 and ex
            lo_even = not (lo & 1)
            fsn = fr >> (_P - 32)
        else:
            # the Tesla gap: real neighbours (2**M-1)*u and 2**(M+1)*u, u = 2**(qmin-1)
            lo, hi = smax, 1 << M
            span = (1 << M) + 1
            d = F - (smax << _P)
            twice, lim = 2 * d, span << _P
            rel = 1 if twice > lim else (-1 if twice < lim else (0 if ex else 1))
            exact = d == 0 and ex
            lo_even = not (lo & 1)
            fsn = (d >> (_P - 32)) // span
    else:  # flush: handled by the tininess rule in _select
        lo, hi, rel, exact, lo_even, fsn = 0, 1 << M, 0, False, True, 0
    ub_top = False
    rel_u, exact_u, lo_even_u, fsn_u = 0, False, True, 0
    if k == emin - 1:
        F, ex = _floor_scaled(mag, _P - (k - M))
        if (F >> _P) == (1 << (M + 1)) - 1:
            ub_top = True
            fr = F & _PMASK
            rel_u = _relf(fr, ex)
            exact_u = fr == 0 and ex
            # the largest code of binade emin-1 (field 0, or -1 with no zero: odd)
            lo_even_u = not (((1 << M) - 1) & 1) if not nozero else False
            fsn_u = fr >> (_P - 32)
    return (lo, hi, rel, exact, lo_even, fsn, tiny_b, ub_top, rel_u, exact_u, lo_even_u, fsn_u)


def _decide(mode, sign, rel, exact, lo_even, fsn, R, N):
    """Round the magnitude up (to the upper neighbour)?"""
    if exact:
        return False
    if mode == "nearest_even":
        return rel > 0 or (rel == 0 and not lo_even)
    if mode == "nearest_away":
        return rel >= 0
    if mode == "toward_zero":
        return False
    if mode == "upward":
        return not sign
    if mode == "downward":
        return bool(sign)
    if mode == "to_odd":
        return lo_even
    if mode == "stochastic":
        if R is None:
            raise ValueError("stochastic rounding needs R")
        return (fsn >> (32 - N)) + (R & ((1 << N) - 1)) >= (1 << N)
    raise ValueError(mode)


def _to_inf(mode, sign):
    return (mode in ("nearest_even", "nearest_away", "stochastic")
            or (mode == "upward" and not sign) or (mode == "downward" and sign))


def _inf_code(fmt, sign):
    """Code delivered for an infinity in a non-saturating context."""
    s = fmt.sign_bit if sign else 0
    if fmt.specials in ("ieee", "p3109"):
        return s | fmt.inf_code
    if fmt.specials == "fn":
        return s | fmt.mag_mask          # the NaN stand-in keeps the sign
    if fmt.specials == "fnuz":
        return fmt.nan_code
    raise AssertionError("none formats always saturate")


def _sat(fmt, saturate):
    if fmt.specials == "none":
        return True
    return fmt.saturate if saturate is None else bool(saturate)


def _select(fmt, sign, A, mode, saturate, tininess, R=None, N=32):
    lo, hi, rel, exact, lo_even, fsn, tiny_b, ub_top, rel_u, exact_u, lo_even_u, fsn_u = A
    ovf = False
    if fmt.subnormals == "nozero":
        if sign and not fmt.signed:
            return fmt.nan_code, INVALID
        if tiny_b:
            tiny = tininess == "before" or not (
                ub_top and _decide(mode, sign, rel_u, exact_u, lo_even_u, fsn_u, R, N))
            return (fmt.sign_bit if sign else 0), INEXACT | (UNDERFLOW if tiny else 0)
    if fmt.subnormals == "flush" and tiny_b:
        if tininess == "after" and ub_top and _decide(mode, sign, rel_u, exact_u, lo_even_u,
                                                      fsn_u, R, N):
            mag, flags = fmt.min_normal_code, INEXACT
        else:
            mag, flags = 0, UNDERFLOW | INEXACT
    else:
        mag = hi if _decide(mode, sign, rel, exact, lo_even, fsn, R, N) else lo
        if mag > fmt.max_code:
            ovf = True
            flags = OVERFLOW | INEXACT
        elif exact:
            flags = 0
        else:
            tiny = tiny_b and (tininess == "before" or not (
                ub_top and _decide(mode, sign, rel_u, exact_u, lo_even_u, fsn_u, R, N)))
            flags = INEXACT | (UNDERFLOW if tiny else 0)
    if not fmt.signed and sign and (ovf or mag != 0):
        return fmt.nan_code, INVALID
    if ovf:
        if not _sat(fmt, saturate) and _to_inf(mode, sign):
            return _inf_code(fmt, sign), flags
        mag = fmt.max_code
    if mag == 0 and (fmt.specials in ("fnuz", "p3109") or not fmt.signed):
        return 0, flags
    return (fmt.sign_bit if sign else 0) | mag, flags


def _zero_result(fmt, sign):
    """(code, flags) of an exact zero result: none exists in a `nozero` format."""
    if fmt.subnormals == "nozero":
        return fmt.nan_code, INVALID
    return _zero(fmt, sign), 0


def _zero(fmt, sign):
    if sign and fmt.signed and fmt.specials not in ("fnuz", "p3109"):
        return fmt.sign_bit
    return 0


def _deliver_nan(fmt, code):
    if fmt.specials == "none":
        return fmt.max_code, INVALID           # NaN into a `none` format: +max, invalid
    if fmt.specials == "ieee" and fmt.signed and code is not None:
        return code, 0
    if fmt.specials == "fn" and code is not None:
        return code, 0
    return fmt.nan_code, 0


def deliver(fmt, desc, mode="nearest_even", saturate=None, tininess="after", R=None, N=32):
    """Round an exact result descriptor into fmt -> (code, flags raised by delivery)."""
    if mode not in ALL_MODES:
        raise ValueError(mode)
    if tininess not in TININESS:
        raise ValueError(tininess)
    kind = desc[0]
    if kind == "F":
        return _select(fmt, desc[1], analyze(fmt, desc[2]), mode, saturate, tininess, R, N)
    if kind == "Z":
        return _zero_result(fmt, desc[1])
    if kind == "C":
        return _zero_result(fmt, 1 if mode == "downward" else 0)
    if kind == "I":
        sign = desc[1]
        if not fmt.signed and sign:
            return fmt.nan_code, INVALID
        if _sat(fmt, saturate):
            return (fmt.sign_bit if sign else 0) | fmt.max_code, 0
        return _inf_code(fmt, sign), 0
    if kind == "N":
        return _deliver_nan(fmt, desc[1])
    raise ValueError(desc)


def round_pack(fmt, sign, exact_value, mode="nearest_even", saturate=None,
               tininess_before=False, R=None, N=32):
    """Round sign * |exact_value| (a Fraction/int; 0 gives a zero of that sign) into fmt."""
    v = Fraction(exact_value)
    if v < 0:
        sign, v = 1 - sign, -v
    tin = "before" if tininess_before else "after"
    if v == 0:
        return deliver(fmt, ("Z", sign), mode, saturate, tin, R, N)
    return deliver(fmt, ("F", sign, mag_from_fraction(v)), mode, saturate, tin, R, N)


# --------------------------------------------------------------------------
# Exact operations -> (descriptor, flags raised by the operation itself)
# --------------------------------------------------------------------------

_CANON = ("N", None, False)


def _nan_desc(fmt, *ops):
    """First NaN operand in operand order, propagated quieted; invalid if any is signalling."""
    flags = 0
    first = None
    for code, o in ops:
        if o[0] == "N":
            if o[4]:
                flags = INVALID
            if first is None:
                first = code
    if fmt.specials == "ieee" and fmt.signed:
        return ("N", first | fmt.qnan_bit, True), flags
    if fmt.specials == "fn":
        return ("N", first, True), flags
    return ("N", None, True), flags


def exact_add(fmt, a, b, negate_b=False):
    A = _opnd(fmt, a)
    B = _opnd(fmt, b)
    fl = DENORMAL if (A[5] or B[5]) else 0
    ka, kb = A[0], B[0]
    if ka == "N" or kb == "N":
        d, f = _nan_desc(fmt, (a, A), (b, B))
        return d, fl | f
    sa = A[1]
    sb = B[1] ^ 1 if negate_b else B[1]
    if ka == "I":
        if kb == "I" and sa != sb:
            return _CANON, fl | INVALID
        return ("I", sa), fl
    if kb == "I":
        return ("I", sb), fl
    return _sum2(sa, A[2], A[3], ka == "Z", sb, B[2], B[3], kb == "Z"), fl


def _sum2(s1, n1, e1, z1, s2, n2, e2, z2):
    """Exact (-1)^s1 n1 2^e1 + (-1)^s2 n2 2^e2 of two finite terms (z: the term is a
    zero of that sign); ("C",) is an exact cancellation (its zero's sign is the mode's)."""
    if z1:
        if z2:
            return ("Z", s1) if s1 == s2 else ("C",)
        return ("F", s2, _dy(n2, e2))
    if z2:
        return ("F", s1, _dy(n1, e1))
    e = e1 if e1 < e2 else e2
    v1 = n1 << (e1 - e)
    v2 = n2 << (e2 - e)
    s = (-v1 if s1 else v1) + (-v2 if s2 else v2)
    if s == 0:
        return ("C",)
    if s < 0:
        return ("F", 1, _dy(-s, e))
    return ("F", 0, _dy(s, e))


def exact_sub(fmt, a, b):
    return exact_add(fmt, a, b, negate_b=True)


def exact_mul(fmt, a, b):
    A = _opnd(fmt, a)
    B = _opnd(fmt, b)
    fl = DENORMAL if (A[5] or B[5]) else 0
    ka, kb = A[0], B[0]
    if ka == "N" or kb == "N":
        d, f = _nan_desc(fmt, (a, A), (b, B))
        return d, fl | f
    s = A[1] ^ B[1]
    if ka == "I" or kb == "I":
        if ka == "Z" or kb == "Z":
            return _CANON, fl | INVALID
        return ("I", s), fl
    if ka == "Z" or kb == "Z":
        return ("Z", s), fl
    return ("F", s, _dy(A[2] * B[2], A[3] + B[3])), fl


def exact_div(fmt, a, b):
    A = _opnd(fmt, a)
    B = _opnd(fmt, b)
    fl = DENORMAL if (A[5] or B[5]) else 0
    ka, kb = A[0], B[0]
    if ka == "N" or kb == "N":
        d, f = _nan_desc(fmt, (a, A), (b, B))
        return d, fl | f
    s = A[1] ^ B[1]
    if ka == "I":
        if kb == "I":
            return _CANON, fl | INVALID
        return ("I", s), fl
    if kb == "I":
        return ("Z", s), fl
    if kb == "Z":
        if ka == "Z":
            return _CANON, fl | INVALID
        return ("I", s), fl | DIVBYZERO
    if ka == "Z":
        return ("Z", s), fl
    return ("F", s, _rat(A[2], B[2], A[3] - B[3])), fl


def exact_sqrt(fmt, a):
    A = _opnd(fmt, a)
    fl = DENORMAL if A[5] else 0
    k = A[0]
    if k == "N":
        d, f = _nan_desc(fmt, (a, A))
        return d, fl | f
    if k == "Z":
        return ("Z", A[1]), fl
    if A[1]:
        return _CANON, fl | INVALID
    if k == "I":
        return ("I", 0), fl
    return ("F", 0, _sqrt_mag(A[2], A[3])), fl


def exact_fma(fmt, a, b, c):
    return _fma(fmt, a, _opnd(fmt, a), b, _opnd(fmt, b), c, _opnd(fmt, c))


def exact_fma_many(fmt, a, b, c):
    """[exact_fma(fmt, x, y, z) for x, y, z in zip(a, b, c)] for a format of at most 16
    bits (the operand tuples looked up once)."""
    ops = operands(fmt)
    return [_fma(fmt, x, ops[x], y, ops[y], z, ops[z]) for x, y, z in zip(a, b, c)]


def _fma(fmt, a, A, b, B, c, C):
    fl = DENORMAL if (A[5] or B[5] or C[5]) else 0
    ka, kb, kc = A[0], B[0], C[0]
    if (ka == "Z" and kb == "I") or (ka == "I" and kb == "Z"):
        # invalid even when c is a quiet NaN (IEEE 754-2019 leaves it open; we raise it)
        fl |= INVALID
        if kc == "N":
            d, f = _nan_desc(fmt, (c, C))
            return d, fl | f
        return _CANON, fl
    if ka == "N" or kb == "N" or kc == "N":
        d, f = _nan_desc(fmt, (a, A), (b, B), (c, C))
        return d, fl | f
    sp = A[1] ^ B[1]
    sc = C[1]
    if ka == "I" or kb == "I":
        if kc == "I" and sc != sp:
            return _CANON, fl | INVALID
        return ("I", sp), fl
    if kc == "I":
        return ("I", sc), fl
    pz = ka == "Z" or kb == "Z"
    return _sum2(sp, A[2] * B[2], A[3] + B[3], pz, sc, C[2], C[3], kc == "Z"), fl


def exact_convert(src, dst, a):
    A = _opnd(src, a)
    fl = DENORMAL if A[5] else 0
    k = A[0]
    if k == "N":
        return ("N", None, True), fl | (INVALID if A[4] else 0)
    if k == "I":
        return ("I", A[1]), fl
    if k == "Z":
        return ("Z", A[1]), fl
    return ("F", A[1], _dy(A[2], A[3])), fl


EXACT_OPS = {"add": exact_add, "sub": exact_sub, "mul": exact_mul, "div": exact_div,
             "sqrt": exact_sqrt, "fma": exact_fma}


def _run(fmt, dr, mode, saturate, tininess, R, N):
    desc, fl = dr
    code, f2 = deliver(fmt, desc, mode, saturate, tininess, R, N)
    return code, fl | f2


def add(fmt, a, b, mode="nearest_even", saturate=None, tininess="after", R=None, N=32):
    return _run(fmt, exact_add(fmt, a, b), mode, saturate, tininess, R, N)


def sub(fmt, a, b, mode="nearest_even", saturate=None, tininess="after", R=None, N=32):
    return _run(fmt, exact_sub(fmt, a, b), mode, saturate, tininess, R, N)


def mul(fmt, a, b, mode="nearest_even", saturate=None, tininess="after", R=None, N=32):
    return _run(fmt, exact_mul(fmt, a, b), mode, saturate, tininess, R, N)


def div(fmt, a, b, mode="nearest_even", saturate=None, tininess="after", R=None, N=32):
    return _run(fmt, exact_div(fmt, a, b), mode, saturate, tininess, R, N)


def fma(fmt, a, b, c, mode="nearest_even", saturate=None, tininess="after", R=None, N=32):
    return _run(fmt, exact_fma(fmt, a, b, c), mode, saturate, tininess, R, N)


def sqrt(fmt, a, mode="nearest_even", saturate=None, tininess="after", R=None, N=32):
    return _run(fmt, exact_sqrt(fmt, a), mode, saturate, tininess, R, N)


def convert(src, dst, a, mode="nearest_even", saturate=None, tininess="after", R=None, N=32):
    return _run(dst, exact_convert(src, dst, a), mode, saturate, tininess, R, N)


def result_is_class_only(fmt, desc):
    """NaN results caused by a NaN operand are compared by class (SPEC §5), except in
    formats whose every NaN is canonical (UHP, fnuz: single NaN)."""
    return desc[0] == "N" and desc[2] and fmt.signed and fmt.specials in ("ieee", "fn")


# --------------------------------------------------------------------------
# Vectorised delivery of many exact results
# --------------------------------------------------------------------------

def _decide_vec(mode, sign, rel, exact, lo_even, fsn, R, N):
    if mode == "nearest_even":
        up = (rel > 0) | ((rel == 0) & ~lo_even)
    elif mode == "nearest_away":
        up = rel >= 0
    elif mode == "toward_zero":
        up = np.zeros(rel.shape, bool)
    elif mode == "upward":
        up = ~sign
    elif mode == "downward":
        up = sign.copy()
    elif mode == "to_odd":
        up = lo_even.copy()
    elif mode == "stochastic":
        if R is None:
            raise ValueError("stochastic rounding needs R")
        Rm = np.asarray(R).astype(np.int64) & ((1 << N) - 1)
        up = ((fsn >> (32 - N)) + Rm) >= (1 << N)
    else:
        raise ValueError(mode)
    return up & ~exact


class Table:
    """Distinct exact results (descriptors) of one destination format.

    ``add(desc)`` returns an index; ``evaluate(idx, ...)`` delivers every indexed
    descriptor with one configuration, vectorised, and returns
    ``(codes int64, delivery flags uint8, class_only bool)``.
    """

    def __init__(self, fmt):
        self.fmt = fmt
        self.index = {}
        self.descs = []
        self._ready = False

    def add(self, desc):
        i = self.index.get(desc)
        if i is None:
            i = len(self.descs)
            self.index[desc] = i
            self.descs.append(desc)
            self._ready = False
        return i

    def _prepare(self):
        if self._ready:
            return
        fmt = self.fmt
        n = len(self.descs)
        cap = fmt.max_code + 1
        cols = [np.zeros(n, np.int64) for _ in range(12)]
        sign = np.zeros(n, bool)
        fin = np.zeros(n, bool)
        lists = [[0] * n for _ in range(12)]
        for i, d in enumerate(self.descs):
            if d[0] == "F":
                fin[i] = True
                sign[i] = bool(d[1])
                A = analyze(fmt, d[2])
                for j in range(12):
                    lists[j][i] = A[j]
        for j in (0, 1):
            lists[j] = [v if v < cap else cap for v in lists[j]]
        for j in range(12):
            cols[j] = np.array(lists[j], dtype=np.int64)
        self.lo, self.hi = cols[0], cols[1]
        self.rel = cols[2].astype(np.int8)
        self.exact = cols[3].astype(bool)
        self.lo_even = cols[4].astype(bool)
        self.fsn = cols[5]
        self.tiny_b = cols[6].astype(bool)
        self.ub_top = cols[7].astype(bool)
        self.rel_u = cols[8].astype(np.int8)
        self.exact_u = cols[9].astype(bool)
        self.lo_even_u = cols[10].astype(bool)
        self.fsn_u = cols[11]
        self.sign = sign
        self.fin = fin
        self.special_idx = np.nonzero(~fin)[0]
        self.class_only = np.array([result_is_class_only(fmt, d) for d in self.descs], bool) \
            if n else np.zeros(0, bool)
        self._ready = True

    def _finite(self, sel, mode, saturate, tininess, R, N):
        """Vectorised _select for the finite descriptors gathered by sel."""
        fmt = self.fmt
        sign = self.sign[sel]
        lo, hi = self.lo[sel], self.hi[sel]
        exact = self.exact[sel]
        tiny_b = self.tiny_b[sel]
        up = _decide_vec(mode, sign, self.rel[sel], exact, self.lo_even[sel],
                         self.fsn[sel], R, N)
        up_u = self.ub_top[sel] & _decide_vec(mode, sign, self.rel_u[sel], self.exact_u[sel],
                                              self.lo_even_u[sel], self.fsn_u[sel], R, N)
        mag = np.where(up, hi, lo)
        if tininess == "before":
            tiny = tiny_b
        else:
            tiny = tiny_b & ~up_u
        flags = np.where(exact, 0, INEXACT | np.where(tiny, UNDERFLOW, 0)).astype(np.int64)
        if fmt.subnormals == "nozero":   # below the smallest: the smallest (code 0)
            mag = np.where(tiny_b, 0, mag)
            flags = np.where(tiny_b, INEXACT | np.where(tiny, UNDERFLOW, 0), flags)
        if fmt.subnormals == "flush":
            fl_zero = tiny_b & tiny
            fl_norm = tiny_b & ~tiny
            mag = np.where(fl_zero, 0, np.where(fl_norm, fmt.min_normal_code, mag))
            flags = np.where(fl_zero, UNDERFLOW | INEXACT, np.where(fl_norm, INEXACT, flags))
        ovf = mag > fmt.max_code
        flags = np.where(ovf, OVERFLOW | INEXACT, flags)
        sbit = np.where(sign, fmt.sign_bit, 0)
        if _sat(fmt, saturate):
            mag = np.where(ovf, fmt.max_code, mag)
            code = sbit | mag
        else:
            if mode in ("nearest_even", "nearest_away", "stochastic"):
                to_inf = ovf
            elif mode == "upward":
                to_inf = ovf & ~sign
            elif mode == "downward":
                to_inf = ovf & sign
            else:
                to_inf = np.zeros(ovf.shape, bool)
            mag = np.where(ovf, fmt.max_code, mag)
            code = sbit | mag
            if to_inf.any():
                if fmt.specials in ("ieee", "p3109"):
                    infc = sbit | fmt.inf_code
                elif fmt.specials == "fn":
                    infc = sbit | fmt.mag_mask
                else:
                    infc = np.full(sbit.shape, fmt.nan_code)
                code = np.where(to_inf, infc, code)
        if fmt.specials in ("fnuz", "p3109") or not fmt.signed:
            code = np.where(mag == 0, 0, code)
        if not fmt.signed:
            neg = sign & ((mag != 0) | ovf | (fmt.subnormals == "nozero"))
            code = np.where(neg, fmt.nan_code, code)
            flags = np.where(neg, INVALID, flags)
        return code, flags.astype(np.uint8)

    def up_probability(self, idx):
        """P(stochastic rounding goes to the upper neighbour) = floor(f*2^32)/2^32
        (float64, for statistical checks only)."""
        self._prepare()
        idx = np.asarray(idx)
        return np.where(self.exact[idx], 0.0, self.fsn[idx] / 2.0 ** 32)

    def evaluate(self, idx=None, mode="nearest_even", saturate=None, tininess="after",
                 R=None, N=32):
        if mode not in ALL_MODES or tininess not in TININESS:
            raise ValueError((mode, tininess))
        if not 1 <= N <= 32:
            raise ValueError(N)
        self._prepare()
        n = len(self.descs)
        if idx is None:
            idx = np.arange(n)
        idx = np.asarray(idx)
        sp_code = np.zeros(n, np.int64)
        sp_flag = np.zeros(n, np.uint8)
        for i in self.special_idx:
            c, f = deliver(self.fmt, self.descs[i], mode, saturate, tininess)
            sp_code[i] = c
            sp_flag[i] = f
        if R is None:
            code, flags = self._finite(np.arange(n), mode, saturate, tininess, None, N)
            code = np.where(self.fin, code, sp_code)
            flags = np.where(self.fin, flags, sp_flag)
            return code[idx], flags[idx], self.class_only[idx]
        R = np.broadcast_to(np.asarray(R), idx.shape).ravel()
        flat = idx.ravel()
        code, flags = self._finite(flat, mode, saturate, tininess, R, N)
        fin = self.fin[flat]
        code = np.where(fin, code, sp_code[flat]).reshape(idx.shape)
        flags = np.where(fin, flags, sp_flag[flat]).reshape(idx.shape)
        return code, flags, self.class_only[idx]


def build_table(fmt, descs_flags, table=None):
    """descs_flags: iterable of (desc, op_flags) -> (table, idx int64 array, op flags uint8)."""
    t = table if table is not None else Table(fmt)
    idx = []
    fl = []
    tadd = t.add
    for d, f in descs_flags:
        idx.append(tadd(d))
        fl.append(f)
    return t, np.array(idx, dtype=np.int64), np.array(fl, dtype=np.uint8)


# --------------------------------------------------------------------------
# Helpers for the comparison tests (no softfp8 import here: the module is passed in)
# --------------------------------------------------------------------------

def to_softfp8(sf, fmt):
    """The softfp8 object (Format or NumPy float type) for a reference format."""
    o = fmt.origin
    if o[0] == "preset":
        return getattr(sf, o[1])
    if o[0] == "family":
        return getattr(sf, o[1])(bias=o[2], subnormals=o[3])
    if o[0] == "numpy":
        return {"float32": np.float32, "float64": np.float64}[o[1]]
    raise ValueError(fmt)


def flag_names(f):
    names = [(INEXACT, "NX"), (UNDERFLOW, "UF"), (OVERFLOW, "OF"), (DIVBYZERO, "DZ"),
             (INVALID, "NV"), (DENORMAL, "DN")]
    return "|".join(n for b, n in names if f & b) or "0"


def describe(fmt, code):
    d = decode(fmt, int(code))
    w = (fmt.bits + 3) // 4
    if d.kind == "nan":
        v = ("sNaN" if not d.quiet else "NaN")
    elif d.kind == "inf":
        v = "-inf" if d.sign else "+inf"
    elif d.kind == "zero":
        v = "-0" if d.sign else "+0"
        if d.subnormal:
            v += "(flushed subnormal)"
    else:
        v = str(d.value)
    return "0x%0*X(%s)" % (w, int(code), v)


def compare(fmt, got_codes, got_flags, exp_codes, exp_flags, class_only):
    """Indices (flat) where softfp8 differs from the reference.

    Codes are compared exactly, except NaN results caused by a NaN operand
    (class_only), which only need to be NaN."""
    g = np.asarray(got_codes).astype(np.int64).ravel()
    e = np.asarray(exp_codes).astype(np.int64).ravel()
    gf = np.asarray(got_flags).astype(np.int64).ravel()
    ef = np.asarray(exp_flags).astype(np.int64).ravel()
    co = np.broadcast_to(np.asarray(class_only, bool), e.shape).ravel()
    code_ok = np.where(co, is_nan_array(fmt, g), g == e)
    return np.nonzero(~(code_ok & (gf == ef)))[0]
