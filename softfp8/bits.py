"""softfp8.bits: the bit-level golden model.

Every function takes integer arrays of codes (broadcast together like ufunc
operands) and returns ``(codes, flags)``: the result codes in the format's
storage dtype and one flag byte per element (SoftFloat's layout plus denormal
0x20).  The functions of two-result operations (divmod, modf, frexp) return
``((first, second), flags)``; ldexp's second operand is an integer array (any
integer dtype or Python ints), not codes.  See docs/python-api.md and
docs/semantics.md.
"""
from __future__ import annotations

import math
import secrets

import numpy as np

from . import _context, _ext
from ._explain import Explanation
from ._formats import Format
from ._validation import _as_int, as_format, format_or_none


ROUNDING_MODES = _context.ROUNDING_MODES
_STOCHASTIC = ROUNDING_MODES.index("stochastic")
# options that ignore the context: for softfp8's own exact queries (decode, printing)
FIXED = {"rounding": "nearest_even", "tininess": "after"}
_FLOATS = {np.dtype(np.float32): _ext.BINARY32, np.dtype(np.float64): _ext.BINARY64}
_FLOAT_BITS = {np.dtype(np.float32): np.dtype(np.uint32), np.dtype(np.float64): np.dtype(np.uint64)}
_NOENV = (0, 0, 0, 32)  # selections and bit operations never round


# --------------------------------------------------------------------------
# argument checking
# --------------------------------------------------------------------------

def _check_format(fmt, what="fmt"):
    """The Format of a format or softfp8 dtype (callers use the returned value)."""
    return as_format(fmt, what)


def _env(fmt, rounding, saturate, tininess, sr_bits):
    """(mode, saturate, tininess_before, sr_bits); options left at None come from
    the current softfp8 context (rounding(), saturation(), tininess())."""
    st = _context._current()
    mode = st.rounding if rounding is None else _context._mode_index(rounding)
    if saturate is None:
        saturate = None if st.saturate < 0 else bool(st.saturate)
    if saturate is None:
        sat = fmt.saturate if fmt is not None else False
    elif isinstance(saturate, (bool, np.bool_)):
        sat = bool(saturate)
    else:
        raise TypeError(f"saturate must be True, False or None, got {saturate!r}")
    if tininess is None:
        before = st.tininess_before
    elif isinstance(tininess, str) and tininess in ("after", "before"):
        before = int(tininess == "before")
    else:
        raise ValueError(f"tininess must be 'after' or 'before', got {tininess!r}")
    if sr_bits is None:
        n = st.sr_bits if rounding is None else 32
    else:
        n = _as_int(sr_bits, "sr_bits")
        if not 1 <= n <= 32:
            raise ValueError(f"sr_bits must be between 1 and 32, got {sr_bits!r}")
    return (mode, int(sat), before, n)


def _isa(isa):
    """The sfp8_isa value of an ``isa=`` option (None: the current softfp8.isa() context)."""
    if isa is None:
        return _context._current().isa
    return _context._isa_index(isa)


def _codes(a, fmt, what):
    arr = np.asarray(a)
    if arr.dtype.kind not in "ui":
        raise TypeError(f"{what} must be integer codes of {fmt.name} "
                        f"({fmt.storage} or another integer dtype), got dtype {arr.dtype}")
    if arr.size:
        lo, hi = arr.min(), arr.max()
        if lo < 0 or hi > fmt.code_mask:
            bad = lo if lo < 0 else hi
            raise ValueError(f"{what} holds code {int(bad)} out of range for {fmt.name} "
                             f"(0..{fmt.code_mask})")
    return arr


def _shape(arrays, names):
    try:
        return np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(f"{n}{a.shape}" for n, a in zip(names, arrays))
        raise ValueError(f"operands could not be broadcast together: {shapes}") from None


def _flat(arr, shape, dtype):
    return np.ascontiguousarray(np.broadcast_to(arr, shape), dtype=dtype).reshape(-1)


def _rng(env, shape, seed, random_bits):
    """(rngp, random array) for the kernels.  seed= and random_bits= are checked
    whatever the rounding mode, so a bad value is never silently ignored."""
    if seed is not None:
        _check_seed(seed)
    rb_flat = None
    if random_bits is not None:
        rb = np.asarray(random_bits)
        if rb.dtype.kind not in "ui":
            raise TypeError(f"random_bits must be an integer array (uint32), got dtype {rb.dtype}")
        if rb.size and (rb.min() < 0 or rb.max() > 0xFFFFFFFF):
            bad = rb.min() if rb.min() < 0 else rb.max()
            raise ValueError(f"random_bits values must fit in 32 bits (0..2**32-1), "
                             f"got {int(bad)}")
        try:
            np.broadcast_shapes(rb.shape, shape)
        except ValueError:
            raise ValueError(f"random_bits of shape {rb.shape} does not broadcast to the "
                             f"result shape {shape}") from None
        if np.broadcast_shapes(rb.shape, shape) != tuple(shape):
            raise ValueError(f"random_bits of shape {rb.shape} does not broadcast to the "
                             f"result shape {shape}")
        rb_flat = rb
    if env[0] != _STOCHASTIC:
        return (0, 0, 0, 0), None
    if rb_flat is not None:
        return (0, 0, 0, 0), _flat(rb_flat, shape, np.uint32)
    stream = 0
    if seed is None:
        st = _context._current()
        if st.seeded and st.rounding == _STOCHASTIC:
            # inside rounding("stochastic", seed=...): the context's seed, one
            # stream per operation, as for ufuncs and casts
            seed, stream = st.seed, st.counter
            st.counter += 1
        else:
            seed = secrets.randbits(64)
    return (1, _check_seed(seed), stream, 0), None


