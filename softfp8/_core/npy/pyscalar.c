/*
 * NumPy glue: Python int / float operands of softfp8 ufuncs (NEP 50).
 *
 * For every binary operation of the table (ops.def kinds K_BINARY and the six
 * comparisons) and every format family, four extra loops take a Python number
 * as one operand: (D, PyFloat), (PyFloat, D), (D, PyLong), (PyLong, D).  They
 * are registered with NumPy's abstract Python-scalar DTypes, so only a Python
 * literal selects them (a float64 array or np.float64 scalar is "strong" and
 * keeps promoting to float64); NumPy hands the literal over as a float64 or
 * int64 element (ufunc_object.c resolve_descriptors -> npy_find_descr_for_scalar:
 * a non-parametric signature DType gives its default descriptor).
 *
 * - arithmetic: the literal is rounded into the softfp8 operand's own format
 *   (its descriptor's parameters: bias, custom formats) in the context's mode,
 *   its flags (overflow of 150000.0 into E4M3 ...) raised like the operation's
 *   own, then the operation runs on two codes; the result is in that format;
 * - comparisons: the code is compared with the EXACT value of the literal (it is
 *   never rounded): q < 1000.0 is True for every finite E4M3 q, q == 0.1 is False.
 */
#include "glue.h"
#include "driver.h"
#include "ops.h"

#include <math.h>

static const sfp8_env EXACT_ENV = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};

/* every finite value of f is a binary64 value (the extremes convert exactly,
   and f has fewer than 53 significand bits) */
static int fits_binary64(const sfp8_format *f)
{
    uint8_t fl = 0;
    sfp8_convert(f, &sfp8_binary64, sfp8_max_code(f), &EXACT_ENV, &fl);
    sfp8_convert(f, &sfp8_binary64, sfp8_min_subnormal_code(f), &EXACT_ENV, &fl);
    return fl == 0 && f->man_bits < 53;
}

