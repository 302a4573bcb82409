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

import contextlib
import dataclasses
import io
import itertools

import numpy as np

from . import _context, _formats, _svgen, bits
from ._dtypes import dtype_of
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


def _line_blocks(stream, widths, block_lines):
    """(first line number, columns) per block of a vector stream: tolerant parsing
    (CRLF, tabs, runs of blanks, short fields, blank lines)."""
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
        lines += cols[0].size
        yield first, cols


def _read_blocks(stream, fmt, op, widths, block_lines):
    """_line_blocks with the operand check (codes of fmt)."""
    for first, cols in _line_blocks(stream, widths, block_lines):
        for k, o in enumerate(cols[:op.arity]):
            if o.size and int(o.max()) > fmt.code_mask:
                i = int(np.argmax(o > np.uint64(fmt.code_mask)))
                raise VectorError(f"line {first + i}: operand {'abc'[k]} = {int(o[i]):X} is not "
                                  f"a code of {fmt.name} (0..{fmt.code_mask:X})")
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


def _verify_options(stream, rounding, nan, testfloat):
    """(rounding, nan) of a verifier call, checked: a binary stream, nan 'bits' / 'class'
    (default: class for TestFloat's files, bits otherwise)."""
    if nan is None:
        nan = "class" if testfloat else "bits"
    if nan not in ("bits", "class"):
        raise ValueError(f"nan must be 'bits' or 'class', got {nan!r}")
    if not callable(getattr(stream, "read", None)) or isinstance(stream, io.TextIOBase):
        raise TypeError(f"stream must be a binary file (opened with 'rb'), got {stream!r}")
    return rounding_name(rounding), nan


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
    rounding, nan = _verify_options(stream, rounding, nan, testfloat)
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


# ------------------------------------------------------- conversion vectors ----

_FLOAT_NAMES = {"binary64": np.float64, "float64": np.float64, "f64": np.float64,
                "binary32": np.float32, "float32": np.float32, "f32": np.float32}
_FORMAT_ALIASES = {"binary16": "float16", "f16": "float16", "bf16": "bfloat16"}
INTEGERS = {f"{u}int{b}": (b, u == "") for b in (8, 16, 32, 64) for u in ("", "u")}


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """One side of a conversion: a softfp8 format, IEEE binary32/binary64 (bit
    patterns), or an integer type (two's complement, ``bits`` wide)."""

    name: str
    kind: str            # "format", "float" or "int"
    bits: int
    fmt: object = None   # the Format, or the NumPy float dtype
    signed: bool = True  # integers

    @property
    def width(self):
        return (self.bits + 3) // 4

    @property
    def mask(self):
        return (1 << self.bits) - 1


def endpoint(x) -> Endpoint:
    """An Endpoint from a format, np.float32 / np.float64, or a name: a preset or
    'format(...)', binary16 / bfloat16, binary32 / binary64 (float32, f32 ...), int8 ...
    int64, uint8 ... uint64."""
    if isinstance(x, Endpoint):
        return x
    if isinstance(x, str):
        key = x.strip()
        if key in INTEGERS:
            b, signed = INTEGERS[key]
            return Endpoint(key, "int", b, None, signed)
        if key in _FLOAT_NAMES:
            dt = np.dtype(_FLOAT_NAMES[key])
            return Endpoint(f"binary{dt.itemsize * 8}", "float", dt.itemsize * 8, dt)
        try:
            x = _formats.lookup(_FORMAT_ALIASES.get(key, key))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"unknown conversion endpoint {key!r}: {exc} (or binary32, binary64, "
                             f"{', '.join(INTEGERS)})") from None
    try:
        dt = np.dtype(x)
    except TypeError:
        dt = None
    if dt is not None and dt in (np.dtype(np.float32), np.dtype(np.float64)):
        return Endpoint(f"binary{dt.itemsize * 8}", "float", dt.itemsize * 8, dt)
    fmt = _fmt(x)
    return Endpoint(fmt.name, "format", fmt.bits, fmt)


def _conversion(src, dst):
    src, dst = endpoint(src), endpoint(dst)
    if src.kind == "int" and dst.kind != "format":
        raise ValueError(f"integer sources convert into softfp8 formats, not {dst.name}")
    if dst.kind == "int" and src.kind != "format":
        raise ValueError(f"integer destinations take softfp8 formats, not {src.name}")
    return src, dst


