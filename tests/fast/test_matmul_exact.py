"""matmul through the binary64 BLAS paths (npy/matmul.c: matmul_blas_tables for
8-bit formats whose partial sums are exact, matmul_blas_ziv for every format whose
values are binary64 numbers: exactness certificate, Ziv's test, the exact
accumulator; NaN / infinity rows and columns by their special products alone)
against an exact reference: integer dot products of the model's values
(tests/models/rational.py) rounded once by the model, for every deterministic
rounding mode; codes and flags also against the exact core (fast paths off),
which is the reference for the NaN codes of special outputs."""

from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import _ext

from ..models import rational as ref

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")

FORMATS = {
    "float16": softfp8.float16, "bfloat16": softfp8.bfloat16, "hfp16_169": softfp8.hfp16_169,
    "uhp": softfp8.uhp, "shp15": softfp8.shp(bias=15), "e5m2": softfp8.e5m2, "e4m3": softfp8.e4m3,
    "e5m2fnuz": softfp8.e5m2fnuz,
    # custom: odd biases, Tesla subnormals, FNUZ / fn specials, flush, saturation
    "f16_b9_tesla": softfp8.format(exp_bits=5, man_bits=10, bias=9, subnormals="tesla", name="f16_b9_tesla"),
    "e5m2_b20_fnuz": softfp8.format(exp_bits=5, man_bits=2, bias=20, specials="fnuz", name="e5m2_b20_fnuz"),
    "e6m7_b41_fn": softfp8.format(exp_bits=6, man_bits=7, bias=41, specials="fn", name="e6m7_b41_fn"),
    "e4m3_b3_tesla": softfp8.format(exp_bits=4, man_bits=3, bias=3, subnormals="tesla", name="e4m3_b3_tesla"),
    "f16_flush": softfp8.format(exp_bits=5, man_bits=10, bias=15, subnormals="flush", name="f16_flush"),
    "e5m2_sat": softfp8.format(exp_bits=5, man_bits=2, bias=15, saturate=True, name="e5m2_sat"),
}

F32 = ref.preset("float32")


def _model(fmt):
    return ref.make_format(fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.specials, fmt.subnormals,
                           fmt.signed, fmt.saturate, fmt.name)


class Ref:
    """Exact matmul of codes by the model: integer dot products of the values
    scaled by 2^K, the special rule (NaN, inf * 0, inf - inf) per output."""

    def __init__(self, fmt):
        self.fmt, self.rf = fmt, _model(fmt)
        self.dec = {}

    def decode(self, codes):
        for c in np.unique(codes).tolist():
            if c not in self.dec:
                self.dec[c] = ref.decode(self.rf, c)
        ks = [d.value for d in self.dec.values() if d.kind == "finite"]
        self.K = max((v.denominator.bit_length() - 1 for v in ks), default=0)

    def ints(self, codes):
        f = np.vectorize(lambda c: int(self.dec[c].value * 2 ** self.K) if self.dec[c].kind == "finite" else 0,
                         otypes=[object])
        return f(codes)

    def matmul(self, A, B, mode, out=None, saturate=None):
        """(codes, flags, kinds) of A @ B (code arrays); out: None (the format) or
        np.float32; saturate: the context's (None: the format's default)"""
        A, B = A.astype(np.int64), B.astype(np.int64)
        key = (A.shape, B.shape, A.tobytes(), B.tobytes())
        if getattr(self, "key", None) != key:  # the same operands in every mode: one exact product
            self.decode(np.concatenate([A.ravel(), B.ravel()]))
            self.S = self.ints(A).dot(self.ints(B)) if A.shape[1] else np.zeros((A.shape[0], B.shape[1]), object)
            self.key = key
        S = self.S
        dst = F32 if out is np.float32 else self.rf
        sat = None if out is np.float32 else (self.fmt.saturate if saturate is None else saturate)
        codes = np.zeros(S.shape, np.int64)
        flags = 0
        kinds = {}
        for c, d in self.dec.items():
            if d.subnormal and (A == c).any() | (B == c).any():
                flags |= ref.DENORMAL
        for i in range(S.shape[0]):
            for j in range(S.shape[1]):
                kind, sign, fl = self.special(A[i], B[:, j])
                flags |= fl
                kinds[i, j] = kind
                if kind == "finite":
                    v = Fraction(S[i, j], 2 ** (2 * self.K))
                    if v == 0:
                        sign = self.zero_sign(A[i], B[:, j], mode)
                    code, fl = ref.round_pack(dst, sign, v, mode, sat)
                    codes[i, j] = code
                    flags |= fl
        return codes, flags, kinds

    def special(self, a, b):
        nan = pinf = ninf = False
        fl = 0
        for x, y in zip(a.tolist(), b.tolist()):
            dx, dy = self.dec[x], self.dec[y]
            if dx.kind == "nan" or dy.kind == "nan":
                nan = True
                fl |= ref.INVALID if (dx.kind == "nan" and not dx.quiet) or (dy.kind == "nan" and not dy.quiet) else 0
            elif dx.kind == "inf" or dy.kind == "inf":
                if dx.kind == "zero" or dy.kind == "zero":
                    nan, fl = True, fl | ref.INVALID
                elif dx.sign ^ dy.sign:
                    ninf = True
                else:
                    pinf = True
        if nan:
            return "nan", 0, fl
        if pinf and ninf:
            return "nan", 0, fl | ref.INVALID
        if pinf or ninf:
            return "inf", int(ninf), fl
        return "finite", 0, fl

    def zero_sign(self, a, b, mode):
        signs = set()
        for x, y in zip(a.tolist(), b.tolist()):
            dx, dy = self.dec[x], self.dec[y]
            if dx.kind == "zero" or dy.kind == "zero":
                signs.add((dx.sign ^ dy.sign) if self.fmt.signed else 0)
            else:
                signs.add(None)
        if signs == {1}:
            return 1
        if signs == {0} or not self.fmt.signed:
            return 0
        return int(mode == "downward")


