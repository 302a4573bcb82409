/* blockq: the kernels of the block quantiser (softfp8.mx.quantize; quantize.c
 * runs them): per block the largest finite magnitude (amax) and whether a NaN or
 * an infinity is in it, and per element the quotient x / d of the block's scale
 * in a form that rounds like the exact quotient.
 *
 * DERIVED from core.c round_pack (what one later rounding of the quotient
 * needs): the quotient is handed to the driver's conversion binary64 -> element
 * format (fast paths / core), which rounds it once; this file never rounds into
 * a format.  For a block divisor d > 0 (d = 2^e' * dn, dn in [1, 2)) and a finite
 * x, xn = x * 2^-e' is exact unless |xn| < 2^-899 (then x != 0 gives q = +-2^-900,
 * far below half the smallest subnormal of every element format, so every mode
 * rounds it as it rounds the true quotient: to zero or to the smallest
 * subnormal, with the same flags).  Otherwise q = xn / dn rounded to nearest
 * (the hardware division), and the remainder r = xn - q * dn is exact and
 * computed exactly by fma(-q, dn, xn) (xn and q * dn are normal binary64
 * numbers far above 2^-1022 + 53 bits, the classic condition for the remainder
 * of a correctly rounded quotient to be representable).  r == 0: q is the
 * exact quotient.  r != 0: the exact quotient lies strictly between q and its
 * neighbour on the side of r's sign (relative to q's); round to odd at 53 bits
 * keeps q if its last bit is 1 and else takes that neighbour (one step of the
 * magnitude's bit pattern up when r and q have one sign, down otherwise: the
 * neighbour of an even pattern is odd, also across a binade).  The remainder:
 * fma at the SIMD levels (whose targets have it), Dekker's exact product at the
 * portable level (libm's fma is a slow emulation without the instruction).  A value rounded
 * to odd at p bits rounds correctly to any precision <= p - 2 in every mode
 * (SPEC §3, round to odd); the element formats have at most 8 significant bits,
 * and stochastic rounding reads at most 32 further bits, 8 + 32 + 2 <= 53, so
 * the conversion of q gives exactly the codes and flags of the exact quotient.
 * A divisor that is a power of two (dn == 1) gives q = xn: exact.  xn = inf
 * (x finite, d below x / DBL_MAX) stays inf, as in the reference (mx.py,
 * _exact_quotient).  The reference fixes q to odd by a Dekker product whose
 * splitting overflows for |q| > 2^996 (its remainder is then NaN and q moves
 * toward -inf); the portable kernel does the same, the fma kernels round such q
 * to odd correctly, and either saturates to the element format's largest value
 * in every mode with the same flags, so the codes agree there too.
 *
 *
 * Binary32 quotients (QUOT32, binary32 sources; quantize.c asks for them for MX
 * in every mode and for NVFP4 in the deterministic modes).  A value rounded to odd
 * at 24 bits rounds correctly to any precision <= 22 in every deterministic mode
 * (E2M1: 2 bits), and an exact quotient in every mode, stochastic included.
 * - A power-of-two divisor 2^s, |s| <= 126 (every MX scale but s = 127): q = x *
 *   2^-s in binary32 is exact when |q| >= 2^-126.  Below that (x != 0) the
 *   quotient is replaced by +-2^-126: every element format's smallest subnormal is
 *   >= 2^-16 (E5M2; the MXINT8 helper's 2^-6), so every value in (0, 2^-126]
 *   lies more than 2^32 times below it and every mode, stochastic with <= 32 bits
 *   included, rounds all of them alike (to zero or the smallest subnormal, inexact
 *   and tiny).  The replacement is a normal binary32, so the conversion raises no
 *   denormal-operand flag that the reference's binary64 quotient would not.
 * - Other divisors (portable, AVX2 and AVX-512 for a divisor of > 29 significant
 *   bits): the binary64 quotient rounded to odd at 53 bits as above, then to odd at
 *   24 bits by the binary32 conversion: f = RN32(t) stepped one pattern toward zero
 *   when |f| > |t| (RZ), its last bit set when f != t.  Rounding to odd twice, at 53
 *   and then 24 bits, equals rounding to odd at 24 bits once (an inexact 53-bit odd
 *   result is no 24-bit number, so it stays strictly between the same 24-bit
 *   neighbours).  Finite |t| >= 2^127 becomes +-2^127 (every element format
 *   overflows on both, with the same flags), infinity stays; |t| < 2^-126 (x != 0)
 *   becomes +-2^-126 as above.
 * - No division (AVX-512, a divisor of <= 29 significant bits: NVFP4's 4-bit scale
 *   times its binary32 tensor scale): t1 = RN(xn * RN(1/dn)) is within 2^-52 |q| of
 *   the exact |q| = |xn| / dn, so with B = RZ32(t1) (|t1| in [2^-120, 2^127]) the
 *   binary32 truncation of |q| is B - ulp, B or B + ulp.  r0 = |xn| - B dn and r1 =
 *   |xn| - (B + ulp) dn are exact (fma: B has 24 bits, dn <= 29, so B dn has <= 53 and
 *   lies within a few units of xn's last place): r1 >= 0 gives B + ulp, else r0 >= 0
 *   gives B, else B - ulp; the result is exact iff its remainder is 0, else its last
 *   bit is set (to odd).  |t1| >= 2^127 gives 2^127 and |t1| < 2^-120 (x != 0)
 *   gives 2^-120: both far beyond every element format's range on their side, as
 *   above (a quotient near those limits rounds as the replacement does).
 * - Binary32 lanes (AVX-512 sixteen, AVX2 + FMA eight at a time: the same binary32
 *   operations lane by lane, so the argument holds for each lane as it stands; NVFP4
 *   whose tensor scale ts and block divisor d = s ts
 *   lie in [2^-60, 2^60], for element formats of at most 18 significant bits whose
 *   values and rounding boundaries lie in [2^-38, 2^19]: quantize.c lanes_ok; E2M1).
 *   The quotient is rounded to odd at k = 20 bits, which rounds correctly to <= 18
 *   bits in every deterministic mode.  s = RN32(d RN(1/ts)) is the 4-bit scale value
 *   exactly (within 2^-52 |s| of it), r = RN32(RN(1/d)), t1 = RN32(|x| r) is within
 *   2^-22 |q| of |q| = |x| / d, so with B = t1 cut to 20 bits the 20-bit truncation
 *   of |q| is B - u, B or B + u (u its unit; bit patterns, also across a binade).
 *   The remainders |x| - (B s) ts and |x| - ((B + u) s) ts: B s is exact (20 + 4
 *   bits), and the fma rounds the exact remainder once, so its sign and whether it
 *   is zero are exact unless it underflows: its terms are multiples of 2^(E_x - 48)
 *   (E_x the exponent of |x|), >= 2^-148 for |x| >= 2^-100.  Selection and the odd
 *   bit as in the no-division route.  Replacements: |x| < 2^-100 (x != 0) or t1 <
 *   2^-60 (then |q| < 2^-40 and < 2^-59.9, far below half the smallest subnormal,
 *   2^-38) give 2^-120; t1 >= 2^21 (|q| > 2^20.9, above every overflow boundary,
 *   2^19) gives 2^127, both rounding as the quotient they stand for.  Other
 *   divisors of the row, and the last m % 16 elements of a block, take the routes
 *   above.
 *
 * MXINT8's elements (INT8): the helper format's codes h (the conversion's output)
 * mapped by the table quantize.c builds from the core's exact cast of every helper
 * code (element byte | flags << 8): a lookup, per element, of the code's low bits
 * (hmask), the OR of the flags; gathers of sixteen (AVX-512) or eight (AVX2) lanes, or
 * at AVX2 with a regular table (blockq.h kreg, checked entry by entry by quantize.c) the
 * entries' formula in sixteen 16-bit lanes (int8_reg_avx2).
 *
 * Proven equal to the reference (softfp8.mx's Python path, what SOFTFP8_FAST=0
 * runs) by tests/harness/test_harness.py::test_entry [blockq] (every kind,
 * block size, scale rule, rounding mode, axis, short last blocks, NaN /
 * infinity / zero / subnormal blocks, binary32 / binary64 / other sources),
 * and against the independent Fractions reference of OCP MX / NVFP4 by
 * tests/numpy_glue/test_mx.py (the public quantize, fast paths on).
 *
 * The parts "binary32" (QUOT32: subnormal blocks, quotients around 2^-126, values
 * near binary32's largest, short rows, block sizes 1..48, every mode and stochastic
 * environment, NVFP4 tensor scales making quotients beyond binary32's range, and
 * quotients at and next to E2M1's midpoints in binary32 and binary64) and "layouts"
 * (strided and contiguous rows) of the harness entry run every kernel; "binary32" also
 * holds blocks at and around the binary32 lanes' thresholds and exactness boundaries
 * (families.py _nvfp4_lane_limits) for tensor scales inside and beyond their range.
 *
 * Kernels: portable C (Dekker's product), AVX2 + FMA (the same loops compiled for
 * the target, sixteen-lane groups the compiler vectorises, the remainder by the fma
 * instruction; by intrinsics: amax of contiguous binary32 blocks, eight lanes and a
 * masked tail load, NVFP4's binary32 lanes, eight at a time, and binary64 quotients of
 * contiguous rows, four lanes: quot64_avx512's operations, the header's first
 * argument lane by lane) and AVX-512 (also:
 * amax of contiguous binary32 blocks, binary64 quotients of contiguous rows and binary32
 * quotients, eight and sixteen lanes by intrinsics).  The AVX2 amax compares |x| as
 * bit patterns below 2^31 (signed and unsigned order agree there); a masked lane reads
 * +0, which changes no maximum and is no NaN or infinity.  The harness part "avx2"
 * (rows of every length 1..41, NaN / infinity / binary32's largest / subnormal / -0 at
 * the first or last element, blocks of 8, 16, 32 and the kind's) holds the masked
 * tails; "binary32" the lanes' thresholds (both proof: test_entry [blockq]). */
