"""NumPy DTypes, scalar types, printing and finfo for softfp8 formats.

One DType class per format family (``E4M3DType``, ``CFloat8_143DType``, ...);
a dtype instance (descriptor) per format, so ``cfloat8_143(bias=20).dtype``
and ``cfloat8_143(bias=7).dtype`` are two descriptors of one DType class.
"""
from __future__ import annotations

import decimal
import math
import numbers
import operator

import numpy as np

from . import _cache, _context, _ext, _formats, _registry
from . import bits as _bits
from ._formats import Format
from ._validation import as_format, format_or_none

# family key (preset name, Tesla family name or "format") -> DType class name, in the
# order of the C preset table, the factory family last
_FAMILY_NAMES = {**{name: _formats.ROWS[name].dtype for name in _formats._PRESET_ROWS},
                 _registry.FACTORY_FAMILY: _registry.FACTORY_DTYPE}
_PARAMETRIC = {*_formats.FAMILIES, _registry.FACTORY_FAMILY}


def _family_key(fmt: Format) -> str:
    if fmt._family == "tesla":
        return fmt.name.split("(")[0]
    if fmt._family == "preset":
        return fmt.name
    return _registry.FACTORY_FAMILY


# --------------------------------------------------------------------------
# promotion ranks, computed from the value sets
# --------------------------------------------------------------------------

# NumPy's floats by promotion rank
_RANK_FLOATS = ((1, np.float16), (2, np.float32), (3, np.float64))
# decoding options: stochastic rounding keeps the fast path from building (and caching) a
# table per format at import; a conversion into binary64 is exact for every format, so
# the mode never changes a value
_DECODE_ENV = (_context.ROUNDING_MODES.index("stochastic"), 0, 0, 32)
_DECODE_RNG = (1, 0, 0, 0)


def _values(fmt: Format) -> np.ndarray:
    """float64 values of every code of fmt, NaNs dropped (exact)."""
    codes = np.arange(1 << fmt.bits, dtype=np.uint64)
    out, _ = _formats.convert_codes(fmt.params, _ext.BINARY64, codes, _DECODE_ENV, _DECODE_RNG)
    v = out.view(np.float64)
    return v[~np.isnan(v)]


def _family_values(key) -> np.ndarray:
    """Every value of every format of a family, as far as containment in an IEEE float
    can tell: a preset's own values; for a Tesla family the values at bias 0 and 63 (both
    subnormal conventions).  The bias only shifts the exponent (bias b gives the values of
    bias 0 times 2^-b), and a binary float holds m * 2^e (m odd) iff its top bit is below
    the overflow threshold - worst at bias 0 - and e is not below the float's smallest
    subnormal exponent - worst at bias 63; so biases 0 and 63 decide every bias
    (tests/tools/test_registry_and_api.py recomputes the ranks over all 64)."""
    if key in _formats.FAMILIES:
        fam = _formats.FAMILIES[key]
        return np.concatenate([_values(fam(bias=b, subnormals=sub))
                               for b in (0, 63) for sub in ("tesla", "ieee")])
    return _values(_formats.PRESETS[key])


def _float_rank(key) -> int:
    """The smallest NumPy float (1 float16, 2 float32, 3 float64) holding every value
    of every format of the family exactly (a value is held if the cast gives it back);
    0 if none does, or for the factory family (no fixed answer)."""
    if key == _registry.FACTORY_FAMILY:
        return 0
    vals = _family_values(key)
    mags = np.abs(vals[np.isfinite(vals) & (vals != 0)])
    probe = np.array([mags.max(), mags.min()]) if mags.size else mags

    def held(v, t):
        return np.array_equal(v.astype(t).astype(np.float64), v)

    with np.errstate(all="ignore"):
        for rank, t in _RANK_FLOATS:
            # the largest and smallest magnitudes first: they rule out most candidates
            if held(probe, t) and held(vals, t):
                return rank
    return 0


def _promotion_rank(key) -> int:
    """The class-level promotion rank given to the C glue: the containment rank, except
    for the factory family (softfp8.format(...)), which has none and promotes with NumPy
    numbers and other families to float64, the widest NumPy float, as a preset would
    with float64 (a custom format with values beyond binary64 overflows in that cast,
    with NumPy's warning)."""
    return 3 if key == _registry.FACTORY_FAMILY else _FLOAT_RANK[key]


