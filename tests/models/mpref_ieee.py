"""MPFR reference of the correctly rounded functions of IEEE 754-2019 9.2 beyond
C99 / NumPy and of P3109's Softplus (issue 25), in the records of
``tests.models.mpref`` (read its docstring first: exact result truncated to 64
bits with a sticky bit, delivered into any format by ``mpref.deliver``).

Written from IEEE 754-2019 9.2 / 9.2.1 and the P3109 Interim Report v4.0
(4.10.13), never from softfp8's C code; it never imports softfp8.

* One MPFR operation on exact operands where MPFR has the function: exp10,
  rec_sqrt (rSqrt), log2 / log10 of the exact 1 + x (log2p1, log10p1), pow with
  an integer exponent (pown; compound on the exact 1 + x), rootn (n > 0).
* Otherwise a rigorous enclosure at working precision W (directed roundings,
  pi's enclosure), doubled until its 64-bit truncation is decided
  (``mpref._settle``): exp2m1, exp10m1, the pi-functions, rootn with n < 0.
* Exact (dyadic) results are found from the operands, never from MPFR's ternary
  alone: 2^n - 1, 10^n - 1, 10^n, log2p1 at 1 + x = 2^k, log10p1 at 1 + x = 10^k,
  rSqrt(4^k), sinPi / cosPi / tanPi at multiples of 1/2 and 1/4, asinPi(+-1),
  acosPi(0, +-1), atanPi(+-1, +-inf), atan2Pi at |y| = |x|, powers.
"""
from __future__ import annotations

from fractions import Fraction
import math

import gmpy2
import numpy as np
from gmpy2 import mpfr, mpz

from . import mpref as mp
from .mpref import (DIVBYZERO, INVALID, NAN_INV, ONE, _CTX, _ctx, _inf, _nan_prop, _negate, _pi_bounds,
                    _rec, _settle, _zero)

UNARY = ("exp2m1", "exp10", "exp10m1", "log2p1", "log10p1", "rsqrt", "sinpi", "cospi", "tanpi",
         "arcsinpi", "arccospi", "arctanpi", "softplus")
BINARY = ("arctan2pi", "powr")
INT = ("pown", "rootn", "compound")
ALL = UNARY + BINARY + INT
HALF = ("F", 0, 1 << 63, -1, False, 0, False)


def _exact(v):
    """Record of an exact rational v (Fraction / int), truncated at 64 bits."""
    v = Fraction(v)
    if v == 0:
        return _zero(0)
    n, d = abs(v.numerator), v.denominator
    r = _CTX.div(mpfr(mpz(n), max(64, n.bit_length())), mpfr(mpz(d), max(64, d.bit_length())))
    rec = _rec(r)
    return _negate(rec) if v < 0 else rec


def _dyadic(u):
    """An exact mpfr of the dyadic Fraction u."""
    return mpfr(u, max(64, u.numerator.bit_length() + u.denominator.bit_length() + 1))


# results of b^x with |x| >= 2^14 lie beyond 2^+-16384, beyond every tested format
_BIG_X = 2.0 ** 14
_MINUS_ONE_UP = ("F", 1, (1 << 64) - 1, -1, True, 0, False)   # just above -1


def _far(sign, big):
    """A value beyond every tested format's range: big or tiny."""
    return ("F", sign, 1 << 63, (1 << 40) if big else -(1 << 40), True, 0, False)


def _enclose(fn_lo_hi, what):
    """Settle a non-dyadic value from an enclosure function W -> (lo, hi)."""
    W = 160
    while W <= 1 << 14:
        lo, hi = fn_lo_hi(W)
        r = _settle(lo, hi)
        if r is not None:
            return r
        W *= 2
    raise AssertionError("not settled: %r" % (what,))


# ----------------------------------------------------------------------------
# unary
# ----------------------------------------------------------------------------

