"""Fast paths (run-time tables and SIMD kernels) against the exact core.

Every test runs the same call twice or more: once with the fast paths off
(``_ext.set_fast(0)``: the exact core, which the rest of the suite checks against
rational arithmetic and TestFloat) and once per fast variant -- eager tables
(``set_fast(2)``) at each SIMD level the CPU has (AVX-512 and portable C), and the
default length-gated mode (``set_fast(1)``).  Results must be bit-identical (compared
as raw bytes, NaN payloads included) and the flags identical: the OR-flags that
``softfp8.collect_flags()`` sees around each ufunc / cast call, and the per-element
flags of ``softfp8.bits``.

Sections:
  1. binary ufuncs of 8-bit formats, all 65,536 operand pairs (full and chunked calls)
  2. SIMD levels (built into every comparison; see FAST_VARIANTS)
  3. unary ufuncs of 8- and 16-bit formats, every code
  4. casts: softfp8 -> softfp8 / float16 / float32 / float64, float16 -> softfp8,
     float32 / float64 -> 8-bit formats (key classes, random and structured inputs)
  5. sums and add.reduce of 8-bit formats
  6. array layouts: strides, reversal, transposes, unaligned and byte-swapped
     inputs, broadcast scalars, tiny lengths and kernel tails
  7. the SOFTFP8_FAST / SOFTFP8_SIMD environment switches

Every exhaustive test counts what it compared and asserts the count.

The table cache is process-wide, never freed, and refuses new tables beyond a size
cap, after which calls take the generic core (counted in
``_ext.fast_cache_stats()["refused_over_cap"]``); so the comparison tests run in
forked child processes (``@isolated``), each starting from the parent's cache.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import pickle
import traceback
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import softfp8
import softfp8.bits as sfb
from softfp8 import _ext
from softfp8._formats import _PRESET_ROWS

REPO = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------
# configurations
# --------------------------------------------------------------------------

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd")
# (rounding, saturation, tininess): the 24 deterministic environments
CONFIGS = list(itertools.product(MODES, (False, True), ("after", "before")))
# every mode once, saturation and tininess rotating through all four pairs
SOME_CONFIGS = [(m, bool(i % 2), ("after", "before")[(i // 2) % 2]) for i, m in enumerate(MODES)]
# for operations whose result does not depend on the environment: two opposite ones
ENV_FREE_CONFIGS = [("nearest_even", False, "after"), ("downward", True, "before")]


def cfg_id(cfg):
    mode, sat, tin = cfg
    return f"{mode}/{'sat' if sat else 'nosat'}/{tin}"


def test_config_space():
    assert len(CONFIGS) == 24 and len(set(CONFIGS)) == 24
    assert set(MODES) == set(softfp8.bits.ROUNDING_MODES) - {"stochastic"}
    assert {m for m, _, _ in SOME_CONFIGS} == set(MODES)
    assert {(s, t) for _, s, t in SOME_CONFIGS} == {(s, t) for s in (False, True)
                                                     for t in ("after", "before")}


# --------------------------------------------------------------------------
# formats
# --------------------------------------------------------------------------

def _default_bias(family):
    return _PRESET_ROWS[family][0][4]


CF143_BIAS = _default_bias("cfloat8_143")
CF152_BIAS = _default_bias("cfloat8_152")
SHP_BIAS = _default_bias("shp")

FORMATS8 = [
    softfp8.e4m3, softfp8.e5m2, softfp8.e4m3fnuz, softfp8.e5m2fnuz,
    softfp8.hfp8_143, softfp8.hfp8_152,
    softfp8.float8_e4m3, softfp8.float8_e3m4, softfp8.float8_e4m3b11fnuz,
    softfp8.float8_e8m0fnu,   # unsigned, no zero (subnormals "nozero")
    softfp8.cfloat8_143(bias=CF143_BIAS), softfp8.cfloat8_143(bias=20),
    softfp8.cfloat8_143(bias=CF143_BIAS, subnormals="ieee"),
    softfp8.cfloat8_152(bias=CF152_BIAS), softfp8.cfloat8_152(bias=40),
    # unsigned, flushing subnormals
    softfp8.format(exp_bits=5, man_bits=3, bias=15, signed=False, subnormals="flush",
                   name="u5m3_flush"),
    # fnuz with 4 mantissa bits (the widest the float32 key table covers)
    softfp8.format(exp_bits=3, man_bits=4, bias=3, specials="fnuz", name="e3m4fnuz"),
    # 5 mantissa bits: float32/float64 casts into it stay on the generic path
    softfp8.format(exp_bits=2, man_bits=5, bias=1, name="e2m5"),
]
FORMATS16 = [softfp8.float16, softfp8.bfloat16, softfp8.shp(bias=SHP_BIAS), softfp8.uhp,
             softfp8.hfp16_169]
ALL_FORMATS = FORMATS8 + FORMATS16


def fid(fmt):
    return (fmt.name.replace("(", "-").replace(")", "").replace("bias=", "b")
            .replace(", subnormals='ieee'", "-ieee"))


ID8 = [fid(f) for f in FORMATS8]
ID16 = [fid(f) for f in FORMATS16]


def test_format_space():
    assert len(FORMATS8) == 18 and len(set(FORMATS8)) == 18
    assert all(f.bits == 8 for f in FORMATS8)
    assert len(FORMATS16) == 5 and all(f.bits == 16 for f in FORMATS16)
    assert len(set(ID8 + ID16)) == 23
    # Tesla families at their default bias and at another one
    assert softfp8.cfloat8_143(bias=CF143_BIAS) in FORMATS8
    assert softfp8.cfloat8_143(bias=20) in FORMATS8
    assert softfp8.cfloat8_152(bias=CF152_BIAS) in FORMATS8
    assert any(f.name.startswith("cfloat8_152") and f.bias != CF152_BIAS for f in FORMATS8)
    presets = softfp8.presets().values()
    assert {p.name for p in presets if p.bits == 8} <= {f.name for f in FORMATS8}
    assert {p.name for p in presets if p.bits == 16} <= {f.name for f in FORMATS16}


def rng_for(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def codes_all(fmt):
    return np.arange(1 << fmt.bits, dtype=np.uint32).astype(fmt.storage)


# all ordered pairs of 8-bit codes
PA = np.repeat(np.arange(256, dtype=np.uint8), 256)
PB = np.tile(np.arange(256, dtype=np.uint8), 256)
NPAIRS = 65536

# --------------------------------------------------------------------------
# fast-path switches
# --------------------------------------------------------------------------


def _cpu_simd():
    prev = _ext.set_simd(2)
    try:
        return _ext.simd_level()
    finally:
        _ext.set_simd(prev)


CPU_SIMD = _cpu_simd()  # 2 AVX-512 (with AVX2), 1 AVX2, 0 neither
HAS_AVX512 = CPU_SIMD == 2
# every level the machine can run, best first: AVX-512, AVX2, portable C
SIMD_LEVELS = tuple(range(CPU_SIMD, -1, -1))
DEFAULT_SIMD = SIMD_LEVELS[0]
# fast variants compared with the core: eager tables at every SIMD level, and the
# default mode (tables built only for long calls, else whatever is cached / the core)
EAGER_VARIANTS = [(2, s) for s in SIMD_LEVELS]
FAST_VARIANTS = EAGER_VARIANTS + [(1, DEFAULT_SIMD)]


@contextlib.contextmanager
def fast_mode(level, simd=None):
    """Fast-path level (0 core, 1 on, 2 eager) and SIMD level for the block; restores both."""
    prev_fast = _ext.set_fast(level)
    prev_simd = _ext.set_simd(simd) if simd is not None else _ext.simd_level()
    try:
        if simd is not None and _ext.simd_level() != simd:
            pytest.skip(f"SIMD level {simd} not available on this CPU")
        yield
    finally:
        _ext.set_simd(prev_simd)
        _ext.set_fast(prev_fast)


@pytest.fixture(autouse=True)
def _restore_switches():
    """Whatever a test does, the process-wide switches come back."""
    fast, simd = _ext.fast_enabled(), _ext.simd_level()
    yield
    _ext.set_fast(fast)
    _ext.set_simd(simd)


def isolated(test):
    """Run the test body in a forked child process.

    The fast-path tables live in a process-wide cache that is never freed and stops
    accepting tables at a size cap (256 MiB by default, fast/cache.c); past the cap every call takes
    the generic core, so a comparison would silently become core-vs-core.  A forked
    child starts from the parent's (small) cache and throws its tables away when it
    exits, so every test here really exercises freshly built tables."""
    if not hasattr(os, "fork"):
        return test

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            status = ("ok", "")
            try:
                os.close(rfd)
                test(*args, **kwargs)
            except pytest.skip.Exception as e:
                status = ("skip", str(e))
            except BaseException as e:  # noqa: BLE001 - everything goes to the parent
                status = ("fail", "".join(traceback.format_exception(e)))
            try:
                with os.fdopen(wfd, "wb") as f:
                    pickle.dump(status, f)
            finally:
                os._exit(0)
        os.close(wfd)
        with os.fdopen(rfd, "rb") as f:
            data = f.read()
        _, code = os.waitpid(pid, 0)
        if not data:
            raise AssertionError(f"test child process died (wait status {code})")
        kind, msg = pickle.loads(data)
        if kind == "skip":
            pytest.skip(msg)
        if kind == "fail":
            raise AssertionError("in the forked test process:\n" + msg)

    return wrapper


@contextlib.contextmanager
def config(cfg):
    """The softfp8 context of a (rounding, saturation, tininess) triple."""
    mode, sat, tin = cfg
    with softfp8.rounding(mode), softfp8.saturation(sat), softfp8.tininess(tin), \
            np.errstate(all="ignore"):
        yield


def bits_opts(cfg):
    mode, sat, tin = cfg
    return {"rounding": mode, "saturate": sat, "tininess": tin}


# --------------------------------------------------------------------------
# comparison machinery
# --------------------------------------------------------------------------


class Raised:
    """An exception in place of a result: the fast paths must raise the same one."""

    def __init__(self, exc):
        self.text = f"{type(exc).__name__}: {exc}"

    def __eq__(self, other):
        return isinstance(other, Raised) and other.text == self.text

    def __repr__(self):
        return f"<raised {self.text}>"


def observe(fn):
    """(result, OR-flags) of one call; (Raised, -1) if it raised."""
    try:
        with np.errstate(all="ignore"), softfp8.collect_flags() as fl:
            r = fn()
    except (TypeError, ValueError) as e:
        return Raised(e), -1
    return r, int(fl.flags)


def raw(x):
    """Element bit patterns of an array or scalar as a flat unsigned array."""
    a = np.ascontiguousarray(np.asarray(x)).reshape(-1)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _describe(inputs, i):
    if not inputs:
        return ""
    parts = []
    for inp in inputs:
        v = raw(inp)
        if v.size == 1:
            parts.append(f"0x{int(v[0]):x}")
        elif i < v.size:
            parts.append(f"0x{int(v[i]):x}")
    return " inputs (" + ", ".join(parts) + ")"


def assert_same_array(got, ref, what, inputs=None):
    g, r = np.asarray(got), np.asarray(ref)
    assert g.dtype == r.dtype, f"{what}: dtype {g.dtype} != core {r.dtype}"
    assert g.shape == r.shape, f"{what}: shape {g.shape} != core {r.shape}"
    gb, rb = raw(g), raw(r)
    if not np.array_equal(gb, rb):
        bad = np.nonzero(gb != rb)[0]
        i = int(bad[0])
        raise AssertionError(f"{what}: {bad.size} of {gb.size} elements differ; first at {i}"
                             f"{_describe(inputs, i)}: fast 0x{int(gb[i]):x}, "
                             f"core 0x{int(rb[i]):x}")
    return gb.size


def assert_same(got, ref, what, inputs=None):
    """Compare (result, flags) pairs; results may be tuples (softfp8.bits)."""
    (gr, gf), (rr, rf) = got, ref
    if isinstance(rr, Raised) or isinstance(gr, Raised):
        assert gr == rr, f"{what}: fast {gr!r}, core {rr!r}"
    elif isinstance(rr, tuple):
        assert isinstance(gr, tuple) and len(gr) == len(rr), what
        for k, (x, y) in enumerate(zip(gr, rr)):
            assert_same_array(x, y, f"{what} [part {k}]", inputs)
    else:
        assert_same_array(gr, rr, what, inputs)
    assert gf == rf, f"{what}: OR-flags fast 0x{gf:02x}, core 0x{rf:02x}"


def versus_core(fn, what, variants=FAST_VARIANTS, inputs=None):
    """Run fn() with the exact core, then with each fast variant; return the core's
    (result, flags)."""
    with fast_mode(0):
        ref = observe(fn)
    for level, simd in variants:
        with fast_mode(level, simd):
            got = observe(fn)
        assert_same(got, ref, f"{what} [fast={level} simd={simd}]", inputs)
    return ref


def bits_versus_core(fn, what, inputs=None):
    """softfp8.bits call (codes, per-element flags): eager tables at every SIMD level vs
    the core."""
    with fast_mode(0):
        ref = fn()
    if not isinstance(ref, tuple):
        ref = (ref,)
    for simd in SIMD_LEVELS:
        with fast_mode(2, simd):
            got = fn()
        if not isinstance(got, tuple):
            got = (got,)
        assert len(got) == len(ref)
        n = 0
        for k, (g, r) in enumerate(zip(got, ref)):
            n = assert_same_array(g, r, f"{what} [simd={simd}] [bits part {k}: "
                                        f"{'flags' if k else 'codes'}]", inputs)
    return ref, n


def chunked(fn, starts, n):
    """Call fn(lo, hi) on the chunks [starts[k], starts[k+1]) of range(n);
    (concatenated results, flags per chunk)."""
    outs, flags = [], []
    for lo, hi in zip(starts, list(starts[1:]) + [n]):
        r, f = observe(lambda: fn(lo, hi))
        outs.append(raw(r))
        flags.append(f)
    return np.concatenate(outs), flags


def chunked_versus_core(fn, starts, n, what, variants=FAST_VARIANTS):
    with fast_mode(0):
        ref, rfl = chunked(fn, starts, n)
    for level, simd in variants:
        with fast_mode(level, simd):
            got, gfl = chunked(fn, starts, n)
        assert np.array_equal(got, ref), f"{what} chunked [fast={level} simd={simd}]: results"
        bad = [i for i, (x, y) in enumerate(zip(gfl, rfl)) if x != y]
        assert not bad, (f"{what} chunked [fast={level} simd={simd}]: chunk {bad[0]} "
                         f"(elements {starts[bad[0]]}..): flags fast 0x{gfl[bad[0]]:02x}, "
                         f"core 0x{rfl[bad[0]]:02x}")
    return rfl


def test_simd_levels():
    """set_simd clamps to the CPU and returns the previous level; set_fast likewise."""
    prev = _ext.set_simd(0)
    try:
        assert _ext.simd_level() == 0
        assert _ext.set_simd(2) == 0
        assert _ext.simd_level() == CPU_SIMD
        assert _ext.set_simd(1) == CPU_SIMD
        assert _ext.simd_level() == min(1, CPU_SIMD)
        for bad in (-1, 3):
            with pytest.raises(ValueError, match="SIMD level must be 0, 1 or 2"):
                _ext.set_simd(bad)
    finally:
        _ext.set_simd(prev)
    prevf = _ext.set_fast(2)
    try:
        assert _ext.fast_enabled() == 2
        assert _ext.set_fast(0) == 2 and _ext.fast_enabled() == 0
        assert _ext.set_fast(1) == 0 and _ext.fast_enabled() == 1
        with pytest.raises(ValueError):
            _ext.set_fast(3)
    finally:
        _ext.set_fast(prevf)
    if not HAS_AVX512:
        pytest.skip("CPU lacks AVX-512 VBMI: only the portable kernels were compared")


# ==========================================================================
# 1-2. binary ufuncs of 8-bit formats: all 65,536 pairs
# ==========================================================================

ARITH = {"add": sfb.add, "subtract": sfb.sub, "multiply": sfb.mul, "true_divide": sfb.div,
         "floor_divide": None, "remainder": None}
ENV_FREE = ["maximum", "minimum", "fmax", "fmin", "copysign", "nextafter", "equal", "not_equal",
            "less", "less_equal", "greater", "greater_equal"]
# Chunked calls: the 65,536 pairs split into calls of irregular lengths (kernel
# blocks of 16 and 64 elements, their tails, and the length-1 gate of set_fast(1)
# around 65,536/16 = 4,096), each call's OR-flags compared.
CHUNK_SIZES = (1, 2, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 2047, 4095, 4096, 4097)


def _chunk_starts():
    rng = np.random.default_rng(20240601)
    starts, pos = [], 0
    while pos < NPAIRS:
        starts.append(pos)
        pos += int(rng.choice(CHUNK_SIZES))
    return np.array(starts)


CHUNK_STARTS = _chunk_starts()
NCHUNKS = CHUNK_STARTS.size


def test_chunking():
    sizes = np.diff(np.append(CHUNK_STARTS, NPAIRS))
    assert sizes.sum() == NPAIRS and (sizes > 0).all()
    assert set(sizes[:-1].tolist()) == set(CHUNK_SIZES)
    assert 40 <= NCHUNKS <= 200


def _binary_all_pairs(fmt, name, configs, bits_fn=None):
    """np.<name> over all pairs: one full call and NCHUNKS chunked calls per config, each
    fast variant against the core; with bits_fn also softfp8.bits per element."""
    ufunc = getattr(np, name)
    x, y = PA.view(fmt.dtype), PB.view(fmt.dtype)
    counts = {"pairs": 0, "chunks": 0, "bits": 0}
    for cfg in configs:
        what = f"{fmt.name} np.{name} {cfg_id(cfg)}"
        with config(cfg):
            res, flags = versus_core(lambda: ufunc(x, y), what, inputs=(PA, PB))
            counts["pairs"] += NPAIRS
            chunk_flags = chunked_versus_core(lambda lo, hi: ufunc(x[lo:hi], y[lo:hi]),
                                              CHUNK_STARTS, NPAIRS, what)
            counts["chunks"] += len(chunk_flags)
        # the chunks' flags make up the whole call's
        assert np.bitwise_or.reduce(np.array(chunk_flags)) == flags, what
        if bits_fn is not None:
            (codes, fl), k = bits_versus_core(lambda: bits_fn(fmt, PA, PB, **bits_opts(cfg)),
                                              f"softfp8.bits.{bits_fn.__name__} {what}",
                                              inputs=(PA, PB))
            counts["bits"] += k
            # and the golden model agrees with the ufunc, call by call and chunk by chunk
            assert np.array_equal(raw(res), codes), what
            assert int(np.bitwise_or.reduce(fl)) == flags, what
            per_chunk = np.bitwise_or.reduceat(fl, CHUNK_STARTS)
            assert per_chunk.tolist() == chunk_flags, what
    return counts


@pytest.mark.parametrize("name", list(ARITH))
@pytest.mark.parametrize("fmt", FORMATS8, ids=ID8)
@isolated
def test_binary_arith_all_pairs(fmt, name):
    counts = _binary_all_pairs(fmt, name, CONFIGS, ARITH[name])
    nbits = 24 * NPAIRS if ARITH[name] is not None else 0
    assert counts == {"pairs": 24 * NPAIRS, "chunks": 24 * NCHUNKS, "bits": nbits}


@pytest.mark.parametrize("name", ENV_FREE)
@pytest.mark.parametrize("fmt", FORMATS8, ids=ID8)
@isolated
def test_binary_env_free_all_pairs(fmt, name):
    counts = _binary_all_pairs(fmt, name, ENV_FREE_CONFIGS)
    assert counts == {"pairs": 2 * NPAIRS, "chunks": 2 * NCHUNKS, "bits": 0}


SELECT_BITS = {"max": sfb.max, "min": sfb.min, "maxnum": sfb.maxnum, "minnum": sfb.minnum}


@pytest.mark.parametrize("fmt", FORMATS8, ids=ID8)
@isolated
def test_bits_env_free_all_pairs(fmt):
    n = 0
    for name, fn in SELECT_BITS.items():
        _, k = bits_versus_core(lambda: fn(fmt, PA, PB), f"bits.{name} {fmt.name}", (PA, PB))
        n += k
    for sig in (False, True):
        (rel, _), k = bits_versus_core(lambda: sfb.compare(fmt, PA, PB, signaling=sig),
                                       f"bits.compare(signaling={sig}) {fmt.name}", (PA, PB))
        assert set(np.unique(rel).tolist()) <= {-1, 0, 1, 2}
        n += k
    _, k = bits_versus_core(lambda: sfb.copysign(fmt, PA, PB), f"bits.copysign {fmt.name}",
                            (PA, PB))
    n += k
    assert n == 7 * NPAIRS


# ==========================================================================
# 3. unary ufuncs, every code
# ==========================================================================

UNARY_ROUNDING = ["sqrt", "reciprocal", "square", "rint", "spacing"]
UNARY_OTHER = ["negative", "positive", "absolute", "sign", "floor", "ceil", "trunc", "isnan",
               "isinf", "isfinite", "signbit"]


def _unary_all_codes(fmt, name, configs):
    ufunc = getattr(np, name)
    c = codes_all(fmt)
    x = c.view(fmt.dtype)
    n = 0
    for cfg in configs:
        with config(cfg):
            versus_core(lambda: ufunc(x), f"{fmt.name} np.{name} {cfg_id(cfg)}", inputs=(c,))
        n += c.size
    return n


@pytest.mark.parametrize("name", UNARY_ROUNDING + UNARY_OTHER)
@pytest.mark.parametrize("fmt", FORMATS8, ids=ID8)
@isolated
def test_unary_8bit_all_codes(fmt, name):
    assert _unary_all_codes(fmt, name, CONFIGS) == 24 * 256


@pytest.mark.parametrize("name", UNARY_ROUNDING + UNARY_OTHER)
@pytest.mark.parametrize("fmt", FORMATS16, ids=ID16)
@isolated
def test_unary_16bit_all_codes(fmt, name):
    configs = CONFIGS if name in UNARY_ROUNDING else SOME_CONFIGS
    assert _unary_all_codes(fmt, name, configs) == len(configs) * 65536


@pytest.mark.parametrize("fmt", FORMATS8 + FORMATS16, ids=ID8 + ID16)
@isolated
def test_bits_unary_all_codes(fmt):
    c = codes_all(fmt)
    n = 0
    for cfg in CONFIGS:
        o = bits_opts(cfg)
        for what, fn in [("sqrt", lambda: sfb.sqrt(fmt, c, **o)),
                         ("round_integral", lambda: sfb.round_integral(fmt, c, **o)),
                         ("round_integral_exact",
                          lambda: sfb.round_integral(fmt, c, exact=True, **o))]:
            _, k = bits_versus_core(fn, f"bits.{what} {fmt.name} {cfg_id(cfg)}", (c,))
            n += k
    for what, fn in [("neg", lambda: sfb.neg(fmt, c)), ("abs", lambda: sfb.abs(fmt, c))]:
        _, k = bits_versus_core(fn, f"bits.{what} {fmt.name}", (c,))
        n += k
    assert n == (24 * 3 + 2) * c.size


# ==========================================================================
# 4. casts
# ==========================================================================

FLOAT_DSTS = [np.float16, np.float32, np.float64]
BITS_FLOAT_DSTS = [np.float32, np.float64]  # softfp8.bits endpoints


def _dst_id(d):
    return fid(d) if isinstance(d, softfp8.Format) else np.dtype(d).name


def _np_dtype(d):
    return d.dtype if isinstance(d, softfp8.Format) else np.dtype(d)


def _cast_all_codes(src, dst, configs):
    """Every code of src cast to dst (ufunc OR-flags, and softfp8.bits per element)."""
    c = codes_all(src)
    x = c.view(src.dtype)
    dt = _np_dtype(dst)
    n = 0
    for cfg in configs:
        what = f"cast {src.name} -> {_dst_id(dst)} {cfg_id(cfg)}"
        with config(cfg):
            versus_core(lambda: x.astype(dt), what, inputs=(c,))
        n += c.size
        bdst = softfp8.float16 if dst is np.float16 else dst
        bits_versus_core(lambda: sfb.convert(c, src, bdst, **bits_opts(cfg)), what, (c,))
    return n


@pytest.mark.parametrize("src", FORMATS8, ids=ID8)
@isolated
def test_cast_8bit_source_all_codes(src):
    n = 0
    for dst in ALL_FORMATS + FLOAT_DSTS:
        n += _cast_all_codes(src, dst, CONFIGS)
    assert n == (len(ALL_FORMATS) + 3) * 24 * 256


@pytest.mark.parametrize("dst", ALL_FORMATS + FLOAT_DSTS,
                         ids=[_dst_id(d) for d in ALL_FORMATS + FLOAT_DSTS])
@pytest.mark.parametrize("src", FORMATS16, ids=ID16)
@isolated
def test_cast_16bit_source_all_codes(src, dst):
    # every rounding mode, saturation and tininess rule (not every combination)
    assert _cast_all_codes(src, dst, SOME_CONFIGS) == 6 * 65536


F16_ALL = np.arange(65536, dtype=np.uint32).astype(np.uint16)


@pytest.mark.parametrize("dst", ALL_FORMATS, ids=ID8 + ID16)
@isolated
def test_cast_from_float16_all_patterns(dst):
    x = F16_ALL.view(np.float16)
    configs = CONFIGS if dst.bits == 8 else SOME_CONFIGS
    n = 0
    for cfg in configs:
        what = f"cast float16 -> {dst.name} {cfg_id(cfg)}"
        with config(cfg):
            versus_core(lambda: x.astype(dst.dtype), what, inputs=(F16_ALL,))
        # per element: softfp8.float16 is binary16
        (codes, fl), _ = bits_versus_core(
            lambda: sfb.convert(F16_ALL, softfp8.float16, dst, **bits_opts(cfg)), what,
            (F16_ALL,))
        with config(cfg), fast_mode(0):
            r, uf = observe(lambda: x.astype(dst.dtype))
        assert np.array_equal(raw(r), codes) and int(np.bitwise_or.reduce(fl)) == uf, what
        n += F16_ALL.size
    assert n == len(configs) * 65536


# ---- float32 -> 8-bit formats ------------------------------------------------

KEYS = np.arange(65536, dtype=np.uint32)


def key_class_members(seed):
    """For every compressed key k: lowest member, highest member, a random member."""
    hi15 = (KEYS >> 1) << 17
    sticky = (KEYS & 1).astype(bool)
    low = hi15 | sticky.astype(np.uint32)
    high = hi15 | np.where(sticky, np.uint32(0x1FFFF), np.uint32(0))
    r = np.random.default_rng(seed).integers(1, 0x20000, KEYS.size, dtype=np.uint32)
    rand = hi15 | np.where(sticky, r, np.uint32(0))
    return np.concatenate([low, high, rand]).astype(np.uint32)


def test_key_class_members_are_classes():
    m = key_class_members(1)
    assert m.size == 3 * 65536
    # the compressed key of fast.h: ((b >> 16) & 0xfffe) | ((b & 0x1ffff) != 0)
    k = ((m >> 16) & 0xFFFE) | ((m & 0x1FFFF) != 0)
    assert np.array_equal(k, np.tile(KEYS, 3))


def _from_float_compare(fmt, x, cfg, what):
    """float32/float64 array x -> fmt: ufunc cast and softfp8.bits.from_float, fast vs core."""
    xb = raw(x)
    with config(cfg):
        _, uf = versus_core(lambda: x.astype(fmt.dtype), what, inputs=(xb,))
    (codes, fl), n = bits_versus_core(lambda: sfb.from_float(x, fmt, **bits_opts(cfg)), what,
                                      (xb,))
    assert int(np.bitwise_or.reduce(fl)) == uf if fl.size else uf == 0, what
    return n


@pytest.mark.parametrize("dst", FORMATS8, ids=ID8)
@isolated
def test_cast_float32_key_classes(dst):
    m = key_class_members(zlib.crc32(dst.name.encode())).view(np.float32)
    n = 0
    for cfg in CONFIGS:
        n += _from_float_compare(dst, m, cfg, f"cast float32 (key classes) -> {dst.name} "
                                              f"{cfg_id(cfg)}")
    assert n == 24 * 3 * 65536


def _format_grid(fmt):
    """Non-negative finite values of fmt, and the midpoints between neighbours, plus
    the overflow and underflow boundaries, as float64 (exact)."""
    with fast_mode(0):
        v, _ = sfb.to_float(codes_all(fmt), fmt, np.float64, rounding="nearest_even",
                            tininess="after")
    v = np.unique(np.abs(v[np.isfinite(v)]))
    mids = (v[:-1] + v[1:]) / 2
    top, below = v[-1], v[-2]
    ulp_top = top - below
    sub = fmt.min_subnormal
    extra = np.array([top + ulp_top / 2, top + ulp_top, top + 2 * ulp_top, 2 * top, 4 * top,
                      sub / 2, sub / 4, 3 * sub / 4, sub * 0.5625, fmt.min_normal,
                      fmt.min_normal * 0.75, 1.0, 1.5])
    return np.unique(np.concatenate([v, mids, extra]))


F32_SPECIALS = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                         0x7F800001, 0x7FA00000, 0x7FBFFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0xFF800001,
                         0x00000001, 0x007FFFFF, 0x00400000, 0x80000001, 0x807FFFFF,
                         0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x0C000000, 0x1F000000,
                         0x71000000, 0x3F800000, 0xBF800000], dtype=np.uint32)


def structured_f32(fmt):
    """Values of fmt, midpoints, boundaries, each +-3 float32 ulps, both signs, and
    specials, as float32 bit patterns."""
    g = _format_grid(fmt).astype(np.float32)
    b = g.view(np.uint32).astype(np.int64)
    steps = (b[:, None] + np.arange(-3, 4)[None, :]).reshape(-1)
    steps = steps[(steps >= 0) & (steps <= 0x7F800000)].astype(np.uint32)
    both = np.concatenate([steps, steps | np.uint32(0x80000000), F32_SPECIALS])
    return np.unique(both)


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("dst", FORMATS8, ids=ID8)
@isolated
def test_cast_float_structured(dst, width):
    make, ftype = (structured_f32, np.float32) if width == 32 else (structured_f64, np.float64)
    x = make(dst).view(ftype)
    assert x.size > 1000
    n = 0
    for cfg in CONFIGS:
        n += _from_float_compare(dst, x, cfg, f"cast float{width} (structured) -> {dst.name} "
                                              f"{cfg_id(cfg)}")
    assert n == 24 * x.size


RANDOM_PER_CONFIG = 500_000
RANDOM_CONFIGS_PER_FORMAT = 2


def _random_configs(fmt):
    i = FORMATS8.index(fmt)
    return [("nearest_even", False, "after"), CONFIGS[(7 * i + 5) % 24]]


def random_in_range_f32(rng, fmt, n):
    """Random float32 bit patterns whose exponent lies around fmt's range."""
    lo = int(np.floor(np.log2(fmt.min_subnormal))) - 3
    hi = int(np.floor(np.log2(float(fmt.max)))) + 3
    e = rng.integers(lo, hi + 1, n) + 127
    m = rng.integers(0, 1 << 23, n, dtype=np.uint32)
    # many with few mantissa bits set (exact values, ties)
    short = rng.random(n) < 0.5
    m = np.where(short, m & np.uint32(0x7E0000), m)
    s = rng.integers(0, 2, n, dtype=np.uint32) << 31
    return (s | (e.astype(np.uint32) << 23) | m).astype(np.uint32)


