/* Exact superaccumulator (accum.c): plain C, no global state. */
#ifndef SOFTFP8_ACCUM_H
#define SOFTFP8_ACCUM_H
#include <stdint.h>
#include "softfp8/softfp8.h"

/* Exact superaccumulator for sums of values (k = 1) and of products of two
 * values (k = 2) of one storage format.  Every finite value of a format is a
 * multiple of 2^qmin with qmin = -bias - man_bits (either subnormal
 * convention), and is below 2^(2^exp_bits - bias + 1); the sum is held as a
 * two's complement fixed-point number of nlimbs 64-bit limbs with 2^qmin (k = 1)
 * or 2^(2 qmin) (k = 2) as its unit and 64 bits of headroom for the count of
 * terms.  The limb count depends only on exp_bits, man_bits and k (never on
 * the bias), so every valid format fits ACC_MAX_LIMBS; only nlimbs limbs are
 * cleared and scanned, so narrow formats pay for a few limbs only. */
#define ACC_MAX_LIMBS 2064 /* exp_bits = 16, k = 2: 2 * (2^16 + 1) + 66 bits, times the matrix engine's exact scale products (mm_ref.c) */
typedef struct {
    int64_t qmin;
    int nlimbs;
    int nan, snan, pinf, ninf, nonzero, pos_zero, neg_zero;
    uint32_t nan_code, inf_code;
    uint64_t limb[ACC_MAX_LIMBS];
} SuperAcc;

/* exact value sig * 2^exp (sig odd) of a finite non-zero code of f (a storage
   format or binary32), read from its fields */
void acc_finite_value(const sfp8_format *f, uint32_t code, uint64_t *sig, int64_t *exp);
/* limbs needed for format f and k (1: values, 2: products of two values) */
int acc_limbs_needed(const sfp8_format *f, int k);
/* 1 if every value of f is an exact binary64 and sums of them fit the
   fast path's 64-bit integer partial sums (fast/fast.c build_sum) */
int acc_binary64_exact(const sfp8_format *f);
/* an empty accumulator whose unit is 2^qmin, for sums below 2^(qmin + span) (and up to
   2^64 terms); span + 66 <= 64 * ACC_MAX_LIMBS */
void acc_init_span(SuperAcc *a, int64_t qmin, int64_t span);
/* k = 2: sums of products of two values, else 1 (f must be a valid format) */
void acc_init_k(SuperAcc *a, const sfp8_format *f, int k);
static inline void acc_init(SuperAcc *a, const sfp8_format *f) { acc_init_k(a, f, 1); }
/* add sig * 2^(qmin + pos), negated if neg (two's complement limbs) */
void acc_add_mag(SuperAcc *a, uint64_t sig, int64_t pos, int neg);
/* add one value of f */
void acc_add_value(SuperAcc *a, const sfp8_format *f, uint32_t code, uint8_t *flags);
/* add the exact product of two codes of f (formats whose significands fit 32 bits:
   the IEEE 754 9.4 reductions of core_reduce.c / core_ieee.c) */
void acc_add_product(SuperAcc *sa, const sfp8_format *f, uint32_t x, uint32_t y, uint8_t *fl);
/* the sum rounded once into f (NaN / infinity as f's addition gives them);
   rounding consumes the accumulator (its limbs are left unspecified) */
uint32_t acc_round(SuperAcc *a, const sfp8_format *f, const sfp8_env *env, uint8_t *flags);
/* the sum of values of f rounded once into an IEEE binary format outf (binary32 /
   binary64); NaN and infinite sums are the core's conversions of f's codes */
uint64_t acc_round_float(SuperAcc *sa, const sfp8_format *f, const sfp8_format *outf, const sfp8_env *env,
                         uint8_t *flags);
#endif
