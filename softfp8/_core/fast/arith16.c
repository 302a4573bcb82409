/* arith16: add / subtract / multiply / divide / fma of 9..16-bit formats with
 * at most 8 exponent bits (float16, bfloat16, hfp16_169, custom formats).
 *
 * DERIVED from core.c round_pack: operands decoded to binary64 (the convert
 * family's table), the exact result (rounded to odd at 53 bits where a sum is
 * not exact: fast.h, sfp8f_odd_sum; the quotient correctly rounded), then the
 * rounder (round64.h, round_f64: round_pack specialised to a binary64 source).
 * NaN / infinity operands, division by zero and exact zero quotients / fma
 * results take the core.  Proven equal by
 * tests/harness/test_harness.py::test_entry [arith16], ::test_16bit_arith_configs,
 * ::test_matmul_paths, and under every calling convention by
 * tests/harness/test_harness.py::test_entry [arith16].
 *
 * The 16-bit scalar loop reads element i's operands before writing output i,
 * so it is correct for any overlap (fast.h); the SIMD kernels (below)
 * cover the common lanes of contiguous, non-overlapping calls, block by
 * block, and leave every other block to that loop.
 *
 * Divide: a binary64 quotient of two values of at most p = 17 significant
 * bits is correctly rounded to 53 bits and lies on the same side of every
 * point and midpoint of a p-bit grid as the exact quotient, and equals one
 * only if the exact quotient does (2p + 1 <= 53; the proof is in
 * docs/performance.md), so rounding it once more gives the core's result and
 * flags.  fma: the product is exact in binary64, the sum is rounded to odd
 * (TwoSum), as for add.
 *
 * Kernels: portable C (element by element in order, one copy per rounding
 * mode); AVX2 (four binary64 lanes; eight binary32 lanes for the formats of
 * a16_f32_ok) and AVX-512 (eight binary64 lanes; sixteen binary32 lanes for
 * those formats), the operands decoded by arithmetic (arith16.h) or gathered
 * from vf.  Formats sfp8f_rounder does not cover (Tesla or flushed subnormals,
 * no sign bit: SHP, UHP) run only where a SIMD kernel exists: their normal
 * range, every other block by the core. */
#include <stdlib.h>
#include <string.h>

#include "arith16.h"
#include "fast_impl.h"
#include "ops.h"
#include "round64.h"

static int arith16_ok(const sfp8_format *f)
{
    /* products and sums of two values stay normal binary64 numbers */
    return f->bits > 8 && f->bits <= 16 && f->exp_bits <= 8 && f->bias >= -100 && f->bias <= 300;
}

/* Formats sfp8f_rounder does not cover (Tesla or flushed subnormals, no sign
 * bit: SHP, UHP) but whose normal range rounds as any IEEE-like format's: the
 * SIMD kernels take their covered lanes (normal operands and results, below
 * overflow, non-negative results for unsigned formats), every other block
 * takes the core.  Deterministic modes, and not FNUZ. */
static int simd_only_ok(const sfp8_format *f, const sfp8_env *env)
{
    return arith16_ok(f) && sfp8f_usable_env(env) && f->specials != SFP8_SPECIALS_FNUZ && f->specials != SFP8_SPECIALS_P3109 && f->man_bits >= 1 &&
           f->exp_bits >= 2;
}

static void *build_a16(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    const sfp8f_conv *dec;
    sfp8f_a16 *t;
    uint64_t *vf;
    sfp8f_key_env(k, &env);
    /* decoding is exact; IEEE overflow keeps infinite operands infinite (a
     * saturating environment would turn them into the largest binary64) */
    dec = sfp8f_cached_nested(T_CONV, 0, &k->a, &sfp8_binary64, &sfp8f_free_env, sfp8f_build_conv);
    if (!dec) return NULL;
    /* one block: the header, then the SIMD kernels' decoding (arith16.h, sfp8s_a16) */
    t = calloc(1, sizeof *t + (size_t)dec->n * sizeof *vf);
    if (!t) return NULL;
    t->dec = dec;
    if (!sfp8f_rounder(&k->a, &env, &t->r)) {
        if (!simd_only_ok(&k->a, &env)) {
            free(t);
            return NULL;
        }
        t->core_only = 1; /* the normal-range parameters the SIMD kernels read */
        t->r.M = k->a.man_bits;
        t->r.emin = 1 - k->a.bias;
        t->r.rounding = env.rounding;
        t->r.maxmag = sfp8_max_code(&k->a);
        t->r.signbit = k->a.is_signed ? (uint32_t)1 << (k->a.bits - 1) : 0;
    }
    vf = (uint64_t *)(void *)(t + 1);
    t->vf = vf;
    for (int c = 0; c < dec->n; c++) {
        uint64_t v = dec->val[c];
        if (((v >> 52) & 0x7ff) == 0x7ff) {
            vf[c] = 0x7ff0000000000000ULL | 0x80;
        } else if ((v & 0xff) == 0 && dec->fl[c] < 0x80) {
            vf[c] = v | dec->fl[c];
        } else {
            t->vf = NULL; /* not these formats: the portable loop only */
            break;
        }
    }
    /* the arithmetic decoding of the SIMD kernels (arith16.h, sfp8s_a16),
       used only if it gives vf for every code it covers */
    if (t->vf && k->a.man_bits <= 23 && k->a.exp_bits >= 2) {
        const int M = k->a.man_bits, bits = k->a.bits;
        const uint64_t magmask = ((uint64_t)1 << (bits - k->a.is_signed)) - 1;
        const uint64_t emax = ((uint64_t)1 << k->a.exp_bits) - 1;
        t->off = (uint64_t)(1023 - k->a.bias) << 52;
        t->emax_field = (int)emax;
        t->arith = 1;
        for (int c = 0; c < dec->n && t->arith; c++) {
            uint64_t mag = (uint64_t)c & magmask, e = mag >> M;
            uint64_t v = (mag ? (mag << (52 - M)) + t->off : 0) | (uint64_t)(c & t->r.signbit) << (64 - bits);
            if (e == emax || (e == 0 && mag)) continue; /* uncovered lanes */
            t->arith = vf[c] == v;
        }
    }
    if (t->arith) { /* the kernels compute vf: release it */
        sfp8f_a16 *small = realloc(t, sizeof *t);
        if (small) t = small;
        t->vf = NULL;
        *bytes = sizeof *t;
        return t;
    }
    *bytes = sizeof *t + (size_t)dec->n * sizeof *vf;
    return t;
}

