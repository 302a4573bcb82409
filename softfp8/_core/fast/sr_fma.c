/* sr_fma: fma of formats of <= 16 bits under stochastic rounding (generated
 * random bits), on the table of sr_arith16 (sr.h, sfp8f_sr16).
 *
 * DERIVED from core.c round_pack (its stochastic branch) as sr16_one: x*y is
 * exact in binary64 (at most 2 x 21 significant bits), x*y + z rounded to odd
 * (fast.h, sfp8f_odd_sum) has the exact result's exponent, its first 51
 * fraction bits and a non-zero rest iff the exact one's is: with M + N <= 51
 * the code K, t = floor(fraction * 2^N) and inexact are the exact result's,
 * and sfp8f_sr16_round (sr.h) applies the core's rule.  Zero, tiny or overflowing results
 * and NaN or infinite operands take the core.  Proven equal by
 * tests/harness/test_harness.py::test_entry [sr_fma].
 *
 * Kernels: portable C (element by element in order: any overlap); AVX-512
 * (eight binary64 lanes: x*y exact, + z rounded to odd, then sr16d's rule with
 * the generator's words; 8-bit codes decoded arithmetically when sr16_dec8
 * allows, 16-bit ones by arith16.h's decoding, else gathered from vf; results
 * below 2^emin of IEEE-subnormal formats on the subnormal grid) on contiguous
 * operands apart from the output, blocks of SR_BLK.  No AVX2 kernel: level 1
 * runs the portable loop. */
#include <math.h>
#include <string.h>

#include "arith16.h"
#include "ops.h"
#include "simd.h"
#include "sr.h"

static inline uint8_t srf_one(const sfp8f_sr16 *t, uint32_t x, uint32_t y, uint32_t z, uint32_t Rn, uint32_t Rmask,
                              int N, uint32_t *code)
{
    const uint64_t bx = t->vf[x & t->mask], by = t->vf[y & t->mask], bz = t->vf[z & t->mask];
    const uint64_t ux = bx & ~(uint64_t)0xff, uy = by & ~(uint64_t)0xff, uz = bz & ~(uint64_t)0xff;
    uint16_t c16 = 0;
    uint8_t fl;
    double a, b, d, s;
    if ((bx | by | bz) & 0x80) return 0x80;
    memcpy(&a, &ux, 8);
    memcpy(&b, &uy, 8);
    memcpy(&d, &uz, 8);
    fl = sfp8f_sr16_round(t, sfp8f_odd_sum(a * b, d, &s), (uint8_t)((bx | by | bz) & 0x7f), Rn, Rmask, N, &c16);
    *code = c16;
    return fl;
}

static const sfp8f_sr16 *stochastic_fma(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    const int N = env->sr_bits >= 1 && env->sr_bits <= 32 ? env->sr_bits : 32;
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || f->bits > 16 || f->exp_bits > 8 ||
        f->bias < -100 || f->bias > 300 || f->man_bits + N > 51)
        return NULL;
    return sfp8f_cached(T_SR16, 0, f, NULL, env, sfp8f_build_sr16, n, f->bits <= 8 ? 256 : 65536);
}

const void *sfp8f_sr_fma_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (c->op != X_FMA) return NULL;
    return stochastic_fma(c->f, c->env, c->n);
}

/* the SIMD kernel's parameters: fma (s.op 5) of codes of isz (1 or 2) bytes, out =
   x*y + z by srf_one's rule, n a multiple of 8; lanes it does not cover get flags
   0x80; returns the OR of the flags */
