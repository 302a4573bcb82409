/* binary64 -> 8-bit format casts by arithmetic (fast_simd.h, sfp8s_cast64):
 * the key table's gather (fast_simd.c, sfp8s_from_f64) replaced by the
 * hardware's exact binary64 operations.
 *
 * DERIVED from core.c round_pack, for signed formats with IEEE subnormals
 * and 1..4 mantissa bits whose values lie well inside binary64 (fast.c,
 * cast64_params): for a finite normal binary64 x of exponent e (getexp),
 * em = max(e, emin) and z = x * 2^(M - em) (exact: scalef of a normal value
 * by a small power of two) put the format's quantum at x on 1, so the
 * rounded magnitude is K = |z| rounded to an integer in the environment's
 * mode (roundscale: nearest-even, upward, downward, toward zero; nearest-away
 * is trunc(z + copysign(1/2, z)) with that sum rounded toward zero, which
 * keeps its integer part; to-odd is trunc(z) | inexact), inexact is K != z,
 * and the code's magnitude is ((em - emin) << M) + K (the carry into the next
 * binade included) - round_pack's "field << M + (Ku + up - 2^M)" for
 * e >= emin and its subnormal grid for e < emin.  Overflow (magnitude above
 * the largest finite one) delivers the core's overflow result of the sign
 * with its flags; zeros (and results rounded to zero) get the sign bit
 * unless the format has no negative zero.  Tininess before rounding is
 * x < 2^emin: true for a result below 2^emin (magnitude < 2^M), false for one
 * above, and for an inexact result 2^emin asked of x itself.  After rounding
 * it is "no carry to 2^emin on the unbounded grid": a result below 2^emin on
 * the subnormal grid is tiny (a carry to 2^emin on the finer grid implies one
 * on the coarser grid in every mode), a result of x >= 2^emin is not, and the
 * inexact results 2^emin of x < 2^emin, like NaN, infinity and binary64
 * subnormal lanes, take the key table (exactly the core: fast.c,
 * sfp8f_build_fromf).  All operations use suppress-all-exceptions forms and
 * see no subnormal operand or result, so MXCSR (its flags, DAZ, FTZ) neither
 * changes nor matters.
 *
 * Proven equal to the core by tests/fast/test_fast_paths.py::test_cast_float64_presets
 * (every rounding boundary of the presets of <= 8 bits and its neighbours under
 * all 24 environments, random values, at each SIMD level), ::test_cast_float64_random,
 * ::test_cast_float_structured
 * and tests/fast/test_fast_layouts.py::test_cast_layouts. */
#include "fast.h"
#include "fast_simd.h"

#include "softfp8/softfp8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AINL __attribute__((always_inline))
#define TGT512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define TGT256 __attribute__((target("avx2")))

/* the lanes of mask m take the key table */
static void by_table(const uint16_t *tab, const uint64_t *in, uint8_t *out, uint8_t *flo, unsigned m,
                     unsigned *acc)
{
    while (m) {
        int j = __builtin_ctz(m);
        uint16_t v = tab[sfp8f_key64(in[j])];
        out[j] = (uint8_t)v;
        if (flo) flo[j] = (uint8_t)(v >> 8);
        *acc |= v & 0xff00u;
        m &= m - 1;
    }
}

/* ---- AVX-512: sixteen lanes, two halves of eight binary64 ---- */

#define SAE _MM_FROUND_NO_EXC

TGT512 static inline AINL __m512d round512(int MODE, __m512d z)
{
    switch (MODE) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_NEAREST_INT, SAE);
    case SFP8_ROUND_UPWARD: return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_POS_INF, SAE);
    case SFP8_ROUND_DOWNWARD: return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_NEG_INF, SAE);
    case SFP8_ROUND_NEAREST_AWAY: {
        const __m512i sign = _mm512_set1_epi64((long long)0x8000000000000000ULL);
        const __m512i half = _mm512_set1_epi64(0x3fe0000000000000LL);
        __m512d h = _mm512_castsi512_pd(_mm512_ternarylogic_epi64(_mm512_castpd_si512(z), sign, half, 0xEA));
        return _mm512_roundscale_round_pd(_mm512_add_round_pd(z, h, _MM_FROUND_TO_ZERO | SAE),
                                          _MM_FROUND_TO_ZERO, SAE);
    }
    default: /* toward zero; to odd (then | inexact) */
        return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_ZERO, SAE);
    }
}