@pytest.mark.parametrize("dst", FORMATS8, ids=ID8)
@isolated
def test_cast_float32_random(dst):
    rng = rng_for("f32", dst.name)
    n = 0
    for cfg in _random_configs(dst):
        x = np.concatenate([rng.integers(0, 1 << 32, RANDOM_PER_CONFIG, dtype=np.uint32),
                            random_in_range_f32(rng, dst, RANDOM_PER_CONFIG)]).view(np.float32)
        n += _from_float_compare(dst, x, cfg, f"cast float32 (random) -> {dst.name} {cfg_id(cfg)}")
    assert n == RANDOM_CONFIGS_PER_FORMAT * 2 * RANDOM_PER_CONFIG
    # 14 formats x 2 configs x 10^6 = 2.8 * 10^7 random float32 patterns in all


def test_random_float32_total():
    assert len(FORMATS8) * RANDOM_CONFIGS_PER_FORMAT * 2 * RANDOM_PER_CONFIG >= 10**7


# ---- float64 -> 8-bit formats ------------------------------------------------

F64_SPECIALS = np.array([
    0, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000,     # zeros, infinities
    0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001,        # NaNs: quiet, signaling,
    0x7FF4000000000000, 0x7FF7FFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF,        # various payloads
    0xFFF0000000000001, 0x7FF8000000000001, 0x7FF0000020000000, 0x7FF0000000100000,
    0x0000000000000001, 0x8000000000000001, 0x000FFFFFFFFFFFFF,        # binary64 subnormals
    0x0008000000000000, 0x0000000020000000, 0x0010000000000000,        # and the smallest normal
    0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,                            # max binary64
], dtype=np.uint64)
F64_VALUES = np.array([1e39, -1e39, 1e-39, -1e-39, 1e-300, -1e-300, 1e300, -1e300, 3.4e38,
                       3.5e38, 2.0**128, 2.0**127, 2.0**-126, 2.0**-127, 2.0**-149, 2.0**-150,
                       2.0**-1022, 2.0**-1074 * 3, 2.0**-100, 2.0**100, 1.0 + 2.0**-52,
                       1.0 + 2.0**-30, 1.0 - 2.0**-53], dtype=np.float64)


