"""softfp8's fuzzer: random calls of the public API on raw bytes.

One seed = one reproducible sequence of calls (``run_seed(seed, calls)``).  Each
call draws a format (presets, Tesla biases, and softfp8.format(...) formats of every
width from 2 to 16 bits with parameters at their limits), operands of raw random
bytes viewed as that format (codes above the format's width included), odd shapes and
strides (reversed, stepped, broadcast zero strides), and then one of:

  * a softfp8.bits function (every operation of the op table, conversions, sum),
  * a NumPy ufunc of the op table with out= (also aliasing an input), where=,
    under a random rounding / saturation / tininess context,
  * a reduction (reduce, accumulate, reduceat, ufunc.at, sum),
  * a cast between formats, binary32/64, integers and bool,
  * softfp8.matmul,
  * pickling, and softfp8.save / load of intact and corrupted files.

Every call that computes codes is run with the fast paths on (eager and lazy) and off
(the exact core), and the codes and flags must be identical.  A call may raise a clean
Python exception for invalid input (ValueError, TypeError, ...); anything else (a
SystemError, a mismatch, a crash) is a finding.  Run seeds in subprocesses
(tests/fuzz/run.py) so that a crash is reported with its seed.

    python -m tests.fuzz.fuzzer SEED CALLS   # prints one JSON line
"""

from __future__ import annotations

import io
import json
import pickle
import sys
import traceback
import zipfile

import numpy as np

import softfp8
from softfp8 import _ext, bits

CLEAN = (ValueError, TypeError, OverflowError, IndexError, KeyError, NotImplementedError,
         zipfile.BadZipFile, EOFError, pickle.UnpicklingError, np.exceptions.AxisError)
MODES = bits.ROUNDING_MODES
UFUNC_OPS = [(name, op) for name, op in bits.OPERATIONS.items() if getattr(op, "ufunc", None)]


class Finding(Exception):
    pass


def draw_format(g):
    r = g.random()
    if r < 0.35:
        presets = list(softfp8.presets().values())
        return presets[g.integers(len(presets))]
    if r < 0.45:
        fam = (softfp8.cfloat8_143, softfp8.cfloat8_152, softfp8.shp)[g.integers(3)]
        return fam(bias=int(g.integers(0, 64)))
    signed = bool(g.random() < 0.85)
    width = int(g.integers(2, 17))
    e = int(g.integers(1, width - signed + 1))
    m = width - signed - e
    biases = [0, 1, -1, (1 << (e - 1)) - 1, 1 << (e - 1), -(1 << 20), 1 << 20, int(g.integers(-40, 80))]
    bias = biases[g.integers(len(biases))]
    specials = ("ieee", "fn", "fnuz", "none")[g.integers(4)]
    subnormals = ("ieee", "tesla", "flush")[g.integers(3)]
    saturate = (None, True, False)[g.integers(3)]
    return softfp8.format(exp_bits=e, man_bits=m, bias=bias, specials=specials, subnormals=subnormals,
                          signed=signed, saturate=saturate, name=f"fz{width}_{e}_{m}_{bias}_{specials}_{subnormals}")


def storage(fmt):
    return np.uint8 if fmt.bits <= 8 else np.uint16


def raw_codes(g, fmt, n):
    st = np.dtype(storage(fmt))
    return np.frombuffer(g.bytes(n * st.itemsize), dtype=st).copy()