def _check_seed(seed):
    s = _as_int(seed, "seed")
    if not 0 <= s < 2**64:
        raise ValueError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
    return s


def _finish(out, flags, shape):
    return out.reshape(shape), flags.reshape(shape)


# --------------------------------------------------------------------------
# element operations: one function per row of the operation table
# (softfp8/_core/ops.def, read through _ext.op_table())
# --------------------------------------------------------------------------

class Operation(tuple):
    """One row of the operation table: (id, name, kind, rounds, noflags, ufunc, identity)."""

    __slots__ = ()
    id = property(lambda self: self[0])
    name = property(lambda self: self[1])
    kind = property(lambda self: self[2], doc="binary, compare, relation, unary, predicate, ternary, "
                    "unary2, unary_i32, binary2, binary_i64, unary_i64")
    rounds = property(lambda self: self[3], doc="depends on rounding/saturation/tininess")
    noflags = property(lambda self: self[4], doc="a bit operation: returns codes only")
    ufunc = property(lambda self: self[5], doc="the NumPy ufunc it implements (several names "
                     "separated by spaces), or None")
    identity = property(lambda self: self[6])

    @property
    def arity(self):
        return {"ternary": 3, "unary": 1, "predicate": 1, "unary2": 1, "unary_i32": 1,
                "unary_i64": 1}.get(self.kind, 2)

    @property
    def nout(self):
        """number of results (2 for divmod, modf, frexp and the augmented operations)"""
        return 2 if self.kind in ("unary2", "unary_i32", "binary2") else 1

    @property
    def ufuncs(self):
        """the names of the NumPy ufuncs it implements (a tuple, maybe empty)"""
        return tuple(self.ufunc.split()) if self.ufunc else ()


OPERATIONS = {row[0]: Operation((i,) + tuple(row)) for i, row in enumerate(_ext.op_table())}
_ARGNAMES = ("a", "b", "c")


def _result_dtypes(op, fmt):
    if op.kind in ("compare", "predicate"):
        return (np.dtype(np.bool_),)
    if op.kind == "relation":
        return (np.dtype(np.int8),)
    if op.kind == "unary_i32":
        return (fmt.storage, np.dtype(np.int32))
    if op.kind == "unary_i64":
        return (np.dtype(np.int64),)
    return (fmt.storage,) * op.nout


_I64 = np.iinfo(np.int64)


def _int64_operand(x, what):
    """An integer operand (ldexp's exponent) as int64: any integer dtype or Python
    ints; values beyond int64 are clamped (every result is the same beyond +-2^24)."""
    arr = np.asarray(x)
    if arr.dtype == object:  # Python ints beyond int64 (bits.min/max shadow the builtins here)
        vals = [_as_int(v, what) for v in arr.reshape(-1)]
        arr = np.array([_I64.min if v < _I64.min else _I64.max if v > _I64.max else v for v in vals],
                       dtype=np.int64).reshape(arr.shape)
    elif arr.dtype.kind == "u":
        arr = np.minimum(arr, np.uint64(_I64.max)).astype(np.int64)
    elif arr.dtype.kind != "i":
        raise TypeError(f"{what} must be integers (an integer dtype or Python ints), "
                        f"got dtype {arr.dtype}")
    return arr


def _apply(op, fmt, operands, rounding=None, saturate=None, tininess=None, seed=None,
           sr_bits=None, random_bits=None, isa=None, explain=False):
    """Run one operation of the table over broadcast operand code arrays."""
    fmt = _check_format(fmt)
    env = _env(fmt, rounding, saturate, tininess, sr_bits) if op.rounds else _NOENV
    if not op.noflags:
        env = env + (_isa(isa),)
    if explain is not False:
        if explain is not True:
            raise TypeError(f"explain must be True or False, got {explain!r}")
        return _explained(op, fmt, operands, env, seed, random_bits)
    names = _ARGNAMES[:len(operands)] if op.kind != "binary_i64" else ("a", "n")
    kinds = [fmt.storage] * len(operands)
    if op.kind == "binary_i64":
        arrays = [_codes(operands[0], fmt, "a"), _int64_operand(operands[1], "n")]
        kinds[1] = np.dtype(np.int64)
    else:
        arrays = [_codes(x, fmt, n) for x, n in zip(operands, names)]
    shape = _shape(arrays, names)
    rngp, rnd = _rng(env, shape, seed, random_bits) if op.rounds else ((0, 0, 0, 0), None)
    size = int(np.prod(shape, dtype=np.int64))
    outs = tuple(np.empty(size, dtype=dt) for dt in _result_dtypes(op, fmt))
    flags = np.zeros(size, dtype=np.uint8)
    _ext.run(op.id, fmt.params, env, rngp, rnd,
             tuple(_flat(x, shape, k) for x, k in zip(arrays, kinds)),
             outs if op.nout == 2 else outs[0], flags)
    if op.nout == 2:
        return tuple(o.reshape(shape) for o in outs), flags.reshape(shape)
    return _finish(outs[0], flags, shape)


