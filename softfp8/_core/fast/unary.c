/* unary: the unary operations of formats of <= 16 bits (the unary and
 * predicate rows of ops.def) by a table of every code: 256 entries (every
 * storage byte) for formats of <= 8 bits, else 2^bits indexed by code & mask;
 * entry = result | flags << 16.
 *
 * Nothing is derived: every entry is the core's own result (sfp8x_apply; the
 * core masks one-byte codes to the width, two-byte codes are masked here
 * before indexing).  One portable kernel, element by element in order (any
 * overlap).  Equal to the core under every calling convention:
 * tests/harness/test_harness.py::test_entry [unary] and the exhaustive unary
 * tests of tests/harness/test_harness.py::test_entry [unary]. */
#include <stdlib.h>

#include "fast_impl.h"
#include "ops.h"
#include "simd.h"

typedef struct sfp8f_un {
    uint32_t mask;       /* entries - 1 */
    const uint32_t *val;
} sfp8f_un;

typedef struct {
    sfp8f_un u;
    uint32_t val[];
} un_store;

/* Entries of a unary or conversion table: every storage byte for formats of
 * <= 8 bits (the core masks each byte to the width, so one-byte codes index
 * the table unmasked), else 2^bits (two-byte codes are masked in the kernels). */
static uint32_t code_entries(const sfp8_format *f) { return f->bits <= 8 ? 256u : (uint32_t)1 << f->bits; }

static void *build_unary(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    uint32_t n = code_entries(&k->a);
    un_store *t = malloc(sizeof *t + n * sizeof(uint32_t));
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    for (uint32_t a = 0; a < n; a++) {
        uint8_t fl = 0;
        uint32_t r = sfp8x_apply(k->op, &k->a, a, 0, 0, &env, &fl);
        t->val[a] = (r & 0xffffu) | (uint32_t)fl << 16;
    }
    t->u.mask = n - 1;
    t->u.val = t->val;
    *bytes = n * sizeof(uint32_t);
    return t;
}

static const sfp8f_un *unary_table(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    /* env-free operations have one table whatever the context (stochastic too) */
    if (sfp8x_env_free(op)) env = &sfp8f_free_env;
    if (!sfp8f_enabled() || f->bits > 16 || !X_IS_UNARY(op) || !sfp8f_usable_env(env)) return NULL;
    return sfp8f_cached(T_UNARY, op, f, NULL, env, build_unary, n, (ptrdiff_t)1 << f->bits);
}

const void *sfp8f_unary_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (sfp8x_arity(c->op) != 1) return NULL;
    return unary_table(c->op, c->f, c->env, c->n);
}

/* unary tables: one-byte codes index all 256 entries, two-byte codes are
 * masked to the width (code_entries) */
static inline AINL uint32_t unary_loop(int FL, const sfp8f_un *t, const char *a, ptrdiff_t sa, int size,
                                         char *o, ptrdiff_t so, int osize, ptrdiff_t n, uint8_t *flout)
{
    const uint32_t *tab = t->val, mask = t->mask;
    uint32_t acc = 0;
    if (size == 1 && osize == 1 && sa == 1 && so == 1) { /* contiguous: indexed form, still in order */
        const uint8_t *x = (const uint8_t *)a;
        uint8_t *z = (uint8_t *)o;
        for (ptrdiff_t i = 0; i < n; i++) {
            uint32_t v = tab[x[i]];
            z[i] = (uint8_t)v;
            acc |= v;
            if (FL) flout[i] = (uint8_t)(v >> 16);
        }
    } else if (size == 1 && osize == 1) {
        for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
            uint32_t v = tab[*(const uint8_t *)a];
            *(uint8_t *)o = (uint8_t)v;
            acc |= v;
            if (FL) flout[i] = (uint8_t)(v >> 16);
        }
    } else {
        for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
            uint32_t c = size == 1 ? *(const uint8_t *)a : sfp8f_ld16(a) & mask;
            uint32_t v = tab[c];
            sfp8f_st(o, v & 0xffffu, osize);
            acc |= v;
            if (FL) flout[i] = (uint8_t)(v >> 16);
        }
    }
    return acc;
}

unsigned sfp8f_unary_run(const void *t, const sfp8f_call *c)
{
    if (c->flout) return unary_loop(1, t, c->a, c->sa, c->isize, c->o, c->so, c->osize, c->n, c->flout) >> 16;
    return unary_loop(0, t, c->a, c->sa, c->isize, c->o, c->so, c->osize, c->n, NULL) >> 16;
}
