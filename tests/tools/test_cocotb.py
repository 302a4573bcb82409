"""softfp8.cocotb: lane packing, the scoreboard's field-by-field reports, and the
example RTL (examples/cocotb/e4m3_mul.v, an E4M3 multiplier written here) run by
cocotb under Icarus Verilog against softfp8 on every pair of codes, plus the same
RTL with a planted rounding bug, which the scoreboard must report.

The simulator runs are skipped only outside CI when iverilog or cocotb is missing;
under CI (CI=true) a missing simulator fails the test (.ci/run installs both).
They run once, with fast paths on (SOFTFP8_FAST=0 reruns the suite for the core).
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import softfp8
import softfp8.bits as sb
from softfp8.cocotb import Scoreboard, fields, pack, ulp_distance, unpack

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "cocotb"
E4 = softfp8.e4m3


def test_pack_unpack_round_trip():
    codes = np.array([0x00, 0x7F, 0x80, 0x38], dtype=np.uint8)
    v = pack(E4, codes)
    assert v == 0x38807F00
    assert unpack(E4, v, 4).tolist() == codes.tolist()
    assert unpack(E4, v, 4).dtype == E4.storage
    # storage lanes wider than the format: a 10-bit format in 16-bit lanes
    f10 = softfp8.lookup("format(exp_bits=5, man_bits=4, bias=15)")
    v = pack(f10, [0x3FF, 0x001, 0x200], width=16)
    assert v == 0x0200_0001_03FF
    assert unpack(f10, v, 3, width=16).tolist() == [0x3FF, 0x001, 0x200]


def test_pack_unpack_refuse_what_would_be_lost():
    with pytest.raises(ValueError, match=r"lane 1: code 0x100 is not a code of e4m3"):
        pack(E4, [0x01, 0x100])
    f10 = softfp8.lookup("format(exp_bits=5, man_bits=4, bias=15)")
    with pytest.raises(ValueError, match=r"lane 0: 0x400 has bits above the 10 bits"):
        unpack(f10, 0x0400, 1, width=16)
    with pytest.raises(ValueError, match=r"bits above its 2 lanes"):
        unpack(E4, 0x1_0000, 2)
    with pytest.raises(ValueError, match="narrower"):
        pack(softfp8.float16, [1], width=8)
    cocotb_types = pytest.importorskip("cocotb.types")
    with pytest.raises(ValueError, match="not a resolved bus value"):
        unpack(E4, cocotb_types.LogicArray("0000X000"), 1)
    assert unpack(E4, cocotb_types.LogicArray("00111000"), 1).tolist() == [0x38]


def test_scoreboard_reports_field_by_field():
    board = Scoreboard(E4, name="dut")
    a, b = np.array([0x38, 0x3C, 0x01]), np.array([0x38, 0x44, 0x30])
    want, wfl = sb.mul(E4, a, b)
    assert board.check("mul", (a, b), want, wfl)
    got, gfl = want.copy(), wfl.copy()
    got[1] ^= 0x01                      # 1.5 * 3 = 4.5: the fraction's last bit
    gfl[2] &= ~np.uint8(0x02)          # the tiny product loses underflow
    assert not board.check("mul", (a, b), got, gfl)
    assert (board.checked, board.failed, board.passed) == (6, 2, 4)
    m1, m2 = board.mismatches
    assert m1.index == 4 and m1.operands == (0x3C, 0x44)
    assert "result   expected 49 (4.5), got 48 (4.0)" in m1.message
    assert "fraction expected 001, got 000   <-- differs" in m1.message
    assert "exponent expected 1001, got 1001\n" in m1.message
    assert "distance 1 ulp" in m1.message
    assert "flags    expected {inexact, underflow}, raised {inexact}; missing {underflow}, " \
           "unexpected {}" in m2.message
    text = board.summary()
    assert text.startswith("dut scoreboard (e4m3): 6 checked, 4 passed, 2 failed")
    with pytest.raises(AssertionError, match="2 failed"):
        board.assert_clean()
    with pytest.raises(AssertionError, match="no transaction"):
        Scoreboard(E4).assert_clean()


def test_scoreboard_options():
    # the DUT's flags subset, NaN by class, an ISA convention, a wider format
    board = Scoreboard(softfp8.float16, flags_mask="invalid", nan="class")
    assert board.check("add", (0x7C00, 0xFC00), 0x7E01, 0x10)       # any NaN, invalid only
    assert not board.check("add", (0x7C00, 0xFC00), 0x7C00, 0x10)
    x86 = Scoreboard(softfp8.float16, isa="x86")
    assert x86.check("sqrt", (0xBC00,), 0xFE00, 0x10)                # x86's negative indefinite
    assert not x86.check("sqrt", (0xBC00,), 0x7E00, 0x10)
    assert "sign     expected 1, got 0   <-- differs" in x86.mismatches[0].message
    assert fields(E4, 0xB9) == (1, 7, 1) and ulp_distance(E4, 0x00, 0x80) == 0
    assert ulp_distance(E4, 0x01, 0x81) == 2 and ulp_distance(E4, 0x7F, 0x00) is None
    with pytest.raises(ValueError, match="0x1ffff is not a code of float16"):
        board.check("add", (0x1FFFF, 0), 0, 0)


def _simulator():
    have = shutil.which("iverilog") is not None
    try:
        import cocotb_tools.runner  # noqa: F401
    except ImportError:
        have = False
    if not have:
        if os.environ.get("CI"):
            pytest.fail("CI must run the cocotb example: iverilog or cocotb missing (.ci/run "
                        "installs them)")
        pytest.skip("iverilog or cocotb not installed")


needs_fast_pass = pytest.mark.skipif(os.environ.get("SOFTFP8_FAST") == "0",
                                     reason="simulator runs once, in the fast-paths pass")


def _run_example(tmp_path, *args):
    report = tmp_path / "report.json"
    t0 = time.time()
    proc = subprocess.run([sys.executable, str(EXAMPLE / "run.py"), "--sim", "icarus",
                           "--report", str(report), "--build-dir", str(tmp_path / "build"), *args],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    print(f"cocotb example {' '.join(args)}: {time.time() - t0:.1f}s")
    assert report.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, json.loads(report.read_text())


@needs_fast_pass
def test_rtl_multiplier_matches_softfp8_on_every_pair(tmp_path):
    _simulator()
    proc, rep = _run_example(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (rep["checked"], rep["failed"]) == (65536, 0), rep["summary"]
    assert "cocotb: 1 tests, 0 failed" in proc.stdout


@needs_fast_pass
def test_planted_rtl_bug_is_reported(tmp_path):
    """BUG=1 rounds ties away from zero instead of to even.  0x01 * 0x30 = 2^-9 * 2^-1 =
    2^-10, halfway between 0 and the smallest subnormal 2^-9: even gives 0, the bug 0x01
    (transaction 0x01 * 256 + 0x30 = 304) -- the scoreboard names it and the field."""
    _simulator()
    proc, rep = _run_example(tmp_path, "--bug", "--count", "16384")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert rep["checked"] == 16384 and rep["failed"] > 0
    first = rep["first"][0]
    assert first.startswith("e4m3_mul: transaction 304: mul(01, 30) [nearest_even]"), first
    assert "result   expected 00 (0.0), got 01 (0.001953125)" in first
    assert "fraction expected 000, got 001   <-- differs" in first and "distance 1 ulp" in first
    assert f"16384 checked, {16384 - rep['failed']} passed, {rep['failed']} failed" in rep["summary"]
