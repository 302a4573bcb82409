/* The floating-point environment of the matrix engine's kernels that run on the hardware's
 * IEEE arithmetic and read its status flags (mm_orders.c, mm_units_fp.c): the caller's
 * environment saved on entry and restored on exit; before each group of outputs the flags
 * cleared, every exception masked, no FTZ / DAZ and the rounding direction of the model;
 * after it the flags read.  MXCSR on x86-64 (the SIMD kernels and the portable ones alike),
 * C99's fenv elsewhere.
 *
 * DERIVED from core.c round_pack: the model's rounding mode (nearest even, toward zero,
 * upward, downward) as the hardware's rounding direction, in which its IEEE additions
 * round as round_pack does at their precision; proof: tests/harness/test_harness.py::test_entry
 * (entries orders and block_fma). */
#ifndef SOFTFP8_MM_FENV_H
#define SOFTFP8_MM_FENV_H
#include <fenv.h>

#include "mm_simd.h"
#include "softfp8/softfp8.h"

#if MM_SIMD
#include <immintrin.h>
#endif

#define MM_FX_INEXACT 1u
#define MM_FX_BAD 2u /* overflow, invalid, underflow or divide-by-zero */
#define MM_FX_DENORMAL 4u /* a subnormal operand (MXCSR only) */

typedef struct {
#if MM_SIMD
    unsigned csr;
#else
    fenv_t env;
#endif
} mm_fxsave;

static inline void mm_fx_enter(mm_fxsave *s)
{
#if MM_SIMD
    s->csr = _mm_getcsr();
#else
    feholdexcept(&s->env);
#endif
}

/* rounding: an SFP8_ROUND_* of IEEE (nearest even, toward zero, upward, downward) */
static inline void mm_fx_clear(int rounding)
{
#if MM_SIMD
    unsigned rc = rounding == SFP8_ROUND_DOWNWARD ? 1u : rounding == SFP8_ROUND_UPWARD ? 2u
                  : rounding == SFP8_ROUND_TOWARD_ZERO ? 3u : 0u;
    _mm_setcsr(0x1F80u | rc << 13);
#else
    feclearexcept(FE_ALL_EXCEPT);
    fesetround(rounding == SFP8_ROUND_DOWNWARD ? FE_DOWNWARD : rounding == SFP8_ROUND_UPWARD ? FE_UPWARD
               : rounding == SFP8_ROUND_TOWARD_ZERO ? FE_TOWARDZERO : FE_TONEAREST);
#endif
    __asm__ volatile("" ::: "memory");
}

/* the flags raised since mm_fx_clear: MM_FX_* */
static inline unsigned mm_fx_read(void)
{
    unsigned r = 0;
    __asm__ volatile("" ::: "memory");
#if MM_SIMD
    {
        unsigned csr = _mm_getcsr();
        if (csr & _MM_EXCEPT_INEXACT) r |= MM_FX_INEXACT;
        if (csr & (_MM_EXCEPT_OVERFLOW | _MM_EXCEPT_INVALID | _MM_EXCEPT_UNDERFLOW | _MM_EXCEPT_DIV_ZERO))
            r |= MM_FX_BAD;
        if (csr & _MM_EXCEPT_DENORM) r |= MM_FX_DENORMAL;
    }
#else
    if (fetestexcept(FE_INEXACT)) r |= MM_FX_INEXACT;
    if (fetestexcept(FE_OVERFLOW | FE_INVALID | FE_UNDERFLOW | FE_DIVBYZERO)) r |= MM_FX_BAD;
#endif
    return r;
}

static inline void mm_fx_leave(mm_fxsave *s)
{
#if MM_SIMD
    _mm_setcsr(s->csr);
#else
    fesetenv(&s->env);
#endif
}
#endif
