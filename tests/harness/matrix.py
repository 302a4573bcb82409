"""One registry entry per matrix path, and the public entry points above them.

Every case is a public call -- ``@`` / np.matmul / np.vecdot / np.matvec / np.vecmat,
softfp8.matmul (out_dtype, accumulation, mixed formats), softfp8.scaled_mm (per tensor /
row / column / block scales of any value), softfp8.mx.matmul, softfp8.dask -- whose result
and flags with the fast paths on must equal the engine's exact / generic reference kernel,
which is what runs with the fast paths off (``_ext.set_fast(0)``).

Operands: small finite values (many exact ties for the rounding of the sum), any raw
storage code (NaN, infinities, codes above the width), values near the top (overflow),
the smallest ones (underflow, subnormal results), and cancelling pairs (exact zeros,
their sign).  Shapes: space.MATRIX_SHAPES (empty, 1 x K, K = 1, odd, across the 8 / 16 /
32 / 64 blocks, two blocks, tails).
"""
from __future__ import annotations

import numpy as np

import softfp8

from . import space as S
from .machinery import Case, raw, rng_of
from .registry import register

KINDS = ("small", "any", "top", "tiny", "cancel")


def mat_codes(fmt, shape, kind, g):
    """codes of one operand (fmt's storage), of the given kind."""
    n = int(np.prod(shape))
    c, v = S.values(fmt)
    fin = np.isfinite(v)
    av = np.abs(np.where(fin, v, 0))
    pos = av[fin & (av > 0)]
    if kind == "any" or pos.size == 0:
        return S.random_codes(fmt, n, g).reshape(shape)
    if kind == "small":
        lo, hi = np.quantile(pos, 0.35), np.quantile(pos, 0.65)
        pool = c[fin & (av >= lo) & (av <= hi)]
    elif kind == "top":
        pool = c[fin & (av >= np.quantile(pos, 0.9))]
    elif kind == "tiny":
        pool = c[fin & (av <= np.quantile(pos, 0.1))]
    elif kind == "wide":   # the largest and the smallest values mixed: binary32 sums inexact
        pool = c[fin & ((av >= np.quantile(pos, 0.9)) | (av <= np.quantile(pos, 0.1)))]
    else:   # cancel: a value and its negative (or zeros for unsigned formats)
        pool = c[fin & (av >= np.quantile(pos, 0.3)) & (av <= np.quantile(pos, 0.7))]
    out = g.choice(pool if pool.size else c, n)
    if kind == "cancel" and fmt.signed and n > 1:
        half = n // 2
        out[half:2 * half] = out[:half] ^ (1 << (fmt.bits - 1))
    return S.above_width(fmt, out.astype(fmt.storage), g).reshape(shape)


