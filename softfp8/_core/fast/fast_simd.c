/* AVX-512 and AVX2 kernels of the fast paths, compiled for the instruction set with
 * target attributes and chosen at run time (sfp8s_cpu_level); every other
 * build gets the stubs at the end, and the portable loops of fast.c run. */
#include "fast_simd.h"

#include <string.h>

#include "softfp8/softfp8.h"
#include "rng.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

int sfp8s_cpu_level(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vbmi"))
        return __builtin_cpu_supports("avx2") ? 2 : 0;
    if (__builtin_cpu_supports("avx2")) return 1;
    return 0;
}

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))

#include "simd_rng.h" /* the counter-based generator, sixteen elements at a time */

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

/* key64x8 through a conversion to binary32 toward zero, which keeps sign,
 * exponent and the 23 leading significand bits of lanes in binary32's normal
 * range (and of zeros and infinities), and gives the largest finite binary32
 * (the "huge" key: its low bits are ones) beyond it: the key is then that
 * binary32's key (sfp8f_key32) with the sticky bit taken from all 46 low
 * binary64 bits.  Blocks with a lane that converts to a NaN, a subnormal or a
 * zero (other than from a zero) take key64x8. */
TGT static inline __m512i key64x16f(__m512i b0, __m512i b1)
{
    const int rz = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvt_roundpd_ps(_mm512_castsi512_pd(b0), rz)),
                                  _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(b1), rz), 1);
    const __m512i low46 = _mm512_set1_epi64((1LL << 46) - 1);
    /* not covered: binary32 NaN, subnormal or zero results, except from zeros */
    __mmask16 z = _mm512_kunpackb(_mm512_fpclass_pd_mask(_mm512_castsi512_pd(b1), 0x06),
                                  _mm512_fpclass_pd_mask(_mm512_castsi512_pd(b0), 0x06));
    __mmask16 bad = _mm512_fpclass_ps_mask(f, 0xA7) & (__mmask16)~z, st;
    __m512i fi = _mm512_castps_si512(f), k;
    if (bad)
        return _mm512_inserti64x4(_mm512_castsi256_si512(key64x8(b0)), key64x8(b1), 1);
    k = _mm512_and_si512(_mm512_srli_epi32(fi, 16), _mm512_set1_epi32(0xfffe));
    /* sticky: the binary64 significand bits below the six leading ones (and the
       ones of the largest binary32, so beyond its range the key is key64x8's) */
    st = _mm512_kunpackb(_mm512_test_epi64_mask(b1, low46), _mm512_test_epi64_mask(b0, low46)) |
         _mm512_test_epi32_mask(fi, _mm512_set1_epi32(0x1ffff));
    return _mm512_mask_or_epi32(k, st, k, _mm512_set1_epi32(1));
}

TGT ptrdiff_t sfp8s_from_f64(const uint16_t *tab, const uint64_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc)
{
    __m512i a = _mm512_setzero_si512();
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i key = key64x16f(_mm512_loadu_si512((const void *)(in + i)),
                                _mm512_loadu_si512((const void *)(in + i + 8)));
        __m512i v = _mm512_i32gather_epi32(key, (const void *)tab, 2); /* high halves: the next entry */
        a = _mm512_or_si512(a, v);
        _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi32_epi8(v));
    }
    *acc |= (unsigned)_mm512_reduce_or_epi32(a) & 0xffffu;
    return i;
}

/* store sixteen codes and their flags (flo may be NULL); *facc |= the flags */
TGT static inline void store16(uint8_t *o, uint8_t *flo, __m128i code, __m128i fl, __m128i *facc)
{
    _mm_storeu_si128((__m128i *)o, code);
    if (flo) _mm_storeu_si128((__m128i *)flo, fl);
    *facc = _mm_or_si128(*facc, fl);
}

/* the OR of sixteen bytes */
TGT static inline unsigned or16(__m128i x)
{
    uint8_t bs[16];
    unsigned f = 0;
    _mm_storeu_si128((__m128i *)bs, x);
    for (int k = 0; k < 16; k++) f |= bs[k];
    return f;
}

/* bits of p + q rounded to odd (fast_impl.h, sfp8f_odd_sum), eight lanes; *s = p + q */
TGT static inline __m512i odd_sum512(__m512d p, __m512d q, __m512d *s_out)
{
    const __m512i one = _mm512_set1_epi64(1), mag = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL);
    const __m512i sgn = _mm512_set1_epi64((long long)(1ULL << 63));
    __m512d s = _mm512_add_pd(p, q), bb = _mm512_sub_pd(s, p);
    __m512d err = _mm512_add_pd(_mm512_sub_pd(p, _mm512_sub_pd(s, bb)), _mm512_sub_pd(q, bb));
    __m512i eb = _mm512_castpd_si512(err), bits = _mm512_castpd_si512(s);
    __mmask8 move = _mm512_test_epi64_mask(eb, mag) & _mm512_testn_epi64_mask(bits, one);
    __mmask8 same = _mm512_testn_epi64_mask(_mm512_xor_si512(eb, bits), sgn);
    bits = _mm512_mask_add_epi64(bits, move & same, bits, one);
    *s_out = s;
    return _mm512_mask_sub_epi64(bits, move & (__mmask8)~same, bits, one);
}

/* sixteen codes (the low lanes of x) -> their binary32 values, from two byte planes */
TGT static inline __m512 fma8_vals(const tab256 *hb, __m128i x)
{
    __m512i w = _mm512_zextsi128_si512(x);
    __mmask64 hi = _mm512_movepi8_mask(w);
    __m512i b2 = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(lookup(&hb[0], w, hi)));
    __m512i b3 = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(lookup(&hb[1], w, hi)));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_slli_epi32(b2, 16), _mm512_slli_epi32(b3, 24)));
}

/* eight lanes: the bits of a*b + c rounded to odd; *zero = lanes whose sum is zero */
TGT static inline __m512i fma8_odd(__m256 a, __m256 b, __m256 c, __mmask8 *zero)
{
    __m512d s;
    __m512i bits = odd_sum512(_mm512_mul_pd(_mm512_cvtps_pd(a), _mm512_cvtps_pd(b)), _mm512_cvtps_pd(c), &s);
    *zero = _mm512_cmp_pd_mask(s, _mm512_setzero_pd(), _CMP_EQ_OQ);
    return bits;
}

TGT ptrdiff_t sfp8s_fma8_avx512(const sfp8s_fma8 *t, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *o,
                                ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    tab256 info, hb[2];
    const __m512i lo16 = _mm512_set1_epi32(0xffff);
    __m128i facc = _mm_setzero_si128();
    ptrdiff_t i = 0;
    load_tab(&info, t->info);
    load_tab(&hb[0], t->hb);
    load_tab(&hb[1], t->hb + 256);
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(a + i)), y = _mm_loadu_si128((const __m128i *)(b + i));
        __m128i z = _mm_loadu_si128((const __m128i *)(c + i));
        __m512i xw = _mm512_zextsi128_si512(x), yw = _mm512_zextsi128_si512(y), zw = _mm512_zextsi128_si512(z);
        __m128i inf = _mm512_castsi512_si128(_mm512_or_si512(
            _mm512_or_si512(lookup(&info, xw, _mm512_movepi8_mask(xw)), lookup(&info, yw, _mm512_movepi8_mask(yw))),
            lookup(&info, zw, _mm512_movepi8_mask(zw))));
        __mmask8 z0, z1;
        __m512 vx = fma8_vals(hb, x), vy = fma8_vals(hb, y), vz = fma8_vals(hb, z);
        __m512i s0 = fma8_odd(_mm512_castps512_ps256(vx), _mm512_castps512_ps256(vy), _mm512_castps512_ps256(vz), &z0);
        __m512i s1 = fma8_odd(_mm512_extractf32x8_ps(vx, 1), _mm512_extractf32x8_ps(vy, 1),
                              _mm512_extractf32x8_ps(vz, 1), &z1);
        __m512i key = key64x16f(s0, s1);
        __m512i v = _mm512_and_si512(_mm512_i32gather_epi32(key, (const void *)t->fromf, 2), lo16);
        __m128i code = _mm512_cvtepi32_epi8(v);
        __m128i fl = _mm_and_si128(_mm_or_si128(_mm512_cvtepi32_epi8(_mm512_srli_epi32(v, 8)), inf),
                                   _mm_set1_epi8(0x7f));
        unsigned slow = (unsigned)_mm_movepi8_mask(inf) | (unsigned)z0 | (unsigned)z1 << 8;
        if (slow) { /* the core, from the operands read above (o may alias them) */
            uint8_t xs[16], ys[16], zs[16], cs[16], fs[16];
            _mm_storeu_si128((__m128i *)xs, x);
            _mm_storeu_si128((__m128i *)ys, y);
            _mm_storeu_si128((__m128i *)zs, z);
            _mm_storeu_si128((__m128i *)cs, code);
            _mm_storeu_si128((__m128i *)fs, fl);
            for (unsigned m = slow; m; m &= m - 1) {
                int k = __builtin_ctz(m);
                uint8_t f8 = 0;
                cs[k] = (uint8_t)sfp8_fma((const sfp8_format *)t->f, xs[k], ys[k], zs[k], (const sfp8_env *)t->env,
                                          &f8);
                fs[k] = f8;
            }
            code = _mm_loadu_si128((const __m128i *)cs);
            fl = _mm_loadu_si128((const __m128i *)fs);
        }
        store16(o + i, flo ? flo + i : NULL, code, fl, &facc);
    }
    *acc |= or16(facc);
    return i;
}

/* ---- stochastic casts (see fast_simd.h) ---- */

/* Tininess after rounding: the lanes of the binade below 2^emin (binary32
 * exponent field e == emin + 126) whose rounding on the unbounded grid cannot
 * reach 2^emin, so that they are tiny whatever the random word: the top M bits
 * of the significand (key bits 6..1) not all ones.  The others take the core. */
TGT static inline __mmask16 tiny_sure(const sfp8s_sr *t, __m512i key, __m512i e)
{
    __m512i km;
    if (t->M > 6) return 0;
    km = _mm512_set1_epi32(((1 << t->M) - 1) << (7 - t->M));
    return _mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32(t->emin + 126)) &
           _mm512_cmpneq_epi32_mask(_mm512_and_si512(key, km), km);
}

/* sixteen lanes of binary32 (isize 4) or binary64 at p: the key (fast.h) and
 * the fraction bits t (N bits) of the format's normal range */
