/*
 * Exact superaccumulator: sums of values and of products of two values of a
 * storage format, held exactly in fixed-point limbs and rounded once by the
 * core's sfp8_round_value.  Plain C (no Python, no NumPy); used by the array
 * driver's add reductions and the matrix engine (softfp8/_core/mm/).
 */
#include <string.h>

#include "accum.h"

/* the widest valid format (16 exponent bits, no mantissa bits), products */
_Static_assert((2 * ((1 << 16) + 1 + 0) + 66 + 63) / 64 <= ACC_MAX_LIMBS,
               "ACC_MAX_LIMBS must hold every valid format's products");

int acc_limbs_needed(const sfp8_format *f, int k)
{
    /* top - qmin = 2^exp_bits + 1 + man_bits, whatever the bias; + 64 bits of
       count headroom, a sign bit and one spare bit */
    int64_t span = (int64_t)k * (((int64_t)1 << f->exp_bits) + 1 + f->man_bits);
    return (int)((span + 66 + 63) / 64);
}

int acc_binary64_exact(const sfp8_format *f)
{
    int64_t qmin = (int64_t)-f->bias - f->man_bits;
    int64_t top = ((int64_t)1 << f->exp_bits) - f->bias + 1;
    return qmin >= -1074 && top <= 1023;
}

void acc_init_span(SuperAcc *a, int64_t qmin, int64_t span)
{
    a->qmin = qmin;
    a->nlimbs = (int)((span + 66 + 63) / 64); /* 64 bits of count headroom, a sign bit, a spare bit */
    a->nan = a->snan = a->pinf = a->ninf = a->nonzero = a->pos_zero = a->neg_zero = 0;
    a->nan_code = a->inf_code = 0;
    memset(a->limb, 0, (size_t)a->nlimbs * sizeof(uint64_t));
}

void acc_init_k(SuperAcc *a, const sfp8_format *f, int k)
{
    /* qmin <= the smallest quantum of either subnormal convention; the span gives
       acc_limbs_needed(f, k) <= ACC_MAX_LIMBS limbs for every valid format (static assert above) */
    acc_init_span(a, k * ((int64_t)-f->bias - f->man_bits), (int64_t)k * (((int64_t)1 << f->exp_bits) + 1 + f->man_bits));
}

/* exact value sig * 2^exp (sig odd) of a finite non-zero code, read from its
   fields (any exponent range); the core's classification decides the class */
void acc_finite_value(const sfp8_format *f, uint32_t code, uint64_t *sig, int64_t *exp)
{
    uint32_t c = code & sfp8_code_mask(f);
    uint32_t mag = f->is_signed ? c & ~((uint32_t)1 << (f->bits - 1)) : c;
    uint32_t ef = mag >> f->man_bits, mf = mag & (((uint32_t)1 << f->man_bits) - 1);
    int tz;
    if (ef == 0 && f->subnormals != SFP8_SUBNORMALS_NOZERO) { /* subnormal */
        *sig = mf;
        *exp = (f->subnormals == SFP8_SUBNORMALS_TESLA ? (int64_t)-f->bias : (int64_t)1 - f->bias) - f->man_bits;
    } else {
        *sig = ((uint64_t)1 << f->man_bits) | mf;
        *exp = (int64_t)ef - f->bias - f->man_bits;
    }
    tz = __builtin_ctzll(*sig); /* sig != 0 */
    *sig >>= tz;
    *exp += tz;
}

void acc_add_mag(SuperAcc *a, uint64_t sig, int64_t pos, int neg)
{
    int64_t w = pos / 64, b = pos % 64;
    unsigned __int128 v = (unsigned __int128)sig << b;
    uint64_t part[2] = {(uint64_t)v, (uint64_t)(v >> 64)};
    if (!neg) {
        unsigned __int128 c = 0;
        for (int64_t i = w; i < a->nlimbs; i++) {
            uint64_t add = (i - w < 2) ? part[i - w] : 0;
            c += (unsigned __int128)a->limb[i] + add;
            a->limb[i] = (uint64_t)c;
            c >>= 64;
            if (i > w && c == 0) break;
        }
    } else {
        uint64_t borrow = 0;
        for (int64_t i = w; i < a->nlimbs; i++) {
            uint64_t sub = (i - w < 2) ? part[i - w] : 0;
            uint64_t x = a->limb[i];
            uint64_t r = x - sub - borrow;
            borrow = (x < sub) || (x - sub < borrow);
            a->limb[i] = r;
            if (i > w && borrow == 0) break;
        }
    }
}

void acc_add_value(SuperAcc *a, const sfp8_format *f, uint32_t code, uint8_t *flags)
{
    int cls = sfp8_classify(f, code);
    int neg = sfp8_signbit(f, code);
    uint64_t sig;
    int64_t exp;
    if (cls == SFP8_CLASS_SUBNORMAL) *flags |= SFP8_FLAG_DENORMAL;
    if (cls == SFP8_CLASS_QNAN || cls == SFP8_CLASS_SNAN) {
        if (!a->nan) a->nan_code = code;
        a->nan = 1;
        if (cls == SFP8_CLASS_SNAN) a->snan = 1;
        return;
    }
    if (cls == SFP8_CLASS_INF) {
        if (neg) a->ninf = 1;
        else a->pinf = 1;
        a->inf_code = code;
        return;
    }
    if (cls == SFP8_CLASS_ZERO || (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH)) {
        if (neg) a->neg_zero = 1;
        else a->pos_zero = 1;
        return;
    }
    a->nonzero = 1;
    acc_finite_value(f, code, &sig, &exp);
    acc_add_mag(a, sig, exp - a->qmin, neg);
}

