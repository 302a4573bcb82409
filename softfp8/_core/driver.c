/* The one strided array driver (see driver.h): the fast-path ladder, then the
 * exact core element by element. */
#include "driver.h"

#include <string.h>

#include "accum.h"
#include "codes.h"
#include "fast.h"
#include "cast16.h"

static inline uint32_t random_bits(const sfp8_rng *rng, ptrdiff_t i)
{
    return rng->random ? rng->random[i] : sfp8_random_u32(rng->seed, rng->stream, rng->index + (uint64_t)i);
}

/* after a call that rounded n elements stochastically */
static inline void rng_advance(sfp8_rng *rng, const sfp8_env *env, ptrdiff_t n)
{
    if (env->rounding == SFP8_ROUND_STOCHASTIC && !rng->random) rng->index += (uint64_t)n;
}

static inline unsigned put_flags(uint8_t *flout, ptrdiff_t i, uint8_t fl)
{
    if (flout) flout[i] = fl;
    return fl;
}

/* ---- exact add reductions: the superaccumulator (accum.c), with the
 *      8-bit fast table of exact integer values where it covers the codes ---- */

/* exact sum of 8-bit codes through the fast table; 0 if not covered */
static int fast_sum(const sfp8_format *f, const char *b, ptrdiff_t sb, ptrdiff_t n, SuperAcc *sa, uint8_t *fl)
{
    /* the table builder reads values through binary64: only formats whose values
       are all exact binary64 values */
    const sfp8f_sum *t = acc_binary64_exact(f) ? sfp8f_sum_table(f, n) : NULL;
    __int128 total = 0;
    unsigned cats = 0, fls;
    unsigned __int128 mag;
    if (!t) return 0;
    fls = sfp8f_run_sum(t, b, sb, n, &total, &cats);
    if (cats & SFP8F_SUM_SPECIAL) return 0;
    *fl |= (uint8_t)fls;
    if (cats & SFP8F_SUM_NONZERO) sa->nonzero = 1;
    if (cats & SFP8F_SUM_POSZERO) sa->pos_zero = 1;
    if (cats & SFP8F_SUM_NEGZERO) sa->neg_zero = 1;
    mag = total < 0 ? (unsigned __int128)0 - (unsigned __int128)total : (unsigned __int128)total;
    if ((uint64_t)mag) acc_add_mag(sa, (uint64_t)mag, 0, total < 0);
    if ((uint64_t)(mag >> 64)) acc_add_mag(sa, (uint64_t)(mag >> 64), 64, total < 0);
    return 1;
}

/* (*first if given) + the n codes at b, rounded once; returns the flags */
static unsigned sum_exact(const sfp8_format *f, const sfp8_env *env, const uint32_t *first, const char *b,
                          ptrdiff_t sb, ptrdiff_t n, uint32_t *out)
{
    SuperAcc sa;
    uint8_t fl = 0;
    int sz = sfp8d_size(f);
    acc_init(&sa, f);
    if (first) acc_add_value(&sa, f, *first, &fl);
    /* fast_sum leaves sa and fl alone when it declines */
    int summed = 0;
    if (sz == 1) {
        unsigned tok = sfp8f_read_begin();
        summed = fast_sum(f, b, sb, n, &sa, &fl);
        sfp8f_read_end(tok);
    }
    if (!summed)
        for (ptrdiff_t i = 0; i < n; i++) acc_add_value(&sa, f, load_code(b + i * sb, sz), &fl);
    *out = acc_round(&sa, f, env, &fl);
    return fl;
}

/* The rung of tables and SIMD kernels; returns 1 with *acc set if it ran.
 * Runs inside a read section of the table cache (see fast/cache.c). */
static int fast_run_tables(int op, const sfp8_format *f, const sfp8_env *env, char *const d[], const ptrdiff_t s[],
                    ptrdiff_t n, uint8_t *flout, unsigned *acc)
{
    int sz = sfp8d_size(f), arity = sfp8x_arity(op);
    if (arity == 2) {
        if (sz == 1) {
            const uint16_t *tab = sfp8f_binary8(op, f, env, n);
            if (tab) {
                *acc = sfp8f_run_binary8(tab, d[0], s[0], d[1], s[1], d[2], s[2], n, flout);
                return 1;
            }
        } else if (sfp8f_arith16_op(op)) {
            const sfp8f_a16 *t = sfp8f_arith16(f, env, n);
            if (t) {
                *acc = sfp8f_run_arith16(t, op, f, env, d[0], s[0], d[1], s[1], NULL, 0, d[2], s[2], n, flout);
                return 1;
            }
        } else if (sfp8f_order16_op(op)) {
            const struct sfp8_order *t = sfp8f_order16(op, f, n);
            if (t) {
                *acc = sfp8f_run_order16(t, op, f, d[0], s[0], d[1], s[1], d[2], s[2], n, flout);
                return 1;
            }
        }
        return 0;
    }
    if (arity == 1) {
        const sfp8f_un *tab = sfp8f_unary(op, f, env, n);
        if (!tab) return 0;
        *acc = sfp8f_run_unary(tab, d[0], s[0], sz, d[1], s[1], sfp8x_bool_result(op) ? 1 : sz, n, flout);
        return 1;
    }
    if (op == X_FMA && sz == 1) {
        const sfp8f_fma *t = sfp8f_fma_table(f, env, n);
        if (!t) return 0;
        *acc = sfp8f_run_fma(t, f, env, d[0], s[0], d[1], s[1], d[2], s[2], d[3], s[3], n, flout);
        return 1;
    }
    if (op == X_FMA) {
        const sfp8f_a16 *t = sfp8f_arith16(f, env, n);
        if (!t) return 0;
        *acc = sfp8f_run_arith16(t, op, f, env, d[0], s[0], d[1], s[1], d[2], s[2], d[3], s[3], n, flout);
        return 1;
    }
    return 0;
}

