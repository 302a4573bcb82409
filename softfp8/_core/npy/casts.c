/*
 * NumPy glue: casts between softfp8 formats, NumPy's bool / integer / float /
 * complex DTypes, strings and ml_dtypes' float types: descriptor resolution,
 * the strided loops (between format descriptors the array driver, driver.c;
 * bool, integer and long double endpoints the exact core element by element;
 * to strings the scalar's str) and the cast specs registered with each DType
 * class.
 */
#include "glue.h"
#include "driver.h"

enum { K_SFP8 = 0, K_BOOL, K_INT, K_UINT, K_FLOAT, K_LDOUBLE };

typedef struct {
    int kind;
    int size;
    int cplx;      /* complex: the real part is the first half, size/2 bytes */
    sfp8_format f; /* K_SFP8 and K_FLOAT (binary formats); K_LDOUBLE: binary64,
                      only for the loop environment's default saturation */
} Endpoint;


typedef struct {
    LoopData ld;
    Endpoint src, dst;
} CastData;

/* Python hooks, set once at import (module.c): contains_func(a, b) -> bool,
   every value of dtype a exactly in dtype b (casting safety); ml_equiv_func(d)
   -> the softfp8 dtype with the codes of ml_dtypes dtype d (softfp8/_interop.py
   decides it from ml_dtypes.finfo and checks every code), raising when softfp8
   has none. */
PyObject *contains_func = NULL;
static PyObject *ml_equiv_func = NULL;

void sfp8_casts_set_ml_hook(PyObject *fn)
{
    Py_XINCREF(fn);
    Py_XSETREF(ml_equiv_func, fn);
}

/* The softfp8 dtype with the codes of ml_dtypes dtype d; NULL with an
   exception when d is not one softfp8 can represent. */
static PyArray_Descr *ml_equivalent(PyArray_Descr *d)
{
    PyObject *r;
    if (!ml_equiv_func) {
        PyErr_Format(PyExc_TypeError, "softfp8: casts with %S need softfp8's ml_dtypes interop "
                                      "(import softfp8)", (PyObject *)d);
        return NULL;
    }
    r = PyObject_CallOneArg(ml_equiv_func, (PyObject *)d);
    if (r && !(PyArray_DescrCheck(r) && is_sfp8_descr((PyArray_Descr *)r))) {
        Py_DECREF(r);
        PyErr_Format(PyExc_TypeError, "softfp8: no format for %S", (PyObject *)d);
        return NULL;
    }
    return (PyArray_Descr *)r;
}

static int is_ml_descr(PyArray_Descr *d);
static int contains(PyArray_Descr *a, PyArray_Descr *b);