#include <math.h>
#include <string.h>

#include "blockq.h"
#include "family.h"
#include "simd.h"

const void *sfp8f_blockq_prepare(const sfp8f_call *c, void *scratch)
{
    const sfp8f_blockq *b = c->block;
    (void)scratch;
    if (c->kind != SFP8F_BLOCK || !b || (b->isize != 4 && b->isize != 8) || b->bs < 1 || b->rows < 0 ||
        b->n < 0)
        return NULL;
    if (b->phase == SFP8F_BQ_AMAX ? !b->amax || !b->special
        : b->phase == SFP8F_BQ_QUOT ? !b->d || !b->q
        : b->phase == SFP8F_BQ_QUOT32 ? !b->d || !b->q32 || b->isize != 4
        : b->phase != SFP8F_BQ_INT8 || !b->h || !b->kt || !b->o8 || b->hmask > 511 || b->rows != 1)
        return NULL;
    return b;
}

/* ---- amax: magnitudes compared as bit patterns (monotone for |x|) ---- */

/* G lanes at a time in a loop of fixed length (the compilers vectorise it at every level) */
enum { G = 16 };

static inline AINL void amax32(const char *x, ptrdiff_t es, ptrdiff_t m, double *amax, uint8_t *special)
{
    uint32_t mx = 0, bad = 0;
    ptrdiff_t j = 0;
    if (es == 4 && m >= G) {
        uint32_t vm[G] = {0}, vb[G] = {0};
        for (; j + G <= m; j += G)
            for (int i = 0; i < G; i++) {
                uint32_t u;
                memcpy(&u, x + (j + i) * 4, 4);
                u &= 0x7FFFFFFFu;
                vb[i] |= u >= 0x7F800000u;
                u = u < 0x7F800000u ? u : 0;
                vm[i] = u > vm[i] ? u : vm[i];
            }
        for (int i = 0; i < G; i++) {
            mx = vm[i] > mx ? vm[i] : mx;
            bad |= vb[i];
        }
    }
    for (; j < m; j++) {
        uint32_t u;
        memcpy(&u, x + j * es, 4);
        u &= 0x7FFFFFFFu;
        bad |= u >= 0x7F800000u;
        mx = u < 0x7F800000u && u > mx ? u : mx;
    }
    float f;
    memcpy(&f, &mx, 4);
    *amax = f;
    *special = (uint8_t)bad;
}

#if SFP8_X86
/* amax32 of a contiguous block, sixteen lanes at a time (the tail by a masked load: zeros) */
SFP8_AVX512 static inline AINL void amax32_avx512(const char *x, ptrdiff_t m, double *amax, uint8_t *special)
{
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    __m512i mx = _mm512_setzero_si512();
    __mmask16 bad = 0;
    for (ptrdiff_t j = 0; j < m; j += 16) {
        const __mmask16 k = m - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (m - j)) - 1);
        const __m512i u = _mm512_and_si512(_mm512_maskz_loadu_epi32(k, x + j * 4), absm);
        const __mmask16 fin = _mm512_cmplt_epu32_mask(u, inf);
        bad |= (__mmask16)~fin;
        mx = _mm512_mask_max_epu32(mx, fin, mx, u);
    }
    const uint32_t r = _mm512_reduce_max_epu32(mx);
    float f;
    memcpy(&f, &r, 4);
    *amax = f;
    *special = bad != 0;
}
#endif

#if SFP8_X86
/* amax32 of a contiguous block, eight lanes at a time (AVX2; the tail by a masked load, whose
   masked lanes read as +0): |x| as a bit pattern below 2^31, so the signed compare and maximum
   order it as the unsigned ones do; |x| > 0x7F7FFFFF (binary32's largest) is a NaN or an
   infinity, kept out of the maximum as the portable loop does */
