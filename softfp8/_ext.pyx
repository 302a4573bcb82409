# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Low-level bridge to the softfp8 C core (internal; use softfp8.bits)."""
import os
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int32_t, int64_t
from libc.string cimport memset

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
        int isa
    ctypedef struct sfp8_explain:
        int decision
        int sign
        uint64_t sig
        int64_t exp
        int sticky_in
        int64_t e
        int64_t quantum
        int subnormal
        uint64_t kept
        int guard
        int round
        int sticky
        int half
        int carry
        int tiny
        int random_used
        int gap
        uint64_t result
        uint8_t flags
    uint32_t sfp8_op_explain(int op, const sfp8_format *f, uint32_t a, uint32_t b, uint32_t c,
                             const sfp8_env *env, uint8_t *flags, sfp8_explain *out)
    uint64_t sfp8_convert_explain(const sfp8_format *src, const sfp8_format *dst, uint64_t a,
                                  const sfp8_env *env, uint8_t *flags, sfp8_explain *out)
    int sfp8_isa_lookup(const char *name)
    void sfp8_op_cover(int op, const sfp8_format *f, const sfp8_env *env, int nmodes, const int *modes,
                       long n, const uint32_t *a, const uint32_t *b, const uint32_t *c,
                       const uint32_t *random, uint32_t *result, uint8_t *flags,
                       uint16_t *situation) nogil
    void sfp8_convert_cover(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, long n,
                            const uint64_t *a, const uint32_t *random, uint64_t *result, uint8_t *flags,
                            uint16_t *situation) nogil
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
    int sfp8d_run_family(int fam, int op, const sfp8_format *f, const sfp8_format *dst, const sfp8_env *env,
                         sfp8_rng *rng, char *const data[], const Py_ssize_t strides[], Py_ssize_t n,
                         uint8_t *flout, unsigned *flags) nogil

cdef extern from "quantize.h":
    ctypedef struct sfp8q_args:
        const char *x
        int isize
        Py_ssize_t rows, n, rs, es, bs
        int nvfp4, rule, emax, mbits
        double elem_max, ts
        const sfp8_format *efmt
        const sfp8_format *sfmt
        int int8
        double *amax
        uint8_t *special
        uint8_t *scales
        char *out
    int sfp8q_amax(const sfp8q_args *a, double *tmax) nogil
    int sfp8q_finish(const sfp8q_args *a, const sfp8_env *env, sfp8_rng *rng, unsigned *flags) nogil

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
    int sfp8f_family_total()
    int sfp8f_family_info(int k, const char **name, const char **what, const char **space, int own[3])
    uint64_t sfp8f_family_calls(int k, int l)
    void sfp8f_family_calls_reset()

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


def fast_families():
    """The fast-path families (softfp8/_core/fast/families.def), in the order the
    array driver tries them: a list of {"name", "levels", "what", "space"}, levels
    being the SIMD levels with a kernel of the family's own (0 portable C, 1 AVX2,
    2 AVX-512; a level without one runs the next lower level's)."""
    cdef const char *name
    cdef const char *what
    cdef const char *space
    cdef int own[3]
    cdef int k
    out = []
    for k in range(sfp8f_family_total()):
        sfp8f_family_info(k, &name, &what, &space, own)
        out.append({"name": name.decode(), "levels": tuple(l for l in range(3) if own[l]),
                    "what": what.decode(), "space": space.decode()})
    return out


def fast_family_counts():
    """{(family name, kernel level): calls}: how many array-driver calls each family
    ran with its kernel of each level since reset_fast_family_counts() (one count
    per call, not per element; levels as in fast_families())."""
    cdef int k, l
    cdef const char *name
    cdef const char *what
    cdef const char *space
    cdef int own[3]
    out = {}
    for k in range(sfp8f_family_total()):
        sfp8f_family_info(k, &name, &what, &space, own)
        for l in range(3):
            out[(name.decode(), l)] = int(sfp8f_family_calls(k, l))
    return out


def reset_fast_family_counts():
    """Zero the counters of fast_family_counts()."""
    sfp8f_family_calls_reset()


