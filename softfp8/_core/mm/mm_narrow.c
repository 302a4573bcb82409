/*
 * Narrow accumulators of the accumulation models (path model_fma16, mm_model.c): the
 * accumulator acc = round_acc(acc + a b) after every product, for an accumulator
 * format of M <= 20 mantissa bits with IEEE subnormals (float16, bfloat16, 8-bit
 * formats, ...), operands and products normal binary32 numbers (multiples of 2^-126
 * below 2^127: every sum is zero or a normal binary32 number, so binary32 never
 * underflows here).  B decoded once into binary32 (row-major, rows padded to 16
 * columns), one kernel per SIMD level:
 *
 *  - AVX-512 / AVX2: the product in binary32 (exact), the sum x in binary32 (AVX-512:
 *    one fused multiply-add, the same number as the product is exact), then x rounded
 *    to M bits by the hardware: y = (x + c) - c with c = 1.5 2^(E + 23 - M), E =
 *    max(exponent of x, emin) -- x + c lies in c's binade, whose unit is 2^(E - M), so
 *    the one rounding of x + c is x rounded to the accumulator's precision at x's
 *    binade (at emin's below it: the subnormals) in the MXCSR mode, and the subtraction
 *    is exact; the sign of x is put back (zeros).  Without tininess (q->tiny 0: the
 *    products are multiples of the subnormal unit 2^(emin - M), so is every sum) a sum
 *    below 2^emin is an accumulator number, exact on its own binade's M-bit grid: E is
 *    x's exponent there (one instruction less).  MXCSR holds the accumulator's mode
 *    (nearest even, toward zero, upward, downward) for the call, without FTZ / DAZ; its
 *    precision flag is the OR of the inexact flags: the product and the subtraction are
 *    exact, the sum is inexact only if x + p is not a binary32 number, then not an
 *    accumulator number either.  Which sum x:
 *      direct (q->odd 0): x = the hardware sum in the mode.  Directed modes: RD_M(RD_24(s))
 *        = RD_M(s) as the M-bit grid lies in the binary32 one (likewise RU, RZ).
 *        Nearest even only when the products have at most M + 1 significant bits and
 *        24 >= 2 (M + 1) + 1: double rounding of a sum of two (M + 1)-bit numbers is
 *        then innocuous (Figueroa, "When is double rounding innocuous?", 1995).
 *      odd (q->odd 1, nearest even): x = the sum rounded to odd at 24 bits -- AVX-512: the
 *        one of RD(s), RU(s) (embedded rounding, no flags) whose last bit is 1 (the exact
 *        one when they agree, the zero of the mode's sign rule); AVX2: s = RN(acc + p)
 *        and TwoSum's error (exact: no sum underflows), s when the error is 0 or s is
 *        odd, else s's neighbour on the error's side (the exact sum lies strictly between
 *        them; that neighbour is odd); TwoSum's other operations are exact, so MXCSR's
 *        precision flag is still set exactly when the sum is not a binary32 number.
 *        Rounding to odd at 24 >= M + 3 bits keeps every decision of the M-bit rounding,
 *        in every mode.  AVX2 with q->mid (products 8 or more bits wider than the
 *        accumulator): x = s itself for a vector none of whose s is a midpoint of the
 *        accumulator's grid at its binade (nor, with tininess, at most 2^emin): the
 *        M-bit rounding of s is the exact sum's then (every midpoint is a binary32
 *        number, and s is the one nearest the sum); the other vectors take the rounding
 *        to odd, and so does every vector for the rest of a call's products once more
 *        than a quarter of its vectors have hit.
 *  - portable: x = the sum rounded to odd by TwoSum (the thread at nearest even) and
 *    rounded by integer arithmetic on its bits, every mode of the rounder.
 * A sum in the accumulator's top binade (overflow possible) makes the kernel decline:
 * the block is the generic kernel's.  Underflow (q->tiny): each inexact rounding's
 * tininess key, x (before rounding) or x rounded with unbounded exponent (after).  The start of a chunk is z + a b with z the zero that leaves a
 * b's zero sign.
 *
 * DERIVED from core.c round_pack: the rounding of a binary32 sum into the accumulator
 * (the magic-constant rounding and the integer rounding of mm_nrw_run's kernels), its
 * inexact flag, the rounding to odd by RD / RU or TwoSum, and the midpoint test.  Proof:
 * tests/harness/test_harness.py::test_entry (entry model_fma16: float16, bfloat16 and
 * 8-bit accumulators, every deterministic mode, promotion, product formats, shapes across
 * the column groups, overflow and subnormal sums, sums onto midpoints and onto 2^emin,
 * operands of few bits (the hand-over to the rounding to odd); every SIMD level).
 *
 * Also here, model_f32 with a product format (mm_nrw_prod, AVX2): each exact binary32
 * product rounded into the product format by the same magic constant at nearest even (its
 * grid at max(E, emin), the sign put back), the tininess keys as above, then summed in
 * binary32.  DERIVED from core.c round_pack likewise; proof: the same test, entry model_f32
 * (part prodfmt: float16 / E5M2 / E4M3 / bfloat16 product formats, 8- and 16-bit operands,
 * the nearest-even environments, products onto 2^emin, ties to zero, the top binade).
 */
