/* fma8: fused multiply-add of formats of <= 8 bits (the formats of from_float8).
 *
 * DERIVED from core.c round_pack (through sfp8_fma): the exact product in
 * binary64, the sum rounded to odd (fast.h, sfp8f_odd_sum: 53 bits keep every
 * rounding decision of a format with at most 5 significant bits), then the
 * binary64 key table (from_float8.c, built by the core); NaN/infinity
 * operands and zero sums take the core.  Operand tables have 256 entries built
 * by the core for every byte.  Proven equal by
 * tests/harness/test_harness.py::test_entry [fma8] and
 * ::test_fma_random_all_configs, and under every calling convention by
 * tests/harness/test_harness.py::test_entry [fma8] and ::test_direct_fma.
 *
 * Kernels: portable C (element by element in order; any overlap); AVX-512
 * (sixteen lanes: operand values from two byte planes of their binary32 bits,
 * products and TwoSum in binary64, the key through binary32 (simd.h,
 * key64x16f), one gather of the key table) and AVX2 (eight lanes: one table of
 * 256 dwords built per call, so only for calls of 64+ elements; the key in the
 * lane order L (simd.h, key64_256)).  Both take contiguous operands sfp8f_apart
 * allows, finish lanes with a NaN / infinity operand or a zero sum by the core
 * from copies of the operands taken before the block is stored (o may be a, b
 * or c), and leave the tail to the portable loop. */
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"
#include "ops.h"
#include "simd.h"

typedef struct sfp8f_fma {
    double v[256];
    uint8_t fl[256];      /* flags reading the code raises (denormal) */
    uint8_t special[256]; /* NaN or infinity */
    uint8_t info[256];    /* fl | 0x80 for NaN or infinity (the SIMD kernel's table) */
    uint8_t hb[2][256];   /* bytes 2 and 3 of the finite values' binary32 bits (SIMD) */
    int hb_ok;            /* 1: every finite value is a binary32 with zero low 16 bits */
    const uint16_t *fromf;
} sfp8f_fma;

/* the SIMD kernels' view of the table: info[code] = the flags reading the code
   raises, | 0x80 for NaN/infinity */
typedef struct sfp8s_fma8 {
    const uint8_t *hb;      /* 2 x 256: bytes 2 and 3 of the binary32 bits of finite
                               values (whose low 16 bits are zero) */
    const uint8_t *info;    /* 256 */
    const uint16_t *fromf;  /* the binary64 key table (fast.h), padded by 64 bytes */
    const void *f, *env;    /* const sfp8_format *, const sfp8_env * for the core */
} sfp8s_fma8;

static void *build_fma(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    sfp8f_fma *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    t->fromf = sfp8f_cached_nested(T_FROMF, 0, &k->a, NULL, &env, sfp8f_build_fromf);
    if (!t->fromf) {
        free(t);
        return NULL;
    }
    for (uint32_t c = 0; c < 256; c++) {
        uint8_t fl = 0;
        uint64_t b = sfp8_convert(&k->a, &sfp8_binary64, c, &sfp8f_free_env, &fl);
        int cls = sfp8_classify(&k->a, c);
        memcpy(&t->v[c], &b, 8);
        t->fl[c] = fl;
        t->special[c] = cls >= SFP8_CLASS_INF;
        t->info[c] = (uint8_t)(fl | (t->special[c] ? 0x80 : 0));
    }
    t->hb_ok = 1;
    for (uint32_t c = 0; c < 256; c++) {
        float x = (float)t->v[c];
        uint32_t u;
        memcpy(&u, &x, 4);
        if (t->special[c]) continue;
        if ((double)x != t->v[c] || (u & 0xffffu)) t->hb_ok = 0;
        t->hb[0][c] = (uint8_t)(u >> 16);
        t->hb[1][c] = (uint8_t)(u >> 24);
    }
    *bytes = sizeof *t;
    return t;
}

