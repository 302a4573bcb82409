/* sr_table8: the 8-bit stochastic families by per-entry tables: sr_arith8
 * (add / subtract / multiply / divide of 8-bit formats, one entry per operand
 * pair), sr_unary8 (unary operations of 8-bit formats, one entry per code) and
 * sr_convert8 (conversions from formats of <= 16 bits into 8-bit formats, one
 * entry per source code): three rows of families.def, one table layout and one
 * run.
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
 * sum, a failed check) has 0x80 in both flag bytes and takes the core.
 *
 * DERIVED from core.c round_pack (its stochastic branch), through the core
 * itself: every entry is two core results and a threshold checked against the
 * core.  Proven equal by tests/harness/test_harness.py::test_entry [sr_arith8, sr_unary8, sr_convert8],
 * tests/harness/test_harness.py::test_entry [sr_arith8, sr_unary8, sr_convert8] (conversions and unary operations), and under
 * every calling convention by tests/harness/test_harness.py::test_entry [sr_arith8, sr_unary8, sr_convert8].
 *
 * Kernels: portable C (element by element in order: any overlap), AVX2 (eight
 * lanes, the order L of simd.h) and AVX-512 (sixteen lanes) on the compact
 * table q, in blocks of SR8_BLK when the output is apart from the inputs
 * (strided operands through buffers); lanes they cannot decide go to sr8_one,
 * then perhaps the core. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "from_float8.h"
#include "ops.h"
#include "simd.h"
#include "sr.h"

typedef struct sfp8f_sr8 {
    uint64_t e[65536]; /* ts | rz << 32 | rz flags << 40 | ra << 48 | ra flags << 56; flags 0x80: the core,
                          0x40: ra's flags depend on tu (sr_table8.c) */
    uint32_t tu[65536];
    uint8_t nf[65536];
    uint32_t q[65536];  /* the SIMD kernel's compact table (sr8_compact) */
    uint32_t pal[16];   /* its flag palette: rz flags << 8 | ra flags << 24 */
} sfp8f_sr8;

/* the SIMD kernels' parameters: random bits of element i as sfp8r_bits(seed_key,
   stream_key, index0 + i), N of them used */
typedef struct sfp8s_sr8 {
    const uint32_t *q, *pal; /* sfp8f_sr8 */
    uint64_t seed_key, stream_key, index0;
    int N;
} sfp8s_sr8;

#define SR8_CORE ((0x80ULL << 40) | (0x80ULL << 56))

static uint64_t sr8_entry(uint32_t ts, uint32_t rz, unsigned rzfl, uint32_t ra, unsigned rafl)
{
    return ts | (uint64_t)(rz & 0xff) << 32 | (uint64_t)rzfl << 40 | (uint64_t)(ra & 0xff) << 48 |
           (uint64_t)rafl << 56;
}

