"""The registry: one Entry per fast family and per matrix path.

An entry registers its parameter space as named parts, each a function returning its
cases (machinery.Case); the generic test (test_harness.py) proves every case of every
part.  Parts are split so that each pytest item stays short (xdist spreads them).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Iterable

ENTRIES: Dict[str, "Entry"] = {}


@dataclasses.dataclass
class Entry:
    name: str
    kind: str                     # "family" or "matrix"
    what: str
    parts: Dict[str, Callable[[], Iterable]]
    # parts whose calls need not reach this entry's kernel (public entry points that may
    # decline to it); the coverage check (test_harness.py) skips them
    no_coverage: tuple = ()
    # the path looks up tables in the fast-path cache (the interim engagement check of
    # test_harness.py while the contract's counters are absent)
    tables: bool = True


def register(name, kind, what, no_coverage=(), tables=True):
    """Decorator: fn() -> {part name: callable returning cases} registers entry `name`."""
    assert kind in ("family", "matrix")

    def deco(fn):
        assert name not in ENTRIES, f"entry {name} registered twice"
        ENTRIES[name] = Entry(name, kind, what, fn(), tuple(no_coverage), tables)
        return fn
    return deco


def load():
    """Import the entry modules (they register themselves); the registry."""
    from . import families, matrix  # noqa: F401
    return ENTRIES


def items():
    """[(entry name, part name)] of every registered part, in registration order."""
    return [(e.name, p) for e in load().values() for p in e.parts]