/* the kinds with an int operand or two results (sfp8x_codes_only false):
 * element by element through the exact core */
static unsigned run_ext(int op, const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, char *const data[],
                        const ptrdiff_t strides[], ptrdiff_t n, uint8_t *flout)
{
    int sz = sfp8d_size(f), arity = sfp8x_arity(op), kind = sfp8x_ops[op].kind;
    int stoch = env->rounding == SFP8_ROUND_STOCHASTIC && (sfp8x_ops[op].attrs & A_ENV);
    int two = sfp8x_nout(op) == 2, o2sz = kind == K_UNARY_I32 ? 4 : sz;
    unsigned acc = 0;
    sfp8_env e = *env;
    const char *a = data[0], *b = arity >= 2 ? data[1] : NULL;
    char *o = data[arity], *o2 = two ? data[arity + 1] : NULL;
    ptrdiff_t sa = strides[0], sb = arity >= 2 ? strides[1] : 0;
    ptrdiff_t so = strides[arity], so2 = two ? strides[arity + 1] : 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint8_t fl = 0;
        uint32_t x = load_code(a + i * sa, sz), y = 0, r, r2 = 0;
        int64_t k = 0;
        if (kind == K_BINARY_I64)
            k = (int64_t)load_raw(b + i * sb, 8);
        else if (arity >= 2)
            y = load_code(b + i * sb, sz);
        if (stoch) e.random = random_bits(rng, i);
        r = sfp8x_apply_ext(op, f, x, y, 0, k, &e, &fl, &r2);
        if (kind == K_UNARY_I64) store_raw(o + i * so, 8, ((uint64_t)r2 << 32) | r); /* ops.h sfp8x_split64 */
        else store_code(o + i * so, sz, r);
        if (two) store_raw(o2 + i * so2, o2sz, r2);
        acc |= put_flags(flout, i, fl);
    }
    if (stoch) rng_advance(rng, env, n);
    return acc;
}

/* add / subtract / multiply / divide / fma of 8- and 16-bit formats and unary
 * operations of 8-bit ones under stochastic rounding with generated random
 * bits (fast.h, sfp8f_run_arith_sr, sfp8f_run_conv_sr); returns 1 with *acc set
 * (and the generator advanced) if it ran */
static int fast_sr_arith8(int op, const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, char *const d[],
                          const ptrdiff_t s[], ptrdiff_t n, uint8_t *flout, unsigned *acc)
{
    int ran = 0;
    const void *t;
    unsigned tok;
    if (rng->random) return 0;
    tok = sfp8f_read_begin();
    if (X_IS_UNARY(op)) { /* 8-bit unary operations: a table per source code; 16-bit sqrt */
        const sfp8f_sr8 *u = f->bits <= 8 ? sfp8f_stochastic_unary(op, f, env, n) : NULL;
        const sfp8f_sr16 *u16 = f->bits > 8 && op == X_SQRT ? sfp8f_stochastic16(op, f, env, n) : NULL;
        const sfp8f_srw *w = f->bits > 8 && !u16 ? sfp8f_stochastic_wide_unary(op, f, env, n) : NULL;
        if (u) {
            *acc = sfp8f_run_conv_sr(u, op, f, f, env, rng->seed, rng->stream, rng->index, d[0], s[0], d[1], s[1], n,
                                     flout);
            ran = 1;
        } else if (u16) { /* the operand twice: the kernels read y and ignore it */
            *acc = sfp8f_run_arith_sr(u16, op, f, env, rng->seed, rng->stream, rng->index, d[0], s[0], d[0], s[0],
                                      d[1], s[1], n, flout);
            ran = 1;
        } else if (w) {
            *acc = sfp8f_run_wide_sr(w, op, f, f, env, rng->seed, rng->stream, rng->index, d[0], s[0], d[1], s[1], n,
                                     flout);
            ran = 1;
        }
        sfp8f_read_end(tok);
        if (ran) rng_advance(rng, env, n);
        return ran;
    }
    if (op == X_FMA) {
        const sfp8f_sr16 *t3 = sfp8f_stochastic_fma(f, env, n);
        if (t3) {
            *acc = sfp8f_run_fma_sr(t3, f, env, rng->seed, rng->stream, rng->index, d[0], s[0], d[1], s[1], d[2],
                                    s[2], d[3], s[3], n, flout);
            ran = 1;
        }
        sfp8f_read_end(tok);
        if (ran) rng_advance(rng, env, n);
        return ran;
    }
    t = f->bits <= 8 ? (const void *)sfp8f_stochastic8(op, f, env, n) : (const void *)sfp8f_stochastic16(op, f, env, n);
    if (t) {
        *acc = sfp8f_run_arith_sr(t, op, f, env, rng->seed, rng->stream, rng->index, d[0], s[0], d[1], s[1], d[2], s[2],
                                  n, flout);
        ran = 1;
    }
    sfp8f_read_end(tok);
    if (ran) rng_advance(rng, env, n);
    return ran;
}

