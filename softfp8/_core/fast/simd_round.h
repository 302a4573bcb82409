/* Rounding binary64 lanes to an integer in a deterministic mode, shared by the
 * arithmetic cast kernels (cast64.c: into formats of <= 8 bits; cast16.c: into
 * 9..16 bits).  MODE is a compile-time constant at every call (the kernels are
 * instantiated per mode), so the switch folds away.
 *
 * round512 (AVX-512): roundscale in the mode; nearest-away is trunc(z +
 * copysign(1/2, z)) with that sum rounded toward zero, which keeps its integer
 * part (ternary logic 0xEA: (z & sign) | 1/2); toward zero and to-odd (whose
 * callers OR the inexact bit into K) truncate.
 * round256 (AVX2): _mm256_round_pd in the mode; nearest-away is trunc(z), then
 * one more in z's direction where the exact |z - trunc z| >= 1/2.
 *
 * All forms suppress exceptions: MXCSR neither changes nor matters.  Include
 * after <immintrin.h> and softfp8.h, inside the x86-64 GCC block. */
#ifndef SFP8_SIMD_ROUND_H
#define SFP8_SIMD_ROUND_H

__attribute__((target("avx512f,avx512dq"), always_inline)) static inline __m512d round512(int MODE, __m512d z)
{
    const int SAE_ = _MM_FROUND_NO_EXC;
    switch (MODE) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_NEAREST_INT, SAE_);
    case SFP8_ROUND_UPWARD: return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_POS_INF, SAE_);
    case SFP8_ROUND_DOWNWARD: return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_NEG_INF, SAE_);
    case SFP8_ROUND_NEAREST_AWAY: {
        const __m512i sign = _mm512_set1_epi64((long long)0x8000000000000000ULL);
        const __m512i half = _mm512_set1_epi64(0x3fe0000000000000LL);
        __m512d h = _mm512_castsi512_pd(_mm512_ternarylogic_epi64(_mm512_castpd_si512(z), sign, half, 0xEA));
        return _mm512_roundscale_round_pd(_mm512_add_round_pd(z, h, _MM_FROUND_TO_ZERO | SAE_),
                                          _MM_FROUND_TO_ZERO, SAE_);
    }
    default: /* toward zero; to odd (then | inexact) */
        return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_ZERO, SAE_);
    }
}

__attribute__((target("avx2"), always_inline)) static inline __m256d round256(int MODE, __m256d z)
{
    const int X = _MM_FROUND_NO_EXC;
    switch (MODE) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm256_round_pd(z, _MM_FROUND_TO_NEAREST_INT | X);
    case SFP8_ROUND_UPWARD: return _mm256_round_pd(z, _MM_FROUND_TO_POS_INF | X);
    case SFP8_ROUND_DOWNWARD: return _mm256_round_pd(z, _MM_FROUND_TO_NEG_INF | X);
    case SFP8_ROUND_NEAREST_AWAY: {
        const __m256d sign = _mm256_set1_pd(-0.0);
        __m256d t = _mm256_round_pd(z, _MM_FROUND_TO_ZERO | X);
        __m256d up = _mm256_cmp_pd(_mm256_andnot_pd(sign, _mm256_sub_pd(z, t)), _mm256_set1_pd(0.5), _CMP_GE_OQ);
        __m256d one = _mm256_or_pd(_mm256_and_pd(z, sign), _mm256_set1_pd(1.0)); /* copysign(1, z) */
        return _mm256_add_pd(t, _mm256_and_pd(up, one));
    }
    default: return _mm256_round_pd(z, _MM_FROUND_TO_ZERO | X);
    }
}

#endif
