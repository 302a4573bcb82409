/* binary32 / binary64 -> 16-bit format casts (float16, bfloat16, hfp16_169,
 * SHP, UHP, custom formats of 9..16 bits) by arithmetic.
 *
 * DERIVED from core.c round_pack, as cast64.c (whose argument this follows,
 * extended to 15 mantissa bits and 16-bit codes): a binary32 value is exact
 * in binary64, so casting it is one rounding of that binary64.  For a finite
 * normal binary64 x of exponent e, em = max(e, emin) and z = x * 2^(M - em)
 * (exact) put the format's quantum at x on 1; K = |z| rounded to an integer in
 * the mode, inexact is K != z, the magnitude code ((em - emin) << M) + K, the
 * carry into the next binade included.  Overflow takes the core's overflow
 * result and flags (sfp8f_rounder); tininess as in cast64.c.
 *
 * Formats sfp8f_rounder covers (signed, IEEE subnormals, not FNUZ / P3109):
 * every lane but NaN, infinity, binary64 / binary32 subnormal inputs and (after
 * rounding tininess) the inexact results 2^emin of x < 2^emin, which take the
 * core element by element.  Other formats (SHP: Tesla subnormals, UHP: flushed
 * subnormals, no sign bit): the lanes with 2^emin <= |x|, no overflow and (no
 * sign bit) x > 0, whose results are normal and round as in any IEEE-like
 * format; every other lane takes the core.
 *
 * Levels (SOFTFP8_SIMD): AVX-512 (sixteen lanes: getexp / scalef /
 * roundscale; binary32 inputs in binary32 arithmetic when -126 <= emin <= M,
 * where every step is exact as in binary64), AVX2 (four binary64 at a time, the exponent read as an
 * integer), portable C (sfp8f_round_doubles, the rounder of round_f64.c, in
 * blocks; formats it does not cover take the core).  Strided inputs are
 * gathered block by block into a contiguous buffer in their own type (the
 * core sees the original bits of uncovered lanes); calls whose output overlaps
 * the input run element by element, in order.
 *
 * Proven equal to the core by tests/fast/test_fast_paths.py::test_cast16_*
 * and tests/fast/test_fast_layouts.py::test_cast_layouts. */
#include <string.h>

#include "cast16.h"
#include "fast_impl.h"
#include "fast_simd.h"
#include "rng.h"

#include "softfp8/softfp8.h"

#define BLK 256

int sfp8f_cast16(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8f_c16 *p)
{
    if (!sfp8f_enabled() || !sfp8f_usable_env(env) || dst->bits <= 8 || dst->bits > 16 ||
        !((src->bits == 32 && src->man_bits == 23) || (src->bits == 64 && src->man_bits == 52)))
        return 0;
    memset(p, 0, sizeof *p);
    p->src = src;
    p->dst = dst;
    p->env = env;
    p->full = sfp8f_rounder(dst, env, &p->r);
    if (!p->full) {
        /* the normal range only: SIMD kernels, the core for the rest */
        if (dst->specials == SFP8_SPECIALS_FNUZ || dst->specials == SFP8_SPECIALS_P3109 || dst->man_bits < 1 ||
            dst->exp_bits < 2 || (dst->subnormals != SFP8_SUBNORMALS_IEEE && dst->subnormals != SFP8_SUBNORMALS_TESLA &&
                                  dst->subnormals != SFP8_SUBNORMALS_FLUSH))
            return 0;
        p->r.M = dst->man_bits;
        p->r.emin = 1 - dst->bias;
        p->r.rounding = env->rounding;
        p->r.maxmag = sfp8_max_code(dst);
        p->r.signbit = dst->is_signed ? (uint32_t)1 << (dst->bits - 1) : 0;
        p->unsig = !dst->is_signed;
    }
    /* z = x * 2^(M - em) stays normal, codes fit 32-bit lanes */
    p->simd = sfp8f_simd_level() >= 1 && p->r.M <= 15 && p->r.emin >= -300 && p->r.emin <= 300;
    p->f32 = p->r.emin >= -126 && p->r.emin <= p->r.M; /* binary32 arithmetic exact (cast512f) */
    return p->full || p->simd;
}

static inline uint64_t load_bits(const char *a, int isize)
{
    if (isize == 4) {
        uint32_t b;
        memcpy(&b, a, 4);
        return b;
    }
    {
        uint64_t b;
        memcpy(&b, a, 8);
        return b;
    }
}

static inline uint16_t by_core(const sfp8f_c16 *p, uint64_t bits, unsigned *fl)
{
    uint8_t f8 = 0;
    uint16_t c = (uint16_t)sfp8_convert(p->src, p->dst, bits, p->env, &f8);
    *fl = f8;
    return c;
}

/* the binary64 value of the input bits if the rounder covers it (finite, normal
   in its own type, or zero); 0 otherwise */
static inline int covered(uint64_t bits, int isize, double *d)
{
    if (isize == 4) {
        uint32_t b = (uint32_t)bits, e = (b >> 23) & 0xff;
        float f;
        if (e == 0xff || (e == 0 && (b << 1))) return 0;
        memcpy(&f, &b, 4);
        *d = (double)f;
        return 1;
    }
    {
        uint64_t e = (bits >> 52) & 0x7ff;
        if (e == 0x7ff || (e == 0 && (bits << 1))) return 0;
        memcpy(d, &bits, 8);
        return 1;
    }
}

/* one element by the rounder (full formats) or the core */
static inline uint16_t one(const sfp8f_c16 *p, uint64_t bits, int isize, unsigned *fl)
{
    double d;
    if (p->full && covered(bits, isize, &d)) {
        uint32_t c = 0;
        *fl = sfp8f_round_doubles(&p->r, &d, 1, &c);
        if (d == 0) c = (bits >> (8 * isize - 1)) ? p->r.signbit : 0;
        return (uint16_t)c;
    }
    return by_core(p, bits, fl);
}

/* element by element, in order (any overlap) */
static unsigned elementwise(const sfp8f_c16 *p, const char *a, ptrdiff_t sa, int isize, char *o, ptrdiff_t so,
                            ptrdiff_t n, uint8_t *flout)
{
    unsigned acc = 0;
    for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
        unsigned fl = 0;
        uint16_t c = one(p, load_bits(a, isize), isize, &fl);
        memcpy(o, &c, 2);
        acc |= fl;
        if (flout) flout[i] = (uint8_t)fl;
    }
    return acc;
}

