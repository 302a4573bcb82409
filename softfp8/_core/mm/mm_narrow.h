/* The narrow-accumulator kernels of the accumulation models (mm_narrow.c), called by
 * mm_model.c (path model_fma16): sums of exact binary32 products rounded into an
 * accumulator of at most 20 mantissa bits after every addition. */
#ifndef SOFTFP8_MM_NARROW_H
#define SOFTFP8_MM_NARROW_H
#include <stdint.h>

typedef struct mm_nrw {
    int level;     /* SIMD level of the kernel (0: portable) */
    int mode;      /* the accumulator's rounding (SFP8_ROUND_*) */
    int odd;       /* 1: the binary32 sum is rounded to odd first; 0: hardware sum in the mode */
    int mid;       /* odd, AVX2: the nearest-even sum unless it is a midpoint of the accumulator's
                      grid (products wide enough that midpoints are rare) */
    int tiny;      /* 1: an inexact sum below 2^emin is possible (underflow tracked); 0: the
                      products are multiples of the subnormal unit 2^(emin - M) */
    int tb;        /* the accumulator's tininess: before rounding (1) or after (0) */
    int M;         /* the accumulator's mantissa bits (1 .. 20) */
    uint32_t eminb; /* binary32 exponent field of 2^max(emin, -126) */
    uint32_t topb;  /* exponent field from which a sum is declined (the format's top binade) */
    float z;       /* a chunk's start: -0, +0 rounding downward */
} mm_nrw;

#define MM_NRW_FW 128 /* columns per call at most */

/* out[jj] = the accumulator after products l0 .. l1 - 1 of columns j0 + jj (jj < n):
 * acc = round(acc + arow[l] * B[l * P + j0 + jj]) from acc = z; B's rows hold P >= j0 +
 * n rounded up to 16 columns.  Returns 1 if a rounding was inexact, | 4 if one underflowed
 * (SFP8_FLAG_UNDERFLOW), or 2 if the block must be declined (a sum in the top binade). */
unsigned mm_nrw_run(const mm_nrw *q, const float *arow, const float *B, int64_t P, int64_t l0, int64_t l1,
                    int64_t j0, int n, float *out);
/* model_f32 with a product format (level >= 1; the caller's test): out[jj] = the binary32 sums
 * at nearest even, from -0, of the products arow[l] * B[l * P + j0 + jj] (exact binary32
 * numbers) each rounded at nearest even into the product format q describes (M, eminb, topb,
 * tiny, tb; mode nearest even, z -0); add: out[jj] += that sum, one more addition.  Returns
 * 1 if a rounding or a sum was inexact, | 4 if a product's rounding underflowed, or 2 if the
 * block must be declined (a product in the format's top binade). */
unsigned mm_nrw_prod(const mm_nrw *q, const float *arow, const float *B, int64_t P, int64_t l0, int64_t l1,
                     int64_t j0, int n, float *out, int add);
/* F[jj] = RN_binary32(F[jj] + S[jj]); 1 if one was inexact (the thread at nearest even),
 * | 2 if one is not finite (overflow: the block must be declined) */
unsigned mm_nrw_promote(int level, float *F, const float *S, int n);
#endif
