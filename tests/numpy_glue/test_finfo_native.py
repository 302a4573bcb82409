"""np.finfo on every softfp8 format through the DType's get_constant slot: every
preset, all 64 biases of each Tesla family (both subnormal conventions), custom
formats and the 120 IEEE P3109 formats of 3..8 bits, against the exact values of the
independent reference models; on NumPy 2.4 and on NumPy >= 2.5.1, which requires every
constant (softfp8 then fills what the format cannot hold, softfp8/_dtypes.py)."""
import math
from fractions import Fraction

import numpy as np
import pytest

import softfp8

from ..models import rational as ref

CUSTOM = [  # (softfp8.format kwargs, the same format in the reference model)
    (dict(exp_bits=4, man_bits=3, bias=7), ref.make_format(4, 3, 7)),
    (dict(exp_bits=5, man_bits=4, bias=3), ref.make_format(5, 4, 3)),
    (dict(exp_bits=3, man_bits=2, bias=1, specials="fn"), ref.make_format(3, 2, 1, "fn")),
    (dict(exp_bits=4, man_bits=3, bias=7, subnormals="flush"), ref.make_format(4, 3, 7, "ieee", "flush")),
    (dict(exp_bits=6, man_bits=9, bias=40, signed=False), ref.make_format(6, 9, 40, signed=False)),
]


def cases():
    out = [(getattr(softfp8, n), ref.preset(n)) for n in ref.PRESET_TABLE]
    for fam in ref.FAMILY_TABLE:
        for sub in ("tesla", "ieee"):
            for b in range(64):
                out.append((getattr(softfp8, fam)(bias=b, subnormals=sub), ref.family(fam, b, sub)))
    out += [(softfp8.format(**kw), r) for kw, r in CUSTOM]
    return out


CASES = cases()


def test_case_count():
    # every preset of softfp8's registry and every Tesla family is covered
    from softfp8 import _formats
    assert set(_formats.PRESETS) == set(ref.PRESET_TABLE)
    assert set(_formats.FAMILIES) == set(ref.FAMILY_TABLE)
    assert len(CASES) == len(ref.PRESET_TABLE) + 3 * 2 * 64 + len(CUSTOM) == 407


def _holds_power_of_two(r, k):
    """2**k is a value of the reference format r (normal range, or a subnormal m * 2**q
    with 0 < m < 2**man_bits, q the subnormal quantum of r's convention)."""
    v = Fraction(2) ** k
    if r.min_normal <= v <= r.max_value:
        return True
    if r.subnormals == "flush" or v >= r.min_normal:
        return False
    q = r.qmin - 1 if r.subnormals == "tesla" else r.qmin
    return q <= k and k - q < r.man_bits


def _is_format_scalar(x, d):
    return isinstance(x, np.generic) and np.asarray(x).dtype == d


def test_np_finfo_every_format():
    checked = 0
    for fmt, r in CASES:
        d = fmt.dtype
        fi = np.finfo(d)
        assert fi.dtype == d and fi.bits == (8 if r.bits <= 8 else 16)
        vmax = r.max_value
        expect = {
            "max": vmax,
            # unsigned: 0, or the smallest value where there is no zero (E8M0)
            "min": -vmax if r.signed else r.min_normal if r.subnormals == "nozero" else Fraction(0),
            "smallest_normal": r.min_normal,
            "tiny": r.min_normal,
            "smallest_subnormal": r.min_subnormal,
        }
        for name, value in expect.items():
            got = getattr(fi, name)
            assert _is_format_scalar(got, d), (fmt, name, type(got))
            assert Fraction(float(got)) == value, (fmt, name, got, value)
        eps, epsneg = Fraction(1, 2 ** r.man_bits), Fraction(1, 2 ** (r.man_bits + 1))
        assert Fraction(float(fi.eps)) == eps and Fraction(float(fi.epsneg)) == epsneg, fmt
        # eps is a scalar of the format exactly when the format holds 2**-man_bits
        holds = _holds_power_of_two(r, -r.man_bits)
        assert _is_format_scalar(fi.eps, d) == holds, (fmt, type(fi.eps))
        if not holds:
            assert type(fi.eps) is np.float64
        if not (holds and _holds_power_of_two(r, -r.man_bits - 1) and _holds_power_of_two(r, 1)):
            assert type(fi.epsneg) is np.float64
        assert fi.nmant == r.man_bits
        assert fi.minexp == r.emin
        # maxexp: the smallest power of two above every finite value
        assert Fraction(2) ** (fi.maxexp - 1) <= vmax < Fraction(2) ** fi.maxexp, fmt
        assert fi.precision == math.floor(r.man_bits * math.log10(2))
        assert fi.machep == -r.man_bits and fi.negep == -r.man_bits - 1
        # the exponent field's width (ml_dtypes' finfo_test asserts nmant + nexp + sign == bits)
        assert fi.nexp == fi.iexp == r.exp_bits, (fmt, fi.nexp)
        # resolution: 10**-precision rounded into the format, or an exact float64 where that
        # rounding overflows or gives zero
        code, rfl = ref.round_pack(r, 0, Fraction(1, 10 ** fi.precision))
        rd = ref.decode(r, code)
        if rfl & ref.OVERFLOW or rd.kind != "finite":
            assert type(fi.resolution) is np.float64 and fi.resolution == 10.0 ** -fi.precision, fmt
        else:
            assert _is_format_scalar(fi.resolution, d)
            assert Fraction(float(fi.resolution)) == rd.value, fmt
        str(fi)                                       # NumPy's text, with the format's `**`
        assert np.finfo(d) is fi                      # cached like NumPy's own
        checked += 1
    assert checked == 407


