"""Python API: Format objects, Flags, the format factory, softfp8.bits argument
handling, broadcasting, comparisons and integer conversions.

Expected values are written out from SPEC.md / docs/python-api.md or computed by
the independent model tests/models/fraction_model.py; never taken from softfp8.
"""

from __future__ import annotations

import enum
import math
from fractions import Fraction

import numpy as np
import pytest

import softfp8
import softfp8.bits as sb

from ..models import fraction_model as ref
from ..models.fraction_model import DENORMAL, INEXACT, INVALID, OVERFLOW, SPECS

INT64_MAX = 2 ** 63 - 1
INT64_MIN = -(2 ** 63)

# name: (bits, signed, E, M, bias, specials, subnormals, saturate,
#        max, min_normal, min_subnormal, eps)  -- from SPEC.md's table
PRESETS = {
    "e4m3": (8, True, 4, 3, 7, "fn", "ieee", False, 448.0, 2.0 ** -6, 2.0 ** -9, 2.0 ** -3),
    "e5m2": (8, True, 5, 2, 15, "ieee", "ieee", False, 57344.0, 2.0 ** -14, 2.0 ** -16,
             2.0 ** -2),
    "e4m3fnuz": (8, True, 4, 3, 8, "fnuz", "ieee", False, 240.0, 2.0 ** -7, 2.0 ** -10,
                 2.0 ** -3),
    "e5m2fnuz": (8, True, 5, 2, 16, "fnuz", "ieee", False, 57344.0, 2.0 ** -15, 2.0 ** -17,
                 2.0 ** -2),
    "uhp": (16, False, 6, 10, 31, "ieee", "flush", False, (2 - 2.0 ** -10) * 2.0 ** 31,
            2.0 ** -30, None, 2.0 ** -10),
    "hfp8_143": (8, True, 4, 3, 4, "none", "ieee", True, 3840.0, 2.0 ** -3, 2.0 ** -6,
                 2.0 ** -3),
    "hfp8_152": (8, True, 5, 2, 15, "ieee", "ieee", False, 57344.0, 2.0 ** -14, 2.0 ** -16,
                 2.0 ** -2),
    "hfp16_169": (16, True, 6, 9, 31, "ieee", "ieee", False, (2 - 2.0 ** -9) * 2.0 ** 31,
                  2.0 ** -30, 2.0 ** -39, 2.0 ** -9),
    "float16": (16, True, 5, 10, 15, "ieee", "ieee", False, 65504.0, 2.0 ** -14, 2.0 ** -24,
                2.0 ** -10),
    "bfloat16": (16, True, 8, 7, 127, "ieee", "ieee", False, (2 - 2.0 ** -7) * 2.0 ** 127,
                 2.0 ** -126, 2.0 ** -133, 2.0 ** -7),
    # ml_dtypes' other 8-bit formats (its documentation; non-saturating like ml_dtypes)
    "float8_e4m3": (8, True, 4, 3, 7, "ieee", "ieee", False, 240.0, 2.0 ** -6, 2.0 ** -9,
                    2.0 ** -3),
    "float8_e3m4": (8, True, 3, 4, 3, "ieee", "ieee", False, 15.5, 2.0 ** -2, 2.0 ** -6,
                    2.0 ** -4),
    "float8_e4m3b11fnuz": (8, True, 4, 3, 11, "fnuz", "ieee", False, 30.0, 2.0 ** -10,
                           2.0 ** -13, 2.0 ** -3),
    # OCP MX v1.0 (ml_dtypes' names) and NVFP4's scale (docs/semantics.md)
    "float4_e2m1fn": (4, True, 2, 1, 1, "none", "ieee", True, 6.0, 1.0, 0.5, 0.5),
    "float6_e2m3fn": (6, True, 2, 3, 1, "none", "ieee", True, 7.5, 1.0, 0.125, 0.125),
    "float6_e3m2fn": (6, True, 3, 2, 3, "none", "ieee", True, 28.0, 0.25, 0.0625, 0.25),
    "float8_e8m0fnu": (8, False, 8, 0, 127, "fn", "nozero", False, 2.0 ** 127, 2.0 ** -127,
                       2.0 ** -127, 1.0),
    "ue4m3": (7, False, 4, 3, 7, "fn", "ieee", False, 448.0, 2.0 ** -6, 2.0 ** -9, 2.0 ** -3),
}
ALIASES = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "float8_e4m3fnuz": "e4m3fnuz",
           "float8_e5m2fnuz": "e5m2fnuz", "e3m4": "float8_e3m4",
           "e4m3b11fnuz": "float8_e4m3b11fnuz", "e2m1": "float4_e2m1fn",
           "e2m3": "float6_e2m3fn", "e3m2": "float6_e3m2fn", "e8m0": "float8_e8m0fnu"}


