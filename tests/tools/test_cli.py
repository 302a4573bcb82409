"""The command line (`python -m softfp8` / `softfp8`), run as a subprocess.

Expected values come from SPEC.md by hand, not from the implementation.
"""
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import softfp8

REPO = Path(__file__).resolve().parents[2]
PRESETS = ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "uhp", "hfp8_143", "hfp8_152",
           "hfp16_169", "float16", "bfloat16"]
FAMILIES = ["cfloat8_143", "cfloat8_152", "shp"]
CODE_LINE = re.compile(r"^0x([0-9a-f]{2})\s+(\S+)\s+(\S+)$")
RESULT_LINE = re.compile(r"^0x([0-9a-f]+)\s+(\S+)\s+flags: (\S+)$")


def run_cli(*args, ok=True):
    """Run `python -m softfp8 ARGS` against the softfp8 this test process imported."""
    pkg_parent = str(Path(softfp8.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [pkg_parent] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    # cwd = the package's parent, so `-m` cannot pick up some other softfp8 folder
    proc = subprocess.run([sys.executable, "-m", "softfp8", *args], cwd=pkg_parent,
                          env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert "Traceback" not in proc.stderr, proc.stderr
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def fails_cleanly(*args, mention=None):
    proc = run_cli(*args, ok=False)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "error" in proc.stderr.lower(), proc.stderr
    if mention is not None:
        assert mention in proc.stderr, proc.stderr
    return proc


def code_table(stdout):
    table = {}
    for line in stdout.splitlines():
        m = CODE_LINE.match(line.strip())
        if m:
            table[int(m.group(1), 16)] = (float(m.group(2)), m.group(3))
    return table


def calc(*args):
    lines = run_cli("calc", *args).stdout.strip().splitlines()
    m = RESULT_LINE.match(lines[-1].strip())
    assert m, lines
    flags = set() if m.group(3) == "none" else set(m.group(3).split("|"))
    return int(m.group(1), 16), float(m.group(2)), flags


def e4m3_value(code):
    """SPEC §2: s.4.3, bias 7, specials fn (only S.1111.111 is NaN), ieee subnormals."""
    s, e, m = code >> 7, (code >> 3) & 0xF, code & 7
    if e == 15 and m == 7:
        return math.nan
    mag = m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
    return -mag if s else mag


def cf143_value(code, bias):
    """SPEC §2: s.4.3, specials none, tesla subnormals 2^-bias * 0.m."""
    s, e, m = code >> 7, (code >> 3) & 0xF, code & 7
    mag = m / 8 * 2.0 ** -bias if e == 0 else (1 + m / 8) * 2.0 ** (e - bias)
    return -mag if s else mag


# ---- formats ---------------------------------------------------------------

def test_formats_lists_every_preset():
    out = run_cli("formats").stdout
    names = {line.split()[0] for line in out.splitlines() if line.strip()}
    for name in PRESETS:
        assert name in names, name
    for fam in FAMILIES:
        assert f"{fam}(bias)" in names, fam
    assert out.count("0..63 param") == 3
    e4m3_row = next(line for line in out.splitlines() if line.startswith("e4m3 "))
    assert "448" in e4m3_row and " fn " in e4m3_row
    header = out.splitlines()[0].split()
    for col in ["name", "bits", "signed", "exp_bits", "man_bits", "bias", "specials",
                "subnormals", "saturate", "max", "min_normal", "min_subnormal"]:
        assert col in header, col


# ---- info ------------------------------------------------------------------

def test_info_e4m3_lists_all_256_codes():
    out = run_cli("info", "e4m3").stdout
    assert re.search(r"^max\s+448\.0\b", out, re.M)
    assert re.search(r"^min_subnormal\s+0\.001953125\b", out, re.M)
    table = code_table(out)
    assert sorted(table) == list(range(256))
    assert table[0x7E][0] == 448.0
    assert math.isnan(table[0x7F][0]) and math.isnan(table[0xFF][0])
    assert table[0x01][0] == 2.0 ** -9
    assert table[0x38][0] == 1.0
    assert table[0x80][0] == 0.0 and math.copysign(1, table[0x80][0]) == -1
    for code, (value, _) in table.items():
        want = e4m3_value(code)
        assert (math.isnan(value) and math.isnan(want)) or value == want, hex(code)
    assert "nan" in table[0x7F][1]
    assert "subnormal" in table[0x01][1] and "subnormal" in table[0x87][1]
    assert "normal" in table[0x08][1] and "sub" not in table[0x08][1]
    assert "zero" in table[0x00][1]


def test_info_cfloat8_143_with_bias():
    out = run_cli("info", "cfloat8_143", "--bias", "20").stdout
    assert re.search(r"^bias\s+20$", out, re.M)
    assert "gap" in out  # the tesla-subnormal gap is pointed out
    table = code_table(out)
    assert sorted(table) == list(range(256))
    assert not any(math.isnan(v) or math.isinf(v) for v, _ in table.values())
    assert table[0x7F][0] == 1.875 * 2.0 ** -5  # max = 1.875 * 2^(15-bias)
    assert table[0x01][0] == 2.0 ** -23  # tesla subnormal: 2^-20 * 0.001b
    assert table[0x08][0] == 2.0 ** -19  # smallest normal 2^(1-bias)
    for code, (value, _) in table.items():
        assert value == cf143_value(code, 20), hex(code)


def test_info_16_bit_format_has_no_code_table():
    out = run_cli("info", "float16").stdout
    assert re.search(r"^max\s+65504\.0\b", out, re.M)
    assert code_table(out) == {}


@pytest.mark.parametrize("name", PRESETS + ["float8_e4m3fn", "E5M2"])
def test_info_every_preset(name):
    assert "max" in run_cli("info", name).stdout


@pytest.mark.parametrize("fam", FAMILIES)
def test_info_family_without_bias_fails_cleanly(fam):
    fails_cleanly("info", fam, mention="--bias")


@pytest.mark.parametrize("bias", ["64", "-1", "abc", "2.5"])
def test_info_family_bad_bias_fails_cleanly(bias):
    fails_cleanly("info", "cfloat8_152", "--bias", bias)


def test_info_bias_on_fixed_format_fails_cleanly():
    fails_cleanly("info", "e4m3", "--bias", "7", mention="--bias")


def test_info_unknown_format_fails_cleanly():
    fails_cleanly("info", "e4m4", mention="e4m4")


# ---- calc ------------------------------------------------------------------
# E4M3 (s.4.3, bias 7): 0x5c = 0.1011.100 = 1.5 * 2^4 = 24, 0x7e = 1.75 * 2^8 = 448,
# 0x38 = 1.0, 0x40 = 2.0, 0x00 = +0.  24 * 448 = 10752 > 448 overflows (SPEC §4).

def test_calc_overflow_toward_zero_gives_max():
    proc = run_cli("calc", "e4m3", "mul", "0x5c", "0x7e", "--rounding", "toward_zero")
    assert proc.stdout.strip().splitlines()[-1] == "0x7e  448.0  flags: INEXACT|OVERFLOW"


def test_calc_overflow_nearest_even_gives_nan_stand_in():
    code, value, flags = calc("e4m3", "mul", "0x5c", "0x7e")
    assert code == 0x7F and math.isnan(value) and flags == {"OVERFLOW", "INEXACT"}


def test_calc_overflow_saturate():
    assert calc("e4m3", "mul", "0x5c", "0x7e", "--saturate") == (
        0x7E, 448.0, {"OVERFLOW", "INEXACT"})
    code, _, _ = calc("e4m3", "mul", "0x5c", "0x7e", "--no-saturate")
    assert code == 0x7F


def test_calc_exact_result_has_no_flags():
    proc = run_cli("calc", "e4m3", "mul", "0x38", "0x40")
    assert proc.stdout.strip().splitlines()[-1] == "0x40  2.0  flags: none"


def test_calc_decimal_operands():
    assert calc("e4m3", "mul", "56", "64") == (0x40, 2.0, set())  # 0x38 * 0x40


def test_calc_div_by_zero():
    # x/0 is an exact infinity: E4M3 (fn) delivers the NaN stand-in 0x7f, DIVBYZERO only
    code, value, flags = calc("e4m3", "div", "0x38", "0x00")
    assert code == 0x7F and math.isnan(value) and flags == {"DIVBYZERO"}


def test_calc_fma_and_sqrt():
    assert calc("e4m3", "fma", "0x38", "0x38", "0x38") == (0x40, 2.0, set())  # 1*1+1
    assert calc("float16", "sqrt", "0x4400") == (0x4000, 2.0, set())  # sqrt(4)
    code, value, flags = calc("e4m3", "sqrt", "0xb8")  # sqrt(-1)
    assert code == 0x7F and math.isnan(value) and flags == {"INVALID"}


def test_calc_tininess():
    # 0x21 = 1.125 * 2^-3, 0x1e = 1.75 * 2^-4: product 1.96875 * 2^-7 = 2^-6 (1 - 2^-6)
    # is tiny before rounding, but rounds to the smallest normal 2^-6 (0x08)
    assert calc("e4m3", "mul", "0x21", "0x1e") == (0x08, 2.0 ** -6, {"INEXACT"})
    assert calc("e4m3", "mul", "0x21", "0x1e", "--tininess", "before") == (
        0x08, 2.0 ** -6, {"INEXACT", "UNDERFLOW"})


def test_calc_tesla_family_saturates():
    # cfloat8_143(bias=20): 0x7f = max = 1.875 * 2^-5; max + max overflows -> max
    assert calc("cfloat8_143", "add", "0x7f", "0x7f", "--bias", "20") == (
        0x7F, 1.875 * 2.0 ** -5, {"OVERFLOW", "INEXACT"})


@pytest.mark.parametrize("args", [
    ["e4m4", "mul", "0x5c", "0x7e"],             # unknown format
    ["e4m3", "pow", "0x5c", "0x7e"],             # unknown operation
    ["e4m3", "mul", "0x5c"],                     # too few operands
    ["e4m3", "sqrt", "0x5c", "0x7e"],            # too many operands
    ["e4m3", "fma", "0x5c", "0x7e"],
    ["e4m3", "mul", "0xzz", "0x7e"],             # not a number
    ["e4m3", "mul", "abc", "0x7e"],
    ["e4m3", "mul", "0x100", "0x7e"],            # not an 8-bit code
    ["e4m3", "mul", "256", "0x7e"],
    ["e4m3", "mul", "0x5c", "0x7e", "--rounding", "sideways"],
    ["e4m3", "mul", "0x5c", "0x7e", "--tininess", "never"],
    ["cfloat8_143", "mul", "0x5c", "0x7e"],      # family without --bias
    ["cfloat8_143", "mul", "0x5c", "0x7e", "--bias", "99"],
])
def test_calc_bad_input_fails_cleanly(args):
    fails_cleanly("calc", *args)


def test_calc_operand_errors_name_the_operand():
    fails_cleanly("calc", "e4m3", "mul", "0xzz", "0x7e", mention="0xzz")
    fails_cleanly("calc", "e4m3", "sqrt", "1", "2", mention="sqrt")


def test_no_command_fails_cleanly():
    fails_cleanly()


# ---- demo and entry points -------------------------------------------------

def test_tour_runs():
    # the CLI tour (`softfp8 demo` trains a network since issue 11: tests/tools/test_demo.py)
    out = run_cli("tour").stdout
    assert "e4m3" in out and "cfloat8_143" in out
    assert "0x7e  448.0  flags: INEXACT|OVERFLOW" in out


def test_console_script():
    exe = Path(sys.executable).parent / "softfp8"
    if not exe.exists():
        found = shutil.which("softfp8")
        if found is None:
            pytest.skip("softfp8 console script not installed in this environment")
        exe = Path(found)
    proc = subprocess.run([str(exe), "calc", "e4m3", "mul", "0x5c", "0x7e", "--rounding",
                           "toward_zero"], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0x7e  448.0  flags: INEXACT|OVERFLOW"


def test_main_returns_status():
    from softfp8.__main__ import main
    assert main(["calc", "e4m3", "mul", "0x38", "0x38"]) == 0
    with pytest.raises(SystemExit) as exc:
        main(["calc", "e4m3", "mul", "0x38"])
    assert exc.value.code == 2


# ---- README <-> .ci/run ------------------------------------------------------

def _fenced_blocks(text):
    return [b.strip() for b in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S)]


def test_ci_run_runs_the_readme_test_command():
    readme, ci_run = REPO / "README.md", REPO / ".ci" / "run"
    if not (readme.is_file() and ci_run.is_file()):
        pytest.skip("not a source checkout (README.md / .ci/run absent)")
    blocks = [b for b in _fenced_blocks(readme.read_text()) if "pytest" in b]
    assert len(blocks) == 1, blocks  # exactly one test command in the README
    readme_cmd = blocks[0]
    assert "\n" not in readme_cmd
    ci_lines = [line.strip() for line in ci_run.read_text().splitlines()
                if "pytest" in line and not line.strip().startswith(("#", "echo"))
                and "-m pytest" in line]
    assert ci_lines == [readme_cmd]
    # it creates the venv, installs with the test extra and the frameworks' extras (the
    # tests of softfp8.torch / softfp8.jax run, not skip: tests/frameworks), and runs pytest
    assert readme_cmd.startswith("python -m venv .venv && . .venv/bin/activate && ")
    assert "pip install -e '.[test,torch,jax]'" in readme_cmd
    text = ci_run.read_text()
    assert "set -euo pipefail" in text and "rm -rf .venv" in text
    assert os.access(ci_run, os.X_OK)


def test_every_proof_names_a_test_and_ci_runs_them():
    """tests/conftest.py PROOFS: each names a test function that exists; the README's
    passes leave them out and .ci/proofs (a step of .ci/run) runs them."""
    from tests import conftest
    proofs, run = REPO / ".ci" / "proofs", REPO / ".ci" / "run"
    if not (proofs.is_file() and run.is_file()):
        pytest.skip("not a source checkout (.ci absent)")
    assert len(conftest.PROOFS) == len(set(conftest.PROOFS)) > 0
    for node in conftest.PROOFS:
        path, fn = node.split("::")
        assert re.search(rf"^def {fn}\(", (REPO / path).read_text(), re.M), node
    readme_cmd = [b for b in _fenced_blocks((REPO / "README.md").read_text()) if "pytest" in b][0]
    assert readme_cmd.count('-m "not core and not proof"') == 1, readme_cmd
    assert readme_cmd.count('-m "core and not proof"') == 1, readme_cmd
    text = proofs.read_text()
    assert 'SOFTFP8_FAST=0 python -m pytest -n 2 -q -p no:cacheprovider -m "proof and core"' in text
    assert '\npython -m pytest -n 2 -q -p no:cacheprovider -m "proof and not core"' in text
    assert re.search(r"^step \"proofs\" bash \.ci/proofs", run.read_text(), re.M)
    assert os.access(proofs, os.X_OK)


def test_readme_install_command_runs_the_demo():
    readme = REPO / "README.md"
    if not readme.is_file():
        pytest.skip("not a source checkout")
    blocks = [b for b in _fenced_blocks(readme.read_text())
              if b.startswith("python -m venv")]
    assert len(blocks) == 2, blocks  # the two quick-start set-up commands
    assert any("pip install ." in b and b.endswith("softfp8 demo") for b in blocks)
