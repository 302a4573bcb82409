/*
 * Correctly rounded elementary functions: the shared machinery (elem.c).
 *
 * Every function computes the exact mathematical result of the operands'
 * exact values and rounds it ONCE through the core's round-and-pack
 * (sfp8x_round), in every rounding mode, stochastic included.  Two kinds of
 * result:
 *
 *  - dyadic results (exp(0) = 1, cbrt(-8) = -2, power(2, 3) = 8, hypot(3, 4)
 *    = 5, log2(8) = 3, ...): detected by the function from the operands and
 *    rounded exactly with sfp8e_exact() (exact means no flag at all when the
 *    value is representable);
 *  - every other result is not a dyadic rational (transcendental, or
 *    rational with an odd denominator), so it is never a rounding boundary
 *    of any mode, and Ziv's strategy decides it: an approximation y with a
 *    proven error bound err, |exact - y| <= err, is rounded if every value of
 *    the open interval (y - err, y + err) rounds to the same code with the
 *    same flags (sfp8e_round_d / sfp8e_round_q; rounding is monotone in the
 *    value for a fixed mode and fixed random bits, flags included).  First in
 *    binary64 with libm (fast), then, if undecided, in binary128 (libquadmath
 *    on x86-64, long double where it is binary128).  A result still undecided
 *    at binary128 would have to lie within ~2^-100 relative of a boundary; it
 *    is then rounded from the binary128 approximation (sfp8e_round_last).
 *
 * Results outside binary64's / binary128's exponent range: the functions
 * carry a separate power of two (`scale`): the value is y * 2^scale.
 */
#ifndef SOFTFP8_ELEM_H
#define SOFTFP8_ELEM_H
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "core_x.h"

/* ---- binary128 ---- */
#if defined(__SIZEOF_FLOAT128__) && (defined(__x86_64__) || defined(__i386__))
#include <quadmath.h>
typedef __float128 sfp8q;
#define QF(fn) fn##q /* QF(exp)(x) = expq(x) */
#define QC(c) c##Q   /* binary128 literal */
#elif LDBL_MANT_DIG == 113
typedef long double sfp8q;
#define QF(fn) fn##l
#define QC(c) c##L
#else
#error "softfp8's elementary functions need binary128 (__float128 with libquadmath, or a binary128 long double)"
#endif

/* Error bounds to pass as err (relative to |y|): libm's binary64 functions of
 * glibc are documented within a few ulps; 2^-48 allows 32 ulps.  libquadmath's
 * within a few ulps of 2^-112; 2^-104 allows 256. */
#define SFP8E_REL_D 0x1p-48
#define SFP8E_REL_Q QC(0x1p-104)

/* The value of a finite non-zero operand as binary64 / binary128 times 2^*scale:
 * the significand (exact: at most 16 bits) times 2^(exp - *scale), where *scale
 * is 0 when the value fits the type's normal range, else the excess. */
double sfp8e_to_d(const sfp8x_val *v, int64_t *scale);
sfp8q sfp8e_to_q(const sfp8x_val *v, int64_t *scale);

/* Round the exact non-dyadic value (-1)^sign * y * 2^scale, known to satisfy
 * |exact - y*2^scale| <= err*2^scale, y > 0, err >= 0.  Returns 1 with *out and
 * the flags (ORed into *flags) when the interval decides every mode, else 0
 * (nothing written).  y, err: binary64 (_d) or binary128 (_q). */
int sfp8e_round_d(const sfp8_format *f, const sfp8_env *env, int sign, double y, double err, int64_t scale,
                  uint32_t *out, uint8_t *flags);
int sfp8e_round_q(const sfp8_format *f, const sfp8_env *env, int sign, sfp8q y, sfp8q err, int64_t scale,
                  uint32_t *out, uint8_t *flags);
/* Last resort after sfp8e_round_q failed: round (-1)^sign * y * 2^scale as a
 * non-dyadic value just above y (inexact). */
