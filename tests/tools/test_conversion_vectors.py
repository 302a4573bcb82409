"""Conversion vectors (softfp8 gen/ver FMT convert --from / --to) against independent
references (docs/golden-model.md, "Conversion vectors"):

- TestFloat's own files (../shared/vectors/testfloat-f16/: f32_to_f16, f64_to_f16,
  f16_to_f32, f32_to_bf16, bf16_to_f32, five modes and round-to-odd, both tininess rules)
  read by ``ver --testfloat`` unfiltered: the testfloat_gen -> softfp8 ver direction;
- Berkeley SoftFloat through softfloatpy (a binding of SoftFloat 3e, PyPI) for the
  binary16 / binary32 / binary64 / bfloat16 and integer conversions softfloatpy has, line
  by line of ``gen``'s output, in its five modes and both tininess rules;
- tests/models/fraction_model.py (exact Fractions) for every pair of 8-bit formats, the
  16-bit formats into them, binary32 into them (the grid around every destination value),
  and formats to and from integers.
"""
from __future__ import annotations

import gzip
import io
import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import softfp8
from softfp8 import vectors
from tests.models import fraction_model as fm

VECTORS = Path(os.environ.get("SOFTFP8_VECTORS", Path(__file__).resolve().parents[3] / "shared" /
                              "vectors")) / "testfloat-f16"
TF_FUNCS = {"f32_to_f16": ("binary32", "float16"), "f64_to_f16": ("binary64", "float16"),
            "f16_to_f32": ("float16", "binary32"), "f32_to_bf16": ("binary32", "bfloat16"),
            "bf16_to_f32": ("bfloat16", "binary32")}
TF_MODES = {"near_even": "nearest_even", "minMag": "toward_zero", "min": "downward", "max": "upward",
            "near_maxMag": "nearest_away", "odd": "to_odd"}

EIGHT = ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "hfp8_143", "hfp8_152", "float8_e4m3", "float8_e3m4",
         "float8_e4m3b11fnuz", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e8m0fnu",
         "ue4m3", "cfloat8_143(bias=7)", "cfloat8_152(bias=15)"]


def _lines(data):
    return [ln.split() for ln in data.decode().splitlines()]


@pytest.mark.parametrize("func", sorted(TF_FUNCS))
def test_testfloat_files_read_by_ver_testfloat(func):
    if not VECTORS.is_dir():
        pytest.skip(f"TestFloat vectors not found at {VECTORS}")
    src, dst = TF_FUNCS[func]
    n = 0
    for mode, ours in TF_MODES.items():
        for tin in ("before", "after"):
            path = VECTORS / f"{func}_{mode}_{tin}.txt.gz"
            data = gzip.decompress(path.read_bytes())
            rep = vectors.verify_conversion(io.BytesIO(data), src, dst, rounding=ours, tininess=tin,
                                            testfloat=True)
            assert rep.lines == len(data.splitlines()) and rep.mismatches == 0, (path, rep.first[:3])
            n += rep.lines
    assert n >= 12 * 400


# ------------------------------------------------------------- SoftFloat ----

sf = pytest.importorskip("softfloatpy")
SF_MODES = {"nearest_even": "NEAR_EVEN", "toward_zero": "MIN_MAG", "downward": "MIN", "upward": "MAX",
            "nearest_away": "NEAR_MAX_MAG"}
_SF_TYPES = {"float16": (sf.Float16, 2), "bfloat16": (sf.BFloat16, 2), "binary32": (sf.Float32, 4),
             "binary64": (sf.Float64, 8)}
_SF_FUNCS = {("binary32", "float16"): sf.f32_to_f16, ("binary64", "float16"): sf.f64_to_f16,
             ("float16", "binary32"): sf.f16_to_f32, ("binary32", "bfloat16"): sf.f32_to_bf16,
             ("bfloat16", "binary32"): sf.bf16_to_f32, ("float16", "binary64"): sf.f16_to_f64}


def _sf_value(name, code):
    typ, size = _SF_TYPES[name]
    return typ.from_bytes(int(code).to_bytes(size, "big"))


def _sf_code(x):
    return int.from_bytes(x.to_bytes(), "big")


def _sf_nan(name, code):
    typ, size = _SF_TYPES[name]
    e = {2: 5 if name == "float16" else 8, 4: 8, 8: 11}[size]
    m = size * 8 - 1 - e
    return (code >> m) & ((1 << e) - 1) == (1 << e) - 1 and code & ((1 << m) - 1) != 0


