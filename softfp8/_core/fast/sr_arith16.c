/* sr_arith16: add / subtract / multiply / divide / sqrt of 9..16-bit formats
 * under stochastic rounding (generated random bits).
 *
 * DERIVED from core.c round_pack (its stochastic branch): the exact result d in
 * binary64 (a product of two values of at most 21 significant bits, or a sum
 * that TwoSum shows exact; for divide the binary64 quotient, see sr16_one),
 * normal in the format: with K the M fraction bits of
 * d kept and rem the 52 - M dropped, the core's t = floor(rem / 2^(52-M) * 2^N)
 * = rem >> (52 - M - N), the result is the code of K, plus one iff
 * (R & (2^N - 1)) > (2^N - 1) - t, inexact iff rem != 0, with the operands'
 * flags (subnormal operands).  Zero, tiny or overflowing results, NaN or
 * infinite operands and inexact sums take the core.  Proven equal by
 * tests/harness/test_harness.py::test_entry [sr_arith16] and, under the NumPy
 * calling conventions, tests/harness/test_harness.py::test_entry [sr_arith16].
 *
 * Kernels: portable C (element by element in order: any overlap); AVX2 (four
 * binary64 lanes, every operand through vf; sqrt's remainder by Dekker's exact
 * product); AVX-512 (add / subtract / multiply through binary32 for the formats
 * of arith16.h's a16_f32_ok, divide and sqrt without gathers (sr16q_run), else
 * eight binary64 lanes through vf).  The SIMD kernels take contiguous operands
 * apart from the output in blocks of SR_BLK; their lanes for the core are
 * finished by sr_common.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arith16.h"
#include "ops.h"
#include "simd.h"
#include "sr.h"

/* the arithmetic decoding of 8-bit codes (sr.h, sfp8f_sr16; sr_fma.c,
   sfp8s_srf), kept only if it gives vf (value and flags) for every code up to
   the largest finite magnitude and every other code is uncovered in vf too */
static void sr16_dec8(sfp8f_sr16 *t, const sfp8_format *f)
{
    const int M = t->r.M;
    t->magmask = ((uint64_t)1 << (f->bits - f->is_signed)) - 1;
    t->off = (uint64_t)(1023 + t->r.emin - 1) << 52;
    t->sub = ldexp(1.0, t->r.emin - M);
    t->sshift = 64 - f->bits;
    t->subfl = t->vf[1] & 0x7f; /* reading a subnormal: the denormal flag */
    t->dec8 = M >= 1 && M <= 6 && t->r.maxmag <= t->magmask;
    for (uint32_t c = 0; c <= t->mask && t->dec8; c++) {
        const uint64_t mag = c & t->magmask;
        double d = (double)mag * t->sub;
        uint64_t v;
        memcpy(&v, &d, 8);
        if (mag >> M) v = (mag << (52 - M)) + t->off;
        else if (mag) v |= t->subfl;
        v |= (uint64_t)(c & t->r.signbit) << t->sshift;
        t->dec8 = mag > t->r.maxmag ? (t->vf[c] & 0x80) != 0 : t->vf[c] == v;
    }
}

void *sfp8f_build_sr16(const sfp8f_key *k, size_t *bytes)
{
    const sfp8_format *f = &k->a;
    sfp8_env env;
    const sfp8f_conv *dec;
    sfp8f_sr16 *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    env.rounding = SFP8_ROUND_NEAREST_EVEN; /* sfp8f_rounder's constants of the format only */
    dec = sfp8f_cached_nested(T_CONV, 0, f, &sfp8_binary64, &sfp8f_free_env, sfp8f_build_conv);
    if (!dec || dec->n != 65536 >> (16 - f->bits)) {
        free(t);
        return NULL;
    }
    if (!sfp8f_rounder(f, &env, &t->r)) {
        /* Tesla or flushed subnormals, no sign bit (SHP, UHP): results normal
           in the format (E >= 1 - bias) round as above; every other lane
           takes the core (arith16.c, simd_only_ok) */
        if (f->specials == SFP8_SPECIALS_FNUZ || f->specials == SFP8_SPECIALS_P3109 ||
            f->subnormals == SFP8_SUBNORMALS_NOZERO || f->man_bits < 1 || f->exp_bits < 2) {
            free(t);
            return NULL;
        }
        t->r.M = f->man_bits;
        t->r.emin = 1 - f->bias;
        t->r.maxmag = sfp8_max_code(f);
        t->r.signbit = f->is_signed ? (uint32_t)1 << (f->bits - 1) : 0;
    }
    t->mask = (uint32_t)dec->n - 1;
    for (int c = 0; c < dec->n; c++) {
        uint64_t v = dec->val[c];
        if ((v & 0xff) || (dec->fl[c] & 0x80)) { /* every value's low byte is zero (at most 20 fraction bits) */
            free(t);
            return NULL;
        }
        t->vf[c] = v | dec->fl[c] | (((v >> 52) & 0x7ff) == 0x7ff ? 0x80u : 0u);
    }
    if (f->bits <= 8) sr16_dec8(t, f);
    *bytes = sizeof *t;
    return t;
}

