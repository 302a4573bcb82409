/*
 * The block_fma path's binary32 carry kernel (mm_units_fc.h): the block-FMA model with
 * global alignment, the addend among the products and no sticky bit or normalised
 * products (the NVIDIA profiles), at SIMD level 2, on operands whose values and products
 * are normal binary32 numbers (the caller checks the data: mm_units.c).  Four rows of A by
 * sixteen columns at a time, so that every load of B serves four outputs.
 *
 * Per block, per output: E the largest nominal exponent of the terms (at least
 * min_exponent), the unit 2^ue = 2^(E - W) (ue in -126 .. 126, else the output is left to
 * the generic kernel); every term t (a product a * b, or the running value c, both exact
 * binary32 numbers) is t * 2^-ue (exact, or below 1 in magnitude) converted to an integer
 * with truncation toward zero -- the model's alignment; the integers are summed exactly
 * (32-bit sums flushed into 64-bit ones before they can overflow, or 64-bit terms when
 * W + 2 > 31); the sum T is rounded once to P significant bits by the model's rounding:
 * the conversion of T to binary32 with that rounding as an embedded rounding mode (24
 * bits), then, for P < 24 (toward zero only), the low 24 - P fraction bits cleared
 * (truncation composes); the result times 2^ue is the next block's running value, exact
 * when its exponent is in the output format's normal range.
 *
 * DERIVED from core.c round_pack, as mm_units.c round_block: a block result whose
 * exponent before rounding is outside emin .. emax of the output format, or after a carry
 * above emax, leaves its output to the generic kernel (bfma.c), which computes it again
 * from the start; proof: tests/harness/test_harness.py::test_entry (entry block_fma).
 */
#include <string.h>

#include "codes.h"
#include "mm_fenv.h"
#include "mm_simd.h"
#include "mm_units_fc.h"

int sfp8mu_fc_covers(const uctx *g, int level)
{
#if MM_SIMD
    const sfp8u_model *md = g->md;
    int r = g->rounding;
    /* level 1 (sfp8mu_fc_rows256): T in 32 bits or as a binary64 sum of integers below
       (block + 1) 2^(W + 2) <= 2^53 */
    if (level == 1 && bitlen64((uint64_t)md->block + 1) + g->W + 2 > 53) return 0;
    return level >= 1 && !g->late && !g->oddeven && !g->sticky && !g->norm && g->P <= 24 &&
           md->fo.man_bits <= 23 && g->emin_o >= -126 && g->emax_o <= 127 && g->W + 2 <= 62 &&
           (r == SFP8_ROUND_TOWARD_ZERO ||
            (g->P == 24 && (r == SFP8_ROUND_NEAREST_EVEN || r == SFP8_ROUND_UPWARD || r == SFP8_ROUND_DOWNWARD)));
#else
    (void)g;
    (void)level;
    return 0;
#endif
}

#if MM_SIMD
#include <immintrin.h>

#define R FC_ROWS
#define FC_TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

/* T (eight 64-bit lanes) to binary32 with the model's rounding */
FC_TGT static inline __m256 cvt_mode(__m512i t, int mode)
{
    switch (mode) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm512_cvt_roundepi64_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case SFP8_ROUND_UPWARD: return _mm512_cvt_roundepi64_ps(t, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    case SFP8_ROUND_DOWNWARD: return _mm512_cvt_roundepi64_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    default: return _mm512_cvt_roundepi64_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    }
}

FC_TGT static inline __m512 cvt_mode32(__m512i t, int mode)
{
    switch (mode) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm512_cvt_roundepi32_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case SFP8_ROUND_UPWARD: return _mm512_cvt_roundepi32_ps(t, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    case SFP8_ROUND_DOWNWARD: return _mm512_cvt_roundepi32_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    default: return _mm512_cvt_roundepi32_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    }
}

FC_TGT static inline __m512 join(__m256 lo, __m256 hi)
{
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

/* the binary32 exponent of v (a nonzero normal number), unbiased */
FC_TGT static inline __m512i expo(__m512 v)
{
    return _mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(v), 23), _mm512_set1_epi32(255)),
                            _mm512_set1_epi32(127));
}

/* lost: lanes where the truncation of v = t 2^-ue dropped bits, t the exact term and p2 =
 * 2^ue: trunc(v) 2^ue differs from t (exact: trunc(v) is 0, or at most t in magnitude with at
 * most 24 bits and at least 2^ue; a v that underflowed to zero or a subnormal counts as lost) */
FC_TGT static inline __mmask16 frac(__m512 v, __m512 t, __m512 p2)
{
    return _mm512_cmp_ps_mask(_mm512_mul_ps(_mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO), p2), t, _CMP_NEQ_UQ);
}

FC_TGT static inline void add_wide(__m512 v, __m512i *lo, __m512i *hi)
{
    *lo = _mm512_add_epi64(*lo, _mm512_cvttps_epi64(_mm512_castps512_ps256(v)));
    *hi = _mm512_add_epi64(*hi, _mm512_cvttps_epi64(_mm512_extractf32x8_ps(v, 1)));
}

FC_TGT static inline void flush32(__m512i *a32, __m512i *lo, __m512i *hi)
{
    *lo = _mm512_add_epi64(*lo, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(*a32)));
    *hi = _mm512_add_epi64(*hi, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(*a32, 1)));
    *a32 = _mm512_setzero_si512();
}

/* the products of l0 .. l0 + n - 1 for the four rows, aligned by sc[r] and added to acc[r]:
 * 32-bit terms and sums (wide 0), or 64-bit terms added to lo[r], hi[r] (wide 1); lost[r]:
 * lanes whose terms dropped bits (when need_lost).  Constant wide and need_lost give one
 * loop each, the rows' sums in registers. */
