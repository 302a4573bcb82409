/*
 * NumPy glue: ufunc loops.  One strided loop for every operation of the
 * operation table (ops.def), running the array driver (driver.c: fast paths,
 * then the exact core; exact add reductions); the reduction initial values and
 * the registration of every loop with its ufunc, all derived from the table.
 */
#include "glue.h"
#include "driver.h"
#include "ops.h"

NPY_CASTING ufunc_resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
                                 PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *view_offset,
                                 int nin, int nout, int bool_out)
{
    (void)self;
    (void)view_offset;
    for (int i = 1; i < nin; i++) {
        if (!descr_same(given[0], given[i])) {
            PyErr_Format(PyExc_TypeError,
                         "softfp8: operands have different formats (%S and %S); cast one explicitly",
                         ((SFP8Descr *)given[0])->format, ((SFP8Descr *)given[i])->format);
            return -1;
        }
    }
    for (int i = 0; i < nin; i++) {
        Py_INCREF(given[0]);
        loop[i] = given[0];
    }
    for (int i = nin; i < nin + nout; i++) {
        if (bool_out) {
            loop[i] = PyArray_DescrFromType(NPY_BOOL);
        } else if (given[i] && descr_same(given[i], given[0])) {
            Py_INCREF(given[i]);
            loop[i] = given[i];
        } else {
            Py_INCREF(given[0]);
            loop[i] = given[0];
        }
    }
    (void)dtypes;
    return NPY_NO_CASTING;
}

#define RESOLVER(name, nin, nout, boolout)                                                          \
    NPY_CASTING name(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],                 \
                            PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *vo)     \
    {                                                                                              \
        return ufunc_resolve(self, dtypes, given, loop, vo, nin, nout, boolout);                   \
    }
RESOLVER(resolve_1_1, 1, 1, 0)
RESOLVER(resolve_1_b, 1, 1, 1)
RESOLVER(resolve_2_1, 2, 1, 0)
RESOLVER(resolve_2_b, 2, 1, 1)
RESOLVER(resolve_3_1, 3, 1, 0)

/* Descriptors of the kinds with an int operand or two results: code operands
 * of one format; ldexp's exponent int64, frexp's exponent int32. */
static NPY_CASTING resolve_ext(int kind, PyArray_Descr *const given[], PyArray_Descr *loop[])
{
    int nin = (kind == K_UNARY2 || kind == K_UNARY_I32 || kind == K_UNARY_I64) ? 1 : 2;
    int nout = (kind == K_BINARY_I64 || kind == K_UNARY_I64) ? 1 : 2;
    if (kind == K_BINARY2 && !descr_same(given[0], given[1])) {
        PyErr_Format(PyExc_TypeError, "softfp8: operands have different formats (%S and %S); cast one explicitly",
                     ((SFP8Descr *)given[0])->format, ((SFP8Descr *)given[1])->format);
        return -1;
    }
    for (int i = 0; i < nin + nout; i++) {
        if ((kind == K_BINARY_I64 && i == 1) || (kind == K_UNARY_I32 && i == 2) || (kind == K_UNARY_I64 && i == 1)) {
            loop[i] = PyArray_DescrFromType(i == 1 ? NPY_INT64 : NPY_INT32);
        } else {
            PyArray_Descr *d = i >= nin && given[i] && descr_same(given[i], given[0]) ? given[i] : given[0];
            Py_INCREF(d);
            loop[i] = d;
        }
    }
    return NPY_NO_CASTING;
}

#define RESOLVER_EXT(name, kind)                                                                   \
    static NPY_CASTING name(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],           \
                            PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *vo)     \
    {                                                                                              \
        (void)self;                                                                                \
        (void)dtypes;                                                                              \
        (void)vo;                                                                                  \
        return resolve_ext(kind, given, loop);                                                     \
    }
RESOLVER_EXT(resolve_unary2, K_UNARY2)
RESOLVER_EXT(resolve_unary_i32, K_UNARY_I32)
RESOLVER_EXT(resolve_binary2, K_BINARY2)
RESOLVER_EXT(resolve_binary_i64, K_BINARY_I64)
RESOLVER_EXT(resolve_unary_i64, K_UNARY_I64)

/* One loop for every operation of the table (ops.def): the array driver
 * (driver.c) with the environment and random-bit stream captured at get_loop. */