static const sfp8f_sr16 *stochastic16(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || f->bits <= 8 || f->bits > 16 ||
        f->exp_bits > 8 || f->bias < -100 || f->bias > 300 || f->man_bits > 20 ||
        (op != X_ADD && op != X_SUB && op != X_MUL && op != X_DIV && op != X_SQRT))
        return NULL;
    return sfp8f_cached(T_SR16, 0, f, NULL, env, sfp8f_build_sr16, n, 65536);
}

const void *sfp8f_sr_arith16_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    /* unary: sqrt only (the other unary operations: sr_wide); binary: the arithmetic */
    if (X_IS_UNARY(c->op) ? c->op != X_SQRT : sfp8x_arity(c->op) != 2) return NULL;
    return stochastic16(c->op, c->f, c->env, c->n);
}

/* code and flags of x op y for the random bits Rn = R & Rmask (flags 0x80: the core) */
static inline uint8_t sr16_one(const sfp8f_sr16 *t, int op, uint32_t x, uint32_t y, uint32_t Rn, uint32_t Rmask,
                               int N, uint16_t *code)
{
    const int M = t->r.M, sh = 52 - M;
    uint64_t bx = t->vf[x & t->mask], by = t->vf[y & t->mask], bits;
    double a, b, d;
    const uint8_t opfl = (uint8_t)((bx | by) & 0x7f); /* the operands' reading flags */
    if ((bx | by) & 0x80) return 0x80;
    bx &= ~(uint64_t)0xff;
    by &= ~(uint64_t)0xff;
    memcpy(&a, &bx, 8);
    memcpy(&b, &by, 8);
    if (op == X_MUL) {
        d = a * b;
    } else if (op == X_DIV) {
        /* d = RN(a / b), |Q - d| < 2^(Ed-53) for the quotient Q (no binary64
           midpoint is a quotient of binary64 numbers).  Q and d have the same K and
           t unless a multiple of 2^(Ed-M-N) lies between them; being a binary64
           number nearer to Q than d, it can only be d itself.  Then the remainder
           r = a - d*b is a multiple of 2^min(Ea-M, Ed-M-N+Eb-M) (a, b have at most
           M+1 significant bits) with |r| = |Q - d|*|b| < 2^(Ed+Eb-52): zero when
           2M + N <= 52, so Q = d.  Larger M + N (custom formats only): the core. */
        if (b == 0 || 2 * M + N > 52) return 0x80;
        d = a / b;
    } else if (op == X_SQRT) {
        /* d = RN(sqrt(a)) (never a binary64 midpoint): as for divide, only d itself
           can lie on the grid of 2^(Ed-M-N) between d and the root, but here
           r = a - d*d (exact by fma) need not vanish: such d (low sh - N bits
           zero) with r != 0 take the core; exact roots (r = 0) are d */
        if (!(a > 0)) return 0x80;
        d = sqrt(a);
        memcpy(&bits, &d, 8);
        if (!(bits & (((uint64_t)1 << (sh - N)) - 1)) && fma(-d, d, a) != 0) return 0x80;
    } else {
        double bb;
        if (op == X_SUB) b = -b;
        d = a + b;
        bb = d - a;
        if ((a - (d - bb)) + (b - bb) != 0) return 0x80;
    }
    memcpy(&bits, &d, 8);
    return sfp8f_sr16_round(t, bits, opfl, Rn, Rmask, N, code);
}

/* the SIMD kernel of one level on m contiguous operand pairs (m a multiple of 8):
   codes out[i], flags fl[i] (0x80: the caller finishes the lane with the core);
   the OR of fl[] */
typedef unsigned (*sr16_block)(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                               uint8_t *fl, ptrdiff_t n);

/* the SIMD kernel (level: its level, for the arith16 table whose decoding the
 * AVX-512 kernels use) takes contiguous operands apart from the output
 * (fast_impl.h, sfp8f_apart), blocks of SR_BLK; otherwise, and at level 0, the
 * loop, element by element in order */
