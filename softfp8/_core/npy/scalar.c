/*
 * NumPy glue: the scalar type (softfp8._ext.ScalarBase, the C base of every
 * family's scalar type), conversion of Python objects to codes, and the
 * DType's getitem / setitem.
 */
#include "glue.h"

/* numpy.exceptions.ComplexWarning, as NumPy warns when a cast drops imaginary parts */
int sfp8_warn_complex(void)
{
    PyObject *mod = PyImport_ImportModule("numpy.exceptions"), *w;
    int r;
    if (!mod) return -1;
    w = PyObject_GetAttrString(mod, "ComplexWarning");
    Py_DECREF(mod);
    if (!w) return -1;
    r = PyErr_WarnEx(w, "Casting complex values to real discards the imaginary part", 1);
    Py_DECREF(w);
    return r;
}

static PyObject *make_scalar(PyArray_Descr *descr, uint32_t code)
{
    int fam = family_of(NPY_DTYPE(descr));
    PyTypeObject *t = families[fam].scalar_type;
    ScalarObject *s = (ScalarObject *)t->tp_alloc(t, 0);
    if (!s) return NULL;
    s->code = code & sfp8_code_mask(descr_fmt(descr)); /* codes above the width: ignored */
    s->descr = (PyObject *)descr;
    Py_INCREF(descr);
    return (PyObject *)s;
}

PyObject *sfp8_getitem(PyArray_Descr *descr, char *data)
{
    /* codes above the format's width are ignored, as everywhere */
    return make_scalar(descr, load_code(data, (int)descr->elsize));
}

/* ---- Python objects -> codes: every value is read exactly and rounded once ---- */

/* Round sign * num/den (Python ints, num > 0, den > 0) into f: the top 64 bits
   of the quotient and a sticky bit for the rest, exactly. */
static int round_ratio(const sfp8_format *f, int sign, PyObject *num, PyObject *den, const sfp8_env *env,
                       uint8_t *flags, uint32_t *out)
{
    int64_t nb = (int64_t)_PyLong_NumBits(num), db = (int64_t)_PyLong_NumBits(den);
    int64_t s = 63 - (nb - db); /* num/den * 2^s lies in [2^62, 2^64) */
    PyObject *sh, *a, *b, *qr;
    unsigned long long q;
    int sticky;
    if (nb < 0 || db < 0) return -1;
    sh = PyLong_FromLongLong(s >= 0 ? s : -s);
    if (!sh) return -1;
    if (s >= 0) {
        a = PyNumber_Lshift(num, sh);
        b = den;
        Py_INCREF(b);
    } else {
        a = num;
        Py_INCREF(a);
        b = PyNumber_Lshift(den, sh);
    }
    Py_DECREF(sh);
    qr = a && b ? PyNumber_Divmod(a, b) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (!qr) return -1;
    q = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(qr, 0));
    sticky = PyObject_IsTrue(PyTuple_GET_ITEM(qr, 1));
    Py_DECREF(qr);
    if ((q == (unsigned long long)-1 && PyErr_Occurred()) || sticky < 0) return -1;
    *out = (uint32_t)sfp8_round_value(f, sign, q, -s, sticky, env, flags);
    return 0;
}

/* -1, 0, 1 by the sign of a Python int; -2 on error */
static int long_sign(PyObject *v)
{
    PyObject *zero = PyLong_FromLong(0);
    int lt, gt;
    if (!zero) return -2;
    lt = PyObject_RichCompareBool(v, zero, Py_LT);
    gt = PyObject_RichCompareBool(v, zero, Py_GT);
    Py_DECREF(zero);
    if (lt < 0 || gt < 0) return -2;
    return gt - lt;
}

static PyObject *pow10_long(long long k)
{
    PyObject *ten = PyLong_FromLong(10), *e = PyLong_FromLongLong(k), *r;
    r = ten && e ? PyNumber_Power(ten, e, Py_None) : NULL;
    Py_XDECREF(ten);
    Py_XDECREF(e);
    return r;
}

/* The integer of the decimal digits s[0..n) (no length limit). */
static PyObject *long_from_digits(char *s, size_t n)
{
    const size_t chunk = 4000; /* below int()'s default string-length limit */
    PyObject *d = NULL;
    for (size_t i = 0; i < n; i += chunk) {
        size_t m = n - i < chunk ? n - i : chunk;
        char save = s[i + m];
        PyObject *c, *sc, *t;
        s[i + m] = 0;
        c = PyLong_FromString(s + i, NULL, 10);
        s[i + m] = save;
        if (!c) {
            Py_XDECREF(d);
            return NULL;
        }
        if (!d) {
            d = c;
            continue;
        }
        sc = pow10_long((long long)m);
        t = sc ? PyNumber_Multiply(d, sc) : NULL;
        Py_XDECREF(sc);
        Py_DECREF(d);
        d = t ? PyNumber_Add(t, c) : NULL;
        Py_XDECREF(t);
        Py_DECREF(c);
        if (!d) return NULL;
    }
    return d;
}

