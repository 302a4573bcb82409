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
 * kernels on the hardware's binary64 / binary32 arithmetic (fp_gemm, "exact alignment and
 * the pairwise grouping" below).  The harness proves the path equal to the generic kernel
 * (tests/harness/matrix.py, "block_fma").
 *
 * DERIVED from core.c round_pack: round_block rounds a normal block result to P
 * significant bits by the model's rounding (toward zero, nearest even or away, upward,
 * downward) as sfp8_round_value does in bfma.c's deliver, and leaves every other case to
 * it; and xfinish / xstep_512 / xchunk_256 round an exact binary64 block sum to P bits by the
 * model's rounding (bias below the kept bits, the rest cleared) where the result is a normal
 * number of the output format; proof: tests/harness/test_harness.py::test_entry (entry
 * block_fma, parts exact_pair and exact_pair_edges among them).
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
#include "mm_value.h"

#define NONE (-(1 << 28)) /* the nominal exponent of a zero term: below every other */
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

typedef struct {
    const sfp8u_model *md;
    int W, P, rounding, sticky, norm, narrow, sum32;
    int fexact; /* every operand value and product a normal binary32 number (or zero) */
    int late, oddeven; /* the addend after the products (two-term alignment); odd/even groups */
    int64_t emin_a, emin_b, emin_o, emax_o;
} uctx;

static int bitlen64(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

static int64_t fmt_emin(const sfp8_format *f) { return f->bits == 32 ? -126 : (int64_t)1 - f->bias; }

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

/* a decoded operand code: the lane values of uline, bad (NaN or infinity), sub (a
 * subnormal code), wide (bits of sig) */
typedef struct {
    uint32_t sig, neg;
    int32_t x, E;
    float f;
    double d;    /* the value as a binary64 number (a zero of its sign for zeros, 0 for NaN and infinity) */
    int32_t top; /* floor(log2 |value|), NONE for a zero */
    uint8_t bad, sub, wide;
} ucode;

static void decode1(const uctx *g, const sfp8_format *f, int64_t emin, uint64_t code, ucode *d)
{
    sfp8u_value v;
    sfp8u_decode(f, code, &v);
    memset(d, 0, sizeof *d);
    d->sub = v.sub;
    d->E = NONE;
    d->neg = v.neg ? ~(uint32_t)0 : 0;
    d->bad = v.cls == SFP8U_NAN || v.cls == SFP8U_INF;
    d->top = NONE;
    d->d = v.neg && !d->bad ? -0.0 : 0.0;
    if (v.cls != SFP8U_FINITE || (v.sub && !g->md->in_subnormals)) return;
    {
        int tz = __builtin_ctzll(v.sig), top = (int)v.exp + bitlen64(v.sig) - 1;
        d->sig = (uint32_t)(v.sig >> tz); /* the value unchanged: trailing zeros moved into x */
        d->x = (int32_t)(v.exp + tz);
        d->E = (int32_t)(top > emin ? top : emin);
        d->top = (int32_t)top;
        d->d = ldexp(v.neg ? -(double)d->sig : (double)d->sig, d->x); /* exact: the operand range (sfp8u_check) */
        d->wide = (uint8_t)bitlen64(d->sig);
        if (g->fexact) /* exact: at most 24 bits, a normal binary32 exponent (uctx.fexact) */
            d->f = (d->neg ? -1.0f : 1.0f) * (float)d->sig * ldexpf(1.0f, d->x);
    }
}

/* the decoder of an operand format: a table of every code when that repays it */
typedef struct {
    const sfp8_format *f;
    int64_t emin;
    uint64_t mask;
    ucode *tab;
} udecoder;

static int decoder_init(const uctx *g, udecoder *D, const sfp8_format *f, int64_t emin, int64_t count)
{
    D->f = f;
    D->emin = emin;
    D->tab = NULL;
    D->mask = f->bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << f->bits) - 1;
    if (f->bits > 16 || (f->bits > 8 && count < ((int64_t)1 << f->bits))) return 1;
    if (!(D->tab = malloc(sizeof(ucode) << f->bits))) return 0;
    for (uint64_t c = 0; c <= D->mask; c++) decode1(g, f, emin, c, &D->tab[c]);
    return 1;
}

/* one operand into element l of u: bad |= NaN or infinity; sub |= a subnormal code;
 * *wide = max(*wide, bits of the significand) */
static inline const ucode *lookup(const uctx *g, const udecoder *D, uint64_t code, ucode *tmp)
{
    if (D->tab) return &D->tab[code & D->mask];
    decode1(g, D->f, D->emin, code, tmp);
    return tmp;
}

