/* Array kernels over contiguous code arrays (internal). */
#ifndef SOFTFP8_KERNELS_H
#define SOFTFP8_KERNELS_H
#include <stddef.h>
#include "softfp8/softfp8.h"
#include "ops.h"

/* operation ids: enum sfp8x_op of ops.h */

/* Where stochastic rounding takes its random bits from, element i:
 * random != NULL: random[i]; else if seeded: sfp8_random_u32(seed, stream, index0 + i);
 * else 0. */
typedef struct sfp8_rng {
    const uint32_t *random;
    int seeded;
    uint64_t seed;
    uint64_t stream;
    uint64_t index0;
} sfp8_rng;

/* out/flags may alias nothing else; results of compare are int32 relations
 * stored in out as (uint32_t)(int32_t)rel. */
void sfp8_kernel_binary(int op, const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                        const uint32_t *a, const uint32_t *b, size_t n, uint32_t *out, uint8_t *flags);
void sfp8_kernel_unary(int op, const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                       const uint32_t *a, size_t n, uint32_t *out, uint8_t *flags);
void sfp8_kernel_fma(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                     const uint32_t *a, const uint32_t *b, const uint32_t *c, size_t n,
                     uint32_t *out, uint8_t *flags);
void sfp8_kernel_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                         const sfp8_rng *rng, const uint64_t *a, size_t n, uint64_t *out,
                         uint8_t *flags);
void sfp8_kernel_to_int64(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                          const uint32_t *a, size_t n, int64_t *out, uint8_t *flags);
void sfp8_kernel_from_int64(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                            const int64_t *a, size_t n, uint32_t *out, uint8_t *flags);
#endif
