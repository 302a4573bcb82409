/* The SIMD pieces the fast-path families share (internal to fast/), and the
 * one definition of the instruction-set targets.
 *
 * Every family file keeps its own kernels (portable C, AVX2, AVX-512 side by
 * side); what more than one family uses is here:
 *   - the targets: SFP8_X86 (1 where the x86-64 kernels are compiled: GCC or
 *     Clang on x86-64), SFP8_AVX2 and SFP8_AVX512 (function attributes: AVX2;
 *     AVX-512 F/BW/VL/DQ/VBMI, the set sfp8s_cpu_level() reports as level 2),
 *     AINL (always inline).  The matrix engine may use them too;
 *   - the counter-based generator of rng.h many elements at a time (rng16:
 *     sixteen words a block, AVX-512; rng4: four, AVX2), bit for bit
 *     sfp8r_bits(seed_key, stream_key, index0 + j) for lane j;
 *   - binary64 (binary32) lanes rounded to an integer in a deterministic mode
 *     (round512, round512f, round256), and the lane -> code rounding of the
 *     arithmetic casts built on it (cast_*: the from_float8 and cast16
 *     families);
 *   - small lane helpers: 256-entry byte tables in registers (tab256), the
 *     binary64 key of from_float8.c (key64x8, key64x16f, key64_256), stores
 *     and ORs of byte lanes, the AVX2 lane order L of two interleaved 64-bit
 *     vectors.
 * All forms suppress floating-point exceptions: MXCSR neither changes nor
 * matters.  Include after softfp8.h; everything but the macros and
 * sfp8s_cpu_level() is inside #if SFP8_X86. */
#ifndef SOFTFP8_FAST_SIMD_H
#define SOFTFP8_FAST_SIMD_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "softfp8/softfp8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define SFP8_X86 1
#include <immintrin.h>
#else
#define SFP8_X86 0
#endif

#define SFP8_AVX2 __attribute__((target("avx2")))
#define SFP8_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))
#define AINL __attribute__((always_inline))

/* One instance of a kernel per deterministic rounding mode: CASE(MODE, ...) is a
 * statement (a return) with MODE a constant, the other arguments passed on;
 * other modes return 0 (no element done: the caller's portable loop takes them). */
#define SFP8S_MODES(rounding, CASE, ...)                                                                       \
    switch (rounding) {                                                                                        \
    case SFP8_ROUND_NEAREST_EVEN: CASE(SFP8_ROUND_NEAREST_EVEN, __VA_ARGS__)                                   \
    case SFP8_ROUND_NEAREST_AWAY: CASE(SFP8_ROUND_NEAREST_AWAY, __VA_ARGS__)                                   \
    case SFP8_ROUND_TOWARD_ZERO: CASE(SFP8_ROUND_TOWARD_ZERO, __VA_ARGS__)                                     \
    case SFP8_ROUND_UPWARD: CASE(SFP8_ROUND_UPWARD, __VA_ARGS__)                                               \
    case SFP8_ROUND_DOWNWARD: CASE(SFP8_ROUND_DOWNWARD, __VA_ARGS__)                                           \
    case SFP8_ROUND_TO_ODD: CASE(SFP8_ROUND_TO_ODD, __VA_ARGS__)                                               \
    default: return 0;                                                                                         \
    }

/* 2: AVX-512 F, BW, VL, DQ and VBMI (and AVX2); 1: AVX2 only; 0: neither, or not x86-64
   (switches.c) */
int sfp8s_cpu_level(void);

#if SFP8_X86

/* ------------------------------------------------------------------------ */
/* The counter-based generator (rng.h), many elements at a time              */
/* ------------------------------------------------------------------------ */
/* Two savings over the scalar form: index * G is computed once and then
 * advanced by adding a multiple of G, and the outer mix's last step
 * (z ^= z >> 33) is skipped since only the high 32 bits are kept.  AVX-512:
 * vpmullq; AVX2: the 64-bit products from three 32 x 32 -> 64-bit vpmuludq. */

/* rng.h's sfp8r_mix64 without its last step z ^= z >> 33 */
SFP8_AVX512 static inline __m512i mix64x8_head(__m512i z)
{
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 33));
    z = _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0xff51afd7ed558ccdULL));
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 33));
    return _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0xc4ceb9fe1a85ec53ULL));
}

/* rng.h's sfp8r_bits of eight lanes, h = index * 0x9E3779B97F4A7C15 + stream_key; the
 * outer mix's last step leaves the high 32 bits alone ((z ^ z >> 33) >> 32 == z >> 32) */
SFP8_AVX512 static inline __m256i rand8(__m512i h, __m512i seed_key)
{
    __m512i z = mix64x8_head(h);
    z = _mm512_xor_si512(_mm512_xor_si512(z, _mm512_srli_epi64(z, 33)), seed_key);
    return _mm512_cvtepi64_epi32(_mm512_srli_epi64(mix64x8_head(z), 32));
}

