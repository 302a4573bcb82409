/*
 * NumPy glue: descriptors (dtype instances) and DType classes of the softfp8
 * format families, their common instance / common DType, the legacy
 * ArrFuncs NumPy still reads through (sort, argmax/argmin, nonzero, arange,
 * copyswap/copyswapn) and the constants behind np.finfo / np.nan_to_num.
 */
#include "glue.h"

Family families[MAX_FAMILIES];
int n_families = 0;
PyObject *descr_factory = NULL;
PyObject *contains_func = NULL;
PyObject *type_of_func = NULL;
PyObject *from_format_func = NULL;

/* type number of every softfp8 descriptor (see make_descr): above NumPy's
   builtin (< NPY_NTYPES_LEGACY), legacy user (NPY_USERDEF + n) and string
   (NPY_VSTRING) numbers and outside the character codes */
#define SFP8_DESCR_TYPE_NUM (1 << 24)

int family_of(PyArray_DTypeMeta *cls)
{
    for (int i = 0; i < n_families; i++)
        if (families[i].cls == cls) return i;
    return -1;
}

int is_sfp8_descr(PyArray_Descr *d) { return family_of(NPY_DTYPE(d)) >= 0; }

static void descr_dealloc(SFP8Descr *self)
{
    Py_XDECREF(self->format);
    PyArrayDescr_Type.tp_dealloc((PyObject *)self);
}

static PyObject *descr_repr(SFP8Descr *self)
{
    PyObject *r = PyObject_Repr(self->format);
    return r;
}

static PyObject *descr_str(SFP8Descr *self)
{
    if (PyUnicode_Check(self->format)) return Py_NewRef(self->format); /* unset_descr */
    return PyObject_GetAttrString(self->format, "name");
}

static Py_hash_t descr_hash(SFP8Descr *self)
{
    return PyObject_Hash(self->format);
}

static PyObject *descr_get_format(SFP8Descr *self, void *closure)
{
    (void)closure;
    Py_INCREF(self->format);
    return self->format;
}

static PyObject *descr_get_name(SFP8Descr *self, void *closure)
{
    (void)closure;
    return PyObject_GetAttrString(self->format, "name");
}

static PyObject *descr_get_type(SFP8Descr *self, void *closure)
{
    /* the scalar type; for parametric families a per-format subclass whose
       constructor knows the format (so dtype.type(x) works, as NumPy's mean uses) */
    (void)closure;
    if (!type_of_func) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 dtypes not initialised");
        return NULL;
    }
    return PyObject_CallOneArg(type_of_func, (PyObject *)self);
}

static PyGetSetDef descr_getset[] = {
    {"type", (getter)descr_get_type, NULL, "scalar type", NULL},
    {"format", (getter)descr_get_format, NULL, "the softfp8 format", NULL},
    {"name", (getter)descr_get_name, NULL, "format name", NULL},
    {NULL}
};

static PyObject *descr_reduce(SFP8Descr *self, PyObject *unused)
{
    (void)unused;
    if (!from_format_func) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 dtypes not initialised");
        return NULL;
    }
    return Py_BuildValue("(O(O))", from_format_func, self->format);
}

static PyMethodDef descr_methods[] = {
    {"__reduce__", (PyCFunction)descr_reduce, METH_NOARGS, NULL},
    {NULL}
};

static PyObject *descr_new_py(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    int i = family_of((PyArray_DTypeMeta *)cls);
    if (i < 0 || !descr_factory) {
        PyErr_SetString(PyExc_TypeError, "unknown softfp8 DType");
        return NULL;
    }
    {
        PyObject *call = Py_BuildValue("(iOO)", i, args ? args : Py_None, kwds ? kwds : Py_None);
        PyObject *res = call ? PyObject_Call(descr_factory, call, NULL) : NULL;
        Py_XDECREF(call);
        return res;
    }
}

static PyObject *descr_default_for(PyArray_DTypeMeta *cls)
{
    PyObject *empty = PyTuple_New(0);
    PyObject *res = empty ? descr_new_py((PyTypeObject *)cls, empty, NULL) : NULL;
    Py_XDECREF(empty);
    return res;
}

