"""Format objects: presets, the Tesla families and the general factory.

The parameters of every preset come from the C core's one preset table
(``sfp8_presets``); this module only wraps them.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import _ext

SPECIALS = ("ieee", "fn", "fnuz", "none")
SUBNORMALS = ("ieee", "tesla", "flush")

ALIASES = {
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
    "float8_e4m3fnuz": "e4m3fnuz",
    "float8_e5m2fnuz": "e5m2fnuz",
}


def _as_int(value, what):
    """operator.index with a message naming the bad value (bools refused)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {value!r}") from None


def _choice(value, choices, what):
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, one of {', '.join(choices)}; got {value!r}")
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}: expected one of {', '.join(choices)}")
    return value


class Format:
    """A small floating-point format (immutable, hashable).

    Equality and hash cover the name and every parameter, so
    ``cfloat8_143(bias=20) == cfloat8_143(bias=20)`` and different biases differ.
    """

    __slots__ = ("_name", "_family", "_params", "_props")

    def __init__(self, *, name, family, bits, signed, exp_bits, man_bits, bias, specials,
                 subnormals, saturate):
        params = (int(bits), int(bool(signed)), int(exp_bits), int(man_bits), int(bias),
                  SPECIALS.index(specials), SUBNORMALS.index(subnormals), int(bool(saturate)))
        bad = _ext.validate(params)
        if bad is not None:
            value = {"bits": bits, "signed": signed, "exp_bits": exp_bits, "man_bits": man_bits,
                     "bias": bias, "specials": specials, "subnormals": subnormals,
                     "saturate": saturate}.get(bad, "?")
            raise ValueError(f"invalid format {name!r}: bad {bad}={value!r} "
                             f"(exp_bits={exp_bits}, man_bits={man_bits}, signed={bool(signed)}, "
                             f"specials={specials!r}, subnormals={subnormals!r})")
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_family", family)
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_props", None)

    # --- immutability -------------------------------------------------------
    def __setattr__(self, key, value):
        raise AttributeError(f"softfp8 formats are immutable (cannot set {key!r})")

    def __delattr__(self, key):
        raise AttributeError(f"softfp8 formats are immutable (cannot delete {key!r})")

    def __reduce__(self):
        return (_rebuild, (self._name, self._family, self._params))

    # --- identity -----------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, Format):
            return NotImplemented
        return self._name == other._name and self._params == other._params

    def __hash__(self):
        return hash(("softfp8.Format", self._name, self._params))

    def __repr__(self):
        return f"softfp8.{self._name}" if self._family in ("preset", "tesla") else (
            f"softfp8.format(exp_bits={self.exp_bits}, man_bits={self.man_bits}, "
            f"bias={self.bias}, specials={self.specials!r}, subnormals={self.subnormals!r}, "
            f"signed={self.signed}, saturate={self.saturate}, name={self._name!r})")

    # --- parameters ---------------------------------------------------------
    name = property(lambda self: self._name, doc="format name, e.g. 'e4m3' or 'cfloat8_143(bias=20)'")
    bits = property(lambda self: self._params[0], doc="storage bits")
    signed = property(lambda self: bool(self._params[1]), doc="has a sign bit")
    exp_bits = property(lambda self: self._params[2], doc="exponent bits E")
    man_bits = property(lambda self: self._params[3], doc="trailing significand bits M")
    bias = property(lambda self: self._params[4], doc="exponent bias")
    specials = property(lambda self: SPECIALS[self._params[5]], doc="'ieee', 'fn', 'fnuz' or 'none'")
    subnormals = property(lambda self: SUBNORMALS[self._params[6]], doc="'ieee', 'tesla' or 'flush'")
    saturate = property(lambda self: bool(self._params[7]), doc="default overflow saturation")
    params = property(lambda self: self._params, doc="the C descriptor as a tuple")

    @property
    def storage(self):
        """The NumPy integer dtype that holds one code."""
        return np.dtype(np.uint8) if self.bits <= 8 else np.dtype(np.uint16)

    @property
    def dtype(self):
        """The NumPy dtype of this format (usable as ``dtype=``)."""
        from . import _dtypes

        return _dtypes.dtype_of(self)

    @property
    def type(self):
        """The NumPy scalar type of this format's family."""
        return type(self.dtype).type

    @property
    def code_mask(self):
        return (1 << self.bits) - 1

    def _special(self):
        if self._props is None:
            object.__setattr__(self, "_props", _ext.special_codes(self._params))
        return self._props

    # --- properties of the real numbers (SPEC section 6) ---------------------
    @property
    def max(self):
        """Largest finite value."""
        return self.decode(self._special()["max"])

    @property
    def min_normal(self):
        """Smallest positive normal value 2^(1-bias)."""
        return math.ldexp(1.0, 1 - self.bias)

    @property
    def min_subnormal(self):
        """Smallest positive subnormal (the smallest normal where the format
        has no usable subnormals: flush formats and M = 0)."""
        if self.man_bits == 0 or self.subnormals == "flush":
            return self.min_normal
        shift = -self.bias if self.subnormals == "tesla" else 1 - self.bias
        return math.ldexp(1.0, shift - self.man_bits)

    @property
    def eps(self):
        """2^-M: the spacing above 1.0 at the format's precision."""
        return math.ldexp(1.0, -self.man_bits)

    # --- scalar helpers -----------------------------------------------------
    def decode(self, code):
        """float64 value of one code (exact for every format of at most 16
        bits whose range fits float64)."""
        from . import bits as _bits

        vals, _ = _bits.to_float(code, self, **_bits.FIXED)
        return float(vals)

    def encode(self, x, **opts):
        """Code of float x, rounded once from its float64 value."""
        from . import bits as _bits

        codes, _ = _bits.from_float(np.float64(x), self, **opts)
        return int(codes)

    def classify(self, code):
        """'zero', 'subnormal', 'normal', 'inf', 'qnan' or 'snan'."""
        code = _as_int(code, "code")
        if not 0 <= code <= self.code_mask:
            raise ValueError(f"code {code!r} out of range for {self._name} (0..{self.code_mask})")
        return ("zero", "subnormal", "normal", "inf", "qnan", "snan")[_ext.classify(self._params, code)]