/* The generator of sixteen consecutive elements at a time: h of lane j of the
 * block at i is (index0 + i + j) * G + stream_key, stepped by 8 G */
typedef struct {
    __m512i h, step, sk;
} rng16;

SFP8_AVX512 static inline rng16 rng16_init(uint64_t seed_key, uint64_t stream_key, uint64_t index0)
{
    const uint64_t G = 0x9E3779B97F4A7C15ULL;
    rng16 g;
    g.h = _mm512_add_epi64(_mm512_mullo_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)index0),
                                                               _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0)),
                                              _mm512_set1_epi64((long long)G)),
                           _mm512_set1_epi64((long long)stream_key));
    g.step = _mm512_set1_epi64((long long)(8 * G));
    g.sk = _mm512_set1_epi64((long long)seed_key);
    return g;
}

/* rand8's words in the high halves of the 64-bit lanes (the low halves are not the
 * generator's) */
SFP8_AVX512 static inline __m512i rand8_high(__m512i h, __m512i seed_key)
{
    __m512i z = mix64x8_head(h);
    z = _mm512_xor_si512(_mm512_xor_si512(z, _mm512_srli_epi64(z, 33)), seed_key);
    return mix64x8_head(z);
}

/* the 32 random bits of the next sixteen elements (the high halves of two rand8_high
 * gathered by one two-source permute) */
SFP8_AVX512 static inline __m512i rng16_next(rng16 *g)
{
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    __m512i r0 = rand8_high(g->h, g->sk), r1;
    g->h = _mm512_add_epi64(g->h, g->step);
    r1 = rand8_high(g->h, g->sk);
    g->h = _mm512_add_epi64(g->h, g->step);
    return _mm512_permutex2var_epi32(r0, odd, r1);
}

/* ---- AVX2 ---- */

/* z * c mod 2^64 of four lanes, c = chi * 2^32 + clo (clo, chi in every lane) */
SFP8_AVX2 static inline __m256i mul64x4(__m256i z, __m256i clo, __m256i chi)
{
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(z, 32), clo), _mm256_mul_epu32(z, chi));
    return _mm256_add_epi64(_mm256_mul_epu32(z, clo), _mm256_slli_epi64(cross, 32));
}

typedef struct {
    __m256i h, step, sk, c1lo, c1hi, c2lo, c2hi;
} rng4;

/* h of lane j is (index0 + j) * G + stream_key, stepped by 4 G */
SFP8_AVX2 static inline rng4 rng4_init(uint64_t seed_key, uint64_t stream_key, uint64_t index0)
{
    const uint64_t G = 0x9E3779B97F4A7C15ULL, h0 = index0 * G + stream_key;
    rng4 g;
    g.h = _mm256_setr_epi64x((long long)h0, (long long)(h0 + G), (long long)(h0 + 2 * G), (long long)(h0 + 3 * G));
    g.step = _mm256_set1_epi64x((long long)(4 * G));
    g.sk = _mm256_set1_epi64x((long long)seed_key);
    g.c1lo = _mm256_set1_epi64x(0xed558ccdLL);
    g.c1hi = _mm256_set1_epi64x(0xff51afd7LL);
    g.c2lo = _mm256_set1_epi64x(0x1a85ec53LL);
    g.c2hi = _mm256_set1_epi64x(0xc4ceb9feLL);
    return g;
}

/* rng.h's sfp8r_mix64 without its last step, four lanes */
SFP8_AVX2 static inline __m256i mix64x4_head(const rng4 *g, __m256i z)
{
    z = mul64x4(_mm256_xor_si256(z, _mm256_srli_epi64(z, 33)), g->c1lo, g->c1hi);
    return mul64x4(_mm256_xor_si256(z, _mm256_srli_epi64(z, 33)), g->c2lo, g->c2hi);
}

/* the 32 random bits of the next four elements, in the low halves of 64-bit lanes */
SFP8_AVX2 static inline __m256i rng4_next(rng4 *g)
{
    __m256i z = mix64x4_head(g, g->h);
    g->h = _mm256_add_epi64(g->h, g->step);
    z = _mm256_xor_si256(_mm256_xor_si256(z, _mm256_srli_epi64(z, 33)), g->sk);
    return _mm256_srli_epi64(mix64x4_head(g, z), 32);
}

