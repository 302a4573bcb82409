/* The block_fma path's operand decoding (mm_udecode.h): one code into the lane values of
 * its kernels, and per-format tables of every code where they repay their cost. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mm_udecode.h"
#include "mm_simd.h"
#include "mm_value.h"

void sfp8mu_decode1(const uctx *g, const sfp8_format *f, int64_t emin, uint64_t code, ucode *d)
{
    sfp8u_value v;
    sfp8u_decode(f, code, &v);
    memset(d, 0, sizeof *d);
    d->sub = v.sub;
    d->E = NONE;
    d->neg = v.neg ? ~(uint32_t)0 : 0;
    d->bad = v.cls == SFP8U_NAN || v.cls == SFP8U_INF;
    d->top = NONE;
    d->d = v.neg && !d->bad ? -0.0 : 0.0;
    if (v.cls != SFP8U_FINITE || (v.sub && !g->md->in_subnormals)) return;
    sfp8mu_finite(g, emin, v.sig, v.exp, d);
    {
        d->d = ldexp(v.neg ? -(double)d->sig : (double)d->sig, d->x); /* exact: the operand range (sfp8u_check) */
        if (g->fexact || (g->fvals && d->x >= -149 && d->top <= 127 && d->wide <= 24))
            d->f = (d->neg ? -1.0f : 1.0f) * (float)d->sig * ldexpf(1.0f, d->x); /* exact: a binary32 number */
        else
            d->nof = 1;
    }
}

int sfp8mu_decoder_init(const uctx *g, udecoder *D, const sfp8_format *f, int64_t emin, int64_t count)
{
    D->f = f;
    D->emin = emin;
    D->tab = NULL;
    D->mask = f->bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << f->bits) - 1;
    /* IEEE layout, every value a binary32 number (below 2^128, multiples of 2^-149; so 2^x a
       normal binary64 number): decoded
       from the bits, no table of 2^bits codes to build */
    D->ieee = sfp8mu_ieee_layout(f) && f->bits <= 32 && f->man_bits <= 23 && fmt_low(f) >= -150 &&
              ((int64_t)1 << f->exp_bits) - 1 - f->bias <= 128;
    if (D->ieee) return 1;
    if (f->bits > 16 || (f->bits > 8 && count < ((int64_t)1 << f->bits))) return 1;
    if (!(D->tab = malloc(sizeof(ucode) << f->bits))) return 0;
    for (uint64_t c = 0; c <= D->mask; c++) sfp8mu_decode1(g, f, emin, c, &D->tab[c]);
    return 1;
}

int sfp8mu_lean_ok(const udecoder *D, int level)
{
#if MM_SIMD
    if (level < 1) return 0; /* level 1: sfp8mu_lean_ieee256 / sfp8mu_lean8_256 */
    if (D->ieee && D->f->bits == 16 && D->f->bias <= 127) return 16; /* normal values normal binary32 ones */
    if (D->ieee && D->f->bits == 32 && D->f->exp_bits == 8 && D->f->bias == 127) return 32; /* binary32 codes (TF32) */
    return D->tab && D->f->bits <= 8 ? 8 : 0;
#else
    (void)D;
    (void)level;
    return 0;
#endif
}

void sfp8mu_lean8_init(const udecoder *D, ulean8 *t)
{
    for (int c = 0; c < 256; c++) {
        const ucode *d = &D->tab[c & D->mask];
        t->top[c] = d->top;
        t->f[c] = d->f;
        t->fl[c] = d->bad | d->sub << 1 | d->nof << 2;
    }
}

#if MM_SIMD
#include <immintrin.h>

