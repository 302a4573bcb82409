/*
 * Correctly rounded functions of IEEE 754-2019 9.2 beyond C99 / NumPy --
 * exp2m1, exp10, exp10m1, log2p1, log10p1, rSqrt, compound, rootn, pown,
 * powr -- and P3109's Softplus (4.10.13), on the machinery of elem.h (read
 * elem.c first: sfp8_exp is the pattern every function follows).  Special
 * values: IEEE 754-2019 9.2.1 (docs/semantics.md lists them).
 *
 * Exact (dyadic) results are detected from the operands and rounded exactly;
 * every other result is irrational or a rational with an odd denominator, never a
 * rounding boundary, and Ziv's strategy decides it (elem.h).
 */
#include "elem.h"

static const sfp8q LN2Q = QC(0.693147180559945309417232121458176568);
static const sfp8q LN10Q = QC(2.30258509299404568401799145468436421);
static const sfp8q LOG2_10Q = QC(3.32192809488736234787031942948939018);
static const sfp8q LOG2EQ = QC(1.44269504088896340735992468100189214);
static const sfp8q LOG10EQ = QC(0.434294481903251827651128918916605082);
#define LN2_D 0.69314718055994530942
#define LN10_D 2.30258509299404568402
#define LOG2_10_D 3.32192809488736234787
#define LOG2E_D 1.4426950408889634074
#define LOG10E_D 0.43429448190325182765

static inline int msb64(uint64_t x) { return 63 - __builtin_clzll(x); }
static inline int64_t top_of(const sfp8x_val *v) { return v->exp + msb64(v->sig); }
/* the signed value of x in binary128 times 2^*scale (sfp8e_to_q) */
static sfp8q sval_q(const sfp8x_val *x, int64_t *scale)
{
    sfp8q q = sfp8e_to_q(x, scale);
    return x->sign ? -q : q;
}
static int is_pow2(const sfp8x_val *x) { return (x->sig & (x->sig - 1)) == 0; }

/* ------------------------------------------------------------------------ */
/* exp2m1, exp10, exp10m1                                                    */
/* ------------------------------------------------------------------------ */

/* b^x - m (m = 0 or 1, b = 2 or 10) for finite non-zero x beyond the special
 * and exact cases: t = x ln b; expm1 near 0, 2^(x log2 b) with the - m as an
 * error term beyond 64 (b^x >= 2^64) */
static uint32_t powb_minus(const sfp8_format *f, const sfp8_env *env, const sfp8x_val *x, int ten, int m,
                           uint8_t *flags)
{
    const sfp8q lnb = ten ? LN10Q : LN2Q, l2b = ten ? LOG2_10Q : QC(1.0);
    int64_t scale, top = top_of(x);
    uint32_t r;
    sfp8q xq = sval_q(x, &scale);
    /* x <= -64 (base 2), x <= -19.5 (base 10): -(1 - b^x), b^x < 2^-64 */
    if (m && x->sign && (top >= 6 || (ten && top >= 4 && ldexp((double)x->sig, (int)x->exp) >= 19.5)))
        return sfp8e_perturbed(f, env, 1, 1, 0, -1, flags);
    if (top >= 23) return far(f, env, 0, !x->sign, flags); /* b^x beyond 2^(+-2^23) */
    if (m && top < -60) {
        /* b^x - 1 = t (1 + t/2 + ...), t = x ln b: relative correction below 2^-59 */
        sfp8q t = xq * lnb;
        return ziv_q(f, env, t, QF(fabs)(t) * QC(0x1p-58), scale, flags);
    }
    if (m && (!x->sign ? top < 6 : 1)) { /* |x| < 64: expm1(x ln b) */
        double td = ldexp((double)x->sig, (int)x->exp) * (ten ? LN10_D : LN2_D), yd;
        sfp8q t = xq * lnb, y;
        if (x->sign) td = -td;
        yd = expm1(td);
        /* t's relative error 2^-52 grows by at most 1 + |t| through expm1 */
        if (try_d(f, env, yd, fabs(yd) * (SFP8E_REL_D + (fabs(td) + 1) * 0x1p-51), 0, &r, flags)) return r;
        y = QF(expm1)(t);
        return ziv_q(f, env, y, QF(fabs)(y) * (SFP8E_REL_Q + (QF(fabs)(t) + 1) * QC(0x1p-110)), 0, flags);
    }
    {
        /* b^x = 2^L, L = x log2 b (relative error 2^-112); the -1 is below 2^-60 relative */
        sfp8q L = xq * l2b;
        if (m) { /* x >= 64: the -1 below 2^-64 relative: an error term */
            sfp8q kq = QF(nearbyint)(L), z = QF(exp2)(L - kq);
            return ziv_q(f, env, z, z * (SFP8E_REL_Q + QF(fabs)(L) * QC(0x1p-110) + QC(0x1p-62)), (int64_t)kq,
                         flags);
        }
        if (top < 9) {
            double Ld = ldexp((double)x->sig, (int)x->exp) * (ten ? LOG2_10_D : 1.0), kd, z;
            if (x->sign) Ld = -Ld;
            kd = nearbyint(Ld);
            z = exp2(Ld - kd);
            if (try_d(f, env, z, z * (SFP8E_REL_D + fabs(Ld) * 0x1p-51), (int64_t)kd, &r, flags)) return r;
        }
        return sfp8e_exp2_ziv(f, env, 0, L, QC(0x1p-111), flags);
    }
}

