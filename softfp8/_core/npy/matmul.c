/*
 * NumPy glue: the loops of np.matmul, np.vecdot, np.matvec, np.vecmat and of the
 * matmul_wide gufunc (float32 / float64 results), and the BLAS routine the matrix
 * engine is handed.  Registration and resolution only: every number is the engine's
 * (softfp8/_core/mm/, sfp8m_gemm: exact dot products rounded once).
 *
 * The BLAS routine (docs/matrix-engine.md, "BLAS"): the cblas_dgemm of the OpenBLAS
 * NumPy is linked against, found among the libraries loaded in the process by its
 * symbol (scipy_cblas_dgemm64_ / cblas_dgemm64_: 64-bit integers; scipy_cblas_dgemm /
 * cblas_dgemm: 32-bit) and checked on a small product; the loops then run without the
 * GIL, as NumPy's own float64 matmul calls it.  Where none is found (another BLAS, a
 * platform without dl_iterate_phdr), a callback into numpy.matmul that takes the GIL
 * for the call.  SOFTFP8_BLAS=numpy forces the callback, =none no BLAS (the engine's
 * exact kernels); softfp8._ext.set_blas / blas_info switch and report.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr, RTLD_NOLOAD */
#endif
#include <string.h>
#include "glue.h"
#include "matmul_api.h"

#include <stdlib.h>
#if defined(__linux__)
#include <dlfcn.h>
#include <link.h>
#define MM_NATIVE_BLAS 1
#else
#define MM_NATIVE_BLAS 0
#endif

/* ---- the BLAS routine ---- */

static PyObject *np_matmul_fn = NULL; /* numpy.matmul */
static int blas_mode = -1;            /* -1 not resolved yet, else BLAS_* */
enum { BLAS_NONE, BLAS_NUMPY, BLAS_NATIVE };
typedef void (*dgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, double, const double *, int64_t, const double *,
                           int64_t, double, double *, int64_t);
typedef void (*dgemm32_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                           double *, int);
static struct {
    void *fn;
    int ilp64;
    char symbol[32];
    char library[512];
} native;

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };

static int native_dgemm(void *ctx, int64_t m, int64_t k, int64_t p, const double *A, const double *B, double *C)
{
    (void)ctx;
    if (native.ilp64)
        ((dgemm64_fn)native.fn)(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, m, p, k, 1.0, A, k, B, p, 0.0, C, p);
    else
        ((dgemm32_fn)native.fn)(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)m, (int)p, (int)k, 1.0, A,
                                (int)k, B, (int)p, 0.0, C, (int)p);
    return 0;
}

/* numpy.matmul(A, B, out=C) with the GIL taken for the call */
static int numpy_dgemm(void *ctx, int64_t m, int64_t k, int64_t p, const double *A, const double *B, double *C)
{
    PyGILState_STATE st = PyGILState_Ensure();
    npy_intp da[2] = {(npy_intp)m, (npy_intp)k}, db[2] = {(npy_intp)k, (npy_intp)p}, dc[2] = {(npy_intp)m, (npy_intp)p};
    PyObject *a = PyArray_SimpleNewFromData(2, da, NPY_DOUBLE, (void *)A);
    PyObject *b = PyArray_SimpleNewFromData(2, db, NPY_DOUBLE, (void *)B);
    PyObject *c = PyArray_SimpleNewFromData(2, dc, NPY_DOUBLE, (void *)C);
    PyObject *args = NULL, *kw = NULL, *r = NULL;
    (void)ctx;
    if (a && b && c && (args = PyTuple_Pack(2, a, b)) && (kw = Py_BuildValue("{s:O}", "out", c)))
        r = PyObject_Call(np_matmul_fn, args, kw);
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(c);
    Py_XDECREF(args);
    Py_XDECREF(kw);
    Py_XDECREF(r);
    PyGILState_Release(st);
    return r ? 0 : -1;
}

#if MM_NATIVE_BLAS
/* a dgemm found by symbol: 1 if it computes a small product right */
static int native_check(void)
{
    const double A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {7, 8, 9, 10, 11, 12}, want[4] = {58, 64, 139, 154};
    double C[4] = {0, 0, 0, 0};
    native_dgemm(NULL, 2, 3, 2, A, B, C);
    return !memcmp(C, want, sizeof C);
}

static int find_native(struct dl_phdr_info *info, size_t size, void *data)
{
    static const struct { const char *name; int ilp64; } syms[] = {
        {"scipy_cblas_dgemm64_", 1}, {"cblas_dgemm64_", 1}, {"scipy_cblas_dgemm", 0}, {"cblas_dgemm", 0}};
    const char *name = info->dlpi_name;
    void *h;
    (void)size;
    (void)data;
    if (!name || !strstr(name, "openblas") || strlen(name) >= sizeof native.library) return 0;
    if (!(h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD))) return 0;
    for (size_t s = 0; s < sizeof syms / sizeof syms[0]; s++) {
        void *fn = dlsym(h, syms[s].name);
        if (!fn) continue;
        native.fn = fn;
        native.ilp64 = syms[s].ilp64;
        strcpy(native.symbol, syms[s].name);
        strcpy(native.library, name);
        if (native_check()) return 1; /* the handle stays open: NumPy holds the library anyway */
        native.fn = NULL;
    }
    dlclose(h);
    return 0;
}
#endif