/* n codes of an 8-bit table, sixteen at a time by gathers from t; as sfp8mu_lean_ieee (no widths: a table's format bounds them) */
MM_TGT512 void sfp8mu_lean8(const udecoder *D, const ulean8 *t, const uint8_t *codes, int64_t n, int32_t *E, float *f,
                            unsigned char *bad, unsigned char *sub, ulean *st)
{
    const __m512i none = _mm512_set1_epi32(NONE), emin = _mm512_set1_epi32((int)D->emin);
    __m512i lo = _mm512_set1_epi32(-NONE), hi = none, mx = none, fls = _mm512_setzero_si512();
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 in = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512i c = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(in, codes + i));
        __m512i top = _mm512_i32gather_epi32(c, t->top, 4), fl = _mm512_i32gather_epi32(c, t->fl, 4);
        __m512 v = _mm512_i32gather_ps(c, t->f, 4);
        __mmask16 nz = _mm512_cmpge_epi32_mask(top, _mm512_set1_epi32(NONE / 2)) & in;
        __m512i e = _mm512_mask_max_epi32(none, nz, top, emin);
        lo = _mm512_mask_min_epi32(lo, nz, lo, top);
        hi = _mm512_mask_max_epi32(hi, nz, hi, top);
        mx = _mm512_max_epi32(mx, e);
        _mm512_mask_storeu_epi32(E + i, in, e);
        _mm512_mask_storeu_ps(f + i, in, v);
        fl = _mm512_maskz_mov_epi32(in, fl);
        if (_mm512_test_epi32_mask(fl, fl)) {
            if (bad) {
                int32_t ff[16];
                _mm512_storeu_si512(ff, fl);
                for (int q = 0; q < 16; q++) {
                    bad[i + q] |= (unsigned char)(ff[q] & 1);
                    sub[i + q] |= (unsigned char)(ff[q] >> 1 & 1);
                }
            }
            fls = _mm512_or_si512(fls, fl);
        }
    }
    st->lo = _mm512_reduce_min_epi32(lo);
    st->hi = _mm512_reduce_max_epi32(hi);
    st->maxE = _mm512_reduce_max_epi32(mx);
    {
        int all = _mm512_reduce_or_epi32(fls);
        st->anybad = all & 1;
        st->anysub = all >> 1 & 1;
        st->anynof = all >> 2 & 1;
    }
}

/* sixteen codes: as sfp8mu_decode_ieee's E and f (normal values built from their fields,
 * subnormal ones as mf 2^(1 - bias - man), exact: binary32 numbers); masks of NaN or
 * infinity, subnormal codes, nonzero values; codes of 16 bits (uint16_t, float16 / bfloat16)
 * or of 32 (uint32_t: binary32 codes, TF32 operands) */
