/*
 * NumPy glue: matmul, vecdot, matvec and vecmat loops (exact dot products,
 * one rounding per output element; a binary64 BLAS path when every partial
 * sum is exact) and the matmul_wide gufunc with float32 / float64 results.
 */
#include <math.h>

#include "glue.h"
#include "accum.h"
#include "fast.h"
#include "cast16.h"

typedef struct {
    LoopData ld;
    sfp8_format f;
    int out_kind; /* 0: the input format, 1: float32, 2: float64 */
    int blas;     /* the loop may take the binary64 BLAS path (holds the GIL) */
    PyArrayMethod_StridedLoop *loop; /* matmul, vecdot, matvec or vecmat */
} MatmulData;

static PyObject *np_matmul_fn = NULL; /* numpy.matmul, for the binary64 path */

/* 1 if code c of the format is a NaN or an infinity, read from its binary64
 * decoding table (built without saturation: see dec_table) */
static inline int code_special(const sfp8f_conv *dec, uint32_t c)
{
    return ((dec->val[c & (uint32_t)(dec->n - 1)] >> 52) & 0x7ff) == 0x7ff;
}

/* One output of matmul by the exact superaccumulator: row i of A times column j
 * of B.  With `only` (a decoding table), only the products with a NaN or an
 * infinity operand are added: the output of a row or column holding one, whose
 * result (NaN or infinity) and flags those products alone decide (the finite
 * products only add to the finite sum, ignored once a NaN or an infinity is
 * seen, and the denormal flags of their operands, which the caller ORs in). */
static void matmul_exact_element(const MatmulData *md, const sfp8_env *env, const char *A, const char *B, char *o,
                                 npy_intp i, npy_intp j, npy_intp n, npy_intp am, npy_intp an, npy_intp bn,
                                 npy_intp bp, const sfp8f_conv *only, uint8_t *fl)
{
    const sfp8_format *f = &md->f;
    int sz = f->bits <= 8 ? 1 : 2;
    SuperAcc sa;
    acc_init_k(&sa, f, 2);
    for (npy_intp l = 0; l < n; l++) {
        uint32_t x = load_code(A + i * am + l * an, sz), y = load_code(B + l * bn + j * bp, sz);
        if (!only || code_special(only, x) || code_special(only, y)) acc_add_product(&sa, f, x, y, fl);
    }
    if (md->out_kind == 0)
        store_code(o, sz, acc_round(&sa, f, env, fl));
    else
        store_raw(o, md->out_kind == 1 ? 4 : 8,
                  acc_round_float(&sa, f, md->out_kind == 1 ? &sfp8_binary32 : &sfp8_binary64, env, fl));
}

/* The format's values in binary64 (exact for the formats of the BLAS paths).
 * Built round-to-nearest and WITHOUT saturation whatever the call's
 * environment: a saturating environment would decode infinities as the
 * largest binary64 (the bug that made the first version of matmul_blas_ziv
 * leave outputs unwritten under a saturating format). */
static const sfp8f_conv *dec_table(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    sfp8_env e = *env;
    e.rounding = SFP8_ROUND_NEAREST_EVEN;
    e.saturate = 0;
    return sfp8f_convert(f, &sfp8_binary64, &e, n);
}

/* Per row of A / column of B statistics for matmul_blas_ziv: st = {sum |v|,
 * max |v|, sum v^2 (then its square root)}, *q = the lowest exponent of a
 * significant bit of the non-zero values (4096 if none). */
static inline void stat_add(double *st, int *q, uint64_t b)
{
    double v, av;
    uint64_t sig = b & (((uint64_t)1 << 52) - 1);
    int ef = (int)((b >> 52) & 0x7ff);
    memcpy(&v, &b, 8);
    av = fabs(v);
    st[0] += av;
    st[1] = av > st[1] ? av : st[1];
    st[2] += v * v;
    if (ef) sig |= (uint64_t)1 << 52;
    else ef = 1;
    if (sig) {
        int e = ef - 1075 + __builtin_ctzll(sig);
        *q = e < *q ? e : *q;
    }
}

/* cnt codes at src (stride st) decoded into dst (NaN and infinity as 0);
 * bad[k * bs] marks a NaN or an infinity at k, the statistics go to
 * st3[3 k * ss] / q[k * ss] (st3 may be NULL); *fl collects the flags of the
 * finite operands.  Table pointers and flags in locals: the byte stores into
 * bad may alias anything. */
