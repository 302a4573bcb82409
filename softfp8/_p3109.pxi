# IEEE P3109 operations with the report's projection (included by _ext.pyx; the C core
# is softfp8/_core/core_p3109.c, the Python front softfp8/p3109.py)

cdef extern from "softfp8/softfp8.h":
    int sfp8_p3109_count()
    const char *sfp8_p3109_name(int op)
    int sfp8_p3109_row(int op)

cdef extern from "core_p3109.h":
    uint32_t sfp8x_p3109_project_in(const sfp8_format *f, int kind, int sign, uint64_t sig, int64_t exp,
                                    int sticky, const sfp8_env *env, int round_mode, int saturation,
                                    uint8_t *flags) nogil
    unsigned sfp8x_p3109_run(int op, const sfp8_format *f, const sfp8_env *env, const uint32_t *random,
                             char *const data[], Py_ssize_t n, int saturation) nogil


def p3109_table():
    """The P3109 companions of the operation table (ops.def SFP8_P3109), in order: a
    list of (report name, index of its row in op_table())."""
    return [(sfp8_p3109_name(i).decode(), sfp8_p3109_row(i)) for i in range(sfp8_p3109_count())]


def p3109_run(int op, tuple params, tuple envp, object random, tuple operands, cnp.ndarray out,
              int saturation):
    """P3109 operation `op` (an index of p3109_table()) over contiguous 1-D codes of the
    format, result codes into out, with the projection `saturation` (0 SatFinite,
    1 SatPropagate, 2 SatNone); random: None or the per-element uint32 stochastic words.
    Returns the bad-call flags (0 on a good call)."""
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef char *data[4]
    cdef const uint32_t *rp = NULL
    cdef const uint32_t[::1] rv
    cdef Py_ssize_t n = out.shape[0]
    cdef int i, k = len(operands), sz = _elem_size(&f)
    cdef unsigned fl = 0
    if not 0 <= op < sfp8_p3109_count():
        raise ValueError(f"unknown P3109 operation id {op}")
    if k != sfp8x_arity(sfp8_p3109_row(op)):
        raise ValueError(f"P3109 operation {p3109_table()[op][0]!r} takes "
                         f"{sfp8x_arity(sfp8_p3109_row(op))} operand(s), got {k}")
    if not 0 <= saturation <= 2:
        raise ValueError(f"saturation must be 0, 1 or 2, got {saturation}")
    _check_1d(out, n, "out", sz)
    for i in range(k):
        _check_1d(operands[i], n, "operand", sz)
        data[i] = _ptr(operands[i])
    data[k] = _ptr(out)
    if random is not None:
        rv = random
        if rv.shape[0] != n:
            raise ValueError("random must have the operands' length")
        if n:
            rp = &rv[0]
    fill_env(&env, envp)
    if n:
        with nogil:
            fl = sfp8x_p3109_run(op, &f, &env, rp, data, n, saturation)
    return fl


cdef extern from "softfp8/softfp8.h":
    void sfp8_p3109_from_block(const sfp8_format *fs, uint32_t s, const sfp8_format *fx, const void *x, size_t n,
                               const sfp8_format *fr, void *r, const sfp8_env *env, const uint32_t *random,
                               int saturation, uint8_t *flags) nogil
    void sfp8_p3109_to_block(const sfp8_format *fx, const void *x, size_t n, const sfp8_format *fs, uint32_t s,
                             const sfp8_format *fr, void *r, const sfp8_env *env, const uint32_t *random,
                             int saturation, uint8_t *flags) nogil
    uint32_t sfp8_p3109_max_abs_finite(const sfp8_format *fx, const void *x, size_t n, const sfp8_format *fs,
                                       const sfp8_env *env, int saturation, uint8_t *flags) nogil
    uint32_t sfp8_p3109_block_reduce_add(const sfp8_format *fs, uint32_t s, const sfp8_format *fx, const void *x,
                                         size_t n, const sfp8_format *fr, const sfp8_env *env, int saturation,
                                         uint8_t *flags) nogil
    uint32_t sfp8_p3109_block_reduce_multiply(const sfp8_format *fs, uint32_t s, const sfp8_format *fx,
                                              const void *x, size_t n, const sfp8_format *fr,
                                              const sfp8_env *env, int saturation, uint8_t *flags) nogil
    uint32_t sfp8_p3109_block_dot(const sfp8_format *fsx, uint32_t sx, const sfp8_format *fx, const void *x,
                                  const sfp8_format *fsy, uint32_t sy, const sfp8_format *fy, const void *y,
                                  size_t n, const sfp8_format *fr, const sfp8_env *env, int saturation,
                                  uint8_t *flags) nogil
    int sfp8_p3109_block_op(int op, int nblocks, const sfp8_format *const fss[], const uint32_t s[],
                            const sfp8_format *const fxs[], const void *const xs[], size_t n,
                            const sfp8_format *fsr, uint32_t sr, const sfp8_format *fr, void *r,
                            const sfp8_env *env, const uint32_t *random, int saturation, uint8_t *flags) nogil


cdef const uint32_t *_words(object random, Py_ssize_t n) except? NULL:
    cdef const uint32_t[::1] rv
    if random is None or n == 0:
        return NULL
    rv = random
    if rv.shape[0] != n:
        raise ValueError("random must have one word per result")
    return &rv[0]


