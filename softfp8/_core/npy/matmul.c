/*
 * NumPy glue: matmul, vecdot, matvec and vecmat loops (exact dot products,
 * one rounding per output element; a binary64 BLAS path when every partial
 * sum is exact) and the matmul_wide gufunc with float32 / float64 results.
 */
#include <math.h>

#include "glue.h"
#include "accum.h"
#include "fast.h"
#include "cast16.h"

typedef struct {
    LoopData ld;
    sfp8_format f;
    int out_kind; /* 0: the input format, 1: float32, 2: float64 */
    int blas;     /* the loop may take the binary64 BLAS path (holds the GIL) */
    PyArrayMethod_StridedLoop *loop; /* matmul, vecdot, matvec or vecmat */
} MatmulData;

static PyObject *np_matmul_fn = NULL; /* numpy.matmul, for the binary64 path */

/* 1 if code c of the format is a NaN or an infinity, read from its binary64
 * decoding table (built without saturation: see dec_table) */
static inline int code_special(const sfp8f_conv *dec, uint32_t c)
{
    return ((dec->val[c & (uint32_t)(dec->n - 1)] >> 52) & 0x7ff) == 0x7ff;
}

/* One output of matmul by the exact superaccumulator: row i of A times column j
 * of B.  With `only` (a decoding table), only the products with a NaN or an
 * infinity operand are added: the output of a row or column holding one, whose
 * result (NaN or infinity) and flags those products alone decide (the finite
 * products only add to the finite sum, ignored once a NaN or an infinity is
 * seen, and the denormal flags of their operands, which the caller ORs in). */
static void matmul_exact_element(const MatmulData *md, const sfp8_env *env, const char *A, const char *B, char *o,
                                 npy_intp i, npy_intp j, npy_intp n, npy_intp am, npy_intp an, npy_intp bn,
                                 npy_intp bp, const sfp8f_conv *only, uint8_t *fl)
{
    const sfp8_format *f = &md->f;
    int sz = f->bits <= 8 ? 1 : 2;
    SuperAcc sa;
    acc_init_k(&sa, f, 2);
    for (npy_intp l = 0; l < n; l++) {
        uint32_t x = load_code(A + i * am + l * an, sz), y = load_code(B + l * bn + j * bp, sz);
        if (!only || code_special(only, x) || code_special(only, y)) acc_add_product(&sa, f, x, y, fl);
    }
    if (md->out_kind == 0)
        store_code(o, sz, acc_round(&sa, f, env, fl));
    else
        store_raw(o, md->out_kind == 1 ? 4 : 8,
                  acc_round_float(&sa, f, md->out_kind == 1 ? &sfp8_binary32 : &sfp8_binary64, env, fl));
}

/* The format's values in binary64 (exact for the formats of the BLAS paths).
 * Built round-to-nearest and WITHOUT saturation whatever the call's
 * environment: a saturating environment would decode infinities as the
 * largest binary64 (the bug that made the first version of matmul_blas_ziv
 * leave outputs unwritten under a saturating format). */
static const sfp8f_conv *dec_table(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    sfp8_env e = *env;
    e.rounding = SFP8_ROUND_NEAREST_EVEN;
    e.saturate = 0;
    return sfp8f_convert(f, &sfp8_binary64, &e, n);
}

/* ---- decoding of the operands (binary64 copies of A and B for the dgemm)
 *      and their statistics (matmul_blas_ziv's certificate) ----
 *
 * A line (a row of A or of B) is decoded by a vector kernel when it is
 * contiguous: 8-bit codes by the fast paths' table lookup (sfp8f_run_convert,
 * AVX-512), codes of 9..16-bit IEEE-like formats (float16, bfloat16, ...) by
 * arithmetic (ieee_*); the lanes those kernels do not take (NaN, infinity,
 * subnormals), strided lines and SOFTFP8_SIMD=0 take the format's binary64
 * table element by element (decode_line).  The statistics are then computed
 * from the binary64 values (line_stats_*): sum |v|, max |v|, sum v^2 and the
 * lowest significant bit 2^q of the non-zero values (+inf if none). */

/* the arithmetic decoding of a 9..16-bit sign / exponent / mantissa format
 * with IEEE specials and subnormals: normal code c (sign s, exponent field e,
 * mantissa m) -> binary64 bits s << 63 | (e << 52 | m << (52 - M)) + (1023 - bias) << 52 */
typedef struct {
    int ok;
    int bits, M;
    uint64_t emask, mmask, magmask, off;
} IeeeDec;

/* cnt codes at src (stride st) decoded into dst (NaN and infinity as 0);
 * bad[k * bs] marks a NaN or an infinity at k; *fl collects the flags of the
 * finite operands.  Table pointers and flags in locals: the byte stores into
 * bad may alias anything. */
