"""The OCP MX / NVFP4 element and scale presets against tests/models/rational.py.

float4_e2m1fn, float6_e2m3fn, float6_e3m2fn (finite only, saturating), ue4m3 (NVFP4's
unsigned E4M3 scale, 7 bits) and float8_e8m0fnu (the MX scale: 2^(code-127), no zero,
subnormal convention "nozero"; docs/semantics.md "Formats with no zero").  The 8-bit
E8M0 is also in ref.eight_bit_formats(), so tests/core/test_exhaustive.py,
test_conversions.py, test_exact_functions.py, test_elementary.py ... cover it; here:

* every pair (add, sub, mul, div) and every code (sqrt) of the sub-8-bit presets in the
  24 deterministic configurations and stochastic rounding with given random bits;
  every fma triple of FP4, random triples of the others;
* every code of every new preset converted to float32 / float64 and to every other new
  preset and 8-bit preset, in all 7 modes x saturation x tininess;
* a structured set of float32 / float64 values converted into every new preset in
  all 7 modes (stochastic with given random bits);
* a signed "nozero" format built with softfp8.format, exhaustively (add, mul, div);
* the E8M0 decisions spelled out (zero, negatives, tiny values, ties, overflow) and
  every operation of the op table on every E8M0 code / pair: codes in range, flags
  only the six defined bits.

Expected values come from the reference model only (never from softfp8).
"""

import numpy as np
import pytest

from ..models import rational as ref

import softfp8
import softfp8.bits as sfb

NEW = ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "ue4m3", "float8_e8m0fnu"]
SMALL = [ref.preset(n) for n in NEW[:4]]
CONFIGS = [(m, s, t) for m in ref.MODES for s in (False, True) for t in ref.TININESS]
assert len(CONFIGS) == 24
ALL_CONFIGS = CONFIGS + [("stochastic", s, t) for s in (False, True) for t in ref.TININESS]
MAX_REPORT = 10


def _check(fmt, what, cfg, operands, got, exp, expf, cls, failures, dst=None):
    dst = dst or fmt
    got, gotf = (np.asarray(x).ravel() for x in got)
    assert got.shape == exp.shape and gotf.shape == exp.shape
    bad = ref.compare(dst, got, gotf, exp, expf, cls)
    if bad.size:
        failures.append("%s %s %s: %d of %d differ" % (fmt.name, what, cfg, bad.size, exp.size))
        for i in bad[:MAX_REPORT]:
            failures.append("  (%s) -> expected %s %s, got %s %s" % (
                ", ".join(ref.describe(fmt, int(o[i])) for o in operands),
                ref.describe(dst, exp[i]), ref.flag_names(expf[i]),
                ref.describe(dst, got[i]), ref.flag_names(gotf[i])))
    return exp.size


def _expected(table, idx, rng):
    """(config, expected codes, flags, class_only, random_bits keyword) for every
    configuration of ALL_CONFIGS (stochastic: fresh random bits per element)."""
    for mode, sat, tin in ALL_CONFIGS:
        R = rng.integers(0, 1 << 32, idx.size, dtype=np.uint32) if mode == "stochastic" else None
        exp, expf, cls = table.evaluate(idx, mode, sat, tin, R=R)
        yield (mode, sat, tin), exp, expf, cls, ({"random_bits": R} if R is not None else {})


def _grid(fmt, arity):
    n = 1 << fmt.bits
    g = np.indices((n,) * arity).reshape(arity, -1)
    return [x.astype(np.uint8) for x in g]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt"])
@pytest.mark.parametrize("fmt", SMALL, ids=[f.name for f in SMALL])
def test_small_presets_every_operand(fmt, op):
    sfmt = getattr(softfp8, fmt.name)
    ops = _grid(fmt, 1 if op == "sqrt" else 2)
    f = ref.EXACT_OPS[op]
    table, idx, opfl = ref.build_table(fmt, [f(fmt, *map(int, t)) for t in zip(*ops)])
    fn = getattr(sfb, op)
    rng = np.random.default_rng(len(op) + fmt.bits)
    failures = []
    n = 0
    for (mode, sat, tin), exp, expf, cls, kw in _expected(table, idx, rng):
        got = fn(sfmt, *ops, rounding=mode, saturate=sat, tininess=tin, **kw)
        n += _check(fmt, op, (mode, sat, tin), ops, got, exp, expf | opfl, cls, failures)
    assert n == (1 << (fmt.bits * len(ops))) * 28
    assert not failures, "\n".join(failures[:60])