def operands(fa, fb, m, k, p, kind, key):
    g = rng_of("mat", fa.name, fb.name, m, k, p, kind, key)
    a = mat_codes(fa, (m, k), kind, g)
    b = mat_codes(fb, (k, p), kind, g)
    if kind == "cancel" and k > 1:          # b's columns repeat: a row times them cancels
        b[k // 2:2 * (k // 2)] = b[:k // 2]
    return S.as_dtype(a.reshape(-1), fa).reshape(m, k), S.as_dtype(b.reshape(-1), fb).reshape(k, p)


def _call(f, env):
    def fn(g):
        with S.context(env):
            return f(g)
    return fn


def mcase(cid, f, count, env, a=None, b=None):
    return Case(cid, _call(f, env), count, inputs=())


def _shape_id(m, k, p):
    return f"{m}x{k}x{p}"


# --------------------------------------------------------------------------
# @ / np.matmul and the vector products of one format (npy/matmul.c)
# --------------------------------------------------------------------------

def product_cases(fmts, tag, envs):
    i = 0
    for fmt in fmts:
        for (m, k, p) in S.MATRIX_SHAPES:
            for kind in KINDS:
                env = S.rotate(envs, i)
                i += 1
                a, b = operands(fmt, fmt, m, k, p, kind, tag)
                yield mcase(f"{S.fid(fmt)}/matmul/{_shape_id(m, k, p)}/{kind}/{S.env_id(env)}",
                            lambda g, a=a, b=b: np.matmul(a, b), m * p, env)
        # the other ways in, on one shape
        m, k, p = 7, 33, 65
        a, b = operands(fmt, fmt, m, k, p, "small", tag + "-ways")
        env = S.rotate(envs, i)
        ways = {
            "@": lambda g: a @ b,
            "out=": lambda g: np.matmul(a, b, out=np.empty((m, p), fmt.dtype)),
            "transposed": lambda g: np.matmul(b.T.copy(), a.T.copy()).T,
            "strided": lambda g: np.matmul(a[::2], b[:, ::3]),
            "fortran": lambda g: np.matmul(np.asfortranarray(a), np.asfortranarray(b)),
            "batch-broadcast": lambda g: np.matmul(np.stack([a, a[::-1]])[:, None], np.stack([b, b, b])),
            "vecdot": lambda g: np.vecdot(a, b.T[:m] if p >= m else a),
            "matvec": lambda g: np.matvec(a, b[:, 0]),
            "vecmat": lambda g: np.vecmat(a[0], b),
            "softfp8.matmul": lambda g: softfp8.matmul(a, b),
            "softfp8.matmul-f32": lambda g: softfp8.matmul(a, b, out_dtype=np.float32),
            "softfp8.matmul-f64": lambda g: softfp8.matmul(a, b, out_dtype=np.float64),
            "softfp8.matmul-f32-out": lambda g: softfp8.matmul(a, b, out_dtype=np.float32,
                                                               out=np.empty((m, p), np.float32)),
            "1-D@2-D": lambda g: np.matmul(a[0], b),
            "2-D@1-D": lambda g: np.matmul(a, b[:, 1]),
        }
        for name, f in ways.items():
            yield mcase(f"{S.fid(fmt)}/{name}/{S.env_id(env)}", f, m * p, env)
        for (m, k, p) in ((3, 17, 64), (1, 65, 1), (5, 1, 7)):
            for kind in ("small", "any", "tiny"):
                a, b = operands(fmt, fmt, m, k, p, kind, tag + "-f32")
                for od in (np.float32, np.float64):
                    env = S.rotate(envs, i)
                    i += 1
                    yield mcase(f"{S.fid(fmt)}/softfp8.matmul->{np.dtype(od).name}/{_shape_id(m, k, p)}/{kind}/"
                                f"{S.env_id(env)}", lambda g, a=a, b=b, od=od: softfp8.matmul(a, b, out_dtype=od),
                                m * p, env)


# formats with an FNUZ / Tesla flavour (issue 21: np.matmul gave +inf, the core -inf)
FNUZ_TESLA = [softfp8.format(exp_bits=4, man_bits=3, bias=8, specials="fnuz", subnormals="tesla", name="e4m3fnuz-tesla"),
              softfp8.format(exp_bits=5, man_bits=2, bias=12, specials="fnuz", subnormals="tesla",
                             name="e5m2fnuz-tesla")]

# values beyond binary64's range (products and sums overflow or underflow a binary64 BLAS)
EXTREME = [softfp8.format(exp_bits=2, man_bits=2, bias=-700, specials="fn", subnormals="tesla", name="e2m2fnt-700"),
           softfp8.format(exp_bits=1, man_bits=3, bias=-700, specials="none", subnormals="flush", saturate=True,
                          name="e1m3none-700"),
           softfp8.format(exp_bits=3, man_bits=1, bias=-700, specials="fn", subnormals="flush", name="e3m1fn-700"),
           softfp8.format(exp_bits=4, man_bits=3, bias=900, name="e4m3b900"),
           softfp8.format(exp_bits=2, man_bits=3, bias=-700, specials="fnuz", subnormals="tesla", name="e2m3fnuzt-700")]
EXTREME16 = [softfp8.format(exp_bits=5, man_bits=9, bias=-900, specials="fnuz", subnormals="tesla", name="e5m9fnuzt-900"),
             softfp8.format(exp_bits=6, man_bits=6, bias=1000, name="e6m6b1000")]

MM8_FORMATS = [softfp8.e4m3, softfp8.e5m2, softfp8.e4m3fnuz, softfp8.float8_e3m4, softfp8.hfp8_143,
               softfp8.cfloat8_143(bias=20), softfp8.float8_e8m0fnu] + FNUZ_TESLA + S.NARROW[::5] + EXTREME


def _f32_tiny_rows():
    """scaled_mm of e4m3 into binary32 (blas_bound: the exact BLAS sum times the scale)."""
    # whole rows of outputs between 2^-149 and 2^-126, inexact: positive operands near
    # 2^-6 (every partial sum positive) and a normal scale product 0.3 2^-120, so that
    # only the output rounding can raise underflow (a vector kernel's range check)
    g = rng_of("f32-tiny-rows")
    vals = np.array([2.0 ** -6 * (1 + j / 8) for j in range(8)], np.float32)
    for (m, k, p) in ((4, 16, 16), (2, 33, 9), (1, 8, 64)):
        a = g.choice(vals, (m, k)).astype(softfp8.e4m3)
        b = g.choice(vals, (k, p)).astype(softfp8.e4m3)
        for env in S.CONFIGS[:4]:
            yield mcase(f"e4m3/scaled_mm(0.3*2^-60,2^-60)->float32/{_shape_id(m, k, p)}/tiny-rows/{S.env_id(env)}",
                        lambda g, a=a, b=b: softfp8.scaled_mm(a, b, np.float32(0.3 * 2.0 ** -60),
                                                              np.float32(2.0 ** -60), out_dtype=np.float32),
                        m * p, env)


@register("blas_bound", "matrix", "@ / np.matmul / vecdot of 8-bit formats: binary64 BLAS products exact by the formats' bound",
          no_coverage=("stochastic",))
def _mm_blas8():
    def part(fmts):
        return lambda: product_cases(fmts, "mm8", S.CONFIGS)
    return {"presets": part(MM8_FORMATS[:5]), "custom": part(MM8_FORMATS[5:]),
            "stochastic": lambda: product_cases([softfp8.e4m3], "mm8sr", S.SR),
            "f32-tiny-rows": _f32_tiny_rows}


# --------------------------------------------------------------------------
# the matrix engine: softfp8.matmul of mixed formats and accumulation models, scaled_mm, mx, dask
# --------------------------------------------------------------------------

OUT_DTYPES = (np.float32, np.float64, softfp8.float16, softfp8.bfloat16, softfp8.e4m3)
# per-tensor scales: non-powers of two, subnormal, huge (binary32 values)
SCALES = (0.3, 1.0, 2.0 ** -140, 3.0e30, 1.7, 448.0 / 3.1)


def _od(d):
    return d.dtype if isinstance(d, softfp8.Format) else np.dtype(d)


def _odid(d):
    return S.fid(d) if isinstance(d, softfp8.Format) else np.dtype(d).name


MIXED = [(softfp8.e4m3, softfp8.e5m2), (softfp8.e5m2, softfp8.e4m3fnuz), (softfp8.float16, softfp8.e4m3),
         (softfp8.bfloat16, softfp8.float16), (S.NARROW[3], softfp8.e4m3), (softfp8.e2m1, S.NARROW[17]),
         (S.MID[7], S.MID[8]), (S.MID[0], softfp8.e5m2), (FNUZ_TESLA[0], softfp8.e4m3),
         (S.MID[1], softfp8.e4m3), (softfp8.e5m2, S.MID[4]), (EXTREME[0], EXTREME16[0])]


def _f64_parts():
    """softfp8.matmul of mixed formats and scaled_mm with per-tensor scales (blas_ziv)"""
    def mixed():
        i = 0
        for fa, fb in MIXED:
            for (m, k, p) in S.MATRIX_SHAPES[::2]:
                for kind in KINDS:
                    od = S.rotate(OUT_DTYPES, i)
                    env = S.rotate(S.CONFIGS, i)
                    i += 1
                    a, b = operands(fa, fb, m, k, p, kind, "mixed")
                    yield mcase(f"{S.fid(fa)}x{S.fid(fb)}/matmul->{_odid(od)}/{_shape_id(m, k, p)}/{kind}/"
                                f"{S.env_id(env)}", lambda g, a=a, b=b, od=od: softfp8.matmul(a, b, out_dtype=_od(od)),
                                m * p, env)

    def scaled():
        i = 0
        for fa, fb in MIXED[:5] + [(softfp8.e4m3, softfp8.e4m3)]:
            for (m, k, p) in S.MATRIX_SHAPES[1::2]:
                for kind in ("small", "any", "top", "tiny"):
                    sa, sb = S.rotate(SCALES, i), S.rotate(SCALES, 3 * i + 1)
                    od = S.rotate(OUT_DTYPES, i)
                    env = S.rotate(S.CONFIGS, i)
                    i += 1
                    a, b = operands(fa, fb, m, k, p, kind, "scaled")
                    yield mcase(f"{S.fid(fa)}x{S.fid(fb)}/scaled_mm({sa},{sb})->{_odid(od)}/{_shape_id(m, k, p)}/"
                                f"{kind}/{S.env_id(env)}",
                                lambda g, a=a, b=b, sa=sa, sb=sb, od=od: softfp8.scaled_mm(
                                    a, b, np.float32(sa), np.float32(sb), out_dtype=_od(od)), m * p, env)

    def f32_range():
        # binary32 results across the edges of binary32's range: per-tensor scale products
        # (subnormal ones among them) that put sums below 2^-126, inexact there (underflow),
        # and near the top; nearest-even (the hardware conversion's mode) and the others
        i = 0
        for fa, fb in ((softfp8.e4m3, softfp8.e4m3), (softfp8.e4m3, softfp8.e5m2), (S.MID[1], softfp8.e4m3)):
            # the last two: normal scale products (no underflow of their own) whose inexact
            # outputs fall below 2^-126, where only the output rounding raises underflow
            for sa, sb in ((2.0 ** -130, 1.0), (0.3, 2.0 ** -128), (1.7, 2.0 ** -135), (2.0 ** 100, 2.0 ** 12),
                           (0.3 * 2.0 ** -60, 2.0 ** -60), (1.7 * 2.0 ** -70, 2.0 ** -52),
                           (0.3 * 2.0 ** -70, 2.0 ** -60), (1.7 * 2.0 ** -75, 2.0 ** -60)):
                for (m, k, p) in ((3, 64, 65), (5, 7, 3), (1, 33, 1), (2, 16, 17)):
                    kind = S.rotate(("small", "any", "tiny", "top"), i)
                    env = S.CONFIGS[i % 4] if i % 2 == 0 else S.rotate(S.CONFIGS, 5 * i)
                    i += 1
                    a, b = operands(fa, fb, m, k, p, kind, "f32-range")
                    yield mcase(f"{S.fid(fa)}x{S.fid(fb)}/scaled_mm({sa},{sb})->float32/{_shape_id(m, k, p)}/{kind}/"
                                f"{S.env_id(env)}", lambda g, a=a, b=b, sa=sa, sb=sb: softfp8.scaled_mm(
                                    a, b, np.float32(sa), np.float32(sb), out_dtype=np.float32), m * p, env)

    return {"mixed": mixed, "scaled": scaled, "f32-range": f32_range}


@register("blas_ziv", "matrix", "@ / np.matmul / vecdot of 9..16-bit formats, softfp8.matmul of mixed formats, "
          "scaled_mm per tensor: certified or Ziv-tested binary64 BLAS products", tables=False)
def _blas_ziv():
    def part(fmts):
        return lambda: product_cases(fmts, "mmz", S.CONFIGS)
    return {"presets": part(S.F16), "custom": part(S.MID + EXTREME16), **_f64_parts()}


def _grid_scales(g, shape):
    """binary32 scales of any value: non-powers of two, subnormal, huge."""
    pool = np.array([0.3, 1.0, 2.0 ** -140, 3.0e30, 1.7, 0.0625, 144.5, 1e-30], np.float32)
    return g.choice(pool, shape).astype(np.float32)


@register("int_dot", "matrix", "exact model of 8-bit operands by integer products (row / column / block scales)",
          tables=False)
def _gemm_exact8():
    def scales():
        i = 0
        for fa, fb in [(softfp8.e4m3, softfp8.e5m2), (softfp8.e4m3, softfp8.e4m3), (S.NARROW[3], softfp8.e4m3fnuz),
                       (FNUZ_TESLA[1], softfp8.e5m2)]:
            for (m, k, p) in ((4, 64, 3), (3, 128, 17), (1, 33, 1), (5, 1, 3), (6, 96, 65)):
                for kind in ("small", "any", "top", "tiny", "cancel"):
                    g = rng_of("gemm8", fa.name, m, k, p, kind)
                    a, b = operands(fa, fb, m, k, p, kind, "exact8")
                    od = S.rotate(OUT_DTYPES, i)
                    env = S.rotate(S.CONFIGS, i)
                    i += 1
                    ways = {"row-col": (_grid_scales(g, (m, 1)), _grid_scales(g, (1, p)), None, None)}
                    if k >= 32:
                        ways["block32"] = (_grid_scales(g, (m, -(-k // 32))), _grid_scales(g, (-(-k // 32), p)),
                                           (1, 32), (32, 1))
                    for wname, (sa, sb, ba, bb) in ways.items():
                        yield mcase(f"{S.fid(fa)}x{S.fid(fb)}/scaled_mm-{wname}->{_odid(od)}/{_shape_id(m, k, p)}/"
                                    f"{kind}/{S.env_id(env)}",
                                    lambda g, a=a, b=b, sa=sa, sb=sb, ba=ba, bb=bb, od=od: softfp8.scaled_mm(
                                        a, b, sa, sb, out_dtype=_od(od), block_a=ba, block_b=bb), m * p, env)

    def mx_and_dask():
        from softfp8 import mx
        g = rng_of("mx")
        for kind in ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp4"):
            for (m, k, p) in ((4, 64, 5), (3, 96, 33)):
                x = g.standard_normal((m, k)) * 4
                y = g.standard_normal((k, p)) / 3
                qa = mx.quantize(x, kind, axis=1)
                qb = mx.quantize(y, kind, axis=0)
                for od in (np.float32, softfp8.bfloat16):
                    yield mcase(f"mx.matmul/{kind}/{_shape_id(m, k, p)}->{_odid(od)}",
                                lambda g, qa=qa, qb=qb, od=od: mx.matmul(qa, qb, out_dtype=_od(od)), m * p,
                                S.CONFIGS[0])
                    acc = softfp8.Accumulation(accumulator=np.float32, promote_every=32)
                    yield mcase(f"mx.matmul/{kind}/{_shape_id(m, k, p)}/acc-f32->{_odid(od)}",
                                lambda g, qa=qa, qb=qb, od=od, acc=acc: mx.matmul(qa, qb, out_dtype=_od(od),
                                                                                   accumulation=acc),
                                m * p, S.CONFIGS[0])
        yield from _dask_cases()

    def mx_e8m0():
        # mx.matmul's exact scale products (scale_exact): block scales over the whole E8M0
        # range, so products 2^(ea + eb) from 2^-254 to 2^254 -- outside binary32 (where the
        # model kernels decline) and inside it; 1 x K<=32 x 1 takes the BLAS paths (scales
        # constant), the rest int_dot's K-blocked kernel; the scale 2^-127 raises no flag
        from softfp8 import mx
        ranges = {"low": (0, 40), "high": (215, 254), "all": (0, 254), "mid": (100, 150)}
        i = 0
        for ka, kb in (("mxfp8_e4m3", "mxfp8_e5m2"), ("mxfp8_e5m2", "mxfp8_e5m2"), ("mxfp4", "mxfp6_e2m3"),
                       ("mxfp6_e3m2", "mxfp8_e4m3")):
            fa, fb = mx.KINDS[ka].format(), mx.KINDS[kb].format()
            for (m, k, p) in ((1, 32, 1), (1, 20, 1), (2, 64, 3), (3, 70, 17), (1, 96, 33)):
                nb = -(-k // 32)
                for kind in ("small", "any", "top", "tiny", "cancel"):
                    a, b = operands(fa, fb, m, k, p, kind, "mx-e8m0")
                    for rname, (lo, hi) in ranges.items():
                        g = rng_of("mx-e8m0", ka, kb, m, k, p, kind, rname)
                        qa = mx.BlockArray(a, g.integers(lo, hi + 1, (m, nb)).astype(np.uint8), kind=ka,
                                           axes=(1,), block=(32,))
                        qb = mx.BlockArray(b, g.integers(lo, hi + 1, (nb, p)).astype(np.uint8), kind=kb,
                                           axes=(0,), block=(32,))
                        od = S.rotate((np.float32, np.float64, softfp8.bfloat16, softfp8.e4m3), i)
                        env = S.rotate(S.CONFIGS, i)
                        i += 1
                        cid = f"mx.matmul/{ka}x{kb}/e8m0-{rname}/{_shape_id(m, k, p)}/{kind}"
                        yield mcase(f"{cid}->{_odid(od)}/{S.env_id(env)}",
                                    lambda g, qa=qa, qb=qb, od=od: mx.matmul(qa, qb, out_dtype=_od(od)), m * p, env)
                        if kind in ("small", "tiny"):
                            acc = softfp8.Accumulation(accumulator=np.float32, promote_every=16 if k > 32 else None)
                            yield mcase(f"{cid}/acc-f32->float32/{S.env_id(env)}",
                                        lambda g, qa=qa, qb=qb, acc=acc: mx.matmul(qa, qb, accumulation=acc),
                                        m * p, env)

    return {"scales": scales, "mx+dask": mx_and_dask, "mx-e8m0": mx_e8m0}


def _dask_cases():
    try:
        import dask
        import dask.array as da
        from softfp8 import dask as sdask
    except ImportError:   # the optional extra is absent: nothing to prove here
        return
    for fmt in (softfp8.e4m3, softfp8.bfloat16):
        a, b = operands(fmt, fmt, 40, 96, 24, "small", "dask")
        for ck in (96, 32, 17):
            def fn(g, a=a, b=b, ck=ck):
                with dask.config.set(scheduler="synchronous"):
                    return sdask.matmul(da.from_array(a, chunks=(16, ck)), da.from_array(b, chunks=(ck, 8))).compute()
            yield mcase(f"dask.matmul/{S.fid(fmt)}/k-chunks-{ck}", fn, 40 * 24, S.CONFIGS[2])
        x = S.as_dtype(S.random_codes(fmt, 5000, rng_of("dask-sum", fmt.name), spare=False), fmt)

        def fsum(g, x=x):
            with dask.config.set(scheduler="synchronous"):
                return sdask.sum(da.from_array(x, chunks=700)).compute()
        yield mcase(f"dask.sum/{S.fid(fmt)}", fsum, 1, S.CONFIGS[4])


ACCUMULATIONS = (
    ("f32", dict(accumulator=np.float32)),
    ("f32-promote32", dict(accumulator=np.float32, promote_every=32)),
    ("f16", dict(accumulator=softfp8.float16)),
    ("bf16-rz", dict(accumulator=softfp8.bfloat16, rounding="toward_zero")),
    ("e5m2-acc", dict(accumulator=softfp8.e5m2, promote_every=4)),
    ("prod-f16", dict(product=softfp8.float16, accumulator=np.float32, promote_every=16)),
    ("f16-promote-bf16", dict(accumulator=softfp8.float16, promote_every=8, promoted=softfp8.bfloat16)),
    ("f32-up", dict(accumulator=np.float32, rounding="upward")),
)


def model_cases(pairs, shapes, tag, accs):
    i = 0
    for fa, fb in pairs:
        for (m, k, p) in shapes:
            for kind in ("small", "any", "top", "tiny", "cancel"):
                name, kw = S.rotate(accs, i)
                acc = softfp8.Accumulation(**kw)
                od = S.rotate(OUT_DTYPES, i)
                env = S.rotate(S.SOME, i)
                i += 1
                a, b = operands(fa, fb, m, k, p, kind, tag)
                yield mcase(f"{S.fid(fa)}x{S.fid(fb)}/matmul-acc-{name}->{_odid(od)}/{_shape_id(m, k, p)}/{kind}/"
                            f"{S.env_id(env)}", lambda g, a=a, b=b, acc=acc, od=od: softfp8.matmul(
                                a, b, out_dtype=_od(od), accumulation=acc), m * p, env)
                sa, sb = S.rotate(SCALES, i), S.rotate(SCALES, i + 2)
                yield mcase(f"{S.fid(fa)}x{S.fid(fb)}/scaled_mm({sa},{sb})-acc-{name}->{_odid(od)}/"
                            f"{_shape_id(m, k, p)}/{kind}/{S.env_id(env)}",
                            lambda g, a=a, b=b, acc=acc, od=od, sa=sa, sb=sb: softfp8.scaled_mm(
                                a, b, np.float32(sa), np.float32(sb), out_dtype=_od(od), accumulation=acc),
                            m * p, env)


MODEL_SHAPES = ((64, 64, 16), (3, 130, 65), (1, 33, 1), (5, 1, 7), (0, 4, 3), (9, 17, 64))


MODEL_PAIRS = [(softfp8.e4m3, softfp8.e4m3), (softfp8.e4m3, softfp8.e5m2), (S.NARROW[3], softfp8.e4m3fnuz),
               (FNUZ_TESLA[0], softfp8.e5m2)]


@register("model_odd", "matrix", "accumulation models of 8-bit operands: binary64 sums rounded to odd, then the "
          "fast rounder", tables=False)
def _model_odd():
    def models():
        yield from model_cases(MODEL_PAIRS, MODEL_SHAPES, "model",
                               [a for a in ACCUMULATIONS if a[1].get("accumulator") is not np.float32 or
                                a[1].get("rounding") or a[1].get("product")])
    return {"models": models}


@register("model_f32", "matrix", "accumulation models with a binary32 accumulator rounded to nearest even",
          tables=False)
def _model_f32():
    def models():
        yield from model_cases(MODEL_PAIRS, MODEL_SHAPES, "model-f32",
                               [a for a in ACCUMULATIONS if a[1].get("accumulator") is np.float32 and
                                not a[1].get("rounding") and not a[1].get("product")])

    def inexact():
        # binary32 sums that round: the largest and smallest values of a format in one
        # dot product (a part of its own: most model cases' sums are exact in binary32)
        accs = [a for a in ACCUMULATIONS if a[1].get("accumulator") is np.float32 and
                not a[1].get("rounding") and not a[1].get("product")]
        i = 0
        for fa, fb in MODEL_PAIRS[:3]:
            for (m, k, p) in ((3, 8, 5), (4, 64, 3), (2, 130, 17)):
                name, kw = S.rotate(accs, i)
                acc = softfp8.Accumulation(**kw)
                for od in (np.float32, np.float64, softfp8.bfloat16):
                    env = S.rotate(S.SOME, i)
                    i += 1
                    a, b = operands(fa, fb, m, k, p, "wide", "model-f32-inexact")
                    yield mcase(f"{S.fid(fa)}x{S.fid(fb)}/matmul-acc-{name}->{_odid(od)}/{_shape_id(m, k, p)}/wide/"
                                f"{S.env_id(env)}", lambda g, a=a, b=b, acc=acc, od=od: softfp8.matmul(
                                    a, b, out_dtype=_od(od), accumulation=acc), m * p, env)
        # one exact case by hand: 448 + 2^-9 + 1 is not a binary32 number's sum step
        a = np.array([[448.0, 2.0 ** -9, 1.0]], np.float32).astype(softfp8.e4m3)
        b = np.ones((3, 8), np.float32).astype(softfp8.e4m3)
        acc = softfp8.Accumulation(accumulator=np.float32)
        yield mcase("e4m3/matmul-acc-f32/448+2^-9+1", lambda g: softfp8.matmul(
            a, b, out_dtype=np.float32, accumulation=acc), 8, S.CONFIGS[0])

    def regressions():
        # issue 21: scaled_mm with an accumulation model and a non-power-of-two scale
        rng = np.random.default_rng(0)
        a = rng.integers(-8, 8, (64, 64)).astype(np.float32).astype(softfp8.e4m3)
        b = rng.integers(-8, 8, (64, 16)).astype(np.float32).astype(softfp8.e4m3)
        acc = softfp8.Accumulation(accumulator=np.float32)
        yield mcase("issue21-scaled_mm-acc-f32-scale0.3",
                    lambda g: softfp8.scaled_mm(a, b, np.float32(0.3), np.float32(1.0), out_dtype=np.float32,
                                                accumulation=acc), 64 * 16, S.CONFIGS[0])
        for s in (0.3, 1.7, 2.0 ** -140, 3.0e30):
            yield mcase(f"issue21-scaled_mm-acc-f32-scale{s}-b",
                        lambda g, s=s: softfp8.scaled_mm(a, b, np.float32(1.0), np.float32(s), out_dtype=np.float32,
                                                         accumulation=acc), 64 * 16, S.CONFIGS[0])

    def blocks():
        # the binary32 kernels (mm_model.c f32_block): rows across their column groups (16-column
        # vectors, 8 of them per group, FW = 128 per block), promotion by binary32 additions or
        # into another running sum, K-blocked scales, k = 0; operand formats whose values are
        # normal binary32 numbers (the SIMD kernels) and not (F32_PORTABLE: the portable kernel);
        # sums that overflow binary32 (F32_HUGE); a product format (the product table's route)
        accs = (("f32", dict(accumulator=np.float32)),
                ("f32-promote7", dict(accumulator=np.float32, promote_every=7)),
                ("f32-promote5-bf16", dict(accumulator=np.float32, promote_every=5, promoted=softfp8.bfloat16)),
                ("prod-e5m2", dict(product=softfp8.e5m2, accumulator=np.float32)),
                ("f32-promote64", dict(accumulator=np.float32, promote_every=64)))
        shapes = ((2, 9, 127), (1, 20, 128), (2, 17, 129), (1, 70, 257), (3, 0, 130), (2, 5, 15), (1, 3, 33))
        pairs = [(softfp8.e4m3, softfp8.e5m2), F32_PORTABLE, (F32_HUGE, F32_HUGE)]
        yield from model_cases(pairs, shapes, "f32-blocks", accs)
        # a product format exact below its largest value (float16 for E4M3 x E4M3: the binary32
        # kernels, blocks whose products may exceed 65504 declining) with promotion by binary32
        # additions (level 1: f32_prom_256, every chunk in one call): k around the chunk bounds
        pf16 = (("prod-f16-promote16", dict(product=softfp8.float16, accumulator=np.float32, promote_every=16)),
                ("prod-f16-promote1", dict(product=softfp8.float16, accumulator=np.float32, promote_every=1)),
                ("prod-f16", dict(product=softfp8.float16, accumulator=np.float32)))
        yield from model_cases([(softfp8.e4m3, softfp8.e4m3)], ((2, 15, 130), (2, 16, 64), (2, 17, 129),
                                                                (1, 33, 17), (2, 49, 200)), "f32-blocks-pf16", pf16)
        # sums that round in binary32 with no product above 65504 (|a|, |b| <= 240): the
        # chunks' bounds change the result (a chunk one product too long fails here)
        g = rng_of("f32-pf16-round")
        vals = np.array([240.0, -224.0, 2.0 ** -9, -3 * 2.0 ** -9, 1.125, -0.875, 2.0 ** -6], np.float64)
        for (m, k, p) in ((2, 15, 130), (2, 16, 64), (2, 17, 129), (3, 49, 200), (1, 784, 128)):
            a = g.choice(vals, (m, k)).astype(softfp8.e4m3)
            b = g.choice(vals, (k, p)).astype(softfp8.e4m3)
            for name, kw in pf16[:2]:
                acc = softfp8.Accumulation(**kw)
                yield mcase(f"e4m3/matmul-acc-{name}/{_shape_id(m, k, p)}/rounding", lambda g, a=a, b=b, acc=acc:
                            softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc), m * p, S.CONFIGS[0])
        a, b = operands(softfp8.e4m3, softfp8.e4m3, 6, 40, 150, "wide", "f32-layouts")
        acc = softfp8.Accumulation(accumulator=np.float32, promote_every=16)
        for name, f in (("strided", lambda g: softfp8.matmul(a[::2, ::3], b[::3, ::2], out_dtype=np.float32,
                                                              accumulation=acc)),
                        ("fortran", lambda g: softfp8.matmul(np.asfortranarray(a), np.asfortranarray(b),
                                                             out_dtype=np.float32, accumulation=acc))):
            yield mcase(f"e4m3/matmul-acc-f32-promote16/{name}", f, 6 * 150, S.CONFIGS[0])
        # sums that overflow binary32 (some rows only): the generic kernel takes those blocks
        big = np.array([3.0 * 2.0 ** 60, 3.5 * 2.0 ** 60], np.float64)
        g = rng_of("f32-overflow")
        a = g.choice(big, (4, 70)).astype(F32_HUGE.dtype)
        a[1::2, ::2] = -a[1::2, ::2]
        b = g.choice(big, (70, 130)).astype(F32_HUGE.dtype)
        for name, kw in accs[:2]:
            acc = softfp8.Accumulation(**kw)
            yield mcase(f"e4m3fnb-46/matmul-acc-{name}/4x70x130/overflow", lambda g, a=a, b=b, acc=acc: softfp8.matmul(
                a, b, out_dtype=np.float32, accumulation=acc), 4 * 130, S.CONFIGS[0])
        # K-blocked scales: the promotion multiplies each chunk by its scale (fast_promote)
        g = rng_of("f32-kblock")
        for kind in ("small", "wide", "cancel"):
            a, b = operands(softfp8.e4m3, softfp8.e4m3, 3, 64, 130, kind, "f32-kblock")
            sa, sb = _grid_scales(g, (3, 2)), _grid_scales(g, (2, 130))
            acc = softfp8.Accumulation(accumulator=np.float32, promote_every=32)
            yield mcase(f"e4m3/scaled_mm-block32-acc-f32-promote32/3x64x130/{kind}",
                        lambda g, a=a, b=b, sa=sa, sb=sb, acc=acc: softfp8.scaled_mm(
                            a, b, sa, sb, out_dtype=np.float32, block_a=(1, 32), block_b=(32, 1), accumulation=acc),
                        3 * 130, S.CONFIGS[0])

    def wide():
        # 9..16-bit operands (mm_model.c wide_range / wide_b: B and A decoded by mm_decode, the
        # kernels' range conditions on the data's range instead of the formats'): every kind of
        # operand (bfloat16's "small" and "cancel" data in range, its "tiny" / "top" / "any" not:
        # the generic kernel), a 12-bit format (codes above the width), one of 13 significant bits
        # (products beyond binary32: declined), mixed with an 8-bit operand
        accs = [a for a in ACCUMULATIONS if a[1].get("accumulator") is np.float32 and
                not a[1].get("rounding") and not a[1].get("product")]
        yield from model_cases(WIDE_PAIRS, ((3, 130, 65), (9, 17, 129), (1, 33, 1), (2, 0, 3)), "model-wide", accs)
        # the data's range at its limits: products' lowest bit 2^-126 (taken) and 2^-127 (not), down
        # to 2^-150 (inexact binary32 products: not), the largest product below 2^127 (taken) and
        # 2^128 (not); subnormal float16 values (denormal
        # flags) in one column / one row only; a NaN in one row, an infinity in one column
        g = rng_of("model-wide-edges")
        acc = softfp8.Accumulation(accumulator=np.float32)
        accp = softfp8.Accumulation(accumulator=np.float32, promote_every=16)

        def bf(lo, hi, shape):   # bfloat16 values with magnitudes in [2^lo, 2^hi), both signs
            e = g.integers(lo, hi, shape)
            m = 1 + g.integers(0, 128, shape) / 128
            return (np.where(g.random(shape) < 0.5, -1.0, 1.0) * m * np.exp2(e)).astype(np.float32)
        for name, (alo, ahi, blo, bhi) in (("low-126", (-60, -40, -52, -30)), ("low-127", (-60, -40, -53, -30)),
                                           ("low-150", (-76, -62, -76, -62)),  # products below binary32's normals
                                           ("top-127", (40, 61, 40, 66)), ("top-128", (40, 61, 40, 67))):
            a, b = bf(alo, ahi, (5, 40)), bf(blo, bhi, (40, 140))
            a[:, 0], b[0, :] = np.exp2(alo), np.exp2(blo)                     # the range's ends present
            a[0, 1], b[1, 0] = np.exp2(ahi - 1) * 1.9921875, np.exp2(bhi - 1) * 1.9921875
            a, b = a.astype(softfp8.bfloat16), b.astype(softfp8.bfloat16)
            for an, ac in (("f32", acc), ("f32-promote16", accp)):
                yield mcase(f"bfloat16/matmul-acc-{an}/5x40x140/{name}", lambda g_, a=a, b=b, ac=ac: softfp8.matmul(
                    a, b, out_dtype=np.float32, accumulation=ac), 5 * 140, S.CONFIGS[0])
        # cancellation to a tiny sum at the low limit: a1 b1 + a2 b2 = 2^-126 exactly, then + 0
        # (taken: the range's products are multiples of 2^-126) next to the same one binade lower
        # (2^-127, a subnormal running sum: declined)
        for name, sh in (("cancel-126", 0), ("cancel-127", 1)):
            a = np.array([[2.0 ** -56 * (1 + 2 ** -7), -2.0 ** -56 * (1 + 2 ** -6), 2.0 ** -56]], np.float32)
            b = np.zeros((3, 20), np.float32)
            b[0], b[1] = 2.0 ** (-56 - sh) * (1 + 2 ** -7), 2.0 ** (-56 - sh)
            a, b = a.astype(softfp8.bfloat16), b.astype(softfp8.bfloat16)
            yield mcase(f"bfloat16/matmul-acc-f32/1x3x20/{name}", lambda g_, a=a, b=b: softfp8.matmul(
                a, b, out_dtype=np.float32, accumulation=acc), 20, S.CONFIGS[0])
        x = (g.standard_normal((6, 70)) * 4).astype(np.float32)
        y = (g.standard_normal((70, 260)) * 4).astype(np.float32)
        x16, y16 = x.astype(softfp8.float16), y.astype(softfp8.float16)
        sub = np.array([2.0 ** -20, -2.0 ** -24, 3 * 2.0 ** -17], np.float32).astype(softfp8.float16)
        for name, (xa, yb) in (("sub-column", (x16, y16.copy())), ("sub-row", (x16.copy(), y16)),
                               ("nan-row", (x16.copy(), y16)), ("inf-column", (x16, y16.copy()))):
            if name == "sub-column":
                yb[5:8, 131] = sub
            elif name == "sub-row":
                xa[4, 10:13] = sub
            elif name == "nan-row":
                xa[2, 33] = np.float32(np.nan)
            else:
                yb[7, 200] = np.float32(-np.inf)
            for an, ac in (("f32", acc), ("f32-promote16", accp)):
                for od in (np.float32, softfp8.bfloat16):
                    yield mcase(f"float16/matmul-acc-{an}->{_odid(od)}/6x70x260/{name}",
                                lambda g_, a=xa, b=yb, ac=ac, od=od: softfp8.matmul(
                                    a, b, out_dtype=od, accumulation=ac), 6 * 260, S.CONFIGS[0])
        for name, f in (("strided", lambda g_: softfp8.matmul(x16[::2, ::3], y16[::3, ::2], out_dtype=np.float32,
                                                               accumulation=accp)),
                        ("fortran", lambda g_: softfp8.matmul(np.asfortranarray(x16), np.asfortranarray(y16),
                                                              out_dtype=np.float32, accumulation=acc))):
            yield mcase(f"float16/matmul-acc-f32/{name}", f, 6 * 260, S.CONFIGS[0])

    def directed():
        # binary32 accumulators rounded toward zero, upward, downward (mm_model.c f32_directed:
        # the AVX2 kernels in that MXCSR mode, sums from +0 rounding downward, overflow found by
        # MXCSR's flag -- toward zero gives binary32's largest, not an infinity); promotion into
        # a binary32 running sum at nearest even (f32_promx_256: the mode switched per chunk, the
        # flags kept) or into bfloat16 (fast_promote); E4M3 x E5M2 and bfloat16 operands
        shapes = ((2, 9, 127), (1, 20, 128), (2, 17, 129), (3, 0, 130), (1, 3, 33))
        for mode in ("toward_zero", "upward", "downward"):
            accs = ((f"f32-{mode}", dict(accumulator=np.float32, rounding=mode)),
                    (f"f32-{mode}-promote4", dict(accumulator=np.float32, rounding=mode, promote_every=4)),
                    (f"f32-{mode}-promote7-bf16", dict(accumulator=np.float32, rounding=mode, promote_every=7,
                                                       promoted=softfp8.bfloat16)))
            yield from model_cases([(softfp8.e4m3, softfp8.e5m2), (softfp8.bfloat16, softfp8.bfloat16)], shapes,
                                   f"f32-dir-{mode}", accs)
            # sums that overflow binary32 in some rows (the generic kernel takes those blocks)
            big = np.array([3.0 * 2.0 ** 60, 3.5 * 2.0 ** 60], np.float64)
            g = rng_of("f32-dir-overflow", mode)
            a = g.choice(big, (4, 70)).astype(F32_HUGE.dtype)
            a[1::2, ::2] = -a[1::2, ::2]
            b = g.choice(big, (70, 130)).astype(F32_HUGE.dtype)
            for name, kw in accs[:2]:
                acc = softfp8.Accumulation(**kw)
                yield mcase(f"e4m3fnb-46/matmul-acc-{name}/4x70x130/overflow", lambda g_, a=a, b=b, acc=acc:
                            softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc), 4 * 130, S.CONFIGS[0])
            # signed zeros: zero products, sums cancelling to zero, chunks of zeros (beside the
            # nearest-even accumulator, which every level's kernel takes)
            vals = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.5], np.float32)
            a = g.choice(vals, (3, 24)).astype(softfp8.e4m3)
            b = g.choice(vals, (24, 40)).astype(softfp8.e4m3)
            for name, kw in accs + (("f32", dict(accumulator=np.float32)),):
                acc = softfp8.Accumulation(**kw)
                yield mcase(f"e4m3/matmul-acc-{name}/3x24x40/zeros", lambda g_, a=a, b=b, acc=acc: softfp8.matmul(
                    a, b, out_dtype=np.float32, accumulation=acc), 3 * 40, S.CONFIGS[0])

    def prodfmt():
        # a product format whose rounding the data reaches (mm_model.c prnd_params, mm_narrow.c
        # mm_nrw_prod: the products rounded by the magic constant in AVX2, then summed): 9..16-bit
        # operands and 8-bit ones whose products round (E5M2 data reaching float16's subnormals,
        # E4M3 into E4M3); product formats float16, E5M2, E4M3 and bfloat16 (its subnormal unit
        # below binary32's normals: not taken); promotion into binary32 and bfloat16; every kind
        # of operand (model_cases: one environment each) and then the four nearest-even
        # environments (saturation, tininess before / after: the product's rounding is the
        # context's) on data that reaches the product format's subnormals
        accs = (("pf16", dict(product=softfp8.float16, accumulator=np.float32)),
                ("pf16-promote16", dict(product=softfp8.float16, accumulator=np.float32, promote_every=16)),
                ("pe5m2-promote5-bf16", dict(product=softfp8.e5m2, accumulator=np.float32, promote_every=5,
                                             promoted=softfp8.bfloat16)),
                ("pbf16", dict(product=softfp8.bfloat16, accumulator=np.float32)),
                ("pe4m3", dict(product=softfp8.e4m3, accumulator=np.float32)))
        yield from model_cases(WIDE_PAIRS, ((3, 130, 65), (2, 17, 129), (1, 33, 1), (2, 0, 3)), "prodfmt-wide", accs)
        yield from model_cases([(softfp8.e5m2, softfp8.e5m2), (softfp8.e4m3, softfp8.e5m2)],
                               ((2, 9, 127), (1, 20, 128), (3, 40, 130)), "prodfmt-8", accs)
        g = rng_of("prodfmt-envs")
        x16 = (g.standard_normal((4, 50)) * 2).astype(np.float32)
        y16 = (g.standard_normal((50, 136)) * 2).astype(np.float32)
        x16[:, ::5] *= 2.0 ** -12               # products down to ~2^-30: float16's subnormals and below
        y16[::7, :] *= 2.0 ** -9
        g5 = (g.standard_normal((3, 40)) * 2.0 ** -7).astype(softfp8.e5m2)     # E5M2 gradients: subnormals
        h5 = (g.standard_normal((40, 70)) * 2.0 ** -6).astype(softfp8.e5m2)
        data = (("float16", x16.astype(softfp8.float16), y16.astype(softfp8.float16)),
                ("bfloat16", x16.astype(softfp8.bfloat16), y16.astype(softfp8.bfloat16)), ("e5m2", g5, h5))
        for fname, a, b in data:
            for name, kw in accs[:3]:
                acc = softfp8.Accumulation(**kw)
                for env in S.CONFIGS[:4]:
                    yield mcase(f"{fname}/matmul-acc-{name}/{a.shape[0]}x{a.shape[1]}x{b.shape[1]}/subnormal-products/"
                                f"{S.env_id(env)}", lambda g_, a=a, b=b, acc=acc: softfp8.matmul(
                                    a, b, out_dtype=np.float32, accumulation=acc), a.shape[0] * b.shape[1], env)
        # products at the format's edges, each in whole vectors (16 columns): onto float16's 2^-14
        # from below (tiny before rounding only), half its subnormal unit (a tie to zero, both
        # signs) and just above it, 2^-25 - 2^-36 (to zero), 181^2 = 32761 (below the top binade
        # 2^15, rounded onto it: taken) and the products in it (declined: 2^15, and 2^16 beyond
        # 65504, an overflow of the product)
        acc = softfp8.Accumulation(product=softfp8.float16, accumulator=np.float32)
        edge = (("below-emin", 63 * 2.0 ** -13, 65 * 2.0 ** -13),      # 2^-14 (1 - 2^-12)
                ("half-unit", 2.0 ** -12, 2.0 ** -13), ("half-unit-neg", -(2.0 ** -12), 2.0 ** -13),
                ("above-half-unit", 2.0 ** -12 * (1 + 2.0 ** -10), 2.0 ** -13),
                ("to-zero", 2.0 ** -12 * (1 - 2.0 ** -11), 2.0 ** -13),
                ("below-top", 181.0, 181.0), ("top", 256.0, 128.0), ("overflow", 256.0, 256.0))
        for name, x, y in edge:
            a = np.array([[x, 1.0]], np.float32).astype(softfp8.float16)
            b = np.array([[y] * 16, [-0.0] * 16], np.float32).astype(softfp8.float16)   # + -0: a zero keeps its sign
            for env in S.CONFIGS[:4]:
                yield mcase(f"float16/matmul-acc-pf16/1x2x16/{name}/{S.env_id(env)}",
                            lambda g_, a=a, b=b: softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc), 16, env)

        # layouts: strided and Fortran-ordered operands, and out= (a float32 array written in
        # place, and a strided view of a larger one)
        xf, yf = x16.astype(softfp8.float16), y16.astype(softfp8.float16)
        accp = softfp8.Accumulation(product=softfp8.float16, accumulator=np.float32, promote_every=16)

        def into(g_, a, b, ac, strided):
            buf = np.full((a.shape[0], 2 * b.shape[1]) if strided else (a.shape[0], b.shape[1]), np.nan, np.float32)
            o = buf[:, ::2] if strided else buf
            softfp8.matmul(a, b, out_dtype=np.float32, out=o, accumulation=ac)
            return buf
        for name, f in (("strided", lambda g_: softfp8.matmul(xf[::2, ::3], yf[::3, ::2], out_dtype=np.float32,
                                                               accumulation=accp)),
                        ("fortran", lambda g_: softfp8.matmul(np.asfortranarray(xf), np.asfortranarray(yf),
                                                              out_dtype=np.float32, accumulation=acc)),
                        ("out", lambda g_: into(g_, xf, yf, acc, False)),
                        ("out-strided", lambda g_: into(g_, xf, yf, accp, True))):
            yield mcase(f"float16/matmul-acc-pf16/{name}", f, xf.shape[0] * yf.shape[1], S.CONFIGS[0])

    return {"models": models, "inexact": inexact, "regressions": regressions, "blocks": blocks, "wide": wide,
            "directed": directed, "prodfmt": prodfmt}


