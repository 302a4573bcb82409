/* convert: conversions from formats of <= 16 bits (binary16 included) to any
 * descriptor (formats, binary32, binary64) by a table of every source code:
 * 256 entries (every storage byte) for sources of <= 8 bits, else 2^bits
 * indexed by code & mask; the destination code and its flags.  Also the
 * decoding table (code -> binary64) of the arith16 and sr_arith16 families and
 * of the matrix engine (sfp8f_convert).
 *
 * Nothing is derived: every entry is the core's sfp8_convert of that code.
 * Kernels: portable C (element by element in order) and AVX-512 (one-byte
 * sources: sixty-four lanes through byte planes of the table, one 64-byte
 * permute per plane and output byte; contiguous operands sfp8f_apart allows,
 * without per-element flags).  Equal to the core under every calling
 * convention: tests/harness/test_harness.py::test_entry [convert] and the
 * exhaustive conversion tests of tests/harness/test_harness.py::test_entry [convert]. */
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"
#include "simd.h"

/* Entries of a conversion table: every storage byte for sources of <= 8 bits
 * (the core masks each byte to the width, so one-byte codes index the table
 * unmasked), else 2^bits (two-byte codes are masked in the kernels). */
static int code_entries(const sfp8_format *f) { return f->bits <= 8 ? 256 : 1 << f->bits; }

/* one block: the header, val[n], planes (n == 256), fl[n] */
void *sfp8f_build_conv(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    const int n = code_entries(&k->a), np = n == 256 ? 8 * 256 : 0;
    sfp8f_conv *c = malloc(sizeof *c + (size_t)n * 8 + (size_t)np + (size_t)n);
    uint64_t *val;
    uint8_t *planes, *fl;
    if (!c) return NULL;
    val = (uint64_t *)(void *)(c + 1);
    planes = (uint8_t *)(val + n);
    fl = planes + np;
    memset(c, 0, sizeof *c);
    sfp8f_key_env(k, &env);
    for (int i = 0; i < n; i++) {
        uint8_t f8 = 0;
        val[i] = sfp8_convert(&k->a, &k->b, (uint64_t)i, &env, &f8);
        fl[i] = f8;
        c->any_flags |= f8;
    }
    for (int p = 0; p < np / 256; p++)
        for (int i = 0; i < 256; i++) planes[p * 256 + i] = (uint8_t)(val[i] >> (8 * p));
    c->n = n;
    c->val = val;
    c->fl = fl;
    c->planes = np ? planes : NULL;
    *bytes = (size_t)n * 9 + (size_t)np;
    return c;
}

const sfp8f_conv *sfp8f_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                ptrdiff_t n)
{
    if (!sfp8f_enabled() || src->bits > 16 || !sfp8f_usable_env(env)) return NULL;
    return sfp8f_cached(T_CONV, 0, src, dst, env, sfp8f_build_conv, n, (ptrdiff_t)1 << src->bits);
}

const void *sfp8f_convert_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (c->f->bits > 16) return NULL;
    return sfp8f_convert(c->f, c->dst, c->env, c->n);
}

static inline AINL unsigned convert_loop(int FL, const sfp8f_conv *c, const char *a, ptrdiff_t sa, int isize,
                                           char *o, ptrdiff_t so, int osize, ptrdiff_t i, ptrdiff_t n,
                                           uint8_t *flout)
{
    const uint32_t mask = (uint32_t)c->n - 1;
    unsigned acc = 0;
    for (; i < n; i++, a += sa, o += so) {
        uint32_t x = isize == 1 ? *(const uint8_t *)a : sfp8f_ld16(a) & mask; /* code_entries */
        sfp8f_st(o, c->val[x], osize);
        acc |= c->fl[x];
        if (FL) flout[i] = c->fl[x];
    }
    return acc;
}

/* the AVX-512 prefix (byte planes): the count done; *acc |= the flags */
typedef ptrdiff_t (*lut8_block)(const uint8_t *planes, const uint8_t *fl, int osize, const uint8_t *in, char *out,
                                ptrdiff_t n, unsigned *acc);

static inline AINL unsigned convert_run(const sfp8f_conv *t, const sfp8f_call *c, lut8_block block)
{
    const char *a = c->a;
    char *o = c->o;
    const ptrdiff_t sa = c->sa, so = c->so, n = c->n;
    const int isize = c->isize, osize = c->osize;
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (c->flout) return convert_loop(1, t, a, sa, isize, o, so, osize, 0, n, c->flout);
    /* planes exist for 256-entry tables (sources of <= 8 bits): every byte indexes them */
    if (block && isize == 1 && sa == 1 && so == osize && t->planes && sfp8f_apart(o, so, osize, a, 1, 1, n)) {
        i = block(t->planes, t->any_flags ? t->fl : NULL, osize, (const uint8_t *)a, o, n, &acc);
        a += i;
        o += i * so;
    }
    if (isize == 1) return acc | convert_loop(0, t, a, sa, 1, o, so, osize, i, n, NULL);
    return acc | convert_loop(0, t, a, sa, 2, o, so, osize, i, n, NULL);
}

