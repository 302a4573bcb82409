/*
 * Accumulation models on 8-bit operands, faster than the generic kernel (mm_ref.c)
 * and proven equal to it, codes and flags (paths model_f32, model_odd, model_fma16
 * of mm_paths.def; tests/numpy_glue/test_gemm.py::test_fast_equals_core and the
 * engine's differential test tests/numpy_glue/test_mm_engine.py):
 *
 *  - model_f32: a binary32 accumulator rounded to nearest even, every product a
 *    binary32 number and no sum able to underflow: IEEE binary32 addition in the
 *    hardware (C11, FLT_EVAL_METHOD 0, no contraction), inexact from TwoSum; without a
 *    product format on B decoded once (f32_block: portable, AVX2 and AVX-512 kernels,
 *    the SIMD ones for operands whose values are normal binary32 numbers, inexact from
 *    MXCSR's precision flag; at level 1 a promotion by binary32 additions, or none, runs
 *    the row's block in one call, f32_prom_256), with one whose rounding the products
 *    reach by mm_nrw_prod (mm_narrow.c, AVX2: each product rounded into the product format,
 *    prnd_params; 8-bit and 9..16-bit operands) or else the product table;
 *  - model_fma16: an accumulator of at most 20 mantissa bits with IEEE subnormals,
 *    operands and products normal binary32 numbers, no product format or one exact for
 *    the block's products: B decoded once, the kernels of mm_narrow.c (binary32 sums
 *    rounded into the accumulator in SIMD, nrw_block); a product format exact below its
 *    largest value serves model_f32's kernels the same way (f32_begin's bound);
 *  - model_odd: any other accumulator sfp8f_rounder covers: the binary64 sum rounded
 *    to odd (sfp8f_odd_sum, fast.h) then rounded by sfp8f_round_doubles (both DERIVED
 *    from core.c round_pack in fast/, proven there).
 *
 * Products come from a table of the generic kernel's own products (index
 * a << 8 | b: exact, or rounded into the product format by the core).  A NaN, an
 * infinity or an overflow anywhere in a block sends the block to the generic kernel;
 * promotions and the final product by the scale are the generic kernel's own steps
 * (mm_value.c) on the block's exact sums.
 *
 * DERIVED from core.c round_pack: which accumulator steps the fast rounder may take
 * (nearest-even binary32 sums, mm_model_init), the zero sign of chunk sums rounding
 * downward (fast_promote, odd_chunk), fast_round's and fast_final's use
 * of the fast paths' rounder, and the binary32 kernels' sums (hardware additions /
 * fused multiply-adds of exact products, nearest even, no FTZ / DAZ, inexact from
 * TwoSum or the precision flag: f32_run_*); proof: tests/harness/test_harness.py::test_entry (entries model_f32, model_odd, model_fma16; every
 * SIMD level).
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mm_impl.h"
#include "mm_narrow.h"
#include "mm_simd.h"
#include "ops.h"

#if MM_SIMD
#include <immintrin.h>
#endif

#define FB 16     /* columns per block of model_odd (and model_f32 with a product format) */
#define FW 128    /* columns per block of model_f32's kernels (f32_run_*) */

struct mm_model_fast {
    int path;                  /* SFP8M_MODEL_* */
    double *pt;                /* 65536 products (index a << 8 | b), rounded into fp if has_prod */
    float *ptf;                /* the same as binary32 numbers (model_f32) */
    uint8_t *pfl, *pcat;       /* their flags; 1: NaN or infinity */
    double *accdec, *promdec;  /* decodings of the accumulator's / running sum's codes (NULL: binary32) */
    sfp8f_rnd racc, rprom;
    uint32_t zacc[2], zprom[2]; /* +0 and -0 of the accumulator / running sum */
    uint8_t fla[256], cta[256];
    /* model_fma16 (mm_narrow.c): the kernels' parameters */
    mm_nrw nq;
    /* model_f32 with a product format rounded by the AVX2 kernel (mm_nrw_prod): its
       parameters (pq.level 1: the kernel runs; the product format in pq's accumulator fields) */
    mm_nrw pq;
    /* a product format whose rounding is exact for products of magnitude <= pmax (INFINITY:
       no product format): blocks whose row max |a| times columns' max |b| exceed it decline */
    double pmax;
    float *colmax, rowmax;
    /* model_f32 without a product format (f32_block): B decoded once, row-major with
       rows of P >= p columns (zeros after p), A's current row decoded; binary32 values
       for the SIMD kernels (level >= 1), binary64 for the portable one */
    int level;                 /* SIMD level of the f32_run kernel (0: portable) */
    int prom32;                /* the running sum is binary32, nearest even, no K-blocked scales */
    /* model_f32's accumulator mode: nearest even, or (level 1 only) toward zero, upward,
       downward -- MXCSR's rounding control for the kernels (rc), the sums' start (z32: -0,
       +0 rounding downward, the identities of addition), and p32: the running sum is
       binary32 in the same mode (promotion by binary32 additions in the kernels) */
    unsigned rc;
    float z32;
    int p32;
    int64_t P, row;            /* row: the row of A in arf / ard (-1: none) */
    float *bf, *arf, avf[256];
    double *bd, *ard, avd[256];
    uint8_t *colfl, *colsp;    /* per column of B: OR of its operands' flags, a NaN / infinity */
    unsigned rowfl, rowsp;
    /* 9..16-bit operands (wide: model_f32 without a product format, model_fma16): decoded
       line by line by mm_decode from the fast paths' cached binary64 tables (IEEE-like
       codes by arithmetic); per row of A its flags and whether it holds a NaN / infinity */
    int wide;
    const sfp8f_conv *deca, *decb;
    mm_ieee Da, Db;
    uint64_t *line;
    uint8_t *rflw, *rspw;
    /* the outputs (fast_final): 1 the fast rounder rout, 2 binary64, 0 the core */
    int outk;
    sfp8f_rnd rout;
    uint64_t zout[2];
    uint8_t zofl[2];
};