def one(res):
    c, f = res
    return int(np.asarray(c)), int(np.asarray(f))


def code(name, x):
    """Code of the exactly representable value x in preset `name` (reference model)."""
    s, m = ref.to_fraction(x)
    c, fl = ref.round_value(SPECS[name], s, m)
    assert fl == 0, (name, x)
    return c


# ---------------------------------------------------------------------------
# Format objects
# ---------------------------------------------------------------------------


def test_preset_table_matches_fraction_model():
    # the two independent transcriptions of SPEC's table agree
    for name, row in PRESETS.items():
        sp = SPECS[name]
        assert (sp.bits, sp.signed, sp.E, sp.M, sp.bias, sp.specials, sp.subnormals,
                sp.saturate) == row[:8]
        assert float(ref.max_value(sp)) == row[8]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_attributes(name):
    (bits, signed, E, M, bias, specials, subn, sat, mx, mn, msub, eps) = PRESETS[name]
    f = getattr(softfp8, name)
    assert isinstance(f, softfp8.Format)
    assert f.name == name
    assert f.bits == bits and f.signed is signed
    assert f.exp_bits == E and f.man_bits == M and f.bias == bias
    assert f.specials == specials and f.subnormals == subn
    assert f.saturate is sat
    for attr, val in (("max", mx), ("min_normal", mn), ("eps", eps)):
        got = getattr(f, attr)
        assert isinstance(got, float) and got == val, (name, attr, got, val)
    if msub is None:
        # UHP flushes subnormals: SPEC does not pin this down; docs/semantics.md decides
        # that a format delivering no subnormals reports its smallest normal
        assert f.min_subnormal == mn
    else:
        assert f.min_subnormal == msub
    assert f.storage == np.dtype(np.uint8 if bits <= 8 else np.uint16)


@pytest.mark.parametrize("name", ["float16"])
def test_float16_agrees_with_numpy_finfo(name):
    f = softfp8.float16
    fi = np.finfo(np.float16)
    assert f.max == float(fi.max)
    assert f.min_normal == float(fi.smallest_normal)
    assert f.min_subnormal == float(fi.smallest_subnormal)
    assert f.eps == float(fi.eps)


def test_aliases_and_presets():
    for alias, name in ALIASES.items():
        a, b = getattr(softfp8, alias), getattr(softfp8, name)
        assert a == b and hash(a) == hash(b)
    p = softfp8.presets()
    assert isinstance(p, dict)
    assert set(PRESETS) <= set(p) <= set(PRESETS) | set(ALIASES)
    for name in PRESETS:
        assert p[name] == getattr(softfp8, name)
    assert not any(k.startswith(("cfloat8", "shp")) for k in p)


def test_immutability():
    f = softfp8.e4m3
    for attr, val in (("bias", 8), ("max", 1.0), ("name", "x"), ("exp_bits", 5),
                      ("new_attribute", 1)):
        with pytest.raises((AttributeError, TypeError)):
            setattr(f, attr, val)
    with pytest.raises((AttributeError, TypeError)):
        del f.bias
    assert f.bias == 7 and f.max == 448.0


