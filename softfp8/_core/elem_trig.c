/*
 * Correctly rounded trigonometric and hyperbolic functions, degrees and
 * radians, on the machinery of elem.h (read elem.c first: sfp8_exp is the
 * pattern every function here follows).
 *
 * The one fact every path relies on (Lindemann-Weierstrass): for a non-zero
 * algebraic x, sin x, cos x, tan x, sinh x, cosh x, tanh x, arcsin x,
 * arctan x, arcsinh x, arccosh x (x != 1), arctanh x, pi*x and x/pi are
 * transcendental, so apart from the identity points (f(0) = 0, cos(0) =
 * cosh(0) = 1, arccos(1) = arccosh(1) = 0, arctan2(+-0, x > 0) = +-0) every
 * result is non-dyadic and Ziv's strategy decides it.
 *
 * Thresholds for the asymptotic paths.  A non-zero result value v rounds like
 * sfp8e_perturbed's "just beside" value as soon as its relative distance
 * from the dyadic point is below 2^-52: the formats have at most 16 bits of
 * precision and stochastic rounding reads 32 more bits of the fraction, so
 * no rounding decision falls within 2^-48 relative of a representable value
 * except at that value itself.  For |x| < 2^-26 (operand exponent top <= -27)
 * the relative corrections x^2/6 (sin, arcsin, sinh, arcsinh), x^2/3 (tan,
 * arctan, tanh, arctanh) and x^2/2 (cos, cosh, absolute from 1) are below
 * 2^-52, so only their sign matters.
 */
#include "elem.h"

static inline int msb64(uint64_t x) { return 63 - __builtin_clzll(x); }

/* beyond every format's exponent range (see SFP8E_FAR in elem.c) */
#define TRIG_FAR ((int64_t)1 << 24)
/* top <= TINY_TOP: |x| < 2^-26, the perturbed paths (see above) */
#define TINY_TOP (-27)

static const sfp8q PI_Q = QC(3.14159265358979323846264338327950288);
static const sfp8q LN2_Q = QC(0.693147180559945309417232121458176568);

/* the exponent of the leading bit: |x| in [2^top, 2^(top+1)) */
static inline int64_t top_of(const sfp8x_val *x) { return x->exp + msb64(x->sig); }

/* Round (-1)^sign * yq * 2^scale from a binary128 approximation with error
 * bound eq (absolute, at the same scale), or from yq itself if undecided. */
/* fn(x) for a finite non-zero x inside binary128's range (|top| < 16000):
 * binary64 when x lies in binary64's range, then binary128.  glibc's binary64
 * functions are within a few ulps of the result (SFP8E_REL_D allows 32), also
 * for huge arguments of sin/cos/tan (exact Payne-Hanek reduction), and so are
 * libquadmath's (SFP8E_REL_Q).  The result's sign is that of the
 * approximation: its relative error is far below 1. */
static uint32_t ziv1(const sfp8_format *f, const sfp8_env *env, const sfp8x_val *x, double (*fd)(double),
                     sfp8q (*fq)(sfp8q), uint8_t *flags)
{
    int64_t scale;
    uint32_t r;
    double xd = sfp8e_to_d(x, &scale);
    sfp8q xq, yq;
    if (scale == 0) {
        double y = fd(x->sign ? -xd : xd);
        if (sfp8e_round_d(f, env, y < 0, fabs(y), fabs(y) * SFP8E_REL_D, 0, &r, flags)) return r;
    }
    /* exact: the callers' ranges lie within 2^-1000 <= |x| < 2^16384 */
    xq = QF(ldexp)((sfp8q)x->sig, (int)x->exp);
    yq = fq(x->sign ? -xq : xq);
    return sfp8e_round_q_last(f, env, yq < 0, QF(fabs)(yq), QF(fabs)(yq) * SFP8E_REL_Q, 0, flags);
}