static void entry_by_search(sfp8f_sr8 *t, const sfp8f_key *k, sfp8_env *env, uint32_t p, uint32_t r0, unsigned f0,
                            uint32_t r1, unsigned f1)
{
    uint32_t ts;
    if (!sfp8f_sr_search_ts(k, env, p, r0, f0, r1, f1, &ts)) return;
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

/* the values of the results' format's codes, and its unbounded grid below 2^emin */
typedef struct {
    const sfp8_format *f;
    double v[256], minnorm, base_u, ulp_u;
    int fin[256];
} sr8_vals;

static void sr8_vals_init(sr8_vals *V, const sfp8_format *f)
{
    V->f = f;
    V->minnorm = INFINITY;
    for (uint32_t c = 0; c < 256; c++) {
        uint8_t fl = 0;
        uint64_t b = sfp8_convert(f, &sfp8_binary64, c, &sfp8f_free_env, &fl);
        int cls = sfp8_classify(f, c);
        memcpy(&V->v[c], &b, 8);
        V->fin[c] = cls < SFP8_CLASS_INF;
        if (cls == SFP8_CLASS_NORMAL && V->v[c] > 0 && V->v[c] < V->minnorm) V->minnorm = V->v[c];
    }
    V->ulp_u = ldexp(V->minnorm, -f->man_bits - 1); /* the unbounded grid's ulp below 2^emin */
    V->base_u = V->minnorm - V->ulp_u;
}

/* The entry of pair p = x << 8 | y of an add / subtract / multiply / divide table:
 * finite operands whose core results at the lowest and the highest random word,
 * (r0, f0) and (r1, f1), differ and are finite; the entry stays with the core
 * unless the rule states it and the core confirms it */
static void arith_entry(sfp8f_sr8 *t, const sfp8f_key *k, sfp8_env *env, const sr8_vals *V, uint32_t x, uint32_t y,
                        uint32_t r0, uint8_t f0, uint32_t r1, uint8_t f1)
{
    const uint32_t p = x << 8 | y;
    double a = V->v[x], b = k->op == X_SUB ? -V->v[y] : V->v[y], d, err = 0, lo, hi, u;
    int ex;
    if (k->op == X_DIV) {
        /* the quotient is not exact in binary64: ts from the core itself, the
           least R that rounds away (the rule t + R >= 2^32 is monotone in R),
           checked below like every entry; a quotient near 2^emin (the
           unbounded grid's tininess threshold) takes the core */
        lo = fabs(V->v[r0]);
        hi = fabs(V->v[r1]);
        d = fabs(a / b);
        if (frexp(hi - lo, &ex) != 0.5 || !(lo < d && d < hi) ||
            (!env->tininess_before && d >= V->base_u * (1 - 0x1p-40) && d <= V->minnorm * (1 + 0x1p-40)))
            return;
        entry_by_search(t, k, env, p, r0, f0, r1, f1);
        return;
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
    lo = fabs(V->v[r0]);
    hi = fabs(V->v[r1]);
    if (err != 0 || !(lo <= d && d < hi) || frexp(hi - lo, &ex) != 0.5) return;
    /* d - lo is exact (d's grid is finer than lo's); hi - lo = 2^(ex-1) */
    u = ldexp(d - lo, 33 - ex);
    if (u >= 1 && u < 4294967296.0) {
        uint32_t ts = (uint32_t)u, tu = ts;
        uint8_t fc = f1, fn = f1, g = 0;
        if (!env->tininess_before && d >= V->base_u && d < V->minnorm) {
            tu = (uint32_t)ldexp((d - V->base_u) / V->ulp_u, 32); /* d - base_u exact (Sterbenz) */
            if (tu > ts) return;
        }
        if (tu < ts) { /* ra without rounding up on the unbounded grid */
            env->random = 0u - ts;
            if (sfp8x_apply(k->op, V->f, x, y, 0, env, &g) != r1) return;
            fn = g;
            if (tu == 0) fc = fn; /* never rounds up there */
        }
        if (sfp8f_sr_core_gives(k, env, x, y, 0xffffffffu - ts, r0, f0) &&
            sfp8f_sr_core_gives(k, env, x, y, 0u - ts, r1, tu >= ts ? fc : fn) &&
            (tu >= ts || sfp8f_sr_core_gives(k, env, x, y, 0xffffffffu - tu, r1, fn)) &&
            (tu == 0 || sfp8f_sr_core_gives(k, env, x, y, 0u - tu, r1, fc))) {
            t->e[p] = sr8_entry(ts, r0, f0, r1, fc | (fc != fn ? 0x40u : 0u));
            t->tu[p] = tu;
            t->nf[p] = fn;
        }
    }
}

static void *build_sr8(const sfp8f_key *k, size_t *bytes)
{
    /* the results' format: the arithmetic's own, or a conversion's destination */
    const int conv = k->kind == T_SRCV || k->kind == T_SRUN; /* one entry per source code */
    const uint32_t nsrc = conv ? (uint32_t)1 << k->a.bits : 65536;
    sfp8_env env;
    sr8_vals V;
    sfp8f_sr8 *t = malloc(sizeof *t);
    if (!t) return NULL;
    sfp8f_key_env(k, &env); /* stochastic, sr_bits 32 */
    sr8_vals_init(&V, k->kind == T_SRCV ? &k->b : &k->a);
    for (uint32_t x = 0; x < 256; x++)
        for (uint32_t y = 0; y < 256; y++) {
            const uint32_t p = x << 8 | y;
            uint8_t f0 = 0, f1 = 0;
            uint32_t r0, r1;
            t->e[p] = SR8_CORE;
            t->tu[p] = 0;
            t->nf[p] = 0;
            if (p >= nsrc) continue;
            r0 = sfp8f_sr_core(k, &env, x, y, 0, &f0);
            r1 = sfp8f_sr_core(k, &env, x, y, 0xffffffffu, &f1);
            if (r0 == r1 && f0 == f1) {
                t->e[p] = sr8_entry(0, r0, f0, r1, f1); /* the same for every R */
            } else if (conv) {
                /* both neighbours finite; a result rounding up to 2^emin under tininess
                   after rounding (its flags depend on the unbounded grid) takes the core */
                if (r0 == r1 || r0 >= 256 || r1 >= 256 || !V.fin[r0] || !V.fin[r1] ||
                    (!env.tininess_before && fabs(V.v[r1]) == V.minnorm))
                    continue;
                entry_by_search(t, k, &env, p, r0, f0, r1, f1);
            } else if (V.fin[x] && V.fin[y] && r0 < 256 && r1 < 256 && V.fin[r0] && V.fin[r1]) {
                arith_entry(t, k, &env, &V, x, y, r0, f0, r1, f1);
            }
        }
    sr8_compact(t);
    *bytes = sizeof *t;
    return t;
}

/* code and flags of pair p for the random bits Rn = R & Rmask (flags 0x80: the core) */
static inline AINL uint8_t sr8_one(const sfp8f_sr8 *t, uint32_t p, uint32_t Rn, uint32_t Rmask, int N, uint8_t *code)
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

static const sfp8f_sr8 *stochastic8(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || f->bits > 8 || !sfp8f_from_float_ok(f) ||
        f->subnormals == SFP8_SUBNORMALS_TESLA || (op != X_ADD && op != X_SUB && op != X_MUL && op != X_DIV))
        return NULL;
    /* one table for every sr_bits and random word: the key holds saturation and tininess;
       about four core calls per entry to build (about 36 for divide: a binary search) */
    return sfp8f_cached(T_SR8, op, f, NULL, env, build_sr8, n, (op == X_DIV ? 36 : 4) * 65536);
}

static const sfp8f_sr8 *stochastic_conv(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                      ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || src->bits > 16 || dst->bits > 8 ||
        !sfp8f_from_float_ok(dst) || dst->subnormals == SFP8_SUBNORMALS_TESLA)
        return NULL;
    /* about 36 core calls per source code whose result depends on R (a binary search) */
    return sfp8f_cached(T_SRCV, 0, src, dst, env, build_sr8, n, 36 << src->bits);
}

