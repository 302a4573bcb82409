/* The from_float8 family's parameters that other families read (internal to
 * fast/): the arithmetic binary64 cast's constants (from_float8.c; the key
 * tables of sr_from_float8 and the AVX-512 kernel of sr_from_float8 use them). */
#ifndef SOFTFP8_FAST_FROM_FLOAT8_H
#define SOFTFP8_FAST_FROM_FLOAT8_H
#include <stdint.h>

#include "softfp8/softfp8.h"

typedef struct sfp8s_cast64 {
    int ok;                  /* 1: the format and environment are covered (sfp8f_cast64_params sets it) */
    int M, emin, tb, rounding;
    uint32_t maxmag, signbit;   /* largest finite magnitude code, sign bit */
    uint32_t negzero;           /* 1: a negative zero result keeps its sign bit (0: FNUZ, P3109) */
    uint32_t ovf0, ovf1;        /* overflow results of each sign, and their flags (from the core) */
    uint32_t ovf_fl0, ovf_fl1;
} sfp8s_cast64;

/* the arithmetic cast's parameters of f under a deterministic env (p->ok 0: not
   covered: signed formats with IEEE subnormals and 1..4 mantissa bits whose
   codes 0..maxmag are the finite magnitudes in order) */
void sfp8f_cast64_params(const sfp8_format *f, const sfp8_env *env, sfp8s_cast64 *p);
#endif
