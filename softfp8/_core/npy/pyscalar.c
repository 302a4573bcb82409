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
 *   never rounded): q < 1000.0 is True for every finite E4M3 q, q == 0.1 is False;
 * - selections (maximum, minimum, fmax, fmin) and np.clip (whose bounds may be
 *   codes of the format or Python numbers): the operand is selected by exact
 *   comparison and only a selected literal is rounded into the format, so
 *   np.minimum(q, 1000.0) and np.clip(q, 0, 1000) give q, with no overflow of an
 *   unselected bound (round-then-select would give NaN in E4M3, where 1000
 *   overflows); the result equals round(exact selection) in every mode.
 */
#include <string.h>

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
    return !(fl & (SFP8_FLAG_INEXACT | SFP8_FLAG_OVERFLOW | SFP8_FLAG_UNDERFLOW)) && f->man_bits < 53;
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
        if (isnan(v) || ccls >= SFP8_CLASS_QNAN) return SFP8_UNORDERED;
        if (isinf(v)) {
            /* only the infinity of the same sign equals it (saturating formats
               would round it to the max) */
            if (ccls == SFP8_CLASS_INF && sfp8_signbit(f, c) == (v < 0)) return SFP8_EQUAL;
            return v > 0 ? SFP8_LESS : SFP8_GREATER;
        }
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

/* one operand of a selection: a code of the format, or a Python number that
   NumPy handed over as a float64 / int64 element */
enum { OP_CODE = 0, OP_F64, OP_I64 };
typedef struct {
    int kind;
    uint32_t code;
    const char *p;
} Opnd;

static int opnd_is_nan(const sfp8_format *f, Opnd a)
{
    if (a.kind == OP_CODE) return sfp8_classify(f, a.code) >= SFP8_CLASS_QNAN;
    if (a.kind == OP_F64) {
        double v;
        memcpy(&v, a.p, sizeof v);
        return isnan(v);
    }
    return 0;
}

/* exact relation of a to b (quiet: only signalling NaN codes raise invalid) */
static int opnd_relation(const sfp8_format *f, int fits64, Opnd a, Opnd b, uint8_t *fl)
{
    if (a.kind == OP_CODE && b.kind == OP_CODE) return sfp8_compare(f, a.code, b.code, 0, fl);
    if (a.kind == OP_CODE) return scalar_relation(f, fits64, a.code, b.kind == OP_I64, b.p);
    if (b.kind == OP_CODE) {
        int r = scalar_relation(f, fits64, b.code, a.kind == OP_I64, a.p);
        return r == SFP8_UNORDERED ? r : -r;
    }
    {
        int64_t i, j;
        double x, y;
        if (a.kind == OP_I64 && b.kind == OP_I64) {
            memcpy(&i, a.p, sizeof i);
            memcpy(&j, b.p, sizeof j);
            return rel_of(i < j, i > j);
        }
        if (a.kind == OP_F64 && b.kind == OP_F64) {
            memcpy(&x, a.p, sizeof x);
            memcpy(&y, b.p, sizeof y);
            return isnan(x) || isnan(y) ? SFP8_UNORDERED : rel_of(x < y, x > y);
        }
        if (a.kind == OP_F64) {
            memcpy(&x, a.p, sizeof x);
            memcpy(&j, b.p, sizeof j);
            return isnan(x) ? SFP8_UNORDERED : rel_double_int(x, j);
        }
        memcpy(&i, a.p, sizeof i);
        memcpy(&y, b.p, sizeof y);
        if (isnan(y)) return SFP8_UNORDERED;
        {
            int r = rel_double_int(y, i);
            return -r;
        }
    }
}

/* the operand as a code of f: a code as it is, a number rounded into f (context
   mode; stochastic bits from the literal's own stream at index `index`) */
