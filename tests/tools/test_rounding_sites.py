"""Rounding happens only where it is declared (docs/architecture.md, "Where rounding happens").

"Rounds or packs", concretely -- a C function (or macro) body that
  R1 decides by a deterministic rounding mode: `case SFP8_ROUND_<mode>` or a comparison
     (== / !=) with one (stochastic is only the choice of random bits, not a rounding);
  R2 drives hardware rounding: _MM_FROUND_TO_*, _mm*_cvt_round*, _mm*_roundscale*,
     fesetround, rint / lrint / nearbyint;
  R3 packs a code by hand: shifts an exponent field by a format's mantissa width
     (`<< f->man_bits`);
  R4 calls or defines the core's rounding internals (round_pack, round_to_integer);
  R5 defines a function whose name says it rounds (`*round*`, not `*rounding*`, not the
     round_integral operation) and does not hand its value to the core's rounding
     (sfp8_round_value, sfp8_convert, sfp8_from_int64 / _uint64);
may appear only in the files declared below: the exact core, the registered fast families
(fast/) and the matrix engine.  Everywhere else (the NumPy glue, the driver, anything new)
such code fails this test, naming the file, function, rule and line; a site outside them
that is not a rounding must be declared in EXEMPT with its reason.

The Python modules: a function whose name says it rounds must be declared in PY_ROUNDING
with what it rounds (binary32 / binary64 scale arithmetic, never a softfp8 format: those go
through softfp8.bits or the casts); functions that hand their value to softfp8.bits,
the casts or the extension are not rounding code.
"""
from __future__ import annotations

import ast
import re

from . import csource as C

# ---- where rounding is declared ----------------------------------------------------------
CORE = {"core.c", "core_x.h", "accum.c", "accum.h", "elem.c", "elem.h", "elem_explog.c", "elem_trig.c",
        "include/softfp8/softfp8.h", "bfma.c", "bfma.h",
        # the core's other files (core_x.h is their interface to core.c's round_pack)
        "core_exact.c", "core_ieee.c", "core_isa.c", "core_explain.c", "core_api.c", "core_reduce.c",
        "elem_ieee.c", "elem_pi.c",
        # IEEE P3109's projection: Saturate's choice by the rounding direction (4.7.5) and the
        # block operations' exact values, rounded by sfp8_round_value and the table's rows
        "core_p3109.c", "core_p3109_block.c"}


def matrix_engine(name):
    """The matrix engine (mm/): its DERIVED pieces (mm_simd.c) and the generic kernels."""
    return name.startswith("mm/")


def family_file(name):
    """The registered fast families live in fast/ (their DERIVED headers name the proof)."""
    return name.startswith("fast/")


def allowed(name):
    return name in CORE or matrix_engine(name) or family_file(name)


# sites outside the declared files that look like rounding but are not: (file, function, rule): why
EXEMPT = {
    ("npy/loops.c", "add_initial", "R1"): "chooses the reduction identity of add (-0, or +0 when rounding "
                                         "downward, IEEE 754 6.3): no value is rounded",
}

RULES = {
    "R1": re.compile(r"\bcase\s+SFP8_ROUND_(?!STOCHASTIC\b)\w+|[!=]=\s*SFP8_ROUND_(?!STOCHASTIC\b)\w+"
                     r"|\bSFP8_ROUND_(?!STOCHASTIC\b)\w+\s*[!=]="),
    "R2": re.compile(r"_MM_FROUND_TO_\w+|\b_mm\d*_(?:mask_|maskz_)?cvt_round\w*|\b_mm\d*_(?:mask_|maskz_)?roundscale\w*"
                     r"|\bfesetround\s*\(|\b(?:ll|l)?rint[fl]?\s*\(|\bnearbyint[fl]?\s*\("),
    "R3": re.compile(r"<<\s*\(?\s*[\w\.\->\[\]]*man_bits\b"),
    "R4": re.compile(r"\bround_pack\s*\(|\bround_to_integer\s*\("),
}
R5 = re.compile(r"round(?!ing|_integral)", re.I)
CORE_ROUNDING = re.compile(r"\bsfp8_(?:round_value|convert|from_int64|from_uint64)\s*\(")


def sites(srcs):
    """[(file, function, rule, line, text)] of every rounding site of the C sources."""
    out = []
    for name, s in sorted(srcs.items()):
        bodies = [(f.name, f.line, f.body) for f in s.funcs]
        bodies += [(f"macro {m}", 1, b) for m, b in s.macros.items()]   # (macro bodies keep their lines)
        for fname, line0, body in bodies:
            for rule, rx in RULES.items():
                for m in rx.finditer(body):
                    line = line0 + body.count("\n", 0, m.start())
                    out.append((name, fname, rule, line, m.group(0)))
        for f in s.funcs:
            if R5.search(f.name) and not CORE_ROUNDING.search(f.body):
                out.append((name, f.name, "R5", f.line, f.name))
    return out


def violations(found):
    bad = []
    for name, fname, rule, line, text in found:
        if allowed(name) or (name, fname, rule) in EXEMPT:
            continue
        bad.append(f"{name}:{line}: {fname}: {rule} {text!r}")
    return bad