const sfp8f_a16 *sfp8f_arith16_table(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n, int simd)
{
    sfp8f_rnd r;
    /* formats the rounder does not cover: only with a SIMD kernel (simd_only_ok) */
    if (!sfp8f_enabled() || !arith16_ok(f) || (!sfp8f_rounder(f, env, &r) && !(simd && simd_only_ok(f, env))))
        return NULL;
    return sfp8f_cached(T_A16, 0, f, NULL, env, build_a16, n, 65536);
}

static int arith16_op(int op) { return op == X_ADD || op == X_SUB || op == X_MUL || op == X_DIV || op == X_FMA; }

const void *sfp8f_arith16_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (c->f->bits <= 8 || !arith16_op(c->op)) return NULL;
    return sfp8f_arith16_table(c->f, c->env, c->n, c->level);
}

static inline AINL unsigned arith16_loop(
    int MODE, int op, const sfp8f_rnd *pp, const uint64_t *dv, const uint8_t *dfl, int dn, const sfp8_format *f,
    const sfp8_env *env, const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c, ptrdiff_t sc,
    char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    const sfp8f_rnd p = *pp;
    unsigned acc = 0;
    const uint64_t flip = op == X_SUB ? 1ULL << 63 : 0;
    const uint32_t mask = (uint32_t)dn - 1; /* codes are masked to the width */
    for (ptrdiff_t i = 0; i < n; i++, a += sa, b += sb, c += sc, o += so) {
        uint32_t x = sfp8f_ld16(a) & mask, y = sfp8f_ld16(b) & mask, z = op == X_FMA ? sfp8f_ld16(c) & mask : 0, r;
        uint64_t bx = dv[x], by = dv[y] ^ flip, bz = dv[z];
        double vx, vy, vz, s;
        unsigned fl = dfl[x] | dfl[y] | (op == X_FMA ? dfl[z] : 0);
        if (__builtin_expect(((bx >> 52) & 0x7ff) == 0x7ff || ((by >> 52) & 0x7ff) == 0x7ff ||
                                 (op == X_FMA && ((bz >> 52) & 0x7ff) == 0x7ff) || (op == X_DIV && !(by << 1)),
                             0)) {
            uint8_t f8 = 0; /* NaN / infinity operands, division by zero: the core */
            r = sfp8x_apply(op, f, x, y, z, env, &f8);
            fl = f8;
        } else {
            uint64_t bits;
            memcpy(&vx, &bx, 8);
            memcpy(&vy, &by, 8);
            memcpy(&vz, &bz, 8);
            if (op == X_MUL) {
                s = vx * vy; /* exact: at most 2 x 17 significant bits */
                bits = sfp8f_dbits(s);
            } else if (op == X_DIV) {
                s = vx / vy; /* correctly rounded, decisive (above) */
                bits = sfp8f_dbits(s);
            } else if (op == X_FMA) {
                bits = sfp8f_odd_sum(vx * vy, vz, &s);
            } else {
                bits = sfp8f_odd_sum(vx, vy, &s);
            }
            if (__builtin_expect(s == 0, 0) && (op == X_FMA || op == X_DIV)) {
                uint8_t f8 = 0; /* exact zeros of fma and divide: the core */
                r = sfp8x_apply(op, f, x, y, z, env, &f8);
                fl = f8;
            } else if (__builtin_expect(s == 0, 0)) {
                int sign;
                if (op == X_MUL) sign = (int)((bx ^ by) >> 63);
                else if (MODE == SFP8_ROUND_DOWNWARD) sign = (int)((bx | by) >> 63);
                else sign = (int)((bx & by) >> 63);
                r = sign ? p.signbit : 0;
            } else {
                r = round_f64(MODE, &p, bits, &fl);
            }
        }
        {
            uint16_t v16 = (uint16_t)r;
            memcpy(o, &v16, 2);
        }
        acc |= fl;
        if (flout) flout[i] = (uint8_t)fl;
    }
    return acc;
}

#define ARITH16_MODES(op)                                                                                      \
    switch (p.rounding) {                                                                                      \
    case SFP8_ROUND_NEAREST_EVEN:                                                                              \
        return arith16_loop(SFP8_ROUND_NEAREST_EVEN, op, &p, dv, dfl, dn, f, env, a, sa, b, sb, c, sc, o, so, n, flout);  \
    case SFP8_ROUND_NEAREST_AWAY:                                                                              \
        return arith16_loop(SFP8_ROUND_NEAREST_AWAY, op, &p, dv, dfl, dn, f, env, a, sa, b, sb, c, sc, o, so, n, flout);  \
    case SFP8_ROUND_TOWARD_ZERO:                                                                               \
        return arith16_loop(SFP8_ROUND_TOWARD_ZERO, op, &p, dv, dfl, dn, f, env, a, sa, b, sb, c, sc, o, so, n, flout);   \
    case SFP8_ROUND_UPWARD:                                                                                    \
        return arith16_loop(SFP8_ROUND_UPWARD, op, &p, dv, dfl, dn, f, env, a, sa, b, sb, c, sc, o, so, n, flout);        \
    case SFP8_ROUND_DOWNWARD:                                                                                  \
        return arith16_loop(SFP8_ROUND_DOWNWARD, op, &p, dv, dfl, dn, f, env, a, sa, b, sb, c, sc, o, so, n, flout);      \
    default:                                                                                                   \
        return arith16_loop(SFP8_ROUND_TO_ODD, op, &p, dv, dfl, dn, f, env, a, sa, b, sb, c, sc, o, so, n, flout);        \
    }

static unsigned arith16_scalar(const sfp8f_a16 *t, int op, const sfp8_format *f, const sfp8_env *env,
                               const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c,
                               ptrdiff_t sc, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    const uint64_t *dv = t->dec->val;
    const uint8_t *dfl = t->dec->fl;
    const int dn = t->dec->n;
    const sfp8f_rnd p = t->r;
    if (!c) c = a, sc = 0; /* binary operations: never read */
    if (t->core_only) { /* in order, element by element, as the driver's core loop */
        unsigned acc = 0;
        const uint32_t mask = (uint32_t)dn - 1;
        for (ptrdiff_t i = 0; i < n; i++, a += sa, b += sb, c += sc, o += so) {
            uint8_t f8 = 0;
            uint32_t x = sfp8f_ld16(a) & mask, y = sfp8f_ld16(b) & mask, z = op == X_FMA ? sfp8f_ld16(c) & mask : 0;
            uint16_t r = (uint16_t)sfp8x_apply(op, f, x, y, z, env, &f8);
            memcpy(o, &r, 2);
            acc |= f8;
            if (flout) flout[i] = f8;
        }
        return acc;
    }
    switch (op) {
    case X_MUL: ARITH16_MODES(X_MUL)
    case X_SUB: ARITH16_MODES(X_SUB)
    case X_DIV: ARITH16_MODES(X_DIV)
    case X_FMA: ARITH16_MODES(X_FMA)
    default: ARITH16_MODES(X_ADD)
    }
}