static const sfp8f_fma *fma8_table(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || !sfp8f_usable_env(env) || !sfp8f_from_float_ok(f)) return NULL;
    return sfp8f_cached(T_FMA, 0, f, NULL, env, build_fma, n, 65536);
}

const void *sfp8f_fma8_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (c->op != X_FMA || c->f->bits > 8) return NULL;
    return fma8_table(c->f, c->env, c->n);
}

/* the SIMD prefix: the count done; flo (or NULL) receives the flags, *acc |= them */
typedef ptrdiff_t (*fma8_block)(const sfp8s_fma8 *t, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *o,
                                ptrdiff_t n, uint8_t *flo, unsigned *acc);

static inline AINL unsigned fma8_run(const sfp8f_fma *t, const sfp8f_call *call, fma8_block block, ptrdiff_t min_n)
{
    const sfp8_format *f = call->f;
    const sfp8_env *env = call->env;
    const char *a = call->a, *b = call->b, *c = call->c;
    char *o = call->o;
    const ptrdiff_t sa = call->sa, sb = call->sb, sc = call->sc, so = call->so, n = call->n;
    uint8_t *const flout = call->flout;
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (block && sa == 1 && sb == 1 && sc == 1 && so == 1 && t->hb_ok && n >= min_n && sfp8f_apart(o, 1, 1, a, 1, 1, n) &&
        sfp8f_apart(o, 1, 1, b, 1, 1, n) && sfp8f_apart(o, 1, 1, c, 1, 1, n)) {
        const sfp8s_fma8 p = {t->hb[0], t->info, t->fromf, f, env};
        i = block(&p, (const uint8_t *)a, (const uint8_t *)b, (const uint8_t *)c, (uint8_t *)o, n, flout, &acc);
        a += i;
        b += i;
        c += i;
        o += i;
    }
    for (; i < n; i++, a += sa, b += sb, c += sc, o += so) {
        uint8_t x = *(const uint8_t *)a, y = *(const uint8_t *)b, z = *(const uint8_t *)c;
        double s;
        uint64_t bits;
        if (t->special[x] | t->special[y] | t->special[z]) goto core;
        bits = sfp8f_odd_sum(t->v[x] * t->v[y], t->v[z], &s);
        if (s == 0) goto core;
        {
            uint16_t v = t->fromf[sfp8f_key64(bits)];
            unsigned fl = (unsigned)(v >> 8) | t->fl[x] | t->fl[y] | t->fl[z];
            *(uint8_t *)o = (uint8_t)v;
            acc |= fl;
            if (flout) flout[i] = (uint8_t)fl;
        }
        continue;
    core: {
        uint8_t fl = 0;
        *(uint8_t *)o = (uint8_t)sfp8_fma(f, x, y, z, env, &fl);
        acc |= fl;
        if (flout) flout[i] = fl;
    }
    }
    return acc;
}

unsigned sfp8f_fma8_run(const void *t, const sfp8f_call *c) { return fma8_run(t, c, NULL, 0); }

#if SFP8_X86

/* the lanes of mask `slow` by the core, from copies of their operands x, y, z:
   codes to cs, flags to fs */
static void core_lanes(const sfp8s_fma8 *t, unsigned slow, const uint8_t *xs, const uint8_t *ys, const uint8_t *zs,
                       uint8_t *cs, uint8_t *fs)
{
    for (unsigned m = slow; m; m &= m - 1) {
        int k = __builtin_ctz(m);
        uint8_t f8 = 0;
        cs[k] = (uint8_t)sfp8_fma((const sfp8_format *)t->f, xs[k], ys[k], zs[k], (const sfp8_env *)t->env, &f8);
        fs[k] = f8;
    }
}

