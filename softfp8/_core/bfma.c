/*
 * Matrix-unit models, exact in integers (docs/matrix-units.md; reference model
 * tests/models/matrix_units_ref.py).
 *
 * The block-FMA model of tensor and matrix cores: products of a block aligned to the
 * largest exponent in a window of 23 + extra_bits fraction bits (magnitudes truncated
 * toward zero, optionally with a sticky bit), summed as integers, rounded once into the
 * output format (with p fraction bits); the result is the next block's addend.  Variants:
 * the addend after the products (two-term alignment with its own rounding), odd/even
 * grouping, pairwise trees of rounded additions.  And softfp8.Accumulation's orders with
 * an addend: sequential, pairwise (tree), Kahan-compensated, and the exact sum.
 *
 * Rounding: every rounding into a format is the core's, sfp8_round_value on an exact
 * value; a block result with fewer fraction bits than the output format is rounded by
 * the core into the format with p fraction bits and the output's exponent field (a
 * descriptor built here), whose values are values of the output format.  What this file
 * does itself is the model's alignment: truncating (or, for the two-term alignment,
 * rounding by alignment_rounding) aligned integers -- the hardware's datapath, not a
 * rounding into a format.  Exact sums are held in integers: __int128 for windowed
 * block sums, a wide fixed-point accumulator (wacc) otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "bfma.h"
#include "codes.h"

typedef unsigned __int128 u128;
typedef __int128 i128;

static const sfp8_env ENV_RNE = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};

static int bitlen(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }
static int bitlen128(u128 v)
{
    uint64_t hi = (uint64_t)(v >> 64);
    return hi ? 64 + bitlen(hi) : bitlen((uint64_t)v);
}

/* ---- decoded values ---- */

enum { MV_ZERO = SFP8U_ZERO, MV_FIN = SFP8U_FINITE, MV_INF = SFP8U_INF, MV_NAN = SFP8U_NAN };
typedef sfp8u_value mval;

void sfp8u_decode(const sfp8_format *f, uint64_t code, sfp8u_value *v)
{
    int c = sfp8_classify(f, code);
    uint64_t mask = f->bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << f->bits) - 1;
    uint64_t mag, ef, mf;
    memset(v, 0, sizeof *v);
    code &= mask;
    v->neg = (uint8_t)sfp8_signbit(f, code);
    v->sub = c == SFP8_CLASS_SUBNORMAL;
    if (c == SFP8_CLASS_QNAN || c == SFP8_CLASS_SNAN) {
        v->cls = MV_NAN;
        v->snan = c == SFP8_CLASS_SNAN;
        return;
    }
    if (c == SFP8_CLASS_INF) {
        v->cls = MV_INF;
        return;
    }
    if (c == SFP8_CLASS_ZERO || (v->sub && f->subnormals == SFP8_SUBNORMALS_FLUSH)) return;
    mag = f->is_signed ? code & (mask >> 1) : code;
    ef = mag >> f->man_bits;
    mf = mag & (((uint64_t)1 << f->man_bits) - 1);
    v->cls = MV_FIN;
    if (ef == 0 && f->subnormals != SFP8_SUBNORMALS_NOZERO) { /* subnormal */
        v->sig = mf;
        v->exp = (f->subnormals == SFP8_SUBNORMALS_TESLA ? 0 : 1) - (int64_t)f->bias - f->man_bits;
    } else {
        v->sig = ((uint64_t)1 << f->man_bits) | mf;
        v->exp = (int64_t)ef - f->bias - f->man_bits;
    }
}

static int64_t mv_log2(const mval *v) { return v->exp + bitlen(v->sig) - 1; } /* floor(log2 |v|) */

/* the code of an exact value of f (no flags: f holds it), of a zero, or of an infinity */
static uint64_t mv_code(const sfp8_format *f, const mval *v)
{
    uint8_t scratch = 0;
    switch (v->cls) {
    case MV_FIN: return sfp8_round_value(f, v->neg, v->sig, v->exp, 0, &ENV_RNE, &scratch);
    case MV_INF:
        return sfp8_convert(&sfp8_binary64, f, v->neg ? 0xfff0000000000000ULL : 0x7ff0000000000000ULL, &ENV_RNE,
                            &scratch);
    case MV_NAN: return sfp8_convert(&sfp8_binary64, f, 0x7ff8000000000000ULL, &ENV_RNE, &scratch);
    default: return sfp8_round_value(f, v->neg, 0, 0, 0, &ENV_RNE, &scratch);
    }
}

/* The magnitude mag * 2^exp (+ sticky: a non-zero fraction of 2^exp) rounded once into f
 * by the core.  mag != 0. */
static uint64_t round_mag(const sfp8_format *f, const sfp8_env *env, int neg, u128 mag, int64_t exp, int sticky,
                          uint8_t *fl)
{
    int bl = bitlen128(mag);
    if (bl > 64) {
        int r = bl - 64;
        sticky |= (mag & (((u128)1 << r) - 1)) != 0;
        mag >>= r;
        exp += r;
    } else if (sticky && bl < 64) { /* the core reads a sticky bit below a 57+ bit significand */
        mag <<= 64 - bl;
        exp -= 64 - bl;
    }
    return sfp8_round_value(f, neg, (uint64_t)mag, exp, sticky, env, fl);
}

/* ---- the wide accumulator: exact sums of terms sig * 2^exp, WLOW <= exp, top below 2^(WLOW + 64 (WN - 1)).
 * Positive and negative parts are kept apart (no borrows) and subtracted when read. ---- */

#define WN 38
#define WLOW (-1184)
typedef struct {
    uint64_t p[WN], n[WN];
    int lo, hi; /* limbs lo .. hi may be non-zero */
} wacc;

