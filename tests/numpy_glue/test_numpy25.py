"""What NumPy 2.5 opens to DType-API dtypes (issue 24), on NumPy 2.4 the errors it gives.

* np.dot / ndarray.dot / np.inner / np.tensordot / np.vdot / np.correlate reach softfp8
  through the DType's dotfunc (softfp8/_core/npy/dot.c): every element is the exact
  dot product rounded once, in the context's mode, with its flags and np.errstate --
  checked against the exact reference model (tests/models/rational.py) and against
  ``@`` (codes and flags), also per thread and under stochastic rounding.
* DLPack through numpy.dtypes.register_dlpack_dtype: the (code, bits) DLPack's header
  gives each preset, read back from the exported capsule; the round trip keeps the
  dtype and every code, without a copy.

Descending sorts are in test_order.py, np.finfo on NumPy 2.5 in test_finfo_native.py.
"""
import ctypes
import threading
import warnings
from fractions import Fraction

import numpy as np
import pytest

import softfp8

from ..models import rational as ref

NP25 = np.lib.NumpyVersion(np.__version__) >= "2.5.0"
needs25 = pytest.mark.skipif(not NP25, reason="NumPy >= 2.5")
MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")

FORMATS = [softfp8.e4m3, softfp8.e5m2, softfp8.bfloat16, softfp8.cfloat8_143(bias=20),
           softfp8.format(exp_bits=5, man_bits=6, bias=12, subnormals="flush")]
IDS = ["e4m3", "e5m2", "bfloat16", "cf143_20", "custom12"]


def _ref_fmt(fmt):
    return ref.make_format(fmt.exp_bits, fmt.man_bits, fmt.bias, specials=fmt.specials,
                           subnormals=fmt.subnormals, signed=fmt.signed, saturate=fmt.saturate)


def _finite_codes(fmt, rng, shape, r):
    """Random codes of finite values (NaN and infinity excluded), zeros included."""
    n = int(np.prod(shape))
    out = []
    while len(out) < n:
        c = int(rng.integers(0, 1 << fmt.bits))
        if ref.decode(r, c).kind in ("finite", "zero"):
            out.append(c)
    return np.array(out, dtype=fmt.storage).reshape(shape)


def _ref_dot(r, xs, ys, mode, saturate):
    """The reference code of one exact dot product rounded once (None for an exact zero:
    its sign follows the operands' signs, compared with `@` instead)."""
    exact = sum((ref.decode(r, int(x)).value * ref.decode(r, int(y)).value
                 for x, y in zip(xs, ys)), Fraction(0))
    if exact == 0:
        return None
    return ref.round_pack(r, 0, exact, mode, saturate)[0]


def _codes(a):
    a = np.asarray(a)
    return a.view(a.dtype.format.storage)


def _dot_calls(a, b):
    """np.dot and the functions NumPy builds on the same dotfunc, each giving a @ b."""
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    return {
        "np.dot": np.dot(a, b),
        "ndarray.dot": a.dot(b),
        "np.inner": np.inner(a, np.ascontiguousarray(b.T)),
        "np.tensordot": np.tensordot(a, b, axes=1),
        "np.dot out=": np.dot(a, b, out=out),
        "np.dot strided": np.dot(np.asfortranarray(a), b[:, ::1]),
    }


@needs25
@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_dot_family_exact_against_reference(fmt):
    rng = np.random.default_rng(fmt.bits + fmt.bias)
    r = _ref_fmt(fmt)
    a = _finite_codes(fmt, rng, (4, 7), r).view(fmt.dtype)
    b = _finite_codes(fmt, rng, (7, 3), r).view(fmt.dtype)
    checked = 0
    for mode in MODES:
        for sat in (False, True):
            with softfp8.rounding(mode), softfp8.saturation(sat), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                with softfp8.collect_flags() as fl_mm:
                    mm = a @ b
                for name, got in _dot_calls(a, b).items():
                    with softfp8.collect_flags() as fl:
                        again = _dot_calls(a, b)[name]
                    assert got.dtype == a.dtype, name
                    assert np.array_equal(_codes(got), _codes(mm)), (name, mode, sat)
                    assert np.array_equal(_codes(again), _codes(mm))
                    assert fl.flags == fl_mm.flags, (name, mode, sat, fl.flags, fl_mm.flags)
                va = np.vdot(a[0], b[:, 0])
                vc = np.correlate(a[0], a[1], "valid")
            for i in range(4):
                for j in range(3):
                    want = _ref_dot(r, _codes(a)[i], _codes(b)[:, j], mode, sat)
                    if want is not None:
                        assert int(_codes(mm)[i, j]) == want, (mode, sat, i, j)
                        checked += 1
            want = _ref_dot(r, _codes(a)[0], _codes(b)[:, 0], mode, sat)
            if want is not None:
                assert int(_codes(va)) == want
            want = _ref_dot(r, _codes(a)[0], _codes(a)[1], mode, sat)
            if want is not None:
                assert int(_codes(vc)[0]) == want
    assert checked >= 6 * 2 * 10   # most of the 12 elements are non-zero sums