__attribute__((always_inline)) FC_TGT static inline void sum_rows(const fcpanel *bp, int64_t l0, int64_t n,
                                                                  const float *const *af, const __m512 *sc,
                                                                  const __m512 *p2, __m512i *acc, __m512i *lo,
                                                                  __m512i *hi, __mmask16 *lost, int wide,
                                                                  int need_lost)
{
    const float *f0 = af[0], *f1 = af[1], *f2 = af[2], *f3 = af[3];
    const __m512 s0 = sc[0], s1 = sc[1], s2 = sc[2], s3 = sc[3];
    __m512i a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    __m512i l0v = lo[0], l1v = lo[1], l2v = lo[2], l3v = lo[3], h0 = hi[0], h1 = hi[1], h2 = hi[2], h3 = hi[3];
    __mmask16 d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    for (int64_t l = l0; l < l0 + n; l++) {
        const __m512 bf = _mm512_loadu_ps(bp[l].f);
        const __m512 t0 = _mm512_mul_ps(_mm512_set1_ps(f0[l]), bf), t1 = _mm512_mul_ps(_mm512_set1_ps(f1[l]), bf);
        const __m512 t2 = _mm512_mul_ps(_mm512_set1_ps(f2[l]), bf), t3 = _mm512_mul_ps(_mm512_set1_ps(f3[l]), bf);
        const __m512 v0 = _mm512_mul_ps(t0, s0), v1 = _mm512_mul_ps(t1, s1);
        const __m512 v2 = _mm512_mul_ps(t2, s2), v3 = _mm512_mul_ps(t3, s3);
        if (wide) {
            add_wide(v0, &l0v, &h0);
            add_wide(v1, &l1v, &h1);
            add_wide(v2, &l2v, &h2);
            add_wide(v3, &l3v, &h3);
        } else {
            a0 = _mm512_add_epi32(a0, _mm512_cvttps_epi32(v0));
            a1 = _mm512_add_epi32(a1, _mm512_cvttps_epi32(v1));
            a2 = _mm512_add_epi32(a2, _mm512_cvttps_epi32(v2));
            a3 = _mm512_add_epi32(a3, _mm512_cvttps_epi32(v3));
        }
        if (need_lost) {
            d0 |= frac(v0, t0, p2[0]);
            d1 |= frac(v1, t1, p2[1]);
            d2 |= frac(v2, t2, p2[2]);
            d3 |= frac(v3, t3, p2[3]);
        }
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
    lo[0] = l0v, lo[1] = l1v, lo[2] = l2v, lo[3] = l3v;
    hi[0] = h0, hi[1] = h1, hi[2] = h2, hi[3] = h3;
    lost[0] |= d0, lost[1] |= d1, lost[2] |= d2, lost[3] |= d3;
}

/* sfp8mu_fc_rows for constant arguments: rounding toward zero (tz) or not (mode), 64-bit
 * terms (wide), lost bits wanted (need_lost) */
__attribute__((always_inline)) FC_TGT static inline void fc_body(const uctx *g, const int32_t *const *aE,
                                                                 const float *const *af, const fcpanel *bp, int64_t k,
                                                                 float *c, int32_t *cE, int *live, uint8_t *fl,
                                                                 const int need_lost, const int tz, const int wide,
                                                                 const int b4)
{
    const sfp8u_model *md = g->md;
    const int64_t blk = b4 ? 4 : md->block; /* b4: blocks of four (V100, the TF32 rows), loops unrolled */
    const int mode = tz ? SFP8_ROUND_TOWARD_ZERO : g->rounding;
    /* 32-bit sums of terms below 2^(W + 2) in magnitude: chunk of them at most */
    const int64_t chunk = wide ? 1 : (int64_t)(((uint64_t)1 << 31) - 1) / (int64_t)(((uint64_t)1 << (g->W + 2)) - 1);
    const __m512i none = _mm512_set1_epi32(NONE), zero = _mm512_setzero_si512();
    const __m512i vW = _mm512_set1_epi32(g->W), vmin = _mm512_set1_epi32(md->has_min_exp ? md->min_exp : NONE);
    const __m512i emin = _mm512_set1_epi32((int)g->emin_o), emax = _mm512_set1_epi32((int)g->emax_o);
    /* the block's sums in 32 bits (no flush within a block) */
    const int sum32 = !wide && chunk >= md->block + 1;
    const __m512i keep = _mm512_set1_epi32(g->P >= 24 ? -1 : (int)(~0u << (24 - g->P)));
    __m512 vc[R];
    __m512i vcE[R];
    __mmask16 kill[R], inexact[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        vc[r] = _mm512_loadu_ps(c + 16 * r);
        vcE[r] = _mm512_loadu_si512(cE + 16 * r);
        kill[r] = inexact[r] = 0;
    }
    for (int64_t k0 = 0; k0 < k; k0 += blk) {
        const int64_t n = b4 && k - k0 >= 4 ? 4 : k - k0 < blk ? k - k0 : blk;
        __m512i e[R], ue[R], a32[R], lo[R], hi[R];
        __m512 sc[R], pu[R]; /* 2^-ue, 2^ue */
        __mmask16 terms[R], lost[R];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) e[r] = vcE[r];
        for (int64_t l = k0; l < k0 + n; l++) {
            const __m512i be = _mm512_loadu_si512(bp[l].E);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) e[r] = _mm512_max_epi32(e[r], _mm512_add_epi32(_mm512_set1_epi32(aE[r][l]), be));
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __mmask16 rng;
            terms[r] = _mm512_cmpge_epi32_mask(e[r], _mm512_set1_epi32(NONE / 2));
            if (md->has_min_exp) e[r] = _mm512_mask_max_epi32(e[r], terms[r], e[r], vmin);
            ue[r] = _mm512_maskz_sub_epi32(terms[r], e[r], vW); /* 0 for the lanes without terms */
            rng = _mm512_cmpge_epi32_mask(ue[r], _mm512_set1_epi32(-126)) &
                  _mm512_cmple_epi32_mask(ue[r], _mm512_set1_epi32(126));
            kill[r] |= (__mmask16)~rng;
            ue[r] = _mm512_maskz_mov_epi32(rng, ue[r]);
            sc[r] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(127), ue[r]), 23));
            pu[r] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(ue[r], _mm512_set1_epi32(127)), 23));
            lo[r] = hi[r] = a32[r] = zero;
            lost[r] = 0;
        }
        /* the running values: the first term */
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m512 v = _mm512_mul_ps(vc[r], sc[r]);
            if (wide) add_wide(v, &lo[r], &hi[r]);
            else a32[r] = _mm512_cvttps_epi32(v);
            if (need_lost) lost[r] |= frac(v, vc[r], pu[r]);
        }
        /* the products, in chunks whose 32-bit sums cannot overflow (one chunk when sum32) */
        if (sum32) sum_rows(bp, k0, n, af, sc, pu, a32, lo, hi, lost, wide, need_lost);
        else for (int64_t l = k0, left = n, room = wide ? n : chunk - 1; left > 0;) {
            int64_t len;
            if (room == 0) { /* the 32-bit sums full: into the 64-bit ones */
#pragma GCC unroll 4
                for (int r = 0; r < R; r++) flush32(&a32[r], &lo[r], &hi[r]);
                room = chunk;
            }
            len = left < room ? left : room;
            sum_rows(bp, l, len, af, sc, pu, a32, lo, hi, lost, wide, need_lost);
            l += len;
            left -= len;
            room -= len;
        }
        if (!wide && !sum32) {
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) flush32(&a32[r], &lo[r], &hi[r]);
        }
        /* the sums rounded: rf (the model's rounding), rz (toward zero: the bit length) */
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m512 rf, rz;
            __mmask16 nz, ok;
            __m512i tpre, tpost;
            if (sum32) { /* T in 32 bits: a32 */
                rf = rz = cvt_mode32(a32[r], mode);
                if (mode != SFP8_ROUND_TOWARD_ZERO) rz = cvt_mode32(a32[r], SFP8_ROUND_TOWARD_ZERO);
            } else {
                rf = rz = join(cvt_mode(lo[r], mode), cvt_mode(hi[r], mode));
                if (mode != SFP8_ROUND_TOWARD_ZERO)
                    rz = join(cvt_mode(lo[r], SFP8_ROUND_TOWARD_ZERO), cvt_mode(hi[r], SFP8_ROUND_TOWARD_ZERO));
            }
            if (mode == SFP8_ROUND_TOWARD_ZERO && g->P < 24)
                rf = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(rf), keep));
            nz = _mm512_cmp_ps_mask(rf, _mm512_setzero_ps(), _CMP_NEQ_UQ);
            tpre = _mm512_add_epi32(expo(rz), ue[r]);
            tpost = mode == SFP8_ROUND_TOWARD_ZERO ? tpre : _mm512_add_epi32(expo(rf), ue[r]);
            ok = _mm512_cmpge_epi32_mask(tpre, emin) & _mm512_cmple_epi32_mask(tpre, emax) &
                 _mm512_cmple_epi32_mask(tpost, emax);
            kill[r] |= nz & (__mmask16)~ok;
            ok &= nz;
            if (need_lost && sum32) {
                /* the rounding inexact: rf differs from T (2^31 converts to INT_MIN, |T| < 2^31) */
                inexact[r] |= (lost[r] | _mm512_cmpneq_epi32_mask(_mm512_cvttps_epi32(rf), a32[r])) & terms[r];
            } else if (need_lost) {
                /* the rounding inexact: rf differs from T */
                __mmask8 dl = _mm512_cmpneq_epi64_mask(_mm512_cvttps_epi64(_mm512_castps512_ps256(rf)), lo[r]);
                __mmask8 dh = _mm512_cmpneq_epi64_mask(_mm512_cvttps_epi64(_mm512_extractf32x8_ps(rf, 1)), hi[r]);
                inexact[r] |= (lost[r] | (__mmask16)(dl | (unsigned)dh << 8)) & terms[r];
            }
            vc[r] = _mm512_maskz_mul_ps(ok & (__mmask16)~kill[r], rf, pu[r]);
            vcE[r] = _mm512_mask_mov_epi32(none, ok & (__mmask16)~kill[r], tpost);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        _mm512_storeu_ps(c + 16 * r, vc[r]);
        _mm512_storeu_si512(cE + 16 * r, vcE[r]);
        for (int q = 0; q < FC_LANES; q++) {
            if (kill[r] >> q & 1) live[16 * r + q] = 0;
            if (inexact[r] >> q & 1) fl[16 * r + q] |= SFP8_FLAG_INEXACT;
        }
    }
    (void)zero;
}
FC_TGT void sfp8mu_fc_rows(const uctx *g, const int32_t *const *aE, const float *const *af, const fcpanel *bp,
                           int64_t k, float *c, int32_t *cE, int *live, uint8_t *fl, int need_lost)
{
    const int tz = g->rounding == SFP8_ROUND_TOWARD_ZERO, wide = g->W + 2 > 31, b4 = g->md->block == 4;
#define FC_CASE(nl, t, w)                                                                                            \
    if (need_lost == nl && tz == t && wide == w) {                                                                   \
        fc_body(g, aE, af, bp, k, c, cE, live, fl, nl, t, w, 0);                                                      \
        return;                                                                                                      \
    }
    if (b4 && tz && !wide) {
        if (need_lost) fc_body(g, aE, af, bp, k, c, cE, live, fl, 1, 1, 0, 1);
        else fc_body(g, aE, af, bp, k, c, cE, live, fl, 0, 1, 0, 1);
        return;
    }
    FC_CASE(0, 1, 0)
    FC_CASE(1, 1, 0)
    FC_CASE(0, 0, 0)
    FC_CASE(1, 0, 0)
    FC_CASE(0, 1, 1)
    FC_CASE(1, 1, 1)
    FC_CASE(0, 0, 1)
    FC_CASE(1, 0, 1)
#undef FC_CASE
}
#else
void sfp8mu_fc_rows(const uctx *g, const int32_t *const *aE, const float *const *af, const fcpanel *bp, int64_t k,
                    float *c, int32_t *cE, int *live, uint8_t *fl, int need_lost)
{
    (void)g, (void)aE, (void)af, (void)bp, (void)k, (void)c, (void)cE, (void)live, (void)fl, (void)need_lost;
}
#endif

