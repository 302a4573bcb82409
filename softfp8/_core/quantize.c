/* The block quantiser (quantize.h): the blockq family's kernels through the
 * driver, the shared scales, and the driver's conversions for every rounding. */
#include "quantize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/blockq.h"
#include "fast/family.h"

/* elements per quotient buffer: long enough for the conversion families to build their
   tables in the default (length-gated) mode, as they do for the reference's one cast */
enum { CHUNK = 1 << 18 };

/* 1 done (*fl: what the kernel returns), 0 declined */
static int run_block_fl(sfp8f_blockq *b, unsigned *fl)
{
    sfp8f_call c;
    memset(&c, 0, sizeof c);
    c.block = b;
    c.n = b->rows * b->n;
    *fl = 0;
    return c.n <= 0 || sfp8d_run_block(&c, fl);
}

static int run_block(sfp8f_blockq *b)
{
    unsigned fl;
    return run_block_fl(b, &fl);
}

static sfp8f_blockq rows_of(const sfp8q_args *a, int phase)
{
    sfp8f_blockq b;
    memset(&b, 0, sizeof b);
    b.phase = phase;
    b.x = a->x;
    b.isize = a->isize;
    b.rows = a->rows;
    b.n = a->n;
    b.rs = a->rs;
    b.es = a->es;
    b.bs = a->bs;
    return b;
}

int sfp8q_amax(const sfp8q_args *a, double *tmax)
{
    sfp8f_blockq b = rows_of(a, SFP8F_BQ_AMAX);
    const ptrdiff_t nb = a->rows * ((a->n + a->bs - 1) / a->bs);
    double m = 0;
    b.amax = a->amax;
    b.special = a->special;
    if (!run_block(&b)) return 0;
    for (ptrdiff_t k = 0; k < nb; k++) m = a->amax[k] > m ? a->amax[k] : m;
    *tmax = m;
    return 1;
}

/* MX: the unclamped shared exponent of a block with finite amax > 0 (mx.py _shared_exp) */
static int64_t shared_exp(const sfp8q_args *a, double amax)
{
    int e, ee;
    uint64_t u;
    memcpy(&u, &amax, 8);
    /* a normal amax (> 0): floor(log2 amax) = its biased exponent - 1023, m = its significand / 2
       (m != 0.5: a nonzero fraction), as frexp gives them (the other rules below) */
    if ((u >> 52) >= 1 && (u >> 52) <= 2046 && a->rule != SFP8Q_RCEIL) {
        const int64_t fl = (int64_t)(u >> 52) - 1023;
        const uint64_t f = u & 0x000FFFFFFFFFFFFFull, us = f | 0x3FF0000000000000ull;
        double sig;
        memcpy(&sig, &us, 8);
        if (a->rule == SFP8Q_CEIL) return fl + (f != 0) - a->emax;
        if (a->rule == SFP8Q_EVEN) return fl + (sig >= 2.0 - 1.0 / (double)(2u << a->mbits)) - a->emax;
        return fl - a->emax;
    }
    const double m = frexp(amax, &e); /* amax = m 2^e, m in [0.5, 1) */
    const int64_t fl = (int64_t)e - 1, k0 = fl - ((void)frexp(a->elem_max, &ee), ee - 1);
    switch (a->rule) {
    case SFP8Q_CEIL: return fl + (m != 0.5) - a->emax;
    case SFP8Q_EVEN: return fl + (2.0 * m >= 2.0 - ldexp(1.0, -(a->mbits + 1))) - a->emax;
    case SFP8Q_RCEIL: return k0 + (ldexp(amax, (int)-k0) > a->elem_max);
    default: return fl - a->emax;
    }
}

/* per block divisor d (0: the block's elements are +0) and scale code; *flags |= the
   flags of the reference's exact cast of NVFP4's scale codes */
