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
#include <math.h>
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
    t->man_bits = k->a.man_bits;
    t->emin = 1 - k->a.bias;
    { /* env is deterministic here (downward); ok, maxmag, signbit, negzero do not depend on it */
        sfp8s_cast64 c;
        sfp8f_cast64_params(&k->a, &env, &c);
        t->ar = c.ok && t->emin >= -125 && t->emin <= 126; /* fast_simd.h, sfp8s_sr.ar */
        t->maxmag = c.maxmag;
        t->signbit = c.signbit;
        t->negzero = c.negzero;
    }
    /* the SIMD kernels' marks (fast_simd.c, sr_cast16): ra = rz for the keys
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
    if (sa == isize && so == 1 && sfp8f_simd_level() >= 1 && sfp8f_apart(o, 1, 1, a, sa, isize, n)) {
        const sfp8s_sr p = {t->rza, hs, base, index0, N, M, t->emin,
                           dst->subnormals == SFP8_SUBNORMALS_IEEE, env->tininess_before != 0, dst->is_signed != 0,
                           dst, env, t->ar, t->maxmag, t->signbit, t->negzero};
        i = sfp8f_simd_level() >= 2 ? sfp8s_from_float_sr_avx512(&p, a, isize, (uint8_t *)o, n, flout, &acc)
                                    : sfp8s_from_float_sr_avx2(&p, a, isize, (uint8_t *)o, n, flout, &acc);
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

/* ---- add / subtract / multiply of 8-bit formats (fast.h, sfp8f_stochastic8) ----
 *
 * One 64-bit entry per operand pair p = x << 8 | y: ts | rz << 32 | rzfl << 40 |
 * ra << 48 | rafl << 56, where rz / ra are the core's codes for the lowest and
 * the highest random word (R = 0: toward zero; R = 2^32 - 1: away from zero
 * when inexact) and ts = floor(fraction * 2^32) of the exact result between
 * them.  The core rounds away iff t + R >= 2^N with t = floor(fraction * 2^N)
 * = ts >> (32 - N): element i is ra iff (R_i & (2^N - 1)) > (2^N - 1) - t.
 *
 * Tininess after rounding has a threshold of its own: a result in the top ulp
 * of the unbounded grid below 2^emin, [2^emin - 2^(emin-1-M), 2^emin), is not
 * tiny iff it rounds up on that grid (tu = floor(fraction there * 2^32), the
 * same rule); such a result rounds away whenever it rounds up there (tu <= ts).
 * Those entries carry 0x40 in rafl: ra's flags are rafl & 0x3f when it rounds
 * up on the unbounded grid, else nf[p] (with the underflow flag).
 *
 * Every entry is checked against the core at the words where its answer
 * changes (the last and first words of each threshold); a pair the rule cannot
 * state (the result not between two finite neighbours, an inexact binary64
 * sum, a failed check) has 0x80 in both flag bytes and takes the core. */
#define SR8_CORE ((0x80ULL << 40) | (0x80ULL << 56))

static uint64_t sr8_entry(uint32_t ts, uint32_t rz, unsigned rzfl, uint32_t ra, unsigned rafl)
{
    return ts | (uint64_t)(rz & 0xff) << 32 | (uint64_t)rzfl << 40 | (uint64_t)(ra & 0xff) << 48 |
           (uint64_t)rafl << 56;
}

/* the core's x op y with random word R; for a conversion table (kinds T_SRCV,
   T_SRWC) the conversion k->a -> k->b of the code x << 8 | y, for a unary one
   (T_SRUN, T_SRWU) op of that code */
static uint32_t core_sr(const sfp8f_key *k, sfp8_env *env, uint32_t x, uint32_t y, uint32_t R, uint8_t *g)
{
    env->random = R;
    if (k->kind == T_SRCV || k->kind == T_SRWC) return sfp8_convert(&k->a, &k->b, x << 8 | y, env, g);
    if (k->kind == T_SRUN || k->kind == T_SRWU) return sfp8x_apply(k->op, &k->a, x << 8 | y, 0, 0, env, g);
    return sfp8x_apply(k->op, &k->a, x, y, 0, env, g);
}

/* 1 if the core gives (code, fl) for x op y with random word R */
static int core_gives(const sfp8f_key *k, sfp8_env *env, uint32_t x, uint32_t y, uint32_t R, uint32_t code,
                      unsigned fl)
{
    uint8_t g = 0;
    return core_sr(k, env, x, y, R, &g) == code && g == fl;
}

/* The entry of pair p = x << 8 | y whose exact result is not a binary64 number
   at hand (divide, conversions): ts = 2^32 minus the least random word for
   which the core rounds away (the rule t + R >= 2^32 is monotone in R),
   checked at both words; if the check fails the entry stays with the core */
static int search_ts(const sfp8f_key *k, sfp8_env *env, uint32_t p, uint32_t r0, unsigned f0, uint32_t r1,
                     unsigned f1, uint32_t *ts)
{
    const uint32_t x = p >> 8, y = p & 0xff;
    uint32_t lo_r = 1, hi_r = 0xffffffffu; /* core(lo_r - 1) = r0, core(hi_r) = r1 */
    while (lo_r < hi_r) {
        uint32_t mid = lo_r + (hi_r - lo_r) / 2;
        uint8_t g = 0;
        if (core_sr(k, env, x, y, mid, &g) == r1) hi_r = mid;
        else lo_r = mid + 1;
    }
    if (!core_gives(k, env, x, y, lo_r - 1, r0, f0) || !core_gives(k, env, x, y, lo_r, r1, f1)) return 0;
    *ts = 0u - lo_r;
    return 1;
}

static void entry_by_search(sfp8f_sr8 *t, const sfp8f_key *k, sfp8_env *env, uint32_t p, uint32_t r0, unsigned f0,
                            uint32_t r1, unsigned f1)
{
    uint32_t ts;
    if (!search_ts(k, env, p, r0, f0, r1, f1, &ts)) return;
    t->e[p] = sr8_entry(ts, r0, f0, r1, f1);
    t->tu[p] = ts;
    t->nf[p] = (uint8_t)f1;
}

/* The SIMD kernel's table q (fast.h): t12 = ts >> 20 | class << 12 | rz << 16 |
 * ra << 24, the class indexing a palette of (rz flags, ra flags); class 15
 * (entries of the unbounded grid's rule or of the core, or more flag pairs
 * than the palette holds) sends the lane to sr8_one.  With t12 the kernel
 * decides every lane but those whose top 12 random bits (of N > 12) equal
 * 2^12 - 1 - t12, which sr8_one decides with ts. */
