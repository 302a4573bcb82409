/* AVX-512 kernels of the fast paths, compiled for the instruction set with
 * target attributes and chosen at run time (sfp8s_cpu_level); every other
 * build gets the stubs at the end, and the portable loops of fast.c run. */
#include "fast_simd.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

int sfp8s_cpu_level(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vbmi"))
        return 2;
    return 0;
}

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))

/* One 256-entry byte table in four registers. */
typedef struct {
    __m512i q[4];
} tab256;

TGT static inline void load_tab(tab256 *t, const uint8_t *p)
{
    for (int k = 0; k < 4; k++) t->q[k] = _mm512_loadu_si512((const void *)(p + 64 * k));
}

TGT static inline __m512i lookup(const tab256 *t, __m512i x, __mmask64 hi)
{
    __m512i lo = _mm512_permutex2var_epi8(t->q[0], x, t->q[1]);
    __m512i up = _mm512_permutex2var_epi8(t->q[2], x, t->q[3]);
    return _mm512_mask_blend_epi8(hi, lo, up);
}

/* 16 dwords per output register from four byte planes of 64 elements */
TGT static inline void planes_to_dwords(__m512i r0, __m512i r1, __m512i r2, __m512i r3, __m512i o[4])
{
    __m512i wl = _mm512_unpacklo_epi8(r0, r1), wh = _mm512_unpackhi_epi8(r0, r1);
    __m512i vl = _mm512_unpacklo_epi8(r2, r3), vh = _mm512_unpackhi_epi8(r2, r3);
    __m512i d0 = _mm512_unpacklo_epi16(wl, vl), d1 = _mm512_unpackhi_epi16(wl, vl);
    __m512i d2 = _mm512_unpacklo_epi16(wh, vh), d3 = _mm512_unpackhi_epi16(wh, vh);
    __m512i t0 = _mm512_shuffle_i64x2(d0, d1, 0x44), t1 = _mm512_shuffle_i64x2(d2, d3, 0x44);
    __m512i t2 = _mm512_shuffle_i64x2(d0, d1, 0xEE), t3 = _mm512_shuffle_i64x2(d2, d3, 0xEE);
    o[0] = _mm512_shuffle_i64x2(t0, t1, 0x88);
    o[1] = _mm512_shuffle_i64x2(t0, t1, 0xDD);
    o[2] = _mm512_shuffle_i64x2(t2, t3, 0x88);
    o[3] = _mm512_shuffle_i64x2(t2, t3, 0xDD);
}

TGT ptrdiff_t sfp8s_lut8(const uint8_t *planes, const uint8_t *fl, int osize, const uint8_t *in, char *out,
                         ptrdiff_t n, unsigned *acc)
{
    tab256 t[8], ft;
    __m512i facc = _mm512_setzero_si512();
    const __m512i lanefix0 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    const __m512i lanefix1 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    ptrdiff_t i = 0;
    if (osize != 1 && osize != 2 && osize != 4 && osize != 8) return 0;
    for (int k = 0; k < osize; k++) load_tab(&t[k], planes + 256 * k);
    if (fl) load_tab(&ft, fl);
    for (; i + 64 <= n; i += 64) {
        __m512i x = _mm512_loadu_si512((const void *)(in + i));
        __mmask64 hi = _mm512_movepi8_mask(x);
        char *o = out + i * osize;
        if (fl) facc = _mm512_or_si512(facc, lookup(&ft, x, hi));
        if (osize == 1) {
            _mm512_storeu_si512((void *)o, lookup(&t[0], x, hi));
        } else if (osize == 2) {
            __m512i r0 = lookup(&t[0], x, hi), r1 = lookup(&t[1], x, hi);
            __m512i ul = _mm512_unpacklo_epi8(r0, r1), uh = _mm512_unpackhi_epi8(r0, r1);
            _mm512_storeu_si512((void *)o, _mm512_permutex2var_epi64(ul, lanefix0, uh));
            _mm512_storeu_si512((void *)(o + 64), _mm512_permutex2var_epi64(ul, lanefix1, uh));
        } else if (osize == 4) {
            __m512i d[4];
            planes_to_dwords(lookup(&t[0], x, hi), lookup(&t[1], x, hi), lookup(&t[2], x, hi),
                             lookup(&t[3], x, hi), d);
            for (int k = 0; k < 4; k++) _mm512_storeu_si512((void *)(o + 64 * k), d[k]);
        } else {
            __m512i lo[4], up[4];
            planes_to_dwords(lookup(&t[0], x, hi), lookup(&t[1], x, hi), lookup(&t[2], x, hi),
                             lookup(&t[3], x, hi), lo);
            planes_to_dwords(lookup(&t[4], x, hi), lookup(&t[5], x, hi), lookup(&t[6], x, hi),
                             lookup(&t[7], x, hi), up);
            for (int k = 0; k < 4; k++) {
                __m512i ql = _mm512_unpacklo_epi32(lo[k], up[k]), qh = _mm512_unpackhi_epi32(lo[k], up[k]);
                _mm512_storeu_si512((void *)(o + 128 * k), _mm512_permutex2var_epi64(ql, lanefix0, qh));
                _mm512_storeu_si512((void *)(o + 128 * k + 64), _mm512_permutex2var_epi64(ql, lanefix1, qh));
            }
        }
    }
    if (fl) {
        uint8_t b[64];
        unsigned a = 0;
        _mm512_storeu_si512((void *)b, facc);
        for (int k = 0; k < 64; k++) a |= b[k];
        *acc |= a;
    }
    return i;
}

