/*
 * The matrix engine's SIMD kernels for the BLAS paths (mm_blas.c): decoding of the
 * operands into binary64, the per-line statistics of the exactness certificate and
 * Ziv's test, the classification of the outputs, and the binary32 rounding of the
 * certified values.  Each kernel computes what its portable C version computes,
 * lane by lane (the C version is what runs at SIMD level 0 and on the tails).
 */
#include <math.h>
#include <string.h>

#include "codes.h"
#include "mm_simd.h"

static void decode_line(const sfp8f_conv *dec, int sz, const char *src, ptrdiff_t st, ptrdiff_t cnt, uint64_t *dst,
                        unsigned char *bad, ptrdiff_t bs, unsigned *fl)
{
    const uint64_t *val = dec->val;
    const uint8_t *dfl = dec->fl;
    uint32_t mask = (uint32_t)(dec->n - 1);
    unsigned f = 0;
    for (ptrdiff_t k = 0; k < cnt; k++) {
        uint32_t c = sz == 1 ? *(const uint8_t *)(src + k * st) : load_code(src + k * st, 2) & mask;
        uint64_t b = val[c];
        unsigned special = ((b >> 52) & 0x7ff) == 0x7ff;
        dst[k] = special ? 0 : b;
        f |= special ? 0 : dfl[c];
        if (special) bad[k * bs] = 1;
    }
    *fl |= f;
}

/* the lowest significant bit of a finite binary64 |v| (bits ab, sign clear)
 * as a binary64 power of two, +inf for 0: |v| itself when the mantissa field
 * is 0, else |v| - (|v| with its lowest set bit cleared), exact (Sterbenz) */
static inline double low_bit(uint64_t ab)
{
    double v, w;
    uint64_t cl = ab & (ab - 1);
    if (ab == 0) return INFINITY;
    memcpy(&v, &ab, 8);
    if ((ab & (((uint64_t)1 << 52) - 1)) == 0) return v;
    memcpy(&w, &cl, 8);
    return v - w;
}

/* portable statistics: of a whole line into st[0..3] (horizontal), or of each
 * element k into s0[k], s1[k], s2[k], lb[k] (vertical) */
static void stats_h_c(const double *d, ptrdiff_t n, double *st)
{
    double s0 = 0, s1 = 0, s2 = 0, lb = INFINITY;
    for (ptrdiff_t k = 0; k < n; k++) {
        uint64_t b;
        double a = fabs(d[k]), l;
        memcpy(&b, &a, 8);
        l = low_bit(b);
        s0 += a;
        s1 = a > s1 ? a : s1;
        s2 += a * a;
        lb = l < lb ? l : lb;
    }
    st[0] = s0, st[1] = s1, st[2] = s2, st[3] = lb;
}

static void stats_v_c(const double *d, ptrdiff_t n, double *s0, double *s1, double *s2, double *lb)
{
    for (ptrdiff_t k = 0; k < n; k++) {
        uint64_t b;
        double a = fabs(d[k]), l;
        memcpy(&b, &a, 8);
        l = low_bit(b);
        s0[k] += a;
        s1[k] = a > s1[k] ? a : s1[k];
        s2[k] += a * a;
        lb[k] = l < lb[k] ? l : lb[k];
    }
}
#if MM_SIMD
#include <immintrin.h>

/* codes at src decoded while every lane of a block of 8 is zero or normal;
 * returns how many (a multiple of 8) */
MM_TGT512 static ptrdiff_t ieee_avx512(const mm_ieee *D, const uint16_t *src, ptrdiff_t n, uint64_t *dst)
{
    const __m512i em = _mm512_set1_epi64((long long)D->emask), mm = _mm512_set1_epi64((long long)D->mmask);
    const __m512i gm = _mm512_set1_epi64((long long)D->magmask), off = _mm512_set1_epi64((long long)D->off);
    const __m512i sgn = _mm512_set1_epi64((long long)((uint64_t)1 << 63));
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i c = _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(const void *)(src + i)));
        __m512i e = _mm512_and_si512(c, em), g = _mm512_and_si512(c, gm);
        __mmask8 sub = _mm512_cmpeq_epi64_mask(e, _mm512_setzero_si512()) &
                       _mm512_test_epi64_mask(c, mm);
        __mmask8 zero = _mm512_cmpeq_epi64_mask(g, _mm512_setzero_si512());
        __m512i v;
        if (sub | _mm512_cmpeq_epi64_mask(e, em)) break;
        v = _mm512_maskz_add_epi64((__mmask8)~zero, _mm512_slli_epi64(g, (unsigned)(52 - D->M)), off);
        v = _mm512_or_si512(v, _mm512_and_si512(_mm512_sll_epi64(c, _mm_cvtsi32_si128(64 - D->bits)), sgn));
        _mm512_storeu_si512((void *)(dst + i), v);
    }
    return i;
}