TGT static inline __attribute__((always_inline)) __m512i sr_key(const sfp8s_sr *t, const void *p, int isize,
                                                               __m512i *tfr)
{
    __m512i key;
    if (isize == 4) {
        const int sh = 23 - t->M;
        __m512i b = _mm512_loadu_si512(p), rem = _mm512_and_si512(b, _mm512_set1_epi32((1 << sh) - 1));
        key = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(0xfffe));
        key = _mm512_mask_or_epi32(key, _mm512_test_epi32_mask(b, _mm512_set1_epi32(0x1ffff)), key,
                                   _mm512_set1_epi32(1));
        *tfr = t->N >= sh ? _mm512_sll_epi32(rem, _mm_cvtsi32_si128(t->N - sh))
                          : _mm512_srl_epi32(rem, _mm_cvtsi32_si128(sh - t->N));
    } else {
        /* the high and low words of the sixteen binary64 (one permute each); in 32-bit
           lanes the key of fast.c's sfp8f_key64 for exponents inside binary32's normal
           range and for zeros, else key64x16f for the block */
        const int sh = 52 - t->M - t->N; /* 13..51 */
        const __m512i b0 = _mm512_loadu_si512(p), b1 = _mm512_loadu_si512((const char *)p + 64);
        const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        __m512i lo = _mm512_permutex2var_epi32(b0, ev, b1);
        __m512i hi = _mm512_permutex2var_epi32(b0, _mm512_add_epi32(ev, _mm512_set1_epi32(1)), b1);
        __m512i h16 = _mm512_srli_epi32(hi, 16);
        __m512i remhi = _mm512_and_si512(hi, _mm512_set1_epi32((1 << (20 - t->M)) - 1));
        __mmask16 inr = _mm512_cmplt_epu32_mask(
            _mm512_sub_epi32(_mm512_and_si512(hi, _mm512_set1_epi32(0x7ff00000)), _mm512_set1_epi32(897 << 20)),
            _mm512_set1_epi32(254 << 20));
        __mmask16 zero = _mm512_testn_epi32_mask(hi, _mm512_set1_epi32(0x7fffffff)) & _mm512_testn_epi32_mask(lo, lo);
        if ((__mmask16)(inr | zero) != 0xffff) {
            key = key64x16f(b0, b1);
        } else {
            key = _mm512_ternarylogic_epi32(
                _mm512_and_si512(_mm512_sub_epi32(_mm512_srli_epi32(hi, 13), _mm512_set1_epi32(896 << 7)),
                                 _mm512_set1_epi32(0x7ffe)),
                h16, _mm512_set1_epi32(0x8000), 0xf8); /* A | (B & C) */
            key = _mm512_mask_or_epi32(key, _mm512_test_epi32_mask(hi, _mm512_set1_epi32(0x3fff)) |
                                                _mm512_test_epi32_mask(lo, lo),
                                       key, _mm512_set1_epi32(1));
            key = _mm512_mask_and_epi32(key, zero, h16, _mm512_set1_epi32(0x8000));
        }
        *tfr = sh >= 32 ? _mm512_srl_epi32(remhi, _mm_cvtsi32_si128(sh - 32))
                        : _mm512_or_si512(_mm512_srl_epi32(lo, _mm_cvtsi32_si128(sh)),
                                          _mm512_sll_epi32(remhi, _mm_cvtsi32_si128(32 - sh)));
    }
    return key;
}

/* The subnormal grid 2^(emin - M) of sixteen lanes at p, binary32 (biased
 * exponent fields e) or binary64 (read from p), normal in their own format and
 * below 2^emin: sv dropped significand bits, *K = sig >> sv, *nz = lanes with a
 * dropped bit set; returns t, the top N of the sv dropped bits.  Lanes outside
 * that range get any values. */
TGT static inline __attribute__((always_inline)) __m512i sub_grid(const sfp8s_sr *t, const void *p, int isize,
                                                                 __m512i e, __m512i *K, __mmask16 *nz)
{
    if (isize == 4) {
        const __m512i b = _mm512_loadu_si512(p), n = _mm512_set1_epi32(t->N);
        __m512i sig = _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi32(0x7fffff)), _mm512_set1_epi32(0x800000));
        __m512i sv = _mm512_sub_epi32(_mm512_set1_epi32(23 - t->M + t->emin + 127), e); /* 24 - M.. dropped bits */
        __m512i disc = _mm512_and_si512(
            sig, _mm512_sub_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), sv), _mm512_set1_epi32(1)));
        *K = _mm512_srlv_epi32(sig, sv); /* 0 from 32 dropped bits on */
        *nz = _mm512_test_epi32_mask(disc, disc);
        return _mm512_mask_mov_epi32(_mm512_sllv_epi32(disc, _mm512_sub_epi32(n, sv)), _mm512_cmpge_epi32_mask(sv, n),
                                     _mm512_srlv_epi32(disc, _mm512_sub_epi32(sv, n)));
    } else {
        __m256i k2[2], t2[2];
        __mmask8 nz2[2];
        for (int h = 0; h < 2; h++) {
            __m512i b = _mm512_loadu_si512((const char *)p + 64 * h);
            __m512i e64 = _mm512_and_si512(_mm512_srli_epi64(b, 52), _mm512_set1_epi64(0x7ff));
            __m512i sig = _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi64(0xFFFFFFFFFFFFFLL)),
                                          _mm512_set1_epi64(1LL << 52));
            /* 53 - M.. dropped bits, so t is a right shift */
            __m512i sv = _mm512_sub_epi64(_mm512_set1_epi64(52 - t->M + t->emin + 1023), e64);
            __m512i disc = _mm512_and_si512(
                sig, _mm512_sub_epi64(_mm512_sllv_epi64(_mm512_set1_epi64(1), sv), _mm512_set1_epi64(1)));
            k2[h] = _mm512_cvtepi64_epi32(_mm512_srlv_epi64(sig, sv));
            t2[h] = _mm512_cvtepi64_epi32(_mm512_srlv_epi64(disc, _mm512_sub_epi64(sv, _mm512_set1_epi64(t->N))));
            nz2[h] = _mm512_test_epi64_mask(disc, disc);
        }
        *K = _mm512_inserti64x4(_mm512_castsi256_si512(k2[0]), k2[1], 1);
        *nz = (__mmask16)_mm512_kunpackb(nz2[1], nz2[0]);
        return _mm512_inserti64x4(_mm512_castsi256_si512(t2[0]), t2[1], 1);
    }
}

/* Of the lanes core (the table's 0x8000: below the normal range, or overflow),
 * the subnormal results that are rounded here (sfp8s_sr, sub_ok), on the grid
 * of 2^(emin - M): their fraction bits replace tfr's; returns them.  Binary32
 * exponent fields from 1, binary64 ones from -125 (key64x16f's e32 >= 2). */
TGT static inline __mmask16 sr_sub(const sfp8s_sr *t, const void *p, int isize, __m512i key, __mmask16 core,
                                   __m512i *tfr)
{
    __m512i e = _mm512_and_si512(_mm512_srli_epi32(key, 7), _mm512_set1_epi32(0xff));
    __mmask16 sub = core & _mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(t->emin + 127)) &
                    _mm512_cmpge_epi32_mask(e, _mm512_set1_epi32(isize == 4 ? 1 : 2)) &
                    (t->tin_before ? (__mmask16)0xffff
                                   : _mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(t->emin + 126)) | tiny_sure(t, key, e));
    if (!t->is_signed) sub &= (__mmask16)~_mm512_test_epi32_mask(key, _mm512_set1_epi32(0x8000));
    if (!sub) return 0;
    {
        __m512i K;
        __mmask16 nz;
        *tfr = _mm512_mask_mov_epi32(*tfr, sub, sub_grid(t, p, isize, e, &K, &nz));
    }
    return sub;
}

/* the lanes of core (codes and flags already stored at out, flo) through the
 * core, out of the kernel's loop; returns the OR of their flags */
static __attribute__((noinline)) unsigned sr_core_lanes(const sfp8s_sr *t, const void *in, int isize, ptrdiff_t i,
                                                        unsigned core, uint8_t *out, uint8_t *flo)
{
    sfp8_env e = *(const sfp8_env *)t->env;
    unsigned g = 0;
    for (unsigned m = core; m; m &= m - 1) {
        int k = __builtin_ctz(m);
        uint8_t f8 = 0;
        uint64_t bits = 0;
        memcpy(&bits, (const char *)in + (i + k) * isize, (size_t)isize);
        e.random = sfp8r_bits(t->seed_key, t->stream_key, t->index0 + (uint64_t)(i + k));
        out[i + k] = (uint8_t)sfp8_convert(isize == 4 ? &sfp8_binary32 : &sfp8_binary64, (const sfp8_format *)t->dst,
                                           bits, &e, &f8);
        if (flo) flo[i + k] = f8;
        g |= f8;
    }
    return g;
}

/* sixteen lanes at i with the random bits R (masked to N bits): stores codes
 * (and flags), ORs the flags of the lanes it decides into *facc, returns the
 * lanes for the core.  The table's entries (stochastic.c, build_sr) carry
 * 0x8000 for the keys the normal-range rule does not decide (below the normal
 * range, or overflow) and ra == rz for zeros, infinities and NaNs. */
TGT static inline __attribute__((always_inline)) __mmask16 sr_cast16(const sfp8s_sr *t, const void *in, int isize,
                                                                    ptrdiff_t i, __m512i R, __m512i rmask,
                                                                    uint8_t *out, uint8_t *flo, __m128i *facc)
{
    const void *p = (const char *)in + i * isize;
    __m512i tfr, key = sr_key(t, p, isize, &tfr), v = _mm512_i32gather_epi32(key, (const void *)t->rza, 4);
    __mmask16 core = _mm512_test_epi32_mask(v, _mm512_set1_epi32(0x8000)), pick;
    __m128i code, fl;
    if (core && t->sub_ok) {
        __mmask16 sub = sr_sub(t, p, isize, key, core, &tfr);
        v = _mm512_mask_and_epi32(v, sub, v, _mm512_set1_epi32(~0x8000));
        core &= (__mmask16)~sub;
    }
    /* t + R >= 2^N  <=>  R > (2^N - 1) - t */
    pick = _mm512_cmpgt_epu32_mask(R, _mm512_sub_epi32(rmask, tfr));
    v = _mm512_mask_srli_epi32(v, pick, v, 16);
    code = _mm512_cvtepi32_epi8(v);
    fl = _mm512_cvtepi32_epi8(_mm512_srli_epi32(v, 8));
    _mm_storeu_si128((__m128i *)(out + i), code);
    if (flo) _mm_storeu_si128((__m128i *)(flo + i), fl);
    *facc = _mm_or_si128(*facc, _mm_maskz_mov_epi8((__mmask16)~core, fl));
    return core;
}

/* ---- the same cast by arithmetic (sfp8s_sr.ar): no key table ----
 *
 * DERIVED from core.c round_pack (its stochastic branch) like sr_cast16, with
 * the two neighbours computed instead of gathered from rza (Zen 4, 10^7
 * elements: float32 -> E4M3 0.95 -> 0.68 ns, float64 1.28 -> 0.76 ns).
 * The input is read as sign, biased exponent E and F fraction bits (binary32:
 * F = 23, bias 127; binary64: the high words, F = 20 + 32, bias 1023):
 *   - |x| >= 2^emin: the toward-zero neighbour's magnitude code is the input's
 *     exponent and leading M fraction bits read as one integer, less
 *     (bias + emin - 1) << M (the code of 2^emin is 1 << M); the away neighbour
 *     is the next code (its carry into the exponent included); the F - M
 *     dropped bits give inexact (not all zero) and t (their top N bits).
 *   - 0 < |x| < 2^emin, x normal in its own format: the subnormal grid
 *     2^(emin - M), sv = F - M + (bias + emin) - E dropped bits of the
 *     significand sig: K = sig >> sv, t = the top N of the sv dropped bits
 *     (sr_sub's arithmetic); every such lane is tiny: below 2^emin before
 *     rounding, and after rounding too except in the binade below 2^emin with
 *     the top M fraction bits all ones (the unbounded grid may carry to
 *     2^emin there), which takes the core when tininess is after rounding.
 *   - zeros: the zero of the sign (negzero), no flag.
 * Lanes whose rounded magnitude exceeds maxmag (overflow, infinities and NaNs,
 * whose exponent field gives a magnitude far above it), input subnormals and
 * the tininess lanes above take the core (sr_core_lanes).  The choice between
 * the neighbours is sr_cast16's: away iff t + R >= 2^N.  Flags: inexact, with
 * underflow on the subnormal grid. */

/* the lanes of rest (nonzero, below 2^emin) rounded on the subnormal grid:
 * replaces their mag, tfr and ix; returns them.  a: |x| (binary32) or the
 * high words of |x| (binary64) in 32-bit lanes */
TGT static inline __mmask16 sr_arith_sub(const sfp8s_sr *t, const void *p, int isize, __m512i a, __mmask16 rest,
                                         __m512i *mag, __m512i *tfr, __mmask16 *ix)
{
    const int M = t->M, fb = isize == 4 ? 23 : 20; /* fraction bits in a */
    const __m512i e = _mm512_srli_epi32(a, fb & 31);
    const __m512i km = _mm512_set1_epi32(((1 << M) - 1) << (fb - M));
    __mmask16 sub = rest & _mm512_cmpge_epi32_mask(e, _mm512_set1_epi32(1)), nz;
    __m512i K, tt;
    if (!t->tin_before)
        sub &= (__mmask16)~(_mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32((isize == 4 ? 126 : 1022) + t->emin)) &
                            _mm512_cmpeq_epi32_mask(_mm512_and_si512(a, km), km));
    if (!sub) return 0;
    tt = sub_grid(t, p, isize, e, &K, &nz);
    *mag = _mm512_mask_mov_epi32(*mag, sub, K);
    *tfr = _mm512_mask_mov_epi32(*tfr, sub, tt);
    *ix = (__mmask16)((*ix & ~sub) | (nz & sub));
    return sub;
}

