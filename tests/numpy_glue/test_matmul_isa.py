"""`@` / np.matmul under an ISA convention (softfp8.isa): DAZ on the operands, FTZ on the
result, the convention's NaN for a NaN result (docs/golden-model.md, "ISA conventions").

The reference is independent of softfp8's C code: operands decoded and results rounded by
tests/models/matrix_units_ref.py (on fraction_model), the exact dot product in Fractions,
and the NaN rules written here from docs/golden-model.md's table generalised to a sum of
products: the first NaN product decides (its NaN operand, a before b, quieted; an
``inf * 0`` product or ``inf - inf`` gives the convention's default NaN), Arm with
FPCR.DN = 0 first takes the first signalling NaN operand, Arm DN and RISC-V always give
the default NaN.  e5m2 (payloads, signalling NaNs, subnormals).  Cost: about 1 s.
"""
from fractions import Fraction

import numpy as np
import pytest

import softfp8

from ..models import matrix_units_ref as ref

E5 = softfp8.e5m2
SPEC = ref.SPECS["e5m2"]
DEFAULT_NAN = {"default": 0x7E, "x86": 0xFE, "arm": 0x7E, "arm_dn": 0x7E, "riscv": 0x7E}


def _isnan(c):
    return (c & 0x7F) > 0x7C


def _quiet(c):
    return c | 0x02


def reference(a, b, conv, ftz, daz, mode):
    """(code, flags) of one e5m2 dot product under the convention."""
    fl, terms, first, snan = 0, [], None, None
    for x_code, y_code in zip(a, b):
        x, y = ref.decode("e5m2", x_code), ref.decode("e5m2", y_code)
        for v in (x, y):
            fl |= ref.DENORMAL if v.sub else 0
        if daz:
            x = ref.Val("zero", x.neg) if x.sub else x
            y = ref.Val("zero", y.neg) if y.sub else y
        p, f = ref.ieee_mul(x, y)
        fl |= f
        if p.kind == "nan" and first is None:
            first = x_code if _isnan(x_code) else y_code if _isnan(y_code) else -1
        if snan is None:
            snan = next((c for c in (x_code, y_code) if _isnan(c) and not c & 0x02), None)
        terms.append(p)
    if first is not None or {t.neg for t in terms if t.kind == "inf"} == {0, 1}:
        if first is None:
            fl |= ref.INVALID                                  # inf - inf
        if conv in ("arm_dn", "riscv"):
            return DEFAULT_NAN[conv], fl
        if conv == "arm" and snan is not None:
            return _quiet(snan), fl
        return (_quiet(first) if first is not None and first >= 0 else DEFAULT_NAN[conv]), fl
    if any(t.kind == "inf" for t in terms):
        return (0xFC if next(t for t in terms if t.kind == "inf").neg else 0x7C), fl
    s = sum((t.v for t in terms), Fraction(0))
    if s:
        r = ref.Val("fin", int(s < 0), s)
    elif len({t.neg for t in terms}) == 1:
        r = ref.Val("zero", terms[0].neg)
    else:
        r = ref.Val("zero", int(mode == "downward"))
    _, code, f = ref.spec_round(SPEC, r, mode)
    if ftz and (code & 0x7C) == 0 and code & 0x03:
        code, f = code & 0x80, f | 0x03                        # flushed: underflow | inexact
    return code, fl | f


def _operands(rng, m, k, p):
    pool = np.r_[np.arange(0x01, 0x04), np.arange(0x81, 0x84),        # subnormals
                 [0x7C, 0xFC, 0x00, 0x80, 0x7D, 0x7E, 0x7F, 0xFD, 0xFF],  # inf, zeros, NaNs
                 np.arange(0x04, 0x0C), np.arange(0x84, 0x8C),        # small normals
                 np.arange(0x38, 0x40), np.arange(0xB8, 0xC0)].astype(np.uint8)
    w = np.where([_isnan(int(c)) or (int(c) & 0x7F) == 0x7C for c in pool], 0.15, 1.0)
    w /= w.sum()
    return rng.choice(pool, (m, k), p=w), rng.choice(pool, (k, p), p=w)


@pytest.mark.parametrize("conv", ["default", "x86", "arm", "arm_dn", "riscv"])
def test_matmul_under_isa_conventions(conv):
    rng = np.random.default_rng(len(conv))
    n = nans = flushed = dazed = 0
    for ftz, daz in ((False, False), (True, False), (False, True), (True, True)):
        for (m, k, p), mode in zip(((3, 5, 4), (2, 17, 3), (4, 1, 5), (1, 40, 2)),
                                   ("nearest_even", "downward", "toward_zero", "upward")):
            a, b = _operands(rng, m, k, p)
            with softfp8.isa(conv, ftz=ftz, daz=daz), softfp8.rounding(mode), \
                    softfp8.collect_flags() as cf, np.errstate(all="ignore"):
                got = (a.view(E5.dtype) @ b.view(E5.dtype)).view(np.uint8)
            assert softfp8.get_isa() == "default"
            want_fl = 0
            for i in range(m):
                for j in range(p):
                    code, fl = reference([int(x) for x in a[i]], [int(x) for x in b[:, j]], conv, ftz, daz, mode)
                    assert int(got[i, j]) == code, (conv, ftz, daz, mode, a[i], b[:, j], hex(got[i, j]), hex(code))
                    want_fl |= fl
                    n += 1
                    nans += _isnan(code)
                    flushed += ftz and code in (0, 0x80) and fl & 0x02
                    dazed += daz and fl & ref.DENORMAL
            assert int(cf.flags) == want_fl, (conv, ftz, daz, mode, int(cf.flags), want_fl)
    assert n == 4 * (12 + 6 + 20 + 2)
    assert nans >= 20 and dazed >= 10, (nans, dazed)
