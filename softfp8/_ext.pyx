# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Low-level bridge to the softfp8 C core (internal; use softfp8.bits)."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

cnp.import_array()

cdef extern from "softfp8/softfp8.h":
    ctypedef struct sfp8_format:
        int bits
        int is_signed
        int exp_bits
        int man_bits
        int bias
        int specials
        int subnormals
        int saturate
    ctypedef struct sfp8_env:
        int rounding
        int saturate
        int tininess_before
        int sr_bits
        uint32_t random
    ctypedef struct sfp8_preset:
        const char *name
        sfp8_format format
        int bias_parameter
    enum: SFP8_NUM_PRESETS
    const sfp8_preset sfp8_presets[]
    const sfp8_format sfp8_binary32
    const sfp8_format sfp8_binary64
    int sfp8_validate(const sfp8_format *f)
    const char *sfp8_error_field(int err)
    uint32_t sfp8_max_code(const sfp8_format *f)
    uint32_t sfp8_min_normal_code(const sfp8_format *f)
    uint32_t sfp8_min_subnormal_code(const sfp8_format *f)
    uint32_t sfp8_default_nan(const sfp8_format *f)
    int sfp8_classify(const sfp8_format *f, uint64_t a)
    uint32_t sfp8_random_u32(uint64_t seed, uint64_t stream, uint64_t index)

cdef extern from "kernels.h":
    ctypedef struct sfp8_rng:
        const uint32_t *random
        int seeded
        uint64_t seed
        uint64_t stream
        uint64_t index0
    void sfp8_kernel_binary(int op, const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                            const uint32_t *a, const uint32_t *b, size_t n, uint32_t *out,
                            uint8_t *flags) nogil
    void sfp8_kernel_unary(int op, const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                           const uint32_t *a, size_t n, uint32_t *out, uint8_t *flags) nogil
    void sfp8_kernel_fma(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                         const uint32_t *a, const uint32_t *b, const uint32_t *c, size_t n,
                         uint32_t *out, uint8_t *flags) nogil
    void sfp8_kernel_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                             const sfp8_rng *rng, const uint64_t *a, size_t n, uint64_t *out,
                             uint8_t *flags) nogil
    void sfp8_kernel_to_int64(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                              const uint32_t *a, size_t n, int64_t *out, uint8_t *flags) nogil
    void sfp8_kernel_from_int64(const sfp8_format *f, const sfp8_env *env, const sfp8_rng *rng,
                                const int64_t *a, size_t n, uint32_t *out, uint8_t *flags) nogil

cdef extern from "ops.h":
    enum sfp8x_op:
        X_ADD, X_SUB, X_MUL, X_DIV, X_MAX, X_MIN, X_FMAX, X_FMIN, X_COPYSIGN,
        X_CMP_QUIET, X_CMP_SIGNALING, X_NEG, X_ABS, X_SQRT, X_RINT, X_RINT_EXACT

cdef extern from "fast.h":
    int sfp8f_enabled()
    int sfp8f_set_enabled(int on)
    int sfp8f_simd_level()
    int sfp8f_set_simd(int level)
    void sfp8f_cache_stats(size_t *tables, size_t *nbytes)

OPS = {"add": X_ADD, "sub": X_SUB, "mul": X_MUL, "div": X_DIV, "min": X_MIN, "max": X_MAX,
       "minnum": X_FMIN, "maxnum": X_FMAX, "cmp_quiet": X_CMP_QUIET,
       "cmp_signaling": X_CMP_SIGNALING, "copysign": X_COPYSIGN, "sqrt": X_SQRT,
       "round_integral": X_RINT, "round_integral_exact": X_RINT_EXACT, "neg": X_NEG, "abs": X_ABS}


def fast_enabled():
    """Fast-path setting: 0 off (exact core only), 1 on, 2 eager (tables built on first use)."""
    return sfp8f_enabled()


def set_fast(int level):
    """Switch the fast paths (0 off, 1 on, 2 eager); returns the previous setting.

    The initial setting comes from the SOFTFP8_FAST environment variable
    (0/off disables, 2 is eager, anything else or unset is on)."""
    if level not in (0, 1, 2):
        raise ValueError(f"fast-path level must be 0, 1 or 2, got {level!r}")
    return sfp8f_set_enabled(level)