/* sixteen lanes at i, as sr_cast16 (same return and flag stores), their codes in the
 * low bytes of *codev (the caller stores them); the flags' OR in *fm */
TGT static inline __attribute__((always_inline)) __mmask16 sr_arith16(const sfp8s_sr *t, const void *in, int isize,
                                                                     ptrdiff_t i, __m512i R, __m512i rmask,
                                                                     __m512i *codev, uint8_t *flo, uint32_t *fm)
{
    const void *p = (const char *)in + i * isize;
    const int M = t->M;
    __m512i a, mag, tfr, code, fl;
    __mmask16 neg, ix, norm, zero, rest, sub = 0, core = 0, pick, sgn;
    if (isize == 4) {
        const int sh = 23 - M;
        const __m512i b = _mm512_loadu_si512(p);
        __m512i rem;
        neg = _mm512_movepi32_mask(b);
        a = _mm512_and_si512(b, _mm512_set1_epi32(0x7fffffff));
        rem = _mm512_and_si512(a, _mm512_set1_epi32((1 << sh) - 1));
        ix = _mm512_test_epi32_mask(rem, rem);
        tfr = t->N >= sh ? _mm512_sll_epi32(rem, _mm_cvtsi32_si128(t->N - sh))
                         : _mm512_srl_epi32(rem, _mm_cvtsi32_si128(sh - t->N));
        mag = _mm512_sub_epi32(_mm512_srl_epi32(a, _mm_cvtsi32_si128(sh)), _mm512_set1_epi32((126 + t->emin) << M));
        norm = _mm512_cmpge_epu32_mask(a, _mm512_set1_epi32((127 + t->emin) << 23));
        zero = _mm512_testn_epi32_mask(a, a);
    } else {
        const int sh = 52 - M - t->N; /* 16..51: the dropped bits' top N start here */
        const __m512i b0 = _mm512_loadu_si512(p), b1 = _mm512_loadu_si512((const char *)p + 64);
        const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        __m512i lo = _mm512_permutex2var_epi32(b0, ev, b1);
        __m512i hi = _mm512_permutex2var_epi32(b0, _mm512_add_epi32(ev, _mm512_set1_epi32(1)), b1);
        __m512i remhi;
        neg = _mm512_movepi32_mask(hi);
        a = _mm512_and_si512(hi, _mm512_set1_epi32(0x7fffffff));
        remhi = _mm512_and_si512(a, _mm512_set1_epi32((1 << (20 - M)) - 1));
        ix = _mm512_test_epi32_mask(remhi, remhi) | _mm512_test_epi32_mask(lo, lo);
        tfr = sh >= 32 ? _mm512_srl_epi32(remhi, _mm_cvtsi32_si128(sh - 32))
                       : _mm512_or_si512(_mm512_srl_epi32(lo, _mm_cvtsi32_si128(sh)),
                                         _mm512_sll_epi32(remhi, _mm_cvtsi32_si128(32 - sh)));
        mag = _mm512_sub_epi32(_mm512_srli_epi32(a, (unsigned)(20 - M)), _mm512_set1_epi32((1022 + t->emin) << M));
        norm = _mm512_cmpge_epu32_mask(a, _mm512_set1_epi32((1023 + t->emin) << 20));
        zero = _mm512_testn_epi32_mask(a, a) & _mm512_testn_epi32_mask(lo, lo);
    }
    mag = _mm512_maskz_mov_epi32(norm, mag);
    rest = (__mmask16) ~(norm | zero);
    if (rest) {
        sub = sr_arith_sub(t, p, isize, a, rest, &mag, &tfr, &ix);
        core = (__mmask16)(rest & ~sub);
    }
    /* t + R >= 2^N  <=>  R > (2^N - 1) - t; t = 0 where exact, so only inexact lanes move */
    pick = _mm512_cmpgt_epu32_mask(R, _mm512_sub_epi32(rmask, tfr));
    mag = _mm512_mask_add_epi32(mag, pick, mag, _mm512_set1_epi32(1));
    core |= _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32((int)t->maxmag));
    sgn = neg & (t->negzero ? (__mmask16)0xffff : _mm512_test_epi32_mask(mag, mag));
    code = _mm512_mask_or_epi32(mag, sgn, mag, _mm512_set1_epi32((int)t->signbit));
    *codev = code;
    if (flo) {
        fl = _mm512_maskz_mov_epi32(ix, _mm512_set1_epi32(SFP8_FLAG_INEXACT));
        fl = _mm512_mask_mov_epi32(fl, ix & sub, _mm512_set1_epi32(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW));
        _mm_storeu_si128((__m128i *)(flo + i), _mm512_cvtepi32_epi8(fl));
    }
    /* the flags' OR as two lane masks (inexact; underflow), core lanes left out */
    *fm = (uint32_t)(*fm | (ix & (__mmask16)~core) | (uint32_t)(ix & sub & (__mmask16)~core) << 16);
    return core;
}

/* the kernel for one input size (isize a constant after inlining); t is a local
 * copy, so that the stores to out cannot reload its fields */
TGT static inline __attribute__((always_inline)) ptrdiff_t sr_cast_run(const sfp8s_sr *tp, const void *in, int isize,
                                                                      int ar, uint8_t *out, ptrdiff_t n,
                                                                      uint8_t *flo, unsigned *acc)
{
    const sfp8s_sr t = *tp;
    const __m512i rmask = _mm512_set1_epi32((int)(t.N == 32 ? 0xffffffffu : (1u << t.N) - 1));
    rng16 g = rng16_init(t.seed_key, t.stream_key, t.index0);
    __m128i facc = _mm_setzero_si128();
    uint32_t fm = 0; /* ar: lanes that were inexact | underflow << 16 */
    const __m512i bytes0 = _mm512_set_epi8(124, 120, 116, 112, 108, 104, 100, 96, 92, 88, 84, 80, 76, 72, 68, 64, 60,
                                           56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 124, 120, 116,
                                           112, 108, 104, 100, 96, 92, 88, 84, 80, 76, 72, 68, 64, 60, 56, 52, 48, 44,
                                           40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0);
    unsigned a = 0;
    ptrdiff_t i = 0;
    for (; i + 32 <= n; i += 32) { /* two blocks: the generator's chains of both overlap */
        __m512i R0 = _mm512_and_si512(rng16_next(&g), rmask), R1 = _mm512_and_si512(rng16_next(&g), rmask);
        __mmask16 c0, c1;
        if (ar) { /* the 32 codes' low bytes by one two-source byte permute */
            __m512i v0, v1;
            c0 = sr_arith16(&t, in, isize, i, R0, rmask, &v0, flo, &fm);
            c1 = sr_arith16(&t, in, isize, i + 16, R1, rmask, &v1, flo, &fm);
            _mm256_storeu_si256((__m256i *)(void *)(out + i),
                                _mm512_castsi512_si256(_mm512_permutex2var_epi8(v0, bytes0, v1)));
        } else {
            c0 = sr_cast16(&t, in, isize, i, R0, rmask, out, flo, &facc);
            c1 = sr_cast16(&t, in, isize, i + 16, R1, rmask, out, flo, &facc);
        }
        if (c0 | c1) {
            if (c0) a |= sr_core_lanes(&t, in, isize, i, c0, out, flo);
            if (c1) a |= sr_core_lanes(&t, in, isize, i + 16, c1, out, flo);
        }
    }
    for (; i + 16 <= n; i += 16) {
        __m512i R = _mm512_and_si512(rng16_next(&g), rmask), v;
        __mmask16 c;
        if (ar) {
            c = sr_arith16(&t, in, isize, i, R, rmask, &v, flo, &fm);
            _mm_storeu_si128((__m128i *)(void *)(out + i), _mm512_cvtepi32_epi8(v));
        } else {
            c = sr_cast16(&t, in, isize, i, R, rmask, out, flo, &facc);
        }
        if (c) a |= sr_core_lanes(&t, in, isize, i, c, out, flo);
    }
    if (fm & 0xffffu) a |= SFP8_FLAG_INEXACT;
    if (fm >> 16) a |= SFP8_FLAG_UNDERFLOW;
    *acc |= a | or16(facc);
    return i;
}

TGT ptrdiff_t sfp8s_from_float_sr_avx512(const sfp8s_sr *t, const void *in, int isize, uint8_t *out, ptrdiff_t n,
                                         uint8_t *flo, unsigned *acc)
{
    if (t->ar)
        return isize == 4 ? sr_cast_run(t, in, 4, 1, out, n, flo, acc) : sr_cast_run(t, in, 8, 1, out, n, flo, acc);
    return isize == 4 ? sr_cast_run(t, in, 4, 0, out, n, flo, acc) : sr_cast_run(t, in, 8, 0, out, n, flo, acc);
}

/* Sixteen lanes of sfp8s_arith8_sr_avx512 with the random bits R (all 32):
 * wide (a constant after inlining) 0 when N == 32, 1 when 12 < N < 32 (the
 * top 12 of the N bits against t12, ties to the caller), 2 when N <= 12 (all N
 * bits against the top N of t12, no ties).  idx: bytes 4j + 2 of q picked (the
 * code) then bytes 4j of the flags, one permute for both; returns the flags. */
TGT static inline __attribute__((always_inline)) __m128i sr8_16(const uint32_t *qt, __m512i pal, __m512i rmask,
                                                               __m128i rsh, __m128i tsh, __m512i idx, int wide,
                                                               __m512i R, const uint8_t *x, const uint8_t *y,
                                                               uint8_t *out, uint8_t *fl)
{
    const __m512i lo12 = _mm512_set1_epi32(0xfff);
    __m512i ix = _mm512_or_si512(_mm512_slli_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)x)), 8),
                                 _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)y)));
    __m512i q = _mm512_i32gather_epi32(ix, (const void *)qt, 4), Rt, lim, f, cf;
    if (wide == 0) {
        Rt = _mm512_srli_epi32(R, 20);
        lim = _mm512_andnot_si512(q, lo12); /* 2^12 - 1 - t12 */
    } else if (wide == 1) {
        Rt = _mm512_srl_epi32(_mm512_and_si512(R, rmask), rsh);
        lim = _mm512_andnot_si512(q, lo12);
    } else {
        Rt = _mm512_and_si512(R, rmask);
        lim = _mm512_sub_epi32(rmask, _mm512_srl_epi32(_mm512_and_si512(q, lo12), tsh));
    }
    /* f = rz flags | ra flags << 16 of the lane's class (the permute reads index bits 0..3) */
    f = _mm512_permutexvar_epi32(_mm512_srli_epi32(q, 12), pal);
    {
        __mmask16 pick = _mm512_cmpgt_epu32_mask(Rt, lim);
        q = _mm512_mask_srli_epi32(q, pick, q, 8);  /* ra to byte 2 */
        f = _mm512_mask_srli_epi32(f, pick, f, 16); /* ra flags to byte 0 */
        if (wide != 2) f = _mm512_mask_or_epi32(f, _mm512_cmpeq_epi32_mask(Rt, lim), f, _mm512_set1_epi32(0x80));
    }
    cf = _mm512_permutex2var_epi8(q, idx, f);
    _mm_storeu_si128((__m128i *)out, _mm512_castsi512_si128(cf));
    _mm_storeu_si128((__m128i *)fl, _mm512_extracti32x4_epi32(cf, 1));
    return _mm512_extracti32x4_epi32(cf, 1);
}