/* A string float() accepted, read exactly: sign * digits * 10^exp10.
   Returns 0 when it is not an ASCII decimal numeral (inf, nan, non-ASCII
   digits: the caller uses float()'s value), 1 with *num and *den set (num == 0 for
   zeros), 2 for a magnitude beyond 10^DEC_LIMIT, 3 below 10^-DEC_LIMIT,
   -1 on error. */
#define DEC_LIMIT 400000 /* 10^400000 lies beyond every format (|bias| <= 2^20, <= 15 exponent bits) */
static int parse_decimal(PyObject *obj, int *sign, PyObject **num, PyObject **den)
{
    const char *p, *end;
    Py_ssize_t len;
    char *digits;
    size_t nd = 0;
    long long exp10 = 0, e = 0;
    int eneg = 0, frac = 0;
    if (PyBytes_Check(obj)) {
        p = PyBytes_AS_STRING(obj);
        len = PyBytes_GET_SIZE(obj);
    } else {
        if (!PyUnicode_IS_ASCII(obj)) return 0;
        p = PyUnicode_AsUTF8AndSize(obj, &len);
        if (!p) return -1;
    }
    end = p + len;
    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    *sign = 0;
    if (p < end && (*p == '+' || *p == '-')) *sign = *p++ == '-';
    if (p == end || !((*p >= '0' && *p <= '9') || *p == '.')) return 0; /* inf, nan */
    digits = PyMem_Malloc((size_t)(end - p) + 1);
    if (!digits) {
        PyErr_NoMemory();
        return -1;
    }
    for (; p < end && *p != 'e' && *p != 'E'; p++) { /* '_' between digits and spaces: skipped */
        if (*p == '.') {
            frac = 1;
        } else if (*p >= '0' && *p <= '9') {
            if (nd || *p != '0') digits[nd++] = *p;
            if (frac) exp10--;
        }
    }
    if (p < end) p++;
    if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
    for (; p < end; p++)
        if (*p >= '0' && *p <= '9' && e < 1000000000000LL) e = e * 10 + (*p - '0');
    exp10 += eneg ? -e : e;
    while (nd > 0 && digits[nd - 1] == '0') { /* trailing zeros go into the exponent */
        nd--;
        exp10++;
    }
    if (nd && exp10 + (long long)nd > DEC_LIMIT) {
        PyMem_Free(digits);
        return 2;
    }
    if (nd && exp10 + (long long)nd < -DEC_LIMIT) {
        PyMem_Free(digits);
        return 3;
    }
    *num = nd ? long_from_digits(digits, nd) : PyLong_FromLong(0);
    PyMem_Free(digits);
    if (!*num) return -1;
    if (nd && exp10 != 0) {
        PyObject *pw = pow10_long(exp10 >= 0 ? exp10 : -exp10), *t;
        if (!pw) {
            Py_DECREF(*num);
            return -1;
        }
        if (exp10 < 0) {
            *den = pw;
            return 1;
        }
        t = PyNumber_Multiply(*num, pw);
        Py_DECREF(pw);
        Py_DECREF(*num);
        *num = t;
        if (!t) return -1;
    }
    *den = PyLong_FromLong(1);
    if (!*den) {
        Py_DECREF(*num);
        return -1;
    }
    return 1;
}