SFP8_AVX2 static inline AINL void amax32_avx2(const char *x, ptrdiff_t m, double *amax, uint8_t *special)
{
    const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), fmax = _mm256_set1_epi32(0x7F7FFFFF);
    __m256i mx = _mm256_setzero_si256(), bad = _mm256_setzero_si256();
    ptrdiff_t j = 0;
    for (; j + 8 <= m; j += 8) {
        const __m256i u = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(x + j * 4)), absm),
                      b = _mm256_cmpgt_epi32(u, fmax);
        bad = _mm256_or_si256(bad, b);
        mx = _mm256_max_epi32(mx, _mm256_andnot_si256(b, u));
    }
    if (j < m) {
        const __m256i k = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(m - j)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        const __m256i u = _mm256_and_si256(_mm256_maskload_epi32((const int *)(const void *)(x + j * 4), k), absm),
                      b = _mm256_cmpgt_epi32(u, fmax);
        bad = _mm256_or_si256(bad, b);
        mx = _mm256_max_epi32(mx, _mm256_andnot_si256(b, u));
    }
    __m128i h = _mm_max_epi32(_mm256_castsi256_si128(mx), _mm256_extracti128_si256(mx, 1));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    *amax = _mm_cvtss_f32(_mm_castsi128_ps(h));
    *special = !_mm256_testz_si256(bad, bad);
}
#endif

static inline AINL void amax64(const char *x, ptrdiff_t es, ptrdiff_t m, double *amax, uint8_t *special)
{
    uint64_t mx = 0, bad = 0;
    for (ptrdiff_t j = 0; j < m; j++) {
        uint64_t u;
        memcpy(&u, x + j * es, 8);
        u &= 0x7FFFFFFFFFFFFFFFull;
        bad |= u >= 0x7FF0000000000000ull;
        mx = u < 0x7FF0000000000000ull && u > mx ? u : mx;
    }
    memcpy(amax, &mx, 8);
    *special = (uint8_t)bad;
}

/* ---- quotients (the header: DERIVED) ---- */

static inline double load_x(const char *p, int isize)
{
    if (isize == 4) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

/* x - t * dn exactly, or 0 / its sign: fma where the kernel's target has it, else
   Dekker's product (the reference's _two_prod: exact for |t| <= 2^996) */
static inline __attribute__((always_inline)) double remainder_of(double xn, double t, double dn, int hw)
{
    if (hw) return fma(-t, dn, xn);
    const double split = 134217729.0; /* 2^27 + 1 */
    double p = t * dn, ca = split * t, ah = ca - (ca - t), al = t - ah, cb = split * dn, bh = cb - (cb - dn),
           bl = dn - bh, e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return (xn - p) - e;
}

/* d > 0 finite = dn * 2^(e - 1), dn in [1, 2), and p = 2^(1 - e): by the bit pattern for a
   normal d whose p is normal (every divisor the quantiser makes), else by frexp / ldexp */
static inline AINL void split_d(double d, double *dn, double *p, int *e)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    const int be = (int)(u >> 52); /* d > 0: no sign bit */
    if (be >= 1 && be <= 2045) {
        const uint64_t un = (u & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull, up = (uint64_t)(2046 - be) << 52;
        memcpy(dn, &un, 8);
        memcpy(p, &up, 8);
        *e = be - 1022;
        return;
    }
    *dn = 2.0 * frexp(d, e);
    *p = ldexp(1.0, 1 - *e);
}

#if SFP8_X86
/* quot_block of contiguous binary64 values, eight lanes at a time (the same operations;
   the remainder by the fma instruction); the count done */
SFP8_AVX512 __attribute__((target("fma"))) static ptrdiff_t quot64_avx512(const double *x, ptrdiff_t m, double p,
                                                                           double dn, double *q)
{
    const __m512i one = _mm512_set1_epi64(1), absm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll);
    const __m512d vp = _mm512_set1_pd(p), vd = _mm512_set1_pd(dn), zero = _mm512_setzero_pd(),
                  dmax = _mm512_set1_pd(0x1.fffffffffffffp+1023), lim = _mm512_set1_pd(0x1p-899),
                  tiny = _mm512_set1_pd(0x1p-900);
    ptrdiff_t j = 0;
    for (; j + 8 <= m; j += 8) {
        const __m512d v = _mm512_loadu_pd(x + j), xn = _mm512_mul_pd(v, vp), t0 = _mm512_div_pd(xn, vd),
                      r = _mm512_fnmadd_pd(t0, vd, xn);
        const __m512i bt0 = _mm512_castpd_si512(t0), bv = _mm512_castpd_si512(v);
        const __mmask8 fix = _mm512_cmp_pd_mask(r, zero, _CMP_NEQ_UQ) & _mm512_testn_epi64_mask(bt0, one) &
                             _mm512_cmp_pd_mask(_mm512_castsi512_pd(_mm512_and_si512(bt0, absm)), dmax, _CMP_LE_OQ);
        const __mmask8 down = _mm512_cmp_pd_mask(r, zero, _CMP_GT_OQ) ^ _mm512_cmp_pd_mask(t0, zero, _CMP_GT_OQ);
        __m512i bt = _mm512_mask_add_epi64(bt0, fix & (__mmask8)~down, bt0, one);
        bt = _mm512_mask_sub_epi64(bt, fix & down, bt, one);
        const __mmask8 small = _mm512_test_epi64_mask(bv, absm) &
                               _mm512_cmp_pd_mask(_mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(xn), absm)),
                                                  lim, _CMP_LT_OQ);
        bt = _mm512_mask_mov_epi64(bt, small, _mm512_or_si512(_mm512_andnot_si512(absm, bv), _mm512_castpd_si512(tiny)));
        _mm512_storeu_pd(q + j, _mm512_castsi512_pd(bt));
    }
    return j;
}
#endif

#if SFP8_X86
/* quot64_avx512 on four lanes (AVX2 + FMA: the same operations, the masks as all-ones lanes:
   +1 by subtracting the mask, -1 by adding it); the count done */
SFP8_AVX2 __attribute__((target("fma"))) static ptrdiff_t quot64_avx2(const double *x, ptrdiff_t m, double p,
                                                                       double dn, double *q)
{
    const __m256i one = _mm256_set1_epi64x(1), absm = _mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFll),
                  zi = _mm256_setzero_si256();
    const __m256d vp = _mm256_set1_pd(p), vd = _mm256_set1_pd(dn), zero = _mm256_setzero_pd(),
                  dmax = _mm256_set1_pd(0x1.fffffffffffffp+1023), lim = _mm256_set1_pd(0x1p-899),
                  tiny = _mm256_set1_pd(0x1p-900);
    ptrdiff_t j = 0;
    for (; j + 4 <= m; j += 4) {
        const __m256d v = _mm256_loadu_pd(x + j), xn = _mm256_mul_pd(v, vp), t0 = _mm256_div_pd(xn, vd),
                      r = _mm256_fnmadd_pd(t0, vd, xn);
        const __m256i bt0 = _mm256_castpd_si256(t0), bv = _mm256_castpd_si256(v);
        const __m256i fix = _mm256_and_si256(
            _mm256_castpd_si256(_mm256_and_pd(_mm256_cmp_pd(r, zero, _CMP_NEQ_UQ),
                                              _mm256_cmp_pd(_mm256_castsi256_pd(_mm256_and_si256(bt0, absm)), dmax,
                                                            _CMP_LE_OQ))),
            _mm256_cmpeq_epi64(_mm256_and_si256(bt0, one), zi));
        const __m256i down = _mm256_castpd_si256(
            _mm256_xor_pd(_mm256_cmp_pd(r, zero, _CMP_GT_OQ), _mm256_cmp_pd(t0, zero, _CMP_GT_OQ)));
        __m256i bt = _mm256_sub_epi64(bt0, _mm256_andnot_si256(down, fix)); /* +1 */
        bt = _mm256_add_epi64(bt, _mm256_and_si256(fix, down));             /* -1 */
        const __m256i small = _mm256_andnot_si256(
            _mm256_cmpeq_epi64(_mm256_and_si256(bv, absm), zi),
            _mm256_castpd_si256(_mm256_cmp_pd(_mm256_castsi256_pd(_mm256_and_si256(_mm256_castpd_si256(xn), absm)),
                                              lim, _CMP_LT_OQ)));
        bt = _mm256_blendv_epi8(bt, _mm256_or_si256(_mm256_andnot_si256(absm, bv), _mm256_castpd_si256(tiny)), small);
        _mm256_storeu_pd(q + j, _mm256_castsi256_pd(bt));
    }
    return j;
}
#endif