@pytest.mark.parametrize("fmt", SMALL, ids=[f.name for f in SMALL])
def test_small_presets_fma(fmt):
    """Every triple of FP4; 60000 random triples of the 6- and 7-bit presets."""
    sfmt = getattr(softfp8, fmt.name)
    if fmt.bits == 4:
        ops = _grid(fmt, 3)
    else:
        rng = np.random.default_rng(fmt.bits)
        ops = [rng.integers(0, 1 << fmt.bits, 60000).astype(np.uint8) for _ in range(3)]
    table, idx, opfl = ref.build_table(fmt, [ref.exact_fma(fmt, *map(int, t)) for t in zip(*ops)])
    failures = []
    n = 0
    for mode, sat, tin in CONFIGS:
        exp, expf, cls = table.evaluate(idx, mode, sat, tin)
        got = sfb.fma(sfmt, *ops, rounding=mode, saturate=sat, tininess=tin)
        n += _check(fmt, "fma", (mode, sat, tin), ops, got, exp, expf | opfl, cls, failures)
    assert n == (4096 if fmt.bits == 4 else 60000) * 24
    assert not failures, "\n".join(failures[:60])


# --------------------------------------------------------------------------
# conversions
# --------------------------------------------------------------------------

TARGETS = NEW + [n for n in ref.EIGHT_BIT_PRESETS if n not in NEW]


@pytest.mark.parametrize("src", NEW)
def test_every_code_to_every_format(src):
    """Every code of a new preset into float32, float64, every new preset and every 8-bit
    preset, in all 7 modes x saturation x tininess."""
    s = ref.preset(src)
    codes = np.arange(1 << s.bits, dtype=np.uint8)
    failures = []
    n = 0
    dsts = [ref.FLOAT32, ref.FLOAT64] + [ref.preset(d) for d in TARGETS if d != src]
    rng = np.random.default_rng(s.bits)
    for d in dsts[:2]:   # binary32/64 codes do not fit the model's int64 tables: per code
        for mode, sat, tin in ALL_CONFIGS:
            R = rng.integers(0, 1 << 32, codes.size) if mode == "stochastic" else None
            kw = {"random_bits": R.astype(np.uint32)} if R is not None else {}
            got, gotf = sfb.convert(codes, getattr(softfp8, src), np.float32 if d.bits == 32 else
                                    np.float64, rounding=mode, saturate=sat, tininess=tin, **kw)
            gbits = np.asarray(got).view(np.uint32 if d.bits == 32 else np.uint64)
            for i, c in enumerate(codes.tolist()):
                ec, ef = ref.convert(s, d, c, mode, sat, tin, None if R is None else int(R[i]))
                g = int(gbits[i])
                ok = (g == ec or (ref.is_nan(s, c) and ref.is_nan(d, g))) and int(gotf[i]) == ef
                if not ok:
                    failures.append("%s -> %s %s: code %d gives %x %s, expected %x %s" % (
                        src, d.name, (mode, sat, tin), c, g, ref.flag_names(int(gotf[i])), ec,
                        ref.flag_names(ef)))
                n += 1
    for d in dsts[2:]:
        table, idx, opfl = ref.build_table(d, [ref.exact_convert(s, d, int(c)) for c in codes])
        ddt = ref.to_softfp8(softfp8, d)
        for (mode, sat, tin), exp, expf, cls, kw in _expected(table, idx, rng):
            got = sfb.convert(codes, getattr(softfp8, src), ddt, rounding=mode, saturate=sat,
                              tininess=tin, **kw)
            n += _check(s, "->" + d.name, (mode, sat, tin), (codes,), got, exp,
                        expf | opfl, cls, failures, dst=d)
    assert n == codes.size * 28 * len(dsts) and len(dsts) == 2 + len(TARGETS) - 1 == 15
    assert not failures, "\n".join(failures[:60])


