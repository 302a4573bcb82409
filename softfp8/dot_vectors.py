"""Dot-product test vectors: ``softfp8 gen/ver FMT dot`` (docs/golden-model.md,
"Dot-product vectors").  The line layout, parsing and flag handling are
:mod:`softfp8.vectors`'; the results come from softfp8.matmul / softfp8.mx.matmul."""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from . import _context, _formats, bits, gemm, matrix_units, mx
from ._dtypes import dtype_of
from .vectors import (_FORMAT_ALIASES, ALL_FLAGS, TESTFLOAT_FLAGS, Mismatch, Report, VectorError,
                      _count, _endpoint_isnan, _fmt, _hex_lines, _line_blocks, _verify_options, code_width,
                      endpoint, flag_names, parse_flags, rounding_name)
# One line per output element of a matrix unit: a 1 x K row of format A times a K x 1
# column of format B plus an addend C of the output format, under an accumulation model
# (docs/golden-model.md, "Dot-product vectors").  MX block dot products (softfp8.mx) put
# each block's E8M0 scale before its elements and have no addend.

_F32 = np.dtype(np.float32)


@dataclasses.dataclass(frozen=True)
class DotSpec:
    """What a dot-product vector file holds: operand formats (or MX kinds), K, the output
    format, the accumulation model (``model``: what softfp8.matmul / softfp8.mx.matmul
    take) and its name as given."""

    a: object              # Format, or the mx kind name (str) of an MX dot
    b: object
    k: int
    out: str               # "float32" or a softfp8 format name
    model: object
    model_name: str
    mx: bool

    @property
    def block(self):
        return mx.KINDS[self.a].block if self.mx else 0

    @property
    def out_bits(self):
        return 32 if self.out == "float32" else _formats.lookup(self.out).bits

    def elem(self, side):
        x = self.a if side == "a" else self.b
        return mx.KINDS[x].format() if self.mx else x


def _literal(text):
    t = text.strip()
    low = t.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(t, 0)
    except ValueError:
        return t


def _keywords(text, what):
    kw = {}
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise ValueError(f"accumulation {what}: expected key=value, got {part.strip()!r}")
        key, value = part.split("=", 1)
        kw[key.strip()] = _literal(value)
    return kw


def dot_model(spec):
    """The accumulation model named by ``spec`` (the ``--accumulation`` option): ``exact``
    (one rounding), ``float32`` (sequential binary32 sums), ``profile:NAME`` (a matrix unit,
    softfp8.Accumulation.profile), ``blockfma:KEY=VALUE,...`` (softfp8.BlockFMA's
    parameters), or ``KEY=VALUE,...`` (softfp8.Accumulation's: accumulator, rounding,
    promote_every, promoted, order, product, product_rounding).  A model object (None,
    an Accumulation, a BlockFMA, a MatrixUnit) is returned as it is."""
    if spec is None or isinstance(spec, (gemm.Accumulation, matrix_units.BlockFMA, matrix_units.MatrixUnit)):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"accumulation must be a model name or a softfp8.Accumulation, BlockFMA or "
                        f"matrix unit, got {spec!r}")
    s = spec.strip()
    if s == "exact":
        return None
    if s in ("float32", "sequential"):
        return gemm.Accumulation(accumulator="float32")
    if s.startswith("profile:"):
        return gemm.Accumulation.profile(s[len("profile:"):].strip())
    try:
        if s.startswith("blockfma:"):
            return matrix_units.BlockFMA(**_keywords(s[len("blockfma:"):], "blockfma"))
        if "=" in s:
            return gemm.Accumulation(**_keywords(s, "model"))
    except TypeError as exc:
        raise ValueError(f"accumulation {spec!r}: {exc}") from None
    raise ValueError(f"unknown accumulation model {spec!r}: exact, float32, profile:NAME "
                     f"({', '.join(matrix_units.profiles())}), blockfma:KEY=VALUE,... or "
                     f"KEY=VALUE,... (softfp8.Accumulation's parameters)")


def _block_model(model):
    return isinstance(model, (matrix_units.BlockFMA, matrix_units.MatrixUnit))


