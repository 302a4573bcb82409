"""softfp8.matmul(accumulation=...) and softfp8.scaled_mm behave like ``@`` (issue 22 item 6).

- NumPy's floating-point error handling: every model kind warns, raises or stays quiet
  under ``np.errstate`` by the rule ``@`` follows (NumPy's, after a ufunc loop), and the
  sticky flags are set in every case;
- ``@`` / vecdot / matvec / vecmat of two softfp8 formats raise a UFuncTypeError naming
  softfp8.matmul and softfp8.scaled_mm;
- scaled_mm takes Python / NumPy float (and int) scales rounded once to binary32 (checked
  against tests/models/rational.py and the Fractions reference of test_gemm.py);
- the out_dtype default of an Accumulation wider than the operands.

Cost: about 1 s.
"""
from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import softfp8
from softfp8 import Flags

from ..models import rational as ref
from .test_gemm import E4M3, E5M2, F32, codes_array, make_scale, raw, ref_gemm

# NumPy's order of the checks after a loop (PyUFunc_handlefperr): divide, over, under, invalid
KINDS = [("divide", Flags.DIVBYZERO, "divide by zero"), ("over", Flags.OVERFLOW, "overflow"),
         ("under", Flags.UNDERFLOW, "underflow"), ("invalid", Flags.INVALID, "invalid value")]
SETTINGS = ["raise", "warn", "ignore"]


def observe(fn, setting):
    """(exception text or None, set of RuntimeWarning texts, sticky flags) of fn() under
    np.errstate(all=setting)."""
    exc = None
    with warnings.catch_warnings(record=True) as caught, softfp8.collect_flags() as fl:
        warnings.simplefilter("always")
        with np.errstate(all=setting):
            try:
                fn()
            except FloatingPointError as e:
                exc = str(e)
    texts = {str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)}
    return exc, texts, Flags(int(fl.flags))


def rule(flags, setting, name):
    """What NumPy's errstate makes of a loop's flags (the rule ``@`` follows)."""
    hits = [f"{text} encountered in {name}" for _, flag, text in KINDS if flags & flag]
    if setting == "raise":
        return (hits[0] if hits else None), set()
    return None, set(hits) if setting == "warn" else set()


def e(fmt, values):
    return np.array(values, dtype=np.float64).astype(fmt)


E4, E5, F16, BF = softfp8.e4m3.dtype, softfp8.e5m2.dtype, softfp8.float16.dtype, softfp8.bfloat16.dtype
BIG = e(E4, [[448.0, 448.0]])
BIG_T = e(E4, [[448.0], [448.0]])
INF = e(E5, [[np.inf, 1.0], [2.0, 3.0]])
ZERO = e(E5, [[0.0, 1.0], [1.0, 1.0]])
TINY16 = e(F16, [[2.0 ** -14, 0.0]])
TINY16_T = e(F16, [[2.0 ** -14], [0.0]])
KA = e(E5, [[np.inf, 57344.0], [57344.0, 57344.0]])    # with KB: inf * 0 and 2 * 57344^2
KB = e(E5, [[0.0, 57344.0], [1.0, 57344.0]])
HUGE_BF = e(BF, [[3e38, 3e38]])
HUGE_BF_T = e(BF, [[3e38], [3e38]])
A = softfp8.Accumulation


def test_at_follows_the_rule():
    """`@` on softfp8 arrays: overflow, invalid (inf * 0), underflow, and two at once."""
    cases = [
        lambda: BIG @ BIG_T,                                   # 401408 -> NaN in E4M3: overflow
        lambda: INF @ ZERO[:, :1].copy(),                      # inf * 0: invalid
        lambda: e(E4, [[2.0 ** -9]]) @ e(E4, [[2.0 ** -9]]),   # 2^-18 -> 0: underflow
        lambda: KA @ KB,                                       # invalid and overflow
    ]
    seen = Flags(0)
    for i, fn in enumerate(cases):
        for setting in SETTINGS:
            exc, texts, flags = observe(fn, setting)
            assert flags & (Flags.OVERFLOW | Flags.UNDERFLOW | Flags.INVALID), (i, flags)
            assert (exc, texts) == rule(flags, setting, "matmul"), (i, setting, flags, exc, texts)
            seen |= flags
    assert seen & Flags.OVERFLOW and seen & Flags.UNDERFLOW and seen & Flags.INVALID


