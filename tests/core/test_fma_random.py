"""Random fused multiply-add (a*b+c, one rounding) against tests/models/rational.py.

For every 8-bit format: 10^6 random (a, b, c) triples (fixed seed), each with its own
randomly drawn configuration (6 deterministic modes x saturate x tininess, plus
stochastic rounding with 32 or 4 random bits given per element), a third of them with
c close to -(a*b) so that cancellation is common; plus every triple drawn from the
format's special values in every deterministic configuration.
"""

import numpy as np
import pytest

from ..models import rational as ref

import softfp8
import softfp8.bits as sfb

FORMATS = ref.eight_bit_formats()
IDS = [f.name for f in FORMATS]
N_RANDOM = 1_000_000
CONFIGS = ([(m, s, t, 32) for m in ref.MODES for s in (False, True) for t in ref.TININESS]
           + [("stochastic", s, t, nb) for nb in (32, 4) for s in (False, True)
              for t in ref.TININESS])
assert len(CONFIGS) == 32
MAX_REPORT = 12


def _mul_nearest(fmt):
    """Reference a*b (nearest even) for all 65536 pairs, as codes."""
    items = [ref.exact_mul(fmt, a, b) for a in range(256) for b in range(256)]
    table, idx, _ = ref.build_table(fmt, items)
    codes, _, _ = table.evaluate(idx, "nearest_even", None, "after")
    return codes.astype(np.int64)


def _compare_group(fmt, sfmt, a, b, c, idx, opfl, table, cfg, R, failures):
    mode, sat, tin, nb = cfg
    kw = {}
    Rg = None
    if mode == "stochastic":
        Rg = R
        kw = {"random_bits": R, "sr_bits": nb}
    exp, expf, cls = table.evaluate(idx, mode, sat, tin, R=Rg, N=nb)
    expf = expf | opfl
    got, gotf = sfb.fma(sfmt, a, b, c, rounding=mode, saturate=sat, tininess=tin, **kw)
    got = np.asarray(got)
    gotf = np.asarray(gotf)
    assert got.dtype == np.uint8 and gotf.dtype == np.uint8 and got.shape == a.shape
    bad = ref.compare(fmt, got, gotf, exp, expf, cls)
    if bad.size:
        failures.append("%s fma %s: %d mismatches" % (fmt.name, cfg, bad.size))
        for i in bad[:MAX_REPORT]:
            failures.append("  %s fma(%s, %s, %s) %s%s: expected %s %s, got %s %s" % (
                fmt.name, ref.describe(fmt, a[i]), ref.describe(fmt, b[i]),
                ref.describe(fmt, c[i]), cfg,
                "" if Rg is None else " R=0x%08X" % int(R[i]),
                ref.describe(fmt, exp[i]), ref.flag_names(expf[i]),
                ref.describe(fmt, got[i]), ref.flag_names(gotf[i])))
    return a.size


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_fma_random(fmt):
    sfmt = ref.to_softfp8(softfp8, fmt)
    rng = np.random.default_rng(0xF3A + 7919 * IDS.index(fmt.name))
    a = rng.integers(0, 256, N_RANDOM, dtype=np.int64)
    b = rng.integers(0, 256, N_RANDOM, dtype=np.int64)
    c = rng.integers(0, 256, N_RANDOM, dtype=np.int64)
    # a third: c = -(a*b rounded) + {-1, 0, 1} code steps -> heavy cancellation
    near = rng.random(N_RANDOM) < 1 / 3
    prod = _mul_nearest(fmt)[a * 256 + b]
    cn = ((prod ^ fmt.sign_bit) + rng.integers(-1, 2, N_RANDOM)) & 0xFF
    c = np.where(near, cn, c)
    cfg = rng.integers(0, len(CONFIGS), N_RANDOM)
    R = rng.integers(0, 2 ** 32, N_RANDOM, dtype=np.uint32)
    a8, b8, c8 = a.astype(np.uint8), b.astype(np.uint8), c.astype(np.uint8)

    items = ref.exact_fma_many(fmt, a.tolist(), b.tolist(), c.tolist())
    table, idx, opfl = ref.build_table(fmt, items)
    n = 0
    failures = []
    for k, conf in enumerate(CONFIGS):
        sel = np.nonzero(cfg == k)[0]
        assert sel.size > N_RANDOM // 40
        n += _compare_group(fmt, sfmt, a8[sel], b8[sel], c8[sel], idx[sel], opfl[sel], table,
                            conf, R[sel], failures)
    assert n == N_RANDOM
    # the sample exercises what it should
    exp, expf, _ = table.evaluate(idx, "nearest_even", None, "after")
    ef = expf | opfl
    assert (ef & ref.INEXACT).mean() > 0.3
    if fmt.signed:   # unsigned E8M0: a*b + c >= c >= its smallest value, never tiny
        assert (ef & ref.UNDERFLOW).any()
    if fmt.max_value >= 2:                      # else a*b+c cannot exceed max
        assert (ef & ref.OVERFLOW).any()
    # an exact cancellation needs a negative term (E8M0 has none)
    assert sum(1 for d in table.descs if d[0] == "C") == (1 if fmt.signed else 0)
    assert not failures, "\n".join(failures[:80])


