/*
 * The exact model through a binary64 BLAS product (paths blas_bound and blas_ziv of
 * mm_paths.def): operands of formats whose values are binary64 numbers are decoded,
 * multiplied by the caller's dgemm (sfp8m_blas), and every output whose binary64 sum
 * is proven to be the exact dot product -- or whose rounding Ziv's test proves -- is
 * rounded once from it; every other output takes the exact kernels (mm_intdot.c for
 * 8-bit operands, else mm_ref.c).  docs/matrix-engine.md has the proofs; in short:
 *
 *  - every product of two operand values is an exact binary64 (at most 2 x 16
 *    significant bits, exponents kept inside binary64's normal range by the formats'
 *    ranges checked below);
 *  - blas_bound: formats of <= 8 bits whose values are v * 2^low with |v| < 2^vbits:
 *    if lg k + vbits_a + vbits_b <= 53, every partial sum in any order (blocking,
 *    FMA) is an integer multiple of 2^(low_a + low_b) below 2^53 of them, so exact;
 *  - blas_ziv, per output: S = min(row sum x column max, row max x column sum,
 *    product of the Euclidean norms) bounds sum |a b|; if S < 2^(qa + qb + 53)
 *    (2^qa, 2^qb the lowest bits present in the row / column) the sum is exact
 *    (the certificate); else |c - exact| <= gamma_{k+4} S + tiny (any order, FMA
 *    or not), and if both ends of that interval round to the same code r, whose
 *    value lies outside the interval and away from the underflow and overflow
 *    limits, r is the result with inexact as its only flag (Ziv's test);
 *  - the scale product s (per tensor; the scales constant along K) multiplies the
 *    exact sum: exactly for a power of two, else rounded to odd at 53 bits
 *    (mm_odd_scale, DERIVED), which keeps every decision of a rounding into at most 51
 *    significand bits; binary64 outputs with such a scale are rounded by the core
 *    from the exact 128-bit product;
 *  - a row of A or a column of B holding a NaN or an infinity (entered as 0) gives
 *    outputs decided by their special products alone (mm_exact_element, only_special);
 *    a zero sum takes the exact kernels (the sign of an exact zero).
 *
 * DERIVED from core.c round_pack: the sign of an exact zero output (zero_output:
 * -0 only rounding downward) besides the DERIVED pieces of mm_simd.c it calls; proof:
 * tests/harness/test_harness.py::test_entry (entries blas_bound, blas_ziv).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cast16.h"
#include "mm_impl.h"
#include "mm_simd.h"

#define MM_BLK 2048 /* outputs finished per block: the block's buffers stay in cache */

/* ---- rounding of binary64 values into the output format ---- */

enum { R_COPY64, R_F32, R_RND, R_FROMF, R_C16, R_CORE, R_EXACT };
typedef struct {
    int kind, osz, level;
    const sfp8_format *dst;
    const sfp8_env *env;
    sfp8f_rnd rnd;
    const uint16_t *fromf;
    sfp8f_c16 c16;
    gval s;                /* the scale product (mm_one without scales) */
    double sd;
    int s_one, s_pow2;
    /* Ziv's test: code -> value, the limits */
    int ziv;
    const sfp8f_conv *dec;
    mm_ieee D;
    double min_normal, max_finite;
} mm_rounder;

static uint64_t dbits(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}

static double bits_d(uint64_t b)
{
    double x;
    memcpy(&x, &b, 8);
    return x;
}

/* the binary64 values of a format's codes: exact for the formats of this file, built
 * round-to-nearest and WITHOUT saturation (a saturating environment would decode
 * infinities as the largest binary64: the bug that once left outputs unwritten) */
static const sfp8f_conv *dec_table(const sfp8_format *f, ptrdiff_t n)
{
    static const sfp8_env e = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
    return sfp8f_convert(f, &sfp8_binary64, &e, n);
}

/* the output's rounder (R_CORE when no fast rounding covers it) and the scale's use;
   0: the scale keeps results outside binary64's safe range (not applicable) */
