/*
 * The block_fma path's kernel for the two-term alignments (mm_units_fp.c's sfp8mu_fp_gemm
 * calls it where sfp8mu_late_ok accepts the model): the addend after the products
 * (addend="late", the MI300X fp16 profile) and odd/even groups (MI300X FNUZ FP8).  The
 * generic kernel, and the definition, is bfma.c's (block_aligned, sfp8u_two_term); outputs
 * this kernel leaves are computed by it.
 *
 * The products of a block (of a group: even or odd positions) are summed as the model
 * aligns them: the largest nominal exponent E of the group's products (at least
 * min_exponent) fixes the unit u = 2^(E - W); every product p = a * b is an exact binary32
 * number and p / u an exact binary32 number or below 1 in magnitude (sfp8mu_late_ok's rule
 * on the operand formats and W: 2^-(E - W) a normal binary32 number, the operands and
 * products normal binary32 numbers), so the conversion of p * 2^-(E - W) to an integer
 * with truncation is the model's floor(|p| / u) with the sign of p, and the group's sum of
 * them is below 2^31 (block * 2^(W + 2)).  Bits dropped: p / u not an integer.  The two-term
 * alignments (groups, then the addend) and the rounding of the block's result are done in
 * 64-bit integers (every term below 2^62): round_a of a quotient by 2^s is the arithmetic
 * shift (floor) corrected by the remainder, s clamped to 63 (|term| < 2^62: any s >= 63
 * rounds as 63 does).  The running value c is kept as the model's partial sum of the
 * addend, T_c = m_c 2^(W - 23) at 2^(E(c) - W) with E(c) = floor(log2 |c|): every value it
 * holds is a normal number of the output format (the block results, and the addend; a
 * subnormal addend leaves the output to the generic kernel), so T_c has its msb at bit W.
 * A block result that is not a normal number of the output format (tiny before rounding, or
 * above the largest binade after it) leaves the output to the generic kernel, as do NaN and
 * infinite operands in its row or column, a NaN or infinite addend, and (product_overflow
 * off) a row and column whose products could reach 2^(emax + 1).
 *
 * The MI300X profiles (lk.dbl: binary32 output, downward alignment, nearest even, zero
 * addend exponent -126) take the AVX-512 binary64 steps (dstep_512, four rows of A and
 * sixteen columns at a time, the rows' steps interleaved); the odd/even groups are combined
 * in 32-bit lanes first (arithmetic shift: the downward alignment).  Where 2^(E_p - W) is a
 * normal binary32 number and every operand exponent fits a byte (lk.fast: float16, FNUZ FP8),
 * the shorter step fstep_512 runs instead, and the four rows' largest exponents are found at
 * once in bytes (emax8_512).  Operands held scaled (bfloat16, TF32) take the same two steps for
 * the rows whose exponents fit: where every exponent of B, and of the four rows of A, lies in
 * -32 .. 31 (in_bytes), their values are exact normal binary32 numbers (at most 12 significant
 * bits, at least 2^-44), as are their products and 2^(E_p - W) (|E_p| <= 64, W <= 50): lk.fast's
 * conditions for these operands, so those rows run with the values (unscale; B's panels copied
 * once, bfu) and lrow.fs set; every other row keeps the scaled route.
 *
 * SIMD: the products of sixteen outputs of a row in AVX-512 or AVX2 (binary32 lanes), the
 * two-term alignment and rounding of the sixteen in AVX-512 (binary64, the MI300X profiles),
 * in AVX2 at level 1 for the same profiles (mm_units_ldec.c's sfp8ml_late_dbl_256: two rows at a
 * time, the step in four binary64 lanes; bfloat16 / TF32 rows and panels whose exponents fit
 * bytes as values, sfp8ml_in_bytes_256 / sfp8ml_unscale_256; where lrow.fs and bits lost no longer
 * matter, the two rows' largest exponents at once in bytes from aE4 / bE8, lrun8_256), or per lane (every other model:
 * AVX2 products, also at the AVX-512 level); every level has the portable kernel of the same
 * steps.  Operand
 * decoding: float16 by vcvtph2ps, other IEEE-layout codes of two or four bytes (bfloat16, TF32's
 * 19 bits) by arithmetic (decode_arith_512), one-byte codes by gathers from a table (AVX-512);
 * at level 1 (AVX2) every such code (float16 too) by sfp8ml_decode_arith_256 and the one-byte
 * codes by sfp8ml_decode_tab_256 (mm_units_ldec.c, the same decodings eight lanes at a time);
 * every other code by mm_udecode's decoder.  B is held in panels of sixteen columns.
 *
 * DERIVED from core.c round_pack: lstep rounds a block's sum to P significant bits
 * by the model's rounding (toward zero, nearest even or away, upward, downward), dstep_512 and
 * fstep_512 by
 * the hardware's conversion to binary32 at nearest even, where the result is a normal number
 * of the output format (at least 2^emin before rounding, at most the largest binade after
 * it) and leave every other case to bfma.c's deliver; proof:
 * tests/harness/test_harness.py::test_entry (entry block_fma, parts late, late_edges (with
 * the exponent range's edges for bfloat16 and TF32: _late_bytes_edges) and late_routes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "mm.h"
#include "mm_fenv.h"
#include "mm_paths.h"
#include "mm_simd.h"
#include "mm_udecode.h"
#include "mm_units_late.h"
#include "mm_units_ldec.h"
#include "mm_value.h"

#if MM_SIMD
#include <immintrin.h>
#endif

static int64_t top_exp(const sfp8_format *f) { return fmt_top(f) - 1; }


/* 2^(W - E) a normal binary32 number for every alignment exponent E of the products */
static int w_range_ok(const sfp8u_model *md)
{
    int64_t W = 23 + md->extra_bits, lo = fmt_emin(&md->fa) + fmt_emin(&md->fb),
            hi = top_exp(&md->fa) + top_exp(&md->fb);
    if (md->has_min_exp) {
        lo = lo > md->min_exp ? lo : md->min_exp;
        hi = hi > md->min_exp ? hi : md->min_exp;
    }
    return W - hi >= -126 && W - lo <= 127;
}

/* the operands' values and products not all normal binary32 numbers: held scaled */
static int late_scaled(const sfp8u_model *md)
{
    const sfp8_format *fa = &md->fa, *fb = &md->fb;
    return !(fmt_low(fa) >= -126 && fmt_low(fb) >= -126 && fmt_top(fa) <= 127 && fmt_top(fb) <= 127 &&
             fmt_low(fa) + fmt_low(fb) >= -126 && fmt_top(fa) + fmt_top(fb) <= 127 &&
             w_range_ok(md));
}

int sfp8mu_late_ok(const sfp8u_model *md, int64_t k)
{
    int W = 23 + md->extra_bits, r = md->envo.rounding, ar = md->align_rounding;
    const sfp8_format *fa = &md->fa, *fb = &md->fb, *fo = &md->fo;
    if (md->order != SFP8U_BLOCK || md->promote || k < 1 || md->exact_align || md->extra_bits < 0 ||
        md->normalized_products)
        return 0;
    if (!((md->grouping == SFP8U_GLOBAL && md->late_addend) || md->grouping == SFP8U_ODD_EVEN)) return 0;
    if (!(r == SFP8_ROUND_TOWARD_ZERO || r == SFP8_ROUND_NEAREST_EVEN || r == SFP8_ROUND_NEAREST_AWAY ||
          r == SFP8_ROUND_UPWARD || r == SFP8_ROUND_DOWNWARD))
        return 0;
    if (!(ar == SFP8_ROUND_TOWARD_ZERO || ar == SFP8_ROUND_NEAREST_EVEN || ar == SFP8_ROUND_UPWARD ||
          ar == SFP8_ROUND_DOWNWARD))
        return 0;
    if (!(fo->bits == 32 && fo->exp_bits == 8 && fo->man_bits == 23) &&
        !(fo->bits == 16 && fo->exp_bits == 5 && fo->man_bits == 10))
        return 0;
    /* operands of at most 12 significant bits (codes of at most 16 bits, or TF32's 19 as
       mm_units.c passes them): held scaled, a 2^-E(a), their products are exact binary32
       numbers in [2^-22, 4) (late_scaled) */
    if (!(fa->man_bits <= 11 && fb->man_bits <= 11 && fa->bits <= 19 && fb->bits <= 19)) return 0;
    if (late_scaled(md)) /* exponents of at most 11 bits */
        return W + 2 + bitlen64((uint64_t)md->block) <= 31 && md->addend_extra_bits <= 28 && fa->exp_bits <= 11 &&
               fb->exp_bits <= 11;
    /* the group sums below 2^31: terms below 2^(W + 2), block of them */
    if (W + 2 + bitlen64((uint64_t)md->block) > 31) return 0;
    /* the two-term alignments in 64 bits: partial sums below 2^32 (two groups) shifted by X */
    if (md->addend_extra_bits > 28) return 0;
    return 1; /* w_range_ok: late_scaled is 0 */
}

