"""fmod, modf, frexp, ldexp, heaviside, divmod and logical_not against an exact reference.

The expected results are built here from tests/models/rational.py alone: the
model decodes every code into an exact dyadic n * 2**e, the C99 / NumPy
definition is applied with Python integers (fmod: |a| mod |b| with the sign of
a; modf: integer and fractional parts; frexp: a = m * 2**e with 0.5 <= |m| < 1;
ldexp: n * 2**(e + k); heaviside: 0 / h0 / 1), and the model's one rounding
(`deliver`) puts the exact result into the format (it changes it only in a
Tesla gap, for flushed subnormals or outside the range).  Exhaustive on every
8-bit format of the model (all pairs for the binary functions) in all 24
deterministic configurations (6 modes x saturation x tininess); random samples
on 16-bit formats.
"""
from __future__ import annotations

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb

from ..models import rational as ref

FORMATS = ref.eight_bit_formats()
IDS = [f.name for f in FORMATS]
CONFIGS = [(m, s, t) for m in ref.MODES for s in (False, True) for t in ref.TININESS]
assert len(CONFIGS) == 24 and len(FORMATS) == 20
A = np.repeat(np.arange(256, dtype=np.uint8), 256)
B = np.tile(np.arange(256, dtype=np.uint8), 256)
CODES = np.arange(256, dtype=np.uint8)
LDEXP_K = np.arange(-40, 41)  # every shift that moves an 8-bit value across its range


# ---------------------------------------------------------------- reference ----

def _den(*ops):
    return ref.DENORMAL if any(o[5] for o in ops) else 0


def _zero_or(sign, n, e):
    return ("Z", sign) if n == 0 else ("F", sign, ref._dy(n, e))


def ref_fmod(fmt, a, b):
    x, y = ref._opnd(fmt, a), ref._opnd(fmt, b)
    fl = _den(x, y)
    if x[0] == "N" or y[0] == "N":
        d, f = ref._nan_desc(fmt, (a, x), (b, y))
        return d, fl | f
    if x[0] == "I" or y[0] == "Z":
        return ref._CANON, fl | ref.INVALID
    if x[0] == "Z":
        return ("Z", x[1]), fl
    if y[0] == "I":
        return ("F", x[1], ref._dy(x[2], x[3])), fl
    e = min(x[3], y[3])
    r = (x[2] << (x[3] - e)) % (y[2] << (y[3] - e))  # exact, both positive: C fmod of |a|, |b|
    return _zero_or(x[1], r, e), fl


def ref_modf(fmt, a):
    """((fractional, integral) descriptors, flags)"""
    x = ref._opnd(fmt, a)
    fl = _den(x)
    s = x[1]
    if x[0] == "N":
        d, f = ref._nan_desc(fmt, (a, x))
        return (d, d), fl | f
    if x[0] == "I":
        return (("Z", s), ("I", s)), fl
    if x[0] == "Z":
        return (("Z", s), ("Z", s)), fl
    n, e = x[2], x[3]
    if e >= 0:
        return (("Z", s), ("F", s, ref._dy(n, e))), fl
    ip = n >> -e
    return (_zero_or(s, n - (ip << -e), e), _zero_or(s, ip, 0)), fl


def ref_frexp(fmt, a):
    """(mantissa descriptor, exponent, flags)"""
    x = ref._opnd(fmt, a)
    fl = _den(x)
    if x[0] == "N":
        d, f = ref._nan_desc(fmt, (a, x))
        return d, 0, fl | f
    if x[0] in "IZ":
        return (x[0], x[1]), 0, fl
    k = x[2].bit_length()  # 2**(k-1) <= n < 2**k
    return ("F", x[1], ref._dy(x[2], -k)), x[3] + k, fl


def ref_ldexp(fmt, a, k):
    x = ref._opnd(fmt, a)
    fl = _den(x)
    if x[0] == "N":
        d, f = ref._nan_desc(fmt, (a, x))
        return d, fl | f
    if x[0] in "IZ":
        return (x[0], x[1]), fl
    return ("F", x[1], ref._dy(x[2], x[3] + k)), fl


def _table(fmt, items):
    return ref.build_table(fmt, items)


