# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Low-level bridge to the softfp8 C core (internal; use softfp8.bits)."""
import os
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t

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
    uint32_t sfp8_random_u32(uint64_t seed, uint64_t stream, uint64_t index) nogil
    uint64_t sfp8_round_value(const sfp8_format *f, int sign, uint64_t sig, int64_t exp, int sticky,
                              const sfp8_env *env, uint8_t *flags) nogil
    uint32_t sfp8_reduce(const sfp8_format *f, int kind, const void *a, const void *b, size_t n,
                         const sfp8_env *env, uint8_t *flags) nogil

cdef extern from "driver.h":
    ctypedef struct sfp8_rng:
        const uint32_t *random
        uint64_t seed
        uint64_t stream
        uint64_t index
    unsigned sfp8d_run(int op, const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng,
                       char *const data[], const Py_ssize_t strides[], Py_ssize_t n,
                       uint8_t *flout) nogil
    unsigned sfp8d_sum(const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, const char *a,
                       Py_ssize_t sa, Py_ssize_t n, uint32_t *out) nogil
    unsigned sfp8d_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                           sfp8_rng *rng, const char *a, Py_ssize_t sa, char *o, Py_ssize_t so,
                           Py_ssize_t n, uint8_t *flout) nogil
    unsigned sfp8d_to_int64(const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng,
                            const char *a, Py_ssize_t sa, char *o, Py_ssize_t so, Py_ssize_t n,
                            uint8_t *flout) nogil
    unsigned sfp8d_from_int64(const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng,
                              const char *a, Py_ssize_t sa, char *o, Py_ssize_t so, Py_ssize_t n,
                              uint8_t *flout) nogil

cdef extern from "ops.h":
    ctypedef struct sfp8x_opinfo:
        const char *name
        int kind
        int attrs
        const char *ufunc
        int identity
    enum: X_NUM_OPS
    const sfp8x_opinfo sfp8x_ops[]
    int sfp8x_arity(int op)
    int sfp8x_nout(int op)