/* m values of one block by its divisor d into q */
static inline __attribute__((always_inline)) void quot_block(const char *x, ptrdiff_t es, int isize, ptrdiff_t m,
                                                              double d, double *q, int hw)
{
    const double tiny = 0x1p-900, lim = 0x1p-899;
    int e;
    double dn, p;
    if (d == 0) {
        for (ptrdiff_t j = 0; j < m; j++) q[j] = 0.0;
        return;
    }
    split_d(d, &dn, &p, &e); /* d = dn * 2^(e - 1), dn in [1, 2), p = 2^(1 - e): exact */
#if SFP8_X86
    if (hw && isize == 8 && es == 8) {
        const ptrdiff_t done = hw == 2 ? quot64_avx512((const double *)(const void *)x, m, p, dn, q)
                                       : quot64_avx2((const double *)(const void *)x, m, p, dn, q);
        x += done * 8;
        q += done;
        m -= done;
    }
#endif
    if (dn == 1.0) {
        for (ptrdiff_t j = 0; j < m; j++) {
            double v = load_x(x + j * es, isize), xn = v * p;
            q[j] = v != 0 && fabs(xn) < lim ? copysign(tiny, v) : xn;
        }
        return;
    }
    for (ptrdiff_t j = 0; j < m; j++) {
        double v = load_x(x + j * es, isize), xn = v * p, t = xn / dn, r = remainder_of(xn, t, dn, hw);
        uint64_t bt;
        memcpy(&bt, &t, 8);
        /* the reference's fix (mx.py _exact_quotient): a NaN remainder (its Dekker product
           overflowed, |t| > 2^996) counts as nonzero and below */
        const uint64_t fix = (uint64_t)((r != 0) & !(bt & 1) & (fabs(t) <= 0x1.fffffffffffffp+1023));
        bt += fix - 2 * (fix & (uint64_t)((r > 0) ^ (t > 0))); /* +1 toward the exact value's side, or -1 */
        memcpy(&t, &bt, 8);
        q[j] = v != 0 && fabs(xn) < lim ? copysign(tiny, v) : t;
    }
}

/* ---- binary32 quotients (QUOT32; the header: DERIVED) ---- */

static inline AINL float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* one element of the general route: x / d rounded to odd at 53 bits as quot_block does
   (p = 2^(1 - e), dn in [1, 2)), then to odd at 24 bits in binary32's normal range */
static inline AINL uint32_t quot32_one(float xv, double p, double dn, int hw)
{
    const double v = xv, xn = v * p, t0 = xn / dn, r = remainder_of(xn, t0, dn, hw);
    uint64_t bt;
    uint32_t bf, bx;
    double t;
    memcpy(&bt, &t0, 8);
    const uint64_t fix = (uint64_t)((r != 0) & !(bt & 1) & (fabs(t0) <= 0x1.fffffffffffffp+1023));
    bt += fix - 2 * (fix & (uint64_t)((r > 0) ^ (t0 > 0)));
    memcpy(&t, &bt, 8);
    const double a = fabs(t);
    /* a finite quotient of 2^127 or more: +-2^127 (every element format overflows on both) */
    const double tc = a >= 0x1p127 && a <= 0x1.fffffffffffffp+1023 ? copysign(0x1p127, t) : t;
    const float f = (float)tc;
    const double back = f;
    memcpy(&bf, &f, 4);
    memcpy(&bx, &xv, 4);
    bf -= (uint32_t)(fabs(back) > fabs(tc)); /* toward zero */
    bf |= (uint32_t)(back != tc);            /* to odd */
    /* below binary32's normal range (x != 0): +-2^-126 */
    return (bx & 0x7FFFFFFFu) && a < 0x1p-126 ? (bx & 0x80000000u) | 0x00800000u : bf;
}

/* one element of a power-of-two divisor 2^s, |s| <= 126 (p = 2^-s, normal): x * p exact
   unless below 2^-126, then +-2^-126 (x != 0) */
static inline AINL uint32_t quot32_pow2(float xv, float p)
{
    uint32_t bf, bx;
    const float t = xv * p;
    memcpy(&bf, &t, 4);
    memcpy(&bx, &xv, 4);
    return (bx & 0x7FFFFFFFu) && (bf & 0x7FFFFFFFu) < 0x00800000u ? (bx & 0x80000000u) | 0x00800000u : bf;
}

