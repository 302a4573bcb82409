/* The two-term alignment kernel's operand decoding (mm_units_ldec.h): decoders of the
 * operand formats, and lines of codes decoded sixteen at a time into B's panels (BIX) and
 * A's rows, exponents as bytes for emax8_512 (mm_units_late.c); and the kernel's level-1
 * (AVX2) binary64 steps, sfp8ml_late_dbl_256 (at the end). */
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

/* sfp8ml_in_bytes and sfp8ml_unscale element by element (level 1: B's panels and the rows of A) */
int sfp8ml_in_bytes_c(const int32_t *E, int64_t n, int runs)
{
    int out = 0;
    for (int64_t t = 0; t < n; t++) {
        int32_t e = E[runs ? t / 16 * 2 * LW + t % 16 : t];
        out |= e > NONE / 2 && (e < -32 || e > 31);
    }
    return !out;
}

void sfp8ml_unscale_c(float *v, const int32_t *E, int64_t n, int runs)
{
    for (int64_t t = 0; t < n; t++) {
        int64_t x = runs ? t / 16 * 2 * LW + t % 16 : t;
        uint32_t u = (uint32_t)(127 + (E[x] > NONE / 2 ? E[x] : 0)) << 23;
        float s;
        memcpy(&s, &u, 4);
        v[x] *= s; /* exact: as sfp8ml_unscale's */
    }
}

#if MM_SIMD
/* level 1: the flags of a decoder's lanes (b, sb: bits from lane t % 16 up) into bad, sub (lanes: per
 * sixteen, the mask of t / 16; else bad[0], sub[0]) */
static inline void flags16(__mmask16 *bad, __mmask16 *sub, int64_t t, unsigned b, unsigned sb, int lanes)
{
    int64_t x = lanes ? t / 16 : 0;
    int s = lanes ? (int)(t % 16) : 0;
    bad[x] |= (__mmask16)(b << s);
    sub[x] |= (__mmask16)(sb << s);
}

/* the largest of eight 32-bit lanes */
MM_TGT256 static inline int32_t hmax8(__m256i v)
{
    __m128i x = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    x = _mm_max_epi32(x, _mm_shuffle_epi32(x, 0x4e));
    x = _mm_max_epi32(x, _mm_shuffle_epi32(x, 0xb1));
    return _mm_cvtsi128_si32(x);
}

/* level 1 (AVX2): n codes of an IEEE-layout format (ldec.arith: float16, bfloat16, TF32's 19 bits;
 * code size sz, 2 or 4) at src (contiguous) decoded as ldecode does, eight at a time (the same
 * lanes as decode_arith_512's: v, E, the flags); f, E at f + t / 16 * cs + t % 16, bad, sub (per
 * lane of sixteen where lanes), maxE as decode_arith_512's.  The last n % 8 codes through a
 * buffer padded with the code 0 (a zero: E NONE, no flag), their lanes not stored. */
MM_TGT256 void sfp8ml_decode_arith_256(const ldec *F, const char *src, int sz, int64_t n, float *f, int32_t *E,
                                       ptrdiff_t cs, __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes)
{
    const __m256i emx = _mm256_set1_epi32((int32_t)F->emax), mm = _mm256_set1_epi32((1 << F->M) - 1);
    const __m256i zero = _mm256_setzero_si256(), msk = _mm256_set1_epi32((int32_t)F->mask);
    const __m256i nne = _mm256_set1_epi32(F->in_sub ? F->emin : NONE), none = _mm256_set1_epi32(NONE);
    const __m256i bias = _mm256_set1_epi32(F->bias), b127 = _mm256_set1_epi32(127);
    const __m256 subscale = _mm256_set1_ps(F->subscale);
    __m256i mx = _mm256_set1_epi32(*maxE);
    for (int64_t t = 0; t < n; t += 8) {
        uint32_t buf[8] = {0};
        __m256i c, e, mn, sg, vn, vs, x, isbad, e0, issub, normal, keep, ld = _mm256_set1_epi32(-1);
        if (n - t >= 8) {
            c = sz == 2 ? _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + 2 * t)))
                        : _mm256_loadu_si256((const __m256i *)(src + 4 * t));
        } else {
            memcpy(buf, src + sz * t, (size_t)(sz * (n - t)));
            c = sz == 2 ? _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)buf))
                        : _mm256_loadu_si256((const __m256i *)buf);
            ld = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(n - t)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        }
        c = _mm256_and_si256(c, msk);
        e = _mm256_and_si256(_mm256_srli_epi32(c, F->M), emx);
        mn = _mm256_and_si256(c, mm);
        sg = _mm256_slli_epi32(_mm256_srli_epi32(c, F->sbit), 31);
        isbad = _mm256_cmpeq_epi32(e, emx);
        e0 = _mm256_cmpeq_epi32(e, zero);
        issub = _mm256_andnot_si256(_mm256_cmpeq_epi32(mn, zero), e0);
        normal = _mm256_andnot_si256(_mm256_or_si256(isbad, e0), _mm256_set1_epi32(-1));
        keep = F->in_sub ? _mm256_or_si256(normal, issub) : normal;
        x = _mm256_sub_epi32(e, bias); /* the nominal exponent */
        vn = _mm256_or_si256(_mm256_or_si256(sg, _mm256_slli_epi32(mn, 23 - F->M)),
                             _mm256_slli_epi32(F->scaled ? b127 : _mm256_add_epi32(x, b127), 23));
        vs = _mm256_or_si256(sg, _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(mn), subscale)));
        x = _mm256_blendv_epi8(nne, x, normal);
        x = _mm256_blendv_epi8(none, x, keep);
        vn = _mm256_blendv_epi8(F->in_sub ? _mm256_and_si256(issub, vs) : zero, vn, normal);
        if (n - t >= 8) {
            _mm256_storeu_si256((__m256i *)(f + t / 16 * cs + t % 16), vn);
            _mm256_storeu_si256((__m256i *)(E + t / 16 * cs + t % 16), x);
        } else {
            _mm256_maskstore_epi32((int *)(f + t / 16 * cs + t % 16), ld, vn);
            _mm256_maskstore_epi32(E + t / 16 * cs + t % 16, ld, x);
        }
        mx = _mm256_max_epi32(mx, x); /* the padding: NONE */
        flags16(bad, sub, t, (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(isbad)),
                (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(issub)), lanes);
    }
    *maxE = hmax8(mx);
}

