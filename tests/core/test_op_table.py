"""The operation table (softfp8/_core/ops.def) and what is derived from it.

Checks that the table the extension exposes is the one in the source file, that
every row has its softfp8.bits function and (where it names one) a NumPy ufunc
loop for every format family, and that the ufunc and the bits function give the
same codes and flags for every 8-bit pair, under plain calls and under NumPy's
accumulate / reduce calling conventions (the element order of an accumulation is
checked against a sequential Python loop of bits calls).  These are consistency
checks of the derivation (ufunc and bits share the driver and the core); the
correctness of the core's results is proven against the independent models in
tests/models/ by the other tests of tests/core/.
"""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import softfp8
from softfp8 import _ext, bits

REPO = Path(__file__).resolve().parents[2]
OPS_DEF = REPO / "softfp8" / "_core" / "ops.def"

ROW = re.compile(r'^SFP8_OP\(\s*(\w+)\s*,\s*"(\w+)"\s*,\s*(K_\w+)\s*,\s*([\w| ]+?)\s*,\s*'
                 r'(NULL|"[\w. ]+")\s*,\s*(R_\w+)\s*,', re.M)
KINDS = {"K_BINARY": "binary", "K_COMPARE": "compare", "K_RELATION": "relation",
         "K_UNARY": "unary", "K_PREDICATE": "predicate", "K_TERNARY": "ternary",
         "K_UNARY2": "unary2", "K_UNARY_I32": "unary_i32", "K_BINARY2": "binary2",
         "K_BINARY_I64": "binary_i64", "K_UNARY_I64": "unary_i64"}
# the kinds whose operands and one result are codes (bool / relation results included)
CODES_ONLY = ("binary", "compare", "relation", "unary", "predicate", "ternary")
IDENT = {"R_NONE": None, "R_ZERO": 0, "R_ONE": 1}


def source_rows():
    if not OPS_DEF.is_file():
        pytest.skip("ops.def not beside the tests (installed package)")
    rows = ROW.findall(OPS_DEF.read_text())
    assert len(rows) == OPS_DEF.read_text().count("\nSFP8_OP(")
    return rows


def test_table_is_the_source_file():
    rows = source_rows()
    table = _ext.op_table()
    assert len(table) == len(rows) == 133
    for (ident, name, kind, attrs, ufunc, identity), got in zip(rows, table):
        want = (name, KINDS[kind], "A_ENV" in attrs, "A_NOFLAGS" in attrs,
                None if ufunc == "NULL" else ufunc.strip('"'), IDENT[identity])
        assert got == want, ident


def test_every_row_has_a_bits_function_with_its_arity():
    for name, op in bits.OPERATIONS.items():
        fn = getattr(bits, name)
        assert name in bits.__all__
        params = list(inspect.signature(fn).parameters)
        args = ["a", "n"] if op.kind == "binary_i64" else ["a", "b", "c"][:op.arity]
        assert params[:op.arity + 1] == ["fmt"] + args, name
        assert ("rounding" in params) == op.rounds, name


PRESET_DTYPES = [softfp8.e4m3, softfp8.e5m2, softfp8.e4m3fnuz, softfp8.uhp, softfp8.float16,
                 softfp8.bfloat16, softfp8.cfloat8_143(bias=20), softfp8.shp(bias=15),
                 softfp8.format(exp_bits=3, man_bits=2, bias=3)]


def _ufuncs(op):
    """the ufunc objects of a row (several names separated by spaces)"""
    return [getattr(softfp8, u.split(".", 1)[1]) if u.startswith("softfp8.") else getattr(np, u)
            for u in op.ufuncs]


def _ufunc(op):
    return _ufuncs(op)[0]


def test_alias_rows_register_every_ufunc():
    """ "positive conjugate" and "absolute fabs": distinct ufunc objects, one loop each"""
    assert bits.OPERATIONS["pos"].ufuncs == ("positive", "conjugate")
    assert bits.OPERATIONS["abs"].ufuncs == ("absolute", "fabs")
    assert np.fabs is not np.absolute and np.conjugate is not np.positive
    x = np.array([0x38, 0xb8, 0x7f, 0x80], dtype=np.uint8).view(softfp8.e4m3.dtype)
    np.testing.assert_array_equal(np.fabs(x).view(np.uint8), [0x38, 0x38, 0x7f, 0x00])
    np.testing.assert_array_equal(np.conjugate(x).view(np.uint8), [0x38, 0xb8, 0x7f, 0x80])


