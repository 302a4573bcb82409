/* blockq: the block quantiser's kernels (fast/blockq.c), the parameters of one
 * call (sfp8f_call.block).  The block quantiser (quantize.c) runs them through
 * the array driver (sfp8d_run_block) and rounds what they compute with the
 * driver's conversions. */
#ifndef SOFTFP8_BLOCKQ_H
#define SOFTFP8_BLOCKQ_H
#include <stddef.h>
#include <stdint.h>

enum {
    SFP8F_BQ_AMAX = 0, /* per block: amax over the finite |x|, and whether a NaN / infinity is in it */
    SFP8F_BQ_QUOT = 1, /* per element: x / d of its block rounded to odd at 53 bits (or +-2^-900) */
    SFP8F_BQ_QUOT32 = 2, /* per element: x / d rounded to odd at 24 bits, as binary32 (blockq.c: the range) */
    SFP8F_BQ_INT8 = 3    /* per element of n: o8 = the low byte of kt[h & hmask]; the run returns the OR
                            of the entries' bits 8..15 (MXINT8's elements from its helper codes) */
};

/* rows of n values: element j of row r at x + r * rs + j * es (bytes); blocks of bs
 * consecutive elements of a row (the last one of a row may be shorter); per-block
 * arrays hold rows * ceil(n / bs) entries, row-major */
typedef struct sfp8f_blockq {
    int phase;              /* SFP8F_BQ_* */
    const char *x;          /* binary32 (isize 4) or binary64 (isize 8) values */
    int isize;
    ptrdiff_t rows, n, rs, es, bs;
    double *amax;           /* AMAX: per block, the largest finite |x| (+0 if none) */
    uint8_t *special;       /* AMAX: per block, 1 if the block holds a NaN or an infinity */
    const double *d;        /* QUOT: per block, the divisor (> 0 finite), or 0: the block's q are +0 */
    double *q;              /* QUOT: rows * n quotients, contiguous, row-major */
    float *q32;             /* QUOT32: rows * n binary32 quotients, contiguous, row-major */
    double ts;              /* QUOT32, NVFP4: its tensor scale (a binary32 value) when the element format
                               allows the binary32 lanes (blockq.c: their range), else 0 */
    const uint16_t *h;      /* INT8: n helper codes (rows 1) */
    const int32_t *kt;      /* INT8: per helper code c <= hmask, its int8 element | its flags << 8 */
    unsigned hmask;         /* INT8: 2^bits - 1 of the helper format (<= 511) */
    int8_t *o8;             /* INT8: the n elements */
    int kreg;               /* INT8: 1 when kt is regular (quantize.c int8_build checks every entry):
                               hmask 511 and, for c = s 2^8 + k (s in 0..1, k in 0..255), kt[c]'s byte
                               is min(k, 127), negated for s = 1, and its flags kfl[0] for k = 0,
                               kfl[1] for k in 1..127, kfl[2] for k in 128..255 */
    unsigned kfl[3];
} sfp8f_blockq;
#endif
