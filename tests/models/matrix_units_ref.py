"""Exact reference of the matrix-unit models (block FMA, pairwise, sequential, Kahan).

Written from docs/matrix-units.md on ``fractions.Fraction``, independently of softfp8's
C code (it never imports softfp8; operand decoding and accumulator-format rounding come
from ``tests.models.fraction_model``, the project's independent model of the formats).

``block_dot(params, fa, fb, fo, a_codes, b_codes, c_code)`` -> (code, flags): one output
element of a ``softfp8.BlockFMA`` with the parameters ``params`` (a dict with the
BlockFMA's keyword names), operand formats ``fa``/``fb`` (names of
``fraction_model.SPECS`` or ``"tf32"``), output ``fo`` (``"binary32"`` or
``"binary16"``).  ``order_dot(...)`` does the same for ``softfp8.Accumulation`` orders.
"""
from __future__ import annotations

from fractions import Fraction

from . import fraction_model as fm

INEXACT, UNDERFLOW, OVERFLOW, INVALID, DENORMAL = 0x01, 0x02, 0x04, 0x10, 0x20

BINARY32 = fm.Spec(32, True, 8, 23, 127, "ieee", "ieee", False)
SPECS = dict(fm.SPECS, tf32=BINARY32, binary32=BINARY32, binary16=fm.SPECS["float16"])
OUT_NAN = {"binary32": 0x7FC00000, "binary16": 0x7E00}

DEFAULTS = dict(rounding="toward_zero", sticky=False, grouping="global", addend="with_products",
                alignment_rounding="toward_zero", addend_extra_bits=7, zero_addend_exponent=None,
                normalized_products=False, min_exponent=None, product_overflow=True,
                input_subnormals=True, output_subnormals=True, promote_every=None)


class Val:
    """A decoded operand: kind 'zero' | 'fin' | 'inf' | 'nan'; v the signed value."""

    def __init__(self, kind, neg=0, v=Fraction(0), sub=False, snan=False):
        self.kind, self.neg, self.v, self.sub, self.snan = kind, neg, v, sub, snan


def decode(fmt: str, code: int) -> Val:
    spec = SPECS[fmt]
    cls = fm.classify(spec, code)
    d = fm.decode(spec, code, literal_flush=True)
    if d[0] == "nan":
        return Val("nan", snan=cls == "snan")
    if d[0] == "inf":
        return Val("inf", d[1])
    sign, mag = d[1], d[2]
    if mag == 0:
        return Val("zero", sign)
    return Val("fin", sign, -mag if sign else mag, sub=cls == "sub")


def emin_of(fmt: str) -> int:
    return 1 - SPECS[fmt].bias


def floor_log2(x: Fraction) -> int:
    return fm.floor_log2(abs(x))


def nominal_exp(x: Fraction, emin: int) -> int:
    return max(floor_log2(x), emin)


# ---------------------------------------------------------------- rounding of block results

def _round_to_grid(V: Fraction, q: Fraction, mode: str):
    """V rounded to a multiple of q (exact rational arithmetic)."""
    neg = V < 0
    m = abs(V) / q
    lo = m.numerator // m.denominator
    rem = m - lo
    up = False
    if rem:
        if mode == "nearest_even":
            up = rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1)
        elif mode == "nearest_away":
            up = rem >= Fraction(1, 2)
        elif mode == "upward":
            up = not neg
        elif mode == "downward":
            up = neg
        elif mode != "toward_zero":
            raise ValueError(mode)
    r = (lo + up) * q
    return (-r if neg else r), rem != 0


def round_block(V: Fraction, neg_zero: bool, fo: str, p: int, mode: str, out_sub: bool):
    """(value or ('inf', neg), flags) of the block value V rounded to p fraction bits within
    fo's exponent range (docs: "Rounding the block result")."""
    spec = SPECS[fo]
    emin, emax = 1 - spec.bias, spec.bias
    if V == 0:
        return (Fraction(0), neg_zero), 0
    e = max(floor_log2(V), emin)
    r, inexact = _round_to_grid(V, Fraction(2) ** (e - p), mode)
    fl = INEXACT if inexact else 0
    if r != 0 and abs(r) >= Fraction(2) ** (emax + 1):
        return ("inf", V < 0), fl | OVERFLOW | INEXACT
    tiny = abs(r) < Fraction(2) ** emin     # tininess after rounding
    if tiny and inexact:
        fl |= UNDERFLOW
    if tiny and not out_sub and r != 0:
        return (Fraction(0), False), fl | UNDERFLOW | INEXACT
    return (r, V < 0), fl