/* Create a descriptor of family i for the given format object / params. */
static PyObject *make_descr(int fam, PyObject *format, const sfp8_format *f)
{
    SFP8Descr *d = (SFP8Descr *)PyArrayDescr_Type.tp_new((PyTypeObject *)families[fam].cls, NULL, NULL);
    if (!d) return NULL;
    d->fmt = *f;
    sfp8_order_init(&d->order, f);
    d->format = format;
    Py_INCREF(format);
    d->base.elsize = f->bits <= 8 ? 1 : 2;
    d->base.alignment = d->base.elsize;
    d->base.kind = 'f';
    d->base.byteorder = f->bits <= 8 ? '|' : '=';
    /* NumPy gives new-style descriptors the type number -1, and einsum indexes
       its builtin kernel tables with it (einsum_sumprod.c.src only rejects
       numbers >= NPY_NTYPES_LEGACY), calling a neighbouring table's function.
       A number above every builtin, legacy-user and string type number makes
       it refuse cleanly ("invalid data type for einsum"), as for ml_dtypes. */
    d->base.type_num = SFP8_DESCR_TYPE_NUM;
    return (PyObject *)d;
}

int descr_same(PyArray_Descr *a, PyArray_Descr *b)
{
    if (a == b) return 1;
    if (!fmt_equal(descr_fmt(a), descr_fmt(b))) return 0;
    return PyObject_RichCompareBool(((SFP8Descr *)a)->format, ((SFP8Descr *)b)->format, Py_EQ) == 1;
}

static PyArray_Descr *discover_descr(PyArray_DTypeMeta *cls, PyObject *obj)
{
    if (PyObject_TypeCheck(obj, &ScalarBaseType)) {
        PyObject *d = ((ScalarObject *)obj)->descr;
        if (NPY_DTYPE(d) == cls) {
            Py_INCREF(d);
            return (PyArray_Descr *)d;
        }
    }
    return (PyArray_Descr *)descr_default_for(cls);
}

static int is_known_scalar_type(PyArray_DTypeMeta *cls, PyTypeObject *pytype)
{
    int i = family_of(cls);
    if (i >= 0 && PyType_IsSubtype(pytype, families[i].scalar_type)) return 1;
    if (pytype == &PyFloat_Type || pytype == &PyLong_Type || pytype == &PyBool_Type) return 1;
    if (PyType_IsSubtype(pytype, &PyFloatingArrType_Type) || PyType_IsSubtype(pytype, &PyIntegerArrType_Type))
        return 1;
    return 0;
}

PyArray_Descr *default_descr(PyArray_DTypeMeta *cls)
{
    return (PyArray_Descr *)descr_default_for(cls);
}

/* The "no parameters" descriptor of a parametric family (SoftFloatDType, the
   Tesla families).  NumPy asks for a descriptor of the loop's DType class
   without a target instance when it adapts a ufunc's out= operand of another
   dtype (PyArray_CastDescrToDType: `given_descrs[2] = {descr, NULL}`, then
   "cannot cast dtype %S to %S" on failure), e.g. np.positive(x, out=<float32>,
   casting="unsafe").  cast_resolve answers with this descriptor; the ufunc
   resolvers take the operands' format for any out= descriptor not equal to
   theirs, so the result is computed in the operands' format and NumPy casts it
   into out=.  Any cast to or from it raises (casts.c), so an array never gets
   it (x.astype(softfp8.SoftFloatDType) still asks for parameters). */
static PyObject *unset_descrs[MAX_FAMILIES];

PyArray_Descr *unset_descr(int fam)
{
    if (!unset_descrs[fam]) {
        /* any valid format fills the C fields (never read: casts refuse it and
           descr_same compares the Format objects too) */
        PyObject *name = PyUnicode_FromFormat("%s (no parameters)", ((PyTypeObject *)families[fam].cls)->tp_name);
        unset_descrs[fam] = name ? make_descr(fam, name, &sfp8_presets[0].format) : NULL;
        Py_XDECREF(name);
        if (!unset_descrs[fam]) return NULL;
    }
    return (PyArray_Descr *)Py_NewRef(unset_descrs[fam]);
}

int is_unset_descr(PyArray_Descr *d)
{
    return d && is_sfp8_descr(d) && PyUnicode_Check(((SFP8Descr *)d)->format);
}

static PyArray_Descr *ensure_canonical(PyArray_Descr *d)
{
    Py_INCREF(d);
    return d;
}

static PyArray_Descr *common_instance(PyArray_Descr *a, PyArray_Descr *b)
{
    if (descr_same(a, b)) {
        Py_INCREF(a);
        return a;
    }
    PyErr_Format(PyExc_TypeError,
                 "softfp8: no common format for %S and %S; cast one explicitly (e.g. .astype(...))",
                 ((SFP8Descr *)a)->format, ((SFP8Descr *)b)->format);
    return NULL;
}