# --------------------------------------------------------------------------
# scalars
# --------------------------------------------------------------------------

_MISSING = object()
# operands NumPy's ufuncs take as they are
_DIRECT = (int, float, complex, np.number, np.bool_)
_UFUNC, _DEFER, _AS_FLOAT = 0, 1, 2


def _operand(o):
    """(how, operand) for a scalar operator: _UFUNC (call the ufunc with operand),
    _DEFER (return NotImplemented) or _AS_FLOAT (compute as the Python float).

    Anything the ufunc would turn into an object array (None, Fraction, Decimal,
    arbitrary objects) must not reach it: the object loop would call this scalar's
    operator again (endless recursion).  NumPy's own scalars compute such operations
    on Python floats: float16(1.5) + Fraction(1, 3) is the float 1.8333..., and
    float16(1.5) + None raises TypeError; so does a softfp8 scalar."""
    if isinstance(o, (SoftScalar, *_DIRECT)):
        return _UFUNC, o
    if isinstance(o, np.ndarray):
        # an object array applies the operator element by element itself
        return (_UFUNC, o) if o.dtype != object else (_DEFER, None)
    handler = getattr(type(o), "__array_ufunc__", _MISSING)
    if handler is None:
        return _DEFER, None     # the other operand opted out of ufuncs: its operator decides
    if handler is not _MISSING:
        return _UFUNC, o        # the other operand's ufunc override decides
    if isinstance(o, (list, tuple)) or hasattr(o, "__array__"):
        try:
            arr = np.asarray(o)
        except (TypeError, ValueError):
            return _AS_FLOAT, o
        if arr.dtype != object:
            return _UFUNC, arr
        return _DEFER, None
    return _AS_FLOAT, o


def _binop(ufunc, pyop, reflected=False):
    def op(self, o):
        how, o = _operand(o)
        if how == _UFUNC:
            return ufunc(o, self) if reflected else ufunc(self, o)
        if how == _DEFER:
            return NotImplemented
        return pyop(o, float(self)) if reflected else pyop(float(self), o)
    op.__name__ = f"__{'r' if reflected else ''}{pyop.__name__.strip('_')}__"
    return op