static const sfp8f_sr8 *stochastic_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || f->bits > 8 || !sfp8f_from_float_ok(f) ||
        f->subnormals == SFP8_SUBNORMALS_TESLA || sfp8x_ops[op].kind != K_UNARY)
        return NULL;
    /* elementary functions cost the core far more than a conversion: a table of
       256 entries repays itself from about 1,000 elements */
    return sfp8f_cached(T_SRUN, op, f, NULL, env, build_sr8, n, 16 * 1024);
}

const void *sfp8f_sr_unary8_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (!X_IS_UNARY(c->op) || c->f->bits > 8) return NULL;
    return stochastic_unary(c->op, c->f, c->env, c->n);
}

const void *sfp8f_sr_arith8_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (sfp8x_arity(c->op) != 2 || c->f->bits > 8) return NULL;
    return stochastic8(c->op, c->f, c->env, c->n);
}

const void *sfp8f_sr_convert8_prepare(const sfp8f_call *c, void *scratch)
{
    (void)scratch;
    if (c->f->bits > 16) return NULL;
    return stochastic_conv(c->f, c->dst, c->env, c->n);
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
                    if (of[k] & 0x80) sfp8f_sr_finish_core(c, i + k, (const char *)x + k, (const char *)y + k, (char *)oc + k, 1,
                                                  of + k, 1);
                }
            memcpy(&w, of + j, (size_t)e);
        }
        orw |= w;
    }
    for (int b = 0; b < 64; b += 8) g |= (unsigned)(orw >> b) & 0xff;
    return g;
}

