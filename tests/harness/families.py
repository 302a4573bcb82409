"""One registry entry per fast family (the ladder of driver.c: tables, SIMD kernels and
derived roundings, fast/).  Each entry's parts walk its parameter space:

  exhaustive   every operand (8-bit: every byte pair / every byte, codes above the width
               included for formats narrower than a byte), environments rotated so that
               every environment meets every operation somewhere
  envs         every deterministic environment (24) or every stochastic one (seeds,
               sr_bits, saturation, tininess) on boundary and random operands
  wide         formats of 9..16 bits: boundary x boundary, random, close operands,
               raw storage codes above the width
  layouts      every NumPy calling convention (conventions.py)
  public       the public entry points above the family (softfp8.bits with per-element
               flags, quantisers)
  regressions  named defects

Operands come from space.py; results and flags are compared with the exact core by
machinery.prove.
"""
from __future__ import annotations

import numpy as np

import softfp8
import softfp8.bits as sfb

from . import space as S
from .conventions import casts, elementwise
from .machinery import Case, raw, rng_of
from .registry import register

OPS = sfb.OPERATIONS


def _ufunc(opname):
    u = OPS[opname].ufuncs[0]
    # softfp8's own ufuncs (fma and the IEEE 754 / P3109 rows NumPy has no ufunc for)
    return getattr(softfp8, u[len("softfp8."):]) if u.startswith("softfp8.") else getattr(np, u)


ROUNDING_BINARY = [n for n, o in OPS.items() if o.kind == "binary" and o.rounds and o.ufunc]
FREE_BINARY = [n for n, o in OPS.items() if o.kind in ("binary", "compare") and not o.rounds and o.ufunc]
RELATIONS = [n for n, o in OPS.items() if o.kind == "relation"]
ROUNDING_UNARY = [n for n, o in OPS.items() if o.kind == "unary" and o.rounds and o.ufunc]
FREE_UNARY = [n for n, o in OPS.items() if o.kind in ("unary", "predicate") and not o.rounds and o.ufunc]
CHEAP_UNARY = ["sqrt", "square", "reciprocal", "floor", "ceil", "trunc", "round_integral", "spacing"]
ELEMENTARY_UNARY = [n for n in ROUNDING_UNARY if n not in CHEAP_UNARY]

# all ordered pairs of bytes
PA = np.repeat(np.arange(256, dtype=np.uint8), 256)
PB = np.tile(np.arange(256, dtype=np.uint8), 256)
N_LAYOUT = 300


def _call(uf, ops, env, **kw):
    def fn(g):
        with S.context(env):
            return uf(*ops, **kw)
    return fn


def _in(fmt, codes):
    """codes masked to the width (softfp8.bits refuses codes above it)."""
    return (np.asarray(codes).astype(np.uint32) & fmt.code_mask).astype(fmt.storage)


def op_case(cid, fmt, opname, codes, env, with_bits=True, exhaustive=False):
    """ufunc of opname on the operand codes (a list), compared as an array call and, with
    with_bits, through softfp8.bits (per-element flags)."""
    uf = _ufunc(opname)
    ops = [S.as_dtype(c, fmt) for c in codes]
    bits = None
    if with_bits:
        f = getattr(sfb, opname)
        kw = S.bits_opts(env) if OPS[opname].rounds else {}
        masked = [_in(fmt, c) for c in codes]
        bits = lambda: f(fmt, *masked, **kw)  # noqa: E731
    return Case(cid, _call(uf, ops, env), codes[0].size, bits, [raw(c) for c in codes], exhaustive=exhaustive)


def layout_cases(prefix, uf, ops, odt, env, reductions=True):
    for name, f, cnt in elementwise(uf, ops, odt, prefix, reductions):
        def fn(g, f=f):
            with S.context(env):
                return f(g)
        yield Case(f"{prefix}/{name}", fn, cnt)


def cast_layouts(prefix, x, dst, env):
    for name, f, cnt in casts(x, dst, prefix):
        def fn(g, f=f):
            with S.context(env):
                return f(g)
        yield Case(f"{prefix}/{name}", fn, cnt)


def _mixed_codes(fmt, n, g, spare=True):
    """n operand codes: half boundary codes, half random (bits above the width with spare)."""
    b = S.boundary_codes(fmt)
    c = np.concatenate([g.choice(b, n // 2), S.random_codes(fmt, n - n // 2, g, spare=False)])
    g.shuffle(c)
    return S.above_width(fmt, c, g) if spare else c


def _result_dtype(opname, fmt):
    k = OPS[opname].kind
    return np.dtype(np.bool_) if k in ("compare", "predicate") else fmt.dtype


# ==========================================================================
# binary8: binary operations of formats of <= 8 bits through 65,536-entry tables
# ==========================================================================

@register("binary8", "family", "8-bit binary operations and comparisons through the core's tables")
def _binary8():
    def exhaustive():
        i = 0
        for fmt in S.F8 + S.NARROW:
            names = ROUNDING_BINARY + FREE_BINARY if fmt in S.F8 else ["add", "mul", "div", "max", "lt", "nextafter"]
            for opname in names:
                env = S.rotate(S.CONFIGS, i) if OPS[opname].rounds else S.rotate(S.SR + S.SOME, i)
                i += 1
                yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/all-pairs", fmt, opname, [PA, PB], env,
                              with_bits=(i % 3 == 0), exhaustive=True)

    def envs():
        for fmt in (softfp8.e4m3, softfp8.e5m2fnuz, softfp8.cfloat8_143(bias=20)):
            g = rng_of("binary8-envs", fmt.name)
            b = S.boundary_codes(fmt)
            a1, b1 = np.repeat(b, b.size), np.tile(b, b.size)
            for opname in ("add", "mul", "div", "remainder"):
                for env in S.CONFIGS:
                    yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/boundary-pairs", fmt, opname,
                                  [a1, b1], env)
            r = S.random_codes(fmt, 4096, g)
            for opname in ("max", "eq", "copysign", "nextafter", "cmp_quiet"):
                for env in S.SOME + S.SR:
                    if opname == "cmp_quiet":   # a relation: softfp8.bits only
                        yield Case(f"{S.fid(fmt)}/cmp_quiet/{S.env_id(env)}", lambda g, r=r: sfb.cmp_quiet(
                            fmt, _in(fmt, r), _in(fmt, r[::-1]))[0], r.size, inputs=[r, r[::-1]])
                        continue
                    yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/random", fmt, opname, [r, r[::-1]], env)

    def layouts():
        for k, fmt in enumerate((softfp8.e4m3, softfp8.e5m2fnuz, S.NARROW[20])):
            g = rng_of("binary8-layouts", fmt.name)
            x, y = _mixed_codes(fmt, N_LAYOUT, g), _mixed_codes(fmt, N_LAYOUT, g)
            for j, opname in enumerate(("add", "sub", "mul", "div", "max", "minnum", "lt", "eq", "nextafter",
                                        "copysign")):
                env = S.rotate(S.CONFIGS, 7 * k + j)
                yield from layout_cases(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}", _ufunc(opname),
                                        [S.as_dtype(x, fmt), S.as_dtype(y, fmt)], _result_dtype(opname, fmt), env)

    return {"exhaustive": exhaustive, "envs": envs, "layouts": layouts}


# ==========================================================================
# unary: unary operations of formats of <= 16 bits through per-code tables
# ==========================================================================

