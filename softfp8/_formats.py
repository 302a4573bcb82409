"""Format objects: presets, the Tesla families and the general factory.

The parameters of every preset come from the C core's one preset table
(``sfp8_presets``), its names from softfp8/_registry.py; this module joins the two
by name.  Pure format values: it imports neither ``bits`` nor ``_dtypes`` (decoding
calls the extension directly; ``Format.dtype`` and ``Format.encode`` use the hooks
``_dtypes`` registers with ``register_hooks``).
"""
from __future__ import annotations

import ast
import decimal
import math

import numpy as np

from . import _ext, _registry
from ._validation import FormatBase, _as_int, _choice, as_format, format_or_none  # noqa: F401

SPECIALS = ("ieee", "fn", "fnuz", "none")
SUBNORMALS = ("ieee", "tesla", "flush", "nozero")

# context-free options of softfp8's own exact queries (decode, printing)
_FIXED_ENV = (0, 0, 0, 32)   # nearest_even, no saturation, tininess after, 32 bits
_NO_RNG = (0, 0, 0, 0)

# set by softfp8._dtypes at import time (it sits above this module)
_HOOKS = {"dtype": None, "encode": None}


def register_hooks(*, dtype, encode):
    """softfp8._dtypes registers Format.dtype's factory and Format.encode's rounding
    (which follows the context) here, so this module imports neither."""
    _HOOKS["dtype"] = dtype
    _HOOKS["encode"] = encode


def convert_codes(src, dst, codes, env=_FIXED_ENV, rng=_NO_RNG):
    """(uint64 results, uint8 flags) of converting a 1-D uint64 array of codes (or
    binary32/64 bit patterns) from descriptor tuple src to dst, calling the extension
    directly (the one place this module does)."""
    a = np.ascontiguousarray(codes, dtype=_element_dtype(src)).reshape(-1)
    out = np.empty(a.size, dtype=_element_dtype(dst))
    flags = np.zeros(a.size, dtype=np.uint8)
    _ext.convert(src, dst, env, rng, None, a, out, flags)
    return out.astype(np.uint64), flags


def _element_dtype(params):
    """The unsigned integer dtype of one element of a descriptor tuple (codes of
    storage formats, bit patterns of binary32/binary64)."""
    bits = params[0]
    return np.dtype(np.uint8 if bits <= 8 else np.uint16 if bits <= 16 else
                    np.uint32 if bits <= 32 else np.uint64)


def _hook(name):
    fn = _HOOKS[name]
    if fn is None:
        raise RuntimeError("softfp8 is not fully imported (import softfp8 first)")
    return fn


class Format(FormatBase):
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
            hint = ("; a format with no zero delivers its NaN for a zero result, so it needs "
                    "specials 'ieee' or 'fn'") if bad == "subnormals" and subnormals == "nozero" else ""
            raise ValueError(f"invalid format {name!r}: bad {bad}={value!r} "
                             f"(exp_bits={exp_bits}, man_bits={man_bits}, signed={bool(signed)}, "
                             f"specials={specials!r}, subnormals={subnormals!r}){hint}")
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
    subnormals = property(lambda self: SUBNORMALS[self._params[6]], doc="'ieee', 'tesla', 'flush' or 'nozero' "
                          "(no zero: exponent field 0 is a normal binade, as E8M0)")
    saturate = property(lambda self: bool(self._params[7]), doc="default overflow saturation")
    params = property(lambda self: self._params, doc="the C descriptor as a tuple")

    @property
    def storage(self):
        """The NumPy integer dtype that holds one code."""
        return np.dtype(np.uint8) if self.bits <= 8 else np.dtype(np.uint16)

    @property
    def dtype(self):
        """The NumPy dtype of this format (usable as ``dtype=``)."""
        return _hook("dtype")(self)

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
        """Smallest positive normal value 2^(1-bias) (2^-bias for 'nozero' formats,
        whose exponent field 0 is a normal binade)."""
        return math.ldexp(1.0, 1 - self.bias - (self.subnormals == "nozero"))

    @property
    def min_subnormal(self):
        """Smallest positive subnormal (the smallest normal where the format
        has no usable subnormals: flush formats and M = 0)."""
        if self.man_bits == 0 or self.subnormals in ("flush", "nozero"):
            return self.min_normal
        shift = -self.bias if self.subnormals == "tesla" else 1 - self.bias
        return math.ldexp(1.0, shift - self.man_bits)

    @property
    def eps(self):
        """2^-M: the spacing above 1.0 at the format's precision."""
        return math.ldexp(1.0, -self.man_bits)

    # --- scalar helpers -----------------------------------------------------
    def _check_code(self, code):
        code = _as_int(code, "code")
        if not 0 <= code <= self.code_mask:
            raise ValueError(f"code {code!r} out of range for {self._name} (0..{self.code_mask})")
        return code

    def decode(self, code):
        """float64 value of one code (exact for every format of at most 16
        bits whose range fits float64)."""
        code = self._check_code(code)
        out, _ = convert_codes(self._params, _ext.BINARY64, np.array([code], dtype=np.uint64))
        return float(out.view(np.float64)[0])

    def encode(self, x, **opts):
        """Code of float x, rounded once from its float64 value (options and the
        context as for softfp8.bits.from_float)."""
        return _hook("encode")(x, self, **opts)

    def shortest(self, code):
        """Shortest decimal string that reads back as this code (round to nearest
        even): '448.0', '0.13', 'nan', '-inf'."""
        code = self._check_code(code)
        cache = _SHORTEST.setdefault(self, {})
        s = cache.get(code)
        if s is None:
            s = _compute_shortest(self, code)
            cache[code] = s
        return s

    def classify(self, code):
        """'zero', 'subnormal', 'normal', 'inf', 'qnan' or 'snan'."""
        code = self._check_code(code)
        return ("zero", "subnormal", "normal", "inf", "qnan", "snan")[_ext.classify(self._params, code)]


