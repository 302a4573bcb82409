"""Dot-product vectors (softfp8 gen/ver FMT dot; docs/golden-model.md, "Dot-product vectors").

The lines ``gen`` writes are recomputed by independent exact references, never by softfp8:
tests/models/matrix_units_ref.py (``order_dot``: the exact one-rounding dot, the sequential,
pairwise and Kahan orders, chunked promotion, rounded products; ``block_dot``: the block-FMA
model of the matrix-unit profiles) and, for MX block dot products, exact Fractions below
(fraction_model decodes the elements).  Plus the command-line round trip and a planted wrong
line.  Cost: about 6 s (the block-FMA reference in Fractions is most of it).
"""
from __future__ import annotations

import io
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import dot_vectors, vectors
from softfp8.__main__ import main
from tests.models import fraction_model as fm
from tests.models import matrix_units_ref as ref
from tests.models import mx_ref

F32 = ref.BINARY32
SPEC = {"float32": F32, "float16": fm.SPECS["float16"], "bfloat16": fm.SPECS["bfloat16"],
        "e5m2": fm.SPECS["e5m2"], "e4m3": fm.SPECS["e4m3"]}


def _lines(data):
    return [[int(f, 16) for f in line.split()] for line in data.decode().splitlines()]


def _gen(*args, **kw):
    return b"".join(dot_vectors.generate_dot(*args, **kw))


# (a, b, k, accumulation, rounding, Accumulation keywords for order_dot (None: exact))
ORDERS = [
    ("e4m3", "e5m2", 8, "exact", "nearest_even", None),
    ("e5m2", "e4m3", 16, "exact", "toward_zero", None),
    ("float16", "float16", 5, "exact", "upward", None),
    ("e4m3", "e4m3", 12, "float32", "nearest_even", dict(order="sequential", acc="float32")),
    ("e5m2", "e4m3", 9, "float32", "downward", dict(order="sequential", acc="float32")),
    ("e4m3", "e5m2", 10, "accumulator=float16,promote_every=4", "nearest_even",
     dict(order="sequential", acc="float16", promote=4)),
    ("e4m3", "e4m3", 7, "accumulator=bfloat16,order=pairwise,rounding=toward_zero", "nearest_even",
     dict(order="pairwise", acc="bfloat16", acc_mode="toward_zero")),
    ("e5m2", "e5m2", 6, "accumulator=float16,order=kahan", "upward", dict(order="kahan", acc="float16")),
    ("e4m3", "e4m3", 8, "product=e5m2,accumulator=float32,product_rounding=toward_zero", "nearest_even",
     dict(order="sequential", acc="float32", prod="e5m2", prod_mode="toward_zero")),
]


@pytest.mark.parametrize("a,b,k,model,mode,kw", ORDERS, ids=[f"{o[0]}x{o[1]}-{o[3]}-{o[4]}" for o in ORDERS])
def test_orders_against_reference(a, b, k, model, mode, kw):
    """Exact, sequential float32, chunked (promoted), pairwise, Kahan and rounded-product
    lines (codes and flags) against order_dot; 36 lines each, every case kind six times."""
    data = _gen(a, b, k, accumulation=model, rounding=mode, count=36, seed=5)
    lines = _lines(data)
    assert len(lines) == 36
    for ln in lines:
        assert len(ln) == 2 * k + 3
        A, B, c, got, gfl = ln[:k], ln[k:2 * k], ln[2 * k], ln[-2], ln[-1]
        if kw is None:
            want, wfl = ref.order_dot("exact", a, b, F32, mode, A, B, c)
        else:
            want, wfl = ref.order_dot(kw["order"], a, b, F32, mode, A, B, c, acc_spec=SPEC[kw["acc"]],
                                      acc_mode=kw.get("acc_mode", mode),
                                      prod_spec=SPEC[kw["prod"]] if "prod" in kw else None,
                                      prod_mode=kw.get("prod_mode"), promote=kw.get("promote"),
                                      prom_spec=F32)
        assert (got, gfl) == (want, wfl), (ln, hex(want), wfl)


PROFILES = [("h100", "e4m3", "e5m2", 37), ("ada", "e5m2", "e5m2", 20), ("a100", "float16", "float16", 11),
            ("mi300x", "e4m3fnuz", "e4m3fnuz", 21), ("b200", "e4m3", "e4m3", 33)]