/* 1 if the binary64 sum of any two finite values of f is exact: every value is
 * an integer multiple of 2^qmin (qmin = -bias - M - 1 covers Tesla subnormals)
 * of magnitude below 2^(emax + 1), emax = 2^E - 1 - bias (even if that exponent
 * field is special), so a sum is a multiple of 2^qmin below 2^(emax + 2): at
 * most emax + 2 - qmin <= 53 significant bits. */
static int exact_sum(const sfp8_format *f)
{
    int emax = (1 << f->exp_bits) - 1 - f->bias, qmin = -f->bias - f->man_bits - 1;
    return emax + 2 - qmin <= 53;
}

/* 1 binary16, 2 bfloat16 (the SIMD kernels' conversions through binary32, which
 * give the arithmetic decoding's values for every code it covers) */
static int hw_decode(const sfp8_format *f)
{
    if (f->bits != 16 || !f->is_signed || f->specials != SFP8_SPECIALS_IEEE || f->subnormals != SFP8_SUBNORMALS_IEEE)
        return 0;
    if (f->exp_bits == 5 && f->man_bits == 10 && f->bias == 15) return 1;
    if (f->exp_bits == 8 && f->man_bits == 7 && f->bias == 127) return 2;
    return 0;
}

sfp8s_a16 sfp8f_a16_params(const sfp8f_a16 *t, const sfp8_format *f)
{
    const sfp8s_a16 sp = {t->vf, (uint64_t)t->dec->n - 1, t->r.maxmag, t->r.signbit,
                          t->r.M, t->r.emin + 1023, t->r.rounding, t->arith, 64 - f->bits,
                          ((uint64_t)1 << (f->bits - f->is_signed)) - 1, t->off, (uint64_t)t->emax_field,
                          exact_sum(f), t->arith ? hw_decode(f) : 0};
    return sp;
}

/* the SIMD kernel of one level: whole blocks from the start, stopping before the
   first block with a lane it does not cover; the count done */
typedef ptrdiff_t (*a16_block)(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b, const uint16_t *c,
                               uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc);

static inline AINL unsigned arith16_run(const sfp8f_a16 *t, const sfp8f_call *call, a16_block block)
{
    const int op = call->op, fma = op == X_FMA;
    const sfp8_format *f = call->f;
    const sfp8_env *env = call->env;
    const char *a = call->a, *b = call->b, *c = fma ? call->c : NULL;
    char *o = call->o;
    const ptrdiff_t sa = call->sa, sb = call->sb, sc = fma ? call->sc : 0, so = call->so, n = call->n;
    uint8_t *const flout = call->flout;
    if (block && (t->arith || (t->vf && !t->core_only)) && sa == 2 && sb == 2 && so == 2 && (!fma || sc == 2) &&
        sfp8f_apart(o, 2, 2, a, 2, 2, n) && sfp8f_apart(o, 2, 2, b, 2, 2, n) &&
        (!fma || sfp8f_apart(o, 2, 2, c, 2, 2, n))) {
        /* SIMD blocks until one has a lane they do not cover, that block by the
           portable loop, and on */
        const int sop = op == X_SUB ? SFP8S_SUB : op == X_MUL ? SFP8S_MUL : op == X_DIV ? SFP8S_DIV
                      : fma ? SFP8S_FMA : SFP8S_ADD;
        const sfp8s_a16 sp = sfp8f_a16_params(t, f);
        unsigned acc = 0;
        ptrdiff_t i = 0;
        while (i < n) {
            ptrdiff_t e;
            const uint16_t *a16 = (const uint16_t *)(const void *)(a + 2 * i);
            const uint16_t *b16 = (const uint16_t *)(const void *)(b + 2 * i);
            const uint16_t *c16 = fma ? (const uint16_t *)(const void *)(c + 2 * i) : NULL;
            uint16_t *o16 = (uint16_t *)(void *)(o + 2 * i);
            i += block(&sp, sop, a16, b16, c16, o16, n - i, flout ? flout + i : NULL, &acc);
            e = n - i < 8 ? n : i + 8;
            acc |= arith16_scalar(t, op, f, env, a + 2 * i, 2, b + 2 * i, 2, fma ? c + 2 * i : NULL, 2,
                                  o + 2 * i, 2, e - i, flout ? flout + i : NULL);
            i = e;
        }
        return acc;
    }
    return arith16_scalar(t, op, f, env, a, sa, b, sb, c, sc, o, so, n, flout);
}

unsigned sfp8f_arith16_run(const void *t, const sfp8f_call *c) { return arith16_run(t, c, NULL); }

#if SFP8_X86

/* ---- 16-bit arithmetic (arith16.h): the lanes of round64.h's
 *      round_f64 whose result is normal and below overflow, where the
 *      rounding needs no tininess decision: sh = 52 - M, code = (E - emin) << M
 *      + K + increment, inexact iff the dropped bits are not zero. ---- */

#define A16_DISPATCH(KERNEL)                                                                                 \
    switch (op * 8 + p->rounding) {                                                                          \
    A16_CASES(KERNEL, SFP8S_ADD)                                                                             \
    A16_CASES(KERNEL, SFP8S_SUB)                                                                             \
    A16_CASES(KERNEL, SFP8S_MUL)                                                                             \
    A16_CASES(KERNEL, SFP8S_DIV)                                                                             \
    A16_CASES(KERNEL, SFP8S_FMA)                                                                             \
    default: return 0;                                                                                       \
    }
#define A16_CASE(KERNEL, OP, MODE)                                                                           \
    case OP * 8 + MODE: return KERNEL(OP, MODE, p, a, b, c, o, n, flo, acc);
#define A16_CASES(KERNEL, OP)                                                                                \
    A16_CASE(KERNEL, OP, SFP8_ROUND_NEAREST_EVEN)                                                            \
    A16_CASE(KERNEL, OP, SFP8_ROUND_NEAREST_AWAY)                                                            \
    A16_CASE(KERNEL, OP, SFP8_ROUND_TOWARD_ZERO)                                                             \
    A16_CASE(KERNEL, OP, SFP8_ROUND_UPWARD)                                                                  \
    A16_CASE(KERNEL, OP, SFP8_ROUND_DOWNWARD)                                                                \
    A16_CASE(KERNEL, OP, SFP8_ROUND_TO_ODD)

/* ---- AVX2: four binary64 lanes, masks as vectors ---- */

