/*
 * The exact value before rounding, and the rounding decision, of one operation
 * (sfp8_op_explain / sfp8_convert_explain; softfp8.bits.<op>(..., explain=True)).
 *
 * Not a second rounding routine: round_pack (core.c), the core's one rounding
 * routine, reports each call to this thread's sink (through the recorder,
 * sfp8x_explain_recorder, which this file sets to explain_record with the sink) with
 * its exact input and the code it delivered.  The record splits that exact value at
 * the grid round_pack rounded on (the binade's quantum, or the subnormal quantum)
 * into kept bits, guard, round and sticky, and reads the decision off the core's
 * own result: its flags (overflow, underflow, invalid) and whether its code
 * differs from the truncation, which is the core again (sfp8_round_value toward
 * zero).  The last call of an operation is the one that made its result.
 */
#include <string.h>

#include "core_x.h"
#include "ops.h"


static int msb64(uint64_t x) { return 63 - __builtin_clzll(x); }
static uint64_t bit(uint64_t x, int64_t k) { return k >= 0 && k < 64 ? (x >> k) & 1 : 0; }

/* The same exact value rounded again by the core (sfp8_round_value) in another mode or
 * tininess rule.  A sticky-truncated sig is first widened to 63 bits (the value's
 * interval only narrows; every mode decides alike with 32+ bits below the rounding
 * point, see sfp8_round_value), so that the sticky bit is never dropped. */
static uint64_t round_again(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                            int sticky, int rounding, int tininess_before, uint8_t *flags)
{
    sfp8_env e = *env;
    e.rounding = rounding;
    e.tininess_before = tininess_before;
    e.isa = 0;
    if (sticky && msb64(sig) < 62) {
        int k = 62 - msb64(sig);
        sig <<= k;
        exp -= k;
    }
    return sfp8_round_value(f, sign, sig, exp, sticky, &e, flags);
}

/* sig * 2^exp (+ sticky) with s = quantum - exp bits below the subnormal quantum
 * 2^q: strictly inside the Tesla gap (top * 2^q, (top + 2) * 2^q)?  Then *half
 * compares it with the gap's midpoint, as round_pack does. */
static int tesla_gap(uint64_t sig, int64_t s, int sticky, uint64_t top, int *half)
{
    uint64_t K = s > 0 ? sig >> s : sig << -s, disc = s > 0 ? sig & (((uint64_t)1 << s) - 1) : 0;
    unsigned __int128 num, den;
    int sh = s > 0 ? (int)s : 0;
    if (s < 0 && (sig >> (63 + s)) > 1) return 0; /* far above the gap */
    if (K < top || (K == top && disc == 0 && !sticky)) return 0;
    num = ((unsigned __int128)(K - top) << sh) | disc;
    den = (unsigned __int128)(top + 2) << sh;
    *half = 2 * num > den ? 1 : 2 * num < den ? -1 : (sticky ? 1 : 0);
    return 1;
}

