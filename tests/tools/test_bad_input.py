"""Bad input audit (issue 13, item 6): every public function and CLI subcommand is
handed invalid arguments of every kind; each must raise the documented exception type
with a message that names the bad value (or the parameter and its value).

One table of rows (label, callable, expected exception type, regex that must appear in
the message).  The softfp8.bits rows are generated from the operation table, so a new
operation gets the same bad inputs as the others.
"""
from __future__ import annotations

import importlib
import inspect
import io
import json
import re

import numpy as np
import pytest

import softfp8
import softfp8.bits as B
import softfp8.testing as T
import softfp8.vectors as V
from softfp8.__main__ import build_parser
from softfp8.__main__ import main as cli_main

try:
    import softfp8.dask as D
    import dask.array as da
except ImportError:      # the optional extra
    D = None

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
row("Format.encode(None)", lambda: E4.encode(None), TypeError, r"got None")   # was a NaN code
row("Format.encode([1, 2])", lambda: E4.encode([1, 2]), TypeError, r"\[1, 2\]")
row("Format.encode(1j)", lambda: E4.encode(np.complex64(1j)), TypeError, r"1j")
row("Format.decode()", lambda: E4.decode(), TypeError, r"code")
row("Format.classify(nan)", lambda: E4.classify(float("nan")), TypeError, r"got nan")

_FMT_ARGS = dict(name="x", family="factory", bits=8, signed=True, exp_bits=4, man_bits=3, bias=7,
                 specials="ieee", subnormals="ieee", saturate=False)
for kw, exc, pat in [
    ({"bits": 99}, ValueError, r"bad bits=99"),
    ({"bits": "8"}, TypeError, r"bits.*'8'"),
    ({"exp_bits": 2.0}, TypeError, r"exp_bits.*2\.0"),
    ({"man_bits": None}, TypeError, r"man_bits.*None"),
    ({"bias": float("nan")}, TypeError, r"bias.*nan"),
    ({"bias": "7"}, TypeError, r"bias.*'7'"),
    ({"specials": "zzz"}, ValueError, r"specials 'zzz'"),
    ({"subnormals": 1}, TypeError, r"subnormals.*got 1"),
    ({"family": "evil"}, ValueError, r"family 'evil'"),
    ({"name": 5}, TypeError, r"name.*got 5"),
    ({"name": ""}, TypeError, r"name.*got ''"),
    ({"signed": "yes"}, TypeError, r"signed.*'yes'"),
    ({"saturate": 2}, TypeError, r"saturate.*got 2"),
    ({"exp_bits": 9}, ValueError, r"bad .*exp_bits=9"),
]:
    row(f"Format({kw!r})", lambda kw=kw: softfp8.Format(**{**_FMT_ARGS, **kw}), exc, pat)
row("Format() positional", lambda: softfp8.Format("x"), TypeError, r"positional")
row("TeslaFamily('nope')", lambda: softfp8.TeslaFamily("nope"), ValueError, r"'nope'")
row("TeslaFamily('e4m3')", lambda: softfp8.TeslaFamily("e4m3"), ValueError, r"'e4m3'")
row("TeslaFamily(3)", lambda: softfp8.TeslaFamily(3), ValueError, r"\b3\b")
row("Flags('x')", lambda: softfp8.Flags("x"), ValueError, r"'x'")
row("Flags(1.5)", lambda: softfp8.Flags(1.5), ValueError, r"1\.5")
row("SoftScalar(1.0) without dtype", lambda: softfp8.SoftScalar(1.0), TypeError, r"dtype")
row("SoftScalar dtype=float32", lambda: softfp8.SoftScalar(1.0, dtype=np.float32), TypeError,
    r"float32")
row("SoftScalar dtype='bogus'", lambda: softfp8.SoftScalar(1.0, dtype="bogus"), TypeError,
    r"'bogus'")