static int block_scales(const sfp8q_args *a, ptrdiff_t nb, double *d, unsigned *flags)
{
    if (!a->nvfp4) {
        for (ptrdiff_t k = 0; k < nb; k++) {
            int64_t s = a->amax[k] > 0 ? shared_exp(a, a->amax[k]) : -127;
            int nan;
            s = s < -127 ? -127 : s;
            nan = a->special[k] || s > 127;
            a->scales[k] = nan ? 0xFF : (uint8_t)(s + 127);
            if (nan) {
                d[k] = 0.0;
            } else { /* 2^s, s in [-127, 127]: a normal binary64 by its exponent field */
                const uint64_t ud = (uint64_t)(s + 1023) << 52;
                memcpy(&d[k], &ud, 8);
            }
        }
        return 1;
    }
    /* NVFP4: UE4M3 nearest (ties to even, saturating) to amax / (6 ts), as one row of
       quotients rounded to odd, then one conversion; the codes' values by a table */
    const double den = 6.0 * a->ts; /* exact: 3 x 24 bits */
    double *q = malloc((size_t)nb * sizeof *q), val[256];
    uint8_t codes[256], vfl[256];
    sfp8_env rne;
    sfp8_rng rng0;
    sfp8f_blockq b;
    memset(&rne, 0, sizeof rne);
    memset(&rng0, 0, sizeof rng0);
    memset(&b, 0, sizeof b);
    if (!q) return -1;
    rne.saturate = 1;
    rne.sr_bits = 32;
    b.phase = SFP8F_BQ_QUOT;
    b.x = (const char *)a->amax;
    b.isize = 8;
    b.rows = 1;
    b.n = nb;
    b.es = 8;
    b.bs = nb;
    b.d = &den;
    b.q = q;
    if (!run_block(&b)) {
        free(q);
        return 0;
    }
    sfp8d_convert(&sfp8_binary64, a->sfmt, &rne, &rng0, (const char *)q, 8, (char *)a->scales, 1, nb, NULL);
    free(q);
    for (int k = 0; k < 256; k++) codes[k] = (uint8_t)k;
    sfp8d_convert(a->sfmt, &sfp8_binary64, &rne, &rng0, (const char *)codes, 1, (char *)val, 8, 256, vfl);
    for (ptrdiff_t k = 0; k < nb; k++) {
        double s;
        if (a->special[k]) a->scales[k] = 0x7F; /* E4M3 NaN: the block is NaN */
        *flags |= vfl[a->scales[k]];            /* the reference's cast of the scales to binary64 */
        s = a->special[k] ? 0.0 : val[a->scales[k]];
        d[k] = s > 0 ? s * a->ts : 0.0; /* exact: 4 x 24 bits */
    }
    return 1;
}

/* MXINT8: per helper code (a->efmt of at most 9 bits) the element k = value * 64 clamped
   to +-127 (its byte) and the flags of the reference's exact cast of that code to
   binary64 (<< 8): the blockq family's INT8 phase reads it */
typedef struct int8_table {
    int32_t kt[512];
    int reg;          /* blockq.h kreg: the entries follow its formula (every one checked) */
    unsigned kfl[3];  /* then the flags of k = 0, 1..127, 128..255 */
} int8_table;

static void int8_build(const sfp8q_args *a, int8_table *t)
{
    const int n = 1 << a->efmt->bits;
    uint16_t codes[512];
    double v[512];
    uint8_t fl[512];
    sfp8_env exact;
    sfp8_rng rng0;
    memset(&exact, 0, sizeof exact);
    memset(&rng0, 0, sizeof rng0);
    exact.sr_bits = 32;
    for (int c = 0; c < 512; c++) codes[c] = (uint16_t)c;
    sfp8d_convert(a->efmt, &sfp8_binary64, &exact, &rng0, (const char *)codes, 2, (char *)v, 8, n, fl);
    /* the helper's values are multiples of 1/64: v * 64 is an integer, exactly */
    for (int c = 0; c < n; c++) {
        const double k = v[c] * 64.0;
        const int8_t k8 = (int8_t)(k > 127 ? 127 : k < -127 ? -127 : (int)k);
        t->kt[c] = (int32_t)((uint32_t)(uint8_t)k8 | (uint32_t)fl[c] << 8);
    }
    /* regular (blockq.h kreg): the kernel may compute the entries instead of reading them */
    t->reg = n == 512;
    for (int i = 0; i < 3; i++) t->kfl[i] = (uint32_t)t->kt[i == 0 ? 0 : i == 1 ? 1 : 128] >> 8;
    for (int c = 0; c < n && t->reg; c++) {
        const int k = c & 0xFF, v = k < 127 ? k : 127, cls = k == 0 ? 0 : k <= 127 ? 1 : 2;
        const uint32_t want = (uint32_t)(uint8_t)(int8_t)(c >> 8 ? -v : v) | t->kfl[cls] << 8;
        t->reg = (uint32_t)t->kt[c] == want;
    }
}

/* the elements of one chunk (its quotients: q binary64, or q32 binary32 when not NULL,
   cnt of them) into out, *flags |= their flags; MXINT8 through the helper format's codes h
   and the table i8 (the blockq family's INT8 phase); 1 done, 0 declined */
static int elements(const sfp8q_args *a, const sfp8_env *env, sfp8_rng *rng, const double *q, const float *q32,
                    uint16_t *h, const int8_table *i8, ptrdiff_t cnt, char *out, unsigned *flags)
{
    unsigned used;
    sfp8f_blockq b;
    const sfp8_format *src = q32 ? &sfp8_binary32 : &sfp8_binary64;
    const char *qs = q32 ? (const char *)q32 : (const char *)q;
    const ptrdiff_t qsz = q32 ? 4 : 8;
    if (!a->int8) {
        *flags |= sfp8d_convert(src, a->efmt, env, rng, qs, qsz, out, a->efmt->bits <= 8 ? 1 : 2, cnt, NULL);
        return 1;
    }
    *flags |= sfp8d_convert(src, a->efmt, env, rng, qs, qsz, (char *)h, 2, cnt, NULL);
    memset(&b, 0, sizeof b);
    b.phase = SFP8F_BQ_INT8;
    b.isize = 4;
    b.rows = 1;
    b.bs = 1;
    b.n = cnt;
    b.h = h;
    b.kt = i8->kt;
    b.hmask = (1u << a->efmt->bits) - 1;
    b.o8 = (int8_t *)(void *)out;
    b.kreg = i8->reg;
    memcpy(b.kfl, i8->kfl, sizeof b.kfl);
    if (!run_block_fl(&b, &used)) return 0;
    *flags |= used;
    return 1;
}

