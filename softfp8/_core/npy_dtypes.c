/*
 * NumPy glue: softfp8 formats as NumPy DTypes (NumPy >= 2.4 DType API),
 * casts, ufunc loops and promoters.  Loops call the exact core element by
 * element; the rounding environment and the sticky-flag cell are read from the
 * Python context once, when a ufunc or cast starts (get_loop, with the GIL),
 * and never touched as Python objects inside the loops.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION
#include <numpy/ndarraytypes.h>
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>
#include <numpy/dtype_api.h>
#include <numpy/arrayscalars.h>

#include <fenv.h>
#include <string.h>

#include "softfp8/softfp8.h"
#include "npy_dtypes.h"
#include "fast.h"
#include "ops.h"

typedef struct PyArrayMethodObject_tag PyArrayMethodObject;

/* ======================================================================== */
/* Context state (a small C object owned by Python's contextvars)            */
/* ======================================================================== */

typedef struct {
    PyObject_HEAD
    int rounding;        /* enum sfp8_rounding                         */
    int saturate;        /* -1: the format's default; 0/1              */
    int tininess_before;
    int sr_bits;
    int seeded;
    unsigned long long seed;
    unsigned long long counter; /* operations rounded under this state  */
    PyObject *cell;      /* FlagCell: the sticky flags                  */
} StateObject;

typedef struct {
    PyObject_HEAD
    unsigned int flags;
} FlagCellObject;

static PyMemberDef cell_members[] = {
    {"flags", T_UINT, offsetof(FlagCellObject, flags), 0, "sticky flag bits"},
    {NULL}
};

static PyTypeObject FlagCellType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "softfp8._ext.FlagCell",
    .tp_basicsize = sizeof(FlagCellObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_members = cell_members,
};

static void state_dealloc(StateObject *s)
{
    Py_XDECREF(s->cell);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyMemberDef state_members[] = {
    {"rounding", T_INT, offsetof(StateObject, rounding), 0, NULL},
    {"saturate", T_INT, offsetof(StateObject, saturate), 0, NULL},
    {"tininess_before", T_INT, offsetof(StateObject, tininess_before), 0, NULL},
    {"sr_bits", T_INT, offsetof(StateObject, sr_bits), 0, NULL},
    {"seeded", T_INT, offsetof(StateObject, seeded), 0, NULL},
    {"seed", T_ULONGLONG, offsetof(StateObject, seed), 0, NULL},
    {"counter", T_ULONGLONG, offsetof(StateObject, counter), 0, NULL},
    {"cell", T_OBJECT_EX, offsetof(StateObject, cell), 0, NULL},
    {NULL}
};

static PyTypeObject StateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "softfp8._ext.State",
    .tp_basicsize = sizeof(StateObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)state_dealloc,
    .tp_members = state_members,
};

static PyObject *state_getter = NULL; /* Python callable -> StateObject */

/* Per-call environment, captured at get_loop time. */
typedef struct {
    NpyAuxData base;
    sfp8_env env;
    int sat_default;     /* saturate was "format default" */
    int stoch;
    int seeded;
    uint64_t seed, stream, index;
    PyObject *cell;      /* strong reference, released in free (GIL held) */
    unsigned int *flags; /* &cell->flags                                 */
    sfp8_format fi, fo;  /* cast endpoints' formats (CastData points at them) */
} LoopData;

static void loopdata_free(NpyAuxData *p)
{
    LoopData *d = (LoopData *)p;
    Py_XDECREF(d->cell);
    PyMem_Free(d);
}

static NpyAuxData *loopdata_clone(NpyAuxData *p)
{
    LoopData *d = PyMem_Malloc(sizeof(LoopData));
    if (!d) return NULL;
    memcpy(d, p, sizeof(LoopData));
    Py_XINCREF(d->cell);
    d->flags = d->cell ? &((FlagCellObject *)d->cell)->flags : NULL;
    return (NpyAuxData *)d;
}

static LoopData *loopdata_new(void)
{
    LoopData *d;
    StateObject *st;
    PyObject *res;
    if (!state_getter) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 context not initialised");
        return NULL;
    }
    res = PyObject_CallNoArgs(state_getter);
    if (!res) return NULL;
    if (!PyObject_TypeCheck(res, &StateType)) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_TypeError, "softfp8 context getter returned a non-State");
        return NULL;
    }
    st = (StateObject *)res;
    d = PyMem_Calloc(1, sizeof(LoopData));
    if (!d) {
        Py_DECREF(res);
        PyErr_NoMemory();
        return NULL;
    }
    d->base.free = loopdata_free;
    d->base.clone = loopdata_clone;
    d->env.rounding = st->rounding;
    d->env.tininess_before = st->tininess_before;
    d->env.sr_bits = st->sr_bits;
    d->sat_default = st->saturate < 0;
    d->env.saturate = st->saturate > 0;
    d->stoch = st->rounding == SFP8_ROUND_STOCHASTIC;
    d->seeded = st->seeded;
    d->seed = st->seed;
    d->stream = st->counter;
    if (d->stoch) st->counter += 1;
    d->index = 0;
    d->cell = st->cell;
    Py_INCREF(d->cell);
    d->flags = &((FlagCellObject *)d->cell)->flags;
    Py_DECREF(res);
    if (d->stoch && !d->seeded) {
        /* unseeded stochastic rounding: fresh entropy per operation */
        PyObject *os = PyImport_ImportModule("os");
        PyObject *bytes = os ? PyObject_CallMethod(os, "urandom", "i", 8) : NULL;
        Py_XDECREF(os);
        if (!bytes) {
            loopdata_free((NpyAuxData *)d);
            return NULL;
        }
        memcpy(&d->seed, PyBytes_AS_STRING(bytes), 8);
        Py_DECREF(bytes);
    }
    return d;
}

static inline void loop_env_for(LoopData *d, const sfp8_format *f, sfp8_env *env)
{
    *env = d->env;
    if (d->sat_default) env->saturate = f->saturate;
}

static inline uint32_t loop_random(LoopData *d)
{
    return sfp8_random_u32(d->seed, d->stream, d->index++);
}

/* publish flags: sticky cell (atomic OR) and NumPy's FP error machinery */
static void loop_publish(LoopData *d, unsigned int fl)
{
    int fe = 0;
    if (!fl) return;
    __atomic_fetch_or(d->flags, fl, __ATOMIC_RELAXED);
    if (fl & SFP8_FLAG_OVERFLOW) fe |= FE_OVERFLOW;
    if (fl & SFP8_FLAG_UNDERFLOW) fe |= FE_UNDERFLOW;
    if (fl & SFP8_FLAG_INVALID) fe |= FE_INVALID;
    if (fl & SFP8_FLAG_DIVBYZERO) fe |= FE_DIVBYZERO;
    if (fe) feraiseexcept(fe);
}

/* ======================================================================== */
/* Descriptors and DType classes                                             */
/* ======================================================================== */

typedef struct {
    PyArray_Descr base;
    sfp8_format fmt;
    PyObject *format; /* the softfp8.Format object */
} SFP8Descr;

#define MAX_FAMILIES 32
typedef struct {
    PyArray_DTypeMeta *cls;
    PyTypeObject *scalar_type;
    int parametric;
    /* worst-case containment for class-level promotion: the smallest of
       float16(1)/float32(2)/float64(3) holding every format of the family,
       0 if none does */
    int float_rank;
} Family;

static Family families[MAX_FAMILIES];
static int n_families = 0;
static PyObject *descr_factory = NULL; /* Python: (family_index) -> default descr or raise */
static PyObject *contains_func = NULL; /* Python: (fmt_a, fmt_b) -> bool (every value of a in b) */

static int family_of(PyArray_DTypeMeta *cls)
{
    for (int i = 0; i < n_families; i++)
        if (families[i].cls == cls) return i;
    return -1;
}

static int is_sfp8_descr(PyArray_Descr *d) { return family_of(NPY_DTYPE(d)) >= 0; }

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
    PyObject *mod = PyImport_ImportModule("softfp8._dtypes"), *fn, *res;
    (void)closure;
    if (!mod) return NULL;
    fn = PyObject_GetAttrString(mod, "_type_of");
    Py_DECREF(mod);
    if (!fn) return NULL;
    res = PyObject_CallOneArg(fn, (PyObject *)self);
    Py_DECREF(fn);
    return res;
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
    PyObject *mod = PyImport_ImportModule("softfp8._dtypes");
    PyObject *fn, *res;
    if (!mod) return NULL;
    fn = PyObject_GetAttrString(mod, "_dtype_from_format");
    Py_DECREF(mod);
    if (!fn) return NULL;
    res = Py_BuildValue("(N(O))", fn, self->format);
    return res;
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
    d->format = format;
    Py_INCREF(format);
    d->base.elsize = f->bits <= 8 ? 1 : 2;
    d->base.alignment = d->base.elsize;
    d->base.kind = 'f';
    d->base.byteorder = f->bits <= 8 ? '|' : '=';
    return (PyObject *)d;
}

static const sfp8_format *descr_fmt(PyArray_Descr *d) { return &((SFP8Descr *)d)->fmt; }

static int fmt_equal(const sfp8_format *a, const sfp8_format *b)
{
    return memcmp(a, b, sizeof(sfp8_format)) == 0;
}