static inline AINL unsigned run_arith16_sr(const sfp8f_sr16 *t, const sr_call *c, sr16_block block, int level)
{
    const char *a = c->a, *b = c->b;
    char *o = c->o;
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (block && (c->op != X_DIV || 2 * t->r.M + c->k.N <= 52) && c->sa == 2 && c->sb == 2 && c->so == 2 && o != a && o != b &&
        sfp8f_apart(o, 2, 2, a, 2, 2, c->n) && sfp8f_apart(o, 2, 2, b, 2, 2, c->n)) {
        uint8_t fl[SR_BLK];
        /* the arithmetic decoding of the deterministic kernels (arith16.h), for the
           binary32 kernel (add / subtract / multiply) and the divide / sqrt kernel */
        sfp8_env ne = *c->env;
        const sfp8f_a16 *d16;
        sfp8s_a16 sa16;
        ne.rounding = SFP8_ROUND_NEAREST_EVEN;
        d16 = level >= 2 && c->n >= 16 ? sfp8f_arith16_table(c->f, &ne, c->n, level) : NULL;
        if (d16 && d16->arith) sa16 = sfp8f_a16_params(d16, c->f);
        for (; i + 8 <= c->n; i += SR_BLK) {
            ptrdiff_t m = c->n - i < SR_BLK ? (c->n - i) & ~(ptrdiff_t)7 : SR_BLK;
            const uint16_t *x = (const uint16_t *)(const void *)(a + 2 * i), *y = (const uint16_t *)(const void *)(b + 2 * i);
            uint16_t *oc = (uint16_t *)(void *)(o + 2 * i);
            uint8_t *of = c->flout ? c->flout + i : fl;
            const sfp8s_sr16 p = {t->vf, t->mask, c->k.hs, c->k.base, c->index0 + (uint64_t)i, c->k.N,
                                  c->op == X_SQRT ? 4 : c->op == X_DIV ? 3 : c->op == X_MUL ? 2 : c->op == X_SUB,
                                  t->r.M, t->r.emin + 1023, t->r.maxmag, t->r.signbit,
                                  d16 && d16->arith ? &sa16 : NULL};
            unsigned g = block(&p, x, y, oc, of, m);
            if (g & 0x80) /* lanes for the core */
                g = sfp8f_sr_finish_core(c, i, a + 2 * i, b + 2 * i, o + 2 * i, 2, of, m);
            acc |= g;
            if (m < SR_BLK) {
                i += m;
                break;
            }
        }
        a += i * c->sa;
        b += i * c->sb;
        o += i * c->so;
    }
    for (; i < c->n; i++, a += c->sa, b += c->sb, o += c->so) { /* any overlap: element i read before output i is written */
        uint32_t x = sfp8f_ld16(a), y = sfp8f_ld16(b), R = sfp8r_bits(c->k.hs, c->k.base, c->index0 + (uint64_t)i);
        uint16_t code = 0;
        uint8_t fl = sr16_one(t, c->op, x, y, R & c->k.Rmask, c->k.Rmask, c->k.N, &code);
        if (fl & 0x80) sfp8f_sr_finish_core(c, i, a, b, o, 2, &fl, 1);
        else memcpy(o, &code, 2);
        acc |= fl;
        if (c->flout) c->flout[i] = fl;
    }
    return acc;
}

/* one call; sqrt reads its operand twice (the kernels read y and ignore it) */
static inline AINL unsigned arith16_sr_run(const sfp8f_sr16 *t, const sfp8f_call *c, sr16_block block, int level)
{
    const int unary = X_IS_UNARY(c->op);
    const sr_call s = {c->op, c->f, NULL, c->env, sr_keys_of(c->env, c->seed, c->stream), c->index0, c->a,
                       unary ? c->a : c->b, c->o, c->sa, unary ? c->sa : c->sb, c->so, c->n, c->flout, NULL, t};
    return run_arith16_sr(t, &s, block, level);
}

unsigned sfp8f_sr_arith16_run(const void *t, const sfp8f_call *c) { return arith16_sr_run(t, c, NULL, 0); }

#if SFP8_X86

/* ---- AVX2 ---- */

/* ---- 16-bit stochastic add / subtract / multiply / divide / sqrt with AVX2
 *      (sfp8s_arith16_sr_avx2): sr16d_avx512's lanes four at a time (the vf
 *      table's gathers, rng4's words in the low halves of 64-bit lanes), with
 *      sr16q_half's carry rule and its square root rule (r = a - d*d by Dekker's
 *      exact product: AVX2 machines need not have fma; a - RN(d*d) is exact by
 *      Sterbenz, and the rounded (a - p) - err keeps the exact sign). ---- */
