"""Berkeley TestFloat 3e vectors (binary16 / bfloat16), bit- and flag-exact.

Every file of <vectors>/testfloat-f16/ is run against softfp8.bits with the
file's rounding mode and tininess rule.  See <vectors>/README.md for the format:
operands, expected result, expected flags (hex, one case per line); the denormal
flag 0x20 is masked off; NaN results are compared by class.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import softfp8
import softfp8.bits as sb

pytestmark = pytest.mark.vectors

FUNCTIONS = ("f16_add", "f16_sub", "f16_mul", "f16_div", "f16_mulAdd", "f16_sqrt",
             "f32_to_f16", "f64_to_f16", "f16_to_f32", "f32_to_bf16", "bf16_to_f32")
ROUNDING = {"near_even": "nearest_even", "minMag": "toward_zero", "min": "downward",
            "max": "upward", "near_maxMag": "nearest_away", "odd": "to_odd"}
TININESS = ("after", "before")

# number of cases of each function in every file (README: 46,464 for
# add/sub/mul/div, 200,000 for mulAdd; the others are the level-1 sets)
CASES = {"f16_add": 46464, "f16_sub": 46464, "f16_mul": 46464, "f16_div": 46464,
         "f16_mulAdd": 200000, "f16_sqrt": 408, "f16_to_f32": 408, "f32_to_f16": 600,
         "f64_to_f16": 768, "f32_to_bf16": 600, "bf16_to_f32": 600}

# hex digits per column: operands..., result (flags byte is appended)
WIDTHS = {"f16_add": (4, 4, 4), "f16_sub": (4, 4, 4), "f16_mul": (4, 4, 4),
          "f16_div": (4, 4, 4), "f16_mulAdd": (4, 4, 4, 4), "f16_sqrt": (4, 4),
          "f32_to_f16": (8, 4), "f64_to_f16": (16, 4), "f16_to_f32": (4, 8),
          "f32_to_bf16": (8, 4), "bf16_to_f32": (4, 8)}

FILES = [f"{fn}_{rm}_{tn}.txt.gz" for fn in FUNCTIONS for rm in ROUNDING for tn in TININESS]

_HEX = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789ABCDEF"):
    _HEX[_c] = _i
for _i, _c in enumerate(b"abcdef"):
    _HEX[_c] = 10 + _i


def parse(path, widths):
    """Columns (uint64 arrays) of a fixed-width TestFloat file, and its line count."""
    data = gzip.decompress(path.read_bytes())
    nlines = data.count(b"\n")
    assert nlines > 0 and data.endswith(b"\n")
    widths = tuple(widths) + (2,)
    linelen = sum(widths) + len(widths)  # separators + newline
    assert len(data) == nlines * linelen, f"{path.name}: lines are not {linelen} bytes wide"
    raw = np.frombuffer(data, dtype=np.uint8).reshape(nlines, linelen)
    cols = []
    pos = 0
    for k, w in enumerate(widths):
        sep = raw[:, pos + w]
        assert np.all(sep == (ord("\n") if k == len(widths) - 1 else ord(" "))), path.name
        digits = _HEX[raw[:, pos:pos + w]]
        assert np.all(digits != 255), f"{path.name}: bad hex digit"
        val = np.zeros(nlines, dtype=np.uint64)
        for j in range(w):
            val = (val << np.uint64(4)) | digits[:, j].astype(np.uint64)
        cols.append(val)
        pos += w + 1
    return cols, nlines


def nan16(codes, exp_bits):
    """Class test: NaN codes of a 16-bit IEEE format with exp_bits exponent bits."""
    c = np.asarray(codes).astype(np.uint32)
    m = 15 - exp_bits
    return ((c >> m) & ((1 << exp_bits) - 1) == (1 << exp_bits) - 1) & ((c & ((1 << m) - 1)) != 0)


def nan32(bits):
    b = np.asarray(bits).astype(np.uint32)
    return ((b >> 23) & 0xFF == 0xFF) & ((b & 0x7FFFFF) != 0)


def test_all_files_present(vectors_dir):
    d = vectors_dir / "testfloat-f16"
    found = sorted(p.name for p in d.glob("*.txt.gz"))
    assert len(found) == 132
    assert sorted(FILES) == found
    # "f16_mul_" is not a prefix of "f16_mulAdd_", so this count is unambiguous
    per_function = {fn: sum(1 for n in found if n.startswith(fn + "_")) for fn in FUNCTIONS}
    assert per_function == {fn: 12 for fn in FUNCTIONS}


@pytest.mark.parametrize("name", FILES)
def test_vectors(vectors_dir, name):
    path = vectors_dir / "testfloat-f16" / name
    assert path.is_file(), f"missing vector file {path}"
    stem = name[: -len(".txt.gz")]
    fn = next(f for f in FUNCTIONS if stem.startswith(f + "_"))
    rest = stem[len(fn) + 1:]
    rm, tn = rest.rsplit("_", 1)
    rounding, tininess = ROUNDING[rm], tn
    assert tininess in TININESS
    opts = dict(rounding=rounding, tininess=tininess)

    cols, nlines = parse(path, WIDTHS[fn])
    *ops, expected, exp_flags = cols
    exp_flags = exp_flags.astype(np.uint8)
    f16 = softfp8.float16
    bf16 = softfp8.bfloat16

    if fn in ("f16_add", "f16_sub", "f16_mul", "f16_div", "f16_mulAdd", "f16_sqrt"):
        a = [o.astype(np.uint16) for o in ops]
        func = {"f16_add": sb.add, "f16_sub": sb.sub, "f16_mul": sb.mul, "f16_div": sb.div,
                "f16_mulAdd": sb.fma, "f16_sqrt": sb.sqrt}[fn]
        got, flags = func(f16, *a, **opts)
        got = np.asarray(got)
        assert got.dtype == np.uint16
        exp_nan, got_nan = nan16(expected, 5), nan16(got, 5)
    elif fn in ("f32_to_f16", "f32_to_bf16"):
        x = ops[0].astype(np.uint32).view(np.float32)
        dst = f16 if fn == "f32_to_f16" else bf16
        got, flags = sb.from_float(x, dst, **opts)
        got = np.asarray(got)
        assert got.dtype == np.uint16
        eb = 5 if fn == "f32_to_f16" else 8
        exp_nan, got_nan = nan16(expected, eb), nan16(got, eb)
    elif fn == "f64_to_f16":
        x = ops[0].astype(np.uint64).view(np.float64)
        got, flags = sb.from_float(x, f16, **opts)
        got = np.asarray(got)
        assert got.dtype == np.uint16
        exp_nan, got_nan = nan16(expected, 5), nan16(got, 5)
    else:  # f16_to_f32, bf16_to_f32
        src = f16 if fn == "f16_to_f32" else bf16
        vals, flags = sb.to_float(ops[0].astype(np.uint16), src, dtype=np.float32, **opts)
        vals = np.asarray(vals)
        assert vals.dtype == np.float32
        got = vals.view(np.uint32)
        exp_nan, got_nan = nan32(expected), nan32(got)

    flags = np.asarray(flags)
    assert flags.dtype == np.uint8
    assert got.shape == flags.shape == (nlines,)
    got = got.astype(np.uint64)
    masked = flags & np.uint8(0xFF ^ 0x20)

    bad_class = exp_nan != got_nan
    bad_bits = ~exp_nan & (got != expected)
    bad_flags = masked != exp_flags
    bad = bad_class | bad_bits | bad_flags
    compared = int(bad.size)
    assert compared == nlines == CASES[fn] and compared > 0
    if bad.any():
        idx = np.flatnonzero(bad)
        w = WIDTHS[fn]
        lines = []
        for i in idx[:12]:
            opstr = " ".join(f"{int(o[i]):0{wd}X}" for o, wd in zip(ops, w))
            lines.append(f"  {opstr} -> expected {int(expected[i]):0{w[-1]}X} "
                         f"flags {int(exp_flags[i]):02X}, got {int(got[i]):0{w[-1]}X} "
                         f"flags {int(flags[i]):02X}")
        pytest.fail(f"{name}: {len(idx)} of {nlines} cases differ "
                    f"(class {int(bad_class.sum())}, bits {int(bad_bits.sum())}, "
                    f"flags {int(bad_flags.sum())}):\n" + "\n".join(lines))
