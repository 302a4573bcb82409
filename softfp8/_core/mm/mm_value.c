/*
 * The matrix engine's exact values: decoding of codes, the exact product, the
 * exact two-term sum rounded once, the scale product.  Every rounding is the
 * core's: sfp8_round_value on an exact value (significand, exponent, sticky bit
 * below 64 significant bits), sfp8_convert for NaN and infinity.  Nothing here
 * re-derives a rounding decision but the sign of an exact zero sum:
 *
 * DERIVED from core.c round_pack: only the sign of an exact zero sum (-0 when
 * rounding downward, IEEE 754 6.3) is decided here (sum_round, gv_add_round); every
 * other result is the core's.  Proof: the generic kernels against Fraction models in
 * tests/fast/test_matmul_exact.py and tests/numpy_glue/test_gemm.py, the paths built
 * on them by tests/harness/test_harness.py::test_entry (entries blas_*, int_dot, model_*).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mm_value.h"

const gval mm_one = {GV_FIN, 0, 0, 0, 1, 0};
const sfp8_env mm_env_rne = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};

void gv_decode(const sfp8_format *f, uint64_t code, gval *v)
{
    int c = sfp8_classify(f, code);
    memset(v, 0, sizeof *v);
    v->neg = (uint8_t)sfp8_signbit(f, code);
    if (c == SFP8_CLASS_SUBNORMAL) v->fl = SFP8_FLAG_DENORMAL;
    if (c == SFP8_CLASS_QNAN || c == SFP8_CLASS_SNAN) {
        v->cls = GV_NAN;
        v->snan = c == SFP8_CLASS_SNAN;
    } else if (c == SFP8_CLASS_INF) {
        v->cls = GV_INF;
    } else if (c == SFP8_CLASS_ZERO || (c == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH)) {
        v->cls = GV_ZERO;
    } else {
        v->cls = GV_FIN;
        acc_finite_value(f, (uint32_t)code, &v->sig, &v->exp); /* sig odd */
    }
}

gval *gv_table(const sfp8_format *f)
{
    uint32_t n = (uint32_t)1 << f->bits;
    gval *t = malloc(n * sizeof *t);
    if (t)
        for (uint32_t c = 0; c < n; c++) gv_decode(f, c, &t[c]);
    return t;
}

uint64_t gv_round(const sfp8_format *f, const sfp8_env *env, const gval *v, uint8_t *fl)
{
    switch (v->cls) {
    case GV_NAN: return sfp8_convert(&sfp8_binary64, f, 0x7ff8000000000000ULL, env, fl);
    case GV_INF:
        return sfp8_convert(&sfp8_binary64, f, v->neg ? 0xfff0000000000000ULL : 0x7ff0000000000000ULL, env, fl);
    case GV_ZERO: return sfp8_round_value(f, v->neg, 0, 0, 0, env, fl);
    default: return sfp8_round_value(f, v->neg, v->sig, v->exp, 0, env, fl);
    }
}

uint64_t mm_round_u128(const sfp8_format *f, const sfp8_env *env, int neg, unsigned __int128 mag, int64_t e,
                       int sticky, uint8_t *fl)
{
    int bl = (uint64_t)(mag >> 64) ? 64 + gv_bitlen((uint64_t)(mag >> 64)) : gv_bitlen((uint64_t)mag);
    if (bl > 64) { /* msb to bit 63: sfp8_round_value keeps every decision with the sticky bit */
        int sh = bl - 64;
        sticky |= (mag & (((unsigned __int128)1 << sh) - 1)) != 0;
        mag >>= sh;
        e += sh;
    }
    return sfp8_round_value(f, neg, (uint64_t)mag, e, sticky, env, fl);
}

