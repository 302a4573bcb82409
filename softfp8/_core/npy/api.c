/*
 * NumPy glue: NumPy's C-API tables.  This file defines SFP8_NPY_IMPORT and so
 * owns the tables (PY_ARRAY_UNIQUE_SYMBOL / PY_UFUNC_UNIQUE_SYMBOL, glue.h);
 * every other file of the glue uses them.
 */
#define SFP8_NPY_IMPORT
#include "glue.h"

/* fill the tables (module initialisation): 0, or -1 with an ImportError */
int sfp8_npy_import_api(void)
{
    if (PyArray_ImportNumPyAPI() < 0) return -1;
    if (PyUFunc_ImportUFuncAPI() < 0) return -1;
    return 0;
}