/* portable C: a contiguous block of the rounder (full formats, no per-element flags) */
static unsigned portable_block(const sfp8f_c16 *p, const char *a, int isize, uint16_t *out, ptrdiff_t n)
{
    double d[BLK];
    uint32_t c[BLK];
    unsigned acc;
    int nb = 0;
    uint16_t bad[BLK];
    if (n <= 0) return 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        if (!covered(load_bits(a + i * isize, isize), isize, &d[i])) {
            d[i] = 1.0; /* exact, no flags: replaced below */
            bad[nb++] = (uint16_t)i;
        }
    }
    acc = sfp8f_round_doubles(&p->r, d, n, c);
    for (ptrdiff_t i = 0; i < n; i++) {
        uint16_t v = (uint16_t)c[i];
        if (d[i] == 0) v = (load_bits(a + i * isize, isize) >> (8 * isize - 1)) ? (uint16_t)p->r.signbit : 0;
        out[i] = v;
    }
    for (int j = 0; j < nb; j++) {
        unsigned fl = 0;
        out[bad[j]] = by_core(p, load_bits(a + (ptrdiff_t)bad[j] * isize, isize), &fl);
        acc |= fl;
    }
    return acc;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "simd_round.h"

#define AINL __attribute__((always_inline))
#define TGT512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define TGT256 __attribute__((target("avx2")))
#define SAE _MM_FROUND_NO_EXC

/* the lanes of mask m take the core */
static void fix_lanes(const sfp8f_c16 *p, const char *in, int isize, uint16_t *out, uint8_t *flo, unsigned m,
                      unsigned *acc)
{
    while (m) {
        int j = __builtin_ctz(m);
        unsigned fl = 0;
        out[j] = by_core(p, load_bits(in + (ptrdiff_t)j * isize, isize), &fl);
        if (flo) flo[j] = (uint8_t)fl;
        *acc |= fl;
        m &= m - 1;
    }
}

/* ---- AVX-512 ---- */

/* eight lanes: K (signed) and em as integers, inexact, sign */
TGT512 static inline AINL void half512(int MODE, __m512d x, __m512d eminv, __m512d Mv, __m256i *k, __m256i *em,
                                       unsigned *ix, unsigned *sg)
{
    const int RN = _MM_FROUND_TO_NEAREST_INT | SAE;
    __m512d m = _mm512_max_round_pd(_mm512_getexp_round_pd(x, SAE), eminv, SAE);
    __m512d z = _mm512_scalef_round_pd(x, _mm512_sub_round_pd(Mv, m, RN), RN);
    __m512d r = round512(MODE, z);
    *ix = _mm512_cmp_round_pd_mask(r, z, _CMP_NEQ_OQ, SAE);
    *k = _mm512_cvtt_roundpd_epi32(r, SAE);
    *em = _mm512_cvtt_roundpd_epi32(m, SAE);
    *sg = _mm512_movepi64_mask(_mm512_castpd_si512(x));
}

typedef struct {
    __m512i maxmag, signbit, ebase, top, ovf0, ovf1, fix, fuf, fo0, fo1;
    __m128i Mc;
} k512;

TGT512 static inline AINL void consts512(const sfp8f_c16 *p, k512 *c)
{
    c->maxmag = _mm512_set1_epi32((int)p->r.maxmag);
    c->signbit = _mm512_set1_epi32((int)p->r.signbit);
    c->ebase = _mm512_set1_epi32(p->r.emin * (1 << p->r.M));
    c->top = _mm512_set1_epi32(1 << p->r.M);
    c->ovf0 = _mm512_set1_epi32((int)p->r.ovf0);
    c->ovf1 = _mm512_set1_epi32((int)p->r.ovf1);
    c->Mc = _mm_cvtsi32_si128(p->r.M);
    c->fix = _mm512_set1_epi32(SFP8_FLAG_INEXACT);
    c->fuf = _mm512_set1_epi32(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW);
    c->fo0 = _mm512_set1_epi32((int)p->r.ovf_fl0);
    c->fo1 = _mm512_set1_epi32((int)p->r.ovf_fl1);
}

/* sixteen lanes from K (signed), em, inexact, sign, |x| < 2^emin: code and flags
   (see cast64.c for tininess); stores them, sends the uncovered lanes to the core
   and ORs the flags into *facc */
TGT512 static inline AINL void lanes512(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                        const k512 *c, __m512i k, __m512i em, unsigned ix, unsigned s,
                                        unsigned below, unsigned bad, const char *in, uint16_t *out, uint8_t *flo,
                                        __m512i *facc, unsigned *a)
{
    __m512i mag = _mm512_add_epi32(_mm512_abs_epi32(k), _mm512_sub_epi32(_mm512_sll_epi32(em, c->Mc), c->ebase));
    __m512i code, fl;
    unsigned ovf, tiny, edge;
    if (MODE == SFP8_ROUND_TO_ODD) mag = _mm512_mask_or_epi32(mag, (__mmask16)ix, mag, _mm512_set1_epi32(1));
    ovf = _mm512_cmpgt_epu32_mask(mag, c->maxmag);
    fl = _mm512_maskz_mov_epi32((__mmask16)ix, c->fix);
    code = _mm512_mask_or_epi32(mag, (__mmask16)s, mag, c->signbit);
    if (FULL) {
        tiny = _mm512_cmplt_epu32_mask(mag, c->top);
        edge = _mm512_mask_cmpeq_epi32_mask((__mmask16)ix, mag, c->top) & below;
        if (TB) tiny |= edge;
        else bad |= edge;
        fl = _mm512_mask_mov_epi32(fl, (__mmask16)(ix & tiny), c->fuf);
        if (ovf) {
            code = _mm512_mask_mov_epi32(code, (__mmask16)(ovf & ~s), c->ovf0);
            code = _mm512_mask_mov_epi32(code, (__mmask16)(ovf & s), c->ovf1);
            fl = _mm512_mask_mov_epi32(fl, (__mmask16)(ovf & ~s), c->fo0);
            fl = _mm512_mask_mov_epi32(fl, (__mmask16)(ovf & s), c->fo1);
        }
    } else {
        /* normal results only: |x| >= 2^emin (zeros included below), no overflow, a sign bit for x < 0 */
        bad |= below | ovf | (p->unsig ? s : 0);
    }
    _mm256_storeu_si256((__m256i *)(void *)out, _mm512_cvtepi32_epi16(code));
    if (FL) _mm_storeu_si128((__m128i *)(void *)flo, _mm512_cvtepi32_epi8(fl));
    if (bad) {
        fl = _mm512_maskz_mov_epi32((__mmask16)~bad, fl);
        fix_lanes(p, in, ISZ, out, FL ? flo : NULL, bad & 0xffff, a);
    }
    *facc = _mm512_or_si512(*facc, fl);
}

