/* The counter-based generator of rng.h (sfp8r_bits: the core's random bits of
 * element i, keyed on seed, stream and index), many consecutive elements at a
 * time, for the SIMD stochastic-rounding kernels (fast_simd.c: casts and
 * arithmetic into 8-bit formats; cast16.c: casts into 9..16 bits).  Bit for
 * bit sfp8r_bits(seed_key, stream_key, index0 + j) for lane j.
 *
 * Two savings over the scalar form: index * G is computed once and then
 * advanced by adding a multiple of G, and the outer mix's last step
 * (z ^= z >> 33) is skipped since only the high 32 bits are kept.
 *
 * AVX-512 (rng16: sixteen words a block, vpmullq) and AVX2 (rng4: four words
 * a step in 64-bit lanes, the 64-bit products from three 32 x 32 -> 64-bit
 * vpmuludq).  Include after <immintrin.h>, inside the x86-64 GCC block; the
 * functions inline into any caller whose target includes theirs. */
#ifndef SFP8_SIMD_RNG_H
#define SFP8_SIMD_RNG_H

#include <stdint.h>

#define SFP8_RNG512 __attribute__((target("avx512f,avx512dq")))
#define SFP8_RNG256 __attribute__((target("avx2")))

/* rng.h's sfp8r_mix64 without its last step z ^= z >> 33 */
SFP8_RNG512 static inline __m512i mix64x8_head(__m512i z)
{
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 33));
    z = _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0xff51afd7ed558ccdULL));
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 33));
    return _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0xc4ceb9fe1a85ec53ULL));
}

/* rng.h's sfp8r_bits of eight lanes, h = index * 0x9E3779B97F4A7C15 + stream_key; the
 * outer mix's last step leaves the high 32 bits alone ((z ^ z >> 33) >> 32 == z >> 32) */
SFP8_RNG512 static inline __m256i rand8(__m512i h, __m512i seed_key)
{
    __m512i z = mix64x8_head(h);
    z = _mm512_xor_si512(_mm512_xor_si512(z, _mm512_srli_epi64(z, 33)), seed_key);
    return _mm512_cvtepi64_epi32(_mm512_srli_epi64(mix64x8_head(z), 32));
}

/* The generator of sixteen consecutive elements at a time: h of lane j of the
 * block at i is (index0 + i + j) * G + stream_key, stepped by 8 G */
typedef struct {
    __m512i h, step, sk;
} rng16;

SFP8_RNG512 static inline rng16 rng16_init(uint64_t seed_key, uint64_t stream_key, uint64_t index0)
{
    const uint64_t G = 0x9E3779B97F4A7C15ULL;
    rng16 g;
    g.h = _mm512_add_epi64(_mm512_mullo_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)index0),
                                                               _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0)),
                                              _mm512_set1_epi64((long long)G)),
                           _mm512_set1_epi64((long long)stream_key));
    g.step = _mm512_set1_epi64((long long)(8 * G));
    g.sk = _mm512_set1_epi64((long long)seed_key);
    return g;
}

/* rand8's words in the high halves of the 64-bit lanes (the low halves are not the
 * generator's) */
SFP8_RNG512 static inline __m512i rand8_high(__m512i h, __m512i seed_key)
{
    __m512i z = mix64x8_head(h);
    z = _mm512_xor_si512(_mm512_xor_si512(z, _mm512_srli_epi64(z, 33)), seed_key);
    return mix64x8_head(z);
}

/* the 32 random bits of the next sixteen elements (the high halves of two rand8_high
 * gathered by one two-source permute) */
SFP8_RNG512 static inline __m512i rng16_next(rng16 *g)
{
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    __m512i r0 = rand8_high(g->h, g->sk), r1;
    g->h = _mm512_add_epi64(g->h, g->step);
    r1 = rand8_high(g->h, g->sk);
    g->h = _mm512_add_epi64(g->h, g->step);
    return _mm512_permutex2var_epi32(r0, odd, r1);
}

/* ---- AVX2 ---- */

/* z * c mod 2^64 of four lanes, c = chi * 2^32 + clo (clo, chi in every lane) */
SFP8_RNG256 static inline __m256i mul64x4(__m256i z, __m256i clo, __m256i chi)
{
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(z, 32), clo), _mm256_mul_epu32(z, chi));
    return _mm256_add_epi64(_mm256_mul_epu32(z, clo), _mm256_slli_epi64(cross, 32));
}

typedef struct {
    __m256i h, step, sk, c1lo, c1hi, c2lo, c2hi;
} rng4;

/* h of lane j is (index0 + j) * G + stream_key, stepped by 4 G */
SFP8_RNG256 static inline rng4 rng4_init(uint64_t seed_key, uint64_t stream_key, uint64_t index0)
{
    const uint64_t G = 0x9E3779B97F4A7C15ULL, h0 = index0 * G + stream_key;
    rng4 g;
    g.h = _mm256_setr_epi64x((long long)h0, (long long)(h0 + G), (long long)(h0 + 2 * G), (long long)(h0 + 3 * G));
    g.step = _mm256_set1_epi64x((long long)(4 * G));
    g.sk = _mm256_set1_epi64x((long long)seed_key);
    g.c1lo = _mm256_set1_epi64x(0xed558ccdLL);
    g.c1hi = _mm256_set1_epi64x(0xff51afd7LL);
    g.c2lo = _mm256_set1_epi64x(0x1a85ec53LL);
    g.c2hi = _mm256_set1_epi64x(0xc4ceb9feLL);
    return g;
}

/* rng.h's sfp8r_mix64 without its last step, four lanes */
SFP8_RNG256 static inline __m256i mix64x4_head(const rng4 *g, __m256i z)
{
    z = mul64x4(_mm256_xor_si256(z, _mm256_srli_epi64(z, 33)), g->c1lo, g->c1hi);
    return mul64x4(_mm256_xor_si256(z, _mm256_srli_epi64(z, 33)), g->c2lo, g->c2hi);
}

/* the 32 random bits of the next four elements, in the low halves of 64-bit lanes */
SFP8_RNG256 static inline __m256i rng4_next(rng4 *g)
{
    __m256i z = mix64x4_head(g, g->h);
    g->h = _mm256_add_epi64(g->h, g->step);
    z = _mm256_xor_si256(_mm256_xor_si256(z, _mm256_srli_epi64(z, 33)), g->sk);
    return _mm256_srli_epi64(mix64x4_head(g, z), 32);
}

#endif
