/*
 * softfp8_dpi.c: the SystemVerilog DPI-C side of softfp8 (see dpi/README.md).
 *
 * Every element operation of softfp8 (the operation table, sfp8_op_*), format
 * conversion and the preset table, with DPI-friendly argument types only (int,
 * int unsigned, longint unsigned, byte unsigned output, string), so no svdpi.h is
 * needed and any simulator can call it.  Compile it as C or as C++ (Verilator
 * does): the exported functions have C linkage either way.  Link libsoftfp8:
 *
 *     verilator --binary tb.sv softfp8_pkg.sv softfp8_dpi.c \
 *         -CFLAGS "$(softfp8 config --cflags)" -LDFLAGS "$(softfp8 config --libs)"
 *
 * A format is passed as its eight descriptor fields (sfp8_format_t in
 * softfp8_pkg.sv); the environment as rounding (enum sfp8_rounding), saturate
 * (-1: the format's default, 0, 1), tininess_before (0/1), sr_bits (1..32), the
 * 32 random bits of stochastic rounding and the ISA convention (enum sfp8_isa |
 * SFP8_ISA_FTZ | SFP8_ISA_DAZ).  A call with a bad format, environment or operation,
 * or an operand code with bits above the format's width, returns 0 and sets *flags
 * to 0xFF, a value no operation raises.
 */
#include <string.h>

#include <softfp8/softfp8.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SFP8_DPI_BAD_CALL 0xFFu

static int dpi_format(sfp8_format *f, int bits, int is_signed, int exp_bits, int man_bits, int bias,
                      int specials, int subnormals, int saturate)
{
    f->bits = bits;
    f->is_signed = is_signed;
    f->exp_bits = exp_bits;
    f->man_bits = man_bits;
    f->bias = bias;
    f->specials = specials;
    f->subnormals = subnormals;
    f->saturate = saturate;
    return sfp8_validate(f) == SFP8_OK;
}

/* binary32 / binary64 endpoints of a conversion are named by bits = 32 / 64 */
static const sfp8_format *dpi_endpoint(sfp8_format *f, int bits, int is_signed, int exp_bits, int man_bits,
                                       int bias, int specials, int subnormals, int saturate)
{
    if (bits == 32) return &sfp8_binary32;
    if (bits == 64) return &sfp8_binary64;
    return dpi_format(f, bits, is_signed, exp_bits, man_bits, bias, specials, subnormals, saturate) ? f : NULL;
}

static int dpi_env(sfp8_env *env, const sfp8_format *f, int rounding, int saturate, int tininess_before,
                   int sr_bits, unsigned int random, int isa)
{
    memset(env, 0, sizeof *env);
    if (rounding < 0 || rounding >= SFP8_NUM_ROUNDING || saturate < -1 || saturate > 1 || tininess_before < 0 ||
        tininess_before > 1 || sr_bits < 1 || sr_bits > 32 || isa < 0 || (isa & 0xFF) >= SFP8_ISA_NUM ||
        (isa & ~(0xFF | SFP8_ISA_FTZ | SFP8_ISA_DAZ)))
        return 0;
    env->isa = isa;
    env->rounding = rounding;
    env->saturate = saturate < 0 ? f->saturate : saturate;
    env->tininess_before = tininess_before;
    env->sr_bits = sr_bits;
    env->random = random;
    return 1;
}

int softfp8_dpi_op_count(void) { return sfp8_op_count(); }
int softfp8_dpi_op_lookup(const char *name) { return sfp8_op_lookup(name); }
int softfp8_dpi_op_arity(int op) { return sfp8_op_arity(op); }

/* op applied to codes a, b, c (operands beyond the arity are ignored); codes are
 * returned as they are, 0/1 for comparisons and predicates, the sfp8_relation
 * (-1 less, 0 equal, 1 greater, 2 unordered) as an int for relations. */