row("SoftScalar('abc')", lambda: softfp8.SoftScalar("abc", E4.dtype), ValueError, r"'abc'")
row("SoftScalar(None)", lambda: softfp8.SoftScalar(None, E4.dtype), TypeError, r"None")
row("presets(1)", lambda: softfp8.presets(1), TypeError, r"presets\(\) takes 0")
for _name in ("get_rounding", "get_saturation", "get_tininess", "get_isa", "get_flags", "clear_flags",
              "collect_flags", "get_include", "get_library_dir", "get_libraries"):
    # no parameters: an argument is refused by name
    row(f"{_name}(1)", lambda _name=_name: getattr(softfp8, _name)(1), TypeError,
        rf"{_name}\(\) takes 0")

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
    ("isa('mips')", lambda: softfp8.isa("mips"), ValueError, r"'mips'.*x86"),
    ("isa('x86+fz')", lambda: softfp8.isa("x86+fz"), ValueError, r"'x86\+fz'"),
    ("isa(1)", lambda: softfp8.isa(1), TypeError, r"got 1"),
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
    ("Accumulation order", lambda: softfp8.Accumulation(order="tree"), ValueError, r"'tree'"),
    ("Accumulation.profile name", lambda: softfp8.Accumulation.profile("h300"), ValueError, r"'h300'"),
    ("BlockFMA block", lambda: softfp8.BlockFMA(block=0, extra_bits=2), ValueError, r"got 0"),
    ("BlockFMA rounding", lambda: softfp8.BlockFMA(block=4, extra_bits=2, rounding="odd"), ValueError,
     r"'odd'"),
    ("MatrixUnit input format", lambda: softfp8.Accumulation.profile("v100").model("bfloat16"), ValueError,
     r"bf16"),
    ("MatrixUnit output format", lambda: softfp8.Accumulation.profile("mi250").model("float16", "float16"),
     ValueError, r"delivers fp32, not fp16"),
    ("matmul addend shape", lambda: softfp8.matmul(A2, A2, c=np.zeros((3, 3), E4.dtype)), ValueError,
     r"\(3, 3\)"),
    ("matmul addend dtype", lambda: softfp8.matmul(A2, A2, c=np.zeros((2, 2))), TypeError, r"float64"),
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
    ("fma shapes", lambda: softfp8.fma(A2, A2, np.zeros(3, E4.dtype)), ValueError,
     r"\(2,2\) \(2,2\) \(3,\)"),
    ("fma arity", lambda: softfp8.fma(A2, A2), TypeError, r"2 were given"),
    ("fma floats", lambda: softfp8.fma(A2, A2, np.zeros((2, 2))), TypeError, r"fma.*Float64"),
    ("matmul lists", lambda: softfp8.matmul([[1]], [[2]]), TypeError, r"int64"),
    ("matmul out_dtype nan", lambda: softfp8.matmul(A2, A2, out_dtype=float("nan")), TypeError,
     r"got nan"),
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
    ("to_ml_dtypes None", lambda: softfp8.to_ml_dtypes(None), TypeError, r"object"),
]:
    row(label, fn, exc, pat)

# softfp8's own ufuncs of the op table (softfp8.nextup, softfp8.total_order, ...):
# NumPy's own refusals, naming the ufunc
for _uname in sorted(softfp8._OWN_UFUNCS):
    if _uname == "fma":
        continue
    _uf = getattr(softfp8, _uname)
    row(f"{_uname} str", (lambda u: lambda: u(*(["x"] * u.nin)))(_uf), TypeError, _uname)
    row(f"{_uname} floats", (lambda u: lambda: u(*([np.zeros(2, np.complex128)] * u.nin)))(_uf), TypeError,
        _uname)