static void decode_line(const sfp8f_conv *dec, int sz, const char *src, npy_intp st, npy_intp cnt, uint64_t *dst,
                        unsigned char *bad, npy_intp bs, double *st3, int *q, npy_intp ss, unsigned *fl)
{
    const uint64_t *val = dec->val;
    const uint8_t *dfl = dec->fl;
    uint32_t mask = (uint32_t)(dec->n - 1);
    unsigned f = 0;
    for (npy_intp k = 0; k < cnt; k++) {
        uint32_t c = sz == 1 ? *(const uint8_t *)(src + k * st) : load_code(src + k * st, 2) & mask;
        uint64_t b = val[c];
        unsigned special = ((b >> 52) & 0x7ff) == 0x7ff;
        dst[k] = special ? 0 : b;
        f |= special ? 0 : dfl[c];
        if (special) bad[k * bs] = 1;
    }
    *fl |= f;
    if (st3)
        for (npy_intp k = 0; k < cnt; k++) stat_add(st3 + 3 * k * ss, q + k * ss, dst[k]);
}

/* A (m x n) and B (n x p) into row-major binary64 matrices pa and pb, both
 * read in row order (B's columns gathered through per-column arrays); NaN and
 * infinity operands are stored as 0 and mark their row / column in bad_row /
 * bad_col; with ra, the statistics of stat_add per row of A (ra[3 i..], qa[i])
 * and per column of B (rb[3 j..], qb[j]), the sums of squares replaced by
 * their square roots.  Returns the OR of the flags of the finite operands. */
static unsigned decode_operands(const sfp8f_conv *dec, int sz, const char *A, const char *B, npy_intp m,
                                npy_intp n, npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp,
                                double *pa, double *pb, unsigned char *bad_row, unsigned char *bad_col,
                                double *ra, double *rb, int *qa, int *qb)
{
    unsigned fl = 0;
    if (ra) {
        for (npy_intp i = 0; i < 3 * m; i++) ra[i] = 0;
        for (npy_intp j = 0; j < 3 * p; j++) rb[j] = 0;
        for (npy_intp i = 0; i < m; i++) qa[i] = 4096;
        for (npy_intp j = 0; j < p; j++) qb[j] = 4096;
    }
    for (npy_intp i = 0; i < m; i++) /* row i of A: one bad flag, one set of statistics */
        decode_line(dec, sz, A + i * am, an, n, (uint64_t *)(pa + i * n), &bad_row[i], 0,
                    ra ? ra + 3 * i : NULL, ra ? qa + i : NULL, 0, &fl);
    for (npy_intp l = 0; l < n; l++) /* row l of B: one per column */
        decode_line(dec, sz, B + l * bn, bp, p, (uint64_t *)(pb + l * p), bad_col, 1, rb, qb, 1, &fl);
    if (ra) {
        for (npy_intp i = 0; i < m; i++) ra[3 * i + 2] = sqrt(ra[3 * i + 2]);
        for (npy_intp j = 0; j < p; j++) rb[3 * j + 2] = sqrt(rb[3 * j + 2]);
    }
    return fl;
}

/* numpy.matmul of two binary64 matrices (BLAS dgemm): a new reference or NULL */
static PyArrayObject *blas_product(PyArrayObject *Ad, PyArrayObject *Bd)
{
    PyArrayObject *Dd = (PyArrayObject *)PyObject_CallFunctionObjArgs(np_matmul_fn, (PyObject *)Ad, (PyObject *)Bd, NULL);
    if (Dd && (!PyArray_Check(Dd) || PyArray_TYPE(Dd) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(Dd))) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 matmul: unexpected binary64 product");
        Py_DECREF(Dd);
        return NULL;
    }
    return Dd;
}

/* Outputs are finished in blocks of MM_BLK (flat index i * p + j): the
 * certificate / Ziv states, the values to round and their codes live in
 * buffers of one block (cache-resident, no page faults of m * p sized
 * buffers), and each block's values are rounded by one vector call. */
#define MM_BLK 2048

/* Exact products and sums in binary64 through BLAS: every code is v * 2^qmin
 * with |v| < 2^vbits, so n * 2^(2 vbits) <= 2^53 keeps every partial sum an
 * exact binary64 in any order.  NaN and infinity operands enter the product as
 * 0 and the outputs of their rows / columns take matmul_exact_element with
 * only the special products.  Returns 1 when done, 0 to take the exact
 * accumulator instead, -1 on a Python error. */