unsigned int softfp8_dpi_apply(int op, int bits, int is_signed, int exp_bits, int man_bits, int bias,
                               int specials, int subnormals, int fmt_saturate, unsigned int a, unsigned int b,
                               unsigned int c, int rounding, int saturate, int tininess_before, int sr_bits,
                               unsigned int random, int isa, unsigned char *flags)
{
    sfp8_format f;
    sfp8_env env;
    uint8_t fl = 0;
    unsigned int r;
    if (!dpi_format(&f, bits, is_signed, exp_bits, man_bits, bias, specials, subnormals, fmt_saturate) ||
        !dpi_env(&env, &f, rounding, saturate, tininess_before, sr_bits, random, isa) || sfp8_op_arity(op) == 0) {
        *flags = SFP8_DPI_BAD_CALL;
        return 0;
    }
    r = sfp8_op_apply(op, &f, a, b, c, &env, &fl); /* codes above the width: SFP8_FLAG_BADCALL */
    *flags = (fl & SFP8_FLAG_BADCALL) ? SFP8_DPI_BAD_CALL : fl;
    return (fl & SFP8_FLAG_BADCALL) ? 0 : r;
}

/* The IEEE P3109 operations with the report's projection (sfp8_p3109_apply): op from
 * softfp8_dpi_p3109_lookup("Add"), saturation 0 SatFinite, 1 SatPropagate, 2 SatNone;
 * the report defines no flags, so *flags is 0, or SFP8_DPI_BAD_CALL (0xFF) for a bad
 * call (format, environment, op, saturation, a code above the width) returning 0. */
int softfp8_dpi_p3109_lookup(const char *name) { return sfp8_p3109_lookup(name); }

unsigned int softfp8_dpi_p3109_apply(int op, int bits, int is_signed, int exp_bits, int man_bits, int bias,
                                     int specials, int subnormals, int fmt_saturate, unsigned int a,
                                     unsigned int b, unsigned int c, int rounding, int tininess_before, int sr_bits,
                                     unsigned int random, int isa, int saturation, unsigned char *flags)
{
    sfp8_format f;
    sfp8_env env;
    uint8_t fl = 0;
    unsigned int r;
    if (!dpi_format(&f, bits, is_signed, exp_bits, man_bits, bias, specials, subnormals, fmt_saturate) ||
        !dpi_env(&env, &f, rounding, 0, tininess_before, sr_bits, random, isa)) {
        *flags = SFP8_DPI_BAD_CALL;
        return 0;
    }
    r = sfp8_p3109_apply(op, &f, a, b, c, &env, saturation, &fl);
    *flags = (fl & SFP8_FLAG_BADCALL) ? SFP8_DPI_BAD_CALL : 0;
    return (fl & SFP8_FLAG_BADCALL) ? 0 : r;
}

/* softfp8_dpi_apply with the exact value before rounding (sfp8_explain, softfp8.h) */
unsigned int softfp8_dpi_explain(int op, int bits, int is_signed, int exp_bits, int man_bits, int bias,
                                 int specials, int subnormals, int fmt_saturate, unsigned int a, unsigned int b,
                                 unsigned int c, int rounding, int saturate, int tininess_before, int sr_bits,
                                 unsigned int random, int isa, unsigned char *flags, int *decision, int *sign,
                                 unsigned long long *sig, long long *exp, int *sticky_in, long long *e,
                                 long long *quantum, int *subnormal, unsigned long long *kept, int *guard,
                                 int *round, int *sticky, int *half, int *carry, int *tiny)
{
    sfp8_format f;
    sfp8_env env;
    sfp8_explain x;
    uint8_t fl = 0;
    unsigned int r;
    memset(&x, 0, sizeof x);
    if (!dpi_format(&f, bits, is_signed, exp_bits, man_bits, bias, specials, subnormals, fmt_saturate) ||
        !dpi_env(&env, &f, rounding, saturate, tininess_before, sr_bits, random, isa) || sfp8_op_arity(op) == 0) {
        fl = SFP8_FLAG_BADCALL;
        r = 0;
    } else {
        r = sfp8_op_explain(op, &f, a, b, c, &env, &fl, &x);
    }
    *flags = (fl & SFP8_FLAG_BADCALL) ? SFP8_DPI_BAD_CALL : fl;
    *decision = x.decision;
    *sign = x.sign;
    *sig = x.sig;
    *exp = x.exp;
    *sticky_in = x.sticky_in;
    *e = x.e;
    *quantum = x.quantum;
    *subnormal = x.subnormal;
    *kept = x.kept;
    *guard = x.guard;
    *round = x.round;
    *sticky = x.sticky;
    *half = x.half;
    *carry = x.carry;
    *tiny = x.tiny;
    return (fl & SFP8_FLAG_BADCALL) ? 0 : r;
}

