/* The rounder: binary64 values (exact, or rounded to odd at 53 bits) rounded
 * into formats with IEEE subnormals (16-bit formats, binary32), the core's
 * round_pack specialised per rounding mode (round64.h, round_f64).  Shared by
 * the arith16 and cast16 families and the matrix engine (fast.h).
 *
 * DERIVED from core.c round_pack: sfp8f_rounder / round_f64 /
 * sfp8f_round_doubles are round_pack specialised to a binary64 source and
 * IEEE subnormals, per rounding mode; overflow results and their flags come
 * from the core.  Proven equal by tests/harness/test_harness.py::test_entry [arith16, cast16],
 * ::test_16bit_arith_configs (16-bit arithmetic), ::test_matmul_paths (binary32
 * results), and tests/harness/test_harness.py::test_entry [arith16, cast16] (casts). */
#include <string.h>

#include "fast_impl.h"
#include "round64.h"
#include "simd.h"

int sfp8f_rounder(const sfp8_format *f, const sfp8_env *env, sfp8f_rnd *r)
{
    if (!sfp8f_usable_env(env) || !f->is_signed || f->subnormals != SFP8_SUBNORMALS_IEEE ||
        f->specials == SFP8_SPECIALS_FNUZ || f->specials == SFP8_SPECIALS_P3109 || f->man_bits < 1 || f->man_bits > 23 || f->bits > 32 ||
        f->bias < -900 || f->bias > 900 || (1 << f->exp_bits) - f->bias > 900 ||
        sfp8_max_code(f) < ((uint64_t)1 << f->man_bits)) /* no normal binade: the core's (from_float8.c) */
        return 0;
    r->M = f->man_bits;
    r->emin = 1 - f->bias;
    r->tb = env->tininess_before != 0;
    r->rounding = env->rounding;
    r->maxmag = sfp8_max_code(f);
    r->signbit = (uint32_t)1 << (f->bits - 1);
    for (int s = 0; s < 2; s++) { /* overflow results, from the core's rounding routine */
        uint8_t fl = 0;
        uint32_t c = (uint32_t)sfp8_round_value(f, s, 1, 4000, 0, env, &fl);
        if (s) r->ovf1 = c, r->ovf_fl1 = fl;
        else r->ovf0 = c, r->ovf_fl0 = fl;
    }
    return 1;
}

static inline AINL unsigned round_doubles_loop(int MODE, const sfp8f_rnd *r,
                                                                         const double *d, ptrdiff_t n,
                                                                         uint32_t *out)
{
    const sfp8f_rnd p = *r;
    unsigned fl = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &d[i], 8);
        out[i] = (b << 1) ? round_f64(MODE, &p, b, &fl) : 0; /* zeros: the caller's */
    }
    return fl;
}

unsigned sfp8f_round_doubles(const sfp8f_rnd *r, const double *d, ptrdiff_t n, uint32_t *out)
{
    switch (r->rounding) {
    case SFP8_ROUND_NEAREST_EVEN: return round_doubles_loop(SFP8_ROUND_NEAREST_EVEN, r, d, n, out);
    case SFP8_ROUND_NEAREST_AWAY: return round_doubles_loop(SFP8_ROUND_NEAREST_AWAY, r, d, n, out);
    case SFP8_ROUND_TOWARD_ZERO: return round_doubles_loop(SFP8_ROUND_TOWARD_ZERO, r, d, n, out);
    case SFP8_ROUND_UPWARD: return round_doubles_loop(SFP8_ROUND_UPWARD, r, d, n, out);
    case SFP8_ROUND_DOWNWARD: return round_doubles_loop(SFP8_ROUND_DOWNWARD, r, d, n, out);
    default: return round_doubles_loop(SFP8_ROUND_TO_ODD, r, d, n, out);
    }
}
