/* The stochastic families' shared code (sr.h): the core's result with a given
 * random word (the tables' builders check every entry against it), the search
 * of a per-code table entry's threshold, and the lanes the SIMD kernels leave to
 * the core.  Nothing here rounds: the core does. */
#include <string.h>

#include "ops.h"
#include "sr.h"

uint32_t sfp8f_sr_core(const sfp8f_key *k, sfp8_env *env, uint32_t x, uint32_t y, uint32_t R, uint8_t *g)
{
    env->random = R;
    if (k->kind == T_SRCV || k->kind == T_SRWC) return sfp8_convert(&k->a, &k->b, x << 8 | y, env, g);
    if (k->kind == T_SRUN || k->kind == T_SRWU) return sfp8x_apply(k->op, &k->a, x << 8 | y, 0, 0, env, g);
    return sfp8x_apply(k->op, &k->a, x, y, 0, env, g);
}

int sfp8f_sr_core_gives(const sfp8f_key *k, sfp8_env *env, uint32_t x, uint32_t y, uint32_t R, uint32_t code,
                      unsigned fl)
{
    uint8_t g = 0;
    return sfp8f_sr_core(k, env, x, y, R, &g) == code && g == fl;
}

int sfp8f_sr_search_ts(const sfp8f_key *k, sfp8_env *env, uint32_t p, uint32_t r0, unsigned f0, uint32_t r1,
                     unsigned f1, uint32_t *ts)
{
    const uint32_t x = p >> 8, y = p & 0xff;
    uint32_t lo_r = 1, hi_r = 0xffffffffu; /* core(lo_r - 1) = r0, core(hi_r) = r1 */
    while (lo_r < hi_r) {
        uint32_t mid = lo_r + (hi_r - lo_r) / 2;
        uint8_t g = 0;
        if (sfp8f_sr_core(k, env, x, y, mid, &g) == r1) hi_r = mid;
        else lo_r = mid + 1;
    }
    if (!sfp8f_sr_core_gives(k, env, x, y, lo_r - 1, r0, f0) || !sfp8f_sr_core_gives(k, env, x, y, lo_r, r1, f1)) return 0;
    *ts = 0u - lo_r;
    return 1;
}

__attribute__((noinline)) unsigned sfp8f_sr_finish_core(const sr_call *c, ptrdiff_t i, const char *x, const char *y,
                                                        char *out, int size, uint8_t *fl, ptrdiff_t m)
{
    sfp8_env e = *c->env;
    unsigned g = 0;
    /* sqrt of a negative number (finite, not zero, read without a flag: vf): the
       same NaN and flags for every such operand and random word (nothing is
       rounded): the core once, then those lanes without a branch per lane */
    const sfp8f_sr16 *t = c->op == X_SQRT && !c->src ? c->t16 : NULL;
    if (t) {
        uint32_t neg_code = 0;
        int neg_fl = -1;
        for (ptrdiff_t j = 0; j < m && neg_fl < 0; j++) {
            const uint64_t v = t->vf[(uint32_t)sfp8f_ld(x + j * size, size) & t->mask];
            if ((fl[j] & 0x80) && (v >> 63) && !(v & 0xff) && (v << 1)) {
                uint8_t got = 0;
                e.random = 0; /* not used: nothing is rounded */
                neg_code = sfp8x_apply(X_SQRT, c->f, (uint32_t)sfp8f_ld(x + j * size, size), 0, 0, &e, &got);
                neg_fl = got;
            }
        }
        if (neg_fl >= 0 && size == 2) /* 16-bit codes (the only caller): masks, no branch */
            for (ptrdiff_t j = 0; j < m; j++) {
                const uint64_t v = t->vf[sfp8f_ld16(x + 2 * j) & t->mask];
                const uint32_t neg = (uint32_t)(fl[j] >> 7) & (uint32_t)(v >> 63) & (uint32_t)((v & 0xff) == 0) &
                                     (uint32_t)((v << 1) != 0);
                const uint32_t sel = 0u - neg;
                const uint16_t code = (uint16_t)((neg_code & sel) | (sfp8f_ld16(out + 2 * j) & ~sel));
                memcpy(out + 2 * j, &code, 2);
                fl[j] = (uint8_t)(((uint32_t)neg_fl & sel) | (fl[j] & ~sel));
            }
    }
    for (ptrdiff_t j = 0; j < m; j++) {
        if (fl[j] & 0x80) {
            uint8_t got = 0;
            e.random = sfp8r_bits(c->k.hs, c->k.base, c->index0 + (uint64_t)(i + j));
            if (c->src) { /* x, y: the source code's high and low bytes */
                const uint32_t code = (uint32_t)(uint8_t)x[j] << 8 | (uint8_t)y[j];
                sfp8f_st(out + j * size,
                         c->op < 0 ? sfp8_convert(c->src, c->f, code, &e, &got)
                                   : sfp8x_apply(c->op, c->f, code, 0, 0, &e, &got),
                         size);
            } else
                sfp8f_st(out + j * size,
                         sfp8x_apply(c->op, c->f, (uint32_t)sfp8f_ld(x + j * size, size),
                                     (uint32_t)sfp8f_ld(y + j * size, size),
                                     c->z ? (uint32_t)sfp8f_ld(c->z + (i + j) * size, size) : 0, &e, &got),
                         size);
            fl[j] = got;
        }
        g |= fl[j];
    }
    return g;
}