/* level 1 (AVX2): decode_tab_512's decoding (the first n / 16 * 16 codes, sixteen at a time: two
 * gathers of eight; perm: the even positions of each sixteen first, then the odd ones, the
 * codes reordered before the gathers); f, E, bad, sub, maxE as decode_tab_512's */
MM_TGT256 void sfp8ml_decode_tab_256(const gtab *tb, const uint8_t *src, int64_t n, float *f, int32_t *E, ptrdiff_t cs,
                                     int perm, __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes)
{
    const __m256i msk = _mm256_set1_epi32((int)tb->mask);
    const __m128i pidx = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    __m256i mx = _mm256_set1_epi32(*maxE);
    for (int64_t t = 0; t + 16 <= n; t += 16) {
        __m128i c = _mm_loadu_si128((const __m128i *)(src + t));
        unsigned b = 0, sb = 0;
        if (perm) c = _mm_shuffle_epi8(c, pidx);
        for (int h = 0; h < 2; h++) {
            __m256i idx = _mm256_and_si256(_mm256_cvtepu8_epi32(h ? _mm_srli_si128(c, 8) : c), msk);
            __m256 v = _mm256_i32gather_ps(tb->f, idx, 4);
            __m256i fl = _mm256_i32gather_epi32(tb->Efl, idx, 4), e = _mm256_srai_epi32(fl, 2);
            _mm256_storeu_ps(f + t / 16 * cs + 8 * h, v);
            _mm256_storeu_si256((__m256i *)(E + t / 16 * cs + 8 * h), e);
            mx = _mm256_max_epi32(mx, e);
            b |= (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(fl, 31))) << (8 * h);
            sb |= (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(fl, 30))) << (8 * h);
        }
        flags16(bad, sub, t, b, sb, lanes);
    }
    *maxE = hmax8(mx);
}

/* level 1 (AVX2): sfp8ml_in_bytes_c and sfp8ml_unscale_c eight at a time (runs: n a multiple of
 * 16, B's panels; else the last n % 8 element by element) */
MM_TGT256 int sfp8ml_in_bytes_256(const int32_t *E, int64_t n, int runs)
{
    const __m256i lo = _mm256_set1_epi32(-32), hi = _mm256_set1_epi32(31), nn = _mm256_set1_epi32(NONE / 2);
    __m256i out = _mm256_setzero_si256();
    int64_t t = 0;
    for (; t + 8 <= n; t += 8) {
        __m256i e = _mm256_loadu_si256((const __m256i *)(E + (runs ? t / 16 * 2 * LW + t % 16 : t)));
        out = _mm256_or_si256(out, _mm256_and_si256(_mm256_cmpgt_epi32(e, nn), _mm256_or_si256(
                                                        _mm256_cmpgt_epi32(lo, e), _mm256_cmpgt_epi32(e, hi))));
    }
    return _mm256_testz_si256(out, out) && sfp8ml_in_bytes_c(E + t, n - t, 0);
}