/* (-1)^sign * (k/4) pi, k = 1..4, known to within an absolute 2^ae (besides
 * the constants' own rounding): the F.9 constants of arctan and arctan2 and
 * their asymptotics. */
static uint32_t round_pi(const sfp8_format *f, const sfp8_env *env, int sign, int k, int64_t ae, uint8_t *flags)
{
    uint32_t r;
    double yd = 0.78539816339744830962 * k; /* pi/4 * k: relative error <= 2^-52 */
    double ed = yd * 0x1p-50 + (ae < -1060 ? 0.0 : ldexp(1.0, (int)ae));
    sfp8q yq = PI_Q / 4 * k; /* relative error <= 2^-111 */
    if (sfp8e_round_d(f, env, sign, yd, ed, 0, &r, flags)) return r;
    return sfp8e_round_q_last(f, env, sign, yq, yq * QC(0x1p-109) + (ae < -16000 ? 0 : QF(ldexp)(1, (int)ae)), 0, flags);
}

/* The common prologue: decode, NaN propagation; returns 1 with *r set when
 * the operand is a NaN. */
/* ------------------------------------------------------------------------ */
/* sin, cos, tan                                                             */
/* ------------------------------------------------------------------------ */

/* Arguments with |x| >= 2^16384 (only custom formats with a bias below about
 * -16370 have them) lie beyond binary128: their reduction modulo pi/2 would
 * need up to ~2^20 bits of pi.  They give NaN with invalid (docs/semantics.md). */
#define TRIG_HUGE_TOP 16384

static int trig_cheap(const sfp8_format *f, const sfp8_env *env, const sfp8x_val *x, int is_cos, int dir,
                      uint32_t *r, uint8_t *flags)
{
    if (x->kind == SFP8X_INF) { /* sin, cos, tan (+-inf): invalid */
        *r = sfp8e_invalid(f, flags);
        return 1;
    }
    if (x->kind == SFP8X_ZERO) { /* sin(+-0) = tan(+-0) = +-0, cos(+-0) = 1 */
        *r = is_cos ? sfp8e_exact(f, env, 0, 1, 0, flags) : sfp8e_zero(f, x->sign, flags);
        return 1;
    }
    if (top_of(x) <= TINY_TOP) { /* cos = 1 - x^2/2, sin = x - x^3/6, tan = x + x^3/3 */
        *r = is_cos ? sfp8e_perturbed(f, env, 0, 1, 0, -1, flags)
                    : sfp8e_perturbed(f, env, x->sign, x->sig, x->exp, dir, flags);
        return 1;
    }
    if (top_of(x) >= TRIG_HUGE_TOP) {
        *r = sfp8e_invalid(f, flags);
        return 1;
    }
    return 0;
}

uint32_t sfp8_sin(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (sfp8e_unpack1(f, a, &x, &r, flags) || trig_cheap(f, env, &x, 0, -1, &r, flags)) return r;
    return ziv1(f, env, &x, sin, QF(sin), flags);
}

uint32_t sfp8_cos(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (sfp8e_unpack1(f, a, &x, &r, flags) || trig_cheap(f, env, &x, 1, 0, &r, flags)) return r;
    return ziv1(f, env, &x, cos, QF(cos), flags);
}

uint32_t sfp8_tan(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (sfp8e_unpack1(f, a, &x, &r, flags) || trig_cheap(f, env, &x, 0, 1, &r, flags)) return r;
    return ziv1(f, env, &x, tan, QF(tan), flags);
}

/* ------------------------------------------------------------------------ */
/* arcsin, arccos, arctan                                                    */
/* ------------------------------------------------------------------------ */

/* |x| > 1 (1: the value 1 exactly) */
static int above_one(const sfp8x_val *x)
{
    return x->kind == SFP8X_INF ||
           (x->kind == SFP8X_FINITE && (top_of(x) > 0 || (top_of(x) == 0 && (x->sig & (x->sig - 1)))));
}
static int is_one(const sfp8x_val *x) { return x->kind == SFP8X_FINITE && top_of(x) == 0 && !(x->sig & (x->sig - 1)); }

