/*
 * softfp8 exact core.
 *
 * Structure: unpack (code -> class, sign, integer significand, exponent)
 * -> exact integer arithmetic -> round_pack(), the only routine that rounds or
 * raises overflow / underflow / inexact.  Values are sig * 2^exp with sig an
 * unsigned integer; a `sticky` flag says the exact value lies strictly between
 * sig and sig + 1 units.  Callers that set sticky leave at least 32 bits below
 * the rounding point, so every rounding decision (ties, stochastic fraction with
 * up to 32 random bits) is the same as for the exact value.
 */
#include "softfp8/softfp8.h"

#include <stddef.h>

#include "rng.h"
#include "core_x.h"

typedef unsigned __int128 u128;

/* ------------------------------------------------------------------------ */
/* Formats                                                                   */
/* ------------------------------------------------------------------------ */

#define FMT(bits, sgn, e, m, bias, sp, sub, sat) {bits, sgn, e, m, bias, sp, sub, sat}

const sfp8_preset sfp8_presets[SFP8_NUM_PRESETS] = {
    {"e4m3",        FMT(8, 1, 4, 3, 7,   SFP8_SPECIALS_FN,   SFP8_SUBNORMALS_IEEE,  0), 0},
    {"e5m2",        FMT(8, 1, 5, 2, 15,  SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE,  0), 0},
    {"e4m3fnuz",    FMT(8, 1, 4, 3, 8,   SFP8_SPECIALS_FNUZ, SFP8_SUBNORMALS_IEEE,  0), 0},
    {"e5m2fnuz",    FMT(8, 1, 5, 2, 16,  SFP8_SPECIALS_FNUZ, SFP8_SUBNORMALS_IEEE,  0), 0},
    {"cfloat8_143", FMT(8, 1, 4, 3, 7,   SFP8_SPECIALS_NONE, SFP8_SUBNORMALS_TESLA, 1), 1},
    {"cfloat8_152", FMT(8, 1, 5, 2, 15,  SFP8_SPECIALS_NONE, SFP8_SUBNORMALS_TESLA, 1), 1},
    {"shp",         FMT(16, 1, 5, 10, 15, SFP8_SPECIALS_NONE, SFP8_SUBNORMALS_TESLA, 1), 1},
    {"uhp",         FMT(16, 0, 6, 10, 31, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_FLUSH, 0), 0},
    {"hfp8_143",    FMT(8, 1, 4, 3, 4,   SFP8_SPECIALS_NONE, SFP8_SUBNORMALS_IEEE,  1), 0},
    {"hfp8_152",    FMT(8, 1, 5, 2, 15,  SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE,  0), 0},
    {"hfp16_169",   FMT(16, 1, 6, 9, 31, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE,  0), 0},
    {"float16",     FMT(16, 1, 5, 10, 15, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE, 0), 0},
    {"bfloat16",    FMT(16, 1, 8, 7, 127, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE, 0), 0},
    {"float8_e4m3", FMT(8, 1, 4, 3, 7,   SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE,  0), 0},
    {"float8_e3m4", FMT(8, 1, 3, 4, 3,   SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE,  0), 0},
    {"float8_e4m3b11fnuz", FMT(8, 1, 4, 3, 11, SFP8_SPECIALS_FNUZ, SFP8_SUBNORMALS_IEEE, 0), 0},
    /* OCP MX v1.0 element and scale formats (ml_dtypes' names) and NVFP4's scale */
    {"float4_e2m1fn", FMT(4, 1, 2, 1, 1, SFP8_SPECIALS_NONE, SFP8_SUBNORMALS_IEEE, 1), 0},
    {"float6_e2m3fn", FMT(6, 1, 2, 3, 1, SFP8_SPECIALS_NONE, SFP8_SUBNORMALS_IEEE, 1), 0},
    {"float6_e3m2fn", FMT(6, 1, 3, 2, 3, SFP8_SPECIALS_NONE, SFP8_SUBNORMALS_IEEE, 1), 0},
    {"float8_e8m0fnu", FMT(8, 0, 8, 0, 127, SFP8_SPECIALS_FN, SFP8_SUBNORMALS_NOZERO, 0), 0},
    {"ue4m3",       FMT(7, 0, 4, 3, 7,   SFP8_SPECIALS_FN,   SFP8_SUBNORMALS_IEEE,  0), 0},
};

const sfp8_format sfp8_binary32 = FMT(32, 1, 8, 23, 127, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE, 0);
const sfp8_format sfp8_binary64 = FMT(64, 1, 11, 52, 1023, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE, 0);

static inline uint64_t mask64(int n) { return n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1); }
static inline uint64_t code_mask(const sfp8_format *f) { return mask64(f->bits); }
static inline uint64_t exp_ones(const sfp8_format *f) { return mask64(f->exp_bits); }
static inline uint64_t man_mask(const sfp8_format *f) { return mask64(f->man_bits); }
static inline uint64_t sign_bit(const sfp8_format *f) { return (uint64_t)1 << (f->bits - 1); }

/* Largest finite magnitude code (sign bit clear). */
static uint64_t max_mag(const sfp8_format *f)
{
    uint64_t eo = exp_ones(f), mm = man_mask(f);
    int m = f->man_bits;
    switch (f->specials) {
    case SFP8_SPECIALS_IEEE:
        return ((eo - 1) << m) | mm;
    case SFP8_SPECIALS_FN:
        if (m == 0) return (eo - 1);
        return (eo << m) | (mm - 1);
    case SFP8_SPECIALS_P3109: /* the top magnitude code(s) hold inf (and NaN if unsigned) */
        return ((eo << m) | mm) - (f->is_signed ? 1 : 2);
    default: /* fnuz, none */
        return (eo << m) | mm;
    }
}

/* Schemes without -0: the "-0" code is NaN (fnuz) or NaN with inf codes (p3109). */
static inline int no_negzero(const sfp8_format *f)
{
    return f->specials == SFP8_SPECIALS_FNUZ || f->specials == SFP8_SPECIALS_P3109;
}

