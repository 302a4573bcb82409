"""Functional coverage of test vectors and scoreboard transactions.

``softfp8 cov`` / :func:`measure` reads a vector file (``softfp8 gen``'s line format),
:meth:`Coverage.sample` takes operand arrays, and ``softfp8.cocotb.Scoreboard(...,
coverage=True)`` samples every transaction it checks.  Each case is run through the
exact core (``sfp8_op_cover``), which reports the rounding situation from the core's
one rounding routine (round_pack's own record, as ``explain=True``), so the bins are
the core's decisions, not a second model's.

Bins, per rounding mode (docs/golden-model.md, "Coverage"):

- ``a:+zero`` ... ``c:-snan``: each operand's class per sign (zero, subnormal,
  min_normal, normal, max, inf, qnan, snan);
- ``result:+normal`` ... (code results), ``result:true`` / ``result:false``
  (comparisons, predicates), ``result:less`` ... ``result:unordered`` (relations);
- ``round:exact``, ``round:below_half``, ``round:tie``, ``round:above_half``,
  ``round:carry``, ``round:tesla_gap``, ``round:overflow_edge_max``, ``round:overflow_edge_overflow``,
  ``round:tiny_edge_before_only``, ``round:tiny_edge_after`` (operations that round);
- ``flag:inexact`` ... ``flag:denormal``, ``flag:none``.

Bins a format and operation cannot reach are derived (:func:`unreachable`, with the
reason of each) and listed, not counted as holes.
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from . import _context, _ext, _formats, _reach, _svgen, bits, vectors
from ._validation import _as_int

CLASSES = ("zero", "subnormal", "min_normal", "normal", "max", "inf", "qnan", "snan")
SIGNS = ("+", "-")
MODES = tuple(bits.ROUNDING_MODES)
NOMODE = "-"                 # the mode column of operations that do not round

# sfp8_op_cover's situation bits (include/softfp8/softfp8.h, SFP8_SIT_*)
SIT_ROUNDED, SIT_EXACT, SIT_BELOW, SIT_TIE, SIT_ABOVE = 0x001, 0x002, 0x004, 0x008, 0x010
SIT_UP, SIT_CARRY, SIT_OVF_EDGE, SIT_TINY, SIT_TINY_EDGE, SIT_TINY_AFTER, SIT_GAP = (
    0x020, 0x040, 0x080, 0x100, 0x200, 0x400, 0x800)

# the rounding-situation bins: name -> (situation bits that must be set, bits that must
# be clear, flags that must be set, flags that must be clear), and the words of the docs
SITUATIONS = {
    "exact": (SIT_ROUNDED | SIT_EXACT, 0, 0, 0,
              "the exact value is representable"),
    "below_half": (SIT_BELOW, 0, 0, 0,
                   "inexact, dropped part below half an ulp"),
    "tie": (SIT_TIE, 0, 0, 0,
            "inexact, dropped part exactly half an ulp (a tie)"),
    "above_half": (SIT_ABOVE, 0, 0, 0,
                   "inexact, dropped part above half an ulp"),
    "carry": (SIT_CARRY, 0, 0, 0,
              "rounded up, the increment carrying into the next binade"),
    "overflow_edge_max": (SIT_OVF_EDGE, 0, 0, int(_context.Flags.OVERFLOW),
                          "between the largest finite magnitude and the next point of its "
                          "grid, delivered the largest finite (no overflow)"),
    "overflow_edge_overflow": (SIT_OVF_EDGE, 0, int(_context.Flags.OVERFLOW), 0,
                               "between the largest finite magnitude and the next point of "
                               "its grid, overflowed"),
    "tesla_gap": (SIT_GAP, 0, 0, 0,
                  "strictly inside a Tesla gap (between the largest subnormal and the "
                  "smallest normal, a gap wider than an ulp)"),
    "tiny_edge_before_only": (SIT_TINY_EDGE, SIT_TINY_AFTER, 0, 0,
                              "below the smallest normal, delivered the smallest normal; tiny "
                              "before rounding only (underflow under tininess='before' only)"),
    "tiny_edge_after": (SIT_TINY_EDGE | SIT_TINY_AFTER, 0, 0, 0,
                        "below the smallest normal, delivered the smallest normal; tiny "
                        "after rounding too (underflow under both rules)"),
}
assert all(not ((v[2] | v[3]) & ~int(_context.Flags.OVERFLOW)) for v in SITUATIONS.values())
FLAG_BINS = tuple(f.name.lower() for f in _context.Flags) + ("none",)
_FLAG_BITS = {f.name.lower(): int(f) for f in _context.Flags}
RELATIONS = ("less", "equal", "greater", "unordered")     # int8 -1, 0, 1, 2


def _situation_hits(sit, fl):
    """Boolean matrix (cases, SITUATIONS): the rounding-situation bins of situation masks
    and flags."""
    out = np.empty((np.size(sit), len(SITUATIONS)), dtype=bool)
    for j, (on, off, fon, foff, _) in enumerate(SITUATIONS.values()):
        hit = (sit & on) == on
        if off:
            hit &= (sit & off) == 0
        if fon:
            hit &= (fl & fon) == fon
        if foff:
            hit &= (fl & foff) == 0
        out[:, j] = hit
    return out


def _op(op):
    return vectors._op(op)


def _fmt(fmt):
    return vectors._fmt(fmt)


@functools.lru_cache(maxsize=64)
def _class_table(params):
    """uint8 table code -> sign * 8 + class index (CLASSES) of a format's every code."""
    n = 1 << params[0]
    sp = _ext.special_codes(params)
    sbit = (1 << (params[0] - 1)) if params[1] else 0
    codes = np.arange(n, dtype=np.uint64)
    cls = np.array([_ext.classify(params, c) for c in range(n)], dtype=np.uint8)
    # core classes: zero, subnormal, normal, inf, qnan, snan -> CLASSES indices
    out = np.array([0, 1, 3, 5, 6, 7], dtype=np.uint8)[cls]
    mag = codes & np.uint64(~sbit & (n - 1))
    normal = cls == 2
    out[normal & (mag == np.uint64(sp["min_normal"]))] = 2
    out[normal & (mag == np.uint64(sp["max"]))] = 4
    if sbit:
        out += np.where((codes & np.uint64(sbit)) != 0, np.uint8(8), np.uint8(0))
    out.setflags(write=False)
    return out


