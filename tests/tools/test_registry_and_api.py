"""The format registry's derived tables, and regression tests of issue 8's Python defects:
scalar operators recursing, save/load of 0-d arrays, lookup of parametric names,
matmul's out= checks, dtypes accepted wherever a format is."""
import io
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from ..models import fraction_model as ref
import softfp8
import softfp8.bits as sfb
from softfp8 import _dtypes, _formats, _interop, _registry
from softfp8.__main__ import _presets, code_class, fmt_code, main, parse_code

# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------


def test_registry_joins_the_c_table():
    rows = [r.name for r in _registry.ROWS]
    c_names = list(_formats._PRESET_ROWS)
    assert sorted(rows) == sorted(c_names) and len(rows) == len(set(rows)) == 21
    assert set(_formats.PRESETS) | set(_formats.FAMILIES) == set(rows)
    assert set(_formats.FAMILIES) == {"cfloat8_143", "cfloat8_152", "shp"}


def test_every_name_is_a_module_attribute_and_exported():
    names = 0
    for row in _registry.ROWS:
        obj = getattr(softfp8, row.name)
        assert row.name in softfp8.__all__
        for alias in row.aliases:
            assert getattr(softfp8, alias) is obj and alias in softfp8.__all__
            assert softfp8.lookup(alias) is obj or isinstance(obj, softfp8.TeslaFamily)
            names += 1
        names += 1
    assert names == 21 + 10
    # __all__ names exist and are unique
    assert len(softfp8.__all__) == len(set(softfp8.__all__))
    assert all(hasattr(softfp8, n) for n in softfp8.__all__)


def test_dtype_class_names_from_the_registry():
    for row in _registry.ROWS:
        fmt = getattr(softfp8, row.name)
        fmt = fmt(bias=5) if isinstance(fmt, softfp8.TeslaFamily) else fmt
        assert type(fmt.dtype).__name__ == row.dtype
        assert type(fmt.dtype).type.__name__ == row.dtype[:-len("DType")]
    assert type(softfp8.format(exp_bits=3, man_bits=2, bias=3).dtype).__name__ == "SoftFloatDType"


def test_interop_tables_from_the_registry():
    assert _interop._ML_DTYPES == {r.name: r.ml_dtypes for r in _registry.ROWS if r.ml_dtypes}
    assert _interop._TORCH == {r.name: r.torch for r in _registry.ROWS if r.torch}
    assert len(_interop._ML_DTYPES) == 12 and len(_interop._TORCH) == 7


def test_cli_formats_from_the_registry():
    table = _presets()
    assert list(table) == list(_formats.PRESETS)
    assert table["float8_e3m4"][1] == ["e3m4"] and table["e4m3"][1] == ["float8_e4m3fn"]
    lines = []
    assert main.__module__ == "softfp8.__main__"
    from softfp8.__main__ import build_parser
    ns = build_parser().parse_args(["formats"])
    ns.func(ns, out=lines.append)
    text = "\n".join(lines)
    for name in ("float8_e4m3 ", "float8_e3m4 (e3m4)", "float8_e4m3b11fnuz (e4m3b11fnuz)"):
        assert name in text


def _independent_rank(values):
    """Smallest of float16 (1), float32 (2), float64 (3) holding every value exactly."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    for rank, t in ((1, np.float16), (2, np.float32), (3, np.float64)):
        with np.errstate(all="ignore"):
            if np.array_equal(v.astype(t).astype(np.float64), v):
                return rank
    return 0


def test_promotion_ranks_are_the_value_sets():
    """_FLOAT_RANK is computed by softfp8 from conversion flags; here it is recomputed
    from the rational model's values (tests/models/fraction_model.py), over every bias of the Tesla families."""
    checked = 0
    for name in _formats.PRESETS:
        spec = ref.SPECS[name]
        vals = [ref.decode_float(spec, c) for c in range(1 << spec.bits)]
        assert _dtypes._FLOAT_RANK[name] == _independent_rank(vals), name
        checked += 1
    for fam in _formats.FAMILIES:
        vals = []
        for sub in ("tesla", "ieee"):
            spec = ref.tesla_spec(fam, 0, sub)
            base = np.array([ref.decode_float(spec, c) for c in range(1 << spec.bits)])
            # bias b scales every value of bias 0 by 2^-b (exact in float64)
            vals += [np.ldexp(base, -b) for b in range(64)]
        assert _dtypes._FLOAT_RANK[fam] == _independent_rank(np.concatenate(vals)), fam
        checked += 1
    assert checked == 21
    assert _dtypes._FLOAT_RANK["format"] == 0
    # and they drive class-level promotion with NumPy floats
    assert np.result_type(softfp8.float8_e3m4.dtype, np.float16) == np.float16
    assert np.result_type(softfp8.bfloat16.dtype, np.float16) == np.float32