static void wa_clear(wacc *a)
{
    if (a->hi >= a->lo) {
        memset(a->p + a->lo, 0, (size_t)(a->hi - a->lo + 1) * 8);
        memset(a->n + a->lo, 0, (size_t)(a->hi - a->lo + 1) * 8);
    }
    a->lo = WN;
    a->hi = -1;
}

static void wa_add(wacc *a, int neg, uint64_t sig, int64_t exp)
{
    int64_t pos = exp - WLOW;
    int li = (int)(pos >> 6), sh = (int)(pos & 63);
    uint64_t *w = neg ? a->n : a->p;
    uint64_t part[2] = {sig << sh, sh ? sig >> (64 - sh) : 0}, carry = 0;
    int i = li;
    if (!sig) return;
    for (int j = 0; j < 2 || carry; j++, i++) {
        uint64_t add = (j < 2 ? part[j] : 0), old = w[i], s = old + add;
        uint64_t c1 = s < old;
        s += carry;
        carry = c1 | (s < carry);
        w[i] = s;
    }
    if (li < a->lo) a->lo = li;
    if (i - 1 > a->hi) a->hi = i - 1;
}

/* The sum as sign and magnitude: top 64 bits (msb at bit 63), the exponent of their lowest
 * bit, sticky for the bits below.  Returns 0 for an exact zero. */
static int wa_read(const wacc *a, int *neg, uint64_t *sig, int64_t *exp, int *sticky)
{
    uint64_t d[WN];
    const uint64_t *x, *y;
    int top = -1, bl, i;
    uint64_t borrow = 0;
    for (i = a->hi; i >= a->lo; i--)
        if (a->p[i] != a->n[i]) break;
    if (i < a->lo) return 0;
    *neg = a->n[i] > a->p[i];
    x = *neg ? a->n : a->p;
    y = *neg ? a->p : a->n;
    for (i = a->lo; i <= a->hi; i++) {
        uint64_t t = x[i] - y[i], b1 = x[i] < y[i];
        d[i] = t - borrow;
        borrow = b1 | (t < borrow);
        if (d[i]) top = i;
    }
    bl = bitlen(d[top]);
    /* the 64 bits from the msb down: bits of limb top and top - 1 */
    if (bl == 64 || top == a->lo) {
        *sig = bl == 64 ? d[top] : d[top] << (64 - bl);
        *exp = WLOW + 64 * (int64_t)top - (bl == 64 ? 0 : 64 - bl);
        i = top - 1;
        *sticky = 0;
    } else {
        *sig = (d[top] << (64 - bl)) | (d[top - 1] >> bl);
        *exp = WLOW + 64 * (int64_t)(top - 1) + bl;
        *sticky = (d[top - 1] & (((uint64_t)1 << bl) - 1)) != 0;
        i = top - 2;
    }
    for (; i >= a->lo && !*sticky; i--) *sticky = d[i] != 0;
    return 1;
}

/* the sum rounded once into f; an exact zero is a zero of sign zneg */
static uint64_t wa_round(const wacc *a, const sfp8_format *f, const sfp8_env *env, int zneg, uint8_t *fl)
{
    int neg, sticky;
    uint64_t sig;
    int64_t exp;
    if (!wa_read(a, &neg, &sig, &exp, &sticky)) return sfp8_round_value(f, zneg, 0, 0, 0, env, fl);
    return sfp8_round_value(f, neg, sig, exp, sticky, env, fl);
}

/* ---- IEEE addition of two values, rounded once into f ---- */

static uint64_t add_round(wacc *w, const sfp8_format *f, const sfp8_env *env, const mval *x, const mval *y,
                          uint8_t *fl)
{
    mval r = {0};
    if (x->cls == MV_NAN || y->cls == MV_NAN) {
        if (x->snan || y->snan) *fl |= SFP8_FLAG_INVALID;
        r.cls = MV_NAN;
        return mv_code(f, &r);
    }
    if (x->cls == MV_INF || y->cls == MV_INF) {
        if (x->cls == MV_INF && y->cls == MV_INF && x->neg != y->neg) {
            *fl |= SFP8_FLAG_INVALID;
            r.cls = MV_NAN;
        } else {
            r.cls = MV_INF;
            r.neg = x->cls == MV_INF ? x->neg : y->neg;
        }
        return sfp8_convert(&sfp8_binary64, f, r.cls == MV_NAN ? 0x7ff8000000000000ULL
                                              : r.neg ? 0xfff0000000000000ULL : 0x7ff0000000000000ULL,
                            env, fl);
    }
    wa_clear(w);
    if (x->cls == MV_FIN) wa_add(w, x->neg, x->sig, x->exp);
    if (y->cls == MV_FIN) wa_add(w, y->neg, y->sig, y->exp);
    if (x->cls == MV_ZERO && y->cls == MV_ZERO) /* x + x = x; +0 + -0 = +0 (-0 rounding downward) */
        return sfp8_round_value(f, x->neg == y->neg ? x->neg : env->rounding == SFP8_ROUND_DOWNWARD, 0, 0, 0,
                                env, fl);
    return wa_round(w, f, env, env->rounding == SFP8_ROUND_DOWNWARD, fl);
}

/* an exact value rounded once into f (NaN, infinities and zeros as conversions give them) */
static uint64_t value_round(const sfp8_format *f, const sfp8_env *env, const mval *v, uint8_t *fl)
{
    switch (v->cls) {
    case MV_FIN: return sfp8_round_value(f, v->neg, v->sig, v->exp, 0, env, fl);
    case MV_ZERO: return sfp8_round_value(f, v->neg, 0, 0, 0, env, fl);
    default:
        return sfp8_convert(&sfp8_binary64, f, v->cls == MV_NAN ? 0x7ff8000000000000ULL
                                               : v->neg ? 0xfff0000000000000ULL : 0x7ff0000000000000ULL,
                            env, fl);
    }
}