/* the SIMD kernel of one level on m contiguous operand pairs (sfp8s_sr8): codes
   out[i], flags fl[i] (0x80 for the lanes the caller finishes); the OR of fl[] */
typedef unsigned (*sr8_block)(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out, uint8_t *fl,
                              ptrdiff_t n);

/* The run of a call (sr_call: an operation of operand pairs, or the codes of
 * src converted (op -1) or op of them, split into the table index's bytes).  The SIMD kernels (AVX-512, AVX2) take blocks of up to SR8_BLK elements when the output is
 * apart from the inputs (fast_impl.h, sfp8f_apart; strided operands through
 * buffers); otherwise, and below AVX-512, the loop below, element by element
 * in order.  Proven equal by tests/harness/test_harness.py::test_entry [sr_arith8, sr_unary8, sr_convert8]
 * and under every calling convention by
 * tests/harness/test_harness.py::test_entry [sr_arith8, sr_unary8, sr_convert8]. */
/* The index bytes x[j], y[j] of the table for the m elements from element i:
 * contiguous 8-bit operands in place, else copied into xb, yb (a conversion:
 * the source codes of isz bytes, masked by smask, split into two bytes) */
static inline AINL void sr8_operands(const sr_call *c, ptrdiff_t i, ptrdiff_t m, int isz, uint32_t smask, uint8_t *xb,
                                     uint8_t *yb, const uint8_t **x, const uint8_t **y)
{
    const char *a = c->a, *b = c->b;
    *x = (const uint8_t *)a + i;
    *y = c->src ? NULL : (const uint8_t *)b + i;
    if (c->src && isz == 1 && c->sa == 1 && smask == 0xff) { /* 8-bit codes: the low byte in place */
        static const uint8_t zeros[SR8_BLK];
        *x = zeros;
        *y = (const uint8_t *)a + i;
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
        *x = xb;
        *y = yb;
    } else {
        if (c->sa != 1) {
            for (ptrdiff_t j = 0; j < m; j++) xb[j] = *(const uint8_t *)(a + (i + j) * c->sa);
            *x = xb;
        }
        if (c->sb != 1) {
            for (ptrdiff_t j = 0; j < m; j++) yb[j] = *(const uint8_t *)(b + (i + j) * c->sb);
            *y = yb;
        }
    }
}

/* element by element in order: any overlap (element i read before output i is written) */
static unsigned sr8_scalar(const sfp8f_sr8 *t, const sr_call *c, int isz, uint32_t smask)
{
    /* locals: the stores through o and flout cannot change them */
    const sr_keys k = c->k;
    const uint64_t index0 = c->index0;
    const ptrdiff_t n = c->n, sa = c->sa, sb = c->sb, so = c->so;
    uint8_t *const flout = c->flout;
    const char *a = c->a, *b = c->b;
    char *o = c->o;
    unsigned acc = 0;
    for (ptrdiff_t i = 0; i < n; i++, a += sa, b += sb, o += so) {
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
        if (fl & 0x80) sfp8f_sr_finish_core(c, i, (const char *)xy, (const char *)xy + 1, o, 1, &fl, 1);
        else *(uint8_t *)o = code;
        acc |= fl;
        if (flout) flout[i] = fl;
    }
    return acc;
}

