"""Bad input audit (issue 13, item 6): every public function and CLI subcommand is
handed invalid arguments of every kind; each must raise the documented exception type
with a message that names the bad value (or the parameter and its value).

One table of rows (label, callable, expected exception type, regex that must appear in
the message).  The softfp8.bits rows are generated from the operation table, so a new
operation gets the same bad inputs as the others.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import softfp8
import softfp8.bits as B
from softfp8.__main__ import main as cli_main

E4 = softfp8.e4m3
ONE = np.array([0x38], dtype=np.uint8)     # 1.0 in e4m3
CF = softfp8.cfloat8_143(bias=20)

ROWS = []   # (label, thunk, exception type, regex)


def row(label, fn, exc, pattern):
    ROWS.append((label, fn, exc, pattern))


# --------------------------------------------------------------------------
# softfp8.bits: every operation of the table gets the same bad inputs
# --------------------------------------------------------------------------

def _call(name, fmt, operands, **kw):
    return lambda: getattr(B, name)(fmt, *operands, **kw)


for _name, _op in sorted(B.OPERATIONS.items()):
    ok = [ONE] * _op.arity
    for bad_fmt, pat in (("e4m3", r"'e4m3'"), (42, r"got 42"), (None, r"got None"),
                         (np.float32, r"float32"), (softfp8.cfloat8_143, r"cfloat8_143")):
        row(f"bits.{_name} fmt={bad_fmt!r}", _call(_name, bad_fmt, ok), TypeError, pat)
    for i, argname in enumerate("abc"[:_op.arity]):
        def operands(bad, i=i):
            return [bad if j == i else ONE for j in range(_op.arity)]
        if _op.kind == "binary_i64" and i == 1:  # ldexp's exponent n: integers, not codes
            for bad, what in ((np.array([1.5]), "float64"), ("0x38", "<U4"),
                              (np.array([True]), "bool")):
                row(f"bits.{_name} n={what}", _call(_name, E4, operands(bad)), TypeError,
                    rf"n must be integers.*{what}")
            continue
        row(f"bits.{_name} {argname}=float codes", _call(_name, E4, operands(np.array([1.5]))),
            TypeError, rf"{argname} must be integer codes.*float64")
        row(f"bits.{_name} {argname}=str", _call(_name, E4, operands("0x38")),
            TypeError, rf"{argname} must be integer codes.*<U4")
        row(f"bits.{_name} {argname}=-1", _call(_name, E4, operands(np.array([3, -1]))),
            ValueError, rf"{argname} holds code -1 out of range")
        row(f"bits.{_name} {argname}=256", _call(_name, E4, operands(np.array([256, 3]))),
            ValueError, rf"{argname} holds code 256 out of range for e4m3")
    if _op.arity == 2:
        second = "n" if _op.kind == "binary_i64" else "b"
        row(f"bits.{_name} shapes", _call(_name, E4, [np.zeros(2, np.uint8), np.zeros(3, np.uint8)]),
            ValueError, rf"a\(2,\), {second}\(3,\)")
    if not _op.rounds:
        continue
    bad_opts = [
        ({"rounding": "bogus"}, ValueError, r"'bogus'"),
        ({"rounding": 3}, TypeError, r"got 3"),
        ({"rounding": "NEAREST_EVEN"}, ValueError, r"'NEAREST_EVEN'"),
        ({"saturate": "yes"}, TypeError, r"'yes'"),
        ({"saturate": 1}, TypeError, r"got 1"),
        ({"tininess": "never"}, ValueError, r"'never'"),
        ({"tininess": 1}, ValueError, r"got 1"),
        ({"tininess": np.array(["after", "before"])}, ValueError, r"after.*before"),
        ({"sr_bits": 0}, ValueError, r"got 0"),
        ({"sr_bits": 33}, ValueError, r"got 33"),
        ({"sr_bits": 8.0}, TypeError, r"sr_bits.*8\.0"),
        ({"rounding": "stochastic", "seed": -1}, ValueError, r"got -1"),
        ({"rounding": "stochastic", "seed": 2**64}, ValueError, r"got 18446744073709551616"),
        ({"rounding": "stochastic", "seed": 1.5}, TypeError, r"seed.*1\.5"),
        ({"seed": -1}, ValueError, r"got -1"),   # checked even when not stochastic
        ({"rounding": "stochastic", "random_bits": np.zeros(1)}, TypeError,
         r"random_bits.*float64"),
        ({"rounding": "stochastic", "random_bits": np.array([2**32])}, ValueError,
         r"random_bits.*4294967296"),
        ({"rounding": "stochastic", "random_bits": np.array([-1])}, ValueError,
         r"random_bits.*got -1"),
        ({"rounding": "stochastic", "random_bits": np.zeros(3, np.uint32)}, ValueError,
         r"random_bits of shape \(3,\)"),
        ({"rounding": "stochastic", "random_bits": np.zeros((2, 1), np.uint32)}, ValueError,
         r"random_bits of shape \(2, 1\)"),
        ({"random_bits": np.zeros(1)}, TypeError, r"random_bits.*float64"),
    ]
    for kw, exc, pat in bad_opts:
        row(f"bits.{_name} {kw!r}", _call(_name, E4, ok, **kw), exc, pat)

# the functions outside the operation table
row("bits.round_integral a=float", lambda: B.round_integral(E4, np.array([1.0])), TypeError,
    r"float64")
row("bits.round_integral rounding", lambda: B.round_integral(E4, ONE, rounding="up"),
    ValueError, r"'up'")
row("bits.compare a=300", lambda: B.compare(E4, np.array([300]), ONE), ValueError, r"code 300")
row("bits.compare fmt", lambda: B.compare("e5m2", ONE, ONE), TypeError, r"'e5m2'")
row("bits.sum fmt", lambda: B.sum(7, ONE), TypeError, r"got 7")
row("bits.sum a=-3", lambda: B.sum(E4, np.array([-3])), ValueError, r"code -3")
row("bits.sum axis=5", lambda: B.sum(E4, np.zeros((2, 2), np.uint8), axis=5), ValueError,
    r"axis 5")
row("bits.sum axis=1.5", lambda: B.sum(E4, np.zeros((2, 2), np.uint8), axis=1.5), TypeError,
    r"axis.*1\.5")
row("bits.sum sr_bits", lambda: B.sum(E4, ONE, sr_bits=40), ValueError, r"got 40")
row("bits.sum seed", lambda: B.sum(E4, ONE, rounding="stochastic", seed=-5), ValueError,
    r"got -5")
row("bits.convert src", lambda: B.convert(ONE, "e4m3", np.float32), TypeError,
    r"src.*'e4m3'")
row("bits.convert dst int32", lambda: B.convert(ONE, E4, np.int32), TypeError,
    r"dst.*int32")
row("bits.convert dst None", lambda: B.convert(ONE, E4, 5), TypeError, r"dst.*got 5")
row("bits.convert code", lambda: B.convert(np.array([999]), E4, np.float64), ValueError,
    r"code 999")
row("bits.convert float bits", lambda: B.convert(np.array([2**33]), np.float32, E4),
    ValueError, r"8589934592")
row("bits.convert float src str", lambda: B.convert(np.array(["x"]), np.float32, E4),
    TypeError, r"<U1")
row("bits.convert rounding", lambda: B.convert(ONE, E4, np.float32, rounding=None, tininess="x"),
    ValueError, r"'x'")
row("bits.from_float ints", lambda: B.from_float(np.array([1, 2]), E4), TypeError, r"int64")
row("bits.from_float fmt", lambda: B.from_float(np.array([1.0]), "e4m3"), TypeError,
    r"'e4m3'")
row("bits.from_float saturate", lambda: B.from_float(np.array([1.0]), E4, saturate="no"),
    TypeError, r"'no'")
row("bits.to_float dtype", lambda: B.to_float(ONE, E4, dtype=np.int32), TypeError, r"int32")
row("bits.to_float dtype str", lambda: B.to_float(ONE, E4, dtype="float99"), TypeError,
    r"'float99'")
row("bits.to_float codes", lambda: B.to_float(np.array([1.5]), E4), TypeError, r"float64")
row("bits.to_int64 code", lambda: B.to_int64(E4, np.array([256])), ValueError, r"code 256")
row("bits.to_int64 rounding", lambda: B.to_int64(E4, ONE, rounding="floor"), ValueError,
    r"'floor'")
row("bits.from_int64 floats", lambda: B.from_int64(np.array([1.5]), E4), TypeError,
    r"float64")
row("bits.from_int64 2**63", lambda: B.from_int64(np.array([2**63], np.uint64), E4),
    ValueError, r"9223372036854775808")
row("bits.from_int64 fmt", lambda: B.from_int64(np.array([1]), 8), TypeError, r"got 8")

# --------------------------------------------------------------------------
# formats
# --------------------------------------------------------------------------

OK_FMT = {"exp_bits": 4, "man_bits": 3, "bias": 7}
for kw, exc, pat in [
    ({"exp_bits": 1.5}, TypeError, r"exp_bits.*1\.5"),
    ({"exp_bits": "4"}, TypeError, r"exp_bits.*'4'"),
    ({"exp_bits": True}, TypeError, r"exp_bits.*True"),
    ({"exp_bits": 0}, ValueError, r"exp_bits.*got 0"),
    ({"exp_bits": -3}, ValueError, r"exp_bits.*got -3"),
    ({"exp_bits": 10**30}, ValueError, r"exp_bits=10{30}"),
    ({"man_bits": -1}, ValueError, r"man_bits.*got -1"),
    ({"man_bits": None}, TypeError, r"man_bits.*None"),
    ({"exp_bits": 8, "man_bits": 8}, ValueError, r"exp_bits=8 \+ man_bits=8"),
    ({"bias": "x"}, TypeError, r"bias.*'x'"),
    ({"bias": 2.0}, TypeError, r"bias.*2\.0"),
    ({"bias": 2**40}, ValueError, r"bias.*1099511627776"),
    ({"bias": -2**21}, ValueError, r"bias.*-2097152"),
    ({"specials": "bogus"}, ValueError, r"specials 'bogus'"),
    ({"specials": 1}, TypeError, r"specials.*got 1"),
    ({"subnormals": "tesla2"}, ValueError, r"subnormals 'tesla2'"),
    ({"subnormals": None}, TypeError, r"subnormals.*None"),
    ({"signed": 1}, TypeError, r"signed.*got 1"),
    ({"signed": "yes"}, TypeError, r"signed.*'yes'"),
    ({"saturate": "yes"}, TypeError, r"saturate.*'yes'"),
    ({"name": 5}, TypeError, r"name.*got 5"),
    ({"name": ""}, TypeError, r"name.*got ''"),
    ({"exp_bits": 1, "man_bits": 0, "bias": 0}, ValueError, r"bad man_bits=0"),
    ({"specials": "fnuz", "signed": False}, ValueError, r"bad signed=False"),
]:
    row(f"format {kw!r}", lambda kw=kw: softfp8.format(**{**OK_FMT, **kw}), exc, pat)
row("format positional", lambda: softfp8.format(4, 3, 7), TypeError, r"positional")
row("format missing bias", lambda: softfp8.format(exp_bits=4, man_bits=3), TypeError,
    r"'bias'")

for fam in ("cfloat8_143", "cfloat8_152", "shp"):
    F = getattr(softfp8, fam)
    for bias, exc, pat in [(-1, ValueError, r"got -1"), (64, ValueError, r"got 64"),
                           (2**70, ValueError, r"got 1180591620717411303424"),
                           (1.5, TypeError, r"bias.*1\.5"), ("20", TypeError, r"bias.*'20'"),
                           (True, TypeError, r"bias.*True"),
                           (None, TypeError, rf"{fam}\(\) needs the exponent bias")]:
        row(f"{fam}(bias={bias!r})", lambda F=F, bias=bias: F(bias=bias), exc, pat)
    row(f"{fam} subnormals", lambda F=F: F(bias=3, subnormals="flush"), ValueError, r"'flush'")
    row(f"{fam} subnormals type", lambda F=F: F(bias=3, subnormals=0), TypeError, r"got 0")

for args, kw, exc, pat in [
    (("nope",), {}, ValueError, r"unknown format 'nope'"),
    (("E4M3",), {}, ValueError, r"'E4M3'"),
    (("",), {}, ValueError, r"unknown format ''"),
    (("e4\x00m3",), {}, ValueError, r"'e4\\x00m3'"),
    ((42,), {}, TypeError, r"got 42"),
    ((None,), {}, TypeError, r"got None"),
    (("e4m3",), {"bias": 3}, ValueError, r"e4m3 has a fixed bias"),
    ((E4,), {"bias": 3}, ValueError, r"format e4m3"),
    (("cfloat8_143",), {}, TypeError, r"cfloat8_143\(\) needs the exponent bias"),
    (("cfloat8_143",), {"bias": 99}, ValueError, r"got 99"),
    (("cfloat8_143",), {"bias": "x"}, TypeError, r"'x'"),
    (("cfloat8_143(bias=99)",), {}, ValueError, r"got 99"),
    (("cfloat8_143(bias=x)",), {}, ValueError, r"'cfloat8_143\(bias=x\)'"),
    (("cfloat8_143(bias=2**3)",), {}, ValueError, r"'cfloat8_143\(bias=2\*\*3\)'"),
    (("cfloat8_143(bias=20)",), {"bias": 20}, ValueError, r"bias= given twice"),
    (("cfloat8_143(bias=20, foo=1)",), {}, TypeError, r"'cfloat8_143\(bias=20, foo=1\)'.*foo"),
    (("shp(bias=3, subnormals='x')",), {}, ValueError, r"'x'"),
    (("format(1)",), {}, TypeError, r"'format\(1\)'"),
    (("format(exp_bits=4)",), {}, TypeError, r"'format\(exp_bits=4\)'.*man_bits"),
    (("format(exp_bits=4, man_bits=3, bias=7, specials='x')",), {}, ValueError,
     r"specials 'x'"),
    (("format(**{})",), {}, ValueError, r"literals"),
    (("__import__('os')",), {}, ValueError, r"unknown format \"__import__\('os'\)\""),
    (("(" * 10000,), {}, ValueError, r"unknown format '\(\(\("),
    (("cfloat8_143(" * 300 + ")" * 300,), {}, (ValueError, TypeError), r"cfloat8_143\(cfloat8"),
]:
    row(f"lookup{args!r:.40}{kw!r}", lambda args=args, kw=kw: softfp8.lookup(*args, **kw), exc,
        pat)

for meth, arg, exc, pat in [
    ("decode", 256, ValueError, r"code 256 out of range for e4m3"),
    ("decode", -1, ValueError, r"code -1"),
    ("decode", 1.5, TypeError, r"code.*1\.5"),
    ("decode", "0x38", TypeError, r"'0x38'"),
    ("decode", True, TypeError, r"True"),
    ("shortest", 300, ValueError, r"code 300"),
    ("classify", 2**64, ValueError, r"code 18446744073709551616"),
    ("classify", None, TypeError, r"None"),
    ("encode", "x", ValueError, r"'x'"),
]:
    row(f"Format.{meth}({arg!r})", lambda meth=meth, arg=arg: getattr(E4, meth)(arg), exc, pat)
row("Format.encode rounding", lambda: E4.encode(1.0, rounding="bogus"), ValueError, r"'bogus'")
row("Format.encode saturate", lambda: E4.encode(1.0, saturate=2), TypeError, r"got 2")
row("Format setattr", lambda: setattr(E4, "bias", 3), AttributeError, r"'bias'")

# --------------------------------------------------------------------------
# contexts
# --------------------------------------------------------------------------

def _enter(cm_factory):
    def run():
        with cm_factory():
            pass
    return run


for label, factory, exc, pat in [
    ("rounding('bogus')", lambda: softfp8.rounding("bogus"), ValueError, r"'bogus'"),
    ("rounding(1)", lambda: softfp8.rounding(1), TypeError, r"got 1"),
    ("rounding(None)", lambda: softfp8.rounding(None), TypeError, r"got None"),
    ("rounding sr_bits=0", lambda: softfp8.rounding("stochastic", sr_bits=0), ValueError,
     r"got 0"),
    ("rounding sr_bits=33", lambda: softfp8.rounding("stochastic", sr_bits=33), ValueError,
     r"got 33"),
    ("rounding sr_bits='8'", lambda: softfp8.rounding("stochastic", sr_bits="8"), TypeError,
     r"'8'"),
    ("rounding seed=-1", lambda: softfp8.rounding("stochastic", seed=-1), ValueError, r"got -1"),
    ("rounding seed=2**64", lambda: softfp8.rounding("stochastic", seed=2**64), ValueError,
     r"18446744073709551616"),
    ("rounding seed=1.5", lambda: softfp8.rounding("stochastic", seed=1.5), TypeError, r"1\.5"),
    ("saturation('yes')", lambda: softfp8.saturation("yes"), TypeError, r"'yes'"),
    ("saturation(1)", lambda: softfp8.saturation(1), TypeError, r"got 1"),
    ("tininess('never')", lambda: softfp8.tininess("never"), ValueError, r"'never'"),
    ("tininess(None)", lambda: softfp8.tininess(None), ValueError, r"got None"),
    ("tininess(array)", lambda: softfp8.tininess(np.array(["after", "before"])), ValueError,
     r"after.*before"),
]:
    row(label, _enter(factory), exc, pat)

# --------------------------------------------------------------------------
# finfo, matmul, fma, arrays
# --------------------------------------------------------------------------

for arg, exc, pat in [("nope", TypeError, r"'nope'"), (42, TypeError, r"got 42"),
                      (np.float32, TypeError, r"float32"), (None, TypeError, r"None"),
                      ("cfloat8_143", TypeError, r"cfloat8_143")]:
    row(f"finfo({arg!r})", lambda arg=arg: softfp8.finfo(arg), exc, pat)

A2 = np.zeros((2, 2), dtype=E4.dtype)
for label, fn, exc, pat in [
    ("matmul floats", lambda: softfp8.matmul(np.zeros((2, 2)), A2), TypeError, r"float64"),
    ("matmul mixed formats, bad accumulation",
     lambda: softfp8.matmul(A2, np.zeros((2, 2), softfp8.e5m2.dtype), accumulation="fp16"),
     TypeError, r"'fp16'"),
    ("matmul mixed formats, bad out_dtype",
     lambda: softfp8.matmul(A2, np.zeros((2, 2), softfp8.e5m2.dtype), out_dtype=np.int8),
     TypeError, r"int8"),
    ("Accumulation promote_every", lambda: softfp8.Accumulation(promote_every=-3), ValueError,
     r"-3"),
    ("scaled_mm negative scale", lambda: softfp8.scaled_mm(A2, A2, -2.0, 1.0), ValueError,
     r"-2\.0"),
    ("matmul out_dtype int8", lambda: softfp8.matmul(A2, A2, out_dtype=np.int8), TypeError,
     r"int8"),
    ("matmul out_dtype str", lambda: softfp8.matmul(A2, A2, out_dtype="bogus"), TypeError,
     r"'bogus'"),
    ("matmul out_dtype other format", lambda: softfp8.matmul(A2, A2, out_dtype=softfp8.e5m2),
     TypeError, r"e5m2"),
    ("matmul shapes", lambda: softfp8.matmul(A2, np.zeros((3, 2), E4.dtype)), ValueError,
     r"\(2, 2\) and \(3, 2\)"),
    ("matmul 0-d", lambda: softfp8.matmul(A2[0, 0], A2), ValueError, r"\(\)"),
    ("matmul out list", lambda: softfp8.matmul(A2, A2, out=[0]), TypeError, r"list"),
    ("matmul out shape", lambda: softfp8.matmul(A2, A2, out=np.zeros(3, E4.dtype)), ValueError,
     r"\(3,\)"),
    ("matmul out dtype", lambda: softfp8.matmul(A2, A2, out_dtype=np.float32,
                                                out=np.zeros((2, 2))), TypeError, r"float64"),
    ("fma str", lambda: softfp8.fma(A2, A2, "x"), TypeError, r"fma"),
    ("array 'abc'", lambda: np.array(["abc"], dtype=E4.dtype), ValueError, r"'abc'"),
    ("array '1.5x'", lambda: np.array(["1.5x"]).astype(E4.dtype), ValueError, r"'1\.5x'"),
    ("array ''", lambda: np.array([""], dtype=softfp8.bfloat16.dtype), ValueError, r"''"),
    ("array None", lambda: np.array([None], dtype=E4.dtype), TypeError, r"None"),
    ("array object", lambda: np.array([{1: 2}], dtype=E4.dtype), TypeError, r"\{1: 2\}"),
    ("scalar 'abc'", lambda: E4.type("abc"), ValueError, r"'abc'"),
    ("parametric dtype without bias", lambda: np.zeros(2, dtype=type(CF.dtype)), TypeError,
     r"cfloat8_143.*bias"),
]:
    row(label, fn, exc, pat)

# --------------------------------------------------------------------------
# interop
# --------------------------------------------------------------------------

for label, fn, exc, pat in [
    ("to_ml_dtypes float64", lambda: softfp8.to_ml_dtypes(np.zeros(2)), TypeError, r"float64"),
    ("to_ml_dtypes list", lambda: softfp8.to_ml_dtypes([1.0]), TypeError, r"float64"),
    ("to_ml_dtypes cfloat8", lambda: softfp8.to_ml_dtypes(np.zeros(2, CF.dtype)), TypeError,
     r"cfloat8_143\(bias=20\)"),
    ("to_ml_dtypes uhp format", lambda: softfp8.to_ml_dtypes(softfp8.uhp), TypeError, r"uhp"),
    ("from_ml_dtypes float64", lambda: softfp8.from_ml_dtypes(np.zeros(2)), TypeError,
     r"float64"),
    ("from_ml_dtypes float32 type", lambda: softfp8.from_ml_dtypes(np.float32), TypeError,
     r"float32"),
    ("from_ml_dtypes softfp8 array", lambda: softfp8.from_ml_dtypes(A2), TypeError, r"e4m3"),
    ("from_ml_dtypes str", lambda: softfp8.from_ml_dtypes("e4m3"), TypeError, r"<U4"),
]:
    row(label, fn, exc, pat)

# save/load rows need tmp_path: (label, builder(tmp_path) -> thunk, exc, regex)
IO_ROWS = []


def io_row(label, build, exc, pat):
    IO_ROWS.append((label, build, exc, pat))


def _npz(path, **members):
    np.savez(path, **members)
    return path


def _good_file(tmp_path):
    p = tmp_path / "good.npz"
    softfp8.save(p, np.zeros(3, E4.dtype))
    return p


def _with_desc(tmp_path, desc):
    return _npz(tmp_path / "f.npz", codes=np.zeros(3, np.uint8), format=np.array(json.dumps(desc)))


_DESC = {"softfp8": 1, "name": "e4m3", "family": "preset", "params": list(E4.params)}

io_row("save float64", lambda t: (lambda: softfp8.save(t / "x.npz", np.zeros(3))), TypeError,
       r"float64")
io_row("save list", lambda t: (lambda: softfp8.save(t / "x.npz", [1, 2])), TypeError, r"int64")
io_row("save bad dir", lambda t: (lambda: softfp8.save(t / "no" / "x.npz",
                                                       np.zeros(3, E4.dtype))),
       FileNotFoundError, r"no")
io_row("load missing", lambda t: (lambda: softfp8.load(t / "missing.npz")), FileNotFoundError,
       r"missing\.npz")
io_row("load directory", lambda t: (lambda: softfp8.load(t)), (IsADirectoryError, PermissionError),
       r"")
io_row("load text file",
       lambda t: (t / "a.txt").write_text("hello") and (lambda: softfp8.load(t / "a.txt")),
       ValueError, r"a\.txt")
io_row("load empty file",
       lambda t: (t / "e.npz").write_bytes(b"") == 0 and (lambda: softfp8.load(t / "e.npz")),
       ValueError, r"e\.npz")
io_row("load plain npy",
       lambda t: np.save(t / "p.npy", np.zeros(3)) or (lambda: softfp8.load(t / "p.npy")),
       ValueError, r"p\.npy")
io_row("load truncated",
       lambda t: (t / "tr.npz").write_bytes(_good_file(t).read_bytes()[:60]) and
       (lambda: softfp8.load(t / "tr.npz")), ValueError, r"tr\.npz")
io_row("load missing entries",
       lambda t: _npz(t / "m.npz", codes=np.zeros(3, np.uint8)) and
       (lambda: softfp8.load(t / "m.npz")), ValueError, r"m\.npz.*'format'")
io_row("load bad json",
       lambda t: _npz(t / "j.npz", codes=np.zeros(3, np.uint8), format=np.array("{not json")) and
       (lambda: softfp8.load(t / "j.npz")), ValueError, r"j\.npz")
for label, desc, pat in [
    ("version", {**_DESC, "softfp8": 99}, r"'softfp8': 99"),
    ("not a dict", [1, 2], r"\[1, 2\]"),
    ("params short", {**_DESC, "params": [8, 1, 4]}, r"\[8, 1, 4\]"),
    ("params str", {**_DESC, "params": ["8", 1, 4, 3, 7, 1, 0, 1]}, r"'8'"),
    ("specials index", {**_DESC, "params": [8, 1, 4, 3, 7, 9, 0, 1]}, r"\[8, 1, 4, 3, 7, 9, 0, 1\]"),
    ("subnormals index", {**_DESC, "params": [8, 1, 4, 3, 7, 1, -1, 1]}, r"-1, 1\]"),
    ("bits", {**_DESC, "params": [99, 1, 4, 3, 7, 1, 0, 1]}, r"\[99,"),
    ("huge bias", {**_DESC, "params": [8, 1, 4, 3, 2**70, 1, 0, 1]}, r"1180591620717411303424"),
    ("family", {**_DESC, "family": "evil"}, r"'evil'"),
    ("name", {**_DESC, "name": None}, r"'name': None"),
    ("inconsistent", {**_DESC, "params": [8, 1, 5, 3, 7, 1, 0, 1]}, r"bad"),
]:
    io_row(f"load desc {label}", lambda t, desc=desc: _with_desc(t, desc) and
           (lambda: softfp8.load(t / "f.npz")), ValueError, pat)
io_row("load codes dtype",
       lambda t: _npz(t / "c.npz", codes=np.zeros(3, np.uint16),
                      format=np.array(json.dumps(_DESC))) and (lambda: softfp8.load(t / "c.npz")),
       ValueError, r"c\.npz.*uint16")


def _check(fn, exc, pat):
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    assert re.search(pat, msg, re.S), f"message {msg!r} does not match {pat!r}"
    # never a bare crash type
    assert not isinstance(info.value, (RecursionError, IndexError, KeyError, SystemError))


@pytest.mark.parametrize("label,fn,exc,pat", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input(label, fn, exc, pat):
    if label.startswith(("to_ml_dtypes", "from_ml_dtypes")):
        pytest.importorskip("ml_dtypes")
    _check(fn, exc, pat)


@pytest.mark.parametrize("label,build,exc,pat", IO_ROWS, ids=[r[0] for r in IO_ROWS])
def test_bad_file(label, build, exc, pat, tmp_path):
    _check(build(tmp_path), exc, pat)


# --------------------------------------------------------------------------
# CLI: in-process, exit status 2 and a message naming the bad value
# --------------------------------------------------------------------------

CLI_ROWS = [
    (["nosuchcommand"], r"'nosuchcommand'"),
    (["info", "nope"], r"'nope'"),
    (["info", "e4m3x"], r"'e4m3x'"),
    (["info", "cfloat8_143"], r"cfloat8_143 needs --bias"),
    (["info", "cfloat8_143", "--bias", "64"], r"got 64"),
    (["info", "cfloat8_143", "--bias", "-1"], r"got -1"),
    (["info", "cfloat8_143", "--bias", "x"], r"'x'"),
    (["info", "cfloat8_143", "--bias", "2.5"], r"'2\.5'"),
    (["info", "e4m3", "--bias", "3"], r"e4m3 has the fixed bias"),
    (["info", "e4m3", "--subnormals", "ieee"], r"--subnormals"),
    (["info", "shp", "--bias", "3", "--subnormals", "flush"], r"'flush'"),
    (["info", "cfloat8_143(bias=99)"], r"got 99"),
    (["info", "cfloat8_143(bias=20)", "--bias", "3"], r"'cfloat8_143\(bias=20\)'"),
    (["info", "format(exp_bits=9, man_bits=9, bias=1)"], r"exp_bits=9 \+ man_bits=9"),
    (["info"], r"format"),
    (["calc", "nope", "add", "1", "2"], r"'nope'"),
    (["calc", "e4m3", "bogus", "1", "2"], r"'bogus'"),
    (["calc", "e4m3", "add", "0x38", "zz"], r"'zz'"),
    (["calc", "e4m3", "add", "0x38", "0x100"], r"'0x100'"),
    (["calc", "e4m3", "add", "0x38", "-1"], r"'-1'"),
    (["calc", "e4m3", "add", "0x38", "1.5"], r"'1\.5'"),
    (["calc", "float16", "sqrt", "0x10000"], r"'0x10000'"),
    (["calc", "e4m3", "add", "0x38"], r"add takes 2 operands, got 1"),
    (["calc", "e4m3", "add", "1", "2", "3"], r"add takes 2 operands, got 3"),
    (["calc", "e4m3", "sqrt"], r"sqrt takes 1 operand, got 0"),
    (["calc", "e4m3", "fma", "1", "2"], r"fma takes 3 operands, got 2"),
    (["calc", "e4m3", "add", "1", "2", "--rounding", "bogus"], r"'bogus'"),
    (["calc", "e4m3", "add", "1", "2", "--tininess", "never"], r"'never'"),
    (["calc", "e4m3", "add", "1", "2", "--seed", "x"], r"'x'"),
    (["calc", "e4m3", "add", "1", "2", "--rounding", "stochastic", "--seed", "-1"], r"got -1"),
    (["calc", "e4m3", "add", "1", "2", "--saturate", "--no-saturate"], r"--no-saturate"),
    (["calc", "cfloat8_143", "add", "1", "2"], r"cfloat8_143 needs --bias"),
    (["calc", "cfloat8_143", "add", "1", "2", "--bias", "70"], r"got 70"),
    (["formats", "extra"], r"'extra'|extra"),
    (["demo", "--bogus"], r"--bogus"),
]


@pytest.mark.parametrize("argv,pat", CLI_ROWS, ids=[" ".join(a) for a, _ in CLI_ROWS])
def test_cli_bad_input(argv, pat, capsys):
    with pytest.raises(SystemExit) as info:
        cli_main(argv)
    captured = capsys.readouterr()
    assert info.value.code == 2, (info.value.code, captured.err)
    assert captured.out == ""
    assert re.search(pat, captured.err), f"stderr {captured.err!r} does not match {pat!r}"


def test_table_sizes():
    """Every operation of the table and every public name has rows (a new public
    function must be added here)."""
    labels = " ".join(r[0] for r in ROWS)
    for name in B.OPERATIONS:
        assert f"bits.{name} " in labels, name
    covered = {"round_integral", "compare", "sum", "convert", "from_float", "to_float",
               "to_int64", "from_int64"}
    for name in covered:
        assert f"bits.{name} " in labels, name
    assert set(B.__all__) - set(B.OPERATIONS) - covered == {"ROUNDING_MODES", "OPERATIONS",
                                                            "Operation"}
    assert len(ROWS) > 900 and len(IO_ROWS) >= 20 and len(CLI_ROWS) >= 30
