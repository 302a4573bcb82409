/* cast16: binary32 / binary64 -> 9..16-bit formats (float16, bfloat16,
 * hfp16_169, SHP, UHP, custom formats) by arithmetic, deterministic rounding.
 *
 * DERIVED from core.c round_pack, as from_float8.c's arithmetic kernels (whose
 * argument this follows, extended to 15 mantissa bits and 16-bit codes; the
 * lane rounding is simd.h's cast_*): a binary32 value is exact
 * in binary64, so casting it is one rounding of that binary64.  For a finite
 * normal binary64 x of exponent e, em = max(e, emin) and z = x * 2^(M - em)
 * (exact) put the format's quantum at x on 1; K = |z| rounded to an integer in
 * the mode, inexact is K != z, the magnitude code ((em - emin) << M) + K, the
 * carry into the next binade included.  Overflow takes the core's overflow
 * result and flags (sfp8f_rounder); tininess as in from_float8.c.
 *
 * Formats sfp8f_rounder covers (signed, IEEE subnormals, not FNUZ / P3109):
 * every lane but NaN, infinity, binary64 / binary32 subnormal inputs and (after
 * rounding tininess) the inexact results 2^emin of x < 2^emin, which take the
 * core element by element.  Other formats (SHP: Tesla subnormals, UHP: flushed
 * subnormals, no sign bit): the lanes with 2^emin <= |x|, no overflow and (no
 * sign bit) x > 0, whose results are normal and round as in any IEEE-like
 * format; every other lane takes the core.
 *
 * Levels (SOFTFP8_SIMD): AVX-512 (sixteen lanes: getexp / scalef /
 * roundscale; binary32 inputs in binary32 arithmetic when -126 <= emin <= M,
 * where every step is exact as in binary64), AVX2 (four binary64 at a time, the exponent read as an
 * integer; binary32 inputs eight at a time in binary32 arithmetic when -126 <= emin <= M, M >= 1
 * and M - emin <= 127: cast256f; binary32 inputs into formats whose codes are binary32's top bits,
 * bfloat16 (c16_top32), by integer rounding of the low bits: cast256t), portable C (sfp8f_round_doubles, the rounder of round64.c, in
 * blocks; formats it does not cover take the core).  Strided inputs are
 * gathered block by block into a contiguous buffer in their own type (the
 * core sees the original bits of uncovered lanes); calls whose output overlaps
 * the input run element by element, in order.
 *
 * Proven equal to the core by tests/harness/test_harness.py::test_entry [cast16]
 * and tests/harness/test_harness.py::test_entry [cast16].  The stochastic casts
 * into these formats are sr_cast16.c. */
#include <string.h>

#include "cast16.h"
#include "fast_impl.h"
#include "simd.h"

#include "softfp8/softfp8.h"

int sfp8f_cast16_params(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, int level,
                        sfp8f_c16 *p)
{
    if (!sfp8f_enabled() || !sfp8f_usable_env(env) || dst->bits <= 8 || dst->bits > 16 ||
        !((src->bits == 32 && src->man_bits == 23) || (src->bits == 64 && src->man_bits == 52)))
        return 0;
    memset(p, 0, sizeof *p);
    p->src = src;
    p->dst = dst;
    p->env = env;
    p->full = sfp8f_rounder(dst, env, &p->r);
    if (!p->full) {
        /* the normal range only: SIMD kernels, the core for the rest */
        if (dst->specials == SFP8_SPECIALS_FNUZ || dst->specials == SFP8_SPECIALS_P3109 || dst->man_bits < 1 ||
            dst->exp_bits < 2 || (dst->subnormals != SFP8_SUBNORMALS_IEEE && dst->subnormals != SFP8_SUBNORMALS_TESLA &&
                                  dst->subnormals != SFP8_SUBNORMALS_FLUSH))
            return 0;
        p->r.M = dst->man_bits;
        p->r.emin = 1 - dst->bias;
        p->r.rounding = env->rounding;
        p->r.maxmag = sfp8_max_code(dst);
        p->r.signbit = dst->is_signed ? (uint32_t)1 << (dst->bits - 1) : 0;
        p->unsig = !dst->is_signed;
    }
    /* z = x * 2^(M - em) stays normal, codes fit 32-bit lanes */
    p->simd = level >= 1 && p->r.M <= 15 && p->r.emin >= -300 && p->r.emin <= 300;
    p->f32 = p->r.emin >= -126 && p->r.emin <= p->r.M; /* binary32 arithmetic exact (cast512f) */
    return p->full || p->simd;
}

const void *sfp8f_cast16_prepare(const sfp8f_call *c, void *scratch)
{
    sfp8f_c16 *p = scratch;
    _Static_assert(sizeof(sfp8f_c16) <= SFP8F_SCRATCH, "cast16 parameters fit the scratch");
    if ((c->f->bits != 32 && c->f->bits != 64) || c->dst->bits <= 8) return NULL;
    return sfp8f_cast16_params(c->f, c->dst, c->env, c->level, p) ? p : NULL;
}

