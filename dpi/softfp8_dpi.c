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
 * (-1: the format's default, 0, 1), tininess_before (0/1), sr_bits (1..32) and the
 * 32 random bits of stochastic rounding.  A call with a bad format, environment or
 * operation returns 0 and sets *flags to 0xFF, a value no operation raises.
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
                   int sr_bits, unsigned int random)
{
    if (rounding < 0 || rounding >= SFP8_NUM_ROUNDING || saturate < -1 || saturate > 1 || tininess_before < 0 ||
        tininess_before > 1 || sr_bits < 1 || sr_bits > 32)
        return 0;
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
                               unsigned int random, unsigned char *flags)
{
    sfp8_format f;
    sfp8_env env;
    uint8_t fl = 0;
    if (!dpi_format(&f, bits, is_signed, exp_bits, man_bits, bias, specials, subnormals, fmt_saturate) ||
        !dpi_env(&env, &f, rounding, saturate, tininess_before, sr_bits, random) || sfp8_op_arity(op) == 0) {
        *flags = SFP8_DPI_BAD_CALL;
        return 0;
    }
    unsigned int r = sfp8_op_apply(op, &f, a, b, c, &env, &fl);
    *flags = fl;
    return r;
}

/* conversion between two formats (bits 32 / 64: IEEE binary32 / binary64 bit patterns) */
unsigned long long softfp8_dpi_convert(int s_bits, int s_signed, int s_exp_bits, int s_man_bits, int s_bias,
                                       int s_specials, int s_subnormals, int s_saturate, int d_bits, int d_signed,
                                       int d_exp_bits, int d_man_bits, int d_bias, int d_specials,
                                       int d_subnormals, int d_saturate, unsigned long long a, int rounding,
                                       int saturate, int tininess_before, int sr_bits, unsigned int random,
                                       unsigned char *flags)
{
    sfp8_format sf, df;
    sfp8_env env;
    uint8_t fl = 0;
    const sfp8_format *src = dpi_endpoint(&sf, s_bits, s_signed, s_exp_bits, s_man_bits, s_bias, s_specials,
                                          s_subnormals, s_saturate);
    const sfp8_format *dst = dpi_endpoint(&df, d_bits, d_signed, d_exp_bits, d_man_bits, d_bias, d_specials,
                                          d_subnormals, d_saturate);
    if (src == NULL || dst == NULL || !dpi_env(&env, dst, rounding, saturate, tininess_before, sr_bits, random)) {
        *flags = SFP8_DPI_BAD_CALL;
        return 0;
    }
    unsigned long long r = sfp8_convert(src, dst, a, &env, &fl);
    *flags = fl;
    return r;
}

static int same_name(const char *x, const char *y)
{
    for (; *x && *y; x++, y++) {
        char cx = *x >= 'A' && *x <= 'Z' ? (char)(*x - 'A' + 'a') : *x;
        char cy = *y >= 'A' && *y <= 'Z' ? (char)(*y - 'A' + 'a') : *y;
        if (cx != cy) return 0;
    }
    return *x == *y;
}

/* The descriptor of a preset (C name, case-insensitive; "binary32" / "binary64");
 * bias is used by the Tesla families only.  Returns 0, or -1 for an unknown name or
 * a bias outside 0..63. */
int softfp8_dpi_preset(const char *name, int bias, int *bits, int *is_signed, int *exp_bits, int *man_bits,
                       int *fbias, int *specials, int *subnormals, int *saturate)
{
    const sfp8_format *f = NULL;
    int tesla = 0;
    if (same_name(name, "binary32")) f = &sfp8_binary32;
    if (same_name(name, "binary64")) f = &sfp8_binary64;
    for (int i = 0; f == NULL && i < SFP8_NUM_PRESETS; i++)
        if (same_name(name, sfp8_presets[i].name)) {
            f = &sfp8_presets[i].format;
            tesla = sfp8_presets[i].bias_parameter;
        }
    if (f == NULL || (tesla && (bias < 0 || bias > 63))) return -1;
    *bits = f->bits;
    *is_signed = f->is_signed;
    *exp_bits = f->exp_bits;
    *man_bits = f->man_bits;
    *fbias = tesla ? bias : f->bias;
    *specials = f->specials;
    *subnormals = f->subnormals;
    *saturate = f->saturate;
    return 0;
}

#ifdef __cplusplus
}
#endif