/* 1 if the values of f (and their products with binary32 scales) are normal binary64 numbers */
static int fast_range(const sfp8_format *f)
{
    if (f->bits > 16) return f->exp_bits == 8 && f->man_bits == 23;
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

/* the operands' ranges: every finite value of A is a multiple of 2^la below 2^ta, of B
   of 2^lb below 2^tb -- the formats' (fmt_low, fmt_top) for 8-bit operands, the data's
   for wide ones (wide_range) */
typedef struct {
    int64_t la, ta, lb, tb;
    int data;  /* 1: la, lb are the data's lowest bits (byte_range), not a bound below them */
} mm_orange;

/* 1 if every non-zero value of a range is a normal binary32 number (at most 24
   significant bits: 8-bit formats, wide ones by wide_range's condition) */
static int f32_normal(int64_t lo, int64_t top) { return lo >= -126 && top <= 128; }

/* the value of an operand, zeros with their sign (NaN and infinity: 0, never read) */
static double f32_value(const gval *v)
{
    return v->cls == GV_FIN ? gv_double(v) : v->cls == GV_ZERO && v->neg ? -0.0 : 0.0;
}

/* model_f32 without a product format: B decoded into binary32 (SIMD kernels: operands
   and products normal binary32 numbers, multiplied in binary32) or binary64 (the
   portable kernel: products exact in binary64, binary32 numbers by the path's condition),
   its columns' flags and specials; 1 done, -1 no memory */
static int wide_b(mm_model_fast *t, mm_call *c);

static int f32_init(mm_model_fast *t, mm_call *c, int floats, const mm_orange *R)
{
    const sfp8m_model *md = c->md;
    int lv = sfp8f_simd_level();
    uint8_t flb[256], spb[256];
    float bvf[256];
    double bvd[256];
    t->level = MM_SIMD && lv >= 1 && f32_normal(R->la, R->ta) && f32_normal(R->lb, R->tb) ? lv : 0;
    if (t->pq.level) t->level = 1; /* mm_nrw_prod: its AVX2 kernel at levels 1 and 2 */
    t->prom32 = md->fprom.bits == 32 && md->envprom.rounding == SFP8_ROUND_NEAREST_EVEN && !md->kblock;
    t->p32 = md->fprom.bits == 32 && md->envprom.rounding == md->envacc.rounding && !md->kblock;
    switch (md->envacc.rounding) {
    case SFP8_ROUND_DOWNWARD: t->rc = 1u << 13; break;
    case SFP8_ROUND_UPWARD: t->rc = 2u << 13; break;
    case SFP8_ROUND_TOWARD_ZERO: t->rc = 3u << 13; break;
    default: t->rc = 0;
    }
    t->z32 = md->envacc.rounding == SFP8_ROUND_DOWNWARD ? 0.0f : -0.0f;
    t->row = -1;
    t->P = (c->p + 15) & ~(int64_t)15;
    for (uint32_t x = 0; !t->wide && x < 256; x++) { /* 8-bit operands: their 256 decodings */
        const gval *va = &c->da[x & c->mask_a], *vb = &c->db[x & c->mask_b];
        t->fla[x] = va->fl;
        t->cta[x] = va->cls > GV_FIN;
        t->avd[x] = f32_value(va);
        t->avf[x] = (float)t->avd[x];
        flb[x] = vb->fl;
        spb[x] = vb->cls > GV_FIN;
        bvd[x] = f32_value(vb);
        bvf[x] = (float)bvd[x];
    }
    if (t->level || floats) {
        t->bf = calloc((size_t)(c->k * t->P) + 1, sizeof(float));
        t->arf = malloc((size_t)c->k * sizeof(float) + 4);
    } else {
        t->bd = calloc((size_t)(c->k * t->P) + 1, sizeof(double));
        t->ard = malloc((size_t)c->k * sizeof(double) + 8);
    }
    t->colfl = calloc((size_t)c->p, 1);
    t->colsp = calloc((size_t)c->p, 1);
    if (t->pmax < INFINITY) t->colmax = calloc((size_t)c->p, sizeof(float));
    if (!(t->bf || t->bd) || !(t->arf || t->ard) || !t->colfl || !t->colsp || (t->pmax < INFINITY && !t->colmax))
        return -1;
    if (t->wide) return wide_b(t, c);
    for (int64_t l = 0; l < c->k; l++)
        for (int64_t j = 0; j < c->p; j++) {
            uint8_t cb = *(const uint8_t *)(c->B + l * c->bk + j * c->bp);
            if (t->bf) t->bf[l * t->P + j] = bvf[cb];
            else t->bd[l * t->P + j] = bvd[cb];
            t->colfl[j] |= flb[cb];
            t->colsp[j] |= spb[cb];
            if (t->colmax && !spb[cb] && fabsf(bvf[cb]) > t->colmax[j]) t->colmax[j] = fabsf(bvf[cb]);
        }
    return 1;
}

/* 1 if the exact products a b are normal binary32 numbers or zeros and their binary32
   sums never underflow: multiples of 2^-126 below 2^127 */
static int f32_products(const mm_orange *R) { return R->la + R->lb >= -126 && R->ta + R->tb <= 127; }

/* significant bits of the values of an 8-bit format, at most */
static int sig_bits(const sfp8_format *f) { return f->man_bits + 1; }

/* INFINITY without a product format; with one, the bound pmax such that every product of
   magnitude <= pmax is a number of fp (its rounding exact, no flag, zeros keep their sign:
   IEEE subnormals, signed, no FNUZ), 0 if there is none */
static double prod_bound(const sfp8m_model *md, const mm_orange *R)
{
    const sfp8_format *fp = &md->fp;
    sfp8f_rnd r;
    gval v;
    if (!md->has_prod) return INFINITY;
    /* the products' lowest bit at or above fp's unit: fmt_low(fp) lies one below the unit of
       IEEE subnormals (2^(1 - bias - M)), which the formats' own fmt_low sums (two below
       the products' lowest bit) leave room for; the data's exact lowest bits do not */
    if (!sfp8f_rounder(fp, &md->envp, &r) || sig_bits(&md->fa) + sig_bits(&md->fb) > fp->man_bits + 1 ||
        R->la + R->lb < fmt_low(fp) + (R->data && fp->subnormals == SFP8_SUBNORMALS_IEEE))
        return 0;
    gv_decode(fp, sfp8_max_code(fp), &v);
    return v.cls == GV_FIN ? gv_double(&v) : 0;
}

/* the binade from which mm_narrow.c's magic-constant kernels decline a value rounded into f
   (M mantissa bits, emin its least normal exponent): f's top binade (2^etop <= max <
   2^(etop + 1)), lowered to 104 + M so that 1.5 2^(E + 23 - M) stays a binary32 number;
   0 if f's largest code is not finite or the binade lies outside [emin, 127] */
static int magic_top(const sfp8_format *f, int M, int64_t emin, int64_t *etop)
{
    gval v;
    gv_decode(f, sfp8_max_code(f), &v);
    if (v.cls != GV_FIN) return 0;
    *etop = v.exp + gv_bitlen(v.sig) - 1;
    if (*etop > 104 + M) *etop = 104 + M;
    return *etop >= emin && *etop <= 127;
}

/* model_fma16 (mm_narrow.c): the parameters of the accumulator's kernels; 0 not covered
   (the products are exact binary32 numbers: f32_products) */
static int nrw_params(const sfp8m_model *md, const mm_orange *R, mm_nrw *q)
{
    const sfp8_format *f = &md->facc;
    int mode = md->envacc.rounding, M = f->man_bits, lv = sfp8f_simd_level(), hw, direct;
    int64_t emin = 1 - (int64_t)f->bias, etop;
    if (M > 20 || !f32_products(R) || !f32_normal(R->la, R->ta) || !f32_normal(R->lb, R->tb)) return 0;
    if (!magic_top(f, M, emin, &etop)) return 0;
    hw = mode == SFP8_ROUND_NEAREST_EVEN || mode == SFP8_ROUND_TOWARD_ZERO || mode == SFP8_ROUND_UPWARD ||
         mode == SFP8_ROUND_DOWNWARD;
    direct = mode != SFP8_ROUND_NEAREST_EVEN ||
             (sig_bits(&md->fa) + sig_bits(&md->fb) <= M + 1 && 2 * (M + 1) + 1 <= 24);
    memset(q, 0, sizeof *q);
    q->mode = mode;
    q->M = M;
    q->odd = !direct;
    /* products 8 bits or more wider than the accumulator: a binary32 sum lands on a midpoint
       of its grid about once in 2^8 or less (AVX2 kernel, which also falls back by itself) */
    q->mid = q->odd && sig_bits(&md->fa) + sig_bits(&md->fb) >= M + 1 + 8;
    q->level = !MM_SIMD || !hw ? 0 : lv; /* the direct and the odd sums at levels 1 and 2 */
    /* underflow needs an inexact sum below 2^emin: none if the products are multiples
       of the accumulator's subnormal unit 2^(emin - M) (so is every sum there) */
    q->tiny = R->la + R->lb < emin - M;
    q->tb = md->envacc.tininess_before != 0;
    /* sums below 2^emin must be binary32 numbers (multiples of the products' unit): a
       directed or nearest binary32 sum may round up onto 2^emin (a wrong tininess key), and
       the portable kernel's shift to the subnormal grid must stay below 64; the AVX2 sums
       rounded to odd need neither (rounding to odd never raises a magnitude to the next
       binade, and their grid rounding is the magic constant's) */
    if (q->tiny && emin - (R->la + R->lb) > 24 && !(q->odd && q->level == 1)) return 0;
    q->eminb = (uint32_t)((emin > -126 ? emin : -126) + 127) << 23;
    q->topb = (uint32_t)(etop + 127) << 23;
    q->z = mode == SFP8_ROUND_DOWNWARD ? 0.0f : -0.0f;
    return 1;
}

/* model_f32 with a product format: the parameters of mm_nrw_prod (AVX2, every level above
   0), 0 if it does not apply.  Products exact binary32 numbers (f32_products) rounded at
   nearest even, the accumulator's mode too (one MXCSR mode); the product format IEEE-like
   (IEEE subnormals, a -0: the magic-constant rounding keeps a zero's sign), M <= 20, its
   subnormal unit at least 2^-126 (so is every rounded product's unit: the binary32 sums
   never underflow); a product in the binade magic_top gives makes the kernel decline the
   block (overflow possible) */
static int prnd_params(const sfp8m_model *md, const mm_orange *R, mm_nrw *q)
{
    const sfp8_format *f = &md->fp;
    int M = f->man_bits;
    int64_t emin = 1 - (int64_t)f->bias, etop;
    if (!md->has_prod || !MM_SIMD || sfp8f_simd_level() < 1 || M > 20 || !f->is_signed ||
        f->subnormals != SFP8_SUBNORMALS_IEEE ||
        (f->specials != SFP8_SPECIALS_IEEE && f->specials != SFP8_SPECIALS_FN && f->specials != SFP8_SPECIALS_NONE) ||
        md->envp.rounding != SFP8_ROUND_NEAREST_EVEN || md->envacc.rounding != SFP8_ROUND_NEAREST_EVEN ||
        md->facc.bits != 32 || emin - M < -126 || !f32_products(R) || !f32_normal(R->la, R->ta) ||
        !f32_normal(R->lb, R->tb))
        return 0;
    if (!magic_top(f, M, emin, &etop)) return 0;
    memset(q, 0, sizeof *q);
    q->level = 1;
    q->mode = SFP8_ROUND_NEAREST_EVEN;
    q->M = M;
    q->tiny = R->la + R->lb < emin - M; /* products below the format's unit: they round there */
    q->tb = md->envp.tininess_before != 0;
    q->eminb = (uint32_t)(emin + 127) << 23;
    q->topb = (uint32_t)(etop + 127) << 23;
    q->z = -0.0f;
    return 1;
}

/* model_f32 with a binary32 accumulator rounded toward zero, upward or downward: the AVX2
   kernels in that MXCSR mode (level 1 exactly: the AVX-512 and portable kernels add at
   nearest even), operands normal binary32 numbers, no product format */
static int f32_directed(const sfp8m_model *md, const mm_orange *R)
{
    const int m = md->envacc.rounding;
    return MM_SIMD && sfp8f_simd_level() == 1 && f32_normal(R->la, R->ta) && f32_normal(R->lb, R->tb) &&
           (m == SFP8_ROUND_TOWARD_ZERO || m == SFP8_ROUND_UPWARD || m == SFP8_ROUND_DOWNWARD);
}

/* a line's binary64 values (bits; NaN / infinity decoded as 0) into the operand's range:
   *lb the least lowest set bit of its non-zero values (a power of two, +inf if none) and
   *mx the largest magnitude, by the exact certificate's statistics (mm_stats_h) */
static void line_range(const uint64_t *d, ptrdiff_t n, double *lb, double *mx)
{
    double st[4];
    mm_stats_h(sfp8f_simd_level(), (const double *)(const void *)d, n, st);
    *mx = st[1] > *mx ? st[1] : *mx;
    *lb = st[3] < *lb ? st[3] : *lb;
}

/* the range (every value a multiple of 2^*lo, below 2^*top) of an operand whose non-zero
   values' least lowest bit is lb and largest magnitude mx (none: lb infinite) */
static void bits_range(double lb, double mx, int64_t *lo, int64_t *top)
{
    if (!(lb < INFINITY)) { /* zeros only (and NaN / infinity, whose blocks the generic kernel takes) */
        *lo = *top = 0;
        return;
    }
    *lo = ilogb(lb);
    *top = (int64_t)ilogb(mx) + 1;
}

/* wide operands: the binary64 tables, and A's and B's ranges from their values (A decoded
   row by row: each row's flags and NaN / infinity kept); 1 done, 0 not covered, -1 no memory */
static int wide_range(mm_model_fast *t, const mm_call *c, mm_orange *R)
{
    static const sfp8_env e = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
    const sfp8m_model *md = c->md;
    const int lv = sfp8f_simd_level();
    double alb = INFINITY, amx = 0, blb = INFINITY, bmx = 0;
    unsigned char bad;
    t->wide = 1;
    t->deca = sfp8f_convert(&md->fa, &sfp8_binary64, &e, PTRDIFF_MAX);
    t->decb = sfp8f_convert(&md->fb, &sfp8_binary64, &e, PTRDIFF_MAX);
    if (!t->deca || !t->decb) return 0;
    mm_ieee_init(&t->Da, &md->fa, t->deca);
    mm_ieee_init(&t->Db, &md->fb, t->decb);
    t->line = malloc((size_t)(c->k > c->p ? c->k : c->p) * sizeof(uint64_t) + 8);
    t->rflw = malloc((size_t)c->m + 1);
    t->rspw = calloc((size_t)c->m + 1, 1);
    if (!t->line || !t->rflw || !t->rspw) return -1;
    for (int64_t i = 0; i < c->m; i++) {
        unsigned fl = 0;
        mm_decode(lv, &t->Da, t->deca, c->sza, c->A + i * c->am, c->ak, c->k, t->line, &t->rspw[i], 0, &fl);
        t->rflw[i] = (uint8_t)fl;
        line_range(t->line, c->k, &alb, &amx);
    }
    for (int64_t l = 0; l < c->k; l++) {
        unsigned fl = 0;
        bad = 0;
        mm_decode(lv, &t->Db, t->decb, c->szb, c->B + l * c->bk, c->bp, c->p, t->line, &bad, 0, &fl);
        line_range(t->line, c->p, &blb, &bmx);
    }
    bits_range(alb, amx, &R->la, &R->ta);
    bits_range(blb, bmx, &R->lb, &R->tb);
    return 1;
}

/* wide operands: B decoded row by row into bf / bd, its columns' flags (the table's, element
   by element, for rows whose flags are not 0) and NaN / infinity; 1 done */
static int wide_b(mm_model_fast *t, mm_call *c)
{
    const int lv = sfp8f_simd_level();
    const uint32_t mask = (uint32_t)t->decb->n - 1;
    for (int64_t l = 0; l < c->k; l++) {
        unsigned fl = 0;
        const char *row = c->B + l * c->bk;
        mm_decode(lv, &t->Db, t->decb, c->szb, row, c->bp, c->p, t->line, t->colsp, 1, &fl);
        for (int64_t j = 0; j < c->p; j++) {
            double v;
            memcpy(&v, &t->line[j], 8);
            if (t->bf) t->bf[l * t->P + j] = (float)v;
            else t->bd[l * t->P + j] = v;
        }
        if (fl)
            for (int64_t j = 0; j < c->p; j++)
                t->colfl[j] |= t->decb->fl[load_code(row + j * c->bp, c->szb) & mask];
    }
    return 1;
}

/* 8-bit operands: the range of the values present in A and B (the codes read, by the
   decoding tables c->da / c->db): every value a multiple of 2^lo (its lowest bit), below
   2^top; zeros and NaN / infinity (the generic kernel's blocks) left out */
static void byte_range(const mm_call *c, mm_orange *R)
{
    uint8_t pa[256] = {0}, pb[256] = {0};
    int64_t lo[2] = {INT64_MAX, INT64_MAX}, top[2] = {INT64_MIN, INT64_MIN};
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t l = 0; l < c->k; l++) pa[*(const uint8_t *)(c->A + i * c->am + l * c->ak)] = 1;
    for (int64_t l = 0; l < c->k; l++)
        for (int64_t j = 0; j < c->p; j++) pb[*(const uint8_t *)(c->B + l * c->bk + j * c->bp)] = 1;
    for (int x = 0; x < 256; x++)
        for (int s = 0; s < 2; s++) {
            const gval *v = s ? &c->db[x & c->mask_b] : &c->da[x & c->mask_a];
            if (!(s ? pb : pa)[x] || v->cls != GV_FIN || !v->sig) continue;
            lo[s] = v->exp + __builtin_ctzll(v->sig) < lo[s] ? v->exp + __builtin_ctzll(v->sig) : lo[s];
            top[s] = v->exp + gv_bitlen(v->sig) > top[s] ? v->exp + gv_bitlen(v->sig) : top[s];
        }
    R->la = lo[0] == INT64_MAX ? 0 : lo[0], R->ta = lo[0] == INT64_MAX ? 0 : top[0];
    R->lb = lo[1] == INT64_MAX ? 0 : lo[1], R->tb = lo[1] == INT64_MAX ? 0 : top[1];
    R->data = 1;
}