/* the common part of exp2m1, exp10, exp10m1 */
static uint32_t powb(const sfp8_format *f, uint32_t a, const sfp8_env *env, int ten, int m, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    uint64_t odd;
    int64_t e;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_INF) { /* +inf; -inf: 0 - m */
        if (!x.sign) return sfp8e_inf(f, env, 0, flags);
        return m ? sfp8e_exact(f, env, 1, 1, 0, flags) : sfp8e_zero(f, 0, flags);
    }
    if (x.kind == SFP8X_ZERO) return m ? sfp8e_zero(f, x.sign, flags) : sfp8e_exact(f, env, 0, 1, 0, flags);
    odd_parts(&x, &odd, &e);
    if (e >= 0 && top_of(&x) < 23) { /* an integer n: b^n - m is dyadic for n >= 0 (and b = 2) */
        int64_t n = (int64_t)(odd << e) * (x.sign ? -1 : 1);
        if (!ten) { /* 2^n - m */
            if (!m) return sfp8e_exact(f, env, 0, 1, n, flags);
            if (n >= 64) return sfp8e_perturbed(f, env, 0, 1, n, -1, flags); /* just below 2^n */
            if (n <= -64) return sfp8e_perturbed(f, env, 1, 1, 0, -1, flags); /* just above -1 */
            if (n > 0) return sfp8e_exact(f, env, 0, ((uint64_t)1 << n) - 1, 0, flags);
            return sfp8e_exact(f, env, 1, ((uint64_t)1 << -n) - 1, n, flags); /* -(1 - 2^n) */
        }
        if (n > 0 && n <= 19) { /* 10^n < 2^64 */
            uint64_t p = 1;
            for (int i = 0; i < n; i++) p *= 10;
            return sfp8e_exact(f, env, 0, p - (uint64_t)m, 0, flags);
        }
        /* 10^n (n >= 20) has an odd part 5^n of more than 46 bits, 10^n - 1 more than 64:
           neither is a rounding boundary; 10^-n is not dyadic */
    }
    return powb_minus(f, env, &x, ten, m, flags);
}

uint32_t sfp8_exp2m1(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return powb(f, a, env, 0, 1, flags);
}
uint32_t sfp8_exp10(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return powb(f, a, env, 1, 0, flags);
}
uint32_t sfp8_exp10m1(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return powb(f, a, env, 1, 1, flags);
}

