/*
 * NumPy glue: matmul, vecdot, matvec and vecmat loops (exact dot products,
 * one rounding per output element; a binary64 BLAS path when every partial
 * sum is exact) and the matmul_wide gufunc with float32 / float64 results.
 */
#include <math.h>

#include "glue.h"
#include "accum.h"
#include "fast.h"

typedef struct {
    LoopData ld;
    sfp8_format f;
    int out_kind; /* 0: the input format, 1: float32, 2: float64 */
    int blas;     /* the loop may take the binary64 BLAS path (holds the GIL) */
    PyArrayMethod_StridedLoop *loop; /* matmul, vecdot, matvec or vecmat */
} MatmulData;

static PyObject *np_matmul_fn = NULL; /* numpy.matmul, for the binary64 path */

/* One output of matmul by the exact superaccumulator: row i of A times column j of B. */
static void matmul_exact_element(const MatmulData *md, const sfp8_env *env, const char *A, const char *B, char *o,
                                 npy_intp i, npy_intp j, npy_intp n, npy_intp am, npy_intp an, npy_intp bn,
                                 npy_intp bp, uint8_t *fl)
{
    const sfp8_format *f = &md->f;
    int sz = f->bits <= 8 ? 1 : 2;
    SuperAcc sa;
    acc_init_k(&sa, f, 2);
    for (npy_intp l = 0; l < n; l++)
        acc_add_product(&sa, f, load_code(A + i * am + l * an, sz), load_code(B + l * bn + j * bp, sz), fl);
    if (md->out_kind == 0)
        store_code(o, sz, acc_round(&sa, f, env, fl));
    else
        store_raw(o, md->out_kind == 1 ? 4 : 8,
                  acc_round_float(&sa, f, md->out_kind == 1 ? &sfp8_binary32 : &sfp8_binary64, env, fl));
}

/* Exact products and sums in binary64 through BLAS: every code is v * 2^qmin
 * with |v| < 2^vbits, so n * 2^(2 vbits) <= 2^53 keeps every partial sum an
 * exact binary64 in any order.  Returns 1 when done, 0 to take the exact
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
    double *pa, *pb;
    const double *pd;
    uint32_t *r32buf = NULL;
    unsigned fl = 0, bad = 0;
    npy_intp dims[2];
    int lg = 0;
    if (!md->blas || m == 0 || n == 0 || p == 0) return 0;
    st = sfp8f_sum_table(f, m * n + n * p);
    if (!st) return 0;
    while (((npy_intp)1 << lg) < n) lg++;
    if (lg + 2 * st->vbits > 53) return 0;
    dec = sfp8f_convert(f, &sfp8_binary64, env, m * n + n * p);
    if (!dec) return 0;
    if (md->out_kind == 0 && !(fromf = sfp8f_from_float(f, env, m * p))) return 0;
    if (md->out_kind == 1 && !sfp8f_rounder(&sfp8_binary32, env, &r32)) return 0;
    dims[0] = m; dims[1] = n;
    Ad = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    dims[0] = n; dims[1] = p;
    Bd = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (!Ad || !Bd) goto fail;
    pa = (double *)PyArray_DATA(Ad);
    pb = (double *)PyArray_DATA(Bd);
    for (npy_intp i = 0; i < m; i++)
        for (npy_intp l = 0; l < n; l++) {
            uint8_t c = *(uint8_t *)(A + i * am + l * an);
            memcpy(&pa[i * n + l], &dec->val[c], 8);
            fl |= dec->fl[c];
            bad |= st->cat[c];
        }
    for (npy_intp l = 0; l < n; l++)
        for (npy_intp j = 0; j < p; j++) {
            uint8_t c = *(uint8_t *)(B + l * bn + j * bp);
            memcpy(&pb[l * p + j], &dec->val[c], 8);
            fl |= dec->fl[c];
            bad |= st->cat[c];
        }
    if (bad & SFP8F_SUM_SPECIAL) { /* NaN or infinity: the exact accumulator */
        Py_DECREF(Ad);
        Py_DECREF(Bd);
        return 0;
    }
    Dd = (PyArrayObject *)PyObject_CallFunctionObjArgs(np_matmul_fn, (PyObject *)Ad, (PyObject *)Bd, NULL);
    if (!Dd) goto fail;
    if (!PyArray_Check(Dd) || PyArray_TYPE(Dd) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(Dd)) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 matmul: unexpected binary64 product");
        goto fail;
    }
    pd = (const double *)PyArray_DATA(Dd);
    if (md->out_kind == 1) { /* binary32 results, rounded in one pass */
        r32buf = PyMem_Malloc((size_t)(m * p) * 4);
        if (!r32buf) {
            PyErr_NoMemory();
            goto fail;
        }
        fl |= sfp8f_round_doubles(&r32, pd, m * p, r32buf);
    }
    for (npy_intp i = 0; i < m; i++)
        for (npy_intp j = 0; j < p; j++) {
            double d = pd[i * p + j];
            char *o = O + i * om + j * op;
            if (d == 0) { /* the sign of an exact zero: the exact accumulator */
                uint8_t f0 = 0;
                matmul_exact_element(md, env, A, B, o, i, j, n, am, an, bn, bp, &f0);
                fl |= f0;
            } else if (md->out_kind == 0) {
                uint64_t b;
                uint16_t v;
                memcpy(&b, &d, 8);
                v = fromf[sfp8f_key64(b)];
                *(uint8_t *)o = (uint8_t)v;
                fl |= (unsigned)(v >> 8);
            } else if (md->out_kind == 1) {
                memcpy(o, &r32buf[i * p + j], 4);
            } else {
                memcpy(o, &d, 8);
            }
        }
    Py_DECREF(Ad);
    Py_DECREF(Bd);
    Py_DECREF(Dd);
    PyMem_Free(r32buf);
    *accf |= fl;
    return 1;