int mm_model_init(mm_call *c, mm_model_fast **out)
{
    const sfp8m_model *md = c->md;
    const sfp8_format *pf = md->has_prod ? &md->fp : NULL;
    const int wide = md->fa.bits > 8 || md->fb.bits > 8;
    mm_orange R = {fmt_low(&md->fa), fmt_top(&md->fa), fmt_low(&md->fb), fmt_top(&md->fb), 0};
    mm_model_fast *t;
    sfp8f_rnd racc, rprom;
    int r;
    *out = NULL;
    /* wide operands (9..16 bits): model_f32 (a product format by mm_nrw_prod only) and
       model_fma16, products exact binary32 numbers (at most 24 significant bits) */
    if (wide && (md->fa.bits > 16 || md->fb.bits > 16 || sig_bits(&md->fa) + sig_bits(&md->fb) > 24))
        return 0;
    if (md->exact || !sfp8f_rounder(&md->facc, &md->envacc, &racc) ||
        !sfp8f_rounder(&md->fprom, &md->envprom, &rprom) || !fast_range(&md->facc) || !fast_range(&md->fprom) ||
        (pf && !fast_range(pf)) || !fast_range(&md->fa) || !fast_range(&md->fb) ||
        (!pf && (fmt_low(&md->fa) + fmt_low(&md->fb) < -1000 || fmt_top(&md->fa) + fmt_top(&md->fb) > 1000)))
        return 0; /* the products (exact, or rounded into fp) must be normal binary64 numbers */
    if ((!wide && !mm_call_tables(c, INT64_MAX)) || !(t = calloc(1, sizeof *t))) return -1;
    if (wide && (r = wide_range(t, c, &R)) <= 0) {
        mm_model_free(t);
        return r;
    }
    *out = t;
    /* the kernels' binary64 / binary32 arithmetic (TwoSum, rounding to odd) is IEEE's
       in nearest-even: sfp8m_gemm restores the caller's environment (fesetenv) */
    fesetround(FE_TONEAREST);
    t->racc = racc;
    t->rprom = rprom;
    t->path = SFP8M_MODEL_ODD;
    if (md->facc.bits == 32 &&
        (md->envacc.rounding == SFP8_ROUND_NEAREST_EVEN || (!pf && f32_directed(md, &R))) &&
        (pf ? fmt_low(pf) : R.la + R.lb) >= -126 && (pf ? fmt_top(pf) : R.ta + R.tb) <= 127)
        /* products (multiples of 2^-126 or coarser, below 2^127) are binary32 numbers and
           every binary32 sum of them is a normal number or zero: no underflow */
        t->path = SFP8M_MODEL_F32;
    if (md->fprom.bits <= 16 && md->promote && !(t->promdec = double_table(&md->fprom))) return -1;
    for (int s = 0; s < 2; s++) {
        uint8_t fl = 0;
        t->zacc[s] = (uint32_t)sfp8_round_value(&md->facc, s, 0, 0, 0, &md->envacc, &fl);
        t->zprom[s] = (uint32_t)sfp8_round_value(&md->fprom, s, 0, 0, 0, &md->envprom, &fl);
        fl = 0;
        t->zout[s] = sfp8_round_value(&md->fout, s, 0, 0, 0, &md->envout, &fl);
        t->zofl[s] = fl;
    }
    t->outk = md->fout.bits == 64 ? 2 : sfp8f_rounder(&md->fout, &md->envout, &t->rout) ? 1 : 0;
    t->pmax = prod_bound(md, &R);
    if (!wide && pf && t->pmax == 0 && pf->subnormals == SFP8_SUBNORMALS_IEEE) {
        /* the formats' ranges fail it: the data's may not (a product format whose numbers
           below its normals are the multiples of its unit: IEEE subnormals) */
        byte_range(c, &R);
        t->pmax = prod_bound(md, &R);
    }
    if (pf && t->pmax == 0 && t->path == SFP8M_MODEL_F32 && prnd_params(md, &R, &t->pq)) {
        /* products that round into fp: the AVX2 kernel rounds them (no product table) */
        t->pmax = INFINITY;
        return f32_init(t, c, 1, &R);
    }
    if (wide && pf) { /* 9..16-bit operands whose products round otherwise: the generic kernel */
        mm_model_free(t);
        *out = NULL;
        return 0;
    }
    if (t->pmax > 0 && (!pf || (f32_products(&R) && f32_normal(R.la, R.ta) && f32_normal(R.lb, R.tb)))) {
        /* products exact in binary32 (or in fp up to pmax): B decoded once */
        if (t->path == SFP8M_MODEL_F32) return f32_init(t, c, 0, &R);
        if (nrw_params(md, &R, &t->nq)) {
            t->path = SFP8M_MODEL_FMA16;
            r = f32_init(t, c, 1, &R);
            t->level = t->nq.level;
            return r;
        }
    }
    if (wide) { /* no product table for 9..16-bit operands: the generic kernel */
        mm_model_free(t);
        *out = NULL;
        return 0;
    }
    /* model_odd, and model_f32 with a product format: the table of the products */
    if (md->facc.bits <= 16 && !(t->accdec = double_table(&md->facc))) return -1;
    t->pt = malloc(65536 * sizeof(double));
    t->pfl = malloc(65536);
    t->pcat = malloc(65536);
    if (!t->pt || !t->pfl || !t->pcat) return -1;
    for (uint32_t a = 0; a < 256; a++)
        for (uint32_t b = 0; b < 256; b++) {
            const gval *va = &c->da[a & c->mask_a], *vb = &c->db[b & c->mask_b];
            uint8_t fl = va->fl | vb->fl;
            gval x;
            gv_mul(va, vb, &x, &fl);
            if (pf) gv_decode(pf, gv_round(pf, &md->envp, &x, &fl), &x);
            t->pt[a << 8 | b] = x.cls <= GV_FIN ? gv_double(&x) : 0.0;
            t->pcat[a << 8 | b] = x.cls > GV_FIN;
            t->pfl[a << 8 | b] = fl;
        }
    if (t->path == SFP8M_MODEL_F32) {
        if (!(t->ptf = malloc(65536 * sizeof(float)))) return -1;
        for (uint32_t x = 0; x < 65536; x++) t->ptf[x] = (float)t->pt[x];
    }
    return 1;
}