/* ------------------------------------------------------------------------ */
/* log2p1, log10p1                                                           */
/* ------------------------------------------------------------------------ */

static uint32_t logbp1(const sfp8_format *f, uint32_t a, const sfp8_env *env, int b, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    uint64_t odd;
    int64_t e, top, scale;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_ZERO) return sfp8e_zero(f, x.sign, flags);
    if (x.kind == SFP8X_INF) return x.sign ? sfp8e_invalid(f, flags) : sfp8e_inf(f, env, 0, flags);
    top = top_of(&x);
    if (x.sign && top >= 0) {
        if (top == 0 && is_pow2(&x)) { /* x = -1: pole */
            *flags |= SFP8_FLAG_DIVBYZERO;
            return sfp8e_inf(f, env, 1, flags);
        }
        return sfp8e_invalid(f, flags); /* x < -1 */
    }
    odd_parts(&x, &odd, &e);
    /* exact: 1 + x = 2^k (b = 2: x = 2^k - 1, or x = -1 + 2^-m) or 1 + x = 10^k */
    if (b == B_2 && !x.sign && e == 0 && odd < ((uint64_t)1 << 62) && ((odd + 1) & odd) == 0)
        return sfp8e_exact(f, env, 0, (uint64_t)msb64(odd + 1), 0, flags);
    if (b == B_2 && x.sign && e < 0 && e > -63 && odd == ((uint64_t)1 << -e) - 1)
        return sfp8e_exact(f, env, 1, (uint64_t)-e, 0, flags);
    if (b == B_10 && !x.sign && e == 0) {
        uint64_t p = 10;
        for (int k = 1; k <= 19; k++, p *= 10)
            if (odd == p - 1) return sfp8e_exact(f, env, 0, (uint64_t)k, 0, flags);
    }
    /* otherwise irrational */
    if (top < -60) { /* log_b(1 + x) = x log_b(e) (1 - x/2 + ...) */
        sfp8q y = sval_q(&x, &scale) * (b == B_2 ? LOG2EQ : LOG10EQ);
        return ziv_q(f, env, y, QF(fabs)(y) * QC(0x1p-58), scale, flags);
    }
    if (top >= 100) return log_ziv(f, env, b, &x, 0x1p-100, flags); /* log_b(x) + log_b(1 + 1/x) */
    {
        double xd = sfp8e_to_d(&x, &scale), yd = log1p(x.sign ? -xd : xd) * (b == B_2 ? LOG2E_D : LOG10E_D);
        sfp8q yq;
        if (try_d(f, env, yd, fabs(yd) * (SFP8E_REL_D + 0x1p-51), 0, &r, flags)) return r;
        yq = QF(log1p)(sval_q(&x, &scale)) * (b == B_2 ? LOG2EQ : LOG10EQ);
        return ziv_q(f, env, yq, QF(fabs)(yq) * (SFP8E_REL_Q + QC(0x1p-111)), 0, flags);
    }
}

uint32_t sfp8_log2p1(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return logbp1(f, a, env, B_2, flags);
}
uint32_t sfp8_log10p1(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    return logbp1(f, a, env, B_10, flags);
}

/* P3109 Softplus = log(1 + e^x) = logaddexp(x, 0) */
uint32_t sfp8_softplus(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x, zero = {SFP8X_ZERO, 0, 0, 0, 0, 0};
    sfp8e_unpack(f, a, &x, flags);
    return lae_vals(f, &x, &zero, env, 0, flags);
}

/* ------------------------------------------------------------------------ */
/* rSqrt                                                                     */
/* ------------------------------------------------------------------------ */

