/*
 * Ordering of codes: the ArrFuncs NumPy still reads through -- compare (used by
 * searchsorted and NumPy's generic algorithms), argmax / argmin, sort / argsort
 * of every kind (quicksort, heapsort, stable) -- and the sort / argsort
 * ArrayMethods (NumPy >= 2.4, PyUFunc_AddLoopsFromSpecs "sort" / "argsort"),
 * which np.sort / np.argsort / ndarray.sort call first and which take NumPy
 * 2.5's descending=True from their parameters; all on the order keys of
 * order.h, kept in each descriptor.
 *
 * Sorting is a stable LSD radix sort on the keys (one byte-wide pass for formats
 * of <= 8 bits, two for wider ones): linear time, so it serves every sort kind.
 * Descending: the same sort on the keys reversed, NaNs kept last (as NumPy
 * sorts floats descending), equal values in their original order.  The
 * elements themselves move unchanged (bits above the width included).  No
 * Python object is touched: NumPy may call these functions without the GIL.
 */
#include "glue.h"

#include <stdlib.h>

typedef sfp8_order order_info;

static inline int key_is_nan(const order_info *o, uint32_t k)
{
    return sfp8_order_is_nan(o, k);
}

/* the key map of arr's format: the descriptor's, else built in *tmp */
static const order_info *arr_order(void *arr, int *size, order_info *tmp)
{
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)arr);
    *size = (int)d->elsize;
    if (((SFP8Descr *)d)->order.ready) return &((SFP8Descr *)d)->order;
    sfp8_order_init(tmp, descr_fmt(d));
    return tmp;
}

int sfp8_arr_compare(const void *pa, const void *pb, void *arr)
{
    int sz;
    order_info tmp;
    const order_info *o = arr_order(arr, &sz, &tmp);
    uint32_t ka = sfp8_order_key(o, load_code(pa, sz)), kb = sfp8_order_key(o, load_code(pb, sz));
    return (ka > kb) - (ka < kb);
}

/* index of the first NaN, else of the first extreme value */
static int arg_extreme(char *ip, npy_intp n, npy_intp *ind, void *arr, int want_max)
{
    int sz;
    order_info tmp;
    const order_info *o = arr_order(arr, &sz, &tmp);
    uint32_t best;
    *ind = 0;
    if (n <= 0) return 0;
    best = sfp8_order_key(o, load_code(ip, sz));
    if (key_is_nan(o, best)) return 0;
    for (npy_intp i = 1; i < n; i++) {
        uint32_t k = sfp8_order_key(o, load_code(ip + i * sz, sz));
        if (key_is_nan(o, k)) {
            *ind = i;
            return 0;
        }
        if (want_max ? k > best : k < best) {
            best = k;
            *ind = i;
        }
    }
    return 0;
}

int sfp8_arr_argmax(char *ip, npy_intp n, npy_intp *max_ind, void *arr)
{
    return arg_extreme(ip, n, max_ind, arr, 1);
}

int sfp8_arr_argmin(char *ip, npy_intp n, npy_intp *min_ind, void *arr)
{
    return arg_extreme(ip, n, min_ind, arr, 0);
}

/* Counting passes of an LSD radix sort.  cnt0 / cnt1: the histograms of the low /
   high key byte (filled while the keys are computed, so each pass is one scatter). */
static void prefix(npy_intp *count)
{
    npy_intp pos = 0;
    for (int b = 0; b < 256; b++) {
        npy_intp c = count[b];
        count[b] = pos;
        pos += c;
    }
}

/* One stable scatter: the items of src, in order of byte `shift` of their key,
   into dst; keys follow into kdst when it is not NULL. */