static inline AINL float load_f(const char *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

#if SFP8_X86
/* quot32_one on eight lanes (AVX-512: the same operations, lane by lane) */
SFP8_AVX512 __attribute__((target("fma"))) static inline AINL __m256 quot32_one8(__m256 xf, __m512d p, __m512d dn)
{
    const __m512i one = _mm512_set1_epi64(1), absm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll);
    const __m512d v = _mm512_cvtps_pd(xf), xn = _mm512_mul_pd(v, p), t0 = _mm512_div_pd(xn, dn),
                  r = _mm512_fnmadd_pd(t0, dn, xn), zero = _mm512_setzero_pd();
    const __m512i bt0 = _mm512_castpd_si512(t0);
    const __mmask8 fix = _mm512_cmp_pd_mask(r, zero, _CMP_NEQ_UQ) & _mm512_testn_epi64_mask(bt0, one) &
                         _mm512_cmp_pd_mask(_mm512_castsi512_pd(_mm512_and_si512(bt0, absm)),
                                            _mm512_set1_pd(0x1.fffffffffffffp+1023), _CMP_LE_OQ);
    const __mmask8 down = _mm512_cmp_pd_mask(r, zero, _CMP_GT_OQ) ^ _mm512_cmp_pd_mask(t0, zero, _CMP_GT_OQ);
    __m512i bt = _mm512_mask_add_epi64(bt0, fix & (__mmask8)~down, bt0, one);
    bt = _mm512_mask_sub_epi64(bt, fix & down, bt, one);
    const __m512d t = _mm512_castsi512_pd(bt), a = _mm512_castsi512_pd(_mm512_and_si512(bt, absm));
    const __mmask8 huge = _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1p127), _CMP_GE_OQ) &
                          _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1.fffffffffffffp+1023), _CMP_LE_OQ);
    const __m512d tc = _mm512_mask_mov_pd(t, huge, _mm512_castsi512_pd(_mm512_or_si512(
                           _mm512_andnot_si512(absm, bt), _mm512_castpd_si512(_mm512_set1_pd(0x1p127)))));
    const __m256 f = _mm512_cvtpd_ps(tc);
    const __m512d back = _mm512_cvtps_pd(f);
    const __m512i babs = _mm512_and_si512(_mm512_castpd_si512(back), absm),
                  tabs = _mm512_and_si512(_mm512_castpd_si512(tc), absm);
    const __m256i one32 = _mm256_set1_epi32(1), bx = _mm256_castps_si256(xf);
    __m256i bf = _mm256_castps_si256(f);
    bf = _mm256_mask_sub_epi32(bf, _mm512_cmp_pd_mask(_mm512_castsi512_pd(babs), _mm512_castsi512_pd(tabs),
                                                      _CMP_GT_OQ), bf, one32);
    bf = _mm256_mask_or_epi32(bf, _mm512_cmp_pd_mask(back, tc, _CMP_NEQ_UQ), bf, one32);
    const __mmask8 tiny = _mm256_test_epi32_mask(bx, _mm256_set1_epi32(0x7FFFFFFF)) &
                          _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1p-126), _CMP_LT_OQ);
    bf = _mm256_mask_mov_epi32(bf, tiny, _mm256_or_si256(_mm256_and_si256(bx, _mm256_set1_epi32((int)0x80000000u)),
                                                         _mm256_set1_epi32(0x00800000)));
    return _mm256_castsi256_ps(bf);
}

/* quot32_one8 without a division, for a divisor whose significand has <= 29 bits (dn's
   low 24 bits zero; NVFP4's 4-bit scale times its binary32 tensor scale): the header,
   "no division" */
SFP8_AVX512 __attribute__((target("fma"))) static inline AINL __m256 quot32_rcp8(__m256 xf, __m512d p, __m512d dn,
                                                                               __m512d rcp)
{
    const __m512i absm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll);
    const __m512d v = _mm512_cvtps_pd(xf), ax = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(v), absm)),
                  xn = _mm512_mul_pd(ax, p), t1 = _mm512_mul_pd(xn, rcp);
    const __mmask8 huge = _mm512_cmp_pd_mask(t1, _mm512_set1_pd(0x1p127), _CMP_GE_OQ),
                   tiny = _mm512_cmp_pd_mask(t1, _mm512_set1_pd(0x1p-120), _CMP_LT_OQ);
    const __m512d tc = _mm512_min_pd(_mm512_max_pd(t1, _mm512_set1_pd(0x1p-120)), _mm512_set1_pd(0x1p127));
    const __m256i one = _mm256_set1_epi32(1), b = _mm256_castps_si256(
                                                  _mm512_cvt_roundpd_ps(tc, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    const __m256i bp = _mm256_add_epi32(b, one), bm = _mm256_sub_epi32(b, one);
    const __m512d r0 = _mm512_fnmadd_pd(_mm512_cvtps_pd(_mm256_castsi256_ps(b)), dn, xn),
                  r1 = _mm512_fnmadd_pd(_mm512_cvtps_pd(_mm256_castsi256_ps(bp)), dn, xn), zero = _mm512_setzero_pd();
    const __mmask8 ge1 = _mm512_cmp_pd_mask(r1, zero, _CMP_GE_OQ), ge0 = _mm512_cmp_pd_mask(r0, zero, _CMP_GE_OQ);
    const __mmask8 ex = (ge1 & _mm512_cmp_pd_mask(r1, zero, _CMP_EQ_OQ)) |
                        (ge0 & (__mmask8)~ge1 & _mm512_cmp_pd_mask(r0, zero, _CMP_EQ_OQ));
    __m256i q = _mm256_mask_mov_epi32(_mm256_mask_mov_epi32(bm, ge0, b), ge1, bp);
    q = _mm256_mask_or_epi32(q, (__mmask8)~ex, q, one);                               /* to odd */
    q = _mm256_mask_mov_epi32(q, huge, _mm256_set1_epi32(0x7F000000));                /* 2^127 */
    const __m256i bx = _mm256_castps_si256(xf), sign = _mm256_and_si256(bx, _mm256_set1_epi32((int)0x80000000u));
    q = _mm256_mask_mov_epi32(q, tiny, _mm256_set1_epi32(0x03800000));                /* 2^-120 */
    q = _mm256_maskz_mov_epi32(_mm256_test_epi32_mask(bx, _mm256_set1_epi32(0x7FFFFFFF)), q); /* x = +-0 */
    return _mm256_castsi256_ps(_mm256_or_si256(q, sign));
}

/* NVFP4 in binary32 lanes (the header, "binary32 lanes"): |x| / (s ts) rounded to odd at
   20 bits, r = RN32(1 / d); sixteen lanes at a time, the count done */
SFP8_AVX512 __attribute__((target("fma"))) static inline AINL ptrdiff_t quot32_lanes(const char *x, ptrdiff_t m,
                                                                                      float r, float s, float ts,
                                                                                      float *q)
{
    const __m512 vr = _mm512_set1_ps(r), vs = _mm512_set1_ps(s), vt = _mm512_set1_ps(ts),
                 zero = _mm512_setzero_ps();
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF), ulp = _mm512_set1_epi32(16), low = _mm512_set1_epi32(~15);
    ptrdiff_t j = 0;
    for (; j + 16 <= m; j += 16) {
        const __m512i bx = _mm512_loadu_si512((const void *)(x + j * 4)), bax = _mm512_and_si512(bx, absm);
        const __m512 ax = _mm512_castsi512_ps(bax), t1 = _mm512_mul_ps(ax, vr);
        const __m512i b = _mm512_and_si512(_mm512_castps_si512(t1), low), bp = _mm512_add_epi32(b, ulp);
        const __m512 r0 = _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_castsi512_ps(b), vs), vt, ax),
                     r1 = _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_castsi512_ps(bp), vs), vt, ax);
        const __mmask16 ge1 = _mm512_cmp_ps_mask(r1, zero, _CMP_GE_OQ), ge0 = _mm512_cmp_ps_mask(r0, zero, _CMP_GE_OQ);
        const __mmask16 ex = (ge1 & _mm512_cmp_ps_mask(r1, zero, _CMP_EQ_OQ)) |
                             (ge0 & (__mmask16)~ge1 & _mm512_cmp_ps_mask(r0, zero, _CMP_EQ_OQ));
        __m512i v = _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(_mm512_sub_epi32(b, ulp), ge0, b), ge1, bp);
        v = _mm512_mask_or_epi32(v, (__mmask16)~ex, v, ulp);                               /* to odd */
        const __mmask16 huge = _mm512_cmp_ps_mask(t1, _mm512_set1_ps(0x1p21f), _CMP_GE_OQ),
                        tiny = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0x1p-100f), _CMP_LT_OQ) |
                               _mm512_cmp_ps_mask(t1, _mm512_set1_ps(0x1p-60f), _CMP_LT_OQ);
        v = _mm512_mask_mov_epi32(v, huge, _mm512_set1_epi32(0x7F000000));                /* 2^127 */
        v = _mm512_mask_mov_epi32(v, tiny, _mm512_set1_epi32(0x03800000));                /* 2^-120 */
        v = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(bx, absm), v);                  /* x = +-0 */
        v = _mm512_or_si512(v, _mm512_andnot_si512(absm, bx));
        _mm512_storeu_si512((void *)(q + j), v);
    }
    return j;
}