def _rebuild(name, family, params):
    bits, signed, e, m, bias, sp, sub, sat = params
    return Format(name=name, family=family, bits=bits, signed=signed, exp_bits=e, man_bits=m,
                  bias=bias, specials=SPECIALS[sp], subnormals=SUBNORMALS[sub], saturate=sat)


_PRESET_ROWS = {name: (params, fam) for name, params, fam in _ext.presets()}


def _from_row(name, params, bias=None, subnormals=None, display=None):
    bits, signed, e, m, b, sp, sub, sat = params
    return Format(name=display or name, family="tesla" if bias is not None else "preset",
                  bits=bits, signed=signed, exp_bits=e, man_bits=m,
                  bias=b if bias is None else bias, specials=SPECIALS[sp],
                  subnormals=subnormals or SUBNORMALS[sub], saturate=sat)


class TeslaFamily:
    """A format family whose bias is a 6-bit parameter (Tesla CFloat8 and SHP).

    ``family(bias=20)`` returns the format; ``subnormals="ieee"`` selects IEEE
    gradual underflow instead of the Tesla document's literal 2^-bias * 0.m.
    """

    def __init__(self, name):
        self.name = name
        self._params = _PRESET_ROWS[name][0]
        self._cache = {}

    def __call__(self, bias=None, *, subnormals="tesla"):
        if bias is None:
            raise TypeError(f"{self.name}() needs the exponent bias: {self.name}(bias=0..63)")
        b = _as_int(bias, f"{self.name} bias")
        if not 0 <= b <= 63:
            raise ValueError(f"{self.name} bias must be an unsigned 6-bit integer 0..63, got {bias!r}")
        _choice(subnormals, ("tesla", "ieee"), f"{self.name} subnormals")
        key = (b, subnormals)
        fmt = self._cache.get(key)
        if fmt is None:
            display = f"{self.name}(bias={b})" if subnormals == "tesla" else \
                f"{self.name}(bias={b}, subnormals='ieee')"
            fmt = _from_row(self.name, self._params, bias=b, subnormals=subnormals, display=display)
            self._cache[key] = fmt
        return fmt

    def __repr__(self):
        return f"softfp8.{self.name}(bias=...)"

    def __reduce__(self):
        return (_family, (self.name,))


