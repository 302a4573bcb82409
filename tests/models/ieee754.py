"""Reference of the IEEE 754-2019 and IEEE P3109 (Interim Report v4.0) operations
that are not elementary functions: written from the standards' text (clause
numbers below), never from softfp8's C code; it never imports softfp8.

It uses ``tests.models.rational`` for the format parameters and the exact decoding
of codes, and ``tests.models.mpref`` for the vectorised rounding of exact results
into a format (``mpref.deliver``, itself proven against rational.py's rounding).

Every function returns, for arrays of operand codes, either expected codes and
flags directly (operations whose result is an operand or a special value), or
``mpref.Records`` of the exact results, rounded by ``mpref.deliver`` in any
configuration.

Value order: each code of a format gets an integer ``rank`` increasing with its
value (both zeros share one rank, -inf and +inf are the extremes, NaN gets none),
computed once per format from the exact values; comparisons of pairs are then
vectorised comparisons of ranks.
"""
from __future__ import annotations

from fractions import Fraction
import math

import numpy as np

from . import mpref as mp
from . import rational as R

INEXACT, UNDERFLOW, OVERFLOW = R.INEXACT, R.UNDERFLOW, R.OVERFLOW
DIVBYZERO, INVALID, DENORMAL = R.DIVBYZERO, R.INVALID, R.DENORMAL
I64_MAX, I64_MIN = 2 ** 63 - 1, -2 ** 63


class Codes:
    """Per-code facts of a format, computed once (numpy arrays over all codes)."""

    _cache = {}

    def __new__(cls, fmt):
        hit = cls._cache.get(fmt)
        if hit is None:
            hit = super().__new__(cls)
            hit._build(fmt)
            cls._cache[fmt] = hit
        return hit

    def _build(self, fmt):
        ops = R.operands(fmt)
        n = len(ops)
        self.fmt = fmt
        self.kind = np.array([o[0] for o in ops])
        self.sign = np.array([o[1] for o in ops], bool)
        self.snan = np.array([o[4] for o in ops], bool)
        self.sub = np.array([o[5] for o in ops], bool)
        self.nan = self.kind == "N"
        self.inf = self.kind == "I"
        self.zero = self.kind == "Z"
        self.value = [None] * n                 # Fraction for Z/F, None else
        self.ival = [None] * n                  # (signed integer m, e): value m * 2**e
        for c, (k, s, m, e, _, _) in enumerate(ops):
            if k in "ZF":
                v = Fraction(m) * Fraction(2) ** e if k == "F" else Fraction(0)
                self.value[c] = -v if s else v
                self.ival[c] = ((-m if s else m), e) if k == "F" else (0, 0)
        vals = sorted({v for v in self.value if v is not None})
        pos = {v: i + 1 for i, v in enumerate(vals)}
        big = len(vals) + 1
        rank = np.zeros(n, np.int64)
        absrank = np.zeros(n, np.int64)
        avals = sorted({abs(v) for v in vals})
        apos = {v: i for i, v in enumerate(avals)}
        for c in range(n):
            if self.value[c] is not None:
                rank[c] = pos[self.value[c]]
                absrank[c] = apos[abs(self.value[c])]
            elif self.inf[c]:
                rank[c] = -big if self.sign[c] else big
                absrank[c] = len(avals)
        self.rank, self.absrank = rank, absrank
        # the canonical code of each value (a zero: by sign), the operand itself otherwise
        self.canon = np.arange(n, dtype=np.int64)
        for c in np.nonzero(self.zero)[0]:
            self.canon[c] = R._zero(fmt, 1 if self.sign[c] else 0)
        self.code_of = {}                        # exact value -> a code holding it
        for c in range(n):
            v = self.value[c]
            if v is not None and v not in self.code_of and not self.sub[c] | (self.zero[c] and self.sign[c]):
                self.code_of[v] = c
        if fmt.subnormals != "flush":
            for c in range(n):
                v = self.value[c]
                if v is not None and v not in self.code_of:
                    self.code_of[v] = c
        self.neg_zero_ok = fmt.signed and fmt.specials not in ("fnuz", "p3109")

    def zero_code(self, sign):
        return R._zero(self.fmt, 1 if sign else 0)

    def nan_result(self, *codes):
        """(code, flags, class_only) arrays for NaN propagation from operand arrays
        (the first NaN operand; invalid if any is signalling): a quiet NaN, compared
        by class."""
        fmt = self.fmt
        shape = np.broadcast(*codes).shape
        fl = np.zeros(shape, np.int64)
        for c in codes:
            fl |= np.where(self.snan[c], INVALID, 0)
        code = np.full(shape, fmt.nan_code if fmt.nan_code is not None else fmt.max_code, np.int64)
        if fmt.specials == "none":
            fl |= INVALID
        return code, fl