static int rounder_init(mm_rounder *R, const mm_call *c, const gval *s, int64_t lowsum, int64_t topsum)
{
    const sfp8m_model *md = c->md;
    const sfp8_format *f = &md->fout;
    memset(R, 0, sizeof *R);
    R->dst = f;
    R->env = &md->envout;
    R->osz = c->szo;
    R->level = sfp8f_simd_level();
    R->s = *s;
    R->sd = gv_double(s);
    R->s_one = s->sig == 1 && s->exp == 0;
    R->s_pow2 = s->sig == 1;
    /* every sum (and every sum times s) a normal binary64, far from overflow */
    if (lowsum + s->exp < (R->s_pow2 ? -1000 : -960) || topsum + s->exp + 24 > 1000) return 0;
    if (f->bits == 64) {
        R->kind = R->s_pow2 ? R_COPY64 : R_EXACT;
    } else if (f->bits == 32) {
        if (!sfp8f_rounder(f, R->env, &R->rnd)) return 0;
        R->kind = R_F32;
        R->min_normal = 0x1p-126;
        R->max_finite = 0x1.fffffep127;
    } else {
        uint8_t f0 = 0;
        static const sfp8_env ex = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
        ptrdiff_t n = (ptrdiff_t)c->m * c->p;
        if (f->bits <= 8 && (R->fromf = sfp8f_from_float(f, R->env, n))) R->kind = R_FROMF;
        else if (f->bits > 8 && sfp8f_cast16(&sfp8_binary64, f, R->env, &R->c16)) R->kind = R_C16;
        else if (sfp8f_rounder(f, R->env, &R->rnd)) R->kind = R_RND;
        else R->kind = R_CORE;
        if (!(R->dec = dec_table(f, n))) return 0;
        mm_ieee_init(&R->D, f, R->dec);
        R->min_normal = bits_d(sfp8_convert(f, &sfp8_binary64, sfp8_min_normal_code(f), &ex, &f0));
        R->max_finite = bits_d(sfp8_convert(f, &sfp8_binary64, sfp8_max_code(f), &ex, &f0));
    }
    /* Ziv's test: exact scaling only; an output whose values are binary64 numbers (its
       limits and the accepted code's value are then exact; a binary64 output has none) */
    R->ziv = R->s_pow2 && f->bits != 64 && (f->bits == 32 || acc_binary64_exact(f));
    return 1;
}

/* v[0 .. n-1] (exact sums; scaled in place) rounded into n codes of R->osz bytes at o,
 * stride so; returns the OR of the flags */
static unsigned round_values(const mm_rounder *R, double *v, ptrdiff_t n, char *o, ptrdiff_t so)
{
    unsigned fl = 0;
    uint32_t t[256];
    if (R->kind == R_EXACT) { /* binary64 output, a scale of more than one bit: the core, exactly */
        for (ptrdiff_t q = 0; q < n; q++) {
            uint8_t f0 = 0;
            gval x;
            gv_from_double(v[q], &x);
            store_raw(o + q * so, 8, mm_round_u128(R->dst, R->env, x.neg, (unsigned __int128)x.sig * R->s.sig,
                                                   x.exp + R->s.exp, 0, &f0));
            fl |= f0;
        }
        return fl;
    }
    if (R->s_pow2 && !R->s_one)
        for (ptrdiff_t q = 0; q < n; q++) v[q] *= R->sd; /* exact: a normal result */
    else if (!R->s_pow2)
        mm_odd_scale(R->level, v, n, R->sd);
    switch (R->kind) {
    case R_COPY64:
        for (ptrdiff_t q = 0; q < n; q++) memcpy(o + q * so, &v[q], 8);
        return 0;
    case R_FROMF: return sfp8f_run_from_float(R->fromf, (const char *)v, 8, 8, o, so, n, NULL);
    case R_C16: return sfp8f_run_cast16(&R->c16, (const char *)v, 8, 8, o, so, n, NULL);
    case R_CORE:
        for (ptrdiff_t q = 0; q < n; q++) {
            uint8_t f0 = 0;
            mm_store(o + q * so, R->osz, sfp8_convert(&sfp8_binary64, R->dst, dbits(v[q]), R->env, &f0));
            fl |= f0;
        }
        return fl;
    default: /* R_F32, R_RND: uint32 codes, in place when they can be */
        if (so == 4 && R->osz == 4 && ((uintptr_t)o & 3) == 0)
            return R->kind == R_F32 ? mm_round_f32(R->level, &R->rnd, v, n, (uint32_t *)(void *)o)
                                    : sfp8f_round_doubles(&R->rnd, v, n, (uint32_t *)(void *)o);
        for (ptrdiff_t q0 = 0; q0 < n; q0 += 256) {
            ptrdiff_t w = n - q0 < 256 ? n - q0 : 256;
            fl |= R->kind == R_F32 ? mm_round_f32(R->level, &R->rnd, v + q0, w, t)
                                   : sfp8f_round_doubles(&R->rnd, v + q0, w, t);
            for (ptrdiff_t q = 0; q < w; q++) mm_store(o + (q0 + q) * so, R->osz, t[q]);
        }
        return fl;
    }
}