MM_TGT256 void sfp8ml_unscale_256(float *v, const int32_t *E, int64_t n, int runs)
{
    const __m256i nn = _mm256_set1_epi32(NONE / 2), b127 = _mm256_set1_epi32(127);
    int64_t t = 0;
    for (; t + 8 <= n; t += 8) {
        int64_t x = runs ? t / 16 * 2 * LW + t % 16 : t;
        __m256i e = _mm256_loadu_si256((const __m256i *)(E + x));
        e = _mm256_and_si256(e, _mm256_cmpgt_epi32(e, nn));
        _mm256_storeu_ps(v + x, _mm256_mul_ps(_mm256_loadu_ps(v + x), _mm256_castsi256_ps(_mm256_slli_epi32(
                                                                          _mm256_add_epi32(e, b127), 23))));
    }
    sfp8ml_unscale_c(v + t, E + t, n - t, 0);
}

/* level 1: sfp8ml_bytes_b's bytes (B's exponents saturated to bytes, sixteen a row of each panel),
 * by the saturating packs (packs_epi32 interleaves the 128-bit halves: permute4x64 restores the order) */
MM_TGT256 void sfp8ml_bytes_b_256(const int32_t *bE, int8_t *bE8, int64_t k, int64_t pp)
{
    for (int64_t j = 0; j < pp; j += LW)
        for (int64_t l = 0; l < k; l++) {
            const int32_t *e = bE + BIX(l, j);
            __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(_mm256_loadu_si256((const __m256i *)e),
                                                                    _mm256_loadu_si256((const __m256i *)(e + 8))), 0xd8);
            _mm_storeu_si128((__m128i *)(bE8 + j * k + l * LW),
                             _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
        }
}

/* level 1: sfp8ml_bytes_a's bytes, eight l at a time (saturating packs: per 128-bit lane the four rows'
 * four exponents, transposed to four bytes an l by one shuffle); the last k % 8 by sfp8ml_bytes_a_c */
MM_TGT256 void sfp8ml_bytes_a_256(const int32_t *const *aEr, uint32_t *aE4, int64_t k)
{
    const __m256i tr = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9, 13,
                                        2, 6, 10, 14, 3, 7, 11, 15);
    int64_t l = 0;
    for (; l + 8 <= k; l += 8) {
#define ROW(r) _mm256_loadu_si256((const __m256i *)(aEr[r] + l))
        __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(ROW(0), ROW(1)), _mm256_packs_epi32(ROW(2), ROW(3)));
#undef ROW
        _mm256_storeu_si256((__m256i *)(aE4 + l), _mm256_shuffle_epi8(b, tr));
    }
    if (l < k) {
        const int32_t *rest[LROWS] = {aEr[0] + l, aEr[1] + l, aEr[2] + l, aEr[3] + l};
        sfp8ml_bytes_a_c(rest, aE4 + l, k - l);
    }
}
#endif

/* sfp8ml_bytes_a's bytes element by element (level 1) */
void sfp8ml_bytes_a_c(const int32_t *const *aEr, uint32_t *aE4, int64_t k)
{
    for (int64_t l = 0; l < k; l++)
        aE4[l] = (uint32_t)(uint8_t)sat8(aEr[0][l]) | (uint32_t)(uint8_t)sat8(aEr[1][l]) << 8 |
                 (uint32_t)(uint8_t)sat8(aEr[2][l]) << 16 | (uint32_t)(uint8_t)sat8(aEr[3][l]) << 24;
}

