/* sr_from_float8: binary32 / binary64 -> 8-bit formats (the formats of
 * from_float8, not Tesla subnormals) under stochastic rounding (generated
 * random bits).
 *
 * DERIVED from core.c round_pack (its stochastic branch): inside the normal
 * range and below overflow the result is the toward-zero or the
 * away-from-zero neighbour (both read from key tables built by the core),
 * chosen by the core's rule t + R >= 2^N with t = floor(fraction * 2^N) and R
 * the element's counter-based random bits (rng.h, the core's generator);
 * everything else takes the core.  Proven equal by
 * tests/harness/test_harness.py::test_entry [sr_from_float8], and under several layouts
 * (strides, zero strides, unaligned, out= buffers) by
 * tests/harness/test_harness.py::test_entry [sr_from_float8].
 *
 * Kernels: portable C (element by element in order: any overlap); AVX2 (eight
 * lanes in the order L of simd.h, the neighbours from the key tables) and
 * AVX-512 (sixteen lanes, the neighbours from the key tables or, for signed
 * IEEE-subnormal formats with 1..4 mantissa bits, by arithmetic on the input's
 * bits: sr_arith16 below) on contiguous operands sfp8f_apart allows, with the
 * same random bits per element (simd.h, the generator); lanes the rule does not
 * decide go to the core with their random word. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"
#include "from_float8.h"
#include "rng.h"
#include "simd.h"

typedef struct sfp8f_sr {
    const uint16_t *rz, *up, *dn; /* key tables: toward zero, upward, downward */
    const uint32_t *rza;          /* rz | aw << 16, aw = away from zero (up for positive keys, dn for negative);
                                     aw = rz for zero/inf/NaN keys, | 0x8000 for keys the SIMD kernels
                                     send to the core (build_sr) */
    int man_bits, emin;
    /* the AVX-512 kernel's arithmetic form (sfp8s_sr.ar) */
    int ar;
    uint32_t maxmag, signbit, negzero;
} sfp8f_sr;

/* the SIMD kernels' parameters: contiguous input of isize 4 or 8 bytes, one-byte
 * codes out; the lanes of the portable loop, the random bits of element i being
 * sfp8r_bits(seed_key, stream_key, index0 + i); lanes that loop sends to the
 * core are finished by the core (sfp8_convert with a copy of env whose random
 * word is the lane's). */
typedef struct sfp8s_sr {
    const uint32_t *rza;     /* key table: toward zero | away from zero << 16 (sfp8f_sr: its marks) */
    uint64_t seed_key, stream_key, index0;
    int N, M, emin;          /* random bits used, mantissa bits, minimum normal exponent */
    /* 1: subnormal results are rounded here (IEEE subnormals) when tininess needs no
       decision of the unbounded grid: tininess before rounding, or below 2^(emin-1),
       or below 2^emin with the top M significand bits not all ones, and not negative in an unsigned format; they round on the subnormal grid */
    int sub_ok, tin_before, is_signed;
    const void *dst, *env;   /* const sfp8_format *, const sfp8_env * (stochastic) */
    /* 1: the AVX-512 kernel computes the two neighbours by arithmetic instead of
       gathering rza (sr_arith16 below): a signed format with IEEE subnormals
       whose codes 0..maxmag are its finite magnitudes in order (from_float8.c,
       sfp8f_cast64_params), 1 <= M <= 4, -125 <= emin <= 126 */
    int ar;
    uint32_t maxmag, signbit, negzero; /* negzero 1: a zero result keeps the sign bit */
} sfp8s_sr;

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
    t->man_bits = k->a.man_bits;
    t->emin = 1 - k->a.bias;
    { /* env is deterministic here (downward); ok, maxmag, signbit, negzero do not depend on it */
        sfp8s_cast64 c;
        sfp8f_cast64_params(&k->a, &env, &c);
        t->ar = c.ok && t->emin >= -125 && t->emin <= 126; /* sfp8s_sr.ar */
        t->maxmag = c.maxmag;
        t->signbit = c.signbit;
        t->negzero = c.negzero;
    }
    /* the SIMD kernels' marks (sr_cast16): ra = rz for the keys
       of zeros, infinities and NaNs (no rounding: any random word gives rz);
       0x8000 (no flag uses it) for the keys below the normal range (binary32
       exponent field below emin + 127) or whose rz overflows */
    for (uint32_t key = 0; key < 65536; key++) {
        const uint32_t e = (key >> 7) & 0xff, rz = t->rz[key];
        if ((key & 0x7fff) == 0 || e == 255)
            rza[key] = rz | rz << 16;
        else
            rza[key] = rz | (uint32_t)(key & 0x8000u ? t->dn : t->up)[key] << 16 |
                       ((int)e < t->emin + 127 || (rz & (SFP8_FLAG_OVERFLOW << 8)) ? 0x8000u : 0u);
    }
    t->rza = rza;
    *bytes = sizeof *t + 65536 * sizeof(uint32_t);
    return t;
}

static const sfp8f_sr *stochastic(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n)
{
    sfp8_env e2;
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || !sfp8f_from_float_ok(dst) ||
        dst->subnormals == SFP8_SUBNORMALS_TESLA)
        return NULL;
    e2 = *env; /* one table set for every sr_bits: the key holds saturation and tininess only */
    return sfp8f_cached(T_SR, 0, dst, NULL, &e2, build_sr, n, 3 * 65536);
}