static inline uint16_t by_core(const sfp8f_c16 *p, uint64_t bits, unsigned *fl)
{
    uint8_t f8 = 0;
    uint16_t c = (uint16_t)sfp8_convert(p->src, p->dst, bits, p->env, &f8);
    *fl = f8;
    return c;
}

/* the binary64 value of the input bits if the rounder covers it (finite, normal
   in its own type, or zero); 0 otherwise */
static inline int covered(uint64_t bits, int isize, double *d)
{
    if (isize == 4) {
        uint32_t b = (uint32_t)bits, e = (b >> 23) & 0xff;
        float f;
        if (e == 0xff || (e == 0 && (b << 1))) return 0;
        memcpy(&f, &b, 4);
        *d = (double)f;
        return 1;
    }
    {
        uint64_t e = (bits >> 52) & 0x7ff;
        if (e == 0x7ff || (e == 0 && (bits << 1))) return 0;
        memcpy(d, &bits, 8);
        return 1;
    }
}

/* one element by the rounder (full formats) or the core */
static inline uint16_t one(const sfp8f_c16 *p, uint64_t bits, int isize, unsigned *fl)
{
    double d;
    if (p->full && covered(bits, isize, &d)) {
        uint32_t c = 0;
        *fl = sfp8f_round_doubles(&p->r, &d, 1, &c);
        if (d == 0) c = (bits >> (8 * isize - 1)) ? p->r.signbit : 0;
        return (uint16_t)c;
    }
    return by_core(p, bits, fl);
}

/* element by element, in order (any overlap) */
static unsigned elementwise(const sfp8f_c16 *p, const char *a, ptrdiff_t sa, int isize, char *o, ptrdiff_t so,
                            ptrdiff_t n, uint8_t *flout)
{
    unsigned acc = 0;
    for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
        unsigned fl = 0;
        uint16_t c = one(p, sfp8f_ld(a, isize), isize, &fl);
        memcpy(o, &c, 2);
        acc |= fl;
        if (flout) flout[i] = (uint8_t)fl;
    }
    return acc;
}

/* portable C: a contiguous block of the rounder (full formats, no per-element flags) */
static unsigned portable_block(const sfp8f_c16 *p, const char *a, int isize, uint16_t *out, ptrdiff_t n)
{
    double d[SFP8F_BLK16];
    uint32_t c[SFP8F_BLK16];
    unsigned acc;
    int nb = 0;
    uint16_t bad[SFP8F_BLK16];
    if (n <= 0) return 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        if (!covered(sfp8f_ld(a + i * isize, isize), isize, &d[i])) {
            d[i] = 1.0; /* exact, no flags: replaced below */
            bad[nb++] = (uint16_t)i;
        }
    }
    acc = sfp8f_round_doubles(&p->r, d, n, c);
    for (ptrdiff_t i = 0; i < n; i++) {
        uint16_t v = (uint16_t)c[i];
        if (d[i] == 0) v = (sfp8f_ld(a + i * isize, isize) >> (8 * isize - 1)) ? (uint16_t)p->r.signbit : 0;
        out[i] = v;
    }
    for (int j = 0; j < nb; j++) {
        unsigned fl = 0;
        out[bad[j]] = by_core(p, sfp8f_ld(a + (ptrdiff_t)bad[j] * isize, isize), &fl);
        acc |= fl;
    }
    return acc;
}

/* the SIMD kernel of one level on contiguous in / out (whole blocks of sixteen):
   the count done; codes, flags to flo (or NULL); *acc |= the flags */
typedef ptrdiff_t (*c16_kernel)(const sfp8f_c16 *p, const char *in, int isize, uint16_t *out, uint8_t *flo,
                                ptrdiff_t n, unsigned *acc);

typedef struct {
    const sfp8f_c16 *p;
    c16_kernel kernel; /* NULL: portable C */
    int isize;
} nearest_ctx;

static unsigned nearest_block(const void *ctx, ptrdiff_t i0, const char *in, uint16_t *out, uint8_t *flo,
                              ptrdiff_t m)
{
    const nearest_ctx *c = ctx;
    unsigned acc = 0;
    ptrdiff_t j;
    (void)i0;
    if (!c->kernel) return portable_block(c->p, in, c->isize, out, m);
    j = c->kernel(c->p, in, c->isize, out, flo, m, &acc);
    return acc | elementwise(c->p, in + j * c->isize, c->isize, c->isize, (char *)(out + j), 2, m - j,
                             flo ? flo + j : NULL);
}

static inline AINL unsigned cast16_run(const sfp8f_c16 *p, const sfp8f_call *call, c16_kernel kernel)
{
    const char *a = call->a;
    char *o = call->o;
    const ptrdiff_t sa = call->sa, so = call->so, n = call->n;
    const int isize = call->isize;
    uint8_t *const flout = call->flout;
    const nearest_ctx c = {p, p->simd ? kernel : NULL, isize};
    unsigned acc = 0;
    ptrdiff_t i0 = 0;
    if (!sfp8f_apart(o, so, 2, a, sa, isize, n) || (!c.kernel && (flout || !p->full)))
        return elementwise(p, a, sa, isize, o, so, n, flout);
    if (c.kernel && sa == isize && so == 2 && ((uintptr_t)o & 1) == 0) /* contiguous, aligned: one kernel call, the tail below */
        i0 = c.kernel(p, a, isize, (uint16_t *)(void *)o, flout, n, &acc);
    return acc | sfp8f_blocked16(nearest_block, &c, i0, a, sa, isize, o, so, n, flout);
}