# --------------------------------------------------------------------------
# (a) scalar operators: no RecursionError
# --------------------------------------------------------------------------

ODD = [None, object(), Decimal("1.5"), "x"]


@pytest.mark.parametrize("other", ODD, ids=["None", "object", "Decimal", "str"])
def test_operators_with_foreign_objects_raise_typeerror(other):
    a = np.array([1.5, 2.0], dtype=softfp8.e4m3)
    s = a[0]
    h = np.float16(1.5)
    ops = [lambda x: x + other, lambda x: x - other, lambda x: x * other,
           lambda x: x / other, lambda x: other + x, lambda x: x // other, lambda x: x % other]
    if not isinstance(other, Decimal):
        # (Decimal orders itself against Python floats, so a softfp8 scalar, computing
        # as a Python float, compares with it where float16 raises TypeError)
        ops.append(lambda x: x < other)
    for fn in ops:
        with pytest.raises(TypeError):
            fn(h)                       # what NumPy's own scalar does ...
        with pytest.raises(TypeError):
            fn(s)                       # ... and softfp8's (not RecursionError)
    with pytest.raises(TypeError):
        a + other
    if isinstance(other, Decimal):
        assert (s == other) is True and (s != other) is False     # 1.5 == Decimal("1.5")
    else:
        assert (s == other) is False and (s != other) is True


def test_operators_with_fraction_match_numpy_scalars():
    s = np.array([1.5], dtype=softfp8.e4m3)[0]
    h = np.float16(1.5)
    third = Fraction(1, 3)
    for fn in (lambda x: x + third, lambda x: third + x, lambda x: x * third,
               lambda x: x - third, lambda x: third / x):
        want = fn(h)
        got = fn(s)
        assert type(got) is type(want) is float and got == want
    assert s + third == 1.5 + 1 / 3
    assert (s == Fraction(3, 2)) is (h == Fraction(3, 2)) is True
    assert (Fraction(3, 2) == s) is True
    assert (s < Fraction(2)) is True and (Fraction(2) > s) is True
    assert s.imag == 0 and s.real == s
    arr = np.array([1.5, 2.0], dtype=softfp8.e4m3) + third
    assert arr.dtype == object and arr.tolist() == [1.5 + 1 / 3, 2 + 1 / 3]


def test_operators_with_numbers_and_arrays_still_use_the_ufuncs():
    s = np.array([1.5], dtype=softfp8.e4m3)[0]
    assert (s + 2.0).dtype == softfp8.e4m3.dtype and float(s + 2.0) == 3.5
    assert float(s + s) == 3.0 and float(2 * s) == 3.0
    assert (s + [1.0, 2.0]).tolist() == [2.5, 3.5]
    with softfp8.collect_flags() as fl, np.errstate(divide="ignore"):
        r = s / np.array([0.0], dtype=softfp8.e4m3)[0]
    assert fl.divbyzero and math.isnan(float(r))        # e4m3 has no infinity: NaN
    with pytest.raises(TypeError):
        s + [1, None]
    obj = np.array([1.0, Fraction(1, 2)], dtype=object)
    assert (s + obj).tolist() == [2.5, 2.0]


# --------------------------------------------------------------------------
# (b) save / load keep the shape, 0-d included
# --------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (1,), (0,), (2, 3), (1, 1, 1)])
def test_save_load_shapes(shape):
    fmt = softfp8.cfloat8_143(bias=9)
    codes = np.arange(int(np.prod(shape)), dtype=np.uint8).reshape(shape) * 7
    a = codes.view(fmt.dtype)
    buf = io.BytesIO()
    softfp8.save(buf, a)
    buf.seek(0)
    b = softfp8.load(buf)
    assert b.shape == shape and b.dtype == a.dtype
    assert np.array_equal(b.view(np.uint8), codes)


# --------------------------------------------------------------------------
# (c) lookup reads every format's name back
# --------------------------------------------------------------------------

LOOKUP = [softfp8.cfloat8_143(bias=20), softfp8.cfloat8_152(bias=0),
          softfp8.shp(bias=3, subnormals="ieee"), softfp8.shp(bias=63),
          softfp8.format(exp_bits=5, man_bits=4, bias=15),
          softfp8.format(exp_bits=3, man_bits=4, bias=3, specials="fnuz", signed=True),
          softfp8.format(exp_bits=4, man_bits=3, bias=-2, signed=False, subnormals="flush",
                         saturate=True)]


@pytest.mark.parametrize("fmt", LOOKUP + list(softfp8.presets().values()),
                         ids=[f.name for f in LOOKUP + list(softfp8.presets().values())])
def test_lookup_reads_names_back(fmt):
    assert softfp8.lookup(fmt.name) == fmt
    # the dtype of an equal format made earlier may hold that earlier (equal) object
    assert softfp8.lookup(fmt) is fmt and softfp8.lookup(fmt.dtype) == fmt


def test_lookup_bad_names():
    with pytest.raises(ValueError, match="unknown format"):
        softfp8.lookup("cfloat8_999(bias=3)")
    with pytest.raises(ValueError, match="0..63"):
        softfp8.lookup("cfloat8_143(bias=64)")
    with pytest.raises(ValueError, match="literals"):
        softfp8.lookup("cfloat8_143(bias=__import__('os'))")
    with pytest.raises(ValueError, match="twice"):
        softfp8.lookup("cfloat8_143(bias=3)", bias=4)
    with pytest.raises(TypeError):
        softfp8.lookup("shp(bias=3, colour='red')")
    with pytest.raises(TypeError, match="string"):
        softfp8.lookup(3)


# --------------------------------------------------------------------------
# (d) matmul checks out= against the result's shape and dtype
# --------------------------------------------------------------------------


def test_matmul_out_wrong_shape_names_the_shapes():
    a = np.ones((4, 8), dtype=softfp8.e4m3)
    b = np.ones((8, 3), dtype=softfp8.e4m3)
    with pytest.raises(ValueError, match=r"out has shape \(4, 4\), expected \(4, 3\)"):
        softfp8.matmul(a, b, out=np.empty((4, 4), np.float32), out_dtype=np.float32)
    with pytest.raises(TypeError, match="out has dtype float64, expected float32"):
        softfp8.matmul(a, b, out=np.empty((4, 3), np.float64), out_dtype=np.float32)
    with pytest.raises(ValueError, match=r"shapes \(4, 8\) and \(4, 8\) do not fit"):
        softfp8.matmul(a, a, out_dtype=np.float32)
    with pytest.raises(TypeError, match="out must be a NumPy array"):
        softfp8.matmul(a, b, out=[[0.0] * 3] * 4, out_dtype=np.float32)


@pytest.mark.parametrize("ashape,bshape", [((4, 8), (8, 3)), ((8,), (8, 3)), ((4, 8), (8,)),
                                           ((8,), (8,)), ((2, 4, 8), (8, 3))])
def test_matmul_out_right_shape_fills_it(ashape, bshape):
    rng = np.random.default_rng(1)
    a = rng.uniform(-2, 2, ashape).astype(softfp8.e4m3)
    b = rng.uniform(-2, 2, bshape).astype(softfp8.e4m3)
    want = softfp8.matmul(a, b, out_dtype=np.float64)
    # exact reference: the dot products of the float64 values (few terms, exact in float64)
    assert np.array_equal(want, np.matmul(a.astype(np.float64), b.astype(np.float64)))
    out = np.full(want.shape, np.nan)
    got = softfp8.matmul(a, b, out_dtype=np.float64, out=out)
    assert got is out and np.array_equal(out, want)
    # out_dtype given as the operands' format or dtype: the softfp8 product
    same = softfp8.matmul(a, b, out_dtype=softfp8.e4m3)
    assert same.dtype == a.dtype and np.array_equal(same.view(np.uint8), (a @ b).view(np.uint8))


# --------------------------------------------------------------------------
# (e) a dtype is accepted wherever a format is
# --------------------------------------------------------------------------


def test_dtypes_accepted_as_formats():
    arr = np.array([1.5, 2.0], dtype=softfp8.e4m3)
    a = arr.view(np.uint8)
    for fmt in (softfp8.e4m3, arr.dtype, type(arr.dtype), type(arr[0])):
        assert softfp8.finfo(fmt).max == 448.0
        assert fmt_code(fmt, 5) == "0x05" and parse_code(fmt, "0x7e") == 0x7E
        assert code_class(fmt, 0x7F) == "nan"
        assert softfp8.to_ml_dtypes(fmt) == np.dtype("float8_e4m3fn") if _has_ml() else True
        assert softfp8.lookup(fmt) is softfp8.e4m3
        assert sfb._check_format(fmt) is softfp8.e4m3
    with pytest.raises(TypeError, match=r"softfp8 format or its dtype .* got dtype\('float32'\)"):
        sfb._check_format(np.dtype(np.float32))
    with pytest.raises(TypeError, match="got 'e4m3'"):
        sfb._check_format("e4m3")
    with pytest.raises(TypeError, match="finfo"):
        softfp8.finfo(np.float32)
    assert softfp8.finfo("cfloat8_143(bias=20)").max == softfp8.cfloat8_143(bias=20).max
    # a parametric family's DType class alone names no format
    with pytest.raises(TypeError):
        sfb._check_format(type(softfp8.shp(bias=2).dtype))
    del a


def test_bits_accepts_dtypes():
    """softfp8.bits.add(arr.dtype, ...) and convert(..., dtype, ...) take dtypes as formats."""
    arr = np.array([1.5, 2.0], dtype=softfp8.e4m3)
    a = arr.view(np.uint8)
    want = sfb.add(softfp8.e4m3, a, a)
    got = sfb.add(arr.dtype, a, a)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert float(got[0].view(softfp8.e4m3.dtype)[0]) == 3.0
    c1 = sfb.convert(a, arr.dtype, softfp8.e5m2.dtype)
    c2 = sfb.convert(a, softfp8.e4m3, softfp8.e5m2)
    assert np.array_equal(c1[0], c2[0]) and c1[0].dtype == np.uint8


def _has_ml():
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        return False
    return True


def test_import_computes_ranks_without_filling_the_table_cache():
    import subprocess
    import sys
    from pathlib import Path

    code = "import softfp8; from softfp8 import _ext; print(_ext.fast_cache_stats()['tables'])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=Path(softfp8.__file__).resolve().parent.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"


def test_load_refuses_a_preset_name_with_other_parameters(tmp_path):
    """A file that names a preset (or Tesla family) must carry that format's own
    parameters; it cannot redefine the preset's scalar type for the process."""
    import json

    softfp8.e4m3.dtype  # noqa: B018 - the preset's descriptor exists
    bad = {"softfp8": 1, "name": "e4m3", "family": "preset", "params": [8, 1, 5, 2, 15, 0, 0, 0]}
    path = tmp_path / "bad.npz"
    np.savez(path, codes=np.zeros(2, np.uint8), format=np.array(json.dumps(bad)))
    with pytest.raises(ValueError, match="does not match"):
        softfp8.load(path)
    bad = {"softfp8": 1, "name": "nope(bias=1)", "family": "tesla", "params": [8, 1, 4, 3, 1, 3, 1, 1]}
    np.savez(path, codes=np.zeros(2, np.uint8), format=np.array(json.dumps(bad)))
    with pytest.raises(ValueError, match="does not match"):
        softfp8.load(path)
    # the preset's scalar type still makes E4M3 values (1.0 is 0x38 in E4M3, 0x3c in E5M2)
    assert softfp8.e4m3.type(1.0).code == 0x38
    good = softfp8.cfloat8_143(bias=20)
    softfp8.save(tmp_path / "ok.npz", np.ones(3, good.dtype))
    assert softfp8.load(tmp_path / "ok.npz").dtype == good.dtype