@needs25
def test_dot_specials_and_shapes_as_matmul():
    """NaN, infinities, signed zeros and codes above the width: np.dot gives @'s codes;
    1-D operands, empty inner dimension, batched np.dot."""
    fmt = softfp8.format(exp_bits=4, man_bits=2, bias=7)   # 7 bits in uint8 storage
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, (5, 6)).astype(np.uint8).view(fmt.dtype)
    b = rng.integers(0, 256, (6, 4)).astype(np.uint8).view(fmt.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.array_equal(_codes(np.dot(a, b)), _codes(a @ b))
        assert np.array_equal(_codes(np.dot(a[0], b)), _codes(a[0] @ b))
        assert np.array_equal(_codes(np.dot(a[0], b[:, 1])), _codes(a[0] @ b[:, 1]))
        assert np.array_equal(_codes(np.dot(a[:, :0], b[:0, :])), np.zeros((5, 4), np.uint8))
        a3 = np.stack([a, a[::-1]])
        # np.dot of a 3-D and a 2-D array is a matmul over the last axes
        assert np.array_equal(_codes(np.dot(a3, b)), _codes(a3 @ b))


@needs25
def test_dot_stochastic_equals_matmul_and_threads():
    fmt = softfp8.e4m3
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 32)).astype(np.float32).astype(fmt.dtype)
    b = rng.standard_normal((32, 8)).astype(np.float32).astype(fmt.dtype)
    with softfp8.rounding("stochastic", seed=11):
        mm = a @ b
    with softfp8.rounding("stochastic", seed=11):
        d = np.dot(a, b)
    assert np.array_equal(_codes(d), _codes(mm))
    # each thread runs np.dot in its own context (the dotfunc's state is per thread)
    want = {}
    for mode in MODES:
        with softfp8.rounding(mode):
            want[mode] = _codes(a @ b).copy()
    got, errors = {}, []

    def work(mode):
        try:
            with softfp8.rounding(mode):
                for _ in range(20):
                    res = _codes(np.dot(a, b)).copy()
                    if not np.array_equal(res, want[mode]):
                        raise AssertionError(mode)
            got[mode] = res
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(m,)) for m in MODES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(got) == sorted(MODES)
    assert len({w.tobytes() for w in want.values()}) > 1   # the modes do differ here


@needs25
def test_dot_errstate_and_flags():
    a = np.full((2, 3), 300.0, np.float32).astype(softfp8.e4m3.dtype)
    with softfp8.collect_flags() as fl, np.errstate(over="ignore"):
        r = np.dot(a, a.T)
    assert fl.overflow and np.isnan(r.astype(np.float64)).all()   # E4M3: overflow is NaN
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow encountered in dot"):
        np.dot(a, a.T)
    with pytest.warns(RuntimeWarning, match="overflow encountered in dot"):
        np.dot(a, a.T)


@pytest.mark.skipif(NP25, reason="NumPy 2.4 refuses DType-API dtypes in np.dot")
def test_dot_family_refused_on_numpy24():
    a = np.ones((2, 2), softfp8.e4m3.dtype)
    for fn in (lambda: np.dot(a, a), lambda: a.dot(a), lambda: np.inner(a, a), lambda: np.vdot(a, a),
               lambda: np.tensordot(a, a, 1)):
        with pytest.raises(TypeError, match="only supports native NumPy dtypes"):
            fn()


# --------------------------------------------------------------------------
# DLPack
# --------------------------------------------------------------------------

# (code, bits) of DLPack's dlpack.h (DLPack 1.1 DLDataTypeCode), written here from the header
DLPACK_EXPECTED = {"e4m3": (10, 8), "e5m2": (12, 8), "e4m3fnuz": (11, 8), "e5m2fnuz": (13, 8),
                   "float8_e4m3": (8, 8), "float8_e3m4": (7, 8), "float8_e4m3b11fnuz": (9, 8),
                   "float8_e8m0fnu": (14, 8), "bfloat16": (4, 16), "float16": (2, 16)}


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType)]


def _exported_dtype(arr):
    """(code, bits, lanes) of the DLTensor in arr.__dlpack__()'s (unversioned) capsule."""
    cap = arr.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    t = _DLTensor.from_address(get(cap, b"dltensor"))
    return t.dtype.code, t.dtype.bits, t.dtype.lanes


@needs25
@pytest.mark.parametrize("name", sorted(DLPACK_EXPECTED))
def test_dlpack_export_and_round_trip(name):
    fmt = softfp8.presets()[name]
    codes = np.arange(1 << fmt.bits, dtype=np.uint32).astype(fmt.storage)
    a = codes.view(fmt.dtype).reshape(-1, 4 if fmt.bits <= 8 else 256)
    assert _exported_dtype(a) == (*DLPACK_EXPECTED[name], 1)
    b = np.from_dlpack(a)
    assert np.shares_memory(a, b)
    # NumPy's own float16 is what kDLFloat bits 16 imports as (its built-ins win)
    assert b.dtype == (np.dtype(np.float16) if name == "float16" else a.dtype)
    assert np.array_equal(b.view(fmt.storage), a.view(fmt.storage))
    assert np.from_dlpack(a[:, ::-1]).strides == a[:, ::-1].strides


@needs25
def test_dlpack_formats_without_a_code_refused():
    for fmt in (softfp8.cfloat8_143(bias=3), softfp8.uhp, softfp8.float4_e2m1fn,
                softfp8.format(exp_bits=4, man_bits=2, bias=7)):
        with pytest.raises(BufferError, match="DLPack only supports"):
            np.from_dlpack(np.zeros(3, fmt.dtype))


@pytest.mark.skipif(NP25, reason="NumPy 2.4 has no register_dlpack_dtype")
def test_dlpack_refused_on_numpy24():
    with pytest.raises(BufferError, match="DLPack only supports"):
        np.from_dlpack(np.zeros(3, softfp8.e4m3.dtype))
