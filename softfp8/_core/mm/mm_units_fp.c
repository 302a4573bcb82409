/*
 * The block_fma path's kernels on the hardware's binary64 / binary32 arithmetic
 * (mm_units.c's sfp8m_unit_gemm calls them where sfp8mu_fp_mode accepts the model): exact
 * alignment (the MI100 profile) and the pairwise grouping (MI250).  The generic kernel,
 * and the definition, is bfma.c's; outputs these kernels leave are computed by it.
 *
 * DERIVED from core.c round_pack: xfinish / xstep_512 / xchunk_256 / xstep_256 round an exact
 * binary64 block sum to P bits by the model's rounding (bias below the kept bits, the rest
 * cleared) where the result is a normal number of the output format (xstep_256: where xsafe
 * proves every result is), and leave every other case to the generic kernel; proof:
 * tests/harness/test_harness.py::test_entry (entry block_fma, parts exact_pair,
 * exact_pair_edges and exact_pair_avx2 among them).
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "mm.h"
#include "mm_fenv.h"
#include "mm_paths.h"
#include "mm_simd.h"
#include "mm_udecode.h"
#include "mm_units_fp.h"
#include "mm_units_late.h"
#include "mm_value.h"

#if MM_SIMD
#include <immintrin.h>
#endif

/* ---- exact alignment (MI100) and the pairwise grouping (MI250): hardware arithmetic ----
 *
 * Exact alignment (extra_bits None, global grouping; sfp8mu_fp_mode FP_EXACT): a block's result is
 * its exact sum (the products and the running value) rounded once to P significant bits.
 * Every operand is a binary64 number and every product exact in binary64 (sfp8mu_fp_mode's rule
 * on the operand formats), so the kernels sum a block in binary64 (products fused or not),
 * and the sum is the exact one when no step was inexact: the portable kernel proves that
 * per lane and block by TwoSum (the error of every addition zero, at nearest even); the
 * SIMD kernels read the status flags after each chunk of XCHUNK products and recompute a
 * chunk that raised any flag with the portable kernel.  The exact sum s is then rounded to
 * P bits by integer operations on its binary64 encoding, the model's rounding mode (bias
 * added below the kept bits, the rest cleared: a carry into the exponent is the next
 * binade); a zero sum gives +0 (the model's T = 0); a result that is not a normal number of
 * the output format leaves the lane to the generic kernel, which also covers the subnormal
 * grid (a P-bit result at or above 2^emin is the model's too: its grid is coarser only
 * below 2^emin).  A lane whose block sum is not exact in binary64 (the TwoSum test) goes
 * to the generic kernel as well.  At SIMD level 1 (AVX2 with FMA) a group of outputs whose
 * every live lane is in range by its bounds (xsafe) runs with no range check (xchunk_256r),
 * the others with one per step (xchunk_256).
 *
 * Pairwise grouping (sfp8mu_fp_mode FP_PAIR, binary32 output): each product is exact in binary32
 * and at least 2^-126 (checked per lane from the row's and column's binades and
 * significand widths), so its rounding into binary32 is itself; the tree additions and the
 * addend's addition are IEEE binary32 additions in the model's rounding (MXCSR's rounding
 * control; no FTZ / DAZ), whose sums of binary32 numbers are tiny only when exact: with
 * output_subnormals off a lane with a non-zero sum below 2^-126 (the model flushes it)
 * goes to the generic kernel, and a zero product is made +0.  Inexact (the precision flag)
 * is read for the group; overflow or invalid send the whole group to the generic kernel.
 * Tiny sums are found by MXCSR's denormal flag (AVX-512; AVX2 with FMA in blocks of four,
 * pair4_256) or per sum (the other kernels).  Lanes that must not run are zeroed in a private copy of the group's columns (no flag).
 */

enum { FP_EXACT = 1, FP_PAIR = 2, FP_LATE = 3 };
#define GW 32       /* outputs of a row computed together by these kernels */
#define XCHUNK 512  /* products per reading of the status flags (exact alignment; whole blocks) */
#define PAIR_MAX 64 /* the largest block of the pairwise kernels */
#define FP_ROWS 32  /* rows of A decoded together, each group of columns run through them */

static int is_ieee(const sfp8_format *f, int bits, int eb, int mb)
{
    return f->bits == bits && f->is_signed && f->exp_bits == eb && f->man_bits == mb &&
           f->bias == (1 << (eb - 1)) - 1 && f->specials == SFP8_SPECIALS_IEEE && f->subnormals == SFP8_SUBNORMALS_IEEE;
}

int sfp8mu_fp_mode(const sfp8u_model *md, int64_t k)
{
    int r = md->envo.rounding;
    int directed = r == SFP8_ROUND_TOWARD_ZERO || r == SFP8_ROUND_NEAREST_EVEN || r == SFP8_ROUND_UPWARD ||
                   r == SFP8_ROUND_DOWNWARD;
#if FLT_EVAL_METHOD != 0
    return 0;
#endif
    if (sfp8mu_late_ok(md, k)) return FP_LATE; /* the two-term alignments (mm_units_late.c) */
    if (md->order != SFP8U_BLOCK || md->promote || k < 1 || md->envo.tininess_before) return 0;
    if (md->grouping == SFP8U_GLOBAL && md->exact_align)
        return (is_ieee(&md->fo, 32, 8, 23) || is_ieee(&md->fo, 16, 5, 10)) &&
                       (directed || r == SFP8_ROUND_NEAREST_AWAY) && md->block <= 4096 &&
                       md->fa.man_bits + md->fb.man_bits + 2 <= 53 && fmt_low(&md->fa) + fmt_low(&md->fb) >= -1000 &&
                       fmt_top(&md->fa) + fmt_top(&md->fb) <= 1000
                   ? FP_EXACT
                   : 0;
    if (md->grouping == SFP8U_PAIRWISE_TREE)
        return is_ieee(&md->fo, 32, 8, 23) && directed && md->block <= PAIR_MAX ? FP_PAIR : 0;
    return 0;
}

/* a kernel's view of one row: A's row (binary64 or binary32 values), B's columns from b
 * with row stride pp, GW lanes */
typedef struct {
    int rounding, flushz; /* flushz: output_subnormals off (zero products +0, tiny sums leave) */
    int track;            /* FP_EXACT: lanes' inexact wanted (the call has not raised inexact yet) */
    int sh;               /* FP_EXACT: 53 - P, the binary64 bits rounded off */
    int64_t k, n;         /* products, block */
    int64_t elo, ehi;     /* FP_EXACT: the biased binary64 exponents of normal results */
    int inrange;          /* FP_EXACT, level 1: every live lane in range by its bounds (xsafe) */
    const void *a;
    ptrdiff_t pp;
} fpk;

/* the bias added to the encoding u before the low sh bits are cleared: the model's rounding */
static inline uint64_t xbias(const fpk *x, uint64_t u)
{
    uint64_t mask = ((uint64_t)1 << x->sh) - 1, neg = (uint64_t)((int64_t)u >> 63);
    switch (x->rounding) {
    case SFP8_ROUND_NEAREST_EVEN: return (mask >> 1) + (u >> x->sh & 1);
    case SFP8_ROUND_NEAREST_AWAY: return (mask >> 1) + 1;
    case SFP8_ROUND_UPWARD: return mask & ~neg;
    case SFP8_ROUND_DOWNWARD: return mask & neg;
    default: return 0;
    }
}

/* the block's exact sum s into the running value *c (+0 for zero, else rounded to P bits);
 * 0 if the result is not a normal number of the output format */
static inline int xfinish(const fpk *x, double s, double *c, uint8_t *inex)
{
    uint64_t u = sfp8f_dbits(s), mask = ((uint64_t)1 << x->sh) - 1, r;
    int64_t e;
    if (!(u << 1)) {
        *c = 0.0;
        return 1;
    }
    r = (u + xbias(x, u)) & ~mask;
    e = (int64_t)(r >> 52 & 0x7ff);
    if (e < x->elo || e > x->ehi) return 0;
    *inex |= (u & mask) != 0;
    memcpy(c, &r, 8);
    return 1;
}