TGT ptrdiff_t sfp8s_binary8(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z, ptrdiff_t n,
                            unsigned *acc)
{
    __m512i a = _mm512_setzero_si512();
    const __m512i lo16 = _mm512_set1_epi32(0xffff);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i xa = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(x + i)));
        __m512i yb = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(y + i)));
        __m512i idx = _mm512_or_si512(_mm512_slli_epi32(xa, 8), yb);
        __m512i v = _mm512_and_si512(_mm512_i32gather_epi32(idx, (const void *)tab, 2), lo16);
        a = _mm512_or_si512(a, v);
        _mm_storeu_si128((__m128i *)(z + i), _mm512_cvtepi32_epi8(v));
    }
    *acc |= (unsigned)_mm512_reduce_or_epi32(a);
    return i;
}

TGT ptrdiff_t sfp8s_from_f32(const uint16_t *tab, const uint32_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc)
{
    __m512i a = _mm512_setzero_si512();
    const __m512i lo16 = _mm512_set1_epi32(0xffff), keep = _mm512_set1_epi32(0xfffe);
    const __m512i low17 = _mm512_set1_epi32(0x1ffff), one = _mm512_set1_epi32(1);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i b = _mm512_loadu_si512((const void *)(in + i));
        __m512i key = _mm512_and_si512(_mm512_srli_epi32(b, 16), keep);
        key = _mm512_mask_or_epi32(key, _mm512_test_epi32_mask(b, low17), key, one);
        __m512i v = _mm512_and_si512(_mm512_i32gather_epi32(key, (const void *)tab, 2), lo16);
        a = _mm512_or_si512(a, v);
        _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi32_epi8(v));
    }
    *acc |= (unsigned)_mm512_reduce_or_epi32(a);
    return i;
}

/* the binary64 key of fast.c's sfp8f_key64, eight lanes at a time */
TGT static inline __m256i key64x8(__m512i b)
{
    const __m512i m52 = _mm512_set1_epi64(0xFFFFFFFFFFFFFLL), low46 = _mm512_set1_epi64((1LL << 46) - 1);
    __m512i e = _mm512_and_si512(_mm512_srli_epi64(b, 52), _mm512_set1_epi64(0x7ff));
    __m512i m = _mm512_and_si512(b, m52);
    __m512i s15 = _mm512_slli_epi64(_mm512_srli_epi64(b, 63), 15);
    __m512i m6 = _mm512_slli_epi64(_mm512_srli_epi64(m, 46), 1);
    __mmask8 st = _mm512_test_epi64_mask(m, low46);
    __m512i e32 = _mm512_and_si512(_mm512_sub_epi64(e, _mm512_set1_epi64(896)), _mm512_set1_epi64(0xff));
    __m512i k;
    __mmask8 isnan = _mm512_cmpeq_epi64_mask(e, _mm512_set1_epi64(0x7ff));
    __mmask8 iszero = _mm512_cmpeq_epi64_mask(e, _mm512_setzero_si512());
    __mmask8 huge = _mm512_cmpgt_epi64_mask(e, _mm512_set1_epi64(1150)) & ~isnan;
    __mmask8 tiny = _mm512_cmplt_epi64_mask(e, _mm512_set1_epi64(897)) & ~iszero;
    e32 = _mm512_mask_mov_epi64(e32, isnan, _mm512_set1_epi64(255));
    k = _mm512_or_si512(_mm512_or_si512(s15, _mm512_slli_epi64(e32, 7)), m6);
    k = _mm512_mask_or_epi64(k, st, k, _mm512_set1_epi64(1));
    k = _mm512_mask_mov_epi64(k, iszero,
                              _mm512_mask_or_epi64(s15, _mm512_test_epi64_mask(m, m52), s15, _mm512_set1_epi64(1)));
    k = _mm512_mask_mov_epi64(k, huge, _mm512_or_si512(s15, _mm512_set1_epi64(254 << 7 | 63 << 1 | 1)));
    k = _mm512_mask_mov_epi64(k, tiny, _mm512_or_si512(s15, _mm512_set1_epi64(1 << 7 | 1)));
    return _mm512_cvtepi64_epi32(k);
}

TGT ptrdiff_t sfp8s_from_f64(const uint16_t *tab, const uint64_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc)
{
    __m512i a = _mm512_setzero_si512();
    const __m512i lo16 = _mm512_set1_epi32(0xffff);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i k0 = key64x8(_mm512_loadu_si512((const void *)(in + i)));
        __m256i k1 = key64x8(_mm512_loadu_si512((const void *)(in + i + 8)));
        __m512i key = _mm512_inserti64x4(_mm512_castsi256_si512(k0), k1, 1);
        __m512i v = _mm512_and_si512(_mm512_i32gather_epi32(key, (const void *)tab, 2), lo16);
        a = _mm512_or_si512(a, v);
        _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi32_epi8(v));
    }
    *acc |= (unsigned)_mm512_reduce_or_epi32(a);
    return i;
}

#else /* no x86-64 SIMD: portable loops only */

int sfp8s_cpu_level(void) { return 0; }
ptrdiff_t sfp8s_lut8(const uint8_t *planes, const uint8_t *fl, int osize, const uint8_t *in, char *out,
                     ptrdiff_t n, unsigned *acc)
{
    (void)planes; (void)fl; (void)osize; (void)in; (void)out; (void)n; (void)acc;
    return 0;
}
ptrdiff_t sfp8s_binary8(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z, ptrdiff_t n,
                        unsigned *acc)
{
    (void)tab; (void)x; (void)y; (void)z; (void)n; (void)acc;
    return 0;
}
ptrdiff_t sfp8s_from_f32(const uint16_t *tab, const uint32_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc)
{
    (void)tab; (void)in; (void)out; (void)n; (void)acc;
    return 0;
}
ptrdiff_t sfp8s_from_f64(const uint16_t *tab, const uint64_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc)
{
    (void)tab; (void)in; (void)out; (void)n; (void)acc;
    return 0;
}
#endif