/* the value of output code r (Ziv's test) */
static double code_value(const mm_rounder *R, const char *r)
{
    uint32_t code = (uint32_t)load_raw(r, R->osz);
    if (R->osz == 4) {
        float w;
        memcpy(&w, &code, 4);
        return (double)w;
    }
    if (R->D.ok) return bits_d(mm_ieee_value(&R->D, code));
    return bits_d(R->dec->val[code & (uint32_t)(R->dec->n - 1)]);
}

/* ok[q] = 1 if Ziv's interval [lo[q], hi[q]] (scaled) is accepted: both ends round to
 * the same code r, whose value lies outside the interval, 2 min normal <= |r| <= max / 2 */
static void ziv_accept(const mm_rounder *R, const double *lo, const double *hi, const char *clo, const char *chi,
                       ptrdiff_t n, unsigned char *ok)
{
    double mn = 2 * R->min_normal, mx = 0.5 * R->max_finite;
    for (ptrdiff_t q = 0; q < n; q++) {
        double v = code_value(R, clo + q * R->osz);
        int same = load_raw(clo + q * R->osz, R->osz) == load_raw(chi + q * R->osz, R->osz);
        ok[q] = same & !(v >= lo[q] && v <= hi[q]) & (fabs(v) >= mn) & (fabs(v) <= mx);
    }
}

/* ---- one call ---- */

typedef struct {
    mm_call *c;
    mm_rounder R;
    const sfp8f_conv *deca, *decb;
    mm_ieee Da, Db;
    double *pa, *pb, *pc;        /* the decoded operands and their product */
    unsigned char *bad_row, *bad_col;
    mm_stats ra, rb;             /* blas_ziv: per row of A, per column of B */
    int bound, level, any_bad_col;
    double dmax;                 /* blas_ziv: the largest max|b_j| / lb_j over the columns */
    mm_int *it;                  /* the exact 8-bit kernel, built on first use (it_state 1) */
    int it_state;
    /* zero sums: per row of A / column of B, on first use: 1 a non-zero value, 2 all zero
       (0 not known yet), and the count of sign bits */
    unsigned char *zrow, *zcol;
    int64_t *nrow, *ncol;
    unsigned fl;
} mm_blas;

/* one range's buffers: states, compressed values and codes, Ziv's verdicts */
typedef struct {
    double *xs, *lo, *hi;
    char *cx, *clo, *chi;
    unsigned char *state, *zok;
} mm_buffers;

/* 8-bit formats: every finite value v * 2^low with |v| < 2^vbits; 0 if unknown */
static int value_bits(const sfp8f_conv *dec, int bits, int64_t *low)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    if (bits > 8) return 0;
    for (int c = 0; c < dec->n; c++) {
        uint64_t b = dec->val[c] & ~((uint64_t)1 << 63);
        int e = (int)(b >> 52);
        uint64_t sig = (b & (((uint64_t)1 << 52) - 1)) | (e ? (uint64_t)1 << 52 : 0);
        if (e == 0x7ff || sig == 0) continue;
        int64_t ex = (e ? e : 1) - 1075, l = ex + __builtin_ctzll(sig), h = ex + gv_bitlen(sig);
        lo = l < lo ? l : lo;
        hi = h > hi ? h : hi;
    }
    if (lo == INT64_MAX) return 0;
    *low = lo;
    return (int)(hi - lo);
}

/* the output (i, j) by the exact kernels (only_special: a NaN / infinity row or column) */
static void exact_output(mm_blas *b, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j, int only_special)
{
    mm_call *c = b->c;
    uint8_t f0 = 0;
    if (!only_special && b->it_state == 0) b->it_state = mm_int_init(c, &b->it) > 0 ? 1 : 2;
    if (!only_special && b->it_state == 1 && mm_int_block(b->it, c, O, om, op, i, j, 1, &b->fl)) return;
    mm_store(O + i * om + j * op, c->szo, mm_exact_element(c, i, j, only_special, &c->md->envout, &f0));
    b->fl |= f0;
}