def _explained(op, fmt, operands, env, seed, random_bits):
    """(result, flags, Explanation) of one element (scalar operands only)."""
    if op.kind not in ("binary", "unary", "ternary"):
        raise ValueError(f"explain=True is for operations with code operands and a code result; "
                         f"{op.name} is a {op.kind} operation")
    codes = [_codes(x, fmt, n) for x, n in zip(operands, _ARGNAMES)]
    if any(c.ndim for c in codes):
        raise ValueError("explain=True takes scalar operands (one element)")
    rnd = 0
    if op.rounds and env[0] == _STOCHASTIC:
        if random_bits is not None:
            rnd = int(np.asarray(random_bits).reshape(-1)[0]) & 0xFFFFFFFF
        else:
            _, arr = _rng(env, (), seed, None)
            rnd = 0 if arr is None else int(np.asarray(arr).reshape(-1)[0])
    vals = [int(c) for c in codes] + [0] * (3 - len(codes))
    r, fl, rec = _ext.explain(op.id, fmt.params, env, rnd, *vals)
    res = np.asarray(r, dtype=fmt.storage)[()]
    return res, np.uint8(fl), Explanation(fmt, op.name, tuple(vals[:len(codes)]), env, rnd, rec)


def _make(op):
    args = ", ".join(_ARGNAMES[:op.arity] if op.kind != "binary_i64" else ("a", "n"))
    if op.rounds:
        src = (f"def {op.name}(fmt, {args}, rounding=None, saturate=None, tininess=None, "
               f"seed=None, sr_bits=None, random_bits=None, isa=None, explain=False):\n"
               f"    return _apply(_OP, fmt, ({args},), rounding, saturate, tininess, seed, "
               f"sr_bits, random_bits, isa, explain)\n")
    elif op.noflags:
        src = (f"def {op.name}(fmt, {args}):\n"
               f"    return _apply(_OP, fmt, ({args},))[0]\n")
    else:
        src = (f"def {op.name}(fmt, {args}, isa=None):\n"
               f"    return _apply(_OP, fmt, ({args},), isa=isa)\n")
    ns = {"_apply": _apply, "_OP": op}
    exec(src, ns)  # a real signature for help() and inspect, from the table row
    fn = ns[op.name]
    fn.__module__ = __name__
    result = {"compare": "bool array", "predicate": "bool array",
              "relation": "int8 relations (-1 less, 0 equal, 1 greater, 2 unordered)",
              "unary2": "(codes, codes) of fmt", "binary2": "(codes, codes) of fmt",
              "unary_i32": "(codes of fmt, int32 exponents)",
              "unary_i64": "int64 array"}.get(op.kind, "codes of fmt")
    fn.__doc__ = (_DOCS.get(op.name, op.name) + "\n\nReturns " +
                  (result if op.noflags else f"({result}, flags)") +
                  ("; the element operation of " + ", ".join(f"np.{u}" for u in op.ufuncs) + "."
                   if op.ufunc else "."))
    return fn