int sfp8_validate(const sfp8_format *f)
{
    if (f->is_signed != 0 && f->is_signed != 1) return SFP8_ESIGNED;
    if (f->exp_bits < 1) return SFP8_EEXP_BITS;
    if (f->man_bits < 0) return SFP8_EMAN_BITS;
    if (f->bits > 16 || f->bits != f->is_signed + f->exp_bits + f->man_bits) return SFP8_EBITS;
    if (f->bias < -(1 << 20) || f->bias > (1 << 20)) return SFP8_EBIAS;
    if (f->specials < SFP8_SPECIALS_IEEE || f->specials > SFP8_SPECIALS_P3109) return SFP8_ESPECIALS;
    if (f->subnormals < SFP8_SUBNORMALS_IEEE || f->subnormals > SFP8_SUBNORMALS_NOZERO)
        return SFP8_ESUBNORMALS;
    /* no zero: an exact zero result is delivered as the NaN, which must exist
       apart from the codes of the normal binades (not fnuz's "-0" code) */
    if (f->subnormals == SFP8_SUBNORMALS_NOZERO && f->specials != SFP8_SPECIALS_IEEE &&
        f->specials != SFP8_SPECIALS_FN)
        return SFP8_ESUBNORMALS;
    if (f->saturate != 0 && f->saturate != 1) return SFP8_ESATURATE;
    /* ieee needs a NaN code (mantissa != 0); fnuz's NaN is the negative-zero code */
    if (f->specials == SFP8_SPECIALS_IEEE && f->man_bits < 1) return SFP8_EMAN_BITS;
    if (f->specials == SFP8_SPECIALS_FNUZ && !f->is_signed) return SFP8_ESIGNED;
    /* p3109: NaN and inf codes above at least one positive finite number */
    if (f->specials == SFP8_SPECIALS_P3109 && ((exp_ones(f) << f->man_bits) | man_mask(f)) < (f->is_signed ? 2u : 3u))
        return SFP8_EEXP_BITS;
    /* the format must hold at least one positive finite number */
    if (max_mag(f) == 0) return SFP8_EEXP_BITS;
    return SFP8_OK;
}

const char *sfp8_error_field(int err)
{
    switch (err) {
    case SFP8_OK: return "";
    case SFP8_EBITS: return "bits";
    case SFP8_ESIGNED: return "signed";
    case SFP8_EEXP_BITS: return "exp_bits";
    case SFP8_EMAN_BITS: return "man_bits";
    case SFP8_EBIAS: return "bias";
    case SFP8_ESPECIALS: return "specials";
    case SFP8_ESUBNORMALS: return "subnormals";
    case SFP8_ESATURATE: return "saturate";
    case SFP8_ENAME: return "name";
    default: return "unknown";
    }
}

/* ------------------------------------------------------------------------ */
/* Unpack                                                                    */
/* ------------------------------------------------------------------------ */

/* the decoded operand is core_x.h's sfp8x_val; its classes under short names */
enum { K_ZERO = SFP8X_ZERO, K_FINITE = SFP8X_FINITE, K_INF = SFP8X_INF, K_NAN = SFP8X_NAN };
typedef sfp8x_val unpacked;

static inline int msb64(uint64_t x) { return 63 - __builtin_clzll(x); }

static inline int is_nan_code(const sfp8_format *f, uint64_t a)
{
    uint64_t e = (a >> f->man_bits) & exp_ones(f), m = a & man_mask(f);
    switch (f->specials) {
    case SFP8_SPECIALS_IEEE: return e == exp_ones(f) && m != 0;
    case SFP8_SPECIALS_FN: return e == exp_ones(f) && m == man_mask(f);
    case SFP8_SPECIALS_FNUZ: return a == sign_bit(f);
    case SFP8_SPECIALS_P3109: return a == (f->is_signed ? sign_bit(f) : code_mask(f));
    default: return 0;
    }
}

/* The magnitude code of infinity (ieee and p3109 schemes). */
static inline uint64_t inf_mag(const sfp8_format *f)
{
    return f->specials == SFP8_SPECIALS_P3109 ? max_mag(f) + 1 : exp_ones(f) << f->man_bits;
}

static void unpack(const sfp8_format *f, uint64_t a, unpacked *u, uint8_t *flags)
{
    int m = f->man_bits;
    uint64_t e, mant;
#ifdef SFP8_PUBLIC_CHECKS /* libsoftfp8: a code above the width is a bad call */
    if (a & ~code_mask(f)) *flags |= SFP8_FLAG_BADCALL;
#endif
    a &= code_mask(f);
    u->code = a;
    u->snan = 0;
    u->sig = 0;
    u->exp = 0;
    u->sign = f->is_signed ? (int)((a >> (f->bits - 1)) & 1) : 0;
    e = (a >> m) & exp_ones(f);
    mant = a & man_mask(f);
    if (is_nan_code(f, a)) {
        u->kind = K_NAN;
        if (f->specials == SFP8_SPECIALS_IEEE) u->snan = !((mant >> (m - 1)) & 1);
        if (no_negzero(f)) u->sign = 0;
        return;
    }
    if ((f->specials == SFP8_SPECIALS_IEEE && e == exp_ones(f)) ||
        (f->specials == SFP8_SPECIALS_P3109 && (a & ~(f->is_signed ? sign_bit(f) : 0)) == inf_mag(f))) {
        u->kind = K_INF;
        return;
    }
    if (e == 0 && f->subnormals != SFP8_SUBNORMALS_NOZERO) {
        if (mant == 0) {
            u->kind = K_ZERO;
            return;
        }
        *flags |= SFP8_FLAG_DENORMAL;
        switch (f->subnormals) {
        case SFP8_SUBNORMALS_FLUSH:
            u->kind = K_ZERO;
            return;
        case SFP8_SUBNORMALS_TESLA:
            u->kind = K_FINITE;
            u->sig = mant;
            u->exp = (int64_t)-f->bias - m;
            return;
        default:
            u->kind = K_FINITE;
            u->sig = mant;
            u->exp = (int64_t)1 - f->bias - m;
            return;
        }
    }
    u->kind = K_FINITE;
    u->sig = ((uint64_t)1 << m) | mant;
    u->exp = (int64_t)e - f->bias - m;
}

/* ------------------------------------------------------------------------ */
/* Special results                                                           */
/* ------------------------------------------------------------------------ */

static uint64_t default_nan(const sfp8_format *f)
{
    switch (f->specials) {
    case SFP8_SPECIALS_IEEE:
        return (exp_ones(f) << f->man_bits) | ((uint64_t)1 << (f->man_bits - 1));
    case SFP8_SPECIALS_FN:
        return (exp_ones(f) << f->man_bits) | man_mask(f);
    case SFP8_SPECIALS_FNUZ:
        return sign_bit(f);
    case SFP8_SPECIALS_P3109:
        return f->is_signed ? sign_bit(f) : code_mask(f);
    default:
        return max_mag(f);
    }
}

/* A NaN produced from non-NaN operands (invalid operation). */
static uint64_t invalid_nan(const sfp8_format *f, uint8_t *flags)
{
    *flags |= SFP8_FLAG_INVALID;
    return default_nan(f);
}

static inline uint64_t with_sign(const sfp8_format *f, int sign, uint64_t mag)
{
    return (sign && f->is_signed) ? (mag | sign_bit(f)) : mag;
}

/* A zero result; formats with no zero (nozero) deliver their NaN with invalid:
 * zero is outside their value set (docs/semantics.md, "The MX and NVFP4 presets"). */
static uint64_t pack_zero(const sfp8_format *f, int sign, uint8_t *flags)
{
    if (f->subnormals == SFP8_SUBNORMALS_NOZERO) return invalid_nan(f, flags);
    if (no_negzero(f)) sign = 0;
    return with_sign(f, sign, 0);
}