@register("unary", "family", "unary operations of <= 16-bit formats through the core's per-code tables")
def _unary():
    def exhaustive8():
        i = 0
        for fmt in S.F8 + S.NARROW:
            for opname in ROUNDING_UNARY + FREE_UNARY:
                env = S.rotate(S.CONFIGS, i) if OPS[opname].rounds else S.rotate(S.SOME + S.SR, i)
                i += 1
                c = S.codes_all(fmt)
                yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/every-byte", fmt, opname, [c], env,
                              with_bits=(i % 2 == 0), exhaustive=True)

    def envs():
        for fmt in (softfp8.e4m3, softfp8.e2m1, softfp8.float16):
            c = S.codes_all(fmt) if fmt.bits <= 8 else S.boundary_codes(fmt)
            for opname in ("sqrt", "round_integral", "reciprocal", "exp"):
                for env in S.CONFIGS:
                    yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}", fmt, opname, [c], env)

    def wide():
        # every code of the 16-bit presets and the 9..16-bit formats: the cheap operations
        # everywhere, the elementary functions on bfloat16, float16 and one odd width
        i = 0
        for fmt in S.WIDE:
            names = CHEAP_UNARY + FREE_UNARY
            if fmt in (softfp8.bfloat16, softfp8.float16, S.MID[1]):
                names = names + ELEMENTARY_UNARY[::2] if fmt is not softfp8.float16 else \
                    names + ELEMENTARY_UNARY[1::2]
            for opname in names:
                env = S.rotate(S.CONFIGS, i) if OPS[opname].rounds else S.rotate(S.SOME, i)
                i += 1
                c = S.codes_all(fmt)
                yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/every-code", fmt, opname, [c], env,
                              with_bits=(i % 4 == 0), exhaustive=True)
        # codes above the width of the formats narrower than their 16-bit storage
        for fmt in S.MID:
            if fmt.bits < 16:
                g = rng_of("unary-raw", fmt.name)
                r = S.random_codes(fmt, 4096, g)
                for opname in ("sqrt", "neg", "isnan", "exp", "floor"):
                    yield op_case(f"{S.fid(fmt)}/{opname}/raw-codes", fmt, opname, [r], S.SOME[0], with_bits=False)

    def layouts():
        for k, fmt in enumerate((softfp8.e4m3, softfp8.bfloat16, S.MID[1], S.NARROW[9])):
            g = rng_of("unary-layouts", fmt.name)
            x = _mixed_codes(fmt, N_LAYOUT, g)
            for j, opname in enumerate(("sqrt", "neg", "isnan", "round_integral", "exp", "signbit")):
                env = S.rotate(S.CONFIGS, 5 * k + j)
                yield from layout_cases(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}", _ufunc(opname),
                                        [S.as_dtype(x, fmt)], _result_dtype(opname, fmt), env)

    return {"exhaustive8": exhaustive8, "envs": envs, "wide": wide, "layouts": layouts}


# ==========================================================================
# fma8: fused multiply-add of 8-bit formats (binary64 products, odd-rounded sums, key table)
# ==========================================================================

def _triples(fmt, n, g, spare=True):
    return [_mixed_codes(fmt, n, g, spare) for _ in range(3)]


@register("fma8", "family", "fma of 8-bit formats: exact binary64 product, sum rounded to odd, key table")
def _fma8():
    def exhaustive():
        # every (a, b) pair against addends spread over the code space, e4m3 and e5m2 at
        # nearest-even; every code as addend against a fixed set of pairs; in four calls
        for fmt in (softfp8.e4m3, softfp8.e5m2):
            for q, cs in enumerate((range(0, 256, 17), range(5, 256, 17))):
                a = np.tile(PA, len(cs))
                b = np.tile(PB, len(cs))
                c = np.repeat(np.array(list(cs), np.uint8), 65536)
                yield op_case(f"{S.fid(fmt)}/fma/nearest_even/all-pairs-x-addends{q}", fmt, "fma", [a, b, c],
                              S.CONFIGS[0], with_bits=(q == 0), exhaustive=True)

    def envs():
        for k, fmt in enumerate(S.F8 + S.NARROW[::4]):
            g = rng_of("fma8", fmt.name)
            t = _triples(fmt, 20000, g)
            envs = S.CONFIGS if fmt in S.F8_MAIN else [S.rotate(S.CONFIGS, k), S.rotate(S.CONFIGS, k + 11)]
            for env in envs:
                yield op_case(f"{S.fid(fmt)}/fma/{S.env_id(env)}/random", fmt, "fma", t, env)

    def layouts():
        for k, fmt in enumerate((softfp8.e4m3, softfp8.e5m2, S.NARROW[14])):
            g = rng_of("fma8-layouts", fmt.name)
            t = [S.as_dtype(c, fmt) for c in _triples(fmt, N_LAYOUT, g)]
            env = S.rotate(S.CONFIGS, 3 * k)
            yield from layout_cases(f"{S.fid(fmt)}/fma/{S.env_id(env)}", softfp8.fma, t, fmt.dtype, env)

    return {"exhaustive": exhaustive, "envs": envs, "layouts": layouts}


# ==========================================================================
# sum8: exact sums of 8-bit formats (integer table + superaccumulator)
# ==========================================================================