static int fast_run(int op, const sfp8_format *f, const sfp8_env *env, char *const d[], const ptrdiff_t s[],
                    ptrdiff_t n, uint8_t *flout, unsigned *acc)
{
    unsigned tok = sfp8f_read_begin();
    int ran = fast_run_tables(op, f, env, d, s, n, flout, acc);
    sfp8f_read_end(tok);
    return ran;
}

unsigned sfp8d_run(int op, const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, char *const data[],
                   const ptrdiff_t strides[], ptrdiff_t n, uint8_t *flout)
{
    int sz = sfp8d_size(f), arity = sfp8x_arity(op);
    int stoch = env->rounding == SFP8_ROUND_STOCHASTIC && (sfp8x_ops[op].attrs & A_ENV);
    int osz = sfp8x_bool_result(op) || sfp8x_ops[op].kind == K_RELATION ? 1 : sz;
    unsigned acc = 0;
    sfp8_env e = *env;
    /* NumPy passes arity + nout pointers: read only those */
    const char *a = data[0], *b = arity >= 2 ? data[1] : NULL, *c = arity >= 3 ? data[2] : NULL;
    char *o = data[arity];
    ptrdiff_t sa = strides[0], sb = arity >= 2 ? strides[1] : 0, sc = arity >= 3 ? strides[2] : 0;
    ptrdiff_t so = strides[arity];
    if (n <= 0) return 0;
    if (!sfp8x_codes_only(op)) return run_ext(op, f, env, rng, data, strides, n, flout);

    /* NumPy's reduction of add: exact, one rounding */
    if (op == X_ADD && !flout && n > 1 && data[0] == data[2] && sa == 0 && so == 0) {
        uint32_t r, first = load_code(a, sz);
        if (stoch) e.random = random_bits(rng, 0);
        acc = sum_exact(f, &e, &first, b, sb, n, &r);
        store_code(o, sz, r);
        if (stoch) rng_advance(rng, env, 1);
        return acc;
    }
    if (stoch && fast_sr_arith8(op, f, env, rng, data, strides, n, flout, &acc)) return acc;
    if (fast_run(op, f, env, data, strides, n, flout, &acc)) return acc;

    /* the exact core, element by element, in order */
    for (ptrdiff_t i = 0; i < n; i++) {
        uint8_t fl = 0;
        uint32_t x = load_code(a + i * sa, sz);
        uint32_t y = arity >= 2 ? load_code(b + i * sb, sz) : 0;
        uint32_t z = arity >= 3 ? load_code(c + i * sc, sz) : 0;
        uint32_t r;
        if (stoch) e.random = random_bits(rng, i);
        r = sfp8x_apply(op, f, x, y, z, &e, &fl);
        store_code(o + i * so, osz, r);
        acc |= put_flags(flout, i, fl);
    }
    if (stoch) rng_advance(rng, env, n);
    return acc;
}

unsigned sfp8d_sum(const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, const char *a, ptrdiff_t sa,
                   ptrdiff_t n, uint32_t *out)
{
    sfp8_env e = *env;
    if (n <= 0) {
        *out = sfp8x_small_int(f, 0);
        return 0;
    }
    if (env->rounding == SFP8_ROUND_STOCHASTIC) {
        e.random = random_bits(rng, 0);
        rng_advance(rng, env, 1); /* one rounding: one random word */
    }
    return sum_exact(f, &e, NULL, a, sa, n, out);
}

/* The conversion tables' rung (inside a read section of the table cache);
 * returns 1 with *acc set if it ran. */
