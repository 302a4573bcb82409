/* Element operations by id: the dispatch and the op info table, both
 * generated from ops.def (see ops.h). */
#include "ops.h"

#include "core_x.h"

#include <string.h>

const sfp8x_opinfo sfp8x_ops[X_NUM_OPS] = {
#define SFP8_OP(ID, name, kind, attrs, ufunc, identity, call) {name, kind, attrs, ufunc, identity},
#include "ops.def"
#undef SFP8_OP
};

static const sfp8_env exact_env = {SFP8_ROUND_NEAREST_EVEN, 1, 0, 32, 0, 0};

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
    /* an ISA convention other than softfp8's (core_isa.c); bit operations keep theirs */
    if (env && env->isa && !(sfp8x_ops[op].attrs & A_NOFLAGS)) return sfp8x_isa_apply(op, f, a, b, c, n, env, fl, r2);
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

/* ---- the public view of the table (softfp8.h: sfp8_op_*) ---- */
_Static_assert((int)SFP8_OP_BINARY == (int)K_BINARY && (int)SFP8_OP_COMPARE == (int)K_COMPARE &&
                   (int)SFP8_OP_RELATION == (int)K_RELATION && (int)SFP8_OP_UNARY == (int)K_UNARY &&
                   (int)SFP8_OP_PREDICATE == (int)K_PREDICATE && (int)SFP8_OP_TERNARY == (int)K_TERNARY &&
                   (int)SFP8_OP_UNARY2 == (int)K_UNARY2 && (int)SFP8_OP_UNARY_I32 == (int)K_UNARY_I32 &&
                   (int)SFP8_OP_BINARY2 == (int)K_BINARY2 && (int)SFP8_OP_BINARY_I64 == (int)K_BINARY_I64 &&
                   (int)SFP8_OP_UNARY_I64 == (int)K_UNARY_I64,
               "public and internal operation kinds agree");
_Static_assert(SFP8_OP_ROUNDS == A_ENV && SFP8_OP_NOFLAGS == A_NOFLAGS, "public and internal attributes agree");

static int op_valid(int op) { return op >= 0 && op < X_NUM_OPS; }

int sfp8_op_count(void) { return X_NUM_OPS; }

int sfp8_op_lookup(const char *name)
{
    if (name == NULL) return -1;
    for (int op = 0; op < X_NUM_OPS; op++)
        if (strcmp(sfp8x_ops[op].name, name) == 0) return op;
    return -1;
}

const char *sfp8_op_name(int op) { return op_valid(op) ? sfp8x_ops[op].name : NULL; }
int sfp8_op_kind(int op) { return op_valid(op) ? sfp8x_ops[op].kind : -1; }
int sfp8_op_attrs(int op) { return op_valid(op) ? sfp8x_ops[op].attrs : 0; }
int sfp8_op_arity(int op) { return op_valid(op) ? sfp8x_arity(op) : 0; }

uint32_t sfp8_op_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env,
                       uint8_t *flags)
{
    uint32_t mask = sfp8_code_mask(f);
    int arity = op_valid(op) ? sfp8x_arity(op) : 0;
    if (!op_valid(op) || sfp8x_ops[op].kind > K_TERNARY) {
        *flags |= SFP8_FLAG_INVALID | SFP8_FLAG_BADCALL;
        return 0;
    }
    /* a code with bits above the width is a bad call, never masked */
    if ((a & ~mask) || (arity >= 2 && (b & ~mask)) || (arity >= 3 && (c & ~mask))) {
        *flags |= SFP8_FLAG_BADCALL;
        return 0;
    }
    return sfp8x_apply(op, f, a, b, c, env, flags);
}