def p3109_project_values(tuple params, tuple envp, object random, cnp.ndarray kind, cnp.ndarray sign,
                         cnp.ndarray sig, cnp.ndarray exp, cnp.ndarray out, int saturation, int round_mode=-1):
    """out[i] = omega-Project of the exact value (kind[i] 0 finite (-1)^sign sig 2^exp,
    1 infinity, 2 NaN) into the format (sfp8_p3109_project_value; round_mode >= 0:
    rounded in that mode, saturated as envp's); contiguous 1-D kind, sign uint8, sig
    uint64, exp int64.  Returns the bad-call flags."""
    cdef sfp8_format f = to_format(params)
    cdef sfp8_env env
    cdef Py_ssize_t i, n = out.shape[0]
    cdef int sz = _elem_size(&f)
    cdef const uint8_t[::1] kv = kind
    cdef const uint8_t[::1] sv = sign
    cdef const uint64_t[::1] mv = sig
    cdef const int64_t[::1] ev = exp
    cdef uint8_t fl = 0
    cdef uint32_t r
    for a, w in ((kind, 1), (sign, 1), (sig, 8), (exp, 8)):
        _check_1d(a, n, "operand", w)
    _check_1d(out, n, "out", sz)
    cdef const uint32_t *rp = _words(random, n)
    fill_env(&env, envp)
    cdef char *po = _ptr(out)
    with nogil:
        for i in range(n):
            if rp != NULL:
                env.random = rp[i]
            r = sfp8x_p3109_project_in(&f, kv[i], sv[i], mv[i], ev[i], 0, &env, round_mode, saturation, &fl)
            if sz == 1:
                (<uint8_t *>po)[i] = <uint8_t>r
            else:
                (<uint16_t *>po)[i] = <uint16_t>r
    return fl


def p3109_block(str what, tuple envp, object random, int saturation, tuple fmts, tuple scales, tuple blocks,
                object out, int op=-1):
    """The block operations of P3109 clause 5 in C (core_p3109_block.c).  fmts: format
    params, scales: scale codes, blocks: contiguous 1-D code arrays, per `what`:
      "from"  (fs, fx, fr), (s,), (x,)          -> out codes of fr
      "to"    (fx, fs, fr), (s,), (x,)          -> out codes of fr
      "maxabs" (fx, fs), (), (x,)               -> the scale code
      "add" / "multiply" (fs, fx, fr), (s,), (x,) -> the result code
      "dot"   (fsx, fx, fsy, fy, fr), (sx, sy), (x, y) -> the result code
      "op"    (fs_1, fx_1, ..., fsr, fr), (s_1, ..., sr), (x_1, ...) -> out codes of fr
    Returns (result or None, flags); a bad call raises ValueError."""
    cdef sfp8_format F[8]
    cdef const sfp8_format *fp[8]
    cdef const void *xp[3]
    cdef uint32_t sv[4]
    cdef sfp8_env env
    cdef uint8_t fl = 0
    cdef uint32_t res = 0
    cdef int i, nb = len(blocks), ok = 1
    cdef Py_ssize_t n = (<cnp.ndarray>blocks[0]).shape[0]
    if len(fmts) > 8 or len(scales) > 4 or nb > 3:
        raise ValueError("too many blocks")
    for i in range(len(fmts)):
        F[i] = to_format(fmts[i])
        fp[i] = &F[i]
    for i in range(len(scales)):
        sv[i] = scales[i]
    for i in range(nb):
        _check_1d(blocks[i], n, "block", 0)
        xp[i] = <const void *>_ptr(blocks[i])
    cdef int reduction = what in ("add", "multiply", "dot", "maxabs")
    cdef const uint32_t *rp = NULL if reduction else _words(random, n)
    cdef void *po = NULL
    if out is not None:
        _check_1d(out, n, "out", 0)
        po = <void *>_ptr(out)
    fill_env(&env, envp)
    if reduction and random is not None:   # one result: one word
        env.random = int(np.asarray(random).reshape(-1)[0])
    if what == "from":
        with nogil:
            sfp8_p3109_from_block(fp[0], sv[0], fp[1], xp[0], n, fp[2], po, &env, rp, saturation, &fl)
    elif what == "to":
        with nogil:
            sfp8_p3109_to_block(fp[0], xp[0], n, fp[1], sv[0], fp[2], po, &env, rp, saturation, &fl)
    elif what == "maxabs":
        with nogil:
            res = sfp8_p3109_max_abs_finite(fp[0], xp[0], n, fp[1], &env, saturation, &fl)
    elif what == "add":
        with nogil:
            res = sfp8_p3109_block_reduce_add(fp[0], sv[0], fp[1], xp[0], n, fp[2], &env, saturation, &fl)
    elif what == "multiply":
        with nogil:
            res = sfp8_p3109_block_reduce_multiply(fp[0], sv[0], fp[1], xp[0], n, fp[2], &env, saturation, &fl)
    elif what == "dot":
        with nogil:
            res = sfp8_p3109_block_dot(fp[0], sv[0], fp[1], xp[0], fp[2], sv[1], fp[3], xp[1], n, fp[4], &env,
                                       saturation, &fl)
    elif what == "op":
        for i in range(nb):
            fp[i] = &F[2 * i]
            fp[4 + i] = &F[2 * i + 1]
        with nogil:
            ok = sfp8_p3109_block_op(op, nb, fp, sv, &fp[4], xp, n, &F[2 * nb], sv[nb], &F[2 * nb + 1], po,
                                     &env, rp, saturation, &fl)
    else:
        raise ValueError(f"unknown block operation {what!r}")
    if fl & 0x80 or not ok:
        raise ValueError(f"P3109 block operation {what!r}: bad call (saturation {saturation}, formats too "
                         f"wide for the exact accumulator, or an operation outside the exact ones)")
    return (res if out is None else None), fl
