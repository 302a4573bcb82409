/*
 * ISA conventions: which NaN an operation delivers, flush-to-zero of results and
 * denormals-are-zero of operands (docs/golden-model.md, "ISA conventions").
 *
 * The exact core computes every result under softfp8's own convention; a call
 * whose env->isa is not 0 comes here (from sfp8_convert and from the op dispatch
 * sfp8x_apply_ext), which
 *   1. reads subnormal operands as zero when DAZ is set (raising denormal),
 *   2. runs the core with the default convention,
 *   3. replaces a NaN result by the convention's NaN (the choice among the NaN
 *      operands, or the convention's default NaN), and
 *   4. flushes a subnormal result to zero when FTZ is set (underflow|inexact).
 * Flags other than those are the core's: invalid for signalling NaN operands and
 * invalid operations is the same in every convention.  Bit operations (neg, abs,
 * copysign, pos, the predicates: A_NOFLAGS) are never changed.
 */
#include <string.h>

#include "core_x.h"
#include "ops.h"

static int is_nan(const sfp8_format *f, uint64_t a)
{
    int c = sfp8_classify(f, a);
    return c == SFP8_CLASS_QNAN || c == SFP8_CLASS_SNAN;
}

static int is_snan(const sfp8_format *f, uint64_t a) { return sfp8_classify(f, a) == SFP8_CLASS_SNAN; }

static uint64_t sign_bit(const sfp8_format *f) { return (uint64_t)1 << (f->bits - 1); }

/* a NaN operand made quiet, payload and sign kept (ieee); the other schemes'
   NaNs are quiet already */
static uint64_t quiet(const sfp8_format *f, uint64_t a)
{
    if (f->specials == SFP8_SPECIALS_IEEE) return a | ((uint64_t)1 << (f->man_bits - 1));
    return a;
}

/* the NaN of an invalid operation under the convention */
static uint64_t isa_default_nan(const sfp8_format *f, int isa)
{
    uint64_t d = f->bits > 16 ? ((((uint64_t)1 << f->exp_bits) - 1) << f->man_bits) |
                                    ((uint64_t)1 << (f->man_bits - 1))
                              : sfp8_default_nan(f);
    /* x86's "real indefinite" is negative: sign, all-ones exponent, quiet bit */
    if (isa == SFP8_ISA_X86 && f->is_signed &&
        (f->specials == SFP8_SPECIALS_IEEE || f->specials == SFP8_SPECIALS_FN))
        d |= sign_bit(f);
    return d;
}

static int is_inf(const sfp8_format *f, uint64_t a) { return sfp8_classify(f, a) == SFP8_CLASS_INF; }
static int is_zero(const sfp8_format *f, uint64_t a) { return sfp8_classify(f, a) == SFP8_CLASS_ZERO; }

/* The NaN result of op under the convention; x[0..n) are the (DAZ-read) operands. */
static uint64_t isa_nan(int op, const sfp8_format *f, const uint64_t *x, int n, int isa)
{
    static const int fma_arm_order[3] = {2, 0, 1}; /* Arm FPMulAdd: addend first */
    const int *order = NULL;
    int i;
    if (isa == SFP8_ISA_ARM_DN || isa == SFP8_ISA_RISCV) return isa_default_nan(f, isa);
    if (op == X_FMA && n == 3 && !is_nan(f, x[0]) && !is_nan(f, x[1]) &&
        ((is_inf(f, x[0]) && is_zero(f, x[1])) || (is_zero(f, x[0]) && is_inf(f, x[1])))) {
        /* inf * 0 + NaN: x86 (SoftFloat 8086-SSE) gives the indefinite NaN for any
           NaN addend; Arm the default NaN for a quiet one (a signalling addend is
           propagated, below) */
        if (isa == SFP8_ISA_X86 || (isa == SFP8_ISA_ARM && !is_snan(f, x[2]))) return isa_default_nan(f, isa);
    }
    if (isa == SFP8_ISA_ARM) {
        if (op == X_FMA && n == 3) order = fma_arm_order;
        for (i = 0; i < n; i++) { /* signalling NaNs first */
            uint64_t v = x[order ? order[i] : i];
            if (is_snan(f, v)) return quiet(f, v);
        }
    }
    for (i = 0; i < n; i++) {
        uint64_t v = x[order ? order[i] : i];
        if (is_nan(f, v)) return quiet(f, v);
    }
    return isa_default_nan(f, isa); /* an invalid operation */
}

