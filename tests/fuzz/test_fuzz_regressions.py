"""Findings of the repository's fuzzer, pinned as plain tests (literal expected codes)."""

import numpy as np
import pytest

import softfp8
from softfp8 import _ext, bits


@pytest.mark.parametrize("fast", [0, 1, 2])
def test_positive_masks_codes_wider_than_the_format(fast):
    """Fuzz seed 1: np.positive returned storage bits above a 12-bit
    format's width from the exact core (SPEC §8: results never set them)."""
    f = softfp8.format(exp_bits=5, man_bits=6, bias=15, specials="fn", name="fz_pos12")
    raw = np.array([0x98B8, 0x0B4A, 0xF00F, 0x0FFF], dtype=np.uint16)
    want = np.array([0x08B8, 0x0B4A, 0x000F, 0x0FFF], dtype=np.uint16)
    prev = _ext.set_fast(fast)
    try:
        got = np.positive(raw.view(f.dtype)).view(np.uint16)
        got_scalar_loop = np.positive(raw[::-1].view(f.dtype)).view(np.uint16)[::-1]
    finally:
        _ext.set_fast(prev)
    assert np.array_equal(got, want)
    assert np.array_equal(got_scalar_loop, want)
    with pytest.raises(ValueError, match="61455"):  # softfp8.bits refuses such codes instead
        bits.pos(f, raw)