static void sr8_compact(sfp8f_sr8 *t)
{
    int np = 0;
    for (int c = 0; c < 16; c++) t->pal[c] = 0x80u << 8 | 0x80u << 24;
    for (uint32_t p = 0; p < 65536; p++) {
        uint64_t ent = t->e[p];
        uint32_t zf = (uint32_t)(ent >> 40) & 0xff, af = (uint32_t)(ent >> 56), pv = zf << 8 | af << 24, c = 15;
        if (!((zf | af) & 0xc0)) {
            for (c = 0; c < (uint32_t)np && t->pal[c] != pv; c++) continue;
            if (c == (uint32_t)np && np < 15) t->pal[np++] = pv;
            if (c >= 15) c = 15;
        }
        t->q[p] = (uint32_t)ent >> 20 | c << 12 | (uint32_t)(ent >> 32 & 0xff) << 16 | (uint32_t)(ent >> 48 & 0xff) << 24;
    }
}

static void *build_sr8(const sfp8f_key *k, size_t *bytes)
{
    /* the results' format: the arithmetic's own, or a conversion's destination */
    const int conv = k->kind == T_SRCV || k->kind == T_SRUN; /* one entry per source code */
    const sfp8_format *f = k->kind == T_SRCV ? &k->b : &k->a;
    const uint32_t nsrc = conv ? (uint32_t)1 << k->a.bits : 65536;
    sfp8_env env;
    double v[256], minnorm = INFINITY, base_u, ulp_u;
    int fin[256];
    sfp8f_sr8 *t = malloc(sizeof *t);
    if (!t) return NULL;
    sfp8f_key_env(k, &env); /* stochastic, sr_bits 32 */
    for (uint32_t c = 0; c < 256; c++) {
        uint8_t fl = 0;
        uint64_t b = sfp8_convert(f, &sfp8_binary64, c, &sfp8f_free_env, &fl);
        int cls = sfp8_classify(f, c);
        memcpy(&v[c], &b, 8);
        fin[c] = cls < SFP8_CLASS_INF;
        if (cls == SFP8_CLASS_NORMAL && v[c] > 0 && v[c] < minnorm) minnorm = v[c];
    }
    ulp_u = ldexp(minnorm, -f->man_bits - 1); /* the unbounded grid's ulp below 2^emin */
    base_u = minnorm - ulp_u;
    for (uint32_t x = 0; x < 256; x++)
        for (uint32_t y = 0; y < 256; y++) {
            const uint32_t p = x << 8 | y;
            uint8_t f0 = 0, f1 = 0;
            uint32_t r0, r1;
            t->e[p] = SR8_CORE;
            t->tu[p] = 0;
            t->nf[p] = 0;
            if (p >= nsrc) continue;
            r0 = core_sr(k, &env, x, y, 0, &f0);
            r1 = core_sr(k, &env, x, y, 0xffffffffu, &f1);
            if (r0 == r1 && f0 == f1) {
                t->e[p] = sr8_entry(0, r0, f0, r1, f1); /* the same for every R */
            } else if (conv) {
                /* both neighbours finite; a result rounding up to 2^emin under tininess
                   after rounding (its flags depend on the unbounded grid) takes the core */
                if (r0 == r1 || r0 >= 256 || r1 >= 256 || !fin[r0] || !fin[r1] ||
                    (!env.tininess_before && fabs(v[r1]) == minnorm))
                    continue;
                entry_by_search(t, k, &env, p, r0, f0, r1, f1);
            } else if (fin[x] && fin[y] && r0 < 256 && r1 < 256 && fin[r0] && fin[r1]) {
                double a = v[x], b = k->op == X_SUB ? -v[y] : v[y], d, err = 0, lo, hi, u;
                int ex;
                if (k->op == X_DIV) {
                    /* the quotient is not exact in binary64: ts from the core itself, the
                       least R that rounds away (the rule t + R >= 2^32 is monotone in R),
                       checked below like every entry; a quotient near 2^emin (the
                       unbounded grid's tininess threshold) takes the core */
                    lo = fabs(v[r0]);
                    hi = fabs(v[r1]);
                    d = fabs(a / b);
                    if (frexp(hi - lo, &ex) != 0.5 || !(lo < d && d < hi) ||
                        (!env.tininess_before && d >= base_u * (1 - 0x1p-40) && d <= minnorm * (1 + 0x1p-40)))
                        continue;
                    entry_by_search(t, k, &env, p, r0, f0, r1, f1);
                    continue;
                }
                if (k->op == X_MUL) {
                    d = a * b; /* exact: at most 2 x 8 significant bits */
                } else { /* TwoSum: the error term is zero iff the sum is exact */
                    double bb;
                    d = a + b;
                    bb = d - a;
                    err = (a - (d - bb)) + (b - bb);
                }
                d = fabs(d);
                lo = fabs(v[r0]);
                hi = fabs(v[r1]);
                if (err != 0 || !(lo <= d && d < hi) || frexp(hi - lo, &ex) != 0.5) continue;
                /* d - lo is exact (d's grid is finer than lo's); hi - lo = 2^(ex-1) */
                u = ldexp(d - lo, 33 - ex);
                if (u >= 1 && u < 4294967296.0) {
                    uint32_t ts = (uint32_t)u, tu = ts;
                    uint8_t fc = f1, fn = f1, g = 0;
                    if (!env.tininess_before && d >= base_u && d < minnorm) {
                        tu = (uint32_t)ldexp((d - base_u) / ulp_u, 32); /* d - base_u exact (Sterbenz) */
                        if (tu > ts) continue;
                    }
                    if (tu < ts) { /* ra without rounding up on the unbounded grid */
                        env.random = 0u - ts;
                        if (sfp8x_apply(k->op, f, x, y, 0, &env, &g) != r1) continue;
                        fn = g;
                        if (tu == 0) fc = fn; /* never rounds up there */
                    }
                    if (core_gives(k, &env, x, y, 0xffffffffu - ts, r0, f0) &&
                        core_gives(k, &env, x, y, 0u - ts, r1, tu >= ts ? fc : fn) &&
                        (tu >= ts || core_gives(k, &env, x, y, 0xffffffffu - tu, r1, fn)) &&
                        (tu == 0 || core_gives(k, &env, x, y, 0u - tu, r1, fc))) {
                        t->e[p] = sr8_entry(ts, r0, f0, r1, fc | (fc != fn ? 0x40u : 0u));
                        t->tu[p] = tu;
                        t->nf[p] = fn;
                    }
                }
            }
        }
    sr8_compact(t);
    *bytes = sizeof *t;
    return t;
}

