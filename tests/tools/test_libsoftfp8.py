"""libsoftfp8: the C core as a shared and a static library, linked by C and C++ programs.

The examples of examples/c and examples/cpp are compiled with the flags of
`softfp8 config` (and pkg-config), run, and their output is recomputed through the
Python API (softfp8.bits).  One test builds a wheel with `pip wheel .`, installs it
into a fresh folder and compiles examples/c against that installation.
"""
import io
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import softfp8
import softfp8.bits as sb
from softfp8 import vectors

PKG = Path(softfp8.__file__).resolve().parent
REPO = PKG.parent
EXAMPLES = REPO / "examples"
CC = shutil.which("cc") or shutil.which("gcc")
CXX = shutil.which("c++") or shutil.which("g++")
NM = shutil.which("nm")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")
needs_examples = pytest.mark.skipif(not (EXAMPLES / "c" / "golden.c").is_file(),
                                    reason="not a source checkout (examples/ absent)")


def config(*flags, env=None, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "softfp8", "config", *flags], capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def build(compiler, std, source, out, flags):
    proc = subprocess.run([compiler, std, "-Wall", "-Wextra", "-Werror", str(source), *flags,
                           "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


def run(argv, **kw):
    proc = subprocess.run([str(a) for a in argv], capture_output=True, timeout=120, **kw)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def header_functions():
    text = (Path(softfp8.get_include()) / "softfp8" / "softfp8.h").read_text()
    return set(re.findall(r"\b(sfp8_[a-z0-9_]+)\s*\(", text))


def test_library_files():
    libdir = Path(softfp8.get_library_dir())
    assert softfp8.get_libraries() == ["softfp8"]
    for name in ("libsoftfp8.so", "libsoftfp8.a", "pkgconfig/softfp8.pc"):
        assert (libdir / name).is_file(), f"{libdir / name} missing: rebuild softfp8"


@pytest.mark.skipif(NM is None, reason="no nm")
def test_only_public_symbols_are_exported():
    libdir = Path(softfp8.get_library_dir())
    out = run([NM, "-D", "--defined-only", libdir / "libsoftfp8.so"]).decode()
    shared = {line.split()[-1] for line in out.splitlines() if line.strip()}
    functions = header_functions()
    assert len(functions) >= 40
    assert functions <= shared, sorted(functions - shared)
    assert all(s.startswith("sfp8_") for s in shared), sorted(s for s in shared
                                                              if not s.startswith("sfp8_"))
    out = run([NM, "-g", "--defined-only", libdir / "libsoftfp8.a"]).decode()
    static = {line.split()[-1] for line in out.splitlines() if len(line.split()) == 3}
    assert static == shared


CASES = [("e4m3", "mul", "upward"), ("e5m2", "sqrt", "to_odd"), ("float8_e3m4", "div", "toward_zero"),
         ("e4m3fnuz", "lt", "nearest_even"), ("hfp8_152", "cmp_signaling", "nearest_even")]


@needs_cc
@needs_examples
@pytest.mark.parametrize("link", ["shared", "static"])
def test_c_example_matches_python(tmp_path, link):
    flags = config("--cflags", "--libs", *(["--static"] if link == "static" else []))
    exe = build(CC, "-std=c11", EXAMPLES / "c" / "golden.c", tmp_path / "golden", flags)
    for preset, op, mode in CASES:
        out = run([exe, preset, op, mode])
        fmt = softfp8.lookup(preset)
        report = vectors.verify(io.BytesIO(out), fmt, op, rounding=mode)
        expected_lines = 256 if sb.OPERATIONS[op].arity == 1 else 65536
        assert report.lines == expected_lines, (preset, op)
        assert report.mismatches == 0, [vectors.describe(fmt, op, m) for m in report.first]


@needs_cc
@needs_examples
def test_c_example_rejects_bad_arguments(tmp_path):
    exe = build(CC, "-std=c11", EXAMPLES / "c" / "golden.c", tmp_path / "golden",
                config("--cflags", "--libs"))
    proc = subprocess.run([str(exe), "e4m3", "no_such_op", "upward"], capture_output=True)
    assert proc.returncode == 2 and b"need an 8-bit preset" in proc.stderr


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
@needs_examples
@pytest.mark.parametrize("preset, mode", [("e4m3", "upward"), ("float16", "nearest_even"),
                                          ("e5m2", "to_odd")])
def test_cpp_example_matches_python(tmp_path, preset, mode):
    exe = build(CXX, "-std=c++17", EXAMPLES / "cpp" / "dot.cpp", tmp_path / "dot",
                config("--cflags", "--libs"))
    rows = [line.split() for line in run([exe, preset, mode]).decode().splitlines()]
    assert len(rows) == 32
    fmt = softfp8.lookup(preset)
    i = np.arange(32)
    x = (i - 8).astype(np.float32) * np.float32(0.37)
    y = np.float32(1.5) - i.astype(np.float32) * np.float32(0.11)
    xc, xf = sb.from_float(x, fmt, rounding=mode)
    yc, yf = sb.from_float(y, fmt, rounding=mode)
    acc = sb.from_float(np.float32(0), fmt)[0]
    for k, row in enumerate(rows):
        got = [int(v, 16) for v in row[1:]]
        assert int(row[0]) == k
        assert got[:2] == [int(x.view(np.uint32)[k]), int(y.view(np.uint32)[k])]
        assert got[2:4] == [int(xc[k]), int(yc[k])]
        acc, fl = sb.fma(fmt, xc[k], yc[k], acc, rounding=mode)
        assert got[4:] == [int(acc), int(xf[k] | yf[k]), int(fl)], k


@needs_cc
@needs_examples
@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="no pkg-config")
def test_pkg_config(tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=config("--pkgconfigdir")[0])
    proc = subprocess.run(["pkg-config", "--cflags", "--libs", "softfp8"], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    exe = build(CC, "-std=c11", EXAMPLES / "c" / "golden.c", tmp_path / "golden", proc.stdout.split())
    report = vectors.verify(io.BytesIO(run([exe, "e5m2", "add", "downward"])), softfp8.e5m2, "add",
                            rounding="downward")
    assert (report.lines, report.mismatches) == (65536, 0)


@needs_cc
@needs_examples
@pytest.mark.skipif(not (REPO / "setup.py").is_file(), reason="not a source checkout")
@pytest.mark.skipif(os.environ.get("SOFTFP8_FAST") == "0",
                    reason="the build does not depend on SOFTFP8_FAST: run once, with fast paths on")
def test_fresh_wheel_install_links_the_example(tmp_path):
    """pip wheel . (as `pip install .` builds it, in an isolated build environment) ->
    install into an empty folder -> compile examples/c with the flags of that
    installation's `softfp8 config` -> run."""
    wheels, target = tmp_path / "wheels", tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "-q", "-w", str(wheels), str(REPO)], capture_output=True, text=True,
                          timeout=900, env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = wheels.glob("softfp8-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("softfp8/lib/libsoftfp8.so", "softfp8/lib/libsoftfp8.a",
                 "softfp8/lib/pkgconfig/softfp8.pc", "softfp8/include/softfp8/softfp8.h",
                 "softfp8/dpi/softfp8_dpi.c", "softfp8/dpi/softfp8_pkg.sv"):
        assert name in names, name
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                           "--target", str(target), str(wheel)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    env = dict(os.environ, PYTHONPATH=str(target))
    flags = config("--cflags", "--libs", env=env, cwd=tmp_path)
    assert any(str(target) in f for f in flags), flags
    exe = build(CC, "-std=c11", EXAMPLES / "c" / "golden.c", tmp_path / "golden", flags)
    out = subprocess.run([str(exe), "e4m3", "add", "nearest_even"], capture_output=True,
                         env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    assert out.returncode == 0, out.stderr
    report = vectors.verify(io.BytesIO(out.stdout), softfp8.e4m3, "add")
    assert (report.lines, report.mismatches) == (65536, 0)