/* one half: K (signed), em as integers; inexact, sign, uncovered */
TGT512 static inline AINL void half512(int MODE, __m512d x, __m512d eminv, __m512d Mv, __m256i *k, __m256i *em,
                                       unsigned *ix, unsigned *sg, unsigned *bad)
{
    const int RN = _MM_FROUND_TO_NEAREST_INT | SAE;
    __m512d m = _mm512_max_round_pd(_mm512_getexp_round_pd(x, SAE), eminv, SAE);
    __m512d z = _mm512_scalef_round_pd(x, _mm512_sub_round_pd(Mv, m, RN), RN);
    __m512d r = round512(MODE, z);
    *ix = _mm512_cmp_round_pd_mask(r, z, _CMP_NEQ_OQ, SAE);
    *k = _mm512_cvtt_roundpd_epi32(r, SAE);
    *em = _mm512_cvtt_roundpd_epi32(m, SAE);
    *sg = _mm512_movepi64_mask(_mm512_castpd_si512(x));
    /* QNaN, +inf, -inf, denormal, SNaN */
    *bad = _mm512_fpclass_pd_mask(x, 0xB9);
}

/* lanes below 2^emin */
TGT512 static inline AINL unsigned below512(__m512d x0, __m512d x1, __m512d pmin)
{
    const __m512d mag = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffLL));
    return _mm512_cmp_round_pd_mask(_mm512_and_pd(x0, mag), pmin, _CMP_LT_OQ, SAE) |
           (unsigned)_mm512_cmp_round_pd_mask(_mm512_and_pd(x1, mag), pmin, _CMP_LT_OQ, SAE) << 8;
}

TGT512 static inline AINL ptrdiff_t cast512(int MODE, int TB, int FL, const sfp8s_cast64 *p, const uint16_t *tab,
                                            const uint64_t *in, uint8_t *out, uint8_t *flo, ptrdiff_t n,
                                            unsigned *acc)
{
    const __m512d eminv = _mm512_set1_pd(p->emin), Mv = _mm512_set1_pd(p->M);
    const __m512d pmin = _mm512_scalef_pd(_mm512_set1_pd(1.0), eminv); /* 2^emin */
    const int negzero = p->negzero != 0;
    const __m512i maxmag = _mm512_set1_epi32((int)p->maxmag), signbit = _mm512_set1_epi32((int)p->signbit);
    const __m512i ebase = _mm512_set1_epi32(p->emin * (1 << p->M)), top = _mm512_set1_epi32(1 << p->M);
    const __m512i ovf0 = _mm512_set1_epi32((int)p->ovf0), ovf1 = _mm512_set1_epi32((int)p->ovf1);
    const __m128i Mc = _mm_cvtsi32_si128(p->M);
    const __m512i fix = _mm512_set1_epi32(SFP8_FLAG_INEXACT);
    const __m512i fuf = _mm512_set1_epi32(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW);
    const __m512i fo0 = _mm512_set1_epi32((int)p->ovf_fl0), fo1 = _mm512_set1_epi32((int)p->ovf_fl1);
    __m512i facc = _mm512_setzero_si512();
    unsigned a = 0;
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i k0, k1, e0, e1;
        unsigned ix0, ix1, s0, s1, b0, b1, ix, tiny, s, bad, ovf, edge;
        __m512i k, em, mag, code, fl;
        const __m512d x0 = _mm512_loadu_pd((const void *)(in + i)), x1 = _mm512_loadu_pd((const void *)(in + i + 8));
        half512(MODE, x0, eminv, Mv, &k0, &e0, &ix0, &s0, &b0);
        half512(MODE, x1, eminv, Mv, &k1, &e1, &ix1, &s1, &b1);
        ix = ix0 | ix1 << 8;
        s = s0 | s1 << 8;
        bad = b0 | b1 << 8;
        k = _mm512_inserti64x4(_mm512_castsi256_si512(k0), k1, 1);
        em = _mm512_inserti64x4(_mm512_castsi256_si512(e0), e1, 1);
        mag = _mm512_add_epi32(_mm512_abs_epi32(k), _mm512_sub_epi32(_mm512_sll_epi32(em, Mc), ebase));
        if (MODE == SFP8_ROUND_TO_ODD) mag = _mm512_mask_or_epi32(mag, (__mmask16)ix, mag, _mm512_set1_epi32(1));
        /* tiny: x < 2^emin, which a result below 2^emin on the subnormal grid is and
           one above is not; for an inexact result 2^emin ask x itself.  After rounding:
           a result below 2^emin is tiny (a carry to 2^emin on the finer unbounded grid
           implies one on the subnormal grid in every mode), one of x >= 2^emin is not,
           and the inexact results 2^emin of x < 2^emin take the table. */
        tiny = _mm512_cmplt_epu32_mask(mag, top);
        edge = _mm512_mask_cmpeq_epi32_mask((__mmask16)ix, mag, top);
        if (edge) {
            edge &= below512(x0, x1, pmin);
            if (TB) tiny |= edge;
            else bad |= edge;
        }
        if (!negzero) s &= _mm512_test_epi32_mask(mag, mag);
        code = _mm512_mask_or_epi32(mag, (__mmask16)s, mag, signbit);
        ovf = _mm512_cmpgt_epu32_mask(mag, maxmag);
        /* each lane's flags: inexact, underflow if tiny, the overflow results' */
        fl = _mm512_maskz_mov_epi32((__mmask16)ix, fix);
        fl = _mm512_mask_mov_epi32(fl, (__mmask16)(ix & tiny), fuf);
        if (ovf) {
            code = _mm512_mask_mov_epi32(code, (__mmask16)(ovf & ~s), ovf0);
            code = _mm512_mask_mov_epi32(code, (__mmask16)(ovf & s), ovf1);
            fl = _mm512_mask_mov_epi32(fl, (__mmask16)(ovf & ~s), fo0);
            fl = _mm512_mask_mov_epi32(fl, (__mmask16)(ovf & s), fo1);
        }
        _mm_storeu_si128((__m128i *)(void *)(out + i), _mm512_cvtepi32_epi8(code));
        if (FL) _mm_storeu_si128((__m128i *)(void *)(flo + i), _mm512_cvtepi32_epi8(fl));
        if (bad) {
            fl = _mm512_maskz_mov_epi32((__mmask16)~bad, fl);
            by_table(tab, in + i, out + i, FL ? flo + i : NULL, bad, &a);
        }
        facc = _mm512_or_si512(facc, fl);
    }
    *acc |= a | (unsigned)_mm512_reduce_or_epi32(facc) << 8;
    return i;
}