fail:
    PyMem_Free(r32buf);
    Py_XDECREF(Ad);
    Py_XDECREF(Bd);
    Py_XDECREF(Dd);
    return -1;
}

/* Rounding of binary64 values into the result's format, for matmul_blas_ziv:
 * through the fast paths' tables or rounder when they cover the format and
 * mode, else the core (codes only: the flags of accepted results are derived,
 * see below). */
typedef struct {
    const sfp8_format *dst;
    const uint16_t *fromf;  /* 8-bit results: the binary64 key table */
    sfp8f_rnd rnd;          /* or the fast rounder */
    int use_rnd;
    const sfp8f_conv *dec;  /* format results: code -> binary64 */
    double min_normal, max_finite;
} ZivRound;

/* out[k] = d[k] rounded; returns the OR of the flags */
static unsigned ziv_round(const ZivRound *z, const sfp8_env *env, const double *d, npy_intp n, uint32_t *out)
{
    unsigned fl = 0;
    if (z->use_rnd) return sfp8f_round_doubles(&z->rnd, d, n, out);
    for (npy_intp k = 0; k < n; k++) {
        uint64_t b;
        memcpy(&b, &d[k], 8);
        if (z->fromf) {
            uint16_t v = z->fromf[sfp8f_key64(b)];
            out[k] = v & 0xFF;
            fl |= (unsigned)(v >> 8);
        } else {
            uint8_t f0 = 0;
            out[k] = (uint32_t)sfp8_convert(&sfp8_binary64, z->dst, b, env, &f0);
            fl |= f0;
        }
    }
    return fl;
}

/* the exponent of the last significant bit of a non-zero finite binary64 */
static inline int lsb_exp(double v)
{
    uint64_t b, sig;
    int ef;
    memcpy(&b, &v, 8);
    ef = (int)((b >> 52) & 0x7ff);
    sig = b & (((uint64_t)1 << 52) - 1);
    if (ef) sig |= (uint64_t)1 << 52;
    else ef = 1;
    return ef - 1075 + __builtin_ctzll(sig);
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
 * max, row max times column sum, the product of the Euclidean norms).  An
 * element is accepted when c - e and c + e round to the same code r, the value
 * of r lies outside [c - e, c + e] (so the exact sum is not representable: the
 * flags are inexact alone), the interval does not contain 0, and r is neither
 * near the underflow range nor near overflow (where tininess or overflow could
 * differ between the ends); every other element, and every element of a row of
 * A or column of B holding a NaN or infinity, takes the exact accumulator.
 * Returns 1 when done, 0 when not applicable, -1 on a Python error. */
