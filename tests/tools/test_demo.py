"""`softfp8 demo` (softfp8/demo.py): the training demo, run as a subprocess with --quick.

The table's layout, float32 reaching a sane accuracy, the recipes repeating exactly for one
seed, the PNG (when matplotlib is installed), option errors, and the old tour.
"""
import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import softfp8
from softfp8 import demo

# the recipes the README, docs/training.md and the report quote, in table order
RECIPES = [r.name for r in demo.RECIPES]
ROW = re.compile(r"^(\S+)\s+(\d+\.\d{4})\s+(\d+\.\d)%\s+(-|[+-]\d+\.\d pt)\s+(\d+\.\d) s$")


def run_demo(*args, cwd, ok=True, **env_vars):
    pkg_parent = str(Path(softfp8.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [pkg_parent] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        **env_vars)
    proc = subprocess.run([sys.executable, "-m", "softfp8", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert "Traceback" not in proc.stderr, proc.stderr
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def parse_table(stdout):
    """[(recipe, loss, accuracy %, gap text, seconds)] of the table; checks its frame."""
    lines = stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("recipe "))
    assert re.split(r"\s{2,}", lines[head].strip()) == demo.HEADER
    assert set(lines[head + 1].replace(" ", "")) == {"-"}
    rows = []
    for line in lines[head + 2:]:
        if not line.strip():
            break
        m = ROW.match(line)
        assert m, line
        rows.append((m.group(1), float(m.group(2)), float(m.group(3)), m.group(4),
                     float(m.group(5))))
    return rows


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("demo")
    return [run_demo("demo", "--quick", "--no-png", cwd=cwd).stdout for _ in range(2)], cwd


def test_quick_table(quick_runs):
    (out, _), cwd = quick_runs
    rows = parse_table(out)
    assert [r[0] for r in rows] == RECIPES
    assert rows[0][0] == "float32" and rows[0][3] == "-"
    assert rows[0][2] >= 85.0, rows[0]          # float32 learns the spirals
    assert rows[0][1] < 0.5, rows[0]
    for name, loss, acc, gap, secs in rows[1:]:
        assert math.isfinite(loss) and 0 <= acc <= 100 and secs >= 0
        # the gap column is the accuracy difference in percentage points (rounding of both)
        assert abs(float(gap.split()[0]) - (acc - rows[0][2])) <= 0.11, (name, gap)
    # every recipe is described under the table; --no-png writes nothing
    for name in RECIPES:
        assert f"  {name}: " in out
    assert "total " in out and not list(cwd.iterdir())


def test_same_seed_same_table(quick_runs):
    (a, b), _ = quick_runs
    strip = [[r[:4] for r in parse_table(out)] for out in (a, b)]   # all but the times
    assert strip[0] == strip[1]


def test_fast_paths_do_not_change_the_table(tmp_path):
    # the fast paths are bit-identical to the exact core, so every recipe trains the same
    tables = [[r[:4] for r in parse_table(run_demo("demo", "--quick", "--steps", "15",
                                                   "--no-png", cwd=tmp_path,
                                                   SOFTFP8_FAST=fast).stdout)]
              for fast in ("0", "1")]
    assert tables[0] == tables[1]


def test_seed_changes_the_run(tmp_path):
    outs = [run_demo("demo", "--quick", "--steps", "10", "--seed", s, "--no-png",
                     cwd=tmp_path).stdout for s in ("1", "2")]
    assert "10 steps, seed 2" in outs[1]
    losses = [[r[1] for r in parse_table(out)] for out in outs]
    assert losses[0] != losses[1]


def test_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "sub" / "curves.png"
    path.parent.mkdir()
    out = run_demo("demo", "--quick", "--steps", "5", "--png", str(path), cwd=tmp_path).stdout
    assert str(path) in out
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_default_png_in_cwd_or_note(tmp_path):
    out = run_demo("demo", "--quick", "--steps", "2", cwd=tmp_path).stdout
    if importlib.util.find_spec("matplotlib") is None:
        assert "matplotlib is not installed" in out and "softfp8[plot]" in out
        assert not list(tmp_path.iterdir())
    else:
        assert (tmp_path / demo.DEFAULT_PNG).is_file()


@pytest.mark.parametrize("args, mention", [
    (["--steps", "0"], "--steps"),
    (["--steps", "x"], "--steps"),
    (["--seed", "-1"], "--seed"),
    (["--seed", str(2**32)], "--seed"),
    (["--png", "a.png", "--no-png"], "--no-png"),
])
def test_bad_options_fail_cleanly(tmp_path, args, mention):
    proc = run_demo("demo", *args, cwd=tmp_path, ok=False)
    assert proc.returncode == 2 and mention in proc.stderr, proc.stderr


@pytest.mark.parametrize("argv", [["tour"], ["demo", "--tour"]])
def test_tour(tmp_path, argv):
    out = run_demo(*argv, cwd=tmp_path).stdout
    assert "$ softfp8 formats" in out and "cfloat8_143" in out
    assert "0x7e  448.0  flags: INEXACT|OVERFLOW" in out


# ---- the recipes' own pieces, in process ----------------------------------------

def e4m3_grid():
    """Every finite E4M3 value, from SPEC §2 by hand (s.4.3, bias 7, S.1111.111 NaN)."""
    vals = set()
    for e in range(16):
        for m in range(8):
            if e == 15 and m == 7:
                continue
            mag = m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
            vals |= {mag, -mag}
    assert len(vals) == 253    # 254 finite codes, +0 and -0 one value
    return np.array(sorted(vals))


@pytest.mark.parametrize("cls", [demo.WeightsNearest, demo.WeightsStochastic])
def test_weight_store_stays_on_the_e4m3_grid(cls):
    grid = e4m3_grid()
    w = np.random.default_rng(5).normal(0, 0.3, 4000).astype(np.float32)
    q = cls(seed=3).store(w, layer=1, step=7)
    assert np.isin(q, grid).all()
    lo = grid[np.searchsorted(grid, w, side="right") - 1]   # the grid neighbours of w
    hi = grid[np.searchsorted(grid, w, side="left")]
    assert ((q == lo) | (q == hi)).all()
    if cls is demo.WeightsNearest:
        assert (np.abs(q - w) <= np.abs(np.where(q == lo, hi, lo) - w)).all()
    else:   # stochastic: some values round away from the nearer neighbour, seeded
        nearer = np.where(np.abs(lo - w) <= np.abs(hi - w), lo, hi)
        assert (q != nearer).sum() > 100
        assert np.array_equal(q, cls(seed=3).store(w, layer=1, step=7))
        assert not np.array_equal(q, cls(seed=3).store(w, layer=1, step=8))


def test_stochastic_store_is_unbiased():
    # 0.3 lies between the E4M3 values 0.28125 and 0.3125: SR gives 0.3125 with
    # probability (0.3 - 0.28125) / 0.03125 = 0.6
    w = np.full(20000, 0.3, np.float32)
    q = demo.WeightsStochastic(seed=0).store(w, layer=0, step=1)
    assert set(np.unique(q)) == {0.28125, 0.3125}
    assert abs(np.mean(q == 0.3125) - 0.6) < 0.02


def test_spirals_are_balanced_and_seeded():
    x, y = demo.spirals(200, seed=4)
    assert x.shape == (600, 2) and x.dtype == np.float32
    assert np.bincount(y).tolist() == [200, 200, 200]
    assert (np.hypot(x[:, 0], x[:, 1]) <= 1 + 1e-6).all()
    assert np.array_equal(x, demo.spirals(200, seed=4)[0])
    assert not np.array_equal(x, demo.spirals(200, seed=5)[0])