@pytest.mark.parametrize("name,a,b,k", PROFILES, ids=[p[0] for p in PROFILES])
def test_profiles_against_reference(name, a, b, k):
    """Matrix-unit profile lines against the block-FMA reference (BlockFMA parameters of the
    profile row; K across a block boundary); 24 lines each."""
    data = _gen(a, b, k, accumulation=f"profile:{name}", count=24, seed=3)
    params = softfp8.Accumulation.profile(name).model(a, "float32", b).params()
    lines = _lines(data)
    assert len(lines) == 24
    for ln in lines:
        want, wfl = ref.block_dot(params, a, b, "binary32", ln[:k], ln[k:2 * k], ln[2 * k])
        assert (ln[-2], ln[-1]) == (want, wfl), (name, ln, hex(want), wfl)


def test_blockfma_float16_out_against_reference():
    """A BlockFMA given by its parameters, bfloat16 inputs, a float16 addend and result."""
    model = "blockfma:block=4,extra_bits=3,sticky=true,rounding=nearest_even"
    data = _gen("bfloat16", "bfloat16", 9, accumulation=model, out="float16", count=30, seed=2)
    prm = dict(block=4, extra_bits=3, sticky=True, rounding="nearest_even")
    lines = _lines(data)
    assert len(lines) == 30
    for ln in lines:
        want, wfl = ref.block_dot(prm, "bfloat16", "bfloat16", "binary16", ln[:9], ln[9:18], ln[18])
        assert (ln[-2], ln[-1]) == (want, wfl), (ln, hex(want), wfl)


def _mx_exact(ka, kb, line, k, mode):
    """(code, flags) of an MX line by tests/models/mx_ref.py (OCP MX's dot product, every
    product and scale product 2^(ea + eb) exact, one rounding into binary32; E8M0 scales
    raise no flag)."""
    nb, step = k // 32, 33
    a = [line[j * step + 1 + t] for j in range(nb) for t in range(32)]
    sa = [line[j * step] for j in range(nb)]
    b = [line[nb * step + j * step + 1 + t] for j in range(nb) for t in range(32)]
    sb = [line[nb * step + j * step] for j in range(nb)]
    return mx_ref.mx_dot(ka, kb, a, sa, b, sb, 32, mode)


@pytest.mark.parametrize("ka,kb,k,mode", [("mxfp8_e4m3", "mxfp8_e5m2", 64, "nearest_even"),
                                         ("mxfp4", "mxfp4", 32, "toward_zero"),
                                         ("mxfp6_e2m3", "mxfp6_e3m2", 32, "upward")])
def test_mx_exact_against_reference(ka, kb, k, mode):
    """MX block dot products (scales before each block, no addend) against exact Fractions."""
    data = _gen(ka, kb, k, rounding=mode, count=30, seed=9)
    lines = _lines(data)
    assert len(lines) == 30 and all(len(ln) == 2 * (k + k // 32) + 2 for ln in lines)
    for ln in lines:
        want, wfl = _mx_exact(ka, kb, ln, k, mode)
        assert (ln[-2], ln[-1]) == (want, wfl), (ka, kb, ln, hex(want), wfl)


def test_case_kinds_reach_the_interesting_results():
    """The six case kinds produce inexact, invalid, denormal, exact and cancelled (zero)
    results; underflow and overflow with a float16 result (e4m3 x e5m2 products are
    multiples of 2^-25 below 2^25, so a float32 result is never tiny and inexact, nor
    beyond binary32's range)."""
    lines = _lines(_gen("e4m3", "e5m2", 16, count=120, seed=1))
    flags = [ln[-1] for ln in lines]
    assert len(lines) == 120
    for bit in (0x01, 0x10, 0x20):
        assert any(f & bit for f in flags), hex(bit)
    assert any(f & 0x01 == 0 for f in flags)
    assert any(ln[-2] in (0, 0x80000000) for ln in lines)
    f16 = [ln[-1] for ln in _lines(_gen("e4m3", "e5m2", 16, out="float16", count=120, seed=1))]
    assert any(f & 0x02 for f in f16) and any(f & 0x04 for f in f16)


def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "softfp8", *args], input=stdin, capture_output=True)