const void *sfp8f_sr_from_float8_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if ((c->f->bits != 32 && c->f->bits != 64) || c->dst->bits > 8) return NULL;
    return stochastic(c->dst, c->env, c->n);
}

/* the SIMD kernel of one level: the count done (a multiple of its block); codes,
   flags to flo (or NULL); *acc |= the flags */
typedef ptrdiff_t (*sr_block)(const sfp8s_sr *t, const void *in, int isize, uint8_t *out, ptrdiff_t n, uint8_t *flo,
                              unsigned *acc);

/* The element at a (binary32 if isize is 4, else binary64) with random bits R32 by
 * the rule: its code | flags << 8, or -1 for the core */
static inline AINL int sr_element(const sfp8f_sr *t, const char *a, int isize, int N, uint64_t Rmask, uint32_t R32)
{
    const int M = t->man_bits;
    uint64_t rem, tfr;
    int E, sh;
    uint32_t key;
    uint16_t v;
    if (isize == 4) {
        uint32_t b;
        memcpy(&b, a, 4);
        key = sfp8f_key32(b);
        E = (int)((b >> 23) & 0xff);
        if ((b & 0x7fffffffu) == 0 || E == 255) return t->rz[key]; /* zero, infinity, NaN: no rounding */
        if (E == 0 || E - 127 < t->emin) return -1;
        sh = 23 - M;
        rem = b & ((1u << sh) - 1);
        tfr = N >= sh ? rem << (N - sh) : rem >> (sh - N);
    } else {
        uint64_t b;
        memcpy(&b, a, 8);
        key = sfp8f_key64(b);
        E = (int)((b >> 52) & 0x7ff);
        if ((b & 0x7fffffffffffffffULL) == 0 || E == 2047) return t->rz[key];
        if (E == 0 || E - 1023 < t->emin || E - 1023 > 127) return -1;
        sh = 52 - M;
        rem = b & ((1ULL << sh) - 1);
        tfr = rem >> (sh - N);
    }
    v = t->rz[key];
    if (v & (SFP8_FLAG_OVERFLOW << 8)) return -1;
    {
        uint16_t va = (uint16_t)(t->rza[key] >> 16); /* the key's sign bit picks up or dn */
        uint16_t pick = (uint16_t)-(uint16_t)(tfr + (R32 & Rmask) >= (1ULL << N)); /* branch-free */
        v = (uint16_t)((va & pick) | (v & (uint16_t)~pick));
    }
    return v;
}

static inline AINL unsigned from_float_sr_run(const sfp8f_sr *t, const sfp8f_call *c, sr_block block)
{
    const sfp8_format *dst = c->dst;
    const sfp8_env *env = c->env;
    const uint64_t index0 = c->index0;
    const char *a = c->a;
    char *o = c->o;
    const ptrdiff_t sa = c->sa, so = c->so, n = c->n;
    const int isize = c->isize;
    uint8_t *const flout = c->flout;
    const int N = env->sr_bits >= 1 && env->sr_bits <= 32 ? env->sr_bits : 32;
    const uint64_t hs = sfp8r_seed_key(c->seed), base = sfp8r_stream_key(c->stream); /* hoisted */
    const uint64_t Rmask = (N == 32) ? 0xffffffffULL : ((1ULL << N) - 1);
    unsigned acc = 0;
    sfp8_env e2 = *env;
    ptrdiff_t i = 0;
    if (block && sa == isize && so == 1 && sfp8f_apart(o, 1, 1, a, sa, isize, n)) {
        const sfp8s_sr p = {t->rza, hs, base, index0, N, t->man_bits, t->emin,
                           dst->subnormals == SFP8_SUBNORMALS_IEEE, env->tininess_before != 0, dst->is_signed != 0,
                           dst, env, t->ar, t->maxmag, t->signbit, t->negzero};
        i = block(&p, a, isize, (uint8_t *)o, n, flout, &acc);
        a += i * sa;
        o += i;
    }
    for (; i < n; i++, a += sa, o += so) { /* element i read before output i is written */
        const uint32_t R32 = sfp8r_bits(hs, base, index0 + (uint64_t)i);
        const int v = sr_element(t, a, isize, N, Rmask, R32);
        uint8_t fl = 0;
        if (v >= 0) {
            *(uint8_t *)o = (uint8_t)v;
            fl = (uint8_t)(v >> 8);
        } else { /* the core, with the element's random bits */
            uint64_t bits = 0;
            e2.random = R32;
            memcpy(&bits, a, (size_t)isize);
            *(uint8_t *)o = (uint8_t)sfp8_convert(isize == 4 ? &sfp8_binary32 : &sfp8_binary64, dst, bits, &e2, &fl);
        }
        acc |= fl;
        if (flout) flout[i] = fl;
    }
    return acc;
}

unsigned sfp8f_sr_from_float8_run(const void *t, const sfp8f_call *c) { return from_float_sr_run(t, c, NULL); }

#if SFP8_X86

/* the lanes of core (codes and flags already stored at out, flo) through the
 * core, out of the kernel's loop; returns the OR of their flags */
