/* Element operations by id (internal), derived from the one operation table
 * ops.def: the enum, the kinds and attributes, and the dispatch.  Shared by the
 * array driver (driver.c: NumPy loops and softfp8.bits), the fast-path table
 * builder and the Python op table (_ext.op_table()). */
#ifndef SOFTFP8_OPS_H
#define SOFTFP8_OPS_H
#include <stddef.h>

#include "softfp8/softfp8.h"

/* operand/result kinds (column `kind` of ops.def) */
enum sfp8x_kind { K_BINARY = 0, K_COMPARE, K_RELATION, K_UNARY, K_PREDICATE, K_TERNARY };
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

static inline int sfp8x_arity(int op)
{
    int k = sfp8x_ops[op].kind;
    return k == K_TERNARY ? 3 : (k == K_UNARY || k == K_PREDICATE) ? 1 : 2;
}
/* result is 0/1 (NumPy bool) */
static inline int sfp8x_bool_result(int op)
{
    return sfp8x_ops[op].kind == K_COMPARE || sfp8x_ops[op].kind == K_PREDICATE;
}
#define X_IS_BINARY(op) (sfp8x_arity(op) == 2)
#define X_IS_UNARY(op) (sfp8x_arity(op) == 1)
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
uint32_t sfp8x_sign(const sfp8_format *f, uint32_t a, uint8_t *fl);
uint32_t sfp8x_round_integral_mode(const sfp8_format *f, uint32_t a, int mode, const sfp8_env *env, uint8_t *fl);

/* one element of op; b and c are ignored by operations of lower arity.
 * Codes are masked to the format's width by the core. */
uint32_t sfp8x_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env,
                     uint8_t *fl);
#endif