unsigned sfp8f_cast16_run(const void *t, const sfp8f_call *c) { return cast16_run(t, c, NULL); }

#if SFP8_X86

/* the lanes of mask m take the core */
static void fix_lanes(const sfp8f_c16 *p, const char *in, int isize, uint16_t *out, uint8_t *flo, unsigned m,
                      unsigned *acc)
{
    while (m) {
        int j = __builtin_ctz(m);
        unsigned fl = 0;
        out[j] = by_core(p, sfp8f_ld(in + (ptrdiff_t)j * isize, isize), &fl);
        if (flo) flo[j] = (uint8_t)fl;
        *acc |= fl;
        m &= m - 1;
    }
}

/* one instance per rounding mode and tininess rule (FL: per-element flags, ISZ:
   input size, FULL: the rounder covers the format) */
#define C16_CASE(MODE, FN, FL, ISZ, FULL)                                                                      \
    return p->r.tb ? FN(MODE, 1, FL, ISZ, FULL, p, in, out, flo, n, acc)                                      \
                   : FN(MODE, 0, FL, ISZ, FULL, p, in, out, flo, n, acc);
#define C16_FL(FN, ISZ, FULL)                                                                                  \
    if (flo) {                                                                                                 \
        SFP8S_MODES(p->r.rounding, C16_CASE, FN, 1, ISZ, FULL)                                                 \
    }                                                                                                          \
    SFP8S_MODES(p->r.rounding, C16_CASE, FN, 0, ISZ, FULL)
#define C16_ALL(FN)                                                                                            \
    if (isize == 4 && p->full) {                                                                               \
        C16_FL(FN, 4, 1)                                                                                       \
    }                                                                                                          \
    if (isize == 4) {                                                                                          \
        C16_FL(FN, 4, 0)                                                                                       \
    }                                                                                                          \
    if (p->full) {                                                                                             \
        C16_FL(FN, 8, 1)                                                                                       \
    }                                                                                                          \
    C16_FL(FN, 8, 0)

/* ---- AVX2: four binary64 lanes at a time (simd.h, cast_lane4), sixteen a block ---- */

SFP8_AVX2 static inline AINL ptrdiff_t cast256(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                               const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                               unsigned *acc)
{
    cast_k256 c;
    __m256i facc = _mm256_setzero_si256();
    unsigned a = 0;
    ptrdiff_t i = 0;
    cast_k256_init(&c, p->r.M, p->r.emin, p->r.maxmag, p->r.signbit, 1, p->unsig, p->r.ovf0, p->r.ovf1,
                   p->r.ovf_fl0, p->r.ovf_fl1);
    for (; i + 16 <= n; i += 16) {
        __m256i code[4], fl[4];
        unsigned bad = 0;
        for (int q = 0; q < 4; q++) {
            __m256i b;
            if (ISZ == 4) {
                const __m128i fb = _mm_loadu_si128((const __m128i *)(const void *)(in + 4 * (i + 4 * q)));
                const __m128i ex = _mm_and_si128(fb, _mm_set1_epi32(0x7f800000));
                const __m128i sub = _mm_andnot_si128(_mm_cmpeq_epi32(_mm_and_si128(fb, _mm_set1_epi32(0x7fffffff)),
                                                                     _mm_setzero_si128()),
                                                     _mm_cmpeq_epi32(ex, _mm_setzero_si128()));
                bad |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(sub)) << (4 * q); /* binary32 subnormals */
                b = _mm256_castpd_si256(_mm256_cvtps_pd(_mm_castsi128_ps(fb)));
            } else {
                b = _mm256_loadu_si256((const __m256i *)(const void *)(in + 8 * (i + 4 * q)));
            }
            bad |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(cast_lane4(MODE, TB, FULL, &c, b, &code[q], &fl[q])))
                   << (4 * q);
        }
        store16x4(code, fl, out + i, FL ? flo + i : NULL, &facc);
        if (bad) fix_lanes(p, in + (ptrdiff_t)ISZ * i, ISZ, out + i, FL ? flo + i : NULL, bad, &a);
    }
    *acc |= a | or16x16(facc);
    return i;
}