def _sum_arrays(fmt):
    """(name, codes) of random and adversarial arrays, from the format's fields."""
    g = rng_of("sum", fmt.name)
    c, v = S.values(fmt)
    fin = c[np.isfinite(v)]
    special = c[~np.isfinite(v)]
    zeros = c[v == 0]
    pos = c[np.isfinite(v) & (v > 0)]
    order = np.argsort(v[pos.astype(np.int64)])
    top, small = pos[order[-4:]], pos[order[:4]]
    out = []
    for n in (1, 2, 15, 16, 17, 64, 65, 1000, 4097, 70000):
        out.append((f"finite-{n}", g.choice(fin, n)))
        out.append((f"any-raw-{n}", S.random_codes(fmt, n, g)))
    for n in (1, 17, 1000):
        if zeros.size:
            out.append((f"zeros-{n}", g.choice(zeros, n)))
        out.append((f"near-overflow-{n}", g.choice(top, n)))
        out.append((f"tiny-{n}", g.choice(small, n)))
        if special.size:
            a = g.choice(fin, n)
            a[n // 2] = g.choice(special)
            out.append((f"with-special-{n}", a))
    if fmt.signed:
        sign = 1 << (fmt.bits - 1)
        for n in (1, 8, 500, 50000):
            idx = g.integers(0, pos.size, n)
            both = np.concatenate([pos[idx], pos[idx] | sign])
            out.append((f"cancel-{n}", g.permutation(both)))
            out.append((f"cancel-top-{n}", np.concatenate([top[idx % 4], top[idx % 4] | sign])))
    return [(name, np.ascontiguousarray(a, dtype=fmt.storage)) for name, a in out]


@register("sum8", "family", "exact sums of 8-bit formats through the integer value table")
def _sum8():
    def arrays():
        for k, fmt in enumerate(S.F8 + S.NARROW[::3]):
            for j, (name, a) in enumerate(_sum_arrays(fmt)):
                env = S.rotate(S.CONFIGS + S.SR, 3 * k + j)
                x = S.as_dtype(a, fmt)
                yield Case(f"{S.fid(fmt)}/sum/{name}/{S.env_id(env)}", _call(np.add.reduce, [x], env), 1,
                           lambda x=a, fmt=fmt, env=env: sfb.sum(fmt, _in(fmt, x), **S.bits_opts(env)),
                           [a])

    def layouts():
        for fmt in (softfp8.e4m3, softfp8.e5m2, S.NARROW[3]):
            g = rng_of("sum-layouts", fmt.name)
            x = S.as_dtype(_mixed_codes(fmt, 70000, g), fmt)
            X = x[:69984].reshape(144, 486)
            env = S.CONFIGS[5]
            calls = {
                "np.sum": lambda g: np.sum(x), "reversed": lambda g: np.add.reduce(x[::-1]),
                "strided": lambda g: np.add.reduce(x[::3]), "axis0": lambda g: np.add.reduce(X, axis=0),
                "axis1": lambda g: np.add.reduce(X, axis=1), "axis1-T": lambda g: np.add.reduce(X.T, axis=1),
                "keepdims": lambda g: np.sum(X, axis=0, keepdims=True),
                "where": lambda g: np.add.reduce(x, where=np.arange(x.size) % 3 != 1, initial=x[0]),
                "out": lambda g: np.add.reduce(X, axis=1, out=np.empty(144, fmt.dtype)),
                "unaligned": lambda g: np.add.reduce(x[1:].copy()),
                "zero-stride": lambda g: np.add.reduce(np.broadcast_to(x[7], (5000,))),
                "2d-all": lambda g: np.sum(X),
            }
            for name, f in calls.items():
                yield Case(f"{S.fid(fmt)}/sum/{name}", _call(f, [None], env), 1)

    return {"arrays": arrays, "layouts": layouts}


# ==========================================================================
# arith16 / order16: 16-bit arithmetic via binary64, 16-bit order keys
# ==========================================================================

def _close(fmt, a, g):
    """codes at a few units in the last place from a (cancellation), sign flipped half the time."""
    step = g.integers(-3, 4, a.size)
    c = (a.astype(np.int64) + step) & ((1 << fmt.bits) - 1)
    if fmt.signed:
        c ^= (g.random(a.size) < 0.5).astype(np.int64) << (fmt.bits - 1)
    return c.astype(fmt.storage)


def _pairs16(fmt, key, n=None):
    """(name, a, b) operand pairs of a 9..16-bit format: boundary x boundary, uniform codes
    biased to the extremes, values near 1 (whole SIMD blocks of normal results), exponents
    within 3 of each other around 1 / sqrt(min normal) / sqrt(max) / the extreme fields,
    codes a few units apart (cancellation), and raw codes above the width."""
    g = rng_of(key, fmt.name)
    n = (n or (20000 if fmt in S.F16 else 5000)) * S.SCALE
    b = S.boundary_codes(fmt)
    out = [("boundary", np.repeat(b, b.size), np.tile(b, b.size)),
           ("biased", S.biased_codes(fmt, n, g), S.biased_codes(fmt, n, g)),
           ("narrow", S.narrow_codes(fmt, n, g), S.narrow_codes(fmt, n, g)),
           ("exp-close", *S.exp_close_pairs(fmt, n, g))]
    r = S.random_codes(fmt, n, g, spare=False)
    out.append(("ulps-close", r, _close(fmt, r, g)))
    if fmt.bits < 16:
        out.append(("raw-codes", S.random_codes(fmt, 4096, g), S.random_codes(fmt, 4096, g)))
    return out


# regressions: the issue-21 format has flushed subnormals, which only the SIMD kernels take
# (the portable kernel leaves it to the core), so that part cannot reach level 0
@register("arith16", "family", "16-bit add/sub/mul/div/fma: binary64 arithmetic rounded by the derived rounder",
          no_coverage=("regressions",))
def _arith16():
    def formats():
        for k, fmt in enumerate(S.WIDE):
            for j, (name, a, b) in enumerate(_pairs16(fmt, "arith16")):
                for opname in ("add", "sub", "mul", "div"):
                    env = S.rotate(S.CONFIGS, 5 * k + 3 * j + len(opname))
                    yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/{name}", fmt, opname, [a, b], env,
                                  with_bits=(name != "raw-codes"))
                c = _close(fmt, a[::-1].copy(), rng_of("fma16", fmt.name, name))
                env = S.rotate(S.CONFIGS, k + j)
                yield op_case(f"{S.fid(fmt)}/fma/{S.env_id(env)}/{name}", fmt, "fma", [a, b, c], env,
                              with_bits=(name != "raw-codes"))

    def envs():
        for fmt in (softfp8.float16, softfp8.bfloat16, S.MID[1]):
            pairs = _pairs16(fmt, "arith16-envs", 2000)
            a = np.concatenate([p[1] for p in pairs[1:4]])
            b = np.concatenate([p[2] for p in pairs[1:4]])
            for env in S.CONFIGS:
                for opname in ("add", "mul", "div"):
                    yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/random", fmt, opname, [a, b], env)
                yield op_case(f"{S.fid(fmt)}/fma/{S.env_id(env)}/random", fmt, "fma", [a, b, a[::-1].copy()], env)

    def layouts():
        for k, fmt in enumerate((softfp8.float16, softfp8.bfloat16, S.MID[1], S.MID[0])):
            g = rng_of("arith16-layouts", fmt.name)
            x, y, z = (_mixed_codes(fmt, N_LAYOUT, g) for _ in range(3))
            for j, opname in enumerate(("add", "sub", "mul", "div")):
                env = S.rotate(S.CONFIGS, 4 * k + j)
                yield from layout_cases(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}", _ufunc(opname),
                                        [S.as_dtype(x, fmt), S.as_dtype(y, fmt)], fmt.dtype, env)
            env = S.rotate(S.CONFIGS, k)
            yield from layout_cases(f"{S.fid(fmt)}/fma/{S.env_id(env)}", softfp8.fma,
                                    [S.as_dtype(c, fmt) for c in (x, y, z)], fmt.dtype, env)

    def regressions():
        # issue 21: 13-bit format, codes above the width: multiply gave 0x1ff0, the core 0x1ffe
        fmt = S.MID[0]
        a = np.full(4096, 0xdff, np.uint16)
        b = np.full(4096, 0x5ed6, np.uint16)
        yield op_case("issue21-13bit-multiply-codes-above-width", fmt, "mul", [a, b],
                      ("nearest_even", True, "after"), with_bits=False)
        g = rng_of("issue21-13bit")
        ra, rb = S.random_codes(fmt, 4096, g), S.random_codes(fmt, 4096, g)
        for opname in ("add", "sub", "mul", "div", "fma"):
            ops = [ra, rb] + ([rb[::-1].copy()] if opname == "fma" else [])
            yield op_case(f"issue21-13bit-{opname}-random-raw-codes", fmt, opname, ops,
                          ("nearest_even", True, "after"), with_bits=False)

    return {"formats": formats, "envs": envs, "layouts": layouts, "regressions": regressions}


@register("order16", "family", "comparisons and max/min of 9..16-bit formats on order keys")
def _order16():
    names = ("max", "min", "maxnum", "minnum", "eq", "ne", "lt", "le", "gt", "ge")

    def formats():
        for k, fmt in enumerate(S.WIDE):
            for name, a, b in _pairs16(fmt, "order16"):
                for opname in names:
                    yield op_case(f"{S.fid(fmt)}/{opname}/{name}", fmt, opname, [a, b], S.rotate(S.SOME, k),
                                  with_bits=(name != "raw-codes"))

    def layouts():
        for fmt in (softfp8.float16, S.MID[4]):
            g = rng_of("order16-layouts", fmt.name)
            x, y = _mixed_codes(fmt, N_LAYOUT, g), _mixed_codes(fmt, N_LAYOUT, g)
            for opname in ("max", "minnum", "lt", "ge", "ne"):
                yield from layout_cases(f"{S.fid(fmt)}/{opname}", _ufunc(opname),
                                        [S.as_dtype(x, fmt), S.as_dtype(y, fmt)], _result_dtype(opname, fmt),
                                        S.SOME[2])

    return {"formats": formats, "layouts": layouts}


# ==========================================================================
# conversions
# ==========================================================================

def _dst_dtype(d):
    return np.dtype(d) if not isinstance(d, softfp8.Format) else d.dtype


def _did(d):
    return S.fid(d) if isinstance(d, softfp8.Format) else np.dtype(d).name


def cast_case(cid, x, src, dst, env, with_bits=True, exhaustive=False):
    dt = _dst_dtype(dst)
    bits = None
    if with_bits and src is not None:
        codes = _in(src, x) if isinstance(src, softfp8.Format) else x
        bdst = dst if isinstance(dst, softfp8.Format) or np.dtype(dst) in (np.float32, np.float64) else None
        if bdst is not None:
            bits = lambda: sfb.convert(codes, src, bdst, **S.bits_opts(env))  # noqa: E731
    xs = S.as_dtype(x, src) if isinstance(src, softfp8.Format) else x
    return Case(cid, _call(lambda a: a.astype(dt), [xs], env), x.size, bits, [raw(x)], exhaustive=exhaustive)


def every_code_casts(srcs, dsts_of, envs):
    """Every source code of each src cast into each of dsts_of(i) (i counts the casts),
    environments rotated through envs."""
    i = 0
    for src in srcs:
        for dst in dsts_of(i):
            if dst is src:
                continue
            env = S.rotate(envs, i)
            i += 1
            yield cast_case(f"{S.fid(src)}->{_did(dst)}/{S.env_id(env)}/every-code", S.codes_all(src), src, dst,
                            env, with_bits=(i % 3 == 0), exhaustive=True)


CAST_DSTS = [softfp8.e4m3, softfp8.e5m2, softfp8.e4m3fnuz, softfp8.float16, softfp8.bfloat16, softfp8.e2m1,
             np.float16, np.float32, np.float64]