def encode(fo: str, res) -> int:
    """Code of ('inf', neg) | 'nan' | (value, neg) in fo."""
    spec = SPECS[fo]
    if res == "nan":
        return OUT_NAN[fo]
    if res[0] == "inf":
        return fm.inf_code(spec) | (fm.sign_bit(spec) if res[1] else 0)
    v, neg = res
    return fm.encode_finite(spec, 1 if (v < 0 or (v == 0 and neg)) else 0, abs(v))


def value_of(res):
    """The value a block result carries to the next block (a Val)."""
    if res == "nan":
        return Val("nan")
    if res[0] == "inf":
        return Val("inf", int(res[1]))
    v, neg = res
    if v == 0:
        return Val("zero", int(neg))
    return Val("fin", int(v < 0), v)


# ---------------------------------------------------------------- the block models

def _align(terms, E_al, W, sticky):
    """Sum of the aligned terms [(value, E)]: (T, unit, dropped_any)."""
    if W is None:   # no window: the exact sum
        return sum((t for t, _ in terms), Fraction(0)), Fraction(1), False
    u = Fraction(2) ** (E_al - W)
    T, dropped = 0, False
    for t, _ in terms:
        m = abs(t) / u
        k = m.numerator // m.denominator
        lost = m != k
        dropped |= lost
        a = 2 * k + lost if sticky else k
        T += -a if t < 0 else a
    return T, (u / 2 if sticky else u), dropped


def _round_a(x: Fraction, mode: str):
    """x rounded to an integer by the alignment rounding mode."""
    fl = x.numerator // x.denominator
    if x == fl:
        return fl, False
    if mode == "downward":
        return fl, True
    if mode == "upward":
        return fl + 1, True
    if mode == "toward_zero":
        return (fl if x > 0 else fl + 1), True
    if mode == "nearest_even":
        r = x - fl
        up = r > Fraction(1, 2) or (r == Fraction(1, 2) and fl % 2)
        return fl + up, True
    raise ValueError(mode)


def _two_term(t1, t2, X, mode, W, trunc_if_far=None):
    """Two-term alignment of (T, E) partial sums (docs); returns (value, inexact)."""
    (T1, E1), (T2, E2) = t1, t2
    if E1 is None:
        E1 = E2
    if E2 is None:
        E2 = E1
    if E1 == E2:
        return (T1 + T2) * Fraction(2) ** (E1 - W), False
    E = max(E1, E2)
    if E1 < E:   # the first term (the products) is the smaller one: X extra bits
        big, small, Es, x = T2, T1, E1, X
    else:
        big, small, Es, x = T1, T2, E2, 0
    q = Fraction(small * 2 ** x, 2 ** (E - Es))
    m = mode
    if trunc_if_far is not None and E1 > E2 and E2 < E - trunc_if_far:
        m = "toward_zero"
    r, inexact = _round_a(q, m) if small else (0, False)
    return (big * 2 ** x + r) * Fraction(2) ** (E - W - x), inexact


def _block_global(P, c, prm, W):
    """Global alignment; P: [(value, E)] non-zero products; c: Val.  -> (V or None for +0, fl)"""
    late = prm["addend"] == "late"
    minE = prm["min_exponent"]
    if not late:
        terms = list(P)
        if c.kind == "fin":
            terms.append((c.v, nominal_exp(c.v, -126)))
        if not terms:
            return None, 0
        E_al = max(e for _, e in terms)
        if minE is not None:
            E_al = max(E_al, minE)
        T, unit, dropped = _align(terms, E_al, W, prm["sticky"])
        return (T * unit if T else None), (INEXACT if dropped else 0)
    if not P:
        return (c.v if c.kind == "fin" else None), 0
    Tp, Ep, fl = _group(P, prm, W)
    return _add_addend(Tp, Ep, c, prm, W, fl, None)


