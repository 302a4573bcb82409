"""Run the fuzzer over many seeds, each in its own subprocess (a crash is reported
with its seed), a few at a time.

    python -m tests.fuzz.run --seeds 0:200 --calls 5000 --jobs 2

Prints one line per finding and a summary: seeds, calls, fast/core comparisons,
crashes (signals), findings (mismatches, unexpected exceptions) and the time."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_one(seed, calls, timeout):
    cmd = [sys.executable, "-m", "tests.fuzz.fuzzer", str(seed), str(calls)]
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seed": seed, "finding": f"timeout after {timeout} s"}
    if p.returncode < 0:
        return {"seed": seed, "crash": f"signal {-p.returncode}", "stderr": p.stderr[-1500:]}
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"seed": seed, "finding": f"exit {p.returncode}, no result line", "stderr": p.stderr[-1500:]}
    if p.returncode != 0 and "finding" not in res:
        res["finding"] = f"exit {p.returncode}"
    return res


def fuzz(seeds, calls, jobs=2, timeout=600):
    t0 = time.time()
    with ThreadPoolExecutor(jobs) as ex:
        results = list(ex.map(lambda s: run_one(s, calls, timeout), seeds))
    summary = {"seeds": len(results), "calls": sum(r.get("calls", 0) for r in results),
               "compared": sum(r.get("compared", 0) for r in results),
               "crashes": [r for r in results if "crash" in r],
               "findings": [r for r in results if "finding" in r],
               "seconds": round(time.time() - t0, 1)}
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:20", help="first:last (exclusive)")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    lo, hi = (int(v) for v in args.seeds.split(":"))
    s = fuzz(range(lo, hi), args.calls, args.jobs)
    for r in s["crashes"] + s["findings"]:
        print(json.dumps(r)[:3000])
    print(f"seeds {s['seeds']}  calls {s['calls']}  fast/core comparisons {s['compared']}  "
          f"crashes {len(s['crashes'])}  findings {len(s['findings'])}  {s['seconds']} s")
    return 1 if s["crashes"] or s["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