void mm_model_free(mm_model_fast *t)
{
    if (!t) return;
    free(t->pt);
    free(t->ptf);
    free(t->pfl);
    free(t->pcat);
    free(t->accdec);
    free(t->promdec);
    free(t->colmax);
    free(t->bf);
    free(t->bd);
    free(t->arf);
    free(t->ard);
    free(t->colfl);
    free(t->colsp);
    free(t->line);
    free(t->rflw);
    free(t->rspw);
    free(t);
}

int mm_model_width(const mm_model_fast *t) { return t->colfl ? FW : FB; }
int mm_model_path(const mm_model_fast *t) { return t->path; }
int mm_model_level(const mm_model_fast *t) { return t->level; }

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
static int fast_promote(mm_model_fast *t, const sfp8m_model *md, int64_t i, int64_t l, int64_t j0, int n,
                        const double *acc, double *F, int first, unsigned *fl, uint8_t *fl8)
{
    double q[FB];
    for (int jj = 0; jj < n; jj++) {
        gval s = mm_one;
        if (md->kblock) mm_scale_at(md, i, l, j0 + jj, &s, fl8);
        if (s.cls != GV_FIN) return 0; /* a scale product that overflowed or underflowed */
        q[jj] = acc[jj] * gv_double(&s); /* exact: at most 48 significant bits, normal */
    }
    return fast_round(&t->rprom, t->zprom, t->promdec, md->envprom.rounding == SFP8_ROUND_DOWNWARD, first, F, q,
                      n, fl);
}