def structured_f64(fmt):
    g = _format_grid(fmt)
    b = g.view(np.uint64).astype(np.int64)
    steps = (b[:, None] + np.arange(-2, 3)[None, :]).reshape(-1)
    steps = steps[steps >= 0].view(np.float64)
    # just beside each grid point at binary32 and finer precision (sticky bits below the key)
    near = np.concatenate([g * (1 + 2.0**-24), g * (1 - 2.0**-24), g * (1 + 2.0**-40),
                           g * (1 - 2.0**-40), g * (1 + 2.0**-7), g * (1 - 2.0**-7)])
    vals = np.concatenate([steps, near, F64_VALUES])
    vals = np.concatenate([vals, -vals]).view(np.uint64)
    return np.unique(np.concatenate([vals, F64_SPECIALS]))


def random_f64(rng, fmt, n_any, n_range):
    """n_any random float64 bit patterns, then n_range values around fmt's range
    (random_in_range_f32 with random low bits below binary32's precision in half)."""
    f32 = random_in_range_f32(rng, fmt, n_range).view(np.float32)
    low = rng.integers(0, 1 << 29, f32.size, dtype=np.uint64)
    low = np.where(rng.random(f32.size) < 0.5, low, 0).astype(np.uint64)
    in_range = f32.astype(np.float64).view(np.uint64) | low   # extra low bits
    anybits = rng.integers(0, np.iinfo(np.uint64).max, n_any, dtype=np.uint64, endpoint=True)
    return np.concatenate([anybits, in_range]).view(np.float64)