def _codes(rng, fmt, shape, kind):
    """Codes of random values: 'normal' (N(0, 1)), 'wide' (log-uniform over the
    format's whole range: Ziv's test and the accumulator), 'tiny' (near the
    underflow range), 'huge' (near overflow)."""
    x = rng.standard_normal(shape)
    if kind == "wide":
        lo, hi = np.log2(float(fmt.min_subnormal if hasattr(fmt, "min_subnormal") else 2.0 ** -fmt.bias)), \
            np.log2(float(fmt.max))
        x = np.sign(x) * 2.0 ** rng.uniform(lo, hi, shape)
    elif kind == "tiny":
        x *= 2.0 ** (-(fmt.bias - 1) + 2)
    elif kind == "huge":
        x *= float(fmt.max) / 4 / np.sqrt(shape[-1] if len(shape) > 1 else 1)
    if not fmt.signed:
        x = np.abs(x)
    with np.errstate(all="ignore"), softfp8.rounding("nearest_even"):
        return x.astype(fmt.dtype).view(fmt.storage)


def _near_ties(fmt, A, B):
    """output (0, 0) = 1 + 2^-P + t just above a tie of float32 / the format (P its
    precision), t the smallest positive value: lost in a binary64 sum when the
    format's range is wide; output (1, 0): the same tie exactly."""
    m, n = A.shape
    if n < 3 or m < 3 or B.shape[1] < 2:
        return
    one = int(fmt.encode(1.0))
    for row, P, t in ((0, fmt.man_bits + 1, 1), (1, fmt.man_bits + 1, 0), (2, 24, 1)):
        half = fmt.encode(2.0 ** -P)
        if half is None:
            continue
        A[row] = 0
        A[row, :3] = [one, int(half), t]
    B[:3, 0] = one


def _sprinkle(rng, fmt, A, B):
    """NaN / infinity codes into a few rows of A and columns of B"""
    specials = [c for c in (fmt.encode(float("nan")), fmt.encode(float("inf")), fmt.encode(float("-inf")))
                if c is not None and fmt.classify(int(c)) in ("qnan", "snan", "inf")]
    if not specials:
        return 0
    for _ in range(2):
        A[rng.integers(A.shape[0]), rng.integers(A.shape[1])] = specials[rng.integers(len(specials))]
        B[rng.integers(B.shape[0]), rng.integers(B.shape[1])] = specials[rng.integers(len(specials))]
    return 1


def _run(fmt, A, B, mode, out, layout):
    """softfp8.matmul of code arrays A, B in a layout: 'c' (contiguous),
    'f' (A transposed in memory), 'strided' (B every other row, out= a strided view)"""
    a, b = A.view(fmt.dtype), B.view(fmt.dtype)
    kw = {} if out is None else {"out_dtype": out}
    if layout == "f":
        a = np.asfortranarray(a)
    with softfp8.rounding(mode), softfp8.collect_flags() as fl, np.errstate(all="ignore"):
        if layout == "strided":
            b2 = np.repeat(b, 2, axis=0)[::2]
            dt = fmt.dtype if out is None else np.dtype(out)
            o = np.zeros((A.shape[0], 2 * B.shape[1]), dt)[:, ::2]
            r = np.matmul(a, b2, out=o) if out is None else softfp8.matmul(a, b2, out_dtype=out)
            if out is None:
                assert r is o
        else:
            r = softfp8.matmul(a, b, **kw)
    r = np.ascontiguousarray(r)
    return (r.view(fmt.storage) if out is None else r.view(np.uint32)).astype(np.int64), int(fl.flags)