void gv_mul(const gval *x, const gval *y, gval *r, uint8_t *fl)
{
    memset(r, 0, sizeof *r);
    r->neg = x->neg ^ y->neg;
    if (x->cls == GV_NAN || y->cls == GV_NAN) {
        if (x->snan || y->snan) *fl |= SFP8_FLAG_INVALID;
        r->cls = GV_NAN;
    } else if (x->cls == GV_INF || y->cls == GV_INF) {
        if (x->cls == GV_ZERO || y->cls == GV_ZERO) {
            *fl |= SFP8_FLAG_INVALID;
            r->cls = GV_NAN;
        } else {
            r->cls = GV_INF;
        }
    } else if (x->cls == GV_ZERO || y->cls == GV_ZERO) {
        r->cls = GV_ZERO;
    } else {
        /* odd significands of operands (<= 16 bits), their products (<= 32), binary32
           scales and sums of the fast kernels (<= 24): the product fits 64 bits and is odd */
        r->cls = GV_FIN;
        r->sig = x->sig * y->sig;
        r->exp = x->exp + y->exp;
    }
}

/* x + y (both finite, non-zero, significands of at most 60 bits) rounded once */
static uint64_t sum_round(const sfp8_format *f, const sfp8_env *env, const gval *x, const gval *y, uint8_t *fl)
{
    const gval *h = x, *l = y;
    unsigned __int128 H, L, S;
    int64_t e, d;
    int sticky = 0, neg;
    if (h->exp < l->exp) { /* h: the term with the higher lowest bit */
        h = y;
        l = x;
    }
    d = h->exp - l->exp;
    if (d + gv_bitlen(h->sig) <= 126) { /* both exact in 127 bits */
        H = (unsigned __int128)h->sig << d;
        L = l->sig;
        e = l->exp;
    } else { /* l lies wholly below h's lowest bit: kept to 64 bits plus a sticky bit */
        int sh = 126 - gv_bitlen(h->sig);
        int64_t r;
        H = (unsigned __int128)h->sig << sh; /* msb at bit 125 */
        e = h->exp - sh;
        r = e - l->exp; /* > 0 */
        if (r >= 64) {
            L = 0;
            sticky = 1;
        } else {
            L = l->sig >> r;
            sticky = (l->sig & (((uint64_t)1 << r) - 1)) != 0;
        }
    }
    if (h->neg == l->neg) {
        S = H + L;
        neg = h->neg;
    } else if (!sticky && H == L) { /* exact cancellation */
        return sfp8_round_value(f, env->rounding == SFP8_ROUND_DOWNWARD, 0, 0, 0, env, fl);
    } else if (sticky || H > L) { /* h - (L + delta) = (H - L - 1) + (1 - delta) */
        S = H - L - (unsigned)sticky;
        neg = h->neg;
    } else {
        S = L - H;
        neg = l->neg;
    }
    return mm_round_u128(f, env, neg, S, e, sticky, fl);
}

uint64_t gv_add_round(const sfp8_format *f, const sfp8_env *env, const gval *x, const gval *y, uint8_t *fl)
{
    gval r;
    memset(&r, 0, sizeof r);
    if (x->cls == GV_NAN || y->cls == GV_NAN) {
        if (x->snan || y->snan) *fl |= SFP8_FLAG_INVALID;
        r.cls = GV_NAN;
    } else if (x->cls == GV_INF || y->cls == GV_INF) {
        if (x->cls == GV_INF && y->cls == GV_INF && x->neg != y->neg) {
            *fl |= SFP8_FLAG_INVALID;
            r.cls = GV_NAN;
        } else {
            r.cls = GV_INF;
            r.neg = x->cls == GV_INF ? x->neg : y->neg;
        }
    } else if (x->cls == GV_ZERO && y->cls == GV_ZERO) {
        r.cls = GV_ZERO;
        r.neg = x->neg == y->neg ? x->neg : env->rounding == SFP8_ROUND_DOWNWARD;
    } else if (x->cls == GV_ZERO) {
        return gv_round(f, env, y, fl);
    } else if (y->cls == GV_ZERO) {
        return gv_round(f, env, x, fl);
    } else {
        return sum_round(f, env, x, y, fl);
    }
    return gv_round(f, env, &r, fl);
}

double gv_double(const gval *v)
{
    if (v->cls == GV_ZERO) return v->neg ? -0.0 : 0.0;
    return v->neg ? -ldexp((double)v->sig, (int)v->exp) : ldexp((double)v->sig, (int)v->exp);
}