static __attribute__((noinline)) unsigned sr_core_lanes(const sfp8s_sr *t, const void *in, int isize, ptrdiff_t i,
                                                        unsigned core, uint8_t *out, uint8_t *flo)
{
    sfp8_env e = *(const sfp8_env *)t->env;
    unsigned g = 0;
    for (unsigned m = core; m; m &= m - 1) {
        int k = __builtin_ctz(m);
        uint8_t f8 = 0;
        uint64_t bits = 0;
        memcpy(&bits, (const char *)in + (i + k) * isize, (size_t)isize);
        e.random = sfp8r_bits(t->seed_key, t->stream_key, t->index0 + (uint64_t)(i + k));
        out[i + k] = (uint8_t)sfp8_convert(isize == 4 ? &sfp8_binary32 : &sfp8_binary64, (const sfp8_format *)t->dst,
                                           bits, &e, &f8);
        if (flo) flo[i + k] = f8;
        g |= f8;
    }
    return g;
}

/* ---- AVX2: eight lanes a block, the order L of simd.h ---- */

/* sr_key for eight lanes (order L) */
SFP8_AVX2 static inline AINL __m256i sr_key256(const sfp8s_sr *t, const void *p, int isize, __m256i *tfr)
{
    const __m256i one = _mm256_set1_epi32(1), zero = _mm256_setzero_si256();
    __m256i key;
    if (isize == 4) {
        const int sh = 23 - t->M;
        __m256i b = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)p), _MM_SHUFFLE(3, 1, 2, 0));
        __m256i rem = _mm256_and_si256(b, _mm256_set1_epi32((1 << sh) - 1));
        __m256i st = _mm256_cmpeq_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x1ffff)), zero);
        key = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(0xfffe)),
                              _mm256_andnot_si256(st, one));
        *tfr = t->N >= sh ? _mm256_sll_epi32(rem, _mm_cvtsi32_si128(t->N - sh))
                          : _mm256_srl_epi32(rem, _mm_cvtsi32_si128(sh - t->N));
    } else {
        const int sh = 52 - t->M - t->N; /* 13..51 */
        __m256i b0 = _mm256_loadu_si256((const __m256i *)p), b1 = _mm256_loadu_si256((const __m256i *)p + 1);
        __m256i hi = _mm256_castps_si256(
            _mm256_shuffle_ps(_mm256_castsi256_ps(b0), _mm256_castsi256_ps(b1), _MM_SHUFFLE(3, 1, 3, 1)));
        __m256i lo = lo32L(b0, b1);
        __m256i remhi = _mm256_and_si256(hi, _mm256_set1_epi32((1 << (20 - t->M)) - 1));
        key = key64_256(b0, b1);
        *tfr = sh >= 32 ? _mm256_srl_epi32(remhi, _mm_cvtsi32_si128(sh - 32))
                        : _mm256_or_si256(_mm256_srl_epi32(lo, _mm_cvtsi32_si128(sh)),
                                          _mm256_sll_epi32(remhi, _mm_cvtsi32_si128(32 - sh)));
    }
    return key;
}

/* sr_sub for eight lanes (order L): of the lanes core (all ones), the subnormal
 * results rounded here, their fraction bits in *tfr; returns them (all ones) */
SFP8_AVX2 static inline __m256i sr_sub256(const sfp8s_sr *t, const void *p, int isize, __m256i key, __m256i core,
                                     __m256i *tfr)
{
    __m256i e = _mm256_and_si256(_mm256_srli_epi32(key, 7), _mm256_set1_epi32(0xff));
    __m256i below = _mm256_cmpgt_epi32(_mm256_set1_epi32(t->emin + 127), e);
    __m256i sub = _mm256_and_si256(_mm256_and_si256(core, below),
                                   _mm256_cmpgt_epi32(e, _mm256_set1_epi32(isize == 4 ? 0 : 1)));
    __m256i n = _mm256_set1_epi32(t->N), tt;
    if (!t->tin_before) {
        __m256i ok = _mm256_cmpgt_epi32(_mm256_set1_epi32(t->emin + 126), e);
        if (t->M <= 6) { /* tiny_sure */
            __m256i km = _mm256_set1_epi32(((1 << t->M) - 1) << (7 - t->M));
            ok = _mm256_or_si256(ok, _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(key, km), km),
                                                         _mm256_cmpeq_epi32(e, _mm256_set1_epi32(t->emin + 126))));
        }
        sub = _mm256_and_si256(sub, ok);
    }
    if (!t->is_signed)
        sub = _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(key, _mm256_set1_epi32(0x8000)),
                                                     _mm256_set1_epi32(0x8000)), sub);
    if (!_mm256_movemask_ps(_mm256_castsi256_ps(sub))) return sub;
    if (isize == 4) {
        __m256i b = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)p), _MM_SHUFFLE(3, 1, 2, 0));
        __m256i sig = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffff)), _mm256_set1_epi32(0x800000));
        __m256i sv = _mm256_sub_epi32(_mm256_set1_epi32(23 - t->M + t->emin + 127), e); /* dropped bits */
        __m256i disc = _mm256_and_si256(
            sig, _mm256_sub_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), sv), _mm256_set1_epi32(1)));
        tt = _mm256_blendv_epi8(_mm256_sllv_epi32(disc, _mm256_sub_epi32(n, sv)),
                                _mm256_srlv_epi32(disc, _mm256_sub_epi32(sv, n)),
                                _mm256_cmpgt_epi32(sv, _mm256_sub_epi32(n, _mm256_set1_epi32(1))));
    } else { /* binary64: lane by lane (rare lanes; shifts beyond 63 give zero fraction bits) */
        uint64_t b[8];
        uint32_t tl[8];
        static const int L[8] = {0, 1, 4, 5, 2, 3, 6, 7};
        memcpy(b, p, sizeof b);
        for (int k = 0; k < 8; k++) {
            const uint64_t x = b[L[k]], sig = (x & 0xFFFFFFFFFFFFFULL) | 1ULL << 52;
            /* dropped bits, > 52 - M > N in the lanes of sub; the other lanes (any sv) get 0 */
            const int sv = 52 - t->M + t->emin + 1023 - (int)((x >> 52) & 0x7ff);
            tl[k] = sv < t->N || sv - t->N >= 53
                        ? 0
                        : (uint32_t)((sv >= 64 ? sig : sig & ((1ULL << sv) - 1)) >> (sv - t->N));
        }
        tt = _mm256_loadu_si256((const __m256i *)(const void *)tl);
    }
    *tfr = _mm256_blendv_epi8(*tfr, tt, sub);
    return sub;
}