MM_TGT256 static ptrdiff_t ieee_avx2(const mm_ieee *D, const uint16_t *src, ptrdiff_t n, uint64_t *dst)
{
    const __m256i em = _mm256_set1_epi64x((long long)D->emask), mm = _mm256_set1_epi64x((long long)D->mmask);
    const __m256i gm = _mm256_set1_epi64x((long long)D->magmask), off = _mm256_set1_epi64x((long long)D->off);
    const __m256i sgn = _mm256_set1_epi64x((long long)((uint64_t)1 << 63)), z = _mm256_setzero_si256();
    const __m128i sh = _mm_cvtsi32_si128(52 - D->M), ss = _mm_cvtsi32_si128(64 - D->bits);
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        long long w;
        __m256i c, e, g, v, bad, zero;
        memcpy(&w, src + i, 8);
        c = _mm256_cvtepu16_epi64(_mm_cvtsi64_si128(w));
        e = _mm256_and_si256(c, em);
        g = _mm256_and_si256(c, gm);
        bad = _mm256_or_si256(_mm256_cmpeq_epi64(e, em),
                              _mm256_andnot_si256(_mm256_cmpeq_epi64(_mm256_and_si256(c, mm), z),
                                                  _mm256_cmpeq_epi64(e, z)));
        if (!_mm256_testz_si256(bad, bad)) break;
        zero = _mm256_cmpeq_epi64(g, z);
        v = _mm256_andnot_si256(zero, _mm256_add_epi64(_mm256_sll_epi64(g, sh), off));
        v = _mm256_or_si256(v, _mm256_and_si256(_mm256_sll_epi64(c, ss), sgn));
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), v);
    }
    return i;
}

/* low_bit of 8 / 4 lanes of |v| */
MM_TGT512 static inline __m512d low_bit512(__m512i ab)
{
    const __m512i m52 = _mm512_set1_epi64((long long)((((uint64_t)1 << 52) - 1)));
    __m512i cl = _mm512_and_si512(ab, _mm512_sub_epi64(ab, _mm512_set1_epi64(1)));
    __m512d v = _mm512_castsi512_pd(ab);
    __m512d l = _mm512_sub_pd(v, _mm512_castsi512_pd(cl));
    l = _mm512_mask_mov_pd(l, _mm512_testn_epi64_mask(ab, m52), v);
    return _mm512_mask_mov_pd(l, _mm512_cmpeq_epi64_mask(ab, _mm512_setzero_si512()), _mm512_set1_pd(INFINITY));
}

MM_TGT256 static inline __m256d low_bit256(__m256i ab)
{
    const __m256i m52 = _mm256_set1_epi64x((long long)((((uint64_t)1 << 52) - 1))), z = _mm256_setzero_si256();
    __m256i cl = _mm256_and_si256(ab, _mm256_sub_epi64(ab, _mm256_set1_epi64x(1)));
    __m256d v = _mm256_castsi256_pd(ab);
    __m256d l = _mm256_sub_pd(v, _mm256_castsi256_pd(cl));
    l = _mm256_blendv_pd(l, v, _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(ab, m52), z)));
    return _mm256_blendv_pd(l, _mm256_set1_pd(INFINITY), _mm256_castsi256_pd(_mm256_cmpeq_epi64(ab, z)));
}