/* round the finite exact sum into outf (any descriptor) */
static uint64_t acc_round_finite(SuperAcc *a, const sfp8_format *outf, const sfp8_env *env, uint8_t *flags)
{
    uint64_t *mag = a->limb, sig;
    int n = a->nlimbs;
    int neg = (int)(mag[n - 1] >> 63);
    int top = -1, sticky = 0;
    int64_t exp;
    if (neg) { /* magnitude in place: rounding consumes the accumulator */
        unsigned __int128 c = 1;
        for (int i = 0; i < n; i++) {
            c += (uint64_t)~mag[i];
            mag[i] = (uint64_t)c;
            c >>= 64;
        }
    }
    for (int i = n - 1; i >= 0; i--)
        if (mag[i]) {
            top = i;
            break;
        }
    if (top < 0) {
        /* exact zero: -0 only if every term was -0 (or by downward cancellation) */
        int zneg = a->nonzero || (a->pos_zero && a->neg_zero) ? env->rounding == SFP8_ROUND_DOWNWARD : a->neg_zero;
        return sfp8_round_value(outf, zneg, 0, 0, 0, env, flags);
    }
    {
        int msb = 63 - __builtin_clzll(mag[top]);
        int64_t lead = (int64_t)top * 64 + msb;
        int64_t low = lead - 63;
        if (low <= 0) {
            sig = mag[0];
            exp = a->qmin;
        } else {
            int64_t w = low / 64, b = low % 64;
            sig = mag[w] >> b;
            if (b && w + 1 < n) sig |= mag[w + 1] << (64 - b);
            for (int64_t i = 0; i < w; i++) sticky |= mag[i] != 0;
            if (b) sticky |= (mag[w] & ((((uint64_t)1) << b) - 1)) != 0;
            exp = a->qmin + low;
        }
    }
    return sfp8_round_value(outf, neg, sig, exp, sticky, env, flags);
}

uint32_t acc_round(SuperAcc *a, const sfp8_format *f, const sfp8_env *env, uint8_t *flags)
{
    if (a->nan) {
        if (a->snan) *flags |= SFP8_FLAG_INVALID;
        return sfp8_add(f, a->nan_code, a->nan_code, env, flags);
    }
    if (a->pinf && a->ninf) {
        *flags |= SFP8_FLAG_INVALID;
        return sfp8_default_nan(f);
    }
    if (a->pinf || a->ninf) return sfp8_add(f, a->inf_code, a->inf_code, env, flags);
    return (uint32_t)acc_round_finite(a, f, env, flags);
}

/* the class of code: -1 NaN, -2 infinity, 0 zero (flushed subnormals too), 1 finite
   non-zero with its exact value sig 2^exp */
static int decode_exact(const sfp8_format *f, uint32_t code, uint64_t *sig, int64_t *exp, int *neg,
                        uint8_t *flags)
{
    int cls = sfp8_classify(f, code);
    *neg = sfp8_signbit(f, code);
    if (cls == SFP8_CLASS_SUBNORMAL) *flags |= SFP8_FLAG_DENORMAL;
    if (cls == SFP8_CLASS_QNAN || cls == SFP8_CLASS_SNAN) return -1;
    if (cls == SFP8_CLASS_INF) return -2;
    if (cls == SFP8_CLASS_ZERO || (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH))
        return 0;
    acc_finite_value(f, code, sig, exp);
    return 1;
}

void acc_add_product(SuperAcc *sa, const sfp8_format *f, uint32_t x, uint32_t y, uint8_t *fl)
{
    uint64_t gx = 0, gy = 0;
    int64_t ex = 0, ey = 0;
    int nx, ny;
    int cx = decode_exact(f, x, &gx, &ex, &nx, fl), cy = decode_exact(f, y, &gy, &ey, &ny, fl);
    if (cx == -1 || cy == -1) {
        uint32_t c = cx == -1 ? x : y;
        if (!sa->nan) sa->nan_code = c;
        sa->nan = 1;
        if (sfp8_classify(f, x) == SFP8_CLASS_SNAN || sfp8_classify(f, y) == SFP8_CLASS_SNAN) sa->snan = 1;
        return;
    }
    if (cx == -2 || cy == -2) {
        uint32_t ic;
        if (cx == 0 || cy == 0) {
            if (!sa->nan) sa->nan_code = sfp8_default_nan(f);
            sa->nan = 1;
            *fl |= SFP8_FLAG_INVALID;
            return;
        }
        if (nx ^ ny) sa->ninf = 1;
        else sa->pinf = 1;
        /* the infinity of the product's sign (formats without -0 included) */
        ic = sfp8_abs(f, cx == -2 ? x : y);
        sa->inf_code = (nx ^ ny) ? sfp8_neg(f, ic) : ic;
        return;
    }
    if (cx == 0 || cy == 0) {
        if (nx ^ ny) sa->neg_zero = 1;
        else sa->pos_zero = 1;
        return;
    }
    sa->nonzero = 1;
    acc_add_mag(sa, gx * gy, ex + ey - sa->qmin, nx ^ ny);
}

uint64_t acc_round_float(SuperAcc *sa, const sfp8_format *f, const sfp8_format *outf, const sfp8_env *env,
                         uint8_t *flags)
{
    /* NaN and infinity results are the core's conversions of f's codes: nothing
       is packed here */
    if (sa->nan) {
        if (sa->snan) *flags |= SFP8_FLAG_INVALID;
        return sfp8_convert(f, outf, sa->nan_code, env, flags);
    }
    if (sa->pinf && sa->ninf) {
        *flags |= SFP8_FLAG_INVALID;
        return sfp8_convert(f, outf, sfp8_default_nan(f), env, flags);
    }
    if (sa->pinf || sa->ninf) return sfp8_convert(f, outf, sa->inf_code, env, flags);
    return acc_round_finite(sa, outf, env, flags);
}


