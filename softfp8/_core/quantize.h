/* The block quantiser (softfp8.mx.quantize's fast path, docs/training.md "Block
 * formats"): per block amax, the shared scale (MX: E8M0 by a scale rule; NVFP4:
 * UE4M3 from amax / 6 / tensor scale) and the elements x / scale rounded once into
 * the element format by the driver's conversion (every mode, stochastic rounding
 * with the generator's bits in row-major element order, as the NumPy cast of the
 * reference draws them).  The kernels are the blockq family (fast/blockq.c); this
 * file only sequences them and the conversions, so it never rounds. */
#ifndef SOFTFP8_QUANTIZE_H
#define SOFTFP8_QUANTIZE_H
#include <stddef.h>
#include <stdint.h>

#include "driver.h"
#include "softfp8/softfp8.h"

enum { SFP8Q_FLOOR = 0, SFP8Q_CEIL = 1, SFP8Q_EVEN = 2, SFP8Q_RCEIL = 3 }; /* mx.SCALE_RULES */

typedef struct sfp8q_args {
    const char *x;          /* rows of n binary32 (isize 4) / binary64 (8) values: x + r * rs + j * es */
    int isize;
    ptrdiff_t rows, n, rs, es, bs; /* bs: the block size along a row */
    int nvfp4;              /* 0: MX (E8M0 scale); 1: NVFP4 (UE4M3 scale, tensor scale ts) */
    int rule, emax, mbits;  /* MX: scale rule, the element's emax and mantissa bits */
    double elem_max;        /* MX: the element's largest value */
    double ts;              /* NVFP4: the tensor scale (a binary32 value > 0) */
    const sfp8_format *efmt; /* the element format (MXINT8: its helper format) */
    const sfp8_format *sfmt; /* NVFP4: E4M3, the block scale's format */
    int int8;               /* MXINT8: elements k = helper value * 64, clamped to +-127, int8 */
    double *amax;           /* rows * ceil(n / bs): per block amax (sfp8q_amax fills it) */
    uint8_t *special;       /* rows * ceil(n / bs): per block NaN / infinity (sfp8q_amax fills it) */
    uint8_t *scales;        /* rows * ceil(n / bs): the scale codes (sfp8q_finish) */
    char *out;              /* rows * n element codes, row-major (1 byte; 2 for an efmt of > 8 bits) */
} sfp8q_args;

/* per block amax and special into a->amax / a->special, and *tmax the largest amax;
   1 done, 0 declined (fast paths off) */
int sfp8q_amax(const sfp8q_args *a, double *tmax);
/* scales and elements (env: the element cast's environment; rng: its generator),
   *flags the elements' flags; 1 done, 0 declined, -1 out of memory */
int sfp8q_finish(const sfp8q_args *a, const sfp8_env *env, sfp8_rng *rng, unsigned *flags);
#endif