TGT static inline __attribute__((always_inline)) unsigned sr8_run(const sfp8s_sr8 *p, const uint8_t *x,
                                                                 const uint8_t *y, uint8_t *out, uint8_t *fl,
                                                                 ptrdiff_t n, int wide)
{
    const int N = p->N;
    const __m512i rmask = _mm512_set1_epi32((int)(N == 32 ? 0xffffffffu : (1u << N) - 1));
    const __m128i rsh = _mm_cvtsi32_si128(N > 12 ? N - 12 : 0), tsh = _mm_cvtsi32_si128(N > 12 ? 0 : 12 - N);
    const __m512i pal = _mm512_srli_epi32(_mm512_loadu_si512((const void *)p->pal), 8);
    const __m512i idx = _mm512_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        0, 0, 0, 0, 0, 0, 124, 120, 116, 112, 108, 104, 100, 96, 92, 88, 84, 80, 76,
                                        72, 68, 64, 62, 58, 54, 50, 46, 42, 38, 34, 30, 26, 22, 18, 14, 10, 6, 2);
    const uint32_t *qt = p->q;
    rng16 g = rng16_init(p->seed_key, p->stream_key, p->index0);
    __m128i facc = _mm_setzero_si128();
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16)
        facc = _mm_or_si128(facc, sr8_16(qt, pal, rmask, rsh, tsh, idx, wide, rng16_next(&g), x + i, y + i,
                                         out + i, fl + i));
    if (i < n) { /* the last lanes through copies */
        uint8_t xs[16] = {0}, ys[16] = {0}, os[16], fs[16];
        memcpy(xs, x + i, (size_t)(n - i));
        memcpy(ys, y + i, (size_t)(n - i));
        sr8_16(qt, pal, rmask, rsh, tsh, idx, wide, rng16_next(&g), xs, ys, os, fs);
        memcpy(out + i, os, (size_t)(n - i));
        memcpy(fl + i, fs, (size_t)(n - i));
        for (ptrdiff_t j = 0; j < n - i; j++) facc = _mm_or_si128(facc, _mm_set1_epi8((char)fs[j]));
    }
    return or16(facc);
}

/* see fast_simd.h */
TGT unsigned sfp8s_arith8_sr_avx512(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out, uint8_t *fl,
                                    ptrdiff_t n)
{
    return p->N == 32 ? sr8_run(p, x, y, out, fl, n, 0)
           : p->N > 12 ? sr8_run(p, x, y, out, fl, n, 1)
                       : sr8_run(p, x, y, out, fl, n, 2);
}

