"""The fast-path table cache's byte budget: least-recently-used eviction, tables
pinned by the tables built from them, memory released once no loop can read an
evicted table, and results that stay the exact core's whatever the cache does
(also with threads evicting tables other threads are reading)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import softfp8
from softfp8 import _ext

BIN8 = 65536 * 2  # bytes of one 8-bit binary-operation table


@pytest.fixture
def budget():
    """Set the budget for one test (and the eager fast paths); restore after."""
    prev_fast = _ext.set_fast(2)
    saved = []

    def set_budget(nbytes):
        saved.append(_ext.set_fast_cache_cap(nbytes))

    yield set_budget
    if saved:
        _ext.set_fast_cache_cap(saved[0])
    _ext.set_fast(prev_fast)


def fmts(n, tag):
    return [softfp8.format(exp_bits=4, man_bits=3, bias=b, name=f"{tag}{b}") for b in range(1, n + 1)]


def all_pairs(fmt):
    c = np.arange(256, dtype=np.uint8)
    a, b = np.meshgrid(c, c, indexing="ij")
    return a.ravel().view(fmt.dtype), b.ravel().view(fmt.dtype)


def core(fn):
    prev = _ext.set_fast(0)
    try:
        with np.errstate(all="ignore"), softfp8.collect_flags() as fl:
            r = fn()
        return np.asarray(r).view(np.uint8).copy(), int(fl.flags)
    finally:
        _ext.set_fast(prev)


def run(fn):
    with np.errstate(all="ignore"), softfp8.collect_flags() as fl:
        r = fn()
    return np.asarray(r).view(np.uint8).copy(), int(fl.flags)


def test_lru_eviction_keeps_the_budget_and_the_results(budget):
    fs = fmts(10, "lru")
    pairs = [all_pairs(f) for f in fs]
    wants = [core(lambda: np.add(a, b)) for a, b in pairs]  # also creates every dtype first
    cap = 3 * BIN8 + 1000  # room for three 8-bit add tables
    budget(cap)
    s0 = _ext.fast_cache_stats()
    assert s0["bytes"] <= cap
    for (a, b), want in zip(pairs, wants):
        got = run(lambda: np.add(a, b))
        assert got[1] == want[1] and np.array_equal(got[0], want[0])
        st = _ext.fast_cache_stats()
        assert st["bytes"] <= st["cap"]
    s1 = _ext.fast_cache_stats()
    assert s1["builds"] - s0["builds"] >= 10
    assert s1["evicted"] - s0["evicted"] >= 7
    assert s1["tables"] <= 3
    # the most recent format's table is cached (a hit, no build); the oldest's was
    # evicted (rebuilt)
    a, b = pairs[-1]
    run(lambda: np.add(a, b))
    s2 = _ext.fast_cache_stats()
    assert s2["builds"] == s1["builds"] and s2["hits"] > s1["hits"]
    a, b = pairs[0]
    run(lambda: np.add(a, b))
    assert _ext.fast_cache_stats()["builds"] > s2["builds"]
    _ext.fast_cache_reclaim()
    s3 = _ext.fast_cache_stats()
    assert s3["freed"] == s3["evicted"], s3  # no loop runs now: everything evicted is released


def test_tables_built_from_tables_are_pinned(budget):
    """The fma table of an 8-bit format keeps a pointer into a binary32 -> format
    table: under a budget that forces evictions, that table is never evicted while
    the fma table lives, and fma stays exact."""
    f = softfp8.format(exp_bits=4, man_bits=3, bias=7, name="pin_fma")
    g = np.random.default_rng(5)
    x, y, z = (g.integers(0, 256, 20000, dtype=np.uint8).view(f.dtype) for _ in range(3))
    budget(1 << 40)
    want = core(lambda: softfp8.fma(x, y, z))
    assert run(lambda: softfp8.fma(x, y, z))[1] == want[1]
    st = _ext.fast_cache_stats()
    budget(st["bytes"] + BIN8 // 2)  # little room left: new tables evict
    for h in fmts(6, "pin_other"):
        a, b = all_pairs(h)
        run(lambda: np.multiply(a, b))
    got = run(lambda: softfp8.fma(x, y, z))
    assert got[1] == want[1] and np.array_equal(got[0], want[0])
    assert _ext.fast_cache_stats()["evicted"] > st["evicted"]


def test_threads_reading_tables_while_others_evict(budget):
    """Four threads compute with tables of 24 formats under a budget of two
    tables, so tables are evicted while other threads' loops read them; every
    result equals the exact core's and memory is released afterwards."""
    budget(2 * BIN8 + 1000)
    fs = fmts(24, "thr")
    cases = []
    for f in fs:
        a, b = all_pairs(f)
        cases.append((a, b, core(lambda: np.multiply(a, b))))
    errors, done = [], []

    def worker(k):
        try:
            for rep in range(3):
                for i in range(len(cases)):
                    a, b, want = cases[(i * (k + 1) + rep) % len(cases)]
                    got = run(lambda: np.multiply(a, b))
                    if got[1] != want[1] or not np.array_equal(got[0], want[0]):
                        errors.append((k, i))
            done.append(k)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    s0 = _ext.fast_cache_stats()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and sorted(done) == [0, 1, 2, 3]
    s1 = _ext.fast_cache_stats()
    assert s1["evicted"] - s0["evicted"] >= 24
    _ext.fast_cache_reclaim()
    s2 = _ext.fast_cache_stats()
    assert s2["freed"] == s2["evicted"] and s2["bytes"] <= s2["cap"]