def _group(P, prm, W):
    """Global alignment of products only: (T, E) at the unit 2^(E - W), flags."""
    if not P:
        return 0, None, 0
    E = max(e for _, e in P)
    if prm["min_exponent"] is not None:
        E = max(E, prm["min_exponent"])
    T, unit, dropped = _align(P, E, W, False)
    return T, E, (INEXACT if dropped else 0)


def _add_addend(Tp, Ep, c, prm, W, fl, trunc_if_far):
    if c.kind == "fin":
        Ec = nominal_exp(c.v, -126)
        Tc = c.v / Fraction(2) ** (Ec - W)
        assert Tc.denominator == 1
        Tc = int(Tc)
    else:
        Tc, Ec = 0, prm["zero_addend_exponent"]
        if Ec is None and Ep is None:
            return (None if Tp == 0 else Tp * Fraction(2) ** (-W)), fl
    V, inexact = _two_term((Tp, Ep), (Tc, Ec), prm["addend_extra_bits"], prm["alignment_rounding"],
                           W, trunc_if_far)
    return (V if V else None), fl | (INEXACT if inexact else 0)


def _block_odd_even(Pall, c, prm, W):
    """Pall: [(value, E) or None] by position."""
    ev = [p for i, p in enumerate(Pall) if i % 2 == 0 and p is not None]
    od = [p for i, p in enumerate(Pall) if i % 2 == 1 and p is not None]
    Te, Ee, f1 = _group(ev, prm, W)
    To, Eo, f2 = _group(od, prm, W)
    if Ee is None and Eo is None:
        Tp, Ep, inex = 0, None, False
    elif Ee is None or Eo is None:
        Tp, Ep, inex = (To, Eo, False) if Ee is None else (Te, Ee, False)
    else:
        V, inex = _two_term((Te, Ee), (To, Eo), 0, prm["alignment_rounding"], W)
        Ep = max(Ee, Eo)
        Tp = V / Fraction(2) ** (Ep - W)
        assert Tp.denominator == 1
        Tp = int(Tp)
    fl = f1 | f2 | (INEXACT if inex else 0)
    return _add_addend(Tp, Ep, c, prm, W, fl, 25)


def _add_fo(x: Val, y: Val, fo, mode, out_sub):
    """IEEE addition of two values of fo, rounded into fo: (Val, flags)."""
    if x.kind == "nan" or y.kind == "nan":
        return Val("nan"), 0
    if x.kind == "inf" or y.kind == "inf":
        if x.kind == "inf" and y.kind == "inf" and x.neg != y.neg:
            return Val("nan"), INVALID
        return (x if x.kind == "inf" else y), 0
    s = x.v + y.v
    if s == 0:   # x + x = x; +0 + -0 and exact cancellation: +0 (-0 rounding downward)
        same = x.kind == "zero" and y.kind == "zero" and x.neg == y.neg
        return Val("zero", int(x.neg if same else mode == "downward")), 0
    res, fl = round_block(s, s < 0, fo, 23 if fo == "binary32" else 10, mode, True)
    v = value_of(res)
    if v.kind == "fin" and not out_sub and abs(v.v) < Fraction(2) ** emin_of(fo):
        return Val("zero", v.neg), fl | UNDERFLOW | INEXACT     # flushed: a zero of its sign
    return v, fl


def _round_product_fo(p: Fraction, fo, out_sub):
    res, fl = round_block(p, p < 0, fo, 23 if fo == "binary32" else 10, "nearest_even", True)
    v = value_of(res)
    if v.kind == "fin" and not out_sub and abs(v.v) < Fraction(2) ** emin_of(fo):
        return Val("zero"), fl | UNDERFLOW | INEXACT
    return v, fl