/* code and flags of pair p for the random bits Rn = R & Rmask (flags 0x80: the core) */
static inline __attribute__((always_inline)) uint8_t sr8_one(const sfp8f_sr8 *t, uint32_t p, uint32_t Rn, uint32_t Rmask, int N, uint8_t *code)
{
    uint64_t ent = t->e[p];
    uint32_t h = (uint32_t)(ent >> 32);
    uint8_t fl;
    if (Rn > Rmask - ((uint32_t)ent >> (32 - N))) h >>= 16;
    *code = (uint8_t)h;
    fl = (uint8_t)(h >> 8);
    if ((fl & 0xc0) == 0x40) fl = Rn > Rmask - (t->tu[p] >> (32 - N)) ? (uint8_t)(fl & 0x3f) : t->nf[p];
    return fl;
}

const sfp8f_sr8 *sfp8f_stochastic8(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || f->bits > 8 || !sfp8f_from_float_ok(f) ||
        f->subnormals == SFP8_SUBNORMALS_TESLA || (op != X_ADD && op != X_SUB && op != X_MUL && op != X_DIV))
        return NULL;
    /* one table for every sr_bits and random word: the key holds saturation and tininess;
       about four core calls per entry to build (about 36 for divide: a binary search) */
    return sfp8f_cached(T_SR8, op, f, NULL, env, build_sr8, n, (op == X_DIV ? 36 : 4) * 65536);
}

const sfp8f_sr8 *sfp8f_stochastic_conv(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                       ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || src->bits > 16 || dst->bits > 8 ||
        !sfp8f_from_float_ok(dst) || dst->subnormals == SFP8_SUBNORMALS_TESLA)
        return NULL;
    /* about 36 core calls per source code whose result depends on R (a binary search) */
    return sfp8f_cached(T_SRCV, 0, src, dst, env, build_sr8, n, 36 << src->bits);
}

const sfp8f_sr8 *sfp8f_stochastic_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || f->bits > 8 || !sfp8f_from_float_ok(f) ||
        f->subnormals == SFP8_SUBNORMALS_TESLA || sfp8x_ops[op].kind != K_UNARY)
        return NULL;
    /* elementary functions cost the core far more than a conversion: a table of
       256 entries repays itself from about 1,000 elements */
    return sfp8f_cached(T_SRUN, op, f, NULL, env, build_sr8, n, 16 * 1024);
}

/* the random bits used (N), their mask, and the generator's keys (rng.h) */
typedef struct {
    int N;
    uint32_t Rmask;
    uint64_t hs, base;
} sr_keys;

static sr_keys sr_keys_of(const sfp8_env *env, uint64_t seed, uint64_t stream)
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
 * element c->index0 + i + j; returns the OR of all fl[j] */
static __attribute__((noinline)) unsigned finish_core(const sr_call *c, ptrdiff_t i, const char *x, const char *y, char *out, int size,
                            uint8_t *fl, ptrdiff_t m)
{
    sfp8_env e = *c->env;
    unsigned g = 0;
    /* sqrt of a negative number (finite, not zero, read without a flag: vf): the
       same NaN and flags for every such operand and random word (nothing is
       rounded): the core once, then those lanes without a branch per lane */
    const sfp8f_sr16 *t = c->op == X_SQRT && !c->src ? c->t16 : NULL;
    if (t) {
        uint32_t neg_code = 0;
        int neg_fl = -1;
        for (ptrdiff_t j = 0; j < m && neg_fl < 0; j++) {
            const uint64_t v = t->vf[(uint32_t)sfp8f_ld(x + j * size, size) & t->mask];
            if ((fl[j] & 0x80) && (v >> 63) && !(v & 0xff) && (v << 1)) {
                uint8_t got = 0;
                e.random = 0; /* not used: nothing is rounded */
                neg_code = sfp8x_apply(X_SQRT, c->f, (uint32_t)sfp8f_ld(x + j * size, size), 0, 0, &e, &got);
                neg_fl = got;
            }
        }
        if (neg_fl >= 0 && size == 2) /* 16-bit codes (the only caller): masks, no branch */
            for (ptrdiff_t j = 0; j < m; j++) {
                const uint64_t v = t->vf[sfp8f_ld16(x + 2 * j) & t->mask];
                const uint32_t neg = (uint32_t)(fl[j] >> 7) & (uint32_t)(v >> 63) & (uint32_t)((v & 0xff) == 0) &
                                     (uint32_t)((v << 1) != 0);
                const uint32_t sel = 0u - neg;
                const uint16_t code = (uint16_t)((neg_code & sel) | (sfp8f_ld16(out + 2 * j) & ~sel));
                memcpy(out + 2 * j, &code, 2);
                fl[j] = (uint8_t)(((uint32_t)neg_fl & sel) | (fl[j] & ~sel));
            }
    }
    for (ptrdiff_t j = 0; j < m; j++) {
        if (fl[j] & 0x80) {
            uint8_t got = 0;
            e.random = sfp8r_bits(c->k.hs, c->k.base, c->index0 + (uint64_t)(i + j));
            if (c->src) { /* x, y: the source code's high and low bytes */
                const uint32_t code = (uint32_t)(uint8_t)x[j] << 8 | (uint8_t)y[j];
                sfp8f_st(out + j * size,
                         c->op < 0 ? sfp8_convert(c->src, c->f, code, &e, &got)
                                   : sfp8x_apply(c->op, c->f, code, 0, 0, &e, &got),
                         size);
            } else
                sfp8f_st(out + j * size,
                         sfp8x_apply(c->op, c->f, (uint32_t)sfp8f_ld(x + j * size, size),
                                     (uint32_t)sfp8f_ld(y + j * size, size),
                                     c->z ? (uint32_t)sfp8f_ld(c->z + (i + j) * size, size) : 0, &e, &got),
                         size);
            fl[j] = got;
        }
        g |= fl[j];
    }
    return g;
}

/* After a SIMD kernel's block of m lanes at element i (operands x, y, codes
 * oc, flags of): the lanes with 0x80 through sr8_one, then perhaps the core;
 * eight flag bytes tested at a time.  Returns the OR of all m flags. */