/* the exact product of two decoded operands, IEEE's special cases */
static void mv_mul(const mval *x, const mval *y, mval *r, uint8_t *fl)
{
    memset(r, 0, sizeof *r);
    r->neg = x->neg ^ y->neg;
    if (x->cls == MV_NAN || y->cls == MV_NAN) {
        if (x->snan || y->snan) *fl |= SFP8_FLAG_INVALID;
        r->cls = MV_NAN;
    } else if (x->cls == MV_INF || y->cls == MV_INF) {
        if (x->cls == MV_ZERO || y->cls == MV_ZERO) {
            *fl |= SFP8_FLAG_INVALID;
            r->cls = MV_NAN;
        } else {
            r->cls = MV_INF;
        }
    } else if (x->cls == MV_FIN && y->cls == MV_FIN) {
        r->cls = MV_FIN;
        r->sig = x->sig * y->sig; /* significands of at most 32 bits each (sfp8u_check) */
        r->exp = x->exp + y->exp;
    }
}

/* ---- the block-FMA model ---- */

/* a term of a block: value (-1)^neg sig 2^exp, nominal exponent E */
typedef struct {
    int neg;
    uint64_t sig;
    int64_t exp, E;
} term;

typedef struct {
    const sfp8u_model *md;
    sfp8_format fr;    /* block results: fo with p fraction bits */
    int W;             /* window: fraction bits below the alignment exponent */
    int64_t emin_a, emin_b, emin_o, emax_o;
    term *t;           /* scratch: block + 1 terms */
    mval *pa, *pb;     /* scratch: the block's decoded operands */
    wacc *w;
} bctx;

static int64_t fmt_emin(const sfp8_format *f) { return (int64_t)1 - f->bias; }
static int64_t fmt_emax(const sfp8_format *f) { return ((int64_t)1 << f->exp_bits) - 2 - f->bias; }

/* the nominal exponent of a finite operand */
static int64_t nominal(const mval *v, int64_t emin)
{
    int64_t e = mv_log2(v);
    return e > emin ? e : emin;
}

/* sum of the terms aligned to unit 2^ue (docs: "The alignment window"); *dropped |= bits lost */
static i128 align_sum(const term *t, int n, int64_t ue, int sticky, int *dropped)
{
    i128 T = 0;
    for (int i = 0; i < n; i++) {
        int64_t s = t[i].exp - ue;
        u128 a;
        int lost = 0;
        if (s >= 0) {
            a = (u128)t[i].sig << s; /* s <= W + 2: the term's msb is at most E_al + 1 */
        } else if (s <= -64) {
            a = 0;
            lost = 1;
        } else {
            a = t[i].sig >> -s;
            lost = (t[i].sig & (((uint64_t)1 << -s) - 1)) != 0;
        }
        if (sticky) a = (a << 1) | (u128)lost;
        *dropped |= lost;
        T += t[i].neg ? -(i128)a : (i128)a;
    }
    return T;
}

#define NO_EXP SFP8U_NO_EXP
typedef sfp8u_psum psum;

/* global alignment of products only (late addend, odd/even groups) */
static psum group_sum(const bctx *g, const term *t, int n, int *dropped)
{
    psum r = {0, NO_EXP};
    const sfp8u_model *md = g->md;
    if (n == 0) return r;
    r.E = t[0].E;
    for (int i = 1; i < n; i++)
        if (t[i].E > r.E) r.E = t[i].E;
    if (md->has_min_exp && r.E < md->min_exp) r.E = md->min_exp;
    r.T = align_sum(t, n, r.E - g->W, 0, dropped);
    return r;
}

/* x / 2^s (s >= 1) rounded to an integer by the alignment rounding mode */
static i128 shift_round(i128 x, int64_t s, int mode, int *inexact)
{
    int neg = x < 0;
    u128 m = neg ? (u128)(-x) : (u128)x, q, rem, half;
    if (s >= 127) {
        q = 0;
        rem = m;
        half = 0; /* every non-zero remainder is below half */
        if (m) half = m + 1;
    } else {
        q = m >> s;
        rem = m & (((u128)1 << s) - 1);
        half = (u128)1 << (s - 1);
    }
    if (rem) {
        int up = 0;
        *inexact = 1;
        switch (mode) {
        case SFP8_ROUND_DOWNWARD: up = neg; break;
        case SFP8_ROUND_UPWARD: up = !neg; break;
        case SFP8_ROUND_NEAREST_EVEN: up = rem > half || (rem == half && (q & 1)); break;
        default: break; /* toward zero */
        }
        q += (u128)up;
    }
    return neg ? -(i128)q : (i128)q;
}

/* two-term alignment (docs): x + y with X extra bits when x is the smaller term; the
 * result's unit is 2^(E - W - X') (*xout = X' = X or 0).  far >= 0: y more than `far`
 * binades below is truncated instead of rounded. */
__int128 sfp8u_two_term(sfp8u_psum x, sfp8u_psum y, int X, int mode, int64_t far, int64_t *E, int *xout,
                        int *inexact)
{
    *xout = 0;
    if (x.E == NO_EXP) x.E = y.E;
    if (y.E == NO_EXP) y.E = x.E;
    *E = x.E > y.E ? x.E : y.E;
    if (x.E == y.E) return x.T + y.T;
    if (x.E < y.E) { /* the products (x) are smaller: X extra bits */
        *xout = X;
        return y.T * ((i128)1 << X) + (x.T ? shift_round(x.T * ((i128)1 << X), y.E - x.E, mode, inexact) : 0);
    }
    if (far >= 0 && y.E < x.E - far) mode = SFP8_ROUND_TOWARD_ZERO;
    return x.T + (y.T ? shift_round(y.T, x.E - y.E, mode, inexact) : 0);
}