SFP8_AVX2 static inline AINL __m256i sr16_4(int OP, const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, __m256i R,
                                       uint16_t *out, uint8_t *fl)
{
    const int sh = 52 - p->M;
    const __m128i msk = _mm_set1_epi32((int)p->mask), shc = _mm_cvtsi32_si128(sh);
    const __m256i lowb = _mm256_set1_epi64x(0xff), zero = _mm256_setzero_si256();
    const __m256i absm = _mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL);
    const __m256i remm = _mm256_set1_epi64x((long long)(((uint64_t)1 << sh) - 1));
    const __m256i base = _mm256_set1_epi64x((long long)((uint64_t)p->ebase << 52));
    const __m256i cbase = _mm256_set1_epi64x((long long)(p->ebase - 1) << p->M);
    const __m256i maxmag = _mm256_set1_epi64x(p->maxmag);
    const __m256i ix = _mm256_castsi128_si256(_mm_and_si128(_mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)x)), msk));
    const __m256i bx = _mm256_i32gather_epi64((const long long *)p->vf, _mm256_castsi256_si128(ix), 8);
    const __m256i by = OP == 4 ? bx
                               : _mm256_i32gather_epi64((const long long *)p->vf,
                                                        _mm_and_si128(_mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)y)), msk), 8);
    const __m256i fo = _mm256_or_si256(bx, by);
    __m256i slow = nz256(fo, _mm256_set1_epi64x(0x80)), inex = zero, bits, mag, neg, f8;
    __m256d a = _mm256_castsi256_pd(_mm256_andnot_si256(lowb, bx)), b = _mm256_castsi256_pd(_mm256_andnot_si256(lowb, by));
    /* a zero divisor or a negative radicand gives an infinity or a NaN, above maxmag */
    if (OP <= 1) { /* a sum that TwoSum shows exact */
        __m256d d, bb, err;
        if (OP == 1) b = _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(b), _mm256_set1_epi64x((long long)(1ULL << 63))));
        d = _mm256_add_pd(a, b);
        bb = _mm256_sub_pd(d, a);
        err = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(d, bb)), _mm256_sub_pd(b, bb));
        slow = _mm256_or_si256(slow, _mm256_castpd_si256(_mm256_cmp_pd(err, _mm256_setzero_pd(), _CMP_NEQ_UQ)));
        bits = _mm256_castpd_si256(d);
    } else if (OP == 2) {
        bits = _mm256_castpd_si256(_mm256_mul_pd(a, b));
    } else if (OP == 3) {
        bits = _mm256_castpd_si256(_mm256_div_pd(a, b));
    } else {
        const __m256d C = _mm256_set1_pd(134217729.0); /* 2^27 + 1 */
        const __m256d d = _mm256_sqrt_pd(a), pr = _mm256_mul_pd(d, d), cd = _mm256_mul_pd(C, d);
        const __m256d hi = _mm256_sub_pd(cd, _mm256_sub_pd(cd, d)), lo = _mm256_sub_pd(d, hi);
        const __m256d err = _mm256_add_pd(_mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(hi, hi), pr),
                                                        _mm256_mul_pd(_mm256_add_pd(hi, hi), lo)),
                                          _mm256_mul_pd(lo, lo));
        const __m256d r = _mm256_sub_pd(_mm256_sub_pd(a, pr), err);
        /* r < 0: the bits of nextdown(d) (all ones in the comparison: + -1) */
        bits = _mm256_add_epi64(_mm256_castpd_si256(d), _mm256_castpd_si256(_mm256_cmp_pd(r, _mm256_setzero_pd(), _CMP_LT_OQ)));
        inex = _mm256_castpd_si256(_mm256_cmp_pd(r, _mm256_setzero_pd(), _CMP_NEQ_UQ));
    }
    mag = _mm256_and_si256(bits, absm);
    neg = _mm256_cmpgt_epi64(zero, bits);
    slow = _mm256_or_si256(slow, _mm256_cmpgt_epi64(base, mag)); /* zero or tiny */
    if (!p->signbit) slow = _mm256_or_si256(slow, neg);
    inex = _mm256_or_si256(inex, nz256(bits, remm));
    mag = _mm256_sub_epi64(_mm256_srl_epi64(_mm256_add_epi64(mag, R), shc), cbase);
    slow = _mm256_or_si256(slow, _mm256_cmpgt_epi64(mag, maxmag)); /* overflow, infinity, NaN */
    mag = _mm256_or_si256(mag, _mm256_and_si256(neg, _mm256_set1_epi64x((long long)p->signbit)));
    f8 = _mm256_or_si256(_mm256_and_si256(fo, _mm256_set1_epi64x(0x7f)),
                         _mm256_and_si256(inex, _mm256_set1_epi64x(SFP8_FLAG_INEXACT)));
    f8 = _mm256_or_si256(_mm256_andnot_si256(slow, f8), _mm256_and_si256(slow, _mm256_set1_epi64x(0x80)));
    {   /* the low words / bytes of the four 64-bit lanes */
        const __m256i lo = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        const __m128i c = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(mag, lo));
        const __m128i f = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(f8, lo));
        const __m128i w = _mm_packus_epi32(c, c);
        uint32_t fb = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(_mm_packus_epi32(f, f), _mm_setzero_si128()));
        _mm_storel_epi64((__m128i *)out, w);
        memcpy(fl, &fb, 4);
    }
    return f8;
}

SFP8_AVX2 static inline AINL unsigned sr16_run256(int OP, const sfp8s_sr16 *pp, const uint16_t *x, const uint16_t *y,
                                             uint16_t *out, uint8_t *fl, ptrdiff_t n)
{
    const sfp8s_sr16 P = *pp; /* a local: the stores through fl cannot change it */
    const __m256i rmask = _mm256_set1_epi64x((long long)(P.N == 32 ? 0xffffffffu : (1u << P.N) - 1));
    const __m128i tsh = _mm_cvtsi32_si128(52 - P.M - P.N);
    rng4 g = rng4_init(P.seed_key, P.stream_key, P.index0);
    __m256i facc = _mm256_setzero_si256();
    for (ptrdiff_t i = 0; i + 4 <= n; i += 4) { /* n: a multiple of 8 */
        const __m256i R = _mm256_sll_epi64(_mm256_and_si256(rng4_next(&g), rmask), tsh);
        facc = _mm256_or_si256(facc, sr16_4(OP, &P, x + i, y + i, R, out + i, fl + i));
    }
    return or_byte1(_mm256_slli_epi32(facc, 8));
}

SFP8_AVX2 static unsigned block_avx2(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                                   uint8_t *fl, ptrdiff_t n)
{
    switch (p->op) {
    case 0: return sr16_run256(0, p, x, y, out, fl, n);
    case 1: return sr16_run256(1, p, x, y, out, fl, n);
    case 2: return sr16_run256(2, p, x, y, out, fl, n);
    case 3: return sr16_run256(3, p, x, y, out, fl, n);
    default: return sr16_run256(4, p, x, x, out, fl, n);
    }
}

unsigned sfp8f_sr_arith16_run_avx2(const void *t, const sfp8f_call *c) { return arith16_sr_run(t, c, block_avx2, 1); }

/* ---- AVX-512 ---- */

