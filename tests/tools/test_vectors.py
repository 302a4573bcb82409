"""softfp8 gen / softfp8 ver (softfp8.vectors): TestFloat-style vectors.

- gen | ver round-trips every format (presets, Tesla families, custom formats),
  operation, rounding mode, saturation and tininess with zero mismatches;
- a wrong device file (flipped result bit, missing flag, other NaN) is caught, and
  the options --nan class / --ignore-flags relax exactly what they say;
- the binary16 TestFloat 3e vectors (<vectors>/testfloat-f16) pass `ver`, and the
  lines `gen` writes for binary16 agree with TestFloat's on every shared case;
- case counts are pinned, output is reproducible from --seed and independent of the
  chunk size; `ver` reads at least 10^6 lines per second.
"""
import gzip
import io
import itertools
import subprocess
import sys

import numpy as np
import pytest

import softfp8
import softfp8.bits as sb
import softfp8.vectors
from softfp8 import vectors as V

FORMATS = ([softfp8.lookup(n) for n in softfp8.presets()]
           + [softfp8.cfloat8_143(bias=20), softfp8.cfloat8_152(bias=3),
              softfp8.shp(bias=15), softfp8.cfloat8_143(bias=5, subnormals="ieee"),
              softfp8.lookup("format(exp_bits=5, man_bits=4, bias=15)"),
              softfp8.lookup("format(exp_bits=3, man_bits=2, bias=3, specials='fn')")])
OPS = list(softfp8.vectors.VECTOR_OPERATIONS)  # code operands, one result
ENVS = list(itertools.product(sb.ROUNDING_MODES, (None, False, True), ("after", "before")))


def roundtrip(fmt, op, **opts):
    data = b"".join(V.generate(fmt, op, **opts))
    env = {k: opts[k] for k in ("rounding", "saturate", "tininess", "sr_bits") if k in opts}
    return data, V.verify(io.BytesIO(data), fmt, op, **env)


def nlines(data):
    return data.count(b"\n")


def test_every_format_and_operation_round_trips():
    """Every (format, operation), the environment rotating over all 42 choices."""
    total = 0
    for k, (fmt, op) in enumerate(itertools.product(FORMATS, OPS)):
        rounding, saturate, tininess = ENVS[k % len(ENVS)]
        data, rep = roundtrip(fmt, op, rounding=rounding, saturate=saturate, tininess=tininess,
                              count=1500, random_only=True, seed=k)
        assert rep.lines == nlines(data) == 1500, (fmt.name, op)
        assert rep.mismatches == 0, (fmt.name, op, rep.first[:3])
        total += rep.lines
    assert total == len(FORMATS) * len(OPS) * 1500 and len(FORMATS) == len(softfp8.presets()) + 6


@pytest.mark.parametrize("fmt", [softfp8.e4m3, softfp8.e5m2, softfp8.float16,
                                 softfp8.cfloat8_152(bias=3)], ids=lambda f: f.name)
def test_every_environment_round_trips(fmt):
    """Every rounding mode x saturation x tininess (and two sr_bits) on the rounding
    operations: exhaustive binary ops for 8-bit formats, the level-1 grid for 16-bit."""
    ops = ("add", "div", "sqrt", "fma")
    count = 0
    for (rounding, saturate, tininess), op in itertools.product(ENVS, ops):
        for sr_bits in ((32, 3) if rounding == "stochastic" else (32,)):
            opts = dict(rounding=rounding, saturate=saturate, tininess=tininess, sr_bits=sr_bits)
            if op == "fma":
                opts.update(count=3000, random_only=True)
            elif fmt.bits == 16 and op != "sqrt":
                opts.update(count=500)
            data, rep = roundtrip(fmt, op, **opts)
            assert rep.lines == nlines(data) > 0
            assert rep.mismatches == 0, (op, opts, [V.describe(fmt, op, m, rounding)
                                                    for m in rep.first[:3]])
            count += 1
    assert count == len(ENVS) * len(ops) + 6 * len(ops)


