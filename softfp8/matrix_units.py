"""Matrix units as they really are: the block-FMA model of GPU tensor / matrix cores,
named profiles of real units, and A @ B + C (docs/matrix-units.md).

``BlockFMA`` holds the parameters of the generic model; ``profile(name)`` (also
``softfp8.Accumulation.profile``) returns a ``MatrixUnit``, a table of BlockFMA settings
per input and output format; ``matmul`` computes with either, and with the further
orders of ``softfp8.Accumulation`` ("pairwise", "kahan") and addends for every model,
bit-exactly in C (softfp8/_core/bfma.c).
"""
from __future__ import annotations

import numpy as np

from . import _context, _ext
from . import bits as _bits
from ._dtypes import _contains, _matmul_shape, dtype_of, format_of
from ._formats import lookup
from ._validation import _as_bool, _as_int, _choice, format_or_none

_ROUND = {m: i for i, m in enumerate(_context.ROUNDING_MODES)}
_FINAL_MODES = ("toward_zero", "nearest_even", "nearest_away", "upward", "downward")
_ALIGN_MODES = ("toward_zero", "downward", "upward", "nearest_even")
_GROUPINGS = ("global", "odd_even", "pairwise")
_ORDERS = {"exact": 1, "sequential": 2, "pairwise": 3, "kahan": 4}
_F16 = lookup("float16")
_BF16 = lookup("bfloat16")


def _int_in(value, lo, hi, what, allow_none=False):
    if value is None and allow_none:
        return None
    v = _as_int(value, what)
    if not lo <= v <= hi:
        raise ValueError(f"{what} must be in {lo} .. {hi}, got {v}")
    return v


class BlockFMA:
    """The generic block-FMA model of a matrix unit (docs/matrix-units.md): products in
    blocks of ``block``, aligned in a window of 23 + ``extra_bits`` fraction bits (None:
    exactly), summed, rounded once by ``rounding``; every block's result is the next
    block's addend.  The other parameters are specified in the docs' table."""

    _FIELDS = ("block", "extra_bits", "rounding", "sticky", "grouping", "addend", "alignment_rounding",
               "addend_extra_bits", "zero_addend_exponent", "normalized_products", "min_exponent",
               "product_overflow", "input_subnormals", "output_subnormals", "promote_every")
    __slots__ = _FIELDS

    def __init__(self, block, extra_bits, rounding="toward_zero", sticky=False, grouping="global",
                 addend="with_products", alignment_rounding="toward_zero", addend_extra_bits=7,
                 zero_addend_exponent=None, normalized_products=False, min_exponent=None,
                 product_overflow=True, input_subnormals=True, output_subnormals=True,
                 promote_every=None):
        self.block = _int_in(block, 1, 65536, "block")
        self.extra_bits = _int_in(extra_bits, -20, 40, "extra_bits", allow_none=True)
        self.rounding = _choice(rounding, _FINAL_MODES, "rounding")
        self.sticky = _as_bool(sticky, "sticky")
        self.grouping = _choice(grouping, _GROUPINGS, "grouping")
        self.addend = _choice(addend, ("with_products", "late"), "addend")
        self.alignment_rounding = _choice(alignment_rounding, _ALIGN_MODES, "alignment_rounding")
        self.addend_extra_bits = _int_in(addend_extra_bits, 0, 32, "addend_extra_bits")
        self.zero_addend_exponent = _int_in(zero_addend_exponent, -1000, 1000, "zero_addend_exponent",
                                            allow_none=True)
        self.normalized_products = _as_bool(normalized_products, "normalized_products")
        self.min_exponent = _int_in(min_exponent, -10000, 10000, "min_exponent", allow_none=True)
        self.product_overflow = _as_bool(product_overflow, "product_overflow")
        self.input_subnormals = _as_bool(input_subnormals, "input_subnormals")
        self.output_subnormals = _as_bool(output_subnormals, "output_subnormals")
        self.promote_every = _int_in(promote_every, 1, 2 ** 40, "promote_every", allow_none=True)
        if self.promote_every is not None and self.promote_every % self.block:
            raise ValueError(f"promote_every={self.promote_every} must be a multiple of block={self.block}")
        if self.addend == "late" and self.grouping != "global":
            raise ValueError(f"addend='late' applies to grouping='global' (odd_even always adds the "
                             f"addend late; pairwise adds it after the tree), got grouping={self.grouping!r}")
        aligned_late = self.addend == "late" or self.grouping == "odd_even"
        if aligned_late and (self.extra_bits is None or self.extra_bits < 0):
            raise ValueError(f"a late addend and odd/even grouping need extra_bits >= 0, got "
                             f"{self.extra_bits!r}")
        if self.sticky and self.extra_bits is None:
            raise ValueError("sticky=True needs a finite window (extra_bits not None)")

    def params(self):
        """The parameters as a dict of keyword arguments."""
        return {f: getattr(self, f) for f in self._FIELDS}

    def replace(self, **changes):
        """A copy with some parameters changed."""
        return BlockFMA(**{**self.params(), **changes})

    def __eq__(self, other):
        return isinstance(other, BlockFMA) and self.params() == other.params()

    def __hash__(self):
        return hash(tuple(self.params().items()))

    def __repr__(self):
        dflt = BlockFMA.__init__.__defaults__
        names = self._FIELDS[2:]
        extra = [f"{n}={getattr(self, n)!r}" for n, d in zip(names, dflt) if getattr(self, n) != d]
        return f"softfp8.BlockFMA(block={self.block}, extra_bits={self.extra_bits!r}" + \
            "".join(", " + e for e in extra) + ")"

    def _c_model(self, fa, fb, fo):
        """The C model (bfma.h fields) for operand formats fa, fb and output fo (params)."""
        return {"order": 0, "fa": fa, "fb": fb, "fo": fo, "envo": (_ROUND[self.rounding], 0, 0, 32),
                "block": self.block, "exact_align": int(self.extra_bits is None),
                "extra_bits": self.extra_bits or 0, "sticky": int(self.sticky),
                "grouping": _GROUPINGS.index(self.grouping), "late_addend": int(self.addend == "late"),
                "align_rounding": _ROUND[self.alignment_rounding], "addend_extra_bits": self.addend_extra_bits,
                "zero_addend_exp": self.zero_addend_exponent, "min_exp": self.min_exponent,
                "normalized_products": int(self.normalized_products),
                "product_overflow": int(self.product_overflow), "in_subnormals": int(self.input_subnormals),
                "out_subnormals": int(self.output_subnormals), "promote": self.promote_every or 0}