MM_TGT512 static void stats_h_512(const double *d, ptrdiff_t n, double *st)
{
    const __m512i am = _mm512_set1_epi64(0x7fffffffffffffffLL);
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, lb = _mm512_set1_pd(INFINITY);
    double t[4];
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i ab = _mm512_and_si512(_mm512_loadu_si512((const void *)(d + i)), am);
        __m512d a = _mm512_castsi512_pd(ab);
        s0 = _mm512_add_pd(s0, a);
        s1 = _mm512_max_pd(s1, a);
        s2 = _mm512_fmadd_pd(a, a, s2);
        lb = _mm512_min_pd(lb, low_bit512(ab));
    }
    stats_h_c(d + i, n - i, t);
    st[0] = _mm512_reduce_add_pd(s0) + t[0];
    st[1] = _mm512_reduce_max_pd(s1);
    st[1] = t[1] > st[1] ? t[1] : st[1];
    st[2] = _mm512_reduce_add_pd(s2) + t[2];
    st[3] = _mm512_reduce_min_pd(lb);
    st[3] = t[3] < st[3] ? t[3] : st[3];
}

MM_TGT512 static void stats_v_512(const double *d, ptrdiff_t n, double *s0, double *s1, double *s2, double *lb)
{
    const __m512i am = _mm512_set1_epi64(0x7fffffffffffffffLL);
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i ab = _mm512_and_si512(_mm512_loadu_si512((const void *)(d + i)), am);
        __m512d a = _mm512_castsi512_pd(ab);
        _mm512_storeu_pd(s0 + i, _mm512_add_pd(_mm512_loadu_pd(s0 + i), a));
        _mm512_storeu_pd(s1 + i, _mm512_max_pd(_mm512_loadu_pd(s1 + i), a));
        _mm512_storeu_pd(s2 + i, _mm512_fmadd_pd(a, a, _mm512_loadu_pd(s2 + i)));
        _mm512_storeu_pd(lb + i, _mm512_min_pd(_mm512_loadu_pd(lb + i), low_bit512(ab)));
    }
    stats_v_c(d + i, n - i, s0 + i, s1 + i, s2 + i, lb + i);
}

MM_TGT256 static void stats_h_256(const double *d, ptrdiff_t n, double *st)
{
    const __m256d am = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, lb = _mm256_set1_pd(INFINITY);
    double t[4], u[4][4];
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d a = _mm256_and_pd(_mm256_loadu_pd(d + i), am);
        s0 = _mm256_add_pd(s0, a);
        s1 = _mm256_max_pd(s1, a);
        s2 = _mm256_add_pd(s2, _mm256_mul_pd(a, a));
        lb = _mm256_min_pd(lb, low_bit256(_mm256_castpd_si256(a)));
    }
    stats_h_c(d + i, n - i, t);
    _mm256_storeu_pd(u[0], s0);
    _mm256_storeu_pd(u[1], s1);
    _mm256_storeu_pd(u[2], s2);
    _mm256_storeu_pd(u[3], lb);
    for (int k = 0; k < 4; k++) {
        t[0] += u[0][k];
        t[1] = u[1][k] > t[1] ? u[1][k] : t[1];
        t[2] += u[2][k];
        t[3] = u[3][k] < t[3] ? u[3][k] : t[3];
    }
    memcpy(st, t, sizeof t);
}

MM_TGT256 static void stats_v_256(const double *d, ptrdiff_t n, double *s0, double *s1, double *s2, double *lb)
{
    const __m256d am = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d a = _mm256_and_pd(_mm256_loadu_pd(d + i), am);
        _mm256_storeu_pd(s0 + i, _mm256_add_pd(_mm256_loadu_pd(s0 + i), a));
        _mm256_storeu_pd(s1 + i, _mm256_max_pd(_mm256_loadu_pd(s1 + i), a));
        _mm256_storeu_pd(s2 + i, _mm256_add_pd(_mm256_loadu_pd(s2 + i), _mm256_mul_pd(a, a)));
        _mm256_storeu_pd(lb + i, _mm256_min_pd(_mm256_loadu_pd(lb + i), low_bit256(_mm256_castpd_si256(a))));
    }
    stats_v_c(d + i, n - i, s0 + i, s1 + i, s2 + i, lb + i);
}
/* the lanes of whole vectors checked for NaN / infinity */
MM_TGT512 static ptrdiff_t any_special_512(const uint64_t *d, ptrdiff_t n, uint64_t *sp)
{
    const __m512i em = _mm512_set1_epi64((long long)((uint64_t)0x7ff << 52));
    __mmask8 m = 0;
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        m |= _mm512_cmpeq_epi64_mask(_mm512_and_si512(_mm512_loadu_si512((const void *)(d + i)), em), em);
    *sp |= m;
    return i;
}
#endif

