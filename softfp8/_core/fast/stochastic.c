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
#include "ops.h"
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
        const sfp8s_sr p = {t->rza, hs, base, index0, N, M, t->emin,
                           dst->subnormals == SFP8_SUBNORMALS_IEEE, env->tininess_before != 0, dst->is_signed != 0,
                           dst, env};
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

/* fl[j] |= add[j] unless fl is NULL; *any |= the OR of all r[j]; eight bytes at a time */
static void or_bytes(uint8_t *fl, const uint8_t *add, const uint8_t *r, ptrdiff_t m, uint8_t *any)
{
    uint64_t acc = 0, u, v;
    ptrdiff_t j = 0;
    for (; j + 8 <= m; j += 8) {
        if (fl) {
            memcpy(&u, fl + j, 8);
            memcpy(&v, add + j, 8);
            u |= v;
            memcpy(fl + j, &u, 8);
        }
        memcpy(&v, r + j, 8);
        acc |= v;
    }
    for (; j < m; j++) {
        if (fl) fl[j] |= add[j];
        acc |= r[j];
    }
    for (int k = 0; k < 8; k++) *any |= (uint8_t)(acc >> (8 * k));
}

/* The core's code of an exact zero sum x + (-x) (x - x) of non-zero normal
 * operands, which raises no flag: the same for every such x (no rounding
 * happens, the sign of the zero is the rounding mode's); -1 if not found. */
static int exact_zero_sum(const sfp8f_fma *val, int xop, const sfp8_format *f, const sfp8_env *env)
{
    for (int c = 0; c < 256; c++) {
        if (val->special[c] || val->fl[c] || !(val->v[c] > 0)) continue;
        for (int c2 = 0; c2 < 256; c2++) {
            uint8_t g = 0;
            uint32_t r;
            if (val->special[c2] || val->fl[c2] || val->v[c2] != (xop == X_SUB ? val->v[c] : -val->v[c])) continue;
            r = sfp8x_apply(xop, f, (uint32_t)c, (uint32_t)c2, 0, env, &g);
            return g ? -1 : (int)r;
        }
        return -1;
    }
    return -1;
}

/* DERIVED from core.c round_pack (its stochastic branch), through
 * sfp8f_run_from_float_sr: add / subtract / multiply of an 8-bit format under
 * stochastic rounding (fast.h).  Blocks of up to 256 elements: their exact
 * binary64 results (SIMD, or the loop below), their rounding, then the core
 * for the lanes marked special; a block reads all its operands before
 * writing its outputs, so blocks are single elements unless the output is
 * apart from the inputs (fast_impl.h, sfp8f_apart).  Proven equal by
 * tests/fast/test_fast_arith.py::test_stochastic_arith8 and under every
 * calling convention by tests/fast/test_fast_layouts.py::test_stochastic_arith_layouts. */
unsigned sfp8f_run_arith8_sr(const sfp8f_sr *t, const sfp8f_fma *val, int op, const sfp8_format *f,
                             const sfp8_env *env, uint64_t seed, uint64_t stream, uint64_t index0, const char *a,
                             ptrdiff_t sa, const char *b, ptrdiff_t sb, char *o, ptrdiff_t so, ptrdiff_t n,
                             uint8_t *flout)
{
    enum { BLK = 256 };
    const int xop = op == 0 ? X_ADD : op == 1 ? X_SUB : X_MUL;
    const int blocked = sfp8f_apart(o, so, 1, a, sa, 1, n) && sfp8f_apart(o, so, 1, b, sb, 1, n);
    const int simd = blocked && sfp8f_simd_level() >= 2 && val->hb_ok;
    const sfp8s_fma8 p = {val->hb[0], val->info, NULL, NULL, NULL};
    const uint64_t hs = sfp8r_seed_key(seed), base = sfp8r_stream_key(stream);
    unsigned acc = 0;
    double d[BLK];
    int zc = exact_zero_sum(val, xop, f, env);
    uint8_t xb[BLK], yb[BLK], spec[BLK], code[BLK], fl[BLK], opfl[BLK];
    for (ptrdiff_t i0 = 0; i0 < n;) {
        ptrdiff_t m = blocked ? (n - i0 < BLK ? n - i0 : BLK) : 1, k = 0;
        const uint8_t *x = (const uint8_t *)a + i0, *y = (const uint8_t *)b + i0; /* contiguous operands in place */
        uint8_t any = 0, g = 0;
        if (sa != 1)
            for (ptrdiff_t j = 0; j < m; j++) xb[j] = *(const uint8_t *)(a + (i0 + j) * sa);
        if (sb != 1)
            for (ptrdiff_t j = 0; j < m; j++) yb[j] = *(const uint8_t *)(b + (i0 + j) * sb);
        if (sa != 1) x = xb;
        if (sb != 1) y = yb;
        if (simd) k = sfp8s_arith8_f64_avx512(&p, op, x, y, d, spec, opfl, m);
        for (; k < m; k++) {
            double p0 = val->v[x[k]], q0 = val->v[y[k]], r;
            int bad = val->special[x[k]] | val->special[y[k]];
            opfl[k] = (uint8_t)(val->fl[x[k]] | val->fl[y[k]]);
            if (op == 2) {
                r = p0 * q0;
            } else { /* TwoSum: the error term is zero iff the sum is exact */
                double q = op == 1 ? -q0 : q0, bb;
                r = p0 + q;
                bb = r - p0;
                bad |= ((p0 - (r - bb)) + (q - bb)) != 0;
            }
            if (r == 0 && !bad) bad = op != 2 && p0 != 0 && q0 != 0 ? 2 : 1;
            spec[k] = (uint8_t)bad;
            d[k] = bad ? 1.0 : r;
        }
        sfp8f_run_from_float_sr(t, f, env, seed, stream, index0 + (uint64_t)i0, (const char *)d, 8, 8, (char *)code,
                                1, m, fl);
        or_bytes(fl, opfl, spec, m, &any); /* the operands' reading flags */
        if (any)
            for (ptrdiff_t j = 0; j < m; j++) {
                if (!spec[j]) continue;
                if (spec[j] == 2 && zc >= 0 && !fl[j]) { /* x + (-x): the core's exact zero sum */
                    code[j] = (uint8_t)zc;
                    continue;
                }
                sfp8_env e = *env;
                uint8_t c = 0;
                e.random = sfp8r_bits(hs, base, index0 + (uint64_t)(i0 + j));
                code[j] = (uint8_t)sfp8x_apply(xop, f, x[j], y[j], 0, &e, &c);
                fl[j] = c;
            }
        or_bytes(NULL, NULL, fl, m, &g);
        acc |= g;
        if (so == 1) memcpy(o + i0, code, (size_t)m);
        else
            for (ptrdiff_t j = 0; j < m; j++) *(uint8_t *)(o + (i0 + j) * so) = code[j];
        if (flout) memcpy(flout + i0, fl, (size_t)m);
        i0 += m;
    }
    return acc;
}