SFP8_AVX2 static inline AINL ptrdiff_t sr_cast_run256(const sfp8s_sr *tp, const void *in, int isize, uint8_t *out,
                                                 ptrdiff_t n, uint8_t *flo, unsigned *acc)
{
    const sfp8s_sr t = *tp;
    const __m256i rmask = _mm256_set1_epi32((int)(t.N == 32 ? 0xffffffffu : (1u << t.N) - 1));
    const __m256i sgn = _mm256_set1_epi32((int)0x80000000u), c8000 = _mm256_set1_epi32(0x8000);
    /* byte 0 (code) of each lane to bytes 0..3 of its half, byte 1 (flags) to bytes 4..7 */
    const __m256i pk = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, 1, 5, 9,
                                        13, -1, -1, -1, -1, -1, -1, -1, -1);
    rng4 g = rng4_init(t.seed_key, t.stream_key, t.index0);
    __m256i facc = _mm256_setzero_si256();
    unsigned a = 0;
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const void *p = (const char *)in + i * isize;
        __m256i tfr, key = sr_key256(&t, p, isize, &tfr);
        __m256i v = _mm256_i32gather_epi32((const int *)(const void *)t.rza, key, 4);
        __m256i R = _mm256_and_si256(rng8L(&g), rmask), pick;
        __m256i core = _mm256_cmpeq_epi32(_mm256_and_si256(v, c8000), c8000);
        unsigned cm = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(core));
        if (cm && t.sub_ok) {
            __m256i sub = sr_sub256(&t, p, isize, key, core, &tfr);
            v = _mm256_andnot_si256(_mm256_and_si256(sub, c8000), v);
            core = _mm256_andnot_si256(sub, core);
            cm = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(core));
        }
        /* t + R >= 2^N  <=>  R > (2^N - 1) - t, unsigned */
        pick = _mm256_cmpgt_epi32(_mm256_xor_si256(R, sgn), _mm256_xor_si256(_mm256_sub_epi32(rmask, tfr), sgn));
        v = _mm256_blendv_epi8(v, _mm256_srli_epi32(v, 16), pick);
        facc = _mm256_or_si256(facc, _mm256_andnot_si256(core, v));
        store8(out + i, flo ? flo + i : NULL, unpackL(_mm256_shuffle_epi8(v, pk)));
        if (cm) a |= sr_core_lanes(&t, in, isize, i, maskL(cm), out, flo);
    }
    *acc |= a | or_byte1(facc);
    return i;
}

SFP8_AVX2 static ptrdiff_t block_avx2(const sfp8s_sr *t, const void *in, int isize, uint8_t *out, ptrdiff_t n,
                                        uint8_t *flo, unsigned *acc)
{
    return isize == 4 ? sr_cast_run256(t, in, 4, out, n, flo, acc) : sr_cast_run256(t, in, 8, out, n, flo, acc);
}

unsigned sfp8f_sr_from_float8_run_avx2(const void *t, const sfp8f_call *c) { return from_float_sr_run(t, c, block_avx2); }

/* ---- AVX-512: sixteen lanes a block ---- */

/* Tininess after rounding: the lanes of the binade below 2^emin (binary32
 * exponent field e == emin + 126) whose rounding on the unbounded grid cannot
 * reach 2^emin, so that they are tiny whatever the random word: the top M bits
 * of the significand (key bits 6..1) not all ones.  The others take the core. */
SFP8_AVX512 static inline __mmask16 tiny_sure(const sfp8s_sr *t, __m512i key, __m512i e)
{
    __m512i km;
    if (t->M > 6) return 0;
    km = _mm512_set1_epi32(((1 << t->M) - 1) << (7 - t->M));
    return _mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32(t->emin + 126)) &
           _mm512_cmpneq_epi32_mask(_mm512_and_si512(key, km), km);
}

/* sixteen lanes of binary32 (isize 4) or binary64 at p: the key (fast.h) and
 * the fraction bits t (N bits) of the format's normal range */
