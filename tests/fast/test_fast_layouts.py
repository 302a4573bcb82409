"""Every fast kernel under every NumPy calling convention, against the exact core.

The reference is the same call with the fast paths off (``_ext.set_fast(0)``: the
exact core, which the rest of the suite checks against rational arithmetic and
TestFloat).  Each call is then repeated with eager tables (``set_fast(2)``) at every
SIMD level the CPU has, and in the default mode (``set_fast(1)``) once the tables
exist -- the case of NumPy's short accumulate / reduce inner loops.  Results are
compared as raw bytes, and the OR-flags seen by ``softfp8.collect_flags()`` must be
equal.  Every output buffer a test passes is filled with fresh random bytes on each
run, so a kernel that reads output it has not written yet gives a different answer.

Conventions: ufunc.accumulate (1-D, axis 0 / 1 of 2-D, into a prefilled and a
reversed out=), reduce (axis 0 / 1, keepdims, out=), reduceat, ufunc.at, out=
aliasing an input (in place, shifted by one element either way), where= masks,
negative strides, zero strides (np.broadcast_to), strided and transposed views,
unaligned 16-bit data (a view of a uint8 buffer at offset 1).

Kernels: 8-bit binary tables (arithmetic, min/max, comparisons), unary tables,
casts (to/from float16/32/64 and between formats), fma, 16-bit add/sub/mul,
stochastic casts (and, for 16-bit formats, random bits keyed on the global element
index: split, reversed, strided and Fortran-ordered calls equal one flat call).  Then
out-of-width codes: formats of 2 to 15 bits fed random raw storage bytes.  Then the
table cache: counters, the cap, growth.
"""

from __future__ import annotations

import contextlib
import zlib

import numpy as np
import pytest

from ..models import rational as ref
import softfp8
from softfp8 import _ext
from .test_fast_paths import SIMD_LEVELS  # (2, 1, 0) with AVX-512, (1, 0) with AVX2 only, else (0,)

FLAG_BITS = 0x3F  # the six defined flags (softfp8.Flags)


# fast runs: eager tables at every SIMD level, then the default (length-gated) mode
FAST_RUNS = [(2, s) for s in SIMD_LEVELS] + [(1, s) for s in SIMD_LEVELS]


@contextlib.contextmanager
def switches(fast, simd):
    pf, ps = _ext.set_fast(fast), _ext.set_simd(simd)
    try:
        yield
    finally:
        _ext.set_simd(ps)
        _ext.set_fast(pf)


def seed_of(*key):
    return zlib.crc32(repr(key).encode())


def garbage(g, shape, dtype):
    """An array of random bytes (fresh on each run)."""
    dt = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    return np.frombuffer(g.bytes(n), dtype=np.uint8).copy().view(dt).reshape(shape)


def raw(x):
    a = np.ascontiguousarray(np.asarray(x)).reshape(-1)
    return a.view(np.dtype(f"u{a.dtype.itemsize}")).copy()


def observe(fn, g):
    with np.errstate(all="ignore"), softfp8.collect_flags() as fl:
        r = fn(g)
    parts = r if isinstance(r, tuple) else (r,)
    return [(np.asarray(p).dtype, np.asarray(p).shape, raw(p)) for p in parts], int(fl.flags)


def _used():
    st = _ext.fast_cache_stats()
    return st["hits"] + st["builds"]


def check(fn, what, engaged=True, seed=0, min_simd=0):
    """fn(g) -> array or tuple of arrays; g a numpy Generator for garbage outputs,
    seeded differently on every run.  Returns the core's (parts, flags).  The fast
    path must have run (engaged) at SIMD levels >= min_simd."""
    with switches(0, SIMD_LEVELS[-1]):
        ref_parts, ref_fl = observe(fn, np.random.default_rng([seed, 0]))
    with switches(2, SIMD_LEVELS[0]):  # build the tables first
        observe(fn, np.random.default_rng([seed, 99]))
    for k, (level, simd) in enumerate(FAST_RUNS):
        before = _used()
        with switches(level, simd):
            parts, fl = observe(fn, np.random.default_rng([seed, k + 1]))
        tag = f"{what} [fast={level} simd={simd}]"
        if engaged and level == 2 and simd >= min_simd:
            assert _used() > before, f"{tag}: no fast-path table was used"
        assert len(parts) == len(ref_parts), tag
        for j, ((dt, sh, got), (rdt, rsh, want)) in enumerate(zip(parts, ref_parts)):
            assert dt == rdt and sh == rsh, f"{tag} part {j}: {dt}{sh} != core {rdt}{rsh}"
            if not np.array_equal(got, want):
                bad = np.nonzero(got != want)[0]
                i = int(bad[0])
                raise AssertionError(f"{tag} part {j}: {bad.size} of {got.size} elements differ; "
                                     f"first at {i}: fast 0x{int(got[i]):x}, core 0x{int(want[i]):x}")
        assert fl == ref_fl, f"{tag}: flags fast 0x{fl:02x}, core 0x{ref_fl:02x}"
    return ref_parts, ref_fl


# --------------------------------------------------------------------------
# the ISSUE 8 example
# --------------------------------------------------------------------------

def test_issue8_cumsum_after_add_table():
    """cumsum once the add table exists: the AVX-512 gather read a vector of the
    output before writing it.  Expected values from the independent reference."""
    e4 = softfp8.e4m3.dtype
    rf = ref.preset("e4m3")
    rng = np.random.default_rng(3)
    A = rng.uniform(-16, 16, 64).astype(e4)
    a = np.repeat(np.arange(256, dtype=np.uint8), 256).view(e4)
    codes = A.view(np.uint8).tolist()
    want, acc = [], None
    for c in codes:
        acc = c if acc is None else ref.add(rf, acc, c)[0]
        want.append(acc)
    assert [float(v) for v in np.array(want, np.uint8).view(e4)[:4]] == [-13, -20, -10, -7]
    for level, simd in [(1, s) for s in SIMD_LEVELS] + [(2, s) for s in SIMD_LEVELS]:
        with switches(level, simd), np.errstate(all="ignore"):
            np.add(a, a[::-1])  # builds the add table
            for _ in range(3):  # the old failure varied from run to run
                got = np.cumsum(A)
                assert got.view(np.uint8).tolist() == want, (level, simd)
                out = garbage(np.random.default_rng(), 64, e4)
                np.add.accumulate(A, out=out)
                assert out.view(np.uint8).tolist() == want, (level, simd)


# --------------------------------------------------------------------------
# binary ufuncs
# --------------------------------------------------------------------------

N = 300  # several 16- and 64-element blocks plus a tail
REDUCEAT_IDX = np.array([0, 5, 5, 40, 3, 100, 171, 299])
AT_IDX = np.array([3, 3, 7, 0, 3, 250, 7, 299, 100, 100, 100, 5])


def _operands(fmt, key, finite=True):
    """Two arrays of N codes (finite values mostly, so accumulations stay interesting)."""
    g = np.random.default_rng(seed_of("operands", fmt.name, key))
    codes = np.arange(1 << fmt.bits, dtype=np.uint32).astype(fmt.storage)
    if finite:
        with switches(0, 0), np.errstate(all="ignore"):
            v = codes.view(fmt.dtype).astype(np.float64)
        small = codes[np.isfinite(v) & (np.abs(v) < 4) & (np.abs(v) > 0.25)]
        pick = np.where(g.random(2 * N) < 0.9, g.choice(small, 2 * N), g.choice(codes, 2 * N))
    else:
        pick = g.choice(codes, 2 * N)
    x = pick[:N].astype(fmt.storage).view(fmt.dtype)
    y = pick[N:].astype(fmt.storage).view(fmt.dtype)
    return x, y


