/* Rounding of binary64 values into formats with IEEE subnormals (16-bit
 * formats, binary32), and the add/sub/mul of 16-bit formats built on it.
 *
 * DERIVED from core.c round_pack: sfp8f_rounder / round_f64 /
 * sfp8f_round_doubles are round_pack specialised to a binary64 source and
 * IEEE subnormals, per rounding mode.  Proven equal by
 * tests/fast/test_fast_arith.py::test_16bit_arith_random, ::test_16bit_arith_configs,
 * ::test_matmul_paths, and under every calling convention by
 * tests/fast/test_fast_layouts.py::test_arith16_layouts.
 *
 * The 16-bit scalar loop reads element i's operands before writing output i,
 * so it is correct for any overlap (fast.h); the SIMD kernels (fast_simd.c)
 * cover the common lanes of contiguous, non-overlapping calls, block by
 * block, and leave every other block to that loop.
 *
 * Divide: a binary64 quotient of two values of at most p = 17 significant
 * bits is correctly rounded to 53 bits and lies on the same side of every
 * point and midpoint of a p-bit grid as the exact quotient, and equals one
 * only if the exact quotient does (2p + 1 <= 53; the proof is in
 * docs/performance.md), so rounding it once more gives the core's result and
 * flags.  fma: the product is exact in binary64, the sum is rounded to odd
 * (TwoSum), as for add. */
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"
#include "fast_simd.h"
#include "ops.h"

int sfp8f_rounder(const sfp8_format *f, const sfp8_env *env, sfp8f_rnd *r)
{
    if (!sfp8f_usable_env(env) || !f->is_signed || f->subnormals != SFP8_SUBNORMALS_IEEE ||
        f->specials == SFP8_SPECIALS_FNUZ || f->specials == SFP8_SPECIALS_P3109 || f->man_bits < 1 || f->man_bits > 23 || f->bits > 32 ||
        f->bias < -900 || f->bias > 900 || (1 << f->exp_bits) - f->bias > 900)
        return 0;
    r->M = f->man_bits;
    r->emin = 1 - f->bias;
    r->tb = env->tininess_before != 0;
    r->rounding = env->rounding;
    r->maxmag = sfp8_max_code(f);
    r->signbit = (uint32_t)1 << (f->bits - 1);
    for (int s = 0; s < 2; s++) { /* overflow results, from the core's rounding routine */
        uint8_t fl = 0;
        uint32_t c = (uint32_t)sfp8_round_value(f, s, 1, 4000, 0, env, &fl);
        if (s) r->ovf1 = c, r->ovf_fl1 = fl;
        else r->ovf0 = c, r->ovf_fl0 = fl;
    }
    return 1;
}

static int arith16_ok(const sfp8_format *f)
{
    /* products and sums of two values stay normal binary64 numbers */
    return f->bits > 8 && f->bits <= 16 && f->exp_bits <= 8 && f->bias >= -100 && f->bias <= 300;
}

/* Formats sfp8f_rounder does not cover (Tesla or flushed subnormals, no sign
 * bit: SHP, UHP) but whose normal range rounds as any IEEE-like format's: the
 * SIMD kernels take their covered lanes (normal operands and results, below
 * overflow, non-negative results for unsigned formats), every other block
 * takes the core.  Deterministic modes, a SIMD level, and not FNUZ. */
