"""NumPy's own float16 suite, run on softfp8.float16 (issue 9, item 6).

NumPy ships ``numpy/_core/tests/test_half.py``.  ``tools/peer_suites.py`` reads it from
there, substitutes softfp8.float16's scalar type for ``np.float16`` on the syntax tree
and runs it under pytest in a subprocess (nothing of NumPy's file is copied into this
repository).  Every test must pass except:

* the statements the runner lists as inapplicable (``INAPPLICABLE_STATEMENTS`` in
  tools/peer_suites.py, with reasons; also in docs/numpy.md, "Peer suites"), which it
  removes before compiling, and
* ``KNOWN_FAILURES`` below: defects not yet fixed.  The list must only shrink: a known
  failure that passes fails this test (strict xfail), as does any other failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "tools" / "peer_suites.py"
TEST_HALF = Path(np.__file__).resolve().parent / "_core" / "tests" / "test_half.py"
SUITE = "numpy/test_half::TestHalf::"

# NumPy 2.4's and 2.5's test_half.py have 39 tests (parametrisations counted).
EXPECTED_TESTS = 39

# test id -> the defect, to be removed as fixes land (none left: test_half_fpe passes
# since np.spacing(inf / nan) raises invalid, issue 24).
KNOWN_FAILURES: dict = {}


@pytest.fixture(scope="module")
def peer_run(tmp_path_factory):
    if not TEST_HALF.is_file():
        pytest.fail(f"NumPy's test_half.py not found at {TEST_HALF}: the NumPy install "
                    "lacks its test files")
    tmp = tmp_path_factory.mktemp("peer_half")
    known, out = tmp / "known.json", tmp / "result.json"
    known.write_text(json.dumps(KNOWN_FAILURES))
    proc = subprocess.run(
        [sys.executable, str(RUNNER), "--json", str(out), "--known-failures", str(known),
         str(TEST_HALF)],
        cwd=REPO, env=dict(os.environ), capture_output=True, text=True, timeout=300)
    assert out.is_file(), f"runner wrote no result:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    result = json.loads(out.read_text())
    result["returncode"] = proc.returncode
    result["log"] = proc.stdout[-3000:] + proc.stderr[-3000:]
    return result


def test_every_test_collected(peer_run):
    ids = [t["id"] for t in peer_run["tests"]]
    assert len(ids) == EXPECTED_TESTS, (len(ids), ids)
    assert all(i.startswith("numpy/test_half::") for i in ids)
    assert not peer_run["missing"], f"known failures not collected: {peer_run['missing']}"


def test_no_unexpected_failure(peer_run):
    bad = [f"{t['id']}: {t['error']}" for t in peer_run["tests"] if t["class"] == "failed"]
    assert not bad, "NumPy test_half.py failures outside KNOWN_FAILURES:\n" + "\n".join(bad)


def test_known_failures_still_fail(peer_run):
    passing = [t["id"] for t in peer_run["tests"] if t["class"] == "XPASS"]
    assert not passing, ("these KNOWN_FAILURES pass now; remove them from the list in "
                         f"{Path(__file__).name}: {passing}")


def test_nothing_else(peer_run):
    classes = {t["class"] for t in peer_run["tests"]}
    assert classes <= {"passed", "known-failure"}, classes
    counts = peer_run["summary"]["numpy/test_half"]
    assert counts["passed"] + counts["known-failure"] == EXPECTED_TESTS, counts
    assert counts["known-failure"] == len(KNOWN_FAILURES), counts
    assert peer_run["returncode"] == 0, peer_run["log"]


def test_inapplicable_list_documented():
    import importlib.util
    import re

    spec = importlib.util.spec_from_file_location("peer_suites", RUNNER)
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    doc = (REPO / "docs" / "numpy.md").read_text()
    section = doc[doc.index("## Peer suites"):]
    for _, func, stmt, _ in runner.INAPPLICABLE_STATEMENTS:
        assert f"`{func}`" in section and stmt in section, (func, stmt)
    for pattern in runner.INAPPLICABLE:
        name = re.search(r"test\(?[A-Za-z|]+\)?_$", pattern).group(0)
        for alt in re.sub(r"^test\((.*)\)_$", r"\1", name).split("|"):
            alt = alt if alt.startswith("test") else "test" + alt
            assert alt.rstrip("_") + "_*" in section, (pattern, alt)