/* ---- fma of 8-bit formats with AVX2 (the AVX-512 kernel's lanes, eight at a time):
 * one table of 256 dwords built per call, the code's binary32 bits (low 16 bits
 * zero, sfp8f_fma.hb) | its info byte, one gather per operand; the products and
 * TwoSum in two four-lane binary64 halves; the sum's key (from_float8.c, sfp8f_key64)
 * in 32-bit lanes (order L), blended per case for lanes outside binary32's
 * normal range; one gather of the key table.  NaN/infinity operands and zero
 * sums go to the core from the operands read before the block is stored. ---- */

/* the bits of p + q rounded to odd (fast.h, sfp8f_odd_sum), four lanes; *zero = lanes whose sum is zero */
SFP8_AVX2 static inline AINL __m256i odd_sum256(__m256d p, __m256d q, __m256d *zero)
{
    const __m256i one = _mm256_set1_epi64x(1), z = _mm256_setzero_si256();
    __m256d s = _mm256_add_pd(p, q), bb = _mm256_sub_pd(s, p);
    __m256d err = _mm256_add_pd(_mm256_sub_pd(p, _mm256_sub_pd(s, bb)), _mm256_sub_pd(q, bb));
    __m256i bits = _mm256_castpd_si256(s);
    __m256i move = _mm256_andnot_si256(_mm256_castpd_si256(_mm256_cmp_pd(err, _mm256_setzero_pd(), _CMP_EQ_OQ)),
                                       _mm256_cmpeq_epi64(_mm256_and_si256(bits, one), z));
    __m256i differ = _mm256_cmpgt_epi64(z, _mm256_xor_si256(_mm256_castpd_si256(err), bits)); /* signs differ */
    *zero = _mm256_cmp_pd(s, _mm256_setzero_pd(), _CMP_EQ_OQ);
    return _mm256_add_epi64(bits, _mm256_and_si256(move, _mm256_or_si256(differ, one))); /* +1 or -1 */
}

SFP8_AVX2 static ptrdiff_t block_avx2(const sfp8s_fma8 *t, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *o,
                               ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    uint32_t vt[256];
    const __m256i lo16 = _mm256_set1_epi32(0xffff), hi16 = _mm256_set1_epi32((int)0xffff0000u);
    const __m256i Lidx = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    const __m256i pk = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, 1, 5, 9,
                                        13, -1, -1, -1, -1, -1, -1, -1, -1);
    __m128i facc = _mm_setzero_si128();
    ptrdiff_t i = 0;
    for (int k = 0; k < 256; k++)
        vt[k] = (uint32_t)t->hb[k] << 16 | (uint32_t)t->hb[256 + k] << 24 | t->info[k];
    for (; i + 8 <= n; i += 8) {
        __m128i x8 = _mm_loadl_epi64((const __m128i *)(a + i)), y8 = _mm_loadl_epi64((const __m128i *)(b + i));
        __m128i z8 = _mm_loadl_epi64((const __m128i *)(c + i));
        __m256i ex = _mm256_i32gather_epi32((const int *)vt, _mm256_cvtepu8_epi32(x8), 4);
        __m256i ey = _mm256_i32gather_epi32((const int *)vt, _mm256_cvtepu8_epi32(y8), 4);
        __m256i ez = _mm256_i32gather_epi32((const int *)vt, _mm256_cvtepu8_epi32(z8), 4);
        __m256i inf = _mm256_and_si256(_mm256_or_si256(_mm256_or_si256(ex, ey), ez), _mm256_set1_epi32(0xff));
        __m256 fx = _mm256_castsi256_ps(_mm256_and_si256(ex, hi16)), fy = _mm256_castsi256_ps(_mm256_and_si256(ey, hi16));
        __m256 fz = _mm256_castsi256_ps(_mm256_and_si256(ez, hi16));
        __m256d z0, z1;
        __m256i s0 = odd_sum256(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(fx)),
                                              _mm256_cvtps_pd(_mm256_castps256_ps128(fy))),
                                _mm256_cvtps_pd(_mm256_castps256_ps128(fz)), &z0);
        __m256i s1 = odd_sum256(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(fx, 1)),
                                              _mm256_cvtps_pd(_mm256_extractf128_ps(fy, 1))),
                                _mm256_cvtps_pd(_mm256_extractf128_ps(fz, 1)), &z1);
        __m256i v = _mm256_and_si256(
            _mm256_i32gather_epi32((const int *)(const void *)t->fromf, key64_256(s0, s1), 2), lo16);
        /* code | flags << 8 (the sum's | the operands' reading flags) */
        v = _mm256_or_si256(v, _mm256_slli_epi32(_mm256_and_si256(_mm256_permutevar8x32_epi32(inf, Lidx),
                                                                  _mm256_set1_epi32(0x7f)), 8));
        unsigned slow = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(inf, 24))) |
                        (unsigned)_mm256_movemask_pd(z0) | (unsigned)_mm256_movemask_pd(z1) << 4;
        __m128i cf = unpackL(_mm256_shuffle_epi8(v, pk));
        if (slow) { /* the core, from the operands read above (o may alias them) */
            uint8_t xs[8], ys[8], zs[8], cs[16];
            _mm_storel_epi64((__m128i *)xs, x8);
            _mm_storel_epi64((__m128i *)ys, y8);
            _mm_storel_epi64((__m128i *)zs, z8);
            _mm_storeu_si128((__m128i *)cs, cf);
            core_lanes(t, slow, xs, ys, zs, cs, cs + 8);
            cf = _mm_loadu_si128((const __m128i *)cs);
        }
        store8(o + i, flo ? flo + i : NULL, cf);
        facc = _mm_or_si128(facc, cf);
    }
    {
        uint8_t bs[16];
        unsigned f = 0;
        _mm_storeu_si128((__m128i *)bs, facc);
        for (int k = 8; k < 16; k++) f |= bs[k];
        *acc |= f;
    }
    return i;
}