def _check(fmt, name, cfg, got, gotf, exp, expf, cls, operands):
    got = np.asarray(got).reshape(-1)
    gotf = np.asarray(gotf).reshape(-1)
    bad = ref.compare(fmt, got, gotf, exp, expf, cls)
    if bad.size:
        lines = [f"{fmt.name} {name} {cfg}: {bad.size} mismatches"]
        for i in bad[:10]:
            ops = ", ".join(ref.describe(fmt, int(o[i])) if o.dtype.kind == "u" else str(o[i])
                            for o in operands)
            lines.append(f"  {name}({ops}): expected {ref.describe(fmt, int(exp[i]))} "
                         f"{ref.flag_names(expf[i])}, got {ref.describe(fmt, int(got[i]))} "
                         f"{ref.flag_names(gotf[i])}")
        pytest.fail("\n".join(lines))
    return got.size


def _every_config(fmt, name, operands, built, copy=None):
    """bits.<name>(operands) against the table `built` in all 24 configurations;
    where copy is set the expected code is the second operand itself"""
    table, idx, opfl = built
    fn = getattr(sfb, name)
    n = 0
    for mode, sat, tin in CONFIGS:
        exp, expf, cls = table.evaluate(idx, mode, sat, tin)
        if copy is not None:
            exp, cls = np.where(copy, operands[1], exp), cls & ~copy
        got, gotf = fn(ref.to_softfp8(softfp8, fmt), *operands, rounding=mode, saturate=sat,
                       tininess=tin)
        n += _check(fmt, name, (mode, sat, tin), got, gotf, exp, expf | opfl, cls, operands)
    return n


# ------------------------------------------------------- exhaustive, 8-bit ----

@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_fmod_exhaustive(fmt):
    built = _table(fmt, [ref_fmod(fmt, a, b) for a in range(256) for b in range(256)])
    assert _every_config(fmt, "fmod", (A, B), built) == 65536 * 24


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_heaviside_exhaustive(fmt):
    items, copy = [], np.zeros(65536, bool)
    one = ("F", 0, ref._dy(1, 0))
    for i, (a, h) in enumerate(zip(A.tolist(), B.tolist())):
        x = ref._opnd(fmt, a)
        fl = _den(x)
        if x[0] == "N":
            d, f = ref._nan_desc(fmt, (a, x))
            items.append((d, fl | f))
        elif x[0] == "Z":  # h0 itself, code for code (a selection, as maximum)
            copy[i] = True
            items.append((("Z", 0), fl))
        else:
            items.append((("Z", 0) if x[1] else one, fl))
    assert _every_config(fmt, "heaviside", (A, B), _table(fmt, items), copy) == 65536 * 24


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_modf_exhaustive(fmt):
    sfmt = ref.to_softfp8(softfp8, fmt)
    res = [ref_modf(fmt, a) for a in range(256)]
    frac = _table(fmt, [(d[0], 0) for d, _ in res])
    intg = _table(fmt, [(d[1], 0) for d, _ in res])
    opfl = np.array([f for _, f in res], np.uint8)
    n = 0
    for mode, sat, tin in CONFIGS:
        ef, eff, cf = frac[0].evaluate(frac[1], mode, sat, tin)
        ei, eif, ci = intg[0].evaluate(intg[1], mode, sat, tin)
        (gf, gi), gotf = sfb.modf(sfmt, CODES, rounding=mode, saturate=sat, tininess=tin)
        # one flag byte for both results: the OR of both deliveries
        n += _check(fmt, "modf.frac", (mode, sat, tin), gf, gotf, ef, eff | eif | opfl, cf, (CODES,))
        n += _check(fmt, "modf.int", (mode, sat, tin), gi, gotf, ei, eff | eif | opfl, ci, (CODES,))
    assert n == 2 * 256 * 24


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_frexp_exhaustive(fmt):
    sfmt = ref.to_softfp8(softfp8, fmt)
    res = [ref_frexp(fmt, a) for a in range(256)]
    table, idx, opfl = _table(fmt, [(d, f) for d, _, f in res])
    exps = np.array([e for _, e, _ in res], np.int64)
    n = 0
    for mode, sat, tin in CONFIGS:
        exp, expf, cls = table.evaluate(idx, mode, sat, tin)
        (gm, ge), gotf = sfb.frexp(sfmt, CODES, rounding=mode, saturate=sat, tininess=tin)
        assert ge.dtype == np.int32
        np.testing.assert_array_equal(ge, exps)
        n += _check(fmt, "frexp", (mode, sat, tin), gm, gotf, exp, expf | opfl, cls, (CODES,))
    assert n == 256 * 24


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_ldexp_exhaustive(fmt):
    a = np.repeat(CODES, LDEXP_K.size)
    k = np.tile(LDEXP_K, 256)
    built = _table(fmt, [ref_ldexp(fmt, x, y) for x, y in zip(a.tolist(), k.tolist())])
    assert _every_config(fmt, "ldexp", (a, k), built) == 256 * 81 * 24


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_ldexp_huge_exponents_clamp(fmt):
    """n beyond every format's range (int64 extremes, Python ints beyond int64) gives
    what a shift of +-400 gives (all overflow or all underflow: E8M0 spans 2^254), never a
    wrapped int."""
    sfmt = ref.to_softfp8(softfp8, fmt)
    for big, small in ((400, [2**24 + 1, 2**31, 2**40, 2**63 - 1, 2**64, 10**30]),
                       (-400, [-2**24 - 1, -2**31 - 1, -2**40, -2**63, -10**30])):
        want = sfb.ldexp(sfmt, CODES, big)
        for k in small:
            got = sfb.ldexp(sfmt, CODES, k)
            np.testing.assert_array_equal(got[0], want[0], err_msg=str(k))
            np.testing.assert_array_equal(got[1], want[1], err_msg=str(k))


