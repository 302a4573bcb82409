"""Bounded per-format caches (issue 13 item 5, softfp8/_cache.py) and descriptor value
semantics.

Descriptors of one format compare equal and hash alike however often they are re-created
(NumPy's descriptor equality is "no" cast safety: descriptor.c arraydescr_richcompare ->
PyArray_EquivTypes); an array keeps working after its descriptor left every cache; a
process touching 10,000 formats stays bounded (resident memory measured in a subprocess).
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import softfp8
from softfp8 import _cache, _dtypes


@pytest.fixture
def tiny_cache():
    """Per-format caches of 4 entries for one test (evicting at once); restored after."""
    old = _cache.set_size(4)
    yield
    _cache.set_size(old)


def _custom(i):
    return softfp8.format(exp_bits=5, man_bits=2, bias=15, name=f"churn{i}")


def _churn(n=20):
    """Touch n other formats: with tiny_cache, every earlier entry is evicted."""
    for i in range(n):
        d = _custom(500 + i).dtype
        np.finfo(d)
        d.type(1.0)
        np.ones(2, d).astype(np.float32)
        repr(np.ones(2, d))


FORMATS = {
    "custom": lambda: softfp8.format(exp_bits=5, man_bits=4, bias=15),
    "named": lambda: softfp8.format(exp_bits=4, man_bits=3, bias=7, name="mine"),
    "tesla": lambda: softfp8.cfloat8_143(bias=7),
    "tesla_ieee": lambda: softfp8.shp(bias=3, subnormals="ieee"),
    "preset": lambda: softfp8.e4m3,
}


@pytest.mark.parametrize("which", FORMATS)
def test_recreated_descriptor_is_equal(which, tiny_cache):
    make = FORMATS[which]
    d1 = make().dtype
    _churn()
    if which != "preset":
        assert make() not in _dtypes._DESCRS       # really evicted
    d2 = make().dtype
    if which != "preset":
        assert d2 is not d1
    else:
        assert d2 is d1                             # presets are never evicted
    assert d1 == d2 and d2 == d1 and not (d1 != d2)
    assert hash(d1) == hash(d2)
    assert {d1: "x"}[d2] == "x"
    assert np.can_cast(d1, d2, "no") and np.can_cast(d2, d1, "no")
    assert np.result_type(d1, d2) == d1
    assert d1 <= d2 and d1 >= d2 and not d1 < d2 and not d1 > d2
    # pickling gives an equal descriptor (through the cache, wherever d1 went)
    assert pickle.loads(pickle.dumps(d1)) == d1
    assert hash(pickle.loads(pickle.dumps(d1))) == hash(d1)
    # arrays of the two descriptors mix without a cast
    a = np.array([1.0, 2.0, -0.5]).astype(d1)
    b = np.array([0.5, 0.25, 4.0]).astype(d2)
    s = a + b
    assert s.dtype == d1
    np.testing.assert_array_equal(s.astype(np.float64), [1.5, 2.25, 3.5])
    assert np.concatenate([a, b]).dtype == d1
    # a copy through the other descriptor keeps the codes
    c = a.astype(d2, casting="no")
    assert c.view(c.dtype.format.storage).tolist() == a.view(a.dtype.format.storage).tolist()


def test_equality_follows_the_format_not_the_object():
    base = softfp8.format(exp_bits=5, man_bits=4, bias=15)
    others = [softfp8.format(exp_bits=5, man_bits=4, bias=14),
              softfp8.format(exp_bits=5, man_bits=4, bias=15, name="renamed"),
              softfp8.format(exp_bits=5, man_bits=4, bias=15, saturate=True),
              softfp8.format(exp_bits=5, man_bits=4, bias=15, subnormals="flush")]
    for o in others:
        assert base.dtype != o.dtype and not (base.dtype == o.dtype), o
        assert not np.can_cast(base.dtype, o.dtype, "no")
    assert softfp8.e4m3.dtype != softfp8.e5m2.dtype
    assert softfp8.cfloat8_143(bias=20).dtype != softfp8.cfloat8_143(bias=21).dtype
    for npdt in (np.float16, np.float32, np.float64, np.uint8):
        assert base.dtype != np.dtype(npdt) and np.dtype(npdt) != base.dtype
    assert softfp8.float16.dtype != np.dtype(np.float16)   # same values, other DType
    assert base.dtype != "float32" and base.dtype != object()


def test_array_outlives_its_cache_entries(tiny_cache):
    fmt = softfp8.format(exp_bits=4, man_bits=3, bias=9, name="survivor")
    vals = np.array([0.0, -0.0, 1.5, -2.75, 3.0, 0.125, 0.125])   # values of the format (sum 2)
    a = vals.astype(fmt.dtype)
    _churn()
    assert fmt not in _dtypes._DESCRS and fmt not in _dtypes._FINFO and fmt not in _dtypes._TYPE_OF
    # every path of an array whose descriptor left the caches, against exact float64 values
    with np.errstate(all="raise"):
        np.testing.assert_array_equal((a + a).astype(np.float64), 2 * vals)
        np.testing.assert_array_equal(np.signbit((-a).astype(np.float64)), ~np.signbit(vals))
        np.testing.assert_array_equal(a.astype(np.float32), vals.astype(np.float32))
        assert float(a.sum()) == vals.sum()
    info = np.finfo(a.dtype)
    assert info.dtype == a.dtype and float(info.max) == fmt.max and info.nmant == 3
    s = a.dtype.type(1.5)
    assert s.dtype == a.dtype and float(s) == 1.5
    assert "1.5" in repr(a) and str(a[2]) == "1.5"
    back = pickle.loads(pickle.dumps(a))
    assert back.dtype == a.dtype and back.tobytes() == a.tobytes()
    b = np.array([2.0, 0.5]).astype(softfp8.format(exp_bits=4, man_bits=3, bias=9,
                                                   name="survivor").dtype)
    np.testing.assert_array_equal((a[2:4] * b).astype(np.float64), vals[2:4] * [2.0, 0.5])


def test_caches_stay_within_their_bound(tiny_cache):
    _churn(30)
    repr(np.ones(3, softfp8.e5m2.dtype))
    stats = _cache.stats()
    assert set(stats) >= {"descriptors", "np.finfo", "scalar types", "containment",
                          "shortest strings"}
    for name, (n, bound, _evicted) in stats.items():
        assert n <= bound, name
    assert stats["descriptors"][1] == 4 and stats["descriptors"][2] > 0
    assert stats["shortest strings"][1] == 4 * 16


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-3, ValueError), (2 ** 41, ValueError),
                                      (2.5, TypeError), ("100", TypeError), (None, TypeError),
                                      (True, TypeError)])
def test_set_size_refuses_bad_values(bad, exc):
    old = _cache.size()
    with pytest.raises(exc, match=repr(bad).replace("(", r"\(").replace(")", r"\)")):
        _cache.set_size(bad)
    assert _cache.size() == old


def _run(code, **env):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=300, env={**os.environ, **env},
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    return out


def test_environment_sets_the_size():
    out = _run("from softfp8 import _cache; print(_cache.size())", SOFTFP8_FORMAT_CACHE="77")
    assert out.returncode == 0 and out.stdout.strip() == "77", out.stderr[-2000:]
    out = _run("import softfp8", SOFTFP8_FORMAT_CACHE="lots")
    assert out.returncode != 0 and "SOFTFP8_FORMAT_CACHE" in out.stderr and "'lots'" in out.stderr


FORMATS_TOUCHED = 10_000

MEMORY = """
import gc, resource, numpy as np, softfp8
from softfp8 import _cache

