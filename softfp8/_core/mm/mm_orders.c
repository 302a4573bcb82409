/*
 * softfp8.Accumulation's orders under the matrix-unit entry, fast (mm_paths.def: orders):
 * the sequential order with an addend, the pairwise (tree) and the Kahan-compensated
 * orders (docs/matrix-units.md, "Further orders"), with or without an addend, with or
 * without promote_every, for a binary32 accumulator rounded to nearest even.  The
 * definition is bfma.c's dot_order / chunk_sum / pair_tree (sfp8u_gemm, exact in
 * integers); sfp8m_unit_gemm (mm_units.c) calls sfp8m_orders_gemm first for every order
 * but the block-FMA model when the fast paths are on.
 *
 * The model: with such an accumulator every step of chunk_sum is one IEEE binary32
 * addition or subtraction rounded to nearest even, of binary32 numbers -- exactly what
 * the hardware computes -- provided each product is a binary32 number (then the leaf
 * rounding of pair_tree, round_acc(p), is p itself).  So the kernels compute, lane by
 * lane (one lane per output column):
 *
 *   sequential: s = start; s = s + p_l for every l
 *   Kahan:      s = start, e = +0; y = p_l - e, t = s + y, e = (t - s) - y, s = t
 *   pairwise:   S(l0, n) = p_l0 if n = 1, else S(l0, n/2) + S(l0 + n/2, n - n/2) (h = n / 2
 *               as pair_tree splits), then c + S with an addend
 *
 * where start is the addend c, or -0 without one (-0 + x = x for every x, zeros
 * included, and the first Kahan step from s = -0, e = +0 is exact and leaves e = +0:
 * so both equal chunk_sum's s = round_acc(p_0)); with promote_every N, every chunk of N
 * products starts from -0 and its value is added to the running sum F = c (or -0) by one
 * more binary32 addition (the promoted format binary32, nearest even).  The product a b
 * is exact in binary32 (hence the same in every kernel, fused or not) when, over the
 * row of A and the column of B, the lowest set bits sum to at least -149, the top
 * binades to at most 126 and the significands' widths to at most 24; each operand value
 * is then a binary32 number too.  These are checked per line (row of A / column of B)
 * and per output; sums of binary32 numbers never underflow (a sum below 2^-126 is a
 * multiple of 2^-149, exact), so the flags of the steps are inexact (the precision
 * flag), overflow and invalid.  The arithmetic runs with MXCSR at nearest even, all
 * exceptions masked, no FTZ / DAZ, flags cleared before each group of outputs and read
 * after it (the portable kernel too, on x86; elsewhere C99's fenv in the same way); the
 * caller's MXCSR / environment is restored at the end.  A group whose steps raised
 * overflow or invalid (an infinity the generic kernel may saturate, Kahan's non-finite
 * rule) goes to the generic kernel output by output.  Operands' flags: denormal for a
 * subnormal operand of the row or column or a subnormal addend (dot_order's rule);
 * outputs whose row or column holds a NaN or an infinity, an addend that is not a
 * finite binary32 number, or a product outside the rule above are the generic kernel's.
 * A lane the kernel must not compute (its column fine, but not its product range or
 * addend) is zeroed in a private copy of the group's columns, so that its steps raise no
 * flag.  The result, a binary32 number, is delivered into the output format exactly
 * (binary32, binary64), or by the fast paths' rounder (sfp8f_round_doubles), or by the
 * core (sfp8_round_value); zeros by the core.
 *
 * Kernels: portable C (arrays of one group's lanes), AVX2 (eight lanes a vector, product
 * then sum), AVX-512 (sixteen lanes, the fused multiply-add of the exact product: one
 * rounding, that of the sum); the level is sfp8f_simd_level(), read once per call.
 * Groups: G = 128 columns of one row (the rows of B decoded once into binary32, padded
 * to a multiple of 16 columns with zeros).
 *
 * DERIVED from core.c round_pack: the binary32 hardware additions (nearest even, no FTZ /
 * DAZ, inexact / overflow / invalid from the status flags) as the generic kernel's
 * round_acc steps of a binary32 accumulator rounded to nearest even, the products'
 * exactness rule above, and the zero signs of -0 starts; proof:
 * tests/harness/test_harness.py::test_entry (entry orders; every SIMD level).
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "fast.h"
#include "mm.h"
#include "mm_fenv.h"
#include "mm_orders.h"
#include "mm_paths.h"
#include "mm_simd.h"

#if MM_SIMD
#include <immintrin.h>
#endif

#define G 128        /* columns of one group (one reading of the flags) */
#define NOEXP 30000  /* lo of a zero (above every lowest bit), -NOEXP its hi */

