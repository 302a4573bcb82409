"""The fast paths' machinery, beside the differential harness (tests/harness), which proves
every fast family and matrix path equal to the exact core:

  - the switches: _ext.set_fast / set_simd and the SOFTFP8_FAST / SOFTFP8_SIMD variables;
  - the table cache: its counters, a zero budget, growth to thousands of tables, threads
    building and looking up tables at once (tests/fast/test_cache_budget.py: eviction);
  - stochastic rounding keyed on the global element index: calls split into pieces,
    reversed, strided and Fortran-ordered views, and softfp8.dask chunkings give the
    random bits of one flat call, at every SIMD level and with the fast paths off (a
    property of the driver and of both the core and the kernels, not a comparison).
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb
from softfp8 import _ext

from ..harness.machinery import CPU_SIMD, LEVELS, raw, rng_of, switches

REPO = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("restore_fast_switches")


# ---- switches ----------------------------------------------------------------------------

def test_simd_levels():
    """set_simd clamps to the CPU and returns the previous level; set_fast likewise."""
    assert _ext.set_simd(0) in LEVELS
    assert _ext.simd_level() == 0
    assert _ext.set_simd(2) == 0
    assert _ext.simd_level() == CPU_SIMD
    assert _ext.set_simd(1) == CPU_SIMD
    assert _ext.simd_level() == min(1, CPU_SIMD)
    for bad in (-1, 3):
        with pytest.raises(ValueError, match="SIMD level must be 0, 1 or 2"):
            _ext.set_simd(bad)
    _ext.set_fast(2)
    assert _ext.fast_enabled() == 2
    assert _ext.set_fast(0) == 2 and _ext.fast_enabled() == 0
    assert _ext.set_fast(1) == 0 and _ext.fast_enabled() == 1
    with pytest.raises(ValueError):
        _ext.set_fast(3)


def _child(env_extra, code):
    env = dict(os.environ)
    env.pop("SOFTFP8_FAST", None)
    env.pop("SOFTFP8_SIMD", None)
    env.update(env_extra)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(REPO), capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_env_switches():
    code = "from softfp8 import _ext; print(_ext.fast_enabled(), _ext.simd_level())"
    assert _child({"SOFTFP8_FAST": "0"}, code).split()[0] == "0"
    assert _child({"SOFTFP8_SIMD": "0"}, code).split() == ["1", "0"]
    assert _child({"SOFTFP8_SIMD": "1"}, code).split() == ["1", str(min(1, CPU_SIMD))]
    assert _child({"SOFTFP8_FAST": "2"}, code).split() == ["2", str(CPU_SIMD)]
    assert _child({}, code).split() == ["1", str(CPU_SIMD)]
    # with the fast paths off from the start, results are still the core's
    out = _child({"SOFTFP8_FAST": "0", "SOFTFP8_SIMD": "0"},
                 "import numpy as np, softfp8; from softfp8 import _ext\n"
                 "a = np.arange(256, dtype=np.uint8).view(softfp8.e4m3)\n"
                 "with np.errstate(all='ignore'): r = np.multiply(a, a[::-1])\n"
                 "print(_ext.fast_enabled(), _ext.simd_level(), r.view(np.uint8).sum())")
    with switches(0, 0), np.errstate(all="ignore"):
        a = np.arange(256, dtype=np.uint8).view(softfp8.e4m3)
        want = int(np.multiply(a, a[::-1]).view(np.uint8).sum())
    assert out.split() == ["0", "0", str(want)]


# ---- the table cache ---------------------------------------------------------------------

@pytest.fixture
def uncapped():
    """Whatever earlier tests in this process cached, the test's tables get built."""
    prev = _ext.set_fast_cache_cap(1 << 40)
    yield
    _ext.set_fast_cache_cap(prev)


def test_cache_stats_fields():
    st = _ext.fast_cache_stats()
    assert set(st) == {"tables", "bytes", "cap", "hits", "misses", "builds", "refused_over_cap", "evicted", "freed"}
    assert all(isinstance(v, int) and v >= 0 for v in st.values())
    assert st["builds"] == st["tables"] + st["evicted"]  # every table built is cached or was evicted
    assert st["freed"] <= st["evicted"]
    with pytest.raises(TypeError):
        _ext.set_fast_cache_cap(1.5)
    with pytest.raises(ValueError):
        _ext.set_fast_cache_cap(-1)


