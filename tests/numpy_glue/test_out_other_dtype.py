"""Ufuncs of parametric formats (softfp8.format(...), the Tesla families) with an
``out=`` array of another dtype.

NumPy adapts an ``out=`` operand to the loop's DType class without a target
instance (``PyArray_CastDescrToDType``); for a parametric class that used to
fail with "cannot cast dtype float32 to <class 'softfp8.SoftFloatDType'>" while
the presets worked.  The result must be the one of the operands' format, cast
into ``out=`` - as for the presets and for NumPy's own float16 - and a cast to a
parametric DType class without parameters must still ask for them.

Expected codes come from tests/models/rational.py (exact Fraction arithmetic).
"""

import random
from fractions import Fraction

import numpy as np
import pytest

from ..models import rational as ref

import softfp8

FORMATS = [
    ("format(3,2,3)", lambda: softfp8.format(exp_bits=3, man_bits=2, bias=3),
     lambda: ref.make_format(3, 2, 3)),
    ("format(5,6,15,unsigned)", lambda: softfp8.format(exp_bits=5, man_bits=6, bias=15, signed=False),
     lambda: ref.make_format(5, 6, 15, signed=False)),
    ("cfloat8_143(bias=10)", lambda: softfp8.cfloat8_143(bias=10), lambda: ref.cfloat8_143(10)),
    ("shp(bias=20)", lambda: softfp8.shp(bias=20), lambda: ref.shp(20)),
]
OUTS = [np.float32, np.float64, np.float16]


def _codes(fmt_ref, n, seed):
    rnd = random.Random(seed)
    codes = [c for c in range(1 << fmt_ref.bits) if ref.decode(fmt_ref, c).kind == "finite"]
    return np.array([rnd.choice(codes) for _ in range(n)],
                    dtype=np.uint8 if fmt_ref.bits <= 8 else np.uint16)


def _as_out(fmt_ref, code, out_dtype):
    """The value of code as out_dtype: exact Fractions, one rounding by NumPy's float64 ->
    out_dtype cast of a float64 that holds the Fraction exactly (formats of <= 16 bits)."""
    d = ref.decode(fmt_ref, int(code))
    if d.kind == "nan":
        return out_dtype(np.nan)
    if d.kind in ("inf", "zero"):
        return out_dtype(-0.0 if d.sign else 0.0) if d.kind == "zero" else out_dtype(-np.inf if d.sign else np.inf)
    assert Fraction(float(d.value)) == d.value
    return np.array([float(d.value)]).astype(out_dtype)[0]


@pytest.mark.parametrize("out_dtype", OUTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,mk,mkref", FORMATS, ids=[f[0] for f in FORMATS])
def test_binary_into_other_dtype(name, mk, mkref, out_dtype):
    fmt, fr = mk(), mkref()
    a, b = _codes(fr, 200, 1), _codes(fr, 200, 2)
    x, y = a.view(fmt.dtype), b.view(fmt.dtype)
    cases = 0
    for uf, model in ((np.add, ref.add), (np.multiply, ref.mul), (np.subtract, ref.sub)):
        for casting in ("same_kind", "unsafe"):
            out = np.full(len(a), 7, dtype=out_dtype)
            with np.errstate(all="ignore"):
                r = uf(x, y, out=out, casting=casting)
            assert r is out
            want = np.array([_as_out(fr, model(fr, int(p), int(q))[0], out_dtype) for p, q in zip(a, b)],
                            dtype=out_dtype)
            np.testing.assert_array_equal(out, want, err_msg=f"{uf.__name__} {casting}", strict=True)
            assert (np.signbit(out) == np.signbit(want)).all()
            cases += len(a)
    assert cases == 3 * 2 * 200


@pytest.mark.parametrize("name,mk,mkref", FORMATS, ids=[f[0] for f in FORMATS])
def test_unary_and_two_output_into_other_dtype(name, mk, mkref):
    fmt, fr = mk(), mkref()
    a = _codes(fr, 100, 3)
    x = a.view(fmt.dtype)
    vals = [ref.decode(fr, int(c)).value for c in a]
    out = np.empty(len(a), np.float32)
    np.positive(x, out=out, casting="unsafe")
    np.testing.assert_array_equal(out, np.array([float(v) for v in vals], np.float32))
    if fr.signed:
        np.negative(x, out=out)
        np.testing.assert_array_equal(out, np.array([-float(v) for v in vals], np.float32))
    np.absolute(x, out=out)
    np.testing.assert_array_equal(out, np.array([abs(float(v)) for v in vals], np.float32))
    m, e = np.empty(len(a), np.float64), np.empty(len(a), np.int32)
    np.frexp(x, out=(m, e))
    for v, mm, ee in zip(vals, m, e):
        assert Fraction(float(mm)) * Fraction(2) ** int(ee) == v
        assert v == 0 or Fraction(1, 2) <= abs(Fraction(float(mm))) < 1


def test_matmul_into_float32():
    fmt, fr = softfp8.format(exp_bits=3, man_bits=2, bias=3), ref.make_format(3, 2, 3)
    a = _codes(fr, 16, 4).reshape(4, 4)
    b = _codes(fr, 16, 5).reshape(4, 4)
    out = np.empty((4, 4), np.float32)
    with np.errstate(all="ignore"):
        np.matmul(a.view(fmt.dtype), b.view(fmt.dtype), out=out)
    for i in range(4):
        for j in range(4):
            exact = sum(ref.decode(fr, int(a[i, k])).value * ref.decode(fr, int(b[k, j])).value for k in range(4))
            code, _ = ref.round_pack(fr, 0, exact)
            assert out[i, j] == _as_out(fr, code, np.float32), (i, j)


@pytest.mark.parametrize("cls_of,message", [
    (lambda: type(softfp8.format(exp_bits=3, man_bits=2, bias=3).dtype), "needs parameters"),
    (lambda: type(softfp8.cfloat8_143(bias=10).dtype), "needs its bias"),
])
def test_cast_to_class_still_asks_for_parameters(cls_of, message):
    cls = cls_of()
    for src in (np.zeros(3), np.zeros(0, np.float32), np.zeros(2, softfp8.e4m3.dtype)):
        with pytest.raises(TypeError, match=message):
            src.astype(cls)
    with pytest.raises(TypeError, match=message):
        np.float32(1).astype(cls)


def test_python_scalar_operand_into_float64():
    """np.add(cf, 1.5, out=<float64>): the Python number is weak (NEP 50), the sum is
    rounded once in the format and cast into out."""
    fr = ref.cfloat8_143(10)
    cf = np.array([1.0, 2.0, 3.0, 0.375]).astype(softfp8.cfloat8_143(bias=10).dtype)
    out = np.empty(4)
    np.add(cf, 1.5, out=out)
    want = [float(ref.decode(fr, ref.round_pack(fr, 0, Fraction(v) + Fraction(3, 2))[0]).value)
            for v in (1, 2, 3, Fraction(3, 8))]
    assert out.tolist() == want