#if MM_SIMD
/*
 * Level 1 (AVX2 + FMA, no AVX-512): the MI300X profiles' two-term steps (lk.dbl: binary32 output,
 * downward alignment, nearest even, zero_addend_exponent -126, W + X <= 50, X <= 20) of two rows
 * (their steps interleaved) and sixteen columns, in two vectors of eight binary32 lanes (products, group sums, odd/even
 * combination) and four binary64 lanes (the step).  The products are mm_units_late.c's group_c
 * (the unit 2^(W - E) built from its exponent bits, or per product for operands held scaled; the
 * conversion with truncation; bits lost: a product no integer), the odd/even groups combined as
 * dblock_512 does (32-bit lanes, arithmetic shift by min(d, 31): the downward alignment of a
 * term below 2^31).
 *
 * DERIVED from core.c round_pack, as mm_units_late.c's lstep and dstep_512 are (same model, same argument): the running
 * value c is held as its binary32 value (normal or zero; E(c) = max(floor(log2 |c|), -126), from
 * its exponent bits, also a zero's: zero_addend_exponent -126).  The step's unit is 2^L with
 * L = max(E_p - W, E(c) - W - X): where E_p >= E(c), L = E_p - W (E(c) - W - X <= E_p - W); where
 * E_p < E(c) the model's unit is 2^(E(c) - W - X), and if E_p - W is larger both terms are
 * multiples of 2^(E_p - W) (c's last bit at E(c) - 23 >= E_p - W as W >= 23), so the sum is the
 * same.  In integers of 2^L: c's term floor(c 2^-L) (c 2^-L exact in binary64: a 24-bit value
 * times a power of two within binary64's range, as |E_p| <= 400 (lk.dbl); floor is the model's
 * downward shr_round, and where c is not shifted (E_p < E(c)) c 2^-L is an integer, so floor
 * changes nothing; FAR, odd/even with E_p - E(c) > 25: truncation, the model's toward-zero
 * mode); |c 2^-L| < 2^(W + X + 1) <= 2^51.  T_p's term: the arithmetic shift of T_p by
 * L - (E_p - W) >= 0 (floor; a count of 32 or more gives 0 or -1, floor of |T_p| < 2^31; a lane
 * without products, E_p NONE: T_p = 0, and c comes back: c is a multiple of 2^(E(c) - 23), so
 * of 2^L).  Their sum S is below 2^52: exact in binary64, and V = S 2^L exact (2^L >= 2^-450);
 * V is the model's T 2^lsb before rounding, so its rounding to P = 24 bits at nearest even is
 * the conversion to binary32 (MXCSR at nearest, no FTZ: mm_fx_clear) where |V| >= 2^-126; a
 * non-zero |V| below 2^-126 (the model's top < emin_o) makes the lane leave (dead), and an
 * overflow (the model's top > emax_o) gives an infinity, which stays infinite through every
 * later step (floor, sums with finite terms, scalings by 2^L: never NaN) and is read at the end.
 * Bits lost: T_p's shifted out, c 2^-L no integer, V not a binary32 number.  Proof:
 * tests/harness/test_harness.py::test_entry (entry block_fma, parts late, late_routes,
 * late_edges, late_avx2_edges), at level 1 (SOFTFP8_SIMD=1 and the machine's level).
 */
#define LA __attribute__((always_inline)) MM_TGT256F static inline

/* the products l0 .. l0 + n - 1 of the row and sixteen columns (two vectors h): their alignment
 * exponents E[h] (NONE: no product) and sums T[h] (group_c's) */
LA void lgroup_256(int SC, int LOST, const lrow *R, const float *af, const int32_t *aE, int64_t l0, int64_t n,
                   __m256i *E, __m256i *T, __m256i *lost)
{
    const lk *K = R->K;
    const __m256i none = _mm256_set1_epi32(NONE), b127 = _mm256_set1_epi32(127);
    __m256i e[2] = {none, none}, t[2], s, tm;
    __m256 sc[2];
#pragma GCC unroll 8
    for (int64_t l = l0; l < l0 + n; l++) {
        __m256i a = _mm256_set1_epi32(aE[l]);
        for (int h = 0; h < 2; h++)
            e[h] = _mm256_max_epi32(e[h], _mm256_add_epi32(a, _mm256_loadu_si256((const __m256i *)(R->bE + l * LPP + 8 * h))));
    }
    for (int h = 0; h < 2; h++) {
        tm = _mm256_cmpgt_epi32(e[h], _mm256_set1_epi32(NONE / 2));
        if (K->has_min) e[h] = _mm256_blendv_epi8(e[h], _mm256_max_epi32(e[h], _mm256_set1_epi32(K->min_exp)), tm);
        s = _mm256_and_si256(tm, _mm256_sub_epi32(_mm256_set1_epi32(K->W), e[h])); /* no product: 2^0 */
        sc[h] = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(s, b127), 23));
        t[h] = _mm256_setzero_si256();
    }
#pragma GCC unroll 8
    for (int64_t l = l0; l < l0 + n; l++) {
        __m256 a = _mm256_set1_ps(af[l]);
        for (int h = 0; h < 2; h++) {
            __m256 v, s2 = sc[h];
            if (SC) { /* a' b' 2^(E(a) + E(b) - E + W), at least 2^-126 (then v < 1) */
                __m256i x = _mm256_add_epi32(_mm256_set1_epi32(aE[l]),
                                             _mm256_loadu_si256((const __m256i *)(R->bE + l * LPP + 8 * h)));
                x = _mm256_max_epi32(_mm256_add_epi32(_mm256_sub_epi32(x, e[h]), _mm256_set1_epi32(127 + K->W)),
                                     _mm256_set1_epi32(1));
                s2 = _mm256_castsi256_ps(_mm256_slli_epi32(x, 23));
            }
            v = _mm256_mul_ps(_mm256_mul_ps(a, _mm256_loadu_ps(R->bf + l * LPP + 8 * h)), s2);
            t[h] = _mm256_add_epi32(t[h], _mm256_cvttps_epi32(v));
            if (LOST)
                lost[h] = _mm256_or_si256(lost[h], _mm256_castps_si256(_mm256_cmp_ps(
                    v, _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), _CMP_NEQ_UQ)));
        }
    }
    E[0] = e[0], E[1] = e[1], T[0] = t[0], T[1] = t[1];
}

