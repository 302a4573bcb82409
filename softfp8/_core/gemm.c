/*
 * Matrix products under an accumulation model (docs/training.md,
 * "Accumulation models"): exact products, optionally rounded into a product
 * format; a sequential sum in an accumulator format; partial sums of N
 * products promoted into a binary32 running sum (scaled by per-block scales);
 * a final rounding into the output format.  Or the exact dot product with one
 * rounding (superaccumulator, accum.c).
 *
 * Every rounding is the core's: sfp8_round_value on the exact value (this
 * file computes exact products and exact sums of two terms in integers), and
 * sfp8_convert for NaN and infinity.  Faster kernels for 8-bit operands:
 * binary32 accumulation by IEEE binary32 addition (fast_block), 16-bit
 * accumulators by their fma (sfp8f_run_arith16, fma16_block), other
 * accumulators by sfp8f_odd_sum (rounded to odd at 53 bits, fast.h) and
 * sfp8f_round_doubles (fast/round_f64.c) -- both DERIVED from the core and
 * proven there -- and the exact model in 128-bit integers (exact_block).  Each
 * is tested equal to the generic kernel (codes and flags) by
 * tests/numpy_glue/test_gemm.py::test_fast_equals_core and the reference tests.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accum.h"
#include "fast.h"
#include "gemm.h"
#include "ops.h"

/* ---- exact values ---- */

enum { GV_ZERO = 0, GV_FIN, GV_INF, GV_NAN };
typedef struct {
    uint8_t cls, neg, snan, fl; /* fl: denormal when read as an operand */
    uint64_t sig;               /* GV_FIN: value (-1)^neg * sig * 2^exp */
    int64_t exp;
} gval;

static const gval GV_ONE = {GV_FIN, 0, 0, 0, 1, 0};
/* binary32 products of scales and the running sums: IEEE default rounding */
static const sfp8_env ENV_RNE = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};

static void gv_decode(const sfp8_format *f, uint64_t code, gval *v)
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
        acc_finite_value(f, (uint32_t)code, &v->sig, &v->exp);
    }
}

/* v rounded once into f: finite values and zeros by the core's rounding
 * routine, NaN and infinity by the core's conversion from binary64 */
static uint64_t gv_round(const sfp8_format *f, const sfp8_env *env, const gval *v, uint8_t *fl)
{
    switch (v->cls) {
    case GV_NAN: return sfp8_convert(&sfp8_binary64, f, 0x7ff8000000000000ULL, env, fl);
    case GV_INF:
        return sfp8_convert(&sfp8_binary64, f, v->neg ? 0xfff0000000000000ULL : 0x7ff0000000000000ULL, env, fl);
    case GV_ZERO: return sfp8_round_value(f, v->neg, 0, 0, 0, env, fl);
    default: return sfp8_round_value(f, v->neg, v->sig, v->exp, 0, env, fl);
    }
}

/* the exact product, as IEEE multiplication defines the special cases */
static void gv_mul(const gval *x, const gval *y, gval *r, uint8_t *fl)
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
    } else { /* significands of at most 24 bits each: the product fits */
        r->cls = GV_FIN;
        r->sig = x->sig * y->sig;
        r->exp = x->exp + y->exp;
    }
}