static int matmul_blas_ziv(MatmulData *md, const sfp8_env *env, char *A, char *B, char *O, npy_intp m, npy_intp n,
                           npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om,
                           npy_intp op, unsigned *accf)
{
    const sfp8_format *f = &md->f;
    int sz = f->bits <= 8 ? 1 : 2;
    const sfp8f_conv *dec;
    ZivRound z;
    PyArrayObject *Ad = NULL, *Bd = NULL, *Dd = NULL;
    double *pa, *pb, *buf = NULL, *ra, *rb, gamma;
    const double *pd;
    uint32_t *clo = NULL, *chi = NULL;
    unsigned char *bad_row = NULL, *bad_col = NULL;
    unsigned fl = 0;
    npy_intp dims[2], mp = m * p;
    int64_t qmin = (int64_t)-f->bias - f->man_bits, top = ((int64_t)1 << f->exp_bits) - f->bias + 2;
    if (!md->blas || md->out_kind == 2 || m == 0 || n == 0 || p == 0) return 0;
    /* products and sums far from binary64's underflow and overflow */
    if (2 * qmin < -1000 || 2 * top > 900 || n > ((npy_intp)1 << 40)) return 0;
    memset(&z, 0, sizeof z);
    dec = sfp8f_convert(f, &sfp8_binary64, env, m * n + n * p);
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
        if (!z.fromf) z.use_rnd = sfp8f_rounder(f, env, &z.rnd);
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
    buf = PyMem_Malloc((size_t)(3 * mp + 4 * m + 4 * p) * sizeof(double));
    clo = PyMem_Malloc((size_t)mp * 4);
    chi = PyMem_Malloc((size_t)mp * 4);
    bad_row = PyMem_Calloc((size_t)m, 1);
    bad_col = PyMem_Calloc((size_t)p, 1);
    if (!Ad || !Bd || !buf || !clo || !chi || !bad_row || !bad_col) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto fail;
    }
    pa = (double *)PyArray_DATA(Ad);
    pb = (double *)PyArray_DATA(Bd);
    ra = buf + 3 * mp;  /* per row of A: sum |a|, max |a|, sum a^2, lowest bit exponent */
    rb = ra + 4 * m;    /* per column of B: the same */
    memset(ra, 0, (size_t)(4 * m + 4 * p) * sizeof(double));
    for (npy_intp i = 0; i < m; i++) ra[4 * i + 3] = 4096;
    for (npy_intp j = 0; j < p; j++) rb[4 * j + 3] = 4096;
    for (npy_intp i = 0; i < m; i++)
        for (npy_intp l = 0; l < n; l++) {
            uint32_t c = load_code(A + i * am + l * an, sz) & (uint32_t)(dec->n - 1);
            double v;
            memcpy(&v, &dec->val[c], 8);
            fl |= dec->fl[c];
            if (!isfinite(v)) {
                bad_row[i] = 1;
                v = 0;
            }
            pa[i * n + l] = v;
            ra[4 * i] += fabs(v);
            if (fabs(v) > ra[4 * i + 1]) ra[4 * i + 1] = fabs(v);
            ra[4 * i + 2] += v * v;
            if (v != 0 && lsb_exp(v) < ra[4 * i + 3]) ra[4 * i + 3] = lsb_exp(v);
        }
    for (npy_intp l = 0; l < n; l++)
        for (npy_intp j = 0; j < p; j++) {
            uint32_t c = load_code(B + l * bn + j * bp, sz) & (uint32_t)(dec->n - 1);
            double v;
            memcpy(&v, &dec->val[c], 8);
            fl |= dec->fl[c];
            if (!isfinite(v)) {
                bad_col[j] = 1;
                v = 0;
            }
            pb[l * p + j] = v;
            rb[4 * j] += fabs(v);
            if (fabs(v) > rb[4 * j + 1]) rb[4 * j + 1] = fabs(v);
            rb[4 * j + 2] += v * v;
            if (v != 0 && lsb_exp(v) < rb[4 * j + 3]) rb[4 * j + 3] = lsb_exp(v);
        }
    Dd = (PyArrayObject *)PyObject_CallFunctionObjArgs(np_matmul_fn, (PyObject *)Ad, (PyObject *)Bd, NULL);
    if (!Dd) goto fail;
    if (!PyArray_Check(Dd) || PyArray_TYPE(Dd) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(Dd)) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 matmul: unexpected binary64 product");
        goto fail;
    }
    pd = (const double *)PyArray_DATA(Dd);
    /* gamma_{n+4} with u = 2^-53, inflated for the rounding of the bounds themselves */
    gamma = (double)(n + 4) * 0x1p-53 / (1 - (double)(n + 4) * 0x1p-53) * (1 + 0x1p-20);
    {
        double *lo = buf, *hi = buf + mp, *ex = buf + 2 * mp;
        npy_intp nex = 0;
        for (npy_intp i = 0; i < m; i++)
            for (npy_intp j = 0; j < p; j++) {
                const double *x = &ra[4 * i], *y = &rb[4 * j];
                double s = x[0] * y[1], t = x[1] * y[0], q = sqrt(x[2] * y[2]), e, c = pd[i * p + j];
                npy_intp k = i * p + j;
                if (t < s) s = t;
                if (q < s) s = q;
                s *= 1 + 0x1p-20;
                if (c != 0 && !bad_row[i] && !bad_col[j] && s < ldexp(1.0, (int)(x[3] + y[3]) + 53)) {
                    ex[nex++] = c; /* exact: rounded below, in this order */
                    lo[k] = hi[k] = NAN;
                    continue;
                }
                e = gamma * s + (double)(n + 4) * 0x1p-1070;
                lo[k] = c - e;
                hi[k] = c + e;
            }
        /* the exact ones: rounded once, codes into clo in element order */
        fl |= ziv_round(&z, env, ex, nex, chi);
        nex = 0;
        for (npy_intp k = 0; k < mp; k++)
            if (isnan(lo[k])) clo[k] = chi[nex++];
        for (npy_intp i = 0; i < m; i++)
            for (npy_intp j = 0; j < p; j++) {
                npy_intp k = i * p + j;
                char *o = O + i * om + j * op;
                uint32_t r;
                double v, av;
                if (isnan(lo[k])) {
                    r = clo[k];
                } else {
                    uint32_t r2;
                    ziv_round(&z, env, &lo[k], 1, &r);
                    ziv_round(&z, env, &hi[k], 1, &r2);
                    v = ziv_value(&z, r);
                    av = fabs(v);
                    if (bad_row[i] || bad_col[j] || r != r2 || !(lo[k] > 0 || hi[k] < 0) ||
                        (v >= lo[k] && v <= hi[k]) || !(av >= 2 * z.min_normal) || !(av <= 0.5 * z.max_finite)) {
                        uint8_t f0 = 0;
                        matmul_exact_element(md, env, A, B, o, i, j, n, am, an, bn, bp, &f0);
                        fl |= f0;
                        continue;
                    }
                    fl |= SFP8_FLAG_INEXACT;
                }
                if (md->out_kind == 1) memcpy(o, &r, 4);
                else store_code(o, sz, r);
            }
    }
    Py_DECREF(Ad);
    Py_DECREF(Bd);
    Py_DECREF(Dd);
    PyMem_Free(buf);
    PyMem_Free(clo);
    PyMem_Free(chi);
    PyMem_Free(bad_row);
    PyMem_Free(bad_col);
    *accf |= fl;
    return 1;
fail:
    Py_XDECREF(Ad);
    Py_XDECREF(Bd);
    Py_XDECREF(Dd);
    PyMem_Free(buf);
    PyMem_Free(clo);
    PyMem_Free(chi);
    PyMem_Free(bad_row);
    PyMem_Free(bad_col);
    return -1;
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
                matmul_exact_element(md, &env, A, B, O + i * om + j * op, i, j, n, am, an, bn, bp, &fl);
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