# 9..16-bit operands of the model kernels (mm_model.c wide_range): float16, bfloat16, a 12-bit
# format (two-byte storage: codes above the width), one of 13 significant bits (products beyond
# binary32's 24: declined), a 16-bit operand beside an 8-bit one
WIDE_PAIRS = [(softfp8.float16, softfp8.float16), (softfp8.bfloat16, softfp8.bfloat16),
              (softfp8.format(exp_bits=5, man_bits=6, bias=15, name="e5m6"),) * 2,
              (softfp8.format(exp_bits=2, man_bits=12, bias=1, name="e2m12"),) * 2,
              (softfp8.bfloat16, softfp8.e4m3)]


# model_f32's portable kernel only: values below 2^-126 in A (a normal binary32 number only
# as a product with B's values of at least 2^18)
F32_PORTABLE = (softfp8.format(exp_bits=3, man_bits=2, bias=126, name="e3m2b126"),
                softfp8.format(exp_bits=3, man_bits=2, bias=-20, name="e3m2b-20"))
# values up to 2^63: products below 2^127, sums of a few of them overflow binary32
F32_HUGE = softfp8.format(exp_bits=4, man_bits=3, bias=-46, specials="fn", name="e4m3fnb-46")


@register("model_fma16", "matrix", "accumulation models with an accumulator of at most 20 mantissa bits: binary32 "
          "sums rounded into it by the SIMD kernels of mm_narrow.c")
