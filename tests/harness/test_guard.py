"""Guards of the harness: every fast family and matrix path is registered, every entry
walks the space it claims (case counts from the space's sizes), the switches it relies on
work, and -- once the contract's counters exist -- the counters count.

The per-part coverage assertion (the entry made its own path run at every SIMD level the
path implements and the machine has) is in test_harness.py, next to the run it checks.
"""
from __future__ import annotations

import numpy as np
import pytest

import softfp8
from softfp8 import _ext

from . import families as F
from . import matrix as MX
from . import names, registry
from . import space as S
from .machinery import CPU_SIMD, LEVELS, VARIANTS, switches


def registry_errors(registered, expected):
    """The guard's findings (empty: the registry matches the hooks)."""
    out = []
    for n in sorted(set(expected) - set(registered)):
        out.append(f"fast path {n!r} is not registered in tests/harness (add an entry: families.py / matrix.py)")
    for n in sorted(set(registered) - set(expected)):
        out.append(f"harness entry {n!r} names no fast family or matrix path (renamed or removed?)")
    return out


def test_every_path_is_registered():
    errs = registry_errors(registry.load().keys(), names.expected_names())
    assert not errs, "\n".join(errs)


def test_the_guard_fails_on_a_missing_or_stray_entry():
    expected = names.expected_names()
    some = sorted(expected)[0]
    assert registry_errors(expected - {some}, expected) == [
        f"fast path {some!r} is not registered in tests/harness (add an entry: families.py / matrix.py)"]
    assert registry_errors(expected | {"no_such_kernel"}, expected) == [
        "harness entry 'no_such_kernel' names no fast family or matrix path (renamed or removed?)"]


def test_entry_kinds_follow_the_hooks():
    fam = {r["name"] for r in names.family_rows()}
    mat = {r["name"] for r in names.matrix_rows()}
    for e in registry.load().values():
        assert e.name in (fam if e.kind == "family" else mat), (e.name, e.kind)
        assert e.parts and e.what


def test_hooks_come_together():
    """The contract's hooks: both listings and both counter pairs, or none yet."""
    listed = [hasattr(_ext, n) for n in ("fast_families", "matrix_paths")]
    counted = [hasattr(_ext, n) for n in ("fast_family_counts", "reset_fast_family_counts",
                                          "matrix_path_counts", "reset_matrix_path_counts")]
    assert len(set(listed)) == 1 and len(set(counted)) == 1 and listed[0] == counted[0], (listed, counted)
    assert names.hooks_present() and names.counts_present()
    for r in names.family_rows() + names.matrix_rows():
        assert set(r) >= {"name", "levels", "what"} and r["name"]
        assert set(r["levels"]) <= {0, 1, 2} and 0 in r["levels"], r


@pytest.mark.parametrize("kind", ["family", "matrix"])
def test_counters_count(kind):
    """reset -> zeros; one call of a registered path at each level -> its count grows."""
    reset = _ext.reset_fast_family_counts if kind == "family" else _ext.reset_matrix_path_counts
    counts = _ext.fast_family_counts if kind == "family" else _ext.matrix_path_counts
    reset()
    assert not any(counts().values())
    x = np.arange(256, dtype=np.uint8).view(softfp8.e4m3)
    for lv in LEVELS:
        with switches(2, lv), np.errstate(all="ignore"):
            if kind == "family":
                np.add(x, x[::-1])
            else:
                np.matmul(x[:64].reshape(8, 8), x[64:128].reshape(8, 8))
    assert any(counts().values())


def test_switches_reach_every_level():
    assert LEVELS == tuple(range(CPU_SIMD, -1, -1))
    for lv in LEVELS:
        with switches(2, lv):
            assert _ext.simd_level() == lv and _ext.fast_enabled() == 2
    with switches(0, 0):
        assert _ext.fast_enabled() == 0
    assert (1, LEVELS[0]) in VARIANTS and all((2, lv) in VARIANTS for lv in LEVELS)


# ---- case counts, from the sizes of the space (not from the generators) ----

def _count(name, part, exhaustive_only=True):
    n = 0
    for case in registry.load()[name].parts[part]():
        if case.exhaustive or not exhaustive_only:
            n += case.count
    return n


def test_exhaustive_case_counts():
    pairs, byte = 65536, 256
    n8, nn, nw = len(S.F8), len(S.NARROW), len(S.WIDE)
    nbin = len(F.ROUNDING_BINARY) + len(F.FREE_BINARY)
    nun = len(F.ROUNDING_UNARY) + len(F.FREE_UNARY)
    assert _count("binary8", "exhaustive") == (n8 * nbin + nn * 6) * pairs
    assert _count("unary", "exhaustive8") == (n8 + nn) * nun * byte
    # every (a, b) pair against 2 x 16 addends, e4m3 and e5m2
    assert _count("fma8", "exhaustive") == 2 * (16 + 15) * pairs
    codes_w = sum(1 << f.bits for f in S.WIDE)
    n_sr8 = len(S.F8 + S.NARROW[::4])
    assert _count("sr_arith8", "exhaustive") == sum(
        4 * (len(S.SR) if f in S.F8_MAIN else 1) for f in S.F8 + S.NARROW[::4]) * pairs
    assert n_sr8 == 31
    assert _count("sr_unary8", "exhaustive") == len(S.F8 + S.NARROW[::3]) * len(F.ROUNDING_UNARY) * 16 * byte
    assert _count("sr_arith16", "formats") >= codes_w          # every code's sqrt, plus the pairs
    cheap = len(F.CHEAP_UNARY) + len(F.FREE_UNARY)
    assert _count("unary", "wide") == codes_w * cheap + sum(
        len(F.ELEMENTARY_UNARY[::2]) << f.bits for f in (softfp8.bfloat16, S.MID[1])) + (
        len(F.ELEMENTARY_UNARY[1::2]) << 16)


def test_space_sizes():
    """The space the entries walk (docs/testing.md quotes these numbers)."""
    assert len(S.CONFIGS) == 24 and len(set(S.CONFIGS)) == 24
    assert {m for m, _, _ in S.SOME} == set(S.MODES) == set(softfp8.bits.ROUNDING_MODES) - {"stochastic"}
    assert {(s, t) for _, s, t in S.SOME} == {(s, t) for s in (False, True) for t in ("after", "before")}
    assert {n for _, _, n, _, _ in S.SR} == {1, 5, 13, 32}
    assert {f.bits for f in S.NARROW} == set(range(2, 8))
    assert {f.bits for f in S.WIDE} == set(range(9, 17))
    assert all(f.bits == 8 for f in S.F8) and len(S.F8) == 23
    assert {f.specials for f in S.F8 + S.NARROW + S.WIDE} >= {"ieee", "fn", "fnuz", "none"}
    assert {f.subnormals for f in S.F8 + S.NARROW + S.WIDE} >= {"ieee", "tesla", "flush", "nozero"}
    assert any(not f.signed for f in S.NARROW) and any(not f.signed for f in S.WIDE)
    shapes = S.MATRIX_SHAPES
    assert any(0 in s for s in shapes) and (1, 1, 1) in shapes and any(s[1] == 1 for s in shapes)
    for b in (8, 16, 32, 64):
        assert any(b in s for s in shapes) and any(b + 1 in s for s in shapes) and any(b - 1 in s for s in shapes)
    assert any(s[1] > 128 for s in shapes)
    assert len(MX.OUT_DTYPES) == 5 and any(abs(np.log2(s) % 1) > 0 for s in MX.SCALES)
    assert min(MX.SCALES) < 2.0 ** -126 and max(MX.SCALES) > 2.0 ** 100
