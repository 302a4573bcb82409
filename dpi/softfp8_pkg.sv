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

  localparam int SFP8_ROUND_NEAREST_EVEN = 0;
  localparam int SFP8_ROUND_NEAREST_AWAY = 1;
  localparam int SFP8_ROUND_TOWARD_ZERO = 2;
  localparam int SFP8_ROUND_UPWARD = 3;
  localparam int SFP8_ROUND_DOWNWARD = 4;
  localparam int SFP8_ROUND_TO_ODD = 5;
  localparam int SFP8_ROUND_STOCHASTIC = 6;
  localparam bit [7:0] SFP8_FLAG_INEXACT = 8'h01;
  localparam bit [7:0] SFP8_FLAG_UNDERFLOW = 8'h02;
  localparam bit [7:0] SFP8_FLAG_OVERFLOW = 8'h04;
  localparam bit [7:0] SFP8_FLAG_DIVBYZERO = 8'h08;
  localparam bit [7:0] SFP8_FLAG_INVALID = 8'h10;
  localparam bit [7:0] SFP8_FLAG_DENORMAL = 8'h20;
  localparam int SFP8_ISA_DEFAULT = 0;
  localparam int SFP8_ISA_X86 = 1;
  localparam int SFP8_ISA_ARM = 2;
  localparam int SFP8_ISA_ARM_DN = 3;
  localparam int SFP8_ISA_RISCV = 4;
  localparam int SFP8_ISA_FTZ = 256;
  localparam int SFP8_ISA_DAZ = 512;
  localparam int SFP8_DECIDE_SPECIAL = 0;
  localparam int SFP8_DECIDE_EXACT = 1;
  localparam int SFP8_DECIDE_DOWN = 2;
  localparam int SFP8_DECIDE_UP = 3;
  localparam int SFP8_DECIDE_OVERFLOW = 4;
  localparam int SFP8_DECIDE_FLUSH = 5;

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

  function automatic bit [15:0] sfp8_add(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("add", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_sub(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("sub", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_mul(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("mul", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_div(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("div", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_floordiv(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("floordiv", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_remainder(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("remainder", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_max(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("max", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_min(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("min", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_maxnum(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("maxnum", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_minnum(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("minnum", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_copysign(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("copysign", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_nextafter(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("nextafter", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit sfp8_eq(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("eq", f, {16'b0, a}, {16'b0, b}, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_ne(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("ne", f, {16'b0, a}, {16'b0, b}, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_lt(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("lt", f, {16'b0, a}, {16'b0, b}, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_le(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("le", f, {16'b0, a}, {16'b0, b}, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_gt(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("gt", f, {16'b0, a}, {16'b0, b}, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_ge(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("ge", f, {16'b0, a}, {16'b0, b}, 0, env, flags) != 0;
  endfunction

  function automatic int sfp8_cmp_quiet(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return int'(sfp8_op("cmp_quiet", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic int sfp8_cmp_signaling(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return int'(sfp8_op("cmp_signaling", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_neg(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("neg", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_pos(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("pos", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_abs(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("abs", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_sqrt(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("sqrt", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_square(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("square", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_reciprocal(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("reciprocal", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_sign(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("sign", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_floor(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("floor", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_ceil(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("ceil", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_trunc(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("trunc", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_round_integral(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("round_integral", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_round_integral_exact(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("round_integral_exact", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_spacing(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("spacing", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit sfp8_isnan(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("isnan", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_isinf(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("isinf", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_isfinite(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("isfinite", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_signbit(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("signbit", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_logical_not(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("logical_not", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit [15:0] sfp8_fmod(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("fmod", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_heaviside(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("heaviside", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_exp(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("exp", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_exp2(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("exp2", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_expm1(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("expm1", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_log(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("log", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_log2(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("log2", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_log10(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("log10", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_log1p(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("log1p", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_cbrt(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("cbrt", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_power(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("power", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_hypot(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("hypot", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_logaddexp(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("logaddexp", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_logaddexp2(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("logaddexp2", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_sin(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("sin", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_cos(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("cos", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_tan(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("tan", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arcsin(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arcsin", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arccos(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arccos", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arctan(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arctan", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_sinh(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("sinh", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_cosh(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("cosh", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_tanh(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("tanh", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arcsinh(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arcsinh", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arccosh(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arccosh", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arctanh(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arctanh", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_degrees(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("degrees", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_radians(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("radians", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arctan2(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arctan2", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_fma(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b, input logic [15:0] c,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b, c})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("fma", f, {16'b0, a}, {16'b0, b}, {16'b0, c}, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_ieee_remainder(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("ieee_remainder", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_nextup(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("nextup", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_nextdown(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("nextdown", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_round_ties_even(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("round_ties_even", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_round_ties_away(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("round_ties_away", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_logb(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("logb", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit sfp8_isnormal(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("isnormal", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_issubnormal(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("issubnormal", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_iszero(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("iszero", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_issignaling(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("issignaling", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_iscanonical(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("iscanonical", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_total_order(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("total_order", f, {16'b0, a}, {16'b0, b}, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_total_order_mag(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("total_order_mag", f, {16'b0, a}, {16'b0, b}, 0, env, flags) != 0;
  endfunction

  function automatic bit [15:0] sfp8_minmag(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("minmag", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_maxmag(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("maxmag", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_minmagnum(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("minmagnum", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_maxmagnum(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("maxmagnum", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_get_payload(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("get_payload", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_set_payload(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("set_payload", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_set_payload_signaling(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("set_payload_signaling", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_min_finite(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("min_finite", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_max_finite(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("max_finite", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_clamp(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b, input logic [15:0] c,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b, c})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("clamp", f, {16'b0, a}, {16'b0, b}, {16'b0, c}, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_faa(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b, input logic [15:0] c,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b, c})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("faa", f, {16'b0, a}, {16'b0, b}, {16'b0, c}, env, flags));
  endfunction

  function automatic bit sfp8_total_order_p3109(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("total_order_p3109", f, {16'b0, a}, {16'b0, b}, 0, env, flags) != 0;
  endfunction

  function automatic bit sfp8_isone(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return sfp8_op("isone", f, {16'b0, a}, 0, 0, env, flags) != 0;
  endfunction

  function automatic bit [15:0] sfp8_next_greater(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("next_greater", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_next_less(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("next_less", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_exp2m1(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("exp2m1", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_exp10(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("exp10", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_exp10m1(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("exp10m1", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_log2p1(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("log2p1", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_log10p1(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("log10p1", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_rsqrt(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("rsqrt", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_sinpi(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("sinpi", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_cospi(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("cospi", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_tanpi(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("tanpi", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arcsinpi(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arcsinpi", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arccospi(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arccospi", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arctanpi(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arctanpi", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_arctan2pi(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("arctan2pi", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_powr(input sfp8_format_t f, input logic [15:0] a, input logic [15:0] b,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a, b})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("powr", f, {16'b0, a}, {16'b0, b}, 0, env, flags));
  endfunction

  function automatic bit [15:0] sfp8_softplus(input sfp8_format_t f, input logic [15:0] a,
      input sfp8_env_t env, output bit [7:0] flags);
    if ($isunknown({a})) begin flags = SFP8_BAD_CALL; return 0; end
    return 16'(sfp8_op("softplus", f, {16'b0, a}, 0, 0, env, flags));
  endfunction

endpackage
