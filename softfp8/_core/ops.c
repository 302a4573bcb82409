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

/* ---- ISA conventions of the operations (core.c, "ISA conventions", says what they
 *      are; the conversions apply theirs in sfp8_convert) ---- */

static int is_nan(const sfp8_format *f, uint64_t a)
{
    int c = sfp8_classify(f, a);
    return c == SFP8_CLASS_QNAN || c == SFP8_CLASS_SNAN;
}

static int is_snan(const sfp8_format *f, uint64_t a) { return sfp8_classify(f, a) == SFP8_CLASS_SNAN; }
static int is_inf(const sfp8_format *f, uint64_t a) { return sfp8_classify(f, a) == SFP8_CLASS_INF; }
static int is_zero(const sfp8_format *f, uint64_t a) { return sfp8_classify(f, a) == SFP8_CLASS_ZERO; }

/* The NaN result of op under the convention; x[0..n) are the (DAZ-read) operands. */
static uint64_t isa_nan(int op, const sfp8_format *f, const uint64_t *x, int n, int isa)
{
    static const int fma_arm_order[3] = {2, 0, 1}; /* Arm FPMulAdd: addend first */
    const int *order = NULL;
    int i;
    if (isa == SFP8_ISA_ARM_DN || isa == SFP8_ISA_RISCV) return sfp8x_isa_default_nan(f, isa);
    if (op == X_FMA && n == 3 && !is_nan(f, x[0]) && !is_nan(f, x[1]) &&
        ((is_inf(f, x[0]) && is_zero(f, x[1])) || (is_zero(f, x[0]) && is_inf(f, x[1])))) {
        /* inf * 0 + NaN: x86 (SoftFloat 8086-SSE) gives the indefinite NaN for any
           NaN addend; Arm the default NaN for a quiet one (a signalling addend is
           propagated, below) */
        if (isa == SFP8_ISA_X86 || (isa == SFP8_ISA_ARM && !is_snan(f, x[2]))) return sfp8x_isa_default_nan(f, isa);
    }
    if (isa == SFP8_ISA_ARM) {
        if (op == X_FMA && n == 3) order = fma_arm_order;
        for (i = 0; i < n; i++) { /* signalling NaNs first */
            uint64_t v = x[order ? order[i] : i];
            if (is_snan(f, v)) return sfp8x_quiet_nan(f, v);
        }
    }
    for (i = 0; i < n; i++) {
        uint64_t v = x[order ? order[i] : i];
        if (is_nan(f, v)) return sfp8x_quiet_nan(f, v);
    }
    return sfp8x_isa_default_nan(f, isa); /* an invalid operation */
}

static uint32_t isa_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, int64_t n,
                          const sfp8_env *env, uint8_t *fl, uint32_t *r2)
{
    sfp8_env e = *env;
    int isa = env->isa & 0xFF, kind = sfp8x_ops[op].kind, arity = sfp8x_arity(op);
    int codes_out = kind == K_BINARY || kind == K_UNARY || kind == K_TERNARY || kind == K_UNARY2 ||
                    kind == K_BINARY2 || kind == K_BINARY_I64 || kind == K_UNARY_I32;
    int two_codes = kind == K_UNARY2 || kind == K_BINARY2;
    uint64_t x[3];
    uint32_t r;
    int nx = kind == K_BINARY_I64 ? 1 : arity;
    e.isa = 0;
    x[0] = a & sfp8_code_mask(f);
    x[1] = b & sfp8_code_mask(f);
    x[2] = c & sfp8_code_mask(f);
    if (env->isa & SFP8_ISA_DAZ)
        for (int i = 0; i < nx; i++) x[i] = sfp8x_daz(f, x[i], fl);
    r = sfp8x_apply_ext(op, f, (uint32_t)x[0], nx > 1 ? (uint32_t)x[1] : b, nx > 2 ? (uint32_t)x[2] : c, n, &e,
                        fl, r2);
    if (!codes_out) return r;
    if (isa != SFP8_ISA_DEFAULT) {
        if (is_nan(f, r)) r = (uint32_t)isa_nan(op, f, x, nx, isa);
        if (two_codes && is_nan(f, *r2)) *r2 = (uint32_t)isa_nan(op, f, x, nx, isa);
    }
    if ((env->isa & SFP8_ISA_FTZ) && (sfp8x_ops[op].attrs & A_ENV)) {
        r = (uint32_t)sfp8x_ftz(f, r, fl);
        if (two_codes) *r2 = (uint32_t)sfp8x_ftz(f, *r2, fl);
    }
    return r;
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
    /* an ISA convention other than softfp8's (above); bit operations keep theirs */
    if (env && env->isa && !(sfp8x_ops[op].attrs & A_NOFLAGS)) return isa_apply(op, f, a, b, c, n, env, fl, r2);
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
