/* Exact superaccumulator (accum.c): plain C, no global state. */
#ifndef SOFTFP8_ACCUM_H
#define SOFTFP8_ACCUM_H
#include <stdint.h>
#include "softfp8/softfp8.h"

/* Exact superaccumulator for reductions of add: every finite value of a
 * storage format is a multiple of 2^qmin; limbs hold a two's complement sum. */
#define ACC_LIMBS 10
typedef struct {
    uint64_t limb[ACC_LIMBS];
    int64_t qmin;
    int ok;
    int nan, snan, pinf, ninf, nonzero, pos_zero, neg_zero;
    uint32_t nan_code, inf_code;
} SuperAcc;

/* k = 2: sums of products of two values, else 1; sets a->ok when the
   format's range fits the limbs */
void acc_init_k(SuperAcc *a, const sfp8_format *f, int k);
static inline void acc_init(SuperAcc *a, const sfp8_format *f) { acc_init_k(a, f, 1); }
/* add sig * 2^(qmin + pos), negated if neg (two's complement limbs) */
void acc_add_mag(SuperAcc *a, uint64_t sig, int64_t pos, int neg);
/* add one value / the exact product of two values of f */
void acc_add_value(SuperAcc *a, const sfp8_format *f, uint32_t code, uint8_t *flags);
void acc_add_product(SuperAcc *sa, const sfp8_format *f, uint32_t x, uint32_t y, uint8_t *fl);
/* the sum rounded once into f (NaN / infinity as f's addition gives them) */
uint32_t acc_round(SuperAcc *a, const sfp8_format *f, const sfp8_env *env, uint8_t *flags);
/* the sum rounded once into an IEEE binary format outf (binary32/binary64) */
uint64_t acc_round_float(SuperAcc *sa, const sfp8_format *outf, const sfp8_env *env, uint8_t *flags);
#endif