MODEL_CASES = [
    # (what, call, name in the message, the flags it must raise)
    ("exact, mixed formats", lambda: softfp8.matmul(INF, ZERO.astype(E4)), "matmul", Flags.INVALID),
    ("exact, out e4m3", lambda: softfp8.matmul(e(E4, [[2.0 ** -9]]), e(E5, [[2.0 ** -16]]), out_dtype=E4),
     "matmul", Flags.UNDERFLOW),
    ("exact with addend", lambda: softfp8.matmul(BIG, BIG_T, c=e(E4, [[448.0]])), "matmul", Flags.OVERFLOW),
    ("sequential float16", lambda: softfp8.matmul(BIG, BIG_T, accumulation=A(accumulator="float16")),
     "matmul", Flags.OVERFLOW),
    ("pairwise", lambda: softfp8.matmul(BIG, BIG_T, accumulation=A(accumulator="float16", order="pairwise")),
     "matmul", Flags.OVERFLOW),
    ("kahan", lambda: softfp8.matmul(KA, KB, accumulation=A(accumulator="float16", order="kahan")), "matmul",
     Flags.INVALID | Flags.OVERFLOW),
    ("promoted", lambda: softfp8.matmul(BIG, BIG_T, accumulation=A(accumulator="e4m3", promote_every=1,
                                                                  promoted="float16")),
     "matmul", Flags.OVERFLOW),
    ("BlockFMA", lambda: softfp8.matmul(HUGE_BF, HUGE_BF_T, accumulation=softfp8.BlockFMA(block=2, extra_bits=3)),
     "matmul", Flags.OVERFLOW),
    ("BlockFMA fp16 out", lambda: softfp8.matmul(TINY16, TINY16_T, out_dtype=np.float16,
                                                 accumulation=softfp8.BlockFMA(block=2, extra_bits=3)),
     "matmul", Flags.UNDERFLOW),
    ("profile h100", lambda: softfp8.matmul(INF, ZERO.astype(E4), accumulation=A.profile("h100")), "matmul",
     Flags.INVALID),
    ("profile a100 + c", lambda: softfp8.matmul(HUGE_BF, HUGE_BF_T, c=np.float32(1.0),
                                                accumulation=A.profile("a100")), "matmul", Flags.OVERFLOW),
    ("scaled_mm exact", lambda: softfp8.scaled_mm(BIG, BIG_T, 2.0 ** 100, 2.0 ** 100), "scaled_mm",
     Flags.OVERFLOW),
    ("scaled_mm model", lambda: softfp8.scaled_mm(INF, ZERO, 1.0, 1.0, accumulation=A(accumulator="float16")),
     "scaled_mm", Flags.INVALID),
]


@pytest.mark.parametrize("what,fn,name,must", MODEL_CASES, ids=[c[0] for c in MODEL_CASES])
def test_models_follow_the_rule(what, fn, name, must):
    """Every model kind under errstate raise / warn / ignore: the flags it raised decide
    the warnings or the FloatingPointError exactly as for `@`; the sticky flags are set
    in every setting (also when the call raises)."""
    for setting in SETTINGS:
        exc, texts, flags = observe(fn, setting)
        assert flags & must == must, (what, setting, flags)
        assert (exc, texts) == rule(flags, setting, name), (what, setting, flags, exc, texts)


def test_errstate_per_kind_and_call():
    """One kind set to raise while the others warn, and np.errstate(call=...) (the
    callback gets NumPy's message and flag bits, as for `@`)."""
    fn = MODEL_CASES[5][1]     # kahan: invalid and overflow
    with warnings.catch_warnings(record=True) as caught, np.errstate(over="warn", invalid="raise"):
        warnings.simplefilter("always")
        with pytest.raises(FloatingPointError, match="invalid value encountered in matmul"):
            fn()
    assert [str(w.message) for w in caught] == ["overflow encountered in matmul"]
    got, expect = [], []
    with np.errstate(all="call", call=lambda msg, flag: got.append((msg, flag))):
        fn()
    with np.errstate(all="call", call=lambda msg, flag: expect.append((msg, flag))):
        KA @ KB
    assert got == expect and len(got) == 2


def test_mixed_formats_at():
    a = e(E4, [[1.5, 2.0]])
    b = e(E5, [[1.25], [3.0]])
    calls = {"matmul": lambda: a @ b, "matmul ": lambda: np.matmul(a, b), "vecdot": lambda: np.vecdot(a[0], b[:, 0]),
             "matvec": lambda: np.matvec(a, b[:, 0]), "vecmat": lambda: np.vecmat(a[0], b)}
    for name, fn in calls.items():
        with pytest.raises(TypeError, match=r"softfp8\.matmul.*softfp8\.scaled_mm") as info:
            fn()
        assert isinstance(info.value, np._core._exceptions.UFuncTypeError)
        assert info.value.ufunc is getattr(np, name.strip())
        assert "E4M3DType" in str(info.value) and "E5M2DType" in str(info.value)
    # what the message proposes gives the exact product
    assert softfp8.matmul(a, b).dtype == np.float32 and float(softfp8.matmul(a, b)[0, 0]) == 7.875
    # one format, elementwise mixing, and a NumPy operand are as before
    assert (a @ a.T).dtype == E4 and (a + a.astype(E5)).dtype == np.float16
    with pytest.raises(TypeError, match="did not contain a loop"):
        a @ np.ones((2, 1), np.float32)


def f32_code(x):
    """binary32 code of x rounded once (exact value, nearest even) by the reference."""
    v = Fraction(int(x)) if isinstance(x, (int, np.integer)) else Fraction(*x.as_integer_ratio())
    return ref.round_pack(F32, 0, v)[0]


