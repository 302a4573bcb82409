"""NumPy DTypes, scalar types, printing and finfo for softfp8 formats.

One DType class per format family (``E4M3DType``, ``CFloat8_143DType``, ...);
a dtype instance (descriptor) per format, so ``cfloat8_143(bias=20).dtype``
and ``cfloat8_143(bias=7).dtype`` are two descriptors of one DType class.
"""
from __future__ import annotations

import decimal
import math

import numpy as np

from . import _context, _ext, _formats
from . import bits as _bits
from ._formats import Format

# family key -> DType class name
_FAMILY_NAMES = {
    "e4m3": "E4M3DType", "e5m2": "E5M2DType", "e4m3fnuz": "E4M3FNUZDType",
    "e5m2fnuz": "E5M2FNUZDType", "cfloat8_143": "CFloat8_143DType",
    "cfloat8_152": "CFloat8_152DType", "shp": "SHPDType", "uhp": "UHPDType",
    "hfp8_143": "HFP8_143DType", "hfp8_152": "HFP8_152DType", "hfp16_169": "HFP16_169DType",
    "float16": "Float16DType", "bfloat16": "BFloat16DType", "format": "SoftFloatDType",
}
_PARAMETRIC = {"cfloat8_143", "cfloat8_152", "shp", "format"}
# smallest NumPy float (1 float16, 2 float32, 3 float64) holding every format of the
# family (for class-level promotion; Tesla families over every bias 0..63, checked
# exhaustively by the tests); 0: no fixed answer (factory formats)
_FLOAT_RANK = {"e4m3": 1, "e5m2": 1, "e4m3fnuz": 1, "e5m2fnuz": 1, "hfp8_143": 1, "hfp8_152": 1,
               "float16": 1, "cfloat8_143": 2, "cfloat8_152": 2, "shp": 2, "uhp": 2,
               "hfp16_169": 2, "bfloat16": 2, "format": 0}


def _family_key(fmt: Format) -> str:
    if fmt._family == "tesla":
        return fmt.name.split("(")[0]
    if fmt._family == "preset":
        return fmt.name
    return "format"


# --------------------------------------------------------------------------
# scalars
# --------------------------------------------------------------------------

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
        vals, _ = _bits.to_float(self.code, self.format, **_bits.FIXED)
        return float(vals)

    def item(self):
        return float(self)

    def __int__(self):
        return int(float(self))

    def __index__(self):
        raise TypeError(f"{self!r} is not an integer")

    def __bool__(self):
        cls = self.format.classify(self.code)
        return not (cls == "zero" or (cls == "subnormal" and self.format.subnormals == "flush"))

    def __hash__(self):
        return hash(float(self))

    def __repr__(self):
        fmt = self.format
        text = _shortest(fmt, self.code)
        if fmt._family == "tesla":
            family, _, rest = fmt.name.partition("(")
            return f"{family}({text}, {rest[:-1]})"
        return f"{fmt.name}({text})"

    def __str__(self):
        return _shortest(self.format, self.code)

    def __format__(self, spec):
        return format(float(self), spec) if spec else str(self)

    def __reduce__(self):
        return (_ext.scalar_from_code, (self.dtype, self.code))

    def __array__(self, dtype=None, copy=None):
        arr = np.array([self.code], dtype=self.format.storage).view(self.dtype).reshape(())
        return arr if dtype is None else arr.astype(dtype)

    # arithmetic goes through the ufuncs: same core, context, flags, errstate
    def __add__(self, o): return np.add(self, o)
    def __radd__(self, o): return np.add(o, self)
    def __sub__(self, o): return np.subtract(self, o)
    def __rsub__(self, o): return np.subtract(o, self)
    def __mul__(self, o): return np.multiply(self, o)
    def __rmul__(self, o): return np.multiply(o, self)
    def __truediv__(self, o): return np.true_divide(self, o)
    def __rtruediv__(self, o): return np.true_divide(o, self)
    def __floordiv__(self, o): return np.floor_divide(self, o)
    def __rfloordiv__(self, o): return np.floor_divide(o, self)
    def __mod__(self, o): return np.remainder(self, o)
    def __rmod__(self, o): return np.remainder(o, self)
    def __divmod__(self, o): return (np.floor_divide(self, o), np.remainder(self, o))
    def __pow__(self, o):
        raise TypeError("softfp8 scalars do not implement ** (no correctly rounded pow); "
                        "convert to float64 first")
    def __neg__(self): return np.negative(self)
    def __pos__(self): return np.positive(self)
    def __abs__(self): return np.absolute(self)
    def __eq__(self, o): return np.equal(self, o)
    def __ne__(self, o): return np.not_equal(self, o)
    def __lt__(self, o): return np.less(self, o)
    def __le__(self, o): return np.less_equal(self, o)
    def __gt__(self, o): return np.greater(self, o)
    def __ge__(self, o): return np.greater_equal(self, o)