# the reductions of IEEE 754-2019 9.4 and the exact helpers of softfp8.bits
for label, fn, exc, pat in [
    ("bits.dot fmt", lambda: B.dot("e4m3", ONE, ONE), TypeError, r"'e4m3'"),
    ("bits.dot shapes", lambda: B.dot(E4, np.zeros(2, np.uint8), np.zeros(3, np.uint8)), ValueError,
     r"broadcast"),
    ("bits.dot b=300", lambda: B.dot(E4, ONE, np.array([300])), ValueError, r"code 300"),
    ("bits.sum_square axis", lambda: B.sum_square(E4, np.zeros((2, 2), np.uint8), axis=3), ValueError,
     r"axis 3"),
    ("bits.sum_abs float codes", lambda: B.sum_abs(E4, np.array([1.5])), TypeError, r"float64"),
    ("bits.scaled_prod a=-1", lambda: B.scaled_prod(E4, np.array([-1])), ValueError, r"code -1"),
    ("bits.scaled_prod_sum shapes", lambda: B.scaled_prod_sum(E4, np.zeros(2, np.uint8), np.zeros(3, np.uint8)),
     ValueError, r"broadcast"),
    ("bits.scaled_prod_diff rounding", lambda: B.scaled_prod_diff(E4, ONE, ONE, rounding="up"), ValueError,
     r"'up'"),
    ("bits.exact_values codes", lambda: B.exact_values(E4, np.array([256])), ValueError, r"code 256"),
    ("bits.round_exact fmt", lambda: B.round_exact(None, [0], [1], [0]), TypeError, r"got None"),
]:
    row(label, fn, exc, pat)

_HAVE_TORCH = importlib.util.find_spec("torch") is not None
for label, fn, pat in [
    ("to_torch float64", lambda: softfp8.to_torch(np.zeros(2)), r"float64"),
    ("to_torch list", lambda: softfp8.to_torch([1.0]), r"float64"),
    ("from_torch ndarray", lambda: softfp8.from_torch(A2), r"ndarray|e4m3"),
    ("from_torch int", lambda: softfp8.from_torch(1), r"int"),
]:
    # without PyTorch the import error names the missing module
    row(label, fn, TypeError if _HAVE_TORCH else ImportError, pat if _HAVE_TORCH else r"'torch'")

# --------------------------------------------------------------------------
# testing helpers
# --------------------------------------------------------------------------

ZERO4 = np.zeros(4, E4.dtype)
for label, fn, exc, pat in [
    ("testing.assert_flags('bogus')", lambda: T.assert_flags("bogus"), ValueError, r"'bogus'"),
    ("testing.assert_flags(999)", lambda: T.assert_flags(999), ValueError, r"999"),
    ("testing.assert_flags(1.5)", lambda: T.assert_flags(1.5), TypeError, r"1\.5"),
    ("testing.assert_flags(True)", lambda: T.assert_flags(True), TypeError, r"True"),
    ("testing.assert_flags([None])", lambda: T.assert_flags([None]), TypeError, r"None"),
    ("testing.assert_flags exact='x'", lambda: T.assert_flags(0, exact="x"), TypeError,
     r"exact.*'x'"),
    ("testing.assert_no_flags('bogus')", lambda: T.assert_no_flags("bogus"), ValueError,
     r"'bogus'"),
    ("testing.assert_no_flags(-1)", lambda: T.assert_no_flags(-1), ValueError, r"-1"),
    ("testing.assert_no_flags(1.5)", lambda: T.assert_no_flags(1.5), TypeError, r"1\.5"),
]:
    row(label, _enter(fn), exc, pat)
for label, fn, exc, pat in [
    ("testing.assert_codes_equal floats", lambda: T.assert_codes_equal(np.zeros(2), ZERO4),
     TypeError, r"float64"),
    ("testing.assert_codes_equal nan='x'", lambda: T.assert_codes_equal(ZERO4, ZERO4, nan="x"),
     ValueError, r"'x'"),
    ("testing.assert_codes_equal fmt='x'", lambda: T.assert_codes_equal(ZERO4, ZERO4, fmt="x"),
     ValueError, r"'x'"),
    ("testing.assert_codes_equal fmt=5", lambda: T.assert_codes_equal(ZERO4, ZERO4, fmt=5),
     TypeError, r"got 5"),
    ("testing.assert_codes_equal err_msg=5",
     lambda: T.assert_codes_equal(ZERO4, ZERO4, err_msg=5), TypeError, r"err_msg.*got 5"),
    ("testing.assert_codes_equal code 256",
     lambda: T.assert_codes_equal(np.array([256]), np.array([0]), fmt=E4), ValueError, r"256"),
]:
    row(label, fn, exc, pat)

