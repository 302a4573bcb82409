"""Leak test: 10^6 mixed calls (ufuncs, casts, softfp8.bits, context entries, scalar
operations, format creation, matmul, flag collection) in a fresh process; resident
memory may grow by less than 1 MiB after warm-up, and the reference counts of the
dtypes and formats involved must not drift."""

import os
import subprocess
import sys
import textwrap

import pytest

CALLS = 1_000_000

CODE = textwrap.dedent("""
    import gc, resource, sys, numpy as np, softfp8
    from softfp8 import bits

    def rss_kib():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize() // 1024

    fmts = [softfp8.e4m3, softfp8.e5m2, softfp8.bfloat16, softfp8.float16, softfp8.uhp,
            softfp8.cfloat8_143(bias=11), softfp8.shp(bias=40)]
    a = [np.arange(16, dtype=np.uint8 if f.bits <= 8 else np.uint16).view(f.dtype) for f in fmts]
    x32 = np.linspace(-3, 3, 16, dtype=np.float32)
    codes = np.arange(16, dtype=np.uint8)
    modes = ("nearest_even", "upward", "stochastic", "to_odd")

    def step(i):
        k = i % len(fmts)
        f, v = fmts[k], a[k]
        j = i % 12
        if j == 0:
            np.add(v, v)
        elif j == 1:
            v.astype(np.float32)
        elif j == 2:
            x32.astype(f.dtype)
        elif j == 3:
            bits.mul(softfp8.e4m3, codes, codes)
        elif j == 4:
            with softfp8.rounding(modes[i % 4], seed=i if i % 4 == 2 else None):
                np.multiply(v, v)
        elif j == 5:
            s = v[3]
            (s + s, s * 2, float(s), repr(s))
        elif j == 6:
            softfp8.format(exp_bits=4, man_bits=3, bias=i % 50, name=f"leak{i % 50}")
        elif j == 7:
            with softfp8.collect_flags() as fl:
                np.sqrt(v)
            fl.flags
        elif j == 8:
            softfp8.matmul(v[:4].reshape(2, 2), v[4:8].reshape(2, 2))
        elif j == 9:
            np.add.reduce(v)
        elif j == 10:
            with softfp8.saturation(True):
                v.astype(softfp8.e4m3.dtype)
        else:
            bits.convert(codes, softfp8.e4m3, softfp8.e5m2)

    with np.errstate(all="ignore"):
        for i in range(100_000):  # warm-up: caches, tables, interned objects
            step(i)
        gc.collect()
        refs0 = [sys.getrefcount(f) for f in fmts] + [sys.getrefcount(f.dtype) for f in fmts]
        r0 = rss_kib()
        for i in range({calls}):
            step(i)
        gc.collect()
        refs1 = [sys.getrefcount(f) for f in fmts] + [sys.getrefcount(f.dtype) for f in fmts]
        r1 = rss_kib()
    print(r1 - r0, refs0 == refs1, refs0, refs1)
    sys.stderr.write(f"leak test: {{calls}} calls, resident memory {{r0}} -> {{r1}} KiB\\n")
""").replace("{calls}", str(CALLS))


@pytest.mark.skipif(bool(os.environ.get("SOFTFP8_SANITIZED")),
                    reason="memory is measured without the sanitizers' allocator")
def test_a_million_mixed_calls_do_not_leak():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    grow, same, refs0, refs1 = out.stdout.split(" ", 3)
    assert same == "True", (refs0, refs1)
    assert int(grow) < 1024, f"resident memory grew by {grow} KiB over {CALLS} calls"