/*
 * The same kernel at SIMD level 1 (AVX2, sfp8mu_fc_rows256): the sixteen columns of a panel
 * as two halves of eight lanes, each computed for the four rows in turn (four rows by eight
 * lanes keep the sums and scales in AVX2's sixteen registers).  Per block as above, but
 * without AVX-512's conversions, embedded rounding and masks:
 *   - the model's rounding is MXCSR's rounding direction, set for the whole call (every
 *     exception masked, no FTZ / DAZ) and restored on exit (mm_fenv.h): the conversions of T
 *     to binary32 (int32 -> binary32, binary64 -> binary32) round by it; every other
 *     operation of the kernel is exact (the products, the scalings by 2^-ue and 2^ue of
 *     the kept lanes, the truncations, the sums) or its rounding does not matter (a v that
 *     underflows truncates to 0 in every direction and counts as lost);
 *   - sum32 (the block's sums fit 32 bits, as above): T an int32 sum, rf its conversion;
 *     else T a binary64 sum: the running value's term truncated in binary32 (roundps
 *     toward zero) and added as a binary64 number, then the 32-bit sums of the products in
 *     chunks of at most chunk = (2^31 - 1) / (2^(W + 2) - 1) terms converted exactly and
 *     added (chunked: H100's blocks of 16 with W = 25 in one chunk), or every product's
 *     term truncated and added as the running value's (wide, W + 2 > 31).  Exact: the terms and partial sums are
 *     integers below (block + 1) 2^(W + 2) <= 2^53 in magnitude (sfp8mu_fc_covers), so
 *     every binary64 addition is exact, and rf is one rounding of T (binary64 -> binary32);
 *   - the exponent of T before rounding (the range test): of its conversion toward zero,
 *     built exactly -- an int32 T from |T| with its low 8 bits cleared when |T| >= 2^24 (at
 *     most 23 bits, the same binade), a binary64 T from its bits with the low 29 fraction
 *     bits cleared (its truncation to 24 bits);
 *   - P < 24 (toward zero only): the low 24 - P fraction bits of rf cleared, as above;
 *   - wide sums, the exact kind (B200's FP8 rows; the caller's scratch, fcx): a block in
 *     which every product is a multiple of its lane's unit 2^ue loses no bit to the
 *     alignment: its products are summed by binary64 FMAs (exact: multiples of 2^ue below
 *     (block + 1) 2^(W + 2 + ue) <= 2^(53 + ue)), scaled by 2^-ue and added to the running
 *     value's term as before.  A product's lowest set bit is at least the sum of its
 *     factors' nominal exponents less their fraction bits (mab), so the block qualifies when
 *     the least nominal exponents of the block's nonzero values of A's row and B's lane give
 *     a lowest bit >= ue.  First without the scan: E' = max(the running value's exponent,
 *     A's largest + B's largest) >= E, its unit ue' >= ue; when the products qualify for ue'
 *     and the running value's lowest set bit is >= ue', no term has a bit below ue' (nor
 *     below ue), the model's T 2^ue is the exact sum and so is T' 2^ue', and ue' serves for
 *     the rest of the block as ue would (the rounding, tpre = exponent of T' + ue', the
 *     result: they depend on the value only; the test of the unit's range, on ue', sends
 *     other lanes to the generic kernel, which is always right); else the scan and the test
 *     with ue; else the truncations (wide).  A half's four rows by eight lanes qualify
 *     together;
 *   - the range tests deferred to the end of the call: per lane the least and largest ue
 *     and of the nonzero block results the least tpre and largest tpost (tpost >= tpre: a
 *     rounding to 24 bits keeps T's binade or carries above it), offset so that one bound
 *     -126 .. 126 tests both; a lane once out of range computes garbage afterwards (its
 *     scalings from an unchecked ue: no fault, every exception masked) but the least and
 *     largest only widen, so the lane is left to the generic kernel, as when the tests
 *     ran per block (the lanes in range compute exactly the same values).
 * DERIVED as above; proof: tests/harness/test_harness.py::test_entry (entry block_fma,
 * parts profiles, routes, carry, carry256).
 */
