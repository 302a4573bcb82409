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
#include <string.h>

#include "fast.h"
#include "fast_simd.h"

#include "softfp8/softfp8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "simd_round.h"

#define AINL __attribute__((always_inline))
#define TGT512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define TGT256 __attribute__((target("avx2")))

/* the lanes of mask m take the key table */
static void by_table(const uint16_t *tab, const uint64_t *in, uint8_t *out, uint8_t *flo, unsigned m,
                     unsigned *acc)
{
    while (m) {
        int j = __builtin_ctz(m);
        uint64_t b;
        uint16_t v;
        memcpy(&b, in + j, 8); /* the input may be unaligned (NumPy's contiguous casts) */
        v = tab[sfp8f_key64(b)];
        out[j] = (uint8_t)v;
        if (flo) flo[j] = (uint8_t)(v >> 8);
        *acc |= v & 0xff00u;
        m &= m - 1;
    }
}

/* ---- AVX-512: sixteen lanes, two halves of eight binary64 ---- */

#define SAE _MM_FROUND_NO_EXC

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
        _mm_prefetch((const char *)(in + i + 512), _MM_HINT_T0); /* 4 KiB ahead: ~4% at 10^7 */
        _mm_prefetch((const char *)(in + i + 520), _MM_HINT_T0);
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

/* ---- AVX2: the same lanes four binary64 at a time, sixteen per block.  Without
 *      getexp / scalef / roundscale: the exponent field read as an integer, the
 *      scale 2^(M - em) built as binary64 bits and multiplied in (exact: normal
 *      operands, a normal result), _mm256_round_pd in the mode (nearest-away:
 *      trunc, then one more where the exact |z - trunc z| >= 1/2), K read from
 *      |K| + 2^52.  Uncovered lanes (zeroed before the product) as above. ---- */

typedef struct {
    __m256i absm, minn, span, ebmin, c2046m, two52, pmin, top, maxmag, signbit, ovf0, ovf1, fix, fuf, fo0, fo1,
        low8;
    __m128i Mc;
    int negzero;
} k256;

/* four lanes: code (low byte), flags; returns the uncovered lanes (all ones) */
TGT256 static inline AINL __m256i lane4(int MODE, int TB, const k256 *c, __m256i b, __m256i *code, __m256i *fl)
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
    __m256i sg = _mm256_cmpgt_epi64(zero, b), tiny, edge, ovf, bad = _mm256_xor_si256(ok, _mm256_cmpeq_epi64(ok, ok));
    if (MODE == SFP8_ROUND_TO_ODD) mag = _mm256_or_si256(mag, _mm256_srli_epi64(ix, 63));
    tiny = _mm256_cmpgt_epi64(c->top, mag);
    edge = _mm256_and_si256(_mm256_and_si256(ix, _mm256_cmpeq_epi64(mag, c->top)), _mm256_cmpgt_epi64(c->pmin, abs));
    if (TB) tiny = _mm256_or_si256(tiny, edge);
    else bad = _mm256_or_si256(bad, edge);
    if (!c->negzero) sg = _mm256_andnot_si256(_mm256_cmpeq_epi64(mag, zero), sg);
    ovf = _mm256_cmpgt_epi64(mag, c->maxmag);
    *code = _mm256_or_si256(mag, _mm256_and_si256(sg, c->signbit));
    *code = _mm256_blendv_epi8(*code, _mm256_blendv_epi8(c->ovf0, c->ovf1, sg), ovf);
    *code = _mm256_and_si256(*code, c->low8);
    *fl = _mm256_and_si256(ix, _mm256_blendv_epi8(c->fix, c->fuf, tiny));
    *fl = _mm256_blendv_epi8(*fl, _mm256_blendv_epi8(c->fo0, c->fo1, sg), ovf);
    *fl = _mm256_andnot_si256(bad, *fl);
    return bad;
}

/* the low bytes of four vectors of four 64-bit lanes, in order */
TGT256 static inline AINL __m128i pack16(const __m256i v[4])
{
    const __m128i order = _mm_setr_epi8(0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15);
    __m256i a = _mm256_or_si256(v[0], _mm256_slli_epi64(v[1], 32));
    __m256i b = _mm256_or_si256(v[2], _mm256_slli_epi64(v[3], 32));
    __m256i w = _mm256_packus_epi32(a, b);
    __m256i q = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
    return _mm_shuffle_epi8(_mm256_castsi256_si128(q), order);
}

TGT256 static inline AINL ptrdiff_t cast256(int MODE, int TB, int FL, const sfp8s_cast64 *p, const uint16_t *tab,
                                            const uint64_t *in, uint8_t *out, uint8_t *flo, ptrdiff_t n,
                                            unsigned *acc)
{
    k256 c;
    __m256i facc = _mm256_setzero_si256();
    unsigned a = 0;
    ptrdiff_t i = 0;
    c.absm = _mm256_set1_epi64x(0x7fffffffffffffffLL);
    c.minn = _mm256_set1_epi64x(0x0010000000000000LL);
    c.span = _mm256_set1_epi64x(0x7fe0000000000000LL);
    c.ebmin = _mm256_set1_epi64x(p->emin + 1023);
    c.c2046m = _mm256_set1_epi64x(2046 + p->M);
    c.two52 = _mm256_set1_epi64x(0x4330000000000000LL);
    c.pmin = _mm256_set1_epi64x((long long)(p->emin + 1023) << 52);
    c.top = _mm256_set1_epi64x(1 << p->M);
    c.maxmag = _mm256_set1_epi64x(p->maxmag);
    c.signbit = _mm256_set1_epi64x(p->signbit);
    c.ovf0 = _mm256_set1_epi64x(p->ovf0);
    c.ovf1 = _mm256_set1_epi64x(p->ovf1);
    c.fix = _mm256_set1_epi64x(SFP8_FLAG_INEXACT);
    c.fuf = _mm256_set1_epi64x(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW);
    c.fo0 = _mm256_set1_epi64x(p->ovf_fl0);
    c.fo1 = _mm256_set1_epi64x(p->ovf_fl1);
    c.low8 = _mm256_set1_epi64x(0xff);
    c.Mc = _mm_cvtsi32_si128(p->M);
    c.negzero = p->negzero != 0;
    for (; i + 16 <= n; i += 16) {
        __m256i code[4], fl[4];
        unsigned bad = 0;
        for (int q = 0; q < 4; q++) {
            __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(in + i + 4 * q));
            bad |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(lane4(MODE, TB, &c, b, &code[q], &fl[q])))
                   << (4 * q);
        }
        _mm_storeu_si128((__m128i *)(void *)(out + i), pack16(code));
        if (FL) _mm_storeu_si128((__m128i *)(void *)(flo + i), pack16(fl));
        facc = _mm256_or_si256(facc, _mm256_or_si256(_mm256_or_si256(fl[0], fl[1]), _mm256_or_si256(fl[2], fl[3])));
        if (bad) by_table(tab, in + i, out + i, FL ? flo + i : NULL, bad, &a);
    }
    {
        uint64_t f[4];
        _mm256_storeu_si256((__m256i *)(void *)f, facc);
        *acc |= a | (unsigned)(f[0] | f[1] | f[2] | f[3]) << 8;
    }
    return i;
}

TGT256 ptrdiff_t sfp8s_cast64_avx2(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                                   uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    if (flo) CAST64_MODES(cast256, 1)
    CAST64_MODES(cast256, 0)
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