/* ------------------------------------------------------------------------ */
/* Rounding lanes to integers, and lanes to codes (the arithmetic casts)     */
/* ------------------------------------------------------------------------ */
/* round512 (AVX-512): roundscale in the mode; nearest-away is trunc(z +
 * copysign(1/2, z)) with that sum rounded toward zero, which keeps its integer
 * part (ternary logic 0xEA: (z & sign) | 1/2); toward zero and to-odd (whose
 * callers OR the inexact bit into K) truncate.  round512f: the same on binary32
 * lanes.  round256 (AVX2): _mm256_round_pd in the mode; nearest-away is
 * trunc(z), then one more in z's direction where the exact |z - trunc z| >= 1/2.
 * MODE is a constant at every call (the kernels are instantiated per mode). */

SFP8_AVX512 static inline AINL __m512d round512(int MODE, __m512d z)
{
    const int SAE_ = _MM_FROUND_NO_EXC;
    switch (MODE) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_NEAREST_INT, SAE_);
    case SFP8_ROUND_UPWARD: return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_POS_INF, SAE_);
    case SFP8_ROUND_DOWNWARD: return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_NEG_INF, SAE_);
    case SFP8_ROUND_NEAREST_AWAY: {
        const __m512i sign = _mm512_set1_epi64((long long)0x8000000000000000ULL);
        const __m512i half = _mm512_set1_epi64(0x3fe0000000000000LL);
        __m512d h = _mm512_castsi512_pd(_mm512_ternarylogic_epi64(_mm512_castpd_si512(z), sign, half, 0xEA));
        return _mm512_roundscale_round_pd(_mm512_add_round_pd(z, h, _MM_FROUND_TO_ZERO | SAE_),
                                          _MM_FROUND_TO_ZERO, SAE_);
    }
    default: /* toward zero; to odd (then | inexact) */
        return _mm512_roundscale_round_pd(z, _MM_FROUND_TO_ZERO, SAE_);
    }
}

SFP8_AVX2 static inline AINL __m256d round256(int MODE, __m256d z)
{
    const int X = _MM_FROUND_NO_EXC;
    switch (MODE) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm256_round_pd(z, _MM_FROUND_TO_NEAREST_INT | X);
    case SFP8_ROUND_UPWARD: return _mm256_round_pd(z, _MM_FROUND_TO_POS_INF | X);
    case SFP8_ROUND_DOWNWARD: return _mm256_round_pd(z, _MM_FROUND_TO_NEG_INF | X);
    case SFP8_ROUND_NEAREST_AWAY: {
        const __m256d sign = _mm256_set1_pd(-0.0);
        __m256d t = _mm256_round_pd(z, _MM_FROUND_TO_ZERO | X);
        __m256d up = _mm256_cmp_pd(_mm256_andnot_pd(sign, _mm256_sub_pd(z, t)), _mm256_set1_pd(0.5), _CMP_GE_OQ);
        __m256d one = _mm256_or_pd(_mm256_and_pd(z, sign), _mm256_set1_pd(1.0)); /* copysign(1, z) */
        return _mm256_add_pd(t, _mm256_and_pd(up, one));
    }
    default: return _mm256_round_pd(z, _MM_FROUND_TO_ZERO | X);
    }
}

SFP8_AVX512 static inline AINL __m512 round512f(int MODE, __m512 z)
{
    switch (MODE) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm512_roundscale_round_ps(z, _MM_FROUND_TO_NEAREST_INT, _MM_FROUND_NO_EXC);
    case SFP8_ROUND_UPWARD: return _mm512_roundscale_round_ps(z, _MM_FROUND_TO_POS_INF, _MM_FROUND_NO_EXC);
    case SFP8_ROUND_DOWNWARD: return _mm512_roundscale_round_ps(z, _MM_FROUND_TO_NEG_INF, _MM_FROUND_NO_EXC);
    case SFP8_ROUND_NEAREST_AWAY: {
        const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
        const __m512i half = _mm512_set1_epi32(0x3f000000);
        __m512 h = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(z), sign, half, 0xEA));
        return _mm512_roundscale_round_ps(_mm512_add_round_ps(z, h, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC),
                                          _MM_FROUND_TO_ZERO, _MM_FROUND_NO_EXC);
    }
    default: return _mm512_roundscale_round_ps(z, _MM_FROUND_TO_ZERO, _MM_FROUND_NO_EXC);
    }
}

/* The lane -> code rounding of the arithmetic casts from binary64 (binary32
 * read as binary64) into a format (DERIVED from core.c round_pack; the argument
 * and the proofs are in from_float8.c and cast16.c): for a finite normal x of
 * exponent e, em = max(e, emin) and z = x * 2^(M - em) (exact) put the format's
 * quantum at x on 1; K = |z| rounded in the mode, inexact iff K != z, the
 * magnitude code ((em - emin) << M) + K (the carry into the next binade
 * included); magnitudes above maxmag take the overflow results and flags (from
 * the core).  Tininess: a result below 2^emin (magnitude < 2^M) is tiny, one of
 * x >= 2^emin is not; the inexact results 2^emin of x < 2^emin ("edge" lanes)
 * are tiny before rounding and left to the caller's exact path after it. */