def denormal(cx, *codes):
    return np.bitwise_or.reduce([np.where(cx.sub[c], DENORMAL, 0) for c in codes], axis=0)


def any_nan(cx, *codes):
    return np.logical_or.reduce([cx.nan[c] for c in codes], axis=0)


# ----------------------------------------------------------------------------
# exact results as mpref records
# ----------------------------------------------------------------------------

def record_of(v, opflags=0):
    """mpref record of an exact Fraction v (a zero: +0)."""
    if v == 0:
        return ("Z", 0, 0, 0, False, opflags, False)
    s = 1 if v < 0 else 0
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    scaled = a * Fraction(2) ** (63 - e)
    sig = scaled.numerator // scaled.denominator
    return ("F", s, sig, e, sig * scaled.denominator != scaled.numerator, opflags, False)


def record_of_int(m, e, opflags=0):
    """mpref record of the exact value m * 2**e (m a non-zero int)."""
    s = 1 if m < 0 else 0
    a = -m if s else m
    bl = a.bit_length()
    if bl <= 64:
        return ("F", s, a << (64 - bl), e + bl - 1, False, opflags, False)
    sh = bl - 64
    return ("F", s, a >> sh, e + bl - 1, a & ((1 << sh) - 1) != 0, opflags, False)


def int_sum(terms):
    """The exact sum of values (m, e) as (m, e)."""
    e0 = min(e for m, e in terms)
    return sum(m << (e - e0) for m, e in terms), e0


def zero_record(sign, opflags=0):
    return ("Z", 1 if sign else 0, 0, 0, False, opflags, False)


def inf_record(sign, opflags=0):
    return ("I", 1 if sign else 0, 0, 0, False, opflags, False)


def nan_record(opflags=0, from_nan=False):
    return ("N", 0, 0, 0, False, opflags, from_nan)


def records(rows):
    c = list(zip(*rows)) if rows else [[]] * 7
    return mp.Records(np.array(c[0], dtype="U1"), np.array(c[1], dtype=bool),
                      np.array(c[2], dtype=np.uint64), np.array(c[3], dtype=np.int64),
                      np.array(c[4], dtype=bool), np.array(c[5], dtype=np.uint8),
                      np.array(c[6], dtype=bool))


# ----------------------------------------------------------------------------
# 5.3.1 nextUp / nextDown, P3109 4.16 NextGreaterThan / NextLessThan
# ----------------------------------------------------------------------------

def neighbour(fmt, codes, up, p3109=False):
    """Expected (codes, flags, class_only): the least value above (greatest below)
    the operand in the format's value set; IEEE: nextUp(+inf) = +inf; P3109: NaN
    beyond an infinity; no value at all: NaN with invalid (no NaN: the operand)."""
    cx = Codes(fmt)
    codes = np.asarray(codes, np.int64)
    ranks = sorted({int(r) for c, r in enumerate(cx.rank) if not cx.nan[c]})
    where = {r: i for i, r in enumerate(ranks)}
    zero_rank = next((int(cx.rank[c]) for c in range(len(cx.rank)) if cx.zero[c]), None)
    rep = {}                                  # rank -> the one code of that non-zero value
    for c in range(len(cx.rank)):
        if not cx.nan[c] and not cx.zero[c]:
            rep.setdefault(int(cx.rank[c]), c)
    out = np.zeros(codes.shape, np.int64)
    fl = denormal(cx, codes).astype(np.int64)
    cls = np.zeros(codes.shape, bool)
    for i, c in enumerate(codes.tolist()):
        if cx.nan[c]:
            nc, f = cx.nan_result(np.array([c]))
            out[i] = nc[0]
            fl[i] |= f[0]
            cls[i] = True
            continue
        r = int(cx.rank[c])
        if cx.inf[c] and (cx.sign[c] != up):       # moving beyond an infinity
            if p3109:
                out[i], fl[i] = fmt.nan_code, fl[i] | INVALID
            else:
                out[i] = c
            continue
        j = where[r] + (1 if up else -1)
        if not 0 <= j < len(ranks):                # beyond the finite range, no infinity
            if fmt.specials == "none":
                out[i] = c
            else:
                out[i], fl[i] = fmt.nan_code, fl[i] | INVALID
            continue
        nr = ranks[j]
        if nr == zero_rank:                        # a zero: the operand's sign
            out[i] = cx.zero_code(cx.sign[c] and cx.neg_zero_ok)
        else:
            out[i] = rep[nr]
    return out, fl, cls