def operand_classes(fmt):
    """The operand bins a format has: a dict ``"+zero"`` ... -> number of codes."""
    fmt = _fmt(fmt)
    t = _class_table(fmt.params)
    counts = np.bincount(t, minlength=16)
    return {f"{SIGNS[k // 8]}{CLASSES[k % 8]}": int(counts[k]) for k in range(16)}


@dataclasses.dataclass(frozen=True)
class Model:
    """The bins of one (format, operation): names by group, in a fixed order."""

    fmt: object
    op: object
    groups: tuple          # ((group name, (bin names ...)), ...)

    @property
    def names(self):
        return [f"{g}:{b}" for g, bs in self.groups for b in bs]

    @property
    def modes(self):
        return MODES if self.op.rounds else (NOMODE,)


@functools.lru_cache(maxsize=256)
def model(fmt, op) -> Model:
    """The bin model of a format and an operation of the vector table."""
    fmt, op = _fmt(fmt), _op(op)
    cls = tuple(f"{s}{c}" for s in SIGNS for c in CLASSES)
    groups = [(name, cls) for name in "abc"[:op.arity]]
    if op.kind in ("compare", "predicate"):
        groups.append(("result", ("false", "true")))
    elif op.kind == "relation":
        groups.append(("result", RELATIONS))
    else:
        groups.append(("result", cls))
        if op.rounds:
            groups.append(("round", tuple(SITUATIONS)))
    if not op.noflags:
        groups.append(("flag", FLAG_BINS))
    return Model(fmt, op, tuple(groups))