def _powb_minus(x, base, m):
    """base^x - m for a finite float x != 0 (m = 0 or 1)."""
    if abs(x) >= _BIG_X:
        return _far(0, True) if x > 0 else (_MINUS_ONE_UP if m else _far(0, False))
    if m and x * math.log2(base) < -70:   # -1 + base^x, base^x < 2^-70: just above -1
        return _MINUS_ONE_UP
    q = Fraction(x)
    if q.denominator == 1:                      # an integer: exact unless 10^-n
        n = int(q)
        if n >= 0 or base == 2:
            return _exact(Fraction(base) ** n - m)
    if m == 0 and base == 10:
        return _rec(_CTX.exp10(mpfr(x)))
    f = "exp2" if base == 2 else "exp10"

    def enc(W):
        dn, up = _ctx(W, gmpy2.RoundDown), _ctx(W, gmpy2.RoundUp)
        return dn.sub(getattr(dn, f)(mpfr(x)), m), up.sub(getattr(up, f)(mpfr(x)), m)
    return _enclose(enc, (f, x))


def _logbp1(x, base):
    """log_base(1 + x) for a finite float x > -1, x != 0."""
    u = Fraction(1) + Fraction(x)
    k = 0
    t = u
    while t.denominator == 1 and t.numerator % base == 0:
        t /= base
        k += 1
    if t == 1:
        return _exact(k)
    while base == 2 and t.numerator == 1 and t.denominator % 2 == 0:
        t *= 2
        k -= 1
    if t == 1:
        return _exact(k)
    return _rec((_CTX.log2 if base == 2 else _CTX.log10)(_dyadic(u)))


def _pi_fn(fn, x):
    """sinPi, cosPi, tanPi of a finite float x (the special cases done)."""
    q = Fraction(x)
    sign = -1 if q < 0 else 1
    a = abs(q) % 2                               # sin, tan odd; cos even
    neg = False
    if fn == "sinpi":
        if a >= 1:
            a, neg = a - 1, True
        if a > Fraction(1, 2):
            a = 1 - a
        if a == 0:
            return _zero(1 if sign < 0 else 0)
        if a == Fraction(1, 2):
            return _exact(sign * (-1 if neg else 1))
        kind = "sin" if a <= Fraction(1, 4) else "cos"
        if kind == "cos":
            a = Fraction(1, 2) - a
        neg = neg != (sign < 0)
    elif fn == "cospi":
        if a > 1:
            a = 2 - a
        if a == 0:
            return ONE
        if a == 1:
            return _exact(-1)
        if a > Fraction(1, 2):
            a, neg = 1 - a, True
        if a == Fraction(1, 2):
            return _zero(0)
        kind = "cos" if a <= Fraction(1, 4) else "sin"
        if kind == "sin":
            a = Fraction(1, 2) - a
    else:                                        # tanpi: period 1, odd
        a = abs(q) % 1
        if a > Fraction(1, 2):
            a, neg = 1 - a, True
        if a == Fraction(1, 4):
            return _exact(-sign if neg else sign)
        kind = "tan" if a < Fraction(1, 4) else "cot"
        if kind == "cot":
            a = Fraction(1, 2) - a
        neg = neg != (sign < 0)
    # a in (0, 1/4]: sin, tan increasing; cos decreasing in the angle pi a
    num, den = a.numerator, a.denominator

    def enc(W):
        plo, phi = _pi_bounds(W)
        dn, up = _ctx(W, gmpy2.RoundDown), _ctx(W, gmpy2.RoundUp)
        alo = dn.div(dn.mul(plo, num), den)
        ahi = up.div(up.mul(phi, num), den)
        if kind == "sin":
            return dn.sin(alo), up.sin(ahi)
        if kind == "cos":
            return dn.cos(ahi), up.cos(alo)
        if kind == "tan":
            return dn.tan(alo), up.tan(ahi)
        return dn.div(1, up.tan(ahi)), up.div(1, dn.tan(alo))   # cot = 1 / tan, decreasing
    r = _enclose(enc, (fn, x))
    return _negate(r) if neg else r