/* ---- AVX2, binary32 inputs in binary32 arithmetic: eight lanes at a time (p->f32) ----
 *
 * DERIVED from cast_lane4 (simd.h) and cast512f above, the same steps on binary32 lanes
 * (the core is round_pack; the lane rounding argument is the file header's).  Used when
 * -126 <= emin <= M (p->f32), M >= 1 and M - emin <= 127 (the scale below is a normal binary32).
 * For a normal binary32 x of biased exponent field E, em = max(E, emin + 127) and the
 * scale 2^(M - (em - 127)) is built as binary32 bits ((254 + M - em) << 23): its
 * exponent 127 + M - (em - 127) lies in [M, 127 + M - emin] within [1, 254] (em <= 254,
 * M >= 1; em >= emin + 127, M - emin <= 127).  z = x * scale is exact: a power of two
 * times a normal binary32 whose product is normal, since |z| < 2^(M + 1) <= 2^16 and
 * |z| >= 2^-126 * 2^(M - emin) >= 2^-126 (emin <= M; x >= 2^-126, scale >= 2^(M - emin)
 * when em = emin + 127, and z >= 2^M otherwise).  Zero lanes give z = 0; NaN, infinity
 * and binary32 subnormal lanes are zeroed before the product and returned uncovered.
 * _mm256_round_ps rounds z in the mode (nearest-away: trunc(z), plus one in z's direction
 * where the exact |z - trunc z| >= 1/2; z - trunc z is exact, the low bits of z);
 * inexact iff r != z; K = |r| < 2^17 converts exactly (cvtt); the magnitude code
 * ((em - emin - 127) << M) + K fits 32-bit lanes (< 2^23).  Codes and flags as cast_lane4.
 * Proof: tests/harness/test_harness.py::test_entry [cast16] (formats, layouts, avx2f32
 * edges: ties, 2^emin and maxmag limits, subnormals, NaN / infinity, partial vectors,
 * strides) and [blockq] (MXINT8's helper conversion), at every SIMD level. */
typedef struct {
    __m256i absm, minn, span, ebmin, c254m, pmin, top, maxmag, signbit, ovf0, ovf1, fix, fuf, fo0, fo1;
    __m128i Mc;
    int unsig;
} cast_k256f;

SFP8_AVX2 static inline AINL void cast_k256f_init(cast_k256f *c, const sfp8f_c16 *p)
{
    c->absm = _mm256_set1_epi32(0x7fffffff);
    c->minn = _mm256_set1_epi32(0x00800000);
    c->span = _mm256_set1_epi32(0x7f000000);
    c->ebmin = _mm256_set1_epi32(p->r.emin + 127);
    c->c254m = _mm256_set1_epi32(254 + p->r.M);
    c->pmin = _mm256_set1_epi32((p->r.emin + 127) << 23);
    c->top = _mm256_set1_epi32(1 << p->r.M);
    c->maxmag = _mm256_set1_epi32((int)p->r.maxmag);
    c->signbit = _mm256_set1_epi32((int)p->r.signbit);
    c->ovf0 = _mm256_set1_epi32((int)p->r.ovf0);
    c->ovf1 = _mm256_set1_epi32((int)p->r.ovf1);
    c->fix = _mm256_set1_epi32(SFP8_FLAG_INEXACT);
    c->fuf = _mm256_set1_epi32(SFP8_FLAG_INEXACT | SFP8_FLAG_UNDERFLOW);
    c->fo0 = _mm256_set1_epi32((int)p->r.ovf_fl0);
    c->fo1 = _mm256_set1_epi32((int)p->r.ovf_fl1);
    c->Mc = _mm_cvtsi32_si128(p->r.M);
    c->unsig = p->unsig;
}

SFP8_AVX2 static inline AINL __m256 round256f(int MODE, __m256 z)
{
    const int X = _MM_FROUND_NO_EXC;
    switch (MODE) {
    case SFP8_ROUND_NEAREST_EVEN: return _mm256_round_ps(z, _MM_FROUND_TO_NEAREST_INT | X);
    case SFP8_ROUND_UPWARD: return _mm256_round_ps(z, _MM_FROUND_TO_POS_INF | X);
    case SFP8_ROUND_DOWNWARD: return _mm256_round_ps(z, _MM_FROUND_TO_NEG_INF | X);
    case SFP8_ROUND_NEAREST_AWAY: {
        const __m256 sign = _mm256_set1_ps(-0.0f);
        __m256 t = _mm256_round_ps(z, _MM_FROUND_TO_ZERO | X);
        __m256 up = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(z, t)), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
        __m256 one = _mm256_or_ps(_mm256_and_ps(z, sign), _mm256_set1_ps(1.0f)); /* copysign(1, z) */
        return _mm256_add_ps(t, _mm256_and_ps(up, one));
    }
    default: return _mm256_round_ps(z, _MM_FROUND_TO_ZERO | X);
    }
}

/* eight binary32 lanes (bits b): code, flags (zero in uncovered lanes); returns the
   uncovered lanes (all ones), as cast_lane4 */
