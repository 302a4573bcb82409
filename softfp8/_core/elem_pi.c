/*
 * Correctly rounded pi-functions (IEEE 754-2019 9.2; P3109 4.10.12, 4.10.16):
 * sinPi, cosPi, tanPi, asinPi, acosPi, atanPi, atan2Pi, on the machinery of
 * elem.h (read elem.c first).
 *
 * sinPi / cosPi / tanPi reduce their argument EXACTLY: |x| = N 2^e + 2j with N 2^e
 * in [0, 2) (every finite value is a dyadic number), then by the symmetries to an
 * angle pi N' 2^e in [0, pi/4] whose sine, cosine or tangent is evaluated; N' has
 * at most 44 bits (|x| >= 2^-26 there), exact in binary64.  For a dyadic x,
 * sin(pi x) and cos(pi x) are rational only at the multiples of 1/2 (0, +-1) and
 * tan(pi x) only at the multiples of 1/4 (0, +-1, poles) (Niven); every other
 * value is irrational and Ziv's strategy decides it.  The inverse functions are
 * rational (dyadic) only at the points listed with each; asinPi(1/2) = 1/6,
 * acosPi(1/2) = 1/3 are not dyadic (not rounding boundaries).
 */
#include "elem.h"

static const sfp8q PI_Q = QC(3.14159265358979323846264338327950288);
#define PI_D 3.14159265358979323846

static inline int msb64(uint64_t x) { return 63 - __builtin_clzll(x); }
static inline int64_t top_of(const sfp8x_val *v) { return v->exp + msb64(v->sig); }
static int is_one(const sfp8x_val *x) { return (x->sig & (x->sig - 1)) == 0 && top_of(x) == 0; }

/* |x| mod 2 = N 2^e exactly, e = min(exp, 0), for |x| >= 2^-48 (e >= -64) */
static void mod2(const sfp8x_val *x, uint64_t *N, int64_t *e)
{
    if (x->exp >= 1) {
        *N = 0;
        *e = 0;
    } else {
        *e = x->exp;
        *N = x->sig & (((uint64_t)1 << (1 - x->exp)) - 1);
    }
}

/* (-1)^neg f(pi N 2^e), N 2^e in (0, 1/4]: f = sin (cosine = 0) or cos; a positive
 * value, not dyadic */
static uint32_t trig_pi(const sfp8_format *f, const sfp8_env *env, int neg, uint64_t N, int64_t e, int cosine,
                        uint8_t *flags)
{
    uint32_t r;
    double ad = PI_D * ldexp((double)N, (int)e), yd = cosine ? cos(ad) : sin(ad);
    sfp8q aq = PI_Q * QF(ldexp)((sfp8q)N, (int)e), yq;
    /* the argument's relative error 2^-52 (2^-111) moves sin / cos on [0, pi/4] by at most as much */
    if (sfp8e_round_d(f, env, neg, yd, yd * (SFP8E_REL_D + 0x1p-51), 0, &r, flags)) return r;
    yq = cosine ? QF(cos)(aq) : QF(sin)(aq);
    return sfp8e_round_q_last(f, env, neg, yq, yq * (SFP8E_REL_Q + QC(0x1p-110)), 0, flags);
}

/* pi x (1 + c (pi x)^2) for a tiny x (|x| < 2^-26: the next term below 2^-100 relative) */
static uint32_t tiny_pi(const sfp8_format *f, const sfp8_env *env, const sfp8x_val *x, sfp8q c, uint8_t *flags)
{
    int64_t scale;
    sfp8q xq = sfp8e_to_q(x, &scale), y = PI_Q * xq;
    if (scale == 0) y *= 1 + c * y * y;
    return sfp8e_round_q_last(f, env, x->sign, y, y * QC(0x1p-100), scale, flags);
}