typedef struct sfp8s_srf {
    sfp8s_sr16 s; /* s.op 5; 16-bit codes decoded by s.a16 if set, else gathered from s.vf */
    /* 8-bit codes: dec8 1: decoded arithmetically, a magnitude m = code & magmask
       above s.maxmag uncovered, else (m >> M == 0 ? (m as binary64) * sub, | subfl
       if m != 0 : (m << (52 - M)) + off) with the sign (code & s.signbit) << sshift
       (sr_arith16.c, sr16_dec8, checks this against s.vf for every code); dec8 0: gathered
       from s.vf */
    int dec8, sshift;
    uint64_t magmask, off, subfl;
    double sub;
    /* results below 2^emin: 0 the core; IEEE subnormals: K and t on the grid of
       2^(emin - M) from |d| * tscale (= 2^(M - emin)), underflow iff inexact, with
       tininess 1 before rounding, 2 after (results in the top half-ulp below
       2^emin that are inexact: the core); exact zeros: the sign of d */
    int tiny;
    double tscale;
} sfp8s_srf;

typedef unsigned (*srf_block)(const sfp8s_srf *p, int isz, const char *x, const char *y, const char *z, char *out,
                              uint8_t *fl, ptrdiff_t n);

/* The SIMD kernel takes contiguous operands apart from the output (fast_impl.h,
 * sfp8f_apart) in blocks of SR_BLK; otherwise, and below AVX-512, the loop,
 * element by element in order */
static inline AINL unsigned fma_sr_run(const sfp8f_sr16 *t, const sfp8f_call *call, srf_block block)
{
    const sfp8_format *f = call->f;
    const sfp8_env *env = call->env;
    const uint64_t seed = call->seed, stream = call->stream, index0 = call->index0;
    const char *a = call->a, *b = call->b, *z = call->c;
    char *o = call->o;
    const ptrdiff_t sa = call->sa, sb = call->sb, sz = call->sc, so = call->so, n = call->n;
    uint8_t *const flout = call->flout;
    const int isz = f->bits <= 8 ? 1 : 2;
    const sr_call c = {X_FMA, f, NULL, env, sr_keys_of(env, seed, stream), index0, a, b, o, sa, sb, so, n, flout, z};
    unsigned acc = 0;
    ptrdiff_t i = 0;
    sfp8_env e = *env;
    if (block && sa == isz && sb == isz && sz == isz && so == isz && o != a && o != b && o != z &&
        sfp8f_apart(o, so, isz, a, sa, isz, n) && sfp8f_apart(o, so, isz, b, sb, isz, n) &&
        sfp8f_apart(o, so, isz, z, sz, isz, n)) {
        uint8_t fl[SR_BLK];
        sfp8_env ne = *env;
        const sfp8f_a16 *d16;
        sfp8s_a16 sa16;
        /* results below 2^emin: IEEE subnormals of a format the rounder covers (not
           build_sr16's normal-range parameters) */
        sfp8f_rnd rr;
        int tiny;
        ne.rounding = SFP8_ROUND_NEAREST_EVEN; /* the arithmetic decoding of arith16.h */
        tiny = f->subnormals == SFP8_SUBNORMALS_IEEE && sfp8f_rounder(f, &ne, &rr) ? 2 - (env->tininess_before != 0) : 0;
        d16 = isz == 2 && n >= 16 ? sfp8f_arith16_table(f, &ne, n, 2) : NULL;
        if (d16) sa16 = sfp8f_a16_params(d16, f);
        for (; i + 8 <= n; i += SR_BLK) {
            const ptrdiff_t m = n - i < SR_BLK ? (n - i) & ~(ptrdiff_t)7 : SR_BLK;
            uint8_t *of = flout ? flout + i : fl;
            const sfp8s_srf p = {{t->vf, t->mask, c.k.hs, c.k.base, index0 + (uint64_t)i, c.k.N, 5, t->r.M,
                                  t->r.emin + 1023, t->r.maxmag, t->r.signbit, d16 ? &sa16 : NULL},
                                 t->dec8, t->sshift, t->magmask, t->off, t->subfl, t->sub,
                                 tiny, ldexp(1.0, t->r.M - t->r.emin)};
            unsigned g = block(&p, isz, a + isz * i, b + isz * i, z + isz * i, o + isz * i, of, m);
            if (g & 0x80) g = sfp8f_sr_finish_core(&c, i, a + isz * i, b + isz * i, o + isz * i, isz, of, m);
            acc |= g;
            if (m < SR_BLK) {
                i += m;
                break;
            }
        }
        a += i * sa;
        b += i * sb;
        z += i * sz;
        o += i * so;
    }
    for (; i < n; i++, a += sa, b += sb, z += sz, o += so) { /* any overlap: element i read before output i is written */
        const uint32_t x = (uint32_t)sfp8f_ld(a, isz), y = (uint32_t)sfp8f_ld(b, isz), w = (uint32_t)sfp8f_ld(z, isz);
        const uint32_t R = sfp8r_bits(c.k.hs, c.k.base, index0 + (uint64_t)i);
        uint32_t code = 0;
        uint8_t fl = srf_one(t, x, y, w, R & c.k.Rmask, c.k.Rmask, c.k.N, &code);
        if (fl & 0x80) {
            fl = 0;
            e.random = R;
            code = sfp8x_apply(X_FMA, f, x, y, w, &e, &fl);
        }
        sfp8f_st(o, code, isz);
        acc |= fl;
        if (flout) flout[i] = fl;
    }
    return acc;
}