def test_cache_budget_zero_refuses_visibly():
    """With a budget of 0 every cached table is evicted and no new one is kept: each
    refusal is counted, and the calls are still exact."""
    fmt = softfp8.format(exp_bits=3, man_bits=4, bias=6, specials="none", name="e3m4b6_cap")
    c = np.arange(256, dtype=np.uint8).view(fmt.dtype)
    prev = _ext.set_fast_cache_cap(0)
    try:
        st = _ext.fast_cache_stats()
        assert st["tables"] == 0 and st["bytes"] == 0 and st["cap"] == 0
        with switches(2, LEVELS[0]), np.errstate(all="ignore"), softfp8.rounding("to_odd"):
            got = raw(np.sqrt(c))
        st2 = _ext.fast_cache_stats()
        assert st2["refused_over_cap"] > st["refused_over_cap"]
        assert st2["tables"] == 0 and st2["bytes"] == 0
    finally:
        assert _ext.set_fast_cache_cap(prev) == 0
    with switches(0, 0), np.errstate(all="ignore"), softfp8.rounding("to_odd"):
        want = raw(np.sqrt(c))
    assert np.array_equal(got, want)
    with switches(2, LEVELS[0]), np.errstate(all="ignore"), softfp8.rounding("to_odd"):
        b0 = _ext.fast_cache_stats()
        np.sqrt(c)
        b1 = _ext.fast_cache_stats()
        np.sqrt(c)
        b2 = _ext.fast_cache_stats()
    assert b1["builds"] == b0["builds"] + 1 and b1["tables"] == b0["tables"] + 1
    assert b2["hits"] > b1["hits"] and b2["builds"] == b1["builds"]


def test_cache_growth_many_tables(uncapped):
    """Over 1,400 distinct tables (the hash table grows twice): every one is found again
    afterwards (hits, no new builds), and the results are the core's."""
    fmts = [softfp8.format(exp_bits=e, man_bits=m, bias=b, name=f"grow_{e}{m}{b}")
            for e, m in ((2, 1), (3, 1), (2, 2), (3, 2)) for b in range(20, 80)]
    modes = ("nearest_even", "upward", "downward", "toward_zero", "nearest_away", "to_odd")
    calls = [(np.arange(1 << f.bits, dtype=np.uint8).view(f.dtype), m) for f in fmts for m in modes]
    assert len(calls) == 240 * 6

    def run():
        out = []
        for c, m in calls:
            with softfp8.rounding(m):
                out.append(raw(np.sqrt(c)))
        return out
    with switches(2, 0), np.errstate(all="ignore"), softfp8.saturation(True):
        s0 = _ext.fast_cache_stats()
        first = run()
        s1 = _ext.fast_cache_stats()
        again = run()
        s2 = _ext.fast_cache_stats()
    assert s1["tables"] - s0["tables"] == len(calls), (s0, s1)
    assert s2["builds"] == s1["builds"] and s2["hits"] - s1["hits"] == len(calls)
    with switches(0, 0), np.errstate(all="ignore"), softfp8.saturation(True):
        for k, (c, m) in enumerate(calls[::37]):
            with softfp8.rounding(m):
                assert np.array_equal(raw(np.sqrt(c)), first[k * 37])
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