TGT512 static inline AINL ptrdiff_t cast512(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                            const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                            unsigned *acc)
{
    const __m512d eminv = _mm512_set1_pd(p->r.emin), Mv = _mm512_set1_pd(p->r.M);
    const __m512d pmin = _mm512_scalef_pd(_mm512_set1_pd(1.0), eminv); /* 2^emin */
    const __m512d mag64 = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffLL));
    k512 c;
    __m512i facc = _mm512_setzero_si512();
    unsigned a = 0;
    ptrdiff_t i = 0;
    consts512(p, &c);
    for (; i + 16 <= n; i += 16) {
        __m256i k0, k1, e0, e1;
        unsigned ix0, ix1, s0, s1, bad, below;
        __m512d x0, x1;
        _mm_prefetch(in + ISZ * i + 4096, _MM_HINT_T0); /* 4 KiB ahead, as cast64.c */
        if (ISZ == 8) _mm_prefetch(in + ISZ * i + 4096 + 64, _MM_HINT_T0);
        if (ISZ == 4) {
            const __m512 xf = _mm512_loadu_ps((const void *)(in + 4 * i));
            bad = _mm512_fpclass_ps_mask(xf, 0xB9); /* QNaN, +-inf, denormal, SNaN */
            x0 = _mm512_cvt_roundps_pd(_mm512_castps512_ps256(xf), SAE);
            x1 = _mm512_cvt_roundps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1)), SAE);
        } else {
            x0 = _mm512_loadu_pd((const void *)(in + 8 * i));
            x1 = _mm512_loadu_pd((const void *)(in + 8 * i + 64));
            bad = _mm512_fpclass_pd_mask(x0, 0xB9) | (unsigned)_mm512_fpclass_pd_mask(x1, 0xB9) << 8;
        }
        half512(MODE, x0, eminv, Mv, &k0, &e0, &ix0, &s0);
        half512(MODE, x1, eminv, Mv, &k1, &e1, &ix1, &s1);
        below = _mm512_cmp_round_pd_mask(_mm512_and_pd(x0, mag64), pmin, _CMP_LT_OQ, SAE) |
                (unsigned)_mm512_cmp_round_pd_mask(_mm512_and_pd(x1, mag64), pmin, _CMP_LT_OQ, SAE) << 8;
        lanes512(MODE, TB, FL, ISZ, FULL, p, &c, _mm512_inserti64x4(_mm512_castsi256_si512(k0), k1, 1),
                 _mm512_inserti64x4(_mm512_castsi256_si512(e0), e1, 1), ix0 | ix1 << 8, s0 | s1 << 8, below, bad,
                 in + (ptrdiff_t)ISZ * i, out + i, FL ? flo + i : NULL, &facc, &a);
    }
    *acc |= a | (unsigned)_mm512_reduce_or_epi32(facc);
    return i;
}

/* binary32 input in binary32 arithmetic, sixteen lanes at once (p->f32): exact
   when -126 <= emin <= M, since then z = x * 2^(M - em) of a normal binary32 x is a
   normal binary32 below 2^(M + 1) (the same steps as above in the narrower type) */
TGT512 static inline AINL __m512 round512f(int MODE, __m512 z)
{
    switch (MODE) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm512_roundscale_round_ps(z, _MM_FROUND_TO_NEAREST_INT, SAE);
    case SFP8_ROUND_UPWARD: return _mm512_roundscale_round_ps(z, _MM_FROUND_TO_POS_INF, SAE);
    case SFP8_ROUND_DOWNWARD: return _mm512_roundscale_round_ps(z, _MM_FROUND_TO_NEG_INF, SAE);
    case SFP8_ROUND_NEAREST_AWAY: {
        const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
        const __m512i half = _mm512_set1_epi32(0x3f000000);
        __m512 h = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(z), sign, half, 0xEA));
        return _mm512_roundscale_round_ps(_mm512_add_round_ps(z, h, _MM_FROUND_TO_ZERO | SAE),
                                          _MM_FROUND_TO_ZERO, SAE);
    }
    default: return _mm512_roundscale_round_ps(z, _MM_FROUND_TO_ZERO, SAE);
    }
}

TGT512 static inline AINL ptrdiff_t cast512f(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                             const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                             unsigned *acc)
{
    const int RN = _MM_FROUND_TO_NEAREST_INT | SAE;
    const __m512 eminv = _mm512_set1_ps((float)p->r.emin), Mv = _mm512_set1_ps((float)p->r.M);
    const __m512 pmin = _mm512_scalef_ps(_mm512_set1_ps(1.0f), eminv); /* 2^emin */
    const __m512 mag32 = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    k512 c;
    __m512i facc = _mm512_setzero_si512();
    unsigned a = 0;
    ptrdiff_t i = 0;
    (void)ISZ;
    consts512(p, &c);
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps((const void *)(in + 4 * i));
        __m512 m, z, r;
        _mm_prefetch(in + 4 * i + 4096, _MM_HINT_T0);
        m = _mm512_max_round_ps(_mm512_getexp_round_ps(x, SAE), eminv, SAE);
        z = _mm512_scalef_round_ps(x, _mm512_sub_round_ps(Mv, m, RN), RN);
        r = round512f(MODE, z);
        lanes512(MODE, TB, FL, 4, FULL, p, &c, _mm512_cvtt_roundps_epi32(r, SAE), _mm512_cvtt_roundps_epi32(m, SAE),
                 _mm512_cmp_round_ps_mask(r, z, _CMP_NEQ_OQ, SAE), _mm512_movepi32_mask(_mm512_castps_si512(x)),
                 _mm512_cmp_round_ps_mask(_mm512_and_ps(x, mag32), pmin, _CMP_LT_OQ, SAE),
                 _mm512_fpclass_ps_mask(x, 0xB9) /* QNaN, +-inf, denormal, SNaN */, in + 4 * i, out + i,
                 FL ? flo + i : NULL, &facc, &a);
    }
    *acc |= a | (unsigned)_mm512_reduce_or_epi32(facc);
    return i;
}

#define C16_CASE(fn, FL, ISZ, FULL, MODE)                                                                      \
    case MODE:                                                                                                 \
        return p->r.tb ? fn(MODE, 1, FL, ISZ, FULL, p, in, out, flo, n, acc)                                  \
                       : fn(MODE, 0, FL, ISZ, FULL, p, in, out, flo, n, acc);
#define C16_MODES(fn, FL, ISZ, FULL)                                                                           \
    switch (p->r.rounding) {                                                                                   \
        C16_CASE(fn, FL, ISZ, FULL, SFP8_ROUND_NEAREST_EVEN)                                                   \
        C16_CASE(fn, FL, ISZ, FULL, SFP8_ROUND_NEAREST_AWAY)                                                   \
        C16_CASE(fn, FL, ISZ, FULL, SFP8_ROUND_TOWARD_ZERO)                                                    \
        C16_CASE(fn, FL, ISZ, FULL, SFP8_ROUND_UPWARD)                                                         \
        C16_CASE(fn, FL, ISZ, FULL, SFP8_ROUND_DOWNWARD)                                                       \
        C16_CASE(fn, FL, ISZ, FULL, SFP8_ROUND_TO_ODD)                                                         \
    default: return 0;                                                                                         \
    }
