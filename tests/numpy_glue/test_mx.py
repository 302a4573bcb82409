"""softfp8.mx against an independent plain-Python reference written from the sources.

The reference below uses only Python fractions: the element value sets built from their
definitions (OCP MX v1.0 §5.3 tables, OCP FP8 for E4M3/E5M2, MXINT8 = k/64), the shared
exponent of OCP MX v1.0 §6.3 (floor(log2(amax)) - emax_elem, clamped to E8M0's -127; a
block holding NaN/inf or needing an exponent above 127 gets the NaN scale), the other
scale rules as docs/training.md defines them, NVFP4's two-level scales (tensor scale =
float32(amax / (6 * 448)), block scale = UE4M3(block_amax / 6 / tensor scale)) and
DeepSeek-V3's float32 tile scales (amax / 448).  It calls nothing of softfp8.mx but the
public functions under test.
"""
import math
import random
from bisect import bisect_right
from fractions import Fraction as F

import numpy as np
import pytest

import softfp8
from softfp8 import mx

# --------------------------------------------------------------------------------------
# reference


def _fp_grid(e_bits, m_bits, bias, specials):
    """Non-negative finite values of a sign-magnitude float format, in code order."""
    out = []
    for e in range(2 ** e_bits):
        for m in range(2 ** m_bits):
            if specials == "fn" and e == 2 ** e_bits - 1 and m == 2 ** m_bits - 1:
                continue
            if specials == "ieee" and e == 2 ** e_bits - 1:
                continue
            if e == 0:
                out.append(F(m, 2 ** m_bits) * F(2) ** (1 - bias))
            else:
                out.append((1 + F(m, 2 ** m_bits)) * F(2) ** (e - bias))
    assert out == sorted(out)
    return out


GRID = {
    "e4m3": _fp_grid(4, 3, 7, "fn"),
    "e5m2": _fp_grid(5, 2, 15, "ieee"),
    "e2m3": _fp_grid(2, 3, 1, "none"),
    "e3m2": _fp_grid(3, 2, 3, "none"),
    "e2m1": _fp_grid(2, 1, 1, "none"),
    "int8": [F(k, 64) for k in range(128)],      # MXINT8, symmetric: |k| <= 127
}
# kind -> (element, emax_elem, mantissa bits, block); emax from the OCP MX v1.0 tables
REF_KINDS = {
    "mxfp8_e4m3": ("e4m3", 8, 3, 32),
    "mxfp8_e5m2": ("e5m2", 15, 2, 32),
    "mxfp6_e2m3": ("e2m3", 2, 3, 32),
    "mxfp6_e3m2": ("e3m2", 4, 2, 32),
    "mxfp4": ("e2m1", 2, 1, 32),
    "mxint8": ("int8", 0, 6, 32),
}
MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd"]


def ref_round(v, grid, mode):
    """Round the Fraction v into the grid (saturating at its largest value)."""
    s = -1 if v < 0 else 1
    a = abs(v)
    if a >= grid[-1]:
        return s * grid[-1]
    i = bisect_right(grid, a) - 1
    lo, hi = grid[i], grid[i + 1]
    if a == lo:
        return s * lo
    up = {"toward_zero": False, "upward": s > 0, "downward": s < 0,
          "to_odd": (i + 1) % 2 == 1}.get(mode)
    if up is None:
        mid = (lo + hi) / 2
        up = a > mid or (a == mid and (mode == "nearest_away" or (i + 1) % 2 == 0))
    return s * (hi if up else lo)


