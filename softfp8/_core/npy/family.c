/*
 * NumPy glue: the table of format families (one DType class each) and their
 * descriptors (dtype instances): making, comparing, naming and pickling
 * descriptors, the Python hooks that build them from softfp8.Format objects,
 * and the "no parameters" descriptor of parametric families.  The DType
 * classes' NumPy slots are in dtype.c.
 */
#include "glue.h"

Family families[MAX_FAMILIES];
int n_families = 0;
PyObject *descr_factory = NULL;
PyObject *type_of_func = NULL;
PyObject *from_format_func = NULL;

/* type number of every softfp8 descriptor (see make_descr): above NumPy's
   builtin (< NPY_NTYPES_LEGACY), legacy user (NPY_USERDEF + n) and string
   (NPY_VSTRING) numbers and outside the character codes */
#define SFP8_DESCR_TYPE_NUM (1 << 24)

int family_of(PyArray_DTypeMeta *cls)
{
    for (int i = 0; i < n_families; i++)
        if (families[i].cls == cls) return i;
    return -1;
}

int is_sfp8_descr(PyArray_Descr *d) { return family_of(NPY_DTYPE(d)) >= 0; }

static void descr_dealloc(SFP8Descr *self)
{
    Py_XDECREF(self->format);
    PyArrayDescr_Type.tp_dealloc((PyObject *)self);
}

static PyObject *descr_repr(SFP8Descr *self)
{
    PyObject *r = PyObject_Repr(self->format);
    return r;
}

static PyObject *descr_str(SFP8Descr *self)
{
    if (PyUnicode_Check(self->format)) return Py_NewRef(self->format); /* unset_descr */
    return PyObject_GetAttrString(self->format, "name");
}

static Py_hash_t descr_hash(SFP8Descr *self)
{
    return PyObject_Hash(self->format);
}

static PyObject *descr_get_format(SFP8Descr *self, void *closure)
{
    (void)closure;
    Py_INCREF(self->format);
    return self->format;
}

static PyObject *descr_get_name(SFP8Descr *self, void *closure)
{
    (void)closure;
    return PyObject_GetAttrString(self->format, "name");
}

static PyObject *descr_get_type(SFP8Descr *self, void *closure)
{
    /* the scalar type; for parametric families a per-format subclass whose
       constructor knows the format (so dtype.type(x) works, as NumPy's mean uses) */
    (void)closure;
    if (!type_of_func) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 dtypes not initialised");
        return NULL;
    }
    return PyObject_CallOneArg(type_of_func, (PyObject *)self);
}

static PyGetSetDef descr_getset[] = {
    {"type", (getter)descr_get_type, NULL, "scalar type", NULL},
    {"format", (getter)descr_get_format, NULL, "the softfp8 format", NULL},
    {"name", (getter)descr_get_name, NULL, "format name", NULL},
    {NULL}
};

static PyObject *descr_reduce(SFP8Descr *self, PyObject *unused)
{
    (void)unused;
    if (!from_format_func) {
        PyErr_SetString(PyExc_RuntimeError, "softfp8 dtypes not initialised");
        return NULL;
    }
    return Py_BuildValue("(O(O))", from_format_func, self->format);
}

static PyMethodDef descr_methods[] = {
    {"__reduce__", (PyCFunction)descr_reduce, METH_NOARGS, NULL},
    {NULL}
};

static PyObject *descr_new_py(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    int i = family_of((PyArray_DTypeMeta *)cls);
    if (i < 0 || !descr_factory) {
        PyErr_SetString(PyExc_TypeError, "unknown softfp8 DType");
        return NULL;
    }
    {
        PyObject *call = Py_BuildValue("(iOO)", i, args ? args : Py_None, kwds ? kwds : Py_None);
        PyObject *res = call ? PyObject_Call(descr_factory, call, NULL) : NULL;
        Py_XDECREF(call);
        return res;
    }
}

static PyObject *descr_default_for(PyArray_DTypeMeta *cls)
{
    PyObject *empty = PyTuple_New(0);
    PyObject *res = empty ? descr_new_py((PyTypeObject *)cls, empty, NULL) : NULL;
    Py_XDECREF(empty);
    return res;
}

/* Create a descriptor of family i for the given format object / params. */
static PyObject *make_descr(int fam, PyObject *format, const sfp8_format *f)
{
    SFP8Descr *d = (SFP8Descr *)PyArrayDescr_Type.tp_new((PyTypeObject *)families[fam].cls, NULL, NULL);
    if (!d) return NULL;
    d->fmt = *f;
    sfp8_order_init(&d->order, f);
    d->format = format;
    Py_INCREF(format);
    d->base.elsize = f->bits <= 8 ? 1 : 2;
    d->base.alignment = d->base.elsize;
    d->base.kind = 'f';
    d->base.byteorder = f->bits <= 8 ? '|' : '=';
    /* NumPy gives new-style descriptors the type number -1, and einsum indexes
       its builtin kernel tables with it (einsum_sumprod.c.src only rejects
       numbers >= NPY_NTYPES_LEGACY), calling a neighbouring table's function.
       A number above every builtin, legacy-user and string type number makes
       it refuse cleanly ("invalid data type for einsum"), as for ml_dtypes. */
    d->base.type_num = SFP8_DESCR_TYPE_NUM;
    return (PyObject *)d;
}

int descr_same(PyArray_Descr *a, PyArray_Descr *b)
{
    if (a == b) return 1;
    if (!fmt_equal(descr_fmt(a), descr_fmt(b))) return 0;
    return PyObject_RichCompareBool(((SFP8Descr *)a)->format, ((SFP8Descr *)b)->format, Py_EQ) == 1;
}