SFP8_AVX512 static inline AINL __m512i sr_key(const sfp8s_sr *t, const void *p, int isize,
                                                               __m512i *tfr)
{
    __m512i key;
    if (isize == 4) {
        const int sh = 23 - t->M;
        __m512i b = _mm512_loadu_si512(p), rem = _mm512_and_si512(b, _mm512_set1_epi32((1 << sh) - 1));
        key = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(0xfffe));
        key = _mm512_mask_or_epi32(key, _mm512_test_epi32_mask(b, _mm512_set1_epi32(0x1ffff)), key,
                                   _mm512_set1_epi32(1));
        *tfr = t->N >= sh ? _mm512_sll_epi32(rem, _mm_cvtsi32_si128(t->N - sh))
                          : _mm512_srl_epi32(rem, _mm_cvtsi32_si128(sh - t->N));
    } else {
        /* the high and low words of the sixteen binary64 (one permute each); in 32-bit
           lanes the key of from_float8.c's sfp8f_key64 for exponents inside binary32's normal
           range and for zeros, else key64x16f for the block */
        const int sh = 52 - t->M - t->N; /* 13..51 */
        const __m512i b0 = _mm512_loadu_si512(p), b1 = _mm512_loadu_si512((const char *)p + 64);
        const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        __m512i lo = _mm512_permutex2var_epi32(b0, ev, b1);
        __m512i hi = _mm512_permutex2var_epi32(b0, _mm512_add_epi32(ev, _mm512_set1_epi32(1)), b1);
        __m512i h16 = _mm512_srli_epi32(hi, 16);
        __m512i remhi = _mm512_and_si512(hi, _mm512_set1_epi32((1 << (20 - t->M)) - 1));
        __mmask16 inr = _mm512_cmplt_epu32_mask(
            _mm512_sub_epi32(_mm512_and_si512(hi, _mm512_set1_epi32(0x7ff00000)), _mm512_set1_epi32(897 << 20)),
            _mm512_set1_epi32(254 << 20));
        __mmask16 zero = _mm512_testn_epi32_mask(hi, _mm512_set1_epi32(0x7fffffff)) & _mm512_testn_epi32_mask(lo, lo);
        if ((__mmask16)(inr | zero) != 0xffff) {
            key = key64x16f(b0, b1);
        } else {
            key = _mm512_ternarylogic_epi32(
                _mm512_and_si512(_mm512_sub_epi32(_mm512_srli_epi32(hi, 13), _mm512_set1_epi32(896 << 7)),
                                 _mm512_set1_epi32(0x7ffe)),
                h16, _mm512_set1_epi32(0x8000), 0xf8); /* A | (B & C) */
            key = _mm512_mask_or_epi32(key, _mm512_test_epi32_mask(hi, _mm512_set1_epi32(0x3fff)) |
                                                _mm512_test_epi32_mask(lo, lo),
                                       key, _mm512_set1_epi32(1));
            key = _mm512_mask_and_epi32(key, zero, h16, _mm512_set1_epi32(0x8000));
        }
        *tfr = sh >= 32 ? _mm512_srl_epi32(remhi, _mm_cvtsi32_si128(sh - 32))
                        : _mm512_or_si512(_mm512_srl_epi32(lo, _mm_cvtsi32_si128(sh)),
                                          _mm512_sll_epi32(remhi, _mm_cvtsi32_si128(32 - sh)));
    }
    return key;
}

/* The subnormal grid 2^(emin - M) of sixteen lanes at p, binary32 (biased
 * exponent fields e) or binary64 (read from p), normal in their own format and
 * below 2^emin: sv dropped significand bits, *K = sig >> sv, *nz = lanes with a
 * dropped bit set; returns t, the top N of the sv dropped bits.  Lanes outside
 * that range get any values. */
SFP8_AVX512 static inline AINL __m512i sub_grid(const sfp8s_sr *t, const void *p, int isize,
                                                                 __m512i e, __m512i *K, __mmask16 *nz)
{
    if (isize == 4) {
        const __m512i b = _mm512_loadu_si512(p), n = _mm512_set1_epi32(t->N);
        __m512i sig = _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi32(0x7fffff)), _mm512_set1_epi32(0x800000));
        __m512i sv = _mm512_sub_epi32(_mm512_set1_epi32(23 - t->M + t->emin + 127), e); /* 24 - M.. dropped bits */
        __m512i disc = _mm512_and_si512(
            sig, _mm512_sub_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), sv), _mm512_set1_epi32(1)));
        *K = _mm512_srlv_epi32(sig, sv); /* 0 from 32 dropped bits on */
        *nz = _mm512_test_epi32_mask(disc, disc);
        return _mm512_mask_mov_epi32(_mm512_sllv_epi32(disc, _mm512_sub_epi32(n, sv)), _mm512_cmpge_epi32_mask(sv, n),
                                     _mm512_srlv_epi32(disc, _mm512_sub_epi32(sv, n)));
    } else {
        __m256i k2[2], t2[2];
        __mmask8 nz2[2];
        for (int h = 0; h < 2; h++) {
            __m512i b = _mm512_loadu_si512((const char *)p + 64 * h);
            __m512i e64 = _mm512_and_si512(_mm512_srli_epi64(b, 52), _mm512_set1_epi64(0x7ff));
            __m512i sig = _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi64(0xFFFFFFFFFFFFFLL)),
                                          _mm512_set1_epi64(1LL << 52));
            /* 53 - M.. dropped bits, so t is a right shift */
            __m512i sv = _mm512_sub_epi64(_mm512_set1_epi64(52 - t->M + t->emin + 1023), e64);
            __m512i disc = _mm512_and_si512(
                sig, _mm512_sub_epi64(_mm512_sllv_epi64(_mm512_set1_epi64(1), sv), _mm512_set1_epi64(1)));
            k2[h] = _mm512_cvtepi64_epi32(_mm512_srlv_epi64(sig, sv));
            t2[h] = _mm512_cvtepi64_epi32(_mm512_srlv_epi64(disc, _mm512_sub_epi64(sv, _mm512_set1_epi64(t->N))));
            nz2[h] = _mm512_test_epi64_mask(disc, disc);
        }
        *K = _mm512_inserti64x4(_mm512_castsi256_si512(k2[0]), k2[1], 1);
        *nz = (__mmask16)_mm512_kunpackb(nz2[1], nz2[0]);
        return _mm512_inserti64x4(_mm512_castsi256_si512(t2[0]), t2[1], 1);
    }
}