# ----------------------------------------------------------------------------
# 5.3.1 remainder, 5.3.3 logB, 5.3.1 roundToIntegralTiesToEven / TiesToAway
# ----------------------------------------------------------------------------

def _round_half(q, away):
    """The integer nearest the Fraction q, ties to even or away from zero."""
    fl = math.floor(q)
    d = q - fl
    if d > Fraction(1, 2) or (d == Fraction(1, 2) and (away and q > 0 or not away and fl % 2)):
        return fl + 1
    if d == Fraction(1, 2) and away and q < 0:
        return fl
    return fl


def ieee_remainder(fmt, a, b):
    """Records of a - b*n, n the integer nearest a/b, ties to even (IEEE 754-2019
    5.3.1): remainder(x, +-inf) = x; remainder(inf, y), remainder(x, 0): invalid;
    a zero result has the sign of x."""
    cx = Codes(fmt)
    rows = []
    for x, y in zip(np.asarray(a).tolist(), np.asarray(b).tolist()):
        df = (DENORMAL if cx.sub[x] or cx.sub[y] else 0)
        if cx.nan[x] or cx.nan[y]:
            rows.append(nan_record(df | (INVALID if cx.snan[x] or cx.snan[y] else 0), True))
        elif cx.inf[x] or cx.zero[y]:
            rows.append(nan_record(df | INVALID))
        elif cx.zero[x]:
            rows.append(zero_record(cx.sign[x], df))
        elif cx.inf[y]:
            rows.append(record_of(cx.value[x], df))
        else:
            (mx, ex), (my, ey) = cx.ival[x], cx.ival[y]
            e0 = min(ex, ey)
            X, Y = abs(mx) << (ex - e0), abs(my) << (ey - e0)
            q, m = divmod(X, Y)                  # |x| = q |y| + m
            if 2 * m > Y or (2 * m == Y and q & 1):
                m -= Y                           # n rounds |x| / |y| up
            r = -m if mx < 0 else m
            rows.append(record_of_int(r, e0, df) if r else zero_record(cx.sign[x], df))
    return records(rows)


def logb(fmt, a):
    """Records of floor(log2|x|) (IEEE 754-2019 5.3.3, logBFormat = the format):
    logB(+-0) = -inf with divideByZero, logB(+-inf) = +inf."""
    cx = Codes(fmt)
    rows = []
    for x in np.asarray(a).tolist():
        df = DENORMAL if cx.sub[x] else 0
        if cx.nan[x]:
            rows.append(nan_record(df | (INVALID if cx.snan[x] else 0), True))
        elif cx.inf[x]:
            rows.append(inf_record(0, df))
        elif cx.zero[x]:
            rows.append(inf_record(1, df | DIVBYZERO))
        else:
            v = abs(cx.value[x])
            e = v.numerator.bit_length() - v.denominator.bit_length()
            if Fraction(2) ** e > v:
                e -= 1
            rows.append(record_of(Fraction(e), df))
    return records(rows)


def round_integral(fmt, a, away):
    """Records of roundToIntegralTiesToEven / TiesToAway (5.3.1, 5.9): the
    integral value nearest x with x's sign; these operations signal no inexact
    (5.9), so the records carry the value exactly (flags: see the test)."""
    cx = Codes(fmt)
    rows = []
    for x in np.asarray(a).tolist():
        df = DENORMAL if cx.sub[x] else 0
        if cx.nan[x]:
            rows.append(nan_record(df | (INVALID if cx.snan[x] else 0), True))
        elif cx.inf[x]:
            rows.append(inf_record(cx.sign[x], df))
        elif cx.zero[x]:
            rows.append(zero_record(cx.sign[x], df))
        else:
            k = _round_half(cx.value[x], away)
            rows.append(record_of(Fraction(k), df) if k else zero_record(cx.sign[x], df))
    return records(rows)