def _gemm_fma16():
    def models():
        accs = (("f16", dict(accumulator=softfp8.float16)),
                ("bf16", dict(accumulator=softfp8.bfloat16, rounding="toward_zero")),
                ("f16-promote8", dict(accumulator=softfp8.float16, promote_every=8)),
                ("f16-down", dict(accumulator=softfp8.float16, rounding="downward")))
        pairs = [(softfp8.e4m3, softfp8.e4m3), (softfp8.e5m2, softfp8.e4m3), (softfp8.e2m1, softfp8.e2m1)]
        yield from model_cases(pairs, MODEL_SHAPES, "fma16", accs)

    def blocks():
        # long rows: many blocks of the path's 128 columns, a partial one, a row of whole blocks
        accs = (("f16", dict(accumulator=softfp8.float16)),
                ("bf16-promote4", dict(accumulator=softfp8.bfloat16, promote_every=4)))
        pairs = [(softfp8.e4m3, softfp8.e5m2)]
        yield from model_cases(pairs, ((2, 9, 1030), (1, 3, 1024)), "fma16-blocks", accs)
        # a binary32 running sum that overflows (mm_nrw_promote, every level: float16-like
        # precision, direct sums): chunks of one product 1.7578 2^113 each, below the kernel's
        # top binade (2^114), 18,800 of them sum past 2^128 in row 0 (its block declined: the
        # generic kernel, overflow flag), not in row 1 (signs alternating); a float64 output
        # keeps the infinity without an overflow of its own
        acc = softfp8.Accumulation(accumulator=softfp8.format(exp_bits=5, man_bits=10, bias=-84,
                                                              name="e5m10b-84"), promote_every=1)
        big = softfp8.format(exp_bits=2, man_bits=3, bias=-55, specials="fn", name="e2m3fnb-55")
        a = np.full((2, 18800), 1.875 * 2.0 ** 56)
        a[1, ::2] = -a[1, ::2]
        a = a.astype(big.dtype)
        b = np.full((18800, 16), 1.875 * 2.0 ** 56).astype(big.dtype)
        for od in (np.float64, np.float32):
            yield mcase(f"e2m3fnb-55/matmul-acc-e5m10b-84-promote1->{_odid(od)}/2x18800x16/promoted-overflow",
                        lambda g, od=od: softfp8.matmul(a, b, out_dtype=od, accumulation=acc), 2 * 16, S.CONFIGS[0])

    def kernels():
        # the narrow-accumulator kernels (mm_narrow.c, model_fma16): float16 / bfloat16 / 8-bit
        # accumulators, the direct sums and the sums rounded to odd (products wider than the
        # accumulator: e5m2), promotion into binary32 / float16 / bfloat16 running sums, product
        # formats exact within their range (beyond it the block is declined), rows across the
        # 16-column vectors and the 128-column blocks, subnormal sums (tiny) and overflow (top)
        accs = (("f16", dict(accumulator=softfp8.float16)),
                ("bf16", dict(accumulator=softfp8.bfloat16)),
                ("e5m2", dict(accumulator=softfp8.e5m2)),
                ("f16-promote7", dict(accumulator=softfp8.float16, promote_every=7)),
                ("bf16-promote5-f16", dict(accumulator=softfp8.bfloat16, promote_every=5, promoted=softfp8.float16)),
                ("f16-promote3-bf16", dict(accumulator=softfp8.float16, promote_every=3, promoted=softfp8.bfloat16)),
                ("prod-f16-acc-f16", dict(product=softfp8.float16, accumulator=softfp8.float16)),
                ("prod-bf16-acc-f32-promote4", dict(product=softfp8.bfloat16, accumulator=np.float32,
                                                    promote_every=4)))
        shapes = ((2, 9, 127), (1, 20, 128), (2, 17, 129), (1, 70, 257), (3, 0, 130), (2, 5, 15), (1, 3, 33))
        pairs = [(softfp8.e4m3, softfp8.e4m3), (softfp8.e5m2, softfp8.e4m3), (softfp8.e2m1, softfp8.e2m1)]
        yield from model_cases(pairs, shapes, "nrw-blocks", accs)
        # a product format the formats' ranges fail (E5M2 x E4M3 into float16) whose products
        # in the data are float16 numbers (mm_model.c byte_range): lowest product bit 2^-24,
        # float16's unit (taken), and 2^-25 (a product below it rounds: declined)
        g = rng_of("nrw-byte-range")
        for low in (-15, -16):
            a = g.choice(np.array([2.0 ** low, -3 * 2.0 ** low, 0.75, -1.5, 12.0, -0.0]), (3, 30))
            b = g.choice(np.array([2.0 ** -9, -3 * 2.0 ** -9, 0.5, -2.0, 1.25, 0.0]), (30, 140))
            a[0, 0], b[0, 0] = 2.0 ** low, 2.0 ** -9
            a, b = a.astype(softfp8.e5m2), b.astype(softfp8.e4m3)
            for name, kw in (accs[6], ("prod-f16-acc-f32-promote4", dict(product=softfp8.float16,
                                                                        accumulator=np.float32, promote_every=4))):
                acc = softfp8.Accumulation(**kw)
                for env in S.CONFIGS[:4]:
                    yield mcase(f"e5m2xe4m3/matmul-acc-{name}/3x30x140/low{low - 9}/{S.env_id(env)}",
                                lambda g_, a=a, b=b, acc=acc: softfp8.matmul(a, b, out_dtype=np.float32,
                                                                             accumulation=acc), 3 * 140, env)
        # every deterministic environment (the accumulator takes the context's rounding) with
        # each kind of accumulator, on sums that round below 2^emin and sums of mixed magnitudes
        i = 0
        for name, kw in accs[:3] + accs[6:7]:
            acc = softfp8.Accumulation(**kw)
            for env in S.CONFIGS:
                kind = ("tiny", "wide", "small")[i % 3]
                i += 1
                a, b = operands(softfp8.e4m3, softfp8.e4m3, 2, 40, 150, kind, "nrw-envs")
                yield mcase(f"e4m3/matmul-acc-{name}/2x40x150/{kind}/{S.env_id(env)}",
                            lambda g, a=a, b=b, acc=acc: softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc),
                            2 * 150, env)

    def wide():
        # 9..16-bit operands (mm_model.c wide_range) into narrow accumulators: the products are
        # wider than the accumulator, so nearest even takes the sums rounded to odd (AVX2: TwoSum)
        accs = (("f16", dict(accumulator=softfp8.float16)),
                ("bf16", dict(accumulator=softfp8.bfloat16)),
                ("bf16-rz", dict(accumulator=softfp8.bfloat16, rounding="toward_zero")),
                ("bf16-promote5", dict(accumulator=softfp8.bfloat16, promote_every=5)),
                ("f16-promote3-bf16", dict(accumulator=softfp8.float16, promote_every=3, promoted=softfp8.bfloat16)))
        yield from model_cases(WIDE_PAIRS, ((3, 130, 65), (2, 17, 129), (1, 33, 1)), "fma16-wide", accs)
        # binary32 sums that round onto the accumulator's midpoint: 256 + (1 - 2^-16) is 257 -
        # 2^-16, whose nearest binary32 is 257, bfloat16's midpoint between 256 and 258; rounded
        # to odd it is 257 - 2^-15 (to 256), a wrong odd step gives 257 + 2^-15 (to 258); both
        # signs, the pair in either order and at several lane positions
        a = np.zeros((4, 3), np.float32)
        a[0], a[1] = (256.0, 1 - 2.0 ** -8, 0.0), (-256.0, -(1 - 2.0 ** -8), 0.0)
        a[2], a[3] = (0.0, 1 - 2.0 ** -8, 256.0), (3.0, 1 - 2.0 ** -8, 0.0)
        b = np.zeros((3, 24), np.float32)
        b[0, ::3], b[1, ::3], b[2, ::3] = 1.0, 1 + 2.0 ** -8, 1.0
        b[0, 1::3], b[1, 1::3] = 1.0, -(1 + 2.0 ** -8)
        b[:, 2::3] = 2.0 ** np.arange(3)[:, None] - 1
        a, b = a.astype(softfp8.float16), b.astype(softfp8.float16)
        for name, kw in accs[1:2] + accs[3:4]:
            acc = softfp8.Accumulation(**kw)
            for env in S.CONFIGS[:2]:
                yield mcase(f"float16/matmul-acc-{name}/4x3x24/midpoint/{S.env_id(env)}",
                            lambda g_, acc=acc: softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc), 96, env)
        # sums just below float16's 2^emin = 2^-14 whose nearest (or upward) binary32 is 2^-14
        # itself: 2^-14 - 2^-40 and kin, products far below the accumulator's unit (tininess
        # tracked, mm_model.c nrw_params: the odd sums at level 1 only); tiny before rounding,
        # not after; every mode and tininess rule, both signs; each output in 16 columns (whole
        # vectors: a padding column's zero sum would send its vector down the odd route)
        a = np.array([[2.0 ** -7, 2.0 ** -20, 2.0 ** -22]] * 2, np.float32) * np.array([[1.0], [-1.0]], np.float32)
        b = np.zeros((3, 16), np.float32)
        b[0] = 2.0 ** -7
        b[1] = np.array([-1.0, 1.0, -2.0 ** -1, -1.5, -2.0 ** -3, 2.0 ** -2, -1.0, 0.0] * 2) * 2.0 ** -20
        b[2] = np.array([0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 1.0, -1.0] * 2) * 2.0 ** -20
        a, b = a.astype(softfp8.float16), b.astype(softfp8.float16)
        acc = softfp8.Accumulation(accumulator=softfp8.float16)
        for env in S.CONFIGS:      # one output per call: the flags are a call's
            for i in range(2):
                for j in range(8):
                    yield mcase(f"float16/matmul-acc-f16/1x3x16/below-emin/{i},{j}/{S.env_id(env)}",
                                lambda g_, i=i, j=j: softfp8.matmul(a[i:i + 1], np.tile(b[:, j:j + 1], (1, 16)),
                                                                    out_dtype=np.float32, accumulation=acc), 16, env)

        # operands of few significant bits (E4M3 values in float16 / bfloat16): the binary32 sums
        # land on the accumulator's midpoints often, and the AVX2 midpoint test (mm_narrow.c,
        # q->mid) hands the rest of the products of a call to the rounding to odd after 32 of
        # them (the accumulators carried over); some values 2^-10 smaller make products below
        # float16's subnormal unit (tininess tracked across the hand-over); long and promoted rows,
        # column groups of 8, 4, 2 and 1 vectors
        g = rng_of("nrw-mid-handover")
        for fmt, accn in ((softfp8.float16, "float16"), (softfp8.bfloat16, "bfloat16")):
            for m, k, p in ((3, 100, 130), (2, 70, 9), (1, 48, 33)):
                a = (g.standard_normal((m, k)) * 2).astype(softfp8.e4m3).astype(np.float64)
                b = (g.standard_normal((k, p)) * 2).astype(softfp8.e4m3).astype(np.float64)
                a[:, ::7] *= 2.0 ** -10
                a, b = a.astype(fmt), b.astype(fmt)
                for pe in (None, 40):
                    acc = softfp8.Accumulation(accumulator=getattr(softfp8, accn), promote_every=pe)
                    for env in S.CONFIGS[:4]:
                        yield mcase(f"{fmt.name}/matmul-acc-{accn}-promote{pe}/{m}x{k}x{p}/e4m3-values/"
                                    f"{S.env_id(env)}",
                                    lambda g_, a=a, b=b, acc=acc: softfp8.matmul(a, b, out_dtype=np.float32,
                                                                                 accumulation=acc), m * p, env)

    return {"models": models, "blocks": blocks, "kernels": kernels, "wide": wide}


# --------------------------------------------------------------------------
# softfp8.Accumulation's orders under the matrix-unit entry (mm_orders.c: path "orders")

# shapes across the path's blocks: 8-lane (AVX2) and 16-lane (AVX-512) vectors, 32 / 128
# columns per kernel call, 128-column groups; pair_tree's base cases (k = 1, 2, 3) and
# splits (odd k); k = 0 (the generic kernel)
ORDER_SHAPES = ((1, 1, 1), (2, 2, 9), (3, 3, 16), (2, 5, 17), (1, 4, 33), (2, 0, 9), (2, 17, 64), (1, 31, 65),
                (2, 33, 127), (1, 7, 128), (2, 16, 129), (1, 130, 31), (1, 9, 257))
ORDER_ACCS = (
    ("pairwise", dict(accumulator=np.float32, order="pairwise")),
    ("kahan", dict(accumulator=np.float32, order="kahan")),
    ("sequential", dict(accumulator=np.float32)),
    ("pairwise-promote4", dict(accumulator=np.float32, order="pairwise", promote_every=4)),
    ("kahan-promote7", dict(accumulator=np.float32, order="kahan", promote_every=7)),
    ("sequential-promote3", dict(accumulator=np.float32, promote_every=3)),
    ("pairwise-promote64", dict(accumulator=np.float32, order="pairwise", promote_every=64)),
)
# left to the generic kernel: another accumulator, rounding or running sum, a product format
ORDER_DECLINED = (
    ("kahan-f16", dict(accumulator=softfp8.float16, order="kahan")),
    ("pairwise-rz", dict(accumulator=np.float32, order="pairwise", rounding="toward_zero")),
    ("kahan-promote4-bf16", dict(accumulator=np.float32, order="kahan", promote_every=4, promoted=softfp8.bfloat16)),
    ("pairwise-prod-bf16", dict(accumulator=np.float32, order="pairwise", product=softfp8.bfloat16)),
)
ORDER_OUT = (np.float32, np.float64, softfp8.bfloat16, softfp8.e4m3, np.float16)
ORDER_KINDS = ("small", "any", "top", "tiny", "cancel", "wide")


