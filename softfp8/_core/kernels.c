/* Array kernels: loops of the exact core over contiguous arrays. */
#include "kernels.h"

static inline uint32_t rng_bits(const sfp8_rng *rng, size_t i)
{
    if (rng->random) return rng->random[i];
    if (rng->seeded) return sfp8_random_u32(rng->seed, rng->stream, rng->index0 + i);
    return 0;
}

#define FOR_EACH(body)                                                   \
    do {                                                                 \
        sfp8_env e = *env; (void)e;                                       \
        int stoch = env->rounding == SFP8_ROUND_STOCHASTIC;              \
        for (size_t i = 0; i < n; i++) {                                 \
            uint8_t fl = 0;                                              \
            if (stoch) e.random = rng_bits(rng, i);                      \
            body;                                                        \
            flags[i] = fl;                                               \
        }                                                                \
    } while (0)

void sfp8_kernel_binary(int op, const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                        const uint32_t *a, const uint32_t *b, size_t n, uint32_t *out, uint8_t *flags)
{
    switch (op) {
    case SFP8_OP_ADD: FOR_EACH(out[i] = sfp8_add(f, a[i], b[i], &e, &fl)); break;
    case SFP8_OP_SUB: FOR_EACH(out[i] = sfp8_sub(f, a[i], b[i], &e, &fl)); break;
    case SFP8_OP_MUL: FOR_EACH(out[i] = sfp8_mul(f, a[i], b[i], &e, &fl)); break;
    case SFP8_OP_DIV: FOR_EACH(out[i] = sfp8_div(f, a[i], b[i], &e, &fl)); break;
    case SFP8_OP_MIN: FOR_EACH(out[i] = sfp8_min(f, a[i], b[i], &fl)); break;
    case SFP8_OP_MAX: FOR_EACH(out[i] = sfp8_max(f, a[i], b[i], &fl)); break;
    case SFP8_OP_MINNUM: FOR_EACH(out[i] = sfp8_minnum(f, a[i], b[i], &fl)); break;
    case SFP8_OP_MAXNUM: FOR_EACH(out[i] = sfp8_maxnum(f, a[i], b[i], &fl)); break;
    case SFP8_OP_CMP_QUIET:
        FOR_EACH(out[i] = (uint32_t)(int32_t)sfp8_compare(f, a[i], b[i], 0, &fl)); break;
    case SFP8_OP_CMP_SIGNALING:
        FOR_EACH(out[i] = (uint32_t)(int32_t)sfp8_compare(f, a[i], b[i], 1, &fl)); break;
    case SFP8_OP_COPYSIGN: FOR_EACH(out[i] = sfp8_copysign(f, a[i], b[i])); break;
    default: break;
    }
}

void sfp8_kernel_unary(int op, const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                       const uint32_t *a, size_t n, uint32_t *out, uint8_t *flags)
{
    switch (op) {
    case SFP8_OP_SQRT: FOR_EACH(out[i] = sfp8_sqrt(f, a[i], &e, &fl)); break;
    case SFP8_OP_ROUND_INTEGRAL: FOR_EACH(out[i] = sfp8_round_integral(f, a[i], &e, 0, &fl)); break;
    case SFP8_OP_ROUND_INTEGRAL_EXACT:
        FOR_EACH(out[i] = sfp8_round_integral(f, a[i], &e, 1, &fl)); break;
    case SFP8_OP_NEG: FOR_EACH(out[i] = sfp8_neg(f, a[i])); break;
    case SFP8_OP_ABS: FOR_EACH(out[i] = sfp8_abs(f, a[i])); break;
    default: break;
    }
}

void sfp8_kernel_fma(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                     const uint32_t *a, const uint32_t *b, const uint32_t *c, size_t n,
                     uint32_t *out, uint8_t *flags)
{
    FOR_EACH(out[i] = sfp8_fma(f, a[i], b[i], c[i], &e, &fl));
}

void sfp8_kernel_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                         const sfp8_rng *rng, const uint64_t *a, size_t n, uint64_t *out,
                         uint8_t *flags)
{
    FOR_EACH(out[i] = sfp8_convert(src, dst, a[i], &e, &fl));
}

void sfp8_kernel_to_int64(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                          const uint32_t *a, size_t n, int64_t *out, uint8_t *flags)
{
    FOR_EACH(out[i] = sfp8_to_int64(f, a[i], &e, &fl));
}

void sfp8_kernel_from_int64(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                            const int64_t *a, size_t n, uint32_t *out, uint8_t *flags)
{
    FOR_EACH(out[i] = sfp8_from_int64(f, a[i], &e, &fl));
}