/* a decoded operand: its binary32 value (when the line qualifies), lowest set bit lo,
 * binade hi, significand width (zero: NOEXP, -NOEXP, 0), subnormal code, NaN / infinity */
typedef struct {
    float f;
    int32_t lo, hi;
    uint8_t wide, sub, bad;
} ocode;

/* what a line (row of A, column of B) holds: OR of bad / sub, min lo, max hi, max wide */
typedef struct {
    int bad, sub, lo, hi, wide;
} oline;

static int bitlen64(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

static void decode1(const sfp8_format *f, uint64_t code, ocode *d)
{
    sfp8u_value v;
    sfp8u_decode(f, code, &v);
    d->sub = v.sub;
    d->bad = v.cls == SFP8U_NAN || v.cls == SFP8U_INF;
    d->lo = NOEXP;
    d->hi = -NOEXP;
    d->wide = 0;
    d->f = v.neg ? -0.0f : 0.0f;
    if (v.cls != SFP8U_FINITE) return;
    {
        int tz = __builtin_ctzll(v.sig);
        int64_t lo = v.exp + tz, hi = v.exp + bitlen64(v.sig) - 1;
        d->lo = (int32_t)(lo < -NOEXP / 2 ? -NOEXP / 2 : lo);
        d->hi = (int32_t)(hi > NOEXP / 2 ? NOEXP / 2 : hi);
        d->wide = (uint8_t)bitlen64(v.sig >> tz);
        if (lo >= -149 && hi <= 127 && d->wide <= 24) /* a binary32 number: converted exactly */
            d->f = (float)ldexp(v.neg ? -(double)(v.sig >> tz) : (double)(v.sig >> tz), (int)lo);
    }
}

/* decode1 from the fast paths' cached binary64 decoding of f (IEEE-like formats: the
   value's bits; a subnormal code is one whose decoding raises denormal) */
static void decode64(const sfp8f_conv *dec, uint64_t code, ocode *d)
{
    const uint64_t b = dec->val[code], sig0 = b & (((uint64_t)1 << 52) - 1);
    const int e = (int)(b >> 52) & 0x7FF;
    const uint64_t sig = sig0 | (e ? (uint64_t)1 << 52 : 0);
    d->sub = (dec->fl[code] & SFP8_FLAG_DENORMAL) != 0;
    d->bad = e == 0x7FF;
    d->lo = NOEXP;
    d->hi = -NOEXP;
    d->wide = 0;
    d->f = b >> 63 ? -0.0f : 0.0f;
    if (d->bad || !sig) return;
    {
        const int tz = __builtin_ctzll(sig);
        const int64_t ex = (e ? e : 1) - 1075, lo = ex + tz, hi = ex + bitlen64(sig) - 1;
        double v;
        d->lo = (int32_t)(lo < -NOEXP / 2 ? -NOEXP / 2 : lo);
        d->hi = (int32_t)(hi > NOEXP / 2 ? NOEXP / 2 : hi);
        d->wide = (uint8_t)bitlen64(sig >> tz);
        memcpy(&v, &b, 8);
        if (lo >= -149 && hi <= 127 && d->wide <= 24) d->f = (float)v; /* a binary32 number: exact */
    }
}

static void line_add(oline *s, const ocode *d)
{
    s->bad |= d->bad;
    s->sub |= d->sub;
    if (d->lo < s->lo) s->lo = d->lo;
    if (d->hi > s->hi) s->hi = d->hi;
    if (d->wide > s->wide) s->wide = d->wide;
}

static void line_init(oline *s)
{
    s->bad = s->sub = s->wide = 0;
    s->lo = NOEXP;
    s->hi = -NOEXP;
}

/* every value of the line a binary32 number, no NaN or infinity */
static int line_ok(const oline *s) { return !s->bad && s->lo >= -149 && s->hi <= 127 && s->wide <= 24; }

/* every product of the two lines exact in binary32 (the rule of the header) */
static int pair_ok(const oline *r, const oline *c)
{
    return r->lo + c->lo >= -149 && r->hi + c->hi <= 126 && r->wide + c->wide <= 24;
}

/* the decoder of an operand format: a table of every code when that repays it (8-bit
   formats: filled first; 9..16 bits: each code decoded when first read, have[] marking
   those done -- a call reads far fewer distinct codes than 65,536) */
typedef struct {
    const sfp8_format *f;
    uint64_t mask;
    ocode *tab;
    uint8_t *have;
    const sfp8f_conv *dec; /* 9..16-bit IEEE-like formats: their binary64 decoding (decode64) */
} odecoder;

static int decoder_init(odecoder *D, const sfp8_format *f, int64_t count)
{
    D->f = f;
    D->tab = NULL;
    D->have = NULL;
    D->dec = NULL;
    D->mask = f->bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << f->bits) - 1;
    if (f->bits > 16 || (f->bits > 8 && count < ((int64_t)1 << f->bits) / 16)) return 1;
    if (!(D->tab = malloc(sizeof(ocode) << f->bits))) return 0;
    if (f->bits > 8) {
        static const sfp8_env e = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
        if (f->is_signed && f->specials == SFP8_SPECIALS_IEEE && f->subnormals == SFP8_SUBNORMALS_IEEE)
            D->dec = sfp8f_convert(f, &sfp8_binary64, &e, PTRDIFF_MAX);
        return (D->have = calloc((size_t)1 << f->bits, 1)) != NULL;
    }
    for (uint64_t c = 0; c <= D->mask; c++) decode1(f, c, &D->tab[c]);
    return 1;
}