def _special_codes(fmt):
    """±0, ±inf / NaNs, ±max, ±min subnormal, ±max subnormal, ±min normal, ±1."""
    sb = fmt.sign_bit
    mags = {0, fmt.max_code, 1, (1 << fmt.man_bits) - 1, fmt.min_normal_code}
    one = [c for c in range(fmt.max_code + 1) if ref.decode(fmt, c).value == 1]
    mags.update(one)
    if not fmt.signed:   # E8M0 (no sign, no zero, no subnormal): the neighbours instead
        mags.update({2, fmt.max_code - 1} | {c + d for c in one for d in (-1, 1)})
    codes = set()
    for m in mags:
        codes.update({m, m | sb})
    if fmt.specials == "ieee":
        codes.update({fmt.inf_code, fmt.inf_code | sb, fmt.nan_code, fmt.nan_code | sb,
                      fmt.inf_code | 1})                       # +-inf, qNaN, -qNaN, sNaN
    elif fmt.specials == "fn":
        codes.update({fmt.mag_mask, fmt.mag_mask | sb})
    if fmt.specials == "fnuz":
        codes.discard(sb)                                       # no -0: 0x80 is the NaN
        codes.add(fmt.nan_code)
    return sorted(codes)


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_fma_special_values(fmt):
    sfmt = ref.to_softfp8(softfp8, fmt)
    S = _special_codes(fmt)
    k = len(S)
    assert k >= (10 if fmt.signed else 9)
    trip = np.array([(x, y, z) for x in S for y in S for z in S], dtype=np.int64)
    a, b, c = (trip[:, i].astype(np.uint8) for i in range(3))
    items = [ref.exact_fma(fmt, int(x), int(y), int(z)) for x, y, z in trip]
    table, idx, opfl = ref.build_table(fmt, items)
    n = 0
    failures = []
    for conf in CONFIGS[:24]:
        n += _compare_group(fmt, sfmt, a, b, c, idx, opfl, table, conf, None, failures)
    assert n == k ** 3 * 24
    assert not failures, "\n".join(failures[:80])


# --------------------------------------------------------------------------
# 16-bit presets: random operands for every operation (not exhaustive)
# --------------------------------------------------------------------------

SIXTEEN = [ref.preset(n) for n in ("float16", "bfloat16", "uhp", "hfp16_169")] + \
    [ref.shp(20), ref.shp(63), ref.shp(0, "ieee")]
N16 = 40_000


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt", "fma"])
@pytest.mark.parametrize("fmt", SIXTEEN, ids=[f.name for f in SIXTEEN])
def test_16bit_random_ops(fmt, op):
    sfmt = ref.to_softfp8(softfp8, fmt)
    rng = np.random.default_rng(161 + 31 * SIXTEEN.index(fmt) + len(op))
    nar = {"sqrt": 1, "fma": 3}.get(op, 2)
    ops = [rng.integers(0, 65536, N16) for _ in range(nar)]
    if op in ("add", "sub", "fma"):
        # half the time the last operand is close to +-the first: cancellation, ties
        close = (ops[0] ^ (rng.integers(0, 2, N16) * fmt.sign_bit)) + rng.integers(-40, 41, N16)
        ops[-1] = np.where(rng.random(N16) < 0.5, close & 0xFFFF, ops[-1])
    f = ref.EXACT_OPS[op]
    items = [f(fmt, *t) for t in zip(*[o.tolist() for o in ops])]
    table, idx, opfl = ref.build_table(fmt, items)
    cfg = rng.integers(0, len(CONFIGS), N16)
    R = rng.integers(0, 2 ** 32, N16, dtype=np.uint32)
    fn = getattr(sfb, op)
    n = 0
    failures = []
    for k, (mode, sat, tin, nb) in enumerate(CONFIGS):
        sel = np.nonzero(cfg == k)[0]
        kw = {"random_bits": R[sel], "sr_bits": nb} if mode == "stochastic" else {}
        exp, expf, cls = table.evaluate(idx[sel], mode, sat, tin,
                                        R=R[sel] if mode == "stochastic" else None, N=nb)
        expf = expf | opfl[sel]
        args = [o[sel].astype(np.uint16) for o in ops]
        got, gotf = fn(sfmt, *args, rounding=mode, saturate=sat, tininess=tin, **kw)
        assert np.asarray(got).dtype == np.uint16
        bad = ref.compare(fmt, got, gotf, exp, expf, cls)
        for i in bad[:MAX_REPORT]:
            failures.append("%s %s(%s) %s: expected %s %s, got %s %s" % (
                fmt.name, op, ", ".join(ref.describe(fmt, a[i]) for a in args),
                (mode, sat, tin, nb), ref.describe(fmt, exp[i]), ref.flag_names(expf[i]),
                ref.describe(fmt, got[i]), ref.flag_names(gotf[i])))
        n += sel.size
    assert n == N16
    assert not failures, "\n".join(failures[:60])
