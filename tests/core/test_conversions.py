"""Conversions: softfp8.bits.convert / from_float / to_float against tests/models/rational.py.

* every 8-bit format -> every 8-bit format: all 256 codes, 6 modes x sat x tininess;
* float16 (all 65536 codes) and other 16-bit presets -> every 8-bit format, full grid;
* every 8-bit format -> float16 / bfloat16 / uhp / shp / hfp16_169, full grid;
* every 8-bit format -> float32 / float64 (exact), also through to_float;
* float32 and float64 -> every 8-bit format on a large structured sample (every
  exponent, mantissa patterns at/around ties at every bit position, NaN/inf/subnormal),
  as bit patterns through convert and as float arrays through from_float.
"""

import random

import numpy as np
import pytest

from ..models import rational as ref

import softfp8
import softfp8.bits as sfb

FORMATS = ref.eight_bit_formats()
IDS = [f.name for f in FORMATS]
CONFIGS = [(m, s, t) for m in ref.MODES for s in (False, True) for t in ref.TININESS]
assert len(CONFIGS) == 24
MAX_REPORT = 10
CODES8 = np.arange(256, dtype=np.uint8)
CODES16 = np.arange(65536, dtype=np.uint16)


def _sf(fmt):
    return ref.to_softfp8(softfp8, fmt)


def _table(src, dst, codes):
    return ref.build_table(dst, [ref.exact_convert(src, dst, int(c)) for c in codes])


def _run_grid(src, dst, codes, table, idx, opfl, failures, configs=CONFIGS, via=None):
    """Compare convert(codes, src, dst) for each configuration; returns #cases."""
    n = 0
    ssrc = _sf(src) if via is None else via
    sdst = _sf(dst)
    for mode, sat, tin in configs:
        exp, expf, cls = table.evaluate(idx, mode, sat, tin)
        expf = expf | opfl
        got, gotf = sfb.convert(codes, ssrc, sdst, rounding=mode, saturate=sat, tininess=tin)
        got = np.asarray(got)
        gotf = np.asarray(gotf)
        assert got.dtype == np.dtype(dst.storage), (got.dtype, dst.name)
        assert gotf.dtype == np.uint8 and got.shape == codes.shape == gotf.shape
        bad = ref.compare(dst, got, gotf, exp, expf, cls)
        if bad.size:
            failures.append("%s -> %s %s: %d mismatches" % (src.name, dst.name,
                                                             (mode, sat, tin), bad.size))
            for i in bad[:MAX_REPORT]:
                failures.append("  %s -> %s %s: %s: expected %s %s, got %s %s" % (
                    src.name, dst.name, (mode, sat, tin), ref.describe(src, codes[i]),
                    ref.describe(dst, exp[i]), ref.flag_names(expf[i]),
                    ref.describe(dst, got[i]), ref.flag_names(gotf[i])))
        n += codes.size
    return n


@pytest.mark.parametrize("src", FORMATS, ids=IDS)
def test_8bit_to_8bit(src):
    failures = []
    n = 0
    for dst in FORMATS:
        table, idx, opfl = _table(src, dst, range(256))
        n += _run_grid(src, dst, CODES8, table, idx, opfl, failures)
    assert n == 256 * 24 * len(FORMATS) == 256 * 24 * 20
    assert not failures, "\n".join(failures[:60])


SIXTEEN = [ref.preset("float16"), ref.preset("bfloat16"), ref.preset("uhp"),
           ref.preset("hfp16_169"), ref.shp(20)]


@pytest.mark.parametrize("dst", FORMATS, ids=IDS)
def test_float16_to_8bit(dst):
    """All 65536 float16 codes, every mode, saturating or not, both tininess rules."""
    src = ref.preset("float16")
    failures = []
    table, idx, opfl = _table(src, dst, range(65536))
    n = _run_grid(src, dst, CODES16, table, idx, opfl, failures)
    assert n == 65536 * 24
    assert not failures, "\n".join(failures[:60])