static uint32_t opnd_code(const sfp8_format *f, const sfp8_env *env, const LoopData *ld, uint64_t index,
                          Opnd a, unsigned *fl)
{
    sfp8_rng rng = {NULL, ld->seed, ld->stream ^ ((uint64_t)1 << 63), index};
    uint16_t out = 0;
    if (a.kind == OP_CODE) return a.code;
    if (a.kind == OP_I64)
        *fl |= sfp8d_from_int64(f, env, &rng, a.p, 0, (char *)&out, sfp8d_size(f), 1, NULL);
    else
        *fl |= sfp8d_convert(&sfp8_binary64, f, env, &rng, a.p, 0, (char *)&out, sfp8d_size(f), 1, NULL);
    return load_code((const char *)&out, sfp8d_size(f));
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
    uint64_t sindex; /* next index of the literal's random-bit stream */
} PyScalarData;

static int is_selection(int op)
{
    return op == X_MAX || op == X_MIN || op == X_FMAX || op == X_FMIN;
}

/* maximum / minimum / fmax / fmin of code c and the literal at p (spos: the
   literal's operand position), selected by exact comparison */
static uint32_t select_one(PyScalarData *u, const sfp8_env *env, uint32_t c, const char *p, uint64_t index,
                           unsigned *fl)
{
    const sfp8_format *f = &u->f;
    int op = u->op, maxlike = op == X_MAX || op == X_FMAX, num = op == X_FMAX || op == X_FMIN;
    Opnd co = {OP_CODE, c, NULL}, so = {u->is_int ? OP_I64 : OP_F64, 0, p};
    uint8_t cf = 0;
    uint32_t res;
    int r = opnd_relation(f, u->fits64, co, so, &cf);
    if (r == SFP8_UNORDERED) {
        int cn = opnd_is_nan(f, co), sn = opnd_is_nan(f, so);
        if (cn && (!num || sn)) res = sfp8_max(f, c, c, &cf); /* the code's NaN, quieted */
        else if (cn) res = opnd_code(f, env, &u->ld, index, so, fl); /* fmax/fmin: the number */
        else if (num) res = c;
        else res = opnd_code(f, env, &u->ld, index, so, fl); /* the NaN literal */
    } else if (r == SFP8_EQUAL) {
        /* equal values: the literal is exact in f; the operation orders the zeros */
        uint32_t sc = opnd_code(f, env, &u->ld, index, so, fl), x0 = u->spos ? c : sc, x1 = u->spos ? sc : c;
        res = op == X_MAX ? sfp8_max(f, x0, x1, &cf) : op == X_MIN ? sfp8_min(f, x0, x1, &cf)
              : op == X_FMAX ? sfp8_maxnum(f, x0, x1, &cf) : sfp8_minnum(f, x0, x1, &cf);
    } else {
        int code_wins = maxlike ? r == SFP8_GREATER : r == SFP8_LESS;
        res = code_wins ? c : opnd_code(f, env, &u->ld, index, so, fl);
    }
    *fl |= cf;
    return res;
}

#define CHUNK 256

/* A literal repeated over at least as many elements as the format has codes (NumPy
   broadcasts a Python number with stride 0): the result of each code is computed
   once and looked up (formats of at most TAB_BITS bits; not under stochastic
   rounding, where each element's rounding of the literal draws its own bits). */