/* through binary64, eight lanes at a time (sr16_one) */
SFP8_AVX512 static unsigned sr16d_avx512(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                                 uint8_t *fl, ptrdiff_t n)
{
    const int sh = 52 - p->M;
    const __m512i msk = _mm512_set1_epi64((long long)p->mask), lowb = _mm512_set1_epi64(0xff);
    const __m512i rmask = _mm512_set1_epi64((long long)(p->N == 32 ? 0xffffffffu : (1u << p->N) - 1));
    const __m512i remm = _mm512_set1_epi64((long long)(((uint64_t)1 << sh) - 1));
    const __m512i m52 = _mm512_set1_epi64(0xFFFFFFFFFFFFFLL), e11 = _mm512_set1_epi64(0x7ff);
    const __m512i ebase = _mm512_set1_epi64(p->ebase), maxmag = _mm512_set1_epi64(p->maxmag);
    const __m128i shc = _mm_cvtsi32_si128(sh), tsh = _mm_cvtsi32_si128(sh - p->N), mc = _mm_cvtsi32_si128(p->M);
    rng16 g = rng16_init(p->seed_key, p->stream_key, p->index0); /* eight lanes a step: rand8 */
    __m512i facc = _mm512_setzero_si512();
    for (ptrdiff_t i = 0; i + 8 <= n; i += 8) {
        __m512i ix = _mm512_and_si512(_mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(x + i))), msk);
        __m512i iy = _mm512_and_si512(_mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(y + i))), msk);
        __m512i bx = _mm512_i64gather_epi64(ix, (const void *)p->vf, 8), by = _mm512_i64gather_epi64(iy, (const void *)p->vf, 8);
        __m512i fo = _mm512_or_si512(bx, by), bits, e, rem, mag, R, f8;
        __m512d a = _mm512_castsi512_pd(_mm512_andnot_si512(lowb, bx)), b = _mm512_castsi512_pd(_mm512_andnot_si512(lowb, by));
        __mmask8 slow = _mm512_test_epi64_mask(fo, _mm512_set1_epi64(0x80)), neg;
        if (p->op == 2) {
            bits = _mm512_castpd_si512(_mm512_mul_pd(a, b));
        } else if (p->op == 3) { /* the quotient rounded in binary64: sr16_one */
            slow |= _mm512_cmp_pd_mask(b, _mm512_setzero_pd(), _CMP_EQ_OQ);
            bits = _mm512_castpd_si512(_mm512_div_pd(a, b));
        } else if (p->op == 4) { /* the root rounded in binary64; inexact on the grid of 2^(E-M-N): the core */
            const __m512d d = _mm512_sqrt_pd(a);
            slow |= _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_LE_OQ);
            bits = _mm512_castpd_si512(d);
            slow |= _mm512_testn_epi64_mask(bits, _mm512_set1_epi64((long long)(((uint64_t)1 << (sh - p->N)) - 1))) &
                    _mm512_cmp_pd_mask(_mm512_fnmadd_pd(d, d, a), _mm512_setzero_pd(), _CMP_NEQ_UQ);
        } else {
            __m512d d, bb, err;
            if (p->op == 1) b = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(b), _mm512_set1_epi64((long long)(1ULL << 63))));
            d = _mm512_add_pd(a, b);
            bb = _mm512_sub_pd(d, a);
            err = _mm512_add_pd(_mm512_sub_pd(a, _mm512_sub_pd(d, bb)), _mm512_sub_pd(b, bb));
            slow |= _mm512_cmp_pd_mask(err, _mm512_setzero_pd(), _CMP_NEQ_UQ);
            bits = _mm512_castpd_si512(d);
        }
        e = _mm512_and_si512(_mm512_srli_epi64(bits, 52), e11);
        slow |= _mm512_cmplt_epi64_mask(e, ebase); /* zero or tiny */
        rem = _mm512_and_si512(bits, remm);
        mag = _mm512_add_epi64(_mm512_sll_epi64(_mm512_sub_epi64(_mm512_add_epi64(e, _mm512_set1_epi64(1)), ebase), mc),
                               _mm512_srl_epi64(_mm512_and_si512(bits, m52), shc));
        R = _mm512_and_si512(_mm512_cvtepu32_epi64(rand8(g.h, g.sk)), rmask);
        g.h = _mm512_add_epi64(g.h, g.step);
        mag = _mm512_mask_add_epi64(mag, _mm512_cmpgt_epu64_mask(R, _mm512_sub_epi64(rmask, _mm512_srl_epi64(rem, tsh))),
                                    mag, _mm512_set1_epi64(1));
        slow |= _mm512_cmpgt_epu64_mask(mag, maxmag);
        neg = _mm512_movepi64_mask(bits);
        if (!p->signbit) slow |= neg;
        mag = _mm512_mask_or_epi64(mag, neg, mag, _mm512_set1_epi64((long long)p->signbit));
        f8 = _mm512_and_si512(fo, _mm512_set1_epi64(0x7f));
        f8 = _mm512_mask_or_epi64(f8, _mm512_test_epi64_mask(rem, rem), f8, _mm512_set1_epi64(SFP8_FLAG_INEXACT));
        f8 = _mm512_mask_mov_epi64(f8, slow, _mm512_set1_epi64(0x80));
        _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi64_epi16(mag));
        _mm_storel_epi64((__m128i *)(fl + i), _mm512_cvtepi64_epi8(f8));
        facc = _mm512_or_si512(facc, f8);
    }
    return (unsigned)_mm512_reduce_or_epi64(facc) & 0xffu;
}

