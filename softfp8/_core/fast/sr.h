/* The stochastic families' shared pieces (internal to fast/): the random
 * bits' keys, one call's description for the portable loops and the lanes the
 * SIMD kernels leave to the core (sr_common.c), the search of a table entry's
 * threshold (the per-code tables of sr_table8 and sr_wide), and the 16-bit
 * table of sr_arith16, which sr_fma shares.
 *
 * DERIVED from core.c round_pack: sfp8f_sr16_round, the stochastic choice between a
 * 16-bit result's two neighbours; proof: tests/harness/test_harness.py::test_entry (entries sr_arith16, sr_fma).
 */
#ifndef SOFTFP8_FAST_SR_H
#define SOFTFP8_FAST_SR_H
#include <stddef.h>
#include <stdint.h>

#include "fast_impl.h"
#include "rng.h"

/* the random bits used (N), their mask, and the generator's keys (rng.h) */
typedef struct {
    int N;
    uint32_t Rmask;
    uint64_t hs, base;
} sr_keys;

static inline sr_keys sr_keys_of(const sfp8_env *env, uint64_t seed, uint64_t stream)
{
    sr_keys k;
    k.N = env->sr_bits >= 1 && env->sr_bits <= 32 ? env->sr_bits : 32;
    k.Rmask = k.N == 32 ? 0xffffffffu : (1u << k.N) - 1;
    k.hs = sfp8r_seed_key(seed);
    k.base = sfp8r_stream_key(stream);
    return k;
}

enum { SR_BLK = 256, SR8_BLK = 1024 }; /* the blocks of the SIMD kernels' callers */

/* one call of sfp8f_run_arith_sr, or of sfp8f_run_conv_sr (src set: the
   codes at a, of src's size, converted into f (op -1) or op of them; b unused) */
typedef struct {
    int op;
    const sfp8_format *f, *src;
    const sfp8_env *env;
    sr_keys k;
    uint64_t index0;
    const char *a, *b;
    char *o;
    ptrdiff_t sa, sb, so, n;
    uint8_t *flout;
    const char *z; /* fma: the addends, contiguous codes from element 0 (sfp8f_run_fma_sr) */
    const struct sfp8f_sr16 *t16; /* 16-bit sqrt: the decoding table (finish_core) */
} sr_call;

/* The lanes j < m with fl[j] & 0x80 through the core: contiguous operands and
 * codes of size bytes (possibly unaligned) at x, y, out, the random bits of
 * element c->index0 + i + j; returns the OR of all fl[j] (sr_common.c) */
unsigned sfp8f_sr_finish_core(const sr_call *c, ptrdiff_t i, const char *x, const char *y, char *out, int size,
                              uint8_t *fl, ptrdiff_t m);

/* The core's x op y with random word R; for a conversion table (kinds T_SRCV,
   T_SRWC) the conversion k->a -> k->b of the code x << 8 | y, for a unary one
   (T_SRUN, T_SRWU) op of that code (sr_common.c) */
uint32_t sfp8f_sr_core(const sfp8f_key *k, sfp8_env *env, uint32_t x, uint32_t y, uint32_t R, uint8_t *g);
/* 1 if the core gives (code, fl) for x op y with random word R */
int sfp8f_sr_core_gives(const sfp8f_key *k, sfp8_env *env, uint32_t x, uint32_t y, uint32_t R, uint32_t code,
                        unsigned fl);
/* The threshold of entry p = x << 8 | y whose exact result is not a binary64
   number at hand (divide, conversions, unary operations): ts = 2^32 minus the
   least random word for which the core rounds away (the rule t + R >= 2^32 is
   monotone in R), checked at both words; 0 if the check fails (sr_common.c) */
int sfp8f_sr_search_ts(const sfp8f_key *k, sfp8_env *env, uint32_t p, uint32_t r0, unsigned f0, uint32_t r1,
                       unsigned f1, uint32_t *ts);

/* ---- the 16-bit table (sr_arith16.c, shared with sr_fma): add / subtract /
 *      multiply / divide / sqrt and fma of formats covered by the rounder's
 *      normal range, results normal in the format from exact binary64 values ---- */
typedef struct sfp8f_sr16 {
    uint64_t vf[65536]; /* code & mask -> binary64 bits | the flags reading it raises | 0x80 NaN / infinity */
    uint32_t mask;
    sfp8f_rnd r;        /* M, emin, maxmag, signbit */
    /* 8-bit formats: 1 if the SIMD fma kernel may decode the codes arithmetically
       (sr_fma.c, sfp8s_srf: checked against vf for every code), with its constants */
    int dec8, sshift;
    uint64_t magmask, off, subfl;
    double sub;
} sfp8f_sr16;
/* the table of f (kind T_SR16; sr_arith16.c) */
void *sfp8f_build_sr16(const sfp8f_key *k, size_t *bytes);

/* the SIMD kernels' parameters: op 0 add, 1 subtract, 2 multiply, 3 divide, 4 sqrt, 5 fma */
typedef struct sfp8s_sr16 {
    const uint64_t *vf;      /* sfp8f_sr16 */
    uint32_t mask;
    uint64_t seed_key, stream_key, index0;
    int N, op;               /* op 0 add, 1 subtract, 2 multiply, 3 divide (2M + N <= 52), 4 sqrt (x: y unused),
                                5 fma (M + N <= 51; sr_fma.c) */
    int M, ebase;            /* mantissa bits; biased binary64 exponent of 2^emin */
    uint32_t maxmag, signbit;
    /* or NULL: the format's arithmetic decoding (arith16.h); add / subtract /
       multiply through binary32 when it covers the format (sr_arith16.c,
       sr16f_avx512), divide and sqrt without gathers (sr16q_run) */
    const struct sfp8s_a16 *a16;
} sfp8s_sr16;

/* the rule of sr_arith16.c's sr16_one on the binary64 bits of a result whose first M + N
   fraction bits, and whether any other is not zero, are those of the exact one */
static inline uint8_t sfp8f_sr16_round(const sfp8f_sr16 *t, uint64_t bits, uint8_t opfl, uint32_t Rn, uint32_t Rmask, int N,
                                 uint16_t *code)
{
    const int M = t->r.M, sh = 52 - M;
    uint64_t rem;
    uint32_t mag;
    int E = (int)((bits >> 52) & 0x7ff) - 1023;
    if (E < t->r.emin) return 0x80; /* zero or tiny */
    rem = bits & (((uint64_t)1 << sh) - 1);
    mag = (uint32_t)((uint64_t)(E - t->r.emin + 1) << M) + (uint32_t)((bits & 0xFFFFFFFFFFFFFULL) >> sh);
    mag += Rn > Rmask - (uint32_t)(rem >> (sh - N));
    if (mag > t->r.maxmag || ((bits >> 63) && !t->r.signbit)) return 0x80;
    *code = (uint16_t)(mag | ((bits >> 63) ? t->r.signbit : 0));
    return (uint8_t)(opfl | (rem ? SFP8_FLAG_INEXACT : 0));
}
#endif
