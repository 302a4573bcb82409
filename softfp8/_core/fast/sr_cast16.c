/* sr_cast16: binary32 / binary64 -> 9..16-bit formats under stochastic
 * rounding (generated random bits), by integer arithmetic on the input's bits.
 *
 *      DERIVED from core.c round_pack's stochastic branch (as sr_from_float8.c
 *      for 8-bit formats): for a binary32 / binary64 x of
 *      exponent e >= emin whose result does not overflow, the result is the
 *      truncated magnitude ((e - emin + 1) << M) + (mantissa >> sh) plus one
 *      if t + R >= 2^N, t = floor(fraction * 2^N) of the sh discarded bits and
 *      R the element's counter-based random bits (rng.h: the core's generator,
 *      keyed on seed, stream and element index); inexact iff the fraction is
 *      not zero (a normal result is never tiny).  Everything else (zeros,
 *      NaN, infinity, e < emin, overflow, negative values of unsigned formats)
 *      takes the core with the same random bits.
 *
 *      The SIMD kernels compute the same in integer lanes: with
 *      q = |bits| >> sh (the exponent field and the top M mantissa bits),
 *      the truncated magnitude is q - ((bias + emin - 1) << M), e >= emin and
 *      "finite" are qlo <= q < qhi (the bounds shifted alike: exact, as they
 *      have no bits below 2^sh), and t + R >= 2^N is R > (2^N - 1) - t
 *      (no carry out of 32 bits).  The random words come from simd.h's generator,
 *      lane j of a call the word of element index0 + j; uncovered lanes take
 *      the core with that word.  Levels: AVX-512 (sixteen 32-bit lanes),
 *      AVX2 (four 64-bit lanes at a time, sixteen a block), portable C (the
 *      element loop sr_scalar).  Strided inputs are gathered block by block
 *      (the element index follows the logical position); calls whose output
 *      overlaps the input run element by element, in order.
 *
 *      Proven equal to the core by tests/harness/test_harness.py::test_entry [sr_cast16]
 *      and tests/harness/test_harness.py::test_entry [sr_cast16]. */
#include <string.h>

#include "cast16.h"
#include "fast_impl.h"
#include "rng.h"
#include "simd.h"

#include "softfp8/softfp8.h"

static int cast16_sr_params(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, int level,
                            sfp8f_c16 *p)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || dst->bits <= 8 || dst->bits > 16 ||
        !((src->bits == 32 && src->man_bits == 23) || (src->bits == 64 && src->man_bits == 52)) ||
        dst->specials == SFP8_SPECIALS_FNUZ || dst->specials == SFP8_SPECIALS_P3109 || dst->man_bits < 1 ||
        dst->man_bits > 15 || dst->exp_bits < 2 ||
        (dst->subnormals != SFP8_SUBNORMALS_IEEE && dst->subnormals != SFP8_SUBNORMALS_TESLA &&
         dst->subnormals != SFP8_SUBNORMALS_FLUSH))
        return 0;
    memset(p, 0, sizeof *p);
    p->src = src;
    p->dst = dst;
    p->env = env;
    p->r.M = dst->man_bits;
    p->r.emin = 1 - dst->bias;
    p->r.maxmag = sfp8_max_code(dst);
    p->r.signbit = dst->is_signed ? (uint32_t)1 << (dst->bits - 1) : 0;
    p->unsig = !dst->is_signed;
    /* the lane arithmetic stays within 32 bits */
    p->simd = level >= 1 && p->r.emin >= -300 && p->r.emin <= 300;
    return 1;
}

const void *sfp8f_sr_cast16_prepare(const sfp8f_call *c, void *scratch)
{
    sfp8f_c16 *p = scratch;
    _Static_assert(sizeof(sfp8f_c16) <= SFP8F_SCRATCH, "cast16 parameters fit the scratch");
    if ((c->f->bits != 32 && c->f->bits != 64) || c->dst->bits <= 8) return NULL;
    return cast16_sr_params(c->f, c->dst, c->env, c->level, p) ? p : NULL;
}

struct srctx;
/* the SIMD kernel of one level on contiguous in / out (whole blocks of sixteen):
   the count done; codes, flags to flo (or NULL); *acc |= the flags */