static void explain_record(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                           int sticky, uint8_t raised, uint64_t result)
{
    sfp8_explain *out = sfp8x_explain_sink, rec;
    int M = f->man_bits, sub = f->subnormals, inexact;
    int64_t emin, s;
    if (out == NULL || sig == 0) return;
    sfp8x_explain_sink = NULL; /* the truncation below rounds too */
    memset(&rec, 0, sizeof rec);
    if (sub == SFP8_SUBNORMALS_TESLA && M == 0) sub = SFP8_SUBNORMALS_IEEE;
    emin = (int64_t)1 - f->bias - (sub == SFP8_SUBNORMALS_NOZERO);
    rec.sign = sign;
    rec.sig = sig;
    rec.exp = exp;
    rec.sticky_in = sticky != 0;
    rec.e = exp + msb64(sig);
    if (rec.e >= emin || sub == SFP8_SUBNORMALS_FLUSH || sub == SFP8_SUBNORMALS_NOZERO) {
        rec.quantum = rec.e - M;
    } else {
        rec.subnormal = 1;
        rec.quantum = sub == SFP8_SUBNORMALS_TESLA ? (int64_t)-f->bias - M : emin - M;
    }
    s = rec.quantum - exp; /* bits of sig below the rounding point */
    if (rec.subnormal && sub == SFP8_SUBNORMALS_TESLA && s < 64 && s > -64 && M < 62 &&
        tesla_gap(sig, s, sticky, ((uint64_t)1 << M) - 1, &rec.half)) {
        rec.gap = 1; /* neighbours top * 2^q and 2^emin = (top + 2) * 2^q, as round_pack */
        rec.kept = ((uint64_t)1 << M) - 1;
        inexact = 1;
    } else if (s <= 0) {
        rec.kept = s <= -64 ? 0 : sig << -s;
        rec.half = -1;
        inexact = 0;
    } else {
        uint64_t below;
        rec.kept = s >= 64 ? 0 : sig >> s;
        rec.guard = (int)bit(sig, s - 1);
        rec.round = (int)bit(sig, s - 2);
        below = s >= 2 ? (s - 2 >= 64 ? sig : sig & (((uint64_t)1 << (s - 2)) - 1)) : 0;
        rec.sticky = below != 0 || rec.sticky_in;
        rec.half = rec.guard ? ((rec.round || rec.sticky) ? 1 : 0) : -1;
        inexact = rec.guard || rec.round || rec.sticky;
    }
    if (raised & SFP8_FLAG_INEXACT) inexact = 1; /* the core's word (e.g. a Tesla gap it saw) */
    rec.tiny = (raised & SFP8_FLAG_UNDERFLOW) || (rec.subnormal && !inexact);
    rec.random_used = inexact && env->rounding == SFP8_ROUND_STOCHASTIC;
    rec.result = result;
    rec.flags = raised;
    if (raised & SFP8_FLAG_INVALID) {
        rec.decision = SFP8_DECIDE_SPECIAL; /* e.g. a negative value in an unsigned format */
    } else if (raised & SFP8_FLAG_OVERFLOW) {
        rec.decision = SFP8_DECIDE_OVERFLOW;
    } else if (!inexact) {
        rec.decision = SFP8_DECIDE_EXACT;
    } else if (sub == SFP8_SUBNORMALS_FLUSH && (raised & SFP8_FLAG_UNDERFLOW) && rec.e < emin) {
        rec.decision = SFP8_DECIDE_FLUSH;
    } else {
        uint8_t scratch = 0;
        uint64_t trunc = round_again(f, env, sign, sig, exp, sticky, SFP8_ROUND_TOWARD_ZERO, env->tininess_before,
                                     &scratch);
        rec.decision = trunc == result ? SFP8_DECIDE_DOWN : SFP8_DECIDE_UP;
        if (rec.decision == SFP8_DECIDE_UP)
            rec.carry = rec.subnormal ? rec.kept + 1 == ((uint64_t)1 << M)
                                      : rec.kept + 1 == ((uint64_t)1 << (M + 1));
    }
    *out = rec;
    sfp8x_explain_sink = out;
}

uint32_t sfp8_op_explain(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env,
                         uint8_t *flags, sfp8_explain *out)
{
    uint8_t fl = 0;
    uint32_t r;
    memset(out, 0, sizeof *out);
    sfp8x_explain_recorder = explain_record;
    sfp8x_explain_sink = out;
    r = sfp8_op_apply(op, f, a, b, c, env, &fl);
    sfp8x_explain_sink = NULL;
    /* a later step (a special-value rule, an ISA convention) replaced the rounded code */
    if (out->decision != SFP8_DECIDE_SPECIAL && out->result != r) out->decision = SFP8_DECIDE_SPECIAL;
    out->result = r;
    out->flags = fl;
    *flags |= fl;
    return r;
}

uint64_t sfp8_convert_explain(const sfp8_format *src, const sfp8_format *dst, uint64_t a, const sfp8_env *env,
                              uint8_t *flags, sfp8_explain *out)
{
    uint8_t fl = 0;
    uint64_t r;
    memset(out, 0, sizeof *out);
    sfp8x_explain_recorder = explain_record;
    sfp8x_explain_sink = out;
    r = sfp8_convert(src, dst, a, env, &fl);
    sfp8x_explain_sink = NULL;
    if (out->decision != SFP8_DECIDE_SPECIAL && out->result != r) out->decision = SFP8_DECIDE_SPECIAL;
    out->result = (uint32_t)r;
    out->flags = fl;
    *flags |= fl;
    return r;
}

