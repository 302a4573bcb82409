/*
 * NumPy glue: ufunc loops.  One generic strided loop per operation (fast
 * tables first, then the exact core element by element), exact add
 * reductions through the superaccumulator, the reduction initial values and
 * the registration of every loop with its ufunc.
 */
#include "glue.h"
#include "accum.h"
#include "fast.h"
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

/* operation ids: enum sfp8x_op (ops.h) */

typedef struct {
    LoopData ld;
    sfp8_format f;
} UfuncData;

/* exact sum of an 8-bit array through the fast table; 0 if not covered */
static int fast_sum(const sfp8_format *f, const char *b, npy_intp sb, npy_intp n, SuperAcc *sa, uint8_t *fl)
{
    /* the table builder reads values through binary64: only formats whose
       values are all exact binary64 values */
    const sfp8f_sum *t = acc_binary64_exact(f) ? sfp8f_sum_table(f, n) : NULL;
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
                loop_publish(ld, sfp8f_run_binary8(tab, a, strides[0], b, strides[1], o, strides[2], n));
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
        const uint32_t *tab = sfp8f_unary(op, f, &env, n);
        if (tab) {
            loop_publish(ld, sfp8f_run_unary(tab, a, strides[0], sz, o, strides[1], osz, n));
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
    UfuncData *u = loopdata_alloc(sizeof(UfuncData));
    if (!u) return -1;
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
    if (def->nin == 2 && add_binary_promoters(ufunc, cls, def->boolout) < 0) return -1;
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
