"""Convert the published real-GPU inner products of the MATLAB tensor-core toolbox into
the compact test data of tests/data/matrix_units/ (run offline; the tests read only the
result).

Source: github.com/north-numerical-computing/MATLAB-tensor-core (BSD-2-Clause,
Copyright (c) 2025 Faizan A. Khattak and Mantas Mikaitis), directory model_validation/:
per GPU and input format, a_*.txt / b_*.txt (K float32 hex words per line: the operands,
exact values of the input format), c_*_fp32.txt (binary32 bit strings: the addend),
d_*_fp32.txt / d_*_fp16.txt (binary32 bit strings: the GPU's results; fp16 results as the
binary32 value of the binary16 result).

Output: gpu_dot_products.npz.xz, an lzma-compressed .npz of
  x_<hash>    one array each, stored once however many data sets share it (the GPUs of a
              generation share operands; L40S and Ada share everything):
              (2, cases, K) operand codes in the input format's storage (uint8 FP8,
              uint16 binary16 / bfloat16, uint32 TF32 as binary32 bit patterns);
              (cases,) uint32 binary32 addends; (cases,) uint32 binary32 / uint16
              binary16 result codes
  index       JSON: [[gpu, fmt, K, ab key, c key, {out: d key}], ...]
Every conversion is checked exact (the codes decode back to the published values).

Usage: python tools/matrix_unit_data.py [path of the toolbox's git directory]
"""
import hashlib
import io
import json
import lzma
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "matrix_units" / "gpu_dot_products.npz.xz"
DEFAULT_SRC = "/work/.mirror/north-numerical-computing+MATLAB-tensor-core/repo"
CODE_TYPES = {"fp16": (np.float16, np.uint16), "bf16": (ml_dtypes.bfloat16, np.uint16),
              "E4M3": (ml_dtypes.float8_e4m3fn, np.uint8), "E5M2": (ml_dtypes.float8_e5m2, np.uint8)}


def show(src, path):
    return subprocess.run(["git", "-C", src, "show", f"HEAD:{path}"], check=True, capture_output=True,
                          text=True).stdout


def hex_rows(text):
    return np.array([[int(t, 16) for t in line.split()] for line in text.splitlines() if line.strip()],
                    dtype=np.uint32)


def bit_rows(text):
    return np.array([int(line.strip(), 2) for line in text.splitlines() if line.strip()], dtype=np.uint32)


def codes(words, fmt):
    """Operand codes of float32 words that are exact values of fmt."""
    if fmt == "tf32":
        assert not (words & 0x1FFF).any(), "TF32 operands with low bits set"
        return words
    ftype, ctype = CODE_TYPES[fmt]
    f32 = words.view(np.float32)
    c = f32.astype(ftype)
    assert np.array_equal(c.astype(np.float32).view(np.uint32), words), f"{fmt}: inexact operand"
    return c.view(ctype)


def main(src):
    files = subprocess.run(["git", "-C", src, "ls-tree", "-r", "--name-only", "HEAD", "model_validation"],
                           check=True, capture_output=True, text=True).stdout.split()
    sets = sorted({tuple(f.split("/")[1:3]) for f in files if f.endswith(".txt")})
    arrays, index = {}, []

    def put(x):
        key = "x_" + hashlib.sha256(x.dtype.str.encode() + repr(x.shape).encode() + x.tobytes()).hexdigest()[:12]
        arrays[key] = x
        return key

    for gpu, fmt in sets:
        base = f"model_validation/{gpu}/{fmt}"
        a = codes(hex_rows(show(src, f"{base}/a_{gpu}_{fmt}.txt")), fmt)
        b = codes(hex_rows(show(src, f"{base}/b_{gpu}_{fmt}.txt")), fmt)
        ab = np.stack([a, b])
        ckey = put(bit_rows(show(src, f"{base}/c_{gpu}_fp32.txt")))
        outs = {}
        for out in ("fp32", "fp16"):
            path = f"{base}/d_{gpu}_{out}.txt"
            if path not in files:
                continue
            d = bit_rows(show(src, path))
            if out == "fp16":
                h = d.view(np.float32).astype(np.float16)
                assert np.array_equal(h.astype(np.float32).view(np.uint32), d), "fp16 result not binary16"
                d = h.view(np.uint16)
            assert d.shape[0] == ab.shape[1]
            outs[out] = put(d)
        index.append([gpu, fmt, int(ab.shape[2]), put(ab), ckey, outs])
    arrays["index"] = np.frombuffer(json.dumps(index).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(lzma.compress(buf.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    print(f"{OUT.relative_to(REPO)}: {OUT.stat().st_size} bytes, {len(index)} data sets, "
          f"{sum(len(i[5]) for i in index)} result files, {len(arrays) - 1} distinct arrays")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SRC)