#define C16_FL(fn, ISZ, FULL)                                                                                  \
    if (flo) {                                                                                                 \
        C16_MODES(fn, 1, ISZ, FULL)                                                                            \
    }                                                                                                          \
    C16_MODES(fn, 0, ISZ, FULL)
#define C16_ALL(fn)                                                                                            \
    if (isize == 4 && p->full) {                                                                               \
        C16_FL(fn, 4, 1)                                                                                       \
    }                                                                                                          \
    if (isize == 4) {                                                                                          \
        C16_FL(fn, 4, 0)                                                                                       \
    }                                                                                                          \
    if (p->full) {                                                                                             \
        C16_FL(fn, 8, 1)                                                                                       \
    }                                                                                                          \
    C16_FL(fn, 8, 0)

TGT512 static ptrdiff_t kernel512f(const sfp8f_c16 *p, const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                   unsigned *acc)
{
    if (p->full) {
        C16_FL(cast512f, 4, 1)
    }
    C16_FL(cast512f, 4, 0)
}

TGT512 static ptrdiff_t kernel512(const sfp8f_c16 *p, const char *in, int isize, uint16_t *out, uint8_t *flo,
                                  ptrdiff_t n, unsigned *acc)
{
    if (isize == 4 && p->f32) return kernel512f(p, in, out, flo, n, acc);
    C16_ALL(cast512)
}

/* ---- AVX2: four binary64 lanes at a time (see cast64.c) ---- */

typedef struct {
    __m256i absm, minn, span, ebmin, c2046m, two52, pmin, top, maxmag, signbit, ovf0, ovf1, fix, fuf, fo0, fo1;
    __m128i Mc;
    int unsig;
} k256;

/* four lanes (binary64 bits b): code, flags; returns the uncovered lanes (all ones) */
TGT256 static inline AINL __m256i lane4(int MODE, int TB, int FULL, const k256 *c, __m256i b, __m256i *code,
                                        __m256i *fl)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i abs = _mm256_and_si256(b, c->absm), t = _mm256_sub_epi64(abs, c->minn);
    __m256i ok = _mm256_or_si256(_mm256_andnot_si256(_mm256_cmpgt_epi64(zero, t), _mm256_cmpgt_epi64(c->span, t)),
                                 _mm256_cmpeq_epi64(abs, zero)); /* normal or zero */
    __m256i em = _mm256_max_epi32(_mm256_srli_epi64(abs, 52), c->ebmin);
    __m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(c->c2046m, em), 52));
    __m256d z = _mm256_mul_pd(_mm256_castsi256_pd(_mm256_and_si256(b, ok)), scale);
    __m256d r = round256(MODE, z);
    __m256i ix = _mm256_castpd_si256(_mm256_cmp_pd(r, z, _CMP_NEQ_OQ));
    __m256i k = _mm256_sub_epi64(
        _mm256_castpd_si256(_mm256_add_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), r), _mm256_castsi256_pd(c->two52))),
        c->two52);
    __m256i mag = _mm256_add_epi64(_mm256_sll_epi64(_mm256_sub_epi64(em, c->ebmin), c->Mc), k);
    __m256i sg = _mm256_cmpgt_epi64(zero, b), ovf, bad = _mm256_xor_si256(ok, _mm256_cmpeq_epi64(ok, ok));
    __m256i below = _mm256_cmpgt_epi64(c->pmin, abs);
    if (MODE == SFP8_ROUND_TO_ODD) mag = _mm256_or_si256(mag, _mm256_srli_epi64(ix, 63));
    ovf = _mm256_cmpgt_epi64(mag, c->maxmag);
    *code = _mm256_or_si256(mag, _mm256_and_si256(sg, c->signbit));
    if (FULL) {
        __m256i tiny = _mm256_cmpgt_epi64(c->top, mag);
        __m256i edge = _mm256_and_si256(_mm256_and_si256(ix, _mm256_cmpeq_epi64(mag, c->top)), below);
        if (TB) tiny = _mm256_or_si256(tiny, edge);
        else bad = _mm256_or_si256(bad, edge);
        *code = _mm256_blendv_epi8(*code, _mm256_blendv_epi8(c->ovf0, c->ovf1, sg), ovf);
        *fl = _mm256_and_si256(ix, _mm256_blendv_epi8(c->fix, c->fuf, tiny));
        *fl = _mm256_blendv_epi8(*fl, _mm256_blendv_epi8(c->fo0, c->fo1, sg), ovf);
    } else {
        bad = _mm256_or_si256(_mm256_or_si256(bad, below), ovf);
        if (c->unsig) bad = _mm256_or_si256(bad, sg);
        *fl = _mm256_and_si256(ix, c->fix);
    }
    *fl = _mm256_andnot_si256(bad, *fl);
    return bad;
}

/* the low 16 bits of four vectors of four 64-bit lanes, in order */
TGT256 static inline AINL __m256i pack16x16(const __m256i v[4])
{
    const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m256i lo = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(v[0], idx),
                                           _mm256_permutevar8x32_epi32(v[1], idx), 0x20);
    __m256i hi = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(v[2], idx),
                                           _mm256_permutevar8x32_epi32(v[3], idx), 0x20);
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
}

/* stores sixteen codes and (flo) flags from four vectors of four 64-bit lanes
   each; ORs the flags into *facc */
TGT256 static inline AINL void store16x4(const __m256i code[4], const __m256i fl[4], uint16_t *out, uint8_t *flo,
                                         __m256i *facc)
{
    __m256i w = pack16x16(fl);
    _mm256_storeu_si256((__m256i *)(void *)out, pack16x16(code));
    if (flo) {
        __m256i q8 = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
        _mm_storeu_si128((__m128i *)(void *)flo, _mm256_castsi256_si128(q8));
    }
    *facc = _mm256_or_si256(*facc, w);
}

/* the OR of sixteen 16-bit lanes */
TGT256 static inline AINL unsigned or16x16(__m256i v)
{
    uint16_t f[16];
    unsigned r = 0;
    _mm256_storeu_si256((__m256i *)(void *)f, v);
    for (int q = 0; q < 16; q++) r |= f[q];
    return r;
}