# --------------------------------------------------------------------------
# test vectors (softfp8.vectors; the CLI's gen / ver)
# --------------------------------------------------------------------------

_NOLINES = io.BytesIO(b"")
for label, fn, exc, pat in [
    ("vectors.generate fmt", lambda: V.generate("nope", "add"), TypeError, r"'nope'"),
    ("vectors.generate op", lambda: V.generate(E4, "bogus"), ValueError, r"'bogus'"),
    ("vectors.generate op ldexp", lambda: V.generate(E4, "ldexp"), ValueError, r"'ldexp'"),
    ("vectors.generate level", lambda: V.generate(E4, "add", level=3), ValueError, r"got 3"),
    ("vectors.generate count", lambda: V.generate(E4, "add", count=-1), ValueError, r"got -1"),
    ("vectors.generate count float", lambda: V.generate(E4, "add", count=1.5), TypeError,
     r"count.*1\.5"),
    ("vectors.generate seed", lambda: V.generate(E4, "add", seed="x"), TypeError, r"seed.*'x'"),
    ("vectors.generate seed<0", lambda: V.generate(E4, "add", seed=-1), ValueError, r"got -1"),
    ("vectors.generate rounding", lambda: V.generate(E4, "add", rounding="x"), ValueError,
     r"'x'"),
    ("vectors.generate sr_bits", lambda: V.generate(E4, "add", sr_bits=0), ValueError, r"got 0"),
    ("vectors.generate chunk", lambda: V.generate(E4, "add", chunk=0), ValueError, r"got 0"),
    ("vectors.generate max_lines", lambda: V.generate(E4, "add", max_lines=-5), ValueError,
     r"got -5"),
    ("vectors.write out", lambda: V.write(5, E4, "add"), TypeError, r"got 5"),
    ("vectors.verify stream", lambda: V.verify(5, E4, "add"), TypeError, r"got 5"),
    ("vectors.verify text stream", lambda: V.verify(io.StringIO(""), E4, "add"), TypeError,
     r"StringIO"),
    ("vectors.verify nan", lambda: V.verify(_NOLINES, E4, "add", nan="x"), ValueError, r"'x'"),
    ("vectors.verify max_report", lambda: V.verify(_NOLINES, E4, "add", max_report=-1),
     ValueError, r"got -1"),
    ("vectors.verify block_lines", lambda: V.verify(_NOLINES, E4, "add", block_lines=0),
     ValueError, r"got 0"),
    ("vectors.verify ignore_flags", lambda: V.verify(_NOLINES, E4, "add", ignore_flags="bogus"),
     ValueError, r"'bogus'"),
    ("vectors.verify bad line", lambda: V.verify(io.BytesIO(b"zz yy\n"), E4, "add"),
     V.VectorError, r"line 1"),
    ("vectors.verify code 1FF", lambda: V.verify(io.BytesIO(b"1FF 00 00 00\n"), E4, "add"),
     V.VectorError, r"line 1"),
    ("vectors.endpoint name", lambda: V.endpoint("int7"), ValueError, r"'int7'"),
    ("vectors.endpoint type", lambda: V.endpoint(3.5), TypeError, r"got 3.5"),
    ("vectors.conversion_cases dst", lambda: V.conversion_cases("e4m3", "uint128"), ValueError,
     r"'uint128'"),
    ("vectors.generate_conversion uint64 stochastic",
     lambda: V.generate_conversion("uint64", "e4m3", rounding="stochastic"), ValueError,
     r"uint64 sources under stochastic rounding"),
    ("vectors.conversion_cases level", lambda: V.conversion_cases("binary32", "e4m3", level=3), ValueError,
     r"got 3"),
    ("vectors.conversion_cases seed", lambda: V.conversion_cases("binary32", "e4m3", seed="x"), TypeError,
     r"'x'"),
    ("vectors.conversion_columns src", lambda: V.conversion_columns("nope", "e4m3"), ValueError, r"'nope'"),
    ("vectors.conversion_columns rounding", lambda: V.conversion_columns("e4m3", "int8", rounding="x"),
     ValueError, r"'x'"),
    ("vectors.generate_conversion rounding",
     lambda: list(V.generate_conversion("e4m3", "int8", rounding="x")), ValueError, r"'x'"),
    ("vectors.generate_conversion count",
     lambda: list(V.generate_conversion("binary32", "e4m3", count=-1)), ValueError, r"got -1"),
    ("vectors.generate_conversion sr_bits",
     lambda: list(V.generate_conversion("e4m3", "int8", sr_bits=0)), ValueError, r"got 0"),
    ("vectors.read_cases stream", lambda: list(V.read_cases(5, E4, "add")), TypeError, r"got 5"),
    ("vectors.read_cases op", lambda: list(V.read_cases(io.BytesIO(b""), E4, "bogus")), ValueError,
     r"'bogus'"),
    ("vectors.read_cases bad line", lambda: list(V.read_cases(io.BytesIO(b"zz\n"), E4, "add")),
     V.VectorError, r"line 1"),
    ("vectors.verify_conversion stream", lambda: V.verify_conversion(5, "e4m3", "int8"), TypeError,
     r"got 5"),
    ("vectors.verify_conversion nan", lambda: V.verify_conversion(_NOLINES, "e4m3", "int8", nan="x"),
     ValueError, r"'x'"),
    ("vectors.verify_conversion bad line",
     lambda: V.verify_conversion(io.BytesIO(b"zz\n"), "e4m3", "int8"), V.VectorError, r"line 1"),
    ("vectors.describe m", lambda: V.describe(E4, "add", 5), TypeError, r"got 5"),
    ("vectors.columns op", lambda: V.columns(E4, "bogus"), ValueError, r"'bogus'"),
    ("vectors.case_set level", lambda: V.case_set(E4, "add", level=0), ValueError, r"got 0"),
    ("vectors.special_codes fmt", lambda: V.special_codes("x"), TypeError, r"'x'"),
    ("vectors.special_codes level", lambda: V.special_codes(softfp8.float16, level=9),
     ValueError, r"got 9"),
    ("vectors.parse_flags", lambda: V.parse_flags("bogus"), ValueError, r"'bogus'"),
    ("vectors.parse_flags 0x40", lambda: V.parse_flags("0x40"), ValueError, r"0x40"),
    ("vectors.flag_names str", lambda: V.flag_names("x"), TypeError, r"'x'"),
    ("vectors.flag_names -1", lambda: V.flag_names(-1), ValueError, r"got -1"),
    ("vectors.environments", lambda: V.environments("bogus"), ValueError, r"'bogus'"),
    ("vectors.sv_package(1)", lambda: V.sv_package(1), TypeError, r"sv_package\(\) takes 0"),
]:
    row(label, fn, exc, pat)

