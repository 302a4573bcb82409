"""The correctly rounded functions of IEEE 754-2019 9.2 beyond C99 / NumPy and
P3109's Softplus (issue 25) against the MPFR reference tests/models/mpref_ieee.py
(exact value truncated to 64 bits with a sticky bit; special values from IEEE
754-2019 9.2.1 and the P3109 report, written without reading the implementation):

* unary functions: every code of 20 8-bit formats in all 29 configurations (7
  modes, stochastic with given random bits and with 3 random bits, saturation on
  and off, tininess after and before); 16-bit formats sampled: 6,000 codes of each
  of five formats (a third near 0, 1 and the ends of the range) in 9 configurations;
* arctan2pi, powr: every pair of 6 8-bit formats (one per special-value scheme and
  subnormal convention) and 5,000 pairs of the other 9, 4,000 pairs of each 16-bit
  format, in 9 configurations;
* pown, rootn, compound: every code of 15 8-bit formats and 2,000 codes of each
  16-bit format against 26 integer operands (0, +-1..+-6, +-17, +-64, +-1000,
  +-12345, +-2^40, the int64 extremes), in 9 configurations.

Codes and flag bytes must match exactly; NaNs from NaN operands compare by class.
"""
import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb

from ..models import mpref as mp
from ..models import mpref_ieee as mi
from ..models import rational as R

EIGHT = R.eight_bit_formats()
EIGHT_BIN = [f for f in EIGHT if f.origin[0] == "preset"] + [
    R.cfloat8_143(7), R.cfloat8_143(31), R.cfloat8_152(0), R.cfloat8_152(31), R.cfloat8_143(7, "ieee")]
FULL_BIN = [R.preset(n) for n in ("e4m3", "e5m2", "e4m3fnuz", "float8_e3m4")] + [
    R.cfloat8_143(7), R.cfloat8_152(31)]
SIXTEEN = [R.preset(n) for n in ("float16", "bfloat16", "hfp16_169", "uhp")] + [R.shp(15)]
assert len(EIGHT) == 20 and len(EIGHT_BIN) == 15 and len(SIXTEEN) == 5
ALL_CONFIGS = [(m, s, t) for m in R.ALL_MODES for s in (False, True)
               for t in R.TININESS] + [("stochastic", False, "after", 3)]
NINE = [(m, False, "after") for m in R.ALL_MODES] + [("nearest_even", True, "before"),
                                                     ("stochastic", True, "before", 3)]
assert len(ALL_CONFIGS) == 29 and len(NINE) == 9
NS = np.array([0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 17, -17, 64, -64, 1000, -1000, 12345,
               -12345, 2 ** 40, -2 ** 40, 2 ** 63 - 1, -2 ** 63, 7], np.int64)
assert NS.size == 26


def _sf(fmt):
    return R.to_softfp8(softfp8, fmt)


def _run(fmt, fn, rec, operands, configs, seed):
    failures = []
    n = mp.check(fmt, fn, getattr(sfb, fn), _sf(fmt), rec, operands, configs,
                 np.random.default_rng(seed), failures)
    return n, failures


def _near(fmt):
    one = int(R.round_pack(fmt, 0, 1)[0])
    near = np.concatenate([np.arange(one - 96, one + 96), np.arange(0, 96),
                           np.arange(fmt.max_code - 48, fmt.max_code + 48) % (1 << fmt.bits)])
    return np.concatenate([near, near | fmt.sign_bit]) if fmt.signed else near