static inline int saturating(const sfp8_format *f, const sfp8_env *env)
{
    return env->saturate || f->specials == SFP8_SPECIALS_NONE;
}

/* An exact infinity (infinite operand or x/0): no flags beyond invalid for a
 * negative infinity in an unsigned format. */
static uint64_t pack_inf(const sfp8_format *f, const sfp8_env *env, int sign, uint8_t *flags)
{
    if (sign && !f->is_signed) return invalid_nan(f, flags);
    if (saturating(f, env)) return with_sign(f, sign, max_mag(f));
    switch (f->specials) {
    case SFP8_SPECIALS_IEEE: return with_sign(f, sign, exp_ones(f) << f->man_bits);
    case SFP8_SPECIALS_FN: return with_sign(f, sign, (exp_ones(f) << f->man_bits) | man_mask(f));
    case SFP8_SPECIALS_P3109: return with_sign(f, sign, inf_mag(f));
    default: return sign_bit(f); /* fnuz NaN */
    }
}

/* Propagate NaN operand u (of format src) into format dst. */
static uint64_t propagate_nan(const sfp8_format *src, const unpacked *u, const sfp8_format *dst,
                              uint8_t *flags)
{
    uint64_t payload;
    if (u->snan) *flags |= SFP8_FLAG_INVALID;
    switch (dst->specials) {
    case SFP8_SPECIALS_NONE:
        *flags |= SFP8_FLAG_INVALID;
        return max_mag(dst);
    case SFP8_SPECIALS_FNUZ:
    case SFP8_SPECIALS_P3109:
        return default_nan(dst);
    case SFP8_SPECIALS_FN:
        return with_sign(dst, u->sign, (exp_ones(dst) << dst->man_bits) | man_mask(dst));
    default:
        break;
    }
    if (!dst->is_signed) return default_nan(dst);
    /* ieee destination: keep the sign and the top payload bits, set quiet */
    if (src->specials == SFP8_SPECIALS_IEEE || src->specials == SFP8_SPECIALS_FN) {
        payload = u->code & man_mask(src);
        if (src->man_bits >= dst->man_bits)
            payload >>= (src->man_bits - dst->man_bits);
        else
            payload <<= (dst->man_bits - src->man_bits);
    } else {
        payload = 0;
    }
    payload |= (uint64_t)1 << (dst->man_bits - 1);
    return with_sign(dst, u->sign, (exp_ones(dst) << dst->man_bits) | (payload & man_mask(dst)));
}

/* ------------------------------------------------------------------------ */
/* Rounding                                                                  */
/* ------------------------------------------------------------------------ */

/* The position of an exact magnitude x between its lower neighbour lo and its
 * upper neighbour hi, as needed by every rounding mode. */
typedef struct {
    int inexact; /* x != lo                                  */
    int half;    /* sign of (x - lo) - (hi - lo)/2: -1, 0, 1  */
    uint64_t t;  /* floor(f * 2^N), f = (x - lo)/(hi - lo)    */
} frac_info;

/* Split x = (sig + sticky*delta) * 2^e at quantum 2^(e+s): K = floor(x / 2^(e+s))
 * and the fraction towards K+1. */
static uint64_t split_pow2(uint64_t sig, int64_t s, int sticky, int nbits, frac_info *r)
{
    uint64_t K;
    u128 disc, half;
    if (s <= 0) {
        r->inexact = 0;
        r->half = -1;
        r->t = 0;
        return s <= -64 ? 0 : sig << (-s);
    }
    if (s > 100) { /* fraction below 2^-36: only "tiny, non-zero" matters */
        sig = 1;
        s = 100;
    }
    if (s >= 64) {
        K = 0;
        disc = sig;
    } else {
        K = sig >> s;
        disc = sig & mask64((int)s);
    }
    r->inexact = disc != 0 || sticky;
    half = (u128)1 << (s - 1);
    r->half = disc > half ? 1 : disc < half ? -1 : (sticky ? 1 : 0);
    if (s >= nbits)
        r->t = (uint64_t)(disc >> (s - nbits));
    else
        r->t = (uint64_t)(disc << (nbits - s));
    return K;
}

static int round_up(const sfp8_env *env, int neg, int lo_odd, const frac_info *r)
{
    if (!r->inexact) return 0;
    switch (env->rounding) {
    case SFP8_ROUND_NEAREST_EVEN: return r->half > 0 || (r->half == 0 && lo_odd);
    case SFP8_ROUND_NEAREST_AWAY: return r->half >= 0;
    case SFP8_ROUND_TOWARD_ZERO: return 0;
    case SFP8_ROUND_UPWARD: return !neg;
    case SFP8_ROUND_DOWNWARD: return neg;
    case SFP8_ROUND_TO_ODD: return !lo_odd;
    case SFP8_ROUND_TIES_TOWARD_ZERO: return r->half > 0;
    case SFP8_ROUND_STOCHASTIC: {
        int n = env->sr_bits;
        uint64_t R = (uint64_t)(env->random & (uint32_t)mask64(n));
        return r->t + R >= ((uint64_t)1 << n);
    }
    default: return 0;
    }
}

static inline int sr_bits_of(const sfp8_env *env)
{
    int n = env->sr_bits;
    return (env->rounding == SFP8_ROUND_STOCHASTIC && n >= 1 && n <= 32) ? n : 32;
}

/* Overflow: deliver per rounding mode and saturation (SPEC section 4). */
static uint64_t overflow_result(const sfp8_format *f, const sfp8_env *env, int sign, uint8_t *flags)
{
    int to_inf;
    *flags |= SFP8_FLAG_OVERFLOW | SFP8_FLAG_INEXACT;
    switch (env->rounding) {
    case SFP8_ROUND_TOWARD_ZERO:
    case SFP8_ROUND_TO_ODD: to_inf = 0; break;
    case SFP8_ROUND_UPWARD: to_inf = !sign; break;
    case SFP8_ROUND_DOWNWARD: to_inf = sign; break;
    default: to_inf = 1; break;
    }
    if (!to_inf || saturating(f, env)) return with_sign(f, sign, max_mag(f));
    return pack_inf(f, env, sign, flags);
}

/*
 * The one rounding routine.  Exact magnitude x = (sig + sticky*delta) * 2^exp,
 * 0 < delta < 1, sig != 0; sign applies.  Rounds once into f and raises
 * overflow, underflow and inexact.
 */
/* the explanation's sink and recorder (core_x.h): set together by core_explain.c */
_Thread_local sfp8_explain *sfp8x_explain_sink = NULL;
_Thread_local sfp8x_explain_fn sfp8x_explain_recorder = NULL;

static uint64_t round_pack_body(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig,
                                int64_t exp, int sticky, uint8_t *flags);
static uint64_t round_pack(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig,
                           int64_t exp, int sticky, uint8_t *flags)
{
    uint8_t before = *flags;
    uint64_t r = round_pack_body(f, env, sign, sig, exp, sticky, flags);
    if (sfp8x_explain_sink) sfp8x_explain_recorder(f, env, sign, sig, exp, sticky, (uint8_t)(*flags & ~before), r);
    return r;
}