# --------------------------------------------------------------------------
# softfp8.dask (the optional extra)
# --------------------------------------------------------------------------

if D is not None:
    X = da.from_array(np.zeros(4, E4.dtype), chunks=2)
    X22 = da.from_array(np.zeros((2, 2), E4.dtype), chunks=1)
    for label, fn, exc, pat in [
        ("dask.sum ndarray", lambda: D.sum(np.zeros(3, E4.dtype)), TypeError, r"ndarray"),
        ("dask.sum float", lambda: D.sum(da.zeros(3)), TypeError, r"float64"),
        ("dask.sum axis", lambda: D.sum(X, axis=5), ValueError, r"axis 5"),
        ("dask.sum rounding", lambda: D.sum(X, rounding="x"), ValueError, r"'x'"),
        ("dask.sum dtype", lambda: D.sum(X, dtype="bogus"), TypeError, r"'bogus'"),
        ("dask.sum dtype int8", lambda: D.sum(X, dtype=np.int8), TypeError, r"int8"),
        ("dask.sum seed", lambda: D.sum(X, rounding="stochastic", seed=-1), ValueError,
         r"got -1"),
        ("dask.mean axis", lambda: D.mean(X, axis=1.5), TypeError, r"1\.5"),
        ("dask.mean sr_bits", lambda: D.mean(X, sr_bits=99), ValueError, r"got 99"),
        ("dask.max axis", lambda: D.max(X, axis=7), ValueError, r"7"),
        ("dask.min list", lambda: D.min([1, 2]), TypeError, r"list"),
        ("dask.matmul 1-D", lambda: D.matmul(X, X22), ValueError, r"\(4,\)"),
        ("dask.matmul out_dtype", lambda: D.matmul(X22, X22, out_dtype="x"), TypeError, r"'x'"),
        ("dask.matmul formats", lambda: D.matmul(X22, X22.astype(softfp8.e5m2.dtype)),
         TypeError, r"e4m3.*e5m2"),
        ("dask.exact_split_k k=0", lambda: D.exact_split_k(E4, 0), ValueError, r"got 0"),
        ("dask.exact_split_k k=2.5", lambda: D.exact_split_k(E4, 2.5), TypeError, r"2\.5"),
        ("dask.exact_split_k fmt", lambda: D.exact_split_k("x", 2), TypeError, r"'x'"),
        ("dask.astype dtype", lambda: D.astype(X, "bogus"), TypeError, r"'bogus'"),
        ("dask.astype rounding", lambda: D.astype(X, np.float32, rounding="x"), ValueError,
         r"'x'"),
        ("dask.save ndarray", lambda: D.save("unused", np.zeros(3)), TypeError, r"ndarray"),
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

io_row("save path None", lambda t: (lambda: softfp8.save(None, np.zeros(3, E4.dtype))),
       TypeError, r"NoneType")
io_row("load path 5", lambda t: (lambda: softfp8.load(5.5)), TypeError, r"float")
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
    ("sign field 2", {**_DESC, "family": "factory", "params": [8, 2, 4, 3, 7, 1, 0, 1]},
     r"signed.*got 2"),
]:
    io_row(f"load desc {label}", lambda t, desc=desc: _with_desc(t, desc) and
           (lambda: softfp8.load(t / "f.npz")), ValueError, pat)