static void decoder_free(odecoder *D)
{
    free(D->tab);
    free(D->have);
}

static inline void get(const odecoder *D, uint64_t code, ocode *tmp, const ocode **d)
{
    if (D->tab) {
        const uint64_t c = code & D->mask;
        if (D->have && !D->have[c]) {
            if (D->dec) decode64(D->dec, c, &D->tab[c]);
            else decode1(D->f, c, &D->tab[c]);
            D->have[c] = 1;
        }
        *d = &D->tab[c];
    } else {
        decode1(D->f, code, tmp);
        *d = tmp;
    }
}

/* ---- the kernels: lanes j0 .. j0 + w - 1 (w <= G, a multiple of 16) of one row ---- */

enum { K_SEQ = 0, K_KAHAN, K_PAIR };

typedef struct {
    int kind;          /* K_* */
    int addend;        /* 1: start from the addends c[] */
    int prom;          /* promote_every: chunks of `chunk` products into the running sum */
    int64_t k, chunk;  /* chunk: products per chunk (promotion), k without one */
    const float *a;    /* the row of A */
    const float *b;    /* B, row-major, rows of pp floats */
    ptrdiff_t pp;
} okern;

/* the portable kernel: out[q] for q < w from the addends c[q] */
static void tree_c(const okern *x, const float *b, int64_t l0, int64_t n, int w, float *s)
{
    if (n == 1) {
        const float a = x->a[l0], *r = b + l0 * x->pp;
        for (int q = 0; q < w; q++) s[q] = a * r[q];
        return;
    }
    {
        float t[G];
        int64_t h = n / 2;
        tree_c(x, b, l0, h, w, s);
        tree_c(x, b, l0 + h, n - h, w, t);
        for (int q = 0; q < w; q++) s[q] = s[q] + t[q];
    }
}

static void chunk_c(const okern *x, const float *b, int64_t l0, int64_t l1, int w, const float *start, float *s)
{
    if (x->kind == K_PAIR) {
        tree_c(x, b, l0, l1 - l0, w, s);
        if (start)
            for (int q = 0; q < w; q++) s[q] = start[q] + s[q];
        return;
    }
    for (int q = 0; q < w; q++) s[q] = start ? start[q] : -0.0f;
    if (x->kind == K_SEQ) {
        for (int64_t l = l0; l < l1; l++) {
            const float a = x->a[l], *r = b + l * x->pp;
            for (int q = 0; q < w; q++) s[q] = s[q] + a * r[q];
        }
    } else {
        float e[G];
        for (int q = 0; q < w; q++) e[q] = 0.0f;
        for (int64_t l = l0; l < l1; l++) {
            const float a = x->a[l], *r = b + l * x->pp;
            for (int q = 0; q < w; q++) {
                float y = a * r[q] - e[q], t = s[q] + y;
                e[q] = (t - s[q]) - y;
                s[q] = t;
            }
        }
    }
}