/* the general route of a contiguous block, sixteen lanes at a time; the count done */
SFP8_AVX512 __attribute__((target("fma"))) static ptrdiff_t quot32_avx512(const char *x, ptrdiff_t m, double p,
                                                                           double dn, float *q)
{
    const __m512d vp = _mm512_set1_pd(p), vd = _mm512_set1_pd(dn);
    ptrdiff_t j = 0;
    uint64_t ud;
    memcpy(&ud, &dn, 8);
    if (!(ud & 0xFFFFFF)) {
        const __m512d rcp = _mm512_set1_pd(1.0 / dn);
        for (; j + 16 <= m; j += 16) {
            const float *xf = (const float *)(const void *)(x + j * 4);
            _mm256_storeu_ps(q + j, quot32_rcp8(_mm256_loadu_ps(xf), vp, vd, rcp));
            _mm256_storeu_ps(q + j + 8, quot32_rcp8(_mm256_loadu_ps(xf + 8), vp, vd, rcp));
        }
        return j;
    }
    for (; j + 16 <= m; j += 16) {
        _mm256_storeu_ps(q + j, quot32_one8(_mm256_loadu_ps((const float *)(const void *)(x + j * 4)), vp, vd));
        _mm256_storeu_ps(q + j + 8,
                         quot32_one8(_mm256_loadu_ps((const float *)(const void *)(x + (j + 8) * 4)), vp, vd));
    }
    return j;
}
#endif

#if SFP8_X86
/* quot32_lanes on eight lanes (AVX2 + FMA: the same operations lane by lane, the masks as
   all-ones lanes and the selections by blends; the header, "binary32 lanes", holds for each
   lane as it stands), the count done */
SFP8_AVX2 __attribute__((target("fma"))) static inline AINL ptrdiff_t quot32_lanes_avx2(const char *x, ptrdiff_t m,
                                                                                         float r, float s, float ts,
                                                                                         float *q)
{
    const __m256 vr = _mm256_set1_ps(r), vs = _mm256_set1_ps(s), vt = _mm256_set1_ps(ts), zero = _mm256_setzero_ps(),
                 big = _mm256_set1_ps(0x1p21f), small = _mm256_set1_ps(0x1p-60f), xmin = _mm256_set1_ps(0x1p-100f);
    const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), ulp = _mm256_set1_epi32(16), low = _mm256_set1_epi32(~15),
                  p127 = _mm256_set1_epi32(0x7F000000), m120 = _mm256_set1_epi32(0x03800000);
    ptrdiff_t j = 0;
    for (; j + 8 <= m; j += 8) {
        const __m256i bx = _mm256_loadu_si256((const __m256i *)(const void *)(x + j * 4)), bax = _mm256_and_si256(bx, absm);
        const __m256 ax = _mm256_castsi256_ps(bax), t1 = _mm256_mul_ps(ax, vr);
        const __m256i b = _mm256_and_si256(_mm256_castps_si256(t1), low), bp = _mm256_add_epi32(b, ulp);
        const __m256 r0 = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_castsi256_ps(b), vs), vt, ax),
                     r1 = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_castsi256_ps(bp), vs), vt, ax);
        const __m256 ge1 = _mm256_cmp_ps(r1, zero, _CMP_GE_OQ), ge0 = _mm256_cmp_ps(r0, zero, _CMP_GE_OQ);
        const __m256 ex = _mm256_or_ps(_mm256_and_ps(ge1, _mm256_cmp_ps(r1, zero, _CMP_EQ_OQ)),
                                       _mm256_andnot_ps(ge1, _mm256_and_ps(ge0, _mm256_cmp_ps(r0, zero, _CMP_EQ_OQ))));
        __m256i v = _mm256_blendv_epi8(_mm256_sub_epi32(b, ulp), b, _mm256_castps_si256(ge0));
        v = _mm256_blendv_epi8(v, bp, _mm256_castps_si256(ge1));
        v = _mm256_or_si256(v, _mm256_andnot_si256(_mm256_castps_si256(ex), ulp));       /* to odd */
        const __m256 huge = _mm256_cmp_ps(t1, big, _CMP_GE_OQ),
                     tiny = _mm256_or_ps(_mm256_cmp_ps(ax, xmin, _CMP_LT_OQ), _mm256_cmp_ps(t1, small, _CMP_LT_OQ));
        v = _mm256_blendv_epi8(v, p127, _mm256_castps_si256(huge));                     /* 2^127 */
        v = _mm256_blendv_epi8(v, m120, _mm256_castps_si256(tiny));                     /* 2^-120 */
        v = _mm256_andnot_si256(_mm256_cmpeq_epi32(bax, _mm256_setzero_si256()), v);    /* x = +-0 */
        v = _mm256_or_si256(v, _mm256_andnot_si256(absm, bx));
        _mm256_storeu_si256((__m256i *)(void *)(q + j), v);
    }
    return j;
}
#endif

/* m binary32 values of one block by its divisor d into q (contiguous rows: G at a time) */
static inline AINL void quot32_block(const char *x, ptrdiff_t es, ptrdiff_t m, double d, float *q, int hw)
{
    int e;
    ptrdiff_t j = 0;
    if (d == 0) {
        for (; j < m; j++) q[j] = 0.0f;
        return;
    }
    double dn, p;
    split_d(d, &dn, &p, &e);
    if (dn == 1.0 && e - 1 >= -126 && e - 1 <= 126) {
        const float pf = (float)p; /* 2^-s, a normal binary32 */
        if (es == 4)
            for (; j + G <= m; j += G)
                for (int i = 0; i < G; i++) q[j + i] = f32_bits(quot32_pow2(load_f(x + (j + i) * 4), pf));
        for (; j < m; j++) q[j] = f32_bits(quot32_pow2(load_f(x + j * es), pf));
        return;
    }
#if SFP8_X86
    if (hw == 2 && es == 4) j = quot32_avx512(x, m, p, dn, q);
#endif
    if (es == 4)
        for (; j + G <= m; j += G)
            for (int i = 0; i < G; i++) q[j + i] = f32_bits(quot32_one(load_f(x + (j + i) * 4), p, dn, hw));
    for (; j < m; j++) q[j] = f32_bits(quot32_one(load_f(x + j * es), p, dn, hw));
}

/* ---- MXINT8's elements: a table lookup per helper code (INT8) ---- */