# ----------------------------------------------------------------------------
# 5.8 convertToInteger, 5.7.2 class and predicates, 5.10 totalOrder
# ----------------------------------------------------------------------------

_DIRS = {"ties_even": lambda q: _round_half(q, False), "ties_away": lambda q: _round_half(q, True),
         "toward_zero": lambda q: math.trunc(q), "upward": math.ceil, "downward": math.floor}


def to_integer(fmt, a, direction, exact):
    """Expected (int64 values, flags): the integer of the direction; NaN: INT64_MAX,
    +-inf and values beyond int64: INT64_MAX / INT64_MIN, all with invalid only
    (softfp8's int64 conventions, docs/semantics.md); Exact variants raise inexact
    when the value changed (5.8)."""
    cx = Codes(fmt)
    rnd = _DIRS[direction]
    out, fl = [], []
    for x in np.asarray(a).tolist():
        df = DENORMAL if cx.sub[x] else 0
        if cx.nan[x]:
            out.append(I64_MAX)
            fl.append(df | INVALID)
            continue
        if cx.inf[x]:
            out.append(I64_MIN if cx.sign[x] else I64_MAX)
            fl.append(df | INVALID)
            continue
        v = cx.value[x]
        k = rnd(v)
        if not I64_MIN <= k <= I64_MAX:
            out.append(I64_MIN if v < 0 else I64_MAX)
            fl.append(df | INVALID)
            continue
        out.append(k)
        fl.append(df | (INEXACT if exact and k != v else 0))
    return np.array(out, np.int64), np.array(fl, np.int64)


# IEEE 754-2019 5.7.2 class, in the standard's order
CLASSES = ("signalingNaN", "quietNaN", "negativeInfinity", "negativeNormal", "negativeSubnormal",
           "negativeZero", "positiveZero", "positiveSubnormal", "positiveNormal", "positiveInfinity")


def ieee_class(fmt, a):
    """class (5.7.2) of each code's encoding: a flushed subnormal code is a
    subnormal encoding; a NaN with no sign of its own is positive."""
    cx = Codes(fmt)
    a = np.asarray(a, np.int64)
    out = []
    for c in a.tolist():
        if cx.nan[c]:
            out.append(CLASSES.index("signalingNaN" if cx.snan[c] else "quietNaN"))
            continue
        neg = bool(cx.sign[c])
        if cx.inf[c]:
            name = "Infinity"
        elif cx.sub[c]:
            name = "Subnormal"
        elif cx.zero[c]:
            name = "Zero"
        else:
            name = "Normal"
        out.append(CLASSES.index(("negative" if neg else "positive") + name))
    return np.array(out, np.int64)


def total_order_key(fmt, code):
    """A sort key of IEEE's totalOrder (5.10): -NaN < -inf < numbers < +inf < +NaN;
    -0 < +0; positive: signalling NaNs below quiet ones (negative: above), then by
    payload; encodings of one value (a flushing format's subnormal codes and its
    zero): by encoding, away from the zero of their sign (implementation-defined)."""
    cx = Codes(fmt)
    k, s, m, e, snan, sub = R.operands(fmt)[code]
    sign = 1 if s and fmt.specials not in ("fnuz", "p3109") else 0
    if k == "N":
        pay = code & ((1 << fmt.man_bits) - 1) if fmt.specials == "ieee" else 0
        key = (3, 0 if snan else 1, pay)
        return (-key[0], -key[1], -key[2]) if sign else key
    if k == "I":
        return (-2, 0, 0) if sign else (2, 0, 0)
    v = cx.value[code]
    enc = code & fmt.mag_mask
    if v == 0:          # zeros (and a flushing format's subnormal codes): -0 < +0, by encoding
        return (0, v, -(enc + 1) if sign else enc + 1)
    return (0, v, 0)


def total_order(fmt, a, b, mag=False):
    cx = Codes(fmt)
    keys = {}

    def key(c):
        if c not in keys:
            if mag:
                k, s, m, e, snan, sub = R.operands(fmt)[c]
                cc = c & ~fmt.sign_bit if fmt.signed and not (k == "N" and fmt.specials in ("fnuz", "p3109")) else c
                keys[c] = total_order_key(fmt, cc)
            else:
                keys[c] = total_order_key(fmt, c)
        return keys[c]
    del cx
    return np.array([key(x) <= key(y) for x, y in zip(np.asarray(a).tolist(), np.asarray(b).tolist())])