/* the addend as a partial sum at the unit 2^(E(c) - W) */
static psum addend_sum(const bctx *g, const mval *c)
{
    psum r = {0, NO_EXP};
    const sfp8u_model *md = g->md;
    if (c->cls == MV_FIN) {
        r.E = nominal(c, -126);
        r.T = (i128)c->sig << (c->exp - (r.E - g->W)); /* c: binary32 value, W >= 23 here */
        if (c->neg) r.T = -r.T;
    } else if (md->has_zero_addend_exp) {
        r.E = md->zero_addend_exp;
    }
    return r;
}

/* the block value (-1)^neg (mag + sticky) * 2^exp (mag != 0) rounded into the result grid
 * (docs: "Rounding the block result") and delivered in fo */
static uint64_t deliver(const bctx *g, int neg, u128 mag, int64_t exp, int sticky, uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    uint8_t lf = 0;
    uint64_t r = round_mag(&g->fr, &md->envo, neg, mag, exp, sticky, &lf);
    mval v;
    *fl |= lf;
    if (lf & SFP8_FLAG_OVERFLOW) { /* an infinity in every rounding mode */
        v.cls = MV_INF;
        v.neg = (uint8_t)neg;
        return mv_code(&md->fo, &v);
    }
    sfp8u_decode(&g->fr, r, &v);
    if (!md->out_subnormals && v.cls == MV_FIN && mv_log2(&v) < g->emin_o) {
        *fl |= SFP8_FLAG_UNDERFLOW | SFP8_FLAG_INEXACT;
        v.cls = MV_ZERO;
        v.neg = 0;
    }
    return mv_code(&md->fo, &v);
}

static uint64_t plus_zero(const sfp8_format *f)
{
    uint8_t scratch = 0;
    return sfp8_round_value(f, 0, 0, 0, 0, &ENV_RNE, &scratch);
}

/* the block value T * 2^ue (T = 0: +0) */
static uint64_t block_result(const bctx *g, i128 T, int64_t ue, uint8_t *fl)
{
    if (T == 0) return plus_zero(&g->md->fo);
    return deliver(g, T < 0, T < 0 ? (u128)(-T) : (u128)T, ue, 0, fl);
}

/* the non-zero products pa[i] * pb[i], i = start, start + step, ... < n, as terms */
static int block_terms(const bctx *g, const mval *pa, const mval *pb, int n, int start, int step, term *t)
{
    int nt = 0;
    for (int i = start; i < n; i += step) {
        if (pa[i].cls != MV_FIN || pb[i].cls != MV_FIN) continue;
        t[nt].neg = pa[i].neg ^ pb[i].neg;
        t[nt].sig = pa[i].sig * pb[i].sig;
        t[nt].exp = pa[i].exp + pb[i].exp;
        t[nt].E = nominal(&pa[i], g->emin_a) + nominal(&pb[i], g->emin_b);
        if (g->md->normalized_products && t[nt].exp + bitlen(t[nt].sig) - 1 >= t[nt].E + 1) t[nt].E++;
        nt++;
    }
    return nt;
}

/* exact block (extra_bits = None): the exact sum of the products and c, one rounding */
static uint64_t block_exact(const bctx *g, const term *t, int nt, const mval *c, uint8_t *fl)
{
    int neg, sticky;
    uint64_t sig;
    int64_t exp;
    wa_clear(g->w);
    for (int i = 0; i < nt; i++) wa_add(g->w, t[i].neg, t[i].sig, t[i].exp);
    if (c->cls == MV_FIN) wa_add(g->w, c->neg, c->sig, c->exp);
    if (!wa_read(g->w, &neg, &sig, &exp, &sticky)) return plus_zero(&g->md->fo);
    return deliver(g, neg, sig, exp, sticky, fl);
}

/* one block of the global / odd-even groupings: products pa[i] * pb[i] (i < n), addend c */
static uint64_t block_aligned(const bctx *g, const mval *pa, const mval *pb, int n, const mval *c, uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    term *t = g->t;
    int nt, dropped = 0, inexact = 0, xo;
    int64_t E, ue;
    i128 T;
    if (md->grouping == SFP8U_ODD_EVEN) { /* even and odd positions summed apart, then the addend */
        int ne = block_terms(g, pa, pb, n, 0, 2, t);
        int no = block_terms(g, pa, pb, n, 1, 2, t + ne);
        psum se = group_sum(g, t, ne, &dropped), so = group_sum(g, t + ne, no, &dropped), sp, sc;
        sp.T = sfp8u_two_term(se, so, 0, md->align_rounding, -1, &sp.E, &xo, &inexact);
        sc = addend_sum(g, c);
        if (sp.E == NO_EXP && sc.E == NO_EXP) return plus_zero(&md->fo);
        T = sfp8u_two_term(sp, sc, md->addend_extra_bits, md->align_rounding, 25, &E, &xo, &inexact);
        if (dropped || inexact) *fl |= SFP8_FLAG_INEXACT;
        return block_result(g, T, E - g->W - xo, fl);
    }
    nt = block_terms(g, pa, pb, n, 0, 1, t);
    if (md->exact_align) return block_exact(g, t, nt, c, fl);
    if (md->late_addend) {
        psum sp, sc;
        if (nt == 0) return c->cls == MV_FIN ? mv_code(&md->fo, c) : plus_zero(&md->fo); /* no product: c */
        sp = group_sum(g, t, nt, &dropped);
        sc = addend_sum(g, c);
        T = sfp8u_two_term(sp, sc, md->addend_extra_bits, md->align_rounding, -1, &E, &xo, &inexact);
        if (dropped || inexact) *fl |= SFP8_FLAG_INEXACT;
        return block_result(g, T, E - g->W - xo, fl);
    }
    if (c->cls == MV_FIN) { /* the addend joins the alignment */
        t[nt].neg = c->neg;
        t[nt].sig = c->sig;
        t[nt].exp = c->exp;
        t[nt].E = nominal(c, -126);
        nt++;
    }
    if (nt == 0) return block_result(g, 0, 0, fl);
    E = t[0].E;
    for (int i = 1; i < nt; i++)
        if (t[i].E > E) E = t[i].E;
    if (md->has_min_exp && E < md->min_exp) E = md->min_exp;
    ue = E - g->W;
    T = align_sum(t, nt, ue, md->sticky, &dropped);
    if (dropped) *fl |= SFP8_FLAG_INEXACT;
    return block_result(g, T, md->sticky ? ue - 1 : ue, fl);
}