__attribute__((noinline)) static void run_c(const okern *x, const float *b, int w, const float *c, float *out)
{
    if (!x->prom) {
        chunk_c(x, b, 0, x->k, w, x->addend ? c : NULL, out);
        return;
    }
    {
        float s[G];
        for (int q = 0; q < w; q++) out[q] = x->addend ? c[q] : -0.0f;
        for (int64_t l0 = 0; l0 < x->k; l0 += x->chunk) {
            chunk_c(x, b, l0, x->k - l0 < x->chunk ? x->k : l0 + x->chunk, w, NULL, s);
            for (int q = 0; q < w; q++) out[q] = out[q] + s[q];
        }
    }
}

#if MM_SIMD
/* AVX-512: NV vectors of sixteen lanes; the product fused into the sum (exact product) */
static inline __attribute__((always_inline)) MM_TGT512 void seq_512(int NV, const okern *x, const float *b,
                                                                      int64_t l0, int64_t l1, __m512 *s)
{
    for (int64_t l = l0; l < l1; l++) {
        const __m512 a = _mm512_set1_ps(x->a[l]);
        const float *r = b + l * x->pp;
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) s[v] = _mm512_fmadd_ps(a, _mm512_loadu_ps(r + 16 * v), s[v]);
    }
}

static inline __attribute__((always_inline)) MM_TGT512 void kahan_512(int NV, const okern *x, const float *b,
                                                                        int64_t l0, int64_t l1, __m512 *s)
{
    __m512 e[8];
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) e[v] = _mm512_setzero_ps();
    for (int64_t l = l0; l < l1; l++) {
        const __m512 a = _mm512_set1_ps(x->a[l]);
        const float *r = b + l * x->pp;
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            __m512 y = _mm512_fmsub_ps(a, _mm512_loadu_ps(r + 16 * v), e[v]), t = _mm512_add_ps(s[v], y);
            e[v] = _mm512_sub_ps(_mm512_sub_ps(t, s[v]), y);
            s[v] = t;
        }
    }
}

/* pair_tree's sum of products l0 .. l0 + n - 1 into s[0 .. nv - 1] */
MM_TGT512 static void tree_512(const okern *x, const float *b, int nv, int64_t l0, int64_t n, __m512 *s)
{
    const float *r = b + l0 * x->pp;
    if (n <= 3) {
        const __m512 a0 = _mm512_set1_ps(x->a[l0]);
        for (int v = 0; v < nv; v++) {
            __m512 p0 = _mm512_mul_ps(a0, _mm512_loadu_ps(r + 16 * v));
            if (n == 1) {
                s[v] = p0;
            } else if (n == 2) {
                s[v] = _mm512_fmadd_ps(_mm512_set1_ps(x->a[l0 + 1]), _mm512_loadu_ps(r + x->pp + 16 * v), p0);
            } else { /* p0 + (p1 + p2) */
                __m512 p1 = _mm512_mul_ps(_mm512_set1_ps(x->a[l0 + 1]), _mm512_loadu_ps(r + x->pp + 16 * v));
                __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(x->a[l0 + 2]), _mm512_loadu_ps(r + 2 * x->pp + 16 * v), p1);
                s[v] = _mm512_add_ps(p0, q);
            }
        }
        return;
    }
    {
        __m512 t[8];
        int64_t h = n / 2;
        tree_512(x, b, nv, l0, h, s);
        tree_512(x, b, nv, l0 + h, n - h, t);
        for (int v = 0; v < nv; v++) s[v] = _mm512_add_ps(s[v], t[v]);
    }
}

static inline __attribute__((always_inline)) MM_TGT512 void group_512(int NV, const okern *x, const float *b,
                                                                        const float *c, float *out)
{
    __m512 F[8], s[8];
    int prom = x->prom;
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) F[v] = x->addend ? _mm512_loadu_ps(c + 16 * v) : _mm512_set1_ps(-0.0f);
    for (int64_t l0 = 0; l0 < x->k; l0 += x->chunk) {
        int64_t l1 = x->k - l0 < x->chunk ? x->k : l0 + x->chunk;
        int start = !prom && x->addend; /* the chunk starts from c (else -0) */
        if (x->kind == K_PAIR) {
            tree_512(x, b, NV, l0, l1 - l0, s);
            if (start)
#pragma GCC unroll 8
                for (int v = 0; v < NV; v++) s[v] = _mm512_add_ps(F[v], s[v]);
        } else {
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) s[v] = start ? F[v] : _mm512_set1_ps(-0.0f);
            if (x->kind == K_SEQ) seq_512(NV, x, b, l0, l1, s);
            else kahan_512(NV, x, b, l0, l1, s);
        }
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) F[v] = prom ? _mm512_add_ps(F[v], s[v]) : s[v];
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) _mm512_storeu_ps(out + 16 * v, F[v]);
}

