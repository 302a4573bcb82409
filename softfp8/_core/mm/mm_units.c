/*
 * The matrix engine's entry for the matrix-unit models (sfp8m_unit_gemm): softfp8.matmul
 * with a softfp8.BlockFMA, a profile (softfp8.Accumulation.profile), the pairwise and
 * Kahan orders, or an addend.  The generic kernel, and the definition, is bfma.c's
 * (sfp8u_gemm, exact in integers); it is what runs with the fast paths off.
 *
 * The fast path (mm_paths.def: block_fma) computes the block-FMA model -- global alignment
 * with the addend among the products (the NVIDIA units) or after them, and odd/even groups
 * (MI300X) -- from operands decoded once, sixteen outputs of a row at a time: per block, the
 * largest nominal exponent E of the terms (at least min_exponent), every term truncated
 * toward zero (with its sticky bit) to the unit 2^(E - W) and the integers summed exactly
 * (portable C; AVX2 / AVX-512 in 32-bit lanes; or, once lost bits no longer matter, by the
 * binary32 route: a * b exact, times 2^-ue, converted with truncation), the sum rounded once
 * to P significant bits by the model's rounding, and that value carried into the next block;
 * the late addend and odd/even groups take bfma.c's two-term alignment per lane
 * (docs/matrix-units.md, docs/matrix-engine.md).  It takes an output only if its row of A
 * and its column of B hold no NaN or infinity, its addend is finite, and every block result
 * is a normal number of the output format; anything else (overflow, a subnormal block
 * result) is left to the generic kernel, which computes that output again from the start.
 * Exact alignment (MI100) and the pairwise grouping (MI250) take the same path with
 * kernels on the hardware's binary64 / binary32 arithmetic (sfp8mu_fp_gemm, "exact alignment and
 * the pairwise grouping", mm_units_fp.c).  At SIMD level 2 the NVIDIA profiles' model runs in the
 * binary32 carry kernel (mm_units_fc.c: four rows by sixteen columns, running values as binary32
 * numbers) for the chunks of four rows whose products are normal binary32 numbers, on operands
 * decoded lean (exponents and values only, mm_udecode.c); the other chunks in the kernels here.  The harness proves the path equal to the generic kernel
 * (tests/harness/matrix.py, "block_fma").
 *
 * DERIVED from core.c round_pack: round_block rounds a normal block result to P
 * significant bits by the model's rounding (toward zero, nearest even or away, upward,
 * downward) as sfp8_round_value does in bfma.c's deliver, and leaves every other case to
 * it (mm_units_fp.c has the DERIVED rounding of its binary64 kernels); proof:
 * tests/harness/test_harness.py::test_entry (entry block_fma).
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "mm.h"
#include "mm_fenv.h"
#include "mm_orders.h"
#include "mm_paths.h"
#include "mm_simd.h"
#include "mm_udecode.h"
#include "mm_units_fc.h"
#include "mm_units_fp.h"
#include "mm_value.h"

#define LANES 16          /* outputs of a row computed together: columns j0 .. j0 + 15 */

/* operands decoded: value (-1)^neg sig 2^x (sig odd, or 0), neg a mask (0 or all ones),
 * nominal exponent E (NONE for a zero, or a subnormal read as zero).  A: one row, element
 * l; B: row-major, element (l, j) at l * pp + j (pp: p rounded up to LANES, the padding
 * zeros). */
typedef struct {
    uint32_t *sig, *neg;
    int32_t *x, *E;
    float *f; /* the value as a binary32 number (uctx.fexact) */
} uline;

/* the running values of a group's outputs: terms like the operands' (sig 0: +0) */
typedef struct {
    uint32_t sig[LANES], neg[LANES];
    int32_t x[LANES], E[LANES];
} ugroup;




/* the fast path computes md */
static int covers(const sfp8u_model *md, int64_t k)
{
    int W = 23 + md->extra_bits, r = md->envo.rounding;
    return md->order == SFP8U_BLOCK && (md->grouping == SFP8U_GLOBAL || md->grouping == SFP8U_ODD_EVEN) &&
           !md->exact_align && !md->promote && k >= 1 &&
           (r == SFP8_ROUND_TOWARD_ZERO || r == SFP8_ROUND_NEAREST_EVEN || r == SFP8_ROUND_NEAREST_AWAY ||
            r == SFP8_ROUND_UPWARD || r == SFP8_ROUND_DOWNWARD) &&
           /* terms below 2^(W + 3) with the sticky bit, block + 1 of them: |sum| < 2^62 */
           W + 3 + bitlen64((uint64_t)md->block + 1) <= 62;
}





/* one operand into element l of u: bad |= NaN or infinity; sub |= a subnormal code;
 * *wide = max(*wide, bits of the significand) */

/* the exponents of a line's values (mm_units_fc.c's check that their products are normal
 * binary32 numbers): lowest and highest top of the nonzero values, nof: one is no binary32 number */
typedef struct {
    int32_t lo, hi;
    int nof;
} urange;

static const urange NO_RANGE = {-NONE, NONE, 0};

/* one operand into element l of u (d decoded): *bad |= NaN or infinity; *sub |= a subnormal
 * code; *wide = max(*wide, bits of the significand); rg the range of exponents */
static inline void put(const ucode *d, uline *u, int64_t l, unsigned char *bad, unsigned char *sub, int *wide,
                       urange *rg)
{
    if (d->top >= NONE / 2) {
        if (d->top < rg->lo) rg->lo = d->top;
        if (d->top > rg->hi) rg->hi = d->top;
    }
    rg->nof |= d->nof;
    u->sig[l] = d->sig;
    u->neg[l] = d->neg;
    u->x[l] = d->x;
    u->E[l] = d->E;
    u->f[l] = d->f;
    *bad |= d->bad;
    *sub |= d->sub;
    if (d->wide > *wide) *wide = d->wide;
}

/* x / 2^-s truncated (s < 0) or x * 2^s (below 2^(W + 2): a term's msb is at most E + 1);
 * *lost: bits dropped */
static inline uint64_t align1(uint64_t sig, int64_t s, int *lost)
{
    uint64_t a;
    *lost = 0;
    if (s >= 0) return s < 64 ? sig << s : 0; /* s >= 64 only for a zero product (x = 0) */
    if (s <= -64) {
        *lost = sig != 0;
        return 0;
    }
    a = sig >> -s;
    *lost = (a << -s) != sig;
    return a;
}

/* the units 2^ue[q] of a block's alignment from its exponents E[q] (at least min_exponent),
 * and uef[q] = ue[q] for the lanes with terms, 0 for the others; 1 if every uef[q] is in
 * -126 .. 126 (2^-uef[q] a normal binary32 number) */
static int block_units(const uctx *g, const int32_t *E, int32_t *ue, int32_t *uef)
{
    int inrange = 1;
    for (int q = 0; q < LANES; q++) {
        int32_t e = E[q];
        if (g->md->has_min_exp && e >= NONE / 2 && e < g->md->min_exp) e = g->md->min_exp;
        ue[q] = e - g->W;
        uef[q] = e >= NONE / 2 ? ue[q] : 0;
        inrange &= uef[q] >= -126 && uef[q] <= 126;
    }
    return inrange;
}

/* the largest nominal exponents of a block's products and the running values, per lane */
static int block_exp(const uctx *g, const uline *a, const uline *b, ptrdiff_t pp, int64_t j0, int64_t l0, int64_t n,
                     const ugroup *cur, int32_t *E, int32_t *ue, int32_t *uef)
{
    for (int q = 0; q < LANES; q++) E[q] = cur->sig[q] ? cur->E[q] : NONE;
    for (int64_t l = l0; l < l0 + n; l++) {
        const int64_t o = l * pp + j0;
        for (int q = 0; q < LANES; q++) {
            int32_t e = a->E[l] + b->E[o + q];
            if (g->norm && a->sig[l] && b->sig[o + q]) { /* normalised products: E + 1 when the msb is there */
                int32_t top = a->x[l] + b->x[o + q] + bitlen64((uint64_t)a->sig[l] * b->sig[o + q]) - 1;
                if (top > e) e = top;
            }
            if (e > E[q]) E[q] = e;
        }
    }
    return block_units(g, E, ue, uef);
}