def binary_cases(uf, x, y, boolean):
    dt = x.dtype
    odt = np.dtype(np.bool_) if boolean else dt
    X2, Y2 = x[:288].reshape(16, 18), y[:288].reshape(16, 18)
    cases = {}
    if not boolean:
        def acc_out(g):
            out = garbage(g, N, dt)
            r = uf.accumulate(x, out=out)
            assert r is out
            return out

        def acc_out_rev(g):
            out = garbage(g, N, dt)[::-1]
            uf.accumulate(x, out=out)
            return out

        def reduce_out(g):
            out = garbage(g, 18, dt)
            uf.reduce(X2, axis=0, out=out)
            return out

        def at(g):
            z = x.copy()
            uf.at(z, AT_IDX, y[:AT_IDX.size])
            return z

        def shifted(direction):
            def f(g):
                z = x.copy()
                if direction > 0:
                    uf(z[:-1], y[:-1], out=z[1:])
                else:
                    uf(z[1:], y[1:], out=z[:-1])
                return z
            return f

        def inplace_a(g):
            z = x.copy()
            uf(z, y, out=z)
            return z

        def inplace_b(g):
            z = y.copy()
            uf(x, z, out=z)
            return z

        def inplace_both(g):
            z = x.copy()
            uf(z, z, out=z)
            return z

        cases.update({
            "accumulate": lambda g: uf.accumulate(x),
            "accumulate-axis1": lambda g: uf.accumulate(X2, axis=1),
            "accumulate-axis0": lambda g: uf.accumulate(X2, axis=0),
            "accumulate-out": acc_out,
            "accumulate-out-reversed": acc_out_rev,
            "accumulate-of-reversed": lambda g: uf.accumulate(x[::-1]),
            "accumulate-strided": lambda g: uf.accumulate(x[::3]),
            "accumulate-T": lambda g: uf.accumulate(X2.T, axis=1),
            "reduce": lambda g: uf.reduce(x),
            "reduce-axis0": lambda g: uf.reduce(X2, axis=0),
            "reduce-axis1": lambda g: uf.reduce(X2, axis=1),
            "reduce-keepdims": lambda g: uf.reduce(X2, axis=0, keepdims=True),
            "reduce-out": reduce_out,
            "reduceat": lambda g: uf.reduceat(x, REDUCEAT_IDX),
            "reduceat-2d": lambda g: uf.reduceat(X2, [0, 4, 4, 10], axis=1),
            "at": at,
            "inplace-a": inplace_a,
            "inplace-b": inplace_b,
            "inplace-both": inplace_both,
            "shifted+1": shifted(1),
            "shifted-1": shifted(-1),
        })
    elif dt.itemsize == 1:
        def inplace_bool(g):
            z = x.copy()
            uf(z, y, out=z.view(np.bool_))
            return z.view(np.uint8)
        cases["inplace-as-bool"] = inplace_bool

    def where(g):
        mask = np.random.default_rng(seed_of("mask")).random(N) < 0.6
        out = garbage(g, N, odt)
        before = out.copy()
        uf(x, y, out=out, where=mask)
        assert np.array_equal(raw(out)[~mask], raw(before)[~mask]), "where= wrote a masked element"
        return out[mask]

    def out_rev(g):
        out = garbage(g, N, odt)[::-1]
        uf(x, y, out=out)
        return out

    def out_strided(g):
        out = garbage(g, 2 * N, odt)[::2]
        uf(x, y, out=out)
        return out

    cases.update({
        "plain": lambda g: uf(x, y),
        "where": where,
        "reversed-a": lambda g: uf(x[::-1], y),
        "reversed-both": lambda g: uf(x[::-1], y[::-1]),
        "out-reversed": out_rev,
        "out-strided": out_strided,
        "zero-stride-a": lambda g: uf(np.broadcast_to(x[7], (N,)), y),
        "zero-stride-b": lambda g: uf(x, np.broadcast_to(y[9], (N,))),
        "strided": lambda g: uf(x[::3], y[1::3]),
        "transposed": lambda g: uf(X2.T, Y2.T),
        "broadcast-2d": lambda g: uf(X2, Y2[3:4]),
    })
    if dt.itemsize == 2:
        def unaligned(g):
            bx = np.zeros(2 * N + 1, np.uint8)
            bx[1:] = x.view(np.uint8)
            by = np.zeros(2 * N + 1, np.uint8)
            by[1:] = y.view(np.uint8)
            ux, uy = bx[1:].view(dt), by[1:].view(dt)
            assert not ux.flags.aligned
            ob = garbage(g, 2 * N + 1, np.uint8)
            out = ob[1:].view(odt) if odt.itemsize == 2 else ob[1:N + 1].view(odt)
            uf(ux, uy, out=out)
            return out
        cases["unaligned"] = unaligned
    return cases


BIN8_FORMATS = [softfp8.e4m3, softfp8.e5m2fnuz,
                softfp8.format(exp_bits=3, man_bits=2, bias=3, name="e3m2_layouts")]
BIN8_OPS = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "fmax",
            "less", "equal"]


@pytest.mark.parametrize("fmt", BIN8_FORMATS, ids=lambda f: f.name)
def test_binary8_layouts(fmt):
    x, y = _operands(fmt, "bin8")
    n = 0
    for name in BIN8_OPS:
        uf = getattr(np, name)
        boolean = name in ("less", "equal")
        for lab, fn in binary_cases(uf, x, y, boolean).items():
            # add.reduce / reduceat sum exactly (superaccumulator); the others use tables
            engaged = not (name == "add" and lab.startswith("reduce"))
            check(fn, f"{fmt.name} {name} {lab}", engaged=engaged, seed=n)
            n += 1
    assert n == 7 * (21 + 11) + 2 * (1 + 11)


@pytest.mark.parametrize("fmt", [softfp8.float16, softfp8.bfloat16, softfp8.hfp16_169, softfp8.shp(bias=15),
                                 softfp8.uhp], ids=lambda f: f.name)
def test_arith16_layouts(fmt):
    """16-bit add/sub/mul/div (round_f64.c, the SIMD kernels of fast_simd.c) under every
    convention, two rounding modes, at every SIMD level (FAST_RUNS).  SHP and UHP have
    only the SIMD kernels (level >= 1); at level 0 they take the core."""
    x, y = _operands(fmt, "a16")
    min_simd = 0 if fmt.subnormals == "ieee" and fmt.signed else 1
    n = 0
    for mode in ("nearest_even", "downward"):
        with softfp8.rounding(mode):
            for name in ("add", "subtract", "multiply", "true_divide"):
                uf = getattr(np, name)
                for lab, fn in binary_cases(uf, x, y, False).items():
                    engaged = not (name == "add" and lab.startswith("reduce"))
                    check(fn, f"{fmt.name} {name} {lab} {mode}", engaged=engaged, seed=n, min_simd=min_simd)
                    n += 1
    assert n == 2 * 4 * (21 + 11 + 1)


ORDER16_FORMATS = [softfp8.float16, softfp8.bfloat16, softfp8.uhp,
                   softfp8.format(exp_bits=5, man_bits=10, bias=15, specials="fnuz", subnormals="flush",
                                  name="f16_fnuz_flush_layouts"),
                   softfp8.format(exp_bits=4, man_bits=7, bias=7, specials="fn", name="e4m7_layouts")]
ORDER16_OPS = ["maximum", "minimum", "fmax", "fmin", "less", "equal", "greater_equal", "not_equal"]