#define RADIX_PASS(NAME, T)                                                              \
    static void NAME(const T *src, const uint16_t *ksrc, T *dst, uint16_t *kdst, npy_intp n, \
                     int shift, npy_intp *count)                                         \
    {                                                                                    \
        prefix(count);                                                                   \
        for (npy_intp i = 0; i < n; i++) {                                               \
            npy_intp j = count[(ksrc[i] >> shift) & 0xFF]++;                             \
            dst[j] = src[i];                                                             \
            if (kdst) kdst[j] = ksrc[i];                                                 \
        }                                                                                \
    }                                                                                    \
    /* sort items[0..n) by keys in place, stably (two passes when wide) */               \
    static int NAME##_sort(T *items, const uint16_t *keys, npy_intp n, int wide, npy_intp *cnt0, \
                           npy_intp *cnt1)                                               \
    {                                                                                    \
        T *tmp = malloc((size_t)n * sizeof(T));                                          \
        uint16_t *ktmp = NULL;                                                           \
        if (!tmp) return -1;                                                             \
        if (wide && !(ktmp = malloc((size_t)n * sizeof(uint16_t)))) {                    \
            free(tmp);                                                                   \
            return -1;                                                                   \
        }                                                                                \
        NAME(items, keys, tmp, ktmp, n, 0, cnt0);                                        \
        if (wide) NAME(tmp, ktmp, items, NULL, n, 8, cnt1);                              \
        else memcpy(items, tmp, (size_t)n * sizeof(T));                                  \
        free(ktmp);                                                                      \
        free(tmp);                                                                       \
        return 0;                                                                        \
    }

RADIX_PASS(radix_u8, uint8_t)
RADIX_PASS(radix_u16, uint16_t)
RADIX_PASS(radix_intp, npy_intp)

/* the keys of n codes (at start[idx[i]] when idx is not NULL), with the
   histograms of their two bytes; descending: every key but NaN's reversed
   (the largest value first, NaN still last) */
static inline uint16_t sort_key(const order_info *o, uint32_t c, int descending)
{
    uint32_t k = sfp8_order_key(o, c);
    /* the largest key of a non-NaN value is below NaN's (the mask, order.h) */
    if (descending && !key_is_nan(o, k)) k = (o->has_nan ? o->nan_key - 1 : o->mask) - k;
    return (uint16_t)k;
}

static uint16_t *keys_of(const order_info *o, const char *start, const npy_intp *idx, npy_intp n, int sz,
                         int descending, npy_intp *cnt0, npy_intp *cnt1)
{
    uint16_t *keys = malloc((size_t)n * sizeof(uint16_t));
    uint16_t lut[256];
    if (!keys) return NULL;
    memset(cnt0, 0, 256 * sizeof(npy_intp));
    memset(cnt1, 0, 256 * sizeof(npy_intp));
    if (sz == 1 && !idx) { /* one byte: the keys of all 256 storage bytes first */
        for (int c = 0; c < 256; c++) lut[c] = sort_key(o, (uint32_t)c, descending);
        for (npy_intp i = 0; i < n; i++) {
            uint16_t k = lut[((const uint8_t *)start)[i]];
            keys[i] = k;
            cnt0[k & 0xFF]++;
            cnt1[k >> 8]++;
        }
        return keys;
    }
    for (npy_intp i = 0; i < n; i++) {
        uint16_t k = sort_key(o, load_code(start + (idx ? idx[i] : i) * sz, sz), descending);
        keys[i] = k;
        cnt0[k & 0xFF]++;
        cnt1[k >> 8]++;
    }
    return keys;
}

/* Sort the n contiguous elements at start (tosort NULL) or the indices tosort
   (argsort) by the keys of the elements, stably. */
static int sort_keys(const order_info *o, int sz, void *start, npy_intp *tosort, npy_intp n, int descending)
{
    int r;
    uint16_t *keys;
    npy_intp cnt0[256], cnt1[256];
    if (n < 2) return 0;
    if (!(keys = keys_of(o, (const char *)start, tosort, n, sz, descending, cnt0, cnt1))) return -1;
    if (tosort)
        r = radix_intp_sort(tosort, keys, n, o->bits > 8, cnt0, cnt1);
    else /* NumPy sorts a contiguous, aligned buffer (it copies other layouts) */
        r = sz == 1 ? radix_u8_sort((uint8_t *)start, keys, n, o->bits > 8, cnt0, cnt1)
                    : radix_u16_sort((uint16_t *)start, keys, n, o->bits > 8, cnt0, cnt1);
    free(keys);
    return r;
}

static int sort_common(void *start, npy_intp *tosort, npy_intp n, void *arr)
{
    int sz;
    order_info tmp;
    const order_info *o = arr_order(arr, &sz, &tmp);
    return sort_keys(o, sz, start, tosort, n, 0);
}

int sfp8_arr_sort(void *start, npy_intp n, void *arr)
{
    return sort_common(start, NULL, n, arr);
}

int sfp8_arr_argsort(void *start, npy_intp *tosort, npy_intp n, void *arr)
{
    return sort_common(start, tosort, n, arr);
}

/* ---- the sort / argsort ArrayMethods --------------------------------------- */

