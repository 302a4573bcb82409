"""Generator of the SystemVerilog package dpi/softfp8_pkg.sv from the operation table.

Imports nothing of softfp8, so that setup.py can run it at build time on
softfp8/_core/ops.def (before the extension exists); softfp8.vectors.sv_package()
runs it on softfp8.bits.OPERATIONS.  The two must agree (tests/tools/test_dpi.py).
"""
from __future__ import annotations

import re

_SV_HEAD = """\
// softfp8_pkg.sv: softfp8 for SystemVerilog test benches (DPI-C; see dpi/README.md).
// GENERATED from the operation table (softfp8/_core/ops.def) by softfp8/_svgen.py; do not
// edit.  Every build (setup.py build_py / build_ext) rewrites it.
// The C side is dpi/softfp8_dpi.c, linked with libsoftfp8 (softfp8 config --cflags --libs).
package softfp8_pkg;

  // a format: the fields of sfp8_format (include/softfp8/softfp8.h)
  typedef struct {
    int bits; int is_signed; int exp_bits; int man_bits; int bias;
    int specials;    // 0 ieee, 1 fn, 2 fnuz, 3 none, 4 p3109
    int subnormals;  // 0 ieee, 1 tesla, 2 flush, 3 nozero
    int saturate;    // the format's default overflow behaviour
  } sfp8_format_t;

  // the environment of one operation
  typedef struct {
    int rounding;          // SFP8_ROUND_*
    int saturate;          // -1: the format's default; 0: IEEE overflow; 1: saturate
    int tininess_before;   // 0: tininess after rounding (default); 1: before
    int sr_bits;           // stochastic rounding: random bits used, 1..32
    int unsigned random;   // stochastic rounding: the random bits
    int isa;               // SFP8_ISA_*: NaN convention, | SFP8_ISA_FTZ | SFP8_ISA_DAZ
  } sfp8_env_t;

  // the exact value before rounding and the rounding decision (sfp8_explain)
  typedef struct {
    int decision;          // SFP8_DECIDE_*
    int sign;
    longint unsigned sig;  // |exact value| = (sig + sticky_in*delta) * 2^exp
    longint exp;
    int sticky_in;
    longint e;             // floor(log2 |value|)
    longint quantum;       // rounded to a multiple of 2^quantum
    int subnormal;
    longint unsigned kept; // the truncated significand
    int guard; int round; int sticky;
    int half;              // -1 below half an ulp, 0 tie, 1 above
    int carry; int tiny;
  } sfp8_explain_t;

{constants}
  // a call with a bad format, environment or operation, an operand code with bits above
  // the format's width, or an X/Z operand bit returns 0 with flags = 8'hFF
  localparam bit [7:0] SFP8_BAD_CALL = 8'hFF;
  localparam int SFP8_SAT_FINITE = 0;     // P3109 saturation modes (sfp8_p3109_apply)
  localparam int SFP8_SAT_PROPAGATE = 1;
  localparam int SFP8_SAT_NONE = 2;

  import "DPI-C" function int softfp8_dpi_op_count();
  import "DPI-C" function int softfp8_dpi_op_lookup(input string name);
  import "DPI-C" function int softfp8_dpi_op_arity(input int op);
  import "DPI-C" function int unsigned softfp8_dpi_apply(
      input int op, input int bits, input int is_signed, input int exp_bits, input int man_bits,
      input int bias, input int specials, input int subnormals, input int fmt_saturate,
      input int unsigned a, input int unsigned b, input int unsigned c, input int rounding,
      input int saturate, input int tininess_before, input int sr_bits, input int unsigned random,
      input int isa, output byte unsigned flags);
  import "DPI-C" function int softfp8_dpi_p3109_lookup(input string name);
  import "DPI-C" function int unsigned softfp8_dpi_p3109_apply(
      input int op, input int bits, input int is_signed, input int exp_bits, input int man_bits,
      input int bias, input int specials, input int subnormals, input int fmt_saturate,
      input int unsigned a, input int unsigned b, input int unsigned c, input int rounding,
      input int tininess_before, input int sr_bits, input int unsigned random, input int isa,
      input int saturation, output byte unsigned flags);
  import "DPI-C" function int unsigned softfp8_dpi_explain(
      input int op, input int bits, input int is_signed, input int exp_bits, input int man_bits,
      input int bias, input int specials, input int subnormals, input int fmt_saturate,
      input int unsigned a, input int unsigned b, input int unsigned c, input int rounding,
      input int saturate, input int tininess_before, input int sr_bits, input int unsigned random,
      input int isa, output byte unsigned flags, output int decision, output int sign,
      output longint unsigned sig, output longint exp, output int sticky_in, output longint e,
      output longint quantum, output int subnormal, output longint unsigned kept, output int guard,
      output int round, output int sticky, output int half, output int carry, output int tiny);
  import "DPI-C" function longint unsigned softfp8_dpi_convert(
      input int s_bits, input int s_signed, input int s_exp_bits, input int s_man_bits,
      input int s_bias, input int s_specials, input int s_subnormals, input int s_saturate,
      input int d_bits, input int d_signed, input int d_exp_bits, input int d_man_bits,
      input int d_bias, input int d_specials, input int d_subnormals, input int d_saturate,
      input longint unsigned a, input int rounding, input int saturate, input int tininess_before,
      input int sr_bits, input int unsigned random, input int isa, output byte unsigned flags);
  import "DPI-C" function int softfp8_dpi_cover(
      input int op, input int bits, input int is_signed, input int exp_bits, input int man_bits,
      input int bias, input int specials, input int subnormals, input int fmt_saturate,
      input int unsigned a, input int unsigned b, input int unsigned c, input int rounding,
      input int saturate, input int tininess_before, input int sr_bits, input int unsigned random,
      input int isa, output int unsigned result, output byte unsigned flags);
  import "DPI-C" function int softfp8_dpi_class(
      input int bits, input int is_signed, input int exp_bits, input int man_bits, input int bias,
      input int specials, input int subnormals, input int fmt_saturate, input int unsigned code);
  import "DPI-C" function longint unsigned softfp8_dpi_to_int(
      input int bits, input int is_signed, input int exp_bits, input int man_bits, input int bias,
      input int specials, input int subnormals, input int fmt_saturate, input int unsigned a,
      input int int_bits, input int int_signed, input int rounding, input int sr_bits,
      input int unsigned random, output byte unsigned flags);
  import "DPI-C" function int unsigned softfp8_dpi_from_int(
      input int bits, input int is_signed, input int exp_bits, input int man_bits, input int bias,
      input int specials, input int subnormals, input int fmt_saturate, input longint unsigned x,
      input int int_bits, input int int_signed, input int rounding, input int saturate,
      input int tininess_before, input int sr_bits, input int unsigned random, input int isa,
      output byte unsigned flags);
  import "DPI-C" function int softfp8_dpi_isa(input string name);
  import "DPI-C" function int softfp8_dpi_preset(
      input string name, input int bias, output int bits, output int is_signed,
      output int exp_bits, output int man_bits, output int fbias, output int specials,
      output int subnormals, output int saturate);

  // a preset by name (e4m3, float16, ...; binary32, binary64); bias for the Tesla
  // families (cfloat8_143, cfloat8_152, shp).  An unknown name is a fatal error.
  function automatic sfp8_format_t sfp8_preset(input string name, input int bias = 0);
    sfp8_format_t f;
    if (softfp8_dpi_preset(name, bias, f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias,
                           f.specials, f.subnormals, f.saturate) != 0)
      $fatal(1, "softfp8_pkg: unknown preset %s (or bias %0d outside 0..63)", name, bias);
    return f;
  endfunction

  // an ISA convention by name: "x86", "arm", "arm_dn", "riscv", "default", with "+ftz" /
  // "+daz" (e.g. "x86+ftz+daz").  An unknown name is a fatal error.
  function automatic int sfp8_isa(input string name);
    int isa = softfp8_dpi_isa(name);
    if (isa < 0) $fatal(1, "softfp8_pkg: unknown ISA convention %s", name);
    return isa;
  endfunction

  function automatic sfp8_env_t sfp8_env(input int rounding = SFP8_ROUND_NEAREST_EVEN,
                                         input int saturate = -1, input int tininess_before = 0,
                                         input int sr_bits = 32, input int unsigned random = 0,
                                         input int isa = SFP8_ISA_DEFAULT);
    sfp8_env_t e;
    e.rounding = rounding; e.saturate = saturate; e.tininess_before = tininess_before;
    e.sr_bits = sr_bits; e.random = random; e.isa = isa;
    return e;
  endfunction

  // any operation of the table by index (softfp8_dpi_op_lookup("add")); the raw result
  function automatic int unsigned sfp8_apply(input int op, input sfp8_format_t f,
                                             input int unsigned a, input int unsigned b,
                                             input int unsigned c, input sfp8_env_t env,
                                             output bit [7:0] flags);
    byte unsigned fl;
    int unsigned r;
    r = softfp8_dpi_apply(op, f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials,
                          f.subnormals, f.saturate, a, b, c, env.rounding, env.saturate,
                          env.tininess_before, env.sr_bits, env.random, env.isa, fl);
    flags = fl;
    return r;
  endfunction

  // any operation of the table by name, with the exact value before rounding
  function automatic int unsigned sfp8_explain(input string name, input sfp8_format_t f,
                                               input int unsigned a, input int unsigned b,
                                               input int unsigned c, input sfp8_env_t env,
                                               output bit [7:0] flags, output sfp8_explain_t x);
    byte unsigned fl;
    int unsigned r;
    int op = softfp8_dpi_op_lookup(name);
    if (op < 0) $fatal(1, "softfp8_pkg: unknown operation %s", name);
    r = softfp8_dpi_explain(op, f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials,
                            f.subnormals, f.saturate, a, b, c, env.rounding, env.saturate,
                            env.tininess_before, env.sr_bits, env.random, env.isa, fl, x.decision,
                            x.sign, x.sig, x.exp, x.sticky_in, x.e, x.quantum, x.subnormal, x.kept,
                            x.guard, x.round, x.sticky, x.half, x.carry, x.tiny);
    flags = fl;
    return r;
  endfunction

  // coverage (softfp8 cov --sv): the rounding situation of one operation (SFP8_SIT_* bits
  // of softfp8.h: 1 rounded, 2 exact, 4 below half, 8 tie, 16 above half, 32 up, 64 carry,
  // 128 overflow edge, 256 tiny, 512 tiny edge, 1024 tiny after rounding, 2048 Tesla gap),
  // with its result and flags
  function automatic int sfp8_cover(input string name, input sfp8_format_t f,
                                    input int unsigned a, input int unsigned b,
                                    input int unsigned c, input sfp8_env_t env,
                                    output int unsigned result, output bit [7:0] flags);
    byte unsigned fl;
    int sit;
    int op = softfp8_dpi_op_lookup(name);
    if (op < 0) $fatal(1, "softfp8_pkg: unknown operation %s", name);
    sit = softfp8_dpi_cover(op, f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials,
                            f.subnormals, f.saturate, a, b, c, env.rounding, env.saturate,
                            env.tininess_before, env.sr_bits, env.random, env.isa, result, fl);
    flags = fl;
    return sit;
  endfunction

  // a code to an integer of int_bits bits (signed or not), saturating; its bit pattern
  function automatic longint unsigned sfp8_to_int(input sfp8_format_t f, input int unsigned a,
                                                  input int int_bits, input bit int_signed,
                                                  input sfp8_env_t env, output bit [7:0] flags);
    byte unsigned fl;
    longint unsigned r;
    r = softfp8_dpi_to_int(f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials,
                           f.subnormals, f.saturate, a, int_bits, int'(int_signed), env.rounding,
                           env.sr_bits, env.random, fl);
    flags = fl;
    return r;
  endfunction

  // an integer of int_bits bits (its bit pattern; signed or not) into a format
  function automatic int unsigned sfp8_from_int(input sfp8_format_t f, input longint unsigned x,
                                                input int int_bits, input bit int_signed,
                                                input sfp8_env_t env, output bit [7:0] flags);
    byte unsigned fl;
    int unsigned r;
    r = softfp8_dpi_from_int(f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials,
                             f.subnormals, f.saturate, x, int_bits, int'(int_signed), env.rounding,
                             env.saturate, env.tininess_before, env.sr_bits, env.random, env.isa, fl);
    flags = fl;
    return r;
  endfunction

  // the coverage class of a code: sign * 8 + (0 zero, 1 subnormal, 2 min normal, 3 normal,
  // 4 max, 5 inf, 6 qNaN, 7 sNaN); -1 for a code above the width
  function automatic int sfp8_class(input sfp8_format_t f, input int unsigned code);
    return softfp8_dpi_class(f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials,
                             f.subnormals, f.saturate, code);
  endfunction

  // an IEEE P3109 operation by the report's name ("Add", "Exp", "Clamp", ...) with the
  // report's projection: saturation SFP8_SAT_FINITE / _PROPAGATE / _NONE (env.saturate is
  // not read; the report defines no flags: flags is 0, or SFP8_BAD_CALL)
  function automatic int unsigned sfp8_p3109(input string name, input sfp8_format_t f,
                                             input int unsigned a, input int unsigned b,
                                             input int unsigned c, input sfp8_env_t env,
                                             input int saturation, output bit [7:0] flags);
    int op = softfp8_dpi_p3109_lookup(name);
    if (op < 0) $fatal(1, "softfp8_pkg: unknown P3109 operation %s", name);
    return softfp8_dpi_p3109_apply(op, f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials,
                                   f.subnormals, f.saturate, a, b, c, env.rounding, env.tininess_before,
                                   env.sr_bits, env.random, env.isa, saturation, flags);
  endfunction

  // any operation of the table by name
  function automatic int unsigned sfp8_op(input string name, input sfp8_format_t f,
                                          input int unsigned a, input int unsigned b,
                                          input int unsigned c, input sfp8_env_t env,
                                          output bit [7:0] flags);
    int op = softfp8_dpi_op_lookup(name);
    if (op < 0) $fatal(1, "softfp8_pkg: unknown operation %s", name);
    return sfp8_apply(op, f, a, b, c, env, flags);
  endfunction

  // conversion between formats (bits 32 / 64 in sfp8_format_t: IEEE binary32 / binary64)
  function automatic longint unsigned sfp8_convert(input sfp8_format_t src, input sfp8_format_t dst,
                                                   input longint unsigned a, input sfp8_env_t env,
                                                   output bit [7:0] flags);
    byte unsigned fl;
    longint unsigned r;
    r = softfp8_dpi_convert(src.bits, src.is_signed, src.exp_bits, src.man_bits, src.bias,
                            src.specials, src.subnormals, src.saturate, dst.bits, dst.is_signed,
                            dst.exp_bits, dst.man_bits, dst.bias, dst.specials, dst.subnormals,
                            dst.saturate, a, env.rounding, env.saturate, env.tininess_before,
                            env.sr_bits, env.random, env.isa, fl);
    flags = fl;
    return r;
  endfunction

  // one function per operation of the table: operand codes in logic [15:0] (an X or Z
  // bit, or a bit above the format's width, is a bad call: 0 with flags = SFP8_BAD_CALL),
  // results in bit [15:0]; comparisons and predicates return bit, relations int (-1 less,
  // 0 equal, 1 greater, 2 unordered)
"""