/* the portable exact-alignment kernel: blocks of products l0 .. l1 - 1 (l0 at a block's
 * start) of every live lane */
static void xchunk_c(const fpk *x, const double *b, int64_t l0, int64_t l1, double *c, uint8_t *alive,
                     uint8_t *inex)
{
    const double *a = (const double *)x->a;
    for (int q = 0; q < GW; q++) {
        if (!alive[q]) continue;
        for (int64_t lb = l0; lb < l1; lb += x->n) {
            int64_t le = lb + x->n < l1 ? lb + x->n : l1;
            double s = c[q];
            int exact = 1;
            for (int64_t l = lb; l < le; l++) { /* TwoSum: the error of s + p */
                double p = a[l] * b[l * x->pp + q], t = s + p, bb = t - s;
                exact &= (s - (t - bb)) + (p - bb) == 0.0;
                s = t;
            }
            if (!exact || !xfinish(x, s, &c[q], &inex[q])) {
                alive[q] = 0;
                c[q] = 0.0;
                break;
            }
        }
    }
}

/* the portable pairwise kernel */
static inline int ftiny(float s)
{
    uint32_t u;
    memcpy(&u, &s, 4);
    return (uint32_t)((u & 0x7FFFFFFFu) - 1) < 0x7FFFFFu;
}

static float ptree_c(const fpk *x, const float *b, int64_t l0, int64_t n, int q, int *tiny)
{
    const float *a = (const float *)x->a;
    float s;
    if (n == 1) {
        if (l0 >= x->k) return 0.0f; /* padding: 0 * 0 */
        s = a[l0] * b[l0 * x->pp + q];
        return x->flushz && s == 0.0f ? 0.0f : s;
    }
    s = ptree_c(x, b, l0, n / 2, q, tiny) + ptree_c(x, b, l0 + n / 2, n - n / 2, q, tiny);
    *tiny |= ftiny(s);
    return s;
}

static void pair_c(const fpk *x, const float *b, float *c, uint8_t *alive)
{
    for (int q = 0; q < GW; q++) {
        int tiny = 0;
        if (!alive[q]) continue;
        for (int64_t l0 = 0; l0 < x->k; l0 += x->n) {
            c[q] = c[q] + ptree_c(x, b, l0, x->n, q, &tiny);
            tiny |= ftiny(c[q]);
        }
        if (tiny && x->flushz) alive[q] = 0;
    }
}

#if MM_SIMD

/* exact alignment, AVX-512: four vectors of eight lanes; products fused (each step's
 * inexactness is in the status flags).  xrun_512 is instantiated for blocks of 2 and 4
 * (N; 0: any block) and for nearest even (R; -1: the rounding read at run time). */
typedef struct {
    __m512i mask, half1, one, absm, vsh;
} xconst512;

/* the sum of the products lb .. lb + nb - 1 of eight lanes (column r); N: nb itself */
static inline __attribute__((always_inline)) MM_TGT512 __m512d xsum_512(int N, const double *a, const double *r,
                                                                       ptrdiff_t pp, int64_t lb, int64_t nb)
{
    __m512d s;
    if (N == 2)
        return _mm512_fmadd_pd(_mm512_set1_pd(a[lb + 1]), _mm512_loadu_pd(r + (lb + 1) * pp),
                               _mm512_mul_pd(_mm512_set1_pd(a[lb]), _mm512_loadu_pd(r + lb * pp)));
    if (N == 4)
        return _mm512_add_pd(xsum_512(2, a, r, pp, lb, 2), xsum_512(2, a, r, pp, lb + 2, 2));
    s = _mm512_mul_pd(_mm512_set1_pd(a[lb]), _mm512_loadu_pd(r + lb * pp));
    for (int64_t l = lb + 1; l < lb + nb; l++) s = _mm512_fmadd_pd(_mm512_set1_pd(a[l]), _mm512_loadu_pd(r + l * pp), s);
    return s;
}

/* c + s (exact) rounded to P bits into c (a zero stays +0: c is never -0, the sums are at
 * nearest even); mx, mn: the largest magnitude and the least non-zero magnitude minus one
 * of the results (as integers), the lanes' range checked once per chunk */
static inline __attribute__((always_inline)) MM_TGT512 void xstep_512(int R, int T, int rounding,
                                                                     const xconst512 *K, __m512d s, __m512d *c,
                                                                     __m512i *mx, __m512i *mn, __mmask8 *in)
{
    __m512i u = _mm512_castpd_si512(_mm512_add_pd(*c, s)), bias, rr, a;
    switch (R >= 0 ? R : rounding) {
    case SFP8_ROUND_NEAREST_EVEN:
        bias = _mm512_add_epi64(K->half1, _mm512_and_si512(_mm512_srlv_epi64(u, K->vsh), K->one));
        break;
    case SFP8_ROUND_NEAREST_AWAY: bias = _mm512_add_epi64(K->half1, K->one); break;
    case SFP8_ROUND_UPWARD: bias = _mm512_andnot_si512(_mm512_srai_epi64(u, 63), K->mask); break;
    case SFP8_ROUND_DOWNWARD: bias = _mm512_and_si512(_mm512_srai_epi64(u, 63), K->mask); break;
    default: bias = _mm512_setzero_si512(); break;
    }
    rr = _mm512_andnot_si512(K->mask, _mm512_add_epi64(u, bias));
    a = _mm512_and_si512(rr, K->absm);
    *mx = _mm512_max_epu64(*mx, a);
    *mn = _mm512_min_epu64(*mn, _mm512_sub_epi64(a, K->one));
    if (T) *in = (__mmask8)(*in | _mm512_test_epi64_mask(u, K->mask)); /* T 0: inexact already raised */
    *c = _mm512_castsi512_pd(rr);
}

/* the four vectors of the group (GW = 32) through the blocks of l0 .. l1, the state in registers */
#define XSTEP4(NN, NB)                                                                                             \
    do {                                                                                                           \
        xstep_512(R, T, x->rounding, K, xsum_512(NN, a, b, x->pp, lb, NB), &c0, &mx0, &mn0, &in0);                   \
        xstep_512(R, T, x->rounding, K, xsum_512(NN, a, b + 8, x->pp, lb, NB), &c1, &mx1, &mn1, &in1);               \
        xstep_512(R, T, x->rounding, K, xsum_512(NN, a, b + 16, x->pp, lb, NB), &c2, &mx2, &mn2, &in2);              \
        xstep_512(R, T, x->rounding, K, xsum_512(NN, a, b + 24, x->pp, lb, NB), &c3, &mx3, &mn3, &in3);              \
    } while (0)

static inline __attribute__((always_inline)) MM_TGT512 void xrun_512(int N, int R, int T, const fpk *x,
                                                                    const xconst512 *K,
                                                                    const double *b, int64_t l0, int64_t l1,
                                                                    __m512d *c, __m512i *mx, __m512i *mn,
                                                                    __mmask8 *in)
{
    const double *a = (const double *)x->a;
    __m512d c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    __m512i mx0 = mx[0], mx1 = mx[1], mx2 = mx[2], mx3 = mx[3], mn0 = mn[0], mn1 = mn[1], mn2 = mn[2], mn3 = mn[3];
    __mmask8 in0 = in[0], in1 = in[1], in2 = in[2], in3 = in[3];
    for (int64_t lb = l0; lb < l1; lb += x->n) {
        int64_t nb = l1 - lb < x->n ? l1 - lb : x->n;
        if (N && nb == N) XSTEP4(N, N);
        else XSTEP4(0, nb);
    }
    c[0] = c0, c[1] = c1, c[2] = c2, c[3] = c3;
    mx[0] = mx0, mx[1] = mx1, mx[2] = mx2, mx[3] = mx3;
    mn[0] = mn0, mn[1] = mn1, mn[2] = mn2, mn[3] = mn3;
    in[0] = in0, in[1] = in1, in[2] = in2, in[3] = in3;
}
#undef XSTEP4

