/* Element operations by id: the one switch over operations (see ops.h). */
#include "ops.h"

int sfp8x_env_free(int op)
{
    switch (op) {
    case X_MAX: case X_MIN: case X_FMAX: case X_FMIN: case X_COPYSIGN: case X_NEXTAFTER:
    case X_EQ: case X_NE: case X_LT: case X_LE: case X_GT: case X_GE:
    case X_CMP_QUIET: case X_CMP_SIGNALING:
    case X_NEG: case X_POS: case X_ABS:
    case X_ISNAN: case X_ISINF: case X_ISFINITE: case X_SIGNBIT:
        return 1;
    default:
        return 0;
    }
}

static const sfp8_env exact_env = {SFP8_ROUND_NEAREST_EVEN, 1, 0, 32, 0};

static uint32_t small_int(const sfp8_format *f, int v)
{
    uint8_t fl = 0;
    return sfp8_from_int64(f, v, &exact_env, &fl);
}

/* NumPy's sign: -1, 0 or +1 (+1 code is the largest value if 1 is not representable) */
static uint32_t sign_of(const sfp8_format *f, uint32_t a, uint8_t *fl)
{
    int cls = sfp8_classify(f, a);
    if (cls >= SFP8_CLASS_QNAN) return sfp8_add(f, a, small_int(f, 0), &exact_env, fl);
    if (cls == SFP8_CLASS_ZERO) return small_int(f, 0);
    if (f->subnormals == SFP8_SUBNORMALS_FLUSH && cls == SFP8_CLASS_SUBNORMAL) return small_int(f, 0);
    return sfp8_signbit(f, a) ? sfp8_neg(f, small_int(f, 1)) : small_int(f, 1);
}

uint32_t sfp8x_binary(int op, const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env,
                      uint8_t *fl)
{
    int r;
    switch (op) {
    case X_ADD: return sfp8_add(f, a, b, env, fl);
    case X_SUB: return sfp8_sub(f, a, b, env, fl);
    case X_MUL: return sfp8_mul(f, a, b, env, fl);
    case X_DIV: return sfp8_div(f, a, b, env, fl);
    case X_FLOORDIV: return sfp8_floordiv(f, a, b, env, fl);
    case X_REM: return sfp8_remainder(f, a, b, env, fl);
    case X_MAX: return sfp8_max(f, a, b, fl);
    case X_MIN: return sfp8_min(f, a, b, fl);
    case X_FMAX: return sfp8_maxnum(f, a, b, fl);
    case X_FMIN: return sfp8_minnum(f, a, b, fl);
    case X_COPYSIGN: return sfp8_copysign(f, a, b);
    case X_NEXTAFTER: return sfp8_nextafter(f, a, b, fl);
    case X_CMP_QUIET: return (uint32_t)(int32_t)sfp8_compare(f, a, b, 0, fl);
    case X_CMP_SIGNALING: return (uint32_t)(int32_t)sfp8_compare(f, a, b, 1, fl);
    default: break;
    }
    r = sfp8_compare(f, a, b, 0, fl);
    switch (op) {
    case X_EQ: return r == SFP8_EQUAL;
    case X_NE: return r != SFP8_EQUAL;
    case X_LT: return r == SFP8_LESS;
    case X_LE: return r == SFP8_LESS || r == SFP8_EQUAL;
    case X_GT: return r == SFP8_GREATER;
    case X_GE: return r == SFP8_GREATER || r == SFP8_EQUAL;
    default: return 0;
    }
}

uint32_t sfp8x_unary(int op, const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *fl)
{
    sfp8_env e2 = *env;
    int cls;
    switch (op) {
    case X_NEG: return sfp8_neg(f, a);
    case X_POS: return a;
    case X_ABS: return sfp8_abs(f, a);
    case X_SQRT: return sfp8_sqrt(f, a, env, fl);
    case X_SQUARE: return sfp8_mul(f, a, a, env, fl);
    case X_RECIP: return sfp8_div(f, small_int(f, 1), a, env, fl);
    case X_SIGN: return sign_of(f, a, fl);
    case X_FLOOR: e2.rounding = SFP8_ROUND_DOWNWARD; return sfp8_round_integral(f, a, &e2, 0, fl);
    case X_CEIL: e2.rounding = SFP8_ROUND_UPWARD; return sfp8_round_integral(f, a, &e2, 0, fl);
    case X_TRUNC: e2.rounding = SFP8_ROUND_TOWARD_ZERO; return sfp8_round_integral(f, a, &e2, 0, fl);
    case X_RINT: return sfp8_round_integral(f, a, env, 0, fl);
    case X_RINT_EXACT: return sfp8_round_integral(f, a, env, 1, fl);
    case X_SPACING: return sfp8_spacing(f, a, env, fl);
    default: break;
    }
    cls = sfp8_classify(f, a);
    switch (op) {
    case X_ISNAN: return cls >= SFP8_CLASS_QNAN;
    case X_ISINF: return cls == SFP8_CLASS_INF;
    case X_ISFINITE: return cls < SFP8_CLASS_INF;
    case X_SIGNBIT: return (uint32_t)sfp8_signbit(f, a);
    default: return 0;
    }
}