def fast_cache_stats():
    """(number of fast-path tables built in this process, their bytes)."""
    cdef size_t t = 0, b = 0
    sfp8f_cache_stats(&t, &b)
    return int(t), int(b)


def simd_level():
    """SIMD level of the fast kernels: 2 AVX-512 (F/BW/VL/DQ/VBMI), 0 portable C."""
    return sfp8f_simd_level()


def set_simd(int level):
    """Choose the SIMD level (clamped to what the CPU has); returns the previous one.
    SOFTFP8_SIMD=0 in the environment starts with portable C."""
    if level not in (0, 2):
        raise ValueError(f"SIMD level must be 0 or 2, got {level!r}")
    return sfp8f_set_simd(level)


cdef sfp8_format to_format(tuple p) except *:
    cdef sfp8_format f
    f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials, f.subnormals, f.saturate = p
    return f


cdef tuple from_format(const sfp8_format *f):
    return (f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials, f.subnormals,
            f.saturate)


BINARY32 = from_format(&sfp8_binary32)
BINARY64 = from_format(&sfp8_binary64)


def presets():
    """[(name, params, bias_parameter)] from the C preset table."""
    return [(sfp8_presets[i].name.decode(), from_format(&sfp8_presets[i].format),
             bool(sfp8_presets[i].bias_parameter)) for i in range(SFP8_NUM_PRESETS)]


def validate(tuple params):
    """None if the descriptor is valid, else the name of the first bad field."""
    cdef sfp8_format f = to_format(params)
    cdef int err = sfp8_validate(&f)
    if err == 0:
        return None
    return sfp8_error_field(err).decode()


def special_codes(tuple params):
    cdef sfp8_format f = to_format(params)
    return {"max": sfp8_max_code(&f), "min_normal": sfp8_min_normal_code(&f),
            "min_subnormal": sfp8_min_subnormal_code(&f), "default_nan": sfp8_default_nan(&f)}


def classify(tuple params, uint64_t code):
    cdef sfp8_format f = to_format(params)
    return sfp8_classify(&f, code)


def random_u32(uint64_t seed, uint64_t stream, uint64_t index):
    return sfp8_random_u32(seed, stream, index)


cdef void fill_env(sfp8_env *env, tuple envp):
    env.rounding, env.saturate, env.tininess_before, env.sr_bits = envp
    env.random = 0


cdef void fill_rng(sfp8_rng *rng, object random, tuple rngp):
    # rngp = (seeded, seed, stream, index0); random: None or contiguous uint32 array
    cdef const uint32_t[::1] rv
    rng.seeded, rng.seed, rng.stream, rng.index0 = rngp
    rng.random = NULL
    if random is not None:
        rv = random
        if rv.shape[0] > 0:
            rng.random = &rv[0]


def binary(str op, tuple params, tuple envp, tuple rngp, object random,
           const uint32_t[::1] a, const uint32_t[::1] b):
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef size_t n = a.shape[0]
    cdef int opc = OPS[op]
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    out = np.empty(n, dtype=np.uint32)
    flags = np.zeros(n, dtype=np.uint8)
    cdef uint32_t[::1] ov = out
    cdef uint8_t[::1] fv = flags
    if n:
        with nogil:
            sfp8_kernel_binary(opc, &f, &env, &rng, &a[0], &b[0], n, &ov[0], &fv[0])
    return out, flags


def unary(str op, tuple params, tuple envp, tuple rngp, object random, const uint32_t[::1] a):
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef size_t n = a.shape[0]
    cdef int opc = OPS[op]
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    out = np.empty(n, dtype=np.uint32)
    flags = np.zeros(n, dtype=np.uint8)
    cdef uint32_t[::1] ov = out
    cdef uint8_t[::1] fv = flags
    if n:
        with nogil:
            sfp8_kernel_unary(opc, &f, &env, &rng, &a[0], n, &ov[0], &fv[0])
    return out, flags