/* Of the lanes core (the table's 0x8000: below the normal range, or overflow),
 * the subnormal results that are rounded here (sfp8s_sr, sub_ok), on the grid
 * of 2^(emin - M): their fraction bits replace tfr's; returns them.  Binary32
 * exponent fields from 1, binary64 ones from -125 (key64x16f's e32 >= 2). */
SFP8_AVX512 static inline __mmask16 sr_sub(const sfp8s_sr *t, const void *p, int isize, __m512i key, __mmask16 core,
                                   __m512i *tfr)
{
    __m512i e = _mm512_and_si512(_mm512_srli_epi32(key, 7), _mm512_set1_epi32(0xff));
    __mmask16 sub = core & _mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(t->emin + 127)) &
                    _mm512_cmpge_epi32_mask(e, _mm512_set1_epi32(isize == 4 ? 1 : 2)) &
                    (t->tin_before ? (__mmask16)0xffff
                                   : _mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(t->emin + 126)) | tiny_sure(t, key, e));
    if (!t->is_signed) sub &= (__mmask16)~_mm512_test_epi32_mask(key, _mm512_set1_epi32(0x8000));
    if (!sub) return 0;
    {
        __m512i K;
        __mmask16 nz;
        *tfr = _mm512_mask_mov_epi32(*tfr, sub, sub_grid(t, p, isize, e, &K, &nz));
    }
    return sub;
}

/* sixteen lanes at i with the random bits R (masked to N bits): stores codes
 * (and flags), ORs the flags of the lanes it decides into *facc, returns the
 * lanes for the core.  The table's entries (build_sr) carry
 * 0x8000 for the keys the normal-range rule does not decide (below the normal
 * range, or overflow) and ra == rz for zeros, infinities and NaNs. */
SFP8_AVX512 static inline AINL __mmask16 sr_cast16(const sfp8s_sr *t, const void *in, int isize,
                                                                    ptrdiff_t i, __m512i R, __m512i rmask,
                                                                    uint8_t *out, uint8_t *flo, __m128i *facc)
{
    const void *p = (const char *)in + i * isize;
    __m512i tfr, key = sr_key(t, p, isize, &tfr), v = _mm512_i32gather_epi32(key, (const void *)t->rza, 4);
    __mmask16 core = _mm512_test_epi32_mask(v, _mm512_set1_epi32(0x8000)), pick;
    __m128i code, fl;
    if (core && t->sub_ok) {
        __mmask16 sub = sr_sub(t, p, isize, key, core, &tfr);
        v = _mm512_mask_and_epi32(v, sub, v, _mm512_set1_epi32(~0x8000));
        core &= (__mmask16)~sub;
    }
    /* t + R >= 2^N  <=>  R > (2^N - 1) - t */
    pick = _mm512_cmpgt_epu32_mask(R, _mm512_sub_epi32(rmask, tfr));
    v = _mm512_mask_srli_epi32(v, pick, v, 16);
    code = _mm512_cvtepi32_epi8(v);
    fl = _mm512_cvtepi32_epi8(_mm512_srli_epi32(v, 8));
    _mm_storeu_si128((__m128i *)(out + i), code);
    if (flo) _mm_storeu_si128((__m128i *)(flo + i), fl);
    *facc = _mm_or_si128(*facc, _mm_maskz_mov_epi8((__mmask16)~core, fl));
    return core;
}

/* ---- the same cast by arithmetic (sfp8s_sr.ar): no key table ----
 *
 * DERIVED from core.c round_pack (its stochastic branch) like sr_cast16, with
 * the two neighbours computed instead of gathered from rza (Zen 4, 10^7
 * elements: float32 -> E4M3 0.95 -> 0.68 ns, float64 1.28 -> 0.76 ns).
 * The input is read as sign, biased exponent E and F fraction bits (binary32:
 * F = 23, bias 127; binary64: the high words, F = 20 + 32, bias 1023):
 *   - |x| >= 2^emin: the toward-zero neighbour's magnitude code is the input's
 *     exponent and leading M fraction bits read as one integer, less
 *     (bias + emin - 1) << M (the code of 2^emin is 1 << M); the away neighbour
 *     is the next code (its carry into the exponent included); the F - M
 *     dropped bits give inexact (not all zero) and t (their top N bits).
 *   - 0 < |x| < 2^emin, x normal in its own format: the subnormal grid
 *     2^(emin - M), sv = F - M + (bias + emin) - E dropped bits of the
 *     significand sig: K = sig >> sv, t = the top N of the sv dropped bits
 *     (sr_sub's arithmetic); every such lane is tiny: below 2^emin before
 *     rounding, and after rounding too except in the binade below 2^emin with
 *     the top M fraction bits all ones (the unbounded grid may carry to
 *     2^emin there), which takes the core when tininess is after rounding.
 *   - zeros: the zero of the sign (negzero), no flag.
 * Lanes whose rounded magnitude exceeds maxmag (overflow, infinities and NaNs,
 * whose exponent field gives a magnitude far above it), input subnormals and
 * the tininess lanes above take the core (sr_core_lanes).  The choice between
 * the neighbours is sr_cast16's: away iff t + R >= 2^N.  Flags: inexact, with
 * underflow on the subnormal grid. */