static inline AINL unsigned run_arith8_sr(const sfp8f_sr8 *t, const sr_call *c, sr8_block block)
{
    /* a conversion: the source codes (isz bytes, masked to src's width) split
       into the table index's bytes x, y */
    const int isz = c->src ? (c->src->bits <= 8 ? 1 : 2) : 1;
    const uint32_t smask = c->src ? sfp8_code_mask(c->src) : 0;
    const char *a = c->a, *b = c->b;
    char *o = c->o;
    uint8_t xb[SR8_BLK], yb[SR8_BLK], code[SR8_BLK], fl[SR8_BLK];
    unsigned acc = 0;
    int direct;
    if (!block || !sfp8f_apart(o, c->so, 1, a, c->sa, isz, c->n) ||
        !(c->src || sfp8f_apart(o, c->so, 1, b, c->sb, 1, c->n)))
        return sr8_scalar(t, c, isz, smask);
    direct = c->so == 1 && o != a && (c->src || o != b);
    for (ptrdiff_t i = 0; i < c->n; i += SR8_BLK) {
        ptrdiff_t m = c->n - i < SR8_BLK ? c->n - i : SR8_BLK;
        const uint8_t *x, *y;
        /* in place (o == a or b): codes through a buffer, the core may read the operands after the kernel */
        uint8_t *oc = direct ? (uint8_t *)o + i : code, *of = c->flout ? c->flout + i : fl;
        const sfp8s_sr8 p = {t->q, t->pal, c->k.hs, c->k.base, c->index0 + (uint64_t)i, c->k.N};
        unsigned g;
        sr8_operands(c, i, m, isz, smask, xb, yb, &x, &y);
        g = block(&p, x, y, oc, of, m);
        if (g & 0x80) g = sr8_fix(t, c, i, x, y, oc, of, m); /* lanes for sr8_one, then perhaps the core */
        acc |= g;
        if (!direct)
            for (ptrdiff_t j = 0; j < m; j++) *(uint8_t *)(o + (i + j) * c->so) = code[j];
    }
    return acc;
}

/* one call: binary operations index the table by the operand pair; conversions and
   unary operations by the source code's bytes (b never read: a, stride 0, keeps
   the loops' pointer steps defined) */
static inline AINL unsigned table8_run(const sfp8f_sr8 *t, const sfp8f_call *c, sr8_block block)
{
    const int conv = c->kind == SFP8F_CONVERT, unary = !conv && X_IS_UNARY(c->op);
    const sr_call s = {conv ? -1 : c->op, conv ? c->dst : c->f, conv || unary ? c->f : NULL, c->env,
                       sr_keys_of(c->env, c->seed, c->stream), c->index0, c->a, conv || unary ? c->a : c->b, c->o,
                       c->sa, conv || unary ? 0 : c->sb, c->so, c->n, c->flout, NULL, NULL};
    return run_arith8_sr(t, &s, block);
}

unsigned sfp8f_sr_table8_run(const void *t, const sfp8f_call *c) { return table8_run(t, c, NULL); }

#if SFP8_X86

/* ---- AVX2: eight lanes (the order L of simd.h) ---- */

/* sr8_16 for eight lanes (order L) */
SFP8_AVX2 static inline AINL __m256i sr8_8(const uint32_t *qt, __m256i pal0, __m256i pal1, __m256i rmask, __m128i rsh,
                                      __m128i tsh, __m128i wl, int wide, __m256i R, const uint8_t *x,
                                      const uint8_t *y, uint8_t *out, uint8_t *fl)
{
    const __m256i lo12 = _mm256_set1_epi32(0xfff);
    const __m256i pq = _mm256_setr_epi8(2, 6, 10, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 6, 10, 14, -1,
                                        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i pf = _mm256_setr_epi8(-1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0,
                                        4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1);
    __m128i xy = _mm_shuffle_epi8(_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)y),
                                                    _mm_loadl_epi64((const __m128i *)x)), wl);
    __m256i q = _mm256_i32gather_epi32((const int *)(const void *)qt, _mm256_cvtepu16_epi32(xy), 4), Rt, lim, f, cls, pick;
    if (wide == 0) {
        Rt = _mm256_srli_epi32(R, 20);
        lim = _mm256_andnot_si256(q, lo12);
    } else if (wide == 1) {
        Rt = _mm256_srl_epi32(_mm256_and_si256(R, rmask), rsh);
        lim = _mm256_andnot_si256(q, lo12);
    } else {
        Rt = _mm256_and_si256(R, rmask);
        lim = _mm256_sub_epi32(rmask, _mm256_srl_epi32(_mm256_and_si256(q, lo12), tsh));
    }
    cls = _mm256_srli_epi32(q, 12); /* the permutes read bits 0..2; bit 3 (q's bit 15) picks the half */
    f = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(_mm256_permutevar8x32_epi32(pal0, cls)),
                                             _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(pal1, cls)),
                                             _mm256_castsi256_ps(_mm256_slli_epi32(q, 16))));
    pick = _mm256_cmpgt_epi32(Rt, lim); /* both below 2^31 */
    q = _mm256_blendv_epi8(q, _mm256_srli_epi32(q, 8), pick);
    f = _mm256_blendv_epi8(f, _mm256_srli_epi32(f, 16), pick);
    if (wide != 2) f = _mm256_or_si256(f, _mm256_and_si256(_mm256_cmpeq_epi32(Rt, lim), _mm256_set1_epi32(0x80)));
    {
        __m128i cf = unpackL(_mm256_or_si256(_mm256_shuffle_epi8(q, pq), _mm256_shuffle_epi8(f, pf)));
        store8(out, fl, cf);
    }
    return f;
}

