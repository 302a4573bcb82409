/* from_float8: binary32 / binary64 -> formats of <= 8 bits with at most 4
 * mantissa bits (from_float_ok), deterministic rounding.
 *
 * DERIVED from core.c round_pack, two ways.
 *
 * The key table: 65,536 entries indexed by the compressed binary32 key (sign,
 * exponent, 6 leading mantissa bits, sticky; sfp8f_key32 / sfp8f_key64), entry
 * = code | flags << 8, each the core's rounding of one member of the key's
 * class; the claim is that every member of a class rounds the same way in the
 * formats sfp8f_from_float_ok accepts.  Proven equal by
 * tests/harness/test_harness.py::test_entry [from_float8],
 * ::test_cast_float32_key_classes, ::test_cast_float_structured,
 * ::test_cast_float32_random, ::test_cast_float64_random, and under every
 * calling convention by tests/harness/test_harness.py::test_entry [from_float8] and
 * ::test_direct_from_float.
 *
 * The arithmetic kernels (binary64 inputs, AVX2 and AVX-512): the key table's
 * gather replaced by the hardware's exact binary64 operations (simd.h, cast_*),
 * for signed formats with IEEE subnormals and 1..4 mantissa bits whose values
 * lie well inside binary64 (sfp8f_cast64_params): for a finite normal binary64
 * x of exponent e (getexp),
 * em = max(e, emin) and z = x * 2^(M - em) (exact: scalef of a normal value
 * by a small power of two) put the format's quantum at x on 1, so the
 * rounded magnitude is K = |z| rounded to an integer in the environment's
 * mode (roundscale: nearest-even, upward, downward, toward zero; nearest-away
 * is trunc(z + copysign(1/2, z)) with that sum rounded toward zero, which
 * keeps its integer part; to-odd is trunc(z) | inexact), inexact is K != z,
 * and the code's magnitude is ((em - emin) << M) + K (the carry into the next
 * binade included) - round_pack's "field << M + (Ku + up - 2^M)" for
 * e >= emin and its subnormal grid for e < emin.  Overflow (magnitude above
 * the largest finite one) delivers the core's overflow result of the sign
 * with its flags; zeros (and results rounded to zero) get the sign bit
 * unless the format has no negative zero.  Tininess before rounding is
 * x < 2^emin: true for a result below 2^emin (magnitude < 2^M), false for one
 * above, and for an inexact result 2^emin asked of x itself.  After rounding
 * it is "no carry to 2^emin on the unbounded grid": a result below 2^emin on
 * the subnormal grid is tiny (a carry to 2^emin on the finer grid implies one
 * on the coarser grid in every mode), a result of x >= 2^emin is not, and the
 * inexact results 2^emin of x < 2^emin, like NaN, infinity and binary64
 * subnormal lanes, take the key table (exactly the core:
 * sfp8f_build_fromf).  All operations use suppress-all-exceptions forms and
 * see no subnormal operand or result, so MXCSR (its flags, DAZ, FTZ) neither
 * changes nor matters.
 *
 * Proven equal to the core by tests/harness/test_harness.py::test_entry [from_float8]
 * (every rounding boundary of the presets of <= 8 bits and its neighbours under
 * all 24 environments, random values, at each SIMD level), ::test_cast_float64_random,
 * ::test_cast_float_structured
 * and tests/harness/test_harness.py::test_entry [from_float8].
 *
 * Kernels: portable C (the key table, element by element in order; any
 * overlap), AVX2 (the arithmetic kernel on contiguous binary64 input, four
 * lanes at a time, sixteen a block; binary32 input: the key table by eight-lane
 * gathers, key32_avx512's operations), AVX-512 (the arithmetic kernel on binary64,
 * sixteen lanes; else the key table by gathers, the binary64 key through a
 * conversion to binary32 (simd.h, key64x16f)).  The SIMD kernels take
 * contiguous operands sfp8f_apart allows and leave the tail to the portable
 * loop. */
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"
#include "from_float8.h"
#include "simd.h"