MM_TGT512 void sfp8mu_lean_ieee(const uctx *g, const udecoder *D, const void *codes, int64_t n, int32_t *E,
                                float *f, unsigned char *bad, unsigned char *sub, ulean *st)
{
    const sfp8_format *F = D->f;
    const int man = F->man_bits, w32 = F->bits == 32;
    const __m512i mmask = _mm512_set1_epi32((1 << man) - 1), emax = _mm512_set1_epi32((1 << F->exp_bits) - 1);
    const __m512i rebias = _mm512_set1_epi32(127 - F->bias), none = _mm512_set1_epi32(NONE);
    const __m512i emin = _mm512_set1_epi32((int)D->emin), subx = _mm512_set1_epi32(1 - F->bias - man);
    /* the subnormals' unit 2^(1 - bias - man) (-149 .. 127: sfp8mu_decoder_init) as two
       normal binary32 factors 2^s1 2^s2 */
    const int s1 = (1 - F->bias - man) / 2, s2 = 1 - F->bias - man - s1;
    const __m512 ulp = _mm512_castsi512_ps(_mm512_set1_epi32((127 + s1) << 23));
    const __m512 smin = _mm512_castsi512_ps(_mm512_set1_epi32((127 + s2) << 23));
    const int insub = g->md->in_subnormals;
    __m512i lo = _mm512_set1_epi32(-NONE), hi = none, mx = none, wd = _mm512_setzero_si512();
    const __m512i hidden = _mm512_set1_epi32(1 << man), b127 = _mm512_set1_epi32(127);
    __mmask16 anybad = 0, anysub = 0;
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 in = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512i u = w32 ? _mm512_maskz_loadu_epi32(in, (const uint32_t *)codes + i)
                        : _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(in, (const uint16_t *)codes + i));
        __m512i mag = _mm512_and_si512(u, _mm512_set1_epi32(w32 ? 0x7fffffff : 0x7fff));
        __m512i ef = _mm512_srli_epi32(mag, man), mf = _mm512_and_si512(mag, mmask);
        __m512i sgn = _mm512_slli_epi32(_mm512_srli_epi32(u, w32 ? 31 : 15), 31), top, e;
        __mmask16 isbad = _mm512_cmpeq_epi32_mask(ef, emax) & in;
        __mmask16 e0 = _mm512_cmpeq_epi32_mask(ef, _mm512_setzero_si512());
        __mmask16 issub = e0 & _mm512_test_epi32_mask(mf, mf) & in;
        __mmask16 nzn = in & (__mmask16)~e0 & (__mmask16)~isbad; /* normal values */
        __mmask16 nzs = insub ? issub : 0;                       /* subnormal values kept */
        __m512 fs = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(mf), ulp), smin); /* exact */
        __m512i fn = _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(ef, rebias), 23),
                                     _mm512_slli_epi32(mf, 23 - man));
        __m512i fb = _mm512_mask_mov_epi32(_mm512_maskz_mov_epi32(nzn, fn), nzs, _mm512_castps_si512(fs));
        __mmask16 nz = nzn | nzs;
        fb = _mm512_maskz_or_epi32(nz, fb, sgn);
        /* top: the field's exponent, or that of mf for a subnormal */
        top = _mm512_sub_epi32(ef, _mm512_set1_epi32(F->bias));
        top = _mm512_mask_add_epi32(top, nzs, subx,
                                    _mm512_sub_epi32(_mm512_srli_epi32(_mm512_castps_si512(_mm512_cvtepi32_ps(mf)), 23),
                                                     _mm512_set1_epi32(127)));
        {
            /* the significand's width: its bit length less its trailing zeros (both from the
               exponents of exact binary32 conversions: sig < 2^24, its lowest bit a power of 2) */
            const __m512i sig = _mm512_mask_or_epi32(mf, nzn, mf, hidden),
                          low = _mm512_and_si512(sig, _mm512_sub_epi32(_mm512_setzero_si512(), sig));
            const __m512i len = _mm512_sub_epi32(_mm512_srli_epi32(_mm512_castps_si512(_mm512_cvtepi32_ps(sig)), 23), b127),
                          tz = _mm512_sub_epi32(_mm512_srli_epi32(_mm512_castps_si512(_mm512_cvtepi32_ps(low)), 23), b127);
            wd = _mm512_mask_max_epi32(wd, nz, wd, _mm512_add_epi32(_mm512_sub_epi32(len, tz), _mm512_set1_epi32(1)));
        }
        e = _mm512_mask_mov_epi32(none, nz, _mm512_max_epi32(top, emin));
        lo = _mm512_mask_min_epi32(lo, nz, lo, top);
        hi = _mm512_mask_max_epi32(hi, nz, hi, top);
        mx = _mm512_max_epi32(mx, e);
        _mm512_mask_storeu_epi32(E + i, in, e);
        _mm512_mask_storeu_ps(f + i, in, _mm512_castsi512_ps(fb));
        if (isbad | issub) {
            if (bad) {
                for (int q = 0; q < 16; q++) {
                    bad[i + q] |= (unsigned char)(isbad >> q & 1);
                    sub[i + q] |= (unsigned char)(issub >> q & 1);
                }
            }
            anybad |= isbad;
            anysub |= issub;
        }
    }
    st->lo = _mm512_reduce_min_epi32(lo);
    st->hi = _mm512_reduce_max_epi32(hi);
    st->maxE = _mm512_reduce_max_epi32(mx);
    st->wide = _mm512_reduce_max_epi32(wd);
    st->anybad = anybad != 0;
    st->anysub = anysub != 0;
    st->anynof = 0;
}
#else
void sfp8mu_lean8(const udecoder *D, const ulean8 *t, const uint8_t *codes, int64_t n, int32_t *E, float *f,
                  unsigned char *bad, unsigned char *sub, ulean *st)
{
    (void)D, (void)t, (void)codes, (void)n, (void)E, (void)f, (void)bad, (void)sub, (void)st;
}