static int descr_same(PyArray_Descr *a, PyArray_Descr *b)
{
    if (a == b) return 1;
    if (!fmt_equal(descr_fmt(a), descr_fmt(b))) return 0;
    return PyObject_RichCompareBool(((SFP8Descr *)a)->format, ((SFP8Descr *)b)->format, Py_EQ) == 1;
}

/* ---- element access --------------------------------------------------- */

static inline uint32_t load_code(const char *p, int size)
{
    if (size == 1) return *(const uint8_t *)p;
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static inline void store_code(char *p, int size, uint32_t v)
{
    if (size == 1) {
        *(uint8_t *)p = (uint8_t)v;
    } else {
        uint16_t w = (uint16_t)v;
        memcpy(p, &w, 2);
    }
}

/* Scalar object layout (C base of every family's scalar type). */
typedef struct {
    PyObject_HEAD
    uint32_t code;
    PyObject *descr;
} ScalarObject;

static PyObject *make_scalar(PyArray_Descr *descr, uint32_t code)
{
    int fam = family_of(NPY_DTYPE(descr));
    PyTypeObject *t = families[fam].scalar_type;
    ScalarObject *s = (ScalarObject *)t->tp_alloc(t, 0);
    if (!s) return NULL;
    s->code = code;
    s->descr = (PyObject *)descr;
    Py_INCREF(descr);
    return (PyObject *)s;
}

static PyObject *sfp8_getitem(PyArray_Descr *descr, char *data)
{
    return make_scalar(descr, load_code(data, (int)descr->elsize));
}

static PyTypeObject ScalarBaseType;

/* Convert a Python object to a code of descr (context rounding). */
static int object_to_code(PyArray_Descr *descr, PyObject *obj, uint32_t *out)
{
    const sfp8_format *f = descr_fmt(descr);
    LoopData *ld;
    sfp8_env env;
    uint8_t fl = 0;
    if (PyObject_TypeCheck(obj, &ScalarBaseType)) {
        ScalarObject *s = (ScalarObject *)obj;
        const sfp8_format *sf = descr_fmt((PyArray_Descr *)s->descr);
        if (fmt_equal(sf, f)) {
            *out = s->code;
            return 0;
        }
        ld = loopdata_new();
        if (!ld) return -1;
        loop_env_for(ld, f, &env);
        if (ld->stoch) env.random = loop_random(ld);
        *out = (uint32_t)sfp8_convert(sf, f, s->code, &env, &fl);
    } else if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (v == -1 && PyErr_Occurred()) return -1;
        ld = loopdata_new();
        if (!ld) return -1;
        loop_env_for(ld, f, &env);
        if (ld->stoch) env.random = loop_random(ld);
        if (!overflow) {
            *out = sfp8_from_int64(f, v, &env, &fl);
        } else {
            /* |v| >= 2^63: top 64 bits and a sticky bit, exactly */
            PyObject *absv = PyNumber_Absolute(obj);
            size_t nb = absv ? _PyLong_NumBits(absv) : 0;
            PyObject *shift = absv ? PyLong_FromSize_t(nb - 64) : NULL;
            PyObject *top = shift ? PyNumber_Rshift(absv, shift) : NULL;
            PyObject *back = top ? PyNumber_Lshift(top, shift) : NULL;
            int sticky = back ? PyObject_RichCompareBool(back, absv, Py_NE) : -1;
            unsigned long long t = top ? PyLong_AsUnsignedLongLong(top) : 0;
            Py_XDECREF(absv);
            Py_XDECREF(shift);
            Py_XDECREF(top);
            Py_XDECREF(back);
            if (sticky < 0 || PyErr_Occurred()) {
                loopdata_free((NpyAuxData *)ld);
                return -1;
            }
            *out = (uint32_t)sfp8_round_value(f, overflow < 0, t, (int64_t)(nb - 64), sticky, &env, &fl);
        }
    } else {
        double x;
        uint64_t bits;
        if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
            PyObject *fo = PyFloat_FromString(obj);
            if (!fo) return -1;
            x = PyFloat_AsDouble(fo);
            Py_DECREF(fo);
        } else if (PyFloat_Check(obj) || PyBool_Check(obj) || PyArray_IsScalar(obj, Number) ||
                   PyNumber_Check(obj)) {
            if (PyComplex_Check(obj) || PyArray_IsScalar(obj, ComplexFloating)) {
                PyErr_Format(PyExc_TypeError, "cannot convert complex %R to softfp8 %S", obj,
                             ((SFP8Descr *)descr)->format);
                return -1;
            }
            x = PyFloat_AsDouble(obj);
            if (x == -1.0 && PyErr_Occurred()) return -1;
        } else {
            PyErr_Format(PyExc_TypeError, "cannot convert %R (type %s) to softfp8 %S", obj,
                         Py_TYPE(obj)->tp_name, ((SFP8Descr *)descr)->format);
            return -1;
        }
        ld = loopdata_new();
        if (!ld) return -1;
        loop_env_for(ld, f, &env);
        if (ld->stoch) env.random = loop_random(ld);
        memcpy(&bits, &x, 8);
        *out = (uint32_t)sfp8_convert(&sfp8_binary64, f, bits, &env, &fl);
    }
    __atomic_fetch_or(ld->flags, (unsigned)fl, __ATOMIC_RELAXED);
    loopdata_free((NpyAuxData *)ld);
    return 0;
}

static int sfp8_setitem(PyArray_Descr *descr, PyObject *obj, char *data)
{
    uint32_t code;
    if (object_to_code(descr, obj, &code) < 0) return -1;
    store_code(data, (int)descr->elsize, code);
    return 0;
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

static PyArray_Descr *default_descr(PyArray_DTypeMeta *cls)
{
    return (PyArray_Descr *)descr_default_for(cls);
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
    Py_INCREF(Py_NotImplemented);
    return (PyArray_DTypeMeta *)Py_NotImplemented;
}

/* ---- legacy ArrFuncs used by sort / argmax / nonzero / arange ---------- */

static int is_zero_value(const sfp8_format *f, uint32_t c)
{
    int cls = sfp8_classify(f, c);
    return cls == SFP8_CLASS_ZERO || (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH);
}

static int value_cmp_nanlast(const sfp8_format *f, uint32_t a, uint32_t b)
{
    uint8_t fl = 0;
    int r = sfp8_compare(f, a, b, 0, &fl);
    if (r == SFP8_UNORDERED) {
        int an = sfp8_classify(f, a) >= SFP8_CLASS_QNAN, bn = sfp8_classify(f, b) >= SFP8_CLASS_QNAN;
        return an - bn; /* NaNs last, equal among themselves */
    }
    return r;
}

static int arr_compare(const void *pa, const void *pb, void *arr)
{
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)arr);
    int n = (int)d->elsize;
    return value_cmp_nanlast(descr_fmt(d), load_code(pa, n), load_code(pb, n));
}

/* index of the first NaN, else of the first extreme value (want: LESS or GREATER) */
static int arg_extreme(char *ip, npy_intp n, npy_intp *ind, void *arr, int want)
{
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)arr);
    const sfp8_format *f = descr_fmt(d);
    int sz = (int)d->elsize;
    uint32_t best = load_code(ip, sz);
    *ind = 0;
    if (sfp8_classify(f, best) >= SFP8_CLASS_QNAN) return 0;
    for (npy_intp i = 1; i < n; i++) {
        uint32_t c = load_code(ip + i * sz, sz);
        uint8_t fl = 0;
        if (sfp8_classify(f, c) >= SFP8_CLASS_QNAN) {
            *ind = i;
            return 0;
        }
        if (sfp8_compare(f, c, best, 0, &fl) == want) {
            best = c;
            *ind = i;
        }
    }
    return 0;
}

static int arr_argmax(char *ip, npy_intp n, npy_intp *max_ind, void *arr)
{
    return arg_extreme(ip, n, max_ind, arr, SFP8_GREATER);
}

static int arr_argmin(char *ip, npy_intp n, npy_intp *min_ind, void *arr)
{
    return arg_extreme(ip, n, min_ind, arr, SFP8_LESS);
}

static npy_bool arr_nonzero(void *data, void *arr)
{
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)arr);
    const sfp8_format *f = descr_fmt(d);
    uint32_t c = load_code(data, (int)d->elsize);
    return !is_zero_value(f, c);
}

