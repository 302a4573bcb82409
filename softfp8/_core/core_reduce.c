/*
 * softfp8 exact core: the reduction operations of IEEE 754-2019 9.4 -- sum,
 * dot, sumSquare, sumAbs -- computed exactly in the superaccumulator (accum.c)
 * and rounded once (its acc_round: the core's round_pack).  The scaled products
 * (scaledProd, scaledProdSum, scaledProdDiff) are exact big products, computed in
 * softfp8/bits.py and rounded once by sfp8_round_value.
 */
#include "accum.h"
#include "core_x.h"

static uint32_t load(const sfp8_format *f, const void *a, size_t i)
{
    return f->bits <= 8 ? ((const uint8_t *)a)[i] : ((const uint16_t *)a)[i];
}

uint32_t sfp8_reduce(const sfp8_format *f, int kind, const void *a, const void *b, size_t n, const sfp8_env *env,
                     uint8_t *flags)
{
    SuperAcc acc;
    if (kind < SFP8_REDUCE_SUM || kind > SFP8_REDUCE_SUM_ABS) {
        *flags |= SFP8_FLAG_INVALID;
        return sfp8_default_nan(f);
    }
    acc_init_k(&acc, f, kind == SFP8_REDUCE_SUM || kind == SFP8_REDUCE_SUM_ABS ? 1 : 2);
    for (size_t i = 0; i < n; i++) {
        uint32_t x = load(f, a, i) & (uint32_t)sfp8x_code_mask(f);
        switch (kind) {
        case SFP8_REDUCE_SUM: acc_add_value(&acc, f, x, flags); break;
        case SFP8_REDUCE_SUM_ABS: acc_add_value(&acc, f, sfp8_abs(f, x), flags); break;
        case SFP8_REDUCE_SUM_SQUARE: acc_add_product(&acc, f, x, x, flags); break;
        default: acc_add_product(&acc, f, x, load(f, b, i) & (uint32_t)sfp8x_code_mask(f), flags); break;
        }
    }
    /* an empty sum is +0 (every operation of 9.4 on an empty vector: the sum's identity) */
    if (n == 0) return sfp8x_zero(f, 0, flags);
    return acc_round(&acc, f, env, flags);
}
