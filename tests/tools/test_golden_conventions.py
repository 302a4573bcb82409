"""ISA conventions, the exact value before rounding, TestFloat interop and a tolerant
`ver` (issue 23).

- x86: Berkeley TestFloat's binary16 files (SoftFloat 3e, 8086-SSE specialisation) pass
  `ver --testfloat --isa x86 --nan bits` with every NaN bit-exact, while softfp8's own
  convention differs from them on exactly their invalid-operation NaNs;
- Arm (DN off / on) and RISC-V: every NaN result of every e5m2 pair (add, mul, div, min)
  and of every e5m2 triple of an fma with a NaN operand, against the rules written
  here from the Arm ARM pseudocode (FPProcessNaNs, FPProcessNaNs3, FPMulAdd,
  FPDefaultNaN) and the RISC-V unprivileged spec (canonical NaN);
- FTZ / DAZ on every e5m2 pair against the default core with the operands / result
  flushed by hand;
- explain: every e4m3 mul and add pair in three modes against exact Fractions
  (tests/models/fraction_model.py): the exact value, the kept bits, guard / round /
  sticky and the decision.
"""
import gzip
import io
import itertools
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import softfp8
import softfp8.bits as sb
from softfp8 import vectors as V

from ..models import fraction_model as fm

F16 = softfp8.float16
E5 = softfp8.e5m2
TF_OPS = {"f16_add": "add", "f16_sub": "sub", "f16_mul": "mul", "f16_div": "div",
          "f16_mulAdd": "fma", "f16_sqrt": "sqrt"}
TF_RM = ("near_even", "minMag", "min", "max", "near_maxMag", "odd")


def _tf(vectors_dir, tf, rm, tin):
    return gzip.decompress((vectors_dir / "testfloat-f16" / f"{tf}_{rm}_{tin}.txt.gz").read_bytes())


@pytest.mark.vectors
def test_testfloat_files_pass_unfiltered_and_x86_nans_bit_exact(vectors_dir):
    """All 72 binary16 arithmetic files, read as they are (TestFloat's rounding names,
    --testfloat): NaNs by class as testfloat_ver does, and bit for bit under x86."""
    files = lines = default_nan_mismatches = 0
    for (tf, op), rm, tin in itertools.product(TF_OPS.items(), TF_RM, ("after", "before")):
        data = _tf(vectors_dir, tf, rm, tin)
        for kw in (dict(), dict(isa="x86", nan="bits")):
            rep = V.verify(io.BytesIO(data), F16, op, rounding="r" + rm, tininess=tin, testfloat=True,
                           **kw)
            assert rep.mismatches == 0, (tf, rm, tin, kw, [V.describe(F16, op, m) for m in rep.first[:2]])
        lines += rep.lines
        bad = V.verify(io.BytesIO(data), F16, op, rounding="r" + rm, tininess=tin, testfloat=True,
                       nan="bits")
        for m in bad.first:   # softfp8's own convention: only the invalid NaN's sign differs
            assert (m.expected, m.actual) == (0x7E00, 0xFE00) or op == "fma", V.describe(F16, op, m)
        default_nan_mismatches += bad.mismatches
        files += 1
    assert files == 72 and lines == 12 * (4 * 46464 + 200000 + 408)
    assert default_nan_mismatches > 0


def test_gen_testfloat_flags_and_names():
    lines = b"".join(V.generate(softfp8.e4m3, "add", testfloat=True, rounding="rmin")).split(b"\n")
    assert lines[0x0101] == b"01 01 02 00"           # denormal (0x20) not written
    ref = b"".join(V.generate(softfp8.e4m3, "add", rounding="downward")).split(b"\n")
    assert all(int(x[-2:], 16) == int(y[-2:], 16) & 0x1F for x, y in zip(lines[:-1], ref[:-1]))
    assert V.rounding_name("rnear_maxMag") == "nearest_away" and V.rounding_name("odd") == "to_odd"


def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "softfp8", *args], input=stdin, capture_output=True,
                          timeout=300)


def test_ver_tolerates_crlf_tabs_blanks_and_reports_to_stderr():
    data = b"".join(V.generate(softfp8.e4m3, "mul", max_lines=300))
    rows = data.split(b"\n")[:-1]
    messy = b"\r\n".join(r.replace(b" ", b"\t", 1).replace(b" ", b"   ") for r in rows[:150])
    messy += b"\r\n\r\n  " + b"\n".join(rows[150:]) + b"\n\n\n   \n"
    rep = V.verify(io.BytesIO(messy), softfp8.e4m3, "mul")
    assert (rep.lines, rep.mismatches) == (300, 0)
    proc = _cli("ver", "e4m3", "mul", stdin=messy)
    assert proc.returncode == 0 and proc.stdout == b"e4m3 mul: 300 lines, 0 mismatches\n", proc.stderr
    bad = messy.replace(b"00\t01   00", b"00\t01   7F", 1)
    proc = _cli("ver", "e4m3", "mul", stdin=bad)
    assert proc.returncode == 1 and b"line 2: mul(00 01): expected 00" in proc.stderr
    assert proc.stdout == b"e4m3 mul: 300 lines, 1 mismatches\n"
    proc = _cli("ver", "e4m3", "mul", stdin=b"00 01 00 00\nzz 01 00 00\n")
    assert proc.returncode == 1 and b"line 2" in proc.stderr and proc.stdout == b""