# --------------------------------------------------------------------------
# DType classes and descriptors
# --------------------------------------------------------------------------

_DTYPE_CLASSES: dict = {}
_SCALAR_TYPES: dict = {}
_DESCRS: dict = {}
_FAMILY_INDEX: list = []


def _make_families():
    fma_ufunc = _ext.new_fma_ufunc()
    for key, clsname in _FAMILY_NAMES.items():
        scal = type(clsname.replace("DType", ""), (SoftScalar,),
                    {"__slots__": (), "__module__": "softfp8",
                     "__doc__": f"softfp8 scalar of the {key} format family"})
        dt = _ext.make_dtype(clsname, scal, key in _PARAMETRIC, _FLOAT_RANK[key])
        _ext.register_ufuncs(dt, fma_ufunc)
        _DTYPE_CLASSES[key] = dt
        _SCALAR_TYPES[key] = scal
        _FAMILY_INDEX.append(key)
    return fma_ufunc


def dtype_of(fmt: Format):
    """The NumPy dtype (descriptor) of a softfp8 format."""
    d = _DESCRS.get(fmt)
    if d is None:
        key = _family_key(fmt)
        d = _ext.new_descr(_DTYPE_CLASSES[key], fmt, fmt.params)
        _DESCRS[fmt] = d
        scal = _SCALAR_TYPES[key]
        if key not in _PARAMETRIC:
            scal._default_dtype = d
    return d


_TYPE_OF: dict = {}


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
        t = type(base.__name__, (base,), {"__slots__": (), "__module__": "softfp8",
                                          "_default_dtype": descr})
        _TYPE_OF[fmt] = t
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
    return d


def format_of(dtype):
    """The softfp8 Format of a dtype-like, or None for other dtypes."""
    if isinstance(dtype, Format):
        return dtype
    if isinstance(dtype, np.dtype):
        return getattr(dtype, "format", None) if type(dtype) in _DTYPE_CLASSES.values() else None
    return None


_CONTAINS: dict = {}
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
        r = _compute_contains(a, b)
        _CONTAINS[key] = r
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
        vals, _ = _bits.to_float(codes, fa, **_bits.FIXED)
        out, fl = _bits.convert(codes, fa, dst, saturate=False, **_bits.FIXED)
        if np.any(fl & _MASK):
            return False
        back = out if not isinstance(dst, Format) else _bits.to_float(out, dst, **_bits.FIXED)[0]
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
# printing: shortest decimal that round-trips in the format
# --------------------------------------------------------------------------

_SHORTEST: dict = {}


def _shortest(fmt: Format, code: int) -> str:
    cache = _SHORTEST.setdefault(fmt, {})
    s = cache.get(code)
    if s is None:
        s = _compute_shortest(fmt, int(code))
        cache[code] = s
    return s