class SoftScalar(_ext.ScalarBase):
    """A softfp8 scalar: one code of one format (a NumPy floating scalar)."""

    __slots__ = ()
    _default_dtype = None

    def __new__(cls, value=0.0, dtype=None):
        if dtype is None and isinstance(value, cls):
            dtype = value.dtype
        if dtype is None:
            dtype = cls._default_dtype
            if dtype is None:
                raise TypeError(f"{cls.__name__}(value, dtype=...) needs the dtype of a "
                                f"parametric format, e.g. softfp8.cfloat8_143(bias=20).dtype")
        else:
            dtype = _as_descr(dtype)
        # always an instance of the family's scalar type (the one NumPy maps to
        # the DType), also when called through a per-format dtype.type
        return _ext.ScalarBase.__new__(_SCALAR_TYPES[_family_key(dtype.format)], value, dtype)

    @property
    def format(self):
        return self.dtype.format

    def __float__(self):
        return self.format.decode(self.code)

    def item(self):
        return float(self)

    def __int__(self):
        return int(float(self))

    def __index__(self):
        raise TypeError(f"{self!r} is not an integer")

    def __bool__(self):
        cls = self.format.classify(self.code)
        return not (cls == "zero" or (cls == "subnormal" and self.format.subnormals == "flush"))

    # hash(float(self)); NaN by identity as NumPy's floats (softfp8/_core/npy/scalar.c)
    __hash__ = _ext.ScalarBase.__hash__

    def __repr__(self):
        fmt = self.format
        text = fmt.shortest(self.code)
        if fmt._family == "tesla":
            family, _, rest = fmt.name.partition("(")
            return f"{family}({text}, {rest[:-1]})"
        return f"{fmt.name}({text})"

    def __str__(self):
        return self.format.shortest(self.code)

    def __format__(self, spec):
        # as NumPy's scalars (gentype_format): the Python float's format, also for an
        # empty spec (f"{np.float16(0.0078125)}" is '0.0078125' while str() is '0.007812')
        return format(float(self), spec)

    def __reduce__(self):
        return (_ext.scalar_from_code, (self.dtype, self.code))

    def __array__(self, dtype=None, copy=None):
        arr = np.array([self.code], dtype=self.format.storage).view(self.dtype).reshape(())
        return arr if dtype is None else arr.astype(dtype)

    # arithmetic goes through the ufuncs: same core, context, flags, errstate
    __add__ = _binop(np.add, operator.add)
    __radd__ = _binop(np.add, operator.add, reflected=True)
    __sub__ = _binop(np.subtract, operator.sub)
    __rsub__ = _binop(np.subtract, operator.sub, reflected=True)
    __mul__ = _binop(np.multiply, operator.mul)
    __rmul__ = _binop(np.multiply, operator.mul, reflected=True)
    __truediv__ = _binop(np.true_divide, operator.truediv)
    __rtruediv__ = _binop(np.true_divide, operator.truediv, reflected=True)
    __floordiv__ = _binop(np.floor_divide, operator.floordiv)
    __rfloordiv__ = _binop(np.floor_divide, operator.floordiv, reflected=True)
    __mod__ = _binop(np.remainder, operator.mod)
    __rmod__ = _binop(np.remainder, operator.mod, reflected=True)
    __eq__ = _binop(np.equal, operator.eq)
    __ne__ = _binop(np.not_equal, operator.ne)
    __lt__ = _binop(np.less, operator.lt)
    __le__ = _binop(np.less_equal, operator.le)
    __gt__ = _binop(np.greater, operator.gt)
    __ge__ = _binop(np.greater_equal, operator.ge)

    def __divmod__(self, o):
        how, o = _operand(o)
        if how == _UFUNC:
            return (np.floor_divide(self, o), np.remainder(self, o))
        return NotImplemented if how == _DEFER else divmod(float(self), o)

    # NumPy's generic real/imag go through a legacy item setter softfp8 does not have
    @property
    def real(self):
        return self

    @property
    def imag(self):
        return _ext.scalar_from_code(self.dtype, 0)

    def conjugate(self):
        return self

    def __pow__(self, o, mod=None):
        if mod is not None:
            return NotImplemented  # three-argument pow is for integers
        return self._pow(o)

    _pow = _binop(np.power, operator.pow)  # correctly rounded power (elem_explog.c)
    __rpow__ = _binop(np.power, operator.pow, reflected=True)

    def __neg__(self):
        return np.negative(self)

    def __pos__(self):
        return np.positive(self)

    def __abs__(self):
        return np.absolute(self)


# --------------------------------------------------------------------------
# DType classes and descriptors
# --------------------------------------------------------------------------

_DTYPE_CLASSES: dict = {}
_SCALAR_TYPES: dict = {}
# descriptors: the presets' for good (a fixed set; their scalar types point at them), every
# other format's in a bounded cache (softfp8/_cache.py).  Descriptors compare and hash by
# their format (dtype.c), so one re-created after eviction equals the evicted one.
_PRESET_DESCRS: dict = {}
_DESCRS = _cache.LRU("descriptors")
_FAMILY_INDEX: list = []
_FLOAT_RANK: dict = {}   # family key -> _float_rank(key), filled when the DTypes are made


def _own_ufuncs():
    """softfp8's own ufuncs (softfp8.fma, softfp8.nextup, ...): one per op-table row
    whose ufunc column is "softfp8.<name>", by name."""
    own = {}
    for op, row in enumerate(_ext.op_table()):
        if row[4] and row[4].startswith("softfp8."):
            own[row[4][8:]] = _ext.new_op_ufunc(op)
    return own


def _make_families():
    own = _own_ufuncs()
    for key, clsname in _FAMILY_NAMES.items():
        scal = type(clsname.replace("DType", ""), (SoftScalar,),
                    {"__slots__": (), "__module__": "softfp8",
                     "__doc__": f"softfp8 scalar of the {key} format family"})
        _FLOAT_RANK[key] = _float_rank(key)
        dt = _ext.make_dtype(clsname, scal, key in _PARAMETRIC, _promotion_rank(key))
        _ext.register_ufuncs(dt, own)
        _ext.register_clip(dt)
        _DTYPE_CLASSES[key] = dt
        _SCALAR_TYPES[key] = scal
        _FAMILY_INDEX.append(key)
    return own