# ---- named profiles (docs/matrix-units.md, "Named profiles"; sources in the table there) ----

_FP8 = ("e4m3", "e5m2")
_FNUZ8 = ("e4m3fnuz", "e5m2fnuz")
_NAMES = {"float16": "fp16", "bfloat16": "bf16", "tf32": "tf32", "e4m3": "e4m3", "e5m2": "e5m2",
          "e4m3fnuz": "e4m3fnuz", "e5m2fnuz": "e5m2fnuz", "float32": "fp32"}


def _nvidia(block, extra, min32, min16, block_tf32, fp8=None, fp16_out=True):
    """fp16 / bf16 / tf32 rows of an NVIDIA unit (and FP8 with fp32 outputs)."""
    b32 = BlockFMA(block=block, extra_bits=extra, min_exponent=min32)
    t = {"float16": {"float32": b32}, "bfloat16": {"float32": b32},
         "tf32": {"float32": b32.replace(block=block_tf32)}}
    if fp16_out:
        t["float16"]["float16"] = b32.replace(rounding="nearest_even", min_exponent=min16)
    if fp8 is not None:
        for f in _FP8:
            t[f] = {"float32": fp8}
    return t


_V100 = {"float16": {"float32": BlockFMA(block=4, extra_bits=0),
                     "float16": BlockFMA(block=4, extra_bits=0, rounding="nearest_even", min_exponent=-19)}}
_A100 = _nvidia(8, 1, -132, -20, 4)
_ADA = _nvidia(8, 1, -132, -20, 4, fp8=BlockFMA(block=16, extra_bits=-10, min_exponent=-132))
_H100 = _nvidia(16, 2, -133, -21, 8, fp8=BlockFMA(block=32, extra_bits=-10, min_exponent=-133))
# B200 FP8 -> fp32: the GPU data decide (docs, "Validation"): nearest even, extra_bits 8
_B200 = _nvidia(16, 2, -133, -21, 8, fp8=BlockFMA(block=32, extra_bits=8, rounding="nearest_even",
                                                  min_exponent=-133))
