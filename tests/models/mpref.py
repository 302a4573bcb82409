"""MPFR reference for softfp8's correctly rounded elementary functions (SPEC §7).

Written from SPEC.md, C99 Annex F (F.9) and IEEE 754-2019 §9.2 only; it never
imports softfp8.  It uses ``tests.models.rational`` for the format parameters and
the exact decoding of codes, nothing else (its rounding is its own and is checked
against rational's exact rounding in tests/core/test_mpref.py).

Two layers
----------
1. The exact result of a function at the exact operand values, as a *record*
   ``(kind, sign, sig, exp, sticky, opflags, from_nan)``:

   * kind ``F``: finite non-zero; its magnitude truncated (rounded toward zero) to
     ``PREC`` = 64 significant bits is ``sig * 2**(exp - 63)`` (``2**63 <= sig <
     2**64``) and ``sticky`` tells whether the truncation discarded anything (the
     MPFR ternary value).  64 >= p + 34 for every format of at most 16 bits
     (p <= 17), so every rounding decision -- ties, to_odd, the 32 random-bit
     fraction of stochastic rounding, the Tesla gap and tininess after rounding --
     is exact.  Results beyond MPFR's own exponent range (|e| > 2**62) keep their
     truncated/sticky meaning: an overflow becomes MPFR's largest number (above
     every format), an underflow the smallest positive number with sticky set.
   * ``Z`` exact zero, ``I`` exact infinity (both with a sign), ``N`` NaN
     (``from_nan``: caused by a NaN operand, compared by class).
   * ``opflags``: invalid (domain error, signalling NaN operand), divbyzero (pole).

   Records are computed once per distinct operand value (or pair) and function and
   cached in memory for the session (never on disk) for the most recently used
   function; formats share most values.
2. ``deliver``: vectorised NumPy integer rounding of record arrays into a format in
   one configuration (mode, saturation, tininess, random bits), SPEC §3-§5.

Special values (the table is written out in ``_unary_special`` / ``_binary_*``):
C99 F.9 and IEEE 754-2019 §9.2.1.  Decisions where they leave room:
* A signalling NaN operand always gives a quiet NaN and invalid, also where a
  quiet NaN would not propagate (pow(sNaN, 0), pow(1, sNaN), hypot(inf, sNaN)):
  IEEE 754-2019 §9.2.1 states those exceptions for quiet NaNs only.
* pow(±0, -inf) = +inf without divbyzero (IEEE 754-2019 §9.2.1; C99 says "may").
* logaddexp / logaddexp2 (not in C99): the exact log(e^x + e^y) / log2(2^x + 2^y);
  +inf if either operand is +inf, -inf for (-inf, -inf), the other operand when
  one is -inf; an exact zero result is +0 (it is log(1), as C99's log(1) = +0):
  logaddexp(-0, -inf) = +0, logaddexp2(-1, -1) = +0.
* degrees(x) = x * 180 / pi and radians(x) = x * pi / 180 exactly (never exact for
  x != 0).
* The `denormal` flag is raised whenever an operand is subnormal (SPEC §5).
"""

from __future__ import annotations

import math

import gmpy2
import numpy as np
from gmpy2 import mpfr

from . import rational as R

INEXACT, UNDERFLOW, OVERFLOW = R.INEXACT, R.UNDERFLOW, R.OVERFLOW
DIVBYZERO, INVALID, DENORMAL = R.DIVBYZERO, R.INVALID, R.DENORMAL
MODES = R.ALL_MODES
PREC = 64

UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt",
         "sin", "cos", "tan", "arcsin", "arccos", "arctan",
         "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "degrees", "radians")
BINARY = ("arctan2", "power", "hypot", "logaddexp", "logaddexp2")
ALL = UNARY + BINARY
# core operations with an exact MPFR counterpart: they prove the harness on
# softfp8's existing sqrt and div (tests/core/test_mpref.py)
HARNESS_UNARY = ("sqrt",)
HARNESS_BINARY = ("div",)

_CTX = gmpy2.context(precision=PREC, round=gmpy2.RoundToZero,
                     emax=gmpy2.get_emax_max(), emin=gmpy2.get_emin_min(),
                     subnormalize=False)
_EMIN_TINY = -(1 << 40)    # exponent given to results below MPFR's range (clamped later)

# ----------------------------------------------------------------------------
# records
# ----------------------------------------------------------------------------