@pytest.mark.parametrize("pair", sorted(_SF_FUNCS))
@pytest.mark.parametrize("tininess", ["after", "before"])
def test_float_conversions_against_softfloat(pair, tininess):
    src, dst = pair
    fn = _SF_FUNCS[pair]
    sf.set_tininess_mode(sf.TininessMode.AFTER_ROUNDING if tininess == "after" else
                         sf.TininessMode.BEFORE_ROUNDING)
    checked = 0
    for mode, sfm in SF_MODES.items():
        if src == "binary32" and dst == "bfloat16" and mode != "nearest_even":
            continue          # softfloatpy's f32_to_bf16 rounds to nearest even only
        data = b"".join(vectors.generate_conversion(src, dst, rounding=mode, tininess=tininess,
                                                    count=2000, testfloat=True))
        sf.set_rounding_mode(getattr(sf.RoundingMode, sfm))
        lines = _lines(data)
        if len(lines) > 12000:   # a 16-bit source: every 7th code (every 31st but in nearest_even)
            lines = lines[::7] if mode == "nearest_even" else lines[::31]
        for a, r, f in lines:
            sf.set_exception_flags(0)
            want = _sf_code(fn(_sf_value(src, int(a, 16))))
            wfl = int(sf.get_exception_flags())
            got = int(r, 16)
            if not (_sf_nan(dst, want) and _sf_nan(dst, got)):
                assert got == want, (src, dst, mode, a, r, hex(want))
            assert int(f, 16) == wfl, (src, dst, mode, a, f, wfl)
            checked += 1
    assert checked > 5000


_SF_TO_INT = {("float16", "int32"): sf.f16_to_i32, ("float16", "int64"): sf.f16_to_i64,
              ("float16", "uint32"): sf.f16_to_ui32, ("float16", "uint64"): sf.f16_to_ui64}
_SF_FROM_INT = {("int32", "float16"): sf.i32_to_f16, ("int64", "float16"): sf.i64_to_f16,
                ("uint32", "float16"): sf.ui32_to_f16, ("uint64", "float16"): sf.ui64_to_f16}


@pytest.mark.parametrize("pair", sorted(_SF_TO_INT))
def test_float16_to_integers_against_softfloat(pair):
    """Every float16 code in five modes; SoftFloat's out-of-range results follow its
    8086-SSE specialisation, so only in-range results are compared by value (flags always:
    invalid for NaN and out of range)."""
    src, dst = pair
    fn = _SF_TO_INT[pair]
    bits_, signed = vectors.INTEGERS[dst]
    lo, hi = (-(1 << (bits_ - 1)), (1 << (bits_ - 1)) - 1) if signed else (0, (1 << bits_) - 1)
    checked = 0
    for mode, sfm in SF_MODES.items():
        data = b"".join(vectors.generate_conversion(src, dst, rounding=mode, testfloat=True))
        lines = _lines(data)
        assert len(lines) == 65536
        for a, r, f in lines[::3]:
            sf.set_exception_flags(0)
            want = fn(_sf_value(src, int(a, 16)), getattr(sf.RoundingMode, sfm), True).to_int()
            wfl = int(sf.get_exception_flags())
            got = int(r, 16)
            if signed and got >= 1 << (bits_ - 1):
                got -= 1 << bits_
            assert int(f, 16) == wfl, (dst, mode, a, r, f, want, wfl)
            if not wfl & 0x10:
                assert got == want, (dst, mode, a, r, want)
            else:
                assert got in (lo, hi)
            checked += 1
    assert checked == 5 * 21846


@pytest.mark.parametrize("pair", sorted(_SF_FROM_INT))
def test_integers_to_float16_against_softfloat(pair):
    src, dst = pair
    fn = _SF_FROM_INT[pair]
    typ = {"int32": sf.Int32, "int64": sf.Int64, "uint32": sf.UInt32, "uint64": sf.UInt64}[src]
    checked = 0
    for mode, sfm in SF_MODES.items():
        sf.set_rounding_mode(getattr(sf.RoundingMode, sfm))
        data = b"".join(vectors.generate_conversion(src, dst, rounding=mode, count=3000, testfloat=True))
        for a, r, f in _lines(data):
            v = int(a, 16)
            if vectors.INTEGERS[src][1] and v >= 1 << (vectors.INTEGERS[src][0] - 1):
                v -= 1 << vectors.INTEGERS[src][0]
            sf.set_exception_flags(0)
            want = _sf_code(fn(typ.from_int(v)))
            assert (int(r, 16), int(f, 16)) == (want, int(sf.get_exception_flags())), (src, mode, a, r, f)
            checked += 1
    assert checked > 5 * 3000


