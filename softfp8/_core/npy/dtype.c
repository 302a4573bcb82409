/*
 * NumPy glue: the DType classes of the format families (family.c holds the
 * table and the descriptors): their NumPy slots -- descriptor discovery,
 * common instance / common DType (promotion), the constants behind np.finfo /
 * np.nan_to_num, getitem / setitem (scalar.c), the legacy ArrFuncs NumPy still
 * reads through (ordering: order.c; np.dot: dot.c; nonzero, arange,
 * copyswap/copyswapn here) -- and the cast specs (casts.c) each class is made with.
 */
#include "glue.h"

static PyArray_Descr *discover_descr(PyArray_DTypeMeta *cls, PyObject *obj)
{
    if (PyObject_TypeCheck(obj, &ScalarBaseType)) {
        PyObject *d = ((ScalarObject *)obj)->descr;
        if (NPY_DTYPE(d) == cls) {
            Py_INCREF(d);
            return (PyArray_Descr *)d;
        }
    }
    return default_descr(cls);
}

/* The family's own scalars and Python's bool / int / float are set through
   setitem (scalar.c).  NumPy's scalars are not: NumPy then casts them
   (PyArray_Pack -> npy_cast_raw_scalar_item), with the cast's floating-point
   error reporting, exactly as it fills a float16 array from np.float64(1e-30)
   (an underflow there, none through float16's setitem). */
static int is_known_scalar_type(PyArray_DTypeMeta *cls, PyTypeObject *pytype)
{
    int i = family_of(cls);
    if (i >= 0 && PyType_IsSubtype(pytype, families[i].scalar_type)) return 1;
    return pytype == &PyFloat_Type || pytype == &PyLong_Type || pytype == &PyBool_Type;
}

static PyArray_Descr *ensure_canonical(PyArray_Descr *d)
{
    /* np.dot and friends canonicalise their operands' descriptor just before
       calling the dotfunc, which gets none (dot.c) */
    sfp8_dot_note_descr(d);
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
    if (sfp8_ml_partner_count() && sfp8_ml_rank(other)) {
        /* an ml_dtypes float type: as between two formats (by its values), but
           at least float32: ml_dtypes calls its casts into float16 unsafe (so
           the ufunc could not cast the operand), and promotes its types with
           float16 to float32 itself */
        int ri = families[i].float_rank, ro = sfp8_ml_rank(other) > 2 ? 3 : 2;
        if (!ri) {
            Py_INCREF(Py_NotImplemented);
            return (PyArray_DTypeMeta *)Py_NotImplemented;
        }
        r = ri > ro ? ri : ro;
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

/* finfo_constants(descr) -> {name: value}: np.finfo's constants that
   get_constant gives for the descriptor (scalars of the format; Python ints for
   nmant, minexp, maxexp, precision), under the attribute names NumPy's
   _populate_finfo_constants uses.  NumPy >= 2.5.1 refuses a descriptor missing
   any of them ("data type %R not compatible with finfo"); softfp8/_dtypes.py
   then builds the np.finfo object from these and fills the rest exactly. */
PyObject *sfp8_finfo_constants(PyObject *descr)
{
    static const struct {
        const char *name;
        int id, is_int;
    } table[] = {
        {"max", NPY_CONSTANT_maximum_finite, 0},
        {"min", NPY_CONSTANT_minimum_finite, 0},
        {"_radix", NPY_CONSTANT_finfo_radix, 0},
        {"eps", NPY_CONSTANT_finfo_eps, 0},
        {"smallest_normal", NPY_CONSTANT_finfo_smallest_normal, 0},
        {"smallest_subnormal", NPY_CONSTANT_finfo_smallest_subnormal, 0},
        {"nmant", NPY_CONSTANT_finfo_nmant, 1},
        {"minexp", NPY_CONSTANT_finfo_min_exp, 1},
        {"maxexp", NPY_CONSTANT_finfo_max_exp, 1},
        {"precision", NPY_CONSTANT_finfo_decimal_digits, 1},
    };
    PyArray_Descr *d = (PyArray_Descr *)descr;
    PyObject *out;
    if (!PyArray_DescrCheck(descr) || !is_sfp8_descr(d) || is_unset_descr(d)) {
        PyErr_SetString(PyExc_TypeError, "finfo_constants needs a softfp8 dtype");
        return NULL;
    }
    out = PyDict_New();
    for (size_t i = 0; out && i < sizeof table / sizeof table[0]; i++) {
        union {
            npy_intp iv;
            uint16_t code;
        } buf = {0};
        PyObject *v;
        if (!get_constant(d, table[i].id, &buf)) continue;
        v = table[i].is_int ? PyLong_FromSsize_t(buf.iv) : sfp8_getitem(d, (char *)&buf.code);
        if (!v || PyDict_SetItemString(out, table[i].name, v) < 0) Py_CLEAR(out);
        Py_XDECREF(v);
    }
    return out;
}

/* make_dtype(name, scalar_type, parametric, float_rank) -> DType class */
PyObject *sfp8_make_dtype(PyObject *name, PyObject *scalar_type, int parametric, int float_rank)
{
    PyArray_DTypeMeta *cls;
    PyArrayMethod_Spec **casts;
    int fam;
    if (!PyType_Check(scalar_type) || !PyType_IsSubtype((PyTypeObject *)scalar_type, &ScalarBaseType)) {
        PyErr_SetString(PyExc_TypeError, "scalar_type must subclass softfp8._ext.ScalarBase");
        return NULL;
    }
    cls = family_new_class(name);
    if (!cls) return NULL;
    fam = family_add(cls, (PyTypeObject *)scalar_type, parametric, float_rank);
    if (fam < 0) return NULL;
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
            {NPY_DT_PyArray_ArrFuncs_dotfunc, (void *)sfp8_dotfunc(fam)},
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
            family_drop_last();
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
    if (add_sort_methods(cls) < 0) return NULL;
    Py_INCREF((PyObject *)cls);
    return (PyObject *)cls;
}