static inline void put(const uctx *g, const udecoder *D, uint64_t code, uline *u, int64_t l, int *bad, int *sub,
                       int *wide)
{
    ucode tmp;
    const ucode *d = lookup(g, D, code, &tmp);
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

static int code_size(const sfp8_format *f) { return f->bits <= 8 ? 1 : f->bits <= 16 ? 2 : f->bits <= 32 ? 4 : 8; }

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

/* ---- exact alignment (MI100) and the pairwise grouping (MI250): hardware arithmetic ----
 *
 * Exact alignment (extra_bits None, global grouping; fp_mode FP_EXACT): a block's result is
 * its exact sum (the products and the running value) rounded once to P significant bits.
 * Every operand is a binary64 number and every product exact in binary64 (fp_mode's rule
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
 * to the generic kernel as well.
 *
 * Pairwise grouping (fp_mode FP_PAIR, binary32 output): each product is exact in binary32
 * and at least 2^-126 (checked per lane from the row's and column's binades and
 * significand widths), so its rounding into binary32 is itself; the tree additions and the
 * addend's addition are IEEE binary32 additions in the model's rounding (MXCSR's rounding
 * control; no FTZ / DAZ), whose sums of binary32 numbers are tiny only when exact: with
 * output_subnormals off a lane with a non-zero sum below 2^-126 (the model flushes it)
 * goes to the generic kernel, and a zero product is made +0.  Inexact (the precision flag)
 * is read for the group; overflow or invalid send the whole group to the generic kernel.
 * Lanes that must not run are zeroed in a private copy of the group's columns (no flag).
 */

enum { FP_EXACT = 1, FP_PAIR = 2 };
#define GW 32       /* outputs of a row computed together by these kernels */
#define XCHUNK 512  /* products per reading of the status flags (exact alignment; whole blocks) */
#define PAIR_MAX 64 /* the largest block of the pairwise kernels */

static int is_ieee(const sfp8_format *f, int bits, int eb, int mb)
{
    return f->bits == bits && f->is_signed && f->exp_bits == eb && f->man_bits == mb &&
           f->bias == (1 << (eb - 1)) - 1 && f->specials == SFP8_SPECIALS_IEEE && f->subnormals == SFP8_SUBNORMALS_IEEE;
}

static int fp_mode(const sfp8u_model *md, int64_t k)
{
    int r = md->envo.rounding;
    int directed = r == SFP8_ROUND_TOWARD_ZERO || r == SFP8_ROUND_NEAREST_EVEN || r == SFP8_ROUND_UPWARD ||
                   r == SFP8_ROUND_DOWNWARD;
#if FLT_EVAL_METHOD != 0
    return 0;
#endif
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
        if (level >= 2) pair_512(x, b, c, alive);
        else pair_256(x, b, c, alive);
        hw = mm_fx_read();
        if (!(x->flushz && level >= 2 && (hw & MM_FX_DENORMAL))) return hw;
        memcpy(c, c0, sizeof c0); /* a tiny sum (AVX-512): the portable kernel finds its lanes */
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
    F->arith = f->is_signed && f->specials == SFP8_SPECIALS_IEEE && f->subnormals == SFP8_SUBNORMALS_IEEE &&
               f->bits >= 9 && f->bits <= 16 && f->bits == 1 + f->exp_bits + f->man_bits;
    F->M = f->man_bits;
    F->bias = f->bias;
    F->in_sub = g->md->in_subnormals;
    F->mask = ((uint64_t)1 << f->bits) - 1;
    F->emax = ((uint64_t)1 << f->exp_bits) - 1;
    F->subscale = ldexp(1.0, (int)(1 - f->bias - f->man_bits));
    return F->arith || decoder_init(g, &F->D, f, fmt_emin(f), count);
}

/* the fields of ucode these kernels read (d, top, wide, bad, sub) of one operand code */
static inline __attribute__((always_inline)) const ucode *fdecode(const uctx *g, const fdec *F, uint64_t code, ucode *tmp)
{
    uint64_t c = code & F->mask, sign = c >> (F->M + (int)bitlen64(F->emax)) & 1, e = c >> F->M & F->emax;
    uint64_t m = c & (((uint64_t)1 << F->M) - 1), sig;
    if (!F->arith) return lookup(g, &F->D, code, tmp);
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

/* the code of a normal number or +-0 of fo (binary32 or binary16), given in binary64 */
static uint64_t fo_code(const sfp8_format *f, double v)
{
    uint64_t u = sfp8f_dbits(v), s = (u >> 63) << (f->bits - 1);
    if (!(u << 1)) return s;
    return s | (uint64_t)((int64_t)(u >> 52 & 0x7ff) - 1023 + f->bias) << f->man_bits |
           (u & (((uint64_t)1 << 52) - 1)) >> (52 - f->man_bits);
}

static unsigned fp_gemm(const sfp8u_model *md, int mode, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                        ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O, ptrdiff_t om,
                        ptrdiff_t op, int64_t m, int64_t k, int64_t p)
{
    int sa = code_size(&md->fa), sb = code_size(&md->fb), so = code_size(&md->fo), used = 0;
    int level = sfp8f_simd_level(), dbl = mode == FP_EXACT, bins = !dbl || !md->product_overflow;
    size_t es = dbl ? sizeof(double) : sizeof(float);
    ptrdiff_t pp = (p + GW - 1) / GW * GW;
    int64_t emax_o = ((int64_t)1 << md->fo.exp_bits) - 2 - md->fo.bias;
    uctx g;
    fdec da, db;
    char *bv = NULL, *av = NULL, *priv = NULL;
    fline *col = NULL;
    fpk x;
    mm_fxsave env;
    unsigned flags = 0;
    if (!md->has_addend) C = NULL;
    memset(&g, 0, sizeof g);
    g.md = md;
    bv = malloc((size_t)(k * pp) * es);
    av = malloc((size_t)k * es);
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
    x.a = av;
    for (int64_t i = 0; i < m; i++) {
        fline row;
        fline_init(&row);
        decode_run(&g, &da, A + i * am, ak, sa, k, dbl, av, &row, 0, bins);
        if (row.bad || (!dbl && (row.wide > 24 || row.hi > 127 || row.lo < -126))) { /* the generic kernel */
            flags |= sfp8u_gemm(md, A + i * am, am, ak, B, bk, bp, C ? C + i * cm : NULL, cm, cp, O + i * om, om, op,
                                1, k, p);
            continue;
        }
        for (int64_t j0 = 0; j0 < p; j0 += GW) {
            int n = p - j0 < GW ? (int)(p - j0) : GW, dirty = 0;
            double cd[GW];
            float cf[GW];
            uint8_t alive[GW], inex[GW], fl[GW];
            const char *b = bv + j0 * es;
            unsigned hw = 0;
            for (int q = 0; q < GW; q++) {
                int64_t j = j0 + q;
                const fline *cl = &col[j];
                fl[q] = inex[q] = 0;
                cd[q] = 0.0;
                alive[q] = !cl->bad &&
                           (dbl ? md->product_overflow || (int64_t)row.hi + cl->hi <= emax_o - 1
                                : (int64_t)row.hi + cl->hi <= 126 && (int64_t)row.lo + cl->lo >= -126 &&
                                      row.wide + cl->wide <= 24) &&
                           fp_addend(md, mode, C, C && j < p ? load_raw(C + i * cm + j * cp, so) : 0, &cd[q], &fl[q]);
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
        if (flags & SFP8U_NOMEM) break;
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

unsigned sfp8m_unit_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                         ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O,
                         ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k, int64_t p, int fast)
{
    uctx g;
    uline ua, ub;
    udecoder da = {0}, db = {0};
    void *ma = NULL, *mb = NULL;
    unsigned char *colbad = NULL, *colsub = NULL;
    int sa = code_size(&md->fa), sb = code_size(&md->fb), so = code_size(&md->fo), used = 0, wa = 0, wb = 0;
    int level = sfp8f_simd_level();
    int32_t maxb = NONE;
    ptrdiff_t pp = (p + LANES - 1) / LANES * LANES;
    unsigned flags = 0;
    fenv_t fe;
    if (fast && md->order != SFP8U_BLOCK) /* the orders' fast path (mm_orders.c), which falls back to sfp8u_gemm */
        return sfp8m_orders_gemm(md, A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p);
    if (m <= 0 || p <= 0) return 0;
    if (fast && fp_mode(md, k)) return fp_gemm(md, fp_mode(md, k), A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p);
    if (!fast || !covers(md, k)) return sfp8u_gemm(md, A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p);
    /* the binary32 route raises no floating-point flag of the caller's thread (as sfp8m_gemm) */
    feholdexcept(&fe);
    memset(&g, 0, sizeof g);
    g.md = md;
    g.W = 23 + md->extra_bits;
    g.P = md->fo.man_bits + (md->extra_bits < 0 ? md->extra_bits : 0) + 1;
    g.rounding = md->envo.rounding;
    g.late = md->grouping == SFP8U_GLOBAL && md->late_addend;
    g.oddeven = md->grouping == SFP8U_ODD_EVEN;
    g.sticky = md->sticky && !g.late && !g.oddeven; /* the two-term groupings align without it */
    g.norm = md->normalized_products;
    g.emin_a = fmt_emin(&md->fa);
    g.emin_b = fmt_emin(&md->fb);
    g.emin_o = fmt_emin(&md->fo);
    g.emax_o = ((int64_t)1 << md->fo.exp_bits) - 2 - md->fo.bias;
    /* operands of at most 12 significant bits, their values and products normal binary32
       numbers: a * b is exact in binary32 (the binary32 route of the SIMD kernels) */
    g.fexact = md->fa.man_bits <= 11 && md->fb.man_bits <= 11 && md->fa.bits <= 16 && md->fb.bits <= 16 &&
               fmt_low(&md->fa) >= -126 && fmt_low(&md->fb) >= -126 && fmt_top(&md->fa) <= 127 &&
               fmt_top(&md->fb) <= 127 && fmt_low(&md->fa) + fmt_low(&md->fb) >= -126 &&
               fmt_top(&md->fa) + fmt_top(&md->fb) <= 127;
    ma = lines(k, &ua);
    mb = lines(k * pp, &ub);
    colbad = calloc((size_t)pp, 2);
    if (!ma || !mb || !colbad || !decoder_init(&g, &da, &md->fa, g.emin_a, m * k) ||
        !decoder_init(&g, &db, &md->fb, g.emin_b, k * p)) {
        free(ma);
        free(mb);
        free(colbad);
        free(da.tab);
        free(db.tab);
        fesetenv(&fe);
        return SFP8U_NOMEM;
    }
    colsub = colbad + pp;
    for (int64_t j = 0; j < pp; j++) { /* B decoded once, row-major; the padding columns zeros */
        int bad = 0, sub = 0;
        for (int64_t l = 0; l < k; l++) {
            if (j < p) {
                put(&g, &db, load_raw(B + l * bk + j * bp, sb), &ub, slot(&g, l, k) * pp + j, &bad, &sub, &wb);
            } else {
                ub.sig[l * pp + j] = ub.neg[l * pp + j] = 0;
                ub.x[l * pp + j] = 0;
                ub.E[l * pp + j] = NONE;
                ub.f[l * pp + j] = 0.0f;
            }
        }
        colbad[j] = (unsigned char)bad;
        colsub[j] = (unsigned char)sub;
    }
    for (int64_t x = 0; x < k * pp; x++)
        if (ub.E[x] > maxb) maxb = ub.E[x];
    for (int64_t i = 0; i < m; i++) {
        int rowbad = 0, rowsub = 0;
        int32_t maxa = NONE;
        for (int64_t l = 0; l < k; l++) {
            int64_t s = slot(&g, l, k);
            put(&g, &da, load_raw(A + i * am + l * ak, sa), &ua, s, &rowbad, &rowsub, &wa);
            if (ua.E[s] > maxa) maxa = ua.E[s];
        }
        /* products kept in the output's range (product_overflow off): the row is left to the
           generic kernel unless no product can reach 2^(emax + 1) (|a b| < 2^(Ea + Eb + 1)) */
        if (!md->product_overflow && maxa >= NONE / 2 && maxb >= NONE / 2 && (int64_t)maxa + maxb >= g.emax_o)
            rowbad = 1;
        /* 32-bit lanes: products below 2^32, terms with sign and sticky bit below 2^31 */
        g.narrow = wa + wb <= 32 && g.W + 2 + g.sticky <= 30;
        g.sum32 = g.W + 2 + g.sticky + bitlen64((uint64_t)md->block + 1) <= 31;
        for (int64_t j0 = 0; j0 < p; j0 += LANES) {
            ugroup cur;
            int live[LANES];
            uint64_t out[LANES];
            uint8_t fl[LANES];
            for (int q = 0; q < LANES; q++) {
                int64_t j = j0 + q;
                fl[q] = rowsub || colsub[j] ? SFP8_FLAG_DENORMAL : 0;
                live[q] = j < p && !rowbad && !colbad[j] &&
                          addend(&g, C, C && j < p ? load_raw(C + i * cm + j * cp, so) : 0, &cur, q, &fl[q]);
                if (!live[q]) addend(&g, NULL, 0, &cur, q, &fl[q]);
            }
            /* lost bits matter for the sticky bit, and for the inexact flag until it is raised */
            unit_group(&g, level, g.sticky || !(flags & SFP8_FLAG_INEXACT), &ua, &ub, pp, j0, k, &cur, live, out, fl);
            for (int q = 0; q < LANES && j0 + q < p; q++) {
                int64_t j = j0 + q;
                if (live[q]) {
                    store_raw(O + i * om + j * op, so, out[q]);
                    flags |= fl[q];
                    used = 1;
                } else { /* the generic kernel, for this output alone */
                    flags |= sfp8u_gemm(md, A + i * am, am, ak, B + j * bp, bk, bp, C ? C + i * cm + j * cp : NULL,
                                        cm, cp, O + i * om + j * op, om, op, 1, k, 1);
                }
            }
        }
    }
    /* the SIMD level the kernels ran at: the wide terms have only the AVX-512 binary32 route */
    if (used) mm_count(SFP8M_BLOCK_FMA, g.narrow || (level >= 2 && g.fexact) ? level : 0);
    free(ma);
    free(mb);
    free(colbad);
    free(da.tab);
    free(db.tab);
    fesetenv(&fe);
    return flags;
}