def odd_layout(g, a):
    """a (1-D) in a random layout: contiguous, reversed, stepped, or 2-D slices."""
    k = g.integers(5)
    if k == 1:
        return a[::-1]
    if k == 2:
        return a[:: int(g.integers(2, 4))]
    if k == 3 and a.size >= 6:
        return a[: a.size // 3 * 3].reshape(3, -1)[:, ::-1]
    return a


def draw_array(g, fmt, n=None):
    n = int(g.integers(0, 40)) if n is None else n
    return odd_layout(g, raw_codes(g, fmt, n).view(fmt.dtype))


def draw_env(g):
    kw = {}
    if g.random() < 0.8:
        kw["rounding"] = MODES[g.integers(len(MODES))]
    if g.random() < 0.3:
        kw["saturate"] = bool(g.random() < 0.5)
    if g.random() < 0.3:
        kw["tininess"] = ("after", "before")[g.integers(2)]
    if kw.get("rounding") == "stochastic":
        kw["seed"] = int(g.integers(0, 2**31))
        if g.random() < 0.5:
            kw["sr_bits"] = int(g.integers(1, 33))
    return kw


def snapshot(result):
    parts = result if isinstance(result, tuple) else (result,)
    out = []
    for p in parts:
        p = np.asarray(p)
        if p.dtype.kind in "OUS":
            out.append((str(p.dtype), p.shape, p.tolist()))
        else:
            c = np.ascontiguousarray(p)
            out.append((str(p.dtype), p.shape, c.view(np.uint8).tobytes() if c.size else b""))
    return out


def observe(fn):
    """(snapshot, flags) or ('raised', type name)."""
    try:
        with np.errstate(all="ignore"), softfp8.collect_flags() as fl:
            r = fn()
        return snapshot(r), int(fl.flags)
    except CLEAN as e:
        return "raised", type(e).__name__


COUNT = {"compared": 0}


def check_bits_result(fmt, name, res):
    """softfp8.bits results: codes inside the format's width, flags inside the six bits."""
    if not isinstance(res, tuple):
        return
    *vals, fl = res
    fl = np.asarray(fl)
    if fl.size and int(fl.max()) >= 64:
        raise Finding(f"bits.{name} on {fmt.name}: flag word {int(fl.max())} outside the six flags")
    op = bits.OPERATIONS.get(name)
    if op is not None and op.kind in ("binary", "unary", "ternary"):
        for v in vals:
            v = np.asarray(v)
            if v.size and int(v.max()) >> fmt.bits:
                raise Finding(f"bits.{name} on {fmt.name}: result code {int(v.max()):#x} wider than {fmt.bits} bits")


def across_paths(fn, what):
    """fn with fast paths eager, lazy and off: identical codes and flags."""
    COUNT["compared"] += 1
    outs = []
    for level in (2, 1, 0):
        prev = _ext.set_fast(level)
        try:
            outs.append(observe(fn))
        finally:
            _ext.set_fast(prev)
    if not (outs[0] == outs[1] == outs[2]):
        raise Finding(f"fast/core mismatch in {what}: eager={outs[0]!r:.300} lazy={outs[1]!r:.300} "
                      f"core={outs[2]!r:.300}")
    return outs[2]


# ---------------------------------------------------------------- actions

def act_bits(g, fmt):
    name = list(bits.OPERATIONS)[g.integers(len(bits.OPERATIONS))]
    op = bits.OPERATIONS[name]
    n = int(g.integers(0, 30))
    args = [raw_codes(g, fmt, n).astype(np.uint32) | (g.integers(0, 2, n) << 20).astype(np.uint32)
            if g.random() < 0.1 else raw_codes(g, fmt, n) for _ in range(op.arity)]
    kw = draw_env(g)
    if "seed" in kw and g.random() < 0.3:
        del kw["seed"]
        kw["random_bits"] = g.integers(0, 2**32, n, dtype=np.uint32)
    fn0 = getattr(bits, name)

    def fn(*a, **k):
        r = fn0(*a, **k)
        check_bits_result(fmt, name, r)
        return r
    if name in ("eq", "ne", "lt", "le", "gt", "ge", "cmp_quiet", "cmp_signaling", "isnan", "isinf",
                "isfinite", "signbit", "neg", "pos", "abs", "copysign", "max", "min", "maxnum", "minnum",
                "nextafter", "sign"):
        kw = {}
    across_paths(lambda: fn(fmt, *args, **kw), f"bits.{name}({fmt.name}, {kw})")


def act_ufunc(g, fmt):
    name, op = UFUNC_OPS[g.integers(len(UFUNC_OPS))]
    uf = getattr(np, op.ufunc.split()[0]) if not op.ufunc.startswith("softfp8.") else softfp8.fma
    n = int(g.integers(0, 30))
    xs = [draw_array(g, fmt, n) for _ in range(uf.nin)]
    shape = xs[0].shape
    xs = [x if x.shape == shape else x.reshape(-1)[: int(np.prod(shape))].reshape(shape) if x.size >= np.prod(shape)
          else xs[0] for x in xs]
    if g.random() < 0.2 and xs[0].size:
        xs[-1] = np.broadcast_to(xs[-1].reshape(-1)[:1].reshape((1,) * xs[0].ndim), shape)  # zero strides
    kwargs = {}
    r = g.random()
    out_dtype = np.bool_ if op.kind in ("compare", "predicate") else fmt.dtype
    if r < 0.3:
        kwargs["out"] = draw_array(g, fmt, xs[0].size).reshape(-1)[: xs[0].size].reshape(shape) \
            if out_dtype is not np.bool_ else np.zeros(shape, bool)
    elif r < 0.45 and out_dtype is not np.bool_ and xs[0].flags.writeable:
        kwargs["out"] = xs[0]  # in place
    if g.random() < 0.25:
        kwargs["where"] = g.random(shape) < 0.5
        kwargs.setdefault("out", np.zeros(shape, out_dtype) if out_dtype is np.bool_
                          else raw_codes(g, fmt, xs[0].size).view(fmt.dtype).reshape(shape))
    env = draw_env(g)
    snap = [x.copy() for x in xs]
    out0 = kwargs.get("out")
    out_init = None if out0 is None else np.array(out0, copy=True)

    def call():
        # every run starts from the same operands and output contents
        if "out" in kwargs:
            o = kwargs["out"]
            if o is xs[0]:
                o[...] = snap[0]
            elif out_init is not None:
                o[...] = out_init
        for x, s in zip(xs, snap):
            if x.flags.writeable:
                x[...] = s
        with ctx(env):
            return uf(*xs, **kwargs)

    across_paths(call, f"np.{op.ufunc}({fmt.name}, {env}, {sorted(kwargs)})")


class ctx:
    def __init__(self, env):
        self.env = env
        self.stack = []

    def __enter__(self):
        import contextlib
        st = contextlib.ExitStack()
        e = self.env
        if "rounding" in e:
            st.enter_context(softfp8.rounding(e["rounding"], seed=e.get("seed"), sr_bits=e.get("sr_bits", 32)))
        if "saturate" in e:
            st.enter_context(softfp8.saturation(e["saturate"]))
        if "tininess" in e:
            st.enter_context(softfp8.tininess(e["tininess"]))
        self.stack.append(st)
        return self

    def __exit__(self, *exc):
        return self.stack.pop().__exit__(*exc)


def act_reduce(g, fmt):
    name, op = UFUNC_OPS[g.integers(len(UFUNC_OPS))]
    if op.arity != 2 or op.ufunc.startswith("softfp8."):
        return
    uf = getattr(np, op.ufunc.split()[0])
    a = draw_array(g, fmt, int(g.integers(0, 48)))
    env = draw_env(g)
    k = g.integers(5)
    base = a.copy()

    def call():
        x = base.copy()
        with ctx(env):
            if k == 0:
                return uf.reduce(x, axis=-1)
            if k == 1:
                return uf.accumulate(x, axis=-1)
            if k == 2 and x.ndim == 1 and x.size:
                idx = np.sort(g_idx)
                return uf.reduceat(x, idx)
            if k == 3 and x.ndim == 1 and x.size:
                uf.at(x, g_idx % x.size, x[: len(g_idx)] if x.size >= len(g_idx) else x[0])
                return x
            return np.sum(x, axis=-1) if name == "add" else uf.reduce(x, axis=None)

    g_idx = g.integers(0, max(a.shape[-1], 1), 5)
    across_paths(call, f"{op.ufunc} reduction kind {k} ({fmt.name}, {env})")


def act_cast(g, fmt):
    a = draw_array(g, fmt)
    r = g.random()
    if r < 0.4:
        dst = draw_format(g).dtype
    elif r < 0.8:
        dst = np.dtype((np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                        np.uint32, np.uint64, np.bool_)[g.integers(11)])
    else:  # from a NumPy type into the format
        src = np.dtype((np.float32, np.float64, np.int64, np.int8, np.bool_)[g.integers(5)])
        vals = np.frombuffer(g.bytes(16 * src.itemsize), dtype=np.uint8).view(src) \
            if src != np.bool_ else g.random(16) < 0.5
        env = draw_env(g)

        def call_in():
            with ctx(env):
                return vals.astype(fmt.dtype)
        across_paths(call_in, f"{src} -> {fmt.name} ({env})")
        return
    env = draw_env(g)

    def call():
        with ctx(env):
            return a.astype(dst)
    across_paths(call, f"{fmt.name} -> {dst} ({env})")


def act_matmul(g, fmt):
    m, n, p = (int(v) for v in g.integers(0, 6, 3))
    A = raw_codes(g, fmt, m * n).view(fmt.dtype).reshape(m, n)
    B = raw_codes(g, fmt, n * p).view(fmt.dtype).reshape(n, p)
    if g.random() < 0.3:
        A = A.T.copy().T if A.size else A
    od = (None, np.float32, np.float64)[g.integers(3)]
    env = draw_env(g)

    def call():
        with ctx(env):
            return softfp8.matmul(A, B, out_dtype=od)
    across_paths(call, f"matmul {fmt.name} {m}x{n}x{p} -> {od} ({env})")


def act_pickle_io(g, fmt):
    a = draw_array(g, fmt)
    b = pickle.loads(pickle.dumps(a))
    if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a.view(storage(fmt)), b.view(storage(fmt))):
        raise Finding(f"pickle round trip changed {fmt.name} array")
    buf = io.BytesIO()
    softfp8.save(buf, np.ascontiguousarray(a))
    data = bytearray(buf.getvalue())
    c = softfp8.load(io.BytesIO(bytes(data)))
    if c.dtype != a.dtype or not np.array_equal(np.asarray(c).view(storage(fmt)), np.ascontiguousarray(a).view(storage(fmt))):
        raise Finding(f"save/load round trip changed {fmt.name} array")
    for _ in range(3):  # corrupted files: a clean exception or some array, never a crash
        d = bytearray(data)
        if d:
            for _k in range(int(g.integers(1, 8))):
                d[int(g.integers(len(d)))] = int(g.integers(256))
            if g.random() < 0.3:
                d = d[: int(g.integers(len(d)))]
        try:
            softfp8.load(io.BytesIO(bytes(d)))
        except CLEAN + (OSError, json.JSONDecodeError, UnicodeDecodeError, zipfile.LargeZipFile):
            pass