/* a value flushed to zero when output subnormals are off (pairwise grouping) */
static uint64_t flush_sub(const bctx *g, uint64_t code, int keep_sign, uint8_t *fl)
{
    mval v;
    if (g->md->out_subnormals) return code;
    sfp8u_decode(&g->md->fo, code, &v);
    if (v.cls != MV_FIN || mv_log2(&v) >= g->emin_o) return code;
    *fl |= SFP8_FLAG_UNDERFLOW | SFP8_FLAG_INEXACT;
    v.cls = MV_ZERO;
    v.neg = keep_sign ? v.neg : 0;
    return mv_code(&g->md->fo, &v);
}

static uint64_t tree_sum(const bctx *g, const uint64_t *v, int n, uint8_t *fl)
{
    mval x, y;
    int h;
    if (n == 1) return v[0];
    h = n / 2;
    sfp8u_decode(&g->md->fo, tree_sum(g, v, h, fl), &x);
    sfp8u_decode(&g->md->fo, tree_sum(g, v + h, n - h, fl), &y);
    return flush_sub(g, add_round(g->w, &g->md->fo, &g->md->envo, &x, &y, fl), 1, fl);
}

/* pairwise grouping: products rounded into fo, a tree of additions, then the addend */
static uint64_t block_pairwise(const bctx *g, const mval *pa, const mval *pb, int n, const mval *c, uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    uint64_t *v = (uint64_t *)g->t; /* scratch: n codes fit in n terms */
    mval pr, s, cc = *c;
    for (int i = 0; i < n; i++) {
        mv_mul(&pa[i], &pb[i], &pr, fl);
        if (!md->out_subnormals && pr.cls == MV_ZERO) pr.neg = 0; /* flushed as |p| < min normal: +0 */
        v[i] = flush_sub(g, value_round(&md->fo, &ENV_RNE, &pr, fl), 0, fl);
    }
    sfp8u_decode(&md->fo, tree_sum(g, v, n, fl), &s);
    return flush_sub(g, add_round(g->w, &md->fo, &md->envo, &cc, &s, fl), 1, fl);
}

/* the whole dot product's special values (docs: "decided over the whole dot product");
 * returns 1 and the result in *res if they decide it */
static int block_specials(const bctx *g, const mval *a, const mval *b, int64_t k, const mval *c,
                          uint64_t *res, uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    int nan = c->cls == MV_NAN, pinf = c->cls == MV_INF && !c->neg, ninf = c->cls == MV_INF && c->neg;
    int bigp = 0, bign = 0;
    mval x, y, r;
    if (c->sub) *fl |= SFP8_FLAG_DENORMAL;
    if (c->snan) *fl |= SFP8_FLAG_INVALID;
    for (int64_t l = 0; l < k; l++) {
        x = a[l];
        y = b[l];
        if (x.sub || y.sub) *fl |= SFP8_FLAG_DENORMAL;
        if (!md->in_subnormals) {
            if (x.sub) x.cls = MV_ZERO;
            if (y.sub) y.cls = MV_ZERO;
        }
        mv_mul(&x, &y, &r, fl); /* invalid for inf * 0 and signalling NaNs */
        if (r.cls == MV_NAN) nan = 1;
        else if (r.cls == MV_INF) {
            if (r.neg) ninf = 1;
            else pinf = 1;
        } else if (r.cls == MV_FIN && !md->product_overflow && mv_log2(&r) >= g->emax_o + 1) {
            if (r.neg) bign = 1;
            else bigp = 1;
        }
    }
    if (nan || (pinf && ninf)) {
        if (!nan) *fl |= SFP8_FLAG_INVALID;
        r.cls = MV_NAN;
        *res = mv_code(&md->fo, &r);
        return 1;
    }
    if (pinf || ninf) {
        r.cls = MV_INF;
        r.neg = (uint8_t)ninf;
        *res = mv_code(&md->fo, &r);
        return 1;
    }
    if (bigp || bign) {
        if (bigp && bign) {
            *fl |= SFP8_FLAG_INVALID;
            r.cls = MV_NAN;
        } else {
            *fl |= SFP8_FLAG_OVERFLOW | SFP8_FLAG_INEXACT;
            r.cls = MV_INF;
            r.neg = (uint8_t)bign;
        }
        *res = mv_code(&md->fo, &r);
        return 1;
    }
    return 0;
}