#include <math.h>
#include <string.h>

#include "mm_impl.h"
#include "mm_narrow.h"
#include "mm_simd.h"

#if MM_SIMD
#include <immintrin.h>
#endif

#define UNIT 0x800000u   /* the binary32 exponent field's unit */
#define EXPM 0x7F800000u /* its mask */

static inline uint32_t fbits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static inline float bitsf(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* the increment of the truncated significand k (remainder rem, half its half unit) */
static inline uint64_t c_inc(int mode, int neg, uint64_t k, uint64_t rem, uint64_t half)
{
    switch (mode) {
    case SFP8_ROUND_NEAREST_EVEN: return rem > half || (rem == half && (k & 1));
    case SFP8_ROUND_NEAREST_AWAY: return rem >= half;
    case SFP8_ROUND_TIES_TOWARD_ZERO: return rem > half;
    case SFP8_ROUND_UPWARD: return !neg && rem;
    case SFP8_ROUND_DOWNWARD: return neg && rem;
    case SFP8_ROUND_TO_ODD: return !(k & 1) && rem;
    default: return 0; /* toward zero */
    }
}

/* the portable kernel: TwoSum rounds the binary32 sum to odd, integer arithmetic rounds
   it into M bits at sh = 23 - M (a sum below 2^emin declines the block when q->tiny) */
static unsigned nrw_run_c(const mm_nrw *q, const float *arow, const float *B, int64_t P, int64_t l0, int64_t l1,
                          int64_t j0, int n, float *out)
{
    uint32_t acc[MM_NRW_FW], mx = 0, inex = 0;
    int tiny = 0;
    const int sh = 23 - q->M, down = q->mode == SFP8_ROUND_DOWNWARD;
    const uint32_t low = (1u << sh) - 1, half = 1u << (sh - 1);
    for (int jj = 0; jj < n; jj++) acc[jj] = fbits(q->z);
    for (int64_t l = l0; l < l1; l++) {
        float a = arow[l];
        const float *b = B + l * P + j0;
        for (int jj = 0; jj < n; jj++) {
            float p = a * b[jj], x = bitsf(acc[jj]), s = x + p, bb = s - x, err = (x - (s - bb)) + (p - bb);
            uint32_t u = fbits(s), e, rem, k;
            int neg;
            if (s == 0) /* exact: the common sign of the operands, else -0 only rounding downward */
                u = (down ? signbit(x) || signbit(p) : signbit(x) && signbit(p)) ? 0x80000000u : 0;
            else if (err != 0 && !(u & 1))
                u += (err > 0) == (s > 0) ? 1 : (uint32_t)-1;
            e = u & EXPM;
            mx = e > mx ? e : mx;
            neg = (int)(u >> 31);
            if (e >= q->eminb || !e) { /* at the accumulator's precision: its M bits */
                rem = u & low;
                k = u >> sh;
                inex |= rem;
                k += c_inc(q->mode, neg, k, rem, half);
                acc[jj] = k << sh;
            } else { /* below 2^emin: multiples of 2^(emin - M) (the sum is exact in binary32) */
                int s2 = sh + (int)((q->eminb - e) >> 23);
                uint64_t m = (u & 0x7FFFFFu) | UNIT, r2 = m & ((1ull << s2) - 1), k2 = m >> s2;
                k2 += c_inc(q->mode, neg, k2, r2, 1ull << (s2 - 1));
                if (r2) { /* underflow: tiny before rounding, or after it (unbounded exponent) */
                    uint32_t ku = u >> sh;
                    int carry = ((ku + (uint32_t)c_inc(q->mode, neg, ku, u & low, half)) << sh & EXPM) != e;
                    inex = 1;
                    tiny |= q->tb || !carry || e + UNIT != q->eminb;
                }
                acc[jj] = fbits(ldexpf((float)k2, (int)(q->eminb >> 23) - 127 - q->M)) | (uint32_t)neg << 31;
            }
        }
    }
    for (int jj = 0; jj < n; jj++) out[jj] = bitsf(acc[jj]);
    if (mx >= q->topb) return 2;
    return (inex != 0) | (tiny ? 4u : 0);
}

#if MM_SIMD
/* MXCSR for the kernels: no flags, exceptions masked, no FTZ / DAZ, rounding mode rc */
static inline unsigned csr_mode(unsigned csr, int mode)
{
    unsigned rc = mode == SFP8_ROUND_DOWNWARD ? 1 : mode == SFP8_ROUND_UPWARD ? 2 : mode == SFP8_ROUND_TOWARD_ZERO ? 3 : 0;
    return (csr & ~0xFFFFu) | 0x1F80u | rc << 13;
}

static inline __attribute__((always_inline)) MM_TGT512 void nrw_group_512(int NV, int ODD, int RZ, int TINY, int TB,
                                                                          const mm_nrw *q, const float *arow,
                                                                          const float *b, int64_t P, int64_t l0,
                                                                          int64_t l1, float *o, __m512i *mx,
                                                                          __m512i *mn)
{
    __m512 acc[8];
    const __m512i expm = _mm512_set1_epi32((int)EXPM), eminb = _mm512_set1_epi32((int)q->eminb),
                  kc = _mm512_set1_epi32((int)(((23u - (unsigned)q->M) << 23) | 0x400000u)),
                  sgn = _mm512_set1_epi32((int)0x80000000u), one = _mm512_set1_epi32(1);
    __m512i vmx = *mx, vmn = *mn;
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) acc[v] = _mm512_set1_ps(q->z);
    for (int64_t l = l0; l < l1; l++) {
        __m512 a = _mm512_set1_ps(arow[l]);
        const float *r = b + l * P;
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            /* one fused multiply-add: the product is exact */
            __m512 bv = _mm512_loadu_ps(r + 16 * v), x, c, y;
            __m512i xi, e;
            if (ODD) {
                __m512 lo = _mm512_fmadd_round_ps(a, bv, acc[v], _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
                __m512 hi = _mm512_fmadd_round_ps(a, bv, acc[v], _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
                x = _mm512_mask_blend_ps(_mm512_test_epi32_mask(_mm512_castps_si512(lo), one), hi, lo);
            } else {
                x = _mm512_fmadd_ps(a, bv, acc[v]);
            }
            xi = _mm512_castps_si512(x);
            e = _mm512_and_si512(xi, expm);
            vmx = _mm512_max_epu32(vmx, e);
            if (RZ) x = _mm512_castsi512_ps(_mm512_andnot_si512(sgn, xi)); /* |x|: c > 0 */
            /* without tininess (q->tiny 0) a sum below 2^emin is exact at its own binade */
            c = _mm512_castsi512_ps(_mm512_add_epi32(TINY ? _mm512_max_epu32(e, eminb) : e, kc));
            y = _mm512_sub_ps(_mm512_add_ps(x, c), c);
            acc[v] = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(y), xi, sgn, 0xD8));
            if (TINY) { /* the exponent of each inexact rounding's tininess key: x (before), or x
                           rounded to M + 1 bits, unbounded exponent (after) */
                __m512i key = e;
                if (!TB) {
                    __m512 cu = _mm512_castsi512_ps(_mm512_add_epi32(e, kc));
                    key = _mm512_and_si512(_mm512_castps_si512(_mm512_sub_ps(_mm512_add_ps(x, cu), cu)), expm);
                }
                vmn = _mm512_mask_min_epu32(vmn, _mm512_cmp_ps_mask(acc[v], _mm512_castsi512_ps(xi), _CMP_NEQ_UQ), vmn,
                                            key);
            }
        }
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) _mm512_storeu_ps(o + 16 * v, acc[v]);
    *mx = vmx;
    *mn = vmn;
}