void mm_stats_h(int level, const double *d, ptrdiff_t n, double *st)
{
#if MM_SIMD
    if (level >= 2) return stats_h_512(d, n, st);
    if (level >= 1) return stats_h_256(d, n, st);
#endif
    (void)level;
    stats_h_c(d, n, st);
}

void mm_stats_v(int level, const double *d, ptrdiff_t n, double *s0, double *s1, double *s2, double *lb)
{
#if MM_SIMD
    if (level >= 2) return stats_v_512(d, n, s0, s1, s2, lb);
    if (level >= 1) return stats_v_256(d, n, s0, s1, s2, lb);
#endif
    (void)level;
    stats_v_c(d, n, s0, s1, s2, lb);
}

/* the arithmetic decoder of f if it is IEEE-like with 9..16 bits and its
 * binary64 table agrees on a few codes (the table is the core's) */
void mm_ieee_init(mm_ieee *D, const sfp8_format *f, const sfp8f_conv *dec)
{
    int E = f->exp_bits, M = f->man_bits;
    memset(D, 0, sizeof *D);
    if (f->bits <= 8 || f->bits > 16 || !f->is_signed || f->specials != SFP8_SPECIALS_IEEE ||
        f->subnormals != SFP8_SUBNORMALS_IEEE || M < 1 || E < 2 || E + M + 1 != f->bits || dec->n != 1 << f->bits)
        return;
    D->bits = f->bits;
    D->M = M;
    D->emask = (((uint64_t)1 << E) - 1) << M;
    D->mmask = ((uint64_t)1 << M) - 1;
    D->magmask = ((uint64_t)1 << (E + M)) - 1;
    D->off = (uint64_t)(1023 - f->bias) << 52;
    for (uint64_t c = (uint64_t)1 << M; c < D->emask; c += D->emask / 7 + 1) /* normal codes, both signs */
        for (int s = 0; s < 2; s++) {
            uint64_t code = c | (uint64_t)s << (f->bits - 1);
            uint64_t want = ((c << (52 - M)) + D->off) | (uint64_t)s << 63;
            if (dec->val[code] != want || dec->fl[code]) return;
        }
    if (dec->val[0] != 0 || dec->fl[0] || dec->val[(size_t)1 << (f->bits - 1)] != (uint64_t)1 << 63) return;
    D->ok = 1;
}

/* 1 if a binary64 of d is a NaN or an infinity */
static int any_special(int level, const uint64_t *d, ptrdiff_t n)
{
    const uint64_t em = (uint64_t)0x7ff << 52;
    ptrdiff_t i = 0;
    uint64_t sp = 0;
#if MM_SIMD
    if (level >= 2) i = any_special_512(d, n, &sp);
#endif
    (void)level;
    for (; i < n; i++) sp |= (d[i] & em) == em;
    return sp != 0;
}

/* one line: the vector kernels where they apply, decode_line for the rest */
void mm_decode(int level, const mm_ieee *D, const sfp8f_conv *dec, int sz, const char *src, ptrdiff_t st,
               ptrdiff_t cnt, uint64_t *dst, unsigned char *bad, ptrdiff_t bs, unsigned *fl)
{
    ptrdiff_t k = 0;
    if (level >= 2 && sz == 1 && st == 1 && dec->planes) {
        /* the table lookup, redone by decode_line if the line holds a NaN or an infinity */
        unsigned f0 = sfp8f_run_convert(dec, src, 1, 1, (char *)dst, 8, 8, cnt, NULL);
        if (!any_special(level, dst, cnt)) {
            *fl |= f0;
            return;
        }
    }
#if MM_SIMD
    if (level >= 1 && D->ok && sz == 2 && st == 2) {
        const uint16_t *s16 = (const uint16_t *)(const void *)src;
        while (k < cnt) {
            k += level >= 2 ? ieee_avx512(D, s16 + k, cnt - k, dst + k) : ieee_avx2(D, s16 + k, cnt - k, dst + k);
            if (k == cnt) break;
            /* a lane the kernel does not take (or the tail): one element by the table */
            decode_line(dec, 2, src + k * 2, 2, 1, dst + k, bad + k * bs, bs, fl);
            k++;
        }
        return;
    }
#endif
    decode_line(dec, sz, src, st, cnt, dst, bad, bs, fl);
}

