"""The names the registry must hold: every fast family and every matrix path.

############################################################################
#  SWITCH AT MERGE (lead): the contract's hooks (/work/notes/contract.md)
#  softfp8._ext.fast_families() and softfp8._ext.matrix_paths() are being
#  written on the h-fast and h-mm branches.  Until they are on main the
#  expected names are the PROVISIONAL lists below.  When both hooks exist,
#  expected_names() reads them and the lists are no longer used: delete
#  PROVISIONAL_FAMILIES / PROVISIONAL_MATRIX_PATHS and the fallback branch,
#  and rename registry entries (families.py / matrix.py, the @entry names)
#  wherever the final names differ.
############################################################################
"""
from __future__ import annotations

from softfp8 import _ext

# the contract's provisional family names (h-fast may rename)
PROVISIONAL_FAMILIES = (
    "binary8", "unary", "fma8", "sum8", "arith16", "order16", "convert", "from_float8", "cast16",
    "sr_arith8", "sr_arith16", "sr_unary8", "sr_wide", "sr_fma", "sr_convert8", "sr_from_float8",
    "sr_cast16",
)

# the matrix paths of today's main (npy/matmul.c, gemm.c); h-mm names the final ones
PROVISIONAL_MATRIX_PATHS = (
    "mm_blas8",        # npy/matmul.c matmul_blas_tables: 8-bit formats, certified BLAS dgemm
    "mm_ziv",          # npy/matmul.c matmul_blas_ziv: binary64-valued formats, Ziv-certified dgemm
    "gemm_f64",        # gemm.c sfp8g_gemm_f64: exact model finished from a float64 GEMM (scaled_mm, mixed)
    "gemm_exact8",     # gemm.c exact_block: exact model, 8-bit operands, integer products
    "gemm_model",      # gemm.c fast_block: accumulation models, binary64 kernel
    "gemm_fma16",      # gemm.c fma16_block: 16-bit accumulators by their fma
)


def hooks_present() -> bool:
    return hasattr(_ext, "fast_families") and hasattr(_ext, "matrix_paths")


def counts_present() -> bool:
    return all(hasattr(_ext, n) for n in ("fast_family_counts", "reset_fast_family_counts",
                                           "matrix_path_counts", "reset_matrix_path_counts"))


def family_rows():
    """[{'name', 'levels', 'what'}] of the families table (or the provisional names)."""
    if hooks_present():
        return list(_ext.fast_families())
    return [{"name": n, "levels": (0, 1, 2), "what": "provisional"} for n in PROVISIONAL_FAMILIES]


def matrix_rows():
    if hooks_present():
        return list(_ext.matrix_paths())
    return [{"name": n, "levels": (0, 1, 2), "what": "provisional"} for n in PROVISIONAL_MATRIX_PATHS]


def expected_names() -> set:
    """registry names must equal this set: fast_families() names | matrix_paths() names."""
    return {r["name"] for r in family_rows()} | {r["name"] for r in matrix_rows()}


def levels_of(name):
    """The SIMD levels with their own kernel for one entry (from the hooks), or None."""
    if not hooks_present():
        return None
    for r in family_rows() + matrix_rows():
        if r["name"] == name:
            return tuple(r["levels"])
    return None