static int endpoint_of(PyArray_Descr *d, Endpoint *e)
{
    e->size = (int)d->elsize;
    e->cplx = 0;
    if (is_sfp8_descr(d)) {
        e->kind = K_SFP8;
        e->f = *descr_fmt(d);
        return 0;
    }
    if (is_ml_descr(d)) {
        PyArray_Descr *m = ml_equivalent(d);
        if (!m) return -1;
        e->kind = K_SFP8;
        e->f = *descr_fmt(m);
        Py_DECREF(m);
        return 0;
    }
    switch (d->type_num) {
    case NPY_CFLOAT: e->kind = K_FLOAT; e->cplx = 1; e->f = sfp8_binary32; return 0;
    case NPY_CDOUBLE: e->kind = K_FLOAT; e->cplx = 1; e->f = sfp8_binary64; return 0;
    case NPY_CLONGDOUBLE: e->kind = K_LDOUBLE; e->cplx = 1; e->f = sfp8_binary64; return 0;
    case NPY_BOOL: e->kind = K_BOOL; return 0;
    case NPY_BYTE: case NPY_SHORT: case NPY_INT: case NPY_LONG: case NPY_LONGLONG:
        e->kind = K_INT; return 0;
    case NPY_UBYTE: case NPY_USHORT: case NPY_UINT: case NPY_ULONG: case NPY_ULONGLONG:
        e->kind = K_UINT; return 0;
    case NPY_HALF: e->kind = K_FLOAT; e->f = sfp8_presets[SFP8_FLOAT16].format; /* binary16 */ return 0;
    case NPY_FLOAT: e->kind = K_FLOAT; e->f = sfp8_binary32; return 0;
    case NPY_DOUBLE: e->kind = K_FLOAT; e->f = sfp8_binary64; return 0;
    case NPY_LONGDOUBLE: e->kind = K_LDOUBLE; e->f = sfp8_binary64; return 0;
    default:
        PyErr_Format(PyExc_TypeError, "softfp8: unsupported cast endpoint %S", (PyObject *)d);
        return -1;
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
    const sfp8_format *ef = (t->kind == K_SFP8 || t->kind == K_FLOAT || t->kind == K_LDOUBLE) ? &t->f : &s->f;
    (void)context;
    loop_env_for(ld, ef, &env);
    if ((s->kind == K_SFP8 || s->kind == K_FLOAT) && (t->kind == K_SFP8 || t->kind == K_FLOAT)) {
        /* between format descriptors (softfp8 formats, binary16/32/64): the
           array driver, with its fast-path ladder */
        sfp8_rng rng = {NULL, ld->seed, ld->stream, ld->index};
        acc = sfp8d_convert(&s->f, &t->f, &env, &rng, in, strides[0], out, strides[1], n, NULL);
        ld->index = rng.index;
        if (t->cplx) /* into complex: the imaginary parts are +0 */
            for (npy_intp i = 0; i < n; i++) memset(out + i * strides[1] + t->size / 2, 0, (size_t)t->size / 2);
        loop_publish(ld, acc);
        return 0;
    }
    /* bool, integers and long double: the core element by element */
    for (npy_intp i = 0; i < n; i++, in += strides[0], out += strides[1]) {
        uint8_t fl = 0;
        uint64_t r = 0;
        if (ld->stoch) env.random = loop_random(ld);
        if (s->kind == K_SFP8) {
            uint32_t c = load_code(in, s->size);
            switch (t->kind) {
            case K_LDOUBLE:
                ld_from_code(&s->f, c, &env, &fl, out);
                if (t->cplx) memset(out + t->size / 2, 0, (size_t)t->size / 2);
                break;
            case K_BOOL:
                r = !is_zero_value(&s->f, c);
                break;
            case K_INT:
            case K_UINT: {
                sfp8_env tz = env;
                tz.rounding = SFP8_ROUND_TOWARD_ZERO;
                if (t->kind == K_UINT && t->size == 8) {
                    /* via the exact integral value in float64 */
                    uint8_t f2 = 0;
                    uint32_t ti = sfp8_round_integral(&s->f, c, &tz, 0, &f2);
                    uint64_t b = sfp8_convert(&s->f, &sfp8_binary64, ti, &tz, &f2);
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
                r = (uint64_t)sfp8_to_int64(&s->f, c, &tz, &fl);
                fl &= (uint8_t)~SFP8_FLAG_INEXACT;
                break;
            }
            }
            if (t->kind != K_LDOUBLE) store_raw(out, t->size, r);
        } else {
            uint32_t c = 0;
            switch (s->kind) {
            case K_BOOL:
                c = sfp8_from_int64(&t->f, load_raw(in, 1) != 0, &env, &fl);
                break;
            case K_INT:
                c = sfp8_from_int64(&t->f, sext(load_raw(in, s->size), s->size), &env, &fl);
                break;
            case K_UINT:
                c = sfp8_from_uint64(&t->f, load_raw(in, s->size), &env, &fl);
                break;
            case K_LDOUBLE:
                c = ld_to_code(&t->f, in, &env, &fl);
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
    (void)aligned;
    (void)move_references;
    (void)strides;
    if (is_sfp8_descr(descrs[0]) && is_sfp8_descr(descrs[1]) && descr_same(descrs[0], descrs[1])) {
        *out_loop = copy_loop;
        *out_transferdata = NULL;
        *flags = NPY_METH_NO_FLOATINGPOINT_ERRORS;
        return 0;
    }
    cd = loopdata_alloc(sizeof(CastData));
    if (!cd) return -1;
    if (endpoint_of(descrs[0], &cd->src) < 0 || endpoint_of(descrs[1], &cd->dst) < 0) {
        loopdata_free((NpyAuxData *)cd);
        return -1;
    }
    if (cd->src.cplx && sfp8_warn_complex() < 0) {
        loopdata_free((NpyAuxData *)cd);
        return -1;
    }
    *out_loop = cast_loop;
    *out_transferdata = (NpyAuxData *)cd;
    *flags = 0;
    return 0;
}

/* str / bytes -> softfp8: each element read as a decimal numeral exactly (the
   syntax of Python's float()) and rounded once (GIL held).  object ->
   softfp8 too (each object as the scalar constructor reads it): NumPy's
   generic object cast would not report floating-point errors, float16's does. */
static int string_cast_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                            npy_intp const strides[], NpyAuxData *auxdata)
{
    PyArray_Descr *src = context->descriptors[0], *dst = context->descriptors[1];
    LoopData *ld = (LoopData *)auxdata;
    const sfp8_format *f = descr_fmt(dst);
    npy_intp n = dimensions[0], width = src->elsize;
    int unicode = src->type_num == NPY_UNICODE;
    const char *in = data[0];
    char *out = data[1];
    unsigned int acc = 0;
    sfp8_env env;
    loop_env_for(ld, f, &env);
    for (npy_intp i = 0; i < n; i++, in += strides[0], out += strides[1]) {
        PyObject *str;
        uint32_t code;
        uint8_t fl = 0;
        int r;
        if (src->type_num == NPY_OBJECT) {
            PyObject *o;
            memcpy(&o, in, sizeof o);
            if (!o) o = Py_None; /* NumPy reads NULL as None */
            if (ld->stoch) env.random = loop_random(ld);
            if (PyObject_TypeCheck(o, &ScalarBaseType)) {
                ScalarObject *sc = (ScalarObject *)o;
                code = (uint32_t)sfp8_convert(descr_fmt((PyArray_Descr *)sc->descr), f, sc->code, &env, &fl);
            } else if (object_value_to_code(f, o, &env, &fl, &code, ((SFP8Descr *)dst)->format) < 0) {
                loop_publish(ld, acc);
                return -1;
            }
            acc |= fl;
            store_code(out, (int)dst->elsize, code);
            continue;
        }
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
        if (ld->stoch) env.random = loop_random(ld);
        r = object_value_to_code(f, str, &env, &fl, &code, ((SFP8Descr *)dst)->format);
        Py_DECREF(str);
        if (r < 0) {
            loop_publish(ld, acc);
            return -1;
        }
        acc |= fl;
        store_code(out, (int)dst->elsize, code);
    }
    loop_publish(ld, acc);
    return 0;
}

static int string_cast_get_loop(PyArrayMethod_Context *context, int aligned, int move_references,
                                const npy_intp *strides, PyArrayMethod_StridedLoop **out_loop,
                                NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags)
{
    LoopData *ld = loopdata_alloc(sizeof(LoopData));
    (void)context;
    (void)aligned;
    (void)move_references;
    (void)strides;
    if (!ld) return -1;
    *out_loop = string_cast_loop;
    *out_transferdata = (NpyAuxData *)ld;
    *flags = NPY_METH_REQUIRES_PYAPI;
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
    {NPY_METH_get_loop, (void *)&string_cast_get_loop},
    {0, NULL}
};

/* softfp8 -> str / bytes: the text of str(scalar) (softfp8/_printing.py),
   truncated to the string length as NumPy truncates; GIL held. */
static int to_string_cast_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                               npy_intp const strides[], NpyAuxData *auxdata)
{
    PyArray_Descr *src = context->descriptors[0], *dst = context->descriptors[1];
    npy_intp n = dimensions[0], width = dst->elsize;
    int unicode = dst->type_num == NPY_UNICODE;
    const char *in = data[0];
    char *out = data[1];
    (void)auxdata;
    for (npy_intp i = 0; i < n; i++, in += strides[0], out += strides[1]) {
        PyObject *sc = sfp8_getitem(src, (char *)in), *text;
        Py_ssize_t len;
        if (!sc) return -1;
        text = PyObject_Str(sc);
        Py_DECREF(sc);
        if (!text) return -1;
        len = PyUnicode_GET_LENGTH(text);
        memset(out, 0, (size_t)width);
        if (unicode) {
            Py_ssize_t m = len < width / 4 ? len : width / 4;
            for (Py_ssize_t j = 0; j < m; j++) {
                Py_UCS4 ch = PyUnicode_READ_CHAR(text, j);
                memcpy(out + 4 * j, &ch, 4);
            }
        } else {
            Py_ssize_t m = len < width ? len : width;
            for (Py_ssize_t j = 0; j < m; j++) out[j] = (char)PyUnicode_READ_CHAR(text, j); /* ASCII text */
        }
        Py_DECREF(text);
    }
    return 0;
}

static int to_string_cast_get_loop(PyArrayMethod_Context *context, int aligned, int move_references,
                                   const npy_intp *strides, PyArrayMethod_StridedLoop **out_loop,
                                   NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags)
{
    (void)context;
    (void)aligned;
    (void)move_references;
    (void)strides;
    *out_loop = to_string_cast_loop;
    *out_transferdata = NULL;
    *flags = NPY_METH_REQUIRES_PYAPI | NPY_METH_NO_FLOATINGPOINT_ERRORS;
    return 0;
}

/* The string length of an unsized str / bytes result: 32, NumPy's length for
   every float type (np.promote_types(np.float16, "U") is <U32); str() of every
   format fits (at most 24 characters). */
#define SFP8_STR_LEN 32

static NPY_CASTING to_string_cast_resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[2],
                                          PyArray_Descr *const given[2], PyArray_Descr *loop[2],
                                          npy_intp *view_offset)
{
    (void)self;
    (void)view_offset;
    Py_INCREF(given[0]);
    loop[0] = given[0];
    if (given[1]) {
        loop[1] = PyArray_DescrNewByteorder(given[1], NPY_NATIVE);
    } else {
        loop[1] = PyArray_DescrNewFromType(dtypes[1] == &PyArray_UnicodeDType ? NPY_UNICODE : NPY_STRING);
        if (loop[1]) loop[1]->elsize = dtypes[1] == &PyArray_UnicodeDType ? 4 * SFP8_STR_LEN : SFP8_STR_LEN;
    }
    if (!loop[1]) {
        Py_DECREF(loop[0]);
        return -1;
    }
    /* as NumPy's numeric -> string casts: safe when the length holds every value */
    return loop[1]->elsize >= (loop[1]->type_num == NPY_UNICODE ? 4 : 1) * SFP8_STR_LEN ? NPY_SAFE_CASTING
                                                                                       : NPY_SAME_KIND_CASTING;
}

static PyType_Slot to_string_cast_slots[] = {
    {NPY_METH_resolve_descriptors, (void *)&to_string_cast_resolve},
    {NPY_METH_get_loop, (void *)&to_string_cast_get_loop},
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
    if (is_unset_descr(given[0]) || is_unset_descr(given[1])) {
        /* the family's own "needs parameters" error (dtype.c unset_descr) */
        PyArray_Descr *d = default_descr(NPY_DTYPE(is_unset_descr(given[0]) ? given[0] : given[1]));
        if (d) {
            Py_DECREF(d);
            PyErr_SetString(PyExc_TypeError, "softfp8: a dtype without parameters");
        }
        return -1;
    }
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
        } else if (families[family_of(dtypes[1])].parametric) {
            /* dtype.c: a ufunc's out= of another dtype; NumPy keeps only loop[1] */
            loop[1] = unset_descr(family_of(dtypes[1]));
            if (!loop[1]) {
                Py_DECREF(loop[0]);
                return -1;
            }
            return NPY_UNSAFE_CASTING;
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
    if (is_ml_descr(loop[0]) || is_ml_descr(loop[1])) {
        /* ml_dtypes' float types: safety as between the softfp8 formats of the same codes */
        int i = is_ml_descr(loop[0]) ? 0 : 1, safe;
        PyArray_Descr *m = ml_equivalent(loop[i]);
        if (!m) {
            Py_DECREF(loop[0]);
            Py_DECREF(loop[1]);
            return -1;
        }
        safe = i ? contains(loop[0], m) : contains(m, loop[1]);
        Py_DECREF(m);
        return safe ? NPY_SAFE_CASTING : NPY_SAME_KIND_CASTING;
    }
    if (is_sfp8_descr(loop[0])) {
        int tn = loop[1]->type_num;
        if (tn == NPY_HALF || tn == NPY_FLOAT || tn == NPY_DOUBLE || tn == NPY_LONGDOUBLE)
            return contains(loop[0], loop[1]) ? NPY_SAFE_CASTING : NPY_SAME_KIND_CASTING;
        if (tn == NPY_CFLOAT || tn == NPY_CDOUBLE || tn == NPY_CLONGDOUBLE) {
            /* as into the real type of the complex one (float16 -> complex64 is safe) */
            PyArray_Descr *real = PyArray_DescrFromType(tn == NPY_CFLOAT ? NPY_FLOAT : tn == NPY_CDOUBLE ? NPY_DOUBLE
                                                                                                 : NPY_LONGDOUBLE);
            int safe = contains(loop[0], real);
            Py_DECREF(real);
            return safe ? NPY_SAFE_CASTING : NPY_SAME_KIND_CASTING;
        }
        return NPY_UNSAFE_CASTING;
    }
    {
        int tn = loop[0]->type_num;
        if (tn == NPY_CFLOAT || tn == NPY_CDOUBLE || tn == NPY_CLONGDOUBLE)
            return NPY_UNSAFE_CASTING; /* the imaginary part is dropped */
    }
    /* into a softfp8 format */
    return contains(loop[0], loop[1]) ? NPY_SAFE_CASTING : NPY_SAME_KIND_CASTING;
}

PyArray_DTypeMeta *builtin_cast_partners[32];
int n_builtin_partners = 0;

void init_builtin_partners(void)
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

/* ml_dtypes' float types (when ml_dtypes is installed; it is imported when
   the DType classes are made, since NumPy 2.4 adds casts only with a new
   DType).  int types are not floats. */
static const char *const ML_NAMES[] = {
    "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz",
    "float8_e4m3", "float8_e3m4", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e8m0fnu",
};
#define N_ML (sizeof(ML_NAMES) / sizeof(ML_NAMES[0]))
static PyArray_DTypeMeta *ml_dtypes_cls[N_ML];
static int n_ml = -1;

static void init_ml_partners(void)
{
    PyObject *mod;
    if (n_ml >= 0) return;
    n_ml = 0;
    mod = PyImport_ImportModule("ml_dtypes");
    if (!mod) {
        PyErr_Clear(); /* optional */
        return;
    }
    for (size_t i = 0; i < N_ML; i++) {
        PyObject *t = PyObject_GetAttrString(mod, ML_NAMES[i]);
        PyArray_Descr *d = t && PyType_Check(t) ? PyArray_DescrFromTypeObject(t) : NULL;
        Py_XDECREF(t);
        if (!d) {
            PyErr_Clear();
            continue;
        }
        ml_dtypes_cls[n_ml] = NPY_DTYPE(d);
        Py_INCREF(ml_dtypes_cls[n_ml]); /* kept for the life of the process */
        n_ml++;
        Py_DECREF(d);
    }
    Py_DECREF(mod);
}

static int ml_index(PyArray_DTypeMeta *cls)
{
    for (int i = 0; i < n_ml; i++)
        if (cls == ml_dtypes_cls[i]) return i;
    return -1;
}

static int is_ml_descr(PyArray_Descr *d)
{
    return ml_index(NPY_DTYPE(d)) >= 0;
}

int sfp8_ml_partner_count(void)
{
    return n_ml > 0 ? n_ml : 0;
}

PyArray_DTypeMeta *sfp8_ml_partner(int i)
{
    return ml_dtypes_cls[i];
}

/* The promotion rank (dtype.c) of ml_dtypes DType cls: the smallest of
   float16 (1), float32 (2), float64 (3) holding every value of its type
   exactly (as for softfp8's formats), 0 for none or if cls is not one of
   ml_dtypes' float types; cached. */
int sfp8_ml_rank(PyArray_DTypeMeta *cls)
{
    static int ranks[N_ML];
    static const int floats[3] = {NPY_HALF, NPY_FLOAT, NPY_DOUBLE};
    int i = ml_index(cls);
    PyArray_Descr *m;
    if (i < 0 || !cls->singleton || !ml_equiv_func) return 0; /* (the hook comes with softfp8's import) */
    if (ranks[i]) return ranks[i] > 0 ? ranks[i] : 0;
    ranks[i] = -1;
    m = ml_equivalent(cls->singleton);
    if (!m) {
        PyErr_Clear();  /* no softfp8 format: no rank */
        return 0;
    }
    for (int r = 0; r < 3 && ranks[i] < 0; r++) {
        PyArray_Descr *t = PyArray_DescrFromType(floats[r]);
        if (t && contains(m, t)) ranks[i] = r + 1;
        Py_XDECREF(t);
    }
    Py_DECREF(m);
    return ranks[i] > 0 ? ranks[i] : 0;
}

/* complex DTypes a format casts to (real part, +0 imaginary) and from (real part, ComplexWarning) */
#define N_COMPLEX 3
static PyArray_DTypeMeta *complex_partner(int i)
{
    return i == 0 ? &PyArray_CFloatDType : i == 1 ? &PyArray_CDoubleDType : &PyArray_CLongDoubleDType;
}

PyArrayMethod_Spec **cast_specs_for(int fam)
{
    PyArrayMethod_Spec **casts;
    int k = 0;
    init_ml_partners();
    casts = PyMem_Calloc((size_t)(2 * (n_builtin_partners + fam + N_COMPLEX + n_ml) + 8),
                         sizeof(PyArrayMethod_Spec *));
    casts[k++] = new_cast_spec(NULL, NULL);
    for (int i = 0; i < 3; i++) {
        PyArray_DTypeMeta *text = i == 2 ? &PyArray_ObjectDType : i ? &PyArray_BytesDType : &PyArray_UnicodeDType;
        PyArrayMethod_Spec *sc = new_cast_spec(text, NULL);
        sc->flags = NPY_METH_REQUIRES_PYAPI | NPY_METH_SUPPORTS_UNALIGNED;
        sc->slots = string_cast_slots;
        casts[k++] = sc;
        if (i == 2) break; /* softfp8 -> object: NumPy's generic cast (getitem) */
        sc = new_cast_spec(NULL, text);
        sc->flags = NPY_METH_REQUIRES_PYAPI | NPY_METH_SUPPORTS_UNALIGNED | NPY_METH_NO_FLOATINGPOINT_ERRORS;
        sc->slots = to_string_cast_slots;
        casts[k++] = sc;
    }
    for (int i = 0; i < n_builtin_partners; i++) {
        casts[k++] = new_cast_spec(NULL, builtin_cast_partners[i]);
        casts[k++] = new_cast_spec(builtin_cast_partners[i], NULL);
    }
    for (int i = 0; i < N_COMPLEX; i++) {
        casts[k++] = new_cast_spec(NULL, complex_partner(i));
        casts[k++] = new_cast_spec(complex_partner(i), NULL);
    }
    for (int i = 0; i < n_ml; i++) {
        casts[k++] = new_cast_spec(NULL, ml_dtypes_cls[i]);
        casts[k++] = new_cast_spec(ml_dtypes_cls[i], NULL);
    }
    for (int i = 0; i < fam; i++) {
        casts[k++] = new_cast_spec(NULL, families[i].cls);
        casts[k++] = new_cast_spec(families[i].cls, NULL);
    }
    casts[k] = NULL;
    return casts;
}