def _block_pairwise(prods, c, prm, fo):
    """prods: [Fraction] (zeros included) -> (Val, flags)."""
    mode, osub = prm["rounding"], prm["output_subnormals"]
    fl = 0
    vals = []
    for p in prods:
        if p == 0:
            vals.append(Val("zero"))
        else:
            v, f = _round_product_fo(p, fo, osub)
            fl |= f
            vals.append(v)

    def tree(lst):
        nonlocal fl
        if len(lst) == 1:
            return lst[0]
        h = len(lst) // 2
        x, y = tree(lst[:h]), tree(lst[h:])
        r, f = _add_fo(x, y, fo, mode, osub)
        fl |= f
        return r

    s = tree(vals)
    r, f = _add_fo(c, s, fo, mode, osub)
    return r, fl | f


def block_dot(params, fa, fb, fo, a_codes, b_codes, c_code):
    """(code, flags) of one output element (docs/matrix-units.md)."""
    prm = dict(DEFAULTS, **params)
    n = prm["block"]
    eb = prm["extra_bits"]
    W = None if eb is None else 23 + eb
    p = (23 if fo == "binary32" else 10) + min(0, eb or 0)
    A = [decode(fa, int(x)) for x in a_codes]
    B = [decode(fb, int(x)) for x in b_codes]
    c = decode(fo, int(c_code))
    fl = 0
    for v in A + B + [c]:
        if v.sub:
            fl |= DENORMAL
        if v.kind == "nan" and v.snan:
            fl |= INVALID
    # special values over the whole dot product
    nan, pinf, ninf = c.kind == "nan", False, False
    for x, y in zip(A, B):
        if x.kind == "nan" or y.kind == "nan":
            nan = True
        elif x.kind == "inf" or y.kind == "inf":
            if x.kind == "zero" or y.kind == "zero":
                nan = True
                fl |= INVALID
            elif x.neg ^ y.neg:
                ninf = True
            else:
                pinf = True
    if c.kind == "inf":
        ninf, pinf = ninf or c.neg, pinf or not c.neg
    if nan:
        return OUT_NAN[fo], fl
    if pinf and ninf:
        return OUT_NAN[fo], fl | INVALID
    if pinf or ninf:
        return encode(fo, ("inf", ninf)), fl
    if not prm["input_subnormals"]:
        A = [Val("zero", x.neg) if x.sub else x for x in A]
        B = [Val("zero", x.neg) if x.sub else x for x in B]
    if not prm["product_overflow"]:
        lim = Fraction(2) ** (SPECS[fo].bias + 1)
        big = [x.v * y.v for x, y in zip(A, B) if x.kind == "fin" and y.kind == "fin"
               and abs(x.v * y.v) >= lim]
        if big:
            if any(b > 0 for b in big) and any(b < 0 for b in big):
                return OUT_NAN[fo], fl | INVALID
            return encode(fo, ("inf", big[0] < 0)), fl | OVERFLOW | INEXACT
    ea, eb_ = emin_of(fa), emin_of(fb)
    prom = prm["promote_every"]
    K = len(A)
    chunk = prom if prom else max(K, 1)
    F = c
    if not prm["output_subnormals"] and c.kind == "fin" and abs(c.v) < Fraction(2) ** emin_of(fo):
        # the addend is read as zero: +0, a zero of its sign in the pairwise grouping
        F = Val("zero", c.neg if prm["grouping"] == "pairwise" else 0)
        fl |= INEXACT
    for c0 in range(0, K, chunk):
        acc = Val("zero") if prom else F
        for k0 in range(c0, min(K, c0 + chunk), n):
            if acc.kind in ("inf", "nan"):
                break            # inf (or NaN) + finite products
            acc, f = _one_block(A[k0:k0 + n], B[k0:k0 + n], acc, prm, fo, W, p, ea, eb_)
            fl |= f
        if prom:
            F, f = _add_fo(F, acc, fo, "nearest_even", True)
            fl |= f
        else:
            F = acc
    if F.kind == "nan":
        return OUT_NAN[fo], fl
    if F.kind == "inf":
        return encode(fo, ("inf", F.neg)), fl
    return encode(fo, (F.v, F.neg)), fl