def _inv_pi(fn, x):
    """asin(x)/pi, acos(x)/pi, atan(x)/pi for a finite float x (special cases done)."""
    neg = x < 0 and fn != "arccospi"
    ax = -x if neg else x
    f = {"arcsinpi": "asin", "arccospi": "acos", "arctanpi": "atan"}[fn]

    def enc(W):
        plo, phi = _pi_bounds(W)
        dn, up = _ctx(W, gmpy2.RoundDown), _ctx(W, gmpy2.RoundUp)
        return dn.div(getattr(dn, f)(mpfr(ax)), phi), up.div(getattr(up, f)(mpfr(ax)), plo)
    r = _enclose(enc, (fn, x))
    return _negate(r) if neg else r


def unary_exact(fn, key):
    """The record of fn at an operand key (IEEE 754-2019 9.2.1 special values,
    P3109 4.10.13 for softplus)."""
    if isinstance(key, tuple):
        k, s = key
        if k == "N":
            return _nan_prop(s)
        if k == "Z":
            if fn in ("exp10", "cospi"):
                return ONE
            if fn == "rsqrt":
                return _inf(s, DIVBYZERO)                       # rSqrt(+-0) = +-inf
            if fn == "arccospi":
                return HALF
            if fn == "softplus":
                return mp._logaddexp(0.0, 0.0, False)           # log 2
            return _zero(s)                                     # odd functions: +-0
        # infinities
        if fn in ("exp2m1", "exp10m1"):
            return ("F", 1, 1 << 63, 0, False, 0, False) if s else _inf(0)   # -1
        if fn == "exp10":
            return _zero(0) if s else _inf(0)
        if fn in ("log2p1", "log10p1"):
            return NAN_INV if s else _inf(0)
        if fn == "rsqrt":
            return NAN_INV if s else _zero(0)
        if fn in ("sinpi", "cospi", "tanpi", "arcsinpi", "arccospi"):
            return NAN_INV
        if fn == "arctanpi":
            return _negate(HALF) if s else HALF
        if fn == "softplus":
            return _zero(0) if s else _inf(0)
        raise ValueError(fn)
    x = key
    if fn in ("exp2m1", "exp10", "exp10m1"):
        return _powb_minus(x, 2 if fn == "exp2m1" else 10, 0 if fn == "exp10" else 1)
    if fn in ("log2p1", "log10p1"):
        if x == -1.0:
            return _inf(1, DIVBYZERO)
        if x < -1:
            return NAN_INV
        return _logbp1(x, 2 if fn == "log2p1" else 10)
    if fn == "rsqrt":
        return NAN_INV if x < 0 else _rec(_CTX.rec_sqrt(mpfr(x)))
    if fn in ("sinpi", "cospi", "tanpi"):
        q = Fraction(x)
        if fn == "tanpi" and q.denominator == 2:              # a pole: tanPi(n + 1/2)
            n = math.floor(q)
            return _inf(1 if n % 2 else 0, DIVBYZERO)
        if fn == "tanpi" and q.denominator == 1:              # tanPi(n) = sinPi(n) / cosPi(n)
            return _zero(int((q < 0) != (int(q) % 2 == 1)))
        return _pi_fn(fn, x)
    if fn in ("arcsinpi", "arccospi"):
        if abs(x) > 1:
            return NAN_INV
        if abs(x) == 1:
            if fn == "arcsinpi":
                return _negate(HALF) if x < 0 else HALF
            return ONE if x < 0 else _zero(0)
        return _inv_pi(fn, x)
    if fn == "arctanpi":
        if abs(x) == 1:
            return _exact(Fraction(1 if x > 0 else -1, 4))
        return _inv_pi(fn, x)
    if fn == "softplus":
        return mp._logaddexp(x, 0.0, False)
    raise ValueError(fn)


# ----------------------------------------------------------------------------
# binary: atan2Pi, powr
# ----------------------------------------------------------------------------