def test_equality_and_hash():
    a = softfp8.format(exp_bits=3, man_bits=4, bias=3)
    b = softfp8.format(exp_bits=3, man_bits=4, bias=3)
    c = softfp8.format(exp_bits=3, man_bits=4, bias=4)
    d = softfp8.format(exp_bits=3, man_bits=4, bias=3, specials="none")
    assert a == b and hash(a) == hash(b) and not (a != b)
    assert a != c and a != d and c != d
    assert softfp8.e4m3 != softfp8.e4m3fnuz
    assert softfp8.e5m2 != softfp8.e5m2fnuz
    assert softfp8.float16 != softfp8.bfloat16
    # same encoding, different formats (docs/semantics.md, "Format identity")
    assert softfp8.e5m2 != softfp8.hfp8_152
    assert len({a, b, c, d}) == 3
    assert (softfp8.e4m3 == 3) is False
    assert softfp8.e4m3 != "e4m3"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_decode_every_code(name):
    f = getattr(softfp8, name)
    spec = SPECS[name]
    n = 2 ** spec.bits
    step = 1 if n <= 256 else 7  # every code up to 8 bits; every 7th 16-bit code (+ edges)
    codes = sorted(set(range(0, n, step)) | {0, 1, n // 2, n // 2 + 1, n - 1, n // 2 - 1,
                                           (1 << spec.M), (1 << spec.M) - 1})
    count = 0
    for c in codes:
        got = f.decode(c)
        exp = ref.decode_float(spec, c)
        assert isinstance(got, float)
        if math.isnan(exp):
            assert math.isnan(got), (name, hex(c), got)
        else:
            assert got == exp and math.copysign(1, got) == math.copysign(1, exp), (
                name, hex(c), got, exp)
        count += 1
    assert count == len(codes) >= (n if n <= 256 else 9362)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_to_float_every_code(name):
    f = getattr(softfp8, name)
    spec = SPECS[name]
    n = 2 ** spec.bits
    vals, flags = sb.to_float(np.arange(n), f)
    vals, flags = np.asarray(vals), np.asarray(flags)
    assert vals.dtype == np.float64 and vals.shape == (n,)
    exp = np.array([ref.decode_float(spec, c) for c in range(n)])
    nan = np.isnan(exp)
    assert np.array_equal(np.isnan(vals), nan)
    assert np.array_equal(vals[~nan], exp[~nan])
    assert np.array_equal(np.signbit(vals[~nan]), np.signbit(exp[~nan]))
    cls = [ref.classify(spec, c) for c in range(n)]
    exp_flags = [DENORMAL if k == "sub" else INVALID if k == "snan" else 0 for k in cls]
    assert flags.tolist() == exp_flags


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_encode_round_trip(name):
    f = getattr(softfp8, name)
    spec = SPECS[name]
    n = 2 ** spec.bits
    step = 1 if n == 256 else 13
    count = 0
    for c in range(0, n, step):
        k = ref.classify(spec, c)
        if k in ("qnan", "snan") or (k == "sub" and spec.subnormals == "flush"):
            continue
        x = ref.decode_float(spec, c)
        got = f.encode(x)
        assert isinstance(got, int)
        assert got == c, (name, hex(c), x, got)
        count += 1
    assert count > 0
    if spec.specials == "none":
        assert f.encode(float("nan")) == ref.max_code(spec)  # NaN -> +max
    else:
        assert ref.is_nan(spec, f.encode(float("nan")))


def test_encode_rounding_examples():
    e4 = softfp8.e4m3
    assert e4.encode(464.0) == 0x7E  # SPEC 1: 464 -> 448, no overflow
    assert e4.encode(465.0) == 0x7F  # overflows: NaN (no infinity, not saturating)
    assert e4.encode(465.0, saturate=True) == 0x7E
    assert e4.encode(-465.0) == 0xFF
    assert e4.encode(1.0625) == 0x38  # tie -> even
    assert e4.encode(1.0625, rounding="nearest_away") == 0x39
    assert e4.encode(1.0625, rounding="upward") == 0x39
    assert e4.encode(1.01, rounding="to_odd") == 0x39
    assert e4.encode(np.float32(2.0)) == 0x40
    assert softfp8.e5m2.encode(1e9) == 0x7C
    assert softfp8.e5m2.encode(1e9, rounding="toward_zero") == 0x7B
    R = 2 ** 31  # f = 1/2, N = 32: up iff R >= 2^31
    assert e4.encode(1.0625, rounding="stochastic", random_bits=R) == 0x39
    assert e4.encode(1.0625, rounding="stochastic", random_bits=R - 1) == 0x38


def test_flags_enum():
    F = softfp8.Flags
    assert issubclass(F, enum.IntFlag)
    assert (F.INEXACT, F.UNDERFLOW, F.OVERFLOW, F.DIVBYZERO, F.INVALID, F.DENORMAL) == (
        0x01, 0x02, 0x04, 0x08, 0x10, 0x20)
    assert F(0x11) == F.INVALID | F.INEXACT
    assert len(list(F)) == 6


# ---------------------------------------------------------------------------
# the general factory
# ---------------------------------------------------------------------------