/* the lane constants of one cast */
typedef struct {
    __m512i maxmag, signbit, ebase, top, ovf0, ovf1, fix, fuf, fo0, fo1;
    __m128i Mc;
    int negzero; /* 0: a zero result drops its sign bit (FNUZ, P3109) */
} cast_k512;

SFP8_AVX512 static inline AINL void cast_k512_init(cast_k512 *c, int M, int emin, uint32_t maxmag, uint32_t signbit,
                                                   int negzero, uint32_t ovf0, uint32_t ovf1, uint32_t ovf_fl0,
                                                   uint32_t ovf_fl1)
{
    c->maxmag = _mm512_set1_epi32((int)maxmag);
    c->signbit = _mm512_set1_epi32((int)signbit);
    c->ebase = _mm512_set1_epi32(emin * (1 << M));
    c->top = _mm512_set1_epi32(1 << M);
    c->ovf0 = _mm512_set1_epi32((int)ovf0);
    c->ovf1 = _mm512_set1_epi32((int)ovf1);
    c->Mc = _mm_cvtsi32_si128(M);
    c->fix = _mm512_set1_epi32(SFP8_FLAG_INEXACT);
    c->fuf = _mm512_set1_epi32(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW);
    c->fo0 = _mm512_set1_epi32((int)ovf_fl0);
    c->fo1 = _mm512_set1_epi32((int)ovf_fl1);
    c->negzero = negzero;
}

/* eight binary64 lanes: K (signed) and em as integers, inexact, sign */
SFP8_AVX512 static inline AINL void cast_half512(int MODE, __m512d x, __m512d eminv, __m512d Mv, __m256i *k,
                                                 __m256i *em, unsigned *ix, unsigned *sg)
{
    const int SAE_ = _MM_FROUND_NO_EXC, RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    __m512d m = _mm512_max_round_pd(_mm512_getexp_round_pd(x, SAE_), eminv, SAE_);
    __m512d z = _mm512_scalef_round_pd(x, _mm512_sub_round_pd(Mv, m, RN), RN);
    __m512d r = round512(MODE, z);
    *ix = _mm512_cmp_round_pd_mask(r, z, _CMP_NEQ_OQ, SAE_);
    *k = _mm512_cvtt_roundpd_epi32(r, SAE_);
    *em = _mm512_cvtt_roundpd_epi32(m, SAE_);
    *sg = _mm512_movepi64_mask(_mm512_castpd_si512(x));
}

/* sixteen binary64 lanes (two halves) below 2^emin (pmin) */
SFP8_AVX512 static inline AINL unsigned cast_below512(__m512d x0, __m512d x1, __m512d pmin)
{
    const __m512d mag = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffLL));
    return _mm512_cmp_round_pd_mask(_mm512_and_pd(x0, mag), pmin, _CMP_LT_OQ, _MM_FROUND_NO_EXC) |
           (unsigned)_mm512_cmp_round_pd_mask(_mm512_and_pd(x1, mag), pmin, _CMP_LT_OQ, _MM_FROUND_NO_EXC) << 8;
}

/* Sixteen lanes from K (signed), em, the inexact lanes ix and the sign lanes s:
 * returns the codes (magnitude | sign bit); *fl = the flags (inexact; FULL:
 * underflow where tiny, the overflow results' where the magnitude exceeds
 * maxmag, whose codes are replaced); *ovf = those lanes; *edge (FULL) = the
 * inexact lanes of magnitude 2^emin, whose tininess the caller decides from x
 * (x < 2^emin: tiny before rounding, the caller's exact path after). */
SFP8_AVX512 static inline AINL __m512i cast_code512(int MODE, int FULL, const cast_k512 *c, __m512i k, __m512i em,
                                                    unsigned ix, unsigned s, __m512i *fl, unsigned *ovf,
                                                    unsigned *edge)
{
    __m512i mag = _mm512_add_epi32(_mm512_abs_epi32(k), _mm512_sub_epi32(_mm512_sll_epi32(em, c->Mc), c->ebase));
    __m512i code, f;
    unsigned o;
    if (MODE == SFP8_ROUND_TO_ODD) mag = _mm512_mask_or_epi32(mag, (__mmask16)ix, mag, _mm512_set1_epi32(1));
    o = _mm512_cmpgt_epu32_mask(mag, c->maxmag);
    f = _mm512_maskz_mov_epi32((__mmask16)ix, c->fix);
    if (!c->negzero) s &= _mm512_test_epi32_mask(mag, mag);
    code = _mm512_mask_or_epi32(mag, (__mmask16)s, mag, c->signbit);
    if (FULL) {
        const unsigned tiny = _mm512_cmplt_epu32_mask(mag, c->top);
        *edge = _mm512_mask_cmpeq_epi32_mask((__mmask16)ix, mag, c->top);
        f = _mm512_mask_mov_epi32(f, (__mmask16)(ix & tiny), c->fuf);
        if (o) {
            code = _mm512_mask_mov_epi32(code, (__mmask16)(o & ~s), c->ovf0);
            code = _mm512_mask_mov_epi32(code, (__mmask16)(o & s), c->ovf1);
            f = _mm512_mask_mov_epi32(f, (__mmask16)(o & ~s), c->fo0);
            f = _mm512_mask_mov_epi32(f, (__mmask16)(o & s), c->fo1);
        }
    }
    *fl = f;
    *ovf = o;
    return code;
}

