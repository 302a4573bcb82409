"""softfp8.testing (flag and code assertions) and the pytest plugin's fixture.

Expected flags and codes here are written by hand from the formats' definitions
(E4M3: bias 7, max 448 = 0x7e, NaN 0x7f/0xff; E5M2: bias 15, inf 0x7c, signalling
NaNs 0x7d and 0xfd, quiet 0x7e, 0x7f, 0xfe, 0xff).
"""
import re
from pathlib import Path

import numpy as np
import pytest

import softfp8
from softfp8 import Flags, testing
from softfp8.pytest_plugin import softfp8_isolated  # noqa: F401  (the fixture, also without the entry point)

REPO = Path(__file__).resolve().parents[2]
E4M3 = softfp8.e4m3
E5M2 = softfp8.e5m2


def _e4m3(codes):
    return np.array(codes, dtype=np.uint8).view(E4M3.dtype)


def _e5m2(codes):
    return np.array(codes, dtype=np.uint8).view(E5M2.dtype)


def _overflow():
    """448 * 2 in E4M3 with IEEE overflow: raises exactly overflow and inexact."""
    with softfp8.saturation(False), np.errstate(all="ignore"):
        return _e4m3([0x7e]) * _e4m3([0x40])


# --------------------------------------------------------------------------
# assert_flags / assert_no_flags
# --------------------------------------------------------------------------

@pytest.mark.parametrize("spec", [Flags.OVERFLOW | Flags.INEXACT, 0x05, ["overflow", "inexact"],
                                  ("OVERFLOW", Flags.INEXACT), {"inexact", 0x04}])
def test_assert_flags_exact_passes(spec):
    with testing.assert_flags(spec) as fl:
        _overflow()
    assert fl.flags == Flags.OVERFLOW | Flags.INEXACT


def test_assert_flags_subset_and_single_name():
    with testing.assert_flags("overflow", exact=False):
        _overflow()
    with testing.assert_flags([], exact=False):
        _overflow()
    with testing.assert_flags(0):
        _e4m3([0x38]) + _e4m3([0x38])          # 1 + 1 = 2: exact


def test_assert_flags_reports_missing_and_unexpected():
    with pytest.raises(AssertionError) as ei:
        with testing.assert_flags(["overflow", "invalid"]):
            _overflow()
    msg = str(ei.value)
    assert "expected exactly {overflow, invalid}" in msg
    assert "raised {inexact, overflow}" in msg
    assert "missing {invalid}" in msg
    assert "unexpected {inexact}" in msg
    with pytest.raises(AssertionError, match=re.escape("missing {divbyzero}, unexpected {none}")):
        with testing.assert_flags("divbyzero", exact=False):
            _overflow()
    with pytest.raises(AssertionError, match=re.escape("unexpected {inexact, overflow}")):
        with testing.assert_flags(0):
            _overflow()


def test_assert_flags_counts_only_the_block_and_keeps_flags_sticky():
    with softfp8.collect_flags() as outer:
        _overflow()                            # before the block: not counted
        with testing.assert_flags(0):
            _e4m3([0x38]) + _e4m3([0x38])
        with testing.assert_flags("invalid"):
            with np.errstate(all="ignore"):
                _e4m3([0x00]) / _e4m3([0x00])  # 0/0
    assert outer.flags == Flags.OVERFLOW | Flags.INEXACT | Flags.INVALID


def test_assert_flags_does_not_swallow_exceptions():
    with pytest.raises(KeyError, match="boom"):
        with testing.assert_flags("overflow"):
            raise KeyError("boom")
    with pytest.raises(ZeroDivisionError):
        with testing.assert_no_flags():
            1 / 0


@pytest.mark.parametrize("bad, exc, text", [
    ("overflw", ValueError, "'overflw'"), (0x40, ValueError, "64"), (-1, ValueError, "-1"),
    (True, TypeError, "True"), (1.5, TypeError, "1.5"), ([None], TypeError, "None"),
])
def test_assert_flags_rejects_bad_expected(bad, exc, text):
    with pytest.raises(exc, match=re.escape(text)):
        with testing.assert_flags(bad):
            pass


def test_assert_no_flags():
    with testing.assert_no_flags():
        _e4m3([0x38]) * _e4m3([0x38])
    with pytest.raises(AssertionError, match=re.escape("flags raised: {inexact, overflow}")):
        with testing.assert_no_flags():
            _overflow()
    with pytest.raises(AssertionError, match=re.escape("raised: {overflow}, expected none "
                                                       "(ignored: {inexact})")):
        with testing.assert_no_flags(ignore="inexact"):
            _overflow()
    with testing.assert_no_flags(ignore=Flags.OVERFLOW | Flags.INEXACT):
        _overflow()