def _one_block(A, B, c, prm, fo, W, p, ea, eb_):
    """One block: -> (Val, flags)."""
    n = prm["block"]
    if c.kind == "inf":
        return c, 0
    fl = 0
    pad = n - len(A)
    A = A + [Val("zero")] * pad
    B = B + [Val("zero")] * pad
    if prm["grouping"] == "pairwise":
        prods = [x.v * y.v if x.kind == "fin" and y.kind == "fin" else Fraction(0) for x, y in zip(A, B)]
        r, f = _block_pairwise(prods, c, prm, fo)
        return r, fl | f
    Pall = []
    for x, y in zip(A, B):
        if x.kind != "fin" or y.kind != "fin":
            Pall.append(None)
            continue
        v = x.v * y.v
        E = nominal_exp(x.v, ea) + nominal_exp(y.v, eb_)
        if prm["normalized_products"] and abs(v) >= 2 * Fraction(2) ** E:
            E += 1
        Pall.append((v, E))
    if prm["grouping"] == "odd_even":
        V, f = _block_odd_even(Pall, c, prm, W)
    else:
        V, f = _block_global([q for q in Pall if q is not None], c, prm, W)
    fl |= f
    if V is None:
        return Val("zero"), fl
    res, f = round_block(V, V < 0, fo, p, prm["rounding"], prm["output_subnormals"])
    return value_of(res), fl | f


# ---------------------------------------------------------------- Accumulation orders

def spec_round(spec, x: Val, mode, sat=None):
    """x rounded once into spec -> (Val, code, flags); NaN / infinities as conversions give them."""
    if x.kind == "nan":
        if spec.specials == "none":
            code, f = fm.encode_finite(spec, 0, fm.max_value(spec)), INVALID
        else:
            code, f = fm.canonical_nan(spec), 0
    elif x.kind == "inf":
        code, f = fm._infinity_result(spec, x.neg, spec.saturate if sat is None else sat)
    else:
        code, f = fm.round_value(spec, x.neg, abs(x.v), mode, sat)
    return decode_spec(spec, code), code, f


def decode_spec(spec, code):
    d = fm.decode(spec, code)
    if d[0] == "nan":
        return Val("nan")
    if d[0] == "inf":
        return Val("inf", d[1])
    if d[2] == 0:
        return Val("zero", d[1])
    return Val("fin", d[1], -d[2] if d[1] else d[2])


def ieee_add(spec, x: Val, y: Val, mode, sat=None):
    """IEEE addition x + y rounded once into spec -> (Val, flags)."""
    if x.kind == "nan" or y.kind == "nan":
        return Val("nan"), 0
    if x.kind == "inf" or y.kind == "inf":
        if x.kind == "inf" and y.kind == "inf" and x.neg != y.neg:
            return Val("nan"), INVALID
        r = x if x.kind == "inf" else y
        v, _, f = spec_round(spec, r, mode, sat)
        return v, f
    s = x.v + y.v
    if s == 0:
        if x.kind == "zero" and y.kind == "zero":
            neg = x.neg if x.neg == y.neg else int(mode == "downward")
        else:
            neg = int(mode == "downward")
        v, _, f = spec_round(spec, Val("zero", neg), mode, sat)
        return v, f
    v, _, f = spec_round(spec, Val("fin", int(s < 0), s), mode, sat)
    return v, f


def ieee_mul(x: Val, y: Val):
    """Exact product -> (Val, flags)."""
    neg = x.neg ^ y.neg
    if x.kind == "nan" or y.kind == "nan":
        return Val("nan"), (INVALID if x.snan or y.snan else 0)
    if x.kind == "inf" or y.kind == "inf":
        if x.kind == "zero" or y.kind == "zero":
            return Val("nan"), INVALID
        return Val("inf", neg), 0
    if x.kind == "zero" or y.kind == "zero":
        return Val("zero", neg), 0
    return Val("fin", neg, x.v * y.v), 0