/* the outputs of columns j0 .. j0 + n - 1 (n <= FW): round_out(S * s), S = sum[jj]
 * (NULL: +0), s the scale product (one value per call, row or column: computed when it
 * changes).  S * s is exact in binary64 (at most 24 x 24 significant bits, a normal
 * number by fast_range): rounded by the fast rounder, or stored as binary64, with the
 * zeros' codes and flags of the core; a scale product that is not a finite non-zero
 * binary32 number, or an output format neither covers, takes the core's steps. */
static void fast_final(const mm_model_fast *t, mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i,
                       int64_t j0, int n, const double *sum, uint8_t *fl8)
{
    const sfp8m_model *md = c->md;
    int scaled = !md->kblock && c->k && (md->sa.s || md->sb.s);
    int64_t ka = -1, kb = -1;
    gval s = mm_one;
    double sd = 1.0, q[FW];
    uint32_t code[FW];
    uint8_t slow[FW];
    unsigned fl = 0;
    for (int jj = 0; jj < n; jj++) {
        int64_t j = j0 + jj;
        double x = sum ? sum[jj] : 0.0;
        if (scaled) {
            int64_t ia = md->sa.s ? (i / md->sa.br) * md->sa.rs : 0, ib = md->sb.s ? (j / md->sb.bc) * md->sb.cs : 0;
            if (ia != ka || ib != kb) {
                mm_scale_at(md, i, 0, j, &s, fl8);
                ka = ia, kb = ib;
                sd = s.cls == GV_FIN ? gv_double(&s) : 0.0;
            }
        }
        slow[jj] = !t->outk || s.cls != GV_FIN;
        if (slow[jj]) {
            gval xv, r;
            gv_from_double(x, &xv);
            gv_mul(&xv, &s, &r, fl8);
            mm_store(O + i * om + j * op, c->szo, gv_round(&md->fout, &md->envout, &r, fl8));
            q[jj] = 0.0;
        } else {
            q[jj] = x * sd; /* exact */
        }
    }
    if (t->outk == 1 && n > 0) fl |= sfp8f_round_doubles(&t->rout, q, n, code);
    for (int jj = 0; jj < n; jj++) {
        uint64_t v;
        if (slow[jj]) continue;
        if (q[jj] == 0) {
            int neg = signbit(q[jj]) != 0;
            v = t->zout[neg];
            fl |= t->zofl[neg];
        } else if (t->outk == 2) {
            memcpy(&v, &q[jj], 8);
        } else {
            v = code[jj];
        }
        mm_store(O + i * om + (j0 + jj) * op, c->szo, v);
    }
    *fl8 |= (uint8_t)fl;
}

/* model_f32's chunk l0 .. l1 - 1 into acc: 0 on a NaN, infinity or overflow */
static int f32_chunk(const mm_model_fast *t, const mm_call *c, int64_t i, int64_t j0, int n, int64_t l0, int64_t l1,
                     double *acc, unsigned *flp)
{
    float af[FB];
    unsigned fl = 0, cat = 0;
    int inex = 0;
    for (int64_t l = l0; l < l1; l++) {
        uint32_t ca = (uint32_t)*(const uint8_t *)(c->A + i * c->am + l * c->ak) << 8;
        const char *brow = c->B + l * c->bk + j0 * c->bp;
        if (l == l0) {
            for (int jj = 0; jj < n; jj++) { /* exact: the product is a binary32 number */
                uint32_t idx = ca | *(const uint8_t *)(brow + jj * c->bp);
                af[jj] = t->ptf[idx];
                fl |= t->pfl[idx];
                cat |= t->pcat[idx];
            }
            continue;
        }
        for (int jj = 0; jj < n; jj++) {
            uint32_t idx = ca | *(const uint8_t *)(brow + jj * c->bp);
            float pv = t->ptf[idx], x = af[jj], sum = x + pv, bb = sum - x;
            fl |= t->pfl[idx];
            cat |= t->pcat[idx];
            inex |= ((x - (sum - bb)) + (pv - bb)) != 0;
            af[jj] = sum;
        }
    }
    if (cat) return 0;
    for (int jj = 0; jj < n; jj++) {
        if (!(fabsf(af[jj]) <= 3.4028234663852886e38f)) return 0; /* overflow: the generic kernel */
        acc[jj] = af[jj];
    }
    *flp |= fl | (inex ? SFP8_FLAG_INEXACT : 0);
    return 1;
}