GENERAL = [
    dict(exp_bits=3, man_bits=4, bias=3),
    dict(exp_bits=2, man_bits=5, bias=1, specials="none"),
    dict(exp_bits=7, man_bits=8, bias=63, specials="fn"),
    dict(exp_bits=5, man_bits=3, bias=10, specials="fnuz"),
    dict(exp_bits=4, man_bits=4, bias=7, signed=False),
    dict(exp_bits=1, man_bits=2, bias=0, specials="none"),
    dict(exp_bits=3, man_bits=0, bias=2, specials="none"),
    dict(exp_bits=5, man_bits=10, bias=15),
    dict(exp_bits=6, man_bits=10, bias=31, signed=False, subnormals="flush"),
    dict(exp_bits=4, man_bits=3, bias=5, specials="none", subnormals="tesla"),
]


@pytest.mark.parametrize("kw", GENERAL, ids=[str(i) for i in range(len(GENERAL))])
def test_factory_general(kw):
    f = softfp8.format(**kw)
    signed = kw.get("signed", True)
    spec = ref.Spec(int(signed) + kw["exp_bits"] + kw["man_bits"], signed, kw["exp_bits"],
                    kw["man_bits"], kw["bias"], kw.get("specials", "ieee"),
                    kw.get("subnormals", "ieee"), kw.get("specials", "ieee") == "none")
    assert f.bits == spec.bits and f.signed is signed
    assert (f.exp_bits, f.man_bits, f.bias, f.specials, f.subnormals) == (
        spec.E, spec.M, spec.bias, spec.specials, spec.subnormals)
    assert f.max == float(ref.max_value(spec))
    assert f.min_normal == 2.0 ** (1 - spec.bias)
    assert f.eps == 2.0 ** -spec.M
    if spec.subnormals != "flush" and spec.M > 0:
        assert f.min_subnormal == float(ref.min_subnormal(spec))
    else:  # no subnormals delivered: the smallest normal (docs/semantics.md)
        assert f.min_subnormal == f.min_normal
    n = 2 ** spec.bits
    vals, _ = sb.to_float(np.arange(n), f)
    exp = np.array([ref.decode_float(spec, c) for c in range(n)])
    nan = np.isnan(exp)
    vals = np.asarray(vals)
    assert np.array_equal(np.isnan(vals), nan)
    assert np.array_equal(vals[~nan], exp[~nan])
    assert f == softfp8.format(**kw)


BAD_FACTORY = [
    (dict(exp_bits=0, man_bits=3, bias=7), ("exp_bits", "exponent"), ValueError),
    (dict(exp_bits=4, man_bits=-1, bias=7), ("-1",), ValueError),
    (dict(exp_bits=4, man_bits=-3, bias=7), ("-3",), ValueError),
    (dict(exp_bits=8, man_bits=10, bias=7), ("19", "16"), ValueError),
    (dict(exp_bits=6, man_bits=10, bias=31), ("17", "16"), ValueError),
    (dict(exp_bits=4, man_bits=3, bias=7, specials="foo"), ("foo",), ValueError),
    (dict(exp_bits=4, man_bits=3, bias=7, subnormals="bar"), ("bar",), ValueError),
    (dict(exp_bits="4", man_bits=3, bias=7), ("'4'", "str"), TypeError),
    (dict(exp_bits=4.5, man_bits=3, bias=7), ("4.5",), (TypeError, ValueError)),
    (dict(exp_bits=4, man_bits=3, bias="7"), ("'7'", "str"), TypeError),
    (dict(exp_bits=4, man_bits=None, bias=7), ("None",), TypeError),
    (dict(exp_bits=4, man_bits=3, bias=7, specials=3), ("3",), (TypeError, ValueError)),
]


@pytest.mark.parametrize("kw,names,exc", BAD_FACTORY, ids=[str(i) for i in range(len(BAD_FACTORY))])
def test_factory_validation(kw, names, exc):
    with pytest.raises((ValueError, TypeError)) as ei:
        softfp8.format(**kw)
    assert issubclass(ei.type, exc), (kw, ei.type)
    msg = str(ei.value)
    assert any(n in msg for n in names), (kw, msg)


# ---------------------------------------------------------------------------
# softfp8.bits argument checking
# ---------------------------------------------------------------------------