/* round_a(v / 2^s) (0 <= s <= 63, |v| < 2^62); *inex |= a remainder */
static inline int64_t shr_round(int64_t v, int s, int mode, int *inex)
{
    int64_t q = v >> s;
    uint64_t rem = (uint64_t)v - ((uint64_t)q << s), half;
    if (!rem) return q;
    *inex = 1;
    switch (mode) {
    case SFP8_ROUND_UPWARD: return q + 1;
    case SFP8_ROUND_TOWARD_ZERO: return q + (v < 0);
    case SFP8_ROUND_NEAREST_EVEN:
        half = (uint64_t)1 << (s - 1);
        return q + (rem > half || (rem == half && (q & 1)));
    default: return q; /* downward */
    }
}

/* one block of one lane: products' partial sums (Te, Ee) (and, odd/even, (To, Eo); Ex NONE:
 * no product) and the running value (*Tc, *Ec) into the block's result; 0: the lane leaves */
static inline int lstep(const lk *K, int64_t Te, int32_t Ee, int64_t To, int32_t Eo, int64_t *Tc, int32_t *Ec,
                        int *inex)
{
    int64_t Tp, T, E, lsb, top, mag, q;
    int32_t Ep, Ecx;
    int bl, mode = K->ar, neg;
    if (K->oddeven) { /* the two groups, X = 0 */
        if (Ee < NONE / 2 && Eo < NONE / 2) return 1;
        if (Ee >= Eo) {
            Tp = Te + shr_round(To, Ee - Eo < 63 ? Ee - Eo : 63, K->ar, inex);
            Ep = Ee;
        } else {
            Tp = To + shr_round(Te, Eo - Ee < 63 ? Eo - Ee : 63, K->ar, inex);
            Ep = Eo;
        }
    } else {
        if (Ee < NONE / 2) return 1; /* no product: the running value */
        Tp = Te;
        Ep = Ee;
    }
    Ecx = *Ec == NOEXP ? Ep : *Ec;
    if (Ep >= Ecx) {
        int64_t d = (int64_t)Ep - Ecx;
        if (K->far && d > 25) mode = SFP8_ROUND_TOWARD_ZERO;
        T = Tp + shr_round(*Tc, d < 63 ? (int)d : 63, mode, inex);
        E = Ep;
        lsb = E - K->W;
    } else {
        int64_t d = (int64_t)Ecx - Ep;
        T = (int64_t)((uint64_t)*Tc << K->X) + shr_round((int64_t)((uint64_t)Tp << K->X), d < 63 ? (int)d : 63, K->ar,
                                                          inex);
        E = Ecx;
        lsb = E - K->W - K->X;
    }
    if (T == 0) {
        *Tc = 0;
        *Ec = K->zexp;
        return 1;
    }
    neg = T < 0;
    mag = neg ? -T : T;
    bl = bitlen64((uint64_t)mag);
    top = lsb + bl - 1;
    if (top < K->emin_o) return 0;
    q = mag;
    if (bl > K->P) {
        int sh = bl - K->P, up = 0;
        uint64_t rem = (uint64_t)mag & (((uint64_t)1 << sh) - 1), half = (uint64_t)1 << (sh - 1);
        q = mag >> sh;
        if (rem) {
            *inex = 1;
            switch (K->rnd) {
            case SFP8_ROUND_NEAREST_EVEN: up = rem > half || (rem == half && (q & 1)); break;
            case SFP8_ROUND_NEAREST_AWAY: up = rem >= half; break;
            case SFP8_ROUND_UPWARD: up = !neg; break;
            case SFP8_ROUND_DOWNWARD: up = neg; break;
            default: break;
            }
        }
        q += up;
        if (q >> K->P) {
            q >>= 1;
            top++;
        }
        bl = K->P;
    }
    if (top > K->emax_o) return 0;
    q <<= K->W + 1 - bl;
    *Tc = neg ? -q : q;
    *Ec = (int32_t)top;
    return 1;
}

/* the products l0 .. l0 + n - 1 of lane q: their alignment exponent (NONE: no product) and sum */
static inline int32_t group_c(const lrow *R, int64_t l0, int64_t n, int q, int64_t *T, int *lost)
{
    int32_t e = NONE;
    int64_t t = 0;
    float sc;
    uint32_t u;
    for (int64_t l = l0; l < l0 + n; l++) {
        int32_t x = R->aE[l] + R->bE[l * LPP + q];
        e = x > e ? x : e;
    }
    if (e < NONE / 2) {
        *T = 0;
        return e;
    }
    if (R->K->has_min && e < R->K->min_exp) e = R->K->min_exp;
    u = (uint32_t)(127 + R->K->W - e) << 23;
    memcpy(&sc, &u, 4);
    for (int64_t l = l0; l < l0 + n; l++) {
        float v;
        int32_t i;
        if (R->K->scaled) { /* a' b' 2^(E(a) + E(b) - E + W), the scale at least 2^-126 (then v < 1) */
            int32_t bx = 127 + R->K->W + (R->aE[l] + R->bE[l * LPP + q]) - e;
            float s2;
            u = (uint32_t)(bx > 1 ? bx : 1) << 23;
            memcpy(&s2, &u, 4);
            v = R->af[l] * R->bf[l * LPP + q] * s2;
        } else {
            v = R->af[l] * R->bf[l * LPP + q] * sc;
        }
        i = (int32_t)v;
        *lost |= (float)i != v;
        t += i;
    }
    *T = t;
    return e;
}

/* the portable kernel: every block of the live lanes */
static void late_c(const lrow *R, int64_t *Tc, int32_t *Ec, uint8_t *alive, uint8_t *inex)
{
    for (int q = 0; q < LW; q++) {
        int in = 0;
        if (!alive[q]) continue;
        for (int64_t k0 = 0; k0 < R->k; k0 += R->block) {
            int64_t n = R->k - k0 < R->block ? R->k - k0 : R->block, ne = R->K->oddeven ? (n + 1) / 2 : n;
            int64_t Te, To = 0;
            int32_t Ee, Eo = NONE;
            int lost = 0;
            Ee = group_c(R, k0, ne, q, &Te, &lost);
            if (R->K->oddeven) Eo = group_c(R, k0 + ne, n - ne, q, &To, &lost);
            in |= lost;
            if (!lstep(R->K, Te, Ee, To, Eo, &Tc[q], &Ec[q], &in)) {
                alive[q] = 0;
                break;
            }
        }
        inex[q] |= (uint8_t)in;
    }
}

#if MM_SIMD
/* the products l0 .. l0 + n - 1 of eight lanes (h): exponents and sums as group_c's */
MM_TGT256 static inline void group_256(const lrow *R, int64_t l0, int64_t n, int h, __m256i *E, __m256i *T,
                                       __m256i *lost)
{
    const __m256i none = _mm256_set1_epi32(NONE);
    const int32_t *bE = R->bE + h;
    const float *bf = R->bf + h;
    __m256i e = none, t = _mm256_setzero_si256(), terms, s;
    __m256 sc;
    for (int64_t l = l0; l < l0 + n; l++)
        e = _mm256_max_epi32(e, _mm256_add_epi32(_mm256_set1_epi32(R->aE[l]),
                                                 _mm256_loadu_si256((const __m256i *)(bE + l * LPP))));
    terms = _mm256_cmpgt_epi32(e, _mm256_set1_epi32(NONE / 2));
    if (R->K->has_min) e = _mm256_blendv_epi8(e, _mm256_max_epi32(e, _mm256_set1_epi32(R->K->min_exp)), terms);
    s = _mm256_and_si256(terms, _mm256_sub_epi32(_mm256_set1_epi32(R->K->W), e)); /* no term: 2^0 */
    sc = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(s, _mm256_set1_epi32(127)), 23));
    for (int64_t l = l0; l < l0 + n; l++) {
        __m256 v = _mm256_mul_ps(_mm256_set1_ps(R->af[l]), _mm256_loadu_ps(bf + l * LPP)), s2 = sc;
        __m256i i;
        if (R->K->scaled) { /* as group_c's */
            __m256i x = _mm256_add_epi32(_mm256_set1_epi32(R->aE[l]), _mm256_loadu_si256((const __m256i *)(bE + l * LPP)));
            x = _mm256_max_epi32(_mm256_add_epi32(_mm256_sub_epi32(x, e), _mm256_set1_epi32(127 + R->K->W)),
                                 _mm256_set1_epi32(1));
            s2 = _mm256_castsi256_ps(_mm256_slli_epi32(x, 23));
        }
        v = _mm256_mul_ps(v, s2);
        i = _mm256_cvttps_epi32(v);
        if (R->need_lost)
            *lost = _mm256_or_si256(*lost, _mm256_castps_si256(_mm256_cmp_ps(_mm256_cvtepi32_ps(i), v, _CMP_NEQ_UQ)));
        t = _mm256_add_epi32(t, i);
    }
    *E = e;
    *T = t;
}

