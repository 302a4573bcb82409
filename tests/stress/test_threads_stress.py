"""Thread stress: six threads, each in its own rounding mode, saturation and flag
context, run ufuncs, casts, reductions and softfp8.bits calls on 8- and 16-bit formats
while a seventh thread keeps toggling the fast-path and SIMD switches and the table
budget (forcing evictions).  Every result must be bit-identical to a serial run with
the exact core, and every thread's sticky flags exactly its own; asyncio tasks
likewise keep their flags apart."""

import asyncio
import threading

import numpy as np

import softfp8
from softfp8 import _ext, bits

FMTS = [softfp8.e4m3, softfp8.e5m2, softfp8.bfloat16, softfp8.float16, softfp8.cfloat8_152(bias=20)]
MODES = ["nearest_even", "upward", "downward", "toward_zero", "to_odd", "stochastic"]
ROUNDS = 6


def workload(k):
    """The calls of worker k: a list of (fmt index, kind, operands)."""
    g = np.random.default_rng(100 + k)
    out = []
    for r in range(ROUNDS):
        for i, f in enumerate(FMTS):
            st = np.uint8 if f.bits <= 8 else np.uint16
            n = 5000 if f.bits <= 8 else 3000
            a = g.integers(0, 1 << f.bits, n).astype(st)
            b = g.integers(0, 1 << f.bits, n).astype(st)
            x = (g.standard_normal(n) * 10.0 ** g.integers(-3, 4)).astype(np.float32)
            if k % 3 == 2:  # exact work only: these threads must end with no flag at all
                a[:], b[:], x[:] = 0, 0, 0
            out.append((i, a, b, x))
    return out


def compute(k, calls):
    """Run worker k's calls in its own context; return (results, flags)."""
    mode = MODES[k % len(MODES)]
    res = []
    with softfp8.rounding(mode, seed=k if mode == "stochastic" else None), softfp8.saturation(k % 2 == 1), \
            np.errstate(all="ignore"), softfp8.collect_flags() as fl:
        for i, a, b, x in calls:
            f = FMTS[i]
            va, vb = a.view(f.dtype), b.view(f.dtype)
            res.append(np.add(va, vb).view(a.dtype).copy())
            res.append(np.multiply(va, vb).view(a.dtype).copy())
            res.append(x.astype(f.dtype).view(a.dtype).copy())
            res.append(np.sqrt(va).view(a.dtype).copy())
            res.append(np.add.reduce(va[:200], keepdims=True).view(a.dtype).copy())
            res.append(bits.sub(f, a, b, rounding=mode, seed=7 if mode == "stochastic" else None)[0])
    return res, int(fl.flags)


def test_threads_in_their_own_contexts_with_switches_toggling():
    calls = [workload(k) for k in range(6)]
    prev_fast = _ext.set_fast(0)
    try:
        serial = [compute(k, calls[k]) for k in range(6)]
    finally:
        _ext.set_fast(prev_fast)
    assert [s[1] for s in serial][2::3] == [0, 0]  # flag-free threads, for leaks to show
    assert all(s[1] for s in serial[:2] + serial[3:5])

    stop = threading.Event()
    toggles = []

    def toggler():
        g = np.random.default_rng(9)
        levels = (0, 2) if _ext.set_simd(_ext.set_simd(2)) == 2 else (0,)
        while not stop.is_set():
            _ext.set_fast(int(g.integers(0, 3)))
            _ext.set_simd(int(levels[g.integers(len(levels))]))
            if g.random() < 0.2:
                _ext.set_fast_cache_cap(int(g.choice([1 << 18, 1 << 25])))
            toggles.append(1)
            stop.wait(0.002)

    got = [None] * 6
    errors = []

    def worker(k):
        try:
            got[k] = compute(k, calls[k])
        except Exception as e:  # pragma: no cover - reported by the assert below
            errors.append(repr(e))

    prev = (_ext.set_fast(1), _ext.set_simd(_ext.set_simd(0)), _ext.set_fast_cache_cap(1 << 25))
    t = threading.Thread(target=toggler)
    ws = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    t.start()
    try:
        for w in ws:
            w.start()
        for w in ws:
            w.join()
    finally:
        stop.set()
        t.join()
        _ext.set_fast(prev[0])
        _ext.set_simd(prev[1])
        _ext.set_fast_cache_cap(prev[2])
    assert not errors, errors
    assert len(toggles) > 5
    for k in range(6):
        r, fl = got[k]
        sr, sfl = serial[k]
        assert fl == sfl, (k, fl, sfl)
        assert len(r) == len(sr) == ROUNDS * len(FMTS) * 6
        for j, (u, v) in enumerate(zip(r, sr)):
            assert np.array_equal(u, v), (k, j)


def test_asyncio_tasks_keep_their_flags_and_modes():
    f = softfp8.e4m3
    big = np.full(64, 0x7E, np.uint8).view(f.dtype)      # 448: doubling overflows
    tiny = np.full(64, 0x01, np.uint8).view(f.dtype)     # smallest subnormal: halving underflows

    async def task(kind, mode):
        with softfp8.rounding(mode), softfp8.collect_flags() as fl, np.errstate(all="ignore"):
            out = []
            for _ in range(20):
                if kind == "over":
                    out.append(np.add(big, big).view(np.uint8).copy())
                else:
                    out.append(np.multiply(tiny, np.full(64, 0x30, np.uint8).view(f.dtype)).view(np.uint8).copy())
                await asyncio.sleep(0)
        return out, fl.flags

    async def main():
        return await asyncio.gather(task("over", "toward_zero"), task("under", "upward"),
                                    task("over", "nearest_even"))

    (o1, f1), (o2, f2), (o3, f3) = asyncio.run(main())
    OV, UN = softfp8.Flags.OVERFLOW, softfp8.Flags.UNDERFLOW
    assert OV in f1 and UN not in f1 and OV in f3 and UN not in f3
    assert UN in f2 and OV not in f2
    assert all(np.all(o == 0x7E) for o in o1)   # toward zero: max finite
    assert all(np.all(o == 0x7F) for o in o3)   # nearest: NaN (E4M3 has no infinity)
    assert all(np.all(o == 0x01) for o in o2)   # 2^-9 * 0.5 rounded upward: the smallest subnormal