/* softfp8_dpi_apply with the rounding situation (SFP8_SIT_* bits, softfp8.h) as the return
 * value and the result in *result: what a covergroup samples (softfp8 cov --sv).  A bad
 * call returns 0 with *flags = 0xFF. */
int softfp8_dpi_cover(int op, int bits, int is_signed, int exp_bits, int man_bits, int bias, int specials,
                      int subnormals, int fmt_saturate, unsigned int a, unsigned int b, unsigned int c, int rounding,
                      int saturate, int tininess_before, int sr_bits, unsigned int random, int isa,
                      unsigned int *result, unsigned char *flags)
{
    sfp8_format f;
    sfp8_env env;
    uint8_t fl = 0;
    uint32_t r = 0;
    uint16_t sit = 0;
    if (!dpi_format(&f, bits, is_signed, exp_bits, man_bits, bias, specials, subnormals, fmt_saturate) ||
        !dpi_env(&env, &f, rounding, saturate, tininess_before, sr_bits, random, isa) || sfp8_op_arity(op) == 0 ||
        (a & ~sfp8_code_mask(&f)) || (b & ~sfp8_code_mask(&f)) || (c & ~sfp8_code_mask(&f))) {
        *flags = SFP8_DPI_BAD_CALL;
        *result = 0;
        return 0;
    }
    sfp8_op_cover(op, &f, &env, 0, NULL, 1, &a, &b, &c, NULL, &r, &fl, &sit);
    *flags = (fl & SFP8_FLAG_BADCALL) ? SFP8_DPI_BAD_CALL : fl;
    *result = (fl & SFP8_FLAG_BADCALL) ? 0 : r;
    return (fl & SFP8_FLAG_BADCALL) ? 0 : sit;
}

/* The coverage class of a code: sign * 8 + (0 zero, 1 subnormal, 2 min normal, 3 normal,
 * 4 max, 5 inf, 6 quiet NaN, 7 signalling NaN), as softfp8.coverage.CLASSES; -1 for a
 * bad format or a code above its width. */
int softfp8_dpi_class(int bits, int is_signed, int exp_bits, int man_bits, int bias, int specials,
                      int subnormals, int fmt_saturate, unsigned int code)
{
    static const int map[6] = {0, 1, 3, 5, 6, 7}; /* enum sfp8_class -> coverage class */
    sfp8_format f;
    uint32_t sbit, mag;
    int k;
    if (!dpi_format(&f, bits, is_signed, exp_bits, man_bits, bias, specials, subnormals, fmt_saturate) ||
        (code & ~sfp8_code_mask(&f)))
        return -1;
    sbit = is_signed ? (uint32_t)1 << (bits - 1) : 0;
    mag = code & ~sbit;
    k = map[sfp8_classify(&f, code)];
    if (k == 3 && mag == sfp8_max_code(&f)) k = 4;
    else if (k == 3 && mag == sfp8_min_normal_code(&f)) k = 2;
    return k + ((code & sbit) ? 8 : 0);
}

/* conversion between two formats (bits 32 / 64: IEEE binary32 / binary64 bit patterns) */
unsigned long long softfp8_dpi_convert(int s_bits, int s_signed, int s_exp_bits, int s_man_bits, int s_bias,
                                       int s_specials, int s_subnormals, int s_saturate, int d_bits, int d_signed,
                                       int d_exp_bits, int d_man_bits, int d_bias, int d_specials,
                                       int d_subnormals, int d_saturate, unsigned long long a, int rounding,
                                       int saturate, int tininess_before, int sr_bits, unsigned int random,
                                       int isa, unsigned char *flags)
{
    sfp8_format sf, df;
    sfp8_env env;
    uint8_t fl = 0;
    const sfp8_format *src = dpi_endpoint(&sf, s_bits, s_signed, s_exp_bits, s_man_bits, s_bias, s_specials,
                                          s_subnormals, s_saturate);
    const sfp8_format *dst = dpi_endpoint(&df, d_bits, d_signed, d_exp_bits, d_man_bits, d_bias, d_specials,
                                          d_subnormals, d_saturate);
    if (src == NULL || dst == NULL || !dpi_env(&env, dst, rounding, saturate, tininess_before, sr_bits, random, isa) ||
        (src->bits < 64 && (a >> src->bits) != 0)) { /* a source code above its width */
        *flags = SFP8_DPI_BAD_CALL;
        return 0;
    }
    unsigned long long r = sfp8_convert(src, dst, a, &env, &fl);
    *flags = fl;
    return r;
}