ONE = ("F", 0, 1 << 63, 0, False, 0, False)


def _zero(s):
    return ("Z", s, 0, 0, False, 0, False)


def _inf(s, fl=0):
    return ("I", s, 0, 0, False, fl, False)


NAN_INV = ("N", 0, 0, 0, False, INVALID, False)      # domain error: canonical NaN


def _nan_prop(snan):
    return ("N", 0, 0, 0, False, INVALID if snan else 0, True)


def _rec(x, sticky=None):
    """Record of an mpfr computed at PREC bits toward zero (x.rc: ternary)."""
    rc = x.rc if sticky is None else (1 if sticky else 0)
    if not x:
        if gmpy2.is_nan(x):
            raise AssertionError("MPFR gave NaN where a number was expected")
        if rc == 0:
            return _zero(1 if gmpy2.is_signed(x) else 0)
        # below MPFR's exponent range: the exact value is tiny, of the sign the
        # ternary tells (toward zero: rc < 0 for a positive value)
        return ("F", 1 if rc > 0 else 0, 1 << 63, _EMIN_TINY, True, 0, False)
    m, e = x.as_mantissa_exp()         # raises for an infinity (never expected)
    m = int(m)
    s = 0
    if m < 0:
        s, m = 1, -m
    bl = m.bit_length()
    return ("F", s, m << (64 - bl), int(e) + bl - 1, rc != 0, 0, False)


# ---- values that need more than one MPFR call: enclosures at working precision W
_PI = {}


def _pi_bounds(W):
    if W not in _PI:
        _PI[W] = (_ctx(W, gmpy2.RoundDown).const_pi(), _ctx(W, gmpy2.RoundUp).const_pi())
    return _PI[W]


def _rz64(v):
    return _CTX.plus(v)


def _settle(lo, hi):
    """Record of a never-exactly-representable value enclosed in [lo, hi]: None if
    the enclosure does not decide its 64-bit truncation."""
    a, b = _rz64(lo), _rz64(hi)
    if a == b and gmpy2.is_signed(a) == gmpy2.is_signed(b):
        return _rec(a, sticky=True)
    return None


def _angle_scale(x, degrees):
    """x*180/pi or x*pi/180 (x a non-zero float), never exact."""
    ax = abs(x)
    W = 192
    while True:
        plo, phi = _pi_bounds(W)
        dn = _ctx(W, gmpy2.RoundDown)
        up = _ctx(W, gmpy2.RoundUp)
        if degrees:
            lo = dn.div(dn.mul(ax, 180), phi)
            hi = up.div(up.mul(ax, 180), plo)
        else:
            lo = dn.div(dn.mul(ax, plo), 180)
            hi = up.div(up.mul(ax, phi), 180)
        r = _settle(lo, hi)
        if r is not None:
            return _negate(r) if x < 0 else r
        W *= 2
        if W > 1 << 14:
            raise AssertionError("degrees/radians not settled for %r" % x)


def _negate(r):
    return (r[0], 1 - r[1]) + r[2:]


_LN2 = {}
_CTXS = {}


def _ctx(W, rnd):
    """A gmpy2 context of precision W, rounding rnd and MPFR's whole exponent range."""
    c = _CTXS.get((W, rnd))
    if c is None:
        c = _CTXS[(W, rnd)] = gmpy2.context(precision=W, round=rnd, emax=gmpy2.get_emax_max(),
                                            emin=gmpy2.get_emin_min())
    return c



def _ln2_bounds(W):
    if W not in _LN2:
        lo = _ctx(W, gmpy2.RoundDown).const_log2()
        hi = _ctx(W, gmpy2.RoundUp).const_log2()
        _LN2[W] = (lo, hi)
    return _LN2[W]