_MI100 = {"float16": {"float32": BlockFMA(block=4, extra_bits=None, rounding="nearest_even")},
          "bfloat16": {"float32": BlockFMA(block=2, extra_bits=None, rounding="nearest_even")}}
_MI250_ROW = BlockFMA(block=4, extra_bits=None, rounding="nearest_even", grouping="pairwise",
                      product_overflow=False, input_subnormals=False, output_subnormals=False)
_MI250 = {"float16": {"float32": _MI250_ROW}, "bfloat16": {"float32": _MI250_ROW}}
_MI300_ROW = BlockFMA(block=8, extra_bits=1, rounding="nearest_even", addend="late",
                      alignment_rounding="downward", zero_addend_exponent=-126, product_overflow=False)
_MI300 = {"float16": {"float32": _MI300_ROW}, "bfloat16": {"float32": _MI300_ROW},
          "tf32": {"float32": _MI300_ROW.replace(block=4)},
          **{f: {"float32": _MI300_ROW.replace(block=16, addend="with_products", grouping="odd_even")}
             for f in _FNUZ8}}

# FP8 inputs with fp16 outputs exist on these units but no model reproduces the GPU data
_FP8_FP16_UNMODELLED = ("ada", "l40s", "h100", "h200", "b200")


class MatrixUnit:
    """A named matrix unit: the BlockFMA used for each (input format, output format) it
    supports.  Obtain with ``softfp8.Accumulation.profile(name)``."""

    __slots__ = ("name", "_table", "_mixed")

    def __init__(self, name, table, mixed):
        self.name, self._table, self._mixed = name, table, mixed

    @property
    def inputs(self):
        """The input formats the unit multiplies (softfp8 names; "tf32": float32 arrays)."""
        return tuple(self._table)

    def outputs(self, in_format):
        """The output formats the unit delivers for an input format."""
        return tuple(self._table[self._key(in_format)])

    def _supported(self):
        return "; ".join(f"{_NAMES[i]} -> {', '.join(_NAMES[o] for o in outs)}"
                         for i, outs in self._table.items())

    def _key(self, fmt):
        key = fmt if isinstance(fmt, str) else getattr(fmt, "name", None)
        key = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}.get(key, key)
        if key not in self._table:
            raise ValueError(f"matrix unit {self.name!r} does not take {_NAMES.get(key, key)} inputs; it "
                             f"supports {self._supported()}")
        return key

    def model(self, in_format, out_format="float32", in_format_b=None):
        """The BlockFMA for operands of in_format (and in_format_b, for mixed FP8) and an
        output format ("float32" or "float16"); ValueError naming what the unit supports."""
        ka = self._key(in_format)
        kb = ka if in_format_b is None else self._key(in_format_b)
        if ka != kb and not (self._mixed and {ka, kb} <= set(self._mixed)):
            raise ValueError(f"matrix unit {self.name!r} multiplies operands of one format"
                             + (f" (or {' with '.join(_NAMES[m] for m in self._mixed)})" if self._mixed else "")
                             + f"; got {_NAMES[ka]} and {_NAMES[kb]}")
        ko = {"fp16": "float16", "fp32": "float32"}.get(out_format, out_format)
        outs = self._table[ka]
        if ko not in outs:
            if ko == "float16" and ka in _FP8 and self.name in _FP8_FP16_UNMODELLED:
                raise ValueError(f"matrix unit {self.name!r}: {_NAMES[ka]} inputs with fp16 outputs are "
                                 f"not modelled (no published model reproduces the GPU outputs; "
                                 f"docs/matrix-units.md); use float32 outputs")
            raise ValueError(f"matrix unit {self.name!r} with {_NAMES[ka]} inputs delivers "
                             f"{', '.join(_NAMES[o] for o in outs)}, not {_NAMES.get(ko, ko)}")
        return outs[ko]

    def __repr__(self):
        return f"softfp8.Accumulation.profile({self.name!r})"


_PROFILES = {"v100": (_V100, None), "a100": (_A100, None), "a2": (_A100, None), "a30": (_A100, None),
             "ada": (_ADA, _FP8), "l40s": (_ADA, _FP8), "h100": (_H100, _FP8), "h200": (_H100, _FP8),
             "b200": (_B200, _FP8), "mi100": (_MI100, None), "mi250": (_MI250, None),
             "mi300x": (_MI300, _FNUZ8)}


