/* One table of element operations shared by the NumPy loops, the softfp8.bits
 * kernels and the fast-path table builder (internal). */
#ifndef SOFTFP8_OPS_H
#define SOFTFP8_OPS_H
#include "softfp8/softfp8.h"

enum sfp8x_op {
    /* binary, result a code */
    X_ADD = 0, X_SUB, X_MUL, X_DIV, X_FLOORDIV, X_REM, X_MAX, X_MIN, X_FMAX, X_FMIN,
    X_COPYSIGN, X_NEXTAFTER,
    /* binary, result 0/1 (quiet comparisons, NumPy semantics) */
    X_EQ, X_NE, X_LT, X_LE, X_GT, X_GE,
    /* binary, result an sfp8_relation stored as (uint32_t)(int32_t)rel */
    X_CMP_QUIET, X_CMP_SIGNALING,
    /* unary, result a code */
    X_NEG, X_POS, X_ABS, X_SQRT, X_SQUARE, X_RECIP, X_SIGN, X_FLOOR, X_CEIL, X_TRUNC, X_RINT,
    X_SPACING, X_RINT_EXACT,
    /* unary, result 0/1 */
    X_ISNAN, X_ISINF, X_ISFINITE, X_SIGNBIT,
    /* ternary */
    X_FMA,
    X_NUM_OPS
};

#define X_IS_BINARY(op) ((op) <= X_CMP_SIGNALING)
#define X_IS_UNARY(op) ((op) >= X_NEG && (op) <= X_SIGNBIT)
/* operations whose result does not depend on rounding, saturation or tininess */
int sfp8x_env_free(int op);

uint32_t sfp8x_binary(int op, const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env,
                      uint8_t *flags);
uint32_t sfp8x_unary(int op, const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
#endif