static void classify_c(mm_class_row *R, ptrdiff_t j, ptrdiff_t j1, ptrdiff_t j0)
{
    const mm_stats *rb = R->rb;
    for (; j < j1; j++) {
        double s = R->s0 * rb->s1[j], t = R->s1 * rb->s0[j], q = R->s2 * rb->s2[j], e, c = R->c[j];
        unsigned char *sk = &R->state[j - j0];
        if (R->bad_col[j]) {
            *sk = MM_SPECIAL;
            continue;
        }
        if (c == 0 || !isfinite(c)) {
            *sk = MM_EXACT;
            continue;
        }
        /* S: the smallest bound, inflated for the rounding errors of the
           bounds (n terms: relative error below 2^-20 for n < 2^30) */
        s = t < s ? t : s;
        s = q < s ? q : s;
        s *= 1 + 0x1p-20;
        /* every partial sum a multiple of 2^(qa + qb) below 2^(qa + qb + 53)
           (2^(qa + qb) >= 2^-1000: the product of the lowest bits is exact) */
        if (s < R->low53 * rb->lb[j]) {
            *sk = MM_CERT;
            R->xs[R->nx++] = c;
            continue;
        }
        if (!R->ziv) {
            *sk = MM_EXACT;
            continue;
        }
        e = R->gamma * s + R->tiny;
        if (!(c - e > 0x1p-1000 || c + e < -0x1p-1000)) { /* near or across 0 */
            *sk = MM_EXACT;
            continue;
        }
        *sk = MM_ZIV;
        R->lo[R->nc] = c - e;
        R->hi[R->nc++] = c + e;
    }
}

#if MM_SIMD
/* the broadcast constants of the classification kernels (vector type V) */
#define MM_CLASS_CONSTS(V, SET1)                                                                         \
    const mm_stats *rb = R->rb;                                                                         \
    const V a0 = SET1(R->s0), a1 = SET1(R->s1), a2 = SET1(R->s2), al = SET1(R->low53), g = SET1(R->gamma); \
    const V ti = SET1(R->tiny), inf = SET1(INFINITY), infl = SET1(1 + 0x1p-20), z = SET1(0.0);           \
    const V lim = SET1(0x1p-1000), nlim = SET1(-0x1p-1000)