def _float_set(dtype):
    """float32 / float64 values in every binade from 2^-160 (binary32: from its
    subnormals) to 2^160 (binary32: to its max): the top 6 significand bits in every
    combination, the rest 0, one ulp, a half and all ones; both signs; zeros,
    infinities and NaN."""
    bits, man, bias = (32, 23, 127) if dtype == np.float32 else (64, 52, 1023)
    ut = np.uint32 if bits == 32 else np.uint64
    fields = np.arange(max(1, bias - 160), min(2 * bias, bias + 160) + 1, dtype=np.uint64)
    tops = np.arange(64, dtype=np.uint64) << np.uint64(man - 6)
    lows = np.array([0, 1, 1 << (man - 7), (1 << (man - 6)) - 1], dtype=np.uint64)
    mags = ((fields[:, None, None] << np.uint64(man)) | tops[None, :, None] | lows[None, None, :]).ravel()
    if dtype == np.float32:   # binary32's subnormals
        mags = np.concatenate([mags, np.arange(1, 1 << 23, 4099, dtype=np.uint64)])
    top = np.uint64(((1 << (bits - 1 - man)) - 1) << man)
    special = np.array([0, top, top | np.uint64(1 << (man - 1))], dtype=np.uint64)
    allm = np.concatenate([mags, special])
    sign = np.uint64(1 << (bits - 1))
    return np.concatenate([allm, allm | sign]).astype(ut).view(dtype)


