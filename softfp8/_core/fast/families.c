/* The families table (built from families.def), every level's kernel resolved
 * once, the per-family call counters, and the matrix engine's entries into
 * single families (sfp8f_run_convert, sfp8f_run_from_float, sfp8f_run_cast16,
 * sfp8f_run_arith16 and the level-dependent getters), which run the family's
 * kernel of the current SIMD level like the array driver does.
 *
 * This file is the top of fast/: it refers to every family file; no family
 * file refers to it (the families' files depend on switches.c, cache.c and
 * shared helpers only), so fast/ has no call cycle. */
#include <pthread.h>
#include <string.h>

#include "arith16.h"
#include "cast16.h"
#include "fast_impl.h"
#include "family.h"
#include "simd.h"

/* the kernels of the x86-64 levels exist in x86-64 builds only */
#if SFP8_X86
#define X86_KERNEL(k) k
#else
#define X86_KERNEL(k) NULL
#endif

#define KERNEL(fn) fn
#define NONE NULL
const sfp8f_family sfp8f_families[SFP8F_NFAMILIES] = {
#define SFP8F_FAMILY(name, kinds, sr, prepare, k0, k1, k2, what, space)                                      \
    {#name, what, space, kinds, sr, prepare, {k0, X86_KERNEL(k1), X86_KERNEL(k2)}},
#include "families.def"
#undef SFP8F_FAMILY
};
#undef KERNEL
#undef NONE

/* ---- every level's kernel, resolved once ---- */

static sfp8f_kernel g_kernel[SFP8F_LEVELS][SFP8F_NFAMILIES];
static pthread_once_t g_resolved = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    for (int l = 0; l < SFP8F_LEVELS; l++)
        for (int k = 0; k < SFP8F_NFAMILIES; k++) {
            int m = l;
            while (m > 0 && !sfp8f_families[k].run[m]) m--; /* the next lower level's kernel */
            g_kernel[l][k].run = sfp8f_families[k].run[m];
            g_kernel[l][k].level = m;
        }
}

const sfp8f_kernel *sfp8f_kernels(int level)
{
    pthread_once(&g_resolved, resolve);
    if (level < 0) level = 0;
    if (level >= SFP8F_LEVELS) level = SFP8F_LEVELS - 1;
    return g_kernel[level];
}

/* ---- counters and the table's description (fast.h) ---- */

static uint64_t g_calls[SFP8F_NFAMILIES][SFP8F_LEVELS];

int sfp8f_family_total(void) { return SFP8F_NFAMILIES; }

void sfp8f_family_count(int k, int l) { __atomic_fetch_add(&g_calls[k][l], 1, __ATOMIC_RELAXED); }

int sfp8f_family_info(int k, const char **name, const char **what, const char **space, int own[SFP8F_LEVELS])
{
    if (k < 0 || k >= SFP8F_NFAMILIES) return 0;
    *name = sfp8f_families[k].name;
    *what = sfp8f_families[k].what;
    *space = sfp8f_families[k].space;
    for (int l = 0; l < SFP8F_LEVELS; l++) own[l] = sfp8f_families[k].run[l] != NULL;
    return 1;
}

uint64_t sfp8f_family_calls(int k, int l)
{
    return k >= 0 && k < SFP8F_NFAMILIES && l >= 0 && l < SFP8F_LEVELS ? __atomic_load_n(&g_calls[k][l], __ATOMIC_RELAXED)
                                                                       : 0;
}

void sfp8f_family_calls_reset(void)
{
    for (int k = 0; k < SFP8F_NFAMILIES; k++)
        for (int l = 0; l < SFP8F_LEVELS; l++) __atomic_store_n(&g_calls[k][l], 0, __ATOMIC_RELAXED);
}

/* ---- the matrix engine's entries (fast.h, cast16.h): one family's kernel of the
 *      current SIMD level on one call (not counted: the engine counts its paths) ---- */

static int level_of(int k) { return sfp8f_kernels(sfp8f_simd_level())[k].level; }

static unsigned run_one(int k, const void *t, sfp8f_call *c)
{
    const sfp8f_kernel *K = &sfp8f_kernels(sfp8f_simd_level())[k];
    c->level = K->level;
    if (c->n <= 0) return 0;
    return K->run(t, c);
}

unsigned sfp8f_run_convert(const sfp8f_conv *t, const char *a, ptrdiff_t sa, int isize, char *o, ptrdiff_t so,
                           int osize, ptrdiff_t n, uint8_t *flout)
{
    sfp8f_call c = sfp8f_call1(SFP8F_CONVERT, -1, NULL, NULL, NULL, isize, osize, a, sa, o, so, n, flout);
    return run_one(SFP8F_FAM_convert, t, &c);
}

unsigned sfp8f_run_from_float(const uint16_t *tab, const char *a, ptrdiff_t sa, int isize, char *o, ptrdiff_t so,
                              ptrdiff_t n, uint8_t *flout)
{
    sfp8f_call c = sfp8f_call1(SFP8F_CONVERT, -1, isize == 4 ? &sfp8_binary32 : &sfp8_binary64, NULL, NULL, isize, 1, a, sa,
                         o, so, n, flout);
    return run_one(SFP8F_FAM_from_float8, tab, &c);
}

const sfp8f_a16 *sfp8f_arith16(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    return sfp8f_arith16_table(f, env, n, level_of(SFP8F_FAM_arith16));
}

unsigned sfp8f_run_arith16(const sfp8f_a16 *t, int op, const sfp8_format *f, const sfp8_env *env, const char *a,
                           ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c3, ptrdiff_t sc, char *o,
                           ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    sfp8f_call c = sfp8f_call1(SFP8F_OP, op, f, f, env, 2, 2, a, sa, o, so, n, flout);
    c.b = b;
    c.sb = sb;
    c.c = c3;
    c.sc = sc;
    return run_one(SFP8F_FAM_arith16, t, &c);
}

int sfp8f_cast16(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8f_c16 *p)
{
    return sfp8f_cast16_params(src, dst, env, level_of(SFP8F_FAM_cast16), p);
}

unsigned sfp8f_run_cast16(const sfp8f_c16 *p, const char *a, ptrdiff_t sa, int isize, char *o, ptrdiff_t so,
                          ptrdiff_t n, uint8_t *flout)
{
    sfp8f_call c = sfp8f_call1(SFP8F_CONVERT, -1, p->src, p->dst, p->env, isize, 2, a, sa, o, so, n, flout);
    return run_one(SFP8F_FAM_cast16, p, &c);
}