/* the step of eight lanes: c (binary32 values) and the block's (T_p, E_p); dead, in: per
 * binary64 half (a tiny result; bits lost), lost: per 32-bit lane */
LA void lstep_256(int FAR, int LOST, int FS, const lk *K, __m256i T, __m256i E, __m256 *c, __m256d *dead, __m256d *in,
                  __m256i *lost)
{
    /* E(c) + 127, E(c) at least -126 (FS: a zero c's 0 gives the same step -- a lane with products
       has E_p - W >= -126, so L = E_p - W either way, and one without has T_p = 0 and c = 0: V = 0) */
    const __m256i e0 = _mm256_srli_epi32(_mm256_slli_epi32(_mm256_castps_si256(*c), 1), 24);
    const __m256i ec = FS ? e0 : _mm256_max_epi32(e0, _mm256_set1_epi32(1));
    const __m256i Eb = _mm256_add_epi32(E, _mm256_set1_epi32(1023 - K->W)); /* E_p - W + 1023 */
    const __m256i ep = _mm256_max_epi32(Eb, _mm256_add_epi32(ec, _mm256_set1_epi32(1023 - 127 - K->W - K->X))); /*
                                                                            L + 1023 */
    const __m256i sh = _mm256_sub_epi32(ep, Eb), Tq = _mm256_srav_epi32(T, sh);
    __m256i far = _mm256_setzero_si256();
    __m128 r[2];
    if (FAR) far = _mm256_cmpgt_epi32(_mm256_sub_epi32(E, ec), _mm256_set1_epi32(25 - 127)); /* E_p - E(c) > 25 */
    if (LOST) lost[0] = _mm256_or_si256(lost[0], _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_sllv_epi32(Tq, sh), T),
                                                                  _mm256_set1_epi32(-1)));
    /* ep's 64-bit units as 0, 2, 1, 3: their low and high 32-bit halves widened in-lane are lanes 0 .. 3
       and 4 .. 7 (ep > 0: zeros above) */
    const __m256i epq = _mm256_permute4x64_epi64(ep, 0xd8);
    for (int h = 0; h < 2; h++) {
#define HALF(v) (h ? _mm256_extracti128_si256(v, 1) : _mm256_castsi256_si128(v))
        __m256d cd = _mm256_cvtps_pd(h ? _mm256_extractf128_ps(*c, 1) : _mm256_castps256_ps128(*c));
        __m256i spb = _mm256_slli_epi64(h ? _mm256_unpackhi_epi32(epq, _mm256_setzero_si256())
                                          : _mm256_unpacklo_epi32(epq, _mm256_setzero_si256()), 52);
        __m256d sp = _mm256_castsi256_pd(spb); /* 2^L */
        __m256d sn = _mm256_castsi256_pd(_mm256_sub_epi64(_mm256_set1_epi64x((int64_t)2046 << 52), spb)); /* 2^-L:
                                                   exponent field 2046 - (L + 1023) = -L + 1023 */
        __m256d x1 = _mm256_mul_pd(cd, sn), a1 = _mm256_floor_pd(x1), V, av;
        if (FAR)
            a1 = _mm256_blendv_pd(a1, _mm256_round_pd(x1, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC),
                                  _mm256_castsi256_pd(_mm256_cvtepi32_epi64(HALF(far))));
        V = _mm256_mul_pd(_mm256_add_pd(a1, _mm256_cvtepi32_pd(HALF(Tq))), sp);
#undef HALF
        r[h] = _mm256_cvtpd_ps(V);
        av = _mm256_and_pd(V, _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX)));
        if (!FS) /* FS: a non-zero S is at least 1, V at least 2^L >= 2^(E_p - W) >= 2^-126 */
            dead[h] = _mm256_or_pd(dead[h], _mm256_and_pd(_mm256_cmp_pd(av, _mm256_set1_pd(0x1p-126), _CMP_LT_OQ),
                                                      _mm256_cmp_pd(av, _mm256_setzero_pd(), _CMP_NEQ_OQ)));
        if (LOST)
            in[h] = _mm256_or_pd(in[h], _mm256_or_pd(_mm256_cmp_pd(a1, x1, _CMP_NEQ_UQ),
                                                     _mm256_cmp_pd(_mm256_cvtps_pd(r[h]), V, _CMP_NEQ_UQ)));
    }
    *c = _mm256_set_m128(r[1], r[0]);
}

/* the odd/even groups combined in 32-bit lanes: each group's T floor-divided by 2^(E_max - E) (the
 * downward alignment rounding; 0 for the larger, vpsravd's sign fill past 31 counts is the floor of
 * |T| < 2^31), summed (|T| < 2^31); E = E_max; LOST: bits shifted out or-ed into *lost */