__attribute__((noinline)) MM_TGT512 static void xchunk_512(const fpk *x, const double *b, int64_t l0, int64_t l1,
                                                           double *cv, uint8_t *alive, uint8_t *inex)
{
    xconst512 K;
    __m512d c[GW / 8];
    __m512i mx[GW / 8], mn[GW / 8];
    __mmask8 in[GW / 8];
    int rne = x->rounding == SFP8_ROUND_NEAREST_EVEN;
    /* normal results: magnitudes (binary64 encodings) from elo << 52 to below (ehi + 1) << 52 */
    const __m512i lo1 = _mm512_set1_epi64((int64_t)(((uint64_t)x->elo << 52) - 1));
    const __m512i hi1 = _mm512_set1_epi64((int64_t)(((uint64_t)(x->ehi + 1) << 52) - 1));
    K.mask = _mm512_set1_epi64((int64_t)(((uint64_t)1 << x->sh) - 1));
    K.half1 = _mm512_srli_epi64(K.mask, 1);
    K.one = _mm512_set1_epi64(1);
    K.absm = _mm512_set1_epi64(INT64_MAX);
    K.vsh = _mm512_set1_epi64(x->sh);
    for (int v = 0; v < GW / 8; v++) {
        c[v] = _mm512_loadu_pd(cv + 8 * v);
        mx[v] = _mm512_setzero_si512();
        mn[v] = _mm512_set1_epi64(-1);
        in[v] = 0;
    }
    if (x->n == 4 && rne && !x->track) xrun_512(4, SFP8_ROUND_NEAREST_EVEN, 0, x, &K, b, l0, l1, c, mx, mn, in);
    else if (x->n == 4 && rne) xrun_512(4, SFP8_ROUND_NEAREST_EVEN, 1, x, &K, b, l0, l1, c, mx, mn, in);
    else if (x->n == 2 && rne && !x->track) xrun_512(2, SFP8_ROUND_NEAREST_EVEN, 0, x, &K, b, l0, l1, c, mx, mn, in);
    else if (x->n == 2 && rne) xrun_512(2, SFP8_ROUND_NEAREST_EVEN, 1, x, &K, b, l0, l1, c, mx, mn, in);
    else if (x->n == 4) xrun_512(4, -1, 1, x, &K, b, l0, l1, c, mx, mn, in);
    else if (x->n == 2) xrun_512(2, -1, 1, x, &K, b, l0, l1, c, mx, mn, in);
    else xrun_512(0, -1, 1, x, &K, b, l0, l1, c, mx, mn, in);
    for (int v = 0; v < GW / 8; v++) {
        __mmask8 bad = _mm512_cmpgt_epu64_mask(mx[v], hi1) | _mm512_cmplt_epu64_mask(mn[v], lo1);
        _mm512_storeu_pd(cv + 8 * v, c[v]);
        for (int t = 0; t < 8; t++) {
            alive[8 * v + t] &= (uint8_t)!(bad >> t & 1);
            inex[8 * v + t] |= in[v] >> t & 1;
        }
    }
}

/* the same in AVX2: eight vectors of four lanes, product then sum */
__attribute__((noinline)) MM_TGT256 static void xchunk_256(const fpk *x, const double *b, int64_t l0, int64_t l1,
                                                           double *cv, uint8_t *alive, uint8_t *inex)
{
    const double *a = (const double *)x->a;
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi64x(1);
    const __m256i mask = _mm256_set1_epi64x((int64_t)(((uint64_t)1 << x->sh) - 1));
    const __m256i absm = _mm256_set1_epi64x(INT64_MAX), e11 = _mm256_set1_epi64x(0x7ff);
    const __m256i elo1 = _mm256_set1_epi64x(x->elo - 1), ehi1 = _mm256_set1_epi64x(x->ehi + 1);
    const __m256i vsh = _mm256_set1_epi64x(x->sh), half1 = _mm256_srli_epi64(mask, 1);
    __m256d c[GW / 4];
    __m256i al[GW / 4], in[GW / 4];
    for (int v = 0; v < GW / 4; v++) {
        c[v] = _mm256_loadu_pd(cv + 4 * v);
        al[v] = _mm256_set_epi64x(alive[4 * v + 3] ? -1 : 0, alive[4 * v + 2] ? -1 : 0, alive[4 * v + 1] ? -1 : 0,
                                  alive[4 * v] ? -1 : 0);
        in[v] = zero;
    }
    for (int64_t lb = l0; lb < l1; lb += x->n) {
        int64_t le = lb + x->n < l1 ? lb + x->n : l1;
        for (int v = 0; v < GW / 4; v++) {
            const double *r = b + 4 * v;
            __m256d s = _mm256_mul_pd(_mm256_set1_pd(a[lb]), _mm256_loadu_pd(r + lb * x->pp));
            __m256i u, bias, rr, e, neg, z, ok;
            for (int64_t l = lb + 1; l < le; l++)
                s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_set1_pd(a[l]), _mm256_loadu_pd(r + l * x->pp)));
            s = _mm256_add_pd(c[v], s);
            u = _mm256_castpd_si256(s);
            neg = _mm256_cmpgt_epi64(zero, u);
            switch (x->rounding) {
            case SFP8_ROUND_NEAREST_EVEN: bias = _mm256_add_epi64(half1, _mm256_and_si256(_mm256_srlv_epi64(u, vsh), one)); break;
            case SFP8_ROUND_NEAREST_AWAY: bias = _mm256_add_epi64(half1, one); break;
            case SFP8_ROUND_UPWARD: bias = _mm256_andnot_si256(neg, mask); break;
            case SFP8_ROUND_DOWNWARD: bias = _mm256_and_si256(neg, mask); break;
            default: bias = zero; break;
            }
            rr = _mm256_andnot_si256(mask, _mm256_add_epi64(u, bias));
            e = _mm256_and_si256(_mm256_srli_epi64(rr, 52), e11);
            z = _mm256_cmpeq_epi64(_mm256_and_si256(u, absm), zero);
            ok = _mm256_or_si256(z, _mm256_and_si256(_mm256_cmpgt_epi64(e, elo1), _mm256_cmpgt_epi64(ehi1, e)));
            al[v] = _mm256_and_si256(al[v], ok);
            in[v] = _mm256_or_si256(in[v], _mm256_andnot_si256(_mm256_cmpeq_epi64(_mm256_and_si256(u, mask), zero),
                                                               al[v]));
            c[v] = _mm256_castsi256_pd(_mm256_andnot_si256(z, _mm256_and_si256(al[v], rr)));
        }
    }
    for (int v = 0; v < GW / 4; v++) {
        int64_t av[4], iv[4];
        _mm256_storeu_pd(cv + 4 * v, c[v]);
        _mm256_storeu_si256((__m256i *)av, al[v]);
        _mm256_storeu_si256((__m256i *)iv, in[v]);
        for (int t = 0; t < 4; t++) {
            alive[4 * v + t] = av[t] != 0;
            inex[4 * v + t] |= iv[t] != 0;
        }
    }
}

/* pairwise, AVX-512: two vectors of sixteen lanes.  With output_subnormals off a tiny sum
 * is an operand of a later addition -- the denormal flag, read by run_pair, sends the group
 * to the portable kernel -- or the last running value, checked here. */
MM_TGT512 static __m512 ptree_512(const __m512 *P, int64_t n)
{
    if (n == 1) return P[0];
    return _mm512_add_ps(ptree_512(P, n / 2), ptree_512(P + n / 2, n - n / 2));
}

/* fl(p_l + p_(l+1)): the second product fused (exact); fix: zero products +0 (adding +0:
 * not in the downward rounding) */
static inline __attribute__((always_inline)) MM_TGT512 __m512 pleaf2_512(int fix, const float *a, const float *r,
                                                                        ptrdiff_t pp, int64_t l)
{
    __m512 p0 = _mm512_mul_ps(_mm512_set1_ps(a[l]), _mm512_loadu_ps(r + l * pp));
    if (fix) p0 = _mm512_add_ps(p0, _mm512_setzero_ps());
    return _mm512_fmadd_ps(_mm512_set1_ps(a[l + 1]), _mm512_loadu_ps(r + (l + 1) * pp), p0);
}