def _mode_index(rounding):
    name = vectors.rounding_name(rounding)
    if name not in MODES:
        raise ValueError(f"unknown rounding mode {rounding!r} (known: {', '.join(MODES)})")
    return MODES.index(name)


class Coverage:
    """Bin counts of one (format, operation) per rounding mode.

    ``saturate`` / ``tininess`` / ``isa``: the environment of every sample (the
    rounding mode is per sample).  :meth:`sample` adds cases; :meth:`holes`,
    :meth:`closure` and :meth:`table` report; :func:`unreachable` says which bins
    are derived unreachable (not counted)."""

    def __init__(self, fmt, op, *, saturate=None, tininess="after", isa="default", sr_bits=32):
        self.fmt, self.op = _fmt(fmt), _op(op)
        bits._env(self.fmt, "nearest_even", saturate, tininess, sr_bits)   # checks the options
        self.isa_index = bits._isa(isa)
        self.saturate, self.tininess, self.isa, self.sr_bits = saturate, tininess, isa, sr_bits
        self.model = model(self.fmt, self.op)
        self.names = self.model.names
        self.counts = np.zeros((len(self.model.modes), len(self.names)), dtype=np.int64)
        self.cases = np.zeros(len(self.model.modes), dtype=np.int64)
        self._offsets = {}
        pos = 0
        for g, bs in self.model.groups:
            self._offsets[g] = pos
            pos += len(bs)

    # ---- sampling ----
    def _envp(self, mode):
        return bits._env(self.fmt, MODES[mode], self.saturate, self.tininess, self.sr_bits) + (
            self.isa_index,)

    def _operands(self, operands):
        if len(operands) != self.op.arity:
            raise ValueError(f"{self.op.name} takes {self.op.arity} operand(s), got {len(operands)}")
        arrays = [np.ascontiguousarray(np.asarray(o).reshape(-1), dtype=np.uint64) for o in operands]
        n = arrays[0].size
        for k, a in enumerate(arrays):
            if a.size != n:
                raise ValueError("operand arrays must have one length")
            if a.size and int(a.max()) > self.fmt.code_mask:
                i = int(np.argmax(a > np.uint64(self.fmt.code_mask)))
                raise ValueError(f"operand {'abc'[k]} = {int(a[i]):#x} is not a code of "
                                 f"{self.fmt.name} (0..{self.fmt.code_mask:#x})")
        return tuple(a.astype(np.uint32) for a in arrays)

    def run(self, operands, rounding="nearest_even", random_bits=None):
        """(results, flags, situations), each of shape (modes, n), of the operands in
        ``rounding`` (a mode name or a list of them), without counting."""
        ops = self._operands(operands)
        modes = [rounding] if isinstance(rounding, str) else list(rounding)
        idx = tuple(_mode_index(m) for m in modes) if self.op.rounds else (0,)
        rnd = None
        if self.op.rounds and random_bits is not None:
            rnd = np.ascontiguousarray(np.asarray(random_bits).reshape(-1), dtype=np.uint32)
        return _ext.cover(self.op.id, self.fmt.params, self._envp(idx[0]), idx, ops, rnd), idx

    def sample(self, operands, rounding="nearest_even", random_bits=None):
        """Count the bins the cases hit in ``rounding`` (a mode, or a list of modes:
        each case in each).  ``operands``: one code array per operand; ``random_bits``:
        the stochastic random words (uint32 per case; default 0).  Returns the
        (results, flags) of the core, shape (modes, n)."""
        (res, fl, sit), idx = self.run(operands, rounding, random_bits)
        ops = self._operands(operands)
        opcounts = self._operand_counts(ops)      # the same in every mode
        for k, m in enumerate(idx):
            self._count(m, opcounts, res[k], fl[k], sit[k])
        return res, fl

    def _operand_counts(self, ops):
        table = _class_table(self.fmt.params)
        return [(self._offsets[g], np.bincount(table[a], minlength=16)) for g, a in zip("abc", ops)]

    def hits(self, ops, res, fl, sit):
        """Boolean matrix (cases, bins): the bins each case hits (one mode's arrays)."""
        n = res.size
        out = np.zeros((n, len(self.names)), dtype=bool)
        table = _class_table(self.fmt.params)
        rows = np.arange(n)
        for g, a in zip("abc", ops):
            out[rows, self._offsets[g] + table[np.asarray(a, dtype=np.intp)]] = True
        base = self._offsets["result"]
        kind = self.op.kind
        if kind in ("compare", "predicate"):
            out[rows, base + np.minimum(res, 1).astype(np.intp)] = True
        elif kind == "relation":
            out[rows, base + (res.astype(np.int32) + 1).astype(np.intp)] = True
        else:
            out[rows, base + table[(res & np.uint32(self.fmt.code_mask)).astype(np.intp)]] = True
            if self.op.rounds:
                base = self._offsets["round"]
                out[:, base:base + len(SITUATIONS)] = _situation_hits(sit, fl)
        if not self.op.noflags:
            base = self._offsets["flag"]
            for j, name in enumerate(FLAG_BINS[:-1]):
                out[:, base + j] = (fl & _FLAG_BITS[name]) != 0
            out[:, base + len(FLAG_BINS) - 1] = (fl & vectors.ALL_FLAGS) == 0
        return out

    def _count(self, m, opcounts, res, fl, sit):
        """Add one mode's cases to the counts (bincount per group; the same bins as hits)."""
        counts = self.counts[m]
        table = _class_table(self.fmt.params)
        for off, c in opcounts:
            counts[off:off + 16] += c
        base = self._offsets["result"]
        kind = self.op.kind
        if kind in ("compare", "predicate"):
            counts[base:base + 2] += np.bincount(np.minimum(res, 1).astype(np.intp), minlength=2)
        elif kind == "relation":
            counts[base:base + 4] += np.bincount((res.astype(np.int32) + 1).astype(np.intp),
                                                 minlength=4)
        else:
            counts[base:base + 16] += np.bincount(table[res & np.uint32(self.fmt.code_mask)],
                                                  minlength=16)
            if self.op.rounds:
                # every distinct (situation, overflow flag) pair once, then its bins
                key = (sit.astype(np.intp) << 1) | ((fl >> 2) & 1).astype(np.intp)
                cnt = np.bincount(key, minlength=2)
                uniq = np.flatnonzero(cnt).astype(np.uint32)
                cnt = cnt[uniq]
                base = self._offsets["round"]
                hits = _situation_hits(uniq >> np.uint32(1), (uniq & 1) * int(_context.Flags.OVERFLOW))
                counts[base:base + len(SITUATIONS)] += cnt @ hits
        if not self.op.noflags:
            base = self._offsets["flag"]
            fc = np.bincount(fl, minlength=256)
            codes = np.arange(256)
            for j, name in enumerate(FLAG_BINS[:-1]):
                counts[base + j] += int(fc[(codes & _FLAG_BITS[name]) != 0].sum())
            counts[base + len(FLAG_BINS) - 1] += int(fc[(codes & vectors.ALL_FLAGS) == 0].sum())
        self.cases[m] += res.size

    def merge(self, other):
        """Add another Coverage of the same format, operation and environment."""
        if not isinstance(other, Coverage) or (other.fmt, other.op.name, other.names) != (
                self.fmt, self.op.name, self.names):
            raise ValueError("merge needs a Coverage of the same format and operation")
        self.counts += other.counts
        self.cases += other.cases
        return self

    # ---- reporting ----
    def sampled_modes(self):
        return [m for m in range(len(self.model.modes)) if self.cases[m]]

    def unreachable(self, mode=None):
        """{bin: reason} of the bins derived unreachable in a mode (a name; default:
        the first mode sampled, or nearest_even)."""
        if mode is None:
            ms = self.sampled_modes()
            mode = self.model.modes[ms[0]] if ms else self.model.modes[0]
        return unreachable(self.fmt, self.op, mode, saturate=self._saturating(),
                           tininess=self.tininess, isa=self.isa)

    def _saturating(self):
        return bool(self.fmt.saturate if self.saturate is None else self.saturate)

    def holes(self, modes=None):
        """[(mode, bin)] of reachable bins no case hit, in the sampled modes (or ``modes``)."""
        out = []
        for m in self._mode_list(modes):
            un = self.unreachable(self.model.modes[m])
            for j, name in enumerate(self.names):
                if self.counts[m, j] == 0 and name not in un:
                    out.append((self.model.modes[m], name))
        return out

    def hit(self, mode):
        """The set of bins hit in a mode (a name)."""
        m = self.model.modes.index(mode)
        return {name for j, name in enumerate(self.names) if self.counts[m, j]}

    def _mode_list(self, modes):
        if modes is None:
            return self.sampled_modes()
        return [self.model.modes.index(vectors.rounding_name(x)) for x in modes]

    def closure(self, modes=None):
        """{mode: {group: (hit, reachable)}} plus a "total" group, over the sampled modes."""
        out = {}
        for m in self._mode_list(modes):
            mode = self.model.modes[m]
            un = self.unreachable(mode)
            row = {}
            th = tr = 0
            for g, bs in self.model.groups:
                names = [f"{g}:{b}" for b in bs]
                reach = [n for n in names if n not in un]
                h = sum(1 for n in reach if self.counts[m, self.names.index(n)])
                row[g] = (h, len(reach))
                th += h
                tr += len(reach)
            row["total"] = (th, tr)
            out[mode] = row
        return out

    def percent(self, modes=None):
        """Closure over the sampled modes (or ``modes``) as a percentage of reachable bins."""
        h = r = 0
        for row in self.closure(modes).values():
            h += row["total"][0]
            r += row["total"][1]
        return 100.0 * h / r if r else 100.0

    def table(self, modes=None, show_unreachable=True) -> str:
        """The closure table: per mode and group, hit / reachable bins and a percentage;
        then the holes, and the unreachable bins with their reasons."""
        groups = [g for g, _ in self.model.groups] + ["total"]
        clo = self.closure(modes)
        head = (f"coverage of {self.fmt.name} {self.op.name} (saturate={self._saturating()}, "
                f"tininess={self.tininess}, isa={self.isa}): "
                f"{int(self.cases.sum())} cases")
        lines = [head, f"{'mode':<14}" + "".join(f"{g:>16}" for g in groups)]
        for mode, row in clo.items():
            cells = []
            for g in groups:
                h, r = row[g]
                cells.append(f"{h:>4}/{r:<4}{(100.0 * h / r if r else 100.0):6.1f}%")
            lines.append(f"{mode:<14}" + "".join(f"{c:>16}" for c in cells))
        holes = self.holes(modes)
        lines.append(f"holes: {len(holes)}")
        for mode, name in holes:
            lines.append(f"  {mode:<14} {name}")
        if show_unreachable and clo:
            seen = {}
            for mode in clo:
                for name, why in self.unreachable(mode).items():
                    seen.setdefault((name, why), []).append(mode)
            lines.append(f"unreachable (derived, not counted): {len(seen)}")
            for (name, why), ms in seen.items():
                where = "" if len(ms) == len(clo) else f" [{', '.join(ms)}]"
                lines.append(f"  {name:<28} {why}{where}")
        return "\n".join(lines)

    def to_dict(self):
        """A JSON-able dict of the counts (merge runs with :func:`from_dict`)."""
        return {"format": self.fmt.name, "params": list(self.fmt.params), "op": self.op.name,
                "saturate": self.saturate, "tininess": self.tininess, "isa": self.isa,
                "modes": list(self.model.modes), "cases": self.cases.tolist(),
                "bins": self.names, "counts": self.counts.tolist()}

    def covergroup(self, name=None) -> str:
        """A SystemVerilog covergroup with the same bins (see :func:`covergroup`)."""
        return covergroup(self.fmt, self.op, name=name, saturate=self._saturating(),
                          tininess=self.tininess, isa=self.isa)