static int matmul_blas_tables(MatmulData *md, const sfp8_env *env, char *A, char *B, char *O, npy_intp m, npy_intp n,
                       npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om, npy_intp op,
                       unsigned *accf)
{
    const sfp8_format *f = &md->f;
    const sfp8f_sum *st;
    const sfp8f_conv *dec;
    const uint16_t *fromf = NULL;
    sfp8f_rnd r32;
    PyArrayObject *Ad = NULL, *Bd = NULL, *Dd = NULL;
    const double *pd;
    double *good = NULL;
    uint32_t *code = NULL;
    unsigned char *bad_row = NULL, *bad_col = NULL;
    unsigned fl = 0;
    npy_intp dims[2], mp = m * p;
    int lg = 0, ret = -1;
    if (!md->blas || f->bits > 8 || m == 0 || n == 0 || p == 0) return 0;
    st = sfp8f_sum_table(f, m * n + n * p);
    if (!st) return 0;
    while (((npy_intp)1 << lg) < n) lg++;
    if (lg + 2 * st->vbits > 53) return 0;
    dec = dec_table(f, env, m * n + n * p);
    if (!dec) return 0;
    if (md->out_kind == 0 && !(fromf = sfp8f_from_float(f, env, mp))) return 0;
    if (md->out_kind == 1 && !sfp8f_rounder(&sfp8_binary32, env, &r32)) return 0;
    dims[0] = m; dims[1] = n;
    Ad = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    dims[0] = n; dims[1] = p;
    Bd = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    bad_row = PyMem_Calloc((size_t)m, 1);
    bad_col = PyMem_Calloc((size_t)p, 1);
    good = PyMem_Malloc(MM_BLK * sizeof(double));
    code = PyMem_Malloc(MM_BLK * sizeof(uint32_t));
    if (!Ad || !Bd || !bad_row || !bad_col || !good || !code) goto nomem;
    Py_BEGIN_ALLOW_THREADS /* C only until the BLAS call */
    fl |= decode_operands(dec, 1, A, B, m, n, p, am, an, bn, bp, (double *)PyArray_DATA(Ad),
                          (double *)PyArray_DATA(Bd), bad_row, bad_col, NULL, NULL, NULL, NULL);
    Py_END_ALLOW_THREADS
    if (!(Dd = blas_product(Ad, Bd))) goto fail;
    pd = (const double *)PyArray_DATA(Dd);
    Py_BEGIN_ALLOW_THREADS /* the finishing passes: C only */
    for (npy_intp k0 = 0; k0 < mp; k0 += MM_BLK) {
        npy_intp k1 = mp - k0 < MM_BLK ? mp : k0 + MM_BLK, i = k0 / p, j = k0 % p, ng = 0;
        if (md->out_kind != 2) { /* the regular outputs of the block, rounded in one call */
            for (npy_intp k = k0; k < k1; k++) {
                if (!bad_row[i] && !bad_col[j] && pd[k] != 0) good[ng++] = pd[k];
                if (++j == p) j = 0, i++;
            }
            if (md->out_kind == 1) {
                fl |= sfp8f_round_doubles(&r32, good, ng, code);
            } else {
                fl |= sfp8f_run_from_float(fromf, (const char *)good, 8, 8, (char *)code, 1, ng, NULL);
            }
            i = k0 / p, j = k0 % p, ng = 0;
        }
        for (npy_intp k = k0; k < k1; k++) {
            double d = pd[k];
            char *o = O + i * om + j * op;
            if (bad_row[i] || bad_col[j] || d == 0) {
                /* NaN / infinity, or the sign of an exact zero: the exact accumulator */
                uint8_t f0 = 0;
                matmul_exact_element(md, env, A, B, o, i, j, n, am, an, bn, bp,
                                     bad_row[i] || bad_col[j] ? dec : NULL, &f0);
                fl |= f0;
            } else if (md->out_kind == 0) {
                *(uint8_t *)o = ((const uint8_t *)code)[ng++];
            } else if (md->out_kind == 1) {
                memcpy(o, &code[ng++], 4);
            } else {
                memcpy(o, &d, 8);
            }
            if (++j == p) j = 0, i++;
        }
    }
    Py_END_ALLOW_THREADS
    *accf |= fl;
    ret = 1;
    goto done;
nomem:
    if (!PyErr_Occurred()) PyErr_NoMemory();
done:
fail:
    PyMem_Free(code);
    PyMem_Free(good);
    PyMem_Free(bad_row);
    PyMem_Free(bad_col);
    Py_XDECREF(Ad);
    Py_XDECREF(Bd);
    Py_XDECREF(Dd);
    return ret;
}

