"""Differential search over the matrix engine's parameter space: every fast path against
the engine's generic kernel (what ``_ext.set_fast(0)`` runs), codes and flags.

A case is drawn from one seed (reproducible): an entry (``a @ b``, ``np.vecdot`` /
``np.matvec`` / ``np.vecmat``, ``softfp8.matmul(out_dtype=)`` of one format or two,
``accumulation=`` models, ``scaled_mm`` with per-tensor / row / column / K-blocked scales
of any value, ``mx.matmul``), formats (presets and custom formats of 2..16 bits, every
special-value scheme and subnormal convention, biases up to the +-2^20 limits, signed and
unsigned, saturating), storage codes with bits above the width, NaN / infinity / zero /
subnormal / huge operands, shapes (empty, 1 x K, K = 1, odd, across the kernels' block
sizes: 8, 16, 256 columns, 2048 outputs, 65,536 multiply-adds), layouts (transposed,
reversed, strided), the context (every rounding mode, stochastic with a seed for the NumPy
loops, saturation, tininess).  The reference runs with fast paths off; the candidate with
them on (1, or 2: eager) at a drawn SIMD level and BLAS routine.

    python -m tests.numpy_glue.mm_diffsearch --cases 2000 --seed 1     # prints disagreements
    python -m tests.numpy_glue.mm_diffsearch --case 1:137 -v            # one case, described

tests/numpy_glue/test_mm_engine.py runs a fixed slice of it.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time

import numpy as np

import softfp8
from softfp8 import _ext

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")
SPECIALS = ("ieee", "fn", "fnuz", "none", "p3109")
SUBNORMALS = ("ieee", "tesla", "flush", "nozero")
PRESETS = list(softfp8.presets().values())
BOUNDARY = (0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, 255, 256, 257)


def random_format(rng, max_bits=16):
    """A preset (half the time) or a valid custom format of 2..max_bits bits."""
    if rng.random() < 0.5:
        for _ in range(20):
            f = PRESETS[rng.integers(len(PRESETS))]
            if f.bits <= max_bits:
                return f
    while True:
        signed = bool(rng.random() < 0.85)
        bits = int(rng.integers(2, max_bits + 1))
        e = int(rng.integers(1, bits - signed + 1))
        m = bits - signed - e
        r = rng.random()
        if r < 0.1:
            bias = int(rng.choice([-(2 ** 20), 2 ** 20, 2 ** 20 - 5, -(2 ** 20) + 7]))
        elif r < 0.25:
            bias = int(rng.integers(-600, 1100))
        else:
            bias = (1 << (e - 1)) - 1 + int(rng.integers(-3, 4))
        try:
            return softfp8.format(exp_bits=e, man_bits=m, bias=bias, signed=signed,
                                  specials=str(rng.choice(SPECIALS)), subnormals=str(rng.choice(SUBNORMALS)),
                                  saturate=bool(rng.random() < 0.3))
        except (ValueError, TypeError):
            continue


def codes_of(fmt, rng, shape, kind):
    """Code arrays of fmt (bits above the width set at random in a third of the cases)."""
    n = 1 << fmt.bits
    store = np.uint8 if fmt.bits <= 8 else np.uint16
    size = int(np.prod(shape))
    every = np.arange(n)
    vals = _values(fmt)
    fin = every[np.isfinite(vals)]
    if kind == "any" or fin.size == 0:
        c = rng.integers(0, n, size)
    else:
        if kind == "window":   # a narrow window of exponents: sums that do not just overflow
            mags = np.abs(vals[fin])
            nz = mags[mags > 0]
            if nz.size:
                centre = np.exp2(rng.uniform(np.log2(nz.min()), np.log2(nz.max()) + 1e-9))
                keep = fin[(mags == 0) | ((mags >= centre / 16) & (mags <= centre * 16))]
                fin = keep if keep.size else fin
        c = rng.choice(fin, size)
        if kind == "special":
            spec = every[~np.isfinite(vals)]
            if spec.size:
                pick = rng.random(size) < 0.05
                c[pick] = rng.choice(spec, int(pick.sum()))
        zeros = every[vals == 0]   # +0 and, where the format has it, -0 (none: E8M0-like)
        if rng.random() < 0.3 and zeros.size:
            pick = rng.random(size) < 0.2
            c[pick] = rng.choice(zeros, int(pick.sum()))
            if len(shape) == 2 and rng.random() < 0.5:   # whole zero rows and columns
                c2 = c.reshape(shape)
                rows = rng.random(shape[0]) < 0.3
                c2[rows] = rng.choice(zeros, (int(rows.sum()), shape[1]))
                cols = rng.random(shape[1]) < 0.3
                c2[:, cols] = rng.choice(zeros, (shape[0], int(cols.sum())))
    c = c.astype(np.uint64)
    if rng.random() < 0.33 and fmt.bits < 8 * np.dtype(store).itemsize:
        c |= rng.integers(0, 1 << (8 * np.dtype(store).itemsize), size).astype(np.uint64) & ~np.uint64(n - 1)
    return c.astype(store).reshape(shape).view(fmt.dtype)


_VALUES = {}


def _values(fmt):
    if fmt.params not in _VALUES:
        codes = np.arange(1 << fmt.bits, dtype=np.uint8 if fmt.bits <= 8 else np.uint16).view(fmt.dtype)
        with np.errstate(all="ignore"), softfp8.rounding("nearest_even"):
            _VALUES[fmt.params] = codes.astype(np.float64)
    return _VALUES[fmt.params]


def layout(x, rng):
    """x, or a copy of it in another memory layout (same values)."""
    r = rng.random()
    if r < 0.6 or x.ndim != 2:
        return x
    if r < 0.75:
        return np.asfortranarray(x)
    if r < 0.9:
        return np.ascontiguousarray(x[::-1, ::-1])[::-1, ::-1]
    return np.repeat(x, 2, axis=1)[:, ::2]


def shape3(rng, big=False):
    def one():
        return int(rng.choice(BOUNDARY)) if rng.random() < 0.6 else int(rng.integers(1, 40))
    m, k, p = one(), one(), one()
    if big:   # across the 65,536 multiply-add gate and the 2048-output blocks
        m, k, p = int(rng.choice([3, 33, 65])), int(rng.choice([64, 129, 300])), int(rng.choice([17, 64, 257]))
    return m, k, p


def _scale_values(rng, shape):
    r = rng.random()
    if r < 0.3:
        v = np.exp2(rng.integers(-20, 20, shape))
    elif r < 0.5:
        v = rng.choice([2.0 ** -149, 2.0 ** -140, 2.0 ** 100, 2.0 ** 127, 3e38, 1e-45, 0.3, 1 / 3], shape)
    else:
        v = rng.uniform(0.01, 100, shape)
    return np.asarray(v, dtype=np.float32)


def scales(rng, m, k, p):
    """(scale_a, scale_b, block_a, block_b, kblock) of a drawn granularity."""
    g = int(rng.integers(5))
    if g == 0:
        return np.float32(_scale_values(rng, ())), np.float32(_scale_values(rng, ())), None, None, 0
    if g == 1:
        return _scale_values(rng, (m, 1)), _scale_values(rng, (1, p)), None, None, 0
    kb = int(rng.choice([1, 2, 3, 4, 8, 16, 32]))
    nk = -(-k // kb) if k else 0
    if g == 2:   # 1 x kb tiles of a, kb x p blocks of b (MX-like)
        return _scale_values(rng, (m, nk)), _scale_values(rng, (nk, 1)), (1, kb), (kb, max(p, 1)), kb
    if g == 3:   # per-row a, kb x p blocks of b
        return _scale_values(rng, (m, 1)), _scale_values(rng, (nk, 1)), None, (kb, max(p, 1)), kb
    return np.float32(_scale_values(rng, ())), _scale_values(rng, (1, p)), None, None, 0


def random_accumulation(rng):
    def fmt_or(name_list):
        x = name_list[rng.integers(len(name_list))]
        return random_format(rng) if x == "custom" else x
    kw = {"accumulator": fmt_or(["float32", "float32", "float16", "bfloat16", softfp8.e5m2, softfp8.e4m3,
                                 "custom"])}
    if rng.random() < 0.3:
        kw["product"] = fmt_or([softfp8.float16, softfp8.e5m2, "float32", "custom"])
    if rng.random() < 0.5:
        kw["rounding"] = str(rng.choice(MODES))
    if rng.random() < 0.2:
        kw["product_rounding"] = str(rng.choice(MODES))
    if rng.random() < 0.5:
        kw["promote_every"] = int(rng.choice([1, 2, 3, 16, 32, 128]))
    if rng.random() < 0.3:
        kw["promoted"] = fmt_or(["float16", "bfloat16", "custom"])
    try:
        return softfp8.Accumulation(**kw), kw
    except (ValueError, TypeError):
        return softfp8.Accumulation(), {}


OUT_DTYPES = [np.float32, np.float64, np.float16, "bfloat16", softfp8.e4m3, softfp8.e5m2]


def make_case(seed, index):
    """(description, call) of case `index` of `seed`: call() -> the result array."""
    rng = np.random.default_rng([seed, index])
    entry = str(rng.choice(["matmul", "matmul", "vec", "wide", "mixed", "acc", "scaled", "scaled", "mx"]))
    big = rng.random() < 0.15
    m, k, p = shape3(rng, big)
    kind = str(rng.choice(["any", "finite", "window", "window", "special"]))
    fa = random_format(rng)
    fb = fa if entry in ("matmul", "vec", "wide") or rng.random() < 0.3 else random_format(rng)
    a = layout(codes_of(fa, rng, (m, k), kind), rng)
    b = layout(codes_of(fb, rng, (k, p), kind), rng)
    ctx = {"rounding": str(rng.choice(MODES)), "saturation": [None, True, False][rng.integers(3)],
           "tininess": str(rng.choice(["after", "before"]))}
    desc = {"entry": entry, "fa": fa, "fb": fb, "shape": (m, k, p), "kind": kind, "ctx": ctx}
    if entry == "matmul" and rng.random() < 0.15:
        ctx["rounding"], ctx["seed"] = "stochastic", int(rng.integers(1 << 30))
    if entry == "matmul" and rng.random() < 0.2:   # a batch: the loop's outer dimension
        a3 = np.stack([a, layout(codes_of(fa, rng, (m, k), kind), rng)])
        desc["batch"] = 2
        call = lambda: a3 @ b   # noqa: E731
    elif entry == "matmul":
        call = lambda: a @ b   # noqa: E731
    elif entry == "vec":
        which = str(rng.choice(["vecdot", "matvec", "vecmat"]))
        desc["which"] = which
        if which == "vecdot":
            y = layout(codes_of(fa, rng, (m, k), kind), rng)
            call = lambda: np.vecdot(a, y)   # noqa: E731
        elif which == "matvec":
            v = b[:, 0] if b.shape[1] else b[:, :1].reshape(-1)
            call = lambda: np.matvec(a, v) if v.shape[0] == a.shape[1] else np.zeros(0)   # noqa: E731
        else:
            v = a[0] if a.shape[0] else a[:1].reshape(-1)
            call = lambda: np.vecmat(v, b) if v.shape[0] == b.shape[0] else np.zeros(0)   # noqa: E731
    elif entry == "wide":
        odt = [np.float32, np.float64][rng.integers(2)]
        desc["out"] = odt
        call = lambda: softfp8.matmul(a, b, out_dtype=odt)   # noqa: E731
    elif entry in ("mixed", "acc"):
        odt = OUT_DTYPES[rng.integers(len(OUT_DTYPES))] if rng.random() < 0.8 else random_format(rng)
        acc, kw = random_accumulation(rng) if entry == "acc" else (None, None)
        desc.update(out=odt, acc=kw)
        call = lambda: softfp8.matmul(a, b, out_dtype=odt, accumulation=acc)   # noqa: E731
    elif entry == "scaled":
        sa, sb, ba, bb, kb = scales(rng, m, k, p)
        odt = OUT_DTYPES[rng.integers(len(OUT_DTYPES))]
        acc, kw = random_accumulation(rng) if rng.random() < 0.4 else (None, None)
        if acc is not None and kb and acc.promote_every and kb % acc.promote_every:
            acc = softfp8.Accumulation(accumulator=acc.accumulator)
            kw = {"accumulator": kw.get("accumulator")}
        desc.update(out=odt, acc=kw, scales=(np.asarray(sa).tolist(), np.asarray(sb).tolist(), ba, bb))
        call = lambda: softfp8.scaled_mm(a, b, sa, sb, out_dtype=odt, accumulation=acc,   # noqa: E731
                                         block_a=ba, block_b=bb)
    else:   # mx: MX float kinds through softfp8.mx.matmul (blocks of 32 along K)
        kk = int(rng.choice([32, 64, 96]))
        kindname = str(rng.choice(["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp4"]))
        x = rng.standard_normal((max(m, 1), kk)) * np.exp2(rng.integers(-30, 30, (max(m, 1), 1)))
        y = rng.standard_normal((kk, max(p, 1))) * np.exp2(rng.integers(-30, 30, (1, max(p, 1))))
        qa = softfp8.mx.quantize(x, kindname, axis=1)
        qb = softfp8.mx.quantize(y, kindname, axis=0)
        acc, kw = random_accumulation(rng) if rng.random() < 0.3 else (None, None)
        if acc is not None and acc.promote_every and 32 % acc.promote_every:
            acc, kw = None, None
        desc.update(kind=kindname, shape=(max(m, 1), kk, max(p, 1)), acc=kw)
        call = lambda: softfp8.mx.matmul(qa, qb, accumulation=acc)   # noqa: E731
    cand = {"fast": int(rng.choice([1, 2])), "simd": int(rng.integers(3)),
            "blas": str(rng.choice(["native", "numpy", "native"]))}
    return desc, ctx, call, cand


@contextlib.contextmanager
def context(ctx):
    with contextlib.ExitStack() as st:
        if ctx["rounding"] == "stochastic":
            st.enter_context(softfp8.rounding("stochastic", seed=ctx["seed"]))
        else:
            st.enter_context(softfp8.rounding(ctx["rounding"]))
        if ctx["saturation"] is not None:
            st.enter_context(softfp8.saturation(ctx["saturation"]))
        st.enter_context(softfp8.tininess(ctx["tininess"]))
        yield


def run(call, ctx, fast, simd, blas):
    """(raw result bytes, dtype, flags) or ("raises", type name, message)."""
    pf, ps = _ext.set_fast(fast), _ext.set_simd(simd)
    pb = _ext.set_blas(blas)["previous"] if blas and hasattr(_ext, "set_blas") else None
    try:
        with context(ctx), softfp8.collect_flags() as fl, np.errstate(all="ignore"):
            r = call()
        r = np.asarray(r)
        return r.view(np.uint8).tobytes() if r.size else b"", (r.dtype.str, r.shape), int(fl.flags)
    except Exception as exc:   # noqa: BLE001 - a disagreement in raising is a finding too
        return "raises", type(exc).__name__, str(exc)[:200]
    finally:
        _ext.set_fast(pf)
        _ext.set_simd(ps)
        if pb:
            _ext.set_blas(pb)


def check_case(seed, index, verbose=False):
    """None if fast == reference, else a description of the disagreement."""
    desc, ctx, call, cand = make_case(seed, index)
    want = run(call, ctx, 0, _ext.simd_level(), None)
    got = run(call, ctx, cand["fast"], cand["simd"], cand["blas"])
    if verbose:
        print(desc, cand, "->", want[1:] if want[0] != "raises" else want)
    if want == got:
        return None
    msg = [f"case {seed}:{index}: {desc} candidate {cand}"]
    if want[0] == "raises" or got[0] == "raises":
        msg.append(f"  reference {want if want[0] == 'raises' else 'computes'}; candidate "
                   f"{got if got[0] == 'raises' else 'computes'}")
    else:
        if want[2] != got[2]:
            msg.append(f"  flags {softfp8.Flags(want[2])!r} vs {softfp8.Flags(got[2])!r}")
        if want[0] != got[0]:
            w = np.frombuffer(want[0], np.uint8)
            g = np.frombuffer(got[0], np.uint8)
            bad = np.flatnonzero(w != g)
            msg.append(f"  {bad.size} result bytes differ, first at byte {bad[0]} of {w.size}")
    return "\n".join(msg)


def search(seed, cases, seconds=None, verbose=False, out=sys.stdout):
    t0 = time.time()
    found = []
    for i in range(cases):
        if seconds and time.time() - t0 > seconds:
            break
        r = check_case(seed, i, verbose)
        if r:
            found.append(r)
            print(r, file=out, flush=True)
    return found, i + 1 if cases else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--case", default=None, help="seed:index of one case")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args(argv)
    if args.case:
        s, i = (int(x) for x in args.case.split(":"))
        print(check_case(s, i, True) or "agree")
        return 0
    found, n = search(args.seed, args.cases, args.seconds, args.v)
    print(f"{len(found)} disagreements in {n} cases (seed {args.seed})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