def _rand_pairs(fmt, n, seed):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 1 << fmt.bits, n).astype(np.uint16),
            rng.integers(0, 1 << fmt.bits, n).astype(np.uint16))


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_divmod_is_floordiv_and_remainder(fmt):
    """divmod = (floordiv, remainder) code for code, flags ORed, in every configuration;
    on finite pairs also the exact floor quotient and a - b*q, each rounded once."""
    sfmt = ref.to_softfp8(softfp8, fmt)
    n = 0
    for mode, sat, tin in CONFIGS:
        kw = dict(rounding=mode, saturate=sat, tininess=tin)
        (q, r), fl = sfb.divmod(sfmt, A, B, **kw)
        q0, f0 = sfb.floordiv(sfmt, A, B, **kw)
        r0, f1 = sfb.remainder(sfmt, A, B, **kw)
        np.testing.assert_array_equal(q, q0)
        np.testing.assert_array_equal(r, r0)
        np.testing.assert_array_equal(fl, f0 | f1)
        n += A.size
    assert n == 65536 * 24
    # independent: finite non-zero divisor, nearest_even
    items_q, items_r, keep = [], [], []
    for i, (a, b) in enumerate(zip(A.tolist(), B.tolist())):
        x, y = ref._opnd(fmt, a), ref._opnd(fmt, b)
        if x[0] not in "FZ" or y[0] != "F":
            continue
        e = min(x[3], y[3])
        va = (x[2] << (x[3] - e)) * (-1 if x[1] else 1) if x[0] == "F" else 0
        vb = (y[2] << (y[3] - e)) * (-1 if y[1] else 1)
        qv = va // vb
        rv = va - vb * qv
        fl = _den(x, y)
        qs = (x[1] ^ y[1]) if qv == 0 else int(qv < 0)
        items_q.append((_zero_or(qs, abs(qv), 0), fl))
        items_r.append((_zero_or(y[1] if rv == 0 else int(rv < 0), abs(rv), e), fl))
        keep.append(i)
    keep = np.array(keep)
    tq, iq, fq = _table(fmt, items_q)
    tr, ir, _ = _table(fmt, items_r)
    eq, eqf, cq = tq.evaluate(iq)
    er, erf, cr = tr.evaluate(ir)
    (q, r), fl = sfb.divmod(sfmt, A[keep], B[keep])
    _check(fmt, "divmod.q", "ne", q, fl, eq, eqf | erf | fq, cq, (A[keep], B[keep]))
    _check(fmt, "divmod.r", "ne", r, fl, er, eqf | erf | fq, cr, (A[keep], B[keep]))
    assert keep.size > 10000


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_logical_not_exhaustive(fmt):
    sfmt = ref.to_softfp8(softfp8, fmt)
    want = np.array([ref._opnd(fmt, a)[0] == "Z" for a in range(256)])  # NaN is non-zero
    got = sfb.logical_not(sfmt, CODES)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)
    assert int(want.sum()) >= (0 if fmt.subnormals == "nozero" else 1)   # E8M0: no zero


