"""softfp8.ieee754 (issue 25): character conversions (IEEE 754-2019 5.4.2, 5.4.3,
5.12), the 22 comparison predicates (5.6.1, Tables 5.1-5.3), conformance
predicates and radix (5.7.1, 5.7.2), flag subsets (5.7.4) and dynamic modes
(9.3), against exact Fractions rounded by tests/models/rational.py."""
from fractions import Fraction
import decimal

import numpy as np
import pytest

import softfp8
from softfp8 import ieee754

from ..models import ieee754 as ref
from ..models import rational as R

FMTS = [R.preset(n) for n in ("e4m3", "e5m2", "e4m3fnuz", "float16", "bfloat16")] + [R.cfloat8_152(9)]


def _strings(fmt, seed):
    """decimal strings: every value of the format printed exactly, midpoints of
    neighbours, random decimals of 1..25 digits at many scales."""
    rng = np.random.default_rng(seed)
    cx = ref.Codes(fmt)
    vals = sorted({v for v in cx.value if v is not None})
    out = [str(decimal.Decimal(v.numerator) / decimal.Decimal(v.denominator)) for v in vals[::max(1, len(vals) // 80)]]
    out += [str(decimal.Decimal((a + b).numerator) / decimal.Decimal((a + b).denominator * 2))
            for a, b in zip(vals[:-1:max(1, len(vals) // 60)], vals[1::max(1, len(vals) // 60)])]
    for _ in range(80):
        digits = "".join(rng.choice(list("0123456789"), rng.integers(1, 26)))
        out.append(("-" if rng.random() < 0.5 else "") + digits[:1] + "." + digits[1:] + "e%d" % rng.integers(-50, 50))
    return out


@pytest.mark.parametrize("mode", R.MODES)
def test_decimal_strings(mode):
    n, failures = 0, []
    with decimal.localcontext() as ctx:
        ctx.prec = 400
        for k, fmt in enumerate(FMTS):
            sf = R.to_softfp8(softfp8, fmt)
            for text in _strings(fmt, k):
                v = Fraction(decimal.Decimal(text))
                want = R.round_pack(fmt, 1 if text.startswith("-") else 0, abs(v), mode)
                got = ieee754.from_decimal_string(text, sf, rounding=mode)
                if got != tuple(int(x) for x in want):
                    failures.append("%s %s %s: got %s, expected %s" % (fmt.name, mode, text, got, want))
                n += 1
                # convertToDecimalCharacter: exact, and correctly rounded to 3 digits
                code = got[0]
                if not R.is_nan(fmt, code):
                    d = R.decode(fmt, code)
                    if d.kind in ("finite", "zero"):
                        exact = ieee754.to_decimal_string(sf, code)
                        assert Fraction(decimal.Decimal(exact)) == d.value, (fmt.name, code, exact)
                        three = ieee754.to_decimal_string(sf, code, 3, rounding="nearest_even")
                        ctx2 = decimal.Context(prec=3, rounding=decimal.ROUND_HALF_EVEN)
                        dv = decimal.Decimal(d.value.numerator) / decimal.Decimal(d.value.denominator)
                        assert decimal.Decimal(three) == ctx2.plus(dv), (code, three)
    assert n == sum(len(_strings(f, k)) for k, f in enumerate(FMTS))
    assert not failures, "\n".join(failures[:20])


def test_hex_strings():
    f16 = softfp8.float16
    for code in range(0, 0x7C00, 7):
        h = ieee754.to_hex_string(f16, code)
        assert float.fromhex(h) == float(np.uint16(code).view(np.float16))
        assert ieee754.from_hex_string(h, f16) == (code, 0)
    assert ieee754.from_hex_string("0x1.004p0", f16, rounding="nearest_even") == (0x3C01, 0)
    assert ieee754.from_hex_string("0x1.002p0", f16, rounding="nearest_even") == (0x3C00, R.INEXACT)
    assert ieee754.from_hex_string("0x1.002p0", f16, rounding="upward") == (0x3C01, R.INEXACT)
    assert ieee754.to_hex_string(f16, 0xFC00) == "-inf"
    with pytest.raises(ValueError, match="not a hexadecimal"):
        ieee754.from_hex_string("1.5", f16)
    with pytest.raises(ValueError, match="not a number"):
        ieee754.from_decimal_string("1.2.3", f16)


def test_comparison_predicates():
    """Every one of the 22 predicates on every pair of e5m2 codes, from the
    relation of exact values (Tables 5.1-5.3): invalid for a signalling NaN
    operand, and for any NaN operand of a signaling predicate."""
    fmt = R.preset("e5m2")
    cx = ref.Codes(fmt)
    c = np.arange(256, dtype=np.uint8)
    a, b = np.repeat(c, 256), np.tile(c, 256)
    unordered = cx.nan[a] | cx.nan[b]
    rel = np.where(unordered, 2, np.sign(cx.rank[a] - cx.rank[b]))
    table = {"Equal": {0}, "NotEqual": {-1, 1, 2}, "Greater": {1}, "GreaterEqual": {0, 1}, "Less": {-1},
             "LessEqual": {-1, 0}, "Unordered": {2}, "NotGreater": {-1, 0, 2}, "LessUnordered": {-1, 2},
             "NotLess": {0, 1, 2}, "GreaterUnordered": {1, 2}, "Ordered": {-1, 0, 1}}
    n = 0
    for name in ieee754.COMPARISONS:
        signaling = name.startswith("compareSignaling")
        want = np.isin(rel, sorted(table[name[len("compareSignaling" if signaling else "compareQuiet"):]]))
        got, fl = ieee754.compare(name, softfp8.e5m2, a, b)
        assert np.array_equal(got, want), name
        inv = (cx.snan[a] | cx.snan[b]) | (unordered if signaling else False)
        assert np.array_equal((fl & R.INVALID) != 0, inv), name
        n += 1
    assert n == 22
    with pytest.raises(ValueError, match="unknown comparison predicate 'compareLess'"):
        ieee754.compare("compareLess", softfp8.e5m2, a, b)


def test_predicates_and_modes():
    assert (ieee754.is754version1985(), ieee754.is754version2008(), ieee754.is754version2019()) == (
        False, False, True)
    assert ieee754.radix(softfp8.e4m3) == 2
    saved = ieee754.save_modes()
    try:
        ieee754.set_binary_rounding_direction("upward")
        assert ieee754.get_binary_rounding_direction() == "upward"
        x = np.array([0x3C01], np.uint16).view(softfp8.float16.dtype)
        up = (x * x).view(np.uint16)[0]
        ieee754.default_modes()
        assert softfp8.get_rounding() == "nearest_even"
        assert (x * x).view(np.uint16)[0] == up - 1
    finally:
        ieee754.restore_modes(saved)
    assert softfp8.get_rounding() == "nearest_even"


def test_flags_operations():
    F = softfp8.Flags
    with softfp8.collect_flags():
        softfp8.clear_flags()
        ieee754.raise_flags(F.INEXACT | F.OVERFLOW)
        assert ieee754.test_flags(F.OVERFLOW) and not ieee754.test_flags(F.INVALID)
        saved = ieee754.save_all_flags()
        ieee754.lower_flags(F.OVERFLOW)
        assert softfp8.get_flags() == F.INEXACT
        assert ieee754.test_saved_flags(saved, F.OVERFLOW)
        ieee754.restore_flags(saved, F.OVERFLOW)
        assert softfp8.get_flags() == F.INEXACT | F.OVERFLOW
        ieee754.restore_flags(F(0), F.INEXACT | F.OVERFLOW)
        assert softfp8.get_flags() == F(0)
