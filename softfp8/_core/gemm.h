/* Matrix products under an accumulation model (gemm.c): plain C, no global
 * state, no Python.  The models are specified in docs/training.md
 * ("Accumulation models"); softfp8.matmul(accumulation=...) and
 * softfp8.scaled_mm call sfp8g_gemm through softfp8/_ext.pyx. */
#ifndef SOFTFP8_GEMM_H
#define SOFTFP8_GEMM_H
#include <stddef.h>
#include <stdint.h>
#include "softfp8/softfp8.h"

/* The scales of one operand: float32 bit patterns, entry
 * s[(r / br) * rs + (c / bc) * cs] for element (r, c) of the operand (A: r = i,
 * c = l; B: r = l, c = j); s == NULL means no scale (1). */
typedef struct sfp8g_scale {
    const uint32_t *s;
    ptrdiff_t rs, cs; /* strides of the scale array, in elements */
    int64_t br, bc;   /* rows, columns of the operand covered by one scale (>= 1) */
} sfp8g_scale;

typedef struct sfp8g_model {
    sfp8_format fa, fb;               /* operand formats (storage formats) */
    int exact;                        /* 1: the exact dot product, one rounding */
    int has_prod;                     /* products rounded into fp */
    sfp8_format fp;
    sfp8_env envp;
    sfp8_format facc;                 /* accumulator: a storage format or sfp8_binary32 */
    sfp8_env envacc;
    int64_t promote;                  /* 0: never; else products per chunk */
    sfp8_format fprom;                /* the running sum of promoted chunks: a storage format or binary32 */
    sfp8_env envprom;
    sfp8_format fout;                 /* output: a storage format, binary32 or binary64 */
    sfp8_env envout;
    sfp8g_scale sa, sb;
    int64_t kblock;                   /* K-block of the scales along the inner dimension (0: none) */
} sfp8g_model;

#define SFP8G_NOMEM 0x100u /* in sfp8g_gemm's result: out of memory, nothing written */
#define SFP8G_NOTDONE 0x200u /* in sfp8g_gemm_f64's result: not applicable, nothing written */

/* O[i, j] (i < m, j < p) of A (m x k) times B (k x p) under model md.  Strides
 * in bytes; codes of 1 or 2 bytes (the formats' storage), outputs of fout's
 * size (1, 2, 4 or 8 bytes).  use_fast: sfp8f_enabled()'s value: 1 lets the
 * faster kernels take the cases they cover when the call repays their tables, 2
 * always (proven equal to the generic kernel by
 * tests/numpy_glue/test_gemm.py::test_fast_equals_core).  Returns the OR of the
 * flags (plus SFP8G_NOMEM on allocation failure). */
unsigned sfp8g_gemm(const sfp8g_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                    ptrdiff_t bk, ptrdiff_t bp, char *O, ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k,
                    int64_t p, int use_fast);
/* the exact model, per-tensor scales, from D = the float64 GEMM of the decoded operands
   (row stride dm elements): gemm.c, "the exact model from a float64 GEMM" */
unsigned sfp8g_gemm_f64(const sfp8g_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                        ptrdiff_t bk, ptrdiff_t bp, const double *D, ptrdiff_t dm, char *O, ptrdiff_t om,
                        ptrdiff_t op, int64_t m, int64_t k, int64_t p);
#endif
