/*
 * softfp8 exact core: the IEEE 754-2019 and IEEE P3109 operations beyond the
 * arithmetic -- conversion to integers (754 5.8), class, isCanonical and the
 * total orders (5.7.2, 5.10; P3109 4.12.1, 4.13), the augmented operations
 * (9.5), the NaN payload operations (9.7), and P3109's Clamp (4.11.4) and FAA
 * (4.10.7).  Results that are not an operand's own code go through the core's
 * rounding (sfp8x_round, the superaccumulator's acc_round: round_pack).
 */
#include "accum.h"
#include "core_x.h"

/* ------------------------------------------------------------------------ */
/* convertToInteger (5.8)                                                    */
/* ------------------------------------------------------------------------ */

int64_t sfp8_to_integer(const sfp8_format *f, uint32_t a, int rounding, int exact, uint8_t *flags)
{
    sfp8_env e = {rounding, 0, 0, 32, 0};
    uint8_t fl = 0;
    int64_t r;
    if (rounding < SFP8_ROUND_NEAREST_EVEN || rounding > SFP8_ROUND_DOWNWARD) {
        *flags |= SFP8_FLAG_INVALID; /* not one of the five directions of 5.8 */
        return INT64_MAX;
    }
    r = sfp8_to_int64(f, a, &e, &fl); /* raises inexact for any change of value */
    if (!exact) fl &= (uint8_t)~SFP8_FLAG_INEXACT;
    *flags |= fl;
    return r;
}

/* ------------------------------------------------------------------------ */
/* class, isCanonical, IsOne, total orders (5.7.2, 5.10; P3109 4.12-4.13)    */
/* ------------------------------------------------------------------------ */

int sfp8_ieee_class(const sfp8_format *f, uint32_t a)
{
    int neg = sfp8_signbit(f, a);
    switch (sfp8_classify(f, a)) {
    case SFP8_CLASS_SNAN: return SFP8_SIGNALING_NAN;
    case SFP8_CLASS_QNAN: return SFP8_QUIET_NAN;
    case SFP8_CLASS_INF: return neg ? SFP8_NEGATIVE_INFINITY : SFP8_POSITIVE_INFINITY;
    case SFP8_CLASS_ZERO: return neg ? SFP8_NEGATIVE_ZERO : SFP8_POSITIVE_ZERO;
    case SFP8_CLASS_SUBNORMAL: return neg ? SFP8_NEGATIVE_SUBNORMAL : SFP8_POSITIVE_SUBNORMAL;
    default: return neg ? SFP8_NEGATIVE_NORMAL : SFP8_POSITIVE_NORMAL;
    }
}

int sfp8_is_canonical(const sfp8_format *f, uint32_t a)
{
    return !(f->subnormals == SFP8_SUBNORMALS_FLUSH && sfp8_classify(f, a) == SFP8_CLASS_SUBNORMAL);
}

int sfp8_is_one(const sfp8_format *f, uint32_t a)
{
    sfp8x_val x;
    uint8_t scratch = 0;
    sfp8x_unpack(f, a, &x, &scratch);
    return x.kind == SFP8X_FINITE && !x.sign && (x.sig & (x.sig - 1)) == 0 && x.exp + sfp8x_msb64(x.sig) == 0;
}

/* an integer increasing along IEEE's total order: codes are sign-magnitude with
 * the magnitude increasing with the value, NaNs above infinity (IEEE and fn
 * layouts; quiet above signalling); a NaN at the "-0" code (fnuz, P3109) or at
 * the top code (unsigned) is positive */
static int64_t order_key(const sfp8_format *f, uint32_t a)
{
    uint64_t c = a & sfp8x_code_mask(f), mag;
    if (!f->is_signed) return (int64_t)c;
    if (c == sfp8x_sign_bit(f) && sfp8_classify(f, c) == SFP8_CLASS_QNAN)
        return (int64_t)1 << f->bits; /* the "-0" code's NaN (fnuz, P3109): above every code */
    mag = c & ~sfp8x_sign_bit(f);
    return (c & sfp8x_sign_bit(f)) ? -(int64_t)mag - 1 : (int64_t)mag;
}

int sfp8_total_order(const sfp8_format *f, uint32_t a, uint32_t b) { return order_key(f, a) <= order_key(f, b); }

int sfp8_total_order_mag(const sfp8_format *f, uint32_t a, uint32_t b)
{
    return order_key(f, sfp8_abs(f, a)) <= order_key(f, sfp8_abs(f, b));
}

int sfp8_total_order_p3109(const sfp8_format *f, uint32_t a, uint32_t b)
{
    uint8_t scratch = 0;
    int an = sfp8_classify(f, a) >= SFP8_CLASS_QNAN, bn = sfp8_classify(f, b) >= SFP8_CLASS_QNAN;
    if (an || bn) return an;
    return sfp8_compare(f, a, b, 0, &scratch) <= SFP8_EQUAL;
}