# --------------------------------------------------------------- Fractions ----

FM_MODES = ("nearest_even", "toward_zero", "upward", "downward", "nearest_away", "to_odd")


def _spec(name):
    fmt = softfp8.lookup(name)
    if name.startswith("cfloat8"):
        return fm.tesla_spec(name.split("(")[0], fmt.bias)
    return fm.SPECS[fmt.name]


def _expected(spec, dec, mode):
    """(code, flags) of a source value, decoded as fraction_model.decode does (("nan",),
    ("inf", sign) or ("num", sign, Fraction)), rounded into spec by fraction_model."""
    if dec[0] == "nan":
        return fm.round_float(spec, float("nan"), mode)[:2]
    if dec[0] == "inf":
        return fm.round_float(spec, -math.inf if dec[1] else math.inf, mode)[:2]
    return fm.round_value(spec, dec[1], dec[2], mode)


def _num(v):
    v = Fraction(v)
    return ("num", 1 if v < 0 else 0, abs(v))


@pytest.mark.parametrize("dst", EIGHT)
def test_between_formats_against_fractions(dst):
    """Every code of every 8-bit format (and of float16 / bfloat16, every 41st) into dst,
    nearest_even and upward; values from fraction_model.decode, rounding by round_value."""
    dspec = _spec(dst)
    checked = 0
    for src in EIGHT + ["float16", "bfloat16"]:
        sspec = _spec(src) if src not in ("float16", "bfloat16") else fm.SPECS[src]
        for mode in ("nearest_even", "upward"):
            data = b"".join(vectors.generate_conversion(src, dst, rounding=mode, testfloat=True))
            lines = _lines(data)
            if sspec.bits > 8:
                lines = lines[::41]
            for a, r, f in lines:
                dec = fm.decode(sspec, int(a, 16))
                if dec[0] == "nan" and (fm.is_nan(dspec, int(r, 16)) or dspec.specials == "none"):
                    continue                    # NaN payloads: by class (ver --nan class)
                want = _expected(dspec, dec, mode)
                assert (int(r, 16), int(f, 16) & 0x1F) == (want[0], want[1] & 0x1F), (
                    src, dst, mode, a, r, f, want)
                checked += 1
    assert checked > 30 * 256


@pytest.mark.parametrize("dst", EIGHT)
def test_binary32_grid_into_formats_against_fractions(dst):
    dspec = _spec(dst)
    checked = 0
    for mode in FM_MODES:
        data = b"".join(vectors.generate_conversion("binary32", dst, rounding=mode, count=300,
                                                    testfloat=True))
        for a, r, f in _lines(data):
            x = np.array([int(a, 16)], dtype=np.uint32).view(np.float32)[0]
            if np.isnan(x):
                continue
            want = _expected(dspec, ("inf", int(x < 0)) if np.isinf(x) else
                             ("num", int(np.signbit(x)), abs(Fraction(float(x)))), mode)
            assert (int(r, 16), int(f, 16)) == (want[0], want[1] & 0x1F), (dst, mode, a, r, f, want)
            checked += 1
    assert checked > 6 * 290          # at least the 300 random cases per mode, less NaNs


def _round_int(v, mode):
    fl, c = divmod(v, 1)
    if c == 0:
        return int(fl)
    up = {"nearest_even": c > Fraction(1, 2) or (c == Fraction(1, 2) and fl % 2 == 1),
          "nearest_away": (c >= Fraction(1, 2)) if v > 0 else (c > Fraction(1, 2)),
          "toward_zero": v < 0, "upward": True, "downward": False}[mode]
    return int(fl) + (1 if up else 0)