/* The prologue of the odd functions defined on [-1, 1] (arcsin, arctanh):
 * NaN operands, |x| > 1 (invalid), +-0 (exact +-0). */
static int odd_unit_prologue(const sfp8_format *f, uint32_t a, sfp8x_val *x, uint32_t *r, uint8_t *flags)
{
    if (sfp8e_unpack1(f, a, x, r, flags)) return 1;
    if (above_one(x)) *r = sfp8e_invalid(f, flags);
    else if (x->kind == SFP8X_ZERO) *r = sfp8e_zero(f, x->sign, flags);
    else return 0;
    return 1;
}

uint32_t sfp8_arcsin(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (odd_unit_prologue(f, a, &x, &r, flags)) return r;
    if (top_of(&x) <= TINY_TOP) return sfp8e_perturbed(f, env, x.sign, x.sig, x.exp, 1, flags); /* x + x^3/6 */
    return ziv1(f, env, &x, asin, QF(asin), flags); /* arcsin(+-1) = +-pi/2 too */
}

uint32_t sfp8_arccos(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (above_one(&x)) return sfp8e_invalid(f, flags);
    if (is_one(&x) && !x.sign) return sfp8e_zero(f, 0, flags); /* arccos(1) = +0 */
    /* arccos(x) = pi/2 - x - ...: for |x| < 2^-60 pi/2 within |x| <= 2^(top+1);
     * pi/2 lies nowhere near a rounding decision (its bits 17..64 hold no run
     * of 30 equal bits), so the interval decides */
    if (x.kind == SFP8X_ZERO || top_of(&x) < -60)
        return round_pi(f, env, 0, 2, x.kind == SFP8X_ZERO ? -20000 : top_of(&x) + 1, flags);
    return ziv1(f, env, &x, acos, QF(acos), flags);
}

uint32_t sfp8_arctan(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t top;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    if (x.kind == SFP8X_INF) return round_pi(f, env, x.sign, 2, -20000, flags); /* +-pi/2 */
    top = top_of(&x);
    if (top <= TINY_TOP) return sfp8e_perturbed(f, env, x.sign, x.sig, x.exp, -1, flags); /* x - x^3/3 */
    if (top >= 60) /* pi/2 - arctan|x| = arctan(1/|x|) < 1/|x| <= 2^-top */
        return round_pi(f, env, x.sign, 2, -top, flags);
    return ziv1(f, env, &x, atan, QF(atan), flags);
}

/* arctan2(y, x): C99 F.9.1.4 for the special operands; otherwise the angle of
 * (x, y), with the sign of y.  y = sy 2^ey, x = sx 2^ex, d = top(y) - top(x):
 * |y/x| lies in (2^(d-1), 2^(d+1)). */