_SV_RESULT = {"compare": ("bit", "{} != 0"), "predicate": ("bit", "{} != 0"),
              "relation": ("int", "int'({})")}


ROUNDING_MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd",
                  "stochastic")                     # enum sfp8_rounding
FLAGS = {0x01: "inexact", 0x02: "underflow", 0x04: "overflow", 0x08: "divbyzero",
         0x10: "invalid", 0x20: "denormal"}        # SFP8_FLAG_*
ISAS = {"default": 0, "x86": 1, "arm": 2, "arm_dn": 3, "riscv": 4, "ftz": 0x100,
        "daz": 0x200}                               # enum sfp8_isa, SFP8_ISA_FTZ / _DAZ
DECISIONS = ("special", "exact", "down", "up", "overflow", "flush")   # enum sfp8_decision
ARITY = {"binary": 2, "compare": 2, "relation": 2, "unary": 1, "predicate": 1, "ternary": 3}
_ROW = re.compile(r'^SFP8_OP\(\s*\w+\s*,\s*"(\w+)"\s*,\s*K_(\w+)', re.M)


def ops_def_rows(text):
    """[(name, kind)] of the rows of ops.def, in table order."""
    return [(name, kind.lower()) for name, kind in _ROW.findall(text)]


def render(rows) -> str:
    """The text of dpi/softfp8_pkg.sv for the operation rows [(name, kind)]."""
    consts = ["  localparam int SFP8_ROUND_%s = %d;" % (m.upper(), i)
              for i, m in enumerate(ROUNDING_MODES)]
    consts += ["  localparam bit [7:0] SFP8_FLAG_%s = 8'h%02X;" % (name.upper(), bit)
               for bit, name in sorted(FLAGS.items())]
    consts += ["  localparam int SFP8_ISA_%s = %d;" % (name.upper(), v) for name, v in ISAS.items()]
    consts += ["  localparam int SFP8_DECIDE_%s = %d;" % (name.upper(), i)
               for i, name in enumerate(DECISIONS)]
    out = [_SV_HEAD.replace("{constants}", "\n".join(consts) + "\n")]
    for name, kind in rows:
        if kind not in ARITY:  # a second result or an integer operand: not one code
            continue
        arity = ARITY[kind]
        rtype, conv = _SV_RESULT.get(kind, ("bit [15:0]", "16'({})"))
        args = ", ".join(f"input logic [15:0] {n}" for n in "abc"[:arity])
        call = ", ".join([f"{{16'b0, {n}}}" for n in "abc"[:arity]] + ["0"] * (3 - arity))
        dispatch = 'sfp8_op("%s", f, %s, env, flags)' % (name, call)
        out.append(
            f"  function automatic {rtype} sfp8_{name}(input sfp8_format_t f, {args},\n"
            f"      input sfp8_env_t env, output bit [7:0] flags);\n"
            f"    if ($isunknown({{{', '.join('abc'[:arity])}}})) begin flags = SFP8_BAD_CALL; return 0; end\n"
            f"    return {conv.format(dispatch)};\n"
            f"  endfunction\n")
    out.append("endpackage\n")
    return "\n".join(out)