static __attribute__((noinline)) unsigned sr8_fix(const sfp8f_sr8 *t, const sr_call *c, ptrdiff_t i, const uint8_t *x, const uint8_t *y,
                        uint8_t *oc, uint8_t *of, ptrdiff_t m)
{
    uint64_t orw = 0;
    unsigned g = 0;
    for (ptrdiff_t j = 0; j < m; j += 8) {
        const ptrdiff_t e = m - j < 8 ? m - j : 8;
        uint64_t w = 0;
        memcpy(&w, of + j, (size_t)e);
        if (w & 0x8080808080808080ULL) {
            for (ptrdiff_t k = j; k < j + e; k++)
                if (of[k] & 0x80) {
                    of[k] = sr8_one(t, (uint32_t)x[k] << 8 | y[k],
                                    sfp8r_bits(c->k.hs, c->k.base, c->index0 + (uint64_t)(i + k)) & c->k.Rmask,
                                    c->k.Rmask, c->k.N, &oc[k]);
                    if (of[k] & 0x80) finish_core(c, i + k, (const char *)x + k, (const char *)y + k, (char *)oc + k, 1,
                                                  of + k, 1);
                }
            memcpy(&w, of + j, (size_t)e);
        }
        orw |= w;
    }
    for (int b = 0; b < 64; b += 8) g |= (unsigned)(orw >> b) & 0xff;
    return g;
}

/* DERIVED from core.c round_pack (its stochastic branch), through
 * build_sr8's table: add / subtract / multiply of an 8-bit format under
 * stochastic rounding (fast.h).  The AVX-512 kernel (fast_simd.c,
 * sfp8s_arith8_sr_avx512) takes blocks of up to SR8_BLK elements when the output is
 * apart from the inputs (fast_impl.h, sfp8f_apart; strided operands through
 * buffers); otherwise, and below AVX-512, the loop below, element by element
 * in order.  Proven equal by tests/fast/test_fast_arith.py::test_stochastic_arith8
 * and under every calling convention by
 * tests/fast/test_fast_layouts.py::test_stochastic_arith_layouts. */
static unsigned run_arith8_sr(const sfp8f_sr8 *t, const sr_call *c)
{
    /* a conversion: the source codes (isz bytes, masked to src's width) split
       into the table index's bytes x, y */
    const int isz = c->src ? (c->src->bits <= 8 ? 1 : 2) : 1;
    const uint32_t smask = c->src ? sfp8_code_mask(c->src) : 0;
    const char *a = c->a, *b = c->b;
    char *o = c->o;
    unsigned acc = 0;
    ptrdiff_t i = 0;
    const int level = sfp8f_simd_level();
    if (level >= 1 && sfp8f_apart(o, c->so, 1, a, c->sa, isz, c->n) &&
        (c->src || sfp8f_apart(o, c->so, 1, b, c->sb, 1, c->n))) {
        uint8_t xb[SR8_BLK], yb[SR8_BLK], code[SR8_BLK], fl[SR8_BLK];
        const int direct = c->so == 1 && o != a && (c->src || o != b);
        for (; i < c->n; i += SR8_BLK) {
            ptrdiff_t m = c->n - i < SR8_BLK ? c->n - i : SR8_BLK;
            const uint8_t *x = (const uint8_t *)a + i, *y = c->src ? NULL : (const uint8_t *)b + i;
            /* in place (o == a or b): codes through a buffer, the core may read the operands after the kernel */
            uint8_t *oc = direct ? (uint8_t *)o + i : code, *of = c->flout ? c->flout + i : fl;
            const sfp8s_sr8 p = {t->q, t->pal, c->k.hs, c->k.base, c->index0 + (uint64_t)i, c->k.N};
            unsigned g;
            if (c->src && isz == 1 && c->sa == 1 && smask == 0xff) { /* 8-bit codes: the low byte in place */
                static const uint8_t zeros[SR8_BLK];
                x = zeros;
                y = (const uint8_t *)a + i;
            } else if (c->src) {
                uint16_t cb[SR8_BLK];
                if (isz == 2 && c->sa == 2)
                    memcpy(cb, a + 2 * i, (size_t)(2 * m));
                else
                    for (ptrdiff_t j = 0; j < m; j++) cb[j] = (uint16_t)sfp8f_ld(a + (i + j) * c->sa, isz);
                for (ptrdiff_t j = 0; j < m; j++) {
                    xb[j] = (uint8_t)((cb[j] & smask) >> 8);
                    yb[j] = (uint8_t)(cb[j] & smask);
                }
                x = xb;
                y = yb;
            } else {
                if (c->sa != 1) {
                    for (ptrdiff_t j = 0; j < m; j++) xb[j] = *(const uint8_t *)(a + (i + j) * c->sa);
                    x = xb;
                }
                if (c->sb != 1) {
                    for (ptrdiff_t j = 0; j < m; j++) yb[j] = *(const uint8_t *)(b + (i + j) * c->sb);
                    y = yb;
                }
            }
            g = level >= 2 ? sfp8s_arith8_sr_avx512(&p, x, y, oc, of, m) : sfp8s_arith8_sr_avx2(&p, x, y, oc, of, m);
            if (g & 0x80) g = sr8_fix(t, c, i, x, y, oc, of, m); /* lanes for sr8_one, then perhaps the core */
            acc |= g;
            if (!direct)
                for (ptrdiff_t j = 0; j < m; j++) *(uint8_t *)(o + (i + j) * c->so) = code[j];
        }
        return acc;
    }
    {
        /* locals: the stores through o and flout cannot change them */
        const sr_keys k = c->k;
        const uint64_t index0 = c->index0;
        const ptrdiff_t n = c->n, sa = c->sa, sb = c->sb, so = c->so;
        uint8_t *const flout = c->flout;
        for (; i < n; i++, a += sa, b += sb, o += so) { /* any overlap: element i read before output i is written */
            const uint32_t R = sfp8r_bits(k.hs, k.base, index0 + (uint64_t)i);
            uint8_t xy[2], code, fl;
            if (c->src) {
                const uint32_t v = (uint32_t)sfp8f_ld(a, isz) & smask;
                xy[0] = (uint8_t)(v >> 8);
                xy[1] = (uint8_t)v;
            } else {
                xy[0] = *(const uint8_t *)a;
                xy[1] = *(const uint8_t *)b;
            }
            fl = sr8_one(t, (uint32_t)xy[0] << 8 | xy[1], R & k.Rmask, k.Rmask, k.N, &code);
            if (fl & 0x80) finish_core(c, i, (const char *)xy, (const char *)xy + 1, o, 1, &fl, 1);
            else *(uint8_t *)o = code;
            acc |= fl;
            if (flout) flout[i] = fl;
        }
    }
    return acc;
}