/* the mode from SOFTFP8_BLAS on first use (GIL held) */
static void blas_resolve(void)
{
    const char *e = getenv("SOFTFP8_BLAS");
    if (blas_mode >= 0) return;
#if MM_NATIVE_BLAS
    dl_iterate_phdr(find_native, NULL);
#endif
    if (e && !strcmp(e, "none")) blas_mode = BLAS_NONE;
    else if ((e && !strcmp(e, "numpy")) || !native.fn) blas_mode = np_matmul_fn ? BLAS_NUMPY : BLAS_NONE;
    else blas_mode = BLAS_NATIVE;
}

/* the provider for a product of those dimensions (after blas_resolve; no GIL needed):
   NULL for none; the native routine of 32-bit integers takes dimensions below 2^31 */
static const sfp8m_blas *blas_pick(int64_t m, int64_t k, int64_t p)
{
    static const sfp8m_blas nat = {native_dgemm, NULL}, cb = {numpy_dgemm, NULL};
    int mode = __atomic_load_n(&blas_mode, __ATOMIC_RELAXED); /* set_blas may run in another thread */
    if (mode == BLAS_NATIVE && (native.ilp64 || (m <= INT32_MAX && k <= INT32_MAX && p <= INT32_MAX)))
        return &nat;
    if (mode != BLAS_NONE && np_matmul_fn) return &cb;
    return NULL;
}

const sfp8m_blas *sfp8_npy_blas(int64_t m, int64_t k, int64_t p)
{
    blas_resolve();
    return blas_pick(m, k, p);
}

PyObject *sfp8_npy_set_blas(PyObject *mode)
{
    static const char *const names[3] = {"none", "numpy", "native"};
    int old;
    blas_resolve();
    old = blas_mode;
    if (mode != Py_None) {
        const char *s = PyUnicode_Check(mode) ? PyUnicode_AsUTF8(mode) : NULL;
        int k = -1;
        for (int i = 0; s && i < 3; i++)
            if (!strcmp(s, names[i])) k = i;
        if (k < 0 || (k == BLAS_NATIVE && !native.fn) || (k == BLAS_NUMPY && !np_matmul_fn)) {
            PyErr_Format(PyExc_ValueError, "softfp8 BLAS must be one of 'none', 'numpy'%s, got %R",
                         native.fn ? ", 'native'" : " ('native': none found)", mode);
            return NULL;
        }
        __atomic_store_n(&blas_mode, k, __ATOMIC_RELAXED);
    }
    return Py_BuildValue("{s:s,s:s,s:z,s:z}", "previous", names[old], "using", names[blas_mode], "native_symbol",
                         native.fn ? native.symbol : NULL, "native_library", native.fn ? native.library : NULL);
}

/* ---- the loops ---- */

typedef struct {
    LoopData ld;
    sfp8_format f;
    int out_kind; /* 0: the input format, 1: float32, 2: float64 */
} MatmulData;

/* N products (m,n) x (n,p) -> (m,p), one per outer index, with the core strides
 * given: the loop of matmul and, with m or p (or both) 1 and the strides of the
 * missing dimensions 0, of vecdot, matvec and vecmat */