def from_dict(d, fmt=None):
    """The Coverage saved by :meth:`Coverage.to_dict`."""
    if fmt is None:
        fmt = _formats.lookup(d["format"])
        if list(fmt.params) != list(d["params"]):
            raise ValueError(f"format {d['format']!r} has other parameters here: give fmt=")
    fmt = _fmt(fmt)
    cov = Coverage(fmt, d["op"], saturate=d["saturate"], tininess=d["tininess"], isa=d["isa"])
    if d["bins"] != cov.names:
        raise ValueError("the saved bins differ from this version's model")
    cov.counts[:] = np.asarray(d["counts"], dtype=np.int64)
    cov.cases[:] = np.asarray(d["cases"], dtype=np.int64)
    return cov


def measure(stream, fmt, op, *, rounding="nearest_even", saturate=None, tininess="after",
            sr_bits=32, isa="default", block_lines=1 << 18, coverage=None) -> Coverage:
    """The coverage of a vector file (a binary stream in ``softfp8 gen``'s line
    format, as :func:`softfp8.vectors.verify` reads it): every line's operands (and
    random word) run through the core in the file's environment."""
    fmt, op = _fmt(fmt), _op(op)
    rounding = vectors.rounding_name(rounding)
    cov = coverage if coverage is not None else Coverage(
        fmt, op, saturate=saturate, tininess=tininess, isa=isa, sr_bits=sr_bits)
    for operands, rnd in vectors.read_cases(stream, fmt, op, rounding=rounding,
                                            block_lines=block_lines):
        cov.sample(operands, rounding if op.rounds else "nearest_even", rnd)
    return cov


