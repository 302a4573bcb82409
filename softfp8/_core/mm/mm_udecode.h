/* The block_fma path's operand decoding (mm_udecode.c), shared by its integer kernels
 * (mm_units.c) and its hardware-arithmetic kernels (mm_units_fp.c): the kernel context,
 * decoded operand codes and their decoders. */
#ifndef SFP8_MM_UDECODE_H
#define SFP8_MM_UDECODE_H

#include <stdint.h>

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

/* the decoder of an operand format: a table of every code when that repays it */
typedef struct {
    const sfp8_format *f;
    int64_t emin;
    uint64_t mask;
    ucode *tab;
} udecoder;

/* 0: out of memory */
int sfp8mu_decoder_init(const uctx *g, udecoder *D, const sfp8_format *f, int64_t emin, int64_t count);

/* the decoded code (a table entry, or tmp filled) */
static inline const ucode *sfp8mu_lookup(const uctx *g, const udecoder *D, uint64_t code, ucode *tmp)
{
    if (D->tab) return &D->tab[code & D->mask];
    sfp8mu_decode1(g, D->f, D->emin, code, tmp);
    return tmp;
}

#endif