/* Rounding of binary64 values into the result's format, for matmul_blas_ziv:
 * through the fast paths' vector casts (8-bit results: the binary64 key table
 * or cast64.c's arithmetic; 16-bit results: cast16.c), their rounder
 * (binary32) or the core (codes only: the flags of accepted results are
 * derived, see below). */
typedef struct {
    const sfp8_format *dst;
    const uint16_t *fromf;  /* 8-bit results: the binary64 key table */
    sfp8f_c16 c16;          /* 16-bit results: the vector cast */
    int use_c16;
    sfp8f_rnd rnd;          /* or the fast rounder */
    int use_rnd;
    const sfp8f_conv *dec;  /* format results: code -> binary64 */
    double min_normal, max_finite;
} ZivRound;

/* out[k] = d[k] rounded (n <= MM_BLK); returns the OR of the flags */
static unsigned ziv_round(const ZivRound *z, const sfp8_env *env, const double *d, npy_intp n, uint32_t *out)
{
    unsigned fl = 0;
    if (z->use_rnd) return sfp8f_round_doubles(&z->rnd, d, n, out);
    if (z->fromf || z->use_c16) {
        /* narrow codes into the front of out, widened from the back */
        if (z->fromf) {
            uint8_t *c = (uint8_t *)out;
            fl = sfp8f_run_from_float(z->fromf, (const char *)d, 8, 8, (char *)c, 1, n, NULL);
            for (npy_intp k = n; k-- > 0;) out[k] = c[k];
        } else {
            uint16_t *c = (uint16_t *)out;
            fl = sfp8f_run_cast16(&z->c16, (const char *)d, 8, 8, (char *)c, 2, n, NULL);
            for (npy_intp k = n; k-- > 0;) out[k] = c[k];
        }
        return fl;
    }
    for (npy_intp k = 0; k < n; k++) {
        uint64_t b;
        uint8_t f0 = 0;
        memcpy(&b, &d[k], 8);
        out[k] = (uint32_t)sfp8_convert(&sfp8_binary64, z->dst, b, env, &f0);
        fl |= f0;
    }
    return fl;
}

static double ziv_value(const ZivRound *z, uint32_t code)
{
    if (z->dec) {
        double v;
        memcpy(&v, &z->dec->val[code & (uint32_t)(z->dec->n - 1)], 8);
        return v;
    } else {
        float v;
        memcpy(&v, &code, 4);
        return (double)v;
    }
}

/* Exact matmul of any format whose values and products are binary64 numbers,
 * with a float64 BLAS product and Ziv's test (as the elementary functions do):
 * c = the binary64 product, |c - exact| <= e with e = gamma_{n+4} * S + tiny,
 * S >= sum |a_l b_l| (the smallest of three cheap bounds: row sum times column
 * max, row max times column sum, the product of the Euclidean norms).
 *   - certificate: S < 2^(qa + qb + 53), qa / qb the lowest bit exponents of
 *     the row / column: every partial sum is an exact binary64, c is the exact
 *     sum, rounded once (a zero c takes the exact accumulator: its sign);
 *   - else Ziv: accepted when c - e and c + e round to the same code r, the
 *     value of r lies outside [c - e, c + e] (so the exact sum is not
 *     representable: the flags are inexact alone), the interval does not
 *     contain 0, and r is neither near the underflow range nor near overflow
 *     (where tininess or overflow could differ between the ends);
 *   - every other output takes the exact accumulator, and the outputs of a row
 *     of A or a column of B holding a NaN or an infinity (entered as 0 in the
 *     product) the exact accumulator over the special products alone.
 * Returns 1 when done, 0 when not applicable, -1 on a Python error. */