def _logaddexp(x, y, base2):
    """log(e^x + e^y) (base2: log2(2^x + 2^y)) of finite floats.  Never exact but
    for base2 with x == y (x + 1); the result is m + l, m = max(x, y) and
    l = log1p(e^d) (log2(1 + 2^d)) > 0, d = min - max."""
    if x == y and base2:
        v = _CTX.add(mpfr(x), 1)
        return _zero(0) if v == 0 else _rec(v)
    m, n = (x, y) if x >= y else (y, x)
    d = _ctx(2400, gmpy2.RoundToZero).sub(n, m)
    assert d.rc == 0                              # exact: both are floats
    mm = mpfr(m)
    W = 128
    while True:
        bounds = []
        for rnd, other in ((gmpy2.RoundDown, 1), (gmpy2.RoundUp, 0)):
            c = _ctx(W, rnd)
            if base2:
                l = c.div(c.log1p(c.exp2(d)), _ln2_bounds(W)[other])
            else:
                l = c.log1p(c.exp(d))
            bounds.append((l, c.add(mm, l)))
        (l_lo, v_lo), (l_hi, v_hi) = bounds
        if m == 0:
            if l_lo == 0:                         # below MPFR's range: tiny positive
                return ("F", 0, 1 << 63, _EMIN_TINY, True, 0, False)
            lo = v_lo
        elif v_lo > mm:
            lo = v_lo
        else:
            # l < one unit of the W-bit m: the truncation of m + l to 64 bits is
            # that of m + any positive amount below 2**(e_m - 65)
            lo = _ctx(400, gmpy2.RoundToZero).add(
                mm, gmpy2.mul_2exp(mpfr(1), gmpy2.get_exp(mm) - 200))
        r = _settle(lo, v_hi)
        if r is not None:
            return r
        W *= 2
        if W > 1 << 13:
            raise AssertionError("logaddexp not settled for %r, %r" % (x, y))


# ----------------------------------------------------------------------------
# unary functions: operand keys
# ----------------------------------------------------------------------------
# key of an operand value: a non-zero finite float (exact), or ('Z', s), ('I', s),
# ('N', snan)

