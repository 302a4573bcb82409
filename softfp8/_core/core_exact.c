/*
 * softfp8 exact core: the exact C99 / NumPy / IEEE 754 functions -- floor
 * division and NumPy's and IEEE's remainder, fmod, modf, frexp, ldexp, logB,
 * heaviside -- and the neighbour functions nextafter, spacing, nextUp /
 * nextDown and P3109's NextGreaterThan / NextLessThan.  Each computes its exact result with integers on the
 * decoded operands and rounds it once through the core's rounding routine
 * (sfp8x_round, core_x.h), which alone raises overflow / underflow / inexact.
 */
#include "core_x.h"

typedef unsigned __int128 u128;

/* ------------------------------------------------------------------------ */
/* NumPy-style floor division and remainder (exact, one rounding)           */
/* ------------------------------------------------------------------------ */

static uint64_t pow2mod(int64_t k, uint64_t m)
{
    uint64_t r = 1 % m, b = 2 % m;
    while (k > 0) {
        if (k & 1) r = (r * b) % m;
        b = (b * b) % m;
        k >>= 1;
    }
    return r;
}

/* |a| mod |b| for finite non-zero operands (sigs < 2^17): value m * 2^e */
static void fmod_exact(const sfp8x_val *x, const sfp8x_val *y, uint64_t *m, int64_t *e)
{
    if (x->exp >= y->exp) {
        uint64_t r = ((x->sig % y->sig) * pow2mod(x->exp - y->exp, y->sig)) % y->sig;
        *m = r;
        *e = y->exp;
    } else {
        int64_t d = y->exp - x->exp;
        if (d >= 40) {
            *m = x->sig;
        } else {
            *m = x->sig % (y->sig << d);
        }
        *e = x->exp;
    }
}

/* the operands of remainder and fmod, sfp8x_val; 1 with *res set for a NaN
 * operand and for the invalid cases (an infinite dividend, a zero divisor) */
static int remainder_special(const sfp8_format *f, uint32_t a, uint32_t b, sfp8x_val *x, sfp8x_val *y,
                             uint32_t *res, uint8_t *flags)
{
    sfp8x_unpack(f, a, x, flags);
    sfp8x_unpack(f, b, y, flags);
    if (sfp8x_nan3(f, x, y, NULL, res, flags)) return 1;
    if (x->kind == SFP8X_INF || y->kind == SFP8X_ZERO) {
        *res = sfp8x_invalid(f, flags);
        return 1;
    }
    return 0;
}

uint32_t sfp8_remainder(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env,
                        uint8_t *flags)
{
    sfp8x_val x, y;
    uint32_t res;
    uint64_t m;
    int64_t e;
    if (remainder_special(f, a, b, &x, &y, &res, flags)) return (uint32_t)res;
    if (x.kind == SFP8X_ZERO) return (uint32_t)sfp8x_zero(f, y.sign, flags);
    if (y.kind == SFP8X_INF) {
        if (x.sign == y.sign) return (uint32_t)sfp8x_round(f, env, x.sign, x.sig, x.exp, 0, flags);
        return (uint32_t)sfp8x_inf(f, env, y.sign, flags);
    }
    fmod_exact(&x, &y, &m, &e);
    if (m == 0) return (uint32_t)sfp8x_zero(f, y.sign, flags);
    if (x.sign == y.sign) return (uint32_t)sfp8x_round(f, env, x.sign, m, e, 0, flags);
    /* Python-style: fmod + b, one rounding */
    return (uint32_t)sfp8x_add_finite(f, env, x.sign, m, e, y.sign, y.sig, y.exp, flags);
}