def profile(name):
    """The MatrixUnit of a real GPU (docs/matrix-units.md): "v100", "a100", "a2", "a30",
    "ada", "l40s", "h100", "h200", "b200", "mi100", "mi250", "mi300x"."""
    if not isinstance(name, str):
        raise TypeError(f"profile name must be a string, got {name!r}")
    if name not in _PROFILES:
        raise ValueError(f"unknown matrix unit profile {name!r}; known: {', '.join(_PROFILES)}")
    table, mixed = _PROFILES[name]
    return MatrixUnit(name, table, mixed)


def profiles():
    """Names of the profiles."""
    return tuple(_PROFILES)


# ---- operands, outputs, addends ----

def _tf32_check(x):
    u = np.ascontiguousarray(x).view(np.uint32)
    bad = ((u & 0x1FFF) != 0) & ~np.isnan(x)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        v = x.ravel()[i]
        raise ValueError(f"float32 operands of a matrix unit are TF32 (1 sign, 8 exponent, 10 fraction bits): "
                         f"{float(v)!r} (0x{int(u.ravel()[i]):08x}) is not TF32-representable")


def _operand(x, block_model, what):
    """(array, C format params, profile key)"""
    x = np.asarray(x)
    fmt = format_of(x.dtype)
    if fmt is not None:
        return x, fmt.params, fmt.name
    if x.dtype == np.float16:
        return x, _F16.params, "float16"
    if x.dtype.name == "bfloat16" and x.dtype.itemsize == 2:
        return x, _BF16.params, "bfloat16"
    if x.dtype == np.float32 and block_model:
        _tf32_check(x)
        return x, _ext.BINARY32, "tf32"
    allowed = "softfp8, float16, bfloat16 or (TF32) float32" if block_model else "softfp8, float16 or bfloat16"
    raise TypeError(f"softfp8.matmul {what} must be a {allowed} array, got dtype {x.dtype}")


def _out_target(out_dtype, block_model):
    """(C params, NumPy dtype, name) of the output."""
    if isinstance(out_dtype, str) and out_dtype in ("float32", "float64", "float16"):
        out_dtype = np.dtype(out_dtype)
    fmt = format_or_none(out_dtype)
    if fmt is None and isinstance(out_dtype, str):
        try:
            fmt = lookup(out_dtype)
        except (KeyError, ValueError, TypeError):
            raise ValueError(f"softfp8.matmul out_dtype: unknown format name {out_dtype!r}") from None
    if fmt is not None:
        if block_model and fmt != _F16:
            raise ValueError(f"matrix units deliver float32 or float16, not {fmt.name}")
        return fmt.params, dtype_of(fmt), fmt.name
    try:
        dt = np.dtype(out_dtype)
    except TypeError:
        dt = None
    if dt == np.float32:
        return _ext.BINARY32, dt, "float32"
    if dt == np.float16:
        return _F16.params, dt, "float16"
    if not block_model:
        if dt == np.float64:
            return _ext.BINARY64, dt, "float64"
        if dt is not None and dt.name == "bfloat16" and dt.itemsize == 2:
            return _BF16.params, dt, "bfloat16"
    allowed = "float32 or float16" if block_model else "float32, float64, float16, bfloat16 or a softfp8 format"
    raise TypeError(f"softfp8.matmul out_dtype must be {allowed}, got {out_dtype!r}")


def _addend(c, shape, dt, name):
    """C broadcast to the result's shape, of the result's type (any binary16 dtype for float16)."""
    c = np.asarray(c)
    ok = c.dtype == dt or (name == "float16" and (c.dtype == np.float16 or format_of(c.dtype) == _F16))
    if not ok:
        raise TypeError(f"softfp8.matmul: c must have the output's type {name} ({dt}), got dtype {c.dtype}")
    try:
        return np.broadcast_to(c, shape)
    except ValueError:
        raise ValueError(f"softfp8.matmul: c has shape {c.shape}, which does not broadcast to the "
                         f"result's shape {shape}") from None


def _as_softfp8(dt):
    """The softfp8 dtype holding a NumPy float16 / ml_dtypes bfloat16 operand's codes."""
    if format_of(dt) is None:
        return dtype_of(_F16) if dt == np.float16 else dtype_of(_BF16)
    return dt