uint32_t sfp8f_key64(uint64_t b)
{
    uint32_t s = (uint32_t)(b >> 63);
    int e = (int)((b >> 52) & 0x7ff);
    uint64_t m = b & (((uint64_t)1 << 52) - 1);
    uint32_t e32, m6, st;
    const uint64_t low = ((uint64_t)1 << 46) - 1;
    if (e == 0x7ff) {
        e32 = 255;
        m6 = (uint32_t)(m >> 46);
        st = (m & low) != 0;
    } else if (e == 0) {
        e32 = 0;
        m6 = 0;
        st = m != 0;
    } else if (e - 1023 > 127) { /* beyond binary32: far beyond every covered format */
        e32 = 254;
        m6 = 63;
        st = 1;
    } else if (e - 1023 < -126) { /* tiny but normal: far below every covered format */
        e32 = 1;
        m6 = 0;
        st = 1;
    } else {
        e32 = (uint32_t)(e - 1023 + 127);
        m6 = (uint32_t)(m >> 46);
        st = (m & low) != 0;
    }
    return s << 15 | e32 << 7 | m6 << 1 | st;
}

/* Formats whose conversions from binary32/64 depend on the key alone: at most
 * M + 3 <= 7 leading significand bits decide (ties, the Tesla gap midpoint),
 * and every value and rounding boundary lies well inside binary32's normal
 * range (so the clamped binary64 keys round as the values they stand for). */
int sfp8f_from_float_ok(const sfp8_format *f)
{
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 1, 0, 32, 0};
    uint8_t fl = 0;
    uint64_t big, small;
    double vb, vs;
    if (f->bits > 8 || f->man_bits > 4) return 0;
    big = sfp8_convert(f, &sfp8_binary64, sfp8_max_code(f), &env, &fl);
    small = sfp8_convert(f, &sfp8_binary64, sfp8_min_subnormal_code(f), &env, &fl);
    memcpy(&vb, &big, 8);
    memcpy(&vs, &small, 8);
    return vb < 0x1p100 && vs > 0x1p-100;
}

/* The arithmetic binary64 kernels' parameters (from_float8.h): signed formats
 * with IEEE subnormals and 1..4 mantissa bits (the rest of
 * sfp8f_from_float_ok's conditions hold), zeros packed without flags, overflow
 * results from the core. */
void sfp8f_cast64_params(const sfp8_format *f, const sfp8_env *env, sfp8s_cast64 *p)
{
    uint8_t fl = 0;
    uint32_t z0, z1;
    memset(p, 0, sizeof *p);
    if (!f->is_signed || f->subnormals != SFP8_SUBNORMALS_IEEE || f->man_bits < 1 || f->man_bits > 4 ||
        f->bits > 8 || env->rounding == SFP8_ROUND_STOCHASTIC)
        return;
    p->M = f->man_bits;
    p->emin = 1 - f->bias;
    p->tb = env->tininess_before != 0;
    p->rounding = env->rounding;
    p->maxmag = sfp8_max_code(f);
    p->signbit = 1u << (f->bits - 1);
    z0 = (uint32_t)sfp8_round_value(f, 0, 0, 0, 0, env, &fl);
    z1 = (uint32_t)sfp8_round_value(f, 1, 0, 0, 0, env, &fl);
    /* maxmag < 2^M: no normal binade below the special exponent (one exponent bit, IEEE
       specials), the carry out of the subnormals is an overflow that may also be tiny:
       the core's */
    if (fl || z0 != 0 || (z1 != 0 && z1 != p->signbit) || p->maxmag >= p->signbit ||
        p->maxmag < (1u << p->M))
        return;
    p->negzero = z1 != 0;
    for (int s = 0; s < 2; s++) {
        uint8_t of = 0;
        uint32_t c = (uint32_t)sfp8_round_value(f, s, 1, 4000, 0, env, &of);
        if (s) p->ovf1 = c, p->ovf_fl1 = of;
        else p->ovf0 = c, p->ovf_fl0 = of;
    }
    p->ok = 1;
}