@register("convert", "family", "casts from formats of <= 16 bits (and float16) through per-code tables")
def _convert():
    def exhaustive():
        yield from every_code_casts(S.F8 + S.NARROW[::2] + S.WIDE,
                                    lambda i: CAST_DSTS + [S.MID[1], S.rotate(S.F8, i), S.rotate(S.NARROW, i)],
                                    S.CONFIGS)
        # numpy float16 sources: every bit pattern
        h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
        for i, dst in enumerate(S.F8[:8] + S.NARROW[::5] + S.WIDE):
            env = S.rotate(S.CONFIGS, i + 5)
            yield Case(f"float16->{S.fid(dst)}/{S.env_id(env)}/every-pattern", _call(lambda a, d=dst: a.astype(d.dtype),
                                                                                     [h], env), h.size, inputs=[raw(h)],
                       exhaustive=True)

    def envs():
        for src, dst in ((softfp8.e5m2, softfp8.e4m3), (softfp8.bfloat16, softfp8.float16),
                         (softfp8.float16, softfp8.e5m2fnuz), (softfp8.e4m3, softfp8.e2m1),
                         (S.MID[2], softfp8.float16)):
            c = S.codes_all(src) if src.bits <= 8 else S.boundary_codes(src)
            for env in S.CONFIGS:
                yield cast_case(f"{S.fid(src)}->{_did(dst)}/{S.env_id(env)}", c, src, dst, env)

    def layouts():
        for k, (src, dst) in enumerate(((softfp8.e4m3, np.float32), (softfp8.e5m2, softfp8.e4m3),
                                        (softfp8.float16, softfp8.e4m3), (softfp8.bfloat16, np.float64),
                                        (S.MID[1], softfp8.float16), (S.NARROW[7], np.float16),
                                        (softfp8.e4m3, np.float16))):
            g = rng_of("convert-layouts", k)
            x = S.as_dtype(_mixed_codes(src, N_LAYOUT, g), src)
            env = S.rotate(S.CONFIGS, 5 * k)
            yield from cast_layouts(f"{S.fid(src)}->{_did(dst)}/{S.env_id(env)}", x, _dst_dtype(dst), env)
        h = np.random.default_rng(3).integers(0, 65536, N_LAYOUT).astype(np.uint16).view(np.float16)
        yield from cast_layouts("float16->e4m3", h, softfp8.e4m3.dtype, S.CONFIGS[3])

    return {"exhaustive": exhaustive, "envs": envs, "layouts": layouts}


def float_source(tag, fmts, main, envs, rot, layout_pairs, layout_env, public=None):
    """The parts of a family rounding binary32 / binary64 values into fmts: every
    environment of envs on the formats of main, rot(k) on the k-th other one; layouts of
    (source dtype, format) pairs in layout_env(k)."""
    def formats():
        for k, fmt in enumerate(fmts):
            for src in (np.float32, np.float64):
                x = S.float_inputs(fmt, src, rng_of(tag, fmt.name, src.__name__))
                for env in (envs if fmt in main else rot(k)):
                    yield cast_case(f"{src.__name__}->{S.fid(fmt)}/{S.env_id(env)}", x, src, fmt, env)

    def layouts():
        for k, (src, fmt) in enumerate(layout_pairs):
            x = S.float_inputs(fmt, src, rng_of(tag + "-layouts", k))
            x = x[rng_of(tag + "-pick", k).choice(x.size, N_LAYOUT)]
            env = layout_env(k)
            yield from cast_layouts(f"{np.dtype(src).name}->{S.fid(fmt)}/{S.env_id(env)}", x, fmt.dtype, env)

    parts = {"formats": formats, "layouts": layouts}
    if public:
        parts["public"] = public
    return parts


def key_blocks():
    """binary64 inputs in blocks of 16 lanes of one kind each, so that the AVX-512 kernels
    take their binary32-conversion key on every block of ordinary lanes (exponents at the
    edges of binary32's normal range, every low-bit class) and key64x8 on the others (tiny,
    subnormal, huge, NaN payloads)."""
    g = rng_of("key-blocks")
    blocks = []
    for e in (1, 2, 895, 896, 897, 898, 1000, 1023, 1149, 1150, 1151, 1152, 2046):
        for low in (0, 1, 1 << 28, 1 << 29, (1 << 46) - 1, 1 << 45, 1 << 46):
            m = (g.integers(0, 1 << 52, 16, dtype=np.uint64) & ~np.uint64((1 << 47) - 1)) | np.uint64(low)
            sgn = g.integers(0, 2, 16, dtype=np.uint64) << np.uint64(63)
            blocks.append(sgn | (np.uint64(e) << np.uint64(52)) | (m & np.uint64((1 << 52) - 1)))
    for special in (0, 0x7FF << 52, (0x7FF << 52) | 1, (0x7FF << 52) | (1 << 51), 1, (1 << 52) - 1):
        blocks.append(np.full(16, special, dtype=np.uint64) | (g.integers(0, 2, 16, dtype=np.uint64) << np.uint64(63)))
    return np.concatenate(blocks).view(np.float64)


def key_block_cases(envs):
    """each 16-lane block a call of its own: codes, and every block's flags"""
    x = key_blocks()
    assert x.size == (13 * 7 + 6) * 16
    for fmt in (softfp8.e4m3, softfp8.e5m2, softfp8.ue4m3):
        for env in envs:
            def fn(g, fmt=fmt, env=env):
                codes, flags = [], []
                for k in range(0, x.size, 16):
                    with S.context(env), softfp8.collect_flags() as fl:
                        codes.append(x[k:k + 16].astype(fmt.dtype))
                    flags.append(int(fl.flags))
                return np.concatenate(codes), np.array(flags, np.uint8)
            yield Case(f"float64->{S.fid(fmt)}/{S.env_id(env)}/key-blocks", fn, x.size, inputs=[raw(x)])


@register("from_float8", "family", "binary32/binary64 -> 8-bit formats through the compressed key table")
def _from_float8():
    parts = float_source("ff8", S.F8 + S.NARROW[::2], S.F8_MAIN, S.CONFIGS, lambda k: S.SOME[k % 2::2],
                         ((np.float32, softfp8.e4m3), (np.float64, softfp8.e5m2), (np.float32, S.NARROW[2])),
                         lambda k: S.rotate(S.CONFIGS, 9 * k), lambda: _quantiser_cases(deterministic=True))
    parts["key-blocks"] = lambda: key_block_cases([c for c in S.CONFIGS if c[0] in ("nearest_even", "toward_zero",
                                                                                    "upward") and c[2] == "after"])
    return parts


def _f32_route(fmt):
    """cast16.c's binary32-arithmetic kernels apply (AVX2 cast256f: -126 <= emin <= M, M >= 1,
    M - emin <= 127)"""
    emin = 1 - fmt.bias
    return -126 <= emin <= fmt.man_bits and fmt.man_bits >= 1 and fmt.man_bits - emin <= 127