unsigned sfp8f_sr_fma_run(const void *t, const sfp8f_call *c) { return fma_sr_run(t, c, NULL); }

#if SFP8_X86

/* ---- fma under stochastic rounding (srf_one):
 *      eight lanes of binary64, x*y exact, + z rounded to odd (as a16_512),
 *      then the rule of sr16d_avx512 with R from rand8_high. ---- */

SFP8_AVX512 static inline AINL __m512i srf_load(const sfp8s_srf *q, int isz, const char *x, __m512i msk)
{
    const sfp8s_sr16 *p = &q->s;
    __m512i i;
    if (isz == 2 && p->a16) return a16_load512(p->a16, (const uint16_t *)(const void *)x, msk);
    i = isz == 1 ? _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)x))
                 : _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(const void *)x));
    if (isz == 1 && q->dec8) {
        const __m512i mag = _mm512_and_si512(i, _mm512_set1_epi64((long long)q->magmask));
        const __mmask8 sub = _mm512_testn_epi64_mask(mag, _mm512_set1_epi64(-(1LL << p->M)));
        __m512i v = _mm512_add_epi64(_mm512_sll_epi64(mag, _mm_cvtsi32_si128(52 - p->M)), _mm512_set1_epi64((long long)q->off));
        v = _mm512_mask_mov_epi64(v, sub, _mm512_castpd_si512(_mm512_mul_pd(_mm512_cvtepi64_pd(mag), _mm512_set1_pd(q->sub))));
        v = _mm512_mask_or_epi64(v, sub & _mm512_test_epi64_mask(mag, mag), v, _mm512_set1_epi64((long long)q->subfl));
        v = _mm512_or_si512(v, _mm512_sll_epi64(_mm512_and_si512(i, _mm512_set1_epi64((long long)p->signbit)),
                                                _mm_cvtsi32_si128(q->sshift)));
        return _mm512_mask_or_epi64(v, _mm512_cmpgt_epu64_mask(mag, _mm512_set1_epi64((long long)p->maxmag)), v,
                                    _mm512_set1_epi64(0x80));
    }
    return _mm512_i64gather_epi64(_mm512_and_si512(i, msk), (const void *)p->vf, 8);
}

/* The lanes `low` of a block whose result is zero or below 2^emin (the rounded-to-odd
 * bits): with q->tiny their own rule (exact zeros: no rounding; IEEE subnormals: K and
 * t on the grid of 2^(emin - M), underflow iff inexact; under tininess after rounding
 * an inexact result in the top half-ulp below 2^emin takes the core), else the core.
 * Updates the magnitudes, inexact, underflow and core lanes. */