static uint64_t dot_block(const bctx *g, const mval *a, const mval *b, int64_t k, uint64_t ccode,
                          uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    int n = md->block;
    mval c, F;
    uint64_t res, acc, zero;
    int64_t chunk = md->promote ? md->promote : (k > 0 ? k : 1);
    if (md->has_addend) sfp8u_decode(&md->fo, ccode, &c);
    else memset(&c, 0, sizeof c);
    if (block_specials(g, a, b, k, &c, &res, fl)) return res;
    zero = plus_zero(&md->fo);
    F = c;
    if (c.sub && md->out_subnormals == 0) { /* read as zero (docs: "The addend"): +0, or a zero of */
        *fl |= SFP8_FLAG_INEXACT;          /* its sign in the pairwise grouping */
        F.cls = MV_ZERO;
        F.neg = md->grouping == SFP8U_PAIRWISE_TREE ? c.neg : 0;
    }
    acc = mv_code(&md->fo, &F);
    for (int64_t c0 = 0; c0 < k; c0 += chunk) {
        int64_t cend = c0 + chunk < k ? c0 + chunk : k;
        uint64_t d = md->promote ? zero : acc;
        for (int64_t k0 = c0; k0 < cend; k0 += n) {
            mval cur;
            int m = 0;
            sfp8u_decode(&md->fo, d, &cur);
            if (cur.cls == MV_INF || cur.cls == MV_NAN) break; /* inf (NaN) + finite products */

            for (int64_t l = k0; l < k0 + n; l++, m++) {
                if (l < cend) {
                    g->pa[m] = a[l];
                    g->pb[m] = b[l];
                    if (!md->in_subnormals) {
                        if (g->pa[m].sub) g->pa[m].cls = MV_ZERO;
                        if (g->pb[m].sub) g->pb[m].cls = MV_ZERO;
                    }
                } else { /* padding: 0 * 0 */
                    memset(&g->pa[m], 0, sizeof(mval));
                    memset(&g->pb[m], 0, sizeof(mval));
                }
            }
            if (md->grouping == SFP8U_PAIRWISE_TREE) d = block_pairwise(g, g->pa, g->pb, n, &cur, fl);
            else d = block_aligned(g, g->pa, g->pb, n, &cur, fl);
        }
        if (md->promote) { /* the chunk into the binary32 running sum */
            mval x, y;
            sfp8u_decode(&md->fo, acc, &x);
            sfp8u_decode(&md->fo, d, &y);
            acc = add_round(g->w, &md->fo, &ENV_RNE, &x, &y, fl);
        } else {
            acc = d;
        }
    }
    return acc;
}

/* ---- softfp8.Accumulation's orders, and the exact sum, with an addend ---- */

typedef struct {
    const sfp8u_model *md;
    wacc *w;
    mval *p; /* scratch: k products */
} octx;

static uint64_t acc_value(const octx *o, const mval *v, uint8_t *fl)
{
    return value_round(&o->md->facc, &o->md->envacc, v, fl);
}

static uint64_t acc_add(const octx *o, uint64_t x, const mval *y, uint8_t *fl)
{
    mval xv;
    sfp8u_decode(&o->md->facc, x, &xv);
    return add_round(o->w, &o->md->facc, &o->md->envacc, &xv, y, fl);
}

static uint64_t pair_tree(const octx *o, const mval *p, int64_t n, uint8_t *fl)
{
    mval y;
    uint64_t x;
    int64_t h;
    if (n == 1) return acc_value(o, &p[0], fl);
    h = n / 2;
    x = pair_tree(o, p, h, fl);
    sfp8u_decode(&o->md->facc, pair_tree(o, p + h, n - h, fl), &y);
    return acc_add(o, x, &y, fl);
}

static mval negated(const mval *v)
{
    mval r = *v;
    if (r.cls != MV_NAN) r.neg ^= 1;
    return r;
}

/* one chunk p[0 .. n-1] (n >= 1) in the accumulator; start: the addend (NULL: none) */
static uint64_t chunk_sum(const octx *o, const mval *p, int64_t n, const mval *start, uint8_t *fl)
{
    const sfp8u_model *md = o->md;
    uint64_t s;
    int64_t i = 0;
    if (md->order == SFP8U_PAIRWISE) {
        if (!start) return pair_tree(o, p, n, fl);
        mval t;
        sfp8u_decode(&md->facc, pair_tree(o, p, n, fl), &t);
        return add_round(o->w, &md->facc, &md->envacc, start, &t, fl);
    }
    if (start) {
        s = acc_value(o, start, fl);
    } else {
        s = acc_value(o, &p[0], fl);
        i = 1;
    }
    if (md->order == SFP8U_SEQUENTIAL) {
        for (; i < n; i++) s = acc_add(o, s, &p[i], fl);
        return s;
    }
    { /* Kahan: y = p - e, t = s + y, e = (t - s) - y, s = t */
        mval e = {0}, y, t, sv, d;
        uint64_t yc, tc;
        for (; i < n; i++) {
            mval ne = negated(&e);
            yc = add_round(o->w, &md->facc, &md->envacc, &p[i], &ne, fl);
            sfp8u_decode(&md->facc, yc, &y);
            tc = acc_add(o, s, &y, fl);
            sfp8u_decode(&md->facc, tc, &t);
            if (t.cls != MV_FIN && t.cls != MV_ZERO) { /* a non-finite t ends the compensation */
                s = tc;
                memset(&e, 0, sizeof e);
                continue;
            }
            sfp8u_decode(&md->facc, s, &sv);
            sv = negated(&sv);
            sfp8u_decode(&md->facc, add_round(o->w, &md->facc, &md->envacc, &t, &sv, fl), &d);
            y = negated(&y);
            sfp8u_decode(&md->facc, add_round(o->w, &md->facc, &md->envacc, &d, &y, fl), &e);
            s = tc;
        }
        return s;
    }
}