static void decode_line(const sfp8f_conv *dec, int sz, const char *src, npy_intp st, npy_intp cnt, uint64_t *dst,
                        unsigned char *bad, npy_intp bs, unsigned *fl)
{
    const uint64_t *val = dec->val;
    const uint8_t *dfl = dec->fl;
    uint32_t mask = (uint32_t)(dec->n - 1);
    unsigned f = 0;
    for (npy_intp k = 0; k < cnt; k++) {
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
static void stats_h_c(const double *d, npy_intp n, double *st)
{
    double s0 = 0, s1 = 0, s2 = 0, lb = INFINITY;
    for (npy_intp k = 0; k < n; k++) {
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

static void stats_v_c(const double *d, npy_intp n, double *s0, double *s1, double *s2, double *lb)
{
    for (npy_intp k = 0; k < n; k++) {
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

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MM_TGT512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define MM_TGT256 __attribute__((target("avx2")))

/* codes at src decoded while every lane of a block of 8 is zero or normal;
 * returns how many (a multiple of 8) */
MM_TGT512 static npy_intp ieee_avx512(const IeeeDec *D, const uint16_t *src, npy_intp n, uint64_t *dst)
{
    const __m512i em = _mm512_set1_epi64((long long)D->emask), mm = _mm512_set1_epi64((long long)D->mmask);
    const __m512i gm = _mm512_set1_epi64((long long)D->magmask), off = _mm512_set1_epi64((long long)D->off);
    const __m512i sgn = _mm512_set1_epi64((long long)((uint64_t)1 << 63));
    npy_intp i = 0;
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

MM_TGT256 static npy_intp ieee_avx2(const IeeeDec *D, const uint16_t *src, npy_intp n, uint64_t *dst)
{
    const __m256i em = _mm256_set1_epi64x((long long)D->emask), mm = _mm256_set1_epi64x((long long)D->mmask);
    const __m256i gm = _mm256_set1_epi64x((long long)D->magmask), off = _mm256_set1_epi64x((long long)D->off);
    const __m256i sgn = _mm256_set1_epi64x((long long)((uint64_t)1 << 63)), z = _mm256_setzero_si256();
    const __m128i sh = _mm_cvtsi32_si128(52 - D->M), ss = _mm_cvtsi32_si128(64 - D->bits);
    npy_intp i = 0;
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

MM_TGT512 static void stats_h_512(const double *d, npy_intp n, double *st)
{
    const __m512i am = _mm512_set1_epi64(0x7fffffffffffffffLL);
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, lb = _mm512_set1_pd(INFINITY);
    double t[4];
    npy_intp i = 0;
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

MM_TGT512 static void stats_v_512(const double *d, npy_intp n, double *s0, double *s1, double *s2, double *lb)
{
    const __m512i am = _mm512_set1_epi64(0x7fffffffffffffffLL);
    npy_intp i = 0;
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

MM_TGT256 static void stats_h_256(const double *d, npy_intp n, double *st)
{
    const __m256d am = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, lb = _mm256_set1_pd(INFINITY);
    double t[4], u[4][4];
    npy_intp i = 0;
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

MM_TGT256 static void stats_v_256(const double *d, npy_intp n, double *s0, double *s1, double *s2, double *lb)
{
    const __m256d am = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    npy_intp i = 0;
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
MM_TGT512 static npy_intp any_special_512(const uint64_t *d, npy_intp n, uint64_t *sp)
{
    const __m512i em = _mm512_set1_epi64((long long)((uint64_t)0x7ff << 52));
    __mmask8 m = 0;
    npy_intp i = 0;
    for (; i + 8 <= n; i += 8)
        m |= _mm512_cmpeq_epi64_mask(_mm512_and_si512(_mm512_loadu_si512((const void *)(d + i)), em), em);
    *sp |= m;
    return i;
}
#define MM_SIMD 1
#else
#define MM_SIMD 0
#endif

static void stats_h(int level, const double *d, npy_intp n, double *st)
{
#if MM_SIMD
    if (level >= 2) return stats_h_512(d, n, st);
    if (level >= 1) return stats_h_256(d, n, st);
#endif
    (void)level;
    stats_h_c(d, n, st);
}

static void stats_v(int level, const double *d, npy_intp n, double *s0, double *s1, double *s2, double *lb)
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
static void ieee_dec_init(IeeeDec *D, const sfp8_format *f, const sfp8f_conv *dec)
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
static int any_special(int level, const uint64_t *d, npy_intp n)
{
    const uint64_t em = (uint64_t)0x7ff << 52;
    npy_intp i = 0;
    uint64_t sp = 0;
#if MM_SIMD
    if (level >= 2) i = any_special_512(d, n, &sp);
#endif
    (void)level;
    for (; i < n; i++) sp |= (d[i] & em) == em;
    return sp != 0;
}

/* one line: the vector kernels where they apply, decode_line for the rest */
static void decode_any(int level, const IeeeDec *D, const sfp8f_conv *dec, int sz, const char *src, npy_intp st,
                       npy_intp cnt, uint64_t *dst, unsigned char *bad, npy_intp bs, unsigned *fl)
{
    npy_intp k = 0;
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

/* Per row of A / column of B statistics for matmul_blas_ziv, each an array of
 * four: s0 = sum |v|, s1 = max |v|, s2 = sqrt(sum v^2), lb = the lowest
 * significant bit of the non-zero values (a power of two, +inf if none). */
typedef struct {
    double *s0, *s1, *s2, *lb;
} LineStats;

/* A (m x n) and B (n x p) into row-major binary64 matrices pa and pb, both
 * read in row order (B's columns gathered through per-column arrays); NaN and
 * infinity operands are stored as 0 and mark their row / column in bad_row /
 * bad_col; with ra / rb, the statistics per row of A and per column of B.
 * Returns the OR of the flags of the finite operands. */
static unsigned decode_operands(const sfp8f_conv *dec, const IeeeDec *D, int sz, const char *A, const char *B,
                                npy_intp m, npy_intp n, npy_intp p, npy_intp am, npy_intp an, npy_intp bn,
                                npy_intp bp, double *pa, double *pb, unsigned char *bad_row, unsigned char *bad_col,
                                const LineStats *ra, const LineStats *rb)
{
    unsigned fl = 0;
    int level = sfp8f_simd_level();
    if (rb)
        for (npy_intp j = 0; j < p; j++) rb->s0[j] = rb->s1[j] = rb->s2[j] = 0, rb->lb[j] = INFINITY;
    for (npy_intp i = 0; i < m; i++) { /* row i of A: one bad flag, one set of statistics */
        decode_any(level, D, dec, sz, A + i * am, an, n, (uint64_t *)(pa + i * n), &bad_row[i], 0, &fl);
        if (ra) {
            double st[4];
            stats_h(level, pa + i * n, n, st);
            ra->s0[i] = st[0], ra->s1[i] = st[1], ra->s2[i] = sqrt(st[2]), ra->lb[i] = st[3];
        }
    }
    for (npy_intp l = 0; l < n; l++) { /* row l of B: one per column */
        decode_any(level, D, dec, sz, B + l * bn, bp, p, (uint64_t *)(pb + l * p), bad_col, 1, &fl);
        if (rb) stats_v(level, pb + l * p, p, rb->s0, rb->s1, rb->s2, rb->lb);
    }
    if (rb)
        for (npy_intp j = 0; j < p; j++) rb->s2[j] = sqrt(rb->s2[j]);
    return fl;
}

/* ---- matmul_blas_ziv's classification of the outputs of one row segment ----
 * Each output of row i, columns j0..j1-1 (c its binary64 product) gets a
 * state: SPECIAL (its column of B holds a NaN or an infinity), EXACT (c zero
 * or not finite, or its Ziv interval near or across 0), CERT (c certified
 * exact: appended to xs) or ZIV (c - e and c + e appended to lo / hi); see
 * matmul_blas_ziv.  The vector kernels compute the same as classify_c, lane
 * by lane, and store whole vectors into xs / lo / hi (MM_PAD slack). */
enum { MM_CERT, MM_ZIV, MM_SPECIAL, MM_EXACT };
#define MM_PAD 8

typedef struct {
    double s0, s1, s2, low53;       /* the row's statistics, low53 = its lowest bit times 2^53 */
    const LineStats *rb;            /* the columns' */
    const unsigned char *bad_col;
    double gamma, tiny;
    const double *c;                /* the row of the product */
    unsigned char *state;           /* state[j - j0] */
    double *xs, *lo, *hi;
    npy_intp nx, nc;
} ClassRow;

static void classify_c(ClassRow *R, npy_intp j, npy_intp j1, npy_intp j0)
{
    const LineStats *rb = R->rb;
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
    const LineStats *rb = R->rb;                                                                         \
    const V a0 = SET1(R->s0), a1 = SET1(R->s1), a2 = SET1(R->s2), al = SET1(R->low53), g = SET1(R->gamma); \
    const V ti = SET1(R->tiny), inf = SET1(INFINITY), infl = SET1(1 + 0x1p-20), z = SET1(0.0);           \
    const V lim = SET1(0x1p-1000), nlim = SET1(-0x1p-1000)

MM_TGT512 static npy_intp classify_512(ClassRow *R, npy_intp j, npy_intp j1, npy_intp j0)
{
    MM_CLASS_CONSTS(__m512d, _mm512_set1_pd);
    const __m512i am = _mm512_set1_epi64(0x7fffffffffffffffLL);
    npy_intp nx = R->nx, nc = R->nc;
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
        ziv = ok & (__mmask8)~cert & (_mm512_cmp_pd_mask(t, lim, _CMP_GT_OQ) | _mm512_cmp_pd_mask(q, nlim, _CMP_LT_OQ));
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

MM_TGT256 static npy_intp classify_256(ClassRow *R, npy_intp j, npy_intp j1, npy_intp j0)
{
    MM_CLASS_CONSTS(__m256d, _mm256_set1_pd);
    const __m256d am = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    npy_intp nx = R->nx, nc = R->nc;
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
            unsigned good = !R->bad_col[j + k] && (ok >> k & 1), ce = good & (cert >> k), zi = good & ~(cert >> k) & (ziv >> k);
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

static void classify(int level, ClassRow *R, npy_intp j0, npy_intp j1)
{
    npy_intp j = j0;
#if MM_SIMD
    if (level >= 2) j = classify_512(R, j, j1, j0);
    else if (level >= 1) j = classify_256(R, j, j1, j0);
#endif
    (void)level;
    classify_c(R, j, j1, j0);
}

/* ---- binary64 -> binary32 rounding of the certified sums (float32 results) ----
 * AVX-512: lanes with 2^-126 <= |x| <= the largest binary32 round by
 * vcvtpd2ps with the mode embedded (nearest-even, toward zero, upward,
 * downward; exceptions suppressed): their results are normal binary32
 * numbers, no overflow and no tininess in any mode, so the only flag is
 * inexact (the result back in binary64 differs from x), and FTZ / DAZ never
 * apply (normal operands and results).  A vector with any other lane, the
 * other modes, other levels and the tail take sfp8f_round_doubles (the
 * rounder of round_f64.c), as before. */
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

MM_TGT512 static npy_intp round_f32_512(const sfp8f_rnd *r, const double *d, npy_intp n, uint32_t *out,
                                        unsigned *flp)
{
    const __m512i am = _mm512_set1_epi64(0x7fffffffffffffffLL);
    const __m512d lo = _mm512_set1_pd(0x1p-126), hi = _mm512_set1_pd(0x1.fffffep127);
    unsigned fl = 0, inexact = 0;
    npy_intp i = 0;
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
static unsigned round_f32(int level, const sfp8f_rnd *r, const double *d, npy_intp n, uint32_t *out)
{
    unsigned fl = 0;
    npy_intp i = 0;
#if MM_SIMD
    if (level >= 2) i = round_f32_512(r, d, n, out, &fl);
#endif
    (void)level;
    return fl | sfp8f_round_doubles(r, d + i, n - i, out + i);
}

/* numpy.matmul of two binary64 matrices (BLAS dgemm): a new reference or NULL */
static PyArrayObject *blas_product(PyArrayObject *Ad, PyArrayObject *Bd)
{
    PyArrayObject *Dd = (PyArrayObject *)PyObject_CallFunctionObjArgs(np_matmul_fn, (PyObject *)Ad, (PyObject *)Bd, NULL);
    if (Dd && (!PyArray_Check(Dd) || PyArray_TYPE(Dd) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(Dd))) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 matmul: unexpected binary64 product");
        Py_DECREF(Dd);
        return NULL;
    }
    return Dd;
}

/* Outputs are finished in blocks of MM_BLK (flat index i * p + j): the
 * certificate / Ziv states, the values to round and their codes live in
 * buffers of one block (cache-resident, no page faults of m * p sized
 * buffers), and each block's values are rounded by one vector call. */
#define MM_BLK 2048

/* Exact products and sums in binary64 through BLAS: every code is v * 2^qmin
 * with |v| < 2^vbits, so n * 2^(2 vbits) <= 2^53 keeps every partial sum an
 * exact binary64 in any order.  NaN and infinity operands enter the product as
 * 0 and the outputs of their rows / columns take matmul_exact_element with
 * only the special products.  Returns 1 when done, 0 to take the exact
 * accumulator instead, -1 on a Python error. */
static int matmul_blas_tables(MatmulData *md, const sfp8_env *env, char *A, char *B, char *O, npy_intp m, npy_intp n,
                       npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om, npy_intp op,
                       unsigned *accf)
{
    const sfp8_format *f = &md->f;
    const sfp8f_sum *st;
    const sfp8f_conv *dec;
    const uint16_t *fromf = NULL;
    IeeeDec D;
    sfp8f_rnd r32;
    PyArrayObject *Ad = NULL, *Bd = NULL, *Dd = NULL;
    const double *pd;
    double *good = NULL;
    uint32_t *code = NULL;
    unsigned char *bad_row = NULL, *bad_col = NULL;
    unsigned fl = 0;
    npy_intp dims[2], mp = m * p;
    npy_intp bl = mp < MM_BLK ? mp : MM_BLK; /* the block buffers */
    int lg = 0, ret = -1, direct, level = sfp8f_simd_level();
    if (!md->blas || f->bits > 8 || m == 0 || n == 0 || p == 0) return 0;
    st = sfp8f_sum_table(f, m * n + n * p);
    if (!st) return 0;
    while (((npy_intp)1 << lg) < n) lg++;
    if (lg + 2 * st->vbits > 53) return 0;
    dec = dec_table(f, env, m * n + n * p);
    if (!dec) return 0;
    if (md->out_kind == 0 && !(fromf = sfp8f_from_float(f, env, mp))) return 0;
    if (md->out_kind == 1 && !sfp8f_rounder(&sfp8_binary32, env, &r32)) return 0;
    dims[0] = m; dims[1] = n;
    Ad = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    dims[0] = n; dims[1] = p;
    Bd = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    bad_row = PyMem_Calloc((size_t)m, 1);
    bad_col = PyMem_Calloc((size_t)p, 1);
    good = PyMem_Malloc((size_t)bl * sizeof(double));
    code = PyMem_Malloc((size_t)bl * sizeof(uint32_t));
    if (!Ad || !Bd || !bad_row || !bad_col || !good || !code) goto nomem;
    Py_BEGIN_ALLOW_THREADS /* C only until the BLAS call */
    ieee_dec_init(&D, f, dec);
    fl |= decode_operands(dec, &D, 1, A, B, m, n, p, am, an, bn, bp, (double *)PyArray_DATA(Ad),
                          (double *)PyArray_DATA(Bd), bad_row, bad_col, NULL, NULL);
    Py_END_ALLOW_THREADS
    if (!(Dd = blas_product(Ad, Bd))) goto fail;
    pd = (const double *)PyArray_DATA(Dd);
    Py_BEGIN_ALLOW_THREADS /* the finishing passes: C only */
    direct = p >= 64 && (md->out_kind != 1 || (op == 4 && om % 4 == 0 && ((uintptr_t)O & 3) == 0));
    for (npy_intp i = 0; direct && i < m; i++) direct = !bad_row[i];
    for (npy_intp j = 0; direct && j < p; j++) direct = !bad_col[j];
    for (npy_intp i = 0; direct && i < m; i++) {
        /* no NaN / infinity: each row rounded straight into the output, then its
           exact zeros (the sign) by the accumulator */
        const double *row = pd + i * p;
        char *orow = O + i * om;
        if (md->out_kind == 1) fl |= round_f32(level, &r32, row, p, (uint32_t *)(void *)orow);
        else if (md->out_kind == 0) fl |= sfp8f_run_from_float(fromf, (const char *)row, 8, 8, orow, op, p, NULL);
        else for (npy_intp j = 0; j < p; j++) memcpy(orow + j * op, &row[j], 8);
        for (npy_intp j = 0; j < p; j++)
            if (row[j] == 0) {
                uint8_t f0 = 0;
                matmul_exact_element(md, env, A, B, orow + j * op, i, j, n, am, an, bn, bp, NULL, &f0);
                fl |= f0;
            }
    }
    for (npy_intp k0 = 0; !direct && k0 < mp; k0 += MM_BLK) {
        npy_intp k1 = mp - k0 < MM_BLK ? mp : k0 + MM_BLK, i = k0 / p, j = k0 % p, ng = 0;
        if (md->out_kind != 2) { /* the regular outputs of the block, rounded in one call */
            for (npy_intp k = k0; k < k1; k++) {
                if (!bad_row[i] && !bad_col[j] && pd[k] != 0) good[ng++] = pd[k];
                if (++j == p) j = 0, i++;
            }
            if (md->out_kind == 1) {
                fl |= round_f32(level, &r32, good, ng, code);
            } else {
                fl |= sfp8f_run_from_float(fromf, (const char *)good, 8, 8, (char *)code, 1, ng, NULL);
            }
            i = k0 / p, j = k0 % p, ng = 0;
        }
        for (npy_intp k = k0; k < k1; k++) {
            double d = pd[k];
            char *o = O + i * om + j * op;
            if (bad_row[i] || bad_col[j] || d == 0) {
                /* NaN / infinity, or the sign of an exact zero: the exact accumulator */
                uint8_t f0 = 0;
                matmul_exact_element(md, env, A, B, o, i, j, n, am, an, bn, bp,
                                     bad_row[i] || bad_col[j] ? dec : NULL, &f0);
                fl |= f0;
            } else if (md->out_kind == 0) {
                *(uint8_t *)o = ((const uint8_t *)code)[ng++];
            } else if (md->out_kind == 1) {
                memcpy(o, &code[ng++], 4);
            } else {
                memcpy(o, &d, 8);
            }
            if (++j == p) j = 0, i++;
        }
    }
    Py_END_ALLOW_THREADS
    *accf |= fl;
    ret = 1;
    goto done;
nomem:
    if (!PyErr_Occurred()) PyErr_NoMemory();
done:
fail:
    PyMem_Free(code);
    PyMem_Free(good);
    PyMem_Free(bad_row);
    PyMem_Free(bad_col);
    Py_XDECREF(Ad);
    Py_XDECREF(Bd);
    Py_XDECREF(Dd);
    return ret;
}

/* Rounding of binary64 values into the result's format, for matmul_blas_ziv:
 * through the fast paths' vector casts (8-bit results: the binary64 key table
 * or cast64.c's arithmetic; 16-bit results: cast16.c), their rounder
 * (binary32) or the core (codes only: the flags of accepted results are
 * derived, see below). */
typedef struct {
    const sfp8_format *dst;
    const uint16_t *fromf;  /* 8-bit results: the binary64 key table */
    sfp8f_c16 c16;          /* 16-bit results: the vector cast */
    int use_c16;
    sfp8f_rnd rnd;          /* or the fast rounder */
    int use_rnd;
    const sfp8f_conv *dec;  /* format results: code -> binary64 */
    double min_normal, max_finite;
} ZivRound;

/* out[k] = d[k] rounded (n <= MM_BLK); returns the OR of the flags */
static unsigned ziv_round(const ZivRound *z, const sfp8_env *env, const double *d, npy_intp n, uint32_t *out)
{
    unsigned fl = 0;
    if (z->use_rnd) return z->dst == &sfp8_binary32 ? round_f32(sfp8f_simd_level(), &z->rnd, d, n, out)
                                                    : sfp8f_round_doubles(&z->rnd, d, n, out);
    if (z->fromf || z->use_c16) {
        /* narrow codes into the front of out, widened from the back (byte copies:
           no access through a second integer type) */
        char *c = (char *)out;
        int w = z->fromf ? 1 : 2;
        if (z->fromf) fl = sfp8f_run_from_float(z->fromf, (const char *)d, 8, 8, c, 1, n, NULL);
        else fl = sfp8f_run_cast16(&z->c16, (const char *)d, 8, 8, c, 2, n, NULL);
        for (npy_intp k = n; k-- > 0;) {
            uint32_t v = load_code(c + k * w, w);
            memcpy(c + 4 * k, &v, 4);
        }
        return fl;
    }
    for (npy_intp k = 0; k < n; k++) {
        uint64_t b;
        uint8_t f0 = 0;
        memcpy(&b, &d[k], 8);
        out[k] = (uint32_t)sfp8_convert(&sfp8_binary64, z->dst, b, env, &f0);
        fl |= f0;
    }
    return fl;
}

/* ok[k] = 1 if Ziv's interval [lo[k], hi[k]] is accepted (both ends round to
 * the same code r, whose value v lies outside the interval, 2 min normal <= |v|
 * <= max / 2).  v from the binary32 bits, from the arithmetic of an IEEE-like
 * 16-bit format (every code: those of exponent field 0 or all ones give |v|
 * below the smallest normal or above the largest finite value, rejected) or
 * from the format's table; branch-free. */
static void ziv_accept(const ZivRound *z, const IeeeDec *D, const double *lo, const double *hi, const uint32_t *clo,
                       const uint32_t *chi, npy_intp n, unsigned char *ok)
{
    double mn = 2 * z->min_normal, mx = 0.5 * z->max_finite;
    for (npy_intp k = 0; k < n; k++) {
        uint32_t r = clo[k];
        double v;
        if (!z->dec) {
            float w;
            memcpy(&w, &r, 4);
            v = (double)w;
        } else if (D->ok) {
            uint64_t g = r & D->magmask, b = ((g << (52 - D->M)) + D->off) | ((uint64_t)r << (64 - D->bits) & (uint64_t)1 << 63);
            memcpy(&v, &b, 8);
        } else {
            memcpy(&v, &z->dec->val[r & (uint32_t)(z->dec->n - 1)], 8);
        }
        ok[k] = (r == chi[k]) & !(v >= lo[k] && v <= hi[k]) & (fabs(v) >= mn) & (fabs(v) <= mx);
    }
}

/* Exact matmul of any format whose values and products are binary64 numbers,
 * with a float64 BLAS product and Ziv's test (as the elementary functions do):
 * c = the binary64 product, |c - exact| <= e with e = gamma_{n+4} * S + tiny,
 * S >= sum |a_l b_l| (the smallest of three cheap bounds: row sum times column
 * max, row max times column sum, the product of the Euclidean norms).
 *   - certificate: S < 2^(qa + qb + 53), qa / qb the lowest bit exponents of
 *     the row / column: every partial sum is an exact binary64, c is the exact
 *     sum, rounded once (a zero c takes the exact accumulator: its sign);
 *   - else Ziv: accepted when c - e and c + e round to the same code r, the
 *     value of r lies outside [c - e, c + e] (so the exact sum is not
 *     representable: the flags are inexact alone), the interval does not
 *     contain 0, and r is neither near the underflow range nor near overflow
 *     (where tininess or overflow could differ between the ends);
 *   - every other output takes the exact accumulator, and the outputs of a row
 *     of A or a column of B holding a NaN or an infinity (entered as 0 in the
 *     product) the exact accumulator over the special products alone.
 * Returns 1 when done, 0 when not applicable, -1 on a Python error. */
static int matmul_blas_ziv(MatmulData *md, const sfp8_env *env, char *A, char *B, char *O, npy_intp m, npy_intp n,
                           npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om,
                           npy_intp op, unsigned *accf)
{
    const sfp8_format *f = &md->f;
    int sz = f->bits <= 8 ? 1 : 2, level = sfp8f_simd_level(), osz = md->out_kind == 1 ? 4 : sz;
    const sfp8f_conv *dec;
    ClassRow R;
    IeeeDec D;
    ZivRound z;
    PyArrayObject *Ad = NULL, *Bd = NULL, *Dd = NULL;
    double *buf = NULL, *xs, *lo, *hi, gamma, tiny;
    LineStats ra, rb;
    const double *pd;
    uint32_t *cx = NULL, *clo, *chi;
    unsigned char *bad_row = NULL, *bad_col = NULL, *state, *zok;
    unsigned fl = 0;
    int ret = -1;
    npy_intp dims[2], mp = m * p, bl = mp < MM_BLK ? mp : MM_BLK; /* the block buffers */
    int64_t qmin = (int64_t)-f->bias - f->man_bits, top = ((int64_t)1 << f->exp_bits) - f->bias + 2;
    if (!md->blas || md->out_kind == 2 || m == 0 || n == 0 || p == 0) return 0;
    /* products and sums far from binary64's underflow and overflow */
    if (2 * qmin < -1000 || 2 * top > 900 || n > ((npy_intp)1 << 30)) return 0;
    memset(&z, 0, sizeof z);
    dec = dec_table(f, env, m * n + n * p);
    if (!dec) return 0;
    if (md->out_kind == 1) {
        z.dst = &sfp8_binary32;
        if (!sfp8f_rounder(&sfp8_binary32, env, &z.rnd)) return 0;
        z.use_rnd = 1;
        z.min_normal = 0x1p-126;
        z.max_finite = 0x1.fffffep127;
    } else {
        uint64_t b;
        uint8_t f0 = 0;
        sfp8_env ex = *env;
        z.dst = f;
        z.dec = dec;
        if (f->bits <= 8) z.fromf = sfp8f_from_float(f, env, mp);
        else z.use_c16 = sfp8f_cast16(&sfp8_binary64, f, env, &z.c16);
        if (!z.fromf && !z.use_c16) z.use_rnd = sfp8f_rounder(f, env, &z.rnd);
        ex.rounding = SFP8_ROUND_NEAREST_EVEN;
        b = sfp8_convert(f, &sfp8_binary64, sfp8_min_normal_code(f), &ex, &f0);
        memcpy(&z.min_normal, &b, 8);
        b = sfp8_convert(f, &sfp8_binary64, sfp8_max_code(f), &ex, &f0);
        memcpy(&z.max_finite, &b, 8);
    }
    dims[0] = m; dims[1] = n;
    Ad = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    dims[0] = n; dims[1] = p;
    Bd = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    /* the statistics per row of A and per column of B (LineStats), then one
       block's values to round */
    buf = PyMem_Malloc((size_t)(4 * m + 4 * p + 3 * (bl + MM_PAD)) * sizeof(double));
    cx = PyMem_Malloc((size_t)3 * bl * 4 + 2 * bl);
    bad_row = PyMem_Calloc((size_t)m, 1);
    bad_col = PyMem_Calloc((size_t)p, 1);
    if (!Ad || !Bd || !buf || !cx || !bad_row || !bad_col) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto fail;
    }
    ra.s0 = buf, ra.s1 = ra.s0 + m, ra.s2 = ra.s1 + m, ra.lb = ra.s2 + m;
    rb.s0 = ra.lb + m, rb.s1 = rb.s0 + p, rb.s2 = rb.s1 + p, rb.lb = rb.s2 + p;
    xs = rb.lb + p;
    lo = xs + bl + MM_PAD;
    hi = lo + bl + MM_PAD;
    clo = cx + bl;
    chi = clo + bl;
    state = (unsigned char *)(chi + bl);
    zok = state + bl;
    Py_BEGIN_ALLOW_THREADS /* C only until the BLAS call */
    ieee_dec_init(&D, f, dec);
    fl |= decode_operands(dec, &D, sz, A, B, m, n, p, am, an, bn, bp, (double *)PyArray_DATA(Ad),
                          (double *)PyArray_DATA(Bd), bad_row, bad_col, &ra, &rb);
    Py_END_ALLOW_THREADS
    if (!(Dd = blas_product(Ad, Bd))) goto fail;
    pd = (const double *)PyArray_DATA(Dd);
    Py_BEGIN_ALLOW_THREADS /* the certificate, Ziv's test and the finishing passes: C only */
    /* gamma_{n+4} with u = 2^-53, inflated for the rounding of the bounds themselves */
    gamma = (double)(n + 4) * 0x1p-53 / (1 - (double)(n + 4) * 0x1p-53) * (1 + 0x1p-20);
    /* an absolute term for underflow (none can occur here: every partial sum is 0 or
       at least 2^(2 qmin) >= 2^-1000), kept normal: subnormal operands are slow */
    tiny = (double)(n + 4) * 0x1p-1022;
    R.rb = &rb, R.bad_col = bad_col, R.gamma = gamma, R.tiny = tiny, R.xs = xs, R.lo = lo, R.hi = hi;
    for (npy_intp k0 = 0; k0 < mp; k0 += MM_BLK) {
        npy_intp k1 = mp - k0 < MM_BLK ? mp : k0 + MM_BLK, i = k0 / p, j = k0 % p, nx = 0, nc = 0;
        R.nx = R.nc = 0;
        for (npy_intp kk = k0; kk < k1;) { /* row i, columns j.. */
            npy_intp j1 = p - j < k1 - kk ? p : j + (k1 - kk);
            if (bad_row[i]) {
                memset(state + (kk - k0), MM_SPECIAL, (size_t)(j1 - j));
            } else {
                R.s0 = ra.s0[i], R.s1 = ra.s1[i], R.s2 = ra.s2[i], R.low53 = ra.lb[i] * 0x1p53;
                R.c = pd + i * p;
                R.state = state + (kk - k0);
                classify(level, &R, j, j1);
            }
            kk += j1 - j;
            j = 0, i++;
        }
        nx = R.nx, nc = R.nc;
        /* the certified exact sums, rounded once (their flags are the results'),
           and both ends of each Ziv interval (their flags are not) */
        fl |= ziv_round(&z, env, xs, nx, cx);
        ziv_round(&z, env, lo, nc, clo);
        ziv_round(&z, env, hi, nc, chi);
        ziv_accept(&z, &D, lo, hi, clo, chi, nc, zok);
        nx = nc = 0;
        i = k0 / p, j = k0 % p;
        for (npy_intp k = k0; k < k1; k++) {
            char *o = O + i * om + j * op;
            int s = state[k - k0];
            uint32_t r;
            if (s == MM_CERT) {
                r = cx[nx++];
            } else if (s == MM_ZIV) {
                r = clo[nc];
                if (!zok[nc++]) s = MM_EXACT;
                else fl |= SFP8_FLAG_INEXACT;
            }
            if (s == MM_CERT || s == MM_ZIV) {
                /* osz in a local: the stores through o may alias *md */
                if (osz == 4) memcpy(o, &r, 4);
                else store_code(o, osz, r);
            } else {
                uint8_t f0 = 0;
                matmul_exact_element(md, env, A, B, o, i, j, n, am, an, bn, bp, s == MM_SPECIAL ? dec : NULL, &f0);
                fl |= f0;
            }
            if (++j == p) j = 0, i++;
        }
    }
    Py_END_ALLOW_THREADS
    *accf |= fl;
    ret = 1;
fail:
    Py_XDECREF(Ad);
    Py_XDECREF(Bd);
    Py_XDECREF(Dd);
    PyMem_Free(buf);
    PyMem_Free(cx);
    PyMem_Free(bad_row);
    PyMem_Free(bad_col);
    return ret;
}

/* matmul_blas inside a read section of the table cache (fast/cache.c): the
 * tables it looks up stay alive until it returns. */
static int matmul_blas(MatmulData *md, const sfp8_env *env, char *A, char *B, char *O, npy_intp m, npy_intp n,
                       npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om, npy_intp op,
                       unsigned *accf)
{
    unsigned tok = sfp8f_read_begin();
    int r = md->f.bits <= 8 ? matmul_blas_tables(md, env, A, B, O, m, n, p, am, an, bn, bp, om, op, accf) : 0;
    if (r == 0) r = matmul_blas_ziv(md, env, A, B, O, m, n, p, am, an, bn, bp, om, op, accf);
    sfp8f_read_end(tok);
    return r;
}

/* N products (m,n) x (n,p) -> (m,p), one per outer index, with the core
 * strides given: the loop of matmul and, with m or p (or both) 1 and the
 * strides of the missing dimensions 0, of vecdot, matvec and vecmat */
static int matmul_run(MatmulData *md, char *const data[], const npy_intp outer[], npy_intp N, npy_intp m,
                      npy_intp n, npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om,
                      npy_intp op)
{
    const sfp8_format *f = &md->f;
    unsigned int accf = 0;
    sfp8_env env;
    const npy_intp *strides = outer;
    /* the settings (saturation by default) of the result's format */
    loop_env_for(&md->ld, md->out_kind == 0 ? f : md->out_kind == 1 ? &sfp8_binary32 : &sfp8_binary64, &env);
    for (npy_intp k = 0; k < N; k++) {
        char *A = data[0] + k * strides[0], *B = data[1] + k * strides[1], *O = data[2] + k * strides[2];
        int done = matmul_blas(md, &env, A, B, O, m, n, p, am, an, bn, bp, om, op, &accf);
        if (done < 0) return -1;
        if (done) continue;
        for (npy_intp i = 0; i < m; i++) {
            for (npy_intp j = 0; j < p; j++) {
                uint8_t fl = 0;
                if (md->ld.stoch) env.random = loop_random(&md->ld);
                matmul_exact_element(md, &env, A, B, O + i * om + j * op, i, j, n, am, an, bn, bp, NULL, &fl);
                accf |= fl;
            }
        }
    }
    loop_publish(&md->ld, accf);
    return 0;
}

static int matmul_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                       npy_intp const strides[], NpyAuxData *auxdata)
{
    const npy_intp *d = dimensions, *s = strides;
    (void)context;
    return matmul_run((MatmulData *)auxdata, data, s, d[0], d[1], d[2], d[3], s[3], s[4], s[5], s[6], s[7], s[8]);
}

/* vecdot (n),(n)->(): a 1 x n times n x 1 product */
static int vecdot_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                       npy_intp const strides[], NpyAuxData *auxdata)
{
    const npy_intp *d = dimensions, *s = strides;
    (void)context;
    return matmul_run((MatmulData *)auxdata, data, s, d[0], 1, d[1], 1, 0, s[3], s[4], 0, 0, 0);
}

/* matvec (m,n),(n)->(m): m x n times n x 1 */
static int matvec_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                       npy_intp const strides[], NpyAuxData *auxdata)
{
    const npy_intp *d = dimensions, *s = strides;
    (void)context;
    return matmul_run((MatmulData *)auxdata, data, s, d[0], d[1], d[2], 1, s[3], s[4], s[5], 0, s[6], 0);
}

/* vecmat (n),(n,m)->(m): 1 x n times n x m */
static int vecmat_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                       npy_intp const strides[], NpyAuxData *auxdata)
{
    const npy_intp *d = dimensions, *s = strides;
    (void)context;
    return matmul_run((MatmulData *)auxdata, data, s, d[0], 1, d[1], d[2], 0, s[3], s[4], s[5], 0, s[6]);
}

static int dot_get_loop(PyArrayMethod_StridedLoop *loop, PyArrayMethod_Context *context,
                        PyArrayMethod_StridedLoop **out_loop, NpyAuxData **out_transferdata,
                        NPY_ARRAYMETHOD_FLAGS *flags)
{
    MatmulData *md = loopdata_alloc(sizeof(MatmulData));
    if (!md) return -1;
    md->loop = loop;
    md->f = *descr_fmt(context->descriptors[0]);
    switch (context->descriptors[2]->type_num) {
    case NPY_FLOAT: md->out_kind = 1; break;
    case NPY_DOUBLE: md->out_kind = 2; break;
    default: md->out_kind = 0; break;
    }
    /* the binary64 BLAS path calls numpy.matmul: the loop then holds the GIL;
       it needs every value of the format to be an exact binary64 */
    md->blas = np_matmul_fn && sfp8f_enabled() && !md->ld.stoch && acc_binary64_exact(&md->f);
    *out_loop = md->loop;
    *out_transferdata = (NpyAuxData *)md;
    *flags = md->blas ? NPY_METH_REQUIRES_PYAPI : 0;
    return 0;
}

#define DOT_GET_LOOP(name, loop) SFP8_GET_LOOP(name, dot_get_loop(loop, context, out_loop, out_transferdata, flags))
DOT_GET_LOOP(matmul_get_loop, matmul_loop)
DOT_GET_LOOP(vecdot_get_loop, vecdot_loop)
DOT_GET_LOOP(matvec_get_loop, matvec_loop)
DOT_GET_LOOP(vecmat_get_loop, vecmat_loop)

static NPY_CASTING matmul_resolve_float(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
                                        PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *vo)
{
    NPY_CASTING c = ufunc_resolve(self, dtypes, given, loop, vo, 2, 1, 0);
    if ((int)c < 0) return c;
    Py_DECREF(loop[2]);
    loop[2] = PyArray_DescrFromType(dtypes[2] == &PyArray_FloatDType ? NPY_FLOAT : NPY_DOUBLE);
    return NPY_NO_CASTING;
}

static PyObject *matmul_wide = NULL; /* gufunc with float32/float64 results */

PyObject *sfp8_matmul_wide_ufunc(void)
{
    if (!matmul_wide)
        matmul_wide = PyUFunc_FromFuncAndDataAndSignature(
            NULL, NULL, NULL, 0, 2, 1, PyUFunc_None, "matmul_wide",
            "softfp8 matmul with a float32/float64 result (exact accumulation, one rounding)", 0,
            "(m,n),(n,p)->(m,p)");
    Py_XINCREF(matmul_wide);
    return matmul_wide;
}

/* np.vecdot, np.matvec, np.vecmat: exact dot products rounded once into the
   operands' format, as matmul */
static int add_vector_loops(PyObject *numpy_module, PyArray_DTypeMeta *cls)
{
    static const char *const names[3] = {"vecdot", "matvec", "vecmat"};
    PyArrayMethod_GetLoop *const get[3] = {vecdot_get_loop, matvec_get_loop, vecmat_get_loop};
    for (int k = 0; k < 3; k++) {
        PyObject *uf = PyObject_GetAttrString(numpy_module, names[k]);
        PyArray_DTypeMeta *dtypes[3] = {cls, cls, cls};
        PyType_Slot slots[] = {
            {NPY_METH_resolve_descriptors, (void *)resolve_2_1},
            {NPY_METH_get_loop, (void *)get[k]},
            {0, NULL}
        };
        PyArrayMethod_Spec spec = {
            .name = names[k], .nin = 2, .nout = 1, .casting = NPY_NO_CASTING,
            .flags = NPY_METH_SUPPORTS_UNALIGNED, .dtypes = dtypes, .slots = slots,
        };
        int r;
        if (!uf) return -1;
        r = PyUFunc_AddLoopFromSpec(uf, &spec);
        Py_DECREF(uf);
        if (r < 0) return -1;
    }
    return 0;
}

int add_matmul_loops(PyObject *numpy_module, PyArray_DTypeMeta *cls)
{
    if (add_vector_loops(numpy_module, cls) < 0) return -1;
    PyObject *uf = PyObject_GetAttrString(numpy_module, "matmul");
    PyArray_DTypeMeta *outs[3] = {cls, &PyArray_FloatDType, &PyArray_DoubleDType};
    if (!uf) return -1;
    if (!np_matmul_fn) {
        np_matmul_fn = uf;
        Py_INCREF(np_matmul_fn);
    }
    for (int k = 0; k < 3; k++) {
        if (k == 1) {
            Py_DECREF(uf);
            uf = sfp8_matmul_wide_ufunc();
            if (!uf) return -1;
        }
        PyArray_DTypeMeta *dtypes[3] = {cls, cls, outs[k]};
        PyType_Slot slots[] = {
            {NPY_METH_resolve_descriptors, k == 0 ? (void *)resolve_2_1 : (void *)matmul_resolve_float},
            {NPY_METH_get_loop, (void *)matmul_get_loop},
            {0, NULL}
        };
        PyArrayMethod_Spec spec = {
            .name = "softfp8_matmul", .nin = 2, .nout = 1, .casting = NPY_NO_CASTING,
            .flags = NPY_METH_SUPPORTS_UNALIGNED, .dtypes = dtypes, .slots = slots,
        };
        if (PyUFunc_AddLoopFromSpec(uf, &spec) < 0) {
            Py_DECREF(uf);
            return -1;
        }
    }
    Py_DECREF(uf);
    return 0;
}

/* One exact dot product of n codes (strides in bytes) rounded once into f: the
   exact element above, for np.dot's dotfunc (npy/dot.c). */
unsigned sfp8_dot_element(const sfp8_format *f, const sfp8_env *env, const char *a, npy_intp sa, const char *b,
                          npy_intp sb, npy_intp n, char *out)
{
    MatmulData md;
    uint8_t fl = 0;
    md.f = *f;
    md.out_kind = 0;
    matmul_exact_element(&md, env, a, b, out, 0, 0, n, 0, sa, sb, 0, NULL, &fl);
    return fl;
}