TESLA = [f for f in FORMATS if f.subnormals == "tesla"]


@pytest.mark.parametrize("fmt", TESLA, ids=[f.name for f in TESLA])
def test_stochastic_random_bits_in_tesla_gaps(fmt):
    """fmod and ldexp results in a Tesla gap or beyond the range are rounded
    stochastically with the caller's random bits (R = low sr_bits bits) as the model
    rounds them."""
    sfmt = ref.to_softfp8(softfp8, fmt)
    rng = np.random.default_rng(99)
    k = np.tile(LDEXP_K, 256)
    a = np.repeat(CODES, LDEXP_K.size)
    cases = (("fmod", (A, B), _table(fmt, [ref_fmod(fmt, x, y) for x in range(256) for y in range(256)])),
             ("ldexp", (a, k), _table(fmt, [ref_ldexp(fmt, x, y) for x, y in zip(a.tolist(), k.tolist())])))
    n = inexact = 0
    for name, operands, (table, idx, opfl) in cases:
        for N in (32, 3):
            R = rng.integers(0, 2**32, size=idx.shape, dtype=np.uint32)
            exp, expf, cls = table.evaluate(idx, "stochastic", False, "after", R=R, N=N)
            got, gotf = getattr(sfb, name)(sfmt, *operands, rounding="stochastic", sr_bits=N,
                                           random_bits=R)
            n += _check(fmt, name, ("stochastic", N), got, gotf, exp, expf | opfl, cls, operands)
            inexact += int((gotf & ref.INEXACT).astype(bool).sum())
    assert n == (65536 + 256 * 81) * 2
    assert inexact > 100  # the stochastic rounding was exercised


# ------------------------------------------------------- 16-bit, samples ----

SIXTEEN = [ref.preset("float16"), ref.preset("bfloat16"), ref.preset("uhp"),
           ref.shp(15), ref.shp(40, "ieee")]
SIXTEEN_IDS = [f.name for f in SIXTEEN]
MODES16 = [("nearest_even", False, "after"), ("toward_zero", True, "before"),
           ("upward", False, "after"), ("downward", True, "after")]
N16 = 20000


@pytest.mark.parametrize("fmt", SIXTEEN, ids=SIXTEEN_IDS)
def test_sixteen_bit_samples(fmt):
    sfmt = ref.to_softfp8(softfp8, fmt)
    a, b = _rand_pairs(fmt, N16, 16)
    k = np.random.default_rng(17).integers(-60, 61, N16)
    tf = _table(fmt, [ref_fmod(fmt, x, y) for x, y in zip(a.tolist(), b.tolist())])
    tl = _table(fmt, [ref_ldexp(fmt, x, y) for x, y in zip(a.tolist(), k.tolist())])
    fr = [ref_frexp(fmt, x) for x in a.tolist()]
    tx = _table(fmt, [(d, f) for d, _, f in fr])
    mo = [ref_modf(fmt, x) for x in a.tolist()]
    tmf = _table(fmt, [(d[0], f) for d, f in mo])
    tmi = _table(fmt, [(d[1], 0) for d, _ in mo])
    n = 0
    for mode, sat, tin in MODES16:
        kw = dict(rounding=mode, saturate=sat, tininess=tin)
        cfg = (mode, sat, tin)
        exp, expf, cls = tf[0].evaluate(tf[1], mode, sat, tin)
        n += _check(fmt, "fmod", cfg, *sfb.fmod(sfmt, a, b, **kw), exp, expf | tf[2], cls, (a, b))
        exp, expf, cls = tl[0].evaluate(tl[1], mode, sat, tin)
        n += _check(fmt, "ldexp", cfg, *sfb.ldexp(sfmt, a, k, **kw), exp, expf | tl[2], cls, (a, k))
        exp, expf, cls = tx[0].evaluate(tx[1], mode, sat, tin)
        (m, e), fl = sfb.frexp(sfmt, a, **kw)
        np.testing.assert_array_equal(e, [x for _, x, _ in fr])
        n += _check(fmt, "frexp", cfg, m, fl, exp, expf | tx[2], cls, (a,))
        ef, eff, cf = tmf[0].evaluate(tmf[1], mode, sat, tin)
        ei, eif, ci = tmi[0].evaluate(tmi[1], mode, sat, tin)
        (gf, gi), fl = sfb.modf(sfmt, a, **kw)
        n += _check(fmt, "modf.frac", cfg, gf, fl, ef, eff | eif | tmf[2], cf, (a,))
        n += _check(fmt, "modf.int", cfg, gi, fl, ei, eff | eif | tmf[2], ci, (a,))
    assert n == 5 * N16 * len(MODES16)