/* row i of A (col 0) or column i of B (col 1): 2 if every value is zero, else 1; its sign
   bits counted into nrow / ncol */
static int line_zero(mm_blas *b, int col, int64_t i)
{
    mm_call *c = b->c;
    unsigned char *z = col ? b->zcol : b->zrow;
    if (!z[i]) {
        const double *v = col ? b->pb + i : b->pa + i * c->k;
        ptrdiff_t st = col ? (ptrdiff_t)c->p : 1;
        int64_t neg = 0;
        int any = 0;
        for (int64_t l = 0; l < c->k; l++) {
            any |= v[l * st] != 0;
            neg += signbit(v[l * st]) != 0;
        }
        z[i] = any ? 1 : 2;
        (col ? b->ncol : b->nrow)[i] = neg;
    }
    return z[i];
}

/* 1 if output (i, j)'s binary64 sum is certified exact (blas_bound, or blas_ziv's
   certificate, as mm_classify computes it) */
static int certified(const mm_blas *b, int64_t i, int64_t j)
{
    const mm_stats *ra = &b->ra, *rb = &b->rb;
    double s = ra->s0[i] * rb->s1[j], t = ra->s1[i] * rb->s0[j], q = ra->s2[i] * rb->s2[j];
    s = t < s ? t : s;
    s = q < s ? q : s;
    return b->bound || s * (1 + 0x1p-20) < ra->lb[i] * 0x1p53 * rb->lb[j];
}

/* an exact zero sum at (i, j) (cert: known exact -- else checked here, or the exact
 * kernels take it; a row of A or a column of B of zeros only makes every product a zero):
 * -0 if every product is -0, +0 if every one is +0, else +0 (-0 rounding downward) -- the
 * exact kernels' rule, and a cancellation has non-zero products of both signs.  The count
 * of products with differing operand signs is 0 only if the row's and the column's sign
 * counts r, q are equal, k only if q = k - r, and is known from them when one side's
 * signs are all alike; otherwise one pass over the products counts it. */
static void zero_output(mm_blas *b, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j, int cert)
{
    mm_call *c = b->c;
    int64_t k = c->k, r, q;
    uint8_t f0 = 0;
    int neg, down = c->md->envout.rounding == SFP8_ROUND_DOWNWARD;
    if (line_zero(b, 0, i) == 1 && line_zero(b, 1, j) == 1 && !cert && !certified(b, i, j)) {
        exact_output(b, O, om, op, i, j, 0);
        return;
    }
    line_zero(b, 1, j); /* both sign counts known */
    r = b->nrow[i], q = b->ncol[j];
    if (q != r && q != k - r) {
        neg = down;
    } else if (r == 0 || r == k || q == 0 || q == k) {
        neg = q != r;
    } else {
        int64_t cnt = 0;
        for (int64_t l = 0; l < k; l++)
            cnt += (signbit(b->pa[i * k + l]) != 0) ^ (signbit(b->pb[l * c->p + j]) != 0);
        neg = cnt == k ? 1 : cnt == 0 ? 0 : down;
    }
    mm_store(O + i * om + j * op, c->szo, sfp8_round_value(&c->md->fout, neg, 0, 0, 0, &c->md->envout, &f0));
    b->fl |= f0;
}

/* A and B decoded into pa (m x k) and pb (k x p), the special rows / columns marked,
   the statistics of blas_ziv */