/* through binary64, eight lanes at a time (stochastic.c, sr16_one) */
TGT static unsigned sr16d_avx512(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                                 uint8_t *fl, ptrdiff_t n)
{
    const int sh = 52 - p->M;
    const __m512i msk = _mm512_set1_epi64((long long)p->mask), lowb = _mm512_set1_epi64(0xff);
    const __m512i rmask = _mm512_set1_epi64((long long)(p->N == 32 ? 0xffffffffu : (1u << p->N) - 1));
    const __m512i remm = _mm512_set1_epi64((long long)(((uint64_t)1 << sh) - 1));
    const __m512i m52 = _mm512_set1_epi64(0xFFFFFFFFFFFFFLL), e11 = _mm512_set1_epi64(0x7ff);
    const __m512i ebase = _mm512_set1_epi64(p->ebase), maxmag = _mm512_set1_epi64(p->maxmag);
    const __m128i shc = _mm_cvtsi32_si128(sh), tsh = _mm_cvtsi32_si128(sh - p->N), mc = _mm_cvtsi32_si128(p->M);
    const uint64_t G = 0x9E3779B97F4A7C15ULL;
    __m512i h = _mm512_add_epi64(_mm512_mullo_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)p->index0),
                                                                     _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0)),
                                                    _mm512_set1_epi64((long long)G)),
                                 _mm512_set1_epi64((long long)p->stream_key));
    const __m512i step = _mm512_set1_epi64((long long)(8 * G)), sk = _mm512_set1_epi64((long long)p->seed_key);
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
        } else if (p->op == 3) { /* the quotient rounded in binary64: stochastic.c, sr16_one */
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
        R = _mm512_and_si512(_mm512_cvtepu32_epi64(rand8(h, sk)), rmask);
        h = _mm512_add_epi64(h, step);
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

/* ---- 16-bit arithmetic (see fast_simd.h): the lanes of round_f64.c's
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

#define AINL __attribute__((always_inline))

/* eight codes -> their vf entries (fast_simd.h): computed, or gathered */
TGT static inline AINL __m512i a16_load512(const sfp8s_a16 *p, const uint16_t *x, __m512i msk)
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

/* 1 if some lane's binary64 sum may be inexact: the binary exponents of the
 * operands more than 52 - p apart (p = M + 1 significant bits: closer operands
 * sum to at most 53 bits, docs/performance.md), or one operand zero and the
 * other not (harmless: those take TwoSum) */
TGT static inline AINL int far512(const sfp8s_a16 *p, __m512d vx, __m512d vy)
{
    /* getexp: floor(log2|v|), -inf for zero (a zero operand then counts as far) */
    __m512d d = _mm512_sub_pd(_mm512_getexp_pd(vx), _mm512_getexp_pd(vy));
    return _mm512_cmp_pd_mask(_mm512_abs_pd(d), _mm512_set1_pd(51 - p->M), _CMP_GT_OQ) != 0;
}

/* 1 if some lane's binary64 P + z may be inexact, P = x*y exact (at most 2p
 * bits): P is a multiple of 2^(EP - 2p + 1), z of 2^(Ez - p + 1), the sum is
 * below 2^(max(EP, Ez) + 2), so it is exact when max(EP, Ez) - min(EP - 2p + 1,
 * Ez - p + 1) <= 51 (a zero operand: not claimed, unless both are zero) */
TGT static inline AINL int fma_far512(const sfp8s_a16 *p, __m512d pr, __m512d vz)
{
    __m512d gp = _mm512_getexp_pd(pr), gz = _mm512_getexp_pd(vz);
    __m512d lo = _mm512_min_pd(_mm512_sub_pd(gp, _mm512_set1_pd(2 * p->M + 1)), _mm512_sub_pd(gz, _mm512_set1_pd(p->M)));
    return _mm512_cmp_pd_mask(_mm512_sub_pd(_mm512_max_pd(gp, gz), lo), _mm512_set1_pd(51), _CMP_GT_OQ) != 0;
}

TGT static inline AINL ptrdiff_t a16_512(int OP, int MODE, const sfp8s_a16 *p, const uint16_t *a,
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

static int a16_f32_ok(const sfp8s_a16 *p, int op)
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
TGT static inline AINL __m512 a16_load16f(const sfp8s_a16 *p, const uint16_t *x, __mmask16 *slow)
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

TGT static inline AINL ptrdiff_t a16f_512(int OP, int MODE, const sfp8s_a16 *p, const uint16_t *a,
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

/* ---- 16-bit stochastic add / subtract / multiply through binary32, sixteen
 *      lanes (the formats of a16_f32_ok): the lanes of sr16d_avx512 whose
 *      binary32 result is exact (every product; a sum whose operands' binary
 *      exponents differ by at most 22 - M, as a16f_512), then sr16_one's rule on
 *      binary32 bits: K the top M fraction bits, rem the 23 - M dropped ones,
 *      t = floor(rem * 2^N / 2^(23 - M)) (the binary64 rem is rem << 29), one
 *      up iff R > (2^N - 1) - t.  Operands the arithmetic decoding does not
 *      cover (subnormal, NaN, infinity: they may raise flags) take the core;
 *      a block with a far sum takes sr16d_avx512. ---- */
TGT static unsigned sr16f_avx512(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
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
/* eight lanes: returns their codes (in 64-bit lanes; the lanes for the core in *slow,
 * the inexact ones in *inexact); Rs = the lanes' N random bits << (sh - N) */
TGT static inline AINL __m512i sr16q_half(const sfp8s_sr16 *p, int OP, __m512d a, __m512d b, __mmask8 *slow,
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
TGT static inline AINL __m512d sr16q_load8(const sfp8s_a16 *d, const uint16_t *x, __mmask8 *slow)
{
    const __m512i v = a16_load512(d, x, _mm512_set1_epi64((long long)d->mask));
    *slow = _mm512_test_epi64_mask(v, _mm512_set1_epi64(0x80));
    return _mm512_castsi512_pd(_mm512_andnot_si512(_mm512_set1_epi64(0xff), v));
}

/* DEC: 1 binary16, 2 bfloat16, 0 arithmetic through binary32 (a16_f32_ok), -1 a16_load512 */
TGT static inline AINL unsigned sr16q_run(int OP, int DEC, const sfp8s_sr16 *pp, const uint16_t *x,
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
    TGT static unsigned NAME(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,          \
                             uint8_t *fl, ptrdiff_t n)                                                         \
    {                                                                                                          \
        const sfp8s_a16 *d = p->a16;                                                                           \
        if (d->hw) return d->hw == 1 ? sr16q_run(OP, 1, p, x, y, out, fl, n) : sr16q_run(OP, 2, p, x, y, out, fl, n); \
        return a16_f32_ok(d, SFP8S_DIV) ? sr16q_run(OP, 0, p, x, y, out, fl, n)                               \
                                        : sr16q_run(OP, -1, p, x, y, out, fl, n);                              \
    }
SR16Q(sr16div_avx512, 3)
SR16Q(sr16sqrt_avx512, 4)

/* see fast_simd.h */
TGT unsigned sfp8s_arith16_sr_avx512(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                                     uint8_t *fl, ptrdiff_t n)
{
    if (p->op < 3 && p->a16 && a16_f32_ok(p->a16, p->op == 2 ? SFP8S_MUL : SFP8S_ADD))
        return sr16f_avx512(p, x, y, out, fl, n);
    if (p->op == 3 && p->a16) return sr16div_avx512(p, x, y, out, fl, n);
    if (p->op == 4 && p->a16) return sr16sqrt_avx512(p, x, x, out, fl, n);
    return sr16d_avx512(p, x, y, out, fl, n);
}

TGT static ptrdiff_t arith16f_avx512(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                                     const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    A16_DISPATCH(a16f_512)
}

TGT ptrdiff_t sfp8s_arith16_avx512(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                                   const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    if (a16_f32_ok(p, op)) return arith16f_avx512(p, op, a, b, c, o, n, flo, acc);
    A16_DISPATCH(a16_512)
}

/* ---- the same with AVX2: four lanes, masks as vectors ---- */

/* ---- fma under stochastic rounding (see fast_simd.h; stochastic.c, srf_one):
 *      eight lanes of binary64, x*y exact, + z rounded to odd (as a16_512),
 *      then the rule of sr16d_avx512 with R from rand8_high. ---- */
TGT static inline AINL __m512i srf_load(const sfp8s_srf *q, int isz, const char *x, __m512i msk)
{
    const sfp8s_sr16 *p = &q->s;
    __m512i i;
    if (isz == 2 && p->a16) return a16_load512(p->a16, (const uint16_t *)(const void *)x, msk);
    i = isz == 1 ? _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)x))
                 : _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(const void *)x));
    if (isz == 1 && q->dec8) {
        const __m512i mag = _mm512_and_si512(i, _mm512_set1_epi64((long long)q->magmask));
        const __mmask8 sub = _mm512_testn_epi64_mask(mag, _mm512_set1_epi64(-(1LL << p->M)));
        __m512i v = _mm512_add_epi64(_mm512_sll_epi64(mag, _mm_cvtsi32_si128(52 - p->M)), _mm512_set1_epi64((long long)q->off));
        v = _mm512_mask_mov_epi64(v, sub, _mm512_castpd_si512(_mm512_mul_pd(_mm512_cvtepi64_pd(mag), _mm512_set1_pd(q->sub))));
        v = _mm512_mask_or_epi64(v, sub & _mm512_test_epi64_mask(mag, mag), v, _mm512_set1_epi64((long long)q->subfl));
        v = _mm512_or_si512(v, _mm512_sll_epi64(_mm512_and_si512(i, _mm512_set1_epi64((long long)p->signbit)),
                                                _mm_cvtsi32_si128(q->sshift)));
        return _mm512_mask_or_epi64(v, _mm512_cmpgt_epu64_mask(mag, _mm512_set1_epi64((long long)p->maxmag)), v,
                                    _mm512_set1_epi64(0x80));
    }
    return _mm512_i64gather_epi64(_mm512_and_si512(i, msk), (const void *)p->vf, 8);
}

TGT static inline AINL unsigned srf_run(const sfp8s_srf *q, int isz, const char *x, const char *y, const char *z,
                                        char *out, uint8_t *fl, ptrdiff_t n)
{
    const sfp8s_sr16 *p = &q->s;
    const int sh = 52 - p->M, unsig = !p->signbit;
    const double two_n = (double)((uint64_t)1 << p->N), top_half = (double)(1 << p->M) - 0.5;
    const __m512i msk = _mm512_set1_epi64((long long)p->mask), lowb = _mm512_set1_epi64(0xff);
    const __m512i one = _mm512_set1_epi64(1), magm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL);
    const __m512i sgn = _mm512_set1_epi64((long long)(1ULL << 63));
    const __m512i rmask = _mm512_set1_epi64((long long)(p->N == 32 ? 0xffffffffu : (1u << p->N) - 1));
    const __m512i remm = _mm512_set1_epi64((long long)(((uint64_t)1 << sh) - 1));
    const __m512i m52 = _mm512_set1_epi64(0xFFFFFFFFFFFFFLL), e11 = _mm512_set1_epi64(0x7ff);
    const __m512i ebase1 = _mm512_set1_epi64(p->ebase - 1), maxmag = _mm512_set1_epi64(p->maxmag);
    const __m512i signb = _mm512_set1_epi64((long long)p->signbit);
    const __m128i shc = _mm_cvtsi32_si128(sh), tsh = _mm_cvtsi32_si128(sh - p->N), mc = _mm_cvtsi32_si128(p->M);
    rng16 g = rng16_init(p->seed_key, p->stream_key, p->index0); /* eight lanes a step: rand8_high */
    __m512i facc = _mm512_setzero_si512();
    for (ptrdiff_t i = 0; i + 8 <= n; i += 8) {
        const __m512i bx = srf_load(q, isz, x + isz * i, msk), by = srf_load(q, isz, y + isz * i, msk);
        const __m512i bz = srf_load(q, isz, z + isz * i, msk), fo = _mm512_or_si512(_mm512_or_si512(bx, by), bz);
        const __m512d pr = _mm512_mul_pd(_mm512_castsi512_pd(_mm512_andnot_si512(lowb, bx)),
                                         _mm512_castsi512_pd(_mm512_andnot_si512(lowb, by)));
        const __m512d vz = _mm512_castsi512_pd(_mm512_andnot_si512(lowb, bz));
        /* TwoSum, rounded to odd (fast.h, sfp8f_odd_sum) */
        const __m512d s = _mm512_add_pd(pr, vz), bb = _mm512_sub_pd(s, pr);
        const __m512i eb = _mm512_castpd_si512(_mm512_add_pd(_mm512_sub_pd(pr, _mm512_sub_pd(s, bb)), _mm512_sub_pd(vz, bb)));
        __m512i bits = _mm512_castpd_si512(s), e, rem, mag, R, f8;
        __mmask8 low, rnz, uf = 0;
        const __mmask8 move = _mm512_test_epi64_mask(eb, magm) & _mm512_testn_epi64_mask(bits, one);
        const __mmask8 same = _mm512_testn_epi64_mask(_mm512_xor_si512(eb, bits), sgn);
        __mmask8 slow = _mm512_test_epi64_mask(fo, _mm512_set1_epi64(0x80)), neg;
        bits = _mm512_mask_add_epi64(bits, move & same, bits, one);
        bits = _mm512_mask_sub_epi64(bits, move & (__mmask8)~same, bits, one);
        e = _mm512_and_si512(_mm512_srli_epi64(bits, 52), e11);
        low = _mm512_cmple_epi64_mask(e, ebase1); /* zero or tiny */
        rem = _mm512_and_si512(bits, remm);
        rnz = _mm512_test_epi64_mask(rem, rem);
        mag = _mm512_add_epi64(_mm512_sll_epi64(_mm512_sub_epi64(e, ebase1), mc),
                               _mm512_srl_epi64(_mm512_and_si512(bits, m52), shc));
        R = _mm512_and_si512(_mm512_srli_epi64(rand8_high(g.h, g.sk), 32), rmask);
        g.h = _mm512_add_epi64(g.h, g.step);
        mag = _mm512_mask_add_epi64(mag, _mm512_cmpgt_epu64_mask(R, _mm512_sub_epi64(rmask, _mm512_srl_epi64(rem, tsh))),
                                    mag, one);
        if (low) { /* rare: their own rule, or the core */
            if (q->tiny) {
                const __mmask8 sub = low & _mm512_test_epi64_mask(bits, magm);
                mag = _mm512_mask_mov_epi64(mag, low, _mm512_setzero_si512()); /* exact zeros: no rounding */
                if (sub) {
                    const __m512d qd = _mm512_mul_pd(_mm512_abs_pd(_mm512_castsi512_pd(bits)), _mm512_set1_pd(q->tscale));
                    const __m512d kd = _mm512_roundscale_pd(qd, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
                    const __m512d fr = _mm512_sub_pd(qd, kd); /* exact */
                    const __m512i t = _mm512_cvttpd_epu64(_mm512_mul_pd(fr, _mm512_set1_pd(two_n)));
                    const __mmask8 inx = sub & _mm512_cmp_pd_mask(fr, _mm512_setzero_pd(), _CMP_NEQ_OQ);
                    __m512i km = _mm512_cvttpd_epu64(kd);
                    km = _mm512_mask_add_epi64(km, _mm512_cmpgt_epu64_mask(R, _mm512_sub_epi64(rmask, t)), km, one);
                    mag = _mm512_mask_mov_epi64(mag, sub, km);
                    rnz = (rnz & (__mmask8)~low) | inx;
                    uf = inx;
                    if (q->tiny == 2) slow |= inx & _mm512_cmp_pd_mask(qd, _mm512_set1_pd(top_half), _CMP_GE_OQ);
                } else {
                    rnz &= (__mmask8)~low;
                }
            } else {
                slow |= low;
            }
        }
        slow |= _mm512_cmpgt_epu64_mask(mag, maxmag);
        neg = _mm512_movepi64_mask(bits);
        if (unsig) slow |= neg;
        mag = _mm512_mask_or_epi64(mag, neg, mag, signb);
        f8 = _mm512_and_si512(fo, _mm512_set1_epi64(0x7f));
        f8 = _mm512_mask_or_epi64(f8, rnz, f8, _mm512_set1_epi64(SFP8_FLAG_INEXACT));
        f8 = _mm512_mask_or_epi64(f8, uf, f8, _mm512_set1_epi64(SFP8_FLAG_UNDERFLOW));
        f8 = _mm512_mask_mov_epi64(f8, slow, _mm512_set1_epi64(0x80));
        if (isz == 1) _mm_storel_epi64((__m128i *)(void *)(out + i), _mm512_cvtepi64_epi8(mag));
        else _mm_storeu_si128((__m128i *)(void *)(out + 2 * i), _mm512_cvtepi64_epi16(mag));
        _mm_storel_epi64((__m128i *)(void *)(fl + i), _mm512_cvtepi64_epi8(f8));
        facc = _mm512_or_si512(facc, f8);
    }
    return (unsigned)_mm512_reduce_or_epi64(facc) & 0xffu;
}

/* see fast_simd.h */
TGT unsigned sfp8s_fma_sr_avx512(const sfp8s_srf *p, int isz, const char *x, const char *y, const char *z, char *out,
                                 uint8_t *fl, ptrdiff_t n)
{
    return isz == 1 ? srf_run(p, 1, x, y, z, out, fl, n) : srf_run(p, 2, x, y, z, out, fl, n);
}

#define TGT2 __attribute__((target("avx2")))

TGT2 static inline AINL __m256i a16_load256(const sfp8s_a16 *p, const uint16_t *x, __m128i msk)
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

TGT2 static inline AINL __m256i nz256(__m256i x, __m256i m) /* all ones where x & m != 0 */
{
    return _mm256_xor_si256(_mm256_cmpeq_epi64(_mm256_and_si256(x, m), _mm256_setzero_si256()),
                            _mm256_set1_epi64x(-1));
}

TGT2 static inline AINL int far256(const sfp8s_a16 *p, __m256i bx, __m256i by) /* as far512 */
{
    const __m256i e11 = _mm256_set1_epi64x(0x7ff), lim = _mm256_set1_epi64x(51 - p->M), zero = _mm256_setzero_si256();
    __m256i ex = _mm256_and_si256(_mm256_srli_epi64(bx, 52), e11), ey = _mm256_and_si256(_mm256_srli_epi64(by, 52), e11);
    __m256i t = _mm256_add_epi64(_mm256_sub_epi64(ex, ey), lim);
    __m256i far = _mm256_or_si256(_mm256_cmpgt_epi64(t, _mm256_add_epi64(lim, lim)), _mm256_cmpgt_epi64(zero, t));
    far = _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpeq_epi64(ex, zero), _mm256_cmpeq_epi64(ey, zero)), far);
    return _mm256_movemask_pd(_mm256_castsi256_pd(far)) != 0;
}

TGT2 static inline AINL ptrdiff_t a16_256(int OP, int MODE, const sfp8s_a16 *p, const uint16_t *a,
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

/* sfp8s_binary8 with AVX2: eight lanes per gather (the table has 64 bytes of
 * padding, so the 4-byte gather of the last entry stays inside it) */
TGT2 ptrdiff_t sfp8s_binary8_avx2(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z,
                                  ptrdiff_t n, unsigned *acc)
{
    __m256i a = _mm256_setzero_si256();
    const __m256i lo16 = _mm256_set1_epi32(0xffff);
    /* low byte of each dword to the first four bytes of its 128-bit lane */
    const __m256i pack = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i xa = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(x + i)));
        __m256i yb = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(y + i)));
        __m256i idx = _mm256_or_si256(_mm256_slli_epi32(xa, 8), yb);
        __m256i v = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)tab, idx, 2), lo16);
        __m256i s = _mm256_shuffle_epi8(v, pack);
        uint32_t lo = (uint32_t)_mm256_extract_epi32(s, 0), hi = (uint32_t)_mm256_extract_epi32(s, 4);
        a = _mm256_or_si256(a, v);
        memcpy(z + i, &lo, 4);
        memcpy(z + i + 4, &hi, 4);
    }
    {
        uint32_t t[8];
        unsigned f = 0;
        _mm256_storeu_si256((__m256i *)(void *)t, a);
        for (int k = 0; k < 8; k++) f |= t[k];
        *acc |= f;
    }
    return i;
}

/* a16f_512 with AVX2: eight binary32 lanes, masks as vectors, the arithmetic
 * decoding for every format (binary16 too), MXCSR's rounding (round to nearest,
 * as a16_256 assumes) */
TGT2 static inline AINL __m256 a16_load8f(const sfp8s_a16 *p, const uint16_t *x, __m256i *slow)
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

TGT2 static inline AINL ptrdiff_t a16f_256(int OP, int MODE, const sfp8s_a16 *p, const uint16_t *a,
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

TGT2 static ptrdiff_t arith16f_avx2(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                                    const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    A16_DISPATCH(a16f_256)
}

TGT2 ptrdiff_t sfp8s_arith16_avx2(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                                  const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    if (a16_f32_ok(p, op)) return arith16f_avx2(p, op, a, b, c, o, n, flo, acc);
    A16_DISPATCH(a16_256)
}

/* ---- stochastic rounding into 8-bit formats with AVX2 (fast_simd.h): eight
 * 32-bit lanes holding the block's elements in the order L = (0, 1, 4, 5, 2, 3,
 * 6, 7), the order in which two four-lane 64-bit vectors interleave (binary64
 * inputs, two steps of the generator); the byte pack restores 0..7. ---- */


/* the low dwords of the 64-bit lanes of a (elements 0..3) and b (4..7), in the order L */
TGT2 static inline AINL __m256i lo32L(__m256i a, __m256i b)
{
    return _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(2, 0, 2, 0)));
}