/* AVX2: a 1 KiB table per call, repaid from 64 elements */
unsigned sfp8f_fma8_run_avx2(const void *t, const sfp8f_call *c) { return fma8_run(t, c, block_avx2, 64); }

/* ---- AVX-512: sixteen lanes a block ---- */

/* bits of p + q rounded to odd (fast.h, sfp8f_odd_sum), eight lanes; *s = p + q */
SFP8_AVX512 static inline __m512i odd_sum512(__m512d p, __m512d q, __m512d *s_out)
{
    const __m512i one = _mm512_set1_epi64(1), mag = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL);
    const __m512i sgn = _mm512_set1_epi64((long long)(1ULL << 63));
    __m512d s = _mm512_add_pd(p, q), bb = _mm512_sub_pd(s, p);
    __m512d err = _mm512_add_pd(_mm512_sub_pd(p, _mm512_sub_pd(s, bb)), _mm512_sub_pd(q, bb));
    __m512i eb = _mm512_castpd_si512(err), bits = _mm512_castpd_si512(s);
    __mmask8 move = _mm512_test_epi64_mask(eb, mag) & _mm512_testn_epi64_mask(bits, one);
    __mmask8 same = _mm512_testn_epi64_mask(_mm512_xor_si512(eb, bits), sgn);
    bits = _mm512_mask_add_epi64(bits, move & same, bits, one);
    *s_out = s;
    return _mm512_mask_sub_epi64(bits, move & (__mmask8)~same, bits, one);
}

/* sixteen codes (the low lanes of x) -> their binary32 values, from two byte planes */
SFP8_AVX512 static inline __m512 fma8_vals(const tab256 *hb, __m128i x)
{
    __m512i w = _mm512_zextsi128_si512(x);
    __mmask64 hi = _mm512_movepi8_mask(w);
    __m512i b2 = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(lookup(&hb[0], w, hi)));
    __m512i b3 = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(lookup(&hb[1], w, hi)));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_slli_epi32(b2, 16), _mm512_slli_epi32(b3, 24)));
}