#define TAB_BITS 12
static int use_table(const sfp8_format *f, npy_intp n, int literal_stride_zero)
{
    return literal_stride_zero && f->bits <= TAB_BITS && n >= ((npy_intp)1 << f->bits);
}

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
        uint32_t m = sfp8_code_mask(f);
        if (use_table(f, n, strides[s] == 0)) {
            uint8_t tab[1 << TAB_BITS];
            for (uint32_t c = 0; c <= m; c++) {
                int r = scalar_relation(f, u->fits64, c, u->is_int, data[s]);
                if (s == 0 && r != SFP8_UNORDERED) r = -r;
                tab[c] = (uint8_t)((mask >> (r + 1)) & 1u);
            }
            for (npy_intp i = 0; i < n; i++)
                *(npy_bool *)(data[2] + i * strides[2]) = tab[load_code(data[a] + i * strides[a], sz) & m];
            return 0;
        }
        for (npy_intp i = 0; i < n; i++) {
            uint32_t c = load_code(data[a] + i * strides[a], sz) & m;
            int r = scalar_relation(f, u->fits64, c, u->is_int, data[s] + i * strides[s]);
            if (s == 0 && r != SFP8_UNORDERED) r = -r; /* literal OP code: swap the sides */
            *(npy_bool *)(data[2] + i * strides[2]) = (mask >> (r + 1)) & 1u;
        }
        return 0;
    }
    {
        sfp8_env env;
        sfp8_rng rng = {NULL, u->ld.seed, u->ld.stream, u->ld.index};
        /* the literal's rounding draws its random bits from a stream of its own */
        sfp8_rng srng = {NULL, u->ld.seed, u->ld.stream ^ ((uint64_t)1 << 63), u->sindex};
        uint16_t buf[CHUNK];
        int sz = sfp8d_size(f);
        loop_env_for(&u->ld, f, &env);
        uint32_t m = sfp8_code_mask(f);
        if (is_selection(u->op)) {
            if (!u->ld.stoch && use_table(f, n, strides[s] == 0)) {
                uint16_t rtab[1 << TAB_BITS];
                uint8_t ftab[1 << TAB_BITS];
                for (uint32_t c = 0; c <= m; c++) {
                    unsigned cf = 0;
                    rtab[c] = (uint16_t)select_one(u, &env, c, data[s], 0, &cf);
                    ftab[c] = (uint8_t)cf;
                }
                for (npy_intp i = 0; i < n; i++) {
                    uint32_t c = load_code(data[a] + i * strides[a], sz) & m;
                    store_code(data[2] + i * strides[2], sz, rtab[c]);
                    fl |= ftab[c];
                }
            } else {
                for (npy_intp i = 0; i < n; i++) {
                    uint32_t c = load_code(data[a] + i * strides[a], sz) & m;
                    store_code(data[2] + i * strides[2], sz,
                               select_one(u, &env, c, data[s] + i * strides[s], u->sindex + (uint64_t)i, &fl));
                }
            }
            u->sindex += (uint64_t)n;
            loop_publish(&u->ld, fl);
            return 0;
        }
        if (!u->ld.stoch && strides[s] == 0 && n > 0) {
            /* one literal, one rounding (flags raised once, as for every element) */
            char *d2[3];
            ptrdiff_t st2[3];
            if (u->is_int)
                fl |= sfp8d_from_int64(f, &env, &srng, data[s], 0, (char *)buf, sz, 1, NULL);
            else
                fl |= sfp8d_convert(&sfp8_binary64, f, &env, &srng, data[s], 0, (char *)buf, sz, 1, NULL);
            d2[s] = (char *)buf;
            st2[s] = 0;
            d2[a] = data[a];
            st2[a] = strides[a];
            d2[2] = data[2];
            st2[2] = strides[2];
            fl |= sfp8d_run(u->op, f, &env, &rng, d2, st2, n, NULL);
            u->ld.index = rng.index;
            loop_publish(&u->ld, fl);
            return 0;
        }
        for (npy_intp off = 0; off < n; off += CHUNK) {
            npy_intp k = n - off < CHUNK ? n - off : CHUNK;
            const char *src = data[s] + off * strides[s];
            char *d2[3];
            ptrdiff_t st2[3];
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
        u->sindex = srng.index;
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
        const char *p = sfp8x_ops[op].ufunc;
        if (!p || strncmp(p, "softfp8.", 8) == 0) continue;
        /* the column may name several ufuncs, separated by spaces */
        while (*p && found == -1) {
            char name[64];
            size_t len = strcspn(p, " ");
            PyObject *u;
            if (len == 0 || len >= sizeof name) {
                p += len ? len : 1;
                continue;
            }
            memcpy(name, p, len);
            name[len] = 0;
            p += len;
            u = PyObject_GetAttrString(np, name);
            if (!u) {
                Py_DECREF(np);
                return -2;
            }
            if (u == ufunc) found = handled(op) ? op : -3;
            Py_DECREF(u);
        }
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

/* ---- np.clip ------------------------------------------------------------ */

/* clip(x, lo, hi) for x an array of a format and each bound a code of the same
   format or a Python number: NaN in x or in a bound gives NaN (as NumPy's float
   clip), else the exact min(max(x, lo), hi), and only a selected Python bound is
   rounded into the format (np.clip(q, 0, 1000) leaves an E4M3 array as it is). */
typedef struct {
    LoopData ld;
    sfp8_format f;
    int kind[3];
    int fits64;
    uint64_t sindex;
} ClipData;

static uint32_t nan_of(const sfp8_format *f, const sfp8_env *env, const LoopData *ld, uint64_t index, Opnd a,
                       unsigned *fl)
{
    uint8_t cf = 0;
    uint32_t r;
    if (a.kind != OP_CODE) return opnd_code(f, env, ld, index, a, fl);
    r = sfp8_max(f, a.code, a.code, &cf);
    *fl |= cf;
    return r;
}

static uint32_t clip_one(ClipData *u, const sfp8_env *env, Opnd o[3], uint64_t idx, unsigned *fl)
{
    const sfp8_format *f = &u->f;
    uint8_t cf = 0;
    uint32_t res;
    if (opnd_is_nan(f, o[0])) res = nan_of(f, env, &u->ld, idx, o[0], fl);
    else if (opnd_is_nan(f, o[1])) res = nan_of(f, env, &u->ld, idx, o[1], fl);
    else if (opnd_is_nan(f, o[2])) res = nan_of(f, env, &u->ld, idx, o[2], fl);
    else {
        Opnd c = o[0];
        if (opnd_relation(f, u->fits64, c, o[1], &cf) == SFP8_LESS) c = o[1];
        if (opnd_relation(f, u->fits64, c, o[2], &cf) == SFP8_GREATER) c = o[2];
        res = opnd_code(f, env, &u->ld, idx, c, fl);
    }
    *fl |= cf;
    return res;
}

static void clip_operands(const ClipData *u, char *const data[], npy_intp const strides[], npy_intp i, Opnd o[3])
{
    int sz = sfp8d_size(&u->f);
    for (int k = 0; k < 3; k++) {
        o[k].kind = u->kind[k];
        o[k].p = data[k] + i * strides[k];
        o[k].code = o[k].kind == OP_CODE ? load_code(o[k].p, sz) & sfp8_code_mask(&u->f) : 0;
    }
}

static int clip_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                     npy_intp const strides[], NpyAuxData *auxdata)
{
    ClipData *u = (ClipData *)auxdata;
    const sfp8_format *f = &u->f;
    int sz = sfp8d_size(f);
    npy_intp n = dimensions[0];
    unsigned fl = 0;
    sfp8_env env;
    Opnd o[3];
    (void)context;
    loop_env_for(&u->ld, f, &env);
    if (!u->ld.stoch && use_table(f, n, strides[1] == 0 && strides[2] == 0)) {
        uint16_t rtab[1 << TAB_BITS];
        uint8_t ftab[1 << TAB_BITS];
        uint32_t m = sfp8_code_mask(f);
        clip_operands(u, data, strides, 0, o);
        for (uint32_t c = 0; c <= m; c++) {
            unsigned cf = 0;
            o[0].code = c;
            rtab[c] = (uint16_t)clip_one(u, &env, o, 0, &cf);
            ftab[c] = (uint8_t)cf;
        }
        for (npy_intp i = 0; i < n; i++) {
            uint32_t c = load_code(data[0] + i * strides[0], sz) & m;
            store_code(data[3] + i * strides[3], sz, rtab[c]);
            fl |= ftab[c];
        }
    } else {
        for (npy_intp i = 0; i < n; i++) {
            clip_operands(u, data, strides, i, o);
            store_code(data[3] + i * strides[3], sz, clip_one(u, &env, o, u->sindex + (uint64_t)i, &fl));
        }
    }
    u->sindex += (uint64_t)n;
    loop_publish(&u->ld, fl);
    return 0;
}

static int clip_get_loop(PyArrayMethod_Context *context, int aligned, int move_references, const npy_intp *strides,
                         PyArrayMethod_StridedLoop **out_loop, NpyAuxData **out_transferdata,
                         NPY_ARRAYMETHOD_FLAGS *flags)
{
    ClipData *u = loopdata_alloc(sizeof(ClipData));
    (void)aligned;
    (void)move_references;
    (void)strides;
    if (!u) return -1;
    u->f = *descr_fmt(context->descriptors[0]);
    for (int k = 0; k < 3; k++) {
        PyArray_Descr *d = context->descriptors[k];
        u->kind[k] = is_sfp8_descr(d) ? OP_CODE : d->type_num == NPY_DOUBLE ? OP_F64 : OP_I64;
    }
    u->fits64 = fits_binary64(&u->f);
    *out_transferdata = (NpyAuxData *)u;
    *out_loop = clip_loop;
    *flags = 0;
    return 0;
}

static NPY_CASTING clip_resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
                                PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *view_offset)
{
    PyArray_Descr *fd = given[0];
    (void)self;
    (void)view_offset;
    for (int k = 1; k < 3; k++)
        if (family_of(dtypes[k]) >= 0 && !descr_same(given[k], fd)) {
            PyErr_Format(PyExc_TypeError,
                         "softfp8: clip bounds of another format (%S and %S); cast one explicitly",
                         ((SFP8Descr *)fd)->format, ((SFP8Descr *)given[k])->format);
            return (NPY_CASTING)-1;
        }
    for (int k = 0; k < 3; k++) {
        if (family_of(dtypes[k]) >= 0) {
            Py_INCREF(fd);
            loop[k] = fd;
        } else {
            loop[k] = PyArray_DescrFromType(dtypes[k] == &PyArray_PyFloatDType ? NPY_DOUBLE : NPY_INT64);
        }
    }
    {
        PyArray_Descr *o = given[3] && descr_same(given[3], fd) ? given[3] : fd;
        Py_INCREF(o);
        loop[3] = o;
    }
    return NPY_NO_CASTING;
}