static int matmul_blas_ziv(MatmulData *md, const sfp8_env *env, char *A, char *B, char *O, npy_intp m, npy_intp n,
                           npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om,
                           npy_intp op, unsigned *accf)
{
    enum { CERT, ZIV, SPECIAL, EXACT };
    const sfp8_format *f = &md->f;
    int sz = f->bits <= 8 ? 1 : 2;
    const sfp8f_conv *dec;
    ZivRound z;
    PyArrayObject *Ad = NULL, *Bd = NULL, *Dd = NULL;
    double *buf = NULL, *ra, *rb, *xs, *lo, *hi, gamma, tiny;
    int *qa = NULL, *qb;
    const double *pd;
    uint32_t *cx = NULL, *clo, *chi;
    unsigned char *bad_row = NULL, *bad_col = NULL, *state;
    unsigned fl = 0;
    int ret = -1;
    npy_intp dims[2], mp = m * p;
    int64_t qmin = (int64_t)-f->bias - f->man_bits, top = ((int64_t)1 << f->exp_bits) - f->bias + 2;
    if (!md->blas || md->out_kind == 2 || m == 0 || n == 0 || p == 0) return 0;
    /* products and sums far from binary64's underflow and overflow */
    if (2 * qmin < -1000 || 2 * top > 900 || n > ((npy_intp)1 << 30)) return 0;
    memset(&z, 0, sizeof z);
    dec = dec_table(f, env, m * n + n * p);
    if (!dec) return 0;
    if (md->out_kind == 1) {
        z.dst = &sfp8_binary32;
        if (!sfp8f_rounder(&sfp8_binary32, env, &z.rnd)) return 0;
        z.use_rnd = 1;
        z.min_normal = 0x1p-126;
        z.max_finite = 0x1.fffffep127;
    } else {
        uint64_t b;
        uint8_t f0 = 0;
        sfp8_env ex = *env;
        z.dst = f;
        z.dec = dec;
        if (f->bits <= 8) z.fromf = sfp8f_from_float(f, env, mp);
        else z.use_c16 = sfp8f_cast16(&sfp8_binary64, f, env, &z.c16);
        if (!z.fromf && !z.use_c16) z.use_rnd = sfp8f_rounder(f, env, &z.rnd);
        ex.rounding = SFP8_ROUND_NEAREST_EVEN;
        b = sfp8_convert(f, &sfp8_binary64, sfp8_min_normal_code(f), &ex, &f0);
        memcpy(&z.min_normal, &b, 8);
        b = sfp8_convert(f, &sfp8_binary64, sfp8_max_code(f), &ex, &f0);
        memcpy(&z.max_finite, &b, 8);
    }
    dims[0] = m; dims[1] = n;
    Ad = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    dims[0] = n; dims[1] = p;
    Bd = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    /* per row of A: sum |a|, max |a|, sqrt(sum a^2), and qa: lowest bit
       exponent; per column of B the same; then one block's values to round */
    buf = PyMem_Malloc((size_t)(3 * m + 3 * p + 3 * MM_BLK) * sizeof(double));
    qa = PyMem_Malloc((size_t)(m + p) * sizeof(int));
    cx = PyMem_Malloc((size_t)3 * MM_BLK * 4 + MM_BLK);
    bad_row = PyMem_Calloc((size_t)m, 1);
    bad_col = PyMem_Calloc((size_t)p, 1);
    if (!Ad || !Bd || !buf || !qa || !cx || !bad_row || !bad_col) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto fail;
    }
    ra = buf;
    rb = ra + 3 * m;
    xs = rb + 3 * p;
    lo = xs + MM_BLK;
    hi = lo + MM_BLK;
    qb = qa + m;
    clo = cx + MM_BLK;
    chi = clo + MM_BLK;
    state = (unsigned char *)(chi + MM_BLK);
    Py_BEGIN_ALLOW_THREADS /* C only until the BLAS call */
    fl |= decode_operands(dec, sz, A, B, m, n, p, am, an, bn, bp, (double *)PyArray_DATA(Ad),
                          (double *)PyArray_DATA(Bd), bad_row, bad_col, ra, rb, qa, qb);
    Py_END_ALLOW_THREADS
    if (!(Dd = blas_product(Ad, Bd))) goto fail;
    pd = (const double *)PyArray_DATA(Dd);
    Py_BEGIN_ALLOW_THREADS /* the certificate, Ziv's test and the finishing passes: C only */
    /* gamma_{n+4} with u = 2^-53, inflated for the rounding of the bounds themselves */
    gamma = (double)(n + 4) * 0x1p-53 / (1 - (double)(n + 4) * 0x1p-53) * (1 + 0x1p-20);
    /* an absolute term for underflow (none can occur here: every partial sum is 0 or
       at least 2^(2 qmin) >= 2^-1000), kept normal: subnormal operands are slow */
    tiny = (double)(n + 4) * 0x1p-1022;
    for (npy_intp k0 = 0; k0 < mp; k0 += MM_BLK) {
        npy_intp k1 = mp - k0 < MM_BLK ? mp : k0 + MM_BLK, i = k0 / p, j = k0 % p, nx = 0, nc = 0;
        for (npy_intp k = k0; k < k1; k++) {
            const double *x = &ra[3 * i], *y = &rb[3 * j];
            double s = x[0] * y[1], t = x[1] * y[0], q = x[2] * y[2], e, c = pd[k];
            unsigned char *sk = &state[k - k0];
            uint64_t sb;
            int qi = qa[i] + qb[j], bad = bad_row[i] || bad_col[j];
            if (++j == p) j = 0, i++;
            if (bad) {
                *sk = SPECIAL;
                continue;
            }
            if (c == 0 || !isfinite(c)) {
                *sk = EXACT;
                continue;
            }
            /* S: the smallest bound, inflated for the rounding errors of the
               bounds (n terms: relative error below 2^-20 for n < 2^30) */
            s = t < s ? t : s;
            s = q < s ? q : s;
            s *= 1 + 0x1p-20;
            memcpy(&sb, &s, 8);
            /* s > 0 normal (c != 0): s < 2^(qa + qb + 53) iff its exponent is below */
            if ((int)(sb >> 52) - 1023 < qi + 53) {
                *sk = CERT;
                xs[nx++] = c;
                continue;
            }
            e = gamma * s + tiny;
            if (!(c - e > 0x1p-1000 || c + e < -0x1p-1000)) { /* near or across 0 */
                *sk = EXACT;
                continue;
            }
            *sk = ZIV;
            lo[nc] = c - e;
            hi[nc++] = c + e;
        }
        /* the certified exact sums, rounded once (their flags are the results'),
           and both ends of each Ziv interval (their flags are not) */
        fl |= ziv_round(&z, env, xs, nx, cx);
        ziv_round(&z, env, lo, nc, clo);
        ziv_round(&z, env, hi, nc, chi);
        nx = nc = 0;
        i = k0 / p, j = k0 % p;
        for (npy_intp k = k0; k < k1; k++) {
            char *o = O + i * om + j * op;
            int s = state[k - k0];
            uint32_t r;
            if (s == CERT) {
                r = cx[nx++];
            } else if (s == ZIV) {
                double v, av, l = lo[nc], h = hi[nc];
                r = clo[nc];
                v = ziv_value(&z, r);
                av = fabs(v);
                if (r != chi[nc++] || (v >= l && v <= h) || !(av >= 2 * z.min_normal) || !(av <= 0.5 * z.max_finite))
                    s = EXACT;
                else
                    fl |= SFP8_FLAG_INEXACT;
            }
            if (s == CERT || s == ZIV) {
                if (md->out_kind == 1) memcpy(o, &r, 4);
                else store_code(o, sz, r);
            } else {
                uint8_t f0 = 0;
                matmul_exact_element(md, env, A, B, o, i, j, n, am, an, bn, bp, s == SPECIAL ? dec : NULL, &f0);
                fl |= f0;
            }
            if (++j == p) j = 0, i++;
        }
    }
    Py_END_ALLOW_THREADS
    *accf |= fl;
    ret = 1;