/* AVX2: four binary64 lanes at a time.  Without getexp / scalef / roundscale:
 * the exponent field read as an integer, the scale 2^(M - em) built as
 * binary64 bits and multiplied in (exact: normal operands, a normal result),
 * round256 in the mode, K read from |K| + 2^52.  Lanes that are not normal or
 * zero (NaN, infinity, binary64 subnormals) are zeroed before the product and
 * returned as uncovered. */
typedef struct {
    __m256i absm, minn, span, ebmin, c2046m, two52, pmin, top, maxmag, signbit, ovf0, ovf1, fix, fuf, fo0, fo1;
    __m128i Mc;
    int negzero, unsig; /* unsig: no sign bit (FULL 0: negative lanes uncovered) */
} cast_k256;

SFP8_AVX2 static inline AINL void cast_k256_init(cast_k256 *c, int M, int emin, uint32_t maxmag, uint32_t signbit,
                                                 int negzero, int unsig, uint32_t ovf0, uint32_t ovf1,
                                                 uint32_t ovf_fl0, uint32_t ovf_fl1)
{
    c->absm = _mm256_set1_epi64x(0x7fffffffffffffffLL);
    c->minn = _mm256_set1_epi64x(0x0010000000000000LL);
    c->span = _mm256_set1_epi64x(0x7fe0000000000000LL);
    c->ebmin = _mm256_set1_epi64x(emin + 1023);
    c->c2046m = _mm256_set1_epi64x(2046 + M);
    c->two52 = _mm256_set1_epi64x(0x4330000000000000LL);
    c->pmin = _mm256_set1_epi64x((long long)(emin + 1023) << 52);
    c->top = _mm256_set1_epi64x(1 << M);
    c->maxmag = _mm256_set1_epi64x(maxmag);
    c->signbit = _mm256_set1_epi64x(signbit);
    c->ovf0 = _mm256_set1_epi64x(ovf0);
    c->ovf1 = _mm256_set1_epi64x(ovf1);
    c->fix = _mm256_set1_epi64x(SFP8_FLAG_INEXACT);
    c->fuf = _mm256_set1_epi64x(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW);
    c->fo0 = _mm256_set1_epi64x(ovf_fl0);
    c->fo1 = _mm256_set1_epi64x(ovf_fl1);
    c->Mc = _mm_cvtsi32_si128(M);
    c->negzero = negzero;
    c->unsig = unsig;
}

/* four lanes (binary64 bits b): code, flags (zero in uncovered lanes); returns
   the uncovered lanes (all ones): not normal or zero, FULL: with TB 0 the edge
   lanes; FULL 0: below 2^emin, overflow, negative in an unsigned format */