uint32_t sfp8e_round_last(const sfp8_format *f, const sfp8_env *env, int sign, sfp8q y, int64_t scale,
                          uint8_t *flags);
/* Decode operand a (raises denormal); if it is a NaN, the propagated result in
 * *r and return 1 (the first step of every unary function). */
int sfp8e_unpack1(const sfp8_format *f, uint32_t a, sfp8x_val *x, uint32_t *r, uint8_t *flags);
/* sfp8e_round_q, and sfp8e_round_last when the interval does not decide. */
uint32_t sfp8e_round_q_last(const sfp8_format *f, const sfp8_env *env, int sign, sfp8q y, sfp8q err,
                            int64_t scale, uint8_t *flags);
/* An exact dyadic result (-1)^sign * sig * 2^exp (sig = 0: a signed zero). */
uint32_t sfp8e_exact(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                     uint8_t *flags);
/* (-1)^sign * (sig * 2^exp + dir * tiny), dir = +1 or -1: a value strictly
 * between sig * 2^exp and its neighbour at 2^-63 relative distance, for
 * arguments so small that only the sign of the correction matters
 * (exp(x) = 1 + x + ..., sin(x) = x - ..., for |x| below ~2^-40). */
uint32_t sfp8e_perturbed(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                         int dir, uint8_t *flags);


/* ---- rounding targets: a function's value delivered elsewhere than a format ----
 *
 * Every function rounds through these wrappers.  For a real format they are the
 * core's calls (sfp8x_round, sfp8x_inf, sfp8x_zero, sfp8x_invalid), so the
 * code-level functions behave as before.  A target (f->bits == 0: no format has
 * zero bits) hands the exact value -- or, from Ziv's stage, a value just above or
 * just below sig 2^exp -- to its own round function instead: the P3109 block
 * operations divide it by the result scale and project it (core_p3109_block.c).
 * The target also carries the operand, so the unary functions' first step,
 * sfp8e_unpack1, reads the decoded value from it instead of a code: calling
 * sfp8_exp(&t.f, 0, env, flags) is exp's value-level entry (sfp8e_unary_value);
 * hypot, arctan2 and atan2pi read their two operands (0: t->x, 1: t->y) the same way.
 *
 * Operand values: finite ones with significands of up to 32 bits (the block
 * operations' products S X of two codes of at most 16 bits) and exponents within
 * +-(2^21 + 64).  The functions' proofs for such operands: docs/semantics.md,
 * "P3109 operations" (block elementary functions). */
typedef struct sfp8e_target sfp8e_target;
/* kind SFP8X_ZERO / SFP8X_FINITE / SFP8X_INF / SFP8X_NAN (an invalid operation);
   side: 0 the exact value (-1)^sign sig 2^exp, +1 just above |value|, -1 just below */
typedef uint32_t (*sfp8e_round_fn)(const sfp8e_target *t, int kind, int sign, uint64_t sig, int64_t exp, int side,
                                   uint8_t *flags);
struct sfp8e_target {
    sfp8_format f;        /* zero-filled: bits == 0 marks a target; first member */
    sfp8x_val x, y;       /* the operands (not NaN): y is a binary function's second */
    sfp8e_round_fn round; /* delivers every result */
    const void *ctx;      /* the round function's data */
};
static inline const sfp8e_target *sfp8e_target_of(const sfp8_format *f)
{
    return f->bits == 0 ? (const sfp8e_target *)(const void *)f : NULL;
}
uint32_t sfp8e_rnd(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp, int sticky,
                   uint8_t *flags);