typedef struct {
    LoopData ld;
    sfp8_format f;
    int op;
} UfuncData;

static int ufunc_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                      npy_intp const strides[], NpyAuxData *auxdata)
{
    UfuncData *u = (UfuncData *)auxdata;
    sfp8_env env;
    sfp8_rng rng = {NULL, u->ld.seed, u->ld.stream, u->ld.index};
    (void)context;
    loop_env_for(&u->ld, &u->f, &env);
    loop_publish(&u->ld, sfp8d_run(u->op, &u->f, &env, &rng, data, strides, dimensions[0], NULL));
    u->ld.index = rng.index;
    return 0;
}

static int get_loop_for(int op, PyArrayMethod_Context *context, PyArrayMethod_StridedLoop **out_loop,
                        NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags)
{
    UfuncData *u = loopdata_alloc(sizeof(UfuncData));
    if (!u) return -1;
    u->f = *descr_fmt(context->descriptors[0]);
    u->op = op;
    *out_transferdata = (NpyAuxData *)u;
    *out_loop = ufunc_loop;
    *flags = 0;
    return 0;
}

/* get_loop of each operation (NumPy passes no per-method data to get_loop) */
#define SFP8_OP(ID, name, kind, attrs, ufunc, identity, call) \
    SFP8_GET_LOOP(get_loop_##ID, get_loop_for(X_##ID, context, out_loop, out_transferdata, flags))
#include "ops.def"
#undef SFP8_OP

static PyArrayMethod_GetLoop *const get_loops[X_NUM_OPS] = {
#define SFP8_OP(ID, name, kind, attrs, ufunc, identity, call) get_loop_##ID,
#include "ops.def"
#undef SFP8_OP
};

static int add_initial(PyArrayMethod_Context *context, npy_bool reduction_is_empty, void *initial)
{
    const sfp8_format *f = descr_fmt(context->descriptors[0]);
    uint8_t fl = 0;
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 1, 0, 32, 0};
    uint32_t z;
    /* a format with no zero (E8M0) has no identity: NumPy starts from the first
       element (an empty sum is an error, as for a ufunc without identity) */
    if (f->subnormals == SFP8_SUBNORMALS_NOZERO) return 0;
    z = sfp8_from_int64(f, 0, &env, &fl);
    if (!reduction_is_empty) {
        /* the identity x + z == x for every x, zeros included (IEEE 754 6.3):
           -0, except when rounding downward, where +0 + -0 is -0 and the
           identity is +0 (fnuz and unsigned formats have +0 only) */
        int rounding = sfp8_context_rounding();
        if (rounding < 0) return -1;
        if (rounding != SFP8_ROUND_DOWNWARD) z = sfp8_neg(f, z);
    }
    store_code(initial, f->bits <= 8 ? 1 : 2, z);
    return 1;
}

static int mul_initial(PyArrayMethod_Context *context, npy_bool reduction_is_empty, void *initial)
{
    const sfp8_format *f = descr_fmt(context->descriptors[0]);
    uint8_t fl = 0;
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 1, 0, 32, 0};
    (void)reduction_is_empty;
    store_code(initial, f->bits <= 8 ? 1 : 2, sfp8_from_int64(f, 1, &env, &fl));
    return 1;
}

/* ldexp's promoter: an integer exponent of another type (and Python int) to
   the int64 loop; NumPy casts it safely (uint64 has no safe cast: refused, as
   NumPy refuses np.ldexp(float16, uint64)) */
static int ldexp_promoter(PyObject *ufunc, PyArray_DTypeMeta *const op_dtypes[],
                          PyArray_DTypeMeta *const signature[], PyArray_DTypeMeta *new_op_dtypes[])
{
    (void)ufunc;
    (void)signature;
    Py_INCREF(op_dtypes[0]);
    new_op_dtypes[0] = op_dtypes[0];
    Py_INCREF(&PyArray_Int64DType);
    new_op_dtypes[1] = &PyArray_Int64DType;
    Py_INCREF(op_dtypes[0]);
    new_op_dtypes[2] = op_dtypes[0];
    return 0;
}