def test_cache_concurrent_build_and_lookup(uncapped):
    """Four threads build and look up overlapping sets of tables at once (lock-free
    readers, one writer at a time, the slot array growing underneath): every result
    equals the core's, each table is built exactly once, every lookup is counted."""
    fmts = [softfp8.format(exp_bits=e, man_bits=m, bias=b, specials="fnuz", name=f"thr_{e}{m}{b}")
            for e, m in ((2, 2), (3, 2), (2, 3)) for b in range(30, 130)]
    c = {f.name: np.arange(1 << f.bits, dtype=np.uint8).view(f.dtype) for f in fmts}
    with switches(0, 0), np.errstate(all="ignore"), softfp8.rounding("downward"):
        want = {f.name: raw(np.sqrt(c[f.name])) for f in fmts}
    errors = []

    def work(k):
        try:
            for f in fmts[k::2] + fmts:  # the threads overlap on every format
                with np.errstate(all="ignore"), softfp8.rounding("downward"):
                    got = raw(np.sqrt(c[f.name]))
                if not np.array_equal(got, want[f.name]):
                    errors.append(f"{f.name}: fast != core")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    with switches(2, LEVELS[0]):
        st0 = _ext.fast_cache_stats()
        ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        st1 = _ext.fast_cache_stats()
    assert not errors, errors[:3]
    assert st1["builds"] - st0["builds"] == len(fmts), (st0, st1)  # one table per format
    lookups = (st1["hits"] + st1["misses"]) - (st0["hits"] + st0["misses"])
    assert lookups == sum(len(fmts[k::2]) + len(fmts) for k in range(4)), (st0, st1)


# ---- stochastic rounding keyed on the global element index -------------------------------

SR16_FORMATS = [softfp8.bfloat16, softfp8.float16, softfp8.uhp,
                softfp8.format(exp_bits=7, man_bits=8, bias=63, specials="fn", saturate=True, name="e7m8fn_sr")]


def _float_values(fmt, dtype, key, n=300):
    """values around fmt's range (to twice its largest finite value, below its
    subnormals), with specials."""
    g = rng_of("floats", fmt.name, key)
    codes = np.arange(1 << fmt.bits, dtype=np.uint32).astype(fmt.storage).view(fmt.dtype)
    with switches(0, 0), np.errstate(all="ignore"):
        vals = np.abs(codes.astype(np.float64))
    vals = vals[np.isfinite(vals) & (vals > 0)]
    lo, hi = np.log2(vals.min()) - 2, np.log2(vals.max()) + 1
    v = np.sign(g.random(n) - 0.5) * np.exp2(g.uniform(lo, hi, n))
    v[::17] = np.resize(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30]), v[::17].size)
    with np.errstate(all="ignore"):
        return v.astype(dtype)


def _sr16_calls(fmt, x, seed, nbits):
    """(label, fn() -> (codes, per-element flags)) of calls that must all equal the one
    flat softfp8.bits.from_float(x, seed=seed) of the contiguous 1-D x: the random word of
    flat element i is random_u32(seed, 0, i) whatever the layout or the splitting."""
    n = x.size
    sp = sfb._endpoint(x.dtype.type, "src")[0]
    dp, dstor = sfb._endpoint(fmt, "dst")[:2]
    env = sfb._env(fmt, "stochastic", False, "after", nbits)
    opts = {"rounding": "stochastic", "saturate": False, "tininess": "after", "seed": seed, "sr_bits": nbits}

    def pieces(cuts):
        # the driver called on consecutive pieces, each with its first element's index
        out, fl = np.empty(n, dstor), np.zeros(n, np.uint8)
        for a, b in zip(cuts[:-1], cuts[1:]):
            _ext.convert(sp, dp, env, (1, seed, 0, int(a)), None, x[a:b].view(f"u{x.itemsize}"), out[a:b], fl[a:b])
        return out, fl

    def bits_of(view):
        c, f = sfb.from_float(view, fmt, **opts)
        return c.reshape(-1), f.reshape(-1)

    xr = x[::-1].copy()
    xf = np.asfortranarray(x.reshape(50, -1))
    return {
        "one call": lambda: bits_of(x),
        "pieces 1/15/17/255/256/1000": lambda: pieces([0, 1, 16, 33, 288, 544, 1544, n]),
        "pieces of 16": lambda: pieces(list(range(0, n, 16)) + [n]),
        "pieces at odd offsets": lambda: pieces([0, 7, 300, 301, 2003, n - 5, n]),
        "reversed view": lambda: bits_of(xr[::-1]),
        "fortran 2-D": lambda: bits_of(xf),
        "strided view": lambda: bits_of(np.repeat(x, 3)[::3]),
    }