SFP8_AVX2 static inline AINL __m256i cast_lane8f(int MODE, int TB, int FULL, const cast_k256f *c, __m256i b,
                                                 __m256i *code, __m256i *fl)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i abs = _mm256_and_si256(b, c->absm), t = _mm256_sub_epi32(abs, c->minn);
    __m256i ok = _mm256_or_si256(_mm256_andnot_si256(_mm256_cmpgt_epi32(zero, t), _mm256_cmpgt_epi32(c->span, t)),
                                 _mm256_cmpeq_epi32(abs, zero)); /* normal or zero */
    __m256i em = _mm256_max_epi32(_mm256_srli_epi32(abs, 23), c->ebmin);
    __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(c->c254m, em), 23));
    __m256 z = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_and_si256(b, ok)), scale);
    __m256 r = round256f(MODE, z);
    __m256i ix = _mm256_castps_si256(_mm256_cmp_ps(r, z, _CMP_NEQ_OQ));
    __m256i k = _mm256_cvttps_epi32(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), r));
    __m256i mag = _mm256_add_epi32(_mm256_sll_epi32(_mm256_sub_epi32(em, c->ebmin), c->Mc), k);
    __m256i sg = _mm256_srai_epi32(b, 31), ovf, bad = _mm256_xor_si256(ok, _mm256_cmpeq_epi32(ok, ok));
    __m256i below = _mm256_cmpgt_epi32(c->pmin, abs);
    if (MODE == SFP8_ROUND_TO_ODD) mag = _mm256_or_si256(mag, _mm256_srli_epi32(ix, 31));
    ovf = _mm256_cmpgt_epi32(mag, c->maxmag);
    *code = _mm256_or_si256(mag, _mm256_and_si256(sg, c->signbit));
    if (FULL) {
        __m256i tiny = _mm256_cmpgt_epi32(c->top, mag);
        __m256i edge = _mm256_and_si256(_mm256_and_si256(ix, _mm256_cmpeq_epi32(mag, c->top)), below);
        if (TB) tiny = _mm256_or_si256(tiny, edge);
        else bad = _mm256_or_si256(bad, edge);
        *code = _mm256_blendv_epi8(*code, _mm256_blendv_epi8(c->ovf0, c->ovf1, sg), ovf);
        *fl = _mm256_and_si256(ix, _mm256_blendv_epi8(c->fix, c->fuf, tiny));
        *fl = _mm256_blendv_epi8(*fl, _mm256_blendv_epi8(c->fo0, c->fo1, sg), ovf);
    } else {
        bad = _mm256_or_si256(_mm256_or_si256(bad, below), ovf);
        if (c->unsig) bad = _mm256_or_si256(bad, sg);
        *fl = _mm256_and_si256(ix, c->fix);
    }
    *fl = _mm256_andnot_si256(bad, *fl);
    return bad;
}

/* ---- AVX2, binary32 inputs into binary32's top bits: eight lanes of integer rounding ----
 *
 * DERIVED from core.c round_pack (round64.h round_f64 / round_inc, the same integer
 * rounding, on the binary32 bits instead of a binary64 significand).  Used at level 1 for
 * binary32 inputs when the rounder covers the format (p->full: signed, IEEE subnormals and
 * specials) with emin = -126, maxmag = (255 << M) - 1 and signbit = 1 << (M + 8)
 * (c16_top32, e.g. bfloat16, 1-8-7): exponent field, bias and subnormals are binary32's and
 * the format's code of a value is the top M + 9 bits of its binary32 bits when it is exact.
 * For |x| (bits a, finite, normal or subnormal, s = 23 - M) the quantum at x is 2^(s) units
 * of a in x's binade and below 2^-126 alike (both quanta 2^(emin - M) there), so
 * K = a >> s and rem = a & (2^s - 1) are round_f64's K and rem, and the magnitude code is
 * K + round_inc(mode, sign, K, rem, 2^(s - 1)), the carry into the next binade (and into
 * field 255: mag > maxmag, overflow) included; to odd: K | (rem != 0).  The additions
 * a + (2^s - 1) etc. stay below 2^31 (a <= 0x7f7fffff).  Inexact iff rem != 0; the
 * result is tiny when mag < 2^M (subnormal or zero: tiny under both rules, as
 * cast_lane8f), and, x < 2^-126 rounding up to 2^emin: tiny before rounding, the core's
 * after rounding.  Zeros give the signed zero code, no flags; binary32 subnormal operands
 * add the core's denormal flag (core.c unpack; the fast paths run only without DAZ / FTZ,
 * env->isa = 0).  Overflow: the rounder's results and flags (sfp8f_rounder).  NaN and
 * infinity lanes take the core.
 * Proof: tests/harness/test_harness.py::test_entry [cast16] (avx2top32: bfloat16 and
 * 1-8-M formats, every environment, ties with odd / even last bits, the overflow
 * threshold, subnormal results, signed zeros, NaN payloads, infinities, partial vectors,
 * layouts), at every SIMD level. */
/* cast_k256f's constants (absm, minn = 2^-126's bits, top, maxmag, signbit, overflow
   results and flags) and the integer rounding's */
typedef struct {
    cast_k256f f;
    __m256i one, fin, low, half1, half, fden;
    __m128i sc;
} cast_k256t;

static inline int c16_top32(const sfp8f_c16 *p)
{
    return p->full && p->r.emin == -126 && p->r.M >= 1 && p->r.M <= 22 &&
           p->r.maxmag == ((uint32_t)255 << p->r.M) - 1 && p->r.signbit == (uint32_t)1 << (p->r.M + 8);
}