TGT256 static inline AINL ptrdiff_t cast256(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                            const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                            unsigned *acc)
{
    k256 c;
    __m256i facc = _mm256_setzero_si256();
    unsigned a = 0;
    ptrdiff_t i = 0;
    c.absm = _mm256_set1_epi64x(0x7fffffffffffffffLL);
    c.minn = _mm256_set1_epi64x(0x0010000000000000LL);
    c.span = _mm256_set1_epi64x(0x7fe0000000000000LL);
    c.ebmin = _mm256_set1_epi64x(p->r.emin + 1023);
    c.c2046m = _mm256_set1_epi64x(2046 + p->r.M);
    c.two52 = _mm256_set1_epi64x(0x4330000000000000LL);
    c.pmin = _mm256_set1_epi64x((long long)(p->r.emin + 1023) << 52);
    c.top = _mm256_set1_epi64x(1 << p->r.M);
    c.maxmag = _mm256_set1_epi64x(p->r.maxmag);
    c.signbit = _mm256_set1_epi64x(p->r.signbit);
    c.ovf0 = _mm256_set1_epi64x(p->r.ovf0);
    c.ovf1 = _mm256_set1_epi64x(p->r.ovf1);
    c.fix = _mm256_set1_epi64x(SFP8_FLAG_INEXACT);
    c.fuf = _mm256_set1_epi64x(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW);
    c.fo0 = _mm256_set1_epi64x(p->r.ovf_fl0);
    c.fo1 = _mm256_set1_epi64x(p->r.ovf_fl1);
    c.Mc = _mm_cvtsi32_si128(p->r.M);
    c.unsig = p->unsig;
    for (; i + 16 <= n; i += 16) {
        __m256i code[4], fl[4];
        unsigned bad = 0;
        for (int q = 0; q < 4; q++) {
            __m256i b;
            if (ISZ == 4) {
                const __m128i fb = _mm_loadu_si128((const __m128i *)(const void *)(in + 4 * (i + 4 * q)));
                const __m128i ex = _mm_and_si128(fb, _mm_set1_epi32(0x7f800000));
                const __m128i sub = _mm_andnot_si128(_mm_cmpeq_epi32(_mm_and_si128(fb, _mm_set1_epi32(0x7fffffff)),
                                                                     _mm_setzero_si128()),
                                                     _mm_cmpeq_epi32(ex, _mm_setzero_si128()));
                bad |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(sub)) << (4 * q); /* binary32 subnormals */
                b = _mm256_castpd_si256(_mm256_cvtps_pd(_mm_castsi128_ps(fb)));
            } else {
                b = _mm256_loadu_si256((const __m256i *)(const void *)(in + 8 * (i + 4 * q)));
            }
            bad |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(lane4(MODE, TB, FULL, &c, b, &code[q], &fl[q])))
                   << (4 * q);
        }
        store16x4(code, fl, out + i, FL ? flo + i : NULL, &facc);
        if (bad) fix_lanes(p, in + (ptrdiff_t)ISZ * i, ISZ, out + i, FL ? flo + i : NULL, bad, &a);
    }
    *acc |= a | or16x16(facc);
    return i;
}

TGT256 static ptrdiff_t kernel256(const sfp8f_c16 *p, const char *in, int isize, uint16_t *out, uint8_t *flo,
                                  ptrdiff_t n, unsigned *acc)
{
    C16_ALL(cast256)
}

static ptrdiff_t kernel(int level, const sfp8f_c16 *p, const char *in, int isize, uint16_t *out, uint8_t *flo,
                        ptrdiff_t n, unsigned *acc)
{
    return level >= 2 ? kernel512(p, in, isize, out, flo, n, acc) : kernel256(p, in, isize, out, flo, n, acc);
}

#else /* no x86-64 SIMD: the portable path */

static ptrdiff_t kernel(int level, const sfp8f_c16 *p, const char *in, int isize, uint16_t *out, uint8_t *flo,
                        ptrdiff_t n, unsigned *acc)
{
    (void)level; (void)p; (void)in; (void)isize; (void)out; (void)flo; (void)n; (void)acc;
    return 0;
}
#endif

/* a run of m (<= BLK unless contiguous) elements, the call's element i0 first, from
   contiguous in to contiguous out: the flags */
typedef unsigned (*block_fn)(const void *ctx, ptrdiff_t i0, const char *in, uint16_t *out, uint8_t *flo,
                             ptrdiff_t m);

/* the elements i0.. of a call, block by block: strided inputs gathered in their
   own type (the core sees the original bits of uncovered lanes), strided outputs
   scattered */
static unsigned blocked(block_fn f, const void *ctx, ptrdiff_t i0, const char *a, ptrdiff_t sa, int isize, char *o,
                        ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    unsigned acc = 0;
    for (ptrdiff_t i = i0; i < n; i += BLK) {
        const ptrdiff_t m = n - i < BLK ? n - i : BLK;
        _Alignas(64) char ibuf[BLK * 8];
        uint16_t obuf[BLK];
        const char *in = a + i * sa;
        uint16_t *out = so == 2 ? (uint16_t *)(void *)(o + i * so) : obuf;
        if (sa != isize) {
            for (ptrdiff_t q = 0; q < m; q++) memcpy(ibuf + q * isize, in + q * sa, (size_t)isize);
            in = ibuf;
        }
        acc |= f(ctx, i, in, out, flout ? flout + i : NULL, m);
        if (out == obuf)
            for (ptrdiff_t q = 0; q < m; q++) memcpy(o + (i + q) * so, &obuf[q], 2);
    }
    return acc;
}

typedef struct {
    const sfp8f_c16 *p;
    int level, isize;
} nearest_ctx;

static unsigned nearest_block(const void *ctx, ptrdiff_t i0, const char *in, uint16_t *out, uint8_t *flo,
                              ptrdiff_t m)
{
    const nearest_ctx *c = ctx;
    unsigned acc = 0;
    ptrdiff_t j;
    (void)i0;
    if (c->level == 0) return portable_block(c->p, in, c->isize, out, m);
    j = kernel(c->level, c->p, in, c->isize, out, flo, m, &acc);
    return acc | elementwise(c->p, in + j * c->isize, c->isize, c->isize, (char *)(out + j), 2, m - j,
                             flo ? flo + j : NULL);
}

unsigned sfp8f_run_cast16(const sfp8f_c16 *p, const char *a, ptrdiff_t sa, int isize, char *o, ptrdiff_t so,
                          ptrdiff_t n, uint8_t *flout)
{
    const nearest_ctx c = {p, p->simd ? sfp8f_simd_level() : 0, isize};
    unsigned acc = 0;
    ptrdiff_t i0 = 0;
    if (!sfp8f_apart(o, so, 2, a, sa, isize, n) || (c.level == 0 && (flout || !p->full)))
        return elementwise(p, a, sa, isize, o, so, n, flout);
    if (c.level >= 1 && sa == isize && so == 2) /* contiguous: one kernel call, the tail below */
        i0 = kernel(c.level, p, a, isize, (uint16_t *)(void *)o, flout, n, &acc);
    return acc | blocked(nearest_block, &c, i0, a, sa, isize, o, so, n, flout);
}