PyArray_Descr *default_descr(PyArray_DTypeMeta *cls)
{
    return (PyArray_Descr *)descr_default_for(cls);
}

/* The "no parameters" descriptor of a parametric family (SoftFloatDType, the
   Tesla families).  NumPy asks for a descriptor of the loop's DType class
   without a target instance when it adapts a ufunc's out= operand of another
   dtype (PyArray_CastDescrToDType: `given_descrs[2] = {descr, NULL}`, then
   "cannot cast dtype %S to %S" on failure), e.g. np.positive(x, out=<float32>,
   casting="unsafe").  cast_resolve answers with this descriptor; the ufunc
   resolvers take the operands' format for any out= descriptor not equal to
   theirs, so the result is computed in the operands' format and NumPy casts it
   into out=.  Any cast to or from it raises (casts.c), so an array never gets
   it (x.astype(softfp8.SoftFloatDType) still asks for parameters). */
static PyObject *unset_descrs[MAX_FAMILIES];

PyArray_Descr *unset_descr(int fam)
{
    if (!unset_descrs[fam]) {
        /* any valid format fills the C fields (never read: casts refuse it and
           descr_same compares the Format objects too) */
        PyObject *name = PyUnicode_FromFormat("%s (no parameters)", ((PyTypeObject *)families[fam].cls)->tp_name);
        unset_descrs[fam] = name ? make_descr(fam, name, &sfp8_presets[0].format) : NULL;
        Py_XDECREF(name);
        if (!unset_descrs[fam]) return NULL;
    }
    return (PyArray_Descr *)Py_NewRef(unset_descrs[fam]);
}

int is_unset_descr(PyArray_Descr *d)
{
    return d && is_sfp8_descr(d) && PyUnicode_Check(((SFP8Descr *)d)->format);
}


/* A new DType class object named softfp8.<name> whose instances are softfp8
   descriptors (NumPy's PyArrayInitDTypeMeta_FromSpec, in dtype.c, completes it). */
PyArray_DTypeMeta *family_new_class(PyObject *name)
{
    PyArray_DTypeMeta *cls;
    PyTypeObject *t;
    const char *cname = PyUnicode_AsUTF8(name);
    char *tp_name;
    if (!cname) return NULL;
    tp_name = PyMem_Malloc(strlen(cname) + 16);
    cls = PyMem_Calloc(1, sizeof(PyArray_DTypeMeta));
    if (!tp_name || !cls) {
        PyMem_Free(tp_name);
        PyMem_Free(cls);
        PyErr_NoMemory();
        return NULL;
    }
    sprintf(tp_name, "softfp8.%s", cname);
    t = (PyTypeObject *)cls;
    {
        PyTypeObject proto = {PyVarObject_HEAD_INIT(NULL, 0)};
        memcpy(t, &proto, sizeof(PyTypeObject));
    }
    t->tp_name = tp_name;
    t->tp_basicsize = sizeof(SFP8Descr);
    t->tp_flags = Py_TPFLAGS_DEFAULT;
    t->tp_new = descr_new_py;
    t->tp_dealloc = (destructor)descr_dealloc;
    t->tp_repr = (reprfunc)descr_repr;
    t->tp_str = (reprfunc)descr_str;
    t->tp_hash = (hashfunc)descr_hash;
    /* CPython inherits tp_richcompare only together with tp_hash (both NULL in the
       subtype: inherit_slots in Objects/typeobject.c); softfp8 sets tp_hash, so without
       this line descriptors compared by identity.  NumPy's comparison is the DType's
       value semantics: descriptor.c arraydescr_richcompare, Py_EQ ->
       PyArray_EquivTypes (multiarraymodule.c) -> "no" cast safety, which cast_resolve
       (casts.c) gives exactly to descr_same pairs: equal parameters and equal Format
       (name and parameters), the same things descr_hash hashes. */
    t->tp_richcompare = PyArrayDescr_Type.tp_richcompare;
    t->tp_getset = descr_getset;
    t->tp_methods = descr_methods;
    t->tp_base = &PyArrayDescr_Type;
    Py_SET_TYPE(t, &PyArrayDTypeMeta_Type);
    if (PyType_Ready(t) < 0) return NULL;
    return cls;
}

/* Enter DType class cls in the table: its family index, or -1 with an error. */
int family_add(PyArray_DTypeMeta *cls, PyTypeObject *scalar_type, int parametric, int float_rank)
{
    int fam = n_families;
    if (n_families >= MAX_FAMILIES) {
        PyErr_SetString(PyExc_RuntimeError, "too many softfp8 DType families");
        return -1;
    }
    families[fam].cls = cls;
    families[fam].scalar_type = scalar_type;
    families[fam].parametric = parametric;
    families[fam].float_rank = float_rank;
    Py_INCREF(scalar_type);
    n_families++;
    return fam;
}

/* Undo the last family_add (its DType class could not be completed). */
void family_drop_last(void)
{
    n_families--;
    Py_CLEAR(families[n_families].scalar_type);
}

PyObject *sfp8_new_descr(PyObject *cls, PyObject *format, PyObject *params)
{
    sfp8_format f;
    int fam = family_of((PyArray_DTypeMeta *)cls);
    if (fam < 0) {
        PyErr_SetString(PyExc_TypeError, "not a softfp8 DType class");
        return NULL;
    }
    if (!PyArg_ParseTuple(params, "iiiiiiii", &f.bits, &f.is_signed, &f.exp_bits, &f.man_bits, &f.bias,
                          &f.specials, &f.subnormals, &f.saturate))
        return NULL;
    if (sfp8_validate(&f) != SFP8_OK) {
        PyErr_SetString(PyExc_ValueError, "invalid softfp8 format descriptor");
        return NULL;
    }
    return make_descr(fam, format, &f);
}
