/* IEEE P3109 (Interim Report v4.0) operations with the report's projection: the
 * companions SFP8_P3109 of the operation table (ops.def).  Each runs its row of the
 * table -- exact, rounded once by the core -- and then the report's projection
 * (4.7.3-4.7.6) and special values (4.10-4.11), element by element:
 *
 *   1. no -0: a -0 operand reads as +0 (P3109 decodes no negative zero);
 *   2. the row, rounded in env's mode twice: saturating (the value where it is in
 *      range) and not (its overflow flag and exact infinities tell the cases apart);
 *   3. an unsigned format: the row again in the signed twin (same exponent,
 *      mantissa and bias, one sign bit more) shows the negative results, which the
 *      unsigned format cannot hold (below its range: Saturate decides);
 *   4. the report's NaN cases beyond IEEE 754's (the omega column of ops.def);
 *   5. Saturate (4.7.5) by SatFinite / SatPropagate / SatNone; a -0 result is +0.
 *
 * docs/semantics.md, "P3109 operations". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_p3109.h"
#include "ops.h"

enum { W_NONE = 0, W_DIV, W_ZERO, W_ATAN2, W_TANPI, W_NAN2 };

typedef struct {
    const char *name;
    int row;   /* enum sfp8x_op */
    int omega; /* W_* */
} p3109_info;

static const p3109_info p3109_ops[] = {
#define SFP8_OP(ID, name, kind, attrs, ufunc, identity, call)
#define SFP8_P3109(ID, name, row, omega) {name, X_##row, omega},
#include "ops.def"
#undef SFP8_P3109
#undef SFP8_OP
};
#define P3109_NUM ((int)(sizeof p3109_ops / sizeof p3109_ops[0]))

int sfp8_p3109_count(void) { return P3109_NUM; }

int sfp8_p3109_lookup(const char *name)
{
    if (name == NULL) return -1;
    for (int op = 0; op < P3109_NUM; op++)
        if (strcmp(p3109_ops[op].name, name) == 0) return op;
    return -1;
}

static int valid(int op) { return op >= 0 && op < P3109_NUM; }
const char *sfp8_p3109_name(int op) { return valid(op) ? p3109_ops[op].name : NULL; }
int sfp8_p3109_row(int op) { return valid(op) ? p3109_ops[op].row : -1; }

static int is_nan(const sfp8_format *f, uint32_t a) { return sfp8_classify(f, a) >= SFP8_CLASS_QNAN; }
static int is_zero(const sfp8_format *f, uint32_t a) { return sfp8_classify(f, a) == SFP8_CLASS_ZERO; }

/* the exact value of a code as a double (the storage formats' values are doubles) */
static double value(const sfp8_format *f, uint32_t a)
{
    sfp8_env e;
    uint8_t fl = 0;
    uint64_t d;
    double x;
    memset(&e, 0, sizeof e);
    d = sfp8_convert(f, &sfp8_binary64, a, &e, &fl);
    memcpy(&x, &d, sizeof x);
    return x;
}

/* the report's NaN where IEEE 754's operation gives a number (4.10) */
static int omega_nan(int omega, const sfp8_format *f, const uint32_t x[3])
{
    double v, w;
    switch (omega) {
    case W_DIV:
        return is_zero(f, x[1]);
    case W_ZERO:
        return is_zero(f, x[0]);
    case W_ATAN2:
        return (is_zero(f, x[0]) && is_zero(f, x[1])) ||
               (sfp8_classify(f, x[0]) == SFP8_CLASS_INF && sfp8_classify(f, x[1]) == SFP8_CLASS_INF);
    case W_TANPI:
        v = value(f, x[0]);
        if (!isfinite(v)) return 0;
        w = 2.0 * v; /* exact: the formats' values are far inside binary64 */
        return w == floor(w) && fmod(fabs(w), 2.0) == 1.0;
    case W_NAN2:
        return is_nan(f, x[0]) || is_nan(f, x[1]);
    default:
        return 0;
    }
}

/* the signed format of an unsigned one: its values and their negatives */
static sfp8_format twin_of(const sfp8_format *f)
{
    sfp8_format t = *f;
    t.bits = f->bits + 1;
    t.is_signed = 1;
    if (f->specials == SFP8_SPECIALS_FN) t.specials = SFP8_SPECIALS_FNUZ;
    return t;
}

static uint32_t inf_code(const sfp8_format *f)
{
    sfp8_env e;
    uint8_t fl = 0;
    memset(&e, 0, sizeof e);
    return (uint32_t)sfp8_convert(&sfp8_binary64, f, 0x7FF0000000000000ull, &e, &fl);
}

