/*
 * softfp8 public C API.
 *
 * Exact IEEE-style arithmetic for small floating-point formats (8 and 16 bits)
 * with explicit rounding, saturation, tininess and sticky flags.  The core holds
 * no global state: every operation receives the format descriptor(s) and an
 * environment, and ORs the flags it raises into a caller-owned byte.
 *
 * Semantics: see docs/semantics.md (which follows SPEC.md of the project).
 */
#ifndef SOFTFP8_SOFTFP8_H
#define SOFTFP8_SOFTFP8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SFP8_API_VERSION 1

/* ---- flags: SoftFloat's bit layout, plus denormal ---- */
#define SFP8_FLAG_INEXACT   0x01u
#define SFP8_FLAG_UNDERFLOW 0x02u
#define SFP8_FLAG_OVERFLOW  0x04u
#define SFP8_FLAG_DIVBYZERO 0x08u
#define SFP8_FLAG_INVALID   0x10u
#define SFP8_FLAG_DENORMAL  0x20u
/* libsoftfp8 only: a bad call -- an operand code with bits above the format's width
 * (the result is then meaningless: the call is a caller error, never masked).  The
 * array paths of the Python package read such codes modulo the width instead
 * (docs/architecture.md, "Codes wider than the format").  sfp8_op_apply also raises
 * it for an unknown operation.  The DPI-C wrapper turns it into flags 8'hFF. */
#define SFP8_FLAG_BADCALL   0x80u

/* ---- special-value schemes ---- */
enum sfp8_specials {
    SFP8_SPECIALS_IEEE = 0, /* all-ones exponent: inf (m == 0) or NaN (MSB set = quiet) */
    SFP8_SPECIALS_FN   = 1, /* no inf; only S.1..1.1..1 is NaN                          */
    SFP8_SPECIALS_FNUZ = 2, /* no inf, no -0; the single NaN is the "-0" code           */
    SFP8_SPECIALS_NONE = 3, /* every code is finite                                    */
    SFP8_SPECIALS_P3109 = 4 /* IEEE P3109 extended domain: no -0, one NaN (signed: the
                               "-0" code; unsigned: all ones), +-inf at the largest
                               magnitude codes (signed: S.1..1; unsigned: all ones - 1) */
};

/* ---- subnormal conventions (exponent field 0, mantissa != 0) ---- */
enum sfp8_subnormals {
    SFP8_SUBNORMALS_IEEE  = 0, /* 2^(1-bias) * 0.m                                   */
    SFP8_SUBNORMALS_TESLA = 1, /* 2^(-bias)  * 0.m  (gap below the smallest normal)  */
    SFP8_SUBNORMALS_FLUSH = 2, /* read as zero (denormal), tiny results flush to 0   */
    SFP8_SUBNORMALS_NOZERO = 3 /* no zero and no subnormals: exponent field 0 is a
                                  normal binade 2^(-bias) * 1.m (E8M0); an exact zero
                                  result is the NaN with invalid, a non-zero value
                                  below the smallest is delivered as the smallest with
                                  underflow (if tiny) and inexact.  Needs a NaN code:
                                  specials ieee or fn (docs/semantics.md) */
};

/* ---- rounding modes ---- */
enum sfp8_rounding {
    SFP8_ROUND_NEAREST_EVEN = 0,
    SFP8_ROUND_NEAREST_AWAY = 1,
    SFP8_ROUND_TOWARD_ZERO  = 2,
    SFP8_ROUND_UPWARD       = 3,
    SFP8_ROUND_DOWNWARD     = 4,
    SFP8_ROUND_TO_ODD       = 5,
    SFP8_ROUND_STOCHASTIC   = 6,
    /* roundTiesTowardZero (IEEE 754-2019 4.3.1's sixth attribute): fixed by the
       augmented operations (9.5) and used by them only; not a mode of the
       environment of the other operations (SFP8_NUM_ROUNDING counts those) */
    SFP8_ROUND_TIES_TOWARD_ZERO = 7
};
#define SFP8_NUM_ROUNDING 7

/* A format descriptor.  Storage formats have bits <= 16; the descriptors of
 * IEEE binary32 and binary64 (sfp8_binary32 / sfp8_binary64) are accepted as
 * conversion sources and destinations only. */
typedef struct sfp8_format {
    int bits;        /* total storage bits: sign (if signed) + exp_bits + man_bits */
    int is_signed;   /* 1: sign-magnitude; 0: no sign bit                          */
    int exp_bits;    /* E >= 1                                                      */
    int man_bits;    /* M >= 0 (trailing significand bits)                          */
    int bias;        /* exponent bias                                               */
    int specials;    /* enum sfp8_specials                                          */
    int subnormals;  /* enum sfp8_subnormals                                        */
    int saturate;    /* default overflow behaviour: 1 = saturate to +-max           */
} sfp8_format;

/* ---- ISA conventions (docs/golden-model.md, "ISA conventions") ----
 * Which NaN an operation delivers and whether subnormal results / operands are
 * flushed.  The low byte is the NaN convention; FTZ and DAZ are OR-ed in. */