SFP8_AVX2 static inline AINL __m256i cast_lane4(int MODE, int TB, int FULL, const cast_k256 *c, __m256i b,
                                                __m256i *code, __m256i *fl)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i abs = _mm256_and_si256(b, c->absm), t = _mm256_sub_epi64(abs, c->minn);
    __m256i ok = _mm256_or_si256(_mm256_andnot_si256(_mm256_cmpgt_epi64(zero, t), _mm256_cmpgt_epi64(c->span, t)),
                                 _mm256_cmpeq_epi64(abs, zero)); /* normal or zero */
    __m256i em = _mm256_max_epi32(_mm256_srli_epi64(abs, 52), c->ebmin);
    __m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(c->c2046m, em), 52));
    __m256d z = _mm256_mul_pd(_mm256_castsi256_pd(_mm256_and_si256(b, ok)), scale);
    __m256d r = round256(MODE, z);
    __m256i ix = _mm256_castpd_si256(_mm256_cmp_pd(r, z, _CMP_NEQ_OQ));
    __m256i k = _mm256_sub_epi64(
        _mm256_castpd_si256(_mm256_add_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), r), _mm256_castsi256_pd(c->two52))),
        c->two52);
    __m256i mag = _mm256_add_epi64(_mm256_sll_epi64(_mm256_sub_epi64(em, c->ebmin), c->Mc), k);
    __m256i sg = _mm256_cmpgt_epi64(zero, b), ovf, bad = _mm256_xor_si256(ok, _mm256_cmpeq_epi64(ok, ok));
    __m256i below = _mm256_cmpgt_epi64(c->pmin, abs);
    if (MODE == SFP8_ROUND_TO_ODD) mag = _mm256_or_si256(mag, _mm256_srli_epi64(ix, 63));
    if (!c->negzero) sg = _mm256_andnot_si256(_mm256_cmpeq_epi64(mag, zero), sg);
    ovf = _mm256_cmpgt_epi64(mag, c->maxmag);
    *code = _mm256_or_si256(mag, _mm256_and_si256(sg, c->signbit));
    if (FULL) {
        __m256i tiny = _mm256_cmpgt_epi64(c->top, mag);
        __m256i edge = _mm256_and_si256(_mm256_and_si256(ix, _mm256_cmpeq_epi64(mag, c->top)), below);
        if (TB) tiny = _mm256_or_si256(tiny, edge);
        else bad = _mm256_or_si256(bad, edge);
        *code = _mm256_blendv_epi8(*code, _mm256_blendv_epi8(c->ovf0, c->ovf1, sg), ovf);
        *fl = _mm256_and_si256(ix, _mm256_blendv_epi8(c->fix, c->fuf, tiny));
        *fl = _mm256_blendv_epi8(*fl, _mm256_blendv_epi8(c->fo0, c->fo1, sg), ovf);
    } else {
        bad = _mm256_or_si256(_mm256_or_si256(bad, below), ovf);
        if (c->unsig) bad = _mm256_or_si256(bad, sg);
        *fl = _mm256_and_si256(ix, c->fix);
    }
    *fl = _mm256_andnot_si256(bad, *fl);
    return bad;
}

/* ------------------------------------------------------------------------ */
/* Lane helpers                                                              */
/* ------------------------------------------------------------------------ */

/* One 256-entry byte table in four registers. */
typedef struct {
    __m512i q[4];
} tab256;

SFP8_AVX512 static inline void load_tab(tab256 *t, const uint8_t *p)
{
    for (int k = 0; k < 4; k++) t->q[k] = _mm512_loadu_si512((const void *)(p + 64 * k));
}

SFP8_AVX512 static inline __m512i lookup(const tab256 *t, __m512i x, __mmask64 hi)
{
    __m512i lo = _mm512_permutex2var_epi8(t->q[0], x, t->q[1]);
    __m512i up = _mm512_permutex2var_epi8(t->q[2], x, t->q[3]);
    return _mm512_mask_blend_epi8(hi, lo, up);
}

/* the binary64 key of from_float8.c's sfp8f_key64, eight lanes at a time */
SFP8_AVX512 static inline __m256i key64x8(__m512i b)
{
    const __m512i m52 = _mm512_set1_epi64(0xFFFFFFFFFFFFFLL), low46 = _mm512_set1_epi64((1LL << 46) - 1);
    __m512i e = _mm512_and_si512(_mm512_srli_epi64(b, 52), _mm512_set1_epi64(0x7ff));
    __m512i m = _mm512_and_si512(b, m52);
    __m512i s15 = _mm512_slli_epi64(_mm512_srli_epi64(b, 63), 15);
    __m512i m6 = _mm512_slli_epi64(_mm512_srli_epi64(m, 46), 1);
    __mmask8 st = _mm512_test_epi64_mask(m, low46);
    __m512i e32 = _mm512_and_si512(_mm512_sub_epi64(e, _mm512_set1_epi64(896)), _mm512_set1_epi64(0xff));
    __m512i k;
    __mmask8 isnan = _mm512_cmpeq_epi64_mask(e, _mm512_set1_epi64(0x7ff));
    __mmask8 iszero = _mm512_cmpeq_epi64_mask(e, _mm512_setzero_si512());
    __mmask8 huge = _mm512_cmpgt_epi64_mask(e, _mm512_set1_epi64(1150)) & ~isnan;
    __mmask8 tiny = _mm512_cmplt_epi64_mask(e, _mm512_set1_epi64(897)) & ~iszero;
    e32 = _mm512_mask_mov_epi64(e32, isnan, _mm512_set1_epi64(255));
    k = _mm512_or_si512(_mm512_or_si512(s15, _mm512_slli_epi64(e32, 7)), m6);
    k = _mm512_mask_or_epi64(k, st, k, _mm512_set1_epi64(1));
    k = _mm512_mask_mov_epi64(k, iszero,
                              _mm512_mask_or_epi64(s15, _mm512_test_epi64_mask(m, m52), s15, _mm512_set1_epi64(1)));
    k = _mm512_mask_mov_epi64(k, huge, _mm512_or_si512(s15, _mm512_set1_epi64(254 << 7 | 63 << 1 | 1)));
    k = _mm512_mask_mov_epi64(k, tiny, _mm512_or_si512(s15, _mm512_set1_epi64(1 << 7 | 1)));
    return _mm512_cvtepi64_epi32(k);
}

