"""Build e4m3_mul.v and run the cocotb test test_e4m3_mul.py under a simulator.

    python examples/cocotb/run.py [--sim icarus|verilator] [--bug] [--count N]
                                  [--report FILE] [--build-dir DIR]

Needs cocotb (pip install cocotb) and Icarus Verilog (apt-get install iverilog) or
Verilator 5.  Exit status: the test's (0: every transaction matched, or with --bug the
scoreboard reported the planted bug).
"""
import argparse
import os
import sys
from pathlib import Path

from cocotb_tools.runner import get_runner

HERE = Path(__file__).resolve().parent


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sim", default=os.environ.get("SIM", "icarus"), choices=("icarus", "verilator"))
    p.add_argument("--bug", action="store_true", help="plant the rounding bug (BUG=1)")
    p.add_argument("--count", type=int, default=65536, help="operand pairs (default all)")
    p.add_argument("--report", help="JSON file for the scoreboard's report")
    p.add_argument("--build-dir", default=str(HERE / "sim_build"))
    args = p.parse_args(argv)
    runner = get_runner(args.sim)
    build_dir = Path(args.build_dir) / f"{args.sim}_bug{int(args.bug)}"
    runner.build(sources=[HERE / "e4m3_mul.v"], hdl_toplevel="e4m3_mul",
                 parameters={"LANES": 4, "BUG": int(args.bug)}, build_dir=build_dir,
                 timescale=("1ns", "1ps"))
    env = {"SOFTFP8_COUNT": str(args.count), "SOFTFP8_EXPECT_BUG": str(int(args.bug)),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    if args.report:
        env["SOFTFP8_REPORT"] = str(Path(args.report).resolve())
    results = runner.test(hdl_toplevel="e4m3_mul", test_module="test_e4m3_mul", build_dir=build_dir,
                          test_dir=HERE, extra_env=env)
    from cocotb_tools.runner import get_results
    tests, fails = get_results(results)
    print(f"cocotb: {tests} tests, {fails} failed")
    return 1 if fails or not tests else 0


if __name__ == "__main__":
    sys.exit(main())