def fast_kernel(str family, tuple params, tuple envp, uint8_t[::1] buf, Py_ssize_t n, tuple out,
                tuple a, tuple b=None, tuple c=None, str op="add", tuple dst=None, int isize=1,
                int osize=1, bint want_flags=True, tuple rngp=(0, 0, 0, 0)):
    """Test hook: run one fast-path family (a name of fast_families()) alone, through
    the array driver (driver.h, sfp8d_run_family), on operands laid out in one byte
    buffer, so outputs may overlap inputs in any way.

    out, a, b, c: (byte offset, byte stride) of n elements in buf (strides of any sign);
    params: the format of the operation (op), or with dst the source format of a
    conversion (op is then ignored); isize / osize: the element sizes (bytes) of the
    operands and the result, which must be those of the formats (a one-byte result for
    comparisons and predicates); envp: (rounding, saturate, tininess_before, sr_bits);
    rngp: (seeded, seed, stream, index0) of stochastic rounding.  The family's table
    is looked up (and built as a call of length n would build it).  Returns None if
    the family does not take the call, else (OR-flags, per-element flags as a uint8
    array, or None when want_flags is false)."""
    cdef sfp8_format f = to_format(params)
    cdef sfp8_format fd
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef char *data[4]
    cdef Py_ssize_t strides[4]
    cdef Py_ssize_t off[4]
    cdef Py_ssize_t st[4]
    cdef char *base
    cdef unsigned acc = 0
    cdef uint8_t *flp = NULL
    cdef int opc = -1, fam = -1, nin, k, ran, kind, want_isize, want_osize
    cdef Py_ssize_t lo, hi, size
    names = [d["name"] for d in fast_families()]
    if family not in names:
        raise ValueError(f"fast family must be one of {names}, got {family!r}")
    fam = names.index(family)
    if dst is not None:
        fd = to_format(dst)
        nin = 1
        want_isize, want_osize = _elem_size(&f), _elem_size(&fd)
    else:
        if op not in OPS:
            raise ValueError(f"unknown operation {op!r}")
        opc = OPS[op]
        kind = sfp8x_ops[opc].kind
        if kind > 5:
            raise ValueError(f"operation {op!r} has an int operand or two results: no fast family")
        nin = sfp8x_arity(opc)
        want_isize = _elem_size(&f)
        want_osize = 1 if kind in (1, 2, 4) else want_isize
    if isize != want_isize or osize != want_osize:
        raise ValueError(f"{family}: element sizes {isize}/{osize} are not the formats' {want_isize}/{want_osize}")
    ops = [out, a, b, c]
    if any(ops[k] is None for k in range(1 + nin)):
        raise ValueError(f"{family} {op if dst is None else 'conversion'} takes {nin} input operand(s)")
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
    fill_rng(&rng, None, rngp)
    cdef uint8_t[::1] flv
    flags = np.zeros(max(n, 1), dtype=np.uint8) if want_flags else None
    if want_flags:
        flv = flags
        flp = &flv[0]
    base = <char *>&buf[0] if buf.shape[0] else NULL
    for k in range(nin):  # operands, then the result (the driver's layout)
        data[k] = base + off[k + 1]
        strides[k] = st[k + 1]
    data[nin] = base + off[0]
    strides[nin] = st[0]
    if n == 0:
        return 0, (flags[:0] if want_flags else None)
    with nogil:
        ran = sfp8d_run_family(fam, opc, &f, &fd if dst is not None else &f, &env, &rng, data, strides, n, flp,
                               &acc)
    if not ran:
        return None
    return int(acc), flags


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
    # envp = (rounding, saturate, tininess_before, sr_bits[, isa])
    env.rounding, env.saturate, env.tininess_before, env.sr_bits = envp[:4]
    env.random = 0
    env.isa = envp[4] if len(envp) > 4 else 0


def isa_lookup(str name):
    """The sfp8_isa value of a convention name ("x86+ftz", ...), or -1."""
    return sfp8_isa_lookup(name.encode())


cdef dict _explain_dict(sfp8_explain *x):
    return {"decision": x.decision, "sign": x.sign, "sig": x.sig, "exp": x.exp,
            "sticky_in": x.sticky_in, "e": x.e, "quantum": x.quantum, "subnormal": x.subnormal,
            "kept": x.kept, "guard": x.guard, "round": x.round, "sticky": x.sticky,
            "half": x.half, "carry": x.carry, "tiny": x.tiny, "random_used": x.random_used, "gap": x.gap,
            "result": x.result, "flags": x.flags}