fail:
    Py_XDECREF(Ad);
    Py_XDECREF(Bd);
    Py_XDECREF(Dd);
    PyMem_Free(buf);
    PyMem_Free(qa);
    PyMem_Free(cx);
    PyMem_Free(bad_row);
    PyMem_Free(bad_col);
    return ret;
}

/* matmul_blas inside a read section of the table cache (fast/cache.c): the
 * tables it looks up stay alive until it returns. */
static int matmul_blas(MatmulData *md, const sfp8_env *env, char *A, char *B, char *O, npy_intp m, npy_intp n,
                       npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om, npy_intp op,
                       unsigned *accf)
{
    unsigned tok = sfp8f_read_begin();
    int r = md->f.bits <= 8 ? matmul_blas_tables(md, env, A, B, O, m, n, p, am, an, bn, bp, om, op, accf) : 0;
    if (r == 0) r = matmul_blas_ziv(md, env, A, B, O, m, n, p, am, an, bn, bp, om, op, accf);
    sfp8f_read_end(tok);
    return r;
}

/* N products (m,n) x (n,p) -> (m,p), one per outer index, with the core
 * strides given: the loop of matmul and, with m or p (or both) 1 and the
 * strides of the missing dimensions 0, of vecdot, matvec and vecmat */
static int matmul_run(MatmulData *md, char *const data[], const npy_intp outer[], npy_intp N, npy_intp m,
                      npy_intp n, npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om,
                      npy_intp op)
{
    const sfp8_format *f = &md->f;
    unsigned int accf = 0;
    sfp8_env env;
    const npy_intp *strides = outer;
    /* the settings (saturation by default) of the result's format */
    loop_env_for(&md->ld, md->out_kind == 0 ? f : md->out_kind == 1 ? &sfp8_binary32 : &sfp8_binary64, &env);
    for (npy_intp k = 0; k < N; k++) {
        char *A = data[0] + k * strides[0], *B = data[1] + k * strides[1], *O = data[2] + k * strides[2];
        int done = matmul_blas(md, &env, A, B, O, m, n, p, am, an, bn, bp, om, op, &accf);
        if (done < 0) return -1;
        if (done) continue;
        for (npy_intp i = 0; i < m; i++) {
            for (npy_intp j = 0; j < p; j++) {
                uint8_t fl = 0;
                if (md->ld.stoch) env.random = loop_random(&md->ld);
                matmul_exact_element(md, &env, A, B, O + i * om + j * op, i, j, n, am, an, bn, bp, NULL, &fl);
                accf |= fl;
            }
        }
    }
    loop_publish(&md->ld, accf);
    return 0;
}

