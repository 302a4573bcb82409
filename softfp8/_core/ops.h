/* Element operations by id (internal), derived from the one operation table
 * ops.def: the enum, the kinds and attributes, and the dispatch.  Shared by the
 * array driver (driver.c: NumPy loops and softfp8.bits), the fast-path table
 * builder and the Python op table (_ext.op_table()). */
#ifndef SOFTFP8_OPS_H
#define SOFTFP8_OPS_H
#include <stddef.h>

#include "softfp8/softfp8.h"

/* operand/result kinds (column `kind` of ops.def) */
enum sfp8x_kind {
    K_BINARY = 0, K_COMPARE, K_RELATION, K_UNARY, K_PREDICATE, K_TERNARY,
    K_UNARY2,     /* a -> (code, code)                        */
    K_UNARY_I32,  /* a -> (code, int32)                       */
    K_BINARY2,    /* (a, b) -> (code, code)                   */
    K_BINARY_I64, /* (a, n) -> code, n an int64 (not a code)  */
    K_UNARY_I64   /* a -> int64                               */
};
/* attributes (column `attrs`) */
#define A_ENV 1     /* rounds: depends on the environment (and random bits) */
#define A_NOFLAGS 2 /* bit operation: never raises a flag                  */
/* reduction identities (column `identity`) */
enum sfp8x_identity { R_NONE = 0, R_ZERO, R_ONE };

enum sfp8x_op {
#define SFP8_OP(ID, name, kind, attrs, ufunc, identity, call) X_##ID,
#include "ops.def"
#undef SFP8_OP
    X_NUM_OPS
};

typedef struct sfp8x_opinfo {
    const char *name;  /* softfp8.bits / CLI name */
    int kind;          /* enum sfp8x_kind */
    int attrs;         /* A_ENV | A_NOFLAGS */
    const char *ufunc; /* NumPy ufunc name or NULL */
    int identity;      /* enum sfp8x_identity */
} sfp8x_opinfo;
extern const sfp8x_opinfo sfp8x_ops[X_NUM_OPS];

/* number of operands */
static inline int sfp8x_arity(int op)
{
    int k = sfp8x_ops[op].kind;
    return k == K_TERNARY ? 3
           : (k == K_UNARY || k == K_PREDICATE || k == K_UNARY2 || k == K_UNARY_I32 || k == K_UNARY_I64) ? 1
                                                                                                       : 2;
}
/* number of results */
static inline int sfp8x_nout(int op)
{
    int k = sfp8x_ops[op].kind;
    return (k == K_UNARY2 || k == K_UNARY_I32 || k == K_BINARY2) ? 2 : 1;
}
/* the element kinds: every operand and the one result are codes of the format
   (or a bool / relation result); the other kinds have an int operand or two results */
static inline int sfp8x_codes_only(int op) { return sfp8x_ops[op].kind <= K_TERNARY; }
/* result is 0/1 (NumPy bool) */
static inline int sfp8x_bool_result(int op)
{
    return sfp8x_ops[op].kind == K_COMPARE || sfp8x_ops[op].kind == K_PREDICATE;
}
/* code operands -> one result (the kinds the fast-path tables cover) */
#define X_IS_BINARY(op) (sfp8x_codes_only(op) && sfp8x_arity(op) == 2)
#define X_IS_UNARY(op) (sfp8x_codes_only(op) && sfp8x_arity(op) == 1)
/* operations whose result does not depend on rounding, saturation or tininess */
static inline int sfp8x_env_free(int op) { return !(sfp8x_ops[op].attrs & A_ENV); }
/* reductions may be reordered: ops with an identity, and the selections */
static inline int sfp8x_reorderable(int op)
{
    return sfp8x_ops[op].identity != R_NONE || op == X_MAX || op == X_MIN || op == X_FMAX || op == X_FMIN;
}

/* helpers used by rows of ops.def */
static inline uint32_t sfp8x_rel_is(int rel, unsigned mask) { return (mask >> (rel + 1)) & 1u; }
uint32_t sfp8x_small_int(const sfp8_format *f, int v);
/* a K_UNARY_I64 result: its low word returned, the high word through r2 */
static inline uint32_t sfp8x_split64(int64_t v, uint32_t *r2)
{
    *r2 = (uint32_t)((uint64_t)v >> 32);
    return (uint32_t)(uint64_t)v;
}
uint32_t sfp8x_sign(const sfp8_format *f, uint32_t a, uint8_t *fl);
uint32_t sfp8x_round_integral_mode(const sfp8_format *f, uint32_t a, int mode, const sfp8_env *env, uint8_t *fl);
/* NumPy's divmod: (floor_divide, remainder), each exactly as its own row */
uint32_t sfp8x_divmod(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *fl,
                      uint32_t *r2);
/* value zero (a flushed subnormal included): NumPy's logical_not */
static inline uint32_t sfp8x_is_zero(const sfp8_format *f, uint32_t a)
{
    int cls = sfp8_classify(f, a);
    return cls == SFP8_CLASS_ZERO || (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH);
}

/* one element of op; b and c are ignored by operations of lower arity.
 * Codes are masked to the format's width by the core.  For the code-only
 * kinds (sfp8x_codes_only). */
uint32_t sfp8x_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env,
                     uint8_t *fl);
/* one element of any kind: n is the int64 operand of K_BINARY_I64, *r2
 * receives the second result of the two-result kinds (an int32 cast through
 * uint32_t for K_UNARY_I32) */
uint32_t sfp8x_apply_ext(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, int64_t n,
                         const sfp8_env *env, uint8_t *fl, uint32_t *r2);
#endif