/* model_odd's chunk l0 .. l1 - 1 into acc: 0 on a NaN, infinity or overflow */
static int odd_chunk(const mm_model_fast *t, const mm_call *c, int64_t i, int64_t j0, int n, int64_t l0, int64_t l1,
                     double *acc, unsigned *flp)
{
    double q[FB];
    unsigned cat = 0;
    int down = c->md->envacc.rounding == SFP8_ROUND_DOWNWARD;
    for (int64_t l = l0; l < l1; l++) {
        uint32_t ca = (uint32_t)*(const uint8_t *)(c->A + i * c->am + l * c->ak) << 8;
        const char *brow = c->B + l * c->bk + j0 * c->bp;
        for (int jj = 0; jj < n; jj++) {
            uint32_t idx = ca | *(const uint8_t *)(brow + jj * c->bp);
            q[jj] = t->pt[idx];
            *flp |= t->pfl[idx];
            cat |= t->pcat[idx];
        }
        if (cat) return 0;
        if (!fast_round(&t->racc, t->zacc, t->accdec, down, l == l0, acc, q, n, flp)) return 0;
    }
    return 1;
}

/* ---- model_f32 without a product format: f32_block and its kernels ----
 *
 * f32_run_<level>(t, l0, l1, j0, n, out, add): the binary32 sums S[jj] of the products
 * A[i, l] B[l, j0 + jj], l = l0 .. l1 - 1 in order, from -0 (the identity of nearest-even
 * addition, so the first sum is the first product itself, zero sign included); add: out
 * += S, one more binary32 addition (the running sum of a promotion), else out = S;
 * returns 1 if any addition was inexact.  out holds n rounded up to 16 values.
 *
 *  - portable: products in binary64 (exact), binary32 numbers by model_f32's condition,
 *    converted exactly; IEEE binary32 additions (C11, no contraction); inexact by TwoSum.
 *  - AVX2 / AVX-512 (operand formats whose non-zero values are normal binary32 numbers,
 *    f32_normal, so products are too): the product in binary32 (exact) and the sum
 *    rounded by the hardware (AVX-512: one fused multiply-add, whose one rounding is that
 *    of the sum as the product is exact); inexact from MXCSR's precision flag, cleared
 *    first; MXCSR is set to nearest even without FTZ / DAZ for the call (no value, product
 *    or sum is subnormal: multiples of 2^-126) and restored after.  Columns are taken in
 *    groups of up to 8 vectors (128 / 64 columns), B's rows padded to 16 columns.
 */
static int f32_run_c(const mm_model_fast *t, int64_t l0, int64_t l1, int64_t j0, int n, float *out, int add)
{
    float acc[FW];
    int inex = 0;
    for (int jj = 0; jj < n; jj++) acc[jj] = -0.0f;
    for (int64_t l = l0; l < l1; l++) {
        double a = t->ard[l];
        const double *b = t->bd + l * t->P + j0;
        for (int jj = 0; jj < n; jj++) {
            float pv = (float)(a * b[jj]), x = acc[jj], sum = x + pv, bb = sum - x;
            inex |= ((x - (sum - bb)) + (pv - bb)) != 0;
            acc[jj] = sum;
        }
    }
    for (int jj = 0; jj < n; jj++) {
        if (add) {
            float pv = acc[jj], x = out[jj], sum = x + pv, bb = sum - x;
            inex |= ((x - (sum - bb)) + (pv - bb)) != 0;
            out[jj] = sum;
        } else {
            out[jj] = acc[jj];
        }
    }
    return inex;
}

#if MM_SIMD
/* no flags, masked, rounding control rc (0: nearest even), no FTZ / DAZ */
#define MM_CSR_SET(csr, rc) _mm_setcsr(((csr) & ~0xE07Fu) | 0x1F80u | (rc))

static inline __attribute__((always_inline)) MM_TGT512 void f32_group_512(int NV, const float *arow,
                                                                          const float *b, int64_t P, int64_t l0,
                                                                          int64_t l1, float *o, int add)
{
    __m512 acc[8];
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) acc[v] = _mm512_set1_ps(-0.0f);
    for (int64_t l = l0; l < l1; l++) {
        __m512 a = _mm512_set1_ps(arow[l]);
        const float *r = b + l * P;
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) acc[v] = _mm512_fmadd_ps(a, _mm512_loadu_ps(r + 16 * v), acc[v]);
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++)
        _mm512_storeu_ps(o + 16 * v, add ? _mm512_add_ps(_mm512_loadu_ps(o + 16 * v), acc[v]) : acc[v]);
}

MM_TGT512 static void f32_run_512(const mm_model_fast *t, int64_t l0, int64_t l1, int64_t j0, int n, float *out,
                                  int add)
{
    for (int j = 0; j < n;) {
        int nv = (n - j + 15) / 16;
        const float *b = t->bf + j0 + j;
        switch (nv > 8 ? 8 : nv) {
        case 1: f32_group_512(1, t->arf, b, t->P, l0, l1, out + j, add); break;
        case 2: f32_group_512(2, t->arf, b, t->P, l0, l1, out + j, add); break;
        case 3: f32_group_512(3, t->arf, b, t->P, l0, l1, out + j, add); break;
        case 4: f32_group_512(4, t->arf, b, t->P, l0, l1, out + j, add); break;
        case 5: f32_group_512(5, t->arf, b, t->P, l0, l1, out + j, add); break;
        case 6: f32_group_512(6, t->arf, b, t->P, l0, l1, out + j, add); break;
        case 7: f32_group_512(7, t->arf, b, t->P, l0, l1, out + j, add); break;
        default: f32_group_512(8, t->arf, b, t->P, l0, l1, out + j, add); break;
        }
        j += nv > 8 ? 128 : 16 * nv;
    }
}

/* AVX2: binary32 product (exact) then sum, no fused multiply-add needed */
static inline __attribute__((always_inline)) MM_TGT256 void f32_group_256(int NV, float z, const float *arow,
                                                                          const float *b, int64_t P, int64_t l0,
                                                                          int64_t l1, float *o, int add)
{
    __m256 acc[8];
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) acc[v] = _mm256_set1_ps(z);
    for (int64_t l = l0; l < l1; l++) {
        __m256 a = _mm256_set1_ps(arow[l]);
        const float *r = b + l * P;
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) acc[v] = _mm256_add_ps(acc[v], _mm256_mul_ps(a, _mm256_loadu_ps(r + 8 * v)));
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++)
        _mm256_storeu_ps(o + 8 * v, add ? _mm256_add_ps(_mm256_loadu_ps(o + 8 * v), acc[v]) : acc[v]);
}

MM_TGT256 static void f32_run_256(const mm_model_fast *t, int64_t l0, int64_t l1, int64_t j0, int n, float *out,
                                  int add)
{
    for (int j = 0; j < n;) {
        int nv = (n - j + 7) / 8;
        const float *b = t->bf + j0 + j;
        if (nv >= 8) f32_group_256(8, t->z32, t->arf, b, t->P, l0, l1, out + j, add), j += 64;
        else if (nv >= 4) f32_group_256(4, t->z32, t->arf, b, t->P, l0, l1, out + j, add), j += 32;
        else if (nv >= 2) f32_group_256(2, t->z32, t->arf, b, t->P, l0, l1, out + j, add), j += 16;
        else f32_group_256(2, t->z32, t->arf, b, t->P, l0, l1, out + j, add), j += 16; /* B's rows: 16 columns */
    }
}

/* AVX2, the whole row for f32_block without another running sum (promotion by binary32
 * additions, or none: pe = 0, one chunk): per column group, chunks of pe products summed
 * from -0 and added into the running sum o by f32_group_256 (add), o starting at -0
 * (-0 + x = x exactly for every x, zeros' signs kept: the first chunk's sum as it is,
 * f32_block's add = 0) -- the additions of f32_block's chunk loop over f32_run_256, in
 * the same order, with one MXCSR setting for the row's block */