io_row("load codes dtype",
       lambda t: _npz(t / "c.npz", codes=np.zeros(3, np.uint16),
                      format=np.array(json.dumps(_DESC))) and (lambda: softfp8.load(t / "c.npz")),
       ValueError, r"c\.npz.*uint16")

io_row("savez path None", lambda t: (lambda: softfp8.savez(None, np.zeros(3, E4.dtype))),
       TypeError, r"NoneType")
io_row("savez object array", lambda t: (lambda: softfp8.savez(t / "o.npz", a=np.array([None]))),
       TypeError, r"'a'.*object.*pickle")
io_row("savez reserved name", lambda t: (lambda: softfp8.savez(t / "r.npz", __softfp8__=np.zeros(2))),
       ValueError, r"__softfp8__")
io_row("savez name twice", lambda t: (lambda: softfp8.savez(t / "n.npz", np.zeros(2), arr_0=np.zeros(2))),
       TypeError, r"arr_0")
io_row("savez bad dir", lambda t: (lambda: softfp8.savez(t / "no" / "x.npz", a=np.zeros(3, E4.dtype))),
       FileNotFoundError, r"no")
for label, meta in [("not json", "{x"), ("no arrays", '{"softfp8": 1}'),
                    ("unknown array", '{"softfp8": 1, "arrays": {"zz": {}}}'),
                    ("bad format", '{"softfp8": 1, "arrays": {"a": {"softfp8": 1, "name": "e4m3"}}}')]:
    io_row(f"load savez {label}", lambda t, meta=meta: _npz(t / "z.npz", a=np.zeros(3, np.uint8),
                                                           __softfp8__=np.array(meta)) and
           (lambda: softfp8.load(t / "z.npz")), ValueError, r"z\.npz")


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


