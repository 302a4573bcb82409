"""Rounding, saturation, tininess and sticky flags per thread / asyncio task.

The settings live in a ``contextvars.ContextVar`` holding a small C object
(``softfp8._ext.State``) that ufuncs and casts read once when they start.
Each thread and each asyncio task gets its own sticky-flag cell the first
time it uses softfp8, so flags never leak between them.
"""
from __future__ import annotations

import contextlib
import contextvars
import enum
import sys
import threading

from . import _ext
from ._validation import _as_int

ROUNDING_MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd",
                  "stochastic")


class Flags(enum.IntFlag):
    """Sticky exception flags (SoftFloat's bit layout plus denormal)."""

    INEXACT = 0x01
    UNDERFLOW = 0x02
    OVERFLOW = 0x04
    DIVBYZERO = 0x08
    INVALID = 0x10
    DENORMAL = 0x20


_VAR: contextvars.ContextVar = contextvars.ContextVar("softfp8_state")


def _owner():
    """Identity of the current thread and asyncio task."""
    asyncio = sys.modules.get("asyncio")  # no event loop runs unless asyncio is imported
    try:
        task = asyncio.current_task() if asyncio is not None else None
    except RuntimeError:
        task = None
    return (threading.get_ident(), id(task) if task is not None else None)


def _new_state(template=None):
    st = _ext.State()
    if template is None:
        st.rounding = 0
        st.saturate = -1
        st.tininess_before = 0
        st.sr_bits = 32
        st.isa = 0
        st.seeded = 0
        st.seed = 0
        st.counter = 0
    else:
        for name in ("rounding", "saturate", "tininess_before", "sr_bits", "isa", "seeded", "seed",
                     "counter"):
            setattr(st, name, getattr(template, name))
    st.cell = _ext.FlagCell()
    return st


class _Entry:
    __slots__ = ("state", "owner")

    def __init__(self, state, owner):
        self.state = state
        self.owner = owner


def _current():
    """The State of this thread/task (created on first use)."""
    entry = _VAR.get(None)
    owner = _owner()
    if entry is None or entry.owner != owner:
        # first use here, or inherited from another thread/task: same settings,
        # own flags
        st = _new_state(entry.state if entry is not None else None)
        if entry is not None:
            st.cell.flags = 0
        entry = _Entry(st, owner)
        _VAR.set(entry)
    return entry.state


def publish_flags(fl, name):
    """The flags of a product computed outside a ufunc loop (softfp8.matmul with a model,
    scaled_mm): ORed into the sticky flags and handed to np.errstate as NumPy does after
    a ufunc's loop (RuntimeWarning / FloatingPointError "... encountered in <name>")."""
    if fl:
        _ext.publish_flags(_current().cell, int(fl), name)


def _set(state):
    return _VAR.set(_Entry(state, _owner()))


@contextlib.contextmanager
def _override(**changes):
    cur = _current()
    st = _new_state(cur)
    st.cell = cur.cell  # flags stay shared with the enclosing block
    for k, v in changes.items():
        setattr(st, k, v)
    token = _set(st)
    try:
        yield st
    finally:
        _VAR.reset(token)
        if "seed" not in changes:
            _carry_counter(cur, st)


def _carry_counter(outer, inner):
    """A block that kept the enclosing seed continues its operation count, so
    the next operation outside never reuses the block's random bits."""
    if inner.seeded == outer.seeded and inner.seed == outer.seed:
        outer.counter = inner.counter


def _mode_index(mode):
    if not isinstance(mode, str):
        raise TypeError(f"rounding mode must be a string, one of {', '.join(ROUNDING_MODES)}; "
                        f"got {mode!r}")
    if mode not in ROUNDING_MODES:
        raise ValueError(f"unknown rounding mode {mode!r}: expected one of "
                         f"{', '.join(ROUNDING_MODES)}")
    return ROUNDING_MODES.index(mode)


def rounding(mode, seed=None, sr_bits=32):
    """Context manager: rounding mode for ufuncs, casts, scalars and bits defaults.

    ``rounding("stochastic", seed=1234)`` makes stochastic rounding
    reproducible: the random bits of an element depend on the seed, its
    position in the result and how many operations the block has rounded.
    """
    idx = _mode_index(mode)
    n = _as_int(sr_bits, "sr_bits")
    if not 1 <= n <= 32:
        raise ValueError(f"sr_bits must be between 1 and 32, got {sr_bits!r}")
    changes = {"rounding": idx, "sr_bits": n}
    if seed is not None:
        s = _as_int(seed, "seed")
        if not 0 <= s < 2**64:
            raise ValueError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
        changes.update(seeded=1, seed=s, counter=0)
    elif idx == ROUNDING_MODES.index("stochastic"):
        changes.update(seeded=0, seed=0, counter=0)
    return _override(**changes)


