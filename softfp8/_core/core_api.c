/* Public conveniences of the C API that the Python package does in Python:
 * preset lookup by name with the Tesla families' bias check (as softfp8.lookup /
 * softfp8.cfloat8_143(bias=...) check it), and conversion to an integer type of any
 * width with saturation (as softfp8 gen / ver FMT convert --to intN). */
#include <stddef.h>
#include <stdint.h>

#include "softfp8/softfp8.h"

static int same_name(const char *x, const char *y)
{
    for (; *x && *y; x++, y++) {
        char cx = *x >= 'A' && *x <= 'Z' ? (char)(*x - 'A' + 'a') : *x;
        char cy = *y >= 'A' && *y <= 'Z' ? (char)(*y - 'A' + 'a') : *y;
        if (cx != cy) return 0;
    }
    return *x == *y;
}

int sfp8_preset_lookup(const char *name, int bias, sfp8_format *out)
{
    if (name == NULL || out == NULL) return SFP8_ENAME;
    if (same_name(name, "binary32") || same_name(name, "binary64")) {
        if (bias != -1) return SFP8_EBIAS;
        *out = same_name(name, "binary32") ? sfp8_binary32 : sfp8_binary64;
        return SFP8_OK;
    }
    for (int i = 0; i < SFP8_NUM_PRESETS; i++) {
        if (!same_name(name, sfp8_presets[i].name)) continue;
        *out = sfp8_presets[i].format;
        if (sfp8_presets[i].bias_parameter) {
            /* the Tesla families: an unsigned 6-bit bias */
            if (bias < 0 || bias > 63) return SFP8_EBIAS;
            out->bias = bias;
        } else if (bias != -1) {
            return SFP8_EBIAS; /* a fixed-bias preset takes no bias */
        }
        return SFP8_OK;
    }
    return SFP8_ENAME;
}

/* a to an integer of `bits` (1..64) bits, signed or not, by env->rounding: the core's
 * sfp8_to_int64, then the type's range: a value out of range after rounding gives the
 * nearest bound, NaN the largest, both with invalid alone (IEEE convertToInteger).  A
 * uint64 result at or above 2^63 is read exactly through binary64 (every format of at
 * most 16 bits is an integer there).  Returns the two's complement bit pattern. */
uint64_t sfp8_to_int(const sfp8_format *f, uint32_t a, int bits, int is_signed, const sfp8_env *env,
                     uint8_t *flags)
{
    uint8_t fl = 0;
    int64_t r, lo, hi;
    uint64_t mask;
    if (bits < 1 || bits > 64) {
        *flags |= SFP8_FLAG_INVALID | SFP8_FLAG_BADCALL;
        return 0;
    }
    mask = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    r = sfp8_to_int64(f, a, env, &fl);
    if (!is_signed && bits == 64) {
        if ((fl & SFP8_FLAG_INVALID) && r == INT64_MAX) {
            uint8_t scratch = 0;
            uint64_t d = sfp8_convert(f, &sfp8_binary64, a, env, &scratch);
            int e = (int)((d >> 52) & 0x7FF);
            if (!(d >> 63) && e >= 1023 + 63 && e < 1023 + 64) { /* 2^63 <= value < 2^64 */
                *flags |= fl & (uint8_t)~SFP8_FLAG_INVALID;
                return (((uint64_t)1 << 52) | (d & (((uint64_t)1 << 52) - 1))) << (e - 1023 - 52);
            }
            *flags |= SFP8_FLAG_INVALID | (fl & SFP8_FLAG_BADCALL);
            return ~(uint64_t)0;
        }
        if (r < 0) {
            *flags |= SFP8_FLAG_INVALID | (fl & SFP8_FLAG_BADCALL);
            return 0;
        }
        *flags |= fl;
        return (uint64_t)r;
    }
    lo = is_signed ? (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1))) : 0;
    hi = is_signed ? (bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1)
                   : (int64_t)(((uint64_t)1 << bits) - 1);
    if (r < lo || r > hi) {
        *flags |= SFP8_FLAG_INVALID | (fl & SFP8_FLAG_BADCALL); /* a code above the width: never masked */
        return (uint64_t)(r < lo ? lo : hi) & mask;
    }
    *flags |= fl;
    return (uint64_t)r & mask;
}