static inline __attribute__((always_inline)) MM_TGT512 void prun_512(int N, int fix, const fpk *x, const float *b,
                                                                    __m512 *c)
{
    const float *a = (const float *)x->a;
    __m512 P[PAIR_MAX];
    for (int64_t l0 = 0; l0 < x->k; l0 += x->n) {
        if (N == 4 && l0 + 4 <= x->k) {
#pragma GCC unroll 2
            for (int v = 0; v < GW / 16; v++)
                c[v] = _mm512_add_ps(c[v], _mm512_add_ps(pleaf2_512(fix, a, b + 16 * v, x->pp, l0),
                                                         pleaf2_512(fix, a, b + 16 * v, x->pp, l0 + 2)));
            continue;
        }
        for (int v = 0; v < GW / 16; v++) {
            const float *r = b + 16 * v;
            for (int64_t i = 0; i < x->n; i++) {
                int64_t l = l0 + i;
                __m512 p = l < x->k ? _mm512_mul_ps(_mm512_set1_ps(a[l]), _mm512_loadu_ps(r + l * x->pp))
                                    : _mm512_setzero_ps();
                if (x->flushz) p = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(p, _mm512_setzero_ps(), _CMP_NEQ_UQ), p);
                P[i] = p;
            }
            c[v] = _mm512_add_ps(c[v], ptree_512(P, x->n));
        }
    }
}

__attribute__((noinline)) MM_TGT512 static void pair_512(const fpk *x, const float *b, float *cv, uint8_t *alive)
{
    __m512 c[GW / 16];
    for (int v = 0; v < GW / 16; v++) c[v] = _mm512_loadu_ps(cv + 16 * v);
    if (x->n == 4 && !x->flushz) prun_512(4, 0, x, b, c);
    else if (x->n == 4 && x->rounding != SFP8_ROUND_DOWNWARD) prun_512(4, 1, x, b, c);
    else prun_512(0, 0, x, b, c);
    for (int v = 0; v < GW / 16; v++) {
        __mmask16 tiny = _mm512_fpclass_ps_mask(c[v], 0x20); /* subnormal */
        _mm512_storeu_ps(cv + 16 * v, c[v]);
        if (x->flushz)
            for (int t = 0; t < 16; t++)
                if (tiny >> t & 1) alive[16 * v + t] = 0;
    }
}

/* pairwise, AVX2: four vectors of eight lanes */
static inline __attribute__((always_inline)) MM_TGT256 __m256i tmin_256(__m256i t, __m256 s)
{
    return _mm256_min_epu32(t, _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(s), _mm256_set1_epi32(INT32_MAX)),
                                                _mm256_set1_epi32(1)));
}

MM_TGT256 static __m256 ptree_256(const __m256 *P, int64_t n, __m256i *tmin)
{
    __m256 s;
    if (n == 1) return P[0];
    s = _mm256_add_ps(ptree_256(P, n / 2, tmin), ptree_256(P + n / 2, n - n / 2, tmin));
    *tmin = tmin_256(*tmin, s);
    return s;
}

__attribute__((noinline)) MM_TGT256 static void pair_256(const fpk *x, const float *b, float *cv, uint8_t *alive)
{
    const float *a = (const float *)x->a;
    __m256 c[GW / 8], P[PAIR_MAX];
    __m256i tmin[GW / 8];
    for (int v = 0; v < GW / 8; v++) {
        c[v] = _mm256_loadu_ps(cv + 8 * v);
        tmin[v] = _mm256_set1_epi32(-1);
    }
    for (int64_t l0 = 0; l0 < x->k; l0 += x->n) {
        for (int v = 0; v < GW / 8; v++) {
            const float *r = b + 8 * v;
            for (int64_t i = 0; i < x->n; i++) {
                int64_t l = l0 + i;
                __m256 p = l < x->k ? _mm256_mul_ps(_mm256_set1_ps(a[l]), _mm256_loadu_ps(r + l * x->pp))
                                    : _mm256_setzero_ps();
                if (x->flushz) p = _mm256_andnot_ps(_mm256_cmp_ps(p, _mm256_setzero_ps(), _CMP_EQ_OQ), p);
                P[i] = p;
            }
            c[v] = _mm256_add_ps(c[v], ptree_256(P, x->n, &tmin[v]));
            tmin[v] = tmin_256(tmin[v], c[v]);
        }
    }
    for (int v = 0; v < GW / 8; v++) {
        int32_t t8[8];
        /* unsigned tmin < 0x7FFFFF: min(tmin, 0x7FFFFF) != 0x7FFFFF */
        __m256i lim = _mm256_set1_epi32(0x7FFFFF);
        _mm256_storeu_si256((__m256i *)t8, _mm256_cmpeq_epi32(_mm256_min_epu32(tmin[v], lim), lim));
        _mm256_storeu_ps(cv + 8 * v, c[v]);
        if (x->flushz)
            for (int t = 0; t < 8; t++)
                if (!t8[t]) alive[8 * v + t] = 0;
    }
}

/* exact alignment, AVX2 with FMA, for a group whose every lane is in range by its bounds
 * (xsafe; fpk.inrange): no range check per step.  Sixteen lanes (four vectors) at a time
 * through the chunk's blocks, the state in registers; instantiated like xrun_512 (N: blocks
 * of 2 or 4, 0 any; R: nearest even, -1 the rounding read at run time; T: inexact wanted).
 *
 * DERIVED from core.c round_pack: xstep_256 rounds the exact binary64 sum u = c + s to P bits
 * as xfinish does (bias below the kept bits, the rest cleared; +0 stays +0: c is never -0 and
 * the sums are at nearest even), and the result is the model's because it is zero or a normal
 * number of the output format (xsafe's argument); a chunk that raised any flag is recomputed
 * by xchunk_c (run_exact); proof: tests/harness/test_harness.py::test_entry (entry block_fma,
 * parts exact_pair, exact_pair_edges and exact_pair_avx2). */
typedef struct {
    __m256i mask, half1, half, one, vsh;
} xconst256;

static inline __attribute__((always_inline)) MM_TGT256F __m256d xsum_256(int N, const double *a, const double *r,
                                                                        ptrdiff_t pp, int64_t lb, int64_t nb)
{
    __m256d s;
    if (N == 2)
        return _mm256_fmadd_pd(_mm256_set1_pd(a[lb + 1]), _mm256_loadu_pd(r + (lb + 1) * pp),
                               _mm256_mul_pd(_mm256_set1_pd(a[lb]), _mm256_loadu_pd(r + lb * pp)));
    if (N == 4)
        return _mm256_add_pd(xsum_256(2, a, r, pp, lb, 2), xsum_256(2, a, r, pp, lb + 2, 2));
    s = _mm256_mul_pd(_mm256_set1_pd(a[lb]), _mm256_loadu_pd(r + lb * pp));
    for (int64_t l = lb + 1; l < lb + nb; l++)
        s = _mm256_fmadd_pd(_mm256_set1_pd(a[l]), _mm256_loadu_pd(r + l * pp), s);
    return s;
}

/* c + s rounded to P bits into c; T: the bits rounded off or-ed into *in */
static inline __attribute__((always_inline)) MM_TGT256F void xstep_256(int R, int T, int rounding,
                                                                      const xconst256 *K, __m256d s, __m256d *c,
                                                                      __m256i *in)
{
    __m256i u = _mm256_castpd_si256(_mm256_add_pd(*c, s)), bias;
    switch (R >= 0 ? R : rounding) {
    case SFP8_ROUND_NEAREST_EVEN:
        bias = _mm256_add_epi64(K->half1, _mm256_and_si256(_mm256_srlv_epi64(u, K->vsh), K->one));
        break;
    case SFP8_ROUND_NEAREST_AWAY: bias = K->half; break;
    case SFP8_ROUND_UPWARD: bias = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), u), K->mask); break;
    case SFP8_ROUND_DOWNWARD: bias = _mm256_and_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), u), K->mask); break;
    default: bias = _mm256_setzero_si256(); break;
    }
    if (T) *in = _mm256_or_si256(*in, _mm256_and_si256(u, K->mask));
    *c = _mm256_castsi256_pd(_mm256_andnot_si256(K->mask, _mm256_add_epi64(u, bias)));
}

