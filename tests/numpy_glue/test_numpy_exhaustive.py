"""Exhaustive check of the NumPy ufunc loops against softfp8.bits (the golden model).

For every 8-bit preset (and Tesla CFloat8 at biases 0, 7, 31, 63), every binary
ufunc over all 65,536 operand pairs, under every deterministic rounding mode, must
give exactly the codes of the matching ``softfp8.bits`` function (compared through
``.view(np.uint8)``), and the flags collected around the ufunc call must equal the
OR of the golden model's per-element flags.  Flags are also checked per group of
elements that share one expected flag byte, so one wrong flag class cannot hide
behind another element that happens to raise it.
"""

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")

# every 8-bit preset of the registry
FORMATS = [f for f in softfp8.presets().values() if f.bits == 8]
FORMATS += [fam(bias=b) for fam in (softfp8.cfloat8_143, softfp8.cfloat8_152)
            for b in (0, 7, 31, 63)]
IDS = [f.name for f in FORMATS]

A = np.repeat(np.arange(256, dtype=np.uint8), 256)
B = np.tile(np.arange(256, dtype=np.uint8), 256)

ARITH = {"add": sfb.add, "subtract": sfb.sub, "multiply": sfb.mul, "true_divide": sfb.div}
SELECT = {"maximum": sfb.max, "minimum": sfb.min, "fmax": sfb.maxnum, "fmin": sfb.minnum}
RELATIONS = {
    "equal": lambda r: r == 0,
    "not_equal": lambda r: r != 0,
    "less": lambda r: r == -1,
    "less_equal": lambda r: (r == -1) | (r == 0),
    "greater": lambda r: r == 1,
    "greater_equal": lambda r: (r == 1) | (r == 0),
}

COUNTS = {"pairs": 0, "calls": 0}


def test_case_space():
    assert len(FORMATS) == 18
    assert len(set(FORMATS)) == 18
    assert A.size == B.size == 65536
    # every ordered pair exactly once
    assert np.unique(A.astype(np.uint32) * 256 + B).size == 65536
    assert len(MODES) == 6


def _run(ufunc, fmt, a, b):
    """Apply a NumPy ufunc to code arrays viewed as fmt; return (result, flags)."""
    x = a.view(fmt.dtype)
    y = b.view(fmt.dtype)
    assert x.dtype == fmt.dtype
    with np.errstate(all="ignore"), softfp8.collect_flags() as fl:
        r = ufunc(x, y)
    return r, int(fl.flags)


def _check_flags(ufunc, fmt, expf, mode=None):
    """Per flag class: the elements expected to raise exactly F raise exactly F."""
    import contextlib
    groups = np.unique(expf)
    for g in groups:
        sel = np.nonzero(expf == g)[0]
        ctx = softfp8.rounding(mode) if mode else contextlib.nullcontext()
        with ctx:
            _, got = _run(ufunc, fmt, A[sel], B[sel])
        assert got == int(g), (ufunc.__name__, fmt.name, mode, int(g), got, sel.size)
    return groups.size


def _first_bad(fmt, got, exp):
    bad = np.nonzero(got != exp)[0]
    if bad.size == 0:
        return ""
    i = bad[0]
    return (f"{bad.size} mismatches; first: {fmt.name} codes 0x{A[i]:02x}, 0x{B[i]:02x}: "
            f"got 0x{int(got[i]):02x}, expected 0x{int(exp[i]):02x}")


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
@pytest.mark.parametrize("name", list(ARITH))
def test_arithmetic_all_pairs_all_modes(fmt, name):
    ufunc = getattr(np, name)
    cases = 0
    for mode in MODES:
        exp, expf = ARITH[name](fmt, A, B, rounding=mode)
        with softfp8.rounding(mode):
            assert softfp8.get_rounding() == mode
            r, flags = _run(ufunc, fmt, A, B)
        assert r.dtype == fmt.dtype
        assert r.shape == (65536,)
        got = r.view(np.uint8)
        assert np.array_equal(got, exp), f"{name} {mode}: " + _first_bad(fmt, got, exp)
        assert flags == int(np.bitwise_or.reduce(expf)), (mode, flags)
        _check_flags(ufunc, fmt, expf, mode)
        cases += got.size
    assert cases == 6 * 65536


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
@pytest.mark.parametrize("name", list(SELECT))
def test_selection_all_pairs(fmt, name):
    ufunc = getattr(np, name)
    exp, expf = SELECT[name](fmt, A, B)
    cases = 0
    # selections never round: the result must not depend on the rounding mode
    for mode in MODES:
        with softfp8.rounding(mode):
            r, flags = _run(ufunc, fmt, A, B)
        assert r.dtype == fmt.dtype
        got = r.view(np.uint8)
        assert np.array_equal(got, exp), f"{name} {mode}: " + _first_bad(fmt, got, exp)
        assert flags == int(np.bitwise_or.reduce(expf))
        cases += got.size
    _check_flags(ufunc, fmt, expf)
    assert cases == 6 * 65536


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_comparisons_all_pairs(fmt):
    rel, expf = sfb.compare(fmt, A, B, signaling=False)
    assert set(np.unique(rel).tolist()) <= {-1, 0, 1, 2}
    cases = 0
    for name, pred in RELATIONS.items():
        ufunc = getattr(np, name)
        exp = pred(rel)
        for mode in ("nearest_even", "upward"):
            with softfp8.rounding(mode):
                r, flags = _run(ufunc, fmt, A, B)
            assert r.dtype == np.bool_
            assert np.array_equal(r, exp), (name, mode, int(np.count_nonzero(r != exp)))
            assert flags == int(np.bitwise_or.reduce(expf)), (name, flags)
            cases += r.size
        _check_flags(ufunc, fmt, expf)
    assert cases == 6 * 2 * 65536


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_golden_model_sanity(fmt):
    """Guards against a vacuous comparison: the golden model's answers vary."""
    exp, expf = sfb.add(fmt, A, B)
    assert np.unique(exp).size > 100
    rel, _ = sfb.compare(fmt, A, B)
    assert 220 <= (rel == 0).sum() <= 258  # about every non-NaN code equals itself only
    assert (rel == -1).sum() == (rel == 1).sum() > 20000
    # flags actually differ between modes for some pairs
    up, _ = sfb.add(fmt, A, B, rounding="upward")
    down, _ = sfb.add(fmt, A, B, rounding="downward")
    assert np.count_nonzero(up != down) > 1000