SFP8_AVX2 static inline AINL void cast_k256t_init(cast_k256t *c, const sfp8f_c16 *p)
{
    const int s = 23 - p->r.M;
    cast_k256f_init(&c->f, p);
    c->one = _mm256_set1_epi32(1);
    c->fin = _mm256_set1_epi32(0x7f7fffff);
    c->low = _mm256_set1_epi32((1 << s) - 1);
    c->half1 = _mm256_set1_epi32((1 << (s - 1)) - 1);
    c->half = _mm256_set1_epi32(1 << (s - 1));
    c->fden = _mm256_set1_epi32(SFP8_FLAG_DENORMAL);
    c->sc = _mm_cvtsi32_si128(s);
}

/* eight binary32 lanes (bits b): code, flags (zero in uncovered lanes); returns the
   uncovered lanes (all ones), as cast_lane8f */
SFP8_AVX2 static inline AINL __m256i cast_lane8t(int MODE, int TB, const cast_k256t *c, __m256i b, __m256i *code,
                                                 __m256i *fl)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i a = _mm256_and_si256(b, c->f.absm), sg = _mm256_srai_epi32(b, 31), mag;
    __m256i bad = _mm256_cmpgt_epi32(a, c->fin); /* NaN, infinity */
    __m256i ix = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_and_si256(a, c->low), zero), _mm256_cmpeq_epi32(a, a));
    __m256i ovf, tiny, edge, below = _mm256_cmpgt_epi32(c->f.minn, a);
    switch (MODE) {
    case SFP8_ROUND_NEAREST_EVEN:
        mag = _mm256_srl_epi32(
            _mm256_add_epi32(_mm256_add_epi32(a, c->half1),
                             _mm256_and_si256(_mm256_srl_epi32(a, c->sc), c->one)),
            c->sc);
        break;
    case SFP8_ROUND_NEAREST_AWAY: mag = _mm256_srl_epi32(_mm256_add_epi32(a, c->half), c->sc); break;
    case SFP8_ROUND_UPWARD: mag = _mm256_srl_epi32(_mm256_add_epi32(a, _mm256_andnot_si256(sg, c->low)), c->sc); break;
    case SFP8_ROUND_DOWNWARD: mag = _mm256_srl_epi32(_mm256_add_epi32(a, _mm256_and_si256(sg, c->low)), c->sc); break;
    case SFP8_ROUND_TO_ODD: mag = _mm256_or_si256(_mm256_srl_epi32(a, c->sc), _mm256_srli_epi32(ix, 31)); break;
    default: mag = _mm256_srl_epi32(a, c->sc); break;
    }
    ovf = _mm256_cmpgt_epi32(mag, c->f.maxmag);
    tiny = _mm256_cmpgt_epi32(c->f.top, mag);
    edge = _mm256_and_si256(_mm256_and_si256(ix, _mm256_cmpeq_epi32(mag, c->f.top)), below);
    if (TB) tiny = _mm256_or_si256(tiny, edge);
    else bad = _mm256_or_si256(bad, edge);
    *code = _mm256_or_si256(mag, _mm256_and_si256(sg, c->f.signbit));
    *code = _mm256_blendv_epi8(*code, _mm256_blendv_epi8(c->f.ovf0, c->f.ovf1, sg), ovf);
    *fl = _mm256_and_si256(ix, _mm256_blendv_epi8(c->f.fix, c->f.fuf, tiny));
    *fl = _mm256_blendv_epi8(*fl, _mm256_blendv_epi8(c->f.fo0, c->f.fo1, sg), ovf);
    /* a binary32 subnormal operand: the core's denormal flag (core.c unpack; env->isa = 0 here) */
    *fl = _mm256_or_si256(*fl, _mm256_andnot_si256(_mm256_cmpeq_epi32(a, zero), _mm256_and_si256(below, c->fden)));
    *fl = _mm256_andnot_si256(bad, *fl);
    return bad;
}

/* sixteen binary32 lanes a block: TOP the integer kernel above (c16_top32), else cast_lane8f */
SFP8_AVX2 static inline AINL ptrdiff_t run256f(int TOP, int MODE, int TB, int FL, int FULL, const sfp8f_c16 *p,
                                               const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                               unsigned *acc)
{
    cast_k256f c;
    cast_k256t ct;
    __m256i facc = _mm256_setzero_si256();
    unsigned a = 0;
    ptrdiff_t i = 0;
    if (TOP) cast_k256t_init(&ct, p);
    else cast_k256f_init(&c, p);
    for (; i + 16 <= n; i += 16) {
        __m256i c0, c1, f0, f1, w;
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)(in + 4 * i));
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(in + 4 * i + 32));
        const __m256i m0 = TOP ? cast_lane8t(MODE, TB, &ct, b0, &c0, &f0) : cast_lane8f(MODE, TB, FULL, &c, b0, &c0, &f0);
        const __m256i m1 = TOP ? cast_lane8t(MODE, TB, &ct, b1, &c1, &f1) : cast_lane8f(MODE, TB, FULL, &c, b1, &c1, &f1);
        unsigned bad = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m0)) |
                       (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m1)) << 8;
        /* codes and flags are below 2^16: the unsigned saturating packs keep them */
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm256_permute4x64_epi64(_mm256_packus_epi32(c0, c1), 0xD8));
        w = _mm256_permute4x64_epi64(_mm256_packus_epi32(f0, f1), 0xD8);
        if (FL) {
            __m256i q8 = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
            _mm_storeu_si128((__m128i *)(void *)(flo + i), _mm256_castsi256_si128(q8));
        }
        facc = _mm256_or_si256(facc, w);
        if (bad) fix_lanes(p, in + 4 * i, 4, out + i, FL ? flo + i : NULL, bad, &a);
    }
    *acc |= a | or16x16(facc);
    return i;
}

