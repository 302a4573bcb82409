"""Shared fixtures and hooks of the softfp8 tests (no reference model here).

The reference models live in ``tests/models/``; the ``ref`` fixture returns
``tests.models.fraction_model`` (``ref.round_value(...)``, ``ref.decode(...)``, ...).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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


@pytest.fixture(scope="session")
def ref():
    """The Fraction reference model (tests.models.fraction_model)."""
    return fraction_model
