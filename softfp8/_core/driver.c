/* The one strided array driver (see driver.h): the fast-path families
 * (fast/families.def) in table order, then the exact core element by element. */
#include "driver.h"

#include <string.h>

#include "accum.h"
#include "codes.h"
#include "fast.h"
#include "family.h"

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

/* ---- the families (fast/family.h) ---- */

/* Family k alone on call c (k < 0: the first family of the table that takes c),
 * with the kernel of the current SIMD level; inside a read section of the table
 * cache (fast/cache.c).  Returns the family that ran, with *acc set, or -1. */
static int run_families(int k, sfp8f_call *c, unsigned *acc)
{
    _Alignas(16) unsigned char scratch[SFP8F_SCRATCH];
    const sfp8f_kernel *K;
    int ran = -1, lo = k < 0 ? 0 : k, hi = k < 0 ? SFP8F_NFAMILIES : k + 1;
    unsigned tok;
    if (!sfp8f_enabled()) return -1; /* every family declines */
    K = sfp8f_kernels(sfp8f_simd_level());
    tok = sfp8f_read_begin();
    for (int j = lo; j < hi && ran < 0; j++) {
        const sfp8f_family *F = &sfp8f_families[j];
        const void *t;
        if (!(F->kinds & (unsigned)c->kind) || (F->sr && !c->sr)) continue;
        c->level = K[j].level;
        t = F->prepare(c, scratch);
        if (!t) continue;
        sfp8f_family_count(j, K[j].level);
        *acc = K[j].run(t, c);
        ran = j;
    }
    sfp8f_read_end(tok);
    return ran;
}

/* the call of an operation (sfp8d_run's arguments) */
static sfp8f_call op_call(int op, const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng, char *const data[],
                          const ptrdiff_t strides[], ptrdiff_t n, uint8_t *flout)
{
    const int sz = sfp8d_size(f), arity = sfp8x_arity(op);
    const int osz = sfp8x_bool_result(op) || sfp8x_ops[op].kind == K_RELATION ? 1 : sz;
    /* NumPy passes arity + nout pointers: read only those */
    sfp8f_call c = sfp8f_call1(SFP8F_OP, op, f, f, env, sz, osz, data[0], strides[0], data[arity], strides[arity], n,
                               flout);
    if (arity >= 2) c.b = data[1], c.sb = strides[1];
    if (arity >= 3) c.c = data[2], c.sc = strides[2];
    /* stochastic rounding of an operation that rounds, with generated random bits */
    c.sr = env->rounding == SFP8_ROUND_STOCHASTIC && (sfp8x_ops[op].attrs & A_ENV) && !rng->random;
    c.seed = rng->seed;
    c.stream = rng->stream;
    c.index0 = rng->index;
    return c;
}

/* the call of a conversion (sfp8d_convert's arguments) */
static sfp8f_call convert_call(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                               const sfp8_rng *rng, const char *a, ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n,
                               uint8_t *flout)
{
    sfp8f_call c = sfp8f_call1(SFP8F_CONVERT, -1, src, dst, env, sfp8d_size(src), sfp8d_size(dst), a, sa, o, so, n,
                               flout);
    c.sr = env->rounding == SFP8_ROUND_STOCHASTIC && !rng->random;
    c.seed = rng->seed;
    c.stream = rng->stream;
    c.index0 = rng->index;
    return c;
}

/* the families' run of c (k as run_families); 1 with *acc set (and the generator
   advanced past the elements a stochastic family rounded) if one ran */
static int fast_run(int k, sfp8f_call *c, const sfp8_env *env, sfp8_rng *rng, unsigned *acc)
{
    int ran = run_families(k, c, acc);
    if (ran < 0) return 0;
    if (sfp8f_families[ran].sr) rng_advance(rng, env, c->n);
    return 1;
}

/* ---- exact add reductions: the superaccumulator (accum.c), with the sum8
 *      family's exact integer values where it covers the codes ---- */