def rss_mib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20

def use(i):
    d = softfp8.format(exp_bits=5, man_bits=2, bias=i - 20000).dtype
    a = np.arange(4, dtype=np.float64).astype(d)
    b = a + a
    repr(b); str(b[1]); np.finfo(d); d.type(1.0); np.can_cast(d, np.float32); b.sum()

with np.errstate(all="ignore"):
    gc.collect()
    r0 = rss_mib()
    marks = []
    for i in range({N}):
        use(i)
        if (i + 1) % 1000 == 0:
            gc.collect()      # evicted per-format scalar types sit in reference cycles
            if i + 1 in (5000, {N}):
                marks.append(rss_mib())
print(r0, *marks, max(n / bound for n, bound, _ in _cache.stats().values()))
"""


@pytest.mark.skipif(bool(os.environ.get("SOFTFP8_SANITIZED")),
                    reason="memory is measured without the sanitizers' allocator")
def test_ten_thousand_formats_stay_bounded():
    """10,000 distinct formats, each used for arrays, arithmetic, printing, np.finfo,
    scalars and casts: after 5,000 the per-format caches are full (default size 2,048)
    and the table cache at its 32 MiB budget (reached near 4,000), so the next 5,000
    formats add (almost) nothing; the whole run grows by about 42 MiB.  Unbounded (before
    issue 13) the Python caches alone grew by about 2.7 KiB per format, 13 MiB over those
    5,000."""
    out = _run(MEMORY.replace("{N}", str(FORMATS_TOUCHED)))
    assert out.returncode == 0, out.stderr[-3000:]
    r0, r5k, rend, fill = map(float, out.stdout.split())
    assert fill <= 1.0, out.stdout
    assert rend - r5k < 3.0, f"resident memory grew {rend - r5k:.1f} MiB over the last 5,000 formats"
    assert rend - r0 < 64.0, f"resident memory grew {rend - r0:.1f} MiB over 10,000 formats"


def test_containment_ignores_the_isa_context():
    """Whether every value of one dtype fits another is computed once per process and
    cached (_dtypes._contains); computed first inside softfp8.saturation(True) (infinities
    read as the largest value) or softfp8.isa("x86", daz=True) (subnormals read as zeros),
    it must still be the exact answer (it was False for float16 -> float32 when a harness
    cast under saturation computed it first, and then softfp8.matmul's default out_dtype
    was float16 for the rest of the process)."""
    from softfp8 import _dtypes
    from softfp8._dtypes import dtype_of
    import softfp8._formats as F
    sf16 = dtype_of(F.float16)
    key = (sf16, np.dtype(np.float32))
    _dtypes._CONTAINS.clear()                      # computed afresh below, inside the contexts
    with softfp8.isa("x86", daz=True), softfp8.saturation(True), softfp8.tininess("before"), \
            softfp8.rounding("toward_zero"):
        assert _dtypes._contains(*key)
        assert not _dtypes._contains(key[1], key[0])