#define NRW_512_NV(ODD, RZ, TINY, TB)                                                                        \
    for (int j = 0; j < n;) {                                                                                  \
        int nv = (n - j + 15) / 16;                                                                            \
        const float *bj = B + j0 + j;                                                                          \
        if (nv >= 8) nrw_group_512(8, ODD, RZ, TINY, TB, q, arow, bj, P, l0, l1, out + j, &mx, &mn), j += 128; \
        else if (nv >= 4)                                                                                      \
            nrw_group_512(4, ODD, RZ, TINY, TB, q, arow, bj, P, l0, l1, out + j, &mx, &mn), j += 64;         \
        else if (nv >= 2)                                                                                      \
            nrw_group_512(2, ODD, RZ, TINY, TB, q, arow, bj, P, l0, l1, out + j, &mx, &mn), j += 32;         \
        else nrw_group_512(1, ODD, RZ, TINY, TB, q, arow, bj, P, l0, l1, out + j, &mx, &mn), j += 16;        \
    }
/* the variants of a rounding route: no tininess possible, tininess before, after rounding */
#define NRW_512_TINY(ODD, RZ)                                                                                  \
    if (!q->tiny) NRW_512_NV(ODD, RZ, 0, 0) else if (q->tb) NRW_512_NV(ODD, RZ, 1, 1) else NRW_512_NV(ODD, RZ, 1, 0)