_DOCS = {
    "add": "a + b, rounded once.", "sub": "a - b, rounded once.", "mul": "a * b, rounded once.",
    "div": "a / b, rounded once.", "fma": "a * b + c with a single rounding.",
    "sqrt": "Square root, rounded once.",
    "floordiv": "floor(a / b), exact then rounded once (Python/NumPy semantics).",
    "remainder": "a - b * floor(a / b), sign of b, rounded once.",
    "min": "IEEE minimum: NaN-propagating, -0 < +0.", "max": "IEEE maximum: NaN-propagating, -0 < +0.",
    "minnum": "IEEE minimumNumber: a NaN operand is ignored.",
    "maxnum": "IEEE maximumNumber: a NaN operand is ignored.",
    "copysign": "Magnitude of a with the sign of b (bit operation, no flags).",
    "nextafter": "Next representable value after a toward b (C99 flags).",
    "neg": "Sign flip (bit operation, no flags).", "pos": "a itself (no flags).",
    "abs": "Clear the sign (bit operation, no flags).",
    "spacing": "NumPy's spacing: distance to the next value away from zero.",
    "cmp_quiet": "IEEE compareQuiet: the relation of a and b.",
    "cmp_signaling": "IEEE compareSignaling: the relation; any NaN raises invalid.",
    "logical_not": "a == 0 (NumPy's logical_not: NaN is non-zero, so False).",
    "fmod": "C fmod: a - b * trunc(a / b), exact, sign of a; fmod(inf, b) and fmod(a, 0) are "
            "invalid.",
    "heaviside": "NumPy's heaviside(a, b): 0 if a < 0, b if a == 0, 1 if a > 0, NaN if a is NaN.",
    "divmod": "(floordiv(a, b), remainder(a, b)), each exactly as its own function.",
    "modf": "(fractional part, integral part) of a, exact, both with the sign of a; "
            "modf(+-inf) = (+-0, +-inf).",
    "frexp": "(m, e) with a = m * 2**e and 0.5 <= |m| < 1 (m rounded once where the format "
             "cannot hold it, with its flags); e is int32, 0 for zero, inf and NaN.",
    "ldexp": "a * 2**n rounded once; n is an integer array (any integer dtype or Python ints).",
    # IEEE 754-2019 (docs/conformance.md lists every operation with its section)
    "ieee_remainder": "IEEE 754 remainder (5.3.1): a - b*n, n the integer nearest a/b (ties to even); "
                      "exact.  (remainder is NumPy's floored one.)",
    "nextup": "IEEE nextUp (5.3.1): the least value above a (+inf stays +inf; quiet).",
    "nextdown": "IEEE nextDown (5.3.1): the greatest value below a (-inf stays -inf; quiet).",
    "round_ties_even": "IEEE roundToIntegralTiesToEven (5.3.1): nearest integral value, ties to even.",
    "round_ties_away": "IEEE roundToIntegralTiesToAway (5.3.1): nearest integral value, ties away from "
                       "zero (C round).",
    "logb": "IEEE logB (5.3.3): floor(log2|a|) as a value of the format; logb(0) = -inf "
            "(divbyzero), logb(inf) = +inf.",
    "scaleb": "IEEE scaleB (5.3.3): a * 2**n rounded once (the same function as ldexp).",
    "fpclass": "IEEE class (5.7.2) as int64: 0 signalingNaN, 1 quietNaN, 2 negativeInfinity, "
               "3 negativeNormal, 4 negativeSubnormal, 5 negativeZero, 6 positiveZero, "
               "7 positiveSubnormal, 8 positiveNormal, 9 positiveInfinity.",
    "isnormal": "IEEE isNormal (5.7.2).", "issubnormal": "IEEE isSubnormal (5.7.2) (a flushed "
    "subnormal code too).", "iszero": "IEEE isZero (5.7.2).",
    "issignaling": "IEEE isSignaling (5.7.2).",
    "iscanonical": "IEEE isCanonical (5.7.2): False only for the subnormal codes of a flushing "
                   "format (second encodings of zero).",
    "total_order": "IEEE totalOrder (5.10): a <= b in the total order -NaN < -inf < ... < -0 < "
                   "+0 < ... < +inf < +NaN.",
    "total_order_mag": "IEEE totalOrderMag (5.10): total_order(|a|, |b|).",
    "augmented_add": "IEEE augmentedAddition (9.5): (a + b rounded ties toward zero, the exact "
                     "error rounded ties toward zero).",
    "augmented_sub": "IEEE augmentedSubtraction (9.5): (a - b rounded ties toward zero, the error).",
    "augmented_mul": "IEEE augmentedMultiplication (9.5): (a * b rounded ties toward zero, the "
                     "error, exact unless it lies below the format's range).",
    "minmag": "IEEE minimumMagnitude (9.6).", "maxmag": "IEEE maximumMagnitude (9.6).",
    "minmagnum": "IEEE minimumMagnitudeNumber (9.6).",
    "maxmagnum": "IEEE maximumMagnitudeNumber (9.6).",
    "get_payload": "IEEE getPayload (9.7): a NaN's payload as a value of the format, -1 otherwise.",
    "set_payload": "IEEE setPayload (9.7): the quiet NaN with payload a (an integer value), "
                   "+0 if a is not a valid payload.",
    "set_payload_signaling": "IEEE setPayloadSignaling (9.7): the signalling NaN with payload a, "
                             "+0 if a is not a valid payload (0 is not).",
    # IEEE P3109 Interim Report v4.0
    "min_finite": "P3109 MinimumFinite (4.11.3): minimumNumber ignoring an infinite operand "
                  "beside a finite one.",
    "max_finite": "P3109 MaximumFinite (4.11.3).",
    "clamp": "P3109 Clamp (4.11.4): b if a <= b, else c if a >= c, else a; NaN if b > c "
             "(invalid).",
    "faa": "P3109 FAA (4.10.7): a + b + c exactly, rounded once.",
    "total_order_p3109": "P3109 TotalOrder (4.12.1): True if a is NaN, False if only b is, "
                         "else a <= b.",
    "isone": "P3109 IsOne (4.13): the value is exactly 1.",
    "next_greater": "P3109 NextGreaterThan (4.16): as nextup, but NaN (invalid) above +inf.",
    "next_less": "P3109 NextLessThan (4.16): as nextdown, but NaN (invalid) below -inf.",
}
for _d, _ieee in (("ties_even", "TiesToEven"), ("ties_away", "TiesToAway"), ("toward_zero", "TowardZero"),
                  ("upward", "TowardPositive"), ("downward", "TowardNegative")):
    _DOCS["to_int_" + _d] = (f"IEEE convertToInteger{_ieee} (5.8) into int64 (NaN and out of "
                             "range: invalid; no inexact).")
    _DOCS["to_int_exact_" + _d] = (f"IEEE convertToIntegerExact{_ieee} (5.8) into int64 (inexact "
                                   "when the value changes).")
del _d, _ieee

for _op in OPERATIONS.values():
    globals()[_op.name] = _make(_op)
del _op


def round_integral(fmt, a, exact=False, rounding=None, saturate=None, tininess=None,
                   seed=None, sr_bits=None, random_bits=None, isa=None, explain=False):
    """Round to an integral value in the same format (IEEE roundToIntegral;
    ``exact=True`` is roundToIntegralExact, which raises inexact)."""
    op = OPERATIONS["round_integral_exact" if exact else "round_integral"]
    return _apply(op, fmt, (a,), rounding, saturate, tininess, seed, sr_bits, random_bits, isa,
                  explain)