uint32_t sfp8_arctan2(const sfp8_format *f, uint32_t ya, uint32_t xa, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val y, x;
    uint32_t r;
    int64_t d;
    sfp8e_unpack(f, ya, &y, flags);
    sfp8e_unpack(f, xa, &x, flags);
    if (sfp8x_nan_operand(f, &y, &x, &r, flags)) return r; /* a target's operands are never NaN */
    if (y.kind == SFP8X_ZERO) /* +-0 for x = +0 or x > 0, +-pi for x = -0 or x < 0 */
        return x.sign ? round_pi(f, env, y.sign, 4, -20000, flags) : sfp8e_zero(f, y.sign, flags);
    if (y.kind == SFP8X_INF) /* +-pi/4 (x = +inf), +-3pi/4 (x = -inf), else +-pi/2 */
        return round_pi(f, env, y.sign, x.kind != SFP8X_INF ? 2 : x.sign ? 3 : 1, -20000, flags);
    if (x.kind == SFP8X_ZERO) return round_pi(f, env, y.sign, 2, -20000, flags); /* +-pi/2 */
    if (x.kind == SFP8X_INF) /* +-0 (x = +inf), +-pi (x = -inf) */
        return x.sign ? round_pi(f, env, y.sign, 4, -20000, flags) : sfp8e_zero(f, y.sign, flags);
    d = top_of(&y) - top_of(&x);
    if (d >= 60) /* +-(pi/2 + arctan(x/|y|)), |arctan(x/|y|)| < 2^(1-d) */
        return round_pi(f, env, y.sign, 2, 1 - d, flags);
    if (d <= -62 && x.sign) /* +-(pi - arctan|y/x|), arctan|y/x| < 2^(d+1) <= 2^-61 */
        return round_pi(f, env, y.sign, 4, d + 1, flags);
    if (d <= TINY_TOP && !x.sign) {
        /* +-arctan(q), q = |y|/x = (sy/sx) 2^(ey-ex) < 2^-26: q - q^3/3 + ..., the
         * relative correction q^2/3 < 2^-52.  A dyadic q (the odd part of sx
         * divides sy) rounds as "just below q". */
        int ty = __builtin_ctzll(y.sig), tx = __builtin_ctzll(x.sig);
        uint64_t oy = y.sig >> ty, ox = x.sig >> tx;
        int64_t qe = (y.exp + ty) - (x.exp + tx);
        if (oy % ox == 0) return sfp8e_perturbed(f, env, y.sign, oy / ox, qe, -1, flags);
        {
            /* non-dyadic q: m = sy/sx (binary64: relative error <= 2^-53), value
             * m (1 - c) 2^(ey-ex), c = q^2/3 - q^4/5 + ... in [0, 2^-52) */
            double m = (double)y.sig / (double)x.sig;
            sfp8q mq, c, yq;
            if (sfp8e_round_d(f, env, y.sign, m, m * 0x1p-51, y.exp - x.exp, &r, flags)) return r;
            /* binary128: c = q^2/3 within q^4/5 < 2^-104 relative; the
             * quotient, product and ldexp round within 2^-110 relative */
            mq = (sfp8q)y.sig / (sfp8q)x.sig;
            c = 2 * (y.exp - x.exp) < -16300 ? 0 : QF(ldexp)(mq * mq, (int)(2 * (y.exp - x.exp))) / 3;
            yq = mq * (1 - c);
            return sfp8e_round_q_last(f, env, y.sign, yq, yq * QC(0x1p-103), y.exp - x.exp, flags);
        }
    }
    {
        /* -27 < d < 60 (x > 0), -62 < d < 60 (x < 0): scale both by the same power of two (exact) so that
         * 1 <= |x| < 2; |y| then lies in binary64's range */
        int64_t s = -top_of(&x);
        double xd = ldexp((double)x.sig, (int)(x.exp + s)), yd = ldexp((double)y.sig, (int)(y.exp + s));
        double v = atan2(yd, x.sign ? -xd : xd);
        sfp8q xq, yq, vq;
        if (sfp8e_round_d(f, env, y.sign, v, v * SFP8E_REL_D, 0, &r, flags)) return r;
        xq = QF(ldexp)((sfp8q)x.sig, (int)(x.exp + s));
        yq = QF(ldexp)((sfp8q)y.sig, (int)(y.exp + s));
        vq = QF(atan2)(yq, x.sign ? -xq : xq);
        return sfp8e_round_q_last(f, env, y.sign, vq, vq * SFP8E_REL_Q, 0, flags);
    }
}

/* ------------------------------------------------------------------------ */
/* sinh, cosh, tanh                                                          */
/* ------------------------------------------------------------------------ */