static PyArray_DTypeMeta *rank_dtype(int rank)
{
    switch (rank) {
    case 1: return &PyArray_HalfDType;
    case 2: return &PyArray_FloatDType;
    case 3: return &PyArray_DoubleDType;
    default: return NULL;
    }
}

static int int_rank(PyArray_DTypeMeta *o)
{
    /* smallest NumPy float holding every value of the integer DType */
    if (o == &PyArray_BoolDType || o == &PyArray_Int8DType || o == &PyArray_UInt8DType) return 1;
    if (o == &PyArray_Int16DType || o == &PyArray_UInt16DType) return 2;
    return 3;
}

static PyArray_DTypeMeta *common_dtype(PyArray_DTypeMeta *cls, PyArray_DTypeMeta *other)
{
    int i = family_of(cls), j = family_of(other), r;
    if (other == cls) {
        Py_INCREF(cls);
        return cls;
    }
    if (other == &PyArray_PyFloatDType || other == &PyArray_PyLongDType ||
        other == &PyArray_IntAbstractDType || other == &PyArray_FloatAbstractDType) {
        /* NEP 50: stay in the format; a parametric family cannot build its
           descriptor from a Python number (no bias), so it goes to float64 */
        PyArray_DTypeMeta *r = families[i].parametric ? &PyArray_DoubleDType : cls;
        Py_INCREF(r);
        return r;
    }
    if (j >= 0) {
        int ri = families[i].float_rank, rj = families[j].float_rank;
        if (!ri || !rj) {
            Py_INCREF(Py_NotImplemented);
            return (PyArray_DTypeMeta *)Py_NotImplemented;
        }
        r = ri > rj ? ri : rj;
        Py_INCREF(rank_dtype(r));
        return rank_dtype(r);
    }
    if (other == &PyArray_HalfDType || other == &PyArray_FloatDType || other == &PyArray_DoubleDType ||
        other == &PyArray_LongDoubleDType) {
        int ro = other == &PyArray_HalfDType ? 1 : other == &PyArray_FloatDType ? 2 : 3;
        int ri = families[i].float_rank;
        if (!ri) {
            Py_INCREF(Py_NotImplemented);
            return (PyArray_DTypeMeta *)Py_NotImplemented;
        }
        if (other == &PyArray_LongDoubleDType) {
            Py_INCREF(other);
            return other;
        }
        r = ri > ro ? ri : ro;
        Py_INCREF(rank_dtype(r));
        return rank_dtype(r);
    }
    if (other == &PyArray_BoolDType || PyType_IsSubtype(((PyArray_DTypeMeta *)other)->scalar_type,
                                                        &PyIntegerArrType_Type)) {
        int ri = families[i].float_rank;
        if (!ri) {
            Py_INCREF(Py_NotImplemented);
            return (PyArray_DTypeMeta *)Py_NotImplemented;
        }
        r = int_rank(other);
        if (other == &PyArray_BoolDType) {
            Py_INCREF(cls);
            return cls;
        }
        r = ri > r ? ri : r;
        Py_INCREF(rank_dtype(r));
        return rank_dtype(r);
    }
    if (other == &PyArray_UnicodeDType || other == &PyArray_BytesDType) {
        /* as float16: str / bytes (the length is the cast's, 32 characters) */
        Py_INCREF(other);
        return other;
    }
    if (other == &PyArray_CFloatDType || other == &PyArray_CDoubleDType || other == &PyArray_CLongDoubleDType ||
        other == &PyArray_PyComplexDType || other == &PyArray_ComplexAbstractDType) {
        /* the complex type of the float the format promotes to (float16 and
           float32 -> complex64, float64 -> complex128), at least other's */
        int ri = families[i].float_rank;
        PyArray_DTypeMeta *c;
        if (!ri) {
            Py_INCREF(Py_NotImplemented);
            return (PyArray_DTypeMeta *)Py_NotImplemented;
        }
        c = other == &PyArray_CLongDoubleDType                   ? &PyArray_CLongDoubleDType
            : other == &PyArray_CDoubleDType || ri == 3          ? &PyArray_CDoubleDType
                                                                 : &PyArray_CFloatDType;
        Py_INCREF(c);
        return c;
    }
    Py_INCREF(Py_NotImplemented);
    return (PyArray_DTypeMeta *)Py_NotImplemented;
}