uint32_t sfp8_sinpi(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    uint64_t N, H;
    int64_t e;
    int neg;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return sfp8e_invalid(f, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    if (top_of(&x) <= -27) return tiny_pi(f, env, &x, QC(-1.0) / 6, flags);
    mod2(&x, &N, &e);
    if (N == 0 || e == 0) return sfp8e_zero(f, x.sign, flags); /* an integer: +-0, the sign of x */
    H = (uint64_t)1 << -e; /* 1 in units 2^e */
    neg = x.sign;
    if (N >= H) { /* sin(pi (r + 1)) = -sin(pi r) */
        neg ^= 1;
        N -= H;
    }
    if (N == 0) return sfp8e_zero(f, x.sign, flags); /* an odd integer */
    if (N > H / 2) N = H - N; /* sin(pi (1 - r)) = sin(pi r) */
    if (2 * N == H) return sfp8e_exact(f, env, neg, 1, 0, flags);
    if (4 * N <= H) return trig_pi(f, env, neg, N, e, 0, flags);
    return trig_pi(f, env, neg, H / 2 - N, e, 1, flags); /* sin(pi r) = cos(pi (1/2 - r)) */
}

uint32_t sfp8_cospi(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    uint64_t N, H;
    int64_t e;
    int neg = 0;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return sfp8e_invalid(f, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_exact(f, env, 0, 1, 0, flags);
    if (top_of(&x) <= -32) return sfp8e_perturbed(f, env, 0, 1, 0, -1, flags); /* 1 - (pi x)^2 / 2 */
    mod2(&x, &N, &e);
    H = (uint64_t)1 << -e;
    if (N > H) N = 2 * H - N; /* cos(pi (2 - r)) = cos(pi r) */
    if (N == 0) return sfp8e_exact(f, env, 0, 1, 0, flags);
    if (N == H) return sfp8e_exact(f, env, 1, 1, 0, flags);
    if (2 * N > H) { /* cos(pi (1 - r)) = -cos(pi r) */
        neg = 1;
        N = H - N;
    }
    if (2 * N == H) return sfp8e_zero(f, 0, flags); /* cosPi(n + 1/2) = +0 */
    if (4 * N <= H) return trig_pi(f, env, neg, N, e, 1, flags);
    return trig_pi(f, env, neg, H / 2 - N, e, 0, flags);
}

uint32_t sfp8_tanpi(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    uint64_t N, H;
    int64_t e;
    int odd, neg;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return sfp8e_invalid(f, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    if (top_of(&x) <= -27) return tiny_pi(f, env, &x, QC(1.0) / 3, flags);
    mod2(&x, &N, &e);
    H = (uint64_t)1 << -e;
    odd = e == 0 ? (int)N : N >= H; /* floor(|x|) odd */
    if (e == 0 || N == 0) return sfp8e_zero(f, x.sign ^ odd, flags); /* tanPi(n) */
    if (N >= H) N -= H; /* period 1 */
    if (N == 0) return sfp8e_zero(f, x.sign ^ odd, flags);
    if (2 * N == H) { /* a pole: +inf for floor(|x|) even, then odd in x */
        *flags |= SFP8_FLAG_DIVBYZERO;
        return sfp8e_inf(f, env, x.sign ^ odd, flags);
    }
    neg = x.sign;
    if (2 * N > H) { /* tan(pi (1 - r)) = -tan(pi r) */
        neg ^= 1;
        N = H - N;
    }
    if (4 * N == H) return sfp8e_exact(f, env, neg, 1, 0, flags); /* tanPi(1/4) = 1 */
    {
        /* t = tan(pi N') for N' 2^e < 1/4, 1 / tan(pi (1/2 - N')) above; the argument's relative
           error d moves tan by at most d 2 theta / sin(2 theta) <= d pi / 2 */
        int inv = 4 * N > H;
        uint64_t M = inv ? H / 2 - N : N;
        double ad = PI_D * ldexp((double)M, (int)e), yd = inv ? 1.0 / tan(ad) : tan(ad);
        sfp8q aq = PI_Q * QF(ldexp)((sfp8q)M, (int)e), yq;
        if (sfp8e_round_d(f, env, neg, yd, yd * (SFP8E_REL_D + 0x1p-49), 0, &r, flags)) return r;
        yq = inv ? 1 / QF(tan)(aq) : QF(tan)(aq);
        return sfp8e_round_q_last(f, env, neg, yq, yq * (SFP8E_REL_Q + QC(0x1p-108)), 0, flags);
    }
}

/* ------------------------------------------------------------------------ */
/* asinPi, acosPi, atanPi, atan2Pi                                           */
/* ------------------------------------------------------------------------ */

/* |x| > 1 */
static int above_one(const sfp8x_val *x)
{
    return x->kind == SFP8X_INF || (x->kind == SFP8X_FINITE && (top_of(x) > 0 || (top_of(x) == 0 && !is_one(x))));
}

/* fd(x) / pi, fq(x) / pi rounded with sign, x in [-1, 1] (|x| >= 2^-26 unless acos) */
static uint32_t inv_pi(const sfp8_format *f, const sfp8_env *env, const sfp8x_val *x, double (*fd)(double),
                       sfp8q (*fq)(sfp8q), uint8_t *flags)
{
    uint32_t r;
    double xd = ldexp((double)x->sig, (int)x->exp), yd = fd(x->sign ? -xd : xd) / PI_D;
    sfp8q xq = QF(ldexp)((sfp8q)x->sig, (int)x->exp), yq = fq(x->sign ? -xq : xq) / PI_Q;
    if (sfp8e_round_d(f, env, yd < 0, fabs(yd), fabs(yd) * (SFP8E_REL_D + 0x1p-51), 0, &r, flags)) return r;
    return sfp8e_round_q_last(f, env, yq < 0, QF(fabs)(yq), QF(fabs)(yq) * (SFP8E_REL_Q + QC(0x1p-110)), 0, flags);
}

/* x / pi (1 + c x^2) for a tiny x */
static uint32_t tiny_over_pi(const sfp8_format *f, const sfp8_env *env, const sfp8x_val *x, sfp8q c, uint8_t *flags)
{
    int64_t scale;
    sfp8q xq = sfp8e_to_q(x, &scale), y = xq / PI_Q;
    if (scale == 0) y *= 1 + c * xq * xq;
    return sfp8e_round_q_last(f, env, x->sign, y, y * QC(0x1p-100), scale, flags);
}

uint32_t sfp8_asinpi(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (above_one(&x)) return sfp8e_invalid(f, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    if (is_one(&x)) return sfp8e_exact(f, env, x.sign, 1, -1, flags); /* +-1/2 */
    if (top_of(&x) <= -27) return tiny_over_pi(f, env, &x, QC(1.0) / 6, flags);
    return inv_pi(f, env, &x, asin, QF(asin), flags);
}

uint32_t sfp8_acospi(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (above_one(&x)) return sfp8e_invalid(f, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_exact(f, env, 0, 1, -1, flags); /* 1/2 */
    if (is_one(&x)) return x.sign ? sfp8e_exact(f, env, 0, 1, 0, flags) : sfp8e_zero(f, 0, flags);
    if (top_of(&x) < -60) /* 1/2 - x/pi - ...: within 2^-60 of 1/2, on the side opposite x */
        return sfp8e_perturbed(f, env, 0, 1, -1, x.sign ? 1 : -1, flags);
    return inv_pi(f, env, &x, acos, QF(acos), flags);
}

uint32_t sfp8_atanpi(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    if (x.kind == SFP8X_INF) return sfp8e_exact(f, env, x.sign, 1, -1, flags); /* +-1/2 */
    if (is_one(&x)) return sfp8e_exact(f, env, x.sign, 1, -2, flags);             /* +-1/4 */
    if (top_of(&x) <= -27) return tiny_over_pi(f, env, &x, QC(-1.0) / 3, flags);
    if (top_of(&x) >= 60) /* 1/2 - atan(1/|x|)/pi, the correction below 2^-60 */
        return sfp8e_perturbed(f, env, x.sign, 1, -1, -1, flags);
    return inv_pi(f, env, &x, atan, QF(atan), flags);
}

/* atan2Pi(y, x) = atan2(y, x) / pi: C99 F.9.1.4's special cases divided by pi
 * (IEEE 754-2019 9.2.1), exact at |y| = |x| (+-1/4, +-3/4) */
uint32_t sfp8_atan2pi(const sfp8_format *f, uint32_t ya, uint32_t xa, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val y, x;
    uint32_t r;
    int64_t d;
    sfp8e_unpack(f, ya, &y, flags);
    sfp8e_unpack(f, xa, &x, flags);
    if (sfp8x_nan_operand(f, &y, &x, &r, flags)) return r; /* a target's operands are never NaN */
    if (y.kind == SFP8X_ZERO) /* +-0 for x = +0 or x > 0, +-1 for x = -0 or x < 0 */
        return x.sign ? sfp8e_exact(f, env, y.sign, 1, 0, flags) : sfp8e_zero(f, y.sign, flags);
    if (y.kind == SFP8X_INF) /* +-1/4 (x = +inf), +-3/4 (x = -inf), else +-1/2 */
        return x.kind != SFP8X_INF ? sfp8e_exact(f, env, y.sign, 1, -1, flags)
                                   : sfp8e_exact(f, env, y.sign, x.sign ? 3 : 1, -2, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_exact(f, env, y.sign, 1, -1, flags);
    if (x.kind == SFP8X_INF) return x.sign ? sfp8e_exact(f, env, y.sign, 1, 0, flags) : sfp8e_zero(f, y.sign, flags);
    if (y.sig == x.sig && y.exp == x.exp) return sfp8e_exact(f, env, y.sign, x.sign ? 3 : 1, -2, flags);
    d = top_of(&y) - top_of(&x);
    if (d >= 62) /* +-(1/2 + atan(x/|y|)/pi): the correction below 2^-60, its sign that of x */
        return sfp8e_perturbed(f, env, y.sign, 1, -1, x.sign ? 1 : -1, flags);
    if (d <= -62 && x.sign) /* +-(1 - atan(|y/x|)/pi) */
        return sfp8e_perturbed(f, env, y.sign, 1, 0, -1, flags);
    if (d <= -27 && !x.sign) {
        /* +-atan(q)/pi, q = |y|/x < 2^-26: q/pi (1 - q^2/3), the next term below 2^-100 relative */
        sfp8q m = (sfp8q)y.sig / (sfp8q)x.sig, c = 0, v;
        int64_t k = y.exp - x.exp;
        if (2 * k > -16300) c = QF(ldexp)(m * m, (int)(2 * k)) / 3;
        v = m / PI_Q * (1 - c);
        return sfp8e_round_q_last(f, env, y.sign, v, v * QC(0x1p-100), k, flags);
    }
    {
        /* scale both by one power of two (exact) so that 1 <= |x| < 2 */
        int64_t s = -top_of(&x);
        double xd = ldexp((double)x.sig, (int)(x.exp + s)), yd = ldexp((double)y.sig, (int)(y.exp + s));
        double v = atan2(yd, x.sign ? -xd : xd) / PI_D;
        sfp8q xq = QF(ldexp)((sfp8q)x.sig, (int)(x.exp + s)), yq = QF(ldexp)((sfp8q)y.sig, (int)(y.exp + s)), vq;
        if (sfp8e_round_d(f, env, y.sign, v, v * (SFP8E_REL_D + 0x1p-51), 0, &r, flags)) return r;
        vq = QF(atan2)(yq, x.sign ? -xq : xq) / PI_Q;
        return sfp8e_round_q_last(f, env, y.sign, vq, vq * (SFP8E_REL_Q + QC(0x1p-110)), 0, flags);
    }
}