__attribute__((noinline)) MM_TGT512 static void run_512(const okern *x, const float *b, int w, const float *c,
                                                        float *out)
{
    for (int j = 0; j < w; j += 128) { /* up to eight vectors at a time: the Kahan chain's latency hidden */
        switch ((w - j) / 16 > 8 ? 8 : (w - j) / 16) {
        case 1: group_512(1, x, b + j, c + j, out + j); break;
        case 2: group_512(2, x, b + j, c + j, out + j); break;
        case 3: group_512(3, x, b + j, c + j, out + j); break;
        case 4: group_512(4, x, b + j, c + j, out + j); break;
        case 5: group_512(5, x, b + j, c + j, out + j); break;
        case 6: group_512(6, x, b + j, c + j, out + j); break;
        case 7: group_512(7, x, b + j, c + j, out + j); break;
        default: group_512(8, x, b + j, c + j, out + j); break;
        }
    }
}

/* AVX2 (with FMA, as level 1 has): NV vectors of eight lanes; the exact product added by
   one fused multiply-add (one rounding, that of the sum) */
static inline __attribute__((always_inline)) MM_TGT256F __m256 fma_256(const okern *x, const float *b, int64_t l,
                                                                        int v, __m256 s)
{
    return _mm256_fmadd_ps(_mm256_set1_ps(x->a[l]), _mm256_loadu_ps(b + l * x->pp + 8 * v), s);
}

static inline __attribute__((always_inline)) MM_TGT256F __m256 prod_256(const okern *x, const float *b, int64_t l,
                                                                         int v)
{
    return _mm256_mul_ps(_mm256_set1_ps(x->a[l]), _mm256_loadu_ps(b + l * x->pp + 8 * v));
}

/* pair_tree's sum of n <= 8 products from l (h = n / 2 at every split), inline: S1 = p_l,
   S2 = p_l + p_l+1, S3 = p_l + S2(l + 1), S4 = S2 + S2, S5 = S2 + S3, S6 = S3 + S3, S7 = S3 +
   S4, S8 = S4 + S4; a sum with a lone product is one fused multiply-add */
static inline __attribute__((always_inline)) MM_TGT256F __m256 leaf8_256(const okern *x, const float *b, int v,
                                                                          int64_t l, int64_t n)
{
#define S2(i) fma_256(x, b, l + (i), v, prod_256(x, b, l + (i) + 1, v))
#define S3(i) fma_256(x, b, l + (i), v, S2((i) + 1))
#define S4(i) _mm256_add_ps(S2(i), S2((i) + 2))
    switch (n) {
    case 1: return prod_256(x, b, l, v);
    case 2: return S2(0);
    case 3: return S3(0);
    case 4: return S4(0);
    case 5: return _mm256_add_ps(S2(0), S3(2));
    case 6: return _mm256_add_ps(S3(0), S3(3));
    case 7: return _mm256_add_ps(S3(0), S4(3));
    default: return _mm256_add_ps(S4(0), S4(4));
    }
#undef S2
#undef S3
#undef S4
}

MM_TGT256F static void tree_256(const okern *x, const float *b, int nv, int64_t l0, int64_t n, __m256 *s)
{
    if (n <= 16) { /* at most two leaves of eight (n = 1: one product) */
        int64_t h = n / 2;
        for (int v = 0; v < nv; v++)
            s[v] = n <= 8 ? leaf8_256(x, b, v, l0, n)
                          : _mm256_add_ps(leaf8_256(x, b, v, l0, h), leaf8_256(x, b, v, l0 + h, n - h));
        return;
    }
    {
        __m256 t[8];
        int64_t h = n / 2;
        tree_256(x, b, nv, l0, h, s);
        tree_256(x, b, nv, l0 + h, n - h, t);
        for (int v = 0; v < nv; v++) s[v] = _mm256_add_ps(s[v], t[v]);
    }
}