static inline __attribute__((always_inline)) MM_TGT256F void xrun_256(int N, int R, int T, const fpk *x,
                                                                     const xconst256 *K, const double *b,
                                                                     int64_t l0, int64_t l1, __m256d *c,
                                                                     __m256i *in)
{
    const double *a = (const double *)x->a;
    __m256d c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    __m256i in0 = in[0], in1 = in[1], in2 = in[2], in3 = in[3];
    const ptrdiff_t pp = x->pp;
    int64_t lb = l0;
#define XSTEP4(NN, NB)                                                                                             \
    do {                                                                                                           \
        xstep_256(R, T, x->rounding, K, xsum_256(NN, a, b, pp, lb, NB), &c0, &in0);                                  \
        xstep_256(R, T, x->rounding, K, xsum_256(NN, a, b + 4, pp, lb, NB), &c1, &in1);                              \
        xstep_256(R, T, x->rounding, K, xsum_256(NN, a, b + 8, pp, lb, NB), &c2, &in2);                              \
        xstep_256(R, T, x->rounding, K, xsum_256(NN, a, b + 12, pp, lb, NB), &c3, &in3);                             \
    } while (0)
    if (N) /* x->n == N: the whole blocks, then a partial one */
        for (; lb + N <= l1; lb += N) XSTEP4(N, N);
    for (; lb < l1; lb += x->n) {
        int64_t nb = l1 - lb < x->n ? l1 - lb : x->n;
        XSTEP4(0, nb);
    }
#undef XSTEP4
    c[0] = c0, c[1] = c1, c[2] = c2, c[3] = c3;
    in[0] = in0, in[1] = in1, in[2] = in2, in[3] = in3;
}

__attribute__((noinline)) MM_TGT256F static void xchunk_256r(const fpk *x, const double *b, int64_t l0, int64_t l1,
                                                             double *cv, uint8_t *inex)
{
    xconst256 K;
    int rne = x->rounding == SFP8_ROUND_NEAREST_EVEN;
    K.mask = _mm256_set1_epi64x((int64_t)(((uint64_t)1 << x->sh) - 1));
    K.half1 = _mm256_srli_epi64(K.mask, 1);
    K.one = _mm256_set1_epi64x(1);
    K.half = _mm256_add_epi64(K.half1, K.one);
    K.vsh = _mm256_set1_epi64x(x->sh);
    for (int h = 0; h < GW; h += 16) {
        __m256d c[4];
        __m256i in[4];
        int64_t iv[16];
        for (int v = 0; v < 4; v++) {
            c[v] = _mm256_loadu_pd(cv + h + 4 * v);
            in[v] = _mm256_setzero_si256();
        }
        if (x->n == 2 && rne && !x->track) xrun_256(2, SFP8_ROUND_NEAREST_EVEN, 0, x, &K, b + h, l0, l1, c, in);
        else if (x->n == 4 && rne && !x->track) xrun_256(4, SFP8_ROUND_NEAREST_EVEN, 0, x, &K, b + h, l0, l1, c, in);
        else if (x->n == 2) xrun_256(2, -1, 1, x, &K, b + h, l0, l1, c, in);
        else if (x->n == 4) xrun_256(4, -1, 1, x, &K, b + h, l0, l1, c, in);
        else xrun_256(0, -1, 1, x, &K, b + h, l0, l1, c, in);
        for (int v = 0; v < 4; v++) {
            _mm256_storeu_pd(cv + h + 4 * v, c[v]);
            _mm256_storeu_si256((__m256i *)(iv + 4 * v), in[v]);
        }
        for (int q = 0; q < 16; q++) inex[h + q] |= iv[q] != 0;
    }
}

/* pairwise, AVX2 with FMA, blocks of four: four vectors of eight lanes, each block's tree
 * (p0 + p1) + (p2 + p3) added to the running value, p0 + p1 as fma(a1, b1, p0) (p1 exact).
 * Z: zero products made +0 (output_subnormals off) -- 1: p0 + (+0) (not in the downward
 * rounding), 2: masked; the other products' zeros are p1's, whose sign the sum p0 + p1 hides
 * unless p0 is a zero too (1: +0, and +0 + -0 is +0 in these roundings).  With
 * output_subnormals off a tiny sum is an operand of a later addition (the denormal flag,
 * read by run_pair: the group goes to the portable kernel) or the last running value, checked
 * here.  The last block, if partial, as pair_256 does (zero products for l >= k). */
static inline __attribute__((always_inline)) MM_TGT256F __m256 pleaf2_256(int Z, const float *a, const float *r,
                                                                         ptrdiff_t pp, int64_t l)
{
    __m256 p0 = _mm256_mul_ps(_mm256_set1_ps(a[l]), _mm256_loadu_ps(r + l * pp)), p1;
    if (Z == 1) p0 = _mm256_add_ps(p0, _mm256_setzero_ps());
    if (Z != 2) return _mm256_fmadd_ps(_mm256_set1_ps(a[l + 1]), _mm256_loadu_ps(r + (l + 1) * pp), p0);
    p0 = _mm256_andnot_ps(_mm256_cmp_ps(p0, _mm256_setzero_ps(), _CMP_EQ_OQ), p0);
    p1 = _mm256_mul_ps(_mm256_set1_ps(a[l + 1]), _mm256_loadu_ps(r + (l + 1) * pp));
    p1 = _mm256_andnot_ps(_mm256_cmp_ps(p1, _mm256_setzero_ps(), _CMP_EQ_OQ), p1);
    return _mm256_add_ps(p0, p1);
}

static inline __attribute__((always_inline)) MM_TGT256F void prun4_256(int Z, const fpk *x, const float *b,
                                                                      __m256 *c)
{
    const float *a = (const float *)x->a;
    __m256 c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    int64_t l0 = 0;
    for (; l0 + 4 <= x->k; l0 += 4) {
        c0 = _mm256_add_ps(c0, _mm256_add_ps(pleaf2_256(Z, a, b, x->pp, l0), pleaf2_256(Z, a, b, x->pp, l0 + 2)));
        c1 = _mm256_add_ps(c1, _mm256_add_ps(pleaf2_256(Z, a, b + 8, x->pp, l0),
                                             pleaf2_256(Z, a, b + 8, x->pp, l0 + 2)));
        c2 = _mm256_add_ps(c2, _mm256_add_ps(pleaf2_256(Z, a, b + 16, x->pp, l0),
                                             pleaf2_256(Z, a, b + 16, x->pp, l0 + 2)));
        c3 = _mm256_add_ps(c3, _mm256_add_ps(pleaf2_256(Z, a, b + 24, x->pp, l0),
                                             pleaf2_256(Z, a, b + 24, x->pp, l0 + 2)));
    }
    c[0] = c0, c[1] = c1, c[2] = c2, c[3] = c3;
    if (l0 < x->k)
        for (int v = 0; v < GW / 8; v++) {
            __m256 P[4];
            for (int i = 0; i < 4; i++) {
                __m256 p = l0 + i < x->k ? _mm256_mul_ps(_mm256_set1_ps(a[l0 + i]),
                                                         _mm256_loadu_ps(b + 8 * v + (l0 + i) * x->pp))
                                         : _mm256_setzero_ps();
                if (x->flushz) p = _mm256_andnot_ps(_mm256_cmp_ps(p, _mm256_setzero_ps(), _CMP_EQ_OQ), p);
                P[i] = p;
            }
            c[v] = _mm256_add_ps(c[v], _mm256_add_ps(_mm256_add_ps(P[0], P[1]), _mm256_add_ps(P[2], P[3])));
        }
}

__attribute__((noinline)) MM_TGT256F static void pair4_256(const fpk *x, const float *b, float *cv, uint8_t *alive)
{
    __m256 c[GW / 8];
    for (int v = 0; v < GW / 8; v++) c[v] = _mm256_loadu_ps(cv + 8 * v);
    if (!x->flushz) prun4_256(0, x, b, c);
    else if (x->rounding != SFP8_ROUND_DOWNWARD) prun4_256(1, x, b, c);
    else prun4_256(2, x, b, c);
    for (int v = 0; v < GW / 8; v++) _mm256_storeu_ps(cv + 8 * v, c[v]);
    if (x->flushz)
        for (int q = 0; q < GW; q++)
            if (ftiny(cv[q])) alive[q] = 0;
}
#endif

