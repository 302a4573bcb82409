/* The arith16 family's table and parameters that other families read
 * (internal to fast/): the sr_arith16 and sr_fma families decode 16-bit codes
 * with the same arithmetic (the SIMD loaders below) and reuse its table.
 *
 * DERIVED from core.c round_pack: RNE_SAE, binary64 lanes rounded to nearest (exact
 * conversions of decoded operands only); proof: tests/harness/test_harness.py::test_entry (entries arith16, sr_arith16, sr_fma).
 */
#ifndef SOFTFP8_FAST_ARITH16_H
#define SOFTFP8_FAST_ARITH16_H
#include <stddef.h>
#include <stdint.h>

#include "fast.h"
#include "simd.h"

struct sfp8f_a16 {
    const sfp8f_conv *dec; /* format -> binary64 */
    sfp8f_rnd r;
    const uint64_t *vf;    /* the SIMD kernels' decoding table (sfp8s_a16), or NULL (none, or arith) */
    int arith;             /* 1: the SIMD kernels may compute vf (sfp8s_a16) */
    int core_only;         /* 1: r holds only M, emin, rounding, maxmag, signbit (0: unsigned);
                              SIMD kernels for the normal range, the core for the rest (SHP, UHP) */
    uint64_t off;          /* its constants: exponent offset, */
    int emax_field;        /* all-ones exponent field */
};

/* the table of f under env (NULL: not covered); simd: the level of the kernel that
   will run (level 0 covers sfp8f_rounder's formats only) */
const sfp8f_a16 *sfp8f_arith16_table(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n, int simd);

/* ---- the SIMD kernels' parameters: o = a op b, or a*b + c (fma), codes of
 *      2 bytes, contiguous.  vf[code & mask] = the code's binary64 bits with
 *      the flags reading it raises in bits 0..6 and bit 7 set for NaN and
 *      infinity (every finite value of these formats has zero low bytes).
 *      A lane is covered when its operands are finite (and a divisor is not
 *      zero) and its binary64 result (exact, rounded to odd, or a correctly
 *      rounded quotient: docs/performance.md) is normal in the format and
 *      below overflow; the kernels process whole blocks from the start and
 *      stop before the first block with an uncovered lane, returning how many
 *      elements they wrote; flo (or NULL) receives each element's flags. ---- */
enum { SFP8S_ADD, SFP8S_SUB, SFP8S_MUL, SFP8S_DIV, SFP8S_FMA };
typedef struct sfp8s_a16 {
    const uint64_t *vf;
    uint64_t mask, maxmag, signbit; /* code mask, largest finite magnitude, sign bit (0: unsigned
                                       format; negative results are uncovered lanes) */
    int M, ebase;                    /* mantissa bits; biased binary64 exponent of 2^emin */
    int rounding;                    /* a deterministic SFP8_ROUND_* */
    /* arith != 0: decode without vf: a code of exponent field e (0 < e < emax_field)
       or a zero is ((code & magmask) << (52 - M)) + off with the sign moved to bit
       63 (by << sshift), and raises no flag; other codes are uncovered lanes.
       arith16.c sets it only after checking this against vf for every code. */
    int arith, sshift;
    uint64_t magmask, off, emax_field;
    /* 1: every sum of two values is exact in binary64 (float16, SHP): add and
       subtract skip TwoSum */
    int exact_sum;
    /* AVX-512: decode by conversion through binary32: 1 binary16 (vcvtph2ps),
       2 bfloat16 (code << 16); covered codes as for arith */
    int hw;
} sfp8s_a16;
/* the parameters of table t for format f */
sfp8s_a16 sfp8f_a16_params(const sfp8f_a16 *t, const sfp8_format *f);

#if SFP8_X86

/* ---- the arithmetic decoding of codes into lanes (the kernels of arith16,
 *      sr_arith16 and sr_fma) ---- */

/* eight codes -> their vf entries: computed, or gathered (AVX-512) */
SFP8_AVX512 static inline AINL __m512i a16_load512(const sfp8s_a16 *p, const uint16_t *x, __m512i msk)
{
    __m512i i;
    if (p->hw) { /* binary16 / bfloat16: exact conversions through binary32 */
        const __m128i c = _mm_loadu_si128((const __m128i *)x);
        const __m128i expm = _mm_set1_epi16((short)(p->emax_field << p->M)), ex = _mm_and_si128(c, expm);
        __mmask8 slow = _mm_cmpeq_epi16_mask(ex, expm) |
                        (_mm_cmpeq_epi16_mask(ex, _mm_setzero_si128()) &
                         _mm_test_epi16_mask(c, _mm_set1_epi16((short)((1 << p->M) - 1))));
        __m512d d = p->hw == 1
                        ? _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_cvtph_ps(_mm256_castsi128_si256(c))))
                        : _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(c), 16)));
        __m512i v = _mm512_castpd_si512(d);
        return _mm512_mask_or_epi64(v, slow, v, _mm512_set1_epi64(0x80));
    }
    i = _mm512_and_si512(_mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)x)), msk);
    if (p->arith) {
        const __m512i mag = _mm512_and_si512(i, _mm512_set1_epi64((long long)p->magmask));
        const __m512i e = _mm512_srl_epi64(mag, _mm_cvtsi32_si128(p->M));
        __m512i v = _mm512_add_epi64(_mm512_sll_epi64(mag, _mm_cvtsi32_si128(52 - p->M)),
                                     _mm512_set1_epi64((long long)p->off));
        __mmask8 zero = _mm512_testn_epi64_mask(mag, mag);
        __mmask8 slow = _mm512_cmpeq_epi64_mask(e, _mm512_set1_epi64((long long)p->emax_field)) |
                        (_mm512_testn_epi64_mask(e, e) & ~zero);
        v = _mm512_maskz_mov_epi64((__mmask8)~zero, v);
        v = _mm512_or_si512(v, _mm512_sll_epi64(_mm512_and_si512(i, _mm512_set1_epi64((long long)p->signbit)),
                                                _mm_cvtsi32_si128(p->sshift)));
        return _mm512_mask_or_epi64(v, slow, v, _mm512_set1_epi64(0x80));
    }
    return _mm512_i64gather_epi64(i, (const void *)p->vf, 8);
}

