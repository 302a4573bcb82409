"""Packaging: the C header ships with the package and get_include() finds it."""
import shutil
import subprocess
from pathlib import Path

import pytest

import softfp8

PKG = Path(softfp8.__file__).resolve().parent
SOURCE_TREE = (PKG.parent / "setup.py").is_file() and (PKG.parent / "include").is_dir()


def test_get_include_contains_the_header():
    inc = Path(softfp8.get_include())
    assert inc.is_dir(), inc
    header = inc / "softfp8" / "softfp8.h"
    assert header.is_file(), header
    assert "SFP8_API_VERSION" in header.read_text()


def test_get_include_location():
    inc = Path(softfp8.get_include()).resolve()
    if SOURCE_TREE:
        assert inc in (PKG.parent / "include", PKG / "include"), inc
    else:  # an installed wheel carries the headers inside the package
        assert inc == PKG / "include", inc


def test_header_compiles(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "use_header.c"
    src.write_text('#include <softfp8/softfp8.h>\n'
                   'int main(void) { return SFP8_API_VERSION > 0 ? 0 : 1; }\n')
    proc = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-fsyntax-only",
                           "-I", softfp8.get_include(), str(src)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
