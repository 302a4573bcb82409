"""Exact reference of the OCP MX block dot product (softfp8.mx.matmul), on Fractions.

Written from the OCP *Microscaling Formats (MX) Specification* v1.0, §6.2 ("Dot" and
"DotGeneral": the dot product of two MX blocks is X_A * X_B * sum_i P_A,i * P_B,i, and a
longer dot product the sum of its blocks' dot products) and §5 (E8M0 scales: 2^(E - 127),
E = 0..254, no zero, no subnormals; 0xFF NaN), with docs/training.md's choice for the
internal precision the spec leaves to the implementation: every product
``P_A,i * P_B,i * 2^(ea + eb)`` exact, the sum exact, one rounding into the output (P3109's
BlockDotProduct).  The scale product 2^(ea + eb) is exact over the whole E8M0 range
(2^-254 .. 2^254), and scales raise no flag.  It never imports softfp8: elements are decoded
by ``tests.models.fraction_model`` (through ``matrix_units_ref.decode``) and the result is
rounded by fraction_model's rounding.

``mx_dot(ka, kb, a_codes, a_scales, b_codes, b_scales, block, mode)`` -> (binary32 code,
flags): one output element; a_codes / b_codes the K element codes, a_scales / b_scales the
K / block E8M0 codes.
"""
from __future__ import annotations

from fractions import Fraction

from . import matrix_units_ref as ref

# the element format of each MX float kind (fraction_model's names)
ELEMENT = {"mxfp8_e4m3": "e4m3", "mxfp8_e5m2": "e5m2", "mxfp6_e2m3": "float6_e2m3fn",
           "mxfp6_e3m2": "float6_e3m2fn", "mxfp4": "float4_e2m1fn"}
E8M0_BIAS, E8M0_NAN = 127, 0xFF


def mx_dot(ka, kb, a_codes, a_scales, b_codes, b_scales, block, mode="nearest_even", out=ref.BINARY32):
    """One MX dot product rounded once into ``out`` (a fraction_model Spec, binary32 by
    default) -> (code, flags).  Flags: denormal for a subnormal element (an operand read),
    invalid for inf * 0, inf - inf and signalling NaN elements, and the rounding's
    inexact / underflow / overflow.  A NaN scale is not a value here (mx.matmul refuses it)."""
    k = len(a_codes)
    assert len(b_codes) == k and len(a_scales) == len(b_scales) == -(-k // block)
    assert E8M0_NAN not in a_scales and E8M0_NAN not in b_scales
    fl, terms = 0, []
    for i in range(k):
        x = ref.decode(ELEMENT[ka], a_codes[i])
        y = ref.decode(ELEMENT[kb], b_codes[i])
        fl |= (ref.DENORMAL if x.sub else 0) | (ref.DENORMAL if y.sub else 0)
        p, f = ref.ieee_mul(x, y)
        fl |= f
        if p.kind == "fin":
            e = a_scales[i // block] + b_scales[i // block] - 2 * E8M0_BIAS
            p = ref.Val("fin", p.neg, p.v * Fraction(2) ** e)
        terms.append(p)
    if any(t.kind == "nan" for t in terms):
        r = ref.Val("nan")
    elif any(t.kind == "inf" for t in terms):
        signs = {t.neg for t in terms if t.kind == "inf"}
        r = ref.Val("nan") if len(signs) == 2 else ref.Val("inf", signs.pop())
        fl |= ref.INVALID if r.kind == "nan" else 0
    else:
        s = sum((t.v for t in terms), Fraction(0))
        if s:
            r = ref.Val("fin", int(s < 0), s)
        elif terms and len({t.neg for t in terms}) == 1:
            r = ref.Val("zero", terms[0].neg)          # every product a zero of one sign
        else:
            r = ref.Val("zero", int(mode == "downward"))   # the empty sum, or a cancellation
    _, code, f = ref.spec_round(out, r, mode)
    return code, fl | f