def total_order_p3109(fmt, a, b):
    """P3109 4.12.1: TotalOrder(NaN, x) = True, TotalOrder(x, NaN) = False,
    else CompareLessEqual."""
    cx = Codes(fmt)
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    return np.where(cx.nan[a], True, np.where(cx.nan[b], False, cx.rank[a] <= cx.rank[b]))


# ----------------------------------------------------------------------------
# 9.6 minimum / maximum (magnitude) and P3109 4.11 MinimumFinite, Clamp
# ----------------------------------------------------------------------------

def _signed_le(cx, x, y):
    """x <= y with -0 < +0 (9.6)."""
    rx, ry = cx.rank[x], cx.rank[y]
    zs = (rx == ry) & cx.zero[x] & cx.zero[y]
    return np.where(zs, cx.sign[x] | ~cx.sign[y], rx <= ry)


def selection(fmt, a, b, which):
    """Expected (codes, flags, class_only) of minmag / maxmag / minmagnum /
    maxmagnum (IEEE 754-2019 9.6) and min_finite / max_finite (P3109 4.11.3): the
    chosen operand (a flushed subnormal is delivered as the zero it reads as)."""
    cx = Codes(fmt)
    a, b = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(b, np.int64))
    want_max = which.startswith("max")
    number = which.endswith("num") or which.endswith("finite")
    le = _signed_le(cx, a, b)
    pick_a = le if not want_max else _signed_le(cx, b, a)
    if "mag" in which:
        ma, mb = cx.absrank[a], cx.absrank[b]
        pick_a = np.where(ma < mb, not want_max, np.where(ma > mb, want_max, pick_a))
    if which.endswith("finite"):
        pick_a = np.where(cx.inf[a] & ~cx.inf[b], False, np.where(cx.inf[b] & ~cx.inf[a], True, pick_a))
    code = np.where(pick_a, cx.canon[a], cx.canon[b])
    fl = denormal(cx, a, b).astype(np.int64)
    nan_a, nan_b = cx.nan[a], cx.nan[b]
    ncode, nfl = cx.nan_result(a, b)
    cls = np.zeros(a.shape, bool)
    if number:
        one = nan_a ^ nan_b
        code = np.where(one, np.where(nan_a, cx.canon[b], cx.canon[a]), code)
        fl |= np.where(one & (cx.snan[a] | cx.snan[b]), INVALID, 0)
        both = nan_a & nan_b
    else:
        both = nan_a | nan_b
    code = np.where(both, ncode, code)
    fl |= np.where(both, nfl, 0)
    cls |= both
    return code, fl, cls


def clamp(fmt, x, lo, hi):
    """P3109 4.11.4: NaN operands give NaN; lo > hi: NaN (softfp8: invalid); else
    lo if x <= lo, hi if x >= hi, else x."""
    cx = Codes(fmt)
    x, lo, hi = np.broadcast_arrays(*(np.asarray(v, np.int64) for v in (x, lo, hi)))
    rx, rl, rh = cx.rank[x], cx.rank[lo], cx.rank[hi]
    code = np.where(rx <= rl, cx.canon[lo], np.where(rx >= rh, cx.canon[hi], cx.canon[x]))
    fl = denormal(cx, x, lo, hi).astype(np.int64)
    bad = rl > rh
    code = np.where(bad, fmt.nan_code if fmt.nan_code is not None else fmt.max_code, code)
    fl |= np.where(bad, INVALID, 0)
    nan = any_nan(cx, x, lo, hi)
    ncode, nfl = cx.nan_result(x, lo, hi)
    code = np.where(nan, ncode, code)
    fl = np.where(nan, denormal(cx, x, lo, hi) | nfl, fl)
    return code, fl, nan


# ----------------------------------------------------------------------------
# P3109 4.10.7 FAA; IEEE 754-2019 9.5 augmented operations
# ----------------------------------------------------------------------------

