"""The exact value before rounding and the rounding decision of one operation:
``softfp8.bits.<op>(..., explain=True)``, ``softfp8 calc ... --explain``.

The record comes from the C core's one rounding routine (sfp8_op_explain, see
softfp8/_core/core_explain.c): this module only names its fields and words them.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

from . import _context

DECISIONS = ("special", "exact", "down", "up", "overflow", "flush")   # enum sfp8_decision
_MODES = _context.ROUNDING_MODES


@dataclasses.dataclass(frozen=True)
class Explanation:
    """One operation's rounding, as the core decided it.

    ``exact`` is the exact result as a Fraction (``sig * 2**exp``; when
    ``sticky_in`` the true value lies strictly between that and the next multiple
    of ``2**exp``); ``quantum``: the value was rounded to a multiple of
    ``2**quantum``; ``kept`` the truncated significand at that point; ``guard``,
    ``round``, ``sticky`` the dropped bits; ``half`` -1 / 0 / 1 (below, at, above
    half an ulp); ``decision`` one of special, exact, down, up, overflow, flush;
    ``carry`` the increment carried into the next binade; ``tiny`` by the
    environment's tininess rule."""

    fmt: object
    op: str
    operands: tuple
    env: tuple
    random: int
    record: dict

    def __getattr__(self, name):
        rec = self.__dict__.get("record", {})
        if name in rec:
            return rec[name]
        raise AttributeError(name)

    @property
    def decision_name(self):
        return DECISIONS[self.record["decision"]]

    @property
    def exact(self):
        r = self.record
        if r["decision"] == 0 and r["sig"] == 0:
            return None
        v = Fraction(r["sig"]) * Fraction(2) ** r["exp"]
        return -v if r["sign"] else v

    @property
    def rounding(self):
        return _MODES[self.env[0]]

    def reason(self) -> str:
        """Why the result is what it is, in words."""
        r = self.record
        d = self.decision_name
        mode = self.rounding
        if d == "special":
            return ("a special-value rule decided (NaN, infinity, exact zero, invalid "
                    "operation, or the ISA convention)")
        if d == "exact":
            return "the value is representable"
        if d == "overflow":
            sat = bool(self.env[1])
            return (f"beyond the largest finite value; {mode}"
                    f"{' with saturation' if sat else ''} delivers "
                    f"{'the largest finite value' if not _is_inf(self) else 'infinity'}")
        if d == "flush":
            return "tiny in a flush-to-zero format: delivered as zero"
        where = {-1: "below half an ulp", 0: "exactly half an ulp (a tie)", 1: "above half an ulp"}
        why = where[r["half"]]
        if mode == "nearest_even":
            rule = ("tie: to the even neighbour" if r["half"] == 0 else "to the nearer neighbour")
        elif mode == "nearest_away":
            rule = "tie: away from zero" if r["half"] == 0 else "to the nearer neighbour"
        elif mode == "stochastic":
            rule = f"stochastic: random bits {self.random:#010x} against the dropped fraction"
        elif mode == "to_odd":
            rule = "to odd: the neighbour with an odd last bit"
        else:
            rule = f"{mode}: directed"
        text = f"dropped part {why}; {rule}; rounded {'up' if d == 'up' else 'down'} (in magnitude)"
        if r["carry"]:
            text += "; the increment carried into the next binade"
        if r["tiny"]:
            text += "; tiny (underflow if inexact)"
        return text

    def __str__(self):
        r = self.record
        fmt_name = getattr(self.fmt, "name", str(self.fmt))
        ops = " ".join(f"{o:#x}" for o in self.operands)
        lines = [f"{self.op} {fmt_name} {ops} ({self.rounding}): result {r['result']:#x}, "
                 f"flags {_flag_names(r['flags'])}"]
        if r["decision"] != 0 or r["sig"]:
            ex = self.exact
            lines.append(f"  exact value  {'-' if r['sign'] else '+'}{r['sig']:#x} * 2^{r['exp']}"
                         f"{' + sticky' if r['sticky_in'] else ''}  (= {float(ex)!r}, 2^{r['e']} <= |x|"
                         f" < 2^{r['e'] + 1})")
            lines.append(f"  rounding at  2^{r['quantum']}{' (subnormal grid)' if r['subnormal'] else ''}"
                         f": kept {r['kept']:#b}, guard {r['guard']}, round {r['round']}, "
                         f"sticky {r['sticky']}")
        lines.append(f"  decision     {self.decision_name}: {self.reason()}")
        return "\n".join(lines)


def _is_inf(x):

    try:
        return math.isinf(x.fmt.decode(x.record["result"]))
    except Exception:   # binary32/64 endpoints
        return False


def _flag_names(flags):
    names = [f.name.lower() for f in _context.Flags if flags & int(f)]
    return "|".join(names) if names else "none"