if D is not None:
    @pytest.mark.parametrize("label,build,exc,pat", [
        ("dask.load missing", lambda t: (lambda: D.load(t / "missing")), ValueError,
         r"missing.*not a softfp8 Dask store"),
        ("dask.load chunks", lambda t: D.save(t / "s", X) or (lambda: D.load(t / "s", chunks="x")),
         ValueError, r"'x'|chunks"),
        ("dask.save path", lambda t: (lambda: D.save(None, X)), TypeError, r"None"),
    ], ids=lambda v: v if isinstance(v, str) else "")
    def test_bad_dask_store(label, build, exc, pat, tmp_path):
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
    (["demo", "extra"], r"extra"),
    (["demo", "--steps", "x"], r"'x'"),
    (["demo", "--seed", "x"], r"'x'"),
    (["demo", "--steps", "-5"], r"got -5"),
    (["tour", "--bogus"], r"--bogus"),
    (["tour", "extra"], r"extra"),
    (["formats", "--x"], r"--x"),
    (["config", "--bogus"], r"--bogus"),
    (["config", "extra"], r"extra"),
    (["config", "--static"], r"--cflags"),
    (["gen", "nope", "add"], r"'nope'"),
    (["gen", "e4m3", "bogus"], r"'bogus'"),
    (["gen", "e4m3", "ldexp"], r"'ldexp'"),
    (["gen", "e4m3", "add", "--rounding", "x"], r"'x'"),
    (["gen", "e4m3", "add", "--sr-bits", "0"], r"got 0"),
    (["gen", "e4m3", "add", "--sr-bits", "x"], r"'x'"),
    (["gen", "e4m3", "add", "--level", "3"], r"invalid choice: 3"),
    (["gen", "e4m3", "add", "-n", "-5"], r"got -5"),
    (["gen", "e4m3", "add", "--seed", "-1"], r"got -1"),
    (["gen", "e4m3", "add", "--max-lines", "-3"], r"got -3"),
    (["gen", "e4m3", "add", "-o", "/nonexistent/dir/f.txt"], r"'/nonexistent/dir/f\.txt'"),
    (["gen", "cfloat8_143", "add"], r"cfloat8_143 needs --bias"),
    (["gen", "cfloat8_143", "add", "--bias", "99"], r"got 99"),
    (["gen", "e4m3", "add", "--tininess", "x"], r"'x'"),
    (["gen"], r"format, OP"),
    (["ver", "e4m3", "add", "/nonexistent.txt"], r"'/nonexistent\.txt'"),
    (["ver", "e4m3", "convert", "/dev/null"], r"--from SRC"),
    (["gen", "e4m3", "convert", "--to", "int7"], r"'int7'"),
    (["cov", "e4m3", "mul", "/nonexistent.txt"], r"'/nonexistent\.txt'"),
    (["cov", "nope", "mul", "/dev/null"], r"'nope'"),
    (["cov", "e4m3", "mul", "--rounding", "x", "/dev/null"], r"'x'"),
    (["ver", "nope", "add", "/dev/null"], r"'nope'"),
    (["ver", "e4m3", "add", "--nan", "x", "/dev/null"], r"'x'"),
    (["ver", "e4m3", "add", "--ignore-flags", "bogus", "/dev/null"], r"'bogus'"),
    (["ver", "e4m3", "add", "--errors", "-1", "/dev/null"], r"got -1"),
    (["ver", "e4m3", "add", "--errors", "x", "/dev/null"], r"'x'"),
    (["ver", "e4m3", "add", "/"], r"'/'"),
    (["ver", "e4m3", "add", "--sr-bits", "40", "/dev/null"], r"got 40"),
    (["info", "e4m3", "--bias", "nan"], r"'nan'"),
    (["calc", "e4m3", "ldexp", "0x38", "x"], r"'x'"),
    (["audit", "e4m3", "exp", "/nonexistent.txt"], r"'/nonexistent\.txt'"),
    (["audit", "e4m3", "exp", "--callable", "numpy:exp"], r"--dtype"),
    (["audit", "e4m3", "exp", "--callable", "nomodule:f", "--dtype", "numpy:uint8"], r"nomodule"),
    (["audit", "e4m3", "exp", "--rounding", "up", "/dev/null"], r"'up'"),
]