/* exact alignment: every block of the group's live lanes (the SIMD kernels chunk by chunk,
 * a chunk that raised a flag again by the portable kernel) */
static void run_exact(int level, const fpk *x, const double *b, double *c, uint8_t *alive, uint8_t *inex)
{
#if MM_SIMD
    if (level >= 1) {
        int64_t ch = (XCHUNK + x->n - 1) / x->n * x->n;
        for (int64_t l0 = 0; l0 < x->k; l0 += ch) {
            int64_t l1 = x->k - l0 < ch ? x->k : l0 + ch;
            double c0[GW];
            uint8_t a0[GW], i0[GW];
            memcpy(c0, c, sizeof c0);
            memcpy(a0, alive, sizeof a0);
            memcpy(i0, inex, sizeof i0);
            mm_fx_clear(SFP8_ROUND_NEAREST_EVEN);
            if (level >= 2) xchunk_512(x, b, l0, l1, c, alive, inex);
            else if (x->inrange) xchunk_256r(x, b, l0, l1, c, inex);
            else xchunk_256(x, b, l0, l1, c, alive, inex);
            if (mm_fx_read()) { /* a step was not exact (or the flags say anything): the portable kernel */
                memcpy(c, c0, sizeof c0);
                memcpy(alive, a0, sizeof a0);
                memcpy(inex, i0, sizeof i0);
                xchunk_c(x, b, l0, l1, c, alive, inex);
            }
        }
        return;
    }
#endif
    (void)level;
    mm_fx_clear(SFP8_ROUND_NEAREST_EVEN);
    xchunk_c(x, b, 0, x->k, c, alive, inex);
}

/* pairwise: the group's flags (MM_FX_*) */
static unsigned run_pair(int level, const fpk *x, const float *b, float *c, uint8_t *alive)
{
#if MM_SIMD
    if (level >= 1) {
        float c0[GW];
        uint8_t a0[GW];
        unsigned hw;
        memcpy(c0, c, sizeof c0);
        memcpy(a0, alive, sizeof a0);
        mm_fx_clear(x->rounding);
        int de = level >= 2 || x->n == 4; /* the kernels that leave tiny sums to the flag */
        if (level >= 2) pair_512(x, b, c, alive);
        else if (de) pair4_256(x, b, c, alive);
        else pair_256(x, b, c, alive);
        hw = mm_fx_read();
        if (!(x->flushz && de && (hw & MM_FX_DENORMAL))) return hw;
        memcpy(c, c0, sizeof c0); /* a tiny sum (AVX-512, pair4_256): the portable kernel finds its lanes */
        memcpy(alive, a0, sizeof a0);
    }
#endif
    (void)level;
    mm_fx_clear(x->rounding);
    pair_c(x, b, c, alive);
    return mm_fx_read();
}

/* what a line (row of A, column of B) holds: NaN or infinity, a subnormal code, the least
 * and largest binade of its non-zero values, their widest significand */
typedef struct {
    int bad, sub, wide;
    int32_t lo, hi;
} fline;

static void fline_init(fline *s)
{
    s->bad = s->sub = s->wide = 0;
    s->lo = -NONE;
    s->hi = NONE;
}

static void fline_add(fline *s, const ucode *d)
{
    s->bad |= d->bad;
    s->sub |= d->sub;
    if (d->top == NONE) return;
    if (d->top < s->lo) s->lo = d->top;
    if (d->top > s->hi) s->hi = d->top;
    if (d->wide > s->wide) s->wide = d->wide;
}

/* an operand decoder of these kernels: IEEE-like 9..16-bit formats (float16, bfloat16) by
 * arithmetic, the others by decode1 (a table of every code for 8-bit formats) */
typedef struct {
    int arith, M, in_sub;
    int64_t bias;
    uint64_t mask, emax;
    double subscale; /* 2^(1 - bias - M): the unit of subnormals */
    udecoder D;
} fdec;

static int fdec_init(const uctx *g, fdec *F, const sfp8_format *f, int64_t count)
{
    memset(F, 0, sizeof *F);
    F->arith = sfp8mu_ieee_layout(f) && f->bits <= 16;
    F->M = f->man_bits;
    F->bias = f->bias;
    F->in_sub = g->md->in_subnormals;
    F->mask = ((uint64_t)1 << f->bits) - 1;
    F->emax = ((uint64_t)1 << f->exp_bits) - 1;
    F->subscale = ldexp(1.0, (int)(1 - f->bias - f->man_bits));
    return F->arith || sfp8mu_decoder_init(g, &F->D, f, fmt_emin(f), count);
}

/* the fields of ucode these kernels read (d, top, wide, bad, sub) of one operand code */
static inline __attribute__((always_inline)) const ucode *fdecode(const uctx *g, const fdec *F, uint64_t code, ucode *tmp)
{
    uint64_t c = code & F->mask, sign = c >> (F->M + (int)bitlen64(F->emax)) & 1, e = c >> F->M & F->emax;
    uint64_t m = c & (((uint64_t)1 << F->M) - 1), sig;
    if (!F->arith) return sfp8mu_lookup(g, &F->D, code, tmp);
    tmp->bad = e == F->emax;
    tmp->sub = e == 0 && m != 0;
    tmp->top = NONE;
    tmp->wide = 0;
    tmp->d = sign && !tmp->bad ? -0.0 : 0.0;
    if (tmp->bad || (e == 0 && (m == 0 || !F->in_sub))) return tmp;
    if (e) {
        uint64_t u = sign << 63 | (uint64_t)((int64_t)e - F->bias + 1023) << 52 | m << (52 - F->M);
        memcpy(&tmp->d, &u, 8);
        sig = (uint64_t)1 << F->M | m;
        tmp->top = (int32_t)((int64_t)e - F->bias);
    } else {
        tmp->d = (sign ? -(double)m : (double)m) * F->subscale;
        sig = m;
        tmp->top = (int32_t)(bitlen64(m) - F->bias - F->M);
    }
    tmp->wide = (uint8_t)(bitlen64(sig) - __builtin_ctzll(sig));
    return tmp;
}

/* n codes of size sz at src (stride st) into dst (binary64 values, or binary32 when !dbl),
 * element t into the line line[t * ls] (ls = 0: one line); normal codes of the arithmetic
 * formats without a branch on their values */
static inline __attribute__((always_inline)) void decode_run_t(const uctx *g, const fdec *F, const char *src,
                                                              ptrdiff_t st, int sz, int64_t n, const int dbl,
                                                              void *dst, fline *line, const int ls, const int bins)
{
    const uint64_t off = (uint64_t)(1023 - F->bias), mm = ((uint64_t)1 << F->M) - 1;
    const int sbit = F->M + (int)bitlen64(F->emax);
    int32_t lo = line->lo, hi = line->hi;
    int wide = line->wide;
    for (int64_t t = 0; t < n; t++) {
        uint16_t h = 0;
        uint64_t code = sz == 2 ? (memcpy(&h, src + t * st, 2), h) : load_raw(src + t * st, sz);
        uint64_t c = code & F->mask, e = c >> F->M & F->emax;
        fline *L = ls ? line + t : line;
        ucode tmp;
        const ucode *d;
        if (F->arith && e - 1 < F->emax - 1) { /* a normal number */
            uint64_t m = c & mm, u = (c >> sbit) << 63 | (e + off) << 52 | m << (52 - F->M);
            int32_t top = (int32_t)((int64_t)e - F->bias);
            int w = F->M + 1 - __builtin_ctzll(m | (mm + 1));
            double v;
            memcpy(&v, &u, 8);
            if (dbl) ((double *)dst)[t] = v;
            else ((float *)dst)[t] = (float)v;
            if (!bins) continue; /* the binades and widths unused */
            if (ls) {
                L->lo = top < L->lo ? top : L->lo;
                L->hi = top > L->hi ? top : L->hi;
                L->wide = w > L->wide ? w : L->wide;
            } else {
                lo = top < lo ? top : lo;
                hi = top > hi ? top : hi;
                wide = w > wide ? w : wide;
            }
            continue;
        }
        d = fdecode(g, F, code, &tmp);
        if (dbl) ((double *)dst)[t] = d->d;
        else ((float *)dst)[t] = (float)d->d; /* exact where the line qualifies */
        fline_add(L, d);
    }
    if (!ls) {
        line->lo = lo < line->lo ? lo : line->lo;
        line->hi = hi > line->hi ? hi : line->hi;
        line->wide = wide > line->wide ? wide : line->wide;
    }
}