typedef ptrdiff_t (*sr16c_kernel)(const struct srctx *c, uint64_t index0, const char *in, uint16_t *out,
                                  uint8_t *flo, ptrdiff_t n, unsigned *acc);

/* one stochastic cast call: the rule's constants and the generator's keys */
typedef struct srctx {
    const sfp8f_c16 *p;
    uint64_t hs, base;    /* sfp8r_seed_key(seed), sfp8r_stream_key(stream) */
    int N, sh, isize;     /* sr_bits, discarded bits, input size */
    int tl, tr;           /* t = (discarded bits << tl) >> tr: N bits */
    uint32_t Rmask;       /* 2^N - 1 */
    int32_t off;          /* (bias + emin - 1) << M: q - off is the truncated magnitude */
    uint32_t qlo, qhi;    /* covered: qlo <= q < qhi */
    uint64_t index0;      /* the index of the call's first element */
    sr16c_kernel kernel;  /* the SIMD kernel (NULL: sr_scalar) */
} srctx;

static void sr_init(srctx *c, const sfp8f_c16 *p, uint64_t seed, uint64_t stream, uint64_t index0, int isize,
                    sr16c_kernel kernel)
{
    const int ebias = isize == 4 ? 127 : 1023, emaxf = isize == 4 ? 255 : 2047;
    int L = p->r.emin + ebias; /* the smallest covered exponent field */
    c->p = p;
    c->index0 = index0;
    c->kernel = p->simd ? kernel : NULL;
    c->hs = sfp8r_seed_key(seed);
    c->base = sfp8r_stream_key(stream);
    c->N = p->env->sr_bits >= 1 && p->env->sr_bits <= 32 ? p->env->sr_bits : 32;
    c->isize = isize;
    c->sh = (isize == 4 ? 23 : 52) - p->r.M;
    c->tl = c->N >= c->sh ? c->N - c->sh : 0;
    c->tr = c->N >= c->sh ? 0 : c->sh - c->N;
    c->Rmask = c->N == 32 ? 0xffffffffu : ((1u << c->N) - 1);
    c->off = (int32_t)((ebias + p->r.emin - 1) * (1 << p->r.M));
    if (L < 1) L = 1;
    if (L > emaxf) L = emaxf;
    c->qlo = (uint32_t)L << p->r.M;
    c->qhi = (uint32_t)emaxf << p->r.M;
}

/* the core, with the element's random word */
static inline uint16_t sr_core(const srctx *c, uint64_t bits, uint32_t R, unsigned *fl)
{
    sfp8_env e2 = *c->p->env;
    uint8_t f8 = 0;
    uint16_t v;
    e2.random = R;
    v = (uint16_t)sfp8_convert(c->p->src, c->p->dst, bits, &e2, &f8);
    *fl = f8;
    return v;
}

/* portable C, element by element in order (any overlap); element i has index index0 + i */
static unsigned sr_scalar(const srctx *c, uint64_t index0, const char *a, ptrdiff_t sa, char *o, ptrdiff_t so,
                          ptrdiff_t n, uint8_t *flout)
{
    const sfp8f_c16 *p = c->p;
    const int isize = c->isize, N = c->N, M = p->r.M, emin = p->r.emin, sh = c->sh;
    const int ebias = isize == 4 ? 127 : 1023, emaxf = isize == 4 ? 255 : 2047;
    const uint64_t manmask = isize == 4 ? 0x7fffffULL : 0xFFFFFFFFFFFFFULL;
    unsigned acc = 0;
    for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
        const uint32_t R = sfp8r_bits(c->hs, c->base, index0 + (uint64_t)i);
        const uint64_t b = sfp8f_ld(a, isize);
        const int s = (int)(b >> (8 * isize - 1));
        const int E = (int)((b >> (isize == 4 ? 23 : 52)) & (uint64_t)emaxf);
        uint16_t v;
        unsigned fl;
        if (E != 0 && E != emaxf && E - ebias >= emin && !(s && p->unsig)) {
            const uint64_t mant = b & manmask, rem = mant & ((1ULL << sh) - 1);
            const uint64_t t = N >= sh ? rem << (N - sh) : rem >> (sh - N);
            const uint64_t code = ((uint64_t)(E - ebias - emin + 1) << M) + (mant >> sh) +
                                  (uint64_t)(t + (R & c->Rmask) >= (1ULL << N));
            if (code <= p->r.maxmag) {
                v = (uint16_t)(code | (s ? p->r.signbit : 0));
                fl = rem ? SFP8_FLAG_INEXACT : 0;
                goto store;
            }
        }
        v = sr_core(c, b, R, &fl);
    store:
        memcpy(o, &v, 2);
        acc |= fl;
        if (flout) flout[i] = (uint8_t)fl;
    }
    return acc;
}