def test_np_finfo_scalar_type_of_preset():
    assert np.finfo(softfp8.e4m3.dtype.type) is np.finfo(softfp8.e4m3.dtype)
    assert float(np.finfo(softfp8.e5m2.dtype.type).max) == 57344.0


@pytest.mark.parametrize("fmt", [softfp8.cfloat8_143(bias=10), softfp8.shp(bias=40),
                                 softfp8.format(exp_bits=4, man_bits=3, bias=7, specials="fn")],
                         ids=["cf143_10", "shp40", "fn_custom"])
def test_nan_to_num_parametric(fmt):
    """np.nan_to_num reads np.finfo(dtype).max / min: nan -> 0, +-inf -> +-max."""
    d = fmt.dtype
    src = [math.nan, math.inf, -math.inf, 1.5, -2.0]
    a = np.array(src, dtype=d)
    out = np.nan_to_num(a)
    assert out.dtype == d
    vmax = float(np.finfo(d).max)
    vals = [float(x) for x in a]
    exp = [0.0 if math.isnan(v) else (vmax if v == math.inf else -vmax if v == -math.inf else v)
           for v in vals]
    assert [float(x) for x in out] == exp


def test_np_finfo_and_nan_to_num_p3109():
    """Every P3109 format of 3..8 bits (tests/core/test_p3109.py's reference, written from
    the report): np.finfo's extremes, eps and exponent limits, and np.nan_to_num."""
    from ..core.test_p3109 import ALL, ref_format, sf_format

    checked = 0
    for k, p, s, e in ALL:
        fmt, r = sf_format(k, p, s, e), ref_format(k, p, s, e)
        fi = np.finfo(fmt.dtype)
        fin = sorted(v for v in r.values if isinstance(v, Fraction))
        pos = [v for v in fin if v > 0]
        assert Fraction(float(fi.max)) == fin[-1] and Fraction(float(fi.min)) == fin[0], fmt
        assert Fraction(float(fi.smallest_subnormal)) == pos[0], fmt
        assert Fraction(float(fi.eps)) == Fraction(1, 2 ** (p - 1)) and fi.nmant == p - 1, fmt
        assert Fraction(2) ** (fi.maxexp - 1) <= fin[-1] < Fraction(2) ** fi.maxexp, fmt
        assert fi.nexp == fmt.exp_bits and fi.nmant + fi.nexp + s == k, fmt
        with np.errstate(all="ignore"):
            a = np.array([math.nan, math.inf, -math.inf, 1.0], dtype=np.float64).astype(fmt.dtype)
            out = np.nan_to_num(a)
        assert out.dtype == fmt.dtype
        # NaN -> 0, +inf -> max, -inf -> min (what the cast made of them: infinities in the
        # extended domain, NaN in the finite one)
        want = [0.0 if math.isnan(v) else float(fin[-1]) if v == math.inf else
                float(fin[0]) if v == -math.inf else v for v in a.astype(np.float64).tolist()]
        assert [float(x) for x in out] == want, fmt
        assert e == (math.inf in a.astype(np.float64).tolist())
        checked += 1
    assert checked == len(ALL) == 120