static int matmul_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                       npy_intp const strides[], NpyAuxData *auxdata)
{
    const npy_intp *d = dimensions, *s = strides;
    (void)context;
    return matmul_run((MatmulData *)auxdata, data, s, d[0], d[1], d[2], d[3], s[3], s[4], s[5], s[6], s[7], s[8]);
}

/* vecdot (n),(n)->(): a 1 x n times n x 1 product */
static int vecdot_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                       npy_intp const strides[], NpyAuxData *auxdata)
{
    const npy_intp *d = dimensions, *s = strides;
    (void)context;
    return matmul_run((MatmulData *)auxdata, data, s, d[0], 1, d[1], 1, 0, s[3], s[4], 0, 0, 0);
}

/* matvec (m,n),(n)->(m): m x n times n x 1 */
static int matvec_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                       npy_intp const strides[], NpyAuxData *auxdata)
{
    const npy_intp *d = dimensions, *s = strides;
    (void)context;
    return matmul_run((MatmulData *)auxdata, data, s, d[0], d[1], d[2], 1, s[3], s[4], s[5], 0, s[6], 0);
}

/* vecmat (n),(n,m)->(m): 1 x n times n x m */
static int vecmat_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                       npy_intp const strides[], NpyAuxData *auxdata)
{
    const npy_intp *d = dimensions, *s = strides;
    (void)context;
    return matmul_run((MatmulData *)auxdata, data, s, d[0], 1, d[1], d[2], 0, s[3], s[4], s[5], 0, s[6]);
}

static int dot_get_loop(PyArrayMethod_StridedLoop *loop, PyArrayMethod_Context *context,
                        PyArrayMethod_StridedLoop **out_loop, NpyAuxData **out_transferdata,
                        NPY_ARRAYMETHOD_FLAGS *flags)
{
    MatmulData *md = loopdata_alloc(sizeof(MatmulData));
    if (!md) return -1;
    md->loop = loop;
    md->f = *descr_fmt(context->descriptors[0]);
    switch (context->descriptors[2]->type_num) {
    case NPY_FLOAT: md->out_kind = 1; break;
    case NPY_DOUBLE: md->out_kind = 2; break;
    default: md->out_kind = 0; break;
    }
    /* the binary64 BLAS path calls numpy.matmul: the loop then holds the GIL;
       it needs every value of the format to be an exact binary64 */
    md->blas = np_matmul_fn && sfp8f_enabled() && !md->ld.stoch && acc_binary64_exact(&md->f);
    *out_loop = md->loop;
    *out_transferdata = (NpyAuxData *)md;
    *flags = md->blas ? NPY_METH_REQUIRES_PYAPI : 0;
    return 0;
}