uint32_t sfp8_floordiv(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env,
                       uint8_t *flags)
{
    sfp8x_val x, y;
    uint32_t res;
    uint64_t q, ip;
    u128 num;
    int s, nx, ny, sticky, frac;
    int64_t eq;
    sfp8x_unpack(f, a, &x, flags);
    sfp8x_unpack(f, b, &y, flags);
    if (sfp8x_nan3(f, &x, &y, NULL, &res, flags)) return (uint32_t)res;
    s = x.sign ^ y.sign;
    if (y.kind == SFP8X_ZERO) { /* as division: NumPy returns a/b */
        if (x.kind == SFP8X_ZERO) return (uint32_t)sfp8x_invalid(f, flags);
        if (x.kind != SFP8X_INF) *flags |= SFP8_FLAG_DIVBYZERO;
        return (uint32_t)sfp8x_inf(f, env, s, flags);
    }
    if (x.kind == SFP8X_INF) return (uint32_t)sfp8x_invalid(f, flags);
    if (x.kind == SFP8X_ZERO) return (uint32_t)sfp8x_zero(f, s, flags);
    if (y.kind == SFP8X_INF) {
        if (!s) return (uint32_t)sfp8x_zero(f, 0, flags);
        return (uint32_t)sfp8x_round(f, env, 1, 1, 0, 0, flags); /* -1 */
    }
    ny = 15 - sfp8x_msb64(y.sig);
    nx = 77 - sfp8x_msb64(x.sig);
    num = (u128)x.sig << nx;
    q = (uint64_t)(num / (y.sig << ny));
    sticky = (num % (y.sig << ny)) != 0;
    eq = x.exp - nx - (y.exp - ny);
    if (eq >= 0) /* |a/b| >= 2^61: floor stays in the same rounding cell */
        return (uint32_t)sfp8x_round(f, env, s, q, eq, sticky, flags);
    ip = (-eq >= 64) ? 0 : q >> (-eq);
    frac = sticky || ((-eq >= 64) ? q != 0 : (q & sfp8x_mask64((int)-eq)) != 0);
    if (s && frac) ip += 1;
    if (ip == 0) return (uint32_t)sfp8x_zero(f, s, flags);
    return (uint32_t)sfp8x_round(f, env, s, ip, 0, 0, flags);
}

/* IEEE 754-2019 5.3.1 remainder: a - b n, n the integer nearest a / b (ties to
 * even).  |a| = q |b| + m 2^e exactly (q's parity from a / b's integer part
 * modulo 2), then m or m - |b|: |result| <= |b| / 2, exact in every format with
 * IEEE subnormals (rounded once elsewhere). */
uint32_t sfp8_ieee_remainder(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x, y;
    uint32_t res;
    uint64_t m, Y = 0; /* |b| = Y 2^e (0: |b| > 2^40 |a|) */
    int64_t e;
    int odd = 0;
    if (remainder_special(f, a, b, &x, &y, &res, flags)) return res;
    if (x.kind == SFP8X_ZERO) return sfp8x_zero(f, x.sign, flags);
    if (y.kind == SFP8X_INF) return sfp8x_round(f, env, x.sign, x.sig, x.exp, 0, flags);
    if (x.exp >= y.exp) { /* |a| / |b| = sx 2^d / sy: (sx 2^d) mod 2 sy gives m and q's parity */
        uint64_t two = 2 * y.sig, r = ((x.sig % two) * pow2mod(x.exp - y.exp, two)) % two;
        odd = r >= y.sig;
        m = odd ? r - y.sig : r;
        Y = y.sig;
        e = y.exp;
    } else {
        int64_t d = y.exp - x.exp;
        e = x.exp;
        m = x.sig;
        if (d < 40) {
            Y = y.sig << d;
            odd = (int)((x.sig / Y) & 1);
            m = x.sig % Y;
        }
    }
    if (m == 0) return sfp8x_zero(f, x.sign, flags);
    if (Y && (2 * m > Y || (2 * m == Y && odd))) return sfp8x_round(f, env, !x.sign, Y - m, e, 0, flags);
    return sfp8x_round(f, env, x.sign, m, e, 0, flags);
}

/* ------------------------------------------------------------------------ */
/* C99 fmod, modf, frexp, ldexp and NumPy's heaviside (exact; one rounding   */
/* where the exact result falls outside the format's value set)              */
/* ------------------------------------------------------------------------ */

/* the finite non-zero value (sign, sig, exp) rounded once; zero sig: +-0 */
static uint64_t pack_exact(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                           uint8_t *flags)
{
    if (sig == 0) return sfp8x_zero(f, sign, flags);
    return sfp8x_round(f, env, sign, sig, exp, 0, flags);
}

uint32_t sfp8_fmod(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x, y;
    uint32_t res;
    uint64_t m;
    int64_t e;
    if (remainder_special(f, a, b, &x, &y, &res, flags)) return (uint32_t)res;
    if (x.kind == SFP8X_ZERO) return (uint32_t)sfp8x_zero(f, x.sign, flags);
    if (y.kind == SFP8X_INF) return (uint32_t)sfp8x_round(f, env, x.sign, x.sig, x.exp, 0, flags);
    fmod_exact(&x, &y, &m, &e);
    return (uint32_t)pack_exact(f, env, x.sign, m, e, flags);
}

