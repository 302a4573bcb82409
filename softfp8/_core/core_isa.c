/*
 * ISA conventions by name (sfp8_isa_lookup): "x86", "arm_dn+ftz", ... -> the
 * sfp8_env.isa value.  What the conventions do is in core.c ("ISA conventions",
 * the conversions) and ops.c (the operations, at the op table's dispatch);
 * docs/golden-model.md, "ISA conventions".
 */
#include <string.h>

#include "softfp8/softfp8.h"
/* ---- names ---- */

static int same(const char *x, const char *y, size_t n)
{
    size_t i;
    for (i = 0; i < n && y[i]; i++) {
        char cx = x[i] >= 'A' && x[i] <= 'Z' ? (char)(x[i] - 'A' + 'a') : x[i];
        if (cx == '-') cx = '_';
        if (cx != y[i]) return 0;
    }
    return i == n && y[i] == 0;
}

int sfp8_isa_lookup(const char *name)
{
    static const struct {
        const char *name;
        int isa;
    } names[] = {{"default", SFP8_ISA_DEFAULT}, {"softfloat", SFP8_ISA_DEFAULT}, {"x86", SFP8_ISA_X86},
                 {"x86_sse", SFP8_ISA_X86},     {"sse", SFP8_ISA_X86},           {"arm", SFP8_ISA_ARM},
                 {"arm_dn", SFP8_ISA_ARM_DN},   {"riscv", SFP8_ISA_RISCV},       {"risc_v", SFP8_ISA_RISCV}};
    int isa = -1;
    const char *p = name;
    if (name == NULL) return -1;
    while (1) {
        const char *q = strchr(p, '+');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (isa < 0) {
            for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                if (same(p, names[i].name, len)) isa = names[i].isa;
            if (isa < 0) return -1;
        } else if (same(p, "ftz", len)) {
            isa |= SFP8_ISA_FTZ;
        } else if (same(p, "daz", len)) {
            isa |= SFP8_ISA_DAZ;
        } else {
            return -1;
        }
        if (!q) return isa;
        p = q + 1;
    }
}
