"""Which coverage bins a format and an operation cannot reach (softfp8.coverage).

Two derivations, each bin with its reason (docs/golden-model.md, "Coverage"):

1. **Rules**, by reasoning on the format's parameters, the operation's mathematics
   and the rounding mode (``rules``).  They apply to every format, 16-bit ones
   included.  tests/tools/test_coverage.py proves them sound on the exhaustive set of
   every 8-bit format, operation and mode: no bin a rule calls unreachable is hit.
2. **Enumeration** (softfp8.coverage.unreachable), where the cases can all be run
   (every 8-bit pair and triple, every code of a 16-bit unary operation): a bin no
   case of the exhaustive set reaches (stochastic rounding: with both extreme random
   words, which realise each case's rounding down and up) is unreachable.
"""
from __future__ import annotations

import numpy as np

from . import bits

# non-rounding operations that raise nothing but invalid (signalling NaN) and denormal
_QUIET_OPS = {"max", "min", "maxnum", "minnum", "sign", "eq", "ne", "lt", "le", "gt", "ge",
              "cmp_quiet"}
_INTEGRAL = {"floor", "ceil", "trunc", "round_integral", "round_integral_exact"}
# irrational at every rational point but the one where they are 0 or 1
_TRANSCENDENTAL = {"sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
                   "arcsinh", "arccosh", "arctanh", "exp", "expm1", "log", "log1p", "degrees", "radians"}
# operations whose exact result is never a division by zero
_NO_DIVBYZERO = {"add", "sub", "mul", "fma", "square", "sqrt", "hypot", "fmod", "heaviside",
                 "spacing", "degrees", "radians", "exp", "exp2", "expm1", "sin", "cos",
                 "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arcsin", "arccos",
                 "arccosh", "cbrt", "logaddexp", "logaddexp2"} | _INTEGRAL


def _words(b):
    sign = "positive" if b[0] == "+" else "negative"
    return f"{sign} {b[1:].replace('_', ' ')}"


def _holds_one(fmt):
    """0 and 1 are codes of fmt (enumerating its codes' values)."""
    codes = np.arange(fmt.code_mask + 1, dtype=np.uint64).astype(fmt.storage)
    with np.errstate(all="ignore"):
        vals = np.asarray(bits.to_float(codes, fmt)[0])
    return bool((vals == 1.0).any() and (vals == 0.0).any())


def _has_inf(fmt):
    return fmt.specials in ("ieee", "p3109")


def _has_subnormal_codes(fmt):
    return fmt.man_bits >= 1 and fmt.subnormals != "nozero"


def rules(fmt, op, mode, model, present):
    """{bin: reason} derived by reasoning (sound for every format); ``present``: the
    number of codes of each operand class of fmt ("+zero": n, ...)."""
    out = {}
    groups = dict(model.groups)
    has_nan = present["+qnan"] + present["-qnan"] + present["+snan"] + present["-snan"] > 0
    has_snan = present["+snan"] + present["-snan"] > 0
    has_inf = present["+inf"] + present["-inf"] > 0
    for g in "abc":
        for b in groups.get(g, ()):
            if not present[b]:
                out[f"{g}:{b}"] = f"{fmt.name} has no {_words(b)} code"
    res = groups.get("result", ())
    if op.kind in ("binary", "unary", "ternary"):
        for b in res:
            if not present[b]:
                out[f"result:{b}"] = f"{fmt.name} has no {_words(b)} code"
            elif b.endswith("snan") and not op.noflags and op.name not in ("heaviside", "set_payload_signaling"):
                out[f"result:{b}"] = ("every operation but the bit operations (neg, abs, copysign, "
                                      "pos), heaviside (h0 as given) and setPayloadSignaling delivers a "
                                      "NaN quiet")
        if op.name == "floordiv" and fmt.subnormals != "nozero" and fmt.bias >= 2:
            for b in ("+subnormal", "-subnormal", "+min_normal", "-min_normal"):
                out.setdefault(f"result:{b}", "floordiv delivers an integer: 0 or at least 1 in "
                                              "magnitude, above the smallest normal (bias >= 2)")
        if op.name == "hypot":
            for b in res:
                if b.startswith("-") and "nan" not in b:
                    out[f"result:{b}"] = "hypot is never negative (only a NaN keeps its sign)"
        if op.name == "fmod" and fmt.subnormals == "ieee":
            for b in ("+inf", "-inf"):
                out.setdefault(f"result:{b}", "|fmod(a, b)| <= |a|: an infinity is invalid (NaN), never a result")
        if op.name == "arctan2" and fmt.max > 4 and fmt.man_bits >= 1:
            for b in ("+inf", "-inf", "+max", "-max"):
                out.setdefault(f"result:{b}", "|arctan2(y, x)| <= pi, far below the largest finite")
    elif op.kind == "relation" and not has_nan:
        out["result:unordered"] = f"{fmt.name} has no NaN: every pair is ordered"
    elif op.kind == "predicate":
        never = {"isnan": ("true", not has_nan, "no NaN"), "isinf": ("true", not has_inf, "no infinity"),
                 "isfinite": ("false", not (has_nan or has_inf), "no infinity or NaN")}.get(op.name)
        if never and never[1]:
            out[f"result:{never[0]}"] = f"{fmt.name} has {never[2]}"
    if "flag" in groups:
        _flag_rules(fmt, op, out, has_nan, has_snan)
    if "round" in groups:
        _round_rules(fmt, op, mode, out)
    return out