/* ---- stochastic rounding (DERIVED from core.c round_pack's stochastic branch,
 *      as stochastic.c for 8-bit formats): for a binary32 / binary64 x of
 *      exponent e >= emin whose result does not overflow, the result is the
 *      truncated magnitude ((e - emin + 1) << M) + (mantissa >> sh) plus one
 *      if t + R >= 2^N, t = floor(fraction * 2^N) of the sh discarded bits and
 *      R the element's counter-based random bits (rng.h: the core's generator,
 *      keyed on seed, stream and element index); inexact iff the fraction is
 *      not zero (a normal result is never tiny).  Everything else (zeros,
 *      NaN, infinity, e < emin, overflow, negative values of unsigned formats)
 *      takes the core with the same random bits.
 *
 *      The SIMD kernels compute the same in integer lanes: with
 *      q = |bits| >> sh (the exponent field and the top M mantissa bits),
 *      the truncated magnitude is q - ((bias + emin - 1) << M), e >= emin and
 *      "finite" are qlo <= q < qhi (the bounds shifted alike: exact, as they
 *      have no bits below 2^sh), and t + R >= 2^N is R > (2^N - 1) - t
 *      (no carry out of 32 bits).  The random words come from simd_rng.h,
 *      lane j of a call the word of element index0 + j; uncovered lanes take
 *      the core with that word.  Levels: AVX-512 (sixteen 32-bit lanes),
 *      AVX2 (four 64-bit lanes at a time, sixteen a block), portable C (the
 *      element loop sr_scalar).  Strided inputs are gathered block by block
 *      (the element index follows the logical position); calls whose output
 *      overlaps the input run element by element, in order.
 *
 *      Proven equal to the core by tests/fast/test_fast_arith.py::test_stochastic_cast*
 *      and tests/fast/test_fast_layouts.py::test_stochastic_layouts. ---- */

int sfp8f_cast16_sr(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8f_c16 *p)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || dst->bits <= 8 || dst->bits > 16 ||
        !((src->bits == 32 && src->man_bits == 23) || (src->bits == 64 && src->man_bits == 52)) ||
        dst->specials == SFP8_SPECIALS_FNUZ || dst->specials == SFP8_SPECIALS_P3109 || dst->man_bits < 1 ||
        dst->man_bits > 15 || dst->exp_bits < 2 ||
        (dst->subnormals != SFP8_SUBNORMALS_IEEE && dst->subnormals != SFP8_SUBNORMALS_TESLA &&
         dst->subnormals != SFP8_SUBNORMALS_FLUSH))
        return 0;
    memset(p, 0, sizeof *p);
    p->src = src;
    p->dst = dst;
    p->env = env;
    p->r.M = dst->man_bits;
    p->r.emin = 1 - dst->bias;
    p->r.maxmag = sfp8_max_code(dst);
    p->r.signbit = dst->is_signed ? (uint32_t)1 << (dst->bits - 1) : 0;
    p->unsig = !dst->is_signed;
    /* the lane arithmetic stays within 32 bits */
    p->simd = sfp8f_simd_level() >= 1 && p->r.emin >= -300 && p->r.emin <= 300;
    return 1;
}

/* one stochastic cast call: the rule's constants and the generator's keys */
typedef struct {
    const sfp8f_c16 *p;
    uint64_t hs, base;    /* sfp8r_seed_key(seed), sfp8r_stream_key(stream) */
    int N, sh, isize;     /* sr_bits, discarded bits, input size */
    int tl, tr;           /* t = (discarded bits << tl) >> tr: N bits */
    uint32_t Rmask;       /* 2^N - 1 */
    int32_t off;          /* (bias + emin - 1) << M: q - off is the truncated magnitude */
    uint32_t qlo, qhi;    /* covered: qlo <= q < qhi */
    uint64_t index0;      /* the index of the call's first element */
    int level;            /* SIMD level (0: sr_scalar) */
} srctx;

static void sr_init(srctx *c, const sfp8f_c16 *p, uint64_t seed, uint64_t stream, uint64_t index0, int isize)
{
    const int ebias = isize == 4 ? 127 : 1023, emaxf = isize == 4 ? 255 : 2047;
    int L = p->r.emin + ebias; /* the smallest covered exponent field */
    c->p = p;
    c->index0 = index0;
    c->level = p->simd ? sfp8f_simd_level() : 0;
    c->hs = sfp8r_seed_key(seed);
    c->base = sfp8r_stream_key(stream);
    c->N = p->env->sr_bits >= 1 && p->env->sr_bits <= 32 ? p->env->sr_bits : 32;
    c->isize = isize;
    c->sh = (isize == 4 ? 23 : 52) - p->r.M;
    c->tl = c->N >= c->sh ? c->N - c->sh : 0;
    c->tr = c->N >= c->sh ? 0 : c->sh - c->N;
    c->Rmask = c->N == 32 ? 0xffffffffu : ((1u << c->N) - 1);
    c->off = (int32_t)((ebias + p->r.emin - 1) * (1 << p->r.M));
    if (L < 1) L = 1;
    if (L > emaxf) L = emaxf;
    c->qlo = (uint32_t)L << p->r.M;
    c->qhi = (uint32_t)emaxf << p->r.M;
}

/* the core, with the element's random word */
static inline uint16_t sr_core(const srctx *c, uint64_t bits, uint32_t R, unsigned *fl)
{
    sfp8_env e2 = *c->p->env;
    uint8_t f8 = 0;
    uint16_t v;
    e2.random = R;
    v = (uint16_t)sfp8_convert(c->p->src, c->p->dst, bits, &e2, &f8);
    *fl = f8;
    return v;
}