/* exact sum of the n codes at b through a family (sum8); 0 if none takes them
   (or a NaN / infinity is among them): sa and fl are then left alone */
static int fast_sum(const sfp8_format *f, const sfp8_env *env, const char *b, ptrdiff_t sb, ptrdiff_t n,
                    SuperAcc *sa, uint8_t *fl)
{
    sfp8f_sum_acc r = {0, 0};
    sfp8f_call c = sfp8f_call1(SFP8F_SUM, -1, f, f, env, sfp8d_size(f), sfp8d_size(f), b, sb, NULL, 0, n, NULL);
    unsigned fls = 0;
    unsigned __int128 mag;
    c.sum = &r;
    if (run_families(-1, &c, &fls) < 0 || (r.cats & SFP8F_SUM_SPECIAL)) return 0;
    *fl |= (uint8_t)fls;
    if (r.cats & SFP8F_SUM_NONZERO) sa->nonzero = 1;
    if (r.cats & SFP8F_SUM_POSZERO) sa->pos_zero = 1;
    if (r.cats & SFP8F_SUM_NEGZERO) sa->neg_zero = 1;
    mag = r.total < 0 ? (unsigned __int128)0 - (unsigned __int128)r.total : (unsigned __int128)r.total;
    if ((uint64_t)mag) acc_add_mag(sa, (uint64_t)mag, 0, r.total < 0);
    if ((uint64_t)(mag >> 64)) acc_add_mag(sa, (uint64_t)(mag >> 64), 64, r.total < 0);
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
    if (n <= 0 || !fast_sum(f, env, b, sb, n, &sa, &fl))
        for (ptrdiff_t i = 0; i < n; i++) acc_add_value(&sa, f, load_code(b + i * sb, sz), &fl);
    *out = acc_round(&sa, f, env, &fl);
    return fl;
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
    if (op == X_ADD && !flout && n > 1 && data[0] == data[2] && sa == 0 && so == 0 && !env->isa) {
        uint32_t r, first = load_code(a, sz);
        if (stoch) e.random = random_bits(rng, 0);
        acc = sum_exact(f, &e, &first, b, sb, n, &r);
        store_code(o, sz, r);
        if (stoch) rng_advance(rng, env, 1);
        return acc;
    }
    /* the fast paths hold softfp8's convention only: an ISA convention runs the core */
    if (!env->isa) {
        sfp8f_call fc = op_call(op, f, env, rng, data, strides, n, flout);
        if (fast_run(-1, &fc, env, rng, &acc)) return acc;
    }

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

unsigned sfp8d_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8_rng *rng,
                       const char *a, ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    int isz = sfp8d_size(src), osz = sfp8d_size(dst);
    int stoch = env->rounding == SFP8_ROUND_STOCHASTIC;
    unsigned acc = 0;
    sfp8_env e = *env;
    if (n <= 0) return 0;
    if (!env->isa) {
        sfp8f_call fc = convert_call(src, dst, env, rng, a, sa, o, so, n, flout);
        if (fast_run(-1, &fc, env, rng, &acc)) return acc;
    }
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

int sfp8d_run_family(int fam, int op, const sfp8_format *f, const sfp8_format *dst, const sfp8_env *env,
                     sfp8_rng *rng, char *const data[], const ptrdiff_t strides[], ptrdiff_t n, uint8_t *flout,
                     unsigned *flags)
{
    sfp8f_call c;
    *flags = 0;
    if (fam < 0 || fam >= SFP8F_NFAMILIES || n <= 0 || (op >= 0 && !sfp8x_codes_only(op))) return 0;
    if (op >= 0) c = op_call(op, f, env, rng, data, strides, n, flout);
    else c = convert_call(f, dst, env, rng, data[0], strides[0], data[1], strides[1], n, flout);
    return fast_run(fam, &c, env, rng, flags);
}

int sfp8d_run_block(sfp8f_call *c, unsigned *flags)
{
    *flags = 0;
    c->kind = SFP8F_BLOCK;
    return c->n > 0 && run_families(-1, c, flags) >= 0;
}