def _check(fmt, model, A, B, mode, out, layout, what, saturate=None):
    got, gfl = _run(fmt, A, B, mode, out, layout)
    prev = _ext.set_fast(0)
    try:
        core, cfl = _run(fmt, A, B, mode, out, "c")
    finally:
        _ext.set_fast(prev)
    assert np.array_equal(got, core) and gfl == cfl, f"{what}: fast {got.tolist()} {gfl} core {core.tolist()} {cfl}"
    want, wfl, kinds = model.matmul(A, B, mode, out, saturate)
    dst = F32 if out is np.float32 else model.rf
    for (i, j), k in kinds.items():
        if k == "finite":
            assert got[i, j] == want[i, j], f"{what}: ({i},{j}) got {got[i, j]:#x} want {want[i, j]:#x}"
        else:
            d = ref.decode(dst, int(got[i, j]))
            assert d.kind == k or (k == "inf" and d.kind == "finite" and out is None
                                 and (fmt.saturate if saturate is None else saturate)), \
                f"{what}: ({i},{j}) {d.kind} want {k}"
    # flags: the model's (the NaN / infinity conversions' own flags are the core's)
    assert gfl & ~ref.INVALID == wfl & ~ref.INVALID or not all(k == "finite" for k in kinds.values()), \
        f"{what}: flags {gfl:#x} want {wfl:#x}"
    assert (gfl & ref.INVALID) == (wfl & ref.INVALID), f"{what}: invalid {gfl:#x} want {wfl:#x}"
    return 1


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_matmul_blas_paths_exact(name):
    fmt = FORMATS[name]
    model = Ref(fmt)
    rng = np.random.default_rng(sum(map(ord, name)))
    cases = specials = 0
    plan = [((1, 1, 1), "normal"), ((6, 40, 5), "normal"), ((7, 33, 6), "wide"), ((5, 24, 4), "tiny"),
            ((4, 20, 5), "huge"), ((16, 256, 12), "normal"),
            ((9, 3, 7), "wide")]  # n < p, 2 n < m: matmul_blas_ziv's own scratch buffers
    for (m, n, p), kind in plan:
        A, B = _codes(rng, fmt, (m, n), kind), _codes(rng, fmt, (n, p), kind)
        if kind == "normal":
            _near_ties(fmt, A, B)
        variants = [("plain", A, B)]
        As, Bs = A.copy(), B.copy()
        if _sprinkle(rng, fmt, As, Bs):
            variants.append(("specials", As, Bs))
            specials += 1
        for vname, a, b in variants:
            for k, mode in enumerate(MODES):
                out = (None, np.float32)[k % 2]
                layout = ("c", "f", "strided")[(k + cases) % 3]
                cases += _check(fmt, model, a, b, mode, out, layout,
                                f"{name} {m}x{n}x{p} {kind} {vname} {mode} out={out} {layout}")
    assert cases == (len(plan) + specials) * 6
    assert specials == (0 if fmt.specials == "none" else len(plan))


def test_saturating_format_with_infinities_after_a_warm_cache():
    """Regression: the dgemm path once decoded operands with the call's environment,
    so a saturating format (or context) turned infinities into the largest binary64:
    the products overflowed and outputs were left unwritten (fuzz seeds 6, 9, 23, 30,
    ... with `matmul fz4_2_1_-30_ieee_tesla`).  A large call first (tables cached), then
    tiny calls; the model gives infinities / NaN."""
    fmts = [softfp8.format(exp_bits=2, man_bits=1, bias=-30, subnormals="tesla", saturate=True, name="fz4"),
            FORMATS["e5m2_sat"], softfp8.float16, softfp8.bfloat16]
    cases = 0
    for fmt in fmts:
        model = Ref(fmt)
        rng = np.random.default_rng(5)
        big = _codes(rng, fmt, (64, 64), "normal")
        with softfp8.saturation(True):
            softfp8.matmul(big.view(fmt.dtype), big.view(fmt.dtype))
        inf, nan = int(fmt.encode(float("inf"))), int(fmt.encode(float("nan")))
        one = int(fmt.encode(1.0))
        A = np.array([[inf, one, one, 0], [one, one, nan, one]], fmt.storage)
        B = np.array([[one, one], [one, inf], [one, one], [one, 0]], fmt.storage)
        for sat in (True, False):
            for mode in MODES:
                with softfp8.saturation(sat):
                    cases += _check(fmt, model, A, B, mode, None, "c", f"{fmt.name} sat={sat} {mode}", sat)
    assert cases == 4 * 2 * 6


