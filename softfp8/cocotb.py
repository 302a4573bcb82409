"""softfp8 as the golden model of a cocotb test bench: lane packing and a scoreboard.

Nothing here imports cocotb: bus values are read with ``int()`` (cocotb's
``LogicArray`` / ``BinaryValue`` convert; a value with X or Z bits raises
``ValueError`` naming it), so the helpers work in any Python test bench::

    from softfp8.cocotb import pack, unpack, Scoreboard
    sb = Scoreboard(softfp8.e4m3, flags_mask="invalid,overflow,underflow,inexact")
    dut.a.value = pack(softfp8.e4m3, a_codes)           # 4 lanes -> a 32-bit bus
    ...
    sb.check("mul", (a, b), result=unpack(softfp8.e4m3, dut.y.value, 4), flags=...)
    print(sb.summary()); sb.assert_clean()

A mismatch is reported field by field: sign, exponent and fraction of the
expected and actual codes, the distance in ulps, and the expected and raised flags
by name (docs/golden-model.md, "cocotb").
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import _context, bits, coverage, vectors
from ._validation import _as_int, as_format

_FLAG_NAMES = vectors.FLAG_NAMES


def _bus_int(value, what):
    """A bus value (int, cocotb LogicArray / BinaryValue, numpy integer) as an int."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer bus value, got {value!r}")
    if isinstance(value, (int, np.integer)):
        v = int(value)
    else:
        try:
            v = int(value)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{what} = {value!s} is not a resolved bus value (X or Z bits?): "
                             f"{exc}") from None
    if v < 0:
        raise ValueError(f"{what} must be a non-negative bus value, got {v}")
    return v


def lane_width(fmt, width=None):
    """Bits per lane: the format's width, or ``width`` (>= it; storage lanes)."""
    fmt = as_format(fmt)
    if width is None:
        return fmt.bits
    w = _as_int(width, "width")
    if w < fmt.bits:
        raise ValueError(f"lane width {w} is narrower than {fmt.name} ({fmt.bits} bits)")
    return w


def pack(fmt, codes, width=None) -> int:
    """Codes of ``fmt`` (lane 0 first) packed into one bus value: lane i occupies bits
    [i*w, (i+1)*w), w = ``width`` or the format's width.  Codes above the format's
    width are refused (ValueError naming the lane)."""
    fmt = as_format(fmt)
    w = lane_width(fmt, width)
    arr = np.asarray(codes).reshape(-1)
    if arr.dtype.kind not in "ui":
        raise TypeError(f"codes must be integers of {fmt.name}, got dtype {arr.dtype}")
    out = 0
    for i, c in enumerate(arr.tolist()):
        if not 0 <= c <= fmt.code_mask:
            raise ValueError(f"lane {i}: code {c:#x} is not a code of {fmt.name} "
                             f"(0..{fmt.code_mask:#x})")
        out |= c << (i * w)
    return out


def unpack(fmt, value, lanes, width=None) -> np.ndarray:
    """The ``lanes`` codes of a bus value (lane 0 = the low bits), in fmt's storage
    dtype.  Bits of a lane above the format's width, or bits above the last lane, are
    reported (ValueError), never dropped."""
    fmt = as_format(fmt)
    w = lane_width(fmt, width)
    n = _as_int(lanes, "lanes")
    if n < 1:
        raise ValueError(f"lanes must be >= 1, got {lanes!r}")
    v = _bus_int(value, "bus")
    if v >> (n * w):
        raise ValueError(f"bus value {v:#x} has bits above its {n} lanes of {w} bits")
    out = np.empty(n, dtype=fmt.storage)
    for i in range(n):
        c = (v >> (i * w)) & ((1 << w) - 1)
        if c > fmt.code_mask:
            raise ValueError(f"lane {i}: {c:#x} has bits above the {fmt.bits} bits of {fmt.name}")
        out[i] = c
    return out


# ------------------------------------------------------------------ scoreboard ----

def fields(fmt, code):
    """(sign, exponent field, fraction field) of a code."""
    fmt = as_format(fmt)
    m, e = fmt.man_bits, fmt.exp_bits
    sign = (code >> (fmt.bits - 1)) & 1 if fmt.signed else 0
    return sign, (code >> m) & ((1 << e) - 1), code & ((1 << m) - 1)


def ulp_distance(fmt, x, y):
    """Codes between x and y in value order (NaNs: None; +0 and -0 are 0 apart)."""
    fmt = as_format(fmt)
    vx, vy = fmt.decode(int(x)), fmt.decode(int(y))
    if math.isnan(vx) or math.isnan(vy):
        return None
    order = _value_order(fmt)
    return abs(order[int(x)] - order[int(y)])


_ORDER_CACHE: dict = {}


