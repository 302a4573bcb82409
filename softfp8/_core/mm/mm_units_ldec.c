/* The two-term alignment kernel's operand decoding (mm_units_ldec.h): decoders of the
 * operand formats, and lines of codes decoded sixteen at a time into B's panels (BIX) and
 * A's rows, exponents as bytes for emax8_512 (mm_units_late.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "mm.h"
#include "mm_units_ldec.h"
#include "mm_value.h"

int sfp8ml_ldec_init(const uctx *g, ldec *F, const sfp8_format *f, int64_t count, int scaled)
{
    memset(F, 0, sizeof *F);
    F->arith = sfp8mu_ieee_layout(f) && f->bits <= 32 && f->man_bits <= 23; /* (19 bits: TF32, mm_units.c) */
    F->M = f->man_bits;
    F->sbit = f->bits - 1;
    F->bias = (int32_t)f->bias;
    F->emin = (int32_t)fmt_emin(f);
    F->in_sub = g->md->in_subnormals;
    F->mask = f->bits >= 32 ? ~(uint32_t)0 : ((uint32_t)1 << f->bits) - 1;
    F->emax = ((uint32_t)1 << f->exp_bits) - 1;
    F->scaled = scaled;
    F->subscale = ldexpf(1.0f, F->scaled ? -f->man_bits : (int)(1 - f->bias - f->man_bits));
    return F->arith || sfp8mu_decoder_init(g, &F->D, f, fmt_emin(f), count);
}



#if MM_SIMD
/* the per-column NaN / infinity and subnormal flags of B from the SIMD decoders' masks (cb:
   pp / 16 masks of bad columns, then pp / 16 of subnormal ones), cb freed */
void sfp8ml_column_flags(__mmask16 *cb, int64_t pp, int64_t p, unsigned char *colbad, unsigned char *colsub)
{
    for (int64_t j = 0; j < p; j++) {
        colbad[j] = (unsigned char)(cb[j / 16] >> (j % 16) & 1);
        colsub[j] = (unsigned char)(cb[pp / 16 + j / 16] >> (j % 16) & 1);
    }
    free(cb);
}

/* n binary16 codes at src (contiguous) decoded as ldecode does, sixteen at a time: values
 * f, nominal exponents E (sixteen t at f + t / 16 * cs + t % 16); *bad, *sub: per lane of the sixteen (bits of masks), *maxE */
MM_TGT512 void sfp8ml_decode_f16_512(const uint16_t *src, int64_t n, int in_sub, float *f, int32_t *E,
                                     ptrdiff_t cs, __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes)
{
    const __m512i none = _mm512_set1_epi32(NONE), e31 = _mm512_set1_epi32(31);
    __m512i mx = _mm512_set1_epi32(*maxE);
    for (int64_t t = 0; t < n; t += 16) {
        __mmask16 ld = n - t >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - t)) - 1);
        __m256i h = _mm256_maskz_loadu_epi16(ld, src + t);
        __m512i w = _mm512_cvtepu16_epi32(h), e5 = _mm512_and_si512(_mm512_srli_epi32(w, 10), e31);
        __m512i mm = _mm512_and_si512(w, _mm512_set1_epi32(0x3ff)), e;
        __m512 v = _mm512_cvtph_ps(h); /* exact */
        __mmask16 isbad = _mm512_cmpeq_epi32_mask(e5, e31), e0 = _mm512_cmpeq_epi32_mask(e5, _mm512_setzero_si512());
        __mmask16 issub = e0 & _mm512_test_epi32_mask(mm, mm), normal = (__mmask16)~(isbad | e0);
        __mmask16 keep = normal | (in_sub ? issub : 0);
        e = _mm512_mask_blend_epi32(normal, _mm512_set1_epi32(-14), _mm512_sub_epi32(e5, _mm512_set1_epi32(15)));
        e = _mm512_mask_blend_epi32(keep, none, e);
        v = _mm512_maskz_mov_ps(keep | (e0 & (__mmask16)~issub), v); /* zeros keep their sign */
        _mm512_mask_storeu_ps(f + t / 16 * cs, ld, v);
        _mm512_mask_storeu_epi32(E + t / 16 * cs, ld, e);
        mx = _mm512_mask_max_epi32(mx, ld, mx, e);
        if (lanes) { /* lane q of every sixteen: column t + q of a row of B */
            bad[t / 16] |= isbad & ld;
            sub[t / 16] |= issub & ld;
        } else {
            bad[0] |= isbad & ld;
            sub[0] |= issub & ld;
        }
    }
    *maxE = _mm512_reduce_max_epi32(mx);
}

