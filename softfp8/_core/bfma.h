/* Matrix-unit models (bfma.c): the block-FMA model of tensor / matrix cores and the
 * further summation orders, one output element at a time, exact in integers.  Plain C,
 * no global state, no Python.  Specified in docs/matrix-units.md; the exact reference
 * is tests/models/matrix_units_ref.py.
 *
 * sfp8u_dot computes one element d = model(a_0*b_0 + ... + a_{k-1}*b_{k-1} + c) from
 * operand codes; a matrix engine calls it per output element (or proves its own faster
 * kernels equal to it).  sfp8u_gemm is the plain loop over a matrix product that
 * softfp8/_ext.pyx uses. */
#ifndef SOFTFP8_BFMA_H
#define SOFTFP8_BFMA_H
#include <stddef.h>
#include <stdint.h>
#include "softfp8/softfp8.h"

enum sfp8u_order {
    SFP8U_BLOCK = 0,  /* the block-FMA model (docs/matrix-units.md) */
    SFP8U_EXACT,      /* exact sum of the products and c, one rounding into fo (envo) */
    SFP8U_SEQUENTIAL, /* softfp8.Accumulation(order="sequential"), with an addend */
    SFP8U_PAIRWISE,   /* Accumulation(order="pairwise") */
    SFP8U_KAHAN       /* Accumulation(order="kahan") */
};
enum sfp8u_grouping { SFP8U_GLOBAL = 0, SFP8U_ODD_EVEN, SFP8U_PAIRWISE_TREE };

typedef struct sfp8u_model {
    int order;              /* enum sfp8u_order */
    sfp8_format fa, fb;     /* operand formats: storage formats, or sfp8_binary32 (TF32 operands) */
    sfp8_format fo;         /* output format = the addend's format: binary32 / binary64 / storage */
    sfp8_env envo;          /* SFP8U_BLOCK: rounding of every block result; others: the output rounding */
    int has_addend;         /* 0: no addend (c is ignored) */
    /* ---- SFP8U_BLOCK (docs/matrix-units.md, "The parameters of softfp8.BlockFMA") ---- */
    int block;              /* products per block, >= 1 */
    int exact_align;        /* 1: extra_bits = None (no truncation) */
    int extra_bits;         /* W = 23 + extra_bits, -20 .. 40 */
    int sticky;
    int grouping;           /* enum sfp8u_grouping */
    int late_addend;        /* addend="late" (global grouping) */
    int align_rounding;     /* SFP8_ROUND_TOWARD_ZERO / DOWNWARD / UPWARD / NEAREST_EVEN */
    int addend_extra_bits;  /* X of the addend's two-term alignment */
    int has_zero_addend_exp, zero_addend_exp;
    int normalized_products;
    int has_min_exp, min_exp;
    int product_overflow;   /* 1: products may exceed the output range */
    int in_subnormals, out_subnormals;
    int64_t promote;        /* 0: none; else products per promoted chunk (binary32 output) */
    /* ---- SFP8U_SEQUENTIAL / PAIRWISE / KAHAN (softfp8.Accumulation) ---- */
    int has_prod;           /* products rounded into fp with envp */
    sfp8_format fp;
    sfp8_env envp;
    sfp8_format facc;       /* accumulator format and its rounding */
    sfp8_env envacc;
    sfp8_format fprom;      /* promoted running sum (promote > 0), rounded with envprom */
    sfp8_env envprom;
} sfp8u_model;

/* A decoded operand, addend or result: its class, sign, and a finite value
 * (-1)^neg * sig * 2^exp (sig != 0).  sub: the code is subnormal (denormal when read as an
 * operand); a subnormal of a format that flushes them decodes as a zero. */
enum { SFP8U_ZERO = 0, SFP8U_FINITE, SFP8U_INF, SFP8U_NAN };
typedef struct sfp8u_value {
    uint8_t cls, neg, snan, sub;
    uint64_t sig;
    int64_t exp;
} sfp8u_value;
void sfp8u_decode(const sfp8_format *f, uint64_t code, sfp8u_value *v);

/* A partial sum of the block-FMA model: T * 2^(E - W) for the model's window W
 * (E = SFP8U_NO_EXP: none, T = 0). */
#define SFP8U_NO_EXP INT64_MIN
typedef struct sfp8u_psum {
    __int128 T;
    int64_t E;
} sfp8u_psum;
/* The two-term alignment x + y of the late addend and of odd/even groups (docs/matrix-units.md):
 * X extra bits when x is the smaller term; the result's unit is 2^(*E - W - *xout); the
 * smaller term is rounded by mode (an SFP8_ROUND_* of alignment_rounding), truncated when
 * far >= 0 and it lies more than far binades below; *inexact set when bits are lost. */
__int128 sfp8u_two_term(sfp8u_psum x, sfp8u_psum y, int X, int mode, int64_t far, int64_t *E, int *xout,
                        int *inexact);

/* 0 if md is a model sfp8u_dot computes, else a short reason (a static string). */
const char *sfp8u_check(const sfp8u_model *md);

/* A model from its flat int32 encoding (bfma_params.c, softfp8.matrix_units.model_ints),
 * checked: 0, or a short reason (a static string).  has_addend is left 0. */
#define SFP8U_MODEL_INTS 87
const char *sfp8u_model_from_ints(const int32_t *v, int64_t n, sfp8u_model *m);

/* One output element.  a[l], b[l] (l < k): operand codes (binary32 bit patterns for
 * binary32 operands); c: the addend's code in fo (ignored without has_addend).  Returns
 * the result's code in fo and ORs the flags into *flags. */
uint64_t sfp8u_dot(const sfp8u_model *md, const uint32_t *a, const uint32_t *b, int64_t k, uint64_t c,
                   uint8_t *flags);

/* O[i, j] = dot(A[i, :], B[:, j], C[i, j]) for i < m, j < p.  Strides in bytes; A's and B's
 * elements have their formats' storage sizes (1, 2, or 4 bytes for binary32), C's and O's
 * fo's (1, 2, 4 or 8); C may be NULL (no addend, or has_addend = 0).  Returns the OR of
 * the flags, plus SFP8U_NOMEM (nothing written) if memory runs out. */
#define SFP8U_NOMEM 0x100u
unsigned sfp8u_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                    ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O,
                    ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k, int64_t p);
#endif
