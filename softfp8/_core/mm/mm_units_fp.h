/* The block_fma path's kernels on the hardware's binary64 / binary32 arithmetic
 * (mm_units_fp.c), called by mm_units.c's entry. */
#ifndef SFP8_MM_UNITS_FP_H
#define SFP8_MM_UNITS_FP_H

#include <stddef.h>
#include <stdint.h>

#include "bfma.h"

/* mm_units_fp.c: which hardware-arithmetic kernel computes the model for inner size k (0:
 * none), and the product by it (the flags; outputs it leaves are the generic kernel's) */
int sfp8mu_fp_mode(const sfp8u_model *md, int64_t k);
unsigned sfp8mu_fp_gemm(const sfp8u_model *md, int mode, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                        ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O, ptrdiff_t om,
                        ptrdiff_t op, int64_t m, int64_t k, int64_t p);

/* the same kernels for binary32 (TF32) operands, through a 19-bit 1-8-10 format whose codes
 * are theirs shifted right by 13 (mm_units_fp.c: when every code allows it); 1 done (*flags
 * the product's flags), 0 not taken */
int sfp8mu_fp_tf32_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                        ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O, ptrdiff_t om,
                        ptrdiff_t op, int64_t m, int64_t k, int64_t p, unsigned *flags);

#endif
