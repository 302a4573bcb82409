/* binary32 / binary64 -> 16-bit format casts (cast16.c) */
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
 * the fast path; 0: the core */
int sfp8f_cast16(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8f_c16 *p);
unsigned sfp8f_run_cast16(const sfp8f_c16 *p, const char *a, ptrdiff_t sa, int isize, char *o, ptrdiff_t so,
                          ptrdiff_t n, uint8_t *flout);

/* stochastic rounding (any sr_bits): 1 and *p filled if covered; random bits of
 * element i: sfp8_random_u32(seed, stream, index0 + i), as the core's */
int sfp8f_cast16_sr(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8f_c16 *p);
unsigned sfp8f_run_cast16_sr(const sfp8f_c16 *p, uint64_t seed, uint64_t stream, uint64_t index0, const char *a,
                             ptrdiff_t sa, int isize, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

#endif
