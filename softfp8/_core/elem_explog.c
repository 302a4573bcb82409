/*
 * Correctly rounded exponentials, logarithms, powers and roots (elem.h's
 * machinery, following sfp8_exp's pattern in elem.c): exp2, expm1, log, log2,
 * log10, log1p, cbrt, power, hypot, logaddexp, logaddexp2.
 *
 * Facts used throughout (p <= 16 is the largest precision of a storage
 * format; stochastic rounding uses at most 32 random bits):
 *  - every rounding boundary of every mode is a dyadic number with at most
 *    p + 1 + 32 <= 49 significant bits; next to a representable value v the
 *    nearest other boundary is at least |v| * 2^-48 away (2^-47 above a power
 *    of two), so a value within |v| * 2^-49 of v, on a known side, rounds as
 *    sfp8e_perturbed(v, side) does;
 *  - operands have at most 16 significant bits and exponents within
 *    +-(2^20 + 2^16 + 16): rounding a value 2^(+-SFP8E_FAR) gives every
 *    format's overflow / underflow.  The value-level entries (elem.h, rounding
 *    targets) take up to 32 bits and exponents within +-(2^21 + 64); the paths
 *    they reach are exact for such operands too (docs/semantics.md).
 * Error bounds are written next to each approximation; Ziv's strategy
 * (sfp8e_round_d / sfp8e_round_q) only needs them to be true, not tight.
 */
#include "elem.h"

#define FAR ((int64_t)1 << 24) /* as SFP8E_FAR in elem.c */

static const sfp8q LN2Q = QC(0.693147180559945309417232121458176568);
static const sfp8q LOG2EQ = QC(1.44269504088896340735992468100189214);
static const sfp8q LOG10EQ = QC(0.434294481903251827651128918916605082);
static const sfp8q LOG10_2Q = QC(0.301029995663981195213738894724493027);
#define LOG2E_D 1.4426950408889634074
#define LOG10E_D 0.43429448190325182765
#define LOG10_2_D 0.30102999566398119521
#define LN2_D 0.69314718055994530942

static inline int msb64(uint64_t x) { return 63 - __builtin_clzll(x); }
static inline int64_t top_of(const sfp8x_val *v) { return v->exp + msb64(v->sig); }

static int msb128(unsigned __int128 x)
{
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? 64 + msb64(hi) : msb64((uint64_t)x);
}

/* v finite non-zero = odd * 2^e, odd odd */
void odd_parts(const sfp8x_val *v, uint64_t *odd, int64_t *e)
{
    int tz = __builtin_ctzll(v->sig);
    *odd = v->sig >> tz;
    *e = v->exp + tz;
}

/* decode a unary operand; 1 with the propagated NaN in *r for a NaN */
/* (-1)^sign * 2^(+-FAR): overflow (big) or underflow to 0 / the smallest subnormal */
uint32_t far(const sfp8_format *f, const sfp8_env *env, int sign, int big, uint8_t *flags)
{
    return sfp8e_perturbed(f, env, sign, 1, big ? FAR : -FAR, 1, flags);
}

/* the value of v exactly (v a finite operand) */
static uint32_t exact_val(const sfp8_format *f, const sfp8_env *env, const sfp8x_val *v, uint8_t *flags)
{
    if (v->kind == SFP8X_ZERO) return sfp8e_zero(f, v->sign, flags);
    return sfp8e_exact(f, env, v->sign, v->sig, v->exp, flags);
}

/* binary64 stage for a signed approximation y (value y * 2^scale, |error| <= err * 2^scale) */
int try_d(const sfp8_format *f, const sfp8_env *env, double y, double err, int64_t scale, uint32_t *out,
                 uint8_t *flags)
{
    if (!isfinite(y) || !isfinite(err)) return 0;
    return sfp8e_round_d(f, env, y < 0, fabs(y), err, scale, out, flags);
}

/* binary128 stage then the last resort, for a signed approximation y */
uint32_t ziv_q(const sfp8_format *f, const sfp8_env *env, sfp8q y, sfp8q err, int64_t scale,
                      uint8_t *flags)
{
    uint32_t r;
    int sign = y < 0;
    y = QF(fabs)(y);
    if (sfp8e_round_q(f, env, sign, y, err, scale, &r, flags)) return r;
    if (!(y > 0)) y = err > 0 ? err : QC(0x1p-16000); /* a non-zero point of the interval */
    return sfp8e_round_last(f, env, sign, y, scale, flags); /* not sfp8e_round_q_last: y may be 0 */
}

/* e^x = y * 2^k with |error| <= *err * 2^k, for |x| < 2^24 (sfp8_exp's reduction) */
void exp_q(sfp8q xq, sfp8q *y, sfp8q *err, int64_t *k)
{
    sfp8q kq = QF(nearbyint)(xq / LN2Q);
    sfp8q t = xq - kq * LN2Q; /* error <= (|k| + |x|) 2^-112 */
    *y = QF(exp)(t);
    *err = *y * (SFP8E_REL_Q + (QF(fabs)(kq) + QF(fabs)(xq) + 1) * QC(0x1p-110));
    *k = (int64_t)kq;
}

/* ------------------------------------------------------------------------ */
/* exp2, expm1                                                               */
/* ------------------------------------------------------------------------ */