SFP8_AVX2 static inline AINL ptrdiff_t cast256f(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                                const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                                unsigned *acc)
{
    (void)ISZ;
    return run256f(0, MODE, TB, FL, FULL, p, in, out, flo, n, acc);
}

SFP8_AVX2 static inline AINL ptrdiff_t cast256t(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                                const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                                unsigned *acc)
{
    (void)ISZ, (void)FULL;
    return run256f(1, MODE, TB, FL, 1, p, in, out, flo, n, acc);
}

SFP8_AVX2 static ptrdiff_t kernel256f(const sfp8f_c16 *p, const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                      unsigned *acc)
{
    if (c16_top32(p)) {
        C16_FL(cast256t, 4, 1)
    }
    if (p->full) {
        C16_FL(cast256f, 4, 1)
    }
    C16_FL(cast256f, 4, 0)
}

SFP8_AVX2 static ptrdiff_t kernel_avx2(const sfp8f_c16 *p, const char *in, int isize, uint16_t *out, uint8_t *flo,
                                       ptrdiff_t n, unsigned *acc)
{
    if (isize == 4 && (c16_top32(p) || (p->f32 && p->r.M >= 1 && p->r.M - p->r.emin <= 127)))
        return kernel256f(p, in, out, flo, n, acc);
    C16_ALL(cast256)
}

unsigned sfp8f_cast16_run_avx2(const void *t, const sfp8f_call *c) { return cast16_run(t, c, kernel_avx2); }

/* ---- AVX-512: sixteen lanes (simd.h, cast_half512 / cast_code512) ---- */

/* sixteen lanes from K (signed), em, inexact, sign, |x| < 2^emin: code and flags
   (from_float8.c for tininess); stores them, sends the uncovered lanes to the core
   and ORs the flags into *facc */
SFP8_AVX512 static inline AINL void lanes512(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                             const cast_k512 *c, __m512i k, __m512i em, unsigned ix, unsigned s,
                                             unsigned below, unsigned bad, const char *in, uint16_t *out,
                                             uint8_t *flo, __m512i *facc, unsigned *a)
{
    __m512i fl;
    unsigned ovf, edge = 0;
    const __m512i code = cast_code512(MODE, FULL, c, k, em, ix, s, &fl, &ovf, &edge);
    if (FULL) {
        edge &= below;
        if (TB) fl = _mm512_mask_mov_epi32(fl, (__mmask16)edge, c->fuf);
        else bad |= edge;
    } else {
        /* normal results only: |x| >= 2^emin (zeros included below), no overflow, a sign bit for x < 0 */
        bad |= below | ovf | (p->unsig ? s : 0);
    }
    _mm256_storeu_si256((__m256i *)(void *)out, _mm512_cvtepi32_epi16(code));
    if (FL) _mm_storeu_si128((__m128i *)(void *)flo, _mm512_cvtepi32_epi8(fl));
    if (bad) {
        fl = _mm512_maskz_mov_epi32((__mmask16)~bad, fl);
        fix_lanes(p, in, ISZ, out, FL ? flo : NULL, bad & 0xffff, a);
    }
    *facc = _mm512_or_si512(*facc, fl);
}