/* ---- add / subtract / multiply / divide of 16-bit formats (fast.h, sfp8f_stochastic16) ----
 *
 * DERIVED from core.c round_pack (its stochastic branch): the exact result d in
 * binary64 (a product of two values of at most 21 significant bits, or a sum
 * that TwoSum shows exact; for divide the binary64 quotient, see sr16_one),
 * normal in the format: with K the M fraction bits of
 * d kept and rem the 52 - M dropped, the core's t = floor(rem / 2^(52-M) * 2^N)
 * = rem >> (52 - M - N), the result is the code of K, plus one iff
 * (R & (2^N - 1)) > (2^N - 1) - t, inexact iff rem != 0, with the operands'
 * flags (subnormal operands).  Zero, tiny or overflowing results, NaN or
 * infinite operands and inexact sums take the core.  Proven equal by
 * tests/fast/test_fast_arith.py::test_stochastic_arith16 and, under the NumPy
 * calling conventions, tests/fast/test_fast_layouts.py::test_stochastic_arith16_layouts. */
/* the arithmetic decoding of 8-bit codes (fast.h, sfp8f_sr16; fast_simd.h,
   sfp8s_srf), kept only if it gives vf (value and flags) for every code up to
   the largest finite magnitude and every other code is uncovered in vf too */
static void sr16_dec8(sfp8f_sr16 *t, const sfp8_format *f)
{
    const int M = t->r.M;
    t->magmask = ((uint64_t)1 << (f->bits - f->is_signed)) - 1;
    t->off = (uint64_t)(1023 + t->r.emin - 1) << 52;
    t->sub = ldexp(1.0, t->r.emin - M);
    t->sshift = 64 - f->bits;
    t->subfl = t->vf[1] & 0x7f; /* reading a subnormal: the denormal flag */
    t->dec8 = M >= 1 && M <= 6 && t->r.maxmag <= t->magmask;
    for (uint32_t c = 0; c <= t->mask && t->dec8; c++) {
        const uint64_t mag = c & t->magmask;
        double d = (double)mag * t->sub;
        uint64_t v;
        memcpy(&v, &d, 8);
        if (mag >> M) v = (mag << (52 - M)) + t->off;
        else if (mag) v |= t->subfl;
        v |= (uint64_t)(c & t->r.signbit) << t->sshift;
        t->dec8 = mag > t->r.maxmag ? (t->vf[c] & 0x80) != 0 : t->vf[c] == v;
    }
}

static void *build_sr16(const sfp8f_key *k, size_t *bytes)
{
    const sfp8_format *f = &k->a;
    sfp8_env env;
    const sfp8f_conv *dec;
    sfp8f_sr16 *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    env.rounding = SFP8_ROUND_NEAREST_EVEN; /* sfp8f_rounder's constants of the format only */
    dec = sfp8f_cached_nested(T_CONV, 0, f, &sfp8_binary64, &sfp8f_free_env, sfp8f_build_conv);
    if (!dec || dec->n != 65536 >> (16 - f->bits)) {
        free(t);
        return NULL;
    }
    if (!sfp8f_rounder(f, &env, &t->r)) {
        /* Tesla or flushed subnormals, no sign bit (SHP, UHP): results normal
           in the format (E >= 1 - bias) round as above; every other lane
           takes the core (round_f64.c, simd_only_ok) */
        if (f->specials == SFP8_SPECIALS_FNUZ || f->specials == SFP8_SPECIALS_P3109 ||
            f->subnormals == SFP8_SUBNORMALS_NOZERO || f->man_bits < 1 || f->exp_bits < 2) {
            free(t);
            return NULL;
        }
        t->r.M = f->man_bits;
        t->r.emin = 1 - f->bias;
        t->r.maxmag = sfp8_max_code(f);
        t->r.signbit = f->is_signed ? (uint32_t)1 << (f->bits - 1) : 0;
    }
    t->mask = (uint32_t)dec->n - 1;
    for (int c = 0; c < dec->n; c++) {
        uint64_t v = dec->val[c];
        if ((v & 0xff) || (dec->fl[c] & 0x80)) { /* every value's low byte is zero (at most 20 fraction bits) */
            free(t);
            return NULL;
        }
        t->vf[c] = v | dec->fl[c] | (((v >> 52) & 0x7ff) == 0x7ff ? 0x80u : 0u);
    }
    if (f->bits <= 8) sr16_dec8(t, f);
    *bytes = sizeof *t;
    return t;
}

const sfp8f_sr16 *sfp8f_stochastic16(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || f->bits <= 8 || f->bits > 16 ||
        f->exp_bits > 8 || f->bias < -100 || f->bias > 300 || f->man_bits > 20 ||
        (op != X_ADD && op != X_SUB && op != X_MUL && op != X_DIV && op != X_SQRT))
        return NULL;
    return sfp8f_cached(T_SR16, 0, f, NULL, env, build_sr16, n, 65536);
}

/* code and flags of x op y for the random bits Rn = R & Rmask (flags 0x80: the core) */
static inline uint8_t sr16_round(const sfp8f_sr16 *t, uint64_t bits, uint8_t opfl, uint32_t Rn, uint32_t Rmask, int N,
                                 uint16_t *code);