uint32_t sfp8_exp2(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t top, scale, e;
    uint64_t odd;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return x.sign ? sfp8e_zero(f, 0, flags) : sfp8e_inf(f, env, 0, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_exact(f, env, 0, 1, 0, flags);
    top = x.exp + msb64(x.sig);
    if (top >= 23) return far(f, env, 0, !x.sign, flags); /* integers beyond every range */
    odd_parts(&x, &odd, &e);
    if (e >= 0) { /* an integer n: 2^n exactly */
        int64_t n = (int64_t)(odd << e);
        return sfp8e_exact(f, env, 0, 1, x.sign ? -n : n, flags);
    }
    /* otherwise 2^x is irrational */
    if (top < -60) return sfp8e_perturbed(f, env, 0, 1, 0, x.sign ? -1 : 1, flags); /* 1 + x ln2 + ... */
    if (top < 9) {
        double xd = sfp8e_to_d(&x, &scale), y = exp2(x.sign ? -xd : xd);
        if (try_d(f, env, y, y * SFP8E_REL_D, 0, &r, flags)) return r;
    }
    {
        sfp8q xq = sfp8e_to_q(&x, &scale), kq, y;
        if (x.sign) xq = -xq;
        kq = QF(nearbyint)(xq);
        y = QF(exp2)(xq - kq); /* xq - kq exact */
        return ziv_q(f, env, y, y * SFP8E_REL_Q, (int64_t)kq, flags);
    }
}

uint32_t sfp8_expm1(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t top, scale;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return x.sign ? sfp8e_exact(f, env, 1, 1, 0, flags) : sfp8e_inf(f, env, 0, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    /* x != 0 dyadic: e^x - 1 is transcendental */
    top = x.exp + msb64(x.sig);
    /* expm1(x) = x + x^2/2 + ...: |x| * (1 +- 2^-61); larger magnitude for x > 0, smaller for x < 0 */
    if (top < -60) return sfp8e_perturbed(f, env, x.sign, x.sig, x.exp, x.sign ? -1 : 1, flags);
    /* x <= -64: -(1 - e^x), e^x < 2^-92 */
    if (x.sign && top >= 6) return sfp8e_perturbed(f, env, 1, 1, 0, -1, flags);
    if (top >= 23) return far(f, env, 0, 1, flags);
    if (top < 9) {
        double xd = sfp8e_to_d(&x, &scale), y;
        sfp8q yq;
        y = expm1(x.sign ? -xd : xd);
        if (try_d(f, env, y, fabs(y) * SFP8E_REL_D, 0, &r, flags)) return r;
        yq = QF(expm1)(x.sign ? -sfp8e_to_q(&x, &scale) : sfp8e_to_q(&x, &scale));
        return ziv_q(f, env, yq, QF(fabs)(yq) * SFP8E_REL_Q, 0, flags);
    }
    {
        /* 512 <= x < 2^23: e^x (1 - e^-x), e^-x < 2^-738 */
        sfp8q y, err;
        int64_t k;
        exp_q(sfp8e_to_q(&x, &scale), &y, &err, &k);
        return ziv_q(f, env, y, err + y * QC(0x1p-700), k, flags);
    }
}

/* ------------------------------------------------------------------------ */
/* logarithms                                                                */
/* ------------------------------------------------------------------------ */

static const double LB_D[3] = {LN2_D, 1.0, LOG10_2_D}; /* log_b(2) */
static const double CB_D[3] = {1.0, LOG2E_D, LOG10E_D}; /* log_b(e) */

static double logb_d(int b, double m) { return b == B_E ? log(m) : b == B_2 ? log2(m) : log10(m); }
static sfp8q logb_q(int b, sfp8q m) { return b == B_E ? QF(log)(m) : b == B_2 ? QF(log2)(m) : QF(log10)(m); }
static sfp8q lb_q(int b) { return b == B_E ? LN2Q : b == B_2 ? QC(1.0) : LOG10_2Q; }
static sfp8q cb_q(int b) { return b == B_E ? QC(1.0) : b == B_2 ? LOG2EQ : LOG10EQ; }

/*
 * log_b(x) for a finite x > 0 whose logarithm is not dyadic, plus an unknown
 * delta with 0 <= delta <= extra (log1p of a huge x).  With x = m 2^top,
 * m in [1, 2):
 *  - top = 0 or -1 (x in [0.5, 2)): t = x - 1 is exact (x has <= 16 bits),
 *    log_b(x) = log1p(t) * log_b(e): relative error <= REL + 2^-51 (the
 *    constant's and the product's roundings);
 *  - else log_b(x) = top * log_b(2) + log_b(m), |result| >= log_b(2) * 1.
 *    Absolute error <= |top| log_b(2) 2^-52 (constant and product) +
 *    log_b(2) REL (log_b(m) < log_b(2)) + |y| 2^-53 (the sum); binary128
 *    the same with 2^-111 / 2^-112.
 */
uint32_t log_ziv(const sfp8_format *f, const sfp8_env *env, int b, const sfp8x_val *x, double extra,
                        uint8_t *flags)
{
    int64_t top = top_of(x);
    uint32_t r;
    int sh = msb64(x->sig);
    if (top == 0 || top == -1) {
        double t = ldexp((double)x->sig, (int)x->exp) - 1.0;
        double y = log1p(t) * CB_D[b];
        sfp8q tq = QF(ldexp)((sfp8q)x->sig, (int)x->exp) - 1, yq;
        if (try_d(f, env, y, fabs(y) * (SFP8E_REL_D + 0x1p-51) + extra, 0, &r, flags)) return r;
        yq = QF(log1p)(tq) * cb_q(b);
        return ziv_q(f, env, yq, QF(fabs)(yq) * (SFP8E_REL_Q + QC(0x1p-111)) + extra, 0, flags);
    } else {
        double m = ldexp((double)x->sig, -sh), td = (double)top;
        double y = td * LB_D[b] + logb_d(b, m);
        double err = fabs(td) * LB_D[b] * 0x1p-52 + LB_D[b] * SFP8E_REL_D + fabs(y) * 0x1p-53 + extra;
        sfp8q mq = QF(ldexp)((sfp8q)x->sig, -sh), tq = (sfp8q)top, yq, errq;
        if (try_d(f, env, y, err, 0, &r, flags)) return r;
        yq = tq * lb_q(b) + logb_q(b, mq);
        errq = QF(fabs)(tq) * lb_q(b) * QC(0x1p-111) + lb_q(b) * SFP8E_REL_Q + QF(fabs)(yq) * QC(0x1p-112) + extra;
        return ziv_q(f, env, yq, errq, 0, flags);
    }
}

/* log, log2, log10: specials, then exact cases, then log_ziv */
static uint32_t log_any(const sfp8_format *f, uint32_t a, const sfp8_env *env, int b, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    uint64_t odd;
    int64_t e;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_ZERO) { /* pole: -inf */
        *flags |= SFP8_FLAG_DIVBYZERO;
        return sfp8e_inf(f, env, 1, flags);
    }
    if (x.sign) return sfp8e_invalid(f, flags); /* negative, -inf included */
    if (x.kind == SFP8X_INF) return sfp8e_inf(f, env, 0, flags);
    odd_parts(&x, &odd, &e);
    if (odd == 1 && e == 0) return sfp8e_zero(f, 0, flags); /* log(1) = +0 in every mode */
    if (b == B_2 && odd == 1) return sfp8e_exact(f, env, e < 0, (uint64_t)(e < 0 ? -e : e), 0, flags);
    if (b == B_10 && e >= 1 && e <= 27) { /* 10^e = 5^e 2^e (5^27 < 2^63: operands of up to 63 bits) */
        uint64_t p5 = 1;
        for (int i = 0; i < e; i++) p5 *= 5;
        if (odd == p5) return sfp8e_exact(f, env, 0, (uint64_t)e, 0, flags);
    }
    /* every other logarithm of a dyadic x != 1 is irrational */
    return log_ziv(f, env, b, &x, 0.0, flags);
}

uint32_t sfp8_log(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return log_any(f, a, env, B_E, flags);
}
uint32_t sfp8_log2(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return log_any(f, a, env, B_2, flags);
}
uint32_t sfp8_log10(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return log_any(f, a, env, B_10, flags);
}

uint32_t sfp8_log1p(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t top, scale;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    if (x.kind == SFP8X_INF) return x.sign ? sfp8e_invalid(f, flags) : sfp8e_inf(f, env, 0, flags);
    top = x.exp + msb64(x.sig);
    if (x.sign && top >= 0) {
        if (top == 0 && x.sig == ((uint64_t)1 << msb64(x.sig))) { /* x = -1: pole */
            *flags |= SFP8_FLAG_DIVBYZERO;
            return sfp8e_inf(f, env, 1, flags);
        }
        return sfp8e_invalid(f, flags); /* x < -1 */
    }
    /* x != 0 in (-1, inf): log(1 + x) is transcendental */
    /* log1p(x) = x - x^2/2 + ...: |x| (1 -+ 2^-61); smaller magnitude for x > 0, larger for x < 0 */
    if (top < -60) return sfp8e_perturbed(f, env, x.sign, x.sig, x.exp, x.sign ? 1 : -1, flags);
    /* x >= 2^100: log(x) + delta, 0 < delta = log1p(1/x) < 2^-100 */
    if (top >= 100) return log_ziv(f, env, B_E, &x, 0x1p-100, flags);
    {
        double xd = sfp8e_to_d(&x, &scale), y = log1p(x.sign ? -xd : xd);
        sfp8q xq = sfp8e_to_q(&x, &scale), yq;
        if (try_d(f, env, y, fabs(y) * SFP8E_REL_D, 0, &r, flags)) return r;
        yq = QF(log1p)(x.sign ? -xq : xq);
        return ziv_q(f, env, yq, QF(fabs)(yq) * SFP8E_REL_Q, 0, flags);
    }
}

/* ------------------------------------------------------------------------ */
/* cbrt                                                                      */
/* ------------------------------------------------------------------------ */

static int64_t floor_div3(int64_t n) { return n >= 0 ? n / 3 : -((-n + 2) / 3); }

uint32_t sfp8_cbrt(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    uint64_t odd;
    int64_t e, top, q;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) return sfp8e_inf(f, env, x.sign, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    odd_parts(&x, &odd, &e);
    if (e == 3 * floor_div3(e)) { /* exact iff odd is a cube (odd < 2^16: root < 41) */
        uint64_t c = 1;
        while (c * c * c < odd) c += 2;
        if (c * c * c == odd) return sfp8e_exact(f, env, x.sign, c, floor_div3(e), flags);
    }
    /* irrational: x = m' 2^(3q), m' in [1, 8) */
    top = x.exp + msb64(x.sig);
    q = floor_div3(top);
    {
        double m = ldexp((double)x.sig, (int)(x.exp - 3 * q)), y = cbrt(m);
        sfp8q yq;
        if (try_d(f, env, x.sign ? -y : y, y * SFP8E_REL_D, q, &r, flags)) return r;
        yq = QF(cbrt)(QF(ldexp)((sfp8q)x.sig, (int)(x.exp - 3 * q)));
        return ziv_q(f, env, x.sign ? -yq : yq, yq * SFP8E_REL_Q, q, flags);
    }
}

/* ------------------------------------------------------------------------ */
/* hypot: exact integer square root of the exactly aligned sum of squares    */
/* ------------------------------------------------------------------------ */

typedef unsigned __int128 u128;

static uint64_t isqrt128(u128 s) /* floor(sqrt(s)), s < 2^126 */
{
    uint64_t r = (uint64_t)sqrtl((long double)s);
    while ((u128)r * r > s) r--;
    while ((u128)(r + 1) * (r + 1) <= s) r++;
    return r;
}

uint32_t sfp8_hypot(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x, y;
    const sfp8x_val *p, *q;
    uint32_t r;
    sfp8e_unpack(f, a, &x, flags);
    sfp8e_unpack(f, b, &y, flags);
    /* hypot(+-inf, y) = +inf even for a quiet NaN y (a signalling NaN still signals) */
    if (!((x.kind == SFP8X_NAN && x.snan) || (y.kind == SFP8X_NAN && y.snan)) &&
        (x.kind == SFP8X_INF || y.kind == SFP8X_INF))
        return sfp8e_inf(f, env, 0, flags);
    if (sfp8x_nan_operand(f, &x, &y, &r, flags)) return r;
    if (x.kind == SFP8X_INF || y.kind == SFP8X_INF) return sfp8e_inf(f, env, 0, flags);
    if (x.kind == SFP8X_ZERO && y.kind == SFP8X_ZERO) return sfp8e_zero(f, 0, flags);
    if (x.kind == SFP8X_ZERO) return sfp8e_exact(f, env, 0, y.sig, y.exp, flags);
    if (y.kind == SFP8X_ZERO) return sfp8e_exact(f, env, 0, x.sig, x.exp, flags);
    p = &x;
    q = &y;
    if (top_of(p) < top_of(q)) {
        p = &y;
        q = &x;
    }
    /* |q| < 2^(top_q + 1) <= |p| 2^-30: hypot = |p| (1 + d), 0 < d < 2^-61 */
    if (top_of(p) - top_of(q) > 30) return sfp8e_perturbed(f, env, 0, p->sig, p->exp, 1, flags);
    {
        /* sig < 2^32 (also a target's operands), so top - exp <= 31 for each: the larger's
           top - e0 <= 30 + 31, the aligned squares and their sum below 4^62 = 2^124 */
        int64_t e0 = p->exp < q->exp ? p->exp : q->exp;
        u128 s = ((u128)p->sig * p->sig << (2 * (p->exp - e0))) + ((u128)q->sig * q->sig << (2 * (q->exp - e0)));
        int k = 0, m = msb128(s);
        uint64_t rt;
        if (m < 122) k = (123 - m) / 2; /* s 4^k in [2^122, 2^125): root in [2^61, 2^63) */
        s <<= 2 * k;
        rt = isqrt128(s);
        /* hypot = sqrt(s) 2^(e0 - k); sqrt(s) in (rt, rt + 1) unless s is a square */
        return sfp8e_rnd(f, env, 0, rt, e0 - k, (u128)rt * rt != s, flags);
    }
}

/* ------------------------------------------------------------------------ */
/* logaddexp, logaddexp2                                                     */
/* ------------------------------------------------------------------------ */

/* compare finite values (zeros of either sign equal) */
static int val_cmp(const sfp8x_val *a, const sfp8x_val *b)
{
    int za = a->kind == SFP8X_ZERO, zb = b->kind == SFP8X_ZERO, c;
    uint64_t sa, sb;
    int64_t ta, tb;
    if (za && zb) return 0;
    if (za) return b->sign ? 1 : -1;
    if (zb) return a->sign ? -1 : 1;
    if (a->sign != b->sign) return a->sign ? -1 : 1;
    ta = top_of(a);
    tb = top_of(b);
    sa = a->sig << (63 - msb64(a->sig));
    sb = b->sig << (63 - msb64(b->sig));
    c = ta != tb ? (ta < tb ? -1 : 1) : (sa < sb ? -1 : sa > sb);
    return a->sign ? -c : c;
}

/* x + 1 exactly rounded (x finite): logaddexp2(x, x) */
static uint32_t plus_one(const sfp8_format *f, const sfp8_env *env, const sfp8x_val *x, uint8_t *flags)
{
    int64_t t;
    __int128 X, one, s;
    int64_t e0;
    if (x->kind == SFP8X_ZERO) return sfp8e_exact(f, env, 0, 1, 0, flags);
    t = top_of(x);
    /* |x| >= 2^64: x + 1 within |x| 2^-64 of x (x + 1 has > 49 bits) */
    if (t >= 64) return sfp8e_perturbed(f, env, x->sign, x->sig, x->exp, x->sign ? -1 : 1, flags);
    /* |x| < 2^-48: 1 + x in (1 - 2^-48, 1 + 2^-48), no boundary but 1 there */
    if (t < -48) return sfp8e_perturbed(f, env, 0, 1, 0, x->sign ? -1 : 1, flags);
    if (x->exp >= 0) {
        X = (__int128)((u128)x->sig << x->exp);
        one = 1;
        e0 = 0;
    } else { /* exp >= t - 15 >= -63 */
        X = (__int128)x->sig;
        one = (__int128)1 << (-x->exp);
        e0 = x->exp;
    }
    s = (x->sign ? -X : X) + one;
    return sfp8e_exact(f, env, s < 0, (uint64_t)(s < 0 ? -s : s), e0, flags);
}

/* M + L 2^scale rounded, M finite (a value of f), L > 0 approximated by Lq
 * with |error| <= errL 2^scale. */
static uint32_t round_sum(const sfp8_format *f, const sfp8_env *env, const sfp8x_val *M, sfp8q Lq, sfp8q errL,
                          int64_t scale, uint8_t *flags)
{
    int e;
    int64_t tM;
    sfp8q y;
    if (M->kind == SFP8X_ZERO) return ziv_q(f, env, Lq, errL, scale, flags);
    Lq = QF(frexp)(Lq, &e); /* [0.5, 1): L < 2^scale */
    errL = QF(ldexp)(errL, -e);
    scale += e;
    tM = top_of(M);
    /* L < 2^scale <= |M| 2^-60: M + L within |M| 2^-60 of M, on L's side */
    if (tM - scale > 60) return sfp8e_perturbed(f, env, M->sign, M->sig, M->exp, M->sign ? -1 : 1, flags);
    /* |M| < 2^(tM + 1) < 2^(scale - 109): an error term */
    if (scale - tM > 110) return ziv_q(f, env, Lq, errL + QC(0x1p-109), scale, flags);
    y = QF(ldexp)((sfp8q)M->sig, (int)(M->exp - scale)); /* exact, |y| < 2^61 */
    y = (M->sign ? -y : y) + Lq;
    /* the sum's rounding: |y| 2^-113 <= 2^-52 < L: the interval stays on L's side of M;
     * absolute, so a near-cancellation falls through */
    return ziv_q(f, env, y, errL + QF(fabs)(y) * QC(0x1p-112), scale, flags);
}

/* v as binary128 for |v| < 2^64; values below 2^-16000 become 0 with *err += 2^-16000 */
static sfp8q small_q(const sfp8x_val *v, sfp8q *err)
{
    sfp8q r;
    if (v->kind == SFP8X_ZERO) return 0;
    if (top_of(v) < -16000) {
        *err += QC(0x1p-16000);
        return 0;
    }
    r = QF(ldexp)((sfp8q)v->sig, (int)v->exp);
    return v->sign ? -r : r;
}

/*
 * logaddexp (b2 = 0): log(e^x + e^y); logaddexp2 (b2 = 1): log2(2^x + 2^y).
 * With M = max, N = min, d = M - N >= 0: result = M + L(d), L(d) =
 * log1p(e^-d) (or log2(1 + 2^-d)) in (0, 1].  For x != y the result is never
 * dyadic (Lindemann-Weierstrass: e^x + e^y = e^r has no algebraic solution;
 * logaddexp2: 1 + 2^delta is no rational power of 2 for rational delta != 0);
 * logaddexp(x, x) = x + ln2 is irrational, logaddexp2(x, x) = x + 1 exact.
 * Error of L from an error D of d: |dL/dd| = u / (1 + u) (base e) or
 * u / (1 + u) / ... <= L (u = e^-d or 2^-d: log1p(u) >= u / (1 + u)), so
 * |error of L| <= L |D| (base 2: <= L |D| too).
 */
uint32_t lae_vals(const sfp8_format *f, const sfp8x_val *xp, const sfp8x_val *yp, const sfp8_env *env, int b2,
                  uint8_t *flags)
{
    sfp8x_val x = *xp, y = *yp;
    const sfp8x_val *M, *N;
    uint32_t r;
    int c;
    int64_t tM, tN, scale;
    if (sfp8x_nan_operand(f, &x, &y, &r, flags)) return r;
    if ((x.kind == SFP8X_INF && !x.sign) || (y.kind == SFP8X_INF && !y.sign)) return sfp8e_inf(f, env, 0, flags);
    if (x.kind == SFP8X_INF && y.kind == SFP8X_INF) return sfp8e_inf(f, env, 1, flags); /* both -inf */
    /* logaddexp(-inf, y) = y exactly (log(1) = +0 for y = +-0) */
    if (x.kind == SFP8X_INF) return y.kind == SFP8X_ZERO ? sfp8e_zero(f, 0, flags) : exact_val(f, env, &y, flags);
    if (y.kind == SFP8X_INF) return x.kind == SFP8X_ZERO ? sfp8e_zero(f, 0, flags) : exact_val(f, env, &x, flags);
    c = val_cmp(&x, &y);
    if (c == 0 && b2) return plus_one(f, env, &x, flags);
    M = c >= 0 ? &x : &y;
    N = c >= 0 ? &y : &x;
    tM = M->kind == SFP8X_ZERO ? INT64_MIN : top_of(M);
    tN = N->kind == SFP8X_ZERO ? INT64_MIN : top_of(N);
    if (b2 && tM < -60 && tN < -60) {
        /* log2(2^x + 2^y) = 1 + (x + y)/2 + (ln2/8)(x - y)^2 + ...: within 2^-59 of 1, on the
         * side of x + y (above 1 when x = -y: the quadratic term is positive) */
        int below; /* x + y < 0 (M > N here, not both zero) */
        if (M->kind == SFP8X_ZERO || N->kind == SFP8X_ZERO) below = M->kind == SFP8X_ZERO;
        else if (M->sign == N->sign) below = M->sign;
        else { /* M > 0 > N */
            sfp8x_val nn = *N;
            nn.sign = 0;
            below = val_cmp(&nn, M) > 0;
        }
        return sfp8e_perturbed(f, env, 0, 1, 0, below ? -1 : 1, flags);
    }
    /* binary64: |M|, |N| < 2^64 and not below 2^-1000 (or zero); d <= 700 (base 2: 1000):
     * u >= 2^-1010 normal.
     * d's rounding: D <= d 2^-53; u's and log1p's errors: REL each (relative, carried
     * through log1p with factor <= 1); base 2: log2(e)'s and the product's roundings
     * 2^-52; the sum: |res| 2^-53. */
    if (tM < 64 && tN < 64 && (tM > -1000 || M->kind == SFP8X_ZERO) && (tN > -1000 || N->kind == SFP8X_ZERO)) {
        double md = M->kind == SFP8X_ZERO ? 0.0 : sfp8e_to_d(M, &scale), nd = N->kind == SFP8X_ZERO ? 0.0 : sfp8e_to_d(N, &scale);
        double d, L, Lerr, res;
        if (M->sign) md = -md;
        if (N->sign) nd = -nd;
        d = md - nd;
        if (d > (b2 ? 1000.0 : 700.0)) { /* L < 2^-998 (u near binary64's subnormals): an error term */
            L = 0.0;
            Lerr = 0x1p-998;
        } else {
            L = b2 ? log1p(exp2(-d)) * LOG2E_D : log1p(exp(-d));
            Lerr = L * (d * 0x1p-52 + 2 * SFP8E_REL_D + 0x1p-51);
        }
        res = md + L;
        if (try_d(f, env, res, Lerr + fabs(res) * 0x1p-53, 0, &r, flags)) return r;
    }
    /* |M| >= 2^64: L <= 1 < |M| 2^-64 */
    if (M->kind != SFP8X_ZERO && tM >= 64)
        return sfp8e_perturbed(f, env, M->sign, M->sig, M->exp, M->sign ? -1 : 1, flags);
    /* N <= -2^64 < M - 2^63: L < 2^-(2^63) */
    if (N->kind != SFP8X_ZERO && tN >= 64) {
        if (M->kind == SFP8X_ZERO) return far(f, env, 0, 0, flags);
        return sfp8e_perturbed(f, env, M->sign, M->sig, M->exp, M->sign ? -1 : 1, flags);
    }
    {
        sfp8q ed = 0, dq, u, L, relL;
        int64_t k;
        dq = small_q(M, &ed) - small_q(N, &ed);
        ed += dq * QC(0x1p-112); /* D <= ed */
        if (dq <= (b2 ? QC(16000.0) : QC(11000.0))) { /* u >= 2^-15900: normal */
            u = b2 ? QF(exp2)(-dq) : QF(exp)(-dq);
            L = b2 ? QF(log1p)(u) * LOG2EQ : QF(log1p)(u);
            relL = ed + 2 * SFP8E_REL_Q + QC(0x1p-110);
            return round_sum(f, env, M, L, L * relL, 0, flags);
        }
        /* d > 11000: L = u (1 - theta) (base 2: u log2(e) (1 - theta)), theta < u < 2^-15000 */
        if (dq >= QC(0x1p23)) { /* L < 2^-(2^23) */
            if (M->kind == SFP8X_ZERO) return far(f, env, 0, 0, flags);
            return sfp8e_perturbed(f, env, M->sign, M->sig, M->exp, M->sign ? -1 : 1, flags);
        }
        if (b2) {
            sfp8q kq = QF(nearbyint)(-dq);
            L = QF(exp2)(-dq - kq) * LOG2EQ; /* -dq - kq exact */
            relL = SFP8E_REL_Q + ed + QC(0x1p-110);
            k = (int64_t)kq;
        } else {
            sfp8q err;
            exp_q(-dq, &L, &err, &k);
            relL = err / L + ed + QC(0x1p-110);
        }
        return round_sum(f, env, M, L, L * (relL + QC(0x1p-200)), k, flags);
    }
}

static uint32_t lae(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, int b2, uint8_t *flags)
{
    sfp8x_val x, y;
    sfp8x_unpack(f, a, &x, flags);
    sfp8x_unpack(f, b, &y, flags);
    return lae_vals(f, &x, &y, env, b2, flags);
}

uint32_t sfp8_logaddexp(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    return lae(f, a, b, env, 0, flags);
}
uint32_t sfp8_logaddexp2(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    return lae(f, a, b, env, 1, flags);
}

/* ------------------------------------------------------------------------ */
/* power                                                                     */
/* ------------------------------------------------------------------------ */

/* t^n in 128 bits, t >= 3 odd, n >= 1; 0 if it does not fit */
static int pow128(uint64_t t, int64_t n, u128 *out)
{
    u128 p = 1;
    for (int64_t i = 0; i < n; i++) {
        if (p > (~(u128)0) / t) return 0;
        p *= t;
    }
    *out = p;
    return 1;
}

/*
 * (-1)^sign t^n 2^(A n) rounded exactly, t odd >= 1, |n| < 2^41, |A| <= 2^22:
 * returns 1 with *out, or 0 when t^|n| is too long (then the value has more
 * than 64 significant bits, n > 0, or is not dyadic, n < 0: Ziv decides).
 */
int pow_exact(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t t, int64_t n, int64_t A,
                     uint32_t *out, uint8_t *flags)
{
    int64_t E = A * n;
    u128 P;
    if (E > FAR) E = FAR;
    if (E < -FAR) E = -FAR;
    if (t == 1) {
        *out = sfp8e_exact(f, env, sign, 1, E, flags);
        return 1;
    }
    if (n > 0) {
        int m, sh;
        if (!pow128(t, n, &P)) return 0;
        m = msb128(P);
        if (m < 64) {
            *out = sfp8e_exact(f, env, sign, (uint64_t)P, E, flags);
            return 1;
        }
        sh = m - 63; /* P = (P >> sh) + dropped bits (odd: not all zero) */
        *out = sfp8e_rnd(f, env, sign, (uint64_t)(P >> sh), E + sh, (P & (((u128)1 << sh) - 1)) != 0, flags);
        return 1;
    } else {
        /* 1 / D, D = t^-n odd > 1: Q = floor(2^(63 + bits) / D) in [2^63, 2^64), never exact */
        int nb;
        u128 Q;
        if (!pow128(t, -n, &P) || (P >> 64) != 0) return 0;
        nb = msb128(P) + 1;
        Q = ((u128)1 << (63 + nb)) / P;
        *out = sfp8e_rnd(f, env, sign, (uint64_t)Q, E - 63 - nb, 1, flags);
        return 1;
    }
}

/* the 2^k-th root of an odd s < 2^17 if it is exact, else 0 */
static uint64_t root2k(uint64_t s, int k)
{
    uint64_t t = (uint64_t)llround(pow((double)s, ldexp(1.0, -k)));
    uint64_t p = t;
    if (t == 0) return 0;
    for (int i = 0; i < k; i++) {
        if (p > (uint64_t)1 << 20) return 0;
        p *= p;
    }
    return p == s ? t : 0;
}

uint32_t sfp8_power(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x, y;
    uint32_t r;
    uint64_t s, Y = 1;
    int64_t ax, ey = 0, tx, ty, scale;
    int yint, yodd, sign = 0, xgt1, Lpos;
    sfp8x_unpack(f, a, &x, flags);
    sfp8x_unpack(f, b, &y, flags);
    /* pow(x, +-0) = 1 for any x, pow(+1, y) = 1 for any y, quiet NaNs included */
    if (y.kind == SFP8X_ZERO || (x.kind == SFP8X_FINITE && !x.sign && x.sig == (uint64_t)1 << msb64(x.sig) &&
                                 top_of(&x) == 0)) {
        if (sfp8x_nan_operand(f, &x, &y, &r, flags) && ((x.kind == SFP8X_NAN && x.snan) || (y.kind == SFP8X_NAN && y.snan)))
            return r;
        return sfp8e_exact(f, env, 0, 1, 0, flags);
    }
    if (sfp8x_nan_operand(f, &x, &y, &r, flags)) return r;
    yint = yodd = 0;
    if (y.kind == SFP8X_FINITE) {
        odd_parts(&y, &Y, &ey); /* y = Y 2^ey */
        yint = ey >= 0;
        yodd = ey == 0;
    }
    if (y.kind == SFP8X_INF) {
        int gt1; /* |x| > 1 */
        if (x.kind == SFP8X_ZERO) return y.sign ? sfp8e_inf(f, env, 0, flags) : sfp8e_zero(f, 0, flags);
        if (x.kind == SFP8X_INF) gt1 = 1;
        else if (top_of(&x) == 0 && x.sig == (uint64_t)1 << msb64(x.sig)) return sfp8e_exact(f, env, 0, 1, 0, flags); /* x = -1 */
        else gt1 = top_of(&x) >= 0;
        return gt1 != y.sign ? sfp8e_inf(f, env, 0, flags) : sfp8e_zero(f, 0, flags);
    }
    if (x.kind == SFP8X_ZERO) {
        if (y.sign) { /* pole */
            *flags |= SFP8_FLAG_DIVBYZERO;
            return sfp8e_inf(f, env, yodd ? x.sign : 0, flags);
        }
        return sfp8e_zero(f, yodd ? x.sign : 0, flags);
    }
    if (x.kind == SFP8X_INF) return y.sign ? sfp8e_zero(f, x.sign && yodd, flags) : sfp8e_inf(f, env, x.sign && yodd, flags);
    /* x, y finite non-zero */
    if (x.sign) {
        if (!yint) return sfp8e_invalid(f, flags); /* negative base, non-integer exponent */
        sign = yodd;
    }
    odd_parts(&x, &s, &ax); /* |x| = s 2^ax */
    if (s == 1 && ax == 0) return sfp8e_exact(f, env, sign, 1, 0, flags); /* x = -1 */
    tx = top_of(&x);
    ty = top_of(&y);
    xgt1 = tx >= 0;
    Lpos = xgt1 != y.sign; /* log2(|x|^y) > 0 */
    /* |log2|x|| in [2^-17, 2^21.1]: |y| >= 2^42 gives |x|^y beyond 2^(+-2^24) */
    if (ty >= 42) return far(f, env, sign, Lpos, flags);
    /* exact (dyadic) cases */
    if (yint) {
        int64_t n = (int64_t)(Y << ey);
        if (pow_exact(f, env, sign, s, y.sign ? -n : n, ax, &r, flags)) return r;
    } else if (-ey <= 22) {
        /* y = Y / 2^k: dyadic iff |x| = t^(2^k) 2^(2^k c); then t^Y 2^(c Y) */
        int k = (int)-ey;
        uint64_t t = root2k(s, k);
        if (t && (ax & (((int64_t)1 << k) - 1)) == 0) {
            int64_t c = ax >= 0 ? ax >> k : -((-ax) >> k);
            if (pow_exact(f, env, sign, t, y.sign ? -(int64_t)Y : (int64_t)Y, c, &r, flags)) return r;
        }
    }
    /* non-dyadic (or more than 64 significant bits): |L| = |y log2|x|| < 2^-60 gives 1 +- */
    if (ty < -82) return sfp8e_perturbed(f, env, sign, 1, 0, Lpos ? 1 : -1, flags);
    if (tx > -1000 && tx < 1000 && ty > -1000) {
        double xd = sfp8e_to_d(&x, &scale), yd = sfp8e_to_d(&y, &scale), rd;
        rd = pow(xd, y.sign ? -yd : yd);
        if (try_d(f, env, sign ? -rd : rd, rd * SFP8E_REL_D, 0, &r, flags)) return r;
        if (!(rd > 0x1p-960 && rd < 0x1p960)) {
            /* beyond binary64's range: |x|^y = 2^L, L = y log2|x| computed with relative
             * error < 2^-47, absolute < 2^-7 for |L| < 2^40: 2^L lies in
             * (0.35, 2.15) 2^k, k = floor(L); decides the overflow / underflow of every
             * format whose range stops short of it (else binary128 below) */
            double Ld = (y.sign ? -yd : yd) * log2(xd);
            if (fabs(Ld) < 0x1p40 && sfp8e_round_d(f, env, sign, 1.25, 0.9, (int64_t)floor(Ld), &r, flags))
                return r;
        }
    }
    {
        /* L = y log2|x|: relative error <= REL_Q + 2^-110 (log2), + 2^-112 (product) */
        sfp8q yq = QF(ldexp)((sfp8q)y.sig, (int)y.exp), L = yq * sfp8e_log2_q(&x);
        return sfp8e_exp2_ziv(f, env, sign, y.sign ? -L : L, SFP8E_REL_Q + QC(0x1p-109), flags);
    }
}

/* ------------------------------------------------------------------------ */
/* shared with elem_ieee.c: log2|x| and 2^L                                  */
/* ------------------------------------------------------------------------ */

sfp8q sfp8e_log2_q(const sfp8x_val *x)
{
    int64_t tx = top_of(x);
    if (tx == 0 || tx == -1) return QF(log1p)(QF(ldexp)((sfp8q)x->sig, (int)x->exp) - 1) * LOG2EQ;
    return (sfp8q)tx + QF(log2)(QF(ldexp)((sfp8q)x->sig, -msb64(x->sig)));
}

uint32_t sfp8e_exp2_ziv(const sfp8_format *f, const sfp8_env *env, int sign, sfp8q L, sfp8q rel, uint8_t *flags)
{
    sfp8q kq, z;
    if (QF(fabs)(L) > QC(0x1p24)) return far(f, env, sign, L > 0, flags);
    /* |L| < 2^-60 (its sign certain: rel < 1): 2^L within 2^-60 of 1, on L's side */
    if (QF(fabs)(L) < QC(0x1p-60)) return sfp8e_perturbed(f, env, sign, 1, 0, L > 0 ? 1 : -1, flags);
    kq = QF(nearbyint)(L);
    z = QF(exp2)(L - kq); /* L - kq exact */
    /* 2^L: an error d of L is a relative error ln2 d < |L| rel of 2^L */
    return ziv_q(f, env, sign ? -z : z, z * (SFP8E_REL_Q + QF(fabs)(L) * rel + QC(0x1p-112)), (int64_t)kq, flags);
}