/* 1: the binary32 kernels (arith16.c a16f_512 / a16f_256, sr_arith16.c sr16f_avx512,
   and the binary32 decoding of sr16q_run) cover op in p's format: M <= 10 (p <= 11
   significant bits), the normal range inside binary32's; not fma */
static inline int a16_f32_ok(const sfp8s_a16 *p, int op)
{
    /* the format's values below 2^128: a result binary32 rounds to infinity is then
       above the largest finite magnitude (its code, (129 - emin) << M, exceeds maxmag:
       an overflow lane).  The largest finite magnitude's exponent is read from maxmag,
       not from the exponent field below the all-ones one: formats without infinities
       (FN, NONE) have finite values in the all-ones binade, and with bias 127 values
       from 2^128 up, which binary32 cannot hold (issue 21). */
    const int emin = p->ebase - 1023, emax = (int)(p->maxmag >> p->M) + emin - 1;
    return op != SFP8S_FMA && p->arith && p->M >= 1 && p->M <= 10 && emin >= -126 && emax <= 127;
}

#define RNE_SAE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* sixteen codes -> binary32 values; *slow |= the lanes a16_load512 marks */
SFP8_AVX512 static inline AINL __m512 a16_load16f(const sfp8s_a16 *p, const uint16_t *x, __mmask16 *slow)
{
    const __m256i c = _mm256_loadu_si256((const __m256i *)x);
    if (p->hw) {
        const __m256i expm = _mm256_set1_epi16((short)(p->emax_field << p->M)), ex = _mm256_and_si256(c, expm);
        *slow |= _mm256_cmpeq_epi16_mask(ex, expm) |
                 (_mm256_cmpeq_epi16_mask(ex, _mm256_setzero_si256()) &
                  _mm256_test_epi16_mask(c, _mm256_set1_epi16((short)((1 << p->M) - 1))));
        return p->hw == 1 ? _mm512_cvtph_ps(c) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(c), 16));
    }
    {
        const int bias = 1023 - (int)(p->off >> 52);
        const __m512i i = _mm512_and_si512(_mm512_cvtepu16_epi32(c), _mm512_set1_epi32((int)p->mask));
        const __m512i mag = _mm512_and_si512(i, _mm512_set1_epi32((int)p->magmask));
        const __m512i e = _mm512_srl_epi32(mag, _mm_cvtsi32_si128(p->M));
        const __mmask16 zero = _mm512_testn_epi32_mask(mag, mag);
        __m512i v = _mm512_maskz_add_epi32((__mmask16)~zero, _mm512_sll_epi32(mag, _mm_cvtsi32_si128(23 - p->M)),
                                           _mm512_set1_epi32((127 - bias) << 23));
        *slow |= _mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32((int)p->emax_field)) |
                 (_mm512_testn_epi32_mask(e, e) & (__mmask16)~zero);
        v = _mm512_or_si512(v, _mm512_sll_epi32(_mm512_and_si512(i, _mm512_set1_epi32((int)p->signbit)),
                                                _mm_cvtsi32_si128(p->sshift - 32)));
        return _mm512_castsi512_ps(v);
    }
}

/* four codes -> their vf entries (AVX2) */
SFP8_AVX2 static inline AINL __m256i a16_load256(const sfp8s_a16 *p, const uint16_t *x, __m128i msk)
{
    __m128i i = _mm_and_si128(_mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)x)), msk);
    if (p->arith) {
        const __m256i zero = _mm256_setzero_si256(), c = _mm256_cvtepu32_epi64(i);
        const __m256i mag = _mm256_and_si256(c, _mm256_set1_epi64x((long long)p->magmask));
        const __m256i e = _mm256_srl_epi64(mag, _mm_cvtsi32_si128(p->M));
        const __m256i isz = _mm256_cmpeq_epi64(mag, zero);
        __m256i v = _mm256_add_epi64(_mm256_sll_epi64(mag, _mm_cvtsi32_si128(52 - p->M)),
                                     _mm256_set1_epi64x((long long)p->off));
        __m256i slow = _mm256_or_si256(_mm256_cmpeq_epi64(e, _mm256_set1_epi64x((long long)p->emax_field)),
                                       _mm256_andnot_si256(isz, _mm256_cmpeq_epi64(e, zero)));
        v = _mm256_andnot_si256(isz, v);
        v = _mm256_or_si256(v, _mm256_sll_epi64(_mm256_and_si256(c, _mm256_set1_epi64x((long long)p->signbit)),
                                                _mm_cvtsi32_si128(p->sshift)));
        return _mm256_or_si256(v, _mm256_and_si256(slow, _mm256_set1_epi64x(0x80)));
    }
    return _mm256_i32gather_epi64((const long long *)p->vf, i, 8);
}
#endif /* SFP8_X86 */
#endif