static void decode_operands(mm_blas *b)
{
    mm_call *c = b->c;
    unsigned fl = 0;
    if (!b->bound)
        for (int64_t j = 0; j < c->p; j++) b->rb.s0[j] = b->rb.s1[j] = b->rb.s2[j] = 0, b->rb.lb[j] = INFINITY;
    for (int64_t i = 0; i < c->m; i++) { /* row i of A: one bad flag, one set of statistics */
        double *row = b->pa + i * c->k;
        mm_decode(b->level, &b->Da, b->deca, c->sza, c->A + i * c->am, c->ak, c->k, (uint64_t *)(void *)row,
                  &b->bad_row[i], 0, &fl);
        if (!b->bound) {
            double st[4];
            mm_stats_h(b->level, row, c->k, st);
            b->ra.s0[i] = st[0], b->ra.s1[i] = st[1], b->ra.s2[i] = sqrt(st[2]), b->ra.lb[i] = st[3];
        }
    }
    for (int64_t l = 0; l < c->k; l++) { /* row l of B: one bad flag per column */
        double *row = b->pb + l * c->p;
        mm_decode(b->level, &b->Db, b->decb, c->szb, c->B + l * c->bk, c->bp, c->p, (uint64_t *)(void *)row,
                  b->bad_col, 1, &fl);
        if (!b->bound) mm_stats_v(b->level, row, c->p, b->rb.s0, b->rb.s1, b->rb.s2, b->rb.lb);
    }
    if (!b->bound)
        for (int64_t j = 0; j < c->p; j++) {
            double d = b->rb.s1[j] / b->rb.lb[j]; /* exact: a power of two divides (0 for zeros) */
            b->rb.s2[j] = sqrt(b->rb.s2[j]);
            b->dmax = d > b->dmax ? d : b->dmax;
        }
    b->fl |= fl;
}

/* the outputs k0 .. k1 - 1 (flat index i * p + j) classified into state[] and the
   compressed values xs (certified) and lo / hi (Ziv intervals); returns nx, *nc */
static ptrdiff_t classify_block(mm_blas *b, int64_t k0, int64_t k1, unsigned char *state, double *xs, double *lo,
                                double *hi, ptrdiff_t *nc)
{
    mm_call *c = b->c;
    mm_class_row R;
    int64_t i = k0 / c->p, j = k0 % c->p;
    memset(&R, 0, sizeof R);
    R.rb = &b->rb, R.bad_col = b->bad_col, R.xs = xs, R.lo = lo, R.hi = hi, R.ziv = b->R.ziv;
    /* gamma_{k+4} with u = 2^-53, inflated for the rounding of the bounds themselves; an
       absolute term for underflow (none can occur: every partial sum is 0 or at least
       2^(low_a + low_b) >= 2^-1000), kept normal */
    R.gamma = (double)(c->k + 4) * 0x1p-53 / (1 - (double)(c->k + 4) * 0x1p-53) * (1 + 0x1p-20);
    R.tiny = (double)(c->k + 4) * 0x1p-1022;
    for (int64_t kk = k0; kk < k1;) { /* row i, columns j .. */
        int64_t j1 = c->p - j < k1 - kk ? c->p : j + (k1 - kk);
        if (b->bad_row[i]) {
            memset(state + (kk - k0), MM_SPECIAL, (size_t)(j1 - j));
        } else if (b->bound) {
            for (int64_t jj = j; jj < j1; jj++) {
                double v = b->pc[i * c->p + jj];
                int st = b->bad_col[jj] ? MM_SPECIAL : v == 0 ? MM_EXACT : MM_CERT;
                state[kk - k0 + jj - j] = (unsigned char)st;
                if (st == MM_CERT) xs[R.nx++] = v;
            }
        } else {
            R.s0 = b->ra.s0[i], R.s1 = b->ra.s1[i], R.s2 = b->ra.s2[i], R.low53 = b->ra.lb[i] * 0x1p53;
            R.c = b->pc + i * c->p;
            R.state = state + (kk - k0);
            mm_classify(b->level, &R, j, j1);
        }
        kk += j1 - j;
        j = 0, i++;
    }
    *nc = R.nc;
    return R.nx;
}

/* the outputs k0 .. k1 - 1: the certified values and Ziv's intervals rounded by one vector
   call each, every other output by the exact kernels; a range that is one row segment
   and wholly certified is rounded straight into the output */