static int simd_only_ok(const sfp8_format *f, const sfp8_env *env)
{
    return arith16_ok(f) && sfp8f_usable_env(env) && f->specials != SFP8_SPECIALS_FNUZ && f->specials != SFP8_SPECIALS_P3109 && f->man_bits >= 1 &&
           f->exp_bits >= 2 && sfp8f_simd_level() >= 1;
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
    /* one block: the header, then the SIMD kernels' decoding (fast_simd.h) */
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
    /* the arithmetic decoding of the SIMD kernels (fast_simd.h, sfp8s_a16),
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

const sfp8f_a16 *sfp8f_arith16(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    sfp8f_rnd r;
    if (!sfp8f_enabled() || !arith16_ok(f) || (!sfp8f_rounder(f, env, &r) && !simd_only_ok(f, env))) return NULL;
    return sfp8f_cached(T_A16, 0, f, NULL, env, build_a16, n, 65536);
}

/* DERIVED from core.c round_pack: round the binary64 bits x (finite, non-zero,
 * normal; exact or rounded to odd) into the format, specialised to IEEE
 * subnormals (see sfp8f_rounder for the formats), one copy per rounding mode
 * (MODE is a constant in every caller); overflow results and their flags come
 * from the core (sfp8f_rounder).  Proven equal by
 * tests/fast/test_fast_arith.py::test_16bit_arith_random, ::test_16bit_arith_configs
 * (16-bit add/sub/mul) and ::test_matmul_paths (binary32 results). */

static inline __attribute__((always_inline)) int round_inc(int MODE, int s, uint64_t K, uint64_t rem,
                                                           uint64_t half)
{
    switch (MODE) { /* branch-free forms: the operands are data */
    case SFP8_ROUND_NEAREST_EVEN: return (rem > half) | ((rem == half) & (int)(K & 1));
    case SFP8_ROUND_NEAREST_AWAY: return rem >= half;
    case SFP8_ROUND_UPWARD: return (!s) & (rem != 0);
    case SFP8_ROUND_DOWNWARD: return s & (rem != 0);
    default: return 0;
    }
}

static inline __attribute__((always_inline)) uint32_t round_f64(int MODE, const sfp8f_rnd *p, uint64_t x,
                                                              unsigned *fl)
{
    const int M = p->M;
    int s = (int)(x >> 63);
    int E = (int)((x >> 52) & 0x7ff) - 1023;
    uint64_t sig = (x & 0xFFFFFFFFFFFFFULL) | (1ULL << 52);
    int sh = 52 - M + (E < p->emin ? p->emin - E : 0);
    uint64_t K, rem, half, code;
    int tiny;
    if (sh > 54) sh = 54;
    K = sig >> sh;
    rem = sig & ((1ULL << sh) - 1);
    half = 1ULL << (sh - 1);
    if (MODE == SFP8_ROUND_TO_ODD) K |= rem != 0;
    code = (E >= p->emin ? ((uint64_t)(E - p->emin) << M) : 0) + K + (uint64_t)round_inc(MODE, s, K, rem, half);
    if (__builtin_expect(code > p->maxmag, 0)) {
        *fl |= s ? p->ovf_fl1 : p->ovf_fl0;
        return s ? p->ovf1 : p->ovf0;
    }
    if (rem) {
        if (p->tb) {
            tiny = E < p->emin;
        } else if (E != p->emin - 1) {
            tiny = E < p->emin - 1;
        } else { /* unbounded-exponent rounding: does it carry to 2^emin? */
            int shu = 52 - M;
            uint64_t Ku = sig >> shu, remu = sig & ((1ULL << shu) - 1), halfu = 1ULL << (shu - 1);
            int up = MODE == SFP8_ROUND_TO_ODD ? 0 : round_inc(MODE, s, Ku, remu, halfu);
            tiny = !(up && Ku + 1 == (2ULL << M));
        }
        *fl |= SFP8_FLAG_INEXACT | (tiny ? SFP8_FLAG_UNDERFLOW : 0);
    }
    return (uint32_t)code | (s ? p->signbit : 0);
}

static inline __attribute__((always_inline)) unsigned arith16_loop(
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

int sfp8f_arith16_op(int op)
{
    return op == X_ADD || op == X_SUB || op == X_MUL || op == X_DIV || op == X_FMA;
}

unsigned sfp8f_run_arith16(const sfp8f_a16 *t, int op, const sfp8_format *f, const sfp8_env *env,
                           const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c, ptrdiff_t sc,
                           char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    int level = sfp8f_simd_level(), fma = op == X_FMA;
    if (level >= 1 && (t->arith || (t->vf && !t->core_only)) && sa == 2 && sb == 2 && so == 2 && (!fma || sc == 2) &&
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
            i += level >= 2 ? sfp8s_arith16_avx512(&sp, sop, a16, b16, c16, o16, n - i, flout ? flout + i : NULL, &acc)
                            : sfp8s_arith16_avx2(&sp, sop, a16, b16, c16, o16, n - i, flout ? flout + i : NULL, &acc);
            e = n - i < 8 ? n : i + 8;
            acc |= arith16_scalar(t, op, f, env, a + 2 * i, 2, b + 2 * i, 2, fma ? c + 2 * i : NULL, 2,
                                  o + 2 * i, 2, e - i, flout ? flout + i : NULL);
            i = e;
        }
        return acc;
    }
    return arith16_scalar(t, op, f, env, a, sa, b, sb, c, sc, o, so, n, flout);
}

static inline __attribute__((always_inline)) unsigned round_doubles_loop(int MODE, const sfp8f_rnd *r,
                                                                         const double *d, ptrdiff_t n,
                                                                         uint32_t *out)
{
    const sfp8f_rnd p = *r;
    unsigned fl = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &d[i], 8);
        out[i] = (b << 1) ? round_f64(MODE, &p, b, &fl) : 0; /* zeros: the caller's */
    }
    return fl;
}

unsigned sfp8f_round_doubles(const sfp8f_rnd *r, const double *d, ptrdiff_t n, uint32_t *out)
{
    switch (r->rounding) {
    case SFP8_ROUND_NEAREST_EVEN: return round_doubles_loop(SFP8_ROUND_NEAREST_EVEN, r, d, n, out);
    case SFP8_ROUND_NEAREST_AWAY: return round_doubles_loop(SFP8_ROUND_NEAREST_AWAY, r, d, n, out);
    case SFP8_ROUND_TOWARD_ZERO: return round_doubles_loop(SFP8_ROUND_TOWARD_ZERO, r, d, n, out);
    case SFP8_ROUND_UPWARD: return round_doubles_loop(SFP8_ROUND_UPWARD, r, d, n, out);
    case SFP8_ROUND_DOWNWARD: return round_doubles_loop(SFP8_ROUND_DOWNWARD, r, d, n, out);
    default: return round_doubles_loop(SFP8_ROUND_TO_ODD, r, d, n, out);
    }
}