/* AVX2: the products in SIMD, the two-term steps per lane */
MM_TGT256 static void late_256(const lrow *R, int64_t *Tc, int32_t *Ec, uint8_t *alive, uint8_t *inex)
{
    for (int64_t k0 = 0; k0 < R->k; k0 += R->block) {
        int64_t n = R->k - k0 < R->block ? R->k - k0 : R->block, ne = R->K->oddeven ? (n + 1) / 2 : n;
        int32_t Ee[LW], Eo[LW], le[LW], lo[LW], Te[LW], To[LW];
        int any = 0;
        for (int h = 0; h < LW; h += 8) {
            __m256i E, T, lost = _mm256_setzero_si256();
            group_256(R, k0, ne, h, &E, &T, &lost);
            _mm256_storeu_si256((__m256i *)(Ee + h), E);
            _mm256_storeu_si256((__m256i *)(Te + h), T);
            _mm256_storeu_si256((__m256i *)(le + h), lost);
            lost = _mm256_setzero_si256();
            if (R->K->oddeven) group_256(R, k0 + ne, n - ne, h, &E, &T, &lost);
            else E = _mm256_set1_epi32(NONE), T = lost;
            _mm256_storeu_si256((__m256i *)(Eo + h), E);
            _mm256_storeu_si256((__m256i *)(To + h), T);
            _mm256_storeu_si256((__m256i *)(lo + h), lost);
        }
        for (int q = 0; q < LW; q++) {
            int in = le[q] != 0 || lo[q] != 0;
            if (!alive[q]) continue;
            any = 1;
            if (!lstep(R->K, Te[q], Ee[q], To[q], Eo[q], &Tc[q], &Ec[q], &in)) alive[q] = 0;
            inex[q] |= (uint8_t)in;
        }
        if (!any) return;
    }
}

/* AVX-512: the products of sixteen lanes */
/* the scale of product l: 2^(W - E) (sc), or, operands held scaled (SC), 2^(E(a) + E(b) - E + W)
 * at least 2^-126 */
static inline __attribute__((always_inline)) MM_TGT512 __m512 scale_512(int SC, const lk *K, const lrow *R,
                                                                       const int32_t *aE, int64_t l, __m512i e,
                                                                       __m512 sc)
{
    __m512i x;
    if (!SC) return sc;
    x = _mm512_add_epi32(_mm512_set1_epi32(aE[l]), _mm512_loadu_si512(R->bE + l * LPP));
    x = _mm512_max_epi32(_mm512_add_epi32(_mm512_sub_epi32(x, e), _mm512_set1_epi32(127 + K->W)), _mm512_set1_epi32(1));
    return _mm512_castsi512_ps(_mm512_slli_epi32(x, 23));
}

static inline __attribute__((always_inline)) MM_TGT512 void group_512(int SC, const lk *K, const lrow *R,
                                                                     const float *af, const int32_t *aE, int64_t l0,
                                                                     int64_t n, int need_lost, __m512i *E, __m512i *T,
                                                                     __mmask16 *lost, const __m512i *Ein)
{
    const __m512i none = _mm512_set1_epi32(NONE);
    __m512i e = none, e2 = none, t = _mm512_setzero_si512(), t2 = t, s;
    __mmask16 terms;
    __m512 sc;
    int64_t l = l0;
    if (Ein) { /* the largest exponents given (emax8_512) */
        e = *Ein;
        l = l0 + n;
    }
    for (; l + 1 < l0 + n; l += 2) { /* two chains */
        e = _mm512_max_epi32(e, _mm512_add_epi32(_mm512_set1_epi32(aE[l]), _mm512_loadu_si512(R->bE + l * LPP)));
        e2 = _mm512_max_epi32(
            e2, _mm512_add_epi32(_mm512_set1_epi32(aE[l + 1]), _mm512_loadu_si512(R->bE + (l + 1) * LPP)));
    }
    if (l < l0 + n)
        e = _mm512_max_epi32(e, _mm512_add_epi32(_mm512_set1_epi32(aE[l]), _mm512_loadu_si512(R->bE + l * LPP)));
    e = _mm512_max_epi32(e, e2);
    terms = _mm512_cmpgt_epi32_mask(e, _mm512_set1_epi32(NONE / 2));
    if (K->has_min) e = _mm512_mask_max_epi32(e, terms, e, _mm512_set1_epi32(K->min_exp));
    s = _mm512_maskz_sub_epi32(terms, _mm512_set1_epi32(K->W), e);
    sc = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(s, _mm512_set1_epi32(127)), 23));
#pragma GCC unroll 8
    for (l = l0; l + 1 < l0 + n; l += 2) {
        __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(af[l]), _mm512_loadu_ps(R->bf + l * LPP)), scale_512(SC, K, R, aE, l, e, sc));
        __m512 v2 =
            _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(af[l + 1]), _mm512_loadu_ps(R->bf + (l + 1) * LPP)),
                          scale_512(SC, K, R, aE, l + 1, e, sc));
        t = _mm512_add_epi32(t, _mm512_cvttps_epi32(v));
        t2 = _mm512_add_epi32(t2, _mm512_cvttps_epi32(v2));
        if (need_lost)
            *lost |= _mm512_cmp_ps_mask(v, _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), _CMP_NEQ_UQ) |
                     _mm512_cmp_ps_mask(v2, _mm512_roundscale_ps(v2, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC),
                                        _CMP_NEQ_UQ);
    }
    if (l < l0 + n) {
        __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(af[l]), _mm512_loadu_ps(R->bf + l * LPP)), scale_512(SC, K, R, aE, l, e, sc));
        t = _mm512_add_epi32(t, _mm512_cvttps_epi32(v));
        if (need_lost)
            *lost |= _mm512_cmp_ps_mask(v, _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), _CMP_NEQ_UQ);
    }
    *E = e;
    *T = _mm512_add_epi32(t, t2);
}

/* lstep of eight lanes in binary64 (lk.dbl: binary32 output, downward alignment, rounding
 * to nearest even, zero_addend_exponent -126, W + X <= 50 and X <= 20): the running value c
 * is held as its binary32 value, and E(c) = max(floor(log2 |c|), -126) is also a zero's
 * exponent.  With the unit 2^L of the two-term sum (L = E_p - W when E_p >= E(c), else
 * E(c) - W - X), the terms are c 2^-L and T_p 2^(E_p - W - L), exact binary64 numbers; the
 * one that is not shifted right is an integer, so rounding both down (roundscale) is the
 * model's step; their sum is below 2^53, exact; times 2^L exact; then rounded once to
 * binary32 (the conversion, nearest even).  A lane without products (E_p NONE, T_p 0)
 * gets c back: T = c 2^(W + X - E(c)) exactly.  FAR (odd/even): c more than 25 binades
 * below E_p truncated.  The results' range is checked at the end: mn, the least non-zero
 * magnitude before rounding, at least 2^-126; an overflow (infinity) stays infinite or NaN
 * through every later step (the final value is read). */
