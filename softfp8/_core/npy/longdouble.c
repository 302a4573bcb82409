/*
 * NumPy glue: C long double values <-> codes of a format, for the casts from
 * and to np.longdouble and for NumPy long double scalars.  Only bits move
 * here; the core rounds (sfp8_round_value / sfp8_convert).
 */
#include "glue.h"

#if SFP8_X87_LONG_DOUBLE
/*
 * x87 80-bit extended: 64-bit significand with an explicit integer bit, 15-bit
 * exponent (bias 16383) and the sign, little-endian in the first 10 bytes.
 *
 * Into a format: the value is decoded bit by bit and rounded once by the core
 * (sfp8_round_value takes the 64-bit significand as it is: no sticky needed).
 * Infinities and NaNs go through sfp8_convert from X87_HI (below) so that the
 * core decides what they become.
 *
 * Out of a format: the core rounds into a 64-bit view of the x87 format --
 * sign, the 15-bit exponent and the top 48 fraction bits -- which holds every
 * value of a <= 16-bit format exactly whenever long double does.  X87_HI has
 * the x87 exponent range (bias 16383); below 2^-16382 its subnormals stop at
 * 2^-16430 while the x87 ones reach 2^-16445, so values there are rounded
 * again from the original code into X87_LO (bias 16398, subnormal quantum
 * 2^-16445 like the x87).  Turning the result into the 80-bit layout only moves
 * bits: no rounding happens outside the core.
 */
static const sfp8_format X87_HI = {64, 1, 15, 48, 16383, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE, 0};
static const sfp8_format X87_LO = {64, 1, 15, 48, 16398, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE, 0};
#define X87_INT_BIT ((uint64_t)1 << 63)

uint32_t ld_to_code(const sfp8_format *f, const void *p, const sfp8_env *env, uint8_t *flags)
{
    uint64_t m;
    uint16_t se;
    int sign, e;
    memcpy(&m, p, 8);
    memcpy(&se, (const char *)p + 8, 2);
    sign = se >> 15;
    e = se & 0x7FFF;
    if (e == 0x7FFF || (e != 0 && !(m & X87_INT_BIT))) {
        /* infinity, NaN; pseudo-infinity, pseudo-NaN and unnormals are invalid
           operands (as on the x87): read as a signalling NaN */
        uint64_t frac = m & ~X87_INT_BIT, hi = (uint64_t)sign << 63 | (uint64_t)0x7FFF << 48;
        if (e == 0x7FFF && (m & X87_INT_BIT)) {
            uint64_t top = frac >> 15; /* quiet bit and the top payload bits */
            hi |= frac == 0 ? 0 : top != 0 ? top : 1;
        } else {
            hi |= 1;
        }
        return (uint32_t)sfp8_convert(&X87_HI, f, hi, env, flags);
    }
    if (e == 0 && m != 0) *flags |= SFP8_FLAG_DENORMAL; /* denormal or pseudo-denormal */
    return (uint32_t)sfp8_round_value(f, sign, m, (int64_t)(e ? e : 1) - 16383 - 63, 0, env, flags);
}

void ld_from_code(const sfp8_format *f, uint32_t c, const sfp8_env *env, uint8_t *flags, void *out)
{
    uint8_t fl = 0;
    uint64_t d = sfp8_convert(f, &X87_HI, c, env, &fl), frac, m;
    int e, sign = (int)(d >> 63);
    int cls = sfp8_classify(&X87_HI, d);
    unsigned char b[sizeof(long double)];
    uint16_t se;
    if ((fl & SFP8_FLAG_UNDERFLOW) || cls == SFP8_CLASS_SUBNORMAL) {
        /* below 2^-16382: round on the x87 grid instead */
        fl = 0;
        d = sfp8_convert(f, &X87_LO, c, env, &fl);
        e = (int)((d >> 48) & 0x7FFF);
        frac = d & (((uint64_t)1 << 48) - 1);
        if (e > 15) { /* rounded up to the smallest normal */
            e -= 15;
            m = X87_INT_BIT | frac << 15;
        } else if (e > 0) {
            m = (((uint64_t)1 << 48) | frac) << (e - 1);
            e = 0;
        } else {
            m = frac;
        }
    } else {
        e = (int)((d >> 48) & 0x7FFF);
        frac = d & (((uint64_t)1 << 48) - 1);
        m = (e ? X87_INT_BIT : 0) | frac << 15;
        if ((fl & SFP8_FLAG_OVERFLOW) && e != 0x7FFF)
            m = ~(uint64_t)0; /* the core delivered the largest finite value: the x87's */
    }
    *flags |= fl;
    se = (uint16_t)(sign << 15 | e);
    memset(b, 0, sizeof b);
    memcpy(b, &m, 8);
    memcpy(b + 8, &se, 2);
    memcpy(out, b, sizeof b);
}
#else
/* long double is not the x87 format here: go through double, exact when long
   double is double, otherwise rounded twice (NOT exact for binary128 or
   double-double long doubles). */
uint32_t ld_to_code(const sfp8_format *f, const void *p, const sfp8_env *env, uint8_t *flags)
{
    long double lv;
    double dv;
    uint64_t b;
    memcpy(&lv, p, sizeof lv);
    dv = (double)lv;
    memcpy(&b, &dv, 8);
    return (uint32_t)sfp8_convert(&sfp8_binary64, f, b, env, flags);
}

void ld_from_code(const sfp8_format *f, uint32_t c, const sfp8_env *env, uint8_t *flags, void *out)
{
    uint64_t b = sfp8_convert(f, &sfp8_binary64, c, env, flags);
    double dv;
    long double lv;
    memcpy(&dv, &b, 8);
    lv = dv;
    memcpy(out, &lv, sizeof lv);
}
#endif