def test_case_counts():
    f16, e4m3 = softfp8.float16, softfp8.e4m3
    assert V.case_set(e4m3, "add").total == 65536
    assert V.case_set(e4m3, "sqrt").total == 256
    assert V.case_set(e4m3, "fma").total == 1 << 24
    assert V.case_set(softfp8.lookup("format(exp_bits=5, man_bits=4, bias=15)"), "add").total == 1 << 20
    assert V.case_set(f16, "sqrt").total == 65536                 # 16 operand bits: exhaustive
    assert V.special_codes(f16, 1).size == 144                   # 2 signs x 9 exps x 8 patterns
    assert V.case_set(f16, "add").total == 144 ** 2 + 10000
    assert V.case_set(f16, "fma").total == 144 ** 3 + 10000
    s2 = V.special_codes(f16, 2).size
    assert V.case_set(f16, "mul", level=2, count=0).total == s2 ** 2
    assert V.case_set(f16, "fma", level=2, count=7).total == s2 ** 2 + 7
    assert V.case_set(softfp8.uhp, "add").total == V.special_codes(softfp8.uhp).size ** 2 + 10000
    assert np.all(V.special_codes(softfp8.uhp, 2) <= softfp8.uhp.code_mask)
    data = b"".join(V.generate(e4m3, "mul"))
    assert nlines(data) == 65536 and len(data) == 65536 * len(b"00 00 00 00\n")
    # the exhaustive order: a major, then b
    rows = data.split(b"\n")
    assert rows[0][:5] == b"00 00" and rows[1][:5] == b"00 01" and rows[256][:5] == b"01 00"
    assert nlines(b"".join(V.generate(f16, "add", max_lines=777))) == 777


def test_line_format():
    e4m3 = softfp8.e4m3
    # e4m3: 1.0 = 0x38; 1 + 1 = 2.0 = 0x40 exactly
    first = b"".join(V.generate(e4m3, "add", max_lines=0x3839)).split(b"\n")[0x3838]
    assert first == b"38 38 40 00"
    # 0x01 + 0x01: smallest subnormal doubled, exact, denormal raised (0x20)
    assert b"".join(V.generate(e4m3, "add", max_lines=0x0102)).split(b"\n")[0x0101] == b"01 01 02 20"
    # comparisons give one digit, relations two (int8: FF less)
    lt = b"".join(V.generate(e4m3, "lt", max_lines=0x3841)).split(b"\n")[0x3840]
    assert lt == b"38 40 1 00"
    cmp = b"".join(V.generate(e4m3, "cmp_quiet", max_lines=0x3841)).split(b"\n")[0x3840]
    assert cmp == b"38 40 FF 00"
    # stochastic: a 32-bit random column before the result
    row = b"".join(V.generate(e4m3, "add", rounding="stochastic", max_lines=1)).split(b" ")
    assert [len(x) for x in row] == [2, 2, 8, 2, 3]
    assert V.columns(softfp8.float16, "fma", "stochastic") == (4, 4, 4, 8, 4, 2)


def test_reproducible_from_seed_and_chunking():
    f16 = softfp8.float16
    opts = dict(rounding="stochastic", count=3000)
    a = b"".join(V.generate(f16, "mul", seed=7, **opts))
    assert a == b"".join(V.generate(f16, "mul", seed=7, chunk=997, **opts))
    b = b"".join(V.generate(f16, "mul", seed=8, **opts))
    grid = 144 ** 2 * len(b"0000 0000 00000000 0000 00\n")
    assert a != b and a[grid:] != b[grid:]
    e = b"".join(V.generate(softfp8.e5m2, "sqrt", rounding="stochastic", seed=3, chunk=100))
    assert e == b"".join(V.generate(softfp8.e5m2, "sqrt", rounding="stochastic", seed=3))


def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "softfp8", *args], input=stdin,
                          capture_output=True, timeout=300)


@pytest.mark.parametrize("fmt, op, opts", [
    ("e4m3", "mul", ["--rounding", "upward", "--saturate"]),
    ("cfloat8_143(bias=20)", "fma", ["--rounding", "stochastic", "--max-lines", "50000"]),
    ("cfloat8_152", "div", ["--bias", "9", "--tininess", "before"]),
    ("format(exp_bits=5, man_bits=4, bias=15)", "sub", ["--rounding", "to_odd", "--level", "2",
                                                      "-n", "100"]),
    ("float16", "sqrt", ["--rounding", "stochastic", "--sr-bits", "5"]),
])
def test_cli_pipe_round_trip(fmt, op, opts):
    gen = _cli("gen", fmt, op, *opts)
    assert gen.returncode == 0, gen.stderr
    ver_opts = [o for o in opts if o not in ("--max-lines", "50000", "--level", "2", "-n", "100")]
    ver = _cli("ver", fmt, op, *ver_opts, stdin=gen.stdout)
    assert ver.returncode == 0, ver.stdout + ver.stderr
    assert f" {nlines(gen.stdout)} lines, 0 mismatches".encode() in ver.stdout


def _wrong(data, row, col, xor):
    rows = data.split(b"\n")
    fields = rows[row].split(b" ")
    fields[col] = b"%0*X" % (len(fields[col]), int(fields[col], 16) ^ xor)
    rows[row] = b" ".join(fields)
    return b"\n".join(rows)


