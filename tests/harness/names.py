"""The names the registry must hold: every fast family and every matrix path.

They come from the engine itself: softfp8._ext.fast_families() (the rows of
softfp8/_core/fast/families.def) and softfp8._ext.matrix_paths() (the rows of
softfp8/_core/mm/mm_paths.def).  A row added there without a registry entry, or an
entry whose row was removed, fails test_guard.py.
"""
from __future__ import annotations

from softfp8 import _ext


def hooks_present() -> bool:
    return hasattr(_ext, "fast_families") and hasattr(_ext, "matrix_paths")


def counts_present() -> bool:
    return all(hasattr(_ext, n) for n in ("fast_family_counts", "reset_fast_family_counts",
                                           "matrix_path_counts", "reset_matrix_path_counts"))


def family_rows():
    """[{'name', 'levels', 'what', 'space'}] of the families table."""
    return list(_ext.fast_families())


def matrix_rows():
    """[{'name', 'levels', 'what'}] of the matrix engine's paths table."""
    return list(_ext.matrix_paths())


def expected_names() -> set:
    """registry names must equal this set: fast_families() names | matrix_paths() names."""
    return {r["name"] for r in family_rows()} | {r["name"] for r in matrix_rows()}


def levels_of(name):
    """The SIMD levels with their own kernel for one entry (from the hooks), or None."""
    for r in family_rows() + matrix_rows():
        if r["name"] == name:
            return tuple(r["levels"])
    return None
