"""Run the published MATLAB tensor-core models (Octave) on softfp8's own inputs and store
the vectors of tests/data/matrix_units/matlab_vectors.npz.xz (run offline; needs octave).

The toolbox (github.com/north-numerical-computing/MATLAB-tensor-core, BSD-2-Clause,
Copyright (c) 2025 Faizan A. Khattak and Mantas Mikaitis) is read from its git directory:
models/ at HEAD, and models/MI300MC.m at b4bf135 (deleted at HEAD, still called by
MI300XMC.m).  CPFloat is not needed: GEMM.m skips it when absent, and every input here is
already a value of its format (the addend of a binary16 output a binary16 value).  Octave 7
lacks two functions the models call; thin shims, written next to the models for the run
only, supply them: string() (the Kulisch accumulator's bit-string arrays, as a cell array of
rows: the code indexes them with {}) and fma() (used as fma(x, 1, z) on singles: the sum
rounded once to single, from a TwoSum in binary64).  A third shim restores MATLAB's
bitshift(): Octave takes shift counts modulo the integer's width (bitshift(uint64(1000),
-131) is 125 there, 0 in MATLAB), which corrupts the models' alignment of partial sums
more than 63 binades apart (the CDNA3 models' two-term alignment); and it refuses the
empty shift counts of a block without non-zero products, where MATLAB returns [].

For each model setting (a MATLAB function with an input and an output format), N dot
products of K = 2 * FMA + 3 terms (several blocks, a last partial one) of random, wide-range,
tiny, cancelling, subnormal, alignment-limit and special-value (NaN, infinity, huge)
operands and addends.  Stored per setting: the operand codes, the addend code and the
model's result (the float64 it returns: a value of the output format, or a finite value past
the format's range where the models' overflow test misses; the models return +0 for most
zeros, so the tests compare zeros by value) and whether the model raised an error.

Usage: python tools/matrix_unit_octave.py [toolbox git dir] [cases per setting]
"""
import io
import json
import lzma
import subprocess
import sys
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "matrix_units" / "matlab_vectors.npz.xz"
DEFAULT_SRC = "/work/.mirror/north-numerical-computing+MATLAB-tensor-core/repo"

# (MATLAB call, input format, output format, FMA size)
SETTINGS = [
    ("V100TC(1, a, b, 1, c, 'fp32')", "fp16", "fp32", 4), ("V100TC(1, a, b, 1, c, 'fp16')", "fp16", "fp16", 4),
    *[(f"A100TC(1, a, b, 1, c, '{i}', '{o}')", i, o, f) for i, o, f in
      (("fp16", "fp32", 8), ("fp16", "fp16", 8), ("bf16", "fp32", 8), ("tf32", "fp32", 4))],
    *[(f"AdaTC(1, a, b, 1, c, '{i}', '{o}')", i, o, f) for i, o, f in
      (("fp16", "fp32", 8), ("fp16", "fp16", 8), ("bf16", "fp32", 8), ("tf32", "fp32", 4),
       ("fp8-e4m3", "fp32", 16), ("fp8-e5m2", "fp32", 16))],
    *[(f"H100TC(1, a, b, 1, c, '{i}', '{o}')", i, o, f) for i, o, f in
      (("fp16", "fp32", 16), ("fp16", "fp16", 16), ("bf16", "fp32", 16), ("tf32", "fp32", 8),
       ("fp8-e4m3", "fp32", 32), ("fp8-e5m2", "fp32", 32))],
    *[(f"B200TC(1, a, b, 1, c, '{i}', '{o}')", i, o, f) for i, o, f in
      (("fp16", "fp32", 16), ("fp16", "fp16", 16), ("bf16", "fp32", 16), ("tf32", "fp32", 8),
       ("fp8-e4m3", "fp32", 32), ("fp8-e5m2", "fp32", 32))],
    ("MI100MC(1, a, b, 1, c, 'fp16')", "fp16", "fp32", 4), ("MI100MC(1, a, b, 1, c, 'bf16')", "bf16", "fp32", 2),
    ("MI250MC(1, a, b, 1, c, 'fp16')", "fp16", "fp32", 4), ("MI250MC(1, a, b, 1, c, 'bf16')", "bf16", "fp32", 4),
    ("MI300XMC(1, a, b, 1, c, 'fp16')", "fp16", "fp32", 8), ("MI300XMC(1, a, b, 1, c, 'bf16')", "bf16", "fp32", 8),
    ("MI300XMC(1, a, b, 1, c, 'tf32')", "tf32", "fp32", 4),
    ("MI300XMC(1, a, b, 1, c, 'fp8-e4m3')", "fp8-e4m3fnuz", "fp32", 16),
    ("MI300XMC(1, a, b, 1, c, 'fp8-e5m2')", "fp8-e5m2fnuz", "fp32", 16),
]
TYPES = {"fp16": (np.float16, np.uint16), "bf16": (ml_dtypes.bfloat16, np.uint16), "tf32": (np.float32, np.uint32),
         "fp8-e4m3": (ml_dtypes.float8_e4m3fn, np.uint8), "fp8-e5m2": (ml_dtypes.float8_e5m2, np.uint8),
         "fp8-e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, np.uint8), "fp8-e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, np.uint8)}
