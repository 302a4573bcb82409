"""Shared fixtures and hooks of the softfp8 tests (no reference model here).

The reference models live in ``tests/models/``; the ``ref`` fixture returns
``tests.models.fraction_model`` (``ref.round_value(...)``, ``ref.decode(...)``, ...).
"""

from __future__ import annotations

import contextlib
import os
import zlib
from pathlib import Path

import pytest

from softfp8 import _ext

from .models import fraction_model

# --------------------------------------------------------------------------
# vectors directory
# --------------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent


def vectors_path() -> Path:
    """SOFTFP8_VECTORS if set, else <repo>/../shared/vectors."""
    env = os.environ.get("SOFTFP8_VECTORS")
    if env:
        return Path(env)
    return REPO.parent / "shared" / "vectors"


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    p = vectors_path()
    assert p.is_dir(), f"test-vector directory {p} not found (set SOFTFP8_VECTORS)"
    return p


def pytest_configure(config):
    config.addinivalue_line("markers", "vectors: runs the TestFloat reference vectors")
    config.addinivalue_line("markers", "slow: long-running statistical or exhaustive test")
    config.addinivalue_line("markers", "core: compares the exact core with an independent reference; runs with "
                                       "the fast paths off (SOFTFP8_FAST=0 ... -m core, docs/testing.md)")
    config.addinivalue_line("markers", "proof: a long exhaustive or large random proof (PROOFS below): CI runs "
                                       "it in its own step, .ci/proofs, not in the README's command")


# --------------------------------------------------------------------------
# the two passes of the README's command (docs/testing.md, "The two passes")
# --------------------------------------------------------------------------

# Tests that prove the exact core (and the matrix engine's reference kernels) against
# independent references: marked `core`, they run once, with the fast paths off
# (`SOFTFP8_FAST=0 python -m pytest -m core`); every other test runs once with the fast
# paths on (`-m "not core"`).  The differential harness (tests/harness) proves every
# fast path equal to the core, so a reference result proven for the core holds for the
# fast paths and the reference tests need not run twice.
CORE_PASS = (
    "tests/core/",
    "tests/numpy_glue/test_gemm.py",
    "tests/fast/test_matmul_exact.py",
)


# The long proofs: exhaustive sweeps of 16-bit sources and of every 8-bit pair through
# the elementary functions, 10^6 random fma triples per 8-bit format, and a wheel built
# from scratch.  Marked `proof`, they leave the README's command (whose passes select
# `not proof`) for CI's step .ci/proofs, which runs the `core` ones with the fast paths
# off and the others with them on, as the passes would (docs/testing.md, "The proofs
# step").  The README's passes keep, for each, the smaller tests of the same code: the
# 8-bit exhaustive conversions and arithmetic, the 16-bit random sweeps, the fma specials
# and the harness.
PROOFS = (
    "tests/core/test_fma_random.py::test_fma_random",
    "tests/core/test_conversions.py::test_16bit_to_8bit",
    "tests/core/test_conversions.py::test_float64_to_8bit",
    "tests/core/test_elementary.py::test_unary_16bit_exhaustive",
    "tests/core/test_elementary.py::test_binary_8bit_exhaustive",
    "tests/core/test_p3109_c.py::test_unary_every_code",
    "tests/core/test_p3109_c.py::test_binary_every_pair",
    "tests/core/test_p3109_c.py::test_ternary_sampled",
    "tests/tools/test_libsoftfp8.py::test_fresh_wheel_install_links_the_example",
)


def _is_proof(item):
    return item.nodeid.split("[")[0] in PROOFS


def _in_core_pass(item):
    rel = Path(str(item.fspath)).resolve().relative_to(REPO).as_posix()
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in CORE_PASS)


# --------------------------------------------------------------------------
# the fast-path switches (process-wide)
# --------------------------------------------------------------------------

@contextlib.contextmanager
def fast_level(n):
    """The fast paths at level n (0 off, 1 on, 2 eager) for a block."""
    prev = _ext.set_fast(n)
    try:
        yield
    finally:
        _ext.set_fast(prev)


@pytest.fixture
def restore_fast_switches():
    """Whatever the test does, the fast-path level and the SIMD level come back."""
    fast, simd = _ext.fast_enabled(), _ext.simd_level()
    yield
    _ext.set_fast(fast)
    _ext.set_simd(simd)


@pytest.fixture(scope="session")
def ref():
    """The Fraction reference model (tests.models.fraction_model)."""
    return fraction_model


# --------------------------------------------------------------------------
# sampling of the exhaustive tests (the CI's sanitizer job, .ci/run)
# --------------------------------------------------------------------------

# files whose tests sweep whole code spaces, and every `core` test (tests that prove the
# core against slow references, whose C code the harness also runs as its reference under
# the sanitizer); SOFTFP8_SAMPLE=k keeps one of their tests in k (chosen by a hash of the
# test id, so the same ones every run), and at least one parametrization of each test
# function, and every other test (the harness samples its own cases:
# tests/harness/test_harness.py)
EXHAUSTIVE_FILES = {
    "test_exhaustive.py", "test_numpy_exhaustive.py", "test_testfloat.py", "test_fma_random.py",
    "test_stochastic.py", "test_op_table.py", "test_exact_functions.py", "test_peer_half.py", "test_elementary.py",
    "test_elementary_binary.py", "test_elementary_unary.py", "test_tesla.py", "test_new_presets.py",
}
# sampled the same way: the files whose tests repeat one Python-level check over many
# formats, modes or CLI invocations (most of their time is Python and subprocesses, slow
# under the sanitizer; the C paths they reach are the ones the harness and the core tests
# run there)
SWEEP_FILES = {
    "test_order.py", "test_numpy_legacy_paths.py", "test_coverage.py", "test_vectors.py", "test_cli.py",
    "test_golden_conventions.py", "test_pyscalar_layouts.py", "test_dask.py", "test_mx.py", "test_demo.py",
    "test_float16_like.py",
}


def pytest_collection_modifyitems(config, items):
    for it in items:
        if _in_core_pass(it):
            it.add_marker("core")
        if _is_proof(it):
            it.add_marker("proof")
    k = os.environ.get("SOFTFP8_SAMPLE")
    if not k:
        return
    k = int(k)
    keep, drop, functions = [], [], set()
    for it in items:
        name = Path(str(it.fspath)).name
        heavy = (name in EXHAUSTIVE_FILES or name in SWEEP_FILES or name.startswith("test_elementary")
                 or _in_core_pass(it))
        function = it.nodeid.split("[")[0]
        if heavy and zlib.crc32(it.nodeid.encode()) % k and function in functions:
            drop.append(it)
        else:
            keep.append(it)
            functions.add(function)
    items[:] = keep
    config.hook.pytest_deselected(items=drop)