def dtype_of(fmt: Format):
    """The NumPy dtype (descriptor) of a softfp8 format."""
    d = _PRESET_DESCRS.get(fmt)
    if d is None:
        d = _DESCRS.get(fmt)
    if d is None:
        key = _family_key(fmt)
        d = _ext.new_descr(_DTYPE_CLASSES[key], fmt, fmt.params)
        if key not in _PARAMETRIC and fmt == _formats.PRESETS.get(key):
            d = _PRESET_DESCRS.setdefault(fmt, d)
            scal = _SCALAR_TYPES[key]
            scal._default_dtype = d
            # presets' np.finfo objects for good, under the descriptor and the scalar type
            # (np.finfo(softfp8.E4M3) is np.finfo(softfp8.e4m3.dtype))
            info = _np_finfo(d)
            np.finfo._finfo_cache[scal] = np.finfo._finfo_cache[d] = info
        else:
            d = _DESCRS.setdefault(fmt, d)
    return d


def _holds(fmt, x):
    """True if the float x is a value of fmt (rounding it changes nothing)."""
    code, fl = _bits.from_float(np.float64(x), fmt, **_bits.FIXED)
    return not (int(fl) & _MASK) and float(fmt.decode(int(code))) == x


_FINFO = _cache.LRU("np.finfo")


class _NpFinfoCache(dict):
    """``np.finfo._finfo_cache`` with softfp8 descriptors answered from softfp8's
    bounded cache.

    NumPy 2.4's ``finfo.__new__`` (numpy/_core/getlimits.py) looks the descriptor up in
    ``finfo._finfo_cache.get`` first; on a miss it replaces it by its scalar type
    (``obj2sctype``) and rebuilds a descriptor from that type (``numeric.dtype(dtype)``
    in ``_init``), which for a parametric DType can only give the DType's default
    descriptor (no bias).  So ``get`` builds the object of a softfp8 descriptor itself
    (``_np_finfo``), for every descriptor alive, evicted from softfp8's caches or not;
    NumPy's own entries (and the preset scalar types', ``np.finfo(softfp8.E4M3)``) stay
    plain dict entries."""

    def get(self, key, default=None):
        value = dict.get(self, key, _MISSING)
        if value is not _MISSING:
            return value
        if type(key) in _DESCR_TYPES:
            return _np_finfo(key)
        return default


def _np_finfo(d):
    """The np.finfo object of softfp8 descriptor d, cached per format (bounded).

    Built with NumPy's own ``finfo._init`` from the descriptor itself (every attribute
    derived by NumPy from the DType's get_constant slot); on NumPy >= 2.5.1, which
    refuses a descriptor whose format cannot hold one of the constants, from the same
    constants (``_ext.finfo_constants``).  ``nexp`` and ``iexp`` are the exponent
    field's width.

    A constant the format cannot hold exactly (eps = 2**-man_bits above the max or
    below the smallest subnormal of a Tesla format with a high or low bias, or the
    radix 2 above the max; epsneg = eps / radix below the smallest subnormal) is given as
    an exact ``np.float64`` instead, so that eps, epsneg, machep and negep always exist
    and are exact."""
    fmt = d.format
    info = _FINFO.get(fmt)
    if info is not None:
        return info
    info = object.__new__(np.finfo)
    try:
        info._init(d)
    except ValueError:
        # NumPy >= 2.5.1 requires every constant ("data type ... not compatible with
        # finfo", _populate_finfo_constants in multiarraymodule.c): set what _init sets,
        # from the constants the format holds (the DType's get_constant), and fill eps /
        # radix below as on NumPy 2.4
        info.dtype = d
        info.bits = d.itemsize * 8
        info._fmt = info._repr = None
        for name, value in _ext.finfo_constants(d).items():
            setattr(info, name, value)
    # the exponent field's width, as ml_dtypes.finfo gives it (NumPy derives nexp and
    # iexp from maxexp - minexp, assuming IEEE's reserved exponent codes, which is one
    # too many for formats without infinity: E4M3 has maxexp 9 and minexp -6)
    info.nexp = info.iexp = fmt.exp_bits
    if getattr(info, "eps", None) is None:
        info.eps = np.float64(math.ldexp(1.0, -fmt.man_bits))
    if getattr(info, "_radix", None) is None:
        info._radix = np.float64(2.0)
    epsneg = math.ldexp(1.0, -fmt.man_bits - 1)
    if type(info.eps) is np.float64 or type(info._radix) is np.float64 or not _holds(fmt, epsneg):
        # NumPy's eps / radix would not be exact in the format
        info.epsneg = np.float64(epsneg)
    # resolution: NumPy's 10**-precision rounded into the format (its `dtype.type(10) **
    # -precision` overflows where 10 is above the max); a float64 where it lies outside the
    # format's range [smallest subnormal, max] (rounding would give 0, inf or NaN)
    res = 10.0 ** -info.precision
    code, fl = _bits.from_float(np.float64(res), fmt, **_bits.FIXED)
    value = fmt.decode(int(code))
    if int(fl) & int(_context.Flags.OVERFLOW) or not (0 < value < math.inf):
        info.resolution = np.float64(res)    # above the max, or below half the smallest subnormal
    else:
        info.resolution = _ext.scalar_from_code(d, int(code))
    return _FINFO.setdefault(fmt, info)