static double code_as_double(const sfp8_format *f, uint32_t c)
{
    uint8_t fl = 0;
    uint64_t b = sfp8_convert(f, &sfp8_binary64, c, &EXACT_ENV, &fl);
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static int rel_of(int less, int greater)
{
    return less ? SFP8_LESS : greater ? SFP8_GREATER : SFP8_EQUAL;
}

/* exact relation of the binary64 value d (not NaN) to the int64 i */
static int rel_double_int(double d, int64_t i)
{
    int64_t t;
    double frac;
    if (d >= 9223372036854775808.0) return SFP8_GREATER;
    if (d < -9223372036854775808.0) return SFP8_LESS;
    t = (int64_t)d; /* truncation, exact */
    if (t != i) return rel_of(t < i, t > i);
    frac = d - (double)t; /* exact: |d| < 2^63, t = trunc(d) */
    return rel_of(frac < 0, frac > 0);
}

/* exact relation of code c to x for a format whose values binary64 may not hold:
   x rounded downward into f (d <= x < next value above d when inexact) */
static int rel_core(const sfp8_format *f, uint32_t c, int is_int, const char *x)
{
    const sfp8_env down = {SFP8_ROUND_DOWNWARD, 1, 0, 32, 0};
    uint8_t fl = 0, cfl = 0;
    uint32_t d;
    int xneg, xzero, r, ccls = sfp8_classify(f, c);
    if (is_int) {
        int64_t i;
        memcpy(&i, x, sizeof i);
        d = sfp8_from_int64(f, i, &down, &fl);
        xneg = i < 0;
        xzero = i == 0;
    } else {
        double v;
        uint64_t b;
        memcpy(&v, x, sizeof v);
        if (isnan(v)) return SFP8_UNORDERED;
        memcpy(&b, &v, sizeof b);
        d = (uint32_t)sfp8_convert(&sfp8_binary64, f, b, &down, &fl);
        xneg = v < 0;
        xzero = v == 0;
    }
    if (ccls >= SFP8_CLASS_QNAN) return SFP8_UNORDERED;
    if (fl & SFP8_FLAG_OVERFLOW) {
        /* |x| above every finite value: only the infinity of x's sign is beyond it */
        int cinf_same = ccls == SFP8_CLASS_INF && sfp8_signbit(f, c) == xneg;
        return xneg ? (cinf_same ? SFP8_LESS : SFP8_GREATER) : (cinf_same ? SFP8_GREATER : SFP8_LESS);
    }
    if (!xzero && is_zero_value(f, d)) {
        /* 0 < |x| < the smallest non-zero magnitude of f (flushing formats may
           round a tiny negative x up to -0) */
        if (is_zero_value(f, c)) return xneg ? SFP8_GREATER : SFP8_LESS;
        return sfp8_signbit(f, c) ? SFP8_LESS : SFP8_GREATER;
    }
    r = sfp8_compare(f, c, d, 0, &cfl);
    if (!(fl & SFP8_FLAG_INEXACT)) return r;
    return r == SFP8_GREATER ? SFP8_GREATER : SFP8_LESS;
}

/* exact relation of code c of f to the float64 (is_int 0) or int64 at x */
static int scalar_relation(const sfp8_format *f, int fits64, uint32_t c, int is_int, const char *x)
{
    double d;
    if (!fits64) return rel_core(f, c, is_int, x);
    d = code_as_double(f, c);
    if (isnan(d)) return SFP8_UNORDERED;
    if (is_int) {
        int64_t i;
        memcpy(&i, x, sizeof i);
        return rel_double_int(d, i);
    } else {
        double v;
        memcpy(&v, x, sizeof v);
        if (isnan(v)) return SFP8_UNORDERED;
        return rel_of(d < v, d > v);
    }
}

/* the comparisons this file handles, as the set of relations that make them true
   (bit r + 1 for r in LESS, EQUAL, GREATER, UNORDERED); 0: not a comparison here */
static unsigned compare_mask(int op)
{
    const unsigned L = 1u << (SFP8_LESS + 1), E = 1u << (SFP8_EQUAL + 1), G = 1u << (SFP8_GREATER + 1),
                   U = 1u << (SFP8_UNORDERED + 1);
    switch (op) {
    case X_EQ: return E;
    case X_NE: return L | G | U;
    case X_LT: return L;
    case X_LE: return L | E;
    case X_GT: return G;
    case X_GE: return G | E;
    default: return 0;
    }
}

static int handled(int op)
{
    return sfp8x_ops[op].kind == K_BINARY || (sfp8x_ops[op].kind == K_COMPARE && compare_mask(op));
}

typedef struct {
    LoopData ld;
    sfp8_format f;
    int op;
    int spos;   /* index of the Python-number operand (0 or 1) */
    int is_int; /* it is an int64 (else a float64) */
    int fits64;
} PyScalarData;

#define CHUNK 256

static int pyscalar_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                         npy_intp const strides[], NpyAuxData *auxdata)
{
    PyScalarData *u = (PyScalarData *)auxdata;
    const sfp8_format *f = &u->f;
    npy_intp n = dimensions[0];
    int s = u->spos, a = 1 - s;
    unsigned fl = 0;
    (void)context;
    if (sfp8x_ops[u->op].kind == K_COMPARE) {
        unsigned mask = compare_mask(u->op);
        int sz = sfp8d_size(f);
        for (npy_intp i = 0; i < n; i++) {
            uint32_t c = load_code(data[a] + i * strides[a], sz);
            int r = scalar_relation(f, u->fits64, c, u->is_int, data[s] + i * strides[s]);
            if (s == 0 && r != SFP8_UNORDERED) r = -r; /* scalar OP code: swap the sides */
            *(npy_bool *)(data[2] + i * strides[2]) = (mask >> (r + 1)) & 1u;
        }
        return 0;
    }
    {
        sfp8_env env;
        sfp8_rng rng = {NULL, u->ld.seed, u->ld.stream, u->ld.index};
        /* the scalar's rounding draws its random bits from a stream of its own */
        sfp8_rng srng = {NULL, u->ld.seed, u->ld.stream ^ ((uint64_t)1 << 63), 0};
        uint16_t buf[CHUNK];
        int sz = sfp8d_size(f);
        loop_env_for(&u->ld, f, &env);
        for (npy_intp off = 0; off < n; off += CHUNK) {
            npy_intp k = n - off < CHUNK ? n - off : CHUNK;
            const char *src = data[s] + off * strides[s];
            char *d2[3];
            ptrdiff_t st2[3];
            srng.index = rng.index;
            if (u->is_int)
                fl |= sfp8d_from_int64(f, &env, &srng, src, strides[s], (char *)buf, sz, k, NULL);
            else
                fl |= sfp8d_convert(&sfp8_binary64, f, &env, &srng, src, strides[s], (char *)buf, sz, k, NULL);
            d2[s] = (char *)buf;
            st2[s] = sz;
            d2[a] = data[a] + off * strides[a];
            st2[a] = strides[a];
            d2[2] = data[2] + off * strides[2];
            st2[2] = strides[2];
            fl |= sfp8d_run(u->op, f, &env, &rng, d2, st2, k, NULL);
        }
        u->ld.index = rng.index;
        loop_publish(&u->ld, fl);
    }
    return 0;
}

