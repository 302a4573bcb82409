"""The IEEE 754-2019 and IEEE P3109 operations that are not elementary functions
(issue 25) against the reference tests/models/ieee754.py, written from the
standards' text:

* unary operations: every code of 20 8-bit formats (every 8-bit preset, CFloat8 at
  several biases, an ieee-subnormal variant) and every code of five 16-bit formats;
* binary operations: every pair of 15 8-bit formats, 20,000 random pairs of each
  16-bit format (a quarter near 0, 1 and the ends of the range);
* ternary operations (Clamp, FAA): 30,000 triples per 8-bit format (every special
  code against every special code, then random), 10,000 per 16-bit format;
* the operations that round: in every rounding mode (stochastic with given
  random bits), saturation on and off, tininess before and after, through the
  reference's own vectorised rounding (mpref.deliver);
* every new row's NumPy ufunc equals its softfp8.bits function.

Codes and flag bytes must match exactly; NaNs from NaN operands compare by class.
"""
import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb

from ..models import ieee754 as ref
from ..models import mpref as mp
from ..models import rational as R

EIGHT = R.eight_bit_formats()
EIGHT_BIN = [f for f in EIGHT if f.origin[0] == "preset"] + [
    R.cfloat8_143(7), R.cfloat8_143(31), R.cfloat8_152(0), R.cfloat8_152(31), R.cfloat8_143(7, "ieee")]
SIXTEEN = [R.preset(n) for n in ("float16", "bfloat16", "hfp16_169", "uhp")] + [R.shp(15)]
assert len(EIGHT) == 20 and len(EIGHT_BIN) == 15 and len(SIXTEEN) == 5
CONFIGS = [(m, s, t) for m in R.ALL_MODES for s in (False, True) for t in R.TININESS]
assert len(CONFIGS) == 28


def _sf(fmt):
    return R.to_softfp8(softfp8, fmt)


def _codes(fmt):
    return np.arange(1 << fmt.bits, dtype=fmt.storage)