/* portable C, element by element in order (any overlap); element i has index index0 + i */
static unsigned sr_scalar(const srctx *c, uint64_t index0, const char *a, ptrdiff_t sa, char *o, ptrdiff_t so,
                          ptrdiff_t n, uint8_t *flout)
{
    const sfp8f_c16 *p = c->p;
    const int isize = c->isize, N = c->N, M = p->r.M, emin = p->r.emin, sh = c->sh;
    const int ebias = isize == 4 ? 127 : 1023, emaxf = isize == 4 ? 255 : 2047;
    const uint64_t manmask = isize == 4 ? 0x7fffffULL : 0xFFFFFFFFFFFFFULL;
    unsigned acc = 0;
    for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
        const uint32_t R = sfp8r_bits(c->hs, c->base, index0 + (uint64_t)i);
        const uint64_t b = load_bits(a, isize);
        const int s = (int)(b >> (8 * isize - 1));
        const int E = (int)((b >> (isize == 4 ? 23 : 52)) & (uint64_t)emaxf);
        uint16_t v;
        unsigned fl;
        if (E != 0 && E != emaxf && E - ebias >= emin && !(s && p->unsig)) {
            const uint64_t mant = b & manmask, rem = mant & ((1ULL << sh) - 1);
            const uint64_t t = N >= sh ? rem << (N - sh) : rem >> (sh - N);
            const uint64_t code = ((uint64_t)(E - ebias - emin + 1) << M) + (mant >> sh) +
                                  (uint64_t)(t + (R & c->Rmask) >= (1ULL << N));
            if (code <= p->r.maxmag) {
                v = (uint16_t)(code | (s ? p->r.signbit : 0));
                fl = rem ? SFP8_FLAG_INEXACT : 0;
                goto store;
            }
        }
        v = sr_core(c, b, R, &fl);
    store:
        memcpy(o, &v, 2);
        acc |= fl;
        if (flout) flout[i] = (uint8_t)fl;
    }
    return acc;
}

#if defined(__x86_64__) && defined(__GNUC__)

#include "simd_rng.h"

/* the lanes of mask m (random words R) take the core */
static void sr_fix(const srctx *c, const char *in, uint16_t *out, uint8_t *flo, unsigned m, const uint32_t *R,
                   unsigned *acc)
{
    while (m) {
        int j = __builtin_ctz(m);
        unsigned fl = 0;
        out[j] = sr_core(c, load_bits(in + (ptrdiff_t)j * c->isize, c->isize), R[j], &fl);
        if (flo) flo[j] = (uint8_t)fl;
        *acc |= fl;
        m &= m - 1;
    }
}

/* ---- AVX-512: sixteen 32-bit lanes a block ---- */

TGT512 static inline AINL ptrdiff_t sr512(int ISZ, int FL, const srctx *c, uint64_t index0, const char *in,
                                          uint16_t *out, uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    const sfp8f_c16 *p = c->p;
    /* binary32: q = |b| >> sh, t = (b << (32 - sh)) >> (32 - N); binary64: w = |b| >> (sh - 32)
       holds q in its high half and the top 32 discarded bits in its low half */
    const __m128i shc = _mm_cvtsi32_si128(ISZ == 4 ? c->sh : c->sh - 32);
    const __m128i dsh = _mm_cvtsi32_si128(32 - c->sh), nsh = _mm_cvtsi32_si128(32 - c->N);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i rmask = _mm512_set1_epi32((int)c->Rmask), off = _mm512_set1_epi32(c->off);
    const __m512i qlo = _mm512_set1_epi32((int)c->qlo), qhi = _mm512_set1_epi32((int)c->qhi);
    const __m512i maxmag = _mm512_set1_epi32((int)p->r.maxmag), signbit = _mm512_set1_epi32((int)p->r.signbit);
    const __m512i one = _mm512_set1_epi32(1), fix = _mm512_set1_epi32(SFP8_FLAG_INEXACT);
    const __m512i remm = ISZ == 4 ? _mm512_set1_epi32((int)((1u << c->sh) - 1))
                                  : _mm512_set1_epi64((long long)((1ULL << c->sh) - 1));
    const __m512i absm = ISZ == 4 ? _mm512_set1_epi32(0x7fffffff) : _mm512_set1_epi64(0x7fffffffffffffffLL);
    const unsigned unsig = p->unsig ? 0xffffu : 0;
    rng16 g = rng16_init(c->hs, c->base, index0);
    __m512i facc = _mm512_setzero_si512();
    unsigned a = 0;
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i R = rng16_next(&g);
        __m512i q, t, code, fl;
        unsigned ix, s, up, bad;
        if (ISZ == 4) {
            const __m512i b = _mm512_loadu_si512((const void *)(in + 4 * i));
            q = _mm512_srl_epi32(_mm512_and_si512(b, absm), shc);
            t = _mm512_srl_epi32(_mm512_sll_epi32(b, dsh), nsh);
            ix = _mm512_test_epi32_mask(b, remm);
            s = _mm512_movepi32_mask(b);
        } else {
            /* sh >= 37: q has at most 26 bits, t is the top N of the sh discarded bits */
            const __m512i b0 = _mm512_loadu_si512((const void *)(in + 8 * i));
            const __m512i b1 = _mm512_loadu_si512((const void *)(in + 8 * i + 64));
            __m512i w0, w1;
            _mm_prefetch(in + 8 * i + 4096, _MM_HINT_T0);
            _mm_prefetch(in + 8 * i + 4096 + 64, _MM_HINT_T0);
            w0 = _mm512_srl_epi64(_mm512_and_si512(b0, absm), shc);
            w1 = _mm512_srl_epi64(_mm512_and_si512(b1, absm), shc);
            q = _mm512_permutex2var_epi32(w0, odd, w1);
            t = _mm512_srl_epi32(_mm512_permutex2var_epi32(w0, even, w1), nsh);
            ix = _mm512_test_epi64_mask(b0, remm) | (unsigned)_mm512_test_epi64_mask(b1, remm) << 8;
            s = _mm512_movepi64_mask(b0) | (unsigned)_mm512_movepi64_mask(b1) << 8;
        }
        up = _mm512_cmpgt_epu32_mask(_mm512_and_si512(R, rmask), _mm512_sub_epi32(rmask, t));
        code = _mm512_sub_epi32(q, off);
        code = _mm512_mask_add_epi32(code, (__mmask16)up, code, one);
        bad = _mm512_cmplt_epu32_mask(q, qlo) | _mm512_cmpge_epu32_mask(q, qhi) |
              _mm512_cmpgt_epi32_mask(code, maxmag) | (s & unsig);
        code = _mm512_mask_or_epi32(code, (__mmask16)s, code, signbit);
        fl = _mm512_maskz_mov_epi32((__mmask16)(ix & ~bad), fix);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm512_cvtepi32_epi16(code));
        if (FL) _mm_storeu_si128((__m128i *)(void *)(flo + i), _mm512_cvtepi32_epi8(fl));
        facc = _mm512_or_si512(facc, fl);
        if (bad) {
            uint32_t rw[16];
            _mm512_storeu_si512((void *)rw, R);
            sr_fix(c, in + ISZ * i, out + i, FL ? flo + i : NULL, bad, rw, &a);
        }
    }
    *acc |= a | (unsigned)_mm512_reduce_or_epi32(facc);
    return i;
}

