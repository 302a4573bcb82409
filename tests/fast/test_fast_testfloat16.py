"""Berkeley TestFloat binary16 vectors through the 16-bit fast paths at every SIMD level.

The files of <vectors>/testfloat-f16/ for add, sub, mul, div and mulAdd (every
rounding mode and tininess rule) run through softfp8.bits with eager fast paths
(``_ext.set_fast(2)``) at each SIMD level the machine has: the AVX-512 and AVX2
kernels of fast_simd.c and the portable loop of round_f64.c, with per-element
flags.  Expected results and flags come from the files (an external reference);
parsing and NaN classes as in tests/core/test_testfloat.py.
"""
import numpy as np
import pytest

import softfp8
import softfp8.bits as sb
from softfp8 import _ext

from ..core.test_testfloat import CASES, ROUNDING, TININESS, WIDTHS, nan16, parse
from ..harness.machinery import LEVELS as SIMD_LEVELS, switches as fast_mode

pytestmark = pytest.mark.vectors

FUNCS = {"f16_add": sb.add, "f16_sub": sb.sub, "f16_mul": sb.mul, "f16_div": sb.div,
         "f16_mulAdd": sb.fma}


@pytest.mark.parametrize("fn", sorted(FUNCS))
def test_vectors_every_simd_level(vectors_dir, fn):
    compared = 0
    for rm, rounding in ROUNDING.items():
        for tn in TININESS:
            path = vectors_dir / "testfloat-f16" / f"{fn}_{rm}_{tn}.txt.gz"
            assert path.is_file(), f"missing vector file {path}"
            cols, nlines = parse(path, WIDTHS[fn])
            assert nlines == CASES[fn]
            *ops, expected, exp_flags = cols
            ops = [o.astype(np.uint16) for o in ops]
            exp_nan = nan16(expected, 5)
            for simd in SIMD_LEVELS:
                with fast_mode(2, simd):
                    before = _ext.fast_cache_stats()
                    got, flags = FUNCS[fn](softfp8.float16, *ops, rounding=rounding, tininess=tn)
                    after = _ext.fast_cache_stats()
                assert after["hits"] + after["builds"] > before["hits"] + before["builds"], \
                    f"{path.name} simd={simd}: the fast path did not run"
                got = np.asarray(got).astype(np.uint64)
                flags = np.asarray(flags) & np.uint8(0xFF ^ 0x20)  # denormal flag masked
                bad = (nan16(got, 5) != exp_nan) | (~exp_nan & (got != expected)) | (flags != exp_flags)
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    opstr = " ".join(f"{int(o[i]):04X}" for o in ops)
                    pytest.fail(f"{path.name} simd={simd}: {int(bad.sum())} of {nlines} differ; first "
                                f"{opstr} -> expected {int(expected[i]):04X}/{int(exp_flags[i]):02X}, "
                                f"got {int(got[i]):04X}/{int(flags[i]):02X}")
                compared += nlines
    assert compared == 12 * CASES[fn] * len(SIMD_LEVELS)
