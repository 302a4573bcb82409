/*
 * The exact value before rounding, and the rounding decision, of one operation
 * (sfp8_op_explain / sfp8_convert_explain; softfp8.bits.<op>(..., explain=True)).
 *
 * Not a second rounding routine: round_pack (core.c), the core's one rounding
 * routine, reports each call to this thread's sink (sfp8x_explain_record) with its
 * exact input and the code it delivered.  The record splits that exact value at
 * the grid round_pack rounded on (the binade's quantum, or the subnormal quantum)
 * into kept bits, guard, round and sticky, and reads the decision off the core's
 * own result: its flags (overflow, underflow, invalid) and whether its code
 * differs from the truncation, which is the core again (sfp8_round_value toward
 * zero).  The last call of an operation is the one that made its result.
 */
#include <string.h>

#include "core_x.h"
#include "ops.h"

_Thread_local sfp8_explain *sfp8x_explain_sink = NULL;

static int msb64(uint64_t x) { return 63 - __builtin_clzll(x); }
static uint64_t bit(uint64_t x, int64_t k) { return k >= 0 && k < 64 ? (x >> k) & 1 : 0; }

void sfp8x_explain_record(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
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
    if (s <= 0) {
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
        sfp8_env tz = *env;
        uint8_t scratch = 0;
        uint64_t trunc;
        tz.rounding = SFP8_ROUND_TOWARD_ZERO;
        tz.isa = 0;
        trunc = sfp8_round_value(f, sign, sig, exp, sticky, &tz, &scratch);
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
    sfp8x_explain_sink = out;
    r = sfp8_convert(src, dst, a, env, &fl);
    sfp8x_explain_sink = NULL;
    if (out->decision != SFP8_DECIDE_SPECIAL && out->result != r) out->decision = SFP8_DECIDE_SPECIAL;
    out->result = (uint32_t)r;
    out->flags = fl;
    *flags |= fl;
    return r;
}