static uint64_t round_pack_body(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig,
                                int64_t exp, int sticky, uint8_t *flags)
{
    const int M = f->man_bits;
    const int nbits = sr_bits_of(env);
    int sub = f->subnormals;
    /* the smallest normal binade: exponent field 1, or field 0 with no zero */
    const int64_t emin = (int64_t)1 - f->bias - (sub == SFP8_SUBNORMALS_NOZERO);
    int msb = msb64(sig);
    int64_t Ex = exp + msb; /* x in [2^Ex, 2^(Ex+1)) */
    int64_t s_unb = msb - M;
    frac_info fu, fr;
    uint64_t Ku, mag;
    int up_u, carry_u, tiny, inexact;
    uint8_t out = 0;

    if (sub == SFP8_SUBNORMALS_TESLA && M == 0) sub = SFP8_SUBNORMALS_IEEE; /* same value set */

    /* rounding on the unbounded-exponent grid (precision M+1) */
    Ku = split_pow2(sig, s_unb, sticky, nbits, &fu);
    {
        int lo_odd = M > 0 ? (int)(Ku & 1) : (int)((Ex + f->bias) & 1);
        up_u = round_up(env, sign, lo_odd, &fu);
    }
    carry_u = (Ku + (uint64_t)up_u) == ((uint64_t)1 << (M + 1));
    if (env->tininess_before)
        tiny = Ex < emin;
    else
        tiny = Ex < emin - 1 || (Ex == emin - 1 && !carry_u);

    if (sub == SFP8_SUBNORMALS_NOZERO) {
        /* no zero: a negative value in an unsigned format is out of the domain;
           a non-zero magnitude below the smallest value 2^emin has no lower
           neighbour and is delivered as the smallest in every mode (inexact,
           underflow if tiny), as overflow saturates at the top */
        if (sign && !f->is_signed) return invalid_nan(f, flags);
        if (Ex < emin) {
            *flags |= (uint8_t)(SFP8_FLAG_INEXACT | (tiny ? SFP8_FLAG_UNDERFLOW : 0));
            return with_sign(f, sign, 0);
        }
    }
    if (Ex >= emin || sub == SFP8_SUBNORMALS_FLUSH) {
        int64_t field;
        if (tiny) { /* flush: only reached for flush formats */
            *flags |= SFP8_FLAG_UNDERFLOW | SFP8_FLAG_INEXACT;
            return pack_zero(f, sign, flags);
        }
        inexact = fu.inexact;
        field = Ex + f->bias; /* >= 1 here, or Ex == emin-1 with a carry */
        if (field > (int64_t)exp_ones(f) + 1) {
            mag = ~(uint64_t)0; /* far beyond max */
        } else {
            mag = ((uint64_t)field << M) + (Ku + (uint64_t)up_u - ((uint64_t)1 << M));
        }
        if (mag > max_mag(f)) {
            if (sign && !f->is_signed) return invalid_nan(f, flags);
            return overflow_result(f, env, sign, flags);
        }
    } else {
        /* below the smallest normal: subnormal grid */
        int64_t q = (sub == SFP8_SUBNORMALS_TESLA) ? (int64_t)-f->bias - M : emin - M;
        uint64_t K = split_pow2(sig, q - exp, sticky, nbits, &fr);
        uint64_t top = ((uint64_t)1 << M) - 1; /* largest subnormal code */
        if (sub == SFP8_SUBNORMALS_TESLA && K >= top) {
            /* the Tesla gap: neighbours (2^M - 1) 2^q and 2^(M+1) 2^q = 2^emin */
            int64_t s = q - exp;
            u128 num, den;
            uint64_t disc = 0;
            if (s > 0) disc = sig & mask64((int)s); else s = 0;
            num = ((u128)(K - top) << s) | disc;
            den = ((u128)(top + 2) << s);
            fr.inexact = num != 0 || sticky;
            fr.half = 2 * num > den ? 1 : 2 * num < den ? -1 : (sticky ? 1 : 0);
            fr.t = (uint64_t)((num << nbits) / den);
            mag = round_up(env, sign, 1, &fr) ? top + 1 : top;
        } else {
            mag = K + (uint64_t)round_up(env, sign, (int)(K & 1), &fr);
        }
        inexact = fr.inexact;
        /* a format with no normal binade below its special exponent (one exponent bit,
           IEEE specials): the carry out of the largest subnormal is an overflow (and an
           underflow too where the value was tiny) */
        if (mag > max_mag(f)) {
            if (sign && !f->is_signed) return invalid_nan(f, flags);
            if (tiny) *flags |= SFP8_FLAG_UNDERFLOW;
            return overflow_result(f, env, sign, flags);
        }
    }

    if (inexact) {
        out |= SFP8_FLAG_INEXACT;
        if (tiny) out |= SFP8_FLAG_UNDERFLOW;
    }
    if (sign && !f->is_signed && mag != 0) return invalid_nan(f, flags);
    *flags |= out;
    if (mag == 0 && sub != SFP8_SUBNORMALS_NOZERO) return pack_zero(f, sign, flags);
    return with_sign(f, sign, mag);
}

/* ------------------------------------------------------------------------ */
/* Arithmetic                                                                */
/* ------------------------------------------------------------------------ */

/* x + y for finite non-zero operands (sy already includes subtraction). */
static uint64_t add_finite(const sfp8_format *f, const sfp8_env *env, int sx, uint64_t gx, int64_t ex,
                           int sy, uint64_t gy, int64_t ey, uint8_t *flags)
{
    int nx = 61 - msb64(gx), ny = 61 - msb64(gy), sticky = 0;
    uint64_t sum, tmp;
    int64_t d, te;
    int ts;
    gx <<= nx; ex -= nx;
    gy <<= ny; ey -= ny;
    if (ex < ey || (ex == ey && gx < gy)) {
        tmp = gx; gx = gy; gy = tmp;
        te = ex; ex = ey; ey = te;
        ts = sx; sx = sy; sy = ts;
    }
    d = ex - ey;
    if (d >= 64) {
        sticky = 1;
        gy = 0;
    } else if (d > 0) {
        sticky = (gy & mask64((int)d)) != 0;
        gy >>= d;
    }
    if (sx == sy) {
        sum = gx + gy;
    } else {
        sum = gx - gy - (uint64_t)sticky; /* x - (gy + delta) = (sum) + (1 - delta) */
        if (sum == 0 && !sticky)
            return pack_zero(f, env->rounding == SFP8_ROUND_DOWNWARD, flags);
    }
    return round_pack(f, env, sx, sum, ex, sticky, flags);
}

