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


def test_load_of_a_file_marked_encrypted_is_a_clean_error():
    """Long fuzz run, seeds 13 and 42: a corrupted file whose zip entry has the
    'encrypted' flag bit set made softfp8.load raise zipfile's RuntimeError."""
    import io
    import zipfile
    buf = io.BytesIO()
    softfp8.save(buf, np.arange(8, dtype=np.uint8).view(softfp8.e4m3.dtype))
    data = bytearray(buf.getvalue())
    k = data.find(b"PK\x01\x02")  # central directory entry of the first member
    assert k > 0
    data[k + 8] |= 1  # general purpose flag: encrypted
    with pytest.raises(RuntimeError):  # what zipfile itself does
        with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
            z.open(z.namelist()[0]).read()
    with pytest.raises(ValueError, match="corrupted softfp8 array file"):
        softfp8.load(io.BytesIO(bytes(data)))


@pytest.mark.parametrize("fast", [0, 2])
def test_spacing_of_zero_in_a_flush_format(fast):
    """Sanitizer fuzz run, seeds 4 and 58: spacing(+-0) in a format that flushes
    subnormals passed a zero significand to round-and-pack (clz(0), undefined).  The
    next value above 0 is the smallest normal (subnormal codes read as zero)."""
    f = softfp8.format(exp_bits=4, man_bits=3, bias=7, subnormals="flush", name="fz_flush_sp")
    prev = _ext.set_fast(fast)
    try:
        got = np.spacing(np.array([0x00, 0x80, 0x01], dtype=np.uint8).view(f.dtype)).view(np.uint8)
        codes, flags = bits.spacing(f, np.array([0x00, 0x80], dtype=np.uint8))
    finally:
        _ext.set_fast(prev)
    assert got[:2].tolist() == [0x08, 0x88]   # +-2^-6, the smallest normal
    assert codes.tolist() == [0x08, 0x88] and not flags.any()