def exhaustive_operands(fmt, op, start=0, stop=None):
    """The operand arrays of cases start..stop of the exhaustive set (a major)."""
    fmt, op = _fmt(fmt), _op(op)
    n = 1 << (fmt.bits * op.arity)
    idx = np.arange(start, n if stop is None else min(stop, n), dtype=np.uint64)
    w, mask = np.uint64(fmt.bits), np.uint64(fmt.code_mask)
    return [(idx >> (w * np.uint64(op.arity - 1 - k))) & mask for k in range(op.arity)]


@functools.lru_cache(maxsize=8)
def _exhaustive(fmt, op, saturate, tininess, isa):
    cov = Coverage(fmt, op, saturate=saturate, tininess=tininess, isa=isa)
    n = 1 << (fmt.bits * op.arity)
    step = 1 << 20
    for start in range(0, n, step):
        ops = exhaustive_operands(fmt, op, start, start + step)
        if op.rounds:
            zero = np.zeros(ops[0].size, dtype=np.uint32)
            cov.sample(ops, list(MODES), zero)
            cov.sample(ops, "stochastic", zero + np.uint32(0xFFFFFFFF))
            cov.cases[MODES.index("stochastic")] -= ops[0].size
        else:
            cov.sample(ops)
    return cov


def exhaustive(fmt, op, mode=None, *, saturate=None, tininess="after", isa="default") -> Coverage:
    """The Coverage of every case of (fmt, op) in every mode (stochastic: each case with
    the random words 0 and 0xFFFFFFFF, which round it down and up where it can be);
    cached.  Operands of at most 24 bits in all."""
    fmt, op = _fmt(fmt), _op(op)
    if fmt.bits * op.arity > 24:
        raise ValueError(f"{fmt.name} {op.name}: {1 << (fmt.bits * op.arity)} cases are too many "
                         f"to enumerate (at most 2**24)")
    sat = bool(fmt.saturate if saturate is None else saturate)
    return _exhaustive(fmt, op, sat, tininess, isa)