def _flag_rules(fmt, op, out, has_nan, has_snan):
    if op.name in _QUIET_OPS or op.kind in ("compare", "relation"):
        for f in ("inexact", "underflow", "overflow", "divbyzero"):
            out[f"flag:{f}"] = "a comparison, selection or sign rounds nothing and divides nothing"
    if op.name in _QUIET_OPS and not has_snan:
        out["flag:invalid"] = (f"{fmt.name} has no signalling NaN, the only invalid operand of a "
                               f"quiet comparison or selection")
    if op.name == "cmp_signaling" and not has_nan:
        out["flag:invalid"] = f"{fmt.name} has no NaN"
    if op.name == "nextafter":
        out["flag:divbyzero"] = "nextafter divides nothing"
        if not has_snan:
            out["flag:invalid"] = f"{fmt.name} has no signalling NaN, nextafter's only invalid operand"
    if op.name in ("add", "mul", "fma", "square") or (op.name == "sub" and fmt.signed):
        if not has_snan and not _has_inf(fmt):
            out["flag:invalid"] = (f"{op.name} is invalid only for a signalling NaN or an infinity "
                                   f"(inf - inf, 0 * inf), and {fmt.name} has neither")
    if op.name == "fmod" and fmt.subnormals == "ieee":
        for f in ("inexact", "underflow", "overflow"):
            out[f"flag:{f}"] = "fmod is exact (IEEE subnormals): its remainder is representable"
    if op.name == "heaviside" and _holds_one(fmt):
        for f in ("inexact", "underflow", "overflow"):
            out[f"flag:{f}"] = "heaviside delivers 0, 1 or h0, all representable here"
    if op.name == "floordiv" and fmt.subnormals != "nozero" and fmt.bias >= 2:
        out["flag:underflow"] = "floordiv delivers 0 or an integer of magnitude >= 1 > the smallest normal"
    if op.name == "remainder":
        out["flag:overflow"] = "|remainder(a, b)| <= |b| never overflows"
        out["flag:divbyzero"] = "remainder(a, 0) is invalid, not a division by zero"
        if fmt.subnormals == "ieee":
            out["flag:underflow"] = "a tiny remainder is exact with IEEE subnormals"
    if op.name == "arctan2" and fmt.max > 4 and fmt.man_bits >= 1:
        out["flag:overflow"] = "|arctan2(y, x)| <= pi never overflows"
    if op.name in _NO_DIVBYZERO:
        out["flag:divbyzero"] = f"{op.name} has no pole: divide-by-zero is for exact infinities from finite operands"
    if not _has_subnormal_codes(fmt):
        out["flag:denormal"] = f"{fmt.name} has no subnormal code"
    if op.name in ("add", "sub") and fmt.subnormals == "ieee":
        out["flag:underflow"] = ("a sum of two multiples of the smallest subnormal is one: a tiny sum is "
                                 "exact (IEEE subnormals), so it never underflows")


