/* Internals of the matrix engine (softfp8/_core/mm/), shared by its files only:
 * the generic kernels (mm_ref.c, the definition) and the fast kernels (mm_model.c,
 * mm_intdot.c, mm_blas.c); the exact values and the per-call state are in mm_value.h,
 * the path registry and counters in mm_paths.h. */
#ifndef SOFTFP8_MM_IMPL_H
#define SOFTFP8_MM_IMPL_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "accum.h"
#include "codes.h"
#include "fast.h"
#include "mm.h"

#include "mm_value.h"
#include "mm_paths.h"

/* ---- the generic kernels (mm_ref.c): the definition ---- */
/* an empty superaccumulator holding every scaled product a * b * s of the call exactly
   (the generic kernel's, and int_dot's for K-blocked scales) */
void mm_exact_init(const mm_call *c, SuperAcc *sa);
/* output (i, j) of the exact model; only_special: add only the products with a NaN or
   infinity operand (the result is then NaN or infinity whatever the finite products,
   whose only flags -- denormal operands -- the caller raises); env: envout, or a copy
   holding the output's random word */
uint64_t mm_exact_element(mm_call *c, int64_t i, int64_t j, int only_special, const sfp8_env *env, uint8_t *fl);
/* output (i, j) of an accumulation model */
uint64_t mm_model_element(mm_call *c, int64_t i, int64_t j, uint8_t *fl);

/* ---- the fast kernels ---- */
/* accumulation models (mm_model.c): state built for the call; 0 not covered, -1 no memory */
typedef struct mm_model_fast mm_model_fast;
int mm_model_init(mm_call *c, mm_model_fast **out);
void mm_model_free(mm_model_fast *t);
/* row i, columns j0 .. j0 + n - 1 (n <= mm_model_width(t)); 0: left to the generic kernel */
int mm_model_block(mm_model_fast *t, mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0,
                   int n, unsigned *fl);
int mm_model_width(const mm_model_fast *t);
int mm_model_path(const mm_model_fast *t); /* SFP8M_MODEL_* */
int mm_model_level(const mm_model_fast *t); /* the SIMD level its kernels run at */

/* exact model, 8-bit operands, in 128-bit integers (mm_intdot.c) */
typedef struct mm_int mm_int;
int mm_int_init(mm_call *c, mm_int **out);
void mm_int_free(mm_int *t);
#define MM_INT_WIDTH 16
/* outputs (i, j0 .. j0 + n - 1), n <= MM_INT_WIDTH; 0: left to the generic kernel */
int mm_int_block(const mm_int *t, mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0, int n,
                 unsigned *fl);

/* exact model through BLAS (mm_blas.c): 1 done (*fl: the flags), 0 not applicable
   (nothing written), -1 no memory, -2 the BLAS routine failed */
int mm_blas_run(mm_call *c, const sfp8m_blas *blas, char *O, ptrdiff_t om, ptrdiff_t op, int fast, unsigned *fl);

#endif
