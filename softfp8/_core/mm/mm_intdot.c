/*
 * The exact model for 8-bit operands in integers (path int_dot of mm_paths.def):
 * every finite value of a format whose values span at most 40 bits is an integer
 * v * 2^low with |v| < 2^40, so a product is an integer below 2^80 and a sum of
 * k < 2^40 of them is exact in 128 bits.  Scales constant along K multiply the
 * exact sum (at most 64 + 24 bits, or a power of two); scales blocked along K (MX,
 * DeepSeek tiles) multiply each block's exact sum (kblock <= 2^20 products: below
 * 2^100, times a 24-bit significand below 2^124) before it enters a
 * superaccumulator (accum.c).  Exact scale products (scale_exact, mx.matmul: powers of
 * two 2^-298 .. 2^254) shift the sums only, into the generic kernel's accumulator span.  Every result is rounded once by the core
 * (sfp8_round_value, or accum.c's rounding of the superaccumulator).  NaN and
 * infinity operands, and scale products that are not finite non-zero binary32
 * numbers, leave the block to the generic kernel (mm_ref.c).  Proven equal to it
 * by tests/numpy_glue/test_gemm.py::test_fast_equals_core and the engine's
 * differential test (tests/numpy_glue/test_mm_engine.py).
 *
 * DERIVED from core.c round_pack: the sign of an exact zero dot product
 * (zero_sign: -0 only rounding downward); proof: tests/harness/test_harness.py::test_entry (entry int_dot).
 */
#include <stdlib.h>
#include <string.h>

#include "mm_impl.h"

struct mm_int {
    int64_t va[256], vb[256];     /* values / 2^low of every storage byte (0: zero, NaN, infinity) */
    uint8_t fla[256], flb[256];   /* the denormal flag reading it */
    uint8_t cta[256], ctb[256];   /* 1: NaN or infinity */
    uint8_t nga[256], ngb[256];   /* sign bits */
    SuperAcc *acc;                /* K-blocked scales: one accumulator per column of a block */
};

static int int_table(const gval *d, uint32_t mask, const sfp8_format *f, int64_t *v, uint8_t *fl, uint8_t *cat,
                     uint8_t *neg)
{
    if (fmt_top(f) - fmt_low(f) > 40) return 0;
    for (uint32_t c = 0; c < 256; c++) {
        const gval *x = &d[c & mask];
        int64_t m = x->cls == GV_FIN ? (int64_t)(x->sig << (x->exp - fmt_low(f))) : 0;
        v[c] = x->neg ? -m : m;
        fl[c] = x->fl;
        cat[c] = x->cls > GV_FIN;
        neg[c] = x->neg;
    }
    return 1;
}

int mm_int_init(mm_call *c, mm_int **out)
{
    const sfp8m_model *md = c->md;
    mm_int *t;
    *out = NULL;
    if (!md->exact || md->fa.bits > 8 || md->fb.bits > 8 || c->k >= ((int64_t)1 << 40) ||
        md->kblock > ((int64_t)1 << 20) || md->envout.rounding == SFP8_ROUND_STOCHASTIC)
        return 0;
    if (!mm_call_tables(c, INT64_MAX) || !(t = calloc(1, sizeof *t))) return -1;
    if (!int_table(c->da, c->mask_a, &md->fa, t->va, t->fla, t->cta, t->nga) ||
        !int_table(c->db, c->mask_b, &md->fb, t->vb, t->flb, t->ctb, t->ngb)) {
        free(t);
        return 0;
    }
    if (md->kblock && !(t->acc = malloc(MM_INT_WIDTH * sizeof(SuperAcc)))) {
        free(t);
        return -1;
    }
    *out = t;
    return 1;
}

void mm_int_free(mm_int *t)
{
    if (!t) return;
    free(t->acc);
    free(t);
}

/* the sign of an exact zero sum of output (i, j): -0 only if every product is -0, or
   rounding downward after a cancellation (or with +0 and -0 products) */
static int zero_sign(const mm_int *t, const mm_call *c, int64_t i, int64_t j)
{
    int nz = 0, pz = 0, mz = 0;
    for (int64_t l = 0; l < c->k; l++) {
        uint8_t ca = *(const uint8_t *)(c->A + i * c->am + l * c->ak);
        uint8_t cb = *(const uint8_t *)(c->B + l * c->bk + j * c->bp);
        if (t->va[ca] && t->vb[cb]) nz = 1;
        else if (t->nga[ca] ^ t->ngb[cb]) mz = 1;
        else pz = 1;
    }
    return nz || (pz && mz) ? c->md->envout.rounding == SFP8_ROUND_DOWNWARD : mz;
}

