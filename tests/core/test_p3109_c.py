"""The P3109 projection in C (core_p3109.c: sfp8_p3109_apply, run by
softfp8.p3109.apply) against the projection written in NumPy over the core's rows
(tests/models/p3109_rows.py, the former Python implementation, which never calls
the C projection), over every 8-bit P3109 format: k = 8, every precision p (1..7
signed, 1..8 unsigned), the finite and the extended domain -- 30 formats.

* test_unary_every_code: every code x every unary operation x the 6 deterministic
  rounding modes x the 3 saturation modes;
* test_binary_every_pair: every code pair of every binary operation, likewise;
* test_ternary_sampled: 4096 random triples of each ternary operation, likewise.
These three are proofs (tests/conftest.py PROOFS, CI's .ci/proofs step); the README's
pass keeps test_unary_required_formats (the report's F8 formats, every code) and
test_binary_sampled (256 random pairs per format).
* test_stochastic: StochasticA / StochasticB words through both.
The reference's agreement with the report itself is tests/core/test_p3109_ops.py
(Fractions and MPFR, written from the report).
"""
import numpy as np
import pytest

from softfp8 import bits, p3109

from ..models.p3109_rows import ROWS, apply_ref

FORMATS = [(p, s, d) for s in (True, False) for p in range(1, 8 + (not s)) for d in ("finite", "extended")]
MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")
SATS = p3109.SATURATION_MODES
ARITY = {name: bits.OPERATIONS[row].arity for name, row in ROWS.items()}
UNARY = [o for o, a in ARITY.items() if a == 1]
BINARY = [o for o, a in ARITY.items() if a == 2]
TERNARY = [o for o, a in ARITY.items() if a == 3]


def test_the_table_is_the_reports_list():
    assert p3109.OPERATIONS == ROWS
    assert len(FORMATS) == 30 and (len(UNARY), len(BINARY), len(TERNARY)) == (31, 18, 3)


def _sweep(fmt, ops, operands):
    """compare every op on the operand arrays in every mode x saturation: cases."""
    n = 0
    arrs = [np.asarray(a, dtype=fmt.storage) for a in operands]
    for op in ops:
        for mode in MODES:
            for sat in SATS:
                got = p3109.apply(op, *(a.view(fmt.dtype) for a in arrs), rounding=mode,
                                  saturation=sat).view(fmt.storage)
                want = apply_ref(op, fmt, arrs, mode, sat)
                bad = np.flatnonzero(got != want)
                assert bad.size == 0, (fmt.name, op, mode, sat, [int(a[bad[0]]) for a in arrs],
                                       int(got[bad[0]]), int(want[bad[0]]))
                n += got.size
    return n


# the README's pass: the report's required 8-bit formats (4.5, F8: Binary8p4se, Binary8p3se)
# and their finite twins, every code; the proofs step: all 30 formats
REQUIRED = [(p, True, d) for p in (3, 4) for d in ("finite", "extended")]


@pytest.mark.parametrize("p,signed,domain", REQUIRED)
def test_unary_required_formats(p, signed, domain):
    test_unary_every_code(p, signed, domain)


@pytest.mark.parametrize("p,signed,domain", FORMATS)
def test_unary_every_code(p, signed, domain):
    fmt = p3109.format(8, p, signed=signed, domain=domain)
    assert _sweep(fmt, UNARY, [np.arange(256)]) == 31 * 6 * 3 * 256


@pytest.mark.parametrize("p,signed,domain", FORMATS)
def test_binary_every_pair(p, signed, domain):
    fmt = p3109.format(8, p, signed=signed, domain=domain)
    a, b = np.divmod(np.arange(65536), 256)
    assert _sweep(fmt, BINARY, [a, b]) == 18 * 6 * 3 * 65536


@pytest.mark.parametrize("p,signed,domain", FORMATS)
def test_binary_sampled(p, signed, domain):
    fmt = p3109.format(8, p, signed=signed, domain=domain)
    rng = np.random.default_rng(p * 4 + 2 * signed + (domain == "finite"))
    a, b = rng.integers(0, 256, (2, 256))
    assert _sweep(fmt, BINARY, [a, b]) == 18 * 6 * 3 * 256


@pytest.mark.parametrize("p,signed,domain", FORMATS)
def test_ternary_sampled(p, signed, domain):
    fmt = p3109.format(8, p, signed=signed, domain=domain)
    rng = np.random.default_rng(100 + p * 4 + 2 * signed + (domain == "finite"))
    assert _sweep(fmt, TERNARY, rng.integers(0, 256, (3, 4096))) == 3 * 6 * 3 * 4096


@pytest.mark.parametrize("variant", ["A", "B"])
def test_stochastic(variant):
    n = 0
    rng = np.random.default_rng(7)
    for p, signed, domain in FORMATS[::3]:
        fmt = p3109.format(8, p, signed=signed, domain=domain)
        a, b = rng.integers(0, 256, (2, 512)).astype(fmt.storage)
        r = rng.integers(0, 1 << 5, 512)
        words = (r if variant == "A" else 2 * r + 1).astype(np.uint32)
        nb = 5 if variant == "A" else 6
        for op in ("Add", "Divide", "Exp", "Sqrt"):
            ops = (a, b)[:ARITY[op]]
            for sat in SATS:
                got = p3109.apply(op, *(x.view(fmt.dtype) for x in ops), rounding="Stochastic" + variant,
                                  saturation=sat, sr_bits=5, random_bits=r).view(fmt.storage)
                want = apply_ref(op, fmt, ops, "stochastic", sat, random_bits=words, sr_bits=nb)
                assert np.array_equal(got, want), (fmt.name, op, sat)
                n += got.size
    assert n == 10 * 4 * 3 * 512


def test_bad_calls():
    fmt = p3109.format(8, 3)
    x = np.zeros(3, fmt.storage).view(fmt.dtype)
    with pytest.raises(ValueError, match="saturation"):
        p3109.apply("Add", x, x, saturation="SatMaybe")
    with pytest.raises(ValueError, match="unknown P3109 operation 'Ad'"):
        p3109.apply("Ad", x, x)
    with pytest.raises(TypeError, match="takes 2 operand"):
        p3109.apply("Add", x)
