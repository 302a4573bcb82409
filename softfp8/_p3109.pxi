# IEEE P3109 operations with the report's projection (included by _ext.pyx; the C core
# is softfp8/_core/core_p3109.c, the Python front softfp8/p3109.py)

cdef extern from "softfp8/softfp8.h":
    int sfp8_p3109_count()
    const char *sfp8_p3109_name(int op)
    int sfp8_p3109_row(int op)

cdef extern from "core_p3109.h":
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