/* np.clip loops of DType cls: bounds of the format or Python numbers (9 loops),
   and a promoter sending NumPy-number bounds to the common DType */
PyObject *sfp8_register_clip(PyObject *dtype_cls)
{
    PyArray_DTypeMeta *cls = (PyArray_DTypeMeta *)dtype_cls;
    PyArray_DTypeMeta *const bound[3] = {cls, &PyArray_PyFloatDType, &PyArray_PyLongDType};
    PyObject *umath, *uf;
    if (family_of(cls) < 0) {
        PyErr_SetString(PyExc_TypeError, "not a softfp8 DType");
        return NULL;
    }
    umath = PyImport_ImportModule("numpy._core.umath");
    uf = umath ? PyObject_GetAttrString(umath, "clip") : NULL;
    Py_XDECREF(umath);
    if (!uf) return NULL;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            PyArray_DTypeMeta *dtypes[4] = {cls, bound[i], bound[j], cls};
            PyType_Slot slots[] = {
                {NPY_METH_resolve_descriptors, (void *)&clip_resolve},
                {NPY_METH_get_loop, (void *)&clip_get_loop},
                {0, NULL}
            };
            PyArrayMethod_Spec spec = {
                .name = "softfp8_clip",
                .nin = 3,
                .nout = 1,
                .casting = NPY_NO_CASTING,
                .flags = NPY_METH_SUPPORTS_UNALIGNED,
                .dtypes = dtypes,
                .slots = slots,
            };
            if (PyUFunc_AddLoopFromSpec(uf, &spec) < 0) {
                Py_DECREF(uf);
                return NULL;
            }
        }
    {
        PyObject *items[4] = {(PyObject *)cls, Py_None, Py_None, Py_None};
        if (add_promoter(uf, items, 4) < 0) {
            Py_DECREF(uf);
            return NULL;
        }
    }
    Py_DECREF(uf);
    Py_RETURN_NONE;
}
