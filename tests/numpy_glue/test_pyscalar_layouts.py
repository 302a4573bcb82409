"""The Python-number loops (softfp8/_core/npy/pyscalar.c, NEP 50) under every memory
layout NumPy calls them with, bit- and flag-identical to the exact core.

pyscalar.c has three ways through a call: a per-code table when the literal is
broadcast over at least as many elements as the format has codes (formats of at most
12 bits: comparisons, maximum/minimum/fmax/fmin), one rounding of the literal then the
array driver (arithmetic, literal stride 0), and element by element.  NumPy reaches
them with contiguous, strided, reversed, 2-D Fortran-order and zero-stride operands,
out= aliasing the input or overlapping it (NumPy copies: accumulate-like shifts),
where= masks (NumPy's masked wrapper calls the loop once per run of True), buffered
calls (out= of another dtype: chunks of NumPy's buffer size) and ufunc.at (one call
per index, repeated indices applied in turn; reduceat-like segments).  NumPy never
hands these loops to accumulate/reduce/reduceat (those take array operands only).

Reference, element by element and independent of the loop: arithmetic is
softfp8.bits (the exact core, fast paths off) on the code and the literal rounded by
softfp8.bits.from_float / from_int64 in the same mode, flags ORed; comparisons and
selections use the exact value of each code (tests/models/rational.py) and of the
literal (Fraction), and a selected literal is rounded as above.  Every layout runs
with the fast paths on and off.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import bits

from ..conftest import fast_level as fast    # fast paths at a level for a block
from ..models import rational as ref

N = 5000            # >= 4096: the per-code table of 12-bit formats is used
RNG = np.random.default_rng(20261124)

# (format, reference format): 8-bit preset; a 7-bit format in uint8 (bits above its width
# are ignored); a 12-bit format (the widest with per-code tables); a format beyond
# binary64's range (comparisons through the core); a 16-bit format (no table)
FORMATS = [
    (softfp8.e4m3, ref.preset("e4m3")),
    (softfp8.format(exp_bits=4, man_bits=2, bias=7), ref.make_format(4, 2, 7)),
    (softfp8.format(exp_bits=5, man_bits=6, bias=15, specials="fn"), ref.make_format(5, 6, 15, "fn")),
    (softfp8.format(exp_bits=5, man_bits=2, bias=-1100), ref.make_format(5, 2, -1100)),
    (softfp8.float16, ref.preset("float16")),
]
FIDS = ["e4m3", "e4m2_7bit", "e5m6fn_12bit", "beyond_f64", "float16"]

ARITH = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div"}
SELECT = {np.maximum: "max", np.minimum: "min", np.fmax: "maxnum", np.fmin: "minnum"}
COMPARE = {np.less: lambda t: t == -1, np.equal: lambda t: t == 0,
           np.greater_equal: lambda t: t in (0, 1), np.not_equal: None}
LITERALS = [1.5, 0.1, -1000.0, 150000.0, math.nan, -math.inf, -0.0, 3, -(2 ** 62)]


def storage_codes(fmt, r, n=N):
    """n codes of fmt's storage: every code (and, for a format narrower than its storage,
    codes with the bits above its width set) and random ones, shuffled."""
    top = 1 << (8 * fmt.storage.itemsize)
    span = min(top, 1 << 12)
    base = np.arange(span, dtype=np.int64) if fmt.bits <= 12 else np.array(
        [0, 1, r.max_code, r.min_normal_code, r.sign_bit | 1, r.sign_bit | r.max_code,
         0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x8000], dtype=np.int64)
    extra = RNG.integers(0, top, max(n - base.size, 0))
    c = np.concatenate([base, extra])
    RNG.shuffle(c)
    return c[:n].astype(fmt.storage)


_VALUES = {}


def exact_value(fmt, r, code):
    """Fraction, +-inf or None (NaN) of a code (rational.py), cached."""
    key = (fmt, int(code))
    v = _VALUES.get(key, "missing")
    if v == "missing":
        d = ref.decode(r, int(code))
        v = None if d.kind == "nan" else (-math.inf if d.sign else math.inf) if d.kind == "inf" \
            else d.value
        _VALUES[key] = v
    return v


def lit_value(x):
    if isinstance(x, float):
        return None if math.isnan(x) else x if math.isinf(x) else Fraction(x)
    return Fraction(x)


def round_literal(fmt, x, mode):
    """(code, flags) of the Python number in fmt, by the exact core."""
    if isinstance(x, float):
        c, fl = bits.from_float(np.float64(x), fmt, rounding=mode)
    else:
        c, fl = bits.from_int64(np.int64(x), fmt, rounding=mode)
    return int(c), int(fl)


_REFERENCE = {}


def reference(fmt, r, uf, x, mode, codes, reflected=False):
    """(results, per-element flags) of uf(code, x) (uf(x, code) if reflected) for each
    code; cached for the fast-on and fast-off runs of one array of codes."""
    key = (fmt, uf, repr(x), mode, reflected, np.asarray(codes).tobytes())
    if key not in _REFERENCE:
        _REFERENCE[key] = _reference(fmt, r, uf, x, mode, codes, reflected)
    return _REFERENCE[key]


def _reference(fmt, r, uf, x, mode, codes, reflected):
    codes = np.asarray(codes).astype(np.int64) & fmt.code_mask
    uniq, inv = np.unique(codes, return_inverse=True)
    u = uniq.astype(fmt.storage)
    with fast(0):
        lc, lfl = round_literal(fmt, x, mode)
        lit = np.full_like(u, lc)
        pair = (lit, u) if reflected else (u, lit)
        if uf in ARITH:
            res, fl = getattr(bits, ARITH[uf])(fmt, *pair, rounding=mode)
            return res[inv].astype(np.int64), (fl.astype(np.int64) | lfl)[inv]
        xv = lit_value(x)
        rel = []
        for c in uniq:
            v = exact_value(fmt, r, c)
            rel.append(None if v is None or xv is None else (v > xv) - (v < xv))
        if uf in COMPARE:
            truth = COMPARE[uf]
            if reflected:
                rel = [None if t is None else -t for t in rel]
            if truth is None:       # not_equal: also true when unordered
                out = np.array([t is None or t != 0 for t in rel])
            else:
                out = np.array([t is not None and truth(t) for t in rel])
            return out[inv], np.zeros(len(codes), np.int64)   # comparisons raise nothing
        name = SELECT[uf]
        num, maxlike = name.endswith("num"), name.startswith("max")
        eq_res, eq_fl = getattr(bits, name)(fmt, *pair)     # selections do not round
        quiet, quiet_fl = bits.max(fmt, u, u)
        res = np.empty(len(uniq), np.int64)
        fl = np.zeros(len(uniq), np.int64)
        for i, t in enumerate(rel):
            c_nan = exact_value(fmt, r, uniq[i]) is None
            if t is None:
                if c_nan and (not num or xv is None):
                    res[i], fl[i] = quiet[i], quiet_fl[i]     # the code's NaN, quieted
                elif c_nan or not num:
                    res[i], fl[i] = lc, lfl                   # the number (a NaN for max/min)
                else:
                    res[i] = uniq[i]                          # fmax/fmin: the code
            elif t == 0:
                res[i], fl[i] = eq_res[i], eq_fl[i] | lfl     # equal values: zeros ordered
            elif (t == 1) == maxlike:
                res[i] = uniq[i]                              # the code wins: never rounded
            else:
                res[i], fl[i] = lc, lfl
        return res[inv], fl[inv]


def as_codes(arr):
    arr = np.asarray(arr)
    if arr.dtype == np.bool_:
        return arr
    return arr.view(arr.dtype.format.storage).astype(np.int64)


def call(mode, thunk):
    with softfp8.rounding(mode), np.errstate(all="ignore"), softfp8.collect_flags() as fl:
        out = thunk()
    return out, int(fl.flags)


def layouts(fmt, c, uf, x):
    """(name, thunk -> result in the logical order of c, mask of the elements computed)"""
    d = fmt.dtype
    n = c.size
    is_bool = uf in COMPARE
    odt = np.bool_ if is_bool else d

    def v(codes):
        return np.array(codes, dtype=fmt.storage).view(d)

    def reversed_():
        a = v(c[::-1])[::-1]
        out = np.empty(n, odt)[::-1]
        return uf(a, x, out=out)

    def strided():
        big = np.zeros(3 * n, fmt.storage)
        big[::3] = c
        out = np.zeros(2 * n, odt)[::-2]
        uf(big.view(d)[::3], x, out=out)
        return out

    def fortran():
        k = 50
        a = np.asfortranarray(v(c).reshape(k, n // k))
        out = np.empty((k, n // k), odt, order="F")
        return uf(a, x, out=out).reshape(-1)

    def alias():
        a = v(c)
        return uf(a, x, out=a)

    def overlap_fwd():            # accumulate-like: out is the input shifted by one
        buf = np.zeros(n + 1, fmt.storage)
        buf[:-1] = c
        b = buf.view(d)
        uf(b[:-1], x, out=b[1:])
        return b[1:]

    def overlap_bwd():
        buf = np.zeros(n + 1, fmt.storage)
        buf[1:] = c
        b = buf.view(d)
        uf(b[1:], x, out=b[:-1])
        return b[:-1]

    out = [("contiguous", lambda: uf(v(c), x), None),
           ("reflected", None, None),
           ("reversed", reversed_, None), ("strided", strided, None), ("fortran", fortran, None)]
    if not is_bool:
        out += [("alias", alias, None), ("overlap_fwd", overlap_fwd, None),
                ("overlap_bwd", overlap_bwd, None)]
    # where=: one long run (per-code table inside NumPy's masked wrapper), then random
    mask = np.ones(n, bool)
    mask[n * 9 // 10:] = np.random.default_rng(1).random(n - n * 9 // 10) < 0.5
    mask[100:120] = False
    sentinel = np.zeros(n, bool) if is_bool else v(np.full(n, 0x11, fmt.storage))

    def where():
        o = sentinel.copy()
        uf(v(c), x, out=o, where=mask)
        return o
    out.append(("where", where, mask))
    return out


@pytest.mark.parametrize("level", [1, 0], ids=["fast_on", "fast_off"])
@pytest.mark.parametrize("fi", range(len(FORMATS)), ids=FIDS)
def test_layouts_match_the_exact_core(fi, level):
    fmt, r = FORMATS[fi]
    # enough elements for the per-code tables (4,500 >= 4,096 in the where= run of the
    # 12-bit format); every mode on e4m3, two elsewhere (the file stays fast)
    n = N if fmt.bits > 8 and fmt.bits <= 12 else 1000
    c = storage_codes(fmt, r, n)
    modes = ("nearest_even", "toward_zero", "upward", "downward", "nearest_away", "to_odd") \
        if fi == 0 else ("nearest_even", "upward")
    literals = LITERALS if fi == 0 else LITERALS[::2]
    checked = 0
    for mode in modes:
        for uf in [*ARITH, *SELECT, *COMPARE]:
            for x in literals:
                want, wfl = reference(fmt, r, uf, x, mode, c)
                want_r, wfl_r = reference(fmt, r, uf, x, mode, c, reflected=True)
                with fast(level):
                    for name, thunk, mask in layouts(fmt, c, uf, x):
                        if name == "reflected":
                            got, fl = call(mode, lambda: uf(x, np.array(c).view(fmt.dtype)))
                            w, f = want_r, wfl_r
                        else:
                            got, fl = call(mode, thunk)
                            w, f = want, wfl
                        got = as_codes(got)
                        sel = slice(None) if mask is None else mask
                        bad = np.flatnonzero(got[sel] != w[sel])
                        assert bad.size == 0, (fmt.name, uf.__name__, x, mode, name, [
                            (hex(int(np.asarray(c)[sel][i])), int(got[sel][i]), int(w[sel][i]))
                            for i in bad[:4]])
                        if mask is not None:       # untouched where the mask is False
                            rest = got[~mask]
                            assert (rest == (0 if uf in COMPARE else 0x11)).all(), name
                        want_fl = int(np.bitwise_or.reduce(f[sel])) if f[sel].size else 0
                        assert fl == want_fl, (fmt.name, uf.__name__, x, mode, name, fl, want_fl)
                        checked += int(np.count_nonzero(np.ones(n, bool)[sel]))
    # every element of every layout: 8 full layouts and where= for arithmetic and
    # selections, 5 and where= for comparisons
    n_where = int(np.count_nonzero(layouts(fmt, c, np.add, 1.5)[-1][2]))
    expect = len(modes) * len(literals) * (
        (len(ARITH) + len(SELECT)) * (8 * n + n_where) + len(COMPARE) * (5 * n + n_where))
    assert checked == expect, (checked, expect)


@pytest.mark.parametrize("level", [1, 0], ids=["fast_on", "fast_off"])
@pytest.mark.parametrize("fi", range(len(FORMATS)), ids=FIDS)
def test_zero_stride_array_operand(fi, level):
    """Both operands broadcast (stride 0): one code repeated N times, every code."""
    fmt, r = FORMATS[fi]
    codes = storage_codes(fmt, r, 300)[:40]
    n = 0
    for code in codes:
        a = np.broadcast_to(np.array([code], fmt.storage).view(fmt.dtype), (N,))
        for uf in (np.add, np.multiply, np.maximum, np.fmin, np.less):
            for x in (1.5, 0.1, 150000.0, math.nan):
                w, f = reference(fmt, r, uf, x, "nearest_even", [code])
                with fast(level):
                    got, fl = call("nearest_even", lambda: uf(a, x))
                got = as_codes(got)
                assert (got == w[0]).all(), (fmt.name, hex(int(code)), uf.__name__, x)
                assert fl == int(f[0]), (fmt.name, hex(int(code)), uf.__name__, x)
                n += 1
    assert n == 40 * 5 * 4


@pytest.mark.parametrize("level", [1, 0], ids=["fast_on", "fast_off"])
@pytest.mark.parametrize("fi", range(len(FORMATS)), ids=FIDS)
def test_buffered_calls_with_a_cast_out(fi, level):
    """out= of another dtype: NumPy buffers (chunks of its buffer size, 8192) and casts.
    Presets: out= float64 (an exact cast); softfp8.format(...) formats: out= another
    format of the same DType (bias + 1; NumPy cannot resolve a parametric DType's loop
    with a float64 out=, see docs/numpy.md), the cast rounding once more."""
    fmt, r = FORMATS[fi]
    c = np.concatenate([storage_codes(fmt, r)] * 4)      # 20,000 elements: several buffers
    other = None if fmt._family == "preset" else softfp8.format(
        exp_bits=fmt.exp_bits, man_bits=fmt.man_bits, bias=fmt.bias + 1, specials=fmt.specials)
    n = 0
    for uf in (np.add, np.true_divide, np.maximum, np.fmax):
        for x in (1.5, 0.1, -1000.0, 3):
            w, f = reference(fmt, r, uf, x, "nearest_even", c)
            w = w.astype(fmt.storage)
            want_fl = int(np.bitwise_or.reduce(f))
            with fast(level):
                out = np.empty(c.size, np.float64 if other is None else other.dtype)
                _, fl = call("nearest_even",
                             lambda: uf(c.view(fmt.dtype), x, out=out, casting="unsafe"))
            if other is None:
                with fast(0):
                    want, cfl = bits.to_float(w, fmt, np.float64, **bits.FIXED)
                want_fl |= int(np.bitwise_or.reduce(cfl))      # denormal of subnormal codes
                same = (out == want) & (np.signbit(out) == np.signbit(want))
                assert np.all(same | (np.isnan(out) & np.isnan(want))), (fmt.name, uf.__name__, x)
            else:
                with fast(0):
                    want, cfl = bits.convert(w, fmt, other, **bits.FIXED)
                assert np.array_equal(out.view(other.storage), want), (fmt.name, uf.__name__, x)
                want_fl |= int(np.bitwise_or.reduce(cfl))
            assert fl == want_fl, (fmt.name, uf.__name__, x, fl, want_fl)
            n += c.size
    assert n == 4 * 4 * 4 * N


AT_FORMATS = [i for i in range(len(FORMATS)) if FIDS[i] != "beyond_f64"]


@pytest.mark.parametrize("level", [1, 0], ids=["fast_on", "fast_off"])
@pytest.mark.parametrize("fi", AT_FORMATS, ids=[FIDS[i] for i in AT_FORMATS])
def test_ufunc_at(fi, level):
    """np.add.at(arr, idx, 1.5) does not reach the Python-number loops: NumPy 2.4's
    ufunc.at turns the number into a float64 array (ufunc_object.c ufunc_at:
    PyArray_FromAny, no weak-scalar marking), so the float64 loop runs and its result is
    cast back into the array's format (NPY_UNSAFE_CASTING), one call per index; NumPy's
    own float16 does the same (np.add.at(f16, i, 0.1) != f16 + 0.1).  Reference: the
    code's exact float64 value, NumPy's float64 operation, then the exact core's
    rounding into the format in the context's mode (softfp8.bits.from_float), applied
    index by index (repeated and negative indices in turn; a reduceat-like run of
    consecutive indices too)."""
    fmt, r = FORMATS[fi]
    c = storage_codes(fmt, r, 400)
    idx = np.concatenate([RNG.integers(-400, 400, 80), [5, 5, 5, 5, -1, -1], np.arange(40, 70)])
    n = 0
    for uf in (np.add, np.multiply, np.true_divide, np.maximum, np.fmin):
        for x in (1.5, 0.1, 150000.0, -7):
            for mode in ("nearest_even", "downward"):
                state = (c.astype(np.int64) & fmt.code_mask).astype(fmt.storage)
                want_fl = 0
                with fast(0), np.errstate(all="ignore"):
                    for i in idx:
                        v, vfl = bits.to_float(state[i], fmt, np.float64, **bits.FIXED)
                        code, fl = bits.from_float(uf(np.float64(v), np.float64(x)), fmt,
                                                   rounding=mode)
                        state[i] = code
                        want_fl |= int(vfl) | int(fl)     # both casts: in (denormal), out
                arr = c.copy().view(fmt.dtype)
                with fast(level):
                    _, fl = call(mode, lambda: uf.at(arr, idx, x))
                got = arr.view(fmt.storage)
                touched = np.zeros(c.size, bool)
                touched[idx] = True
                assert np.array_equal(got[touched], state[touched]), (fmt.name, uf.__name__, x, mode)
                assert np.array_equal(got[~touched], c[~touched])
                assert fl == want_fl, (fmt.name, uf.__name__, x, mode, fl, want_fl)
                n += idx.size
    assert n == 5 * 4 * 2 * idx.size


def test_stochastic_layouts_fast_on_equals_fast_off():
    """Under stochastic rounding the literal's rounding draws its own bits per element:
    the fast paths change nothing, in any layout."""
    fmt, r = FORMATS[0]
    c = storage_codes(fmt, r)
    for uf in (np.add, np.multiply, np.minimum):
        results = []
        for level in (1, 0):
            with fast(level):
                runs = []
                for name, thunk, mask in layouts(fmt, c, uf, 0.1):
                    if thunk is None:
                        continue
                    with softfp8.rounding("stochastic", seed=7), np.errstate(all="ignore"):
                        runs.append(as_codes(thunk()))
                results.append(runs)
        for a, b in zip(*results):
            assert np.array_equal(a, b), uf.__name__