def _value_order(fmt):
    """{code: rank} over the non-NaN codes in value order, zeros sharing a rank."""
    key = fmt.params
    if key not in _ORDER_CACHE:
        codes = np.arange(fmt.code_mask + 1, dtype=np.uint64).astype(fmt.storage)
        vals = np.asarray(bits.convert(codes, fmt, np.float64, rounding="nearest_even",
                                       isa="default")[0], dtype=np.float64)
        ok = ~np.isnan(vals)
        uniq = np.unique(vals[ok])
        rank = np.full(codes.size, -1, dtype=np.int64)
        rank[ok] = np.searchsorted(uniq, vals[ok])
        _ORDER_CACHE[key] = rank
    return _ORDER_CACHE[key]


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """One DUT transaction that disagrees with softfp8."""

    index: int
    op: str
    operands: tuple
    expected: int
    actual: int
    expected_flags: int | None
    actual_flags: int | None
    message: str


def _flag_names(mask):
    names = [name for bit, name in sorted(_FLAG_NAMES.items()) if mask & bit]
    return "{" + ", ".join(names) + "}" if names else "{}"


class Scoreboard:
    """Checks DUT transactions against softfp8 and keeps a field-by-field report.

    ``fmt``: the format of operands and results; ``rounding``, ``saturate``,
    ``tininess``, ``isa``: the environment the DUT implements (per call overridable);
    ``flags_mask``: the flags the DUT computes (names, a mask; default all but
    denormal), others are not compared; ``nan="class"`` accepts any NaN for a NaN
    result.  ``check`` takes one transaction or N lanes of them."""

    def __init__(self, fmt, *, rounding="nearest_even", saturate=None, tininess="after",
                 isa="default", flags_mask="inexact,underflow,overflow,divbyzero,invalid",
                 nan="bits", max_report=20, name="softfp8", coverage=False):
        self.fmt = as_format(fmt)
        bits._env(self.fmt, rounding, saturate, tininess, None)     # checks the options
        self.env = dict(rounding=rounding, saturate=saturate, tininess=tininess, isa=isa)
        _context._isa_index(isa)
        self.flags_mask = vectors.parse_flags(flags_mask)
        if nan not in ("bits", "class"):
            raise ValueError(f"nan must be 'bits' or 'class', got {nan!r}")
        self.nan = nan
        self.max_report = _as_int(max_report, "max_report")
        self.name = name
        self.checked = 0
        self.failed = 0
        self.mismatches: list[Mismatch] = []
        self.per_op: dict = {}
        # functional coverage of the transactions checked: op -> softfp8.coverage.Coverage
        self.coverage: dict = {} if coverage else None

    # ---- checking ----
    def expected(self, op, operands, **env):
        """(codes, flags) softfp8 computes for the operands (arrays or ints)."""
        e = dict(self.env, **env)
        o = bits.OPERATIONS[op] if op in bits.OPERATIONS else None
        if o is None:
            raise ValueError(f"unknown operation {op!r}")
        codes = [np.asarray(x, dtype=np.uint64).astype(self.fmt.storage)
                 if np.all(np.asarray(x) <= self.fmt.code_mask) else np.asarray(x)
                 for x in operands]
        fn = getattr(bits, op)
        if o.rounds:
            return fn(self.fmt, *codes, **e)
        if o.noflags:
            r = fn(self.fmt, *codes)
            return r, np.zeros(np.shape(r), dtype=np.uint8)
        return fn(self.fmt, *codes, isa=e["isa"])

    def check(self, op, operands, result, flags=None, **env) -> bool:
        """Check one transaction (int operands) or lanes (array operands, result and
        flags of the same length).  Returns True when every lane matches."""
        ops = [np.atleast_1d(np.asarray([_bus_int(v, "operand") for v in np.atleast_1d(x)],
                                        dtype=np.uint64)) for x in operands]
        res = np.atleast_1d(np.asarray([_bus_int(v, "result") for v in np.atleast_1d(result)],
                                       dtype=np.uint64))
        fl = None if flags is None else np.atleast_1d(
            np.asarray([_bus_int(v, "flags") for v in np.atleast_1d(flags)], dtype=np.uint64))
        for k, o in enumerate(ops):
            bad = o > self.fmt.code_mask
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"operand {'abc'[k]} lane {i}: {int(o[i]):#x} is not a code of "
                                 f"{self.fmt.name}")
        exp, exp_fl = self.expected(op, ops, **env)
        exp = np.atleast_1d(np.asarray(exp)).astype(np.uint64)
        exp_fl = np.atleast_1d(np.asarray(exp_fl)).astype(np.uint64)
        same = exp == res
        if self.nan == "class" and op in bits.OPERATIONS and bits.OPERATIONS[op].kind in (
                "binary", "unary", "ternary"):
            ok = res <= self.fmt.code_mask
            en = np.asarray(bits.isnan(self.fmt, exp.astype(self.fmt.storage)))
            gn = np.zeros_like(en)
            gn[ok] = np.asarray(bits.isnan(self.fmt, res[ok].astype(self.fmt.storage)))
            same |= en & gn
        if fl is not None:
            same &= (exp_fl & self.flags_mask) == (fl & self.flags_mask)
        e = dict(self.env, **env)
        stats = self.per_op.setdefault(op, [0, 0])
        if self.coverage is not None and op in vectors.VECTOR_OPERATIONS:
            self._sample(op, ops, e)
        for i in np.flatnonzero(~same):
            self.failed += 1
            stats[1] += 1
            if len(self.mismatches) < self.max_report:
                self.mismatches.append(self._mismatch(
                    self.checked + int(i), op, tuple(int(o[i]) for o in ops), int(exp[i]), int(res[i]),
                    int(exp_fl[i]), None if fl is None else int(fl[i]), e))
        self.checked += res.size
        stats[0] += res.size
        return bool(same.all())

    def _mismatch(self, index, op, operands, exp, got, exp_fl, got_fl, env):
        f = self.fmt
        w = (f.bits + 3) // 4
        kind = bits.OPERATIONS[op].kind
        ops = ", ".join(f"{o:0{w}X}" for o in operands)
        lines = [f"{self.name}: transaction {index}: {op}({ops}) [{env['rounding']}"
                 f"{', ' + env['isa'] if env.get('isa', 'default') != 'default' else ''}]"]
        if exp != got:
            if kind in ("binary", "unary", "ternary") and got <= f.code_mask:
                es, ee, em = fields(f, exp)
                gs, ge, gm = fields(f, got)
                lines.append(f"  result   expected {exp:0{w}X} ({f.decode(exp)!r}), got {got:0{w}X} "
                             f"({f.decode(got)!r})")
                for label, x, y, width in (("sign", es, gs, 1), ("exponent", ee, ge, f.exp_bits),
                                           ("fraction", em, gm, f.man_bits)):
                    mark = "" if x == y else "   <-- differs"
                    lines.append(f"  {label:<8} expected {x:0{max(width, 1)}b}, got {y:0{max(width, 1)}b}{mark}")
                d = ulp_distance(f, exp, got)
                lines.append("  distance " + ("NaN involved" if d is None else f"{d} ulp"))
            else:
                lines.append(f"  result   expected {exp:#x}, got {got:#x}")
        if got_fl is not None and (exp_fl & self.flags_mask) != (got_fl & self.flags_mask):
            m = self.flags_mask
            lines.append(f"  flags    expected {_flag_names(exp_fl & m)}, raised "
                         f"{_flag_names(got_fl & m)}; missing {_flag_names(exp_fl & ~got_fl & m)}, "
                         f"unexpected {_flag_names(got_fl & ~exp_fl & m)}")
        return Mismatch(index, op, operands, exp, got, exp_fl, got_fl, "\n".join(lines))

    def _sample(self, op, ops, e):
        """Count the transaction in the Coverage of its operation and environment (keyed
        by the operation's name for the scoreboard's own saturate / tininess / isa)."""
        env = (e.get("saturate"), e.get("tininess", "after"), e.get("isa", "default"))
        base = (self.env["saturate"], self.env["tininess"], self.env["isa"])
        key = op if env == base else f"{op} (saturate={env[0]}, tininess={env[1]}, isa={env[2]})"
        cov = self.coverage.get(key)
        if cov is None:
            cov = self.coverage[key] = coverage.Coverage(self.fmt, op, saturate=env[0],
                                                         tininess=env[1], isa=env[2])
        rnd = e.get("random_bits")
        cov.sample(ops, e.get("rounding", "nearest_even") if cov.op.rounds else "nearest_even",
                   None if rnd is None else np.broadcast_to(np.asarray(rnd, dtype=np.uint32),
                                                            ops[0].shape))

    def coverage_report(self) -> str:
        """The closure tables of the operations checked (``coverage=True``)."""
        if self.coverage is None:
            raise ValueError("construct the Scoreboard with coverage=True")
        return "\n\n".join(c.table() for c in self.coverage.values())

    # ---- reporting ----
    @property
    def passed(self):
        return self.checked - self.failed

    def summary(self) -> str:
        lines = [f"{self.name} scoreboard ({self.fmt.name}): {self.checked} checked, "
                 f"{self.passed} passed, {self.failed} failed"]
        for op, (n, bad) in sorted(self.per_op.items()):
            lines.append(f"  {op:<12} {n:>9} checked {bad:>7} failed")
        for m in self.mismatches:
            lines.append(m.message)
        if self.failed > len(self.mismatches):
            lines.append(f"  ... {self.failed - len(self.mismatches)} more mismatches")
        return "\n".join(lines)

    def assert_clean(self):
        """AssertionError with the summary when a transaction failed or none was checked."""
        if self.checked == 0:
            raise AssertionError(f"{self.name} scoreboard: no transaction was checked")
        if self.failed:
            raise AssertionError(self.summary())


__all__ = ["pack", "unpack", "lane_width", "fields", "ulp_distance", "Scoreboard", "Mismatch"]
