"""Switches, observation and comparison of the differential harness.

A Case is one call of a public entry point (a ufunc, a cast, softfp8.matmul, ...) written
as fn(g), g a NumPy Generator used to fill output buffers with fresh garbage on every run
(a kernel that reads output it has not written gives a different answer).  prove(case)
runs it with the exact core (``_ext.set_fast(0)``, what SOFTFP8_FAST=0 runs) and then
with every fast variant -- eager tables (``set_fast(2)``) at every SIMD level the machine
has and the default length-gated mode (``set_fast(1)``) -- and compares the results as
raw bytes (NaN payloads included), their dtypes and shapes, the OR-flags seen by
``softfp8.collect_flags()``, any exception (type and message), and, when the case has a
``softfp8.bits`` form, its per-element flags.  It returns the list of disagreements (empty
when the case is proven), each with a reproducer: the case id and the first differing
element's input codes.
"""
from __future__ import annotations

import contextlib
import dataclasses
import zlib
from typing import Any, Callable, Optional, Sequence

import numpy as np

import softfp8
from softfp8 import _ext


def _cpu_simd():
    prev = _ext.set_simd(2)
    try:
        return _ext.simd_level()
    finally:
        _ext.set_simd(prev)


CPU_SIMD = _cpu_simd()                       # 2 AVX-512, 1 AVX2, 0 portable only
LEVELS = tuple(range(CPU_SIMD, -1, -1))      # every SIMD level the machine runs, best first
# fast variants compared with the core: eager tables at every level, and the default mode
VARIANTS = tuple([(2, s) for s in LEVELS] + [(1, LEVELS[0])])
EAGER = tuple((2, s) for s in LEVELS)
CORE = (0, 0)


@contextlib.contextmanager
def switches(fast, simd):
    """Fast-path level (0 core, 1 on, 2 eager) and SIMD level; both restored after."""
    pf, ps = _ext.set_fast(fast), _ext.set_simd(simd)
    try:
        assert _ext.simd_level() == simd, f"SIMD level {simd} not available"
        yield
    finally:
        _ext.set_simd(ps)
        _ext.set_fast(pf)


def seed_of(*key) -> int:
    return zlib.crc32(repr(key).encode())


def rng_of(*key) -> np.random.Generator:
    return np.random.default_rng(seed_of(*key))


def raw(x) -> np.ndarray:
    """Element bit patterns (flat, unsigned, a copy) of an array or scalar."""
    a = np.ascontiguousarray(np.asarray(x)).reshape(-1)
    if a.dtype.itemsize not in (1, 2, 4, 8):
        return a.view(np.uint8).copy()
    return a.view(np.dtype(f"u{a.dtype.itemsize}")).copy()


def garbage(g, shape, dtype) -> np.ndarray:
    """An array of random bytes (the caller's g: fresh on every run)."""
    dt = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    return np.frombuffer(g.bytes(n), dtype=np.uint8).copy().view(dt).reshape(shape)


@dataclasses.dataclass
class Outcome:
    parts: list            # [(dtype str, shape, raw bits)] of each result array
    flags: int             # OR-flags (collect_flags), -1 if it raised
    error: Optional[str]   # "Type: message" if it raised


def observe(fn, g) -> Outcome:
    try:
        with np.errstate(all="ignore"), softfp8.collect_flags() as fl:
            r = fn(g)
    except Exception as e:  # noqa: BLE001 -- the fast paths must raise exactly what the core raises
        return Outcome([], -1, f"{type(e).__name__}: {e}")
    parts = r if isinstance(r, (tuple, list)) else (r,)
    out = []
    for p in parts:
        a = np.asarray(p)
        out.append((str(a.dtype), a.shape, raw(a)))
    return Outcome(out, int(fl.flags), None)


