"""cocotb test of e4m3_mul.v against softfp8: every pair of E4M3 codes through a
4-lane bus, checked by softfp8.cocotb.Scoreboard (results and flags, field by field).

Run with examples/cocotb/run.py (Icarus Verilog or Verilator).  SOFTFP8_REPORT names a
JSON file for the scoreboard's counts and summary; SOFTFP8_COUNT limits the pairs
(default: all 65,536).
"""
import json
import os

import cocotb
import numpy as np
from cocotb.triggers import Timer

import softfp8
from softfp8.cocotb import Scoreboard, pack, unpack

LANES = 4
FLAGS = "inexact,underflow,overflow,divbyzero,invalid,denormal"


@cocotb.test()
async def multiply_every_pair(dut):
    fmt = softfp8.e4m3
    sb = Scoreboard(fmt, flags_mask=FLAGS, name="e4m3_mul")
    count = int(os.environ.get("SOFTFP8_COUNT", "65536"))
    pairs = np.arange(count, dtype=np.uint32)
    a_all, b_all = (pairs >> 8).astype(np.uint8), (pairs & 0xFF).astype(np.uint8)
    for start in range(0, count, LANES):
        a, b = a_all[start:start + LANES], b_all[start:start + LANES]
        n = a.size
        dut.a.value = pack(fmt, np.pad(a, (0, LANES - n)))
        dut.b.value = pack(fmt, np.pad(b, (0, LANES - n)))
        await Timer(1, unit="ns")
        y = unpack(fmt, dut.y.value, LANES)[:n]
        fl_bus = int(dut.flags.value)
        fl = [(fl_bus >> (6 * i)) & 0x3F for i in range(n)]
        sb.check("mul", (a, b), y, fl)
    dut._log.info(sb.summary())
    report = os.environ.get("SOFTFP8_REPORT")
    if report:
        with open(report, "w") as fh:
            json.dump({"checked": sb.checked, "failed": sb.failed, "summary": sb.summary(),
                       "first": [m.message for m in sb.mismatches]}, fh)
    if os.environ.get("SOFTFP8_EXPECT_BUG") != "1":
        sb.assert_clean()