@pytest.mark.parametrize("dst", FORMATS8, ids=ID8)
@isolated
def test_cast_float64_random(dst):
    rng = rng_for("f64", dst.name)
    n = 0
    for cfg in _random_configs(dst):
        x = random_f64(rng, dst, RANDOM_PER_CONFIG, RANDOM_PER_CONFIG // 2)
        n += _from_float_compare(dst, x, cfg, f"cast float64 (random) -> {dst.name} {cfg_id(cfg)}")
    assert n == RANDOM_CONFIGS_PER_FORMAT * (RANDOM_PER_CONFIG + RANDOM_PER_CONFIG // 2)


# ---- float64 -> every preset of at most 8 bits (fast/cast64.c's arithmetic kernel
#      and the key table it leaves NaN / infinity / subnormal / tininess-edge lanes to) ----

PRESETS_LE8 = sorted((p for p in softfp8.presets().values() if p.bits <= 8), key=lambda p: p.name)
# random float64 per rounding mode and preset (spread over the four saturation x
# tininess settings); SOFTFP8_CAST64_RANDOM=10000000 for the large run
CAST64_RANDOM = int(os.environ.get("SOFTFP8_CAST64_RANDOM") or 40_000)


def test_presets_le8_space():
    names = {p.name for p in PRESETS_LE8}
    assert {"e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "float8_e4m3", "float8_e3m4",
            "float8_e4m3b11fnuz", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"} <= names
    assert len(PRESETS_LE8) >= 14


@pytest.mark.parametrize("dst", PRESETS_LE8, ids=[p.name for p in PRESETS_LE8])
@isolated
def test_cast_float64_presets(dst):
    """Every rounding boundary of dst (values, midpoints, the overflow and underflow
    thresholds), its binary64 neighbours and specials (structured_f64) under all 24
    environments, then CAST64_RANDOM random float64 per rounding mode; codes and
    per-element flags (softfp8.bits) and OR-flags (astype) equal to the core's at every
    SIMD level."""
    x = structured_f64(dst).view(np.float64)
    assert x.size > 500
    n = 0
    for cfg in CONFIGS:
        n += _from_float_compare(dst, x, cfg, f"cast float64 (boundaries) -> {dst.name} {cfg_id(cfg)}")
    assert n == 24 * x.size
    rng = rng_for("f64-presets", dst.name)
    per_cfg = CAST64_RANDOM // 4
    n = 0
    for cfg in CONFIGS:
        x = random_f64(rng, dst, per_cfg // 4, per_cfg - per_cfg // 4)
        n += _from_float_compare(dst, x, cfg, f"cast float64 (random) -> {dst.name} {cfg_id(cfg)}")
    assert n == 24 * per_cfg


# ---- float32 / float64 -> formats of 9..16 bits (fast/cast16.c: the arithmetic
#      kernels at each SIMD level, the rounder of round_f64.c in portable C, and the
#      core for NaN / infinity / subnormal inputs, tininess edges and, for SHP / UHP,
#      everything outside the normal range) ----

FORMATS16_CAST = FORMATS16 + [
    softfp8.shp(bias=20),                                         # SHP at another bias
    softfp8.format(exp_bits=4, man_bits=11, bias=7, name="e4m11"),   # 11 mantissa bits
    softfp8.format(exp_bits=7, man_bits=8, bias=63, specials="fn", saturate=True,
                   name="e7m8fn"),                                # no infinity
    softfp8.format(exp_bits=5, man_bits=6, bias=15, name="e5m6"),  # 12 bits
    softfp8.format(exp_bits=6, man_bits=9, bias=31, signed=False, subnormals="tesla",
                   name="u6m9_tesla"),                            # unsigned, Tesla subnormals
]
ID16_CAST = [fid(f) for f in FORMATS16_CAST]
# random inputs per rounding mode and format (half float32, half float64), the
# saturation x tininess settings rotating; SOFTFP8_CAST16_RANDOM=10000000 for the large run
CAST16_RANDOM = int(os.environ.get("SOFTFP8_CAST16_RANDOM") or 1_000_000)


def test_cast16_space():
    assert len(FORMATS16_CAST) == 10 and len(set(ID16_CAST)) == 10
    assert {f.bits for f in FORMATS16_CAST} == {12, 15, 16}
    assert {p.name for p in softfp8.presets().values() if p.bits == 16} <= {f.name for f in FORMATS16_CAST}


def structured_f32_near(fmt):
    """Every value of fmt, midpoint and boundary (_format_grid) rounded to float32, and
    its float32 neighbours (nextafter both ways), both signs, plus specials and the
    float32 subnormals: float32 bit patterns."""
    g = _format_grid(fmt).astype(np.float32)
    b = g.view(np.uint32).astype(np.int64)
    steps = (b[:, None] + np.arange(-1, 2)[None, :]).reshape(-1)
    steps = steps[(steps >= 0) & (steps <= 0x7F800000)].astype(np.uint32)
    both = np.concatenate([steps, steps | np.uint32(0x80000000), F32_SPECIALS,
                           np.arange(1, 1 << 23, 4099, dtype=np.uint32)])
    return np.unique(both)


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("dst", FORMATS16_CAST, ids=ID16_CAST)
@isolated
def test_cast16_structured(dst, width):
    """float32: every rounding boundary of dst and its float32 neighbours under all 24
    environments; float64: boundaries +-2 ulps and values just beside them (sticky bits
    below binary32's precision), binary64 specials and subnormals, every rounding mode
    once (SOME_CONFIGS).  Codes, per-element and OR-flags equal to the core's at every
    SIMD level."""
    if width == 32:
        x, cfgs = structured_f32_near(dst).view(np.float32), CONFIGS
    else:
        x, cfgs = structured_f64(dst).view(np.float64), SOME_CONFIGS
    assert x.size > (1 << (dst.bits - 1))
    n = 0
    for cfg in cfgs:
        n += _from_float_compare(dst, x, cfg, f"cast float{width} (structured) -> {dst.name} "
                                              f"{cfg_id(cfg)}")
    assert n == len(cfgs) * x.size


def _random16_inputs(rng, dst, k):
    """k random float32 (a quarter any bits, the rest around dst's range), then k
    random float64 (the same, with random low bits below binary32's precision)."""
    x32 = np.concatenate([rng.integers(0, 1 << 32, k // 4, dtype=np.uint32),
                          random_in_range_f32(rng, dst, k - k // 4)]).view(np.float32)
    return x32, random_f64(rng, dst, k // 4, k - k // 4)


@pytest.mark.parametrize("dst", FORMATS16_CAST, ids=ID16_CAST)
@isolated
def test_cast16_random(dst):
    """CAST16_RANDOM random inputs per rounding mode: float32 (any bits, and around
    dst's range) and float64 (any bits, and around the range with random low bits)."""
    rng = rng_for("cast16", dst.name)
    half = CAST16_RANDOM // 2
    n = 0
    for cfg in SOME_CONFIGS:
        for x in _random16_inputs(rng, dst, half):
            n += _from_float_compare(dst, x, cfg, f"cast {x.dtype} (random) -> {dst.name} {cfg_id(cfg)}")
    assert n == len(MODES) * 2 * half


# ---- stochastic rounding into the same 16-bit formats (fast/cast16.c's SR kernels:
#      AVX-512, AVX2 and the portable loop, the core for the lanes they leave) ----

# (saturate, tininess, sr_bits (None: the default 32), seed): sr_bits on both sides of
# the discarded-bit counts of float32 inputs (8..22 bits for these formats)
SR16_CONFIGS = [(False, "after", None, 1), (True, "before", None, 2**63 + 5),
                (False, "before", 1, 7), (True, "after", 7, 12345),
                (False, "after", 13, 2**64 - 1), (True, "before", 16, 99)]
# random inputs per format (half float32, half float64, spread over SR16_CONFIGS);
# SOFTFP8_CAST16_RANDOM=10000000 for the large run (as for the nearest casts above)
CAST16_SR_RANDOM = int(os.environ.get("SOFTFP8_CAST16_RANDOM") or 120_000)


def _sr_id(sat, tin, nbits, seed):
    return f"stochastic/sr_bits={nbits or 32}/seed={seed}/{'sat' if sat else 'nosat'}/{tin}"


def _sr16_compare(fmt, x, sr_cfg, what):
    """float32/float64 array x -> fmt under stochastic rounding: softfp8.bits.from_float
    (codes, per-element flags) at every SIMD level and the ufunc cast inside a seeded
    context (codes, OR-flags) at every fast variant, each equal to the core's; the
    cast's first stream is the one from_float(seed=) uses, so their codes agree too."""
    sat, tin, nbits, seed = sr_cfg
    xb = raw(x)
    opts = {} if nbits is None else {"sr_bits": nbits}

    def cast():
        with softfp8.rounding("stochastic", seed=seed, **opts), softfp8.saturation(sat), \
                softfp8.tininess(tin), np.errstate(all="ignore"):
            return x.astype(fmt.dtype)
    cast_codes, uf = versus_core(cast, what, inputs=(xb,))
    (codes, fl), n = bits_versus_core(
        lambda: sfb.from_float(x, fmt, rounding="stochastic", saturate=sat, tininess=tin,
                               seed=seed, **opts), what, (xb,))
    assert np.array_equal(raw(cast_codes), raw(codes)), f"{what}: cast and bits.from_float differ"
    assert int(np.bitwise_or.reduce(fl)) == uf if fl.size else uf == 0, what
    return n


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("dst", FORMATS16_CAST, ids=ID16_CAST)
@isolated
def test_cast16_stochastic_structured(dst, width):
    """Every rounding boundary of dst and its float32 / float64 neighbours (the subnormal
    threshold, the largest finite value and the overflow threshold, both signs: negative
    values into the unsigned formats), zeros, infinities, NaNs and subnormal inputs, under
    each SR16_CONFIGS setting (float64: three of them)."""
    if width == 32:
        x, cfgs = structured_f32_near(dst).view(np.float32), SR16_CONFIGS
    else:  # (sr_bits is below the 37..51 discarded bits of every float64 input)
        x, cfgs = structured_f64(dst).view(np.float64), SR16_CONFIGS[1:4]
    assert x.size > (1 << (dst.bits - 1))
    n = 0
    for cfg in cfgs:
        n += _sr16_compare(dst, x, cfg, f"cast float{width} (structured) -> {dst.name} {_sr_id(*cfg)}")
    assert n == len(cfgs) * x.size


@pytest.mark.parametrize("dst", FORMATS16_CAST, ids=ID16_CAST)
@isolated
def test_cast16_stochastic_random(dst):
    """CAST16_SR_RANDOM random inputs per format: float32 (any bits, and around dst's
    range) and float64 (any bits, and around the range with random low bits)."""
    rng = rng_for("cast16-sr", dst.name)
    per = CAST16_SR_RANDOM // (2 * len(SR16_CONFIGS))
    n = 0
    for cfg in SR16_CONFIGS:
        for x in _random16_inputs(rng, dst, per):
            n += _sr16_compare(dst, x, cfg, f"cast {x.dtype} (random) -> {dst.name} {_sr_id(*cfg)}")
    assert n == len(SR16_CONFIGS) * 2 * per
    assert n >= min(CAST16_SR_RANDOM, 10**5) - 2 * len(SR16_CONFIGS)


# ==========================================================================
# 5. sums
# ==========================================================================

SUM_LENGTHS = (0, 1, 2, 15, 17, 1000, 100_003)
BIG_SUM = 20_000


def _sum_arrays(fmt):
    """(name, codes) of random and adversarial arrays."""
    rng = rng_for("sum", fmt.name)
    c = codes_all(fmt)
    with fast_mode(0):
        cls = np.array([fmt.classify(int(k)) for k in c])
        v, _ = sfb.to_float(c, fmt, np.float64, rounding="nearest_even", tininess="after")
    finite = c[(cls != "inf") & (cls != "qnan") & (cls != "snan")]
    special = c[(cls == "inf") | (cls == "qnan") | (cls == "snan")]
    zeros = c[cls == "zero"]
    pos_fin = c[np.isfinite(v) & (v > 0)]
    order = np.argsort(np.abs(v[pos_fin.astype(np.int64)]))
    top = pos_fin[order[-4:]]            # largest magnitudes
    small = c[cls == "subnormal"] if (cls == "subnormal").any() else pos_fin[order[:4]]
    neg = sfb.neg(fmt, pos_fin) if fmt.signed else None
    out = []
    for n in SUM_LENGTHS:
        out.append((f"random-finite-{n}", rng.choice(finite, n)))
        out.append((f"random-any-{n}", rng.choice(c, n)))
    for n in (1, 17, 1000):
        if zeros.size:   # (E8M0 has no zero)
            out.append((f"zeros-{n}", rng.choice(zeros, n)))      # both signs when signed
            out.append((f"pos-zeros-{n}", np.full(n, zeros.min(), fmt.storage)))
        out.append((f"near-overflow-{n}", rng.choice(top, n)))
        out.append((f"subnormal-{n}", rng.choice(small, n)))
        if special.size:
            a = rng.choice(finite, n)
            a[n // 2] = rng.choice(special)
            out.append((f"with-special-{n}", a))
    if fmt.signed:
        neg_zeros = zeros[zeros != zeros.min()]
        if neg_zeros.size:
            out.append(("neg-zeros", np.full(40, neg_zeros[0], fmt.storage)))
        for n in (1, 8, 500, 50_000):
            idx = rng.integers(0, pos_fin.size, n)
            both = np.concatenate([pos_fin[idx], neg[idx]])
            out.append((f"cancel-{n}", rng.permutation(both)))       # exact zero
            neg_top = neg[np.searchsorted(pos_fin, top)]
            both_top = np.concatenate([top[idx % top.size], neg_top[idx % top.size]])
            out.append((f"cancel-top-{n}", both_top))                 # overflowing partials
        if special.size:
            a = rng.permutation(np.concatenate([pos_fin, neg]))
            for s in special:
                b = a.copy()
                b[len(b) // 3] = s
                out.append((f"special-0x{int(s):02x}", b))
    return [(name, np.ascontiguousarray(a, dtype=fmt.storage)) for name, a in out]


@pytest.mark.parametrize("fmt", FORMATS8, ids=ID8)
@isolated
def test_sum(fmt):
    arrays = _sum_arrays(fmt)
    big = sum(1 for _, a in arrays if a.size > BIG_SUM)
    assert big >= 2
    n = 0
    for cfg in CONFIGS:
        for name, codes in arrays:
            if codes.size > BIG_SUM and cfg not in SOME_CONFIGS:
                continue  # the long arrays under every mode, not every combination
            x = codes.view(fmt.dtype)
            what = f"sum {fmt.name} {name} {cfg_id(cfg)}"
            with config(cfg):
                versus_core(lambda: x.sum(), what)
                versus_core(lambda: np.add.reduce(x), what + " add.reduce")
            n += 1
    assert n == 24 * (len(arrays) - big) + 6 * big


@pytest.mark.parametrize("fmt", FORMATS8, ids=ID8)
@isolated
def test_add_reduce_2d(fmt):
    rng = rng_for("reduce2d", fmt.name)
    with fast_mode(0):
        c = codes_all(fmt)
        cls = np.array([fmt.classify(int(k)) for k in c])
    finite = c[(cls != "inf") & (cls != "qnan") & (cls != "snan")]
    mats = [rng.choice(finite, (300, 37)), rng.choice(c, (64, 65)), rng.choice(finite, (5, 4000))]
    n = 0
    for cfg in SOME_CONFIGS:  # every rounding mode once
        for m in mats:
            x = np.ascontiguousarray(m, dtype=fmt.storage).view(fmt.dtype)
            for arr, lab in ((x, "C"), (x.T, "T"), (x[::2, ::-3], "strided")):
                for axis in (0, 1, None):
                    what = f"add.reduce {fmt.name} {m.shape} {lab} axis={axis} {cfg_id(cfg)}"
                    with config(cfg):
                        versus_core(lambda: np.add.reduce(arr, axis=axis), what)
                        versus_core(lambda: arr.sum(axis=axis), what + " .sum")
                    n += 1
    assert n == 6 * 3 * 3 * 3


# ==========================================================================
# 6. layouts, scalars, tiny arrays, kernel tails
# ==========================================================================

LAYOUT_FORMATS = [softfp8.e4m3, softfp8.e5m2fnuz, softfp8.cfloat8_143(bias=20), softfp8.hfp8_143,
                  FORMATS8[-3]]
LAYOUT_CONFIGS = [("nearest_even", False, "after"), ("upward", True, "before"),
                  ("to_odd", False, "before")]
TINY = (0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129)


def _views(a):
    """(label, view) of a 65,536-element 1-D array."""
    m = a.reshape(256, 256)
    return [("contig", a), ("step3", a[::3]), ("reversed", a[::-1]), ("T", m.T),
            ("T-strided", m[::2, 1::3].T), ("offset1", a[1:])]


@pytest.mark.parametrize("fmt", LAYOUT_FORMATS, ids=[fid(f) for f in LAYOUT_FORMATS])
@isolated
def test_layout_binary_unary(fmt):
    x, y = PA.view(fmt.dtype), PB.view(fmt.dtype)
    sc = y[0x3B]  # a softfp8 scalar
    n = 0
    for cfg in LAYOUT_CONFIGS:
        with config(cfg):
            for (lab, xa), (_, yb) in zip(_views(x), _views(y)):
                for name in ("add", "multiply", "true_divide", "maximum", "nextafter", "less"):
                    uf = getattr(np, name)
                    versus_core(lambda: uf(xa, yb), f"{fmt.name} {name} {lab} {cfg_id(cfg)}")
                    n += 1
                for name in ("sqrt", "negative", "isnan", "rint"):
                    uf = getattr(np, name)
                    versus_core(lambda: uf(xa), f"{fmt.name} {name} {lab} {cfg_id(cfg)}")
                    n += 1
                versus_core(lambda: xa.astype(np.float32), f"{fmt.name} ->f32 {lab}")
                versus_core(lambda: xa.astype(softfp8.bfloat16.dtype), f"{fmt.name} ->bf16 {lab}")
                n += 2
            # broadcasting: a column of one element, scalars on either side
            for lab, fn in [("a+b[0:1]", lambda: x + y[5:6]), ("b[0:1]+a", lambda: y[5:6] + x),
                            ("a*scalar", lambda: x * sc), ("scalar*a", lambda: sc * x),
                            ("a/scalar", lambda: np.true_divide(x, sc)),
                            ("2d-bcast", lambda: x.reshape(256, 256) - y[:256].reshape(1, 256)),
                            ("2d-bcast-col",
                             lambda: x.reshape(256, 256) * y[:256].reshape(256, 1))]:
                versus_core(fn, f"{fmt.name} {lab} {cfg_id(cfg)}")
                n += 1
            # strided and aliased outputs
            out = np.zeros(2 * NPAIRS, fmt.storage).view(fmt.dtype)
            versus_core(lambda: np.add(x, y, out=out[::2]).copy(), f"{fmt.name} out strided")
            versus_core(lambda: np.multiply(x.copy(), y, out=None), f"{fmt.name} copy")

            def inplace():
                z = x.copy()
                np.subtract(z, y, out=z)
                return z

            versus_core(inplace, f"{fmt.name} in place {cfg_id(cfg)}")
            n += 3
    assert n == 3 * (6 * 12 + 7 + 3)


def _float_inputs(rng, fmt, dtype, n):
    """float32/float64 values around fmt's range (and a few specials)."""
    f32 = random_in_range_f32(rng, fmt, n).view(np.float32)
    x = f32.astype(dtype)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, 1e-30], dtype)
    x[::7] = specials[np.arange(x[::7].size) % 7]
    return x


@pytest.mark.parametrize("fmt", LAYOUT_FORMATS, ids=[fid(f) for f in LAYOUT_FORMATS])
@isolated
def test_layout_float_inputs(fmt):
    """Unaligned, byte-swapped, strided float32/float64 (and float16) inputs of casts."""
    rng = rng_for("layout-float", fmt.name)
    n = 0
    for cfg in LAYOUT_CONFIGS:
        with config(cfg):
            for dtype in (np.float32, np.float64, np.float16):
                x = _float_inputs(rng, fmt, dtype, 4099)
                size = x.itemsize
                buf = np.zeros(x.nbytes + 1, np.uint8)
                buf[1:] = x.view(np.uint8)
                unaligned = buf[1:].view(dtype)
                if size > 1:
                    assert not unaligned.flags.aligned
                swapped = x.astype(np.dtype(dtype).newbyteorder(">"))
                assert not swapped.dtype.isnative
                cases = [("contig", x), ("unaligned", unaligned), ("byteswapped", swapped),
                         ("step3", x[::3]), ("reversed", x[::-1]),
                         ("T", x[:4096].reshape(64, 64).T)]
                for lab, arr in cases:
                    what = f"{np.dtype(dtype).name} {lab} -> {fmt.name} {cfg_id(cfg)}"
                    ref, _ = versus_core(lambda: arr.astype(fmt.dtype), what)
                    n += 1
                    # same codes as the contiguous native cast of the same values
                    with fast_mode(0):
                        plain = np.ascontiguousarray(arr, dtype=np.dtype(dtype)).astype(fmt.dtype)
                    assert np.array_equal(raw(ref), raw(plain)), what
                # and mixed operations that cast on the fly
                versus_core(lambda: PA[:4099].view(fmt.dtype) + x, f"{fmt.name} + {dtype}")
                n += 1
    assert n == 3 * 3 * 7


def _quiet_noisy(fmt, name):
    """Operand pairs whose result raises no flag, and pairs that raise some (core)."""
    fn = ARITH.get(name) or SELECT_BITS.get(name)
    with fast_mode(0):
        _, fl = fn(fmt, PA, PB)
    quiet = np.nonzero(fl == 0)[0]
    noisy = np.nonzero(fl != 0)[0]
    return quiet, noisy


@pytest.mark.parametrize("fmt", LAYOUT_FORMATS, ids=[fid(f) for f in LAYOUT_FORMATS])
@isolated
def test_tiny_lengths_and_tails(fmt):
    """Short calls at several offsets inside buffers whose other elements raise flags:
    a kernel that reads past the end (or mishandles its tail) shows up in the flags."""
    rng = rng_for("tiny", fmt.name)
    n = 0
    for cfg in LAYOUT_CONFIGS:
        with config(cfg):
            for name in ("add", "multiply", "true_divide"):
                uf = getattr(np, name)
                quiet, noisy = _quiet_noisy(fmt, name)
                for length in TINY:
                    for off in (0, 1, 7):
                        # noisy background, quiet window [off, off + length)
                        idx = rng.choice(noisy, 512)
                        idx[off:off + length] = rng.choice(quiet, length)
                        a, b = PA[idx], PB[idx]
                        xa, yb = a.view(fmt.dtype), b.view(fmt.dtype)
                        what = f"{fmt.name} {name} n={length} off={off} {cfg_id(cfg)}"
                        _, f = versus_core(lambda: uf(xa[off:off + length], yb[off:off + length]),
                                           what)
                        assert f == 0, what  # the window itself is quiet (core)
                        # and a random window of the same shape
                        versus_core(lambda: uf(xa[off + 100:off + 100 + length],
                                               yb[off + 100:off + 100 + length]), what + " noisy")
                        n += 2
            # casts and unary ops at the same lengths
            c = rng.integers(0, 256, 512).astype(np.uint8)
            xc = c.view(fmt.dtype)
            f32 = _float_inputs(rng, fmt, np.float32, 512)
            f64 = f32.astype(np.float64)
            for length in TINY:
                for off in (0, 1, 7):
                    sl = slice(off, off + length)
                    for lab, fn in [("->f32", lambda: xc[sl].astype(np.float32)),
                                    ("->f64", lambda: xc[sl].astype(np.float64)),
                                    ("->f16", lambda: xc[sl].astype(np.float16)),
                                    ("->e5m2", lambda: xc[sl].astype(softfp8.e5m2.dtype)),
                                    ("->bf16", lambda: xc[sl].astype(softfp8.bfloat16.dtype)),
                                    ("f32->", lambda: f32[sl].astype(fmt.dtype)),
                                    ("f64->", lambda: f64[sl].astype(fmt.dtype)),
                                    ("sqrt", lambda: np.sqrt(xc[sl])),
                                    ("reciprocal", lambda: np.reciprocal(xc[sl])),
                                    ("isinf", lambda: np.isinf(xc[sl])),
                                    ("sum", lambda: xc[sl].sum())]:
                        versus_core(fn, f"{fmt.name} {lab} n={length} off={off} {cfg_id(cfg)}")
                        n += 1
    assert n == 3 * (3 * len(TINY) * 3 * 2 + len(TINY) * 3 * 11)


@pytest.mark.parametrize("fmt", LAYOUT_FORMATS, ids=[fid(f) for f in LAYOUT_FORMATS])
@isolated
def test_cast_tails_quiet_window(fmt):
    """float32 -> fmt and fmt -> float casts: a quiet window inside a noisy buffer."""
    n = 0
    cfg = ("nearest_even", False, "after")
    with fast_mode(0):
        vals, vfl = sfb.to_float(codes_all(fmt), fmt, np.float32, **bits_opts(cfg))
        back, bfl = sfb.from_float(vals, fmt, **bits_opts(cfg))
    exact_f32 = vals[(bfl == 0) & np.isfinite(vals)]     # converting back raises nothing
    noisy_f32 = np.array([1e30, -1e30, np.nan, 1e-30], np.float32)
    quiet_codes = codes_all(fmt)[vfl == 0]
    noisy_codes = codes_all(fmt)[vfl != 0]
    rng = rng_for("tails", fmt.name)
    with config(cfg):
        for length in TINY:
            for off in (0, 3):
                x = rng.choice(noisy_f32, 300)
                x[off:off + length] = rng.choice(exact_f32, length)
                _, f = versus_core(lambda: x[off:off + length].astype(fmt.dtype),
                                   f"f32->{fmt.name} n={length} off={off}")
                assert f == 0
                n += 1
                if noisy_codes.size:
                    c = rng.choice(noisy_codes, 300)
                    c[off:off + length] = rng.choice(quiet_codes, length)
                    xc = c.view(fmt.dtype)
                    for dt in (np.float32, np.float64, np.float16, softfp8.e5m2.dtype):
                        versus_core(lambda: xc[off:off + length].astype(dt),
                                    f"{fmt.name}->{np.dtype(dt)} n={length} off={off}")
                        n += 1
    per = 1 + (4 if (vfl != 0).any() else 0)
    assert n == len(TINY) * 2 * per


# ==========================================================================
# 7. environment switches
# ==========================================================================

def _child(env_extra, code):
    env = dict(os.environ)
    env.pop("SOFTFP8_FAST", None)
    env.pop("SOFTFP8_SIMD", None)
    env.update(env_extra)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(REPO),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_env_switches():
    code = "from softfp8 import _ext; print(_ext.fast_enabled(), _ext.simd_level())"
    fast, simd = _child({"SOFTFP8_FAST": "0"}, code).split()
    assert fast == "0"
    fast, simd = _child({"SOFTFP8_SIMD": "0"}, code).split()
    assert simd == "0" and fast == "1"
    fast, simd = _child({"SOFTFP8_SIMD": "1"}, code).split()
    assert simd == str(min(1, CPU_SIMD)) and fast == "1"
    fast, simd = _child({"SOFTFP8_FAST": "2"}, code).split()
    assert fast == "2" and simd == str(DEFAULT_SIMD)
    fast, simd = _child({}, code).split()
    assert fast == "1" and simd == str(DEFAULT_SIMD)
    # with the fast paths off from the start, results are still the core's
    out = _child({"SOFTFP8_FAST": "0", "SOFTFP8_SIMD": "0"},
                 "import numpy as np, softfp8; from softfp8 import _ext\n"
                 "a = np.arange(256, dtype=np.uint8).view(softfp8.e4m3)\n"
                 "with np.errstate(all='ignore'): r = np.multiply(a, a[::-1])\n"
                 "print(_ext.fast_enabled(), _ext.simd_level(), r.view(np.uint8).sum())")
    with fast_mode(0), np.errstate(all="ignore"):
        a = np.arange(256, dtype=np.uint8).view(softfp8.e4m3)
        want = int(np.multiply(a, a[::-1]).view(np.uint8).sum())
    assert out.split() == ["0", "0", str(want)]