def floor_log2(a):
    """floor(log2(a)) of a Fraction a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if F(2) ** e > a:
        e -= 1
    assert F(2) ** e <= a < F(2) ** (e + 1)
    return e


def ref_shared(amax, kind, rule):
    elem, emax, mbits, _ = REF_KINDS[kind]
    e = floor_log2(amax)
    if rule == "floor":
        return e - emax
    if rule == "ceil":
        return (e if amax == F(2) ** e else e + 1) - emax
    if rule == "even":
        sig = amax / F(2) ** e                         # [1, 2)
        r = math.floor(sig * 2 ** mbits + F(1, 2))     # round half up to mbits
        return (e + 1 if r == 2 ** (mbits + 1) else e) - emax
    # rceil: the smallest k with amax <= max_elem * 2**k
    top = GRID[elem][-1]
    k = e - floor_log2(top) - 1
    while amax > top * F(2) ** k:
        k += 1
    return k


def ref_mx_block(vals, kind, rule, mode):
    """(E8M0 code, [dequantised values as Fractions] or None for a NaN block)."""
    if any(not math.isfinite(v) for v in vals):
        return 255, None
    amax = max(F(abs(v)) for v in vals)
    shared = -127 if amax == 0 else max(ref_shared(amax, kind, rule), -127)
    if shared > 127:
        return 255, None
    x = F(2) ** shared
    grid = GRID[REF_KINDS[kind][0]]
    return shared + 127, [ref_round(F(v) / x, grid, mode) * x for v in vals]


def ref_f32(v):
    """float32 nearest (ties to even) to the Fraction v >= 0 (no overflow)."""
    if v == 0:
        return F(0)
    e = max(floor_log2(v), -126)
    ulp = F(2) ** (e - 23)
    q = v / ulp
    n = math.floor(q)
    if q - n > F(1, 2) or (q - n == F(1, 2) and n % 2):
        n += 1
    return n * ulp


def _blocks_along(x, axis, block):
    """[(index tuple list, values)] blocks of x along axis (last block may be short)."""
    xm = np.moveaxis(x, axis, -1)
    idx = np.moveaxis(np.indices(x.shape), 0, -1)
    idx = np.moveaxis(idx, axis, -2)
    for lead in np.ndindex(xm.shape[:-1]):
        n = xm.shape[-1]
        for b0 in range(0, n, block):
            sl = lead + (slice(b0, min(n, b0 + block)),)
            yield lead, b0 // block, [tuple(t) for t in idx[sl]], [float(v) for v in xm[sl]]


def check_mx(x, kind, axis=-1, rule="floor", mode="nearest_even", block=None):
    """quantize(...) equals the reference on every block: scale codes and values."""
    ba = mx.quantize(x, kind, axis=axis, scale_rule=rule, rounding=mode, block=block)
    bs = block or REF_KINDS[kind][3]
    ax = axis % x.ndim
    assert ba.shape == x.shape and ba.axis == ax and ba.block == bs
    deq = ba.dequantize(np.float64)
    scales = np.moveaxis(ba.scales, ax, -1)
    count = 0
    for lead, bi, idxs, vals in _blocks_along(x, ax, bs):
        code, ref = ref_mx_block(vals, kind, rule, mode)
        assert scales[lead + (bi,)] == code, (kind, rule, mode, vals, scales[lead + (bi,)], code)
        for j, t in enumerate(idxs):
            got = deq[t]
            if ref is None:
                assert math.isnan(got)
                continue
            assert got == ref[j], (kind, rule, mode, vals[j], got, ref[j], code)
            if got == 0 and kind != "mxint8":
                assert math.copysign(1, got) == math.copysign(1, vals[j]), (kind, vals[j])
        count += 1
    return count


# --------------------------------------------------------------------------------------
# element formats and the kind table


def test_element_formats_and_kind_table():
    for name in ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1"):
        fmt = mx.element_format(name)
        grid = GRID[name]
        n = len(grid)
        codes = np.arange(n, dtype=fmt.storage)
        vals = codes.view(fmt.dtype).astype(np.float64)
        assert [F(float(v)) for v in vals] == grid, name
        sign = 1 << (fmt.bits - 1)
        neg = (codes | sign).view(fmt.dtype).astype(np.float64)
        assert [F(float(v)) for v in neg] == [-g for g in grid], name
    for kind, (elem, emax, mbits, block) in REF_KINDS.items():
        k = mx.KINDS[kind]
        assert (k.emax, k.mbits, k.block, k.elem_max) == (emax, mbits, block, GRID[elem][-1])
        assert floor_log2(GRID[elem][-1]) == emax
    k = mx.KINDS["nvfp4"]
    assert (k.block, k.elem_max) == (16, 6)


# --------------------------------------------------------------------------------------
# MX: edge cases, every rule and mode


def _edge_blocks(kind):
    """Blocks of 32 around every boundary a scale rule can see."""
    elem, emax, mbits, _ = REF_KINDS[kind]
    top = float(GRID[elem][-1])
    rng = random.Random(hash(kind) & 0xFFFF)
    amaxes = [0.0, 2.0 ** -1074, 2.0 ** -149, 2.0 ** -1022, 2.0 ** (-127 + emax),
              2.0 ** (-128 + emax), 2.0 ** (127 + emax), 2.0 ** (127 + emax) * 1.5,
              2.0 ** (128 + emax), 2.0 ** 1000, 1.7976931348623157e308]
    for k in (-3, 0, 1, 5, 40):
        p = 2.0 ** k
        for base in (p, p * (2 - 2.0 ** -(mbits + 1)), top * p / 2.0 ** emax, p * 1.5):
            amaxes += [base, math.nextafter(base, 0), math.nextafter(base, math.inf)]
    blocks = []
    for a in amaxes:
        rest = [rng.choice([-1, 1]) * a * rng.random() for _ in range(31)]
        blk = rest[:]
        blk.insert(rng.randrange(32), a if rng.random() < 0.5 else -a)
        blocks.append(blk)
        # elements exactly at midpoints of the element grid, scaled to the block
        if 0 < a < 1e300:
            s = F(2) ** (floor_log2(F(a)) - emax)
            g = GRID[elem]
            mids = [float((g[i] + g[i + 1]) / 2 * s) for i in range(min(31, len(g) - 1))]
            blocks.append([a] + [m * rng.choice([-1, 1]) for m in mids] +
                          [0.0] * (31 - len(mids)))
    blocks.append([0.0] * 31 + [-0.0])
    blocks.append([1.0] * 16 + [math.nan] + [2.0] * 15)
    blocks.append([1.0] * 16 + [math.inf] + [2.0] * 15)
    blocks.append([-math.inf] + [0.0] * 31)
    blocks.append([-0.0, 1e-300, -1e-300] + [3.0] * 29)   # far below the elements
    return blocks


@pytest.mark.parametrize("kind", sorted(REF_KINDS))
def test_mx_edge_cases_every_rule_and_mode(kind):
    x = np.array(_edge_blocks(kind))
    count = 0
    for rule in mx.SCALE_RULES:                  # the scale rule does not depend on the mode
        for mode in (MODES if rule == "floor" else ["nearest_even", "upward"]):
            count += check_mx(x, kind, axis=1, rule=rule, mode=mode)
    assert count == x.shape[0] * (len(MODES) + 3 * 2)


def test_scale_rules_hand_worked_mxfp4():
    # MXFP4: emax_elem 2, largest element 6, 1 mantissa bit.  E8M0 code = 127 + exponent.
    #   amax   floor  ceil  even (1.m rounded to 1 bit, ties up)  rceil (min k: amax <= 6*2^k)
    table = [(4.0, 127, 127, 127, 127), (5.0, 127, 128, 127, 127), (6.0, 127, 128, 127, 127),
             (6.96, 127, 128, 127, 128), (7.0, 127, 128, 128, 128), (8.0, 128, 128, 128, 128),
             (3.0, 126, 127, 126, 126), (0.75, 124, 125, 124, 124)]
    for amax, *codes in table:
        x = np.array([amax] + [0.5] * 31)
        got = [int(mx.quantize(x, "mxfp4", scale_rule=r).scales[0]) for r in mx.SCALE_RULES]
        assert got == codes, (amax, got, codes)


def test_mx_scale_codes_at_the_e8m0_limits():
    # OCP MX: X = 2**(floor(log2(amax)) - emax); E8M0 spans 2**-127 .. 2**127
    for kind, (elem, emax, _, _) in REF_KINDS.items():
        def code(a):
            return int(mx.quantize(np.array([a] + [0.0] * 31), kind).scales[0])
        assert code(2.0 ** (-127 + emax)) == 0                  # 2**-127, exact
        assert code(2.0 ** (-130 + emax)) == 0                  # clamped up to 2**-127
        assert code(0.0) == 0                                    # all-zero block: 2**-127
        assert code(2.0 ** (127 + emax)) == 254                 # 2**127
        assert code(2.0 ** (128 + emax)) == 255                 # no E8M0: NaN
        assert code(math.nan) == 255 and code(math.inf) == 255
        assert code(1.0) == 127 - emax
    # a NaN scale makes the whole block NaN; other blocks are untouched
    x = np.array([[1.0] * 32, [math.nan] + [1.0] * 31])
    d = mx.quantize(x, "mxfp8_e4m3").dequantize()
    assert np.all(d[0] == 1) and np.all(np.isnan(d[1]))


def test_mx_saturates_and_rounds_in_the_spec_direction():
    # floor rule: amax / X can exceed the element's max; the spec clamps to the max normal
    x = np.array([511.0] + [1.0] * 31)
    b = mx.quantize(x, "mxfp8_e4m3")
    assert b.scales[0] == 127 and b.dequantize(np.float64)[0] == 448.0
    b = mx.quantize(x, "mxfp8_e4m3", scale_rule="rceil")
    assert b.scales[0] == 128 and b.dequantize(np.float64)[0] == 512.0
    # the same under rounding upward: never beyond the max
    with softfp8.rounding("upward"):
        assert mx.quantize(x, "mxfp8_e4m3").dequantize(np.float64)[0] == 448.0


@pytest.mark.parametrize("kind", sorted(REF_KINDS))
def test_mx_random_tensors_shapes_and_axes(kind):
    rng = np.random.default_rng(sorted(REF_KINDS).index(kind))
    shapes = [((32,), 0), ((5, 64), 1), ((5, 64), 0), ((3, 7, 40), 2), ((3, 7, 40), 1),
              ((2, 33), -1), ((1,), 0), ((4, 3, 2), 0), ((70,), 0)]
    count = 0
    for i, (shape, axis) in enumerate(shapes):
        x = rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, size=shape))
        if i % 2:
            x = x.astype(np.float32)
        rule = mx.SCALE_RULES[i % 4]
        mode = MODES[i % len(MODES)]
        count += check_mx(x, kind, axis=axis, rule=rule, mode=mode)
    assert count == 1 + 5 * 2 + 64 + 21 * 2 + 3 * 40 + 2 * 2 + 1 + 3 * 2 + 3


def test_mx_block_size_and_ragged_last_block():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 37))
    assert check_mx(x, "mxfp4", axis=1, block=8) == 3 * 5
    b = mx.quantize(x, "mxfp8_e4m3")
    assert b.scales.shape == (3, 2)
    # the short last block equals the same values zero-padded to a whole block
    pad = np.concatenate([x, np.zeros((3, 27))], axis=1)
    bp = mx.quantize(pad, "mxfp8_e4m3")
    assert np.array_equal(bp.scales, b.scales)
    assert np.array_equal(bp.dequantize()[:, :37], b.dequantize())


def test_mxint8_semantics():
    x = np.array([1.999, -1.999, 1.0, -2.0 ** -7, 2.0 ** -7 * 3] + [0.0] * 27)
    b = mx.quantize(x, "mxint8")
    assert b.elements.dtype == np.int8
    assert b.scales[0] == 127 + 0             # floor(log2 1.999) - 0
    assert list(b.elements[:5]) == [127, -127, 64, -0, 2]     # -2**-7*64 = -0.5 -> 0 (RNE)
    assert b.elements.min() >= -127           # -128 (= -2) is never produced
    d = b.dequantize(np.float64)
    assert d[0] == 127 / 64 and d[1] == -127 / 64
    with softfp8.rounding("nearest_away"):
        assert mx.quantize(x, "mxint8").elements[3] == -1


def test_mx_stochastic_rounding_is_softfp8s_cast_of_the_exact_quotient():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 64))
    for kind in ("mxfp8_e4m3", "mxfp6_e3m2", "mxfp4"):
        b = mx.quantize(x, kind, rounding="stochastic", seed=11)
        b2 = mx.quantize(x, kind, rounding="stochastic", seed=11)
        assert np.array_equal(b.elements.view(np.uint8), b2.elements.view(np.uint8))
        # reference quotient x / 2**shared (exact in float64), cast by softfp8 once
        sh = b.scales.astype(np.int64) - 127
        q = x / np.exp2(np.repeat(sh, 32, axis=1))
        fmt = b.element_format
        with softfp8.rounding("stochastic", seed=11):
            ref = q.astype(fmt.dtype)
        assert np.array_equal(b.elements.view(np.uint8), ref.view(np.uint8)), kind
        # and each element is one of the two neighbours of the exact value
        lo = mx.quantize(x, kind, rounding="toward_zero").dequantize(np.float64)
        d = b.dequantize(np.float64)
        up = np.where(x >= 0, mx.quantize(x, kind, rounding="upward").dequantize(np.float64),
                      mx.quantize(x, kind, rounding="downward").dequantize(np.float64))
        assert np.all((d == lo) | (d == up))
        assert np.any(d != lo) and np.any(d != up)


def test_mx_keeps_the_context_sr_bits():
    x = np.random.default_rng(15).standard_normal((3, 64))
    for bits in (1, 3):
        with softfp8.rounding("stochastic", sr_bits=bits):
            b = mx.quantize(x, "mxfp4", rounding="stochastic", seed=9)
        q = x / np.exp2(np.repeat(b.scales.astype(np.int64) - 127, 32, axis=1))
        with softfp8.rounding("stochastic", seed=9, sr_bits=bits):
            ref = q.astype(b.element_format.dtype)
        assert np.array_equal(b.elements.view(np.uint8), ref.view(np.uint8))


def test_mx_uses_the_context_rounding_mode():
    x = np.random.default_rng(5).standard_normal(64)
    with softfp8.rounding("toward_zero"):
        a = mx.quantize(x, "mxfp4").dequantize(np.float64)
    b = mx.quantize(x, "mxfp4", rounding="toward_zero").dequantize(np.float64)
    assert np.array_equal(a, b) and np.all(np.abs(a) <= np.abs(x))


# --------------------------------------------------------------------------------------
# NVFP4


def ref_nvfp4(x, mode="nearest_even", block=16):
    """Dequantised values, block scale values and the tensor scale (Fractions)."""
    flat = [float(v) for v in x.reshape(-1)]
    fin = [abs(F(v)) for v in flat if math.isfinite(v)]
    t_amax = max(fin, default=F(0))
    ts = F(1) if t_amax == 0 else ref_f32(t_amax / (6 * 448))
    out, scales = [], []
    for b0 in range(0, len(flat), block):
        vals = flat[b0:b0 + block]
        if any(not math.isfinite(v) for v in vals):
            scales.append(None)
            out += [None] * len(vals)
            continue
        bamax = max(abs(F(v)) for v in vals)
        sb = ref_round(bamax / 6 / ts, GRID["e4m3"], "nearest_even")
        scales.append(sb)
        if sb == 0:
            out += [F(0)] * len(vals)
        else:
            out += [ref_round(F(v) / (sb * ts), GRID["e2m1"], mode) * sb * ts for v in vals]
    return out, scales, ts


def _check_nvfp4(x, mode="nearest_even"):
    b = mx.quantize(x, "nvfp4", rounding=mode)
    ref, scales, ts = ref_nvfp4(x, mode)
    assert F(float(b.tensor_scale)) == ts and b.tensor_scale.dtype == np.float32
    sv = b.scale_values().reshape(-1)
    assert np.all(b.scales < 0x80)                      # UE4M3: sign bit 0
    for got, want in zip(sv, scales):
        assert (math.isnan(got) if want is None else F(float(got)) == want)
    d = b.dequantize(np.float64).reshape(-1)
    for got, want in zip(d, ref):
        assert (math.isnan(got) if want is None else F(float(got)) == want), (got, want)
    return len(scales)


def test_nvfp4_two_level_against_reference():
    rng = np.random.default_rng(11)
    count = 0
    for i, mode in enumerate(MODES):
        x = rng.standard_normal(16 * 12) * np.exp2(rng.integers(-12, 12, size=16 * 12))
        x = x.astype(np.float32 if i % 2 else np.float64)
        count += _check_nvfp4(x, mode)
    # ragged, zero tensor, NaN / inf blocks, a block whose scale underflows to zero
    count += _check_nvfp4(rng.standard_normal(37))
    count += _check_nvfp4(np.zeros(32))
    count += _check_nvfp4(np.array([1.0] * 16 + [math.nan] + [2.0] * 15))
    count += _check_nvfp4(np.array([1e6] * 16 + [1e-9] * 16 + [-math.inf] * 16))
    assert count == 6 * 12 + 3 + 2 + 2 + 3


def test_nvfp4_shapes_axis_and_given_tensor_scale():
    x = np.random.default_rng(2).standard_normal((48, 5))
    b = mx.quantize(x, "nvfp4", axis=0)
    assert b.scales.shape == (3, 5) and b.block == 16 and b.axis == 0
    bt = mx.quantize(x.T.copy(), "nvfp4")
    assert np.array_equal(b.dequantize().T, bt.dequantize())
    b2 = mx.quantize(x, "nvfp4", axis=0, tensor_scale=b.tensor_scale)
    assert np.array_equal(b2.dequantize(), b.dequantize())
    with pytest.raises(ValueError, match="scale_rule"):
        mx.quantize(x, "nvfp4", scale_rule="floor")
    with pytest.raises(ValueError, match="tensor_scale"):
        mx.quantize(x, "nvfp4", tensor_scale=-1.0)
    with pytest.raises(ValueError, match="tensor_scale"):
        mx.quantize(x, "mxfp4", tensor_scale=1.0)


# --------------------------------------------------------------------------------------
# DeepSeek-V3 tiles


def _check_tiles(x, tile, mode="nearest_even"):
    b = mx.quantize_tiles(x, tile, rounding=mode)
    d = b.dequantize(np.float64)
    th, tw = tile
    n = 0
    lead_shape = x.shape[:-2] if tile == (128, 128) else x.shape[:-1]
    for lead in np.ndindex(lead_shape):
        xs = x[lead] if tile == (128, 128) else x[lead][None, :]
        ds = d[lead] if tile == (128, 128) else d[lead][None, :]
        ss = b.scales[lead] if tile == (128, 128) else b.scales[lead][None, :]
        for i0 in range(0, xs.shape[0], th):
            for j0 in range(0, xs.shape[1], tw):
                t = xs[i0:i0 + th, j0:j0 + tw]
                vals = [float(v) for v in t.reshape(-1)]
                got_s = ss[i0 // th, j0 // tw]
                assert got_s.dtype == np.float32
                if any(not math.isfinite(v) for v in vals):
                    assert math.isnan(got_s) and np.all(np.isnan(ds[i0:i0 + th, j0:j0 + tw]))
                    n += 1
                    continue
                amax = max(abs(F(v)) for v in vals)
                s = F(1) if amax == 0 else ref_f32(amax / 448)
                assert F(float(got_s)) == s
                want = [ref_round(F(v) / s, GRID["e4m3"], mode) * s for v in vals]
                got = [F(float(v)) for v in ds[i0:i0 + th, j0:j0 + tw].reshape(-1)]
                assert got == want
                n += 1
    return n


def test_deepseek_tiles_against_reference():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 300)) * 10
    a[1, 5] = np.nan
    a[2, :128] = 0
    assert _check_tiles(a, (1, 128)) == 9
    assert _check_tiles(rng.standard_normal((2, 2, 130)), (1, 128), "toward_zero") == 8
    w = rng.standard_normal((130, 260)).astype(np.float32)
    assert _check_tiles(w, (128, 128)) == 6
    b = mx.quantize_tiles(w, (128, 128))
    assert b.axis == (0, 1) and b.block == (128, 128) and b.scales.shape == (2, 3)
    assert _check_tiles(rng.standard_normal((2, 129, 5)), (128, 128), "upward") == 4


# --------------------------------------------------------------------------------------
# BlockArray: slicing, pack


def test_slicing_along_non_blocked_axes_equals_quantising_the_slice():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 5, 70))
    for kind in ("mxfp8_e4m3", "mxint8", "mxfp6_e2m3"):
        b = mx.quantize(x, kind, axis=2)
        for key in [(1,), (slice(1, 3),), (Ellipsis, slice(None)), (2, slice(None, None, 2)),
                    (slice(None), -1), (Ellipsis, slice(32, 64)), (0, 1, slice(64, None))]:
            s = b[key]
            ref = mx.quantize(x[key], kind, axis=-1)
            assert s.shape == ref.shape and s.axis == ref.axis
            assert np.array_equal(s.scales, ref.scales)
            assert np.array_equal(s.dequantize(), ref.dequantize()), (kind, key)
    b = mx.quantize(x, "mxfp4", axis=0)
    s = b[:, 2]
    assert s.axis == 0 and s.shape == (4, 70)
    assert np.array_equal(s.dequantize(), mx.quantize(x[:, 2], "mxfp4", axis=0).dequantize())
    bad = mx.quantize(x, "mxfp4", axis=2)
    for key in [(0, 0, 5), (Ellipsis, slice(1, 33)), (Ellipsis, slice(0, 40)),
                (Ellipsis, slice(None, None, 2))]:
        with pytest.raises(IndexError):
            bad[key]
    with pytest.raises(TypeError):
        bad[[0, 1]]
    with pytest.raises(IndexError):
        bad[7]


def test_pack_fp4_exhaustive():
    count = 0
    for a in range(16):
        for b in range(16):
            p = mx.pack_fp4(np.array([a, b], dtype=np.uint8))
            assert p.dtype == np.uint8 and list(p) == [a | (b << 4)]
            assert list(mx.unpack_fp4(p, 2)) == [a, b]
            count += 1
    assert count == 256
    rng = np.random.default_rng(0)
    for n in range(0, 12):
        c = rng.integers(0, 16, n)
        p = mx.pack_fp4(c)
        assert p.size == (n + 1) // 2
        assert list(mx.unpack_fp4(p, n)) == list(c)
        if n % 2:
            assert p[-1] >> 4 == 0
    with pytest.raises(ValueError, match="16"):
        mx.pack_fp4([1, 16])
    with pytest.raises(ValueError, match="bytes"):
        mx.unpack_fp4(np.zeros(2, np.uint8), 5)


def test_pack_fp6_exhaustive():
    count = 0
    rng = random.Random(1)
    for lane in range(4):
        for c in range(64):
            codes = [rng.randrange(64) for _ in range(4)]
            codes[lane] = c
            p = mx.pack_fp6(np.array(codes))
            word = int.from_bytes(bytes(p), "little")
            assert p.size == 3 and word == sum(v << (6 * i) for i, v in enumerate(codes))
            assert list(mx.unpack_fp6(p, 4)) == codes
            count += 1
    for a in range(64):                      # every pair straddling the byte boundary
        codes = np.array([[5, a, 64 - 1 - a, 17]] * 64)
        codes[:, 2] = np.arange(64)
        p = mx.pack_fp6(codes).reshape(64, 3)
        back = mx.unpack_fp6(p.reshape(-1), 256).reshape(64, 4)
        assert np.array_equal(back, codes)
        count += 64
    assert count == 4 * 64 + 64 * 64
    for n in range(0, 13):
        c = np.array([rng.randrange(64) for _ in range(n)], dtype=np.int64)
        p = mx.pack_fp6(c)
        assert p.size == -(-6 * n // 8)
        assert int.from_bytes(bytes(p), "little") == sum(int(v) << (6 * i) for i, v in enumerate(c))
        assert list(mx.unpack_fp6(p, n)) == list(c)
    with pytest.raises(ValueError, match="64"):
        mx.pack_fp6([64])
    with pytest.raises(TypeError):
        mx.pack_fp6(np.array([1.5]))


@pytest.mark.parametrize("kind", sorted(mx.KINDS))
def test_blockarray_pack_round_trip(kind):
    x = np.random.default_rng(1).standard_normal((3, 5, 37))
    for axis in (0, 2):
        b = mx.quantize(x, kind, axis=axis)
        p = b.pack()
        bits = {"mxfp4": 4, "nvfp4": 4, "mxfp6_e2m3": 6, "mxfp6_e3m2": 6}.get(kind, 8)
        assert p["data"].dtype == np.uint8 and p["data"].size == -(-x.size * bits // 8)
        u = mx.BlockArray.unpack(p)
        assert u.shape == b.shape and u.axis == b.axis and u.kind == kind
        assert np.array_equal(u.elements.view(np.uint8), b.elements.view(np.uint8))
        assert np.array_equal(u.dequantize(), b.dequantize(), equal_nan=True)
    t = mx.quantize_tiles(x.reshape(15, 37), (128, 128))
    u = mx.BlockArray.unpack(t.pack())
    assert np.array_equal(u.dequantize(), t.dequantize())


def test_packed_element_order_is_the_block_order():
    x = np.arange(1, 9, dtype=np.float64).reshape(2, 4) / 2      # E2M1 values
    b = mx.quantize(x, "mxfp4", axis=0, block=2)
    codes = np.moveaxis(b.elements, 0, -1).reshape(-1).view(np.uint8)
    assert np.array_equal(mx.unpack_fp4(b.pack()["data"], 8), codes)


def test_dequantize_dtypes():
    x = np.random.default_rng(8).standard_normal(64)
    b = mx.quantize(x, "mxfp8_e4m3")
    d64 = b.dequantize(np.float64)
    assert b.dequantize().dtype == np.float32
    assert np.array_equal(b.dequantize(), d64.astype(np.float32))
    h = b.dequantize(softfp8.bfloat16)
    assert h.dtype == softfp8.bfloat16.dtype
    want = d64.astype(softfp8.bfloat16.dtype).astype(np.float64)
    assert np.array_equal(h.astype(np.float64), want)


def test_bad_input():
    x = np.ones((2, 32))
    with pytest.raises(ValueError, match="kind"):
        mx.quantize(x, "mxfp5")
    with pytest.raises(ValueError, match="scale_rule"):
        mx.quantize(x, "mxfp4", scale_rule="round")
    with pytest.raises(ValueError, match="axis"):
        mx.quantize(x, "mxfp4", axis=2)
    with pytest.raises(TypeError, match="axis"):
        mx.quantize(x, "mxfp4", axis=1.0)
    with pytest.raises(ValueError, match="dimension"):
        mx.quantize(np.float64(1.0), "mxfp4")
    with pytest.raises(TypeError, match="dtype"):
        mx.quantize(x.astype(complex), "mxfp4")
    with pytest.raises(ValueError, match="block"):
        mx.quantize(x, "mxfp4", block=0)
    with pytest.raises(ValueError):
        mx.quantize(x, "mxfp4", rounding="sideways")
    with pytest.raises(ValueError, match="tile"):
        mx.quantize_tiles(x, (64, 64))
    with pytest.raises(ValueError, match="dimension"):
        mx.quantize_tiles(np.ones(5), (128, 128))
    with pytest.raises(ValueError, match="element format"):
        mx.element_format("e9m9")
    with pytest.raises(ValueError, match="beyond float32"):
        mx.quantize_tiles(np.array([1e300, 1.0]), (1, 128))
    with pytest.raises(ValueError, match="beyond float32"):
        mx.quantize(np.array([1e300, 1.0]), "nvfp4")
    with pytest.raises(ValueError, match="not exact"):
        mx.quantize(np.array([2 ** 60 + 1] * 4), "mxfp4")



def test_stochastic_tiles_and_nvfp4_use_softfp8s_cast_stream():
    """Stochastic rounding of x / scale: the elements are softfp8's own stochastic cast of
    the quotient under the same seed (a float64 quotient x / d differs from the exact one
    only below 2**-53 relative, which changes a 32-bit stochastic decision with
    probability < 2**-20 per element), and each is a neighbour of the exact quotient."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 256)) * 3
    b = mx.quantize_tiles(x, (1, 128), rounding="stochastic", seed=21)
    d = np.repeat(b.scales.astype(np.float64), 128, axis=1)
    with softfp8.rounding("stochastic", seed=21):
        ref = (x / d).astype(softfp8.e4m3.dtype)
    assert np.array_equal(b.elements.view(np.uint8), ref.view(np.uint8))
    lo = mx.quantize_tiles(x, (1, 128), rounding="toward_zero").dequantize(np.float64)
    up, down = (mx.quantize_tiles(x, (1, 128), rounding=m).dequantize(np.float64)
                for m in ("upward", "downward"))
    away = np.where(x >= 0, up, down)
    got = b.dequantize(np.float64)
    assert np.all((got == lo) | (got == away)) and np.any(got != lo) and np.any(got != away)
    x = rng.standard_normal(320)
    b = mx.quantize(x, "nvfp4", rounding="stochastic", seed=4)
    d = np.repeat(b.scale_values(), 16) * float(b.tensor_scale)
    with softfp8.rounding("stochastic", seed=4):
        ref = (x / d).astype(mx.element_format("e2m1").dtype)
    assert np.array_equal(b.elements.view(np.uint8), ref.view(np.uint8))
    assert _check_nvfp4(x[:64], "nearest_even") == 4