/* ---- 16-bit stochastic add / subtract / multiply through binary32, sixteen
 *      lanes (the formats of a16_f32_ok): the lanes of sr16d_avx512 whose
 *      binary32 result is exact (every product; a sum whose operands' binary
 *      exponents differ by at most 22 - M, as a16f_512), then sr16_one's rule on
 *      binary32 bits: K the top M fraction bits, rem the 23 - M dropped ones,
 *      t = floor(rem * 2^N / 2^(23 - M)) (the binary64 rem is rem << 29), one
 *      up iff R > (2^N - 1) - t.  Operands the arithmetic decoding does not
 *      cover (subnormal, NaN, infinity: they may raise flags) take the core;
 *      a block with a far sum takes sr16d_avx512. ---- */
SFP8_AVX512 static unsigned sr16f_avx512(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                                 uint8_t *fl, ptrdiff_t n)
{
    const sfp8s_a16 *d = p->a16;
    const int M = d->M, e32min = d->ebase - 1023 + 127, sh = 23 - M;
    const __m512i absm = _mm512_set1_epi32(0x7fffffff), sgn = _mm512_set1_epi32((int)0x80000000u);
    const __m512i rmask = _mm512_set1_epi32((int)(p->N == 32 ? 0xffffffffu : (1u << p->N) - 1));
    const __m512i remm = _mm512_set1_epi32((1 << sh) - 1), base = _mm512_set1_epi32(e32min << 23);
    const __m512i cbase = _mm512_set1_epi32((e32min - 1) << M), maxmag = _mm512_set1_epi32((int)d->maxmag);
    const __m512i signb = _mm512_set1_epi32((int)d->signbit);
    const __m128i shc = _mm_cvtsi32_si128(sh), tl = _mm_cvtsi32_si128(p->N > sh ? p->N - sh : 0),
                  tr = _mm_cvtsi32_si128(p->N < sh ? sh - p->N : 0);
    const __m512 farlim = _mm512_set1_ps((float)(22 - M));
    rng16 g = rng16_init(p->seed_key, p->stream_key, p->index0);
    __m512i facc = _mm512_setzero_si512();
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __mmask16 slow = 0, neg, rnz;
        __m512 vx = a16_load16f(d, x + i, &slow), vy = a16_load16f(d, y + i, &slow);
        __m512i bits, mag, rem, code, t, R = _mm512_and_si512(rng16_next(&g), rmask), f8;
        if (p->op == 1) vy = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(vy), sgn));
        if (p->op == 2) {
            bits = _mm512_castps_si512(_mm512_mul_round_ps(vx, vy, RNE_SAE)); /* exact */
        } else {
            if (_mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(_mm512_getexp_ps(vx), _mm512_getexp_ps(vy))), farlim,
                                   _CMP_GT_OQ)) { /* a sum binary32 may round (or a zero operand) */
                sfp8s_sr16 q = *p;
                q.index0 = p->index0 + (uint64_t)i;
                facc = _mm512_or_si512(facc, _mm512_set1_epi32((int)sr16d_avx512(&q, x + i, y + i, out + i, fl + i, 16)));
                continue;
            }
            bits = _mm512_castps_si512(_mm512_add_round_ps(vx, vy, RNE_SAE)); /* exact */
        }
        mag = _mm512_and_si512(bits, absm);
        neg = _mm512_movepi32_mask(bits);
        slow |= _mm512_cmplt_epu32_mask(mag, base); /* zero, or below 2^emin */
        rem = _mm512_and_si512(mag, remm);
        rnz = _mm512_test_epi32_mask(rem, rem);
        code = _mm512_sub_epi32(_mm512_srl_epi32(mag, shc), cbase);
        t = _mm512_srl_epi32(_mm512_sll_epi32(rem, tl), tr);
        code = _mm512_mask_add_epi32(code, _mm512_cmpgt_epu32_mask(R, _mm512_sub_epi32(rmask, t)), code,
                                     _mm512_set1_epi32(1));
        slow |= _mm512_cmpgt_epu32_mask(code, maxmag); /* overflow (and infinite results) */
        if (!d->signbit) slow |= neg;                  /* unsigned formats: the core */
        code = _mm512_mask_or_epi32(code, neg, code, signb);
        f8 = _mm512_maskz_mov_epi32(rnz, _mm512_set1_epi32(SFP8_FLAG_INEXACT));
        f8 = _mm512_mask_mov_epi32(f8, slow, _mm512_set1_epi32(0x80));
        _mm256_storeu_si256((__m256i *)(out + i), _mm512_cvtepi32_epi16(code));
        _mm_storeu_si128((__m128i *)(fl + i), _mm512_cvtepi32_epi8(f8));
        facc = _mm512_or_si512(facc, f8);
    }
    if (i < n) { /* the last eight */
        sfp8s_sr16 q = *p;
        q.index0 = p->index0 + (uint64_t)i;
        facc = _mm512_or_si512(facc, _mm512_set1_epi32((int)sr16d_avx512(&q, x + i, y + i, out + i, fl + i, n - i)));
    }
    return (unsigned)_mm512_reduce_or_epi32(facc) & 0xffu;
}

/* eight lanes: returns their codes (in 64-bit lanes; the lanes for the core in *slow,
 * the inexact ones in *inexact); Rs = the lanes' N random bits << (sh - N) */
