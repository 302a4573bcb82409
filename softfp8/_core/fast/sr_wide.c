/* sr_wide: conversions into formats of 9..16 bits (from formats of <= 16 bits)
 * and unary operations of those formats under stochastic rounding (generated
 * random bits): a table of one entry per source code, the core's results for
 * the lowest and the highest random word and ts found by sfp8f_sr_search_ts;
 * the element is ra iff (R mod 2^N) > 2^N - 1 - (ts >> (32 - N)).  Entries the
 * rule does not state (a non-finite neighbour, the tininess-after window below
 * 2^emin, ra not within one code of rz, a failed check) take the core.
 *
 * DERIVED from core.c round_pack through the core itself (every entry is two
 * core results and a threshold checked against the core); proven equal by
 * tests/harness/test_harness.py::test_entry [sr_wide].
 *
 * Kernels: portable C (element by element in order: any overlap); AVX2 (eight
 * lanes) and AVX-512 (sixteen lanes), one 64-bit gather of the entry per lane,
 * in blocks of SR_BLK contiguous codes (wide_sr_run). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "simd.h"
#include "sr.h"

typedef struct sfp8f_srw {
    /* ts | rz << 32 | d << 48 | rz flags << 50 | ra flags << 57 (7 bits each), ra = rz + d - 1
       (mod 2^16); SRW_FCORE in the flags chosen: the core */
    uint64_t e[65536];
} sfp8f_srw;
enum { SRW_FCORE = 0x40 }; /* no flag of softfp8.h uses it */

#define SRW_CORE ((uint64_t)SRW_FCORE << 50 | (uint64_t)SRW_FCORE << 57)

/* the packed entry (fast.h): ra - rz in {-1, 0, 1} (else the core) */
static uint64_t srw_entry(uint32_t ts, uint32_t r0, unsigned f0, uint32_t r1, unsigned f1)
{
    const uint32_t d = (r1 - r0 + 1) & 0xffff;
    if (d > 2 || ((f0 | f1) & ~0x3fu)) return SRW_CORE;
    return ts | (uint64_t)r0 << 32 | (uint64_t)d << 48 | (uint64_t)f0 << 50 | (uint64_t)f1 << 57;
}

static void *build_srw(const sfp8f_key *k, size_t *bytes)
{
    const sfp8_format *f = k->kind == T_SRWC ? &k->b : &k->a; /* the results' format */
    const uint32_t nsrc = (uint32_t)1 << k->a.bits;
    sfp8_env env;
    double minnorm;
    uint8_t fl = 0;
    sfp8f_srw *t = malloc(sizeof *t);
    if (!t) return NULL;
    sfp8f_key_env(k, &env); /* stochastic, sr_bits 32 */
    {
        uint64_t b = sfp8_convert(f, &sfp8_binary64, (uint32_t)1 << f->man_bits, &sfp8f_free_env, &fl);
        memcpy(&minnorm, &b, 8);
    }
    for (uint32_t p = 0; p < 65536; p++) {
        uint8_t f0 = 0, f1 = 0;
        uint32_t r0, r1, ts;
        t->e[p] = SRW_CORE;
        if (p >= nsrc) continue;
        r0 = sfp8f_sr_core(k, &env, p >> 8, p & 0xff, 0, &f0);
        r1 = sfp8f_sr_core(k, &env, p >> 8, p & 0xff, 0xffffffffu, &f1);
        if (r0 == r1 && f0 == f1) {
            t->e[p] = srw_entry(0, r0, f0, r1, f1); /* the same for every R */
        } else if (r0 != r1 && sfp8_classify(f, r0) < SFP8_CLASS_INF && sfp8_classify(f, r1) < SFP8_CLASS_INF) {
            uint64_t b = sfp8_convert(f, &sfp8_binary64, r1, &sfp8f_free_env, &fl);
            double v1;
            memcpy(&v1, &b, 8);
            if (!env.tininess_before && fabs(v1) == minnorm) continue; /* flags of the unbounded grid */
            if (sfp8f_sr_search_ts(k, &env, p, r0, f0, r1, f1, &ts)) t->e[p] = srw_entry(ts, r0, f0, r1, f1);
        }
    }
    *bytes = sizeof *t;
    return t;
}

static int srw_format_ok(const sfp8_format *f)
{
    return f->bits > 8 && f->bits <= 16 && f->subnormals != SFP8_SUBNORMALS_TESLA;
}

/* a table of up to 65536 entries, about 34 core calls each: measured (AMD
   EPYC, AVX-512) 9 ms (bfloat16 -> float16) to 134 ms (float16 tanh), the
   time of 0.45M..1.5M elements through the core (19..90 ns each) while the
   table's run takes 0.7 ns (AVX-512) .. 7.5 ns (portable): built for calls of
   1.5M+ elements (sfp8f_cached: n >= SRW_COST / 16), which repay it in that
   one call (or for repeated calls, the table staying cached) */
