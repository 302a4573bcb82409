/* Stochastic rounding of binary32 / binary64 into 8-bit formats.
 *
 * DERIVED from core.c round_pack (its stochastic branch): inside the normal
 * range and below overflow the result is the toward-zero or the
 * away-from-zero neighbour (both read from key tables built by the core),
 * chosen by the core's rule t + R >= 2^N with t = floor(fraction * 2^N) and R
 * the element's counter-based random bits (rng.h, the core's generator);
 * everything else takes the core.  Proven equal by
 * tests/fast/test_fast_arith.py::test_stochastic_cast, and under several layouts
 * (strides, zero strides, unaligned, out= buffers) by
 * tests/fast/test_fast_layouts.py::test_stochastic_layouts.
 *
 * The portable kernel is a scalar loop, correct for any overlap (fast.h); the
 * AVX-512 kernel (fast_simd.c, sfp8s_from_float_sr_avx512) takes contiguous
 * operands that sfp8f_apart allows, with the same random bits per element. */
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"
#include "fast_simd.h"
#include "rng.h"

static void *build_sr(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    sfp8f_sr *t = calloc(1, sizeof *t + 65536 * sizeof(uint32_t)); /* and rza[] */
    uint32_t *rza = (uint32_t *)(void *)(t + 1);
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    env.rounding = SFP8_ROUND_TOWARD_ZERO;
    t->rz = sfp8f_cached_nested(T_FROMF, 0, &k->a, NULL, &env, sfp8f_build_fromf);
    env.rounding = SFP8_ROUND_UPWARD;
    t->up = sfp8f_cached_nested(T_FROMF, 0, &k->a, NULL, &env, sfp8f_build_fromf);
    env.rounding = SFP8_ROUND_DOWNWARD;
    t->dn = sfp8f_cached_nested(T_FROMF, 0, &k->a, NULL, &env, sfp8f_build_fromf);
    if (!t->rz || !t->up || !t->dn) {
        free(t);
        return NULL;
    }
    for (uint32_t key = 0; key < 65536; key++)
        rza[key] = t->rz[key] | (uint32_t)(key & 0x8000u ? t->dn : t->up)[key] << 16;
    t->rza = rza;
    t->man_bits = k->a.man_bits;
    t->emin = 1 - k->a.bias;
    *bytes = sizeof *t + 65536 * sizeof(uint32_t);
    return t;
}

const sfp8f_sr *sfp8f_stochastic(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n)
{
    sfp8_env e2;
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || !sfp8f_from_float_ok(dst) ||
        dst->subnormals == SFP8_SUBNORMALS_TESLA)
        return NULL;
    e2 = *env; /* one table set for every sr_bits: the key holds saturation and tininess only */
    return sfp8f_cached(T_SR, 0, dst, NULL, &e2, build_sr, n, 3 * 65536);
}

unsigned sfp8f_run_from_float_sr(const sfp8f_sr *t, const sfp8_format *dst, const sfp8_env *env, uint64_t seed,
                                 uint64_t stream, uint64_t index0, const char *a, ptrdiff_t sa, int isize, char *o,
                                 ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    const int N = env->sr_bits >= 1 && env->sr_bits <= 32 ? env->sr_bits : 32;
    const uint64_t hs = sfp8r_seed_key(seed), base = sfp8r_stream_key(stream); /* hoisted */
    const uint64_t Rmask = (N == 32) ? 0xffffffffULL : ((1ULL << N) - 1);
    const int M = t->man_bits;
    unsigned acc = 0;
    sfp8_env e2 = *env;
    ptrdiff_t i = 0;
    if (sa == isize && so == 1 && sfp8f_simd_level() >= 2 && sfp8f_apart(o, 1, 1, a, sa, isize, n)) {
        const sfp8s_sr p = {t->rza, hs, base, index0, N, M, t->emin, dst, env};
        i = sfp8s_from_float_sr_avx512(&p, a, isize, (uint8_t *)o, n, flout, &acc);
        a += i * sa;
        o += i;
    }
    for (; i < n; i++, a += sa, o += so) {
        uint64_t idx = index0 + (uint64_t)i;
        uint32_t R32 = sfp8r_bits(hs, base, idx);
        uint64_t rem, tfr;
        int E, sh;
        uint32_t key;
        uint16_t v;
        if (isize == 4) {
            uint32_t b;
            memcpy(&b, a, 4);
            key = sfp8f_key32(b);
            E = (int)((b >> 23) & 0xff);
            if ((b & 0x7fffffffu) == 0 || E == 255) goto exact;
            if (E == 0 || E - 127 < t->emin) goto core;
            sh = 23 - M;
            rem = b & ((1u << sh) - 1);
            tfr = N >= sh ? rem << (N - sh) : rem >> (sh - N);
        } else {
            uint64_t b;
            memcpy(&b, a, 8);
            key = sfp8f_key64(b);
            E = (int)((b >> 52) & 0x7ff);
            if ((b & 0x7fffffffffffffffULL) == 0 || E == 2047) goto exact;
            if (E == 0 || E - 1023 < t->emin || E - 1023 > 127) goto core;
            sh = 52 - M;
            rem = b & ((1ULL << sh) - 1);
            tfr = rem >> (sh - N);
        }
        v = t->rz[key];
        if (v & (SFP8_FLAG_OVERFLOW << 8)) goto core;
        {
            uint16_t va = (uint16_t)(t->rza[key] >> 16); /* the key's sign bit picks up or dn */
            uint16_t pick = (uint16_t)-(uint16_t)(tfr + (R32 & Rmask) >= (1ULL << N)); /* branch-free */
            v = (uint16_t)((va & pick) | (v & (uint16_t)~pick));
        }
        *(uint8_t *)o = (uint8_t)v;
        acc |= (unsigned)(v >> 8);
        if (flout) flout[i] = (uint8_t)(v >> 8);
        continue;
    exact: /* zero, infinity, NaN: no rounding */
        v = t->rz[key];
        *(uint8_t *)o = (uint8_t)v;
        acc |= (unsigned)(v >> 8);
        if (flout) flout[i] = (uint8_t)(v >> 8);
        continue;
    core: {
        uint8_t fl = 0;
        uint64_t bits = 0;
        e2.random = R32;
        memcpy(&bits, a, (size_t)isize);
        *(uint8_t *)o = (uint8_t)sfp8_convert(isize == 4 ? &sfp8_binary32 : &sfp8_binary64, dst, bits, &e2, &fl);
        acc |= fl;
        if (flout) flout[i] = fl;
    }
    }
    return acc;
}