def default_out_dtype(acc, da, db):
    """softfp8.matmul's out_dtype=None (docs/training.md, "Accumulation models"):
    float32 for block models and operands of two formats; for an Accumulation, the
    format its sum ends in (``promoted`` with promote_every, else the accumulator) when
    that is wider than the operands' format (holds all its values, not the reverse);
    otherwise, and for the exact model, the operands' dtype (as ``@``)."""
    if is_block_model(acc) or da != db:
        return np.dtype(np.float32)
    if acc is None:
        return da
    final = (acc._prom if acc.promote_every else acc._acc).dtype
    op = _as_softfp8(da)
    fin = _as_softfp8(final) if final == np.float16 or final.name == "bfloat16" else final
    if _contains(op, fin) and not _contains(fin, op):
        return final
    return da


def model_ints(md):
    """The int32 encoding of a C model dict (bfma.h field names; formats as parameter tuples,
    environments as (rounding, saturate, tininess_before, sr_bits[, isa])) that the C side
    decodes (bfma_params.c, sfp8u_model_from_ints): softfp8._ext.mu_gemm and softfp8.jax's
    matmul take it.  Absent fields take the defaults of the generic model."""
    def env(e):
        e = tuple(e)
        return e[:4] + ((e[4] if len(e) > 4 else 0),)

    fo, envo = md["fo"], md["envo"]
    zae, mine = md.get("zero_addend_exp"), md.get("min_exp")
    promote = int(md.get("promote", 0))
    if not 0 <= promote < 2 ** 31:
        raise ValueError(f"promote_every {promote} outside 0 .. 2**31 - 1")
    v = ((md["order"],) + tuple(md["fa"]) + tuple(md["fb"]) + tuple(fo) + env(envo)
         + (md.get("block", 1), md.get("exact_align", 0), md.get("extra_bits", 0), md.get("sticky", 0),
            md.get("grouping", 0), md.get("late_addend", 0), md.get("align_rounding", 2),
            md.get("addend_extra_bits", 7), int(zae is not None), zae or 0, md.get("normalized_products", 0),
            int(mine is not None), mine or 0, md.get("product_overflow", 1), md.get("in_subnormals", 1),
            md.get("out_subnormals", 1), promote, int(md.get("fp") is not None))
         + tuple(md.get("fp") or fo) + env(md.get("envp", envo)) + tuple(md.get("facc", fo))
         + env(md.get("envacc", envo)) + tuple(md.get("fprom", fo)) + env(md.get("envprom", envo)))
    assert len(v) == 87
    return np.array(v, dtype=np.int32)


def is_block_model(acc):
    return isinstance(acc, (BlockFMA, MatrixUnit))


def handles(acc, c):
    """True if matmul(accumulation=acc, c=c) is computed here (block models, addends, the
    pairwise and Kahan orders)."""
    return c is not None or is_block_model(acc) or getattr(acc, "order", "sequential") != "sequential"


def _env(target_fmt, mode, what):
    env = _bits._env(target_fmt, mode, None, None, None)
    if env[0] == _ROUND["stochastic"]:
        raise ValueError(f"stochastic rounding (from the softfp8 context) is not modelled by {what}")
    return env


def _order_model(acc, fa, fb, fo, fo_fmt):
    """The C model of the exact model (acc None) or an Accumulation order."""
    envo = _env(fo_fmt, None, "softfp8.matmul")
    if acc is None:
        return {"order": _ORDERS["exact"], "fa": fa, "fb": fb, "fo": fo, "envo": envo}
    envacc = _env(acc._acc.fmt, acc.rounding, "accumulation models")
    md = {"order": _ORDERS[acc.order], "fa": fa, "fb": fb, "fo": fo, "envo": envo,
          "facc": acc._acc.params, "envacc": envacc, "promote": acc.promote_every or 0,
          "fprom": acc._prom.params, "envprom": _env(acc._prom.fmt, "nearest_even", "accumulation models")}
    if acc._prod is not None:
        md["fp"] = acc._prod.params
        md["envp"] = _env(acc._prod.fmt, acc.product_rounding or acc.rounding, "accumulation models")
    return md


def c_model(accumulation, fa, fb, ka, kb, out):
    """The C model dict (bfma.h) of softfp8.matmul's ``accumulation`` (None: exact) for operand
    formats fa, fb (C params; ka, kb: the profile keys of _operand) and out = _out_target's
    (C params, dtype, name); a profile resolves to its BlockFMA for these formats here."""
    fo, dt, oname = out
    if isinstance(accumulation, MatrixUnit):
        accumulation = accumulation.model(ka, oname, kb)
    if is_block_model(accumulation):
        return accumulation._c_model(fa, fb, fo)
    return _order_model(accumulation, fa, fb, fo, format_or_none(dt))