def test_wrong_device_file_is_caught(tmp_path):
    data = b"".join(V.generate(softfp8.e5m2, "mul", rounding="downward"))
    # 3C * 3C = 1.0 * 1.0: exact; 01 * 3E: tiny and inexact -> underflow|inexact
    i_exact, i_tiny = 0x3C * 256 + 0x3C, 0x01 * 256 + 0x3A
    assert data.split(b"\n")[i_exact] == b"3C 3C 3C 00"
    bad = _wrong(_wrong(data, i_exact, 2, 0x01), i_tiny, 3, 0x02)     # result bit, underflow
    path = tmp_path / "device.txt"
    path.write_bytes(bad)
    proc = _cli("ver", "e5m2", "mul", "--rounding", "downward", str(path))
    out = proc.stderr.decode()      # diagnostics on stderr, the summary on stdout
    assert proc.returncode == 1, out
    assert proc.stdout == b"e5m2 mul: 65536 lines, 2 mismatches\n"
    assert f"line {i_exact + 1}: mul(3C 3C): expected 3C (1.0) flags 00 (none), got 3D" in out
    tiny = [line for line in out.splitlines() if line.startswith(f"line {i_tiny + 1}:")]
    assert len(tiny) == 1 and "underflow" in tiny[0].split(", got")[0]
    assert "underflow" not in tiny[0].split(", got")[1]
    # ignoring the flag leaves only the result bit; the original file passes
    proc = _cli("ver", "e5m2", "mul", "--rounding", "downward", "--ignore-flags", "underflow",
                str(path))
    assert proc.returncode == 1 and b"65536 lines, 1 mismatches" in proc.stdout
    path.write_bytes(data)
    assert _cli("ver", "e5m2", "mul", "--rounding", "downward", str(path)).returncode == 0
    # a wrong environment is a mismatch too
    assert _cli("ver", "e5m2", "mul", "--rounding", "upward", str(path)).returncode == 1


def test_nan_by_class_and_ignored_flags():
    f16 = softfp8.float16
    data = b"".join(V.generate(f16, "add", count=0))
    rows = data.split(b"\n")
    # a NaN result (quiet NaN 7E00 + 1) with a different payload
    i = next(k for k, r in enumerate(rows) if r.split(b" ")[2] == b"7E00")
    other = _wrong(data, i, 2, 0x0001)
    rep = V.verify(io.BytesIO(other), f16, "add")
    assert rep.mismatches == 1 and rep.first[0].line == i + 1
    assert V.verify(io.BytesIO(other), f16, "add", nan="class").mismatches == 0
    # a non-NaN for a NaN result is wrong even by class
    notnan = _wrong(data, i, 2, 0x7E00)
    assert V.verify(io.BytesIO(notnan), f16, "add", nan="class").mismatches == 1
    # a dropped denormal flag: caught, or ignored by name or by mask
    j = next(k for k, r in enumerate(rows) if r.endswith(b" 20"))
    nodn = _wrong(data, j, 3, 0x20)
    assert V.verify(io.BytesIO(nodn), f16, "add").mismatches == 1
    assert V.verify(io.BytesIO(nodn), f16, "add", ignore_flags="denormal").mismatches == 0
    assert V.verify(io.BytesIO(nodn), f16, "add", ignore_flags=0x20).mismatches == 0
    assert V.verify(io.BytesIO(nodn), f16, "add", ignore_flags="inexact").mismatches == 1
    with pytest.raises(ValueError, match="unknown flag 'inexactt'"):
        V.parse_flags("inexactt")


def test_malformed_input_names_the_line():
    good = b"".join(V.generate(softfp8.e4m3, "add", max_lines=10))
    rows = good.split(b"\n")
    rows[6] = b"00 06 zz 00"
    with pytest.raises(V.VectorError, match=r"line 7: expected 4 hex columns"):
        V.verify(io.BytesIO(b"\n".join(rows)), softfp8.e4m3, "add")
    with pytest.raises(V.VectorError, match="line 3: operand a = 7F is not a code of"):
        V.verify(io.BytesIO(b"00 00 00 00\n00 01 01 00\n7F 00 00 00\n"),
                 softfp8.lookup("format(exp_bits=3, man_bits=2, bias=3, specials='fn')"), "add")
    proc = _cli("ver", "e4m3", "add", stdin=b"\n".join(rows))
    assert proc.returncode == 1 and b"line 7:" in proc.stderr
    proc = _cli("ver", "e4m3", "add", stdin=b"")
    assert proc.returncode == 1 and b"no test lines" in proc.stderr
    # the last line may lack its newline
    assert V.verify(io.BytesIO(good.rstrip(b"\n")), softfp8.e4m3, "add").lines == 10
    for argv in (["gen", "e4m3", "nosuchop"], ["gen", "nosuchformat", "add"],
                 ["gen", "cfloat8_143", "add"], ["ver", "e4m3", "add", "--ignore-flags", "bogus"],
                 ["gen", "e4m3", "add", "-n", "-1"]):
        proc = _cli(*argv)
        assert proc.returncode == 2, argv


# ---- binary16 against Berkeley TestFloat 3e ------------------------------------

