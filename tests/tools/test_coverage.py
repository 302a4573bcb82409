"""softfp8.coverage / softfp8 cov / gen --cover (docs/golden-model.md, "Coverage").

- The coverage engine (sfp8_op_cover, several modes per call) gives softfp8.bits'
  results and flags in every mode.
- The derivation rules of unreachable bins are sound: on the exhaustive set of every
  8-bit format, operation and mode, no bin a rule calls unreachable is hit; and the
  exhaustive set closes 100% of the reachable bins (the rest are enumerated).
- A situation bin is what it says: checked against exact Fractions on e4m3 mul.
- The CLI: cov on a gen file, --sv, gen --cover closing the holes of a float16 file.

Cost (this 2-core machine, CPU seconds): the 8-bit sweep of the unary and binary
operations ~21 s for the operations with NumPy ufuncs, softfp8's own IEEE 754 / P3109
rows on seven formats (OWN_FORMATS; every format with SOFTFP8_COVERAGE_FULL=1); the
ternary operations (fma, P3109 FAA) on the formats of at most 7 bits ~4 s (every 8-bit
format: SOFTFP8_COVERAGE_FULL=1, ~15-20 s per format and operation).
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import _reach, bits, coverage, vectors

EIGHT_BIT = (["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "hfp8_143", "hfp8_152", "float8_e4m3",
              "float8_e3m4", "float8_e4m3b11fnuz", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
              "float8_e8m0fnu", "ue4m3"]
             + [f"cfloat8_143(bias={b})" for b in (0, 7, 63)]
             + [f"cfloat8_152(bias={b})" for b in (0, 15, 63)])
# the ternary operations (fma, faa: 2^24 cases per mode on an 8-bit format) are swept by
# test_ternary_exhaustive_closure, on the formats of at most 7 bits in the default run
TERNARY = [o for o in vectors.VECTOR_OPERATIONS if bits.OPERATIONS[o].arity == 3]
OPS = [o for o in vectors.VECTOR_OPERATIONS if o not in TERNARY]
FULL = os.environ.get("SOFTFP8_COVERAGE_FULL") == "1"


def _fmt(name):
    return softfp8.lookup(name)


def test_every_small_preset_is_in_the_sweep():
    from softfp8 import _registry
    small = set()
    for row in _registry.ROWS:
        try:
            f = softfp8.lookup(row.name)
        except TypeError:           # a Tesla family: swept at three biases
            f = softfp8.lookup(row.name, bias=7)
            if f.bits <= 8:
                small.add(row.name)
            continue
        if f.bits <= 8:
            small.add(f.name)
    swept = {_fmt(n).name.split("(")[0] for n in EIGHT_BIT}
    assert small <= swept, small - swept


def _check_closure(fmt, op):
    cov = coverage.exhaustive(fmt, op)
    assert cov.cases.tolist() == [1 << (fmt.bits * cov.op.arity)] * len(cov.model.modes)
    for mode in cov.model.modes:
        rules = _reach.rules(fmt, cov.op, mode, cov.model, coverage.operand_classes(fmt))
        wrong = set(rules) & cov.hit(mode)
        assert not wrong, (fmt.name, op, mode, {b: rules[b] for b in wrong})
    assert cov.holes(list(cov.model.modes) if cov.op.rounds else None) == []
    assert cov.percent(list(cov.model.modes) if cov.op.rounds else None) == 100.0


# softfp8's own rows (IEEE 754-2019 / P3109 operations NumPy has no ufunc for): swept on
# one format of each kind in the default run, on every 8-bit format with
# SOFTFP8_COVERAGE_FULL=1 (together they would double the sweep's time)
OWN_OPS = {o for o in OPS if (bits.OPERATIONS[o].ufunc or "").startswith("softfp8.")}
OWN_FORMATS = {"e4m3", "e5m2", "e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn", "ue4m3", "cfloat8_143(bias=7)"}


@pytest.mark.parametrize("name", EIGHT_BIT)
def test_exhaustive_closes_every_reachable_bin_and_rules_are_sound(name):
    fmt = _fmt(name)
    ops = OPS if FULL or name in OWN_FORMATS else [o for o in OPS if o not in OWN_OPS]
    for op in ops:
        _check_closure(fmt, op)


@pytest.mark.parametrize("name", [n for n in EIGHT_BIT if FULL or _fmt(n).bits <= 7])
@pytest.mark.parametrize("op", TERNARY)
def test_ternary_exhaustive_closure(name, op):
    _check_closure(_fmt(name), op)


def test_the_ternary_sweep_has_fma_and_faa():
    assert set(TERNARY) >= {"fma", "faa"}, TERNARY


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "cfloat8_143(bias=0)", "float8_e8m0fnu",
                                  "float4_e2m1fn", "ue4m3"])
def test_cover_engine_gives_bits_results_in_every_mode(name):
    fmt = _fmt(name)
    rnd = np.random.default_rng(3).integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    checked = expected = 0
    for op in vectors.VECTOR_OPERATIONS:
        o = bits.OPERATIONS[op]
        if fmt.bits * o.arity > 16:
            continue
        cov = coverage.Coverage(fmt, op)
        ops = coverage.exhaustive_operands(fmt, op)
        modes = list(coverage.MODES) if o.rounds else ["nearest_even"]
        expected += (1 << (fmt.bits * o.arity)) * len(modes)
        (res, fl, _), _ = cov.run(ops, modes, rnd[:ops[0].size])
        for k, mode in enumerate(modes):
            want, want_fl = vectors._compute(fmt, o, ops, rnd[:ops[0].size].astype(np.uint64)
                                             if mode == "stochastic" else None, mode, None,
                                             "after", 32)
            if o.kind == "relation":
                want = want.astype(np.uint8).astype(np.int8).astype(np.int32).astype(np.uint32)
            assert np.array_equal(res[k].astype(np.uint64), want.astype(np.uint64)), (op, mode)
            assert np.array_equal(fl[k], want_fl), (op, mode)
            checked += res[k].size
    assert checked == expected > 0


def _quantum_e4m3(x):
    """The grid spacing e4m3 rounds x (a positive Fraction) on: 2^(max(e, emin) - M)."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return Fraction(2) ** (max(e, -6) - 3)