enum sfp8_isa {
    SFP8_ISA_DEFAULT = 0, /* softfp8's: the first NaN operand (a, b, c) quieted with
                             its payload; invalid operations give the positive
                             canonical NaN                                         */
    SFP8_ISA_X86 = 1,     /* x86 SSE/AVX: first NaN operand quieted; invalid gives
                             the negative "real indefinite" NaN; inf*0+NaN in fma
                             gives the indefinite NaN                              */
    SFP8_ISA_ARM = 2,     /* Arm, FPCR.DN = 0: the first signalling NaN, else the
                             first quiet NaN (fma: addend c first), quieted;
                             invalid and inf*0+qNaN give the default NaN           */
    SFP8_ISA_ARM_DN = 3,  /* Arm, FPCR.DN = 1: every NaN result is the default NaN */
    SFP8_ISA_RISCV = 4    /* RISC-V F/D/Zfh: every NaN result is the canonical NaN */
};
#define SFP8_ISA_NUM 5
#define SFP8_ISA_FTZ 0x100 /* flush subnormal results to zero (underflow|inexact)  */
#define SFP8_ISA_DAZ 0x200 /* read subnormal operands as zero (denormal raised)    */
/* "x86", "x86+ftz+daz", "arm_dn", "riscv", ... -> the isa value, or -1 */
int sfp8_isa_lookup(const char *name);

/* The environment of one operation. */
typedef struct sfp8_env {
    int rounding;        /* enum sfp8_rounding                                        */
    int saturate;        /* 1: never deliver infinity (see semantics); `none` formats
                            always saturate whatever this says                        */
    int tininess_before; /* 0: tininess after rounding (default); 1: before rounding  */
    int sr_bits;         /* stochastic rounding: number N of random bits, 1..32       */
    uint32_t random;     /* stochastic rounding: R = low sr_bits bits of this         */
    int isa;             /* enum sfp8_isa | SFP8_ISA_FTZ | SFP8_ISA_DAZ; 0 = default.
                            Honoured by sfp8_op_apply and sfp8_convert (and so by every
                            operation of the table through them); zero-initialise the
                            struct (= {0} or memset) so new fields keep defaults    */
} sfp8_env;

/* ---- descriptor validation ---- */
enum sfp8_format_error {
    SFP8_OK = 0,
    SFP8_EBITS,        /* bits != sign + exp_bits + man_bits, or bits > 16          */
    SFP8_ESIGNED,      /* is_signed not 0/1, or the scheme needs a sign bit          */
    SFP8_EEXP_BITS,    /* exp_bits < 1                                              */
    SFP8_EMAN_BITS,    /* man_bits < 0, or the scheme needs more mantissa bits      */
    SFP8_EBIAS,        /* bias outside -(2^20)..2^20                                 */
    SFP8_ESPECIALS,    /* unknown special-value scheme                               */
    SFP8_ESUBNORMALS,  /* unknown subnormal convention, or nozero without a NaN code
                          (specials other than ieee / fn)                             */
    SFP8_ESATURATE,    /* saturate not 0/1                                           */
    SFP8_ENAME         /* sfp8_preset_lookup: no preset of that name                 */
};
/* Returns SFP8_OK or the first bad field.  Accepts storage formats only
 * (binary32/binary64 descriptors are returned as SFP8_EBITS). */
int sfp8_validate(const sfp8_format *f);
/* Name of the field an error code refers to ("bits", "bias", ...). */
const char *sfp8_error_field(int err);

/* ---- presets ---- */
enum sfp8_preset_id {
    SFP8_E4M3 = 0, SFP8_E5M2, SFP8_E4M3FNUZ, SFP8_E5M2FNUZ,
    SFP8_CFLOAT8_143, SFP8_CFLOAT8_152, SFP8_SHP, SFP8_UHP,
    SFP8_HFP8_143, SFP8_HFP8_152, SFP8_HFP16_169, SFP8_FLOAT16, SFP8_BFLOAT16,
    SFP8_FLOAT8_E4M3, SFP8_FLOAT8_E3M4, SFP8_FLOAT8_E4M3B11FNUZ,
    SFP8_FLOAT4_E2M1FN, SFP8_FLOAT6_E2M3FN, SFP8_FLOAT6_E3M2FN, SFP8_FLOAT8_E8M0FNU, SFP8_UE4M3,
    SFP8_NUM_PRESETS
};
typedef struct sfp8_preset {
    const char *name;
    sfp8_format format;    /* for Tesla families: the default bias */
    int bias_parameter;    /* 1: the bias is a parameter 0..63 (Tesla families) */
} sfp8_preset;
extern const sfp8_preset sfp8_presets[SFP8_NUM_PRESETS];
extern const sfp8_format sfp8_binary32;
extern const sfp8_format sfp8_binary64;
/* The descriptor of a preset by name (the C names of sfp8_presets, case-insensitive,
 * plus "binary32" / "binary64").  `bias` is the parameter of the Tesla families
 * (bias_parameter: 0..63, as the Python API checks) and must be -1 for the other
 * presets.  Returns SFP8_OK, SFP8_ENAME (unknown name) or SFP8_EBIAS. */
int sfp8_preset_lookup(const char *name, int bias, sfp8_format *out);