/* eight lanes: the bits of a*b + c rounded to odd; *zero = lanes whose sum is zero */
SFP8_AVX512 static inline __m512i fma8_odd(__m256 a, __m256 b, __m256 c, __mmask8 *zero)
{
    __m512d s;
    __m512i bits = odd_sum512(_mm512_mul_pd(_mm512_cvtps_pd(a), _mm512_cvtps_pd(b)), _mm512_cvtps_pd(c), &s);
    *zero = _mm512_cmp_pd_mask(s, _mm512_setzero_pd(), _CMP_EQ_OQ);
    return bits;
}

SFP8_AVX512 static ptrdiff_t block_avx512(const sfp8s_fma8 *t, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *o,
                                ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    tab256 info, hb[2];
    const __m512i lo16 = _mm512_set1_epi32(0xffff);
    __m128i facc = _mm_setzero_si128();
    ptrdiff_t i = 0;
    load_tab(&info, t->info);
    load_tab(&hb[0], t->hb);
    load_tab(&hb[1], t->hb + 256);
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(a + i)), y = _mm_loadu_si128((const __m128i *)(b + i));
        __m128i z = _mm_loadu_si128((const __m128i *)(c + i));
        __m512i xw = _mm512_zextsi128_si512(x), yw = _mm512_zextsi128_si512(y), zw = _mm512_zextsi128_si512(z);
        __m128i inf = _mm512_castsi512_si128(_mm512_or_si512(
            _mm512_or_si512(lookup(&info, xw, _mm512_movepi8_mask(xw)), lookup(&info, yw, _mm512_movepi8_mask(yw))),
            lookup(&info, zw, _mm512_movepi8_mask(zw))));
        __mmask8 z0, z1;
        __m512 vx = fma8_vals(hb, x), vy = fma8_vals(hb, y), vz = fma8_vals(hb, z);
        __m512i s0 = fma8_odd(_mm512_castps512_ps256(vx), _mm512_castps512_ps256(vy), _mm512_castps512_ps256(vz), &z0);
        __m512i s1 = fma8_odd(_mm512_extractf32x8_ps(vx, 1), _mm512_extractf32x8_ps(vy, 1),
                              _mm512_extractf32x8_ps(vz, 1), &z1);
        __m512i key = key64x16f(s0, s1);
        __m512i v = _mm512_and_si512(_mm512_i32gather_epi32(key, (const void *)t->fromf, 2), lo16);
        __m128i code = _mm512_cvtepi32_epi8(v);
        __m128i fl = _mm_and_si128(_mm_or_si128(_mm512_cvtepi32_epi8(_mm512_srli_epi32(v, 8)), inf),
                                   _mm_set1_epi8(0x7f));
        unsigned slow = (unsigned)_mm_movepi8_mask(inf) | (unsigned)z0 | (unsigned)z1 << 8;
        if (slow) { /* the core, from the operands read above (o may alias them) */
            uint8_t xs[16], ys[16], zs[16], cs[16], fs[16];
            _mm_storeu_si128((__m128i *)xs, x);
            _mm_storeu_si128((__m128i *)ys, y);
            _mm_storeu_si128((__m128i *)zs, z);
            _mm_storeu_si128((__m128i *)cs, code);
            _mm_storeu_si128((__m128i *)fs, fl);
            core_lanes(t, slow, xs, ys, zs, cs, fs);
            code = _mm_loadu_si128((const __m128i *)cs);
            fl = _mm_loadu_si128((const __m128i *)fs);
        }
        store16(o + i, flo ? flo + i : NULL, code, fl, &facc);
    }
    *acc |= or16(facc);
    return i;
}

unsigned sfp8f_fma8_run_avx512(const void *t, const sfp8f_call *c) { return fma8_run(t, c, block_avx512, 0); }
#endif