def test_situations_against_exact_fractions_e4m3_mul():
    """Every e4m3 pair of finite non-zero operands: exact / below / tie / above, the
    overflow edge and tininess from the exact product (Fractions), not from the core."""
    fmt = softfp8.e4m3
    cov = coverage.Coverage(fmt, "mul")
    ops = coverage.exhaustive_operands(fmt, "mul")
    (res, fl, sit), _ = cov.run(ops, "nearest_even")
    vals = [Fraction(fmt.decode(c)) if np.isfinite(fmt.decode(c)) else None for c in range(256)]
    mx, mn = Fraction(448), Fraction(1, 64)
    n = 0
    for i in range(ops[0].size):
        a, b = vals[int(ops[0][i])], vals[int(ops[1][i])]
        if a is None or b is None or a == 0 or b == 0:
            continue
        n += 1
        x = abs(a * b)
        q = _quantum_e4m3(x)
        r = x % q
        s = int(sit[0][i])
        assert s & coverage.SIT_ROUNDED
        assert bool(s & coverage.SIT_TINY) == (x < mn), (x, s)
        assert bool(s & coverage.SIT_OVF_EDGE) == (mx < x < mx + 32), (x, s)
        if x >= mx + 32:                 # beyond the edge: no half bins
            assert not s & (coverage.SIT_BELOW | coverage.SIT_TIE | coverage.SIT_ABOVE)
            continue
        want = (coverage.SIT_EXACT if r == 0 else coverage.SIT_BELOW if 2 * r < q else
                coverage.SIT_TIE if 2 * r == q else coverage.SIT_ABOVE)
        assert s & want, (hex(int(ops[0][i])), hex(int(ops[1][i])), x, s)
    assert n == 252 * 252                # 256 codes less two zeros and two NaNs


def test_stochastic_vector_file_and_unreachable_listing():
    fmt = softfp8.e4m3
    buf = io.BytesIO()
    vectors.write(buf, fmt, "mul", rounding="stochastic")
    cov = coverage.measure(io.BytesIO(buf.getvalue()), fmt, "mul", rounding="stochastic")
    assert cov.cases[coverage.MODES.index("stochastic")] == 65536
    assert cov.holes() == []
    text = cov.table()
    assert "stochastic" in text and "100.0%" in text and "e4m3 has no positive inf code" in text


def test_scoreboard_coverage():
    from softfp8.cocotb import Scoreboard
    sb = Scoreboard(softfp8.e4m3, coverage=True)
    a = np.arange(256, dtype=np.uint8)
    r, f = bits.mul(softfp8.e4m3, a, np.full(256, 0x38, np.uint8))
    assert sb.check("mul", (a, np.full(256, 0x38)), r, f)
    cov = sb.coverage["mul"]
    assert cov.cases[0] == 256
    assert "a:+subnormal" in cov.hit("nearest_even")
    assert "coverage of e4m3 mul" in sb.coverage_report()


def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "softfp8", *args], input=stdin,
                          capture_output=True, timeout=600)


def test_cli_cov_sv_and_gen_cover_close_float16_mul(tmp_path):
    """float16 mul at gen level 2: the bin it leaves (the overflow edge delivering the
    largest finite), closed by gen --cover."""
    f = tmp_path / "add.txt"
    r = _cli("gen", "float16", "mul", "--level", "2", "-n", "0", "-o", str(f))
    assert r.returncode == 0, r.stderr
    r = _cli("cov", "float16", "mul", str(f), "--json")
    assert r.returncode == 0, r.stderr
    import json
    before = coverage.from_dict(json.loads(r.stdout))
    holes = before.holes()
    assert holes, "level 2 leaves bins for --cover to close"
    extra = tmp_path / "extra.txt"
    r = _cli("gen", "float16", "mul", "--cover", str(f), "-o", str(extra))
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert len(extra.read_bytes().splitlines()) == len(holes)
    r = _cli("ver", "float16", "mul", str(extra))
    assert r.returncode == 0, r.stderr
    both = tmp_path / "both.txt"
    both.write_bytes(f.read_bytes() + extra.read_bytes())
    r = _cli("cov", "float16", "mul", str(both), "--fail-under", "100")
    assert r.returncode == 0, r.stdout + r.stderr
    assert b"holes: 0" in r.stdout
    r = _cli("cov", "e4m3", "mul", "--sv", "-")
    assert r.returncode == 0 and b"covergroup cg;" in r.stdout
    assert b"ignore_bins u_pos_inf" in r.stdout


@pytest.mark.parametrize("pct", ["200", "-1", "nan"])
def test_cli_cov_refuses_a_fail_under_outside_0_100(pct):
    r = _cli("cov", "e4m3", "mul", "--fail-under", pct, stdin=b"")
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert f"--fail-under {pct}".encode() in r.stderr and b"0 to 100" in r.stderr, r.stderr