/* ------------------------------------------------------------------------ */
/* augmented arithmetic (9.5): exact sums in the superaccumulator            */
/* ------------------------------------------------------------------------ */

/* subtract the finite value of code r (of f) from the accumulator */
static void acc_sub_code(SuperAcc *acc, const sfp8_format *f, uint32_t r)
{
    uint64_t sig;
    int64_t exp;
    int cls = sfp8_classify(f, r);
    if (cls == SFP8_CLASS_ZERO || (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH)) return;
    acc_finite_value(f, r, &sig, &exp);
    acc_add_mag(acc, sig, exp - acc->qmin, !sfp8_signbit(f, r));
}

/* the exact a op b into the accumulator (op: 0 add, 1 subtract, 2 multiply) */
static void acc_op(SuperAcc *acc, const sfp8_format *f, uint32_t a, uint32_t b, int op, uint8_t *flags)
{
    int cb = sfp8_classify(f, b);
    acc_init_k(acc, f, op == 2 ? 2 : 1);
    if (op == 2) {
        acc_add_product(acc, f, a, b, flags);
        return;
    }
    acc_add_value(acc, f, a, flags);
    if (op == 0 || cb >= SFP8_CLASS_QNAN) {
        acc_add_value(acc, f, b, flags);
    } else if (cb == SFP8_CLASS_INF) { /* -(+-inf): infinity of the other sign */
        if (sfp8_signbit(f, b)) acc->pinf = 1;
        else acc->ninf = 1;
        acc->inf_code = sfp8_neg(f, b);
        if (!f->is_signed) acc->nan = 1, acc->nan_code = sfp8x_invalid(f, flags);
    } else {
        if (cb == SFP8_CLASS_SUBNORMAL) *flags |= SFP8_FLAG_DENORMAL;
        if (cb == SFP8_CLASS_ZERO || (cb == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH)) {
            if (sfp8_signbit(f, b)) acc->pos_zero = 1; /* -(-0) */
            else acc->neg_zero = 1;
        } else {
            acc_sub_code(acc, f, b);
            acc->nonzero = 1;
        }
    }
}

/* a0 = (a op b) rounded ties toward zero, *err = (a op b) - a0 likewise */
static uint32_t augmented(const sfp8_format *f, uint32_t a, uint32_t b, int op, uint32_t *err, uint8_t *flags)
{
    sfp8_env e = {SFP8_ROUND_TIES_TOWARD_ZERO, f->saturate, 0, 32, 0};
    SuperAcc acc;
    uint8_t f0 = 0, f1 = 0;
    uint32_t a0;
    int cls;
    acc_op(&acc, f, a, b, op, &f0);
    a0 = acc_round(&acc, f, &e, &f0);
    cls = sfp8_classify(f, a0);
    /* NaN, infinity, overflow, an exact zero: the error term is a0 itself */
    if (cls >= SFP8_CLASS_INF || (f0 & SFP8_FLAG_OVERFLOW) ||
        (cls == SFP8_CLASS_ZERO && !(f0 & SFP8_FLAG_INEXACT))) {
        *flags |= f0 & (uint8_t)(SFP8_FLAG_INVALID | SFP8_FLAG_DENORMAL | SFP8_FLAG_OVERFLOW | SFP8_FLAG_INEXACT);
        *err = a0;
        return a0;
    }
    *flags |= f0 & (uint8_t)(SFP8_FLAG_INVALID | SFP8_FLAG_DENORMAL);
    acc_op(&acc, f, a, b, op, &f1);
    acc_sub_code(&acc, f, a0);
    f1 = 0;
    *err = acc_round(&acc, f, &e, &f1);
    if (sfp8_classify(f, *err) == SFP8_CLASS_ZERO && !(f1 & SFP8_FLAG_INEXACT))
        *err = sfp8x_zero(f, sfp8_signbit(f, a0), &f1); /* exact: a zero of a0's sign */
    *flags |= f1;
    return a0;
}

uint32_t sfp8_augmented_add(const sfp8_format *f, uint32_t a, uint32_t b, uint32_t *err, uint8_t *flags)
{
    return augmented(f, a, b, 0, err, flags);
}

uint32_t sfp8_augmented_sub(const sfp8_format *f, uint32_t a, uint32_t b, uint32_t *err, uint8_t *flags)
{
    return augmented(f, a, b, 1, err, flags);
}

uint32_t sfp8_augmented_mul(const sfp8_format *f, uint32_t a, uint32_t b, uint32_t *err, uint8_t *flags)
{
    return augmented(f, a, b, 2, err, flags);
}

