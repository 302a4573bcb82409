/* binary32 / binary64 -> 16-bit format casts (cast16.c, sr_cast16.c): the
 * parameters and the matrix engine's entries (families.c) */
#ifndef SFP8_CAST16_H
#define SFP8_CAST16_H

#include <stddef.h>
#include <stdint.h>

#include "fast.h"

typedef struct sfp8f_c16 {
    const sfp8_format *src, *dst; /* the core's operands for uncovered lanes */
    const sfp8_env *env;
    sfp8f_rnd r;          /* the rounder (full: covers every finite normal binary64) */
    int full;             /* 1: sfp8f_rounder covers the format; 0: normal range only (SHP, UHP) */
    int simd;             /* 1: the SIMD kernels may run (exponent range, a SIMD level) */
    int unsig;            /* 1: no sign bit */
    int f32;              /* 1: binary32 inputs may run in binary32 arithmetic (AVX-512) */
} sfp8f_c16;

/* 1 and *p filled if src (binary32 / binary64) -> dst (9..16 bits) under env has
 * the fast path at the current SIMD level; 0: the core.  And its run at the
 * current level (families.c). */
int sfp8f_cast16(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8f_c16 *p);
unsigned sfp8f_run_cast16(const sfp8f_c16 *p, const char *a, ptrdiff_t sa, int isize, char *o, ptrdiff_t so,
                          ptrdiff_t n, uint8_t *flout);
/* the same for the kernel of SIMD level `level` (cast16.c) */
int sfp8f_cast16_params(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, int level,
                        sfp8f_c16 *p);

#endif