/* the cases of one result (step 2-4) */
enum { C_BASE = 0, C_PINF, C_NINF, C_ABOVE, C_BELOW, C_NAN };

/* Saturate (4.7.5): the code of case c (C_BASE: the rounded result `base`) */
static uint32_t saturate(const sfp8_format *f, int c, uint32_t base, int mode, int saturation)
{
    int ext = f->specials == SFP8_SPECIALS_IEEE || f->specials == SFP8_SPECIALS_P3109;
    uint32_t sign = f->is_signed ? 1u << (f->bits - 1) : 0;
    uint32_t mhi = sfp8_max_code(f), mlo = f->is_signed ? (mhi | sign) : 0;
    uint32_t inf = ext ? inf_code(f) : mhi;
    int has_ninf = ext && f->is_signed;
    uint32_t ninf = has_ninf ? (inf | sign) : (f->is_signed ? mlo : sfp8_default_nan(f));
    switch (c) {
    case C_NAN:
        return sfp8_default_nan(f);
    case C_PINF:
        return saturation == SFP8_SAT_FINITE ? mhi : inf;
    case C_NINF:
        if (saturation == SFP8_SAT_FINITE) return mlo;
        if (saturation == SFP8_SAT_PROPAGATE) return has_ninf ? ninf : mlo;
        return ninf;
    case C_ABOVE:
        if (saturation != SFP8_SAT_NONE) return mhi;
        /* SatNone: toward the finite range where the rounding points inwards */
        if (mode == SFP8_ROUND_TOWARD_ZERO || mode == SFP8_ROUND_DOWNWARD ||
            (mode == SFP8_ROUND_TO_ODD && !f->is_signed && ext))
            return mhi;
        return inf;
    case C_BELOW:
        if (saturation != SFP8_SAT_NONE) return mlo;
        if (mode == SFP8_ROUND_TOWARD_ZERO || mode == SFP8_ROUND_UPWARD) return mlo;
        return ninf;
    default:
        return base;
    }
}

uint32_t sfp8_p3109_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env,
                          int saturation, uint8_t *flags)
{
    uint32_t mask = sfp8_code_mask(f), x[3], cs, cn;
    uint8_t fs = 0, fn = 0;
    int row, arity, i, kase;
    sfp8_env e;
    if (!valid(op) || saturation < SFP8_SAT_FINITE || saturation > SFP8_SAT_NONE) {
        *flags |= SFP8_FLAG_INVALID | SFP8_FLAG_BADCALL;
        return 0;
    }
    row = p3109_ops[op].row;
    arity = sfp8x_arity(row);
    x[0] = a;
    x[1] = b;
    x[2] = c;
    for (i = 0; i < arity; i++) {
        if (x[i] & ~mask) {
            *flags |= SFP8_FLAG_INVALID | SFP8_FLAG_BADCALL;
            return 0;
        }
        if (is_zero(f, x[i])) x[i] = 0; /* 1. no -0 (the +0 code is 0 in every format) */
    }
    for (; i < 3; i++) x[i] = 0;
    /* 2. the row, saturating and not */
    e = *env;
    e.saturate = 1;
    cs = sfp8x_apply(row, f, x[0], x[1], x[2], &e, &fs);
    if (sfp8x_ops[row].attrs & A_ENV) {
        e.saturate = 0;
        cn = sfp8x_apply(row, f, x[0], x[1], x[2], &e, &fn);
    } else {
        cn = cs;
        fn = fs;
    }
    {
        int nan = is_nan(f, cs), neg = sfp8_signbit(f, cs);
        int over = (fn & SFP8_FLAG_OVERFLOW) != 0;
        int exact_inf = (sfp8_classify(f, cn) == SFP8_CLASS_INF || is_nan(f, cn)) && !nan && !over;
        int pinf = exact_inf && !neg, ninf = exact_inf && neg;
        int above = over && !neg, below = over && neg;
        if (!f->is_signed) { /* 3. the negative results, in the signed twin */
            sfp8_format tw = twin_of(f);
            sfp8_env ce;
            uint32_t tx[3] = {0, 0, 0}, tr;
            uint8_t tfl = 0;
            int tcls, neg_t;
            memset(&ce, 0, sizeof ce);
            for (i = 0; i < arity; i++) tx[i] = (uint32_t)sfp8_convert(f, &tw, x[i], &ce, &tfl);
            e.saturate = 0;
            tr = sfp8x_apply(row, &tw, tx[0], tx[1], tx[2], &e, &tfl);
            tcls = sfp8_classify(&tw, tr);
            neg_t = tcls < SFP8_CLASS_QNAN && tcls != SFP8_CLASS_ZERO && sfp8_signbit(&tw, tr);
            if (neg_t) {
                if (tcls == SFP8_CLASS_INF && !over) ninf = 1;
                else below = 1;
                nan = 0;
            }
        }
        /* 4. the report's own NaN cases */
        if (omega_nan(p3109_ops[op].omega, f, x)) nan = 1;
        kase = nan ? C_NAN : below ? C_BELOW : above ? C_ABOVE : ninf ? C_NINF : pinf ? C_PINF : C_BASE;
    }
    /* 5. Saturate, and no -0 */
    cs = saturate(f, kase, cs, env->rounding, saturation);
    return is_zero(f, cs) ? 0 : cs;
}