SFP8_AVX512 static inline AINL void tiny_lanes(const sfp8s_srf *q, __mmask8 low, __m512i bits, __m512i R, __m512i rmask,
                                               __m512i *mag, __mmask8 *rnz, __mmask8 *uf, __mmask8 *slow)
{
    const __m512i one = _mm512_set1_epi64(1), magm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL);
    const double two_n = (double)((uint64_t)1 << q->s.N), top_half = (double)(1 << q->s.M) - 0.5;
    if (q->tiny) {
        const __mmask8 sub = low & _mm512_test_epi64_mask(bits, magm);
        *mag = _mm512_mask_mov_epi64(*mag, low, _mm512_setzero_si512()); /* exact zeros: no rounding */
        if (sub) {
            const __m512d qd = _mm512_mul_pd(_mm512_abs_pd(_mm512_castsi512_pd(bits)), _mm512_set1_pd(q->tscale));
            const __m512d kd = _mm512_roundscale_pd(qd, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __m512d fr = _mm512_sub_pd(qd, kd); /* exact */
            const __m512i t = _mm512_cvttpd_epu64(_mm512_mul_pd(fr, _mm512_set1_pd(two_n)));
            const __mmask8 inx = sub & _mm512_cmp_pd_mask(fr, _mm512_setzero_pd(), _CMP_NEQ_OQ);
            __m512i km = _mm512_cvttpd_epu64(kd);
            km = _mm512_mask_add_epi64(km, _mm512_cmpgt_epu64_mask(R, _mm512_sub_epi64(rmask, t)), km, one);
            *mag = _mm512_mask_mov_epi64(*mag, sub, km);
            *rnz = (*rnz & (__mmask8)~low) | inx;
            *uf = inx;
            if (q->tiny == 2) *slow |= inx & _mm512_cmp_pd_mask(qd, _mm512_set1_pd(top_half), _CMP_GE_OQ);
        } else {
            *rnz &= (__mmask8)~low;
        }
    } else {
        *slow |= low;
    }
}