MM_TGT512 static ptrdiff_t classify_512(mm_class_row *R, ptrdiff_t j, ptrdiff_t j1, ptrdiff_t j0)
{
    MM_CLASS_CONSTS(__m512d, _mm512_set1_pd);
    const __mmask8 zmask = R->ziv ? 0xff : 0;
    const __m512i am = _mm512_set1_epi64(0x7fffffffffffffffLL);
    ptrdiff_t nx = R->nx, nc = R->nc;
    for (; j + 8 <= j1; j += 8) {
        __m512d c = _mm512_loadu_pd(R->c + j), e, ac = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(c), am));
        __m512d s = _mm512_mul_pd(a0, _mm512_loadu_pd(rb->s1 + j)), t = _mm512_mul_pd(a1, _mm512_loadu_pd(rb->s0 + j));
        __m512d q = _mm512_mul_pd(a2, _mm512_loadu_pd(rb->s2 + j));
        long long bc;
        __mmask8 badc, ok, cert, ziv;
        __m128i st;
        memcpy(&bc, R->bad_col + j, 8);
        badc = (__mmask8)_mm_test_epi8_mask(_mm_cvtsi64_si128(bc), _mm_set1_epi8(-1));
        ok = _mm512_cmp_pd_mask(ac, inf, _CMP_LT_OQ) & _mm512_cmp_pd_mask(c, z, _CMP_NEQ_OQ) & (__mmask8)~badc;
        s = _mm512_min_pd(t, s);
        s = _mm512_mul_pd(_mm512_min_pd(q, s), infl);
        cert = ok & _mm512_cmp_pd_mask(s, _mm512_mul_pd(al, _mm512_loadu_pd(rb->lb + j)), _CMP_LT_OQ);
        e = _mm512_add_pd(_mm512_mul_pd(g, s), ti);
        t = _mm512_sub_pd(c, e);
        q = _mm512_add_pd(c, e);
        ziv = ok & (__mmask8)~cert & (_mm512_cmp_pd_mask(t, lim, _CMP_GT_OQ) | _mm512_cmp_pd_mask(q, nlim, _CMP_LT_OQ)) &
              zmask;
        st = _mm_mask_mov_epi8(_mm_set1_epi8(MM_EXACT), badc, _mm_set1_epi8(MM_SPECIAL));
        st = _mm_mask_mov_epi8(st, cert, _mm_set1_epi8(MM_CERT));
        st = _mm_mask_mov_epi8(st, ziv, _mm_set1_epi8(MM_ZIV));
        _mm_storel_epi64((__m128i *)(void *)(R->state + (j - j0)), st);
        /* compressed in registers, stored whole (MM_PAD slack) */
        _mm512_storeu_pd(R->xs + nx, _mm512_maskz_compress_pd(cert, c));
        nx += __builtin_popcount(cert);
        _mm512_storeu_pd(R->lo + nc, _mm512_maskz_compress_pd(ziv, t));
        _mm512_storeu_pd(R->hi + nc, _mm512_maskz_compress_pd(ziv, q));
        nc += __builtin_popcount(ziv);
    }
    R->nx = nx, R->nc = nc;
    return j;
}

MM_TGT256 static ptrdiff_t classify_256(mm_class_row *R, ptrdiff_t j, ptrdiff_t j1, ptrdiff_t j0)
{
    MM_CLASS_CONSTS(__m256d, _mm256_set1_pd);
    const __m256d am = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    ptrdiff_t nx = R->nx, nc = R->nc;
    for (; j + 4 <= j1; j += 4) {
        __m256d c = _mm256_loadu_pd(R->c + j), e, ac = _mm256_and_pd(c, am);
        __m256d s = _mm256_mul_pd(a0, _mm256_loadu_pd(rb->s1 + j)), t = _mm256_mul_pd(a1, _mm256_loadu_pd(rb->s0 + j));
        __m256d q = _mm256_mul_pd(a2, _mm256_loadu_pd(rb->s2 + j));
        double cl[4], lv[4], hv[4];
        unsigned ok, cert, ziv;
        ok = (unsigned)_mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(ac, inf, _CMP_LT_OQ), _mm256_cmp_pd(c, z, _CMP_NEQ_OQ)));
        s = _mm256_min_pd(t, s);
        s = _mm256_mul_pd(_mm256_min_pd(q, s), infl);
        cert = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(s, _mm256_mul_pd(al, _mm256_loadu_pd(rb->lb + j)), _CMP_LT_OQ));
        e = _mm256_add_pd(_mm256_mul_pd(g, s), ti);
        t = _mm256_sub_pd(c, e);
        q = _mm256_add_pd(c, e);
        ziv = (unsigned)_mm256_movemask_pd(_mm256_or_pd(_mm256_cmp_pd(t, lim, _CMP_GT_OQ), _mm256_cmp_pd(q, nlim, _CMP_LT_OQ)));
        _mm256_storeu_pd(cl, c);
        _mm256_storeu_pd(lv, t);
        _mm256_storeu_pd(hv, q);
        for (int k = 0; k < 4; k++) {
            unsigned good = !R->bad_col[j + k] && (ok >> k & 1), ce = good & (cert >> k);
            unsigned zi = good & ~(cert >> k) & (ziv >> k) & (unsigned)R->ziv;
            ce &= 1, zi &= 1;
            R->state[j + k - j0] = R->bad_col[j + k] ? MM_SPECIAL : ce ? MM_CERT : zi ? MM_ZIV : MM_EXACT;
            R->xs[nx] = cl[k];
            nx += ce;
            R->lo[nc] = lv[k];
            R->hi[nc] = hv[k];
            nc += zi;
        }
    }
    R->nx = nx, R->nc = nc;
    return j;
}
#endif