/* one instance per rounding mode and tininess rule */
#define CAST64_CASE(fn, FL, MODE)                                                                              \
    case MODE: return p->tb ? fn(MODE, 1, FL, p, tab, in, out, flo, n, acc) : fn(MODE, 0, FL, p, tab, in, out, flo, n, acc);
#define CAST64_MODES(fn, FL)                                                                                   \
    switch (p->rounding) {                                                                                     \
        CAST64_CASE(fn, FL, SFP8_ROUND_NEAREST_EVEN)                                                           \
        CAST64_CASE(fn, FL, SFP8_ROUND_NEAREST_AWAY)                                                           \
        CAST64_CASE(fn, FL, SFP8_ROUND_TOWARD_ZERO)                                                            \
        CAST64_CASE(fn, FL, SFP8_ROUND_UPWARD)                                                                 \
        CAST64_CASE(fn, FL, SFP8_ROUND_DOWNWARD)                                                               \
        CAST64_CASE(fn, FL, SFP8_ROUND_TO_ODD)                                                                 \
    default: return 0;                                                                                         \
    }

TGT512 ptrdiff_t sfp8s_cast64_avx512(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                                     uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    if (flo) CAST64_MODES(cast512, 1)
    CAST64_MODES(cast512, 0)
}

ptrdiff_t sfp8s_cast64_avx2(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                            uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    (void)p; (void)tab; (void)in; (void)out; (void)flo; (void)n; (void)acc;
    return 0;
}

#else /* no x86-64 SIMD: the portable loop of fast.c */

ptrdiff_t sfp8s_cast64_avx512(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                              uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    (void)p; (void)tab; (void)in; (void)out; (void)flo; (void)n; (void)acc;
    return 0;
}
ptrdiff_t sfp8s_cast64_avx2(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                            uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    (void)p; (void)tab; (void)in; (void)out; (void)flo; (void)n; (void)acc;
    return 0;
}
#endif