static inline __attribute__((always_inline)) MM_TGT256F void group_256(int NV, const okern *x, const float *b,
                                                                         const float *c, float *out)
{
    __m256 F[8], s[8], e[8];
    int prom = x->prom;
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) F[v] = x->addend ? _mm256_loadu_ps(c + 8 * v) : _mm256_set1_ps(-0.0f);
    for (int64_t l0 = 0; l0 < x->k; l0 += x->chunk) {
        int64_t l1 = x->k - l0 < x->chunk ? x->k : l0 + x->chunk;
        int start = !prom && x->addend;
        if (x->kind == K_PAIR) {
            tree_256(x, b, NV, l0, l1 - l0, s);
            if (start)
#pragma GCC unroll 8
                for (int v = 0; v < NV; v++) s[v] = _mm256_add_ps(F[v], s[v]);
        } else {
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) {
                s[v] = start ? F[v] : _mm256_set1_ps(-0.0f);
                e[v] = _mm256_setzero_ps();
            }
            for (int64_t l = l0; l < l1; l++) {
                if (x->kind == K_SEQ) {
#pragma GCC unroll 8
                    for (int v = 0; v < NV; v++) s[v] = fma_256(x, b, l, v, s[v]);
                } else {
#pragma GCC unroll 8
                    for (int v = 0; v < NV; v++) { /* y = p - e = p + (-e) (the sign flipped): one
                                                      rounding, p exact */
                        __m256 y = fma_256(x, b, l, v, _mm256_xor_ps(e[v], _mm256_set1_ps(-0.0f))),
                               t = _mm256_add_ps(s[v], y);
                        e[v] = _mm256_sub_ps(_mm256_sub_ps(t, s[v]), y);
                        s[v] = t;
                    }
                }
            }
        }
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) F[v] = prom ? _mm256_add_ps(F[v], s[v]) : s[v];
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) _mm256_storeu_ps(out + 8 * v, F[v]);
}

/* up to eight vectors at a time: the Kahan chain's latency hidden */
__attribute__((noinline)) MM_TGT256F static void run_256(const okern *x, const float *b, int w, const float *c,
                                                         float *out)
{
    for (int j = 0; j < w;) {
        int nv = (w - j) / 8 > 8 ? 8 : (w - j) / 8;
        switch (nv) {
        case 1: group_256(1, x, b + j, c + j, out + j); break;
        case 2: group_256(2, x, b + j, c + j, out + j); break;
        case 3: group_256(3, x, b + j, c + j, out + j); break;
        case 4: group_256(4, x, b + j, c + j, out + j); break;
        case 5: group_256(5, x, b + j, c + j, out + j); break;
        case 6: group_256(6, x, b + j, c + j, out + j); break;
        case 7: group_256(7, x, b + j, c + j, out + j); break;
        default: group_256(8, x, b + j, c + j, out + j); break;
        }
        j += 8 * nv;
    }
}
#endif

/* ---- the kernels' floating-point environment: mm_fenv.h ---- */

static void run_group(int level, const okern *x, const float *b, int w, const float *c, float *out)
{
#if MM_SIMD
    if (level >= 2) run_512(x, b, w, c, out);
    else if (level >= 1) run_256(x, b, w, c, out);
    else
#endif
        run_c(x, b, w, c, out);
    (void)level;
}

/* ---- the call ---- */

static int is_binary32(const sfp8_format *f)
{
    const sfp8_format *t = &sfp8_binary32;
    return f->bits == t->bits && f->is_signed == t->is_signed && f->exp_bits == t->exp_bits &&
           f->man_bits == t->man_bits && f->bias == t->bias && f->specials == t->specials &&
           f->subnormals == t->subnormals;
}

static int is_binary64(const sfp8_format *f)
{
    const sfp8_format *t = &sfp8_binary64;
    return f->bits == t->bits && f->is_signed == t->is_signed && f->exp_bits == t->exp_bits &&
           f->man_bits == t->man_bits && f->bias == t->bias && f->specials == t->specials &&
           f->subnormals == t->subnormals;
}

static int rne(const sfp8_env *e) { return e->rounding == SFP8_ROUND_NEAREST_EVEN && e->isa == 0; }

/* the path computes md's outputs (those whose operands qualify) */
static int covers(const sfp8u_model *md, int64_t k)
{
#if FLT_EVAL_METHOD != 0
    return 0;
#endif
    return (md->order == SFP8U_SEQUENTIAL || md->order == SFP8U_PAIRWISE || md->order == SFP8U_KAHAN) && k >= 1 &&
           !md->has_prod && is_binary32(&md->facc) && rne(&md->envacc) &&
           (!md->promote || (is_binary32(&md->fprom) && rne(&md->envprom)));
}

/* how outputs are delivered: the binary32 result itself, widened, the fast rounder, the core */
enum { OUT_F32, OUT_F64, OUT_RND, OUT_CORE };

typedef struct {
    const sfp8u_model *md;
    int kind, so;
    sfp8f_rnd rnd;
    uint64_t zc[2];   /* the codes of +0 and -0 in fo, and their flags */
    uint8_t zfl[2];
} oout;