def test_cli_round_trip_and_planted_error(tmp_path):
    """gen -> ver through the command line (matrix-unit profile, chunked model, MX); a line
    with a wrong result and one with wrong flags are each reported by number, on stderr."""
    path = tmp_path / "dot.txt"
    r = _cli("gen", "e4m3", "dot", "--b", "e5m2", "-k", "33", "--accumulation", "profile:h100",
             "-n", "60", "-o", str(path))
    assert r.returncode == 0, r.stderr
    r = _cli("ver", "e4m3", "dot", "--b", "e5m2", "-k", "33", "--accumulation", "profile:h100", str(path))
    assert r.returncode == 0 and b"60 lines, 0 mismatches" in r.stdout, (r.stdout, r.stderr)
    lines = path.read_bytes().splitlines(keepends=True)
    f = lines[6].split()
    f[-2] = b"%08X" % (int(f[-2], 16) ^ 1)                # result off by one ulp
    lines[6] = b" ".join(f) + b"\n"
    f = lines[10].split()
    f[-1] = b"%02X" % (int(f[-1], 16) ^ 0x04)             # overflow flag toggled
    lines[10] = b" ".join(f) + b"\n"
    r = _cli("ver", "e4m3", "dot", "--b", "e5m2", "-k", "33", "--accumulation", "profile:h100",
             stdin=b"".join(lines))
    assert r.returncode == 1
    assert b"60 lines, 2 mismatches" in r.stdout
    assert r.stderr.count(b"\n") == 2 and r.stderr.startswith(b"line 7: dot(") and b"line 11: dot(" in r.stderr
    model = "accumulator=float16,promote_every=4,rounding=toward_zero"
    gen = _cli("gen", "float16", "dot", "-k", "9", "--accumulation", model, "--rounding", "rmax", "-n", "30")
    r = _cli("ver", "float16", "dot", "-k", "9", "--accumulation", model, "--rounding", "upward",
             stdin=gen.stdout)
    assert gen.returncode == 0 and r.returncode == 0 and b"30 lines, 0 mismatches" in r.stdout, r.stderr
    gen = _cli("gen", "mxfp8_e4m3", "dot", "--b", "mxfp8_e5m2", "-k", "64", "-n", "12", "--testfloat")
    r = _cli("ver", "mxfp8_e4m3", "dot", "--b", "mxfp8_e5m2", "-k", "64", "--testfloat", stdin=gen.stdout)
    assert gen.returncode == 0 and r.returncode == 0 and b"12 lines, 0 mismatches" in r.stdout, r.stderr


@pytest.mark.parametrize("args,msg", [
    (("e4m3", "dot", "--accumulation", "profile:h100", "--rounding", "upward"), b"rounds as its parameters"),
    (("e4m3", "dot", "--accumulation", "profile:nope"), b"unknown matrix unit profile"),
    (("e4m3", "dot", "--accumulation", "bogus"), b"unknown accumulation model"),
    (("e4m3", "dot", "--accumulation", "blockfma:block=4"), b"extra_bits"),
    (("e4m3", "dot", "--accumulation", "accumulator=float16,colour=red"), b"colour"),
    (("e4m3", "dot", "--rounding", "stochastic"), b"stochastic"),
    (("mxfp8_e4m3", "dot", "-k", "40"), b"whole blocks of 32"),
    (("mxfp8_e4m3", "dot", "--b", "e4m3"), b"two MX float kinds"),
    (("e4m3", "dot", "--out", "int8"), b"float32 or a softfp8 format"),
    (("e4m3", "dot", "--accumulation", "profile:mi300x"), b"does not take"),
    (("e4m3", "dot", "--isa", "x86"), b"softfp8's convention"),
    (("e4m3", "dot", "-k", "0"), b"k must be >= 1"),
])
def test_bad_settings(args, msg, capsys):
    """Bad dot settings are usage errors (exit 2) naming the problem."""
    with pytest.raises(SystemExit) as exc:
        main(["gen", *args, "-n", "1"])
    err = capsys.readouterr().err.encode()
    assert exc.value.code == 2 and msg in err, err


