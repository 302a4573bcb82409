/* Public conveniences of the C API that the Python package does in Python:
 * preset lookup by name with the Tesla families' bias check (as softfp8.lookup /
 * softfp8.cfloat8_143(bias=...) check it). */
#include <stddef.h>

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