def compare(fmt, a, b, signaling=False, isa=None):
    """IEEE comparison: relation -1 (less), 0 (equal), 1 (greater), 2 (unordered)."""
    return _apply(OPERATIONS["cmp_signaling" if signaling else "cmp_quiet"], fmt, (a, b), isa=isa)


def sum(fmt, a, axis=None, rounding=None, saturate=None, tininess=None, seed=None,
        sr_bits=None):
    """The exact sum of codes a rounded once into fmt (as np.sum of a softfp8 array
    within one inner loop): over all elements (axis=None) or along one axis.
    Returns (codes, flags); an empty sum is +0.  Stochastic rounding draws one
    random word per result (seed= as for the other functions)."""
    fmt = _check_format(fmt)
    env = _env(fmt, rounding, saturate, tininess, sr_bits)
    arr = _codes(a, fmt, "a")
    if axis is None:
        arr = arr.reshape(1, -1)
    else:
        ax = _as_int(axis, "axis")
        if not -arr.ndim <= ax < arr.ndim:
            raise ValueError(f"axis {axis!r} is out of bounds for an array of {arr.ndim} dimensions")
        arr = np.moveaxis(arr, ax, -1)
    shape = arr.shape[:-1]
    rows = np.ascontiguousarray(arr, dtype=fmt.storage).reshape(int(np.prod(shape)), arr.shape[-1])
    rngp, _ = _rng(env, shape, seed, None)
    out = np.empty(rows.shape[0], dtype=fmt.storage)
    flags = np.zeros(rows.shape[0], dtype=np.uint8)
    for i in range(rows.shape[0]):
        # one stream element per result: element i of the seeded stream
        r = (rngp[0], rngp[1], rngp[2], rngp[3] + i)
        out[i], flags[i] = _ext.sum_exact(fmt.params, env, r, rows[i])
    if axis is None:
        return out.reshape(()), flags.reshape(())
    return out.reshape(shape), flags.reshape(shape)


def _rows(fmt, arrays, axis):
    """Operand code arrays (broadcast together) as rows of contiguous codes: along
    `axis`, or all elements in one row (axis=None); (rows..., result shape)."""
    arrs = [_codes(x, fmt, n) for x, n in zip(arrays, ("a", "b"))]
    shape = _shape(arrs, ("a", "b")[:len(arrs)])
    arrs = [np.broadcast_to(x, shape) for x in arrs]
    if axis is None:
        arrs = [x.reshape(1, -1) for x in arrs]
    else:
        ax = _as_int(axis, "axis")
        if not -len(shape) <= ax < len(shape):
            raise ValueError(f"axis {axis!r} is out of bounds for an array of {len(shape)} dimensions")
        arrs = [np.moveaxis(x, ax, -1) for x in arrs]
    out_shape = arrs[0].shape[:-1]
    m = int(np.prod(out_shape, dtype=np.int64))
    rows = [np.ascontiguousarray(x, dtype=fmt.storage).reshape(m, x.shape[-1]) for x in arrs]
    return rows, (out_shape if axis is not None else ())


def _reduction(kind, fmt, arrays, axis, rounding, saturate, tininess, seed, sr_bits):
    fmt = _check_format(fmt)
    env = _env(fmt, rounding, saturate, tininess, sr_bits)
    rows, shape = _rows(fmt, arrays, axis)
    rngp, _ = _rng(env, shape, seed, None)
    n = rows[0].shape[0]
    out = np.empty(n, dtype=fmt.storage)
    flags = np.zeros(n, dtype=np.uint8)
    for i in range(n):
        r = (rngp[0], rngp[1], rngp[2], rngp[3] + i)   # one random word per result
        out[i], flags[i] = _ext.reduce(fmt.params, env, r, kind, rows[0][i],
                                       rows[1][i] if len(rows) > 1 else None)
    return out.reshape(shape), flags.reshape(shape)


def dot(fmt, a, b, axis=None, rounding=None, saturate=None, tininess=None, seed=None, sr_bits=None):
    """IEEE 754-2019 dot (9.4): sum of a_i * b_i, exact, rounded once (over all
    elements, or along one axis of the broadcast operands).  Returns (codes, flags)."""
    return _reduction(1, fmt, (a, b), axis, rounding, saturate, tininess, seed, sr_bits)


def sum_square(fmt, a, axis=None, rounding=None, saturate=None, tininess=None, seed=None, sr_bits=None):
    """IEEE 754-2019 sumSquare (9.4): sum of a_i ** 2, exact, rounded once."""
    return _reduction(2, fmt, (a,), axis, rounding, saturate, tininess, seed, sr_bits)


def sum_abs(fmt, a, axis=None, rounding=None, saturate=None, tininess=None, seed=None, sr_bits=None):
    """IEEE 754-2019 sumAbs (9.4): sum of |a_i|, exact, rounded once."""
    return _reduction(3, fmt, (a,), axis, rounding, saturate, tininess, seed, sr_bits)


