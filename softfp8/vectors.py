"""Test vectors in Berkeley TestFloat's line format: a generator and a verifier.

``softfp8 gen`` / :func:`generate` writes one line per case: the operands, (under
stochastic rounding) the 32 random bits, the result and the flags, in upper-case hex
separated by single spaces, like ``testfloat_gen``::

    3C 47 43 01          e4m3 add: a b result flags
    3C 47 0000BEEF 44 01 stochastic: a b random result flags

``softfp8 ver`` / :func:`verify` reads a device's results in the same format and
recomputes every line through :mod:`softfp8.bits`.  The column layout, the case sets
and the flag byte are described in docs/vectors.md.
"""
from __future__ import annotations

import dataclasses
import io
import itertools

import numpy as np

from . import _context, _svgen, bits
from ._validation import _as_int

FLAG_NAMES = {int(f): f.name.lower() for f in _context.Flags}
ALL_FLAGS = 0
for _bit in FLAG_NAMES:
    ALL_FLAGS |= _bit
EXHAUSTIVE_LIMIT = 24       # exhaustive when operands carry at most this many bits in all
CHUNK = 1 << 16             # cases per numpy chunk
_RANDOM_WIDTH = 8           # hex digits of the stochastic random-bits column
_HEXCHARS = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)
_HEXVAL = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789ABCDEF"):
    _HEXVAL[_c] = _i
for _i, _c in enumerate(b"abcdef"):
    _HEXVAL[_c] = 10 + _i


# TestFloat's rounding names (testfloat_gen / testfloat_ver options, with or without the
# leading "r"), as aliases of softfp8's
TESTFLOAT_ROUNDING = {"near_even": "nearest_even", "minMag": "toward_zero", "min": "downward",
                      "max": "upward", "near_maxMag": "nearest_away", "odd": "to_odd"}
ROUNDING_ALIASES = {**TESTFLOAT_ROUNDING, **{"r" + k: v for k, v in TESTFLOAT_ROUNDING.items()}}
TESTFLOAT_FLAGS = 0x1F      # TestFloat's flag byte: softfp8's without the denormal bit


def rounding_name(name):
    """softfp8's name of a rounding mode given by softfp8's or TestFloat's name."""
    if isinstance(name, str) and name in ROUNDING_ALIASES:
        return ROUNDING_ALIASES[name]
    return name


class VectorError(ValueError):
    """A malformed vector file (the message names the line)."""


# the operations with code operands and one result: TestFloat's line format
VECTOR_OPERATIONS = {name: op for name, op in bits.OPERATIONS.items()
                     if op.kind in ("binary", "compare", "relation", "unary", "predicate", "ternary")}


def _op(op):
    if isinstance(op, bits.Operation):
        return op
    if op not in VECTOR_OPERATIONS:
        if op in bits.OPERATIONS:
            raise ValueError(f"operation {op!r} has a second result or an integer operand, which "
                             f"TestFloat's line format does not hold; vectors cover "
                             f"{', '.join(VECTOR_OPERATIONS)}")
        raise ValueError(f"unknown operation {op!r} (known: {', '.join(VECTOR_OPERATIONS)})")
    return bits.OPERATIONS[op]


def _fmt(fmt):
    return bits._check_format(fmt)


def _stochastic(op, rounding):
    return op.rounds and rounding == "stochastic"


def code_width(fmt) -> int:
    """Hex digits of one code of fmt."""
    return (fmt.bits + 3) // 4


def columns(fmt, op, rounding="nearest_even"):
    """Hex widths of a line's columns: operands, [random], result, flags."""
    fmt, op = _fmt(fmt), _op(op)
    w = code_width(fmt)
    result = {"compare": 1, "predicate": 1, "relation": 2}.get(op.kind, w)
    rnd = (_RANDOM_WIDTH,) if _stochastic(op, rounding) else ()
    return (w,) * op.arity + rnd + (result, 2)


# ------------------------------------------------------------- case sets ----

def _unique(values):
    return list(dict.fromkeys(int(v) for v in values))


