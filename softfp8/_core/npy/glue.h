/*
 * Private header of the NumPy glue (softfp8/_core/npy/): the types shared by
 * its files and the functions one file calls in another.  Every file of the
 * glue includes this header first; api.c (which defines SFP8_NPY_IMPORT) owns
 * NumPy's C-API tables, the others use them.
 *
 * The files call each other in one direction only (no cycle; a cross-file call
 * is a dependency), from the bottom up:
 *   api.c context.c longdouble.c order.c   (no other glue file)
 *   family.c -> scalar.c -> casts.c -> promotion.c -> pyscalar.c
 *   dtype.c (DType classes: family, scalar, casts, order, dot)
 *   loops.c, matmul.c (ufunc loops, products)
 *   dot.c (np.dot: one call into matmul.c) <- dtype.c
 *   module.c (the entry points called by softfp8/_ext.pyx)
 * No glue file imports softfp8's Python modules by name: what it needs from
 * Python is passed in at import through module.c's entry points.
 *
 * The rounding environment and the sticky-flag cell are read from the Python
 * context once, when a ufunc or cast starts (get_loop, with the GIL), and
 * never touched as Python objects inside the loops.
 */
#ifndef SOFTFP8_NPY_GLUE_H
#define SOFTFP8_NPY_GLUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
/* NumPy >= 2.4 (pyproject.toml): its sort / argsort ArrayMethods
   (PyUFunc_AddLoopsFromSpecs, PyArrayMethod_Context.parameters) */
#define NPY_TARGET_VERSION NPY_2_4_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL sfp8_npy_ARRAY_API
#define PY_UFUNC_UNIQUE_SYMBOL sfp8_npy_UFUNC_API
#ifndef SFP8_NPY_IMPORT
#define NO_IMPORT_ARRAY
#define NO_IMPORT_UFUNC
#endif
#include <numpy/ndarraytypes.h>
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>
#include <numpy/dtype_api.h>
#include <numpy/arrayscalars.h>

#include <string.h>

#include "softfp8/softfp8.h"
#include "npy_api.h"
#include "order.h"
#include "codes.h"

typedef struct PyArrayMethodObject_tag PyArrayMethodObject;

/* ---- NumPy's C-API tables (api.c) --------------------------------------- */
int sfp8_npy_import_api(void);

/* ---- context state (context.c) ----------------------------------------- */

typedef struct {
    PyObject_HEAD
    int rounding;        /* enum sfp8_rounding                         */
    int saturate;        /* -1: the format's default; 0/1              */
    int tininess_before;
    int sr_bits;
    int isa;             /* enum sfp8_isa | FTZ | DAZ (softfp8.isa())   */
    int seeded;
    unsigned long long seed;
    unsigned long long counter; /* operations rounded under this state  */
    PyObject *cell;      /* FlagCell: the sticky flags                  */
} StateObject;

typedef struct {
    PyObject_HEAD
    unsigned int flags;
} FlagCellObject;

extern PyTypeObject FlagCellType;
extern PyTypeObject StateType;
extern PyObject *state_getter; /* Python callable -> StateObject */

/* Per-call environment, captured at get_loop time.  Every auxdata kind starts
 * with a LoopData and is made by loopdata_alloc; its one clone copies `size`
 * bytes and takes a new reference on the flag cell. */
typedef struct {
    NpyAuxData base;
    size_t size;         /* bytes of the whole block (this kind's struct) */
    sfp8_env env;
    int sat_default;     /* saturate was "format default" */
    int stoch;
    int seeded;
    uint64_t seed, stream, index;
    PyObject *cell;      /* strong reference, released in free (GIL held) */
    unsigned int *flags; /* &cell->flags                                 */
} LoopData;

/* A zeroed block of size >= sizeof(LoopData) bytes whose LoopData is filled
 * from the current context (GIL held); NULL with an exception set. */
void *loopdata_alloc(size_t size);
/* the current context's rounding mode, or -1 with a Python error */
int sfp8_context_rounding(void);
void loopdata_free(NpyAuxData *p);
void loop_publish(LoopData *d, unsigned int fl);

static inline void loop_env_for(LoopData *d, const sfp8_format *f, sfp8_env *env)
{
    *env = d->env;
    if (d->sat_default) env->saturate = f->saturate;
}

static inline uint32_t loop_random(LoopData *d)
{
    return sfp8_random_u32(d->seed, d->stream, d->index++);
}

/* ---- format families and their descriptors (family.c) ------------------ */