MM_TGT512 static unsigned nrw_run_512(const mm_nrw *q, const float *arow, const float *B, int64_t P, int64_t l0,
                                      int64_t l1, int64_t j0, int n, float *out)
{
    __m512i mx = _mm512_setzero_si512(), mn = _mm512_set1_epi32(-1);
    if (q->odd) { /* nearest even */
        NRW_512_TINY(1, 0)
    } else if (q->mode == SFP8_ROUND_TOWARD_ZERO) {
        NRW_512_TINY(0, 1)
    } else {
        NRW_512_TINY(0, 0)
    }
    if ((uint32_t)_mm512_reduce_max_epu32(mx) >= q->topb) return 2;
    return q->tiny && (uint32_t)_mm512_reduce_min_epu32(mn) < q->eminb ? 4 : 0;
}

/* the vectors of the next column group of the AVX2 kernels, m columns left: 8 (without
   tininess: its keys need registers), 4, 2 or 1 */
static inline int group_nv(int m, int tiny)
{
    int nv = (m + 7) / 8;
    return nv >= 8 && !tiny ? 8 : nv >= 4 ? 4 : nv >= 2 ? 2 : 1;
}

/* the AVX2 kernels' result from the lanes' largest exponent field mx and least tininess key
   mn: 2 a value in the format's top binade (declined), else 4 an underflow, else 0 */
MM_TGT256 static unsigned fold_256(const mm_nrw *q, __m256i mx, __m256i mn)
{
    uint32_t vx[8], vn[8], hx = 0, hn = ~0u;
    _mm256_storeu_si256((__m256i *)vx, mx);
    _mm256_storeu_si256((__m256i *)vn, mn);
    for (int v = 0; v < 8; v++) {
        hx = vx[v] > hx ? vx[v] : hx;
        hn = vn[v] < hn ? vn[v] : hn;
    }
    if (hx >= q->topb) return 2;
    return q->tiny && hn < q->eminb ? 4 : 0;
}

/* products l0 .. l1 - 1 of NV vectors of columns into o (cont: from the accumulators in o, else
 * from q->z); returns the product at which it stopped: l1, or (MID) earlier when the sums hit
 * midpoints often (below) */