def special_codes(fmt, level=1) -> np.ndarray:
    """TestFloat-style special operand codes of fmt: every sign, a set of exponent
    fields (both ends, around the bias) crossed with significand patterns (level 1:
    zero, one, two, the top bit, all ones and neighbours; level 2 adds every single
    bit, every run of ones from either end and their complements, and every exponent
    field of formats with at most 6 exponent bits)."""
    fmt = _fmt(fmt)
    if level not in (1, 2):
        raise ValueError(f"level must be 1 or 2, got {level!r}")
    m, emax = fmt.man_bits, (1 << fmt.exp_bits) - 1
    full = (1 << m) - 1
    top = (1 << (m - 1)) if m else 0
    exps = [0, 1, 2, fmt.bias - 1, fmt.bias, fmt.bias + 1, emax - 2, emax - 1, emax]
    sigs = [0, 1, 2, top, top | 1, full, full - 1, full ^ top]
    if level == 2:
        if fmt.exp_bits <= 6:
            exps = list(range(emax + 1))
        else:
            exps += [k for d in range(3, 6) for k in (d, emax - d, fmt.bias - d, fmt.bias + d)]
        for k in range(m + 1):
            sigs += [1 << k, (1 << k) - 1, full ^ (1 << k), full ^ ((1 << k) - 1)]
    exps = [e for e in _unique(exps) if 0 <= e <= emax]
    sigs = [s for s in _unique(sigs) if 0 <= s <= full]
    signs = (0, 1) if fmt.signed else (0,)
    sbit = 1 << (fmt.bits - 1)
    codes = [(sbit if s else 0) | (e << m) | p for s in signs for e in exps for p in sigs]
    return np.array(_unique(codes), dtype=np.uint64)


@dataclasses.dataclass(frozen=True)
class CaseSet:
    """The cases of one (format, operation): exhaustive, or specials then random."""

    exhaustive: bool
    specials: tuple        # per operand: the special-code array cycled over (non-exhaustive)
    grid: int              # cases of the special-value grid
    random: int            # seeded random cases after the grid

    @property
    def total(self):
        return self.grid + self.random


def _count(value, what, low):
    """value as an int >= low (TypeError / ValueError naming it)."""
    n = _as_int(value, what)
    if n < low:
        raise ValueError(f"{what} must be >= {low}, got {value!r}")
    return n


def case_set(fmt, op, level=1, count=10000, random_only=False) -> CaseSet:
    fmt, op = _fmt(fmt), _op(op)
    count = _count(count, "count", 0)
    if _as_int(level, "level") not in (1, 2):
        raise ValueError(f"level must be 1 or 2, got {level!r}")
    if random_only:
        return CaseSet(False, (), 0, int(count))
    if fmt.bits * op.arity <= EXHAUSTIVE_LIMIT:
        return CaseSet(True, (), 1 << (fmt.bits * op.arity), 0)
    s = special_codes(fmt, level)
    per = [s] * op.arity
    if op.arity == 3 and level == 2:
        per[2] = special_codes(fmt, 1)   # (a, b) over level 2, c cycling over level 1
        grid = s.size ** 2
    else:
        grid = int(np.prod([x.size for x in per], dtype=np.int64))
    return CaseSet(False, tuple(per), grid, int(count))


