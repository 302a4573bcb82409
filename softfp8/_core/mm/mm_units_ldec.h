/* The two-term alignment kernel's operand decoding (mm_units_ldec.c), shared with its
 * kernel file mm_units_late.c: the decoder of a format, one code decoded, and the SIMD
 * decodings of lines of codes into B's panels and A's rows; the kernel's constants (lk) and
 * row view (lrow), and its level-1 steps (sfp8ml_late_dbl_256, in mm_units_ldec.c). */
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

/* the kernel's model constants and a lane group's view of one row (mm_units_late.c) */
#define NOEXP (-(1 << 29))    /* the exponent of a zero running value without zero_addend_exponent */

/* the model's constants */
typedef struct {
    int W, X, P, ar, rnd, oddeven, far;
    int has_min, dbl; /* dbl: the two-term steps in binary64 (dstep_512; level 1: sfp8ml_late_dbl_256) */
    int scaled;       /* operands held as a 2^-E(a) (sfp8mu_late_ok's second rule) */
    int clampc;       /* dbl: E(c) = max(floor(log2 |c|), -126) needs its clamp (E_p below -126) */
    int fast;         /* dbl: fstep_512 and emax8_512 run (see where it is set) */
    int32_t min_exp, zexp; /* zexp: a zero running value's exponent (NOEXP: none) */
    int64_t emin_o, emax_o;
} lk;

#define LPP (2 * LW) /* the stride of B's rows in a panel (BIX): LW exponents, LW values */

/* a lane group's view of one row: A's row and B (row stride LPP), the group's columns j0 */
#define LROWS 4 /* rows of A the AVX-512 binary64 kernel runs together (drun_512 names four) */

typedef struct {
    const lk *K;
    const float *afr[LROWS];
    const int32_t *aEr[LROWS];
    const float *af, *bf;
    const int32_t *aE, *bE;
    int64_t k, block;
    int need_lost;
    const int8_t *bE8;    /* lk.fast: B's exponents as bytes (16 a row of the group's panel) */
    const uint32_t *aE4;  /* lk.fast: the LROWS rows' exponents at l as the bytes of aE4[l] */
    int fs;               /* fstep_512 and emax8_512 run: lk.fast, or (lk.scaled) the rows' and
                             panel's operand exponents all within -32 .. 31 (in_bytes) */
} lrow;

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
/* level 1 (AVX2): decode_arith_512's decoding (float16 too), decode_tab_512's, in_bytes and unscale */
MM_TGT256 void sfp8ml_decode_arith_256(const ldec *F, const char *src, int sz, int64_t n, float *f, int32_t *E,
                                       ptrdiff_t cs, __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes);
MM_TGT256 void sfp8ml_decode_tab_256(const gtab *tb, const uint8_t *src, int64_t n, float *f, int32_t *E, ptrdiff_t cs,
                                     int perm, __mmask16 *bad, __mmask16 *sub, int32_t *maxE, int lanes);
MM_TGT256 int sfp8ml_in_bytes_256(const int32_t *E, int64_t n, int runs);
MM_TGT256 void sfp8ml_unscale_256(float *v, const int32_t *E, int64_t n, int runs);
MM_TGT256 void sfp8ml_bytes_b_256(const int32_t *bE, int8_t *bE8, int64_t k, int64_t pp);
MM_TGT256 void sfp8ml_bytes_a_256(const int32_t *const *aEr, uint32_t *aE4, int64_t k);
/* level 1: the binary64 two-term steps of rows r0 and r0 + 1 (R->afr, R->aEr; r0 + 1 < LROWS) and
 * sixteen columns (lk.dbl); the running values (T_c, E(c)) at [r * LW + q] in and out, alive and
 * inex as late_dbl_512's */
MM_TGT256F void sfp8ml_late_dbl_256(const lrow *R, int r0, int64_t *Tc, int32_t *Ec, uint8_t *alive, uint8_t *inex);
#endif
/* sfp8ml_in_bytes and sfp8ml_unscale in C (level 1) */
int sfp8ml_in_bytes_c(const int32_t *E, int64_t n, int runs);
void sfp8ml_unscale_c(float *v, const int32_t *E, int64_t n, int runs);
void sfp8ml_bytes_a_c(const int32_t *const *aEr, uint32_t *aE4, int64_t k);

#endif