@pytest.mark.parametrize("fmt", PRESET_DTYPES, ids=lambda f: f.name)
def test_every_ufunc_row_has_a_loop(fmt):
    x = np.zeros(3, dtype=fmt.storage).view(fmt.dtype)
    n = 0
    for op in bits.OPERATIONS.values():
        operands = [x] * op.arity
        if op.kind == "binary_i64":
            operands[1] = np.arange(3)
        for uf in _ufuncs(op):
            with np.errstate(all="ignore"):
                res = uf(*operands)
            want = np.bool_ if op.kind in ("compare", "predicate") else fmt.dtype
            res = res if isinstance(res, tuple) else (res,)
            wants = ((want, np.int32) if op.kind == "unary_i32" else (np.int64,) if op.kind == "unary_i64"
                     else (want,) * op.nout)
            assert tuple(r.dtype for r in res) == tuple(np.dtype(w) for w in wants), op.name
            n += 1
    # of the 133 rows of ops.def, the 129 naming a ufunc (softfp8's own included), four of
    # them naming two ufuncs (pos, abs, degrees, radians)
    assert n == 133


def _all_pairs(fmt):
    c = np.arange(1 << fmt.bits, dtype=fmt.storage)
    return np.repeat(c, c.size), np.tile(c, c.size)


@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "upward"])
@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.e5m2fnuz, softfp8.cfloat8_152(bias=9)],
                         ids=lambda f: f.name)
def test_ufunc_equals_bits_on_every_pair(fmt, mode):
    a, b = _all_pairs(fmt)
    checked = 0
    for op in bits.OPERATIONS.values():
        if op.ufunc is None or op.arity == 3 or op.kind not in CODES_ONLY:
            continue  # the other kinds: tests/core/test_exact_functions.py
        fn = getattr(bits, op.name)
        kw = {"rounding": mode} if op.rounds else {}
        operands = (a, b)[:op.arity]
        res = fn(fmt, *operands, **kw)
        want, want_fl = (res, None) if op.noflags else res
        with softfp8.rounding(mode), softfp8.collect_flags() as fl, np.errstate(all="ignore"):
            got = _ufunc(op)(*(x.view(fmt.dtype) for x in operands))
        got = got if got.dtype == np.bool_ else got.view(fmt.storage)
        np.testing.assert_array_equal(got, want, err_msg=op.name)
        if want_fl is not None:
            assert int(fl.flags) == int(np.bitwise_or.reduce(want_fl)), op.name
        checked += a.size
    assert checked == 65536 * 105  # every code-only ufunc row but the ternary ones


def _garbage(n, dtype, seed):
    return np.frombuffer(np.random.default_rng(seed).bytes(n * np.dtype(dtype).itemsize),
                         dtype=dtype).copy()


@pytest.mark.parametrize("fast", [0, 2])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "max", "minnum", "div"])
@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.bfloat16], ids=lambda f: f.name)
def test_accumulate_is_sequential(fmt, name, fast):
    """np.<ufunc>.accumulate equals the left-to-right loop of bits calls, also
    after the op's table exists and into a garbage-filled out= buffer."""
    op = bits.OPERATIONS[name]
    uf = _ufunc(op)
    rng = np.random.default_rng(7)
    vals = rng.uniform(-4, 4, 200)
    codes = bits.from_float(vals, fmt)[0]
    old = _ext.set_fast(fast)
    try:
        big = _all_pairs(softfp8.e4m3)[0].view(softfp8.e4m3.dtype)
        with np.errstate(all="ignore"):
            uf(big, big[::-1])  # builds the 8-bit table in eager/normal mode
            out = _garbage(codes.size, fmt.storage, 1).view(fmt.dtype)
            uf.accumulate(codes.view(fmt.dtype), out=out)
            out2d = _garbage(3 * codes.size, fmt.storage, 2).view(fmt.dtype).reshape(3, -1)
            uf.accumulate(np.stack([codes] * 3).view(fmt.dtype), axis=1, out=out2d)
            red = uf.reduce(codes.view(fmt.dtype)) if name != "add" else None
    finally:
        _ext.set_fast(old)
    want = np.empty_like(codes)
    want[0] = codes[0]
    fn = getattr(bits, name)
    for i in range(1, codes.size):
        r = fn(fmt, want[i - 1], codes[i])
        want[i] = r[0] if isinstance(r, tuple) else r
    np.testing.assert_array_equal(out.view(fmt.storage), want)
    for row in out2d.view(fmt.storage):
        np.testing.assert_array_equal(row, want)
    if red is not None:
        assert int(np.asarray(red).view(fmt.storage)) == int(want[-1])


def test_bits_accepts_storage_dtypes_without_widening():
    fmt = softfp8.float16
    a = np.arange(0, 65536, 7, dtype=np.uint16)
    r, fl = bits.add(fmt, a, a[::-1])
    assert r.dtype == np.uint16 and fl.dtype == np.uint8 and r.shape == a.shape
    rel, _ = bits.compare(fmt, a, a[::-1])
    assert rel.dtype == np.int8
    assert bits.isnan(fmt, a).dtype == np.bool_