static int arr_fill(void *buffer, npy_intp length, void *arr)
{
    /* arange: start + i * delta, computed in float64 and rounded once */
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

/* ======================================================================== */
/* Casts                                                                     */
/* ======================================================================== */

enum { K_SFP8 = 0, K_BOOL, K_INT, K_UINT, K_FLOAT };

typedef struct {
    int kind;
    int size;
    const sfp8_format *f; /* K_SFP8 and K_FLOAT (binary formats) */
} Endpoint;

static sfp8_format binary16_fmt = {16, 1, 5, 10, 15, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE, 0};

typedef struct {
    LoopData ld;
    Endpoint src, dst;
    const sfp8f_conv *conv;   /* fast table found for this cast, if any */
    const uint16_t *fromf;
} CastData;

/* The fast table of a cast, looked up (and built when n repays it) per call. */
static int fast_cast(CastData *cd, const sfp8_env *env, const char *in, npy_intp si, char *out, npy_intp so,
                     npy_intp n, unsigned *fl)
{
    const Endpoint *s = &cd->src, *t = &cd->dst;
    if (!cd->conv && !cd->fromf) {
        if (s->kind == K_SFP8 && (t->kind == K_SFP8 || (t->kind == K_FLOAT && t->size > 0)))
            cd->conv = sfp8f_convert(s->f, t->f, env, n);
        else if (s->kind == K_FLOAT && s->size == 2 && t->kind == K_SFP8)
            cd->conv = sfp8f_convert(s->f, t->f, env, n);
        else if (s->kind == K_FLOAT && (s->size == 4 || s->size == 8) && t->kind == K_SFP8)
            cd->fromf = sfp8f_from_float(t->f, env, n);
    }
    if (cd->conv) {
        *fl = sfp8f_run_convert(cd->conv, in, si, s->size, out, so, t->size, n, NULL);
        return 1;
    }
    if (cd->fromf) {
        *fl = sfp8f_run_from_float(cd->fromf, in, si, s->size, out, so, n, NULL);
        return 1;
    }
    return 0;
}

static NpyAuxData *castdata_clone(NpyAuxData *p)
{
    CastData *d = PyMem_Malloc(sizeof(CastData));
    if (!d) return NULL;
    memcpy(d, p, sizeof(CastData));
    Py_XINCREF(d->ld.cell);
    d->ld.flags = d->ld.cell ? &((FlagCellObject *)d->ld.cell)->flags : NULL;
    if (d->src.kind == K_SFP8) d->src.f = &d->ld.fi;
    if (d->dst.kind == K_SFP8) d->dst.f = &d->ld.fo;
    return (NpyAuxData *)d;
}

static int endpoint_of(PyArray_Descr *d, Endpoint *e, sfp8_format *store)
{
    e->size = (int)d->elsize;
    if (is_sfp8_descr(d)) {
        e->kind = K_SFP8;
        *store = *descr_fmt(d);
        e->f = store;
        return 0;
    }
    switch (d->type_num) {
    case NPY_BOOL: e->kind = K_BOOL; return 0;
    case NPY_BYTE: case NPY_SHORT: case NPY_INT: case NPY_LONG: case NPY_LONGLONG:
        e->kind = K_INT; return 0;
    case NPY_UBYTE: case NPY_USHORT: case NPY_UINT: case NPY_ULONG: case NPY_ULONGLONG:
        e->kind = K_UINT; return 0;
    case NPY_HALF: e->kind = K_FLOAT; e->f = &binary16_fmt; return 0;
    case NPY_FLOAT: e->kind = K_FLOAT; e->f = &sfp8_binary32; return 0;
    case NPY_DOUBLE: e->kind = K_FLOAT; e->f = &sfp8_binary64; return 0;
    case NPY_LONGDOUBLE: e->kind = K_FLOAT; e->f = &sfp8_binary64; e->size = -(int)d->elsize; return 0;
    default:
        PyErr_Format(PyExc_TypeError, "softfp8: unsupported cast endpoint %S", (PyObject *)d);
        return -1;
    }
}

static inline uint64_t load_raw(const char *p, int size)
{
    uint64_t v = 0;
    switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: { uint16_t t; memcpy(&t, p, 2); return t; }
    case 4: { uint32_t t; memcpy(&t, p, 4); return t; }
    case 8: memcpy(&v, p, 8); return v;
    default: return 0;
    }
}

static inline void store_raw(char *p, int size, uint64_t v)
{
    switch (size) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: { uint16_t t = (uint16_t)v; memcpy(p, &t, 2); break; }
    case 4: { uint32_t t = (uint32_t)v; memcpy(p, &t, 4); break; }
    case 8: memcpy(p, &v, 8); break;
    }
}

static inline int64_t sext(uint64_t v, int size)
{
    switch (size) {
    case 1: return (int8_t)v;
    case 2: return (int16_t)v;
    case 4: return (int32_t)v;
    default: return (int64_t)v;
    }
}

static int cast_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                     npy_intp const strides[], NpyAuxData *auxdata)
{
    CastData *cd = (CastData *)auxdata;
    LoopData *ld = &cd->ld;
    const Endpoint *s = &cd->src, *t = &cd->dst;
    npy_intp n = dimensions[0];
    const char *in = data[0];
    char *out = data[1];
    unsigned int acc = 0;
    sfp8_env env;
    const sfp8_format *ef = (t->kind == K_SFP8 || t->kind == K_FLOAT) ? t->f : s->f;
    (void)context;
    loop_env_for(ld, ef, &env);
    if (ld->stoch && s->kind == K_FLOAT && (s->size == 4 || s->size == 8) && t->kind == K_SFP8) {
        const sfp8f_sr *sr = sfp8f_stochastic(t->f, &env, n);
        if (sr) {
            acc = sfp8f_run_from_float_sr(sr, t->f, &env, ld->seed, ld->stream, ld->index, in, strides[0], s->size,
                                          out, strides[1], n, NULL);
            ld->index += (uint64_t)n;
            loop_publish(ld, acc);
            return 0;
        }
    }
    if (fast_cast(cd, &env, in, strides[0], out, strides[1], n, &acc)) {
        loop_publish(ld, acc);
        return 0;
    }
    for (npy_intp i = 0; i < n; i++, in += strides[0], out += strides[1]) {
        uint8_t fl = 0;
        uint64_t r = 0;
        if (ld->stoch) env.random = loop_random(ld);
        if (s->kind == K_SFP8) {
            uint32_t c = load_code(in, s->size);
            switch (t->kind) {
            case K_SFP8:
            case K_FLOAT:
                if (t->size < 0) { /* long double via double */
                    uint64_t b = sfp8_convert(s->f, &sfp8_binary64, c, &env, &fl);
                    double dv;
                    long double lv;
                    memcpy(&dv, &b, 8);
                    lv = dv;
                    memcpy(out, &lv, sizeof(long double));
                    continue;
                }
                r = sfp8_convert(s->f, t->f, c, &env, &fl);
                break;
            case K_BOOL:
                r = !is_zero_value(s->f, c);
                break;
            case K_INT:
            case K_UINT: {
                sfp8_env tz = env;
                tz.rounding = SFP8_ROUND_TOWARD_ZERO;
                if (t->kind == K_UINT && t->size == 8) {
                    /* via the exact integral value in float64 */
                    uint8_t f2 = 0;
                    uint32_t ti = sfp8_round_integral(s->f, c, &tz, 0, &f2);
                    uint64_t b = sfp8_convert(s->f, &sfp8_binary64, ti, &tz, &f2);
                    double dv;
                    memcpy(&dv, &b, 8);
                    fl |= f2 & SFP8_FLAG_DENORMAL;
                    if (dv >= 0 && dv < 18446744073709551616.0) r = (uint64_t)dv;
                    else if (dv < 0 && dv >= -9223372036854775808.0) r = (uint64_t)(int64_t)dv;
                    else {
                        fl |= SFP8_FLAG_INVALID;
                        r = (uint64_t)1 << 63;
                    }
                    break;
                }
                r = (uint64_t)sfp8_to_int64(s->f, c, &tz, &fl);
                fl &= (uint8_t)~SFP8_FLAG_INEXACT;
                break;
            }
            }
            if (t->kind == K_SFP8) store_code(out, t->size, (uint32_t)r);
            else store_raw(out, t->size, r);
        } else {
            uint32_t c = 0;
            switch (s->kind) {
            case K_BOOL:
                c = sfp8_from_int64(t->f, load_raw(in, 1) != 0, &env, &fl);
                break;
            case K_INT:
                c = sfp8_from_int64(t->f, sext(load_raw(in, s->size), s->size), &env, &fl);
                break;
            case K_UINT:
                c = sfp8_from_uint64(t->f, load_raw(in, s->size), &env, &fl);
                break;
            case K_FLOAT:
                if (s->size < 0) {
                    long double lv;
                    double dv;
                    uint64_t b;
                    memcpy(&lv, in, sizeof(long double));
                    dv = (double)lv;
                    memcpy(&b, &dv, 8);
                    c = (uint32_t)sfp8_convert(&sfp8_binary64, t->f, b, &env, &fl);
                } else {
                    c = (uint32_t)sfp8_convert(s->f, t->f, load_raw(in, s->size), &env, &fl);
                }
                break;
            }
            store_code(out, t->size, c);
        }
        acc |= fl;
    }
    loop_publish(ld, acc);
    return 0;
}

static int copy_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                     npy_intp const strides[], NpyAuxData *auxdata)
{
    npy_intp n = dimensions[0];
    int sz = (int)context->descriptors[0]->elsize;
    const char *in = data[0];
    char *out = data[1];
    (void)auxdata;
    for (npy_intp i = 0; i < n; i++, in += strides[0], out += strides[1]) memcpy(out, in, sz);
    return 0;
}