static inline __attribute__((always_inline)) MM_TGT512 void dstep_512(int FAR, int LOST, int CL, const lk *K, __m512d Tp,
                                                                     __m512d Ep, __m512d *c, __m512d *mn, __mmask8 *in)
{
    const int ra = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
    const __m512d zero = _mm512_setzero_pd();
    __m512d Ec, D, nL, x1, x2, T, V, rd, av;
    __mmask8 pos, inx = 0;
    /* E(c): c is normal or zero (a lane whose c turns subnormal leaves); a zero's exponent is
       -126, at most every E_p when emin_a + emin_b >= -126 (!CL), and getexp's -inf then
       gives the same step (pos, T = T_p) */
    Ec = _mm512_getexp_pd(*c);
    if (CL) Ec = _mm512_max_pd(Ec, _mm512_set1_pd(-126)); /* E_p may be below -126 */
    D = _mm512_sub_pd(Ep, Ec);
    pos = _mm512_cmp_pd_mask(D, zero, _CMP_GE_OQ);
    nL = _mm512_mask_blend_pd(pos, _mm512_sub_pd(_mm512_set1_pd(K->W + K->X), Ec), _mm512_sub_pd(_mm512_set1_pd(K->W), Ep));
    x1 = _mm512_scalef_pd(*c, nL);
    x2 = _mm512_scalef_pd(Tp, _mm512_maskz_add_pd((__mmask8)~pos, D, _mm512_set1_pd(K->X)));
    {
        __m512d a1 = _mm512_roundscale_pd(x1, ra), a2 = _mm512_roundscale_pd(x2, ra);
        if (FAR) { /* c more than 25 binades below: truncated */
            __mmask8 far = _mm512_cmp_pd_mask(D, _mm512_set1_pd(25), _CMP_GT_OQ);
            a1 = _mm512_mask_roundscale_pd(a1, far, x1, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        }
        if (LOST) inx |= _mm512_cmp_pd_mask(a1, x1, _CMP_NEQ_UQ) | _mm512_cmp_pd_mask(a2, x2, _CMP_NEQ_UQ);
        T = _mm512_add_pd(a1, a2);
    }
    V = _mm512_scalef_pd(T, _mm512_sub_pd(zero, nL));
    rd = _mm512_cvtps_pd(_mm512_cvt_roundpd_ps(V, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    av = _mm512_abs_pd(V);
    *mn = _mm512_mask_min_pd(*mn, _mm512_cmp_pd_mask(V, zero, _CMP_NEQ_UQ), *mn, av);
    /* an infinite result stays (inf, or NaN in every later step): c is read at the end */
    if (LOST) *in |= inx | _mm512_cmp_pd_mask(rd, V, _CMP_NEQ_UQ);
    *c = rd;
}

/* dstep_512 of sixteen lanes (lk.fast: 2^(E_p - W) a normal binary32 number, at least 2^-126): the
 * running values c (sixteen binary32 values, or infinite) and ec, their biased binary32 exponents at
 * least 1 (a zero's exponent is -126, zero_addend_exponent).  The two-term alignment is the unit 2^L,
 * L = max(E_p - W, E(c) - W - X) (the model's: where E_p < E(c) and E_p - W is the larger, both
 * terms are multiples of 2^(E_p - W), c's last bit being at E(c) - 23 >= E_p - W), each term rounded
 * down to a multiple of 2^L, in integers of the unit: c's floor(c 2^-L) by the conversion rounding
 * down of c 2^-L (scalef rounding down: exact, or below 2^-126 in magnitude, where the floor is
 * unchanged), |c 2^-L| < 2^51 (W + X <= 50); T_p's by the arithmetic shift by L - E_p + W; their sum
 * (64-bit lanes, below 2^52) converted once to binary32 at nearest even (the model's P = 24 bits) and
 * scaled by 2^L (exact: a non-zero sum is at least 2^L >= 2^-126; no overflow: the operand exponents
 * in bytes, |T_p 2^(E_p - W)| < 2^72, below half an ulp of 2^127, so no result passes the largest
 * binary32 number).  A lane
 * without products (E_p NONE, T_p 0; L = E(c) - W - X) gets c back: c is a multiple of 2^(E(c) - 23),
 * so of 2^L, and its 24 bits convert exactly.  FAR (odd/even): c more than 25 binades below E_p is
 * truncated: to zero. */
static inline __attribute__((always_inline)) MM_TGT512 void fstep_512(int FAR, int LOST, const lk *K, __m512i T,
                                                                     __m512i E, __m512 *c, __m512i *ec,
                                                                     __mmask8 *in)
{
    const int rd = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC, rn = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m512i Eb = _mm512_add_epi32(E, _mm512_set1_epi32(127 - K->W)); /* E_p - W + 127 */
    const __m512i Sb = _mm512_max_epi32(Eb, _mm512_sub_epi32(*ec, _mm512_set1_epi32(K->W + K->X))); /* L + 127 */
    const __m512i sh = _mm512_sub_epi32(Sb, Eb), Tq = _mm512_srav_epi32(T, sh); /* no product: T_p = 0 */
    const __m512 Lf = _mm512_cvtepi32_ps(_mm512_sub_epi32(Sb, _mm512_set1_epi32(127)));
    __m512 cs = _mm512_scalef_round_ps(*c, _mm512_sub_ps(_mm512_setzero_ps(), Lf), rd), v;
    __mmask16 lost = 0;
    __m256 r[2];
    if (FAR) /* c more than 25 binades below E_p: zero */
        cs = _mm512_maskz_mov_ps((__mmask16)~_mm512_cmpgt_epi32_mask(_mm512_sub_epi32(E, *ec), _mm512_set1_epi32(25 - 127)),
                                 cs);
    if (LOST) /* bits of T_p shifted out, of c below 2^L (c 2^-L no integer, or a non-zero c gone) */
        lost = _mm512_cmpneq_epi32_mask(_mm512_sllv_epi32(Tq, sh), T) |
               _mm512_cmp_ps_mask(cs, _mm512_roundscale_ps(cs, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), _CMP_NEQ_UQ) |
               (_mm512_cmp_ps_mask(cs, _mm512_setzero_ps(), _CMP_EQ_OQ) &
                _mm512_cmp_ps_mask(*c, _mm512_setzero_ps(), _CMP_NEQ_UQ));
    for (int h = 0; h < 2; h++) {
        __m256 ch = h ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(cs), 1)) : _mm512_castps512_ps256(cs);
        __m256i th = h ? _mm512_extracti64x4_epi64(Tq, 1) : _mm512_castsi512_si256(Tq);
        __m512i S = _mm512_add_epi64(_mm512_cvt_roundps_epi64(ch, rd), _mm512_cvtepi32_epi64(th));
        r[h] = _mm512_cvt_roundepi64_ps(S, rn);
        if (LOST) lost |= (__mmask16)(_mm512_cmpneq_epi64_mask(_mm512_cvt_roundps_epi64(r[h], rn), S) << 8 * h);
    }
    v = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(r[0])), _mm256_castps_pd(r[1]), 1));
    v = _mm512_scalef_ps(v, Lf);
    *c = v;
    *ec = _mm512_max_epi32(_mm512_srli_epi32(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff)), 23),
                           _mm512_set1_epi32(1));
    if (LOST) {
        in[0] |= (__mmask8)lost;
        in[1] |= (__mmask8)(lost >> 8);
    }
}

/* the biased binary32 exponents of the running values c (binary32 values), at least 1 */
static inline __attribute__((always_inline)) MM_TGT512 __m512i cexp_512(const __m512d *c)
{
    __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(_mm512_cvtpd_ps(c[0]))),
                                   _mm256_castps_si256(_mm512_cvtpd_ps(c[1])), 1);
    return _mm512_max_epi32(_mm512_srli_epi32(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), 23),
                            _mm512_set1_epi32(1));
}

/* the largest exponent E_p of the products l0 .. l0 + n - 1 of the LROWS rows and sixteen columns
 * (lk.fast: every operand exponent within -32 .. 31, NONE as -128) in bytes, row r at bytes 16 r ..
 * 16 r + 15 (saturating sums: NONE plus any exponent stays below -64), widened to Ew[r] (NONE where
 * there is no product) */
static inline __attribute__((always_inline)) MM_TGT512 void emax8_512(const lrow *R, int64_t l0, int64_t n,
                                                                     __m512i *Ew)
{
    const __m512i idx = _mm512_set_epi64(0x0303030303030303, 0x0303030303030303, 0x0202020202020202,
                                         0x0202020202020202, 0x0101010101010101, 0x0101010101010101, 0, 0);
    __m512i e = _mm512_set1_epi8(-128), e2 = e;
    int64_t l = l0;
#define EMAX8_TERM(l)                                                                                                  \
    _mm512_adds_epi8(_mm512_shuffle_epi8(_mm512_set1_epi32((int32_t)R->aE4[l]), idx),                              \
                     _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(R->bE8 + (l) * LW))))
#pragma GCC unroll 8
    for (; l + 1 < l0 + n; l += 2) {
        e = _mm512_max_epi8(e, EMAX8_TERM(l));
        e2 = _mm512_max_epi8(e2, EMAX8_TERM(l + 1));
    }
    if (l < l0 + n) e = _mm512_max_epi8(e, EMAX8_TERM(l));
#undef EMAX8_TERM
    e = _mm512_max_epi8(e, e2);