/* n codes of an IEEE-layout format (ldec.arith: bfloat16, TF32's 19 bits; code size sz, 2 or 4) at
 * src (contiguous) decoded as ldecode does, sixteen at a time; f, E, bad, sub, maxE as
 * decode_f16_512's */
MM_TGT512 void sfp8ml_decode_arith_512(const ldec *F, const char *src, int sz, int64_t n, float *f, int32_t *E,
                                       ptrdiff_t cs, __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes)
{
    const __m512i emx = _mm512_set1_epi32((int32_t)F->emax), mm = _mm512_set1_epi32((1 << F->M) - 1);
    const __m512i zero = _mm512_setzero_si512();
    __m512i mx = _mm512_set1_epi32(*maxE);
    for (int64_t t = 0; t < n; t += 16) {
        __mmask16 ld = n - t >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - t)) - 1);
        __m512i c = sz == 2 ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(ld, src + 2 * t))
                            : _mm512_maskz_loadu_epi32(ld, src + 4 * t);
        __m512i e, m, sg, vn, vs, x;
        __mmask16 isbad, e0, issub, normal;
        c = _mm512_and_si512(c, _mm512_set1_epi32((int32_t)F->mask));
        e = _mm512_and_si512(_mm512_srli_epi32(c, (unsigned)F->M), emx);
        m = _mm512_and_si512(c, mm);
        sg = _mm512_slli_epi32(_mm512_srli_epi32(c, (unsigned)F->sbit), 31);
        isbad = _mm512_cmpeq_epi32_mask(e, emx);
        e0 = _mm512_cmpeq_epi32_mask(e, zero);
        issub = e0 & _mm512_test_epi32_mask(m, m);
        normal = (__mmask16)~(isbad | e0);
        x = _mm512_sub_epi32(e, _mm512_set1_epi32(F->bias)); /* the nominal exponent */
        vn = _mm512_or_si512(_mm512_or_si512(sg, _mm512_slli_epi32(m, (unsigned)(23 - F->M))),
                             _mm512_slli_epi32(F->scaled ? _mm512_set1_epi32(127) : _mm512_add_epi32(x, _mm512_set1_epi32(127)), 23));
        vs = _mm512_or_si512(sg, _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(F->subscale))));
        x = _mm512_mask_blend_epi32(normal, _mm512_set1_epi32(F->in_sub ? F->emin : NONE), x);
        x = _mm512_mask_blend_epi32(normal | (F->in_sub ? issub : 0), _mm512_set1_epi32(NONE), x);
        vn = _mm512_mask_blend_epi32(normal, _mm512_maskz_mov_epi32(F->in_sub ? issub : 0, vs), vn);
        _mm512_mask_storeu_ps(f + t / 16 * cs, ld, _mm512_castsi512_ps(vn));
        _mm512_mask_storeu_epi32(E + t / 16 * cs, ld, x);
        mx = _mm512_mask_max_epi32(mx, ld, mx, x);
        if (lanes) {
            bad[t / 16] |= isbad & ld;
            sub[t / 16] |= issub & ld;
        } else {
            bad[0] |= isbad & ld;
            sub[0] |= issub & ld;
        }
    }
    *maxE = _mm512_reduce_max_epi32(mx);
}
#endif