@pytest.mark.parametrize("dst", ["int8", "uint8", "int16", "int32", "uint64"])
def test_formats_to_integers_against_fractions(dst):
    b, signed = vectors.INTEGERS[dst]
    lo, hi = (-(1 << (b - 1)), (1 << (b - 1)) - 1) if signed else (0, (1 << b) - 1)
    checked = 0
    for src in ("e4m3", "e5m2", "cfloat8_152(bias=15)", "bfloat16"):
        sspec = _spec(src) if src != "bfloat16" else fm.SPECS["bfloat16"]
        for mode in ("nearest_even", "nearest_away", "toward_zero", "upward", "downward"):
            data = b"".join(vectors.generate_conversion(src, dst, rounding=mode, testfloat=True))
            lines = _lines(data)[:: 1 if sspec.bits <= 8 else 29]
            for a, r, f in lines:
                code = int(a, 16)
                got = int(r, 16)
                if signed and got >= 1 << (b - 1):
                    got -= 1 << b
                dec = fm.decode(sspec, code)
                if dec[0] != "num":            # inf / nan: a bound and invalid
                    assert int(f, 16) & 0x10 and got in (lo, hi), (src, a, r, f)
                    continue
                v = -dec[2] if dec[1] else dec[2]
                n = _round_int(v, mode)
                if lo <= n <= hi:
                    assert got == n and int(f, 16) == (1 if n != v else 0), (src, dst, mode, a, r, f, n)
                else:
                    assert got == (lo if n < lo else hi) and int(f, 16) == 0x10, (src, dst, mode, a, r, f)
                checked += 1
    assert checked > 4 * 256


@pytest.mark.parametrize("dst", ["e4m3", "e5m2", "float4_e2m1fn", "float8_e8m0fnu", "cfloat8_143(bias=7)"])
def test_integers_into_formats_against_fractions(dst):
    dspec = _spec(dst)
    checked = high = 0
    for src in ("int8", "uint8", "int16", "int32", "int64", "uint64"):
        for mode in FM_MODES:
            data = b"".join(vectors.generate_conversion(src, dst, rounding=mode, count=200, testfloat=True))
            step = 1 if vectors.INTEGERS[src][0] <= 8 else 23
            lines = [ln for i, ln in enumerate(_lines(data)) if i % step == 0 or int(ln[0], 16) >= 1 << 63]
            for a, r, f in lines:
                b, signed = vectors.INTEGERS[src]
                v = int(a, 16)
                if signed and v >= 1 << (b - 1):
                    v -= 1 << b
                want = _expected(dspec, _num(v), mode)
                assert (int(r, 16), int(f, 16)) == (want[0], want[1] & 0x1F), (src, dst, mode, a, r, f, want)
                checked += 1
                high += v >= 1 << 63
    assert checked > 1000
    assert high > 6 * 100      # uint64 sources at and above 2^63 (the core's sfp8_from_uint64)


def test_cli_convert_round_trip(tmp_path):
    out = tmp_path / "c.txt"
    r = subprocess.run([sys.executable, "-m", "softfp8", "gen", "e4m3", "convert", "--from", "binary32",
                        "--rounding", "stochastic", "-n", "500", "-o", str(out)], capture_output=True)
    assert r.returncode == 0, r.stderr
    assert all(len(ln.split()) == 4 for ln in out.read_text().splitlines())   # a, random, r, flags
    r = subprocess.run([sys.executable, "-m", "softfp8", "ver", "e4m3", "convert", "--from", "binary32",
                        "--rounding", "stochastic", str(out)], capture_output=True)
    assert r.returncode == 0 and b"0 mismatches" in r.stdout, r.stderr
    bad = out.read_text().replace(" 01\n", " 00\n", 1)
    r = subprocess.run([sys.executable, "-m", "softfp8", "ver", "e4m3", "convert", "--from", "binary32",
                        "--rounding", "stochastic"], input=bad.encode(), capture_output=True)
    assert r.returncode == 1 and b"1 mismatches" in r.stdout
    r = subprocess.run([sys.executable, "-m", "softfp8", "gen", "e4m3", "convert"], capture_output=True)
    assert r.returncode == 2 and b"--from" in r.stderr



def _round_int_any(v, mode):
    """_round_int plus round-to-odd (an inexact value goes to the odd neighbour)."""
    if mode != "to_odd":
        return _round_int(v, mode)
    fl = math.floor(v)
    return fl if fl == v or fl % 2 else fl + 1