/* the sums of a block's terms aligned to 2^ue[q] (products of a and b at l0 .. l0 + n - 1, and
 * the running values): portable C */
static void block_sum(const uctx *g, const uline *a, const uline *b, ptrdiff_t pp, int64_t j0, int64_t l0,
                      int64_t n, const ugroup *cur, const int32_t *ue, int64_t *T, int *dropped)
{
    for (int q = 0; q < LANES; q++) {
        int64_t t = 0;
        int lost, d = 0;
        for (int64_t l = l0; l <= l0 + n; l++) { /* l = l0 + n: the running value */
            uint64_t sig, v, m;
            int64_t x;
            if (l < l0 + n) {
                sig = (uint64_t)a->sig[l] * b->sig[l * pp + j0 + q];
                x = (int64_t)a->x[l] + b->x[l * pp + j0 + q];
                m = (uint64_t)(int64_t)(int32_t)(a->neg[l] ^ b->neg[l * pp + j0 + q]);
            } else {
                sig = cur->sig[q];
                x = cur->x[q];
                m = (uint64_t)(int64_t)(int32_t)cur->neg[q];
            }
            v = align1(sig, x - ue[q], &lost);
            if (g->sticky) v = (v << 1) | (uint64_t)lost;
            d |= lost;
            t += (int64_t)((v ^ m) - m);
        }
        T[q] = t;
        dropped[q] = d;
    }
}

#if MM_SIMD
#include <immintrin.h>
/* block sums in SIMD: 32-bit lanes v added to the sums (sum32: in 32 bits, lo alone; else
 * as 64-bit halves lo, hi), and the sums stored as 64-bit integers at T */
MM_TGT256 static inline void add8(__m256i v, int sum32, __m256i *lo, __m256i *hi)
{
    if (sum32) {
        *lo = _mm256_add_epi32(*lo, v);
        return;
    }
    *lo = _mm256_add_epi64(*lo, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)));
    *hi = _mm256_add_epi64(*hi, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1)));
}

MM_TGT256 static inline void store8(int64_t *T, __m256i lo, __m256i hi, int sum32)
{
    if (sum32) {
        hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(lo, 1));
        lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(lo));
    }
    _mm256_storeu_si256((__m256i *)T, lo);
    _mm256_storeu_si256((__m256i *)(T + 4), hi);
}

MM_TGT512 static inline void add16(__m512i v, int sum32, __m512i *lo, __m512i *hi)
{
    if (sum32) {
        *lo = _mm512_add_epi32(*lo, v);
        return;
    }
    *lo = _mm512_add_epi64(*lo, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v)));
    *hi = _mm512_add_epi64(*hi, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1)));
}

MM_TGT512 static inline void store16(int64_t *T, __m512i lo, __m512i hi, int sum32)
{
    if (sum32) {
        hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(lo, 1));
        lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(lo));
    }
    _mm512_storeu_si512(T, lo);
    _mm512_storeu_si512(T + 8, hi);
}

/* block_sum in 32-bit lanes (uctx.narrow: products below 2^32, terms below 2^31 with their
 * sign and sticky bit), summed in 32 bits when sum32 (uctx.sum32: the block's sum below 2^31),
 * else in 64; lost bits looked for only when need_lost (the sticky bit, or no inexact flag
 * raised yet in the call).  Eight lanes from lane h of the group. */
MM_TGT256 static inline void sum8_avx2(const uline *a, const uline *b, ptrdiff_t pp, int64_t j0, int64_t l0,
                                       int64_t n, const ugroup *cur, const int32_t *ue, int sticky, int sum32,
                                       int need_lost, int h, int64_t *T, int *dropped)
{
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    const __m256i vue = _mm256_loadu_si256((const __m256i *)(ue + h));
    __m256i lo = zero, hi = zero, d = zero;
    for (int64_t l = l0; l <= l0 + n; l++) {
        __m256i sig, x, m, s, shl, shr, v;
        if (l < l0 + n) {
            const int64_t o = l * pp + j0 + h;
            sig = _mm256_mullo_epi32(_mm256_set1_epi32((int)a->sig[l]), _mm256_loadu_si256((const __m256i *)(b->sig + o)));
            x = _mm256_add_epi32(_mm256_set1_epi32(a->x[l]), _mm256_loadu_si256((const __m256i *)(b->x + o)));
            m = _mm256_xor_si256(_mm256_set1_epi32((int)a->neg[l]), _mm256_loadu_si256((const __m256i *)(b->neg + o)));
        } else { /* the running values */
            sig = _mm256_loadu_si256((const __m256i *)(cur->sig + h));
            x = _mm256_loadu_si256((const __m256i *)(cur->x + h));
            m = _mm256_loadu_si256((const __m256i *)(cur->neg + h));
        }
        s = _mm256_sub_epi32(x, vue);
        shl = _mm256_max_epi32(s, zero);
        shr = _mm256_max_epi32(_mm256_sub_epi32(zero, s), zero); /* counts above 31 give 0 */
        sig = _mm256_sllv_epi32(sig, shl);
        v = _mm256_srlv_epi32(sig, shr);
        if (need_lost) {
            __m256i lost = _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_sllv_epi32(v, shr), sig), one);
            d = _mm256_or_si256(d, lost);
            if (sticky) v = _mm256_or_si256(_mm256_slli_epi32(v, 1), lost);
        }
        add8(_mm256_sub_epi32(_mm256_xor_si256(v, m), m), sum32, &lo, &hi);
    }
    store8(T + h, lo, hi, sum32);
    {
        int32_t dd[8];
        _mm256_storeu_si256((__m256i *)dd, d);
        for (int q = 0; q < 8; q++) dropped[h + q] = dd[q];
    }
}

MM_TGT256 static void block_sum_avx2(const uctx *g, const uline *a, const uline *b, ptrdiff_t pp, int64_t j0,
                                     int64_t l0, int64_t n, const ugroup *cur, const int32_t *ue, int need_lost,
                                     int64_t *T, int *dropped)
{
    for (int h = 0; h < LANES; h += 8)
        sum8_avx2(a, b, pp, j0, l0, n, cur, ue, g->sticky, g->sum32, need_lost, h, T, dropped);
}

/* block_exp without normalised products */
MM_TGT256 static int block_exp_avx2(const uctx *g, const uline *a, const uline *b, ptrdiff_t pp, int64_t j0,
                                    int64_t l0, int64_t n, const ugroup *cur, int32_t *E, int32_t *ue, int32_t *uef)
{
    const __m256i none = _mm256_set1_epi32(NONE), zero = _mm256_setzero_si256();
    for (int h = 0; h < LANES; h += 8) {
        __m256i z = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(cur->sig + h)), zero);
        __m256i e = _mm256_blendv_epi8(_mm256_loadu_si256((const __m256i *)(cur->E + h)), none, z);
        for (int64_t l = l0; l < l0 + n; l++)
            e = _mm256_max_epi32(e, _mm256_add_epi32(_mm256_set1_epi32(a->E[l]),
                                                     _mm256_loadu_si256((const __m256i *)(b->E + l * pp + j0 + h))));
        _mm256_storeu_si256((__m256i *)(E + h), e);
    }
    return block_units(g, E, ue, uef);
}