def dot_spec(a, b=None, k=None, *, out="float32", accumulation="exact") -> DotSpec:
    """Check and describe a dot-product vector setting: ``a`` / ``b`` the operand formats
    (``b`` defaults to ``a``) or both MX kinds (``mxfp8_e4m3`` ...: an MX block dot
    product, K a multiple of the block size); ``k`` the products per line (default 16,
    an MX block for MX); ``out`` float32 (default), float16, bfloat16 or a softfp8 format
    (matrix units: float32 or float16; MX: float32)."""
    is_mx = isinstance(a, str) and a in mx.KINDS
    if b is None:
        b = a
    if is_mx or (isinstance(b, str) and b in mx.KINDS):
        for name, x in (("a", a), ("b", b)):
            if not (isinstance(x, str) and x in mx.KINDS) or mx.KINDS[x].scale != "e8m0" or x == "mxint8":
                raise ValueError(f"MX dot vectors take two MX float kinds "
                                 f"({', '.join(n for n in mx.KINDS if n.startswith('mxfp'))}); {name} is {x!r}")
        if mx.KINDS[a].block != mx.KINDS[b].block:
            raise ValueError(f"MX kinds {a} and {b} have different block sizes")
    else:
        a, b = _fmt(endpoint(a).fmt if isinstance(a, str) else a), \
            _fmt(endpoint(b).fmt if isinstance(b, str) else b)
    model = dot_model(accumulation)
    name = accumulation if isinstance(accumulation, str) else repr(accumulation)
    if k is None:
        k = mx.KINDS[a].block if is_mx else 16
    k = _count(k, "k", 1)
    if is_mx and k % mx.KINDS[a].block:
        raise ValueError(f"k={k}: an MX dot product holds whole blocks of {mx.KINDS[a].block}")
    if is_mx and _block_model(model):
        raise ValueError("MX dot products (softfp8.mx.matmul) take exact or softfp8.Accumulation "
                         "models, not matrix units or BlockFMA")
    out_ep = endpoint(_FORMAT_ALIASES.get(out, out) if isinstance(out, str) else out)
    if out_ep.kind == "int" or (out_ep.kind == "float" and out_ep.bits != 32):
        raise ValueError(f"dot products deliver float32 or a softfp8 format, not {out_ep.name}")
    out_name = "float32" if out_ep.kind == "float" else out_ep.fmt.name
    if is_mx and out_name != "float32":
        raise ValueError("MX dot vectors deliver float32")
    if _block_model(model) and out_name not in ("float32", "float16"):
        raise ValueError(f"matrix units deliver float32 or float16, not {out_name}")
    if isinstance(model, matrix_units.MatrixUnit):
        model.model(a.name, out_name, b.name)      # ValueError naming what the unit supports
    return DotSpec(a, b, k, out_name, model, name, is_mx)


def dot_columns(spec: DotSpec):
    """Hex widths of a dot-product line: A1..AK B1..BK C result flags (MX: SA1 A1..A32
    SA2 ... SB1 B1..B32 ... result flags)."""
    wa, wb = code_width(spec.elem("a")), code_width(spec.elem("b"))
    wo = (spec.out_bits + 3) // 4
    if spec.mx:
        nb, blk = spec.k // spec.block, spec.block
        return ((2,) + (wa,) * blk) * nb + ((2,) + (wb,) * blk) * nb + (wo, 2)
    return (wa,) * spec.k + (wb,) * spec.k + (wo, wo, 2)


class _Pool:
    """Code pools of one format for the dot cases: all codes, finite ones, the smallest
    sixteenth and the largest eighth of the finite magnitudes, the special codes (zeros, infinities,
    NaNs)."""

    def __init__(self, fmt):
        codes = np.arange(fmt.code_mask + 1, dtype=np.uint64)
        with np.errstate(all="ignore"):
            v = np.asarray(bits.to_float(codes.astype(fmt.storage), fmt)[0], dtype=np.float64)
        fin = np.isfinite(v)
        self.all = codes
        self.finite = codes[fin]
        order = self.finite[np.argsort(np.abs(v[fin]), kind="stable")]
        self.small, self.large = order[:max(2, order.size // 16)], order[-max(2, order.size // 8):]
        self.special = codes[~fin | (v == 0)]
        self.sign = np.uint64(1 << (fmt.bits - 1)) if fmt.signed else np.uint64(0)


def _f32_codes(rng, n, lo, hi):
    """n random binary32 codes with exponents lo..hi (unbiased; -127: subnormals), both signs."""
    e = rng.integers(lo, hi + 1, n) + 127
    m = rng.integers(0, 1 << 23, n)
    s = rng.integers(0, 2, n)
    return ((s << 31) | (np.clip(e, 0, 254) << 23) | m).astype(np.uint64)


_DOT_KINDS = ("random", "finite", "cancel", "tiny", "huge", "special")


def _addends(rng, spec, kind, n, pool):
    """Addend codes (the output format) for n lines of one kind."""
    if spec.out != "float32":
        sel = {"random": pool.all, "finite": pool.finite, "cancel": pool.small, "tiny": pool.small,
               "huge": pool.large, "special": pool.all}[kind]
        return sel[rng.integers(0, sel.size, n)]
    if kind == "random":
        return rng.integers(0, 1 << 32, n, dtype=np.uint64)
    lo, hi = {"finite": (-20, 16), "cancel": (-40, -10), "tiny": (-127, -120), "huge": (110, 127),
              "special": (-10, 10)}[kind]
    c = _f32_codes(rng, n, lo, hi)
    zero = rng.random(n) < (0.3 if kind in ("cancel", "tiny") else 0.05)
    c[zero] = c[zero] & np.uint64(1 << 31)
    if kind == "special":
        sp = rng.random(n) < 0.3
        c[sp] = rng.choice(np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x80000000],
                                    dtype=np.uint64), int(sp.sum()))
    return c