def test_codes_out_of_range():
    e4, f16 = softfp8.e4m3, softfp8.float16
    for bad in (256, -1, 1000):
        with pytest.raises(ValueError) as ei:
            sb.add(e4, np.array([1, bad]), 0)
        assert str(bad) in str(ei.value)
    with pytest.raises(ValueError) as ei:
        sb.add(e4, 0, 256)
    assert "256" in str(ei.value)
    with pytest.raises(ValueError) as ei:
        sb.sqrt(f16, 65536)
    assert "65536" in str(ei.value)
    with pytest.raises(ValueError):
        sb.to_float(np.array([300], dtype=np.int16), e4)
    with pytest.raises(ValueError):
        sb.neg(e4, -1)
    with pytest.raises(ValueError):
        sb.compare(e4, 0, 256)
    # a 15-bit unsigned... UHP takes all 16-bit codes; 65536 is out of range
    with pytest.raises(ValueError):
        sb.add(softfp8.uhp, 65536, 0)
    # in range: uint64 / Python ints / int8 are all fine
    assert one(sb.add(e4, np.uint64(0x38), 0x38)) == (0x40, 0)
    assert one(sb.add(e4, np.int8(0x38), np.int16(0x38))) == (0x40, 0)


def test_float_arrays_rejected_as_codes():
    e4 = softfp8.e4m3
    for bad in (np.array([1.0, 2.0]), np.float64(1.0), 1.5, np.array([1.0], np.float32)):
        with pytest.raises(TypeError):
            sb.add(e4, bad, 0)
    with pytest.raises(TypeError):
        sb.to_float(np.array([0.5]), e4)
    with pytest.raises(TypeError):
        sb.mul(e4, 0, "a")


def test_bad_options():
    e4 = softfp8.e4m3
    for bad in ("nearest", "NEAREST_EVEN", "rne", ""):
        with pytest.raises(ValueError) as ei:
            sb.add(e4, 0x38, 0x38, rounding=bad)
        assert repr(bad) in str(ei.value) or bad in str(ei.value)
    with pytest.raises((ValueError, TypeError)):
        sb.add(e4, 0x38, 0x38, rounding=3)
    for bad in (0, 33, -1):
        with pytest.raises(ValueError) as ei:
            sb.from_float(np.array([1.01]), e4, rounding="stochastic", sr_bits=bad, seed=1)
        msg = str(ei.value)
        assert str(bad) in msg and "sr_bits" in msg, msg
    with pytest.raises(ValueError) as ei:
        sb.add(e4, 0x38, 0x38, tininess="during")
    assert "during" in str(ei.value)


def test_mismatched_shapes():
    e4 = softfp8.e4m3
    with pytest.raises(ValueError) as ei:
        sb.add(e4, np.zeros(3, int), np.zeros(4, int))
    msg = str(ei.value).lower()
    assert "shape" in msg or "broadcast" in msg, msg
    with pytest.raises(ValueError):
        sb.fma(e4, np.zeros((2, 3), int), np.zeros(3, int), np.zeros(2, int))
    with pytest.raises(ValueError) as ei:
        sb.from_float(np.zeros(3), e4, rounding="stochastic",
                      random_bits=np.zeros(4, np.uint32))
    msg = str(ei.value).lower()
    assert "shape" in msg or "broadcast" in msg or "random_bits" in msg, msg


def test_broadcasting_and_0d():
    e4 = softfp8.e4m3
    sp = SPECS["e4m3"]
    vals_a = [1.0, 2.0, 0.5]
    vals_b = [0.25, 4.0, -1.0, 0.0]
    a = np.array([code("e4m3", v) for v in vals_a]).reshape(3, 1)
    b = np.array([code("e4m3", v) for v in vals_b]).reshape(1, 4)
    c, f = sb.add(e4, a, b)
    c, f = np.asarray(c), np.asarray(f)
    assert c.shape == f.shape == (3, 4)
    assert c.dtype == np.uint8 and f.dtype == np.uint8
    exp = [[ref.round_value(sp, *ref.to_fraction(x + y))[0] for y in vals_b] for x in vals_a]
    assert c.tolist() == exp
    assert not f.any()
    # three-operand broadcast
    c, f = sb.fma(e4, np.zeros((2, 1, 1), int) + 0x38, a, np.zeros(4, int))
    assert np.asarray(c).shape == (2, 3, 4)
    assert np.asarray(c)[1].tolist() == np.broadcast_to(a, (3, 4)).tolist()
    # scalars -> 0-d arrays
    c, f = sb.add(e4, 0x38, 0x38)
    assert isinstance(c, np.ndarray) and c.shape == () and c.dtype == np.uint8
    assert isinstance(f, np.ndarray) and f.shape == () and f.dtype == np.uint8
    assert int(c) == 0x40
    v, f = sb.to_float(0x38, e4)
    assert np.asarray(v).shape == () and float(v) == 1.0
    c, f = sb.from_float(np.float32(1.0), e4)
    assert np.asarray(c).shape == () and int(c) == 0x38
    c, f = sb.from_float(np.array(1.0), softfp8.float16)
    assert np.asarray(c).shape == () and np.asarray(c).dtype == np.uint16 and int(c) == 0x3C00
    # empty
    c, f = sb.mul(e4, np.zeros((0, 3), int), 0x38)
    assert np.asarray(c).shape == (0, 3)