/* the same, sixteen lanes in AVX-512 */
MM_TGT512 static void block_sum_avx512(const uctx *g, const uline *a, const uline *b, ptrdiff_t pp, int64_t j0,
                                       int64_t l0, int64_t n, const ugroup *cur, const int32_t *ue, int need_lost,
                                       int64_t *T, int *dropped)
{
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
    const __m512i vue = _mm512_loadu_si512(ue);
    __m512i lo = zero, hi = zero;
    __mmask16 d = 0;
    for (int64_t l = l0; l <= l0 + n; l++) {
        __m512i sig, x, m, s, shl, shr, v;
        if (l < l0 + n) {
            const int64_t o = l * pp + j0;
            sig = _mm512_mullo_epi32(_mm512_set1_epi32((int)a->sig[l]), _mm512_loadu_si512(b->sig + o));
            x = _mm512_add_epi32(_mm512_set1_epi32(a->x[l]), _mm512_loadu_si512(b->x + o));
            m = _mm512_xor_si512(_mm512_set1_epi32((int)a->neg[l]), _mm512_loadu_si512(b->neg + o));
        } else {
            sig = _mm512_loadu_si512(cur->sig);
            x = _mm512_loadu_si512(cur->x);
            m = _mm512_loadu_si512(cur->neg);
        }
        s = _mm512_sub_epi32(x, vue);
        shl = _mm512_max_epi32(s, zero);
        shr = _mm512_max_epi32(_mm512_sub_epi32(zero, s), zero);
        sig = _mm512_sllv_epi32(sig, shl);
        v = _mm512_srlv_epi32(sig, shr);
        if (need_lost) {
            __mmask16 lost = _mm512_cmpneq_epi32_mask(_mm512_sllv_epi32(v, shr), sig);
            d |= lost;
            if (g->sticky) v = _mm512_mask_or_epi32(_mm512_slli_epi32(v, 1), lost, _mm512_slli_epi32(v, 1), one);
        }
        add16(_mm512_sub_epi32(_mm512_xor_si512(v, m), m), g->sum32, &lo, &hi);
    }
    store16(T, lo, hi, g->sum32);
    for (int q = 0; q < LANES; q++) dropped[q] = d >> q & 1;
}

MM_TGT512 static int block_exp_avx512(const uctx *g, const uline *a, const uline *b, ptrdiff_t pp, int64_t j0,
                                      int64_t l0, int64_t n, const ugroup *cur, int32_t *E, int32_t *ue, int32_t *uef)
{
    __mmask16 z = _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(cur->sig), _mm512_setzero_si512()), terms, ok;
    __m512i e = _mm512_mask_mov_epi32(_mm512_loadu_si512(cur->E), z, _mm512_set1_epi32(NONE)), e2 = e, u;
    int64_t l = l0;
    for (; l + 1 < l0 + n; l += 2) { /* two chains */
        e = _mm512_max_epi32(e, _mm512_add_epi32(_mm512_set1_epi32(a->E[l]), _mm512_loadu_si512(b->E + l * pp + j0)));
        e2 = _mm512_max_epi32(
            e2, _mm512_add_epi32(_mm512_set1_epi32(a->E[l + 1]), _mm512_loadu_si512(b->E + (l + 1) * pp + j0)));
    }
    if (l < l0 + n)
        e = _mm512_max_epi32(e, _mm512_add_epi32(_mm512_set1_epi32(a->E[l]), _mm512_loadu_si512(b->E + l * pp + j0)));
    e = _mm512_max_epi32(e, e2);
    _mm512_storeu_si512(E, e);
    /* block_units */
    terms = _mm512_cmpge_epi32_mask(e, _mm512_set1_epi32(NONE / 2));
    if (g->md->has_min_exp) e = _mm512_mask_max_epi32(e, terms, e, _mm512_set1_epi32(g->md->min_exp));
    u = _mm512_sub_epi32(e, _mm512_set1_epi32(g->W));
    _mm512_storeu_si512(ue, u);
    u = _mm512_maskz_mov_epi32(terms, u);
    _mm512_storeu_si512(uef, u);
    ok = _mm512_cmpge_epi32_mask(u, _mm512_set1_epi32(-126)) & _mm512_cmple_epi32_mask(u, _mm512_set1_epi32(126));
    return ok == 0xffff;
}

/* block_sum by binary32 arithmetic (uctx.fexact; no lost bits wanted; 2^-ue[q] a normal
 * binary32 number for every lane with terms, 1 for the others): a * b is exact, times
 * 2^-ue exact or below 1 in magnitude (then 0 as an integer, whatever the rounding or a
 * flush to zero), and the conversion to an integer truncates toward zero: the model's
 * alignment of the products.  The running values are aligned in integers. */
MM_TGT256 static void block_sumf_avx2(const uctx *g, const uline *a, const uline *b, ptrdiff_t pp, int64_t j0,
                                      int64_t l0, int64_t n, const ugroup *cur, const int32_t *ue, int64_t *T)
{
    const __m256i zero = _mm256_setzero_si256();
    for (int h = 0; h < LANES; h += 8) {
        __m256i vue = _mm256_loadu_si256((const __m256i *)(ue + h)), lo = zero, hi = zero;
        __m256 sc = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(127), vue), 23));
        {
            __m256i s = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)(cur->x + h)), vue);
            __m256i m = _mm256_loadu_si256((const __m256i *)(cur->neg + h));
            __m256i v = _mm256_srlv_epi32(_mm256_sllv_epi32(_mm256_loadu_si256((const __m256i *)(cur->sig + h)),
                                                            _mm256_max_epi32(s, zero)),
                                          _mm256_max_epi32(_mm256_sub_epi32(zero, s), zero));
            add8(_mm256_sub_epi32(_mm256_xor_si256(v, m), m), g->sum32, &lo, &hi);
        }
        for (int64_t l = l0; l < l0 + n; l++)
            add8(_mm256_cvttps_epi32(_mm256_mul_ps(
                     _mm256_mul_ps(_mm256_set1_ps(a->f[l]), _mm256_loadu_ps(b->f + l * pp + j0 + h)), sc)),
                 g->sum32, &lo, &hi);
        store8(T + h, lo, hi, g->sum32);
    }
}

MM_TGT512 static void block_sumf_avx512(const uctx *g, const uline *a, const uline *b, ptrdiff_t pp, int64_t j0,
                                        int64_t l0, int64_t n, const ugroup *cur, const int32_t *ue, int64_t *T)
{
    const __m512i zero = _mm512_setzero_si512();
    const __m512i vue = _mm512_loadu_si512(ue);
    const __m512 sc = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(127), vue), 23));
    __m512i lo = zero, hi = zero;
    {
        __m512i s = _mm512_sub_epi32(_mm512_loadu_si512(cur->x), vue), m = _mm512_loadu_si512(cur->neg);
        __m512i v = _mm512_srlv_epi32(_mm512_sllv_epi32(_mm512_loadu_si512(cur->sig), _mm512_max_epi32(s, zero)),
                                      _mm512_max_epi32(_mm512_sub_epi32(zero, s), zero));
        add16(_mm512_sub_epi32(_mm512_xor_si512(v, m), m), g->sum32, &lo, &hi);
    }
    for (int64_t l = l0; l < l0 + n; l++)
        add16(_mm512_cvttps_epi32(
                  _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(a->f[l]), _mm512_loadu_ps(b->f + l * pp + j0)), sc)),
              g->sum32, &lo, &hi);
    store16(T, lo, hi, g->sum32);
}

/* block_sumf_avx512 for terms of up to 62 bits (not uctx.narrow): the conversions to 64-bit
 * integers, the running values in binary32 too (exact: a value of the output format) */
MM_TGT512 static void block_sumf_wide_avx512(const uline *a, const uline *b, ptrdiff_t pp, int64_t j0, int64_t l0,
                                             int64_t n, const ugroup *cur, const int32_t *ue, int64_t *T)
{
    const __m512i vue = _mm512_loadu_si512(ue);
    const __m512 sc = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(127), vue), 23));
    __m512i lo, hi;
    {
        __m512i m = _mm512_loadu_si512(cur->neg), sig = _mm512_loadu_si512(cur->sig);
        __m512i s = _mm512_sub_epi32(_mm512_loadu_si512(cur->x), vue); /* at most W + 1 */
        __mmask16 big = _mm512_cmpge_epi32_mask(s, _mm512_set1_epi32(-126)); /* else below 2^-102: 0 */
        __m512 p2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(s, _mm512_set1_epi32(127)), 23));
        __m512 v = _mm512_maskz_mul_ps(big, _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_xor_si512(sig, m), m)), p2);
        lo = _mm512_cvttps_epi64(_mm512_castps512_ps256(v));
        hi = _mm512_cvttps_epi64(_mm512_extractf32x8_ps(v, 1));
    }
    for (int64_t l = l0; l < l0 + n; l++) {
        __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(a->f[l]), _mm512_loadu_ps(b->f + l * pp + j0)), sc);
        lo = _mm512_add_epi64(lo, _mm512_cvttps_epi64(_mm512_castps512_ps256(v)));
        hi = _mm512_add_epi64(hi, _mm512_cvttps_epi64(_mm512_extractf32x8_ps(v, 1)));
    }
    _mm512_storeu_si512(T, lo);
    _mm512_storeu_si512(T + 8, hi);
}

