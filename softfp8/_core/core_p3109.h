/* IEEE P3109 operations with the report's projection over arrays (internal; the
 * element function sfp8_p3109_apply is public, softfp8.h). */
#ifndef SOFTFP8_CORE_P3109_H
#define SOFTFP8_CORE_P3109_H
#include <stddef.h>
#include <stdint.h>
#include "softfp8/softfp8.h"

/* n elements of P3109 operation op (sfp8_p3109_apply): data[0 .. arity-1] the
 * operands, data[arity] the result, contiguous codes of f (1 byte for <= 8 bits, a
 * native uint16 otherwise).  random: the per-element stochastic words (env->random
 * of element i) or NULL.  Returns the OR of the bad-call flags (0 on a good call). */
unsigned sfp8x_p3109_run(int op, const sfp8_format *f, const sfp8_env *env, const uint32_t *random,
                         char *const data[], ptrdiff_t n, int saturation);
/* sfp8_p3109_project_value with RoundToPrecision in round_mode (>= 0; -1: env's)
 * while Saturate reads env->rounding: StochasticC's midpoints, which truncate but
 * saturate as the stochastic mode does (softfp8.p3109.project) */
uint32_t sfp8x_p3109_project_in(const sfp8_format *f, int kind, int sign, uint64_t sig, int64_t exp, int sticky,
                                const sfp8_env *env, int round_mode, int saturation, uint8_t *flags);
#endif