KINDS = ("random", "wide", "tiny", "huge", "cancel", "subnormal", "align", "special")


def to_format(x, fmt):
    """float64 values -> values of fmt (nearest; TF32: binary32 with 13 low bits cleared)."""
    if fmt == "tf32":
        u = x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
        return u.view(np.float32)
    with np.errstate(all="ignore"):
        return x.astype(TYPES[fmt][0])


def operands(rng, fmt, n, K, kind, W):
    f = TYPES[fmt][0]
    fi = ml_dtypes.finfo(f) if fmt != "tf32" else np.finfo(np.float32)
    emin = int(np.log2(float(fi.smallest_normal)))
    emax = int(np.log2(float(fi.max)))

    def binades(lo, hi, size):
        e = rng.integers(lo, hi + 1, size).astype(np.float64)
        return rng.choice([-1.0, 1.0], size) * rng.uniform(1, 2, size) * 2.0 ** e

    if kind == "random":
        x = binades(-3, 3, (n, K))
    elif kind == "wide":
        x = binades(max(emin, -40), min(emax, 40), (n, K))
    elif kind == "tiny":
        x = binades(emin // 2 - 4, emin // 2 + 2, (n, K))
    elif kind == "huge":
        x = binades(min(emax // 2, 64) - 2, min(emax // 2, 64) + 2, (n, K))
    elif kind == "cancel":
        x = binades(-2, 2, (n, K))
        x[:, 1::2] = -x[:, 0::2][:, :K // 2]
    elif kind == "subnormal":
        x = binades(-2, 2, (n, K))
        tiny = float(fi.smallest_subnormal) if fmt != "tf32" else 2.0 ** -136
        mask = rng.random((n, K)) < 0.5
        x[mask] = tiny * rng.integers(0, 4, mask.sum()) * rng.choice([-1.0, 1.0], mask.sum())
    elif kind == "align":
        x = binades(-1, 1, (n, K))
        x[:, 1:] = rng.choice([-1.0, 1.0], (n, K - 1)) * (1 + rng.integers(0, 8, (n, K - 1)) / 8) * \
            2.0 ** -rng.integers(W - 3, W + 3, (n, K - 1)).astype(np.float64)
    else:   # special
        x = binades(-2, 2, (n, K))
        specials = [np.nan, np.inf, -np.inf, float(fi.max), -float(fi.max), 0.0, -0.0]
        for i in range(n):
            j = rng.integers(0, K)
            x[i, j] = specials[rng.integers(0, len(specials))]
    return to_format(x, fmt)


def addends(rng, out, n, kind):
    f = np.float32 if out == "fp32" else np.float16
    e = rng.integers(-6, 4, n).astype(np.float64)
    c = rng.choice([-1.0, 1.0], n) * rng.uniform(1, 2, n) * 2.0 ** e
    r = rng.random(n)
    fi = np.finfo(f)
    c[r < 0.1] = 0.0
    c[(r >= 0.1) & (r < 0.15)] = -0.0
    sub = (r >= 0.15) & (r < 0.22)
    c[sub] = float(fi.smallest_subnormal) * rng.integers(1, 9, sub.sum())
    if kind == "special":
        c[(r >= 0.22) & (r < 0.3)] = np.inf
        c[(r >= 0.3) & (r < 0.34)] = np.nan
    if kind == "huge":
        c[(r >= 0.22) & (r < 0.4)] = float(fi.max) * 0.75
    with np.errstate(all="ignore"):
        return c.astype(f)


SHIMS = {
    "bitshift.m": """function y = bitshift(x, n)
  % shim: MATLAB's bitshift (a shift by the integer's width or more gives 0; Octave wraps it)
  switch class(x)
    case {'uint8', 'int8'}, w = 8;
    case {'uint16', 'int16'}, w = 16;
    case {'uint32', 'int32'}, w = 32;
    case {'uint64', 'int64'}, w = 64;
    otherwise, w = 53;
  end
  if isempty(x) || isempty(n)   % MATLAB returns an empty array; Octave refuses an empty count
    y = cast([], class(x));
    return
  end
  y = builtin('bitshift', x, n);
  big = abs(double(n)) >= w;
  if isscalar(big)
    if big, y(:) = 0; end
  elseif any(big(:))
    y(big) = 0;
  end
end
""",
    "string.m": """function s = string(m)
  % shim (Octave 7 has no string arrays): the rows of a char matrix as a cell array
  s = cellstr(m);
end
""",
    "fma.m": """function r = fma(x, y, z)
  % shim (Octave 7 has no fma): single(x*y + z) rounded once, for y == 1
  a = double(x) * double(y); b = double(z);
  s = a + b; bv = s - a; e = (a - (s - bv)) + (b - bv);
  if s < 0
    r = -fma_pos(-s, -e);
  else
    r = fma_pos(s, e);
  end
end
function r = fma_pos(s, e)
  % s + e exact, s the binary64 sum: single(s) unless s is a midpoint of singles and e != 0
  r = single(s);
  if isinf(r) || isnan(s) || double(r) == s || e == 0
    return
  end
  if double(r) < s
    lo = r; hi = r + eps(r);
  else
    hi = r; d = eps(r);
    if double(r) == 2 ^ floor(log2(double(r)))
      d = d / 2;
    end
    lo = r - d;
  end
  if s == (double(lo) + double(hi)) / 2
    if e > 0, r = hi; else, r = lo; end
  end
end
"""}


def octave_run(work, models, call, A, B, C):
    """Results of the MATLAB model on rows A[i], B[i] and addend C[i]."""
    np.savetxt(work / "A.txt", A.astype(np.float64), fmt="%.17g")
    np.savetxt(work / "B.txt", B.astype(np.float64), fmt="%.17g")
    np.savetxt(work / "C.txt", C.astype(np.float64).reshape(-1, 1), fmt="%.17g")
    script = f"""
warning('off', 'all');
addpath('{models}'); addpath('{models}/tools');
A = load('{work}/A.txt'); B = load('{work}/B.txt'); C = load('{work}/C.txt');
n = size(A, 1); D = zeros(n, 1); E = zeros(n, 1);
for i = 1:n
  a = A(i, :); b = B(i, :)'; c = C(i);
  try
    D(i) = {call};
  catch
    D(i) = NaN; E(i) = 1;
  end
end
fid = fopen('{work}/D.txt', 'w'); fprintf(fid, '%.17g %d\\n', [D E]'); fclose(fid);
"""
    (work / "run.m").write_text(script)
    subprocess.run(["octave", "--no-gui", "--quiet", "--no-window-system", str(work / "run.m")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = [line.split() for line in (work / "D.txt").read_text().splitlines() if line.strip()]
    return np.array([float(r[0]) for r in rows]), np.array([int(r[1]) for r in rows], dtype=np.uint8)


def main(src, n_per_kind):
    arrays, index = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        models = tmp / "models"
        (models / "tools").mkdir(parents=True)
        names = subprocess.run(["git", "-C", src, "ls-tree", "--name-only", "HEAD", "models/", "models/tools/"],
                               check=True, capture_output=True, text=True).stdout.split()
        for p in names:
            if p.endswith(".m"):
                (tmp / p).write_text(subprocess.run(["git", "-C", src, "show", f"HEAD:{p}"], check=True,
                                                    capture_output=True, text=True).stdout)
        for name, text in SHIMS.items():
            (models / name).write_text(text)
        (models / "MI300MC.m").write_text(subprocess.run(
            ["git", "-C", src, "show", "b4bf135:models/MI300MC.m"], check=True, capture_output=True,
            text=True).stdout)
        for si, (call, fin, fout, fma) in enumerate(SETTINGS):
            rng = np.random.default_rng(1000 + si)
            K = 2 * fma + 3
            W = 23 + 2
            A, B, C = [], [], []
            for kind in KINDS:
                A.append(operands(rng, fin, n_per_kind, K, kind, W))
                B.append(operands(rng, fin, n_per_kind, K, kind, W))
                C.append(addends(rng, fout, n_per_kind, kind))
            A, B, C = np.concatenate(A), np.concatenate(B), np.concatenate(C)
            D, err = octave_run(tmp, models, call, A, B, C)
            with np.errstate(all="ignore"):
                Dc = D.astype(np.float32 if fout == "fp32" else np.float16)
            # the models' results are values of the output format, or finite values past its
            # range (their overflow test looks at one exponent only): kept as float64 then
            exact = np.isnan(D) | (Dc.astype(np.float64) == D)
            key = f"s{si}"
            arrays[key + "_a"] = A.view(TYPES[fin][1])
            arrays[key + "_b"] = B.view(TYPES[fin][1])
            arrays[key + "_c"] = C.view(np.uint32 if fout == "fp32" else np.uint16)
            arrays[key + "_d"] = D
            arrays[key + "_err"] = err
            index.append([key, call, fin, fout, fma, K, len(KINDS), n_per_kind])
            print(f"{call}: {len(D)} cases, {int((~exact).sum())} results outside the output format, "
                  f"{int(err.sum())} model errors", flush=True)
    arrays["index"] = np.frombuffer(json.dumps(index).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    OUT.write_bytes(lzma.compress(buf.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    print(f"{OUT.relative_to(REPO)}: {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SRC, int(sys.argv[2]) if len(sys.argv) > 2 else 12)