/* the scalar lanes' work of unit_group for a block (finish), sixteen lanes in AVX-512: the
 * sums' bit lengths from their binary64 values (|T| < 2^62: corrected where the conversion
 * rounded up to a power of two) */
MM_TGT512 static void finish_avx512(const uctx *g, const int32_t *E, const int32_t *ue, const int64_t *T,
                                    const int *dropped, ugroup *cur, int *live, uint8_t *fl)
{
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1);
    const __m512i emin = _mm512_set1_epi64(g->emin_o), emax = _mm512_set1_epi64(g->emax_o);
    const __m512i P = _mm512_set1_epi64(g->P);
    __mmask16 allinex = 0;
    for (int h = 0; h < LANES; h += 8) {
        __m512i t = _mm512_loadu_si512(T + h), mag = _mm512_abs_epi64(t), e, bl, top, sh, q, rem, half, x;
        __mmask8 neg = _mm512_cmplt_epi64_mask(t, zero), nz = _mm512_cmpneq_epi64_mask(t, zero);
        __mmask8 terms = _mm256_cmpgt_epi32_mask(_mm256_loadu_si256((const __m256i *)(E + h)),
                                                 _mm256_set1_epi32(NONE / 2));
        __mmask8 drop = _mm256_cmpneq_epi32_mask(_mm256_loadu_si256((const __m256i *)(dropped + h)),
                                                 _mm256_setzero_si256());
        __mmask8 ok, rnz, up = 0, carry, inexact, bad;
        e = _mm512_sub_epi64(_mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(ue + h))),
                             _mm512_set1_epi64(g->sticky));
        bl = _mm512_sub_epi64(_mm512_srli_epi64(_mm512_castpd_si512(_mm512_cvtepi64_pd(mag)), 52),
                              _mm512_set1_epi64(1022));
        /* above 2^53 the conversion may round up to the next power of two: one bit less */
        bl = _mm512_mask_sub_epi64(bl, _mm512_cmpeq_epi64_mask(_mm512_srlv_epi64(mag, _mm512_sub_epi64(bl, one)), zero),
                                   bl, one);
        top = _mm512_add_epi64(e, _mm512_sub_epi64(bl, one));
        sh = _mm512_max_epi64(_mm512_sub_epi64(bl, P), zero);
        q = _mm512_srlv_epi64(mag, sh);
        rem = _mm512_sub_epi64(mag, _mm512_sllv_epi64(q, sh));
        half = _mm512_srli_epi64(_mm512_sllv_epi64(one, sh), 1);
        rnz = _mm512_cmpneq_epi64_mask(rem, zero);
        switch (g->rounding) {
        case SFP8_ROUND_NEAREST_EVEN:
            up = rnz & (_mm512_cmpgt_epi64_mask(rem, half) |
                        (_mm512_cmpeq_epi64_mask(rem, half) & _mm512_test_epi64_mask(q, one)));
            break;
        case SFP8_ROUND_NEAREST_AWAY: up = rnz & _mm512_cmpge_epi64_mask(rem, half); break;
        case SFP8_ROUND_UPWARD: up = rnz & (__mmask8)~neg; break;
        case SFP8_ROUND_DOWNWARD: up = rnz & neg; break;
        default: break;
        }
        q = _mm512_mask_add_epi64(q, up, q, one);
        carry = _mm512_cmpneq_epi64_mask(_mm512_srlv_epi64(q, P), zero); /* into the next binade */
        q = _mm512_mask_srli_epi64(q, carry, q, 1);
        sh = _mm512_mask_add_epi64(sh, carry, sh, one);
        top = _mm512_mask_add_epi64(top, carry, top, one);
        ok = _mm512_cmpge_epi64_mask(top, emin) & _mm512_cmple_epi64_mask(top, emax);
        x = _mm512_add_epi64(e, sh);
        inexact = terms & (rnz | drop);
        bad = terms & nz & (__mmask8)~ok;
        /* lanes with a normal result take it; every other lane +0 */
        {
            __mmask8 take = terms & nz & ok;
            __m256i sig32 = _mm512_cvtepi64_epi32(_mm512_maskz_mov_epi64(take, q));
            __m256i neg32 = _mm256_maskz_mov_epi32(take & neg, _mm256_set1_epi32(-1));
            _mm256_storeu_si256((__m256i *)(cur->sig + h), sig32);
            _mm256_storeu_si256((__m256i *)(cur->neg + h), neg32);
            _mm256_mask_storeu_epi32(cur->x + h, take, _mm512_cvtepi64_epi32(x));
            _mm256_mask_storeu_epi32(cur->E + h, take, _mm512_cvtepi64_epi32(top));
        }
        allinex |= (__mmask16)((unsigned)inexact << h);
        for (int qq = 0; bad >> qq; qq++)
            if (bad >> qq & 1) live[h + qq] = 0;
    }
    /* the inexact flags of the lanes, one masked byte operation */
    {
        __m128i v = _mm_loadu_si128((const __m128i *)fl);
        _mm_storeu_si128((__m128i *)fl,
                         _mm_mask_mov_epi8(v, allinex, _mm_or_si128(v, _mm_set1_epi8((char)SFP8_FLAG_INEXACT))));
    }
}
#endif

/* a block's sum rounded to P significant bits into lane q of r; 0: not a normal number of
 * fo (the lane is left to the generic kernel) */
static int round_block(const uctx *g, int neg, uint64_t mag, int64_t e, ugroup *r, int q, uint8_t *lf)
{
    int bl = bitlen64(mag);
    int64_t top = e + bl - 1;
    if (top < g->emin_o || top > g->emax_o) return 0;
    if (bl > g->P) {
        int sh = bl - g->P, up = 0;
        uint64_t qq = mag >> sh, rem = mag & (((uint64_t)1 << sh) - 1), half = (uint64_t)1 << (sh - 1);
        if (rem) {
            *lf |= SFP8_FLAG_INEXACT;
            switch (g->rounding) {
            case SFP8_ROUND_NEAREST_EVEN: up = rem > half || (rem == half && (qq & 1)); break;
            case SFP8_ROUND_NEAREST_AWAY: up = rem >= half; break;
            case SFP8_ROUND_UPWARD: up = !neg; break;
            case SFP8_ROUND_DOWNWARD: up = neg; break;
            default: break;
            }
        }
        qq += (uint64_t)up;
        if (qq >> g->P) { /* carried into the next binade */
            qq >>= 1;
            sh++;
            if (++top > g->emax_o) return 0;
        }
        mag = qq;
        e += sh;
    }
    r->sig[q] = (uint32_t)mag;
    r->x[q] = (int32_t)e;
    r->E[q] = (int32_t)top; /* nominal(r, -126): top >= emin_o >= -126 */
    r->neg[q] = neg ? ~(uint32_t)0 : 0;
    return 1;
}

/* outputs j0 .. j0 + 7 of row a from the running values cur: out[q], fl[q]; live[q] 0 for
 * a lane the generic kernel computes (set to 0 here when the lane leaves the fast path) */
/* the terms of a block (l0 .. l0 + n - 1, and the running values cur) per lane: their
 * exponent E, unit 2^ue, aligned sum T and whether bits were dropped */