# ---------------------------------------------------------------------------
# compare / min / max / neg / abs / copysign
# ---------------------------------------------------------------------------

# e5m2 (ieee): 0x7E qNaN, 0x7D sNaN, 0x7C inf; float16 0x7E00 qNaN, 0x7D00 sNaN
SIMPLE = {"e5m2": dict(one=0x3C, two=0x40, qnan=0x7E, snan=0x7D, inf=0x7C, sbit=0x80),
          "float16": dict(one=0x3C00, two=0x4000, qnan=0x7E00, snan=0x7D00, inf=0x7C00,
                          sbit=0x8000)}


@pytest.mark.parametrize("name", sorted(SIMPLE))
def test_compare(name):
    f = getattr(softfp8, name)
    k = SIMPLE[name]
    one_, two, qnan, snan, inf, s = k["one"], k["two"], k["qnan"], k["snan"], k["inf"], k["sbit"]
    for sig in (False, True):
        assert one(sb.compare(f, one_, two, signaling=sig)) == (-1, 0)
        assert one(sb.compare(f, two, one_, signaling=sig)) == (1, 0)
        assert one(sb.compare(f, two, two, signaling=sig)) == (0, 0)
        assert one(sb.compare(f, 0, s, signaling=sig)) == (0, 0)  # +0 == -0
        assert one(sb.compare(f, inf | s, one_, signaling=sig)) == (-1, 0)
        assert one(sb.compare(f, inf, inf, signaling=sig)) == (0, 0)
        assert one(sb.compare(f, one_ | s, 0, signaling=sig)) == (-1, 0)
        assert one(sb.compare(f, snan, one_, signaling=sig)) == (2, INVALID)
        assert one(sb.compare(f, one_, snan | s, signaling=sig)) == (2, INVALID)
    assert one(sb.compare(f, qnan, one_)) == (2, 0)  # quiet compare: qNaN is quiet
    assert one(sb.compare(f, qnan, qnan)) == (2, 0)
    assert one(sb.compare(f, qnan, one_, signaling=True)) == (2, INVALID)
    assert one(sb.compare(f, one_, qnan | s, signaling=True)) == (2, INVALID)
    r, fl = sb.compare(f, np.array([one_, two, qnan]), np.array([[two], [one_]]))
    assert np.asarray(r).dtype == np.int8
    assert np.asarray(r).tolist() == [[-1, 0, 2], [0, 1, 2]]
    # subnormal operand: denormal
    assert one(sb.compare(f, 1, 0)) == (1, DENORMAL)