/* bins 0: the lines' binades and widths of normal numbers not wanted (exact alignment with
 * product_overflow: only NaN, infinity and subnormal codes matter) */
static void decode_run(const uctx *g, const fdec *F, const char *src, ptrdiff_t st, int sz, int64_t n, int dbl,
                       void *dst, fline *line, int ls, int bins)
{
    if (dbl && !bins && ls) decode_run_t(g, F, src, st, sz, n, 1, dst, line, 1, 0);
    else if (dbl && !bins) decode_run_t(g, F, src, st, sz, n, 1, dst, line, 0, 0);
    else if (dbl && ls) decode_run_t(g, F, src, st, sz, n, 1, dst, line, 1, 1);
    else if (dbl) decode_run_t(g, F, src, st, sz, n, 1, dst, line, 0, 1);
    else if (ls) decode_run_t(g, F, src, st, sz, n, 0, dst, line, 1, 1);
    else decode_run_t(g, F, src, st, sz, n, 0, dst, line, 0, 1);
}

/* an output's addend as its first running value (*v); 0: left to the generic kernel */
static int fp_addend(const sfp8u_model *md, int mode, const char *C, uint64_t code, double *v, uint8_t *fl)
{
    sfp8u_value c;
    *v = 0.0;
    if (!C) return 1;
    sfp8u_decode(&md->fo, code, &c);
    if (c.cls == SFP8U_NAN || c.cls == SFP8U_INF) return 0;
    if (c.sub) *fl |= SFP8_FLAG_DENORMAL;
    if (c.sub && !md->out_subnormals) { /* read as +0, a zero of its sign in the pairwise grouping */
        *fl |= SFP8_FLAG_INEXACT;
        *v = mode == FP_PAIR && c.neg ? -0.0 : 0.0;
        return 1;
    }
    if (c.cls == SFP8U_FINITE) *v = ldexp(c.neg ? -(double)c.sig : (double)c.sig, (int)c.exp);
    else *v = mode == FP_PAIR && c.neg ? -0.0 : 0.0; /* exact alignment: a zero is no term, +0 */
    return 1;
}

/* exact alignment: whether every running value of a lane -- row r, column cl, first running
 * value c0, the output's normal binades emin .. emax, lgk >= log2 k -- is zero or a normal
 * number of the output format whatever its operands' values, by the bounds of its lines.
 *
 * DERIVED: every non-zero value of a line is a multiple of 2^(lo - wide + 1) below
 * 2^(hi + 1) (lo, hi its binades, wide its widest significand), so every product is a
 * multiple of 2^q, q = lo_r - wide_r + lo_c - wide_c + 2, below 2^(hi_r + hi_c + 2), and
 * their magnitudes sum to S < 2^(lgk + hi_r + hi_c + 2).  Lower bound: if c0 and the
 * products are multiples of 2^Q, so is every running value r_t (the exact sum x_t is; if
 * rounding to P bits changes it, x_t has more than P bits above 2^Q and r_t is a multiple
 * of its own last place, above 2^Q): a non-zero r_t is at least 2^Q >= 2^emin.  Upper
 * bound: |r_t| <= |x_t| / (1 - 2^(1 - P)) (an error below one unit in r_t's last place)
 * and |x_t| <= |r_(t-1)| + S_t (S_t: the block's magnitudes), so |r_t| <= (|c0| + S) /
 * (1 - 2^(1 - P))^T < 2 (2^(emax - 2) + 2^(emax - 2)) = 2^emax when T (the blocks) <=
 * 2^(P - 2) (the caller's test), |c0| < 2^(emax - 2) and lgk + hi_r + hi_c + 4 <= emax.
 * proof: tests/harness/test_harness.py::test_entry (entry block_fma, part exact_pair_avx2). */
static int xsafe(const fline *r, const fline *cl, double c0, int64_t emin, int64_t emax, int64_t lgk)
{
    uint64_t u = sfp8f_dbits(c0);
    int64_t e0 = (int64_t)(u >> 52 & 0x7ff);
    if ((u << 1) && (e0 == 0 || e0 - 1023 > emax - 3 || e0 - 1075 + __builtin_ctzll(u | (uint64_t)1 << 52) < emin))
        return 0;
    if (r->hi == NONE || cl->hi == NONE) return 1; /* every product zero */
    return (int64_t)r->lo - r->wide + cl->lo - cl->wide + 2 >= emin && (int64_t)r->hi + cl->hi + 4 + lgk <= emax;
}

/* the code of a normal number or +-0 of fo (binary32 or binary16), given in binary64 */
static uint64_t fo_code(const sfp8_format *f, double v)
{
    uint64_t u = sfp8f_dbits(v), s = (u >> 63) << (f->bits - 1);
    if (!(u << 1)) return s;
    return s | (uint64_t)((int64_t)(u >> 52 & 0x7ff) - 1023 + f->bias) << f->man_bits |
           (u & (((uint64_t)1 << 52) - 1)) >> (52 - f->man_bits);
}