/* a format's code to an integer type of `bits` bits (sfp8_to_int: saturating, NaN the
 * largest); the bit pattern, zero-extended */
unsigned long long softfp8_dpi_to_int(int bits_, int is_signed, int exp_bits, int man_bits, int bias, int specials,
                                      int subnormals, int fmt_saturate, unsigned int a, int int_bits,
                                      int int_signed, int rounding, int sr_bits, unsigned int random,
                                      unsigned char *flags)
{
    sfp8_format f;
    sfp8_env env;
    uint8_t fl = 0;
    uint64_t r;
    if (!dpi_format(&f, bits_, is_signed, exp_bits, man_bits, bias, specials, subnormals, fmt_saturate) ||
        !dpi_env(&env, &f, rounding, -1, 0, sr_bits, random, 0) || (a & ~sfp8_code_mask(&f)) || int_bits < 1 ||
        int_bits > 64) {
        *flags = SFP8_DPI_BAD_CALL;
        return 0;
    }
    r = sfp8_to_int(&f, a, int_bits, int_signed != 0, &env, &fl);
    *flags = fl;
    return r;
}

/* an integer (two's complement bit pattern of `int_bits` bits, signed or not) into a
 * format, rounded once (sfp8_from_int64 / sfp8_from_uint64) */
unsigned int softfp8_dpi_from_int(int bits_, int is_signed, int exp_bits, int man_bits, int bias, int specials,
                                  int subnormals, int fmt_saturate, unsigned long long x, int int_bits,
                                  int int_signed, int rounding, int saturate, int tininess_before, int sr_bits,
                                  unsigned int random, int isa, unsigned char *flags)
{
    sfp8_format f;
    sfp8_env env;
    uint8_t fl = 0;
    uint32_t r;
    if (!dpi_format(&f, bits_, is_signed, exp_bits, man_bits, bias, specials, subnormals, fmt_saturate) ||
        !dpi_env(&env, &f, rounding, saturate, tininess_before, sr_bits, random, isa) || int_bits < 1 ||
        int_bits > 64 || (int_bits < 64 && (x >> int_bits) != 0)) {
        *flags = SFP8_DPI_BAD_CALL;
        return 0;
    }
    if (int_signed) {
        int64_t v = int_bits == 64 ? (int64_t)x
                                   : (int64_t)(x ^ ((uint64_t)1 << (int_bits - 1))) - ((int64_t)1 << (int_bits - 1));
        r = sfp8_from_int64(&f, v, &env, &fl);
    } else {
        r = sfp8_from_uint64(&f, x, &env, &fl);
    }
    *flags = fl;
    return r;
}

/* The descriptor of a preset (C name, case-insensitive; "binary32" / "binary64");
 * bias is used by the Tesla families only (0..63, sfp8_preset_lookup).  Returns 0,
 * or -1 for an unknown name or a Tesla bias outside 0..63. */
int softfp8_dpi_preset(const char *name, int bias, int *bits, int *is_signed, int *exp_bits, int *man_bits,
                       int *fbias, int *specials, int *subnormals, int *saturate)
{
    sfp8_format f;
    int err = sfp8_preset_lookup(name, -1, &f);
    if (err == SFP8_EBIAS) err = sfp8_preset_lookup(name, bias, &f); /* a Tesla family */
    if (err != SFP8_OK) return -1;
    *bits = f.bits;
    *is_signed = f.is_signed;
    *exp_bits = f.exp_bits;
    *man_bits = f.man_bits;
    *fbias = f.bias;
    *specials = f.specials;
    *subnormals = f.subnormals;
    *saturate = f.saturate;
    return 0;
}

/* the ISA convention of a name ("x86", "arm_dn+ftz", ...; sfp8_isa_lookup), or -1 */
int softfp8_dpi_isa(const char *name) { return sfp8_isa_lookup(name); }

#ifdef __cplusplus
}
#endif