def _check_uint64_source(src, rounding):
    if src.kind == "int" and src.name == "uint64" and rounding_name(rounding) == "stochastic":
        raise ValueError("uint64 sources under stochastic rounding: values at and above 2^63 are "
                         "converted by the core's sfp8_from_uint64 through a NumPy cast, which draws "
                         "its own random bits; use int64 sources or a deterministic mode")


def conversion_columns(src, dst, rounding="nearest_even"):
    """Hex widths of a conversion line: source, [random], result, flags."""
    src, dst = _conversion(src, dst)
    rnd = (_RANDOM_WIDTH,) if _context._mode_index(rounding_name(rounding)) == 6 else ()
    return (src.width,) + rnd + (dst.width, 2)


def _to_signed(codes, ep):
    """Integer codes (two's complement bit patterns, uint64) as int64 values."""
    v = codes.astype(np.uint64)
    if ep.signed and ep.bits < 64:
        sign = np.uint64(1 << (ep.bits - 1))
        v = (v ^ sign) - sign        # wraps: the int64 value's bits
    return v.view(np.int64)


def _convert_compute(src, dst, codes, rnd, rounding, saturate, tininess, sr_bits, isa):
    """(result bit patterns as uint64, flags) of a conversion, through softfp8.bits."""
    kw = dict(rounding=rounding, sr_bits=sr_bits)
    if rnd is not None:
        kw["random_bits"] = rnd.astype(np.uint32)
    if src.kind == "int" and src.name == "uint64":
        return _from_uint64(codes, dst.fmt, rounding, saturate, tininess, kw)
    if src.kind == "int":
        res, fl = bits.from_int64(_to_signed(codes, src), dst.fmt, saturate=saturate,
                                  tininess=tininess, **kw)
        return np.asarray(res).astype(np.uint64), np.asarray(fl, dtype=np.uint8)
    if dst.kind == "int":
        return _to_integer(src.fmt, dst, codes.astype(src.fmt.storage), kw)
    s_ep = src.fmt
    d_ep = dst.fmt
    s_codes = codes.astype(np.uint64 if src.bits == 64 else np.uint32 if src.bits == 32 else s_ep.storage)
    res, fl = bits.convert(s_codes, s_ep, d_ep, saturate=saturate, tininess=tininess, isa=isa, **kw)
    res = np.asarray(res)
    if dst.kind == "float":
        res = res.view(np.uint64 if dst.bits == 64 else np.uint32)
    return res.astype(np.uint64), np.asarray(fl, dtype=np.uint8)


def _from_uint64(codes, fmt, rounding, saturate, tininess, kw):
    """uint64 values into fmt: below 2^63 through softfp8.bits.from_int64 (the same value);
    at and above 2^63 by the core's sfp8_from_uint64, which NumPy's uint64 -> format cast
    calls, one element per call for its flags, under the environment as a context."""
    codes = codes.astype(np.uint64)
    res = np.zeros(codes.size, np.uint64)
    fl = np.zeros(codes.size, np.uint8)
    low = codes < np.uint64(1 << 63)
    kw_low = dict(kw)
    if "random_bits" in kw_low:
        kw_low["random_bits"] = kw_low["random_bits"][low]
    r, f = bits.from_int64(codes[low].view(np.int64), fmt, saturate=saturate, tininess=tininess, **kw_low)
    res[low], fl[low] = np.asarray(r).astype(np.uint64), np.asarray(f, dtype=np.uint8)
    high = np.flatnonzero(~low)
    if high.size:
        dt = dtype_of(fmt)
        with contextlib.ExitStack() as stack:
            stack.enter_context(_context.rounding(rounding))
            stack.enter_context(_context.tininess(tininess))
            if saturate is not None:
                stack.enter_context(_context.saturation(bool(saturate)))
            stack.enter_context(np.errstate(all="ignore"))     # the flags are the result here
            for i in high:
                with _context.collect_flags() as cf:
                    out = codes[i:i + 1].astype(dt)
                res[i], fl[i] = int(out.view(fmt.storage)[0]), int(cf.flags)
    return res, fl