/* Read obj (anything but a softfp8 scalar) exactly and round it into f once. */
int object_value_to_code(const sfp8_format *f, PyObject *obj, const sfp8_env *env, uint8_t *fl, uint32_t *out,
                         PyObject *fmt_for_errors)
{
    double x;
    uint64_t bits;
    if (PyArray_IsScalar(obj, Integer)) {
        /* NumPy integer scalars, every width: the exact path of Python ints */
        PyObject *v = PyNumber_Index(obj);
        int r = v ? object_value_to_code(f, v, env, fl, out, fmt_for_errors) : -1;
        Py_XDECREF(v);
        return r;
    }
    if (PyArray_IsScalar(obj, LongDouble)) {
        /* read in place: no copy through the FPU */
        *out = ld_to_code(f, &PyArrayScalar_VAL(obj, LongDouble), env, fl);
        return 0;
    }
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        int overflow = 0, sign, r;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        PyObject *mag, *one;
        if (v == -1 && PyErr_Occurred()) return -1;
        if (!overflow) {
            *out = sfp8_from_int64(f, v, env, fl);
            return 0;
        }
        if (overflow > 0) { /* 2^63 <= v < 2^64 (uint64 scalars among them) */
            unsigned long long u = PyLong_AsUnsignedLongLong(obj);
            if (!(u == (unsigned long long)-1 && PyErr_Occurred())) {
                *out = sfp8_from_uint64(f, u, env, fl);
                return 0;
            }
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
            PyErr_Clear();
        }
        sign = overflow < 0; /* |v| >= 2^63 beyond uint64: top 64 bits and a sticky bit */
        mag = PyNumber_Absolute(obj);
        one = PyLong_FromLong(1);
        r = mag && one ? round_ratio(f, sign, mag, one, env, fl, out) : -1;
        Py_XDECREF(mag);
        Py_XDECREF(one);
        return r;
    }
    if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        PyObject *fo = PyFloat_FromString(obj), *num = NULL, *den = NULL; /* float()'s syntax and errors */
        int sign = 0, k, r;
        if (!fo) return -1;
        x = PyFloat_AsDouble(fo);
        Py_DECREF(fo);
        k = parse_decimal(obj, &sign, &num, &den);
        if (k < 0) return -1;
        if (k == 2 || k == 3) {
            *out = (uint32_t)sfp8_round_value(f, sign, 1, k == 2 ? (int64_t)1 << 23 : -((int64_t)1 << 23), 0, env, fl);
            return 0;
        }
        if (k == 1) {
            r = PyObject_IsTrue(num);
            if (r > 0) r = round_ratio(f, sign, num, den, env, fl, out);
            else if (r == 0) *out = (uint32_t)sfp8_round_value(f, sign, 0, 0, 0, env, fl);
            Py_DECREF(num);
            Py_DECREF(den);
            return r < 0 ? -1 : 0;
        }
    } else if (PyArray_IsScalar(obj, ComplexFloating)) {
        /* as np.float16(np.complex128(...)): the real part, exactly, with NumPy's ComplexWarning */
        PyObject *re;
        int r;
        if (sfp8_warn_complex() < 0) return -1;
        re = PyObject_GetAttrString(obj, "real");
        r = re ? object_value_to_code(f, re, env, fl, out, fmt_for_errors) : -1;
        Py_XDECREF(re);
        return r;
    } else if (PyFloat_Check(obj) || PyBool_Check(obj) || PyArray_IsScalar(obj, Number) || PyNumber_Check(obj)) {
        if (PyComplex_Check(obj)) { /* a TypeError, as np.float16(1j) */
            PyErr_Format(PyExc_TypeError, "cannot convert complex %R to softfp8 %S", obj, fmt_for_errors);
            return -1;
        }
        if (!PyFloat_Check(obj) && !PyArray_IsScalar(obj, Generic) &&
            PyObject_HasAttrString(obj, "as_integer_ratio")) {
            /* Fraction, Decimal, ...: their exact ratio (non-finite Decimals and
               zeros, whose sign the ratio loses, through float()) */
            PyObject *pr = PyObject_CallMethod(obj, "as_integer_ratio", NULL);
            if (!pr) {
                if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_OverflowError))
                    return -1;
                PyErr_Clear();
            } else {
                PyObject *num = PyTuple_Check(pr) && PyTuple_GET_SIZE(pr) == 2 ? PyTuple_GET_ITEM(pr, 0) : NULL;
                PyObject *den = num ? PyTuple_GET_ITEM(pr, 1) : NULL;
                int r = 1;
                int ns = num && PyLong_Check(num) && PyLong_Check(den) ? long_sign(num) : 0;
                if (ns == -2 || (ns && long_sign(den) != 1)) { /* an error, or not a ratio with den > 0 */
                    Py_DECREF(pr);
                    if (!PyErr_Occurred())
                        PyErr_Format(PyExc_TypeError, "%R.as_integer_ratio() did not return (int, int > 0)", obj);
                    return -1;
                }
                if (ns) {
                    int sign = ns < 0;
                    PyObject *mag = PyNumber_Absolute(num);
                    r = mag ? round_ratio(f, sign, mag, den, env, fl, out) : -1;
                    Py_XDECREF(mag);
                }
                Py_DECREF(pr);
                if (r <= 0) return r;
            }
        }
        x = PyFloat_AsDouble(obj);
        if (x == -1.0 && PyErr_Occurred()) return -1;
    } else {
        PyErr_Format(PyExc_TypeError, "cannot convert %R (type %s) to softfp8 %S", obj, Py_TYPE(obj)->tp_name,
                     fmt_for_errors);
        return -1;
    }
    /* a binary64 value: exact as it is */
    memcpy(&bits, &x, 8);
    *out = (uint32_t)sfp8_convert(&sfp8_binary64, f, bits, env, fl);
    return 0;
}

