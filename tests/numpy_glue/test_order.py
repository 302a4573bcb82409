"""Ordering of softfp8 arrays: np.sort / np.argsort (every kind), np.argmax /
np.argmin, np.searchsorted, np.unique, against the exact reference model.

The reference (tests/models/rational.py) decodes every code to an exact value; the
expected order is by value with NaN last, equal values (+0 / -0, subnormals a
flushing format reads as zero, NaNs among themselves) keeping their input order for
a stable sort.  NumPy's float16 rule for argmax/argmin: the first NaN wins, else the
first extreme value.

Formats: every preset, Tesla families at several biases, and custom formats covering
each special-value scheme, unsigned formats, flushing formats and widths 3..16 (codes
with bits above the width must order by their low bits and move unchanged).
"""
import bisect

import numpy as np
import pytest

import softfp8
from ..models import rational as ref

KINDS = ("quicksort", "heapsort", "stable")

FORMATS = list(softfp8.presets().values())
FORMATS += [fam(bias=b) for fam in (softfp8.cfloat8_143, softfp8.cfloat8_152) for b in (0, 31, 63)]
FORMATS += [softfp8.shp(bias=5)]
FORMATS += [
    softfp8.format(exp_bits=4, man_bits=3, bias=7, subnormals="flush"),
    softfp8.format(exp_bits=5, man_bits=2, bias=15, specials="fnuz", subnormals="flush"),
    softfp8.format(exp_bits=3, man_bits=4, bias=3, specials="none"),
    softfp8.format(exp_bits=4, man_bits=4, bias=7, signed=False),
    softfp8.format(exp_bits=5, man_bits=3, bias=15, signed=False, specials="fn"),
    softfp8.format(exp_bits=2, man_bits=0, bias=1, specials="none"),
    softfp8.format(exp_bits=3, man_bits=2, bias=3, specials="fnuz"),
    softfp8.format(exp_bits=6, man_bits=5, bias=31, subnormals="flush"),
    softfp8.format(exp_bits=5, man_bits=10, bias=15, specials="fn", subnormals="flush"),
    softfp8.format(exp_bits=8, man_bits=7, bias=127, signed=False),
]
IDS = [f.name for f in FORMATS]


def _ref_fmt(fmt):
    return ref.make_format(fmt.exp_bits, fmt.man_bits, fmt.bias, specials=fmt.specials,
                           subnormals=fmt.subnormals, signed=fmt.signed, saturate=fmt.saturate)


def _ref_keys(fmt, codes):
    """(is NaN, exact value) per code, from the reference decoder (low bits only)."""
    r = _ref_fmt(fmt)
    mask = (1 << fmt.bits) - 1
    table = {}
    out = []
    for c in codes.tolist():
        c &= mask
        if c not in table:
            d = ref.decode(r, c)
            if d.kind == "nan":
                table[c] = (1, 0)
            elif d.kind == "inf":
                table[c] = (0, float("-inf") if d.sign else float("inf"))
            else:
                table[c] = (0, d.value)
        out.append(table[c])
    return out


def _all_codes(fmt, rng, extra=4096):
    """Every code (twice, shuffled) plus random codes with bits above the width."""
    st = np.uint8 if fmt.bits <= 8 else np.uint16
    n = 1 << fmt.bits
    codes = np.concatenate([np.arange(n), np.arange(n)])
    storage_max = 256 if fmt.bits <= 8 else 65536
    codes = np.concatenate([codes, rng.integers(0, storage_max, extra)]).astype(st)
    rng.shuffle(codes)
    return codes


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_sort_argsort_every_kind(fmt):
    rng = np.random.default_rng(fmt.bits * 1000 + fmt.bias)
    codes = _all_codes(fmt, rng)
    a = codes.view(fmt.dtype)
    keys = _ref_keys(fmt, codes)
    expected = sorted(range(len(codes)), key=keys.__getitem__)  # Python's sort is stable
    for kind in KINDS:
        got = np.argsort(a, kind=kind)
        # stable order is unique; the other kinds only need a sorted permutation
        if kind == "stable":
            assert got.tolist() == expected, kind
        else:
            assert sorted(got.tolist()) == list(range(len(codes)))
            ks = [keys[i] for i in got.tolist()]
            assert ks == sorted(ks), kind
        s = np.sort(a, kind=kind).view(codes.dtype)
        # elements move unchanged (bits above the width included)
        assert sorted(s.tolist()) == sorted(codes.tolist()), kind
        ks = _ref_keys(fmt, s)
        assert ks == sorted(ks), kind
        if kind == "stable":
            assert s.tolist() == codes[expected].tolist()
    # every code twice plus 4096 random storage values, under each kind
    assert len(codes) * len(KINDS) == (2 * (1 << fmt.bits) + 4096) * 3


NP25 = np.lib.NumpyVersion(np.__version__) >= "2.5.0"