static int cast_get_loop(PyArrayMethod_Context *context, int aligned, int move_references,
                         const npy_intp *strides, PyArrayMethod_StridedLoop **out_loop,
                         NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags)
{
    PyArray_Descr *const *descrs = context->descriptors;
    CastData *cd;
    LoopData *ld;
    (void)aligned;
    (void)move_references;
    (void)strides;
    if (is_sfp8_descr(descrs[0]) && is_sfp8_descr(descrs[1]) && descr_same(descrs[0], descrs[1])) {
        *out_loop = copy_loop;
        *out_transferdata = NULL;
        *flags = NPY_METH_NO_FLOATINGPOINT_ERRORS;
        return 0;
    }
    ld = loopdata_new();
    if (!ld) return -1;
    cd = PyMem_Calloc(1, sizeof(CastData));
    if (!cd) {
        loopdata_free((NpyAuxData *)ld);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(&cd->ld, ld, sizeof(LoopData));
    PyMem_Free(ld); /* reference to the cell moved into cd */
    cd->ld.flags = &((FlagCellObject *)cd->ld.cell)->flags;
    cd->ld.base.clone = castdata_clone;
    if (endpoint_of(descrs[0], &cd->src, &cd->ld.fi) < 0 || endpoint_of(descrs[1], &cd->dst, &cd->ld.fo) < 0) {
        loopdata_free((NpyAuxData *)cd);
        return -1;
    }
    *out_loop = cast_loop;
    *out_transferdata = (NpyAuxData *)cd;
    *flags = 0;
    return 0;
}

/* str / bytes -> softfp8: parse each element as Python's float() does (GIL held) */
static int string_cast_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                            npy_intp const strides[], NpyAuxData *auxdata)
{
    PyArray_Descr *src = context->descriptors[0], *dst = context->descriptors[1];
    npy_intp n = dimensions[0], width = src->elsize;
    int unicode = src->type_num == NPY_UNICODE;
    const char *in = data[0];
    char *out = data[1];
    (void)auxdata;
    for (npy_intp i = 0; i < n; i++, in += strides[0], out += strides[1]) {
        PyObject *str;
        uint32_t code;
        if (unicode) {
            npy_intp len = width / 4;
            Py_UCS4 buf;
            while (len > 0) {
                memcpy(&buf, in + 4 * (len - 1), 4);
                if (buf) break;
                len--;
            }
            str = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, in, len);
        } else {
            npy_intp len = width;
            while (len > 0 && in[len - 1] == 0) len--;
            str = PyBytes_FromStringAndSize(in, len);
        }
        if (!str) return -1;
        if (object_to_code(dst, str, &code) < 0) {
            Py_DECREF(str);
            return -1;
        }
        Py_DECREF(str);
        store_code(out, (int)dst->elsize, code);
    }
    return 0;
}

static NPY_CASTING string_cast_resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[2],
                                       PyArray_Descr *const given[2], PyArray_Descr *loop[2],
                                       npy_intp *view_offset)
{
    (void)self;
    (void)view_offset;
    if (!given[1]) {
        PyErr_SetString(PyExc_TypeError, "softfp8: casting strings needs a complete softfp8 dtype");
        return -1;
    }
    loop[0] = PyArray_DescrNewByteorder(given[0], NPY_NATIVE);
    if (!loop[0]) return -1;
    Py_INCREF(given[1]);
    loop[1] = given[1];
    (void)dtypes;
    return NPY_UNSAFE_CASTING;
}

static PyType_Slot string_cast_slots[] = {
    {NPY_METH_resolve_descriptors, (void *)&string_cast_resolve},
    {NPY_METH_strided_loop, (void *)&string_cast_loop},
    {NPY_METH_unaligned_strided_loop, (void *)&string_cast_loop},
    {0, NULL}
};

/* casting safety: every value of a exactly in b (asks Python, cached there) */
static int contains(PyArray_Descr *a, PyArray_Descr *b)
{
    PyObject *r;
    int v;
    if (!contains_func) return 0;
    r = PyObject_CallFunctionObjArgs(contains_func, (PyObject *)a, (PyObject *)b, NULL);
    if (!r) {
        PyErr_Clear();
        return 0;
    }
    v = PyObject_IsTrue(r);
    Py_DECREF(r);
    return v > 0;
}

static NPY_CASTING cast_resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[2],
                                PyArray_Descr *const given[2], PyArray_Descr *loop[2], npy_intp *view_offset)
{
    (void)self;
    if (family_of(dtypes[0]) >= 0) {
        Py_INCREF(given[0]);
        loop[0] = given[0];
    } else {
        loop[0] = PyArray_DescrFromType(given[0]->type_num); /* native byte order */
        if (!loop[0]) return -1;
    }
    if (given[1]) {
        if (family_of(dtypes[1]) >= 0) {
            Py_INCREF(given[1]);
            loop[1] = given[1];
        } else {
            loop[1] = PyArray_DescrFromType(given[1]->type_num);
        }
    } else if (family_of(dtypes[1]) >= 0) {
        if (dtypes[0] == dtypes[1]) {
            Py_INCREF(given[0]);
            loop[1] = given[0];
        } else {
            loop[1] = default_descr(dtypes[1]);
        }
    } else {
        loop[1] = PyArray_GetDefaultDescr(dtypes[1]);
        if (loop[1]) Py_INCREF(loop[1]);
    }
    if (!loop[1]) {
        Py_DECREF(loop[0]);
        return -1;
    }
    if (is_sfp8_descr(loop[0]) && is_sfp8_descr(loop[1])) {
        if (descr_same(loop[0], loop[1])) {
            *view_offset = 0;
            return NPY_NO_CASTING;
        }
        return contains(loop[0], loop[1]) ? NPY_SAFE_CASTING : NPY_SAME_KIND_CASTING;
    }
    if (is_sfp8_descr(loop[0])) {
        int tn = loop[1]->type_num;
        if (tn == NPY_HALF || tn == NPY_FLOAT || tn == NPY_DOUBLE || tn == NPY_LONGDOUBLE)
            return contains(loop[0], loop[1]) ? NPY_SAFE_CASTING : NPY_SAME_KIND_CASTING;
        return NPY_UNSAFE_CASTING;
    }
    /* into a softfp8 format */
    return contains(loop[0], loop[1]) ? NPY_SAFE_CASTING : NPY_SAME_KIND_CASTING;
}

/* ======================================================================== */
/* DType creation                                                            */
/* ======================================================================== */

static PyArray_DTypeMeta *builtin_cast_partners[32];
static int n_builtin_partners = 0;

static void init_builtin_partners(void)
{
    PyArray_DTypeMeta *all[] = {
        &PyArray_BoolDType, &PyArray_ByteDType, &PyArray_UByteDType, &PyArray_ShortDType,
        &PyArray_UShortDType, &PyArray_IntDType, &PyArray_UIntDType, &PyArray_LongDType,
        &PyArray_ULongDType, &PyArray_LongLongDType, &PyArray_ULongLongDType, &PyArray_HalfDType,
        &PyArray_FloatDType, &PyArray_DoubleDType, &PyArray_LongDoubleDType,
    };
    n_builtin_partners = 0;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        int dup = 0;
        for (int j = 0; j < n_builtin_partners; j++)
            if (builtin_cast_partners[j] == all[i]) dup = 1;
        if (!dup) builtin_cast_partners[n_builtin_partners++] = all[i];
    }
}

static PyType_Slot cast_slots[] = {
    {NPY_METH_resolve_descriptors, (void *)&cast_resolve},
    {NPY_METH_get_loop, (void *)&cast_get_loop},
    {0, NULL}
};

static PyArrayMethod_Spec *new_cast_spec(PyArray_DTypeMeta *from, PyArray_DTypeMeta *to)
{
    PyArrayMethod_Spec *s = PyMem_Calloc(1, sizeof(PyArrayMethod_Spec));
    PyArray_DTypeMeta **dt = PyMem_Calloc(2, sizeof(PyArray_DTypeMeta *));
    s->name = "softfp8_cast";
    s->nin = 1;
    s->nout = 1;
    s->casting = NPY_UNSAFE_CASTING;
    s->flags = NPY_METH_SUPPORTS_UNALIGNED;
    dt[0] = from;
    dt[1] = to;
    s->dtypes = dt;
    s->slots = cast_slots;
    return s;
}