static inline __attribute__((always_inline)) MM_TGT256F int64_t nrw_group_256(int NV, int ODD, int MID, int RZ,
                                                                             int TINY, int TB, const mm_nrw *q,
                                                                             const float *arow, const float *b,
                                                                             int64_t P, int64_t l0, int64_t l1,
                                                                             int cont, float *o, __m256i *mx,
                                                                             __m256i *mn)
{
    __m256 acc[8];
    int hits = 0;
    const __m256i expm = _mm256_set1_epi32((int)EXPM), eminb = _mm256_set1_epi32((int)q->eminb),
                  kc = _mm256_set1_epi32((int)(((23u - (unsigned)q->M) << 23) | 0x400000u));
    const __m256 sgn = _mm256_set1_ps(-0.0f), zero = _mm256_setzero_ps();
    const __m256i one = _mm256_set1_epi32(1), lowm = _mm256_set1_epi32((int)((1u << (23 - q->M)) - 1)),
                  halfm = _mm256_set1_epi32((int)(1u << (22 - q->M))), eminb1 = _mm256_set1_epi32((int)q->eminb + 1);
    __m256i vmx = *mx, vmn = *mn;
    int64_t l = l0;
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) acc[v] = cont ? _mm256_loadu_ps(o + 8 * v) : _mm256_set1_ps(q->z);
    for (; l < l1; l++) {
        __m256 a = _mm256_set1_ps(arow[l]);
        const float *r = b + l * P;
        /* MID: more than one vector in 4 taking the rounding to odd (a branch taken at
           random) costs more than rounding every sum to odd: if so far (every 16 products,
           from the 32nd on: the first sums, of few terms, hit more often) the rest of the
           products do (the caller, MID 0) */
        if (MID && ((l - l0) & 15) == 0 && l - l0 >= 32 && 4 * hits > (l - l0) * NV) break;
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            /* one fused multiply-add: the product is exact (level 1 has FMA) */
            __m256 x, c, y;
            int tl = TINY; /* a sum of this vector may be tiny */
            if (ODD) {
                /* s = RN(acc + p) (MXCSR at nearest even; no sum underflows) stands for the
                   exact sum unless one of the vector's s is a midpoint of the accumulator's
                   grid at its binade or (TINY) at most 2^emin in magnitude: the M-bit
                   roundings of s and of the exact sum differ only if s is a midpoint (s is
                   the binary32 number nearest the sum and every midpoint is a binary32
                   number, so none lies strictly between them).  Then the vector's sums
                   rounded to odd at 24 bits by TwoSum's exact error: s itself when the error
                   is 0 or s's last bit is 1, else the neighbour of s on the error's side (one
                   step of |s|'s bit pattern, up when the signs agree): odd, also across a
                   binade.  As (si - d) | 1 for a non-zero error, d = 1 when the signs
                   differ: si odd gives si either way, si even si - 1 (toward zero) or si + 1
                   (away).  2^emin itself is taken too: a sum just below it may round onto
                   it in binary32, and the odd one keeps its tininess (before rounding).
                   Without a hit no sum of the vector is tiny (tl 0: no tininess keys).
                   MID 0: every vector takes the rounding to odd. */
                const __m256 p = _mm256_mul_ps(a, _mm256_loadu_ps(r + 8 * v)), s = _mm256_add_ps(acc[v], p);
                __m256i hit = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(s), lowm), halfm);
                if (TINY && MID)
                    hit = _mm256_or_si256(hit, _mm256_cmpgt_epi32(eminb1, _mm256_andnot_si256(
                                                                              _mm256_castps_si256(sgn),
                                                                              _mm256_castps_si256(s))));
                x = s;
                tl = 0;
                if (!MID || __builtin_expect(_mm256_movemask_ps(_mm256_castsi256_ps(hit)) != 0, 0)) {
                    tl = TINY;
                    hits++;
                    const __m256 bb = _mm256_sub_ps(s, acc[v]),
                                 er = _mm256_add_ps(_mm256_sub_ps(acc[v], _mm256_sub_ps(s, bb)),
                                                    _mm256_sub_ps(p, bb));
                    const __m256i si = _mm256_castps_si256(s),
                                  d = _mm256_srai_epi32(_mm256_xor_si256(si, _mm256_castps_si256(er)), 31);
                    x = _mm256_blendv_ps(s, _mm256_castsi256_ps(_mm256_or_si256(_mm256_add_epi32(si, d), one)),
                                         _mm256_cmp_ps(er, zero, _CMP_NEQ_OQ));
                }
            } else {
                x = _mm256_fmadd_ps(a, _mm256_loadu_ps(r + 8 * v), acc[v]);
            }
            __m256i e = _mm256_and_si256(_mm256_castps_si256(x), expm);
            __m256 xs = x;
            vmx = _mm256_max_epu32(vmx, e);
            if (RZ) x = _mm256_andnot_ps(sgn, x); /* |x|: c > 0 */
            c = _mm256_castsi256_ps(_mm256_add_epi32(tl ? _mm256_max_epu32(e, eminb) : e, kc));
            /* y has x's sign except a zero (x + c and c in one binade: M <= 21), which is +0
               but rounding downward (-0): at nearest even (ODD) and toward zero (RZ: x >= 0)
               x's sign bit or-ed in gives a zero its sign (x = -0, or a negative x rounded to
               zero); otherwise y's sign is cleared first */
            y = _mm256_sub_ps(_mm256_add_ps(x, c), c);
            if (ODD || RZ) acc[v] = _mm256_or_ps(y, _mm256_and_ps(sgn, xs));
            else acc[v] = _mm256_or_ps(_mm256_andnot_ps(sgn, y), _mm256_and_ps(sgn, xs));
            if (tl) { /* the tininess keys of the inexact roundings (exact ones: all ones) */
                __m256i key = e;
                if (!TB) {
                    __m256 cu = _mm256_castsi256_ps(_mm256_add_epi32(e, kc));
                    key = _mm256_and_si256(_mm256_castps_si256(_mm256_sub_ps(_mm256_add_ps(x, cu), cu)), expm);
                }
                vmn = _mm256_min_epu32(vmn, _mm256_or_si256(key, _mm256_castps_si256(_mm256_cmp_ps(acc[v], xs, _CMP_EQ_OQ))));
            }
        }
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) _mm256_storeu_ps(o + 8 * v, acc[v]);
    *mx = vmx;
    *mn = vmn;
    return l;
}

