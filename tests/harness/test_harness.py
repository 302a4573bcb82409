"""The generic differential test: every part of every registered entry, every case proven
equal to the exact core at every SIMD level the machine has (machinery.prove).

A part's failures are all collected and reported together (one line each, with the case
id, the variant, the first differing element and its input codes), so one run lists every
disagreement.  When the contract's counters exist (names.counts_present()), the part must
also have made its path run at every SIMD level the path implements and the machine has;
until then, the parts of entries whose path reads the table cache must at least have
found or built a table (fast_cache_stats: hits + builds grew).

SOFTFP8_SAMPLE=k (the sanitizer job) keeps one case in k of each part (by a hash of its
id, the same ones every run; at least one per part), except the layout parts (every
calling convention, small arrays), which run whole.
"""
from __future__ import annotations

import json
import os
import zlib

import pytest

from softfp8 import _ext

from . import names, registry
from .machinery import LEVELS, prove

SAMPLE = int(os.environ.get("SOFTFP8_SAMPLE") or 0)
REPORT = os.environ.get("SOFTFP8_HARNESS_REPORT")   # a JSON-lines file of per-part statistics
ITEMS = registry.items()


def _counts(kind):
    return _ext.fast_family_counts() if kind == "family" else _ext.matrix_path_counts()


def _reset(kind):
    (_ext.reset_fast_family_counts if kind == "family" else _ext.reset_matrix_path_counts)()


pytestmark = pytest.mark.usefixtures("restore_fast_switches")


def run_part(name, part):
    entry = registry.load()[name]
    stats = {"cases": 0, "elements": 0, "exhaustive": 0}
    fails = []
    cover = names.counts_present() and not SAMPLE and part not in entry.no_coverage
    tables = not names.counts_present() and entry.tables and part not in entry.no_coverage
    if cover:
        _reset(entry.kind)
    used0 = _tables_used()
    kept = 0
    for case in entry.parts[part]():
        if SAMPLE and part != "layouts" and zlib.crc32(case.id.encode()) % SAMPLE and kept:
            continue
        kept += 1
        fails.extend(prove(case, stats))
    missing = []
    if cover:
        counts = _counts(entry.kind)
        levels = names.levels_of(name) or LEVELS
        missing = [lv for lv in levels if lv in LEVELS and not counts.get((name, lv), 0)]
    elif tables and _tables_used() == used0:
        missing = ["any (no fast-path table was found or built)"]
    return stats, fails, missing


def _tables_used():
    st = _ext.fast_cache_stats()
    return st["hits"] + st["builds"]


@pytest.mark.parametrize("name,part", ITEMS, ids=[f"{n}-{p}" for n, p in ITEMS])
def test_entry(name, part):
    stats, fails, missing = run_part(name, part)
    if REPORT:
        with open(REPORT, "a") as f:
            f.write(json.dumps({"entry": name, "part": part, **stats, "failures": fails}) + "\n")
    assert stats["cases"] > 0, f"{name}/{part}: no cases"
    assert not fails, (f"{name}/{part}: {len(fails)} of {stats['cases']} cases disagree with the core:\n  "
                       + "\n  ".join(fails[:40]) + ("\n  ..." if len(fails) > 40 else ""))
    counts = _counts(registry.load()[name].kind) if names.counts_present() else "absent"
    assert not missing, f"{name}/{part}: the path did not run at SIMD level(s) {missing} (counts {counts})"