def test_e4m3_one_nan_only_its_row():
    """E4M3 matmul with one NaN (the 8-bit BLAS path keeps the other rows): only its row
    is NaN, the rest equals the NaN-free product."""
    e = softfp8.e4m3
    rng = np.random.default_rng(3)
    A = _codes(rng, e, (64, 48), "normal")
    B = _codes(rng, e, (48, 32), "normal")
    A2 = A.copy()
    A2[5, 7] = int(e.encode(float("nan")))
    with softfp8.collect_flags() as f1:
        r1 = softfp8.matmul(A.view(e.dtype), B.view(e.dtype), out_dtype=np.float32)
    with softfp8.collect_flags() as f2:
        r2 = softfp8.matmul(A2.view(e.dtype), B.view(e.dtype), out_dtype=np.float32)
    assert np.isnan(r2[5]).all() and not np.isnan(np.delete(r2, 5, axis=0)).any()
    assert np.array_equal(np.delete(r2, 5, axis=0), np.delete(r1, 5, axis=0))
    assert f2.flags == f1.flags


# formats of the vector kernels of npy/matmul.c: 8-bit lookup, IEEE-like 9..16-bit
# arithmetic decoding (the custom ones: odd widths and biases), 8-bit key-table rounding
VECTOR_FORMATS = {
    "float16": softfp8.float16, "bfloat16": softfp8.bfloat16, "e5m2": softfp8.e5m2, "e4m3": softfp8.e4m3,
    "e5m6_b11": softfp8.format(exp_bits=5, man_bits=6, bias=11, name="e5m6_b11"),
    "e6m9_b40": softfp8.format(exp_bits=6, man_bits=9, bias=40, name="e6m9_b40"),
}


def _plant(fmt, A, B, specials):
    """subnormals, exact zeros and (with specials, for formats with them) NaN /
    infinity in the middle of long contiguous lines (vector kernels stop and resume
    there), a zero row of A and column of B (exact-zero outputs: the sign by the
    accumulator); without specials the 8-bit path rounds whole rows in place"""
    sub = int(fmt.encode(float(fmt.min_subnormal))) if hasattr(fmt, "min_subnormal") else 1
    neg = int(fmt.encode(-2.0 * float(fmt.min_subnormal))) if hasattr(fmt, "min_subnormal") else 1
    A[3, 17], A[4, 18], B[5, 41], B[6, 9] = sub, neg, neg, sub
    A[7] = 0
    B[:, 11] = 0
    for c, (i, j) in zip((fmt.encode(float("nan")), fmt.encode(float("inf"))), ((9, 20), (30, 44))[:2 * specials]):
        if c is not None and fmt.classify(int(c)) in ("qnan", "snan", "inf"):
            A[i, j] = int(c)
            B[i + 4, j + 30] = int(c)


@pytest.mark.parametrize("name", sorted(VECTOR_FORMATS))
def test_matmul_blocks_and_vector_kernels(name):
    """Outputs over several blocks of npy/matmul.c's finishing pass (37 x 83: blocks of
    2048 end inside a row), lines of 45 and 83 (vector bodies and odd tails), subnormal /
    special / zero operands inside the lines, C order, A transposed and strided B / out=,
    both results in every mode: codes and flags at the CPU's best SIMD level equal to the
    core and the model, and equal at every lower level."""
    fmt = VECTOR_FORMATS[name]
    model = Ref(fmt)
    rng = np.random.default_rng(sum(map(ord, name)) + 7)
    prev_fast, top = _ext.set_fast(2), _ext.simd_level()  # eager: every table built
    cases = 0
    try:
        for phase, kind in enumerate(("normal", "wide")):
            A, B = _codes(rng, fmt, (37, 45), kind), _codes(rng, fmt, (45, 83), kind)
            _near_ties(fmt, A, B)
            _plant(fmt, A, B, specials=phase == 1)
            for k, mode in enumerate(MODES):
                for out in (None, np.float32):
                    layout = ("c", "f", "strided")[(k + phase) % 3]
                    what = f"{name} {kind} {mode} out={out} {layout}"
                    cases += _check(fmt, model, A, B, mode, out, layout, what)
                    want = _run(fmt, A, B, mode, out, layout)
                    for level in range(top):
                        _ext.set_simd(level)
                        got = _run(fmt, A, B, mode, out, layout)
                        _ext.set_simd(top)
                        assert np.array_equal(got[0], want[0]) and got[1] == want[1], f"{what} simd={level}"
    finally:
        _ext.set_simd(top)
        _ext.set_fast(prev_fast)
    assert cases == 2 * len(MODES) * 2
