/* The matrix engine's SIMD kernels (mm_simd.c) and the types they share with
 * mm_blas.c.  The target macros of the engine are defined here and nowhere else
 * (to be replaced by the fast paths' shared SIMD header once it exists).  Every
 * kernel has a portable version in C (level 0); level 1 is AVX2, level 2 AVX-512
 * (F/BW/VL/DQ, the level sfp8f_simd_level() reports). */
#ifndef SOFTFP8_MM_SIMD_H
#define SOFTFP8_MM_SIMD_H
#include <stddef.h>
#include <stdint.h>

#include "fast.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define MM_SIMD 1
#define MM_TGT512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define MM_TGT256 __attribute__((target("avx2")))
#define MM_TGT256F __attribute__((target("avx2,fma")))
#else
#define MM_SIMD 0
#endif

/* the arithmetic decoding of a 9..16-bit sign / exponent / mantissa format with
 * IEEE specials and subnormals: normal code c (sign s, exponent field e, mantissa
 * m) -> binary64 bits s << 63 | (e << 52 | m << (52 - M)) + (1023 - bias) << 52 */
typedef struct {
    int ok;
    int bits, M;
    uint64_t emask, mmask, magmask, off;
} mm_ieee;

/* the arithmetic decoder of f if it is IEEE-like with 9..16 bits and its binary64
   table dec (the core's) agrees on a spread of codes; D->ok 0 otherwise */
void mm_ieee_init(mm_ieee *D, const sfp8_format *f, const sfp8f_conv *dec);
/* the binary64 bits of code r of D's format (a normal or zero code) */
static inline uint64_t mm_ieee_value(const mm_ieee *D, uint32_t r)
{
    uint64_t g = r & D->magmask;
    return (g ? (g << (52 - D->M)) + D->off : 0) | ((uint64_t)r << (64 - D->bits) & (uint64_t)1 << 63);
}

/* cnt codes of size sz at src (stride st) decoded into dst (NaN and infinity as 0);
 * bad[k * bs] set for a NaN or an infinity at k; *fl gets the flags of the finite
 * operands: the vector kernels where they apply (8-bit codes by the fast paths'
 * table lookup, IEEE-like 16-bit codes by arithmetic), the table element by element
 * for the rest */
void mm_decode(int level, const mm_ieee *D, const sfp8f_conv *dec, int sz, const char *src, ptrdiff_t st,
               ptrdiff_t cnt, uint64_t *dst, unsigned char *bad, ptrdiff_t bs, unsigned *fl);

/* statistics of a line (a row of A or a column of B) for the exactness certificate and
   Ziv's test: s0 = sum |v|, s1 = max |v|, s2 = sum v^2 (then its square root), lb = the
   lowest significant bit of the non-zero values (a power of two, +inf if none) */
typedef struct {
    double *s0, *s1, *s2, *lb;
} mm_stats;
/* of a whole line into st[0..3] */
void mm_stats_h(int level, const double *d, ptrdiff_t n, double *st);
/* of each element k of a row of B into column k's statistics */
void mm_stats_v(int level, const double *d, ptrdiff_t n, double *s0, double *s1, double *s2, double *lb);

/* classification of the outputs of one row segment of the product (mm_blas.c) */
enum { MM_CERT, MM_ZIV, MM_SPECIAL, MM_EXACT };
#define MM_PAD 8 /* slack after xs / lo / hi: the vector kernels store whole vectors */
typedef struct {
    double s0, s1, s2, low53;       /* the row's statistics, low53 = its lowest bit times 2^53 */
    const mm_stats *rb;             /* the columns' */
    const unsigned char *bad_col;
    double gamma, tiny;
    int ziv;                        /* 0: no Ziv interval (elements failing the certificate are EXACT) */
    const double *c;                /* the row of the product */
    unsigned char *state;           /* state[j - j0] */
    double *xs, *lo, *hi;           /* certified values, Ziv intervals (compressed) */
    ptrdiff_t nx, nc;
} mm_class_row;
/* states of columns j0 .. j1 - 1: SPECIAL (column of B with a NaN / infinity), EXACT
   (c zero or not finite, or its Ziv interval near or across 0), CERT (c exact:
   appended to xs) or ZIV (c - e and c + e appended to lo / hi) */
void mm_classify(int level, mm_class_row *R, ptrdiff_t j0, ptrdiff_t j1);

/* v[k] = v[k] * s rounded to odd at 53 bits (v[k] * s normal, |v[k] * s| >= 2^-960:
   DERIVED, see mm_simd.c) */
void mm_odd_scale(int level, double *v, ptrdiff_t n, double s);

/* out[k] = d[k] (finite, normal or zero-free: as sfp8f_round_doubles) rounded to binary32
   by r; returns the OR of the flags */
unsigned mm_round_f32(int level, const sfp8f_rnd *r, const double *d, ptrdiff_t n, uint32_t *out);
#endif