SFP8_AVX2 static inline AINL int far256(const sfp8s_a16 *p, __m256i bx, __m256i by) /* as far512 */
{
    const __m256i e11 = _mm256_set1_epi64x(0x7ff), lim = _mm256_set1_epi64x(51 - p->M), zero = _mm256_setzero_si256();
    __m256i ex = _mm256_and_si256(_mm256_srli_epi64(bx, 52), e11), ey = _mm256_and_si256(_mm256_srli_epi64(by, 52), e11);
    __m256i t = _mm256_add_epi64(_mm256_sub_epi64(ex, ey), lim);
    __m256i far = _mm256_or_si256(_mm256_cmpgt_epi64(t, _mm256_add_epi64(lim, lim)), _mm256_cmpgt_epi64(zero, t));
    far = _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpeq_epi64(ex, zero), _mm256_cmpeq_epi64(ey, zero)), far);
    return _mm256_movemask_pd(_mm256_castsi256_pd(far)) != 0;
}

SFP8_AVX2 static inline AINL ptrdiff_t a16_256(int OP, int MODE, const sfp8s_a16 *p, const uint16_t *a,
                                          const uint16_t *b, const uint16_t *c, uint16_t *o, ptrdiff_t n,
                                          uint8_t *flo, unsigned *acc)
{
    const __m128i msk = _mm_set1_epi32((int)p->mask);
    const __m256i lowb = _mm256_set1_epi64x(0xff), slowb = _mm256_set1_epi64x(0x80), one = _mm256_set1_epi64x(1);
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi64x(-1);
    const __m256i m52 = _mm256_set1_epi64x(0xFFFFFFFFFFFFFLL), hid = _mm256_set1_epi64x(1LL << 52);
    const __m256i mag = _mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL), sgn = _mm256_set1_epi64x((long long)(1ULL << 63));
    const __m128i shc = _mm_cvtsi32_si128(52 - p->M), mc = _mm_cvtsi32_si128(p->M);
    const __m256i rmask = _mm256_set1_epi64x((1LL << (52 - p->M)) - 1);
    const __m256i half = _mm256_set1_epi64x(1LL << (51 - p->M));
    const __m256i maxmag = _mm256_set1_epi64x((long long)p->maxmag);
    const __m256i ebase = _mm256_set1_epi64x(p->ebase), signb = _mm256_set1_epi64x((long long)p->signbit);
    __m256i facc = zero, inex = zero;
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i bx = a16_load256(p, a + i, msk), by = a16_load256(p, b + i, msk), bz = bx;
        __m256i fl = _mm256_or_si256(bx, by), bits, slow;
        __m256d vx = _mm256_castsi256_pd(_mm256_andnot_si256(lowb, bx));
        __m256d vy = _mm256_castsi256_pd(_mm256_andnot_si256(lowb, by));
        if (OP == SFP8S_FMA) {
            bz = a16_load256(p, c + i, msk);
            fl = _mm256_or_si256(fl, bz);
        }
        slow = nz256(fl, slowb);
        if (OP == SFP8S_SUB) vy = _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(vy), sgn));
        if (OP == SFP8S_MUL) {
            bits = _mm256_castpd_si256(_mm256_mul_pd(vx, vy));
        } else if (OP == SFP8S_DIV) {
            bits = _mm256_castpd_si256(_mm256_div_pd(vx, vy));
            slow = _mm256_or_si256(slow, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_andnot_si256(lowb, by), mag),
                                                            zero));
        } else if (OP != SFP8S_FMA && (p->exact_sum || !far256(p, bx, by))) {
            bits = _mm256_castpd_si256(_mm256_add_pd(vx, vy)); /* exact */
        } else {
            __m256d pp = OP == SFP8S_FMA ? _mm256_mul_pd(vx, vy) : vx;
            __m256d qq = OP == SFP8S_FMA ? _mm256_castsi256_pd(_mm256_andnot_si256(lowb, bz)) : vy;
            __m256d s = _mm256_add_pd(pp, qq), bb = _mm256_sub_pd(s, pp);
            __m256d err = _mm256_add_pd(_mm256_sub_pd(pp, _mm256_sub_pd(s, bb)), _mm256_sub_pd(qq, bb));
            __m256i eb = _mm256_castpd_si256(err), move, same;
            bits = _mm256_castpd_si256(s);
            move = _mm256_and_si256(nz256(eb, mag), _mm256_cmpeq_epi64(_mm256_and_si256(bits, one), zero));
            same = _mm256_cmpgt_epi64(_mm256_xor_si256(eb, bits), ones); /* sign bits equal */
            bits = _mm256_sub_epi64(bits, _mm256_and_si256(move, same));    /* +1 */
            bits = _mm256_add_epi64(bits, _mm256_andnot_si256(same, move)); /* -1 */
        }
        {
            __m256i e = _mm256_and_si256(_mm256_srli_epi64(bits, 52), _mm256_set1_epi64x(0x7ff));
            __m256i neg = _mm256_cmpgt_epi64(zero, bits), rnz, inc;
            __m256i sig = _mm256_or_si256(_mm256_and_si256(bits, m52), hid);
            __m256i K = _mm256_srl_epi64(sig, shc), rem = _mm256_and_si256(sig, rmask), code;
            slow = _mm256_or_si256(slow, _mm256_cmpgt_epi64(ebase, e));
            rnz = nz256(rem, ones);
            switch (MODE) {
            case SFP8_ROUND_NEAREST_EVEN:
                inc = _mm256_or_si256(_mm256_cmpgt_epi64(rem, half),
                                      _mm256_and_si256(_mm256_cmpeq_epi64(rem, half), nz256(K, one)));
                break;
            case SFP8_ROUND_NEAREST_AWAY: inc = _mm256_cmpgt_epi64(rem, _mm256_sub_epi64(half, one)); break;
            case SFP8_ROUND_UPWARD: inc = _mm256_andnot_si256(neg, rnz); break;
            case SFP8_ROUND_DOWNWARD: inc = _mm256_and_si256(neg, rnz); break;
            case SFP8_ROUND_TO_ODD: K = _mm256_or_si256(K, _mm256_and_si256(rnz, one)); inc = zero; break;
            default: inc = zero; break;
            }
            code = _mm256_add_epi64(_mm256_sll_epi64(_mm256_sub_epi64(e, ebase), mc), K);
            code = _mm256_sub_epi64(code, inc);
            slow = _mm256_or_si256(slow, _mm256_cmpgt_epi64(code, maxmag));
            if (!p->signbit) slow = _mm256_or_si256(slow, neg); /* unsigned formats: the core */
            if (_mm256_movemask_pd(_mm256_castsi256_pd(slow))) break;
            code = _mm256_or_si256(code, _mm256_and_si256(neg, signb));
            {
                uint64_t t[4], u[4], v[4];
                uint16_t w[4];
                _mm256_storeu_si256((__m256i *)t, code);
                for (int k = 0; k < 4; k++) w[k] = (uint16_t)t[k];
                memcpy(o + i, w, sizeof w); /* o may be unaligned */
                if (flo) { /* this element's flags: the operands', inexact */
                    _mm256_storeu_si256((__m256i *)u, fl);
                    _mm256_storeu_si256((__m256i *)v, rnz);
                    for (int k = 0; k < 4; k++)
                        flo[i + k] = (uint8_t)((u[k] & 0x7f) | (v[k] ? SFP8_FLAG_INEXACT : 0));
                }
            }
            facc = _mm256_or_si256(facc, fl);
            inex = _mm256_or_si256(inex, rnz);
        }
    }
    {
        uint64_t t[4], u[4];
        unsigned f = 0;
        _mm256_storeu_si256((__m256i *)t, facc);
        _mm256_storeu_si256((__m256i *)u, inex);
        for (int k = 0; k < 4; k++) f |= ((unsigned)t[k] & 0x7fu) | (u[k] ? SFP8_FLAG_INEXACT : 0u);
        *acc |= f;
    }
    return i;
}