# ---- ISA conventions ----------------------------------------------------------

ARM_DEFAULT_NAN = {E5.name: 0x7E}     # Arm FPDefaultNaN / RISC-V canonical NaN: +, quiet, no payload


def _isnan(c):
    return (c & 0x7F) > 0x7C


def _issnan(c):
    return _isnan(c) and not c & 0x02


def _quiet(c):
    return c | 0x02


def arm_nan(op, ops):
    """Arm ARM FPProcessNaNs / FPProcessNaNs3 (FPCR.DN = 0): the first signalling NaN,
    else the first quiet NaN, quieted; FPMulAdd's operand order is (addend, op1, op2)."""
    order = (ops[2], ops[0], ops[1]) if op == "fma" else ops
    for c in order:
        if _issnan(c):
            return _quiet(c)
    for c in order:
        if _isnan(c):
            return c
    return 0x7E


def _e5_all_pairs():
    a, b = np.divmod(np.arange(65536), 256)
    return a.astype(np.uint8), b.astype(np.uint8)


@pytest.mark.parametrize("op", ["add", "mul", "div", "min"])
def test_arm_and_riscv_nan_rules_every_e5m2_pair(op):
    a, b = _e5_all_pairs()
    base, bfl = getattr(sb, op)(E5, a, b)
    nanres = 0
    for isa in ("arm", "arm_dn", "riscv"):
        r, fl = getattr(sb, op)(E5, a, b, isa=isa)
        assert np.array_equal(fl, bfl), isa                       # flags are the core's
        for i in np.flatnonzero(np.asarray(sb.isnan(E5, base))):
            want = arm_nan(op, (int(a[i]), int(b[i]))) if isa == "arm" else 0x7E
            assert int(r[i]) == want, (isa, op, hex(a[i]), hex(b[i]), hex(r[i]))
            nanres += 1
        same = ~np.asarray(sb.isnan(E5, base))
        assert np.array_equal(r[same], base[same])
    assert nanres == 3 * int(np.count_nonzero(np.asarray(sb.isnan(E5, base)))) > 3 * 2000


def test_fma_nan_rules_every_nan_triple():
    """Every e5m2 triple with a NaN operand or inf*0 (x86 / Arm / RISC-V)."""
    codes = np.arange(256, dtype=np.uint8)
    special = codes[[_isnan(int(c)) or (int(c) & 0x7F) in (0, 0x7C) for c in codes]]
    a, b, c = (x.reshape(-1) for x in np.meshgrid(special, special, codes, indexing="ij"))
    a, b, c = (np.concatenate([x, y]) for x, y in zip((a, b, c), (c, a, b)))
    base, bfl = sb.fma(E5, a, b, c)
    rx, _ = sb.fma(E5, a, b, c, isa="x86")
    ra, fla = sb.fma(E5, a, b, c, isa="arm")
    rr, _ = sb.fma(E5, a, b, c, isa="riscv")
    n = 0
    for i in np.flatnonzero(np.asarray(sb.isnan(E5, base))):
        x, y, z = int(a[i]), int(b[i]), int(c[i])
        inf0 = not _isnan(x) and not _isnan(y) and {x & 0x7F, y & 0x7F} == {0, 0x7C}
        # x86 (SoftFloat 8086-SSE): inf*0 + NaN -> the indefinite NaN; else the first NaN
        first = next((v for v in (x, y, z) if _isnan(v)), None)
        want_x86 = 0xFE if inf0 or first is None else _quiet(first)
        assert int(rx[i]) == want_x86, (hex(x), hex(y), hex(z), hex(rx[i]))
        # Arm FPMulAdd: a quiet addend with inf*0 -> default NaN (and invalid)
        want_arm = 0x7E if inf0 and not _issnan(z) else arm_nan("fma", (x, y, z))
        assert int(ra[i]) == want_arm, (hex(x), hex(y), hex(z), hex(ra[i]))
        if inf0:
            assert fla[i] & 0x10
        assert int(rr[i]) == 0x7E
        n += 1
    assert n > 30000