def _operand_rows(rng, kind, n, k, pool, other=None):
    """(n, k) operand codes of one case kind."""
    src = {"random": pool.all, "finite": pool.finite, "cancel": pool.finite, "tiny": pool.small,
           "huge": pool.large, "special": pool.finite}[kind]
    x = src[rng.integers(0, src.size, (n, k))]
    if kind == "special" and pool.special.size:
        where = rng.integers(0, k, n)
        x[np.arange(n), where] = pool.special[rng.integers(0, pool.special.size, n)]
    return x


def _dot_rows(rng, spec, kind, n, pa, pb):
    """(A, B) codes (n, K) of n lines of one case kind."""
    k = spec.k
    A = _operand_rows(rng, kind, n, k, pa)
    B = _operand_rows(rng, kind, n, k, pb)
    if kind == "cancel" and k >= 2:
        h = k // 2
        A[:, h:2 * h] = A[:, :h]
        if pb.sign:                                  # b_i -> -b_i: the two halves cancel
            B[:, h:2 * h] = B[:, :h] ^ pb.sign
        elif pa.sign:
            A[:, h:2 * h] ^= pa.sign
            B[:, h:2 * h] = B[:, :h]
        j = rng.integers(0, 2 * h, n)                # one term perturbed in half the lines
        pert = pb.finite[rng.integers(0, pb.finite.size, n)]
        keep = rng.random(n) < 0.5
        B[np.arange(n), j] = np.where(keep, B[np.arange(n), j], pert)
    return A, B


def _mx_scales(rng, kind, n, nb):
    """E8M0 scale codes of one case kind over the whole range 0..254 (never 0xFF, the NaN
    scale): their products 2^(ea + eb) reach 2^-254 .. 2^254, far beyond binary32, which
    softfp8.mx.matmul holds exactly."""
    lo, hi = {"tiny": (0, 40), "huge": (200, 254), "random": (0, 254)}.get(kind, (110, 144))
    return rng.integers(lo, hi + 1, (n, nb)).astype(np.uint64)


def dot_cases(spec: DotSpec, count=1000, seed=1):
    """The stimulus of ``count`` dot-product lines: (A, B, C) with A, B of shape (count, K)
    and C (count,) (None for MX), plus (SA, SB) of shape (count, K / block) for MX; uint64
    codes.  Lines cycle through six kinds (uniform codes, finite codes with an addend of
    the products' magnitude, cancelling halves, the smallest magnitudes, the largest
    magnitudes, one special operand or addend)."""
    count = _count(count, "count", 0)
    rng = np.random.default_rng(np.random.SeedSequence([_count(seed, "seed", 0), 2]))
    pa, pb = _Pool(spec.elem("a")), _Pool(spec.elem("b"))
    po = None if spec.out == "float32" else _Pool(_formats.lookup(spec.out))
    kinds = np.arange(count) % len(_DOT_KINDS)
    A = np.zeros((count, spec.k), np.uint64)
    B = np.zeros((count, spec.k), np.uint64)
    C = np.zeros(count, np.uint64)
    nb = spec.k // spec.block if spec.mx else 0
    SA = np.zeros((count, nb), np.uint64)
    SB = np.zeros((count, nb), np.uint64)
    for ki, kind in enumerate(_DOT_KINDS):
        rows = np.flatnonzero(kinds == ki)
        if not rows.size:
            continue
        A[rows], B[rows] = _dot_rows(rng, spec, kind, rows.size, pa, pb)
        if spec.mx:
            SA[rows], SB[rows] = _mx_scales(rng, kind, rows.size, nb), _mx_scales(rng, kind, rows.size, nb)
        else:
            C[rows] = _addends(rng, spec, kind, rows.size, po)
    if spec.mx:
        return A, B, None, SA, SB
    return A, B, C, None, None