# ----------------------------------------------------- named special cases ----

def _c(fmt, v):
    return int(sfb.from_float(np.float64(v), fmt)[0])


def test_special_values_float16():
    f = softfp8.float16
    inf, nan = _c(f, np.inf), _c(f, np.nan)
    (fr, ip), fl = sfb.modf(f, [inf, _c(f, -np.inf), _c(f, -0.0), _c(f, -2.5), _c(f, -3.0)])
    assert [sfb.to_float(x, f)[0].item() for x in fr] == [0.0, -0.0, -0.0, -0.5, -0.0]
    assert [np.signbit(sfb.to_float(x, f)[0]) for x in fr] == [False, True, True, True, True]
    assert [sfb.to_float(x, f)[0].item() for x in ip] == [np.inf, -np.inf, -0.0, -2.0, -3.0]
    assert not fl.any()
    r, fl = sfb.fmod(f, [inf, _c(f, 1.0), _c(f, -7.0), _c(f, 7.0)], [_c(f, 1.0), 0, _c(f, 2.0), inf])
    v = sfb.to_float(r, f)[0]
    assert np.isnan(v[0]) and np.isnan(v[1]) and v[2] == -1.0 and v[3] == 7.0
    assert list(fl) == [ref.INVALID, ref.INVALID, 0, 0]
    (m, e), fl = sfb.frexp(f, [inf, nan, 0, _c(f, 3.0), 1])
    assert list(e) == [0, 0, 0, 2, -23]
    assert sfb.to_float(m, f)[0][3] == 0.75 and sfb.to_float(m, f)[0][4] == 0.5


def test_frexp_where_half_is_out_of_range():
    """cfloat8_143(bias=40): max 1.875 * 2**-25 < 0.5: the mantissa overflows and is
    delivered by the format's rules (a `none` format saturates: +-max, overflow)."""
    f = softfp8.cfloat8_143(bias=40)
    (m, e), fl = sfb.frexp(f, [0x38, 0xb8])
    assert list(m) == [0x7f, 0xff] and list(e) == [-32, -32]
    assert list(fl) == [ref.OVERFLOW | ref.INEXACT] * 2


# ------------------------------------------------------------- CLI calc ----

def _calc(*argv):
    from softfp8.__main__ import build_parser
    lines = []
    ns = build_parser().parse_args(["calc", *argv])
    assert ns.func(ns, out=lines.append) == 0
    return lines[0]


def test_cli_calc_two_result_and_int_operand_kinds():
    assert _calc("e4m3", "modf", "0xc4") == "0x80  -0.0  0xc4  -3.0  flags: none"
    assert _calc("e4m3", "frexp", "0x3c") == "0x34  0.75  exp 1  flags: none"
    assert _calc("e4m3", "divmod", "0x48", "0x38") == "0x48  4.0  0x00  0.0  flags: none"
    assert _calc("e4m3", "ldexp", "0x38", "-3") == "0x20  0.125  flags: none"
    assert _calc("e4m3", "ldexp", "0x38", "100") == "0x7f  nan  flags: INEXACT|OVERFLOW"
    assert _calc("cfloat8_143", "frexp", "0x38", "--bias", "40").endswith(
        "exp -32  flags: INEXACT|OVERFLOW")
    from softfp8.__main__ import UsageError
    with pytest.raises(UsageError, match="bad integer operand 'x'"):
        _calc("e4m3", "ldexp", "0x38", "x")