LA void loe_256(int LOST, __m256i *T, __m256i *E, __m256i To, __m256i Eo, __m256i *lost)
{
    const __m256i m = _mm256_max_epi32(*E, Eo), de = _mm256_sub_epi32(m, *E), dq = _mm256_sub_epi32(m, Eo);
    const __m256i qe = _mm256_srav_epi32(*T, de), qo = _mm256_srav_epi32(To, dq);
    if (LOST)
        *lost = _mm256_or_si256(*lost, _mm256_xor_si256(_mm256_and_si256(_mm256_cmpeq_epi32(_mm256_sllv_epi32(qe, de), *T),
                                                                          _mm256_cmpeq_epi32(_mm256_sllv_epi32(qo, dq), To)),
                                                         _mm256_set1_epi32(-1)));
    *T = _mm256_add_epi32(qe, qo);
    *E = m;
}

/* every block of rows r0 and r0 + 1 (R->afr; their steps interleaved: two independent chains of
 * two vectors): c[r][h] the sixteen running values of each (binary32), cv[r * LW + q] */
LA void lrun_256(int OE, int LOST, int SC, int FS, int GN, const lrow *R, int r0, float *cv, uint8_t *alive,
                 uint8_t *inex)
{
    enum { NR = 2 };
    const lk *K = R->K;
    __m256 c[NR][2];
    __m256d dead[NR][4], in[NR][4];
    __m256i lost[NR][2];
    int32_t lo[NR * LW];
    int64_t dd[NR * LW], ii[NR * LW];
    for (int r = 0; r < NR; r++) {
        c[r][0] = _mm256_loadu_ps(cv + r * LW);
        c[r][1] = _mm256_loadu_ps(cv + r * LW + 8);
        lost[r][0] = lost[r][1] = _mm256_setzero_si256();
        for (int h = 0; h < 4; h++) dead[r][h] = in[r][h] = _mm256_setzero_pd();
    }
    for (int64_t k0 = 0; k0 < R->k; k0 += R->block) {
        int64_t n = R->k - k0 < R->block ? R->k - k0 : R->block, ne = OE ? (n + 1) / 2 : n;
        for (int r = 0; r < NR; r++) {
            const float *af = R->afr[r0 + r];
            const int32_t *aE = R->aEr[r0 + r];
            __m256i E[2], T[2];
            if (GN && ne == GN) /* a whole block: GN products per group, a constant of the instance */
                lgroup_256(SC, LOST, R, af, aE, k0, GN, E, T, lost[r]);
            else
                lgroup_256(SC, LOST, R, af, aE, k0, ne, E, T, lost[r]);
            if (OE) { /* the groups combined in 32-bit lanes: T = T_big + floor(T_small / 2^d), |T| < 2^31 */
                __m256i Eo[2], To[2];
                if (GN && n - ne == GN) lgroup_256(SC, LOST, R, af, aE, k0 + ne, GN, Eo, To, lost[r]);
                else lgroup_256(SC, LOST, R, af, aE, k0 + ne, n - ne, Eo, To, lost[r]);
                for (int h = 0; h < 2; h++) loe_256(LOST, &T[h], &E[h], To[h], Eo[h], &lost[r][h]);
            }
            lstep_256(OE, LOST, FS, K, T[0], E[0], &c[r][0], dead[r], in[r], &lost[r][0]);
            lstep_256(OE, LOST, FS, K, T[1], E[1], &c[r][1], dead[r] + 2, in[r] + 2, &lost[r][1]);
        }
    }
    for (int r = 0; r < NR; r++) {
        _mm256_storeu_ps(cv + r * LW, c[r][0]);
        _mm256_storeu_ps(cv + r * LW + 8, c[r][1]);
        _mm256_storeu_si256((__m256i *)(lo + r * LW), lost[r][0]);
        _mm256_storeu_si256((__m256i *)(lo + r * LW + 8), lost[r][1]);
        for (int h = 0; h < 4; h++) {
            _mm256_storeu_pd((double *)(dd + r * LW + 4 * h), dead[r][h]);
            _mm256_storeu_pd((double *)(ii + r * LW + 4 * h), in[r][h]);
        }
    }
    for (int q = 0; q < NR * LW; q++) {
        alive[q] = alive[q] && !dd[q] && fabsf(cv[q]) < 0x1p127f * 2.0f; /* a normal binary32 number or zero */
        inex[q] |= (uint8_t)(lo[q] != 0 || ii[q] != 0);
    }
}