SFP8_AVX2 static inline AINL unsigned sr8_run256(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out,
                                            uint8_t *fl, ptrdiff_t n, int wide)
{
    const int N = p->N;
    const __m256i rmask = _mm256_set1_epi32((int)(N == 32 ? 0xffffffffu : (1u << N) - 1));
    const __m128i rsh = _mm_cvtsi32_si128(N > 12 ? N - 12 : 0), tsh = _mm_cvtsi32_si128(N > 12 ? 0 : 12 - N);
    /* rz flags | ra flags << 16 of each class */
    const __m256i pal0 = _mm256_srli_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p->pal), 8);
    const __m256i pal1 = _mm256_srli_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(p->pal + 8)), 8);
    /* operand words 0..7 to the order L */
    const __m128i wl = _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15);
    const uint32_t *qt = p->q;
    rng4 g = rng4_init(p->seed_key, p->stream_key, p->index0);
    __m256i facc = _mm256_setzero_si256();
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        facc = _mm256_or_si256(facc, sr8_8(qt, pal0, pal1, rmask, rsh, tsh, wl, wide, rng8L(&g), x + i, y + i,
                                           out + i, fl + i));
    if (i < n) { /* the last lanes through copies */
        uint8_t xs[8] = {0}, ys[8] = {0}, os[8], fs[8];
        memcpy(xs, x + i, (size_t)(n - i));
        memcpy(ys, y + i, (size_t)(n - i));
        sr8_8(qt, pal0, pal1, rmask, rsh, tsh, wl, wide, rng8L(&g), xs, ys, os, fs);
        memcpy(out + i, os, (size_t)(n - i));
        memcpy(fl + i, fs, (size_t)(n - i));
        for (ptrdiff_t j = 0; j < n - i; j++) facc = _mm256_or_si256(facc, _mm256_set1_epi32(fs[j]));
    }
    return or_byte1(_mm256_slli_epi32(facc, 8));
}

SFP8_AVX2 static unsigned block_avx2(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out, uint8_t *fl,
                                   ptrdiff_t n)
{
    return p->N == 32 ? sr8_run256(p, x, y, out, fl, n, 0)
           : p->N > 12 ? sr8_run256(p, x, y, out, fl, n, 1)
                       : sr8_run256(p, x, y, out, fl, n, 2);
}

unsigned sfp8f_sr_table8_run_avx2(const void *t, const sfp8f_call *c) { return table8_run(t, c, block_avx2); }

/* ---- AVX-512: sixteen lanes ---- */

/* Sixteen lanes of sfp8s_arith8_sr_avx512 with the random bits R (all 32):
 * wide (a constant after inlining) 0 when N == 32, 1 when 12 < N < 32 (the
 * top 12 of the N bits against t12, ties to the caller), 2 when N <= 12 (all N
 * bits against the top N of t12, no ties).  idx: bytes 4j + 2 of q picked (the
 * code) then bytes 4j of the flags, one permute for both; returns the flags. */
