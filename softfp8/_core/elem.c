/*
 * Correctly rounded elementary functions: the shared machinery (see elem.h)
 * and exp as the worked example of the pattern every function follows:
 *   1. decode (sfp8x_unpack: raises denormal), NaN operands (sfp8x_nan_operand);
 *   2. special operands and domain errors (C99 Annex F, IEEE 754 section 9.2,
 *      SPEC section 7): exact infinities through sfp8x_inf, invalid through
 *      sfp8x_invalid, poles: divbyzero + sfp8x_inf;
 *   3. dyadic (exact) results: sfp8e_exact;
 *   4. arguments so small or so large that only an asymptotic matters:
 *      sfp8e_perturbed / overflow / underflow by rounding a far value;
 *   5. Ziv: binary64 with SFP8E_REL_D, then binary128 with SFP8E_REL_Q, then
 *      sfp8e_round_last.
 */
#include "elem.h"

/* ---- decomposition of approximations into 64-bit significands ---- */

/* x > 0 finite: x = sig * 2^exp with sig in [2^63, 2^64) (exact: 53 bits). */
static void d_parts(double x, uint64_t *sig, int64_t *exp)
{
    int e;
    double m = frexp(x, &e); /* [0.5, 1) */
    *sig = (uint64_t)ldexp(m, 64);
    *exp = (int64_t)e - 64;
}

/* x > 0 finite: the 64-bit significand truncated (up = 0) or rounded up
 * (up = 1), msb at bit 63. */
static void q_parts(sfp8q x, int up, uint64_t *sig, int64_t *exp)
{
    int e;
    sfp8q m = QF(frexp)(x, &e); /* [0.5, 1) */
    sfp8q t = QF(ldexp)(m, 64);
    uint64_t s = (uint64_t)t;
    if (up && (sfp8q)s != t) {
        s += 1;
        if (s == 0) { /* carried out of 64 bits */
            s = (uint64_t)1 << 63;
            e += 1;
        }
    }
    *sig = s;
    *exp = (int64_t)e - 64;
}

/* Every value of the open interval (lo, hi), lo = lo_sig * 2^lo_exp and
 * hi = hi_sig * 2^hi_exp (significands with msb at bit 63), rounds the same?
 * lo is represented by "just above lo", hi by "just below hi". */
static int decide(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t lo_sig, int64_t lo_exp,
                  uint64_t hi_sig, int64_t hi_exp, uint32_t *out, uint8_t *flags)
{
    uint8_t f1 = 0, f2 = 0;
    const sfp8e_target *t = sfp8e_target_of(f);
    uint32_t c1 = sfp8e_rnd(f, env, sign, lo_sig, lo_exp, 1, &f1);
    uint32_t c2 = t ? t->round(t, SFP8X_FINITE, sign, hi_sig, hi_exp, -1, &f2)
                    : sfp8x_round(f, env, sign, hi_sig - 1, hi_exp, 1, &f2);
    if (c1 != c2 || f1 != f2) return 0;
    *out = c1;
    *flags |= f1;
    return 1;
}

int sfp8e_round_d(const sfp8_format *f, const sfp8_env *env, int sign, double y, double err, int64_t scale,
                  uint32_t *out, uint8_t *flags)
{
    double lo = y - err, hi = y + err;
    uint64_t ls, hs;
    int64_t le, he;
    if (!(lo > 0.0) || !isfinite(hi)) return 0;
    /* the subtraction and addition above rounded: widen by more than their error */
    lo -= lo * 0x1p-52;
    hi += hi * 0x1p-52;
    if (!(lo > DBL_MIN) || !isfinite(hi)) return 0;
    d_parts(lo, &ls, &le);
    d_parts(hi, &hs, &he);
    return decide(f, env, sign, ls, le + scale, hs, he + scale, out, flags);
}