/* lrow.fs with the exponents as bytes (R->aE4, R->bE8; no min_exponent, bits lost not wanted): the
 * products l0 .. l0 + n - 1 of rows r0 and r0 + 1 (E[r][h], T[r][h]: row r0 + r, columns 8 h ..
 * 8 h + 7).  Their largest exponents at once in the 32 bytes of one vector (row r0 in the low sixteen,
 * r0 + 1 in the high: aE4's byte r0 or r0 + 1 by idx, plus B's sixteen bytes; emax8_512's saturating
 * sums: every operand exponent within -32 .. 31 or NONE as -128, so a sum with NONE stays below -64
 * and every other sum lies in -64 .. 62), widened to 32-bit lanes with -128 for no product (not
 * NONE: lstep_256's unit for such a lane, E_p - W = -128 - W <= E(c) - 23 for every normal c as
 * W >= 23, leaves c whole, and T_p = 0; 2^(W - E_p) is then finite, so its zero products stay 0).
 * The products as lgroup_256's (values, 2^(W - E_p) a normal binary32 number: lrow.fs).  Proof: as
 * the level-1 steps' (above), with late_edges' empty-blocks-big-b cases for the lanes without products */
LA void lgroup8_256(const lrow *R, int r0, __m256i idx, int64_t l0, int64_t n, __m256i E[2][2], __m256i T[2][2])
{
    const lk *K = R->K;
    const float *a0 = R->afr[r0], *a1 = R->afr[r0 + 1];
    __m256i e = _mm256_set1_epi8(-128), e2 = e;
    __m128i lo, hi;
    __m256 sc[2][2];
    int64_t l = l0;
#define EMAX8_TERM(l)                                                                                                  \
    _mm256_adds_epi8(_mm256_shuffle_epi8(_mm256_set1_epi32((int32_t)R->aE4[l]), idx),                              \
                     _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(R->bE8 + (l) * LW))))
#pragma GCC unroll 8
    for (; l + 1 < l0 + n; l += 2) {
        e = _mm256_max_epi8(e, EMAX8_TERM(l));
        e2 = _mm256_max_epi8(e2, EMAX8_TERM(l + 1));
    }
    if (l < l0 + n) e = _mm256_max_epi8(e, EMAX8_TERM(l));
#undef EMAX8_TERM
    e = _mm256_max_epi8(e, e2);
    e = _mm256_blendv_epi8(e, _mm256_set1_epi8(-128), _mm256_cmpgt_epi8(_mm256_set1_epi8(-64), e));
    lo = _mm256_castsi256_si128(e);
    hi = _mm256_extracti128_si256(e, 1);
    E[0][0] = _mm256_cvtepi8_epi32(lo);
    E[0][1] = _mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8));
    E[1][0] = _mm256_cvtepi8_epi32(hi);
    E[1][1] = _mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8));
    for (int r = 0; r < 2; r++)
        for (int h = 0; h < 2; h++) {
            sc[r][h] = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(127 + K->W), E[r][h]), 23));
            T[r][h] = _mm256_setzero_si256();
        }
#pragma GCC unroll 8
    for (l = l0; l < l0 + n; l++) {
        __m256 x0 = _mm256_set1_ps(a0[l]), x1 = _mm256_set1_ps(a1[l]);
        for (int h = 0; h < 2; h++) {
            __m256 b = _mm256_loadu_ps(R->bf + l * LPP + 8 * h);
            T[0][h] = _mm256_add_epi32(T[0][h], _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_mul_ps(x0, b), sc[0][h])));
            T[1][h] = _mm256_add_epi32(T[1][h], _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_mul_ps(x1, b), sc[1][h])));
        }
    }
}

/* every block of rows r0 and r0 + 1 by lgroup8_256 (lrow.fs, bits lost not wanted: lstep_256's FS
 * instance without LOST), the odd/even groups combined as lrun_256 does; cv as lrun_256's */