@register("cast16", "family", "binary32/binary64 -> 9..16-bit formats (cast16.c arithmetic rounding)", tables=False)
def _cast16():
    parts = float_source("c16", S.WIDE, (softfp8.float16, softfp8.bfloat16), S.CONFIGS, lambda k: S.SOME[k % 3::3],
                         ((np.float32, softfp8.float16), (np.float64, softfp8.bfloat16), (np.float32, S.MID[1])),
                         lambda k: S.rotate(S.CONFIGS, 7 * k))

    def avx2f32():
        # binary32 inputs of every format with the binary32 route (ties, 2^emin, maxmag and the
        # floats beside them, binary32 subnormals, NaN / infinity: float_inputs) shuffled so
        # that uncovered lanes share eight-lane vectors with ordinary ones, a partial last
        # vector (16k + 13 elements); layouts (strides, splits, unaligned) on three formats
        fmts = [f for f in S.WIDE if _f32_route(f)]
        for k, fmt in enumerate(fmts):
            g = rng_of("c16-avx2f32", fmt.name)
            x = S.float_inputs(fmt, np.float32, g)
            x = x[g.permutation(x.size)][: 16 * (x.size // 16 - 1) + 13]
            for env in (S.CONFIGS if fmt is softfp8.float16 else S.CONFIGS[k % 4::4]):
                yield cast_case(f"float32->{S.fid(fmt)}/{S.env_id(env)}/avx2f32", x, np.float32, fmt, env)
            if k < 3:
                yield from cast_layouts(f"float32->{S.fid(fmt)}/{S.env_id(S.rotate(S.CONFIGS, 5 * k))}/avx2f32",
                                        x[:N_LAYOUT + 7], fmt.dtype, S.rotate(S.CONFIGS, 5 * k))

    parts["avx2f32"] = avx2f32

    def avx2top32():
        # binary32 inputs into formats whose codes are binary32's top bits (cast16.c c16_top32:
        # bfloat16 and the 1-8-M formats of bias 127; a 1-8-7 'fn' format beside them takes
        # the other routes): float_inputs and the binary32 bits at every rounding boundary (low
        # bits 0, 1, half - 1, half, half + 1, all ones under kept codes of even and odd last
        # bit: zero, the smallest and largest subnormals, 2^emin, one, the largest finite and
        # the codes below it), infinities, signalling / quiet NaNs with payloads, both signs;
        # shuffled with a partial last vector (16k + 13); bfloat16 in every environment and
        # every layout (strides, splits, unaligned, reversed)
        fmts = [softfp8.bfloat16] + [softfp8.format(exp_bits=8, man_bits=m, bias=127, name=f"e8m{m}b127")
                                     for m in (1, 3, 6)]
        fmts.append(softfp8.format(exp_bits=8, man_bits=7, bias=127, specials="fn", name="e8m7fn-b127"))
        for k, fmt in enumerate(fmts):
            g = rng_of("c16-avx2top32", fmt.name)
            sh = 23 - fmt.man_bits
            half = 1 << (sh - 1)
            low = np.array([0, 1, half - 1, half, half + 1, (1 << sh) - 1], np.uint32)
            top = (255 << fmt.man_bits) - 1
            kept = np.array([0, 1, 2, 3, (1 << fmt.man_bits) - 2, (1 << fmt.man_bits) - 1, 1 << fmt.man_bits,
                             (1 << fmt.man_bits) + 1, 127 << fmt.man_bits, (127 << fmt.man_bits) + 1,
                             top - 3, top - 2, top - 1, top], np.uint32)
            b = ((kept[:, None] << np.uint32(sh)) | low[None, :]).ravel()
            b = np.concatenate([b, np.array([0x7F800000, 0x7F800001, 0x7FBFFFFF, 0x7FC00000, 0x7FC00001, 0x7FFF0000,
                                             0x7F80FFFF, 0x7FFFFFFF], np.uint32)])
            b = np.concatenate([b, b | np.uint32(0x80000000)]).view(np.float32)
            x = np.concatenate([S.float_inputs(fmt, np.float32, g), b, b, b])
            x = x[g.permutation(x.size)][: 16 * (x.size // 16 - 1) + 13]
            for env in (S.CONFIGS if k == 0 else S.CONFIGS[k % 4::4]):
                yield cast_case(f"float32->{S.fid(fmt)}/{S.env_id(env)}/avx2top32", x, np.float32, fmt, env)
            if k == 0:
                for j in range(0, len(S.CONFIGS), 5):
                    env = S.CONFIGS[j]
                    yield from cast_layouts(f"float32->{S.fid(fmt)}/{S.env_id(env)}/avx2top32", x[:N_LAYOUT + 7],
                                            fmt.dtype, env)

    parts["avx2top32"] = avx2top32
    return parts


# ==========================================================================
# stochastic families (random bits of the counter-based generator, keyed on the element)
# ==========================================================================

@register("sr_arith8", "family", "stochastic add/sub/mul of 8-bit formats (two-candidate tables)")
def _sr_arith8():
    def exhaustive():
        i = 0
        for fmt in S.F8 + S.NARROW[::4]:
            for opname in ("add", "sub", "mul", "div"):
                envs = S.SR if fmt in S.F8_MAIN else [S.rotate(S.SR, i)]
                for env in envs:
                    i += 1
                    yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/all-pairs", fmt, opname, [PA, PB], env,
                                  with_bits=(i % 3 == 0), exhaustive=True)

    def layouts():
        for k, fmt in enumerate((softfp8.e4m3, softfp8.e5m2fnuz, S.NARROW[11])):
            g = rng_of("sr8-layouts", fmt.name)
            x, y = _mixed_codes(fmt, N_LAYOUT, g), _mixed_codes(fmt, N_LAYOUT, g)
            for j, opname in enumerate(("add", "mul")):
                env = S.rotate(S.SR, k + j)
                yield from layout_cases(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}", _ufunc(opname),
                                        [S.as_dtype(x, fmt), S.as_dtype(y, fmt)], fmt.dtype, env)

    return {"exhaustive": exhaustive, "layouts": layouts}


# ---- stochastic square roots on the decision grid (the generator inverted) ----

_M64 = (1 << 64) - 1
_MIX = (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53)
_GOLD = 0x9E3779B97F4A7C15


def _mix64(z):  # rng.h sfp8r_mix64
    for c in _MIX:
        z ^= z >> 33
        z = (z * c) & _M64
    return z ^ (z >> 33)


def _unmix64(z):  # its inverse (x ^ x >> 33 is its own inverse on 64 bits)
    for c in reversed(_MIX):
        z ^= z >> 33
        z = (z * pow(c, -1, 1 << 64)) & _M64
    return z ^ (z >> 33)


def index_with_word(seed, word):
    """An element index whose random word (rng.h sfp8r_bits, stream 0) is word."""
    seed_key = _mix64((seed + 0x94D049BB133111EB) & _M64)
    h = _unmix64(_unmix64((word << 32) | 0x5EED) ^ seed_key)
    return ((h - 0x632BE59BD9B4E019) * pow(_GOLD, -1, 1 << 64)) & _M64


def grid_root_cases():
    """Square roots of E3M12 whose binary64 rounding d lies on the grid of 2^(E-M-N) that
    decides stochastic rounding (N = 32) while the root is not d: when the root is below
    d its kept bits and fraction are those of the binary64 number below d, which changes
    the result for one random word in 2^32.  Each such code at lanes 3, 12 and 27 of a
    32-element call whose element index gives that lane exactly that word."""
    from fractions import Fraction
    fmt = softfp8.format(exp_bits=3, man_bits=12, bias=3, name="e3m12")
    M, N, seed = fmt.man_bits, 32, 2**64 - 3
    sh = 52 - M
    codes = np.arange(1 << (M + fmt.exp_bits), dtype=np.uint32)
    e = (codes >> M).astype(np.int64)
    vals = np.ldexp(1.0 + (codes & ((1 << M) - 1)) / 2.0**M, e - fmt.bias)
    ok = (e > 0) & (e < (1 << fmt.exp_bits) - 1)
    d = np.sqrt(vals[ok])
    bits = d.view(np.uint64)
    on_grid = (bits & np.uint64((1 << (sh - N)) - 1)) == 0
    found = []
    for c, x, root, b in zip(codes[ok][on_grid], vals[ok][on_grid], d[on_grid], bits[on_grid]):
        fx, fr = Fraction(float(x)), Fraction(float(root))
        if fr * fr == fx:
            continue  # an exact root
        below = fr * fr > fx
        kb = int(b) - 1 if below else int(b)
        found.append((int(c), below, (1 << N) - 1 - ((kb & ((1 << sh) - 1)) >> (sh - N))))
    assert (len(found), sum(below for _, below, _ in found)) == (93, 48)
    env = sfb._env(fmt, "stochastic", False, "after", N)
    op = OPS["sqrt"].id
    from softfp8 import _ext
    for c, below, word in found:
        idx = index_with_word(seed, word)
        assert _ext.random_u32(seed, 0, idx) == word
        x = np.full(32, c, dtype=np.uint16)
        for lane in (3, 12, 27):
            def fn(g, x=x, start=(idx - lane) & _M64):
                out, fl = np.empty(32, np.uint16), np.zeros(32, np.uint8)
                _ext.run(op, fmt.params, env, (1, seed, 0, start), None, (x,), out, fl)
                return out, fl
            yield Case(f"e3m12/sqrt/sr/grid-root 0x{c:x} lane {lane}", fn, 32)


@register("sr_arith16", "family", "stochastic add/sub/mul/div/sqrt of 16-bit formats (binary64, decided in the kernel)")
def _sr_arith16():
    def formats():
        for k, fmt in enumerate(S.WIDE):
            for j, (name, a, b) in enumerate(_pairs16(fmt, "sr16")):
                for opname in ("add", "sub", "mul", "div"):
                    env = S.rotate(S.SR, k + j + len(opname))
                    yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/{name}", fmt, opname, [a, b], env,
                                  with_bits=(name != "raw-codes"))
            env = S.rotate(S.SR, k)
            c = S.codes_all(fmt)
            yield op_case(f"{S.fid(fmt)}/sqrt/{S.env_id(env)}/every-code", fmt, "sqrt", [c], env, exhaustive=True)

    def envs():
        for fmt in (softfp8.float16, softfp8.bfloat16):
            pairs = _pairs16(fmt, "sr16-envs", 5000)
            a = np.concatenate([p[1] for p in pairs[1:4]])
            b = np.concatenate([p[2] for p in pairs[1:4]])
            for env in S.SR:
                for opname in ("add", "sub", "mul", "div", "sqrt"):
                    ops = [a] if opname == "sqrt" else [a, b]
                    yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/random", fmt, opname, ops, env)

    def layouts():
        for k, fmt in enumerate((softfp8.float16, softfp8.bfloat16, S.MID[2])):
            g = rng_of("sr16-layouts", fmt.name)
            x, y = _mixed_codes(fmt, N_LAYOUT, g), _mixed_codes(fmt, N_LAYOUT, g)
            for j, opname in enumerate(("add", "div", "sqrt")):
                env = S.rotate(S.SR, k + j)
                ops = [S.as_dtype(x, fmt)] + ([] if opname == "sqrt" else [S.as_dtype(y, fmt)])
                yield from layout_cases(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}", _ufunc(opname), ops, fmt.dtype,
                                        env)

    return {"formats": formats, "envs": envs, "layouts": layouts, "grid-roots": grid_root_cases}