int sfp8e_round_q(const sfp8_format *f, const sfp8_env *env, int sign, sfp8q y, sfp8q err, int64_t scale,
                  uint32_t *out, uint8_t *flags)
{
    sfp8q lo = y - err, hi = y + err;
    uint64_t ls, hs;
    int64_t le, he;
    if (!(lo > 0) || QF(isinf)(hi)) return 0;
    lo -= lo * QC(0x1p-111);
    hi += hi * QC(0x1p-111);
    if (!(lo > 0) || QF(isinf)(hi)) return 0;
    q_parts(lo, 0, &ls, &le);
    q_parts(hi, 1, &hs, &he);
    return decide(f, env, sign, ls, le + scale, hs, he + scale, out, flags);
}

uint32_t sfp8e_round_last(const sfp8_format *f, const sfp8_env *env, int sign, sfp8q y, int64_t scale,
                          uint8_t *flags)
{
    uint64_t s;
    int64_t e;
    q_parts(y, 0, &s, &e);
    return sfp8e_rnd(f, env, sign, s, e + scale, 1, flags);
}

uint32_t sfp8e_round_q_last(const sfp8_format *f, const sfp8_env *env, int sign, sfp8q y, sfp8q err,
                            int64_t scale, uint8_t *flags)
{
    uint32_t r;
    if (sfp8e_round_q(f, env, sign, y, err, scale, &r, flags)) return r;
    return sfp8e_round_last(f, env, sign, y, scale, flags);
}

uint32_t sfp8e_rnd(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp, int sticky,
                   uint8_t *flags)
{
    const sfp8e_target *t = sfp8e_target_of(f);
    return t ? t->round(t, SFP8X_FINITE, sign, sig, exp, sticky ? 1 : 0, flags)
             : sfp8x_round(f, env, sign, sig, exp, sticky, flags);
}

uint32_t sfp8e_inf(const sfp8_format *f, const sfp8_env *env, int sign, uint8_t *flags)
{
    const sfp8e_target *t = sfp8e_target_of(f);
    return t ? t->round(t, SFP8X_INF, sign, 0, 0, 0, flags) : sfp8x_inf(f, env, sign, flags);
}

uint32_t sfp8e_zero(const sfp8_format *f, int sign, uint8_t *flags)
{
    const sfp8e_target *t = sfp8e_target_of(f);
    return t ? t->round(t, SFP8X_ZERO, sign, 0, 0, 0, flags) : sfp8x_zero(f, sign, flags);
}

uint32_t sfp8e_invalid(const sfp8_format *f, uint8_t *flags)
{
    const sfp8e_target *t = sfp8e_target_of(f);
    return t ? t->round(t, SFP8X_NAN, 0, 0, 0, 0, flags) : sfp8x_invalid(f, flags);
}

uint32_t sfp8e_unary_value(sfp8e_unary_fn fn, const sfp8e_target *t, const sfp8_env *env, uint8_t *flags)
{
    return fn(&t->f, 0, env, flags);
}

uint32_t sfp8e_binary_value(sfp8e_binary_fn fn, const sfp8e_target *t, const sfp8_env *env, uint8_t *flags)
{
    return fn(&t->f, 0, 1, env, flags);
}

void sfp8e_unpack(const sfp8_format *f, uint32_t a, sfp8x_val *x, uint8_t *flags)
{
    const sfp8e_target *t = sfp8e_target_of(f);
    if (t)
        *x = a ? t->y : t->x;
    else
        sfp8x_unpack(f, a, x, flags);
}

int sfp8e_unpack1(const sfp8_format *f, uint32_t a, sfp8x_val *x, uint32_t *r, uint8_t *flags)
{
    sfp8e_unpack(f, a, x, flags);
    if (sfp8e_target_of(f)) return 0; /* a target's operand is never a NaN */
    return sfp8x_nan_operand(f, x, NULL, r, flags);
}

