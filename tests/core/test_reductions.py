"""IEEE 754-2019 9.4 reductions (issue 25): sum, dot, sumSquare, sumAbs,
scaledProd, scaledProdSum, scaledProdDiff, exact and rounded once, against exact
Fraction sums and products (tests/models/ieee754.py's decoding) rounded by the
MPFR reference's vectorised rounding (mpref.deliver), in every mode.

Vectors: random vectors of every length 0..40 (and a few of 1000) of every 8-bit
preset and two 16-bit formats, with special values mixed in."""
from fractions import Fraction
import math

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb

from ..models import ieee754 as ref
from ..models import mpref as mp
from ..models import rational as R

FMTS = [R.preset(n) for n in ("e4m3", "e5m2", "e4m3fnuz", "float8_e3m4", "hfp8_143", "float16", "bfloat16")] + [
    R.cfloat8_143(7)]
MODES = R.ALL_MODES


def _vectors(fmt, seed):
    """(a, b) vectors: lengths 0..40 and 1000; mostly finite codes, some specials."""
    rng = np.random.default_rng([seed, fmt.bits, fmt.exp_bits])
    cx = ref.Codes(fmt)
    finite = np.array([c for c in range(1 << fmt.bits) if not (cx.nan[c] or cx.inf[c])][::max(1, (1 << fmt.bits) // 4096)])
    special = np.array([c for c in range(1 << fmt.bits) if cx.nan[c] or cx.inf[c]][:8], np.int64)
    out = []
    for n in list(range(41)) + [1000]:
        a = rng.choice(finite, n)
        b = rng.choice(finite, n)
        if special.size and n and rng.random() < 0.15:
            a[rng.integers(0, n)] = rng.choice(special)
        out.append((a.astype(fmt.storage), b.astype(fmt.storage)))
    return out


def _exact(fmt, kind, a, b):
    """The record of the exact reduction (9.4): NaN for a NaN term or +inf and -inf
    terms (invalid for inf - inf or inf * 0, and for a signalling NaN), an infinity,
    or the exact sum; an empty or all-zero sum: +0 (-0 if every term is -0; a
    cancellation: "C")."""
    cx = ref.Codes(fmt)
    terms, infs, nan, inv, zs, df = [], set(), False, False, [], 0
    for i in range(len(a)):
        x, y = int(a[i]), int(b[i]) if kind == "dot" else int(a[i])
        df |= ref.DENORMAL if cx.sub[x] or (kind == "dot" and cx.sub[y]) else 0
        if cx.nan[x] or (kind == "dot" and cx.nan[y]):
            nan = True
            inv |= bool(cx.snan[x] or (kind == "dot" and cx.snan[y]))
            continue
        if kind in ("dot", "sum_square"):
            if (cx.inf[x] or cx.inf[y]) and (cx.zero[x] or cx.zero[y]):
                nan, inv = True, True
                continue
            if cx.inf[x] or cx.inf[y]:
                infs.add(bool(cx.sign[x]) != bool(cx.sign[y]))
                continue
            v = cx.value[x] * cx.value[y]
            zs.append(bool(cx.sign[x]) != bool(cx.sign[y]))
        else:
            neg = bool(cx.sign[x]) and kind != "sum_abs"
            if cx.inf[x]:
                infs.add(neg)
                continue
            v = abs(cx.value[x]) if kind == "sum_abs" else cx.value[x]
            zs.append(neg)
        terms.append(v)
    if nan or len(infs) == 2:
        return ref.nan_record(df | (ref.INVALID if inv or len(infs) == 2 else 0), nan)
    if infs:
        return ref.inf_record(infs.pop(), df)
    s = sum(terms, Fraction(0))
    if s:
        return ref.record_of(s, df)
    if not terms:                           # the empty sum
        return ref.zero_record(0, df)
    if any(t != 0 for t in terms) or (any(zs) and not all(zs)):
        return ("C", 0, 0, 0, False, df, False)   # a cancellation (6.3): -0 only downward
    return ref.zero_record(all(zs), df)           # zeros of one sign: that zero


@pytest.mark.parametrize("kind", ["sum", "dot", "sum_square", "sum_abs"])
def test_sums_and_dots(kind):
    total, failures = 0, []
    for k, fmt in enumerate(FMTS):
        sf = R.to_softfp8(softfp8, fmt)
        vecs = _vectors(fmt, k)
        rows = [_exact(fmt, kind, a, b) for a, b in vecs]
        for mode in MODES:
            recs = ref.records([("Z", int(mode == "downward")) + r[2:] if r[0] == "C" else r for r in rows])
            Rb = np.full(recs.size, 0x9E3779B9, np.uint32)
            ec, ef, cls = mp.deliver(fmt, recs, mode, None, "after", Rb if mode == "stochastic" else None)
            for i, (a, b) in enumerate(vecs):
                fn = getattr(sfb, kind)
                args = (a, b) if kind == "dot" else (a,)
                if mode == "stochastic":
                    # the one random word of a reduction: seeded; the reference takes the same word
                    word = sfb._ext.random_u32(1234, 0, 0)
                    e2, f2, c2 = mp.deliver(fmt, ref.records([recs_row(recs, i)]), mode, None, "after",
                                            np.array([word], np.uint32))
                    got, gotf = fn(sf, *args, rounding=mode, seed=1234)
                    exp, expf, cl = e2[0], f2[0], c2[0]
                else:
                    got, gotf = fn(sf, *args, rounding=mode)
                    exp, expf, cl = ec[i], ef[i], cls[i]
                bad = R.compare(fmt, np.array([got]), np.array([gotf]), np.array([exp]), np.array([expf]),
                                np.array([cl]))
                if bad.size:
                    failures.append("%s %s %s n=%d: expected %s %s, got %s %s" % (
                        kind, fmt.name, mode, len(a), R.describe(fmt, exp), R.flag_names(int(expf)),
                        R.describe(fmt, int(got)), R.flag_names(int(gotf))))
                total += 1
    assert total == len(FMTS) * len(MODES) * 42
    assert not failures, "\n".join(failures[:40])


def recs_row(recs, i):
    return (str(recs.kind[i]), bool(recs.sign[i]), int(recs.sig[i]), int(recs.exp[i]), bool(recs.sticky[i]),
            int(recs.opflags[i]), bool(recs.from_nan[i]))


def test_reduction_axis_and_empty():
    f = softfp8.e4m3
    a = np.array([[0x38, 0x40, 0x48], [0x30, 0x30, 0x30]], np.uint8)
    r, fl = sfb.dot(f, a, a, axis=1)
    assert r.shape == (2,)
    assert [int(x) for x in r] == [int(sfb.from_float(np.array([1 + 4 + 16.0]), f)[0][0]),
                                   int(sfb.from_float(np.array([3 * 0.25]), f)[0][0])]
    assert int(sfb.sum_abs(f, np.zeros(0, np.uint8))[0]) == 0
    with pytest.raises(ValueError, match="axis 2"):
        sfb.sum_square(f, a, axis=2)
    with pytest.raises(ValueError, match="broadcast"):
        sfb.dot(f, a, a[:, :2])


def _prod_exact(fmt, a, b, op):
    """(pr code, sf, flags) expected for scaledProd / ProdSum / ProdDiff: the exact
    product P of the factors; pr = P 2^-sf in [1, 2) (sf = floor(log2 |P|)) rounded
    once (nearest even); NaN, infinities, zeros as the products of 9.4 give them."""
    cx = ref.Codes(fmt)
    facs, nan, inv, infs, zero, neg = [], False, False, 0, False, False
    for i in range(len(a)):
        x = int(a[i])
        ops = [x] if op is None else [x, int(b[i])]
        if any(cx.nan[c] for c in ops):
            nan = True
            inv |= any(cx.snan[c] for c in ops)
            continue
        if op is None:
            if cx.inf[x]:
                infs += 1
                neg ^= bool(cx.sign[x])
                continue
            v = cx.value[x]
        else:
            y = int(b[i])
            sy = bool(cx.sign[y]) ^ (op == "diff")
            if cx.inf[x] and cx.inf[y] and bool(cx.sign[x]) != sy:
                nan, inv = True, True
                continue
            if cx.inf[x] or cx.inf[y]:
                infs += 1
                neg ^= bool(cx.sign[x]) if cx.inf[x] else sy
                continue
            v = cx.value[x] + (-cx.value[y] if op == "diff" else cx.value[y])
        if v == 0:
            zero = True
            if op is None:
                neg ^= bool(cx.sign[x])
            else:   # x + y = 0 exactly: -0 only for (-0) + (-0) (6.3)
                neg ^= bool(cx.zero[x] and cx.zero[y] and cx.sign[x] and sy)
        else:
            neg ^= v < 0
        facs.append(abs(v))
    if nan or (infs and zero):
        return None, 0, ref.INVALID if (inv or (infs and zero)) else 0
    if infs:
        return ("inf", neg), 0, 0
    if zero:
        return ("zero", neg), 0, 0
    p = math.prod(facs, start=Fraction(1))
    sf = p.numerator.bit_length() - p.denominator.bit_length()
    if Fraction(2) ** sf > p:
        sf -= 1
    return ("val", neg, p / Fraction(2) ** sf), sf, 0


@pytest.mark.parametrize("op", [None, "sum", "diff"])
def test_scaled_products(op):
    total, failures = 0, []
    name = {None: "scaled_prod", "sum": "scaled_prod_sum", "diff": "scaled_prod_diff"}[op]
    for k, fmt in enumerate(FMTS):
        sf_ = R.to_softfp8(softfp8, fmt)
        for a, b in _vectors(fmt, 10 + k)[:41]:
            kind, sf, fl = _prod_exact(fmt, a, b, op)
            args = (a,) if op is None else (a, b)
            (pr, gsf), gfl = getattr(sfb, name)(sf_, *args)
            pr, gsf, gfl = int(pr), int(gsf), int(gfl) & ~R.DENORMAL
            if kind is None:
                ok = R.is_nan(fmt, pr) and gsf == 0 and gfl == fl
            elif kind[0] in ("inf", "zero"):
                want = R.deliver(fmt, ("I" if kind[0] == "inf" else "Z", int(kind[1])))[0]
                ok = (pr, gsf) == (want, 0)
            else:
                want, wfl = R.round_pack(fmt, int(kind[1]), kind[2])
                ok = (pr, gsf, gfl) == (want, sf, wfl)
            if not ok:
                failures.append("%s %s n=%d: got (%s, %d) %s, expected %s sf=%d" % (
                    name, fmt.name, len(a), R.describe(fmt, pr), gsf, R.flag_names(gfl), kind, sf))
            total += 1
    assert total == 3 * 0 + len(FMTS) * 41
    assert not failures, "\n".join(failures[:40])