@register("sr_unary8", "family", "stochastic unary operations of 8-bit formats (per-code two-candidate tables)")
def _sr_unary8():
    def exhaustive():
        i = 0
        for fmt in S.F8 + S.NARROW[::3]:
            for opname in ROUNDING_UNARY:
                env = S.rotate(S.SR, i)
                i += 1
                yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/every-byte", fmt, opname,
                              [np.tile(S.codes_all(fmt), 16)], env, with_bits=(i % 2 == 0), exhaustive=True)

    def layouts():
        for k, fmt in enumerate((softfp8.e4m3, S.NARROW[5])):
            x = S.as_dtype(_mixed_codes(fmt, N_LAYOUT, rng_of("sru8", k)), fmt)
            for j, opname in enumerate(("sqrt", "exp", "reciprocal")):
                env = S.rotate(S.SR, k + j)
                yield from layout_cases(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}", _ufunc(opname), [x], fmt.dtype, env)

    return {"exhaustive": exhaustive, "layouts": layouts}


@register("sr_wide", "family", "stochastic casts into 9..16-bit formats and their unary operations (per-code tables)")
def _sr_wide():
    def exhaustive():
        yield from every_code_casts(S.F8[:6] + S.WIDE, lambda i: S.WIDE[::2] + [S.rotate(S.WIDE, i + 1)], S.SR)
        i = 0
        for fmt in S.WIDE:
            for opname in ("exp", "log", "reciprocal", "round_integral"):
                env = S.rotate(S.SR, i)
                i += 1
                yield op_case(f"{S.fid(fmt)}/{opname}/{S.env_id(env)}/every-code", fmt, opname, [S.codes_all(fmt)],
                              env, with_bits=(i % 3 == 0), exhaustive=True)

    def layouts():
        x = S.as_dtype(_mixed_codes(softfp8.e4m3, N_LAYOUT, rng_of("srw")), softfp8.e4m3)
        yield from cast_layouts("e4m3->bfloat16/sr", x, softfp8.bfloat16.dtype, S.SR[1])
        y = S.as_dtype(_mixed_codes(S.MID[1], N_LAYOUT, rng_of("srw2")), S.MID[1])
        yield from layout_cases("e5m4/exp/sr", np.exp, [y], S.MID[1].dtype, S.SR[2])

    return {"exhaustive": exhaustive, "layouts": layouts}


@register("sr_fma", "family", "stochastic fma of 8- and 16-bit formats")
def _sr_fma():
    def formats():
        for k, fmt in enumerate(S.F8 + S.WIDE + S.NARROW[::6]):
            t = _triples(fmt, 8000, rng_of("srfma", fmt.name))
            for env in (S.SR if fmt in (softfp8.e4m3, softfp8.float16) else [S.rotate(S.SR, k)]):
                yield op_case(f"{S.fid(fmt)}/fma/{S.env_id(env)}/random", fmt, "fma", t, env)

    def layouts():
        for k, fmt in enumerate((softfp8.e4m3, softfp8.bfloat16)):
            t = [S.as_dtype(c, fmt) for c in _triples(fmt, N_LAYOUT, rng_of("srfma-l", k))]
            yield from layout_cases(f"{S.fid(fmt)}/fma/sr", softfp8.fma, t, fmt.dtype, S.rotate(S.SR, k))

    return {"formats": formats, "layouts": layouts}


@register("sr_convert8", "family", "stochastic casts of <= 16-bit codes into 8-bit formats (per-code tables)")
def _sr_convert8():
    def exhaustive():
        yield from every_code_casts(S.F8 + S.WIDE + S.NARROW[::4], lambda i: [softfp8.e4m3, softfp8.e5m2, S.rotate(
            S.F8, i + 3), S.rotate(S.NARROW, i)], S.SR)

    def layouts():
        x = S.as_dtype(_mixed_codes(softfp8.bfloat16, N_LAYOUT, rng_of("src8")), softfp8.bfloat16)
        yield from cast_layouts("bfloat16->e4m3/sr", x, softfp8.e4m3.dtype, S.SR[0])

    return {"exhaustive": exhaustive, "layouts": layouts}


@register("sr_from_float8", "family", "stochastic binary32/binary64 -> 8-bit formats")
def _sr_from_float8():
    parts = float_source("srff8", S.F8 + S.NARROW[::2], S.F8_MAIN, S.SR, lambda k: [S.rotate(S.SR, k)],
                         ((np.float32, softfp8.e4m3), (np.float64, softfp8.e4m3)), lambda k: S.rotate(S.SR, k),
                         lambda: _quantiser_cases(deterministic=False))
    parts["key-blocks"] = lambda: key_block_cases(S.SR[:2])
    return parts


@register("sr_cast16", "family", "stochastic binary32/binary64 -> 9..16-bit formats", tables=False)
def _sr_cast16():
    return float_source("src16", S.WIDE, (softfp8.float16, softfp8.bfloat16), S.SR, lambda k: [S.rotate(S.SR, k)],
                        ((np.float32, softfp8.bfloat16), (np.float64, S.MID[1])), lambda k: S.rotate(S.SR, k))


# ==========================================================================
# quantisers (softfp8.scaling, softfp8.mx, DelayedScaling): casts of scaled values
# ==========================================================================

def _quantiser_cases(deterministic):
    from softfp8 import mx, scaling
    g = rng_of("quantisers", deterministic)
    x = np.concatenate([g.standard_normal(4096) * 3, g.standard_normal(64) * 1e-3, [0.0, -0.0, 448.0, 1e4]])
    X = x[:4096].reshape(32, 128)
    env = S.CONFIGS[0] if deterministic else S.SR[0]
    rnd = None if deterministic else "stochastic"
    seed = None if deterministic else 11
    calls = {}
    for fmt in (softfp8.e4m3, softfp8.e5m2, softfp8.float16):
        for scale in (None, 0.3, 2.0 ** -140, 3.0e30):
            calls[f"scaling.quantize/{S.fid(fmt)}/scale={scale}"] = \
                lambda fmt=fmt, scale=scale: scaling.quantize(x, fmt, scale, rounding=rnd, seed=seed)
        calls[f"scaling.quantize/{S.fid(fmt)}/axis0"] = lambda fmt=fmt: scaling.quantize(X, fmt, axis=0, rounding=rnd,
                                                                                          seed=seed)
    for kind in ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp4", "nvfp4"):
        calls[f"mx.quantize/{kind}"] = lambda kind=kind: mx.quantize(X, kind, rounding=rnd, seed=seed)
    if deterministic:
        def delayed():
            ds = scaling.DelayedScaling(softfp8.e4m3)
            outs = [ds.quantize(X * (1 + k)) for k in range(3)]
            return outs
        calls["DelayedScaling/e4m3"] = delayed
    for name, f in calls.items():
        def fn(g, f=f):
            with S.context(env):
                r = f()
            return _flatten(r)
        yield Case(f"public/{name}/{S.env_id(env)}", fn, x.size)