def test_sticky_flags_of_the_element_casts():
    x = np.array([511.0] + [1.0] * 31)           # floor rule: 511 / 2**0 clamps to 448
    with softfp8.collect_flags() as fl:
        mx.quantize(x, "mxfp8_e4m3")
    assert fl.flags & softfp8.Flags.OVERFLOW and fl.flags & softfp8.Flags.INEXACT
    with softfp8.collect_flags() as fl:
        mx.quantize(np.array([1.0, 2.0, 0.5] + [0.0] * 29), "mxfp8_e4m3", scale_rule="rceil")
        mx.quantize(np.array([math.nan] + [1.0] * 31), "mxfp4")      # NaN block: no cast flag
    assert fl.flags == 0


def test_scale_codes_agree_with_the_scale_presets():
    """E8M0 / UE4M3 scale codes read through the registry's presets (branch h-formats)
    give the same values as BlockArray.scale_values()."""
    e8m0 = getattr(softfp8, "float8_e8m0fnu", None)
    ue4m3 = getattr(softfp8, "ue4m3", None)
    if e8m0 is None or ue4m3 is None:
        pytest.skip("the float8_e8m0fnu / ue4m3 presets are not in this build")
    x = np.random.default_rng(6).standard_normal((3, 64)) * np.exp2(np.arange(64) - 32)
    x[1, 3] = np.nan
    b = mx.quantize(x, "mxfp6_e2m3")
    assert np.array_equal(b.scales.view(e8m0.dtype).astype(np.float64), b.scale_values(),
                          equal_nan=True)
    b = mx.quantize(x, "nvfp4")
    assert np.array_equal(b.scales.view(ue4m3.dtype).astype(np.float64), b.scale_values(),
                          equal_nan=True)