def exact_values(fmt, codes):
    """The exact values of codes of fmt: (cls, sign, sig, exp) arrays with
    value = (-1)**sign * sig * 2**exp (sig a Python-int-sized int64, 0 for zero);
    cls 0 finite (zero included), 1 infinity, 2 quiet NaN, 3 signalling NaN (the
    scaled products use 4 for an invalid sum).  Read
    from the code fields (no rounding)."""
    fmt = _check_format(fmt)
    c = _codes(codes, fmt, "codes").astype(np.int64)
    cls_core = np.vectorize(lambda v: _ext.classify(fmt.params, int(v)), otypes=[np.int64])(c) \
        if c.size else np.zeros(c.shape, np.int64)
    # sfp8_classify: 0 zero, 1 subnormal, 2 normal, 3 inf, 4 qnan, 5 snan
    cls = np.select([cls_core == 3, cls_core == 4, cls_core == 5], [1, 2, 3], 0)
    signbit = (c >> (fmt.bits - 1)) & 1 if fmt.signed else np.zeros_like(c)
    mag = c & ((1 << (fmt.bits - 1)) - 1) if fmt.signed else c
    M = fmt.man_bits
    field, mant = mag >> M, mag & ((1 << M) - 1)
    sub = (field == 0) & (fmt.subnormals != "nozero")
    sub_exp = {"ieee": 1 - fmt.bias, "tesla": -fmt.bias, "flush": 0, "nozero": 0}[fmt.subnormals]
    sig = np.where(sub, mant, mant | (1 << M))
    exp = np.where(sub, sub_exp - M, field - fmt.bias - M)
    zero = (cls_core == 0) | ((cls_core == 1) & (fmt.subnormals == "flush"))
    sig = np.where(zero | (cls != 0), 0, sig)
    nan_unsigned = (cls >= 2) & (fmt.specials in ("fnuz", "p3109"))
    sign = np.where(nan_unsigned, 0, signbit)
    return cls, sign.astype(np.int64), sig.astype(np.int64), np.where(sig == 0, 0, exp).astype(np.int64)


def round_exact(fmt, sign, ints, exps, rounding=None, saturate=None, tininess=None, seed=None,
                sr_bits=None, random_bits=None):
    """Round the exact values (-1)**sign * ints * 2**exps (Python ints of any size,
    exps any ints) once into fmt by the core's rounding routine: (codes, flags).
    For softfp8's own exact computations in Python (scaled products, P3109 block
    operations); zero ints give zeros of the sign."""
    fmt = _check_format(fmt)
    env = _env(fmt, rounding, saturate, tininess, sr_bits)
    n = len(ints)
    rngp, rnd = _rng(env, (n,), seed, random_bits)
    sg = np.zeros(n, np.uint8)
    sig = np.zeros(n, np.uint64)
    ex = np.zeros(n, np.int64)
    st = np.zeros(n, np.uint8)
    lim = 1 << 40   # beyond every format's range: overflow / underflow alike
    for i, (s, m, e) in enumerate(zip(sign, ints, exps)):
        m, e = int(m), int(e)
        sg[i] = 1 if s else 0
        if m == 0:
            continue
        bl = m.bit_length()
        if bl > 64:
            sh = bl - 64
            sig[i], st[i], e = m >> sh, (m & ((1 << sh) - 1)) != 0, e + sh
        else:
            sig[i] = m << (64 - bl)
            e -= 64 - bl
        ex[i] = -lim if e < -lim else lim if e > lim else e
    out = np.empty(n, fmt.storage)
    flags = np.zeros(n, np.uint8)
    _ext.round_values(fmt.params, env, rngp, rnd, sg, sig, ex, st, out, flags)
    return out, flags


def _scaled(fmt, factors, axis, opts):
    """(pr, sf), flags of the exact product of the rows of factors: each factor an
    exact (cls, sign, int, exp) of a sum (or a value), pr = product * 2**-sf in
    [1, 2] rounded once, sf = floor(log2|product|)."""
    fmt = _check_format(fmt)
    cls, sign, m, e = factors
    n = cls.shape[0]
    out = np.empty(n, fmt.storage)
    sfs = np.zeros(n, np.int64)
    flags = np.zeros(n, np.uint8)
    todo, spec, spec_val, spec_fl = [], [], [], []
    for i in range(n):
        c = cls[i]
        neg = int(sign[i][c != 2].sum()) & 1
        if (c >= 2).any():                       # a NaN factor (or an invalid sum)
            v, f = np.nan, 16 if (c == 3).any() or (c == 4).any() else 0
        elif (c == 1).any() and (m[i][c == 0] == 0).any():   # infinity times zero
            v, f = np.nan, 16
        elif (c == 1).any():
            v, f = -np.inf if neg else np.inf, 0
        elif (m[i] == 0).any():
            v, f = -0.0 if neg else 0.0, 0
        else:
            todo.append(i)
            continue
        spec.append(i)
        spec_val.append(v)
        spec_fl.append(f)
    if spec:   # the special results as the core delivers them (saturation, no -0, ...)
        so = {k: opts[k] for k in ("saturate",)}
        codes, fl = convert(np.array(spec_val), np.float64, fmt, rounding="nearest_even", **so)
        out[spec] = codes
        flags[spec] = fl | np.array(spec_fl, np.uint8)
    if todo:
        ints, exps, signs = [], [], []
        for i in todo:
            p = math.prod(int(v) for v in m[i])
            E = int(e[i].sum())
            sf = p.bit_length() - 1 + E
            ints.append(p)
            exps.append(E - sf)
            signs.append(int(sign[i].sum()) & 1)
            sfs[i] = sf
        codes, fl = round_exact(fmt, signs, ints, exps, **opts)
        out[todo] = codes
        flags[todo] = fl
    return out, sfs, flags


