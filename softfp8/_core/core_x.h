/* Internal interface of the exact core (core.c) for the other core files that
 * compute values themselves: the elementary functions (elem*.c).  Not public:
 * include/softfp8/softfp8.h is the public API. */
#ifndef SOFTFP8_CORE_X_H
#define SOFTFP8_CORE_X_H
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

/* Decode a code; raises `denormal` for a subnormal operand (as every op does). */
void sfp8x_unpack(const sfp8_format *f, uint32_t a, sfp8x_val *v, uint8_t *flags);
/* If a (or b; either may be NULL) is a NaN: the propagated NaN result (invalid
 * for a signalling NaN operand) in *res, return 1.  Else return 0. */
int sfp8x_nan_operand(const sfp8_format *f, const sfp8x_val *a, const sfp8x_val *b, uint32_t *res,
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

/* ISA conventions (core_isa.c): sfp8_convert and the op dispatch (ops.c) hand a
 * call whose env->isa is not 0 to these, which run the default core and apply the
 * convention's NaN, flush-to-zero and denormals-are-zero rules. */
uint64_t sfp8x_isa_convert(const sfp8_format *src, const sfp8_format *dst, uint64_t a, const sfp8_env *env,
                           uint8_t *flags);
uint32_t sfp8x_isa_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, int64_t n,
                         const sfp8_env *env, uint8_t *fl, uint32_t *r2);

/* The explanation of the last rounding (core_explain.c): when this thread's sink is
 * set (by sfp8_op_explain / sfp8_convert_explain), round_pack reports every call. */
extern _Thread_local sfp8_explain *sfp8x_explain_sink;
void sfp8x_explain_record(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                          int sticky, uint8_t raised, uint64_t result);
#endif