LA void lrun8_256(int OE, int GN, const lrow *R, int r0, float *cv)
{
    const lk *K = R->K;
    const __m256i idx = r0 ? _mm256_setr_epi64x(0x0202020202020202, 0x0202020202020202, 0x0303030303030303,
                                                0x0303030303030303)
                           : _mm256_setr_epi64x(0, 0, 0x0101010101010101, 0x0101010101010101);
    __m256 c00 = _mm256_loadu_ps(cv), c01 = _mm256_loadu_ps(cv + 8), c10 = _mm256_loadu_ps(cv + LW),
           c11 = _mm256_loadu_ps(cv + LW + 8);
    __m256d none[4];
    __m256i nol[2];
    for (int64_t k0 = 0; k0 < R->k; k0 += R->block) {
        int64_t n = R->k - k0 < R->block ? R->k - k0 : R->block, ne = OE ? (n + 1) / 2 : n;
        __m256i E[2][2], T[2][2];
        if (GN && ne == GN) lgroup8_256(R, r0, idx, k0, GN, E, T);
        else lgroup8_256(R, r0, idx, k0, ne, E, T);
        if (OE) { /* lrun_256's combination (-128: no product, T_p = 0) */
            __m256i Eo[2][2], To[2][2];
            if (GN && n - ne == GN) lgroup8_256(R, r0, idx, k0 + ne, GN, Eo, To);
            else lgroup8_256(R, r0, idx, k0 + ne, n - ne, Eo, To);
            for (int r = 0; r < 2; r++)
                for (int h = 0; h < 2; h++) loe_256(0, &T[r][h], &E[r][h], To[r][h], Eo[r][h], NULL);
        }
        /* the four steps written out (the running values kept in registers) */
        lstep_256(OE, 0, 1, K, T[0][0], E[0][0], &c00, none, none, nol);
        lstep_256(OE, 0, 1, K, T[0][1], E[0][1], &c01, none, none, nol);
        lstep_256(OE, 0, 1, K, T[1][0], E[1][0], &c10, none, none, nol);
        lstep_256(OE, 0, 1, K, T[1][1], E[1][1], &c11, none, none, nol);
    }
    _mm256_storeu_ps(cv, c00);
    _mm256_storeu_ps(cv + 8, c01);
    _mm256_storeu_ps(cv + LW, c10);
    _mm256_storeu_ps(cv + LW + 8, c11);
}

MM_TGT256F void sfp8ml_late_dbl_256(const lrow *R, int r0, int64_t *Tc, int32_t *Ec, uint8_t *alive, uint8_t *inex)
{
    const lk *K = R->K;
    float cv[2 * LW];
    int sc = K->scaled && !R->fs; /* rows and panel as values where in_bytes allowed (sfp8ml_unscale) */
    for (int q = 0; q < 2 * LW; q++) /* T_c 2^(E(c) - W): exact (T_c's 24 bits) */
        cv[q] = Tc[q] ? (float)ldexp((double)Tc[q], Ec[q] - K->W) : 0.0f;
    /* FS (R->fs: lk.fast, or the operands as values, |E_p| <= 64): every 2^(E_p - W) at least 2^-126 */
    if (R->fs && R->aE4 && R->bE8 && !K->has_min && !R->need_lost) { /* the exponents as bytes */
        if (K->oddeven && R->block == 16) lrun8_256(1, 8, R, r0, cv); /* FNUZ FP8 */
        else if (K->oddeven) lrun8_256(1, 0, R, r0, cv);
        else if (R->block == 8) lrun8_256(0, 8, R, r0, cv); /* float16; bfloat16 as values */
        else if (R->block == 4) lrun8_256(0, 4, R, r0, cv); /* TF32 as values */
        else lrun8_256(0, 0, R, r0, cv);
        for (int q = 0; q < 2 * LW; q++) alive[q] = alive[q] && fabsf(cv[q]) < 0x1p127f * 2.0f;
    } else if (K->oddeven && R->need_lost) lrun_256(1, 1, sc, 0, 0, R, r0, cv, alive, inex);
    else if (K->oddeven && R->fs && R->block == 16) lrun_256(1, 0, 0, 1, 8, R, r0, cv, alive, inex); /* FNUZ FP8 */
    else if (K->oddeven && R->fs) lrun_256(1, 0, 0, 1, 0, R, r0, cv, alive, inex);
    else if (K->oddeven) lrun_256(1, 0, sc, 0, 0, R, r0, cv, alive, inex);
    else if (R->need_lost) lrun_256(0, 1, sc, 0, 0, R, r0, cv, alive, inex);
    else if (R->fs && R->block == 8) lrun_256(0, 0, 0, 1, 8, R, r0, cv, alive, inex); /* float16; bfloat16 as values */
    else if (R->fs && R->block == 4) lrun_256(0, 0, 0, 1, 4, R, r0, cv, alive, inex); /* TF32 as values */
    else if (R->fs) lrun_256(0, 0, 0, 1, 0, R, r0, cv, alive, inex);
    else if (sc && R->block == 8) lrun_256(0, 0, 1, 0, 8, R, r0, cv, alive, inex); /* bfloat16 held scaled */
    else if (sc) lrun_256(0, 0, 1, 0, 0, R, r0, cv, alive, inex);
    else lrun_256(0, 0, 0, 0, 0, R, r0, cv, alive, inex);
    for (int q = 0; q < 2 * LW; q++) { /* back to T_c (msb at bit W) and E(c) */
        uint32_t u;
        int64_t mag;
        memcpy(&u, &cv[q], 4);
        if (!alive[q] || !(u << 1)) {
            Tc[q] = 0;
            Ec[q] = K->zexp;
            continue;
        }
        mag = (int64_t)((u & 0x7fffff) | 0x800000) << (K->W - 23);
        Tc[q] = u >> 31 ? -mag : mag;
        Ec[q] = (int32_t)(u >> 23 & 0xff) - 127;
    }
}
#undef LA
#endif