/* key64x8 through a conversion to binary32 toward zero, which keeps sign,
 * exponent and the 23 leading significand bits of lanes in binary32's normal
 * range (and of zeros and infinities), and gives the largest finite binary32
 * (the "huge" key: its low bits are ones) beyond it: the key is then that
 * binary32's key (sfp8f_key32) with the sticky bit taken from all 46 low
 * binary64 bits.  Blocks with a lane that converts to a NaN, a subnormal or a
 * zero (other than from a zero) take key64x8. */
SFP8_AVX512 static inline __m512i key64x16f(__m512i b0, __m512i b1)
{
    const int rz = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvt_roundpd_ps(_mm512_castsi512_pd(b0), rz)),
                                  _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(b1), rz), 1);
    const __m512i low46 = _mm512_set1_epi64((1LL << 46) - 1);
    /* not covered: binary32 NaN, subnormal or zero results, except from zeros */
    __mmask16 z = _mm512_kunpackb(_mm512_fpclass_pd_mask(_mm512_castsi512_pd(b1), 0x06),
                                  _mm512_fpclass_pd_mask(_mm512_castsi512_pd(b0), 0x06));
    __mmask16 bad = _mm512_fpclass_ps_mask(f, 0xA7) & (__mmask16)~z, st;
    __m512i fi = _mm512_castps_si512(f), k;
    if (bad)
        return _mm512_inserti64x4(_mm512_castsi256_si512(key64x8(b0)), key64x8(b1), 1);
    k = _mm512_and_si512(_mm512_srli_epi32(fi, 16), _mm512_set1_epi32(0xfffe));
    /* sticky: the binary64 significand bits below the six leading ones (and the
       ones of the largest binary32, so beyond its range the key is key64x8's) */
    st = _mm512_kunpackb(_mm512_test_epi64_mask(b1, low46), _mm512_test_epi64_mask(b0, low46)) |
         _mm512_test_epi32_mask(fi, _mm512_set1_epi32(0x1ffff));
    return _mm512_mask_or_epi32(k, st, k, _mm512_set1_epi32(1));
}

/* store sixteen codes and their flags (flo may be NULL); *facc |= the flags */
SFP8_AVX512 static inline void store16(uint8_t *o, uint8_t *flo, __m128i code, __m128i fl, __m128i *facc)
{
    _mm_storeu_si128((__m128i *)o, code);
    if (flo) _mm_storeu_si128((__m128i *)flo, fl);
    *facc = _mm_or_si128(*facc, fl);
}

/* the OR of sixteen bytes */
SFP8_AVX512 static inline unsigned or16(__m128i x)
{
    uint8_t bs[16];
    unsigned f = 0;
    _mm_storeu_si128((__m128i *)bs, x);
    for (int k = 0; k < 16; k++) f |= bs[k];
    return f;
}

/* ---- AVX2 ---- */

SFP8_AVX2 static inline AINL __m256i nz256(__m256i x, __m256i m) /* all ones where x & m != 0 */
{
    return _mm256_xor_si256(_mm256_cmpeq_epi64(_mm256_and_si256(x, m), _mm256_setzero_si256()),
                            _mm256_set1_epi64x(-1));
}

/* The lane order L of the 8-bit AVX2 kernels (fma8, sr_from_float8, sr_arith8):
 * eight 32-bit lanes holding a block's elements in the order L = (0, 1, 4, 5, 2,
 * 3, 6, 7), the order in which two four-lane 64-bit vectors interleave (binary64
 * inputs, two steps of the generator); the byte pack restores 0..7. */

/* the low dwords of the 64-bit lanes of a (elements 0..3) and b (4..7), in the order L */
SFP8_AVX2 static inline AINL __m256i lo32L(__m256i a, __m256i b)
{
    return _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(2, 0, 2, 0)));
}

/* the random bits of the next eight elements, in the order L */
SFP8_AVX2 static inline AINL __m256i rng8L(rng4 *g)
{
    __m256i r0 = rng4_next(g);
    return lo32L(r0, rng4_next(g));
}

