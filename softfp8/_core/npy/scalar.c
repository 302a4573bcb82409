/*
 * NumPy glue: the scalar type (softfp8._ext.ScalarBase, the C base of every
 * family's scalar type), conversion of Python objects to codes, and the
 * DType's getitem / setitem.
 */
#include "glue.h"

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

PyObject *sfp8_getitem(PyArray_Descr *descr, char *data)
{
    return make_scalar(descr, load_code(data, (int)descr->elsize));
}

/* Convert a Python object to a code of descr (context rounding). */
int object_to_code(PyArray_Descr *descr, PyObject *obj, uint32_t *out)
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
        ld = loopdata_alloc(sizeof(LoopData));
        if (!ld) return -1;
        loop_env_for(ld, f, &env);
        if (ld->stoch) env.random = loop_random(ld);
        *out = (uint32_t)sfp8_convert(sf, f, s->code, &env, &fl);
    } else if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (v == -1 && PyErr_Occurred()) return -1;
        ld = loopdata_alloc(sizeof(LoopData));
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
        ld = loopdata_alloc(sizeof(LoopData));
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

int sfp8_setitem(PyArray_Descr *descr, PyObject *obj, char *data)
{
    uint32_t code;
    if (object_to_code(descr, obj, &code) < 0) return -1;
    store_code(data, (int)descr->elsize, code);
    return 0;
}

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

/* byteswap(inplace=False): the value whose code has its bytes swapped (as
   np.array([x]).byteswap()[0]; 1-byte codes have no byte order).  NumPy's
   generic scalar byteswap would read the code through legacy routines. */
static PyObject *scalar_byteswap(ScalarObject *s, PyObject *args, PyObject *kwds)
{
    int inplace = 0;
    static char *kwlist[] = {"inplace", NULL};
    PyArray_Descr *d = (PyArray_Descr *)s->descr;
    uint32_t c = s->code;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|p:byteswap", kwlist, &inplace)) return NULL;
    if (inplace) {
        PyErr_SetString(PyExc_ValueError, "cannot byteswap a scalar in-place");
        return NULL;
    }
    if (d->elsize == 2) c = ((c & 0xFF) << 8) | ((c >> 8) & 0xFF);
    return make_scalar(d, c);
}

static PyMethodDef scalar_methods[] = {
    {"byteswap", (PyCFunction)(void (*)(void))scalar_byteswap, METH_VARARGS | METH_KEYWORDS,
     "byteswap(inplace=False): the scalar with the bytes of its code swapped"},
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

PyObject *scalar_from_code(PyObject *unused, PyObject *args)
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

PyTypeObject ScalarBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "softfp8._ext.ScalarBase",
    .tp_basicsize = sizeof(ScalarObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = scalar_new,
    .tp_dealloc = (destructor)scalar_dealloc,
    .tp_getset = scalar_getset,
    .tp_methods = scalar_methods,
};