ISAS = ("default", "x86", "arm", "arm_dn", "riscv")   # enum sfp8_isa (softfp8.h)
_FTZ, _DAZ = 0x100, 0x200


def _isa_index(name, ftz=False, daz=False):
    """The sfp8_isa value of a convention name ("x86", "arm_dn+ftz", ...)."""
    if not isinstance(name, str):
        raise TypeError(f"isa must be a string, one of {', '.join(ISAS)} (with +ftz / +daz); "
                        f"got {name!r}")
    v = _ext.isa_lookup(name)
    if v < 0:
        raise ValueError(f"unknown ISA convention {name!r}: expected one of {', '.join(ISAS)}, "
                         f"optionally with '+ftz' and/or '+daz' (e.g. 'x86+ftz+daz')")
    return v | (_FTZ if ftz else 0) | (_DAZ if daz else 0)


def isa_name(value):
    """The name of an sfp8_isa value ("x86+ftz")."""
    return "+".join([ISAS[value & 0xFF]] + (["ftz"] if value & _FTZ else []) +
                    (["daz"] if value & _DAZ else []))


def isa(name="default", *, ftz=False, daz=False):
    """Context manager: the ISA convention for NaN results, flush-to-zero of results
    and denormals-are-zero of operands (softfp8.bits, NumPy ufuncs and casts):
    "default" (softfp8's), "x86" (SSE/AVX), "arm" (FPCR.DN=0), "arm_dn" (FPCR.DN=1),
    "riscv"; ``ftz=True`` / ``daz=True`` or "+ftz" / "+daz" in the name.  ``@`` and
    the NumPy matrix products follow it too; exact sums, scaled_mm, mx.matmul and the
    accumulation models keep softfp8's convention (docs/golden-model.md)."""
    return _override(isa=_isa_index(name, ftz, daz))


def get_isa():
    """The current ISA convention's name ("default", "x86+ftz", ...)."""
    return isa_name(_current().isa)


def saturation(enabled=True):
    """Context manager: saturate overflow (True), IEEE overflow (False), or the
    format's default (None)."""
    if enabled is None:
        v = -1
    elif isinstance(enabled, bool) or type(enabled).__name__ == "bool_":
        v = int(bool(enabled))
    else:
        raise TypeError(f"saturation() takes True, False or None, got {enabled!r}")
    return _override(saturate=v)


def tininess(rule):
    """Context manager: detect tininess "after" (default) or "before" rounding."""
    if not isinstance(rule, str) or rule not in ("after", "before"):
        raise ValueError(f"tininess must be 'after' or 'before', got {rule!r}")
    return _override(tininess_before=int(rule == "before"))


def get_rounding():
    return ROUNDING_MODES[_current().rounding]


def get_saturation():
    """True/False, or None for "each format's default"."""
    v = _current().saturate
    return None if v < 0 else bool(v)


def get_tininess():
    return "before" if _current().tininess_before else "after"


def get_flags():
    """The sticky flags of this thread/task."""
    return Flags(_current().cell.flags)


def clear_flags():
    _current().cell.flags = 0


class FlagCollector:
    """Result of ``collect_flags()``: the flags raised inside the block."""

    def __init__(self):
        self.flags = Flags(0)

    inexact = property(lambda self: bool(self.flags & Flags.INEXACT))
    underflow = property(lambda self: bool(self.flags & Flags.UNDERFLOW))
    overflow = property(lambda self: bool(self.flags & Flags.OVERFLOW))
    divbyzero = property(lambda self: bool(self.flags & Flags.DIVBYZERO))
    invalid = property(lambda self: bool(self.flags & Flags.INVALID))
    denormal = property(lambda self: bool(self.flags & Flags.DENORMAL))

    def __repr__(self):
        return f"<softfp8 flags {self.flags!r}>"


@contextlib.contextmanager
def collect_flags():
    """Clear the flags on entry; ``fl.flags`` holds what the block raised.

    The flags raised inside stay raised in the enclosing context too (sticky).
    """
    cur = _current()
    outer = cur.cell.flags
    st = _new_state(cur)
    token = _set(st)
    col = FlagCollector()
    try:
        yield col
    finally:
        col.flags = Flags(st.cell.flags)
        _VAR.reset(token)
        _carry_counter(cur, st)
        cur.cell.flags = outer | st.cell.flags