static unsigned sr_block(const void *ctx, ptrdiff_t i0, const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t m)
{
    const srctx *c = ctx;
    const uint64_t index = c->index0 + (uint64_t)i0;
    unsigned acc = 0;
    ptrdiff_t j = c->kernel(c, index, in, out, flo, m, &acc);
    return acc | sr_scalar(c, index + (uint64_t)j, in + j * c->isize, c->isize, (char *)(out + j), 2, m - j,
                           flo ? flo + j : NULL);
}

static inline AINL unsigned cast16_sr_run(const sfp8f_c16 *p, const sfp8f_call *call, sr16c_kernel kernel)
{
    const uint64_t index0 = call->index0;
    const char *a = call->a;
    char *o = call->o;
    const ptrdiff_t sa = call->sa, so = call->so, n = call->n;
    const int isize = call->isize;
    uint8_t *const flout = call->flout;
    srctx c;
    sr_init(&c, p, call->seed, call->stream, index0, isize, kernel);
    if (!c.kernel || !sfp8f_apart(o, so, 2, a, sa, isize, n)) return sr_scalar(&c, index0, a, sa, o, so, n, flout);
    if (sa == isize && so == 2 && ((uintptr_t)o & 1) == 0) /* contiguous and aligned: one run */
        return sr_block(&c, 0, a, (uint16_t *)(void *)o, flout, n);
    return sfp8f_blocked16(sr_block, &c, 0, a, sa, isize, o, so, n, flout);
}

unsigned sfp8f_sr_cast16_run(const void *t, const sfp8f_call *c) { return cast16_sr_run(t, c, NULL); }

#if SFP8_X86

/* the lanes of mask m (random words R) take the core */
static void sr_fix(const srctx *c, const char *in, uint16_t *out, uint8_t *flo, unsigned m, const uint32_t *R,
                   unsigned *acc)
{
    while (m) {
        int j = __builtin_ctz(m);
        unsigned fl = 0;
        out[j] = sr_core(c, sfp8f_ld(in + (ptrdiff_t)j * c->isize, c->isize), R[j], &fl);
        if (flo) flo[j] = (uint8_t)fl;
        *acc |= fl;
        m &= m - 1;
    }
}

/* the kernel fn instantiated per input size and per-element flags */
#define SR_ALL(fn)                                                                                             \
    if (c->isize == 4)                                                                                         \
        return flo ? fn(4, 1, c, index0, in, out, flo, n, acc) : fn(4, 0, c, index0, in, out, flo, n, acc);   \
    return flo ? fn(8, 1, c, index0, in, out, flo, n, acc) : fn(8, 0, c, index0, in, out, flo, n, acc);

/* ---- AVX2: four 64-bit lanes at a time, sixteen a block ---- */