/* ---- legacy ArrFuncs used by nonzero / arange (ordering: order.c) ------ */

static npy_bool arr_nonzero(void *data, void *arr)
{
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)arr);
    const sfp8_format *f = descr_fmt(d);
    uint32_t c = load_code(data, (int)d->elsize);
    return !is_zero_value(f, c);
}

static int arr_fill(void *buffer, npy_intp length, void *arr)
{
    /* arange: start + i * delta computed in binary64 (delta, the product and the
       sum each exact only while they fit 53 bits), then rounded into the format
       by the core: up to two roundings, like NumPy's own float16 fill */
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)arr);
    const sfp8_format *f = descr_fmt(d);
    int sz = (int)d->elsize;
    uint8_t fl = 0;
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, f->saturate, 0, 32, 0};
    uint64_t b0 = sfp8_convert(f, &sfp8_binary64, load_code(buffer, sz), &env, &fl);
    uint64_t b1 = sfp8_convert(f, &sfp8_binary64, load_code((char *)buffer + sz, sz), &env, &fl);
    double start, next, delta;
    memcpy(&start, &b0, 8);
    memcpy(&next, &b1, 8);
    delta = next - start;
    for (npy_intp i = 2; i < length; i++) {
        double v = start + (double)i * delta;
        uint64_t vb;
        memcpy(&vb, &v, 8);
        store_code((char *)buffer + i * sz, sz, (uint32_t)sfp8_convert(&sfp8_binary64, f, vb, &env, &fl));
    }
    return 0;
}

/* copyswap / copyswapn: NumPy 2.4 calls them for np.place, `.flat = ...`,
   ndarray.byteswap and structured dtypes holding a softfp8 field, without a
   NULL check (the DType API leaves them NULL).  A copy, then a byte swap of
   2-byte codes when asked (1-byte codes have no byte order).  NumPy passes a
   NULL array only for its builtin numbers and generic scalars (softfp8
   scalars have their own byteswap), where the size is unknown: nothing is done. */
static void arr_copyswapn(void *dst, npy_intp dstride, void *src, npy_intp sstride, npy_intp n, int swap,
                          void *arr)
{
    int sz;
    char *d = dst;
    const char *s = src;
    if (!arr) return;
    sz = (int)PyArray_DESCR((PyArrayObject *)arr)->elsize;
    for (npy_intp i = 0; i < n; i++, d += dstride) {
        if (s) {
            memmove(d, s, (size_t)sz);
            s += sstride;
        }
        if (swap && sz == 2) {
            char t = d[0];
            d[0] = d[1];
            d[1] = t;
        }
    }
}

static void arr_copyswap(void *dst, void *src, int swap, void *arr)
{
    arr_copyswapn(dst, 0, src, 0, 1, swap, arr);
}

/* NPY_DT_get_constant: np.finfo's attributes (the numbers softfp8.finfo gives,
   in the format, where the format holds them exactly) and the special values. */
static int exact_value(const sfp8_format *f, uint64_t sig, int64_t exp, uint32_t *code)
{
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
    uint8_t fl = 0;
    *code = (uint32_t)sfp8_round_value(f, 0, sig, exp, 0, &env, &fl);
    return fl == 0 && sfp8_classify(f, *code) != SFP8_CLASS_INF && sfp8_classify(f, *code) < SFP8_CLASS_QNAN;
}