/* the parameters stored after a key table's entries and padding */
static const sfp8s_cast64 *cast64_of(const uint16_t *tab)
{
    return (const sfp8s_cast64 *)(const void *)((const char *)tab + 65536 * sizeof(uint16_t) + 64);
}

void *sfp8f_build_fromf(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    uint16_t *t = malloc(65536 * sizeof(uint16_t) + 64 + sizeof(sfp8s_cast64));
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    for (uint32_t key = 0; key < 65536; key++) {
        uint8_t fl = 0;
        uint32_t rep = (key >> 1) << 17 | (key & 1); /* a member of the key's class */
        uint32_t r = (uint32_t)sfp8_convert(&sfp8_binary32, &k->a, rep, &env, &fl);
        t[key] = (uint16_t)((r & 0xffu) | (uint32_t)fl << 8);
    }
    memset(t + 65536, 0, 64);
    sfp8f_cast64_params(&k->a, &env, (sfp8s_cast64 *)(void *)((char *)t + 65536 * sizeof(uint16_t) + 64));
    *bytes = 65536 * sizeof(uint16_t);
    return t;
}

const uint16_t *sfp8f_from_float(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || !sfp8f_usable_env(env) || !sfp8f_from_float_ok(dst)) return NULL;
    return sfp8f_cached(T_FROMF, 0, dst, NULL, env, sfp8f_build_fromf, n, 65536);
}

const void *sfp8f_from_float8_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if ((c->f->bits != 32 && c->f->bits != 64) || c->dst->bits > 8) return NULL;
    return sfp8f_from_float(c->dst, c->env, c->n);
}

static inline AINL unsigned from_float_loop(int FL, const uint16_t *tab, const char *a, ptrdiff_t sa,
                                              int isize, char *o, ptrdiff_t so, ptrdiff_t i, ptrdiff_t n,
                                              uint8_t *flout)
{
    unsigned acc = 0;
    for (; i < n; i++, a += sa, o += so) {
        uint16_t v;
        if (isize == 4) {
            uint32_t bits;
            memcpy(&bits, a, 4);
            v = tab[sfp8f_key32(bits)];
        } else {
            uint64_t bits;
            memcpy(&bits, a, 8);
            v = tab[sfp8f_key64(bits)];
        }
        *(uint8_t *)o = (uint8_t)v;
        acc |= v;
        if (FL) flout[i] = (uint8_t)(v >> 8);
    }
    return acc;
}

/* the SIMD prefixes: the arithmetic kernel (binary64; codes, flags to flo or
   NULL), and the key-table gathers (no per-element flags); the count done,
   *acc |= the flags << 8 */
typedef ptrdiff_t (*arith_block)(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                                 uint8_t *flo, ptrdiff_t n, unsigned *acc);
typedef ptrdiff_t (*key32_block)(const uint16_t *tab, const uint32_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc);
typedef ptrdiff_t (*key64_block)(const uint16_t *tab, const uint64_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc);

static inline AINL unsigned from_float_run(const uint16_t *tab, const sfp8f_call *c, arith_block arith,
                                           key32_block k32, key64_block k64)
{
    const char *a = c->a;
    char *o = c->o;
    const ptrdiff_t sa = c->sa, so = c->so, n = c->n;
    const int isize = c->isize;
    uint8_t *const flout = c->flout;
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (arith && isize == 8 && sa == 8 && so == 1 && cast64_of(tab)->ok && sfp8f_apart(o, 1, 1, a, 8, 8, n)) {
        i = arith(cast64_of(tab), tab, (const uint64_t *)(const void *)a, (uint8_t *)o, flout, n, &acc);
        a += i * sa;
        o += i;
    }
    if (flout) {
        acc |= isize == 4 ? from_float_loop(1, tab, a, sa, 4, o, so, i, n, flout)
                          : from_float_loop(1, tab, a, sa, 8, o, so, i, n, flout);
        return acc >> 8;
    }
    if ((isize == 4 ? k32 != NULL : k64 != NULL) && i == 0 && sa == isize && so == 1 &&
        sfp8f_apart(o, 1, 1, a, sa, isize, n)) {
        if (isize == 4) i = k32(tab, (const uint32_t *)(const void *)a, (uint8_t *)o, n, &acc);
        else i = k64(tab, (const uint64_t *)(const void *)a, (uint8_t *)o, n, &acc);
        a += i * sa;
        o += i;
    }
    if (isize == 4) acc |= from_float_loop(0, tab, a, sa, 4, o, so, i, n, NULL);
    else acc |= from_float_loop(0, tab, a, sa, 8, o, so, i, n, NULL);
    return acc >> 8;
}