SFP8_AVX512 static inline AINL __m128i sr8_16(const uint32_t *qt, __m512i pal, __m512i rmask,
                                                               __m128i rsh, __m128i tsh, __m512i idx, int wide,
                                                               __m512i R, const uint8_t *x, const uint8_t *y,
                                                               uint8_t *out, uint8_t *fl)
{
    const __m512i lo12 = _mm512_set1_epi32(0xfff);
    __m512i ix = _mm512_or_si512(_mm512_slli_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)x)), 8),
                                 _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)y)));
    __m512i q = _mm512_i32gather_epi32(ix, (const void *)qt, 4), Rt, lim, f, cf;
    if (wide == 0) {
        Rt = _mm512_srli_epi32(R, 20);
        lim = _mm512_andnot_si512(q, lo12); /* 2^12 - 1 - t12 */
    } else if (wide == 1) {
        Rt = _mm512_srl_epi32(_mm512_and_si512(R, rmask), rsh);
        lim = _mm512_andnot_si512(q, lo12);
    } else {
        Rt = _mm512_and_si512(R, rmask);
        lim = _mm512_sub_epi32(rmask, _mm512_srl_epi32(_mm512_and_si512(q, lo12), tsh));
    }
    /* f = rz flags | ra flags << 16 of the lane's class (the permute reads index bits 0..3) */
    f = _mm512_permutexvar_epi32(_mm512_srli_epi32(q, 12), pal);
    {
        __mmask16 pick = _mm512_cmpgt_epu32_mask(Rt, lim);
        q = _mm512_mask_srli_epi32(q, pick, q, 8);  /* ra to byte 2 */
        f = _mm512_mask_srli_epi32(f, pick, f, 16); /* ra flags to byte 0 */
        if (wide != 2) f = _mm512_mask_or_epi32(f, _mm512_cmpeq_epi32_mask(Rt, lim), f, _mm512_set1_epi32(0x80));
    }
    cf = _mm512_permutex2var_epi8(q, idx, f);
    _mm_storeu_si128((__m128i *)out, _mm512_castsi512_si128(cf));
    _mm_storeu_si128((__m128i *)fl, _mm512_extracti32x4_epi32(cf, 1));
    return _mm512_extracti32x4_epi32(cf, 1);
}

SFP8_AVX512 static inline AINL unsigned sr8_run(const sfp8s_sr8 *p, const uint8_t *x,
                                                                 const uint8_t *y, uint8_t *out, uint8_t *fl,
                                                                 ptrdiff_t n, int wide)
{
    const int N = p->N;
    const __m512i rmask = _mm512_set1_epi32((int)(N == 32 ? 0xffffffffu : (1u << N) - 1));
    const __m128i rsh = _mm_cvtsi32_si128(N > 12 ? N - 12 : 0), tsh = _mm_cvtsi32_si128(N > 12 ? 0 : 12 - N);
    const __m512i pal = _mm512_srli_epi32(_mm512_loadu_si512((const void *)p->pal), 8);
    const __m512i idx = _mm512_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        0, 0, 0, 0, 0, 0, 124, 120, 116, 112, 108, 104, 100, 96, 92, 88, 84, 80, 76,
                                        72, 68, 64, 62, 58, 54, 50, 46, 42, 38, 34, 30, 26, 22, 18, 14, 10, 6, 2);
    const uint32_t *qt = p->q;
    rng16 g = rng16_init(p->seed_key, p->stream_key, p->index0);
    __m128i facc = _mm_setzero_si128();
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16)
        facc = _mm_or_si128(facc, sr8_16(qt, pal, rmask, rsh, tsh, idx, wide, rng16_next(&g), x + i, y + i,
                                         out + i, fl + i));
    if (i < n) { /* the last lanes through copies */
        uint8_t xs[16] = {0}, ys[16] = {0}, os[16], fs[16];
        memcpy(xs, x + i, (size_t)(n - i));
        memcpy(ys, y + i, (size_t)(n - i));
        sr8_16(qt, pal, rmask, rsh, tsh, idx, wide, rng16_next(&g), xs, ys, os, fs);
        memcpy(out + i, os, (size_t)(n - i));
        memcpy(fl + i, fs, (size_t)(n - i));
        for (ptrdiff_t j = 0; j < n - i; j++) facc = _mm_or_si128(facc, _mm_set1_epi8((char)fs[j]));
    }
    return or16(facc);
}

SFP8_AVX512 static unsigned block_avx512(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out, uint8_t *fl,
                                    ptrdiff_t n)
{
    return p->N == 32 ? sr8_run(p, x, y, out, fl, n, 0)
           : p->N > 12 ? sr8_run(p, x, y, out, fl, n, 1)
                       : sr8_run(p, x, y, out, fl, n, 2);
}

unsigned sfp8f_sr_table8_run_avx512(const void *t, const sfp8f_call *c) { return table8_run(t, c, block_avx512); }
#endif