@pytest.mark.parametrize("fmt", SR16_FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_stochastic16_index_offsets(src, fmt):
    """Split calls (each piece given its first index, pieces not multiples of the SIMD
    blocks), reversed, strided and Fortran-ordered inputs give the codes and per-element
    flags of one flat call, at every SIMD level and with the fast paths off."""
    x = np.ascontiguousarray(rng_of("sr16-offsets", fmt.name).permutation(
        np.concatenate([_float_values(fmt, src, "sr-offsets")] * 10)))
    assert x.size == 3000
    runs = [(0, 0)] + [(2, s) for s in LEVELS] + [(1, LEVELS[0])]
    n = 0
    for seed, nbits in ((5, 32), (2**64 - 3, 3)):
        with switches(0, 0):
            want = _sr16_calls(fmt, x, seed, nbits)["one call"]()
        for level, simd in runs:
            with switches(level, simd), np.errstate(all="ignore"):
                for lab, fn in _sr16_calls(fmt, x, seed, nbits).items():
                    for part, a, b in zip(("codes", "flags"), fn(), want):
                        assert np.array_equal(a, b), (f"{np.dtype(src)} -> {fmt.name} seed={seed} sr_bits={nbits} "
                                                      f"fast={level} simd={simd} {lab}: {part} differ at "
                                                      f"{np.nonzero(a != b)[0][:5]}")
                    n += 1
    assert n == 2 * len(runs) * 7


def test_stochastic16_dask_chunkings():
    """softfp8.dask.astype into bfloat16 / float16 under several chunkings and both
    schedulers: the one-call softfp8.bits.from_float codes, at every SIMD level."""
    da = pytest.importorskip("dask.array")
    sd = pytest.importorskip("softfp8.dask")
    n = 0
    for fmt in (softfp8.bfloat16, softfp8.float16):
        x = _float_values(fmt, np.float32, "sr-dask").reshape(20, 15)
        want, _ = sfb.from_float(x, fmt, rounding="stochastic", seed=21)
        for simd in LEVELS:
            with switches(2, simd), np.errstate(all="ignore"):
                for ch, sched in (((20, 15), "sync"), ((7, 15), "threads"), ((20, 4), "sync"), ((3, 7), "threads")):
                    got = sd.astype(da.from_array(x, chunks=ch), fmt, rounding="stochastic",
                                    seed=21).compute(scheduler=sched)
                    assert np.array_equal(raw(got), raw(want)), f"{fmt.name} chunks={ch} {sched} simd={simd}"
                    n += 1
    assert n == 2 * len(LEVELS) * 4


# ---- stochastic kernels really draw (proportions from the exact distances) ----------------

def test_stochastic_convert_rounds_both_ways():
    """A bfloat16 value between two E4M3 neighbours goes to both, in proportion to its
    distance (1.0625 lies half way from 1.0 to 1.125; 1.09375 three quarters)."""
    for v, seed, want in ((1.0625, 5, 0.5), (1.09375, 6, 0.75)):
        x = np.full(200_000, v, dtype=np.float32).astype(softfp8.bfloat16.dtype)
        with softfp8.rounding("stochastic", seed=seed):
            y = x.astype(softfp8.e4m3.dtype).astype(np.float64)
        assert set(np.unique(y)) == {1.0, 1.125}
        assert abs(float(np.mean(y == 1.125)) - want) < 0.01


def test_stochastic_wide_rounds_both_ways():
    """exp of a bfloat16 value whose exact exponential lies between two bfloat16
    neighbours gives both, in proportion to its distance (the fraction from the lower
    neighbour computed with mpmath), at every SIMD level."""
    import mpmath
    x = np.full(100_003, 0.5, dtype=np.float32).astype(softfp8.bfloat16.dtype)
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(0.5))
        lo = mpmath.mpf(1.6484375)  # bfloat16 neighbours of e^0.5 = 1.6487...: ulp 2^-7
        frac = float((e - lo) / mpmath.mpf(2) ** -7)
    for simd in LEVELS:
        with switches(2, simd), softfp8.rounding("stochastic", seed=7):
            y = np.exp(x).astype(np.float64)
        assert set(np.unique(y)) == {1.6484375, 1.65625}, simd
        assert abs(float(np.mean(y == 1.65625)) - frac) < 0.01, simd