uint32_t sfp8_modf(const sfp8_format *f, uint32_t a, uint32_t *integral, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t res;
    uint64_t ip, fr;
    sfp8x_unpack(f, a, &x, flags);
    if (sfp8x_nan3(f, &x, NULL, NULL, &res, flags)) {
        *integral = (uint32_t)res;
        return (uint32_t)res;
    }
    if (x.kind == SFP8X_INF) {
        *integral = (uint32_t)sfp8x_inf(f, env, x.sign, flags);
        return (uint32_t)sfp8x_zero(f, x.sign, flags);
    }
    if (x.kind == SFP8X_ZERO || x.exp >= 0) {
        *integral = (uint32_t)(x.kind == SFP8X_ZERO ? sfp8x_zero(f, x.sign, flags)
                                                : sfp8x_round(f, env, x.sign, x.sig, x.exp, 0, flags));
        return (uint32_t)sfp8x_zero(f, x.sign, flags);
    }
    ip = x.exp <= -64 ? 0 : x.sig >> -x.exp;
    fr = x.exp <= -64 ? x.sig : x.sig & sfp8x_mask64((int)-x.exp);
    *integral = (uint32_t)pack_exact(f, env, x.sign, ip, 0, flags);
    return (uint32_t)pack_exact(f, env, x.sign, fr, x.exp, flags);
}

uint32_t sfp8_frexp(const sfp8_format *f, uint32_t a, int32_t *exponent, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t res;
    int msb;
    sfp8x_unpack(f, a, &x, flags);
    *exponent = 0;
    if (sfp8x_nan3(f, &x, NULL, NULL, &res, flags)) return (uint32_t)res;
    if (x.kind == SFP8X_INF) return (uint32_t)sfp8x_inf(f, env, x.sign, flags);
    if (x.kind == SFP8X_ZERO) return (uint32_t)sfp8x_zero(f, x.sign, flags);
    /* |x| = sig * 2^exp in [2^(e-1), 2^e): mantissa sig * 2^(-msb-1) in [0.5, 1) */
    msb = sfp8x_msb64(x.sig);
    *exponent = (int32_t)(x.exp + msb + 1); /* |exp| < 2^21: fits */
    return (uint32_t)sfp8x_round(f, env, x.sign, x.sig, -(int64_t)msb - 1, 0, flags);
}

uint32_t sfp8_ldexp(const sfp8_format *f, uint32_t a, int64_t n, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t res;
    /* beyond +-2^24 every finite non-zero value of every format (exponents
       within +-(2^20 + 2^16)) overflows or underflows alike: clamp, so that
       exp + n cannot overflow */
    const int64_t lim = (int64_t)1 << 24;
    sfp8x_unpack(f, a, &x, flags);
    if (sfp8x_nan3(f, &x, NULL, NULL, &res, flags)) return (uint32_t)res;
    if (x.kind == SFP8X_INF) return (uint32_t)sfp8x_inf(f, env, x.sign, flags);
    if (x.kind == SFP8X_ZERO) return (uint32_t)sfp8x_zero(f, x.sign, flags);
    if (n > lim) n = lim;
    if (n < -lim) n = -lim;
    return (uint32_t)sfp8x_round(f, env, x.sign, x.sig, x.exp + n, 0, flags);
}

uint32_t sfp8_logb(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t res;
    int64_t e;
    sfp8x_unpack(f, a, &x, flags);
    if (sfp8x_nan3(f, &x, NULL, NULL, &res, flags)) return res;
    if (x.kind == SFP8X_INF) return sfp8x_inf(f, env, 0, flags);
    if (x.kind == SFP8X_ZERO) {
        *flags |= SFP8_FLAG_DIVBYZERO;
        return sfp8x_inf(f, env, 1, flags);
    }
    e = x.exp + sfp8x_msb64(x.sig); /* |a| in [2^e, 2^(e+1)) */
    if (e == 0) return sfp8x_zero(f, 0, flags);
    return sfp8x_round(f, env, e < 0, (uint64_t)(e < 0 ? -e : e), 0, 0, flags);
}

uint32_t sfp8_heaviside(const sfp8_format *f, uint32_t a, uint32_t h0, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t res;
    sfp8x_unpack(f, a, &x, flags);
    if (sfp8x_nan3(f, &x, NULL, NULL, &res, flags)) return (uint32_t)res;
    if (x.kind == SFP8X_ZERO) return h0 & (uint32_t)sfp8x_code_mask(f); /* h0 itself, as NumPy */
    if (x.sign) return (uint32_t)sfp8x_zero(f, 0, flags);
    return (uint32_t)sfp8x_round(f, env, 0, 1, 0, 0, flags); /* 1, or its rounding (flags) */
}

/* ------------------------------------------------------------------------ */
/* nextafter / spacing                                                       */
/* ------------------------------------------------------------------------ */

/* magnitude code of the next representable number above magnitude code m,
 * or max_mag + 1 at the top (inf for ieee, off the code set otherwise) */
