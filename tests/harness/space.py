"""The parameter space the harness walks: formats, environments, inputs, shapes.

Inputs are built from the format's fields (sign, exponent, mantissa), never from the code
under test: boundary codes are every combination of the extreme and middle field values;
float inputs are the format's values (decoded by the exact core, which tests/core proves
against rational arithmetic), their midpoints and the binary32/binary64 neighbours of both.
"""
from __future__ import annotations

import contextlib
import itertools
import os

import numpy as np

import softfp8
from softfp8._formats import _PRESET_ROWS

from .machinery import rng_of, switches

# --------------------------------------------------------------------------
# environments
# --------------------------------------------------------------------------

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")
# (rounding, saturate, tininess): the 24 deterministic environments
CONFIGS = tuple(itertools.product(MODES, (False, True), ("after", "before")))
# every mode once, saturation and tininess rotating through the four pairs
SOME = tuple((m, bool(i % 2), ("after", "before")[(i // 2) % 2]) for i, m in enumerate(MODES))
# stochastic: (seed, sr_bits, saturate, tininess); sr_bits 32, 1 and odd widths, seeds 0 / large
SR = (("stochastic", 1, 32, False, "after"), ("stochastic", 2**63 + 12345, 1, True, "before"),
      ("stochastic", 7, 5, False, "before"), ("stochastic", 0, 13, True, "after"))
SR_ONE = SR[:1]


def env_id(env):
    if env[0] == "stochastic":
        _, seed, n, sat, tin = env
        return f"sr(seed={seed},bits={n},{'sat' if sat else 'nosat'},{tin})"
    mode, sat, tin = env
    return f"{mode},{'sat' if sat else 'nosat'},{tin}"


@contextlib.contextmanager
def context(env):
    """The softfp8 context of an environment (entered inside each run: a stochastic
    call then draws the same stream every run)."""
    if env[0] == "stochastic":
        _, seed, n, sat, tin = env
        with softfp8.rounding("stochastic", seed=seed, sr_bits=n), softfp8.saturation(sat), \
                softfp8.tininess(tin):
            yield
    else:
        mode, sat, tin = env
        with softfp8.rounding(mode), softfp8.saturation(sat), softfp8.tininess(tin):
            yield


def bits_opts(env):
    if env[0] == "stochastic":
        _, seed, n, sat, tin = env
        return {"rounding": "stochastic", "seed": seed, "sr_bits": n, "saturate": sat, "tininess": tin}
    mode, sat, tin = env
    return {"rounding": mode, "saturate": sat, "tininess": tin}


def rotate(seq, i):
    return seq[i % len(seq)]


# --------------------------------------------------------------------------
# formats
# --------------------------------------------------------------------------

def _bias(family):
    return _PRESET_ROWS[family][0][4]


def _fmt(**kw):
    try:
        return softfp8.format(**kw)
    except ValueError:
        return None


F8 = [
    softfp8.e4m3, softfp8.e5m2, softfp8.e4m3fnuz, softfp8.e5m2fnuz, softfp8.hfp8_143, softfp8.hfp8_152,
    softfp8.float8_e4m3, softfp8.float8_e3m4, softfp8.float8_e4m3b11fnuz, softfp8.float8_e8m0fnu,
    softfp8.cfloat8_143(bias=_bias("cfloat8_143")), softfp8.cfloat8_143(bias=20),
    softfp8.cfloat8_143(bias=_bias("cfloat8_143"), subnormals="ieee"),
    softfp8.cfloat8_152(bias=_bias("cfloat8_152")), softfp8.cfloat8_152(bias=40),
    softfp8.p3109.format(8, 3), softfp8.p3109.format(8, 4, signed=False, domain="extended"),
    softfp8.format(exp_bits=5, man_bits=3, bias=15, signed=False, subnormals="flush", name="u5m3flush"),
    softfp8.format(exp_bits=3, man_bits=4, bias=3, specials="fnuz", name="e3m4fnuz"),
    softfp8.format(exp_bits=2, man_bits=5, bias=1, name="e2m5"),
    softfp8.format(exp_bits=4, man_bits=3, bias=-9, specials="fn", subnormals="tesla", name="e4m3t-9"),
    softfp8.format(exp_bits=7, man_bits=0, bias=70, specials="fnuz", name="e7m0fnuz"),
    softfp8.format(exp_bits=1, man_bits=6, bias=0, name="e1m6"),
]
# the workhorses: one of each family of 8-bit format
F8_MAIN = [softfp8.e4m3, softfp8.e5m2, softfp8.e4m3fnuz, softfp8.hfp8_143, softfp8.float8_e8m0fnu,
           softfp8.cfloat8_143(bias=20), softfp8.format(exp_bits=2, man_bits=5, bias=1, name="e2m5")]


def _narrow():
    """Formats of 2..7 bits in a byte: codes above the width arrive through .view."""
    out = [softfp8.float4_e2m1fn, softfp8.float6_e2m3fn, softfp8.float6_e3m2fn, softfp8.ue4m3]
    for bits in range(2, 8):
        for e, sp, signed, sub in ((1, "ieee", True, "ieee"), (bits - 2, "fn", True, "flush"),
                                   (max(bits - 3, 1), "fnuz", True, "ieee"),
                                   (bits - 1, "none", False, "tesla"), (bits - 1, "ieee", False, "ieee")):
            m = bits - e - int(signed)
            if e < 1 or m < 0:
                continue
            f = _fmt(exp_bits=e, man_bits=m, bias=max(1, (1 << (e - 1)) - 1) + bits % 3, specials=sp,
                     signed=signed, subnormals=sub, name=f"n{bits}e{e}m{m}{sp}{'s' if signed else 'u'}{sub}")
            if f is not None and f.bits == bits:
                out.append(f)
    return out


NARROW = _narrow()

F16 = [softfp8.float16, softfp8.bfloat16, softfp8.shp(bias=_bias("shp")), softfp8.uhp, softfp8.hfp16_169]


def _mid():
    """Formats of 9..16 bits beyond the presets: odd widths, layouts and biases."""
    f = [
        # issue 21: the 13-bit format whose multiply ignored the width's mask
        softfp8.format(exp_bits=8, man_bits=4, bias=127, specials="fn", subnormals="flush", signed=True,
                       saturate=True, name="e8m4fn-flush-sat"),
        softfp8.format(exp_bits=5, man_bits=4, bias=15, name="e5m4"),                       # 10 bits
        softfp8.format(exp_bits=3, man_bits=12, bias=3, name="e3m12"),                      # 16 bits
        softfp8.format(exp_bits=6, man_bits=5, bias=31, specials="fnuz", name="e6m5fnuz"),  # 12 bits
        softfp8.format(exp_bits=4, man_bits=5, bias=7, signed=False, name="ue4m5"),          # 9 bits, unsigned
        softfp8.format(exp_bits=7, man_bits=7, bias=63, specials="none", subnormals="tesla",
                       name="e7m7tesla"),                                                   # 15 bits
        softfp8.format(exp_bits=5, man_bits=9, bias=-20, name="e5m9b-20"),                  # 15 bits
        softfp8.format(exp_bits=8, man_bits=5, bias=1 << 20, name="e8m5-hugebias"),         # 14 bits
        softfp8.format(exp_bits=8, man_bits=5, bias=-(1 << 20), name="e8m5-negbias"),
        softfp8.format(exp_bits=9, man_bits=6, bias=255, name="e9m6"),                      # 16 bits
        softfp8.format(exp_bits=4, man_bits=6, bias=7, subnormals="flush", name="e4m6flush"),  # 11 bits
    ]
    return f


MID = _mid()
WIDE = F16 + MID           # every format of 9..16 bits the harness uses


def fid(fmt):
    s = fmt.name
    for a, b in (("softfp8.", ""), ("(bias=", "-b"), (", subnormals='ieee'", "-ieee"), (")", ""),
                 ("format(exp_bits=", "e"), (", man_bits=", "m")):
        s = s.replace(a, b)
    return s[:40]


def codes_all(fmt):
    """Every storage code (every byte for formats of <= 8 bits, codes above the width
    included; every code of the width for wider formats)."""
    n = 256 if fmt.bits <= 8 else 1 << fmt.bits
    return np.arange(n, dtype=np.uint32).astype(fmt.storage)


def code_of(fmt, s, e, m):
    return (s << (fmt.bits - 1) if fmt.signed else 0) | (e << fmt.man_bits) | m


def boundary_codes(fmt):
    """Every (sign, exponent field, mantissa field) with the exponent field in its extremes
    and middle and the mantissa field in its extremes, middle and halfway neighbours."""
    E, M = (1 << fmt.exp_bits) - 1, (1 << fmt.man_bits) - 1
    es = sorted({0, 1, 2, E // 2, E // 2 + 1, E - 2, E - 1, E} & set(range(E + 1)))
    ms = sorted({0, 1, 2, M // 2, M // 2 + 1, M - 1, M} & set(range(M + 1)))
    out = {code_of(fmt, s, e, m) for s in ((0, 1) if fmt.signed else (0,)) for e in es for m in ms}
    return np.array(sorted(out), dtype=np.uint32).astype(fmt.storage)


def above_width(fmt, codes, g):
    """codes with random bits set above the format's width (the storage's spare bits)."""
    spare = np.dtype(fmt.storage).itemsize * 8 - fmt.bits
    if spare == 0:
        return codes
    hi = g.integers(0, 1 << spare, codes.size, dtype=np.uint32) << fmt.bits
    return (codes.astype(np.uint32) | hi).astype(fmt.storage)


def random_codes(fmt, n, g, spare=True):
    """n random storage codes; with spare, random bits above the width too."""
    c = g.integers(0, 1 << fmt.bits, n, dtype=np.uint32).astype(fmt.storage)
    return above_width(fmt, c, g) if spare else c


# SOFTFP8_HARNESS_SCALE=k multiplies the random operand counts (a longer proof, opt-in)
SCALE = max(1, int(os.environ.get("SOFTFP8_HARNESS_SCALE") or 1))


def _signs(fmt, u, g):
    if fmt.signed:
        u |= (g.random(u.size) < 0.5).astype(np.uint32) << (fmt.bits - 1)
    return u


def biased_codes(fmt, n, g):
    """Uniform codes, a quarter of them near the largest finite code, the smallest normal
    and zero (by the fields: within 64 codes of the top finite exponent, of 1 << man_bits)."""
    u = g.integers(0, 1 << fmt.bits, n, dtype=np.uint32)
    k = n // 4
    top = ((1 << fmt.exp_bits) - 1) << fmt.man_bits
    near = g.integers(-64, 65, k) + np.where(g.random(k) < 0.5, top - 1, 1 << fmt.man_bits)
    lim = (1 << (fmt.bits - int(fmt.signed))) - 1
    u[:k] = _signs(fmt, np.clip(near, 0, lim).astype(np.uint32), g)
    return u.astype(fmt.storage)


def narrow_codes(fmt, n, g):
    """Codes of values within 2^+-10 of 1 (1% zeros): whole SIMD blocks of normal
    results, sums exact or not in binary32 / binary64."""
    M, bias = fmt.man_bits, fmt.bias
    lo, hi = max(1, bias - 10), min((1 << fmt.exp_bits) - 1, bias + 11)
    if lo >= hi:
        lo, hi = 1, max(2, (1 << fmt.exp_bits) - 1)
    e = g.integers(lo, hi, n, dtype=np.uint32)
    u = _signs(fmt, (e << M) | g.integers(0, 1 << M, n, dtype=np.uint32), g)
    u[g.random(n) < 0.01] = 0
    return u.astype(fmt.storage)


def exp_close_pairs(fmt, n, g):
    """Operand pairs whose exponent fields differ by at most 3, centred on 1, on the
    square roots of the smallest normal and of the largest finite value (products near
    2^emin and near overflow), near the top and the bottom fields (sums that overflow or
    cancel below 2^emin); 0.5% uniform codes (NaN, infinity, zeros, subnormals inside
    such blocks)."""
    M, bias, top = fmt.man_bits, fmt.bias, (1 << fmt.exp_bits) - 2
    centres = np.clip(np.array([bias, (bias + 1) // 2, bias + (top - bias) // 2, top - 3, 4]), 1, max(top, 1))
    c = centres[g.integers(0, len(centres), n)]
    pair = []
    for _ in range(2):
        e = np.clip(c + g.integers(-3, 4, n), 1, max(top, 1)).astype(np.uint32)
        u = _signs(fmt, (e << M) | g.integers(0, 1 << M, n, dtype=np.uint32), g)
        hit = g.random(n) < 0.005
        u[hit] = g.integers(0, 1 << fmt.bits, int(hit.sum()), dtype=np.uint32)
        pair.append(u.astype(fmt.storage))
    return pair


def as_dtype(codes, fmt):
    return np.ascontiguousarray(codes, dtype=fmt.storage).view(fmt.dtype)


_VALUES: dict = {}


def values(fmt):
    """(codes, float64 values) of every in-width code of fmt, decoded by the exact core."""
    if fmt.params not in _VALUES:
        c = np.arange(1 << fmt.bits, dtype=np.uint32).astype(fmt.storage)
        with switches(0, 0), np.errstate(all="ignore"):
            v = c.view(fmt.dtype).astype(np.float64)
        c.flags.writeable = v.flags.writeable = False
        _VALUES[fmt.params] = (c, v)
    return _VALUES[fmt.params]


def float_inputs(fmt, dtype, g, n_random=512):
    """binary32 / binary64 inputs that decide rounding into fmt: zeros, infinities, NaNs
    with payloads, every value of fmt, the midpoints between neighbours and the two
    floats beside each, values beyond the range, subnormal floats, random bit patterns."""
    dt = np.dtype(dtype)
    ut = np.dtype(f"u{dt.itemsize}")
    _, v = values(fmt)
    fin = np.unique(np.abs(v[np.isfinite(v)]))
    if fin.size > 4096:
        fin = np.unique(np.concatenate([fin[:1024], fin[-1024:], g.choice(fin, 2048)]))
    mids = (fin[1:] + fin[:-1]) / 2 if fin.size > 1 else fin
    top = fin[-1] if fin.size else 1.0
    extra = np.array([0.0, top * 2, top * 1.0001, top + (top - (fin[-2] if fin.size > 1 else 0)) / 2,
                      np.inf, 1e-300, 5e-324, 1.4e-45, 1.2e-38, 3.4e38], dtype=np.float64)
    base = np.concatenate([fin, mids, extra])
    with np.errstate(all="ignore"):
        x = base.astype(dt)
        x = np.concatenate([x, np.nextafter(x, dt.type(np.inf)), np.nextafter(x, dt.type(0))])
    # the midpoints with one low bit set: the sticky bits of the kernels' compressed keys
    # (binary32: bits 0..16 below the key's 15; binary64: the low 29 and the bits near 46)
    low = (0, 1, 15, 16, 17, 18) if dt.itemsize == 4 else (0, 1, 28, 29, 30, 44, 45, 46, 47)
    with np.errstate(all="ignore"):
        m = mids.astype(dt).view(ut)
    sticky = np.concatenate([m | ut.type(1 << k) for k in low]).view(dt)
    x = np.concatenate([x, sticky])
    x = np.concatenate([x, -x])
    nan_bits = np.array([0x7FC00000, 0x7F800001, 0xFFC00123, 0x7FBFFFFF] if dt.itemsize == 4 else
                        [0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000123, 0x7FF7FFFFFFFFFFFF],
                        dtype=ut).view(dt)
    rnd = g.integers(0, np.iinfo(ut).max, n_random, dtype=ut, endpoint=True).view(dt)
    # random values in the format's range (the common case of real data)
    span = g.uniform(-1, 1, n_random) * top * 1.25
    with np.errstate(all="ignore"):
        span = span.astype(dt)
    return np.ascontiguousarray(np.concatenate([x, nan_bits, rnd, span]), dtype=dt)


# --------------------------------------------------------------------------
# shapes and lengths
# --------------------------------------------------------------------------

# lengths around every block boundary of the kernels: 8/16/32/64 lanes, 2 blocks, tails
LENGTHS = (0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 257)
# irregular chunks for split calls (the length gate of set_fast(1) sits near 4,096)
CHUNK_SIZES = (1, 2, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 2047, 4095, 4096, 4097)


def chunk_starts(n, key):
    g = rng_of("chunks", key)
    starts, pos = [], 0
    while pos < n:
        starts.append(pos)
        pos += int(g.choice(CHUNK_SIZES))
    return starts


# (m, k, p) of matrix products: empty, 1 x K, K = 1, odd sizes, sizes across 8/16/32/64
# blocks, two blocks and their tails
MATRIX_SHAPES = ((0, 5, 3), (3, 0, 4), (4, 5, 0), (1, 1, 1), (1, 37, 1), (1, 17, 9), (9, 1, 7), (5, 7, 3),
                 (3, 8, 16), (2, 16, 17), (7, 31, 33), (4, 33, 15), (3, 64, 65), (2, 65, 63),
                 (3, 129, 5), (17, 15, 64), (2, 32, 32))