#define EMAX8_ROW(r)                                                                                                   \
    Ew[r] = _mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(e, r));                                                  \
    Ew[r] = _mm512_mask_mov_epi32(Ew[r], _mm512_cmplt_epi32_mask(Ew[r], _mm512_set1_epi32(-64)), _mm512_set1_epi32(NONE))
    EMAX8_ROW(0);
    EMAX8_ROW(1);
    EMAX8_ROW(2);
    EMAX8_ROW(3);
#undef EMAX8_ROW
}

/* one block (products k0 .. k0 + n - 1) of row r's two lane vectors (binary64 steps); FS: by
 * fstep_512 (ec its state) */
static inline __attribute__((always_inline)) MM_TGT512 void dblock_512(int OE, int LOST, int GN, int SC, int CL,
                                                                      int FS, const lrow *R, int r,
                                                                      int64_t k0, int64_t n, __m512d *c, __m512d *mn,
                                                                      __m512i *ec, __mmask8 *al, __mmask8 *in,
                                                                      const __m512i *Ee, const __m512i *Eop)
{
    const lk *K = R->K;
    int64_t ne = OE ? (n + 1) / 2 : n;
    __m512i E, T;
    __mmask16 lost = 0;
    if (GN && ne == GN) /* a whole block: GN products per group, a constant of the instance */
        group_512(SC, K, R, R->afr[r], R->aEr[r], k0, GN, LOST, &E, &T, &lost, Ee);
    else
        group_512(SC, K, R, R->afr[r], R->aEr[r], k0, ne, LOST, &E, &T, &lost, Ee);
    if (OE) { /* the groups combined in 32-bit lanes: T = T_big + floor(T_small / 2^d), |T| < 2^31 */
        __m512i Eo, To, d, sm, q;
        __mmask16 ge;
        if (GN && n - ne == GN) group_512(SC, K, R, R->afr[r], R->aEr[r], k0 + ne, GN, LOST, &Eo, &To, &lost, Eop);
        else group_512(SC, K, R, R->afr[r], R->aEr[r], k0 + ne, n - ne, LOST, &Eo, &To, &lost, Eop);
        ge = _mm512_cmpge_epi32_mask(E, Eo);
        d = _mm512_min_epi32(_mm512_abs_epi32(_mm512_sub_epi32(E, Eo)), _mm512_set1_epi32(31));
        sm = _mm512_mask_blend_epi32(ge, T, To);
        q = _mm512_srav_epi32(sm, d); /* floor: the downward alignment rounding */
        if (LOST) lost |= _mm512_cmpneq_epi32_mask(_mm512_sllv_epi32(q, d), sm);
        T = _mm512_add_epi32(_mm512_mask_blend_epi32(ge, To, T), q);
        E = _mm512_max_epi32(E, Eo);
    }
    if (LOST) {
        in[0] |= al[0] & (__mmask8)lost;
        in[1] |= al[1] & (__mmask8)(lost >> 8);
    }
    if (FS) { /* c[0]: the sixteen running values in binary32 */
        __m512 c32 = _mm512_castpd_ps(c[0]);
        fstep_512(OE, LOST, K, T, E, &c32, ec, in);
        c[0] = _mm512_castps_pd(c32);
        return;
    }
    dstep_512(OE, LOST, CL, K, _mm512_cvtepi32_pd(_mm512_castsi512_si256(T)),
              _mm512_cvtepi32_pd(_mm512_castsi512_si256(E)), &c[0], &mn[0], &in[0]);
    dstep_512(OE, LOST, CL, K, _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(T, 1)),
              _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(E, 1)), &c[1], &mn[1], &in[1]);
}

/* the binary64 steps through every block, NR rows of A at a time (R->afr, R->aEr; the steps of
 * their 2 NR independent lane vectors interleaved for the late addend): the running values
 * cv[r * LW + q] (binary32 values) */
static inline __attribute__((always_inline)) MM_TGT512 void drun_512(int OE, int LOST, int GN, int SC, int CL,
                                                                    int FS, const lrow *R,
                                                                    double *cv, uint8_t *alive, uint8_t *inex)
{
    enum { NR = LROWS };
    __m512d c[NR][2], mn[NR][2];
    __m512i ec[NR];
    __mmask8 al[NR][2], in[NR][2], any = 0;
    for (int r = 0; r < NR; r++)
        for (int h = 0; h < 2; h++) {
            c[r][h] = _mm512_loadu_pd(cv + r * LW + 8 * h);
            mn[r][h] = _mm512_set1_pd(0x1p1000);
            al[r][h] = in[r][h] = 0;
            for (int q = 0; q < 8; q++) al[r][h] |= (__mmask8)((alive[r * LW + 8 * h + q] != 0) << q);
            any |= al[r][h];
        }
    for (int r = 0; r < NR; r++) {
        ec[r] = FS ? cexp_512(c[r]) : _mm512_setzero_si512();
        if (FS) /* fstep_512's running values: sixteen binary32 numbers in c[r][0] */
            c[r][0] = _mm512_castps_pd(_mm512_castpd_ps(_mm512_insertf64x4(
                _mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(c[r][0]))), _mm256_castps_pd(_mm512_cvtpd_ps(c[r][1])), 1)));
    }
    for (int64_t k0 = 0; k0 < R->k && any; k0 += R->block) {
        int64_t n = R->k - k0 < R->block ? R->k - k0 : R->block, ne = OE ? (n + 1) / 2 : n;
        __m512i Ew[NR], Eo[NR];
        if (FS) { /* the groups' largest exponents, the four rows at once */
            emax8_512(R, k0, ne, Ew);
            if (OE) emax8_512(R, k0 + ne, n - ne, Eo);
        }
        if (OE) { /* two groups a block: the rows one after the other */
            for (int r = 0; r < NR; r++)
                dblock_512(OE, LOST, GN, SC, CL, FS, R, r, k0, n, c[r], mn[r], &ec[r], al[r], in[r], FS ? &Ew[r] : NULL,
                           FS && OE ? &Eo[r] : NULL);
        } else { /* the rows' steps interleaved (LROWS 4) */
            dblock_512(OE, LOST, GN, SC, CL, FS, R, 0, k0, n, c[0], mn[0], &ec[0], al[0], in[0],
                       FS ? &Ew[0] : NULL, FS && OE ? &Eo[0] : NULL);
            dblock_512(OE, LOST, GN, SC, CL, FS, R, 1, k0, n, c[1], mn[1], &ec[1], al[1], in[1],
                       FS ? &Ew[1] : NULL, FS && OE ? &Eo[1] : NULL);
            dblock_512(OE, LOST, GN, SC, CL, FS, R, 2, k0, n, c[2], mn[2], &ec[2], al[2], in[2],
                       FS ? &Ew[2] : NULL, FS && OE ? &Eo[2] : NULL);
            dblock_512(OE, LOST, GN, SC, CL, FS, R, 3, k0, n, c[3], mn[3], &ec[3], al[3], in[3],
                       FS ? &Ew[3] : NULL, FS && OE ? &Eo[3] : NULL);
        }
    }
    for (int r = 0; r < NR; r++)
        if (FS) { /* back to binary64 lanes */
            __m512 c32 = _mm512_castpd_ps(c[r][0]);
            c[r][0] = _mm512_cvtps_pd(_mm512_castps512_ps256(c32));
            c[r][1] = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c32), 1)));
        }
    for (int r = 0; r < NR; r++)
        for (int h = 0; h < 2; h++) {
            /* every block result a normal binary32 number (fstep_512's are) */
            al[r][h] &= _mm512_cmp_pd_mask(mn[r][h], _mm512_set1_pd(0x1p-126), _CMP_GE_OQ) &
                        _mm512_cmp_pd_mask(_mm512_abs_pd(c[r][h]), _mm512_set1_pd(0x1p128), _CMP_LT_OQ);
            _mm512_storeu_pd(cv + r * LW + 8 * h, c[r][h]);
            for (int q = 0; q < 8; q++) {
                alive[r * LW + 8 * h + q] = al[r][h] >> q & 1;
                inex[r * LW + 8 * h + q] |= in[r][h] >> q & 1;
            }
        }
}

/* instances: the MI300X profiles in binary64 (lk.dbl: downward alignment, nearest even),
 * LROWS rows (R->afr) and their running values (T_c, E(c)) at [r * LW + q] */
