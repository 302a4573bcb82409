/* The matrix glue's entry points for softfp8/_ext.pyx (npy/matmul.c). */
#ifndef SOFTFP8_NPY_MATMUL_API_H
#define SOFTFP8_NPY_MATMUL_API_H
#include <Python.h>
#include <stdint.h>
#include "mm/mm.h"
/* the BLAS routine for a product of those dimensions (GIL held): NULL for none */
const sfp8m_blas *sfp8_npy_blas(int64_t m, int64_t k, int64_t p);
/* mode None: report; 'native', 'numpy' or 'none': select -> {"previous", "using",
   "native_symbol", "native_library"} */
PyObject *sfp8_npy_set_blas(PyObject *mode);
#endif