static void group_terms(const uctx *g, int level, int need_lost, const uline *a, const uline *b, ptrdiff_t pp,
                        int64_t j0, int64_t l0, int64_t n, const ugroup *cur, int32_t *E, int32_t *ue, int64_t *T,
                        int *dropped)
{
    int32_t uef[LANES];
    int inrange;
#if MM_SIMD
    if (level >= 2 && !g->norm) inrange = block_exp_avx512(g, a, b, pp, j0, l0, n, cur, E, ue, uef);
    else if (level >= 1 && !g->norm) inrange = block_exp_avx2(g, a, b, pp, j0, l0, n, cur, E, ue, uef);
    else
#endif
        inrange = block_exp(g, a, b, pp, j0, l0, n, cur, E, ue, uef);
#if MM_SIMD
    if (level >= 1 && g->narrow && g->fexact && !need_lost && !g->sticky && inrange) {
        if (level >= 2) block_sumf_avx512(g, a, b, pp, j0, l0, n, cur, uef, T);
        else block_sumf_avx2(g, a, b, pp, j0, l0, n, cur, uef, T);
        memset(dropped, 0, LANES * sizeof *dropped);
    } else if (level >= 2 && g->fexact && !need_lost && !g->sticky && inrange) {
        block_sumf_wide_avx512(a, b, pp, j0, l0, n, cur, uef, T);
        memset(dropped, 0, LANES * sizeof *dropped);
    } else if (level >= 2 && g->narrow) block_sum_avx512(g, a, b, pp, j0, l0, n, cur, ue, need_lost, T, dropped);
    else if (level >= 1 && g->narrow) block_sum_avx2(g, a, b, pp, j0, l0, n, cur, ue, need_lost, T, dropped);
    else
#endif
        block_sum(g, a, b, pp, j0, l0, n, cur, ue, T, dropped);
}

/* the late addend and the odd/even groups: per lane, the products' partial sum (group 1, or
 * the two-term alignment of groups 1 and 2) and the running value aligned as two terms
 * (bfma.c's sfp8u_two_term), the result rounded into cur */
static void late_lanes(const uctx *g, const int32_t *E1, const int32_t *ue1, const int64_t *T1, const int *d1,
                       const int32_t *E2, const int32_t *ue2, const int64_t *T2, const int *d2, ugroup *cur,
                       int *live, uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    for (int q = 0; q < LANES; q++) {
        sfp8u_psum sp = {0, SFP8U_NO_EXP}, sc = {0, SFP8U_NO_EXP};
        int64_t E;
        int xo = 0, inexact = 0, dropped = d1[q] | (E2 ? d2[q] : 0);
        __int128 T;
        uint64_t mag;
        if (!live[q]) continue;
        if (E1[q] >= NONE / 2) {
            sp.T = T1[q];
            sp.E = (int64_t)ue1[q] + g->W;
        }
        if (E2) {
            sfp8u_psum so = {0, SFP8U_NO_EXP};
            if (E2[q] >= NONE / 2) {
                so.T = T2[q];
                so.E = (int64_t)ue2[q] + g->W;
            }
            sp.T = sfp8u_two_term(sp, so, 0, md->align_rounding, -1, &sp.E, &xo, &inexact);
        } else if (E1[q] < NONE / 2) { /* late addend, no product: the running value */
            if (!cur->sig[q]) cur->neg[q] = 0;
            continue;
        }
        if (cur->sig[q]) {
            sc.E = cur->E[q];
            sc.T = (__int128)cur->sig[q] << (cur->x[q] - (sc.E - g->W)); /* W >= 23 here: exact */
            if (cur->neg[q]) sc.T = -sc.T;
        } else if (md->has_zero_addend_exp) {
            sc.E = md->zero_addend_exp;
        }
        if (E2 && sp.E == SFP8U_NO_EXP && sc.E == SFP8U_NO_EXP) { /* nothing at all: +0 */
            cur->sig[q] = cur->neg[q] = 0;
            continue;
        }
        T = sfp8u_two_term(sp, sc, md->addend_extra_bits, md->align_rounding, E2 ? 25 : -1, &E, &xo, &inexact);
        if (dropped || inexact) fl[q] |= SFP8_FLAG_INEXACT;
        if (T == 0) {
            cur->sig[q] = cur->neg[q] = 0;
            continue;
        }
        mag = T < 0 ? (uint64_t)-T : (uint64_t)T;
        if ((T < 0 ? -T : T) >> 62 || !round_block(g, T < 0, mag, E - g->W - xo, cur, q, &fl[q])) {
            live[q] = 0; /* a sum of 63 bits or more, or not a normal number: the generic kernel */
            cur->sig[q] = 0;
        }
    }
}

static const ugroup NO_RUNNING; /* zeros: groups without the running value */

/* outputs j0 .. j0 + 15 of row a from the running values cur: out[q], fl[q]; live[q] 0 for
 * a lane the generic kernel computes (set to 0 here when the lane leaves the fast path) */
static void unit_group(const uctx *g, int level, int need_lost, const uline *a, const uline *b, ptrdiff_t pp,
                       int64_t j0, int64_t k, ugroup *cur, int *live, uint64_t *out, uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    int32_t E[LANES], ue[LANES], E2[LANES], ue2[LANES];
    int64_t T[LANES], T2[LANES];
    int dropped[LANES], d2[LANES];
    for (int64_t k0 = 0; k0 < k; k0 += md->block) {
        int64_t n = k - k0 < md->block ? k - k0 : md->block;
        if (g->oddeven) { /* even positions first, then odd ones (the decoding's order) */
            int64_t ne = (n + 1) / 2;
            group_terms(g, level, need_lost, a, b, pp, j0, k0, ne, &NO_RUNNING, E, ue, T, dropped);
            group_terms(g, level, need_lost, a, b, pp, j0, k0 + ne, n - ne, &NO_RUNNING, E2, ue2, T2, d2);
            late_lanes(g, E, ue, T, dropped, E2, ue2, T2, d2, cur, live, fl);
            continue;
        }
        if (g->late) {
            group_terms(g, level, need_lost, a, b, pp, j0, k0, n, &NO_RUNNING, E, ue, T, dropped);
            late_lanes(g, E, ue, T, dropped, NULL, NULL, NULL, NULL, cur, live, fl);
            continue;
        }
        group_terms(g, level, need_lost, a, b, pp, j0, k0, n, cur, E, ue, T, dropped);
#if MM_SIMD
        if (level >= 2) {
            finish_avx512(g, E, ue, T, dropped, cur, live, fl);
            continue;
        }
#endif
        for (int q = 0; q < LANES; q++) {
            if (!live[q]) continue;
            if (E[q] < NONE / 2) { /* no term: +0 */
                cur->sig[q] = 0;
                continue;
            }
            if (dropped[q]) fl[q] |= SFP8_FLAG_INEXACT;
            if (T[q] == 0) {
                cur->sig[q] = 0;
                cur->neg[q] = 0;
            } else if (!round_block(g, T[q] < 0, T[q] < 0 ? -(uint64_t)T[q] : (uint64_t)T[q],
                                    g->sticky ? ue[q] - 1 : ue[q], cur, q, &fl[q])) {
                live[q] = 0;
                cur->sig[q] = 0;
            }
        }
    }
    for (int q = 0; q < LANES; q++) {
        const sfp8_format *f = &md->fo;
        uint64_t sig = cur->sig[q];
        if (!sig) {
            out[q] = 0; /* +0 */
            continue;
        }
        out[q] = (uint64_t)(cur->neg[q] & 1) << (f->bits - 1) | (uint64_t)(cur->E[q] + f->bias) << f->man_bits |
                 ((sig << (f->man_bits + 1 - bitlen64(sig))) & (((uint64_t)1 << f->man_bits) - 1));
    }
}

/* the addend of an output as its first running value (lane q of cur); 0: left to the
 * generic kernel */
static int addend(const uctx *g, const char *C, uint64_t code, ugroup *cur, int q, uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    sfp8u_value v;
    int64_t top;
    cur->sig[q] = 0;
    cur->neg[q] = 0;
    cur->x[q] = 0;
    cur->E[q] = NONE;
    if (!C) return 1;
    sfp8u_decode(&md->fo, code, &v);
    if (v.cls == SFP8U_NAN || v.cls == SFP8U_INF) return 0;
    if (v.sub) *fl |= SFP8_FLAG_DENORMAL;
    if (v.cls != SFP8U_FINITE) return 1;
    if (v.sub && !md->out_subnormals) { /* read as +0 (docs: "The addend") */
        *fl |= SFP8_FLAG_INEXACT;
        return 1;
    }
    top = v.exp + bitlen64(v.sig) - 1;
    cur->sig[q] = (uint32_t)v.sig;
    cur->x[q] = (int32_t)v.exp;
    cur->neg[q] = v.neg ? ~(uint32_t)0 : 0;
    cur->E[q] = (int32_t)(top > -126 ? top : -126);
    return 1;
}