def _grid_operands(cs, fmt, op, start, stop):
    idx = np.arange(start, stop, dtype=np.uint64)
    if cs.exhaustive:
        b = np.uint64(fmt.bits)
        mask = np.uint64((1 << fmt.bits) - 1)
        return [(idx >> (b * np.uint64(op.arity - 1 - k))) & mask for k in range(op.arity)]
    per = cs.specials
    if op.arity == 3 and per[2].size != per[0].size:   # level-2 ternary
        n = np.uint64(per[0].size)
        return [per[0][idx // n], per[1][idx % n], per[2][idx % np.uint64(per[2].size)]]
    out, rest = [], idx
    for k in reversed(range(op.arity)):
        n = np.uint64(per[k].size)
        out.append(per[k][rest % n])
        rest = rest // n
    return out[::-1]


def _chunks(fmt, op, cs, seed, stochastic, max_lines, chunk):
    """(operand arrays, random-bits array or None) per chunk, in order."""
    total = cs.total if max_lines is None else min(cs.total, int(max_lines))
    ops_rng = np.random.PCG64(np.random.SeedSequence([seed, 0]))
    rnd_rng = np.random.PCG64(np.random.SeedSequence([seed, 1]))
    mask = np.uint64(fmt.code_mask)
    pos = 0
    while pos < total:
        stop = min(total, pos + chunk)
        g_stop = min(stop, cs.grid)
        parts = []
        if pos < g_stop:
            parts.append(_grid_operands(cs, fmt, op, pos, g_stop))
        if stop > max(pos, cs.grid):
            k = stop - max(pos, cs.grid)
            raw = ops_rng.random_raw(k * op.arity).astype(np.uint64).reshape(k, op.arity) & mask
            parts.append([raw[:, j] for j in range(op.arity)])
        operands = [np.concatenate([p[j] for p in parts]) for j in range(op.arity)]
        rnd = (rnd_rng.random_raw(stop - pos).astype(np.uint64) & np.uint64(0xFFFFFFFF)
               if stochastic else None)
        yield operands, rnd
        pos = stop


def _compute(fmt, op, operands, rnd, rounding, saturate, tininess, sr_bits, isa="default"):
    """(result codes as uint64, flags uint8) through softfp8.bits."""
    codes = [o.astype(fmt.storage) for o in operands]
    fn = getattr(bits, op.name)
    if op.rounds:
        kw = dict(rounding=rounding, saturate=saturate, tininess=tininess, sr_bits=sr_bits, isa=isa)
        if rnd is not None:
            kw["random_bits"] = rnd.astype(np.uint32)
        res, flags = fn(fmt, *codes, **kw)
    elif op.noflags:
        res = fn(fmt, *codes)
        flags = np.zeros(np.shape(res), dtype=np.uint8)
    else:
        res, flags = fn(fmt, *codes, isa=isa)
    res = np.asarray(res)
    if op.kind == "relation":
        res = res.astype(np.int8).view(np.uint8)
    return res.astype(np.uint64), np.asarray(flags, dtype=np.uint8)


def _hex_lines(cols, widths):
    """Bytes of fixed-width lines: each column in upper-case hex, single spaces."""
    n = cols[0].size
    linelen = sum(widths) + len(widths)
    buf = np.full((n, linelen), ord(" "), dtype=np.uint8)
    pos = 0
    for col, w in zip(cols, widths):
        col = col.astype(np.uint64)
        for j in range(w):
            shift = np.uint64(4 * (w - 1 - j))
            buf[:, pos + j] = _HEXCHARS[((col >> shift) & np.uint64(15)).astype(np.intp)]
        pos += w + 1
    buf[:, -1] = ord("\n")
    return buf.tobytes()


def generate(fmt, op, *, rounding="nearest_even", saturate=None, tininess="after", sr_bits=32,
             level=1, count=10000, random_only=False, seed=1, max_lines=None, chunk=CHUNK,
             isa="default", testfloat=False):
    """Yield the vector lines of one (format, operation, environment) as bytes chunks.

    8-bit formats (any operation whose operands have at most 24 bits in all) are
    exhaustive; wider ones get the special-value grid of ``level`` then ``count``
    random cases; ``random_only`` gives just the ``count`` random cases (any format).
    Every random choice derives from ``seed``.  ``saturate=None`` is the format's
    default.  ``isa``: an ISA convention (softfp8.isa); ``testfloat=True`` writes
    TestFloat's flag byte (no denormal bit).  ``rounding`` takes TestFloat's names
    too.  The arguments are checked at the call, before the first line."""
    fmt, op = _fmt(fmt), _op(op)
    rounding = rounding_name(rounding)
    bits._env(fmt, rounding, saturate, tininess, sr_bits)   # checks the options
    bits._isa(isa)
    cs = case_set(fmt, op, level, count, random_only)
    seed = _count(seed, "seed", 0)
    chunk = _count(chunk, "chunk", 1)
    if max_lines is not None:
        max_lines = _count(max_lines, "max_lines", 0)
    return _generate(fmt, op, cs, rounding, saturate, tininess, sr_bits, seed, max_lines, chunk,
                     isa, testfloat)


def _generate(fmt, op, cs, rounding, saturate, tininess, sr_bits, seed, max_lines, chunk, isa,
              testfloat):
    stochastic = _stochastic(op, rounding)
    widths = columns(fmt, op, rounding)
    keep = np.uint8(TESTFLOAT_FLAGS if testfloat else ALL_FLAGS)
    for operands, rnd in _chunks(fmt, op, cs, seed, stochastic, max_lines, chunk):
        res, flags = _compute(fmt, op, operands, rnd, rounding, saturate, tininess, sr_bits, isa)
        cols = operands + ([rnd] if stochastic else []) + [res, (flags & keep).astype(np.uint64)]
        yield _hex_lines(cols, widths)


def write(out, fmt, op, **options) -> int:
    """Write the lines of :func:`generate` to a binary file; returns the line count."""
    if not callable(getattr(out, "write", None)):
        raise TypeError(f"out must be a binary file (with a write method), got {out!r}")
    n = 0
    widths = columns(fmt, op, rounding_name(options.get("rounding", "nearest_even")))
    linelen = sum(widths) + len(widths)
    for block in generate(fmt, op, **options):
        out.write(block)
        n += len(block) // linelen
    return n


# -------------------------------------------------------------- verifier ----

def flag_names(flags: int) -> str:
    if not 0 <= _as_int(flags, "flags") <= ALL_FLAGS:
        raise ValueError(f"flags must be a mask of softfp8 flags (0..{ALL_FLAGS:#04x}), "
                         f"got {flags!r}")
    names = [name for bit, name in sorted(FLAG_NAMES.items()) if flags & bit]
    return "|".join(names) if names else "none"


def parse_flags(text) -> int:
    """A flag mask from names ("inexact,denormal"), hex ("0x21") or an int."""
    if isinstance(text, int):
        mask = text
    else:
        mask = 0
        by_name = {v: k for k, v in FLAG_NAMES.items()}
        for part in str(text).replace("|", ",").split(","):
            p = part.strip().lower()
            if not p:
                continue
            if p in by_name:
                mask |= by_name[p]
            else:
                try:
                    mask |= int(p, 0)
                except ValueError:
                    raise ValueError(f"unknown flag {part.strip()!r} (known: "
                                     f"{', '.join(by_name)}, or a hex mask)") from None
    if not 0 <= mask <= ALL_FLAGS:
        raise ValueError(f"flag mask {mask:#x} has bits outside {ALL_FLAGS:#04x}")
    return mask


@dataclasses.dataclass
class Mismatch:
    line: int              # 1-based line number
    operands: tuple
    random: int | None
    expected: int
    expected_flags: int
    actual: int
    actual_flags: int


@dataclasses.dataclass
class Report:
    lines: int = 0
    mismatches: int = 0
    first: list = dataclasses.field(default_factory=list)

    @property
    def ok(self):
        return self.lines > 0 and self.mismatches == 0


def _parse_block(data, widths, first_line, ncols_check=True):
    """Columns (uint64 arrays) of a block of whole lines."""
    linelen = sum(widths) + len(widths)
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.size % linelen:
        _find_bad_line(data, widths, first_line)
    raw = raw.reshape(-1, linelen)
    cols, pos = [], 0
    for k, w in enumerate(widths):
        sep = raw[:, pos + w]
        want = ord("\n") if k == len(widths) - 1 else ord(" ")
        digits = _HEXVAL[raw[:, pos:pos + w]]
        if np.any(sep != want) or np.any(digits == 255):
            _find_bad_line(data, widths, first_line)
        val = np.zeros(raw.shape[0], dtype=np.uint64)
        for j in range(w):
            val = (val << np.uint64(4)) | digits[:, j].astype(np.uint64)
        cols.append(val)
        pos += w + 1
    return cols


def _find_bad_line(data, widths, first_line):
    want = " ".join("H" * w for w in widths)
    for i, line in enumerate(data.split(b"\n")):
        fields = line.split(b" ")
        if (len(fields) != len(widths) or any(len(f) != w for f, w in zip(fields, widths))
                or any(_HEXVAL[c] == 255 for f in fields for c in f)):
            shown = line[:80].decode("ascii", "replace")
            raise VectorError(f"line {first_line + i}: expected {len(widths)} hex columns of "
                              f"widths {'/'.join(map(str, widths))} ({want}), got {shown!r}")
    raise VectorError(f"line {first_line}: malformed block")   # pragma: no cover


def _normalize(data, widths, first_line):
    """A block with CRLF line ends, tabs, runs of blanks, leading blanks, blank lines or
    short hex fields rewritten in the fixed layout (blank lines dropped)."""
    out = []
    for i, line in enumerate(data.split(b"\n")):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != len(widths) or any(len(f) > w for f, w in zip(fields, widths)):
            shown = line[:80].decode("ascii", "replace")
            raise VectorError(f"line {first_line + i}: expected {len(widths)} hex columns of at "
                              f"most {'/'.join(map(str, widths))} digits, got {shown!r}")
        out.append(b" ".join(f.rjust(w, b"0") for f, w in zip(fields, widths)))
    return b"\n".join(out) + b"\n" if out else b""


def _blocks(stream, linelen, block_bytes):
    """Whole-line byte blocks of a binary stream (the last line may lack its newline)."""
    rest = b""
    while True:
        data = stream.read(block_bytes)
        if not data:
            break
        data = rest + data
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut:
            yield data[:cut]
    if rest.strip():
        yield rest + b"\n"


def _read_blocks(stream, fmt, op, widths, block_lines):
    """(first line number, columns) per block of a vector stream: tolerant parsing
    (CRLF, tabs, runs of blanks, short fields, blank lines) and the operand check."""
    linelen = sum(widths) + len(widths)
    lines = 0
    for data in _blocks(stream, linelen, linelen * block_lines):
        first = lines + 1
        if len(data) % linelen or b"\r" in data or b"\t" in data or b"  " in data or \
                b"\n\n" in data or data[:1] == b" " or b"\n " in data:
            data = _normalize(data, widths, first)
            if not data:
                continue
        cols = _parse_block(data, widths, first)
        for k, o in enumerate(cols[:op.arity]):
            if o.size and int(o.max()) > fmt.code_mask:
                i = int(np.argmax(o > np.uint64(fmt.code_mask)))
                raise VectorError(f"line {first + i}: operand {'abc'[k]} = {int(o[i]):X} is not "
                                  f"a code of {fmt.name} (0..{fmt.code_mask:X})")
        lines += cols[0].size
        yield first, cols


def read_cases(stream, fmt, op, *, rounding="nearest_even", block_lines=1 << 18):
    """(operand arrays, random words or None) per block of a binary vector stream:
    the stimulus of each line (results and flags are not read)."""
    fmt, op = _fmt(fmt), _op(op)
    if not callable(getattr(stream, "read", None)) or isinstance(stream, io.TextIOBase):
        raise TypeError(f"stream must be a binary file (opened with 'rb'), got {stream!r}")
    rounding = rounding_name(rounding)
    stochastic = _stochastic(op, rounding)
    widths = columns(fmt, op, rounding)
    for _, cols in _read_blocks(stream, fmt, op, widths, _count(block_lines, "block_lines", 1)):
        yield cols[:op.arity], (cols[op.arity] if stochastic else None)


def verify(stream, fmt, op, *, rounding="nearest_even", saturate=None, tininess="after",
           sr_bits=32, nan=None, ignore_flags=0, max_report=20, block_lines=1 << 18,
           isa="default", testfloat=False) -> Report:
    """Recompute every line of a binary stream of vectors; a :class:`Report` of the
    mismatches (the first ``max_report`` kept).  ``nan="class"`` accepts any NaN
    result for a NaN result (codes only); ``ignore_flags`` is a mask (or names) of
    flags left out of the comparison; ``isa`` the ISA convention the device follows.
    ``testfloat=True`` reads TestFloat's files as testfloat_ver does: no denormal
    flag, NaNs by class unless ``nan="bits"``.  Lines may end in CRLF, hold tabs or
    runs of blanks and omit leading zeros; blank lines are skipped."""
    fmt, op = _fmt(fmt), _op(op)
    rounding = rounding_name(rounding)
    if nan is None:
        nan = "class" if testfloat else "bits"
    if nan not in ("bits", "class"):
        raise ValueError(f"nan must be 'bits' or 'class', got {nan!r}")
    if not callable(getattr(stream, "read", None)) or isinstance(stream, io.TextIOBase):
        raise TypeError(f"stream must be a binary file (opened with 'rb'), got {stream!r}")
    max_report = _count(max_report, "max_report", 0)
    block_lines = _count(block_lines, "block_lines", 1)
    bits._env(fmt, rounding, saturate, tininess, sr_bits)
    bits._isa(isa)
    keep = np.uint8(ALL_FLAGS & ~parse_flags(ignore_flags) & (TESTFLOAT_FLAGS if testfloat else ALL_FLAGS))
    stochastic = _stochastic(op, rounding)
    widths = columns(fmt, op, rounding)
    nops = op.arity
    report = Report()
    by_class = nan == "class" and op.kind in ("binary", "unary", "ternary")
    for first, cols in _read_blocks(stream, fmt, op, widths, block_lines):
        operands = cols[:nops]
        rnd = cols[nops] if stochastic else None
        got, got_flags = cols[-2], cols[-1].astype(np.uint8)
        exp, exp_flags = _compute(fmt, op, operands, rnd, rounding, saturate, tininess, sr_bits, isa)
        same = exp == got
        if by_class:
            same |= _isnan(fmt, exp) & _isnan(fmt, got & np.uint64(fmt.code_mask)) & (
                got <= np.uint64(fmt.code_mask))
        bad = ~same | ((exp_flags & keep) != (got_flags & keep))
        nbad = int(np.count_nonzero(bad))
        if nbad:
            for i in np.flatnonzero(bad)[:max(0, max_report - len(report.first))]:
                report.first.append(Mismatch(
                    first + int(i), tuple(int(o[i]) for o in operands),
                    None if rnd is None else int(rnd[i]), int(exp[i]), int(exp_flags[i]),
                    int(got[i]), int(got_flags[i])))
        report.mismatches += nbad
        report.lines += got.size
    return report


def _isnan(fmt, codes):
    """NaN test on codes (uint64) of fmt, through the core's classification."""
    c = codes.astype(fmt.storage)
    return np.asarray(bits.isnan(fmt, c), dtype=bool)


def describe(fmt, op, m: Mismatch, rounding="nearest_even") -> str:
    """One readable line for a mismatch: operands, expected and actual, flags by name."""
    fmt, op = _fmt(fmt), _op(op)
    rounding = rounding_name(rounding)
    if not isinstance(m, Mismatch):
        raise TypeError(f"m must be a softfp8.vectors.Mismatch, got {m!r}")
    widths = columns(fmt, op, rounding)
    w = widths[0]
    ops = " ".join(f"{o:0{w}X}" for o in m.operands)
    rnd = "" if m.random is None else f" random {m.random:08X}"

    def value(code):
        if op.kind == "compare" or op.kind == "predicate":
            return str(bool(code))
        if op.kind == "relation":
            return {0xFF: "less", 0: "equal", 1: "greater", 2: "unordered"}.get(code, "invalid")
        if code > fmt.code_mask:
            return "not a code"
        return repr(fmt.decode(code))

    rw = widths[-2]
    return (f"line {m.line}: {op.name}({ops}){rnd}: expected {m.expected:0{rw}X} "
            f"({value(m.expected)}) flags {m.expected_flags:02X} ({flag_names(m.expected_flags)}), "
            f"got {m.actual:0{rw}X} ({value(m.actual)}) flags {m.actual_flags:02X} "
            f"({flag_names(m.actual_flags)})")


def environments(op):
    """Every (rounding, saturate, tininess) an operation distinguishes (one for env-free ops)."""
    op = _op(op)
    if not op.rounds:
        return [("nearest_even", None, "after")]
    return list(itertools.product(bits.ROUNDING_MODES, (False, True), ("after", "before")))


def sv_package() -> str:
    """The text of dpi/softfp8_pkg.sv (SystemVerilog DPI-C package) for the operation
    table (softfp8/_svgen.py)."""
    return _svgen.render([(op.name, op.kind) for op in bits.OPERATIONS.values()])


__all__ = ["sv_package", "ROUNDING_ALIASES", "generate", "write", "verify", "describe", "columns", "case_set", "special_codes",
           "parse_flags", "flag_names", "environments", "Report", "Mismatch", "VectorError"]