/* the element format's largest finite value and smallest subnormal, as binary64 */
static void value_range(const sfp8_format *f, double *vb, double *vs)
{
    sfp8_env env;
    uint8_t fl = 0;
    uint64_t big, small;
    memset(&env, 0, sizeof env);
    env.sr_bits = 32;
    big = sfp8_convert(f, &sfp8_binary64, sfp8_max_code(f), &env, &fl);
    small = sfp8_convert(f, &sfp8_binary64, sfp8_min_subnormal_code(f), &env, &fl);
    memcpy(vb, &big, 8);
    memcpy(vs, &small, 8);
}

/* the element formats binary32 quotients serve (blockq.c, QUOT32): every value and
   rounding boundary far inside binary32's normal range (the replacements +-2^-126,
   +-2^-120 and +-2^127 round as the quotients they stand for) */
static int f32_range_ok(const sfp8_format *f)
{
    double vb, vs;
    value_range(f, &vb, &vs);
    return vb < 0x1p100 && vs > 0x1p-80;
}

/* the element formats of NVFP4's binary32 lanes (blockq.c): at most 18 significant bits,
   every finite value and rounding boundary within [2^-38, 2^19] (E2M1: 0.25 .. 7) */
static int lanes_ok(const sfp8_format *f)
{
    double vb, vs;
    value_range(f, &vb, &vs);
    return f->man_bits + 1 <= 18 && vb < 0x1p18 && vs > 0x1p-37;
}

int sfp8q_finish(const sfp8q_args *a, const sfp8_env *env, sfp8_rng *rng, unsigned *flags)
{
    const ptrdiff_t nbr = (a->n + a->bs - 1) / a->bs, nb = a->rows * nbr;
    const int osize = a->int8 || a->efmt->bits <= 8 ? 1 : 2;
    /* a chunk: whole rows while they are short, else whole blocks of one row */
    const ptrdiff_t seg = a->n <= CHUNK ? a->n : (a->bs >= CHUNK ? a->bs : CHUNK - CHUNK % a->bs);
    const ptrdiff_t per = a->n <= CHUNK ? (a->n ? CHUNK / a->n : 1) : 1;
    /* binary32 sources: binary32 quotients (blockq.c QUOT32: exact for MX's power-of-two
       divisors; rounded to odd at 24 bits for NVFP4, enough for E2M1's deterministic modes,
       not for stochastic rounding's 32 further bits) */
    const int f32 = a->isize == 4 && f32_range_ok(a->efmt) &&
                    (!a->nvfp4 || (env->rounding != SFP8_ROUND_STOCHASTIC && a->efmt->man_bits + 3 <= 24));
    const int lanes = f32 && a->nvfp4 && lanes_ok(a->efmt);
    const size_t len = (size_t)(per * seg > 0 ? per * seg : 1);
    double *d = malloc((size_t)(nb ? nb : 1) * sizeof *d);
    double *q = !f32 ? malloc(len * sizeof *q) : NULL;
    int8_table *i8 = a->int8 ? malloc(sizeof *i8) : NULL;
    float *q32 = f32 ? malloc(len * sizeof *q32) : NULL;
    uint16_t *h = a->int8 ? malloc(len * sizeof *h) : NULL;
    int ok;
    *flags = 0;
    ok = d && (q || f32) && (q32 || !f32) && ((h && i8 && a->efmt->bits <= 9) || !a->int8)
             ? block_scales(a, nb, d, flags) : -1;
    if (ok == 1 && i8) int8_build(a, i8);
    for (ptrdiff_t r = 0; ok == 1 && r < a->rows; r += per) {
        const ptrdiff_t rows = a->rows - r < per ? a->rows - r : per;
        for (ptrdiff_t j = 0; ok == 1 && j < a->n; j += seg) {
            sfp8f_blockq b = rows_of(a, f32 ? SFP8F_BQ_QUOT32 : SFP8F_BQ_QUOT);
            const ptrdiff_t cnt = a->n - j < seg ? a->n - j : seg;
            b.x = a->x + r * a->rs + j * a->es;
            b.rows = rows;
            b.n = cnt;
            b.d = d + r * nbr + j / a->bs;
            b.q = q;
            b.q32 = q32;
            b.ts = f32 && a->nvfp4 && lanes ? a->ts : 0.0;
            if (!run_block(&b)) ok = 0;
            else ok = elements(a, env, rng, q, q32, h, i8, rows * cnt, a->out + (r * a->n + j) * osize, flags);
        }
    }
    free(d);
    free(q);
    free(q32);
    free(h);
    free(i8);
    return ok;
}
