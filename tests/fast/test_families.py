"""The fast-path families table (softfp8/_core/fast/families.def) as Python sees it:
_ext.fast_families(), and the per-family, per-level counters of the array driver's
runs (_ext.fast_family_counts / reset_fast_family_counts) that the harness uses to
show a family ran.  Expected values: the contract between the issue-21 helpers (the
family names) and the levels each family has kernels for, written out here; the
counts from calls whose number is known.  Cost: well under a second."""
import numpy as np
import pytest

import softfp8
from softfp8 import _ext

from tests.harness.machinery import LEVELS as SIMD_LEVELS, switches

# name -> the SIMD levels with a kernel of the family's own (0 portable C, 1 AVX2, 2 AVX-512)
FAMILIES = {
    "binary8": (0, 1, 2), "unary": (0,), "fma8": (0, 1, 2), "sum8": (0,), "arith16": (0, 1, 2),
    "order16": (0,), "convert": (0, 2), "from_float8": (0, 1, 2), "cast16": (0, 1, 2),
    "sr_arith8": (0, 1, 2), "sr_arith16": (0, 1, 2), "sr_unary8": (0, 1, 2), "sr_wide": (0, 1, 2),
    "sr_fma": (0, 2), "sr_convert8": (0, 1, 2), "sr_from_float8": (0, 1, 2), "sr_cast16": (0, 1, 2),
    "blockq": (0, 1, 2),
}


def test_table():
    fams = _ext.fast_families()
    assert [f["name"] for f in fams].count("binary8") == 1
    assert {f["name"]: f["levels"] for f in fams} == FAMILIES
    for f in fams:
        assert isinstance(f["what"], str) and f["what"] and isinstance(f["space"], str) and f["space"]
    # the stochastic families come first: the driver tries them before the deterministic ones
    names = [f["name"] for f in fams]
    assert max(names.index(n) for n in names if n.startswith("sr_")) < min(
        names.index(n) for n in names if not n.startswith("sr_"))


def _kernel_level(name, simd):
    """the level of the kernel family `name` runs at SIMD level simd: its own, else the next lower one's"""
    return max(lvl for lvl in FAMILIES[name] if lvl <= simd)


def _ran(before, after):
    return {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}


@pytest.mark.parametrize("simd", SIMD_LEVELS)
def test_counts_per_call_and_level(simd):
    n = 5000  # repays the 65,536-entry tables even in the default (length-gated) mode
    g = np.random.default_rng(7)
    a = g.integers(0, 256, n, dtype=np.uint8).view(softfp8.e4m3)
    b = g.integers(0, 256, n, dtype=np.uint8).view(softfp8.e4m3)
    h = g.standard_normal(n).astype(softfp8.float16)
    calls = [
        ("binary8", lambda: np.add(a, b)),
        ("convert", lambda: a.astype(np.float32)),
        ("order16", lambda: np.maximum(h, h)),
        ("arith16", lambda: np.multiply(h, h)),
        ("from_float8", lambda: np.ones(n, np.float64).astype(softfp8.e5m2)),
    ]
    with switches(2, simd), np.errstate(all="ignore"):
        for name, fn in calls:
            fn()  # tables built
            _ext.reset_fast_family_counts()
            assert not any(_ext.fast_family_counts().values())
            before = _ext.fast_family_counts()
            for _ in range(3):
                fn()
            got = _ran(before, _ext.fast_family_counts())
            assert got == {(name, _kernel_level(name, simd)): 3}, (name, simd, got)
        # a stochastic call: the stochastic family, not the deterministic one
        _ext.reset_fast_family_counts()
        with softfp8.rounding("stochastic", seed=3):
            np.multiply(a, b)
        assert _ran({}, _ext.fast_family_counts()) == {("sr_arith8", _kernel_level("sr_arith8", simd)): 1}
    # fast paths off: no family runs
    with switches(0, simd), np.errstate(all="ignore"):
        _ext.reset_fast_family_counts()
        np.add(a, b)
        assert not any(_ext.fast_family_counts().values())


def test_fast_kernel_runs_a_named_family():
    buf = np.arange(64, dtype=np.uint8)
    env = (0, 0, 0, 32)
    _ext.reset_fast_family_counts()
    with switches(2, SIMD_LEVELS[0]):
        r = _ext.fast_kernel("unary", softfp8.e4m3.params, env, buf, 16, (32, 1), (0, 1), op="neg")
        assert r is not None
        # a family that does not take the call declines
        assert _ext.fast_kernel("arith16", softfp8.e4m3.params, env, buf, 16, (32, 1), (0, 1), b=(16, 1),
                                op="add") is None
    assert buf[32:48].tolist() == [c ^ 0x80 for c in range(16)]
    assert _ran({}, _ext.fast_family_counts()) == {("unary", 0): 1}