void mm_classify(int level, mm_class_row *R, ptrdiff_t j0, ptrdiff_t j1)
{
    ptrdiff_t j = j0;
#if MM_SIMD
    if (level >= 2) j = classify_512(R, j, j1, j0);
    else if (level >= 1) j = classify_256(R, j, j1, j0);
#endif
    (void)level;
    classify_c(R, j, j1, j0);
}

/* ---- binary64 -> binary32 rounding of the certified sums (float32 results) ----
 * DERIVED from core.c round_pack (binary32 destination): AVX-512: lanes with 2^-126 <= |x| <= the largest binary32 round by
 * vcvtpd2ps with the mode embedded (nearest-even, toward zero, upward,
 * downward; exceptions suppressed): their results are normal binary32
 * numbers, no overflow and no tininess in any mode, so the only flag is
 * inexact (the result back in binary64 differs from x), and FTZ / DAZ never
 * apply (normal operands and results).  A vector with any other lane, the
 * other modes, other levels and the tail take sfp8f_round_doubles (the
 * rounder of round_f64.c).  The inputs are exact sums or sums times a scale rounded
 * to odd at 53 bits (mm_blas.c), so one rounding to 24 bits decides as the core
 * would on the exact value.  Proven equal by tests/fast/test_matmul_exact.py and
 * tests/numpy_glue/test_mm_engine.py (binary32 outputs in every mode, at every
 * SIMD level, values at 2^-126 and the largest binary32). */
#if MM_SIMD
#define MM_F32_LOOP(RC)                                                                          \
    for (; i + 8 <= n; i += 8) {                                                                 \
        __m512d x = _mm512_loadu_pd(d + i);                                                      \
        __m512d ax = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(x), am));         \
        __m256 y;                                                                                \
        if ((__mmask8)(_mm512_cmp_pd_mask(ax, lo, _CMP_GE_OQ) & _mm512_cmp_pd_mask(ax, hi, _CMP_LE_OQ)) != 0xff) { \
            fl |= sfp8f_round_doubles(r, d + i, 8, out + i);                                    \
            continue;                                                                            \
        }                                                                                        \
        y = _mm512_cvt_roundpd_ps(x, (RC) | _MM_FROUND_NO_EXC);                                  \
        inexact |= _mm512_cmp_pd_mask(_mm512_cvtps_pd(y), x, _CMP_NEQ_UQ);                       \
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm256_castps_si256(y));               \
    }

MM_TGT512 static ptrdiff_t round_f32_512(const sfp8f_rnd *r, const double *d, ptrdiff_t n, uint32_t *out,
                                        unsigned *flp)
{
    const __m512i am = _mm512_set1_epi64(0x7fffffffffffffffLL);
    const __m512d lo = _mm512_set1_pd(0x1p-126), hi = _mm512_set1_pd(0x1.fffffep127);
    unsigned fl = 0, inexact = 0;
    ptrdiff_t i = 0;
    switch (r->rounding) {
    case SFP8_ROUND_NEAREST_EVEN: MM_F32_LOOP(_MM_FROUND_TO_NEAREST_INT) break;
    case SFP8_ROUND_TOWARD_ZERO: MM_F32_LOOP(_MM_FROUND_TO_ZERO) break;
    case SFP8_ROUND_UPWARD: MM_F32_LOOP(_MM_FROUND_TO_POS_INF) break;
    case SFP8_ROUND_DOWNWARD: MM_F32_LOOP(_MM_FROUND_TO_NEG_INF) break;
    default: break;
    }
    *flp |= fl | (inexact ? SFP8_FLAG_INEXACT : 0);
    return i;
}
#endif

/* out[k] = d[k] (finite, normal) rounded to binary32 by r; returns the OR of the flags */
unsigned mm_round_f32(int level, const sfp8f_rnd *r, const double *d, ptrdiff_t n, uint32_t *out)
{
    unsigned fl = 0;
    ptrdiff_t i = 0;
#if MM_SIMD
    if (level >= 2) i = round_f32_512(r, d, n, out, &fl);
#endif
    (void)level;
    return fl | sfp8f_round_doubles(r, d + i, n - i, out + i);
}