/* a16f_512 with AVX2: eight binary32 lanes, masks as vectors, the arithmetic
 * decoding for every format (binary16 too), MXCSR's rounding (round to nearest,
 * as a16_256 assumes) */
SFP8_AVX2 static inline AINL __m256 a16_load8f(const sfp8s_a16 *p, const uint16_t *x, __m256i *slow)
{
    const int bias = 1023 - (int)(p->off >> 52);
    const __m256i zero = _mm256_setzero_si256();
    const __m256i i = _mm256_and_si256(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)x)),
                                       _mm256_set1_epi32((int)p->mask));
    const __m256i mag = _mm256_and_si256(i, _mm256_set1_epi32((int)p->magmask));
    const __m256i e = _mm256_srl_epi32(mag, _mm_cvtsi32_si128(p->M)), isz = _mm256_cmpeq_epi32(mag, zero);
    __m256i v = _mm256_andnot_si256(isz, _mm256_add_epi32(_mm256_sll_epi32(mag, _mm_cvtsi32_si128(23 - p->M)),
                                                          _mm256_set1_epi32((127 - bias) << 23)));
    *slow = _mm256_or_si256(*slow, _mm256_or_si256(_mm256_cmpeq_epi32(e, _mm256_set1_epi32((int)p->emax_field)),
                                                   _mm256_andnot_si256(isz, _mm256_cmpeq_epi32(e, zero))));
    v = _mm256_or_si256(v, _mm256_sll_epi32(_mm256_and_si256(i, _mm256_set1_epi32((int)p->signbit)),
                                            _mm_cvtsi32_si128(p->sshift - 32)));
    return _mm256_castsi256_ps(v);
}

SFP8_AVX2 static inline AINL ptrdiff_t a16f_256(int OP, int MODE, const sfp8s_a16 *p, const uint16_t *a,
                                           const uint16_t *b, const uint16_t *c, uint16_t *o, ptrdiff_t n,
                                           uint8_t *flo, unsigned *acc)
{
    const int M = p->M, e32min = p->ebase - 1023 + 127;
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi32(-1), one = _mm256_set1_epi32(1);
    const __m256i absm = _mm256_set1_epi32(0x7fffffff), sgn = _mm256_set1_epi32((int)0x80000000u);
    const __m256i e8 = _mm256_set1_epi32(0xff), lim = _mm256_set1_epi32(22 - M), nlim = _mm256_set1_epi32(M - 22);
    const __m128i shc = _mm_cvtsi32_si128(23 - M);
    const __m256i rmask = _mm256_set1_epi32((1 << (23 - M)) - 1), half = _mm256_set1_epi32(1 << (22 - M));
    const __m256i base = _mm256_set1_epi32(e32min << 23), cbase = _mm256_set1_epi32((e32min - 1) << M);
    const __m256i maxmag = _mm256_set1_epi32((int)p->maxmag), signb = _mm256_set1_epi32((int)p->signbit);
    const int tiny_err = e32min - 127 - M < -126; /* as a16f_512 */
    const __m256i tiny_lim = _mm256_set1_epi32((M + 1) << 23);
    __m256i inex = zero;
    ptrdiff_t i = 0;
    (void)c;
    if (OP == SFP8S_FMA) return 0;
    for (; i + 8 <= n; i += 8) {
        __m256i slow = zero, bits, mag, neg, K, rem, rnz, inc, code;
        __m256 vx = a16_load8f(p, a + i, &slow), vy = a16_load8f(p, b + i, &slow);
        if (OP == SFP8S_SUB) vy = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(vy), sgn));
        if (OP == SFP8S_MUL) {
            bits = _mm256_castps_si256(_mm256_mul_ps(vx, vy));
        } else if (OP == SFP8S_DIV) {
            bits = _mm256_castps_si256(_mm256_div_ps(vx, vy));
            slow = _mm256_or_si256(slow, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(vy), absm), zero));
        } else {
            const __m256 r = _mm256_add_ps(vx, vy);
            const __m256i ex = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(vx), 23), e8);
            const __m256i ey = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(vy), 23), e8);
            const __m256i d = _mm256_sub_epi32(ex, ey);
            __m256i far = _mm256_or_si256(_mm256_cmpgt_epi32(d, lim), _mm256_cmpgt_epi32(nlim, d));
            far = _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpeq_epi32(ex, zero), _mm256_cmpeq_epi32(ey, zero)), far);
            bits = _mm256_castps_si256(r);
            if (_mm256_movemask_ps(_mm256_castsi256_ps(far))) { /* TwoSum, rounded to odd */
                __m256 bb = _mm256_sub_ps(r, vx);
                __m256 err = _mm256_add_ps(_mm256_sub_ps(vx, _mm256_sub_ps(r, bb)), _mm256_sub_ps(vy, bb));
                __m256i eb = _mm256_castps_si256(err), move, same;
                move = _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(eb, absm), zero),
                                           _mm256_cmpeq_epi32(_mm256_and_si256(bits, one), zero));
                same = _mm256_cmpgt_epi32(_mm256_xor_si256(eb, bits), ones); /* sign bits equal */
                slow = _mm256_or_si256(slow, _mm256_cmpeq_epi32(_mm256_and_si256(bits, absm),
                                                                _mm256_set1_epi32(0x7f800000))); /* infinite */
                if (tiny_err) {
                    __m256i mn = _mm256_min_epi32(_mm256_and_si256(_mm256_castps_si256(vx), absm),
                                                  _mm256_and_si256(_mm256_castps_si256(vy), absm));
                    slow = _mm256_or_si256(slow, _mm256_andnot_si256(_mm256_cmpeq_epi32(mn, zero),
                                                                     _mm256_cmpgt_epi32(tiny_lim, mn)));
                }
                bits = _mm256_sub_epi32(bits, _mm256_and_si256(move, same));    /* +1 */
                bits = _mm256_add_epi32(bits, _mm256_andnot_si256(same, move)); /* -1 */
            }
        }
        mag = _mm256_and_si256(bits, absm);
        neg = _mm256_srai_epi32(bits, 31);
        slow = _mm256_or_si256(slow, _mm256_cmpgt_epi32(base, mag)); /* zero, or below 2^emin */
        K = _mm256_srl_epi32(mag, shc);
        rem = _mm256_and_si256(mag, rmask);
        rnz = _mm256_xor_si256(_mm256_cmpeq_epi32(rem, zero), ones);
        code = _mm256_sub_epi32(K, cbase);
        switch (MODE) {
        case SFP8_ROUND_NEAREST_EVEN:
            inc = _mm256_or_si256(_mm256_cmpgt_epi32(rem, half),
                                  _mm256_and_si256(_mm256_cmpeq_epi32(rem, half), _mm256_cmpeq_epi32(_mm256_and_si256(K, one), one)));
            break;
        case SFP8_ROUND_NEAREST_AWAY: inc = _mm256_cmpgt_epi32(rem, _mm256_sub_epi32(half, one)); break;
        case SFP8_ROUND_UPWARD: inc = _mm256_andnot_si256(neg, rnz); break;
        case SFP8_ROUND_DOWNWARD: inc = _mm256_and_si256(neg, rnz); break;
        case SFP8_ROUND_TO_ODD: code = _mm256_or_si256(code, _mm256_and_si256(rnz, one)); inc = zero; break;
        default: inc = zero; break;
        }
        code = _mm256_sub_epi32(code, inc); /* inc: -1 or 0 */
        slow = _mm256_or_si256(slow, _mm256_cmpgt_epi32(code, maxmag));
        if (!p->signbit) slow = _mm256_or_si256(slow, neg);
        if (_mm256_movemask_ps(_mm256_castsi256_ps(slow))) break;
        code = _mm256_or_si256(code, _mm256_and_si256(neg, signb));
        _mm_storeu_si128((__m128i *)(o + i), _mm_packus_epi32(_mm256_castsi256_si128(code),
                                                               _mm256_extracti128_si256(code, 1)));
        if (flo) {
            __m128i r16 = _mm_packs_epi32(_mm256_castsi256_si128(rnz), _mm256_extracti128_si256(rnz, 1));
            _mm_storel_epi64((__m128i *)(flo + i),
                             _mm_and_si128(_mm_packs_epi16(r16, r16), _mm_set1_epi8(SFP8_FLAG_INEXACT)));
        }
        inex = _mm256_or_si256(inex, rnz);
    }
    *acc |= _mm256_movemask_ps(_mm256_castsi256_ps(inex)) ? SFP8_FLAG_INEXACT : 0u;
    return i;
}