SFP8_AVX512 static inline AINL ptrdiff_t cast512(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                                 const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                                 unsigned *acc)
{
    const int SAE = _MM_FROUND_NO_EXC;
    const __m512d eminv = _mm512_set1_pd(p->r.emin), Mv = _mm512_set1_pd(p->r.M);
    const __m512d pmin = _mm512_scalef_pd(_mm512_set1_pd(1.0), eminv); /* 2^emin */
    cast_k512 c;
    __m512i facc = _mm512_setzero_si512();
    unsigned a = 0;
    ptrdiff_t i = 0;
    cast_k512_init(&c, p->r.M, p->r.emin, p->r.maxmag, p->r.signbit, 1, p->r.ovf0, p->r.ovf1, p->r.ovf_fl0,
                   p->r.ovf_fl1);
    for (; i + 16 <= n; i += 16) {
        __m256i k0, k1, e0, e1;
        unsigned ix0, ix1, s0, s1, bad;
        __m512d x0, x1;
        _mm_prefetch(in + ISZ * i + 4096, _MM_HINT_T0); /* 4 KiB ahead, as from_float8.c */
        if (ISZ == 8) _mm_prefetch(in + ISZ * i + 4096 + 64, _MM_HINT_T0);
        if (ISZ == 4) {
            const __m512 xf = _mm512_loadu_ps((const void *)(in + 4 * i));
            bad = _mm512_fpclass_ps_mask(xf, 0xB9); /* QNaN, +-inf, denormal, SNaN */
            x0 = _mm512_cvt_roundps_pd(_mm512_castps512_ps256(xf), SAE);
            x1 = _mm512_cvt_roundps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1)), SAE);
        } else {
            x0 = _mm512_loadu_pd((const void *)(in + 8 * i));
            x1 = _mm512_loadu_pd((const void *)(in + 8 * i + 64));
            bad = _mm512_fpclass_pd_mask(x0, 0xB9) | (unsigned)_mm512_fpclass_pd_mask(x1, 0xB9) << 8;
        }
        cast_half512(MODE, x0, eminv, Mv, &k0, &e0, &ix0, &s0);
        cast_half512(MODE, x1, eminv, Mv, &k1, &e1, &ix1, &s1);
        lanes512(MODE, TB, FL, ISZ, FULL, p, &c, _mm512_inserti64x4(_mm512_castsi256_si512(k0), k1, 1),
                 _mm512_inserti64x4(_mm512_castsi256_si512(e0), e1, 1), ix0 | ix1 << 8, s0 | s1 << 8,
                 cast_below512(x0, x1, pmin), bad, in + (ptrdiff_t)ISZ * i, out + i, FL ? flo + i : NULL, &facc, &a);
    }
    *acc |= a | (unsigned)_mm512_reduce_or_epi32(facc);
    return i;
}

/* binary32 input in binary32 arithmetic, sixteen lanes at once (p->f32): exact
   when -126 <= emin <= M, since then z = x * 2^(M - em) of a normal binary32 x is a
   normal binary32 below 2^(M + 1) (the same steps as above in the narrower type) */
SFP8_AVX512 static inline AINL ptrdiff_t cast512f(int MODE, int TB, int FL, int ISZ, int FULL, const sfp8f_c16 *p,
                                             const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                             unsigned *acc)
{
    const int RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m512 eminv = _mm512_set1_ps((float)p->r.emin), Mv = _mm512_set1_ps((float)p->r.M);
    const __m512 pmin = _mm512_scalef_ps(_mm512_set1_ps(1.0f), eminv); /* 2^emin */
    const __m512 mag32 = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    cast_k512 c;
    __m512i facc = _mm512_setzero_si512();
    unsigned a = 0;
    ptrdiff_t i = 0;
    (void)ISZ;
    cast_k512_init(&c, p->r.M, p->r.emin, p->r.maxmag, p->r.signbit, 1, p->r.ovf0, p->r.ovf1, p->r.ovf_fl0,
                   p->r.ovf_fl1);
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps((const void *)(in + 4 * i));
        __m512 m, z, r;
        _mm_prefetch(in + 4 * i + 4096, _MM_HINT_T0);
        m = _mm512_max_round_ps(_mm512_getexp_round_ps(x, _MM_FROUND_NO_EXC), eminv, _MM_FROUND_NO_EXC);
        z = _mm512_scalef_round_ps(x, _mm512_sub_round_ps(Mv, m, RN), RN);
        r = round512f(MODE, z);
        lanes512(MODE, TB, FL, 4, FULL, p, &c, _mm512_cvtt_roundps_epi32(r, _MM_FROUND_NO_EXC), _mm512_cvtt_roundps_epi32(m, _MM_FROUND_NO_EXC),
                 _mm512_cmp_round_ps_mask(r, z, _CMP_NEQ_OQ, _MM_FROUND_NO_EXC), _mm512_movepi32_mask(_mm512_castps_si512(x)),
                 _mm512_cmp_round_ps_mask(_mm512_and_ps(x, mag32), pmin, _CMP_LT_OQ, _MM_FROUND_NO_EXC),
                 _mm512_fpclass_ps_mask(x, 0xB9) /* QNaN, +-inf, denormal, SNaN */, in + 4 * i, out + i,
                 FL ? flo + i : NULL, &facc, &a);
    }
    *acc |= a | (unsigned)_mm512_reduce_or_epi32(facc);
    return i;
}

SFP8_AVX512 static ptrdiff_t kernel512f(const sfp8f_c16 *p, const char *in, uint16_t *out, uint8_t *flo, ptrdiff_t n,
                                   unsigned *acc)
{
    if (p->full) {
        C16_FL(cast512f, 4, 1)
    }
    C16_FL(cast512f, 4, 0)
}

SFP8_AVX512 static ptrdiff_t kernel_avx512(const sfp8f_c16 *p, const char *in, int isize, uint16_t *out,
                                           uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    if (isize == 4 && p->f32) return kernel512f(p, in, out, flo, n, acc);
    C16_ALL(cast512)
}

unsigned sfp8f_cast16_run_avx512(const void *t, const sfp8f_call *c) { return cast16_run(t, c, kernel_avx512); }
#endif