/* ------------------------------------------------------------------------ */
/* NaN payloads (9.7)                                                        */
/* ------------------------------------------------------------------------ */

/* payload bits of a format: IEEE layouts, man_bits - 1 below the quiet bit;
 * one NaN per sign: the payload 0 only (-1: no NaN at all) */
static int payload_bits(const sfp8_format *f)
{
    if (f->specials == SFP8_SPECIALS_NONE) return -1;
    return f->specials == SFP8_SPECIALS_IEEE ? f->man_bits - 1 : 0;
}

uint32_t sfp8_get_payload(const sfp8_format *f, uint32_t a, uint8_t *flags)
{
    const sfp8_env e = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
    uint8_t quiet = 0; /* a quiet operation: no flags */
    uint64_t p;
    int cls = sfp8_classify(f, a);
    (void)flags;
    if (cls != SFP8_CLASS_QNAN && cls != SFP8_CLASS_SNAN) return sfp8x_round(f, &e, 1, 1, 0, 0, &quiet); /* -1 */
    p = payload_bits(f) > 0 ? (a & sfp8x_mask64(payload_bits(f))) : 0;
    if (p == 0) return sfp8x_zero(f, 0, &quiet);
    return sfp8x_round(f, &e, 0, p, 0, 0, &quiet);
}

uint32_t sfp8_set_payload(const sfp8_format *f, uint32_t a, int signaling, uint8_t *flags)
{
    sfp8x_val x;
    uint8_t scratch = 0;
    uint64_t p, zero = sfp8x_zero(f, 0, &scratch);
    int nb = payload_bits(f);
    (void)flags;
    sfp8x_unpack(f, a, &x, &scratch);
    if (nb < 0 || x.kind == SFP8X_NAN || x.kind == SFP8X_INF || (x.kind == SFP8X_FINITE && x.sign)) return (uint32_t)zero;
    if (x.kind == SFP8X_ZERO) {
        p = 0;
    } else { /* an integer below 2^nb? */
        int64_t top = x.exp + sfp8x_msb64(x.sig);
        if (x.exp < 0 && (x.sig & sfp8x_mask64((int)(x.exp < -63 ? 63 : -x.exp))) != 0) return (uint32_t)zero;
        if (x.exp < -63 || top >= nb) return (uint32_t)zero;
        p = x.exp >= 0 ? x.sig << x.exp : x.sig >> -x.exp;
    }
    if (f->specials != SFP8_SPECIALS_IEEE) return signaling ? (uint32_t)zero : sfp8_default_nan(f) & ~(uint32_t)(f->is_signed && f->specials == SFP8_SPECIALS_FN ? sfp8x_sign_bit(f) : 0);
    if (signaling && p == 0) return (uint32_t)zero; /* the signalling NaN with payload 0 would be infinity */
    return (uint32_t)((sfp8x_exp_ones(f) << f->man_bits) | (signaling ? 0 : (uint64_t)1 << (f->man_bits - 1)) | p);
}

/* ------------------------------------------------------------------------ */
/* P3109 Clamp (4.11.4) and FAA (4.10.7)                                     */
/* ------------------------------------------------------------------------ */

/* an operand as the result: a flushed subnormal reads as (and is delivered as) zero */
static uint32_t operand_result(const sfp8_format *f, const sfp8x_val *v, uint8_t *flags)
{
    return v->kind == SFP8X_ZERO ? sfp8x_zero(f, v->sign, flags) : (uint32_t)v->code;
}

uint32_t sfp8_clamp(const sfp8_format *f, uint32_t x, uint32_t lo, uint32_t hi, uint8_t *flags)
{
    sfp8x_val vx, vl, vh;
    uint32_t res;
    sfp8x_unpack(f, x, &vx, flags);
    sfp8x_unpack(f, lo, &vl, flags);
    sfp8x_unpack(f, hi, &vh, flags);
    if (sfp8x_nan3(f, &vx, &vl, &vh, &res, flags)) return res;
    if (sfp8x_cmp(&vl, &vh) > 0) return sfp8x_invalid(f, flags);
    if (sfp8x_cmp(&vx, &vl) <= 0) return operand_result(f, &vl, flags);
    if (sfp8x_cmp(&vx, &vh) >= 0) return operand_result(f, &vh, flags);
    return operand_result(f, &vx, flags);
}

uint32_t sfp8_faa(const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env, uint8_t *flags)
{
    SuperAcc acc;
    acc_init(&acc, f);
    acc_add_value(&acc, f, a, flags);
    acc_add_value(&acc, f, b, flags);
    acc_add_value(&acc, f, c, flags);
    return acc_round(&acc, f, env, flags);
}