/* ---- arithmetic: codes in the format's low `bits` bits; flags are ORed into *flags ---- */
uint32_t sfp8_add (const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_sub (const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_mul (const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_div (const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_fma (const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_sqrt(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);

/* Conversion between any two descriptors (storage formats, sfp8_binary32,
 * sfp8_binary64); codes of binary32/64 are their IEEE bit patterns. */
uint64_t sfp8_convert(const sfp8_format *src, const sfp8_format *dst, uint64_t a,
                      const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_from_int64(const sfp8_format *f, int64_t x, const sfp8_env *env, uint8_t *flags);
/* Rounds to an integer by env->rounding (stochastic included).  NaN gives
 * INT64_MAX, out-of-range values saturate to INT64_MIN / INT64_MAX; both raise
 * invalid (and nothing else); otherwise inexact if the value changed. */
int64_t  sfp8_to_int64(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
/* Rounds to an integer type of `bits` (1..64) bits, signed or not, by env->rounding,
 * saturating: out of range after rounding gives the nearest bound, NaN the largest,
 * both raising invalid alone; otherwise inexact if the value changed.  Returns the
 * two's complement bit pattern (low `bits` bits).  bits outside 1..64: 0 with
 * invalid | SFP8_FLAG_BADCALL; a code above the width raises SFP8_FLAG_BADCALL. */
uint64_t sfp8_to_int(const sfp8_format *f, uint32_t a, int bits, int is_signed, const sfp8_env *env,
                     uint8_t *flags);
/* Round to an integral value in the same format; raises inexact only if
 * `exact` is non-zero (IEEE roundToIntegralExact). */
uint32_t sfp8_round_integral(const sfp8_format *f, uint32_t a, const sfp8_env *env, int exact,
                             uint8_t *flags);

/* Round the exact value (-1)^sign * (sig + sticky*delta) * 2^exp, 0 < delta < 1,
 * into f (any descriptor, binary32/binary64 included): the core's one rounding
 * routine, for callers that computed a value themselves.  With sticky set, sig
 * must carry at least 57 significant bits (msb at bit 56 or above), so that 32+
 * bits lie below every rounding point and all modes decide as on the exact
 * value; a shorter sig with sticky is treated as exact. */
uint64_t sfp8_round_value(const sfp8_format *f, int sign, uint64_t sig, int64_t exp, int sticky,
                          const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_from_uint64(const sfp8_format *f, uint64_t x, const sfp8_env *env, uint8_t *flags);

/* ---- elementary functions, correctly rounded: the exact mathematical result
 * rounded once in env's mode, with flags (SPEC section 7) ---- */
uint32_t sfp8_exp(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_exp2(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_expm1(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_log(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_log2(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_log10(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_log1p(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_cbrt(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_power(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_hypot(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_logaddexp(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_logaddexp2(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
/* trigonometric and hyperbolic functions, degrees and radians (elem_trig.c) */
uint32_t sfp8_sin(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_cos(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_tan(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_arcsin(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_arccos(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_arctan(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_sinh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_cosh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_tanh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_arcsinh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_arccosh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_arctanh(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
/* degrees = x * 180/pi, radians = x * pi/180 */
uint32_t sfp8_degrees(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_radians(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
/* arctan2(y, x): the angle of the point (x, y) (NumPy's argument order) */
uint32_t sfp8_arctan2(const sfp8_format *f, uint32_t y, uint32_t x, const sfp8_env *env, uint8_t *flags);

/* IEEE 754-2019 9.2 and P3109 4.10 (elem_ieee.c, elem_pi.c): exp2m1 = 2^x - 1,
 * exp10 = 10^x, exp10m1 = 10^x - 1, log2p1 = log2(1 + x), log10p1 = log10(1 + x),
 * rsqrt = 1/sqrt(x), sinpi / cospi / tanpi = sin / cos / tan(pi x), asinpi /
 * acospi / atanpi = asin / acos / atan(x) / pi, atan2pi = atan2(y, x) / pi, powr =
 * e^(y log x) (x >= 0), pown = x^n, rootn = x^(1/n), compound = (1 + x)^n (n an
 * integer), softplus = log(1 + e^x) (P3109).  Special values: IEEE 754-2019
 * 9.2.1 (docs/semantics.md). */
uint32_t sfp8_exp2m1 (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_exp10  (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_exp10m1(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_log2p1 (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_log10p1(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_rsqrt  (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_sinpi  (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_cospi  (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_tanpi  (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_asinpi (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_acospi (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_atanpi (const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_atan2pi(const sfp8_format *f, uint32_t y, uint32_t x, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_powr   (const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_pown   (const sfp8_format *f, uint32_t a, int64_t n, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_rootn  (const sfp8_format *f, uint32_t a, int64_t n, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_compound(const sfp8_format *f, uint32_t a, int64_t n, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_softplus(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);

/* NumPy/Python semantics, exact with one rounding: floordiv = floor(a/b),
 * remainder = a - b*floor(a/b) (sign of b).  b = 0 behaves as division. */
uint32_t sfp8_floordiv (const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_remainder(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
/* C99 / NumPy functions, exact: the exact result is rounded once into f, which
 * changes it only where it lies outside the format's value set (a Tesla gap, a
 * flushed subnormal, or a mantissa 0.5 <= |m| < 1 beyond the format's range).
 * fmod: C fmod (sign of a; fmod(inf, b) and fmod(a, 0) invalid).
 * modf: returns the fractional part, *integral the integral part (C modf signs;
 *       modf(+-inf) = (+-0, +-inf)).
 * frexp: returns the mantissa m (0.5 <= |m| < 1 where the format holds it) and
 *       *exponent e with a = m * 2^e exactly before rounding m; e = 0 for zero,
 *       inf and NaN.
 * ldexp: a * 2^n, rounded once (overflow / underflow by the usual rules).
 * heaviside: NumPy's heaviside(a, h0): 0 for a < 0, h0 for a == 0, 1 for a > 0,
 *       NaN for a NaN. */
uint32_t sfp8_fmod     (const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_modf     (const sfp8_format *f, uint32_t a, uint32_t *integral, const sfp8_env *env,
                        uint8_t *flags);
uint32_t sfp8_frexp    (const sfp8_format *f, uint32_t a, int32_t *exponent, const sfp8_env *env,
                        uint8_t *flags);
uint32_t sfp8_ldexp    (const sfp8_format *f, uint32_t a, int64_t n, const sfp8_env *env, uint8_t *flags);
uint32_t sfp8_heaviside(const sfp8_format *f, uint32_t a, uint32_t h0, const sfp8_env *env, uint8_t *flags);
/* Next representable value after a in the direction of b (C99 flags:
 * overflow|inexact past max, underflow|inexact for subnormal/zero results). */
uint32_t sfp8_nextafter(const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
/* NumPy's spacing: distance to the next value away from zero. */
uint32_t sfp8_spacing(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);

/* ---- IEEE 754-2019 and IEEE P3109 operations (core_exact.c, core_ieee.c) ---- */
/* IEEE remainder (5.3.1): a - b*n, n the integer nearest a/b (ties to even);
 * exact (rounded once only where the format cannot hold it); remainder(a, +-inf)
 * = a, remainder(inf, b) and remainder(a, 0) invalid.  (sfp8_remainder is
 * NumPy's floored remainder.) */
uint32_t sfp8_ieee_remainder(const sfp8_format *f, uint32_t a, uint32_t b, const sfp8_env *env, uint8_t *flags);
/* logB (5.3.3) with logBFormat = f: floor(log2|a|) as a value of f (rounded once
 * if f cannot hold it); logB(+-0) = -inf with divbyzero, logB(+-inf) = +inf.
 * scaleB is sfp8_ldexp. */
uint32_t sfp8_logb(const sfp8_format *f, uint32_t a, const sfp8_env *env, uint8_t *flags);
/* nextUp / nextDown (5.3.1): the least value above / greatest below a (quiet:
 * invalid only for a signalling NaN); where no such value exists (nextUp(max) in
 * a format without infinity, nextDown(+0) in an unsigned one) the NaN with
 * invalid (formats without NaN: a itself).  nextUp(+inf) = +inf. */
uint32_t sfp8_nextup(const sfp8_format *f, uint32_t a, uint8_t *flags);
uint32_t sfp8_nextdown(const sfp8_format *f, uint32_t a, uint8_t *flags);
/* P3109 NextGreaterThan / NextLessThan (4.16): as nextUp / nextDown, but
 * NextGreaterThan(+inf) and NextLessThan(-inf) are NaN (with invalid, as every
 * NaN made from a non-NaN operand; the report: "least value greater, or NaN"). */
uint32_t sfp8_next_greater(const sfp8_format *f, uint32_t a, uint8_t *flags);
uint32_t sfp8_next_less(const sfp8_format *f, uint32_t a, uint8_t *flags);
/* convertToInteger<rounding> / convertToIntegerExact<rounding> (5.8) into int64:
 * rounding is one of the five IEEE directions (not stochastic, not to_odd);
 * exact != 0 raises inexact when the value changes.  NaN: INT64_MAX, out of
 * range: INT64_MIN / INT64_MAX, both with invalid (as sfp8_to_int64). */
int64_t sfp8_to_integer(const sfp8_format *f, uint32_t a, int rounding, int exact, uint8_t *flags);
/* class (5.7.2) of the encoding (a flushed subnormal code is a subnormal) */
enum sfp8_ieee_class {
    SFP8_SIGNALING_NAN = 0, SFP8_QUIET_NAN, SFP8_NEGATIVE_INFINITY, SFP8_NEGATIVE_NORMAL,
    SFP8_NEGATIVE_SUBNORMAL, SFP8_NEGATIVE_ZERO, SFP8_POSITIVE_ZERO, SFP8_POSITIVE_SUBNORMAL,
    SFP8_POSITIVE_NORMAL, SFP8_POSITIVE_INFINITY
};
int sfp8_ieee_class(const sfp8_format *f, uint32_t a);
/* isCanonical (5.7.2): every encoding but a flushed subnormal (a second code of
 * a zero) is canonical */
int sfp8_is_canonical(const sfp8_format *f, uint32_t a);
/* P3109 IsOne (4.13): the value is exactly 1 */
int sfp8_is_one(const sfp8_format *f, uint32_t a);
/* totalOrder / totalOrderMag (5.10): 1 if a <= b in IEEE's total order (-NaN <
 * -inf < ... < -0 < +0 < ... < +inf < +NaN, signalling NaNs nearer the numbers;
 * a NaN without a sign bit of its own -- fnuz, P3109 -- is positive).
 * sfp8_total_order_p3109 is P3109's TotalOrder (4.12.1): the NaN below
 * everything, numbers by CompareLessEqual (-0 and +0 equal).  No flags. */
int sfp8_total_order(const sfp8_format *f, uint32_t a, uint32_t b);
int sfp8_total_order_mag(const sfp8_format *f, uint32_t a, uint32_t b);
int sfp8_total_order_p3109(const sfp8_format *f, uint32_t a, uint32_t b);
/* augmentedAddition / Subtraction / Multiplication (9.5): returns a0 = the
 * operation's result rounded ties-toward-zero, *err = the exact result minus a0
 * rounded ties-toward-zero (exact but where a product's error lies below the
 * format's range); a0 infinite, NaN or an exact zero: *err = a0.  Flags: those of
 * the operands (denormal, invalid), overflow of a0, and the rounding of *err
 * (inexact / underflow).  Saturation: the format's default. */
uint32_t sfp8_augmented_add(const sfp8_format *f, uint32_t a, uint32_t b, uint32_t *err, uint8_t *flags);
uint32_t sfp8_augmented_sub(const sfp8_format *f, uint32_t a, uint32_t b, uint32_t *err, uint8_t *flags);
uint32_t sfp8_augmented_mul(const sfp8_format *f, uint32_t a, uint32_t b, uint32_t *err, uint8_t *flags);
/* getPayload / setPayload / setPayloadSignaling (9.7), quiet (no flags).
 * getPayload: a NaN's payload (its trailing significand bits below the quiet
 * bit) as a value of f, -1 for a non-NaN.  setPayload(signaling): the positive
 * quiet (signalling) NaN with payload a when a is an integer value that is a
 * valid payload, else +0.  Formats with one NaN code per sign (fn, fnuz, p3109)
 * have the payload 0 only and no signalling NaN; formats without NaN none. */
uint32_t sfp8_get_payload(const sfp8_format *f, uint32_t a, uint8_t *flags);
uint32_t sfp8_set_payload(const sfp8_format *f, uint32_t a, int signaling, uint8_t *flags);
/* minimumMagnitude(Number) / maximumMagnitude(Number) (9.6): the operand of the
 * smaller (larger) magnitude, else as minimum (maximum); NaN as minimum /
 * minimumNumber.  P3109 MinimumFinite / MaximumFinite (4.11.3): as
 * minimumNumber / maximumNumber, and an infinite operand beside a finite one is
 * ignored. */
uint32_t sfp8_minmag    (const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
uint32_t sfp8_maxmag    (const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
uint32_t sfp8_minmag_num(const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
uint32_t sfp8_maxmag_num(const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
uint32_t sfp8_min_finite(const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
uint32_t sfp8_max_finite(const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
/* P3109 Clamp (4.11.4): lo if x <= lo, else hi if x >= hi, else x; NaN for a NaN
 * operand, and NaN with invalid for lo > hi. */
uint32_t sfp8_clamp(const sfp8_format *f, uint32_t x, uint32_t lo, uint32_t hi, uint8_t *flags);
/* P3109 FAA (4.10.7): a + b + c exactly, rounded once; +inf and -inf among the
 * operands: invalid. */
uint32_t sfp8_faa(const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env, uint8_t *flags);

/* ---- reductions of IEEE 754-2019 9.4 (core_reduce.c): exact, rounded once ----
 * a and b: n codes of f in its storage (uint8_t for bits <= 8, else uint16_t).
 * sum = sum a_i, dot = sum a_i b_i, sumSquare = sum a_i^2, sumAbs = sum |a_i|;
 * NaN and infinity as the additions of the exact terms give them; an empty sum is
 * +0.  (scaledProd, scaledProdSum, scaledProdDiff: softfp8.bits, exact products
 * rounded by sfp8_round_value.) */
enum sfp8_reduce_kind { SFP8_REDUCE_SUM = 0, SFP8_REDUCE_DOT, SFP8_REDUCE_SUM_SQUARE, SFP8_REDUCE_SUM_ABS };
uint32_t sfp8_reduce(const sfp8_format *f, int kind, const void *a, const void *b, size_t n, const sfp8_env *env,
                     uint8_t *flags);

/* ---- comparisons ---- */
enum sfp8_relation { SFP8_LESS = -1, SFP8_EQUAL = 0, SFP8_GREATER = 1, SFP8_UNORDERED = 2 };
/* signaling != 0: any NaN operand raises invalid (IEEE compareSignaling*);
 * otherwise only signalling NaNs do (compareQuiet*).  Denormal is raised for
 * subnormal operands. */
int sfp8_compare(const sfp8_format *f, uint32_t a, uint32_t b, int signaling, uint8_t *flags);
/* min/max: NaN-propagating (IEEE minimum/maximum, -0 < +0).
 * minnum/maxnum: IEEE minimumNumber/maximumNumber (a NaN operand is ignored).
 * Both raise invalid for signalling NaN operands. */
uint32_t sfp8_min   (const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
uint32_t sfp8_max   (const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
uint32_t sfp8_minnum(const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);
uint32_t sfp8_maxnum(const sfp8_format *f, uint32_t a, uint32_t b, uint8_t *flags);

/* ---- bit operations: no flags ---- */
uint32_t sfp8_neg     (const sfp8_format *f, uint32_t a);
uint32_t sfp8_abs     (const sfp8_format *f, uint32_t a);
uint32_t sfp8_copysign(const sfp8_format *f, uint32_t a, uint32_t b);

/* ---- classification (no flags) ---- */
enum sfp8_class {
    SFP8_CLASS_ZERO = 0, SFP8_CLASS_SUBNORMAL, SFP8_CLASS_NORMAL, SFP8_CLASS_INF,
    SFP8_CLASS_QNAN, SFP8_CLASS_SNAN
};
int sfp8_classify(const sfp8_format *f, uint64_t a);
int sfp8_signbit (const sfp8_format *f, uint64_t a);

/* ---- properties ---- */
uint32_t sfp8_max_code(const sfp8_format *f);           /* +max finite                  */
uint32_t sfp8_min_normal_code(const sfp8_format *f);    /* +smallest normal             */
uint32_t sfp8_min_subnormal_code(const sfp8_format *f); /* +smallest subnormal (or normal
                                                            if the format has none)      */
uint32_t sfp8_default_nan(const sfp8_format *f);        /* canonical NaN, or +max for none */
uint32_t sfp8_code_mask(const sfp8_format *f);          /* (1 << bits) - 1               */

/* ---- stochastic rounding random bits ----
 * A counter-based generator: the 32 random bits of element `index` of stream
 * `stream` under `seed`.  Pure function of its arguments. */
uint32_t sfp8_random_u32(uint64_t seed, uint64_t stream, uint64_t index);

/* ---- the operation table by index (the rows of softfp8.bits.OPERATIONS, in order) ----
 * For generic callers (test benches, the SystemVerilog DPI-C wrapper dpi/): every
 * element operation of softfp8, addressed by its index or its softfp8.bits name. */
enum sfp8_op_kind {
    SFP8_OP_BINARY = 0, /* (a, b) -> code                                   */
    SFP8_OP_COMPARE,    /* (a, b) -> 0/1                                    */
    SFP8_OP_RELATION,   /* (a, b) -> enum sfp8_relation, cast to uint32_t    */
    SFP8_OP_UNARY,      /* a -> code                                        */
    SFP8_OP_PREDICATE,  /* a -> 0/1                                         */
    SFP8_OP_TERNARY,    /* (a, b, c) -> code                                */
    /* kinds with a second result or an integer operand: sfp8_op_apply refuses
       them (invalid); call their own functions (sfp8_modf, sfp8_frexp, ...) */
    SFP8_OP_UNARY2,     /* a -> (code, code): modf                          */
    SFP8_OP_UNARY_I32,  /* a -> (code, int32): frexp                        */
    SFP8_OP_BINARY2,    /* (a, b) -> (code, code): divmod                   */
    SFP8_OP_BINARY_I64, /* (a, int64) -> code: ldexp                        */
    SFP8_OP_UNARY_I64   /* a -> int64: convertToInteger, class              */
};
#define SFP8_OP_ROUNDS  1 /* attribute: uses env (rounding, saturation, tininess, random) */
#define SFP8_OP_NOFLAGS 2 /* attribute: a bit operation that never raises a flag          */
int sfp8_op_count(void);
int sfp8_op_lookup(const char *name);  /* index of the operation so named, or -1 */
const char *sfp8_op_name(int op);      /* NULL when op is out of range           */
int sfp8_op_kind(int op);              /* enum sfp8_op_kind; -1 when out of range */
int sfp8_op_attrs(int op);             /* SFP8_OP_ROUNDS | SFP8_OP_NOFLAGS        */
int sfp8_op_arity(int op);             /* 1, 2 or 3; 0 when out of range          */
/* One element of operation op; operands beyond its arity are ignored.  An op
 * out of range, or of a kind with a second result or an integer operand
 * (SFP8_OP_UNARY2 and after), returns 0 and raises invalid. */
uint32_t sfp8_op_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c,
                       const sfp8_env *env, uint8_t *flags);

/* ---- the exact value before rounding (softfp8.bits.<op>(..., explain=True)) ----
 * Filled by the core's one rounding routine itself (round_pack) on its last call
 * during the operation, so the record is the core's own decision. */
enum sfp8_decision {
    SFP8_DECIDE_SPECIAL = 0, /* no rounding: a special-value rule decided (NaN, inf,
                                exact zero, invalid ...)                              */
    SFP8_DECIDE_EXACT,       /* representable: delivered unchanged                    */
    SFP8_DECIDE_DOWN,        /* inexact, truncated (toward zero in magnitude)         */
    SFP8_DECIDE_UP,          /* inexact, incremented in magnitude                     */
    SFP8_DECIDE_OVERFLOW,    /* beyond the largest finite: inf or max by mode/saturation */
    SFP8_DECIDE_FLUSH        /* tiny in a flush format: zero                          */
};
typedef struct sfp8_explain {
    int decision;        /* enum sfp8_decision                                        */
    int sign;            /* sign of the exact value                                   */
    uint64_t sig;        /* exact |value| = (sig + sticky*delta) * 2^exp, 0<delta<1   */
    int64_t exp;
    int sticky_in;       /* sig is sticky-truncated (the exact value has more bits)   */
    int64_t e;           /* floor(log2 |value|)                                       */
    int64_t quantum;     /* the value was rounded to a multiple of 2^quantum          */
    int subnormal;       /* rounded on the subnormal grid (below the smallest normal) */
    uint64_t kept;       /* floor(|value| / 2^quantum): the truncated significand     */
    int guard, round, sticky; /* the first two dropped bits and the OR of the rest    */
    int half;            /* dropped part vs half an ulp: -1 below, 0 tie, 1 above     */
    int carry;           /* the increment carried into the next binade              */
    int tiny;            /* tiny by the environment's tininess rule                   */
    int random_used;     /* stochastic rounding: the random bits were compared        */
    int gap;             /* inside a Tesla gap: strictly between the largest subnormal
                            and the smallest normal (neighbours (2^M-1)*2^q and 2^emin;
                            half then compares with the gap's midpoint)               */
    uint64_t result;     /* the result code                                          */
    uint8_t flags;       /* the flags of the operation                                */
} sfp8_explain;
/* One element of operation op (as sfp8_op_apply) with its explanation in *out. */
uint32_t sfp8_op_explain(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c, const sfp8_env *env,
                         uint8_t *flags, sfp8_explain *out);
/* A conversion (as sfp8_convert) with its explanation in *out. */
uint64_t sfp8_convert_explain(const sfp8_format *src, const sfp8_format *dst, uint64_t a, const sfp8_env *env,
                              uint8_t *flags, sfp8_explain *out);

/* ---- coverage: the rounding situation of each element (softfp8.coverage, softfp8 cov) ----
 * Read off round_pack's own record (as sfp8_op_explain) for n elements at once.
 * A mask of SFP8_SIT_* bits per element; 0 when no rounding made the result (a
 * special-value rule, an exact zero, an operation that does not round, a bit
 * operation, or an ISA convention that replaced the rounded code). */
#define SFP8_SIT_ROUNDED    0x001u /* the result is the code the rounding routine delivered */
#define SFP8_SIT_EXACT      0x002u /* the exact value is representable                      */
#define SFP8_SIT_BELOW      0x004u /* inexact, dropped part below half an ulp of the grid    */
#define SFP8_SIT_TIE        0x008u /* inexact, dropped part exactly half an ulp              */
#define SFP8_SIT_ABOVE      0x010u /* inexact, dropped part above half an ulp                */
#define SFP8_SIT_UP         0x020u /* rounded up in magnitude (to the next grid point)       */
#define SFP8_SIT_CARRY      0x040u /* ... and the increment carried into the next binade     */
#define SFP8_SIT_OVF_EDGE   0x080u /* inexact, strictly between the largest finite magnitude
                                      and the next point of its grid (the overflow threshold:
                                      the mode decides max or overflow)                       */
#define SFP8_SIT_TINY       0x100u /* below the smallest normal magnitude before rounding    */
#define SFP8_SIT_TINY_EDGE  0x200u /* ... and delivered as the smallest normal magnitude     */
#define SFP8_SIT_GAP        0x800u /* strictly inside a Tesla gap (sfp8_explain.gap)      */
#define SFP8_SIT_TINY_AFTER 0x400u /* inexact and tiny by the after-rounding rule (rounded to
                                      M+1 bits with an unbounded exponent, still below the
                                      smallest normal): the core's own decision under
                                      tininess "after", whatever env says                    */
/* n elements of op (sfp8_op_apply semantics) in each of the nmodes rounding modes
 * modes[0..nmodes-1] (nmodes 0: env->rounding alone); result, flags and situation
 * hold n * max(nmodes, 1) entries, mode k's at [k*n + i].  b / c are ignored beyond
 * the arity (may be NULL then); random: per-element stochastic random words or NULL
 * (env->random). */
void sfp8_op_cover(int op, const sfp8_format *f, const sfp8_env *env, int nmodes, const int *modes, long n,
                   const uint32_t *a, const uint32_t *b, const uint32_t *c, const uint32_t *random,
                   uint32_t *result, uint8_t *flags, uint16_t *situation);
/* n conversions src -> dst (sfp8_convert semantics). */
void sfp8_convert_cover(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, long n,
                        const uint64_t *a, const uint32_t *random, uint64_t *result, uint8_t *flags,
                        uint16_t *situation);

/* ---- IEEE P3109 operations with the report's projection (core_p3109.c) ----
 * The operations of the P3109 Interim Report v4.0 (4.10-4.11) on codes of one
 * format (a P3109 format, or an external one: float16, bfloat16, ...), addressed by
 * index or by the report's name ("Add", "Exp", "SinPi", "Clamp", ...): the
 * operation's row of the table (sfp8_p3109_row) computed exactly and rounded once
 * by the core in env->rounding (stochastic: env->sr_bits, env->random as for any
 * row; the report's StochasticB(n, r) is sr_bits n + 1, random 2r + 1), then the
 * report's projection: Saturate (4.7.5) by `saturation`, its special values
 * (x / 0, Recip(0), RSqrt(0), ArcTan2(0, 0) and (inf, inf), TanPi(n + 1/2) are
 * NaN; Hypot and CopySign of a NaN are NaN), no -0 (a -0 operand reads as 0, a -0
 * result is 0), an unsigned format's negative results through its signed twin.
 * env->saturate is not read (the projection decides); env->tininess_before and
 * env->isa are honoured as by the row.  The report defines no flags: *flags is
 * touched only by a bad call (op or saturation out of range, a code above the
 * width), which returns 0 with SFP8_FLAG_INVALID | SFP8_FLAG_BADCALL. */
enum sfp8_p3109_saturation { SFP8_SAT_FINITE = 0, SFP8_SAT_PROPAGATE = 1, SFP8_SAT_NONE = 2 };
int sfp8_p3109_count(void);
int sfp8_p3109_lookup(const char *name);  /* index of the P3109 operation so named, or -1 */
const char *sfp8_p3109_name(int op);      /* NULL when op is out of range                */
int sfp8_p3109_row(int op);               /* its row (sfp8_op_*), -1 when out of range   */
uint32_t sfp8_p3109_apply(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c,
                          const sfp8_env *env, int saturation, uint8_t *flags);
/* omega-Project (4.7.3) of an exact value into f: kind 0 finite
 * (-1)^sign (sig + sticky delta) 2^exp, 0 < delta < 1 (sfp8_round_value's rules:
 * with sticky, sig's msb at bit 56 or above), kind 1 the infinity of that sign,
 * kind 2 NaN; rounded once in env's mode, then Saturate by `saturation`. */
uint32_t sfp8_p3109_project_value(const sfp8_format *f, int kind, int sign, uint64_t sig, int64_t exp, int sticky,
                                  const sfp8_env *env, int saturation, uint8_t *flags);
/* The block operations of clause 5 (core_p3109_block.c), exact, each result
 * projected once (sfp8_p3109_project_value) into fr in env's mode with
 * `saturation`.  A block is a scale s (a code of fs) and n elements x (codes of fx;
 * arrays of 1-byte codes for formats of <= 8 bits, native uint16 otherwise).
 * random: per-element stochastic words (env->random of element i) or NULL.  Bad
 * calls (saturation out of range, an unknown op, formats too wide for the exact
 * accumulator) raise SFP8_FLAG_INVALID | SFP8_FLAG_BADCALL and write nothing.
 *   from_block (5.2.1): r_i = Project(S X_i)
 *   to_block (5.2.2): r_i = Project(X_i / S) (omega-BlockProject 5.1.2)
 *   max_abs_finite (5.2.3): Project_fs(reduce(MaximumFinite, [NaN, |X_1|, ...]))
 *   block_reduce_add / _multiply (5.3.1): Project(0 + S X_1 + ...), (1 * S X_1 * ...)
 *   block_dot (5.3.2): Project(sum (Sx X_i)(Sy Y_i))
 *   block_op (5.4): the elementwise P3109 operation op (an index of sfp8_p3109_*:
 *     Convert, Abs, Negate, Recip, Sqrt, RSqrt, Add, Subtract, Multiply, Divide, CopySign,
 *     the selections of 4.11.1-4.11.3, FMA, FAA, Clamp, and the unary elementary
 *     functions Exp ... Softplus, correctly rounded at the exact S X) on nblocks blocks,
 *     r_i = Project(op(S_1 X_1i, ...) / S_r); returns 1, or 0 on a bad call (also an
 *     elementary function in stochastic rounding with p + 1 + sr_bits + bits of S_r's
 *     odd significand > 49). */
void sfp8_p3109_from_block(const sfp8_format *fs, uint32_t s, const sfp8_format *fx, const void *x, size_t n,
                           const sfp8_format *fr, void *r, const sfp8_env *env, const uint32_t *random,
                           int saturation, uint8_t *flags);
void sfp8_p3109_to_block(const sfp8_format *fx, const void *x, size_t n, const sfp8_format *fs, uint32_t s,
                         const sfp8_format *fr, void *r, const sfp8_env *env, const uint32_t *random, int saturation,
                         uint8_t *flags);
uint32_t sfp8_p3109_max_abs_finite(const sfp8_format *fx, const void *x, size_t n, const sfp8_format *fs,
                                   const sfp8_env *env, int saturation, uint8_t *flags);
uint32_t sfp8_p3109_block_reduce_add(const sfp8_format *fs, uint32_t s, const sfp8_format *fx, const void *x,
                                     size_t n, const sfp8_format *fr, const sfp8_env *env, int saturation,
                                     uint8_t *flags);
uint32_t sfp8_p3109_block_reduce_multiply(const sfp8_format *fs, uint32_t s, const sfp8_format *fx,
                                          const void *x, size_t n, const sfp8_format *fr, const sfp8_env *env,
                                          int saturation, uint8_t *flags);
uint32_t sfp8_p3109_block_dot(const sfp8_format *fsx, uint32_t sx, const sfp8_format *fx, const void *x,
                              const sfp8_format *fsy, uint32_t sy, const sfp8_format *fy, const void *y, size_t n,
                              const sfp8_format *fr, const sfp8_env *env, int saturation, uint8_t *flags);
int sfp8_p3109_block_op(int op, int nblocks, const sfp8_format *const fss[], const uint32_t s[],
                        const sfp8_format *const fxs[], const void *const xs[], size_t n, const sfp8_format *fsr,
                        uint32_t sr, const sfp8_format *fr, void *r, const sfp8_env *env, const uint32_t *random,
                        int saturation, uint8_t *flags);

#ifdef __cplusplus
}
#endif
#endif /* SOFTFP8_SOFTFP8_H */