_TYPE_OF = _cache.LRU("scalar types")


def _type_of(descr):
    """dtype.type: the family's scalar type, or for a parametric family a
    subclass bound to this format so that ``dtype.type(value)`` works (as
    NumPy's mean uses it); it returns instances of the family's scalar type."""
    fmt = descr.format
    key = _family_key(fmt)
    base = _SCALAR_TYPES[key]
    if key not in _PARAMETRIC:
        return base
    t = _TYPE_OF.get(fmt)
    if t is None:
        t = _TYPE_OF.setdefault(fmt, type(base.__name__, (base,), {
            "__slots__": (), "__module__": "softfp8", "_default_dtype": descr}))
    return t


def _dtype_from_format(fmt):
    return dtype_of(fmt)


def _descr_factory(index, args, kwargs):
    """DTypeClass(...) and NumPy's default descriptor requests."""
    key = _FAMILY_INDEX[index]
    kwargs = kwargs or {}
    if key in _formats.FAMILIES:
        if not args and not kwargs:
            raise TypeError(f"the {key} dtype needs its bias: use softfp8.{key}(bias=0..63) "
                            f"(e.g. np.zeros(3, dtype=softfp8.{key}(bias=20)))")
        return dtype_of(_formats.FAMILIES[key](*args, **kwargs))
    if key == "format":
        if not args and not kwargs:
            raise TypeError("SoftFloatDType needs parameters: use softfp8.format(...)")
        return dtype_of(_formats.format(*args, **kwargs))
    if args or kwargs:
        raise TypeError(f"{_FAMILY_NAMES[key]}() takes no parameters")
    return dtype_of(_formats.PRESETS[key])


def _as_descr(dtype):
    if isinstance(dtype, Format):
        return dtype_of(dtype)
    d = np.dtype(dtype)
    if format_of(d) is None:
        raise TypeError(f"dtype must be a softfp8 format or dtype, got {dtype!r}")
    return d


def format_of(dtype):
    """The softfp8 Format of a format or dtype-like, or None for other dtypes."""
    return format_or_none(dtype)


_CONTAINS = _cache.LRU("containment")
_MASK = int(_context.Flags.INEXACT | _context.Flags.OVERFLOW | _context.Flags.UNDERFLOW
            | _context.Flags.INVALID)


def _values_equal(x, y):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    both_nan = np.isnan(x) & np.isnan(y)
    same = (x == y) & (np.signbit(x) == np.signbit(y))
    return bool(np.all(both_nan | same))


def _contains(a, b):
    """True if every value of dtype a is exactly representable in dtype b."""
    key = (a, b)
    r = _CONTAINS.get(key)
    if r is None:
        # cached for the process, so no context may enter it: the ISA convention's DAZ reads
        # subnormal codes as zeros, saturation turns infinities into the largest value
        # (rounding and tininess: _bits.FIXED; saturate=False below)
        with _context.isa("default"):
            r = _CONTAINS.setdefault(key, _compute_contains(a, b))
    return r


def _float_endpoint(d):
    d = np.dtype(d)
    if d == np.float16:
        return _formats.float16
    if d in (np.dtype(np.float32), np.dtype(np.float64)):
        return d.type
    if d.kind == "f":
        return np.float64
    return None