/* AVX2: the direct sums, and the sums rounded to odd (q->odd: nearest even) by TwoSum */
MM_TGT256F static unsigned nrw_run_256(const mm_nrw *q, const float *arow, const float *B, int64_t P, int64_t l0,
                                      int64_t l1, int64_t j0, int n, float *out)
{
    __m256i mx = _mm256_setzero_si256(), mn = _mm256_set1_epi32(-1);
    int rz = q->mode == SFP8_ROUND_TOWARD_ZERO;
/* one group's kernel in the route's variant: no tininess possible, tininess before, after */
#define NRW_256_G(NV, ODD, MID, RZ, LA, CONT)                                                                   \
    (!q->tiny  ? nrw_group_256(NV, ODD, MID, RZ, 0, 0, q, arow, bj, P, LA, l1, CONT, out + j, &mx, &mn)         \
     : q->tb ? nrw_group_256(NV, ODD, MID, RZ, 1, 1, q, arow, bj, P, LA, l1, CONT, out + j, &mx, &mn)           \
             : nrw_group_256(NV, ODD, MID, RZ, 1, 0, q, arow, bj, P, LA, l1, CONT, out + j, &mx, &mn))
/* the sums rounded to odd: first by the midpoint test (q->mid), the rest of the products
   (midpoints often hit) rounding every sum to odd */
#define NRW_256(NV)                                                                                            \
    if (q->odd) {                                                                                              \
        int64_t lm = q->mid ? NRW_256_G(NV, 1, 1, 0, l0, 0) : l0;                                             \
        if (lm < l1) (void)NRW_256_G(NV, 1, 0, 0, lm, lm > l0);                                                 \
    } else if (rz) {                                                                                           \
        (void)NRW_256_G(NV, 0, 0, 1, l0, 0);                                                                   \
    } else {                                                                                                   \
        (void)NRW_256_G(NV, 0, 0, 0, l0, 0);                                                                   \
    }                                                                                                          \
    j += 8 * NV;
    for (int j = 0; j < n;) {
        const float *bj = B + j0 + j;
        switch (group_nv(n - j, q->tiny)) {
        case 8: NRW_256(8) break;
        case 4: NRW_256(4) break;
        case 2: NRW_256(2) break;
        default: NRW_256(1) break;
        }
    }
#undef NRW_256
#undef NRW_256_G
    return fold_256(q, mx, mn);
}

/* mm_nrw_promote's columns j < n - n % 8 by TwoSum (the thread at nearest even): their
   count, *r its result */