/* where operand l of a dot product of k is stored: in order, or (odd/even grouping) each
 * block's even positions first, then its odd ones */
static int64_t slot(const uctx *g, int64_t l, int64_t k)
{
    int64_t blk = g->md->block, k0 = l / blk * blk, n = k - k0 < blk ? k - k0 : blk, r = l - k0;
    if (!g->oddeven) return l;
    return k0 + (r & 1 ? (n + 1) / 2 + r / 2 : r / 2);
}


static void *lines(int64_t n, uline *u)
{
    char *mem = malloc((size_t)(n > 0 ? n : 1) * 20 + 64);
    if (!mem) return NULL;
    u->sig = (uint32_t *)mem;
    u->neg = (uint32_t *)(mem + 4 * n);
    u->x = (int32_t *)(mem + 8 * n);
    u->E = (int32_t *)(mem + 12 * n);
    u->f = (float *)(mem + 16 * n);
    return mem;
}

/* one call's state (sfp8m_unit_gemm) */
typedef struct {
    const sfp8u_model *md;
    uctx g;
    const char *A, *B, *C;
    char *O;
    ptrdiff_t am, ak, bk, bp, cm, cp, om, op, pp;
    int64_t m, k, p;
    int sa, so, level, used, wa, wb;
    int32_t maxb;
    udecoder da, db;
    uline ub;
    int lean, bfull;   /* operands by the lean decoding (sfp8mu_lean_ieee / 8); B decoded in full */
    int leana, leanb;  /* their kinds (sfp8mu_lean_ok) */
    ulean8 la8, lb8;   /* the 8-bit tables */
    uint16_t *codes;   /* a line's codes for the lean decoding (room for 32-bit ones) */
    urange rb;
    const unsigned char *colbad, *colsub;
    void *fcs; /* sfp8mu_fc_rows256's scratch (or NULL) */
    unsigned flags;
} ujob;

/* row i of A decoded into u: *rowbad (also set when a product may overflow and the model
 * keeps products in range), *rowsub, *rg */
/* B decoded in full (every field of uline), row-major; the padding columns zeros */
static void decode_b(ujob *J)
{
    uline v = J->ub;
    const ucode zero = {.E = NONE, .top = NONE};
    int sb = code_size(&J->md->fb);
    unsigned char *colbad = (unsigned char *)J->colbad, *colsub = (unsigned char *)J->colsub;
    for (int64_t l = 0; l < J->k; l++) {
        int64_t s = slot(&J->g, l, J->k) * J->pp;
        for (int64_t j = 0; j < J->p; j++) {
            ucode tmp;
            put(sfp8mu_lookup(&J->g, &J->db, load_raw(J->B + l * J->bk + j * J->bp, sb), &tmp), &v, s + j, &colbad[j],
                &colsub[j], &J->wb, &J->rb);
        }
        for (int64_t j = J->p; j < J->pp; j++) put(&zero, &v, s + j, &colbad[j], &colsub[j], &J->wb, &J->rb);
    }
    for (int64_t x = 0; x < J->k * J->pp; x++)
        if (J->ub.E[x] > J->maxb) J->maxb = J->ub.E[x];
    J->bfull = 1;
}

/* n codes at src (stride st bytes) by the lean decoding of kind lean (8, 16 or 32) */
static void lean_line(ujob *J, const udecoder *D, const ulean8 *t, int lean, const char *src, ptrdiff_t st, int64_t n,
                      int32_t *E, float *f, unsigned char *bad, unsigned char *sub, ulean *out)
{
    if (lean == 32) {
        uint32_t *c32 = (uint32_t *)(void *)J->codes;
        for (int64_t j = 0; j < n; j++) c32[j] = (uint32_t)load_raw(src + j * st, 4);
        (J->level >= 2 ? sfp8mu_lean_ieee : sfp8mu_lean_ieee256)(&J->g, D, c32, n, E, f, bad, sub, out);
    } else if (lean == 16) {
        for (int64_t j = 0; j < n; j++) J->codes[j] = (uint16_t)load_raw(src + j * st, 2);
        (J->level >= 2 ? sfp8mu_lean_ieee : sfp8mu_lean_ieee256)(&J->g, D, J->codes, n, E, f, bad, sub, out);
    } else {
        uint8_t *c8 = (uint8_t *)J->codes;
        for (int64_t j = 0; j < n; j++) c8[j] = (uint8_t)load_raw(src + j * st, 1);
        (J->level >= 2 ? sfp8mu_lean8 : sfp8mu_lean8_256)(D, t, c8, n, E, f, bad, sub, out);
    }
}

/* B by the lean decoding: E and f only, straight into the binary32 carry kernel's panels
 * (per column group, per l, E[16] and f[16]; tE, tF: one row of B, pp elements) */
static void decode_b_lean(ujob *J, fcpanel *panels, int32_t *tE, float *tF)
{
    for (int64_t l = 0; l < J->k; l++) {
        ulean st;
        lean_line(J, &J->db, &J->lb8, J->leanb, J->B + l * J->bk, J->bp, J->p, tE, tF, (unsigned char *)J->colbad,
                  (unsigned char *)J->colsub, &st);
        for (int64_t j = J->p; j < J->pp; j++) {
            tE[j] = NONE;
            tF[j] = 0.0f;
        }
        for (int64_t j0 = 0; j0 < J->pp; j0 += LANES) {
            fcpanel *P = &panels[(j0 / LANES) * J->k + l];
            memcpy(P->E, tE + j0, sizeof P->E);
            memcpy(P->f, tF + j0, sizeof P->f);
        }
        if (st.lo < J->rb.lo) J->rb.lo = st.lo;
        if (st.hi > J->rb.hi) J->rb.hi = st.hi;
        if (st.maxE > J->maxb) J->maxb = st.maxE;
        J->rb.nof |= st.anynof;
        if (J->leanb != 8 && st.wide > J->wb) J->wb = st.wide;
    }
    /* a bound of the significands' widths (ieee decoders: measured) */
    if (J->leanb == 8) J->wb = J->md->fb.man_bits + 1;
}

/* row i of A by the lean decoding (E and f of u), as decode_row */
static void decode_row_lean(ujob *J, int64_t i, uline *u, int *rowbad, int *rowsub, urange *rg)
{
    ulean st;
    lean_line(J, &J->da, &J->la8, J->leana, J->A + i * J->am, J->ak, J->k, u->E, u->f, NULL, NULL, &st);
    rg->lo = st.lo;
    rg->hi = st.hi;
    rg->nof = st.anynof;
    *rowbad = st.anybad;
    *rowsub = st.anysub;
    const int wa = J->leana == 8 ? J->md->fa.man_bits + 1 : st.wide; /* ieee decoders: measured */
    if (J->wa < wa) J->wa = wa;
    if (!J->md->product_overflow && st.maxE >= NONE / 2 && J->maxb >= NONE / 2 &&
        (int64_t)st.maxE + J->maxb >= J->g.emax_o)
        *rowbad = 1;
}

static void decode_row(ujob *J, int64_t i, uline *u, int *rowbad, int *rowsub, urange *rg)
{
    const sfp8u_model *md = J->md;
    const char *src = J->A + i * J->am;
    uline v = *u; /* the pointers in locals: the stores cannot change them */
    urange r = NO_RANGE;
    unsigned char bad = 0, sub = 0;
    int wide = J->wa;
    int32_t maxa = NONE;
    for (int64_t l = 0; l < J->k; l++) {
        int64_t s = slot(&J->g, l, J->k);
        ucode tmp;
        const ucode *d = sfp8mu_lookup(&J->g, &J->da, load_raw(src + l * J->ak, J->sa), &tmp);
        put(d, &v, s, &bad, &sub, &wide, &r);
        if (d->E > maxa) maxa = d->E;
    }
    J->wa = wide;
    *rg = r;
    *rowbad = bad;
    *rowsub = sub;
    /* products kept in the output's range (product_overflow off): the row is left to the
       generic kernel unless no product can reach 2^(emax + 1) (|a b| < 2^(Ea + Eb + 1)) */
    if (!md->product_overflow && maxa >= NONE / 2 && J->maxb >= NONE / 2 && (int64_t)maxa + J->maxb >= J->g.emax_o)
        *rowbad = 1;
}

