"""IEEE P3109 formats and projection against an independent exact reference.

The reference below is written from the P3109 interim report's definitions only
(format parameters, Decode, RoundToPrecision, Saturate, Encode; exact Python
Fractions), never from softfp8's C code:

* Binary{K}p{P}{s|u}{e|f}: bias 2^(K-P-1) signed, 2^(K-P) unsigned; code 2^(K-1)
  (signed) or 2^K - 1 (unsigned) is the one NaN; the extended domain has +inf at
  2^(K-1) - 1 (signed) or 2^K - 2 (unsigned) and -inf at 2^K - 1 (signed); signed
  codes above 2^(K-1) are the negatives of the codes below; otherwise T = code mod
  2^(P-1), E = code div 2^(P-1), value T 2^(1-P) 2^(1-B) (E = 0) or
  (1 + T 2^(1-P)) 2^(E-B).
* Project(x) = Encode(Saturate(RoundToPrecision(x))): q = max(floor(log2|x|), 1-B)
  - P + 1, s = |x| 2^-q, nu = s - floor(s), rounding away from zero as each mode
  says (StochasticA/B/C with n random bits and the integer r), then the saturation
  table of SatFinite / SatPropagate / SatNone (v4.0: SatNone saturates to the
  finite range in the finite domain).

Checked: every code of every format with K = 3..8 (all P, signed and unsigned, both
domains: 120 formats); projection, in every format with K <= 6 and twelve with K = 7
and 8, of a dense set of float64 values (every code, the
points between neighbours in eighths, midpoints and their float64 neighbours, beyond
the largest value up to the float64 maximum, below the smallest subnormal, +-0, +-inf,
NaN) in every rounding mode and saturation mode; the stochastic variants for every r
with n = 1 and 3 on points in sixteenths of each gap (every midpoint of their grids) and
for random r with n = 8 and 31; projection from float32, from softfp8 formats and
between P3109 formats; K = 9..15 formats (every code, sampled projection);
add/sub/mul/div/sqrt of three P3109 formats against tests/models/rational.py and
the elementary functions of two against tests/models/mpref.py (both extended with the
P3109 special-value scheme); gfloat, if installed.
"""
from fractions import Fraction
import math

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb
from softfp8 import p3109

from ..models import rational as ref

# ----------------------------------------------------------------------------
# the reference, from the report
# ----------------------------------------------------------------------------

NAN, PINF, NINF = "nan", "+inf", "-inf"
MODES = ("TowardZero", "TowardNegative", "TowardPositive", "NearestTiesToEven",
         "NearestTiesToAway", "ToOdd")
SATS = ("SatFinite", "SatPropagate", "SatNone")


class RefFormat:
    def __init__(self, k, p, signed, extended):
        self.k, self.p, self.signed, self.extended = k, p, signed, extended
        self.bias = 2 ** (k - p - 1) if signed else 2 ** (k - p)
        self.values = [self.decode(c) for c in range(2 ** k)]
        fin = [v for v in self.values if isinstance(v, Fraction)]
        self.m_hi = max(fin)
        self.encode_table = {}
        for c, v in enumerate(self.values):
            assert v not in self.encode_table, (self, c, v)  # one code per datum
            self.encode_table[v] = c

    def __repr__(self):
        return "binary%dp%d%s%s" % (self.k, self.p, "s" if self.signed else "u",
                                    "e" if self.extended else "f")

    def decode(self, code):
        k, p = self.k, self.p
        if self.signed:
            if code == 2 ** (k - 1):
                return NAN
            if self.extended and code == 2 ** (k - 1) - 1:
                return PINF
            if self.extended and code == 2 ** k - 1:
                return NINF
            if code > 2 ** (k - 1):
                return -self.decode(code - 2 ** (k - 1))
        else:
            if code == 2 ** k - 1:
                return NAN
            if self.extended and code == 2 ** k - 2:
                return PINF
        t, e = code % 2 ** (p - 1), code // 2 ** (p - 1)
        frac = Fraction(t, 2 ** (p - 1))
        if e == 0:
            return frac * Fraction(2) ** (1 - self.bias)
        return (1 + frac) * Fraction(2) ** (e - self.bias)


def floor_log2(a):
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > a else e


def rnite(num, den):
    """Round num/den >= 0 to the nearest integer, ties to even."""
    fl = num // den
    twice_rem = 2 * (num - fl * den)
    if twice_rem < den or (twice_rem == den and fl % 2 == 0):
        return fl
    return fl + 1