@pytest.mark.parametrize("src", SIXTEEN[1:], ids=[f.name for f in SIXTEEN[1:]])
def test_16bit_to_8bit(src):
    """bfloat16, uhp, hfp16_169, shp(20): all codes into every 8-bit format; nearest
    even with default saturation and both tininess rules, plus saturating toward_zero
    and non-saturating upward (the full grid is covered by float16 above)."""
    failures = []
    n = 0
    cfgs = [("nearest_even", None, "after"), ("nearest_even", None, "before"),
            ("toward_zero", True, "after"), ("upward", False, "before"),
            ("downward", False, "after"), ("to_odd", True, "after")]
    for dst in FORMATS:
        table, idx, opfl = _table(src, dst, range(65536))
        n += _run_grid(src, dst, CODES16, table, idx, opfl, failures, cfgs)
    assert n == 65536 * 6 * 20
    assert not failures, "\n".join(failures[:60])


@pytest.mark.parametrize("src", FORMATS, ids=IDS)
def test_8bit_to_16bit(src):
    failures = []
    n = 0
    for dst in SIXTEEN:
        table, idx, opfl = _table(src, dst, range(256))
        n += _run_grid(src, dst, CODES8, table, idx, opfl, failures)
    assert n == 256 * 24 * 5
    assert not failures, "\n".join(failures[:60])


# --------------------------------------------------------------------------
# 8-bit -> float32 / float64 (always exact)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("src", FORMATS, ids=IDS)
def test_8bit_to_numpy_floats(src):
    n = 0
    failures = []
    for dst, dt, ut in ((ref.FLOAT32, np.float32, np.uint32), (ref.FLOAT64, np.float64, np.uint64)):
        exp = [ref.convert(src, dst, c) for c in range(256)]
        for mode in ("nearest_even", "toward_zero", "upward"):
            for api in ("convert", "to_float"):
                if api == "convert":
                    got, gotf = sfb.convert(CODES8, _sf(src), dt, rounding=mode)
                else:
                    got, gotf = sfb.to_float(CODES8, _sf(src), dtype=dt, rounding=mode)
                got = np.asarray(got)
                assert got.dtype == np.dtype(dt) and got.shape == (256,)
                bits = got.view(ut)
                for c in range(256):
                    ec, ef = exp[c]
                    gc, gf = int(bits[c]), int(gotf[c])
                    if ref.is_nan(dst, ec):
                        ok = ref.is_nan(dst, gc)
                    else:
                        ok = gc == ec
                    if not ok or gf != ef:
                        failures.append("%s -> %s (%s, %s): %s expected %s %s got %s %s" % (
                            src.name, dst.name, api, mode, ref.describe(src, c),
                            ref.describe(dst, ec), ref.flag_names(ef),
                            ref.describe(dst, gc), ref.flag_names(gf)))
                    n += 1
                # the float value itself equals the exact value
                for c in range(256):
                    d = ref.decode(src, c)
                    if d.kind in ("finite", "zero"):
                        assert got[c] == float(d.value)
    assert n == 256 * 2 * 3 * 2
    assert not failures, "\n".join(failures[:40])


# --------------------------------------------------------------------------
# float32 / float64 -> 8-bit on a structured sample
# --------------------------------------------------------------------------

def _mantissa_patterns(mbits, rng, n_high):
    """Mantissas at, just above and just below a tie at every bit position, with
    several high parts, plus edge patterns."""
    full = (1 << mbits) - 1
    pats = {0, 1, 2, 3, full, full - 1, 1 << (mbits - 1), (1 << (mbits - 1)) + 1,
            (1 << (mbits - 1)) - 1, 1 << (mbits - 2), full >> 1}
    for j in range(mbits):
        above = full & ~((2 << j) - 1)          # bits strictly above position j
        highs = [0, above] + [rng.getrandbits(mbits) & above for _ in range(n_high)]
        for h in highs:
            t = h | (1 << j)
            pats.update({t, t + 1 if t < full else t, t - 1})
    pats.update(rng.getrandbits(mbits) for _ in range(20))
    return sorted(p for p in pats if 0 <= p <= full)