uint32_t sfp8_rsqrt(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    uint64_t odd;
    int64_t e, q;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (x.kind == SFP8X_ZERO) { /* pole: +-inf */
        *flags |= SFP8_FLAG_DIVBYZERO;
        return sfp8e_inf(f, env, x.sign, flags);
    }
    if (x.sign) return sfp8e_invalid(f, flags);
    if (x.kind == SFP8X_INF) return sfp8e_zero(f, 0, flags);
    odd_parts(&x, &odd, &e);
    if (odd == 1 && !(e & 1)) return sfp8e_exact(f, env, 0, 1, -e / 2, flags); /* 4^k: 2^-k */
    /* x = m 4^q, m in [1, 4): 1/sqrt(m) 2^-q (irrational, or 1/odd) */
    q = top_of(&x) >= 0 ? top_of(&x) / 2 : -((-top_of(&x) + 1) / 2);
    {
        double m = ldexp((double)x.sig, (int)(x.exp - 2 * q)), y = 1.0 / sqrt(m);
        sfp8q mq = QF(ldexp)((sfp8q)x.sig, (int)(x.exp - 2 * q)), yq;
        if (try_d(f, env, y, y * 0x1p-51, -q, &r, flags)) return r;
        yq = 1 / QF(sqrt)(mq);
        return ziv_q(f, env, yq, yq * QC(0x1p-110), -q, flags);
    }
}

/* ------------------------------------------------------------------------ */
/* pown, rootn, compound (an int64 operand), powr                            */
/* ------------------------------------------------------------------------ */

/* |x|^n rounded with sign, x finite non-zero: exact cases, else 2^(n log2|x|) */
static uint32_t pown_finite(const sfp8_format *f, const sfp8_env *env, int sign, const sfp8x_val *x, int64_t n,
                            uint8_t *flags)
{
    uint64_t s;
    int64_t A;
    uint32_t r;
    odd_parts(x, &s, &A);
    if (s == 1 && A == 0) return sfp8e_exact(f, env, sign, 1, 0, flags); /* +-1 */
    /* |log2|x|| > 2^-16 (x != 1 has at most 17 significant bits): |n| >= 2^41 gives
       |n log2|x|| > 2^25, beyond every range */
    if (n >= ((int64_t)1 << 41) || n <= -((int64_t)1 << 41))
        return far(f, env, sign, (top_of(x) >= 0) == (n > 0), flags);
    if (pow_exact(f, env, sign, s, n, A, &r, flags)) return r;
    return sfp8e_exp2_ziv(f, env, sign, (sfp8q)n * sfp8e_log2_q(x), SFP8E_REL_Q + QC(0x1p-109), flags);
}

uint32_t sfp8_pown(const sfp8_format *f, uint32_t a, int64_t n, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int odd = (int)(n & 1), sign;
    sfp8x_unpack(f, a, &x, flags);
    if (n == 0) { /* pown(x, 0) = 1 for every x, a quiet NaN included */
        if (x.kind == SFP8X_NAN && x.snan) return sfp8x_nan3(f, &x, NULL, NULL, &r, flags), r;
        return sfp8e_exact(f, env, 0, 1, 0, flags);
    }
    if (sfp8x_nan3(f, &x, NULL, NULL, &r, flags)) return r;
    sign = x.sign && odd;
    if (x.kind == SFP8X_ZERO) {
        if (n > 0) return sfp8e_zero(f, sign, flags);
        *flags |= SFP8_FLAG_DIVBYZERO; /* pole */
        return sfp8e_inf(f, env, sign, flags);
    }
    if (x.kind == SFP8X_INF) return n > 0 ? sfp8e_inf(f, env, sign, flags) : sfp8e_zero(f, sign, flags);
    return pown_finite(f, env, sign, &x, n, flags);
}

/* the integer n-th root of s (n >= 2, s < 2^17 odd) if s is an n-th power, else 0 */
static uint64_t iroot(uint64_t s, int64_t n)
{
    uint64_t t, p = 1;
    if (s == 1) return 1;
    if (n > 17) return 0;
    t = (uint64_t)llround(pow((double)s, 1.0 / (double)n));
    for (int64_t i = 0; i < n; i++) p *= t;
    return p == s ? t : 0;
}

static int64_t floor_div(int64_t a, int64_t n) { return a >= 0 ? a / n : -((-a + n - 1) / n); }