@pytest.mark.parametrize("fmt", ORDER16_FORMATS, ids=lambda f: f.name)
def test_order16_layouts(fmt):
    """16-bit comparisons and maximum / minimum on order keys (fast/order16.c) under
    every convention; operands include NaNs, zeros of both signs and subnormals."""
    x, y = _operands(fmt, "ord16", finite=False)
    # zeros of both signs and NaN next to ordinary values
    x, y = x.copy(), y.copy()
    rx, ry = x.view(fmt.storage), y.view(fmt.storage)
    sign = 1 << (fmt.bits - 1) if fmt.signed else 0
    rx[::7] = 0
    ry[::5] = sign
    ry[3::11] = rx[3::11]   # equal operands
    n = 0
    for name in ORDER16_OPS:
        uf = getattr(np, name)
        boolean = name not in ("maximum", "minimum", "fmax", "fmin")
        for lab, fn in binary_cases(uf, x, y, boolean).items():
            check(fn, f"{fmt.name} {name} {lab}", seed=n)
            n += 1
    assert n == 4 * (21 + 12) + 4 * 12


# --------------------------------------------------------------------------
# unary ufuncs
# --------------------------------------------------------------------------

def unary_cases(uf, x, boolean):
    dt = x.dtype
    odt = np.dtype(np.bool_) if boolean else dt
    X2 = x[:288].reshape(16, 18)

    def where(g):
        mask = np.random.default_rng(seed_of("umask")).random(N) < 0.5
        out = garbage(g, N, odt)
        before = out.copy()
        uf(x, out=out, where=mask)
        assert np.array_equal(raw(out)[~mask], raw(before)[~mask]), "where= wrote a masked element"
        return out[mask]

    def out_rev(g):
        out = garbage(g, N, odt)[::-1]
        uf(x, out=out)
        return out

    cases = {
        "plain": lambda g: uf(x),
        "where": where,
        "reversed": lambda g: uf(x[::-1]),
        "out-reversed": out_rev,
        "zero-stride": lambda g: uf(np.broadcast_to(x[4], (N,))),
        "strided": lambda g: uf(x[1::3]),
        "transposed": lambda g: uf(X2.T),
    }
    if not boolean:
        def inplace(g):
            z = x.copy()
            uf(z, out=z)
            return z

        def shifted(direction):
            def f(g):
                z = x.copy()
                if direction > 0:
                    uf(z[:-1], out=z[1:])
                else:
                    uf(z[1:], out=z[:-1])
                return z
            return f

        def at(g):
            z = x.copy()
            uf.at(z, AT_IDX)
            return z

        cases.update({"inplace": inplace, "shifted+1": shifted(1), "shifted-1": shifted(-1),
                      "at": at})
    if dt.itemsize == 2:
        def unaligned(g):
            b = np.zeros(2 * N + 1, np.uint8)
            b[1:] = x.view(np.uint8)
            ux = b[1:].view(dt)
            assert not ux.flags.aligned
            ob = garbage(g, 2 * N + 1, np.uint8)
            out = ob[1:].view(odt) if odt.itemsize == 2 else ob[1:N + 1].view(odt)
            uf(ux, out=out)
            return out
        cases["unaligned"] = unaligned
    return cases


UNARY_FORMATS = [softfp8.e4m3, softfp8.format(exp_bits=3, man_bits=2, bias=3, name="e3m2_layouts"),
                 softfp8.float16, softfp8.format(exp_bits=5, man_bits=4, bias=15, name="e5m4_layouts")]


@pytest.mark.parametrize("fmt", UNARY_FORMATS, ids=lambda f: f.name)
def test_unary_layouts(fmt):
    x, _ = _operands(fmt, "unary", finite=False)
    n = 0
    for name in ("sqrt", "negative", "absolute", "rint", "isnan", "signbit"):
        uf = getattr(np, name)
        boolean = name in ("isnan", "signbit")
        for lab, fn in unary_cases(uf, x, boolean).items():
            check(fn, f"{fmt.name} {name} {lab}", seed=n)
            n += 1
    extra = 1 if np.dtype(fmt.storage).itemsize == 2 else 0
    assert n == 4 * (7 + 4 + extra) + 2 * (7 + extra)


# --------------------------------------------------------------------------
# casts
# --------------------------------------------------------------------------

def cast_cases(x, dst):
    dt = x.dtype
    dst = np.dtype(dst)

    def copyto(g):
        out = garbage(g, N, dst)
        np.copyto(out, x, casting="unsafe")
        return out

    def copyto_rev(g):
        out = garbage(g, N, dst)[::-1]
        np.copyto(out, x, casting="unsafe")
        return out

    def copyto_where(g):
        mask = np.random.default_rng(seed_of("cmask")).random(N) < 0.5
        out = garbage(g, N, dst)
        before = out.copy()
        np.copyto(out, x, casting="unsafe", where=mask)
        assert np.array_equal(raw(out)[~mask], raw(before)[~mask]), "where= wrote a masked element"
        return out[mask]

    def overlapping(g):
        # source and destination share one byte buffer, shifted by one byte
        size = max(dt.itemsize, dst.itemsize)
        b = np.zeros(N * size + size + 1, np.uint8)
        b[:N * dt.itemsize] = x.view(np.uint8)
        src = b[:N * dt.itemsize].view(dt)
        out = b[1:1 + N * dst.itemsize].view(dst)
        np.copyto(out, src, casting="unsafe")
        return out

    cases = {
        "astype": lambda g: x.astype(dst),
        "reversed": lambda g: x[::-1].astype(dst),
        "zero-stride": lambda g: np.broadcast_to(x[5], (N,)).astype(dst),
        "strided": lambda g: x[::3].astype(dst),
        "copyto": copyto,
        "copyto-reversed": copyto_rev,
        "copyto-where": copyto_where,
        "overlapping-buffer": overlapping,
    }
    if dt.type in (np.float16, np.float32, np.float64):
        def ufunc_out(g):
            # a NumPy ufunc whose out= is the destination: NumPy casts its buffered results
            out = garbage(g, N, dst)
            np.positive(x, out=out, casting="unsafe")
            return out
        cases["ufunc-out"] = ufunc_out
    if dt.itemsize > 1:
        def unaligned(g):
            b = np.zeros(N * dt.itemsize + 1, np.uint8)
            b[1:] = x.view(np.uint8)
            ux = b[1:].view(dt)
            assert not ux.flags.aligned
            return ux.astype(dst)
        cases["unaligned"] = unaligned
    return cases


def _float_values(fmt, dtype, key):
    """binary16/32/64 values around fmt's range (up to twice its largest finite
    value, down to below its subnormals), with specials."""
    g = np.random.default_rng(seed_of("floats", fmt.name, key))
    codes = np.arange(1 << fmt.bits, dtype=np.uint32).astype(fmt.storage).view(fmt.dtype)
    with switches(0, 0), np.errstate(all="ignore"):
        vals = np.abs(codes.astype(np.float64))
    vals = vals[np.isfinite(vals) & (vals > 0)]
    lo, hi = np.log2(vals.min()) - 2, np.log2(vals.max()) + 1
    v = np.sign(g.random(N) - 0.5) * np.exp2(g.uniform(lo, hi, N))
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30])
    v[::17] = np.resize(specials, v[::17].size)
    with np.errstate(all="ignore"):
        return v.astype(dtype)


CAST_SRC = [softfp8.e4m3, softfp8.e5m2, softfp8.format(exp_bits=3, man_bits=2, bias=3,
                                                       name="e3m2_layouts"),
            softfp8.bfloat16, softfp8.float16, softfp8.uhp]