/* the kernel fn instantiated per input size and per-element flags */
#define SR_ALL(fn)                                                                                             \
    if (c->isize == 4)                                                                                         \
        return flo ? fn(4, 1, c, index0, in, out, flo, n, acc) : fn(4, 0, c, index0, in, out, flo, n, acc);   \
    return flo ? fn(8, 1, c, index0, in, out, flo, n, acc) : fn(8, 0, c, index0, in, out, flo, n, acc);

TGT512 static ptrdiff_t sr_kernel512(const srctx *c, uint64_t index0, const char *in, uint16_t *out, uint8_t *flo,
                                     ptrdiff_t n, unsigned *acc)
{
    SR_ALL(sr512)
}

/* ---- AVX2: four 64-bit lanes at a time, sixteen a block ---- */

TGT256 static inline AINL ptrdiff_t sr256(int ISZ, int FL, const srctx *c, uint64_t index0, const char *in,
                                          uint16_t *out, uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    const sfp8f_c16 *p = c->p;
    const __m128i shc = _mm_cvtsi32_si128(c->sh);
    const __m128i tl = _mm_cvtsi32_si128(c->tl), tr = _mm_cvtsi32_si128(c->tr);
    const __m256i rmask = _mm256_set1_epi64x(c->Rmask), off = _mm256_set1_epi64x(c->off);
    const __m256i qlo = _mm256_set1_epi64x(c->qlo), qhi1 = _mm256_set1_epi64x((long long)c->qhi - 1);
    const __m256i maxmag = _mm256_set1_epi64x(p->r.maxmag), signbit = _mm256_set1_epi64x(p->r.signbit);
    const __m256i fix = _mm256_set1_epi64x(SFP8_FLAG_INEXACT), zero = _mm256_setzero_si256();
    const __m256i remm = _mm256_set1_epi64x((long long)((1ULL << c->sh) - 1));
    const __m256i absm = _mm256_set1_epi64x(ISZ == 4 ? 0x7fffffffLL : 0x7fffffffffffffffLL);
    const __m256i unsig = p->unsig ? _mm256_set1_epi64x(-1) : zero;
    rng4 g = rng4_init(c->hs, c->base, index0);
    __m256i facc = zero;
    unsigned a = 0;
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i code[4], fl[4], R[4];
        unsigned bad = 0;
        for (int k = 0; k < 4; k++) {
            __m256i b, q, t, rem, s, cd, badv;
            if (ISZ == 4) {
                b = _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(in + 4 * (i + 4 * k))));
                s = _mm256_cmpgt_epi64(b, _mm256_set1_epi64x(0x7fffffffLL));
            } else {
                b = _mm256_loadu_si256((const __m256i *)(const void *)(in + 8 * (i + 4 * k)));
                s = _mm256_cmpgt_epi64(zero, b);
            }
            R[k] = rng4_next(&g);
            rem = _mm256_and_si256(b, remm);
            q = _mm256_srl_epi64(_mm256_and_si256(b, absm), shc);
            t = _mm256_srl_epi64(_mm256_sll_epi64(rem, tl), tr);
            /* t + R >= 2^N; then up is -1 */
            cd = _mm256_sub_epi64(
                _mm256_sub_epi64(q, off),
                _mm256_cmpgt_epi64(_mm256_and_si256(R[k], rmask), _mm256_sub_epi64(rmask, t)));
            badv = _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi64(qlo, q), _mm256_cmpgt_epi64(q, qhi1)),
                                   _mm256_or_si256(_mm256_cmpgt_epi64(cd, maxmag), _mm256_and_si256(s, unsig)));
            code[k] = _mm256_or_si256(cd, _mm256_and_si256(s, signbit));
            fl[k] = _mm256_andnot_si256(_mm256_or_si256(badv, _mm256_cmpeq_epi64(rem, zero)), fix);
            bad |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(badv)) << (4 * k);
        }
        store16x4(code, fl, out + i, FL ? flo + i : NULL, &facc);
        if (bad) {
            uint64_t r64[16];
            uint32_t rw[16];
            for (int k = 0; k < 4; k++) _mm256_storeu_si256((__m256i *)(void *)(r64 + 4 * k), R[k]);
            for (int k = 0; k < 16; k++) rw[k] = (uint32_t)r64[k];
            sr_fix(c, in + ISZ * i, out + i, FL ? flo + i : NULL, bad, rw, &a);
        }
    }
    *acc |= a | or16x16(facc);
    return i;
}

TGT256 static ptrdiff_t sr_kernel256(const srctx *c, uint64_t index0, const char *in, uint16_t *out, uint8_t *flo,
                                     ptrdiff_t n, unsigned *acc)
{
    SR_ALL(sr256)
}

/* the SIMD kernel of the level on contiguous in / out (whole blocks of sixteen; the
   count done) */
static ptrdiff_t sr_kernel(int level, const srctx *c, uint64_t index0, const char *in, uint16_t *out, uint8_t *flo,
                           ptrdiff_t n, unsigned *acc)
{
    return level >= 2 ? sr_kernel512(c, index0, in, out, flo, n, acc)
                      : sr_kernel256(c, index0, in, out, flo, n, acc);
}

#else /* no x86-64 SIMD: the portable loop */

static ptrdiff_t sr_kernel(int level, const srctx *c, uint64_t index0, const char *in, uint16_t *out, uint8_t *flo,
                           ptrdiff_t n, unsigned *acc)
{
    (void)level; (void)c; (void)index0; (void)in; (void)out; (void)flo; (void)n; (void)acc;
    return 0;
}
#endif

static unsigned sr_block(const void *ctx, ptrdiff_t i0, const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t m)
{
    const srctx *c = ctx;
    const uint64_t index = c->index0 + (uint64_t)i0;
    unsigned acc = 0;
    ptrdiff_t j = sr_kernel(c->level, c, index, in, out, flo, m, &acc);
    return acc | sr_scalar(c, index + (uint64_t)j, in + j * c->isize, c->isize, (char *)(out + j), 2, m - j,
                           flo ? flo + j : NULL);
}

unsigned sfp8f_run_cast16_sr(const sfp8f_c16 *p, uint64_t seed, uint64_t stream, uint64_t index0, const char *a,
                             ptrdiff_t sa, int isize, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    srctx c;
    sr_init(&c, p, seed, stream, index0, isize);
    if (c.level == 0 || !sfp8f_apart(o, so, 2, a, sa, isize, n)) return sr_scalar(&c, index0, a, sa, o, so, n, flout);
    if (sa == isize && so == 2) /* contiguous: one run */
        return sr_block(&c, 0, a, (uint16_t *)(void *)o, flout, n);
    return blocked(sr_block, &c, 0, a, sa, isize, o, so, n, flout);
}