SFP8_AVX2 static ptrdiff_t arith16f_avx2(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                                    const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    A16_DISPATCH(a16f_256)
}

SFP8_AVX2 static ptrdiff_t block_avx2(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                                  const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    if (a16_f32_ok(p, op)) return arith16f_avx2(p, op, a, b, c, o, n, flo, acc);
    A16_DISPATCH(a16_256)
}

unsigned sfp8f_arith16_run_avx2(const void *t, const sfp8f_call *c) { return arith16_run(t, c, block_avx2); }



/* 1 if some lane's binary64 sum may be inexact: the binary exponents of the
 * operands more than 52 - p apart (p = M + 1 significant bits: closer operands
 * sum to at most 53 bits, docs/performance.md), or one operand zero and the
 * other not (harmless: those take TwoSum) */
SFP8_AVX512 static inline AINL int far512(const sfp8s_a16 *p, __m512d vx, __m512d vy)
{
    /* getexp: floor(log2|v|), -inf for zero (a zero operand then counts as far) */
    __m512d d = _mm512_sub_pd(_mm512_getexp_pd(vx), _mm512_getexp_pd(vy));
    return _mm512_cmp_pd_mask(_mm512_abs_pd(d), _mm512_set1_pd(51 - p->M), _CMP_GT_OQ) != 0;
}

/* 1 if some lane's binary64 P + z may be inexact, P = x*y exact (at most 2p
 * bits): P is a multiple of 2^(EP - 2p + 1), z of 2^(Ez - p + 1), the sum is
 * below 2^(max(EP, Ez) + 2), so it is exact when max(EP, Ez) - min(EP - 2p + 1,
 * Ez - p + 1) <= 51 (a zero operand: not claimed, unless both are zero) */
SFP8_AVX512 static inline AINL int fma_far512(const sfp8s_a16 *p, __m512d pr, __m512d vz)
{
    __m512d gp = _mm512_getexp_pd(pr), gz = _mm512_getexp_pd(vz);
    __m512d lo = _mm512_min_pd(_mm512_sub_pd(gp, _mm512_set1_pd(2 * p->M + 1)), _mm512_sub_pd(gz, _mm512_set1_pd(p->M)));
    return _mm512_cmp_pd_mask(_mm512_sub_pd(_mm512_max_pd(gp, gz), lo), _mm512_set1_pd(51), _CMP_GT_OQ) != 0;
}