static int bitlen64(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

/* x + y (both finite, non-zero, significands of at most 60 bits) rounded once */
static uint64_t sum_round(const sfp8_format *f, const sfp8_env *env, const gval *x, const gval *y, uint8_t *fl)
{
    const gval *h = x, *l = y;
    unsigned __int128 H, L, S;
    int64_t e, d;
    int sticky = 0, neg, bl;
    if (h->exp < l->exp) { /* h: the term with the higher lowest bit */
        h = y;
        l = x;
    }
    d = h->exp - l->exp;
    if (d + bitlen64(h->sig) <= 126) { /* both exact in 127 bits */
        H = (unsigned __int128)h->sig << d;
        L = l->sig;
        e = l->exp;
    } else { /* l lies wholly below h's lowest bit: kept to 64 bits plus a sticky bit */
        int sh = 126 - bitlen64(h->sig);
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
    bl = (uint64_t)(S >> 64) ? 64 + bitlen64((uint64_t)(S >> 64)) : bitlen64((uint64_t)S);
    if (bl > 64) { /* msb to bit 63 (>= 56 as sfp8_round_value needs with sticky) */
        int r = bl - 64;
        sticky |= (S & (((unsigned __int128)1 << r) - 1)) != 0;
        S >>= r;
        e += r;
    }
    return sfp8_round_value(f, neg, (uint64_t)S, e, sticky, env, fl);
}

/* x + y rounded once into f, as IEEE addition defines the special cases */
static uint64_t gv_add_round(const sfp8_format *f, const sfp8_env *env, const gval *x, const gval *y, uint8_t *fl)
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

/* ---- the kernel's state ---- */

typedef struct {
    const sfp8g_model *md;
    gval *da, *db;        /* decodings of every code of A's and B's formats */
    uint32_t mask_a, mask_b;
    int sza, szb, szo;
    SuperAcc *sacc;       /* exact model */
    int64_t k;
    /* binary64 kernel */
    double *pt;           /* 65536 products (index a << 8 | b), rounded into fp if has_prod */
    float *ptf;           /* the same as binary32 numbers, when the accumulator is binary32 rounded
                             to nearest even and every product and sum is a normal binary32 (or 0) */
    uint8_t *pfl, *pcat;  /* their flags; 1: NaN or infinity */
    double *accdec;       /* decodings of the accumulator's codes (NULL: binary32) */
    double *promdec;      /* decodings of the running sum's codes (NULL: binary32) */
    /* exact model: values of every code as integers (units 2^fmt_low), flags, 1 for NaN/inf */
    int64_t *via, *vib;
    uint8_t *fla, *flb, *cta, *ctb;
    /* 16-bit accumulators by their fma: the table, B's codes in the accumulator format
       (k x p16), A's conversion, the denormal flags of B */
    const sfp8f_a16 *t16;
    uint16_t *b16, ca16[256];
    int64_t p16;
    unsigned flb_all;
    sfp8f_rnd racc, rprom;
    uint32_t zacc[2], zprom[2];
} gctx;

static inline uint32_t ld_code(const char *p, int sz)
{
    if (sz == 1) return *(const uint8_t *)p;
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static void st_out(char *o, int sz, uint64_t v)
{
    if (sz == 1) {
        *(uint8_t *)o = (uint8_t)v;
    } else if (sz == 2) {
        uint16_t w = (uint16_t)v;
        memcpy(o, &w, 2);
    } else if (sz == 4) {
        uint32_t w = (uint32_t)v;
        memcpy(o, &w, 4);
    } else {
        memcpy(o, &v, 8);
    }
}

/* s(i, l, j) = sa(i, l) * sb(l, j) rounded once to binary32 (nearest even) */
static void scale_at(const sfp8g_model *md, int64_t i, int64_t l, int64_t j, gval *s, uint8_t *fl)
{
    gval x = GV_ONE, y = GV_ONE, pr;
    if (!md->sa.s && !md->sb.s) {
        *s = GV_ONE;
        return;
    }
    if (md->sa.s) gv_decode(&sfp8_binary32, md->sa.s[(i / md->sa.br) * md->sa.rs + (l / md->sa.bc) * md->sa.cs], &x);
    if (md->sb.s) gv_decode(&sfp8_binary32, md->sb.s[(l / md->sb.br) * md->sb.rs + (j / md->sb.bc) * md->sb.cs], &y);
    *fl |= x.fl | y.fl;
    gv_mul(&x, &y, &pr, fl);
    gv_decode(&sfp8_binary32, gv_round(&sfp8_binary32, &ENV_RNE, &pr, fl), s);
    s->fl = 0;
}

/* chunk end after product l (0-based) */
static inline int chunk_end(const sfp8g_model *md, int64_t l, int64_t k)
{
    return md->promote && ((l + 1) % md->promote == 0 || l + 1 == k);
}

/* lowest bit and top of a storage format's values, binary32's for scales */
static int64_t fmt_low(const sfp8_format *f) { return (int64_t)-f->bias - f->man_bits; }
static int64_t fmt_top(const sfp8_format *f) { return ((int64_t)1 << f->exp_bits) - f->bias + 1; }

static void exact_init(gctx *g)
{
    const sfp8g_model *md = g->md;
    int scaled = md->sa.s || md->sb.s;
    int64_t low = fmt_low(&md->fa) + fmt_low(&md->fb) + (scaled ? -149 : 0);
    int64_t span = fmt_top(&md->fa) - fmt_low(&md->fa) + fmt_top(&md->fb) - fmt_low(&md->fb) + (scaled ? 129 + 149 : 0);
    SuperAcc *a = g->sacc;
    a->qmin = low;
    a->nlimbs = (int)((span + 66 + 63) / 64);
    a->nan = a->snan = a->pinf = a->ninf = a->nonzero = a->pos_zero = a->neg_zero = 0;
    a->nan_code = a->inf_code = 0;
    memset(a->limb, 0, (size_t)a->nlimbs * sizeof(uint64_t));
}

/* the exact model: round_out(sum over l of a_il * b_lj * s(i, l, j)) */
static uint64_t element_exact(gctx *g, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B, ptrdiff_t bk,
                              ptrdiff_t bp, int64_t i, int64_t j, uint8_t *fl)
{
    const sfp8g_model *md = g->md;
    SuperAcc *sa = g->sacc;
    gval s = GV_ONE, x, t;
    int64_t sblk = -1;
    exact_init(g);
    for (int64_t l = 0; l < g->k; l++) {
        const gval *va = &g->da[ld_code(A + i * am + l * ak, g->sza) & g->mask_a];
        const gval *vb = &g->db[ld_code(B + l * bk + j * bp, g->szb) & g->mask_b];
        int64_t blk = md->kblock ? l / md->kblock : 0;
        if (blk != sblk) {
            scale_at(md, i, l, j, &s, fl);
            sblk = blk;
        }
        *fl |= va->fl | vb->fl;
        gv_mul(va, vb, &x, fl);
        gv_mul(&x, &s, &t, fl);
        switch (t.cls) {
        case GV_NAN: sa->nan = 1; break;
        case GV_INF:
            if (t.neg) sa->ninf = 1;
            else sa->pinf = 1;
            break;
        case GV_ZERO:
            if (t.neg) sa->neg_zero = 1;
            else sa->pos_zero = 1;
            break;
        default:
            sa->nonzero = 1;
            acc_add_mag(sa, t.sig, t.exp - sa->qmin, t.neg);
        }
    }
    if (sa->nan || (sa->pinf && sa->ninf)) {
        gval nan = {GV_NAN, 0, 0, 0, 0, 0};
        if (!sa->nan) *fl |= SFP8_FLAG_INVALID;
        return gv_round(&md->fout, &md->envout, &nan, fl);
    }
    if (sa->pinf || sa->ninf) {
        gval inf = {GV_INF, (uint8_t)sa->ninf, 0, 0, 0, 0};
        return gv_round(&md->fout, &md->envout, &inf, fl);
    }
    if (!sa->nonzero) { /* only zeros: x + x = x; +0 + -0 is an exact zero sum (-0 rounding downward) */
        gval z = {GV_ZERO, (uint8_t)(sa->pos_zero && sa->neg_zero ? md->envout.rounding == SFP8_ROUND_DOWNWARD
                                                                 : sa->neg_zero),
                  0, 0, 0, 0};
        return gv_round(&md->fout, &md->envout, &z, fl);
    }
    return acc_round_float(sa, &md->fa, &md->fout, &md->envout, fl); /* cancellation: -0 only rounding downward */
}

/* every other model, one element, in the core */
static uint64_t element_model(gctx *g, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B, ptrdiff_t bk,
                              ptrdiff_t bp, int64_t i, int64_t j, uint8_t *fl)
{
    const sfp8g_model *md = g->md;
    gval acc = {GV_ZERO, 0, 0, 0, 0, 0}, F = acc, x, s, t;
    int aemp = 1, femp = 1;
    for (int64_t l = 0; l < g->k; l++) {
        const gval *va = &g->da[ld_code(A + i * am + l * ak, g->sza) & g->mask_a];
        const gval *vb = &g->db[ld_code(B + l * bk + j * bp, g->szb) & g->mask_b];
        uint64_t c;
        *fl |= va->fl | vb->fl;
        gv_mul(va, vb, &x, fl);
        if (md->has_prod) gv_decode(&md->fp, gv_round(&md->fp, &md->envp, &x, fl), &x);
        c = aemp ? gv_round(&md->facc, &md->envacc, &x, fl) : gv_add_round(&md->facc, &md->envacc, &acc, &x, fl);
        gv_decode(&md->facc, c, &acc);
        aemp = 0;
        if (chunk_end(md, l, g->k)) {
            if (md->kblock) scale_at(md, i, l, j, &s, fl);
            else s = GV_ONE;
            gv_mul(&acc, &s, &t, fl);
            c = femp ? gv_round(&md->fprom, &md->envprom, &t, fl) : gv_add_round(&md->fprom, &md->envprom, &F, &t, fl);
            gv_decode(&md->fprom, c, &F);
            femp = 0;
            aemp = 1;
            memset(&acc, 0, sizeof acc);
        }
    }
    /* S: the running sum (promotion) or the accumulator; +0 if empty */
    x = md->promote ? F : acc;
    if (md->kblock) s = GV_ONE;
    else scale_at(md, i, 0, j, &s, fl);
    gv_mul(&x, &s, &t, fl);
    return gv_round(&md->fout, &md->envout, &t, fl);
}

/* ---- the binary64 kernel: 8-bit operands, an accumulator sfp8f_rounder
 * covers, deterministic rounding.  Products come from a table of the generic
 * kernel's own products (exact, or rounded into fp by the core); sums are
 * rounded to odd at 53 bits (exact decisions for <= 51-bit formats) and then
 * rounded by sfp8f_round_doubles; a NaN or infinity anywhere sends the block
 * to the generic kernel. ---- */

#define FB 16 /* columns per block */

static double gv_double(const gval *v)
{
    if (v->cls == GV_ZERO) return v->neg ? -0.0 : 0.0;
    return v->neg ? -ldexp((double)v->sig, (int)v->exp) : ldexp((double)v->sig, (int)v->exp);
}

static void double_gv(double d, gval *v)
{
    int e;
    double m;
    memset(v, 0, sizeof *v);
    v->neg = (uint8_t)signbit(d);
    if (d == 0) return;
    v->cls = GV_FIN;
    m = frexp(fabs(d), &e); /* exact: d is a finite binary64 */
    v->sig = (uint64_t)ldexp(m, 53);
    v->exp = (int64_t)e - 53;
}

/* 1 if the values of f (and their products with binary32 scales) are normal binary64 numbers */
static int fast_range(const sfp8_format *f)
{
    if (f->bits > 16) return f == &sfp8_binary32 || (f->exp_bits == 8 && f->man_bits == 23);
    return fmt_low(f) - 149 >= -1000 && fmt_top(f) + 129 <= 1000;
}

/* binary64 values of every code of a storage format; specials as infinity (not finite) */
static double *double_table(const sfp8_format *f)
{
    uint32_t n = (uint32_t)1 << f->bits;
    double *t = malloc(n * sizeof(double));
    if (t)
        for (uint32_t c = 0; c < n; c++) {
            gval v;
            gv_decode(f, c, &v);
            t[c] = v.cls <= GV_FIN ? gv_double(&v) : (double)INFINITY;
        }
    return t;
}

static int same_value(const gval *x, const gval *y)
{
    return x->cls == y->cls && x->neg == y->neg && x->sig == y->sig && x->exp == y->exp;
}

/* codes in facc of every 8-bit code of f (0: some finite value is not exact there) */
static int embed(const gctx *g, const gval *d, uint32_t mask, uint16_t *to, uint8_t *fl, uint8_t *cat)
{
    const sfp8g_model *md = g->md;
    for (uint32_t c = 0; c < 256; c++) {
        const gval *v = &d[c & mask];
        fl[c] = v->fl;
        cat[c] = v->cls > GV_FIN;
        to[c] = 0;
        if (!cat[c]) {
            uint8_t f = 0;
            gval w;
            uint64_t code = gv_round(&md->facc, &md->envacc, v, &f);
            gv_decode(&md->facc, code, &w);
            if (f || !same_value(v, &w)) return 0;
            to[c] = (uint16_t)code;
        }
    }
    return 1;
}

static int fma16_init(gctx *g, const char *B, ptrdiff_t bk, ptrdiff_t bp, int64_t p)
{
    const sfp8g_model *md = g->md;
    uint16_t cb16[256];
    unsigned ctb_all = 0;
    if (md->has_prod || md->facc.bits <= 8 || !md->facc.is_signed || md->facc.specials == SFP8_SPECIALS_FNUZ ||
        !(g->t16 = sfp8f_arith16(&md->facc, &md->envacc, PTRDIFF_MAX)))
        return 0;
    g->fla = malloc(512);
    g->cta = malloc(512);
    g->b16 = malloc((size_t)(g->k * p) * 2 + 2);
    if (!g->fla || !g->cta || !g->b16) return -1;
    g->flb = g->fla + 256;
    g->ctb = g->cta + 256;
    if (!embed(g, g->da, g->mask_a, g->ca16, g->fla, g->cta) || !embed(g, g->db, g->mask_b, cb16, g->flb, g->ctb))
        return 0;
    for (int64_t l = 0; l < g->k; l++)
        for (int64_t j = 0; j < p; j++) {
            uint8_t c = *(const uint8_t *)(B + l * bk + j * bp);
            g->b16[l * p + j] = cb16[c];
            g->flb_all |= g->flb[c];
            ctb_all |= g->ctb[c];
        }
    g->p16 = p;
    return !ctb_all; /* a NaN or infinity in B: the binary64 kernel (and the core for its blocks) */
}

static int fast_init(gctx *g)
{
    const sfp8g_model *md = g->md;
    const sfp8_format *pf = md->has_prod ? &md->fp : NULL;
    if (md->exact || md->fa.bits > 8 || md->fb.bits > 8 || !sfp8f_rounder(&md->facc, &md->envacc, &g->racc) ||
        !sfp8f_rounder(&md->fprom, &md->envprom, &g->rprom) || !fast_range(&md->facc) || !fast_range(&md->fprom) ||
        (pf && !fast_range(pf)) || !fast_range(&md->fa) || !fast_range(&md->fb))
        return 0;
    g->pt = malloc(65536 * sizeof(double));
    g->pfl = malloc(65536);
    g->pcat = malloc(65536);
    if (!g->pt || !g->pfl || !g->pcat) return -1;
    for (uint32_t a = 0; a < 256; a++)
        for (uint32_t b = 0; b < 256; b++) {
            const gval *va = &g->da[a & g->mask_a], *vb = &g->db[b & g->mask_b];
            uint8_t fl = va->fl | vb->fl;
            gval x;
            gv_mul(va, vb, &x, &fl);
            if (pf) gv_decode(pf, gv_round(pf, &md->envp, &x, &fl), &x);
            g->pt[a << 8 | b] = x.cls <= GV_FIN ? gv_double(&x) : 0.0;
            g->pcat[a << 8 | b] = x.cls > GV_FIN;
            g->pfl[a << 8 | b] = fl;
        }
    if (md->facc.bits == 32 && md->envacc.rounding == SFP8_ROUND_NEAREST_EVEN &&
        (pf ? fmt_low(pf) : fmt_low(&md->fa) + fmt_low(&md->fb)) >= -126 &&
        (pf ? fmt_top(pf) : fmt_top(&md->fa) + fmt_top(&md->fb)) <= 127) {
        /* products (multiples of 2^-126 or coarser, below 2^127) are binary32 numbers and
           every binary32 sum of them is a normal number or zero: no underflow */
        if (!(g->ptf = malloc(65536 * sizeof(float)))) return -1;
        for (uint32_t c = 0; c < 65536; c++) g->ptf[c] = (float)g->pt[c];
    }
    if ((md->facc.bits <= 16 && !(g->accdec = double_table(&md->facc))) ||
        (md->fprom.bits <= 16 && !(g->promdec = double_table(&md->fprom))))
        return -1;
    for (int s = 0; s < 2; s++) {
        uint8_t fl = 0;
        g->zacc[s] = (uint32_t)sfp8_round_value(&md->facc, s, 0, 0, 0, &md->envacc, &fl);
        g->zprom[s] = (uint32_t)sfp8_round_value(&md->fprom, s, 0, 0, 0, &md->envprom, &fl);
    }
    return 1;
}

static inline double f32_double(uint32_t c)
{
    float f;
    memcpy(&f, &c, 4);
    return (double)f;
}

/* v[jj] = (first ? q[jj] : v[jj] + q[jj]) rounded by r; zeros by IEEE's sign
 * rule; returns 0 if a result is not finite */
static int fast_round(const sfp8f_rnd *r, const uint32_t *z, const double *dec, int down, int first, double *v,
                      const double *q, int n, unsigned *fl)
{
    double d[FB] = {0};
    uint32_t code[FB];
    int ok = 1;
    for (int jj = 0; jj < n; jj++) {
        if (first) {
            d[jj] = q[jj];
        } else {
            double s;
            uint64_t b = sfp8f_odd_sum(v[jj], q[jj], &s);
            memcpy(&d[jj], &b, 8);
        }
    }
    *fl |= sfp8f_round_doubles(r, d, n, code);
    for (int jj = 0; jj < n; jj++) {
        double x;
        if (d[jj] == 0) { /* x + y = 0: the common sign of the operands, else -0 only rounding downward */
            int neg = first ? signbit(q[jj]) != 0
                            : (signbit(v[jj]) != 0) == (signbit(q[jj]) != 0) ? signbit(v[jj]) != 0 : down;
            code[jj] = z[neg];
        }
        x = dec ? dec[code[jj]] : f32_double(code[jj]);
        ok &= fabs(x) <= 1.7976931348623157e308;
        v[jj] = x;
    }
    return ok;
}

/* promotion of the accumulators acc[0 .. n-1] (columns j0 ..) after product l:
 * F = round_prom(F + acc * s) (first: F = round_prom(acc * s)); 0: the generic kernel */
static int fast_promote(gctx *g, int64_t i, int64_t l, int64_t j0, int n, const double *acc, double *F, int first,
                        unsigned *fl, uint8_t *fl8)
{
    const sfp8g_model *md = g->md;
    double q[FB];
    for (int jj = 0; jj < n; jj++) {
        gval s = GV_ONE;
        if (md->kblock) scale_at(md, i, l, j0 + jj, &s, fl8);
        if (s.cls != GV_FIN) return 0; /* a scale product that overflowed or underflowed */
        q[jj] = acc[jj] * gv_double(&s); /* exact: at most 48 significant bits, normal */
    }
    return fast_round(&g->rprom, g->zprom, g->promdec, md->envprom.rounding == SFP8_ROUND_DOWNWARD, first, F, q, n,
                      fl);
}

/* the outputs of columns j0 .. j0 + n - 1: round_out(S * s), S = sum[jj] (NULL: +0) */
static void fast_final(gctx *g, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0, int n, const double *sum,
                       uint8_t *fl8)
{
    const sfp8g_model *md = g->md;
    for (int jj = 0; jj < n; jj++) {
        gval s = GV_ONE, x, t;
        double_gv(sum ? sum[jj] : 0.0, &x);
        if (!md->kblock) scale_at(md, i, 0, j0 + jj, &s, fl8);
        gv_mul(&x, &s, &t, fl8);
        st_out(O + i * om + (j0 + jj) * op, g->szo, gv_round(&md->fout, &md->envout, &t, fl8));
    }
}

/* ---- 16-bit accumulators whose format holds every operand value exactly:
 * acc = round_acc(acc + a * b) is the accumulator format's fma, run by the
 * fast path of 16-bit arithmetic (sfp8f_run_arith16, SIMD lanes of a block of
 * columns); the first product of a chunk is fma(a, b, z) with z the zero that
 * leaves a * b's zero sign (-0, +0 when rounding downward).  Reading a
 * subnormal accumulator raises denormal in the fma: masked (the model raises
 * it for A and B only, from their own formats). ---- */

#define FB16 256 /* columns per block of this kernel */

static int fma16_block(gctx *g, const char *A, ptrdiff_t am, ptrdiff_t ak, char *O, ptrdiff_t om, ptrdiff_t op,
                       int64_t i, int64_t j0, int n, unsigned *flout)
{
    const sfp8g_model *md = g->md;
    uint16_t arow[FB16], acc16[FB16], zrow[FB16];
    double acc[FB16], F[FB16];
    unsigned fl = 0, afl = 0, cat = 0;
    uint8_t fl8 = 0;
    int aemp = 1, femp = 1;
    uint16_t z = (uint16_t)g->zacc[md->envacc.rounding != SFP8_ROUND_DOWNWARD];
    for (int jj = 0; jj < n; jj++) zrow[jj] = z;
    for (int64_t l0 = 0; l0 < g->k;) {
        int64_t l1 = md->promote && g->k - l0 > md->promote ? l0 + md->promote : g->k;
        for (int64_t l = l0; l < l1; l++) {
            uint8_t ca = *(const uint8_t *)(A + i * am + l * ak);
            const uint16_t *brow = g->b16 + l * g->p16 + j0;
            uint16_t a16 = g->ca16[ca];
            afl |= g->fla[ca];
            cat |= g->cta[ca];
            for (int jj = 0; jj < n; jj++) arow[jj] = a16;
            fl |= sfp8f_run_arith16(g->t16, X_FMA, &md->facc, &md->envacc, (const char *)arow, 2,
                                    (const char *)brow, 2, (const char *)(l == l0 ? zrow : acc16), 2,
                                    (char *)acc16, 2, n, NULL);
        }
        if (cat) return 0;
        for (int jj = 0; jj < n; jj++) {
            acc[jj] = g->accdec[acc16[jj]];
            if (!(fabs(acc[jj]) <= 1.7976931348623157e308)) return 0; /* NaN or infinity: the core */
        }
        aemp = 0;
        if (md->promote) {
            for (int j = 0; j < n; j += FB)
                if (!fast_promote(g, i, l1 - 1, j0 + j, n - j < FB ? n - j : FB, acc + j, F + j, femp, &fl, &fl8))
                    return 0;
            femp = 0;
            aemp = 1;
        }
        l0 = l1;
    }
    fast_final(g, O, om, op, i, j0, n, md->promote ? (femp ? NULL : F) : (aemp ? NULL : acc), &fl8);
    *flout |= (fl & ~SFP8_FLAG_DENORMAL) | (g->k ? afl | g->flb_all : 0) | fl8;
    return 1;
}

/* row i, columns j0 .. j0 + n - 1; 0: leave the block to the generic kernel */
static int fast_block(gctx *g, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B, ptrdiff_t bk, ptrdiff_t bp,
                      char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0, int n, unsigned *flout)
{
    const sfp8g_model *md = g->md;
    double acc[FB], F[FB], q[FB];
    unsigned fl = 0, cat = 0;
    uint8_t fl8 = 0;
    int aemp = 1, femp = 1;
    int down = md->envacc.rounding == SFP8_ROUND_DOWNWARD;
    if (g->t16) return fma16_block(g, A, am, ak, O, om, op, i, j0, n, flout);
    for (int64_t l0 = 0; l0 < g->k;) {
        int64_t l1 = md->promote && g->k - l0 > md->promote ? l0 + md->promote : g->k; /* one chunk */
        if (g->ptf) { /* binary32, nearest even: IEEE binary32 addition, inexact by TwoSum */
            float af[FB];
            int inex = 0;
            for (int64_t l = l0; l < l1; l++) {
                uint32_t ca = (uint32_t)*(const uint8_t *)(A + i * am + l * ak) << 8;
                const char *brow = B + l * bk + j0 * bp;
                if (l == l0) {
                    for (int jj = 0; jj < n; jj++) { /* exact: the product is a binary32 number */
                        uint32_t idx = ca | *(const uint8_t *)(brow + jj * bp);
                        af[jj] = g->ptf[idx];
                        fl |= g->pfl[idx];
                        cat |= g->pcat[idx];
                    }
                    continue;
                }
                for (int jj = 0; jj < n; jj++) {
                    uint32_t idx = ca | *(const uint8_t *)(brow + jj * bp);
                    float pv = g->ptf[idx], x = af[jj], sum = x + pv, bb = sum - x;
                    fl |= g->pfl[idx];
                    cat |= g->pcat[idx];
                    inex |= ((x - (sum - bb)) + (pv - bb)) != 0;
                    af[jj] = sum;
                }
            }
            if (cat) return 0;
            for (int jj = 0; jj < n; jj++) {
                if (!(fabsf(af[jj]) <= 3.4028234663852886e38f)) return 0; /* overflow: the core */
                acc[jj] = af[jj];
            }
            if (inex) fl |= SFP8_FLAG_INEXACT;
        } else {
            for (int64_t l = l0; l < l1; l++) {
                uint32_t ca = (uint32_t)*(const uint8_t *)(A + i * am + l * ak) << 8;
                const char *brow = B + l * bk + j0 * bp;
                for (int jj = 0; jj < n; jj++) {
                    uint32_t idx = ca | *(const uint8_t *)(brow + jj * bp);
                    q[jj] = g->pt[idx];
                    fl |= g->pfl[idx];
                    cat |= g->pcat[idx];
                }
                if (cat) return 0;
                if (!fast_round(&g->racc, g->zacc, g->accdec, down, l == l0, acc, q, n, &fl)) return 0;
            }
        }
        aemp = 0;
        if (md->promote) {
            if (!fast_promote(g, i, l1 - 1, j0, n, acc, F, femp, &fl, &fl8)) return 0;
            femp = 0;
            aemp = 1;
        }
        l0 = l1;
    }
    fast_final(g, O, om, op, i, j0, n, md->promote ? (femp ? NULL : F) : (aemp ? NULL : acc), &fl8);
    *flout |= fl | fl8;
    return 1;
}

/* ---- the exact model for 8-bit operands: integer products summed in 128
 * bits (exact), rounded once by the core ---- */

static int int_table(const gctx *g, const gval *d, uint32_t mask, const sfp8_format *f, int64_t *v, uint8_t *fl,
                     uint8_t *cat)
{
    (void)g;
    if (fmt_top(f) - fmt_low(f) > 40) return 0;
    for (uint32_t c = 0; c < 256; c++) {
        const gval *x = &d[c & mask];
        int64_t m = x->cls == GV_FIN ? (int64_t)(x->sig << (x->exp - fmt_low(f))) : 0;
        v[c] = x->neg ? -m : m;
        fl[c] = x->fl;
        cat[c] = x->cls > GV_FIN;
    }
    return 1;
}

static int exact_fast_init(gctx *g)
{
    const sfp8g_model *md = g->md;
    if (!md->exact || md->kblock || md->fa.bits > 8 || md->fb.bits > 8 || g->k >= ((int64_t)1 << 40)) return 0;
    g->via = malloc(512 * sizeof(int64_t));
    g->fla = malloc(512);
    g->cta = malloc(512);
    if (!g->via || !g->fla || !g->cta) return -1;
    g->vib = g->via + 256;
    g->flb = g->fla + 256;
    g->ctb = g->cta + 256;
    return int_table(g, g->da, g->mask_a, &md->fa, g->via, g->fla, g->cta) &&
           int_table(g, g->db, g->mask_b, &md->fb, g->vib, g->flb, g->ctb);
}

/* row i, columns j0 .. j0 + n - 1 of the exact model; 0: the generic kernel */
static int exact_block(gctx *g, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B, ptrdiff_t bk, ptrdiff_t bp,
                       char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0, int n, unsigned *flout)
{
    const sfp8g_model *md = g->md;
    __int128 S[FB];
    unsigned fl = 0, cat = 0;
    uint8_t fl8 = 0;
    memset(S, 0, sizeof S);
    for (int64_t l = 0; l < g->k; l++) {
        uint8_t ca = *(const uint8_t *)(A + i * am + l * ak);
        const char *brow = B + l * bk + j0 * bp;
        int64_t va = g->via[ca];
        fl |= g->fla[ca];
        cat |= g->cta[ca];
        for (int jj = 0; jj < n; jj++) {
            uint8_t cb = *(const uint8_t *)(brow + jj * bp);
            S[jj] += (__int128)va * g->vib[cb];
            fl |= g->flb[cb];
            cat |= g->ctb[cb];
        }
    }
    if (cat) return 0;
    for (int jj = 0; jj < n; jj++) {
        gval s = GV_ONE;
        int neg = S[jj] < 0, sticky = 0, bl;
        unsigned __int128 mag = neg ? -(unsigned __int128)S[jj] : (unsigned __int128)S[jj];
        int64_t e = fmt_low(&md->fa) + fmt_low(&md->fb);
        uint64_t r;
        if (g->k) scale_at(md, i, 0, j0 + jj, &s, &fl8); /* as the generic kernel: computed when used */
        if (s.cls != GV_FIN) return 0; /* a scale product that overflowed or underflowed */
        if (mag == 0) { /* -0 only if every product is -0, or rounding downward after cancellation */
            int nz = 0, pz = 0, mz = 0;
            for (int64_t l = 0; l < g->k; l++) {
                uint8_t ca = *(const uint8_t *)(A + i * am + l * ak), cb = *(const uint8_t *)(B + l * bk + (j0 + jj) * bp);
                int zneg = g->da[ca & g->mask_a].neg ^ g->db[cb & g->mask_b].neg;
                if (g->via[ca] && g->vib[cb]) nz = 1;
                else if (zneg) mz = 1;
                else pz = 1;
            }
            neg = nz || (pz && mz) ? md->envout.rounding == SFP8_ROUND_DOWNWARD : mz;
            r = sfp8_round_value(&md->fout, neg, 0, 0, 0, &md->envout, &fl8);
        } else {
            if ((uint64_t)(mag >> 64)) {
                if (s.sig != 1) return 0; /* a scaled sum of more than 64 bits: the generic kernel */
            } else {
                mag *= s.sig; /* at most 64 + 24 bits */
            }
            e += s.exp;
            bl = (uint64_t)(mag >> 64) ? 64 + bitlen64((uint64_t)(mag >> 64)) : bitlen64((uint64_t)mag);
            if (bl > 64) {
                int sh = bl - 64;
                sticky = (mag & (((unsigned __int128)1 << sh) - 1)) != 0;
                mag >>= sh;
                e += sh;
            }
            r = sfp8_round_value(&md->fout, neg, (uint64_t)mag, e, sticky, &md->envout, &fl8);
        }
        st_out(O + i * om + (j0 + jj) * op, g->szo, r);
    }
    *flout |= fl | fl8;
    return 1;
}

static gval *decode_table(const sfp8_format *f)
{
    uint32_t n = (uint32_t)1 << f->bits;
    gval *t = malloc(n * sizeof *t);
    if (t)
        for (uint32_t c = 0; c < n; c++) gv_decode(f, c, &t[c]);
    return t;
}

static int out_size(const sfp8_format *f) { return f->bits <= 8 ? 1 : f->bits <= 16 ? 2 : f->bits / 8; }

/* the state shared by the kernels: sizes, masks and decoding tables (NULL: no memory) */
static void gctx_init(gctx *g, const sfp8g_model *md, int64_t k)
{
    memset(g, 0, sizeof *g);
    g->md = md;
    g->k = k;
    g->sza = out_size(&md->fa);
    g->szb = out_size(&md->fb);
    g->szo = out_size(&md->fout);
    g->mask_a = sfp8_code_mask(&md->fa);
    g->mask_b = sfp8_code_mask(&md->fb);
    g->da = decode_table(&md->fa);
    g->db = decode_table(&md->fb);
}

unsigned sfp8g_gemm(const sfp8g_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                    ptrdiff_t bk, ptrdiff_t bp, char *O, ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k,
                    int64_t p, int use_fast)
{
    gctx g;
    unsigned flags = 0, tok = sfp8f_read_begin(); /* cached tables (t16) live until read_end */
    int fast = 0, bw;
    gctx_init(&g, md, k);
    if (!g.da || !g.db) goto nomem;
    if (md->exact && !(g.sacc = malloc(sizeof(SuperAcc)))) goto nomem;
    /* the model kernels' tables (65,536 products, decodings) are built when the call
       repays them, or always in eager mode (SOFTFP8_FAST=2), as the fast paths' tables */
    if (use_fast && m * p > 0 && (md->exact || use_fast >= 2 || m * k * p >= 65536) &&
        (fast = md->exact ? exact_fast_init(&g) : fast_init(&g)) < 0)
        goto nomem;
    if (fast && !md->exact) {
        int r = fma16_init(&g, B, bk, bp, p);
        if (r < 0) goto nomem;
        if (!r) g.t16 = NULL;
    }
    bw = g.t16 ? FB16 : FB;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j0 = 0; j0 < p; j0 += bw) {
            int n = p - j0 < bw ? (int)(p - j0) : bw;
            if (fast && (md->exact ? exact_block : fast_block)(&g, A, am, ak, B, bk, bp, O, om, op, i, j0, n, &flags))
                continue;
            for (int64_t j = j0; j < j0 + n; j++) {
                uint8_t fl = 0;
                uint64_t r = md->exact ? element_exact(&g, A, am, ak, B, bk, bp, i, j, &fl)
                                       : element_model(&g, A, am, ak, B, bk, bp, i, j, &fl);
                st_out(O + i * om + j * op, g.szo, r);
                flags |= fl;
            }
        }
    goto done;
nomem:
    flags = SFP8G_NOMEM;
done:
    free(g.da);
    free(g.db);
    free(g.sacc);
    free(g.pt);
    free(g.ptf);
    free(g.via);
    free(g.fla);
    free(g.cta);
    free(g.b16);
    sfp8f_read_end(tok);
    free(g.pfl);
    free(g.pcat);
    free(g.accdec);
    free(g.promdec);
    return flags;
}

/* the low 24 bits of d's significand (0: d has at most 29 significant bits) */
static inline uint64_t d_lowbits(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b & 0xFFFFFFu;
}

/* one code of an operand format, for sfp8g_gemm_f64's scan of rows and columns */
typedef struct {
    double mag;        /* |value| (0 for zeros) */
    int64_t lo;        /* exponent of the lowest set bit (INT64_MAX / 4 for zeros) */
    uint8_t neg, fl;   /* sign bit; denormal flag when read */
    uint8_t bad;       /* NaN or infinity */
} f64code;

static int f64_table(const gval *d, int bits, f64code **out)
{
    uint32_t n = (uint32_t)1 << bits;
    f64code *t = malloc(n * sizeof *t);
    if (!t) return 0;
    for (uint32_t c = 0; c < n; c++) {
        const gval *v = &d[c];
        t[c].neg = v->neg;
        t[c].fl = v->fl;
        t[c].bad = v->cls > GV_FIN;
        t[c].mag = v->cls == GV_FIN ? ldexp((double)v->sig, (int)v->exp) : 0.0;
        t[c].lo = v->cls == GV_FIN ? v->exp + __builtin_ctzll(v->sig) : INT64_MAX / 4;
    }
    *out = t;
    return 1;
}

/* binary32 results of one row of sfp8g_gemm_f64 (nearest even, per-tensor scale product sd)
 * straight from D: y = d * sd and its exact error e = fma(d, sd, -y) (exact: |y| >= 2^-127
 * keeps the error far above binary64's subnormals), so d * sd = y + e exactly.  (float)y is
 * the nearest-even rounding of y + e unless y is a binary32 midpoint and e != 0 (y and
 * y + e lie on the same side of every other midpoint, and a binary32 number y is the
 * rounding of y + e as |e| <= ulp64(y) / 2): then the neighbour on e's side, 2y - (float)y.
 * Inexact iff e != 0 or (float)y != y.  Only results in binary32's normal range,
 * 2^-126 < |r| <= max, are written (no underflow or overflow flag can arise); every other
 * element (zero rows, a failed exactness test, d = 0, out of range) is listed in left[]
 * for the general code.  Returns the number listed; *fl gets INEXACT. */
static inline __attribute__((always_inline)) int64_t f32_row_body(const double *D, const double *mb, double mai,
                                                                   double sd, int64_t p, char *o, ptrdiff_t op,
                                                                   int64_t *left, unsigned *fl)
{
    int64_t nl = 0;
    unsigned inx = 0;
    for (int64_t j = 0; j < p; j++) {
        double d = D[j], y, e, fd;
        float f;
        uint64_t yb;
        if (!(d != 0 && mb[j] != 0 && mai * mb[j] < 0x1p51)) { /* mai != 0: the caller's test */
            left[nl++] = j;
            continue;
        }
        y = d * sd;
        e = fma(d, sd, -y);
        f = (float)y;
        if (!(fabsf(f) > 0x1p-126f && fabsf(f) <= 3.4028234663852886e38f)) {
            left[nl++] = j;
            continue;
        }
        fd = (double)f;
        memcpy(&yb, &y, 8);
        if (e != 0 && (yb & 0x1FFFFFFFu) == 0x10000000u && (e > 0) != (fd > y)) { /* a midpoint, e decides */
            f = (float)(2 * y - fd);
            if (!(fabsf(f) > 0x1p-126f && fabsf(f) <= 3.4028234663852886e38f)) {
                left[nl++] = j;
                continue;
            }
        }
        inx |= (e != 0) | (fd != y);
        memcpy(o + j * op, &f, 4);
    }
    if (inx) *fl |= SFP8_FLAG_INEXACT;
    return nl;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* f32_row_body four elements at a time (AVX2 + FMA): the same tests, decided per lane
 * without branches (the adjusted neighbour r is checked for the normal range; a rounding
 * that is normal is not tiny before rounding either, and a finite one did not overflow);
 * lanes that fail go to left[] in order, as the scalar body lists them. */
__attribute__((target("avx2,fma"))) static int64_t f32_row_avx2(const double *D, const double *mb, double mai,
                                                                double sd, int64_t p, char *o, ptrdiff_t op,
                                                                int64_t *left, unsigned *fl)
{
    int64_t nl = 0, j = 0;
    const __m256d vsd = _mm256_set1_pd(sd), vmai = _mm256_set1_pd(mai), zero = _mm256_setzero_pd();
    const __m256d lim = _mm256_set1_pd(0x1p51), tiny = _mm256_set1_pd(0x1p-126);
    const __m256d big = _mm256_set1_pd(3.4028234663852886e38), absm = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
    const __m256i lowm = _mm256_set1_epi64x(0x1FFFFFFF), midb = _mm256_set1_epi64x(0x10000000);
    __m256d inx = zero;
    for (; j + 4 <= p; j += 4) {
        __m256d d = _mm256_loadu_pd(D + j), b = _mm256_loadu_pd(mb + j);
        __m256d ok = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(d, zero, _CMP_NEQ_OQ), _mm256_cmp_pd(b, zero, _CMP_NEQ_OQ)),
                                   _mm256_cmp_pd(_mm256_mul_pd(vmai, b), lim, _CMP_LT_OQ));
        __m256d y = _mm256_mul_pd(d, vsd);
        __m256d e = _mm256_fmsub_pd(d, vsd, y);
        __m256d fd = _mm256_cvtps_pd(_mm256_cvtpd_ps(y));
        __m256d mid = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(y), lowm), midb));
        __m256d ne = _mm256_cmp_pd(e, zero, _CMP_NEQ_OQ);
        __m256d side = _mm256_xor_pd(_mm256_cmp_pd(e, zero, _CMP_GT_OQ), _mm256_cmp_pd(fd, y, _CMP_GT_OQ));
        __m256d adj = _mm256_and_pd(_mm256_and_pd(mid, ne), side);
        __m256d r = _mm256_blendv_pd(fd, _mm256_sub_pd(_mm256_add_pd(y, y), fd), adj);
        __m256d ar = _mm256_and_pd(r, absm);
        __m128 rf;
        int okm;
        ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_cmp_pd(ar, tiny, _CMP_GT_OQ), _mm256_cmp_pd(ar, big, _CMP_LE_OQ)));
        inx = _mm256_or_pd(inx, _mm256_and_pd(ok, _mm256_or_pd(ne, _mm256_cmp_pd(r, y, _CMP_NEQ_OQ))));
        rf = _mm256_cvtpd_ps(r); /* exact: r is a binary32 number (or a lane not written) */
        okm = _mm256_movemask_pd(ok);
        if (okm == 0xF && op == 4) {
            _mm_storeu_ps((float *)(void *)(o + j * 4), rf);
        } else {
            float t[4];
            _mm_storeu_ps(t, rf);
            for (int q = 0; q < 4; q++) {
                if (okm >> q & 1) memcpy(o + (j + q) * op, &t[q], 4);
                else left[nl++] = j + q;
            }
        }
    }
    if (_mm256_movemask_pd(inx)) *fl |= SFP8_FLAG_INEXACT;
    if (j < p) {
        int64_t n2 = f32_row_body(D + j, mb + j, mai, sd, p - j, o + j * op, op, left + nl, fl);
        for (int64_t t = nl; t < nl + n2; t++) left[t] += j;
        nl += n2;
    }
    return nl;
}