def _libsoftfp8():
    import ctypes
    lib = ctypes.CDLL(str(Path(softfp8.get_library_dir()) / "libsoftfp8.so"))

    class Fmt(ctypes.Structure):
        _fields_ = [(n, ctypes.c_int) for n in ("bits", "is_signed", "exp_bits", "man_bits", "bias",
                                                  "specials", "subnormals", "saturate")]

    class Env(ctypes.Structure):
        _fields_ = [("rounding", ctypes.c_int), ("saturate", ctypes.c_int), ("tininess_before", ctypes.c_int),
                    ("sr_bits", ctypes.c_int), ("random", ctypes.c_uint32), ("isa", ctypes.c_int)]

    lib.sfp8_to_int.restype = ctypes.c_uint64
    lib.sfp8_to_int.argtypes = [ctypes.POINTER(Fmt), ctypes.c_uint32, ctypes.c_int, ctypes.c_int,
                                ctypes.POINTER(Env), ctypes.POINTER(ctypes.c_uint8)]
    return lib, Fmt, Env


INT_TYPES = [(1, 1), (1, 0), (3, 1), (8, 1), (8, 0), (16, 1), (33, 0), (63, 1), (64, 1), (64, 0)]


def test_c_sfp8_to_int_against_fractions():
    """libsoftfp8's sfp8_to_int (what DPI's sfp8_to_int calls) against exact Fractions:
    every code of e4m3, float8_e8m0fnu (values to 2^127: the uint64 range at and above
    2^63), ue4m3 and a Tesla format, every 61st bfloat16 code, into ten integer types of
    1 to 64 bits, six modes; the bit pattern and the flags (denormal aside)."""
    import ctypes
    lib, Fmt, Env = _libsoftfp8()
    modes = softfp8.bits.ROUNDING_MODES[:6]
    checked = 0
    for name in ("e4m3", "float8_e8m0fnu", "ue4m3", "cfloat8_152(bias=15)", "bfloat16"):
        fmt = softfp8.lookup(name)
        spec = _spec(name) if name != "bfloat16" else fm.SPECS["bfloat16"]
        f = Fmt(*fmt.params)
        for code in range(0, fmt.code_mask + 1, 1 if fmt.bits <= 8 else 61):
            dec = fm.decode(spec, code)
            for b, signed in INT_TYPES:
                lo, hi = (-(1 << (b - 1)), (1 << (b - 1)) - 1) if signed else (0, (1 << b) - 1)
                for k, mode in enumerate(modes):
                    if dec[0] == "nan":
                        want = (hi, 0x10)
                    elif dec[0] == "inf":
                        want = (lo if dec[1] else hi, 0x10)
                    else:
                        v = -dec[2] if dec[1] else dec[2]
                        n = _round_int_any(v, mode)
                        want = (n, int(n != v)) if lo <= n <= hi else (lo if n < lo else hi, 0x10)
                    flags = ctypes.c_uint8(0)
                    got = lib.sfp8_to_int(ctypes.byref(f), code, b, signed, ctypes.byref(Env(k, 0, 0, 32, 0, 0)),
                                          ctypes.byref(flags))
                    assert (got, flags.value & ~0x20) == (want[0] & ((1 << b) - 1), want[1]), (
                        name, hex(code), b, signed, mode, got, flags.value, want)
                    checked += 1
    assert checked == (3 * 256 + 128 + len(range(0, 65536, 61))) * len(INT_TYPES) * 6   # ue4m3: 7 bits


def test_c_sfp8_to_int_bad_calls():
    """Documented bad-call results: a width outside 1..64 gives 0 with invalid | BADCALL;
    a code above the format's width raises BADCALL whatever the result (never masked)."""
    import ctypes
    lib, Fmt, Env = _libsoftfp8()
    f = Fmt(*softfp8.e4m3.params)
    env = Env(0, 0, 0, 32, 0, 0)
    for b in (0, -1, 65, 1000):
        flags = ctypes.c_uint8(0)
        assert lib.sfp8_to_int(ctypes.byref(f), 0x38, b, 1, ctypes.byref(env), ctypes.byref(flags)) == 0
        assert flags.value == 0x90, b
    for code, b, signed in ((0x138, 8, 1), (0x17E, 8, 1), (0x1FE, 8, 0), (0x1B8, 64, 0), (0x17E, 64, 0),
                            (0x17F, 64, 0)):
        flags = ctypes.c_uint8(0)
        lib.sfp8_to_int(ctypes.byref(f), code, b, signed, ctypes.byref(env), ctypes.byref(flags))
        assert flags.value & 0x80, (hex(code), b, signed)