void sfp8mu_lean_ieee(const uctx *g, const udecoder *D, const void *codes, int64_t n, int32_t *E, float *f,
                      unsigned char *bad, unsigned char *sub, ulean *st)
{
    (void)g, (void)D, (void)codes, (void)n, (void)E, (void)f, (void)bad, (void)sub, (void)st;
}
#endif

/*
 * The lean decodings at SIMD level 1 (AVX2): eight codes at a time, the same results as
 * sfp8mu_lean8 / sfp8mu_lean_ieee (the same arithmetic in 8-lane vectors, lane masks as
 * vectors; a tail of fewer than eight codes through zeroed buffers).
 */
#if MM_SIMD
/* the lane-wise min / max of eight int32 */
MM_TGT256 static int32_t hmin8(__m256i v)
{
    int32_t a[8], m;
    _mm256_storeu_si256((__m256i *)a, v);
    m = a[0];
    for (int q = 1; q < 8; q++) m = a[q] < m ? a[q] : m;
    return m;
}

MM_TGT256 static int32_t hmax8(__m256i v)
{
    int32_t a[8], m;
    _mm256_storeu_si256((__m256i *)a, v);
    m = a[0];
    for (int q = 1; q < 8; q++) m = a[q] > m ? a[q] : m;
    return m;
}

/* lanes q < cnt (all ones) */
MM_TGT256 static inline __m256i first8(int64_t cnt)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cnt < 8 ? cnt : 8)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* the results of lanes q < cnt stored (E, f), their bad / sub bits from masks mb, ms */
MM_TGT256 static inline void store8(int64_t cnt, int32_t *E, float *f, __m256i e, __m256 v)
{
    if (cnt >= 8) {
        _mm256_storeu_si256((__m256i *)E, e);
        _mm256_storeu_ps(f, v);
    } else {
        int32_t te[8];
        float tf[8];
        _mm256_storeu_si256((__m256i *)te, e);
        _mm256_storeu_ps(tf, v);
        memcpy(E, te, 4 * (size_t)cnt);
        memcpy(f, tf, 4 * (size_t)cnt);
    }
}

MM_TGT256 void sfp8mu_lean8_256(const udecoder *D, const ulean8 *t, const uint8_t *codes, int64_t n, int32_t *E,
                                float *f, unsigned char *bad, unsigned char *sub, ulean *st)
{
    const __m256i none = _mm256_set1_epi32(NONE), emin = _mm256_set1_epi32((int)D->emin);
    __m256i lo = _mm256_set1_epi32(-NONE), hi = none, mx = none, fls = _mm256_setzero_si256();
    for (int64_t i = 0; i < n; i += 8) {
        const int64_t cnt = n - i;
        const __m256i in = first8(cnt);
        uint8_t buf[8] = {0};
        __m256i c, top, fl, nz, e;
        __m256 v;
        memcpy(buf, codes + i, (size_t)(cnt < 8 ? cnt : 8));
        c = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)buf));
        top = _mm256_i32gather_epi32(t->top, c, 4);
        fl = _mm256_and_si256(in, _mm256_i32gather_epi32(t->fl, c, 4));
        v = _mm256_i32gather_ps(t->f, c, 4);
        nz = _mm256_and_si256(in, _mm256_cmpgt_epi32(top, _mm256_set1_epi32(NONE / 2 - 1)));
        e = _mm256_blendv_epi8(none, _mm256_max_epi32(top, emin), nz);
        lo = _mm256_blendv_epi8(lo, _mm256_min_epi32(lo, top), nz);
        hi = _mm256_blendv_epi8(hi, _mm256_max_epi32(hi, top), nz);
        mx = _mm256_max_epi32(mx, e);
        store8(cnt, E + i, f + i, e, v);
        if (!_mm256_testz_si256(fl, fl)) {
            if (bad) {
                int32_t ff[8];
                _mm256_storeu_si256((__m256i *)ff, fl);
                for (int q = 0; q < 8 && q < cnt; q++) {
                    bad[i + q] |= (unsigned char)(ff[q] & 1);
                    sub[i + q] |= (unsigned char)(ff[q] >> 1 & 1);
                }
            }
            fls = _mm256_or_si256(fls, fl);
        }
    }
    st->lo = hmin8(lo);
    st->hi = hmax8(hi);
    st->maxE = hmax8(mx);
    {
        int32_t a[8], all = 0;
        _mm256_storeu_si256((__m256i *)a, fls);
        for (int q = 0; q < 8; q++) all |= a[q];
        st->anybad = all & 1;
        st->anysub = all >> 1 & 1;
        st->anynof = all >> 2 & 1;
    }
}

