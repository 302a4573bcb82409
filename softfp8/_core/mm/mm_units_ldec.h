/* The two-term alignment kernel's operand decoding (mm_units_ldec.c), shared with its
 * kernel file mm_units_late.c: the decoder of a format, one code decoded, and the SIMD
 * decodings of lines of codes into B's panels and A's rows. */
#ifndef SFP8_MM_UNITS_LDEC_H
#define SFP8_MM_UNITS_LDEC_H

#include <stdint.h>
#include <string.h>

#include "mm_simd.h"
#include "mm_udecode.h"

#if MM_SIMD
#include <immintrin.h>
#endif

#define LW 16 /* outputs of a row computed together */

/* B's element (l, j) in its panel */
#define BIX(l, j) (((j) / LW) * (2 * LW) * k + (l) * (2 * LW) + (j) % LW)

/* an exponent (or NONE) as a byte, saturated */
static inline int8_t sat8(int32_t e) { return (int8_t)(e < -128 ? -128 : e > 127 ? 127 : e); }

/* an operand decoder: IEEE-like 9..16-bit formats (float16) by arithmetic, the others by
 * mm_udecode's decode1 (a table of every code where it repays) */
typedef struct {
    int arith, M, sbit, in_sub, scaled; /* scaled: values held as a 2^-E(a) */
    int32_t bias, emin;
    uint32_t mask, emax;
    float subscale; /* 2^(1 - bias - M): the unit of subnormals */
    udecoder D;
} ldec;

/* the decoder of f (scaled: values held as a 2^-E(a), lk.scaled); 0: out of memory */
int sfp8ml_ldec_init(const uctx *g, ldec *F, const sfp8_format *f, int64_t count, int scaled);

/* a decoded code's value times 2^-E (E its nominal exponent; 0 for a zero): sig 2^(x - E),
 * at most 12 bits below 2^1 */
static inline float scaled_value(const ucode *d)
{
    uint32_t u;
    float v;
    if (d->E < NONE / 2 || !d->sig) return 0.0f;
    u = (uint32_t)(127 + d->x - d->E) << 23;
    memcpy(&v, &u, 4);
    return (d->neg ? -(float)d->sig : (float)d->sig) * v;
}

/* one code: its binary32 value *v (scaled: times 2^-E) and nominal exponent *E (NONE: zero);
 * bad, sub |= */
static inline void ldecode(const uctx *g, const ldec *F, uint64_t code, float *v, int32_t *E, int *bad, int *sub)
{
    uint32_t c = (uint32_t)code & F->mask, e = c >> F->M & F->emax, m = c & (((uint32_t)1 << F->M) - 1);
    uint32_t sign = c >> F->sbit & 1, u;
    if (!F->arith) {
        ucode tmp;
        const ucode *d = sfp8mu_lookup(g, &F->D, code, &tmp);
        *v = d->f;
        if (F->scaled) *v = scaled_value(d);
        *E = d->E;
        *bad |= d->bad;
        *sub |= d->sub;
        return;
    }
    if (e - 1 < F->emax - 1) { /* a normal number */
        u = sign << 31 | (uint32_t)(F->scaled ? 127 : (int32_t)e - F->bias + 127) << 23 | m << (23 - F->M);
        memcpy(v, &u, 4);
        *E = (int32_t)e - F->bias;
        return;
    }
    *v = 0.0f;
    *E = NONE;
    if (e) { /* NaN or infinity */
        *bad = 1;
        return;
    }
    if (!m) return;
    *sub = 1;
    if (!F->in_sub) return;
    *v = (sign ? -(float)m : (float)m) * F->subscale; /* exact: a normal binary32 number (sfp8mu_late_ok;
                                                           scaled: m 2^-M) */
    *E = F->emin;
}

int sfp8ml_is_f16(const sfp8_format *f);
/* n floats then n int32 in one block (freed by free); NULL: out of memory */
void *sfp8ml_llines(int64_t n, float **f, int32_t **E);

#if MM_SIMD
/* a table decoder's codes as gather tables: value, and nominal exponent E with the flags, E << 2 |
 * bad | sub << 1 (E at least NONE: no overflow) */
typedef struct {
    float f[256];
    int32_t Efl[256];
    uint32_t mask;
} gtab;

int sfp8ml_gtab_init(gtab *t, const ldec *F, int sz);
void sfp8ml_column_flags(__mmask16 *cb, int64_t pp, int64_t p, unsigned char *colbad, unsigned char *colsub);
MM_TGT512 void sfp8ml_decode_f16_512(const uint16_t *src, int64_t n, int in_sub, float *f, int32_t *E, ptrdiff_t cs,
                                     __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes);
MM_TGT512 void sfp8ml_decode_arith_512(const ldec *F, const char *src, int sz, int64_t n, float *f, int32_t *E,
                                       ptrdiff_t cs, __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes);
MM_TGT512 void sfp8ml_decode_tab_512(const gtab *tb, const uint8_t *src, int64_t n, float *f, int32_t *E, ptrdiff_t cs,
                                     int perm, __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes);
MM_TGT512 void sfp8ml_bytes_b(const int32_t *bE, int8_t *bE8, int64_t k, int64_t pp);
MM_TGT512 void sfp8ml_bytes_a(const int32_t *const *aEr, uint32_t *aE4, int64_t k);
MM_TGT512 int sfp8ml_in_bytes(const int32_t *E, int64_t n, int runs);
MM_TGT512 void sfp8ml_unscale(float *v, const int32_t *E, int64_t n, int runs);
#endif

#endif