static inline uint8_t sr16_one(const sfp8f_sr16 *t, int op, uint32_t x, uint32_t y, uint32_t Rn, uint32_t Rmask,
                               int N, uint16_t *code)
{
    const int M = t->r.M, sh = 52 - M;
    uint64_t bx = t->vf[x & t->mask], by = t->vf[y & t->mask], bits;
    double a, b, d;
    const uint8_t opfl = (uint8_t)((bx | by) & 0x7f); /* the operands' reading flags */
    if ((bx | by) & 0x80) return 0x80;
    bx &= ~(uint64_t)0xff;
    by &= ~(uint64_t)0xff;
    memcpy(&a, &bx, 8);
    memcpy(&b, &by, 8);
    if (op == X_MUL) {
        d = a * b;
    } else if (op == X_DIV) {
        /* d = RN(a / b), |Q - d| < 2^(Ed-53) for the quotient Q (no binary64
           midpoint is a quotient of binary64 numbers).  Q and d have the same K and
           t unless a multiple of 2^(Ed-M-N) lies between them; being a binary64
           number nearer to Q than d, it can only be d itself.  Then the remainder
           r = a - d*b is a multiple of 2^min(Ea-M, Ed-M-N+Eb-M) (a, b have at most
           M+1 significant bits) with |r| = |Q - d|*|b| < 2^(Ed+Eb-52): zero when
           2M + N <= 52, so Q = d.  Larger M + N (custom formats only): the core. */
        if (b == 0 || 2 * M + N > 52) return 0x80;
        d = a / b;
    } else if (op == X_SQRT) {
        /* d = RN(sqrt(a)) (never a binary64 midpoint): as for divide, only d itself
           can lie on the grid of 2^(Ed-M-N) between d and the root, but here
           r = a - d*d (exact by fma) need not vanish: such d (low sh - N bits
           zero) with r != 0 take the core; exact roots (r = 0) are d */
        if (!(a > 0)) return 0x80;
        d = sqrt(a);
        memcpy(&bits, &d, 8);
        if (!(bits & (((uint64_t)1 << (sh - N)) - 1)) && fma(-d, d, a) != 0) return 0x80;
    } else {
        double bb;
        if (op == X_SUB) b = -b;
        d = a + b;
        bb = d - a;
        if ((a - (d - bb)) + (b - bb) != 0) return 0x80;
    }
    memcpy(&bits, &d, 8);
    return sr16_round(t, bits, opfl, Rn, Rmask, N, code);
}

/* the rule of sr16_one on the binary64 bits of a result whose first M + N
   fraction bits, and whether any other is not zero, are those of the exact one */
static inline uint8_t sr16_round(const sfp8f_sr16 *t, uint64_t bits, uint8_t opfl, uint32_t Rn, uint32_t Rmask, int N,
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

/* see fast.h; the AVX-512 kernel (fast_simd.c, sfp8s_arith16_sr_avx512), or with
 * AVX2 only sfp8s_arith16_sr_avx2, takes contiguous operands apart from the output
 * (fast_impl.h, sfp8f_apart), blocks of 256; otherwise, and without AVX2, the loop,
 * element by element in order */
static unsigned run_arith16_sr(const sfp8f_sr16 *t, const sr_call *c)
{
    const char *a = c->a, *b = c->b;
    char *o = c->o;
    unsigned acc = 0;
    ptrdiff_t i = 0;
    const int level = sfp8f_simd_level();
    if (level >= 1 && (c->op != X_DIV || 2 * t->r.M + c->k.N <= 52) && c->sa == 2 && c->sb == 2 && c->so == 2 && o != a && o != b &&
        sfp8f_apart(o, 2, 2, a, 2, 2, c->n) && sfp8f_apart(o, 2, 2, b, 2, 2, c->n)) {
        uint8_t fl[SR_BLK];
        /* the arithmetic decoding of the deterministic kernels (round_f64.c), for the
           binary32 kernel (add / subtract / multiply) and the divide / sqrt kernel */
        sfp8_env ne = *c->env;
        const sfp8f_a16 *d16;
        sfp8s_a16 sa16;
        ne.rounding = SFP8_ROUND_NEAREST_EVEN;
        d16 = level >= 2 && c->n >= 16 ? sfp8f_arith16(c->f, &ne, c->n) : NULL;
        if (d16 && d16->arith) sa16 = sfp8f_a16_params(d16, c->f);
        for (; i + 8 <= c->n; i += SR_BLK) {
            ptrdiff_t m = c->n - i < SR_BLK ? (c->n - i) & ~(ptrdiff_t)7 : SR_BLK;
            const uint16_t *x = (const uint16_t *)(const void *)(a + 2 * i), *y = (const uint16_t *)(const void *)(b + 2 * i);
            uint16_t *oc = (uint16_t *)(void *)(o + 2 * i);
            uint8_t *of = c->flout ? c->flout + i : fl;
            const sfp8s_sr16 p = {t->vf, t->mask, c->k.hs, c->k.base, c->index0 + (uint64_t)i, c->k.N,
                                  c->op == X_SQRT ? 4 : c->op == X_DIV ? 3 : c->op == X_MUL ? 2 : c->op == X_SUB,
                                  t->r.M, t->r.emin + 1023, t->r.maxmag, t->r.signbit,
                                  d16 && d16->arith ? &sa16 : NULL};
            unsigned g = level >= 2 ? sfp8s_arith16_sr_avx512(&p, x, y, oc, of, m)
                                    : sfp8s_arith16_sr_avx2(&p, x, y, oc, of, m);
            if (g & 0x80) /* lanes for the core */
                g = finish_core(c, i, a + 2 * i, b + 2 * i, o + 2 * i, 2, of, m);
            acc |= g;
            if (m < SR_BLK) {
                i += m;
                break;
            }
        }
        a += i * c->sa;
        b += i * c->sb;
        o += i * c->so;
    }
    for (; i < c->n; i++, a += c->sa, b += c->sb, o += c->so) { /* any overlap: element i read before output i is written */
        uint32_t x = sfp8f_ld16(a), y = sfp8f_ld16(b), R = sfp8r_bits(c->k.hs, c->k.base, c->index0 + (uint64_t)i);
        uint16_t code = 0;
        uint8_t fl = sr16_one(t, c->op, x, y, R & c->k.Rmask, c->k.Rmask, c->k.N, &code);
        if (fl & 0x80) finish_core(c, i, a, b, o, 2, &fl, 1);
        else memcpy(o, &code, 2);
        acc |= fl;
        if (c->flout) c->flout[i] = fl;
    }
    return acc;
}

unsigned sfp8f_run_arith_sr(const void *t, int op, const sfp8_format *f, const sfp8_env *env, uint64_t seed,
                            uint64_t stream, uint64_t index0, const char *a, ptrdiff_t sa, const char *b,
                            ptrdiff_t sb, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    const sr_call c = {op, f, NULL, env, sr_keys_of(env, seed, stream), index0, a, b, o, sa, sb, so, n, flout, NULL,
                       f->bits > 8 ? (const sfp8f_sr16 *)t : NULL};
    return f->bits <= 8 ? run_arith8_sr(t, &c) : run_arith16_sr(t, &c);
}

/* DERIVED from core.c round_pack (its stochastic branch) through build_sr8's
 * table of the conversion (one entry per source code, ts by ts_by_search):
 * the run of the 8-bit arithmetic above, the source code's bytes as the
 * table index.  Proven equal by tests/fast/test_sr_convert.py. */
unsigned sfp8f_run_conv_sr(const sfp8f_sr8 *t, int op, const sfp8_format *src, const sfp8_format *dst,
                           const sfp8_env *env, uint64_t seed, uint64_t stream, uint64_t index0, const char *a,
                           ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    /* b: never read (a, stride 0, keeps the loops' pointer steps defined) */
    const sr_call c = {op, dst, src, env, sr_keys_of(env, seed, stream), index0, a, a, o, sa, 0, so, n, flout};
    return run_arith8_sr(t, &c);
}

/* ---- conversions into formats of 9..16 bits and unary operations of them
 *      under stochastic rounding (fast.h, sfp8f_srw): one entry per source
 *      code, the core's results for the lowest and the highest random word and
 *      ts found by search_ts; the element is ra iff (R mod 2^N) > 2^N - 1 -
 *      (ts >> (32 - N)).  Entries the rule does not state (a non-finite
 *      neighbour, the tininess-after window below 2^emin, ra not within one
 *      code of rz, a failed check) take the core.  DERIVED from core.c
 *      round_pack through the core itself; proven equal by
 *      tests/fast/test_sr_convert.py. ---- */
#define SRW_CORE ((uint64_t)SRW_FCORE << 50 | (uint64_t)SRW_FCORE << 57)

/* the packed entry (fast.h): ra - rz in {-1, 0, 1} (else the core) */
static uint64_t srw_entry(uint32_t ts, uint32_t r0, unsigned f0, uint32_t r1, unsigned f1)
{
    const uint32_t d = (r1 - r0 + 1) & 0xffff;
    if (d > 2 || ((f0 | f1) & ~0x3fu)) return SRW_CORE;
    return ts | (uint64_t)r0 << 32 | (uint64_t)d << 48 | (uint64_t)f0 << 50 | (uint64_t)f1 << 57;
}

static void *build_srw(const sfp8f_key *k, size_t *bytes)
{
    const sfp8_format *f = k->kind == T_SRWC ? &k->b : &k->a; /* the results' format */
    const uint32_t nsrc = (uint32_t)1 << k->a.bits;
    sfp8_env env;
    double minnorm;
    uint8_t fl = 0;
    sfp8f_srw *t = malloc(sizeof *t);
    if (!t) return NULL;
    sfp8f_key_env(k, &env); /* stochastic, sr_bits 32 */
    {
        uint64_t b = sfp8_convert(f, &sfp8_binary64, (uint32_t)1 << f->man_bits, &sfp8f_free_env, &fl);
        memcpy(&minnorm, &b, 8);
    }
    for (uint32_t p = 0; p < 65536; p++) {
        uint8_t f0 = 0, f1 = 0;
        uint32_t r0, r1, ts;
        t->e[p] = SRW_CORE;
        if (p >= nsrc) continue;
        r0 = core_sr(k, &env, p >> 8, p & 0xff, 0, &f0);
        r1 = core_sr(k, &env, p >> 8, p & 0xff, 0xffffffffu, &f1);
        if (r0 == r1 && f0 == f1) {
            t->e[p] = srw_entry(0, r0, f0, r1, f1); /* the same for every R */
        } else if (r0 != r1 && sfp8_classify(f, r0) < SFP8_CLASS_INF && sfp8_classify(f, r1) < SFP8_CLASS_INF) {
            uint64_t b = sfp8_convert(f, &sfp8_binary64, r1, &sfp8f_free_env, &fl);
            double v1;
            memcpy(&v1, &b, 8);
            if (!env.tininess_before && fabs(v1) == minnorm) continue; /* flags of the unbounded grid */
            if (search_ts(k, &env, p, r0, f0, r1, f1, &ts)) t->e[p] = srw_entry(ts, r0, f0, r1, f1);
        }
    }
    *bytes = sizeof *t;
    return t;
}

static int srw_format_ok(const sfp8_format *f)
{
    return f->bits > 8 && f->bits <= 16 && f->subnormals != SFP8_SUBNORMALS_TESLA;
}

/* a table of up to 65536 entries, about 34 core calls each: measured (AMD
   EPYC, AVX-512) 9 ms (bfloat16 -> float16) to 134 ms (float16 tanh), the
   time of 0.45M..1.5M elements through the core (19..90 ns each) while the
   table's run takes 0.7 ns (AVX-512) .. 7.5 ns (portable): built for calls of
   1.5M+ elements (sfp8f_cached: n >= SRW_COST / 16), which repay it in that
   one call (or for repeated calls, the table staying cached) */
enum { SRW_COST = 24 << 20 };

const sfp8f_srw *sfp8f_stochastic_wide(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                       ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || src->bits > 16 || !srw_format_ok(dst))
        return NULL;
    return sfp8f_cached(T_SRWC, 0, src, dst, env, build_srw, n, SRW_COST);
}