def _float_sample(fmt, ebits, mbits, near, seed, n_high):
    """Bit patterns: every exponent; the full pattern set for unbiased exponents in
    [-near[0], near[1]] (covers every 8-bit format's range), a small set elsewhere."""
    rng = random.Random(seed)
    full_pats = _mantissa_patterns(mbits, rng, n_high)
    few = sorted(set(full_pats[:: max(1, len(full_pats) // 24)]) | {0, 1, (1 << mbits) - 1,
                                                                   1 << (mbits - 1)})
    bias = (1 << (ebits - 1)) - 1
    out = []
    for e in range(1 << ebits):
        unb = e - bias
        pats = full_pats if (-near[0] <= unb <= near[1] or e in (0, (1 << ebits) - 1)) else few
        for s in (0, 1):
            base = (s << (ebits + mbits)) | (e << mbits)
            out.extend(base | p for p in pats)
    return out


F32_SAMPLE = _float_sample(ref.FLOAT32, 8, 23, (70, 34), 1, 6)
F64_SAMPLE = _float_sample(ref.FLOAT64, 11, 52, (70, 34), 2, 0)


def test_float_samples_cover_enough():
    assert len(F32_SAMPLE) == len(set(F32_SAMPLE)) > 100000
    assert len(F64_SAMPLE) == len(set(F64_SAMPLE)) > 60000
    exps = {(b >> 23) & 0xFF for b in F32_SAMPLE}
    assert exps == set(range(256))


def _from_float_grid(src, dst, sample, ut, ft, configs, failures):
    codes = np.array(sample, dtype=ut)
    table, idx, opfl = _table(src, dst, sample)
    n = 0
    for mode, sat, tin in configs:
        exp, expf, cls = table.evaluate(idx, mode, sat, tin)
        expf = expf | opfl
        for api in ("convert", "from_float"):
            if api == "convert":
                got, gotf = sfb.convert(codes, ft, _sf(dst), rounding=mode, saturate=sat,
                                        tininess=tin)
            else:
                if mode != "nearest_even" and sat is not True:
                    continue
                got, gotf = sfb.from_float(codes.view(ft), _sf(dst), rounding=mode,
                                           saturate=sat, tininess=tin)
            got = np.asarray(got)
            assert got.dtype == np.dtype(dst.storage) and got.shape == codes.shape
            bad = ref.compare(dst, got, gotf, exp, expf, cls)
            if bad.size:
                failures.append("%s -> %s %s %s: %d mismatches" % (
                    src.name, dst.name, api, (mode, sat, tin), bad.size))
                for i in bad[:MAX_REPORT]:
                    failures.append("  %s: expected %s %s, got %s %s" % (
                        ref.describe(src, codes[i]), ref.describe(dst, exp[i]),
                        ref.flag_names(expf[i]), ref.describe(dst, got[i]),
                        ref.flag_names(gotf[i])))
            n += codes.size
    return n


@pytest.mark.parametrize("dst", FORMATS, ids=IDS)
def test_float32_to_8bit(dst):
    failures = []
    n = _from_float_grid(ref.FLOAT32, dst, F32_SAMPLE, np.uint32, np.float32, CONFIGS, failures)
    # 24 configurations through convert + 14 (nearest_even or saturating) through from_float
    assert n == len(F32_SAMPLE) * (24 + 14)
    assert not failures, "\n".join(failures[:60])


@pytest.mark.parametrize("dst", FORMATS, ids=IDS)
def test_float64_to_8bit(dst):
    failures = []
    cfgs = [("nearest_even", False, "after"), ("nearest_even", True, "before"),
            ("toward_zero", False, "after"), ("upward", True, "after"),
            ("downward", False, "before"), ("to_odd", False, "after"),
            ("nearest_away", False, "after")]
    n = _from_float_grid(ref.FLOAT64, dst, F64_SAMPLE, np.uint64, np.float64, cfgs, failures)
    assert n == len(F64_SAMPLE) * (7 + 3)
    assert not failures, "\n".join(failures[:60])