/* ---- a sum times a scale rounded to odd at 53 bits ----
 * DERIVED from core.c round_pack: y = RN(c s) and its error e = fma(c, s, -y) are
 * exact (|y| >= 2^-960 keeps e above binary64's subnormals), so c s lies strictly
 * between y and its neighbour on e's side when e != 0; rounding to odd keeps y if its
 * last bit is 1, else takes that neighbour (the bits of y plus or minus one: a sign and
 * magnitude step).  The odd result has the sign, the leading 52 bits and the sticky
 * information of c s, so one rounding of it into a format of at most 51 significand
 * bits -- its result, tininess, underflow, overflow and inexact -- is that of c s.
 * The lanes compute what odd_mul computes.  Proven by
 * tests/numpy_glue/test_mm_engine.py::test_scales_of_any_value (products a binary64 ulp
 * away from binary32 / float16 midpoints, every mode, every SIMD level) and by the
 * differential search (mm_diffsearch.py). */
static inline double odd_mul(double c, double s)
{
    double y = c * s, e = fma(c, s, -y);
    uint64_t b;
    memcpy(&b, &y, 8);
    if (e != 0 && !(b & 1)) b = (e > 0) == (y > 0) ? b + 1 : b - 1;
    memcpy(&y, &b, 8);
    return y;
}

#if MM_SIMD
MM_TGT512 static ptrdiff_t odd_scale_512(double *v, ptrdiff_t n, double s)
{
    const __m512d sv = _mm512_set1_pd(s), z = _mm512_setzero_pd();
    const __m512i one = _mm512_set1_epi64(1);
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d c = _mm512_loadu_pd(v + i), y = _mm512_mul_pd(c, sv), e = _mm512_fmsub_pd(c, sv, y);
        __m512i b = _mm512_castpd_si512(y);
        __mmask8 mv = _mm512_cmp_pd_mask(e, z, _CMP_NEQ_OQ) & _mm512_testn_epi64_mask(b, one);
        __mmask8 up = (__mmask8)~(_mm512_cmp_pd_mask(e, z, _CMP_GT_OQ) ^ _mm512_cmp_pd_mask(y, z, _CMP_GT_OQ));
        b = _mm512_mask_add_epi64(b, mv & up, b, one);
        b = _mm512_mask_sub_epi64(b, mv & (__mmask8)~up, b, one);
        _mm512_storeu_pd(v + i, _mm512_castsi512_pd(b));
    }
    return i;
}

MM_TGT256F static ptrdiff_t odd_scale_256(double *v, ptrdiff_t n, double s)
{
    const __m256d sv = _mm256_set1_pd(s), z = _mm256_setzero_pd();
    const __m256i one = _mm256_set1_epi64x(1), zi = _mm256_setzero_si256();
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d c = _mm256_loadu_pd(v + i), y = _mm256_mul_pd(c, sv), e = _mm256_fmsub_pd(c, sv, y);
        __m256i b = _mm256_castpd_si256(y);
        __m256i mv = _mm256_and_si256(_mm256_castpd_si256(_mm256_cmp_pd(e, z, _CMP_NEQ_OQ)),
                                      _mm256_cmpeq_epi64(_mm256_and_si256(b, one), zi));
        /* -1 where e and y have opposite signs (magnitude down), else +1 */
        __m256i d = _mm256_or_si256(_mm256_castpd_si256(_mm256_xor_pd(_mm256_cmp_pd(e, z, _CMP_GT_OQ),
                                                                      _mm256_cmp_pd(y, z, _CMP_GT_OQ))), one);
        _mm256_storeu_pd(v + i, _mm256_castsi256_pd(_mm256_add_epi64(b, _mm256_and_si256(mv, d))));
    }
    return i;
}
#endif

void mm_odd_scale(int level, double *v, ptrdiff_t n, double s)
{
    ptrdiff_t i = 0;
#if MM_SIMD
    if (level >= 2) i = odd_scale_512(v, n, s);
    else if (level >= 1) i = odd_scale_256(v, n, s); /* level 1 has FMA (switches.c) */
#endif
    (void)level;
    for (; i < n; i++) v[i] = odd_mul(v[i], s);
}