static int matmul_run(MatmulData *md, char *const data[], const npy_intp outer[], npy_intp N, npy_intp m,
                      npy_intp n, npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om,
                      npy_intp op)
{
    const sfp8_format *out = md->out_kind == 0 ? &md->f : md->out_kind == 1 ? &sfp8_binary32 : &sfp8_binary64;
    unsigned int accf = 0;
    int fast = sfp8m_fast_level();
    const sfp8m_blas *blas = md->ld.stoch || !fast ? NULL : blas_pick(m, n, p);
    sfp8m_model mdl;
    sfp8_env env;
    /* the settings (saturation by default) of the result's format */
    loop_env_for(&md->ld, out, &env);
    sfp8m_exact_model(&mdl, &md->f, out, &env);
    mdl.seed = md->ld.seed;
    mdl.stream = md->ld.stream;
    for (npy_intp k = 0; k < N; k++) {
        unsigned fl;
        mdl.index = md->ld.index;
        fl = sfp8m_gemm(&mdl, blas, data[0] + k * outer[0], am, an, data[1] + k * outer[1], bn, bp,
                        data[2] + k * outer[2], om, op, m, n, p, fast);
        if (md->ld.stoch) md->ld.index += (uint64_t)(m * p);
        if (fl & (SFP8M_NOMEM | SFP8M_BLASFAIL)) {
            if (fl & SFP8M_NOMEM) {
                NPY_ALLOW_C_API_DEF
                NPY_ALLOW_C_API
                PyErr_NoMemory();
                NPY_DISABLE_C_API
            } /* BLASFAIL: the callback left its exception set */
            return -1;
        }
        accf |= fl;
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
    md->f = *descr_fmt(context->descriptors[0]);
    switch (context->descriptors[2]->type_num) {
    case NPY_FLOAT: md->out_kind = 1; break;
    case NPY_DOUBLE: md->out_kind = 2; break;
    default: md->out_kind = 0; break;
    }
    blas_resolve(); /* with the GIL: the loop then reads the resolved provider */
    *out_loop = loop;
    *out_transferdata = (NpyAuxData *)md;
    *flags = 0; /* no GIL needed: the numpy.matmul callback takes it itself */
    return 0;
}

#define DOT_GET_LOOP(name, loop) SFP8_GET_LOOP(name, dot_get_loop(loop, context, out_loop, out_transferdata, flags))
DOT_GET_LOOP(matmul_get_loop, matmul_loop)
DOT_GET_LOOP(vecdot_get_loop, vecdot_loop)
DOT_GET_LOOP(matvec_get_loop, matvec_loop)
DOT_GET_LOOP(vecmat_get_loop, vecmat_loop)

/* the descriptors of a product: both operands of one format (that of the first), the
   result in that format (a given one of the same format kept) or float32 / float64 */
static NPY_CASTING matmul_resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
                                  PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *vo)
{
    (void)self;
    (void)vo;
    if (!descr_same(given[0], given[1])) {
        PyErr_Format(PyExc_TypeError,
                     "softfp8: operands have different formats (%S and %S); cast one explicitly, or use "
                     "softfp8.matmul (mixed formats)",
                     ((SFP8Descr *)given[0])->format, ((SFP8Descr *)given[1])->format);
        return -1;
    }
    Py_INCREF(given[0]);
    Py_INCREF(given[0]);
    loop[0] = loop[1] = given[0];
    if (dtypes[2] == &PyArray_FloatDType || dtypes[2] == &PyArray_DoubleDType) {
        loop[2] = PyArray_DescrFromType(dtypes[2] == &PyArray_FloatDType ? NPY_FLOAT : NPY_DOUBLE);
    } else {
        loop[2] = given[2] && descr_same(given[2], given[0]) ? given[2] : given[0];
        Py_INCREF(loop[2]);
    }
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
            {NPY_METH_resolve_descriptors, (void *)matmul_resolve},
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
        if (r == 0) r = add_product_promoter(uf, cls);
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
            {NPY_METH_resolve_descriptors, (void *)matmul_resolve},
            {NPY_METH_get_loop, (void *)matmul_get_loop},
            {0, NULL}
        };
        PyArrayMethod_Spec spec = {
            .name = "softfp8_matmul", .nin = 2, .nout = 1, .casting = NPY_NO_CASTING,
            .flags = NPY_METH_SUPPORTS_UNALIGNED, .dtypes = dtypes, .slots = slots,
        };
        if (PyUFunc_AddLoopFromSpec(uf, &spec) < 0 || (k == 0 && add_product_promoter(uf, cls) < 0)) {
            Py_DECREF(uf);
            return -1;
        }
    }
    Py_DECREF(uf);
    return 0;
}

/* One exact dot product of n codes (strides in bytes) rounded once into f, as `@`
   computes it (the matrix engine's exact model, no BLAS: one output), for np.dot's
   dotfunc (npy/dot.c).  Out of memory: the output is f's default NaN and invalid is
   raised (a dotfunc has no error return; the engine needs memory only for tables,
   which one output never builds). */
unsigned sfp8_dot_element(const sfp8_format *f, const sfp8_env *env, uint64_t seed, uint64_t stream, uint64_t index,
                          const char *a, npy_intp sa, const char *b, npy_intp sb, npy_intp n, char *out)
{
    sfp8m_model mdl;
    unsigned fl;
    sfp8m_exact_model(&mdl, f, f, env);
    mdl.seed = seed;
    mdl.stream = stream;
    mdl.index = index;
    fl = sfp8m_gemm(&mdl, NULL, a, 0, sa, b, sb, 0, out, 0, 0, 1, n, 1, sfp8m_fast_level());
    if (fl & (SFP8M_NOMEM | SFP8M_BLASFAIL)) {
        uint16_t nan = (uint16_t)sfp8_default_nan(f);
        if (f->bits <= 8) *(uint8_t *)out = (uint8_t)nan;
        else memcpy(out, &nan, 2);
        return SFP8_FLAG_INVALID;
    }
    return fl & 0xffu;
}
