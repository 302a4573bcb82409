/* sum8: exact sums of codes of formats of <= 8 bits (the add reductions of
 * the array driver, softfp8.bits.sum, and the matrix engine's exactness
 * certificate): a table of every storage byte's value as an integer multiple
 * v[c] of the format's quantum 2^qmin (|v| < 2^40), its reading flags and its
 * category (zero of either sign, NaN / infinity); the kernel sums v[c] in 64-bit
 * partial sums that cannot overflow, into a 128-bit total.
 *
 * Nothing is rounded here: the caller rounds the exact total once (driver.c,
 * sum_exact, through accum.c's acc_round).  The table is built from the core's
 * binary64 decoding of every code (only formats whose values are all binary64
 * numbers, accum.h acc_binary64_exact).  Equal to the core: the reductions of
 * tests/harness/test_harness.py::test_entry [sum8] and tests/core's sum tests. */
#include <stdlib.h>

#include "accum.h"
#include "fast_impl.h"

static void *build_sum(const sfp8f_key *k, size_t *bytes)
{
    const sfp8_format *f = &k->a;
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
    int64_t qmin = (int64_t)-f->bias - f->man_bits;
    sfp8f_sum *t = calloc(1, sizeof *t);
    int64_t vmax = 0;
    if (!t) return NULL;
    for (uint32_t c = 0; c < 256; c++) {
        int cls = sfp8_classify(f, c), neg = sfp8_signbit(f, c);
        uint8_t fl = 0;
        if (cls == SFP8_CLASS_SUBNORMAL) t->fl[c] = SFP8_FLAG_DENORMAL;
        if (cls >= SFP8_CLASS_INF) {
            t->cat[c] = SFP8F_SUM_SPECIAL;
        } else if (cls == SFP8_CLASS_ZERO ||
                   (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH)) {
            t->cat[c] = neg ? SFP8F_SUM_NEGZERO : SFP8F_SUM_POSZERO;
        } else {
            uint64_t b = sfp8_convert(f, &sfp8_binary64, c, &env, &fl);
            int64_t ef = (int64_t)((b >> 52) & 0x7ff), exp;
            uint64_t sig = b & (((uint64_t)1 << 52) - 1);
            if (ef) sig |= (uint64_t)1 << 52;
            else ef = 1;
            exp = ef - 1075;
            while (!(sig & 1)) {
                sig >>= 1;
                exp++;
            }
            if (exp < qmin || exp - qmin + (64 - __builtin_clzll(sig)) > 40) {
                free(t);
                return NULL; /* too wide for 64-bit partial sums */
            }
            t->v[c] = (int64_t)(sig << (exp - qmin)) * (neg ? -1 : 1);
            if (llabs(t->v[c]) > vmax) vmax = llabs(t->v[c]);
            t->cat[c] = SFP8F_SUM_NONZERO;
        }
    }
    t->vbits = 64 - __builtin_clzll((uint64_t)vmax | 1);
    *bytes = sizeof *t;
    return t;
}

const sfp8f_sum *sfp8f_sum_table(const sfp8_format *f, ptrdiff_t n)
{
    if (!sfp8f_enabled() || f->bits > 8) return NULL;
    return sfp8f_cached(T_SUM, 0, f, NULL, NULL, build_sum, n, 256);
}

const void *sfp8f_sum8_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    /* the table builder reads values through binary64: only formats whose values
       are all exact binary64 values */
    if (c->f->bits > 8 || !acc_binary64_exact(c->f)) return NULL;
    return sfp8f_sum_table(c->f, c->n);
}

/* sum tables have 256 entries built by the core for every byte; adds the sum to
   c->sum->total and ORs the categories seen into c->sum->cats */
unsigned sfp8f_sum8_run(const void *tab, const sfp8f_call *c)
{
    const sfp8f_sum *t = tab;
    const char *a = c->a;
    const ptrdiff_t sa = c->sa;
    ptrdiff_t n = c->n;
    unsigned fl = 0, cat = 0;
    /* 64-bit partial sums cannot overflow within a chunk */
    ptrdiff_t chunk = (ptrdiff_t)1 << (62 - t->vbits > 30 ? 30 : 62 - t->vbits);
    while (n > 0) {
        ptrdiff_t m = n < chunk ? n : chunk;
        int64_t s = 0;
        const char *p = a;
        for (ptrdiff_t i = 0; i < m; i++, p += sa) {
            uint8_t code = *(const uint8_t *)p;
            s += t->v[code];
            fl |= t->fl[code];
            cat |= t->cat[code];
        }
        c->sum->total += s;
        a += m * sa;
        n -= m;
    }
    c->sum->cats |= cat;
    return fl;
}
