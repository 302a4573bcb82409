/* binary8: the binary operations of formats of <= 8 bits (the binary, compare
 * and relation rows of ops.def) by a 65,536-entry table, index a << 8 | b,
 * entry = result byte | flags << 8.
 *
 * Nothing is derived: every entry is the core's own result (sfp8x_apply), for
 * every pair of storage bytes (the core masks codes to the format's width, so
 * out-of-width codes need no masking here).  The kernels only look entries up:
 * portable C (element by element in order; an indexed loop when contiguous),
 * AVX2 (eight lanes per 32-bit gather; the table's 64 bytes of padding keep the
 * gather of the last entry inside it) and AVX-512 (sixteen lanes), the SIMD
 * kernels on contiguous operands sfp8f_apart allows, without per-element flags,
 * the tail by the portable loop.  Equal to the core under every calling
 * convention: tests/harness/test_harness.py::test_entry [binary8] (any
 * overlap, per-element flags, every level) and the exhaustive pair tests of
 * tests/harness/test_harness.py::test_entry [binary8]. */
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"
#include "ops.h"
#include "simd.h"

static void *build_bin8(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    uint16_t *t = malloc(65536 * sizeof(uint16_t) + 64);
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    for (uint32_t a = 0; a < 256; a++)
        for (uint32_t b = 0; b < 256; b++) {
            uint8_t fl = 0;
            uint32_t r = sfp8x_apply(k->op, &k->a, a, b, 0, &env, &fl);
            t[a << 8 | b] = (uint16_t)((r & 0xffu) | (uint32_t)fl << 8);
        }
    memset(t + 65536, 0, 64);
    *bytes = 65536 * sizeof(uint16_t);
    return t;
}

static const uint16_t *binary8_table(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    /* env-free operations have one table whatever the context (stochastic too) */
    if (sfp8x_env_free(op)) env = &sfp8f_free_env;
    if (!sfp8f_enabled() || f->bits > 8 || !X_IS_BINARY(op) || !sfp8f_usable_env(env)) return NULL;
    return sfp8f_cached(T_BIN8, op, f, NULL, env, build_bin8, n, 65536);
}

const void *sfp8f_binary8_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (c->f->bits > 8 || sfp8x_arity(c->op) != 2) return NULL;
    return binary8_table(c->op, c->f, c->env, c->n);
}

static inline AINL unsigned bin8_loop(int FL, const uint16_t *tab, const char *a, ptrdiff_t sa, const char *b,
                                        ptrdiff_t sb, char *o, ptrdiff_t so, ptrdiff_t i, ptrdiff_t n,
                                        uint8_t *flout)
{
    unsigned acc = 0;
    if (sa == 1 && sb == 1 && so == 1) { /* contiguous: indexed form, still in order */
        const uint8_t *x = (const uint8_t *)a - i, *y = (const uint8_t *)b - i;
        uint8_t *z = (uint8_t *)o - i;
        for (; i < n; i++) {
            uint16_t v = tab[(uint32_t)x[i] << 8 | y[i]];
            z[i] = (uint8_t)v;
            acc |= v;
            if (FL) flout[i] = (uint8_t)(v >> 8);
        }
        return acc;
    }
    for (; i < n; i++, a += sa, b += sb, o += so) {
        uint16_t v = tab[(uint32_t)*(const uint8_t *)a << 8 | *(const uint8_t *)b];
        *(uint8_t *)o = (uint8_t)v;
        acc |= v;
        if (FL) flout[i] = (uint8_t)(v >> 8);
    }
    return acc;
}

/* the SIMD prefix: z[i] = low byte of tab[x[i] << 8 | y[i]] for a multiple of the
   block's lanes; *acc |= the entries (flags in bits 8..15); returns the count */
typedef ptrdiff_t (*bin8_block)(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z, ptrdiff_t n,
                                unsigned *acc);

static inline AINL unsigned bin8_run(const uint16_t *tab, const sfp8f_call *c, bin8_block block)
{
    const char *a = c->a, *b = c->b;
    char *o = c->o;
    const ptrdiff_t sa = c->sa, sb = c->sb, so = c->so, n = c->n;
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (c->flout) return bin8_loop(1, tab, a, sa, b, sb, o, so, 0, n, c->flout) >> 8;
    if (block && sa == 1 && sb == 1 && so == 1 && sfp8f_apart(o, 1, 1, a, 1, 1, n) && sfp8f_apart(o, 1, 1, b, 1, 1, n)) {
        i = block(tab, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)o, n, &acc);
        a += i;
        b += i;
        o += i;
    }
    acc |= bin8_loop(0, tab, a, sa, b, sb, o, so, i, n, NULL);
    return acc >> 8;
}

unsigned sfp8f_binary8_run(const void *t, const sfp8f_call *c) { return bin8_run(t, c, NULL); }

#if SFP8_X86

/* the AVX-512 kernel with AVX2: eight lanes per gather (the table has 64 bytes of
 * padding, so the 4-byte gather of the last entry stays inside it) */
SFP8_AVX2 static ptrdiff_t block_avx2(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z,
                                  ptrdiff_t n, unsigned *acc)
{
    __m256i a = _mm256_setzero_si256();
    const __m256i lo16 = _mm256_set1_epi32(0xffff);
    /* low byte of each dword to the first four bytes of its 128-bit lane */
    const __m256i pack = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i xa = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(x + i)));
        __m256i yb = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(y + i)));
        __m256i idx = _mm256_or_si256(_mm256_slli_epi32(xa, 8), yb);
        __m256i v = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)tab, idx, 2), lo16);
        __m256i s = _mm256_shuffle_epi8(v, pack);
        uint32_t lo = (uint32_t)_mm256_extract_epi32(s, 0), hi = (uint32_t)_mm256_extract_epi32(s, 4);
        a = _mm256_or_si256(a, v);
        memcpy(z + i, &lo, 4);
        memcpy(z + i + 4, &hi, 4);
    }
    {
        uint32_t t[8];
        unsigned f = 0;
        _mm256_storeu_si256((__m256i *)(void *)t, a);
        for (int k = 0; k < 8; k++) f |= t[k];
        *acc |= f;
    }
    return i;
}

unsigned sfp8f_binary8_run_avx2(const void *t, const sfp8f_call *c) { return bin8_run(t, c, block_avx2); }

/* sixteen lanes per gather */
SFP8_AVX512 static ptrdiff_t block_avx512(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z, ptrdiff_t n,
                                      unsigned *acc)
{
    __m512i a = _mm512_setzero_si512();
    const __m512i lo16 = _mm512_set1_epi32(0xffff);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i xa = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(x + i)));
        __m512i yb = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(y + i)));
        __m512i idx = _mm512_or_si512(_mm512_slli_epi32(xa, 8), yb);
        __m512i v = _mm512_and_si512(_mm512_i32gather_epi32(idx, (const void *)tab, 2), lo16);
        a = _mm512_or_si512(a, v);
        _mm_storeu_si128((__m128i *)(z + i), _mm512_cvtepi32_epi8(v));
    }
    *acc |= (unsigned)_mm512_reduce_or_epi32(a);
    return i;
}

unsigned sfp8f_binary8_run_avx512(const void *t, const sfp8f_call *c) { return bin8_run(t, c, block_avx512); }
#endif