cdef extern from "fast.h":
    int sfp8f_enabled()
    int sfp8f_set_enabled(int on)
    int sfp8f_simd_level()
    int sfp8f_set_simd(int level)
    ctypedef struct sfp8f_cache_info:
        size_t tables, bytes, cap
        uint64_t hits, misses, builds, refused_over_cap, evicted, freed
    void sfp8f_cache_stats(sfp8f_cache_info *info)
    size_t sfp8f_set_cache_cap(size_t nbytes)
    void sfp8f_cache_reclaim()
    unsigned sfp8f_read_begin() nogil
    void sfp8f_read_end(unsigned token) nogil
    ctypedef struct sfp8f_un:
        pass
    ctypedef struct sfp8f_conv:
        pass
    ctypedef struct sfp8f_fma:
        pass
    ctypedef struct sfp8f_a16:
        pass
    const uint16_t *sfp8f_binary8(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
    const sfp8f_un *sfp8f_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
    const sfp8f_conv *sfp8f_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                    ptrdiff_t n)
    const uint16_t *sfp8f_from_float(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n)
    const sfp8f_fma *sfp8f_fma_table(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
    const sfp8f_a16 *sfp8f_arith16(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
    unsigned sfp8f_run_binary8(const uint16_t *tab, const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb,
                               char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout) nogil
    unsigned sfp8f_run_unary(const sfp8f_un *t, const char *a, ptrdiff_t sa, int size, char *o, ptrdiff_t so,
                             int osize, ptrdiff_t n, uint8_t *flout) nogil
    unsigned sfp8f_run_convert(const sfp8f_conv *c, const char *a, ptrdiff_t sa, int isize, char *o,
                               ptrdiff_t so, int osize, ptrdiff_t n, uint8_t *flout) nogil
    unsigned sfp8f_run_from_float(const uint16_t *tab, const char *a, ptrdiff_t sa, int isize, char *o,
                                  ptrdiff_t so, ptrdiff_t n, uint8_t *flout) nogil
    unsigned sfp8f_run_fma(const sfp8f_fma *t, const sfp8_format *f, const sfp8_env *env, const char *a,
                           ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c, ptrdiff_t sc, char *o,
                           ptrdiff_t so, ptrdiff_t n, uint8_t *flout) nogil
    unsigned sfp8f_run_arith16(const sfp8f_a16 *t, int op, const sfp8_format *f, const sfp8_env *env,
                               const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c,
                               ptrdiff_t sc, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout) nogil

_KINDS = ("binary", "compare", "relation", "unary", "predicate", "ternary",
          "unary2", "unary_i32", "binary2", "binary_i64", "unary_i64")
_IDENTITIES = (None, 0, 1)


def op_table():
    """The operation table (softfp8/_core/ops.def), in op-id order: a list of
    (name, kind, rounds, noflags, ufunc or None, reduction identity or None)."""
    cdef int i
    rows = []
    for i in range(X_NUM_OPS):
        rows.append((sfp8x_ops[i].name.decode(), _KINDS[sfp8x_ops[i].kind],
                     bool(sfp8x_ops[i].attrs & 1), bool(sfp8x_ops[i].attrs & 2),
                     sfp8x_ops[i].ufunc.decode() if sfp8x_ops[i].ufunc != NULL else None,
                     _IDENTITIES[sfp8x_ops[i].identity]))
    return rows


# operation ids by name (the index of each row of op_table())
OPS = {row[0]: i for i, row in enumerate(op_table())}


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
    """The fast-path table cache of this process, a dict:

    tables, bytes: tables cached now and their size; cap: the byte budget
    (least recently used tables are evicted to stay within it); hits / misses:
    table lookups that found a cached table / did not (a miss builds one when
    the call is long enough); builds: tables built; refused_over_cap: tables
    not cached because they could not fit the budget (those calls took the
    exact core); evicted: tables evicted; freed: evicted tables whose memory
    has been released (once no loop that could still read them runs).  The
    counters only grow."""
    cdef sfp8f_cache_info i
    sfp8f_cache_stats(&i)
    return {"tables": int(i.tables), "bytes": int(i.bytes), "cap": int(i.cap),
            "hits": int(i.hits), "misses": int(i.misses), "builds": int(i.builds),
            "refused_over_cap": int(i.refused_over_cap), "evicted": int(i.evicted),
            "freed": int(i.freed)}


def fast_cache_reclaim():
    """Release the memory of evicted tables that no running loop can still read
    (it is otherwise released at the next table build or eviction)."""
    sfp8f_cache_reclaim()


def set_fast_cache_cap(nbytes):
    """Set the fast-path table cache's byte budget (default 32 MiB; the
    environment variable SOFTFP8_TABLE_BUDGET_MB sets it at import); returns
    the previous budget.  Least recently used tables are evicted to stay within
    it, now and whenever a new table is built; a table that cannot fit is not
    cached (see fast_cache_stats)."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise TypeError(f"cache cap must be an int number of bytes, got {nbytes!r}")
    if nbytes < 0 or nbytes > <object>(<size_t>-1):
        raise ValueError(f"cache cap must be between 0 and {<size_t>-1} bytes, got {nbytes!r}")
    return int(sfp8f_set_cache_cap(<size_t>nbytes))


def _budget_from_environment():
    v = os.environ.get("SOFTFP8_TABLE_BUDGET_MB")
    if v is None or v.strip() == "":
        return
    try:
        mb = float(v)
    except ValueError:
        raise ValueError(f"SOFTFP8_TABLE_BUDGET_MB must be a number of MiB, got {v!r}") from None
    if not (0 <= mb < 2 ** 40):
        raise ValueError(f"SOFTFP8_TABLE_BUDGET_MB must be between 0 and 2**40, got {v!r}")
    set_fast_cache_cap(int(mb * (1 << 20)))


_budget_from_environment()


# kind: (number, input operands, input sizes, output sizes)
_FAST_KINDS = {"binary8": (0, 2, (1,), (1,)), "unary": (1, 1, (1, 2), (1, 2)),
               "convert": (2, 1, (1, 2), (1, 2, 4, 8)), "from_float": (3, 1, (4, 8), (1,)),
               "fma": (4, 3, (1,), (1,)), "arith16": (5, 2, (2,), (2,))}


def fast_kernel(str kind, tuple params, tuple envp, uint8_t[::1] buf, Py_ssize_t n, tuple out,
                tuple a, tuple b=None, tuple c=None, str op="add", tuple dst=None, int isize=1,
                int osize=1, bint want_flags=True):
    """Test hook: run one fast kernel (sfp8f_run_*) directly on operands laid out in one
    byte buffer, so outputs may overlap inputs in any way.

    out, a, b, c: (byte offset, byte stride) of n elements in buf (strides of any sign);
    isize / osize: element sizes (bytes) of the inputs and the output; params / dst: the
    format (and, for convert, the destination format) tuples; envp: (rounding, saturate,
    tininess_before, sr_bits).  The table is looked up (and built as a call of length n
    would build it).  Returns None if no table covers the call, else (OR-flags,
    per-element flags as a uint8 array, or None when want_flags is false)."""
    cdef sfp8_format f = to_format(params)
    cdef sfp8_format fd
    cdef sfp8_env env
    cdef const void *tab = NULL
    cdef Py_ssize_t off[4]
    cdef Py_ssize_t st[4]
    cdef char *base
    cdef unsigned acc = 0
    cdef uint8_t *flp = NULL
    cdef int opc = 0, kk
    cdef Py_ssize_t k, lo, hi, size
    if kind not in _FAST_KINDS:
        raise ValueError(f"kernel kind must be one of {sorted(_FAST_KINDS)}, got {kind!r}")
    kk, nin, isizes, osizes = _FAST_KINDS[kind]
    if isize not in isizes or osize not in osizes:
        raise ValueError(f"{kind}: element sizes {isize}/{osize} not in {isizes}/{osizes}")
    ops = [out, a, b, c]
    if any(ops[k] is None for k in range(1 + nin)):
        raise ValueError(f"{kind} takes {nin} input operand(s)")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    for k in range(1 + nin):
        off[k], st[k] = ops[k]
        size = osize if k == 0 else isize
        if n:
            lo = off[k] + (st[k] * (n - 1) if st[k] < 0 else 0)
            hi = off[k] + (st[k] * (n - 1) if st[k] > 0 else 0) + size
            if lo < 0 or hi > buf.shape[0]:
                raise ValueError(f"operand {k} ({off[k]}, {st[k]}) x {n} leaves the {buf.shape[0]}-byte buffer")
    fill_env(&env, envp)
    cdef uint8_t[::1] flv
    cdef unsigned tok = sfp8f_read_begin()  # tables stay alive until read_end (fast/cache.c)
    try:
        if kind in ("binary8", "unary", "arith16"):
            opc = OPS[op]
        if kind == "arith16" and op not in ("add", "sub", "mul", "div"):
            raise ValueError(f"arith16 kernels take add, sub, mul or div, got {op!r}")
        if kind == "binary8":
            tab = sfp8f_binary8(opc, &f, &env, n)
        elif kind == "unary":
            tab = sfp8f_unary(opc, &f, &env, n)
        elif kind == "convert":
            if dst is None:
                raise ValueError("convert needs dst")
            fd = to_format(dst)
            tab = sfp8f_convert(&f, &fd, &env, n)
        elif kind == "from_float":
            tab = sfp8f_from_float(&f, &env, n)
        elif kind == "fma":
            tab = sfp8f_fma_table(&f, &env, n)
        else:
            tab = sfp8f_arith16(&f, &env, n)
        if tab == NULL:
            return None
        flags = np.zeros(max(n, 1), dtype=np.uint8) if want_flags else None
        if want_flags:
            flv = flags
            flp = &flv[0]
        base = <char *>&buf[0] if buf.shape[0] else NULL
        if n == 0:
            return 0, (flags[:0] if want_flags else None)
        with nogil:
            if kk == 0:
                acc = sfp8f_run_binary8(<const uint16_t *>tab, base + off[1], st[1], base + off[2], st[2],
                                        base + off[0], st[0], n, flp)
            elif kk == 1:
                acc = sfp8f_run_unary(<const sfp8f_un *>tab, base + off[1], st[1], isize, base + off[0], st[0],
                                      osize, n, flp)
            elif kk == 2:
                acc = sfp8f_run_convert(<const sfp8f_conv *>tab, base + off[1], st[1], isize, base + off[0],
                                        st[0], osize, n, flp)
            elif kk == 3:
                acc = sfp8f_run_from_float(<const uint16_t *>tab, base + off[1], st[1], isize, base + off[0],
                                           st[0], n, flp)
            elif kk == 4:
                acc = sfp8f_run_fma(<const sfp8f_fma *>tab, &f, &env, base + off[1], st[1], base + off[2], st[2],
                                    base + off[3], st[3], base + off[0], st[0], n, flp)
            else:
                acc = sfp8f_run_arith16(<const sfp8f_a16 *>tab, opc, &f, &env, base + off[1], st[1],
                                        base + off[2], st[2], NULL, 0, base + off[0], st[0], n, flp)
        return int(acc), flags
    finally:
        sfp8f_read_end(tok)


def simd_level():
    """SIMD level of the fast kernels: 2 AVX-512 (F/BW/VL/DQ/VBMI), 1 AVX2, 0 portable C."""
    return sfp8f_simd_level()


def set_simd(int level):
    """Choose the SIMD level (clamped to what the CPU has); returns the previous one.
    SOFTFP8_SIMD=0 (portable C) or 1 (AVX2) in the environment caps the starting level."""
    if level not in (0, 1, 2):
        raise ValueError(f"SIMD level must be 0, 1 or 2, got {level!r}")
    return sfp8f_set_simd(level)


cdef sfp8_format to_format(tuple p) except *:
    cdef sfp8_format f
    f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials, f.subnormals, f.saturate = p
    return f


cdef tuple from_format(const sfp8_format *f):
    return (f.bits, f.is_signed, f.exp_bits, f.man_bits, f.bias, f.specials, f.subnormals,
            f.saturate)


BINARY32 = from_format(&sfp8_binary32)
GEMM_NOTDONE = SFP8G_NOTDONE
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
    # rngp = (seeded, seed, stream, index0); `seeded` is not read (the driver draws
    # sfp8_random_u32(seed, stream, index0 + i) whenever rounding is stochastic
    # and no random array is given); random: None or contiguous uint32 array
    cdef const uint32_t[::1] rv
    rng.seed = rngp[1]
    rng.stream = rngp[2]
    rng.index = rngp[3]
    rng.random = NULL
    if random is not None:
        rv = random
        if rv.shape[0] > 0:
            rng.random = &rv[0]


cdef inline char *_ptr(cnp.ndarray a):
    return <char *>cnp.PyArray_DATA(a)


cdef inline void _check_1d(cnp.ndarray a, Py_ssize_t n, str what, int size=0) except *:
    if a.ndim != 1 or a.shape[0] != n or not a.flags.c_contiguous:
        raise ValueError(f"{what} must be a contiguous 1-D array of {n} elements")
    if size and a.itemsize != size:
        raise ValueError(f"{what} must have {size}-byte elements, got {a.itemsize}")


cdef inline int _elem_size(const sfp8_format *f):
    # bytes of one element of a descriptor (driver.h sfp8d_size)
    return 1 if f.bits <= 8 else 2 if f.bits <= 16 else f.bits // 8


def run(int op, tuple params, tuple envp, tuple rngp, object random, tuple operands,
        object out, cnp.ndarray flags):
    """Element operation `op` (an index of op_table()) over contiguous 1-D operands
    (codes in the format's storage dtype; the int operand of a binary_i64 op as
    int64); results into out (a tuple of two arrays for the two-result kinds, the
    second int32 for unary_i32), one flag byte per element into flags (the array
    driver, driver.h)."""
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef char *data[5]
    cdef Py_ssize_t strides[5]
    cdef Py_ssize_t n
    cdef int i, kind, arity, nout, k = len(operands)
    if not 0 <= op < X_NUM_OPS:
        raise ValueError(f"unknown operation id {op}")
    kind = sfp8x_ops[op].kind
    arity = sfp8x_arity(op)
    nout = sfp8x_nout(op)
    if k != arity:
        raise ValueError(f"operation {op_table()[op][0]!r} takes {arity} operand(s), got {k}")
    outs = tuple(out) if nout == 2 else (out,)
    if len(outs) != nout or not all(isinstance(o, cnp.ndarray) for o in outs):
        raise ValueError(f"operation {op_table()[op][0]!r} needs {nout} result array(s)")
    n = (<cnp.ndarray>outs[0]).shape[0]
    _check_1d(outs[0], n, "out", 1 if kind in (1, 2, 4) else 8 if kind == 10 else _elem_size(&f))
    if nout == 2:
        _check_1d(outs[1], n, "out", 4 if kind == 7 else _elem_size(&f))
    _check_1d(flags, n, "flags", 1)
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    for i in range(k):
        _check_1d(operands[i], n, "operand", 8 if (kind == 9 and i == 1) else _elem_size(&f))
        data[i] = _ptr(operands[i])
        strides[i] = (<cnp.ndarray>operands[i]).itemsize
    for i in range(nout):
        data[k + i] = _ptr(outs[i])
        strides[k + i] = (<cnp.ndarray>outs[i]).itemsize
    cdef uint8_t *fp = <uint8_t *>_ptr(flags)
    if n:
        with nogil:
            sfp8d_run(op, &f, &env, &rng, data, strides, n, fp)


def sum_exact(tuple params, tuple envp, tuple rngp, cnp.ndarray a):
    """(code, flags): the exact sum of contiguous 1-D codes a, rounded once."""
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef Py_ssize_t n = a.shape[0], sa = a.itemsize
    cdef uint32_t r = 0
    cdef unsigned fl
    _check_1d(a, n, "a", _elem_size(&f))
    fill_env(&env, envp)
    fill_rng(&rng, None, rngp)
    cdef char *pa = _ptr(a)
    with nogil:
        fl = sfp8d_sum(&f, &env, &rng, pa, sa, n, &r)
    return r, fl


def convert(tuple src, tuple dst, tuple envp, tuple rngp, object random, cnp.ndarray a,
            cnp.ndarray out, cnp.ndarray flags):
    """Convert contiguous 1-D a (codes, or binary32/64 bit patterns) into out."""
    cdef sfp8_format fs = to_format(src)
    cdef sfp8_format fd = to_format(dst)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef Py_ssize_t n = a.shape[0], sa = a.itemsize, so = out.itemsize
    _check_1d(a, n, "a", _elem_size(&fs))
    _check_1d(out, n, "out", _elem_size(&fd))
    _check_1d(flags, n, "flags", 1)
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    cdef char *pa = _ptr(a)
    cdef char *po = _ptr(out)
    cdef uint8_t *fp = <uint8_t *>_ptr(flags)
    if n:
        with nogil:
            sfp8d_convert(&fs, &fd, &env, &rng, pa, sa, po, so, n, fp)


def round_values(tuple params, tuple envp, tuple rngp, object random, cnp.ndarray sign, cnp.ndarray sig,
                 cnp.ndarray exp, cnp.ndarray sticky, cnp.ndarray out, cnp.ndarray flags):
    """out[i] = the exact value (-1)^sign[i] (sig[i] + sticky[i] delta) 2^exp[i] rounded once
    by the core's sfp8_round_value (contiguous 1-D: sign, sticky uint8, sig uint64, exp int64;
    out in the format's storage; stochastic rounding: random or the generator's words)."""
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef Py_ssize_t i, n = sig.shape[0]
    cdef int sz = _elem_size(&f)
    cdef const uint8_t[::1] sg = sign
    cdef const uint64_t[::1] sv = sig
    cdef const int64_t[::1] ev = exp
    cdef const uint8_t[::1] st = sticky
    cdef uint8_t[::1] fl = flags
    cdef uint64_t r
    _check_1d(sign, n, "sign", 1)
    _check_1d(exp, n, "exp", 8)
    _check_1d(sticky, n, "sticky", 1)
    _check_1d(out, n, "out", sz)
    _check_1d(flags, n, "flags", 1)
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    cdef char *po = _ptr(out)
    with nogil:
        for i in range(n):
            if env.rounding == 6:
                env.random = rng.random[i] if rng.random != NULL else sfp8_random_u32(rng.seed, rng.stream, rng.index + i)
            r = sfp8_round_value(&f, sg[i], sv[i], ev[i], st[i], &env, &fl[i])
            if sz == 1:
                (<uint8_t *>po)[i] = <uint8_t>r
            else:
                (<uint16_t *>po)[i] = <uint16_t>r


def reduce(tuple params, tuple envp, tuple rngp, int kind, cnp.ndarray a, object b):
    """(code, flags): IEEE 754-2019 9.4 sum (0), dot (1), sumSquare (2), sumAbs (3) of
    contiguous 1-D codes a (and b), exact and rounded once (core_reduce.c)."""
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef Py_ssize_t n = a.shape[0]
    cdef uint8_t fl = 0
    cdef uint32_t r
    cdef const void *pb = NULL
    _check_1d(a, n, "a", _elem_size(&f))
    if b is not None:
        _check_1d(b, n, "b", _elem_size(&f))
        pb = <const void *>_ptr(b)
    fill_env(&env, envp)
    fill_rng(&rng, None, rngp)
    if env.rounding == 6:
        env.random = sfp8_random_u32(rng.seed, rng.stream, rng.index)
    cdef const void *pa = <const void *>_ptr(a)
    with nogil:
        r = sfp8_reduce(&f, kind, pa, pb, <size_t>n, &env, &fl)
    return r, fl


def to_int64(tuple params, tuple envp, tuple rngp, object random, cnp.ndarray a,
             cnp.ndarray out, cnp.ndarray flags):
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef Py_ssize_t n = a.shape[0], sa = a.itemsize
    _check_1d(a, n, "a", _elem_size(&f))
    _check_1d(out, n, "out", 8)
    _check_1d(flags, n, "flags", 1)
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    cdef char *pa = _ptr(a)
    cdef char *po = _ptr(out)
    cdef uint8_t *fp = <uint8_t *>_ptr(flags)
    if n:
        with nogil:
            sfp8d_to_int64(&f, &env, &rng, pa, sa, po, 8, n, fp)


def from_int64(tuple params, tuple envp, tuple rngp, object random, cnp.ndarray a,
               cnp.ndarray out, cnp.ndarray flags):
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef Py_ssize_t n = a.shape[0], so = out.itemsize
    _check_1d(a, n, "a", 8)
    _check_1d(out, n, "out", _elem_size(&f))
    _check_1d(flags, n, "flags", 1)
    fill_env(&env, envp)
    fill_rng(&rng, random, rngp)
    cdef char *pa = _ptr(a)
    cdef char *po = _ptr(out)
    cdef uint8_t *fp = <uint8_t *>_ptr(flags)
    if n:
        with nogil:
            sfp8d_from_int64(&f, &env, &rng, pa, 8, po, so, n, fp)



# --------------------------------------------------------------------------
# matrix products under an accumulation model (softfp8/_core/gemm.c)
# --------------------------------------------------------------------------

cdef extern from "gemm.h":
    ctypedef struct sfp8g_scale:
        const uint32_t *s
        Py_ssize_t rs
        Py_ssize_t cs
        int64_t br
        int64_t bc
    ctypedef struct sfp8g_model:
        sfp8_format fa
        sfp8_format fb
        int exact
        int has_prod
        sfp8_format fp
        sfp8_env envp
        sfp8_format facc
        sfp8_env envacc
        int64_t promote
        sfp8_format fprom
        sfp8_env envprom
        sfp8_format fout
        sfp8_env envout
        sfp8g_scale sa
        sfp8g_scale sb
        int64_t kblock
    unsigned SFP8G_NOMEM
    unsigned SFP8G_NOTDONE
    unsigned sfp8g_gemm_f64(const sfp8g_model *md, const char *A, Py_ssize_t am, Py_ssize_t ak, const char *B,
                            Py_ssize_t bk, Py_ssize_t bp, const double *D, Py_ssize_t dm, char *O,
                            Py_ssize_t om, Py_ssize_t op, int64_t m, int64_t k, int64_t p) nogil
    unsigned sfp8g_gemm(const sfp8g_model *md, const char *A, Py_ssize_t am, Py_ssize_t ak, const char *B,
                        Py_ssize_t bk, Py_ssize_t bp, char *O, Py_ssize_t om, Py_ssize_t op, int64_t m,
                        int64_t k, int64_t p, int use_fast) nogil


cdef void _gemm_scale(sfp8g_scale *sc, object s, tuple blk) except *:
    # s: None or a C-contiguous 2-D uint32 array (binary32 bit patterns); blk: (rows, cols)
    cdef const uint32_t[:, ::1] v
    if s is None:
        sc.s = NULL
        sc.rs = sc.cs = 0
        sc.br = sc.bc = 1
        return
    v = s
    sc.s = &v[0, 0]
    sc.rs = v.shape[1]
    sc.cs = 1
    sc.br, sc.bc = blk
    if sc.br < 1 or sc.bc < 1:
        raise ValueError("scale blocks must be at least 1 x 1")


def gemm(tuple fa, tuple fb, bint exact, object fp, tuple envp, tuple facc, tuple envacc,
         int64_t promote, tuple fprom, tuple envprom, tuple fout, tuple envout, cnp.ndarray A, cnp.ndarray B, cnp.ndarray O,
         object sa, tuple sa_block, object sb, tuple sb_block, int64_t kblock, object fast=None,
         object D=None):
    """O = A @ B (2-D code arrays, any strides) under an accumulation model
    (softfp8/_core/gemm.h); returns the flags.  fp: None or the product format;
    sa / sb: None or C-contiguous 2-D uint32 arrays of binary32 scales.  D: None, or the
    exact model with per-tensor scales finished from D, the C-contiguous float64 GEMM of
    the decoded operands (sfp8g_gemm_f64; SFP8G_NOTDONE in the result: nothing written)."""
    cdef sfp8g_model md
    cdef unsigned fl
    cdef int use_fast = sfp8f_enabled() if fast is None else bool(fast)
    md.fa = to_format(fa)
    md.fb = to_format(fb)
    md.exact = exact
    md.has_prod = fp is not None
    md.fp = to_format(fp if fp is not None else fa)
    fill_env(&md.envp, envp)
    md.facc = to_format(facc)
    fill_env(&md.envacc, envacc)
    md.promote = promote
    md.fprom = to_format(fprom)
    fill_env(&md.envprom, envprom)
    md.fout = to_format(fout)
    fill_env(&md.envout, envout)
    md.kblock = kblock
    if A.ndim != 2 or B.ndim != 2 or O.ndim != 2:
        raise ValueError("gemm operands must be 2-D")
    cdef int64_t m = A.shape[0], k = A.shape[1], p = B.shape[1]
    if B.shape[0] != k or O.shape[0] != m or O.shape[1] != p:
        raise ValueError("gemm shapes do not fit")
    if A.itemsize != _elem_size(&md.fa) or B.itemsize != _elem_size(&md.fb) or O.itemsize != _elem_size(&md.fout):
        raise ValueError("gemm arrays have the wrong item sizes")
    if promote < 0 or kblock < 0:
        raise ValueError("promote and kblock must be >= 0")
    _gemm_scale(&md.sa, sa, sa_block)
    _gemm_scale(&md.sb, sb, sb_block)
    cdef const char *pa = _ptr(A)
    cdef const char *pb = _ptr(B)
    cdef char *po = _ptr(O)
    cdef Py_ssize_t am = A.strides[0], ak = A.strides[1], bk = B.strides[0], bp = B.strides[1]
    cdef Py_ssize_t om = O.strides[0], op = O.strides[1]
    cdef const double[:, ::1] dv
    cdef const double *pd
    if D is not None:
        dv = D
        if dv.shape[0] != m or dv.shape[1] != p:
            raise ValueError("gemm: D does not fit the result")
        pd = &dv[0, 0] if m * p else NULL
        with nogil:
            fl = sfp8g_gemm_f64(&md, pa, am, ak, pb, bk, bp, pd, p, po, om, op, m, k, p)
    else:
        with nogil:
            fl = sfp8g_gemm(&md, pa, am, ak, pb, bk, bp, po, om, op, m, k, p, use_fast)
    if fl & SFP8G_NOMEM:
        raise MemoryError("softfp8 gemm: out of memory")
    return fl

# --------------------------------------------------------------------------
# NumPy DType glue (softfp8/_core/npy/*.c)
# --------------------------------------------------------------------------

cdef extern from "npy_api.h":
    object sfp8_npy_init(object module)
    object sfp8_make_dtype(object name, object scalar_type, int parametric, int float_rank)
    object sfp8_new_descr(object cls, object format, object params)
    int sfp8_set_hooks(object getter, object factory, object contains_fn, object type_of, object dtype_of) except -1
    object sfp8_register_ufuncs(object dtype_cls, object numpy_module, object own_ufuncs)
    object sfp8_new_op_ufunc(int op)
    object sfp8_register_clip(object dtype_cls)
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


def register_ufuncs(object cls, dict own_ufuncs):
    """Loops of every op-table row for DType cls: on NumPy's ufuncs and on softfp8's
    own (own_ufuncs: name -> ufunc, from new_op_ufunc)."""
    return sfp8_register_ufuncs(cls, np, own_ufuncs)


def register_clip(object cls):
    """np.clip loops of a DType class (bounds of its format or Python numbers)."""
    return sfp8_register_clip(cls)


def new_op_ufunc(int op):
    """softfp8's own ufunc of op-table row op (its ufunc column "softfp8.<name>")."""
    return sfp8_new_op_ufunc(op)


def matmul_wide_ufunc():
    return sfp8_matmul_wide_ufunc()