MM_TGT256 static int nrw_promote_256(float *F, const float *S, int n, unsigned *r)
{
    __m256 ne = _mm256_setzero_ps();
    __m256i nf = _mm256_setzero_si256();
    const __m256i expm = _mm256_set1_epi32((int)EXPM);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 x = _mm256_loadu_ps(F + j), p = _mm256_loadu_ps(S + j), s = _mm256_add_ps(x, p), bb = _mm256_sub_ps(s, x);
        __m256 err = _mm256_add_ps(_mm256_sub_ps(x, _mm256_sub_ps(s, bb)), _mm256_sub_ps(p, bb));
        ne = _mm256_or_ps(ne, _mm256_cmp_ps(err, _mm256_setzero_ps(), _CMP_NEQ_UQ));
        nf = _mm256_or_si256(nf, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(s), expm), expm));
        _mm256_storeu_ps(F + j, s);
    }
    *r = (_mm256_movemask_ps(ne) != 0) | (_mm256_testz_si256(nf, nf) ? 0 : 2u);
    return j;
}

MM_TGT512 static unsigned nrw_promote_512(float *F, const float *S, int n)
{
    __mmask16 ne = 0, nf = 0;
    const __m512i expm = _mm512_set1_epi32((int)EXPM);
    for (int j = 0; j < n; j += 16) {
        __mmask16 m = n - j >= 16 ? 0xFFFF : (__mmask16)((1u << (n - j)) - 1);
        __m512 f = _mm512_maskz_loadu_ps(m, F + j), s = _mm512_maskz_loadu_ps(m, S + j), r;
        __m512 lo = _mm512_add_round_ps(f, s, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m512 hi = _mm512_add_round_ps(f, s, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
        ne |= _mm512_mask_cmp_ps_mask(m, lo, hi, _CMP_NEQ_UQ);
        r = _mm512_add_round_ps(f, s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        nf |= _mm512_mask_cmpeq_epi32_mask(m, _mm512_and_si512(_mm512_castps_si512(r), expm), expm);
        _mm512_mask_storeu_ps(F + j, m, r);
    }
    return (ne != 0) | (nf ? 2u : 0);
}
#endif

#if MM_SIMD
/* model_f32 with a product format, AVX2 (mm_nrw_prod): each exact binary32 product p rounded
 * into the product format by the magic constant as the accumulators above are (E = p's
 * binade, or max(E, emin) in a vector holding a product below 2^emin when the products reach
 * below the format's unit), its sign put back (nearest even: only a zero lost it), then added
 * to the binary32 running sum; the tininess keys of such a vector's inexact roundings as
 * nrw_group_256's */
static inline __attribute__((always_inline)) MM_TGT256 void prod_group_256(int NV, int TINY, int TB, const mm_nrw *q,
                                                                           const float *arow, const float *b,
                                                                           int64_t P, int64_t l0, int64_t l1,
                                                                           float *o, int add, __m256i *mx,
                                                                           __m256i *mn)
{
    __m256 acc[8];
    const __m256i expm = _mm256_set1_epi32((int)EXPM), eminb = _mm256_set1_epi32((int)q->eminb),
                  kc = _mm256_set1_epi32((int)(((23u - (unsigned)q->M) << 23) | 0x400000u));
    const __m256 sgn = _mm256_set1_ps(-0.0f);
    __m256i vmx = *mx, vmn = *mn;
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) acc[v] = _mm256_set1_ps(q->z);
    for (int64_t l = l0; l < l1; l++) {
        __m256 a = _mm256_set1_ps(arow[l]);
        const float *r = b + l * P;
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            const __m256 p = _mm256_mul_ps(a, _mm256_loadu_ps(r + 8 * v)); /* exact */
            const __m256i e = _mm256_and_si256(_mm256_castps_si256(p), expm);
            /* tl: a product of the vector below 2^emin (zeros too): its grid there, and the
               tininess keys (a vector without one rounds each product at its own binade) */
            const int tl = TINY && __builtin_expect(
                                       _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(eminb, e))) != 0, 0);
            const __m256 c = _mm256_castsi256_ps(_mm256_add_epi32(tl ? _mm256_max_epu32(e, eminb) : e, kc));
            const __m256 pr = _mm256_or_ps(_mm256_sub_ps(_mm256_add_ps(p, c), c), _mm256_and_ps(sgn, p));
            vmx = _mm256_max_epu32(vmx, e);
            if (tl) {
                __m256i key = e;
                if (!TB) {
                    __m256 cu = _mm256_castsi256_ps(_mm256_add_epi32(e, kc));
                    key = _mm256_and_si256(_mm256_castps_si256(_mm256_sub_ps(_mm256_add_ps(p, cu), cu)), expm);
                }
                vmn = _mm256_min_epu32(vmn, _mm256_or_si256(key, _mm256_castps_si256(_mm256_cmp_ps(pr, p, _CMP_EQ_OQ))));
            }
            acc[v] = _mm256_add_ps(acc[v], pr);
        }
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++)
        _mm256_storeu_ps(o + 8 * v, add ? _mm256_add_ps(_mm256_loadu_ps(o + 8 * v), acc[v]) : acc[v]);
    *mx = vmx;
    *mn = vmn;
}