class Rounded:
    """RoundToPrecision's pieces for one finite non-zero x: sign, q, floor(s), nu."""

    def __init__(self, x, p, b):
        self.neg = x < 0
        a = abs(x)
        self.q = max(floor_log2(a), 1 - b) - p + 1
        self.unit = Fraction(2) ** self.q
        s = a / self.unit
        self.fs = s.numerator // s.denominator
        self.nu = s - self.fs
        self.even = self.fs % 2 == 0 if p > 1 else (self.fs == 0 or (self.q + b) % 2 == 0)

    def away(self, mode, n=None, r=None):
        nu = self.nu
        if mode == "TowardZero":
            return False
        if mode == "TowardPositive":
            return nu > 0 and not self.neg
        if mode == "TowardNegative":
            return nu > 0 and self.neg
        if mode == "NearestTiesToAway":
            return nu >= Fraction(1, 2)
        if mode == "NearestTiesToEven":
            return nu > Fraction(1, 2) or (nu == Fraction(1, 2) and not self.even)
        if mode == "ToOdd":
            return nu > 0 and self.even
        num, den = nu.numerator, nu.denominator
        if mode == "A":
            return ((num << n) // den) + r >= 2 ** n
        if mode == "B":
            return ((num << (n + 1)) // den) + 2 * r + 1 >= 2 ** (n + 1)
        if mode == "C":
            return rnite(num << n, den) + r >= 2 ** n
        raise ValueError(mode)

    def value(self, mode, n=None, r=None):
        i = self.fs + 1 if self.away(mode, n, r) else self.fs
        v = i * self.unit
        return -v if self.neg else v


def saturate(F, x, sat, mode):
    """The report's Saturate step (v4.0, 4.7.5: its table, in its order)."""
    m_hi = F.m_hi
    m_lo = -m_hi if F.signed else Fraction(0)
    if x == NAN:
        return NAN
    if isinstance(x, Fraction) and m_lo <= x <= m_hi:
        return x
    above = isinstance(x, Fraction) and x > m_hi
    below = isinstance(x, Fraction) and x < m_lo
    if sat == "SatFinite":
        return m_hi if (above or x == PINF) else m_lo
    if sat == "SatPropagate":
        if x == PINF:
            return PINF if F.extended else m_hi
        if x == NINF:
            return NINF if (F.signed and F.extended) else m_lo
        return m_hi if above else m_lo
    assert sat == "SatNone"
    if x == PINF:
        return PINF if F.extended else m_hi
    if x == NINF:
        if F.signed and F.extended:
            return NINF
        return NAN if not F.signed else m_lo
    if above and mode == "ToOdd" and not F.signed and F.extended:
        return m_hi
    if above and mode in ("TowardZero", "TowardNegative"):
        return m_hi
    if below and mode in ("TowardZero", "TowardPositive"):
        return m_lo
    if below:
        if F.signed and F.extended:
            return NINF
        return NAN if not F.signed else m_lo
    return PINF if F.extended else m_hi


def project_ref(F, x, sat, mode, n=None, r=None, rounded=None):
    """x: Fraction, 'nan', '+inf' or '-inf' -> code."""
    if isinstance(x, Fraction) and x != 0:
        rd = rounded or Rounded(x, F.p, F.bias)
        y = rd.value(mode, n, r)
    else:
        y = x
    z = saturate(F, y, sat, mode)
    if isinstance(z, Fraction) and z == 0:
        z = Fraction(0)
    return F.encode_table[z]


# ----------------------------------------------------------------------------
# formats
# ----------------------------------------------------------------------------

ALL = [(k, p, s, e) for k in range(3, 9) for s in (True, False)
       for p in range(1, k if s else k + 1) for e in (False, True)]
assert len(ALL) == 120
_REF = {}


def ref_format(k, p, s, e):
    key = (k, p, s, e)
    if key not in _REF:
        _REF[key] = RefFormat(*key)
    return _REF[key]


def sf_format(k, p, s, e):
    return p3109.format(k, p, signed=s, domain="extended" if e else "finite")


def _id(t):
    return repr(RefFormat.__new__(RefFormat)) if False else "binary%dp%d%s%s" % (
        t[0], t[1], "s" if t[2] else "u", "e" if t[3] else "f")


def test_every_code_of_every_format():
    n = 0
    for key in ALL:
        F, f = ref_format(*key), sf_format(*key)
        assert f.name == repr(F) and f.bits == F.k and f.signed == F.signed
        assert softfp8.lookup(f.name) is f and softfp8.lookup(f.name.upper()) is f
        codes = np.arange(2 ** F.k, dtype=f.storage)
        got, _ = sfb.to_float(codes, f)
        for c, v in enumerate(F.values):
            g = float(got[c])
            if v == NAN:
                assert math.isnan(g), (F, c)
            elif v in (PINF, NINF):
                assert g == (math.inf if v == PINF else -math.inf), (F, c, g)
            else:
                assert not math.isinf(g) and Fraction(g) == v, (F, c, g, v)
                assert not (g == 0 and math.copysign(1, g) < 0), (F, c)  # no -0
            n += 1
        # dtype and properties
        assert f.max == float(F.m_hi)
        assert f.decode(f._special()["default_nan"]) != f.decode(f._special()["default_nan"])
        arr = codes.view(f.dtype)
        assert int(np.isnan(arr).sum()) == 1
        assert int(np.isinf(arr).sum()) == ((2 if F.signed else 1) if F.extended else 0)
        info = np.finfo(f.dtype)
        assert float(info.max) == float(F.m_hi)
    # the signed finite formats are FNUZ: Binary8p4sf is E4M3FNUZ, Binary8p3sf E5M2FNUZ
    assert sf_format(8, 4, True, False).params == softfp8.e4m3fnuz.params
    assert sf_format(8, 3, True, False).params == softfp8.e5m2fnuz.params
    assert n == sum(2 ** k for k, *_ in ALL) == 2 * sum((4 * k - 2) * 2 ** k for k in range(3, 9)) // 2


def test_bad_arguments():
    for args, kw in [((2, 1), {}), ((16, 3), {}), ((8, 8), {}), ((8, 0), {}), ((8, 9),
                     {"signed": False}), ((8, 3), {"domain": "ext"}), ((8, 3), {"signed": 1})]:
        with pytest.raises((ValueError, TypeError)):
            p3109.format(*args, **kw)
    f = p3109.format(8, 3)
    with pytest.raises(ValueError, match="saturation"):
        p3109.project([1.0], f, saturation="SatMaybe")
    with pytest.raises(ValueError, match="rounding"):
        p3109.project([1.0], f, rounding="Nearest")
    with pytest.raises(ValueError, match="sr_bits"):
        p3109.project([1.0], f, sr="B", sr_bits=32)
    with pytest.raises(ValueError, match="random_bits"):
        p3109.project([1.0], f, sr="A", sr_bits=3, random_bits=[8])
    with pytest.raises(ValueError, match="stochastic"):
        p3109.project([1.0], f, seed=3)
    with pytest.raises(TypeError):
        p3109.project(np.array(["a"]), f)
    assert p3109.format(8, 3) is f and p3109.format(15, 1, signed=False).bits == 15
    # the p3109 scheme needs room for NaN, inf and one positive finite number
    for signed in (True, False):
        with pytest.raises(ValueError, match="exp_bits"):
            softfp8.format(exp_bits=1, man_bits=0, bias=0, specials="p3109", signed=signed)
    assert softfp8.format(exp_bits=1, man_bits=1, bias=0, specials="p3109", signed=False).max == 1


# ----------------------------------------------------------------------------
# projection of a dense set of float64 values
# ----------------------------------------------------------------------------

def _points(F, parts, neighbours=True, gaps=None):
    """Every value of F, the points between neighbours in 1/parts steps, float64
    neighbours of the midpoints, points beyond the largest value, tiny values and
    specials; the negatives too."""
    fin = sorted({v for v in F.values if isinstance(v, Fraction) and v >= 0})
    pts = set()
    pairs = list(zip(fin, fin[1:]))
    if gaps is not None:  # a sample of the gaps: the first and last ones and random others
        pairs = pairs[:8] + pairs[-8:] + [pairs[i] for i in gaps.choice(len(pairs), 80)]
    for lo, hi in pairs:
        for j in range(parts):
            pts.add(lo + (hi - lo) * j / parts)
        mid = float((lo + hi) / 2)
        if neighbours:
            pts.add(Fraction(np.nextafter(mid, 0.0)))
            pts.add(Fraction(np.nextafter(mid, np.inf)))
    top = fin[-1]
    g = Fraction(2) ** Rounded(top, F.p, F.bias).q
    for j in range(1, 2 * parts + 1):
        pts.add(top + g * j / parts)
    if neighbours:
        pts.add(Fraction(np.nextafter(float(top + g / 2), 0.0)))
    pts.update(Fraction(v) for v in (float(top * 2), float(top * 4), 1e300,
                                     np.finfo(np.float64).max, 5e-324, 1e-300))
    pts.add(top)
    xs = [float(v) for v in pts]
    assert all(Fraction(x) == v for x, v in zip(xs, pts))  # all exact in float64
    xs = sorted(set(xs) | {-x for x in xs})
    return np.array(xs + [np.inf, -np.inf, np.nan, -0.0], dtype=np.float64)


def _exact(x):
    if np.isnan(x):
        return NAN
    if np.isinf(x):
        return PINF if x > 0 else NINF
    return Fraction(float(x))


def _expected(F, xs, rounded, combos):
    """{(combo index, sat): expected codes} for combos [(mode, n, r array or None)]:
    each element is rounded once per combo and saturated three ways."""
    out = {(j, sat): np.empty(len(xs), np.int64) for j in range(len(combos)) for sat in SATS}
    for i, x in enumerate(xs):
        v = _exact(x)
        rd = rounded[i]
        for j, (mode, n, r) in enumerate(combos):
            y = rd.value(mode, n, None if r is None else int(r[i])) if rd is not None else v
            for sat in SATS:
                z = saturate(F, y, sat, mode)
                out[j, sat][i] = F.encode_table[Fraction(0) if z == 0 else z]
    return out


def _compare(F, f, xs, got, exp, what):
    g = got.view(f.storage).astype(np.int64)
    bad = np.nonzero(g != exp)[0]
    assert bad.size == 0, "%s %s: %d mismatches, e.g. %s" % (
        F, what, bad.size, [(float(xs[i]), int(g[i]), int(exp[i])) for i in bad[:6]])
    return len(xs)



def _project_all(F, f, x, vals, combos, label):
    """project(x) under every (mode, sr_bits, random bits) of combos and every saturation
    mode against the reference values of vals; returns the number of elements compared."""
    exp = _expected(F, vals, _rounded(F, vals), combos)
    total = 0
    for j, (mode, bits_n, r) in enumerate(combos):
        kw = {"rounding": mode} if bits_n is None else {"sr": mode, "sr_bits": bits_n,
                                                          "random_bits": r}
        for sat in SATS:
            got = p3109.project(x, f, saturation=sat, **kw)
            total += _compare(F, f, vals, got, exp[j, sat], (label, sat, mode))
    return total

def _check(F, f, xs, got, sat, mode, n=None, r=None, rounded=None, what=""):
    bad = []
    g = got.view(f.storage)
    for i, x in enumerate(xs):
        ri = None if r is None else int(r[i])
        rd = rounded[i] if rounded is not None else None
        e = project_ref(F, _exact(x), sat, mode, n, ri, rd)
        if int(g[i]) != e:
            bad.append((float(x), ri, int(g[i]), e))
    assert not bad, "%s %s %s %s n=%s: %d mismatches, e.g. %s" % (
        F, what, sat, mode, n, len(bad), bad[:6])
    return len(xs)


def _rounded(F, xs):
    out = []
    for x in xs:
        v = _exact(x)
        out.append(Rounded(v, F.p, F.bias) if isinstance(v, Fraction) and v != 0 else None)
    return out


# every format with K <= 6 and a selection with K = 7, 8 (every P signed / unsigned)
DENSE = [k for k in ALL if k[0] <= 6] + [(7, 2, True, True), (7, 5, False, False),
                                         (8, 1, True, False), (8, 3, True, True),
                                         (8, 4, True, True), (8, 4, True, False),
                                         (8, 5, True, True), (8, 7, True, False),
                                         (8, 1, False, True), (8, 3, False, True),
                                         (8, 8, False, False), (8, 8, False, True)]
assert len(DENSE) == 64 + 12


@pytest.mark.parametrize("part", [0, 1])
def test_projection_deterministic_dense(part):
    total = 0
    combos = [(mode, None, None) for mode in MODES]
    for key in DENSE[part::2]:
        F, f = ref_format(*key), sf_format(*key)
        xs = _points(F, 8)
        exp = _expected(F, xs, _rounded(F, xs), combos)
        for sat in SATS:
            for j, mode in enumerate(MODES):
                got = p3109.project(xs, f, rounding=mode, saturation=sat)
                assert got.dtype == f.dtype and got.shape == xs.shape
                total += _compare(F, f, xs, got, exp[j, sat], (sat, mode))
    # the formats x 18 (rounding, saturation) pairs x their dense point sets
    assert total == 18 * sum(len(_points(ref_format(*k), 8)) for k in DENSE[part::2])
    assert total > 250_000


SR_FORMATS = [k for k in ALL if k[0] <= 3] + [(4, 1, True, True), (4, 2, True, False),
                                              (4, 3, False, True), (4, 4, False, False),
                                              (5, 2, True, True), (5, 3, False, False),
                                              (8, 3, True, True), (8, 1, False, True)]


@pytest.mark.parametrize("variant", ["A", "B", "C"])
def test_projection_stochastic_every_r(variant):
    total = 0
    for key in SR_FORMATS:
        F, f = ref_format(*key), sf_format(*key)
        xs = _points(F, 16)
        rd = _rounded(F, xs)
        combos = [(variant, n, np.full(xs.shape, r0, dtype=np.uint32))
                  for n in (1, 3) for r0 in range(2 ** n)]
        exp = _expected(F, xs, rd, combos)
        for j, (_, n, r) in enumerate(combos):
            for sat in SATS:
                got = p3109.project(xs, f, saturation=sat, sr=variant, sr_bits=n,
                                    random_bits=r)
                total += _compare(F, f, xs, got, exp[j, sat], (sat, variant, n, int(r[0])))
    assert total == 10 * 3 * sum(len(_points(ref_format(*k), 16)) for k in SR_FORMATS)


@pytest.mark.parametrize("n", [8, 31])
def test_projection_stochastic_random_r(n):
    total = 0
    rng = np.random.default_rng(n)
    for key in [(8, 3, True, True), (8, 4, True, False), (6, 2, False, True), (8, 1, True, True)]:
        F, f = ref_format(*key), sf_format(*key)
        base = _points(F, 16)
        # points on the n-bit grid's midpoints between neighbours (StochasticC's ties)
        fin = sorted(v for v in F.values if isinstance(v, Fraction) and v >= 0)
        extra = [float(lo + (hi - lo) * Fraction(2 * j + 1, 2 ** (n + 1)))
                 for lo, hi in zip(fin, fin[1:]) for j in rng.integers(0, 2 ** n, 4).tolist()]
        xs = np.concatenate([base, extra, [-v for v in extra]])
        assert all(Fraction(float(x)) == Fraction(x) for x in xs[np.isfinite(xs)])
        rd = _rounded(F, xs)
        for variant in "ABC":
            r = rng.integers(0, 2 ** n, xs.shape).astype(np.uint32)
            # C rounds these midpoints away from zero for even r only: make half of them so
            for sat in SATS:
                got = p3109.project(xs, f, saturation=sat, sr=variant, sr_bits=n, random_bits=r)
                total += _check(F, f, xs, got, sat, variant, n, r, rd, "sr")
    assert total > 10_000


def test_stochastic_a_is_softfp8_stochastic():
    """StochasticA(n, r) is softfp8's own stochastic rounding with N = n, R = r."""
    f = p3109.format(8, 4, domain="extended")
    xs = _points(ref_format(8, 4, True, True), 16)
    rng = np.random.default_rng(5)
    for n in (1, 4, 13, 32):
        r = rng.integers(0, 2 ** n, xs.shape, dtype=np.uint64).astype(np.uint32)
        a = p3109.project(xs, f, saturation="SatNone", sr="A", sr_bits=n, random_bits=r)
        b, _ = sfb.from_float(xs, f, rounding="stochastic", sr_bits=n, random_bits=r,
                              saturate=False)
        assert np.array_equal(a.view(np.uint8), b)


def test_seeded_stochastic_is_reproducible():
    f = p3109.format(8, 3, domain="extended")
    xs = np.linspace(-3, 3, 1001)
    for v in "ABC":
        a = p3109.project(xs, f, sr=v, seed=7).view(np.uint8)
        b = p3109.project(xs, f, sr=v, seed=7).view(np.uint8)
        assert np.array_equal(a, b)
        # unbiased on average: the mean error is tiny against the spacing
        vals = a.view(f.dtype).astype(np.float64)
        assert abs(np.mean(vals - xs)) < 0.01


# ----------------------------------------------------------------------------
# other sources: float32, softfp8 formats, P3109 -> P3109
# ----------------------------------------------------------------------------

def test_projection_from_other_formats():
    total = 0
    rng = np.random.default_rng(11)
    sources = [(softfp8.e5m2, None), (softfp8.bfloat16, None),
               (sf_format(8, 5, True, True), ref_format(8, 5, True, True)),
               (sf_format(8, 6, False, False), ref_format(8, 6, False, False))]
    for dst in [(8, 3, True, True), (8, 4, True, False), (7, 2, False, True), (8, 1, False, False)]:
        F, f = ref_format(*dst), sf_format(*dst)
        for src, SF in sources:
            codes = np.arange(1 << src.bits, dtype=src.storage)
            if src.bits == 16:  # bfloat16: every 64th code plus all specials and tiny ones
                codes = np.unique(np.concatenate([codes[::64], codes[0x7F70:0x7F90],
                                                  codes[0xFF70:0xFF90], codes[:64]]))
            vals, _ = sfb.to_float(codes, src)           # exact float64 values
            if SF is not None:                            # the reference's own values
                exp_vals = np.array([float(v) if isinstance(v, Fraction) else
                                     {NAN: np.nan, PINF: np.inf, NINF: -np.inf}[v]
                                     for v in SF.values])
                assert np.array_equal(vals, exp_vals, equal_nan=True)
            arr = codes.view(src.dtype)
            combos = [(m, None, None) for m in MODES] + [
                (m, 2, rng.integers(0, 4, codes.shape)) for m in "AC"]
            total += _project_all(F, f, arr, vals, combos, src.name)
        # float32 input: the same as its float64 value
        x32 = _points(F, 8).astype(np.float32)
        for mode in MODES:
            a = p3109.project(x32, f, rounding=mode, saturation="SatNone")
            b = p3109.project(x32.astype(np.float64), f, rounding=mode, saturation="SatNone")
            assert np.array_equal(a.view(f.storage), b.view(f.storage))
    n_bf16 = len(set(range(0, 65536, 64)) | set(range(0x7F70, 0x7F90)) |
                 set(range(0xFF70, 0xFF90)) | set(range(64)))
    assert total == 4 * 3 * 8 * (256 + n_bf16 + 256 + 256)


# ----------------------------------------------------------------------------
# arithmetic in the P3109 scheme against tests/models/rational.py
# ----------------------------------------------------------------------------

ARITH = [(8, 4, True, True), (8, 1, True, True), (8, 3, False, True)]
A8 = np.repeat(np.arange(256, dtype=np.uint8), 256)
B8 = np.tile(np.arange(256, dtype=np.uint8), 256)


def _ref_fmt(key):
    k, p, s, e = key
    E = k - p + (0 if s else 1)
    return ref.make_format(E, p - 1, 2 ** (E - 1), specials="p3109" if e else ("fnuz" if s else "fn"),
                           signed=s, saturate=False, name=_id(key))


@pytest.mark.parametrize("key", ARITH, ids=[_id(k) for k in ARITH])
def test_arithmetic_against_rational(key):
    R, f = _ref_fmt(key), sf_format(*key)
    F = ref_format(*key)
    # the model's decoding agrees with the report's
    for c in range(256):
        d = ref.decode(R, c)
        v = F.values[c]
        if v == NAN:
            assert d.kind == "nan"
        elif v in (PINF, NINF):
            assert d.kind == "inf" and d.sign == (v == NINF)
        else:
            assert d.value == v
    n = 0
    bad = []
    for op in ("add", "sub", "mul", "div"):
        table, idx, opfl = ref.build_table(R, [ref.EXACT_OPS[op](R, a, b)
                                               for a in range(256) for b in range(256)])
        for mode in ref.MODES:
            for sat in (False, True):
                exp, expf, cls = table.evaluate(idx, mode, sat, "after")
                got, gotf = getattr(sfb, op)(f, A8, B8, rounding=mode, saturate=sat)
                b = ref.compare(R, got, gotf, exp, expf | opfl, cls)
                bad += [(op, mode, sat, int(A8[i]), int(B8[i]), int(got[i]), int(exp[i]))
                        for i in b[:3]]
                n += exp.size
    table, idx, opfl = ref.build_table(R, [ref.exact_sqrt(R, a) for a in range(256)])
    codes = np.arange(256, dtype=np.uint8)
    for mode in ref.MODES:
        exp, expf, cls = table.evaluate(idx, mode, False, "after")
        got, gotf = sfb.sqrt(f, codes, rounding=mode)
        b = ref.compare(R, got, gotf, exp, expf | opfl, cls)
        bad += [("sqrt", mode, int(codes[i]), int(got[i]), int(exp[i])) for i in b[:3]]
        n += 256
    assert not bad, bad[:20]
    assert n == 4 * 6 * 2 * 65536 + 6 * 256


def test_bit_operations_and_numpy():
    f = p3109.format(8, 3, domain="extended")
    a = np.array([1.0, -2.0, np.inf, -np.inf, np.nan, 0.0]).astype(f.dtype)
    c = a.view(np.uint8)
    assert c.tolist() == [0x40, 0xC4, 0x7F, 0xFF, 0x80, 0x00]
    assert (-a).view(np.uint8).tolist() == [0xC0, 0x44, 0xFF, 0x7F, 0x80, 0x00]
    assert np.abs(a).view(np.uint8).tolist() == [0x40, 0x44, 0x7F, 0x7F, 0x80, 0x00]
    assert np.signbit(a).tolist() == [False, True, False, True, False, False]
    assert np.isinf(a).tolist() == [False, False, True, True, False, False]
    assert (np.copysign(a[5:], a[1:2])).view(np.uint8).tolist() == [0]  # no -0
    # nextafter walks onto the infinities at the extreme codes
    mx = np.array([f.max], dtype=np.float64).astype(f.dtype)
    inf = np.array([np.inf]).astype(f.dtype)
    assert np.nextafter(mx, inf).view(np.uint8).tolist() == [0x7F]
    assert np.nextafter(inf, mx).view(np.uint8).tolist() == [0x7E]
    info = np.finfo(f.dtype)
    assert info.maxexp == 16 and info.minexp == -15  # bias 16, top finite field 31
    u = p3109.format(8, 1, signed=False, domain="extended")
    assert np.finfo(u.dtype).maxexp == 126 and u.max == 2.0 ** 125
    assert np.array([np.inf, -1.0]).astype(u.dtype).view(np.uint8).tolist() == [0xFE, 0xFF]


def test_gfloat_agrees_if_installed():
    """An extra check against Graphcore's gfloat (an independent implementation of the
    report; optional): every code's value and the projection of the dense point set in
    its rounding modes (its Stochastic = C, StochasticFast = B, StochasticFastest = A)
    with sat=False (SatNone) and sat=True (SatFinite)."""
    gfloat = pytest.importorskip("gfloat")
    from gfloat.formats import format_info_p3109
    RM = gfloat.RoundMode
    modes = [("TowardZero", RM.TowardZero), ("TowardPositive", RM.TowardPositive),
             ("TowardNegative", RM.TowardNegative), ("NearestTiesToEven", RM.TiesToEven),
             ("NearestTiesToAway", RM.TiesToAway), ("A", RM.StochasticFastest),
             ("B", RM.StochasticFast), ("C", RM.Stochastic)]
    rng = np.random.default_rng(3)
    n = 0
    for key in [(8, 3, True, True), (8, 4, True, False), (8, 1, False, True), (6, 3, False, False)]:
        k, p, s, e = key
        fi = format_info_p3109(k, p, gfloat.Signedness.Signed if s else
                                      gfloat.Signedness.Unsigned,
                                      gfloat.Domain.Extended if e else gfloat.Domain.Finite)
        f = sf_format(*key)
        got, _ = sfb.to_float(np.arange(2 ** k, dtype=f.storage), f)
        for c in range(2 ** k):
            v = gfloat.decode_float(fi, c).fval
            assert (math.isnan(v) and math.isnan(got[c])) or v == got[c], (key, c, v, got[c])
            n += 1
        # not the float64 neighbours of midpoints: gfloat decides RNA and StochasticFast
        # with float64 sums (delta + 0.5 >= 1) that round them onto the midpoint
        xs = _points(ref_format(*key), 8, neighbours=False)
        xs = xs[np.isfinite(xs) & (s | ~np.signbit(xs))]   # gfloat: finite, no negatives unsigned
        r = rng.integers(0, 8, xs.shape)
        for name, rm in modes:
            for sat, gsat in (("SatNone", False), ("SatFinite", True)):
                kw = {"rounding": name} if len(name) > 1 else {"sr": name, "sr_bits": 3,
                                                               "random_bits": r}
                codes = p3109.project(xs, f, saturation=sat, **kw).view(f.storage)
                mhi = float(ref_format(*key).m_hi)
                for i, x in enumerate(xs):
                    v = gfloat.round_float(fi, float(x), rm, gsat, int(r[i]), 3)
                    if not e and sat == "SatNone" and math.isnan(v) and abs(x) > mhi:
                        # gfloat follows the report before v4.0: NaN for a finite format's
                        # overflow under SatNone; v4.0 (4.7.5) saturates to M_hi / M_lo
                        v = math.copysign(mhi, x) if s or x > 0 else v
                    assert int(codes[i]) == gfloat.encode_float(fi, v), (key, name, sat, x, r[i])
                    n += 1
    assert n > 50_000


WIDE = [(9, 1, True, True), (10, 4, False, True), (12, 6, True, False), (13, 12, True, True),
        (15, 5, True, True), (15, 11, False, False), (15, 15, False, True)]


def test_wide_formats_codes_and_projection():
    """K = 9..15: every code's value, and the projection of a random sample of the
    dense points in every mode and saturation mode."""
    rng = np.random.default_rng(15)
    n = n_pts = 0
    for key in WIDE:
        F, f = RefFormat(*key), sf_format(*key)
        assert f.bits == F.k and f.storage == np.dtype(np.uint16)
        codes = np.arange(2 ** F.k, dtype=np.uint16)
        got, _ = sfb.to_float(codes, f)
        for c, v in enumerate(F.values):
            g = float(got[c])
            ok = (math.isnan(g) if v == NAN else g == math.inf if v == PINF else
                  g == -math.inf if v == NINF else Fraction(g) == v)
            assert ok, (F, c, g, v)
            n += 1
        xs = _points(F, 4, gaps=rng)
        combos = [(m, None, None) for m in MODES] + [(v, 5, rng.integers(0, 32, xs.shape))
                                                     for v in "ABC"]
        n += _project_all(F, f, xs, xs, combos, "float64")
        n_pts += len(xs)
    assert n == sum(2 ** k[0] for k in WIDE) + 9 * 3 * n_pts and n_pts > 7 * 600


@pytest.mark.parametrize("key", [(8, 4, True, True), (8, 3, False, True)],
                         ids=["binary8p4se", "binary8p3ue"])
def test_elementary_functions_against_mpref(key):
    """The correctly rounded elementary functions in the p3109 scheme: every code, every
    unary function, every deterministic mode, against tests/models/mpref.py (MPFR)."""
    from ..models import mpref as mp
    R, f = _ref_fmt(key), sf_format(*key)
    codes = np.arange(256, dtype=np.uint8)
    n = 0
    failures = []
    for fn in mp.UNARY:
        rec = mp.unary_records(fn, R, codes)
        for mode in ref.MODES:
            exp, expf, cls = mp.deliver(R, rec, mode, False, "after")
            got, gotf = getattr(sfb, fn)(f, codes, rounding=mode, saturate=False)
            bad = mp.compare(R, got, gotf, exp, expf, cls)
            failures += [(fn, mode, int(codes[i]), int(got[i]), int(exp[i])) for i in bad[:3]]
            n += 256
    assert not failures, failures[:20]
    assert n == len(mp.UNARY) * 6 * 256


def test_binary_elementary_functions_against_mpref():
    """The binary functions of mpref (power, hypot, arctan2, logaddexp, ...) on 16384
    random pairs of binary8p4se plus every pair with an inf, NaN or zero operand, in two
    modes."""
    from ..models import mpref as mp
    key = (8, 4, True, True)
    R, f = _ref_fmt(key), sf_format(*key)
    special = np.isin(A8, [0x00, 0x7F, 0xFF, 0x80]) | np.isin(B8, [0x00, 0x7F, 0xFF, 0x80])
    pick = special | np.isin(np.arange(65536), np.random.default_rng(2).choice(65536, 16384))
    a, b = A8[pick], B8[pick]
    n = 0
    failures = []
    for fn in mp.BINARY:
        rec = mp.binary_records(fn, R, a, b)
        for mode in ("nearest_even", "upward"):
            exp, expf, cls = mp.deliver(R, rec, mode, False, "after")
            got, gotf = getattr(sfb, fn)(f, a, b, rounding=mode, saturate=False)
            bad = mp.compare(R, got, gotf, exp, expf, cls)
            failures += [(fn, mode, int(a[i]), int(b[i]), int(got[i]), int(exp[i]))
                         for i in bad[:3]]
            n += a.size
    assert not failures, failures[:20]
    assert n == len(mp.BINARY) * 2 * int(pick.sum()) and pick.sum() > 16000