__attribute__((noinline)) MM_TGT512 static void late_dbl_512(const lrow *R, int64_t *Tc, int32_t *Ec, uint8_t *alive,
                                                             uint8_t *inex)
{
    const lk *K = R->K;
    double cv[LROWS * LW];
    const __m128i sw = _mm_cvtsi32_si128(52 - K->W);
    const __m512i m52 = _mm512_set1_epi64(((int64_t)1 << 52) - 1);
    for (int q = 0; q < LROWS * LW; q += 8) { /* T_c 2^(E(c) - W), T_c's msb at bit W (0: zero) */
        __m512i t = _mm512_loadu_si512(Tc + q), mag = _mm512_abs_epi64(t);
        __m512i e = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(Ec + q)));
        __m512i u = _mm512_or_si512(_mm512_and_si512(_mm512_sll_epi64(mag, sw), m52),
                                    _mm512_slli_epi64(_mm512_add_epi64(e, _mm512_set1_epi64(1023)), 52));
        u = _mm512_or_si512(u, _mm512_and_si512(t, _mm512_set1_epi64(INT64_MIN)));
        _mm512_storeu_si512(cv + q, _mm512_maskz_mov_epi64(_mm512_test_epi64_mask(mag, mag), u));
    }
    if (R->fs) { /* FNUZ FP8, float16; bfloat16, TF32 where their exponents allow (in_bytes) */
        if (K->oddeven && R->need_lost) drun_512(1, 1, 0, 0, 0, 1, R, cv, alive, inex);
        else if (K->oddeven && R->block == 16) drun_512(1, 0, 8, 0, 0, 1, R, cv, alive, inex);
        else if (K->oddeven) drun_512(1, 0, 0, 0, 0, 1, R, cv, alive, inex);
        else if (R->need_lost) drun_512(0, 1, 0, 0, 0, 1, R, cv, alive, inex);
        else if (R->block == 8) drun_512(0, 0, 8, 0, 0, 1, R, cv, alive, inex);
        else if (R->block == 4) drun_512(0, 0, 4, 0, 0, 1, R, cv, alive, inex); /* TF32 */
        else drun_512(0, 0, 0, 0, 0, 1, R, cv, alive, inex);
    } else if (K->scaled || K->clampc) { /* bfloat16 and other wide ranges */
        if (K->oddeven) drun_512(1, 1, 0, K->scaled, 1, 0, R, cv, alive, inex);
        else if (R->need_lost) drun_512(0, 1, 0, K->scaled, 1, 0, R, cv, alive, inex);
        else if (R->block == 8 && K->scaled) drun_512(0, 0, 8, 1, 1, 0, R, cv, alive, inex); /* bfloat16 */
        else drun_512(0, 0, 0, K->scaled, 1, 0, R, cv, alive, inex);
    } else if (K->oddeven && R->need_lost) drun_512(1, 1, 0, 0, 0, 0, R, cv, alive, inex);
    else if (K->oddeven) drun_512(1, 0, 0, 0, 0, 0, R, cv, alive, inex);
    else if (R->need_lost) drun_512(0, 1, 0, 0, 0, 0, R, cv, alive, inex);
    else drun_512(0, 0, 0, 0, 0, 0, R, cv, alive, inex);
    for (int q = 0; q < LROWS * LW; q += 8) { /* back to T_c (msb at bit W) and E(c) (live lanes: normal) */
        __m512i u = _mm512_loadu_si512(cv + q), e;
        __mmask8 nz = _mm512_test_epi64_mask(_mm512_slli_epi64(u, 1), _mm512_slli_epi64(u, 1));
        __m512i mag = _mm512_srl_epi64(_mm512_or_si512(_mm512_and_si512(u, m52), _mm512_set1_epi64((int64_t)1 << 52)), sw);
        mag = _mm512_mask_sub_epi64(mag, _mm512_movepi64_mask(u), _mm512_setzero_si512(), mag);
        _mm512_storeu_si512(Tc + q, _mm512_maskz_mov_epi64(nz, mag));
        e = _mm512_sub_epi64(_mm512_and_si512(_mm512_srli_epi64(u, 52), _mm512_set1_epi64(0x7ff)), _mm512_set1_epi64(1023));
        e = _mm512_mask_mov_epi64(_mm512_set1_epi64(K->zexp), nz, e);
        _mm256_storeu_si256((__m256i *)(Ec + q), _mm512_cvtepi64_epi32(e));
    }
}

#endif

/* where operand l of a dot product of k is stored: in order, or (odd/even grouping) each
 * block's even positions first, then its odd ones */
static int64_t lslot(const sfp8u_model *md, int64_t l, int64_t k)
{
    int64_t blk = md->block, k0 = l / blk * blk, n = k - k0 < blk ? k - k0 : blk, r = l - k0;
    if (md->grouping != SFP8U_ODD_EVEN) return l;
    return k0 + (r & 1 ? (n + 1) / 2 + r / 2 : r / 2);
}

/* an output's addend as the lane's running value; 0: left to the generic kernel */
static int late_addend(const sfp8u_model *md, const lk *K, const char *C, uint64_t code, int64_t *Tc, int32_t *Ec,
                       uint8_t *fl)
{
    sfp8u_value v;
    int64_t top;
    *Tc = 0;
    *Ec = K->zexp;
    if (!C) return 1;
    sfp8u_decode(&md->fo, code, &v);
    if (v.cls == SFP8U_NAN || v.cls == SFP8U_INF) return 0;
    if (v.sub) *fl |= SFP8_FLAG_DENORMAL;
    if (v.cls != SFP8U_FINITE) return 1; /* a zero of either sign: T_c = 0 */
    if (v.sub && !md->out_subnormals) { /* read as +0 (docs: "The addend") */
        *fl |= SFP8_FLAG_INEXACT;
        return 1;
    }
    top = v.exp + bitlen64(v.sig) - 1;
    if (top < K->emin_o) return 0; /* a subnormal addend: the generic kernel */
    *Tc = (int64_t)(v.sig << (v.exp - (top - K->W)));
    if (v.neg) *Tc = -*Tc;
    *Ec = (int32_t)top;
    return 1;
}