/* ---- coverage (sfp8_op_cover / sfp8_convert_cover) ---- */

typedef struct cover_limits {
    uint64_t sign_bit, max_mag, min_normal;
    int64_t emin, e_max;  /* binade of the smallest normal, of the largest finite */
    uint64_t kept_max;    /* the largest finite magnitude's significand (M+1 bits) */
} cover_limits;

static void cover_limits_of(const sfp8_format *f, cover_limits *L)
{
    int M = f->man_bits;
    uint64_t field;
    L->sign_bit = f->is_signed ? (uint64_t)1 << (f->bits - 1) : 0;
    L->max_mag = f->bits > 16 ? (((((uint64_t)1 << f->exp_bits) - 2) << M) | (((uint64_t)1 << M) - 1))
                              : sfp8_max_code(f); /* binary32 / binary64: IEEE */
    L->min_normal = sfp8_min_normal_code(f);
    L->emin = (int64_t)1 - f->bias - (f->subnormals == SFP8_SUBNORMALS_NOZERO);
    field = L->max_mag >> M;
    L->e_max = (int64_t)field - f->bias; /* field 0 of a nozero format is 2^-bias too */
    L->kept_max = ((uint64_t)1 << M) | (L->max_mag & (((uint64_t)1 << M) - 1));
}

/* The situation mask of one element from its record (filled by round_pack) and the
 * final result r of the operation. */
static unsigned situation(const sfp8_format *f, const sfp8_env *env, const cover_limits *L, const sfp8_explain *x,
                          uint64_t r)
{
    unsigned s;
    int inexact, edge;
    uint64_t mag = r & ~L->sign_bit;
    if (x->sig == 0 || x->decision == SFP8_DECIDE_SPECIAL || x->result != r) return 0;
    s = SFP8_SIT_ROUNDED;
    inexact = x->decision != SFP8_DECIDE_EXACT;
    edge = inexact && !x->subnormal && x->e == L->e_max && x->kept == L->kept_max;
    if (!inexact) s |= SFP8_SIT_EXACT;
    if (edge) s |= SFP8_SIT_OVF_EDGE;
    if (inexact && (edge || x->decision == SFP8_DECIDE_DOWN || x->decision == SFP8_DECIDE_UP))
        s |= x->half < 0 ? SFP8_SIT_BELOW : x->half == 0 ? SFP8_SIT_TIE : SFP8_SIT_ABOVE;
    if (x->decision == SFP8_DECIDE_UP) {
        s |= SFP8_SIT_UP;
        if (x->carry) s |= SFP8_SIT_CARRY;
    }
    if (x->gap) s |= SFP8_SIT_GAP;
    if (x->e < L->emin) {
        s |= SFP8_SIT_TINY;
        if (mag == L->min_normal) s |= SFP8_SIT_TINY_EDGE;
        if (inexact) {
            uint8_t fl = 0;
            round_again(f, env, x->sign, x->sig, x->exp, x->sticky_in, env->rounding, 0, &fl);
            if (fl & SFP8_FLAG_UNDERFLOW) s |= SFP8_SIT_TINY_AFTER;
        }
    }
    return s;
}

/* Element i of op in the modes modes[0..nm-1] (results at [k*n + i]).  The first mode
 * runs the operation with the sink set; when its result is the rounding routine's
 * code (a record, no ISA convention) and the operation's exact value does not depend
 * on the mode (mode_free_value), the other modes round the same exact value again
 * (round_pack reports each to a fresh record).  Otherwise the operation runs
 * again in each mode (operations outside mode_free_value run again in every mode).
 * tests/tools/test_coverage.py checks results and flags
 * against softfp8.bits in every mode. */
/* Operations whose exact value handed to round_pack does not depend on the rounding
 * mode: exact integer arithmetic, one rounding.  Not round_integral (its integer
 * depends on the mode) nor the elementary functions (their sticky-truncated value is
 * computed to a mode-dependent precision); those run again in each mode. */