MM_TGT256 static unsigned prod_run_256(const mm_nrw *q, const float *arow, const float *B, int64_t P, int64_t l0,
                                       int64_t l1, int64_t j0, int n, float *out, int add)
{
    __m256i mx = _mm256_setzero_si256(), mn = _mm256_set1_epi32(-1);
#define PROD_256(NV)                                                                                           \
    if (!q->tiny) prod_group_256(NV, 0, 0, q, arow, bj, P, l0, l1, out + j, add, &mx, &mn);                    \
    else if (q->tb) prod_group_256(NV, 1, 1, q, arow, bj, P, l0, l1, out + j, add, &mx, &mn);                  \
    else prod_group_256(NV, 1, 0, q, arow, bj, P, l0, l1, out + j, add, &mx, &mn);                             \
    j += 8 * NV;
    for (int j = 0; j < n;) {
        const float *bj = B + j0 + j;
        switch (group_nv(n - j, q->tiny)) {
        case 8: PROD_256(8) break;
        case 4: PROD_256(4) break;
        default: PROD_256(2) break; /* B's rows: 16 columns */
        }
    }
#undef PROD_256
    return fold_256(q, mx, mn);
}
#endif

unsigned mm_nrw_prod(const mm_nrw *q, const float *arow, const float *B, int64_t P, int64_t l0, int64_t l1,
                     int64_t j0, int n, float *out, int add)
{
#if MM_SIMD
    unsigned csr = _mm_getcsr(), pe, r;
    _mm_setcsr(csr_mode(csr, SFP8_ROUND_NEAREST_EVEN));
    __asm__ volatile("" ::: "memory");
    r = prod_run_256(q, arow, B, P, l0, l1, j0, n, out, add);
    __asm__ volatile("" ::: "memory");
    pe = _mm_getcsr() & _MM_EXCEPT_INEXACT;
    _mm_setcsr(csr);
    return r | (pe != 0);
#else
    (void)q, (void)arow, (void)B, (void)P, (void)l0, (void)l1, (void)j0, (void)n, (void)out, (void)add;
    return 2;
#endif
}

unsigned mm_nrw_run(const mm_nrw *q, const float *arow, const float *B, int64_t P, int64_t l0, int64_t l1,
                    int64_t j0, int n, float *out)
{
#if MM_SIMD
    if (q->level >= 1) { /* the precision flag of the kernel alone (the barriers keep its work inside) */
        unsigned csr = _mm_getcsr(), pe, r;
        _mm_setcsr(csr_mode(csr, q->mode));
        __asm__ volatile("" ::: "memory");
        if (q->level >= 2) r = nrw_run_512(q, arow, B, P, l0, l1, j0, n, out);
        else r = nrw_run_256(q, arow, B, P, l0, l1, j0, n, out);
        __asm__ volatile("" ::: "memory");
        pe = _mm_getcsr() & _MM_EXCEPT_INEXACT;
        _mm_setcsr(csr);
        return r | (pe != 0);
    }
#endif
    return nrw_run_c(q, arow, B, P, l0, l1, j0, n, out);
}

unsigned mm_nrw_promote(int level, float *F, const float *S, int n)
{
    unsigned inex = 0;
    int jj = 0;
#if MM_SIMD
    if (level >= 2) return nrw_promote_512(F, S, n);
    if (level >= 1) jj = nrw_promote_256(F, S, n, &inex);
#endif
    (void)level;
    for (; jj < n; jj++) { /* TwoSum: the error is zero iff the sum is exact */
        float x = F[jj], p = S[jj], s = x + p, bb = s - x;
        inex |= ((x - (s - bb)) + (p - bb)) != 0;
        inex |= (fbits(s) & EXPM) == EXPM ? 2u : 0;
        F[jj] = s;
    }
    return inex;
}