/* the products of rows l0 .. l1 - 1 summed into S[0 .. n-1]; 0 on a NaN or infinity */
static int int_sums(const mm_int *t, const mm_call *c, int64_t i, int64_t j0, int n, int64_t l0, int64_t l1,
                    __int128 *S, unsigned *flp)
{
    unsigned fl = 0, cat = 0;
    for (int64_t l = l0; l < l1; l++) {
        uint8_t ca = *(const uint8_t *)(c->A + i * c->am + l * c->ak);
        const char *brow = c->B + l * c->bk + j0 * c->bp;
        int64_t va = t->va[ca];
        fl |= t->fla[ca];
        cat |= t->cta[ca];
        for (int jj = 0; jj < n; jj++) {
            uint8_t cb = *(const uint8_t *)(brow + jj * c->bp);
            S[jj] += (__int128)va * t->vb[cb];
            fl |= t->flb[cb];
            cat |= t->ctb[cb];
        }
    }
    *flp |= fl;
    return !cat;
}

/* K-blocked scales: each block's sum times its scale product into one superaccumulator
   per column, then rounded once */
static int int_blocked(const mm_int *t, mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0,
                       int n, unsigned *flout)
{
    const sfp8m_model *md = c->md;
    unsigned fl = 0;
    uint8_t fl8 = 0;
    int64_t low = fmt_low(&md->fa) + fmt_low(&md->fb);
    for (int jj = 0; jj < n; jj++) mm_exact_init(c, &t->acc[jj]); /* the generic kernel's span */
    for (int64_t l0 = 0; l0 < c->k; l0 += md->kblock) {
        int64_t l1 = c->k - l0 < md->kblock ? c->k : l0 + md->kblock;
        __int128 S[MM_INT_WIDTH];
        memset(S, 0, sizeof S);
        if (!int_sums(t, c, i, j0, n, l0, l1, S, &fl)) return 0;
        for (int jj = 0; jj < n; jj++) {
            gval s;
            int neg = S[jj] < 0;
            unsigned __int128 mag = neg ? -(unsigned __int128)S[jj] : (unsigned __int128)S[jj];
            mm_scale_at(md, i, l0, j0 + jj, &s, &fl8);
            if (s.cls != GV_FIN || s.neg) return 0; /* out of range, or negative: generic */
            if (!mag) continue;
            mag *= s.sig; /* below 2^100 * 2^24 */
            acc_add_mag(&t->acc[jj], (uint64_t)mag, low + s.exp - t->acc[jj].qmin, neg);
            if ((uint64_t)(mag >> 64))
                acc_add_mag(&t->acc[jj], (uint64_t)(mag >> 64), low + s.exp + 64 - t->acc[jj].qmin, neg);
        }
    }
    for (int jj = 0; jj < n; jj++) {
        SuperAcc *a = &t->acc[jj];
        int zero = 1;
        uint64_t r;
        for (int q = 0; q < a->nlimbs; q++) zero &= a->limb[q] == 0;
        if (zero) r = sfp8_round_value(&md->fout, zero_sign(t, c, i, j0 + jj), 0, 0, 0, &md->envout, &fl8);
        else r = acc_round_float(a, &md->fa, &md->fout, &md->envout, &fl8); /* a finite non-zero sum */
        mm_store(O + i * om + (j0 + jj) * op, c->szo, r);
    }
    *flout |= fl | fl8;
    return 1;
}

int mm_int_block(const mm_int *t, mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0, int n,
                 unsigned *flout)
{
    const sfp8m_model *md = c->md;
    __int128 S[MM_INT_WIDTH];
    unsigned fl = 0;
    uint8_t fl8 = 0;
    if (md->kblock) return int_blocked(t, c, O, om, op, i, j0, n, flout);
    memset(S, 0, sizeof S);
    if (!int_sums(t, c, i, j0, n, 0, c->k, S, &fl)) return 0;
    for (int jj = 0; jj < n; jj++) {
        gval s = mm_one;
        int neg = S[jj] < 0;
        unsigned __int128 mag = neg ? -(unsigned __int128)S[jj] : (unsigned __int128)S[jj];
        uint64_t r;
        if (c->k) mm_scale_at(md, i, 0, j0 + jj, &s, &fl8); /* as the generic kernel: computed when used */
        if (s.cls != GV_FIN || s.neg) return 0; /* out of range, or negative: generic */
        if (mag == 0) {
            r = sfp8_round_value(&md->fout, zero_sign(t, c, i, j0 + jj), 0, 0, 0, &md->envout, &fl8);
        } else {
            if ((uint64_t)(mag >> 64) && s.sig != 1) return 0; /* a scaled sum past 128 bits: the generic kernel */
            mag *= s.sig; /* at most 64 + 24 bits, or a power of two */
            r = mm_round_u128(&md->fout, &md->envout, neg, mag, fmt_low(&md->fa) + fmt_low(&md->fb) + s.exp, 0, &fl8);
        }
        mm_store(O + i * om + (j0 + jj) * op, c->szo, r);
    }
    *flout |= fl | fl8;
    return 1;
}