def act_bits_conv(g, fmt):
    n = int(g.integers(0, 30))
    k = g.integers(4)
    kw = draw_env(g)
    if k == 0:
        dst = draw_format(g)
        a = raw_codes(g, fmt, n)
        across_paths(lambda: bits.convert(a, fmt, dst, **kw), f"bits.convert {fmt.name}->{dst.name} {kw}")
    elif k == 1:
        x = np.frombuffer(g.bytes(8 * n), dtype=np.float64)
        across_paths(lambda: bits.from_float(x, fmt, **kw), f"bits.from_float {fmt.name} {kw}")
    elif k == 2:
        a = raw_codes(g, fmt, n)
        kw.pop("saturate", None), kw.pop("tininess", None)
        across_paths(lambda: bits.to_int64(fmt, a, **kw), f"bits.to_int64 {fmt.name} {kw}")
    else:
        a = raw_codes(g, fmt, n)
        kw.pop("sr_bits", None) if "seed" not in kw else None
        across_paths(lambda: bits.sum(fmt, a, **{k2: v for k2, v in kw.items() if k2 != "random_bits"}),
                     f"bits.sum {fmt.name} {kw}")


ACTIONS = [(act_bits, 4), (act_ufunc, 5), (act_reduce, 2), (act_cast, 3), (act_matmul, 1), (act_pickle_io, 1),
           (act_bits_conv, 2)]


def run_seed(seed, calls):
    g = np.random.default_rng(seed)
    weights = np.array([w for _, w in ACTIONS], float)
    weights /= weights.sum()
    stats = {"seed": seed, "calls": 0, "clean_exceptions": 0, "formats_refused": 0}
    COUNT["compared"] = 0
    for _ in range(calls):
        try:
            fmt = draw_format(g)
        except CLEAN:
            stats["formats_refused"] += 1
            continue
        act = ACTIONS[g.choice(len(ACTIONS), p=weights)][0]
        stats["calls"] += 1
        try:
            act(g, fmt)
        except CLEAN:
            stats["clean_exceptions"] += 1
    stats["compared"] = COUNT["compared"]
    return stats


def main(argv):
    seed, calls = int(argv[1]), int(argv[2])
    try:
        stats = run_seed(seed, calls)
    except Finding as e:
        print(json.dumps({"seed": seed, "finding": str(e)[:2000]}))
        return 2
    except Exception:
        print(json.dumps({"seed": seed, "finding": "unexpected exception: " + traceback.format_exc()[-2000:]}))
        return 3
    print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