static int any_nan3(const sfp8_format *f, const unpacked *a, const unpacked *b, const unpacked *c,
                    uint64_t *res, uint8_t *flags)
{
    const unpacked *first = NULL;
    if (a && a->kind == K_NAN) first = a;
    else if (b && b->kind == K_NAN) first = b;
    else if (c && c->kind == K_NAN) first = c;
    if (!first) return 0;
    if ((a && a->snan) || (b && b->snan) || (c && c->snan)) *flags |= SFP8_FLAG_INVALID;
    *res = propagate_nan(f, first, f, flags);
    return 1;
}

static uint64_t do_add(const sfp8_format *f, uint64_t a, uint64_t b, int negate_b, const sfp8_env *env,
                       uint8_t *flags)
{
    unpacked x, y;
    uint64_t res;
    unpack(f, a, &x, flags);
    unpack(f, b, &y, flags);
    if (any_nan3(f, &x, &y, NULL, &res, flags)) return res;
    /* in unsigned formats a - b is computed like signed: the sign of the exact
       result decides (round_pack and pack_inf turn a negative into NaN) */
    y.sign ^= negate_b;
    if (x.kind == K_INF || y.kind == K_INF) {
        if (x.kind == K_INF && y.kind == K_INF && x.sign != y.sign) return invalid_nan(f, flags);
        return pack_inf(f, env, x.kind == K_INF ? x.sign : y.sign, flags);
    }
    if (x.kind == K_ZERO && y.kind == K_ZERO) {
        int s = (x.sign == y.sign) ? x.sign : (env->rounding == SFP8_ROUND_DOWNWARD);
        return pack_zero(f, s, flags);
    }
    if (x.kind == K_ZERO) return round_pack(f, env, y.sign, y.sig, y.exp, 0, flags);
    if (y.kind == K_ZERO) return round_pack(f, env, x.sign, x.sig, x.exp, 0, flags);
    return add_finite(f, env, x.sign, x.sig, x.exp, y.sign, y.sig, y.exp, flags);
}

uint32_t sfp8_add(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    return (uint32_t)do_add(f, a, b, 0, env, flags);
}

uint32_t sfp8_sub(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    return (uint32_t)do_add(f, a, b, 1, env, flags);
}

uint32_t sfp8_mul(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    unpacked x, y;
    uint64_t res;
    int s;
    unpack(f, a, &x, flags);
    unpack(f, b, &y, flags);
    if (any_nan3(f, &x, &y, NULL, &res, flags)) return (uint32_t)res;
    s = x.sign ^ y.sign;
    if (x.kind == K_INF || y.kind == K_INF) {
        if (x.kind == K_ZERO || y.kind == K_ZERO) return (uint32_t)invalid_nan(f, flags);
        return (uint32_t)pack_inf(f, env, s, flags);
    }
    if (x.kind == K_ZERO || y.kind == K_ZERO) return (uint32_t)pack_zero(f, s, flags);
    return (uint32_t)round_pack(f, env, s, x.sig * y.sig, x.exp + y.exp, 0, flags);
}

uint32_t sfp8_div(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags)
{
    unpacked x, y;
    uint64_t res, q;
    u128 num;
    int s, nx, ny, sticky;
    unpack(f, a, &x, flags);
    unpack(f, b, &y, flags);
    if (any_nan3(f, &x, &y, NULL, &res, flags)) return (uint32_t)res;
    s = x.sign ^ y.sign;
    if (x.kind == K_INF) {
        if (y.kind == K_INF) return (uint32_t)invalid_nan(f, flags);
        return (uint32_t)pack_inf(f, env, s, flags);
    }
    if (y.kind == K_INF) return (uint32_t)pack_zero(f, s, flags);
    if (y.kind == K_ZERO) {
        if (x.kind == K_ZERO) return (uint32_t)invalid_nan(f, flags);
        *flags |= SFP8_FLAG_DIVBYZERO;
        return (uint32_t)pack_inf(f, env, s, flags);
    }
    if (x.kind == K_ZERO) return (uint32_t)pack_zero(f, s, flags);
    /* x.sig, y.sig < 2^17: normalise y to bit 15, x to bit 77 -> q in (2^61, 2^63) */
    ny = 15 - msb64(y.sig);
    nx = 77 - msb64(x.sig);
    num = (u128)x.sig << nx;
    q = (uint64_t)(num / (y.sig << ny));
    sticky = (num % (y.sig << ny)) != 0;
    return (uint32_t)round_pack(f, env, s, q, x.exp - nx - (y.exp - ny), sticky, flags);
}

static uint64_t isqrt128(u128 v, int *inexact)
{
    u128 rem = 0, root = 0;
    int i;
    for (i = 0; i < 64; i++) {
        root <<= 1;
        rem = (rem << 2) | (v >> 126);
        v <<= 2;
        if (rem >= 2 * root + 1) {
            rem -= 2 * root + 1;
            root += 1;
        }
    }
    *inexact = rem != 0;
    return (uint64_t)root;
}

uint32_t sfp8_sqrt(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    unpacked x;
    uint64_t res, r;
    int64_t e, sh;
    int sticky;
    unpack(f, a, &x, flags);
    if (any_nan3(f, &x, NULL, NULL, &res, flags)) return (uint32_t)res;
    if (x.kind == K_ZERO) return (uint32_t)pack_zero(f, x.sign, flags);
    if (x.sign) return (uint32_t)invalid_nan(f, flags);
    if (x.kind == K_INF) return (uint32_t)pack_inf(f, env, 0, flags);
    /* radicand sig * 2^sh with msb near bit 120 and exp - sh even */
    sh = 120 - msb64(x.sig);
    e = x.exp - sh;
    if (e & 1) {
        sh += 1;
        e -= 1;
    }
    r = isqrt128((u128)x.sig << sh, &sticky);
    return (uint32_t)round_pack(f, env, 0, r, e / 2, sticky, flags);
}

uint32_t sfp8_fma(const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env,
                  uint8_t *flags)
{
    unpacked x, y, z;
    uint64_t res;
    int sp;
    unpack(f, a, &x, flags);
    unpack(f, b, &y, flags);
    unpack(f, c, &z, flags);
    if ((x.kind == K_INF && y.kind == K_ZERO) || (x.kind == K_ZERO && y.kind == K_INF)) {
        if (z.kind == K_NAN) {
            any_nan3(f, &x, &y, &z, &res, flags);
            *flags |= SFP8_FLAG_INVALID;
            return (uint32_t)res;
        }
        return (uint32_t)invalid_nan(f, flags);
    }
    if (any_nan3(f, &x, &y, &z, &res, flags)) return (uint32_t)res;
    sp = x.sign ^ y.sign;
    if (x.kind == K_INF || y.kind == K_INF) {
        if (z.kind == K_INF && z.sign != sp) return (uint32_t)invalid_nan(f, flags);
        return (uint32_t)pack_inf(f, env, sp, flags);
    }
    if (z.kind == K_INF) return (uint32_t)pack_inf(f, env, z.sign, flags);
    if (x.kind == K_ZERO || y.kind == K_ZERO) {
        if (z.kind == K_ZERO) {
            int s = (sp == z.sign) ? sp : (env->rounding == SFP8_ROUND_DOWNWARD);
            return (uint32_t)pack_zero(f, s, flags);
        }
        return (uint32_t)round_pack(f, env, z.sign, z.sig, z.exp, 0, flags);
    }
    if (z.kind == K_ZERO)
        return (uint32_t)round_pack(f, env, sp, x.sig * y.sig, x.exp + y.exp, 0, flags);
    return (uint32_t)add_finite(f, env, sp, x.sig * y.sig, x.exp + y.exp, z.sign, z.sig, z.exp, flags);
}