enum { SRW_COST = 24 << 20 };

static const sfp8f_srw *stochastic_wide(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                      ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || src->bits > 16 || !srw_format_ok(dst))
        return NULL;
    return sfp8f_cached(T_SRWC, 0, src, dst, env, build_srw, n, SRW_COST);
}

static const sfp8f_srw *stochastic_wide_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || !srw_format_ok(f) ||
        sfp8x_ops[op].kind != K_UNARY)
        return NULL;
    return sfp8f_cached(T_SRWU, op, f, NULL, env, build_srw, n, SRW_COST);
}

const void *sfp8f_sr_wide_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (c->kind == SFP8F_CONVERT) return c->f->bits <= 16 ? stochastic_wide(c->f, c->dst, c->env, c->n) : NULL;
    if (!X_IS_UNARY(c->op) || c->f->bits <= 8) return NULL;
    return stochastic_wide_unary(c->op, c->f, c->env, c->n);
}

/* the core's code and flags of source code c with the random word R (op -1: the conversion) */
static inline uint32_t srw_core(int op, const sfp8_format *src, const sfp8_format *dst, sfp8_env *e, uint32_t c,
                                uint32_t R, uint8_t *fl)
{
    *fl = 0;
    e->random = R;
    return op < 0 ? sfp8_convert(src, dst, c, e, fl) : sfp8x_apply(op, dst, c, 0, 0, e, fl);
}

/* the SIMD kernels' parameters: n contiguous source codes of isize 1 or 2 bytes
   (masked by smask), n a multiple of the kernel's lanes: two-byte codes to out
   (possibly unaligned), flags to fl[i], 0x80 for the lanes the caller finishes
   with the core (their codes are not written); the random bits of element i are
   sfp8r_bits(seed_key, stream_key, index0 + i).  Returns the OR of all fl[i]. */
typedef struct sfp8s_srw {
    const uint64_t *e;       /* sfp8f_srw: ts | rz << 32 | d << 48 | rz flags << 50 | ra flags << 57 */
    uint64_t seed_key, stream_key, index0;
    int N, isize;
    uint32_t smask;
} sfp8s_srw;

typedef unsigned (*srw_block)(const sfp8s_srw *p, const void *in, void *out, uint8_t *fl, ptrdiff_t n);

/* The SIMD kernels (blk lanes a step) take
 * blocks of SR_BLK contiguous codes when the output is apart from the input
 * (fast_impl.h, sfp8f_apart), their lanes for the core finished here from the
 * source codes (in place: the codes through a buffer until then); the rest,
 * and every other layout, the loop element by element in order */
static inline AINL unsigned wide_sr_run(const sfp8f_srw *t, const sfp8f_call *c, srw_block block, int blk)
{
    /* op -1: the conversion c->f -> c->dst; else the unary operation of c->f */
    const int op = c->kind == SFP8F_CONVERT ? -1 : c->op;
    const sfp8_format *src = c->f, *dst = c->kind == SFP8F_CONVERT ? c->dst : c->f;
    const sfp8_env *env = c->env;
    const uint64_t index0 = c->index0;
    const char *a = c->a;
    char *o = c->o;
    const ptrdiff_t sa = c->sa, so = c->so, n = c->n;
    uint8_t *const flout = c->flout;
    const sr_keys k = sr_keys_of(env, c->seed, c->stream);
    const int isz = src->bits <= 8 ? 1 : 2;
    const uint32_t smask = sfp8_code_mask(src);
    sfp8_env e = *env;
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (block && sa == isz && so == 2 && n >= blk && sfp8f_apart(o, 2, 2, a, sa, isz, n)) {
        sfp8s_srw p = {t->e, k.hs, k.base, 0, k.N, isz, smask};
        uint16_t cb[SR_BLK];
        uint8_t fb[SR_BLK];
        const int direct = o != a;
        for (; i + blk <= n; i += SR_BLK) {
            const ptrdiff_t m = n - i < SR_BLK ? (n - i) & ~(ptrdiff_t)(blk - 1) : SR_BLK;
            const char *x = a + i * isz;
            char *oc = direct ? o + 2 * i : (char *)cb;
            uint8_t *of = flout ? flout + i : fb;
            unsigned g;
            p.index0 = index0 + (uint64_t)i;
            g = block(&p, x, oc, of, m);
            if (g & 0x80) { /* lanes for the core */
                g = 0;
                for (ptrdiff_t j = 0; j < m; j++) {
                    if (of[j] & 0x80)
                        sfp8f_st(oc + 2 * j,
                                 srw_core(op, src, dst, &e, (uint32_t)sfp8f_ld(x + j * isz, isz) & smask,
                                          sfp8r_bits(k.hs, k.base, p.index0 + (uint64_t)j), of + j),
                                 2);
                    g |= of[j];
                }
            }
            acc |= g;
            if (!direct) memcpy(o + 2 * i, cb, (size_t)(2 * m));
            if (m < SR_BLK) {
                i += m;
                break;
            }
        }
        a += i * sa;
        o += i * so;
    }
    for (; i < n; i++, a += sa, o += so) { /* element i read before output i is written */
        const uint32_t c = (uint32_t)sfp8f_ld(a, isz) & smask, R = sfp8r_bits(k.hs, k.base, index0 + (uint64_t)i);
        const uint64_t ent = t->e[c];
        const unsigned up = (R & k.Rmask) > k.Rmask - ((uint32_t)ent >> (32 - k.N));
        const uint32_t hi = (uint32_t)(ent >> 32); /* rz | d << 16 | rz flags << 18 | ra flags << 25 */
        uint8_t fl = (uint8_t)((hi >> (up ? 25 : 18)) & 0x7f);
        uint32_t code = (hi + (up ? ((hi >> 16) & 3) - 1 : 0)) & 0xffff;
        if (fl & SRW_FCORE) code = srw_core(op, src, dst, &e, c, R, &fl);
        sfp8f_st(o, code, 2);
        acc |= fl;
        if (flout) flout[i] = fl;
    }
    return acc;
}