#if SFP8_X86
/* sixteen (AVX-512) / eight (AVX2) lanes by the gather instruction; the count done */
SFP8_AVX512 static ptrdiff_t int8_avx512(const sfp8f_blockq *b, unsigned *fl)
{
    const __m512i mask = _mm512_set1_epi32((int)b->hmask);
    __m512i acc = _mm512_setzero_si512();
    ptrdiff_t j = 0;
    for (; j + 16 <= b->n; j += 16) {
        const __m512i idx = _mm512_and_si512(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(b->h + j))), mask);
        const __m512i v = _mm512_i32gather_epi32(idx, (const void *)b->kt, 4);
        _mm_storeu_si128((__m128i *)(void *)(b->o8 + j), _mm512_cvtepi32_epi8(v));
        acc = _mm512_or_si512(acc, v);
    }
    *fl = (unsigned)_mm512_reduce_or_epi32(acc);
    return j;
}

SFP8_AVX2 static ptrdiff_t int8_avx2(const sfp8f_blockq *b, unsigned *fl)
{
    const __m256i mask = _mm256_set1_epi32((int)b->hmask),
                  lo = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    __m256i acc = _mm256_setzero_si256();
    ptrdiff_t j = 0;
    for (; j + 8 <= b->n; j += 8) {
        const __m256i idx = _mm256_and_si256(
            _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b->h + j))), mask);
        const __m256i v = _mm256_i32gather_epi32((const int *)b->kt, idx, 4), p = _mm256_shuffle_epi8(v, lo);
        const uint32_t w0 = (uint32_t)_mm256_extract_epi32(p, 0), w1 = (uint32_t)_mm256_extract_epi32(p, 4);
        memcpy(b->o8 + j, &w0, 4);
        memcpy(b->o8 + j + 4, &w1, 4);
        acc = _mm256_or_si256(acc, v);
    }
    const __m128i a = _mm_or_si128(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    const __m128i a2 = _mm_or_si128(a, _mm_unpackhi_epi64(a, a));
    *fl = (unsigned)(_mm_cvtsi128_si32(a2) | _mm_extract_epi32(a2, 1));
    return j;
}
#endif

#if SFP8_X86
/* AVX2 with a regular table (b->kreg, blockq.h): the entries' bytes by their formula, sixteen
   16-bit lanes at a time, no gather -- k = c & 255, min(k, 127), negated when bit 8 of c is set
   (the sign instruction, its second operand c << 7 | 1: negative exactly then, else >= 1), packed
   to bytes (no saturation: |value| <= 127); the flags: kfl[] of the classes of k seen (0, 1..127,
   128..255), as the OR of the entries of those codes is.  Bits 9..15 of c are ignored, as hmask
   511 ignores them.  Proof: the blockq entry of the harness (mxint8 in every mode; "int8reg":
   every helper code in every lane position). */
SFP8_AVX2 static ptrdiff_t int8_reg_avx2(const sfp8f_blockq *b, unsigned *fl)
{
    const __m256i low = _mm256_set1_epi16(0xFF), c127 = _mm256_set1_epi16(127), one = _mm256_set1_epi16(1),
                  zero = _mm256_setzero_si256();
    __m256i s0 = zero, s1 = zero, s2 = zero;
    ptrdiff_t j = 0;
    for (; j + 16 <= b->n; j += 16) {
        const __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(b->h + j)), k = _mm256_and_si256(c, low);
        const __m256i v = _mm256_sign_epi16(_mm256_min_epi16(k, c127), _mm256_or_si256(_mm256_slli_epi16(c, 7), one));
        const __m256i z = _mm256_cmpeq_epi16(k, zero), big = _mm256_cmpgt_epi16(k, c127);
        _mm_storeu_si128((__m128i *)(void *)(b->o8 + j),
                         _mm_packs_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
        s0 = _mm256_or_si256(s0, z);
        s2 = _mm256_or_si256(s2, big);
        s1 = _mm256_or_si256(s1, _mm256_cmpeq_epi16(_mm256_or_si256(z, big), zero));
    }
    *fl = (_mm256_testz_si256(s0, s0) ? 0u : b->kfl[0] << 8) | (_mm256_testz_si256(s1, s1) ? 0u : b->kfl[1] << 8) |
          (_mm256_testz_si256(s2, s2) ? 0u : b->kfl[2] << 8);
    return j;
}
#endif

static inline AINL unsigned int8_run(const sfp8f_blockq *b, int hw)
{
    unsigned fl = 0;
    ptrdiff_t j = 0;
#if SFP8_X86
    if (hw == 2) j = int8_avx512(b, &fl);
    else if (hw == 1 && b->kreg) j = int8_reg_avx2(b, &fl);
    else if (hw == 1) j = int8_avx2(b, &fl);
#else
    (void)hw;
#endif
    for (; j < b->n; j++) {
        const int32_t v = b->kt[b->h[j] & b->hmask];
        b->o8[j] = (int8_t)(uint8_t)v;
        fl |= (unsigned)v;
    }
    return (fl >> 8) & 0xFFu;
}

#if SFP8_X86
/* AMAX of row r of contiguous binary32 values, block by block */
SFP8_AVX512 static void amax32_row_avx512(const sfp8f_blockq *b, ptrdiff_t r, ptrdiff_t nb)
{
    const char *row = b->x + r * b->rs;
    for (ptrdiff_t k = 0; k < nb; k++) {
        const ptrdiff_t j0 = k * b->bs, m = b->n - j0 < b->bs ? b->n - j0 : b->bs;
        amax32_avx512(row + j0 * 4, m, &b->amax[r * nb + k], &b->special[r * nb + k]);
    }
}

/* QUOT32 of row r of contiguous binary32 values, NVFP4 with tensor scale b->ts in [2^-60, 2^60]
   (its = RN(1 / ts)): the binary32 lanes for divisors in [2^-60, 2^60], quot32_block for the
   rest and for the last m % 16 elements of a block */
SFP8_AVX512 __attribute__((target("fma"))) static void quot32_row_lanes(const sfp8f_blockq *b, ptrdiff_t r,
                                                                         ptrdiff_t nb, double its)
{
    const char *row = b->x + r * b->rs;
    for (ptrdiff_t k = 0; k < nb; k++) {
        const ptrdiff_t j0 = k * b->bs, m = b->n - j0 < b->bs ? b->n - j0 : b->bs;
        const double d = b->d[r * nb + k];
        const char *xb = row + j0 * 4;
        float *q = b->q32 + r * b->n + j0;
        ptrdiff_t j = 0;
        if (d >= 0x1p-60 && d <= 0x1p60) /* s = d / ts exactly: d RN(1 / ts) lies within 2^-52 |s| of the 4-bit s */
            j = quot32_lanes(xb, m, (float)(1.0 / d), (float)(d * its), (float)b->ts, q);
        if (j < m) quot32_block(xb + j * 4, 4, m - j, d, q + j, 2);
    }
}
#endif

#if SFP8_X86
/* lane i of the result: the maximum (OR: the OR) of the eight lanes of v[i] (a transposing tree:
   pairs within 64 bits, 128 bits, then across the halves) */
SFP8_AVX2 static inline AINL __m256i red2(__m256i a, __m256i b, int OR)
{
    return OR ? _mm256_or_si256(a, b) : _mm256_max_epi32(a, b);
}