/* e^|x| / 2 for 512 <= |x| < 2^23 as 2^(k-1) e^t, t = |x| - k ln2, |t| <= ln2/2
 * (+ error).  sinh and cosh differ from it by e^-|x|/2, below 2^-1400 relative.
 * binary64 first (mostly to decide overflow and underflow cheaply): t by one
 * fma, its error <= k |ln2 - LN2_D| + ulp(t) <= k 2^-54 + 2^-53, so e^t within
 * (k 2^-53 + 2^-52) relative besides exp's own SFP8E_REL_D.  binary128: as in
 * sfp8_exp, t's error <= (k + |x|) 2^-112. */
static uint32_t half_exp(const sfp8_format *f, const sfp8_env *env, int sign, const sfp8x_val *x, uint8_t *flags)
{
    static const double LN2_D = 0.69314718055994530942;
    int64_t scale;
    uint32_t r;
    double xd = sfp8e_to_d(x, &scale), kd = nearbyint(xd / LN2_D), yd = exp(fma(-kd, LN2_D, xd));
    sfp8q xq, k, t, y;
    if (sfp8e_round_d(f, env, sign, yd, yd * (SFP8E_REL_D + (kd + 2) * 0x1p-53), (int64_t)kd - 1, &r, flags))
        return r;
    xq = sfp8e_to_q(x, &scale);
    k = QF(nearbyint)(xq / LN2_Q);
    t = xq - k * LN2_Q;
    y = QF(exp)(t);
    return sfp8e_round_q_last(f, env, sign, y, y * (SFP8E_REL_Q + (k + xq + 1) * QC(0x1p-110)), (int64_t)k - 1, flags);
}

static uint32_t sinh_cosh(const sfp8_format *f, uint32_t a, const sfp8_env *env, int is_cosh, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t top;
    int sign;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    sign = is_cosh ? 0 : x.sign;
    if (x.kind == SFP8X_INF) return sfp8e_inf(f, env, sign, flags); /* sinh(+-inf) = +-inf, cosh = +inf */
    if (x.kind == SFP8X_ZERO) return is_cosh ? sfp8e_exact(f, env, 0, 1, 0, flags) : sfp8e_zero(f, x.sign, flags);
    top = top_of(&x);
    if (top <= TINY_TOP) /* cosh = 1 + x^2/2, sinh = x + x^3/6 */
        return is_cosh ? sfp8e_perturbed(f, env, 0, 1, 0, 1, flags)
                       : sfp8e_perturbed(f, env, x.sign, x.sig, x.exp, 1, flags);
    if (top >= 23) /* |x| >= 2^23: beyond every format's range */
        return sfp8e_perturbed(f, env, sign, 1, TRIG_FAR, 1, flags);
    if (top < 9) return ziv1(f, env, &x, is_cosh ? cosh : sinh, is_cosh ? QF(cosh) : QF(sinh), flags);
    return half_exp(f, env, sign, &x, flags);
}

uint32_t sfp8_sinh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return sinh_cosh(f, a, env, 0, flags);
}

uint32_t sfp8_cosh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return sinh_cosh(f, a, env, 1, flags);
}

uint32_t sfp8_tanh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t top;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return sfp8e_exact(f, env, x.sign, 1, 0, flags); /* +-1 */
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    top = top_of(&x);
    if (top <= TINY_TOP) return sfp8e_perturbed(f, env, x.sign, x.sig, x.exp, -1, flags); /* x - x^3/3 */
    if (top >= 5) /* |x| >= 32: 1 - tanh|x| < 2 e^-64 < 2^-91 */
        return sfp8e_perturbed(f, env, x.sign, 1, 0, -1, flags);
    return ziv1(f, env, &x, tanh, QF(tanh), flags);
}

/* ------------------------------------------------------------------------ */
/* arcsinh, arccosh, arctanh                                                 */
/* ------------------------------------------------------------------------ */