def explain(int op, tuple params, tuple envp, uint32_t random, uint32_t a, uint32_t b, uint32_t c):
    """(result, flags, record dict) of one element of op (sfp8_op_explain)."""
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef sfp8_explain x
    cdef uint8_t fl = 0
    cdef uint32_t r
    fill_env(&env, envp)
    env.random = random
    r = sfp8_op_explain(op, &f, a, b, c, &env, &fl, &x)
    return r, fl, _explain_dict(&x)


def convert_explain(tuple src, tuple dst, tuple envp, uint32_t random, uint64_t a):
    """(result, flags, record dict) of one conversion (sfp8_convert_explain)."""
    cdef sfp8_format fs = to_format(src)
    cdef sfp8_format fd = to_format(dst)
    cdef sfp8_env env
    cdef sfp8_explain x
    cdef uint8_t fl = 0
    cdef uint64_t r
    fill_env(&env, envp)
    env.random = random
    r = sfp8_convert_explain(&fs, &fd, a, &env, &fl, &x)
    return r, fl, _explain_dict(&x)


cdef object _random_words(object random, long n):
    """The per-element stochastic words (uint32, length n) or None."""
    if random is None:
        return None
    rv = np.ascontiguousarray(random, dtype=np.uint32)
    if rv.shape[0] != n:
        raise ValueError("random must have the operands' length")
    return rv


def cover(int op, tuple params, tuple envp, tuple modes, tuple operands, object random):
    """(result uint32, flags uint8, situation uint16), each of shape (len(modes), n), of
    op over contiguous uint32 operand arrays in each rounding mode of `modes` (mode
    indices), from round_pack's own record (sfp8_op_cover); random: a uint32 array
    of stochastic words or None."""
    cdef sfp8_format f = to_format(params)
    cdef int mv[8]
    cdef int nm = len(modes), k
    cdef sfp8_env env
    cdef const uint32_t[::1] av = operands[0]
    cdef const uint32_t[::1] bv = operands[1] if len(operands) > 1 else operands[0]
    cdef const uint32_t[::1] cv = operands[2] if len(operands) > 2 else operands[0]
    cdef const uint32_t[::1] rv
    cdef const uint32_t *rp = NULL
    cdef long n = av.shape[0]
    if not 0 <= op < X_NUM_OPS:
        raise ValueError(f"unknown operation id {op}")
    if bv.shape[0] != n or cv.shape[0] != n:
        raise ValueError("operands must have one length")
    rv = _random_words(random, n)
    if rv is not None and n:
        rp = &rv[0]
    if not 1 <= nm <= 7:
        raise ValueError(f"modes must hold 1 to 7 rounding modes, got {modes!r}")
    for k in range(nm):
        if not 0 <= modes[k] < 7:
            raise ValueError(f"unknown rounding mode index {modes[k]!r}")
        mv[k] = modes[k]
    fill_env(&env, envp)
    res = np.empty(n * nm, dtype=np.uint32)
    fl = np.empty(n * nm, dtype=np.uint8)
    sit = np.empty(n * nm, dtype=np.uint16)
    cdef uint32_t[::1] rs = res
    cdef uint8_t[::1] fs = fl
    cdef uint16_t[::1] ss = sit
    if n:
        with nogil:
            sfp8_op_cover(op, &f, &env, nm, mv, n, &av[0], &bv[0], &cv[0], rp, &rs[0], &fs[0], &ss[0])
    return res.reshape(nm, n), fl.reshape(nm, n), sit.reshape(nm, n)


def convert_cover(tuple src, tuple dst, tuple envp, const uint64_t[::1] a, object random):
    """(result uint64, flags uint8, situation uint16) of conversions src -> dst
    (sfp8_convert_cover)."""
    cdef sfp8_format fs_ = to_format(src)
    cdef sfp8_format fd = to_format(dst)
    cdef sfp8_env env
    cdef const uint32_t[::1] rv
    cdef const uint32_t *rp = NULL
    cdef long n = a.shape[0]
    rv = _random_words(random, n)
    if rv is not None and n:
        rp = &rv[0]
    fill_env(&env, envp)
    res = np.empty(n, dtype=np.uint64)
    fl = np.empty(n, dtype=np.uint8)
    sit = np.empty(n, dtype=np.uint16)
    cdef uint64_t[::1] rs = res
    cdef uint8_t[::1] fls = fl
    cdef uint16_t[::1] ss = sit
    if n:
        with nogil:
            sfp8_convert_cover(&fs_, &fd, &env, n, &a[0], rp, &rs[0], &fls[0], &ss[0])
    return res, fl, sit


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
# the matrix engine (softfp8/_core/mm/): every matrix product but the NumPy loops'
# (softfp8/_core/npy/matmul.c) comes through gemm() below
# --------------------------------------------------------------------------