@pytest.mark.skipif(bool(__import__("os").environ.get("SOFTFP8_SANITIZED")),
                    reason="AddressSanitizer's quarantine keeps freed memory resident")
def test_many_formats_stay_within_the_budget():
    """A program touching 400 formats' add tables (52 MiB of tables) under a 4 MiB
    budget (set through SOFTFP8_TABLE_BUDGET_MB) grows its resident memory by far
    less than the tables' total; measured in a fresh process."""
    code = textwrap.dedent("""
        import resource, numpy as np, softfp8
        from softfp8 import _ext
        _ext.set_fast(2)
        def rss_kib():
            with open("/proc/self/statm") as fh:
                return int(fh.read().split()[1]) * resource.getpagesize() // 1024
        c = np.arange(256, dtype=np.uint8)
        a, b = (m.ravel() for m in np.meshgrid(c, c, indexing="ij"))
        fs = [softfp8.format(exp_bits=e, man_bits=7 - e, bias=bb, name=f"m{e}_{bb}")
              for e in (3, 4, 5) for bb in range(1, 141)][:400]
        np.add(a.view(fs[0].dtype), b.view(fs[0].dtype))
        r0 = rss_kib()
        for f in fs:
            np.add(a.view(f.dtype), b.view(f.dtype))
        _ext.fast_cache_reclaim()
        st = _ext.fast_cache_stats()
        print(rss_kib() - r0, st["cap"], st["bytes"], st["builds"], st["evicted"], st["freed"])
    """)
    env = dict(__import__("os").environ, SOFTFP8_TABLE_BUDGET_MB="4")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    grow_kib, cap, nbytes, builds, evicted, freed = map(int, out.stdout.split())
    assert cap == 4 << 20 and nbytes <= cap
    assert builds >= 400 and evicted >= builds - 32 and freed == evicted
    assert grow_kib < 16 * 1024, grow_kib  # the tables alone would be 52 MiB


def test_budget_environment_variable_is_checked():
    code = "import softfp8"
    env = dict(__import__("os").environ, SOFTFP8_TABLE_BUDGET_MB="lots")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode != 0 and "SOFTFP8_TABLE_BUDGET_MB" in out.stderr and "'lots'" in out.stderr