/* make_dtype(name, scalar_type, parametric, float_rank) -> DType class */
PyObject *sfp8_make_dtype(PyObject *name, PyObject *scalar_type, int parametric, int float_rank)
{
    PyArray_DTypeMeta *cls;
    PyTypeObject *t;
    PyArrayMethod_Spec **casts;
    int k = 0, fam;
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
    sprintf(tp_name, "softfp8.%s", cname);
    cls = PyMem_Calloc(1, sizeof(PyArray_DTypeMeta));
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

    casts = PyMem_Calloc((size_t)(2 * (n_builtin_partners + fam) + 4), sizeof(PyArrayMethod_Spec *));
    casts[k++] = new_cast_spec(NULL, NULL);
    for (int i = 0; i < 2; i++) {
        PyArrayMethod_Spec *sc = new_cast_spec(i ? &PyArray_BytesDType : &PyArray_UnicodeDType, NULL);
        sc->flags = NPY_METH_REQUIRES_PYAPI | NPY_METH_SUPPORTS_UNALIGNED;
        sc->slots = string_cast_slots;
        casts[k++] = sc;
    }
    for (int i = 0; i < n_builtin_partners; i++) {
        casts[k++] = new_cast_spec(NULL, builtin_cast_partners[i]);
        casts[k++] = new_cast_spec(builtin_cast_partners[i], NULL);
    }
    for (int i = 0; i < fam; i++) {
        casts[k++] = new_cast_spec(NULL, families[i].cls);
        casts[k++] = new_cast_spec(families[i].cls, NULL);
    }
    casts[k] = NULL;

    {
        PyType_Slot slots[] = {
            {NPY_DT_discover_descr_from_pyobject, (void *)&discover_descr},
            {_NPY_DT_is_known_scalar_type, (void *)&is_known_scalar_type},
            {NPY_DT_default_descr, (void *)&default_descr},
            {NPY_DT_common_dtype, (void *)&common_dtype},
            {NPY_DT_common_instance, (void *)&common_instance},
            {NPY_DT_ensure_canonical, (void *)&ensure_canonical},
            {NPY_DT_setitem, (void *)&sfp8_setitem},
            {NPY_DT_getitem, (void *)&sfp8_getitem},
            {NPY_DT_PyArray_ArrFuncs_compare, (void *)&arr_compare},
            {NPY_DT_PyArray_ArrFuncs_argmax, (void *)&arr_argmax},
            {NPY_DT_PyArray_ArrFuncs_argmin, (void *)&arr_argmin},
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

int sfp8_set_hooks(PyObject *getter, PyObject *factory, PyObject *contains_fn)
{
    Py_XINCREF(getter);
    Py_XSETREF(state_getter, getter);
    Py_XINCREF(factory);
    Py_XSETREF(descr_factory, factory);
    Py_XINCREF(contains_fn);
    Py_XSETREF(contains_func, contains_fn);
    return 0;
}

/* ======================================================================== */
/* Scalars                                                                   */
/* ======================================================================== */

static void scalar_dealloc(ScalarObject *s)
{
    Py_XDECREF(s->descr);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *scalar_get_code(ScalarObject *s, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLong(s->code);
}

static PyObject *scalar_get_dtype(ScalarObject *s, void *c)
{
    (void)c;
    Py_INCREF(s->descr);
    return s->descr;
}

static PyGetSetDef scalar_getset[] = {
    {"code", (getter)scalar_get_code, NULL, "the encoding", NULL},
    {"dtype", (getter)scalar_get_dtype, NULL, "the softfp8 dtype", NULL},
    {NULL}
};

/* ScalarBase.__new__(cls, value, dtype) -- dtype must be a descriptor of cls's family */
static PyObject *scalar_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    PyObject *value, *descr;
    static char *kwlist[] = {"value", "dtype", NULL};
    uint32_t code;
    ScalarObject *s;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO", kwlist, &value, &descr)) return NULL;
    if (!PyArray_DescrCheck(descr) || !is_sfp8_descr((PyArray_Descr *)descr) ||
        !PyType_IsSubtype(cls, families[family_of(NPY_DTYPE(descr))].scalar_type)) {
        PyErr_Format(PyExc_TypeError, "dtype %R does not belong to scalar type %s", descr, cls->tp_name);
        return NULL;
    }
    if (object_to_code((PyArray_Descr *)descr, value, &code) < 0) return NULL;
    s = (ScalarObject *)cls->tp_alloc(cls, 0);
    if (!s) return NULL;
    s->code = code;
    s->descr = descr;
    Py_INCREF(descr);
    return (PyObject *)s;
}

static PyObject *scalar_from_code(PyObject *unused, PyObject *args)
{
    PyObject *descr;
    unsigned long code;
    (void)unused;
    if (!PyArg_ParseTuple(args, "Ok", &descr, &code)) return NULL;
    if (!PyArray_DescrCheck(descr) || !is_sfp8_descr((PyArray_Descr *)descr)) {
        PyErr_SetString(PyExc_TypeError, "not a softfp8 dtype");
        return NULL;
    }
    return make_scalar((PyArray_Descr *)descr, (uint32_t)code);
}

static PyTypeObject ScalarBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "softfp8._ext.ScalarBase",
    .tp_basicsize = sizeof(ScalarObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = scalar_new,
    .tp_dealloc = (destructor)scalar_dealloc,
    .tp_getset = scalar_getset,
};

/* ======================================================================== */
/* Ufunc loops                                                               */
/* ======================================================================== */

static NPY_CASTING ufunc_resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
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
    static NPY_CASTING name(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],          \
                            PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *vo)     \
    {                                                                                              \
        return ufunc_resolve(self, dtypes, given, loop, vo, nin, nout, boolout);                   \
    }
RESOLVER(resolve_1_1, 1, 1, 0)
RESOLVER(resolve_1_b, 1, 1, 1)
RESOLVER(resolve_2_1, 2, 1, 0)
RESOLVER(resolve_2_b, 2, 1, 1)
RESOLVER(resolve_3_1, 3, 1, 0)

/* operation ids: enum sfp8x_op (ops.h) */

typedef struct {
    LoopData ld;
    sfp8_format f;
} UfuncData;

static NpyAuxData *ufuncdata_clone(NpyAuxData *p)
{
    UfuncData *d = PyMem_Malloc(sizeof(UfuncData));
    if (!d) return NULL;
    memcpy(d, p, sizeof(UfuncData));
    Py_XINCREF(d->ld.cell);
    d->ld.flags = d->ld.cell ? &((FlagCellObject *)d->ld.cell)->flags : NULL;
    return (NpyAuxData *)d;
}

/* Exact superaccumulator for reductions of add: every finite value of a
 * storage format is a multiple of 2^qmin; limbs hold a two's complement sum. */
#define ACC_LIMBS 10
typedef struct {
    uint64_t limb[ACC_LIMBS];
    int64_t qmin;
    int ok;
    int nan, snan, pinf, ninf, nonzero, pos_zero, neg_zero;
    uint32_t nan_code, inf_code;
} SuperAcc;

/* products: 2 (sums of products of two values), else 1 */
static void acc_init_k(SuperAcc *a, const sfp8_format *f, int k)
{
    int64_t qmin = (int64_t)-f->bias - f->man_bits; /* <= the smallest quantum of either convention */
    int64_t top = ((int64_t)1 << f->exp_bits) - f->bias + 1;    /* > exponent of max */
    memset(a, 0, sizeof(*a));
    a->qmin = k * qmin;
    /* value bits + 64 bits of count headroom must fit; values must be exact doubles */
    a->ok = (k * (top - qmin) + 64 <= 64 * ACC_LIMBS - 2) && qmin >= -1074 && top <= 1023;
}

static void acc_init(SuperAcc *a, const sfp8_format *f) { acc_init_k(a, f, 1); }

/* exact (sig, exp) of a finite non-zero code; 0 for zero; -1 NaN; -2 inf */
static int decode_exact(const sfp8_format *f, uint32_t code, uint64_t *sig, int64_t *exp, int *neg,
                        uint8_t *flags)
{
    int cls = sfp8_classify(f, code);
    uint8_t fl = 0;
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
    uint64_t b;
    int64_t ef;
    *neg = sfp8_signbit(f, code);
    if (cls == SFP8_CLASS_SUBNORMAL) *flags |= SFP8_FLAG_DENORMAL;
    if (cls == SFP8_CLASS_QNAN || cls == SFP8_CLASS_SNAN) return -1;
    if (cls == SFP8_CLASS_INF) return -2;
    if (cls == SFP8_CLASS_ZERO || (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH))
        return 0;
    b = sfp8_convert(f, &sfp8_binary64, code, &env, &fl);
    ef = (int64_t)((b >> 52) & 0x7FF);
    *sig = b & (((uint64_t)1 << 52) - 1);
    if (ef) *sig |= (uint64_t)1 << 52;
    else ef = 1;
    *exp = ef - 1075;
    {
        int tz = __builtin_ctzll(*sig);
        *sig >>= tz;
        *exp += tz;
    }
    return 1;
}

static void acc_add_mag(SuperAcc *a, uint64_t sig, int64_t pos, int neg)
{
    int64_t w = pos / 64, b = pos % 64;
    unsigned __int128 v = (unsigned __int128)sig << b;
    uint64_t part[2] = {(uint64_t)v, (uint64_t)(v >> 64)};
    if (!neg) {
        unsigned __int128 c = 0;
        for (int64_t i = w; i < ACC_LIMBS; i++) {
            uint64_t add = (i - w < 2) ? part[i - w] : 0;
            c += (unsigned __int128)a->limb[i] + add;
            a->limb[i] = (uint64_t)c;
            c >>= 64;
            if (i > w && c == 0) break;
        }
    } else {
        uint64_t borrow = 0;
        for (int64_t i = w; i < ACC_LIMBS; i++) {
            uint64_t sub = (i - w < 2) ? part[i - w] : 0;
            uint64_t x = a->limb[i];
            uint64_t r = x - sub - borrow;
            borrow = (x < sub) || (x - sub < borrow);
            a->limb[i] = r;
            if (i > w && borrow == 0) break;
        }
    }
}

static void acc_add_value(SuperAcc *a, const sfp8_format *f, uint32_t code, uint8_t *flags)
{
    int cls = sfp8_classify(f, code);
    int neg = sfp8_signbit(f, code);
    uint8_t fl = 0;
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
    uint64_t b, sig;
    int64_t ef, exp;
    if (cls == SFP8_CLASS_SUBNORMAL) *flags |= SFP8_FLAG_DENORMAL;
    if (cls == SFP8_CLASS_QNAN || cls == SFP8_CLASS_SNAN) {
        if (!a->nan) a->nan_code = code;
        a->nan = 1;
        if (cls == SFP8_CLASS_SNAN) a->snan = 1;
        return;
    }
    if (cls == SFP8_CLASS_INF) {
        if (neg) a->ninf = 1;
        else a->pinf = 1;
        a->inf_code = code;
        return;
    }
    if (cls == SFP8_CLASS_ZERO || (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH)) {
        if (neg) a->neg_zero = 1;
        else a->pos_zero = 1;
        return;
    }
    a->nonzero = 1;
    b = sfp8_convert(f, &sfp8_binary64, code, &env, &fl); /* exact: acc_init checked the range */
    ef = (int64_t)((b >> 52) & 0x7FF);
    sig = b & (((uint64_t)1 << 52) - 1);
    if (ef) sig |= (uint64_t)1 << 52;
    else ef = 1;
    exp = ef - 1075;
    {
        int tz = __builtin_ctzll(sig); /* sig != 0 */
        sig >>= tz;
        exp += tz;
    }
    acc_add_mag(a, sig, exp - a->qmin, neg);
}

/* round the finite exact sum into outf (any descriptor) */
static uint64_t acc_round_finite(SuperAcc *a, const sfp8_format *outf, const sfp8_env *env, uint8_t *flags)
{
    uint64_t mag[ACC_LIMBS], sig;
    int neg = (int)(a->limb[ACC_LIMBS - 1] >> 63);
    int top = -1, sticky = 0;
    int64_t exp;
    memcpy(mag, a->limb, sizeof(mag));
    if (neg) {
        unsigned __int128 c = 1;
        for (int i = 0; i < ACC_LIMBS; i++) {
            c += (uint64_t)~mag[i];
            mag[i] = (uint64_t)c;
            c >>= 64;
        }
    }
    for (int i = ACC_LIMBS - 1; i >= 0; i--)
        if (mag[i]) {
            top = i;
            break;
        }
    if (top < 0) {
        /* exact zero: -0 only if every term was -0 (or by downward cancellation) */
        int zneg = a->nonzero || a->pos_zero ? env->rounding == SFP8_ROUND_DOWNWARD : a->neg_zero;
        return sfp8_round_value(outf, zneg, 0, 0, 0, env, flags);
    }
    {
        int msb = 63 - __builtin_clzll(mag[top]);
        int64_t lead = (int64_t)top * 64 + msb;
        int64_t low = lead - 63;
        if (low <= 0) {
            sig = mag[0];
            exp = a->qmin;
        } else {
            int64_t w = low / 64, b = low % 64;
            sig = mag[w] >> b;
            if (b && w + 1 < ACC_LIMBS) sig |= mag[w + 1] << (64 - b);
            for (int64_t i = 0; i < w; i++) sticky |= mag[i] != 0;
            if (b) sticky |= (mag[w] & ((((uint64_t)1) << b) - 1)) != 0;
            exp = a->qmin + low;
        }
    }
    return sfp8_round_value(outf, neg, sig, exp, sticky, env, flags);
}

static uint32_t acc_round(SuperAcc *a, const sfp8_format *f, const sfp8_env *env, uint8_t *flags)
{
    if (a->nan) {
        if (a->snan) *flags |= SFP8_FLAG_INVALID;
        return sfp8_add(f, a->nan_code, a->nan_code, env, flags);
    }
    if (a->pinf && a->ninf) {
        *flags |= SFP8_FLAG_INVALID;
        return sfp8_default_nan(f);
    }
    if (a->pinf || a->ninf) return sfp8_add(f, a->inf_code, a->inf_code, env, flags);
    return (uint32_t)acc_round_finite(a, f, env, flags);
}

/* exact sum of an 8-bit array through the fast table; 0 if not covered */
static int fast_sum(const sfp8_format *f, const char *b, npy_intp sb, npy_intp n, SuperAcc *sa, uint8_t *fl)
{
    const sfp8f_sum *t = sfp8f_sum_table(f, n);
    __int128 total = 0;
    unsigned cats = 0, fls;
    unsigned __int128 mag;
    if (!t) return 0;
    fls = sfp8f_run_sum(t, b, sb, n, &total, &cats);
    if (cats & SFP8F_SUM_SPECIAL) return 0;
    *fl |= (uint8_t)fls;
    if (cats & SFP8F_SUM_NONZERO) sa->nonzero = 1;
    if (cats & SFP8F_SUM_POSZERO) sa->pos_zero = 1;
    if (cats & SFP8F_SUM_NEGZERO) sa->neg_zero = 1;
    mag = total < 0 ? (unsigned __int128)0 - (unsigned __int128)total : (unsigned __int128)total;
    if ((uint64_t)mag) acc_add_mag(sa, (uint64_t)mag, 0, total < 0);
    if ((uint64_t)(mag >> 64)) acc_add_mag(sa, (uint64_t)(mag >> 64), 64, total < 0);
    return 1;
}

static inline int bool_result(int op)
{
    return (op >= X_EQ && op <= X_GE) || (op >= X_ISNAN && op <= X_SIGNBIT);
}

static int generic_loop(int op, PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                        npy_intp const strides[], NpyAuxData *auxdata)
{
    UfuncData *u = (UfuncData *)auxdata;
    LoopData *ld = &u->ld;
    const sfp8_format *f = &u->f;
    int sz = f->bits <= 8 ? 1 : 2;
    npy_intp n = dimensions[0];
    unsigned int acc = 0;
    sfp8_env env;
    (void)context;
    loop_env_for(ld, f, &env);
    if (X_IS_BINARY(op)) {
        char *a = data[0], *b = data[1], *o = data[2];
        /* reduction of add: exact accumulation, one rounding per inner loop */
        if (op == X_ADD && a == o && strides[0] == 0 && strides[2] == 0 && n > 1) {
            SuperAcc sa;
            acc_init(&sa, f);
            if (sa.ok) {
                uint8_t fl = 0;
                acc_add_value(&sa, f, load_code(a, sz), &fl);
                /* fast_sum leaves sa and fl alone when it declines */
                if (sz != 1 || !fast_sum(f, b, strides[1], n, &sa, &fl))
                    for (npy_intp i = 0; i < n; i++, b += strides[1]) acc_add_value(&sa, f, load_code(b, sz), &fl);
                if (ld->stoch) env.random = loop_random(ld);
                store_code(o, sz, acc_round(&sa, f, &env, &fl));
                loop_publish(ld, fl);
                return 0;
            }
        }
        if (sz == 1) {
            const uint16_t *tab = sfp8f_binary8(op, f, &env, n);
            if (tab) {
                loop_publish(ld, sfp8f_run_binary8(tab, a, strides[0], b, strides[1], o, strides[2], n, NULL));
                return 0;
            }
        } else if (op == X_ADD || op == X_SUB || op == X_MUL) {
            const sfp8f_a16 *t16 = sfp8f_arith16(f, &env, n);
            if (t16) {
                loop_publish(ld, sfp8f_run_arith16(t16, op, f, &env, a, strides[0], b, strides[1], o, strides[2], n,
                                                   NULL));
                return 0;
            }
        }
        if (bool_result(op)) {
            for (npy_intp i = 0; i < n; i++, a += strides[0], b += strides[1], o += strides[2]) {
                uint8_t fl = 0;
                *(npy_bool *)o = (npy_bool)sfp8x_binary(op, f, load_code(a, sz), load_code(b, sz), &env, &fl);
                acc |= fl;
            }
        } else {
            for (npy_intp i = 0; i < n; i++, a += strides[0], b += strides[1], o += strides[2]) {
                uint8_t fl = 0;
                if (ld->stoch) env.random = loop_random(ld);
                store_code(o, sz, sfp8x_binary(op, f, load_code(a, sz), load_code(b, sz), &env, &fl));
                acc |= fl;
            }
        }
    } else if (X_IS_UNARY(op)) {
        char *a = data[0], *o = data[1];
        int osz = bool_result(op) ? 1 : sz;
        const sfp8f_un *tab = sfp8f_unary(op, f, &env, n);
        if (tab) {
            loop_publish(ld, sfp8f_run_unary(tab, a, strides[0], sz, o, strides[1], osz, n, NULL));
            return 0;
        }
        for (npy_intp i = 0; i < n; i++, a += strides[0], o += strides[1]) {
            uint8_t fl = 0;
            uint32_t r;
            if (ld->stoch) env.random = loop_random(ld);
            r = sfp8x_unary(op, f, load_code(a, sz), &env, &fl);
            if (osz == 1 && bool_result(op)) *(npy_bool *)o = (npy_bool)r;
            else store_code(o, sz, r);
            acc |= fl;
        }
    } else if (op == X_FMA) {
        char *a = data[0], *b = data[1], *c = data[2], *o = data[3];
        const sfp8f_fma *t = sz == 1 ? sfp8f_fma_table(f, &env, n) : NULL;
        if (t) {
            loop_publish(ld, sfp8f_run_fma(t, f, &env, a, strides[0], b, strides[1], c, strides[2], o, strides[3], n,
                                           NULL));
            return 0;
        }
        for (npy_intp i = 0; i < n; i++, a += strides[0], b += strides[1], c += strides[2], o += strides[3]) {
            uint8_t fl = 0;
            if (ld->stoch) env.random = loop_random(ld);
            store_code(o, sz, sfp8_fma(f, load_code(a, sz), load_code(b, sz), load_code(c, sz), &env, &fl));
            acc |= fl;
        }
    }
    loop_publish(ld, acc);
    return 0;
}

static int make_ufunc_data(PyArrayMethod_Context *context, NpyAuxData **out)
{
    LoopData *ld = loopdata_new();
    UfuncData *u;
    if (!ld) return -1;
    u = PyMem_Calloc(1, sizeof(UfuncData));
    if (!u) {
        loopdata_free((NpyAuxData *)ld);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(&u->ld, ld, sizeof(LoopData));
    PyMem_Free(ld);
    u->ld.flags = &((FlagCellObject *)u->ld.cell)->flags;
    u->ld.base.clone = ufuncdata_clone;
    u->f = *descr_fmt(context->descriptors[0]);
    *out = (NpyAuxData *)u;
    return 0;
}

#define DEFINE_OP(opname, OPID)                                                                      \
    static int loop_##opname(PyArrayMethod_Context *c, char *const d[], npy_intp const n[],         \
                             npy_intp const s[], NpyAuxData *a)                                     \
    {                                                                                                \
        return generic_loop(OPID, c, d, n, s, a);                                                    \
    }                                                                                                \
    static int get_loop_##opname(PyArrayMethod_Context *context, int aligned, int move_references,  \
                                 const npy_intp *strides, PyArrayMethod_StridedLoop **out_loop,      \
                                 NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags)         \
    {                                                                                                \
        (void)aligned;                                                                               \
        (void)move_references;                                                                       \
        (void)strides;                                                                               \
        if (make_ufunc_data(context, out_transferdata) < 0) return -1;                               \
        *out_loop = loop_##opname;                                                                   \
        *flags = 0;                                                                                  \
        return 0;                                                                                    \
    }

DEFINE_OP(add, X_ADD)
DEFINE_OP(sub, X_SUB)
DEFINE_OP(mul, X_MUL)
DEFINE_OP(div, X_DIV)
DEFINE_OP(floordiv, X_FLOORDIV)
DEFINE_OP(rem, X_REM)
DEFINE_OP(max, X_MAX)
DEFINE_OP(min, X_MIN)
DEFINE_OP(fmax, X_FMAX)
DEFINE_OP(fmin, X_FMIN)
DEFINE_OP(copysign, X_COPYSIGN)
DEFINE_OP(nextafter, X_NEXTAFTER)
DEFINE_OP(eq, X_EQ)
DEFINE_OP(ne, X_NE)
DEFINE_OP(lt, X_LT)
DEFINE_OP(le, X_LE)
DEFINE_OP(gt, X_GT)
DEFINE_OP(ge, X_GE)
DEFINE_OP(neg, X_NEG)
DEFINE_OP(pos, X_POS)
DEFINE_OP(abs, X_ABS)
DEFINE_OP(sqrt, X_SQRT)
DEFINE_OP(square, X_SQUARE)
DEFINE_OP(recip, X_RECIP)
DEFINE_OP(sign, X_SIGN)
DEFINE_OP(floor, X_FLOOR)
DEFINE_OP(ceil, X_CEIL)
DEFINE_OP(trunc, X_TRUNC)
DEFINE_OP(rint, X_RINT)
DEFINE_OP(spacing, X_SPACING)
DEFINE_OP(isnan, X_ISNAN)
DEFINE_OP(isinf, X_ISINF)
DEFINE_OP(isfinite, X_ISFINITE)
DEFINE_OP(signbit, X_SIGNBIT)
DEFINE_OP(fma, X_FMA)

static int add_initial(PyArrayMethod_Context *context, npy_bool reduction_is_empty, void *initial)
{
    const sfp8_format *f = descr_fmt(context->descriptors[0]);
    uint8_t fl = 0;
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 1, 0, 32, 0};
    uint32_t z = sfp8_from_int64(f, 0, &env, &fl);
    if (!reduction_is_empty) z = sfp8_neg(f, z); /* -0 is the identity (fnuz/unsigned keep +0) */
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

typedef struct {
    const char *ufunc;
    int nin, nout, boolout;
    PyArrayMethod_GetLoop *get_loop;
    PyArrayMethod_GetReductionInitial *initial;
    int reorderable;
} UfuncDef;

static const UfuncDef ufunc_defs[] = {
    {"add", 2, 1, 0, get_loop_add, add_initial, 1},
    {"subtract", 2, 1, 0, get_loop_sub, NULL},
    {"multiply", 2, 1, 0, get_loop_mul, mul_initial, 1},
    {"true_divide", 2, 1, 0, get_loop_div, NULL},
    {"floor_divide", 2, 1, 0, get_loop_floordiv, NULL},
    {"remainder", 2, 1, 0, get_loop_rem, NULL},
    {"maximum", 2, 1, 0, get_loop_max, NULL, 1},
    {"minimum", 2, 1, 0, get_loop_min, NULL, 1},
    {"fmax", 2, 1, 0, get_loop_fmax, NULL, 1},
    {"fmin", 2, 1, 0, get_loop_fmin, NULL, 1},
    {"copysign", 2, 1, 0, get_loop_copysign, NULL},
    {"nextafter", 2, 1, 0, get_loop_nextafter, NULL},
    {"equal", 2, 1, 1, get_loop_eq, NULL},
    {"not_equal", 2, 1, 1, get_loop_ne, NULL},
    {"less", 2, 1, 1, get_loop_lt, NULL},
    {"less_equal", 2, 1, 1, get_loop_le, NULL},
    {"greater", 2, 1, 1, get_loop_gt, NULL},
    {"greater_equal", 2, 1, 1, get_loop_ge, NULL},
    {"negative", 1, 1, 0, get_loop_neg, NULL},
    {"positive", 1, 1, 0, get_loop_pos, NULL},
    {"absolute", 1, 1, 0, get_loop_abs, NULL},
    {"sqrt", 1, 1, 0, get_loop_sqrt, NULL},
    {"square", 1, 1, 0, get_loop_square, NULL},
    {"reciprocal", 1, 1, 0, get_loop_recip, NULL},
    {"sign", 1, 1, 0, get_loop_sign, NULL},
    {"floor", 1, 1, 0, get_loop_floor, NULL},
    {"ceil", 1, 1, 0, get_loop_ceil, NULL},
    {"trunc", 1, 1, 0, get_loop_trunc, NULL},
    {"rint", 1, 1, 0, get_loop_rint, NULL},
    {"spacing", 1, 1, 0, get_loop_spacing, NULL},
    {"isnan", 1, 1, 1, get_loop_isnan, NULL},
    {"isinf", 1, 1, 1, get_loop_isinf, NULL},
    {"isfinite", 1, 1, 1, get_loop_isfinite, NULL},
    {"signbit", 1, 1, 1, get_loop_signbit, NULL},
    {NULL, 0, 0, 0, NULL, NULL, 0}
};

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

static int add_promoter(PyObject *ufunc, PyObject *const items[], int nargs)
{
    PyObject *capsule = PyCapsule_New((void *)&sfp8_promoter, "numpy._ufunc_promoter", NULL);
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

static int add_loop(PyObject *ufunc, PyArray_DTypeMeta *cls, const UfuncDef *def)
{
    PyArray_DTypeMeta *dtypes[4];
    int nargs = def->nin + def->nout;
    PyArrayMethod_ResolveDescriptors *res;
    if (def->nin == 1) res = def->boolout ? resolve_1_b : resolve_1_1;
    else if (def->nin == 2) res = def->boolout ? resolve_2_b : resolve_2_1;
    else res = resolve_3_1;
    for (int i = 0; i < nargs; i++) dtypes[i] = cls;
    if (def->boolout) dtypes[nargs - 1] = &PyArray_BoolDType;
    PyType_Slot slots[] = {
        {NPY_METH_resolve_descriptors, (void *)res},
        {NPY_METH_get_loop, (void *)def->get_loop},
        {def->initial ? NPY_METH_get_reduction_initial : 0, (void *)def->initial},
        {0, NULL}
    };
    PyArrayMethod_Spec spec = {
        .name = def->ufunc,
        .nin = def->nin,
        .nout = def->nout,
        .casting = NPY_NO_CASTING,
        .flags = NPY_METH_SUPPORTS_UNALIGNED | (def->reorderable ? NPY_METH_IS_REORDERABLE : 0),
        .dtypes = dtypes,
        .slots = slots,
    };
    if (PyUFunc_AddLoopFromSpec(ufunc, &spec) < 0) return -1;
    if (def->nin == 2) {
        /* promoters: (D, any) and (X, D) for every non-softfp8 partner X (NumPy
           numeric DTypes and Python int/float); never two wildcard patterns that
           could match one call equally well */
        PyObject *out = def->boolout ? (PyObject *)&PyArray_BoolDType : Py_None;
        PyObject *items[3] = {(PyObject *)cls, Py_None, out};
        if (add_promoter(ufunc, items, 3) < 0) return -1;
        items[1] = (PyObject *)cls;
        for (int j = 0; j < n_builtin_partners + 2; j++) {
            items[0] = j < n_builtin_partners ? (PyObject *)builtin_cast_partners[j]
                       : j == n_builtin_partners ? (PyObject *)&PyArray_PyFloatDType
                                                 : (PyObject *)&PyArray_PyLongDType;
            if (add_promoter(ufunc, items, 3) < 0) return -1;
        }
    }
    return 0;
}

/* ---- matmul: exact dot products, one rounding per output element ---- */

typedef struct {
    LoopData ld;
    sfp8_format f;
    int out_kind; /* 0: the input format, 1: float32, 2: float64 */
    int blas;     /* the loop may take the binary64 BLAS path (holds the GIL) */
} MatmulData;

static PyObject *np_matmul_fn = NULL; /* numpy.matmul, for the binary64 path */

static NpyAuxData *matmuldata_clone(NpyAuxData *p)
{
    MatmulData *d = PyMem_Malloc(sizeof(MatmulData));
    if (!d) return NULL;
    memcpy(d, p, sizeof(MatmulData));
    Py_XINCREF(d->ld.cell);
    d->ld.flags = d->ld.cell ? &((FlagCellObject *)d->ld.cell)->flags : NULL;
    return (NpyAuxData *)d;
}

static void acc_add_product(SuperAcc *sa, const sfp8_format *f, uint32_t x, uint32_t y, uint8_t *fl)
{
    uint64_t gx = 0, gy = 0;
    int64_t ex = 0, ey = 0;
    int nx, ny;
    int cx = decode_exact(f, x, &gx, &ex, &nx, fl), cy = decode_exact(f, y, &gy, &ey, &ny, fl);
    if (cx == -1 || cy == -1) {
        uint32_t c = cx == -1 ? x : y;
        if (!sa->nan) sa->nan_code = c;
        sa->nan = 1;
        if (sfp8_classify(f, x) == SFP8_CLASS_SNAN || sfp8_classify(f, y) == SFP8_CLASS_SNAN) sa->snan = 1;
        return;
    }
    if (cx == -2 || cy == -2) {
        if (cx == 0 || cy == 0) {
            if (!sa->nan) sa->nan_code = sfp8_default_nan(f);
            sa->nan = 1;
            *fl |= SFP8_FLAG_INVALID;
            return;
        }
        if (nx ^ ny) sa->ninf = 1;
        else sa->pinf = 1;
        sa->inf_code = sfp8_copysign(f, cx == -2 ? x : y, (nx ^ ny) ? sfp8_neg(f, 0) | ((uint32_t)1 << (f->bits - 1)) : 0);
        return;
    }
    if (cx == 0 || cy == 0) {
        if (nx ^ ny) sa->neg_zero = 1;
        else sa->pos_zero = 1;
        return;
    }
    sa->nonzero = 1;
    acc_add_mag(sa, gx * gy, ex + ey - sa->qmin, nx ^ ny);
}

static uint64_t acc_round_float(SuperAcc *sa, const sfp8_format *outf, const sfp8_env *env,
                                uint8_t *flags)
{
    uint64_t one = 1, sign = one << (outf->bits - 1), inf = ((one << outf->exp_bits) - 1) << outf->man_bits;
    if (sa->nan || (sa->pinf && sa->ninf)) {
        if (sa->snan || (sa->pinf && sa->ninf)) *flags |= SFP8_FLAG_INVALID;
        return inf | (one << (outf->man_bits - 1));
    }
    if (sa->pinf) return inf;
    if (sa->ninf) return inf | sign;
    return acc_round_finite(sa, outf, env, flags);
}

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
                  acc_round_float(&sa, md->out_kind == 1 ? &sfp8_binary32 : &sfp8_binary64, env, fl));
}