@dataclasses.dataclass
class Case:
    """One call compared with the core.

    fn(g): the call (g fills garbage outputs); count: result elements it compares;
    bits(): the same computation through softfp8.bits, returning (codes, flags) (or a tuple
    of code arrays and the flags last), compared element by element; inputs: flat input
    code arrays aligned with the (flat) result, to name a mismatch's operands;
    variants: the fast variants to run (default VARIANTS)."""
    id: str
    fn: Callable[[np.random.Generator], Any]
    count: int
    bits: Optional[Callable[[], Any]] = None
    inputs: Sequence = ()
    variants: Sequence = VARIANTS
    exhaustive: bool = False


def _describe(inputs, i):
    parts = []
    for inp in inputs:
        v = raw(inp)
        if v.size == 1:
            parts.append(f"0x{int(v[0]):x}")
        elif 0 <= i < v.size:
            parts.append(f"0x{int(v[i]):x}")
    return f" inputs ({', '.join(parts)})" if parts else ""


def _diff(got: Outcome, ref: Outcome, tag, inputs) -> Optional[str]:
    if got.error or ref.error:
        if got.error != ref.error:
            return f"{tag}: fast {got.error or 'computes'}, core {ref.error or 'computes'}"
        return None
    if len(got.parts) != len(ref.parts):
        return f"{tag}: {len(got.parts)} results, core {len(ref.parts)}"
    for k, ((dt, sh, gb), (rdt, rsh, rb)) in enumerate(zip(got.parts, ref.parts)):
        part = f" [result {k}]" if len(ref.parts) > 1 else ""
        if dt != rdt or sh != rsh:
            return f"{tag}{part}: {dt}{sh}, core {rdt}{rsh}"
        if not np.array_equal(gb, rb):
            bad = np.nonzero(gb != rb)[0]
            i = int(bad[0])
            return (f"{tag}{part}: {bad.size} of {gb.size} elements differ; first at {i}"
                    f"{_describe(inputs, i)}: fast 0x{int(gb[i]):x}, core 0x{int(rb[i]):x}")
    if got.flags != ref.flags:
        return f"{tag}: OR-flags fast 0x{got.flags:02x}, core 0x{ref.flags:02x}"
    return None


def _bits_parts(r):
    """softfp8.bits results as a flat list of arrays: codes (maybe two), then flags."""
    out = []
    for p in (r if isinstance(r, tuple) else (r,)):
        if isinstance(p, tuple):
            out.extend(p)
        else:
            out.append(p)
    return out


def prove(case: Case, stats=None) -> list:
    """The disagreements of one case (empty: fast == core everywhere)."""
    fails = []
    with switches(*CORE):
        ref = observe(case.fn, rng_of(case.id, "core"))
    first, bad = None, []
    for k, (level, simd) in enumerate(case.variants):
        with switches(level, simd):
            got = observe(case.fn, rng_of(case.id, k))
        d = _diff(got, ref, case.id, case.inputs)
        if d:
            first = first or d
            bad.append(f"fast={level} simd={simd}")
    if first:
        # one line per case: the first variant's mismatch, and every variant that failed
        fails.append(f"{first} [{'; '.join(bad)}]")
    if case.bits is not None and not fails:
        with switches(*CORE):
            rb = _bits_parts(case.bits())
        for simd in LEVELS:
            with switches(2, simd):
                gb = _bits_parts(case.bits())
            for k, (x, y) in enumerate(zip(gb, rb)):
                what = "per-element flags" if k == len(rb) - 1 else "codes"
                d = _diff(Outcome([(str(np.asarray(x).dtype), np.shape(x), raw(x))], 0, None),
                          Outcome([(str(np.asarray(y).dtype), np.shape(y), raw(y))], 0, None),
                          f"{case.id} [softfp8.bits {what}, simd={simd}]", case.inputs)
                if d:
                    fails.append(d)
                    break
            if fails:
                break
    if stats is not None:
        stats["cases"] += 1
        stats["elements"] += case.count
        stats["exhaustive"] += case.count if case.exhaustive else 0
    return fails


def same_part(a: Outcome, b: Outcome) -> bool:
    return _diff(a, b, "", ()) is None
