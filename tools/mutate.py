#!/usr/bin/env python3
"""Apply each deliberately broken kernel of tools/mutations.py to a copy of the tree,
rebuild (ccache), run the harness parts it names, and check that the harness FAILS.

    python tools/mutate.py                 # every mutation
    python tools/mutate.py --only ID ...   # some
    python tools/mutate.py --check         # only check that every pattern is found
    python tools/mutate.py --markdown      # the table of docs/testing.md (with --results FILE)

A mutation is caught when the harness reports a disagreement on a case that the
unmutated tree proves (failures the tree has anyway are subtracted: a baseline run per
set of parts), or when the run crashes.  Results go to a JSON file (--results).  The
copy lives in --work (default $TMPDIR/softfp8-mutate) and is reused: only the mutated
file and what ccache misses are compiled again.  Needs the project's venv (numpy,
Cython, pytest) active.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
from mutations import MUTATIONS  # noqa: E402


def locate(text, m):
    """Offset of the mutation's pattern (its nth occurrence), or raise."""
    nth = m.get("nth")
    count = text.count(m["find"])
    if count == 0:
        raise LookupError(f"{m['id']}: pattern not found in {m['file']}")
    if nth is None and count > 1:
        raise LookupError(f"{m['id']}: pattern occurs {count} times in {m['file']}: give nth")
    k = nth or 1
    if k > count:
        raise LookupError(f"{m['id']}: nth={k} but the pattern occurs {count} times")
    off = -1
    for _ in range(k):
        off = text.find(m["find"], off + 1)
    return off


def apply(text, m):
    off = locate(text, m)
    return text[:off] + m["replace"] + text[off + len(m["find"]):]


def sh(cmd, cwd, env=None, timeout=None):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def build_env(work):
    env = dict(os.environ)
    env.setdefault("CC", "ccache gcc")
    env["CCACHE_BASEDIR"] = str(work)       # the copy's paths hash as the tree's
    env["CCACHE_NOHASHDIR"] = "1"
    env.pop("SOFTFP8_FAST", None)
    env.pop("SOFTFP8_SIMD", None)
    return env


def build(work):
    try:
        import Cython  # noqa: F401 -- pip's isolated build had it; this in-place build needs it here
    except ImportError:
        raise SystemExit("tools/mutate.py needs Cython in this environment: "
                         "python -m pip install 'setuptools>=64' 'Cython>=3.0'") from None
    r = sh([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], work, build_env(work), timeout=3600)
    if r.returncode:
        raise RuntimeError(f"build failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")


def copy_tree(work):
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    files = sh(["git", "ls-files", "-z"], REPO).stdout.split("\0")
    for f in filter(None, files):
        src = REPO / f
        if src.is_file():
            dst = work / f
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def run_parts(work, expr, report):
    """(pytest return code, {failing case ids}) of the harness parts matching expr."""
    report.unlink(missing_ok=True)
    env = build_env(work)
    env["SOFTFP8_HARNESS_REPORT"] = str(report)
    r = sh([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            "tests/harness/test_harness.py", "-k", expr], work, env, timeout=3600)
    failing = set()
    if report.exists():
        for line in report.read_text().splitlines():
            for f in json.loads(line)["failures"]:
                failing.add(f.split(": ", 1)[0])
    return r.returncode, failing, r.stdout[-2000:]


def check_patterns():
    bad = []
    for m in MUTATIONS:
        try:
            locate((REPO / m["file"]).read_text(), m)
        except LookupError as e:
            bad.append(str(e))
    return bad


def markdown(results):
    rows = ["| mutation | file | what it breaks | harness parts | caught |", "|---|---|---|---|---|"]
    for m in MUTATIONS:
        r = results.get(m["id"], {})
        caught = r.get("verdict", "not run")
        if r.get("new_failures"):
            caught += f" ({r['new_failures']} cases)"
        rows.append(f"| `{m['id']}` | {m['file'].replace('softfp8/_core/', '')} | {m['what']} | "
                    f"`{m['entries']}` | {caught} |")
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "softfp8-mutate")
    ap.add_argument("--results", type=Path, default=Path(tempfile.gettempdir()) / "softfp8-mutations.json")
    ap.add_argument("--reuse", action="store_true", help="reuse an existing copy (no fresh copy and build)")
    a = ap.parse_args(argv)
    bad = check_patterns()
    if a.check or bad:
        print("\n".join(bad) or f"all {len(MUTATIONS)} patterns found")
        return 1 if bad else 0
    results = json.loads(a.results.read_text()) if a.results.exists() else {}
    if a.markdown:
        print(markdown(results))
        return 0
    todo = [m for m in MUTATIONS if not a.only or m["id"] in a.only]
    work = a.work.resolve()
    if not (a.reuse and (work / "setup.py").exists()):
        t = time.time()
        copy_tree(work)
        build(work)
        print(f"copy and build: {time.time() - t:.0f}s", flush=True)
    probe = sh([sys.executable, "-c", "import softfp8; print(softfp8.__file__)"], work, build_env(work))
    assert probe.stdout.strip().startswith(str(work)), f"not the copy's build: {probe.stdout} {probe.stderr}"
    report = work / "harness-report.jsonl"
    baseline, base_rc = {}, {}
    for m in todo:
        if m["entries"] not in baseline:
            rc, failing, _ = run_parts(work, m["entries"], report)
            baseline[m["entries"]] = failing
            base_rc[m["entries"]] = rc
            print(f"baseline {m['entries']}: rc {rc}, {len(failing)} failing cases", flush=True)
    for m in todo:
        path = work / m["file"]
        original = path.read_text()
        t = time.time()
        try:
            path.write_text(apply(original, m))
            build(work)
            rc, failing, tail = run_parts(work, m["entries"], report)
        finally:
            path.write_text(original)
        new = failing - baseline[m["entries"]]
        crashed = rc not in (0, 1) and not new
        verdict = "caught" if new or crashed else "MISSED"
        if crashed:
            verdict = f"caught (crash, pytest rc {rc})"
        elif not new and base_rc[m["entries"]] != 0 and not baseline[m["entries"]]:
            # the unmutated tree's parts already fail without a case disagreement (a part
            # that raises before its cases run): the mutation was not tested at all
            verdict = f"NOT TESTED (the parts fail on the unmutated tree, pytest rc {base_rc[m['entries']]})"
        results[m["id"]] = {"verdict": verdict, "new_failures": len(new), "rc": rc,
                            "example": sorted(new)[:3], "seconds": round(time.time() - t)}
        print(f"{m['id']}: {verdict} ({len(new)} new failing cases, {time.time() - t:.0f}s)"
              + (f"\n   e.g. {sorted(new)[0]}" if new else ""), flush=True)
        a.results.write_text(json.dumps(results, indent=1))
    build(work)   # the copy back to the unmutated tree
    missed = [k for k, v in results.items() if v["verdict"] == "MISSED"]
    untested = [k for k, v in results.items() if v["verdict"].startswith("NOT TESTED")]
    caught = len(results) - len(missed) - len(untested)
    print(f"{caught} of {len(results)} caught" + (f"; MISSED: {missed}" if missed else "")
          + (f"; NOT TESTED (parts broken on the unmutated tree): {untested}" if untested else ""))
    return 1 if missed or untested else 0


if __name__ == "__main__":
    sys.exit(main())