unsigned sfp8f_sr_wide_run(const void *t, const sfp8f_call *c) { return wide_sr_run(t, c, NULL, 8); }

#if SFP8_X86

/* ---- stochastic conversions into, and unary operations of, formats of 9..16
 * bits (sfp8s_srw): per lane the
 * source code c (masked) and the entry e[c] gathered, hi = its high half (rz |
 * d << 16 | rz flags << 18 | ra flags << 25), ra = rz + d - 1 iff (R & Rmask) >
 * Rmask - (ts >> (32 - N)).  Lanes whose chosen flags hold 0x40 (SRW_FCORE) leave with 0x80 for the caller. */

/* ---- AVX2: eight lanes ---- */

/* element-order dwords of the low halves of a's four 64-bit lanes, then b's */
SFP8_AVX2 static inline AINL __m256i srw_join(__m256i a, __m256i b)
{
    return _mm256_permutevar8x32_epi32(_mm256_blend_epi32(a, _mm256_slli_epi64(b, 32), 0xaa),
                                       _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
}

/* eight lanes at element i */
SFP8_AVX2 static inline AINL __m128i srw8(const sfp8s_srw *p, __m256i rmask, __m128i sh, __m256i R, const void *in,
                                     int isize, char *out, uint8_t *fl)
{
    const __m256i sign = _mm256_set1_epi32((int)0x80000000u), f7 = _mm256_set1_epi32(0x7f);
    const __m256i lo16 = _mm256_set1_epi32(0xffff), three = _mm256_set1_epi32(3), one = _mm256_set1_epi32(1);
    __m256i c = isize == 1 ? _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)in))
                           : _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)in));
    __m256i e0, e1, ts, hi, fw, lim, up;
    __m128i f8;
    c = _mm256_and_si256(c, _mm256_set1_epi32((int)p->smask));
    e0 = _mm256_i32gather_epi64((const long long *)(const void *)p->e, _mm256_castsi256_si128(c), 8);
    e1 = _mm256_i32gather_epi64((const long long *)(const void *)p->e, _mm256_extracti128_si256(c, 1), 8);
    ts = srw_join(e0, e1);
    hi = srw_join(_mm256_srli_epi64(e0, 32), _mm256_srli_epi64(e1, 32));
    lim = _mm256_sub_epi32(rmask, _mm256_srl_epi32(ts, sh));
    up = _mm256_cmpgt_epi32(_mm256_xor_si256(_mm256_and_si256(R, rmask), sign), _mm256_xor_si256(lim, sign));
    fw = _mm256_and_si256(_mm256_blendv_epi8(_mm256_srli_epi32(hi, 18), _mm256_srli_epi32(hi, 25), up), f7);
    fw = _mm256_add_epi32(fw, _mm256_and_si256(fw, _mm256_set1_epi32(0x40))); /* 0x40 -> 0x80 */
    hi = _mm256_add_epi32(hi, _mm256_and_si256(up, _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(hi, 16), three), one)));
    hi = _mm256_and_si256(hi, lo16);
    _mm_storeu_si128((__m128i *)(void *)out, _mm_packus_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)));
    f8 = _mm_packus_epi32(_mm256_castsi256_si128(fw), _mm256_extracti128_si256(fw, 1));
    f8 = _mm_packus_epi16(f8, f8);
    _mm_storel_epi64((__m128i *)fl, f8);
    return f8;
}

