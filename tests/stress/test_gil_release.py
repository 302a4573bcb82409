"""Every long softfp8 loop releases the GIL: a second Python thread keeps running
while one thread is inside a long call.

The second thread counts iterations of a pure-Python loop and notes the time of
each; the iterations that fall inside the window of the long call (2 ms margins)
can only run if the calling thread released the GIL, since the interpreter's own
switching is set to 0.2 s while measuring.  With the GIL held for the whole call
(a loop that needs the Python API, or NumPy not releasing it) that count is zero,
whatever the machine's load: the check cannot pass by chance.

Paths: the exact core (fast paths off), the 8-bit tables and the 16-bit kernels
(fast paths on), casts both ways, the exact sum, sort (order.c), matmul, and a
correctly rounded elementary function.  Results are also compared with the same
call made while no second thread runs.
"""
import os
import sys
import threading
import time

import numpy as np
import pytest

import softfp8
from softfp8 import _ext

# the cases set the fast-path level themselves: the run with SOFTFP8_FAST=0 would
# repeat the same calls; the sanitizer job (ASan's allocator, PYTHONMALLOC=malloc)
# checks memory, not timing
pytestmark = [
    pytest.mark.skipif(os.environ.get("SOFTFP8_FAST") == "0",
                       reason="the cases choose their fast-path level explicitly"),
    pytest.mark.skipif(bool(os.environ.get("SOFTFP8_SANITIZED")),
                       reason="GIL timing is measured without the sanitizers' allocator"),
]

MARGIN = 0.002
# a long switch interval while measuring: the interpreter then never passes the
# GIL to the other thread by itself during a call, only a loop that releases it
SWITCH = 0.2


def _background_progress(call):
    """(result, iterations of the other thread inside the call's window, window s)."""
    stamps = []
    stop = threading.Event()
    started = threading.Event()

    def spin():
        started.set()
        append, now = stamps.append, time.perf_counter
        while not stop.is_set():
            append(now())

    old = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH)
    try:
        t = threading.Thread(target=spin)
        t.start()
        started.wait()
        time.sleep(0.01)
        t0 = time.perf_counter()
        result = call()
        t1 = time.perf_counter()
        stop.set()
        t.join()
    finally:
        sys.setswitchinterval(old)
    inside = sum(1 for s in stamps if t0 + MARGIN < s < t1 - MARGIN)
    return result, inside, t1 - t0


def test_a_call_holding_the_gil_is_detected():
    """The criterion itself: C calls that keep the GIL (the builtin sum of a list of
    floats, bytes repetition) leave the other thread no iteration inside the window.
    (A NumPy object-dtype loop is no such control: it lets the other thread run.)"""
    values = np.random.default_rng(1).random(6_000_000).tolist()
    for call in (lambda: sum(values), lambda: b"ab" * 100_000_000):
        _, inside, window = _background_progress(call)
        assert window > 3 * MARGIN
        assert inside == 0


def _raw(x):
    return np.ascontiguousarray(x).view(np.uint8)


def _cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(3_000_000).astype(np.float32)
    y = rng.standard_normal(3_000_000).astype(np.float32)
    x4 = np.concatenate([x] * 4)
    e4a, e4b = (v[:8000, None].astype(softfp8.e4m3.dtype) for v in (x, y))
    bfa, bfb = x.astype(softfp8.bfloat16.dtype), y.astype(softfp8.bfloat16.dtype)
    bf4a, bf4b = np.concatenate([bfa] * 4), np.concatenate([bfb] * 4)
    bf16a, bf16b = np.concatenate([bf4a] * 3), np.concatenate([bf4b] * 3)
    sh = softfp8.shp(bias=15)
    sha, shb = x.astype(sh.dtype), y.astype(sh.dtype)
    m = rng.standard_normal((800, 800)).astype(np.float32).astype(softfp8.e4m3.dtype)
    m2 = rng.standard_normal((120, 120)).astype(np.float32).astype(softfp8.e5m2.dtype)
    mb = rng.standard_normal((700, 700)).astype(np.float32).astype(softfp8.bfloat16.dtype)
    return {
        # fast-path level, call
        "core add (fast off)": (0, lambda: np.add(bfa, bfb)),
        "core SHP multiply (fast off)": (0, lambda: np.multiply(sha, shb)),
        "8-bit table add": (1, lambda: np.add(e4a, e4b.T)),   # 8000 x 8000
        "16-bit add kernel": (1, lambda: np.add(bf16a, bf16b)),   # fast: a longer array
        "cast float32 -> e4m3": (1, lambda: np.broadcast_to(x4, (2, x4.size)).astype(softfp8.e4m3.dtype)),
        "cast bfloat16 -> float64": (1, lambda: bf4a.astype(np.float64)),
        "exact sum": (1, lambda: bf4a.sum()),
        "sort": (1, lambda: np.sort(bf4a)),
        "matmul e4m3 (binary64 BLAS)": (1, lambda: softfp8.matmul(m, m)),
        "matmul e5m2 (exact accumulator, fast off)": (0, lambda: softfp8.matmul(m2, m2)),
        "matmul bfloat16 (binary64 BLAS, certificate / Ziv)": (1, lambda: softfp8.matmul(mb, mb)),
        "exp (core)": (0, lambda: np.exp(bfa[:400_000])),
    }


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_thread_runs_during_call(name):
    level, call = CASES[name]
    prev = _ext.set_fast(level)
    try:
        call()  # build any table first: the measured call is the loop itself
        t0 = time.perf_counter()
        expected = call()
        solo = time.perf_counter() - t0
        assert solo > 3 * MARGIN, f"{name}: the call took {solo * 1e3:.1f} ms, too short to observe"
        best = None
        for _ in range(3):  # a loaded machine may starve the other thread once
            got, inside, window = _background_progress(call)
            assert np.array_equal(_raw(got), _raw(expected)), name
            best = max(best or 0, inside)
            if inside > 0:
                break
        assert best > 0, f"{name}: no progress of the other thread during a {window:.2f} s call (GIL held)"
    finally:
        _ext.set_fast(prev)