SFP8_AVX512 static inline AINL unsigned srf_run(const sfp8s_srf *q, int isz, const char *x, const char *y, const char *z,
                                        char *out, uint8_t *fl, ptrdiff_t n)
{
    const sfp8s_sr16 *p = &q->s;
    const int sh = 52 - p->M, unsig = !p->signbit;
    const __m512i msk = _mm512_set1_epi64((long long)p->mask), lowb = _mm512_set1_epi64(0xff);
    const __m512i one = _mm512_set1_epi64(1), magm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL);
    const __m512i sgn = _mm512_set1_epi64((long long)(1ULL << 63));
    const __m512i rmask = _mm512_set1_epi64((long long)(p->N == 32 ? 0xffffffffu : (1u << p->N) - 1));
    const __m512i remm = _mm512_set1_epi64((long long)(((uint64_t)1 << sh) - 1));
    const __m512i m52 = _mm512_set1_epi64(0xFFFFFFFFFFFFFLL), e11 = _mm512_set1_epi64(0x7ff);
    const __m512i ebase1 = _mm512_set1_epi64(p->ebase - 1), maxmag = _mm512_set1_epi64(p->maxmag);
    const __m512i signb = _mm512_set1_epi64((long long)p->signbit);
    const __m128i shc = _mm_cvtsi32_si128(sh), tsh = _mm_cvtsi32_si128(sh - p->N), mc = _mm_cvtsi32_si128(p->M);
    rng16 g = rng16_init(p->seed_key, p->stream_key, p->index0); /* eight lanes a step: rand8_high */
    __m512i facc = _mm512_setzero_si512();
    for (ptrdiff_t i = 0; i + 8 <= n; i += 8) {
        const __m512i bx = srf_load(q, isz, x + isz * i, msk), by = srf_load(q, isz, y + isz * i, msk);
        const __m512i bz = srf_load(q, isz, z + isz * i, msk), fo = _mm512_or_si512(_mm512_or_si512(bx, by), bz);
        const __m512d pr = _mm512_mul_pd(_mm512_castsi512_pd(_mm512_andnot_si512(lowb, bx)),
                                         _mm512_castsi512_pd(_mm512_andnot_si512(lowb, by)));
        const __m512d vz = _mm512_castsi512_pd(_mm512_andnot_si512(lowb, bz));
        /* TwoSum, rounded to odd (fast.h, sfp8f_odd_sum) */
        const __m512d s = _mm512_add_pd(pr, vz), bb = _mm512_sub_pd(s, pr);
        const __m512i eb = _mm512_castpd_si512(_mm512_add_pd(_mm512_sub_pd(pr, _mm512_sub_pd(s, bb)), _mm512_sub_pd(vz, bb)));
        __m512i bits = _mm512_castpd_si512(s), e, rem, mag, R, f8;
        __mmask8 low, rnz, uf = 0;
        const __mmask8 move = _mm512_test_epi64_mask(eb, magm) & _mm512_testn_epi64_mask(bits, one);
        const __mmask8 same = _mm512_testn_epi64_mask(_mm512_xor_si512(eb, bits), sgn);
        __mmask8 slow = _mm512_test_epi64_mask(fo, _mm512_set1_epi64(0x80)), neg;
        bits = _mm512_mask_add_epi64(bits, move & same, bits, one);
        bits = _mm512_mask_sub_epi64(bits, move & (__mmask8)~same, bits, one);
        e = _mm512_and_si512(_mm512_srli_epi64(bits, 52), e11);
        low = _mm512_cmple_epi64_mask(e, ebase1); /* zero or tiny */
        rem = _mm512_and_si512(bits, remm);
        rnz = _mm512_test_epi64_mask(rem, rem);
        mag = _mm512_add_epi64(_mm512_sll_epi64(_mm512_sub_epi64(e, ebase1), mc),
                               _mm512_srl_epi64(_mm512_and_si512(bits, m52), shc));
        R = _mm512_and_si512(_mm512_srli_epi64(rand8_high(g.h, g.sk), 32), rmask);
        g.h = _mm512_add_epi64(g.h, g.step);
        mag = _mm512_mask_add_epi64(mag, _mm512_cmpgt_epu64_mask(R, _mm512_sub_epi64(rmask, _mm512_srl_epi64(rem, tsh))),
                                    mag, one);
        if (low) tiny_lanes(q, low, bits, R, rmask, &mag, &rnz, &uf, &slow); /* rare */
        slow |= _mm512_cmpgt_epu64_mask(mag, maxmag);
        neg = _mm512_movepi64_mask(bits);
        if (unsig) slow |= neg;
        mag = _mm512_mask_or_epi64(mag, neg, mag, signb);
        f8 = _mm512_and_si512(fo, _mm512_set1_epi64(0x7f));
        f8 = _mm512_mask_or_epi64(f8, rnz, f8, _mm512_set1_epi64(SFP8_FLAG_INEXACT));
        f8 = _mm512_mask_or_epi64(f8, uf, f8, _mm512_set1_epi64(SFP8_FLAG_UNDERFLOW));
        f8 = _mm512_mask_mov_epi64(f8, slow, _mm512_set1_epi64(0x80));
        if (isz == 1) _mm_storel_epi64((__m128i *)(void *)(out + i), _mm512_cvtepi64_epi8(mag));
        else _mm_storeu_si128((__m128i *)(void *)(out + 2 * i), _mm512_cvtepi64_epi16(mag));
        _mm_storel_epi64((__m128i *)(void *)(fl + i), _mm512_cvtepi64_epi8(f8));
        facc = _mm512_or_si512(facc, f8);
    }
    return (unsigned)_mm512_reduce_or_epi64(facc) & 0xffu;
}

SFP8_AVX512 static unsigned block_avx512(const sfp8s_srf *p, int isz, const char *x, const char *y, const char *z, char *out,
                                 uint8_t *fl, ptrdiff_t n)
{
    return isz == 1 ? srf_run(p, 1, x, y, z, out, fl, n) : srf_run(p, 2, x, y, z, out, fl, n);
}

unsigned sfp8f_sr_fma_run_avx512(const void *t, const sfp8f_call *c) { return fma_sr_run(t, c, block_avx512); }
#endif