cdef extern from "mm/mm.h":
    ctypedef struct sfp8m_scale:
        const uint32_t *s
        Py_ssize_t rs
        Py_ssize_t cs
        int64_t br
        int64_t bc
    ctypedef struct sfp8m_model:
        sfp8_format fa
        sfp8_format fb
        int exact
        int nan_rule
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
        sfp8m_scale sa
        sfp8m_scale sb
        int64_t kblock
        int scale_exact
    ctypedef struct sfp8m_blas:
        pass
    ctypedef struct sfp8m_path_info:
        const char *name
        int levels
        const char *what
    unsigned SFP8M_NOMEM
    unsigned SFP8M_BLASFAIL
    int SFP8M_NAN_CANONICAL
    int SFP8M_NUM_PATHS
    unsigned sfp8m_gemm(const sfp8m_model *md, const sfp8m_blas *blas, const char *A, Py_ssize_t am,
                        Py_ssize_t ak, const char *B, Py_ssize_t bk, Py_ssize_t bp, char *O, Py_ssize_t om,
                        Py_ssize_t op, int64_t m, int64_t k, int64_t p, int fast) nogil
    const sfp8m_path_info *sfp8m_path(int id)
    uint64_t sfp8m_path_count(int id, int level)
    void sfp8m_reset_path_counts()

cdef extern from "npy/matmul_api.h":
    const sfp8m_blas *sfp8_npy_blas(int64_t m, int64_t k, int64_t p)
    object sfp8_npy_set_blas(object mode)


cdef void _gemm_scale(sfp8m_scale *sc, object s, tuple blk) except *:
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


cdef int _propagate_error() except -1:
    # the BLAS callback (numpy.matmul) failed and left its exception set: raise it
    return -1


def gemm(tuple fa, tuple fb, bint exact, object fp, tuple envp, tuple facc, tuple envacc,
         int64_t promote, tuple fprom, tuple envprom, tuple fout, tuple envout, cnp.ndarray A, cnp.ndarray B,
         cnp.ndarray O, object sa, tuple sa_block, object sb, tuple sb_block, int64_t kblock, object fast=None,
         bint scale_exact=False):
    """O = A @ B (2-D code arrays, any strides) by the matrix engine (softfp8/_core/mm/mm.h):
    the exact model (exact) or an accumulation model; returns the flags.  fp: None or the
    product format; sa / sb: None or C-contiguous 2-D uint32 arrays of binary32 scales;
    fast: None (the fast-path switch's setting) or 0 / 1 / 2; scale_exact: the scales are
    powers of two (E8M0 values) multiplied exactly, raising no flag (mx.matmul), else
    their product is rounded to binary32 (scaled_mm)."""
    cdef sfp8m_model md
    cdef unsigned fl
    cdef int use_fast = sfp8f_enabled() if fast is None else int(fast)
    memset(&md, 0, sizeof(md))
    md.fa = to_format(fa)
    md.fb = to_format(fb)
    md.exact = exact
    md.nan_rule = SFP8M_NAN_CANONICAL
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
    md.scale_exact = scale_exact
    if scale_exact:
        for name, x in (("sa", sa), ("sb", sb)):
            if x is not None and np.any(np.frexp(np.asarray(x).view(np.float32))[0] != 0.5):
                raise ValueError(f"gemm scale_exact: {name} holds a scale that is not a positive power of two")
    if A.ndim != 2 or B.ndim != 2 or O.ndim != 2:
        raise ValueError("gemm operands must be 2-D")
    cdef int64_t m = A.shape[0], k = A.shape[1], p = B.shape[1]
    if B.shape[0] != k or O.shape[0] != m or O.shape[1] != p:
        raise ValueError("gemm shapes do not fit")
    if A.itemsize != _elem_size(&md.fa) or B.itemsize != _elem_size(&md.fb) or O.itemsize != _elem_size(&md.fout):
        raise ValueError("gemm arrays have the wrong item sizes")
    if promote < 0 or kblock < 0:
        raise ValueError("promote and kblock must be >= 0")
    if use_fast not in (0, 1, 2):
        raise ValueError(f"gemm fast must be None, 0, 1 or 2, got {fast!r}")
    _gemm_scale(&md.sa, sa, sa_block)
    _gemm_scale(&md.sb, sb, sb_block)
    cdef const char *pa = _ptr(A)
    cdef const char *pb = _ptr(B)
    cdef char *po = _ptr(O)
    cdef Py_ssize_t am = A.strides[0], ak = A.strides[1], bk = B.strides[0], bp = B.strides[1]
    cdef Py_ssize_t om = O.strides[0], op = O.strides[1]
    cdef const sfp8m_blas *blas = sfp8_npy_blas(m, k, p) if exact and use_fast else NULL
    with nogil:
        fl = sfp8m_gemm(&md, blas, pa, am, ak, pb, bk, bp, po, om, op, m, k, p, use_fast)
    if fl & SFP8M_BLASFAIL:
        _propagate_error()
    if fl & SFP8M_NOMEM:
        raise MemoryError("softfp8 gemm: out of memory")
    return fl