static int add_ldexp_promoters(PyObject *ufunc, PyArray_DTypeMeta *cls)
{
    /* every C integer type (long and long long are distinct DTypes even where
       both are 64-bit), but not the loop's own int64 nor 64-bit unsigned types */
    static const int types[] = {NPY_BYTE,  NPY_SHORT,  NPY_INT,  NPY_LONG,  NPY_LONGLONG,
                                NPY_UBYTE, NPY_USHORT, NPY_UINT, NPY_ULONG, NPY_ULONGLONG};
    PyObject *items[3] = {(PyObject *)cls, (PyObject *)&PyArray_PyLongDType, Py_None};
    if (add_promoter_fn(ufunc, items, 3, ldexp_promoter) < 0) return -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        PyArray_Descr *d = PyArray_DescrFromType(types[i]);
        PyArray_DTypeMeta *dt;
        int skip;
        if (!d) return -1;
        dt = (PyArray_DTypeMeta *)Py_TYPE(d);
        skip = dt == &PyArray_Int64DType || (PyDataType_ISUNSIGNED(d) && PyDataType_ELSIZE(d) >= 8);
        Py_DECREF(d);
        if (skip) continue;
        items[1] = (PyObject *)dt;
        if (add_promoter_fn(ufunc, items, 3, ldexp_promoter) < 0) return -1;
    }
    return 0;
}

/* the loop of operation op for DType cls on ufunc */
static int add_loop(PyObject *ufunc, PyArray_DTypeMeta *cls, int op)
{
    PyArray_DTypeMeta *dtypes[5];
    int kind = sfp8x_ops[op].kind;
    int nin = sfp8x_arity(op), nout = sfp8x_nout(op), nargs = nin + nout, boolout = sfp8x_bool_result(op);
    int identity = sfp8x_ops[op].identity;
    PyArrayMethod_ResolveDescriptors *res;
    if (kind == K_UNARY2) res = resolve_unary2;
    else if (kind == K_UNARY_I32) res = resolve_unary_i32;
    else if (kind == K_BINARY2) res = resolve_binary2;
    else if (kind == K_BINARY_I64) res = resolve_binary_i64;
    else if (kind == K_UNARY_I64) res = resolve_unary_i64;
    else if (nin == 1) res = boolout ? resolve_1_b : resolve_1_1;
    else if (nin == 2) res = boolout ? resolve_2_b : resolve_2_1;
    else res = resolve_3_1;
    for (int i = 0; i < nargs; i++) dtypes[i] = cls;
    if (boolout) dtypes[nargs - 1] = &PyArray_BoolDType;
    if (kind == K_BINARY_I64) dtypes[1] = &PyArray_Int64DType;
    if (kind == K_UNARY_I32) dtypes[2] = &PyArray_Int32DType;
    if (kind == K_UNARY_I64) dtypes[1] = &PyArray_Int64DType;
    PyType_Slot slots[] = {
        {NPY_METH_resolve_descriptors, (void *)res},
        {NPY_METH_get_loop, (void *)get_loops[op]},
        {identity != R_NONE ? NPY_METH_get_reduction_initial : 0,
         (void *)(identity == R_ZERO ? add_initial : mul_initial)},
        {0, NULL}
    };
    PyArrayMethod_Spec spec = {
        .name = sfp8x_ops[op].name,
        .nin = nin,
        .nout = nout,
        .casting = NPY_NO_CASTING,
        .flags = NPY_METH_SUPPORTS_UNALIGNED | (sfp8x_reorderable(op) ? NPY_METH_IS_REORDERABLE : 0),
        .dtypes = dtypes,
        .slots = slots,
    };
    if (PyUFunc_AddLoopFromSpec(ufunc, &spec) < 0) return -1;
    if (kind == K_BINARY_I64) return add_ldexp_promoters(ufunc, cls);
    if (nin == 2) {
        /* Python int/float partners: loops of their own (pyscalar.c) where the
           operation has them, else promoters like the other partners */
        int pyloops = nargs == 3 ? add_pyscalar_loops(ufunc, cls) : 0;
        if (pyloops < 0 || add_binary_promoters(ufunc, cls, boolout, pyloops) < 0) return -1;
    }
    return 0;
}

/* float_power computes in float64 and returns float64 (as NumPy does for
   float16): every operand and the result to float64 (NumPy's dd->d loop, the
   operands cast exactly or rounded by the cast's rules) */
