/*
 * NumPy glue: matmul, vecdot, matvec and vecmat loops (exact dot products,
 * one rounding per output element; a binary64 BLAS path when every partial
 * sum is exact) and the matmul_wide gufunc with float32 / float64 results.
 */
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

/* matmul_blas inside a read section of the table cache (fast/cache.c): the
 * tables it looks up stay alive until it returns. */
static int matmul_blas(MatmulData *md, const sfp8_env *env, char *A, char *B, char *O, npy_intp m, npy_intp n,
                       npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om, npy_intp op,
                       unsigned *accf)
{
    unsigned tok = sfp8f_read_begin();
    int r = matmul_blas_tables(md, env, A, B, O, m, n, p, am, an, bn, bp, om, op, accf);
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
    md->blas = np_matmul_fn && sfp8f_enabled() && !md->ld.stoch && md->f.bits <= 8 && acc_binary64_exact(&md->f);
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