static int mode_free_value(int op)
{
    switch (op) {
    case X_ADD: case X_SUB: case X_MUL: case X_DIV: case X_FMA: case X_SQRT: case X_SQUARE: case X_RECIP:
    case X_FLOORDIV: case X_REM: case X_FMOD: return 1;
    default: return 0;
    }
}

static void cover_one(int op, const sfp8_format *f, const sfp8_env *env, const cover_limits *L, int nm,
                      const int *modes, long n, long i, uint32_t a, uint32_t b, uint32_t c, uint32_t *result,
                      uint8_t *flags, uint16_t *sit)
{
    sfp8_explain x0;
    sfp8_env e = *env;
    uint8_t fl = 0;
    uint32_t r;
    int reuse;
    e.rounding = modes[0];
    memset(&x0, 0, sizeof x0);
    sfp8x_explain_recorder = explain_record;
    sfp8x_explain_sink = &x0;
    r = sfp8_op_apply(op, f, a, b, c, &e, &fl);
    sfp8x_explain_sink = NULL;
    result[i] = r;
    flags[i] = fl;
    sit[i] = (uint16_t)situation(f, &e, L, &x0, r);
    reuse = sit[i] != 0 && !env->isa && mode_free_value(op);
    for (int k = 1; k < nm; k++) {
        sfp8_explain x;
        e.rounding = modes[k];
        fl = 0;
        memset(&x, 0, sizeof x);
        sfp8x_explain_recorder = explain_record;
        sfp8x_explain_sink = &x;
        if (reuse) {
            int sticky = x0.sticky_in;
            uint64_t sig = x0.sig;
            int64_t exp = x0.exp;
            if (sticky && msb64(sig) < 62) { /* as round_again */
                int sh = 62 - msb64(sig);
                sig <<= sh;
                exp -= sh;
            }
            r = (uint32_t)sfp8_round_value(f, x0.sign, sig, exp, sticky, &e, &fl);
            /* a flag raised before the rounding (denormal, invalid of a quiet step) */
            fl |= flags[i] & (uint8_t)~(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW | SFP8_FLAG_OVERFLOW);
        } else {
            r = sfp8_op_apply(op, f, a, b, c, &e, &fl);
        }
        sfp8x_explain_sink = NULL;
        result[k * n + i] = r;
        flags[k * n + i] = fl;
        sit[k * n + i] = (uint16_t)situation(f, &e, L, &x, r);
    }
}

void sfp8_op_cover(int op, const sfp8_format *f, const sfp8_env *env, int nmodes, const int *modes, long n,
                   const uint32_t *a, const uint32_t *b, const uint32_t *c, const uint32_t *random,
                   uint32_t *result, uint8_t *flags, uint16_t *sit)
{
    cover_limits L;
    sfp8_env e = *env;
    int arity = sfp8_op_arity(op);
    if (nmodes <= 0) {
        nmodes = 1;
        modes = &env->rounding;
    }
    cover_limits_of(f, &L);
    for (long i = 0; i < n; i++) {
        if (random) e.random = random[i];
        cover_one(op, f, &e, &L, nmodes, modes, n, i, a[i], arity >= 2 ? b[i] : 0, arity >= 3 ? c[i] : 0,
                  result, flags, sit);
    }
}

void sfp8_convert_cover(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, long n,
                        const uint64_t *a, const uint32_t *random, uint64_t *result, uint8_t *flags,
                        uint16_t *sit)
{
    cover_limits L;
    sfp8_env e = *env;
    cover_limits_of(dst, &L);
    for (long i = 0; i < n; i++) {
        sfp8_explain x;
        uint8_t fl = 0;
        uint64_t r;
        if (random) e.random = random[i];
        memset(&x, 0, sizeof x);
        sfp8x_explain_recorder = explain_record;
        sfp8x_explain_sink = &x;
        r = sfp8_convert(src, dst, a[i], &e, &fl);
        sfp8x_explain_sink = NULL;
        result[i] = r;
        flags[i] = fl;
        sit[i] = (uint16_t)situation(dst, &e, &L, &x, r);
    }
}