TF_OPS = {"f16_add": "add", "f16_sub": "sub", "f16_mul": "mul", "f16_div": "div",
          "f16_mulAdd": "fma", "f16_sqrt": "sqrt"}
TF_ROUNDING = {"near_even": "nearest_even", "minMag": "toward_zero", "min": "downward",
               "max": "upward", "near_maxMag": "nearest_away", "odd": "to_odd"}
TF_CASES = {"f16_add": 46464, "f16_sub": 46464, "f16_mul": 46464, "f16_div": 46464,
            "f16_mulAdd": 200000, "f16_sqrt": 408}


@pytest.mark.vectors
def test_testfloat_binary16_files_pass_ver(vectors_dir):
    """Every binary16 arithmetic file of TestFloat: softfp8 ver with NaNs by class and
    the denormal flag ignored (TestFloat has neither softfp8's NaNs nor denormal)."""
    files = 0
    for tf, op in TF_OPS.items():
        for (rm, rounding), tin in itertools.product(TF_ROUNDING.items(), ("after", "before")):
            path = vectors_dir / "testfloat-f16" / f"{tf}_{rm}_{tin}.txt.gz"
            rep = V.verify(io.BytesIO(gzip.decompress(path.read_bytes())), softfp8.float16, op,
                           rounding=rounding, tininess=tin, nan="class", ignore_flags="denormal")
            assert rep.lines == TF_CASES[tf], path.name
            assert rep.mismatches == 0, (path.name, [V.describe(softfp8.float16, op, m, rounding)
                                                     for m in rep.first[:3]])
            files += 1
    assert files == 72


def _keyed(data, nops):
    """{operand tuple key: (result, flags)} of vector lines (fixed widths 4)."""
    cols = V._parse_block(data, (4,) * nops + (4, 2), 1)
    key = np.zeros(cols[0].size, dtype=np.uint64)
    for c in cols[:nops]:
        key = (key << np.uint64(16)) | c
    return key, cols[nops], cols[nops + 1]


@pytest.mark.vectors
@pytest.mark.parametrize("tf, rm, tin", [("f16_add", "near_even", "after"),
                                         ("f16_mul", "min", "before"),
                                         ("f16_div", "odd", "after"),
                                         ("f16_sqrt", "max", "after")])
def test_gen_binary16_agrees_with_testfloat(vectors_dir, tf, rm, tin):
    """Where `softfp8 gen` and TestFloat write the same operands, they write the same
    result (NaN by class) and flags (denormal masked)."""
    op = TF_OPS[tf]
    nops = sb.OPERATIONS[op].arity
    ours = b"".join(V.generate(softfp8.float16, op, rounding=TF_ROUNDING[rm], tininess=tin,
                               level=2, count=0))
    theirs = gzip.decompress((vectors_dir / "testfloat-f16" / f"{tf}_{rm}_{tin}.txt.gz").read_bytes())
    k1, r1, f1 = _keyed(ours, nops)
    k2, r2, f2 = _keyed(theirs, nops)
    common, i1, i2 = np.intersect1d(k1, k2, return_indices=True)
    if nops == 1:     # exhaustive: every TestFloat case is among ours
        assert common.size == np.unique(k2).size == 390
    else:
        assert common.size >= 1000, common.size
    nan1 = np.asarray(sb.isnan(softfp8.float16, r1[i1].astype(np.uint16)))
    nan2 = np.asarray(sb.isnan(softfp8.float16, r2[i2].astype(np.uint16)))
    assert np.array_equal(nan1, nan2)
    assert np.array_equal(r1[i1][~nan1], r2[i2][~nan2])
    assert np.array_equal(f1[i1] & 0x1F, f2[i2])


def test_ver_checks_a_million_lines():
    """`softfp8 ver` reads one million e4m3 lines (the exhaustive products, sixteen times)
    and checks every one, no mismatch.  Its speed (at least 10^6 lines per second) is the
    bench row ver_lines (benchmarks/bench.py), not a timed test: under the sanitizer job or
    a loaded machine a clock here measures the machine."""
    data = b"".join(V.generate(softfp8.e4m3, "mul")) * 16
    assert nlines(data) == 1 << 20
    rep = V.verify(io.BytesIO(data), softfp8.e4m3, "mul")
    assert rep.lines == 1 << 20 and rep.mismatches == 0
    # every line is checked, the last ones too: one wrong result near the end is found
    lines = data.split(b"\n")
    k = (1 << 20) - 3
    a, b, r, f = lines[k].split()
    lines[k] = b" ".join([a, b, b"%02x" % (int(r, 16) ^ 1), f])
    rep = V.verify(io.BytesIO(b"\n".join(lines)), softfp8.e4m3, "mul")
    assert rep.lines == 1 << 20 and rep.mismatches == 1 and rep.first[0].line == k + 1