def _out_dtype(spec):
    return _F32 if spec.out == "float32" else dtype_of(_formats.lookup(spec.out))


def _dot_env(spec, rounding, saturate, tininess):
    """The context of a dot computation (ExitStack), checked."""
    rounding = rounding_name(rounding)
    if rounding == "stochastic":
        raise ValueError("dot products: accumulation models and matrix units use the deterministic "
                         "rounding modes, not stochastic")
    if _block_model(spec.model) and rounding != "nearest_even":
        raise ValueError(f"the matrix-unit model {spec.model_name} rounds as its parameters say; "
                         f"leave --rounding at its default")
    stack = contextlib.ExitStack()
    stack.enter_context(_context.rounding(rounding))
    if saturate is not None:
        stack.enter_context(_context.saturation(bool(saturate)))
    stack.enter_context(_context.tininess(tininess))
    return stack


def _dot_compute(spec, A, B, C, SA, SB, rounding, saturate, tininess):
    """(result codes, flags) per line through softfp8.matmul / softfp8.mx.matmul."""
    n = A.shape[0]
    res = np.zeros(n, np.uint64)
    fl = np.zeros(n, np.uint8)
    fa, fb = spec.elem("a"), spec.elem("b")
    Av = A.astype(fa.storage).view(dtype_of(fa))
    Bv = B.astype(fb.storage).view(dtype_of(fb))
    odt = _out_dtype(spec)
    ut = np.dtype(f"u{odt.itemsize}")
    if not spec.mx:
        Cv = C.astype(ut).view(odt)
    # the flags are the lines' own (collect_flags): NumPy's warnings of the products are not wanted
    with _dot_env(spec, rounding, saturate, tininess), np.errstate(all="ignore"):
        for i in range(n):
            with _context.collect_flags() as cf:
                if spec.mx:
                    xa = mx.BlockArray(Av[i:i + 1], SA[i:i + 1].astype(np.uint8), kind=spec.a, axes=(1,),
                                       block=(spec.block,))
                    xb = mx.BlockArray(Bv[i][:, None], SB[i][:, None].astype(np.uint8), kind=spec.b,
                                       axes=(0,), block=(spec.block,))
                    r = mx.matmul(xa, xb, out_dtype=np.float32, accumulation=spec.model)
                else:
                    r = gemm.matmul(Av[i:i + 1], Bv[i][:, None], c=Cv[i:i + 1, None], out_dtype=odt,
                                    accumulation=spec.model)
            res[i] = int(np.asarray(r).reshape(-1).view(ut)[0])
            fl[i] = int(cf.flags)
    return res, fl