def _compute_contains(a, b):
    fa, fb = format_of(a), format_of(b)
    if fa is not None:
        dst = fb if fb is not None else _float_endpoint(b)
        if dst is None:
            return False
        codes = np.arange(1 << fa.bits, dtype=np.uint32)
        vals, _ = _bits.to_float(codes, fa, saturate=False, **_bits.FIXED)
        out, fl = _bits.convert(codes, fa, dst, saturate=False, **_bits.FIXED)
        # a NaN must stay a NaN (checked below); quieting a signalling NaN raises
        # invalid, which loses no value (NumPy's float16 -> float32 is "safe" too)
        if np.any(fl[~np.isnan(vals)] & _MASK):
            return False
        back = out if not isinstance(dst, Format) else _bits.to_float(out, dst, saturate=False, **_bits.FIXED)[0]
        return _values_equal(vals, back)
    if fb is None:
        return False
    a = np.dtype(a)
    if a == np.bool_:
        src = np.array([0, 1], dtype=np.int64)
        out, fl = _bits.from_int64(src, fb, saturate=False, **_bits.FIXED)
        return not np.any(fl & _MASK)
    if a.kind in "iu":
        if a.itemsize > 2:
            return False
        info = np.iinfo(a)
        src = np.arange(info.min, info.max + 1, dtype=np.int64)
        out, fl = _bits.from_int64(src, fb, saturate=False, **_bits.FIXED)
        return not np.any(fl & _MASK)
    if a == np.float16:
        return _contains(dtype_of(_formats.float16), dtype_of(fb))
    return False


# --------------------------------------------------------------------------
# finfo
# --------------------------------------------------------------------------

class finfo:
    """Machine limits of a softfp8 format (values as float64, SPEC section 6).

    Works for every bias of the parametric families, unlike ``np.finfo``.
    """

    def __init__(self, dtype):
        fmt = format_or_none(dtype)
        if fmt is None and isinstance(dtype, str):
            try:
                fmt = _formats.lookup(dtype)
            except ValueError:
                fmt = None
        if fmt is None:
            raise TypeError(f"softfp8.finfo needs a softfp8 format or dtype, got {dtype!r}")
        self.format = fmt
        self.dtype = dtype_of(fmt)
        self.bits = fmt.bits
        self.eps = fmt.eps
        self.max = fmt.max
        # the most negative value: 0 in unsigned formats, their smallest if they have no zero
        self.min = -fmt.max if fmt.signed else fmt.min_normal if fmt.subnormals == "nozero" else 0.0
        self.smallest_normal = fmt.min_normal
        self.tiny = fmt.min_normal
        self.smallest_subnormal = fmt.min_subnormal
        self.epsneg = math.ldexp(1.0, -fmt.man_bits - 1)
        self.nmant = fmt.man_bits
        self.nexp = fmt.exp_bits
        self.minexp = 1 - fmt.bias - (fmt.subnormals == "nozero")
        top_field = fmt._special()["max"] >> fmt.man_bits   # the largest finite code's field
        self.maxexp = top_field - fmt.bias + 1
        self.precision = int(math.floor(fmt.man_bits * math.log10(2)))
        self.resolution = 10.0 ** -self.precision
        self.iexp = fmt.exp_bits
        self.machep = -fmt.man_bits
        self.negep = -fmt.man_bits - 1

    def __repr__(self):
        return (f"softfp8.finfo(resolution={self.resolution}, min={self.min!r}, max={self.max!r}, "
                f"dtype={self.format.name})")


OWN_UFUNCS = _make_families()   # softfp8's own ufuncs by name (module attributes of softfp8)
_FMA = OWN_UFUNCS["fma"]
_DESCR_TYPES = frozenset(_DTYPE_CLASSES.values())
if not isinstance(np.finfo._finfo_cache, _NpFinfoCache):
    np.finfo._finfo_cache = _NpFinfoCache(np.finfo._finfo_cache)
_MATMUL_WIDE = _ext.matmul_wide_ufunc()