/* Exact products and sums in binary64 through BLAS: every code is v * 2^qmin
 * with |v| < 2^vbits, so n * 2^(2 vbits) <= 2^53 keeps every partial sum an
 * exact binary64 in any order.  Returns 1 when done, 0 to take the exact
 * accumulator instead, -1 on a Python error. */
static int matmul_blas(MatmulData *md, const sfp8_env *env, char *A, char *B, char *O, npy_intp m, npy_intp n,
                       npy_intp p, npy_intp am, npy_intp an, npy_intp bn, npy_intp bp, npy_intp om, npy_intp op,
                       unsigned *accf)
{
    const sfp8_format *f = &md->f;
    const sfp8f_sum *st = sfp8f_sum_table(f, m * n + n * p);
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
    if (!md->blas || !st || m == 0 || n == 0 || p == 0) return 0;
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

static int matmul_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                       npy_intp const strides[], NpyAuxData *auxdata)
{
    MatmulData *md = (MatmulData *)auxdata;
    const sfp8_format *f = &md->f;
    npy_intp N = dimensions[0], m = dimensions[1], n = dimensions[2], p = dimensions[3];
    npy_intp am = strides[3], an = strides[4], bn = strides[5], bp = strides[6], om = strides[7], op = strides[8];
    unsigned int accf = 0;
    sfp8_env env;
    (void)context;
    loop_env_for(&md->ld, f, &env);
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

static int matmul_get_loop(PyArrayMethod_Context *context, int aligned, int move_references,
                           const npy_intp *strides, PyArrayMethod_StridedLoop **out_loop,
                           NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags)
{
    LoopData *ld;
    MatmulData *md;
    SuperAcc probe;
    (void)aligned;
    (void)move_references;
    (void)strides;
    acc_init_k(&probe, descr_fmt(context->descriptors[0]), 2);
    if (!probe.ok) {
        PyErr_SetString(PyExc_TypeError, "softfp8 matmul: the format's exponent range is too wide "
                                         "for the exact accumulator; convert to float64 first");
        return -1;
    }
    ld = loopdata_new();
    if (!ld) return -1;
    md = PyMem_Calloc(1, sizeof(MatmulData));
    if (!md) {
        loopdata_free((NpyAuxData *)ld);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(&md->ld, ld, sizeof(LoopData));
    PyMem_Free(ld);
    md->ld.flags = &((FlagCellObject *)md->ld.cell)->flags;
    md->ld.base.clone = matmuldata_clone;
    md->f = *descr_fmt(context->descriptors[0]);
    switch (context->descriptors[2]->type_num) {
    case NPY_FLOAT: md->out_kind = 1; break;
    case NPY_DOUBLE: md->out_kind = 2; break;
    default: md->out_kind = 0; break;
    }
    /* the binary64 BLAS path calls numpy.matmul: the loop then holds the GIL */
    md->blas = np_matmul_fn && sfp8f_enabled() && !md->ld.stoch && md->f.bits <= 8;
    *out_loop = matmul_loop;
    *out_transferdata = (NpyAuxData *)md;
    *flags = md->blas ? NPY_METH_REQUIRES_PYAPI : 0;
    return 0;
}

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

static int add_matmul_loops(PyObject *numpy_module, PyArray_DTypeMeta *cls)
{
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

PyObject *sfp8_register_ufuncs(PyObject *dtype_cls, PyObject *numpy_module, PyObject *fma_ufunc)
{
    PyArray_DTypeMeta *cls = (PyArray_DTypeMeta *)dtype_cls;
    if (family_of(cls) < 0) {
        PyErr_SetString(PyExc_TypeError, "not a softfp8 DType");
        return NULL;
    }
    for (const UfuncDef *def = ufunc_defs; def->ufunc; def++) {
        PyObject *uf = PyObject_GetAttrString(numpy_module, def->ufunc);
        if (!uf) return NULL;
        if (add_loop(uf, cls, def) < 0) {
            Py_DECREF(uf);
            return NULL;
        }
        Py_DECREF(uf);
    }
    if (fma_ufunc && fma_ufunc != Py_None) {
        UfuncDef d = {"fma", 3, 1, 0, get_loop_fma, NULL, 0};
        PyObject *items[4] = {(PyObject *)cls, Py_None, Py_None, Py_None};
        if (add_loop(fma_ufunc, cls, &d) < 0) return NULL;
        if (add_promoter(fma_ufunc, items, 4) < 0) return NULL;
    }
    if (add_matmul_loops(numpy_module, cls) < 0) return NULL;
    Py_RETURN_NONE;
}

PyObject *sfp8_new_fma_ufunc(void)
{
    return PyUFunc_FromFuncAndData(NULL, NULL, NULL, 0, 3, 1, PyUFunc_None, "fma",
                                   "fma(a, b, c): a*b+c with a single rounding (softfp8 formats)", 0);
}

/* ======================================================================== */
/* Init                                                                      */
/* ======================================================================== */

PyObject *sfp8_npy_init(PyObject *module)
{
    if (PyArray_ImportNumPyAPI() < 0) return NULL;
    if (PyUFunc_ImportUFuncAPI() < 0) return NULL;
    if (PyType_Ready(&FlagCellType) < 0) return NULL;
    if (PyType_Ready(&StateType) < 0) return NULL;
    ScalarBaseType.tp_base = &PyFloatingArrType_Type;
    if (PyType_Ready(&ScalarBaseType) < 0) return NULL;
    init_builtin_partners();
    Py_INCREF(&FlagCellType);
    Py_INCREF(&StateType);
    Py_INCREF(&ScalarBaseType);
    if (PyModule_AddObject(module, "FlagCell", (PyObject *)&FlagCellType) < 0) return NULL;
    if (PyModule_AddObject(module, "State", (PyObject *)&StateType) < 0) return NULL;
    if (PyModule_AddObject(module, "ScalarBase", (PyObject *)&ScalarBaseType) < 0) return NULL;
    {
        static PyMethodDef m = {"scalar_from_code", (PyCFunction)scalar_from_code, METH_VARARGS,
                                "scalar_from_code(dtype, code)"};
        PyObject *fn = PyCFunction_New(&m, NULL);
        if (!fn || PyModule_AddObject(module, "scalar_from_code", fn) < 0) return NULL;
    }
    Py_RETURN_NONE;
}