unsigned sfp8mu_fp_gemm(const sfp8u_model *md, int mode, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                        ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O, ptrdiff_t om,
                        ptrdiff_t op, int64_t m, int64_t k, int64_t p)
{
    int sa = code_size(&md->fa), sb = code_size(&md->fb), so = code_size(&md->fo), used = 0;
    int level = sfp8f_simd_level(), dbl = mode == FP_EXACT;
    /* level 1, exact alignment: the binades and widths read by xsafe */
    int xs = level == 1 && dbl &&
             (k + md->block - 1) / md->block <= (int64_t)1 << (md->fo.man_bits - 1); /* T <= 2^(P - 2) */
    int bins = !dbl || !md->product_overflow || xs;
    int64_t lgk = 0;
    size_t es = dbl ? sizeof(double) : sizeof(float);
    ptrdiff_t pp = (p + GW - 1) / GW * GW;
    int64_t emax_o = ((int64_t)1 << md->fo.exp_bits) - 2 - md->fo.bias;
    uctx g;
    fdec da, db;
    char *bv = NULL, *av = NULL, *priv = NULL;
    fline *col = NULL, rows[FP_ROWS];
    uint8_t skip[FP_ROWS];
    fpk x;
    mm_fxsave env;
    unsigned flags = 0;
    if (mode == FP_LATE) return sfp8mu_late_gemm(md, A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p);
    if (!md->has_addend) C = NULL;
    memset(&g, 0, sizeof g);
    g.md = md;
    bv = malloc((size_t)(k * pp) * es);
    av = malloc((size_t)(FP_ROWS * k) * es);
    col = malloc((size_t)pp * sizeof(fline));
    memset(&da, 0, sizeof da);
    memset(&db, 0, sizeof db);
    if (!bv || !av || !col || !fdec_init(&g, &da, &md->fa, m * k) || !fdec_init(&g, &db, &md->fb, k * p)) {
        free(bv);
        free(av);
        free(col);
        free(da.D.tab);
        free(db.D.tab);
        return SFP8U_NOMEM;
    }
    mm_fx_enter(&env);
    mm_fx_clear(SFP8_ROUND_NEAREST_EVEN);
    for (int64_t j = 0; j < pp; j++) fline_init(&col[j]);
    for (int64_t l = 0; l < k; l++) { /* B decoded once, row-major; padding and unfit columns zeros */
        decode_run(&g, &db, B + l * bk, bp, sb, p, dbl, bv + (size_t)(l * pp) * es, col, 1, bins);
        memset(bv + (size_t)(l * pp + p) * es, 0, (size_t)(pp - p) * es);
    }
    for (int64_t j = 0; j < pp; j++) {
        int zero = j >= p || col[j].bad || (!dbl && (col[j].wide > 24 || col[j].hi > 127 || col[j].lo < -126));
        for (int64_t l = 0; l < k && zero && j < p; l++) {
            if (dbl) ((double *)bv)[l * pp + j] = 0.0;
            else ((float *)bv)[l * pp + j] = 0.0f;
        }
        if (zero) col[j].bad = 1;
    }
    memset(&x, 0, sizeof x);
    x.rounding = md->envo.rounding;
    x.flushz = !md->out_subnormals;
    x.sh = 52 - md->fo.man_bits;
    x.k = k;
    x.n = md->block;
    x.elo = 1023 + fmt_emin(&md->fo);
    x.ehi = 1023 + emax_o;
    while (((int64_t)1 << lgk) < k) lgk++;
    for (int64_t i0 = 0; i0 < m && !(flags & SFP8U_NOMEM); i0 += FP_ROWS) { /* FP_ROWS rows decoded at a time */
        int64_t nr = m - i0 < FP_ROWS ? m - i0 : FP_ROWS;
        for (int64_t r = 0; r < nr; r++) {
            const int64_t i = i0 + r;
            fline *row = &rows[r];
            fline_init(row);
            decode_run(&g, &da, A + i * am, ak, sa, k, dbl, av + (size_t)(r * k) * es, row, 0, bins);
            skip[r] = row->bad || (!dbl && (row->wide > 24 || row->hi > 127 || row->lo < -126));
            if (skip[r]) /* the generic kernel */
                flags |= sfp8u_gemm(md, A + i * am, am, ak, B, bk, bp, C ? C + i * cm : NULL, cm, cp, O + i * om, om,
                                    op, 1, k, p);
        }
        /* each group of columns through the rows (its part of B stays in the cache) */
        for (int64_t j0 = 0; j0 < p && !(flags & SFP8U_NOMEM); j0 += GW)
            for (int64_t r = 0; r < nr; r++) {
                const int64_t i = i0 + r;
                const fline row = rows[r];
                int n = p - j0 < GW ? (int)(p - j0) : GW, dirty = 0;
                double cd[GW];
                float cf[GW];
                uint8_t alive[GW], inex[GW], fl[GW];
                const char *b = bv + j0 * es;
                unsigned hw = 0;
                if (skip[r]) continue;
                x.a = av + (size_t)(r * k) * es;
                for (int q = 0; q < GW; q++) {
                    int64_t j = j0 + q;
                    const fline *cl = &col[j];
                    fl[q] = inex[q] = 0;
                    cd[q] = 0.0;
                    alive[q] = !cl->bad &&
                               (dbl ? md->product_overflow || (int64_t)row.hi + cl->hi <= emax_o - 1
                                    : (int64_t)row.hi + cl->hi <= 126 && (int64_t)row.lo + cl->lo >= -126 &&
                                          row.wide + cl->wide <= 24) &&
                               fp_addend(md, mode, C, C && j < p ? load_raw(C + i * cm + j * cp, so) : 0, &cd[q],
                                         &fl[q]);
                    cf[q] = (float)cd[q];
                    if (!alive[q] && !cl->bad) dirty = 1; /* its column holds values: zeroed in a private copy */
                }
                x.pp = pp;
                if (dirty) {
                    if (!priv && !(priv = malloc((size_t)k * GW * es))) {
                        flags |= SFP8U_NOMEM;
                        break;
                    }
                    for (int64_t l = 0; l < k; l++)
                        for (int q = 0; q < GW; q++) {
                            if (dbl) ((double *)priv)[l * GW + q] = alive[q] ? ((const double *)b)[l * pp + q] : 0.0;
                            else ((float *)priv)[l * GW + q] = alive[q] ? ((const float *)b)[l * pp + q] : 0.0f;
                        }
                    b = priv;
                    x.pp = GW;
                }
                x.track = !(flags & SFP8_FLAG_INEXACT);
                x.inrange = xs;
                for (int q = 0; q < GW && x.inrange; q++)
                    x.inrange = !alive[q] || xsafe(&row, &col[j0 + q], cd[q], fmt_emin(&md->fo), emax_o, lgk);
                if (dbl) run_exact(level, &x, (const double *)b, cd, alive, inex);
                else hw = run_pair(level, &x, (const float *)b, cf, alive);
                if (hw & MM_FX_BAD) memset(alive, 0, sizeof alive); /* overflow or invalid: the generic kernel */
                for (int q = 0; q < n; q++) {
                    int64_t j = j0 + q;
                    if (alive[q]) {
                        uint64_t code;
                        if (dbl) {
                            code = fo_code(&md->fo, cd[q]);
                        } else {
                            uint32_t u;
                            memcpy(&u, &cf[q], 4);
                            code = u;
                        }
                        store_raw(O + i * om + j * op, so, code);
                        flags |= fl[q] | (row.sub || col[j].sub ? SFP8_FLAG_DENORMAL : 0) |
                                 (inex[q] || (hw & MM_FX_INEXACT) ? SFP8_FLAG_INEXACT : 0);
                        used = 1;
                    } else { /* the generic kernel, for this output alone */
                        flags |= sfp8u_gemm(md, A + i * am, am, ak, B + j * bp, bk, bp, C ? C + i * cm + j * cp : NULL,
                                            cm, cp, O + i * om + j * op, om, op, 1, k, 1);
                    }
                }
            }
    }
    mm_fx_leave(&env);
    if (used) mm_count(SFP8M_BLOCK_FMA, level);
    free(bv);
    free(av);
    free(col);
    free(priv);
    free(da.D.tab);
    free(db.D.tab);
    return flags;
}

/* TF32 operands for the hardware-arithmetic kernels (mm_units_fp.c, mm_units_late.c), whose
 * rules read the operand formats: binary32 codes whose low 13 bits are all zero and none of
 * them a NaN hold the values of a 19-bit IEEE format (1-8-10, bias 127) whose codes are
 * theirs shifted right by 13 -- the same zeros, subnormals, normal values and infinities,
 * class by class.  The codes of an n0 x n1 operand (strides s0, s1) so shifted into a
 * contiguous array, or NULL (a code of another kind, or no memory). */
static uint32_t *tf32_codes(const char *X, ptrdiff_t s0, ptrdiff_t s1, int64_t n0, int64_t n1)
{
    uint32_t *out = malloc((size_t)(n0 * n1 > 0 ? n0 * n1 : 1) * 4);
    if (!out) return NULL;
    for (int64_t i = 0; i < n0; i++)
        for (int64_t j = 0; j < n1; j++) {
            const uint32_t u = (uint32_t)load_raw(X + i * s0 + j * s1, 4);
            if ((u & 0x1FFFu) || ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu))) {
                free(out);
                return NULL;
            }
            out[i * n1 + j] = u >> 13;
        }
    return out;
}

int sfp8mu_fp_tf32_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                        ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O, ptrdiff_t om,
                        ptrdiff_t op, int64_t m, int64_t k, int64_t p, unsigned *flags)
{
    sfp8u_model m2 = *md;
    uint32_t *a2 = NULL, *b2 = NULL;
    int mode;
    if (!is_ieee(&md->fa, 32, 8, 23) && !is_ieee(&md->fb, 32, 8, 23)) return 0;
    if (is_ieee(&md->fa, 32, 8, 23)) m2.fa.bits = 19, m2.fa.man_bits = 10;
    if (is_ieee(&md->fb, 32, 8, 23)) m2.fb.bits = 19, m2.fb.man_bits = 10;
    if (!(mode = sfp8mu_fp_mode(&m2, k))) return 0;
    if (is_ieee(&md->fa, 32, 8, 23) && !(a2 = tf32_codes(A, am, ak, m, k))) return 0;
    if (is_ieee(&md->fb, 32, 8, 23) && !(b2 = tf32_codes(B, bk, bp, k, p))) {
        free(a2);
        return 0;
    }
    *flags = sfp8mu_fp_gemm(&m2, mode, a2 ? (const char *)a2 : A, a2 ? 4 * k : am, a2 ? 4 : ak,
                            b2 ? (const char *)b2 : B, b2 ? 4 * p : bk, b2 ? 4 : bp, C, cm, cp, O, om, op, m, k, p);
    free(a2);
    free(b2);
    return 1;
}
