/* Element operations by id: the dispatch and the op info table, both
 * generated from ops.def (see ops.h). */
#include "ops.h"

const sfp8x_opinfo sfp8x_ops[X_NUM_OPS] = {
#define SFP8_OP(ID, name, kind, attrs, ufunc, identity, call) {name, kind, attrs, ufunc, identity},
#include "ops.def"
#undef SFP8_OP
};

static const sfp8_env exact_env = {SFP8_ROUND_NEAREST_EVEN, 1, 0, 32, 0};

uint32_t sfp8x_small_int(const sfp8_format *f, int v)
{
    uint8_t fl = 0;
    return sfp8_from_int64(f, v, &exact_env, &fl);
}

/* NumPy's sign: -1, 0 or +1 (+1 code is the largest value if 1 is not representable) */
uint32_t sfp8x_sign(const sfp8_format *f, uint32_t a, uint8_t *fl)
{
    int cls = sfp8_classify(f, a);
    if (cls >= SFP8_CLASS_QNAN) return sfp8_add(f, a, sfp8x_small_int(f, 0), &exact_env, fl);
    if (cls == SFP8_CLASS_ZERO) return sfp8x_small_int(f, 0);
    if (f->subnormals == SFP8_SUBNORMALS_FLUSH && cls == SFP8_CLASS_SUBNORMAL) return sfp8x_small_int(f, 0);
    return sfp8_signbit(f, a) ? sfp8_neg(f, sfp8x_small_int(f, 1)) : sfp8x_small_int(f, 1);
}

/* floor / ceil / trunc: round to integral in a fixed direction (never stochastic) */
uint32_t sfp8x_round_integral_mode(const sfp8_format *f, uint32_t a, int mode, const sfp8_env *env, uint8_t *fl)
{
    sfp8_env e2 = *env;
    e2.rounding = mode;
    return sfp8_round_integral(f, a, &e2, 0, fl);
}

uint32_t sfp8x_divmod(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *fl,
                      uint32_t *r2)
{
    *r2 = sfp8_remainder(f, a, b, env, fl);
    return sfp8_floordiv(f, a, b, env, fl);
}

uint32_t sfp8x_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env,
                     uint8_t *fl)
{
    uint32_t r2 = 0;
    return sfp8x_apply_ext(op, f, a, b, c, 0, env, fl, &r2);
}

uint32_t sfp8x_apply_ext(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, int64_t n,
                         const sfp8_env *env, uint8_t *fl, uint32_t *r2)
{
    (void)b;
    (void)c;
    (void)n;
    (void)r2;
    switch (op) {
#define SFP8_OP(ID, name, kind, attrs, ufunc, identity, call) \
    case X_##ID:                                              \
        return (uint32_t)(call);
#include "ops.def"
#undef SFP8_OP
    default:
        return 0;
    }
}