def order_cases(pairs, shapes, tag, accs, kinds=ORDER_KINDS, outs=ORDER_OUT):
    """softfp8.matmul(a, b, c, accumulation=Accumulation(order=...)) with and without
    addends (normal, special, zero), output dtypes rotating; nearest-even contexts on
    every other case (the accumulator follows the context's rounding)."""
    i = 0
    for fa, fb in pairs:
        for (m, k, p) in shapes:
            for kind in kinds:
                name, kw = S.rotate(accs, i)
                acc = softfp8.Accumulation(**kw)
                od = S.rotate(outs, i // 2)
                env = S.CONFIGS[i % 4] if i % 2 == 0 else S.rotate(S.SOME, i // 2)
                cadd = S.rotate((None, "normal", "special", "zero", "normal"), i)
                if kw.get("order", "sequential") == "sequential" and cadd is None:
                    cadd = "normal"   # the sequential order comes here with an addend only
                i += 1
                a, b = operands(fa, fb, m, k, p, kind, tag)
                c = None if cadd is None else _addend_values(_od(od), (m, p), cadd, rng_of("order-c", tag, i))
                yield mcase(f"{S.fid(fa)}x{S.fid(fb)}/matmul-{name}->{_odid(od)}/{_shape_id(m, k, p)}/{kind}/"
                            f"c={cadd}/{S.env_id(env)}", lambda g, a=a, b=b, c=c, acc=acc, od=od: softfp8.matmul(
                                a, b, c, out_dtype=_od(od), accumulation=acc), m * p, env)


ORDER_PAIRS = [(softfp8.e4m3, softfp8.e4m3), (softfp8.e5m2, softfp8.e4m3), (softfp8.float16, softfp8.float16),
               (softfp8.bfloat16, softfp8.bfloat16), (softfp8.e4m3fnuz, softfp8.e5m2), (FNUZ_TESLA[0], softfp8.e5m2)]


@register("orders", "matrix", "Accumulation orders (pairwise, Kahan, sequential with an addend), binary32 "
          "accumulator rounded to nearest even: hardware binary32 sums of exact products", tables=False,
          no_coverage=("declined",))
def _orders():
    def presets():
        yield from order_cases(ORDER_PAIRS, ORDER_SHAPES, "orders", ORDER_ACCS)

    def ranges():
        # products outside binary32 for some rows / columns only (custom formats whose values
        # reach 2^-126 / 2^63; bfloat16's whole range): those outputs are the generic
        # kernel's, their columns zeroed in a private copy for the others; sums that
        # overflow binary32 (the group goes to the generic kernel); operand values that
        # are not binary32 numbers (EXTREME: every row the generic kernel's)
        pairs = [F32_PORTABLE, (F32_HUGE, F32_HUGE), (softfp8.bfloat16, softfp8.float16), (EXTREME[0], softfp8.e4m3),
                 (S.NARROW[3], S.MID[1])]
        yield from order_cases(pairs, ((2, 9, 127), (1, 20, 128), (2, 17, 129), (3, 3, 33)), "orders-ranges",
                               ORDER_ACCS, kinds=("wide", "top", "tiny", "any"))
        # rows 0 and 1 overflow (products near 2^123.4 of one sign), rows 2 and 3 cancel
        x = np.full((4, 70), 3.0 * 2.0 ** 60)
        x[1] *= -1
        x[2:, 1::2] *= -1
        y = np.full((70, 130), 3.5 * 2.0 ** 60)
        y[::3] = 3.0 * 2.0 ** 60
        a, b = x.astype(F32_HUGE.dtype), y.astype(F32_HUGE.dtype)
        for name, kw in ORDER_ACCS[:3]:
            acc = softfp8.Accumulation(**kw)
            c = np.ones((4, 130), np.float32)
            yield mcase(f"e4m3fnb-46/matmul-{name}/4x70x130/overflow", lambda g, a=a, b=b, c=c, acc=acc:
                        softfp8.matmul(a, b, c, out_dtype=np.float32, accumulation=acc), 4 * 130, S.CONFIGS[0])

    def tables():
        # 9..16-bit operands read often enough for the decoding table (mm_orders.c decoder_init:
        # at least 4,096 codes; each code decoded when first read): codes from a small pool, so
        # most reads find their code done, with subnormals, NaN and infinity among them; a
        # 12-bit format (codes above the width share their entry with the code below it)
        e5m6 = softfp8.format(exp_bits=5, man_bits=6, bias=15, name="e5m6")
        g = rng_of("orders-tables")
        for fmt in (softfp8.float16, softfp8.bfloat16, e5m6):
            c, v = S.values(fmt)
            fin = np.isfinite(v) & (np.abs(np.where(np.isfinite(v), v, 0)) < 64)
            pool = np.concatenate([g.choice(c[fin], 300), c[fin & (v != 0)][:3]])   # the three least: subnormal
            for (m, k, p), bad in (((40, 110, 40), False), ((37, 111, 45), True)):
                use = np.concatenate([pool, c[~np.isfinite(v)][:2]]) if bad else pool
                a, b = g.choice(use, (m, k)), g.choice(use, (k, p))
                a = S.above_width(fmt, a.astype(fmt.storage).reshape(-1), g)
                a, b = S.as_dtype(a.reshape(-1), fmt).reshape(m, k), S.as_dtype(b.reshape(-1), fmt).reshape(k, p)
                for name, kw in ORDER_ACCS[:3]:
                    acc = softfp8.Accumulation(**kw)
                    yield mcase(f"{S.fid(fmt)}/matmul-{name}/{_shape_id(m, k, p)}/pool/specials={bad}",
                                lambda g_, a=a, b=b, acc=acc: softfp8.matmul(a, b, out_dtype=np.float32,
                                                                             accumulation=acc), m * p, S.CONFIGS[0])

    def layouts():
        a, b = operands(softfp8.e4m3, softfp8.e4m3, 6, 40, 150, "wide", "orders-layouts")
        c = _addend_values(np.float32, (150,), "normal", rng_of("orders-layouts-c"))
        for name, kw in ORDER_ACCS[:3]:
            acc = softfp8.Accumulation(**kw)
            for way, f in (("strided", lambda g, acc=acc: softfp8.matmul(a[::2, ::3], b[::3, ::2], c[::2],
                                                                          out_dtype=np.float32, accumulation=acc)),
                           ("fortran", lambda g, acc=acc: softfp8.matmul(np.asfortranarray(a), np.asfortranarray(b),
                                                                         c, out_dtype=np.float32, accumulation=acc)),
                           ("batch", lambda g, acc=acc: softfp8.matmul(np.stack([a, a[::-1]]), b, c,
                                                                       out_dtype=np.float32, accumulation=acc))):
                yield mcase(f"e4m3/matmul-{name}/{way}", f, 6 * 150, S.CONFIGS[0])

    def zeros():
        # signed zeros everywhere (operands mostly +-0, addends +-0): the zero signs of the
        # -0 starts, of every tree node, Kahan step and promotion, in every kernel
        g = rng_of("orders-zeros")
        accs = ORDER_ACCS + (("sequential-promote1", dict(accumulator=np.float32, promote_every=1)),
                             ("pairwise-promote2", dict(accumulator=np.float32, order="pairwise", promote_every=2)))
        for t, (name, kw) in enumerate(accs):
            acc = softfp8.Accumulation(**kw)
            for (m, k, p) in ((3, 1, 17), (2, 2, 33), (2, 5, 129), (1, 6, 16)):
                vals = np.array([0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 1.0, -0.5], np.float32)
                a = g.choice(vals, (m, k)).astype(softfp8.e4m3)
                b = g.choice(vals, (k, p)).astype(softfp8.e4m3)
                for cadd in ((None, "zero") if kw.get("order") else ("zero",)):
                    c = None if cadd is None else _addend_values(np.float32, (m, p), cadd, g)
                    yield mcase(f"e4m3/matmul-{name}/{_shape_id(m, k, p)}/zeros/c={cadd}",
                                lambda g, a=a, b=b, c=c, acc=acc: softfp8.matmul(a, b, c, out_dtype=np.float32,
                                                                                 accumulation=acc), m * p,
                                S.CONFIGS[0])

    def declined():
        yield from order_cases(ORDER_PAIRS[:2], ((2, 9, 17), (1, 33, 3)), "orders-declined", ORDER_DECLINED,
                               kinds=("small", "any"))

    def leaves():
        # every k of 1 .. 40 and a few more, pairwise: every leaf of the kernels' unrolled trees
        # (up to 16 products: two leaves of at most eight) and every split above them, on
        # float16 / bfloat16 operands of wide exponents, whose 22- / 16-bit products make
        # the sums round (so that another association changes results); rows of 16 and 24
        # columns (AVX2 vectors, whole and not)
        pw = dict(accumulator=np.float32, order="pairwise")
        for t, k in enumerate(tuple(range(1, 41)) + (47, 63, 95, 130)):
            fmt = (softfp8.float16, softfp8.bfloat16)[t % 2]
            kw = pw if t % 3 else dict(pw, promote_every=(5, 11, 16)[t % 9 // 3])
            acc = softfp8.Accumulation(**kw)
            a, b = operands(fmt, fmt, 3, k, 24 - 8 * (t % 2), "wide", "orders-leaves")
            yield mcase(f"{S.fid(fmt)}/matmul-pairwise/{_shape_id(3, k, b.shape[1])}/leaves",
                        lambda g, a=a, b=b, acc=acc: softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc),
                        a.shape[0] * b.shape[1], S.CONFIGS[0])

    return {"presets": presets, "ranges": ranges, "tables": tables, "layouts": layouts, "zeros": zeros,
            "declined": declined,
            "leaves": leaves}


# --------------------------------------------------------------------------
# the block-FMA model of matrix units (softfp8.matmul(accumulation=BlockFMA / profile))

UNIT_SHAPES = ((1, 1, 1), (2, 3, 5), (3, 4, 2), (2, 15, 3), (3, 16, 4), (2, 17, 3), (2, 31, 5), (3, 32, 2),
               (1, 33, 7), (4, 64, 3), (2, 65, 4), (3, 100, 2), (0, 4, 3), (3, 0, 2))
UNIT_KINDS = ("small", "any", "top", "tiny", "cancel", "wide")


def _tf32(codes_f32):
    """float32 operands made TF32 (the low 13 fraction bits cleared; NaNs kept)."""
    u = codes_f32.view(np.uint32) & np.uint32(0xFFFFE000)
    return u.view(np.float32)


def _unit_operands(fa, fb, m, k, p, kind, key):
    if fa == "tf32":
        g = rng_of("unit", key, m, k, p, kind)
        a, b = operands(softfp8.float16, softfp8.float16, m, k, p, kind, key)   # values, then TF32 spread
        with np.errstate(all="ignore"):
            sa = _tf32((a.astype(np.float32) * np.float32(2.0 ** float(g.integers(-100, 100)))).astype(np.float32))
            sb = _tf32((b.astype(np.float32) * np.float32(2.0 ** float(g.integers(-100, 100)))).astype(np.float32))
        return sa, sb
    return operands(fa, fb, m, k, p, kind, key)


def _addend_values(out, shape, kind, g):
    n = int(np.prod(shape))
    if kind == "zero":
        v = np.where(g.random(n) < 0.5, -0.0, 0.0)
    elif kind == "special":
        pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -3e-39, 6e-8, -1e-5, 65504.0, 3e38, 1.0])
        v = g.choice(pool, n)
    else:
        v = g.standard_normal(n) * 2.0 ** g.integers(-30, 30, n)
    with np.errstate(all="ignore"):
        return np.asarray(v, dtype=np.float64).astype(out).reshape(shape)


def unit_cases(rows, shapes, tag, kinds=UNIT_KINDS, addends=(None, "normal", "special", "zero")):
    """rows: (name, BlockFMA or profile name, fa, fb, output dtype)"""
    i = 0
    for name, model, fa, fb, out in rows:
        acc = softfp8.Accumulation.profile(model) if isinstance(model, str) else model
        for (m, k, p) in shapes:
            for kind in kinds:
                cadd = S.rotate(addends, i)
                i += 1
                a, b = _unit_operands(fa, fb, m, k, p, kind, tag)
                c = None if cadd is None else _addend_values(out, (m, p), cadd, rng_of("unit-c", tag, i))
                fid_a = fa if isinstance(fa, str) else S.fid(fa)
                fid_b = fb if isinstance(fb, str) else S.fid(fb)
                yield mcase(f"{fid_a}x{fid_b}/matmul-{name}->{np.dtype(out).name}/{_shape_id(m, k, p)}/{kind}/"
                            f"c={cadd}", lambda g, a=a, b=b, c=c, acc=acc, out=out: softfp8.matmul(
                                a, b, c, out_dtype=out, accumulation=acc), m * p, S.CONFIGS[0])


def _nvidia_rows():
    e4, e5, f16, bf = softfp8.e4m3, softfp8.e5m2, softfp8.float16, softfp8.bfloat16
    rows = []
    for unit in ("v100", "a100", "ada", "h100", "b200"):
        mu = softfp8.Accumulation.profile(unit)
        for fin in mu.inputs:
            fa = {"float16": f16, "bfloat16": bf, "e4m3": e4, "e5m2": e5, "tf32": "tf32"}[fin]
            for fo in mu.outputs(fin):
                rows.append((f"{unit}-{fin}", unit, fa, fa, np.float32 if fo == "float32" else np.float16))
            if fin == "e4m3":
                rows.append((f"{unit}-e4m3xe5m2", unit, e4, e5, np.float32))
    return rows


def _param_rows():
    B = softfp8.BlockFMA
    e4, e5, f16, bf = softfp8.e4m3, softfp8.e5m2, softfp8.float16, softfp8.bfloat16
    models = [
        ("b1-x0", B(block=1, extra_bits=0)),
        ("b2-x-20-up", B(block=2, extra_bits=-20, rounding="upward")),
        ("b4-x-1-down", B(block=4, extra_bits=-1, rounding="downward")),
        ("b8-x3-away-sticky", B(block=8, extra_bits=3, rounding="nearest_away", sticky=True)),
        ("b16-x16-rne-norm", B(block=16, extra_bits=16, rounding="nearest_even", normalized_products=True)),
        ("b32-x5-sticky-min0", B(block=32, extra_bits=5, sticky=True, min_exponent=0)),
        ("b5-x35", B(block=5, extra_bits=35, rounding="nearest_even")),
        ("b64-x1-nosub", B(block=64, extra_bits=1, input_subnormals=False, output_subnormals=False)),
        ("b3-x-10-min-20-norm", B(block=3, extra_bits=-10, min_exponent=-20, normalized_products=True,
                                  rounding="upward")),
        ("b100-x-5-rne", B(block=100, extra_bits=-5, rounding="nearest_even")),
    ]
    pairs = [(e4, e4, np.float32), (e5, e4, np.float32), (f16, f16, np.float32), (bf, bf, np.float16),
             (softfp8.float4_e2m1fn, softfp8.float6_e3m2fn, np.float32), (softfp8.e4m3fnuz, e5, np.float16),
             (softfp8.cfloat8_143(bias=20), softfp8.hfp8_152, np.float32), ("tf32", "tf32", np.float32),
             (softfp8.format(exp_bits=5, man_bits=9, bias=-20, name="e5m9b-20"), f16, np.float32)]
    rows = []
    for i, (name, md) in enumerate(models):
        for j in range(3):
            fa, fb, out = S.rotate(pairs, 3 * i + j)
            rows.append((name, md, fa, fb, out))
    return rows


@register("block_fma", "matrix", "matrix-unit block-FMA model (BlockFMA, the NVIDIA and AMD profiles): operands "
          "decoded once, blocks summed in 64-bit integers, or exactly in binary64 (exact alignment), or by "
          "binary32 trees (pairwise grouping)", tables=False, no_coverage=("declined",))
def _block_fma():
    def profiles():
        yield from unit_cases(_nvidia_rows(), UNIT_SHAPES, "unit-profiles")

    def params():
        yield from unit_cases(_param_rows(), UNIT_SHAPES[1:12:2], "unit-params")

    def declined():
        # models the path leaves to the generic kernel (pairwise grouping, exact alignment,
        # promotion): still equal
        B = softfp8.BlockFMA
        rows = [("promote", B(block=4, extra_bits=2, promote_every=8), softfp8.e4m3, softfp8.e4m3, np.float32),
                ("pairwise-away", B(block=4, extra_bits=None, grouping="pairwise", rounding="nearest_away"),
                 softfp8.bfloat16, softfp8.bfloat16, np.float32),
                ("pairwise-f16out", B(block=4, extra_bits=None, grouping="pairwise"), softfp8.float16,
                 softfp8.float16, np.float16),
                ("pairwise-b65", B(block=65, extra_bits=None, grouping="pairwise"), softfp8.e4m3, softfp8.e4m3,
                 np.float32)]
        yield from unit_cases(rows, ((2, 9, 3), (1, 33, 2), (2, 70, 40)), "unit-declined", kinds=("small", "any"))

    def exact_pair():
        # the exact alignment (MI100) and the pairwise grouping (MI250): the profiles and every
        # parameter these kernels read, K across blocks and the 512-product chunks of the
        # status flags, columns across the 32-output groups
        rows = _exact_pair_rows()
        yield from unit_cases(rows[:4], ((1, 1, 1), (2, 2, 3), (3, 3, 5), (2, 5, 33), (3, 17, 40), (2, 67, 31),
                                         (4, 130, 65), (0, 4, 3)), "unit-exact-pair")
        yield from unit_cases(rows[4:], ((1, 1, 1), (2, 2, 3), (3, 3, 5), (2, 5, 33), (3, 17, 40), (4, 130, 65)),
                              "unit-exact-pair-params")
        yield from unit_cases(rows, ((1, 1030, 33),), "unit-exact-pair-long", kinds=("small", "wide"),
                              addends=(None, "normal"))

    def exact_pair_edges():
        yield from _exact_pair_edges()

    def late():
        # the two-term alignments: the addend after the products (MI300X fp16 / bf16 / tf32) and
        # odd/even groups (MI300X FNUZ FP8), every alignment rounding, extra addend bits,
        # the zero addend's exponent, products kept in the output's range
        B = softfp8.BlockFMA
        f16, bf, e4f, e5f = softfp8.float16, softfp8.bfloat16, softfp8.e4m3fnuz, softfp8.e5m2fnuz
        rows = [("mi300x-f16", "mi300x", f16, f16, np.float32), ("mi300x-bf16", "mi300x", bf, bf, np.float32),
                ("mi300x-tf32", "mi300x", "tf32", "tf32", np.float32),
                ("mi300x-e4fnuz", "mi300x", e4f, e4f, np.float32), ("mi300x-e5fnuz", "mi300x", e5f, e5f, np.float32),
                ("mi300x-e4xe5fnuz", "mi300x", e4f, e5f, np.float32)]
        for i, ar in enumerate(("toward_zero", "downward", "upward", "nearest_even")):
            X = (0, 3, 7, 32)[i]
            z = (None, -126, 5, -20)[i]
            rnd = ("nearest_even", "toward_zero", "upward", "nearest_away")[i]
            rows.append((f"late-{ar}-X{X}-z{z}", B(block=(8, 3, 1, 16)[i], extra_bits=(1, 0, 9, 2)[i], rounding=rnd,
                                                    addend="late", alignment_rounding=ar, addend_extra_bits=X,
                                                    zero_addend_exponent=z, product_overflow=bool(i % 2)),
                         (f16, softfp8.e4m3, bf, e5f)[i], (f16, softfp8.e5m2, bf, e4f)[i],
                         (np.float32, np.float16, np.float32, np.float32)[i]))
            rows.append((f"oddeven-{ar}-X{X}-z{z}", B(block=(16, 5, 2, 7)[i], extra_bits=(1, 4, 0, 12)[i],
                                                       rounding=rnd, grouping="odd_even", alignment_rounding=ar,
                                                       addend_extra_bits=X, zero_addend_exponent=z,
                                                       normalized_products=i == 2, min_exponent=(None, -10)[i % 2]),
                         (e4f, f16, softfp8.e4m3, bf)[i], (e4f, f16, softfp8.e4m3, bf)[i],
                         (np.float32, np.float32, np.float16, np.float32)[i]))
        # a zero addend's exponent above the products: they are aligned to it with X extra bits
        rows += [(f"late-z{z}-{ar}", B(block=4, extra_bits=1, addend="late", alignment_rounding=ar,
                                       zero_addend_exponent=z, addend_extra_bits=2), softfp8.float16, softfp8.float16,
                  np.float32) for z, ar in ((5, "toward_zero"), (0, "nearest_even"))]
        yield from unit_cases(rows, ((1, 1, 1), (2, 15, 3), (3, 16, 4), (2, 17, 17), (12, 40, 33), (0, 4, 3)),
                              "unit-late")

    def routes():
        # many rows and column groups (16 outputs of a row at a time): the SIMD kernels'
        # routes after the first inexact output (binary32 products, wide 64-bit terms),
        # groups across the 16-lane boundary, every kind of operand
        B = softfp8.BlockFMA
        rows = [r for r in _nvidia_rows() if r[0] in ("b200-e5m2", "h100-e4m3", "ada-e4m3xe5m2", "h100-float16",
                                                         "a100-bfloat16", "v100-float16", "h100-tf32")]
        rows += [("b16-x16", B(block=16, extra_bits=16), softfp8.e4m3, softfp8.e5m2, np.float32),
                 ("b7-x8-rne", B(block=7, extra_bits=8, rounding="nearest_even"), softfp8.float16, softfp8.float16,
                  np.float32),
                 ("b32-x-3-up", B(block=32, extra_bits=-3, rounding="upward"), softfp8.e5m2, softfp8.e5m2,
                  np.float16)]
        yield from unit_cases(rows, ((12, 40, 33), (5, 97, 16), (17, 16, 5)), "unit-routes",
                              kinds=("small", "any", "cancel", "wide"), addends=(None, "normal"))

    def layouts():
        # operands the engine reads through their strides: transposed (Fortran order), every
        # other row / column, negative strides, batched with broadcasting, a broadcast addend
        mu = softfp8.Accumulation.profile("h100")
        late = softfp8.Accumulation.profile("mi300x")
        cases = []
        for key, fmt, acc in (("h100-e4m3", softfp8.e4m3, mu), ("mi300x-f16", softfp8.float16, late),
                              ("h100-f16", softfp8.float16, mu), ("h100-tf32", "tf32", mu),
                              ("mi300x-tf32", "tf32", late)):
            # TF32: the lean 32-bit decoding (h100) and the 19-bit copies of sfp8mu_fp_tf32_gemm
            # (mi300x) read the operands through their strides (values without NaN: a NaN
            # keeps the binary32 codes, sfp8mu_fp_tf32_gemm declines)
            a, b = _unit_operands(fmt, fmt, 6, 70, 40, "small" if fmt == "tf32" else "any", f"unit-layouts-{key}")
            g = rng_of("unit-layouts-c", key)
            c = (g.standard_normal(40) * 4).astype(np.float32)
            views = {
                "fortran": (np.asfortranarray(a), np.asfortranarray(b), None),
                "strided": (a[::2, ::2], b[::2, ::3], None),
                "reversed": (a[::-1, ::-1], b[::-1, :], None),
                "batched": (np.stack([a, a[::-1]]), b[None], None),
                "c-broadcast": (a, b, c),
            }
            for vk, (x, y, cc) in views.items():
                cases.append((f"{key}/{vk}", x, y, cc, acc))
        for cid, x, y, cc, acc in cases:
            n = int(np.prod(np.broadcast_shapes(x.shape[:-1] + (1,), (1,) * (x.ndim - 1) + y.shape[-1:])))
            yield mcase(f"unit-layouts/{cid}", lambda g, x=x, y=y, cc=cc, acc=acc: softfp8.matmul(
                x, y, cc, out_dtype=np.float32, accumulation=acc), max(n, 1), S.CONFIGS[0])

    def carry():
        # the binary32 carry kernel (mm_units_fc.c): upward / downward with P = 24, toward zero
        # below 24 bits into float16, 32-bit chunks of one term (W = 29), 64-bit terms (W = 53),
        # units 2^ue outside binary32's normal range (min_exponent above, bf16 products near
        # 2^-126), and rows of one call split between it and the integer kernels
        B = softfp8.BlockFMA
        f16, bf, e4, e5 = softfp8.float16, softfp8.bfloat16, softfp8.e4m3, softfp8.e5m2
        rows = [("fc-up-x0", B(block=8, extra_bits=0, rounding="upward"), f16, f16, np.float32),
                ("fc-down-x6", B(block=12, extra_bits=6, rounding="downward", min_exponent=-130), bf, bf,
                 np.float32),
                ("fc-rz-x30", B(block=4, extra_bits=30), e5, e4, np.float32),
                ("fc-rz-f16out", B(block=16, extra_bits=2, min_exponent=-21), f16, f16, np.float16),
                ("fc-rne-min200", B(block=4, extra_bits=0, rounding="nearest_even", min_exponent=200), e4, e4,
                 np.float32),
                # 16-bit IEEE layouts of other biases (the lean decoding's fields and subnormal unit)
                ("fc-e6m9b60", B(block=8, extra_bits=0), softfp8.format(exp_bits=6, man_bits=9, bias=60,
                                                                         name="e6m9b60"), f16, np.float32),
                ("fc-e4m11b-40", B(block=4, extra_bits=2, rounding="nearest_even"),
                 softfp8.format(exp_bits=4, man_bits=11, bias=-40, name="e4m11b-40"), e5, np.float32),
                # 14-bit significands: products of up to 28 bits, no binary32 numbers -- the lean
                # decoding's measured widths send those rows to the integer kernels
                ("fc-e2m13-wide", B(block=4, extra_bits=2), softfp8.format(exp_bits=2, man_bits=13, bias=1,
                                                                             name="e2m13"),
                 softfp8.format(exp_bits=2, man_bits=13, bias=1, name="e2m13"), np.float32)]
        yield from unit_cases(rows, ((5, 37, 20), (9, 64, 33)), "unit-carry", addends=(None, "normal", "special"))
        g = rng_of("unit-carry-split")
        for scale, tag in ((-60.0, "bf16-2^-60"), (-63.5, "bf16-2^-63.5"), (62.0, "bf16-2^62")):
            a = (g.standard_normal((9, 40)) * 2.0 ** scale).astype(bf)
            b = (g.standard_normal((40, 21)) * 2.0 ** scale).astype(bf)
            a[5] = (g.standard_normal(40) * 2.0 ** 100).astype(bf)     # one chunk of rows to the integer kernels
            for acc in (softfp8.Accumulation.profile("a100"), B(block=8, extra_bits=1, rounding="nearest_even")):
                yield mcase(f"unit-carry/{tag}/{acc!r}", lambda g, a=a, b=b, acc=acc: softfp8.matmul(
                    a, b, out_dtype=np.float32, accumulation=acc), 9 * 21, S.CONFIGS[0])
        # one output whose only lost bits are a term that underflows to zero in binary32 once
        # scaled to the unit (a product 2^-122 under one of 2^120; a subnormal addend): the
        # call's inexact flag comes from it alone
        a1 = np.array([[2.0 ** 60, 2.0 ** -60]]).astype(bf)
        b1 = np.array([[2.0 ** 60], [2.0 ** -62]]).astype(bf)
        c1 = np.array([[np.uint32(8).view(np.float32)]])
        a2 = np.array([[2.0 ** 10, 0.0]]).astype(e5)
        for cid, x, y, cc, acc in (("product-underflow", a1, b1, None, softfp8.Accumulation.profile("a100")),
                                   ("addend-underflow", a2, a2.T.copy(), c1, softfp8.Accumulation.profile("ada"))):
            yield mcase(f"unit-carry/{cid}", lambda g, x=x, y=y, cc=cc, acc=acc: softfp8.matmul(
                x, y, cc, out_dtype=np.float32, accumulation=acc), 1, S.CONFIGS[0])

    def late_routes():
        # mm_units_late.c: the MI300X profiles (binary64 steps) and the other two-term models
        # (64-bit integer steps), K across the blocks (8, 16) and the chunks of lost-bit
        # tracking, columns across the 16 lanes, rows across the 4-row groups
        yield from unit_cases(_late_rows(), ((1, 1, 1), (5, 7, 17), (4, 8, 16), (3, 9, 33), (6, 16, 15),
                                             (2, 17, 3), (5, 33, 20), (9, 100, 18)), "unit-late-routes",
                              kinds=("small", "any", "cancel", "wide", "tiny"))
        # exact sums (small integers, no bit lost, no rounding): the lost-bit tracking runs in
        # every group; one output in the last group with bits lost
        g = rng_of("unit-late-exact")
        for i, (name, model, fa, fb, out) in enumerate(_late_rows()[:6]):
            acc = softfp8.Accumulation.profile(model) if isinstance(model, str) else model
            x = g.integers(-3, 4, (7, 48)).astype(np.float64)
            y = g.integers(-3, 4, (48, 40)).astype(np.float64)
            if i % 2:
                y[5, 39] = 0.375   # 3 * 2^-3: bits below the window of a block with larger products
                x[6, 5] = 2.0 ** -(10 if fa == softfp8.float16 else 3)
            c = None if i % 3 == 0 else g.integers(-64, 65, (7, 40)).astype(np.float32)
            x, y = x.astype(fa), y.astype(fb)
            yield mcase(f"unit-late-exact/{name}/{i}", lambda g, x=x, y=y, c=c, acc=acc, out=out: softfp8.matmul(
                x, y, c, out_dtype=out, accumulation=acc), 7 * 40, S.CONFIGS[0])

    def late_edges():
        yield from _late_edges()
        yield from _late_bytes_edges()

    def carry256():
        yield from _carry256_cases()

    return {"profiles": profiles, "params": params, "declined": declined, "late": late, "routes": routes,
            "layouts": layouts, "exact_pair": exact_pair, "exact_pair_edges": exact_pair_edges, "carry": carry,
            "late_routes": late_routes, "late_edges": late_edges, "carry256": carry256,
            "exact_pair_avx2": lambda: _exact_pair_avx2()}


def _carry256_cases():
    """The binary32 carry kernel at SIMD level 1 (mm_units_fc.c, sfp8mu_fc_rows256): every sum
    kind (32-bit T; chunks of 32-bit sums into binary64 ones, W = 25 and 29; wide terms summed
    in binary64, W = 31 .. 45 up to the 2^53 bound) with every rounding (MXCSR's direction),
    P < 24 into float16 from 64-bit sums, columns across the two 8-lane halves of a panel,
    exact sums (the lost-bit tracking throughout) with one inexact output in either half,
    block results carried to 2^128 (upward, nearest) or kept below it (toward zero,
    downward), and units and results at the lower limits (2^-127 units, float16 results
    below 2^-14: the range tests the kernel defers to the end of a call), the same after inexact
    rows (the kernels without lost bits), and B200's FP8 rows summed exactly (a bit one place
    below the unit: bounds, scan, running value; blocks that kind does not take)."""
    B = softfp8.BlockFMA
    f16, bf, e4, e5 = softfp8.float16, softfp8.bfloat16, softfp8.e4m3, softfp8.e5m2
    rows = []
    for rnd in ("toward_zero", "upward", "downward", "nearest_even"):
        r = rnd.split("_")[-1][:4]
        rows += [(f"c256-x2-b16-{r}", B(block=16, extra_bits=2, rounding=rnd, min_exponent=-133), f16, f16,
                  np.float32),
                 (f"c256-x6-b12-{r}", B(block=12, extra_bits=6, rounding=rnd), bf, bf, np.float32),
                 (f"c256-x8-b32-{r}", B(block=32, extra_bits=8, rounding=rnd, min_exponent=-133), e4, e5,
                  np.float32),
                 (f"c256-x0-b4-{r}", B(block=4, extra_bits=0, rounding=rnd), f16, f16, np.float32)]
    rows += [("c256-x8-b32-f16out", B(block=32, extra_bits=8), e5, e5, np.float16),
             ("c256-x2-b16-f16out", B(block=16, extra_bits=2), f16, f16, np.float16),
             ("c256-x22-b62-up", B(block=62, extra_bits=22, rounding="upward"), e4, e4, np.float32),
             ("c256-tf32-up", B(block=8, extra_bits=2, rounding="upward"), "tf32", "tf32", np.float32),
             # units above binary32's range from min_exponent alone (toward zero, 24 bits: rows
             # whose constants fc_body8 folds, spec), every term truncated to zero
             ("c256-min200-b4", B(block=4, extra_bits=0, min_exponent=200), f16, f16, np.float32),
             ("c256-min160-b8", B(block=8, extra_bits=2, min_exponent=160), bf, bf, np.float32)]
    yield from unit_cases(rows, ((5, 40, 9), (4, 33, 24), (3, 70, 17)), "unit-carry256",
                          kinds=("small", "any", "top", "cancel", "wide"), addends=(None, "normal", "special"))
    g = rng_of("unit-carry256")
    # exact sums: small integers (no bit lost, no rounding), one output with a lost bit in the
    # low or the high half of a panel (column 3 or 12 of 16, 20 of 24)
    for i, (name, model, fa, fb, out) in enumerate(rows[::3]):
        x = g.integers(-3, 4, (6, 40)).astype(np.float64)
        y = g.integers(-3, 4, (40, 24)).astype(np.float64)
        col = (3, 12, 20)[i % 3]
        y[7, col] = 0.375
        x[5, 7] = 2.0 ** -14
        x, y = x.astype(fa if fa != "tf32" else np.float32), y.astype(fb if fb != "tf32" else np.float32)
        yield mcase(f"unit-carry256-exact/{name}/{col}", lambda g, x=x, y=y, acc=model, out=out: softfp8.matmul(
            x, y, out_dtype=out, accumulation=acc), 6 * 24, S.CONFIGS[0])
    # block results at the top of binary32 (W = 24, unit 2^102, bf16 products below 2^128):
    # 2 (2^127 - 2^119) + (2^120 - 2^112) + (2^112 - 2^104) + 3 2^102 = 2^102 (2^26 - 1), rounded
    # up (upward, nearest even) 2^128, the output left to the generic kernel; toward zero /
    # downward 2^128 - 2^104; the even columns without the last product: 2^128 - 2^104 exactly
    top = 255 / 128
    a = np.array([[top * 2.0 ** 63, top * 2.0 ** 63, top * 2.0 ** 60, top * 2.0 ** 56, 1.5 * 2.0 ** 52, 0.0]] * 4)
    b = np.array([[2.0 ** 63] * 16, [2.0 ** 63] * 16, [2.0 ** 59] * 16, [2.0 ** 55] * 16, [2.0 ** 51] * 16,
                  [1.0] * 16])
    b[4, ::2] = 0.0
    b[:, 9] *= -1.0  # a negative result in the high half
    a[3] *= 0.5      # a row of results 2^127 - ..., in range in every direction
    for rnd in ("upward", "nearest_even", "toward_zero", "downward"):
        acc = B(block=8, extra_bits=1, rounding=rnd, min_exponent=-132)
        yield mcase(f"unit-carry256-top/{rnd}", lambda g, x=a.astype(bf), y=b.astype(bf), acc=acc: softfp8.matmul(
            x, y, out_dtype=np.float32, accumulation=acc), 4 * 16, S.CONFIGS[0])
    # block results at the low limits (the range tests' lower bounds): bfloat16 products
    # 2^-105 .. 2^-99 with W = 24, units 2^-129 .. 2^-123 (below 2^-126: the output left to the
    # generic kernel, its result a normal binary32 number); float16 outputs of 2^-16 .. 2^-12
    # (below 2^-14: below float16's normal range), one row carried a binade up
    a = np.array([[2.0 ** -52] * 12, [2.0 ** -53] * 12, [2.0 ** -51] * 12, [-(2.0 ** -50)] * 12])
    b = np.array([[2.0 ** (-51 + j % 3) * (-1) ** (j // 5) for j in range(16)]] * 12)
    for rnd in ("toward_zero", "nearest_even"):
        acc = B(block=8, extra_bits=1, rounding=rnd, min_exponent=-132)
        yield mcase(f"unit-carry256-low/{rnd}", lambda g, x=a.astype(bf), y=b.astype(bf), acc=acc: softfp8.matmul(
            x, y, out_dtype=np.float32, accumulation=acc), 4 * 16, S.CONFIGS[0])
    # the same rows after four with inexact results (spread exponents: bits lost), so that the
    # kernels for no lost bits run them (toward zero: the common rows' constants folded)
    x = np.vstack([g.standard_normal((4, 12)) * 2.0 ** g.integers(-60, -40, (4, 12)), a])
    yield mcase("unit-carry256-low/after-inexact", lambda g, x=x.astype(bf), y=b.astype(bf): softfp8.matmul(
        x, y, out_dtype=np.float32, accumulation=B(block=8, extra_bits=1, min_exponent=-132)), 8 * 16, S.CONFIGS[0])
    a = np.array([[2.0 ** -8, 0, 0], [2.0 ** -9, 0, 0], [2.0 ** -7, 0, 0], [2.0 ** -8, 2.0 ** -8, 0]])
    b = np.array([[2.0 ** (-7 + j % 3 - 1) * (-1) ** (j // 5) for j in range(16)]] * 3)
    yield mcase("unit-carry256-low/f16out", lambda g, x=a.astype(f16), y=b.astype(f16): softfp8.matmul(
        x, y, out_dtype=np.float16, accumulation=B(block=16, extra_bits=2)), 4 * 16, S.CONFIGS[0])
    # the exact kind (B200's FP8, W = 31): a block summed exactly when every product and the
    # running value is a multiple of the unit, by the exponents' bounds or the exact scan; here
    # one product has a bit one place below the unit, which the model drops (the exponents'
    # largest in one product: the bounds; or in two, their sum above the unit's exponent:
    # the scan), or the addend one below the bounds' unit and above the unit (kept); the
    # large products cancel, so that bit shows in the result
    s, b200 = 1.875, softfp8.Accumulation.profile("b200")
    for cid, av, bv, cv in (("bound", [2 ** 8, 2 ** 8, s * 2 ** -5], [2 ** 8, -2 ** 8, s * 2 ** -5], None),
                            ("scan", [2 ** 7, 2 ** 7, 2 ** 8, 2 ** -6, s * 2 ** -6],
                             [2 ** 7, -2 ** 7, 2 ** -6, 2 ** 8, s * 2 ** -6], None),
                            ("running", [2 ** 8, 1, 2 ** 8, 1], [1, 2 ** 8, -1, -2 ** 8], 2 ** 7 + 2 ** -16)):
        x, y = np.array([av] * 4, np.float64).astype(e4), np.array([[v] * 16 for v in bv]).astype(e4)
        c = None if cv is None else np.full((4, 16), cv, np.float32)
        yield mcase(f"unit-carry256-unit/{cid}", lambda g, x=x, y=y, c=c: softfp8.matmul(
            x, y, c, out_dtype=np.float32, accumulation=b200), 4 * 16, S.CONFIGS[0])
    # blocks the exact kind does not take (spread exponents) for more than eight blocks, then
    # ones it would: the tests stop after eight in turn
    x = g.standard_normal((4, 400)) * 2.0 ** g.integers(-7, 7, (4, 400))
    y = g.standard_normal((400, 16)) * 2.0 ** g.integers(-7, 7, (400, 16))
    x[:, 320:], y[320:] = g.standard_normal((4, 80)), g.standard_normal((80, 16))
    yield mcase("unit-carry256-unit/misses", lambda g, x=x.astype(softfp8.e5m2), y=y.astype(softfp8.e5m2):
                softfp8.matmul(x, y, out_dtype=np.float32, accumulation=b200), 4 * 16, S.CONFIGS[0])


def _late_rows():
    """MI300X's rows and two-term models of every parameter mm_units_late.c reads."""
    B = softfp8.BlockFMA
    f16, e4f, e5f, e4, e5 = softfp8.float16, softfp8.e4m3fnuz, softfp8.e5m2fnuz, softfp8.e4m3, softfp8.e5m2
    bf = softfp8.bfloat16
    # operands held scaled (products outside binary32's range): high and low exponent ranges
    hi = softfp8.format(exp_bits=5, man_bits=2, bias=-60, name="e5m2b-60")
    lo = softfp8.format(exp_bits=4, man_bits=3, bias=75, specials="fn", name="e4m3b75")
    rows = [("mi300x-f16", "mi300x", f16, f16, np.float32), ("mi300x-e4fnuz", "mi300x", e4f, e4f, np.float32),
            ("mi300x-e5fnuz", "mi300x", e5f, e5f, np.float32), ("mi300x-e4xe5fnuz", "mi300x", e4f, e5f, np.float32),
            ("mi300x-bf16", "mi300x", bf, bf, np.float32)]
    mi = softfp8.Accumulation.profile("mi300x").model("float16")
    fn = softfp8.Accumulation.profile("mi300x").model("e4m3fnuz")
    models = [
        # the binary64 steps with other windows, blocks, extra bits, min_exponent
        ("late-b3-x0-X0", mi.replace(block=3, extra_bits=0, addend_extra_bits=0), f16, e4, np.float32),
        ("late-b5-x4-X20-min", mi.replace(block=5, extra_bits=4, addend_extra_bits=20, min_exponent=-9),
         e5, f16, np.float32),
        ("oe-b7-x2-X3", fn.replace(block=7, extra_bits=2, addend_extra_bits=3), e4, e5, np.float32),
        ("oe-b32-x0-nosub", fn.replace(block=32, extra_bits=0, input_subnormals=False), e4f, e4f, np.float32),
        # the 64-bit integer steps: other roundings, zero exponents, X above 20, float16 results
        ("late-up-away", mi.replace(alignment_rounding="upward", rounding="nearest_away"), f16, f16, np.float32),
        ("late-tz-z5-f16out", mi.replace(alignment_rounding="toward_zero", zero_addend_exponent=5,
                                         rounding="upward"), f16, f16, np.float16),
        ("late-rne-X28-noz", mi.replace(alignment_rounding="nearest_even", addend_extra_bits=28,
                                        zero_addend_exponent=None, rounding="downward"), e4, e4, np.float32),
        ("oe-up-z-20-tz", fn.replace(alignment_rounding="upward", zero_addend_exponent=-20,
                                     rounding="toward_zero"), e4f, e5f, np.float32),
        ("oe-rne-x5-f16out", fn.replace(alignment_rounding="nearest_even", extra_bits=5, rounding="nearest_even",
                                        block=9), f16, f16, np.float16),
        ("oe-down-noz-X0", fn.replace(zero_addend_exponent=None, addend_extra_bits=0), e5f, e5f, np.float32),
        # operands held scaled: binary64 steps (MI300X roundings) and integer steps
        ("late-hi", mi, hi, e4, np.float32), ("oe-lo", fn.replace(block=6), lo, e5, np.float32),
        ("late-bf16xe4-x3", mi.replace(extra_bits=3, block=5), bf, e4, np.float32),
        ("late-bf16-up-f16out", mi.replace(alignment_rounding="upward", rounding="upward"), bf, bf, np.float16),
        ("oe-bf16-tz", fn.replace(alignment_rounding="toward_zero", block=8), bf, bf, np.float32),
    ]
    return rows + [(name, md, fa, fb, out) for name, md, fa, fb, out in models]


def _late_edges():
    """Crafted operands for mm_units_late.c: block results that cancel to zero, that are
    subnormal or round up to the smallest normal, that overflow; products at the alignment
    limit below the addend (and the addend 25, 26 binades below the products, the odd/even
    truncation), an addend far above or below everything, a subnormal, NaN or infinite
    addend, NaN or infinity in one row or column, products that could reach 2^128."""
    g = rng_of("unit-late-edges")
    f16, e4f = softfp8.float16, softfp8.e4m3fnuz
    m, k, p = 5, 40, 20
    mi = softfp8.Accumulation.profile("mi300x")
    B = softfp8.BlockFMA
    models = [("mi300x", mi), ("late-int", mi.model("float16").replace(alignment_rounding="toward_zero",
                                                                       rounding="upward"))]
    bf = softfp8.bfloat16
    sgn = lambda shape: g.choice([-1.0, 1.0], shape)   # noqa: E731
    data = []
    # cancellation: b's rows in pairs (x, -x) against equal a's: blocks sum to exact zeros
    a = np.repeat((sgn((m, k // 2)) * 2.0 ** g.integers(-6, 6, (m, k // 2))), 2, axis=1)
    b = (g.standard_normal((k, p)) * 4)
    b[1::2] = -b[0::2]
    data.append(("cancel", a.astype(f16), b.astype(f16), None))
    data.append(("cancel-c", a.astype(f16), b.astype(f16), (g.standard_normal((m, p)) * 2.0 ** 20).astype(np.float32)))
    # subnormal block results: products near 2^-28 summed with an addend that cancels them
    ta = (sgn((m, k)) * 2.0 ** -14 * (1 + g.integers(0, 16, (m, k)) / 16)).astype(f16)
    tb = (sgn((k, p)) * 2.0 ** -14 * (1 + g.integers(0, 16, (k, p)) / 16)).astype(f16)
    tc = ((ta[:, :8].astype(np.float64) @ tb[:8].astype(np.float64)) * -1 +
          g.integers(-3, 4, (m, p)) * 2.0 ** -140).astype(np.float32)
    data.append(("tiny-c", ta[:, :8], tb[:8], tc))
    tc2 = np.full((m, p), 2.0 ** -126, np.float32) * sgn((m, p)).astype(np.float32)
    data.append(("min-normal-c", ta[:, :8], tb[:8], tc2))
    # the addend far above: products at and past its alignment window (E(c) - E_p = 20 .. 40)
    fa = (sgn((m, k)) * (1 + g.integers(0, 1024, (m, k)) / 1024)).astype(f16)
    fb = (sgn((k, p)) * (1 + g.integers(0, 1024, (k, p)) / 1024)).astype(f16)
    fc = (sgn((m, p)) * 2.0 ** g.integers(18, 42, (m, p)) * (1 + g.random((m, p)))).astype(np.float32)
    data.append(("addend-above", fa, fb, fc))
    # the addend below the products: 22 .. 30 binades (the odd/even truncation past 25)
    bc = (sgn((m, p)) * 2.0 ** g.integers(-30, -21, (m, p)) * (1 + g.random((m, p)))).astype(np.float32)
    data.append(("addend-below", fa, fb, bc))
    # results near the top of binary32 (overflow, rounding to infinity) and addends there
    oc = (sgn((m, p)) * 2.0 ** 127 * (1.99 + g.random((m, p)) * 0.0099)).astype(np.float32)
    data.append(("top-c", fa[:, :3], fb[:3], oc))
    # special addends: subnormal, NaN, infinities, zeros of both signs
    sc = g.choice(np.array([1e-40, -3e-39, np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], np.float32), (m, p))
    data.append(("special-c", fa, fb, sc))
    # a NaN in one row, an infinity in one column
    na, nb = fa.copy(), fb.copy()
    na[1, 17] = np.nan
    nb[5, 3] = np.inf
    data.append(("nan-row-inf-col", na, nb, fc))
    # bfloat16 (operands held scaled): products below 2^-126 (the zero addend's exponent above
    # them), some columns with normal products, block results near 2^-126
    la = (sgn((m, k)) * 2.0 ** g.integers(-72, -58, (m, k)) * (1 + g.integers(0, 128, (m, k)) / 128))
    lb = (sgn((k, p)) * 2.0 ** g.integers(-72, -58, (k, p)) * (1 + g.integers(0, 128, (k, p)) / 128))
    lb[:, ::3] *= 2.0 ** 60
    data.append(("bf16-low", la.astype(bf), lb.astype(bf), None))
    data.append(("bf16-low-c", la.astype(bf), lb.astype(bf), g.choice(np.array([0.0, 2.0 ** -120, -2.0 ** -100, 1.0],
                                                                             np.float32), (m, p))))
    # blocks without a product (zero rows, zero runs of a row) and tiny addends (2^-126 ..
    # 2^-90): a block without products keeps the running value as it is
    za = fa.copy()
    za[:, 8:24] = 0
    za[0] = 0
    zc = (sgn((m, p)) * 2.0 ** g.integers(-126, -90, (m, p)) * (1 + g.random((m, p)))).astype(np.float32)
    data.append(("empty-blocks-tiny-c", za, fb, zc))
    data.append(("empty-blocks-tiny-c-e4fnuz", za.astype(np.float64).astype(e4f), fb.astype(np.float64).astype(e4f), zc))
    # the same with B's exponents 12 (float16) and 6 (FNUZ): a block without products of row 0
    # against them (saturated byte sums above -128 at level 1) keeps addends 2^-126 .. 2^-118 whole
    zb = fb.astype(np.float64) * 2.0 ** 12
    zt = (sgn((m, p)) * 2.0 ** g.integers(-126, -118, (m, p)) * (1 + g.random((m, p)))).astype(np.float32)
    data.append(("empty-blocks-big-b", za, zb.astype(f16), zt))
    data.append(("empty-blocks-big-b-e4fnuz", za.astype(np.float64).astype(e4f), (zb * 2.0 ** -6).astype(e4f),
                 (zt * np.float32(2.0 ** -4)).astype(np.float32)))
    for name, acc in models:
        for dname, x, y, c in data:
            yield mcase(f"unit-late-edges/{name}/{dname}", lambda g, x=x, y=y, c=c, acc=acc: softfp8.matmul(
                x, y, c, out_dtype=np.float32, accumulation=acc), x.shape[0] * y.shape[1], S.CONFIGS[0])
    # bfloat16 products near 2^-131 summed in blocks of 16 without extra bits: a zero
    # addend's exponent -126 lies above them (its two-term step rounds them down), the block
    # results near 2^-126 (24 bits: the rounding keeps the step's last bit)
    x0 = mi.model("bfloat16").replace(addend_extra_bits=0, block=16, extra_bits=0)
    na_ = (2.0 ** -62 * (1 + g.integers(0, 128, (m, 16)) / 128)).astype(bf)
    eb_ = np.where(g.random((16, p)) < 0.5, g.integers(-69, -66, (16, p)), g.integers(-80, -70, (16, p)))
    nb_ = (2.0 ** eb_ * (1 + g.integers(0, 128, (16, p)) / 128)).astype(bf)
    for dname, c in (("noc", None), ("zero-c", np.zeros((m, p), np.float32))):
        yield mcase(f"unit-late-edges/late-bf16-X0/{dname}", lambda g, c=c: softfp8.matmul(
            na_, nb_, c, out_dtype=np.float32, accumulation=x0), m * p, S.CONFIGS[0])
    # FNUZ FP8 (odd/even): cancelling blocks, exact integer sums, the largest products (2^30)
    fz = softfp8.Accumulation.profile("mi300x")
    za = np.repeat(sgn((m, 16)) * 2.0 ** g.integers(-3, 3, (m, 16)), 2, axis=1)
    zb = g.choice([1.0, 2.0, 0.5, 3.0], (32, p))
    zb[1::2] = -zb[0::2]
    ha = (sgn((m, 32)) * 240.0).astype(e4f)
    for dname, x, y, c in (("cancel", za.astype(e4f), zb.astype(e4f), None),
                           ("cancel-c", za.astype(e4f), zb.astype(e4f), fc),
                           ("top", ha, ha.T[:, :p].copy() if p <= m else np.resize(ha.T, (32, p)), oc),
                           ("addend-below", za.astype(e4f), zb.astype(e4f) * 0 + zb.astype(e4f), bc)):
        yield mcase(f"unit-late-edges/mi300x-e4fnuz/{dname}", lambda g, x=x, y=y, c=c: softfp8.matmul(
            x, y, c, out_dtype=np.float32, accumulation=fz), x.shape[0] * y.shape[1], S.CONFIGS[0])
    # min_exponent at and around W + 127 (2^(W - E) the last normal binary32 unit, then none):
    # every product's term below 1, all bits lost -- the inexact flag of a call without an
    # addend comes from them alone (a unit built as 0 from its exponent bits would lose it)
    for me in (150, 151, 152):
        for dname, x, y, acc in (
                ("f16", fa, fb, mi.model("float16").replace(min_exponent=me)),
                ("e4fnuz", fa.astype(np.float64).astype(e4f), fb.astype(np.float64).astype(e4f),
                 fz.model("e4m3fnuz").replace(min_exponent=me))):
            yield mcase(f"unit-late-edges/min-exponent-{me}/{dname}", lambda g, x=x, y=y, acc=acc: softfp8.matmul(
                x, y, out_dtype=np.float32, accumulation=acc), x.shape[0] * y.shape[1], S.CONFIGS[0])
    # level 1 (mm_units_ldec.c's sfp8ml_late_dbl_256): odd/even with W = 27 (extra_bits 4,
    # blocks of 2 and 3), the addend 24 .. 29 binades below the products -- past 25 its
    # truncation toward zero keeps up to two bits of c 2^-L (no zero); sixteen and 24 columns
    # (the two vectors of eight, the binary64 halves), a negative addend far above negative
    # products (T_p shifted by 32 and more: floor -1), float16 and bfloat16 (held scaled:
    # the values route and the scaled one) with such addends
    for blk in (2, 3):
        # products 1 and -0.875 per block (their sum 2^-3: 24 bits at W = 27), c at 2^-26 .. 2^-28
        w27 = fz.model("e4m3fnuz").replace(block=blk, extra_bits=4)
        xa = np.zeros((m, blk))
        xa[:, 0], xa[:, 1] = 1.0, -1.0
        xa *= sgn((m, 1))
        xb = np.zeros((blk, 16))
        xb[0], xb[1] = 1.0, 0.875
        xc = (sgn((m, 16)) * 2.0 ** g.integers(-28, -25, (m, 16)) * (1 + g.integers(0, 8, (m, 16)) / 8)).astype(np.float32)
        yield mcase(f"unit-late-edges/oe-w27-b{blk}/addend-below", lambda g, x=xa.astype(e4f), y=xb.astype(e4f), c=xc,
                    acc=w27: softfp8.matmul(x, y, c, out_dtype=np.float32, accumulation=acc), m * 16, S.CONFIGS[0])
    for cols in (16, 24):
        ya = -np.abs(fa[:, :16].astype(np.float64))
        yb = np.abs(fb[:16, :1].astype(np.float64)) * np.ones((1, cols))
        yc = -(2.0 ** g.integers(30, 60, (m, cols))).astype(np.float32)
        for dname, fmt in (("f16", f16), ("bf16", bf)):
            yield mcase(f"unit-late-edges/avx2-far-above/{dname}/{cols}", lambda g, x=ya.astype(fmt), y=yb.astype(fmt),
                        c=yc: softfp8.matmul(x, y, c, out_dtype=np.float32, accumulation=mi), m * cols, S.CONFIGS[0])
        wa = (g.standard_normal((m, 16)) * 2.0 ** g.integers(-40, 40, (m, 16))).astype(bf)
        wb = (g.standard_normal((16, cols)) * 2.0 ** g.integers(-40, 40, (16, cols))).astype(bf)
        yield mcase(f"unit-late-edges/avx2-bf16-wide/{cols}", lambda g, x=wa, y=wb, c=yc: softfp8.matmul(
            x, y, c, out_dtype=np.float32, accumulation=mi), m * cols, S.CONFIGS[0])


def _late_bytes_edges():
    """bfloat16 and TF32 operands (held scaled) whose exponents lie in -32 .. 31 take
    mm_units_late.c's fstep_512 as values: row groups of four and the call's B in and out of
    that range (exponents -32 and 31 at its edges, -33 and 32 past them), products from 2^-64
    to 2^62, subnormal and zero operands, odd/even groups, min_exponent."""
    g = rng_of("unit-late-bytes")
    bf = softfp8.bfloat16
    mi = softfp8.Accumulation.profile("mi300x")
    mb = mi.model("bfloat16")
    fn = mi.model("e4m3fnuz")
    m, k, p = 10, 37, 35   # three row groups (the last of two rows), three panels, a partial last block

    def vals(shape, lo, hi):
        return (g.choice([-1.0, 1.0], shape) * 2.0 ** g.integers(lo, hi + 1, shape) *
                (1 + g.integers(0, 128, shape) / 128))

    data = [("mid", vals((m, k), -5, 5), vals((k, p), -5, 5))]
    # exponents at both edges of the range: products 2^-64 .. 2^62 in one block
    ea = g.choice([-32, -31, -30, 29, 30, 31], (m, k))
    eb = g.choice([-32, -31, -30, 29, 30, 31], (k, p))
    data.append(("edges", 2.0 ** ea * (1 + g.integers(0, 128, (m, k)) / 128),
                 g.choice([-1.0, 1.0], (k, p)) * 2.0 ** eb * (1 + g.integers(0, 128, (k, p)) / 128)))
    # a row and a column at exponent -32 (products at 2^-64), and at -33 (2^-66: past the range)
    for e in (-32, -33):
        a, b = vals((m, k), -3, 3), vals((k, p), -3, 3)
        a[5] = 2.0 ** e * (1 + g.integers(0, 128, k) / 128)
        b[:, 20] = -(2.0 ** e) * (1 + g.integers(0, 128, k) / 128)
        data.append((f"low{e}", a, b))
    # one element past the range in the second row group (it alone held scaled), or in B
    for e in (32, -33):
        a, b = vals((m, k), -6, 6), vals((k, p), -6, 6)
        a[6, 11] = 2.0 ** e
        data.append((f"row{e}", a, b))
        b2 = b.copy()
        b2[30, 3] = -(2.0 ** e)
        data.append((f"col{e}", vals((m, k), -6, 6), b2))
    # a subnormal (bfloat16) operand in the last row group; zero rows, columns and runs
    a, b = vals((m, k), -4, 4), vals((k, p), -4, 4)
    a[9, 3] = 2.0 ** -130
    a[2] = 0
    a[:, 8:16] = 0
    b[:, 34] = 0
    data.append(("sub-zeros", a, b))
    addends = [None, "normal", "zero", "tiny"]
    models = [("mi300x", mi), ("oe-b8", fn.replace(block=8)), ("late-min-40", mb.replace(min_exponent=-40)),
              ("late-min70-x0", mb.replace(min_exponent=70, extra_bits=0, block=5))]
    i = 0
    for fin in ("bfloat16", "tf32"):
        for name, acc in models:
            if fin == "tf32" and name != "mi300x":
                continue
            for dname, a, b in data:
                kind = addends[i % len(addends)]
                i += 1
                if kind == "tiny":
                    c = (g.choice([-1.0, 1.0], (m, p)) * 2.0 ** g.integers(-126, -100, (m, p))).astype(np.float32)
                else:
                    c = None if kind is None else _addend_values(np.float32, (m, p), kind, rng_of("unit-late-bytes-c", i))
                if fin == "tf32":
                    x, y = a.astype(np.float32), b.astype(np.float32)
                else:
                    x, y = a.astype(bf), b.astype(bf)
                yield mcase(f"unit-late-bytes/{fin}/{name}/{dname}/c={kind}",
                            lambda g, x=x, y=y, c=c, acc=acc: softfp8.matmul(x, y, c, out_dtype=np.float32,
                                                                             accumulation=acc), m * p, S.CONFIGS[0])
    # an addend near 2^128 that the first block's products overflow, more blocks after it (the
    # running value stays infinite), float16 too
    a = 2.0 ** g.integers(0, 4, (m, k)) * (1 + g.integers(0, 128, (m, k)) / 128)
    b = 2.0 ** g.integers(0, 4, (k, p)) * (1 + g.integers(0, 128, (k, p)) / 128)
    c = (2.0 ** 127 * (1.9999 - g.random((m, p)) * 0.0002 * (g.random((m, p)) < 0.5))).astype(np.float32)
    for fin, x, y in (("bfloat16", a.astype(bf), b.astype(bf)), ("tf32", a.astype(np.float32), b.astype(np.float32)),
                      ("float16", a.astype(softfp8.float16), b.astype(softfp8.float16))):
        yield mcase(f"unit-late-bytes/{fin}/mi300x/top-c", lambda g, x=x, y=y: softfp8.matmul(
            x, y, c, out_dtype=np.float32, accumulation=mi), m * p, S.CONFIGS[0])


def _exact_pair_rows():
    B = softfp8.BlockFMA
    f16, bf, e4, e5 = softfp8.float16, softfp8.bfloat16, softfp8.e4m3, softfp8.e5m2
    rows = [("mi100-f16", "mi100", f16, f16, np.float32), ("mi100-bf16", "mi100", bf, bf, np.float32),
            ("mi250-f16", "mi250", f16, f16, np.float32), ("mi250-bf16", "mi250", bf, bf, np.float32)]
    models = [
        ("x-b1-rz", B(block=1, extra_bits=None)),
        ("x-b3-up", B(block=3, extra_bits=None, rounding="upward")),
        ("x-b5-down-nosub", B(block=5, extra_bits=None, rounding="downward", input_subnormals=False,
                              output_subnormals=False)),
        ("x-b16-away-noovf", B(block=16, extra_bits=None, rounding="nearest_away", product_overflow=False)),
        ("x-b2-rne-norm-min", B(block=2, extra_bits=None, rounding="nearest_even",
                                   normalized_products=True, min_exponent=-5)),
        ("x-b100-rne", B(block=100, extra_bits=None, rounding="nearest_even")),
        ("p-b1", B(block=1, extra_bits=None, grouping="pairwise")),
        ("p-b2-rz-nosub", B(block=2, extra_bits=None, grouping="pairwise", input_subnormals=False,
                            output_subnormals=False)),
        ("p-b3-up", B(block=3, extra_bits=None, grouping="pairwise", rounding="upward", product_overflow=False)),
        ("p-b4-down-nosub", B(block=4, extra_bits=None, grouping="pairwise", rounding="downward",
                              output_subnormals=False)),
        ("p-b7-rne-noin", B(block=7, extra_bits=2, grouping="pairwise", rounding="nearest_even",
                            input_subnormals=False)),
        ("p-b64-rne-nosub", B(block=64, extra_bits=None, grouping="pairwise", rounding="nearest_even",
                              output_subnormals=False, product_overflow=False)),
    ]
    pairs = [(f16, f16, np.float32), (bf, bf, np.float32), (e4, e5, np.float32), ("tf32", "tf32", np.float32),
             (f16, f16, np.float16), (softfp8.e4m3fnuz, softfp8.float4_e2m1fn, np.float32),
             (softfp8.format(exp_bits=5, man_bits=9, bias=-20, name="e5m9b-20"), f16, np.float32),
             (bf, bf, np.float16), (softfp8.cfloat8_143(bias=20), e5, np.float32)]
    for i, (name, md) in enumerate(models):
        for j in range(2):
            fa, fb, out = S.rotate(pairs, 2 * i + j)
            if md.grouping == "pairwise" and out == np.float16:
                out = np.float32   # the pairwise kernels deliver binary32 (binary16: "declined")
            rows.append((name, md, fa, fb, out))
    return rows


def _exact_pair_edges():
    """Crafted operands: pairwise sums that cancel below 2^-126 (flushed with output subnormals
    off), exact-alignment sums that are not binary64 numbers (the SIMD kernels' chunks
    recomputed), block results that overflow or are subnormal, signed zeros everywhere."""
    B = softfp8.BlockFMA
    g = rng_of("unit-exact-pair-edges")
    f16, bf = softfp8.float16, softfp8.bfloat16
    m, k, p = 3, 70, 40
    # pairwise: products near 2^-125 in pairs that cancel to 2^-132 .. 2^-126, in some columns
    a = np.full((m, k), 2.0 ** -60) * np.where(g.random((m, k)) < 0.5, -1.0, 1.0)
    b = np.where(np.arange(k)[:, None] % 2 == 0, 2.0 ** -65 * (1 + g.integers(0, 4, (k, p)) * 2.0 ** -7), -2.0 ** -65)
    b[:, ::3] = g.standard_normal((k, (p + 2) // 3))
    tiny_a, tiny_b = a.astype(bf), (b * np.sign(a[0])[:, None]).astype(bf)
    # exact alignment: float16 products 2^-40 .. 2^30 (binary64 sums inexact), addends to 2^60
    wa = (g.standard_normal((m, k)) * 2.0 ** g.integers(-20, 15, (m, k))).astype(f16)
    wb = (g.standard_normal((k, p)) * 2.0 ** g.integers(-20, 15, (k, p))).astype(f16)
    wc = (g.standard_normal((m, p)) * 2.0 ** g.integers(-10, 60, (m, p))).astype(np.float32)
    # bfloat16 results that overflow binary32 or are subnormal, in some columns
    ba = (g.standard_normal((m, k)) * 2.0 ** 60).astype(bf)
    bb = g.standard_normal((k, p)) * 2.0 ** 8
    bb[:, 1::4] *= 2.0 ** 60
    bb[:, 2::4] *= 2.0 ** -200
    bb = bb.astype(bf)
    z = np.array([0.0, -0.0, 1.0, -1.0])
    za, zb = g.choice(z, (m, k)).astype(f16), g.choice(z[:2], (k, p)).astype(f16)
    zc = g.choice(z[:2], (m, p)).astype(np.float32)
    models = [("mi100", "mi100"), ("mi250", "mi250"),
              ("x-b3-down", B(block=3, extra_bits=None, rounding="downward")),
              ("p-b4-down", B(block=4, extra_bits=None, grouping="pairwise", rounding="downward")),
              ("p-b4-down-nosub", B(block=4, extra_bits=None, grouping="pairwise", rounding="downward",
                                    output_subnormals=False)),
              ("p-b2-rz-nosub", B(block=2, extra_bits=None, grouping="pairwise", rounding="toward_zero",
                                  output_subnormals=False)),
              ("p-b4-rne-sub", B(block=4, extra_bits=None, grouping="pairwise", rounding="nearest_even"))]
    # block results around the smallest normal (binary32: bfloat16 products near 2^-127)
    sa = (g.choice([-1.0, 1.0], (m, 5)) * 2.0 ** -63 * (1 + g.integers(0, 128, (m, 5)) / 128)).astype(bf)
    sb = (g.choice([-1.0, 1.0], (5, p)) * 2.0 ** -64 * (1 + g.integers(0, 128, (5, p)) / 128)).astype(bf)
    # exact integer sums but in column 0, whose addend is a NaN (the lane the kernels must not run)
    na = g.integers(-3, 4, (m, k)).astype(bf)
    nb = g.integers(-3, 4, (k, p)).astype(np.float64)
    nb[::2, 0] = 2.0 ** -30 * (1 + g.integers(0, 64, (k + 1) // 2) / 64)
    nc = g.integers(-3, 4, (m, p)).astype(np.float32)
    nc[:, 0] = np.nan
    nb = nb.astype(bf)
    # one block: every product a signed zero, the addend +-0 (the zero signs of the tree)
    z4a, z4b = g.choice(z, (m, 4)).astype(f16), g.choice(z[:2], (4, p)).astype(f16)
    z5a, z5b = g.choice(z, (m, 5)).astype(f16), g.choice(z[:2], (5, p)).astype(f16)
    # K = 1: the addend cancels the product to 0 or to a subnormal (the last running value)
    fa1 = np.full((m, 1), 2.0 ** -63).astype(bf)
    fb1 = (2.0 ** -63 * (1 + g.integers(0, 8, (1, p)) / 128)).astype(bf)
    fc1 = (-(fa1.astype(np.float64) @ fb1.astype(np.float64)) + g.integers(-2, 3, (m, p)) * 2.0 ** -133
           ).astype(np.float32)
    # binary64 sums inexact in the second and third chunk of the status flags (512 products)
    la = (g.standard_normal((2, 1100)) * 2.0 ** g.integers(-20, 15, (2, 1100))).astype(f16)
    la[:, :600] = (g.standard_normal((2, 600)) * 4).astype(f16)
    lb = (g.standard_normal((1100, 40)) * 2.0 ** g.integers(-20, 15, (1100, 40))).astype(f16)
    data = [("tiny-sums", tiny_a, tiny_b, None), ("wide", wa, wb, wc), ("wide-long", la, lb, None),
            ("range", ba, bb, None),
            ("zeros-k4", z4a, z4b, zc), ("zeros-k5", z5a, z5b, zc), ("final-tiny", fa1, fb1, fc1),
            ("zeros", za, zb, zc), ("zeros-noc", za, zb, None), ("min-normal", sa, sb, None),
            ("nan-addend", na, nb, nc)]
    for name, model in models:
        acc = softfp8.Accumulation.profile(model) if isinstance(model, str) else model
        for dname, x, y, c in data:
            yield mcase(f"unit-exact-pair-edges/{name}/{dname}", lambda g, x=x, y=y, c=c, acc=acc: softfp8.matmul(
                x, y, c, out_dtype=np.float32, accumulation=acc), x.shape[0] * y.shape[1], S.CONFIGS[0])
    # binary16 results around the smallest normal 2^-14 (float16 products near 2^-15)
    ha = (g.choice([-1.0, 1.0], (m, 5)) * 2.0 ** -7 * (1 + g.integers(0, 64, (m, 5)) / 64)).astype(f16)
    hb = (g.choice([-1.0, 1.0], (5, p)) * 2.0 ** -8 * (1 + g.integers(0, 64, (5, p)) / 64)).astype(f16)
    for name, acc in (("x-b2-rne", B(block=2, extra_bits=None, rounding="nearest_even")),
                      ("x-b3-up", B(block=3, extra_bits=None, rounding="upward"))):
        yield mcase(f"unit-exact-pair-edges/{name}/min-normal-f16", lambda g, acc=acc: softfp8.matmul(
            ha, hb, out_dtype=np.float16, accumulation=acc), m * p, S.CONFIGS[0])


def _exact_pair_avx2():
    """The AVX2 kernels of mm_units_fp.c (SIMD level 1): exact alignment without range checks
    for lanes in range by their bounds (xsafe: products' binades and last places, the addend,
    the number of blocks) -- operands on both sides of each bound, rounding ties, zero blocks
    and rows, binary16 outputs, layouts and tiles of rows -- and the pairwise blocks of four
    (pair4_256): tiny sums at the leaves, the tree and the running value, partial last blocks."""
    B = softfp8.BlockFMA
    g = rng_of("unit-exact-pair-avx2")
    f16, bf = softfp8.float16, softfp8.bfloat16
    xmodels = [("mi100", softfp8.Accumulation.profile("mi100")),
               ("x-b4-up", B(block=4, extra_bits=None, rounding="upward")),
               ("x-b3-down", B(block=3, extra_bits=None, rounding="downward")),
               ("x-b2-away", B(block=2, extra_bits=None, rounding="nearest_away")),
               ("x-b4-rz-nosub", B(block=4, extra_bits=None, output_subnormals=False))]

    def sgn(shape):
        return g.choice([-1.0, 1.0], shape)

    def grid(shape, e, bits=7):   # values 2^e (1 + i / 2^bits), random signs
        return sgn(shape) * 2.0 ** e * (1 + g.integers(0, 2 ** bits, shape) / 2 ** bits)

    m, k, p = 5, 64, 40   # lgk = 6
    data = []
    # products below 2^(hi_r + hi_c + 2): hi_r + hi_c + 4 + lgk = 127 (in) and 128, 130 (out,
    # some sums overflow binary32 or land in its top binade)
    for tag, ea, eb in (("upper-in", 58, 59), ("upper-out", 59, 59), ("upper-over", 60, 60)):
        a, b = grid((m, k), ea), np.abs(grid((k, p), eb))
        a[:2] = np.abs(a[:2])   # same signs: the largest sums
        data.append((tag, a.astype(bf), b.astype(bf), None))
    # last places 2^-126 (in: results down to the least normal 2^-126 and 0) and 2^-127 (out:
    # subnormal results): pairs of products cancelling to -+d 2^-64 b, b = +-2^-62 or +-2^-63
    for tag, eb in (("lower-in", -62), ("lower-out", -63)):
        s, u, d = sgn((m, k // 2)), g.integers(1, 127, (m, k // 2)), g.integers(-1, 2, (m, k // 2))
        a = np.empty((m, k))
        a[:, 0::2] = s * 2.0 ** -57 * (1 + u / 128)
        a[:, 1::2] = -s * 2.0 ** -57 * (1 + (u + d) / 128)
        b = np.repeat(sgn((k // 2, p)) * 2.0 ** eb, 2, axis=0)
        data.append((tag, a.astype(bf), b.astype(bf), None))
    # the addend, per row (the kernel is chosen per row and group): below 2^(emax - 2) (in) and
    # at it (out); last place 2^-126 (in), 2^-127, subnormal (out); the sums exact in binary64
    for tag, e, cs in (("addend-big", 44, (2.0 ** 124 * 1.9921875, 2.0 ** 124 * 1.9921875, 2.0 ** 125, 2.0 ** 125)),
                       ("addend-small", -50, (2.0 ** -126, 2.0 ** -126 * 1.5, 2.0 ** -140, 0.0, -0.0))):
        c = np.array(cs)[:, None] * sgn((len(cs), p))
        data.append((tag, grid((len(cs), k), e).astype(bf), grid((k, p), e).astype(bf), c.astype(np.float32)))
    # ties: integer products past 2^24 (binary32 results with bits rounded off, many halves)
    ta = g.integers(-2048, 2049, (m, 512)).astype(f16)
    tb = g.integers(1024, 2049, (512, p)).astype(f16)
    data.append(("ties", ta, tb, g.integers(-2 ** 30, 2 ** 30, (m, p)).astype(np.float32)))
    data.append(("ties-bf16", ta.astype(np.float64).astype(bf), (tb.astype(np.float64) // 8).astype(bf), None))
    # zero blocks, zero rows and columns, signed zeros among normal products
    za = (g.standard_normal((m, k)) * 4).astype(np.float64)
    za[:, 8:16] = g.choice([0.0, -0.0], (m, 8))
    za[3] = -0.0
    zb = (g.standard_normal((k, p)) * 4)
    zb[20:28] = 0.0
    zb[:, 5] = -0.0
    zc = g.choice([0.0, -0.0, 1.0], (m, p)).astype(np.float32)
    data += [("zero-blocks", za.astype(f16), zb.astype(f16), zc), ("zero-blocks-bf16", za.astype(bf), zb.astype(bf), None)]
    for name, acc in xmodels:
        for dname, x, y, cc in data:
            yield mcase(f"unit-exact-pair-avx2/{name}/{dname}", lambda g, x=x, y=y, cc=cc, acc=acc: softfp8.matmul(
                x, y, cc, out_dtype=np.float32, accumulation=acc), x.shape[0] * y.shape[1], S.CONFIGS[0])
    # binary16 outputs (P = 11): 2^(P - 2) = 512 blocks (in) and 513 (out); sums of products
    # on a grid of 2^-6 (ties), below 2^15 by the bound hi_r + hi_c + 4 + lgk <= 15
    for kk in (1024, 1026, 1023):
        ha = (g.integers(-63, 64, (3, kk)) / 64).astype(f16)
        hb = (g.integers(-63, 64, (kk, 33)) / 64).astype(f16)
        for name, acc in (("x-b2-rne", B(block=2, extra_bits=None, rounding="nearest_even")),
                          ("x-b2-up", B(block=2, extra_bits=None, rounding="upward")),
                          ("x-b2-down", B(block=2, extra_bits=None, rounding="downward"))):
            yield mcase(f"unit-exact-pair-avx2/{name}/f16out-k{kk}", lambda g, ha=ha, hb=hb, acc=acc: softfp8.matmul(
                ha, hb, out_dtype=np.float16, accumulation=acc), 3 * 33, S.CONFIGS[0])
    # layouts and tiles of 32 rows (rows with a NaN, a column with a NaN among them)
    la = (g.standard_normal((70, 130)) * 2)
    lb = (g.standard_normal((130, 40)) * 2)
    la[33, 7] = np.nan
    lb[9, 37] = np.nan
    lc = (g.standard_normal(40) * 4).astype(np.float32)
    for fmt in (f16, bf):
        a, b = la.astype(fmt), lb.astype(fmt)
        views = {"fortran": (np.asfortranarray(a), np.asfortranarray(b), None), "strided": (a[::2, ::2], b[::2, ::3], None),
                 "reversed": (a[::-1, ::-1], b[::-1, :], None), "batched": (np.stack([a, a[::-1]]), b[None], None),
                 "c-broadcast": (a, b, lc), "plain": (a, b, None)}
        for unit in ("mi100", "mi250"):
            acc = softfp8.Accumulation.profile(unit)
            for vk, (x, y, cc) in views.items():
                n = int(np.prod(np.broadcast_shapes(x.shape[:-1] + (1,), (1,) * (x.ndim - 1) + y.shape[-1:])))
                yield mcase(f"unit-exact-pair-avx2/{unit}/{S.fid(fmt)}/{vk}", lambda g, x=x, y=y, cc=cc, acc=acc:
                            softfp8.matmul(x, y, cc, out_dtype=np.float32, accumulation=acc), n, S.CONFIGS[0])
    # pairwise blocks of four: products near 2^-125 cancelling to tiny sums at the leaves, the
    # tree or the running value; K with and without a partial last block
    pmodels = [("mi250", softfp8.Accumulation.profile("mi250")),
               ("p-b4-down-nosub", B(block=4, extra_bits=None, grouping="pairwise", rounding="downward",
                                     output_subnormals=False)),
               ("p-b4-up-nosub", B(block=4, extra_bits=None, grouping="pairwise", rounding="upward",
                                   output_subnormals=False)),
               ("p-b4-rz", B(block=4, extra_bits=None, grouping="pairwise"))]
    for kk in (1, 3, 4, 5, 8, 11):
        a = np.full((4, kk), 2.0 ** -60) * sgn((4, kk))
        b = np.where(np.arange(kk)[:, None] % 2 == 0, 2.0 ** -65 * (1 + g.integers(0, 4, (kk, 40)) * 2.0 ** -7),
                     -2.0 ** -65)
        b[:, ::5] = g.standard_normal((kk, 8))
        c = (g.integers(-2, 3, (4, 40)) * 2.0 ** -140).astype(np.float32)
        for name, acc in pmodels:
            for cc in (None, c):
                yield mcase(f"unit-exact-pair-avx2/{name}/tiny-k{kk}/{cc is None}", lambda g, a=a, b=b, cc=cc, acc=acc:
                            softfp8.matmul(a.astype(bf), b.astype(bf), cc, out_dtype=np.float32, accumulation=acc),
                            4 * 40, S.CONFIGS[0])