@pytest.mark.parametrize("fmt", CAST_SRC, ids=lambda f: f.name)
def test_cast_layouts(fmt):
    """fmt -> float16/32/64 and other formats; float16/32/64 -> fmt."""
    x, _ = _operands(fmt, "cast", finite=False)
    n = 0
    dsts = [np.float32, np.float64, np.float16, softfp8.e5m2.dtype, softfp8.float16.dtype]
    for dst in dsts:
        if np.dtype(dst) == x.dtype:
            continue
        for lab, fn in cast_cases(x, dst).items():
            check(fn, f"{fmt.name} -> {np.dtype(dst)} {lab}", seed=n)
            n += 1
    for src in (np.float32, np.float64, np.float16):
        v = _float_values(fmt, src, "cast")
        # float32/64 -> formats with <= 4 mantissa bits (key tables); float16 -> any (conv table);
        # float32/64 -> 16-bit formats (fast/cast16.c) use no cached table: not counted
        engaged = src == np.float16 or (fmt.bits <= 8 and fmt.man_bits <= 4)
        for lab, fn in cast_cases(v, fmt.dtype).items():
            check(fn, f"{np.dtype(src)} -> {fmt.name} {lab}", engaged=engaged, seed=n)
            n += 1
    per = 8
    ndst = sum(np.dtype(d) != x.dtype for d in dsts)
    assert n == ndst * (per + (1 if x.dtype.itemsize > 1 else 0)) + 3 * (per + 2)


# --------------------------------------------------------------------------
# fma and stochastic casts
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.e5m2, softfp8.float16, softfp8.bfloat16,
                                 softfp8.hfp16_169], ids=lambda f: f.name)
def test_fma_layouts(fmt):
    """softfp8.fma (fast.c's odd-sum fma; round_f64.c and its SIMD kernels for 16-bit
    formats; stochastic.c's sfp8f_run_fma_sr under stochastic rounding) under the
    conventions a 3-input ufunc has."""
    x, y = _operands(fmt, "fma")
    z = y[::-1].copy()
    fma = softfp8.fma

    def where(g):
        mask = np.random.default_rng(seed_of("fmask")).random(N) < 0.5
        out = garbage(g, N, x.dtype)
        before = out.copy()
        fma(x, y, z, out=out, where=mask)
        assert np.array_equal(raw(out)[~mask], raw(before)[~mask])
        return out[mask]

    def inplace(k):
        def f(g):
            ops = [x.copy(), y.copy(), z.copy()]
            fma(*ops, out=ops[k])
            return ops[k]
        return f

    def shifted(g):
        w = x.copy()
        fma(w[:-1], y[:-1], w[:-1], out=w[1:])
        return w

    def out_rev(g):
        out = garbage(g, N, x.dtype)[::-1]
        fma(x, y, z, out=out)
        return out

    cases = {
        "plain": lambda g: fma(x, y, z),
        "where": where,
        "inplace-a": inplace(0), "inplace-b": inplace(1), "inplace-c": inplace(2),
        "shifted": shifted,
        "reversed": lambda g: fma(x[::-1], y, z[::-1]),
        "out-reversed": out_rev,
        "zero-stride": lambda g: fma(np.broadcast_to(x[3], (N,)), y, np.broadcast_to(z[8], (N,))),
        "strided": lambda g: fma(x[::3], y[1::3], z[2::3]),
        "transposed": lambda g: fma(x[:288].reshape(16, 18).T, y[:288].reshape(16, 18).T,
                                    z[:288].reshape(16, 18).T),
    }
    n = 0
    for mode in ("nearest_even", "upward"):
        with softfp8.rounding(mode):
            for lab, fn in cases.items():
                check(fn, f"{fmt.name} fma {lab} {mode}", seed=n)
                n += 1
    # stochastic (stochastic.c, sfp8f_run_fma_sr): a fresh seeded context per call
    for lab, fn in cases.items():
        def seeded(g, fn=fn):
            with softfp8.rounding("stochastic", seed=7, sr_bits=5 if fmt.bits <= 8 else 20):
                return fn(g)
        check(seeded, f"{fmt.name} fma {lab} stochastic", seed=n)
        n += 1
    assert n == 3 * 11


SR16_LAYOUT_FORMATS = [softfp8.bfloat16, softfp8.float16, softfp8.uhp,
                       softfp8.format(exp_bits=7, man_bits=8, bias=63, specials="fn", saturate=True,
                                      name="e7m8fn_layouts")]


