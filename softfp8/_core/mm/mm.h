/* The matrix engine (softfp8/_core/mm/): every matrix product of softfp8 -- `@` /
 * np.matmul / np.vecdot / np.matvec / np.vecmat and matmul_wide (npy/matmul.c),
 * softfp8.matmul(out_dtype=, accumulation=), softfp8.scaled_mm, softfp8.mx.matmul
 * and softfp8.dask.matmul (through softfp8/_ext.pyx) -- is one call of sfp8m_gemm.
 * Plain C: no global state but the path counters, no Python; the BLAS routine is
 * passed in by the caller (sfp8m_blas).
 *
 * One generic kernel per model is the definition (mm_ref.c: the exact dot product
 * by the superaccumulator, the accumulation models step by step, every rounding by
 * the core's sfp8_round_value); it is what runs with fast paths off
 * (SOFTFP8_FAST=0, _ext.set_fast(0)).  The faster paths are listed in mm_paths.def
 * (softfp8._ext.matrix_paths()), each proven equal to it, codes and flags.  The
 * models are specified in docs/training.md ("Accumulation models", "Scaled
 * matmul"); the engine's structure and paths in docs/matrix-engine.md. */
#ifndef SOFTFP8_MM_H
#define SOFTFP8_MM_H
#include <stddef.h>
#include <stdint.h>
#include "softfp8/softfp8.h"
#include "bfma.h"

/* The scales of one operand: binary32 bit patterns, entry
 * s[(r / br) * rs + (c / bc) * cs] for element (r, c) of the operand (A: r = i,
 * c = l; B: r = l, c = j); s == NULL: no scale (1). */
typedef struct sfp8m_scale {
    const uint32_t *s;
    ptrdiff_t rs, cs; /* strides of the scale array, in elements */
    int64_t br, bc;   /* rows, columns of the operand covered by one scale (>= 1) */
} sfp8m_scale;

/* NaN results of the exact model: */
enum {
    SFP8M_NAN_CANONICAL = 0, /* the output format's canonical NaN (the core's conversion of
                                binary64's quiet NaN): softfp8.matmul, scaled_mm */
    SFP8M_NAN_OPERAND = 1    /* fa == fb, no scales: the first NaN product's operand code as
                                fa's addition delivers it (np.matmul's rule, as a sum of
                                the format would give it) */
};

typedef struct sfp8m_model {
    sfp8_format fa, fb;  /* operand formats (storage formats of <= 16 bits) */
    int exact;           /* 1: the exact dot product, rounded once into fout */
    int nan_rule;        /* SFP8M_NAN_*, exact model only */
    /* accumulation models (exact == 0): docs/training.md "Accumulation models" */
    int has_prod;        /* products rounded into fp with envp */
    sfp8_format fp;
    sfp8_env envp;
    sfp8_format facc;    /* accumulator: a storage format or sfp8_binary32 */
    sfp8_env envacc;
    int64_t promote;     /* 0: never; else products per chunk */
    sfp8_format fprom;   /* the running sum of promoted chunks: a storage format or binary32 */
    sfp8_env envprom;
    /* output: a storage format, binary32 or binary64, rounded with envout */
    sfp8_format fout;
    sfp8_env envout;
    /* stochastic rounding of the outputs (exact model): envout.rounding is
       SFP8_ROUND_STOCHASTIC and output (i, j) takes the random word
       sfp8_random_u32(seed, stream, index + i * p + j) */
    uint64_t seed, stream, index;
    sfp8m_scale sa, sb;
    int64_t kblock;      /* scales vary along K in blocks of kblock products (0: constant) */
    /* 0: the scale of a product is sa * sb rounded once to binary32, nearest even, and a
       subnormal binary32 scale raises denormal (softfp8.scaled_mm, torch._scaled_mm);
       1: the scales are powers of two (E8M0 values: softfp8.mx.matmul; the caller checks)
       whose product 2^(ea + eb) is exact (2^-298 .. 2^254, beyond binary32) and reading
       them raises no flag -- the OCP MX dot product, E8M0 having no subnormals */
    int scale_exact;
} sfp8m_model;

/* C = A @ B in binary64: A (m x k), B (k x p), C (m x p), all row-major and
 * contiguous.  Returns 0, or -1 on failure (the provider keeps the reason: the
 * glue's callback leaves a Python exception set). */
typedef int (*sfp8m_dgemm_fn)(void *ctx, int64_t m, int64_t k, int64_t p, const double *A, const double *B,
                              double *C);
typedef struct sfp8m_blas {
    sfp8m_dgemm_fn dgemm; /* NULL: no BLAS path */
    void *ctx;
} sfp8m_blas;

/* in sfp8m_gemm's result, beside the flags: */
#define SFP8M_NOMEM 0x100u    /* out of memory: outputs unspecified */
#define SFP8M_BLASFAIL 0x200u /* the BLAS routine failed: outputs unspecified */

/* O[i, j] (i < m, j < p) = A (m x k) times B (k x p) under model md.  Strides in
 * bytes (any sign, zero allowed, unaligned data allowed); codes of 1 or 2 bytes
 * (bits above a format's width ignored), outputs of fout's size (1, 2, 4 or 8 bytes).
 * fast: sfp8f_enabled()'s value -- 0 the generic kernel only, 1 the faster paths
 * where they repay their tables, 2 always (eager).  blas: NULL or a BLAS provider.
 * O must not overlap A or B.  Returns the OR of the flags raised (plus
 * SFP8M_NOMEM / SFP8M_BLASFAIL). */
unsigned sfp8m_gemm(const sfp8m_model *md, const sfp8m_blas *blas, const char *A, ptrdiff_t am, ptrdiff_t ak,
                    const char *B, ptrdiff_t bk, ptrdiff_t bp, char *O, ptrdiff_t om, ptrdiff_t op, int64_t m,
                    int64_t k, int64_t p, int fast);

/* The fast-path setting (0, 1, 2) the callers pass as `fast`: the switches of fast/
 * (SOFTFP8_FAST, _ext.set_fast), read through the engine so that the glue never
 * reaches fast/. */
int sfp8m_fast_level(void);

/* The exact dot product of one format rounded once, as `@` computes it (the model
 * np.matmul uses: fa = fb = f, SFP8M_NAN_OPERAND, no scales, output f / binary32 /
 * binary64 by out); for other loops of the glue (np.dot). */
void sfp8m_exact_model(sfp8m_model *md, const sfp8_format *f, const sfp8_format *out, const sfp8_env *env);

/* O = A @ B + C under a matrix-unit model (bfma.h: the block-FMA model, the pairwise
 * and Kahan orders, addends), as sfp8u_gemm computes it (arguments and result as there);
 * fast: as sfp8m_gemm's (0: sfp8u_gemm itself).  mm_units.c. */
unsigned sfp8m_unit_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                         ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O,
                         ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k, int64_t p, int fast);

/* ---- the registered fast paths (mm_paths.def) ---- */
enum {
#define SFP8M_PATH(id, name, levels, what) SFP8M_##id,
#include "mm_paths.def"
#undef SFP8M_PATH
    SFP8M_NUM_PATHS
};
typedef struct sfp8m_path_info {
    const char *name;
    int levels;       /* bit L set: the path has its own kernels at SIMD level L */
    const char *what;
} sfp8m_path_info;
const sfp8m_path_info *sfp8m_path(int id);
/* calls of path id at SIMD level (0..2) since the last reset (relaxed atomics) */
uint64_t sfp8m_path_count(int id, int level);
void sfp8m_reset_path_counts(void);
#endif