#if MM_SIMD
#define H8 MM_TGT256
/* the exact kind's bounds and values (sfp8mu_fc_rows256's scratch): per row of A the values
 * as binary64 numbers (ad) and per block (nb of them) the largest nominal exponent (amx)
 * and least of a nonzero value plus 2^28 - 1 (amn, bounds_e); per block of B's panel the
 * lanes' largest, then least (bb: 16 and 16) */
typedef struct {
    const double *ad[R];
    const int32_t *amx;
    const uint32_t *amn;
    const int32_t *bb;
    int64_t nb;
} fcx;

/* the binary32 exponent of v (a nonzero normal number), unbiased */
H8 static inline __m256i expo8(__m256 v)
{
    return _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(v), 23), _mm256_set1_epi32(255)),
                            _mm256_set1_epi32(127));
}

/* lost, as frac above: lanes (all ones) where trunc(v) 2^ue differs from t */
H8 static inline __m256 frac8(__m256 v, __m256 t, __m256 p2)
{
    return _mm256_cmp_ps(_mm256_mul_ps(_mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), p2), t,
                         _CMP_NEQ_UQ);
}

/* the 32-bit sums into the binary64 ones (exact) */
H8 static inline void flush8(__m256i *a32, __m256d *lo, __m256d *hi)
{
    *lo = _mm256_add_pd(*lo, _mm256_cvtepi32_pd(_mm256_castsi256_si128(*a32)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtepi32_pd(_mm256_extracti128_si256(*a32, 1)));
    *a32 = _mm256_setzero_si256();
}

/* a term truncated toward zero, into the binary64 sums (wide) */
H8 static inline void add_wide8(__m256 v, __m256d *lo, __m256d *hi)
{
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(t)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(t, 1)));
}

/* 2^x, x four int32 (x + 1023 in 1 .. 2046 for the lanes that matter), as binary64 numbers */
H8 static inline __m256d pow2d(__m128i x)
{
    return _mm256_castsi256_pd(
        _mm256_slli_epi64(_mm256_add_epi64(_mm256_cvtepi32_epi64(x), _mm256_set1_epi64x(1023)), 52));
}

/* the largest of n nominal exponents e[0 .. n - 1] (NONE when every value is zero) in *mx,
 * the least of the nonzero values' plus 2^28 - 1 as an unsigned number in *mn (2^32 - 1
 * when every value is zero: NONE + 2^28 - 1 wraps to it); reads e[0 .. n + 7] (the lines'
 * slack) */
MM_TGT256 static inline void bounds_e(const int32_t *e, int64_t n, int32_t *mx, uint32_t *mn)
{
    const __m256i off = _mm256_set1_epi32((1 << 28) - 1), idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i m = _mm256_set1_epi32(-1), M = _mm256_set1_epi32(NONE);
    __m128i x, y;
    for (int64_t j = 0; j < n; j += 8) {
        const __m256i past = _mm256_cmpgt_epi32(_mm256_add_epi32(idx, _mm256_set1_epi32((int)j)),
                                                _mm256_set1_epi32((int)n - 1));
        const __m256i v = _mm256_loadu_si256((const __m256i *)(e + j));
        m = _mm256_min_epu32(m, _mm256_or_si256(past, _mm256_add_epi32(v, off)));
        M = _mm256_max_epi32(M, _mm256_blendv_epi8(v, _mm256_set1_epi32(NONE), past));
    }
    x = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, 0x4E));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, 0xB1));
    y = _mm_max_epi32(_mm256_castsi256_si128(M), _mm256_extracti128_si256(M, 1));
    y = _mm_max_epi32(y, _mm_shuffle_epi32(y, 0x4E));
    y = _mm_max_epi32(y, _mm_shuffle_epi32(y, 0xB1));
    *mn = (uint32_t)_mm_cvtsi128_si32(x);
    *mx = _mm_cvtsi128_si32(y);
}

/* the exact kind's test, lanes (all ones) whose products with a row's block are multiples of 2^u:
 * a product's lowest set bit is at least A's least nominal exponent of the block (ma, plus
 * 2^28 - 1) plus the lane's least of B (mbv) less the fraction bits (mab); a lane whose block of
 * B is all zero (bz) qualifies */
H8 static inline __m256i low_ok(__m256i mbv, __m256i bz, uint32_t ma, int mab, __m256i u)
{
    const __m256i low = _mm256_add_epi32(mbv, _mm256_set1_epi32((int32_t)(ma - ((1u << 28) - 1)) - mab + 1));
    return _mm256_or_si256(_mm256_cmpgt_epi32(low, u), bz);
}

/* the products of a block as exact binary64 sums (fc_body8's exact kind): s[r][0], s[r][1] +=
 * a b for lanes h .. h + 3, h + 4 .. h + 7, the values of A as binary64 numbers in ad[r][l]
 * (FMA: not inlined, the other kinds' code stays AVX2's) */
__attribute__((noinline)) MM_TGT256F static void sum_exact8(const fcpanel *bp, int h, int64_t l0, int64_t n,
                                                            const double *const *ad, __m256d (*s)[2])
{
    const double *a0 = ad[0] + l0, *a1 = ad[1] + l0, *a2 = ad[2] + l0, *a3 = ad[3] + l0;
    __m256d s00 = s[0][0], s01 = s[0][1], s10 = s[1][0], s11 = s[1][1];
    __m256d s20 = s[2][0], s21 = s[2][1], s30 = s[3][0], s31 = s[3][1];
    for (int64_t j = 0; j < n; j++) {
        const __m256 b = _mm256_loadu_ps(bp[l0 + j].f + h);
        const __m256d d0 = _mm256_cvtps_pd(_mm256_castps256_ps128(b)), d1 = _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1));
        const __m256d x0 = _mm256_broadcast_sd(a0 + j), x1 = _mm256_broadcast_sd(a1 + j);
        const __m256d x2 = _mm256_broadcast_sd(a2 + j), x3 = _mm256_broadcast_sd(a3 + j);
        s00 = _mm256_fmadd_pd(x0, d0, s00), s01 = _mm256_fmadd_pd(x0, d1, s01);
        s10 = _mm256_fmadd_pd(x1, d0, s10), s11 = _mm256_fmadd_pd(x1, d1, s11);
        s20 = _mm256_fmadd_pd(x2, d0, s20), s21 = _mm256_fmadd_pd(x2, d1, s21);
        s30 = _mm256_fmadd_pd(x3, d0, s30), s31 = _mm256_fmadd_pd(x3, d1, s31);
    }
    s[0][0] = s00, s[0][1] = s01, s[1][0] = s10, s[1][1] = s11;
    s[2][0] = s20, s[2][1] = s21, s[3][0] = s30, s[3][1] = s31;
}