SFP8_AVX512 static inline AINL ptrdiff_t a16_512(int OP, int MODE, const sfp8s_a16 *p, const uint16_t *a,
                                         const uint16_t *b, const uint16_t *c, uint16_t *o, ptrdiff_t n,
                                         uint8_t *flo, unsigned *acc)
{
    const __m512i msk = _mm512_set1_epi64((long long)p->mask), lowb = _mm512_set1_epi64(0xff);
    const __m512i slowb = _mm512_set1_epi64(0x80), one = _mm512_set1_epi64(1);
    const __m512i m52 = _mm512_set1_epi64(0xFFFFFFFFFFFFFLL), hid = _mm512_set1_epi64(1LL << 52);
    const __m512i mag = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL), sgn = _mm512_set1_epi64((long long)(1ULL << 63));
    const __m128i shc = _mm_cvtsi32_si128(52 - p->M), mc = _mm_cvtsi32_si128(p->M);
    const __m512i rmask = _mm512_set1_epi64((1LL << (52 - p->M)) - 1), half = _mm512_set1_epi64(1LL << (51 - p->M));
    const __m512i ebase = _mm512_set1_epi64(p->ebase), maxmag = _mm512_set1_epi64((long long)p->maxmag);
    const __m512i signb = _mm512_set1_epi64((long long)p->signbit);
    __m512i facc = _mm512_setzero_si512();
    __mmask8 inex = 0;
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i bx = a16_load512(p, a + i, msk), by = a16_load512(p, b + i, msk), bz = bx;
        __m512i fl = _mm512_or_si512(bx, by), bits;
        __m512d vx = _mm512_castsi512_pd(_mm512_andnot_si512(lowb, bx));
        __m512d vy = _mm512_castsi512_pd(_mm512_andnot_si512(lowb, by));
        __mmask8 slow;
        if (OP == SFP8S_FMA) {
            bz = a16_load512(p, c + i, msk);
            fl = _mm512_or_si512(fl, bz);
        }
        slow = _mm512_test_epi64_mask(fl, slowb);
        if (OP == SFP8S_SUB) vy = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(vy), sgn));
        if (OP == SFP8S_MUL) {
            bits = _mm512_castpd_si512(_mm512_mul_pd(vx, vy));
        } else if (OP == SFP8S_DIV) {
            bits = _mm512_castpd_si512(_mm512_div_pd(vx, vy));
            slow |= _mm512_testn_epi64_mask(_mm512_andnot_si512(lowb, by), mag); /* divisor zero */
        } else if (OP != SFP8S_FMA && (p->exact_sum || !far512(p, vx, vy))) {
            bits = _mm512_castpd_si512(_mm512_add_pd(vx, vy)); /* exact */
        } else if (OP == SFP8S_FMA && !fma_far512(p, _mm512_mul_pd(vx, vy),
                                                  _mm512_castsi512_pd(_mm512_andnot_si512(lowb, bz)))) {
            bits = _mm512_castpd_si512(
                _mm512_add_pd(_mm512_mul_pd(vx, vy), _mm512_castsi512_pd(_mm512_andnot_si512(lowb, bz))));
        } else { /* TwoSum, rounded to odd (fast_impl.h, sfp8f_odd_sum) */
            __m512d pp = OP == SFP8S_FMA ? _mm512_mul_pd(vx, vy) : vx;
            __m512d qq = OP == SFP8S_FMA ? _mm512_castsi512_pd(_mm512_andnot_si512(lowb, bz)) : vy;
            __m512d s = _mm512_add_pd(pp, qq), bb = _mm512_sub_pd(s, pp);
            __m512d err = _mm512_add_pd(_mm512_sub_pd(pp, _mm512_sub_pd(s, bb)), _mm512_sub_pd(qq, bb));
            __m512i eb = _mm512_castpd_si512(err);
            __mmask8 move, same;
            bits = _mm512_castpd_si512(s);
            move = _mm512_test_epi64_mask(eb, mag) & _mm512_testn_epi64_mask(bits, one);
            same = _mm512_testn_epi64_mask(_mm512_xor_si512(eb, bits), sgn);
            bits = _mm512_mask_add_epi64(bits, move & same, bits, one);
            bits = _mm512_mask_sub_epi64(bits, move & (__mmask8)~same, bits, one);
        }
        {
            __m512i e = _mm512_and_si512(_mm512_srli_epi64(bits, 52), _mm512_set1_epi64(0x7ff));
            __mmask8 neg = _mm512_movepi64_mask(bits), rnz, inc;
            __m512i sig = _mm512_or_si512(_mm512_and_si512(bits, m52), hid);
            __m512i K = _mm512_srl_epi64(sig, shc), rem = _mm512_and_si512(sig, rmask), code;
            slow |= _mm512_cmplt_epi64_mask(e, ebase);
            rnz = _mm512_test_epi64_mask(rem, rem);
            switch (MODE) {
            case SFP8_ROUND_NEAREST_EVEN:
                inc = _mm512_cmpgt_epi64_mask(rem, half) |
                      (_mm512_cmpeq_epi64_mask(rem, half) & _mm512_test_epi64_mask(K, one));
                break;
            case SFP8_ROUND_NEAREST_AWAY: inc = _mm512_cmpge_epi64_mask(rem, half); break;
            case SFP8_ROUND_UPWARD: inc = (__mmask8)~neg & rnz; break;
            case SFP8_ROUND_DOWNWARD: inc = neg & rnz; break;
            case SFP8_ROUND_TO_ODD: K = _mm512_mask_or_epi64(K, rnz, K, one); inc = 0; break;
            default: inc = 0; break;
            }
            code = _mm512_add_epi64(_mm512_sll_epi64(_mm512_sub_epi64(e, ebase), mc), K);
            code = _mm512_mask_add_epi64(code, inc, code, one);
            slow |= _mm512_cmpgt_epi64_mask(code, maxmag);
            if (!p->signbit) slow |= neg; /* unsigned formats: the core */
            if (slow) break;
            code = _mm512_mask_or_epi64(code, neg, code, signb);
            _mm_storeu_si128((__m128i *)(o + i), _mm512_cvtepi64_epi16(code));
            if (flo) { /* this element's flags: the operands', inexact */
                __m512i lf = _mm512_and_si512(fl, _mm512_set1_epi64(0x7f));
                lf = _mm512_mask_or_epi64(lf, rnz, lf, _mm512_set1_epi64(SFP8_FLAG_INEXACT));
                _mm_storel_epi64((__m128i *)(flo + i), _mm512_cvtepi64_epi8(lf));
            }
            facc = _mm512_or_si512(facc, fl);
            inex |= rnz;
        }
    }
    *acc |= ((unsigned)_mm512_reduce_or_epi64(facc) & 0x7fu) | (inex ? SFP8_FLAG_INEXACT : 0u);
    return i;
}

/* ---- 16-bit add / subtract / multiply / divide through binary32, sixteen lanes
 *      (the formats of a16_f32_ok: M <= 10, i.e. p <= 11 significant bits, and a
 *      normal range inside binary32's).  The same lanes as a16_512, with binary32
 *      in place of binary64 (docs/performance.md, "16-bit arithmetic through
 *      binary32"): a product has 2p <= 22 <= 24 bits (exact), a quotient is
 *      correctly rounded to 24 >= 2p + 1 bits (decisive), a sum is exact when
 *      the operands' binary exponents differ by at most 23 - p, else rounded to
 *      odd by TwoSum at 24 >= p + 2 bits.  The arithmetic uses embedded
 *      round-to-nearest, so MXCSR's rounding mode does not matter. ---- */