def _factor_rows(fmt, arrays, axis, op):
    """The exact factors p_i (op None), p_i + q_i or p_i - q_i as (cls, sign, int, exp)
    row arrays (object dtype for the ints)."""
    rows, shape = _rows(fmt, arrays, axis)
    vals = [exact_values(fmt, r) for r in rows]
    if op is None:
        cls, sign, m, e = vals[0]
        return (cls, sign, m.astype(object), e), shape
    (cp, sp, mp, ep), (cq, sq, mq, eq) = vals
    if op == "diff":
        sq = 1 - sq
    cls = np.maximum(cp, cq)
    both_inf = (cp == 1) & (cq == 1) & (sp != sq)
    cls = np.where(both_inf, 4, cls)          # an invalid sum: NaN with invalid
    e0 = np.minimum(np.where(mp == 0, eq, ep), np.where(mq == 0, ep, eq))
    a = mp.astype(object) * (2 ** (ep - e0).astype(object)) * np.where(sp == 1, -1, 1)
    b = mq.astype(object) * (2 ** (eq - e0).astype(object)) * np.where(sq == 1, -1, 1)
    tot = a + b
    inf_sign = np.where(cp == 1, sp, sq)
    zero_neg = (mp == 0) & (mq == 0) & (sp == 1) & (sq == 1)      # (-0) + (-0) = -0 (6.3)
    sign = np.where(cls == 1, inf_sign, np.where(tot < 0, 1, np.where(tot == 0, zero_neg, 0)))
    mag = np.where(tot < 0, -tot, tot)
    return (cls, sign, np.where(cls == 0, mag, 0), e0), shape


def _scaled_api(fmt, arrays, op, axis, rounding, saturate, tininess, seed, sr_bits):
    fmt = _check_format(fmt)
    _env(fmt, rounding, saturate, tininess, sr_bits)      # bad options fail whatever the values
    if seed is not None:
        _check_seed(seed)
    (cls, sign, m, e), shape = _factor_rows(fmt, arrays, axis, op)
    opts = {"rounding": rounding, "saturate": saturate, "tininess": tininess, "seed": seed,
            "sr_bits": sr_bits}
    pr, sf, fl = _scaled(fmt, (cls, sign, m, e), axis, opts)
    return (pr.reshape(shape), sf.reshape(shape)), fl.reshape(shape)


def scaled_prod(fmt, a, axis=None, rounding=None, saturate=None, tininess=None, seed=None,
                sr_bits=None):
    """IEEE 754-2019 scaledProd (9.4): the product of a_i as (pr, sf), pr * 2**sf =
    the exact product, pr in [1, 2] rounded once (sf = floor(log2|product|): no
    overflow nor underflow), sf int64; a zero, infinite or NaN product: pr that
    value, sf 0.  Returns ((pr codes, sf), flags)."""
    return _scaled_api(fmt, (a,), None, axis, rounding, saturate, tininess, seed, sr_bits)


def scaled_prod_sum(fmt, a, b, axis=None, rounding=None, saturate=None, tininess=None, seed=None,
                    sr_bits=None):
    """IEEE 754-2019 scaledProdSum (9.4): the product of (a_i + b_i), each sum exact,
    as scaled_prod."""
    return _scaled_api(fmt, (a, b), "sum", axis, rounding, saturate, tininess, seed, sr_bits)


def scaled_prod_diff(fmt, a, b, axis=None, rounding=None, saturate=None, tininess=None, seed=None,
                     sr_bits=None):
    """IEEE 754-2019 scaledProdDiff (9.4): the product of (a_i - b_i), as scaled_prod."""
    return _scaled_api(fmt, (a, b), "diff", axis, rounding, saturate, tininess, seed, sr_bits)


# --------------------------------------------------------------------------
# conversions
# --------------------------------------------------------------------------

def _endpoint(x, what):
    """(params, storage dtype, float dtype or None, Format or None) of a conversion endpoint."""
    if isinstance(x, Format):
        return x.params, x.storage, None, x
    fmt = format_or_none(x)
    if fmt is not None:
        return fmt.params, fmt.storage, None, fmt
    try:
        dt = np.dtype(x)
    except TypeError:
        raise TypeError(f"{what} must be a softfp8 format, np.float32 or np.float64; got {x!r}") from None
    if dt not in _FLOATS:
        raise TypeError(f"{what} must be a softfp8 format, np.float32 or np.float64; got {x!r}")
    return _FLOATS[dt], _FLOAT_BITS[dt], dt, None


def _source_codes(a, params, storage, fdt, fmt, what):
    if fdt is None:
        return _codes(a, fmt, what)
    arr = np.asarray(a)
    if arr.dtype == fdt:
        return arr.view(storage) if arr.ndim else arr.reshape(1).view(storage).reshape(())
    if arr.dtype.kind in "ui":
        if arr.size and (arr.min() < 0 or arr.max() > np.iinfo(storage).max):
            bad = arr.min() if arr.min() < 0 else arr.max()
            raise ValueError(f"{what}: bit pattern {int(bad)} out of range for {fdt} "
                             f"(0..{np.iinfo(storage).max})")
        return arr
    raise TypeError(f"{what} must be a {fdt} array (or its {storage} bit patterns), got dtype "
                    f"{arr.dtype}")