# --------------------------------------------------------------------------
# assert_codes_equal
# --------------------------------------------------------------------------

def test_codes_equal_passes_on_equal_arrays():
    a = _e4m3([[0x00, 0x80], [0x38, 0x7e]])
    testing.assert_codes_equal(a, a.copy())
    testing.assert_codes_equal(a, np.array([[0, 128], [56, 126]]), fmt=E4M3)
    testing.assert_codes_equal(np.array([1, 2]), np.array([1, 2], dtype=np.uint8), fmt="e4m3")
    testing.assert_codes_equal(_e4m3([]), _e4m3([]))


def test_codes_equal_is_bitwise_zero_signs():
    # +0 and -0 are equal values but different codes
    with pytest.raises(AssertionError, match=re.escape("[0]: 0x00 (0.0) vs 0x80 (-0.0)")):
        testing.assert_codes_equal(_e4m3([0x00]), _e4m3([0x80]))


def test_codes_equal_nan_by_class_e4m3():
    a, b = _e4m3([0x7f, 0x38]), _e4m3([0xff, 0x38])     # E4M3's two NaN codes
    testing.assert_codes_equal(a, b)                   # nan="class"
    with pytest.raises(AssertionError, match=re.escape("[0]: 0x7f (qnan) vs 0xff (qnan)")):
        testing.assert_codes_equal(a, b, nan="bits")
    with pytest.raises(AssertionError, match=re.escape("[0]: 0x7f (qnan) vs 0x7e (448.0)")):
        testing.assert_codes_equal(a, _e4m3([0x7e, 0x38]))


def test_codes_equal_nan_by_class_e5m2():
    assert [E5M2.classify(c) for c in (0x7d, 0xfd, 0x7e, 0xff)] == ["snan", "snan", "qnan", "qnan"]
    testing.assert_codes_equal(_e5m2([0x7d, 0x7e]), _e5m2([0xfd, 0xff]))   # same classes
    with pytest.raises(AssertionError) as ei:
        testing.assert_codes_equal(_e5m2([0x7d, 0x7e, 0x7c]), _e5m2([0x7e, 0x7d, 0x7c]))
    msg = str(ei.value)
    assert "Mismatched elements: 2 / 3" in msg
    assert "[0]: 0x7d (snan) vs 0x7e (qnan)" in msg
    assert "[1]: 0x7e (qnan) vs 0x7d (snan)" in msg
    assert "[2]" not in msg


def test_codes_equal_report_lists_first_ten():
    a = np.arange(24, dtype=np.uint8).reshape(2, 12)
    b = a.copy()
    b[0, 3] ^= 1
    b[1, :] += 0x40                       # 12 more mismatches
    with pytest.raises(AssertionError) as ei:
        testing.assert_codes_equal(a.view(E4M3.dtype), b.view(E4M3.dtype), err_msg="after matmul")
    lines = str(ei.value).splitlines()
    assert lines[0] == "Codes not equal (e4m3, nan='class')"
    assert lines[1] == "after matmul"
    assert lines[2] == "Mismatched elements: 13 / 24 (54.2%)"
    assert lines[3].startswith("First 10 mismatches")
    shown = lines[4:]
    assert len(shown) == 10
    # 0x03 = 3 * 2^-9 (subnormal), 0x02 = 2^-8
    assert shown[0] == " [0, 3]: 0x03 (0.005859375) vs 0x02 (0.00390625)"
    assert shown[1] == " [1, 0]: 0x0c (0.0234375) vs 0x4c (6.0)"   # 1.5 * 2^-6 vs 1.5 * 2^2
    assert shown[-1].startswith(" [1, 8]: ")


def test_codes_equal_shape_and_format_mismatch():
    with pytest.raises(AssertionError, match=re.escape("shapes differ: actual (3,), expected (1, 3)")):
        testing.assert_codes_equal(_e4m3([1, 2, 3]), _e4m3([[1, 2, 3]]))
    with pytest.raises(AssertionError, match="e4m3 array, expected is a e5m2"):
        testing.assert_codes_equal(_e4m3([1]), _e5m2([1]))
    with pytest.raises(AssertionError, match="actual is a e5m2 array, expected e4m3"):
        testing.assert_codes_equal(_e5m2([1]), [1], fmt=E4M3)