def _atan2pi(ky, kx):
    cy, sy, y = mp._kind(ky)
    cx, sx, x = mp._kind(kx)
    if cy == "N" or cx == "N":
        return mp._nan_of(ky, kx)
    sgn = -1 if sy else 1
    if cy == "Z":
        return _exact(sgn) if sx else _zero(sy)
    if cy == "I":
        if cx != "I":
            return _exact(Fraction(sgn, 2))
        return _exact(Fraction(3 * sgn, 4) if sx else Fraction(sgn, 4))
    if cx == "Z":
        return _exact(Fraction(sgn, 2))
    if cx == "I":
        return _exact(sgn) if sx else _zero(sy)
    if abs(y) == abs(x):
        return _exact(Fraction(3 * sgn, 4) if sx else Fraction(sgn, 4))
    ay = abs(y)

    def enc(W):
        plo, phi = _pi_bounds(W)
        dn, up = _ctx(W, gmpy2.RoundDown), _ctx(W, gmpy2.RoundUp)
        return dn.div(dn.atan2(mpfr(ay), mpfr(x)), phi), up.div(up.atan2(mpfr(ay), mpfr(x)), plo)
    r = _enclose(enc, ("atan2pi", y, x))
    return _negate(r) if sy else r


def _powr(kx, ky):
    """powr (9.2.1): x < 0 (-inf too) invalid; powr(+-0, +-0), powr(+inf, +-0),
    powr(1, +-inf) invalid; powr(+-0, y < 0) = +inf (divideByZero for finite y);
    powr(+-0, y > 0) = +0; a NaN operand: NaN; otherwise pow for x > 0."""
    if mp._snan(kx, ky):
        return _nan_prop(True)
    (cx, sx, x), (cy, sy, y) = mp._kind(kx), mp._kind(ky)
    if cx == "N" or cy == "N":
        return _nan_prop(False)
    if sx and cx != "Z":
        return NAN_INV
    if cx == "Z":
        if cy == "Z":
            return NAN_INV
        if not sy:
            return _zero(0)
        return _inf(0, DIVBYZERO if cy != "I" else 0)
    if cx == "I":
        if cy == "Z":
            return NAN_INV
        return _zero(0) if sy else _inf(0)
    if x == 1.0 and cy == "I":
        return NAN_INV
    return mp._power(kx, ky)


_BINARY_FN = {"arctan2pi": _atan2pi, "powr": _powr}


# ----------------------------------------------------------------------------
# an integer operand: pown, rootn, compound
# ----------------------------------------------------------------------------

def _pow_int(x, n):
    """x^n for a finite non-zero float x and an int n != 0 (MPFR's pow with an
    integer exponent, correctly rounded; beyond MPFR's range: far)."""
    sign = 1 if (x < 0 and n % 2) else 0
    ax = abs(x)
    if ax != 1.0 and abs(n) * abs(math.log2(ax)) > 2 ** 30:
        return _far(sign, (ax > 1) == (n > 0))
    r = _CTX.pow(mpfr(ax), mpz(n))
    rec = _rec(r)
    return _negate(rec) if sign else rec