/* ---- 16-bit stochastic divide / square root, sixteen elements a block (the
 *      rng16 words) as two halves of eight binary64 lanes: the rule of
 *      sr16d_avx512 (stochastic.c, sr16_one) with the operands decoded
 *      arithmetically (a16_load16f then exact widening, or a16_load512: no
 *      gathers).  Operands that decoding does not cover (subnormal, NaN,
 *      infinity: they may raise flags) take the core.  Square root: d =
 *      RN(sqrt(a)), r = a - d*d (exact by fma); when r < 0 the root lies
 *      strictly between nextdown(d) and d, and no binary64 number (so no point
 *      of the grid of 2^(E-M-N), however small E) lies in (nextdown(d), root],
 *      so the root's K and t are those of nextdown(d) = bits - 1 (its exponent
 *      too when d is a power of two); when r > 0 they are d's; inexact iff
 *      r != 0 or dropped bits are not zero.  This covers the roots on that
 *      grid that sr16d_avx512 leaves to the core. ---- */
SFP8_AVX512 static inline AINL __m512i sr16q_half(const sfp8s_sr16 *p, int OP, __m512d a, __m512d b, __mmask8 *slow,
                                          __m512i Rs, __mmask8 *inexact)
{
    const int sh = 52 - p->M;
    const __m512i absm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL);
    const __m512i remm = _mm512_set1_epi64((long long)(((uint64_t)1 << sh) - 1));
    const __m512i base = _mm512_set1_epi64((long long)((uint64_t)p->ebase << 52));
    const __m512i cbase = _mm512_set1_epi64((long long)(p->ebase - 1) << p->M), maxmag = _mm512_set1_epi64(p->maxmag);
    const __m128i shc = _mm_cvtsi32_si128(sh);
    const __mmask8 uns = p->signbit ? 0 : 0xff; /* unsigned formats: negative results take the core */
    __m512i bits, mag;
    __mmask8 neg, inex;
    /* a zero divisor or a negative radicand gives an infinity or a NaN, whose code is
       above maxmag: those lanes need no test of their own */
    if (OP == 3) { /* the quotient rounded in binary64 (2M + N <= 52: the caller) */
        bits = _mm512_castpd_si512(_mm512_div_pd(a, b));
        inex = 0;
    } else {
        const __m512d d = _mm512_sqrt_pd(a), r = _mm512_fnmadd_pd(d, d, a);
        bits = _mm512_mask_sub_epi64(_mm512_castpd_si512(d), _mm512_cmp_pd_mask(r, _mm512_setzero_pd(), _CMP_LT_OQ),
                                     _mm512_castpd_si512(d), _mm512_set1_epi64(1));
        inex = _mm512_cmp_pd_mask(r, _mm512_setzero_pd(), _CMP_NEQ_UQ);
    }
    /* |d| = (biased exponent, 52 fraction bits): K = |d| >> sh less the exponent base,
       t = (|d| & remm) >> (sh - N); one up iff R + t >= 2^N, i.e. iff adding R << (sh - N)
       to |d| carries into bit sh (the bits below sh - N cannot carry) */
    mag = _mm512_and_si512(bits, absm);
    neg = _mm512_movepi64_mask(bits);
    *slow |= _mm512_cmplt_epu64_mask(mag, base) | (neg & uns); /* zero or tiny */
    *inexact = inex | _mm512_test_epi64_mask(bits, remm);
    mag = _mm512_sub_epi64(_mm512_srl_epi64(_mm512_add_epi64(mag, Rs), shc), cbase);
    *slow |= _mm512_cmpgt_epu64_mask(mag, maxmag); /* overflow, infinity, NaN */
    return _mm512_mask_or_epi64(mag, neg, mag, _mm512_set1_epi64((long long)p->signbit));
}

/* eight codes -> binary64 values, *slow = the lanes a16_load512 marks */
SFP8_AVX512 static inline AINL __m512d sr16q_load8(const sfp8s_a16 *d, const uint16_t *x, __mmask8 *slow)
{
    const __m512i v = a16_load512(d, x, _mm512_set1_epi64((long long)d->mask));
    *slow = _mm512_test_epi64_mask(v, _mm512_set1_epi64(0x80));
    return _mm512_castsi512_pd(_mm512_andnot_si512(_mm512_set1_epi64(0xff), v));
}