/* Convert a Python object to a code of descr (context rounding). */
int object_to_code(PyArray_Descr *descr, PyObject *obj, uint32_t *out)
{
    const sfp8_format *f = descr_fmt(descr);
    LoopData *ld;
    sfp8_env env;
    uint8_t fl = 0;
    int r;
    if (PyObject_TypeCheck(obj, &ScalarBaseType)) {
        ScalarObject *s = (ScalarObject *)obj;
        if (fmt_equal(descr_fmt((PyArray_Descr *)s->descr), f)) {
            *out = s->code & sfp8_code_mask(f);
            return 0;
        }
    }
    ld = loopdata_alloc(sizeof(LoopData));
    if (!ld) return -1;
    loop_env_for(ld, f, &env);
    if (ld->stoch) env.random = loop_random(ld);
    if (PyObject_TypeCheck(obj, &ScalarBaseType)) {
        ScalarObject *s = (ScalarObject *)obj;
        *out = (uint32_t)sfp8_convert(descr_fmt((PyArray_Descr *)s->descr), f, s->code, &env, &fl);
        r = 0;
    } else {
        r = object_value_to_code(f, obj, &env, &fl, out, ((SFP8Descr *)descr)->format);
    }
    /* the sticky flags, and overflow through np.errstate right here, as NumPy's
       float16 setitem and scalar constructor report it (arraytypes.c.src
       MyPyFloat_AsHalf: `PyUFunc_GiveFloatingpointErrors("cast",
       NPY_FPE_OVERFLOW)`), when filling an array (np.array([1e6], dtype=e4m3),
       a[i] = x, np.full) or making a scalar; nothing is left in the hardware
       status for a later check of NumPy's to find (float16's setitem reports no
       underflow) */
    if (r == 0 && fl) __atomic_fetch_or(ld->flags, (unsigned)fl, __ATOMIC_RELAXED);
    loopdata_free((NpyAuxData *)ld);
    if (r == 0 && (fl & SFP8_FLAG_OVERFLOW) && PyUFunc_GiveFloatingpointErrors("cast", NPY_FPE_OVERFLOW) < 0)
        return -1;
    return r;
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

/* hash(scalar) == hash(float(scalar)) (values equal to a float hash alike);
   a NaN hashes by identity, as NumPy's and Python's floats do */
static Py_hash_t scalar_hash(ScalarObject *s)
{
    uint8_t fl = 0;
    sfp8_env env;
    uint64_t b;
    double x;
    PyObject *fo;
    Py_hash_t h;
    memset(&env, 0, sizeof env);
    b = sfp8_convert(descr_fmt((PyArray_Descr *)s->descr), &sfp8_binary64, s->code, &env, &fl); /* exact */
    memcpy(&x, &b, 8);
    if (x != x) return PyBaseObject_Type.tp_hash((PyObject *)s);
    fo = PyFloat_FromDouble(x);
    if (!fo) return -1;
    h = PyObject_Hash(fo);
    Py_DECREF(fo);
    return h;
}

/* value is a list, tuple, range or array (not a scalar): the scalar type
   called on it gives an array of its format, as np.float16([1, 2]) */
static int array_like(PyObject *value)
{
    if (PyArray_IsScalar(value, Generic) || PyObject_TypeCheck(value, &ScalarBaseType)) return 0;
    return PyList_Check(value) || PyTuple_Check(value) || PyRange_Check(value) || PyArray_Check(value);
}

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
    if (array_like(value)) {
        /* an array of the format (unsafe casting, as NumPy's scalar types);
           a 0-d result is returned as a scalar */
        PyObject *arr;
        Py_INCREF(descr);
        arr = PyArray_FromAny(value, (PyArray_Descr *)descr, 0, 0, NPY_ARRAY_FORCECAST, NULL);
        return arr ? PyArray_Return((PyArrayObject *)arr) : NULL;
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
    .tp_hash = (hashfunc)scalar_hash,
    .tp_getset = scalar_getset,
    .tp_methods = scalar_methods,
};
