/*
 * NumPy glue: ufunc promoters.  A softfp8 operand meeting a NumPy numeric
 * DType is promoted to the common DType of the inputs; where the operation has
 * Python-number loops (pyscalar.c, registered by the caller), a Python
 * int/float gets no promoter and selects them.
 */
#include "glue.h"

/* promoter: every input to the common DType of the inputs */
static int sfp8_promoter(PyObject *ufunc, PyArray_DTypeMeta *const op_dtypes[],
                         PyArray_DTypeMeta *const signature[], PyArray_DTypeMeta *new_op_dtypes[])
{
    int nin = ((PyUFuncObject *)ufunc)->nin, nargs = ((PyUFuncObject *)ufunc)->nargs;
    PyArray_DTypeMeta *common = NULL;
    PyArray_DTypeMeta *ins[8];
    int k = 0;
    for (int i = 0; i < nin; i++)
        if (op_dtypes[i]) ins[k++] = op_dtypes[i];
    for (int i = 0; i < nin; i++)
        if (signature[i]) {
            common = signature[i];
            Py_INCREF(common);
            break;
        }
    if (!common) {
        common = PyArray_PromoteDTypeSequence(k, ins);
        if (!common) return -1;
        /* a parametric format with a Python number in an operation without
           Python-number loops (pyscalar.c): NumPy cannot find the descriptor of
           the number in the format's DType (no bias), so compute in float64 */
        for (int i = 0; i < k && family_of(common) >= 0 && families[family_of(common)].parametric; i++)
            if (ins[i] == &PyArray_PyFloatDType || ins[i] == &PyArray_PyLongDType) {
                Py_SETREF(common, &PyArray_DoubleDType);
                Py_INCREF(common);
            }
    }
    if (common == &PyArray_UnicodeDType || common == &PyArray_BytesDType) {
        /* a format promotes with str / bytes (np.concatenate, np.promote_types),
           but, as float16, has no arithmetic or comparison with them: decline
           (NumPy then reports no loop; == / != of arrays give all False / True) */
        Py_DECREF(common);
        for (int i = 0; i < nargs; i++) {
            Py_XINCREF(op_dtypes[i]);
            new_op_dtypes[i] = op_dtypes[i];
        }
        return 0;
    }
    for (int i = 0; i < nin; i++) {
        Py_INCREF(common);
        new_op_dtypes[i] = common;
    }
    for (int i = nin; i < nargs; i++) {
        Py_XINCREF(signature[i]);
        new_op_dtypes[i] = signature[i];
    }
    Py_DECREF(common);
    return 0;
}

int add_promoter(PyObject *ufunc, PyObject *const items[], int nargs)
{
    return add_promoter_fn(ufunc, items, nargs, sfp8_promoter);
}

int add_promoter_fn(PyObject *ufunc, PyObject *const items[], int nargs, promoter_fn *fn)
{
    PyObject *capsule = PyCapsule_New((void *)fn, "numpy._ufunc_promoter", NULL);
    PyObject *tup;
    int r;
    if (!capsule) return -1;
    tup = PyTuple_New(nargs);
    for (int i = 0; i < nargs; i++) {
        Py_INCREF(items[i]);
        PyTuple_SET_ITEM(tup, i, items[i]);
    }
    r = PyUFunc_AddPromoter(ufunc, tup, capsule);
    Py_DECREF(tup);
    Py_DECREF(capsule);
    return r;
}

/* promoter of the matrix products (np.matmul / @, np.vecdot, np.matvec, np.vecmat)
   for operands of two softfp8 DType classes: NumPy would report a bare "no loop";
   softfp8 chooses no result type for a mixed-format product (docs/numpy.md, "Mixed
   formats") and raises a UFuncTypeError naming what computes it.  Anything else:
   decline (the DTypes unchanged), leaving NumPy's own error. */