def faa(fmt, a, b, c):
    """Records of x + y + z (P3109 4.10.7): NaN operands; +inf and -inf: invalid;
    an infinity otherwise; else the exact sum; an exact zero: the zero of the
    operands when all three are zeros of one sign, else kind "C" (the sign of a
    cancellation, 6.3: -0 rounding downward)."""
    cx = Codes(fmt)
    rows = []
    for x, y, z in zip(*(np.asarray(v).tolist() for v in (a, b, c))):
        t = (x, y, z)
        df = DENORMAL if any(cx.sub[v] for v in t) else 0
        if any(cx.nan[v] for v in t):
            rows.append(nan_record(df | (INVALID if any(cx.snan[v] for v in t) else 0), True))
            continue
        infs = {bool(cx.sign[v]) for v in t if cx.inf[v]}
        if len(infs) == 2:
            rows.append(nan_record(df | INVALID))
        elif infs:
            rows.append(inf_record(infs.pop(), df))
        else:
            m, e = int_sum([cx.ival[v] for v in t])
            if m:
                rows.append(record_of_int(m, e, df))
            else:
                zs = {bool(cx.sign[v]) for v in t} if all(cx.zero[v] for v in t) else set()
                if len(zs) == 1:     # zeros of one sign: that zero (6.3)
                    rows.append(zero_record(zs.pop(), df))
                else:                # a cancellation or zeros of both signs: -0 only downward
                    rows.append(("C", 0, 0, 0, False, df, False))
    return rows


def ties_toward_zero(fmt, vals, saturate):
    """(codes, flags) of roundTiesTowardZero (IEEE 754-2019 4.3.1) of exact
    non-zero values [(m, e)]: the nearest value, at a tie the one toward zero.
    From the reference's rounding toward zero, to nearest even and to nearest away:
    nearest even and away differ only at ties; where they agree but differ from
    toward zero, a tie is an exact midpoint of the two neighbours."""
    cx = Codes(fmt)
    rec = records([record_of_int(m, e) for m, e in vals])
    tz, ftz, _ = mp.deliver(fmt, rec, "toward_zero", saturate)
    ne, fne, _ = mp.deliver(fmt, rec, "nearest_even", saturate)
    na, _, _ = mp.deliver(fmt, rec, "nearest_away", saturate)
    tie = ne != na
    for i in np.nonzero((ne == na) & ((ne != tz) | ((fne & OVERFLOW) != 0)))[0]:
        lo, hi = cx.ival[int(tz[i])], cx.ival[int(ne[i])]
        if lo is None:
            continue
        if hi is None or fne[i] & OVERFLOW:   # an overflow: the value after max on the unbounded grid
            if int(tz[i]) & fmt.mag_mask != fmt.max_code:
                continue
            mm, me = lo
            top = abs(mm).bit_length() - 1 + me
            hi = int_sum([(abs(mm), me), (1, top - fmt.man_bits)])
            hi = (-hi[0], hi[1]) if mm < 0 else hi
        m, e = vals[i]
        mid, em = int_sum([lo, hi])
        tie[i] = (m << (e - min(e, em - 1))) == (mid << (em - 1 - min(e, em - 1)))
    return np.where(tie, tz, ne), np.where(tie, ftz, fne)