const sfp8f_srw *sfp8f_stochastic_wide_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || !srw_format_ok(f) ||
        sfp8x_ops[op].kind != K_UNARY)
        return NULL;
    return sfp8f_cached(T_SRWU, op, f, NULL, env, build_srw, n, SRW_COST);
}

/* the core's code and flags of source code c with the random word R (op -1: the conversion) */
static inline uint32_t srw_core(int op, const sfp8_format *src, const sfp8_format *dst, sfp8_env *e, uint32_t c,
                                uint32_t R, uint8_t *fl)
{
    *fl = 0;
    e->random = R;
    return op < 0 ? sfp8_convert(src, dst, c, e, fl) : sfp8x_apply(op, dst, c, 0, 0, e, fl);
}

/* see fast.h; the SIMD kernels (fast_simd.c, sfp8s_wide_sr_avx512 / _avx2) take
 * blocks of SR_BLK contiguous codes when the output is apart from the input
 * (fast_impl.h, sfp8f_apart), their lanes for the core finished here from the
 * source codes (in place: the codes through a buffer until then); the rest,
 * and every other layout, the loop element by element in order */
unsigned sfp8f_run_wide_sr(const sfp8f_srw *t, int op, const sfp8_format *src, const sfp8_format *dst,
                           const sfp8_env *env, uint64_t seed, uint64_t stream, uint64_t index0, const char *a,
                           ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    const sr_keys k = sr_keys_of(env, seed, stream);
    const int isz = src->bits <= 8 ? 1 : 2, level = sfp8f_simd_level(), blk = level >= 2 ? 16 : 8;
    const uint32_t smask = sfp8_code_mask(src);
    sfp8_env e = *env;
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (level >= 1 && sa == isz && so == 2 && n >= blk && sfp8f_apart(o, 2, 2, a, sa, isz, n)) {
        sfp8s_srw p = {t->e, k.hs, k.base, 0, k.N, isz, smask};
        uint16_t cb[SR_BLK];
        uint8_t fb[SR_BLK];
        const int direct = o != a;
        for (; i + blk <= n; i += SR_BLK) {
            const ptrdiff_t m = n - i < SR_BLK ? (n - i) & ~(ptrdiff_t)(blk - 1) : SR_BLK;
            const char *x = a + i * isz;
            char *oc = direct ? o + 2 * i : (char *)cb;
            uint8_t *of = flout ? flout + i : fb;
            unsigned g;
            p.index0 = index0 + (uint64_t)i;
            g = level >= 2 ? sfp8s_wide_sr_avx512(&p, x, oc, of, m) : sfp8s_wide_sr_avx2(&p, x, oc, of, m);
            if (g & 0x80) { /* lanes for the core */
                g = 0;
                for (ptrdiff_t j = 0; j < m; j++) {
                    if (of[j] & 0x80)
                        sfp8f_st(oc + 2 * j,
                                 srw_core(op, src, dst, &e, (uint32_t)sfp8f_ld(x + j * isz, isz) & smask,
                                          sfp8r_bits(k.hs, k.base, p.index0 + (uint64_t)j), of + j),
                                 2);
                    g |= of[j];
                }
            }
            acc |= g;
            if (!direct) memcpy(o + 2 * i, cb, (size_t)(2 * m));
            if (m < SR_BLK) {
                i += m;
                break;
            }
        }
        a += i * sa;
        o += i * so;
    }
    for (; i < n; i++, a += sa, o += so) { /* element i read before output i is written */
        const uint32_t c = (uint32_t)sfp8f_ld(a, isz) & smask, R = sfp8r_bits(k.hs, k.base, index0 + (uint64_t)i);
        const uint64_t ent = t->e[c];
        const unsigned up = (R & k.Rmask) > k.Rmask - ((uint32_t)ent >> (32 - k.N));
        const uint32_t hi = (uint32_t)(ent >> 32); /* rz | d << 16 | rz flags << 18 | ra flags << 25 */
        uint8_t fl = (uint8_t)((hi >> (up ? 25 : 18)) & 0x7f);
        uint32_t code = (hi + (up ? ((hi >> 16) & 3) - 1 : 0)) & 0xffff;
        if (fl & SRW_FCORE) code = srw_core(op, src, dst, &e, c, R, &fl);
        sfp8f_st(o, code, 2);
        acc |= fl;
        if (flout) flout[i] = fl;
    }
    return acc;
}