SFP8_AVX2 static inline AINL ptrdiff_t sr256(int ISZ, int FL, const srctx *c, uint64_t index0, const char *in,
                                          uint16_t *out, uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    const sfp8f_c16 *p = c->p;
    const __m128i shc = _mm_cvtsi32_si128(c->sh);
    const __m128i tl = _mm_cvtsi32_si128(c->tl), tr = _mm_cvtsi32_si128(c->tr);
    const __m256i rmask = _mm256_set1_epi64x(c->Rmask), off = _mm256_set1_epi64x(c->off);
    const __m256i qlo = _mm256_set1_epi64x(c->qlo), qhi1 = _mm256_set1_epi64x((long long)c->qhi - 1);
    const __m256i maxmag = _mm256_set1_epi64x(p->r.maxmag), signbit = _mm256_set1_epi64x(p->r.signbit);
    const __m256i fix = _mm256_set1_epi64x(SFP8_FLAG_INEXACT), zero = _mm256_setzero_si256();
    const __m256i remm = _mm256_set1_epi64x((long long)((1ULL << c->sh) - 1));
    const __m256i absm = _mm256_set1_epi64x(ISZ == 4 ? 0x7fffffffLL : 0x7fffffffffffffffLL);
    const __m256i unsig = p->unsig ? _mm256_set1_epi64x(-1) : zero;
    rng4 g = rng4_init(c->hs, c->base, index0);
    __m256i facc = zero;
    unsigned a = 0;
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i code[4], fl[4], R[4];
        unsigned bad = 0;
        for (int k = 0; k < 4; k++) {
            __m256i b, q, t, rem, s, cd, badv;
            if (ISZ == 4) {
                b = _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(in + 4 * (i + 4 * k))));
                s = _mm256_cmpgt_epi64(b, _mm256_set1_epi64x(0x7fffffffLL));
            } else {
                b = _mm256_loadu_si256((const __m256i *)(const void *)(in + 8 * (i + 4 * k)));
                s = _mm256_cmpgt_epi64(zero, b);
            }
            R[k] = rng4_next(&g);
            rem = _mm256_and_si256(b, remm);
            q = _mm256_srl_epi64(_mm256_and_si256(b, absm), shc);
            t = _mm256_srl_epi64(_mm256_sll_epi64(rem, tl), tr);
            /* t + R >= 2^N; then up is -1 */
            cd = _mm256_sub_epi64(
                _mm256_sub_epi64(q, off),
                _mm256_cmpgt_epi64(_mm256_and_si256(R[k], rmask), _mm256_sub_epi64(rmask, t)));
            badv = _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi64(qlo, q), _mm256_cmpgt_epi64(q, qhi1)),
                                   _mm256_or_si256(_mm256_cmpgt_epi64(cd, maxmag), _mm256_and_si256(s, unsig)));
            code[k] = _mm256_or_si256(cd, _mm256_and_si256(s, signbit));
            fl[k] = _mm256_andnot_si256(_mm256_or_si256(badv, _mm256_cmpeq_epi64(rem, zero)), fix);
            bad |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(badv)) << (4 * k);
        }
        store16x4(code, fl, out + i, FL ? flo + i : NULL, &facc);
        if (bad) {
            uint64_t r64[16];
            uint32_t rw[16];
            for (int k = 0; k < 4; k++) _mm256_storeu_si256((__m256i *)(void *)(r64 + 4 * k), R[k]);
            for (int k = 0; k < 16; k++) rw[k] = (uint32_t)r64[k];
            sr_fix(c, in + ISZ * i, out + i, FL ? flo + i : NULL, bad, rw, &a);
        }
    }
    *acc |= a | or16x16(facc);
    return i;
}

SFP8_AVX2 static ptrdiff_t kernel_avx2(const srctx *c, uint64_t index0, const char *in, uint16_t *out, uint8_t *flo,
                                     ptrdiff_t n, unsigned *acc)
{
    SR_ALL(sr256)
}

unsigned sfp8f_sr_cast16_run_avx2(const void *t, const sfp8f_call *c) { return cast16_sr_run(t, c, kernel_avx2); }

/* ---- AVX-512: sixteen 32-bit lanes a block ---- */