def _flatten(r):
    """Arrays of a quantiser's result (tuples, named tuples, objects with array fields)."""
    out = []
    stack = [r]
    while stack:
        v = stack.pop(0)
        if isinstance(v, np.ndarray) or np.isscalar(v):
            out.append(np.asarray(v))
        elif isinstance(v, (tuple, list)):
            stack[:0] = list(v)
        else:
            fields = dict(vars(v)) if hasattr(v, "__dict__") else {}
            for cls in type(v).__mro__:   # objects with __slots__ (BlockArray) have no __dict__
                for k in getattr(cls, "__slots__", ()):
                    if hasattr(v, k):
                        fields[k] = getattr(v, k)
            stack[:0] = [w for k, w in sorted(fields.items()) if not k.startswith("_") or
                         isinstance(w, np.ndarray)]
    return tuple(out)


# ==========================================================================
# blockq: the block quantiser (softfp8.mx.quantize; fast/blockq.c, quantize.c)
# ==========================================================================

def _block_parts(b):
    """A BlockArray's arrays (elements as raw codes, scales, tensor scale)."""
    ts = () if b.tensor_scale is None else (np.asarray(b.tensor_scale),)
    return (raw(b.elements), np.asarray(b.elements.shape), b.scales) + ts


def _blockq_inputs():
    g = rng_of("blockq")
    normal = g.standard_normal((6, 70)) * 3
    wide = g.standard_normal((5, 37)) * np.exp2(g.integers(-140, 140, (5, 37)))
    sub = np.concatenate([g.standard_normal((3, 40)) * 1e-310, np.zeros((1, 40)), np.full((1, 40), -0.0)])
    sp = g.standard_normal((4, 48))
    sp[0, 3], sp[1, 40], sp[2, 7], sp[3, :16] = np.nan, np.inf, -np.inf, 0.0
    big = g.standard_normal((3, 33)) * 1e300
    return {"normal": normal, "wide": wide, "subnormal": sub, "special": sp, "huge": big}


@register("blockq", "family", "the block quantiser (mx.quantize): amax, shared scales, quotients rounded to odd")
def _blockq():
    from softfp8 import mx
    X = _blockq_inputs()

    def call(x, kind, env=None, **kw):
        def fn(g):
            with S.context(env) if env is not None else _nullctx():
                return _block_parts(mx.quantize(x, kind, **kw))
        return fn

    def kinds():
        # every kind x scale rule x mode (stochastic with a seed) x block size x axis, binary64 and binary32
        for name, x in X.items():
            for src in (np.float64, np.float32):
                with np.errstate(over="ignore"):       # "wide" in binary32: some infinities
                    xs = x.astype(src) if name not in ("huge", "subnormal") or src is np.float64 else x
                for kind in mx.KINDS:
                    rules = [None] if kind == "nvfp4" else list(mx.SCALE_RULES)
                    for i, rule in enumerate(rules):
                        for axis, bs in ((-1, None), (0, 7), (-1, 16)):
                            for rnd, seed in ((None, None), ("toward_zero", None), ("stochastic", 5),
                                              (S.MODES[(i + axis) % len(S.MODES)], None)):
                                yield Case(f"{name}/{src.__name__}/{kind}/{rule}/ax{axis}/b{bs}/{rnd}",
                                           call(xs, kind, axis=axis, scale_rule=rule, rounding=rnd, seed=seed,
                                                block=bs), xs.size)

    def scales():
        x = X["wide"]
        for ts in (2.0 ** -149, 1e-30, 0.37, 3e30):
            yield Case(f"nvfp4/tensor_scale={ts}", call(x, "nvfp4", tensor_scale=np.float32(ts)), x.size)
        for env in S.SR + S.SOME:        # the context's mode, stream, sr_bits, tininess
            for kind in ("nvfp4", "mxfp4", "mxint8", "mxfp8_e5m2"):
                yield Case(f"{kind}/context/{S.env_id(env)}", call(X["normal"], kind, env), X["normal"].size)

    def layouts():
        g = rng_of("blockq-layouts")
        x3 = g.standard_normal((3, 50, 4))
        for kind in mx.KINDS:
            for src in (np.float16, softfp8.bfloat16, softfp8.e4m3, np.int32):
                xs = (x3 * 8).astype(src)
                yield Case(f"{kind}/{np.dtype(src).name}/axis1", call(xs, kind, axis=1), xs.size)
            yield Case(f"{kind}/transposed-f32", call(x3.astype(np.float32).transpose(2, 0, 1), kind, axis=2,
                                                      rounding="stochastic", seed=2), x3.size)
            yield Case(f"{kind}/strided", call(x3[:, ::3, ::2], kind, axis=-1), x3[:, ::3, ::2].size)
            yield Case(f"{kind}/long-row", call(g.standard_normal(300001), kind, rounding="stochastic", seed=4),
                       300001)

    def binary32():
        # the binary32 quotient kernels (QUOT32): MX power-of-two divisors (|s| <= 126 and the
        # general route beyond), NVFP4 rounded to odd at 24 bits; contiguous rows (sixteen lanes
        # at a time and tails) and strided ones; every mode and stochastic environment
        X32 = _blockq_f32_inputs()
        blocks = (None, 1, 7, 16, 32, 33, 48)
        envs = S.SOME + S.SR
        for ki, kind in enumerate(mx.KINDS):
            for name, x in X32.items():
                for ei, env in enumerate(envs):
                    bs = blocks[(ki + ei + len(name)) % len(blocks)]
                    yield Case(f"{name}/{kind}/b{bs}/{S.env_id(env)}", call(x, kind, env, block=bs), x.size)
                yield Case(f"{name}/{kind}/strided", call(x[:, ::2], kind, rounding="nearest_even"), x[:, ::2].size)
                yield Case(f"{name}/{kind}/axis0", call(x, kind, rounding="upward", axis=0), x.size)
        x = X32["tiny-quotients"]
        for ts in (2.0 ** -149, 2.0 ** -140, 2.0 ** -135, 1e-30, 0.37, 3e30):  # NVFP4: quotients beyond binary32, dn == 1
            for env in S.SOME + S.SR_ONE:
                yield Case(f"nvfp4/f32/tensor_scale={ts}/{S.env_id(env)}",
                           call(x, "nvfp4", env, tensor_scale=np.float32(ts)), x.size)

        for ts in (0.37, 1.3e-3, 2.9e-20, 7.1e10):     # NVFP4: quotients at and next to E2M1's midpoints
            for src in (np.float32, np.float64):
                x = _nvfp4_midpoints(float(np.float32(ts)), src)
                for env in S.SOME + S.SR_ONE:
                    yield Case(f"nvfp4/{src.__name__}/midpoints/ts={ts}/{S.env_id(env)}",
                               call(x, "nvfp4", env, tensor_scale=np.float32(ts)), x.size)

        # NVFP4's binary32 lanes (AVX-512; tensor scale and divisor within 2^-60 .. 2^60): quotients
        # at and next to their thresholds (|x| = 2^-100, x / d = 2^-60 and 2^21), exact at 20 bits and
        # at 21..24 bits only; tensor scales at, inside and beyond the route's limits
        for ts in (2.0 ** -60, 1.5 * 2.0 ** -60, 2.0 ** -51, 2.0 ** -30, 0.37, 2.0 ** 30, 2.0 ** 51,
                   2.0 ** 60, 1.25 * 2.0 ** 60, 2.0 ** -61, 2.0 ** 61):
            x = _nvfp4_lane_limits(float(np.float32(ts)))
            for env in S.SOME + S.SR_ONE:
                yield Case(f"nvfp4/f32/lane-limits/ts={ts}/{S.env_id(env)}",
                           call(x, "nvfp4", env, tensor_scale=np.float32(ts)), x.size)

    def avx2():
        # the AVX2 kernels (blockq.c amax32_avx2 / quot32_lanes_avx2; from_float8.c key32_avx2):
        # contiguous binary32 rows of every length 1..41 (partial blocks: the masked tail load) whose
        # last or first element is NaN, an infinity, binary32's largest, a subnormal or -0
        g = rng_of("blockq-avx2")
        f32 = np.float32
        for v in (np.nan, -np.inf, 3.4028234663852886e38, -2.0 ** -140, -0.0):
            rows = []
            for n in range(1, 42):
                x = (g.standard_normal(n) * 4).astype(f32)
                x[(n - 1) if n % 2 else 0] = f32(v)
                rows.append(x)
            for kind in ("mxfp8_e4m3", "mxfp4", "nvfp4", "mxint8"):
                for bs in (None, 8, 16, 32):
                    yield Case(f"{v}/{kind}/b{bs}", lambda g_, rows=rows, kind=kind, bs=bs: tuple(
                        p for x in rows for p in call(x, kind, block=bs)(g_)), sum(r.size for r in rows))
        # rows of more than eight whole blocks (amax32_row_avx2 takes eight blocks at a time):
        # specials and extremes in scattered blocks, a partial last block
        x = (g.standard_normal((3, 600)) * 4).astype(f32)
        for (r, c), v in zip(((0, 5), (0, 77), (1, 130), (1, 511), (2, 257), (2, 599), (0, 300), (1, 12)),
                             (np.nan, np.inf, -np.inf, 3.4028234663852886e38, -2.0 ** -140, np.nan, -0.0, 1e-45)):
            x[r, c] = f32(v)
        x[2, 32:64] = f32(2.0 ** -130)
        for kind in ("mxfp8_e4m3", "mxfp4", "nvfp4", "mxint8"):
            for bs in (None, 8, 16, 32, 24):
                yield Case(f"long/{kind}/b{bs}", call(x, kind, block=bs), x.size)

    def int8reg():
        # MXINT8 by the regular table's formula (blockq.c int8_reg_avx2: sixteen helper codes at a
        # time, flags by the classes k = 0, 1..127, 128..255 seen): every reachable helper code
        # (k/64 for k = 0..128, both signs; 128 by rounding up near 2) at every lane position, and
        # tensors whose codes are of one class only (zeros; subnormal codes; k = 128), every mode
        k = np.arange(0, 129, dtype=np.float64)
        q = np.concatenate([k / 64, -k / 64, [127.7 / 64, -127.7 / 64, 127.4 / 64]])
        seq = np.resize(q, 31 * 144)                  # 144 blocks of 32: 31 codes and an anchor 1.5 (scale 1)
        codes = np.concatenate([np.insert(r, i % 32, 1.5) for i, r in enumerate(seq.reshape(144, 31))])
        ones = {"zeros": np.zeros(16 * 9 + 5), "subnormal-codes": np.resize(np.arange(1, 128) / 64, 16 * 9 + 5),
                "k128": np.full(16 * 9 + 5, 127.8 / 64), "k128-neg": np.full(16 * 9 + 5, -127.8 / 64)}
        for src in (np.float32, np.float64):
            for rnd in S.MODES:
                yield Case(f"every-code/{src.__name__}/{rnd}", call(codes.astype(src), "mxint8", rounding=rnd,
                                                                     block=None), codes.size)
                for name, x in ones.items():
                    yield Case(f"{name}/{src.__name__}/{rnd}", call(x.astype(src), "mxint8", rounding=rnd),
                               x.size)

    return {"kinds": kinds, "scales": scales, "layouts": layouts, "binary32": binary32, "avx2": avx2,
            "int8reg": int8reg}