# ------------------------------------------------------------ gen --cover ----

_INVERT = {  # the last operand that puts op(operands) at a target value t (float64)
    "mul": lambda a, t: t / a, "div": lambda a, t: a / t, "add": lambda a, t: t - a,
    "sub": lambda a, t: a - t, "hypot": lambda a, t: np.sqrt(np.abs(t * t - a * a)),
}


def _values(fmt):
    codes = np.arange(fmt.code_mask + 1, dtype=np.uint64).astype(fmt.storage)
    with np.errstate(all="ignore"):
        out = bits.to_float(codes, fmt)
    return np.asarray(out[0] if isinstance(out, tuple) else out, dtype=np.float64)


def _candidates(fmt, op, rng, n, level_codes, values):
    """n candidate operand tuples: uniform codes, special-value crossings, and cases
    aimed at the overflow edge, the tininess threshold and the subnormal range (the
    last operand solved in float64 and nudged by a few codes)."""
    mask = fmt.code_mask
    kind = rng.integers(0, 3)
    if kind == 0:
        return [rng.integers(0, mask + 1, n, dtype=np.uint64) for _ in range(op.arity)]
    if kind == 1 or (op.name not in _INVERT and op.arity < 3):
        ops = [level_codes[rng.integers(0, level_codes.size, n)] for _ in range(op.arity)]
        # nudge one operand by a few codes around the specials
        j = rng.integers(0, op.arity)
        ops[j] = np.clip(ops[j].astype(np.int64) + rng.integers(-3, 4, n), 0, mask).astype(np.uint64)
        return ops
    finite = np.isfinite(values)
    mx = float(np.nanmax(np.abs(values[finite])))
    mn = float(fmt.min_normal)
    eps = 2.0 ** -fmt.man_bits
    u = rng.random(n)
    target = np.choose(rng.integers(0, 4, n), [mx * (1 + 1.2 * eps * u), mn * (1 - 2 * eps * u),
                                                mn * u, mx * u])
    if fmt.signed:
        target *= np.where(rng.random(n) < 0.5, -1.0, 1.0)
    pool = np.flatnonzero(finite & (values != 0)).astype(np.uint64)
    ops = [pool[rng.integers(0, pool.size, n)] for _ in range(op.arity - 1)]
    with np.errstate(all="ignore"):
        if op.arity == 3:     # fma: c = t - a*b
            need = target - values[ops[0].astype(np.intp)] * values[ops[1].astype(np.intp)]
        else:
            a = values[ops[0].astype(np.intp)]
            if op.name in ("add", "sub"):   # a near half the target
                a = target * (0.25 + 0.5 * rng.random(n))
                ops[0] = np.asarray(bits.from_float(a, fmt, rounding="toward_zero",
                                                    saturate=True)[0], dtype=np.uint64)
                a = values[ops[0].astype(np.intp)]
            need = _INVERT[op.name](a, target)
        need = np.nan_to_num(need, nan=0.0, posinf=mx, neginf=-mx)
        last = np.asarray(bits.from_float(need, fmt, rounding="toward_zero", saturate=True)[0],
                          dtype=np.int64)
    last = np.clip(last + rng.integers(-2, 3, n), 0, mask).astype(np.uint64)
    return ops + [last]