/* ------------------------------------------------------------------------ */
/* Conversions                                                               */
/* ------------------------------------------------------------------------ */

/* the conversion under softfp8's own convention */
static uint64_t convert_default(const sfp8_format *src, const sfp8_format *dst, uint64_t a, const sfp8_env *env,
                                uint8_t *flags)
{
    unpacked x;
    unpack(src, a, &x, flags);
    switch (x.kind) {
    case K_NAN: return propagate_nan(src, &x, dst, flags);
    case K_INF: return pack_inf(dst, env, x.sign, flags);
    case K_ZERO: return pack_zero(dst, x.sign, flags);
    default: return round_pack(dst, env, x.sign, x.sig, x.exp, 0, flags);
    }
}

/* ---- ISA conventions (docs/golden-model.md, "ISA conventions") ----
 * A call whose env->isa is not 0 (1) reads subnormal operands as zero when DAZ is
 * set (raising denormal), (2) runs the core with the default convention, (3) replaces
 * a NaN result by the convention's NaN (the choice among the NaN operands, or the
 * convention's default NaN) and (4) flushes a subnormal result to zero when FTZ is set
 * (underflow|inexact).  Flags other than those are the core's: invalid for signalling
 * NaN operands and invalid operations is the same in every convention.  Conversions
 * apply it here (sfp8_convert); operations at the op table's dispatch (ops.c,
 * sfp8x_apply_ext), with these helpers; bit operations (A_NOFLAGS) never change. */

/* a NaN operand made quiet, payload and sign kept (ieee); the other schemes'
   NaNs are quiet already */
uint64_t sfp8x_quiet_nan(const sfp8_format *f, uint64_t a)
{
    if (f->specials == SFP8_SPECIALS_IEEE) return a | ((uint64_t)1 << (f->man_bits - 1));
    return a;
}

/* the NaN of an invalid operation under the convention */
uint64_t sfp8x_isa_default_nan(const sfp8_format *f, int isa)
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

/* DAZ: a subnormal operand read as a zero of its sign */
uint64_t sfp8x_daz(const sfp8_format *f, uint64_t a, uint8_t *fl)
{
    if (sfp8_classify(f, a) != SFP8_CLASS_SUBNORMAL) return a;
    *fl |= SFP8_FLAG_DENORMAL;
    if (!f->is_signed || f->specials == SFP8_SPECIALS_FNUZ || f->specials == SFP8_SPECIALS_P3109) return 0;
    return a & sign_bit(f);
}

/* FTZ: a subnormal result becomes a zero of its sign, with underflow and inexact */
uint64_t sfp8x_ftz(const sfp8_format *f, uint64_t r, uint8_t *fl)
{
    uint8_t scratch = 0;
    if (f->subnormals == SFP8_SUBNORMALS_FLUSH || sfp8_classify(f, r) != SFP8_CLASS_SUBNORMAL) return r;
    *fl |= SFP8_FLAG_UNDERFLOW | SFP8_FLAG_INEXACT;
    if (f->bits > 16) return r & sign_bit(f);
    return sfp8x_zero(f, sfp8_signbit(f, r), &scratch);
}

/* a NaN by its class (bits above the width ignored, as sfp8_classify reads codes) */
static int isa_is_nan(const sfp8_format *f, uint64_t a)
{
    int c = sfp8_classify(f, a);
    return c == SFP8_CLASS_QNAN || c == SFP8_CLASS_SNAN;
}

static uint64_t isa_convert(const sfp8_format *src, const sfp8_format *dst, uint64_t a, const sfp8_env *env,
                           uint8_t *flags)
{
    sfp8_env e = *env;
    int isa = env->isa & 0xFF;
    uint64_t r;
    e.isa = 0;
    if (env->isa & SFP8_ISA_DAZ) a = sfp8x_daz(src, a, flags);
    r = convert_default(src, dst, a, &e, flags);
    if (isa_is_nan(dst, r) && isa != SFP8_ISA_DEFAULT) {
        if (isa == SFP8_ISA_ARM_DN || isa == SFP8_ISA_RISCV || !isa_is_nan(src, a))
            r = sfp8x_isa_default_nan(dst, isa);
    }
    if (env->isa & SFP8_ISA_FTZ) r = sfp8x_ftz(dst, r, flags);
    return r;
}

uint64_t sfp8_convert(const sfp8_format *src, const sfp8_format *dst, uint64_t a, const sfp8_env *env,
                      uint8_t *flags)
{
    return env->isa ? isa_convert(src, dst, a, env, flags) : convert_default(src, dst, a, env, flags);
}

uint32_t sfp8_from_int64(const sfp8_format *f, int64_t v, const sfp8_env *env, uint8_t *flags)
{
    int s = v < 0;
    uint64_t m = s ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (m == 0) return (uint32_t)pack_zero(f, 0, flags);
    return (uint32_t)round_pack(f, env, s, m, 0, 0, flags);
}

/* Round |x| to an integer (quantum 2^0) per env; returns 0 with *big set when
 * the integer does not fit in 64 bits. */
static uint64_t round_to_integer(const unpacked *x, const sfp8_env *env, int *inexact, int *big)
{
    frac_info r;
    uint64_t K;
    int lo_odd;
    *big = 0;
    if (x->exp >= 0) {
        *inexact = 0;
        if (x->exp + msb64(x->sig) >= 64) {
            *big = 1;
            return 0;
        }
        return x->sig << x->exp;
    }
    K = split_pow2(x->sig, -x->exp, 0, sr_bits_of(env), &r);
    lo_odd = (int)(K & 1);
    *inexact = r.inexact;
    return K + (uint64_t)round_up(env, x->sign, lo_odd, &r);
}

int64_t sfp8_to_int64(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags)
{
    unpacked x;
    uint64_t k;
    int inexact, big;
    unpack(f, a, &x, flags);
    if (x.kind == K_NAN) {
        *flags |= SFP8_FLAG_INVALID;
        return INT64_MAX;
    }
    if (x.kind == K_ZERO) return 0;
    if (x.kind == K_INF) {
        *flags |= SFP8_FLAG_INVALID;
        return x.sign ? INT64_MIN : INT64_MAX;
    }
    k = round_to_integer(&x, env, &inexact, &big);
    if (big || (!x.sign && k > (uint64_t)INT64_MAX) || (x.sign && k > (uint64_t)1 << 63)) {
        *flags |= SFP8_FLAG_INVALID;
        return x.sign ? INT64_MIN : INT64_MAX;
    }
    if (inexact) *flags |= SFP8_FLAG_INEXACT;
    if (x.sign) return k == ((uint64_t)1 << 63) ? INT64_MIN : -(int64_t)k;
    return (int64_t)k;
}