/* the lanes' first running values (the addends) and flags for row i, columns j0 .. */
static void start_lanes(ujob *J, int64_t i, int64_t j0, int rowbad, int rowsub, ugroup *cur, int *live, uint8_t *fl)
{
    for (int q = 0; q < LANES; q++) {
        int64_t j = j0 + q;
        fl[q] = rowsub || J->colsub[j] ? SFP8_FLAG_DENORMAL : 0;
        live[q] = j < J->p && !rowbad && !J->colbad[j] &&
                  addend(&J->g, J->C, J->C && j < J->p ? load_raw(J->C + i * J->cm + j * J->cp, J->so) : 0, cur, q,
                         &fl[q]);
        if (!live[q]) addend(&J->g, NULL, 0, cur, q, &fl[q]);
    }
}

/* outputs of row i, columns j0 .. j0 + 15: the live lanes' codes stored, the others by the
 * generic kernel */
static void deliver(ujob *J, int64_t i, int64_t j0, const int *live, const uint64_t *out, const uint8_t *fl)
{
    for (int q = 0; q < LANES && j0 + q < J->p; q++) {
        int64_t j = j0 + q;
        if (live[q]) {
            store_raw(J->O + i * J->om + j * J->op, J->so, out[q]);
            J->flags |= fl[q];
            J->used = 1;
        } else { /* the generic kernel, for this output alone */
            J->flags |= sfp8u_gemm(J->md, J->A + i * J->am, J->am, J->ak, J->B + j * J->bp, J->bk, J->bp,
                                   J->C ? J->C + i * J->cm + j * J->cp : NULL, J->cm, J->cp,
                                   J->O + i * J->om + j * J->op, J->om, J->op, 1, J->k, 1);
        }
    }
}

/* row i of A (decoded in ua) by the integer kernels */
static void int_row(ujob *J, int64_t i, const uline *ua, int rowbad, int rowsub)
{
    uctx *g = &J->g;
    /* 32-bit lanes: products below 2^32, terms with sign and sticky bit below 2^31 */
    g->narrow = J->wa + J->wb <= 32 && g->W + 2 + g->sticky <= 30;
    g->sum32 = g->W + 2 + g->sticky + bitlen64((uint64_t)J->md->block + 1) <= 31;
    for (int64_t j0 = 0; j0 < J->p; j0 += LANES) {
        ugroup cur;
        int live[LANES];
        uint64_t out[LANES];
        uint8_t fl[LANES];
        start_lanes(J, i, j0, rowbad, rowsub, &cur, live, fl);
        /* lost bits matter for the sticky bit, and for the inexact flag until it is raised */
        unit_group(g, J->level, g->sticky || !(J->flags & SFP8_FLAG_INEXACT), ua, &J->ub, J->pp, j0, J->k, &cur, live,
                   out, fl);
        deliver(J, i, j0, live, out, fl);
    }
}

/* a binary32 number of the output format (a block result or an addend) as its code */
static uint64_t code_of(const sfp8_format *f, float v)
{
    uint32_t u;
    int32_t top;
    if (v == 0.0f) return 0; /* +0 */
    memcpy(&u, &v, 4);
    top = (int32_t)(u >> 23 & 255) - 127;
    return (uint64_t)(u >> 31) << (f->bits - 1) | (uint64_t)(top + f->bias) << f->man_bits |
           (uint64_t)((u & 0x7fffffu) >> (23 - f->man_bits));
}

/* rows i0 .. i0 + nr - 1 (nr <= FC_ROWS, decoded in ua[]) by the binary32 carry kernel */
static void fc_rows(ujob *J, int64_t i0, int nr, const uline *ua, const int *rowbad, const int *rowsub,
                    const fcpanel *panels, const uline *dummy)
{
    const int32_t *aE[FC_ROWS];
    const float *af[FC_ROWS];
    for (int r = 0; r < FC_ROWS; r++) {
        aE[r] = (r < nr ? &ua[r] : dummy)->E;
        af[r] = (r < nr ? &ua[r] : dummy)->f;
    }
    for (int64_t j0 = 0; j0 < J->p; j0 += LANES) {
        float c[FC_ROWS * LANES];
        int32_t cE[FC_ROWS * LANES];
        int live[FC_ROWS * LANES];
        uint8_t fl[FC_ROWS * LANES];
        for (int r = 0; r < FC_ROWS; r++) {
            ugroup cur;
            if (r < nr && !J->C) { /* no addend: +0 */
                for (int q = 0; q < LANES; q++) {
                    int64_t j = j0 + q;
                    live[LANES * r + q] = j < J->p && !rowbad[r] && !J->colbad[j];
                    fl[LANES * r + q] = rowsub[r] || J->colsub[j] ? SFP8_FLAG_DENORMAL : 0;
                    c[LANES * r + q] = 0.0f;
                    cE[LANES * r + q] = NONE;
                }
                continue;
            }
            if (r < nr) start_lanes(J, i0 + r, j0, rowbad[r], rowsub[r], &cur, live + LANES * r, fl + LANES * r);
            for (int q = 0; q < LANES; q++) {
                int ok = r < nr && live[LANES * r + q] && cur.sig[q];
                c[LANES * r + q] = ok ? (cur.neg[q] ? -1.0f : 1.0f) * ldexpf((float)cur.sig[q], cur.x[q]) : 0.0f;
                cE[LANES * r + q] = ok ? cur.E[q] : NONE;
                if (r >= nr) live[LANES * r + q] = 0, fl[LANES * r + q] = 0;
            }
        }
        if (J->level >= 2)
            sfp8mu_fc_rows(&J->g, aE, af, panels + (j0 / LANES) * J->k, J->k, c, cE, live, fl,
                           !(J->flags & SFP8_FLAG_INEXACT));
        else
            sfp8mu_fc_rows256(&J->g, aE, af, panels + (j0 / LANES) * J->k, J->k, c, cE, live, fl,
                              !(J->flags & SFP8_FLAG_INEXACT), J->fcs, j0 / LANES, J->pp / LANES);
        for (int r = 0; r < nr; r++) {
            uint64_t out[LANES];
            int all = 1, n = J->p - j0 < LANES ? (int)(J->p - j0) : LANES;
            uint8_t any = 0;
            for (int q = 0; q < n; q++) {
                all &= live[LANES * r + q];
                any |= fl[LANES * r + q];
            }
            if (all && J->so == 4 && J->md->fo.bits == 32 && J->md->fo.man_bits == 23 && J->md->fo.bias == 127) {
                /* binary32 outputs, every lane: the values' bits are the codes (no -0: a zero is +0) */
                char *o = J->O + (i0 + r) * J->om + j0 * J->op;
                for (int q = 0; q < n; q++) memcpy(o + q * J->op, &c[LANES * r + q], 4);
                J->flags |= any;
                J->used = 1;
                continue;
            }
            for (int q = 0; q < LANES; q++) out[q] = code_of(&J->md->fo, c[LANES * r + q]);
            deliver(J, i0 + r, j0, live + LANES * r, out, fl + LANES * r);
        }
    }
}