def matrix_paths():
    """The matrix engine's registered fast paths (softfp8/_core/mm/mm_paths.def), in table
    order: [{"name", "levels" (SIMD levels with their own kernels), "what"}]."""
    cdef const sfp8m_path_info *q
    out = []
    for i in range(SFP8M_NUM_PATHS):
        q = sfp8m_path(i)
        out.append({"name": q.name.decode(), "levels": tuple(l for l in range(3) if q.levels >> l & 1),
                    "what": q.what.decode()})
    return out


def matrix_path_counts():
    """{(path name, SIMD level): calls} since the last reset_matrix_path_counts() (a call
    counts once per path it ran)."""
    cdef const sfp8m_path_info *q
    out = {}
    for i in range(SFP8M_NUM_PATHS):
        q = sfp8m_path(i)
        for l in range(3):
            out[(q.name.decode(), l)] = sfp8m_path_count(i, l)
    return out


def reset_matrix_path_counts():
    sfp8m_reset_path_counts()


def set_blas(mode):
    """The BLAS routine of the exact matrix products: 'native' (NumPy's OpenBLAS dgemm,
    called without the GIL), 'numpy' (a callback into numpy.matmul) or 'none'; returns
    blas_info() with "previous" the mode before (docs/matrix-engine.md)."""
    return sfp8_npy_set_blas(mode)


def blas_info():
    """{"using": 'native' / 'numpy' / 'none', "native_symbol", "native_library"}."""
    d = sfp8_npy_set_blas(None)
    del d["previous"]
    return d

# --------------------------------------------------------------------------
# matrix-unit models: block FMA, further orders, addends (softfp8/_core/bfma.c)
# --------------------------------------------------------------------------

cdef extern from "bfma.h":
    ctypedef struct sfp8u_model:
        int order
        sfp8_format fa
        sfp8_format fb
        sfp8_format fo
        sfp8_env envo
        int has_addend
        int block
        int exact_align
        int extra_bits
        int sticky
        int grouping
        int late_addend
        int align_rounding
        int addend_extra_bits
        int has_zero_addend_exp
        int zero_addend_exp
        int normalized_products
        int has_min_exp
        int min_exp
        int product_overflow
        int in_subnormals
        int out_subnormals
        int64_t promote
        int has_prod
        sfp8_format fp
        sfp8_env envp
        sfp8_format facc
        sfp8_env envacc
        sfp8_format fprom
        sfp8_env envprom
    unsigned SFP8U_NOMEM
    const char *sfp8u_check(const sfp8u_model *md)
    const char *sfp8u_model_from_ints(const int32_t *v, int64_t n, sfp8u_model *m)

cdef extern from "mm/mm.h":
    unsigned sfp8m_unit_gemm(const sfp8u_model *md, const char *A, Py_ssize_t am, Py_ssize_t ak, const char *B,
                             Py_ssize_t bk, Py_ssize_t bp, const char *C, Py_ssize_t cm, Py_ssize_t cp, char *O,
                             Py_ssize_t om, Py_ssize_t op, int64_t m, int64_t k, int64_t p, int fast) nogil