/* the binary32 number x into fo by the core (an exact value, one rounding) */
static uint64_t f32_round_core(const oout *o, float x, uint8_t *fl)
{
    int e;
    double m = frexp((double)fabsf(x), &e); /* |x| = m 2^e, 0.5 <= m < 1 */
    uint64_t sig = (uint64_t)ldexp(m, 53);
    return sfp8_round_value(&o->md->fo, signbit(x) != 0, sig, (int64_t)e - 53, 0, &o->md->envo, fl);
}

static unsigned deliver(const oout *o, const float *r, const uint8_t *live, int n, char *O, ptrdiff_t op)
{
    unsigned fl = 0;
    uint8_t f8 = 0;
    double d[G];
    uint32_t code[G];
    int idx[G], nd = 0;
    for (int q = 0; q < n; q++) {
        char *dst = O + q * op;
        if (!live[q]) continue;
        switch (o->kind) {
        case OUT_F32: memcpy(dst, &r[q], 4); break;
        case OUT_F64: {
            double v = r[q];
            memcpy(dst, &v, 8);
            break;
        }
        default:
            if (r[q] == 0.0f) {
                int neg = signbit(r[q]) != 0;
                store_raw(dst, o->so, o->zc[neg]);
                fl |= o->zfl[neg];
            } else if (o->kind == OUT_RND) {
                d[nd] = r[q];
                idx[nd++] = q;
            } else {
                store_raw(dst, o->so, f32_round_core(o, r[q], &f8));
            }
        }
    }
    if (nd) {
        fl |= sfp8f_round_doubles(&o->rnd, d, nd, code);
        for (int t = 0; t < nd; t++) store_raw(O + idx[t] * op, o->so, code[t]);
    }
    return fl | f8;
}

static int code_size(const sfp8_format *f) { return f->bits <= 8 ? 1 : f->bits <= 16 ? 2 : f->bits <= 32 ? 4 : 8; }

/* the addend of an output as a binary32 number: 1 (and *v, *fl |= denormal) if it is a finite one */
static int addend_f32(const sfp8u_model *md, uint64_t code, float *v, uint8_t *fl)
{
    ocode d;
    if (is_binary32(&md->fo)) {
        uint32_t u = (uint32_t)code;
        memcpy(v, &u, 4);
        if ((u & 0x7F800000u) == 0x7F800000u) return 0;
        if ((u & 0x7F800000u) == 0 && (u & 0x7FFFFFu)) *fl |= SFP8_FLAG_DENORMAL;
        return 1;
    }
    decode1(&md->fo, code, &d);
    if (d.bad || d.lo < -149 || d.hi > 127 || d.wide > 24) return 0;
    if (d.sub) *fl |= SFP8_FLAG_DENORMAL;
    *v = d.f;
    return 1;
}