static uint64_t next_mag_up(const sfp8_format *f, uint64_t m)
{
    if (f->subnormals == SFP8_SUBNORMALS_FLUSH && m < ((uint64_t)1 << f->man_bits))
        return (uint64_t)1 << f->man_bits;
    return m + 1;
}

static uint64_t next_mag_down(const sfp8_format *f, uint64_t m)
{
    if (f->subnormals == SFP8_SUBNORMALS_FLUSH && m <= ((uint64_t)1 << f->man_bits)) return 0;
    return m - 1;
}

uint32_t sfp8_nextafter(const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags)
{
    sfp8x_val x, y;
    uint32_t res;
    uint64_t mag, out;
    int c, sign, away;
    sfp8x_unpack(f, a, &x, flags);
    sfp8x_unpack(f, b, &y, flags);
    if (sfp8x_nan3(f, &x, &y, NULL, &res, flags)) return (uint32_t)res;
    c = sfp8x_cmp(&x, &y);
    if (c == 0) return (uint32_t)(b & sfp8x_code_mask(f));
    if (x.kind == SFP8X_ZERO) {
        sign = c > 0; /* moving down from zero: negative */
        if (sign && !f->is_signed) return (uint32_t)sfp8x_zero(f, 0, flags);
        mag = next_mag_up(f, 0);
        *flags |= SFP8_FLAG_UNDERFLOW | SFP8_FLAG_INEXACT;
        if (mag >= ((uint64_t)1 << f->man_bits)) *flags &= (uint8_t)~(SFP8_FLAG_UNDERFLOW | SFP8_FLAG_INEXACT);
        return (uint32_t)sfp8x_with_sign(f, sign, mag);
    }
    sign = x.sign;
    mag = (x.kind == SFP8X_ZERO) ? 0 : (a & sfp8x_code_mask(f) & ~(f->is_signed ? sfp8x_sign_bit(f) : 0));
    if (x.kind == SFP8X_INF) mag = sfp8x_inf_mag(f);
    away = (c < 0) != (sign != 0); /* moving away from zero */
    if (f->subnormals == SFP8_SUBNORMALS_NOZERO) {
        /* every code is normal (no underflow); below +-min lies -+min (signed
           formats: b is beyond it) -- unsigned formats cannot move below min */
        if (!away && mag == 0) return (uint32_t)sfp8x_with_sign(f, !sign, 0);
        out = away ? mag + 1 : mag - 1;
        if (away && out > sfp8x_max_mag(f)) *flags |= SFP8_FLAG_OVERFLOW | SFP8_FLAG_INEXACT;
        return (uint32_t)sfp8x_with_sign(f, sign, out);
    }
    out = away ? next_mag_up(f, mag) : next_mag_down(f, mag);
    if (away && out > sfp8x_max_mag(f)) {
        *flags |= SFP8_FLAG_OVERFLOW | SFP8_FLAG_INEXACT;
        return (uint32_t)sfp8x_with_sign(f, sign, out);
    }
    if (out < ((uint64_t)1 << f->man_bits)) *flags |= SFP8_FLAG_UNDERFLOW | SFP8_FLAG_INEXACT;
    if (out == 0) return (uint32_t)sfp8x_zero(f, sign, flags);
    return (uint32_t)sfp8x_with_sign(f, sign, out);
}

/* The neighbour of a in direction up (1) or down (0): nextUp / nextDown, and
 * P3109's NextGreaterThan / NextLessThan (p3109 = 1: nothing lies beyond an
 * infinity).  Where no value lies beyond a: the format's NaN with invalid (a
 * itself in formats without NaN). */