static inline __attribute__((always_inline)) MM_TGT256 void f32_prom_group_256(int NV, float z, const float *arow,
                                                                               const float *b, int64_t P,
                                                                               int64_t k, int64_t pe, float *o)
{
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) _mm256_storeu_ps(o + 8 * v, _mm256_set1_ps(z));
    for (int64_t l0 = 0; l0 < k;) {
        int64_t l1 = pe && k - l0 > pe ? l0 + pe : k; /* one chunk */
        f32_group_256(NV, z, arow, b, P, l0, l1, o, 1);
        l0 = l1;
    }
}

/* f32_prom_group_256 for an accumulator rounded toward zero, upward or downward beside a
 * binary32 running sum at nearest even: each chunk summed in the accumulator's mode (MXCSR
 * rounding control rc, from z) into tmp, then added into o at nearest even (o from -0); only
 * the rounding control changes, MXCSR's flags keep every sum's */
static inline __attribute__((always_inline)) MM_TGT256 void f32_promx_group_256(int NV, float z, unsigned rc,
                                                                                const float *arow, const float *b,
                                                                                int64_t P, int64_t k, int64_t pe,
                                                                                float *o)
{
    float tmp[64];
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) _mm256_storeu_ps(o + 8 * v, _mm256_set1_ps(-0.0f));
    for (int64_t l0 = 0; l0 < k;) {
        int64_t l1 = pe && k - l0 > pe ? l0 + pe : k; /* one chunk */
        _mm_setcsr((_mm_getcsr() & ~0x6000u) | rc);
        f32_group_256(NV, z, arow, b, P, l0, l1, tmp, 0);
        _mm_setcsr(_mm_getcsr() & ~0x6000u);
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++)
            _mm256_storeu_ps(o + 8 * v, _mm256_add_ps(_mm256_loadu_ps(o + 8 * v), _mm256_loadu_ps(tmp + 8 * v)));
        l0 = l1;
    }
}

MM_TGT256 static void f32_promx_256(const mm_model_fast *t, int64_t k, int64_t pe, int64_t j0, int n, float *out)
{
    for (int j = 0; j < n;) {
        int nv = (n - j + 7) / 8;
        const float *b = t->bf + j0 + j;
        if (nv >= 8) f32_promx_group_256(8, t->z32, t->rc, t->arf, b, t->P, k, pe, out + j), j += 64;
        else if (nv >= 4) f32_promx_group_256(4, t->z32, t->rc, t->arf, b, t->P, k, pe, out + j), j += 32;
        else f32_promx_group_256(2, t->z32, t->rc, t->arf, b, t->P, k, pe, out + j), j += 16;
    }
}

MM_TGT256 static void f32_prom_256(const mm_model_fast *t, int64_t k, int64_t pe, int64_t j0, int n, float *out)
{
    for (int j = 0; j < n;) {
        int nv = (n - j + 7) / 8;
        const float *b = t->bf + j0 + j;
        if (nv >= 8) f32_prom_group_256(8, t->z32, t->arf, b, t->P, k, pe, out + j), j += 64;
        else if (nv >= 4) f32_prom_group_256(4, t->z32, t->arf, b, t->P, k, pe, out + j), j += 32;
        else f32_prom_group_256(2, t->z32, t->arf, b, t->P, k, pe, out + j), j += 16; /* B's rows: 16 columns */
    }
}
#endif

/* level 1: f32_block's chunk loop without another running sum in one call (f32_prom_256; x:
 * a binary32 running sum at nearest even beside an accumulator in another mode,
 * f32_promx_256); the precision flag of its sums alone, as f32_run, and 2 if one overflowed */
static int f32_prom(const mm_model_fast *t, int64_t k, int64_t pe, int64_t j0, int n, float *out, int x)
{
#if MM_SIMD
    unsigned csr = _mm_getcsr(), fl;
    MM_CSR_SET(csr, t->rc);
    __asm__ volatile("" ::: "memory");
    if (x) {
        f32_promx_256(t, k, pe, j0, n, out);
    } else {
        f32_prom_256(t, k, pe, j0, n, out);
    }
    __asm__ volatile("" ::: "memory");
    fl = _mm_getcsr();
    _mm_setcsr(csr);
    return ((fl & _MM_EXCEPT_INEXACT) != 0) | ((fl & _MM_EXCEPT_OVERFLOW) ? 2 : 0);
#else
    (void)t, (void)k, (void)pe, (void)j0, (void)n, (void)out, (void)x;
    return 0;
#endif
}

static int f32_run(const mm_model_fast *t, int64_t l0, int64_t l1, int64_t j0, int n, float *out, int add)
{
    if (t->pq.level) /* products rounded into the product format: 4 an underflow, 2 declined */
        return (int)mm_nrw_prod(&t->pq, t->arf, t->bf, t->P, l0, l1, j0, n, out, add);
#if MM_SIMD
    if (t->level >= 1) { /* the precision flag of the kernel's sums alone (the barriers keep them
                            inside), and 2 if one overflowed (rounding toward zero / away from
                            the overflow's side gives the largest finite, not an infinity) */
        unsigned csr = _mm_getcsr(), fl;
        MM_CSR_SET(csr, t->rc);
        __asm__ volatile("" ::: "memory");
        if (t->level >= 2) f32_run_512(t, l0, l1, j0, n, out, add);
        else f32_run_256(t, l0, l1, j0, n, out, add);
        __asm__ volatile("" ::: "memory");
        fl = _mm_getcsr();
        _mm_setcsr(csr);
        return ((fl & _MM_EXCEPT_INEXACT) != 0) | ((fl & _MM_EXCEPT_OVERFLOW) ? 2 : 0);
    }
#endif
    return f32_run_c(t, l0, l1, j0, n, out, add);
}

/* row i of A decoded into arf / ard, its flags and specials */
static void f32_row(mm_model_fast *t, const mm_call *c, int64_t i)
{
    unsigned fl = 0, sp = 0;
    float mx = 0;
    if (t->wide) { /* decoded again (wide_range kept its flags and NaN / infinity) */
        unsigned char bad = 0;
        mm_decode(sfp8f_simd_level(), &t->Da, t->deca, c->sza, c->A + i * c->am, c->ak, c->k, t->line, &bad, 0,
                  &fl);
        for (int64_t l = 0; l < c->k; l++) {
            double v;
            memcpy(&v, &t->line[l], 8);
            if (t->arf) t->arf[l] = (float)v;
            else t->ard[l] = v;
            mx = fabsf((float)v) > mx ? fabsf((float)v) : mx;
        }
        fl = t->rflw[i];
        sp = t->rspw[i];
    }
    for (int64_t l = 0; !t->wide && l < c->k; l++) {
        uint8_t ca = *(const uint8_t *)(c->A + i * c->am + l * c->ak);
        if (t->arf) t->arf[l] = t->avf[ca];
        else t->ard[l] = t->avd[ca];
        fl |= t->fla[ca];
        sp |= t->cta[ca];
        mx = fabsf(t->avf[ca]) > mx ? fabsf(t->avf[ca]) : mx;
    }
    t->rowmax = mx;
    t->row = i;
    t->rowfl = fl;
    t->rowsp = sp;
}

static int f32_finite(const float *v, int n)
{
    int ok = 1;
    for (int jj = 0; jj < n; jj++) ok &= fabsf(v[jj]) <= FLT_MAX;
    return ok;
}

