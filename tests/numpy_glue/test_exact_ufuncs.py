"""The exact non-elementary ufuncs under every way NumPy calls a loop.

np.fmod, np.heaviside, np.ldexp, np.divmod, np.modf, np.frexp, np.logical_*,
np.fabs, np.conjugate, np.float_power and the vecdot / matvec / vecmat
gufuncs: the loop results equal softfp8.bits (whose exactness
tests/core/test_exact_functions.py proves against the rational model) under
accumulate with out overlapping the input, reduce, reduceat, ufunc.at, out=
aliasing, where=, negative and zero strides, and codes with bits above the
format's width; accumulations are compared with a sequential Python loop of
bits calls.  The dot-product gufuncs are compared with exact Fraction sums
rounded once by the rational model.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb

from ..models import rational as ref

NARROW = softfp8.format(exp_bits=5, man_bits=4, bias=15)  # 10 bits in uint16
FORMATS = [softfp8.e4m3, softfp8.float16, softfp8.cfloat8_143(bias=10), NARROW]
IDS = [f.name for f in FORMATS]


def _codes(fmt, n, seed, wide=False):
    """random codes of fmt; wide: garbage in the storage bits above the width"""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 1 << fmt.bits, n).astype(fmt.storage)
    if wide and fmt.bits < 8 * fmt.storage.itemsize:
        c |= (rng.integers(0, 1 << (8 * fmt.storage.itemsize), n).astype(fmt.storage)
              & ~np.array(fmt.code_mask, fmt.storage))
    return c


def _mask(fmt, c):
    return np.asarray(c) & fmt.code_mask


def _v(fmt, c):
    return np.asarray(c, dtype=fmt.storage).view(fmt.dtype)


def _bits_of(arr, fmt):
    return np.asarray(arr).view(fmt.storage)


def _seq(fmt, name, codes):
    """accumulate as a sequential loop of bits calls"""
    fn = getattr(sfb, name)
    out = [int(codes[0] & fmt.code_mask)]
    for c in codes[1:]:
        out.append(int(fn(fmt, out[-1], int(c & fmt.code_mask))[0]))
    return np.array(out, fmt.storage)


@pytest.mark.parametrize("name", ["fmod", "heaviside"])
@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_binary_reductions_are_sequential(fmt, name):
    uf = getattr(np, name)
    # NumPy defines these for float16 too
    h = np.array([3.0, 2.0, 0.0, 1.5], np.float16)
    uf.accumulate(h), uf.reduce(h), uf.reduceat(h, [0, 2])
    c = _codes(fmt, 301, 1, wide=True)
    want = _seq(fmt, name, c)
    with np.errstate(all="ignore"):
        x = _v(fmt, c.copy())
        uf.accumulate(x, out=x)  # out overlapping the input
        # element 0 is NumPy's own copy of the input (its high bits kept); the loop's
        # results never set them
        np.testing.assert_array_equal(_mask(fmt, _bits_of(x, fmt)), want)
        np.testing.assert_array_equal(_bits_of(x, fmt)[1:], want[1:])
        got = uf.reduce(_v(fmt, c))
        assert int(np.asarray(got).view(fmt.storage)) == int(want[-1])
        # reduce along an axis with a negative stride
        two = np.stack([c, c])[:, ::-1]
        r = uf.reduce(_v(fmt, two.copy())[:, :], axis=1)
        assert list(_bits_of(r, fmt)) == [int(_seq(fmt, name, c[::-1])[-1])] * 2
        idx = [0, 100, 100, 250]
        ra = uf.reduceat(_v(fmt, c), idx)
        for j, (lo, hi) in enumerate(zip(idx, idx[1:] + [c.size])):
            seg = c[lo:hi] if hi > lo else c[lo:lo + 1]
            # (an empty segment is NumPy's copy of c[lo]: compare the format's bits)
            assert int(_mask(fmt, _bits_of(ra, fmt)[j])) == int(_seq(fmt, name, seg)[-1]), j


@pytest.mark.parametrize("name", ["fmod", "heaviside", "ldexp"])
@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_binary_at_out_where_strides(fmt, name):
    uf, fn = getattr(np, name), getattr(sfb, name)
    a = _codes(fmt, 200, 2, wide=True)
    if name == "ldexp":
        b = np.random.default_rng(3).integers(-20, 21, 200)
        bv, bm = b, b
    else:
        b = _codes(fmt, 200, 3, wide=True)
        bv, bm = _v(fmt, b), _mask(fmt, b)
    want, _ = fn(fmt, _mask(fmt, a), bm)
    with np.errstate(all="ignore"):
        # out= aliasing the first input
        x = _v(fmt, a.copy())
        uf(x, bv, out=x)
        np.testing.assert_array_equal(_bits_of(x, fmt), want)
        # negative strides on every operand and the output
        o = np.empty(200, fmt.storage)
        uf(_v(fmt, a)[::-1], bv[::-1], out=_v(fmt, o)[::-1])
        np.testing.assert_array_equal(o, want)
        # zero stride: a broadcast second operand
        z = uf(_v(fmt, a), bv[7:8] if name != "ldexp" else b[7])
        np.testing.assert_array_equal(_bits_of(z, fmt), fn(fmt, _mask(fmt, a), bm[7])[0])
        # where=: untouched elsewhere
        mask = np.arange(200) % 3 == 0
        o = np.full(200, 0x11, fmt.storage)
        uf(_v(fmt, a), bv, out=_v(fmt, o), where=mask)
        np.testing.assert_array_equal(o, np.where(mask, want, 0x11))
        # ufunc.at with repeated indices: applied in order
        x = _v(fmt, a[:10].copy())
        idx = np.array([1, 1, 3, 1])
        uf.at(x, idx, bv[:4])
    seq = _mask(fmt, a[:10]).astype(fmt.storage)
    for i, j in enumerate(idx):
        seq[j] = fn(fmt, int(seq[j]), int(bm[i]))[0]
    np.testing.assert_array_equal(_mask(fmt, _bits_of(x, fmt)), seq)
    assert not (_bits_of(x, fmt)[[1, 3]] & ~np.array(fmt.code_mask, fmt.storage)).any()


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_ldexp_exponent_types(fmt):
    a = _codes(fmt, 50, 4)
    k = np.random.default_rng(5).integers(-30, 31, 50)
    want = sfb.ldexp(fmt, a, k)[0]
    with np.errstate(all="ignore"):
        for t in (np.int8, np.int16, np.int32, np.int64, np.longlong, np.intc, np.int_,
                  np.uint8, np.uint16, np.uint32, np.uintc):
            kk = k.astype(t) if np.dtype(t).kind == "i" else np.abs(k).astype(t)
            ww = want if np.dtype(t).kind == "i" else sfb.ldexp(fmt, a, np.abs(k))[0]
            np.testing.assert_array_equal(_bits_of(np.ldexp(_v(fmt, a), kk), fmt), ww, err_msg=str(t))
        # Python ints, small and beyond int32 (no C int overflow)
        np.testing.assert_array_equal(_bits_of(np.ldexp(_v(fmt, a), 3), fmt), sfb.ldexp(fmt, a, 3)[0])
        for big in (2**40, -2**40, 2**63 - 1):
            np.testing.assert_array_equal(_bits_of(np.ldexp(_v(fmt, a), big), fmt),
                                          sfb.ldexp(fmt, a, big)[0])
    # uint64 has no safe cast to int64: refused, as NumPy refuses it for float16
    for arr in (np.ones(2, np.float16), _v(fmt, a[:2])):
        for t in (np.uint64, np.ulonglong):
            with pytest.raises(TypeError):
                np.ldexp(arr, np.array([1, 2], t))
    with pytest.raises(OverflowError):
        np.ldexp(_v(fmt, a), 2**70)


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_two_output_ufuncs(fmt):
    a = _codes(fmt, 120, 6, wide=True)
    b = _codes(fmt, 120, 7, wide=True)
    am, bm = _mask(fmt, a), _mask(fmt, b)
    with np.errstate(all="ignore"):
        (q, r), _ = sfb.divmod(fmt, am, bm)
        gq, gr = np.divmod(_v(fmt, a), _v(fmt, b))
        np.testing.assert_array_equal(_bits_of(gq, fmt), q)
        np.testing.assert_array_equal(_bits_of(gr, fmt), r)
        # out= aliasing both inputs, negative strides
        x, y = _v(fmt, a.copy()), _v(fmt, b.copy())
        np.divmod(x[::-1], y[::-1], out=(x[::-1], y[::-1]))
        np.testing.assert_array_equal(_bits_of(x, fmt), q)
        np.testing.assert_array_equal(_bits_of(y, fmt), r)
        for name in ("modf", "frexp"):
            (m1, m2), _ = getattr(sfb, name)(fmt, am)
            g1, g2 = getattr(np, name)(_v(fmt, a)[::-1])
            np.testing.assert_array_equal(_bits_of(g1, fmt), m1[::-1])
            np.testing.assert_array_equal(np.asarray(g2).view(m2.dtype), m2[::-1])
            # where= with out=
            mask = np.arange(120) % 2 == 1
            o1 = np.full(120, 0x12, fmt.storage)
            o2 = np.full(120, 0x13, m2.dtype)
            getattr(np, name)(_v(fmt, a), out=(_v(fmt, o1), o2.view(g2.dtype)), where=mask)
            np.testing.assert_array_equal(o1, np.where(mask, m1, 0x12))
            np.testing.assert_array_equal(o2, np.where(mask, m2, 0x13))
    assert g2.dtype == (np.int32 if name == "frexp" else fmt.dtype)


@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.e5m2, softfp8.e4m3fnuz, softfp8.uhp,
                                 softfp8.hfp8_143, NARROW], ids=lambda f: f.name)
def test_logical_ufuncs_follow_float_semantics(fmt):
    """nonzero (NaN included) is True, as for float16 / float64 operands"""
    c = np.arange(1 << min(fmt.bits, 10), dtype=fmt.storage)
    vals = sfb.to_float(c, fmt)[0]
    x = _v(fmt, c)
    np.testing.assert_array_equal(np.logical_not(x), np.logical_not(vals))
    rng = np.random.default_rng(8)
    i, j = rng.integers(0, c.size, 500), rng.integers(0, c.size, 500)
    for name in ("logical_and", "logical_or", "logical_xor"):
        uf = getattr(np, name)
        np.testing.assert_array_equal(uf(x[i], x[j]), uf(vals[i], vals[j]), err_msg=name)
        assert uf.reduce(x[i]) == uf.reduce(vals[i])


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_fabs_conjugate_float_power(fmt):
    c = _codes(fmt, 200, 9, wide=True)
    x = _v(fmt, c)
    np.testing.assert_array_equal(_bits_of(np.fabs(x), fmt), sfb.abs(fmt, _mask(fmt, c)))
    np.testing.assert_array_equal(_bits_of(np.conjugate(x), fmt), _mask(fmt, c))
    np.testing.assert_array_equal(_bits_of(np.conj(x), fmt), _mask(fmt, c))
    vals = sfb.to_float(_mask(fmt, c), fmt)[0]
    with np.errstate(all="ignore"):
        got = np.float_power(x, x[::-1])
        want = np.float_power(vals, vals[::-1])
        got2 = np.float_power(x, 2)
    assert got.dtype == np.float64 and got2.dtype == np.float64
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got2, np.float_power(vals, 2.0))


def _exact_dot(fmt, a, b):
    """sum of products of codes a, b as an exact Fraction, rounded once by the model"""
    rf = ref.preset(fmt.name) if fmt.name in ("e4m3", "float16", "bfloat16") else None
    s = Fraction(0)
    for x, y in zip(a.tolist(), b.tolist()):
        s += ref.decode(rf, x).value * ref.decode(rf, y).value
    return ref.round_pack(rf, 0, s)[0]


@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.float16, softfp8.bfloat16],
                         ids=lambda f: f.name)
def test_vecdot_matvec_vecmat_exact(fmt):
    rng = np.random.default_rng(10)
    n = 24
    vals = rng.uniform(-3, 3, (5, n))
    A = sfb.from_float(vals, fmt)[0]
    v = sfb.from_float(rng.uniform(-3, 3, n), fmt)[0]
    want = np.array([_exact_dot(fmt, A[i], v) for i in range(5)], fmt.storage)
    Av, vv = _v(fmt, A), _v(fmt, v)
    np.testing.assert_array_equal(_bits_of(np.matvec(Av, vv), fmt), want)
    np.testing.assert_array_equal(_bits_of(np.vecmat(vv, Av.T), fmt), want)
    np.testing.assert_array_equal(_bits_of(np.vecdot(Av, vv), fmt), want)
    # strided (transposed, reversed) operands and a batch
    np.testing.assert_array_equal(_bits_of(np.vecdot(Av[::-1], vv), fmt), want[::-1])
    np.testing.assert_array_equal(_bits_of(np.vecmat(vv[::-1], Av.T[::-1]), fmt), want)
    # the same as matmul
    np.testing.assert_array_equal(_bits_of(np.matvec(Av, vv), fmt),
                                  _bits_of(np.matmul(Av, vv), fmt))
    with softfp8.rounding("stochastic", seed=3):
        r = np.vecdot(Av, vv)
    assert r.dtype == fmt.dtype