unsigned sfp8mu_late_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                          ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O, ptrdiff_t om,
                          ptrdiff_t op, int64_t m, int64_t k, int64_t p)
{
    int sa = code_size(&md->fa), sb = code_size(&md->fb), so = code_size(&md->fo), used = 0;
    int level = sfp8f_simd_level();
    ptrdiff_t pp = (p + LW - 1) / LW * LW;
    uctx g;
    ldec da, db;
    lk K;
    lrow R;
    float *af = NULL, *bf = NULL;
    int32_t *aE = NULL, *bE = NULL, maxb = NONE;
    void *ma, *mb;
    int64_t *slots;
#if MM_SIMD
    gtab gta, gtb;
    int tabA = 0;
#endif
    unsigned char *colbad = NULL, *colsub;
    int8_t *bE8 = NULL;     /* K.fast or dyn: B's exponents as bytes, panel by panel (emax8_512, lrun8_256) */
    uint32_t *aE4 = NULL;   /* and the row group's, four bytes at l */
#if MM_SIMD
    int dyn = 0;            /* K.scaled, B's exponents in bytes: fstep_512 for rows whose are too */
#endif
    float *bfu = NULL;      /* then B's panels with its values (bfu + LW: not scaled) */
    mm_fxsave env;
    unsigned flags = 0;
    if (!md->has_addend) C = NULL;
    memset(&g, 0, sizeof g);
    g.md = md;
    g.fexact = !late_scaled(md); /* sfp8mu_late_ok: the values exact in binary32, or held scaled */
    memset(&K, 0, sizeof K);
    K.W = 23 + md->extra_bits;
    K.X = md->addend_extra_bits;
    K.P = md->fo.man_bits + 1;
    K.ar = md->align_rounding;
    K.rnd = md->envo.rounding;
    K.oddeven = K.far = md->grouping == SFP8U_ODD_EVEN;
    K.has_min = md->has_min_exp;
    K.min_exp = md->min_exp;
    K.zexp = md->has_zero_addend_exp ? md->zero_addend_exp : NOEXP;
    K.emin_o = fmt_emin(&md->fo);
    K.emax_o = ((int64_t)1 << md->fo.exp_bits) - 2 - md->fo.bias;
    K.scaled = late_scaled(md);
    {
        int64_t lo = fmt_emin(&md->fa) + fmt_emin(&md->fb), hi = top_exp(&md->fa) + top_exp(&md->fb);
        if (md->has_min_exp) lo = lo > md->min_exp ? lo : md->min_exp;
        K.clampc = lo < -126;
        /* binary64 steps: every block value a binary64 number (the exponents' range) */
        K.dbl = lo >= -400 && hi <= 400;
        /* 2^(E_p - W) normal binary32 numbers (E_p from lo to hi, or min_exponent) */
        K.fast = lo - K.W >= -126 && hi - K.W <= 127 && (!md->has_min_exp || md->min_exp - K.W <= 126) &&
                 fmt_emin(&md->fa) >= -32 && top_exp(&md->fa) <= 31 && fmt_emin(&md->fb) >= -32 &&
                 top_exp(&md->fb) <= 31; /* and the exponents in bytes (emax8_512) */
    }
    K.dbl = K.dbl && md->fo.bits == 32 && K.ar == SFP8_ROUND_DOWNWARD && K.rnd == SFP8_ROUND_NEAREST_EVEN && K.W + K.X <= 50 &&
            K.X <= 20 && K.zexp == -126;
    slots = malloc((size_t)k * sizeof *slots);
    ma = sfp8ml_llines(LROWS * k, &af, &aE);
    mb = malloc((size_t)(k * pp) * 8 + 64);
    if (mb) { /* panels of LW columns: for each l, LW exponents then LW values (128 bytes) */
        bE = (int32_t *)mb;
        bf = (float *)mb + LW;
    }
    colbad = calloc((size_t)pp, 2);
    memset(&da, 0, sizeof da);
    memset(&db, 0, sizeof db);
    if (!slots || !ma || !mb || !colbad || !sfp8ml_ldec_init(&g, &da, &md->fa, m * k, K.scaled) || !sfp8ml_ldec_init(&g, &db, &md->fb, k * p, K.scaled)) {
        flags = SFP8U_NOMEM;
        goto done;
    }
    for (int64_t l = 0; l < k; l++) slots[l] = lslot(md, l, k);
    /* no FTZ / DAZ from here (the decoding's conversions, the products' conversions exact) */
    mm_fx_enter(&env);
    mm_fx_clear(SFP8_ROUND_NEAREST_EVEN);
    colsub = colbad + pp;
#if MM_SIMD
    if (level >= 1 && sfp8ml_gtab_init(&gtb, &db, sb) && bp == 1 && p >= 16) {
        __mmask16 *cb = calloc((size_t)(pp / 16) * 2, sizeof *cb);
        if (cb) {
            int64_t p16 = p / 16 * 16;
            for (int64_t l = 0; l < k; l++) {
                int32_t mx = NONE;
                int64_t sl = slots[l];
                if (level == 1)
                    sfp8ml_decode_tab_256(&gtb, (const uint8_t *)(B + l * bk), p, bf + BIX(sl, 0), bE + BIX(sl, 0),
                                          LW * 2 * k, 0, cb, cb + pp / 16, &mx, 1);
                else
                    sfp8ml_decode_tab_512(&gtb, (const uint8_t *)(B + l * bk), p, bf + BIX(sl, 0), bE + BIX(sl, 0), LW * 2 * k, 0,
                                   cb, cb + pp / 16, &mx, 1);
                maxb = mx > maxb ? mx : maxb;
                for (int64_t j = p16; j < pp; j++) { /* the last columns one by one; the padding zeros */
                    int bad = 0, sub = 0;
                    if (j >= p) {
                        bf[BIX(sl, j)] = 0.0f;
                        bE[BIX(sl, j)] = NONE;
                        continue;
                    }
                    ldecode(&g, &db, load_raw(B + l * bk + j * bp, sb), &bf[BIX(sl, j)], &bE[BIX(sl, j)], &bad, &sub);
                    cb[j / 16] |= (__mmask16)(bad << (j % 16));
                    cb[pp / 16 + j / 16] |= (__mmask16)(sub << (j % 16));
                    if (bE[BIX(sl, j)] > maxb) maxb = bE[BIX(sl, j)];
                }
            }
            sfp8ml_column_flags(cb, pp, p, colbad, colsub);
            goto decoded;
        }
    }
    /* float16 (vcvtph2ps), or the other IEEE-layout codes of 2 or 4 bytes (bfloat16, TF32) */
    if (level >= 1 && md->grouping != SFP8U_ODD_EVEN &&
        ((level >= 2 && sfp8ml_is_f16(&md->fb) && bp == 2 && !K.scaled) ||
         (db.arith && (level == 1 || !sfp8ml_is_f16(&md->fb)) && (sb == 2 || sb == 4) && bp == sb))) {
        __mmask16 *cb = calloc((size_t)(pp / 16) * 2, sizeof *cb);
        if (cb) {
            for (int64_t l = 0; l < k; l++) {
                int32_t mx = NONE;
                if (level == 1) /* AVX2: float16 too */
                    sfp8ml_decode_arith_256(&db, B + l * bk, sb, p, bf + BIX(l, 0), bE + BIX(l, 0), LW * 2 * k, cb,
                                            cb + pp / 16, &mx, 1);
                else if (sfp8ml_is_f16(&md->fb))
                    sfp8ml_decode_f16_512((const uint16_t *)(B + l * bk), p, md->in_subnormals, bf + BIX(l, 0),
                                   bE + BIX(l, 0), LW * 2 * k, cb, cb + pp / 16, &mx, 1);
                else
                    sfp8ml_decode_arith_512(&db, B + l * bk, sb, p, bf + BIX(l, 0), bE + BIX(l, 0), LW * 2 * k, cb,
                                     cb + pp / 16, &mx, 1);
                for (int64_t j = p; j < pp; j++) { /* the padding columns: zeros */
                    bf[BIX(l, j)] = 0.0f;
                    bE[BIX(l, j)] = NONE;
                }
                maxb = mx > maxb ? mx : maxb;
            }
            sfp8ml_column_flags(cb, pp, p, colbad, colsub);
            goto decoded;
        }
    }
#endif
    for (int64_t l = 0; l < k; l++) { /* B decoded once; the padding columns zeros */
        int64_t sl = slots[l];
        for (int64_t j = 0; j < pp; j++) {
            int bad = 0, sub = 0;
            if (j >= p) {
                bf[BIX(sl, j)] = 0.0f;
                bE[BIX(sl, j)] = NONE;
                continue;
            }
            ldecode(&g, &db, load_raw(B + l * bk + j * bp, sb), &bf[BIX(sl, j)], &bE[BIX(sl, j)], &bad, &sub);
            colbad[j] |= (unsigned char)bad;
            colsub[j] |= (unsigned char)sub;
            if (bE[BIX(sl, j)] > maxb) maxb = bE[BIX(sl, j)];
        }
    }
#if MM_SIMD
decoded:
    /* A's codes by gathers: one-byte codes of a table format, odd/even slots only in blocks of 16 */
    tabA = sfp8ml_gtab_init(&gta, &da, sa) && (md->grouping != SFP8U_ODD_EVEN || md->block == 16);
#endif
#if MM_SIMD
    /* operands held scaled (bfloat16, TF32) whose exponents fit bytes: their values are exact
       normal binary32 numbers and their products' 2^(E_p - W) too (|E_p| <= 64, W <= 50), the
       conditions of lk.fast; rows of A (four at a time) whose exponents fit take fstep_512 with
       B's panels as values (bfu) */
    dyn = K.dbl && K.scaled && !K.fast && level >= 1 && (!K.has_min || K.min_exp - K.W <= 126) &&
          (level >= 2 ? sfp8ml_in_bytes(bE, k * pp, 1) : sfp8ml_in_bytes_256(bE, k * pp, 1));
    if (dyn && (bfu = malloc((size_t)(k * pp) * 8 + 64)) != NULL) {
        memcpy(bfu, mb, (size_t)(k * pp) * 8);
        if (level >= 2) sfp8ml_unscale(bfu + LW, bE, k * pp, 1);
        else sfp8ml_unscale_256(bfu + LW, bE, k * pp, 1);
    }
    dyn = dyn && bfu;
    if (K.dbl && (K.fast || dyn) && level >= 1) { /* level 1: sfp8ml_late_dbl_256's lrun8_256 reads them */
        bE8 = malloc((size_t)(k * pp) + 64);
        aE4 = malloc((size_t)k * 4 + 64);
        if (!bE8 || !aE4) {
            flags = SFP8U_NOMEM;
            mm_fx_leave(&env);
            goto done;
        }
        if (level >= 2) sfp8ml_bytes_b(bE, bE8, k, pp);
        else sfp8ml_bytes_b_256(bE, bE8, k, pp);
    }
#endif
    R.K = &K;
    R.bE8 = NULL;
    R.aE4 = aE4;
    R.k = k;
    R.block = md->block;
    for (int64_t i0 = 0; i0 < m; i0 += LROWS) {
        int nr = m - i0 < LROWS ? (int)(m - i0) : LROWS, rowbad[LROWS], rowsub[LROWS], fs = K.fast;
        for (int r = 0; r < LROWS; r++) {
            int32_t maxa = NONE;
            R.afr[r] = af + (r < nr ? r : 0) * k; /* rows past m: row 0's values, their lanes not live */
            R.aEr[r] = aE + (r < nr ? r : 0) * k;
            rowbad[r] = 1;
            rowsub[r] = 0;
            if (r >= nr) continue;
            rowbad[r] = 0;
#if MM_SIMD
            if (level >= 2 && sfp8ml_is_f16(&md->fa) && ak == 2 && md->grouping != SFP8U_ODD_EVEN && !K.scaled) {
                __mmask16 b16 = 0, s16 = 0;
                sfp8ml_decode_f16_512((const uint16_t *)(A + (i0 + r) * am), k, md->in_subnormals, af + r * k, aE + r * k,
                               16, &b16, &s16, &maxa, 0);
                rowbad[r] = b16 != 0;
                rowsub[r] = s16 != 0;
            } else if (level >= 2 && da.arith && !sfp8ml_is_f16(&md->fa) && (sa == 2 || sa == 4) && ak == sa &&
                       md->grouping != SFP8U_ODD_EVEN) {
                __mmask16 b16 = 0, s16 = 0;
                sfp8ml_decode_arith_512(&da, A + (i0 + r) * am, sa, k, af + r * k, aE + r * k, 16, &b16, &s16, &maxa, 0);
                rowbad[r] = b16 != 0;
                rowsub[r] = s16 != 0;
            } else if (level == 1 && da.arith && (sa == 2 || sa == 4) && ak == sa && md->grouping != SFP8U_ODD_EVEN) {
                __mmask16 b16 = 0, s16 = 0; /* AVX2: float16 too */
                sfp8ml_decode_arith_256(&da, A + (i0 + r) * am, sa, k, af + r * k, aE + r * k, 16, &b16, &s16, &maxa, 0);
                rowbad[r] = b16 != 0;
                rowsub[r] = s16 != 0;
            } else if (level >= 1 && tabA && ak == 1) { /* level 1: AVX2 gathers */
                __mmask16 b16 = 0, s16 = 0;
                int64_t k16 = k / 16 * 16;
                if (level == 1)
                    sfp8ml_decode_tab_256(&gta, (const uint8_t *)(A + (i0 + r) * am), k, af + r * k, aE + r * k, 16,
                                          md->grouping == SFP8U_ODD_EVEN, &b16, &s16, &maxa, 0);
                else
                    sfp8ml_decode_tab_512(&gta, (const uint8_t *)(A + (i0 + r) * am), k, af + r * k, aE + r * k, 16,
                                   md->grouping == SFP8U_ODD_EVEN, &b16, &s16, &maxa, 0);
                rowbad[r] = b16 != 0;
                rowsub[r] = s16 != 0;
                for (int64_t l = k16; l < k; l++) { /* the last codes one by one */
                    int64_t s = r * k + slots[l];
                    ldecode(&g, &da, load_raw(A + (i0 + r) * am + l * ak, sa), &af[s], &aE[s], &rowbad[r],
                            &rowsub[r]);
                    if (aE[s] > maxa) maxa = aE[s];
                }
            } else
#endif
            for (int64_t l = 0; l < k; l++) {
                int64_t s = r * k + slots[l];
                ldecode(&g, &da, load_raw(A + (i0 + r) * am + l * ak, sa), &af[s], &aE[s], &rowbad[r], &rowsub[r]);
                if (aE[s] > maxa) maxa = aE[s];
            }
            /* products kept in the output's range (product_overflow off): |a b| < 2^(Ea + Eb + 2) */
            if (!md->product_overflow && maxa >= NONE / 2 && maxb >= NONE / 2 && (int64_t)maxa + maxb >= K.emax_o)
                rowbad[r] = 1;
        }
#if MM_SIMD
        if (dyn && level >= 2 && sfp8ml_in_bytes(aE, nr * k, 0)) { /* the rows' values (only late_dbl_512 reads them) */
            sfp8ml_unscale(af, aE, nr * k, 0);
            fs = 1;
        } else if (dyn && sfp8ml_in_bytes_256(aE, nr * k, 0)) { /* level 1: sfp8ml_late_dbl_256 */
            sfp8ml_unscale_256(af, aE, nr * k, 0);
            fs = 1;
        }
        if (aE4 && fs && level >= 2) sfp8ml_bytes_a(R.aEr, aE4, k);
        else if (aE4 && fs) sfp8ml_bytes_a_256(R.aEr, aE4, k);
#endif
        R.fs = fs;
        for (int64_t j0 = 0; j0 < p; j0 += LW) {
            int64_t Tc[LROWS * LW];
            int32_t Ec[LROWS * LW];
            uint8_t alive[LROWS * LW], inex[LROWS * LW], fl[LROWS * LW];
            int any = 0;
            for (int r = 0; r < LROWS; r++)
                for (int q = 0; q < LW; q++) {
                    int64_t j = j0 + q, x = r * LW + q;
                    fl[x] = inex[x] = 0;
                    alive[x] = j < p && !rowbad[r] && !colbad[j] &&
                               late_addend(md, &K, C, C && j < p ? load_raw(C + (i0 + r) * cm + j * cp, so) : 0,
                                           &Tc[x], &Ec[x], &fl[x]);
                    if (!alive[x]) {
                        Tc[x] = 0;
                        Ec[x] = K.zexp;
                    }
                    any |= alive[x];
                }
            /* bits lost matter for the inexact flag until it is raised */
            R.need_lost = !(flags & SFP8_FLAG_INEXACT);
            R.bf = (R.fs && !K.fast ? bfu + LW : bf) + BIX(0, j0);
            R.bE = bE + BIX(0, j0);
            if (bE8) R.bE8 = bE8 + (j0 / LW) * k * LW;
#if MM_SIMD
            if (any && level >= 2 && K.dbl) {
                late_dbl_512(&R, Tc, Ec, alive, inex);
                any = 0;
            }
            /* AVX2, two rows at a time (a row past m: row 0's values, its lanes not live) */
            for (int r = 0; r < nr && any && level == 1 && K.dbl; r += 2)
                sfp8ml_late_dbl_256(&R, r, Tc + r * LW, Ec + r * LW, alive + r * LW, inex + r * LW);
            if (level == 1 && K.dbl) any = 0;
#endif
            for (int r = 0; r < nr && any; r++) {
                int64_t x = r * LW;
                R.af = R.afr[r];
                R.aE = R.aEr[r];
#if MM_SIMD
                if (level >= 1) late_256(&R, Tc + x, Ec + x, alive + x, inex + x);
                else
#endif
                    late_c(&R, Tc + x, Ec + x, alive + x, inex + x);
            }
            for (int r = 0; r < nr; r++)
                for (int q = 0; q < LW && j0 + q < p; q++) {
                    int64_t j = j0 + q, x = r * LW + q, i = i0 + r;
                    if (alive[x]) {
                        uint64_t code = 0, mag = (uint64_t)(Tc[x] < 0 ? -Tc[x] : Tc[x]);
                        const sfp8_format *f = &md->fo;
                        if (mag) /* a normal number: msb at bit W */
                            code = (uint64_t)(Tc[x] < 0) << (f->bits - 1) |
                                   (uint64_t)(Ec[x] + f->bias) << f->man_bits |
                                   ((mag >> (K.W - f->man_bits)) & (((uint64_t)1 << f->man_bits) - 1));
                        store_raw(O + i * om + j * op, so, code);
                        flags |= fl[x] | (rowsub[r] || colsub[j] ? SFP8_FLAG_DENORMAL : 0) |
                                 (inex[x] ? SFP8_FLAG_INEXACT : 0);
                        used = 1;
                    } else { /* the generic kernel, for this output alone */
                        flags |= sfp8u_gemm(md, A + i * am, am, ak, B + j * bp, bk, bp,
                                            C ? C + i * cm + j * cp : NULL, cm, cp, O + i * om + j * op, om, op, 1, k,
                                            1);
                    }
                }
        }
    }
    mm_fx_leave(&env);
    /* the SIMD level the kernels ran at: AVX2 for the models without the binary64 steps */
    if (used) mm_count(SFP8M_BLOCK_FMA, level >= 2 && !K.dbl ? 1 : level);
done:
    free(ma);
    free(mb);
    free(colbad);
    free(slots);
    free(bE8);
    free(aE4);
    free(bfu);
    free(da.D.tab);
    free(db.D.tab);
    return flags;
}