def _codes16(fmt, n, seed):
    rng = np.random.default_rng([seed, fmt.bits, fmt.exp_bits, fmt.man_bits])
    c = rng.integers(0, 1 << fmt.bits, n)
    c[:n // 3] = rng.choice(_near(fmt), n // 3)
    return c.astype(np.uint16)


@pytest.mark.parametrize("fn", mi.UNARY)
def test_unary(fn):
    total, failures = 0, []
    codes = np.arange(256, dtype=np.uint8)
    for k, fmt in enumerate(EIGHT):
        rec = mi.unary_records(fn, fmt, codes)
        n, f = _run(fmt, fn, rec, (codes,), ALL_CONFIGS, k)
        total += n
        failures += f
    for k, fmt in enumerate(SIXTEEN):
        c = _codes16(fmt, 6000, k)
        rec = mi.unary_records(fn, fmt, c)
        n, f = _run(fmt, fn, rec, (c,), NINE, 100 + k)
        total += n
        failures += f
    assert total == 256 * 29 * 20 + 6000 * 9 * 5
    assert not failures, "\n".join(failures[:60])


def _pairs(fmt, n, seed):
    if fmt in FULL_BIN:
        c = np.arange(256, dtype=np.uint8)
        return np.repeat(c, 256), np.tile(c, 256)
    rng = np.random.default_rng([seed, fmt.bits, fmt.exp_bits, fmt.bias])
    a = rng.integers(0, 1 << fmt.bits, n)
    b = rng.integers(0, 1 << fmt.bits, n)
    q = n // 4
    a[:q] = rng.choice(_near(fmt), q)
    b[q:2 * q] = rng.choice(_near(fmt), q)
    b[2 * q:2 * q + q // 2] = a[2 * q:2 * q + q // 2]
    return a.astype(fmt.storage), b.astype(fmt.storage)


@pytest.mark.parametrize("fn", mi.BINARY)
def test_binary(fn):
    total, failures = 0, []
    for k, fmt in enumerate(EIGHT_BIN + SIXTEEN):
        a, b = _pairs(fmt, 5000 if fmt.bits == 8 else 4000, k)
        rec = mi.binary_records(fn, fmt, a, b)
        n, f = _run(fmt, fn, rec, (a, b), NINE, k)
        total += n
        failures += f
    full = sum(f in FULL_BIN for f in EIGHT_BIN)     # the hfp8_152 and cfloat8_143 presets too
    assert full == 7
    assert total == 9 * (full * 65536 + (15 - full) * 5000 + 5 * 4000)
    assert not failures, "\n".join(failures[:60])


def _check_int(fmt, fn, rec, a, n, configs, seed):
    """mpref.check for (codes, int) operands: the int operand reported as it is."""
    rng = np.random.default_rng(seed)
    failures, total = [], 0
    for cfg in configs:
        mode, sat, tin = cfg[:3]
        N = cfg[3] if len(cfg) > 3 else 32
        Rb = rng.integers(0, 1 << 32, rec.size, dtype=np.uint32) if mode == "stochastic" else None
        ec, ef, cls = mp.deliver(fmt, rec, mode, sat, tin, Rb, N)
        kw = {"sr_bits": N, "random_bits": Rb} if mode == "stochastic" else {}
        got, gotf = getattr(sfb, fn)(_sf(fmt), a, n, rounding=mode, saturate=sat, tininess=tin, **kw)
        bad = mp.compare(fmt, got, gotf, ec, ef, cls)
        if bad.size:
            failures.append("%s %s %s: %d of %d differ" % (fn, fmt.name, cfg, bad.size, ec.size))
            for i in bad[:6]:
                failures.append("  %s(%s, %d) -> expected %s %s, got %s %s; exact %s" % (
                    fn, mp.describe(fmt, a[i]), n[i], mp.describe(fmt, ec[i]), mp.flag_names(ef[i]),
                    mp.describe(fmt, got[i]), mp.flag_names(gotf[i]), rec.exact_value(i)))
        total += ec.size
    return total, failures


@pytest.mark.parametrize("fn", mi.INT)
def test_integer_operand(fn):
    total, failures = 0, []
    for k, fmt in enumerate(EIGHT_BIN + SIXTEEN):
        c = np.arange(256, dtype=np.uint8) if fmt.bits == 8 else _codes16(fmt, 2000, k)
        a = np.repeat(c, NS.size)
        n = np.tile(NS, c.size)
        rec = mi.int_records(fn, fmt, a, n)
        m, f = _check_int(fmt, fn, rec, a, n, NINE, k)
        total += m
        failures += f
    assert total == 9 * 26 * (15 * 256 + 5 * 2000)
    assert not failures, "\n".join(failures[:60])


F16 = softfp8.float16


@pytest.mark.parametrize("fn,args,code,flags", [
    # IEEE 754-2019 9.2.1, float16 codes (1.0 = 0x3C00, 0.5 = 0x3800, 0.25 = 0x3400)
    ("sinpi", (0x3C00,), 0x0000, 0),                  # sinPi(+1) = +0
    ("sinpi", (0xBC00,), 0x8000, 0),                  # sinPi(-1) = -0
    ("sinpi", (0x3800,), 0x3C00, 0),                  # sinPi(1/2) = 1
    ("cospi", (0x3800,), 0x0000, 0),                  # cosPi(1/2) = +0
    ("cospi", (0xBE00,), 0x0000, 0),                  # cosPi(-3/2) = +0
    ("cospi", (0x3C00,), 0xBC00, 0),                  # cosPi(1) = -1
    ("tanpi", (0x3800,), 0x7C00, R.DIVBYZERO),        # tanPi(1/2) = +inf
    ("tanpi", (0x3E00,), 0xFC00, R.DIVBYZERO),        # tanPi(3/2) = -inf
    ("tanpi", (0xB800,), 0xFC00, R.DIVBYZERO),        # tanPi(-1/2) = -inf
    ("tanpi", (0x3C00,), 0x8000, 0),                  # tanPi(1) = -0
    ("tanpi", (0x4000,), 0x0000, 0),                  # tanPi(2) = +0
    ("tanpi", (0x3400,), 0x3C00, 0),                  # tanPi(1/4) = 1
    ("sinpi", (0x7C00,), 0x7E00, R.INVALID),
    ("arcsinpi", (0x3C00,), 0x3800, 0),               # asinPi(1) = 1/2
    ("arccospi", (0xBC00,), 0x3C00, 0),               # acosPi(-1) = 1
    ("arccospi", (0x3C00,), 0x0000, 0),
    ("arctanpi", (0x7C00,), 0x3800, 0),               # atanPi(+inf) = 1/2
    ("arctanpi", (0xBC00,), 0xB400, 0),               # atanPi(-1) = -1/4
    ("arctan2pi", (0x0000, 0x8000), 0x3C00, 0),       # atan2Pi(+0, -0) = +1
    ("arctan2pi", (0x8000, 0x0000), 0x8000, 0),       # atan2Pi(-0, +0) = -0
    ("arctan2pi", (0x7C00, 0xFC00), 0x3A00, 0),       # atan2Pi(+inf, -inf) = 3/4
    ("arctan2pi", (0xBC00, 0xBC00), 0xBA00, 0),       # atan2Pi(-1, -1) = -3/4
    ("rsqrt", (0x8000,), 0xFC00, R.DIVBYZERO),        # rSqrt(-0) = -inf
    ("rsqrt", (0x7C00,), 0x0000, 0),
    ("rsqrt", (0x4400,), 0x3800, 0),                  # rSqrt(4) = 1/2
    ("exp2m1", (0xFC00,), 0xBC00, 0),                 # exp2m1(-inf) = -1
    ("exp10", (0x4000,), 0x5640, 0),                  # exp10(2) = 100
    ("exp10m1", (0x8000,), 0x8000, 0),
    ("log2p1", (0x4200,), 0x4000, 0),                 # log2p1(3) = 2
    ("log2p1", (0xB800,), 0xBC00, 0),                 # log2p1(-1/2) = -1
    ("log10p1", (0x4880,), 0x3C00, 0),                # log10p1(9) = 1
    ("log10p1", (0xBC00,), 0xFC00, R.DIVBYZERO),
    ("log2p1", (0xC000,), 0x7E00, R.INVALID),
    ("powr", (0x0000, 0x0000), 0x7E00, R.INVALID),    # powr(0, 0)
    ("powr", (0x7C00, 0x0000), 0x7E00, R.INVALID),    # powr(inf, 0)
    ("powr", (0x3C00, 0x7C00), 0x7E00, R.INVALID),    # powr(1, inf)
    ("powr", (0xC000, 0x4000), 0x7E00, R.INVALID),    # powr(-2, 2)
    ("powr", (0x0000, 0xC000), 0x7C00, R.DIVBYZERO),  # powr(0, -2) = +inf
    ("powr", (0x8000, 0xFC00), 0x7C00, 0),            # powr(-0, -inf) = +inf
    ("softplus", (0xFC00,), 0x0000, 0),               # P3109 4.10.13
])
def test_spec_cases(fn, args, code, flags):
    got, gotf = getattr(sfb, fn)(F16, *[np.array([a], np.uint16) for a in args])
    assert (int(got[0]), int(gotf[0])) == (code, flags)
    f16 = R.preset("float16")
    rec = (mi.binary_records(fn, f16, *[np.array([a]) for a in args]) if len(args) == 2
           else mi.unary_records(fn, f16, np.array(args)))
    ec, ef, _ = mp.deliver(f16, rec)
    assert (int(ec[0]), int(ef[0])) == (code, flags)


@pytest.mark.parametrize("fn,a,n,code,flags", [
    ("pown", 0x7E00, 0, 0x3C00, 0),                   # pown(qNaN, 0) = 1
    ("pown", 0x8000, -3, 0xFC00, R.DIVBYZERO),        # pown(-0, -3) = -inf
    ("pown", 0x8000, -2, 0x7C00, R.DIVBYZERO),
    ("pown", 0xFC00, 3, 0xFC00, 0),
    ("rootn", 0xC800, 3, 0xC000, 0),                  # rootn(-8, 3) = -2
    ("rootn", 0xC800, 2, 0x7E00, R.INVALID),
    ("rootn", 0x4000, 0, 0x7E00, R.INVALID),          # rootn(x, 0)
    ("rootn", 0x8000, -3, 0xFC00, R.DIVBYZERO),
    ("compound", 0x7E00, 0, 0x3C00, 0),               # compound(qNaN, 0) = 1
    ("compound", 0xBC00, -1, 0x7C00, R.DIVBYZERO),    # compound(-1, n < 0) = +inf
    ("compound", 0xBC00, 2, 0x0000, 0),
    ("compound", 0xC000, 0, 0x7E00, R.INVALID),       # x < -1
    ("compound", 0x3C00, 3, 0x4800, 0),               # (1 + 1)^3 = 8
])
def test_integer_spec_cases(fn, a, n, code, flags):
    got, gotf = getattr(sfb, fn)(F16, np.array([a], np.uint16), np.array([n]))
    assert (int(got[0]), int(gotf[0])) == (code, flags)
    rec = mi.int_records(fn, R.preset("float16"), np.array([a]), np.array([n]))
    ec, ef, _ = mp.deliver(R.preset("float16"), rec)
    assert (int(ec[0]), int(ef[0])) == (code, flags)
