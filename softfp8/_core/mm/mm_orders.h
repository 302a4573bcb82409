/* The fast path of softfp8.Accumulation's orders under the matrix-unit entry (mm_orders.c,
 * mm_paths.def: orders): sequential with an addend, pairwise and Kahan, binary32
 * accumulator rounded to nearest even.  Arguments and result as sfp8u_gemm's (bfma.h);
 * computes the outputs it covers and hands every other output (or the whole call) to
 * sfp8u_gemm, the definition. */
#ifndef SOFTFP8_MM_ORDERS_H
#define SOFTFP8_MM_ORDERS_H
#include "bfma.h"

unsigned sfp8m_orders_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                           ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O,
                           ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k, int64_t p);
#endif