def cover_holes(cov, *, rounding=None, seed=1, testfloat=False, batches=400, batch=1 << 16):
    """(vector lines as bytes, [(mode, bin) still empty]): cases that hit the reachable
    bins ``cov`` leaves empty, in ``rounding`` (default: the modes cov sampled), found by
    a seeded search over uniform codes, special-value crossings and cases aimed at the
    overflow edge, the tininess threshold and the subnormal range.  The lines are in
    softfp8 gen's format for that mode (one mode per call when writing)."""
    fmt, op = cov.fmt, cov.op
    modes = ([vectors.rounding_name(rounding)] if rounding else
             [cov.model.modes[m] for m in cov.sampled_modes()] or ["nearest_even"])
    if len(modes) != 1:
        raise ValueError("cover_holes writes one rounding mode's lines: give rounding=")
    mode = modes[0] if op.rounds else "nearest_even"
    holes = [b for md, b in cov.holes([mode] if op.rounds else None)]
    found = {}
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))
    level = vectors.special_codes(fmt, 2)
    values = _values(fmt)
    stochastic = op.rounds and mode == "stochastic"
    for _ in range(batches):
        if not holes:
            break
        ops = _candidates(fmt, op, rng, batch, level, values)
        rnd = None
        if stochastic:
            rnd = rng.integers(0, 1 << 32, batch, dtype=np.uint64).astype(np.uint32)
            rnd[: batch // 4] = 0
            rnd[batch // 4: batch // 2] = 0xFFFFFFFF
        (res, fl, sit), _ = cov.run(ops, mode, rnd)
        ops32 = cov._operands(ops)
        hits = cov.hits(ops32, res[0], fl[0], sit[0])
        for b in list(holes):
            col = hits[:, cov.names.index(b)]
            if col.any():
                i = int(np.argmax(col))
                found[b] = (tuple(int(o[i]) for o in ops32), None if rnd is None else int(rnd[i]))
                holes.remove(b)
    cases = list(found.values())
    if not cases:
        return b"", [(mode, b) for b in holes]
    operands = [np.array([c[0][k] for c in cases], dtype=np.uint64) for k in range(op.arity)]
    rnd = np.array([c[1] for c in cases], dtype=np.uint64) if stochastic else None
    res, fl = vectors._compute(fmt, op, operands, rnd, mode, cov.saturate, cov.tininess,
                              cov.sr_bits, cov.isa)
    keep = np.uint8(vectors.TESTFLOAT_FLAGS if testfloat else vectors.ALL_FLAGS)
    cols = operands + ([rnd] if stochastic else []) + [res, (fl & keep).astype(np.uint64)]
    return vectors._hex_lines(cols, vectors.columns(fmt, op, mode)), [(mode, b) for b in holes]


# --------------------------------------------------------------- reachability ----

def unreachable(fmt, op, mode="nearest_even", *, saturate=None, tininess="after", isa="default"):
    """{bin: reason}: the bins of (fmt, op) no case can hit in ``mode`` (derived; see
    docs/golden-model.md, "Coverage").  ``saturate=None``: the format's default."""
    fmt, op = _fmt(fmt), _op(op)
    sat = bool(fmt.saturate if saturate is None else saturate)
    mode = vectors.rounding_name(mode)
    return dict(_unreachable(fmt, op, NOMODE if not op.rounds else mode, sat, tininess, isa))


@functools.lru_cache(maxsize=4096)
def _unreachable(fmt, op, mode, sat, tininess, isa):
    m = model(fmt, op)
    out = _reach.rules(fmt, op, mode, m, operand_classes(fmt))
    if fmt.bits * op.arity <= 24:      # enumerable: every case, every mode at once (cached)
        cov = _exhaustive(fmt, op, sat, tininess, isa)
        hit = cov.hit(mode)
        n = 1 << (fmt.bits * op.arity)
        extra = " with both extreme random words" if mode == "stochastic" else ""
        for name in m.names:
            if name not in hit and name not in out:
                out[name] = f"no case of the exhaustive set ({n:,} cases{extra}) reaches it (enumerated)"
    return tuple(out.items())


def covergroup(fmt, op, *, name=None, saturate=None, tininess="after", isa="default") -> str:
    """A SystemVerilog covergroup (a class wrapping it, sampled through softfp8_pkg's DPI
    calls) with the bins of (fmt, op); each mode's derived unreachable bins are
    ignore_bins (softfp8 cov --sv)."""
    fmt, op = _fmt(fmt), _op(op)
    sat = bool(fmt.saturate if saturate is None else saturate)
    un = {mode: unreachable(fmt, op, mode, saturate=sat, tininess=tininess, isa=isa)
          for mode in model(fmt, op).modes}
    consts = dict(classes=CLASSES, situations=SITUATIONS, flag_bins=FLAG_BINS, relations=RELATIONS,
                  modes=MODES)
    return _svgen.render_covergroup(fmt, op, model(fmt, op), un, consts, name=name)


__all__ = ["Coverage", "Model", "model", "measure", "exhaustive", "cover_holes", "unreachable", "covergroup", "from_dict",
           "operand_classes", "CLASSES", "SITUATIONS", "FLAG_BINS", "MODES"]
