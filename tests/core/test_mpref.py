"""The MPFR reference of the elementary-function tests (tests/models/mpref.py),
proven before it is trusted:

* its vectorised rounding equals tests/models/rational.py's exact rounding on
  random and crafted exact values (ties, tiny, Tesla gap, overflow, exact values)
  in every format family, mode, saturation and tininess rule, stochastic included;
* the whole harness (exact result from MPFR, rounding, special values, flags)
  reproduces softfp8's existing, independently verified sqrt exhaustively on every
  8-bit and 16-bit format in every mode, and div on every 8-bit pair.
"""

import numpy as np
import pytest

from ..models import mpref as mp
from ..models import rational as ref

import softfp8
import softfp8.bits as sfb

SIXTEEN = [ref.preset(n) for n in ("float16", "bfloat16", "hfp16_169", "uhp")] + [ref.shp(15)]
EIGHT = ref.eight_bit_formats()
ROUND_FORMATS = EIGHT + SIXTEEN + [ref.shp(0), ref.shp(40, "ieee"), ref.shp(63)]
CONFIGS = [(m, s, t) for m in ref.ALL_MODES for s in (False, True) for t in ref.TININESS]
assert len(CONFIGS) == 28


def _samples(fmt, n, rng):
    """Random records concentrated where rounding is delicate."""
    M = fmt.man_bits
    p = M + 1
    emin = fmt.emin
    top = (1 << fmt.exp_bits) - fmt.bias
    ex = rng.integers(emin - M - 45, top + 3, n)
    # a third near the bottom, a sixth near the top binades
    ex[: n // 3] = rng.integers(emin - M - 3, emin + 1, n // 3)
    ex[n // 3: n // 2] = rng.integers(top - 3, top + 1, n // 2 - n // 3)
    sig = rng.integers(0, 1 << 63, n, dtype=np.uint64) | np.uint64(1 << 63)
    kind = rng.integers(0, 4, n)
    low = np.uint64((1 << (64 - p)) - 1)
    # exact at p bits; exact ties; values just around ties and the Tesla gap
    sig = np.where(kind == 0, sig & ~low, sig)
    sig = np.where(kind == 1, (sig & ~low) | np.uint64(1 << (63 - p)), sig)
    shift = rng.integers(0, 8, n).astype(np.uint64)
    sig = np.where(kind == 2, (sig & ~(low >> shift)), sig)
    sticky = rng.random(n) < 0.5
    sticky[kind <= 1] = rng.random(int((kind <= 1).sum())) < 0.2
    sign = rng.random(n) < 0.5
    return sign, sig, ex.astype(np.int64), sticky


@pytest.mark.parametrize("fmt", ROUND_FORMATS, ids=[f.name for f in ROUND_FORMATS])
def test_rounding_matches_rational(fmt):
    rng = np.random.default_rng(7 + ROUND_FORMATS.index(fmt))
    n = 4000
    sign, sig, ex, sticky = _samples(fmt, n, rng)
    descs = []
    for s, g, e, st in zip(sign.tolist(), sig.tolist(), ex.tolist(), sticky.tolist()):
        mag = ref._dy(2 * g + 1, e - 64) if st else ref._dy(g, e - 63)
        descs.append(("F", int(s), mag))
    # plus the non-finite kinds
    extra = [("Z", 0), ("Z", 1), ("I", 0), ("I", 1), ("N", None, False)]
    table, idx, _ = ref.build_table(fmt, [(d, 0) for d in descs + extra])
    k = np.array(["F"] * n + ["Z", "Z", "I", "I", "N"])
    rec = mp.Records(k, np.concatenate([sign, [False, True, False, True, False]]),
                     np.concatenate([sig, np.zeros(5, np.uint64)]),
                     np.concatenate([ex, np.zeros(5, np.int64)]),
                     np.concatenate([sticky, np.zeros(5, bool)]),
                     np.zeros(n + 5, np.uint8), np.zeros(n + 5, bool))
    checked = 0
    for mode, sat, tin in CONFIGS:
        for N in ((32, 5) if mode == "stochastic" else (32,)):
            Rb = rng.integers(0, 1 << 32, n + 5, dtype=np.uint32) if mode == "stochastic" else None
            ec, ef, ecls = table.evaluate(idx, mode, sat, tin, R=Rb, N=N)
            gc, gf, gcls = mp.deliver(fmt, rec, mode, sat, tin, Rb, N)
            bad = np.nonzero((gc != ec) | (gf != ef))[0]
            assert not bad.size, [(mode, sat, tin, N, bool(sign[i]), hex(int(sig[i])),
                                   int(ex[i]), bool(sticky[i]), ref.describe(fmt, ec[i]),
                                   ref.flag_names(ef[i]), ref.describe(fmt, gc[i]),
                                   ref.flag_names(gf[i])) for i in bad[:5]]
            checked += n + 5
    assert checked == (n + 5) * 32


# --------------------------------------------------------------------------
# the whole harness on softfp8's existing sqrt and div
# --------------------------------------------------------------------------

HARNESS_CONFIGS = [(m, False, "after") for m in ref.ALL_MODES] + [
    ("nearest_even", True, "after"), ("upward", True, "before"), ("to_odd", False, "before"),
    ("stochastic", True, "before")]


def _check(fmt, fn, rec, operands, failures, rng):
    return mp.check(fmt, fn, getattr(sfb, fn), ref.to_softfp8(softfp8, fmt), rec, operands,
                    HARNESS_CONFIGS, rng, failures)


@pytest.mark.parametrize("fmt", EIGHT + SIXTEEN, ids=[f.name for f in EIGHT + SIXTEEN])
def test_harness_sqrt_exhaustive(fmt):
    codes = np.arange(1 << fmt.bits, dtype=fmt.storage)
    rec = mp.unary_records("sqrt", fmt, codes)
    failures = []
    n = _check(fmt, "sqrt", rec, (codes,), failures, np.random.default_rng(fmt.bits))
    assert n == (1 << fmt.bits) * len(HARNESS_CONFIGS) == (1 << fmt.bits) * 11
    assert not failures, "\n".join(failures[:40])


@pytest.mark.parametrize("fmt", EIGHT, ids=[f.name for f in EIGHT])
def test_harness_div_exhaustive(fmt):
    a = np.repeat(np.arange(256, dtype=np.uint8), 256)
    b = np.tile(np.arange(256, dtype=np.uint8), 256)
    rec = mp.binary_records("div", fmt, a, b)
    failures = []
    n = _check(fmt, "div", rec, (a, b), failures, np.random.default_rng(5))
    assert n == 65536 * 11
    assert not failures, "\n".join(failures[:40])


# --------------------------------------------------------------------------
# the MPFR records against a second, independent evaluator (mpmath at 320 bits)
# --------------------------------------------------------------------------

mpmath = pytest.importorskip("mpmath")

_MPMATH = {
    "exp": mpmath.exp, "exp2": lambda x: mpmath.power(2, x), "expm1": mpmath.expm1,
    "log": mpmath.log, "log2": lambda x: mpmath.log(x, 2), "log10": mpmath.log10,
    "log1p": mpmath.log1p, "cbrt": mpmath.cbrt, "sin": mpmath.sin, "cos": mpmath.cos,
    "tan": mpmath.tan, "arcsin": mpmath.asin, "arccos": mpmath.acos, "arctan": mpmath.atan,
    "sinh": mpmath.sinh, "cosh": mpmath.cosh, "tanh": mpmath.tanh, "arcsinh": mpmath.asinh,
    "arccosh": mpmath.acosh, "arctanh": mpmath.atanh,
    "degrees": lambda x: x * 180 / mpmath.pi, "radians": lambda x: x * mpmath.pi / 180,
    "arctan2": mpmath.atan2, "power": mpmath.power, "hypot": mpmath.hypot,
    "logaddexp": lambda x, y: mpmath.log(mpmath.exp(x) + mpmath.exp(y)),
    "logaddexp2": lambda x, y: mpmath.log(mpmath.power(2, x) + mpmath.power(2, y), 2),
}


@pytest.mark.parametrize("fn", mp.UNARY + mp.BINARY)
def test_records_against_mpmath(fn):
    """Finite records of random float16 operands: the 64-bit truncation and sticky
    bit agree with mpmath's value (|v| in [t, t + ulp), sticky iff |v| != t)."""
    fmt = ref.preset("float16")
    rng = np.random.default_rng(mp.ALL.index(fn))
    n = 300
    a = rng.integers(0, 0x7C00, n) | (rng.integers(0, 2, n) << 15)
    b = rng.integers(0, 0x7C00, n) | (rng.integers(0, 2, n) << 15)
    if fn in ("exp", "exp2", "expm1", "sinh", "cosh", "tanh", "logaddexp", "logaddexp2"):
        # |x| < 16: results mpmath resolves at 320 bits
        a = np.where((a & 0x7FFF) > 0x4C00, a & 0x8000 | 0x4A00, a)
        b = np.where((b & 0x7FFF) > 0x4C00, b & 0x8000 | 0x4A00, b)
    ops = (a, b)
    if fn == "power":
        ops = (ops[0] & 0x7FFF, np.where((ops[1] & 0x7FFF) > 0x4900, 0x4100, ops[1]))
    rec = (mp.binary_records(fn, fmt, *ops) if fn in mp.BINARY
           else mp.unary_records(fn, fmt, ops[0]))
    checked = 0
    with mpmath.workprec(320):
        for i in range(n):
            if str(rec.kind[i]) != "F" or int(rec.exp[i]) < -2000:
                continue
            args = [mpmath.mpf(float(ref.decode(fmt, int(o[i])).value))
                    for o in ops[:1 + (fn in mp.BINARY)]]
            v = abs(_MPMATH[fn](*args))
            t = mpmath.ldexp(int(rec.sig[i]), int(rec.exp[i]) - 63)
            ulp = mpmath.ldexp(1, int(rec.exp[i]) - 63)
            assert t <= v * (1 + mpmath.mpf(2) ** -300) and v < t + ulp, (fn, args, v, t)
            if rec.sticky[i]:
                assert v - t > ulp * mpmath.mpf(2) ** -200, (fn, args)
            else:
                assert abs(v - t) <= v * mpmath.mpf(2) ** -300, (fn, args)
            checked += 1
    assert checked >= 60, checked