def _matmul_shape(a, b):
    """Result shape of np.matmul(a, b) (ValueError naming the shapes if they do not fit)."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"softfp8.matmul: operands must be at least 1-D, got shapes {a.shape} "
                         f"and {b.shape}")
    ash = (1,) + a.shape if a.ndim == 1 else a.shape
    bsh = b.shape + (1,) if b.ndim == 1 else b.shape
    if ash[-1] != bsh[-2]:
        raise ValueError(f"softfp8.matmul: shapes {a.shape} and {b.shape} do not fit (inner "
                         f"dimensions {ash[-1]} and {bsh[-2]} differ)")
    try:
        batch = np.broadcast_shapes(ash[:-2], bsh[:-2])
    except ValueError:
        raise ValueError(f"softfp8.matmul: the batch dimensions of shapes {a.shape} and "
                         f"{b.shape} do not broadcast") from None
    return batch + (ash[-2],) * (a.ndim > 1) + (bsh[-1],) * (b.ndim > 1)


def matmul(a, b, out_dtype=None, out=None):
    """Matrix product of two softfp8 arrays of one format.

    Every output element is the exact dot product rounded once (context
    rounding): into the input format by default (same as ``a @ b``), or into
    float32/float64 with ``out_dtype`` (the tensor-core pattern).  ``out_dtype``
    may also be the input's format or dtype; ``out`` must have the result's shape
    and dtype.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if format_of(a.dtype) is None or format_of(b.dtype) is None:
        raise TypeError(f"softfp8.matmul needs softfp8 arrays, got {a.dtype} and {b.dtype}")
    if a.dtype != b.dtype:
        raise TypeError(f"softfp8.matmul needs operands of one format, got {a.dtype} and "
                        f"{b.dtype} (convert one with .astype first)")
    if out_dtype is None:
        dt = None
    else:
        fo = format_or_none(out_dtype)
        try:
            dt = dtype_of(fo) if fo is not None else np.dtype(out_dtype)
        except TypeError:
            dt = None
        if dt is None or not (dt in (np.dtype(np.float32), np.dtype(np.float64))
                              or (fo is not None and dt == a.dtype)):
            raise TypeError(f"softfp8.matmul out_dtype must be None, float32, float64 or the "
                            f"operands' own format, got {out_dtype!r}")
    shape = _matmul_shape(a, b)
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"softfp8.matmul out must be a NumPy array, got {type(out).__name__}")
        if dt is not None and out.dtype != dt:
            raise TypeError(f"softfp8.matmul: out has dtype {out.dtype}, expected {dt} "
                            f"(out_dtype={out_dtype!r})")
        if out.shape != shape:
            raise ValueError(f"softfp8.matmul: out has shape {out.shape}, expected {shape} "
                             f"(the product of shapes {a.shape} and {b.shape})")
    if dt is None or format_of(dt) is not None:
        return np.matmul(a, b, out=out)
    a2 = a[np.newaxis, :] if a.ndim == 1 else a
    b2 = b[:, np.newaxis] if b.ndim == 1 else b
    if out is None:
        res = _MATMUL_WIDE(a2, b2, dtype=dt)
    else:
        out2 = np.expand_dims(out, -1) if b.ndim == 1 else out   # views of out
        out2 = np.expand_dims(out2, -2) if a.ndim == 1 else out2
        # dtype= as well: the ufunc's loop lookup does not read the dtype from out=
        res = _MATMUL_WIDE(a2, b2, out=out2, dtype=dt)
        if res is out2:
            return out
    if a.ndim == 1:
        res = res[..., 0, :]
    if b.ndim == 1:
        res = res[..., 0]
    return res


def _encode(x, fmt, **opts):
    """Format.encode: x rounded once from its float64 value (softfp8.bits options)."""
    zero_d = isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "biuf"
    if not zero_d and (not isinstance(x, (str, numbers.Real, decimal.Decimal, np.number, np.bool_))
                       or isinstance(x, np.complexfloating)):
        # np.float64(None) would be a NaN; a sequence would fail with NumPy's message
        raise TypeError(f"Format.encode takes a real number (or its decimal string), got {x!r}")
    codes, _ = _bits.from_float(np.float64(x), fmt, **opts)
    return int(codes)


_ext.set_hooks(_context._current, _descr_factory, _contains, _type_of, _dtype_from_format)
_formats.register_hooks(dtype=dtype_of, encode=_encode)
fma = _FMA
