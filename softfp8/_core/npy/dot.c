/*
 * NumPy glue: np.dot, ndarray.dot, np.inner, np.tensordot, np.vdot (and
 * np.correlate / np.convolve) through the DType's legacy `dotfunc`.
 *
 * NumPy 2.5 lets DType-API dtypes into these functions
 * (numpy/_core/src/multiarray/multiarraymodule.c, PyArray_MatrixProduct2,
 * NumPy 2.5.2):
 *
 *     if (PyArray_DTypeFromObject(op1, NPY_MAXDIMS, &typec) < 0) {
 *     ...
 *     Py_SETREF(typec, NPY_DT_CALL_ensure_canonical(typec));
 *     ...
 *     dot = PyDataType_GetArrFuncs(PyArray_DESCR(out_buf))->dotfunc;
 *     ...
 *     NPY_BEGIN_THREADS_DESCR(PyArray_DESCR(ap2));
 *     ...
 *             dot(it1->dataptr, is1, it2->dataptr, is2, op, l, NULL);
 *
 * (np.vdot: `vdot(ip1, stride1, ip2, stride2, op, n, NULL);`; correlate passes
 * its result array instead of NULL).  NumPy 2.4 refuses them before:
 * `PyArray_ObjectType` raises "This function currently only supports native
 * NumPy dtypes and old-style user dtypes".
 *
 * So the dotfunc gets one output element's operands and no descriptor, and
 * runs without the GIL.  The ArrFuncs are per DType class (one dotfunc per
 * family here, so it knows its family); the descriptor -- the format of a
 * parametric family -- is the one NumPy canonicalised last on this thread
 * (ensure_canonical, called with the GIL just before, above), checked to be of
 * the dotfunc's family.  The first element of each call takes the GIL once to
 * read the rounding context (mode, saturation, tininess, stochastic stream and
 * the flag cell, as a ufunc's get_loop does); the other elements run without it.
 *
 * Every element is the exact dot product rounded once into the format: the
 * exact element of the matrix product that `@` uses (one call into matmul.c,
 * sfp8_dot_element).  Flags go to the sticky cell and to NumPy's FP state,
 * which NumPy checks after the loop (`PyUFunc_GiveFloatingpointErrors("dot",
 * fpes)`), so np.errstate applies as for `@`.
 */
#include "glue.h"

/* per thread: the descriptor NumPy canonicalised last (strong reference) and
   the context taken for the current call */
typedef struct {
    PyObject *noted;     /* set by sfp8_dot_note_descr (GIL held) */
    int pending;         /* a descriptor was noted since the context was taken */
    PyObject *descr;     /* the descriptor of the current call */
    LoopData *ld;        /* its context */
    int failed;          /* the current call raised: the other elements do nothing */
} DotState;

static _Thread_local DotState dot_tls;

void sfp8_dot_note_descr(PyArray_Descr *d)
{
    Py_INCREF(d);
    Py_XSETREF(dot_tls.noted, (PyObject *)d);
    dot_tls.pending = 1;
}

/* take the descriptor and the context of a new call (takes the GIL) */
static void dot_begin(int fam, PyArrayObject *arr)
{
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *d = arr ? (PyObject *)PyArray_DESCR(arr) : dot_tls.noted;
    dot_tls.pending = 0;
    dot_tls.failed = 1;
    if (PyErr_Occurred()) goto done;
    if (!d || !PyArray_DescrCheck(d) || family_of(NPY_DTYPE((PyArray_Descr *)d)) != fam) {
        PyErr_Format(PyExc_RuntimeError, "softfp8: np.dot could not identify the format of its operands "
                                         "(descriptor %R); use np.matmul", d ? d : Py_None);
        goto done;
    }
    if (dot_tls.ld) loopdata_free((NpyAuxData *)dot_tls.ld);
    dot_tls.ld = loopdata_alloc(sizeof(LoopData));
    if (!dot_tls.ld) goto done;
    Py_INCREF(d);
    Py_XSETREF(dot_tls.descr, d);
    dot_tls.failed = 0;
done:
    PyGILState_Release(g);
}

static void dot_run(int fam, char *a, npy_intp sa, char *b, npy_intp sb, char *out, npy_intp n, void *arr)
{
    const sfp8_format *f;
    sfp8_env env;
    uint64_t index;
    if (dot_tls.pending || !dot_tls.descr || (arr && (PyObject *)PyArray_DESCR((PyArrayObject *)arr) != dot_tls.descr))
        dot_begin(fam, (PyArrayObject *)arr);
    if (dot_tls.failed) return;
    f = descr_fmt((PyArray_Descr *)dot_tls.descr);
    loop_env_for(dot_tls.ld, f, &env);
    /* one output: the next random word of the call's stream, as matmul's element (i, j) */
    index = dot_tls.ld->index;
    if (dot_tls.ld->stoch) dot_tls.ld->index++;
    loop_publish(dot_tls.ld, sfp8_dot_element(f, &env, dot_tls.ld->seed, dot_tls.ld->stream, index, a, sa, b, sb, n,
                                              out));
}

/* one dotfunc per family (the ArrFuncs belong to the DType class) */
#define DOTF(k)                                                                                    \
    static void dot_f##k(void *a, npy_intp sa, void *b, npy_intp sb, void *o, npy_intp n, void *arr) \
    {                                                                                              \
        dot_run(k, a, sa, b, sb, o, n, arr);                                                       \
    }
DOTF(0) DOTF(1) DOTF(2) DOTF(3) DOTF(4) DOTF(5) DOTF(6) DOTF(7)
DOTF(8) DOTF(9) DOTF(10) DOTF(11) DOTF(12) DOTF(13) DOTF(14) DOTF(15)
DOTF(16) DOTF(17) DOTF(18) DOTF(19) DOTF(20) DOTF(21) DOTF(22) DOTF(23)
DOTF(24) DOTF(25) DOTF(26) DOTF(27) DOTF(28) DOTF(29) DOTF(30) DOTF(31)

static PyArray_DotFunc *const dot_funcs[] = {
    dot_f0,  dot_f1,  dot_f2,  dot_f3,  dot_f4,  dot_f5,  dot_f6,  dot_f7,
    dot_f8,  dot_f9,  dot_f10, dot_f11, dot_f12, dot_f13, dot_f14, dot_f15,
    dot_f16, dot_f17, dot_f18, dot_f19, dot_f20, dot_f21, dot_f22, dot_f23,
    dot_f24, dot_f25, dot_f26, dot_f27, dot_f28, dot_f29, dot_f30, dot_f31,
};
_Static_assert(sizeof dot_funcs / sizeof dot_funcs[0] == MAX_FAMILIES, "one dotfunc per family");

PyArray_DotFunc *sfp8_dotfunc(int fam)
{
    return dot_funcs[fam];
}