_INTS = {}     # (BlockFMA, fa, fb, fo) -> its model_ints (read-only): a profile's per-call cost


def _block_ints(bf, fa, fb, fo):
    """model_ints of a block model's C model, cached (BlockFMA hashes and compares by its
    parameters, so a changed BlockFMA is a new key)."""
    key = (bf, fa, fb, fo)
    v = _INTS.get(key)
    if v is None:
        if len(_INTS) >= 256:
            _INTS.clear()
        v = model_ints(bf._c_model(fa, fb, fo))
        v.setflags(write=False)
        _INTS[key] = v
    return v


def matmul(a, b, c=None, out_dtype=None, out=None, accumulation=None):
    """A @ B + C (np.matmul's shapes) under a matrix-unit model, an Accumulation order
    with an addend, or exactly (accumulation=None) with an addend; see
    softfp8.matmul and docs/matrix-units.md."""
    if isinstance(c, (type, np.dtype, str)) or format_or_none(c) is not None:
        raise TypeError(f"softfp8.matmul's third argument is the addend c (A @ B + C), got {c!r}: "
                        f"pass the output type as out_dtype=")
    if isinstance(accumulation, str) and accumulation == "exact":
        accumulation = None
    block = is_block_model(accumulation)
    if not block and accumulation is not None and not (hasattr(accumulation, "_acc")
                                                       and hasattr(accumulation, "order")):
        raise TypeError(f"accumulation must be None, 'exact', a softfp8.Accumulation, a softfp8.BlockFMA "
                        f"or a matrix unit (softfp8.Accumulation.profile(name)), got {accumulation!r}")
    a, fa, ka = _operand(a, block, "a")
    b, fb, kb = _operand(b, block, "b")
    if out_dtype is None:
        out_dtype = default_out_dtype(accumulation, a.dtype, b.dtype)
    fo, dt, oname = _out_target(out_dtype, block)
    if block:
        bf = accumulation.model(ka, oname, kb) if isinstance(accumulation, MatrixUnit) else accumulation
        md = _block_ints(bf, tuple(fa), tuple(fb), tuple(fo))
    else:
        md = model_ints(c_model(accumulation, fa, fb, ka, kb, (fo, dt, oname)))
    shape = _matmul_shape(a, b)
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"softfp8.matmul out must be a NumPy array, got {type(out).__name__}")
        if out.dtype != dt or out.shape != shape:
            raise ValueError(f"softfp8.matmul: out has dtype {out.dtype} and shape {out.shape}, expected "
                             f"{dt} and {shape}")
    a2 = a[np.newaxis, :] if a.ndim == 1 else a
    b2 = b[:, np.newaxis] if b.ndim == 1 else b
    m, p = a2.shape[-2], b2.shape[-1]
    if a2.ndim == 2 and b2.ndim == 2:     # one product: no batch to broadcast
        res = np.empty((m, p), dtype=dt)
        C = None if c is None else _addend(c, shape, dt, oname).reshape(m, p)
        return finish(res, a.ndim, b.ndim, out, _ext.mu_gemm(md, a2, b2, C, res))
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    res = np.empty(batch + (m, p), dtype=dt)
    C = None
    if c is not None:
        C = _addend(c, shape, dt, oname).reshape(batch + (m, p))
    A = np.broadcast_to(a2, batch + a2.shape[-2:])
    B = np.broadcast_to(b2, batch + b2.shape[-2:])
    fl = 0
    for idx in np.ndindex(*batch):
        fl |= _ext.mu_gemm(md, A[idx], B[idx], None if C is None else C[idx], res[idx])
    return finish(res, a.ndim, b.ndim, out, fl)


def finish(res, adim, bdim, out, fl, name="matmul"):
    """The result of a product computed 2-D by 2-D: 1-D operands' axes dropped, copied
    into out, then the flags published as `@` publishes them (sticky flags, np.errstate)."""
    if adim == 1:
        res = res[..., 0, :]
    if bdim == 1:
        res = res[..., 0]
    if out is not None:
        out[...] = res
        res = out
    _context.publish_flags(fl, name)
    return res