@pytest.mark.parametrize("name", sorted(SIMPLE))
def test_min_max(name):
    f = getattr(softfp8, name)
    k = SIMPLE[name]
    one_, two, qnan, snan, s = k["one"], k["two"], k["qnan"], k["snan"], k["sbit"]
    sp = SPECS[name]

    def isnan(res):
        return ref.is_nan(sp, int(np.asarray(res[0])))

    assert one(sb.min(f, one_, two)) == (one_, 0)
    assert one(sb.max(f, one_, two)) == (two, 0)
    assert one(sb.min(f, two | s, one_)) == (two | s, 0)
    assert one(sb.min(f, 0, s)) == (s, 0) and one(sb.min(f, s, 0)) == (s, 0)  # -0 < +0
    assert one(sb.max(f, 0, s)) == (0, 0) and one(sb.max(f, s, 0)) == (0, 0)
    # min / max propagate NaN
    for fn in (sb.min, sb.max):
        r = fn(f, one_, qnan)
        assert isnan(r) and int(np.asarray(r[1])) == 0
        r = fn(f, qnan, one_)
        assert isnan(r) and int(np.asarray(r[1])) == 0
        r = fn(f, snan, one_)
        assert isnan(r) and int(np.asarray(r[1])) == INVALID
    # minnum / maxnum ignore a quiet NaN
    assert one(sb.minnum(f, one_, qnan)) == (one_, 0)
    assert one(sb.minnum(f, qnan, two)) == (two, 0)
    assert one(sb.maxnum(f, qnan, one_ | s)) == (one_ | s, 0)
    assert one(sb.maxnum(f, one_, two)) == (two, 0)
    assert one(sb.minnum(f, s, 0)) == (s, 0)
    assert one(sb.maxnum(f, s, 0)) == (0, 0)
    r = sb.minnum(f, qnan, qnan)
    assert isnan(r) and int(np.asarray(r[1])) == 0
    # a signalling NaN raises invalid (IEEE 754-2019 minimumNumber returns the number)
    r = sb.maxnum(f, snan, one_)
    assert int(np.asarray(r[1])) == INVALID


def test_neg_abs_copysign():
    e4 = softfp8.e4m3
    codes = np.arange(256)
    assert np.asarray(sb.neg(e4, codes)).tolist() == (codes ^ 0x80).tolist()
    assert np.asarray(sb.abs(e4, codes)).tolist() == (codes & 0x7F).tolist()
    assert np.asarray(sb.copysign(e4, codes, 0x80)).tolist() == (codes | 0x80).tolist()
    assert np.asarray(sb.copysign(e4, codes, 0x01)).tolist() == (codes & 0x7F).tolist()
    c = sb.neg(e4, 0x38)
    assert isinstance(c, np.ndarray) and c.dtype == np.uint8 and int(c) == 0xB8
    f16 = softfp8.float16
    assert int(sb.neg(f16, 0x7E00)) == 0xFE00  # sign of a NaN flips too (bit operation)
    assert int(sb.abs(f16, 0xFC00)) == 0x7C00
    # fnuz: zero has no negative; the NaN is the '-0' code
    fz = softfp8.e4m3fnuz
    assert int(sb.neg(fz, 0x00)) == 0x00
    assert int(sb.neg(fz, 0x38)) == 0xB8


# ---------------------------------------------------------------------------
# integers
# ---------------------------------------------------------------------------


TO_INT = [  # value, mode, expected, flags
    (2.5, "nearest_even", 2, INEXACT), (2.5, "nearest_away", 3, INEXACT),
    (2.5, "toward_zero", 2, INEXACT), (2.5, "upward", 3, INEXACT),
    (2.5, "downward", 2, INEXACT), (2.5, "to_odd", 3, INEXACT),
    (-2.5, "nearest_even", -2, INEXACT), (-2.5, "nearest_away", -3, INEXACT),
    (-2.5, "toward_zero", -2, INEXACT), (-2.5, "upward", -2, INEXACT),
    (-2.5, "downward", -3, INEXACT), (-2.5, "to_odd", -3, INEXACT),
    (3.5, "nearest_even", 4, INEXACT), (3.5, "to_odd", 3, INEXACT),
    (0.25, "upward", 1, INEXACT), (-0.25, "upward", 0, INEXACT),
    (0.25, "nearest_even", 0, INEXACT), (-0.75, "toward_zero", 0, INEXACT),
    (448.0, "nearest_even", 448, 0), (-448.0, "to_odd", -448, 0),
    (0.0, "downward", 0, 0), (-0.0, "upward", 0, 0), (6.0, "to_odd", 6, 0),
]


@pytest.mark.parametrize("x,mode,exp,fl", TO_INT)
def test_to_int64(x, mode, exp, fl):
    e4 = softfp8.e4m3
    r, f = sb.to_int64(e4, code("e4m3", x), rounding=mode)
    assert np.asarray(r).dtype == np.int64
    assert (int(r), int(f)) == (exp, fl)


