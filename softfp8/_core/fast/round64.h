/* The binary64 -> format rounding that the rounder (round64.c), the arith16
 * family and the matrix engine's binary32 results share (internal to fast/). */
#ifndef SOFTFP8_FAST_ROUND64_H
#define SOFTFP8_FAST_ROUND64_H
#include <stdint.h>

#include "fast.h"

/* DERIVED from core.c round_pack: round the binary64 bits x (finite, non-zero,
 * normal; exact or rounded to odd) into the format, specialised to IEEE
 * subnormals (see sfp8f_rounder for the formats), one copy per rounding mode
 * (MODE is a constant in every caller); overflow results and their flags come
 * from the core (sfp8f_rounder).  Proven equal by
 * tests/harness/test_harness.py::test_entry [arith16, cast16], ::test_16bit_arith_configs
 * (16-bit add/sub/mul) and ::test_matmul_paths (binary32 results). */

static inline __attribute__((always_inline)) int round_inc(int MODE, int s, uint64_t K, uint64_t rem,
                                                           uint64_t half)
{
    switch (MODE) { /* branch-free forms: the operands are data */
    case SFP8_ROUND_NEAREST_EVEN: return (rem > half) | ((rem == half) & (int)(K & 1));
    case SFP8_ROUND_NEAREST_AWAY: return rem >= half;
    case SFP8_ROUND_UPWARD: return (!s) & (rem != 0);
    case SFP8_ROUND_DOWNWARD: return s & (rem != 0);
    default: return 0;
    }
}

static inline __attribute__((always_inline)) uint32_t round_f64(int MODE, const sfp8f_rnd *p, uint64_t x,
                                                              unsigned *fl)
{
    const int M = p->M;
    int s = (int)(x >> 63);
    int E = (int)((x >> 52) & 0x7ff) - 1023;
    uint64_t sig = (x & 0xFFFFFFFFFFFFFULL) | (1ULL << 52);
    int sh = 52 - M + (E < p->emin ? p->emin - E : 0);
    uint64_t K, rem, half, code;
    int tiny;
    if (sh > 54) sh = 54;
    K = sig >> sh;
    rem = sig & ((1ULL << sh) - 1);
    half = 1ULL << (sh - 1);
    if (MODE == SFP8_ROUND_TO_ODD) K |= rem != 0;
    code = (E >= p->emin ? ((uint64_t)(E - p->emin) << M) : 0) + K + (uint64_t)round_inc(MODE, s, K, rem, half);
    if (__builtin_expect(code > p->maxmag, 0)) {
        *fl |= s ? p->ovf_fl1 : p->ovf_fl0;
        return s ? p->ovf1 : p->ovf0;
    }
    if (rem) {
        if (p->tb) {
            tiny = E < p->emin;
        } else if (E != p->emin - 1) {
            tiny = E < p->emin - 1;
        } else { /* unbounded-exponent rounding: does it carry to 2^emin? */
            int shu = 52 - M;
            uint64_t Ku = sig >> shu, remu = sig & ((1ULL << shu) - 1), halfu = 1ULL << (shu - 1);
            int up = MODE == SFP8_ROUND_TO_ODD ? 0 : round_inc(MODE, s, Ku, remu, halfu);
            tiny = !(up && Ku + 1 == (2ULL << M));
        }
        *fl |= SFP8_FLAG_INEXACT | (tiny ? SFP8_FLAG_UNDERFLOW : 0);
    }
    return (uint32_t)code | (s ? p->signbit : 0);
}
#endif