static int sfp8_product_promoter(PyObject *ufunc, PyArray_DTypeMeta *const op_dtypes[],
                                 PyArray_DTypeMeta *const signature[], PyArray_DTypeMeta *new_op_dtypes[])
{
    int nargs = ((PyUFuncObject *)ufunc)->nargs;
    PyArray_DTypeMeta *a = op_dtypes[0], *b = op_dtypes[1];
    (void)signature;
    if (a && b && a != b && family_of(a) >= 0 && family_of(b) >= 0) {
        PyObject *mod = PyImport_ImportModule("numpy._core._exceptions");
        PyObject *cls = mod ? PyObject_GetAttrString(mod, "UFuncTypeError") : NULL;
        PyObject *exc = cls ? PyObject_CallOneArg(cls, ufunc) : NULL;  /* sets .ufunc */
        PyObject *msg = PyUnicode_FromFormat(
            "np.%s%s does not mix softfp8 formats (%s and %s): softfp8 "
            "chooses no result type for a mixed-format product. Use softfp8.matmul(a, b, out_dtype=...) "
            "(the exact product rounded once; float32 by default) or softfp8.scaled_mm(a, b, scale_a, "
            "scale_b) (the FP8 GEMM), or convert one operand (a.astype(b.dtype))",
            ((PyUFuncObject *)ufunc)->name, strcmp(((PyUFuncObject *)ufunc)->name, "matmul") ? "" : " (a @ b)",
            ((PyTypeObject *)a)->tp_name, ((PyTypeObject *)b)->tp_name);
        PyObject *args = msg ? PyTuple_Pack(1, msg) : NULL;
        if (exc && args && PyObject_SetAttrString(exc, "args", args) == 0)
            PyErr_SetObject(cls, exc);
        Py_XDECREF(args);
        Py_XDECREF(msg);
        Py_XDECREF(exc);
        Py_XDECREF(cls);
        Py_XDECREF(mod);
        return -1;
    }
    for (int i = 0; i < nargs; i++) {
        Py_XINCREF(op_dtypes[i]);
        new_op_dtypes[i] = op_dtypes[i];
    }
    return 0;
}

/* (D, any, any) on a matrix-product gufunc: mixed softfp8 formats get a clear error */
int add_product_promoter(PyObject *ufunc, PyArray_DTypeMeta *cls)
{
    PyObject *items[3] = {(PyObject *)cls, Py_None, Py_None};
    return add_promoter_fn(ufunc, items, 3, sfp8_product_promoter);
}

/* promoters of a binary ufunc: (D, any) and (X, D) for every non-softfp8
   partner X (NumPy numeric DTypes, and Python int/float unless the ufunc has
   loops of its own for them: pyloops); never two wildcard patterns that could
   match one call equally well */
int add_binary_promoters(PyObject *ufunc, PyArray_DTypeMeta *cls, int boolout, int pyloops)
{
    return add_binary_promoters_fn(ufunc, cls, boolout, pyloops, sfp8_promoter);
}

/* the same patterns with promoter fn; the ufunc's outputs (one or two) are
   wildcards, or bool */
int add_binary_promoters_fn(PyObject *ufunc, PyArray_DTypeMeta *cls, int boolout, int pyloops, promoter_fn *fn)
{
    PyObject *out = boolout ? (PyObject *)&PyArray_BoolDType : Py_None;
    int nargs = ((PyUFuncObject *)ufunc)->nargs, n = 0;
    PyObject *items[4] = {(PyObject *)cls, Py_None, out, out};
    PyArray_DTypeMeta *partners[64];
    if (nargs < 3 || nargs > 4) return 0;
    if (add_promoter_fn(ufunc, items, nargs, fn) < 0) return -1;
    /* the partners X of (X, D): NumPy's numbers, complex numbers, ml_dtypes'
       float types, and Python int/float unless they have loops */
    for (int j = 0; j < n_builtin_partners; j++) partners[n++] = builtin_cast_partners[j];
    partners[n++] = &PyArray_CFloatDType;
    partners[n++] = &PyArray_CDoubleDType;
    partners[n++] = &PyArray_CLongDoubleDType;
    partners[n++] = &PyArray_PyComplexDType;
    for (int j = 0; j < sfp8_ml_partner_count() && n < 62; j++) partners[n++] = sfp8_ml_partner(j);
    if (!pyloops) {
        partners[n++] = &PyArray_PyFloatDType;
        partners[n++] = &PyArray_PyLongDType;
    }
    items[1] = (PyObject *)cls;
    for (int j = 0; j < n; j++) {
        items[0] = (PyObject *)partners[j];
        if (add_promoter_fn(ufunc, items, nargs, fn) < 0) return -1;
    }
    return 0;
}