unsigned sfp8m_unit_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                         ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O,
                         ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k, int64_t p, int fast)
{
    ujob J;
    uctx *g = &J.g;
    uline ua[FC_ROWS], dummy;
    udecoder db = {0};
    void *ma[FC_ROWS] = {0}, *mb = NULL, *md0 = NULL;
    unsigned char *colbad = NULL, *colsub;
    fcpanel *panels = NULL;
    int fc, nomem = 0;
    ptrdiff_t pp = (p + LANES - 1) / LANES * LANES;
    fenv_t fe;
    if (fast && md->order != SFP8U_BLOCK) /* the orders' fast path (mm_orders.c), which falls back to sfp8u_gemm */
        return sfp8m_orders_gemm(md, A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p);
    if (m <= 0 || p <= 0) return 0;
    if (fast && sfp8mu_fp_mode(md, k)) return sfp8mu_fp_gemm(md, sfp8mu_fp_mode(md, k), A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p);
    {
        unsigned tfl;
        if (fast && sfp8mu_fp_tf32_gemm(md, A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p, &tfl))
            return tfl;
    }
    if (!fast || !covers(md, k)) return sfp8u_gemm(md, A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p);
    /* the binary32 route raises no floating-point flag of the caller's thread (as sfp8m_gemm) */
    feholdexcept(&fe);
    memset(&J, 0, sizeof J);
    J.md = md;
    J.A = A, J.B = B, J.C = C, J.O = O;
    J.am = am, J.ak = ak, J.bk = bk, J.bp = bp, J.cm = cm, J.cp = cp, J.om = om, J.op = op, J.pp = pp;
    J.m = m, J.k = k, J.p = p;
    J.sa = code_size(&md->fa);
    J.so = code_size(&md->fo);
    J.level = sfp8f_simd_level();
    J.maxb = NONE;
    g->md = md;
    g->W = 23 + md->extra_bits;
    g->P = md->fo.man_bits + (md->extra_bits < 0 ? md->extra_bits : 0) + 1;
    g->rounding = md->envo.rounding;
    g->late = md->grouping == SFP8U_GLOBAL && md->late_addend;
    g->oddeven = md->grouping == SFP8U_ODD_EVEN;
    g->sticky = md->sticky && !g->late && !g->oddeven; /* the two-term groupings align without it */
    g->norm = md->normalized_products;
    g->emin_a = fmt_emin(&md->fa);
    g->emin_b = fmt_emin(&md->fb);
    g->emin_o = fmt_emin(&md->fo);
    g->emax_o = ((int64_t)1 << md->fo.exp_bits) - 2 - md->fo.bias;
    /* operands of at most 12 significant bits, their values and products normal binary32
       numbers: a * b is exact in binary32 (the binary32 route of the SIMD kernels) */
    g->fexact = md->fa.man_bits <= 11 && md->fb.man_bits <= 11 && md->fa.bits <= 16 && md->fb.bits <= 16 &&
                fmt_low(&md->fa) >= -126 && fmt_low(&md->fb) >= -126 && fmt_top(&md->fa) <= 127 &&
                fmt_top(&md->fb) <= 127 && fmt_low(&md->fa) + fmt_low(&md->fb) >= -126 &&
                fmt_top(&md->fa) + fmt_top(&md->fb) <= 127;
    fc = sfp8mu_fc_covers(g, J.level);
    g->fvals = fc; /* the binary32 carry kernel: the operands' binary32 values, where they are ones */
    for (int r = 0; r < (fc ? FC_ROWS : 1); r++) nomem |= !(ma[r] = lines(k, &ua[r]));
    mb = lines(k * pp, &J.ub);
    colbad = calloc((size_t)pp, 2);
    if (fc && !(md0 = lines(k, &dummy))) nomem = 1;
    if (nomem || !mb || !colbad || !sfp8mu_decoder_init(g, &J.da, &md->fa, g->emin_a, m * k) ||
        !sfp8mu_decoder_init(g, &db, &md->fb, g->emin_b, k * p)) {
        for (int r = 0; r < FC_ROWS; r++) free(ma[r]);
        free(md0);
        free(mb);
        free(colbad);
        free(J.da.tab);
        free(db.tab);
        fesetenv(&fe);
        return SFP8U_NOMEM;
    }
    colsub = colbad + pp;
    J.colbad = colbad;
    J.colsub = colsub;
    J.rb = NO_RANGE;
    J.db = db;
    J.leana = sfp8mu_lean_ok(&J.da, J.level);
    J.leanb = sfp8mu_lean_ok(&db, J.level);
    J.lean = fc && J.leana && J.leanb && !g->oddeven;
    if (J.lean && J.leana == 8) sfp8mu_lean8_init(&J.da, &J.la8);
    if (J.lean && J.leanb == 8) sfp8mu_lean8_init(&db, &J.lb8);
    const size_t off = 4 * (size_t)(k > p ? k : p); /* the codes (up to 32 bits), then tE, tF */
    if (fc) panels = malloc(sizeof(fcpanel) * (size_t)(pp / LANES) * (size_t)k);
    /* the lean decoding's buffers: a line's codes, one row of B's exponents and values */
    if (J.lean && (!panels || !(J.codes = malloc(off + 8 * (size_t)pp)))) J.lean = 0;
    if (J.lean) {
        int32_t *tE = (int32_t *)((char *)J.codes + off);
        decode_b_lean(&J, panels, tE, (float *)(tE + pp));
    } else {
        decode_b(&J);
        if (panels) /* B's panels for the binary32 carry kernel from its decoded lines */
            for (int64_t j0 = 0; j0 < pp; j0 += LANES)
                for (int64_t l = 0; l < k; l++) {
                    fcpanel *P = &panels[(j0 / LANES) * k + l];
                    memcpy(P->E, J.ub.E + l * pp + j0, sizeof P->E);
                    memcpy(P->f, J.ub.f + l * pp + j0, sizeof P->f);
                }
    }
    if (panels && J.rb.nof) { /* a value of B is no binary32 number: the integer kernels */
        free(panels);
        panels = NULL;
    }
    if (panels)
        for (int64_t l = 0; l < k; l++) {
            dummy.E[l] = NONE;
            dummy.f[l] = 0.0f;
        }
    if (panels && J.level == 1 && sfp8mu_fc_scratch(g, k, pp / LANES))
        J.fcs = calloc(1, sfp8mu_fc_scratch(g, k, pp / LANES)); /* NULL: the kernel does without */
    for (int64_t i0 = 0; i0 < m; i0 += panels ? FC_ROWS : 1) {
        int nr = panels ? (m - i0 < FC_ROWS ? (int)(m - i0) : FC_ROWS) : 1, rowbad[FC_ROWS], rowsub[FC_ROWS];
        int take = panels != NULL;
        for (int r = 0; r < nr; r++) {
            urange ra;
            if (J.lean) decode_row_lean(&J, i0 + r, &ua[r], &rowbad[r], &rowsub[r], &ra);
            else decode_row(&J, i0 + r, &ua[r], &rowbad[r], &rowsub[r], &ra);
            /* every product a normal binary32 number: |a b| in [2^(ta + tb), 2^(ta + tb + 2)),
               at most 24 significant bits */
            if (ra.nof || J.wa + J.wb > 24 ||
                (ra.lo <= ra.hi && J.rb.lo <= J.rb.hi && ((int64_t)ra.lo + J.rb.lo < -126 || (int64_t)ra.hi + J.rb.hi + 1 > 127)))
                take = 0;
        }
        if (take) {
            fc_rows(&J, i0, nr, ua, rowbad, rowsub, panels, &dummy);
            continue;
        }
        if (!J.bfull) { /* the integer kernels read every field: B in full, A's rows again */
            memset(colbad, 0, (size_t)pp * 2);
            decode_b(&J);
        }
        for (int r = 0; r < nr; r++) {
            urange ra;
            if (J.lean) decode_row(&J, i0 + r, &ua[r], &rowbad[r], &rowsub[r], &ra);
            int_row(&J, i0 + r, &ua[r], rowbad[r], rowsub[r]);
        }
    }
    /* the SIMD level the kernels ran at: the wide terms have only the AVX-512 binary32 route */
    if (J.used) mm_count(SFP8M_BLOCK_FMA, panels || g->narrow || (J.level >= 2 && g->fexact) ? J.level : 0);
    for (int r = 0; r < FC_ROWS; r++) free(ma[r]);
    free(md0);
    free(J.codes);
    free(J.fcs);
    free(panels);
    free(mb);
    free(colbad);
    free(J.da.tab);
    free(db.tab);
    fesetenv(&fe);
    return J.flags;
}