static void finish_range(mm_blas *b, char *O, ptrdiff_t om, ptrdiff_t op, int64_t k0, int64_t k1,
                         mm_buffers *w)
{
    mm_call *c = b->c;
    int osz = b->R.osz;
    int64_t i = k0 / c->p, j = k0 % c->p;
    ptrdiff_t nc, nx, ix = 0, ic = 0;
    if (!b->any_bad_col && !b->bad_row[i] && j + (k1 - k0) <= c->p &&
        (b->bound || (double)c->k * b->ra.s1[i] * b->dmax * (1 + 0x1p-20) < b->ra.lb[i] * 0x1p53)) {
        /* every sum of the row segment exact -- by the formats' bound, or by the row's
           certificate k max|a| max_j (max|b_j| / lb_j) < lb_a 2^53, which bounds every
           output's S / (lb_a lb_j) (the ratios are exact, the product inflated for its
           rounding): rounded straight from the product (in place), then the zero sums
           (their signs) */
        double *row = b->pc + k0;
        b->fl |= round_values(&b->R, row, k1 - k0, O + i * om + j * op, op);
        for (int64_t q = 0; q < k1 - k0; q++)
            if (row[q] == 0) zero_output(b, O, om, op, i, j + q, 1);
        return;
    }
    nx = classify_block(b, k0, k1, w->state, w->xs, w->lo, w->hi, &nc);
    if (nx == k1 - k0 && j + nx <= c->p) {
        b->fl |= round_values(&b->R, w->xs, nx, O + i * om + j * op, op);
        return;
    }
    /* the certified sums rounded once (their flags are the results'), both ends of each
       Ziv interval (their flags are not) */
    b->fl |= round_values(&b->R, w->xs, nx, w->cx, osz);
    round_values(&b->R, w->lo, nc, w->clo, osz);
    round_values(&b->R, w->hi, nc, w->chi, osz);
    ziv_accept(&b->R, w->lo, w->hi, w->clo, w->chi, nc, w->zok);
    for (int64_t kk = k0; kk < k1; kk++) {
        int s = w->state[kk - k0];
        char *o = O + i * om + j * op;
        if (s == MM_CERT) {
            mm_store(o, osz, load_raw(w->cx + osz * ix++, osz));
        } else if (s == MM_ZIV && w->zok[ic]) {
            mm_store(o, osz, load_raw(w->clo + osz * ic++, osz));
            b->fl |= SFP8_FLAG_INEXACT;
        } else {
            ic += s == MM_ZIV;
            if (s == MM_EXACT && b->pc[kk] == 0) zero_output(b, O, om, op, i, j, 0);
            else exact_output(b, O, om, op, i, j, s == MM_SPECIAL);
        }
        if (++j == c->p) j = 0, i++;
    }
}

/* every output: row segments of up to MM_BLK outputs (rows of 64 or more), else flat
   blocks of MM_BLK outputs across rows; 0: no memory */
static int finish_blocks(mm_blas *b, char *O, ptrdiff_t om, ptrdiff_t op)
{
    mm_call *c = b->c;
    int64_t mp = c->m * c->p, bl = mp < MM_BLK ? mp : MM_BLK;
    int osz = b->R.osz;
    mm_buffers w;
    w.xs = malloc((size_t)3 * (bl + MM_PAD) * sizeof(double));
    w.cx = malloc((size_t)bl * (3 * (size_t)osz + 2));
    if (!w.xs || !w.cx) {
        free(w.xs);
        free(w.cx);
        return 0;
    }
    w.lo = w.xs + bl + MM_PAD, w.hi = w.lo + bl + MM_PAD;
    w.clo = w.cx + bl * osz, w.chi = w.clo + bl * osz;
    w.state = (unsigned char *)(w.chi + bl * osz), w.zok = w.state + bl;
    if (c->p >= 64) {
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j0 = 0; j0 < c->p; j0 += MM_BLK)
                finish_range(b, O, om, op, i * c->p + j0, i * c->p + (c->p - j0 < MM_BLK ? c->p : j0 + MM_BLK), &w);
    } else {
        for (int64_t k0 = 0; k0 < mp; k0 += MM_BLK)
            finish_range(b, O, om, op, k0, mp - k0 < MM_BLK ? mp : k0 + MM_BLK, &w);
    }
    free(w.xs);
    free(w.cx);
    return 1;
}

/* 1 if the scales of op are constant over the operand (rows x cols) */
static int per_tensor(const sfp8m_scale *s, int64_t rows, int64_t cols)
{
    return !s->s || (s->br >= rows && s->bc >= cols);
}