/* as sum_rows, for lanes h .. h + 7 of the panel */
__attribute__((always_inline)) H8 static inline void sum_rows8(const fcpanel *bp, int h, int64_t l0, int64_t n,
                                                               const float *const *af, const __m256 *sc,
                                                               const __m256 *p2, __m256i *acc, __m256d *lo,
                                                               __m256d *hi, __m256 *lost, int wide, int need_lost)
{
    const float *f0 = af[0], *f1 = af[1], *f2 = af[2], *f3 = af[3];
    const __m256 s0 = sc[0], s1 = sc[1], s2 = sc[2], s3 = sc[3];
    __m256i a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    __m256 d0 = lost[0], d1 = lost[1], d2 = lost[2], d3 = lost[3];
    for (int64_t l = l0; l < l0 + n; l++) {
        const __m256 bf = _mm256_loadu_ps(bp[l].f + h);
        const __m256 t0 = _mm256_mul_ps(_mm256_set1_ps(f0[l]), bf), t1 = _mm256_mul_ps(_mm256_set1_ps(f1[l]), bf);
        const __m256 t2 = _mm256_mul_ps(_mm256_set1_ps(f2[l]), bf), t3 = _mm256_mul_ps(_mm256_set1_ps(f3[l]), bf);
        const __m256 v0 = _mm256_mul_ps(t0, s0), v1 = _mm256_mul_ps(t1, s1);
        const __m256 v2 = _mm256_mul_ps(t2, s2), v3 = _mm256_mul_ps(t3, s3);
        if (wide) {
            add_wide8(v0, &lo[0], &hi[0]);
            add_wide8(v1, &lo[1], &hi[1]);
            add_wide8(v2, &lo[2], &hi[2]);
            add_wide8(v3, &lo[3], &hi[3]);
        } else {
            a0 = _mm256_add_epi32(a0, _mm256_cvttps_epi32(v0));
            a1 = _mm256_add_epi32(a1, _mm256_cvttps_epi32(v1));
            a2 = _mm256_add_epi32(a2, _mm256_cvttps_epi32(v2));
            a3 = _mm256_add_epi32(a3, _mm256_cvttps_epi32(v3));
        }
        if (need_lost) {
            d0 = _mm256_or_ps(d0, frac8(v0, t0, p2[0]));
            d1 = _mm256_or_ps(d1, frac8(v1, t1, p2[1]));
            d2 = _mm256_or_ps(d2, frac8(v2, t2, p2[2]));
            d3 = _mm256_or_ps(d3, frac8(v3, t3, p2[3]));
        }
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
    lost[0] = d0, lost[1] = d1, lost[2] = d2, lost[3] = d3;
}

/* fc_body at level 1, lanes h .. h + 7: tz (rounding toward zero), kind 0 (sum32), 1
 * (chunks of 32-bit sums into binary64 ones) or 2 (wide: binary64 sums of the terms; with X,
 * the bounds and values of the exact kind) */
__attribute__((always_inline)) H8 static inline void fc_body8(const uctx *g, const int32_t *const *aE,
                                                              const float *const *af, const fcpanel *bp, int64_t k,
                                                              float *c, int32_t *cE, int *live, uint8_t *fl, int h,
                                                              const fcx *X, const int need_lost,
                                                              const int tz, const int kind, const int b4,
                                                              const int spec)
{
    const sfp8u_model *md = g->md;
    const int64_t blk = b4 ? 4 : md->block;
    const int64_t chunk = kind != 1 ? 1 : (int64_t)(((uint64_t)1 << 31) - 1) / (int64_t)(((uint64_t)1 << (g->W + 2)) - 1);
    const __m256i none = _mm256_set1_epi32(NONE), ones = _mm256_set1_epi32(-1);
    const __m256i vW = _mm256_set1_epi32(g->W), vmin = _mm256_set1_epi32(md->has_min_exp ? md->min_exp : NONE);
    const __m256i vW127 = _mm256_set1_epi32(g->W - 127);
    /* the range tests, deferred (lo, hi below): tpre + dlo >= -126, tpost + dhi <= 126 */
    const __m256i dlo = _mm256_set1_epi32(-126 - (int)g->emin_o), dhi = _mm256_set1_epi32(126 - (int)g->emax_o);
    const __m256i big = _mm256_set1_epi32(-NONE);
    /* tpre's lower bound implied by ue's when emin_o = -126 (binary32 outputs): a nonzero T
       is an integer, |T| >= 1, so tpre >= ue >= -126 */
    /* spec (sfp8mu_fc_rows256): toward zero, P = 24, emin_o = -126, W >= 1, no min_exponent
       above -126.  Every nominal exponent of a term is in -126 .. 127 (binary32 products and
       running values), so min_exponent changes no e and ue <= 126 needs no test; the unit
       kept as ue + 127 (ub, in ue[], 127 for the lanes without terms; ue >= -126: ub >= 1),
       the exponent of a result as rf's biased one + ub - 254, tested against emax_o without
       offset.  DERIVED as fc_body8; proof: test_entry (entry block_fma, parts profiles,
       routes, carry: bf16-2^62, results above emax_o; carry256: low/after-inexact, units
       below 2^-126) */
    const int lowt = spec ? 0 : g->emin_o > -126, hasmin = spec ? 0 : md->has_min_exp;
    const int plow = spec ? 0 : g->P < 24;
    const __m256i keep = _mm256_set1_epi32(g->P >= 24 ? -1 : (int)(~0u << (24 - g->P)));
    const __m256d top24 = _mm256_castsi256_pd(_mm256_set1_epi64x((long long)0xFFFFFFFFE0000000ull));
    /* the exact kind (wide): blocks whose products need no truncation */
    const int exact = kind == 2 && X != NULL;
    const __m256i off = _mm256_set1_epi32((1 << 28) - 1);
    const int mab = md->fa.man_bits + md->fb.man_bits;
    int misses = 0; /* the exact kind: blocks in turn that it did not take */
    __m256 vc[R];
    __m256i vcE[R], lo8[R], hi8[R];
    unsigned inexact[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        vc[r] = _mm256_loadu_ps(c + 16 * r + h);
        vcE[r] = _mm256_loadu_si256((const __m256i *)(cE + 16 * r + h));
        lo8[r] = big;
        hi8[r] = none;
        inexact[r] = 0;
    }
    for (int64_t k0 = 0; k0 < k; k0 += blk) {
        const int64_t n = b4 && k - k0 >= 4 ? 4 : k - k0 < blk ? k - k0 : blk;
        __m256i e[R], ue[R], a32[R], terms[R], mb = _mm256_set1_epi32(-1), xb = none;
        __m256d lo[R], hi[R];
        __m256 sc[R], pu[R], lost[R];
        int fast = 0, bound = 0;
        const int tryx = exact && misses < 8; /* eight blocks in turn without the exact kind: no more tests */
        if (tryx) {
            /* the exact kind without the scan (above): E' from the block's bounds (fcx), the
               products' and the running value's lowest bits tested against its unit */
            const int64_t bi = k0 / blk;
            unsigned all = 0xFF;
            xb = _mm256_loadu_si256((const __m256i *)(X->bb + 32 * bi + h));
            mb = _mm256_loadu_si256((const __m256i *)(X->bb + 32 * bi + 16 + h));
            {
                const __m256i mbv = _mm256_sub_epi32(mb, off), bz = _mm256_cmpeq_epi32(mb, ones);
#pragma GCC unroll 4
                for (int r = 0; r < R; r++) {
                    const __m256i cz = _mm256_cmpeq_epi32(vcE[r], none);
                    __m256i x = _mm256_max_epi32(vcE[r], _mm256_add_epi32(_mm256_set1_epi32(X->amx[r * X->nb + bi]), xb)), u, ok;
                    const __m256i t = _mm256_cmpgt_epi32(x, _mm256_set1_epi32(NONE / 2 - 1));
                    /* the running value's lowest set bit: its exponent less 23, plus the
                       position of the lowest set bit of its significand */
                    const __m256i cs = _mm256_or_si256(_mm256_and_si256(_mm256_castps_si256(vc[r]), _mm256_set1_epi32(0x7FFFFF)),
                                                       _mm256_set1_epi32(0x800000));
                    const __m256i cl = _mm256_add_epi32(
                        _mm256_sub_epi32(expo8(vc[r]), _mm256_set1_epi32(150)),
                        _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(
                                              _mm256_and_si256(cs, _mm256_sub_epi32(_mm256_setzero_si256(), cs)))),
                                          23));
                    e[r] = x;
                    if (hasmin) x = _mm256_max_epi32(x, vmin);
                    u = _mm256_and_si256(t, _mm256_sub_epi32(x, vW));
                    ok = _mm256_or_si256(cz, _mm256_cmpgt_epi32(_mm256_add_epi32(cl, _mm256_set1_epi32(1)), u));
                    if (X->amn[r * X->nb + bi] != 0xFFFFFFFFu)
                        ok = _mm256_and_si256(ok, low_ok(mbv, bz, X->amn[r * X->nb + bi], mab, u));
                    all &= (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_or_si256(ok, _mm256_xor_si256(t, ones))));
                }
            }
            bound = fast = all == 0xFF;
            if (bound) misses = 0;
        }
        if (!bound) {
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) e[r] = vcE[r];
            for (int64_t l = k0; l < k0 + n; l++) {
                const __m256i be = _mm256_loadu_si256((const __m256i *)(bp[l].E + h));
#pragma GCC unroll 4
                for (int r = 0; r < R; r++)
                    e[r] = _mm256_max_epi32(e[r], _mm256_add_epi32(_mm256_set1_epi32(aE[r][l]), be));
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            terms[r] = _mm256_cmpgt_epi32(e[r], _mm256_set1_epi32(NONE / 2 - 1));
            if (spec) {
                const __m256i ub = _mm256_blendv_epi8(_mm256_set1_epi32(127), _mm256_sub_epi32(e[r], vW127), terms[r]);
                const __m256i pb = _mm256_slli_epi32(ub, 23);
                lo8[r] = _mm256_min_epi32(lo8[r], ub);
                ue[r] = ub;
                pu[r] = _mm256_castsi256_ps(pb);
                sc[r] = _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_set1_epi32(254 << 23), pb));
                lo[r] = hi[r] = _mm256_setzero_pd();
                lost[r] = _mm256_setzero_ps();
                continue;
            }
            if (hasmin) e[r] = _mm256_max_epi32(e[r], vmin); /* the lanes without terms: ue 0 */
            ue[r] = _mm256_and_si256(terms[r], _mm256_sub_epi32(e[r], vW)); /* 0 for the lanes without terms */
            /* ue in -126 .. 126, tested at the end (a lane outside it computes garbage) */
            lo8[r] = _mm256_min_epi32(lo8[r], ue[r]);
            hi8[r] = _mm256_max_epi32(hi8[r], ue[r]); /* (spec went on above) */
            {   /* 2^ue, 2^-ue: (ue + 127) 2^23 and (254 << 23) - that */
                const __m256i pb = _mm256_slli_epi32(_mm256_add_epi32(ue[r], _mm256_set1_epi32(127)), 23);
                pu[r] = _mm256_castsi256_ps(pb);
                sc[r] = _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_set1_epi32(254 << 23), pb));
            }
            lo[r] = hi[r] = _mm256_setzero_pd();
            lost[r] = _mm256_setzero_ps();
        }
        if (tryx && !bound) { /* every product of the block a multiple of its lane's unit 2^ue */
            const __m256i mbv = _mm256_sub_epi32(mb, off), bz = _mm256_cmpeq_epi32(mb, _mm256_set1_epi32(-1));
            const int64_t bi = k0 / blk;
            unsigned all = 0xFF;
            for (int r = 0; r < R; r++) {
                const uint32_t ma = X->amn[r * X->nb + bi];
                if (ma != 0xFFFFFFFFu)
                    all &= (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
                        _mm256_or_si256(low_ok(mbv, bz, ma, mab, ue[r]), _mm256_xor_si256(terms[r], ones))));
            }
            fast = all == 0xFF;
            misses = fast ? 0 : misses + 1;
        }
        /* the running values: the first term */
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const __m256 v = _mm256_mul_ps(vc[r], sc[r]);
            if (kind != 0) { /* kind 1 too: the products' chunks to themselves */
                add_wide8(v, &lo[r], &hi[r]);
                a32[r] = _mm256_setzero_si256();
            } else {
                a32[r] = _mm256_cvttps_epi32(v);
            }
            if (need_lost) lost[r] = frac8(v, vc[r], pu[r]);
        }
        /* the products (kind 1: in chunks of at most chunk products, whose 32-bit sums cannot
           overflow, each flushed into the binary64 sums; H100's W = 25, blocks of 16: one) */
        if (fast) {
            __m256d s[R][2];
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) s[r][0] = s[r][1] = _mm256_setzero_pd();
            sum_exact8(bp, h, k0, n, X->ad, s);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const __m128i nu = _mm_sub_epi32(_mm_setzero_si128(), _mm256_castsi256_si128(ue[r]));
                const __m128i nh = _mm_sub_epi32(_mm_setzero_si128(), _mm256_extracti128_si256(ue[r], 1));
                lo[r] = _mm256_add_pd(lo[r], _mm256_mul_pd(s[r][0], pow2d(nu)));
                hi[r] = _mm256_add_pd(hi[r], _mm256_mul_pd(s[r][1], pow2d(nh)));
            }
        } else if (kind != 1) sum_rows8(bp, h, k0, n, af, sc, pu, a32, lo, hi, lost, kind == 2, need_lost);
        else
            for (int64_t l = k0; l < k0 + n; l += chunk) {
                sum_rows8(bp, h, l, k0 + n - l < chunk ? k0 + n - l : chunk, af, sc, pu, a32, lo, hi, lost, 0,
                          need_lost);
#pragma GCC unroll 4
                for (int r = 0; r < R; r++) flush8(&a32[r], &lo[r], &hi[r]);
            }
        /* the sums rounded: rf by MXCSR's direction (the model's), tpre the exponent of T */
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m256 rf, rz;
            __m256i nz, tpre, tpost;
            unsigned dif = 0;
            if (kind == 0) {
                rf = _mm256_cvtepi32_ps(a32[r]);
                if (tz) rz = rf;
                else { /* |T| < 2^31: above 2^24 its low 8 bits cleared, an exact conversion */
                    const __m256i x = _mm256_abs_epi32(a32[r]);
                    const __m256i big = _mm256_cmpgt_epi32(x, _mm256_set1_epi32(0xFFFFFF));
                    rz = _mm256_cvtepi32_ps(_mm256_andnot_si256(_mm256_and_si256(big, _mm256_set1_epi32(255)), x));
                }
                if (tz && plow) rf = _mm256_and_ps(rf, _mm256_castsi256_ps(keep));
                /* the rounding inexact: rf differs from T (2^31 converts to INT_MIN, |T| < 2^31) */
                if (need_lost)
                    dif = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
                        _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_cvttps_epi32(rf), a32[r]), ones)));
            } else {
                rf = _mm256_set_m128(_mm256_cvtpd_ps(hi[r]), _mm256_cvtpd_ps(lo[r]));
                if (tz) rz = rf;
                else /* T's truncation to 24 bits: a binary32 number (|T| < 2^53) */
                    rz = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_and_pd(hi[r], top24)),
                                         _mm256_cvtpd_ps(_mm256_and_pd(lo[r], top24)));
                if (tz && plow) rf = _mm256_and_ps(rf, _mm256_castsi256_ps(keep));
                /* the rounding inexact: rf differs from T (both exact binary64 numbers) */
                if (need_lost)
                    dif = (unsigned)_mm256_movemask_pd(
                              _mm256_cmp_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(rf)), lo[r], _CMP_NEQ_UQ)) |
                          (unsigned)_mm256_movemask_pd(
                              _mm256_cmp_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(rf, 1)), hi[r], _CMP_NEQ_UQ))
                              << 4;
            }
            nz = _mm256_castps_si256(_mm256_cmp_ps(rf, _mm256_setzero_ps(), _CMP_NEQ_UQ));
            if (spec) {
                vc[r] = _mm256_mul_ps(rf, pu[r]);
                if (kind != 0) vc[r] = _mm256_and_ps(vc[r], _mm256_castsi256_ps(nz)); /* a zero: +0 */
                tpre = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(rf), 23),
                                                         _mm256_set1_epi32(255)),
                                        _mm256_sub_epi32(ue[r], _mm256_set1_epi32(254)));
                hi8[r] = _mm256_max_epi32(hi8[r], tpre);
                vcE[r] = _mm256_blendv_epi8(none, tpre, nz);
                continue;
            }
            tpre = _mm256_add_epi32(expo8(rz), ue[r]);
            tpost = tz ? tpre : _mm256_add_epi32(expo8(rf), ue[r]);
            /* the range test of nonzero results (tpost >= tpre), at the end: emin_o <= tpre,
               tpost <= emax_o */
            if (lowt) lo8[r] = _mm256_min_epi32(lo8[r], _mm256_blendv_epi8(big, _mm256_add_epi32(tpre, dlo), nz));
            hi8[r] = _mm256_max_epi32(hi8[r], _mm256_add_epi32(tpost, dhi));
            if (need_lost)
                inexact[r] |= ((unsigned)_mm256_movemask_ps(lost[r]) | dif) &
                              (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(terms[r]));
            vc[r] = _mm256_and_ps(_mm256_mul_ps(rf, pu[r]), _mm256_castsi256_ps(nz)); /* a zero: +0 */
            vcE[r] = _mm256_blendv_epi8(none, tpost, nz);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        const unsigned kb = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
            _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(spec ? 1 : -126), lo8[r]),
                            _mm256_cmpgt_epi32(hi8[r], _mm256_set1_epi32(spec ? (int)g->emax_o : 126)))));
        _mm256_storeu_ps(c + 16 * r + h, vc[r]);
        _mm256_storeu_si256((__m256i *)(cE + 16 * r + h), vcE[r]);
        for (int q = 0; q < 8; q++) {
            if (kb >> q & 1) live[16 * r + h + q] = 0;
            if (inexact[r] >> q & 1) fl[16 * r + h + q] |= SFP8_FLAG_INEXACT;
        }
    }
}