def convert(a, src, dst, rounding=None, saturate=None, tininess=None, seed=None,
            sr_bits=None, random_bits=None, isa=None, explain=False):
    """Convert codes of ``src`` into ``dst`` (formats, np.float32 or np.float64).
    ``isa``: an ISA convention (softfp8.isa); ``explain=True`` (one element):
    ``(result, flags, Explanation)``."""
    sp, sst, sfdt, sfmt = _endpoint(src, "src")
    dp, dst_storage, dfdt, dfmt = _endpoint(dst, "dst")
    env = _env(dfmt, rounding, saturate, tininess, sr_bits) + (_isa(isa),)
    a = _source_codes(a, sp, sst, sfdt, sfmt, "a")
    if explain is not False:
        if explain is not True or a.ndim:
            raise ValueError("explain=True takes one element (a scalar a)")
        rnd = int(np.asarray(random_bits).reshape(-1)[0]) & 0xFFFFFFFF if random_bits is not None else 0
        r, fl, rec = _ext.convert_explain(sp, dp, env, rnd, int(a))
        res = np.asarray(r, dtype=dst_storage)[()]
        if dfdt is not None:
            res = res.view(dfdt)
        return res, np.uint8(fl), Explanation(dfmt if dfmt is not None else dp, "convert", (int(a),),
                                              env, rnd, rec)
    shape = a.shape
    rngp, rnd = _rng(env, shape, seed, random_bits)
    src_codes = np.ascontiguousarray(a, dtype=sst).reshape(-1)
    out = np.empty(src_codes.size, dtype=dst_storage)
    flags = np.zeros(src_codes.size, dtype=np.uint8)
    _ext.convert(sp, dp, env, rngp, rnd, src_codes, out, flags)
    out = out.reshape(shape)
    if dfdt is not None:
        out = out.view(dfdt) if out.ndim else out.reshape(1).view(dfdt).reshape(())
    return out, flags.reshape(shape)


def from_float(x, fmt, rounding=None, saturate=None, tininess=None, seed=None,
               sr_bits=None, random_bits=None):
    """Round a float32/float64 array (its dtype is the source format) into fmt."""
    fmt = _check_format(fmt)
    arr = np.asarray(x)
    if arr.dtype not in _FLOATS:
        raise TypeError(f"from_float needs a float32 or float64 array, got dtype {arr.dtype}")
    return convert(arr, arr.dtype.type, fmt, rounding=rounding, saturate=saturate,
                   tininess=tininess, seed=seed, sr_bits=sr_bits, random_bits=random_bits)


def to_float(codes, fmt, dtype=np.float64, rounding=None, saturate=None,
             tininess=None, seed=None, sr_bits=None, random_bits=None):
    """Convert codes of fmt to float32/float64 (exact for every preset)."""
    fmt = _check_format(fmt)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be np.float32 or np.float64, got {dtype!r}") from None
    if dt not in _FLOATS:
        raise TypeError(f"dtype must be np.float32 or np.float64, got {dtype!r}")
    return convert(codes, fmt, dt.type, rounding=rounding, saturate=saturate, tininess=tininess,
                   seed=seed, sr_bits=sr_bits, random_bits=random_bits)


def to_int64(fmt, a, rounding=None, seed=None, sr_bits=None, random_bits=None):
    """Round to int64 (NaN -> INT64_MAX, out of range saturates; both invalid)."""
    fmt = _check_format(fmt)
    env = _env(fmt, rounding, None, None, sr_bits)
    a = _codes(a, fmt, "a")
    shape = a.shape
    rngp, rnd = _rng(env, shape, seed, random_bits)
    src = _flat(a, shape, fmt.storage)
    out = np.empty(src.size, dtype=np.int64)
    flags = np.zeros(src.size, dtype=np.uint8)
    _ext.to_int64(fmt.params, env, rngp, rnd, src, out, flags)
    return _finish(out, flags, shape)


def from_int64(x, fmt, rounding=None, saturate=None, tininess=None, seed=None,
               sr_bits=None, random_bits=None):
    """Round int64 values into fmt."""
    fmt = _check_format(fmt)
    env = _env(fmt, rounding, saturate, tininess, sr_bits)
    arr = np.asarray(x)
    if arr.dtype.kind not in "ui":
        raise TypeError(f"from_int64 needs integers, got dtype {arr.dtype}")
    if arr.size and (arr.max() > np.iinfo(np.int64).max or arr.min() < np.iinfo(np.int64).min):
        bad = arr.max() if arr.max() > np.iinfo(np.int64).max else arr.min()
        raise ValueError(f"from_int64: values must fit in int64, got {int(bad)}")
    shape = arr.shape
    rngp, rnd = _rng(env, shape, seed, random_bits)
    src = _flat(arr, shape, np.int64)
    out = np.empty(src.size, dtype=fmt.storage)
    flags = np.zeros(src.size, dtype=np.uint8)
    _ext.from_int64(fmt.params, env, rngp, rnd, src, out, flags)
    return _finish(out, flags, shape)


__all__ = sorted(set(OPERATIONS) | {"round_integral", "compare", "sum", "convert", "from_float",
                                    "to_float", "to_int64", "from_int64", "ROUNDING_MODES",
                                    "OPERATIONS", "Operation", "dot", "sum_square", "sum_abs",
                                    "scaled_prod", "scaled_prod_sum", "scaled_prod_diff",
                                    "exact_values", "round_exact"})