def test_empty_arrays():
    count = 0
    for shape in [(0,), (3, 0), (0, 40), (2, 0, 5)]:
        for kind in mx.KINDS:
            for axis in range(len(shape)):
                b = mx.quantize(np.zeros(shape), kind, axis=axis)
                assert b.dequantize().shape == shape and b.elements.size == 0
                assert mx.BlockArray.unpack(b.pack()).shape == shape
                count += 1
        assert mx.quantize_tiles(np.zeros(shape), (1, 128)).dequantize().shape == shape
        if len(shape) > 1:
            assert mx.quantize_tiles(np.zeros(shape), (128, 128)).dequantize().shape == shape
    assert count == 7 * (1 + 2 + 2 + 3)


# ---- mx.matmul: the block-format dot product, against Fractions ----

_MM_ELEM = {"mxfp8_e4m3": "e4m3", "mxfp8_e5m2": "e5m2", "mxfp6_e2m3": "float6_e2m3fn",
            "mxfp6_e3m2": "float6_e3m2fn", "mxfp4": "float4_e2m1fn"}


def _ref_block_values(ba, name):
    """Exact values element * 2^(scale code - 127) from the codes (rational model)."""
    from ..models import rational as rat
    rf = rat.preset(name)
    codes = np.asarray(ba.elements).view(ba.element_format.storage).astype(np.int64)
    sc = np.repeat(np.asarray(ba.scales).astype(np.int64), ba.block, axis=ba.axis)
    sc = np.take(sc, np.arange(ba.shape[ba.axis]), axis=ba.axis)
    out = np.empty(codes.shape, object)
    for idx in np.ndindex(codes.shape):
        d = rat.decode(rf, int(codes[idx]) & ((1 << rf.bits) - 1))
        out[idx] = (d.value if d.kind in ("finite", "zero") else None) * F(2) ** (int(sc[idx]) - 127)
    return out