unsigned sfp8f_from_float8_run(const void *t, const sfp8f_call *c) { return from_float_run(t, c, NULL, NULL, NULL); }

#if SFP8_X86

/* the lanes of mask m take the key table */
static void by_table(const uint16_t *tab, const uint64_t *in, uint8_t *out, uint8_t *flo, unsigned m,
                     unsigned *acc)
{
    while (m) {
        int j = __builtin_ctz(m);
        uint64_t b;
        uint16_t v;
        memcpy(&b, in + j, 8); /* the input may be unaligned (NumPy's contiguous casts) */
        v = tab[sfp8f_key64(b)];
        out[j] = (uint8_t)v;
        if (flo) flo[j] = (uint8_t)(v >> 8);
        *acc |= v & 0xff00u;
        m &= m - 1;
    }
}

/* ---- AVX2: the arithmetic kernel, four binary64 lanes at a time (simd.h,
 *      cast_lane4), sixteen a block ---- */

/* the low bytes of four vectors of four 64-bit lanes, in order */
SFP8_AVX2 static inline AINL __m128i pack16(const __m256i v[4])
{
    const __m128i order = _mm_setr_epi8(0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15);
    __m256i a = _mm256_or_si256(v[0], _mm256_slli_epi64(v[1], 32));
    __m256i b = _mm256_or_si256(v[2], _mm256_slli_epi64(v[3], 32));
    __m256i w = _mm256_packus_epi32(a, b);
    __m256i q = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
    return _mm_shuffle_epi8(_mm256_castsi256_si128(q), order);
}

SFP8_AVX2 static inline AINL ptrdiff_t cast256(int MODE, int TB, int FL, const sfp8s_cast64 *p, const uint16_t *tab,
                                               const uint64_t *in, uint8_t *out, uint8_t *flo, ptrdiff_t n,
                                               unsigned *acc)
{
    const __m256i low8 = _mm256_set1_epi64x(0xff);
    cast_k256 c;
    __m256i facc = _mm256_setzero_si256();
    unsigned a = 0;
    ptrdiff_t i = 0;
    cast_k256_init(&c, p->M, p->emin, p->maxmag, p->signbit, p->negzero != 0, 0, p->ovf0, p->ovf1, p->ovf_fl0,
                   p->ovf_fl1);
    for (; i + 16 <= n; i += 16) {
        __m256i code[4], fl[4];
        unsigned bad = 0;
        for (int q = 0; q < 4; q++) {
            __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(in + i + 4 * q));
            bad |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(cast_lane4(MODE, TB, 1, &c, b, &code[q], &fl[q])))
                   << (4 * q);
            code[q] = _mm256_and_si256(code[q], low8);
        }
        _mm_storeu_si128((__m128i *)(void *)(out + i), pack16(code));
        if (FL) _mm_storeu_si128((__m128i *)(void *)(flo + i), pack16(fl));
        facc = _mm256_or_si256(facc, _mm256_or_si256(_mm256_or_si256(fl[0], fl[1]), _mm256_or_si256(fl[2], fl[3])));
        if (bad) by_table(tab, in + i, out + i, FL ? flo + i : NULL, bad, &a);
    }
    {
        uint64_t f[4];
        _mm256_storeu_si256((__m256i *)(void *)f, facc);
        *acc |= a | (unsigned)(f[0] | f[1] | f[2] | f[3]) << 8;
    }
    return i;
}

