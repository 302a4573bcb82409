#!/usr/bin/env python
"""softfp8 throughput benchmark against ml_dtypes, torch and plain NumPy.

Run from the repository root::

    python benchmarks/bench.py            # 10^7 elements, 1024x1024 matmul, 7 repeats
    python benchmarks/bench.py --quick    # 10^6 elements, 256x256 matmul, 3 repeats

Everything runs on one thread.  Each timing is the median of repeated calls
(time.perf_counter, after one warm-up call) reported in nanoseconds per element
(per multiply-add for matmul).  Issue 22's rows (accumulation models and
matrix-unit profiles against the exact product, scaled_mm's scales,
DelayedScaling) time each call and its reference alternately and take the
minimum of each (measure_pair); its quantiser rows (absolute targets) take the
minimum too.  Ratios are softfp8 time / peer time: below 1
means softfp8 is faster.  No timing is asserted anywhere; this is a script that
measures and writes BENCHMARKS.md (unless --no-write).
"""
import os

# One thread for every BLAS / OpenMP runtime: must happen before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
import faulthandler  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import softfp8  # noqa: E402
except ImportError:
    sys.path.insert(0, REPO)
    import softfp8  # noqa: E402

import train_bench  # noqa: E402  (benchmarks/train_bench.py, next to this file)

try:
    import ml_dtypes  # noqa: E402
except ImportError:  # pragma: no cover - optional peer
    ml_dtypes = None

try:
    import torch  # noqa: E402

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - optional peer
    torch = None

# A single call predicted (or seen) to take longer than this is measured on a
# smaller problem and scaled per element / per multiply-add.
SLOW_CALL_S = 2.0
# Time spent on the repeats of one measurement; fewer repeats (never below 3)
# when a call is slow, so the whole run stays within a few minutes.
MEASURE_BUDGET_S = 5.0
MIN_REPEATS = 3
PROBE_ELEMS = 10**5
SLICE_ELEMS = 10**6
# 16-bit stochastic rows: the per-code table is built for calls of 1.5M+ elements
# (stochastic.c SRW_COST), then cached; --quick's 10^6-element calls take the core
SRW_NOTE = ("issue 10: at most 2× the nearest-even call (overhead ≤100%); the per-code table is built "
            "by a call of 1.5M+ elements, then cached")
MATMUL_SIZES = (1024, 512, 256, 128)


# --------------------------------------------------------------------------- timing
class Meas:
    """One measurement: ns per unit of work, or why there is none."""

    def __init__(self, ns=None, size=None, reps=0, scaled_from=None, err=None, note=None):
        self.ns = ns
        self.size = size
        self.reps = reps
        self.scaled_from = scaled_from  # the size actually timed when smaller than asked
        self.err = err
        self.note = note

    @property
    def ok(self):
        return self.ns is not None


NA = Meas(err="n/a")


def _time_once(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def measure(make, sizes, work, repeats, probe=None, best=False):
    """Median (best: minimum) ns per unit of work of ``make(size)()``.

    ``sizes`` lists the sizes to try, the wanted one first then smaller
    fall-backs; ``work(size)`` is the number of units (elements or
    multiply-adds) of one call.  A call at ``probe`` size (also the first
    warm-up) predicts the cost of the wanted size; the largest size whose
    predicted or measured call time stays under SLOW_CALL_S is used.
    """
    if make is None:
        return NA
    gc_was = gc.isenabled()
    try:
        sizes = list(sizes)
        if probe is not None and probe < sizes[0]:
            fn = make(probe)
            fn()  # warm-up (first call may load code, allocate caches)
            per_unit = _time_once(fn) / work(probe)
            fits = [s for s in sizes if per_unit * work(s) <= SLOW_CALL_S]
            sizes = fits or sizes[-1:]
        size = sizes[0]
        fn = make(size)
        t0 = _time_once(fn)  # warm-up at the chosen size
        while t0 > SLOW_CALL_S and len(sizes) > 1:
            sizes = sizes[1:]
            size = sizes[0]
            fn = make(size)
            t0 = _time_once(fn)
        reps = min(repeats, max(MIN_REPEATS, int(MEASURE_BUDGET_S / max(t0, 1e-9))))
        gc.disable()
        times = [_time_once(fn) for _ in range(reps)]
        ns = (min(times) if best else statistics.median(times)) / work(size) * 1e9
        return Meas(ns, size=size, reps=reps)
    except Exception as exc:  # noqa: BLE001 - a failing peer prints n/a
        msg = f"{type(exc).__name__}: {exc}".splitlines()[0]
        return Meas(err=msg[:160])
    finally:
        if gc_was:
            gc.enable()


PAIR_MIN = 11  # alternating calls of each side of a paired measurement (at least)


def _alternate(a, b, n):
    """Times of n calls of a and of b, called alternately after one warm-up each (the
    collector off), so that drifts of the machine's load hit both alike."""
    a()
    b()
    ta, tb = [], []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(n):
            ta.append(_time_once(a))
            tb.append(_time_once(b))
    finally:
        if gc_was:
            gc.enable()
    return ta, tb


def measure_pair(variant, base, work, repeats):
    """(variant, base) Meas of two calls timed alternately (_alternate), each the minimum
    of max(repeats, PAIR_MIN) calls.

    Issue 22's rows are ratios of two matrix products of a few milliseconds; on a
    shared VM a separate median of each drifts by 30-50% between runs (steal time
    hits one and not the other).  Alternating the calls puts both under the same
    load, and the minimum is the least-disturbed call of each (load only ever adds
    time)."""
    if variant is None or base is None:
        return NA, NA
    n = max(repeats, PAIR_MIN)
    try:
        tv, tb = _alternate(variant, base, n)
    except Exception as exc:  # noqa: BLE001 - a failing call prints n/a
        msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
        return Meas(err=msg), Meas(err=msg)
    return Meas(min(tv) / work * 1e9, reps=n), Meas(min(tb) / work * 1e9, reps=n)   # the shape asked


def paired_ratio(base, variant, pairs):
    """median(variant) / median(base), the two called alternately (_alternate)."""
    try:
        tb, tv = _alternate(base, variant, pairs)
        return statistics.median(tv) / statistics.median(tb)
    except Exception:  # noqa: BLE001
        return None


# --------------------------------------------------------------------------- rows
class Row:
    def __init__(self, key, label, sf, ml=None, tc=None, ref=None, ref_label="",
                 target=None, notes=(), sf_make=None):
        self.key = key
        self.sf_make = sf_make  # kept for the paired overhead measurement
        self.overhead = None  # paired ratio variant / baseline (overhead rows)
        self.label = label
        self.sf = sf
        self.ml = ml if ml is not None else NA
        self.tc = tc if tc is not None else NA
        self.ref = ref if ref is not None else NA
        self.ref_label = ref_label
        self.target = target  # tuple, see evaluate()
        self.notes = list(notes)
        self.target_text = ""
        self.status = ""
        self.detail = ""


def evaluate(row, rows_by_key):
    """Fill row.target_text / status / detail from the issue's targets."""
    t = row.target
    if t is None:
        row.target_text, row.status = "—", "—"
        return
    kind = t[0]
    sf = row.sf.ns if row.sf.ok else None
    if kind == "abs":
        limit = t[1]
        row.target_text = f"≤{limit:g}"
        ok = sf is not None and sf <= limit
    elif kind == "abs_faster":
        limit = t[1]
        row.target_text = f"≤{limit:g} and < NumPy float16 add"
        ref = row.ref.ns if row.ref.ok else None
        ok = sf is not None and sf <= limit and ref is not None and sf < ref
    elif kind == "peer16":  # issue 10's 16-bit targets
        limit = t[1]
        row.target_text = f"≤{limit:g}, ≥4× faster than NumPy float16" + (
            ", faster than ml_dtypes" if row.ml.ok else "")
        ref = row.ref.ns if row.ref.ok else None
        ok = (sf is not None and sf <= limit and ref is not None and 4 * sf <= ref
              and (not row.ml.ok or sf < row.ml.ns))
    elif kind == "overhead":
        base = rows_by_key.get(t[1])
        limit = t[2]
        row.target_text = f"overhead ≤{limit:.0%} vs #{base.num if base else '?'}"
        if sf is not None and base is not None and base.sf.ok:
            ratio = row.overhead if row.overhead is not None else sf / base.sf.ns
            row.detail = f"{ratio - 1:+.0%}"
            ok = ratio <= 1 + limit
        else:
            ok = False
    elif kind == "vs_ml":  # at most factor x ml_dtypes' time, measured side by side
        factor = t[1]
        row.target_text = "≤ ml_dtypes time" if factor == 1 else f"≤{factor:g}× ml_dtypes"
        if sf is not None and row.ml.ok:
            row.detail = f"{sf / row.ml.ns:.3g}×"
            ok = sf <= factor * row.ml.ns
        else:
            ok = False
    elif kind == "vs_torch":  # faster than PyTorch's own call, measured side by side
        row.target_text = "< torch time"
        if sf is not None and row.tc.ok:
            row.detail = f"{sf / row.tc.ns:.3g}×"
            ok = sf < row.tc.ns
        else:
            ok = False
    elif kind in ("vs_ref", "vs_f16", "vs_u8", "vs_finite", "vs_exact", "vs_quant", "vs_cast", "vs_pow2"):
        factor = t[1]  # a ratio to the row's reference
        row.target_text = f"≤{factor:g}× " + {"vs_ref": "sgemm", "vs_f16": "NumPy float16",
                                             "vs_quant": "scaling.quantize",
                                             "vs_cast": "softfp8's NumPy cast",
                                             "vs_u8": "NumPy uint8↔float64 astype",
                                             "vs_finite": "the NaN-free time",
                                             "vs_pow2": "power-of-two scales",
                                             "vs_exact": "the exact product"}[kind]
        if sf is not None and row.ref.ok:
            ratio = sf / row.ref.ns
            row.detail = f"{ratio:.3g}×"
            ok = ratio <= factor
        else:
            ok = False
    else:  # pragma: no cover
        raise ValueError(kind)
    if sf is None:
        row.status = "n/a"
    else:
        row.status = "met" if ok else "missed"
    if row.detail:
        row.status += f" ({row.detail})"


def fmt_ns(m):
    if not m.ok:
        return "n/a"
    v = m.ns
    if v < 1:
        s = f"{v:.3f}"
    elif v < 100:
        s = f"{v:.2f}"
    else:
        s = f"{v:.0f}"
    if m.scaled_from:
        s += "*"
    return s


def fmt_ratio(a, b):
    if not (a.ok and b.ok) or b.ns <= 0:
        return "—"
    r = a.ns / b.ns
    return f"{r:.2f}" if r < 100 else f"{r:.0f}"


# --------------------------------------------------------------------------- main
def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="10^6 elements, 256x256 matmul, 3 repeats")
    p.add_argument("--out", default=os.path.join(REPO, "BENCHMARKS.md"),
                   help="markdown report path (default: BENCHMARKS.md in the repo root)")
    p.add_argument("--no-write", action="store_true", help="print only, write no file")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="watchdog: dump every thread's traceback and exit (status 1) after S seconds "
                        "(default 900, 300 with --quick; 0 disables), so a hang in the C "
                        "code ends the run with a stack instead of blocking forever")
    return p.parse_args(argv)