uint32_t sfp8e_inf(const sfp8_format *f, const sfp8_env *env, int sign, uint8_t *flags);
uint32_t sfp8e_zero(const sfp8_format *f, int sign, uint8_t *flags);
uint32_t sfp8e_invalid(const sfp8_format *f, uint8_t *flags);
/* sfp8x_unpack for a format; for a target its operand t->x (a = 0) or t->y (a = 1) */
void sfp8e_unpack(const sfp8_format *f, uint32_t a, sfp8x_val *x, uint8_t *flags);
/* A unary code-level function fn (sfp8_exp, ...) at the value t->x, delivered to t */
typedef uint32_t (*sfp8e_unary_fn)(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8e_unary_value(sfp8e_unary_fn fn, const sfp8e_target *t, const sfp8_env *env, uint8_t *flags);
/* A binary one (sfp8_hypot, sfp8_arctan2, sfp8_atan2pi) at the values (t->x, t->y) */
typedef uint32_t (*sfp8e_binary_fn)(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env,
                                    uint8_t *flags);
uint32_t sfp8e_binary_value(sfp8e_binary_fn fn, const sfp8e_target *t, const sfp8_env *env, uint8_t *flags);

/* ---- shared by the function files (elem_explog.c defines them) ---- */
#define far sfp8e_far
#define try_d sfp8e_try_d
#define ziv_q sfp8e_ziv_q
#define exp_q sfp8e_exp_q
#define odd_parts sfp8e_odd_parts
#define pow_exact sfp8e_pow_exact
#define log_ziv sfp8e_log_ziv
#define lae_vals sfp8e_lae_vals
/* (-1)^sign * 2^(+-2^24): overflow (big) or underflow to 0 / the smallest subnormal */
uint32_t far(const sfp8_format *f, const sfp8_env *env, int sign, int big, uint8_t *flags);
/* binary64 stage for a signed approximation y (value y 2^scale, |error| <= err 2^scale): 1 if decided */
int try_d(const sfp8_format *f, const sfp8_env *env, double y, double err, int64_t scale, uint32_t *out,
          uint8_t *flags);
/* binary128 stage then the last resort, for a signed approximation y */
uint32_t ziv_q(const sfp8_format *f, const sfp8_env *env, sfp8q y, sfp8q err, int64_t scale, uint8_t *flags);
/* e^x = y 2^k with |error| <= *err 2^k, for |x| < 2^24 */
void exp_q(sfp8q xq, sfp8q *y, sfp8q *err, int64_t *k);
/* v finite non-zero = odd 2^e, odd odd */
void odd_parts(const sfp8x_val *v, uint64_t *odd, int64_t *e);
/* (-1)^sign t^n 2^(A n) rounded exactly (t odd, |n| < 2^41, |A| <= 2^22): 1 with *out, 0 when
   t^|n| is too long (more than 64 significant bits, or not dyadic) */
int pow_exact(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t t, int64_t n, int64_t A,
              uint32_t *out, uint8_t *flags);
/* log_b(x) (B_E, B_2, B_10) of a finite x > 0 whose logarithm is not dyadic, plus an unknown
   0 <= delta <= extra */
enum { B_E = 0, B_2 = 1, B_10 = 2 };
uint32_t log_ziv(const sfp8_format *f, const sfp8_env *env, int b, const sfp8x_val *x, double extra,
                 uint8_t *flags);
/* logaddexp (b2 = 0) / logaddexp2 (b2 = 1) of decoded operands */
uint32_t lae_vals(const sfp8_format *f, const sfp8x_val *x, const sfp8x_val *y, const sfp8_env *env, int b2,
                  uint8_t *flags);
/* log2|x| of a finite non-zero x: relative error <= SFP8E_REL_Q + 2^-110 */
sfp8q sfp8e_log2_q(const sfp8x_val *x);
/* (-1)^sign 2^L rounded, L approximated with relative error <= rel (|L| > 2^24: overflow /
   underflow; |L| < 2^-60: 1 +- ) */
uint32_t sfp8e_exp2_ziv(const sfp8_format *f, const sfp8_env *env, int sign, sfp8q L, sfp8q rel, uint8_t *flags);

#endif