static uint32_t neighbour(const sfp8_format *f, uint32_t a, int up, int p3109, uint8_t *flags)
{
    sfp8x_val x;
    uint32_t res;
    uint64_t mag, maxm = sfp8x_max_mag(f);
    int has_inf = f->specials == SFP8_SPECIALS_IEEE || f->specials == SFP8_SPECIALS_P3109;
    sfp8x_unpack(f, a, &x, flags);
    if (sfp8x_nan3(f, &x, NULL, NULL, &res, flags)) return res;
    if (x.kind == SFP8X_INF) {
        if (x.sign == up) return (uint32_t)sfp8x_with_sign(f, x.sign, maxm); /* inward: +-max */
        if (!p3109) return a & (uint32_t)sfp8x_code_mask(f);
        return sfp8x_invalid(f, flags);
    }
    if (x.kind == SFP8X_ZERO) { /* the smallest positive value, or its negative */
        if (!up && !f->is_signed) return sfp8x_invalid(f, flags);
        return (uint32_t)sfp8x_with_sign(f, !up, next_mag_up(f, 0));
    }
    mag = a & sfp8x_code_mask(f) & ~(f->is_signed ? sfp8x_sign_bit(f) : 0);
    if (up == !x.sign) { /* away from zero */
        mag = f->subnormals == SFP8_SUBNORMALS_NOZERO ? mag + 1 : next_mag_up(f, mag);
        if (mag <= maxm) return (uint32_t)sfp8x_with_sign(f, x.sign, mag);
        if (has_inf) return (uint32_t)sfp8x_with_sign(f, x.sign, sfp8x_inf_mag(f));
        if (f->specials == SFP8_SPECIALS_NONE) return a & (uint32_t)sfp8x_code_mask(f);
        return sfp8x_invalid(f, flags);
    }
    if (f->subnormals == SFP8_SUBNORMALS_NOZERO) { /* every code normal; no zero to cross */
        if (mag > 0) return (uint32_t)sfp8x_with_sign(f, x.sign, mag - 1);
        if (!f->is_signed) return sfp8x_invalid(f, flags);
        return (uint32_t)sfp8x_with_sign(f, !x.sign, 0);
    }
    mag = next_mag_down(f, mag);
    return mag ? (uint32_t)sfp8x_with_sign(f, x.sign, mag) : sfp8x_zero(f, x.sign, flags);
}

uint32_t sfp8_nextup(const sfp8_format *f, uint32_t a, uint8_t *flags) { return neighbour(f, a, 1, 0, flags); }
uint32_t sfp8_nextdown(const sfp8_format *f, uint32_t a, uint8_t *flags) { return neighbour(f, a, 0, 0, flags); }
uint32_t sfp8_next_greater(const sfp8_format *f, uint32_t a, uint8_t *flags) { return neighbour(f, a, 1, 1, flags); }
uint32_t sfp8_next_less(const sfp8_format *f, uint32_t a, uint8_t *flags) { return neighbour(f, a, 0, 1, flags); }

/* NumPy's spacing: distance from x to the next representable number away from
 * zero, with x's sign; at +-max that number lies beyond the format and the
 * result overflows (SPEC section 4). */
uint32_t sfp8_spacing(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    sfp8x_val x, n;
    uint32_t res;
    uint64_t mag, up;
    uint8_t scratch = 0;
    sfp8x_unpack(f, a, &x, flags);
    /* NaN and infinity have no spacing: invalid, as NumPy's float16 raises it
       (docs/semantics.md) */
    if (sfp8x_nan3(f, &x, NULL, NULL, &res, flags)) {
        *flags |= SFP8_FLAG_INVALID;
        return (uint32_t)res;
    }
    if (x.kind == SFP8X_INF) {
        *flags |= SFP8_FLAG_INVALID;
        return (uint32_t)sfp8_default_nan(f);
    }
    if (x.kind == SFP8X_ZERO) {
        up = next_mag_up(f, 0);
        sfp8x_unpack(f, up, &n, &scratch);
        if (n.kind != SFP8X_FINITE) /* flush formats: subnormal codes read as zero */
            sfp8x_unpack(f, sfp8_min_normal_code(f), &n, &scratch);
        if (n.kind != SFP8X_FINITE) /* no finite non-zero value at all (1-bit IEEE exponent, flushed): as max */
            return (uint32_t)sfp8x_round(f, env, x.sign, 1, (int64_t)sfp8x_exp_ones(f) - f->bias + 1, 0, flags);
        return (uint32_t)sfp8x_round(f, env, x.sign, n.sig, n.exp, 0, flags);
    }
    mag = a & sfp8x_code_mask(f) & ~(f->is_signed ? sfp8x_sign_bit(f) : 0);
    up = next_mag_up(f, mag);
    if (up > sfp8x_max_mag(f)) {
        /* the next value up from +-max is beyond the format (inf in IEEE
           formats, where NumPy's spacing(max) is inf with overflow): the
           result is an overflow, delivered by SPEC section 4 (mode,
           saturation; NaN for formats with no infinity) with overflow and
           inexact.  2^(top exponent + 1) exceeds max in every format. */
        return (uint32_t)sfp8x_round(f, env, x.sign, 1, (int64_t)sfp8x_exp_ones(f) - f->bias + 1, 0, flags);
    }
    sfp8x_unpack(f, up, &n, &scratch);
    /* n - x, both positive magnitudes, exact then one rounding */
    return (uint32_t)sfp8x_add_finite(f, env, x.sign, n.sig, n.exp, !x.sign, x.sig, x.exp, flags);
}