def _dot_cols(spec, A, B, C, SA, SB):
    """The operand columns of dot lines in file order."""
    if not spec.mx:
        return [A[:, j] for j in range(spec.k)] + [B[:, j] for j in range(spec.k)] + [C]
    blk, cols = spec.block, []
    for X, S in ((A, SA), (B, SB)):
        for j in range(spec.k // blk):
            cols += [S[:, j]] + [X[:, j * blk + t] for t in range(blk)]
    return cols


def generate_dot(a, b=None, k=None, *, out="float32", accumulation="exact", rounding="nearest_even",
                 saturate=None, tininess="after", count=1000, seed=1, testfloat=False, chunk=4096):
    """Yield the lines (bytes chunks) of ``count`` dot products: ``A1..AK B1..BK C result
    flags`` (MX: ``SA1 A1..A32 ... SB1 B1..B32 ... result flags``); docs/golden-model.md,
    "Dot-product vectors"."""
    spec = dot_spec(a, b, k, out=out, accumulation=accumulation)
    _dot_env(spec, rounding, saturate, tininess).close()      # checks the options
    A, B, C, SA, SB = dot_cases(spec, count, seed)
    widths = dot_columns(spec)
    keep = np.uint8(TESTFLOAT_FLAGS if testfloat else ALL_FLAGS)
    chunk = _count(chunk, "chunk", 1)

    def gen():
        for s in range(0, A.shape[0], chunk):
            sl = slice(s, s + chunk)
            parts = (A[sl], B[sl], None if C is None else C[sl], None if SA is None else SA[sl],
                     None if SB is None else SB[sl])
            res, fl = _dot_compute(spec, *parts, rounding, saturate, tininess)
            yield _hex_lines(_dot_cols(spec, *parts) + [res, (fl & keep).astype(np.uint64)], widths)
    return gen()


def _split_dot(spec, cols):
    """(A, B, C, SA, SB) from a block's operand columns."""
    k = spec.k
    if not spec.mx:
        return np.stack(cols[:k], 1), np.stack(cols[k:2 * k], 1), cols[2 * k], None, None
    blk, nb = spec.block, spec.k // spec.block
    step = blk + 1
    out = []
    for side in range(2):
        base = side * nb * step
        S = np.stack([cols[base + j * step] for j in range(nb)], 1)
        X = np.stack([cols[base + j * step + 1 + t] for j in range(nb) for t in range(blk)], 1)
        out += [X, S]
    return out[0], out[2], None, out[1], out[3]


def _check_dot_codes(spec, first, A, B, C, SA, SB):
    fa, fb = spec.elem("a"), spec.elem("b")
    checks = [("a", A, fa.code_mask), ("b", B, fb.code_mask)]
    if C is not None and spec.out != "float32":
        checks.append(("c", C[:, None], _formats.lookup(spec.out).code_mask))
    for name, X, mask in checks:
        bad = np.flatnonzero(np.any(X > np.uint64(mask), axis=1))
        if bad.size:
            i = int(bad[0])
            raise VectorError(f"line {first + i}: an operand {name} is not a code "
                              f"(0..{mask:X}): {' '.join(f'{int(v):X}' for v in X[i])}")
    for name, S in (("a", SA), ("b", SB)):
        if S is not None and S.size and np.any(S == np.uint64(mx.E8M0_NAN)):
            i = int(np.flatnonzero(np.any(S == np.uint64(mx.E8M0_NAN), axis=1))[0])
            raise VectorError(f"line {first + i}: a block scale of {name} is FF, the NaN scale, "
                              f"which softfp8.mx.matmul refuses")


def verify_dot(stream, a, b=None, k=None, *, out="float32", accumulation="exact", rounding="nearest_even",
               saturate=None, tininess="after", nan=None, ignore_flags=0, max_report=20,
               block_lines=1 << 14, testfloat=False) -> Report:
    """Recompute every line of a dot-product vector stream (as :func:`verify`); a
    Mismatch's ``operands`` are the line's operand columns in file order."""
    spec = dot_spec(a, b, k, out=out, accumulation=accumulation)
    rounding, nan = _verify_options(stream, rounding, nan, testfloat)
    _dot_env(spec, rounding, saturate, tininess).close()
    max_report = _count(max_report, "max_report", 0)
    keep = np.uint8(ALL_FLAGS & ~parse_flags(ignore_flags) & (TESTFLOAT_FLAGS if testfloat else ALL_FLAGS))
    widths = dot_columns(spec)
    oep = endpoint(spec.out)
    report = Report()
    for first, cols in _line_blocks(stream, widths, _count(block_lines, "block_lines", 1)):
        parts = _split_dot(spec, cols[:-2])
        _check_dot_codes(spec, first, *parts)
        got, got_fl = cols[-2], cols[-1].astype(np.uint8)
        exp, exp_fl = _dot_compute(spec, *parts, rounding, saturate, tininess)
        same = exp == got
        if nan == "class":
            same |= _endpoint_isnan(oep, exp) & _endpoint_isnan(oep, got)
        bad = ~same | ((exp_fl & keep) != (got_fl & keep))
        for i in np.flatnonzero(bad)[:max(0, max_report - len(report.first))]:
            report.first.append(Mismatch(first + int(i), tuple(int(c[i]) for c in cols[:-2]), None,
                                         int(exp[i]), int(exp_fl[i]), int(got[i]), int(got_fl[i])))
        report.mismatches += int(np.count_nonzero(bad))
        report.lines += got.size
    return report


def describe_dot(spec: DotSpec, m: Mismatch) -> str:
    """One readable line for a dot-product mismatch (operands, expected / actual with values)."""
    oep = endpoint(spec.out)
    w = oep.width

    def value(code):
        if code > oep.mask:
            return "not a code"
        if oep.kind == "float":
            return repr(float(np.array(code, np.uint32).view(np.float32)))
        return repr(oep.fmt.decode(code))

    widths = dot_columns(spec)
    ops = " ".join(f"{o:0{cw}X}" for o, cw in zip(m.operands, widths))
    return (f"line {m.line}: dot({ops}): expected {m.expected:0{w}X} ({value(m.expected)}) flags "
            f"{m.expected_flags:02X} ({flag_names(m.expected_flags)}), got {m.actual:0{w}X} "
            f"({value(m.actual)}) flags {m.actual_flags:02X} ({flag_names(m.actual_flags)})")


__all__ = ["DotSpec", "dot_model", "dot_spec", "dot_columns", "dot_cases", "generate_dot", "verify_dot",
           "describe_dot"]
