/*
 * NumPy glue: casts between softfp8 formats, NumPy's bool / integer / float
 * DTypes and strings: descriptor resolution, the strided loops (fast tables
 * first, then the exact core element by element) and the cast specs
 * registered with each DType class.
 */
#include "glue.h"
#include "fast.h"

enum { K_SFP8 = 0, K_BOOL, K_INT, K_UINT, K_FLOAT };

typedef struct {
    int kind;
    int size;
    sfp8_format f; /* K_SFP8 and K_FLOAT (binary formats) */
} Endpoint;

static const sfp8_format binary16_fmt = {16, 1, 5, 10, 15, SFP8_SPECIALS_IEEE, SFP8_SUBNORMALS_IEEE, 0};

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
            cd->conv = sfp8f_convert(&s->f, &t->f, env, n);
        else if (s->kind == K_FLOAT && s->size == 2 && t->kind == K_SFP8)
            cd->conv = sfp8f_convert(&s->f, &t->f, env, n);
        else if (s->kind == K_FLOAT && (s->size == 4 || s->size == 8) && t->kind == K_SFP8)
            cd->fromf = sfp8f_from_float(&t->f, env, n);
    }
    if (cd->conv) {
        *fl = sfp8f_run_convert(cd->conv, in, si, s->size, out, so, t->size, n);
        return 1;
    }
    if (cd->fromf) {
        *fl = sfp8f_run_from_float(cd->fromf, in, si, s->size, out, so, n);
        return 1;
    }
    return 0;
}

static int endpoint_of(PyArray_Descr *d, Endpoint *e)
{
    e->size = (int)d->elsize;
    if (is_sfp8_descr(d)) {
        e->kind = K_SFP8;
        e->f = *descr_fmt(d);
        return 0;
    }
    switch (d->type_num) {
    case NPY_BOOL: e->kind = K_BOOL; return 0;
    case NPY_BYTE: case NPY_SHORT: case NPY_INT: case NPY_LONG: case NPY_LONGLONG:
        e->kind = K_INT; return 0;
    case NPY_UBYTE: case NPY_USHORT: case NPY_UINT: case NPY_ULONG: case NPY_ULONGLONG:
        e->kind = K_UINT; return 0;
    case NPY_HALF: e->kind = K_FLOAT; e->f = binary16_fmt; return 0;
    case NPY_FLOAT: e->kind = K_FLOAT; e->f = sfp8_binary32; return 0;
    case NPY_DOUBLE: e->kind = K_FLOAT; e->f = sfp8_binary64; return 0;
    case NPY_LONGDOUBLE: e->kind = K_FLOAT; e->f = sfp8_binary64; e->size = -(int)d->elsize; return 0;
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
    const sfp8_format *ef = (t->kind == K_SFP8 || t->kind == K_FLOAT) ? &t->f : &s->f;
    (void)context;
    loop_env_for(ld, ef, &env);
    if (ld->stoch && s->kind == K_FLOAT && (s->size == 4 || s->size == 8) && t->kind == K_SFP8) {
        const sfp8f_sr *sr = sfp8f_stochastic(&t->f, &env, n);
        if (sr) {
            acc = sfp8f_run_from_float_sr(sr, &t->f, &env, ld->seed, ld->stream, ld->index, in, strides[0], s->size,
                                          out, strides[1], n);
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
                    uint64_t b = sfp8_convert(&s->f, &sfp8_binary64, c, &env, &fl);
                    double dv;
                    long double lv;
                    memcpy(&dv, &b, 8);
                    lv = dv;
                    memcpy(out, &lv, sizeof(long double));
                    continue;
                }
                r = sfp8_convert(&s->f, &t->f, c, &env, &fl);
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
            if (t->kind == K_SFP8) store_code(out, t->size, (uint32_t)r);
            else store_raw(out, t->size, r);
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
            case K_FLOAT:
                if (s->size < 0) {
                    long double lv;
                    double dv;
                    uint64_t b;
                    memcpy(&lv, in, sizeof(long double));
                    dv = (double)lv;
                    memcpy(&b, &dv, 8);
                    c = (uint32_t)sfp8_convert(&sfp8_binary64, &t->f, b, &env, &fl);
                } else {
                    c = (uint32_t)sfp8_convert(&s->f, &t->f, load_raw(in, s->size), &env, &fl);
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

PyArrayMethod_Spec **cast_specs_for(int fam)
{
    PyArrayMethod_Spec **casts;
    int k = 0;
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
    return casts;
}