def mu_gemm(const int32_t[::1] md, cnp.ndarray A, cnp.ndarray B, object C, cnp.ndarray O):
    """O = A @ B + C (2-D code arrays, any strides; C: None or an array of O's shape and
    item size, broadcast strides allowed) under the matrix-unit model md (its int32
    encoding, softfp8.matrix_units.model_ints; bfma_params.c); returns the flags."""
    cdef sfp8u_model m
    cdef unsigned fl
    cdef const char *why = sfp8u_model_from_ints(&md[0], md.shape[0], &m)
    cdef const char *pc = NULL
    cdef Py_ssize_t cm = 0, cp = 0
    m.has_addend = C is not None
    if why != NULL:
        raise ValueError(f"matrix-unit model: {why.decode()}")
    if A.ndim != 2 or B.ndim != 2 or O.ndim != 2:
        raise ValueError("mu_gemm operands must be 2-D")
    cdef int64_t rows = A.shape[0], k = A.shape[1], p = B.shape[1]
    if B.shape[0] != k or O.shape[0] != rows or O.shape[1] != p:
        raise ValueError("mu_gemm shapes do not fit")
    if A.itemsize != _elem_size(&m.fa) or B.itemsize != _elem_size(&m.fb) or O.itemsize != _elem_size(&m.fo):
        raise ValueError("mu_gemm arrays have the wrong item sizes")
    cdef cnp.ndarray Ca
    if C is not None:
        Ca = C
        if Ca.ndim != 2 or Ca.shape[0] != rows or Ca.shape[1] != p or Ca.itemsize != O.itemsize:
            raise ValueError("mu_gemm: C does not fit the result")
        pc = _ptr(Ca)
        cm = Ca.strides[0]
        cp = Ca.strides[1]
    cdef const char *pa = _ptr(A)
    cdef const char *pb = _ptr(B)
    cdef char *po = _ptr(O)
    cdef Py_ssize_t am = A.strides[0], ak = A.strides[1], bk = B.strides[0], bp = B.strides[1]
    cdef Py_ssize_t om = O.strides[0], op = O.strides[1]
    cdef int fast = sfp8f_enabled()
    with nogil:
        fl = sfp8m_unit_gemm(&m, pa, am, ak, pb, bk, bp, pc, cm, cp, po, om, op, rows, k, p, fast)
    if fl & SFP8U_NOMEM:
        raise MemoryError("softfp8 matrix-unit model: out of memory")
    return fl

# --------------------------------------------------------------------------
# NumPy DType glue (softfp8/_core/npy/*.c)
# --------------------------------------------------------------------------

cdef extern from "npy_api.h":
    object sfp8_npy_init(object module)
    object sfp8_make_dtype(object name, object scalar_type, int parametric, int float_rank)
    object sfp8_new_descr(object cls, object format, object params)
    object sfp8_finfo_constants(object descr)
    int sfp8_set_hooks(object getter, object factory, object contains_fn, object type_of, object dtype_of) except -1
    int sfp8_set_ml_hook(object ml_equivalent) except -1
    object sfp8_register_ufuncs(object dtype_cls, object numpy_module, object own_ufuncs)
    object sfp8_new_op_ufunc(int op)
    object sfp8_register_clip(object dtype_cls)
    object sfp8_matmul_wide_ufunc()
    object sfp8_publish_flags(object cell, unsigned int fl, const char *name)

import sys as _sys
sfp8_npy_init(_sys.modules[__name__])


def make_dtype(str name, object scalar_type, bint parametric, int float_rank):
    """Create the DType class of one format family."""
    return sfp8_make_dtype(name, scalar_type, parametric, float_rank)


def new_descr(object cls, object format, tuple params):
    """A descriptor (dtype instance) of DType class cls for a Format."""
    return sfp8_new_descr(cls, format, params)


def finfo_constants(object descr):
    """{name: value} of the np.finfo constants a softfp8 dtype's format holds
    (scalars of the format; ints for nmant, minexp, maxexp, precision)."""
    return sfp8_finfo_constants(descr)


def set_hooks(object getter, object factory, object contains_fn, object type_of, object dtype_of):
    """The Python callables the glue calls: getter() -> State,
    factory(family_index, args, kwargs) -> descr, contains_fn(a, b) -> bool,
    type_of(descr) -> descr.type, dtype_of(format) -> descr (pickling)."""
    sfp8_set_hooks(getter, factory, contains_fn, type_of, dtype_of)