static int get_constant(PyArray_Descr *descr, int id, void *data)
{
    const sfp8_format *f = descr_fmt(descr);
    int sz = (int)descr->elsize;
    uint32_t c;
    npy_intp iv;
    switch (id) {
    case NPY_CONSTANT_zero: /* formats with no zero (E8M0) have none to give */
        if (f->subnormals == SFP8_SUBNORMALS_NOZERO) return 0;
        c = 0;
        break;
    case NPY_CONSTANT_one: if (!exact_value(f, 1, 0, &c)) return 0; break;
    case NPY_CONSTANT_finfo_radix: if (!exact_value(f, 1, 1, &c)) return 0; break;
    case NPY_CONSTANT_finfo_eps: if (!exact_value(f, 1, -(int64_t)f->man_bits, &c)) return 0; break;
    case NPY_CONSTANT_maximum_finite: c = sfp8_max_code(f); break;
    case NPY_CONSTANT_minimum_finite: c = f->is_signed ? sfp8_neg(f, sfp8_max_code(f)) : 0; break;
    case NPY_CONSTANT_finfo_smallest_normal: c = sfp8_min_normal_code(f); break;
    case NPY_CONSTANT_finfo_smallest_subnormal: c = sfp8_min_subnormal_code(f); break;
    case NPY_CONSTANT_inf:
    case NPY_CONSTANT_ninf:
        if ((f->specials != SFP8_SPECIALS_IEEE && f->specials != SFP8_SPECIALS_P3109) ||
            (id == NPY_CONSTANT_ninf && !f->is_signed))
            return 0;
        {
            /* the core's conversion of binary64 infinity (no saturation) */
            const sfp8_env exact = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
            uint8_t fl = 0;
            c = (uint32_t)sfp8_convert(&sfp8_binary64, f, (uint64_t)0x7FF << 52, &exact, &fl);
        }
        if (id == NPY_CONSTANT_ninf) c = sfp8_neg(f, c);
        break;
    case NPY_CONSTANT_nan:
        if (f->specials == SFP8_SPECIALS_NONE) return 0;
        c = sfp8_default_nan(f);
        break;
    case NPY_CONSTANT_finfo_nmant: iv = f->man_bits; goto integer;
    case NPY_CONSTANT_finfo_min_exp: /* the exponent of the smallest normal, + 1 */
        iv = 1 - (npy_intp)f->bias - (f->subnormals == SFP8_SUBNORMALS_NOZERO);
        goto integer;
    case NPY_CONSTANT_finfo_max_exp: /* the exponent field of the largest finite code (p3109 and 0-bit
                                        mantissas: below the top), unbiased, + 1 */
        iv = (npy_intp)(sfp8_max_code(f) >> f->man_bits) - f->bias + 1;
        goto integer;
    case NPY_CONSTANT_finfo_decimal_digits: iv = (npy_intp)f->man_bits * 30103 / 100000; goto integer;
    default: return 0;
    }
    store_code(data, sz, c);
    return 1;
integer:
    memcpy(data, &iv, sizeof iv);
    return 1;
}