@pytest.mark.parametrize("src", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", NEW)
def test_floats_into_new_presets(name, src):
    d = ref.preset(name)
    x = _float_set(src)
    s = ref.FLOAT32 if src == np.float32 else ref.FLOAT64
    xb = x.view(np.uint32 if src == np.float32 else np.uint64)
    table, idx, opfl = ref.build_table(d, [ref.exact_convert(s, d, int(b)) for b in xb])
    rng = np.random.default_rng(7)
    failures = []
    n = 0
    for (mode, sat, tin), exp, expf, cls, kw in _expected(table, idx, rng):
        got = sfb.from_float(x, getattr(softfp8, name), rounding=mode, saturate=sat, tininess=tin, **kw)
        bad = ref.compare(d, got[0], got[1], exp, expf | opfl, cls)
        if bad.size:
            failures.append("%s %s: %d differ, e.g. %s" % (name, (mode, sat, tin), bad.size,
                                                            [(x[i], int(np.asarray(got[0])[i]),
                                                              int(exp[i])) for i in bad[:4]]))
        n += x.size
    assert x.size > 40000 and n == x.size * 28
    assert not failures, "\n".join(failures[:40])


# --------------------------------------------------------------------------
# a signed format with no zero, built by the factory
# --------------------------------------------------------------------------

SIGNED_NOZERO = softfp8.format(exp_bits=4, man_bits=3, bias=7, specials="fn", subnormals="nozero")
REF_SIGNED_NOZERO = ref.make_format(4, 3, 7, "fn", "nozero")


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_signed_nozero_format(op):
    fmt, sfmt = REF_SIGNED_NOZERO, SIGNED_NOZERO
    ops = _grid(fmt, 2)
    f = ref.EXACT_OPS[op]
    table, idx, opfl = ref.build_table(fmt, [f(fmt, int(a), int(b)) for a, b in zip(*ops)])
    failures = []
    n = 0
    for mode, sat, tin in CONFIGS:
        exp, expf, cls = table.evaluate(idx, mode, sat, tin)
        got = getattr(sfb, op)(sfmt, *ops, rounding=mode, saturate=sat, tininess=tin)
        n += _check(fmt, op, (mode, sat, tin), ops, got, exp, expf | opfl, cls, failures)
    assert n == 65536 * 24
    assert not failures, "\n".join(failures[:60])
    # its smallest magnitude is code 0 (+2^-7) and 0x80 (-2^-7); zero is not a value
    assert sfmt.decode(0) == 2.0 ** -7 and sfmt.decode(0x80) == -(2.0 ** -7)
    assert sfmt.min_normal == sfmt.min_subnormal == 2.0 ** -7


def test_nozero_needs_a_nan_code():
    for sp in ("none", "fnuz"):
        with pytest.raises(ValueError, match="subnormals='nozero'"):
            softfp8.format(exp_bits=4, man_bits=3, bias=7, specials=sp, subnormals="nozero")
    with pytest.raises(ValueError, match="subnormals"):
        softfp8.format(exp_bits=4, man_bits=3, bias=7, subnormals="nozeros")
    assert softfp8.float8_e8m0fnu.subnormals == "nozero"


# --------------------------------------------------------------------------
# E8M0: the documented decisions, and every operation stays in range
# --------------------------------------------------------------------------

E8M0 = softfp8.float8_e8m0fnu
NAN, NX, UF, OF, NV = 0xFF, 0x01, 0x02, 0x04, 0x10


def _one(x, **kw):
    c, f = sfb.from_float(np.array([x], np.float64), E8M0, **kw)
    return int(c[0]), int(f[0])


def test_e8m0_decisions():
    assert [E8M0.decode(c) for c in (0, 127, 254)] == [2.0 ** -127, 1.0, 2.0 ** 127]
    assert np.isnan(E8M0.decode(NAN))
    assert _one(0.0) == (NAN, NV) and _one(-0.0) == (NAN, NV)        # no zero
    assert _one(-1.0) == (NAN, NV) and _one(-1e-300) == (NAN, NV)    # no negative
    for mode in ref.ALL_MODES:                                        # below 2^-127: 2^-127
        kw = {"seed": 1} if mode == "stochastic" else {}
        assert _one(2.0 ** -200, rounding=mode, **kw) == (0, UF | NX)
    assert _one(1.5 * 2.0 ** -128) == (0, NX)          # rounds up to 2^-127 unbounded: not tiny
    assert _one(1.5 * 2.0 ** -128, tininess="before") == (0, UF | NX)
    assert _one(3.0) == (128, NX) and _one(6.0) == (130, NX)           # ties to the even code
    assert _one(1.5) == (128, NX) and _one(1.5, rounding="nearest_away") == (128, NX)
    assert _one(3.0, rounding="nearest_away") == (129, NX)
    assert _one(1.5 * 2.0 ** 127) == (254, NX)                        # tie to even: max
    assert _one(2.0 ** 128) == (NAN, OF | NX)                         # overflow: the NaN
    assert _one(2.0 ** 128, saturate=True) == (254, OF | NX)
    assert _one(float("inf")) == (NAN, 0) and _one(float("-inf")) == (NAN, NV)
    assert _one(float("inf"), saturate=True) == (254, 0)
    one = np.uint8(127)
    assert [int(v) for v in sfb.sub(E8M0, one, one)] == [NAN, NV]       # x - x = 0: no zero
    assert [int(v) for v in sfb.log2(E8M0, one)] == [NAN, NV]            # log2(1) = 0
    assert [int(v) for v in sfb.mul(E8M0, np.uint8(0), np.uint8(0))] == [0, UF | NX]
    assert [int(v) for v in sfb.nextafter(E8M0, np.uint8(0), np.uint8(5))] == [1, 0]
    assert [int(v) for v in sfb.nextafter(E8M0, np.uint8(254), np.uint8(NAN))] == [NAN, 0]
    assert int(sfb.neg(E8M0, one)) == NAN                              # as UHP: no flag


def test_e8m0_every_operation_in_range():
    """Every operation of the op table on every E8M0 code (unary), pair (binary), a
    sample of triples and ldexp shifts, in every mode, saturating or not: no code outside
    0..255 (stored in uint8: the width is the storage), flags within the six defined."""
    codes = np.arange(256, dtype=np.uint8)
    a2, b2 = _grid(ref.preset("float8_e8m0fnu"), 2)
    rng = np.random.default_rng(3)
    t3 = [rng.integers(0, 256, 20000).astype(np.uint8) for _ in range(3)]
    n = 0
    for op in sfb.OPERATIONS.values():
        fn = getattr(sfb, op.name)
        if op.kind == "binary_i64":
            args = (codes[:, None], np.arange(-300, 301, 7)[None, :])
        else:
            args = {1: (codes,), 2: (a2, b2), 3: tuple(t3)}[op.arity]
        modes = ref.ALL_MODES if op.rounds else (None,)
        for mode in modes:
            for sat in ((False, True) if op.rounds else (None,)):
                kw = {"rounding": mode, "saturate": sat} if op.rounds else {}
                if mode == "stochastic":
                    kw["seed"] = 5
                out = fn(E8M0, *args, **kw)
                res, fl = (out, np.zeros(np.shape(out), np.uint8)) if op.noflags else out
                assert not (np.asarray(fl) & ~np.uint8(0x3F)).any(), op.name
                for r in (res if op.nout == 2 else (res,)):
                    assert np.asarray(r).shape == np.asarray(fl).shape, op.name
                n += 1
    assert n > 600