/* the lanes of rest (nonzero, below 2^emin) rounded on the subnormal grid:
 * replaces their mag, tfr and ix; returns them.  a: |x| (binary32) or the
 * high words of |x| (binary64) in 32-bit lanes */
SFP8_AVX512 static inline __mmask16 sr_arith_sub(const sfp8s_sr *t, const void *p, int isize, __m512i a, __mmask16 rest,
                                         __m512i *mag, __m512i *tfr, __mmask16 *ix)
{
    const int M = t->M, fb = isize == 4 ? 23 : 20; /* fraction bits in a */
    const __m512i e = _mm512_srli_epi32(a, fb & 31);
    const __m512i km = _mm512_set1_epi32(((1 << M) - 1) << (fb - M));
    __mmask16 sub = rest & _mm512_cmpge_epi32_mask(e, _mm512_set1_epi32(1)), nz;
    __m512i K, tt;
    if (!t->tin_before)
        sub &= (__mmask16)~(_mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32((isize == 4 ? 126 : 1022) + t->emin)) &
                            _mm512_cmpeq_epi32_mask(_mm512_and_si512(a, km), km));
    if (!sub) return 0;
    tt = sub_grid(t, p, isize, e, &K, &nz);
    *mag = _mm512_mask_mov_epi32(*mag, sub, K);
    *tfr = _mm512_mask_mov_epi32(*tfr, sub, tt);
    *ix = (__mmask16)((*ix & ~sub) | (nz & sub));
    return sub;
}

/* sixteen lanes at i, as sr_cast16 (same return and flag stores), their codes in the
 * low bytes of *codev (the caller stores them); the flags' OR in *fm */
SFP8_AVX512 static inline AINL __mmask16 sr_arith16(const sfp8s_sr *t, const void *in, int isize,
                                                                     ptrdiff_t i, __m512i R, __m512i rmask,
                                                                     __m512i *codev, uint8_t *flo, uint32_t *fm)
{
    const void *p = (const char *)in + i * isize;
    const int M = t->M;
    __m512i a, mag, tfr, code, fl;
    __mmask16 neg, ix, norm, zero, rest, sub = 0, core = 0, pick, sgn;
    if (isize == 4) {
        const int sh = 23 - M;
        const __m512i b = _mm512_loadu_si512(p);
        __m512i rem;
        neg = _mm512_movepi32_mask(b);
        a = _mm512_and_si512(b, _mm512_set1_epi32(0x7fffffff));
        rem = _mm512_and_si512(a, _mm512_set1_epi32((1 << sh) - 1));
        ix = _mm512_test_epi32_mask(rem, rem);
        tfr = t->N >= sh ? _mm512_sll_epi32(rem, _mm_cvtsi32_si128(t->N - sh))
                         : _mm512_srl_epi32(rem, _mm_cvtsi32_si128(sh - t->N));
        mag = _mm512_sub_epi32(_mm512_srl_epi32(a, _mm_cvtsi32_si128(sh)), _mm512_set1_epi32((126 + t->emin) << M));
        norm = _mm512_cmpge_epu32_mask(a, _mm512_set1_epi32((127 + t->emin) << 23));
        zero = _mm512_testn_epi32_mask(a, a);
    } else {
        const int sh = 52 - M - t->N; /* 16..51: the dropped bits' top N start here */
        const __m512i b0 = _mm512_loadu_si512(p), b1 = _mm512_loadu_si512((const char *)p + 64);
        const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        __m512i lo = _mm512_permutex2var_epi32(b0, ev, b1);
        __m512i hi = _mm512_permutex2var_epi32(b0, _mm512_add_epi32(ev, _mm512_set1_epi32(1)), b1);
        __m512i remhi;
        neg = _mm512_movepi32_mask(hi);
        a = _mm512_and_si512(hi, _mm512_set1_epi32(0x7fffffff));
        remhi = _mm512_and_si512(a, _mm512_set1_epi32((1 << (20 - M)) - 1));
        ix = _mm512_test_epi32_mask(remhi, remhi) | _mm512_test_epi32_mask(lo, lo);
        tfr = sh >= 32 ? _mm512_srl_epi32(remhi, _mm_cvtsi32_si128(sh - 32))
                       : _mm512_or_si512(_mm512_srl_epi32(lo, _mm_cvtsi32_si128(sh)),
                                         _mm512_sll_epi32(remhi, _mm_cvtsi32_si128(32 - sh)));
        mag = _mm512_sub_epi32(_mm512_srli_epi32(a, (unsigned)(20 - M)), _mm512_set1_epi32((1022 + t->emin) << M));
        norm = _mm512_cmpge_epu32_mask(a, _mm512_set1_epi32((1023 + t->emin) << 20));
        zero = _mm512_testn_epi32_mask(a, a) & _mm512_testn_epi32_mask(lo, lo);
    }
    mag = _mm512_maskz_mov_epi32(norm, mag);
    rest = (__mmask16) ~(norm | zero);
    if (rest) {
        sub = sr_arith_sub(t, p, isize, a, rest, &mag, &tfr, &ix);
        core = (__mmask16)(rest & ~sub);
    }
    /* t + R >= 2^N  <=>  R > (2^N - 1) - t; t = 0 where exact, so only inexact lanes move */
    pick = _mm512_cmpgt_epu32_mask(R, _mm512_sub_epi32(rmask, tfr));
    mag = _mm512_mask_add_epi32(mag, pick, mag, _mm512_set1_epi32(1));
    core |= _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32((int)t->maxmag));
    sgn = neg & (t->negzero ? (__mmask16)0xffff : _mm512_test_epi32_mask(mag, mag));
    code = _mm512_mask_or_epi32(mag, sgn, mag, _mm512_set1_epi32((int)t->signbit));
    *codev = code;
    if (flo) {
        fl = _mm512_maskz_mov_epi32(ix, _mm512_set1_epi32(SFP8_FLAG_INEXACT));
        fl = _mm512_mask_mov_epi32(fl, ix & sub, _mm512_set1_epi32(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW));
        _mm_storeu_si128((__m128i *)(flo + i), _mm512_cvtepi32_epi8(fl));
    }
    /* the flags' OR as two lane masks (inexact; underflow), core lanes left out */
    *fm = (uint32_t)(*fm | (ix & (__mmask16)~core) | (uint32_t)(ix & sub & (__mmask16)~core) << 16);
    return core;
}