/* the random bits of the next eight elements, in the order L */
TGT2 static inline AINL __m256i rng8L(rng4 *g)
{
    __m256i r0 = rng4_next(g);
    return lo32L(r0, rng4_next(g));
}

/* bytes 0..3 of each 128-bit half of s (lanes L) -> codes 0..7 in bytes 0..7, bytes 4..7 -> flags in 8..15 */
TGT2 static inline AINL __m128i unpackL(__m256i s)
{
    return _mm_unpacklo_epi16(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

/* codes and flags to out, flo (or NULL) from the packed bytes of unpackL */
TGT2 static inline AINL void store8(uint8_t *out, uint8_t *flo, __m128i cf)
{
    _mm_storel_epi64((__m128i *)out, cf);
    if (flo) _mm_storel_epi64((__m128i *)flo, _mm_unpackhi_epi64(cf, cf));
}

/* the OR of byte 1 of eight dwords */
TGT2 static inline unsigned or_byte1(__m256i x)
{
    uint32_t w[8];
    unsigned f = 0;
    _mm256_storeu_si256((__m256i *)w, x);
    for (int k = 0; k < 8; k++) f |= (w[k] >> 8) & 0xff;
    return f;
}

/* the lanes' mask (bit k: lane k, order L) in element order: L swaps 2 <-> 4 and 3 <-> 5 */
static inline unsigned maskL(unsigned m)
{
    return (m & 0xc3u) | (m & 0x0cu) << 2 | (m & 0x30u) >> 2;
}

/* ---- fma of 8-bit formats with AVX2 (sfp8s_fma8_avx512's lanes, eight at a time):
 * one table of 256 dwords built per call, the code's binary32 bits (low 16 bits
 * zero, fast_simd.h) | its info byte, one gather per operand; the products and
 * TwoSum in two four-lane binary64 halves; the sum's key (fast.c, sfp8f_key64)
 * in 32-bit lanes (order L), blended per case for lanes outside binary32's
 * normal range; one gather of the key table.  NaN/infinity operands and zero
 * sums go to the core from the operands read before the block is stored. ---- */

/* the bits of p + q rounded to odd (fast.h, sfp8f_odd_sum), four lanes; *zero = lanes whose sum is zero */
TGT2 static inline AINL __m256i odd_sum256(__m256d p, __m256d q, __m256d *zero)
{
    const __m256i one = _mm256_set1_epi64x(1), z = _mm256_setzero_si256();
    __m256d s = _mm256_add_pd(p, q), bb = _mm256_sub_pd(s, p);
    __m256d err = _mm256_add_pd(_mm256_sub_pd(p, _mm256_sub_pd(s, bb)), _mm256_sub_pd(q, bb));
    __m256i bits = _mm256_castpd_si256(s);
    __m256i move = _mm256_andnot_si256(_mm256_castpd_si256(_mm256_cmp_pd(err, _mm256_setzero_pd(), _CMP_EQ_OQ)),
                                       _mm256_cmpeq_epi64(_mm256_and_si256(bits, one), z));
    __m256i differ = _mm256_cmpgt_epi64(z, _mm256_xor_si256(_mm256_castpd_si256(err), bits)); /* signs differ */
    *zero = _mm256_cmp_pd(s, _mm256_setzero_pd(), _CMP_EQ_OQ);
    return _mm256_add_epi64(bits, _mm256_and_si256(move, _mm256_or_si256(differ, one))); /* +1 or -1 */
}

/* fast.c's sfp8f_key64 of eight binary64 (elements 0..3 in b0, 4..7 in b1), order L */
TGT2 static inline AINL __m256i key64_256(__m256i b0, __m256i b1)
{
    const __m256i one = _mm256_set1_epi32(1), zero = _mm256_setzero_si256();
    __m256i hi = _mm256_castps_si256(
        _mm256_shuffle_ps(_mm256_castsi256_ps(b0), _mm256_castsi256_ps(b1), _MM_SHUFFLE(3, 1, 3, 1)));
    __m256i lo = lo32L(b0, b1);
    __m256i e = _mm256_and_si256(_mm256_srli_epi32(hi, 20), _mm256_set1_epi32(0x7ff));
    __m256i s15 = _mm256_and_si256(_mm256_srli_epi32(hi, 16), _mm256_set1_epi32(0x8000));
    __m256i st = _mm256_andnot_si256(
        _mm256_cmpeq_epi32(_mm256_or_si256(_mm256_and_si256(hi, _mm256_set1_epi32(0x3fff)), lo), zero), one);
    __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(897), e),
                                  _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1150)));
    __m256i key = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(_mm256_sub_epi32(_mm256_srli_epi32(hi, 13), _mm256_set1_epi32(896 << 7)),
                                         _mm256_set1_epi32(0x7ffe)),
                        s15),
        st);
    if (_mm256_movemask_ps(_mm256_castsi256_ps(bad))) { /* zeros, subnormals, tiny, huge, infinities, NaNs */
        __m256i mnz = _mm256_andnot_si256(
            _mm256_cmpeq_epi32(_mm256_or_si256(_mm256_and_si256(hi, _mm256_set1_epi32(0xfffff)), lo), zero), one);
        __m256i kn = _mm256_or_si256(_mm256_or_si256(s15, _mm256_set1_epi32(0x7f80)),
                                     _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(hi, 13), _mm256_set1_epi32(0x7e)), st));
        key = _mm256_blendv_epi8(key, _mm256_or_si256(s15, _mm256_set1_epi32(0x81)),
                                 _mm256_cmpgt_epi32(_mm256_set1_epi32(897), e));
        key = _mm256_blendv_epi8(key, _mm256_or_si256(s15, _mm256_set1_epi32(0x7f7f)),
                                 _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1150)));
        key = _mm256_blendv_epi8(key, _mm256_or_si256(s15, mnz), _mm256_cmpeq_epi32(e, zero));
        key = _mm256_blendv_epi8(key, kn, _mm256_cmpeq_epi32(e, _mm256_set1_epi32(0x7ff)));
    }
    return key;
}


/* sr_key for eight lanes (order L) */
TGT2 static inline AINL __m256i sr_key256(const sfp8s_sr *t, const void *p, int isize, __m256i *tfr)
{
    const __m256i one = _mm256_set1_epi32(1), zero = _mm256_setzero_si256();
    __m256i key;
    if (isize == 4) {
        const int sh = 23 - t->M;
        __m256i b = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)p), _MM_SHUFFLE(3, 1, 2, 0));
        __m256i rem = _mm256_and_si256(b, _mm256_set1_epi32((1 << sh) - 1));
        __m256i st = _mm256_cmpeq_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x1ffff)), zero);
        key = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(0xfffe)),
                              _mm256_andnot_si256(st, one));
        *tfr = t->N >= sh ? _mm256_sll_epi32(rem, _mm_cvtsi32_si128(t->N - sh))
                          : _mm256_srl_epi32(rem, _mm_cvtsi32_si128(sh - t->N));
    } else {
        const int sh = 52 - t->M - t->N; /* 13..51 */
        __m256i b0 = _mm256_loadu_si256((const __m256i *)p), b1 = _mm256_loadu_si256((const __m256i *)p + 1);
        __m256i hi = _mm256_castps_si256(
            _mm256_shuffle_ps(_mm256_castsi256_ps(b0), _mm256_castsi256_ps(b1), _MM_SHUFFLE(3, 1, 3, 1)));
        __m256i lo = lo32L(b0, b1);
        __m256i remhi = _mm256_and_si256(hi, _mm256_set1_epi32((1 << (20 - t->M)) - 1));
        key = key64_256(b0, b1);
        *tfr = sh >= 32 ? _mm256_srl_epi32(remhi, _mm_cvtsi32_si128(sh - 32))
                        : _mm256_or_si256(_mm256_srl_epi32(lo, _mm_cvtsi32_si128(sh)),
                                          _mm256_sll_epi32(remhi, _mm_cvtsi32_si128(32 - sh)));
    }
    return key;
}

/* sr_sub for eight lanes (order L): of the lanes core (all ones), the subnormal
 * results rounded here, their fraction bits in *tfr; returns them (all ones) */
TGT2 static inline __m256i sr_sub256(const sfp8s_sr *t, const void *p, int isize, __m256i key, __m256i core,
                                     __m256i *tfr)
{
    __m256i e = _mm256_and_si256(_mm256_srli_epi32(key, 7), _mm256_set1_epi32(0xff));
    __m256i below = _mm256_cmpgt_epi32(_mm256_set1_epi32(t->emin + 127), e);
    __m256i sub = _mm256_and_si256(_mm256_and_si256(core, below),
                                   _mm256_cmpgt_epi32(e, _mm256_set1_epi32(isize == 4 ? 0 : 1)));
    __m256i n = _mm256_set1_epi32(t->N), tt;
    if (!t->tin_before) {
        __m256i ok = _mm256_cmpgt_epi32(_mm256_set1_epi32(t->emin + 126), e);
        if (t->M <= 6) { /* tiny_sure */
            __m256i km = _mm256_set1_epi32(((1 << t->M) - 1) << (7 - t->M));
            ok = _mm256_or_si256(ok, _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(key, km), km),
                                                         _mm256_cmpeq_epi32(e, _mm256_set1_epi32(t->emin + 126))));
        }
        sub = _mm256_and_si256(sub, ok);
    }
    if (!t->is_signed)
        sub = _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(key, _mm256_set1_epi32(0x8000)),
                                                     _mm256_set1_epi32(0x8000)), sub);
    if (!_mm256_movemask_ps(_mm256_castsi256_ps(sub))) return sub;
    if (isize == 4) {
        __m256i b = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)p), _MM_SHUFFLE(3, 1, 2, 0));
        __m256i sig = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffff)), _mm256_set1_epi32(0x800000));
        __m256i sv = _mm256_sub_epi32(_mm256_set1_epi32(23 - t->M + t->emin + 127), e); /* dropped bits */
        __m256i disc = _mm256_and_si256(
            sig, _mm256_sub_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), sv), _mm256_set1_epi32(1)));
        tt = _mm256_blendv_epi8(_mm256_sllv_epi32(disc, _mm256_sub_epi32(n, sv)),
                                _mm256_srlv_epi32(disc, _mm256_sub_epi32(sv, n)),
                                _mm256_cmpgt_epi32(sv, _mm256_sub_epi32(n, _mm256_set1_epi32(1))));
    } else { /* binary64: lane by lane (rare lanes; shifts beyond 63 give zero fraction bits) */
        uint64_t b[8];
        uint32_t tl[8];
        static const int L[8] = {0, 1, 4, 5, 2, 3, 6, 7};
        memcpy(b, p, sizeof b);
        for (int k = 0; k < 8; k++) {
            const uint64_t x = b[L[k]], sig = (x & 0xFFFFFFFFFFFFFULL) | 1ULL << 52;
            /* dropped bits, > 52 - M > N in the lanes of sub; the other lanes (any sv) get 0 */
            const int sv = 52 - t->M + t->emin + 1023 - (int)((x >> 52) & 0x7ff);
            tl[k] = sv < t->N || sv - t->N >= 53
                        ? 0
                        : (uint32_t)((sv >= 64 ? sig : sig & ((1ULL << sv) - 1)) >> (sv - t->N));
        }
        tt = _mm256_loadu_si256((const __m256i *)(const void *)tl);
    }
    *tfr = _mm256_blendv_epi8(*tfr, tt, sub);
    return sub;
}