def _nvfp4_lane_limits(ts):
    """binary32 blocks of 16 for NVFP4's binary32 lanes (blockq.c) with tensor scale ts: each
    block's first element sets its scale s (448 saturated, or an E4M3 value S from amax = 6 S
    ts), the others sit at and a few binary32 steps around the lanes' thresholds and exactness
    boundaries; values that are not normal binary32 numbers are left out (replaced by 1.0)."""
    f32 = np.float32

    def around(v, ks=(-2, -1, 0, 1, 2)):
        out = []
        for k in ks:
            w = f32(v)
            for _ in range(abs(k)):
                w = np.nextafter(w, f32(np.inf if k > 0 else -np.inf))
            out.append(w)
        return out

    rows = []
    for S in (448.0, 2.0 ** -9, 0.875, 13.0):
        sat = S == 448.0
        first = 448.0 * ts * 2.0 ** 22 if sat else 6 * S * ts
        d = S * ts
        cands = [d * 2.0 ** 21, d * 2.0 ** 20.5, d * 2.0 ** -60, 2.0 ** -100, d * 2.0 ** -59]
        exact = [d * (1 + k * 2.0 ** -19) for k in (1, 3)] + [d * (5 + 2.0 ** -22), d * (3 + 2.0 ** -20)]
        for c in cands + exact:
            vals = [first] + [v for w in around(c) for v in (w, -w)][:15]
            row = np.array(vals, np.float64)
            with np.errstate(over="ignore", under="ignore"):
                r32 = row.astype(f32)
            ok = np.isfinite(r32) & (np.abs(r32) >= f32(2.0 ** -126))
            rows.append(np.where(ok, r32, f32(1.0)))
    return np.array(rows, f32)


def _nvfp4_midpoints(ts, src=np.float32):
    """blocks of 16 (binary32 or binary64) whose quotients x / (s * ts) lie at, and a few
    steps of src around, E2M1's rounding boundaries: element 0 makes the block scale s (an
    E4M3 value, amax = 6 * s * ts within its half step), the rest are neighbours of s * ts * m."""
    mids = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.5)
    rows = []
    for s in (2.0 ** -9, 0.875, 1.0, 1.125, 13.0, 240.0, 448.0):
        d = s * ts
        for m in mids:
            row = [src(6 * d)]
            for k in (-3, -1, 0, 1, 2, 5, 40):
                v = src(d * m)
                for _ in range(abs(k)):
                    v = np.nextafter(v, src(np.inf if k > 0 else -np.inf))
                row += [v, -v]
            rows.append(row[:15] + [src(-d * m)])
    return np.array(rows, src)


def _blockq_f32_inputs():
    """binary32 rows for the QUOT32 kernels: subnormal blocks, quotients around 2^-126,
    magnitudes near binary32's largest, NaN / infinity blocks, rows shorter than a block."""
    g = rng_of("blockq-f32")
    f32 = np.float32
    tiny = np.array([2.0 ** -126, 2.0 ** -127, 2.0 ** -149, 2.0 ** -126 * (1 - 2.0 ** -24),
                     2.0 ** -126 * (1 + 2.0 ** -23), 2.0 ** -100, 3 * 2.0 ** -140, 0.0, -0.0])
    sub = (g.integers(1, 2 ** 23, (4, 64)) * 2.0 ** -149) * g.choice([-1.0, 1.0], (4, 64))
    sub[1, ::5] = 0.0
    sub[2, 40] = 1.5                                         # one normal value among subnormals
    tq = g.standard_normal((6, 64))
    for r in range(6):
        tq[r, g.choice(64, 12, replace=False)] = g.choice(tiny, 12) * g.choice([-1.0, 1.0], 12) * 2.0 ** (r - 2)
    huge = g.standard_normal((3, 50)) * 2.0 ** 126
    huge[0, :3] = [3.4028234663852886e38, -3.4028234663852886e38, 2.0 ** 127]
    sp = g.standard_normal((4, 40))
    sp[0, 5], sp[1, 33], sp[2, 0], sp[3, 17] = np.nan, np.inf, -np.inf, np.nan
    short = g.standard_normal((5, 11)) * np.exp2(g.integers(-20, 20, (5, 11)))
    return {"subnormal-blocks": sub.astype(f32), "tiny-quotients": tq.astype(f32), "near-max": huge.astype(f32),
            "special": sp.astype(f32), "short-rows": short.astype(f32)}


def _nullctx():
    import contextlib
    return contextlib.nullcontext()