/* NumPy calls them with one contiguous run: data[0] the elements (sort: data[1]
   is the same buffer; argsort: data[1] the indices 0..n-1 to permute) */
static int method_sort(PyArrayMethod_Context *context, int arg, char *const data[], npy_intp n)
{
    PyArray_Descr *d = context->descriptors[0];
    const PyArrayMethod_SortParameters *p = context->parameters;
    int descending = p && (p->flags & NPY_SORT_DESCENDING);
    order_info tmp;
    const order_info *o = &((SFP8Descr *)d)->order;
    if (!o->ready) {
        sfp8_order_init(&tmp, descr_fmt(d));
        o = &tmp;
    }
    if (sort_keys(o, (int)d->elsize, data[0], arg ? (npy_intp *)data[1] : NULL, n, descending) < 0) {
        NPY_ALLOW_C_API_DEF
        NPY_ALLOW_C_API;
        PyErr_NoMemory();
        NPY_DISABLE_C_API;
        return -1;
    }
    return 0;
}

static int sort_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                     npy_intp const strides[], NpyAuxData *auxdata)
{
    (void)strides;
    (void)auxdata;
    return method_sort(context, 0, data, dimensions[0]);
}

static int argsort_loop(PyArrayMethod_Context *context, char *const data[], npy_intp const dimensions[],
                        npy_intp const strides[], NpyAuxData *auxdata)
{
    (void)strides;
    (void)auxdata;
    return method_sort(context, 1, data, dimensions[0]);
}

/* every kind (default, stable, NumPy 2.4's heapsort bit) and both directions:
   the stable radix sort, which raises no floating-point error */
#define SORT_GET_LOOP(name, loop)                                                                  \
    SFP8_GET_LOOP(name, (*out_loop = loop, *out_transferdata = NULL,                               \
                         *flags = NPY_METH_NO_FLOATINGPOINT_ERRORS, (void)context, 0))
SORT_GET_LOOP(sort_get_loop, sort_loop)
SORT_GET_LOOP(argsort_get_loop, argsort_loop)

static NPY_CASTING sort_resolve(PyArrayMethodObject *self, PyArray_DTypeMeta *const dtypes[],
                                PyArray_Descr *const given[], PyArray_Descr *loop[], npy_intp *view_offset)
{
    (void)self;
    (void)view_offset;
    Py_INCREF(given[0]);
    loop[0] = given[0];
    if (dtypes[1] == dtypes[0]) {   /* sort: in place */
        Py_INCREF(given[0]);
        loop[1] = given[0];
    } else {                        /* argsort: the indices */
        loop[1] = PyArray_DescrFromType(NPY_INTP);
        if (!loop[1]) {
            Py_DECREF(loop[0]);
            return (NPY_CASTING)-1;
        }
    }
    return NPY_NO_CASTING;
}

int add_sort_methods(PyArray_DTypeMeta *cls)
{
    PyArray_DTypeMeta *sort_dtypes[2] = {cls, cls}, *argsort_dtypes[2] = {cls, &PyArray_IntpDType};
    PyType_Slot sort_slots[] = {
        {NPY_METH_resolve_descriptors, (void *)&sort_resolve},
        {NPY_METH_get_loop, (void *)&sort_get_loop},
        {0, NULL}
    };
    PyType_Slot argsort_slots[] = {
        {NPY_METH_resolve_descriptors, (void *)&sort_resolve},
        {NPY_METH_get_loop, (void *)&argsort_get_loop},
        {0, NULL}
    };
    PyArrayMethod_Spec sort_spec = {
        .name = "softfp8_sort", .nin = 1, .nout = 1, .casting = NPY_NO_CASTING,
        .flags = NPY_METH_NO_FLOATINGPOINT_ERRORS, .dtypes = sort_dtypes, .slots = sort_slots,
    };
    PyArrayMethod_Spec argsort_spec = {
        .name = "softfp8_argsort", .nin = 1, .nout = 1, .casting = NPY_NO_CASTING,
        .flags = NPY_METH_NO_FLOATINGPOINT_ERRORS, .dtypes = argsort_dtypes, .slots = argsort_slots,
    };
    PyUFunc_LoopSlot loops[] = {
        {"sort", &sort_spec},
        {"argsort", &argsort_spec},
        {NULL, NULL},
    };
    return PyUFunc_AddLoopsFromSpecs(loops);
}