def fma(tuple params, tuple envp, tuple rngp, object random,
        const uint32_t[::1] a, const uint32_t[::1] b, const uint32_t[::1] c):
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef size_t n = a.shape[0]
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    out = np.empty(n, dtype=np.uint32)
    flags = np.zeros(n, dtype=np.uint8)
    cdef uint32_t[::1] ov = out
    cdef uint8_t[::1] fv = flags
    if n:
        with nogil:
            sfp8_kernel_fma(&f, &env, &rng, &a[0], &b[0], &c[0], n, &ov[0], &fv[0])
    return out, flags


def convert(tuple src, tuple dst, tuple envp, tuple rngp, object random, const uint64_t[::1] a):
    cdef sfp8_format fs = to_format(src)
    cdef sfp8_format fd = to_format(dst)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef size_t n = a.shape[0]
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    out = np.empty(n, dtype=np.uint64)
    flags = np.zeros(n, dtype=np.uint8)
    cdef uint64_t[::1] ov = out
    cdef uint8_t[::1] fv = flags
    if n:
        with nogil:
            sfp8_kernel_convert(&fs, &fd, &env, &rng, &a[0], n, &ov[0], &fv[0])
    return out, flags


def to_int64(tuple params, tuple envp, tuple rngp, object random, const uint32_t[::1] a):
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef size_t n = a.shape[0]
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    out = np.empty(n, dtype=np.int64)
    flags = np.zeros(n, dtype=np.uint8)
    cdef int64_t[::1] ov = out
    cdef uint8_t[::1] fv = flags
    if n:
        with nogil:
            sfp8_kernel_to_int64(&f, &env, &rng, &a[0], n, &ov[0], &fv[0])
    return out, flags


def from_int64(tuple params, tuple envp, tuple rngp, object random, const int64_t[::1] a):
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef size_t n = a.shape[0]
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    out = np.empty(n, dtype=np.uint32)
    flags = np.zeros(n, dtype=np.uint8)
    cdef uint32_t[::1] ov = out
    cdef uint8_t[::1] fv = flags
    if n:
        with nogil:
            sfp8_kernel_from_int64(&f, &env, &rng, &a[0], n, &ov[0], &fv[0])
    return out, flags


# --------------------------------------------------------------------------
# NumPy DType glue (softfp8/_core/npy/*.c)
# --------------------------------------------------------------------------

cdef extern from "npy_api.h":
    object sfp8_npy_init(object module)
    object sfp8_make_dtype(object name, object scalar_type, int parametric, int float_rank)
    object sfp8_new_descr(object cls, object format, object params)
    int sfp8_set_hooks(object getter, object factory, object contains_fn, object type_of, object dtype_of) except -1
    object sfp8_register_ufuncs(object dtype_cls, object numpy_module, object fma_ufunc)
    object sfp8_new_fma_ufunc()
    object sfp8_matmul_wide_ufunc()

import sys as _sys
sfp8_npy_init(_sys.modules[__name__])


def make_dtype(str name, object scalar_type, bint parametric, int float_rank):
    """Create the DType class of one format family."""
    return sfp8_make_dtype(name, scalar_type, parametric, float_rank)


def new_descr(object cls, object format, tuple params):
    """A descriptor (dtype instance) of DType class cls for a Format."""
    return sfp8_new_descr(cls, format, params)


def set_hooks(object getter, object factory, object contains_fn, object type_of, object dtype_of):
    """The Python callables the glue calls: getter() -> State,
    factory(family_index, args, kwargs) -> descr, contains_fn(a, b) -> bool,
    type_of(descr) -> descr.type, dtype_of(format) -> descr (pickling)."""
    sfp8_set_hooks(getter, factory, contains_fn, type_of, dtype_of)


def register_ufuncs(object cls, object fma_ufunc):
    return sfp8_register_ufuncs(cls, np, fma_ufunc)


def new_fma_ufunc():
    return sfp8_new_fma_ufunc()


def matmul_wide_ufunc():
    return sfp8_matmul_wide_ufunc()