@pytest.mark.parametrize("fmt", [softfp8.e4m3] + SR16_LAYOUT_FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_stochastic_layouts(src, fmt):
    """Stochastic float -> e4m3 (stochastic.c, fast_simd.c sr_arith16) and 16-bit formats
    (cast16.c) casts: same seed, same codes and flags, also under where=, a destination
    overlapping the source and a ufunc's out= (NumPy buffers these the same way for the
    core and the fast paths)."""
    n = check_stochastic_casts(_float_values(fmt, src, "sr"), fmt, engaged=fmt.bits == 8, buffered=True)
    assert n == 10


def check_stochastic_casts(x, fmt, engaged=True, buffered=False):
    """x.astype(fmt) under a seeded stochastic rounding through every calling
    convention of cast_cases against the core; returns the number of cases.  Without
    buffered, not the conventions whose element indices of the random stream depend
    on NumPy's buffering (where=, overlapping destination, ufunc out=)."""
    n = 0
    for lab, fn in cast_cases(x, fmt.dtype).items():
        if not buffered and lab in ("copyto-where", "overlapping-buffer", "ufunc-out"):
            continue

        def seeded(g, fn=fn):
            with softfp8.rounding("stochastic", seed=11, sr_bits=7):
                return fn(g)
        check(seeded, f"{x.dtype} -> {fmt.name} stochastic {lab}", seed=n, engaged=engaged)
        n += 1
    return n


def _sr16_calls(fmt, x, seed, nbits):
    """(label, fn() -> (codes, per-element flags)) of calls that must all equal the one
    flat softfp8.bits.from_float(x, seed=seed) of the contiguous 1-D x: the random word of
    flat element i is random_u32(seed, 0, i) whatever the layout or the splitting."""
    n = x.size
    sp, _, _, _ = sfb._endpoint(x.dtype.type, "src")
    dp, dstor, _, _ = sfb._endpoint(fmt, "dst")
    env = sfb._env(fmt, "stochastic", False, "after", nbits)
    opts = {"rounding": "stochastic", "saturate": False, "tininess": "after", "seed": seed,
            "sr_bits": nbits}

    def pieces(cuts):
        # the driver called on consecutive pieces, each with its first element's index
        out, fl = np.empty(n, dstor), np.zeros(n, np.uint8)
        for a, b in zip(cuts[:-1], cuts[1:]):
            _ext.convert(sp, dp, env, (1, seed, 0, int(a)), None, x[a:b].view(f"u{x.itemsize}"),
                         out[a:b], fl[a:b])
        return out, fl

    def bits_of(view, back):
        c, f = sfb.from_float(view, fmt, **opts)
        return back(c).reshape(-1), back(f).reshape(-1)

    rows = 50 if n % 50 == 0 else 1
    xr = x[::-1].copy()
    xf = np.asfortranarray(x.reshape(rows, -1))
    return {
        "one call": lambda: bits_of(x, lambda a: a),
        "pieces 1/15/17/255/256/1000": lambda: pieces([0, 1, 16, 33, 288, 544, 1544, n]),
        "pieces of 16": lambda: pieces(list(range(0, n, 16)) + [n]),
        "pieces at odd offsets": lambda: pieces([0, 7, 300, 301, 2003, n - 5, n]),
        # a reversed view: its flat element i is x[::-1][i], fed from a reversed copy
        "reversed view": lambda: bits_of(xr[::-1], lambda a: a),
        # a Fortran-ordered 2-D array: flat C order index, whatever the memory order
        "fortran 2-D": lambda: bits_of(xf, lambda a: a),
        # a strided view of a wider buffer
        "strided view": lambda: bits_of(np.repeat(x, 3)[::3], lambda a: a),
    }


@pytest.mark.parametrize("fmt", SR16_LAYOUT_FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_stochastic16_index_offsets(src, fmt):
    """The random bits are keyed on the global element index: split calls (the driver
    given each piece's first index, pieces not multiples of the SIMD blocks), reversed,
    strided and Fortran-ordered inputs give the codes and per-element flags of one flat
    call, at every SIMD level and with the fast paths off."""
    g = np.random.default_rng(seed_of("sr16-offsets", fmt.name, np.dtype(src).name))
    v = np.concatenate([_float_values(fmt, src, "sr-offsets")] * 10)  # 3000
    x = np.ascontiguousarray(g.permutation(v))
    assert x.size == 3000
    n = 0
    for seed, nbits in ((5, 32), (2**64 - 3, 3)):
        with switches(0, SIMD_LEVELS[-1]):
            want = _sr16_calls(fmt, x, seed, nbits)["one call"]()
        for level, simd in [(0, SIMD_LEVELS[-1])] + FAST_RUNS:
            with switches(level, simd), np.errstate(all="ignore"):
                for lab, fn in _sr16_calls(fmt, x, seed, nbits).items():
                    got = fn()
                    for part, a, b in zip(("codes", "flags"), got, want):
                        assert np.array_equal(a, b), (f"{np.dtype(src)} -> {fmt.name} seed={seed} "
                                                      f"sr_bits={nbits} fast={level} simd={simd} "
                                                      f"{lab}: {part} differ at "
                                                      f"{np.nonzero(a != b)[0][:5]}")
                    n += 1
    assert n == 2 * (1 + len(FAST_RUNS)) * 7


def test_stochastic16_dask_chunkings():
    """softfp8.dask.astype into bfloat16 / float16 under several chunkings and both
    schedulers: the one-call softfp8.bits.from_float codes, at every SIMD level."""
    da = pytest.importorskip("dask.array")
    sd = pytest.importorskip("softfp8.dask")
    n = 0
    for fmt in (softfp8.bfloat16, softfp8.float16):
        x = _float_values(fmt, np.float32, "sr-dask").reshape(20, 15)
        want, _ = sfb.from_float(x, fmt, rounding="stochastic", seed=21)
        for simd in SIMD_LEVELS:
            with switches(2, simd), np.errstate(all="ignore"):
                for ch, sched in (((20, 15), "sync"), ((7, 15), "threads"), ((20, 4), "sync"),
                                  ((3, 7), "threads")):
                    got = sd.astype(da.from_array(x, chunks=ch), fmt, rounding="stochastic",
                                    seed=21).compute(scheduler=sched)
                    assert np.array_equal(raw(got), raw(want)), f"{fmt.name} chunks={ch} {sched} simd={simd}"
                    n += 1
    assert n == 2 * len(SIMD_LEVELS) * 4


# --------------------------------------------------------------------------
# out-of-width codes
# --------------------------------------------------------------------------

def _narrow_formats():
    out = []
    for bits in [w for w in range(2, 16) if w != 8]:  # 8 bits fill their storage
        signed_splits = sorted({(1, bits - 2), (min(bits - 2, 2), bits - 1 - min(bits - 2, 2)),
                                (min(bits - 2, 5), bits - 1 - min(bits - 2, 5))})
        for e, m in signed_splits:
            if e < 1 or m < 0:
                continue
            for sp in ("ieee", "fn", "fnuz", "none"):
                bias = max(1, (1 << (e - 1)) - 1)
                try:
                    f = softfp8.format(exp_bits=e, man_bits=m, bias=bias, specials=sp)
                except ValueError:
                    continue
                assert f.bits == bits
                out.append(f)
        # and one unsigned format per width, where one exists
        for sp in ("ieee", "fn", "none", "fnuz"):
            e = min(bits - 1, 4)
            try:
                out.append(softfp8.format(exp_bits=e, man_bits=bits - e, bias=3, signed=False,
                                          specials=sp))
                break
            except ValueError:
                continue
    return out


NARROW = _narrow_formats()


def test_narrow_format_space():
    widths = {f.bits for f in NARROW}
    assert widths == set(range(2, 16)) - {8}
    assert {f.specials for f in NARROW} == {"ieee", "fn", "fnuz", "none"}
    assert any(not f.signed for f in NARROW)
    assert len(NARROW) >= 60, len(NARROW)


def _narrow_groups():
    return [NARROW[i::4] for i in range(4)]


@pytest.mark.parametrize("group", range(4))
def test_out_of_width_codes(group):
    """Random storage bytes (bits above the width set) through every fast kernel:
    fast == core bit for bit (the core masks the codes), results within the width,
    flags within the six defined bits, and no crash."""
    fmts = _narrow_groups()[group]
    n = 0
    for fmt in fmts:
        g = np.random.default_rng(seed_of("oow", fmt.name))
        isz = np.dtype(fmt.storage).itemsize
        buf = g.bytes(512 * isz)
        x = np.frombuffer(buf, dtype=fmt.dtype)            # read-only view of raw bytes
        y = np.frombuffer(g.bytes(512 * isz), dtype=np.uint8).view(fmt.dtype)
        assert (raw(x) >> fmt.bits).any(), "no out-of-width code drawn"
        calls = {
            "->f32": lambda gg: x.astype(np.float32),
            "->f64": lambda gg: x.astype(np.float64),
            "->f16": lambda gg: x.astype(np.float16),
            "->e5m2": lambda gg: x.astype(softfp8.e5m2.dtype),
            "sqrt": lambda gg: np.sqrt(x),
            "negative": lambda gg: np.negative(x),
            "isnan": lambda gg: np.isnan(x),
            "add": lambda gg: np.add(x, y),
            "multiply": lambda gg: np.multiply(x, y),
            "less": lambda gg: np.less(x, y),
            "equal": lambda gg: np.equal(x, y),
            "maximum": lambda gg: np.maximum(x, y),
            "add.accumulate": lambda gg: np.add.accumulate(y),
        }
        if isz == 1:
            calls["fma"] = lambda gg: softfp8.fma(x, y, x)
        for lab, fn in calls.items():
            # binary ops of 9..15-bit formats: tables only for IEEE-like add/mul (arith16)
            # and fma only for formats whose binary64 results the key table covers
            engaged = lab != "fma" and (isz == 1 or lab not in (
                "less", "equal", "maximum", "add", "multiply", "add.accumulate"))
            parts, fl = check(fn, f"{fmt.name} {lab}", engaged=engaged, seed=n)
            assert fl & ~FLAG_BITS == 0, f"{fmt.name} {lab}: flags 0x{fl:x}"
            dt, _, codes = parts[0]
            if dt == fmt.dtype:
                # (accumulate's first element is NumPy's copy of the input, not a result)
                res = codes[1:] if lab == "add.accumulate" else codes
                assert not (res >> fmt.bits).any(), f"{fmt.name} {lab}: result wider than the format"
            n += 1
    assert n == sum(13 + (np.dtype(f.storage).itemsize == 1) for f in fmts)


# --------------------------------------------------------------------------
# the table cache
# --------------------------------------------------------------------------

def test_cache_stats_fields():
    st = _ext.fast_cache_stats()
    assert set(st) == {"tables", "bytes", "cap", "hits", "misses", "builds", "refused_over_cap",
                       "evicted", "freed"}
    assert all(isinstance(v, int) and v >= 0 for v in st.values())
    assert st["builds"] == st["tables"] + st["evicted"]  # every table built is cached or was evicted
    assert st["freed"] <= st["evicted"]
    with pytest.raises(TypeError):
        _ext.set_fast_cache_cap(1.5)
    with pytest.raises(ValueError):
        _ext.set_fast_cache_cap(-1)


def test_cache_budget_zero_refuses_visibly():
    """With a budget of 0 every cached table is evicted and no new one is kept:
    each refusal is counted, and the calls are still exact."""
    fmt = softfp8.format(exp_bits=3, man_bits=4, bias=6, specials="none", name="e3m4b6_cap")
    c = np.arange(256, dtype=np.uint8).view(fmt.dtype)
    prev = _ext.set_fast_cache_cap(0)
    try:
        st = _ext.fast_cache_stats()
        assert st["tables"] == 0 and st["bytes"] == 0 and st["cap"] == 0
        with switches(2, SIMD_LEVELS[0]), np.errstate(all="ignore"), softfp8.rounding("to_odd"):
            got = raw(np.sqrt(c))
        st2 = _ext.fast_cache_stats()
        assert st2["refused_over_cap"] > st["refused_over_cap"]
        assert st2["tables"] == 0 and st2["bytes"] == 0
    finally:
        assert _ext.set_fast_cache_cap(prev) == 0
    with switches(0, 0), np.errstate(all="ignore"), softfp8.rounding("to_odd"):
        want = raw(np.sqrt(c))
    assert np.array_equal(got, want)
    # with a budget again: the table is built, then found
    with switches(2, SIMD_LEVELS[0]), np.errstate(all="ignore"), softfp8.rounding("to_odd"):
        b0 = _ext.fast_cache_stats()
        np.sqrt(c)
        b1 = _ext.fast_cache_stats()
        np.sqrt(c)
        b2 = _ext.fast_cache_stats()
    assert b1["builds"] == b0["builds"] + 1 and b1["tables"] == b0["tables"] + 1
    assert b2["hits"] > b1["hits"] and b2["builds"] == b1["builds"]


@pytest.fixture(autouse=True)
def _uncapped():
    """Whatever earlier tests in this process cached, this module's tables get built."""
    prev = _ext.set_fast_cache_cap(1 << 40)
    yield
    _ext.set_fast_cache_cap(prev)


def test_cache_growth_many_tables():
    """Over 1,500 distinct tables (the hash table grows twice): every one is found
    again afterwards (hits, no new builds), and the results are the core's."""
    fmts = [softfp8.format(exp_bits=e, man_bits=m, bias=b, name=f"grow_{e}{m}{b}")
            for e, m in ((2, 1), (3, 1), (2, 2), (3, 2)) for b in range(20, 80)]
    modes = ("nearest_even", "upward", "downward", "toward_zero", "nearest_away", "to_odd")
    calls = []
    for f in fmts:
        c = np.arange(1 << f.bits, dtype=np.uint8).view(f.dtype)
        for m in modes:
            calls.append((c, m))
    assert len(calls) == 240 * 6
    with switches(2, 0), np.errstate(all="ignore"), softfp8.saturation(True):
        s0 = _ext.fast_cache_stats()
        first = []
        for c, m in calls:
            with softfp8.rounding(m):
                first.append(raw(np.sqrt(c)))
        s1 = _ext.fast_cache_stats()
        again = []
        for c, m in calls:
            with softfp8.rounding(m):
                again.append(raw(np.sqrt(c)))
        s2 = _ext.fast_cache_stats()
    assert s1["tables"] - s0["tables"] == len(calls), (s0, s1)
    assert s2["builds"] == s1["builds"] and s2["hits"] - s1["hits"] == len(calls)
    with switches(0, 0), np.errstate(all="ignore"), softfp8.saturation(True):
        for k, (c, m) in enumerate(calls[::37]):
            with softfp8.rounding(m):
                assert np.array_equal(raw(np.sqrt(c)), first[k * 37])
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


# --------------------------------------------------------------------------
# the families called directly (_ext.fast_kernel): any overlap, per-element flags
# --------------------------------------------------------------------------

import softfp8.bits as sfb  # noqa: E402

DIRECT_N = 150  # blocks of 16 and 64 elements and a tail
MODE_INDEX = {m: i for i, m in enumerate(sfb.ROUNDING_MODES)}


def _envp(mode, sat, tin):
    return (MODE_INDEX[mode], int(sat), int(tin == "before"), 32)


class CoreElement:
    """The core's result (int) and flags of one element, by kind (fast paths off)."""

    def __init__(self, kind, fmt, cfg, op=None, dst=None, isize=1, osize=1):
        self.kind, self.fmt, self.op, self.dst, self.isize = kind, fmt, op, dst, isize
        self.opts = dict(rounding=cfg[0], saturate=cfg[1], tininess=cfg[2])
        self.memo = {}
        self.mask = (1 << fmt.bits) - 1
        codes = np.arange(1 << fmt.bits, dtype=np.uint32).astype(fmt.storage)
        with switches(0, 0):
            if kind == "binary8":
                pa, pb = np.repeat(codes, codes.size), np.tile(codes, codes.size)
                if op == "cmp_quiet":
                    r, f = sfb.compare(fmt, pa, pb)
                    r = r.astype(np.int64) & 0xFF
                else:
                    r, f = {"add": sfb.add, "mul": sfb.mul, "max": sfb.max}[op](fmt, pa, pb, **(
                        self.opts if op != "max" else {}))
                self.table = (np.asarray(r, np.int64).reshape(codes.size, codes.size),
                              np.asarray(f, np.int64).reshape(codes.size, codes.size))
            elif kind == "unary":
                if op == "sqrt":
                    r, f = sfb.sqrt(fmt, codes, **self.opts)
                else:
                    r, f = sfb.neg(fmt, codes), np.zeros(codes.size, np.int64)
                self.table = (np.asarray(r, np.int64), np.asarray(f, np.int64))
            elif kind == "convert":
                r, f = sfb.convert(codes, fmt, dst, **self.opts)
                r = np.asarray(r)
                self.table = (r.view(np.dtype(f"u{r.dtype.itemsize}")).astype(np.uint64),
                              np.asarray(f, np.int64))

    def __call__(self, args):
        key = tuple(args)
        if key in self.memo:
            return self.memo[key]
        m = self.mask
        if self.kind == "binary8":
            r = (int(self.table[0][args[0] & m, args[1] & m]), int(self.table[1][args[0] & m, args[1] & m]))
        elif self.kind in ("unary", "convert"):
            r = (int(self.table[0][args[0] & m]), int(self.table[1][args[0] & m]))
        else:
            with switches(0, 0):
                if self.kind == "from_float":
                    ft = np.float32 if self.isize == 4 else np.float64
                    x = np.array([args[0]], dtype=f"u{self.isize}").view(ft)
                    c, f = sfb.from_float(x, self.fmt, **self.opts)
                elif self.kind == "fma":
                    c, f = sfb.fma(self.fmt, args[0] & m, args[1] & m, args[2] & m, **self.opts)
                else:
                    fn = {"add": sfb.add, "sub": sfb.sub, "mul": sfb.mul, "div": sfb.div}[self.op]
                    c, f = fn(self.fmt, args[0] & m, args[1] & m, **self.opts)
            r = (int(np.asarray(c).reshape(-1)[0]), int(np.asarray(f).reshape(-1)[0]))
        self.memo[key] = r
        return r


def simulate(buf, n, out, ins, isize, osize, elem):
    """In-order semantics: element i's inputs are read, then output i is written."""
    b = bytearray(buf.tobytes())
    flags = []
    for i in range(n):
        args = [int.from_bytes(b[o + i * s:o + i * s + isize], "little") for o, s in ins]
        r, f = elem(args)
        p = out[0] + i * out[1]
        b[p:p + osize] = (r & ((1 << (8 * osize)) - 1)).to_bytes(osize, "little")
        flags.append(f)
    return np.frombuffer(bytes(b), np.uint8), np.array(flags, np.uint8)


def _layouts(nin, isize, osize, n):
    """(label, out, inputs) of (offset, stride) pairs, many overlapping."""
    si, so = isize, osize
    far = 4 * n * max(isize, osize) + 64   # a region no other operand touches
    far2 = 2 * far
    rest = [(far + 3, si), (far2 + 5, si)][:nin - 1]
    top = n * max(isize, osize) + 8  # start of reversed operands
    L = [("disjoint", (far2 * 2, so), [(0, si)] + rest),
         ("accumulate (o = a + 1 element)", (si, so), [(0, si)] + rest),
         ("o = a - 1 element", (0, so), [(si, si)] + rest),
         ("o = a + 2 elements", (2 * si, so), [(0, si)] + rest),
         ("o = a + 1 byte", (1, so), [(0, si)] + rest),
         ("o ahead, inside a", (n * si // 2, so), [(0, si)] + rest),
         ("reversed, o = a + 1 element", (top + si, -so), [(top, -si)] + rest),
         ("reversed, o = a - 1 element", (top - si, -so), [(top, -si)] + rest),
         ("o reversed over a", (n * max(si, so) - so, -so), [(0, si)] + rest),
         ("reduce-like (zero strides, o == a)", (0, 0), [(0, 0)] + rest),
         ("zero-stride input", (far2 * 2, so), [(7, 0)] + rest),
         ("o strided over a", (0, 2 * so), [(0, si)] + rest)]
    if isize == osize:
        L.append(("in place (o == a)", (0, so), [(0, si)] + rest))
        if nin > 1:
            L.append(("in place (o == last input)", rest[-1], [(0, si)] + rest))
            L.append(("all operands one array", (0, so), [(0, si)] * nin))
    size = far2 * 2 + 2 * n * max(isize, osize) + 64
    return L, size


def _direct(kind, fmt, cfg, elem, nin, isize, osize, op="add", dst=None, fill=None):
    n = DIRECT_N
    layouts, size = _layouts(nin, isize, osize, n)
    g = np.random.default_rng(seed_of("direct", kind, fmt.name, op, isize, osize))
    count = 0
    # the hook runs one family by name (_ext.fast_families()); from_float is the
    # conversion binary32 / binary64 -> fmt
    family = {"from_float": "from_float8", "fma": "fma8"}.get(kind, kind)
    params, fop = fmt.params, "fma" if kind == "fma" else op
    if kind == "from_float":
        params, dst = (_ext.BINARY32 if isize == 4 else _ext.BINARY64), fmt.params
    for lab, out, ins in layouts:
        buf0 = np.frombuffer(g.bytes(size), np.uint8).copy()
        if fill is not None:
            fill(buf0, ins, n, g)
        want, wfl = simulate(buf0, n, out, ins, isize, osize, elem)
        for simd in SIMD_LEVELS:
            for want_flags in (False, True):
                buf = buf0.copy()
                extra = {"b": ins[1]} if nin > 1 else {}
                if nin > 2:
                    extra["c"] = ins[2]
                with switches(2, simd):
                    r = _ext.fast_kernel(family, params, _envp(*cfg), buf, n, out, ins[0], op=fop,
                                         dst=dst, isize=isize, osize=osize, want_flags=want_flags,
                                         **extra)
                what = f"{kind} {fmt.name} {op} {lab} simd={simd} flags={want_flags}"
                assert r is not None, f"{what}: no table"
                acc, fl = r
                if not np.array_equal(buf, want):
                    bad = np.nonzero(buf != want)[0]
                    raise AssertionError(f"{what}: {bad.size} bytes differ, first at {bad[0]}: "
                                         f"kernel 0x{buf[bad[0]]:02x}, in order 0x{want[bad[0]]:02x}")
                assert acc == int(np.bitwise_or.reduce(wfl, initial=0)), what
                if want_flags:
                    assert np.array_equal(fl, wfl), f"{what}: per-element flags"
                count += 1
    return count, len(layouts)


def _fill_floats(buf, ins, n, g, isize, fmt):
    """float inputs in the format's range at the first input's elements."""
    v = _float_values(fmt, np.float32 if isize == 4 else np.float64, "direct")
    off, st = ins[0]
    for i in range(n):
        p = off + i * st
        buf[p:p + isize] = np.frombuffer(v[i % v.size].tobytes(), np.uint8)


CFG_A = ("nearest_even", False, "after")
CFG_B = ("upward", True, "before")


@pytest.mark.parametrize("op", ["add", "mul", "max", "cmp_quiet"])
def test_direct_binary8(op):
    n = 0
    for fmt in (softfp8.e4m3, softfp8.format(exp_bits=3, man_bits=2, bias=3, name="e3m2_layouts")):
        for cfg in (CFG_A, CFG_B):
            elem = CoreElement("binary8", fmt, cfg, op=op)
            c, nl = _direct("binary8", fmt, cfg, elem, 2, 1, 1, op=op)
            assert c == nl * len(SIMD_LEVELS) * 2
            n += c
    assert n == 2 * 2 * 15 * len(SIMD_LEVELS) * 2


@pytest.mark.parametrize("op", ["sqrt", "neg"])
def test_direct_unary(op):
    n = 0
    for fmt, size in ((softfp8.e5m2, 1), (softfp8.format(exp_bits=3, man_bits=2, bias=3,
                                                         name="e3m2_layouts"), 1),
                      (softfp8.bfloat16, 2),
                      (softfp8.format(exp_bits=5, man_bits=4, bias=15, name="e5m4_layouts"), 2)):
        elem = CoreElement("unary", fmt, CFG_B, op=op)
        c, nl = _direct("unary", fmt, CFG_B, elem, 1, size, size, op=op)
        n += c
    assert n == 4 * 13 * len(SIMD_LEVELS) * 2


@pytest.mark.parametrize("src,dst,osize", [
    (softfp8.e4m3, softfp8.e5m2, 1), (softfp8.e4m3, softfp8.float16, 2),
    (softfp8.e5m2fnuz, None, 4), (softfp8.e4m3, None, 8),
    (softfp8.format(exp_bits=3, man_bits=2, bias=3, name="e3m2_layouts"), None, 4),
    (softfp8.bfloat16, softfp8.e4m3, 1), (softfp8.float16, None, 4)])
def test_direct_convert(src, dst, osize):
    if dst is None:
        dfmt_params = _ext.BINARY32 if osize == 4 else _ext.BINARY64
        dst_arg = np.float32 if osize == 4 else np.float64
    else:
        dfmt_params, dst_arg = dst.params, dst
    isize = np.dtype(src.storage).itemsize
    elem = CoreElement("convert", src, CFG_B, dst=dst_arg)
    c, nl = _direct("convert", src, CFG_B, elem, 1, isize, osize, dst=dfmt_params)
    assert c == nl * len(SIMD_LEVELS) * 2 and nl == 12 + (isize == osize)


@pytest.mark.parametrize("isize", [4, 8])
def test_direct_from_float(isize):
    fmt = softfp8.e4m3
    elem = CoreElement("from_float", fmt, CFG_A, isize=isize)
    c, nl = _direct("from_float", fmt, CFG_A, elem, 1, isize, 1,
                    fill=lambda buf, ins, n, g: _fill_floats(buf, ins, n, g, isize, fmt))
    assert c == nl * len(SIMD_LEVELS) * 2 and nl == 12


def test_direct_fma():
    n = 0
    for cfg in (CFG_A, CFG_B):
        elem = CoreElement("fma", softfp8.e4m3, cfg)
        c, nl = _direct("fma", softfp8.e4m3, cfg, elem, 3, 1, 1)
        n += c
    assert n == 2 * 15 * len(SIMD_LEVELS) * 2


def _fill_mid16(buf, ins, n, g, fmt):
    """Codes of values in [2^-4, 2^5) at the inputs' elements (19 in 20; the rest
    random), with random bits above the format's width: whole SIMD blocks of
    covered lanes, so the kernels (not only the portable loop) meet every layout."""
    M, bias, emaxf = fmt.man_bits, fmt.bias, (1 << fmt.exp_bits) - 1
    for off, st in ins:
        for i in range(n):
            if g.random() < 0.95:
                e = int(np.clip(bias + g.integers(-4, 5), 1, emaxf - 1))
                c = (e << M) | int(g.integers(0, 1 << M)) | (int(g.integers(0, 2)) << (fmt.bits - 1))
                c |= int(g.integers(0, 1 << 16)) & ~((1 << fmt.bits) - 1) & 0xffff
            else:
                c = int(g.integers(0, 1 << 16))
            p = off + i * st
            buf[p:p + 2] = np.frombuffer(c.to_bytes(2, "little"), np.uint8)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_direct_arith16(op):
    """Random storage, and mostly mid-range codes (with bits above the width of the
    12-bit e5m6) that the SIMD kernels take, under every layout."""
    n = 0
    fmts = (softfp8.float16, softfp8.bfloat16, softfp8.hfp16_169,
            softfp8.format(exp_bits=5, man_bits=6, bias=15, name="e5m6_layouts"))
    for fmt in fmts:
        elem = CoreElement("arith16", fmt, CFG_B, op=op)
        c, nl = _direct("arith16", fmt, CFG_B, elem, 2, 2, 2, op=op)
        n += c
        c, nl = _direct("arith16", fmt, CFG_B, elem, 2, 2, 2, op=op,
                        fill=lambda buf, ins, n, g, f=fmt: _fill_mid16(buf, ins, n, g, f))
        n += c
    assert n == 2 * len(fmts) * 15 * len(SIMD_LEVELS) * 2


def test_fast_kernel_rejects_bad_layouts():
    buf = np.zeros(64, np.uint8)
    p = softfp8.e4m3.params
    env = _envp(*CFG_A)
    with pytest.raises(ValueError, match="leaves"):
        _ext.fast_kernel("binary8", p, env, buf, 40, (30, 1), (0, 1), b=(0, 1))
    with pytest.raises(ValueError, match="leaves"):
        _ext.fast_kernel("binary8", p, env, buf, 10, (0, 1), (5, -1), b=(0, 1))
    with pytest.raises(ValueError, match="family"):
        _ext.fast_kernel("nope", p, env, buf, 1, (0, 1), (0, 1))
    with pytest.raises(ValueError, match="sizes"):
        _ext.fast_kernel("unary", p, env, buf, 1, (0, 1), (0, 1), op="sqrt", isize=4)
    with pytest.raises(ValueError, match="input"):
        _ext.fast_kernel("binary8", p, env, buf, 1, (0, 1), (0, 1))


def test_cache_concurrent_build_and_lookup():
    """Four threads build and look up overlapping sets of tables at once (lock-free
    readers, one writer at a time, the slot array growing underneath): every result
    equals the core's, each table is built exactly once, every lookup is counted."""
    import threading

    fmts = [softfp8.format(exp_bits=e, man_bits=m, bias=b, specials="fnuz", name=f"thr_{e}{m}{b}")
            for e, m in ((2, 2), (3, 2), (2, 3)) for b in range(30, 130)]
    c = {f.name: np.arange(1 << f.bits, dtype=np.uint8).view(f.dtype) for f in fmts}
    with switches(0, 0), np.errstate(all="ignore"), softfp8.rounding("downward"):
        want = {f.name: raw(np.sqrt(c[f.name])) for f in fmts}
    errors = []

    def work(k):
        try:
            for f in fmts[k::2] + fmts:  # the threads overlap on every format
                with np.errstate(all="ignore"), softfp8.rounding("downward"):
                    got = raw(np.sqrt(c[f.name]))
                if not np.array_equal(got, want[f.name]):
                    errors.append(f"{f.name}: fast != core")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    prev = _ext.set_fast(2)
    try:
        st0 = _ext.fast_cache_stats()
        ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        st1 = _ext.fast_cache_stats()
    finally:
        _ext.set_fast(prev)
    assert not errors, errors[:3]
    assert st1["builds"] - st0["builds"] == len(fmts), (st0, st1)  # one table per format
    lookups = (st1["hits"] + st1["misses"]) - (st0["hits"] + st0["misses"])
    assert lookups == sum(len(fmts[k::2]) + len(fmts) for k in range(4)), (st0, st1)


@pytest.mark.parametrize("fmt", BIN8_FORMATS + [softfp8.float16, softfp8.bfloat16, softfp8.hfp16_169,
                                                softfp8.shp(bias=15), softfp8.uhp], ids=lambda f: f.name)
def test_stochastic_arith_layouts(fmt):
    """add / subtract / multiply / divide of 8- and 16-bit formats under stochastic
    rounding (stochastic.c, sfp8f_run_arith_sr): same seed, same codes and
    flags as the core under every calling convention (blocks only where the output is
    apart from the inputs)."""
    x, y = _operands(fmt, "bin8")
    nbits = 5 if fmt.bits <= 8 else 20
    names = ("add", "subtract", "multiply", "true_divide")
    n = 0
    for name in names:
        uf = getattr(np, name)
        for lab, fn in binary_cases(uf, x, y, False).items():
            def seeded(g, fn=fn):
                with softfp8.rounding("stochastic", seed=7, sr_bits=nbits):
                    return fn(g)
            engaged = not (name == "add" and lab.startswith("reduce"))
            check(seeded, f"{fmt.name} {name} {lab} stochastic", engaged=engaged, seed=n)
            n += 1
    assert n == len(names) * (21 + 11 + (fmt.bits > 8))  # binary_cases adds unaligned operands for two-byte codes


@pytest.mark.parametrize("fmt", [softfp8.float16, softfp8.bfloat16, softfp8.hfp16_169, softfp8.shp(bias=15),
                                 softfp8.uhp, softfp8.format(exp_bits=3, man_bits=12, bias=3, name="e3m12_layouts")],
                         ids=lambda f: f.name)
def test_stochastic_sqrt16_layouts(fmt):
    """sqrt of 16-bit formats under stochastic rounding (stochastic.c, run_arith16_sr;
    fast_simd.c, sr16q_run): same seed, same codes and flags as the core under every
    calling convention (uniform codes: negative, subnormal, NaN operands in the blocks)."""
    x, _ = _operands(fmt, "sqrt-sr", finite=False)
    n = 0
    for nbits in (32, 20):
        for lab, fn in unary_cases(np.sqrt, x, False).items():
            def seeded(g, fn=fn):
                with softfp8.rounding("stochastic", seed=7, sr_bits=nbits):
                    return fn(g)
            check(seeded, f"{fmt.name} sqrt {lab} stochastic sr_bits={nbits}", seed=n)
            n += 1
    assert n == 2 * (7 + 4 + 1)  # unary_cases adds unaligned operands for two-byte codes