/* one instance per rounding mode and tininess rule */
#define CAST64_CASE(MODE, FN, FL)                                                                              \
    return p->tb ? FN(MODE, 1, FL, p, tab, in, out, flo, n, acc) : FN(MODE, 0, FL, p, tab, in, out, flo, n, acc);

SFP8_AVX2 static ptrdiff_t arith_avx2(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                                      uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    if (flo) {
        SFP8S_MODES(p->rounding, CAST64_CASE, cast256, 1)
    }
    SFP8S_MODES(p->rounding, CAST64_CASE, cast256, 0)
}

/* binary32 -> code through the key table, eight lanes a gather (AVX2; key32_avx512's
   operations: the 32-bit gather at the key's 16-bit entry reads the next entry into the high
   half, which the mask drops), sixteen a step */
SFP8_AVX2 static ptrdiff_t key32_avx2(const uint16_t *tab, const uint32_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc)
{
    const __m256i lo16 = _mm256_set1_epi32(0xffff), lo8 = _mm256_set1_epi32(0xff), keep = _mm256_set1_epi32(0xfffe),
                  low17 = _mm256_set1_epi32(0x1ffff), one = _mm256_set1_epi32(1), zero = _mm256_setzero_si256();
    __m256i a = zero;
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i v[2];
        for (int h = 0; h < 2; h++) {
            const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(in + i + 8 * h));
            __m256i key = _mm256_and_si256(_mm256_srli_epi32(b, 16), keep);
            key = _mm256_or_si256(key, _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(b, low17), zero), one));
            v[h] = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)tab, key, 2), lo16);
            a = _mm256_or_si256(a, v[h]);
        }
        /* the low bytes in order: 32 -> 16 bits (lane-wise), the quarters put in order, 16 -> 8 */
        const __m256i w = _mm256_permute4x64_epi64(
            _mm256_packus_epi32(_mm256_and_si256(v[0], lo8), _mm256_and_si256(v[1], lo8)), 0xD8);
        _mm_storeu_si128((__m128i *)(void *)(out + i),
                         _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
    }
    {
        uint32_t f[8];
        _mm256_storeu_si256((__m256i *)(void *)f, a);
        *acc |= f[0] | f[1] | f[2] | f[3] | f[4] | f[5] | f[6] | f[7];
    }
    return i;
}

unsigned sfp8f_from_float8_run_avx2(const void *t, const sfp8f_call *c)
{
    return from_float_run(t, c, arith_avx2, key32_avx2, NULL);
}

/* ---- AVX-512: the arithmetic kernel on sixteen binary64 lanes (simd.h,
 *      cast_half512 / cast_code512); the key table by gathers ---- */