def test_to_int64_special():
    bf = softfp8.bfloat16
    cases = [
        (0x7FC0, INT64_MAX, INVALID),  # qNaN
        (0xFFC0, INT64_MAX, INVALID),  # -qNaN: still INT64_MAX
        (0x7F80, INT64_MAX, INVALID),  # +inf
        (0xFF80, INT64_MIN, INVALID),  # -inf
        (0x7F7F, INT64_MAX, INVALID),  # 3.39e38
        (0xFF7F, INT64_MIN, INVALID),
        (0x5F00, INT64_MAX, INVALID),  # 2^63: one above INT64_MAX
        (0xDF00, INT64_MIN, 0),        # -2^63 == INT64_MIN exactly
        (0x5EFF, (2 ** 8 - 1) * 2 ** 55, 0),  # largest bfloat16 below 2^63
        (0x0001, 0, INEXACT | DENORMAL),  # smallest subnormal
    ]
    codes = np.array([c[0] for c in cases])
    r, f = sb.to_int64(bf, codes)
    assert np.asarray(r).tolist() == [c[1] for c in cases]
    assert np.asarray(f).tolist() == [c[2] for c in cases]
    # float16 / e5m2 infinities
    assert one(sb.to_int64(softfp8.e5m2, 0xFC)) == (INT64_MIN, INVALID)
    assert one(sb.to_int64(softfp8.float16, 0x7C00)) == (INT64_MAX, INVALID)
    assert one(sb.to_int64(softfp8.float16, 0x7BFF)) == (65504, 0)


def test_from_int64():
    e4 = softfp8.e4m3
    sp = SPECS["e4m3"]
    xs = np.array([0, 1, -1, 17, -17, 19, 448, 464, 465, 1000, -1000, 2 ** 62, INT64_MIN,
                   INT64_MAX], dtype=np.int64)
    for mode in ref.ROUNDINGS:
        for sat in (None, True):
            c, f = sb.from_int64(xs, e4, rounding=mode, saturate=sat)
            exp = [ref.round_value(sp, int(x < 0), Fraction(abs(int(x))), mode, saturate=sat)
                   for x in xs]
            assert np.asarray(c).tolist() == [e[0] for e in exp], (mode, sat)
            assert np.asarray(f).tolist() == [e[1] for e in exp], (mode, sat)
    # written out: 17 -> 16 (tie, even), 465 overflows to NaN
    c, f = sb.from_int64(np.array([17, 465]), e4)
    assert np.asarray(c).tolist() == [0x58, 0x7F]
    assert np.asarray(f).tolist() == [INEXACT, OVERFLOW | INEXACT]
    # float16 and bfloat16, Python ints accepted
    assert one(sb.from_int64(2049, softfp8.float16)) == (0x6800, INEXACT)
    assert one(sb.from_int64(65520, softfp8.float16)) == (0x7C00, OVERFLOW | INEXACT)
    assert one(sb.from_int64(-(2 ** 63), softfp8.bfloat16)) == (0xDF00, 0)
    # UHP: negatives are NaN with invalid only
    assert one(sb.from_int64(-3, softfp8.uhp)) == (0xFE00, INVALID)
    assert one(sb.from_int64(0, softfp8.uhp)) == (0, 0)


def test_round_integral():
    e4 = softfp8.e4m3
    cases = [  # x, mode, expected value
        (2.5, "nearest_even", 2.0), (2.5, "nearest_away", 3.0), (3.5, "nearest_even", 4.0),
        (-0.5, "nearest_even", -0.0), (-0.5, "upward", -0.0), (0.25, "upward", 1.0),
        (-0.25, "downward", -1.0), (0.75, "toward_zero", 0.0), (2.25, "to_odd", 3.0),
        (5.0, "downward", 5.0), (448.0, "upward", 448.0), (1.125, "nearest_even", 1.0),
    ]
    for x, mode, y in cases:
        exp = code("e4m3", y)
        inexact = x != y
        assert one(sb.round_integral(e4, code("e4m3", x), rounding=mode)) == (exp, 0), (x, mode)
        assert one(sb.round_integral(e4, code("e4m3", x), exact=True, rounding=mode)) == (
            exp, INEXACT if inexact else 0), (x, mode)
    # NaN / inf / zeros unchanged; sNaN signals
    f16 = softfp8.float16
    for c in (0x7C00, 0xFC00, 0x0000, 0x8000):
        assert one(sb.round_integral(f16, c)) == (c, 0)
    r = sb.round_integral(f16, 0x7D00)
    assert ref.is_nan(SPECS["float16"], int(r[0])) and int(r[1]) == INVALID
    # subnormal operand: denormal; rounds to +0
    assert one(sb.round_integral(f16, 0x0001)) == (0x0000, DENORMAL)