def _rebuild(name, family, params):
    bits, signed, e, m, bias, sp, sub, sat = params
    return Format(name=name, family=family, bits=bits, signed=signed, exp_bits=e, man_bits=m,
                  bias=bias, specials=SPECIALS[sp], subnormals=SUBNORMALS[sub], saturate=sat)


# --------------------------------------------------------------------------
# shortest round-tripping decimal of a code
# --------------------------------------------------------------------------

_SHORTEST: dict = {}


def _round_f64(fmt, value):
    """Code of a float64 value in fmt, nearest-even, no saturation, no context."""
    bits = np.array([value], dtype=np.float64).view(np.uint64)
    out, _ = convert_codes(_ext.BINARY64, fmt.params, bits)
    return int(out[0])


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
        # nearer first; on a tie the even last digit (as correctly rounded output)
        for cand in sorted({lo, hi}, key=lambda c: (abs(c - exact), int(c.as_tuple().digits[-1]) % 2)):
            if _round_f64(fmt, float(cand)) == code:
                return repr(float(cand))
    return repr(v)


# --------------------------------------------------------------------------
# presets: the C table joined with the registry rows
# --------------------------------------------------------------------------

_PRESET_ROWS = {name: (params, fam) for name, params, fam in _ext.presets()}
ROWS = {row.name: row for row in _registry.ROWS}
if set(ROWS) != set(_PRESET_ROWS):
    raise ImportError(f"softfp8: the C preset table and softfp8/_registry.py disagree: "
                      f"C only {sorted(set(_PRESET_ROWS) - set(ROWS))}, "
                      f"Python only {sorted(set(ROWS) - set(_PRESET_ROWS))}")


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
    return FAMILIES[name]


# canonical name -> Format (fixed formats) / TeslaFamily (bias parameter), in table order
PRESETS = {}
FAMILIES = {}
for _name, (_params, _fam) in _PRESET_ROWS.items():
    if _fam:
        FAMILIES[_name] = TeslaFamily(_name)
    else:
        PRESETS[_name] = _from_row(_name, _params)
# every other name of a preset -> canonical name
ALIASES = {}
for _row in _registry.ROWS:
    for _alias in _row.aliases:
        if _alias in ALIASES or _alias in PRESETS or _alias in FAMILIES:
            raise ImportError(f"softfp8/_registry.py: the alias {_alias!r} names two formats")
        ALIASES[_alias] = _row.name
# every public name of a preset or family -> the object; bound as attributes here and in softfp8
NAMED = {**PRESETS, **FAMILIES}
NAMED.update({alias: NAMED[name] for alias, name in ALIASES.items()})
_taken = set(NAMED) & set(globals())
if _taken:
    raise ImportError(f"softfp8/_registry.py: preset name(s) {sorted(_taken)} shadow softfp8 names")
globals().update(NAMED)
del _name, _params, _fam, _row, _alias, _taken


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
    if not -(1 << 20) <= b <= 1 << 20:
        raise ValueError(f"bias must be between -2**20 and 2**20, got {bias!r}")
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


def _parse_call(text):
    """The format named by a parametric name such as "cfloat8_143(bias=20)",
    "shp(bias=3, subnormals='ieee')" or the default name of softfp8.format(...);
    None if text is not a call of a family or of format."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and (node.func.id in FAMILIES or node.func.id == "format")):
        return None
    try:
        args = [ast.literal_eval(a) for a in node.args]
        if any(k.arg is None for k in node.keywords):
            raise ValueError("**")
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    except ValueError:
        raise ValueError(f"cannot read the format name {text!r}: its arguments must be "
                         f"literals") from None
    if node.func.id == "format":
        if args:
            raise TypeError(f"cannot read the format name {text!r}: format() takes keywords only")
        try:
            return format(**kwargs)
        except TypeError as exc:
            raise TypeError(f"cannot read the format name {text!r}: {exc}") from None
    try:
        return FAMILIES[node.func.id](*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"cannot read the format name {text!r}: {exc}") from None


def lookup(name, bias=None):
    """Format by name: a preset or alias, a Tesla family with ``bias=``, or the
    name of any format as ``Format.name`` spells it ("cfloat8_143(bias=20)",
    "shp(bias=3, subnormals='ieee')", "format(exp_bits=5, ...)"), so that
    ``lookup(fmt.name) == fmt`` unless the format was given a custom name.
    A format or softfp8 dtype is returned as its format."""
    if not isinstance(name, str):
        fmt = format_or_none(name)
        if fmt is None:
            raise TypeError(f"format name must be a string, got {name!r}")
        if bias is not None:
            raise ValueError(f"bias= applies to a family name, not to the format {fmt.name}")
        return fmt
    key = ALIASES.get(name, name)
    if key in FAMILIES:
        return FAMILIES[key](bias)
    if key in PRESETS:
        if bias is not None:
            raise ValueError(f"{name} has a fixed bias; --bias/bias= applies to "
                             f"{', '.join(FAMILIES)} only")
        return PRESETS[key]
    fmt = _parse_call(name)
    if fmt is not None:
        if bias is not None:
            raise ValueError(f"bias= given twice: {name!r} already names its bias")
        return fmt
    raise ValueError(f"unknown format {name!r}; known: "
                     f"{', '.join(list(PRESETS) + list(FAMILIES) + list(ALIASES))}, a family "
                     f"with its bias such as 'cfloat8_143(bias=20)', or 'format(...)'")
