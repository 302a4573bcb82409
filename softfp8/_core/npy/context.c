/*
 * NumPy glue: the context state (a small C object owned by Python's
 * contextvars), its sticky-flag cell, and the per-call loop data every cast,
 * ufunc and matmul loop carries.
 */
#include "glue.h"

#include <errno.h>
#include <fenv.h>
#include <sys/random.h>
#include <structmember.h>

static PyMemberDef cell_members[] = {
    {"flags", T_UINT, offsetof(FlagCellObject, flags), 0, "sticky flag bits"},
    {NULL}
};

PyTypeObject FlagCellType = {
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
    {"isa", T_INT, offsetof(StateObject, isa), 0, NULL},
    {"seeded", T_INT, offsetof(StateObject, seeded), 0, NULL},
    {"seed", T_ULONGLONG, offsetof(StateObject, seed), 0, NULL},
    {"counter", T_ULONGLONG, offsetof(StateObject, counter), 0, NULL},
    {"cell", T_OBJECT_EX, offsetof(StateObject, cell), 0, NULL},
    {NULL}
};

PyTypeObject StateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "softfp8._ext.State",
    .tp_basicsize = sizeof(StateObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)state_dealloc,
    .tp_members = state_members,
};

PyObject *state_getter = NULL; /* Python callable -> StateObject */

void loopdata_free(NpyAuxData *p)
{
    LoopData *d = (LoopData *)p;
    Py_XDECREF(d->cell);
    PyMem_Free(d);
}

/* the one clone of every auxdata kind: a copy of the whole block holding its
   own reference on the flag cell (flags still points into that cell) */
static NpyAuxData *loopdata_clone(NpyAuxData *p)
{
    size_t size = ((LoopData *)p)->size;
    LoopData *d = PyMem_Malloc(size);
    if (!d) return NULL;
    memcpy(d, p, size);
    Py_XINCREF(d->cell);
    return (NpyAuxData *)d;
}

/* fill buf with n bytes from the kernel's entropy source */
static int fill_entropy(void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

/* the current context's rounding mode, or -1 with a Python error */
int sfp8_context_rounding(void)
{
    PyObject *res;
    int r;
    if (!state_getter) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 context not initialised");
        return -1;
    }
    res = PyObject_CallNoArgs(state_getter);
    if (!res) return -1;
    if (!PyObject_TypeCheck(res, &StateType)) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_TypeError, "softfp8 context getter returned a non-State");
        return -1;
    }
    r = ((StateObject *)res)->rounding;
    Py_DECREF(res);
    return r;
}

void *loopdata_alloc(size_t size)
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
    d = PyMem_Calloc(1, size);
    if (!d) {
        Py_DECREF(res);
        PyErr_NoMemory();
        return NULL;
    }
    d->base.free = loopdata_free;
    d->base.clone = loopdata_clone;
    d->size = size;
    d->env.rounding = st->rounding;
    d->env.tininess_before = st->tininess_before;
    d->env.sr_bits = st->sr_bits;
    d->env.isa = st->isa;
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
        if (fill_entropy(&d->seed, sizeof(d->seed)) < 0) {
            loopdata_free((NpyAuxData *)d);
            return NULL;
        }
    }
    return d;
}

/* publish flags: sticky cell (atomic OR) and NumPy's FP error machinery */
static void publish(unsigned int *cell, unsigned int fl)
{
    int fe = 0;
    if (!fl) return;
    __atomic_fetch_or(cell, fl, __ATOMIC_RELAXED);
    if (fl & SFP8_FLAG_OVERFLOW) fe |= FE_OVERFLOW;
    if (fl & SFP8_FLAG_UNDERFLOW) fe |= FE_UNDERFLOW;
    if (fl & SFP8_FLAG_INVALID) fe |= FE_INVALID;
    if (fl & SFP8_FLAG_DIVBYZERO) fe |= FE_DIVBYZERO;
    if (fe) feraiseexcept(fe);
}

void loop_publish(LoopData *d, unsigned int fl)
{
    publish(d->flags, fl);
}

/* The flags of a matrix product computed outside a ufunc loop (softfp8.matmul with a
   model, softfp8.scaled_mm; GIL held): published as a loop publishes them, then handed
   to np.errstate as NumPy does after a ufunc's loop -- it reads the FP status back
   (PyUFunc_getfperr) and calls PyUFunc_GiveFloatingpointErrors(name, ...), which warns,
   raises FloatingPointError, calls the errstate callback or ignores, per flag. */
PyObject *sfp8_publish_flags(PyObject *cell, unsigned int fl, const char *name)
{
    if (!PyObject_TypeCheck(cell, &FlagCellType)) {
        PyErr_Format(PyExc_TypeError, "publish_flags needs a FlagCell, got %R", cell);
        return NULL;
    }
    if (fl) {
        PyUFunc_clearfperr();
        publish(&((FlagCellObject *)cell)->flags, fl);
        if (PyUFunc_GiveFloatingpointErrors(name, PyUFunc_getfperr()) < 0) return NULL;
    }
    Py_RETURN_NONE;
}