TGT2 static inline AINL ptrdiff_t sr_cast_run256(const sfp8s_sr *tp, const void *in, int isize, uint8_t *out,
                                                 ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    const sfp8s_sr t = *tp;
    const __m256i rmask = _mm256_set1_epi32((int)(t.N == 32 ? 0xffffffffu : (1u << t.N) - 1));
    const __m256i sgn = _mm256_set1_epi32((int)0x80000000u), c8000 = _mm256_set1_epi32(0x8000);
    /* byte 0 (code) of each lane to bytes 0..3 of its half, byte 1 (flags) to bytes 4..7 */
    const __m256i pk = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, 1, 5, 9,
                                        13, -1, -1, -1, -1, -1, -1, -1, -1);
    rng4 g = rng4_init(t.seed_key, t.stream_key, t.index0);
    __m256i facc = _mm256_setzero_si256();
    unsigned a = 0;
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const void *p = (const char *)in + i * isize;
        __m256i tfr, key = sr_key256(&t, p, isize, &tfr);
        __m256i v = _mm256_i32gather_epi32((const int *)(const void *)t.rza, key, 4);
        __m256i R = _mm256_and_si256(rng8L(&g), rmask), pick;
        __m256i core = _mm256_cmpeq_epi32(_mm256_and_si256(v, c8000), c8000);
        unsigned cm = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(core));
        if (cm && t.sub_ok) {
            __m256i sub = sr_sub256(&t, p, isize, key, core, &tfr);
            v = _mm256_andnot_si256(_mm256_and_si256(sub, c8000), v);
            core = _mm256_andnot_si256(sub, core);
            cm = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(core));
        }
        /* t + R >= 2^N  <=>  R > (2^N - 1) - t, unsigned */
        pick = _mm256_cmpgt_epi32(_mm256_xor_si256(R, sgn), _mm256_xor_si256(_mm256_sub_epi32(rmask, tfr), sgn));
        v = _mm256_blendv_epi8(v, _mm256_srli_epi32(v, 16), pick);
        facc = _mm256_or_si256(facc, _mm256_andnot_si256(core, v));
        store8(out + i, flo ? flo + i : NULL, unpackL(_mm256_shuffle_epi8(v, pk)));
        if (cm) a |= sr_core_lanes(&t, in, isize, i, maskL(cm), out, flo);
    }
    *acc |= a | or_byte1(facc);
    return i;
}

TGT2 ptrdiff_t sfp8s_from_float_sr_avx2(const sfp8s_sr *t, const void *in, int isize, uint8_t *out, ptrdiff_t n,
                                        uint8_t *flo, unsigned *acc)
{
    return isize == 4 ? sr_cast_run256(t, in, 4, out, n, flo, acc) : sr_cast_run256(t, in, 8, out, n, flo, acc);
}

/* sr8_16 for eight lanes (order L) */
TGT2 static inline AINL __m256i sr8_8(const uint32_t *qt, __m256i pal0, __m256i pal1, __m256i rmask, __m128i rsh,
                                      __m128i tsh, __m128i wl, int wide, __m256i R, const uint8_t *x,
                                      const uint8_t *y, uint8_t *out, uint8_t *fl)
{
    const __m256i lo12 = _mm256_set1_epi32(0xfff);
    const __m256i pq = _mm256_setr_epi8(2, 6, 10, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 6, 10, 14, -1,
                                        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i pf = _mm256_setr_epi8(-1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0,
                                        4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1);
    __m128i xy = _mm_shuffle_epi8(_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)y),
                                                    _mm_loadl_epi64((const __m128i *)x)), wl);
    __m256i q = _mm256_i32gather_epi32((const int *)(const void *)qt, _mm256_cvtepu16_epi32(xy), 4), Rt, lim, f, cls, pick;
    if (wide == 0) {
        Rt = _mm256_srli_epi32(R, 20);
        lim = _mm256_andnot_si256(q, lo12);
    } else if (wide == 1) {
        Rt = _mm256_srl_epi32(_mm256_and_si256(R, rmask), rsh);
        lim = _mm256_andnot_si256(q, lo12);
    } else {
        Rt = _mm256_and_si256(R, rmask);
        lim = _mm256_sub_epi32(rmask, _mm256_srl_epi32(_mm256_and_si256(q, lo12), tsh));
    }
    cls = _mm256_srli_epi32(q, 12); /* the permutes read bits 0..2; bit 3 (q's bit 15) picks the half */
    f = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(_mm256_permutevar8x32_epi32(pal0, cls)),
                                             _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(pal1, cls)),
                                             _mm256_castsi256_ps(_mm256_slli_epi32(q, 16))));
    pick = _mm256_cmpgt_epi32(Rt, lim); /* both below 2^31 */
    q = _mm256_blendv_epi8(q, _mm256_srli_epi32(q, 8), pick);
    f = _mm256_blendv_epi8(f, _mm256_srli_epi32(f, 16), pick);
    if (wide != 2) f = _mm256_or_si256(f, _mm256_and_si256(_mm256_cmpeq_epi32(Rt, lim), _mm256_set1_epi32(0x80)));
    {
        __m128i cf = unpackL(_mm256_or_si256(_mm256_shuffle_epi8(q, pq), _mm256_shuffle_epi8(f, pf)));
        store8(out, fl, cf);
    }
    return f;
}

TGT2 static inline AINL unsigned sr8_run256(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out,
                                            uint8_t *fl, ptrdiff_t n, int wide)
{
    const int N = p->N;
    const __m256i rmask = _mm256_set1_epi32((int)(N == 32 ? 0xffffffffu : (1u << N) - 1));
    const __m128i rsh = _mm_cvtsi32_si128(N > 12 ? N - 12 : 0), tsh = _mm_cvtsi32_si128(N > 12 ? 0 : 12 - N);
    /* rz flags | ra flags << 16 of each class */
    const __m256i pal0 = _mm256_srli_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p->pal), 8);
    const __m256i pal1 = _mm256_srli_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(p->pal + 8)), 8);
    /* operand words 0..7 to the order L */
    const __m128i wl = _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15);
    const uint32_t *qt = p->q;
    rng4 g = rng4_init(p->seed_key, p->stream_key, p->index0);
    __m256i facc = _mm256_setzero_si256();
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        facc = _mm256_or_si256(facc, sr8_8(qt, pal0, pal1, rmask, rsh, tsh, wl, wide, rng8L(&g), x + i, y + i,
                                           out + i, fl + i));
    if (i < n) { /* the last lanes through copies */
        uint8_t xs[8] = {0}, ys[8] = {0}, os[8], fs[8];
        memcpy(xs, x + i, (size_t)(n - i));
        memcpy(ys, y + i, (size_t)(n - i));
        sr8_8(qt, pal0, pal1, rmask, rsh, tsh, wl, wide, rng8L(&g), xs, ys, os, fs);
        memcpy(out + i, os, (size_t)(n - i));
        memcpy(fl + i, fs, (size_t)(n - i));
        for (ptrdiff_t j = 0; j < n - i; j++) facc = _mm256_or_si256(facc, _mm256_set1_epi32(fs[j]));
    }
    return or_byte1(_mm256_slli_epi32(facc, 8));
}

TGT2 unsigned sfp8s_arith8_sr_avx2(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out, uint8_t *fl,
                                   ptrdiff_t n)
{
    return p->N == 32 ? sr8_run256(p, x, y, out, fl, n, 0)
           : p->N > 12 ? sr8_run256(p, x, y, out, fl, n, 1)
                       : sr8_run256(p, x, y, out, fl, n, 2);
}

/* ---- 16-bit stochastic add / subtract / multiply / divide / sqrt with AVX2
 *      (sfp8s_arith16_sr_avx2): sr16d_avx512's lanes four at a time (the vf
 *      table's gathers, rng4's words in the low halves of 64-bit lanes), with
 *      sr16q_half's carry rule and its square root rule (r = a - d*d by Dekker's
 *      exact product: AVX2 machines need not have fma; a - RN(d*d) is exact by
 *      Sterbenz, and the rounded (a - p) - err keeps the exact sign). ---- */
TGT2 static inline AINL __m256i sr16_4(int OP, const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, __m256i R,
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

TGT2 static inline AINL unsigned sr16_run256(int OP, const sfp8s_sr16 *pp, const uint16_t *x, const uint16_t *y,
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

/* see fast_simd.h */
TGT2 unsigned sfp8s_arith16_sr_avx2(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
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

TGT2 ptrdiff_t sfp8s_fma8_avx2(const sfp8s_fma8 *t, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *o,
                               ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    uint32_t vt[256];
    const __m256i lo16 = _mm256_set1_epi32(0xffff), hi16 = _mm256_set1_epi32((int)0xffff0000u);
    const __m256i Lidx = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    const __m256i pk = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, 1, 5, 9,
                                        13, -1, -1, -1, -1, -1, -1, -1, -1);
    __m128i facc = _mm_setzero_si128();
    ptrdiff_t i = 0;
    for (int k = 0; k < 256; k++)
        vt[k] = (uint32_t)t->hb[k] << 16 | (uint32_t)t->hb[256 + k] << 24 | t->info[k];
    for (; i + 8 <= n; i += 8) {
        __m128i x8 = _mm_loadl_epi64((const __m128i *)(a + i)), y8 = _mm_loadl_epi64((const __m128i *)(b + i));
        __m128i z8 = _mm_loadl_epi64((const __m128i *)(c + i));
        __m256i ex = _mm256_i32gather_epi32((const int *)vt, _mm256_cvtepu8_epi32(x8), 4);
        __m256i ey = _mm256_i32gather_epi32((const int *)vt, _mm256_cvtepu8_epi32(y8), 4);
        __m256i ez = _mm256_i32gather_epi32((const int *)vt, _mm256_cvtepu8_epi32(z8), 4);
        __m256i inf = _mm256_and_si256(_mm256_or_si256(_mm256_or_si256(ex, ey), ez), _mm256_set1_epi32(0xff));
        __m256 fx = _mm256_castsi256_ps(_mm256_and_si256(ex, hi16)), fy = _mm256_castsi256_ps(_mm256_and_si256(ey, hi16));
        __m256 fz = _mm256_castsi256_ps(_mm256_and_si256(ez, hi16));
        __m256d z0, z1;
        __m256i s0 = odd_sum256(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(fx)),
                                              _mm256_cvtps_pd(_mm256_castps256_ps128(fy))),
                                _mm256_cvtps_pd(_mm256_castps256_ps128(fz)), &z0);
        __m256i s1 = odd_sum256(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(fx, 1)),
                                              _mm256_cvtps_pd(_mm256_extractf128_ps(fy, 1))),
                                _mm256_cvtps_pd(_mm256_extractf128_ps(fz, 1)), &z1);
        __m256i v = _mm256_and_si256(
            _mm256_i32gather_epi32((const int *)(const void *)t->fromf, key64_256(s0, s1), 2), lo16);
        /* code | flags << 8 (the sum's | the operands' reading flags) */
        v = _mm256_or_si256(v, _mm256_slli_epi32(_mm256_and_si256(_mm256_permutevar8x32_epi32(inf, Lidx),
                                                                  _mm256_set1_epi32(0x7f)), 8));
        unsigned slow = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(inf, 24))) |
                        (unsigned)_mm256_movemask_pd(z0) | (unsigned)_mm256_movemask_pd(z1) << 4;
        __m128i cf = unpackL(_mm256_shuffle_epi8(v, pk));
        if (slow) { /* the core, from the operands read above (o may alias them) */
            uint8_t xs[8], ys[8], zs[8], cs[16];
            _mm_storel_epi64((__m128i *)xs, x8);
            _mm_storel_epi64((__m128i *)ys, y8);
            _mm_storel_epi64((__m128i *)zs, z8);
            _mm_storeu_si128((__m128i *)cs, cf);
            for (unsigned m = slow; m; m &= m - 1) {
                int k = __builtin_ctz(m);
                uint8_t f8 = 0;
                cs[k] = (uint8_t)sfp8_fma((const sfp8_format *)t->f, xs[k], ys[k], zs[k], (const sfp8_env *)t->env, &f8);
                cs[8 + k] = f8;
            }
            cf = _mm_loadu_si128((const __m128i *)cs);
        }
        store8(o + i, flo ? flo + i : NULL, cf);
        facc = _mm_or_si128(facc, cf);
    }
    {
        uint8_t bs[16];
        unsigned f = 0;
        _mm_storeu_si128((__m128i *)bs, facc);
        for (int k = 8; k < 16; k++) f |= bs[k];
        *acc |= f;
    }
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
ptrdiff_t sfp8s_fma8_avx512(const sfp8s_fma8 *t, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *o,
                            ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    (void)t; (void)a; (void)b; (void)c; (void)o; (void)n; (void)flo; (void)acc;
    return 0;
}
unsigned sfp8s_arith8_sr_avx512(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out, uint8_t *fl,
                                ptrdiff_t n)
{
    (void)p; (void)x; (void)y; (void)out; (void)fl; (void)n;
    return 0x80; /* not reached: sfp8f_simd_level() is 0 */
}
unsigned sfp8s_arith16_sr_avx512(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                                 uint8_t *fl, ptrdiff_t n)
{
    (void)p; (void)x; (void)y; (void)out; (void)fl; (void)n;
    return 0x80; /* not reached */
}
unsigned sfp8s_arith16_sr_avx2(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                               uint8_t *fl, ptrdiff_t n)
{
    (void)p; (void)x; (void)y; (void)out; (void)fl; (void)n;
    return 0x80; /* not reached */
}
ptrdiff_t sfp8s_from_float_sr_avx512(const sfp8s_sr *t, const void *in, int isize, uint8_t *out, ptrdiff_t n,
                                     uint8_t *flo, unsigned *acc)
{
    (void)t; (void)in; (void)isize; (void)out; (void)n; (void)flo; (void)acc;
    return 0;
}
ptrdiff_t sfp8s_arith16_avx512(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                               const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    (void)p; (void)op; (void)a; (void)b; (void)c; (void)o; (void)n; (void)acc;
    return 0;
}
ptrdiff_t sfp8s_binary8_avx2(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z,
                             ptrdiff_t n, unsigned *acc)
{
    (void)tab; (void)x; (void)y; (void)z; (void)n; (void)acc;
    return 0;
}
ptrdiff_t sfp8s_arith16_avx2(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                             const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    (void)p; (void)op; (void)a; (void)b; (void)c; (void)o; (void)n; (void)acc;
    return 0;
}
ptrdiff_t sfp8s_from_float_sr_avx2(const sfp8s_sr *t, const void *in, int isize, uint8_t *out, ptrdiff_t n,
                                   uint8_t *flo, unsigned *acc)
{
    (void)t; (void)in; (void)isize; (void)out; (void)n; (void)flo; (void)acc;
    return 0;
}
unsigned sfp8s_arith8_sr_avx2(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out, uint8_t *fl,
                              ptrdiff_t n)
{
    (void)p; (void)x; (void)y; (void)out; (void)fl; (void)n;
    return 0x80; /* not reached: sfp8f_simd_level() is 0 */
}
unsigned sfp8s_fma_sr_avx512(const sfp8s_srf *p, int isz, const char *x, const char *y, const char *z, char *out,
                             uint8_t *fl, ptrdiff_t n)
{
    (void)p; (void)isz; (void)x; (void)y; (void)z; (void)out; (void)fl; (void)n;
    return 0x80; /* not reached: sfp8f_simd_level() is 0 */
}
ptrdiff_t sfp8s_fma8_avx2(const sfp8s_fma8 *t, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *o,
                          ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    (void)t; (void)a; (void)b; (void)c; (void)o; (void)n; (void)flo; (void)acc;
    return 0;
}
#endif