/* the two halves */
__attribute__((always_inline)) H8 static inline void fc_run8(const uctx *g, const int32_t *const *aE,
                                                                     const float *const *af, const fcpanel *bp,
                                                                     int64_t k, float *c, int32_t *cE, int *live,
                                                                     uint8_t *fl, const fcx *X, const int need_lost,
                                                                     const int tz, const int kind, const int b4,
                                                                     const int spec)
{
    fc_body8(g, aE, af, bp, k, c, cE, live, fl, 0, X, need_lost, tz, kind, b4, spec);
    fc_body8(g, aE, af, bp, k, c, cE, live, fl, 8, X, need_lost, tz, kind, b4, spec);
}

#define FC8_CASE(nl, t, kd, b, sp)                                                                                   \
    H8 static void fc8_##nl##t##kd##b##sp(const uctx *g, const int32_t *const *aE, const float *const *af,           \
                                          const fcpanel *bp, int64_t k, float *c, int32_t *cE, int *live,            \
                                          uint8_t *fl, const fcx *X)                                                 \
    {                                                                                                                \
        fc_run8(g, aE, af, bp, k, c, cE, live, fl, X, nl, t, kd, b, sp);                                             \
    }
FC8_CASE(0, 1, 0, 1, 0)
FC8_CASE(1, 1, 0, 1, 0)
FC8_CASE(0, 1, 0, 0, 0)
FC8_CASE(1, 1, 0, 0, 0)
FC8_CASE(0, 0, 0, 0, 0)
FC8_CASE(1, 0, 0, 0, 0)
FC8_CASE(0, 1, 1, 0, 0)
FC8_CASE(1, 1, 1, 0, 0)
FC8_CASE(0, 0, 1, 0, 0)
FC8_CASE(1, 0, 1, 0, 0)
FC8_CASE(0, 1, 2, 0, 0)
FC8_CASE(1, 1, 2, 0, 0)
FC8_CASE(0, 0, 2, 0, 0)
FC8_CASE(1, 0, 2, 0, 0)
FC8_CASE(0, 1, 0, 1, 1)
FC8_CASE(0, 1, 0, 0, 1)
FC8_CASE(0, 1, 1, 0, 1)
#undef FC8_CASE