SFP8_AVX2 static inline AINL __m256i tree8(const __m256i v[8], int OR)
{
    __m256i a[4], c[2];
    for (int i = 0; i < 4; i++)
        a[i] = red2(_mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]), _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]), OR);
    for (int i = 0; i < 2; i++)
        c[i] = red2(_mm256_unpacklo_epi64(a[2 * i], a[2 * i + 1]), _mm256_unpackhi_epi64(a[2 * i], a[2 * i + 1]), OR);
    return red2(_mm256_permute2x128_si256(c[0], c[1], 0x20), _mm256_permute2x128_si256(c[0], c[1], 0x31), OR);
}

/* AMAX of row r of contiguous binary32 values (AVX2): eight whole blocks of a multiple of 8
   at a time (amax32_avx2's lanes per block, then the eight blocks' reductions together by
   tree8; the maxima widened to binary64 exactly as the one-block kernel does), block by
   block for the rest */
SFP8_AVX2 static void amax32_row_avx2(const sfp8f_blockq *b, ptrdiff_t r, ptrdiff_t nb)
{
    const char *row = b->x + r * b->rs;
    const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), fmax = _mm256_set1_epi32(0x7F7FFFFF);
    ptrdiff_t k = 0;
    if (b->bs % 8 == 0)
        for (; k + 8 <= nb && (k + 8) * b->bs <= b->n; k += 8) {
            __m256i mx[8], bad[8];
            for (int i = 0; i < 8; i++) {
                const char *xb = row + (k + i) * b->bs * 4;
                __m256i m = _mm256_setzero_si256(), bd = _mm256_setzero_si256();
                for (ptrdiff_t j = 0; j < b->bs; j += 8) {
                    const __m256i u = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(xb + j * 4)),
                                                       absm),
                                  t = _mm256_cmpgt_epi32(u, fmax);
                    bd = _mm256_or_si256(bd, t);
                    m = _mm256_max_epi32(m, _mm256_andnot_si256(t, u));
                }
                mx[i] = m;
                bad[i] = bd;
            }
            const __m256 am = _mm256_castsi256_ps(tree8(mx, 0));
            const unsigned bits = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(tree8(bad, 1)));
            _mm256_storeu_pd(&b->amax[r * nb + k], _mm256_cvtps_pd(_mm256_castps256_ps128(am)));
            _mm256_storeu_pd(&b->amax[r * nb + k + 4], _mm256_cvtps_pd(_mm256_extractf128_ps(am, 1)));
            for (int i = 0; i < 8; i++) b->special[r * nb + k + i] = (uint8_t)((bits >> i) & 1);
        }
    for (; k < nb; k++) {
        const ptrdiff_t j0 = k * b->bs, m = b->n - j0 < b->bs ? b->n - j0 : b->bs;
        amax32_avx2(row + j0 * 4, m, &b->amax[r * nb + k], &b->special[r * nb + k]);
    }
}

/* quot32_row_lanes with quot32_lanes_avx2 (AVX2 + FMA): the same routes and limits */
SFP8_AVX2 __attribute__((target("fma"))) static void quot32_row_lanes_avx2(const sfp8f_blockq *b, ptrdiff_t r,
                                                                            ptrdiff_t nb, double its)
{
    const char *row = b->x + r * b->rs;
    for (ptrdiff_t k = 0; k < nb; k++) {
        const ptrdiff_t j0 = k * b->bs, m = b->n - j0 < b->bs ? b->n - j0 : b->bs;
        const double d = b->d[r * nb + k];
        const char *xb = row + j0 * 4;
        float *q = b->q32 + r * b->n + j0;
        ptrdiff_t j = 0;
        if (d >= 0x1p-60 && d <= 0x1p60) /* s = d / ts exactly, as in quot32_row_lanes */
            j = quot32_lanes_avx2(xb, m, (float)(1.0 / d), (float)(d * its), (float)b->ts, q);
        if (j < m) quot32_block(xb + j * 4, 4, m - j, d, q + j, 1);
    }
}
#endif

static inline __attribute__((always_inline)) unsigned run_all(const sfp8f_blockq *b, int hw)
{
    const ptrdiff_t nb = (b->n + b->bs - 1) / b->bs;
    const double its = b->ts > 0 ? 1.0 / b->ts : 0.0;
    if (b->phase == SFP8F_BQ_INT8) return int8_run(b, hw);
    for (ptrdiff_t r = 0; r < b->rows; r++) {
        const char *row = b->x + r * b->rs;
#if SFP8_X86
        if (hw == 2 && b->phase == SFP8F_BQ_QUOT32 && b->es == 4 && b->ts >= 0x1p-60 && b->ts <= 0x1p60) {
            quot32_row_lanes(b, r, nb, its);
            continue;
        }
        if (hw == 2 && b->phase == SFP8F_BQ_AMAX && b->isize == 4 && b->es == 4) {
            amax32_row_avx512(b, r, nb);
            continue;
        }
        if (hw == 1 && b->phase == SFP8F_BQ_QUOT32 && b->es == 4 && b->ts >= 0x1p-60 && b->ts <= 0x1p60) {
            quot32_row_lanes_avx2(b, r, nb, its);
            continue;
        }
        if (hw == 1 && b->phase == SFP8F_BQ_AMAX && b->isize == 4 && b->es == 4) {
            amax32_row_avx2(b, r, nb);
            continue;
        }
#else
        (void)its;
#endif
        for (ptrdiff_t k = 0; k < nb; k++) {
            const ptrdiff_t j0 = k * b->bs, m = b->n - j0 < b->bs ? b->n - j0 : b->bs;
            const char *xb = row + j0 * b->es;
            if (b->phase == SFP8F_BQ_AMAX) {
                if (b->isize == 4) amax32(xb, b->es, m, &b->amax[r * nb + k], &b->special[r * nb + k]);
                else amax64(xb, b->es, m, &b->amax[r * nb + k], &b->special[r * nb + k]);
            } else if (b->phase == SFP8F_BQ_QUOT32) {
                quot32_block(xb, b->es, m, b->d[r * nb + k], b->q32 + r * b->n + j0, hw);
            } else if (b->isize == 4) {
                quot_block(xb, b->es, 4, m, b->d[r * nb + k], b->q + r * b->n + j0, hw);
            } else {
                quot_block(xb, b->es, 8, m, b->d[r * nb + k], b->q + r * b->n + j0, hw);
            }
        }
    }
    return 0;
}

unsigned sfp8f_blockq_run(const void *t, const sfp8f_call *c)
{
    (void)c;
    return run_all(t, 0);
}

#if SFP8_X86
/* the same loops with the hardware's fma for the remainder */
__attribute__((target("avx2,fma"), optimize("O3"))) unsigned sfp8f_blockq_run_avx2(const void *t, const sfp8f_call *c)
{
    (void)c;
    return run_all(t, 1);
}

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma"), optimize("O3"))) unsigned sfp8f_blockq_run_avx512(const void *t,
                                                                                                   const sfp8f_call *c)
{
    (void)c;
    return run_all(t, 2);
}
#endif
