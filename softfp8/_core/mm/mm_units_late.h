/* The block_fma path's kernel for the two-term alignments (late addend, odd/even groups:
 * MI300X; mm_units_late.c), called by mm_units_fp.c's sfp8mu_fp_gemm. */
#ifndef SFP8_MM_UNITS_LATE_H
#define SFP8_MM_UNITS_LATE_H

#include <stddef.h>
#include <stdint.h>

#include "bfma.h"

/* 1 if the kernel computes the model for inner size k, and the product by it (the flags;
 * outputs it leaves are the generic kernel's) */
int sfp8mu_late_ok(const sfp8u_model *md, int64_t k);
unsigned sfp8mu_late_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                          ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O, ptrdiff_t om,
                          ptrdiff_t op, int64_t m, int64_t k, int64_t p);

#endif