/* the exact kind's scratch (fcx): ad (FC_ROWS k binary64), amx and amn (FC_ROWS nb each),
 * then per column group its panel's bounds (nb 32 int32) and whether they are set (a byte) */
static int64_t fcx_blocks(const uctx *g, int64_t k)
{
    return (k + g->md->block - 1) / g->md->block;
}

size_t sfp8mu_fc_scratch(const uctx *g, int64_t k, int64_t groups)
{
    const int64_t nb = fcx_blocks(g, k);
    if (g->W + 2 <= 31 || k <= 0) return 0; /* the exact kind: wide sums */
    return (size_t)(R * k * 8 + R * nb * 8 + groups * nb * 128 + groups);
}

/* the scratch's A part for these rows (group 0: the first call for them) and B part of
 * this group (its first call) */
MM_TGT256 static void fcx_fill(const uctx *g, const int32_t *const *aE, const float *const *af, const fcpanel *bp,
                               int64_t k, void *scratch, int64_t group, int64_t groups, fcx *X)
{
    const int64_t nb = fcx_blocks(g, k), blk = g->md->block;
    double *ad = scratch;
    int32_t *amx = (int32_t *)(ad + R * k);
    uint32_t *amn = (uint32_t *)(amx + R * nb);
    int32_t *bb = (int32_t *)(amn + R * nb) + group * nb * 32;
    uint8_t *done = (uint8_t *)((int32_t *)(amn + R * nb) + groups * nb * 32) + group;
    for (int r = 0; r < R; r++) X->ad[r] = ad + r * k;
    X->amx = amx, X->amn = amn, X->bb = bb, X->nb = nb;
    if (group == 0)
        for (int r = 0; r < R; r++) {
            for (int64_t l = 0; l < k; l++) ad[r * k + l] = af[r][l];
            for (int64_t b = 0; b < nb; b++)
                bounds_e(aE[r] + b * blk, k - b * blk < blk ? k - b * blk : blk, &amx[r * nb + b], &amn[r * nb + b]);
        }
    if (!*done) {
        const __m256i off = _mm256_set1_epi32((1 << 28) - 1);
        for (int64_t b = 0; b < nb; b++)
            for (int hh = 0; hh < 16; hh += 8) {
                __m256i xb = _mm256_set1_epi32(NONE), mb = _mm256_set1_epi32(-1);
                for (int64_t l = b * blk; l < k && l < (b + 1) * blk; l++) {
                    const __m256i be = _mm256_loadu_si256((const __m256i *)(bp[l].E + hh));
                    xb = _mm256_max_epi32(xb, be);
                    mb = _mm256_min_epu32(mb, _mm256_add_epi32(be, off));
                }
                _mm256_storeu_si256((__m256i *)(bb + 32 * b + hh), xb);
                _mm256_storeu_si256((__m256i *)(bb + 32 * b + 16 + hh), mb);
            }
        *done = 1;
    }
}