#endif

static int64_t f32_row_c(const double *D, const double *mb, double mai, double sd, int64_t p, char *o, ptrdiff_t op,
                         int64_t *left, unsigned *fl)
{
    return f32_row_body(D, mb, mai, sd, p, o, op, left, fl); /* libm's fma: correctly rounded */
}

/* f64code's fields as separate arrays indexed by the raw byte (the format's mask applied),
 * for the scan of 8-bit operands */
typedef struct {
    int64_t lo[256];
    double mag[256];
    uint8_t neg[256], fl[256], bad[256];
} scan8tab;

static void scan8_fill(const f64code *t, uint32_t mask, scan8tab *s)
{
    for (uint32_t c = 0; c < 256; c++) {
        const f64code *v = &t[c & mask];
        s->lo[c] = v->lo;
        s->mag[c] = v->mag;
        s->neg[c] = v->neg;
        s->fl[c] = v->fl;
        s->bad[c] = v->bad;
    }
}

/* sfp8g_gemm_f64's scan for 8-bit operands: rows of A, then B row by row updating every
 * column's lowest bit, max and count of sign bits (contiguous reads); returns the OR of
 * the denormal flags, or SFP8G_NOTDONE for a NaN or infinity */
static unsigned scan8(const scan8tab *ta, const scan8tab *tb, const char *A, ptrdiff_t am, ptrdiff_t ak,
                      const char *B, ptrdiff_t bk, ptrdiff_t bp, int64_t m, int64_t k, int64_t p, int64_t *qa,
                      int64_t *qb, int64_t *rneg, int64_t *cneg, double *ma, double *mb)
{
    unsigned fl = 0, bad = 0;
    for (int64_t i = 0; i < m; i++) {
        const uint8_t *base = (const uint8_t *)(A + i * am);
        int64_t q = INT64_MAX / 4, ng = 0;
        double mx = 0.0;
        for (int64_t l = 0; l < k; l++) {
            uint8_t c = base[l * ak];
            q = ta->lo[c] < q ? ta->lo[c] : q;
            mx = ta->mag[c] > mx ? ta->mag[c] : mx;
            ng += ta->neg[c];
            fl |= ta->fl[c];
            bad |= ta->bad[c];
        }
        qa[i] = q;
        rneg[i] = ng;
        ma[i] = mx;
    }
    for (int64_t j = 0; j < p; j++) {
        qb[j] = INT64_MAX / 4;
        cneg[j] = 0;
        mb[j] = 0.0;
    }
    for (int64_t l = 0; l < k; l++) {
        const uint8_t *row = (const uint8_t *)(B + l * bk);
        for (int64_t j = 0; j < p; j++) {
            uint8_t c = row[j * bp];
            qb[j] = tb->lo[c] < qb[j] ? tb->lo[c] : qb[j];
            mb[j] = tb->mag[c] > mb[j] ? tb->mag[c] : mb[j];
            cneg[j] += tb->neg[c];
            fl |= tb->fl[c];
            bad |= tb->bad[c];
        }
    }
    return bad ? SFP8G_NOTDONE : fl;
}

