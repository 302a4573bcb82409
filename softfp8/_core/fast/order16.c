/* order16: comparisons (equal ... greater_equal) and maximum / minimum / fmax /
 * fmin of formats wider than 8 bits, on the order keys of order.h: for two operands that
 * are neither NaN nor subnormal (the core raises invalid or denormal for those,
 * and those elements take the core), the core's comparison
 * is the comparison of the keys and raises nothing, and its maximum / minimum is
 * the operand with the larger / smaller key, -0 < +0 between zeros (core.c,
 * minmax).  The keys are the core's value order by construction (order.h);
 * equality with the core is tested under every NumPy calling convention by
 * tests/harness/test_harness.py::test_entry [order16] and on random and
 * special-heavy operands by tests/harness/test_harness.py::test_entry [order16].
 *
 * The cached "table" is the format's sfp8_order (so the cache's counters show
 * the path in use, and the NaN search runs once per format).  One scalar loop,
 * element i read before output i is written: any overlap NumPy passes is safe. */
#include <stdlib.h>

#include "fast_impl.h"
#include "ops.h"
#include "order.h"

static int order16_op(int op)
{
    switch (op) {
    case X_MAX: case X_MIN: case X_FMAX: case X_FMIN:
    case X_EQ: case X_NE: case X_LT: case X_LE: case X_GT: case X_GE:
        return 1;
    default:
        return 0;
    }
}

static void *build_order(const sfp8f_key *k, size_t *bytes)
{
    sfp8_order *o = malloc(sizeof *o);
    if (!o) return NULL;
    sfp8_order_init(o, &k->a);
    *bytes = sizeof *o;
    return o;
}

const void *sfp8f_order16_prepare(const sfp8f_call *c, void *scratch)
{
    const sfp8_format *f = c->f;
    (void)scratch;
    if (!sfp8f_enabled() || f->bits <= 8 || sfp8x_arity(c->op) != 2 || !order16_op(c->op)) return NULL;
    /* one table per format, whatever the operation (op 0) and environment */
    return sfp8f_cached(T_ORD, 0, f, NULL, NULL, build_order, c->n, 1);
}

/* the key of c, or -1 if c must take the core: NaN (invalid), or subnormal
   (the core raises denormal for a subnormal operand, docs/semantics.md) */
static inline int64_t key_or_core(const sfp8_order *o, uint32_t c)
{
    uint32_t k = sfp8_order_key(o, c), m = c & o->mag_mask;
    if (sfp8_order_is_nan(o, k)) return -1;
    if (m != 0 && (m >> o->man_bits) == 0) return -1;
    return k;
}

unsigned sfp8f_order16_run(const void *t, const sfp8f_call *c)
{
    const sfp8_order *o = t;
    const int op = c->op;
    const sfp8_format *f = c->f;
    const char *a = c->a, *b = c->b;
    char *out = c->o;
    const ptrdiff_t sa = c->sa, sb = c->sb, so = c->so, n = c->n;
    uint8_t *const flout = c->flout;
    unsigned acc = 0;
    int boolean = !(op == X_MAX || op == X_MIN || op == X_FMAX || op == X_FMIN);
    int want_max = op == X_MAX || op == X_FMAX;
    uint32_t zero_key = o->sign_shift < 0 ? 0 : o->mag_mask;
    for (ptrdiff_t i = 0; i < n; i++, a += sa, b += sb, out += so) {
        uint32_t x = sfp8f_ld16(a), y = sfp8f_ld16(b), r;
        int64_t kx = key_or_core(o, x), ky = key_or_core(o, y);
        uint8_t fl = 0;
        if (kx < 0 || ky < 0) {
            r = sfp8x_apply(op, f, x, y, 0, &sfp8f_free_env, &fl);
        } else if (boolean) {
            switch (op) {
            case X_EQ: r = kx == ky; break;
            case X_NE: r = kx != ky; break;
            case X_LT: r = kx < ky; break;
            case X_LE: r = kx <= ky; break;
            case X_GT: r = kx > ky; break;
            default:   r = kx >= ky; break;
            }
        } else if (kx != ky) {
            r = ((kx > ky) == want_max ? x : y) & o->mask;
        } else if ((uint32_t)kx == zero_key && o->sign_shift >= 0) {
            /* two zeros: -0 < +0; the same sign: the first */
            uint32_t sx = (x & o->mask) >> o->sign_shift, sy = (y & o->mask) >> o->sign_shift;
            r = (sx == sy || (want_max ? !sx : sx) ? x : y) & o->mask;
        } else {
            r = x & o->mask;
        }
        if (boolean) *(uint8_t *)out = (uint8_t)r;
        else {
            uint16_t w = (uint16_t)r;
            memcpy(out, &w, 2);
        }
        acc |= fl;
        if (flout) flout[i] = fl;
    }
    return acc;
}