static uint64_t dot_order(const octx *o, const mval *a, const mval *b, int64_t k, uint64_t ccode,
                          uint8_t *fl)
{
    const sfp8u_model *md = o->md;
    mval x, y, c, S;
    int have_c = md->has_addend, have_F = 0;
    uint64_t F = 0;
    if (have_c) {
        sfp8u_decode(&md->fo, ccode, &c);
        if (c.sub) *fl |= SFP8_FLAG_DENORMAL;
        if (c.snan) *fl |= SFP8_FLAG_INVALID;
    }
    for (int64_t l = 0; l < k; l++) {
        x = a[l];
        y = b[l];
        if (x.sub || y.sub) *fl |= SFP8_FLAG_DENORMAL;
        mv_mul(&x, &y, &o->p[l], fl);
        if (md->has_prod) sfp8u_decode(&md->fp, value_round(&md->fp, &md->envp, &o->p[l], fl), &o->p[l]);
    }
    if (md->order == SFP8U_EXACT) { /* exact sum of the products and c, one rounding */
        int nan = have_c && c.cls == MV_NAN, pinf = 0, ninf = 0, nonzero = 0, pz = 0, nz = 0;
        if (have_c) {
            pinf = c.cls == MV_INF && !c.neg;
            ninf = c.cls == MV_INF && c.neg;
        }
        wa_clear(o->w);
        for (int64_t l = 0; l <= k; l++) {
            const mval *v = l < k ? &o->p[l] : (have_c ? &c : NULL);
            if (!v) break;
            switch (v->cls) {
            case MV_NAN: nan = 1; break;
            case MV_INF:
                if (v->neg) ninf = 1;
                else pinf = 1;
                break;
            case MV_ZERO:
                if (v->neg) nz = 1;
                else pz = 1;
                break;
            default: nonzero = 1; wa_add(o->w, v->neg, v->sig, v->exp);
            }
        }
        if (nan || (pinf && ninf)) {
            if (!nan) *fl |= SFP8_FLAG_INVALID;
            S.cls = MV_NAN;
            return value_round(&md->fo, &md->envo, &S, fl);
        }
        if (pinf || ninf) {
            S.cls = MV_INF;
            S.neg = (uint8_t)ninf;
            return value_round(&md->fo, &md->envo, &S, fl);
        }
        if (!nonzero)
            return sfp8_round_value(&md->fo, pz && nz ? md->envo.rounding == SFP8_ROUND_DOWNWARD : nz, 0, 0, 0,
                                    &md->envo, fl);
        return wa_round(o->w, &md->fo, &md->envo, md->envo.rounding == SFP8_ROUND_DOWNWARD, fl);
    }
    if (md->promote && have_c) {
        F = value_round(&md->fprom, &md->envprom, &c, fl);
        have_F = 1;
    }
    {
        int64_t chunk = md->promote ? md->promote : k;
        uint64_t s = 0;
        int have_s = 0;
        for (int64_t c0 = 0; c0 < k; c0 += chunk) {
            int64_t n = c0 + chunk < k ? chunk : k - c0;
            s = chunk_sum(o, o->p + c0, n, (!md->promote && have_c) ? &c : NULL, fl);
            have_s = 1;
            if (md->promote) {
                mval sv;
                sfp8u_decode(&md->facc, s, &sv);
                if (have_F) {
                    mval fv;
                    sfp8u_decode(&md->fprom, F, &fv);
                    F = add_round(o->w, &md->fprom, &md->envprom, &fv, &sv, fl);
                } else {
                    F = value_round(&md->fprom, &md->envprom, &sv, fl);
                }
                have_F = 1;
            }
        }
        if (md->promote) {
            if (!have_F) return sfp8_round_value(&md->fo, 0, 0, 0, 0, &md->envo, fl);
            sfp8u_decode(&md->fprom, F, &S);
        } else if (have_s) {
            sfp8u_decode(&md->facc, s, &S);
        } else if (have_c) { /* K = 0: the addend, through the accumulator */
            sfp8u_decode(&md->facc, acc_value(o, &c, fl), &S);
        } else {
            return sfp8_round_value(&md->fo, 0, 0, 0, 0, &md->envo, fl);
        }
        return value_round(&md->fo, &md->envo, &S, fl);
    }
}

/* ---- checks and entry points ---- */

/* lowest bit and top binade of a format's finite values */
static int64_t fmt_low(const sfp8_format *f) { return (int64_t)-f->bias - f->man_bits; }
static int64_t fmt_top(const sfp8_format *f) { return ((int64_t)1 << f->exp_bits) - f->bias + 1; }

static int in_range(const sfp8_format *f, int64_t low, int64_t top)
{
    return f->exp_bits <= 11 && fmt_low(f) >= low && fmt_top(f) <= top;
}