/* ---- stochastic conversions into, and unary operations of, formats of 9..16
 * bits (fast_simd.h, sfp8s_srw; stochastic.c, sfp8f_run_wide_sr): per lane the
 * source code c (masked) and the entry e[c] gathered, hi = its high half (rz |
 * d << 16 | rz flags << 18 | ra flags << 25), ra = rz + d - 1 iff (R & Rmask) >
 * Rmask - (ts >> (32 - N)).  Lanes whose chosen flags hold 0x40 (fast.h,
 * SRW_FCORE) leave with 0x80 for the caller. */
#if defined(__x86_64__) && defined(__GNUC__)

/* sixteen lanes at element i */
TGT static inline AINL __m128i srw16(const sfp8s_srw *p, __m512i rmask, __m128i sh, __m512i R, const void *in,
                                     int isize, char *out, uint8_t *fl)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i one = _mm512_set1_epi32(1), three = _mm512_set1_epi32(3), f7 = _mm512_set1_epi32(0x7f);
    __m512i c = isize == 1 ? _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)in))
                           : _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)in));
    __m512i e0, e1, ts, hi, fw, lim;
    __mmask16 up;
    __m128i f8;
    c = _mm512_and_si512(c, _mm512_set1_epi32((int)p->smask));
    e0 = _mm512_i32gather_epi64(_mm512_castsi512_si256(c), (const void *)p->e, 8);
    e1 = _mm512_i32gather_epi64(_mm512_extracti64x4_epi64(c, 1), (const void *)p->e, 8);
    ts = _mm512_permutex2var_epi32(e0, even, e1);
    hi = _mm512_permutex2var_epi32(e0, odd, e1);
    lim = _mm512_sub_epi32(rmask, _mm512_srl_epi32(ts, sh));
    up = _mm512_cmpgt_epu32_mask(_mm512_and_si512(R, rmask), lim);
    fw = _mm512_and_si512(_mm512_mask_srli_epi32(_mm512_srli_epi32(hi, 18), up, hi, 25), f7);
    fw = _mm512_add_epi32(fw, _mm512_and_si512(fw, _mm512_set1_epi32(0x40))); /* 0x40 -> 0x80 */
    hi = _mm512_mask_add_epi32(hi, up, hi, _mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(hi, 16), three), one));
    _mm256_storeu_si256((__m256i *)(void *)out, _mm512_cvtepi32_epi16(hi));
    f8 = _mm512_cvtepi32_epi8(fw);
    _mm_storeu_si128((__m128i *)fl, f8);
    return f8;
}

TGT static inline AINL unsigned srw_run512(const sfp8s_srw *p, const void *in, int isize, void *out, uint8_t *fl,
                                           ptrdiff_t n)
{
    const __m512i rmask = _mm512_set1_epi32((int)(p->N == 32 ? 0xffffffffu : (1u << p->N) - 1));
    const __m128i sh = _mm_cvtsi32_si128(32 - p->N);
    rng16 g = rng16_init(p->seed_key, p->stream_key, p->index0);
    __m128i facc = _mm_setzero_si128();
    for (ptrdiff_t i = 0; i + 16 <= n; i += 16)
        facc = _mm_or_si128(facc, srw16(p, rmask, sh, rng16_next(&g), (const char *)in + i * isize, isize,
                                        (char *)out + 2 * i, fl + i));
    return or16(facc);
}

TGT unsigned sfp8s_wide_sr_avx512(const sfp8s_srw *p, const void *in, void *out, uint8_t *fl, ptrdiff_t n)
{
    return p->isize == 1 ? srw_run512(p, in, 1, out, fl, n) : srw_run512(p, in, 2, out, fl, n);
}

/* element-order dwords of the low halves of a's four 64-bit lanes, then b's */
TGT2 static inline AINL __m256i srw_join(__m256i a, __m256i b)
{
    return _mm256_permutevar8x32_epi32(_mm256_blend_epi32(a, _mm256_slli_epi64(b, 32), 0xaa),
                                       _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
}

/* eight lanes at element i */
TGT2 static inline AINL __m128i srw8(const sfp8s_srw *p, __m256i rmask, __m128i sh, __m256i R, const void *in,
                                     int isize, char *out, uint8_t *fl)
{
    const __m256i sign = _mm256_set1_epi32((int)0x80000000u), f7 = _mm256_set1_epi32(0x7f);
    const __m256i lo16 = _mm256_set1_epi32(0xffff), three = _mm256_set1_epi32(3), one = _mm256_set1_epi32(1);
    __m256i c = isize == 1 ? _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)in))
                           : _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)in));
    __m256i e0, e1, ts, hi, fw, lim, up;
    __m128i f8;
    c = _mm256_and_si256(c, _mm256_set1_epi32((int)p->smask));
    e0 = _mm256_i32gather_epi64((const long long *)(const void *)p->e, _mm256_castsi256_si128(c), 8);
    e1 = _mm256_i32gather_epi64((const long long *)(const void *)p->e, _mm256_extracti128_si256(c, 1), 8);
    ts = srw_join(e0, e1);
    hi = srw_join(_mm256_srli_epi64(e0, 32), _mm256_srli_epi64(e1, 32));
    lim = _mm256_sub_epi32(rmask, _mm256_srl_epi32(ts, sh));
    up = _mm256_cmpgt_epi32(_mm256_xor_si256(_mm256_and_si256(R, rmask), sign), _mm256_xor_si256(lim, sign));
    fw = _mm256_and_si256(_mm256_blendv_epi8(_mm256_srli_epi32(hi, 18), _mm256_srli_epi32(hi, 25), up), f7);
    fw = _mm256_add_epi32(fw, _mm256_and_si256(fw, _mm256_set1_epi32(0x40))); /* 0x40 -> 0x80 */
    hi = _mm256_add_epi32(hi, _mm256_and_si256(up, _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(hi, 16), three), one)));
    hi = _mm256_and_si256(hi, lo16);
    _mm_storeu_si128((__m128i *)(void *)out, _mm_packus_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)));
    f8 = _mm_packus_epi32(_mm256_castsi256_si128(fw), _mm256_extracti128_si256(fw, 1));
    f8 = _mm_packus_epi16(f8, f8);
    _mm_storel_epi64((__m128i *)fl, f8);
    return f8;
}

TGT2 static inline AINL unsigned srw_run256(const sfp8s_srw *p, const void *in, int isize, void *out, uint8_t *fl,
                                            ptrdiff_t n)
{
    const __m256i rmask = _mm256_set1_epi32((int)(p->N == 32 ? 0xffffffffu : (1u << p->N) - 1));
    rng4 g = rng4_init(p->seed_key, p->stream_key, p->index0);
    uint64_t w = 0; /* the OR of the eight-byte flag groups */
    unsigned f = 0;
    for (ptrdiff_t i = 0; i + 8 <= n; i += 8) {
        __m256i r0 = rng4_next(&g), r1 = rng4_next(&g);
        w |= (uint64_t)_mm_cvtsi128_si64(srw8(p, rmask, _mm_cvtsi32_si128(32 - p->N), srw_join(r0, r1),
                                              (const char *)in + i * isize, isize, (char *)out + 2 * i, fl + i));
    }
    for (int b = 0; b < 64; b += 8) f |= (unsigned)(w >> b) & 0xff;
    return f;
}

TGT2 unsigned sfp8s_wide_sr_avx2(const sfp8s_srw *p, const void *in, void *out, uint8_t *fl, ptrdiff_t n)
{
    return p->isize == 1 ? srw_run256(p, in, 1, out, fl, n) : srw_run256(p, in, 2, out, fl, n);
}

#else /* no x86-64 SIMD */
unsigned sfp8s_wide_sr_avx512(const sfp8s_srw *p, const void *in, void *out, uint8_t *fl, ptrdiff_t n)
{
    (void)p; (void)in; (void)out; (void)fl; (void)n;
    return 0x80; /* not reached: sfp8f_simd_level() is 0 */
}
unsigned sfp8s_wide_sr_avx2(const sfp8s_srw *p, const void *in, void *out, uint8_t *fl, ptrdiff_t n)
{
    (void)p; (void)in; (void)out; (void)fl; (void)n;
    return 0x80; /* not reached */
}
#endif