def _to_integer(fmt, dst, codes, kw):
    """A format's codes rounded to an integer type: softfp8.bits.to_int64 (the core,
    sfp8_to_int64), saturated to the type's range; out of range (after rounding) or NaN
    gives the nearest bound (NaN: the largest) and invalid, as sfp8_to_int64 does for
    int64.  A uint64 value at or above 2^63 is an integer already (every format of at
    most 16 bits has an ulp of 2^53 or more there): read exactly through binary64."""
    r, fl = bits.to_int64(fmt, codes, **kw)
    r = np.asarray(r, dtype=np.int64).copy()
    fl = np.asarray(fl, dtype=np.uint8).copy()
    inv = np.uint8(int(_context.Flags.INVALID))
    if dst.signed:
        lo, hi = -(1 << (dst.bits - 1)), (1 << (dst.bits - 1)) - 1
    else:
        lo, hi = 0, (1 << dst.bits) - 1
    if dst.bits == 64 and not dst.signed:
        with np.errstate(all="ignore"):
            vals = np.asarray(bits.convert(codes, fmt, np.float64)[0], dtype=np.float64)
            top = (r == np.iinfo(np.int64).max) & ((fl & inv) != 0)
            fine = top & np.isfinite(vals) & (vals >= 2.0 ** 63) & (vals < 2.0 ** 64)
            out = np.clip(r, 0, None).astype(np.uint64)
            out[fine] = vals[fine].astype(np.uint64)     # exact integers
        fl[fine] &= ~inv
        out[top & ~fine] = np.uint64(hi)                 # NaN, or 2^64 and beyond
        fl[r < 0] = inv                                   # below 0 after rounding
        return out, fl
    below, above = r < lo, r > hi
    bad = below | above
    out = np.clip(r, lo, hi)
    fl[bad] = inv        # IEEE convertToInteger: invalid only (no inexact) when out of range
    return out.astype(np.int64).view(np.uint64) & np.uint64(dst.mask), fl


def _float_grid(src, dst, level):
    """Source codes (binary32 / binary64 bit patterns) around every value of the
    destination: each value, the midpoint to its successor and one source ulp either side
    of both, beyond the largest, the tiny range, and the source's specials."""
    dt = src.fmt
    ut = np.uint64 if src.bits == 64 else np.uint32
    dcodes = np.arange(dst.fmt.code_mask + 1, dtype=np.uint64).astype(dst.fmt.storage)
    with np.errstate(all="ignore"):
        vals = np.asarray(bits.to_float(dcodes, dst.fmt)[0], dtype=np.float64)
    vals = np.unique(vals[np.isfinite(vals)])
    mids = (vals[:-1] + vals[1:]) / 2
    mx = np.max(np.abs(vals))
    extra = [mx * 1.5, mx * 2, mx * (1 + 2.0 ** -(dst.fmt.man_bits + 1)), float(dst.fmt.min_subnormal) / 2,
             float(dst.fmt.min_subnormal) / 4, float(dst.fmt.min_subnormal) * 0.75,
             np.finfo(dt).tiny, np.finfo(dt).tiny * 2.0 ** -10, np.finfo(dt).max, 1e-300, 1e300]
    base = np.concatenate([vals, mids, np.asarray(extra, dtype=np.float64)])
    base = np.concatenate([base, -base])
    with np.errstate(all="ignore"):
        x = base.astype(dt)
        pts = [x, np.nextafter(x, np.asarray(np.inf, dt)), np.nextafter(x, np.asarray(-np.inf, dt))]
        if level == 2:
            pts += [np.nextafter(p, np.asarray(np.inf, dt)) for p in pts[1:2]]
    codes = np.concatenate([p.view(ut) for p in pts]).astype(np.uint64)
    one = np.uint64(1)
    e_bits = 11 if src.bits == 64 else 8
    m_bits = src.bits - 1 - e_bits
    inf = ((one << np.uint64(e_bits)) - one) << np.uint64(m_bits)
    sign = one << np.uint64(src.bits - 1)
    specials = np.array([0, inf, inf | (one << np.uint64(m_bits - 1)), inf | one,
                         inf | (one << np.uint64(m_bits - 1)) | np.uint64(5), one, np.uint64(3)], dtype=np.uint64)
    specials = np.concatenate([specials, specials | sign])
    return np.unique(np.concatenate([codes, specials]) & np.uint64(src.mask))