def order_dot(order, fa, fb, fo_spec, out_mode, a_codes, b_codes, c_code=None, acc_spec=None,
              acc_mode="nearest_even", prod_spec=None, prod_mode=None, promote=None, prom_spec=None):
    """(code, flags) of softfp8.matmul with an addend (c_code in fo_spec, or None) under the exact
    model (order 'exact') or an Accumulation order ('sequential', 'pairwise', 'kahan') with
    accumulator acc_spec (docs/matrix-units.md, "Further orders"; docs/training.md).
    Saturation: every format's default (the default context)."""
    fl = 0
    A = [decode(fa, int(x)) for x in a_codes]
    B = [decode(fb, int(x)) for x in b_codes]
    c = None if c_code is None else decode_spec(fo_spec, int(c_code))
    if c is not None:
        cls = fm.classify(fo_spec, int(c_code))
        fl |= (DENORMAL if cls == "sub" else 0) | (INVALID if cls == "snan" else 0)
    P = []
    for x, y in zip(A, B):
        fl |= DENORMAL if (x.sub or y.sub) else 0
        p, f = ieee_mul(x, y)
        fl |= f
        if prod_spec is not None:
            p, _, f = spec_round(prod_spec, p, prod_mode or acc_mode)
            fl |= f
        P.append(p)
    if order == "exact":
        terms = P + ([c] if c is not None else [])
        if any(t.kind == "nan" for t in terms):
            r = Val("nan")
        elif any(t.kind == "inf" for t in terms):
            signs = {t.neg for t in terms if t.kind == "inf"}
            r = Val("nan") if len(signs) == 2 else Val("inf", signs.pop())
            fl |= INVALID if r.kind == "nan" else 0
        else:
            s = sum((t.v for t in terms), Fraction(0))
            if s != 0:
                r = Val("fin", int(s < 0), s)
            elif all(t.kind == "zero" for t in terms) and len({t.neg for t in terms}) == 1 and terms:
                r = Val("zero", terms[0].neg)
            else:
                r = Val("zero", int(out_mode == "downward"))
        _, code, f = spec_round(fo_spec, r, out_mode)
        return code, fl | f

    def rnd(spec, v, mode):
        nonlocal fl
        r, _, f = spec_round(spec, v, mode)
        fl |= f
        return r

    def add(spec, x, y, mode):
        nonlocal fl
        r, f = ieee_add(spec, x, y, mode)
        fl |= f
        return r

    def neg(v):
        return v if v.kind == "nan" else Val(v.kind, 1 - v.neg, -v.v)

    def tree(lst):
        if len(lst) == 1:
            return rnd(acc_spec, lst[0], acc_mode)
        h = len(lst) // 2
        return add(acc_spec, tree(lst[:h]), tree(lst[h:]), acc_mode)

    def chunk(ps, start):
        if order == "pairwise":
            s = tree(ps)
            return s if start is None else add(acc_spec, start, s, acc_mode)
        if start is not None:
            s, rest = rnd(acc_spec, start, acc_mode), ps
        else:
            s, rest = rnd(acc_spec, ps[0], acc_mode), ps[1:]
        e = Val("zero")
        for p in rest:
            if order == "sequential":
                s = add(acc_spec, s, p, acc_mode)
                continue
            y = add(acc_spec, p, neg(e), acc_mode)
            t = add(acc_spec, s, y, acc_mode)
            if t.kind in ("nan", "inf"):
                s, e = t, Val("zero")
                continue
            e = add(acc_spec, add(acc_spec, t, neg(s), acc_mode), neg(y), acc_mode)
            s = t
        return s

    K = len(P)
    if promote:
        F = None if c is None else rnd(prom_spec, c, "nearest_even")
        for c0 in range(0, K, promote):
            S = chunk(P[c0:c0 + promote], None)
            F = rnd(prom_spec, S, "nearest_even") if F is None else add(prom_spec, F, S, "nearest_even")
        S = Val("zero") if F is None else F
    elif K:
        S = chunk(P, c)
    else:
        S = Val("zero") if c is None else rnd(acc_spec, c, acc_mode)
    _, code, f = spec_round(fo_spec, S, out_mode)
    return code, fl | f