/* DAZ: a subnormal operand read as a zero of its sign */
static uint64_t daz(const sfp8_format *f, uint64_t a, uint8_t *fl)
{
    if (sfp8_classify(f, a) != SFP8_CLASS_SUBNORMAL) return a;
    *fl |= SFP8_FLAG_DENORMAL;
    if (!f->is_signed || f->specials == SFP8_SPECIALS_FNUZ || f->specials == SFP8_SPECIALS_P3109) return 0;
    return a & sign_bit(f);
}

/* FTZ: a subnormal result becomes a zero of its sign, with underflow and inexact */
static uint64_t ftz(const sfp8_format *f, uint64_t r, uint8_t *fl)
{
    uint8_t scratch = 0;
    if (f->subnormals == SFP8_SUBNORMALS_FLUSH || sfp8_classify(f, r) != SFP8_CLASS_SUBNORMAL) return r;
    *fl |= SFP8_FLAG_UNDERFLOW | SFP8_FLAG_INEXACT;
    if (f->bits > 16) return r & sign_bit(f);
    return sfp8x_zero(f, sfp8_signbit(f, r), &scratch);
}

uint64_t sfp8x_isa_convert(const sfp8_format *src, const sfp8_format *dst, uint64_t a, const sfp8_env *env,
                           uint8_t *flags)
{
    sfp8_env e = *env;
    int isa = env->isa & 0xFF;
    uint64_t r;
    e.isa = 0;
    if (env->isa & SFP8_ISA_DAZ) a = daz(src, a, flags);
    r = sfp8_convert(src, dst, a, &e, flags);
    if (is_nan(dst, r) && isa != SFP8_ISA_DEFAULT) {
        if (isa == SFP8_ISA_ARM_DN || isa == SFP8_ISA_RISCV || !is_nan(src, a))
            r = isa_default_nan(dst, isa);
    }
    if (env->isa & SFP8_ISA_FTZ) r = ftz(dst, r, flags);
    return r;
}

uint32_t sfp8x_isa_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, int64_t n,
                         const sfp8_env *env, uint8_t *fl, uint32_t *r2)
{
    sfp8_env e = *env;
    int isa = env->isa & 0xFF, kind = sfp8x_ops[op].kind, arity = sfp8x_arity(op);
    int codes_out = kind == K_BINARY || kind == K_UNARY || kind == K_TERNARY || kind == K_UNARY2 ||
                    kind == K_BINARY2 || kind == K_BINARY_I64 || kind == K_UNARY_I32;
    int two_codes = kind == K_UNARY2 || kind == K_BINARY2;
    uint64_t x[3];
    uint32_t r;
    int nx = kind == K_BINARY_I64 ? 1 : arity;
    e.isa = 0;
    x[0] = a & sfp8_code_mask(f);
    x[1] = b & sfp8_code_mask(f);
    x[2] = c & sfp8_code_mask(f);
    if (env->isa & SFP8_ISA_DAZ)
        for (int i = 0; i < nx; i++) x[i] = daz(f, x[i], fl);
    r = sfp8x_apply_ext(op, f, (uint32_t)x[0], nx > 1 ? (uint32_t)x[1] : b, nx > 2 ? (uint32_t)x[2] : c, n, &e,
                        fl, r2);
    if (!codes_out) return r;
    if (isa != SFP8_ISA_DEFAULT) {
        if (is_nan(f, r)) r = (uint32_t)isa_nan(op, f, x, nx, isa);
        if (two_codes && is_nan(f, *r2)) *r2 = (uint32_t)isa_nan(op, f, x, nx, isa);
    }
    if ((env->isa & SFP8_ISA_FTZ) && (sfp8x_ops[op].attrs & A_ENV)) {
        r = (uint32_t)ftz(f, r, fl);
        if (two_codes) *r2 = (uint32_t)ftz(f, *r2, fl);
    }
    return r;
}

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