@pytest.mark.skipif(not NP25, reason="descending= is NumPy 2.5's")
@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_sort_argsort_descending(fmt):
    """np.sort / np.argsort(descending=True): largest value first, NaNs last (as NumPy
    sorts floats), equal values in input order (the sort is stable), both kinds."""
    rng = np.random.default_rng(fmt.bits * 1000 + fmt.bias + 1)
    if fmt.bits <= 8:   # every code twice, and codes with bits above the width
        codes = _all_codes(fmt, rng, extra=1024)
    else:               # 4096 random storage codes, a third of them repeated
        codes = rng.integers(0, 1 << 16, 3072).astype(np.uint16)
        codes = np.concatenate([codes, codes[:1024]])
        rng.shuffle(codes)
    a = codes.view(fmt.dtype)
    keys = [(nan, -v if not nan else 0) for nan, v in _ref_keys(fmt, codes)]
    expected = sorted(range(len(codes)), key=keys.__getitem__)
    for stable in (False, True):
        assert np.argsort(a, descending=True, stable=stable).tolist() == expected, stable
        assert np.sort(a, descending=True, stable=stable).view(codes.dtype).tolist() == \
            codes[expected].tolist(), stable
    b = a.copy()
    b.sort(descending=True)
    assert b.view(codes.dtype).tolist() == codes[expected].tolist()
    m = np.stack([a, a[::-1]])   # along each axis of a 2-D array
    assert np.argsort(m, axis=1, descending=True)[0].tolist() == expected
    assert np.argsort(m.T, axis=0, descending=True)[:, 0].tolist() == expected
    assert len(codes) == (2 * (1 << fmt.bits) + 1024 if fmt.bits <= 8 else 4096)


@pytest.mark.skipif(NP25, reason="NumPy 2.4 has no descending=")
def test_descending_not_in_numpy24():
    with pytest.raises(TypeError, match="descending"):
        np.sort(np.zeros(3, softfp8.e4m3.dtype), descending=True)


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_argmax_argmin(fmt):
    rng = np.random.default_rng(fmt.bits * 77 + fmt.bias)
    r = _ref_fmt(fmt)
    mask = (1 << fmt.bits) - 1
    st = np.uint8 if fmt.bits <= 8 else np.uint16
    nan_codes = [c for c in range(1 << fmt.bits) if ref.is_nan(r, c)] if fmt.bits <= 8 else \
        [c for c in rng.integers(0, 1 << fmt.bits, 20000).tolist() if ref.is_nan(r, c)]
    cases = 0
    for trial in range(40):
        n = int(rng.integers(1, 300))
        codes = rng.integers(0, 1 << fmt.bits, n)
        if trial % 2 == 0 and nan_codes:   # half of the arrays without NaN
            codes = np.array([c for c in codes.tolist() if not ref.is_nan(r, c & mask)] or [0])
        codes = codes.astype(st)
        a = codes.view(fmt.dtype)
        keys = _ref_keys(fmt, codes)
        nans = [i for i, k in enumerate(keys) if k[0]]
        if nans:
            exp_max = exp_min = nans[0]
        else:
            vals = [k[1] for k in keys]
            exp_max = vals.index(max(vals))
            exp_min = vals.index(min(vals))
        assert int(np.argmax(a)) == exp_max
        assert int(np.argmin(a)) == exp_min
        # strided and reversed views, and along an axis of a 2-D array
        rev = a[::-1]
        assert int(np.argmax(rev)) == int(np.argmax(np.ascontiguousarray(rev)))
        m = np.stack([a, a[::-1]])
        assert np.argmax(m, axis=1).tolist() == [exp_max, int(np.argmax(np.ascontiguousarray(a[::-1])))]
        cases += 1
    assert cases == 40


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_searchsorted_and_unique(fmt):
    rng = np.random.default_rng(fmt.bits + 3 * fmt.bias)
    codes = rng.integers(0, 1 << fmt.bits, 500).astype(np.uint8 if fmt.bits <= 8 else np.uint16)
    a = np.sort(codes.view(fmt.dtype))
    keys = _ref_keys(fmt, a.view(codes.dtype))
    probes = rng.integers(0, 1 << fmt.bits, 200).astype(codes.dtype)
    pkeys = _ref_keys(fmt, probes)
    for side, fn in (("left", bisect.bisect_left), ("right", bisect.bisect_right)):
        got = np.searchsorted(a, probes.view(fmt.dtype), side=side).tolist()
        assert got == [fn(keys, k) for k in pkeys], side
    # unique: one representative per distinct value (NaNs: NumPy keeps one by default)
    u = np.unique(codes.view(fmt.dtype))
    uk = _ref_keys(fmt, u.view(codes.dtype))
    distinct = sorted(set(keys))
    assert uk == distinct


def test_sort_multi_dim_and_layouts():
    fmt = softfp8.bfloat16
    rng = np.random.default_rng(5)
    x = rng.standard_normal((7, 33)).astype(np.float32)
    x[2, 5] = np.nan
    x[4, :3] = [0.0, -0.0, np.inf]
    a = x.astype(fmt.dtype)
    f32 = a.astype(np.float32)   # exact: bfloat16 values are float32 values
    for axis in (0, 1, -1):
        got = np.sort(a, axis=axis).astype(np.float32)
        exp = np.sort(f32, axis=axis, kind="stable")
        assert np.array_equal(got, exp, equal_nan=True)
        assert np.array_equal(np.argsort(a, axis=axis, kind="stable"),
                              np.argsort(f32, axis=axis, kind="stable"))
        assert np.array_equal(np.argmax(a, axis=axis), np.argmax(f32, axis=axis))
        assert np.array_equal(np.argmin(a, axis=axis), np.argmin(f32, axis=axis))
    # non-contiguous and reversed inputs, in-place sort of a view
    v = a[:, ::-3]
    assert np.array_equal(np.sort(v, axis=1).astype(np.float32),
                          np.sort(v.astype(np.float32), axis=1), equal_nan=True)
    b = a.copy()
    b[:, ::2].sort(axis=1)
    ref_b = f32.copy()
    ref_b[:, ::2].sort(axis=1)
    assert np.array_equal(b.astype(np.float32), ref_b, equal_nan=True)
    # empty and one-element arrays
    assert np.sort(a[:0, :]).shape == (0, 33)
    assert np.argsort(a[:1, :1]).tolist() == [[0]]
    with pytest.raises(ValueError):
        np.argmax(a[:0, 0])
