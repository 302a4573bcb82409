/* Internal interface of the exact core (core.c) for the other core files that
 * compute values themselves: the exact functions (core_exact.c), the IEEE 754
 * and P3109 operations (core_ieee.c, core_p3109.c) and the elementary
 * functions (elem*.c).  Not public: include/softfp8/softfp8.h is the public API.
 * Every result that is not an operand's own code (or a special code) goes
 * through sfp8x_round / sfp8x_add_finite, i.e. the core's round_pack. */
#ifndef SOFTFP8_CORE_X_H
#define SOFTFP8_CORE_X_H
#include <stddef.h>
#include <stdint.h>

#include "softfp8/softfp8.h"

/* classes of a decoded operand */
enum { SFP8X_ZERO = 0, SFP8X_FINITE, SFP8X_INF, SFP8X_NAN };

/* A decoded code: finite non-zero values are sig * 2^exp exactly (sig != 0). */
typedef struct sfp8x_val {
    int kind;      /* SFP8X_ZERO .. SFP8X_NAN                          */
    int sign;      /* 1: negative (fnuz NaN: 0)                         */
    int snan;      /* NaN: signalling                                   */
    uint64_t sig;  /* finite: integer significand                       */
    int64_t exp;   /* finite: value = sig * 2^exp                       */
    uint64_t code; /* the code, masked to the format's width            */
} sfp8x_val;

/* bits of a format's codes */
static inline uint64_t sfp8x_mask64(int n) { return n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1); }
static inline int sfp8x_msb64(uint64_t x) { return 63 - __builtin_clzll(x); }
static inline uint64_t sfp8x_code_mask(const sfp8_format *f) { return sfp8x_mask64(f->bits); }
static inline uint64_t sfp8x_exp_ones(const sfp8_format *f) { return sfp8x_mask64(f->exp_bits); }
static inline uint64_t sfp8x_man_mask(const sfp8_format *f) { return sfp8x_mask64(f->man_bits); }
static inline uint64_t sfp8x_sign_bit(const sfp8_format *f) { return (uint64_t)1 << (f->bits - 1); }
/* magnitude code m with the sign (unsigned formats: m itself) */
static inline uint64_t sfp8x_with_sign(const sfp8_format *f, int sign, uint64_t m)
{
    return (sign && f->is_signed) ? (m | sfp8x_sign_bit(f)) : m;
}
/* the largest finite magnitude code; the magnitude code of infinity (ieee and
   p3109 schemes: max + 1 or the all-ones exponent) */
uint32_t sfp8x_max_mag(const sfp8_format *f);
uint32_t sfp8x_inf_mag(const sfp8_format *f);

/* Decode a code; raises `denormal` for a subnormal operand (as every op does). */
void sfp8x_unpack(const sfp8_format *f, uint32_t a, sfp8x_val *v, uint8_t *flags);
/* If a (or b; either may be NULL) is a NaN: the propagated NaN result (invalid
 * for a signalling NaN operand) in *res, return 1.  Else return 0. */
int sfp8x_nan_operand(const sfp8_format *f, const sfp8x_val *a, const sfp8x_val *b, uint32_t *res,
                      uint8_t *flags);
/* The same for up to three operands (any may be NULL): the first NaN, invalid
 * if any is signalling. */
int sfp8x_nan3(const sfp8_format *f, const sfp8x_val *a, const sfp8x_val *b, const sfp8x_val *c, uint32_t *res,
               uint8_t *flags);
/* The NaN of an invalid operation (raises invalid). */
uint32_t sfp8x_invalid(const sfp8_format *f, uint8_t *flags);
/* An exact infinity delivered per SPEC section 4 (no flags beyond invalid for a
 * negative infinity in an unsigned format). */
uint32_t sfp8x_inf(const sfp8_format *f, const sfp8_env *env, int sign, uint8_t *flags);
/* A signed zero (fnuz: +0); formats with no zero: their NaN, with invalid. */
uint32_t sfp8x_zero(const sfp8_format *f, int sign, uint8_t *flags);
/* THE rounding routine (round_pack): magnitude (sig + sticky*delta) * 2^exp,
 * sig != 0, 0 < delta < 1; with sticky, sig must carry its msb at bit 56 or
 * above (see sfp8_round_value).  Raises overflow / underflow / inexact. */
uint32_t sfp8x_round(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                     int sticky, uint8_t *flags);

/* ISA conventions (core.c, "ISA conventions"): sfp8_convert applies them to a
 * conversion whose env->isa is not 0, the op dispatch (ops.c, sfp8x_apply_ext) to an
 * operation, with these: the convention's NaN of an invalid operation, a subnormal
 * operand read as zero (DAZ, raising denormal), a subnormal result flushed to zero
 * (FTZ, raising underflow and inexact). */
uint64_t sfp8x_isa_default_nan(const sfp8_format *f, int isa);
/* a NaN operand made quiet, payload and sign kept (ieee); the other schemes' NaNs are quiet already */
uint64_t sfp8x_quiet_nan(const sfp8_format *f, uint64_t a);
uint64_t sfp8x_daz(const sfp8_format *f, uint64_t a, uint8_t *fl);
uint64_t sfp8x_ftz(const sfp8_format *f, uint64_t r, uint8_t *fl);

/* The explanation of the last rounding: when this thread's sink is set,
 * round_pack reports every call to the recorder.  core.c defines both; core_explain.c
 * (sfp8_op_explain, sfp8_convert_explain, the cover engine) sets them together, so
 * the core calls the explanation through the recorder without depending on it. */
typedef void (*sfp8x_explain_fn)(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                                 int sticky, uint8_t raised, uint64_t result);
extern _Thread_local sfp8_explain *sfp8x_explain_sink;
extern _Thread_local sfp8x_explain_fn sfp8x_explain_recorder;
/* x + y rounded once, x = (-1)^sx gx 2^ex and y = (-1)^sy gy 2^ey finite
 * non-zero (gx, gy < 2^62); an exact zero sum is +0 (-0 rounding downward). */
uint32_t sfp8x_add_finite(const sfp8_format *f, const sfp8_env *env, int sx, uint64_t gx, int64_t ex, int sy,
                          uint64_t gy, int64_t ey, uint8_t *flags);
/* order of two non-NaN values: -1, 0, 1 (-0 == +0) */
int sfp8x_cmp(const sfp8x_val *x, const sfp8x_val *y);
#endif