def test_rounding_only_where_declared():
    found = sites(C.sources())
    # the rules see the real rounding code (so that a clean result means something)
    in_core = [s for s in found if s[0] == "core.c"]
    assert {r for _, _, r, _, _ in in_core} >= {"R1", "R3", "R4", "R5"}, "the rules no longer match core.c"
    assert any(s[0].startswith("fast/") and s[2] == "R2" for s in found)
    bad = violations(found)
    assert not bad, ("code that rounds or packs outside the core, the fast families and the matrix engine "
                     "(docs/architecture.md, 'Where rounding happens'):\n  " + "\n  ".join(bad))


def test_exemptions_are_still_needed():
    found = {(n, f, r) for n, f, r, _, _ in sites(C.sources())}
    stale = sorted(k for k in EXEMPT if k not in found)
    assert not stale, f"EXEMPT entries that no longer match any site (remove them): {stale}"


def test_the_rules_catch_hand_written_rounding():
    """Each rule flags a typical piece of hand-written rounding in a glue file."""
    code = {
        "R1": "static int f(int r) { if (r == SFP8_ROUND_TOWARD_ZERO) return 1; return 0; }",
        "R2": "static float f(double d) { return _mm_cvt_roundsd_ss(x, d, _MM_FROUND_TO_ZERO); }",
        "R3": "static unsigned f(const sfp8_format *f, unsigned e, unsigned m) { return e << f->man_bits | m; }",
        "R4": "static unsigned f(void) { return round_pack(0, 0, 0); }",
        "R5": "static unsigned round_half(double x) { return (unsigned)x; }",
    }
    for rule, text in code.items():
        blanked, strings = C.blank(text)
        src = C.Source("npy/new.c", None, text, blanked, strings, [], C._functions("npy/new.c", blanked), {})
        got = violations(sites({"npy/new.c": src}))
        assert got and all(rule in g for g in got), (rule, got)
    # and declared files may
    src = C.Source("fast/new.c", None, code["R3"], *C.blank(code["R3"]), [],
                   C._functions("fast/new.c", C.blank(code["R3"])[0]), {})
    assert not violations(sites({"fast/new.c": src}))


# ---- Python ------------------------------------------------------------------------------

PY_ROUNDING = {
    ("dask.py", "_round_odd"): "an exact integer quotient to binary64, rounded to odd (the exact partial sums "
                               "of softfp8.dask's matmul; the format rounding is softfp8's cast)",
    ("dask.py", "_round_f64"): "an exact quotient to binary64 in a deterministic mode (softfp8.dask.mean into "
                               "float64)",
    ("scaling.py", "_round_f32"): "a scale (an exact Fraction) to the nearest binary32 (the scales are float32)",
    ("_reach.py", "_round_rules"): "names the coverage rules of rounding (which rounding cases a vector set can "
                                   "reach); rounds no value",
    ("p3109.py", "round_of"): "P3109's RoundOf: returns the rounding mode of a projection specification; rounds "
                              "no value",
}
# calls that hand a value to softfp8's own rounding
PY_DELEGATES = re.compile(r"\b(?:_?bits\.\w+|convert_codes|_ext\.\w+)\s*\(|\.astype\s*\(")


def python_rounding_functions():
    out = set()
    for p in C.PKG.glob("*.py"):
        text = p.read_text()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and R5.search(node.name) \
                    and not PY_DELEGATES.search(ast.get_source_segment(text, node)):
                out.add((p.name, node.name))
    return out


def test_python_rounding_is_declared():
    found = python_rounding_functions()
    declared = set(PY_ROUNDING)
    assert not found - declared, f"Python functions that round, undeclared (PY_ROUNDING): {sorted(found - declared)}"
    assert not declared - found, f"PY_ROUNDING entries no longer in the package: {sorted(declared - found)}"


# ---- every derived rounding names its proof --------------------------------------------

_PROOF_REF = re.compile(r"tests/[\w/]+\.py(?:::[\w*]+)?")


def derived_label_errors(srcs):
    """Files of the fast families and the matrix engine that round (R1-R5) without a
    "DERIVED from core.c round_pack" label, and test references in C comments that name
    no existing test (a renamed or deleted proof)."""
    errs = []
    rounding = {n for n, _, _, _, _ in sites(srcs) if family_file(n) or matrix_engine(n)}
    for n in sorted(rounding):
        if "DERIVED from core.c round_pack" not in " ".join(srcs[n].text.split()):
            errs.append(f"{n}: rounds (rules R1-R5) but carries no 'DERIVED from core.c round_pack' label")
    repo = C.PKG.parent
    for n, s in sorted(srcs.items()):
        for m in _PROOF_REF.finditer(s.text):
            path, _, test = m.group(0).partition("::")
            p = repo / path
            if not p.is_file():
                errs.append(f"{n}:{s.line_of(m.start())}: names {m.group(0)}, but {path} does not exist")
            elif test and not re.search(r"^(?:async )?def " + re.escape(test.rstrip("*")), p.read_text(), re.M):
                errs.append(f"{n}:{s.line_of(m.start())}: names {m.group(0)}, which {path} does not define")
    return errs


def test_derived_rounding_names_its_proof():
    errs = derived_label_errors(C.sources())
    assert not errs, "derived roundings and their proofs:\n  " + "\n  ".join(errs)