/* ---- fma of 8- and 16-bit formats under stochastic rounding (fast.h,
 *      sfp8f_stochastic_fma) ----
 *
 * DERIVED from core.c round_pack (its stochastic branch) as sr16_one: x*y is
 * exact in binary64 (at most 2 x 21 significant bits), x*y + z rounded to odd
 * (fast.h, sfp8f_odd_sum) has the exact result's exponent, its first 51
 * fraction bits and a non-zero rest iff the exact one's is: with M + N <= 51
 * the code K, t = floor(fraction * 2^N) and inexact are the exact result's,
 * and sr16_round applies the core's rule.  Zero, tiny or overflowing results
 * and NaN or infinite operands take the core.  Proven equal by
 * tests/fast/test_sr_fma.py. */
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
    fl = sr16_round(t, sfp8f_odd_sum(a * b, d, &s), (uint8_t)((bx | by | bz) & 0x7f), Rn, Rmask, N, &c16);
    *code = c16;
    return fl;
}

const sfp8f_sr16 *sfp8f_stochastic_fma(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    const int N = env->sr_bits >= 1 && env->sr_bits <= 32 ? env->sr_bits : 32;
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || f->bits > 16 || f->exp_bits > 8 ||
        f->bias < -100 || f->bias > 300 || f->man_bits + N > 51)
        return NULL;
    return sfp8f_cached(T_SR16, 0, f, NULL, env, build_sr16, n, f->bits <= 8 ? 256 : 65536);
}

/* The AVX-512 kernel (fast_simd.c, sfp8s_fma_sr_avx512) takes contiguous
 * operands apart from the output (fast_impl.h, sfp8f_apart) in blocks of
 * SR_BLK; otherwise, and below AVX-512, the loop, element by element in order */
unsigned sfp8f_run_fma_sr(const sfp8f_sr16 *t, const sfp8_format *f, const sfp8_env *env, uint64_t seed,
                          uint64_t stream, uint64_t index0, const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb,
                          const char *z, ptrdiff_t sz, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    const int isz = f->bits <= 8 ? 1 : 2;
    const sr_call c = {X_FMA, f, NULL, env, sr_keys_of(env, seed, stream), index0, a, b, o, sa, sb, so, n, flout, z};
    unsigned acc = 0;
    ptrdiff_t i = 0;
    sfp8_env e = *env;
    if (sfp8f_simd_level() >= 2 && sa == isz && sb == isz && sz == isz && so == isz && o != a && o != b && o != z &&
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
        ne.rounding = SFP8_ROUND_NEAREST_EVEN; /* the arithmetic decoding of round_f64.c */
        tiny = f->subnormals == SFP8_SUBNORMALS_IEEE && sfp8f_rounder(f, &ne, &rr) ? 2 - (env->tininess_before != 0) : 0;
        d16 = isz == 2 && n >= 16 ? sfp8f_arith16(f, &ne, n) : NULL;
        if (d16) sa16 = sfp8f_a16_params(d16, f);
        for (; i + 8 <= n; i += SR_BLK) {
            const ptrdiff_t m = n - i < SR_BLK ? (n - i) & ~(ptrdiff_t)7 : SR_BLK;
            uint8_t *of = flout ? flout + i : fl;
            const sfp8s_srf p = {{t->vf, t->mask, c.k.hs, c.k.base, index0 + (uint64_t)i, c.k.N, 5, t->r.M,
                                  t->r.emin + 1023, t->r.maxmag, t->r.signbit, d16 ? &sa16 : NULL},
                                 t->dec8, t->sshift, t->magmask, t->off, t->subfl, t->sub,
                                 tiny, ldexp(1.0, t->r.M - t->r.emin)};
            unsigned g = sfp8s_fma_sr_avx512(&p, isz, a + isz * i, b + isz * i, z + isz * i, o + isz * i, of, m);
            if (g & 0x80) g = finish_core(&c, i, a + isz * i, b + isz * i, o + isz * i, isz, of, m);
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