unsigned sfp8f_convert_run(const void *t, const sfp8f_call *c) { return convert_run(t, c, NULL); }

#if SFP8_X86

/* 16 dwords per output register from four byte planes of 64 elements */
SFP8_AVX512 static inline void planes_to_dwords(__m512i r0, __m512i r1, __m512i r2, __m512i r3, __m512i o[4])
{
    __m512i wl = _mm512_unpacklo_epi8(r0, r1), wh = _mm512_unpackhi_epi8(r0, r1);
    __m512i vl = _mm512_unpacklo_epi8(r2, r3), vh = _mm512_unpackhi_epi8(r2, r3);
    __m512i d0 = _mm512_unpacklo_epi16(wl, vl), d1 = _mm512_unpackhi_epi16(wl, vl);
    __m512i d2 = _mm512_unpacklo_epi16(wh, vh), d3 = _mm512_unpackhi_epi16(wh, vh);
    __m512i t0 = _mm512_shuffle_i64x2(d0, d1, 0x44), t1 = _mm512_shuffle_i64x2(d2, d3, 0x44);
    __m512i t2 = _mm512_shuffle_i64x2(d0, d1, 0xEE), t3 = _mm512_shuffle_i64x2(d2, d3, 0xEE);
    o[0] = _mm512_shuffle_i64x2(t0, t1, 0x88);
    o[1] = _mm512_shuffle_i64x2(t0, t1, 0xDD);
    o[2] = _mm512_shuffle_i64x2(t2, t3, 0x88);
    o[3] = _mm512_shuffle_i64x2(t2, t3, 0xDD);
}

/* 256-entry lookup: out element i (osize bytes) = bytes planes[k*256 + in[i]],
 * k < osize; if fl is not NULL, *acc |= fl[in[i]]. */
SFP8_AVX512 static ptrdiff_t lut8_avx512(const uint8_t *planes, const uint8_t *fl, int osize, const uint8_t *in, char *out,
                                      ptrdiff_t n, unsigned *acc)
{
    tab256 t[8], ft;
    __m512i facc = _mm512_setzero_si512();
    const __m512i lanefix0 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    const __m512i lanefix1 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    ptrdiff_t i = 0;
    if (osize != 1 && osize != 2 && osize != 4 && osize != 8) return 0;
    for (int k = 0; k < osize; k++) load_tab(&t[k], planes + 256 * k);
    if (fl) load_tab(&ft, fl);
    for (; i + 64 <= n; i += 64) {
        __m512i x = _mm512_loadu_si512((const void *)(in + i));
        __mmask64 hi = _mm512_movepi8_mask(x);
        char *o = out + i * osize;
        if (fl) facc = _mm512_or_si512(facc, lookup(&ft, x, hi));
        if (osize == 1) {
            _mm512_storeu_si512((void *)o, lookup(&t[0], x, hi));
        } else if (osize == 2) {
            __m512i r0 = lookup(&t[0], x, hi), r1 = lookup(&t[1], x, hi);
            __m512i ul = _mm512_unpacklo_epi8(r0, r1), uh = _mm512_unpackhi_epi8(r0, r1);
            _mm512_storeu_si512((void *)o, _mm512_permutex2var_epi64(ul, lanefix0, uh));
            _mm512_storeu_si512((void *)(o + 64), _mm512_permutex2var_epi64(ul, lanefix1, uh));
        } else if (osize == 4) {
            __m512i d[4];
            planes_to_dwords(lookup(&t[0], x, hi), lookup(&t[1], x, hi), lookup(&t[2], x, hi),
                             lookup(&t[3], x, hi), d);
            for (int k = 0; k < 4; k++) _mm512_storeu_si512((void *)(o + 64 * k), d[k]);
        } else {
            __m512i lo[4], up[4];
            planes_to_dwords(lookup(&t[0], x, hi), lookup(&t[1], x, hi), lookup(&t[2], x, hi),
                             lookup(&t[3], x, hi), lo);
            planes_to_dwords(lookup(&t[4], x, hi), lookup(&t[5], x, hi), lookup(&t[6], x, hi),
                             lookup(&t[7], x, hi), up);
            for (int k = 0; k < 4; k++) {
                __m512i ql = _mm512_unpacklo_epi32(lo[k], up[k]), qh = _mm512_unpackhi_epi32(lo[k], up[k]);
                _mm512_storeu_si512((void *)(o + 128 * k), _mm512_permutex2var_epi64(ql, lanefix0, qh));
                _mm512_storeu_si512((void *)(o + 128 * k + 64), _mm512_permutex2var_epi64(ql, lanefix1, qh));
            }
        }
    }
    if (fl) {
        uint8_t b[64];
        unsigned a = 0;
        _mm512_storeu_si512((void *)b, facc);
        for (int k = 0; k < 64; k++) a |= b[k];
        *acc |= a;
    }
    return i;
}

unsigned sfp8f_convert_run_avx512(const void *t, const sfp8f_call *c) { return convert_run(t, c, lut8_avx512); }
#endif