/* fast_promote of the binary32 chunk sums acc[0 .. n-1] (n <= FW), FB columns at a time */
static int promote_f32(mm_model_fast *t, const sfp8m_model *md, int64_t i, int64_t l, int64_t j0, int n,
                       const float *acc, double *F, int first, unsigned *fl, uint8_t *fl8)
{
    double S[FW];
    for (int jj = 0; jj < n; jj++) S[jj] = acc[jj];
    for (int j = 0; j < n; j += FB)
        if (!fast_promote(t, md, i, l, j0 + j, n - j < FB ? n - j : FB, S + j, F + j, first, fl, fl8)) return 0;
    return 1;
}

/* the row and columns of a block of the kernels on B decoded once: 0 (the generic kernel)
 * on a NaN or an infinity, or a product that may exceed pmax; *fl: the operands' flags,
 * those of the product table of the other paths (a finite product raises only its
 * operands' denormal flags, gv_mul), the row's and the columns' ORs */
static int f32_begin(mm_model_fast *t, const mm_call *c, int64_t i, int64_t j0, int n, unsigned *fl)
{
    unsigned sp;
    float cm = 0;
    if (t->row != i) f32_row(t, c, i);
    *fl = t->rowfl;
    sp = t->rowsp;
    for (int jj = 0; jj < n; jj++) {
        *fl |= t->colfl[j0 + jj];
        sp |= t->colsp[j0 + jj];
        if (t->colmax && t->colmax[j0 + jj] > cm) cm = t->colmax[j0 + jj];
    }
    return !sp && (double)t->rowmax * cm <= t->pmax;
}

/* model_f32's block: row i, columns j0 .. j0 + n - 1 (n <= FW).  The operands' flags
 * are those of the product table of the other paths (a finite product raises only
 * its operands' denormal flags, gv_mul): the row's and the columns' ORs. */
static int f32_block(mm_model_fast *t, mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0,
                     int n, unsigned *flout)
{
    const sfp8m_model *md = c->md;
    float out[FW], acc[FW];
    double F[FW];
    unsigned fl;
    uint8_t fl8 = 0;
    int inex = 0, first = 1;
    /* a binary32 running sum at nearest even beside an accumulator in another mode (level 1
       only, f32_directed): f32_promx_256 in one call, the MXCSR mode switched per chunk */
    const int padd = md->promote && !t->p32 && t->prom32;
    if (!f32_begin(t, c, i, j0, n, &fl)) return 0;
    if (t->level == 1 && !t->pq.level && c->k && (!md->promote || t->p32 || padd)) { /* the loop below in one call */
        inex = f32_prom(t, c->k, md->promote, j0, n, out, padd);
        if (inex & 2) return 0; /* overflow */
        first = 0;
        /* a sum that overflowed: an infinity or a NaN stays one through every later binary32
           addition of finite products or sums (inf + finite = inf, NaN + x = NaN), so the
           loop's test after each chunk is this one at the end */
        if (!f32_finite(out, n)) return 0;
    }
    for (int64_t l0 = first ? 0 : c->k; l0 < c->k;) {
        int64_t l1 = md->promote && c->k - l0 > md->promote ? l0 + md->promote : c->k; /* one chunk */
        if (!md->promote || t->p32) {
            inex |= f32_run(t, l0, l1, j0, n, out, md->promote && !first);
            if ((inex & 2) || !f32_finite(out, n)) return 0; /* overflow */
        } else {
            inex |= f32_run(t, l0, l1, j0, n, acc, 0);
            if ((inex & 2) || !f32_finite(acc, n)) return 0;
            if (!promote_f32(t, md, i, l1 - 1, j0, n, acc, F, first, &fl, &fl8)) return 0;
        }
        first = 0;
        l0 = l1;
    }
    if (!first && (!md->promote || t->p32 || padd)) /* padd: level 1 (f32_directed), one call */
        for (int jj = 0; jj < n; jj++) F[jj] = out[jj];
    fast_final(t, c, O, om, op, i, j0, n, first ? NULL : F, &fl8);
    *flout |= fl | (inex & 1 ? SFP8_FLAG_INEXACT : 0) | (inex & 4 ? SFP8_FLAG_UNDERFLOW : 0) | fl8;
    return 1;
}

/* model_fma16's block: row i, columns j0 .. j0 + n - 1 (n <= FW), chunk by chunk
 * (mm_nrw_run); a binary32 running sum by binary32 additions (mm_nrw_promote), any
 * other by fast_promote */
static int nrw_block(mm_model_fast *t, mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0,
                     int n, unsigned *flout)
{
    const sfp8m_model *md = c->md;
    float acc[FW], Fv[FW];
    double F[FW];
    unsigned fl, inex = 0;
    uint8_t fl8 = 0;
    int first = 1;
    if (!f32_begin(t, c, i, j0, n, &fl)) return 0;
    for (int64_t l0 = 0; l0 < c->k;) {
        int64_t l1 = md->promote && c->k - l0 > md->promote ? l0 + md->promote : c->k; /* one chunk */
        unsigned r = mm_nrw_run(&t->nq, t->arf, t->bf, t->P, l0, l1, j0, n, acc);
        if (r & 2) return 0; /* overflow possible: the generic kernel */
        inex |= r & 1;
        if (r & 4) fl |= SFP8_FLAG_UNDERFLOW;
        if (md->promote && t->prom32) { /* acc is finite (the kernel declines the top binade) */
            if (first) memcpy(Fv, acc, (size_t)n * sizeof(float));
            else if ((r = mm_nrw_promote(t->nq.level, Fv, acc, n)) & 2) return 0; /* overflow */
            else inex |= r;
        } else if (md->promote) {
            if (!promote_f32(t, md, i, l1 - 1, j0, n, acc, F, first, &fl, &fl8)) return 0;
        }
        first = 0;
        l0 = l1;
    }
    if (!first && (!md->promote || t->prom32))
        for (int jj = 0; jj < n; jj++) F[jj] = md->promote ? Fv[jj] : acc[jj];
    fast_final(t, c, O, om, op, i, j0, n, first ? NULL : F, &fl8);
    *flout |= fl | (inex ? SFP8_FLAG_INEXACT : 0) | fl8;
    return 1;
}

int mm_model_block(mm_model_fast *t, mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int64_t i, int64_t j0, int n,
                   unsigned *flout)
{
    const sfp8m_model *md = c->md;
    double acc[FB], F[FB];
    unsigned fl = 0;
    uint8_t fl8 = 0;
    int aemp = 1, femp = 1;
    if (t->colfl)
        return (t->path == SFP8M_MODEL_FMA16 ? nrw_block : f32_block)(t, c, O, om, op, i, j0, n, flout);
    for (int64_t l0 = 0; l0 < c->k;) {
        int64_t l1 = md->promote && c->k - l0 > md->promote ? l0 + md->promote : c->k; /* one chunk */
        if (!(t->ptf ? f32_chunk : odd_chunk)(t, c, i, j0, n, l0, l1, acc, &fl)) return 0;
        aemp = 0;
        if (md->promote) {
            if (!fast_promote(t, md, i, l1 - 1, j0, n, acc, F, femp, &fl, &fl8)) return 0;
            femp = 0;
            aemp = 1;
        }
        l0 = l1;
    }
    fast_final(t, c, O, om, op, i, j0, n, md->promote ? (femp ? NULL : F) : (aemp ? NULL : acc), &fl8);
    *flout |= fl | fl8;
    return 1;
}