SFP8_AVX2 static inline AINL unsigned srw_run256(const sfp8s_srw *p, const void *in, int isize, void *out, uint8_t *fl,
                                            ptrdiff_t n)
{
    const __m256i rmask = _mm256_set1_epi32((int)(p->N == 32 ? 0xffffffffu : (1u << p->N) - 1));
    rng4 g = rng4_init(p->seed_key, p->stream_key, p->index0);
    uint64_t w = 0; /* the OR of the eight-byte flag groups */
    unsigned f = 0;
    for (ptrdiff_t i = 0; i + 8 <= n; i += 8) {
        __m256i r0 = rng4_next(&g), r1 = rng4_next(&g);
        w |= (uint64_t)_mm_cvtsi128_si64(srw8(p, rmask, _mm_cvtsi32_si128(32 - p->N), srw_join(r0, r1),
                                              (const char *)in + i * isize, isize, (char *)out + 2 * i, fl + i));
    }
    for (int b = 0; b < 64; b += 8) f |= (unsigned)(w >> b) & 0xff;
    return f;
}

SFP8_AVX2 static unsigned block_avx2(const sfp8s_srw *p, const void *in, void *out, uint8_t *fl, ptrdiff_t n)
{
    return p->isize == 1 ? srw_run256(p, in, 1, out, fl, n) : srw_run256(p, in, 2, out, fl, n);
}

unsigned sfp8f_sr_wide_run_avx2(const void *t, const sfp8f_call *c) { return wide_sr_run(t, c, block_avx2, 8); }

/* ---- AVX-512: sixteen lanes ---- */

/* sixteen lanes at element i */
SFP8_AVX512 static inline AINL __m128i srw16(const sfp8s_srw *p, __m512i rmask, __m128i sh, __m512i R, const void *in,
                                     int isize, char *out, uint8_t *fl)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i one = _mm512_set1_epi32(1), three = _mm512_set1_epi32(3), f7 = _mm512_set1_epi32(0x7f);
    __m512i c = isize == 1 ? _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)in))
                           : _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)in));
    __m512i e0, e1, ts, hi, fw, lim;
    __mmask16 up;
    __m128i f8;
    c = _mm512_and_si512(c, _mm512_set1_epi32((int)p->smask));
    e0 = _mm512_i32gather_epi64(_mm512_castsi512_si256(c), (const void *)p->e, 8);
    e1 = _mm512_i32gather_epi64(_mm512_extracti64x4_epi64(c, 1), (const void *)p->e, 8);
    ts = _mm512_permutex2var_epi32(e0, even, e1);
    hi = _mm512_permutex2var_epi32(e0, odd, e1);
    lim = _mm512_sub_epi32(rmask, _mm512_srl_epi32(ts, sh));
    up = _mm512_cmpgt_epu32_mask(_mm512_and_si512(R, rmask), lim);
    fw = _mm512_and_si512(_mm512_mask_srli_epi32(_mm512_srli_epi32(hi, 18), up, hi, 25), f7);
    fw = _mm512_add_epi32(fw, _mm512_and_si512(fw, _mm512_set1_epi32(0x40))); /* 0x40 -> 0x80 */
    hi = _mm512_mask_add_epi32(hi, up, hi, _mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(hi, 16), three), one));
    _mm256_storeu_si256((__m256i *)(void *)out, _mm512_cvtepi32_epi16(hi));
    f8 = _mm512_cvtepi32_epi8(fw);
    _mm_storeu_si128((__m128i *)fl, f8);
    return f8;
}

SFP8_AVX512 static inline AINL unsigned srw_run512(const sfp8s_srw *p, const void *in, int isize, void *out, uint8_t *fl,
                                           ptrdiff_t n)
{
    const __m512i rmask = _mm512_set1_epi32((int)(p->N == 32 ? 0xffffffffu : (1u << p->N) - 1));
    const __m128i sh = _mm_cvtsi32_si128(32 - p->N);
    rng16 g = rng16_init(p->seed_key, p->stream_key, p->index0);
    __m128i facc = _mm_setzero_si128();
    for (ptrdiff_t i = 0; i + 16 <= n; i += 16)
        facc = _mm_or_si128(facc, srw16(p, rmask, sh, rng16_next(&g), (const char *)in + i * isize, isize,
                                        (char *)out + 2 * i, fl + i));
    return or16(facc);
}

SFP8_AVX512 static unsigned block_avx512(const sfp8s_srw *p, const void *in, void *out, uint8_t *fl, ptrdiff_t n)
{
    return p->isize == 1 ? srw_run512(p, in, 1, out, fl, n) : srw_run512(p, in, 2, out, fl, n);
}

unsigned sfp8f_sr_wide_run_avx512(const void *t, const sfp8f_call *c) { return wide_sr_run(t, c, block_avx512, 16); }
#endif