def _compute_shortest(fmt, code):
    v = fmt.decode(code)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    exact = decimal.Decimal(v)
    for digits in range(1, 18):
        # the two d-digit decimals around v: the shortest string that reads back
        # as this code may be either (e.g. E4M3 0.125 -> "0.13")
        q = decimal.Decimal(1).scaleb(exact.adjusted() - digits + 1)
        lo = exact.quantize(q, rounding=decimal.ROUND_FLOOR)
        hi = exact.quantize(q, rounding=decimal.ROUND_CEILING)
        best = None
        # nearer first; on a tie the even last digit (as correctly rounded output)
        for cand in sorted({lo, hi}, key=lambda c: (abs(c - exact), int(c.as_tuple().digits[-1]) % 2)):
            back = _bits.from_float(np.float64(float(cand)), fmt, saturate=False, **_bits.FIXED)[0]
            if int(back) == code:
                best = cand
                break
        if best is not None:
            return repr(float(best))
    return repr(v)


def _sci_parts(s):
    """('-', '1', '5', -3) for the shortest string '-0.0015'."""
    d = decimal.Decimal(s)
    if d == 0:
        return ("-" if d.is_signed() else ""), "0", "", 0
    t = d.normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    return ("-" if t.sign else ""), digits[0], digits[1:], d.adjusted()


class _SoftFloatFormat:
    """NumPy array-print element formatter for softfp8 arrays, following
    NumPy's float rules (unique digits, positional unless the magnitudes ask
    for scientific notation) with the shortest strings of the format."""

    def __init__(self, data):
        fmt = format_of(data.dtype)
        codes = np.asarray(data).reshape(-1).view(fmt.storage)
        vals = _bits.to_float(codes, fmt, **_bits.FIXED)[0]
        finite = np.isfinite(vals)
        nonzero = np.abs(vals[finite & (vals != 0)])
        self.fmt = fmt
        self.exp = False
        if nonzero.size:
            # NumPy's rule with 10**precision as the cutoff (as for float16); formats
            # with fewer digits than float16 use float16's cutoff 1e3
            cutoff = 10.0 ** min(8, max(3, finfo(fmt).precision))
            mx, mn = nonzero.max(), nonzero.min()
            self.exp = bool(mx >= cutoff or mn < 1e-4 or mx / mn > 1e3)
        uniq = [int(c) for c in np.unique(codes[finite])]
        if self.exp:
            parts = [_sci_parts(_shortest(fmt, c)) for c in uniq]
            self.frac = max((len(p[2]) for p in parts), default=0)
            self.expw = max((len(str(abs(p[3]))) for p in parts), default=2)
            self.expw = max(self.expw, 2)
            strs = [self._raw(c) for c in uniq]
            self.width = max((len(x) for x in strs), default=0)
            self.left = self.right = 0
        else:
            strs = [self._raw(c) for c in uniq]
            parts = [x.partition(".") for x in strs]
            self.left = max((len(p[0]) for p in parts), default=0)
            self.right = max((len(p[2]) for p in parts), default=0)
            if not finite.all():
                # room for nan/inf as NumPy leaves it
                neginf = bool(np.any(np.isneginf(vals)))
                offset = self.right + 1
                self.left = max(self.left, 3 - offset, 3 + neginf - offset)
            self.width = self.left + 1 + self.right

    def _raw(self, code):
        s = _shortest(self.fmt, code)
        if s in ("nan", "inf", "-inf"):
            return s
        if self.exp:
            sign, lead, rest, ex = _sci_parts(s)
            if float(s) == 0:
                lead, rest, ex = "0", "", 0
            elif len(rest) < self.frac:
                # NumPy (Dragon4 with min_digits) continues with the exact value's digits
                v = self.fmt.decode(code)
                m, _, e = f"{v:.{self.frac}e}".partition("e")
                sign, (lead, _, rest), ex = ("-" if v < 0 else ""), m.lstrip("-").partition("."), int(e)
            rest = rest.ljust(self.frac, "0")
            return f"{sign}{lead}.{rest}e{'-' if ex < 0 else '+'}{str(abs(ex)).zfill(self.expw)}"
        if s.endswith(".0"):
            s = s[:-1]
        return s

    def __call__(self, x):
        code = int(x.code) if isinstance(x, SoftScalar) else int(x)
        s = self._raw(code)
        if s in ("nan", "inf", "-inf") or self.exp:
            return s.rjust(self.width)
        left, dot, right = s.partition(".")
        return left.rjust(self.left) + dot + right.ljust(self.right)