/* log(2|x|) for |x| >= 2^1000 (beyond binary64, possibly binary128):
 * arcsinh|x| = log(2|x|) + 1/(4x^2) - ..., arccosh x = log(2x) - 1/(4x^2) - ...,
 * the term below 2^-2000.  log(2|x|) = log(sig) + (exp + 1) ln2: logq within
 * SFP8E_REL_Q, LN2_Q within 2^-113 relative, the product and sum within
 * 2^-112 relative of a value below 2^21. */
static uint32_t log2x_q(const sfp8_format *f, const sfp8_env *env, int sign, const sfp8x_val *x, uint8_t *flags)
{
    sfp8q e1 = (sfp8q)(x->exp + 1), y = QF(log)((sfp8q)x->sig) + e1 * LN2_Q;
    sfp8q err = y * SFP8E_REL_Q + (QF(fabs)(e1) + 64) * QC(0x1p-110) + QC(0x1p-1990); /* + 1/(4x^2) */
    return sfp8e_round_q_last(f, env, sign, y, err, 0, flags);
}

uint32_t sfp8_arcsinh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t top;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return sfp8e_inf(f, env, x.sign, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    top = top_of(&x);
    if (top <= TINY_TOP) return sfp8e_perturbed(f, env, x.sign, x.sig, x.exp, -1, flags); /* x - x^3/6 */
    if (top >= 1000) return log2x_q(f, env, x.sign, &x, flags);
    return ziv1(f, env, &x, asinh, QF(asinh), flags);
}

uint32_t sfp8_arccosh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.sign || x.kind == SFP8X_ZERO || (x.kind == SFP8X_FINITE && top_of(&x) < 0))
        return sfp8e_invalid(f, flags); /* x < 1 */
    if (x.kind == SFP8X_INF) return sfp8e_inf(f, env, 0, flags);
    if (is_one(&x)) return sfp8e_zero(f, 0, flags); /* arccosh(1) = +0 */
    if (top_of(&x) >= 1000) return log2x_q(f, env, 0, &x, flags);
    return ziv1(f, env, &x, acosh, QF(acosh), flags);
}

uint32_t sfp8_arctanh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (odd_unit_prologue(f, a, &x, &r, flags)) return r;
    if (is_one(&x)) { /* pole: arctanh(+-1) = +-inf */
        *flags |= SFP8_FLAG_DIVBYZERO;
        return sfp8e_inf(f, env, x.sign, flags);
    }
    if (top_of(&x) <= TINY_TOP) return sfp8e_perturbed(f, env, x.sign, x.sig, x.exp, 1, flags); /* x + x^3/3 */
    return ziv1(f, env, &x, atanh, QF(atanh), flags);
}

/* ------------------------------------------------------------------------ */
/* degrees, radians                                                          */
/* ------------------------------------------------------------------------ */

/* x * c for c = 180/pi or pi/180, at any exponent (the scale carries it).
 * binary64: c within 2^-53 relative, the product within 2^-53: |error| <=
 * 2^-51.9 |y|, bound 2^-50 |y|.  binary128: c within 2^-113, the product
 * 2^-113 (and cq's own computation from PI_Q, two roundings): bound 2^-109. */
static uint32_t times_const(const sfp8_format *f, uint32_t a, const sfp8_env *env, double c, sfp8q cq,
                            uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t scale;
    double y;
    sfp8q yq;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return sfp8e_inf(f, env, x.sign, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    y = sfp8e_to_d(&x, &scale) * c;
    if (sfp8e_round_d(f, env, x.sign, y, y * 0x1p-50, scale, &r, flags)) return r;
    yq = sfp8e_to_q(&x, &scale) * cq;
    return sfp8e_round_q_last(f, env, x.sign, yq, yq * QC(0x1p-109), scale, flags);
}

uint32_t sfp8_degrees(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return times_const(f, a, env, 57.295779513082320877, 180 / PI_Q, flags);
}

uint32_t sfp8_radians(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return times_const(f, a, env, 0.017453292519943295769, PI_Q / 180, flags);
}