def _int_grid(src, dst):
    """Integer sources around every integral value of the destination, its extremes."""
    dcodes = np.arange(dst.fmt.code_mask + 1, dtype=np.uint64).astype(dst.fmt.storage)
    with np.errstate(all="ignore"):
        vals = np.asarray(bits.to_float(dcodes, dst.fmt)[0], dtype=np.float64)
    vals = vals[np.isfinite(vals) & (np.abs(vals) < 2.0 ** 62)]
    ints = np.unique(np.concatenate([np.floor(vals), np.ceil(vals)])).astype(np.int64)
    mids = ((ints[:-1] + ints[1:]) // 2)
    cand = np.concatenate([ints, ints - 1, ints + 1, mids, mids - 1, mids + 1])
    lo = -(1 << (src.bits - 1)) if src.signed else 0
    hi = (1 << (src.bits - 1)) - 1 if src.signed else (1 << src.bits) - 1
    cand = np.concatenate([cand, np.array([lo, lo + 1, min(hi, 2 ** 63 - 1), min(hi, 2 ** 63 - 1) - 1, 0, 1, -1],
                                          dtype=np.int64)])
    cand = np.unique(cand[(cand >= lo) & (cand <= hi)])
    out = cand.view(np.uint64) & np.uint64(src.mask)
    if src.name == "uint64":     # the range 2^63 .. 2^64 - 1: every destination value there
        with np.errstate(all="ignore"):
            every = np.asarray(bits.to_float(dcodes, dst.fmt)[0], dtype=np.float64)
        big = sorted({int(v) for v in every[np.isfinite(every)] if 2.0 ** 63 <= v < 2.0 ** 64})
        top = [2 ** 63, 2 ** 63 + 1, 2 ** 64 - 1, 2 ** 64 - 2, 3 * 2 ** 62, 3 * 2 ** 62 - 1]
        pts = big + [(x + y) // 2 + d for x, y in zip(big, big[1:] + [2 ** 64]) for d in (-1, 0, 1)]
        pts += [x + d for x in big for d in (-1, 1)] + top
        extra = np.array(sorted({x for x in pts if 2 ** 63 <= x < 2 ** 64}), dtype=np.uint64)
        out = np.unique(np.concatenate([out, extra]))
    return out


def conversion_cases(src, dst, level=1, count=10000, random_only=False, seed=1):
    """The source codes of a conversion's vectors (an array, in file order): every
    code of a source of at most 16 bits; otherwise the grid around the destination's
    values (:func:`_float_grid` / :func:`_int_grid`) then ``count`` seeded random
    source codes."""
    src, dst = _conversion(src, dst)
    if _as_int(level, "level") not in (1, 2):
        raise ValueError(f"level must be 1 or 2, got {level!r}")
    count = _count(count, "count", 0)
    rng = np.random.PCG64(np.random.SeedSequence([_count(seed, "seed", 0), 0]))
    rand = rng.random_raw(count).astype(np.uint64) & np.uint64(src.mask)
    if random_only:
        return rand
    if src.bits <= 16:
        return np.arange(1 << src.bits, dtype=np.uint64)
    grid = _int_grid(src, dst) if src.kind == "int" else _float_grid(src, dst, level)
    return np.concatenate([grid, rand])


def generate_conversion(src, dst, *, rounding="nearest_even", saturate=None, tininess="after",
                        sr_bits=32, level=1, count=10000, random_only=False, seed=1, isa="default",
                        testfloat=False, chunk=CHUNK):
    """Yield the vector lines (bytes chunks) of the conversion src -> dst: ``source
    [random] result flags`` (docs/golden-model.md, "Conversion vectors")."""
    src, dst = _conversion(src, dst)
    rounding = rounding_name(rounding)
    _check_uint64_source(src, rounding)
    dfmt = dst.fmt if dst.kind == "format" else None
    bits._env(dfmt, rounding, saturate, tininess, sr_bits)
    bits._isa(isa)
    cases = conversion_cases(src, dst, level, count, random_only, seed)
    widths = conversion_columns(src, dst, rounding)
    stochastic = rounding == "stochastic"
    rnd_rng = np.random.PCG64(np.random.SeedSequence([seed, 1]))
    keep = np.uint8(TESTFLOAT_FLAGS if testfloat else ALL_FLAGS)
    chunk = _count(chunk, "chunk", 1)

    def gen():
        for start in range(0, cases.size, chunk):
            a = cases[start:start + chunk]
            rnd = (rnd_rng.random_raw(a.size).astype(np.uint64) & np.uint64(0xFFFFFFFF)
                   if stochastic else None)
            res, fl = _convert_compute(src, dst, a, rnd, rounding, saturate, tininess, sr_bits, isa)
            cols = [a] + ([rnd] if stochastic else []) + [res, (fl & keep).astype(np.uint64)]
            yield _hex_lines(cols, widths)
    return gen()


def verify_conversion(stream, src, dst, *, rounding="nearest_even", saturate=None, tininess="after",
                      sr_bits=32, nan=None, ignore_flags=0, max_report=20, block_lines=1 << 18,
                      isa="default", testfloat=False) -> Report:
    """Recompute every line of a conversion vector stream (as :func:`verify`)."""
    src, dst = _conversion(src, dst)
    rounding, nan = _verify_options(stream, rounding, nan, testfloat)
    _check_uint64_source(src, rounding)
    dfmt = dst.fmt if dst.kind == "format" else None
    bits._env(dfmt, rounding, saturate, tininess, sr_bits)
    bits._isa(isa)
    keep = np.uint8(ALL_FLAGS & ~parse_flags(ignore_flags) & (TESTFLOAT_FLAGS if testfloat else ALL_FLAGS))
    widths = conversion_columns(src, dst, rounding)
    stochastic = rounding == "stochastic"
    report = Report()
    for first, cols in _line_blocks(stream, widths, _count(block_lines, "block_lines", 1)):
        a, rnd = cols[0], (cols[1] if stochastic else None)
        if a.size and int(a.max()) > src.mask:
            i = int(np.argmax(a > np.uint64(src.mask)))
            raise VectorError(f"line {first + i}: {int(a[i]):X} is not a {src.name} code")
        got, got_fl = cols[-2], cols[-1].astype(np.uint8)
        exp, exp_fl = _convert_compute(src, dst, a, rnd, rounding, saturate, tininess, sr_bits, isa)
        same = exp == got
        if nan == "class" and dst.kind != "int":
            same |= _endpoint_isnan(dst, exp) & _endpoint_isnan(dst, got)
        if testfloat and dst.kind == "int":
            # testfloat_ver (without -checkInvInts) compares only the flags of an invalid
            # conversion to an integer: SoftFloat's specialisations return other bounds
            same |= (exp_fl & np.uint8(int(_context.Flags.INVALID))) != 0
        bad = ~same | ((exp_fl & keep) != (got_fl & keep))
        nbad = int(np.count_nonzero(bad))
        for i in np.flatnonzero(bad)[:max(0, max_report - len(report.first))]:
            report.first.append(Mismatch(first + int(i), (int(a[i]),), None if rnd is None else int(rnd[i]),
                                         int(exp[i]), int(exp_fl[i]), int(got[i]), int(got_fl[i])))
        report.mismatches += nbad
        report.lines += got.size
    return report


def _endpoint_isnan(ep, codes):
    if ep.kind == "float":
        v = (codes & np.uint64(ep.mask)).astype(np.uint64 if ep.bits == 64 else np.uint32)
        return np.isnan(v.view(ep.fmt))
    ok = codes <= np.uint64(ep.fmt.code_mask)
    out = np.zeros(codes.shape, dtype=bool)
    out[ok] = _isnan(ep.fmt, codes[ok])
    return out


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


__all__ = ["sv_package", "ROUNDING_ALIASES", "endpoint", "Endpoint", "INTEGERS", "conversion_columns",
           "conversion_cases", "generate_conversion", "verify_conversion", "read_cases", "generate", "write", "verify", "describe", "columns", "case_set", "special_codes",
           "parse_flags", "flag_names", "environments", "Report", "Mismatch", "VectorError"]