@pytest.mark.parametrize("ka,kb", [("mxfp8_e4m3", "mxfp8_e5m2"), ("mxfp6_e2m3", "mxfp6_e3m2"),
                                   ("mxfp4", "mxfp4"), ("mxfp8_e4m3", "mxfp4")])
def test_mx_matmul_exact_against_fractions(ka, kb):
    from ..models import rational as rat
    f32 = rat.preset("float32")
    rng = np.random.default_rng(len(ka) * 7 + len(kb))
    cases = 0
    for m, k, n in ((1, 32, 1), (3, 70, 4), (2, 100, 5)):
        a = rng.standard_normal((m, k)) * np.exp2(rng.integers(-6, 6, (m, 1)))
        b = rng.standard_normal((k, n))
        A, B = mx.quantize(a, ka, axis=1), mx.quantize(b, kb, axis=0)
        va, vb = _ref_block_values(A, _MM_ELEM[ka]), _ref_block_values(B, _MM_ELEM[kb])
        for mode in ("nearest_even", "upward", "toward_zero"):
            with softfp8.rounding(mode):
                got = mx.matmul(A, B)
            assert got.dtype == np.float32 and got.shape == (m, n)
            for i in range(m):
                for j in range(n):
                    exact = sum((va[i, l] * vb[l, j] for l in range(k)), F(0))
                    want, _ = rat.round_pack(f32, 0, exact, mode)
                    assert int(got[i:i + 1, j].view(np.uint32)[0]) == int(want), (ka, kb, i, j, mode)
                    cases += 1
    assert cases == 3 * (1 + 12 + 10)