uint32_t sfp8_round_integral(const sfp8_format *f, uint32_t a, const sfp8_env *env, int exact,
                             uint8_t *flags)
{
    unpacked x;
    uint64_t k, res;
    int inexact, big;
    uint8_t scratch = 0;
    unpack(f, a, &x, flags);
    if (any_nan3(f, &x, NULL, NULL, &res, flags)) return (uint32_t)res;
    if (x.kind == K_INF) return (uint32_t)pack_inf(f, env, x.sign, flags);
    if (x.kind == K_ZERO) return (uint32_t)pack_zero(f, x.sign, flags);
    if (x.exp >= 0) return (uint32_t)round_pack(f, env, x.sign, x.sig, x.exp, 0, flags);
    k = round_to_integer(&x, env, &inexact, &big);
    if (inexact && exact) *flags |= SFP8_FLAG_INEXACT;
    if (k == 0) return (uint32_t)pack_zero(f, x.sign, flags);
    /* k is an integer no larger than 2^(M+1): representable, or beyond max only
       when it rounded up past max (then the overflow rules apply) */
    res = round_pack(f, env, x.sign, k, 0, 0, &scratch);
    *flags |= scratch & (SFP8_FLAG_OVERFLOW | SFP8_FLAG_INEXACT | SFP8_FLAG_INVALID);
    return (uint32_t)res;
}

/* ------------------------------------------------------------------------ */
/* Comparisons, min/max, bit operations                                      */
/* ------------------------------------------------------------------------ */

/* total order key of a non-NaN unpacked value: returns -1/0/1 */
static int cmp_values(const unpacked *x, const unpacked *y)
{
    int sx, sy, mx, my;
    if (x->kind == K_ZERO && y->kind == K_ZERO) return 0;
    sx = x->kind == K_ZERO ? 0 : (x->sign ? -1 : 1);
    sy = y->kind == K_ZERO ? 0 : (y->sign ? -1 : 1);
    if (sx != sy) return sx < sy ? -1 : 1;
    /* same sign, both non-zero: compare magnitudes */
    if (x->kind == K_INF && y->kind == K_INF) mx = 0;
    else if (x->kind == K_INF) mx = 1;
    else if (y->kind == K_INF) mx = -1;
    else {
        int64_t ex = x->exp + msb64(x->sig), ey = y->exp + msb64(y->sig);
        if (ex != ey) mx = ex < ey ? -1 : 1;
        else {
            uint64_t gx = x->sig << (63 - msb64(x->sig)), gy = y->sig << (63 - msb64(y->sig));
            mx = gx < gy ? -1 : gx > gy ? 1 : 0;
        }
    }
    my = sx < 0 ? -mx : mx;
    return my;
}

int sfp8_compare(const sfp8_format *f, uint32_t a, uint32_t b, int signaling, uint8_t *flags)
{
    unpacked x, y;
    unpack(f, a, &x, flags);
    unpack(f, b, &y, flags);
    if (x.kind == K_NAN || y.kind == K_NAN) {
        if (signaling || x.snan || y.snan) *flags |= SFP8_FLAG_INVALID;
        return SFP8_UNORDERED;
    }
    return cmp_values(&x, &y);
}

/* min/max helpers: pick one operand; -0 < +0 */
static uint64_t pick(const sfp8_format *f, const unpacked *u, uint8_t *flags)
{
    if (u->kind == K_ZERO) return pack_zero(f, u->sign, flags); /* flushed subnormals read as zero */
    return u->code;
}

/* the selections: MM_NUMBER ignores a NaN operand (minimumNumber), MM_MAG
 * compares magnitudes first (minimumMagnitude, IEEE 754-2019 9.6), MM_FINITE
 * ignores an infinite operand beside a finite one (P3109 MinimumFinite, 4.11.3) */
enum { MM_NUMBER = 1, MM_MAG = 2, MM_FINITE = 4 };

static uint64_t minmax(const sfp8_format *f, uint32_t a, uint32_t b, int want_max, int how, uint8_t *flags)
{
    unpacked x, y;
    uint64_t res;
    int c = 0;
    unpack(f, a, &x, flags);
    unpack(f, b, &y, flags);
    if ((how & (MM_NUMBER | MM_FINITE)) && (x.kind == K_NAN) != (y.kind == K_NAN)) {
        if (x.snan || y.snan) *flags |= SFP8_FLAG_INVALID;
        return pick(f, x.kind == K_NAN ? &y : &x, flags);
    }
    if (any_nan3(f, &x, &y, NULL, &res, flags)) return res;
    if ((how & MM_FINITE) && (x.kind == K_INF) != (y.kind == K_INF))
        return pick(f, x.kind == K_INF ? &y : &x, flags);
    if (how & MM_MAG) {
        unpacked ax = x, ay = y;
        ax.sign = ay.sign = 0;
        c = cmp_values(&ax, &ay);
        if (want_max) c = -c; /* below: the smaller magnitude wins the max as the larger */
        if (c) return pick(f, c < 0 ? &x : &y, flags);
    }
    c = cmp_values(&x, &y);
    if (c == 0 && x.kind == K_ZERO && y.kind == K_ZERO && x.sign != y.sign)
        c = x.sign ? -1 : 1; /* -0 < +0 */
    if (want_max) return pick(f, c >= 0 ? &x : &y, flags);
    return pick(f, c <= 0 ? &x : &y, flags);
}

#define SFP8_MINMAX(name, want_max, how)                                              \
    uint32_t name(const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags)        \
    {                                                                                 \
        return (uint32_t)minmax(f, a, b, want_max, how, flags);                       \
    }
SFP8_MINMAX(sfp8_min, 0, 0)
SFP8_MINMAX(sfp8_max, 1, 0)
SFP8_MINMAX(sfp8_minnum, 0, MM_NUMBER)
SFP8_MINMAX(sfp8_maxnum, 1, MM_NUMBER)
SFP8_MINMAX(sfp8_minmag, 0, MM_MAG)
SFP8_MINMAX(sfp8_maxmag, 1, MM_MAG)
SFP8_MINMAX(sfp8_minmag_num, 0, MM_MAG | MM_NUMBER)
SFP8_MINMAX(sfp8_maxmag_num, 1, MM_MAG | MM_NUMBER)
SFP8_MINMAX(sfp8_min_finite, 0, MM_FINITE)
SFP8_MINMAX(sfp8_max_finite, 1, MM_FINITE)
#undef SFP8_MINMAX