void gv_from_double(double d, gval *v)
{
    int e;
    double m;
    memset(v, 0, sizeof *v);
    v->neg = (uint8_t)(signbit(d) != 0);
    if (d == 0) return;
    v->cls = GV_FIN;
    m = frexp(fabs(d), &e); /* exact: d is a finite binary64 */
    v->sig = (uint64_t)ldexp(m, 53);
    v->exp = (int64_t)e - 53;
    { /* odd significand: a binary32 value keeps at most 24 bits (gv_mul's bound) */
        int tz = __builtin_ctzll(v->sig);
        v->sig >>= tz;
        v->exp += tz;
    }
}

void mm_scale_at(const sfp8m_model *md, int64_t i, int64_t l, int64_t j, gval *s, uint8_t *fl)
{
    gval x = mm_one, y = mm_one, pr;
    if (!md->sa.s && !md->sb.s) {
        *s = mm_one;
        return;
    }
    if (md->sa.s) gv_decode(&sfp8_binary32, md->sa.s[(i / md->sa.br) * md->sa.rs + (l / md->sa.bc) * md->sa.cs], &x);
    if (md->sb.s) gv_decode(&sfp8_binary32, md->sb.s[(l / md->sb.br) * md->sb.rs + (j / md->sb.bc) * md->sb.cs], &y);
    if (md->scale_exact) { /* E8M0 values: 2^(ea + eb) exactly (significands 1), no flag */
        gv_mul(&x, &y, s, fl);
        s->fl = 0;
        return;
    }
    *fl |= x.fl | y.fl;
    gv_mul(&x, &y, &pr, fl);
    gv_decode(&sfp8_binary32, gv_round(&sfp8_binary32, &mm_env_rne, &pr, fl), s);
    s->fl = 0;
}

/* the lowest and highest exponents of the scales of one operand (rows x cols; powers of two) */
static void scale_exps(const sfp8m_scale *sc, int64_t rows, int64_t cols, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    if (!sc->s || rows <= 0 || cols <= 0) return;
    *lo = INT64_MAX, *hi = INT64_MIN;
    for (int64_t r = 0; r < (rows + sc->br - 1) / sc->br; r++)
        for (int64_t q = 0; q < (cols + sc->bc - 1) / sc->bc; q++) {
            gval v;
            gv_decode(&sfp8_binary32, sc->s[r * sc->rs + q * sc->cs], &v);
            if (v.cls != GV_FIN) { /* not a scale of the exact mode: claim the widest range */
                *lo = INT64_MIN / 4, *hi = INT64_MAX / 4;
                return;
            }
            if (v.exp < *lo) *lo = v.exp;
            if (v.exp > *hi) *hi = v.exp;
        }
}

int mm_call_init(mm_call *c, const sfp8m_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                 ptrdiff_t bk, ptrdiff_t bp, int64_t m, int64_t k, int64_t p)
{
    memset(c, 0, sizeof *c);
    c->md = md;
    c->A = A, c->am = am, c->ak = ak;
    c->B = B, c->bk = bk, c->bp = bp;
    c->m = m, c->k = k, c->p = p;
    c->sza = mm_size(&md->fa);
    c->szb = mm_size(&md->fb);
    c->szo = mm_size(&md->fout);
    c->mask_a = sfp8_code_mask(&md->fa);
    c->mask_b = sfp8_code_mask(&md->fb);
    if (md->scale_exact) {
        int64_t la, ha, lb, hb;
        scale_exps(&md->sa, m, k, &la, &ha);
        scale_exps(&md->sb, k, p, &lb, &hb);
        c->scale_wide = la + lb < -149 || ha + hb > 127;
    }
    return !md->exact || (c->sacc = malloc(sizeof(SuperAcc))) != NULL;
}

int mm_call_tables(mm_call *c, int64_t reads)
{
    if (!c->da && reads > ((int64_t)1 << c->md->fa.bits) && !(c->da = gv_table(&c->md->fa))) return 0;
    if (!c->db && reads > ((int64_t)1 << c->md->fb.bits) && !(c->db = gv_table(&c->md->fb))) return 0;
    return 1;
}

void mm_call_free(mm_call *c)
{
    free(c->da);
    free(c->db);
    free(c->sacc);
}
