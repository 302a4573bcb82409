/* The block_fma path's operand decoding (mm_udecode.c), shared by its integer kernels
 * (mm_units.c) and its hardware-arithmetic kernels (mm_units_fp.c): the kernel context,
 * decoded operand codes and their decoders. */
#ifndef SFP8_MM_UDECODE_H
#define SFP8_MM_UDECODE_H

#include <stdint.h>
#include <string.h>

#include "mm.h"

#define NONE (-(1 << 28)) /* the nominal exponent of a zero term: below every other */

typedef struct {
    const sfp8u_model *md;
    int W, P, rounding, sticky, norm, narrow, sum32;
    int fexact; /* every operand value and product a normal binary32 number (or zero) */
    int late, oddeven; /* the addend after the products (two-term alignment); odd/even groups */
    int fvals; /* decode f for every value that is a binary32 number (else ucode.nof) */
    int64_t emin_a, emin_b, emin_o, emax_o;
} uctx;

static inline int bitlen64(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

static inline int64_t fmt_emin(const sfp8_format *f) { return f->bits == 32 ? -126 : (int64_t)1 - f->bias; }

static inline int code_size(const sfp8_format *f) { return f->bits <= 8 ? 1 : f->bits <= 16 ? 2 : f->bits <= 32 ? 4 : 8; }

/* a decoded operand code: the lane values of uline, bad (NaN or infinity), sub (a
 * subnormal code), wide (bits of sig) */
typedef struct {
    uint32_t sig, neg;
    int32_t x, E;
    float f;
    double d;    /* the value as a binary64 number (a zero of its sign for zeros, 0 for NaN and infinity) */
    int32_t top; /* floor(log2 |value|), NONE for a zero */
    uint8_t bad, sub, wide;
    uint8_t nof; /* a nonzero finite value that is no binary32 number (f not set) */
} ucode;

/* one code decoded */
void sfp8mu_decode1(const uctx *g, const sfp8_format *f, int64_t emin, uint64_t code, ucode *d);

/* an IEEE-layout format of more than 8 bits: sign, exponent and fraction fields filling the
 * code, IEEE infinities / NaN and subnormals (float16, bfloat16, ...): the formats the kernels
 * decode from their bits instead of a table */
static inline int sfp8mu_ieee_layout(const sfp8_format *f)
{
    return f->bits > 8 && f->is_signed && f->specials == SFP8_SPECIALS_IEEE && f->subnormals == SFP8_SUBNORMALS_IEEE &&
           f->bits == 1 + f->exp_bits + f->man_bits;
}

/* the decoder of an operand format: a table of every code when that repays it, or (ieee)
 * the arithmetic decoding of an IEEE-layout format whose values are binary32 numbers */
typedef struct {
    const sfp8_format *f;
    int64_t emin;
    uint64_t mask;
    ucode *tab;
    int ieee;
} udecoder;

/* the common tail of the decodings: a finite nonzero value (-1)^neg sig 2^exp */
static inline void sfp8mu_finite(const uctx *g, int64_t emin, uint64_t sig, int64_t exp, ucode *d)
{
    int tz = __builtin_ctzll(sig), top = (int)exp + bitlen64(sig) - 1;
    d->sig = (uint32_t)(sig >> tz); /* the value unchanged: trailing zeros moved into x */
    d->x = (int32_t)(exp + tz);
    d->E = (int32_t)(top > emin ? top : emin);
    d->top = (int32_t)top;
    d->wide = (uint8_t)bitlen64(d->sig);
}

/* one code of an ieee decoder (sfp8mu_decode1's result, without the table): every value a
 * binary32 and a binary64 number, built from its bits */
static inline void sfp8mu_decode_ieee(const uctx *g, const udecoder *D, uint64_t code, ucode *d)
{
    const sfp8_format *f = D->f;
    const int man = f->man_bits;
    const uint64_t mag = code & (D->mask >> 1), mf = mag & (((uint64_t)1 << man) - 1);
    const int64_t ef = (int64_t)(mag >> man);
    const int neg = (int)(code >> (f->bits - 1) & 1);
    uint64_t sig;
    int64_t exp;
    d->sig = 0;
    d->x = 0;
    d->f = 0.0f;
    d->neg = neg ? ~(uint32_t)0 : 0;
    d->E = d->top = NONE;
    d->bad = d->sub = d->wide = d->nof = 0;
    if (ef == ((int64_t)1 << f->exp_bits) - 1) { /* infinity or NaN */
        d->bad = 1;
        d->d = 0.0;
        return;
    }
    d->d = neg ? -0.0 : 0.0;
    if (ef == 0) {
        if (!mf) return; /* a zero */
        d->sub = 1;
        if (!g->md->in_subnormals) return;
        sig = mf;
        exp = 1 - (int64_t)f->bias - man;
    } else {
        sig = ((uint64_t)1 << man) | mf;
        exp = ef - f->bias - man;
    }
    sfp8mu_finite(g, D->emin, sig, exp, d);
    {
        uint64_t p2 = (uint64_t)(d->x + 1023) << 52; /* 2^x: a normal binary64 number (sfp8mu_decoder_init) */
        double s;
        memcpy(&s, &p2, 8);
        d->d = (neg ? -(double)d->sig : (double)d->sig) * s;
        if (g->fexact || g->fvals) d->f = (float)d->d; /* exact: a binary32 number */
        else d->nof = 1;
    }
}

/* 0: out of memory */
int sfp8mu_decoder_init(const uctx *g, udecoder *D, const sfp8_format *f, int64_t emin, int64_t count);

/* the decoded code (a table entry, or tmp filled) */
static inline const ucode *sfp8mu_lookup(const uctx *g, const udecoder *D, uint64_t code, ucode *tmp)
{
    if (D->tab) return &D->tab[code & D->mask];
    if (D->ieee) sfp8mu_decode_ieee(g, D, code & D->mask, tmp);
    else sfp8mu_decode1(g, D->f, D->emin, code, tmp);
    return tmp;
}


/* the lean decoding of the binary32 carry kernel (mm_units_fc.c): n codes of a 16- or 32-bit
 * ieee decoder (codes[]: uint16_t or uint32_t), only the nominal exponents E[] (NONE for a zero) and
 * values f[] (0 for a zero, NaN or infinity); bad[i] / sub[i] |= 1 for a NaN or infinity /
 * a subnormal code (when bad is NULL: *anybad, *anysub); *lo, *hi the range of the tops of
 * the nonzero values, *maxE the largest E.  SIMD level 2, and 1 by the *256 versions (sfp8mu_lean_ok). */
typedef struct {
    int32_t lo, hi, maxE;
    int32_t wide; /* ieee decoders: the largest significand width (top bit to lowest set bit) of the nonzero values */
    unsigned char anybad, anysub, anynof;
} ulean;

/* D's lean decoding at this SIMD level (32: binary32 codes, 16: 16-bit IEEE layout, 8: a
 * table of 8-bit codes), else 0 */
int sfp8mu_lean_ok(const udecoder *D, int level);

/* the lean decoding of an 8-bit table: per code its top (NONE for a zero), value and flags
 * (1 NaN or infinity, 2 subnormal code, 4 no binary32 number) */
typedef struct {
    int32_t top[256], fl[256];
    float f[256];
} ulean8;

void sfp8mu_lean8_init(const udecoder *D, ulean8 *t);
void sfp8mu_lean8(const udecoder *D, const ulean8 *t, const uint8_t *codes, int64_t n, int32_t *E, float *f,
                  unsigned char *bad, unsigned char *sub, ulean *st);
void sfp8mu_lean_ieee(const uctx *g, const udecoder *D, const void *codes, int64_t n, int32_t *E, float *f,
                      unsigned char *bad, unsigned char *sub, ulean *st);
/* the same at SIMD level 1 (AVX2) */
void sfp8mu_lean8_256(const udecoder *D, const ulean8 *t, const uint8_t *codes, int64_t n, int32_t *E, float *f,
                      unsigned char *bad, unsigned char *sub, ulean *st);
void sfp8mu_lean_ieee256(const uctx *g, const udecoder *D, const void *codes, int64_t n, int32_t *E, float *f,
                         unsigned char *bad, unsigned char *sub, ulean *st);

#endif