/* make_dtype(name, scalar_type, parametric, float_rank) -> DType class */
PyObject *sfp8_make_dtype(PyObject *name, PyObject *scalar_type, int parametric, int float_rank)
{
    PyArray_DTypeMeta *cls;
    PyTypeObject *t;
    PyArrayMethod_Spec **casts;
    int fam;
    const char *cname;
    char *tp_name;
    if (n_families >= MAX_FAMILIES) {
        PyErr_SetString(PyExc_RuntimeError, "too many softfp8 DType families");
        return NULL;
    }
    if (!PyType_Check(scalar_type) || !PyType_IsSubtype((PyTypeObject *)scalar_type, &ScalarBaseType)) {
        PyErr_SetString(PyExc_TypeError, "scalar_type must subclass softfp8._ext.ScalarBase");
        return NULL;
    }
    cname = PyUnicode_AsUTF8(name);
    if (!cname) return NULL;
    tp_name = PyMem_Malloc(strlen(cname) + 16);
    cls = PyMem_Calloc(1, sizeof(PyArray_DTypeMeta));
    if (!tp_name || !cls) {
        PyMem_Free(tp_name);
        PyMem_Free(cls);
        return PyErr_NoMemory();
    }
    sprintf(tp_name, "softfp8.%s", cname);
    t = (PyTypeObject *)cls;
    {
        PyTypeObject proto = {PyVarObject_HEAD_INIT(NULL, 0)};
        memcpy(t, &proto, sizeof(PyTypeObject));
    }
    t->tp_name = tp_name;
    t->tp_basicsize = sizeof(SFP8Descr);
    t->tp_flags = Py_TPFLAGS_DEFAULT;
    t->tp_new = descr_new_py;
    t->tp_dealloc = (destructor)descr_dealloc;
    t->tp_repr = (reprfunc)descr_repr;
    t->tp_str = (reprfunc)descr_str;
    t->tp_hash = (hashfunc)descr_hash;
    /* CPython inherits tp_richcompare only together with tp_hash (both NULL in the
       subtype: inherit_slots in Objects/typeobject.c); softfp8 sets tp_hash, so without
       this line descriptors compared by identity.  NumPy's comparison is the DType's
       value semantics: descriptor.c arraydescr_richcompare, Py_EQ ->
       PyArray_EquivTypes (multiarraymodule.c) -> "no" cast safety, which cast_resolve
       (casts.c) gives exactly to descr_same pairs: equal parameters and equal Format
       (name and parameters), the same things descr_hash hashes. */
    t->tp_richcompare = PyArrayDescr_Type.tp_richcompare;
    t->tp_getset = descr_getset;
    t->tp_methods = descr_methods;
    t->tp_base = &PyArrayDescr_Type;
    Py_SET_TYPE(t, &PyArrayDTypeMeta_Type);
    if (PyType_Ready(t) < 0) return NULL;

    fam = n_families;
    families[fam].cls = cls;
    families[fam].scalar_type = (PyTypeObject *)scalar_type;
    families[fam].parametric = parametric;
    families[fam].float_rank = float_rank;
    Py_INCREF(scalar_type);
    n_families++;

    casts = cast_specs_for(fam);
    {
        PyType_Slot slots[] = {
            {NPY_DT_discover_descr_from_pyobject, (void *)&discover_descr},
            {_NPY_DT_is_known_scalar_type, (void *)&is_known_scalar_type},
            {NPY_DT_default_descr, (void *)&default_descr},
            {NPY_DT_common_dtype, (void *)&common_dtype},
            {NPY_DT_common_instance, (void *)&common_instance},
            {NPY_DT_ensure_canonical, (void *)&ensure_canonical},
            {NPY_DT_get_constant, (void *)&get_constant},
            {NPY_DT_setitem, (void *)&sfp8_setitem},
            {NPY_DT_getitem, (void *)&sfp8_getitem},
            {NPY_DT_PyArray_ArrFuncs_compare, (void *)&sfp8_arr_compare},
            {NPY_DT_PyArray_ArrFuncs_argmax, (void *)&sfp8_arr_argmax},
            {NPY_DT_PyArray_ArrFuncs_argmin, (void *)&sfp8_arr_argmin},
            {NPY_DT_PyArray_ArrFuncs_sort, (void *)&sfp8_arr_sort},
            {NPY_DT_PyArray_ArrFuncs_argsort, (void *)&sfp8_arr_argsort},
            {NPY_DT_PyArray_ArrFuncs_nonzero, (void *)&arr_nonzero},
            {NPY_DT_PyArray_ArrFuncs_fill, (void *)&arr_fill},
            {0, NULL}
        };
        PyArrayDTypeMeta_Spec spec = {
            .typeobj = (PyTypeObject *)scalar_type,
            .flags = NPY_DT_NUMERIC | (parametric ? NPY_DT_PARAMETRIC : 0),
            .casts = casts,
            .slots = slots,
            .baseclass = NULL,
        };
        if (PyArrayInitDTypeMeta_FromSpec(cls, &spec) < 0) {
            n_families--;
            return NULL;
        }
    }
    {
        /* the DType API has no slot for copyswap(n) (dtype_api.h comments
           them out); NumPy keeps the DType's ArrFuncs in a public struct */
        PyArray_Descr *any = (PyArray_Descr *)PyArrayDescr_Type.tp_new((PyTypeObject *)cls, NULL, NULL);
        PyArray_ArrFuncs *af;
        if (!any) return NULL;
        af = PyDataType_GetArrFuncs(any);
        af->copyswapn = arr_copyswapn;
        af->copyswap = arr_copyswap;
        /* the sort slots above fill only the first kind; the radix sort is
           stable, so it serves every kind */
        for (int k = 0; k < NPY_NSORTS; k++) {
            af->sort[k] = sfp8_arr_sort;
            af->argsort[k] = sfp8_arr_argsort;
        }
        Py_DECREF(any);
    }
    Py_INCREF((PyObject *)cls);
    return (PyObject *)cls;
}

PyObject *sfp8_new_descr(PyObject *cls, PyObject *format, PyObject *params)
{
    sfp8_format f;
    int fam = family_of((PyArray_DTypeMeta *)cls);
    if (fam < 0) {
        PyErr_SetString(PyExc_TypeError, "not a softfp8 DType class");
        return NULL;
    }
    if (!PyArg_ParseTuple(params, "iiiiiiii", &f.bits, &f.is_signed, &f.exp_bits, &f.man_bits, &f.bias,
                          &f.specials, &f.subnormals, &f.saturate))
        return NULL;
    if (sfp8_validate(&f) != SFP8_OK) {
        PyErr_SetString(PyExc_ValueError, "invalid softfp8 format descriptor");
        return NULL;
    }
    return make_descr(fam, format, &f);
}