/* bytes 0..3 of each 128-bit half of s (lanes L) -> codes 0..7 in bytes 0..7, bytes 4..7 -> flags in 8..15 */
SFP8_AVX2 static inline AINL __m128i unpackL(__m256i s)
{
    return _mm_unpacklo_epi16(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

/* codes and flags to out, flo (or NULL) from the packed bytes of unpackL */
SFP8_AVX2 static inline AINL void store8(uint8_t *out, uint8_t *flo, __m128i cf)
{
    _mm_storel_epi64((__m128i *)out, cf);
    if (flo) _mm_storel_epi64((__m128i *)flo, _mm_unpackhi_epi64(cf, cf));
}

/* the OR of byte 1 of eight dwords */
SFP8_AVX2 static inline unsigned or_byte1(__m256i x)
{
    uint32_t w[8];
    unsigned f = 0;
    _mm256_storeu_si256((__m256i *)w, x);
    for (int k = 0; k < 8; k++) f |= (w[k] >> 8) & 0xff;
    return f;
}

/* the lanes' mask (bit k: lane k, order L) in element order: L swaps 2 <-> 4 and 3 <-> 5 */
static inline unsigned maskL(unsigned m)
{
    return (m & 0xc3u) | (m & 0x0cu) << 2 | (m & 0x30u) >> 2;
}

/* from_float8.c's sfp8f_key64 of eight binary64 (elements 0..3 in b0, 4..7 in b1), order L */
SFP8_AVX2 static inline AINL __m256i key64_256(__m256i b0, __m256i b1)
{
    const __m256i one = _mm256_set1_epi32(1), zero = _mm256_setzero_si256();
    __m256i hi = _mm256_castps_si256(
        _mm256_shuffle_ps(_mm256_castsi256_ps(b0), _mm256_castsi256_ps(b1), _MM_SHUFFLE(3, 1, 3, 1)));
    __m256i lo = lo32L(b0, b1);
    __m256i e = _mm256_and_si256(_mm256_srli_epi32(hi, 20), _mm256_set1_epi32(0x7ff));
    __m256i s15 = _mm256_and_si256(_mm256_srli_epi32(hi, 16), _mm256_set1_epi32(0x8000));
    __m256i st = _mm256_andnot_si256(
        _mm256_cmpeq_epi32(_mm256_or_si256(_mm256_and_si256(hi, _mm256_set1_epi32(0x3fff)), lo), zero), one);
    __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(897), e),
                                  _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1150)));
    __m256i key = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(_mm256_sub_epi32(_mm256_srli_epi32(hi, 13), _mm256_set1_epi32(896 << 7)),
                                         _mm256_set1_epi32(0x7ffe)),
                        s15),
        st);
    if (_mm256_movemask_ps(_mm256_castsi256_ps(bad))) { /* zeros, subnormals, tiny, huge, infinities, NaNs */
        __m256i mnz = _mm256_andnot_si256(
            _mm256_cmpeq_epi32(_mm256_or_si256(_mm256_and_si256(hi, _mm256_set1_epi32(0xfffff)), lo), zero), one);
        __m256i kn = _mm256_or_si256(_mm256_or_si256(s15, _mm256_set1_epi32(0x7f80)),
                                     _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(hi, 13), _mm256_set1_epi32(0x7e)), st));
        key = _mm256_blendv_epi8(key, _mm256_or_si256(s15, _mm256_set1_epi32(0x81)),
                                 _mm256_cmpgt_epi32(_mm256_set1_epi32(897), e));
        key = _mm256_blendv_epi8(key, _mm256_or_si256(s15, _mm256_set1_epi32(0x7f7f)),
                                 _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1150)));
        key = _mm256_blendv_epi8(key, _mm256_or_si256(s15, mnz), _mm256_cmpeq_epi32(e, zero));
        key = _mm256_blendv_epi8(key, kn, _mm256_cmpeq_epi32(e, _mm256_set1_epi32(0x7ff)));
    }
    return key;
}

/* the low 16 bits of four vectors of four 64-bit lanes, in order */
SFP8_AVX2 static inline AINL __m256i pack16x16(const __m256i v[4])
{
    const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m256i lo = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(v[0], idx),
                                           _mm256_permutevar8x32_epi32(v[1], idx), 0x20);
    __m256i hi = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(v[2], idx),
                                           _mm256_permutevar8x32_epi32(v[3], idx), 0x20);
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
}

/* stores sixteen codes and (flo) flags from four vectors of four 64-bit lanes
   each; ORs the flags into *facc */
SFP8_AVX2 static inline AINL void store16x4(const __m256i code[4], const __m256i fl[4], uint16_t *out, uint8_t *flo,
                                         __m256i *facc)
{
    __m256i w = pack16x16(fl);
    _mm256_storeu_si256((__m256i *)(void *)out, pack16x16(code));
    if (flo) {
        __m256i q8 = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
        _mm_storeu_si128((__m128i *)(void *)flo, _mm256_castsi256_si128(q8));
    }
    *facc = _mm256_or_si256(*facc, w);
}

/* the OR of sixteen 16-bit lanes */
SFP8_AVX2 static inline AINL unsigned or16x16(__m256i v)
{
    uint16_t f[16];
    unsigned r = 0;
    _mm256_storeu_si256((__m256i *)(void *)f, v);
    for (int q = 0; q < 16; q++) r |= f[q];
    return r;
}

#endif /* SFP8_X86 */
#endif