const char *sfp8u_check(const sfp8u_model *md)
{
    int opd32 = md->fa.bits <= 32 && md->fb.bits <= 32 && md->fa.man_bits <= 31 && md->fb.man_bits <= 31;
    if (md->order < SFP8U_BLOCK || md->order > SFP8U_KAHAN) return "unknown order";
    if (!opd32 || !in_range(&md->fa, WLOW / 2 + 8, -WLOW / 2 - 70) || !in_range(&md->fb, WLOW / 2 + 8, -WLOW / 2 - 70))
        return "operand formats outside the modelled range";
    if (!in_range(&md->fo, WLOW + 8, -WLOW - 140)) return "output format outside the modelled range";
    if (md->order == SFP8U_BLOCK) {
        int p;
        if (!(md->fo.bits == 32 && md->fo.exp_bits == 8 && md->fo.man_bits == 23) &&
            !(md->fo.bits == 16 && md->fo.exp_bits == 5 && md->fo.man_bits == 10))
            return "block models deliver binary32 or binary16";
        if (md->block < 1 || md->block > 65536) return "block outside 1 .. 65536";
        if (!md->exact_align && (md->extra_bits < -20 || md->extra_bits > 40)) return "extra_bits outside -20 .. 40";
        p = md->fo.man_bits + (!md->exact_align && md->extra_bits < 0 ? md->extra_bits : 0);
        if (p < 1) return "extra_bits leave no fraction bit in the result";
        if ((md->late_addend || md->grouping == SFP8U_ODD_EVEN) && (md->exact_align || md->extra_bits < 0))
            return "late addends and odd/even grouping need extra_bits >= 0";
        if (md->promote && (md->promote % md->block || md->fo.bits != 32)) return "promotion needs binary32 and a multiple of block";
        if (md->promote < 0) return "promote < 0";
    } else {
        if (!in_range(&md->facc, WLOW + 8, -WLOW - 140) || (md->has_prod && !in_range(&md->fp, WLOW + 8, -WLOW - 140)) ||
            (md->promote && !in_range(&md->fprom, WLOW + 8, -WLOW - 140)))
            return "accumulator formats outside the modelled range";
        if (md->promote < 0) return "promote < 0";
    }
    return 0;
}

static void bctx_init(bctx *g, const sfp8u_model *md)
{
    int p = md->fo.man_bits + (!md->exact_align && md->extra_bits < 0 ? md->extra_bits : 0);
    g->md = md;
    g->fr = md->fo;
    g->fr.man_bits = p;
    g->fr.bits = 1 + md->fo.exp_bits + p;
    g->W = 23 + (md->exact_align ? 0 : md->extra_bits);
    g->emin_a = md->fa.bits == 32 ? -126 : fmt_emin(&md->fa);
    g->emin_b = md->fb.bits == 32 ? -126 : fmt_emin(&md->fb);
    g->emin_o = fmt_emin(&md->fo);
    g->emax_o = fmt_emax(&md->fo);
}

typedef struct {
    bctx b;
    octx o;
    wacc w;
    mval *da, *db; /* decoded operands: one row of A (k), and B (k, or k x p in sfp8u_gemm) */
} dctx;

static void dctx_free(dctx *d)
{
    if (!d) return;
    free(d->b.t);
    free(d->b.pa);
    free(d->b.pb);
    free(d->o.p);
    free(d->da);
    free(d->db);
    free(d);
}

/* scratch for dot products of k terms; nb: decoded B operands to hold */
static dctx *dctx_new(const sfp8u_model *md, int64_t k, int64_t nb)
{
    dctx *d = calloc(1, sizeof *d);
    int64_t n = md->order == SFP8U_BLOCK ? md->block : k;
    if (!d) return NULL;
    d->w.lo = 0;
    d->w.hi = WN - 1;
    wa_clear(&d->w);
    bctx_init(&d->b, md);
    d->b.w = &d->w;
    d->o.md = md;
    d->o.w = &d->w;
    d->b.t = malloc((size_t)(n + 2) * sizeof(term));
    d->b.pa = malloc((size_t)(n + 1) * sizeof(mval));
    d->b.pb = malloc((size_t)(n + 1) * sizeof(mval));
    d->o.p = malloc((size_t)(k + 1) * sizeof(mval));
    d->da = malloc((size_t)(k + 1) * sizeof(mval));
    d->db = malloc((size_t)(nb + 1) * sizeof(mval));
    if (!d->b.t || !d->b.pa || !d->b.pb || !d->o.p || !d->da || !d->db) {
        dctx_free(d);
        return NULL;
    }
    return d;
}

static uint64_t dot_vals(dctx *d, const mval *a, const mval *b, int64_t k, uint64_t c, uint8_t *flags)
{
    if (d->b.md->order == SFP8U_BLOCK) return dot_block(&d->b, a, b, k, c, flags);
    return dot_order(&d->o, a, b, k, c, flags);
}

uint64_t sfp8u_dot(const sfp8u_model *md, const uint32_t *a, const uint32_t *b, int64_t k, uint64_t c,
                   uint8_t *flags)
{
    dctx *d = dctx_new(md, k, k);
    uint64_t r;
    if (!d) return 0;
    for (int64_t l = 0; l < k; l++) {
        sfp8u_decode(&md->fa, a[l], &d->da[l]);
        sfp8u_decode(&md->fb, b[l], &d->db[l]);
    }
    r = dot_vals(d, d->da, d->db, k, c, flags);
    dctx_free(d);
    return r;
}

static int code_size(const sfp8_format *f) { return f->bits <= 8 ? 1 : f->bits <= 16 ? 2 : f->bits <= 32 ? 4 : 8; }

unsigned sfp8u_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                    ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O,
                    ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k, int64_t p)
{
    dctx *d = dctx_new(md, k, k * p);
    int sa = code_size(&md->fa), sb = code_size(&md->fb), so = code_size(&md->fo);
    uint8_t fl = 0;
    if (!d) return SFP8U_NOMEM;
    for (int64_t j = 0; j < p; j++) /* B decoded once, column by column */
        for (int64_t l = 0; l < k; l++) sfp8u_decode(&md->fb, load_raw(B + l * bk + j * bp, sb), &d->db[j * k + l]);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t l = 0; l < k; l++) sfp8u_decode(&md->fa, load_raw(A + i * am + l * ak, sa), &d->da[l]);
        for (int64_t j = 0; j < p; j++) {
            uint64_t c = C ? load_raw(C + i * cm + j * cp, so) : 0;
            store_raw(O + i * om + j * op, so, dot_vals(d, d->da, d->db + j * k, k, c, &fl));
        }
    }
    dctx_free(d);
    return fl;
}