SFP8_AVX512 static inline AINL ptrdiff_t cast512(int MODE, int TB, int FL, const sfp8s_cast64 *p, const uint16_t *tab,
                                                 const uint64_t *in, uint8_t *out, uint8_t *flo, ptrdiff_t n,
                                                 unsigned *acc)
{
    const __m512d eminv = _mm512_set1_pd(p->emin), Mv = _mm512_set1_pd(p->M);
    const __m512d pmin = _mm512_scalef_pd(_mm512_set1_pd(1.0), eminv); /* 2^emin */
    cast_k512 c;
    __m512i facc = _mm512_setzero_si512();
    unsigned a = 0;
    ptrdiff_t i = 0;
    cast_k512_init(&c, p->M, p->emin, p->maxmag, p->signbit, p->negzero != 0, p->ovf0, p->ovf1, p->ovf_fl0,
                   p->ovf_fl1);
    for (; i + 16 <= n; i += 16) {
        __m256i k0, k1, e0, e1;
        unsigned ix0, ix1, s0, s1, bad, ovf, edge = 0;
        __m512i code, fl;
        const __m512d x0 = _mm512_loadu_pd((const void *)(in + i)), x1 = _mm512_loadu_pd((const void *)(in + i + 8));
        _mm_prefetch((const char *)(in + i + 512), _MM_HINT_T0); /* 4 KiB ahead: ~4% at 10^7 */
        _mm_prefetch((const char *)(in + i + 520), _MM_HINT_T0);
        cast_half512(MODE, x0, eminv, Mv, &k0, &e0, &ix0, &s0);
        cast_half512(MODE, x1, eminv, Mv, &k1, &e1, &ix1, &s1);
        /* QNaN, +inf, -inf, denormal, SNaN */
        bad = _mm512_fpclass_pd_mask(x0, 0xB9) | (unsigned)_mm512_fpclass_pd_mask(x1, 0xB9) << 8;
        code = cast_code512(MODE, 1, &c, _mm512_inserti64x4(_mm512_castsi256_si512(k0), k1, 1),
                            _mm512_inserti64x4(_mm512_castsi256_si512(e0), e1, 1), ix0 | ix1 << 8, s0 | s1 << 8, &fl,
                            &ovf, &edge);
        /* an inexact result 2^emin: tiny before rounding iff x < 2^emin; after
           rounding those of x < 2^emin take the table */
        if (edge) {
            edge &= cast_below512(x0, x1, pmin);
            if (TB) fl = _mm512_mask_mov_epi32(fl, (__mmask16)edge, c.fuf);
            else bad |= edge;
        }
        _mm_storeu_si128((__m128i *)(void *)(out + i), _mm512_cvtepi32_epi8(code));
        if (FL) _mm_storeu_si128((__m128i *)(void *)(flo + i), _mm512_cvtepi32_epi8(fl));
        if (bad) {
            fl = _mm512_maskz_mov_epi32((__mmask16)~bad, fl);
            by_table(tab, in + i, out + i, FL ? flo + i : NULL, bad, &a);
        }
        facc = _mm512_or_si512(facc, fl);
    }
    *acc |= a | (unsigned)_mm512_reduce_or_epi32(facc) << 8;
    return i;
}

SFP8_AVX512 static ptrdiff_t arith_avx512(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                                          uint8_t *flo, ptrdiff_t n, unsigned *acc)
{
    if (flo) {
        SFP8S_MODES(p->rounding, CAST64_CASE, cast512, 1)
    }
    SFP8S_MODES(p->rounding, CAST64_CASE, cast512, 0)
}

/* binary32 -> code through the key table */
SFP8_AVX512 static ptrdiff_t key32_avx512(const uint16_t *tab, const uint32_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc)
{
    __m512i a = _mm512_setzero_si512();
    const __m512i lo16 = _mm512_set1_epi32(0xffff), keep = _mm512_set1_epi32(0xfffe);
    const __m512i low17 = _mm512_set1_epi32(0x1ffff), one = _mm512_set1_epi32(1);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i b = _mm512_loadu_si512((const void *)(in + i));
        __m512i key = _mm512_and_si512(_mm512_srli_epi32(b, 16), keep);
        key = _mm512_mask_or_epi32(key, _mm512_test_epi32_mask(b, low17), key, one);
        __m512i v = _mm512_and_si512(_mm512_i32gather_epi32(key, (const void *)tab, 2), lo16);
        a = _mm512_or_si512(a, v);
        _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi32_epi8(v));
    }
    *acc |= (unsigned)_mm512_reduce_or_epi32(a);
    return i;
}

/* binary64 -> code through the key table (simd.h, key64x16f) */
SFP8_AVX512 static ptrdiff_t key64_avx512(const uint16_t *tab, const uint64_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc)
{
    __m512i a = _mm512_setzero_si512();
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i key = key64x16f(_mm512_loadu_si512((const void *)(in + i)),
                                _mm512_loadu_si512((const void *)(in + i + 8)));
        __m512i v = _mm512_i32gather_epi32(key, (const void *)tab, 2); /* high halves: the next entry */
        a = _mm512_or_si512(a, v);
        _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi32_epi8(v));
    }
    *acc |= (unsigned)_mm512_reduce_or_epi32(a) & 0xffffu;
    return i;
}

unsigned sfp8f_from_float8_run_avx512(const void *t, const sfp8f_call *c)
{
    return from_float_run(t, c, arith_avx512, key32_avx512, key64_avx512);
}
#endif
