"""The TestFloat round trip with Berkeley TestFloat's own programs, no filter in between
(docs/golden-model.md, "TestFloat round trip"):

    softfp8 gen FMT OP --testfloat --rounding rMODE | testfloat_ver -rMODE FUNC
    testfloat_gen -rMODE FUNC | softfp8 ver FMT OP --testfloat --rounding rMODE

for every binary16 function TestFloat has (arithmetic, mulAdd, rem, sqrt, eq / le / lt,
roundToInt, conversions to and from f32 / f64 / i32 / i64 / ui32 / ui64) in its six
rounding modes.  softfp8's ``le`` / ``lt`` are IEEE's quiet comparisons: TestFloat's
f16_le_quiet / f16_lt_quiet (its f16_le / f16_lt signal on quiet NaNs; softfp8 has no such
row).  Conversions to integers run with ``-exact``: softfp8's raise inexact, as IEEE's
convertToIntegerExact.  The programs are not part of softfp8 (no TestFloat code in the
repository): the test runs when ``SOFTFP8_TESTFLOAT_DIR`` names a directory holding
``testfloat_gen`` and ``testfloat_ver`` (built with SPECIALIZE_TYPE=8086-SSE), or when they
are on PATH, and skips otherwise, saying so.  The softfp8 side runs in process
(softfp8.vectors, what the command line calls) on the first 3,000 lines of each direction;
two pipes run literally through the command line on the full level-1 files.  Cost: about
12 s with the programs, 0 without.
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import softfp8
from softfp8 import vectors


def _programs():
    d = os.environ.get("SOFTFP8_TESTFLOAT_DIR")
    if d:
        gen, ver = Path(d) / "testfloat_gen", Path(d) / "testfloat_ver"
        if not (os.access(gen, os.X_OK) and os.access(ver, os.X_OK)):
            pytest.fail(f"SOFTFP8_TESTFLOAT_DIR={d} holds no executable testfloat_gen and testfloat_ver")
        return str(gen), str(ver)
    gen, ver = shutil.which("testfloat_gen"), shutil.which("testfloat_ver")
    if not (gen and ver):
        pytest.skip("Berkeley TestFloat's testfloat_gen / testfloat_ver not found: set "
                    "SOFTFP8_TESTFLOAT_DIR to the directory holding them or put them on PATH "
                    "(build: docs/golden-model.md, 'TestFloat round trip')")
    return gen, ver


MODES = ("near_even", "minMag", "min", "max", "near_maxMag", "odd")
# TestFloat function -> (softfp8 operation, or ("convert", src, dst))
FUNCS = {
    "f16_add": "add", "f16_sub": "sub", "f16_mul": "mul", "f16_div": "div", "f16_sqrt": "sqrt",
    "f16_mulAdd": "fma", "f16_rem": "ieee_remainder", "f16_eq": "eq", "f16_le_quiet": "le", "f16_lt_quiet": "lt",
    "f16_roundToInt": "round_integral",
    **{f"f16_to_{t}": ("convert", "float16", d) for t, d in
       (("f32", "binary32"), ("f64", "binary64"), ("i32", "int32"), ("i64", "int64"), ("ui32", "uint32"),
        ("ui64", "uint64"))},
    **{f"{t}_to_f16": ("convert", s, "float16") for t, s in
       (("f32", "binary32"), ("f64", "binary64"), ("i32", "int32"), ("i64", "int64"), ("ui32", "uint32"),
        ("ui64", "uint64"))},
}
LINES = 3000
F16 = softfp8.lookup("float16")


def _gen(op, mode):
    if isinstance(op, tuple):
        return b"".join(vectors.generate_conversion(op[1], op[2], rounding="r" + mode, testfloat=True))
    return b"".join(vectors.generate(F16, op, rounding="r" + mode, testfloat=True, max_lines=LINES))


def _ver(op, mode, data):
    if isinstance(op, tuple):
        return vectors.verify_conversion(io.BytesIO(data), op[1], op[2], rounding="r" + mode, testfloat=True)
    return vectors.verify(io.BytesIO(data), F16, op, rounding="r" + mode, testfloat=True)


@pytest.mark.parametrize("func", sorted(FUNCS))
def test_testfloat_round_trip(func):
    """Both directions, every rounding mode, TestFloat's programs unfiltered."""
    tf_gen, tf_ver = _programs()
    op = FUNCS[func]
    checked = 0
    for mode in MODES:
        data = _gen(op, mode)
        data = b"".join(data.splitlines(keepends=True)[:LINES])
        n = data.count(b"\n")
        exact = ["-exact"] if "_to_i" in func or "_to_u" in func else []   # convertToIntegerExact: inexact
        r = subprocess.run([tf_ver, *exact, "-r" + mode, func], input=data, capture_output=True)
        out = (r.stdout + r.stderr).decode()
        assert r.returncode == 0 and f"In {n} tests, no errors found" in out, (func, mode, out)
        tf = subprocess.run([tf_gen, *exact, "-r" + mode, func], capture_output=True, check=True).stdout
        tf = b"".join(tf.splitlines(keepends=True)[:LINES])
        rep = _ver(op, mode, tf)
        assert rep.ok and rep.lines == tf.count(b"\n"), (func, mode, rep.mismatches, rep.first[:3])
        assert n >= 300 and rep.lines >= 300, (func, mode, n, rep.lines)   # level-1 files hold >= 372
        checked += n + rep.lines
    assert checked >= 6 * 2 * 300


def test_testfloat_pipes_through_the_command_line():
    """Two pipes literally, full level-1 files: softfp8 gen | testfloat_ver and
    testfloat_gen | softfp8 ver, as docs/golden-model.md shows them."""
    tf_gen, tf_ver = _programs()
    sp = f"{sys.executable} -m softfp8"
    r = subprocess.run(f"{sp} gen float16 mul --testfloat --rounding rmin | {tf_ver} -rmin f16_mul",
                       shell=True, capture_output=True)
    assert r.returncode == 0 and b"In 30736 tests, no errors found in f16_mul, rounding min" in r.stdout, r
    r = subprocess.run(f"{tf_gen} -rnear_maxMag f32_to_f16 | {sp} ver float16 convert --from binary32 "
                       f"--testfloat --rounding rnear_maxMag", shell=True, capture_output=True)
    assert r.returncode == 0 and b"binary32 -> float16: 600 lines, 0 mismatches" in r.stdout, r