uint32_t sfp8e_exact(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                     uint8_t *flags)
{
    if (sig == 0) return sfp8e_zero(f, sign, flags);
    return sfp8e_rnd(f, env, sign, sig, exp, 0, flags);
}

uint32_t sfp8e_perturbed(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                         int dir, uint8_t *flags)
{
    int sh = __builtin_clzll(sig); /* sig != 0 */
    const sfp8e_target *t = sfp8e_target_of(f);
    if (t) return t->round(t, SFP8X_FINITE, sign, sig, exp, dir < 0 ? -1 : 1, flags);
    sig <<= sh;
    exp -= sh;
    if (dir < 0) sig -= 1; /* (sig - 1) + sticky: just below sig */
    return sfp8e_rnd(f, env, sign, sig, exp, 1, flags);
}

/* ---- operand values ---- */

static inline int msb64(uint64_t x) { return 63 - __builtin_clzll(x); }

double sfp8e_to_d(const sfp8x_val *v, int64_t *scale)
{
    int64_t top = v->exp + msb64(v->sig);
    if (top > -1000 && top < 1000) {
        *scale = 0;
        return ldexp((double)v->sig, (int)v->exp);
    }
    *scale = top;
    return ldexp((double)v->sig, -msb64(v->sig));
}

sfp8q sfp8e_to_q(const sfp8x_val *v, int64_t *scale)
{
    int64_t top = v->exp + msb64(v->sig);
    if (top > -16000 && top < 16000) {
        *scale = 0;
        return QF(ldexp)((sfp8q)v->sig, (int)v->exp);
    }
    *scale = top;
    return QF(ldexp)((sfp8q)v->sig, -msb64(v->sig));
}

/* ------------------------------------------------------------------------ */
/* exp: the worked example                                                   */
/* ------------------------------------------------------------------------ */

/* A magnitude far beyond every format's range (formats' exponents lie within
 * +-(2^20 + 2^16)): rounding it gives overflow (big) or an underflow to 0 /
 * the smallest subnormal, per mode. */
#define SFP8E_FAR ((int64_t)1 << 24)

uint32_t sfp8_exp(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t top, scale;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return x.sign ? sfp8e_zero(f, 0, flags) : sfp8e_inf(f, env, 0, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_exact(f, env, 0, 1, 0, flags); /* exp(+-0) = 1 */
    top = x.exp + msb64(x.sig);                                           /* |x| in [2^top, 2^(top+1)) */
    if (top < -60) return sfp8e_perturbed(f, env, 0, 1, 0, x.sign ? -1 : 1, flags); /* 1 + x + ... */
    if (top >= 23) /* |x| >= 2^23: exp(x) > 2^(2^23) or < 2^-(2^23) */
        return sfp8e_perturbed(f, env, 0, 1, x.sign ? -SFP8E_FAR : SFP8E_FAR, 1, flags);
    if (top < 9) { /* |x| < 512: binary64 covers exp(x) */
        double xd = sfp8e_to_d(&x, &scale);
        double y = exp(x.sign ? -xd : xd);
        if (sfp8e_round_d(f, env, 0, y, y * SFP8E_REL_D, 0, &r, flags)) return r;
    }
    {
        /* exp(x) = 2^k * exp(t), t = x - k ln2, |t| <= ln2/2 (+ error) */
        static const sfp8q LN2 = QC(0.693147180559945309417232121458176568);
        sfp8q xq = sfp8e_to_q(&x, &scale), k, t, y, err;
        if (x.sign) xq = -xq;
        k = QF(nearbyint)(xq / LN2);
        t = xq - k * LN2; /* error <= (|k| + |x|) 2^-112 (LN2's and the ops' roundings) */
        y = QF(exp)(t);
        err = y * (SFP8E_REL_Q + (QF(fabs)(k) + QF(fabs)(xq) + 1) * QC(0x1p-110));
        return sfp8e_round_q_last(f, env, 0, y, err, (int64_t)k, flags);
    }
}