def _family(name):
    from . import _formats

    return getattr(_formats, name)


PRESETS = {name: _from_row(name, params) for name, (params, fam) in _PRESET_ROWS.items() if not fam}

e4m3 = PRESETS["e4m3"]
e5m2 = PRESETS["e5m2"]
e4m3fnuz = PRESETS["e4m3fnuz"]
e5m2fnuz = PRESETS["e5m2fnuz"]
uhp = PRESETS["uhp"]
hfp8_143 = PRESETS["hfp8_143"]
hfp8_152 = PRESETS["hfp8_152"]
hfp16_169 = PRESETS["hfp16_169"]
float16 = PRESETS["float16"]
bfloat16 = PRESETS["bfloat16"]
float8_e4m3fn = e4m3
float8_e5m2 = e5m2
float8_e4m3fnuz = e4m3fnuz
float8_e5m2fnuz = e5m2fnuz

cfloat8_143 = TeslaFamily("cfloat8_143")
cfloat8_152 = TeslaFamily("cfloat8_152")
shp = TeslaFamily("shp")
FAMILIES = {"cfloat8_143": cfloat8_143, "cfloat8_152": cfloat8_152, "shp": shp}


def presets():
    """{name: Format} of every non-parametric preset."""
    return dict(PRESETS)


def format(*, exp_bits, man_bits, bias, specials="ieee", subnormals="ieee", signed=True,
           saturate=None, name=None):
    """Build any valid format of at most 16 bits."""
    e = _as_int(exp_bits, "exp_bits")
    m = _as_int(man_bits, "man_bits")
    b = _as_int(bias, "bias")
    _choice(specials, SPECIALS, "specials")
    _choice(subnormals, SUBNORMALS, "subnormals")
    if not isinstance(signed, (bool, np.bool_)):
        raise TypeError(f"signed must be a bool, got {signed!r}")
    if saturate is None:
        saturate = specials == "none"
    elif not isinstance(saturate, (bool, np.bool_)):
        raise TypeError(f"saturate must be a bool or None, got {saturate!r}")
    if e < 1:
        raise ValueError(f"exp_bits must be >= 1, got {exp_bits!r}")
    if m < 0:
        raise ValueError(f"man_bits must be >= 0, got {man_bits!r}")
    bits = int(bool(signed)) + e + m
    if bits > 16:
        raise ValueError(f"a format holds at most 16 bits; exp_bits={e} + man_bits={m}"
                         f"{' + sign' if signed else ''} = {bits}")
    if name is None:
        name = (f"format(exp_bits={e}, man_bits={m}, bias={b}, specials={specials!r}, "
                f"subnormals={subnormals!r}, signed={bool(signed)}, saturate={bool(saturate)})")
    elif not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    return Format(name=name, family="factory", bits=bits, signed=signed, exp_bits=e, man_bits=m,
                  bias=b, specials=specials, subnormals=subnormals, saturate=bool(saturate))


def lookup(name, bias=None):
    """Format by name (preset, alias or Tesla family with bias)."""
    if not isinstance(name, str):
        raise TypeError(f"format name must be a string, got {name!r}")
    name = ALIASES.get(name, name)
    if name in FAMILIES:
        return FAMILIES[name](bias)
    if name in PRESETS:
        if bias is not None:
            raise ValueError(f"{name} has a fixed bias; --bias/bias= applies to "
                             f"{', '.join(FAMILIES)} only")
        return PRESETS[name]
    raise ValueError(f"unknown format {name!r}; known: "
                     f"{', '.join(list(PRESETS) + list(FAMILIES) + list(ALIASES))}")