typedef struct {
    PyArray_Descr base;
    sfp8_format fmt;
    PyObject *format; /* the softfp8.Format object */
    sfp8_order order; /* derived from fmt when the descriptor is made */
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

extern Family families[MAX_FAMILIES];
extern int n_families;
/* Python hooks (sfp8_set_hooks) */
extern PyObject *descr_factory;   /* (family_index, args, kwargs) -> descr or raise */
extern PyObject *type_of_func;    /* (descr) -> descr.type */
extern PyObject *from_format_func; /* (format) -> descr, for descr.__reduce__ */

int family_of(PyArray_DTypeMeta *cls);
/* a new DType class softfp8.<name> (completed by dtype.c) */
PyArray_DTypeMeta *family_new_class(PyObject *name);
/* enter it in the table: its family index (-1: error); family_drop_last undoes it */
int family_add(PyArray_DTypeMeta *cls, PyTypeObject *scalar_type, int parametric, int float_rank);
void family_drop_last(void);
int is_sfp8_descr(PyArray_Descr *d);
int descr_same(PyArray_Descr *a, PyArray_Descr *b);
PyArray_Descr *default_descr(PyArray_DTypeMeta *cls);
PyArray_Descr *unset_descr(int fam);
int is_unset_descr(PyArray_Descr *d);

static inline const sfp8_format *descr_fmt(PyArray_Descr *d) { return &((SFP8Descr *)d)->fmt; }

static inline int fmt_equal(const sfp8_format *a, const sfp8_format *b)
{
    return memcmp(a, b, sizeof(sfp8_format)) == 0;
}

static inline int is_zero_value(const sfp8_format *f, uint32_t c)
{
    int cls = sfp8_classify(f, c);
    return cls == SFP8_CLASS_ZERO || (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH);
}

/* element access: load_code / store_code / load_raw / store_raw (codes.h) */

/* ---- ordering (order.c): ArrFuncs compare, argmax/argmin, sort/argsort ---- */
int sfp8_arr_compare(const void *pa, const void *pb, void *arr);
int sfp8_arr_argmax(char *ip, npy_intp n, npy_intp *max_ind, void *arr);
int sfp8_arr_argmin(char *ip, npy_intp n, npy_intp *min_ind, void *arr);
int sfp8_arr_sort(void *start, npy_intp n, void *arr);
int sfp8_arr_argsort(void *start, npy_intp *tosort, npy_intp n, void *arr);
/* np.sort / np.argsort's ArrayMethods of DType cls (both directions) */
int add_sort_methods(PyArray_DTypeMeta *cls);

/* ---- scalars (scalar.c) ------------------------------------------------- */

/* Scalar object layout (C base of every family's scalar type). */
typedef struct {
    PyObject_HEAD
    uint32_t code;
    PyObject *descr;
} ScalarObject;

extern PyTypeObject ScalarBaseType;
/* Convert a Python object to a code of descr (context rounding). */
int object_to_code(PyArray_Descr *descr, PyObject *obj, uint32_t *out);
/* The same under a given environment, flags ORed into *flags (strings, Python
   and NumPy numbers; fmt_for_errors names the format in error messages). */
int object_value_to_code(const sfp8_format *f, PyObject *obj, const sfp8_env *env, uint8_t *flags,
                         uint32_t *out, PyObject *fmt_for_errors);
PyObject *sfp8_getitem(PyArray_Descr *descr, char *data);
int sfp8_setitem(PyArray_Descr *descr, PyObject *obj, char *data);
PyObject *scalar_from_code(PyObject *unused, PyObject *args);
/* numpy.exceptions.ComplexWarning "Casting complex values to real discards
   the imaginary part" (-1 when it became an error) */
int sfp8_warn_complex(void);

/* ---- long double (longdouble.c) ----------------------------------------- */

/* long double: exact on the x87 80-bit format (decoded bit by bit, rounded
   once by the core); elsewhere through double (see casts.c) */
#include <float.h>
#if LDBL_MANT_DIG == 64 && LDBL_MAX_EXP == 16384 && (defined(__x86_64__) || defined(__i386__))
#define SFP8_X87_LONG_DOUBLE 1
#else
#define SFP8_X87_LONG_DOUBLE 0
#endif
/* the long double at p rounded into f */
uint32_t ld_to_code(const sfp8_format *f, const void *p, const sfp8_env *env, uint8_t *flags);
/* code c of f as a long double at out (exact whenever long double holds the value) */
void ld_from_code(const sfp8_format *f, uint32_t c, const sfp8_env *env, uint8_t *flags, void *out);

/* ---- casts (casts.c) ---------------------------------------------------- */

/* Python hooks: (dtype_a, dtype_b) -> bool, every value of a in b (set by
   module.c); the ml_dtypes equivalent of an ml_dtypes dtype */
extern PyObject *contains_func;
void sfp8_casts_set_ml_hook(PyObject *fn);
/* ml_dtypes' float DTypes (when ml_dtypes is installed): how many, the i-th,
   and the promotion rank of one (dtype.c common_dtype; 0: none) */
int sfp8_ml_partner_count(void);
PyArray_DTypeMeta *sfp8_ml_partner(int i);
int sfp8_ml_rank(PyArray_DTypeMeta *cls);

/* NumPy's numeric DTypes a softfp8 DType casts to and from (and promotes with) */
extern PyArray_DTypeMeta *builtin_cast_partners[32];
extern int n_builtin_partners;
void init_builtin_partners(void);
/* NULL-terminated cast specs of family fam (to itself, strings, NumPy's
   numeric DTypes and the families registered before it) */
PyArrayMethod_Spec **cast_specs_for(int fam);

/* ---- promotion (promotion.c) -------------------------------------------- */

int add_promoter(PyObject *ufunc, PyObject *const items[], int nargs);
/* the promoters of a binary ufunc for DType cls; pyloops: the ufunc has loops
   of its own for Python int/float partners (pyscalar.c), which then get none */
int add_binary_promoters(PyObject *ufunc, PyArray_DTypeMeta *cls, int boolout, int pyloops);
/* the same with another promoter function */
typedef int promoter_fn(PyObject *ufunc, PyArray_DTypeMeta *const op_dtypes[],
                        PyArray_DTypeMeta *const signature[], PyArray_DTypeMeta *new_op_dtypes[]);
int add_promoter_fn(PyObject *ufunc, PyObject *const items[], int nargs, promoter_fn *fn);
int add_binary_promoters_fn(PyObject *ufunc, PyArray_DTypeMeta *cls, int boolout, int pyloops, promoter_fn *fn);
/* the matrix products' promoter: mixed softfp8 formats raise a clear UFuncTypeError */
int add_product_promoter(PyObject *ufunc, PyArray_DTypeMeta *cls);

/* ---- Python int/float operands (pyscalar.c) ----------------------------- */

/* loops (D, PyFloat), (PyFloat, D), (D, PyLong), (PyLong, D) of ufunc for DType
   cls if its operation is one pyscalar.c handles: 1 added, 0 none, -1 error */
int add_pyscalar_loops(PyObject *ufunc, PyArray_DTypeMeta *cls);

/* ---- ufunc loops (loops.c) ---------------------------------------------- */

/* a get_loop function `fname` returning `call` (an expression in context,
   out_loop, out_transferdata and flags): NumPy passes no per-method data to
   get_loop, so each loop kind has its own small function */
#define SFP8_GET_LOOP(fname, call)                                                                 \
    static int fname(PyArrayMethod_Context *context, int aligned, int move_references,             \
                     const npy_intp *strides, PyArrayMethod_StridedLoop **out_loop,                \
                     NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags)                  \
    {                                                                                              \
        (void)aligned;                                                                             \
        (void)move_references;                                                                     \
        (void)strides;                                                                             \
        return call;                                                                               \
    }

NPY_CASTING ufunc_resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
                          PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *view_offset,
                          int nin, int nout, int bool_out);
NPY_CASTING resolve_2_1(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
                        PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *vo);

/* ---- matmul (matmul.c) -------------------------------------------------- */

int add_matmul_loops(PyObject *numpy_module, PyArray_DTypeMeta *cls);
/* one exact dot product sum a[l] * b[l] (l < n, strides in bytes) of codes of
   f, rounded once into f under env, stored at out; returns the flags (the
   exact element of matmul, for np.dot: dot.c).  Stochastic rounding takes the
   random word sfp8_random_u32(seed, stream, index), as matmul's output would */
unsigned sfp8_dot_element(const sfp8_format *f, const sfp8_env *env, uint64_t seed, uint64_t stream, uint64_t index,
                          const char *a, npy_intp sa, const char *b, npy_intp sb, npy_intp n, char *out);

/* ---- np.dot and friends (dot.c) ----------------------------------------- */

/* the dotfunc of family fam (NumPy >= 2.5 calls it) */
PyArray_DotFunc *sfp8_dotfunc(int fam);
/* ensure_canonical (dtype.c): NumPy canonicalised d on this thread (GIL held) */
void sfp8_dot_note_descr(PyArray_Descr *d);

#endif