#if MM_SIMD

int sfp8ml_gtab_init(gtab *t, const ldec *F, int sz)
{
    if (F->arith || !F->D.tab || sz != 1 || F->D.mask > 255) return 0;
    t->mask = (uint32_t)F->D.mask;
    for (uint32_t c = 0; c <= t->mask; c++) {
        t->f[c] = F->scaled ? scaled_value(&F->D.tab[c]) : F->D.tab[c].f;
        t->Efl[c] = (int32_t)((uint32_t)F->D.tab[c].E << 2) | F->D.tab[c].bad | F->D.tab[c].sub << 1;
    }
    return 1;
}

/* the first n / 16 * 16 of n one-byte codes at src decoded by gathers (as ldecode): sixteen
 * t at f + t / 16 * cs + t % 16 (perm: each sixteen's even positions first, then its odd
 * ones: the odd/even slots of blocks of 16); bad, sub, maxE as decode_f16_512's */
MM_TGT512 void sfp8ml_decode_tab_512(const gtab *tb, const uint8_t *src, int64_t n, float *f, int32_t *E, ptrdiff_t cs,
                                     int perm, __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes)
{
    const __m512i msk = _mm512_set1_epi32((int)tb->mask), one = _mm512_set1_epi32(1), two = _mm512_set1_epi32(2);
    const __m512i pidx = _mm512_set_epi32(15, 13, 11, 9, 7, 5, 3, 1, 14, 12, 10, 8, 6, 4, 2, 0);
    __m512i mx = _mm512_set1_epi32(*maxE);
    for (int64_t t = 0; t + 16 <= n; t += 16) {
        __m512i idx = _mm512_and_si512(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(src + t))), msk);
        __m512 v = _mm512_i32gather_ps(idx, tb->f, 4);
        __m512i fl = _mm512_i32gather_epi32(idx, tb->Efl, 4), e = _mm512_srai_epi32(fl, 2);
        __mmask16 b = _mm512_test_epi32_mask(fl, one), sb = _mm512_test_epi32_mask(fl, two);
        if (perm) {
            v = _mm512_permutexvar_ps(pidx, v);
            e = _mm512_permutexvar_epi32(pidx, e);
        }
        _mm512_storeu_ps(f + t / 16 * cs, v);
        _mm512_storeu_si512(E + t / 16 * cs, e);
        mx = _mm512_max_epi32(mx, e);
        if (lanes) {
            bad[t / 16] |= b;
            sub[t / 16] |= sb;
        } else {
            bad[0] |= b;
            sub[0] |= sb;
        }
    }
    *maxE = _mm512_reduce_max_epi32(mx);
}
#endif

int sfp8ml_is_f16(const sfp8_format *f)
{
    return f->bits == 16 && f->is_signed && f->exp_bits == 5 && f->man_bits == 10 && f->bias == 15 &&
           f->specials == SFP8_SPECIALS_IEEE && f->subnormals == SFP8_SUBNORMALS_IEEE;
}

void *sfp8ml_llines(int64_t n, float **f, int32_t **E)
{
    char *mem = malloc((size_t)(n > 0 ? n : 1) * 8 + 64);
    if (!mem) return NULL;
    *f = (float *)mem;
    *E = (int32_t *)(mem + 4 * (n > 0 ? n : 1));
    return mem;
}


#if MM_SIMD
/* emax8_512's operands: B's exponents (panels, BIX) as bytes, panel by panel (bytes_b), and the four
 * rows' exponents at l as the bytes of aE4[l] (bytes_a); NONE saturates to -128 */
MM_TGT512 void sfp8ml_bytes_b(const int32_t *bE, int8_t *bE8, int64_t k, int64_t pp)
{
    for (int64_t j = 0; j < pp; j += LW)
        for (int64_t l = 0; l < k; l++)
            _mm_storeu_si128((__m128i *)(bE8 + j * k + l * LW),
                             _mm512_cvtsepi32_epi8(_mm512_loadu_si512(bE + BIX(l, j))));
}

