"""Every floating-point ufunc of NumPy has a loop for every softfp8 format family.

The ufuncs are enumerated from the numpy namespace (aliases such as np.abs /
np.absolute and np.pow / np.power are one object and are counted once; distinct
objects such as np.degrees / np.rad2deg are separate ufuncs); a ufunc is
floating-point if one of its loops takes float16, float32 or float64 inputs.
Each one is called on arrays of every format below (every preset, Tesla
families at a bias, a custom format narrower than its storage) and must return
results of the format itself, bool, int32 (frexp's exponent) or float64
(float_power, which computes in float64 as NumPy does for float16).
"""
from __future__ import annotations

import numpy as np
import pytest

import softfp8
from softfp8 import _formats

# The correctly rounded elementary functions come from another branch of issue 9.
# Until it is merged they have no loop: these xfail strictly, so that the merge
# turns them into XPASS failures and this list is deleted then.
ELEMENTARY_PENDING = frozenset()  # every elementary function has its loops now

FORMATS = ([getattr(softfp8, name) for name in _formats.PRESETS]
           + [softfp8.cfloat8_143(bias=10), softfp8.cfloat8_152(bias=40),
              softfp8.shp(bias=20), softfp8.cfloat8_143(bias=3, subnormals="ieee"),
              softfp8.format(exp_bits=5, man_bits=4, bias=15),
              softfp8.format(exp_bits=3, man_bits=2, bias=1, specials="none", signed=False)])


def _float_ufuncs():
    seen = {}
    for name in sorted(dir(np)):
        obj = getattr(np, name)
        if isinstance(obj, np.ufunc) and id(obj) not in seen:
            seen[id(obj)] = obj
    return sorted((u for u in seen.values()
                   if any(set(t.split("->")[0]) & set("efd") for t in u.types)),
                  key=lambda u: u.__name__)


UFUNCS = _float_ufuncs()


def test_enumeration():
    names = [u.__name__ for u in UFUNCS]
    assert len(names) == len(set(names)) == 80  # NumPy 2.4
    assert ELEMENTARY_PENDING <= set(names)
    assert np.abs is np.absolute and np.pow is np.power and np.conj is np.conjugate
    assert np.degrees is not np.rad2deg and np.radians is not np.deg2rad


def _operands(uf, fmt):
    m = fmt.man_bits
    codes = np.array([1 << m, (1 << m) + 1, 2 << m], dtype=fmt.storage)  # small normals
    x = codes.view(fmt.dtype)
    args = [x] * uf.nin
    if uf.__name__ == "ldexp":
        args[1] = np.array([1, -1, 0])
    sig = uf.signature
    if sig == "(n?,k),(k,m?)->(n?,m?)":  # matmul
        args = [x.reshape(1, 3), x.reshape(3, 1)]
    elif sig == "(m,n),(n)->(m)":  # matvec
        args = [x.reshape(1, 3), x]
    elif sig == "(n),(n,m)->(m)":  # vecmat
        args = [x, x.reshape(3, 1)]
    return args


@pytest.mark.parametrize(
    "uf", [pytest.param(u, marks=pytest.mark.xfail(strict=True, reason="elementary branch"))
           if u.__name__ in ELEMENTARY_PENDING else u for u in UFUNCS],
    ids=[u.__name__ for u in UFUNCS])
def test_every_float_ufunc_has_a_loop_for_every_format(uf):
    n = 0
    for fmt in FORMATS:
        with np.errstate(all="ignore"):
            res = uf(*_operands(uf, fmt))
        res = res if isinstance(res, tuple) else (res,)
        assert len(res) == uf.nout
        for r in res:
            r = np.asarray(r)
            allowed = {fmt.dtype, np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.float64)}
            assert r.dtype in allowed, (uf.__name__, fmt.name, r.dtype)
            if uf.__name__ == "float_power":
                assert r.dtype == np.float64
            elif r.dtype == np.float64:
                pytest.fail(f"{uf.__name__} on {fmt.name} left the format for float64")
        n += 1
    assert n == len(FORMATS) == 24