#define DOT_GET_LOOP(name, loop) SFP8_GET_LOOP(name, dot_get_loop(loop, context, out_loop, out_transferdata, flags))
DOT_GET_LOOP(matmul_get_loop, matmul_loop)
DOT_GET_LOOP(vecdot_get_loop, vecdot_loop)
DOT_GET_LOOP(matvec_get_loop, matvec_loop)
DOT_GET_LOOP(vecmat_get_loop, vecmat_loop)

static NPY_CASTING matmul_resolve_float(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
                                        PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *vo)
{
    NPY_CASTING c = ufunc_resolve(self, dtypes, given, loop, vo, 2, 1, 0);
    if ((int)c < 0) return c;
    Py_DECREF(loop[2]);
    loop[2] = PyArray_DescrFromType(dtypes[2] == &PyArray_FloatDType ? NPY_FLOAT : NPY_DOUBLE);
    return NPY_NO_CASTING;
}

static PyObject *matmul_wide = NULL; /* gufunc with float32/float64 results */

PyObject *sfp8_matmul_wide_ufunc(void)
{
    if (!matmul_wide)
        matmul_wide = PyUFunc_FromFuncAndDataAndSignature(
            NULL, NULL, NULL, 0, 2, 1, PyUFunc_None, "matmul_wide",
            "softfp8 matmul with a float32/float64 result (exact accumulation, one rounding)", 0,
            "(m,n),(n,p)->(m,p)");
    Py_XINCREF(matmul_wide);
    return matmul_wide;
}

/* np.vecdot, np.matvec, np.vecmat: exact dot products rounded once into the
   operands' format, as matmul */
static int add_vector_loops(PyObject *numpy_module, PyArray_DTypeMeta *cls)
{
    static const char *const names[3] = {"vecdot", "matvec", "vecmat"};
    PyArrayMethod_GetLoop *const get[3] = {vecdot_get_loop, matvec_get_loop, vecmat_get_loop};
    for (int k = 0; k < 3; k++) {
        PyObject *uf = PyObject_GetAttrString(numpy_module, names[k]);
        PyArray_DTypeMeta *dtypes[3] = {cls, cls, cls};
        PyType_Slot slots[] = {
            {NPY_METH_resolve_descriptors, (void *)resolve_2_1},
            {NPY_METH_get_loop, (void *)get[k]},
            {0, NULL}
        };
        PyArrayMethod_Spec spec = {
            .name = names[k], .nin = 2, .nout = 1, .casting = NPY_NO_CASTING,
            .flags = NPY_METH_SUPPORTS_UNALIGNED, .dtypes = dtypes, .slots = slots,
        };
        int r;
        if (!uf) return -1;
        r = PyUFunc_AddLoopFromSpec(uf, &spec);
        Py_DECREF(uf);
        if (r < 0) return -1;
    }
    return 0;
}

int add_matmul_loops(PyObject *numpy_module, PyArray_DTypeMeta *cls)
{
    if (add_vector_loops(numpy_module, cls) < 0) return -1;
    PyObject *uf = PyObject_GetAttrString(numpy_module, "matmul");
    PyArray_DTypeMeta *outs[3] = {cls, &PyArray_FloatDType, &PyArray_DoubleDType};
    if (!uf) return -1;
    if (!np_matmul_fn) {
        np_matmul_fn = uf;
        Py_INCREF(np_matmul_fn);
    }
    for (int k = 0; k < 3; k++) {
        if (k == 1) {
            Py_DECREF(uf);
            uf = sfp8_matmul_wide_ufunc();
            if (!uf) return -1;
        }
        PyArray_DTypeMeta *dtypes[3] = {cls, cls, outs[k]};
        PyType_Slot slots[] = {
            {NPY_METH_resolve_descriptors, k == 0 ? (void *)resolve_2_1 : (void *)matmul_resolve_float},
            {NPY_METH_get_loop, (void *)matmul_get_loop},
            {0, NULL}
        };
        PyArrayMethod_Spec spec = {
            .name = "softfp8_matmul", .nin = 2, .nout = 1, .casting = NPY_NO_CASTING,
            .flags = NPY_METH_SUPPORTS_UNALIGNED, .dtypes = dtypes, .slots = slots,
        };
        if (PyUFunc_AddLoopFromSpec(uf, &spec) < 0) {
            Py_DECREF(uf);
            return -1;
        }
    }
    Py_DECREF(uf);
    return 0;
}