static int convert_fast(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8_rng *rng,
                        const char *a, ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout,
                        unsigned *acc)
{
    int isz = sfp8d_size(src), osz = sfp8d_size(dst), ran = 0;
    unsigned tok = sfp8f_read_begin();
    if (src->bits <= 16) {
        const sfp8f_conv *c;
        const sfp8f_sr8 *t;
        const sfp8f_srw *w;
        if (env->rounding == SFP8_ROUND_STOCHASTIC && !rng->random && (t = sfp8f_stochastic_conv(src, dst, env, n))) {
            *acc = sfp8f_run_conv_sr(t, -1, src, dst, env, rng->seed, rng->stream, rng->index, a, sa, o, so, n,
                                     flout);
            rng_advance(rng, env, n);
            ran = 1;
        } else if (env->rounding == SFP8_ROUND_STOCHASTIC && !rng->random &&
                   (w = sfp8f_stochastic_wide(src, dst, env, n))) {
            *acc = sfp8f_run_wide_sr(w, -1, src, dst, env, rng->seed, rng->stream, rng->index, a, sa, o, so, n,
                                     flout);
            rng_advance(rng, env, n);
            ran = 1;
        } else if ((c = sfp8f_convert(src, dst, env, n))) {
            *acc = sfp8f_run_convert(c, a, sa, isz, o, so, osz, n, flout);
            ran = 1;
        }
    } else if ((src->bits == 32 || src->bits == 64) && dst->bits <= 8) {
        const sfp8f_sr *t = NULL;
        const uint16_t *tab = NULL;
        if (env->rounding == SFP8_ROUND_STOCHASTIC && !rng->random && (t = sfp8f_stochastic(dst, env, n))) {
            *acc = sfp8f_run_from_float_sr(t, dst, env, rng->seed, rng->stream, rng->index, a, sa, isz, o, so, n,
                                           flout);
            rng_advance(rng, env, n);
            ran = 1;
        } else if ((tab = sfp8f_from_float(dst, env, n))) {
            *acc = sfp8f_run_from_float(tab, a, sa, isz, o, so, n, flout);
            ran = 1;
        }
    } else if (src->bits == 32 || src->bits == 64) { /* into 9..16 bits (fast/cast16.c) */
        sfp8f_c16 c16;
        if (env->rounding == SFP8_ROUND_STOCHASTIC) {
            if (!rng->random && sfp8f_cast16_sr(src, dst, env, &c16)) {
                *acc = sfp8f_run_cast16_sr(&c16, rng->seed, rng->stream, rng->index, a, sa, isz, o, so, n, flout);
                rng_advance(rng, env, n);
                ran = 1;
            }
        } else if (sfp8f_cast16(src, dst, env, &c16)) {
            *acc = sfp8f_run_cast16(&c16, a, sa, isz, o, so, n, flout);
            ran = 1;
        }
    }
    sfp8f_read_end(tok);
    return ran;
}

unsigned sfp8d_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8_rng *rng,
                       const char *a, ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    int isz = sfp8d_size(src), osz = sfp8d_size(dst);
    int stoch = env->rounding == SFP8_ROUND_STOCHASTIC;
    unsigned acc = 0;
    sfp8_env e = *env;
    if (n <= 0) return 0;
    if (convert_fast(src, dst, env, rng, a, sa, o, so, n, flout, &acc)) return acc;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint8_t fl = 0;
        if (stoch) e.random = random_bits(rng, i);
        store_raw(o + i * so, osz, sfp8_convert(src, dst, load_raw(a + i * sa, isz), &e, &fl));
        acc |= put_flags(flout, i, fl);
    }
    if (stoch) rng_advance(rng, env, n);
    return acc;
}

/* codes -> int64 (to != 0) or int64 -> codes, element by element */
static unsigned int64_loop(int to, const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, const char *a,
                           ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    int sz = sfp8d_size(f), stoch = env->rounding == SFP8_ROUND_STOCHASTIC;
    unsigned acc = 0;
    sfp8_env e = *env;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint8_t fl = 0;
        if (stoch) e.random = random_bits(rng, i);
        if (to)
            store_raw(o + i * so, 8, (uint64_t)sfp8_to_int64(f, load_code(a + i * sa, sz), &e, &fl));
        else
            store_code(o + i * so, sz, sfp8_from_int64(f, (int64_t)load_raw(a + i * sa, 8), &e, &fl));
        acc |= put_flags(flout, i, fl);
    }
    if (stoch) rng_advance(rng, env, n);
    return acc;
}

unsigned sfp8d_to_int64(const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, const char *a, ptrdiff_t sa,
                        char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    return int64_loop(1, f, env, rng, a, sa, o, so, n, flout);
}

unsigned sfp8d_from_int64(const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, const char *a,
                          ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    return int64_loop(0, f, env, rng, a, sa, o, so, n, flout);
}