/* DEC: 1 binary16, 2 bfloat16, 0 arithmetic through binary32 (a16_f32_ok), -1 a16_load512 */
SFP8_AVX512 static inline AINL unsigned sr16q_run(int OP, int DEC, const sfp8s_sr16 *pp, const uint16_t *x,
                                          const uint16_t *y, uint16_t *out, uint8_t *fl, ptrdiff_t n)
{
    /* locals: the stores through fl (a character type) cannot change them */
    const sfp8s_sr16 P = *pp;
    sfp8s_a16 D = *pp->a16;
    const int tsh = 52 - P.M - P.N;
    /* the random word is the high half of rand8_high's lanes: rotated to bit tsh and masked */
    const __m512i rot = _mm512_set1_epi64((tsh - 32) & 63);
    const __m512i rsm = _mm512_set1_epi64((long long)((P.N == 32 ? 0xffffffffULL : (1ULL << P.N) - 1) << tsh));
    const __m512i words = _mm512_set_epi16(60, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 60, 56, 52,
                                           48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0);
    const __m128i fin = _mm_set1_epi8(SFP8_FLAG_INEXACT), fcore = _mm_set1_epi8((char)0x80);
    rng16 g = rng16_init(P.seed_key, P.stream_key, P.index0);
    unsigned anyslow = 0, anyinex = 0;
    D.hw = DEC > 0 ? DEC : 0;
    for (ptrdiff_t i = 0; i < n; i += 16) { /* n: a multiple of 8 */
        const __m512i R0 = _mm512_and_si512(_mm512_rolv_epi64(rand8_high(g.h, g.sk), rot), rsm);
        const __m512i R1 = _mm512_and_si512(_mm512_rolv_epi64(rand8_high(_mm512_add_epi64(g.h, g.step), g.sk), rot), rsm);
        __m512d a0, a1, b0 = _mm512_setzero_pd(), b1 = b0;
        __m512i c0, c1;
        __mmask8 s0, s1, i0, i1;
        __mmask16 slow16, inex16;
        g.h = _mm512_add_epi64(g.h, _mm512_add_epi64(g.step, g.step));
        if (DEC >= 0 && i + 16 <= n) {
            __mmask16 slow = 0;
            const __m512 va = a16_load16f(&D, x + i, &slow);
            a0 = _mm512_cvtps_pd(_mm512_castps512_ps256(va));
            a1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(va), 1)));
            if (OP == 3) {
                const __m512 vb = a16_load16f(&D, y + i, &slow);
                b0 = _mm512_cvtps_pd(_mm512_castps512_ps256(vb));
                b1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(vb), 1)));
            }
            s0 = (__mmask8)slow;
            s1 = (__mmask8)(slow >> 8);
        } else {
            __mmask8 t = 0;
            a0 = sr16q_load8(&D, x + i, &s0);
            if (OP == 3) b0 = sr16q_load8(&D, y + i, &t);
            s0 |= t;
            if (i + 16 > n) { /* the last eight */
                c0 = sr16q_half(&P, OP, a0, b0, &s0, R0, &i0);
                _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi64_epi16(c0));
                _mm_storel_epi64((__m128i *)(fl + i), _mm_mask_mov_epi8(_mm_maskz_mov_epi8(i0, fin), s0, fcore));
                anyslow |= s0;
                anyinex |= (unsigned)(i0 & (__mmask8)~s0);
                break;
            }
            a1 = sr16q_load8(&D, x + i + 8, &s1);
            if (OP == 3) b1 = sr16q_load8(&D, y + i + 8, &t);
            s1 |= t;
        }
        c0 = sr16q_half(&P, OP, a0, b0, &s0, R0, &i0);
        c1 = sr16q_half(&P, OP, a1, b1, &s1, R1, &i1);
        /* the sixteen codes: the low words of both halves' 64-bit lanes */
        _mm256_storeu_si256((__m256i *)(out + i), _mm512_castsi512_si256(_mm512_permutex2var_epi16(c0, words, c1)));
        slow16 = (__mmask16)(s0 | (unsigned)s1 << 8);
        inex16 = (__mmask16)(i0 | (unsigned)i1 << 8);
        /* each element's flags: inexact (covered operands raise none), 0x80 for the core */
        _mm_storeu_si128((__m128i *)(fl + i), _mm_mask_mov_epi8(_mm_maskz_mov_epi8(inex16, fin), slow16, fcore));
        anyslow |= slow16;
        anyinex |= (unsigned)(inex16 & (__mmask16)~slow16);
    }
    return (anyslow ? 0x80u : 0u) | (anyinex ? (unsigned)SFP8_FLAG_INEXACT : 0u);
}

#define SR16Q(NAME, OP)                                                                                        \
    SFP8_AVX512 static unsigned NAME(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,          \
                             uint8_t *fl, ptrdiff_t n)                                                         \
    {                                                                                                          \
        const sfp8s_a16 *d = p->a16;                                                                           \
        if (d->hw) return d->hw == 1 ? sr16q_run(OP, 1, p, x, y, out, fl, n) : sr16q_run(OP, 2, p, x, y, out, fl, n); \
        return a16_f32_ok(d, SFP8S_DIV) ? sr16q_run(OP, 0, p, x, y, out, fl, n)                               \
                                        : sr16q_run(OP, -1, p, x, y, out, fl, n);                              \
    }
SR16Q(sr16div_avx512, 3)
SR16Q(sr16sqrt_avx512, 4)

SFP8_AVX512 static unsigned block_avx512(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                                     uint8_t *fl, ptrdiff_t n)
{
    if (p->op < 3 && p->a16 && a16_f32_ok(p->a16, p->op == 2 ? SFP8S_MUL : SFP8S_ADD))
        return sr16f_avx512(p, x, y, out, fl, n);
    if (p->op == 3 && p->a16) return sr16div_avx512(p, x, y, out, fl, n);
    if (p->op == 4 && p->a16) return sr16sqrt_avx512(p, x, x, out, fl, n);
    return sr16d_avx512(p, x, y, out, fl, n);
}

unsigned sfp8f_sr_arith16_run_avx512(const void *t, const sfp8f_call *c) { return arith16_sr_run(t, c, block_avx512, 2); }
#endif