def test_ftz_and_daz_every_e5m2_pair():
    a, b = _e5_all_pairs()
    sub = lambda c: (c & 0x7C) == 0 and (c & 0x03) != 0          # noqa: E731
    za = np.where([sub(int(x)) for x in a], a & 0x80, a).astype(np.uint8)
    zb = np.where([sub(int(x)) for x in b], b & 0x80, b).astype(np.uint8)
    for op in ("add", "mul", "div"):
        base, bfl = getattr(sb, op)(E5, za, zb)
        r, fl = getattr(sb, op)(E5, a, b, isa="default+daz")
        den = np.array([sub(int(x)) or sub(int(y)) for x, y in zip(a, b)])
        assert np.array_equal(r, base)
        assert np.array_equal(fl, bfl | np.where(den, 0x20, 0).astype(np.uint8))
        plain, pfl = getattr(sb, op)(E5, a, b)
        r, fl = getattr(sb, op)(E5, a, b, isa="x86+ftz")
        flushed = np.array([sub(int(x)) for x in plain])
        assert np.array_equal(r[~flushed], np.where(np.asarray(sb.isnan(E5, plain)), r, plain)[~flushed])
        assert np.array_equal(r[flushed], plain[flushed] & 0x80)
        assert np.all(fl[flushed] == pfl[flushed] | 0x03) and flushed.sum() > 100


def test_isa_context_reaches_numpy_and_casts():
    x = np.array([0xBC00, 0x0001], dtype=np.uint16).view(F16)
    with softfp8.isa("x86", ftz=True):
        assert softfp8.get_isa() == "x86+ftz"
        with np.errstate(invalid="ignore", under="ignore"):
            r = np.sqrt(x).view(np.uint16)
            m = (x * x).view(np.uint16)
        y = np.array([np.nan, 1e-40], dtype=np.float32).astype(F16).view(np.uint16)
    assert r[0] == 0xFE00 and m[1] == 0x0000
    assert y[0] == 0x7E00 and y[1] == 0           # a quiet NaN keeps its class; tiny flushed
    assert softfp8.get_isa() == "default"
    with np.errstate(invalid="ignore"):
        assert np.sqrt(x).view(np.uint16)[0] == 0x7E00


# ---- the exact value before rounding -------------------------------------------

E4 = softfp8.e4m3
SPEC = fm.SPECS["e4m3"] if "e4m3" in fm.SPECS else None


@pytest.mark.parametrize("op, mode", [("mul", "nearest_even"), ("add", "upward"),
                                      ("mul", "toward_zero")])
def test_explain_every_e4m3_pair(op, mode):
    spec = SPEC
    n = rounded = ties = 0
    for x in range(256):
        dx = fm.decode(spec, x)
        for y in range(256):
            dy = fm.decode(spec, y)
            r, fl, why = getattr(sb, op)(E4, x, y, rounding=mode, explain=True)
            n += 1
            if dx[0] != "num" or dy[0] != "num":
                assert why.decision_name == "special"
                continue
            vx = -dx[2] if dx[1] else dx[2]
            vy = -dy[2] if dy[1] else dy[2]
            exact = vx * vy if op == "mul" else vx + vy
            if exact == 0:
                assert why.decision_name == "special"
                continue
            rounded += 1
            assert why.exact == exact and not why.sticky_in
            q = Fraction(2) ** why.quantum
            mag = abs(exact)
            assert why.kept == int(mag // q)                       # floor(|x| / 2^quantum)
            frac = mag / q - why.kept                              # the dropped part in ulps
            assert why.guard == int(frac >= Fraction(1, 2))
            assert why.half == (0 if frac == Fraction(1, 2) else 1 if frac > Fraction(1, 2) else -1)
            ties += why.half == 0
            res = fm.decode(spec, int(r))
            if why.decision_name == "exact":
                assert res[0] == "num" and res[2] == mag and frac == 0
            elif why.decision_name in ("up", "down"):
                assert res[0] == "num" and frac != 0
                assert (res[2] > mag) == (why.decision_name == "up")
            else:
                assert why.decision_name == "overflow" and fl & 0x04
    assert n == 65536 and rounded > 40000 and ties > 100


def test_explain_text_and_cli():
    _, _, why = sb.add(E4, 0x38, 0x31, explain=True)
    text = str(why)
    assert "exact value  +0x32" in text and "guard 1, round 0, sticky 0" in text
    assert "tie: to the even neighbour; rounded down" in text
    proc = _cli("calc", "e4m3", "mul", "0x5c", "0x7e", "--explain")
    assert proc.returncode == 0 and b"decision     overflow" in proc.stdout
    proc = _cli("calc", "float16", "sqrt", "0xbc00", "--isa", "x86")
    assert proc.returncode == 0 and proc.stdout.startswith(b"0xfe00"), proc.stdout
    proc = _cli("calc", "float16", "sqrt", "0xbc00", "--isa", "mips")
    assert proc.returncode == 2 and b"'mips'" in proc.stderr