uint32_t sfp8_rootn(const sfp8_format *f, uint32_t a, int64_t n, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    uint64_t s, t;
    int64_t A, an;
    int odd = (int)(n & 1), sign;
    if (sfp8e_unpack1(f, a, &x, &r, flags)) return r;
    if (n == 0) return sfp8e_invalid(f, flags);
    if (x.sign && !odd && x.kind != SFP8X_ZERO) return sfp8e_invalid(f, flags); /* even root of x < 0 */
    sign = x.sign && odd;
    if (x.kind == SFP8X_ZERO) {
        if (n > 0) return sfp8e_zero(f, sign, flags);
        *flags |= SFP8_FLAG_DIVBYZERO;
        return sfp8e_inf(f, env, sign, flags);
    }
    if (x.kind == SFP8X_INF) return n > 0 ? sfp8e_inf(f, env, sign, flags) : sfp8e_zero(f, sign, flags);
    odd_parts(&x, &s, &A);
    an = n > 0 ? n : (n == INT64_MIN ? INT64_MAX : -n);
    /* exact: s = t^|n| and |n| divides A; dyadic only for n > 0 or t = 1 */
    if (A == floor_div(A, an) * an && (t = iroot(s, an)) != 0 && (n > 0 || t == 1))
        return sfp8e_exact(f, env, sign, t, n > 0 ? A / an : -(A / an), flags);
    /* 2^(log2|x| / n) */
    return sfp8e_exp2_ziv(f, env, sign, sfp8e_log2_q(&x) / (sfp8q)n, SFP8E_REL_Q + QC(0x1p-109), flags);
}

/* 1 + x exactly as u 2^E (u > 0), when |x| lies within 2^+-60 of 1's binade */
static int one_plus(const sfp8x_val *x, unsigned __int128 *u, int64_t *E)
{
    int64_t top = top_of(x);
    if (top > 60 || top < -60) return 0;
    if (x->exp >= 0) {
        *u = ((unsigned __int128)x->sig << x->exp) + 1; /* x > 0 here (x >= -1 excluded before) */
        *E = 0;
        return !x->sign;
    }
    {
        unsigned __int128 one = (unsigned __int128)1 << -x->exp; /* -exp <= 60 + 16 */
        *u = x->sign ? one - x->sig : one + x->sig;
        *E = x->exp;
        return 1;
    }
}