@pytest.mark.parametrize("argv,pat", CLI_ROWS, ids=[" ".join(a) for a, _ in CLI_ROWS])
def test_cli_bad_input(argv, pat, capsys):
    with pytest.raises(SystemExit) as info:
        cli_main(argv)
    captured = capsys.readouterr()
    assert info.value.code == 2, (info.value.code, captured.err)
    assert captured.out == ""
    assert re.search(pat, captured.err), f"stderr {captured.err!r} does not match {pat!r}"


# record and exception types: they hold whatever they are given (no argument to refuse)
NO_ARGUMENTS_TO_CHECK = {"bits.Operation", "vectors.Report", "vectors.Mismatch",
                         "vectors.VectorError", "vectors.Endpoint"}   # records vectors returns


def _public_callables():
    """Every public callable, derived from the package: softfp8.__all__ (formats are
    values; their methods count as Format.<method>), the public methods of Format, and
    the __all__ of softfp8.bits, softfp8.testing, softfp8.vectors and (when Dask is
    installed) softfp8.dask, as 'module.name'."""
    names = set()
    for n in softfp8.__all__:
        obj = getattr(softfp8, n)
        if isinstance(obj, softfp8.Format) or inspect.ismodule(obj):
            continue
        assert callable(obj), n
        names.add(n)
    names |= {f"Format.{m}" for m in dir(softfp8.Format)
              if not m.startswith("_") and callable(getattr(softfp8.Format, m))}
    modules = {"bits": B, "testing": T, "vectors": V}
    if D is not None:
        modules["dask"] = D
    for prefix, mod in modules.items():
        names |= {f"{prefix}.{n}" for n in mod.__all__ if callable(getattr(mod, n))}
    return names - NO_ARGUMENTS_TO_CHECK


def _labels():
    labels = [r[0] for r in ROWS] + [r[0] for r in IO_ROWS]
    if D is not None:
        labels += ["dask.load", "dask.save"]      # test_bad_dask_store
    return labels


def test_every_public_callable_has_rows():
    """A new public function, method, class or CLI subcommand without a row fails here."""
    labels = _labels()
    names = _public_callables()
    assert len(names) > 100 and "Format.decode" in names and "testing.assert_flags" in names
    missing = sorted(n for n in names
                     if not any(re.match(re.escape(n) + r"($|[ (.\[])", lab) for lab in labels))
    assert not missing, f"public callables without a bad-input row: {missing}"
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    commands = set(sub.choices)
    assert commands >= {"formats", "info", "calc", "demo", "config", "gen", "ver"}
    assert commands <= {argv[0] for argv, _ in CLI_ROWS}, "a CLI subcommand without rows"


def test_table_sizes():
    """Every operation of the table and every public name has rows (a new public
    function must be added here)."""
    labels = " ".join(r[0] for r in ROWS)
    for name in B.OPERATIONS:
        assert f"bits.{name} " in labels, name
    covered = {"round_integral", "compare", "sum", "convert", "from_float", "to_float",
               "to_int64", "from_int64", "dot", "sum_square", "sum_abs", "scaled_prod",
               "scaled_prod_sum", "scaled_prod_diff", "exact_values", "round_exact"}
    for name in covered:
        assert f"bits.{name} " in labels, name
    assert set(B.__all__) - set(B.OPERATIONS) - covered == {"ROUNDING_MODES", "OPERATIONS",
                                                            "Operation"}
    assert len(ROWS) > 900 and len(IO_ROWS) >= 20 and len(CLI_ROWS) >= 30
