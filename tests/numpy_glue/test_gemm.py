"""softfp8.matmul(accumulation=...), mixed-format matmul and softfp8.scaled_mm against a
plain-Python reference written from docs/training.md ("Accumulation models").

The reference (``ref_gemm`` below) follows the specification step by step with exact
Fractions and rounds with tests/models/rational.py (``deliver``), never with softfp8:
exact products, the product format, the sequential accumulator, promotion into the
running sum, the float32 scale product, the final rounding, NaN / infinity / zero
signs and every flag.  Each comparison is bit-exact (codes) and flag-exact (the OR
of the flags the call raises into the context).  ``test_fast_equals_core`` proves
the binary64 / binary32 / integer kernels equal to the generic kernel.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import _ext

from ..models import rational as ref

F32 = ref.FLOAT32
F64 = ref.FLOAT64
INVALID, DENORMAL = ref.INVALID, ref.DENORMAL
ONE = ("F", Fraction(1))


# --------------------------------------------------------------------------
# the reference (docs/training.md, "Accumulation models")
# --------------------------------------------------------------------------

def value(fmt, code):
    """(value, flags reading it as an operand raises): values are ("N",), ("I", sign),
    ("Z", sign) or ("F", signed Fraction)."""
    d = ref.decode(fmt, int(code))
    if d.kind == "nan":
        return ("N", not d.quiet), 0
    fl = DENORMAL if d.subnormal else 0
    if d.kind == "inf":
        return ("I", d.sign), fl
    if d.kind == "zero":
        return ("Z", d.sign), fl
    return ("F", d.value), fl


def mul(x, y):
    """IEEE multiplication, exact: (value, flags)."""
    if x[0] == "N" or y[0] == "N":
        return ("N", False), INVALID if (x[0] == "N" and x[1]) or (y[0] == "N" and y[1]) else 0
    sx = x[1] if x[0] in "IZ" else int(x[1] < 0)
    sy = y[1] if y[0] in "IZ" else int(y[1] < 0)
    if x[0] == "I" or y[0] == "I":
        if x[0] == "Z" or y[0] == "Z":
            return ("N", False), INVALID
        return ("I", sx ^ sy), 0
    if x[0] == "Z" or y[0] == "Z":
        return ("Z", sx ^ sy), 0
    return ("F", x[1] * y[1]), 0


def add(x, y):
    """IEEE addition, exact; ("C",) for an exact zero from cancellation."""
    if x[0] == "N" or y[0] == "N":
        return ("N", False), 0
    if x[0] == "I" and y[0] == "I" and x[1] != y[1]:
        return ("N", False), INVALID
    if x[0] == "I" or y[0] == "I":
        return (x if x[0] == "I" else y), 0
    if x[0] == "Z" and y[0] == "Z":
        return (x if x[1] == y[1] else ("C",)), 0
    if x[0] == "Z":
        return y, 0
    if y[0] == "Z":
        return x, 0
    s = x[1] + y[1]
    return (("F", s) if s else ("C",)), 0


def rnd(fmt, x, mode, saturate=None):
    """x rounded once into fmt -> (code, flags)."""
    if x[0] == "N":
        return ref.deliver(fmt, ("N", None, False), mode, saturate)
    if x[0] in "IZ":
        return ref.deliver(fmt, (x[0], x[1]), mode, saturate)
    if x[0] == "C":
        return ref.deliver(fmt, ("C",), mode, saturate)
    v = x[1]
    return ref.deliver(fmt, ("F", int(v < 0), ref.mag_from_fraction(abs(v))), mode, saturate)


def rnd_value(fmt, x, mode, saturate=None):
    code, fl = rnd(fmt, x, mode, saturate)
    return value(fmt, code)[0], fl, code


class Model:
    """A reference accumulation model."""

    def __init__(self, acc, prod=None, mode=None, pmode=None, promote=None, prom=F32):
        self.acc, self.prod, self.mode, self.pmode, self.promote, self.prom = \
            acc, prod, mode, pmode, promote, prom


def make_scale(sa=None, sb=None):
    """s(i, l, j) = sa(i, l) * sb(l, j) rounded to binary32, nearest even -> (value, flags);
    sa / sb: functions giving binary32 codes, or None (no scale)."""
    def scale(i, l, j):
        if sa is None and sb is None:
            return ONE, 0
        x, f1 = value(F32, sa(i, l)) if sa is not None else (ONE, 0)
        y, f2 = value(F32, sb(l, j)) if sb is not None else (ONE, 0)
        t, f3 = mul(x, y)
        v, f4, _ = rnd_value(F32, t, "nearest_even")
        return v, f1 | f2 | f3 | f4
    return scale


def exact_sum(terms):
    """The exact sum of IEEE values: NaN, ("X",) for +inf + -inf, inf, zero or ("C",)."""
    if any(t[0] == "N" for t in terms):
        return ("N", False)
    infs = {t[1] for t in terms if t[0] == "I"}
    if len(infs) == 2:
        return ("X",)
    if infs:
        return ("I", infs.pop())
    fins = [t[1] for t in terms if t[0] == "F"]
    if not fins:   # only zeros: IEEE's x + x = x, and +0 + -0 is an exact zero sum (-0 downward)
        signs = {t[1] for t in terms}
        return ("C",) if len(signs) == 2 else ("Z", signs.pop() if signs else 0)
    s = sum(fins)
    return ("F", s) if s else ("C",)


def products(A, fa, B, fb, i, j):
    out, fl = [], 0
    for l in range(A.shape[1]):
        x, f1 = value(fa, A[i, l])
        y, f2 = value(fb, B[l, j])
        t, f3 = mul(x, y)
        fl |= f1 | f2 | f3
        out.append(t)
    return out, fl


def ref_gemm(A, fa, B, fb, model, out, mode, scale=None, kblock=0):
    """Result codes and the OR of the flags.  model None: the exact model
    (round_out(sum of a * b * s) once); scale: make_scale(...); kblock: the K-block of
    the scales (0: constant along K)."""
    scale = scale or make_scale()
    m, k = A.shape
    p = B.shape[1]
    res = np.zeros((m, p), dtype=np.uint64)
    flags = 0
    for i in range(m):
        for j in range(p):
            prods, fl = products(A, fa, B, fb, i, j)
            if model is None:
                terms = []
                for l in range(k):
                    if l == 0 or (kblock and l % kblock == 0):
                        s, f = scale(i, l, j)
                        fl |= f
                    t, f = mul(prods[l], s)
                    fl |= f
                    terms.append(t)
                tot = exact_sum(terms)
                if tot[0] == "X":
                    tot, fl = ("N", False), fl | INVALID
                res[i, j], f = rnd(out, tot, mode)
                flags |= fl | f
                continue
            amode = model.mode or mode
            pmode = model.pmode or amode
            acc = F = None
            for l in range(k):
                x = prods[l]
                if model.prod is not None:
                    x, f, _ = rnd_value(model.prod, x, pmode)
                    fl |= f
                if acc is not None:
                    x, f = add(acc, x)
                    fl |= f
                acc, f, _ = rnd_value(model.acc, x, amode)
                fl |= f
                if model.promote and ((l + 1) % model.promote == 0 or l + 1 == k):
                    s, f = scale(i, l, j) if kblock else (ONE, 0)
                    t, f2 = mul(acc, s)
                    fl |= f | f2
                    if F is not None:
                        t, f = add(F, t)
                        fl |= f
                    F, f, _ = rnd_value(model.prom, t, "nearest_even")
                    fl |= f
                    acc = None
            S = (F if model.promote else acc) or ("Z", 0)
            s, f = (ONE, 0) if kblock else scale(i, 0, j)
            t, f2 = mul(S, s)
            res[i, j], f3 = rnd(out, t, mode)
            flags |= fl | f | f2 | f3
    return res, flags


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

SF = {"float32": np.float32, "float64": np.float64}


CUSTOM = {}   # reference format name -> softfp8 Format, for formats built with make_format


def custom(exp_bits, man_bits, bias, specials, subnormals="ieee"):
    r = ref.make_format(exp_bits, man_bits, bias, specials, subnormals)
    CUSTOM[r.name] = softfp8.format(exp_bits=exp_bits, man_bits=man_bits, bias=bias, specials=specials,
                                    subnormals=subnormals)
    return r


def sf_format(fmt):
    return CUSTOM.get(fmt.name) or ref.to_softfp8(softfp8, fmt)


def codes_array(codes, fmt):
    f = sf_format(fmt)
    return np.asarray(codes, dtype=np.uint8 if fmt.bits <= 8 else np.uint16).view(f.dtype)


def raw(res):
    return res.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[res.itemsize]).astype(np.uint64)


_SPECIAL = {}


def special_mask(fmt):
    if fmt.name not in _SPECIAL:
        _SPECIAL[fmt.name] = np.array([value(fmt, c)[0][0] in "NI" for c in range(1 << fmt.bits)])
    return _SPECIAL[fmt.name]


def rand_codes(rng, fmt, shape, p_special=0.0, p_zero=0.05):
    """Random codes: finite ones, with probability p_special a NaN / infinity code."""
    sp = special_mask(fmt)
    fin = np.flatnonzero(~sp)
    out = rng.choice(fin, size=shape)
    if p_zero:
        out[rng.random(shape) < p_zero] = 0
    if p_special and sp.any():
        pick = rng.random(shape) < p_special
        out[pick] = rng.choice(np.flatnonzero(sp), size=int(pick.sum()))
    return out


# out dtype for softfp8 -> the reference format of its codes
OUTS = {
    "float32": (np.float32, F32),
    "float64": (np.float64, F64),
    "np_float16": (np.float16, ref.preset("float16")),
    "bfloat16": ("bfloat16", ref.preset("bfloat16")),
    "e4m3": (softfp8.e4m3, ref.preset("e4m3")),
    "e5m2": (softfp8.e5m2, ref.preset("e5m2")),
}

E4M3, E5M2 = ref.preset("e4m3"), ref.preset("e5m2")
F16, BF16 = ref.preset("float16"), ref.preset("bfloat16")

# (softfp8.Accumulation kwargs, reference Model)
MODELS = [
    ({}, Model(F32)),
    ({"accumulator": "float16"}, Model(F16)),
    ({"accumulator": "bfloat16", "rounding": "toward_zero"}, Model(BF16, mode="toward_zero")),
    ({"accumulator": softfp8.e5m2}, Model(E5M2)),
    ({"accumulator": softfp8.e4m3, "rounding": "upward"}, Model(E4M3, mode="upward")),
    ({"product": softfp8.float16, "promote_every": 3}, Model(F32, prod=F16, promote=3)),
    ({"product": softfp8.e5m2, "accumulator": "float16", "promote_every": 1,
      "product_rounding": "downward"}, Model(F16, prod=E5M2, pmode="downward", promote=1)),
    ({"accumulator": "float16", "promote_every": 4, "promoted": "float16"},
     Model(F16, promote=4, prom=F16)),
    ({"rounding": "to_odd", "promote_every": 1000}, Model(F32, mode="to_odd", promote=1000)),
    ({"accumulator": "float16", "rounding": "nearest_away", "promote_every": 5},
     Model(F16, mode="nearest_away", promote=5)),
    ({"product": softfp8.e4m3, "accumulator": "bfloat16", "rounding": "downward"},
     Model(BF16, prod=E4M3, mode="downward")),
]

PAIRS = [(E4M3, E4M3), (E4M3, E5M2), (E5M2, E5M2), (F16, E4M3), (BF16, BF16)]


def run_sf(fn, fast):
    prev = _ext.set_fast(fast)
    try:
        with softfp8.collect_flags() as fl:
            res = fn()
    finally:
        _ext.set_fast(prev)
    return res, int(fl.flags)


def check(case_id, fn, exp_codes, exp_flags):
    for fast in (0, 1, 2):   # off, length-gated, eager (every kernel on these small calls)
        res, flags = run_sf(fn, fast)
        got = raw(res)
        bad = np.argwhere(got != exp_codes)
        assert bad.size == 0, (f"{case_id} fast={fast}: element {tuple(bad[0])} is "
                               f"{int(got[tuple(bad[0])]):#x}, expected "
                               f"{int(exp_codes[tuple(bad[0])]):#x}")
        assert flags == exp_flags, f"{case_id} fast={fast}: flags {flags:#x}, expected {exp_flags:#x}"


# --------------------------------------------------------------------------
# accumulation models against the reference
# --------------------------------------------------------------------------

def test_models_against_reference():
    rng = np.random.default_rng(11)
    count = 0
    modes = ["nearest_even", "downward", "upward", "toward_zero"]
    outs = list(OUTS)
    for n, (kw, model) in enumerate(MODELS):
        for pi, (fa, fb) in enumerate(PAIRS):
            if (n + pi) % 2 and fa.bits > 8:
                continue
            for p_special in (0.0, 0.08):
                k = int(rng.choice([0, 1, 2, 5, 7, 12]))
                A = rand_codes(rng, fa, (3, k), p_special)
                B = rand_codes(rng, fb, (k, 4), p_special)
                mode = modes[count % len(modes)]
                oname = outs[count % len(outs)]
                odt, ofmt = OUTS[oname]
                exp, eflags = ref_gemm(A, fa, B, fb, model, ofmt, mode)
                a, b = codes_array(A, fa), codes_array(B, fb)
                acc = softfp8.Accumulation(**kw)

                def call():
                    with softfp8.rounding(mode):
                        return softfp8.matmul(a, b, out_dtype=odt, accumulation=acc)
                check((kw, fa.name, fb.name, k, mode, oname, p_special), call, exp, eflags)
                count += 1
    assert count == 88


def test_exact_mixed_against_reference():
    rng = np.random.default_rng(12)
    count = 0
    for (fa, fb), mode, oname, p_special in itertools.product(
            [(E4M3, E5M2), (E5M2, E4M3), (F16, E5M2)], ["nearest_even", "downward", "to_odd"],
            ["float32", "e4m3", "np_float16"], [0.0, 0.1]):
        k = int(rng.choice([0, 1, 3, 9]))
        A = rand_codes(rng, fa, (2, k), p_special, p_zero=0.3)
        B = rand_codes(rng, fb, (k, 3), p_special, p_zero=0.3)
        odt, ofmt = OUTS[oname]
        exp, eflags = ref_gemm(A, fa, B, fb, None, ofmt, mode)
        a, b = codes_array(A, fa), codes_array(B, fb)

        def call():
            with softfp8.rounding(mode):
                return softfp8.matmul(a, b, out_dtype=odt)
        check((fa.name, fb.name, k, mode, oname), call, exp, eflags)
        count += 1
    assert count == 54


def test_zero_signs_and_cancellation():
    """-0 products, +0 products, exact cancellation, in every mode (exact and sequential)."""
    z, nz = 0x00, 0x80                  # +0, -0 (both formats)
    one, mone = 0x38, 0xB8              # e4m3 1.0, -1.0
    e1, em1 = 0x3C, 0xBC                # e5m2 1.0, -1.0
    cases = [([nz, nz], [e1, e1]), ([z, nz], [e1, e1]), ([one, one], [e1, em1]),
             ([nz], [z]), ([mone, one, z], [e1, e1, e1]), ([z, z], [e1, e1])]
    count = 0
    for (ra, cb), mode in itertools.product(cases, ref.MODES):
        A = np.array([ra])
        B = np.array([cb]).T
        a, b = codes_array(A, E4M3), codes_array(B, E5M2)
        for kw, model in [(None, None), ({}, Model(F32)),
                          ({"accumulator": "float16", "promote_every": 1}, Model(F16, promote=1))]:
            exp, eflags = ref_gemm(A, E4M3, B, E5M2, model, F32, mode)
            acc = None if kw is None else softfp8.Accumulation(**kw)

            def call():
                with softfp8.rounding(mode):
                    return softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc)
            check((ra, cb, mode, kw), call, exp, eflags)
            count += 1
    assert count == 108


def test_overflow_and_saturation():
    """Products that overflow a float16 / E5M2 accumulator (inf, then inf - inf = NaN,
    invalid), a saturating context, and an E4M3 (no infinity) accumulator."""
    big, nbig = 0x7B, 0xFB   # e5m2 57344, -57344
    A = np.array([[big, big, big, nbig, nbig]])
    B = np.array([[big, big, big, big, big]]).T
    count = 0
    for kw, model in [({"accumulator": "float16"}, Model(F16)),
                      ({"accumulator": softfp8.e5m2}, Model(E5M2)),
                      ({"accumulator": softfp8.e4m3}, Model(E4M3)),
                      ({"accumulator": "float16", "promote_every": 2}, Model(F16, promote=2))]:
        for sat in (None, True):
            for k in (1, 3, 5):
                exp, eflags = ref_gemm(A[:, :k], E5M2, B[:k], E5M2, model, F32, "nearest_even")
                if sat:   # the saturating context: every rounding saturates
                    exp, eflags = _ref_saturating(A[:, :k], B[:k], model)
                a, b = codes_array(A[:, :k], E5M2), codes_array(B[:k], E5M2)
                acc = softfp8.Accumulation(**kw)

                def call():
                    if sat:
                        with softfp8.saturation(True):
                            return softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc)
                    return softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc)
                check((kw, sat, k), call, exp, eflags)
                count += 1
    assert count == 24


def _ref_saturating(A, B, model):
    """ref_gemm with every rounding saturating (softfp8.saturation(True))."""
    orig = ref.deliver

    def sat_deliver(fmt, desc, mode="nearest_even", saturate=None, *args):
        return orig(fmt, desc, mode, True, *args)
    ref.deliver = sat_deliver
    try:
        return ref_gemm(A, E5M2, B, E5M2, model, F32, "nearest_even")
    finally:
        ref.deliver = orig


def test_exact_kernel_equals_numpy_matmul():
    """The new exact kernel (scaled_mm, scale 1) equals a @ b (the existing exact matmul)."""
    rng = np.random.default_rng(5)
    # magnitudes up to 2^3 (no overflow), signs random; NaN results differ by design (the
    # existing matmul propagates an operand's NaN code, the kernel gives the canonical NaN)
    A = rng.integers(0, 0x50, (6, 40)) | (rng.integers(0, 2, (6, 40)) << 7)
    B = rng.integers(0, 0x50, (40, 7)) | (rng.integers(0, 2, (40, 7)) << 7)
    a, b = codes_array(A, E4M3), codes_array(B, E4M3)
    for fast in (0, 2):
        (r1, f1), (r2, f2) = run_sf(lambda: a @ b, fast), run_sf(
            lambda: softfp8.scaled_mm(a, b, 1.0, 1.0, out_dtype=softfp8.e4m3), fast)
        assert np.array_equal(raw(r1), raw(r2)) and f1 == f2


# --------------------------------------------------------------------------
# scaled_mm
# --------------------------------------------------------------------------

def rand_scales(rng, shape):
    """binary32 scales: 2^e * (1 + j/8), e in -6..6 (exact float32)."""
    return (np.ldexp(1.0 + rng.integers(0, 8, shape) / 8, rng.integers(-6, 7, shape))
            .astype(np.float32))


def scale_fn(arr, block):
    """(r, c) -> binary32 code of the scale covering element (r, c) of the operand."""
    codes = np.asarray(arr, dtype=np.float32).reshape(np.shape(arr) or (1, 1)).view(np.uint32)
    return lambda r, c: int(codes[r // block[0], c // block[1]])


def test_scaled_mm_against_reference():
    rng = np.random.default_rng(21)
    m, k, p = 3, 10, 4
    # (scale_a shape or None for a scalar, block_a, scale_b shape, block_b, K-block)
    grans = [
        (None, (m, k), None, (k, p), 0),               # per tensor x per tensor
        ((m, 1), (1, k), (1, p), (k, 1), 0),           # per row x per column
        ((m, 3), (1, 4), (3, 2), (4, 2), 4),           # 1 x 4 tiles x 4 x 2 blocks (K = 10: a partial block)
        ((2, 3), (2, 4), (1, p), (k, 1), 4),           # 2 x 4 blocks of a, per-column b
        ((m, 1), (1, k), (5, 1), (2, p), 2),           # per-row a, 2 x N blocks of b
    ]
    models = [(None, None), ({}, Model(F32)), ({"accumulator": "float16", "promote_every": 2},
                                              Model(F16, promote=2))]
    outs = list(OUTS)
    count = 0
    for gi, (sha, blka, shb, blkb, kb) in enumerate(grans):
        for mi, (kw, model) in enumerate(models):
            for fa, fb in [(E4M3, E5M2), (E5M2, E4M3)]:
                oname = outs[count % len(outs)]
                odt, ofmt = OUTS[oname]
                mode = ["nearest_even", "upward", "toward_zero"][count % 3]
                A = rand_codes(rng, fa, (m, k), 0.03 if count % 4 == 0 else 0.0)
                B = rand_codes(rng, fb, (k, p))
                sa = rand_scales(rng, sha) if sha else np.float32(rng.choice([0.5, 3.0, 0.15625]))
                sb = rand_scales(rng, shb) if shb else np.float32(2.0 ** int(rng.integers(-4, 4)))
                promote = model.promote if model else None
                if model is not None and kb:
                    model = Model(model.acc, promote=model.promote or kb)
                exp, eflags = ref_gemm(A, fa, B, fb, model, ofmt, mode,
                                       make_scale(scale_fn(sa, blka), scale_fn(sb, blkb)), kb)
                a, b = codes_array(A, fa), codes_array(B, fb)
                acc = None if kw is None else softfp8.Accumulation(**kw)
                explicit = gi in (2, 3)   # grids that do not divide the operand: blocks given

                def call():
                    with softfp8.rounding(mode):
                        return softfp8.scaled_mm(
                            a, b, sa, sb, out_dtype=odt, accumulation=acc,
                            block_a=blka if explicit else None, block_b=blkb if explicit else None)
                check((gi, kw, fa.name, oname, mode, promote), call, exp, eflags)
                count += 1
    assert count == 30


def test_fast_equals_core():
    """The binary64 (odd-rounded sums), binary32 (IEEE addition) and 128-bit integer
    (exact model) kernels against the generic kernel: codes and flags, on larger random
    matrices with specials, zero rows, overflowing and subnormal-producing values, and
    more columns than one block (16)."""
    rng = np.random.default_rng(31)
    m, k, p = 4, 150, 37
    count = 0
    cfgs = [
        ({}, None, None),
        ({"promote_every": 32}, None, None),
        ({"accumulator": "float16"}, None, None),
        ({"accumulator": "float16", "rounding": "downward", "promote_every": 50}, None, None),
        ({"accumulator": "bfloat16", "rounding": "to_odd"}, None, None),
        ({"accumulator": softfp8.e5m2, "rounding": "nearest_away"}, None, None),
        ({"product": softfp8.float16, "accumulator": "float16"}, None, None),
        ({"product": softfp8.e4m3, "promote_every": 7}, None, None),
        ({"rounding": "upward"}, None, None),
        (None, None, None),                                       # exact model
        (None, (m, 1), (1, p)),                                   # exact, scaled
        ({}, (m, 3), (3, p)),                                     # K-blocked scales (50)
        ({"accumulator": "float16", "promote_every": 25}, (m, 3), (3, 1)),
    ]
    for ci, (kw, sha, shb) in enumerate(cfgs):
        for fa, fb in [(E4M3, E5M2), (E5M2, E4M3)]:   # mixed: always the gemm kernel
            for regime in range(3):
                A = rand_codes(rng, fa, (m, k), 0.004 if regime == 1 else 0.0)
                B = rand_codes(rng, fb, (k, p), 0.004 if regime == 1 else 0.0)
                if regime == 2:   # tiny and huge magnitudes: cancellation, overflow, underflow
                    A[1] = 0
                    A[2, ::3] = 0x7A
                    B[:, 5] = 0x01
                a, b = codes_array(A, fa), codes_array(B, fb)
                acc = None if kw is None else softfp8.Accumulation(**kw)
                if sha is None:
                    fn = lambda: softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc)
                else:
                    sa, sb = rand_scales(rng, sha), rand_scales(rng, shb)
                    fn = lambda: softfp8.scaled_mm(a, b, sa, sb, accumulation=acc)
                for mode in ("nearest_even", "downward"):
                    def call():
                        with softfp8.rounding(mode):
                            return fn()
                    (r0, f0), (r1, f1) = run_sf(call, 0), run_sf(call, 2)
                    assert np.array_equal(raw(r0), raw(r1)), (ci, fa.name, regime, mode)
                    assert f0 == f1, (ci, fa.name, regime, mode, f0, f1)
                    count += 1
    assert count == 156


def test_bad_input():
    a = np.zeros((2, 3), softfp8.e4m3.dtype)
    b = np.zeros((3, 2), softfp8.e5m2.dtype)
    with pytest.raises(ValueError, match="promote_every"):
        softfp8.Accumulation(promote_every=0)
    with pytest.raises(TypeError, match="promote_every"):
        softfp8.Accumulation(promote_every=2.5)
    with pytest.raises(ValueError, match="stochastic"):
        softfp8.Accumulation(rounding="stochastic")
    with pytest.raises(ValueError, match="'fastest'"):
        softfp8.Accumulation(rounding="fastest")
    with pytest.raises(ValueError, match="'tree'"):
        softfp8.Accumulation(order="tree")
    with pytest.raises(ValueError, match="'float128'"):
        softfp8.Accumulation(accumulator="float128")
    with pytest.raises(TypeError, match="accumulator"):
        softfp8.Accumulation(accumulator=np.int8)
    with pytest.raises(TypeError, match="accumulation"):
        softfp8.matmul(a, b, accumulation="fp16")
    with pytest.raises(TypeError, match="softfp8 arrays"):
        softfp8.matmul(a, np.zeros((3, 2)), accumulation=softfp8.Accumulation())
    with pytest.raises(ValueError, match="do not fit"):
        softfp8.matmul(a, a, accumulation=softfp8.Accumulation())
    with pytest.raises(TypeError, match="out_dtype"):
        softfp8.matmul(a, b, out_dtype=np.int32)
    with pytest.raises(ValueError, match="finite positive"):
        softfp8.scaled_mm(a, b, -1.0, 1.0)
    with pytest.raises(ValueError, match="finite positive"):
        softfp8.scaled_mm(a, b, 1.0, np.array([[1.0, np.inf]], np.float32))
    with pytest.raises(ValueError, match="1e-50"):     # rounds to binary32 zero
        softfp8.scaled_mm(a, b, 1e-50, 1.0)
    with pytest.raises(ValueError, match="scale_a"):
        softfp8.scaled_mm(a, b, np.ones((3, 1), np.float32), 1.0)
    with pytest.raises(ValueError, match="block_a"):
        softfp8.scaled_mm(a, b, np.ones((2, 2), np.float32), 1.0)
    with pytest.raises(ValueError, match="differently"):
        softfp8.scaled_mm(np.zeros((2, 4), softfp8.e4m3.dtype), np.zeros((4, 2), softfp8.e4m3.dtype),
                          np.ones((2, 2), np.float32), np.ones((4, 1), np.float32))
    with pytest.raises(ValueError, match="divide"):
        softfp8.scaled_mm(np.zeros((2, 4), softfp8.e4m3.dtype), np.zeros((4, 2), softfp8.e4m3.dtype),
                          np.ones((2, 2), np.float32), 1.0,
                          accumulation=softfp8.Accumulation(promote_every=3))
    with pytest.raises(ValueError, match="2-D"):
        softfp8.scaled_mm(a[0], b, 1.0, 1.0)
    with pytest.raises(ValueError, match="stochastic"):
        with softfp8.rounding("stochastic", seed=1):
            softfp8.matmul(a, b, accumulation=softfp8.Accumulation())


def test_shapes_batch_and_out():
    """1-D operands, broadcast batch dimensions and out= as np.matmul has them."""
    rng = np.random.default_rng(3)
    A = rand_codes(rng, E4M3, (2, 1, 3, 5))
    B = rand_codes(rng, E5M2, (4, 5, 2))
    a, b = codes_array(A, E4M3), codes_array(B, E5M2)
    acc = softfp8.Accumulation(accumulator="float16")
    r = softfp8.matmul(a, b, accumulation=acc)
    assert r.shape == (2, 4, 3, 2) and r.dtype == np.float32
    for i, j in itertools.product(range(2), range(4)):
        exp, _ = ref_gemm(A[i, 0], E4M3, B[j], E5M2, Model(F16), F32, "nearest_even")
        assert np.array_equal(raw(r[i, j]), exp)
    v = softfp8.matmul(a[0, 0, 0], b[0], accumulation=acc)
    assert v.shape == (2,) and np.array_equal(raw(v), raw(r[0, 0, 0]))
    out = np.empty((2, 4, 3, 2), np.float32)
    assert softfp8.matmul(a, b, out=out, accumulation=acc) is out
    assert np.array_equal(raw(out), raw(r))
    same = softfp8.matmul(a, a[0, 0].T, accumulation=acc)   # one format: the wider accumulator's
    assert same.dtype == np.float16


def test_extreme_scales():
    """Scale products that overflow (inf) or underflow (0) binary32, and subnormal scales."""
    rng = np.random.default_rng(41)
    m, k, p = 2, 6, 3
    A = rand_codes(rng, E4M3, (m, k))
    B = rand_codes(rng, E5M2, (k, p))
    a, b = codes_array(A, E4M3), codes_array(B, E5M2)
    count = 0
    for sa_v, sb_v in [(2.0 ** -100, 2.0 ** -100), (2.0 ** 100, 2.0 ** 100), (2.0 ** -140, 3.0),
                       (2.0 ** 60, 2.0 ** 70)]:
        sa = np.full((m, 1), sa_v, np.float32)
        sb = np.full((1, p), sb_v, np.float32)
        for kw, model in [(None, None), ({}, Model(F32)), ({"accumulator": "float16"}, Model(F16))]:
            for blocked in (False, True):
                if blocked:   # the same values as 1 x 3 tiles of a: applied per chunk
                    sa_b, blka, kb = np.full((m, 2), sa_v, np.float32), (1, 3), 3
                    if model is not None:
                        model = Model(model.acc, promote=3)
                else:
                    sa_b, blka, kb = sa, (1, k), 0
                exp, eflags = ref_gemm(A, E4M3, B, E5M2, model, F32, "nearest_even",
                                       make_scale(scale_fn(sa_b, blka), scale_fn(sb, (k, 1))), kb)
                acc = None if kw is None else softfp8.Accumulation(**kw)
                check((sa_v, sb_v, kw, blocked),
                      lambda: softfp8.scaled_mm(a, b, sa_b, sb, accumulation=acc), exp, eflags)
                count += 1
    assert count == 24


def test_layouts():
    """Transposed, reversed, strided and unaligned operands give the contiguous result."""
    rng = np.random.default_rng(8)
    A = rand_codes(rng, E4M3, (5, 33))
    B = rand_codes(rng, F16, (33, 18))
    a, b = codes_array(A, E4M3), codes_array(B, F16)
    accs = [None, softfp8.Accumulation(accumulator="float16", promote_every=8)]
    buf = np.zeros(33 * 18 * 2 + 1, np.uint8)
    bu = buf[1:].view(softfp8.float16.dtype).reshape(33, 18)   # unaligned 2-byte codes
    bu[...] = b
    variants = [
        (np.ascontiguousarray(a.T).T, np.asfortranarray(b)),
        (a[::-1][::-1], b[:, ::-1][:, ::-1]),
        (np.repeat(a, 2, axis=1)[:, ::2], bu),
    ]
    count = 0
    for acc in accs:
        for fast in (0, 2):
            want, wf = run_sf(lambda: softfp8.matmul(a, b, accumulation=acc, out_dtype=np.float32), fast)
            for va, vb in variants:
                got, gf = run_sf(lambda: softfp8.matmul(va, vb, accumulation=acc,
                                                        out_dtype=np.float32), fast)
                assert np.array_equal(raw(got), raw(want)) and gf == wf
                count += 1
    assert count == 12


def test_other_operand_formats():
    """FP4 E2M1 and FP6 E3M2 (no specials, saturating), Tesla CFloat8 (gap subnormals),
    E4M3FNUZ and flushed subnormals as operands, products and accumulators."""
    fp4, fp6 = custom(2, 1, 1, "none"), custom(3, 2, 3, "none")
    cf = ref.cfloat8_143(20)
    fnuz = ref.preset("e4m3fnuz")
    flush = custom(4, 3, 7, "ieee", "flush")
    rng = np.random.default_rng(51)
    count = 0
    cases = [(fp4, fp4, {}, Model(F32)), (fp4, E4M3, {"accumulator": "bfloat16"}, Model(BF16)),
             (fp6, fp4, {"product": CUSTOM[fp6.name], "accumulator": "float16"},
              Model(F16, prod=fp6)),
             (cf, E5M2, {"accumulator": "float16", "promote_every": 2}, Model(F16, promote=2)),
             (fnuz, fnuz, {"accumulator": softfp8.e4m3fnuz}, Model(fnuz)),
             (flush, E5M2, {"accumulator": CUSTOM[flush.name]}, Model(flush)),
             (fp4, fp6, None, None), (cf, fnuz, None, None), (flush, E4M3, None, None)]
    for fa, fb, kw, model in cases:
        for mode in ("nearest_even", "toward_zero"):
            A = rand_codes(rng, fa, (2, 7), 0.05)
            B = rand_codes(rng, fb, (7, 3), 0.05)
            exp, eflags = ref_gemm(A, fa, B, fb, model, F32, mode)
            a, b = codes_array(A, fa), codes_array(B, fb)
            acc = None if kw is None else softfp8.Accumulation(**kw)

            def call():
                with softfp8.rounding(mode):
                    return softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc)
            check((fa.name, fb.name, kw, mode), call, exp, eflags)
            count += 1
    assert count == 18