uint32_t sfp8_compound(const sfp8_format *f, uint32_t a, int64_t n, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t r;
    int64_t top, scale, E;
    unsigned __int128 u;
    sfp8x_unpack(f, a, &x, flags);
    /* compound(x, 0) = 1 for x >= -1, +inf or a quiet NaN */
    if (x.kind == SFP8X_NAN) return sfp8x_nan3(f, &x, NULL, NULL, &r, flags) && (n != 0 || x.snan) ? r
                                   : sfp8e_exact(f, env, 0, 1, 0, flags);
    if (x.kind == SFP8X_INF) {
        if (x.sign) return sfp8e_invalid(f, flags);
        return n > 0 ? sfp8e_inf(f, env, 0, flags) : n < 0 ? sfp8e_zero(f, 0, flags) : sfp8e_exact(f, env, 0, 1, 0, flags);
    }
    if (x.kind == SFP8X_ZERO) return sfp8e_exact(f, env, 0, 1, 0, flags);
    top = top_of(&x);
    if (x.sign && top >= 0) {
        if (top > 0 || !is_pow2(&x)) return sfp8e_invalid(f, flags); /* x < -1 */
        if (n == 0) return sfp8e_exact(f, env, 0, 1, 0, flags);      /* x = -1 */
        if (n > 0) return sfp8e_zero(f, 0, flags);
        *flags |= SFP8_FLAG_DIVBYZERO;
        return sfp8e_inf(f, env, 0, flags);
    }
    if (n == 0) return sfp8e_exact(f, env, 0, 1, 0, flags);
    if (one_plus(&x, &u, &E)) { /* (1 + x)^n = t^n 2^(A n), t odd */
        int tz = 0;
        while (!(u & 1)) {
            u >>= 1;
            tz++;
        }
        if ((u >> 64) == 0 && n > -((int64_t)1 << 41) && n < ((int64_t)1 << 41) &&
            pow_exact(f, env, 0, (uint64_t)u, n, E + tz, &r, flags))
            return r;
    }
    if (top >= 64 && n < ((int64_t)1 << 40) && n > -((int64_t)1 << 40) && top - 41 > 60) {
        /* x = s 2^A huge: (1 + x)^n = s^n 2^(A n) (1 + 1/x)^n, the last factor within |n| / x <
           2^-60 of 1: just beside s^n 2^(A n) where that is dyadic with 64 bits (s = 1, or n > 0
           and s^n < 2^64); otherwise s^n 2^(A n) is no rounding boundary and Ziv decides */
        uint64_t s, p = 1;
        int64_t A;
        odd_parts(&x, &s, &A);
        if (s == 1) return sfp8e_perturbed(f, env, 0, 1, A * n, n > 0 ? 1 : -1, flags);
        for (int64_t i = 0; n > 0 && i < n && p; i++) p = p <= UINT64_MAX / s ? p * s : 0;
        if (n > 0 && p) return sfp8e_perturbed(f, env, 0, p, A * n, 1, flags);
    }
    {
        /* L = n log2(1 + x): log1p's relative error REL_Q, log2(e)'s and the products' 2^-111 */
        sfp8q xq = sval_q(&x, &scale), lg;
        if (scale < 0) lg = xq * LOG2EQ;         /* |x| < 2^-16000: log2(1 + x) = x log2(e) (1 - x/2) */
        else if (scale > 0) lg = (sfp8q)(top + 1); /* |x| >= 2^16000: beyond every range anyway */
        else lg = QF(log1p)(xq) * LOG2EQ;
        if (scale < 0) return sfp8e_perturbed(f, env, 0, 1, 0, (lg > 0) == (n > 0) ? 1 : -1, flags);
        if (scale > 0) return far(f, env, 0, n > 0, flags);
        return sfp8e_exp2_ziv(f, env, 0, (sfp8q)n * lg, SFP8E_REL_Q + QC(0x1p-109), flags);
    }
}

/* powr(x, y) = e^(y log x) (9.2): pow restricted to x >= 0, with its own special cases */
uint32_t sfp8_powr(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x, y;
    uint32_t r;
    int one;
    sfp8x_unpack(f, a, &x, flags);
    sfp8x_unpack(f, b, &y, flags);
    if (sfp8x_nan3(f, &x, &y, NULL, &r, flags)) return r;
    if (x.sign && x.kind != SFP8X_ZERO) return sfp8e_invalid(f, flags); /* x < 0, -inf included */
    one = x.kind == SFP8X_FINITE && is_pow2(&x) && top_of(&x) == 0;
    if (x.kind == SFP8X_ZERO) {
        if (y.kind == SFP8X_ZERO) return sfp8e_invalid(f, flags); /* powr(0, 0) */
        if (!y.sign) return sfp8e_zero(f, 0, flags);
        if (y.kind != SFP8X_INF) *flags |= SFP8_FLAG_DIVBYZERO; /* pole; powr(0, -inf) = +inf quietly */
        return sfp8e_inf(f, env, 0, flags);
    }
    if (x.kind == SFP8X_INF) {
        if (y.kind == SFP8X_ZERO) return sfp8e_invalid(f, flags); /* powr(inf, 0) */
        return y.sign ? sfp8e_zero(f, 0, flags) : sfp8e_inf(f, env, 0, flags);
    }
    if (one && y.kind == SFP8X_INF) return sfp8e_invalid(f, flags); /* powr(1, inf) */
    /* x > 0 finite: pow(x, y) (1 for y = 0 or x = 1) */
    return sfp8_power(f, a, b, env, flags);
}