SFP8_AVX512 static inline AINL ptrdiff_t a16f_512(int OP, int MODE, const sfp8s_a16 *p, const uint16_t *a,
                                          const uint16_t *b, const uint16_t *c, uint16_t *o, ptrdiff_t n,
                                          uint8_t *flo, unsigned *acc)
{
    const int M = p->M, e32min = p->ebase - 1023 + 127; /* biased binary32 exponent of 2^emin */
    const __m512i one = _mm512_set1_epi32(1), absm = _mm512_set1_epi32(0x7fffffff);
    const __m512i sgn = _mm512_set1_epi32((int)0x80000000u);
    const __m128i shc = _mm_cvtsi32_si128(23 - M);
    const __m512i rmask = _mm512_set1_epi32((1 << (23 - M)) - 1), half = _mm512_set1_epi32(1 << (22 - M));
    const __m512i base = _mm512_set1_epi32(e32min << 23), cbase = _mm512_set1_epi32((e32min - 1) << M);
    const __m512i maxmag = _mm512_set1_epi32((int)p->maxmag), signb = _mm512_set1_epi32((int)p->signbit);
    const __m512 farlim = _mm512_set1_ps((float)(22 - M));
    /* TwoSum's error is a multiple of 2^(Ey - M) (Ey: the smaller operand's
       exponent); below 2^-126 it would be a binary32 subnormal, which a
       flush-to-zero MXCSR would lose: those lanes take the core */
    const int tiny_err = e32min - 127 - M < -126;
    const __m512 tiny_lim = _mm512_castsi512_ps(_mm512_set1_epi32((M + 1) << 23)); /* 2^(M - 126) */
    __mmask16 inex = 0;
    ptrdiff_t i = 0;
    (void)c;
    if (OP == SFP8S_FMA) return 0; /* not these kernels (a16_f32_ok) */
    for (; i + 16 <= n; i += 16) {
        __mmask16 slow = 0, neg, rnz, inc, ok;
        __m512 vx = a16_load16f(p, a + i, &slow), vy = a16_load16f(p, b + i, &slow), r;
        __m512i bits, mag, K, rem, code;
        if (OP == SFP8S_SUB) vy = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(vy), sgn));
        if (OP == SFP8S_MUL) {
            bits = _mm512_castps_si512(_mm512_mul_round_ps(vx, vy, RNE_SAE)); /* exact */
        } else if (OP == SFP8S_DIV) {
            bits = _mm512_castps_si512(_mm512_div_round_ps(vx, vy, RNE_SAE));
            slow |= _mm512_testn_epi32_mask(_mm512_castps_si512(vy), absm); /* divisor zero */
        } else {
            r = _mm512_add_round_ps(vx, vy, RNE_SAE);
            bits = _mm512_castps_si512(r);
            if (_mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(_mm512_getexp_ps(vx), _mm512_getexp_ps(vy))), farlim,
                                   _CMP_GT_OQ)) { /* TwoSum, rounded to odd (as odd_sum512) */
                __m512 bb = _mm512_sub_round_ps(r, vx, RNE_SAE);
                __m512 err = _mm512_add_round_ps(_mm512_sub_round_ps(vx, _mm512_sub_round_ps(r, bb, RNE_SAE), RNE_SAE),
                                                 _mm512_sub_round_ps(vy, bb, RNE_SAE), RNE_SAE);
                __m512i eb = _mm512_castps_si512(err);
                __mmask16 move = _mm512_test_epi32_mask(eb, absm) & _mm512_testn_epi32_mask(bits, one);
                __mmask16 same = _mm512_testn_epi32_mask(_mm512_xor_si512(eb, bits), sgn);
                slow |= _mm512_fpclass_ps_mask(r, 0x18); /* an infinite sum (beyond every covered result) */
                if (tiny_err) {
                    __m512 mn = _mm512_min_ps(_mm512_abs_ps(vx), _mm512_abs_ps(vy));
                    slow |= _mm512_cmp_ps_mask(mn, tiny_lim, _CMP_LT_OQ) &
                            _mm512_cmp_ps_mask(mn, _mm512_setzero_ps(), _CMP_NEQ_OQ);
                }
                bits = _mm512_mask_add_epi32(bits, move & same, bits, one);
                bits = _mm512_mask_sub_epi32(bits, move & (__mmask16)~same, bits, one);
            }
        }
        mag = _mm512_and_si512(bits, absm);
        neg = _mm512_movepi32_mask(bits);
        slow |= _mm512_cmplt_epu32_mask(mag, base); /* zero, or below 2^emin */
        K = _mm512_srl_epi32(mag, shc);
        rem = _mm512_and_si512(mag, rmask);
        rnz = _mm512_test_epi32_mask(rem, rem);
        code = _mm512_sub_epi32(K, cbase);
        switch (MODE) {
        case SFP8_ROUND_NEAREST_EVEN:
            inc = _mm512_cmpgt_epu32_mask(rem, half) | (_mm512_cmpeq_epi32_mask(rem, half) & _mm512_test_epi32_mask(K, one));
            break;
        case SFP8_ROUND_NEAREST_AWAY: inc = _mm512_cmpge_epu32_mask(rem, half); break;
        case SFP8_ROUND_UPWARD: inc = (__mmask16)~neg & rnz; break;
        case SFP8_ROUND_DOWNWARD: inc = neg & rnz; break;
        case SFP8_ROUND_TO_ODD: code = _mm512_mask_or_epi32(code, rnz, code, one); inc = 0; break;
        default: inc = 0; break;
        }
        code = _mm512_mask_add_epi32(code, inc, code, one);
        slow |= _mm512_cmpgt_epu32_mask(code, maxmag); /* overflow (and infinite results) */
        if (!p->signbit) slow |= neg;                  /* unsigned formats: the core */
        code = _mm512_mask_or_epi32(code, neg, code, signb);
        if (__builtin_expect(slow == 0, 1)) {
            _mm256_storeu_si256((__m256i *)(o + i), _mm512_cvtepi32_epi16(code));
            if (flo) _mm_storeu_si128((__m128i *)(flo + i), _mm_maskz_mov_epi8(rnz, _mm_set1_epi8(SFP8_FLAG_INEXACT)));
            inex |= rnz;
            continue;
        }
        /* a lane the kernel does not cover: keep the first eight lanes if they are all covered */
        ok = (slow & 0xff) ? 0 : 0xff;
        if (ok) {
            _mm256_mask_storeu_epi16((void *)(o + i), ok, _mm512_cvtepi32_epi16(code));
            if (flo)
                _mm_mask_storeu_epi8((void *)(flo + i), ok, _mm_maskz_mov_epi8(rnz, _mm_set1_epi8(SFP8_FLAG_INEXACT)));
            inex |= rnz & ok;
            i += 8;
        }
        break;
    }
    *acc |= inex ? SFP8_FLAG_INEXACT : 0u;
    return i;
}

SFP8_AVX512 static ptrdiff_t arith16f_avx512(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                                     const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    A16_DISPATCH(a16f_512)
}

SFP8_AVX512 static ptrdiff_t block_avx512(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                                   const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    if (a16_f32_ok(p, op)) return arith16f_avx512(p, op, a, b, c, o, n, flo, acc);
    A16_DISPATCH(a16_512)
}

unsigned sfp8f_arith16_run_avx512(const void *t, const sfp8f_call *c) { return arith16_run(t, c, block_avx512); }
#endif