def set_ml_hook(object ml_equivalent):
    """ml_equivalent(dtype) -> the softfp8 dtype with the codes of an ml_dtypes
    dtype (softfp8/_interop.py), for the casts between them."""
    sfp8_set_ml_hook(ml_equivalent)


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


def publish_flags(object cell, unsigned int fl, str name):
    """ORs flags into a FlagCell and hands them to np.errstate as after a ufunc loop
    (warnings / FloatingPointError naming `name`), for products computed outside one."""
    b = name.encode()
    return sfp8_publish_flags(cell, fl, b)


# ---- the block quantiser (quantize.h; softfp8.mx's fast path) ----

cdef void _block_args(sfp8q_args *a, cnp.ndarray x, Py_ssize_t bs, cnp.ndarray amax,
                      cnp.ndarray special) except *:
    cdef Py_ssize_t nb
    if x.ndim != 2 or x.dtype.kind != "f" or x.itemsize not in (4, 8) or not x.dtype.isnative:
        raise ValueError("x must be a 2-D native float32 / float64 array")
    if bs < 1:
        raise ValueError(f"block size must be positive, got {bs}")
    a.x = _ptr(x)
    a.isize = x.itemsize
    a.rows, a.n = x.shape[0], x.shape[1]
    a.rs, a.es = x.strides[0], x.strides[1]
    a.bs = bs
    nb = a.rows * ((a.n + bs - 1) // bs)
    _check_1d(amax, nb, "amax", 8)
    _check_1d(special, nb, "special", 1)
    a.amax = <double *>_ptr(amax)
    a.special = <uint8_t *>_ptr(special)


def block_amax(cnp.ndarray x, Py_ssize_t bs, cnp.ndarray amax, cnp.ndarray special):
    """Per block (bs consecutive elements of a row of the 2-D float32 / float64 x) the
    largest finite magnitude and whether a NaN / infinity is in it, into amax / special;
    returns the largest amax, or None when the fast paths are off (quantize.h)."""
    cdef sfp8q_args a
    cdef double tmax = 0
    cdef int ok
    memset(&a, 0, sizeof(a))
    _block_args(&a, x, bs, amax, special)
    with nogil:
        ok = sfp8q_amax(&a, &tmax)
    return tmax if ok else None


def block_finish(cnp.ndarray x, Py_ssize_t bs, tuple kindp, tuple efmt, object sfmt, cnp.ndarray amax,
                 cnp.ndarray special, cnp.ndarray scales, cnp.ndarray out, tuple envp, tuple rngp):
    """Scales and elements of the block quantiser after block_amax (quantize.h):
    kindp = (nvfp4, rule, emax, mbits, elem_max, tensor scale, int8); efmt the element
    (or MXINT8 helper) format's params, sfmt NVFP4's scale format's (or None); scales
    uint8 per block, out the rows * n element codes.  Returns the elements' flags, or
    None when the fast paths are off."""
    cdef sfp8q_args a
    cdef sfp8_format fe = to_format(efmt)
    cdef sfp8_format fs
    cdef sfp8_env env
    cdef sfp8_rng rng
    cdef unsigned fl = 0
    cdef int ok
    memset(&a, 0, sizeof(a))
    _block_args(&a, x, bs, amax, special)
    a.nvfp4, a.rule, a.emax, a.mbits, a.elem_max, a.ts, a.int8 = kindp
    a.efmt = &fe
    if sfmt is not None:
        fs = to_format(sfmt)
        a.sfmt = &fs
    elif a.nvfp4:
        raise ValueError("NVFP4 needs the scale format")
    _check_1d(scales, amax.shape[0], "scales", 1)
    _check_1d(out, a.rows * a.n, "out", 1 if (a.int8 or fe.bits <= 8) else 2)
    a.scales = <uint8_t *>_ptr(scales)
    a.out = _ptr(out)
    fill_env(&env, envp)
    fill_rng(&rng, None, rngp)
    with nogil:
        ok = sfp8q_finish(&a, &env, &rng, &fl)
    if ok < 0:
        raise MemoryError("softfp8.mx.quantize: out of memory")
    return fl if ok else None
include "_p3109.pxi"