_MPFR_UNARY = {name: getattr(_CTX, m) for name, m in (
    ("exp", "exp"), ("exp2", "exp2"), ("expm1", "expm1"), ("log", "log"), ("log2", "log2"),
    ("log10", "log10"), ("log1p", "log1p"), ("cbrt", "cbrt"), ("sin", "sin"), ("cos", "cos"),
    ("tan", "tan"), ("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
    ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"), ("arcsinh", "asinh"),
    ("arccosh", "acosh"), ("arctanh", "atanh"), ("sqrt", "sqrt"))}

_ODD = ("expm1", "cbrt", "sin", "tan", "arcsin", "arctan", "sinh", "tanh", "arcsinh",
        "arctanh", "degrees", "radians", "log1p")


def _mpfr_of(fn, v):
    """MPFR function of a value (a float, converted exactly, or an mpfr) at PREC
    toward zero."""
    return _rec(_MPFR_UNARY[fn](v))


def unary_exact(fn, key):
    """The record of fn at an operand key (C99 F.9 special values, then MPFR)."""
    if isinstance(key, tuple):
        k, s = key
        if k == "N":
            return _nan_prop(s)
        if fn == "sqrt":
            if k == "Z":
                return _zero(s)
            return NAN_INV if s else _inf(0)
        if k == "Z":
            if fn in ("exp", "exp2", "cos", "cosh"):
                return ONE
            if fn in ("log", "log2", "log10"):
                return _inf(1, DIVBYZERO)
            if fn == "arccosh":
                return NAN_INV
            if fn == "arccos":
                return _mpfr_of(fn, 0.0)                    # pi/2
            return _zero(s)                                 # odd functions: ±0
        # infinities
        if fn in ("exp", "exp2"):
            return _zero(0) if s else _inf(0)
        if fn == "expm1":
            return ("F", 1, 1 << 63, 0, False, 0, False) if s else _inf(0)
        if fn in ("log", "log2", "log10", "log1p", "arccosh"):
            return NAN_INV if s else _inf(0)
        if fn in ("sin", "cos", "tan", "arcsin", "arccos", "arctanh"):
            return NAN_INV
        if fn == "arctan":
            return _mpfr_of(fn, gmpy2.inf(-1 if s else 1))  # ±pi/2
        if fn == "tanh":
            return ("F", s, 1 << 63, 0, False, 0, False)
        if fn == "cosh":
            return _inf(0)
        return _inf(s)                                      # sinh cbrt arcsinh degrees radians
    x = key
    if fn in ("log", "log2", "log10", "sqrt") and x < 0:
        return NAN_INV
    if fn == "log1p":
        if x == -1.0:
            return _inf(1, DIVBYZERO)
        if x < -1:
            return NAN_INV
    if fn in ("arcsin", "arccos") and abs(x) > 1:
        return NAN_INV
    if fn == "arccosh" and x < 1:
        return NAN_INV
    if fn == "arctanh":
        if abs(x) == 1.0:
            return _inf(1 if x < 0 else 0, DIVBYZERO)
        if abs(x) > 1:
            return NAN_INV
    if fn in ("degrees", "radians"):
        return _angle_scale(x, fn == "degrees")
    return _mpfr_of(fn, x)


# ----------------------------------------------------------------------------
# binary functions
# ----------------------------------------------------------------------------

def _is_odd_int(y):
    return math.isfinite(y) and y == math.floor(y) and abs(y) < 2.0 ** 53 and int(y) % 2 == 1


def _kind(k):
    """(class, sign, float value) of a key: class in 'ZINF'; NaN value None."""
    if isinstance(k, tuple):
        c, s = k
        if c == "N":
            return "N", s, None
        if c == "Z":
            return "Z", s, -0.0 if s else 0.0
        return "I", s, -math.inf if s else math.inf
    return "F", 1 if k < 0 else 0, k


def _mpfr2(f, a, b):
    return _rec(f(a, b))


def _snan(ka, kb):
    return any(isinstance(k, tuple) and k[0] == "N" and k[1] for k in (ka, kb))


def _nan_of(ka, kb):
    return _nan_prop(_snan(ka, kb))


def _arctan2(ky, kx):
    cy, sy, y = _kind(ky)
    cx, sx, x = _kind(kx)
    if cy == "N" or cx == "N":
        return _nan_of(ky, kx)
    if cy == "Z" and (cx == "Z" and not sx or cx != "Z" and not sx):
        return _zero(sy)                          # atan2(±0, +0 or x > 0) = ±0
    # every other case is a correctly rounded value (±pi, ±pi/2, ±pi/4, ±3pi/4 or
    # a finite atan2): MPFR's atan2 follows C99 F.9.1.4 for those special operands
    return _mpfr2(_CTX.atan2, y, x)


def _power(kx, ky):
    if _snan(kx, ky):
        return _nan_prop(True)
    (cx, sx, x), (cy, sy, y) = _kind(kx), _kind(ky)
    if cy == "Z":
        return ONE                                # pow(x, ±0) = 1, even x NaN
    if cx == "F" and x == 1.0:
        return ONE                                # pow(+1, y) = 1, even y NaN
    if cx == "N" or cy == "N":
        return _nan_prop(False)
    odd = cy == "F" and _is_odd_int(y)
    if cx == "Z":
        if sy:                                    # y < 0
            if cy == "I":
                return _inf(0)                    # pow(±0, -inf) = +inf (IEEE: no exception)
            return _inf(sx if odd else 0, DIVBYZERO)
        return _zero(sx if odd else 0)
    if cy == "I":
        if cx == "F" and x == -1.0:
            return ONE
        small = cx == "F" and abs(x) < 1
        if small == bool(sy):                     # |x|<1, y=-inf  or  |x|>1, y=+inf
            return _inf(0)
        return _zero(0)
    if cx == "I":
        if sx:
            if sy:
                return _zero(1 if odd else 0)
            return _inf(1 if odd else 0)
        return _zero(0) if sy else _inf(0)
    # x, y finite non-zero
    if x < 0:
        if y != math.floor(y):
            return NAN_INV
        r = _mpfr2(_CTX.pow, -x, y)
        return _negate(r) if odd else r
    return _mpfr2(_CTX.pow, x, y)


def _hypot(kx, ky):
    if _snan(kx, ky):
        return _nan_prop(True)
    cx, cy = _kind(kx)[0], _kind(ky)[0]
    x, y = _kind(kx)[2], _kind(ky)[2]
    if cx == "I" or cy == "I":
        return _inf(0)                            # even if the other is a quiet NaN
    if cx == "N" or cy == "N":
        return _nan_prop(False)
    if cx == "Z" and cy == "Z":
        return _zero(0)
    return _mpfr2(_CTX.hypot, x, y)


def _logaddexp_k(kx, ky, base2):
    cx, sx, x = _kind(kx)
    cy, sy, y = _kind(ky)
    if cx == "N" or cy == "N":
        return _nan_of(kx, ky)
    if (cx == "I" and not sx) or (cy == "I" and not sy):
        return _inf(0)
    if cx == "I" and cy == "I":
        return _inf(1)
    if cx == "I" or cy == "I":
        c, s, v = (cy, sy, y) if cx == "I" else (cx, sx, x)
        if c == "Z":
            return _zero(0)                       # log(e^±0 + 0) = log(1) = +0
        return _rec(_CTX.plus(mpfr(v)))
    return _logaddexp(x, y, base2)


def _div(kx, ky):
    cx, sx, x = _kind(kx)
    cy, sy, y = _kind(ky)
    if cx == "N" or cy == "N":
        return _nan_of(kx, ky)
    s = sx ^ sy
    if cx == cy and cx in "ZI":
        return NAN_INV                            # 0/0, inf/inf
    if cx == "I" or cy == "Z":
        return _inf(s, DIVBYZERO if cx == "F" else 0)
    if cx == "Z" or cy == "I":
        return _zero(s)
    return _rec(_CTX.div(mpfr(x), mpfr(y)))


_BINARY_FN = {
    "div": _div,
    "arctan2": _arctan2,
    "power": _power,
    "hypot": _hypot,
    "logaddexp": lambda a, b: _logaddexp_k(a, b, False),
    "logaddexp2": lambda a, b: _logaddexp_k(a, b, True),
}


def binary_exact(fn, ka, kb):
    return _BINARY_FN[fn](ka, kb)


# ----------------------------------------------------------------------------
# operands of a format: keys and the denormal flag, per code
# ----------------------------------------------------------------------------

_FMT_KEYS = {}


def format_keys(fmt):
    """(list of operand keys per code, bool array: subnormal operand) of a format."""
    hit = _FMT_KEYS.get(fmt)
    if hit is None:
        keys = []
        sub = np.zeros(1 << fmt.bits, bool)
        for c, (k, s, n, e, snan, subn) in enumerate(R.operands(fmt)):
            sub[c] = subn
            if k == "F":
                keys.append(math.ldexp(-n if s else n, e))
            elif k == "N":
                keys.append(("N", bool(snan)))
            else:
                keys.append((k, s))
        hit = _FMT_KEYS[fmt] = (keys, sub)
    return hit


class _Store:
    """Session cache of one function: key -> index of its record.  New records are
    kept as tuples until ``columns()`` packs them into the NumPy columns."""

    def __init__(self):
        self.index = {}
        self.pending = []
        self.arrays = None
        self.n = 0

    def lookup(self, keys, compute):
        idx = self.index
        pend = self.pending
        out = np.empty(len(keys), np.int64)
        for j, k in enumerate(keys):
            i = idx.get(k)
            if i is None:
                i = idx[k] = self.n
                self.n += 1
                pend.append(compute(k))
            out[j] = i
        return out

    def columns(self):
        if self.pending:
            c = list(zip(*self.pending))
            new = (np.array(c[0], dtype="U1"), np.array(c[1], dtype=bool),
                   np.array(c[2], dtype=np.uint64), np.array(c[3], dtype=np.int64),
                   np.array(c[4], dtype=bool), np.array(c[5], dtype=np.uint8),
                   np.array(c[6], dtype=bool))
            self.arrays = new if self.arrays is None else tuple(
                np.concatenate(p) for p in zip(self.arrays, new))
            self.pending = []
        return self.arrays


_STORES = {}
_KEEP = 1     # functions whose records stay cached (tests run one function at a time)


def _store(fn):
    s = _STORES.pop(fn, None)
    if s is None:
        s = _Store()
        while len(_STORES) >= _KEEP:
            del _STORES[next(iter(_STORES))]     # the least recently used function
    _STORES[fn] = s
    return s


class Records:
    """Exact results of many elements: columns kind, sign, sig, exp, sticky,
    opflags, from_nan (NumPy arrays of one length)."""

    def __init__(self, kind, sign, sig, exp, sticky, opflags, from_nan):
        self.kind, self.sign, self.sig, self.exp = kind, sign, sig, exp
        self.sticky, self.opflags, self.from_nan = sticky, opflags, from_nan

    @property
    def size(self):
        return self.kind.size

    def exact_value(self, i):
        """Text of the exact (64-bit truncated) value of element i, for reports."""
        k = str(self.kind[i])
        s = "-" if self.sign[i] else "+"
        if k == "F":
            return "%s0x%016x*2^%d%s" % (s, int(self.sig[i]), int(self.exp[i]) - 63,
                                         "+" if self.sticky[i] else " (exact)")
        if k == "Z":
            return s + "0"
        if k == "I":
            return s + "inf"
        return "NaN" + (" (from NaN operand)" if self.from_nan[i] else "")


def _gather(store, idx):
    cols = store.columns()
    return Records(*(c[idx] for c in cols))


def unary_records(fn, fmt, codes):
    """Records of fn over an array of codes of fmt (denormal flag included)."""
    if fn not in UNARY + HARNESS_UNARY:
        raise ValueError(fn)
    keys, sub = format_keys(fmt)
    codes = np.asarray(codes).astype(np.int64)
    st = _store(fn)
    uniq = np.unique(codes)
    ui = st.lookup([keys[c] for c in uniq.tolist()], lambda k: unary_exact(fn, k))
    per_code = np.zeros(1 << fmt.bits, np.int64)
    per_code[uniq] = ui
    rec = _gather(st, per_code[codes])
    rec.opflags = rec.opflags | np.where(sub[codes], DENORMAL, 0).astype(np.uint8)
    return rec


def binary_records(fn, fmt, a, b, cache=True):
    """Records of fn(a, b) over broadcast code arrays of fmt (cache=False: do not
    keep them, for random pairs that never recur)."""
    if fn not in BINARY + HARNESS_BINARY:
        raise ValueError(fn)
    keys, sub = format_keys(fmt)
    a, b = np.broadcast_arrays(np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64))
    a, b = a.ravel(), b.ravel()
    st = _store(fn) if cache else _Store()
    f = _BINARY_FN[fn]
    pair = a * (1 << fmt.bits) + b
    uniq, inv = np.unique(pair, return_inverse=True)
    nb = 1 << fmt.bits
    ua, ub = (uniq // nb).tolist(), (uniq % nb).tolist()
    ui = st.lookup([(keys[x], keys[y]) for x, y in zip(ua, ub)], lambda k: f(*k))
    rec = _gather(st, ui[inv])
    rec.opflags = rec.opflags | np.where(sub[a] | sub[b], DENORMAL, 0).astype(np.uint8)
    return rec


# ----------------------------------------------------------------------------
# vectorised rounding into a format (SPEC §1, §3, §4, §5)
# ----------------------------------------------------------------------------

_U64 = np.uint64


def _frac(sig, s, sticky):
    """Integer part and fraction facts of sig / 2**s (s >= 33 per element, int64 array):
    (I, rel, exact, fsn): rel = -1/0/+1 fraction below/at/above one half (sticky
    counts as below-the-truncation bits), fsn = floor(fraction * 2**32)."""
    big = s >= 64
    sc = np.minimum(s, 63).astype(_U64)
    one = _U64(1)
    I = np.where(big, _U64(0), sig >> sc)
    r = np.where(big, sig, sig & ((one << sc) - one))
    s32 = s - 32
    fsn = np.where(s32 >= 64, _U64(0), r >> np.minimum(s32, 63).astype(_U64))
    # half = 2**(s-1): exists in uint64 when s <= 64
    hsh = np.minimum(s - 1, 63).astype(_U64)
    half = one << hsh
    above = np.where(s - 1 >= 64, False, r > half)
    at = np.where(s - 1 >= 64, False, r == half)
    rel = np.where(above | (at & sticky), 1, np.where(at, 0, -1)).astype(np.int8)
    exact = (r == 0) & ~sticky
    return I.astype(np.int64), rel, exact, fsn.astype(np.int64)


# the mode's choice between the two neighbours: the decision table itself is
# shared with rational.py (the analysis feeding it is this module's own)
_decide = R._decide_vec


def _sat(fmt, saturate):
    if fmt.specials == "none":
        return True
    return fmt.saturate if saturate is None else bool(saturate)


def _round_finite(fmt, sign, sig, ex, sticky, mode, saturate, tininess, Rb, N):
    M = fmt.man_bits
    emin = fmt.emin
    top = (1 << fmt.exp_bits) - fmt.bias           # one binade above every code
    ex = np.clip(ex, emin - M - 40, top)
    tiny_b = ex < emin
    # ordinary grid: quantum 2**(max(ex, emin) - M)
    s = (63 - M) + np.maximum(0, emin - ex)
    I, rel, exact, fsn = _frac(sig, s, sticky)
    lo = ((np.maximum(ex, emin) - emin) << M) + I
    nozero = fmt.subnormals == "nozero"
    if nozero:   # binade emin is exponent field 0 (code magnitudes from 0), not field 1
        lo = lo - (1 << M)
    hi = lo + 1
    if fmt.subnormals == "tesla":
        # below 2**emin: units u = 2**(emin - M - 1); the gap between (2**M - 1)u and 2**emin
        st = (62 - M) + (emin - ex)
        It, relt, exactt, fsnt = _frac(sig, np.maximum(st, 33), sticky)
        smax = (1 << M) - 1
        span = (1 << M) + 1
        gap = tiny_b & (It >= smax) & ~((It == smax) & exactt)
        ordinary = tiny_b & ~gap
        lo = np.where(ordinary, It, lo)
        hi = np.where(ordinary, It + 1, hi)
        rel = np.where(ordinary, relt, rel)
        exact = np.where(ordinary, exactt, exact)
        fsn = np.where(ordinary, fsnt, fsn)
        # in the gap: d = x/u - smax; f = d / span
        stc = np.minimum(st, 63).astype(_U64)
        one = _U64(1)
        rr = sig & ((one << stc) - one)               # st <= 63 where tiny_b & gap (ex >= emin-M-1)
        dI = It - smax
        D32 = (dI << 32) + (rr >> (stc - _U64(32))).astype(np.int64)
        g_fsn = D32 // span
        D2 = 2 * dI + (rr >> (stc - one)).astype(np.int64)
        rem = ((rr & ((one << (stc - one)) - one)) != 0) | sticky
        g_rel = np.where((D2 > span) | ((D2 == span) & rem), 1,
                         np.where(D2 == span, 0, -1)).astype(np.int8)
        lo = np.where(gap, smax, lo)
        hi = np.where(gap, 1 << M, hi)
        rel = np.where(gap, g_rel, rel)
        exact = np.where(gap, False, exact)
        fsn = np.where(gap, g_fsn, fsn)
    lo_even = (lo & 1) == 0
    # tininess after rounding: rounding to M+1 bits with unbounded exponent reaches 2**emin?
    Iu, relu, exactu, fsnu = _frac(sig, np.full(sig.shape, 63 - M, np.int64), sticky)
    ub_top = (ex == emin - 1) & (Iu == (1 << (M + 1)) - 1)
    up = _decide(mode, sign, rel, exact, lo_even, fsn, Rb, N)
    up_u = ub_top & _decide(mode, sign, relu, exactu, np.zeros(sig.shape, bool), fsnu, Rb, N)
    mag = np.where(up, hi, lo)
    tiny = tiny_b if tininess == "before" else tiny_b & ~up_u
    flags = np.where(exact, 0, INEXACT | np.where(tiny, UNDERFLOW, 0))
    if nozero:   # no zero, no subnormal: below 2**emin the smallest value, every mode
        mag = np.where(tiny_b, 0, mag)
        flags = np.where(tiny_b, INEXACT | np.where(tiny, UNDERFLOW, 0), flags)
    if fmt.subnormals == "flush":
        fz = tiny_b & tiny
        fnorm = tiny_b & ~tiny
        mag = np.where(fz, 0, np.where(fnorm, 1 << M, mag))
        flags = np.where(fz, UNDERFLOW | INEXACT, np.where(fnorm, INEXACT, flags))
    ovf = mag > fmt.max_code
    flags = np.where(ovf, OVERFLOW | INEXACT, flags)
    sbit = np.where(sign, fmt.sign_bit, 0)
    code = sbit | np.minimum(mag, fmt.max_code)
    if not _sat(fmt, saturate):
        # IEEE: an overflow goes to infinity unless the mode rounds it toward zero
        to_inf = ovf & {"upward": ~sign, "downward": sign, "toward_zero": False,
                        "to_odd": False}.get(mode, True)
        code = np.where(to_inf, _inf_code(fmt, sbit), code)
    if fmt.specials == "fnuz" or not fmt.signed:
        code = np.where(mag == 0, 0, code)
    if not fmt.signed:
        neg = sign & ((mag != 0) | ovf | nozero)
        code = np.where(neg, fmt.nan_code, code)
        flags = np.where(neg, INVALID, flags)
    return code, flags


def _inf_code(fmt, sbit):
    """What a non-saturating format stores for an infinity of sign sbit."""
    if fmt.specials == "ieee":
        return sbit | fmt.inf_code
    if fmt.specials == "fn":
        return sbit | fmt.mag_mask                 # the NaN stand-in keeps the sign
    if fmt.specials == "fnuz":
        return np.full(np.shape(sbit), fmt.nan_code)
    raise AssertionError("none formats always saturate")


def deliver(fmt, rec, mode="nearest_even", saturate=None, tininess="after", Rb=None, N=32):
    """Round Records into fmt -> (codes int64, flags uint8 incl. op flags, class_only)."""
    if mode not in MODES or tininess not in ("after", "before"):
        raise ValueError((mode, tininess))
    n = rec.size
    if mode == "stochastic":
        if Rb is None or not 1 <= N <= 32:
            raise ValueError("stochastic rounding needs random bits and 1 <= N <= 32")
        Rb = np.broadcast_to(np.asarray(Rb), (n,))
    sign = rec.sign
    sbit = np.where(sign, fmt.sign_bit, 0).astype(np.int64)
    code = np.zeros(n, np.int64)
    flags = np.zeros(n, np.int64)
    k = rec.kind
    F = k == "F"
    if F.any():
        c, f = _round_finite(fmt, sign[F], rec.sig[F], rec.exp[F], rec.sticky[F], mode,
                             saturate, tininess, None if Rb is None else Rb[F], N)
        code[F] = c
        flags[F] = f
    Z = k == "Z"
    zsign = sbit if fmt.signed and fmt.specials != "fnuz" else 0
    code = np.where(Z, zsign, code)
    if fmt.subnormals == "nozero":   # an exact zero is outside the value set
        code = np.where(Z, fmt.nan_code, code)
        flags = np.where(Z, INVALID, flags)
    Ii = k == "I"
    if Ii.any():
        if _sat(fmt, saturate):
            ic = sbit | fmt.max_code
        else:
            ic = _inf_code(fmt, sbit)
        if not fmt.signed:
            neg = Ii & sign
            ic = np.where(sign, fmt.nan_code, ic)
            flags = np.where(neg, INVALID, flags)
        code = np.where(Ii, ic, code)
    Nn = k == "N"
    if Nn.any():
        if fmt.specials == "none":
            code = np.where(Nn, fmt.max_code, code)
            flags = np.where(Nn, flags | INVALID, flags)
        else:
            code = np.where(Nn, fmt.nan_code, code)
    class_only = Nn & rec.from_nan & fmt.signed & (fmt.specials in ("ieee", "fn"))
    return code, (flags | rec.opflags).astype(np.uint8), class_only


def compare(fmt, got, gotf, exp, expf, class_only):
    """Flat indices where (got, gotf) differ (NaN from NaN operand: class only)."""
    return R.compare(fmt, got, gotf, exp, expf, class_only)


def check(fmt, fn, bits_fn, sfmt, rec, operands, configs, rng, failures, max_report=6):
    """Compare ``bits_fn(sfmt, *operands, rounding=, saturate=, tininess=,
    sr_bits=, random_bits=)`` with the records delivered in every configuration
    ``(mode, saturate, tininess[, sr_bits])``; append one summary line and a few
    examples per failing configuration to ``failures``; return the case count."""
    n = 0
    for cfg in configs:
        mode, sat, tin = cfg[:3]
        N = cfg[3] if len(cfg) > 3 else 32
        Rb = (rng.integers(0, 1 << 32, rec.size, dtype=np.uint32)
              if mode == "stochastic" else None)
        ec, ef, cls = deliver(fmt, rec, mode, sat, tin, Rb, N)
        kw = {"sr_bits": N, "random_bits": Rb} if mode == "stochastic" else {}
        got, gotf = bits_fn(sfmt, *operands, rounding=mode, saturate=sat, tininess=tin, **kw)
        got = np.asarray(got).ravel()
        gotf = np.asarray(gotf).ravel()
        assert got.shape == ec.shape and gotf.shape == ec.shape, (got.shape, ec.shape)
        bad = compare(fmt, got, gotf, ec, ef, cls)
        if bad.size:
            failures.append("%s %s %s: %d of %d differ" % (fn, fmt.name, cfg, bad.size, ec.size))
            for i in bad[:max_report]:
                failures.append("  %s(%s) -> expected %s %s, got %s %s; exact %s" % (
                    fn, ", ".join(describe(fmt, np.ravel(o)[i]) for o in operands),
                    describe(fmt, ec[i]), flag_names(ef[i]), describe(fmt, got[i]),
                    flag_names(gotf[i]), rec.exact_value(i)))
        n += ec.size
    return n


def describe(fmt, code):
    return R.describe(fmt, code)


flag_names = R.flag_names
to_softfp8 = R.to_softfp8