def test_codes_equal_bad_arguments():
    with pytest.raises(TypeError, match="pass fmt="):
        testing.assert_codes_equal(np.array([1]), np.array([1]))
    with pytest.raises(ValueError, match="code 256 out of range for e4m3"):
        testing.assert_codes_equal(np.array([256]), np.array([1]), fmt=E4M3)
    with pytest.raises(TypeError, match="float64"):
        testing.assert_codes_equal(np.array([1.0]), np.array([1]), fmt=E4M3)
    with pytest.raises(ValueError, match="'value'"):
        testing.assert_codes_equal(_e4m3([1]), _e4m3([1]), nan="value")


def test_codes_equal_16_bit_format():
    bf = softfp8.bfloat16
    a = np.array([0x3f80, 0x7fc0, 0x7f81], dtype=np.uint16)    # 1.0, quiet NaN, signalling NaN
    testing.assert_codes_equal(a.view(bf.dtype), np.array([0x3f80, 0xffc1, 0xff82]), fmt=bf)
    with pytest.raises(AssertionError, match=re.escape("[2]: 0x7f81 (snan) vs 0x7fc1 (qnan)")):
        testing.assert_codes_equal(a.view(bf.dtype), np.array([0x3f80, 0x7fc0, 0x7fc1]), fmt=bf)


# --------------------------------------------------------------------------
# the pytest plugin
# --------------------------------------------------------------------------

def test_fixture_isolates_settings_and_flags(softfp8_isolated):
    assert softfp8.get_rounding() == "nearest_even"
    assert softfp8.get_saturation() is None
    assert softfp8.get_tininess() == "after"
    assert softfp8.get_flags() == Flags(0)
    assert softfp8_isolated.flags == Flags(0)
    _overflow()
    assert softfp8_isolated.flags == Flags.OVERFLOW | Flags.INEXACT
    softfp8_isolated.clear()
    assert softfp8.get_flags() == Flags(0)


def test_fixture_restores_the_enclosing_context():
    from softfp8.pytest_plugin import softfp8_isolated as fixture
    gen = fixture.__wrapped__() if hasattr(fixture, "__wrapped__") else None
    if gen is None:
        pytest.skip("this pytest hides the fixture function")
    with softfp8.rounding("upward"), softfp8.tininess("before"), softfp8.collect_flags() as outer:
        with np.errstate(all="ignore"):
            _e4m3([0x38]) / _e4m3([0x00])      # divbyzero outside the fixture
        iso = next(gen)
        assert softfp8.get_rounding() == "nearest_even"
        assert softfp8.get_tininess() == "after"
        assert softfp8.get_flags() == Flags(0)
        with softfp8.rounding("toward_zero"):
            _overflow()
        assert iso.flags == Flags.OVERFLOW | Flags.INEXACT
        with pytest.raises(StopIteration):
            next(gen)
        assert softfp8.get_rounding() == "upward"
        assert softfp8.get_tininess() == "before"
        assert softfp8.get_flags() & Flags.DIVBYZERO
    assert outer.flags == Flags.DIVBYZERO        # nothing leaked out of the isolated block


def test_entry_point_declared():
    tomllib = pytest.importorskip("tomllib")
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"softfp8": "softfp8.pytest_plugin"}


def test_assert_flags_checks_or_swallows_numpy_warnings():
    import warnings

    from softfp8.testing import assert_flags
    x = np.array([0xBC00, 0x3C00], dtype=np.uint16).view(softfp8.float16)
    zero = np.zeros(2, dtype=np.uint16).view(softfp8.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # any leak would raise
        with assert_flags("invalid", warnings="swallow"):
            np.sqrt(x)
        with assert_flags("invalid", warnings="check"):
            np.sqrt(x)
        with assert_flags({"divbyzero", "invalid"}, warnings="check"):
            np.divide(np.concatenate([x[1:], zero[:1]]), np.concatenate([zero[:1], zero[:1]]))
    with pytest.raises(AssertionError, match="RuntimeWarnings differ"):
        with assert_flags("invalid", exact=False, warnings="check"), np.errstate(invalid="ignore"):
            np.sqrt(x)                                      # flag raised, NumPy told not to warn
    with pytest.warns(RuntimeWarning, match="invalid"):
        with assert_flags("invalid"):                       # default: warnings pass through
            np.sqrt(x)
    with pytest.raises(ValueError, match="warnings must be one of"):
        with assert_flags("invalid", warnings="ignore"):
            pass