unsigned sfp8m_orders_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                           ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O,
                           ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k, int64_t p)
{
    int sa = code_size(&md->fa), sb = code_size(&md->fb), so = code_size(&md->fo), used = 0;
    int level = sfp8f_simd_level();
    ptrdiff_t pp = (p + 15) / 16 * 16;
    odecoder da = {0}, db = {0};
    float *bf = NULL, *af = NULL, *priv = NULL;
    oline *col = NULL;
    okern x;
    oout o;
    mm_fxsave env;
    unsigned flags = 0;
    if (m <= 0 || p <= 0) return 0;
    if (!md->has_addend) C = NULL;
    if (!covers(md, k)) return sfp8u_gemm(md, A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p);
    memset(&o, 0, sizeof o);
    o.md = md;
    o.so = so;
    o.kind = is_binary32(&md->fo) ? OUT_F32 : is_binary64(&md->fo) ? OUT_F64
             : sfp8f_rounder(&md->fo, &md->envo, &o.rnd) ? OUT_RND : OUT_CORE;
    for (int neg = 0; neg < 2; neg++) o.zc[neg] = sfp8_round_value(&md->fo, neg, 0, 0, 0, &md->envo, &o.zfl[neg]);
    bf = malloc((size_t)(k * pp + G) * sizeof(float));
    af = malloc((size_t)k * sizeof(float));
    col = malloc((size_t)pp * sizeof(oline));
    if (!bf || !af || !col || !decoder_init(&da, &md->fa, m * k) || !decoder_init(&db, &md->fb, k * p)) {
        free(bf);
        free(af);
        free(col);
        decoder_free(&da);
        decoder_free(&db);
        return SFP8U_NOMEM;
    }
    for (int64_t j = 0; j < pp; j++) { /* B decoded once, row-major; padding and unfit columns zeros */
        line_init(&col[j]);
        if (j < p)
            for (int64_t l = 0; l < k; l++) {
                ocode tmp;
                const ocode *d;
                get(&db, load_raw(B + l * bk + j * bp, sb), &tmp, &d);
                bf[l * pp + j] = d->f;
                line_add(&col[j], d);
            }
        if (j >= p || !line_ok(&col[j]))
            for (int64_t l = 0; l < k; l++) bf[l * pp + j] = 0.0f;
    }
    x.kind = md->order == SFP8U_SEQUENTIAL ? K_SEQ : md->order == SFP8U_KAHAN ? K_KAHAN : K_PAIR;
    x.addend = C != NULL;
    x.k = k;
    x.prom = md->promote != 0;
    x.chunk = md->promote ? md->promote : k;
    x.a = af;
    x.pp = pp;
    mm_fx_enter(&env);
    mm_fx_clear(SFP8_ROUND_NEAREST_EVEN);
    for (int64_t i = 0; i < m; i++) {
        oline row;
        line_init(&row);
        for (int64_t l = 0; l < k; l++) {
            ocode tmp;
            const ocode *d;
            get(&da, load_raw(A + i * am + l * ak, sa), &tmp, &d);
            af[l] = d->f;
            line_add(&row, d);
        }
        if (!line_ok(&row)) { /* the generic kernel, for this row */
            flags |= sfp8u_gemm(md, A + i * am, am, ak, B, bk, bp, C ? C + i * cm : NULL, cm, cp, O + i * om, om,
                                op, 1, k, p);
            continue;
        }
        for (int64_t j0 = 0; j0 < p; j0 += G) {
            int n = p - j0 < G ? (int)(p - j0) : G, w = (n + 15) / 16 * 16, dirty = 0;
            float cv[G], out[G];
            uint8_t live[G], fl[G];
            const float *b = bf + j0;
            ptrdiff_t bstride = pp;
            unsigned hw;
            for (int q = 0; q < w; q++) {
                int64_t j = j0 + q;
                cv[q] = 0.0f;
                fl[q] = 0;
                live[q] = 0;
                if (q >= n || !line_ok(&col[j])) continue;
                live[q] = pair_ok(&row, &col[j]) &&
                          (!C || addend_f32(md, load_raw(C + i * cm + j * cp, so), &cv[q], &fl[q]));
                if (!live[q]) {
                    cv[q] = 0.0f;
                    dirty = 1; /* its column holds values: zeroed in a private copy */
                }
            }
            if (dirty) {
                if (!priv && !(priv = malloc((size_t)k * G * sizeof(float)))) {
                    mm_fx_leave(&env);
                    flags |= SFP8U_NOMEM;
                    break;
                }
                for (int64_t l = 0; l < k; l++)
                    for (int q = 0; q < w; q++) priv[l * G + q] = live[q] ? bf[l * pp + j0 + q] : 0.0f;
                b = priv;
                bstride = G;
            }
            x.pp = bstride;
            mm_fx_clear(SFP8_ROUND_NEAREST_EVEN);
            run_group(level, &x, b, w, cv, out);
            hw = mm_fx_read();
            x.pp = pp;
            if (hw & MM_FX_BAD) memset(live, 0, sizeof live); /* overflow or invalid: the generic kernel */
            for (int q = 0; q < n; q++) {
                int64_t j = j0 + q;
                if (live[q]) {
                    flags |= fl[q] | (row.sub || col[j].sub ? SFP8_FLAG_DENORMAL : 0) |
                             (hw & MM_FX_INEXACT ? SFP8_FLAG_INEXACT : 0);
                    used = 1;
                } else {
                    flags |= sfp8u_gemm(md, A + i * am, am, ak, B + j * bp, bk, bp, C ? C + i * cm + j * cp : NULL,
                                        cm, cp, O + i * om + j * op, om, op, 1, k, 1);
                }
            }
            flags |= deliver(&o, out, live, n, O + i * om + j0 * op, op);
        }
        if (flags & SFP8U_NOMEM) break;
    }
    if (!(flags & SFP8U_NOMEM)) mm_fx_leave(&env);
    if (used) mm_count(SFP8M_ORDERS, level);
    free(bf);
    free(af);
    free(col);
    free(priv);
    decoder_free(&da);
    decoder_free(&db);
    return flags;
}