/* the kernel for one input size (isize a constant after inlining); t is a local
 * copy, so that the stores to out cannot reload its fields */
SFP8_AVX512 static inline AINL ptrdiff_t sr_cast_run(const sfp8s_sr *tp, const void *in, int isize,
                                                                      int ar, uint8_t *out, ptrdiff_t n,
                                                                      uint8_t *flo, unsigned *acc)
{
    const sfp8s_sr t = *tp;
    const __m512i rmask = _mm512_set1_epi32((int)(t.N == 32 ? 0xffffffffu : (1u << t.N) - 1));
    rng16 g = rng16_init(t.seed_key, t.stream_key, t.index0);
    __m128i facc = _mm_setzero_si128();
    uint32_t fm = 0; /* ar: lanes that were inexact | underflow << 16 */
    const __m512i bytes0 = _mm512_set_epi8(124, 120, 116, 112, 108, 104, 100, 96, 92, 88, 84, 80, 76, 72, 68, 64, 60,
                                           56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 124, 120, 116,
                                           112, 108, 104, 100, 96, 92, 88, 84, 80, 76, 72, 68, 64, 60, 56, 52, 48, 44,
                                           40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0);
    unsigned a = 0;
    ptrdiff_t i = 0;
    for (; i + 32 <= n; i += 32) { /* two blocks: the generator's chains of both overlap */
        __m512i R0 = _mm512_and_si512(rng16_next(&g), rmask), R1 = _mm512_and_si512(rng16_next(&g), rmask);
        __mmask16 c0, c1;
        if (ar) { /* the 32 codes' low bytes by one two-source byte permute */
            __m512i v0, v1;
            c0 = sr_arith16(&t, in, isize, i, R0, rmask, &v0, flo, &fm);
            c1 = sr_arith16(&t, in, isize, i + 16, R1, rmask, &v1, flo, &fm);
            _mm256_storeu_si256((__m256i *)(void *)(out + i),
                                _mm512_castsi512_si256(_mm512_permutex2var_epi8(v0, bytes0, v1)));
        } else {
            c0 = sr_cast16(&t, in, isize, i, R0, rmask, out, flo, &facc);
            c1 = sr_cast16(&t, in, isize, i + 16, R1, rmask, out, flo, &facc);
        }
        if (c0 | c1) {
            if (c0) a |= sr_core_lanes(&t, in, isize, i, c0, out, flo);
            if (c1) a |= sr_core_lanes(&t, in, isize, i + 16, c1, out, flo);
        }
    }
    for (; i + 16 <= n; i += 16) {
        __m512i R = _mm512_and_si512(rng16_next(&g), rmask), v;
        __mmask16 c;
        if (ar) {
            c = sr_arith16(&t, in, isize, i, R, rmask, &v, flo, &fm);
            _mm_storeu_si128((__m128i *)(void *)(out + i), _mm512_cvtepi32_epi8(v));
        } else {
            c = sr_cast16(&t, in, isize, i, R, rmask, out, flo, &facc);
        }
        if (c) a |= sr_core_lanes(&t, in, isize, i, c, out, flo);
    }
    if (fm & 0xffffu) a |= SFP8_FLAG_INEXACT;
    if (fm >> 16) a |= SFP8_FLAG_UNDERFLOW;
    *acc |= a | or16(facc);
    return i;
}

SFP8_AVX512 static ptrdiff_t block_avx512(const sfp8s_sr *t, const void *in, int isize, uint8_t *out, ptrdiff_t n,
                                         uint8_t *flo, unsigned *acc)
{
    if (t->ar)
        return isize == 4 ? sr_cast_run(t, in, 4, 1, out, n, flo, acc) : sr_cast_run(t, in, 8, 1, out, n, flo, acc);
    return isize == 4 ? sr_cast_run(t, in, 4, 0, out, n, flo, acc) : sr_cast_run(t, in, 8, 0, out, n, flo, acc);
}

unsigned sfp8f_sr_from_float8_run_avx512(const void *t, const sfp8f_call *c) { return from_float_sr_run(t, c, block_avx512); }
#endif