/* ---- the exact model from a float64 GEMM (softfp8/gemm.py, _blas_exact; docs/training.md,
 * "Scaled matmul on BLAS") ----
 * D[i * dm + j]: the binary64 GEMM of the decoded operands.  Where
 * k max|a_i| max|b_j| < 2^(qa_i + qb_j + 51) (2^qa_i, 2^qb_j: the lowest bits present in
 * row i of A and column j of B), every partial sum of any order was an integer multiple of
 * 2^(qa_i + qb_j) below 2^53 of them, so D[i, j] is the exact dot product: it is scaled by
 * the per-tensor scale product and rounded once as exact_block rounds its sums; an exact
 * zero sum takes the products' zero signs (when a row or column is all zeros) or, with
 * every element failing the test, goes to element_exact.  Returns the flags,
 * SFP8G_NOMEM, or SFP8G_NOTDONE (nothing written: NaN or infinity in an operand, or a
 * scale product that is not a finite non-zero binary32). */
unsigned sfp8g_gemm_f64(const sfp8g_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                        ptrdiff_t bk, ptrdiff_t bp, const double *D, ptrdiff_t dm, char *O, ptrdiff_t om,
                        ptrdiff_t op, int64_t m, int64_t k, int64_t p)
{
    gctx g;
    unsigned flags = 0;
    uint8_t fl8 = 0;
    gval s = GV_ONE;
    int64_t *qa, *qb, *rneg, *cneg;
    double *ma, *mb;
    f64code *ta = NULL, *tb = NULL; /* per code: |value|, lowest bit, sign, flags */
    double *ybuf = NULL; /* one row of D * s rounded to odd (0: an element done otherwise) */
    uint64_t *rsp;
    uint32_t *cbuf;
    uint8_t *special;
    int down = md->envout.rounding == SFP8_ROUND_DOWNWARD;
    sfp8f_rnd rnd;
    int use_rnd = sfp8f_rounder(&md->fout, &md->envout, &rnd);
    /* binary32 output, nearest even: the hardware conversion where the result is normal */
    int f32rne = use_rnd && md->fout.bits == 32 && md->envout.rounding == SFP8_ROUND_NEAREST_EVEN;
    /* ... and binary32 results written straight from D by f32_row_* where they are normal */
    int f32row = f32rne && md->fout.exp_bits == 8 && md->fout.man_bits == 23 && out_size(&md->fout) == 4;
    int64_t *left;
    scan8tab *s8 = NULL; /* 8-bit operands: the scan's tables */
    int hw_fma = 0, ex8 = 0; /* ex8: 0 exact_block's tables not built yet, 1 built, 2 not applicable */
    double sd = 0;
    gctx_init(&g, md, k);
    g.sacc = malloc(sizeof(SuperAcc));
    qa = malloc((size_t)(m + p) * 2 * sizeof(int64_t) + 1);
    ma = malloc((size_t)(m + p) * sizeof(double) + 1);
    ybuf = malloc((size_t)p * (sizeof(double) + sizeof(uint64_t) + sizeof(uint32_t) + sizeof(int64_t) + 1) + 8);
    if (!g.da || !g.db || !g.sacc || !qa || !ma || !ybuf) {
        flags = SFP8G_NOMEM;
        goto done;
    }
    qb = qa + m;
    rneg = qb + p;
    cneg = rneg + m;
    rsp = (uint64_t *)(ybuf + p); /* one row: results of the elements not rounded by rnd */
    /* codes from rnd: below */
    left = (int64_t *)(rsp + p); /* the row's elements left to the general code */
    cbuf = (uint32_t *)(left + p);
    special = (uint8_t *)(cbuf + p);
    mb = ma + m;
    if (md->kblock || m * p == 0 || k == 0) {
        flags = SFP8G_NOTDONE;
        goto done;
    }
    if (!f64_table(g.da, md->fa.bits, &ta) || !f64_table(g.db, md->fb.bits, &tb)) {
        flags = SFP8G_NOMEM;
        goto done;
    }
    if (g.sza == 1 && g.szb == 1) {
        unsigned r;
        if (!(s8 = malloc(2 * sizeof *s8))) {
            flags = SFP8G_NOMEM;
            goto done;
        }
        scan8_fill(ta, g.mask_a, &s8[0]);
        scan8_fill(tb, g.mask_b, &s8[1]);
        r = scan8(&s8[0], &s8[1], A, am, ak, B, bk, bp, m, k, p, qa, qb, rneg, cneg, ma, mb);
        if (r & SFP8G_NOTDONE) {
            flags = SFP8G_NOTDONE;
            goto done;
        }
        flags |= r;
    }
    for (int64_t t = s8 ? m + p : 0; t < m + p; t++) { /* rows of A, then columns of B */
        const f64code *tab = t < m ? ta : tb;
        const char *base = t < m ? A + t * am : B + (t - m) * bp;
        ptrdiff_t step = t < m ? ak : bk;
        int sz = t < m ? g.sza : g.szb;
        uint32_t mask = t < m ? g.mask_a : g.mask_b;
        int64_t q = INT64_MAX / 4, ng = 0;
        double mx = 0.0;
        unsigned fl = 0, bad = 0;
        for (int64_t l = 0; l < k; l++) {
            const f64code *c = &tab[ld_code(base + l * step, sz) & mask];
            q = c->lo < q ? c->lo : q;
            mx = c->mag > mx ? c->mag : mx;
            ng += c->neg;
            fl |= c->fl;
            bad |= c->bad;
        }
        if (bad) {
            flags = SFP8G_NOTDONE;
            goto done;
        }
        flags |= fl;
        (t < m ? qa : qb - m)[t] = q;
        (t < m ? rneg : cneg - m)[t] = ng;
        ma[t] = mx; /* ma then mb: one array */
    }
    /* ma[i] = k max|a_i| / 2^qa_i, mb[j] = max|b_j| / 2^qb_j: the test is ma[i] mb[j] < 2^51
       (a zero row or column keeps 0) */
    for (int64_t i = 0; i < m; i++)
        if (ma[i] != 0) ma[i] = ldexp(ma[i] * (double)k, (int)-qa[i]);
    for (int64_t j = 0; j < p; j++)
        if (mb[j] != 0) mb[j] = ldexp(mb[j], (int)-qb[j]);
    scale_at(md, 0, 0, 0, &s, &fl8); /* per tensor: every element's scale product */
    if (s.cls != GV_FIN) {
        flags = SFP8G_NOTDONE;
        goto done;
    }
    sd = gv_double(&s);
#if defined(__x86_64__) && defined(__GNUC__)
    /* AVX2 + FMA lanes; SOFTFP8_SIMD=0 (or an older CPU): the portable body (libm's fma) */
    hw_fma = sfp8f_simd_level() >= 1 && __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
#endif
    for (int64_t i = 0; i < m; i++) {
        int64_t nl = p;
        if (f32row && ma[i] != 0) {
#if defined(__x86_64__) && defined(__GNUC__)
            if (hw_fma)
                nl = f32_row_avx2(D + i * dm, mb, ma[i], sd, p, O + i * om, op, left, &flags);
            else
#endif
                nl = f32_row_c(D + i * dm, mb, ma[i], sd, p, O + i * om, op, left, &flags);
        } else {
            for (int64_t j = 0; j < p; j++) left[j] = j;
        }
        for (int64_t t = 0; t < nl; t++) {
            int64_t j = left[t];
            double d = D[i * dm + j];
            int zrow = ma[i] == 0 || mb[j] == 0;
            uint64_t r;
            if (!zrow && !(d != 0 && ma[i] * mb[j] < 0x1p51)) {
                /* failed test, or a zero sum: 8-bit operands by exact_block's integer sums (built
                   on first use), else (or where it declines) the superaccumulator */
                if (!ex8) {
                    int rr = exact_fast_init(&g);
                    if (rr < 0) {
                        flags = SFP8G_NOMEM;
                        goto done;
                    }
                    ex8 = rr ? 1 : 2;
                }
                if (ex8 == 1 && exact_block(&g, A, am, ak, B, bk, bp, O, om, op, i, j, 1, &flags)) {
                    ybuf[t] = 0.0;
                    special[t] = 2; /* written */
                    continue;
                }
                r = element_exact(&g, A, am, ak, B, bk, bp, i, j, &fl8);
            } else if (zrow) { /* every product a zero: -0 if every one is -0 */
                int64_t cnt = 0;
                if (rneg[i] == 0 || rneg[i] == k)
                    cnt = rneg[i] ? k - cneg[j] : cneg[j];
                else if (cneg[j] == 0 || cneg[j] == k)
                    cnt = cneg[j] ? k - rneg[i] : rneg[i];
                else
                    for (int64_t l = 0; l < k; l++)
                        cnt += g.da[ld_code(A + i * am + l * ak, g.sza) & g.mask_a].neg ^
                               g.db[ld_code(B + l * bk + j * bp, g.szb) & g.mask_b].neg;
                r = sfp8_round_value(&md->fout, cnt == k ? 1 : cnt == 0 ? 0 : down, 0, 0, 0, &md->envout, &fl8);
            } else if (f32rne && (d_lowbits(d) == 0)) { /* d * s exact in binary64 (<= 29 + 24 bits) */
                double y = d * sd;
                float f = (float)y; /* the hardware's rounding: nearest even */
                if (fabsf(f) > 0x1p-126f && fabsf(f) <= 3.4028234663852886e38f) { /* |y| > 2^-126, normal: only inexact */
                    uint32_t c;
                    memcpy(&c, &f, 4);
                    flags |= (double)f != y ? SFP8_FLAG_INEXACT : 0;
                    ybuf[t] = 0.0;
                    special[t] = 1;
                    rsp[t] = c;
                    continue;
                }
                ybuf[t] = y; /* subnormal or overflow: the rounder */
                special[t] = 0;
                continue;
            } else { /* d is the exact sum: d * s rounded once */
                gval v;
                unsigned __int128 mag;
                int64_t e;
                int sticky = 0, bl;
                { /* d: a normal binary64 (a multiple of 2^(qa + qb) >= 2^-1000) */
                    uint64_t db;
                    memcpy(&db, &d, 8);
                    v.neg = (uint8_t)(db >> 63);
                    v.sig = (db & 0xFFFFFFFFFFFFFULL) | (1ULL << 52);
                    v.exp = (int64_t)((db >> 52) & 0x7FF) - 1075;
                }
                mag = (unsigned __int128)v.sig * s.sig; /* 53 + at most 24 bits */
                e = v.exp + s.exp;
                bl = (uint64_t)(mag >> 64) ? 64 + bitlen64((uint64_t)(mag >> 64)) : bitlen64((uint64_t)mag);
                if (use_rnd) { /* rounded to odd at 53 bits, a normal binary64: then the fast rounder */
                    double y;
                    uint64_t yb;
                    int sh = bl - 53; /* bl >= 53: v.sig has 53 bits */
                    sticky = (mag & (((unsigned __int128)1 << sh) - 1)) != 0;
                    mag = (mag >> sh) | (unsigned)sticky;
                    e += sh;
                    yb = ((uint64_t)v.neg << 63) | ((uint64_t)(e + 52 + 1023) << 52) |
                         ((uint64_t)mag & 0xFFFFFFFFFFFFFULL);
                    memcpy(&y, &yb, 8);
                    ybuf[t] = y; /* rounded below, with the row */
                    special[t] = 0;
                    continue;
                } else {
                    if (bl > 64) {
                        int sh = bl - 64;
                        sticky = (mag & (((unsigned __int128)1 << sh) - 1)) != 0;
                        mag >>= sh;
                        e += sh;
                    }
                    r = sfp8_round_value(&md->fout, v.neg, (uint64_t)mag, e, sticky, &md->envout, &fl8);
                }
            }
            ybuf[t] = 0.0;
            special[t] = 1;
            rsp[t] = r;
        }
        if (use_rnd && nl) flags |= sfp8f_round_doubles(&rnd, ybuf, nl, cbuf);
        for (int64_t t = 0; t < nl; t++)
            if (special[t] != 2) st_out(O + i * om + left[t] * op, g.szo, special[t] ? rsp[t] : cbuf[t]);
    }
    flags |= fl8;
done:
    free(g.da);
    free(g.db);
    free(g.sacc);
    free(qa);
    free(ma);
    free(ta);
    free(tb);
    free(ybuf);
    free(g.via);
    free(g.fla);
    free(g.cta);
    free(s8);
    return flags;
}