def int_exact(fn, key, n):
    if fn == "pown":
        if isinstance(key, tuple):
            k, s = key
            if k == "N":
                return ONE if n == 0 and not s else _nan_prop(s)
            if n == 0:
                return ONE
            odd = n % 2 == 1
            sg = s if odd else 0
            if k == "Z":
                return _zero(sg) if n > 0 else _inf(sg, DIVBYZERO)
            return _inf(sg) if n > 0 else _zero(sg)
        return ONE if n == 0 else _pow_int(key, n)
    if fn == "rootn":
        if isinstance(key, tuple):
            k, s = key
            if k == "N":
                return _nan_prop(s)
            if n == 0:
                return NAN_INV
            odd = n % 2 == 1
            if k == "Z":
                sg = s if odd else 0
                return _zero(sg) if n > 0 else _inf(sg, DIVBYZERO)
            if s and not odd:
                return NAN_INV
            return _inf(s) if n > 0 else _zero(s)
        if n == 0 or (key < 0 and n % 2 == 0):
            return NAN_INV
        neg = key < 0
        ax = abs(key)
        an = abs(n)
        r = _CTX.rootn(mpfr(ax), an)
        if r is not None and r.rc == 0:                # an exact root t: t or 1/t
            t = Fraction(*r.as_integer_ratio())
            if n > 0:
                rec = _exact(t)
            elif t.numerator == 1 and t.denominator & (t.denominator - 1) == 0 or \
                    t.denominator == 1 and t.numerator & (t.numerator - 1) == 0:
                rec = _exact(1 / t)
            else:
                rec = None
            if rec is not None:
                return _negate(rec) if neg else rec
        if n > 0:
            rec = _rec(r)
        else:
            def enc(W):
                dn, up = _ctx(W, gmpy2.RoundDown), _ctx(W, gmpy2.RoundUp)
                return dn.div(1, up.rootn(mpfr(ax), an)), up.div(1, dn.rootn(mpfr(ax), an))
            rec = _enclose(enc, ("rootn", key, n))
        return _negate(rec) if neg else rec
    if fn == "compound":
        if isinstance(key, tuple):
            k, s = key
            if k == "N":
                return ONE if n == 0 and not s else _nan_prop(s)
            if k == "Z":
                return ONE
            if s:                                       # -inf < -1
                return NAN_INV
            return ONE if n == 0 else _inf(0) if n > 0 else _zero(0)
        if key < -1:
            return NAN_INV
        if n == 0:
            return ONE
        if key == -1:
            return _zero(0) if n > 0 else _inf(0, DIVBYZERO)
        u = Fraction(1) + Fraction(key)
        if abs(n) * abs(math.log2(float(u)) if float(u) != 1 else 0) > 2 ** 30 or float(u) == math.inf:
            return _far(0, (u > 1) == (n > 0))
        return _rec(_CTX.pow(_dyadic(u), mpz(n)))
    raise ValueError(fn)


# ----------------------------------------------------------------------------
# records of arrays (mpref's machinery)
# ----------------------------------------------------------------------------

def unary_records(fn, fmt, codes):
    if fn not in UNARY:
        raise ValueError(fn)
    keys, sub = mp.format_keys(fmt)
    codes = np.asarray(codes).astype(np.int64)
    st = mp._store("ieee:" + fn)
    uniq = np.unique(codes)
    ui = st.lookup([keys[c] for c in uniq.tolist()], lambda k: unary_exact(fn, k))
    per_code = np.zeros(1 << fmt.bits, np.int64)
    per_code[uniq] = ui
    rec = mp._gather(st, per_code[codes])
    rec.opflags = rec.opflags | np.where(sub[codes], mp.DENORMAL, 0).astype(np.uint8)
    return rec


def binary_records(fn, fmt, a, b):
    keys, sub = mp.format_keys(fmt)
    a, b = np.broadcast_arrays(np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64))
    a, b = a.ravel(), b.ravel()
    st = mp._store("ieee:" + fn)
    f = _BINARY_FN[fn]
    nb = 1 << fmt.bits
    uniq, inv = np.unique(a * nb + b, return_inverse=True)
    ui = st.lookup([(keys[x], keys[y]) for x, y in zip((uniq // nb).tolist(), (uniq % nb).tolist())],
                   lambda k: f(*k))
    rec = mp._gather(st, ui[inv])
    rec.opflags = rec.opflags | np.where(sub[a] | sub[b], mp.DENORMAL, 0).astype(np.uint8)
    return rec


def int_records(fn, fmt, a, n):
    """Records of fn(a, n) over code array a and int array n (broadcast)."""
    keys, sub = mp.format_keys(fmt)
    a, n = np.broadcast_arrays(np.asarray(a).astype(np.int64), np.asarray(n).astype(np.int64))
    a, n = a.ravel(), n.ravel()
    st = mp._store("ieee:" + fn)
    ui = st.lookup([(keys[x], int(k)) for x, k in zip(a.tolist(), n.tolist())],
                   lambda kk: int_exact(fn, kk[0], kk[1]))
    rec = mp._gather(st, ui)
    rec.opflags = rec.opflags | np.where(sub[a], mp.DENORMAL, 0).astype(np.uint8)
    return rec