MM_TGT512 void sfp8ml_bytes_a(const int32_t *const *aEr, uint32_t *aE4, int64_t k)
{
    int64_t l = 0;
    for (; l + 16 <= k; l += 16) {
        __m128i r0 = _mm512_cvtsepi32_epi8(_mm512_loadu_si512(aEr[0] + l));
        __m128i r1 = _mm512_cvtsepi32_epi8(_mm512_loadu_si512(aEr[1] + l));
        __m128i r2 = _mm512_cvtsepi32_epi8(_mm512_loadu_si512(aEr[2] + l));
        __m128i r3 = _mm512_cvtsepi32_epi8(_mm512_loadu_si512(aEr[3] + l));
        __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
        __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
        _mm_storeu_si128((__m128i *)(aE4 + l), _mm_unpacklo_epi16(lo01, lo23));
        _mm_storeu_si128((__m128i *)(aE4 + l + 4), _mm_unpackhi_epi16(lo01, lo23));
        _mm_storeu_si128((__m128i *)(aE4 + l + 8), _mm_unpacklo_epi16(hi01, hi23));
        _mm_storeu_si128((__m128i *)(aE4 + l + 12), _mm_unpackhi_epi16(hi01, hi23));
    }
    for (; l < k; l++)
        aE4[l] = (uint32_t)(uint8_t)sat8(aEr[0][l]) | (uint32_t)(uint8_t)sat8(aEr[1][l]) << 8 |
                 (uint32_t)(uint8_t)sat8(aEr[2][l]) << 16 | (uint32_t)(uint8_t)sat8(aEr[3][l]) << 24;
}
#endif

#if MM_SIMD
/* sixteen exponents t of E[0 .. n - 1] (runs: at E + t / 16 * 2 LW, B's panels; else contiguous) */
#define EXP16(E, t, n, runs)                                                                                           \
    _mm512_maskz_loadu_epi32((n) - (t) >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << ((n) - (t))) - 1),            \
                             (E) + ((runs) ? (t) / 16 * 2 * LW : (t)))

/* the exponents E[0 .. n - 1] NONE or within -32 .. 31: lk.scaled operands whose products then
 * take fstep_512 and emax8_512 held as their values */
MM_TGT512 int sfp8ml_in_bytes(const int32_t *E, int64_t n, int runs)
{
    __mmask16 out = 0;
    for (int64_t t = 0; t < n; t += 16) {
        __m512i e = EXP16(E, t, n, runs);
        out |= _mm512_cmpgt_epi32_mask(e, _mm512_set1_epi32(NONE / 2)) &
               _mm512_cmpgt_epu32_mask(_mm512_add_epi32(e, _mm512_set1_epi32(32)), _mm512_set1_epi32(63));
    }
    return !out;
}

/* values held scaled, v 2^-E, back to v (E within -32 .. 31, or NONE: v is 0): exact, normal
 * binary32 numbers (at most 12 significant bits, at least 2^-44 in magnitude) */
MM_TGT512 void sfp8ml_unscale(float *v, const int32_t *E, int64_t n, int runs)
{
    for (int64_t t = 0; t < n; t += 16) {
        __mmask16 ld = n - t >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - t)) - 1);
        __m512i e = EXP16(E, t, n, runs);
        float *x = v + (runs ? t / 16 * 2 * LW : t);
        e = _mm512_maskz_mov_epi32(_mm512_cmpgt_epi32_mask(e, _mm512_set1_epi32(NONE / 2)), e);
        _mm512_mask_storeu_ps(x, ld, _mm512_mul_ps(_mm512_maskz_loadu_ps(ld, x), _mm512_castsi512_ps(_mm512_slli_epi32(
                                                                                 _mm512_add_epi32(e, _mm512_set1_epi32(127)), 23))));
    }
}
#undef EXP16
#endif