MM_TGT256 void sfp8mu_lean_ieee256(const uctx *g, const udecoder *D, const void *codes, int64_t n, int32_t *E,
                                   float *f, unsigned char *bad, unsigned char *sub, ulean *st)
{
    const sfp8_format *F = D->f;
    const int man = F->man_bits, w32 = F->bits == 32;
    const __m256i mmask = _mm256_set1_epi32((1 << man) - 1), emax = _mm256_set1_epi32((1 << F->exp_bits) - 1);
    const __m256i rebias = _mm256_set1_epi32(127 - F->bias), none = _mm256_set1_epi32(NONE);
    const __m256i emin = _mm256_set1_epi32((int)D->emin), subx = _mm256_set1_epi32(1 - F->bias - man);
    const __m256i zero = _mm256_setzero_si256(), b127 = _mm256_set1_epi32(127), hidden = _mm256_set1_epi32(1 << man);
    const int s1 = (1 - F->bias - man) / 2, s2 = 1 - F->bias - man - s1; /* as sfp8mu_lean_ieee */
    const __m256 ulp = _mm256_castsi256_ps(_mm256_set1_epi32((127 + s1) << 23));
    const __m256 smin = _mm256_castsi256_ps(_mm256_set1_epi32((127 + s2) << 23));
    const __m256i insub = _mm256_set1_epi32(g->md->in_subnormals ? -1 : 0);
    __m256i lo = _mm256_set1_epi32(-NONE), hi = none, mx = none, wd = zero, anybad = zero, anysub = zero;
    for (int64_t i = 0; i < n; i += 8) {
        const int64_t cnt = n - i;
        const __m256i in = first8(cnt);
        __m256i u;
        if (cnt >= 8)
            u = w32 ? _mm256_loadu_si256((const __m256i *)((const uint32_t *)codes + i))
                    : _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)codes + i)));
        else {
            uint32_t b32[8] = {0};
            uint16_t b16[8] = {0};
            if (w32) memcpy(b32, (const uint32_t *)codes + i, 4 * (size_t)cnt);
            else memcpy(b16, (const uint16_t *)codes + i, 2 * (size_t)cnt);
            u = w32 ? _mm256_loadu_si256((const __m256i *)b32) : _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)b16));
        }
        const __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(w32 ? 0x7fffffff : 0x7fff));
        const __m256i ef = _mm256_srli_epi32(mag, man), mf = _mm256_and_si256(mag, mmask);
        const __m256i sgn = _mm256_slli_epi32(_mm256_srli_epi32(u, w32 ? 31 : 15), 31);
        const __m256i isbad = _mm256_and_si256(_mm256_cmpeq_epi32(ef, emax), in);
        const __m256i e0 = _mm256_cmpeq_epi32(ef, zero);
        const __m256i issub = _mm256_andnot_si256(_mm256_cmpeq_epi32(mf, zero), _mm256_and_si256(e0, in));
        const __m256i nzn = _mm256_andnot_si256(_mm256_or_si256(e0, isbad), in); /* normal values */
        const __m256i nzs = _mm256_and_si256(issub, insub);                        /* subnormal values kept */
        const __m256i nz = _mm256_or_si256(nzn, nzs);
        /* exact; the fraction of the subnormal lanes only (0 elsewhere): a subnormal binary32
           product in every lane (bfloat16: mf 2^-133) costs a microcode assist per multiply */
        const __m256 fs = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_and_si256(mf, nzs)), ulp), smin);
        const __m256i fn = _mm256_or_si256(_mm256_slli_epi32(_mm256_add_epi32(ef, rebias), 23),
                                           _mm256_slli_epi32(mf, 23 - man));
        const __m256i fb = _mm256_and_si256(
            nz, _mm256_or_si256(_mm256_blendv_epi8(_mm256_and_si256(nzn, fn), _mm256_castps_si256(fs), nzs), sgn));
        __m256i top = _mm256_sub_epi32(ef, _mm256_set1_epi32(F->bias)), e;
        top = _mm256_blendv_epi8(
            top, _mm256_add_epi32(subx, _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(mf)), 23), b127)),
            nzs);
        {
            /* the significand's width, as sfp8mu_lean_ieee */
            const __m256i sig = _mm256_or_si256(mf, _mm256_and_si256(nzn, hidden)),
                          low = _mm256_and_si256(sig, _mm256_sub_epi32(zero, sig));
            const __m256i len = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(sig)), 23), b127),
                          tz = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(low)), 23), b127);
            wd = _mm256_max_epi32(wd, _mm256_and_si256(nz, _mm256_add_epi32(_mm256_sub_epi32(len, tz), _mm256_set1_epi32(1))));
        }
        e = _mm256_blendv_epi8(none, _mm256_max_epi32(top, emin), nz);
        lo = _mm256_blendv_epi8(lo, _mm256_min_epi32(lo, top), nz);
        hi = _mm256_blendv_epi8(hi, _mm256_max_epi32(hi, top), nz);
        mx = _mm256_max_epi32(mx, e);
        store8(cnt, E + i, f + i, e, _mm256_castsi256_ps(fb));
        {
            const __m256i any = _mm256_or_si256(isbad, issub);
            if (!_mm256_testz_si256(any, any)) {
                if (bad) {
                    const unsigned mb = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(isbad));
                    const unsigned ms = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(issub));
                    for (int q = 0; q < 8 && q < cnt; q++) {
                        bad[i + q] |= (unsigned char)(mb >> q & 1);
                        sub[i + q] |= (unsigned char)(ms >> q & 1);
                    }
                }
                anybad = _mm256_or_si256(anybad, isbad);
                anysub = _mm256_or_si256(anysub, issub);
            }
        }
    }
    st->lo = hmin8(lo);
    st->hi = hmax8(hi);
    st->maxE = hmax8(mx);
    st->wide = hmax8(wd);
    st->anybad = !_mm256_testz_si256(anybad, anybad);
    st->anysub = !_mm256_testz_si256(anysub, anysub);
    st->anynof = 0;
}
#else
void sfp8mu_lean8_256(const udecoder *D, const ulean8 *t, const uint8_t *codes, int64_t n, int32_t *E, float *f,
                      unsigned char *bad, unsigned char *sub, ulean *st)
{
    (void)D, (void)t, (void)codes, (void)n, (void)E, (void)f, (void)bad, (void)sub, (void)st;
}

void sfp8mu_lean_ieee256(const uctx *g, const udecoder *D, const void *codes, int64_t n, int32_t *E, float *f,
                         unsigned char *bad, unsigned char *sub, ulean *st)
{
    (void)g, (void)D, (void)codes, (void)n, (void)E, (void)f, (void)bad, (void)sub, (void)st;
}
#endif