def _sv_ident(text):
    return re.sub(r"[^A-Za-z0-9_]", "_", text).strip("_")


def render_covergroup(fmt, op, model, unreachable, consts, name=None) -> str:
    """A SystemVerilog covergroup with the bins of softfp8.coverage for (fmt, op):
    one coverpoint per group (operand classes, result) or bin (rounding situations,
    flags), each crossed with the rounding mode; the derived unreachable bins of each
    mode are ignore_bins (softfp8 cov --sv)."""
    CLASSES, SITUATIONS, FLAG_BINS = consts["classes"], consts["situations"], consts["flag_bins"]
    RELATIONS, MODES = consts["relations"], consts["modes"]
    ident = name or f"sfp8_cov_{_sv_ident(fmt.name)}_{op.name}"
    modes = list(model.modes)
    mode_idx = {m: (MODES.index(m) if m in MODES else 0) for m in modes}
    groups = dict(model.groups)
    cls_bins = [f"{'pos' if k < 8 else 'neg'}_{CLASSES[k % 8]}" for k in range(16)]
    lines = [f"// softfp8 cov --sv: the coverage bins of {fmt.name} {op.name} "
             f"(docs/golden-model.md, \"Coverage\"); generated, do not edit.",
             "// Sample each transaction with sample_op(); needs softfp8_pkg (dpi/).",
             "import softfp8_pkg::*;", "",
             f"class {ident};",
             "  sfp8_format_t fmt;",
             "  sfp8_env_t env;",
             "  int mode, a_cls, b_cls, c_cls, r_cls, sit;",
             "  bit [7:0] flags;", ""]
    lines.append("  covergroup cg;")
    lines.append("    cp_mode: coverpoint mode {")
    for m in modes:
        lines.append(f"      bins {_sv_ident(m) or 'any'} = {{{mode_idx[m]}}};")
    lines.append("    }")

    def ignore(cp, bin_sv, full):
        bad = [m for m in modes if full in unreachable.get(m, {})]
        if not bad:
            return []
        sel = " || ".join(f"binsof(cp_mode.{_sv_ident(m) or 'any'})" for m in bad)
        return [f"      ignore_bins u_{bin_sv} = ({sel}) && binsof({cp}.{bin_sv});"]

    for g in "abc":
        if g not in groups:
            continue
        lines.append(f"    cp_{g}: coverpoint {g}_cls {{")
        lines += [f"      bins {b} = {{{k}}};" for k, b in enumerate(cls_bins)]
        lines.append("    }")
        lines.append(f"    x_{g}: cross cp_mode, cp_{g} {{")
        for k, b in enumerate(cls_bins):
            lines += ignore(f"cp_{g}", b, f"{g}:{groups[g][k]}")
        lines.append("    }")
    res = groups["result"]
    if op.kind in ("compare", "predicate"):
        rb = [("false", "0"), ("true", "1")]
    elif op.kind == "relation":
        rb = [(r, str(k - 1)) for k, r in enumerate(RELATIONS)]
    else:
        rb = [(b, str(k)) for k, b in enumerate(cls_bins)]
    lines.append("    cp_result: coverpoint r_cls {")
    lines += [f"      bins {b} = {{{v}}};" for b, v in rb]
    lines.append("    }")
    lines.append("    x_result: cross cp_mode, cp_result {")
    for (b, _), full in zip(rb, res):
        lines += ignore("cp_result", b, f"result:{full}")
    lines.append("    }")
    bitbins = []
    if "round" in groups:
        for nm, (on, off, fon, foff, _) in SITUATIONS.items():
            cond = f"(sit & {on}) == {on}"
            if off:
                cond += f" && (sit & {off}) == 0"
            if fon:
                cond += f" && (flags & 8'h{fon:02X}) != 0"
            if foff:
                cond += f" && (flags & 8'h{foff:02X}) == 0"
            bitbins.append((f"round_{nm}", f"round:{nm}", cond))
    if "flag" in groups:
        for k, nm in enumerate(FLAG_BINS[:-1]):
            bitbins.append((f"flag_{nm}", f"flag:{nm}", f"flags[{k}]"))
        bitbins.append(("flag_none", "flag:none", "(flags & 8'h3F) == 0"))
    for cp, full, cond in bitbins:
        lines.append(f"    cp_{cp}: coverpoint ({cond}) {{ bins hit = {{1}}; }}")
        lines.append(f"    x_{cp}: cross cp_mode, cp_{cp} {{")
        lines += ignore(f"cp_{cp}", "hit", full)
        lines.append("    }")
    lines.append("  endgroup")
    lines += ["", "  function new(sfp8_format_t f, sfp8_env_t e);",
              "    fmt = f;", "    env = e;", "    cg = new;", "  endfunction", "",
              "  // one transaction: the operands (codes) in rounding mode `rounding` (sfp8_rounding_t)",
              "  function void sample_op(int rounding, int unsigned a, int unsigned b = 0,",
              "                          int unsigned c = 0);",
              "    int unsigned r;",
              "    sfp8_env_t e = env;",
              "    e.rounding = rounding;",
              f"    sit = sfp8_cover(\"{op.name}\", fmt, a, b, c, e, r, flags);",
              f"    mode = {'rounding' if op.rounds else '0'};",
              "    a_cls = sfp8_class(fmt, a);",
              "    b_cls = sfp8_class(fmt, b);",
              "    c_cls = sfp8_class(fmt, c);"]
    if op.kind in ("compare", "predicate"):
        lines.append("    r_cls = r != 0;")
    elif op.kind == "relation":
        lines.append("    r_cls = int'(r);")
    else:
        lines.append("    r_cls = sfp8_class(fmt, r);")
    lines += ["    cg.sample();", "  endfunction", "endclass", ""]
    return "\n".join(lines)