static int float64_promoter(PyObject *ufunc, PyArray_DTypeMeta *const op_dtypes[],
                            PyArray_DTypeMeta *const signature[], PyArray_DTypeMeta *new_op_dtypes[])
{
    int nargs = ((PyUFuncObject *)ufunc)->nargs;
    (void)op_dtypes;
    (void)signature;
    for (int i = 0; i < nargs; i++) {
        Py_INCREF(&PyArray_DoubleDType);
        new_op_dtypes[i] = &PyArray_DoubleDType;
    }
    return 0;
}

/* the ufunc object of one name of an ops.def row (a new reference): NumPy's,
 * or for "softfp8.<name>" softfp8's own, from the dict own_ufuncs (name -> ufunc) */
static PyObject *row_ufunc(const char *name, size_t len, PyObject *numpy_module, PyObject *own_ufuncs)
{
    char buf[64];
    if (len >= sizeof buf) {
        PyErr_Format(PyExc_RuntimeError, "softfp8: ufunc name too long in ops.def: %.60s", name);
        return NULL;
    }
    memcpy(buf, name, len);
    buf[len] = 0;
    if (strncmp(buf, "softfp8.", 8) == 0) {
        PyObject *uf = PyDict_Check(own_ufuncs) ? PyDict_GetItemString(own_ufuncs, buf + 8) : NULL;
        if (!uf) {
            PyErr_Format(PyExc_RuntimeError, "softfp8: no ufunc object for %s", buf);
            return NULL;
        }
        Py_INCREF(uf);
        return uf;
    }
    return PyObject_GetAttrString(numpy_module, buf);
}

/* Every operation of the table with a ufunc gets a loop: NumPy's ufunc of that
 * name, or for "softfp8.<name>" softfp8's own ufunc of that name. */
PyObject *sfp8_register_ufuncs(PyObject *dtype_cls, PyObject *numpy_module, PyObject *own_ufuncs)
{
    PyArray_DTypeMeta *cls = (PyArray_DTypeMeta *)dtype_cls;
    if (family_of(cls) < 0) {
        PyErr_SetString(PyExc_TypeError, "not a softfp8 DType");
        return NULL;
    }
    for (int op = 0; op < X_NUM_OPS; op++) {
        const char *p = sfp8x_ops[op].ufunc;
        if (!p) continue;
        /* every name of the column (distinct ufunc objects) gets the loop */
        while (*p) {
            size_t len = strcspn(p, " ");
            PyObject *uf;
            int own = strncmp(p, "softfp8.", 8) == 0;
            if (len == 0) {
                p++;
                continue;
            }
            uf = row_ufunc(p, len, numpy_module, own_ufuncs);
            if (!uf) return NULL;
            if (add_loop(uf, cls, op) < 0) {
                Py_DECREF(uf);
                return NULL;
            }
            if (own && sfp8x_arity(op) == 3) {
                /* every operand to the first operand's DType (binary ufuncs: add_loop's
                   binary promoters already do) */
                PyObject *items[4] = {(PyObject *)cls, Py_None, Py_None, Py_None};
                if (add_promoter(uf, items, sfp8x_arity(op) + 1) < 0) {
                    Py_DECREF(uf);
                    return NULL;
                }
            }
            Py_DECREF(uf);
            p += len;
        }
    }
    {
        PyObject *fp = PyObject_GetAttrString(numpy_module, "float_power");
        int r;
        if (!fp) return NULL;
        r = add_binary_promoters_fn(fp, cls, 0, 0, float64_promoter);
        Py_DECREF(fp);
        if (r < 0) return NULL;
    }
    if (add_matmul_loops(numpy_module, cls) < 0) return NULL;
    Py_RETURN_NONE;
}

/* softfp8's own ufunc of row op (its ufunc column "softfp8.<name>"): no loops
 * until sfp8_register_ufuncs gives each DType its loop */
PyObject *sfp8_new_op_ufunc(int op)
{
    const char *u = op >= 0 && op < X_NUM_OPS ? sfp8x_ops[op].ufunc : NULL;
    if (!u || strncmp(u, "softfp8.", 8) != 0 || strchr(u, ' ')) {
        PyErr_Format(PyExc_ValueError, "softfp8: operation %d has no softfp8 ufunc of its own", op);
        return NULL;
    }
    /* the name and doc strings live in the static operation table */
    return PyUFunc_FromFuncAndData(NULL, NULL, NULL, 0, sfp8x_arity(op), sfp8x_nout(op), PyUFunc_None, u + 8,
                                   "softfp8's element operation of this name (softfp8.bits has its documentation)",
                                   0);
}