@pytest.mark.parametrize("ka,kb", [("mxfp8_e4m3", "mxfp8_e5m2"), ("mxfp4", "mxfp6_e3m2")])
def test_mx_matmul_whole_e8m0_range_against_reference(ka, kb):
    """Block scales drawn over the whole E8M0 range (codes 0..254, so scale products
    2^-254 .. 2^254, most outside binary32), element codes of every class (NaN / infinity
    for E5M2, subnormals, zeros of both signs), shapes across block boundaries: codes and
    flags of every output against tests/models/mx_ref.py (OCP MX's dot product, exact, one
    rounding; E8M0 scales raise no flag), with fast paths on (integer kernels, BLAS for a
    single block) and off (the generic kernel), in three rounding modes."""
    from ..models import mx_ref
    from softfp8 import _ext
    rng = np.random.default_rng(23)
    cases = wide = 0
    for m, k, n in ((1, 32, 1), (2, 64, 3), (3, 70, 2)):
        nb = -(-k // 32)
        A = mx.quantize(np.zeros((m, k)), ka, axis=1)
        B = mx.quantize(np.zeros((k, n)), kb, axis=0)
        ea, eb = A.element_format, B.element_format
        A.elements[...] = rng.integers(0, 1 << ea.bits, (m, k)).astype(ea.storage).view(A.elements.dtype)
        B.elements[...] = rng.integers(0, 1 << eb.bits, (k, n)).astype(eb.storage).view(B.elements.dtype)
        # a third of the scale pairs on one side of binary32's range, a third on the other
        A.scales[...] = rng.choice(np.r_[0:40, 110:145, 215:255], (m, nb)).astype(np.uint8)
        B.scales[...] = rng.choice(np.r_[0:40, 110:145, 215:255], (nb, n)).astype(np.uint8)
        ca = np.asarray(A.elements).view(ea.storage)
        cb = np.asarray(B.elements).view(eb.storage)
        for mode in ("nearest_even", "toward_zero", "downward"):
            want = {}
            for i in range(m):
                for j in range(n):
                    sa, sb = [int(x) for x in A.scales[i]], [int(x) for x in B.scales[:, j]]
                    wide += any(not -149 <= x + y - 254 <= 127 for x, y in zip(sa, sb))
                    want[i, j] = mx_ref.mx_dot(ka, kb, [int(x) for x in ca[i]], sa, [int(x) for x in cb[:, j]],
                                               sb, 32, mode)
            for fast in (0, 1, 2):
                old = _ext.set_fast(fast)
                try:
                    for i in range(m):
                        for j in range(n):
                            # one output per call: its flags alone
                            with softfp8.rounding(mode), softfp8.collect_flags() as cf, np.errstate(all="ignore"):
                                got = mx.matmul(A[i:i + 1], B[:, j:j + 1])
                            assert (int(got.view(np.uint32)[0, 0]), int(cf.flags)) == want[i, j], \
                                (ka, kb, m, k, n, i, j, mode, fast, hex(want[i, j][0]))
                            cases += 1
                    with softfp8.rounding(mode), np.errstate(all="ignore"):
                        whole = mx.matmul(A, B).view(np.uint32)
                    assert [int(x) for x in whole.ravel()] == [want[i, j][0] for i in range(m) for j in range(n)]
                finally:
                    _ext.set_fast(old)
    assert cases == 3 * 3 * (1 + 6 + 6)
    assert wide >= 3 * 4      # outputs with a scale product outside binary32, per mode


def test_mx_matmul_zero_block_raises_no_denormal():
    """quantize gives an all-zero block the scale 2^-127 (E8M0 code 0), an ordinary E8M0
    value (E8M0 has no subnormals): mx.matmul raises no denormal flag for it, nor for a
    product with that scale (scaled_mm, whose scales are binary32 numbers, does)."""
    x = np.zeros((2, 64))
    x[1, :32] = 1.5
    A = mx.quantize(x, "mxfp8_e4m3", axis=1)
    B = mx.quantize(np.ones((64, 3)), "mxfp8_e4m3", axis=0)
    assert A.scales[0, 0] == 0 and A.scales[1, 1] == 0
    for fast in (0, 1):
        old = softfp8._ext.set_fast(fast)
        try:
            with softfp8.collect_flags() as cf:
                r = mx.matmul(A, B)
            assert cf.flags == 0 and np.array_equal(r, np.array([[0.0] * 3, [48.0] * 3], np.float32))
            with softfp8.collect_flags() as cf:
                softfp8.scaled_mm(A.elements, B.elements, A.scale_values().astype(np.float32),
                                  B.scale_values().astype(np.float32), block_a=(1, 32), block_b=(32, 1))
            assert cf.flags == softfp8.Flags.DENORMAL
        finally:
            softfp8._ext.set_fast(old)


def test_exact_scale_mode_takes_powers_of_two_only():
    """The engine's exact-scale mode (mx.matmul's) multiplies powers of two; another scale
    is refused by name, never multiplied inexactly."""
    from softfp8 import gemm
    a = np.zeros((1, 32), np.uint8).view(softfp8.e4m3)
    with pytest.raises(ValueError, match="sa holds a scale that is not a positive power of two"):
        gemm._scaled_mm(a, a.T, np.float32(0.3), np.float32(1.0), np.float32, None, None, None, True, "t")
    r = gemm._scaled_mm(a, a.T, np.float32(2.0 ** -140), np.float32(2.0 ** -140), np.float32, None, None, None,
                        True, "t")
    assert r.shape == (1, 1) and r[0, 0] == 0


def test_mx_matmul_accumulation_and_refusals():
    rng = np.random.default_rng(1)
    A = mx.quantize(rng.standard_normal((4, 64)), "mxfp8_e4m3", axis=1)
    B = mx.quantize(rng.standard_normal((64, 3)), "mxfp8_e4m3", axis=0)
    acc = softfp8.Accumulation(accumulator="float16")
    # the same model through scaled_mm with the block scales spelled out
    want = softfp8.scaled_mm(A.elements, B.elements, A.scale_values().astype(np.float32),
                             B.scale_values().astype(np.float32), accumulation=acc,
                             block_a=(1, 32), block_b=(32, 1))
    assert np.array_equal(mx.matmul(A, B, accumulation=acc).view(np.uint32), want.view(np.uint32))
    with pytest.raises(ValueError, match="nvfp4"):
        mx.matmul(mx.quantize(rng.standard_normal((2, 32)), "nvfp4", axis=1), B)
    with pytest.raises(ValueError, match="axis 0"):
        mx.matmul(A, mx.quantize(rng.standard_normal((64, 3)), "mxfp8_e4m3", axis=1))
    x = rng.standard_normal((2, 64))
    x[1, 40] = np.inf
    with pytest.raises(ValueError, match=r"NaN scale in block \(1, 1\)"):
        mx.matmul(mx.quantize(x, "mxfp8_e4m3", axis=1), B)
    with pytest.raises(TypeError, match="BlockArray"):
        mx.matmul(np.ones((2, 2)), B)