def _round_rules(fmt, op, mode, out):
    M = fmt.man_bits
    tesla_gap = fmt.subnormals == "tesla" and M >= 1
    if not tesla_gap:
        out["round:tesla_gap"] = f"{fmt.name} has no Tesla gap (only Tesla subnormals leave one)"
    nozero = fmt.subnormals == "nozero"
    if op.name in ("floor", "ceil", "trunc"):
        mode = "-"      # they round in their own direction, whatever the environment's mode
    up_never = None
    if mode == "toward_zero":
        up_never = "toward_zero never rounds up in magnitude"
    elif mode == "downward" and not fmt.signed:
        up_never = f"downward on the non-negative values of {fmt.name} never rounds up"
    if up_never:
        out["round:carry"] = up_never
        out["round:overflow_edge_overflow"] = up_never + " (the edge delivers the largest finite)"
        if not nozero:
            for b in ("tiny_edge_before_only", "tiny_edge_after"):
                out[f"round:{b}"] = up_never + " (the smallest normal is not reached from below)"
    if mode == "upward" and not fmt.signed:
        out["round:overflow_edge_max"] = (f"upward on the non-negative values of {fmt.name}: "
                                          f"past the largest finite every value overflows")
    if mode == "to_odd" and M >= 1:
        out["round:carry"] = "to_odd never increments an odd significand (all ones) into the next binade"
    max_code = fmt._special()["max"]
    if mode == "to_odd":
        if not nozero:
            for b in ("tiny_edge_before_only", "tiny_edge_after"):
                out[f"round:{b}"] = ("to_odd delivers the odd neighbour: the largest subnormal, never the "
                                     "even smallest normal")
        # the last bit of the largest finite code: its significand's (M = 0: its exponent's)
        if max_code & 1:
            out["round:overflow_edge_overflow"] = ("to_odd at the overflow edge keeps the largest finite, "
                                                   "whose last bit is odd")
        else:
            out["round:overflow_edge_max"] = ("to_odd at the overflow edge increments the largest finite, "
                                              "whose last bit is even: overflow")
    ieee_sub = fmt.subnormals == "ieee"
    if op.name == "fmod" and ieee_sub:
        why = ("fmod is exact: |fmod(a, b)| < |b| is a multiple of the finer operand's quantum, "
               "so representable (IEEE subnormals)")
        for b in ("below_half", "tie", "above_half", "carry", "overflow_edge_max", "overflow_edge_overflow",
                  "tiny_edge_before_only", "tiny_edge_after"):
            out[f"round:{b}"] = why
    if op.name == "remainder":
        why = "|remainder(a, b)| <= |b| <= the largest finite"
        out["round:overflow_edge_max"] = out["round:overflow_edge_overflow"] = why
        if ieee_sub:
            why = "a tiny remainder a - k*b is a multiple of the smallest subnormal: exact (IEEE subnormals)"
            out["round:tiny_edge_before_only"] = out["round:tiny_edge_after"] = why
    if op.name == "arctan2" and M >= 1 and fmt.max > 4:
        why = "|arctan2(y, x)| <= pi, far below the largest finite"
        out["round:overflow_edge_max"] = out["round:overflow_edge_overflow"] = why
    if op.name == "floordiv" and fmt.subnormals != "nozero" and fmt.bias >= 2:
        why = "floordiv delivers 0 or an integer of magnitude >= 1, above the smallest normal"
        out["round:tiny_edge_before_only"] = out["round:tiny_edge_after"] = why
        out.setdefault("round:tesla_gap", why)
    if op.name == "heaviside" and _holds_one(fmt):
        why = "heaviside delivers 0, 1 or h0, all representable here"
        for b in ("below_half", "tie", "above_half", "carry", "overflow_edge_max", "overflow_edge_overflow",
                  "tiny_edge_before_only", "tiny_edge_after", "tesla_gap"):
            out[f"round:{b}"] = why
    if op.name in _TRANSCENDENTAL and fmt.min_subnormal <= 1:
        out["round:tie"] = ("at a non-zero rational point the function is irrational (Lindemann-Weierstrass), "
                            "never a midpoint; its rational values (0, 1) are grid points here")
    if op.name in _INTEGRAL and not tesla_gap:
        why = ("an integral operation rounds to an integer first (round_to_integer); the integer is then "
               "representable or beyond the largest finite by a grid step or more")
        for b in ("below_half", "tie", "above_half", "carry", "overflow_edge_max",
                  "overflow_edge_overflow"):
            out.setdefault(f"round:{b}", why)
    if (op.name in ("div", "reciprocal") and fmt.subnormals == "ieee" and M >= 1
            and (max_code & ((1 << M) - 1)) == (1 << M) - 1):
        why = ("an inexact quotient A/B of integers below 2^p (p-bit significands) lies more than "
               "2^-p (relative) from a power of two, and this edge is within 2^-p below one")
        out["round:overflow_edge_max"] = why + " (2^(emax+1): the largest finite is all ones)"
        out["round:overflow_edge_overflow"] = out["round:overflow_edge_max"]
        out["round:tiny_edge_before_only"] = why + " (the smallest normal)"
    if op.name in ("add", "sub") and fmt.subnormals == "ieee":
        why = "a tiny sum is exact with IEEE subnormals (a multiple of the smallest subnormal)"
        out["round:tiny_edge_before_only"] = why
        out["round:tiny_edge_after"] = why