def test_malformed_dot_files():
    """A short line, a code above the width and the NaN block scale are reported by line."""
    good = _gen("e4m3", "e5m2", 4, count=3)
    lines = good.splitlines(keepends=True)
    with pytest.raises(vectors.VectorError, match="line 2"):
        dot_vectors.verify_dot(io.BytesIO(lines[0] + b"00 01\n"), "e4m3", "e5m2", 4)
    mx_line = _gen("mxfp4", None, 32, count=2).splitlines(keepends=True)
    bad = b"FF" + mx_line[1][2:]
    with pytest.raises(vectors.VectorError, match="line 2: a block scale of a is FF"):
        dot_vectors.verify_dot(io.BytesIO(mx_line[0] + bad), "mxfp4", None, 32)
    six = _gen("mxfp6_e2m3", None, 32, count=3).splitlines(keepends=True)
    f = six[2].split()
    f[40] = b"7F"                                  # a b element above the 6-bit width
    with pytest.raises(vectors.VectorError, match="line 3: an operand b is not a code"):
        dot_vectors.verify_dot(io.BytesIO(six[0] + six[1] + b" ".join(f) + b"\n"), "mxfp6_e2m3", None, 32)
    rep = dot_vectors.verify_dot(io.BytesIO(good.replace(b"\n", b"\r\n") + b"\n\n"), "e4m3", "e5m2", 4)
    assert (rep.lines, rep.mismatches) == (3, 0)


def test_mx_scale_products_over_the_whole_e8m0_range():
    """gen writes MX lines whose block scales multiply far beyond binary32 (2^-254 ..
    2^254: results that underflow to zero or a binary32 subnormal, overflow, or stay normal
    only because the elements are large or small), and they verify against the exact
    reference, as does a hand-made line with the scales 2^127 x 2^127 and a zero element."""
    lines = _gen("mxfp4", None, 32, count=120, seed=4)
    parsed = _lines(lines)
    sums = [ln[0] + ln[33] - 254 for ln in parsed]
    assert len(parsed) == 120
    assert min(sums) < -149 - 64 and max(sums) > 127 + 64, (min(sums), max(sums))
    assert sum(not -149 <= e <= 127 for e in sums) >= 30
    for ln in parsed:
        want, wfl = _mx_exact("mxfp4", "mxfp4", ln, 32, "nearest_even")
        assert (ln[-2], ln[-1]) == (want, wfl), (ln, hex(want), wfl)
    first = lines.splitlines(keepends=True)[0]
    f = first.split()
    f[0], f[33], f[5] = b"FE", b"FE", b"0"                 # 2^127 x 2^127, element a_5 = +0
    ln = [int(x, 16) for x in f]
    want, wfl = _mx_exact("mxfp4", "mxfp4", ln, 32, "nearest_even")
    f[-2], f[-1] = b"%08X" % want, b"%02X" % wfl
    rep = dot_vectors.verify_dot(io.BytesIO(b" ".join(f) + b"\n"), "mxfp4", None, 32)
    assert (rep.lines, rep.mismatches) == (1, 0)


def test_mx_matmul_exact_beyond_binary32_scale_products():
    """32 ones times 32 ones with scales 2^-90 and 2^-60: exactly 2^-145, a binary32
    subnormal (scaled_mm's binary32 scale product 2^-150 would round it to 0); scales
    2^127 x 2^127 with a zero element: +inf with overflow (a binary32 scale product would be
    inf, and inf * 0 NaN with invalid); the scale 2^-127 (E8M0 code 0) raises no denormal."""
    one = np.full((1, 32), 0x38, np.uint8)

    def run(ea, eb, a=one):
        xa = softfp8.mx.BlockArray(a.view(softfp8.e4m3), np.array([[ea]], np.uint8), kind="mxfp8_e4m3",
                                   axes=(1,), block=(32,))
        xb = softfp8.mx.BlockArray(one.reshape(32, 1).view(softfp8.e4m3), np.array([[eb]], np.uint8),
                                   kind="mxfp8_e4m3", axes=(0,), block=(32,))
        with softfp8.collect_flags() as cf, np.errstate(all="ignore"):
            r = softfp8.mx.matmul(xa, xb)
        want = mx_ref.mx_dot("mxfp8_e4m3", "mxfp8_e4m3", list(a[0]), [ea], [0x38] * 32, [eb], 32)
        assert (int(r.view(np.uint32)[0, 0]), int(cf.flags)) == want, (ea, eb, hex(want[0]))
        return float(r[0, 0]), int(cf.flags)

    assert run(37, 67) == (2.0 ** -145, 0)
    zero = one.copy()
    zero[0, 3] = 0
    assert run(254, 254, zero) == (np.inf, 0x05)          # overflow | inexact, no invalid
    assert run(0, 127) == (32 * 2.0 ** -127, 0)           # no denormal from the scale 2^-127
    assert run(0, 0) == (0.0, 0x03)                       # 32 * 2^-254: underflow | inexact