void sfp8mu_fc_rows256(const uctx *g, const int32_t *const *aE, const float *const *af, const fcpanel *bp, int64_t k,
                       float *c, int32_t *cE, int *live, uint8_t *fl, int need_lost, void *scratch, int64_t group,
                       int64_t groups)
{
    const int tz = g->rounding == SFP8_ROUND_TOWARD_ZERO;
    int spec;
    fcx X;
    const int64_t chunk = g->W + 2 > 31 ? 0 : (int64_t)(((uint64_t)1 << 31) - 1) / (int64_t)(((uint64_t)1 << (g->W + 2)) - 1);
    const int kind = g->W + 2 > 31 ? 2 : chunk >= g->md->block + 1 ? 0 : 1;
    const int b4 = g->md->block == 4 && tz && kind == 0; /* blocks of four, loops unrolled (V100, the TF32 rows) */
    mm_fxsave sv;
    mm_fx_enter(&sv);
    mm_fx_clear(g->rounding); /* the conversions' rounding direction: the model's */
    if (kind == 2 && scratch) fcx_fill(g, aE, af, bp, k, scratch, group, groups, &X);
    /* the common rows' constants known at compile time (fc_body8's spec) */
    spec = !need_lost && tz && kind != 2 && g->P == 24 && g->emin_o == -126 && g->W >= 1 &&
           (!g->md->has_min_exp || g->md->min_exp <= -126);
#define FC8_CALL(nl, t, kd, b, sp)                                                                                   \
    else if (need_lost == nl && tz == t && kind == kd && b4 == b && spec == sp)                                      \
        fc8_##nl##t##kd##b##sp(g, aE, af, bp, k, c, cE, live, fl, kind == 2 && scratch ? &X : NULL);
    if (0) {
    }
    FC8_CALL(0, 1, 0, 1, 0)
    FC8_CALL(1, 1, 0, 1, 0)
    FC8_CALL(0, 1, 0, 0, 0)
    FC8_CALL(1, 1, 0, 0, 0)
    FC8_CALL(0, 0, 0, 0, 0)
    FC8_CALL(1, 0, 0, 0, 0)
    FC8_CALL(0, 1, 1, 0, 0)
    FC8_CALL(1, 1, 1, 0, 0)
    FC8_CALL(0, 0, 1, 0, 0)
    FC8_CALL(1, 0, 1, 0, 0)
    FC8_CALL(0, 1, 2, 0, 0)
    FC8_CALL(1, 1, 2, 0, 0)
    FC8_CALL(0, 0, 2, 0, 0)
    FC8_CALL(1, 0, 2, 0, 0)
    FC8_CALL(0, 1, 0, 1, 1)
    FC8_CALL(0, 1, 0, 0, 1)
    FC8_CALL(0, 1, 1, 0, 1)
#undef FC8_CALL
    __asm__ volatile("" ::: "memory");
    mm_fx_leave(&sv);
}
#else
void sfp8mu_fc_rows256(const uctx *g, const int32_t *const *aE, const float *const *af, const fcpanel *bp, int64_t k,
                       float *c, int32_t *cE, int *live, uint8_t *fl, int need_lost, void *scratch, int64_t group,
                       int64_t groups)
{
    (void)g, (void)aE, (void)af, (void)bp, (void)k, (void)c, (void)cE, (void)live, (void)fl, (void)need_lost;
    (void)scratch, (void)group, (void)groups;
}

size_t sfp8mu_fc_scratch(const uctx *g, int64_t k, int64_t groups)
{
    (void)g, (void)k, (void)groups;
    return 0;
}
#endif