uint32_t sfp8x_p3109_project_in(const sfp8_format *f, int kind, int sign, uint64_t sig, int64_t exp, int sticky,
                                const sfp8_env *env, int round_mode, int saturation, uint8_t *flags)
{
    sfp8_env e = *env;
    uint8_t fs = 0, fn = 0;
    uint32_t cs;
    int neg = sign && (sig || sticky), kase = C_BASE;
    if (kind < 0 || kind > 2 || saturation < SFP8_SAT_FINITE || saturation > SFP8_SAT_NONE) {
        *flags |= SFP8_FLAG_INVALID | SFP8_FLAG_BADCALL;
        return 0;
    }
    if (kind == 2) return sfp8_default_nan(f);
    if (kind == 1) return saturate(f, sign ? C_NINF : C_PINF, 0, env->rounding, saturation);
    if (round_mode >= 0) e.rounding = round_mode;
    e.saturate = 1;
    cs = (uint32_t)sfp8_round_value(f, sign, sig, exp, sticky, &e, &fs);
    e.saturate = 0;
    (void)sfp8_round_value(f, sign, sig, exp, sticky, &e, &fn);
    if (fn & SFP8_FLAG_OVERFLOW) kase = neg ? C_BELOW : C_ABOVE;
    if (!f->is_signed && neg && cs == sfp8_default_nan(f)) kase = C_BELOW; /* below an unsigned range */
    return saturate(f, kase, cs, env->rounding, saturation);
}

uint32_t sfp8_p3109_project_value(const sfp8_format *f, int kind, int sign, uint64_t sig, int64_t exp, int sticky,
                                  const sfp8_env *env, int saturation, uint8_t *flags)
{
    return sfp8x_p3109_project_in(f, kind, sign, sig, exp, sticky, env, -1, saturation, flags);
}

unsigned sfp8x_p3109_run(int op, const sfp8_format *f, const sfp8_env *env, const uint32_t *random,
                         char *const data[], ptrdiff_t n, int saturation)
{
    int arity = valid(op) ? sfp8x_arity(p3109_ops[op].row) : 0, wide = f->bits > 8;
    sfp8_env e = *env;
    uint8_t fl = 0;
    /* a deterministic operation of an 8-bit format is a pure function of its one or two
       codes: each distinct operand (pair) is computed once per call, on demand */
    int memo = !wide && arity <= 2 && n >= 64 && env->rounding != SFP8_ROUND_STOCHASTIC;
    uint8_t *val = memo ? (uint8_t *)malloc((size_t)2 << (8 * arity)) : NULL, *done = val ? val + (1 << (8 * arity)) : NULL;
    if (done) memset(done, 0, (size_t)1 << (8 * arity));
    for (ptrdiff_t i = 0; i < n; i++) {
        uint32_t x[3] = {0, 0, 0}, r, key;
        for (int k = 0; k < arity; k++)
            x[k] = wide ? ((const uint16_t *)data[k])[i] : ((const uint8_t *)data[k])[i];
        if (random) e.random = random[i];
        key = x[0] | x[1] << 8;
        if (done && done[key]) {
            r = val[key];
        } else {
            r = sfp8_p3109_apply(op, f, x[0], x[1], x[2], &e, saturation, &fl);
            if (done && !fl) val[key] = (uint8_t)r, done[key] = 1;
        }
        if (wide)
            ((uint16_t *)data[arity])[i] = (uint16_t)r;
        else
            ((uint8_t *)data[arity])[i] = (uint8_t)r;
    }
    free(val);
    return fl;
}