def augmented(fmt, a, b, op):
    """Expected ((a0, a1), flags, class_only) of augmentedAddition /
    Subtraction / Multiplication (IEEE 754-2019 9.5): a0 = roundTiesTowardZero(x op
    y), a1 = roundTiesTowardZero((x op y) - a0); a0 infinite or NaN (overflow
    included), or x op y an exact zero: a1 = a0; a1 exact: the zero of a0's sign.
    Flags (softfp8's reading, docs/semantics.md): the operands' (denormal,
    invalid), overflow of a0, and those of a1's rounding.  Saturation: the
    format's default."""
    cx = Codes(fmt)
    sat = fmt.saturate or fmt.specials == "none"
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    n = a.size
    out0 = np.zeros(n, np.int64)
    out1 = np.zeros(n, np.int64)
    fls = np.zeros(n, np.int64)
    cls = np.zeros(n, bool)
    todo, vals = [], []
    nan_code = fmt.nan_code if fmt.nan_code is not None else fmt.max_code
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        df = DENORMAL if cx.sub[x] or cx.sub[y] else 0
        if cx.nan[x] or cx.nan[y]:
            code, f = cx.nan_result(np.array([x]), np.array([y]))
            out0[i] = out1[i] = code[0]
            fls[i] = df | int(f[0])
            cls[i] = True
            continue
        sx, sy = bool(cx.sign[x]), bool(cx.sign[y]) ^ (op == "sub")
        if cx.inf[x] or cx.inf[y]:
            if op == "mul":
                signs = None if cx.zero[x] or cx.zero[y] else {sx != sy}
            else:
                signs = ({sx} if cx.inf[x] else set()) | ({sy} if cx.inf[y] else set())
            if signs is None or len(signs) == 2:
                r, f = nan_code, INVALID
            else:
                r, f = R.deliver(fmt, ("I", int(signs.pop())), saturate=sat)
            out0[i] = out1[i] = r
            fls[i] = df | f
            continue
        (mx, ex), (my, ey) = cx.ival[x], cx.ival[y]
        if op == "mul":
            m, e = mx * my, ex + ey
            zsign = sx != sy
        else:
            m, e = int_sum([(mx, ex), (-my if op == "sub" else my, ey)])
            zsign = sx and sy and cx.zero[x] and cx.zero[y]
        if m == 0:
            r, f = R._zero_result(fmt, int(zsign))
            out0[i] = out1[i] = r
            fls[i] = df | f
            continue
        fls[i] = df
        todo.append(i)
        vals.append((m, e))
    if todo:
        r0, f0 = ties_toward_zero(fmt, vals, sat)
        todo2, vals2 = [], []
        for k, i in enumerate(todo):
            out0[i] = r0[k]
            d0 = cx.ival[int(r0[k])] if not (cx.nan[r0[k]] or cx.inf[r0[k]]) else None
            if d0 is None or f0[k] & OVERFLOW:
                out1[i] = r0[k]
                fls[i] |= int(f0[k]) & (OVERFLOW | INEXACT | INVALID)
                continue
            if cx.zero[r0[k]] and not f0[k] & INEXACT:
                out1[i] = r0[k]
                continue
            fls[i] |= int(f0[k]) & INVALID
            m, e = int_sum([vals[k], (-d0[0], d0[1])])
            if m == 0:
                neg = bool(cx.sign[r0[k]]) and cx.neg_zero_ok
                out1[i], f = R._zero_result(fmt, int(neg))
                fls[i] |= f
            else:
                todo2.append(i)
                vals2.append((m, e))
        if todo2:
            r1, f1 = ties_toward_zero(fmt, vals2, sat)
            out1[todo2] = r1
            fls[todo2] |= f1.astype(np.int64)
    return (out0, out1), fls, cls


# ----------------------------------------------------------------------------
# 9.7 NaN payloads
# ----------------------------------------------------------------------------

def payload_ops(fmt, a, op):
    """Expected (codes, flags, class_only) of getPayload / setPayload /
    setPayloadSignaling (9.7): in an IEEE-style format the payload is the trailing
    significand without the quiet bit; a format with one NaN per sign has the payload
    0 only and no signalling NaN, a format without NaN no payload at all.
    getPayload of a non-NaN is -1; setPayload of a value that is not a valid payload
    (a non-integer, negative, too large, or 0 for a signalling NaN) is +0 (the
    format's zero: a format without zero gives its NaN); quiet operations (no flags)."""
    cx = Codes(fmt)
    ieee = fmt.specials == "ieee"
    top = (1 << (fmt.man_bits - 1)) - 1 if ieee else 0
    zero = R._zero_result(fmt, 0)[0]
    out = []
    for x in np.asarray(a).tolist():
        if op == "get_payload":
            if cx.nan[x]:
                p = x & top
                out.append(R.round_pack(fmt, 0, p)[0] if p else zero)
            else:
                out.append(R.round_pack(fmt, 1, 1)[0])
            continue
        v = cx.value[x]
        ok = fmt.nan_code is not None and v is not None and v >= 0 and v.denominator == 1 and v <= top
        if ok and op == "set_payload_signaling" and (v == 0 or not ieee):
            ok = False
        if not ok:
            out.append(zero)
            continue
        if not ieee:
            out.append(fmt.nan_code)
            continue
        quiet = 0 if op == "set_payload_signaling" else fmt.qnan_bit
        out.append(fmt.inf_code | quiet | int(v))
    n = len(out)
    return np.array(out, np.int64), np.zeros(n, np.int64), np.zeros(n, bool)