SFP8_AVX512 static inline AINL ptrdiff_t sr512(int ISZ, int FL, const srctx *c, uint64_t index0, const char *in,
                                          uint16_t *out, uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    const sfp8f_c16 *p = c->p;
    /* binary32: q = |b| >> sh, t = (b << (32 - sh)) >> (32 - N); binary64: w = |b| >> (sh - 32)
       holds q in its high half and the top 32 discarded bits in its low half */
    const __m128i shc = _mm_cvtsi32_si128(ISZ == 4 ? c->sh : c->sh - 32);
    const __m128i dsh = _mm_cvtsi32_si128(32 - c->sh), nsh = _mm_cvtsi32_si128(32 - c->N);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i rmask = _mm512_set1_epi32((int)c->Rmask), off = _mm512_set1_epi32(c->off);
    const __m512i qlo = _mm512_set1_epi32((int)c->qlo), qhi = _mm512_set1_epi32((int)c->qhi);
    const __m512i maxmag = _mm512_set1_epi32((int)p->r.maxmag), signbit = _mm512_set1_epi32((int)p->r.signbit);
    const __m512i one = _mm512_set1_epi32(1), fix = _mm512_set1_epi32(SFP8_FLAG_INEXACT);
    const __m512i remm = ISZ == 4 ? _mm512_set1_epi32((int)((1u << c->sh) - 1))
                                  : _mm512_set1_epi64((long long)((1ULL << c->sh) - 1));
    const __m512i absm = ISZ == 4 ? _mm512_set1_epi32(0x7fffffff) : _mm512_set1_epi64(0x7fffffffffffffffLL);
    const unsigned unsig = p->unsig ? 0xffffu : 0;
    rng16 g = rng16_init(c->hs, c->base, index0);
    __m512i facc = _mm512_setzero_si512();
    unsigned a = 0;
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i R = rng16_next(&g);
        __m512i q, t, code, fl;
        unsigned ix, s, up, bad;
        if (ISZ == 4) {
            const __m512i b = _mm512_loadu_si512((const void *)(in + 4 * i));
            q = _mm512_srl_epi32(_mm512_and_si512(b, absm), shc);
            t = _mm512_srl_epi32(_mm512_sll_epi32(b, dsh), nsh);
            ix = _mm512_test_epi32_mask(b, remm);
            s = _mm512_movepi32_mask(b);
        } else {
            /* sh >= 37: q has at most 26 bits, t is the top N of the sh discarded bits */
            const __m512i b0 = _mm512_loadu_si512((const void *)(in + 8 * i));
            const __m512i b1 = _mm512_loadu_si512((const void *)(in + 8 * i + 64));
            __m512i w0, w1;
            _mm_prefetch(in + 8 * i + 4096, _MM_HINT_T0);
            _mm_prefetch(in + 8 * i + 4096 + 64, _MM_HINT_T0);
            w0 = _mm512_srl_epi64(_mm512_and_si512(b0, absm), shc);
            w1 = _mm512_srl_epi64(_mm512_and_si512(b1, absm), shc);
            q = _mm512_permutex2var_epi32(w0, odd, w1);
            t = _mm512_srl_epi32(_mm512_permutex2var_epi32(w0, even, w1), nsh);
            ix = _mm512_test_epi64_mask(b0, remm) | (unsigned)_mm512_test_epi64_mask(b1, remm) << 8;
            s = _mm512_movepi64_mask(b0) | (unsigned)_mm512_movepi64_mask(b1) << 8;
        }
        up = _mm512_cmpgt_epu32_mask(_mm512_and_si512(R, rmask), _mm512_sub_epi32(rmask, t));
        code = _mm512_sub_epi32(q, off);
        code = _mm512_mask_add_epi32(code, (__mmask16)up, code, one);
        bad = _mm512_cmplt_epu32_mask(q, qlo) | _mm512_cmpge_epu32_mask(q, qhi) |
              _mm512_cmpgt_epi32_mask(code, maxmag) | (s & unsig);
        code = _mm512_mask_or_epi32(code, (__mmask16)s, code, signbit);
        fl = _mm512_maskz_mov_epi32((__mmask16)(ix & ~bad), fix);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm512_cvtepi32_epi16(code));
        if (FL) _mm_storeu_si128((__m128i *)(void *)(flo + i), _mm512_cvtepi32_epi8(fl));
        facc = _mm512_or_si512(facc, fl);
        if (bad) {
            uint32_t rw[16];
            _mm512_storeu_si512((void *)rw, R);
            sr_fix(c, in + ISZ * i, out + i, FL ? flo + i : NULL, bad, rw, &a);
        }
    }
    *acc |= a | (unsigned)_mm512_reduce_or_epi32(facc);
    return i;
}

SFP8_AVX512 static ptrdiff_t kernel_avx512(const srctx *c, uint64_t index0, const char *in, uint16_t *out, uint8_t *flo,
                                     ptrdiff_t n, unsigned *acc)
{
    SR_ALL(sr512)
}

unsigned sfp8f_sr_cast16_run_avx512(const void *t, const sfp8f_call *c) { return cast16_sr_run(t, c, kernel_avx512); }
#endif