static inline int is_zero_code(const sfp8_format *f, uint64_t a)
{
    if (f->subnormals == SFP8_SUBNORMALS_NOZERO) return 0;
    return (a & (code_mask(f) >> (f->is_signed ? 1 : 0))) == 0;
}

uint32_t sfp8_neg(const sfp8_format *f, uint32_t a)
{
    uint64_t c = a & code_mask(f);
    if (!f->is_signed) return (uint32_t)((is_zero_code(f, c) || is_nan_code(f, c)) ? c : default_nan(f));
    if (no_negzero(f) && (c & ~sign_bit(f)) == 0) return (uint32_t)c;
    return (uint32_t)(c ^ sign_bit(f));
}

uint32_t sfp8_abs(const sfp8_format *f, uint32_t a)
{
    uint64_t c = a & code_mask(f);
    if (!f->is_signed) return (uint32_t)c;
    if (no_negzero(f) && c == sign_bit(f)) return (uint32_t)c;
    return (uint32_t)(c & ~sign_bit(f));
}

int sfp8_signbit(const sfp8_format *f, uint64_t a)
{
    a &= code_mask(f);
    if (!f->is_signed) return 0;
    if (no_negzero(f) && a == sign_bit(f)) return 0;
    return (int)((a >> (f->bits - 1)) & 1);
}

uint32_t sfp8_copysign(const sfp8_format *f, uint32_t a, uint32_t b)
{
    uint64_t c = a & code_mask(f);
    int s = sfp8_signbit(f, b);
    if (!f->is_signed) return (uint32_t)(s ? sfp8_neg(f, (uint32_t)c) : c);
    if (no_negzero(f) && (c & ~sign_bit(f)) == 0) return (uint32_t)c;
    return (uint32_t)(s ? (c | sign_bit(f)) : (c & ~sign_bit(f)));
}

int sfp8_classify(const sfp8_format *f, uint64_t a)
{
    unpacked u;
    uint8_t fl = 0;
    unpack(f, a, &u, &fl);
    switch (u.kind) {
    case K_NAN: return u.snan ? SFP8_CLASS_SNAN : SFP8_CLASS_QNAN;
    case K_INF: return SFP8_CLASS_INF;
    case K_ZERO: return (fl & SFP8_FLAG_DENORMAL) ? SFP8_CLASS_SUBNORMAL : SFP8_CLASS_ZERO;
    default: return (fl & SFP8_FLAG_DENORMAL) ? SFP8_CLASS_SUBNORMAL : SFP8_CLASS_NORMAL;
    }
}

/* ------------------------------------------------------------------------ */
/* Properties                                                                */
/* ------------------------------------------------------------------------ */

uint32_t sfp8_max_code(const sfp8_format *f) { return (uint32_t)max_mag(f); }
uint32_t sfp8_min_normal_code(const sfp8_format *f)
{
    return f->subnormals == SFP8_SUBNORMALS_NOZERO ? 0 : (uint32_t)1 << f->man_bits;
}
uint32_t sfp8_min_subnormal_code(const sfp8_format *f)
{
    if (f->subnormals == SFP8_SUBNORMALS_NOZERO) return 0;
    if (f->man_bits == 0 || f->subnormals == SFP8_SUBNORMALS_FLUSH) return (uint32_t)1 << f->man_bits;
    return 1;
}
uint32_t sfp8_default_nan(const sfp8_format *f) { return (uint32_t)default_nan(f); }
uint32_t sfp8_code_mask(const sfp8_format *f) { return (uint32_t)code_mask(f); }

/* ------------------------------------------------------------------------ */
/* Counter-based random bits                                                 */
/* ------------------------------------------------------------------------ */

uint32_t sfp8_random_u32(uint64_t seed, uint64_t stream, uint64_t index)
{
    return sfp8r_bits(sfp8r_seed_key(seed), sfp8r_stream_key(stream), index);
}

/* ------------------------------------------------------------------------ */
/* Exact rounding of a given value, unsigned 64-bit integers                 */
/* ------------------------------------------------------------------------ */

uint64_t sfp8_round_value(const sfp8_format *f, int sign, uint64_t sig, int64_t exp, int sticky,
                          const sfp8_env *env, uint8_t *flags)
{
    if (sig == 0) return pack_zero(f, sign, flags); /* sticky needs sig != 0 (see the header) */
    return round_pack(f, env, sign, sig, exp, sticky && msb64(sig) >= 56, flags);
}

uint32_t sfp8_from_uint64(const sfp8_format *f, uint64_t v, const sfp8_env *env, uint8_t *flags)
{
    if (v == 0) return (uint32_t)pack_zero(f, 0, flags);
    return (uint32_t)round_pack(f, env, 0, v, 0, 0, flags);
}

/* ------------------------------------------------------------------------ */
/* Internal interface for the other core files (core_x.h)                    */
/* ------------------------------------------------------------------------ */

void sfp8x_unpack(const sfp8_format *f, uint32_t a, sfp8x_val *v, uint8_t *flags) { unpack(f, a, v, flags); }

int sfp8x_nan_operand(const sfp8_format *f, const sfp8x_val *a, const sfp8x_val *b, uint32_t *res,
                      uint8_t *flags)
{
    return sfp8x_nan3(f, a, b, NULL, res, flags);
}

int sfp8x_nan3(const sfp8_format *f, const sfp8x_val *a, const sfp8x_val *b, const sfp8x_val *c, uint32_t *res,
               uint8_t *flags)
{
    uint64_t r;
    if (!any_nan3(f, a, b, c, &r, flags)) return 0;
    *res = (uint32_t)r;
    return 1;
}

uint32_t sfp8x_add_finite(const sfp8_format *f, const sfp8_env *env, int sx, uint64_t gx, int64_t ex, int sy,
                          uint64_t gy, int64_t ey, uint8_t *flags)
{
    return (uint32_t)add_finite(f, env, sx, gx, ex, sy, gy, ey, flags);
}

int sfp8x_cmp(const sfp8x_val *x, const sfp8x_val *y) { return cmp_values(x, y); }
uint32_t sfp8x_max_mag(const sfp8_format *f) { return (uint32_t)max_mag(f); }
uint32_t sfp8x_inf_mag(const sfp8_format *f) { return (uint32_t)inf_mag(f); }

uint32_t sfp8x_invalid(const sfp8_format *f, uint8_t *flags) { return (uint32_t)invalid_nan(f, flags); }

uint32_t sfp8x_inf(const sfp8_format *f, const sfp8_env *env, int sign, uint8_t *flags)
{
    return (uint32_t)pack_inf(f, env, sign, flags);
}

uint32_t sfp8x_zero(const sfp8_format *f, int sign, uint8_t *flags)
{
    return (uint32_t)pack_zero(f, sign, flags);
}

uint32_t sfp8x_round(const sfp8_format *f, const sfp8_env *env, int sign, uint64_t sig, int64_t exp,
                     int sticky, uint8_t *flags)
{
    return (uint32_t)sfp8_round_value(f, sign, sig, exp, sticky, env, flags);
}