def _pairs(fmt, n=20000, seed=0):
    if fmt.bits <= 8:
        c = _codes(fmt)
        return np.repeat(c, c.size), np.tile(c, c.size)
    rng = np.random.default_rng([seed, fmt.bits, fmt.exp_bits])
    a = rng.integers(0, 1 << fmt.bits, n)
    b = rng.integers(0, 1 << fmt.bits, n)
    one = int(R.round_pack(fmt, 0, 1)[0])
    near = np.concatenate([np.arange(one - 64, one + 64), np.arange(0, 64),
                           np.arange(fmt.max_code - 32, fmt.max_code + 32) % (1 << fmt.bits)])
    if fmt.signed:
        near = np.concatenate([near, near | fmt.sign_bit])
    q = n // 4
    a[:q] = rng.choice(near, q)
    b[q:2 * q] = rng.choice(near, q)
    b[2 * q:2 * q + q // 2] = a[2 * q:2 * q + q // 2]      # equal operands
    return a.astype(fmt.storage), b.astype(fmt.storage)


def _report(fmt, name, operands, got, gotf, exp, expf, bad, extra=""):
    lines = ["%s %s%s: %d of %d differ" % (name, fmt.name, extra, bad.size, np.size(exp))]
    for i in bad[:6]:
        lines.append("  %s(%s) -> expected %s %s, got %s %s" % (
            name, ", ".join(R.describe(fmt, np.ravel(o)[i]) for o in operands),
            R.describe(fmt, np.ravel(exp)[i]) if np.ravel(exp).dtype.kind in "iu" else np.ravel(exp)[i],
            R.flag_names(int(np.ravel(expf)[i])),
            R.describe(fmt, np.ravel(got)[i]) if np.ravel(got).dtype.kind in "iu" else np.ravel(got)[i],
            R.flag_names(int(np.ravel(gotf)[i]))))
    return lines


def _check_codes(fmt, name, operands, got, gotf, exp, expf, cls, failures):
    bad = R.compare(fmt, got, gotf, exp, expf, cls)
    if bad.size:
        failures += _report(fmt, name, operands, got, gotf, exp, expf, bad)
    return np.size(exp)


def _check_records(fmt, name, operands, rec, configs, failures, seed=0, mask=None):
    """Compare bits.<name> with the records delivered in every configuration."""
    rng = np.random.default_rng(seed)
    fn = getattr(sfb, name)
    n = 0
    for cfg in configs:
        mode, sat, tin = cfg[:3]
        Rb = rng.integers(0, 1 << 32, rec.size, dtype=np.uint32) if mode == "stochastic" else None
        ec, ef, cls = mp.deliver(fmt, rec, mode, sat, tin, Rb)
        if mask is not None:
            ef = ef & mask
        kw = {"random_bits": Rb} if mode == "stochastic" else {}
        got, gotf = fn(_sf(fmt), *operands, rounding=mode, saturate=sat, tininess=tin, **kw)
        bad = R.compare(fmt, got, gotf, ec, ef, cls)
        if bad.size:
            failures += _report(fmt, name, operands, got, gotf, ec, ef, bad, " %s" % (cfg,))
        n += ec.size
    return n


def _fmts_unary():
    return EIGHT + SIXTEEN


# --------------------------------------------------------------------------
# exact unary operations: nextUp / nextDown / NextGreaterThan / NextLessThan,
# class and predicates, payloads
# --------------------------------------------------------------------------

def test_neighbours_every_code():
    total, failures = 0, []
    for fmt in _fmts_unary():
        c = _codes(fmt)
        for name, up, p3109 in (("nextup", 1, 0), ("nextdown", 0, 0), ("next_greater", 1, 1),
                                ("next_less", 0, 1)):
            exp, expf, cls = ref.neighbour(fmt, c, up, p3109)
            got, gotf = getattr(sfb, name)(_sf(fmt), c)
            total += _check_codes(fmt, name, (c,), got, gotf, exp, expf, cls, failures)
    assert total == 4 * (20 * 256 + 5 * 65536)
    assert not failures, "\n".join(failures[:40])


def test_class_and_predicates_every_code():
    total, failures = 0, []
    for fmt in _fmts_unary():
        c = _codes(fmt)
        sf = _sf(fmt)
        cls = ref.ieee_class(fmt, c)
        got = sfb.fpclass(sf, c)
        assert got.dtype == np.int64
        names = np.array(ref.CLASSES)
        want = {"isnormal": np.isin(names[cls], ["negativeNormal", "positiveNormal"]),
                "issubnormal": np.isin(names[cls], ["negativeSubnormal", "positiveSubnormal"]),
                "iszero": np.isin(names[cls], ["negativeZero", "positiveZero"]),
                "issignaling": names[cls] == "signalingNaN",
                "iscanonical": ~(ref.Codes(fmt).sub & ref.Codes(fmt).zero),
                "isone": np.array([v == 1 for v in ref.Codes(fmt).value])}
        if not np.array_equal(got, cls):
            bad = np.nonzero(got != cls)[0]
            failures.append("fpclass %s: %s" % (fmt.name, [(R.describe(fmt, i), int(got[i]), int(cls[i]))
                                                           for i in bad[:5]]))
        for name, w in want.items():
            g = getattr(sfb, name)(sf, c)
            if not np.array_equal(g, w):
                bad = np.nonzero(g != w)[0]
                failures.append("%s %s: %s" % (name, fmt.name, [R.describe(fmt, i) for i in bad[:5]]))
        total += c.size * 7
    assert total == 7 * (20 * 256 + 5 * 65536)
    assert not failures, "\n".join(failures[:40])


PAYLOAD_FMTS = EIGHT + SIXTEEN       # with payloads (ieee), one NaN per sign, or none


def test_payload_operations_every_code():
    total, failures = 0, []
    for fmt in PAYLOAD_FMTS:
        c = _codes(fmt)
        sf = _sf(fmt)
        for name in ("get_payload", "set_payload", "set_payload_signaling"):
            exp, expf, cls = ref.payload_ops(fmt, c, name)
            got, gotf = getattr(sfb, name)(sf, c)
            total += _check_codes(fmt, name, (c,), got, gotf, exp, expf, cls, failures)
    assert sum(f.specials == "ieee" for f in PAYLOAD_FMTS) == 8
    assert total == 3 * (20 * 256 + 5 * 65536)
    assert not failures, "\n".join(failures[:40])


def test_payload_integer_api():
    """softfp8.ieee754's payload functions take integers and refuse what the
    format cannot hold, naming it (the rows follow 9.7: +0 / -1)."""
    from softfp8 import ieee754
    f16 = softfp8.float16
    codes = ieee754.nan_with_payload(f16, np.arange(512))
    assert np.array_equal(ieee754.payload_of(f16, codes), np.arange(512))
    assert np.array_equal(sfb.get_payload(f16, codes)[0], sfb.from_int64(np.arange(512), f16)[0])
    s = ieee754.nan_with_payload(f16, [1, 511], signaling=True)
    assert sfb.issignaling(f16, s).all()
    assert ieee754.payload_of(f16, [0x3C00])[0] == -1
    with pytest.raises(ValueError, match="e4m3fnuz has no NaN payloads"):
        ieee754.payload_of(softfp8.e4m3fnuz, [0x80])
    with pytest.raises(ValueError, match="payload 512 is too wide for float16"):
        ieee754.nan_with_payload(f16, [3, 512])
    with pytest.raises(ValueError, match="payload 0 is not valid for float16"):
        ieee754.nan_with_payload(f16, [0], signaling=True)
    with pytest.raises(TypeError, match="float64"):
        ieee754.nan_with_payload(f16, [1.5])


# --------------------------------------------------------------------------
# rounding unary operations: logB, roundToIntegralTiesToEven / TiesToAway
# --------------------------------------------------------------------------

def test_logb_every_code_every_configuration():
    total, failures = 0, []
    for k, fmt in enumerate(_fmts_unary()):
        c = _codes(fmt)
        configs = CONFIGS if fmt.bits <= 8 else CONFIGS[::4]
        total += _check_records(fmt, "logb", (c,), ref.logb(fmt, c), configs, failures, k)
    assert total == 20 * 256 * 28 + 5 * 65536 * 7
    assert not failures, "\n".join(failures[:40])


def test_round_ties_every_code():
    total, failures = 0, []
    keep = R.DENORMAL | R.OVERFLOW | R.INEXACT | R.INVALID     # 5.9: no inexact of its own
    for k, fmt in enumerate(_fmts_unary()):
        c = _codes(fmt)
        for name, away in (("round_ties_even", False), ("round_ties_away", True)):
            rec = ref.round_integral(fmt, c, away)
            # the direction is fixed: every mode of the environment gives the same result
            configs = [("nearest_even", s, "after") for s in (False, True)] + [("upward", False, "after")]
            for cfg in configs:
                ec, ef, cls = mp.deliver(fmt, rec, "nearest_even", cfg[1], "after")
                got, gotf = getattr(sfb, name)(_sf(fmt), c, rounding=cfg[0], saturate=cfg[1])
                total += _check_codes(fmt, name, (c,), got, gotf, ec, ef & keep, cls, failures)
    assert total == 6 * (20 * 256 + 5 * 65536)
    assert not failures, "\n".join(failures[:40])


@pytest.mark.parametrize("exact", [False, True])
def test_convert_to_integer_every_code(exact):
    total, failures = 0, []
    for fmt in _fmts_unary():
        c = _codes(fmt)
        for d in ("ties_even", "ties_away", "toward_zero", "upward", "downward"):
            name = "to_int_" + ("exact_" if exact else "") + d
            exp, expf = ref.to_integer(fmt, c, d, exact)
            got, gotf = getattr(sfb, name)(_sf(fmt), c)
            assert got.dtype == np.int64
            bad = np.nonzero((got != exp) | (gotf != expf))[0]
            if bad.size:
                failures += _report(fmt, name, (c,), got, gotf, exp, expf, bad)
            total += c.size
    assert total == 5 * (20 * 256 + 5 * 65536)
    assert not failures, "\n".join(failures[:40])


# --------------------------------------------------------------------------
# binary operations
# --------------------------------------------------------------------------

BIN_FMTS = EIGHT_BIN + SIXTEEN


def _pair_total(per8, per16):
    return per8 * 15 * 65536 + per16 * 5 * 20000


def test_selections_every_pair():
    """minimumMagnitude(Number), maximumMagnitude(Number) (9.6), MinimumFinite /
    MaximumFinite (P3109 4.11.3)"""
    total, failures = 0, []
    names = ("minmag", "maxmag", "minmagnum", "maxmagnum", "min_finite", "max_finite")
    for fmt in BIN_FMTS:
        a, b = _pairs(fmt)
        for name in names:
            exp, expf, cls = ref.selection(fmt, a, b, name)
            got, gotf = getattr(sfb, name)(_sf(fmt), a, b)
            total += _check_codes(fmt, name, (a, b), got, gotf, exp, expf, cls, failures)
    assert total == _pair_total(6, 6)
    assert not failures, "\n".join(failures[:40])


def test_total_orders_every_pair():
    total, failures = 0, []
    for fmt in BIN_FMTS:
        a, b = _pairs(fmt)
        sf = _sf(fmt)
        for name, want in (("total_order", ref.total_order(fmt, a, b)),
                           ("total_order_mag", ref.total_order(fmt, a, b, mag=True)),
                           ("total_order_p3109", ref.total_order_p3109(fmt, a, b))):
            got = getattr(sfb, name)(sf, a, b)
            if not np.array_equal(got, want):
                bad = np.nonzero(got != want)[0]
                failures.append("%s %s: %s" % (name, fmt.name, [
                    (R.describe(fmt, a[i]), R.describe(fmt, b[i]), bool(want[i])) for i in bad[:6]]))
            total += a.size
    assert total == _pair_total(3, 3)
    assert not failures, "\n".join(failures[:40])


def test_ieee_remainder_every_pair():
    total, failures = 0, []
    for k, fmt in enumerate(BIN_FMTS):
        a, b = _pairs(fmt)
        rec = ref.ieee_remainder(fmt, a, b)
        configs = [("nearest_even", False, "after"), ("toward_zero", True, "before"),
                   ("stochastic", False, "after")]
        total += _check_records(fmt, "ieee_remainder", (a, b), rec, configs, failures, k)
    assert total == _pair_total(3, 3)
    assert not failures, "\n".join(failures[:40])


# every pair of one format of each special-value scheme (fn, ieee, fnuz, Tesla /
# none), 5,000 random pairs of the others (the reference is Python, per pair)
AUG_FULL = [R.preset("e4m3"), R.preset("e5m2"), R.preset("e4m3fnuz"), R.cfloat8_143(7)]


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_augmented_pairs(op):
    total, failures = 0, []
    for fmt in BIN_FMTS:
        a, b = _pairs(fmt) if fmt in AUG_FULL else _pairs(fmt, 5000)
        if fmt.bits == 8 and fmt not in AUG_FULL:
            a, b = a[::13], b[::13]
        (e0, e1), ef, cls = ref.augmented(fmt, a, b, op)
        (g0, g1), gf = getattr(sfb, "augmented_" + op)(_sf(fmt), a, b)
        for part, g, e in (("a0", g0, e0), ("a1", g1, e1)):
            total += _check_codes(fmt, "augmented_%s.%s" % (op, part), (a, b), g, gf, e, ef, cls, failures)
    full = sum(f in AUG_FULL for f in BIN_FMTS)     # the cfloat8_143 preset is cfloat8_143(7)
    assert full == 5
    assert total == 2 * (full * 65536 + (15 - full) * 5042 + 5 * 5000)
    assert not failures, "\n".join(failures[:40])


# --------------------------------------------------------------------------
# ternary operations: P3109 Clamp and FAA
# --------------------------------------------------------------------------

def _triples(fmt, n, seed):
    """Every special code (zeros, infinities, NaN, the extremes, 1) against every
    other in all three places, then random triples."""
    rng = np.random.default_rng([seed, fmt.bits, fmt.exp_bits, fmt.bias])
    cx = ref.Codes(fmt)
    spec = [c for c in range(1 << fmt.bits) if cx.nan[c] or cx.inf[c] or cx.zero[c]]
    spec += [fmt.max_code, fmt.max_code | fmt.sign_bit, int(R.round_pack(fmt, 0, 1)[0]), 1,
             1 | fmt.sign_bit]
    spec = np.unique(np.array(spec) % (1 << fmt.bits))[:16]
    g = np.array(np.meshgrid(spec, spec, spec)).reshape(3, -1)
    m = n - g.shape[1]
    r = rng.integers(0, 1 << fmt.bits, (3, m))
    t = np.concatenate([g, r], axis=1)[:, :n]
    return tuple(x.astype(fmt.storage) for x in t)


def test_clamp_triples():
    total, failures = 0, []
    for k, fmt in enumerate(BIN_FMTS):
        x, lo, hi = _triples(fmt, 30000 if fmt.bits <= 8 else 10000, k)
        exp, expf, cls = ref.clamp(fmt, x, lo, hi)
        got, gotf = sfb.clamp(_sf(fmt), x, lo, hi)
        total += _check_codes(fmt, "clamp", (x, lo, hi), got, gotf, exp, expf, cls, failures)
    assert total == 15 * 30000 + 5 * 10000
    assert not failures, "\n".join(failures[:40])


def test_faa_triples_every_configuration():
    total, failures = 0, []
    for k, fmt in enumerate(BIN_FMTS):
        x, y, z = _triples(fmt, 20000 if fmt.bits <= 8 else 8000, k)
        rows = ref.faa(fmt, x, y, z)
        configs = CONFIGS[::3] + [("downward", False, "after")]
        for cfg in configs:
            down = cfg[0] == "downward"
            rec = ref.records([("Z", 1 if down else 0) + r[2:] if r[0] == "C" else r for r in rows])
            total += _check_records(fmt, "faa", (x, y, z), rec, [cfg], failures, k)
    assert total == (15 * 20000 + 5 * 8000) * 11
    assert not failures, "\n".join(failures[:40])


# --------------------------------------------------------------------------
# the ufuncs of the new rows: equal to softfp8.bits (same driver and core)
# --------------------------------------------------------------------------

NEW_ROWS = [op for op in sfb.OPERATIONS.values() if op.id >= 72 and op.ufunc]


def test_new_rows_have_ufuncs_equal_to_bits():
    fmt = R.preset("e5m2")
    sf = _sf(fmt)
    a, b = _pairs(fmt)
    c = b[::-1].copy()
    ints = (np.arange(a.size) % 41 - 20).astype(np.int64)
    n = 0
    for op in NEW_ROWS:
        uf = getattr(softfp8, op.ufunc.split(".", 1)[1])
        ops = (a, ints) if op.kind == "binary_i64" else (a, b, c)[:op.arity]
        res = getattr(sfb, op.name)(sf, *ops)
        want = res if op.noflags else res[0]
        with softfp8.collect_flags() as fl, np.errstate(all="ignore"):
            got = uf(*(o.view(sf.dtype) if o.dtype == fmt.storage else o for o in ops))
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            g = g.view(fmt.storage) if g.dtype == sf.dtype else g
            np.testing.assert_array_equal(g, w, err_msg=op.name)
        if not op.noflags:
            assert int(fl.flags) == int(np.bitwise_or.reduce(res[1])), op.name
        n += 1
    assert n == len(NEW_ROWS) == 60