def cpu_info():
    model, flags = "unknown", set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name") and model == "unknown":
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    if model == "unknown":
        model = platform.processor() or platform.machine()
    return model, {f: (f in flags) for f in ("avx2", "avx512f", "avx512vbmi")}


def fast_paths():
    ext = getattr(softfp8, "_ext", None)
    fn = getattr(ext, "fast_enabled", None)
    if fn is None:
        return "unknown (softfp8._ext.fast_enabled not present)"
    try:
        val = fn()
    except Exception as exc:  # noqa: BLE001
        return f"unknown (fast_enabled() raised {type(exc).__name__}: {exc})"
    if isinstance(val, (bool, int, np.integer)):
        return f"{'yes' if val else 'no'} (softfp8._ext.fast_enabled() = {val!r})"
    return f"{val!r} (softfp8._ext.fast_enabled())"


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    quick = args.quick
    n = 10**6 if quick else 10**7
    repeats = 3 if quick else 7
    mm_n = 256 if quick else 1024
    timeout = args.timeout if args.timeout is not None else (300.0 if quick else 900.0)
    if timeout > 0:
        faulthandler.dump_traceback_later(timeout, exit=True)
    started = time.perf_counter()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    cmd = shlex.join(["python", "benchmarks/bench.py"] + (sys.argv[1:] if argv is None else list(argv)))

    np.seterr(all="ignore")  # overflow to NaN, x/0 ... are part of the data: no warnings
    warnings.simplefilter("ignore", RuntimeWarning)

    e4m3 = softfp8.e4m3
    e5m2 = softfp8.e5m2
    ml_e4 = ml_dtypes.float8_e4m3fn if ml_dtypes is not None else None
    ml_e5 = ml_dtypes.float8_e5m2 if ml_dtypes is not None else None

    print(f"softfp8 benchmark ({'quick' if quick else 'full'}): {n:,} elements, "
          f"matmul {mm_n}x{mm_n}, up to {repeats} repeats, one thread", flush=True)
    print(f"softfp8 {softfp8.__version__} from {os.path.dirname(softfp8.__file__)}", flush=True)

    # ---- inputs: the same values for every library -------------------------
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32) * 4
    y = np.random.default_rng(1).standard_normal(n).astype(np.float32) * 4
    z = np.random.default_rng(2).standard_normal(n).astype(np.float32) * 4
    x64 = np.random.default_rng(0).standard_normal(n) * 4
    h = x.astype(np.float16)
    hy = y.astype(np.float16)
    a = x.astype(e4m3)
    b = y.astype(e4m3)
    c = z.astype(e4m3)
    a5 = x.astype(e5m2)
    b5 = y.astype(e5m2)
    u8 = a.view(np.uint8)
    u8_dst = np.empty_like(u8)
    f32_dst = np.empty_like(x)

    if ml_dtypes is not None:
        a_ml, b_ml = x.astype(ml_e4), y.astype(ml_e4)
        a5_ml, b5_ml = x.astype(ml_e5), y.astype(ml_e5)
    if torch is not None:
        tx, ty, tx64 = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(x64)
        a_t, b_t = tx.to(torch.float8_e4m3fn), ty.to(torch.float8_e4m3fn)
        a5_t, b5_t = tx.to(torch.float8_e5m2), ty.to(torch.float8_e5m2)

    elem_sizes = [n, SLICE_ELEMS] if n > SLICE_ELEMS else [n]

    def M(make):
        return measure(make, elem_sizes, lambda k: k, repeats, probe=PROBE_ELEMS)

    rows = []

    def add(row):
        row.num = len(rows) + 1
        rows.append(row)
        unit = "ns/multiply-add" if row.key.startswith("mm_") else "ns/elem"
        print(f"  [{row.num:2d}] {row.label:<42s} softfp8 {fmt_ns(row.sf):>8s} {unit}"
              f"{'' if row.sf.ok else '  (' + str(row.sf.err) + ')'}", flush=True)
        return row

    ml_ok = ml_dtypes is not None
    t_ok = torch is not None

    # ---- 1-4: float -> E4M3 ------------------------------------------------
    def cast_rne(k):
        xs = x[:k]
        return lambda: xs.astype(e4m3)

    r1 = add(Row("f32_e4m3", "float32→E4M3 (nearest-even)", M(cast_rne), sf_make=cast_rne,
                 ml=M(lambda k: (lambda: x[:k].astype(ml_e4))) if ml_ok else None,
                 tc=M(lambda k: (lambda: tx[:k].to(torch.float8_e4m3fn))) if t_ok else None,
                 ref=M(lambda k: (lambda: x[:k].copy())), ref_label="NumPy float32 x.copy()",
                 target=("abs", 0.5)))
    x64_u8 = u8.astype(np.float64)  # the same count of float64 values for NumPy's own cast

    def from_f64_row(key, name, fmt, ml_t, t_t):
        def mk(k):
            xs = x64[:k]
            return lambda: xs.astype(fmt)
        return add(Row(key, f"float64→{name} (nearest-even)", M(mk), sf_make=mk,
                       ml=M(lambda k: (lambda: x64[:k].astype(ml_t))) if ml_ok else None,
                       tc=M(lambda k: (lambda: tx64[:k].to(t_t))) if t_ok else None,
                       ref=M(lambda k: (lambda: x64_u8[:k].astype(np.uint8))),
                       ref_label="NumPy float64→uint8 astype", target=("vs_u8", 1.5)))

    from_f64_row("f64_e4m3", "E4M3", e4m3, ml_e4, torch.float8_e4m3fn if t_ok else None)
    from_f64_row("f64_e5m2", "E5M2", e5m2, ml_e5, torch.float8_e5m2 if t_ok else None)

    def cast_tz_flags(k):
        xs = x[:k]

        def f():
            with softfp8.rounding("toward_zero"), softfp8.collect_flags():
                xs.astype(e4m3)
        return f

    add(Row("f32_e4m3_tz_flags", "float32→E4M3 toward_zero + collect_flags",
            M(cast_tz_flags), sf_make=cast_tz_flags, ref=r1.ref, ref_label="NumPy float32 x.copy()",
            target=("overhead", "f32_e4m3", 0.20),
            notes=["peers have no rounding modes or flags"]))

    def cast_sr_of(src):
        def mk(k):
            xs = src[:k]

            def f():
                with softfp8.rounding("stochastic", seed=1):
                    xs.astype(e4m3)
            return f
        return mk

    sr_note = "issue 10: at most 2× the nearest-even cast (overhead ≤100%)"
    cast_sr, cast64_sr = cast_sr_of(x), cast_sr_of(x64)
    add(Row("f32_e4m3_sr", "float32→E4M3 stochastic (seed=1)", M(cast_sr), sf_make=cast_sr,
            ref=r1.ref, ref_label="NumPy float32 x.copy()", target=("overhead", "f32_e4m3", 1.0),
            notes=["no installed peer has a stochastic-rounding cast", sr_note]))
    add(Row("f64_e4m3_sr", "float64→E4M3 stochastic (seed=1)", M(cast64_sr), sf_make=cast64_sr,
            target=("overhead", "f64_e4m3", 1.0), notes=[sr_note]))

    # ---- 5: E4M3 -> float --------------------------------------------------
    add(Row("e4m3_f32", "E4M3→float32",
            M(lambda k: (lambda: a[:k].astype(np.float32))),
            ml=M(lambda k: (lambda: a_ml[:k].astype(np.float32))) if ml_ok else None,
            tc=M(lambda k: (lambda: a_t[:k].to(torch.float32))) if t_ok else None,
            ref=M(lambda k: (lambda: h[:k].astype(np.float32))),
            ref_label="NumPy float16→float32 astype", target=("abs", 0.5)))
    def to_f64_row(key, name, arr, arr_ml, arr_t):
        return add(Row(key, f"{name}→float64",
                       M(lambda k: (lambda: arr[:k].astype(np.float64))),
                       ml=M(lambda k: (lambda: arr_ml[:k].astype(np.float64))) if ml_ok else None,
                       tc=M(lambda k: (lambda: arr_t[:k].to(torch.float64))) if t_ok else None,
                       ref=M(lambda k: (lambda: u8[:k].astype(np.float64))),
                       ref_label="NumPy uint8→float64 astype", target=("vs_u8", 1.5)))

    to_f64_row("e4m3_f64", "E4M3", a, a_ml if ml_ok else None, a_t if t_ok else None)
    to_f64_row("e5m2_f64", "E5M2", a5, a5_ml if ml_ok else None, a5_t if t_ok else None)

    # ---- 6: E4M3 binary ufuncs --------------------------------------------
    torch_ops = {
        "add": lambda p, q: p + q,
        "multiply": lambda p, q: p * q,
        "true_divide": lambda p, q: p / q,
        "maximum": lambda p, q: torch.maximum(p, q),
        "less": lambda p, q: p < q,
    }
    for uf in ("add", "multiply", "true_divide", "maximum", "less"):
        ufunc = getattr(np, uf)
        top = torch_ops[uf]
        mk = (lambda k, u=ufunc: (lambda p=a[:k], q=b[:k]: u(p, q)))
        add(Row(f"e4m3_{uf}", f"E4M3 {uf}", M(mk), sf_make=mk,
                ml=M(lambda k, u=ufunc: (lambda: u(a_ml[:k], b_ml[:k]))) if ml_ok else None,
                tc=M(lambda k, o=top: (lambda: o(a_t[:k], b_t[:k]))) if t_ok else None,
                ref=M(lambda k, u=ufunc: (lambda: u(x[:k], y[:k]))),
                ref_label=f"NumPy float32 {uf}", target=("abs", 1.0)))

    # ---- 7: E5M2 add -------------------------------------------------------
    add(Row("e5m2_add", "E5M2 add",
            M(lambda k: (lambda: np.add(a5[:k], b5[:k]))),
            ml=M(lambda k: (lambda: np.add(a5_ml[:k], b5_ml[:k]))) if ml_ok else None,
            tc=M(lambda k: (lambda: a5_t[:k] + b5_t[:k])) if t_ok else None,
            ref=M(lambda k: (lambda: np.add(x[:k], y[:k]))),
            ref_label="NumPy float32 add", target=("abs", 1.0)))

    # ---- 8: E4M3 add with a non-default mode / flags ----------------------
    def add_mode(k):
        p, q = a[:k], b[:k]

        def f():
            with softfp8.rounding("upward"):
                np.add(p, q)
        return f

    def add_flags(k):
        p, q = a[:k], b[:k]

        def f():
            with softfp8.collect_flags():
                np.add(p, q)
        return f

    ref_add = next(r.ref for r in rows if r.key == "e4m3_add")
    add(Row("e4m3_add_up", "E4M3 add, rounding('upward')", M(add_mode), sf_make=add_mode,
            ref=ref_add,
            ref_label="NumPy float32 add", target=("overhead", "e4m3_add", 0.20)))
    add(Row("e4m3_add_flags", "E4M3 add, collect_flags()", M(add_flags), sf_make=add_flags,
            ref=ref_add,
            ref_label="NumPy float32 add", target=("overhead", "e4m3_add", 0.20)))

    # stochastic add / multiply / divide: at most 2x the nearest-even call (issue 10)
    for uf in ("add", "multiply", "true_divide"):
        def sr_mk(k, u=getattr(np, uf)):
            p, q = a[:k], b[:k]

            def f():
                with softfp8.rounding("stochastic", seed=1):
                    u(p, q)
            return f
        add(Row(f"e4m3_{uf}_sr", f"E4M3 {uf}, rounding('stochastic', seed=1)", M(sr_mk), sf_make=sr_mk,
                ref=next(r.ref for r in rows if r.key == f"e4m3_{uf}"), ref_label=f"NumPy float32 {uf}",
                target=("overhead", f"e4m3_{uf}", 1.0),
                notes=["issue 10: at most 2× the nearest-even call (overhead ≤100%)"]))

    # ---- 9: fma ------------------------------------------------------------
    add(Row("e4m3_fma", "E4M3 fma(a, b, c)",
            M(lambda k: (lambda: softfp8.fma(a[:k], b[:k], c[:k]))),
            ref=M(lambda k: (lambda: np.add(np.multiply(x[:k], y[:k]), z[:k]))),
            ref_label="NumPy float32 multiply then add", target=("abs", 1.5),
            notes=["peers have no fused 8-bit fma"]))

    def fma_sr(k):
        def f():
            with softfp8.rounding("stochastic", seed=1):
                softfp8.fma(a[:k], b[:k], c[:k])
        return f
    add(Row("e4m3_fma_sr", "E4M3 fma(a, b, c), rounding('stochastic', seed=1)", M(fma_sr), sf_make=fma_sr,
            ref=M(lambda k: (lambda: np.add(np.multiply(x[:k], y[:k]), z[:k]))),
            ref_label="NumPy float32 multiply then add", target=("overhead", "e4m3_fma", 1.0),
            notes=["issue 10: at most 2× the nearest-even call (overhead ≤100%)"]))

    # ---- 10: 16-bit formats (issue 10: add/sub/mul <= 1.2 ns, div <= 2.0, fma <= 2.5,
    #      sqrt <= 2.0; faster than ml_dtypes bfloat16, >= 4x faster than NumPy float16) ----
    shp_fmt = softfp8.shp(bias=15)
    sixteen = [
        ("float16", softfp8.float16, False, "float16"),
        ("bfloat16", softfp8.bfloat16, False, "bfloat16"),
        ("shp(bias=15)", shp_fmt, False, None),
        ("uhp", softfp8.uhp, True, None),
        ("hfp16_169", softfp8.hfp16_169, False, None),
    ]
    hz = z.astype(np.float16)
    np16 = {"add": M(lambda k: (lambda: np.add(h[:k], hy[:k]))),
            "multiply": M(lambda k: (lambda: np.multiply(h[:k], hy[:k]))),
            "divide": M(lambda k: (lambda: np.divide(h[:k], hy[:k]))),
            "sqrt": M(lambda k: (lambda: np.sqrt(h[:k]))),
            # NumPy has no fused float16 fma: multiply then add (two roundings)
            "fma": M(lambda k: (lambda: np.add(np.multiply(h[:k], hy[:k]), hz[:k])))}
    np_h_add, np_h_mul = np16["add"], np16["multiply"]
    limits16 = {"add": 1.2, "multiply": 1.2, "divide": 2.0, "sqrt": 2.0, "fma": 2.5}
    for name, fmt, unsigned, peer in sixteen:
        xs, ys, zs = (np.abs(x), np.abs(y), np.abs(z)) if unsigned else (x, y, z)
        p16, q16, r16 = xs.astype(fmt), ys.astype(fmt), zs.astype(fmt)
        ml16 = mlq16 = mlr16 = t16 = tq16 = None
        if peer == "bfloat16" and ml_ok:
            ml16, mlq16, mlr16 = (v.astype(ml_dtypes.bfloat16) for v in (xs, ys, zs))
        if peer is not None and t_ok:
            tdt = getattr(torch, peer)
            t16, tq16 = torch.from_numpy(xs).to(tdt), torch.from_numpy(ys).to(tdt)
        notes = ["inputs |x|, |y| (unsigned format)"] if unsigned else []
        calls = {"add": lambda p, q, r: np.add(p, q), "multiply": lambda p, q, r: np.multiply(p, q),
                 "divide": lambda p, q, r: np.divide(p, q), "sqrt": lambda p, q, r: np.sqrt(p),
                 "fma": softfp8.fma}
        torch_calls = {"add": lambda p, q: p + q, "multiply": lambda p, q: p * q,
                       "divide": lambda p, q: p / q, "sqrt": lambda p, q: p.sqrt()}
        for uf, call in calls.items():
            ml_call = (lambda p, q, r: np.add(np.multiply(p, q), r)) if uf == "fma" else call
            mk16 = (lambda k, c=call, p=p16, q=q16, r=r16: (lambda: c(p[:k], q[:k], r[:k])))
            add(Row(f"{name}_{uf}", f"{name} {uf}", M(mk16), sf_make=mk16,
                    ml=(M(lambda k, c=ml_call, p=ml16, q=mlq16, r=mlr16: (lambda: c(p[:k], q[:k], r[:k])))
                        if ml16 is not None else None),
                    tc=(M(lambda k, c=torch_calls[uf], p=t16, q=tq16: (lambda: c(p[:k], q[:k])))
                        if t16 is not None and uf in torch_calls else None),
                    ref=np16[uf], ref_label=f"NumPy float16 {uf}" + (" (multiply, add)" if uf == "fma" else ""),
                    target=("peer16", limits16[uf]),
                    notes=notes + (["ml_dtypes / NumPy: multiply then add"] if uf == "fma" else [])))
        if peer is not None:  # stochastic add / multiply / divide: at most 2x the nearest-even call (issue 10)
            for uf in ("add", "multiply", "divide"):
                def sr16(k, p=p16, q=q16, u=getattr(np, uf)):
                    def f():
                        with softfp8.rounding("stochastic", seed=1):
                            u(p[:k], q[:k])
                    return f
                add(Row(f"{name}_{uf}_sr" if uf != "add" else f"{name}_add_sr",
                        f"{name} {uf}, rounding('stochastic', seed=1)", M(sr16), sf_make=sr16,
                        ref=np16[uf], ref_label=f"NumPy float16 {uf}", target=("overhead", f"{name}_{uf}", 1.0),
                        notes=["issue 10: at most 2× the nearest-even call (overhead ≤100%)"]))
        if peer is not None:  # stochastic fma (stochastic.c, sfp8f_run_fma_sr): at most 2x the nearest-even call
            def fma_sr16(k, p=p16, q=q16, r=r16):
                def f():
                    with softfp8.rounding("stochastic", seed=1):
                        softfp8.fma(p[:k], q[:k], r[:k])
                return f
            add(Row(f"{name}_fma_sr", f"{name} fma, rounding('stochastic', seed=1)", M(fma_sr16), sf_make=fma_sr16,
                    ref=np16["fma"], ref_label="NumPy float16 fma (multiply, add)",
                    target=("overhead", f"{name}_fma", 1.0),
                    notes=["issue 10: at most 2× the nearest-even call (overhead ≤100%)"]))

            # sqrt of |x| (the rows above take x: half of those lanes are NaN, finished
            # outside the stochastic kernel, stochastic.c's finish_core)
            pa16 = np.abs(xs).astype(fmt)

            def sqrt_abs(mode, pa=pa16):
                def mk(k):
                    def f():
                        with softfp8.rounding(mode, **({"seed": 1} if mode == "stochastic" else {})):
                            np.sqrt(pa[:k])
                    return f
                return mk
            add(Row(f"{name}_sqrt_abs", f"{name} sqrt of |x|", M(sqrt_abs("nearest_even")),
                    sf_make=sqrt_abs("nearest_even"), ref=np16["sqrt"], ref_label="NumPy float16 sqrt"))
            add(Row(f"{name}_sqrt_sr", f"{name} sqrt of |x|, rounding('stochastic', seed=1)",
                    M(sqrt_abs("stochastic")), sf_make=sqrt_abs("stochastic"), ref=np16["sqrt"],
                    ref_label="NumPy float16 sqrt", target=("overhead", f"{name}_sqrt_abs", 1.0),
                    notes=["issue 10: at most 2× the nearest-even call (overhead ≤100%)"]))
            del pa16
        if name == "float16":  # a directed mode with the flags collected
            def dn_flags(k, p=p16, q=q16):
                def f():
                    with softfp8.rounding("downward"), softfp8.collect_flags():
                        np.add(p[:k], q[:k])
                return f
            add(Row("float16_add_down_flags", "float16 add, downward, collect_flags()", M(dn_flags),
                    ref=np16["add"], ref_label="NumPy float16 add", target=("peer16", 1.2)))
        del p16, q16, r16, ml16, mlq16, mlr16, t16, tq16

    # float32 -> bfloat16, nearest-even and stochastic (issue 10: at most 2x)
    def cast_bf16(mode):
        def mk(k):
            xs = x[:k]

            def f():
                with softfp8.rounding(mode, **({"seed": 1} if mode == "stochastic" else {})):
                    xs.astype(softfp8.bfloat16)
            return f
        return mk

    for mode, key, label in (("nearest_even", "f32_bf16", "float32→bfloat16 (nearest-even)"),
                             ("stochastic", "f32_bf16_sr", "float32→bfloat16 stochastic (seed=1)")):
        mk = cast_bf16(mode)
        add(Row(key, label, M(mk), sf_make=mk,
                ml=M(lambda k: (lambda: x[:k].astype(ml_dtypes.bfloat16))) if ml_ok else None,
                ref=M(lambda k: (lambda: x[:k].astype(np.float16))), ref_label="NumPy float32→float16 astype",
                target=("overhead", "f32_bf16", 1.0) if mode == "stochastic" else ("vs_ml", 1),
                notes=["issue 10: at most 2× the nearest-even cast (overhead ≤100%)"] if mode == "stochastic" else []))

    # float32 -> float16 (fast/cast16.c): at most NumPy's own float32 -> float16 astype
    def cast_f16(k):
        xs = x[:k]
        return lambda: xs.astype(softfp8.float16)

    add(Row("f32_f16", "float32→float16 (nearest-even)", M(cast_f16), sf_make=cast_f16,
            ref=M(lambda k: (lambda: x[:k].astype(np.float16))), ref_label="NumPy float32→float16 astype",
            target=("vs_f16", 1)))

    # ---- 10b: ordering (argmax, sort, argsort, unique), 8- and 16-bit ---------
    hb = x.astype(softfp8.bfloat16)
    ml_b = x.astype(ml_dtypes.bfloat16) if ml_ok else None
    order_ops = [("argmax", lambda v: np.argmax(v)), ("sort", lambda v: np.sort(v)),
                 ("argsort_stable", lambda v: np.argsort(v, kind="stable")),
                 ("unique", lambda v: np.unique(v))]
    for name, arr, peer in (("e4m3", a, None), ("bfloat16", hb, ml_b)):
        for op, call in order_ops:
            if name == "e4m3" and op in ("argsort_stable", "unique"):
                continue
            add(Row(f"{name}_{op}", f"{name} {op.replace('_', ' ')}",
                    M(lambda k, c=call, v=arr: (lambda: c(v[:k]))),
                    ml=M(lambda k, c=call, v=peer: (lambda: c(v[:k]))) if peer is not None else None,
                    ref=M(lambda k, c=call: (lambda: c(h[:k]))), ref_label=f"NumPy float16 {op}",
                    target=("vs_f16", 1.5)))

    def searchsorted_of(v):  # the first k elements sorted (untimed), then k queries
        def make(k):
            hay = np.sort(v[:k])
            return lambda: np.searchsorted(hay, v[:k][::-1])
        return make

    add(Row("bfloat16_searchsorted", "bfloat16 searchsorted (n queries into n sorted)",
            M(searchsorted_of(hb)),
            ml=M(searchsorted_of(ml_b)) if ml_b is not None else None,
            ref=M(searchsorted_of(h)), ref_label="NumPy float16 searchsorted",
            target=("vs_f16", 1.5)))
    del hb, ml_b

    # ---- 10d: correctly rounded elementary functions (tables of the core's results) --
    for name, fmt, limit in (("e4m3", e4m3, 0.6), ("bfloat16", softfp8.bfloat16, 2.5),
                             ("float16", softfp8.float16, 2.5)):
        p = x.astype(fmt)
        peer = x.astype(ml_dtypes.bfloat16) if (ml_ok and name == "bfloat16") else None
        for fn in ("exp", "tanh", "log"):
            uf = getattr(np, fn)
            mk_fn = (lambda k, u=uf, v=p: (lambda: u(v[:k])))
            add(Row(f"{name}_{fn}", f"{name} {fn} (correctly rounded)", M(mk_fn), sf_make=mk_fn,
                    ml=M(lambda k, u=uf, v=peer: (lambda: u(v[:k]))) if peer is not None else None,
                    ref=M(lambda k, u=uf: (lambda: u(h[:k]))), ref_label=f"NumPy float16 {fn}",
                    target=("abs", limit),
                    notes=["ml_dtypes / NumPy float16: computed in float32, not correctly rounded"]))
        if name == "e4m3":  # a unary operation under stochastic rounding (issue 10: <= 2x)
            def exp_sr(k, v=p):
                def f():
                    with softfp8.rounding("stochastic", seed=1):
                        np.exp(v[:k])
                return f
            add(Row("e4m3_exp_sr", "e4m3 exp, rounding('stochastic', seed=1)", M(exp_sr), sf_make=exp_sr,
                    ref=M(lambda k: (lambda: np.exp(h[:k]))), ref_label="NumPy float16 exp",
                    target=("overhead", "e4m3_exp", 1.0),
                    notes=["issue 10: at most 2× the nearest-even call (overhead ≤100%)"]))
        if name == "bfloat16":  # 16-bit: the per-code table (stochastic.c, sfp8f_srw) and its SIMD kernel
            def exp_sr16(k, v=p):
                def f():
                    with softfp8.rounding("stochastic", seed=1):
                        np.exp(v[:k])
                return f
            add(Row("bfloat16_exp_sr", "bfloat16 exp, rounding('stochastic', seed=1)", M(exp_sr16),
                    sf_make=exp_sr16, ref=M(lambda k: (lambda: np.exp(h[:k]))), ref_label="NumPy float16 exp",
                    target=("overhead", "bfloat16_exp", 1.0), notes=[SRW_NOTE]))
        del p, peer

    # ---- 10e: casts between formats: bfloat16 → E4M3, nearest and stochastic ----
    bq = x.astype(softfp8.bfloat16)
    ml_bq = x.astype(ml_dtypes.bfloat16) if ml_ok else None

    def bf_e4m3(k):
        return lambda: bq[:k].astype(e4m3)

    def bf_e4m3_sr(k):
        def f():
            with softfp8.rounding("stochastic", seed=1):
                bq[:k].astype(e4m3)
        return f
    add(Row("bf16_e4m3", "bfloat16→E4M3 (nearest-even)", M(bf_e4m3), sf_make=bf_e4m3,
            ml=M(lambda k: (lambda: ml_bq[:k].astype(ml_dtypes.float8_e4m3fn))) if ml_bq is not None else None,
            ref=M(lambda k: (lambda: h[:k].astype(np.float32))), ref_label="NumPy float16→float32 astype",
            target=("vs_ml", 1), notes=["ml_dtypes: float8_e4m3fn (saturating E4M3 of OCP)"]))
    add(Row("bf16_e4m3_sr", "bfloat16→E4M3 stochastic (seed=1)", M(bf_e4m3_sr), sf_make=bf_e4m3_sr,
            ref=M(lambda k: (lambda: h[:k].astype(np.float32))), ref_label="NumPy float16→float32 astype",
            target=("overhead", "bf16_e4m3", 1.0),
            notes=["issue 10: at most 2× the nearest-even cast (overhead ≤100%)"]))
    del bq, ml_bq

    # ---- 10e: casts between 16-bit formats: float16 → bfloat16, nearest and stochastic ----
    hq = x.astype(softfp8.float16)

    def f16_bf16(k):
        return lambda: hq[:k].astype(softfp8.bfloat16)

    def f16_bf16_sr(k):
        def f():
            with softfp8.rounding("stochastic", seed=1):
                hq[:k].astype(softfp8.bfloat16)
        return f
    add(Row("f16_bf16", "float16→bfloat16 (nearest-even)", M(f16_bf16), sf_make=f16_bf16,
            ml=M(lambda k: (lambda: h[:k].astype(ml_dtypes.bfloat16))) if ml_ok else None,
            ref=M(lambda k: (lambda: h[:k].astype(np.float32))), ref_label="NumPy float16→float32 astype",
            target=("vs_ml", 1), notes=["ml_dtypes: NumPy float16 → ml_dtypes.bfloat16 astype"]))
    add(Row("f16_bf16_sr", "float16→bfloat16 stochastic (seed=1)", M(f16_bf16_sr), sf_make=f16_bf16_sr,
            ref=M(lambda k: (lambda: h[:k].astype(np.float32))), ref_label="NumPy float16→float32 astype",
            target=("overhead", "f16_bf16", 1.0), notes=[SRW_NOTE]))
    del hq

    # ---- 10c: two threads, each on one half (the loops release the GIL) ------
    pool = ThreadPoolExecutor(2)

    def two_threads(fn, p, q):
        def make(k):
            h2 = k // 2
            return lambda: list(pool.map(lambda s: fn(p[s], q[s]), (slice(0, h2), slice(h2, k))))
        return make

    f16a, f16b = x.astype(softfp8.float16), y.astype(softfp8.float16)
    add(Row("float16_add_2t", "float16 add, two threads", M(two_threads(np.add, f16a, f16b)),
            ref=M(two_threads(np.add, h, hy)), ref_label="NumPy float16 add, two threads",
            target=("vs_f16", 1 / 4),
            notes=["results bit-identical to one thread (tests/stress/test_gil_release.py)"]))
    add(Row("e4m3_mul_2t", "E4M3 multiply, two threads", M(two_threads(np.multiply, a, b)),
            ref=M(two_threads(np.multiply, h, hy)), ref_label="NumPy float16 multiply, two threads"))
    del f16a, f16b

    # ---- 11: sum -----------------------------------------------------------
    torch_sum_note = []

    def torch_sum(k):
        p = a_t[:k]
        try:
            p.sum()
            return lambda: p.sum()
        except Exception as exc:  # noqa: BLE001
            torch_sum_note.append(f"torch: float8 sum unsupported ({type(exc).__name__}); "
                                  "timed a8.float().sum()")
            return lambda: p.float().sum()

    tsum = M(torch_sum) if t_ok else None
    add(Row("e4m3_sum", "E4M3 sum (a.sum())",
            M(lambda k: (lambda: a[:k].sum())),
            ml=M(lambda k: (lambda: a_ml[:k].sum())) if ml_ok else None,
            tc=tsum, ref=M(lambda k: (lambda: x[:k].sum())), ref_label="NumPy float32 sum",
            target=("abs", 1.0),
            notes=sorted(set(torch_sum_note)) + (["ml_dtypes sums in float8"] if ml_ok else [])))

    # ---- 11b: Dask (optional): exact chunked sum and cast, 4 chunks ----------
    try:
        import dask.array as _da
        import softfp8.dask as _sfd
    except ImportError:
        _da = None
    if _da is not None:
        def dask_sum(k):
            d = _da.from_array(a[:k], chunks=-(-k // 4))
            return lambda: _sfd.sum(d).compute(scheduler="threads")

        def dask_cast(k):
            d = _da.from_array(x[:k], chunks=-(-k // 4))
            return lambda: d.astype(a.dtype).compute(scheduler="threads")

        add(Row("dask_e4m3_sum", "Dask E4M3 sum, 4 chunks (exact, 1 rounding)", M(dask_sum),
                ref=M(lambda k: (lambda: a[:k].sum())), ref_label="softfp8 one-call sum",
                notes=["softfp8.dask.sum: per-chunk exact partials, threaded scheduler"]))
        add(Row("dask_e4m3_cast", "Dask float32 → E4M3, 4 chunks", M(dask_cast),
                ref=M(lambda k: (lambda: x[:k].astype(a.dtype))),
                ref_label="softfp8 one-call astype"))

    # ---- 12: matmul --------------------------------------------------------
    # Entries N(0, (4/N^0.25)^2): dot products of length N stay around 16,
    # inside the E4M3 range, for the E4M3-output product.
    def mats(sz):
        rng = np.random.default_rng(0)
        s = 4.0 / sz ** 0.25
        Af = (rng.standard_normal((sz, sz)) * s).astype(np.float32)
        Bf = (rng.standard_normal((sz, sz)) * s).astype(np.float32)
        return Af, Bf

    mat_cache = {}
    # formats of the dgemm + Ziv path (npy/matmul.c matmul_blas_ziv), exact dot, one rounding
    EXACT_MM = {"E5M2": e5m2, "bfloat16": softfp8.bfloat16, "float16": softfp8.float16}

    def mat(sz, kind):
        if (sz, kind) not in mat_cache:
            Af, Bf = mats(sz)
            if kind == "f32":
                val = (Af, Bf)
            elif kind == "sf":
                val = (Af.astype(e4m3), Bf.astype(e4m3))
            elif kind == "sf45":
                val = (Af.astype(e4m3), Bf.astype(e5m2))
            elif kind == "sf_nan":  # one NaN in A
                A8 = Af.astype(e4m3)
                A8.view(np.uint8)[sz // 3, sz // 2] = 0x7F
                val = (A8, Bf.astype(e4m3))
            elif kind in EXACT_MM:
                dt = EXACT_MM[kind].dtype
                val = (Af.astype(dt), Bf.astype(dt))
            elif kind == "f64":
                val = (Af.astype(np.float64), Bf.astype(np.float64))
            elif kind == "ml":
                val = (Af.astype(ml_e4), Bf.astype(ml_e4))
            elif kind == "t":
                val = (torch.from_numpy(Af).to(torch.float8_e4m3fn),
                       torch.from_numpy(Bf).to(torch.float8_e4m3fn))
            mat_cache[(sz, kind)] = val
        return mat_cache[(sz, kind)]

    def MM(make, size):
        sizes = [s for s in MATMUL_SIZES if s <= size] or [size]
        if sizes[0] != size:
            sizes.insert(0, size)
        probe = sizes[-1] if len(sizes) > 1 else None
        return measure(make, sizes, lambda s: s ** 3, repeats, probe=probe)

    def sf_mm32(sz):
        A, B = mat(sz, "sf")
        return lambda: softfp8.matmul(A, B, out_dtype=np.float32)

    def sf_mm8(sz):
        A, B = mat(sz, "sf")
        return lambda: A @ B

    def ml_mm32(sz):
        A, B = mat(sz, "ml")
        return lambda: A @ B

    def ml_mm8(sz):
        A, B = mat(sz, "ml")
        return lambda: (A @ B).astype(ml_e4)

    def t_mm32(sz):
        A, B = mat(sz, "t")
        Bc = B.t().contiguous().t()  # _scaled_mm wants B column-major
        one = torch.tensor(1.0)
        return lambda: torch._scaled_mm(A, Bc, scale_a=one, scale_b=one, out_dtype=torch.float32)

    def t_mm8(sz):
        A, B = mat(sz, "t")
        return lambda: A @ B

    def sf_acc(acc):   # E4M3 x E5M2 under an accumulation model, float32 results
        def make(sz):
            A, B = mat(sz, "sf45")
            return lambda: softfp8.matmul(A, B, out_dtype=np.float32, accumulation=acc)
        return make

    def np_mm(sz):
        A, B = mat(sz, "f32")
        return lambda: A @ B

    def np_dmm(sz):
        A, B = mat(sz, "f64")
        return lambda: A @ B

    def sf_mm_nan(sz):
        A, B = mat(sz, "sf_nan")
        return lambda: softfp8.matmul(A, B, out_dtype=np.float32)

    def sf_mm_exact(kind):
        def make(sz):
            A, B = mat(sz, kind)
            return lambda: A @ B
        return make

    sgemm = MM(np_mm, mm_n)
    # ml_dtypes' float8 matmul returns float32 (it never rounds to float8).
    mm_ml32 = MM(ml_mm32, mm_n) if ml_ok else None
    mm_rows = [
        add(Row("mm_f32", f"matmul E4M3 {mm_n}² → float32",
                MM(sf_mm32, mm_n), ml=mm_ml32,
                tc=MM(t_mm32, mm_n) if t_ok else None,
                ref=sgemm, ref_label=f"NumPy float32 sgemm {mm_n}²",
                target=("vs_ref", 2.0),
                notes=["ns per multiply-add", "softfp8.matmul(A, B, out_dtype=np.float32)",
                       "ml_dtypes: A_ml @ B_ml (returns float32)",
                       "torch: torch._scaled_mm(..., out_dtype=float32)"])),
        add(Row("mm_e4m3", f"matmul E4M3 {mm_n}² → E4M3",
                MM(sf_mm8, mm_n), ml=MM(ml_mm8, mm_n) if ml_ok else None,
                tc=MM(t_mm8, mm_n) if t_ok else None,
                ref=sgemm, ref_label=f"NumPy float32 sgemm {mm_n}²",
                target=("vs_ref", 2.5),
                notes=["ns per multiply-add", "softfp8: A @ B",
                       "ml_dtypes: (A_ml @ B_ml).astype(float8_e4m3fn) (rounds twice)",
                       "torch: A8 @ B8"])),
        add(Row("mm_acc16", f"matmul E4M3×E5M2 {mm_n}², float16 accumulator → float32",
                MM(sf_acc(softfp8.Accumulation(accumulator="float16")), mm_n),
                ref=sgemm, ref_label=f"NumPy float32 sgemm {mm_n}²",
                notes=["ns per multiply-add",
                       'softfp8.matmul(A, B, out_dtype=np.float32, accumulation=softfp8.Accumulation('
                       'accumulator="float16")): every addition rounded to float16 (no peer)'])),
        add(Row("mm_acc32p", f"matmul E4M3×E5M2 {mm_n}², float32 accumulator, promotion every 128 → float32",
                MM(sf_acc(softfp8.Accumulation(promote_every=128)), mm_n),
                ref=sgemm, ref_label=f"NumPy float32 sgemm {mm_n}²",
                notes=["ns per multiply-add",
                       "softfp8.matmul(A, B, out_dtype=np.float32, accumulation=softfp8.Accumulation("
                       "promote_every=128)): DeepSeek-V3's promotion interval (no peer)"])),
    ]
    mm_f32 = mm_rows[0]

    def sf_mixed_exact(sz):   # E4M3 x E5M2, per-tensor scales, exact dot, one rounding
        A, B = mat(sz, "sf45")
        return lambda: softfp8.scaled_mm(A, B, 0.5, 0.25, out_dtype=np.float32)

    add(Row("mm_mixed_exact", f"matmul E4M3×E5M2 {mm_n}², exact (scaled_mm, per-tensor scales) → float32",
            MM(sf_mixed_exact, mm_n), ref=sgemm, ref_label=f"NumPy float32 sgemm {mm_n}²",
            target=("vs_ref", 3.0),
            notes=["ns per multiply-add", "softfp8.scaled_mm(A, B, 0.5, 0.25, out_dtype=np.float32): "
                   "the exact sum times 1/8 rounded once (dgemm with an exactness test per row and "
                   "column, docs/training.md)"]))
    def sf_mixed_any(sz):     # the same product, scales that are not powers of two
        A, B = mat(sz, "sf45")
        return lambda: softfp8.scaled_mm(A, B, 0.3, 0.7, out_dtype=np.float32)

    mixed_pow2 = rows[-1]
    add(Row("mm_mixed_any", f"matmul E4M3×E5M2 {mm_n}², exact (scaled_mm, scales 0.3 and 0.7) → float32",
            MM(sf_mixed_any, mm_n), ref=mixed_pow2.sf, ref_label=f"the power-of-two scales of row #{mixed_pow2.num}",
            target=("vs_pow2", 1.1),
            notes=["ns per multiply-add", "softfp8.scaled_mm(A, B, 0.3, 0.7, out_dtype=np.float32): the exact "
                   "sum times s = round_f32(0.3 * 0.7), rounded once; issue 22 item 5: any scales as "
                   "fast as power-of-two ones (1.1: the timing noise of one run)"]))
    add(Row("mm_e4m3_nan", f"matmul E4M3 {mm_n}² with one NaN in A → float32",
            MM(sf_mm_nan, mm_n), ref=mm_f32.sf, ref_label=f"the NaN-free row #{mm_f32.num}",
            target=("vs_finite", 1.5),
            notes=["ns per multiply-add", "softfp8.matmul(A, B, out_dtype=np.float32), A[N//3, N//2] = NaN: "
                   "the NaN's row by its special products, the rest by the binary64 BLAS path"]))
    for kind in EXACT_MM:
        add(Row(f"mm_{kind.lower()}", f"matmul {kind} {mm_n}² → {kind}",
                MM(sf_mm_exact(kind), mm_n), ref=sgemm, ref_label=f"NumPy float32 sgemm {mm_n}²",
                target=("vs_ref", 3.0),
                notes=["ns per multiply-add", "softfp8: A @ B (exact dot, one rounding: dgemm with "
                       "an exactness certificate / Ziv's test per output, docs/performance.md)"]))
    add(Row("mm_dgemm", f"float64 dgemm {mm_n}² (NumPy; reference, the binary64 floor)",
            MM(np_dmm, mm_n), ref=sgemm, ref_label=f"NumPy float32 sgemm {mm_n}²",
            notes=["ns per multiply-add", "not softfp8: NumPy float64 A @ B, the BLAS call "
                   "under every exact matmul path above"]))

    # ---- issue 22 item 5: accumulation models at 256x784x128, ratio to the exact product ----
    g22 = np.random.default_rng(22)
    A22 = (g22.standard_normal((256, 784)) * 2).astype(e4m3)
    B22 = (g22.standard_normal((784, 128)) * 2).astype(e4m3)

    def P22(a, b, acc, base_acc=None, b_ops=None):
        """(model, reference) timed alternately (measure_pair): softfp8.matmul(a, b, float32,
        acc) against the same call with base_acc (None: the exact product) on b_ops (a, b)"""
        ba, bb = b_ops if b_ops is not None else (a, b)
        return measure_pair(lambda: softfp8.matmul(a, b, out_dtype=np.float32, accumulation=acc),
                            lambda: softfp8.matmul(ba, bb, out_dtype=np.float32, accumulation=base_acc),
                            a.shape[0] * a.shape[1] * b.shape[1], repeats)

    for key, what, acc in (
            ("mm_model_f32", "float32 accumulator", softfp8.Accumulation(accumulator=np.float32)),
            ("mm_model_f32rz", "float32 accumulator rounded toward zero",
             softfp8.Accumulation(accumulator=np.float32, rounding="toward_zero")),
            ("mm_model_f32p128", "float32 accumulator, promotion every 128",
             softfp8.Accumulation(accumulator=np.float32, promote_every=128)),
            ("mm_model_f16p64", "float16 accumulator, promotion every 64",
             softfp8.Accumulation(accumulator=softfp8.float16, promote_every=64)),
            ("mm_model_bf16", "bfloat16 accumulator", softfp8.Accumulation(accumulator=softfp8.bfloat16)),
            ("mm_model_f32_pf16", "float16 products, float32 accumulator, promotion every 16",
             softfp8.Accumulation(accumulator=np.float32, product=softfp8.float16, promote_every=16)),
            ("mm_model_pairwise", "float32 accumulator, pairwise order",
             softfp8.Accumulation(accumulator=np.float32, order="pairwise")),
            ("mm_model_kahan", "float32 accumulator, Kahan order",
             softfp8.Accumulation(accumulator=np.float32, order="kahan"))):
        sf22, ex22 = P22(A22, B22, acc)
        add(Row(key, f"matmul E4M3 256×784×128, {what} → float32", sf22, ref=ex22,
                ref_label="the exact softfp8.matmul(A, B, out_dtype=np.float32), same operands",
                target=("vs_exact", 3.0),
                notes=["ns per multiply-add", f"softfp8.matmul(A, B, out_dtype=np.float32, accumulation={acc!r})",
                       "issue 22 item 5: every accumulation model at most 3x the exact product"]))

    # the same models on 16-bit operands (bfloat16 / float16, the common training inputs)
    for fname, key, what, acc in (
            ("bfloat16", "mm_model16_bf16_f32", "float32 accumulator", softfp8.Accumulation(accumulator=np.float32)),
            ("float16", "mm_model16_f16_kahan", "float32 accumulator, Kahan order",
             softfp8.Accumulation(accumulator=np.float32, order="kahan")),
            ("bfloat16", "mm_model16_bf16_bf16", "bfloat16 accumulator",
             softfp8.Accumulation(accumulator=softfp8.bfloat16)),
            ("float16", "mm_model16_f16_pf16", "float16 products, float32 accumulator",
             softfp8.Accumulation(product=softfp8.float16, accumulator=np.float32))):
        a16 = (g22.standard_normal((256, 784)) * 2).astype(getattr(softfp8, fname))
        b16 = (g22.standard_normal((784, 128)) * 2).astype(getattr(softfp8, fname))
        sf16, ex16 = P22(a16, b16, acc)
        add(Row(key, f"matmul {fname} 256×784×128, {what} → float32", sf16, ref=ex16,
                ref_label="the exact softfp8.matmul(A, B, out_dtype=np.float32), same operands",
                target=("vs_exact", 3.0),
                notes=["ns per multiply-add", f"softfp8.matmul(A, B, out_dtype=np.float32, accumulation={acc!r})",
                       "issue 22 item 5: every accumulation model at most 3x the exact product"]))

    # scaled_mm with an accumulation model: scales that are not powers of two against 0.5 / 0.25
    def S22(sa, sb):
        acc = softfp8.Accumulation(accumulator=np.float32)
        return lambda: softfp8.scaled_mm(A22, B22, sa, sb, out_dtype=np.float32, accumulation=acc)

    s22any, s22pow2 = measure_pair(S22(0.3, 0.7), S22(0.5, 0.25), 256 * 784 * 128, repeats)

    add(Row("mm_scaled_acc_any", "scaled_mm E4M3 256×784×128, float32 accumulator, scales 0.3 and 0.7 → float32",
            s22any, ref=s22pow2, ref_label="the same call with scales 0.5 and 0.25",
            target=("vs_pow2", 1.1),
            notes=["ns per multiply-add", "softfp8.scaled_mm(A, B, 0.3, 0.7, out_dtype=np.float32, "
                   "accumulation=softfp8.Accumulation(accumulator=np.float32)): the model's sum times "
                   "round_f32(0.3 * 0.7), rounded once", "issue 22 item 5: any scales as fast as power-of-two "
                   "ones (1.1: the timing noise of one run)"]))

    # matrix-unit profiles (block-FMA model), each on operands of an input format it takes,
    # against the exact product of the same operands; and the small shape 64x64x128
    def ops22(fmt, m=256, k=784, p=128):
        return ((g22.standard_normal((m, k)) * 2).astype(fmt), (g22.standard_normal((k, p)) * 2).astype(fmt))


    for unit, fname in (("h100", "e4m3"), ("ada", "e4m3"), ("b200", "e5m2"), ("h100", "float16"),
                        ("a100", "bfloat16"), ("v100", "float16"), ("mi300x", "e4m3fnuz"), ("mi300x", "float16"),
                        ("mi300x", "bfloat16"), ("mi100", "float16"), ("mi250", "bfloat16")):
        fmt = getattr(softfp8, fname)
        a22, b22 = (A22, B22) if fname == "e4m3" else ops22(fmt)
        acc = softfp8.Accumulation.profile(unit)
        sfu, exu = P22(a22, b22, acc)
        add(Row(f"mm_unit_{unit}_{fname}", f"matmul {fname} 256×784×128, {unit} profile → float32",
                sfu, ref=exu,
                ref_label="the exact softfp8.matmul(A, B, out_dtype=np.float32), same operands",
                target=("vs_exact", 3.0),
                notes=["ns per multiply-add", f"softfp8.matmul(A, B, out_dtype=np.float32, "
                       f"accumulation=softfp8.Accumulation.profile({unit!r}))",
                       "issue 22 item 5: every profile at most 3x the exact product"]))
    # TF32 (float32 arrays of TF32 values): softfp8 has no 19-bit dtype, so no exact product of
    # these operands; the reference is the exact product of bfloat16 operands of the same shape
    t22a, t22b = ((g22.standard_normal(s) * 2).astype(np.float32) for s in ((256, 784), (784, 128)))
    t22a, t22b = ((t.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32) for t in (t22a, t22b))
    bf22 = ops22(softfp8.bfloat16)
    for unit in ("h100", "a100"):
        acc = softfp8.Accumulation.profile(unit)
        sft, ext = P22(t22a, t22b, acc, b_ops=bf22)
        add(Row(f"mm_unit_{unit}_tf32", f"matmul tf32 256×784×128, {unit} profile → float32", sft, ref=ext,
                ref_label="the exact softfp8.matmul of bfloat16 operands, same shape (no TF32 dtype)",
                target=("vs_exact", 3.0),
                notes=["ns per multiply-add", f"softfp8.matmul(A, B, out_dtype=np.float32, "
                       f"accumulation=softfp8.Accumulation.profile({unit!r})), A and B float32 arrays of TF32 values",
                       "issue 22 item 5: every profile at most 3x the exact product"]))
    a64, b64 = ops22(e4m3, 64, 64, 128)
    for key, what, acc in (("f32", "float32 accumulator", softfp8.Accumulation(accumulator=np.float32)),
                           ("h100", "h100 profile", softfp8.Accumulation.profile("h100"))):
        sfs, exs = P22(a64, b64, acc)
        add(Row(f"mm_small_{key}", f"matmul E4M3 64×64×128, {what} → float32", sfs, ref=exs,
                ref_label="the exact softfp8.matmul(A, B, out_dtype=np.float32), same operands",
                target=("vs_exact", 3.0),
                notes=["ns per multiply-add", "issue 22 item 5: small products at most 3x exact"]))
    del mat_cache

    # ---- 12b: issue 10's FP8 training run (benchmarks/train_bench.py) -------
    # Times in seconds per run (not ns): the three backends trained in turn, median.
    epochs = train_bench.QUICK_EPOCHS if quick else train_bench.EPOCHS
    try:
        runs = train_bench.compare(epochs, repeats=3)
        secs = {k: Meas(v[0], reps=3) for k, v in runs.items()}
        acc = "; ".join(f"{k} {v[0]:.3f} s, test accuracy {100 * v[1].accuracy:.1f}%, loss "
                        f"{v[1].loss:.4f}" for k, v in runs.items())
    except Exception as exc:  # noqa: BLE001 - a failing run prints n/a
        secs, acc = {}, f"failed: {type(exc).__name__}: {exc}"
    add(Row("train_mlp", f"FP8 MLP training run, {epochs} epochs (s per run, not ns)",
            secs.get("softfp8", NA), ml=secs.get("ml_dtypes"), ref=secs.get("float32"),
            ref_label="the same run in float32", target=("vs_ml", 1.0),
            notes=["MLP 64-256-10 on 1797x64 generated digits-like inputs, batches of 128, "
                   "E4M3 x/w, E5M2 gradients, per-tensor current scaling, float32 matmul "
                   "outputs (benchmarks/train_bench.py); softfp8: softfp8.scaled_mm, every "
                   "matmul exact; ml_dtypes: float32 matmuls of the upcast codes", acc]))

    # ---- issue 22 item 5: block quantisers and DelayedScaling (1024x1024 float32) ----
    from softfp8 import mx as _mx, scaling as _scaling
    q2d = np.random.default_rng(22).standard_normal((1024, 1024)).astype(np.float32)

    def _rows(f):   # the whole 1024 x 1024 tensor per call: ns per element of it
        return lambda k: (lambda: f(q2d))

    def MQ(make):   # the quantiser rows time the one tensor (not the element sizes of M): an absolute
        return measure(make, [q2d.size], lambda k: k, max(repeats, PAIR_MIN), best=True)   # target, the minimum
    for qk in ("nvfp4", "mxfp4", "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxint8"):
        add(Row(f"quant_{qk}", f"mx.quantize(x, {qk!r}) 1024² float32", MQ(_rows(lambda a, qk=qk: _mx.quantize(a, qk))),
                target=("abs", 2.0), notes=["blocks along the last axis; the C block quantiser (quantize.c)"]))
    ds = _scaling.DelayedScaling()
    ds.quantize(q2d)    # one step: the scale from the history, as every later training step casts
    sdq, sq = measure_pair(lambda: ds.quantize(q2d), lambda: _scaling.quantize(q2d, softfp8.e4m3), q2d.size, repeats)
    add(Row("quant_delayed", "DelayedScaling.quantize(x) 1024² float32, after one step",
            sdq, ref=sq,
            ref_label="scaling.quantize(x, e4m3)", target=("vs_quant", 1.2),
            notes=["the recipe after one step, whose scale (fmt.max / amax) makes the same codes as "
                   "scaling.quantize's: a fresh DelayedScaling() casts with scale 1, whose E4M3 "
                   "subnormals make the cast itself about 13% slower"]))

    # ---- softfp8 ver: lines checked per second (ns per line; 10^6 lines/s = 1000 ns) ----
    import io as _io
    from softfp8 import vectors as _V
    ver_data = b"".join(_V.generate(e4m3, "mul")) * 16   # 2^20 lines, the exhaustive products

    def _ver(k):
        return lambda: _V.verify(_io.BytesIO(ver_data), e4m3, "mul")
    add(Row("ver_lines", "softfp8 ver, 2^20 e4m3 mul lines (ns per line)",
            measure(_ver, [1 << 20], lambda k: k, repeats), target=("abs", 1000.0),
            notes=["softfp8.vectors.verify of the exhaustive products, sixteen times: every line "
                   "parsed, recomputed and compared; target at least 10^6 lines per second (was "
                   "tests/tools/test_vectors.py's timed test)"]))

    # ---- issue 26: softfp8.jax.quantize (XLA FFI custom call) vs softfp8's NumPy cast ----
    try:
        import jax
        import softfp8.jax as sjax
    except ImportError:  # pragma: no cover - optional peer
        jax = None
    if jax is not None:
        jq = jax.jit(lambda v: sjax.quantize(v, "e4m3"))
        jx = jax.device_put(x)

        def jax_q(k):
            xs = jx[:k]
            jax.block_until_ready(jq(xs))  # compiled for this size before timing
            return lambda: jax.block_until_ready(jq(xs))
        jcast = jax.jit(lambda v: v.astype(jax.numpy.float8_e4m3fn))
        jx1 = jx[:SLICE_ELEMS]
        jax.block_until_ready(jcast(jx1))
        jown = measure(lambda k: (lambda: jax.block_until_ready(jcast(jx1))), [jx1.size], lambda k: k, repeats)
        add(Row("jax_f32_e4m3", "softfp8.jax.quantize float32→E4M3 (jit)", M(jax_q), sf_make=jax_q,
                ref=M(cast_rne), ref_label="softfp8 NumPy cast x.astype(e4m3)", target=("vs_cast", 1.5),
                notes=[f"XLA FFI custom call on a JAX CPU array, result float8_e4m3fn; JAX's own jitted "
                       f"x.astype(jnp.float8_e4m3fn): {fmt_ns(jown)} ns/elem ({jx1.size:,} elements)"]))

    # ---- issue 26 item 6: quantise through the PyTorch bridge (softfp8.torch) ----
    if t_ok:
        torch_bridge_rows(add, M, x, tx)

    # ---- reference-only rows ----------------------------------------------
    refs = [
        ("memory copy uint8 (np.copyto)", M(lambda k: (lambda: np.copyto(u8_dst[:k], u8[:k])))),
        ("memory copy float32 (np.copyto)", M(lambda k: (lambda: np.copyto(f32_dst[:k], x[:k])))),
        ("NumPy float32→float16 astype", M(lambda k: (lambda: x[:k].astype(np.float16)))),
        ("NumPy float16 add", np_h_add),
        ("NumPy float16 multiply", np_h_mul),
        ("NumPy float32 add", ref_add),
    ]

    # ---- overhead rows: baseline and variant timed alternately -------------
    by_key = {r.key: r for r in rows}
    for r in rows:
        if r.target and r.target[0] == "overhead":
            base = by_key.get(r.target[1])
            if base is not None and base.sf.ok and r.sf.ok and base.sf_make and r.sf_make:
                size = min(r.sf.size, base.sf.size)
                r.overhead = paired_ratio(base.sf_make(size), r.sf_make(size), max(repeats, 5))
                if r.overhead is not None:
                    r.notes.append(f"overhead from {max(repeats, 5)} alternating baseline/variant "
                                   f"calls on {size:,} elements")

    # ---- size notes --------------------------------------------------------
    for r in rows:
        is_mm = r.key.startswith("mm_")
        want = mm_n if is_mm else n
        for who, m in (("softfp8", r.sf), ("ml_dtypes", r.ml), ("torch", r.tc),
                       ("NumPy ref", r.ref)):
            if m.ok and m.size is not None and m.size < want:
                m.scaled_from = m.size
                if is_mm:
                    r.notes.append(f"{who} timed at {m.size}² and scaled per multiply-add (*)")
                else:
                    r.notes.append(f"{who} timed on a {m.size:,}-element slice and scaled (*)")
            if not m.ok and m.err not in (None, "n/a"):
                r.notes.append(f"{who}: {m.err}")
        evaluate(r, by_key)

    elapsed = time.perf_counter() - started

    # ---- cross-checks (not assertions; printed so odd results are visible) --
    checks = cross_checks(x, y, ml_e4, ml_e5)

    # ---- output ------------------------------------------------------------
    model, flags = cpu_info()
    versions = {
        "Python": platform.python_version(),
        "NumPy": np.__version__,
        "softfp8": f"{softfp8.__version__} ({os.path.relpath(os.path.dirname(softfp8.__file__), REPO)})",
        "ml_dtypes": getattr(ml_dtypes, "__version__", "installed") if ml_ok else "not installed",
        "torch": torch.__version__ if t_ok else "not installed",
    }
    header = [
        f"Command: `{cmd}`",
        f"Date: {when}",
        f"CPU: {model}; " + ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in flags.items()),
        "Threads: 1 (OPENBLAS/OMP/MKL_NUM_THREADS=1" + (", torch.set_num_threads(1))" if t_ok else ")"),
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        f"softfp8 fast paths enabled: {fast_paths()}",
        f"Elements per row: {n:,}; matmul {mm_n}×{mm_n}; median of up to {repeats} repeats "
        f"after a warm-up call (fewer, at least {MIN_REPEATS}, when a call is slow); issue 22's rows: "
        f"the minimum of {max(repeats, PAIR_MIN)} calls, model and reference alternately; "
        f"run time {elapsed:.0f} s",
    ]

    faulthandler.cancel_dump_traceback_later()
    print_table(rows, refs, header, checks)
    if not args.no_write:
        write_md(args.out, rows, refs, header, checks)
        print(f"\nwrote {args.out}")
    return 0


# --------------------------------------------------------------------------- cross-checks
def _same_bits(p, q):
    """Fraction of equal codes, any NaN code equal to any other NaN code."""
    pn = np.isnan(p.astype(np.float32))
    qn = np.isnan(q.astype(np.float32))
    eq = (p.view(np.uint8) == q.view(np.uint8)) | (pn & qn)
    return float(eq.mean())


def cross_checks(x, y, ml_e4, ml_e5):
    out = []
    k = min(len(x), 10**5)
    xs, ys = x[:k], y[:k]
    e4m3, e5m2 = softfp8.e4m3, softfp8.e5m2

    def check(label, fn):
        try:
            out.append(f"{label}: {fn()}")
        except Exception as exc:  # noqa: BLE001
            out.append(f"{label}: FAILED {type(exc).__name__}: {exc}")

    a, b = xs.astype(e4m3), ys.astype(e4m3)
    if ml_e4 is not None:
        am, bm = xs.astype(ml_e4), ys.astype(ml_e4)
        check("float32→E4M3 codes equal to ml_dtypes", lambda: f"{_same_bits(a, am):.4%}")
        check("E4M3→float32 equal to ml_dtypes",
              lambda: f"{np.mean((a.astype(np.float32) == am.astype(np.float32)) | np.isnan(am.astype(np.float32))):.4%}")
        for uf in ("add", "multiply", "true_divide", "maximum"):
            u = getattr(np, uf)
            check(f"E4M3 {uf} codes equal to ml_dtypes", lambda u=u: f"{_same_bits(u(a, b), u(am, bm)):.4%}")
        check("E4M3 less equal to ml_dtypes", lambda: f"{np.mean(np.less(a, b) == np.less(am, bm)):.4%}")
        a5, b5 = xs.astype(e5m2), ys.astype(e5m2)
        a5m, b5m = xs.astype(ml_e5), ys.astype(ml_e5)
        check("E5M2 add codes equal to ml_dtypes", lambda: f"{_same_bits(np.add(a5, b5), np.add(a5m, b5m)):.4%}")
    rne = a.view(np.uint8)

    def tz():
        with softfp8.rounding("toward_zero"), softfp8.collect_flags() as fc:
            t = xs.astype(e4m3)
        exact = xs == a.astype(np.float32)
        mag_ok = np.all(np.abs(t.astype(np.float32)) <= np.abs(xs))
        return (f"{np.mean(t.view(np.uint8) != rne):.1%} of codes differ from nearest-even "
                f"({np.mean(~exact):.1%} inexact); |result| ≤ |x| everywhere: {bool(mag_ok)}; "
                f"flags {getattr(fc, 'flags', fc)!r}")

    check("toward_zero cast", tz)

    def sr():
        with softfp8.rounding("stochastic", seed=1):
            s1 = xs.astype(e4m3)
        with softfp8.rounding("stochastic", seed=1):
            s1b = xs.astype(e4m3)
        with softfp8.rounding("stochastic", seed=2):
            s2 = xs.astype(e4m3)
        err = float(np.mean(s1.astype(np.float64) - xs.astype(np.float64)))
        return (f"same seed reproducible: {bool(np.array_equal(s1.view(np.uint8), s1b.view(np.uint8)))}; "
                f"seed 1 vs 2 differ in {np.mean(s1.view(np.uint8) != s2.view(np.uint8)):.1%}; "
                f"mean rounding error {err:+.2e}")

    check("stochastic cast", sr)

    def fma_chk():
        c = (xs * 0.5).astype(e4m3)
        r = softfp8.fma(a, b, c)
        exact = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
        want = exact.astype(e4m3)  # exact value rounded once (float64 holds it exactly)
        return f"codes equal to float64(a*b+c) rounded once: {_same_bits(r, want):.4%}"

    check("fma", fma_chk)

    def sum_chk():
        s = a[:1000].sum()
        exact = float(np.sum(a[:1000].astype(np.float64)))
        once = float(np.float64(exact).astype(e4m3))
        return (f"a[:1000].sum() = {float(s)!r} (dtype {np.asarray(s).dtype}); exact sum {exact!r} "
                f"rounded once to E4M3 = {once!r}; equal: {float(s) == once}")

    check("sum", sum_chk)

    def mm_chk():
        rng = np.random.default_rng(5)
        A = (rng.standard_normal((64, 64)) * 0.7).astype(np.float32).astype(e4m3)
        B = (rng.standard_normal((64, 64)) * 0.7).astype(np.float32).astype(e4m3)
        r32 = softfp8.matmul(A, B, out_dtype=np.float32)
        ex = A.astype(np.float64) @ B.astype(np.float64)
        r8 = A @ B
        return (f"float32-out max |err| vs float64 product {float(np.max(np.abs(r32 - ex))):.2e}; "
                f"E4M3-out codes equal to exact rounded once {_same_bits(r8, ex.astype(e4m3)):.4%}")

    check("matmul 64²", mm_chk)
    out += golden_checks()
    return out


def _compare_codes(label, got, want, fmt, flags_got=None, flags_want=None):
    """One line: mismatches of ufunc codes against the golden model softfp8.bits."""
    g = np.asarray(got).view(fmt.storage).ravel()
    w = np.asarray(want).astype(fmt.storage).ravel()
    gv = np.asarray(got).astype(np.float64).ravel()
    wv = w.view(fmt.dtype).astype(np.float64)
    both_nan = np.isnan(gv) & np.isnan(wv)
    bad = (g != w) & ~both_nan
    nan_only = int(np.count_nonzero((g != w) & both_nan))
    msg = f"{label}: {bad.size - int(bad.sum())}/{bad.size} equal"
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        msg += f" — MISMATCH {int(bad.sum())} (first at index {i}: got code {int(g[i]):#x}, golden {int(w[i]):#x})"
    if nan_only:
        msg += f"; {nan_only} differ only in NaN code"
    if flags_got is not None:
        fw = int(np.bitwise_or.reduce(np.asarray(flags_want).ravel() & 0x1F)) if np.size(flags_want) else 0
        fg = int(flags_got) & 0x1F
        if fg == fw:
            msg += "; flags equal"
        else:
            msg += f"; FLAGS DIFFER (collect_flags {fg:#x}, golden {fw:#x})"
            return msg, True
    return msg, bool(bad.any())


def golden_checks():
    """ufunc / cast results against softfp8.bits (the golden model): exhaustive
    operand pairs for 8-bit formats, random codes for 16-bit ones, in three
    rounding modes; float32 sources include random bit patterns (NaN, inf,
    subnormals)."""
    from softfp8 import bits

    lines, problems = [], 0
    rng = np.random.default_rng(7)
    e4m3, e5m2 = softfp8.e4m3, softfp8.e5m2
    modes = ("nearest_even", "upward", "toward_zero")
    ops = (("add", np.add, bits.add), ("multiply", np.multiply, bits.mul),
           ("true_divide", np.true_divide, bits.div), ("maximum", np.maximum, bits.max))
    fmts = [(e4m3, None), (e5m2, None), (softfp8.float16, None), (softfp8.bfloat16, None),
            (softfp8.shp(bias=15), None), (softfp8.uhp, None), (softfp8.hfp16_169, None)]
    floats = np.concatenate([
        np.random.default_rng(0).standard_normal(50_000).astype(np.float32) * 4,
        rng.integers(0, 2**32, 50_000, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    floats64 = np.concatenate([
        np.random.default_rng(0).standard_normal(50_000) * 4,
        rng.integers(0, 2**63, 50_000, dtype=np.uint64).view(np.float64),
        -(rng.integers(0, 2**63, 50_000, dtype=np.uint64).view(np.float64))])

    def run(label, fn):
        nonlocal problems
        try:
            msg, bad = fn()
        except Exception as exc:  # noqa: BLE001
            msg, bad = f"{label}: FAILED {type(exc).__name__}: {exc}", True
        problems += bad
        if bad:
            lines.append(msg)
        return msg

    count = 0
    for fmt, _ in fmts:
        if fmt.bits == 8:
            codes = np.arange(256, dtype=np.uint8)
            A, B = np.repeat(codes, 256), np.tile(codes, 256)
        else:
            A = rng.integers(0, 1 << fmt.bits, 100_000).astype(fmt.storage)
            B = rng.integers(0, 1 << fmt.bits, 100_000).astype(fmt.storage)
        a, b = A.view(fmt.dtype), B.view(fmt.dtype)
        allc = np.arange(1 << fmt.bits).astype(fmt.storage)

        def widen(dt):
            want, _ = bits.to_float(allc, fmt, dtype=dt)
            got = allc.view(fmt.dtype).astype(dt)
            ut = np.uint32 if dt is np.float32 else np.uint64
            same = (got.view(ut) == want.view(ut)) | (np.isnan(got) & np.isnan(want))
            msg = f"{fmt.name}→{np.dtype(dt).name} all codes: {int(same.sum())}/{same.size} equal"
            if not same.all():
                i = int(np.flatnonzero(~same)[0])
                msg += f" — MISMATCH at code {i:#x}: got {got[i]!r}, golden {want[i]!r}"
            return msg, not same.all()

        for dt in (np.float32, np.float64):
            run(f"{fmt.name}→{np.dtype(dt).name}", lambda dt=dt: widen(dt))
            count += 1
        for mode in modes:
            for src in (floats, floats64):
                def cast(mode=mode, src=src):
                    want, fw = bits.from_float(src, fmt, rounding=mode)
                    with softfp8.rounding(mode), softfp8.collect_flags() as fc:
                        got = src.astype(fmt)
                    return _compare_codes(f"{src.dtype}→{fmt.name} {mode}", got, want, fmt,
                                          fc.flags, fw)

                run(f"{src.dtype}→{fmt.name} {mode}", cast)
                count += 1
            for name, uf, gold in ops:
                def binop(mode=mode, name=name, uf=uf, gold=gold):
                    if gold is bits.max:
                        want, fw = gold(fmt, A, B)
                    else:
                        want, fw = gold(fmt, A, B, rounding=mode)
                    with softfp8.rounding(mode), softfp8.collect_flags() as fc:
                        got = uf(a, b)
                    return _compare_codes(f"{fmt.name} {name} {mode}", got, want, fmt, fc.flags, fw)

                run(f"{fmt.name} {name} {mode}", binop)
                count += 1
        if fmt.bits == 8:
            C = rng.integers(0, 256, A.size).astype(np.uint8)
            for mode in modes:
                def fma(mode=mode):
                    want, fw = bits.fma(fmt, A, B, C, rounding=mode)
                    with softfp8.rounding(mode), softfp8.collect_flags() as fc:
                        got = softfp8.fma(a, b, C.view(fmt.dtype))
                    return _compare_codes(f"{fmt.name} fma {mode}", got, want, fmt, fc.flags, fw)

                run(f"{fmt.name} fma {mode}", fma)
                count += 1
    # Stochastic rounding: the ufunc/cast stream is compared with softfp8.bits
    # given the same seed (informational: equal streams are not a documented contract).
    sr_info = []
    for fmt in (e4m3, e5m2):
        try:
            want, _ = bits.from_float(floats, fmt, rounding="stochastic", seed=1)
            with softfp8.rounding("stochastic", seed=1):
                got = floats.astype(fmt)
            eq = float(np.mean(got.view(np.uint8) == want))
            codes = np.arange(256, dtype=np.uint8)
            A, B = np.repeat(codes, 256), np.tile(codes, 256)
            want2, _ = bits.add(fmt, A, B, rounding="stochastic", seed=1)
            with softfp8.rounding("stochastic", seed=1):
                got2 = np.add(A.view(fmt.dtype), B.view(fmt.dtype))
            eq2 = float(np.mean(got2.view(np.uint8) == want2))
            sr_info.append(f"{fmt.name} cast {eq:.2%}, add {eq2:.2%}")
        except Exception as exc:  # noqa: BLE001
            sr_info.append(f"{fmt.name}: FAILED {type(exc).__name__}: {exc}")
    head = (f"golden model (softfp8.bits), {count} checks over 8-bit exhaustive pairs / 16-bit "
            f"random codes, modes {', '.join(modes)}: "
            + ("all equal, flags equal" if not problems else f"{problems} with problems:"))
    return ([head] + [f"  {x}" for x in lines]
            + ["stochastic (seed=1) codes equal to softfp8.bits with the same seed: "
               + "; ".join(sr_info)])


# --------------------------------------------------------------------------- bridges
def torch_bridge_rows(add, M, x, tx):
    """softfp8.torch's custom ops per element (float32 tensors sharing x's memory) against
    softfp8's NumPy cast of the same array and PyTorch's own float8 casts."""
    import softfp8.torch as st

    e4m3 = softfp8.e4m3

    def np_cast(k):
        xs = x[:k]
        return lambda: xs.astype(e4m3)

    def np_qdq(k):
        xs = x[:k]
        return lambda: xs.astype(e4m3).astype(np.float32)

    def bridge(fn, fmt):
        def mk(k):
            ts = tx[:k]
            return lambda: fn(ts, fmt)
        return mk

    add(Row("torch_quant_e4m3", "softfp8.torch.quantize(x, e4m3), float32 tensor",
            M(bridge(st.quantize, e4m3)), tc=M(lambda k: (lambda: tx[:k].to(torch.float8_e4m3fn))),
            ref=M(np_cast), ref_label="softfp8's NumPy cast x.astype(e4m3)", target=("vs_cast", 1.5),
            notes=["the custom op torch.ops.softfp8.quantize on a view of the tensor (no copy): "
                   "issue 26 item 6, within 1.5× of softfp8's NumPy cast", "torch: x.to(torch.float8_e4m3fn)"]))
    add(Row("torch_qdq_e4m3", "softfp8.torch.fake_quantize(x, e4m3) float32→E4M3→float32",
            M(bridge(st.fake_quantize, e4m3)),
            tc=M(lambda k: (lambda: tx[:k].to(torch.float8_e4m3fn).to(torch.float32))),
            ref=M(np_qdq), ref_label="softfp8's NumPy x.astype(e4m3).astype(float32)", target=("vs_torch",),
            notes=["issue 26 item 6: faster than PyTorch's own round trip "
                   "x.to(torch.float8_e4m3fn).to(torch.float32)"]))
    add(Row("torch_quant_e3m4_codes", "softfp8.torch.quantize(x, e3m4) → uint8 codes",
            M(bridge(st.quantize, softfp8.e3m4)),
            ref=M(lambda k: (lambda: x[:k].astype(softfp8.e3m4))), ref_label="softfp8's NumPy cast x.astype(e3m4)",
            target=("vs_cast", 1.5), notes=["a format PyTorch has no type for: a uint8 code tensor (no peer)"]))


# --------------------------------------------------------------------------- printing
COLS = ["#", "operation", "softfp8", "ml_dtypes", "torch", "NumPy ref", "sf÷ml", "sf÷torch",
        "sf÷ref", "target", "status"]


def _cells(r):
    return [str(r.num), r.label, fmt_ns(r.sf), fmt_ns(r.ml), fmt_ns(r.tc), fmt_ns(r.ref),
            fmt_ratio(r.sf, r.ml), fmt_ratio(r.sf, r.tc), fmt_ratio(r.sf, r.ref),
            r.target_text, r.status]


def print_table(rows, refs, header, checks):
    print()
    for line in header:
        print(line.replace("`", ""))
    print("\nns per element (per multiply-add for matmul); ratio < 1: softfp8 faster; "
          "* = timed on a smaller problem and scaled\n")
    data = [COLS] + [_cells(r) for r in rows]
    widths = [max(len(row[i]) for row in data) for i in range(len(COLS))]
    for i, row in enumerate(data):
        print("  ".join(cell.ljust(w) if j in (1, 9, 10) else cell.rjust(w)
                        for j, (cell, w) in enumerate(zip(row, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("\nreferences (ns/elem):")
    for label, m in refs:
        print(f"  {label:<34s} {fmt_ns(m):>8s}")
    print("\nnotes:")
    for r in rows:
        notes = [f"NumPy ref = {r.ref_label}"] if r.ref_label else []
        notes += r.notes
        print(f"  [{r.num}] " + "; ".join(notes))
    print("\ncross-checks on 10^5 elements (informational):")
    for line in checks:
        print(f"  {line}")


def write_md(path, rows, refs, header, checks):
    lines = ["# softfp8 benchmarks", "",
             "Generated by `benchmarks/bench.py`; do not edit by hand.", ""]
    lines += [f"- {h}" for h in header]
    lines += ["",
              "Times in ns per element (per multiply-add for matmul rows), median of repeated "
              "runs (issue 22's rows `mm_model*`, `mm_unit_*`, `mm_small_*`, `mm_scaled_acc_any`, "
              "`quant_*`: minimum, each model and its reference called alternately). Ratios are softfp8 time ÷ peer time: below 1 means softfp8 is faster. "
              "`*`: timed on a smaller problem (10^6-element slice, or smaller matrices) and "
              "scaled. `n/a`: not installed, not supported by that library, or failed (see notes).",
              "",
              "Targets from the issue (ns/element): float→8-bit ≤0.5 (stochastic ≤1.5), "
              "8-bit→float ≤0.5, 8-bit binary ufuncs ≤1.0, fma ≤2.0, 16-bit add/mul ≤2.0 "
              "(add also faster than NumPy float16 add), sum ≤1.0, matmul E4M3→float32 within "
              "2× sgemm, E4M3→E4M3 within 2.5×, E5M2 / bfloat16 / float16 (exact) within 3×, "
              "one NaN within 1.5× of the NaN-free time, flags / non-default-mode overhead ≤20%.",
              "",
              "| # | operation | softfp8 ns/elem | ml_dtypes | torch | NumPy reference | "
              "softfp8÷ml_dtypes | softfp8÷torch | softfp8÷NumPy ref | target | status | notes |",
              "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|"]
    for r in rows:
        c = _cells(r)
        notes = [f"ref: {r.ref_label}"] if r.ref_label else []
        notes += r.notes
        c.append("; ".join(notes).replace("|", "\\|"))
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in c[:-1]) + " | " + c[-1] + " |")
    lines += ["", "## References", "", "| operation | ns/elem |", "|---|---:|"]
    lines += [f"| {label} | {fmt_ns(m)} |" for label, m in refs]
    lines += ["", "## Cross-checks (10^5 elements, informational)", ""]
    lines += [f"- {c}" for c in checks]
    lines.append("")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
