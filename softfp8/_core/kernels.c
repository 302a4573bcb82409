/* Array kernels: loops of the exact core over contiguous arrays, or of the
 * fast-path tables (built from the core, fast.h) where one covers the call. */
#include "kernels.h"

#include "fast.h"

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
    const uint16_t *tab = sfp8f_binary8(op, f, env, (ptrdiff_t)n);
    if (tab) {
        int rel = op == X_CMP_QUIET || op == X_CMP_SIGNALING;
        for (size_t i = 0; i < n; i++) {
            uint16_t v = tab[(a[i] & 0xffu) << 8 | (b[i] & 0xffu)];
            out[i] = rel ? (uint32_t)(int32_t)(int8_t)(uint8_t)v : (uint32_t)(v & 0xffu);
            flags[i] = (uint8_t)(v >> 8);
        }
        return;
    }
    if (op == X_ADD || op == X_SUB || op == X_MUL) {
        const sfp8f_a16 *t = sfp8f_arith16(f, env, (ptrdiff_t)n);
        if (t) {
            for (size_t i = 0; i < n; i++) {
                uint16_t x = (uint16_t)a[i], y = (uint16_t)b[i], r;
                sfp8f_run_arith16(t, op, f, env, (const char *)&x, 0, (const char *)&y, 0, (char *)&r, 0, 1,
                                  flags + i);
                out[i] = r;
            }
            return;
        }
    }
    FOR_EACH(out[i] = sfp8x_binary(op, f, a[i], b[i], &e, &fl));
}

void sfp8_kernel_unary(int op, const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                       const uint32_t *a, size_t n, uint32_t *out, uint8_t *flags)
{
    const sfp8f_un *tab = sfp8f_unary(op, f, env, (ptrdiff_t)n);
    if (tab) {
        for (size_t i = 0; i < n; i++) {
            uint32_t v = tab->val[a[i] & tab->mask];
            out[i] = v & 0xffffu;
            flags[i] = (uint8_t)(v >> 16);
        }
        return;
    }
    FOR_EACH(out[i] = sfp8x_unary(op, f, a[i], &e, &fl));
}

void sfp8_kernel_fma(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                     const uint32_t *a, const uint32_t *b, const uint32_t *c, size_t n,
                     uint32_t *out, uint8_t *flags)
{
    const sfp8f_fma *t = f->bits <= 8 ? sfp8f_fma_table(f, env, (ptrdiff_t)n) : NULL;
    if (t) {
        for (size_t i = 0; i < n; i++) {
            uint8_t x = (uint8_t)a[i], y = (uint8_t)b[i], z = (uint8_t)c[i], r;
            sfp8f_run_fma(t, f, env, (const char *)&x, 0, (const char *)&y, 0, (const char *)&z, 0, (char *)&r, 0, 1,
                          flags + i);
            out[i] = r;
        }
        return;
    }
    FOR_EACH(out[i] = sfp8_fma(f, a[i], b[i], c[i], &e, &fl));
}

void sfp8_kernel_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                         const sfp8_rng *rng, const uint64_t *a, size_t n, uint64_t *out,
                         uint8_t *flags)
{
    if (src->bits <= 16) {
        const sfp8f_conv *c = sfp8f_convert(src, dst, env, (ptrdiff_t)n);
        if (c) {
            uint64_t mask = (uint64_t)c->n - 1;
            for (size_t i = 0; i < n; i++) {
                uint64_t x = a[i] & mask;
                out[i] = c->val[x];
                flags[i] = c->fl[x];
            }
            return;
        }
    } else if (src->bits == 32 || src->bits == 64) {
        const uint16_t *tab = sfp8f_from_float(dst, env, (ptrdiff_t)n);
        if (tab) {
            for (size_t i = 0; i < n; i++) {
                uint16_t v = tab[src->bits == 32 ? sfp8f_key32((uint32_t)a[i]) : sfp8f_key64(a[i])];
                out[i] = v & 0xffu;
                flags[i] = (uint8_t)(v >> 8);
            }
            return;
        }
    }
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