static int get_loop_for(int op, PyArrayMethod_Context *context, PyArrayMethod_StridedLoop **out_loop,
                        NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags)
{
    PyScalarData *u = loopdata_alloc(sizeof(PyScalarData));
    int spos = is_sfp8_descr(context->descriptors[0]) ? 1 : 0;
    if (!u) return -1;
    u->f = *descr_fmt(context->descriptors[1 - spos]);
    u->op = op;
    u->spos = spos;
    u->is_int = context->descriptors[spos]->type_num != NPY_DOUBLE;
    u->fits64 = fits_binary64(&u->f);
    *out_transferdata = (NpyAuxData *)u;
    *out_loop = pyscalar_loop;
    *flags = 0;
    return 0;
}

/* one get_loop per operation (NumPy passes get_loop no per-method data) */
#define SFP8_OP(ID, name, kind, attrs, ufunc, identity, call)                                          \
    static int get_loop_##ID(PyArrayMethod_Context *c, int al, int mv, const npy_intp *st,             \
                             PyArrayMethod_StridedLoop **l, NpyAuxData **t, NPY_ARRAYMETHOD_FLAGS *fl) \
    { (void)al; (void)mv; (void)st; return get_loop_for(X_##ID, c, l, t, fl); }
#include "ops.def"
#undef SFP8_OP

static PyArrayMethod_GetLoop *const get_loops[X_NUM_OPS] = {
#define SFP8_OP(ID, name, kind, attrs, ufunc, identity, call) get_loop_##ID,
#include "ops.def"
#undef SFP8_OP
};

/* the softfp8 operand's descriptor for the format, float64 / int64 for the
   Python number, the format (or bool) for the result */
static NPY_CASTING resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
                           PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *view_offset)
{
    int spos = family_of(dtypes[0]) >= 0 ? 1 : 0;
    PyArray_Descr *fd = given[1 - spos];
    (void)self;
    (void)view_offset;
    loop[spos] = PyArray_DescrFromType(dtypes[spos] == &PyArray_PyFloatDType ? NPY_DOUBLE : NPY_INT64);
    Py_INCREF(fd);
    loop[1 - spos] = fd;
    if (dtypes[2] == &PyArray_BoolDType) {
        loop[2] = PyArray_DescrFromType(NPY_BOOL);
    } else {
        PyArray_Descr *o = given[2] && descr_same(given[2], fd) ? given[2] : fd;
        Py_INCREF(o);
        loop[2] = o;
    }
    return NPY_NO_CASTING;
}

static int add_one(PyObject *ufunc, int op, PyArray_DTypeMeta *cls, PyArray_DTypeMeta *py, int spos)
{
    PyArray_DTypeMeta *dtypes[3];
    PyType_Slot slots[] = {
        {NPY_METH_resolve_descriptors, (void *)&resolve},
        {NPY_METH_get_loop, (void *)get_loops[op]},
        {0, NULL}
    };
    PyArrayMethod_Spec spec = {
        .name = sfp8x_ops[op].ufunc,
        .nin = 2,
        .nout = 1,
        .casting = NPY_NO_CASTING,
        .flags = NPY_METH_SUPPORTS_UNALIGNED,
        .dtypes = dtypes,
        .slots = slots,
    };
    dtypes[spos] = py;
    dtypes[1 - spos] = cls;
    dtypes[2] = sfp8x_bool_result(op) ? &PyArray_BoolDType : cls;
    return PyUFunc_AddLoopFromSpec(ufunc, &spec);
}

/* the operation of the table whose ufunc is `ufunc` (NumPy's attribute of that
   name: np.true_divide is np.divide), if this file handles it; -1 if not */
static int op_of_ufunc(PyObject *ufunc)
{
    PyObject *np = PyImport_ImportModule("numpy");
    int found = -1;
    if (!np) return -2;
    for (int op = 0; op < X_NUM_OPS && found == -1; op++) {
        PyObject *u;
        if (!sfp8x_ops[op].ufunc || strncmp(sfp8x_ops[op].ufunc, "softfp8.", 8) == 0) continue;
        u = PyObject_GetAttrString(np, sfp8x_ops[op].ufunc);
        if (!u) {
            Py_DECREF(np);
            return -2;
        }
        if (u == ufunc) found = handled(op) ? op : -3;
        Py_DECREF(u);
    }
    Py_DECREF(np);
    return found == -3 ? -1 : found;
}

int add_pyscalar_loops(PyObject *ufunc, PyArray_DTypeMeta *cls)
{
    int op = op_of_ufunc(ufunc);
    if (op == -2) return -1;
    if (op < 0) return 0;
    for (int spos = 0; spos < 2; spos++)
        if (add_one(ufunc, op, cls, &PyArray_PyFloatDType, spos) < 0 ||
            add_one(ufunc, op, cls, &PyArray_PyLongDType, spos) < 0)
            return -1;
    return 1;
}