/* the formats, the scale and the output's rounder; 0: not applicable */
static int blas_setup(mm_blas *b, mm_call *c, int fast)
{
    const sfp8m_model *md = c->md;
    int64_t lowsum = fmt_low(&md->fa) + fmt_low(&md->fb), topsum = fmt_top(&md->fa) + fmt_top(&md->fb) + 31;
    ptrdiff_t n = (ptrdiff_t)(c->m * c->k + c->k * c->p);
    int64_t la = 0, lb = 0;
    int va, vb, lg = 0;
    uint8_t sfl = 0;
    gval s;
    if (!fast || !md->exact || md->kblock || md->envout.rounding == SFP8_ROUND_STOCHASTIC || !c->m || !c->k ||
        !c->p || c->k >= ((int64_t)1 << 30) || !per_tensor(&md->sa, c->m, c->k) || !per_tensor(&md->sb, c->k, c->p) ||
        !acc_binary64_exact(&md->fa) || !acc_binary64_exact(&md->fb) || lowsum < -1000 || topsum > 960)
        return 0;
    mm_scale_at(md, 0, 0, 0, &s, &sfl);
    /* a finite positive scale product (zero sums keep the products' signs) */
    if (s.cls != GV_FIN || s.neg || !rounder_init(&b->R, c, &s, lowsum, topsum)) return 0;
    if (!(b->deca = dec_table(&md->fa, n)) || !(b->decb = dec_table(&md->fb, n))) return 0;
    mm_ieee_init(&b->Da, &md->fa, b->deca);
    mm_ieee_init(&b->Db, &md->fb, b->decb);
    va = value_bits(b->deca, md->fa.bits, &la);
    vb = value_bits(b->decb, md->fb.bits, &lb);
    while (((int64_t)1 << lg) < c->k) lg++;
    b->bound = va && vb && lg + va + vb <= 53;
    /* blas_ziv's statistics (sums of squares, ratios, products of them) must stay normal
       and finite binary64 numbers for their 2^-20 allowance to hold */
    if (!b->bound && (2 * fmt_low(&md->fa) < -1000 || 2 * fmt_top(&md->fa) + 31 > 1000 ||
                      2 * fmt_low(&md->fb) < -1000 || 2 * fmt_top(&md->fb) + 31 > 1000))
        return 0;
    c->deca = b->deca, c->decb = b->decb; /* mm_exact_element finds the special products by them */
    b->c = c;
    b->level = sfp8f_simd_level();
    b->fl = sfl; /* the scale product's flags: every output computes it (k > 0) */
    return 1;
}

int mm_blas_run(mm_call *c, const sfp8m_blas *blas, char *O, ptrdiff_t om, ptrdiff_t op, int fast, unsigned *flout)
{
    mm_blas b;
    int64_t m = c->m, k = c->k, p = c->p;
    double *buf;
    int ret = 1;
    memset(&b, 0, sizeof b);
    if (!blas || !blas->dgemm || !blas_setup(&b, c, fast)) return 0;
    /* pa, pb, pc, the statistics (4 per row, 4 per column), the zero-sum counts; the flags
       and the zero-sum states */
    buf = malloc((size_t)(m * k + k * p + m * p + 5 * m + 5 * p) * sizeof(double) + (size_t)(2 * (m + p)));
    if (!buf) return 0; /* too large for a binary64 copy: the exact kernels */
    b.pa = buf, b.pb = b.pa + m * k, b.pc = b.pb + k * p;
    b.ra.s0 = b.pc + m * p, b.ra.s1 = b.ra.s0 + m, b.ra.s2 = b.ra.s1 + m, b.ra.lb = b.ra.s2 + m;
    b.rb.s0 = b.ra.lb + m, b.rb.s1 = b.rb.s0 + p, b.rb.s2 = b.rb.s1 + p, b.rb.lb = b.rb.s2 + p;
    b.nrow = (int64_t *)(void *)(b.rb.lb + p), b.ncol = b.nrow + m;
    b.bad_row = (unsigned char *)(b.ncol + p);
    b.bad_col = b.bad_row + m;
    b.zrow = b.bad_col + p, b.zcol = b.zrow + m;
    memset(b.bad_row, 0, (size_t)(2 * (m + p)));
    decode_operands(&b);
    for (int64_t j = 0; j < p; j++) b.any_bad_col |= b.bad_col[j];
    if (blas->dgemm(blas->ctx, m, k, p, b.pa, b.pb, b.pc) < 0) {
        ret = -2;
        goto done;
    }
    if (!finish_blocks(&b, O, om, op)) {
        ret = 0; /* no memory for the block buffers: the caller's exact kernels, from scratch */
        goto done;
    }
    mm_count(b.bound ? SFP8M_BLAS_BOUND : SFP8M_BLAS_ZIV, b.level);
    if (b.it_state == 1) mm_count(SFP8M_INT_DOT, 0);
    *flout |= b.fl;
done:
    mm_int_free(b.it);
    free(buf);
    return ret;
}