def _install_printing():
    try:
        from numpy._core import arrayprint as ap
    except ImportError:  # pragma: no cover - older layouts
        return
    original = ap._get_format_function
    if getattr(original, "_softfp8", False):
        return

    def _get_format_function(data, **options):
        if format_of(data.dtype) is not None:
            return _SoftFloatFormat(data)
        return original(data, **options)

    _get_format_function._softfp8 = True
    ap._get_format_function = _get_format_function


# --------------------------------------------------------------------------
# finfo
# --------------------------------------------------------------------------

class finfo:
    """Machine limits of a softfp8 format (values as float64, SPEC section 6).

    Works for every bias of the parametric families, unlike ``np.finfo``.
    """

    def __init__(self, dtype):
        fmt = format_of(dtype) if not isinstance(dtype, Format) else dtype
        if fmt is None:
            try:
                fmt = format_of(np.dtype(dtype))
            except TypeError:
                fmt = None
        if fmt is None:
            raise TypeError(f"softfp8.finfo needs a softfp8 format or dtype, got {dtype!r}")
        self.format = fmt
        self.dtype = dtype_of(fmt)
        self.bits = fmt.bits
        self.eps = fmt.eps
        self.max = fmt.max
        self.min = -fmt.max if fmt.signed else 0.0
        self.smallest_normal = fmt.min_normal
        self.tiny = fmt.min_normal
        self.smallest_subnormal = fmt.min_subnormal
        self.epsneg = math.ldexp(1.0, -fmt.man_bits - 1)
        self.nmant = fmt.man_bits
        self.nexp = fmt.exp_bits
        self.minexp = 1 - fmt.bias
        top_field = (1 << fmt.exp_bits) - (2 if fmt.specials == "ieee" else 1)
        self.maxexp = top_field - fmt.bias + 1
        self.precision = int(math.floor(fmt.man_bits * math.log10(2)))
        self.resolution = 10.0 ** -self.precision
        self.iexp = fmt.exp_bits
        self.machep = -fmt.man_bits
        self.negep = -fmt.man_bits - 1

    def __repr__(self):
        return (f"softfp8.finfo(resolution={self.resolution}, min={self.min!r}, max={self.max!r}, "
                f"dtype={self.format.name})")


_FMA = _make_families()
_MATMUL_WIDE = _ext.matmul_wide_ufunc()


def matmul(a, b, out_dtype=None, out=None):
    """Matrix product of two softfp8 arrays of one format.

    Every output element is the exact dot product rounded once (context
    rounding): into the input format by default (same as ``a @ b``), or into
    float32/float64 with ``out_dtype`` (the tensor-core pattern).
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if format_of(a.dtype) is None or format_of(b.dtype) is None:
        raise TypeError(f"softfp8.matmul needs softfp8 arrays, got {a.dtype} and {b.dtype}")
    if out_dtype is None:
        return np.matmul(a, b, out=out)
    dt = np.dtype(out_dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        if format_of(dt) is not None and dt == a.dtype:
            return np.matmul(a, b, out=out)
        raise TypeError(f"softfp8.matmul out_dtype must be None, float32 or float64, got {out_dtype!r}")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must be at least 1-D")
    a2 = a[np.newaxis, :] if a.ndim == 1 else a
    b2 = b[:, np.newaxis] if b.ndim == 1 else b
    res = _MATMUL_WIDE(a2, b2, dtype=dt) if out is None else _MATMUL_WIDE(a2, b2, out=out)
    if a.ndim == 1:
        res = res[..., 0, :]
    if b.ndim == 1:
        res = res[..., 0]
    return res
_ext.set_hooks(_context._current, _descr_factory, _contains, _type_of, _dtype_from_format)
_install_printing()
fma = _FMA