SCALES = [0.1, 1 / 3, np.float64(2.2), np.float32(0.3), np.float16(0.7), 3, np.int64(7), 2 ** 60 + 2 ** 36 + 1,
          np.longdouble(1) / 3, 1e-40, 3.4028235e38, 2.0 ** -149]


def test_float_scales_against_reference():
    rng = np.random.default_rng(5)
    A_ = rng.integers(0, 0x7F, (2, 3)).astype(np.uint8)
    B_ = rng.integers(0, 0x7C, (3, 2)).astype(np.uint8)
    a, b = codes_array(A_, E4M3), codes_array(B_, E5M2)
    count = 0
    for i, sa in enumerate(SCALES):
        sb = SCALES[(i + 5) % len(SCALES)]
        ca, cb = f32_code(sa), f32_code(sb)
        exp, eflags = ref_gemm(A_, E4M3, B_, E5M2, None, F32, "nearest_even",
                               make_scale(lambda r, c: ca, lambda r, c: cb))
        with softfp8.collect_flags() as fl, np.errstate(all="ignore"):
            res = softfp8.scaled_mm(a, b, sa, sb)
        assert np.array_equal(raw(res), exp), (sa, sb)
        assert int(fl.flags) == eflags, (sa, sb)
        # the same rounding as scaling.quantize's given scale
        with np.errstate(over="ignore"):   # scale_inv of 2^-149 overflows binary32
            q = softfp8.scaling.quantize(np.ones(2, np.float32), softfp8.e4m3, scale=sa)
        assert int(np.float32(q.scale).view(np.uint32)) == ca, sa
        count += 1
    # per-row float64 scales are rounded the same way
    rows = np.array([[0.1], [1 / 3]])
    exp, eflags = ref_gemm(A_, E4M3, B_, E5M2, None, F32, "nearest_even",
                           make_scale(lambda r, c: f32_code(float(rows[r, 0])), None))
    assert np.array_equal(raw(softfp8.scaled_mm(a, b, rows, 1.0)), exp)
    assert count == len(SCALES)


@pytest.mark.parametrize("bad,shown", [(1e-46, "1e-46"), (3.5e38, "3.5e+38"), (-0.5, "-0.5"), (0, "got 0"),
                                       (float("nan"), "nan"), (10 ** 39, "1" + "0" * 39),
                                       (np.array([[1.0], [-3.0]]), "-3.0")])
def test_bad_scales(bad, shown):
    a = np.zeros((2, 3), E4)
    b = np.zeros((3, 2), E5)
    with pytest.raises(ValueError, match="scale_a") as info:
        softfp8.scaled_mm(a, b, bad, 1.0)
    assert shown in str(info.value)
    with pytest.raises(TypeError, match="scale_b"):
        softfp8.scaled_mm(a, b, 1.0, "2")
    with pytest.raises(TypeError, match="scale_b"):
        softfp8.scaled_mm(a, b, 1.0, True)


def test_default_out_dtype():
    """The out_dtype default: the format the model's sum ends in when it is wider than the
    operands' format, else the operands' (docs/training.md)."""
    rng = np.random.default_rng(9)
    a = (rng.standard_normal((3, 5)) * 20).astype(E4)
    b = (rng.standard_normal((5, 2)) * 20).astype(E4)
    cases = [(A(), np.dtype(np.float32)), (A(accumulator="float16"), np.dtype(np.float16)),
             (A(accumulator="bfloat16"), BF), (A(accumulator=softfp8.e4m3), E4),
             (A(accumulator=softfp8.e5m2), E4),                       # not wider: the operands'
             (A(accumulator="float16", promote_every=2), np.dtype(np.float32)),
             (A(accumulator="e4m3", promote_every=2, promoted="float16"), np.dtype(np.float16)),
             (A(order="kahan"), np.dtype(np.float32)), (A(accumulator="float16", order="pairwise"), np.dtype(np.float16)),
             (None, E4), (A.profile("h100"), np.dtype(np.float32))]
    for acc, dt in cases:
        with np.errstate(all="ignore"):
            r = softfp8.matmul(a, b, accumulation=acc)
            same = softfp8.matmul(a, b, accumulation=acc, out_dtype=dt)
        assert r.dtype == dt, (acc, r.dtype)
        assert np.array_equal(raw(r), raw(same)), acc
    # an addend of the default type, and mixed operands (float32 as before)
    r = softfp8.matmul(a, b, c=np.ones(2, np.float32), accumulation=A())
    assert r.dtype == np.float32
    assert softfp8.matmul(a, b.astype(E5), accumulation=A(accumulator="float16")).dtype == np.float32
    h = np.ones((2, 2), np.float16)
    assert softfp8.matmul(h, h, accumulation=A(order="pairwise")).dtype == np.float32
    assert softfp8.matmul(h, h, accumulation=A(accumulator="float16", order="pairwise")).dtype == np.float16
