"""``softfp8 demo``: train a small MLP in float32 and in low-precision training recipes.

The data set is generated here (three interleaved spirals in the plane, fixed seeds, no
download); the network is a 2-64-64-3 ReLU MLP of ``softfp8.nn.Linear`` layers with
float32 master weights, trained by Adam written out here.  A *recipe* names the
``softfp8.nn.Recipe`` that decides how the three matmuls of each layer (forward ``x @ W.T``,
data gradient ``g @ W``, weight gradient ``x.T @ g``) see their operands, and the format
the weights are stored in after each update.  Every recipe is one small class below; docs/training.md ("The demo") explains each with its
source.  Everything is seeded: two runs with one seed print the same table apart from the
times.

    from softfp8 import demo
    results = demo.run(seed=0)      # [Result], float32 first (300 steps, ~10 s of CPU)
    print(demo.table(results))
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ._context import rounding
from ._formats import NAMED
from . import gemm, nn

E4M3, E5M2 = NAMED["e4m3"], NAMED["e5m2"]
HFP8_143, HFP8_152, HFP16 = NAMED["hfp8_143"], NAMED["hfp8_152"], NAMED["hfp16_169"]

HIDDEN = 64
SMALL_HIDDEN = 32          # fp8-exact-dot / fp8-h100 (chosen when the H100 model cost ~50 ns per multiply-add)
CLASSES = 3
BATCH = 128
LR = 0.02
AMAX_HISTORY = 16
FULL_STEPS, QUICK_STEPS = 300, 60
TRAIN_PER_CLASS, TEST_PER_CLASS = 1000, 500
TURNS, QUICK_TURNS = 1.5, 0.75        # --quick: an easier problem, fewer steps
QUICK_TRAIN_PER_CLASS, QUICK_TEST_PER_CLASS = 300, 200
DEFAULT_PNG = "softfp8-demo.png"


# ----------------------------------------------------------------- the data ----

def spirals(n_per_class: int, seed: int, classes: int = CLASSES, turns: float = TURNS,
            noise: float = 0.15):
    """(x float32 (n, 2), labels int64 (n,)): ``classes`` interleaved spiral arms of
    ``turns`` turns in the unit disc, angular noise ``noise`` (radians), shuffled."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for c in range(classes):
        r = np.sqrt(rng.uniform(0.0, 1.0, n_per_class))  # uniform over the disc's area
        t = turns * 2 * np.pi * r + 2 * np.pi * c / classes + rng.normal(0.0, noise, n_per_class)
        xs.append(np.stack([r * np.cos(t), r * np.sin(t)], axis=1))
        ys.append(np.full(n_per_class, c))
    x, y = np.concatenate(xs).astype(np.float32), np.concatenate(ys)
    order = rng.permutation(len(y))
    return x[order], y[order]


# -------------------------------------------------------------- the recipes ----

def _cast(x, fmt):
    """x rounded into fmt (the current context's rounding), back as float32."""
    return np.asarray(x, dtype=fmt.dtype).astype(np.float32)


class Recipe:
    """float32 throughout: the baseline.

    A demo recipe names a ``softfp8.nn.Recipe`` (``layer_recipe``: how the three matmuls of
    a ``softfp8.nn.Linear`` layer see their operands; None: float32) for the layers in
    ``layers`` (the others stay float32), and ``store``, the format the weights live in
    after an update."""

    name = "float32"
    what = "float32 everywhere (the reference)"
    sizes = None               # layer widths; None: (2, HIDDEN, HIDDEN, CLASSES)
    layers = (0, 1, 2)         # the layers whose matmuls follow layer_recipe

    def __init__(self, seed: int):
        self.seed = seed

    def layer_recipe(self):
        return None

    def store(self, w, layer, step):
        return w


class Fp8Delayed(Recipe):
    """NVIDIA's FP8 recipe (Transformer Engine's ``DelayedScaling``, "HYBRID" format):
    per-tensor scales from an amax history, E4M3 forward, E5M2 gradients; the matmuls of
    the dequantised operands in float32, as FP8 emulation on a CPU computes them."""

    name = "fp8-delayed"
    what = ("E4M3 activations and weights, E5M2 gradients, per-tensor delayed "
            "scaling (softfp8.scaling)")

    def layer_recipe(self):
        return nn.Recipe("delayed", fmt=E4M3, grad_fmt=E5M2, amax_history_len=AMAX_HISTORY,
                         gemm="dequantized")


class Hfp8(Recipe):
    """IBM's hybrid FP8 (HFP8, Sun et al. 2019, appendix A): the middle layers' GEMMs take
    FP8 1-4-3 (bias 4) weights and activations and FP8 1-5-2 gradients, multiply them
    exactly and accumulate in chunks of 64 products in FP16 1-6-9 (softfp8.hfp16_169),
    the chunk sums added up in 1-6-9 too; the first and last layers stay in higher
    precision (1-6-9 there, float32 here).  softfp8.scaled_mm with softfp8.Accumulation
    computes the GEMMs bit-exactly, 1-4-3 x 1-5-2 mixed in the backward pass.  The MLP has
    no batch normalisation to bring activations to the range bias 4 was chosen for, so each
    operand gets a power-of-two scale from its own amax (current scaling; a power of two is
    what choosing the exponent bias per tensor amounts to)."""

    name = "hfp8-fp16-acc"
    what = ("IBM HFP8: hidden-layer GEMMs of 1-4-3 x 1-5-2 codes, chunks of 64 summed in "
            "FP16 1-6-9 (scaled_mm + Accumulation)")
    layers = (1,)

    def layer_recipe(self):
        acc = gemm.Accumulation(accumulator=HFP16, rounding="nearest_even", promote_every=64,
                                promoted=HFP16)
        return nn.Recipe("current", fmt=HFP8_143, grad_fmt=HFP8_152, pow2=True, gemm="scaled",
                         accumulation=acc)


class Fp8ExactDot(Recipe):
    """The twin of ``fp8-h100``: the same E4M3 operands (per-tensor current scaling), every
    GEMM the exact dot product of the codes rounded once to float32 (softfp8.matmul), times
    the two inverse scales in float32, as a GPU applies them after its accumulator
    (``gemm="unit"``).  Both train a smaller MLP (``sizes``), sized when the H100 model cost
    about 50 ns per multiply-add (now about 0.3 ns, the block_fma path: the README's table
    would change with the default width)."""

    name = "fp8-exact-dot"
    what = ("E4M3 x E4M3 GEMMs, exact dot products rounded once to float32, per-tensor "
            "scaling; 2-32-32-3 MLP (the twin of fp8-h100)")
    sizes = (2, SMALL_HIDDEN, SMALL_HIDDEN, CLASSES)
    accumulation = None

    def layer_recipe(self):
        return nn.Recipe("current", fmt=E4M3, grad_fmt=E4M3, gemm="unit",
                         accumulation=self.accumulation)


class Fp8H100(Fp8ExactDot):
    """NVIDIA H100's FP8 tensor core (``softfp8.Accumulation.profile("h100")``, docs/
    matrix-units.md): blocks of 32 products aligned to 13 fraction bits and truncated, each
    block result the addend of the next, float32 output.  Everything else as
    ``fp8-exact-dot``, so the two rows differ by the accumulator alone."""

    name = "fp8-h100"
    what = ("as fp8-exact-dot, GEMMs accumulated by the H100 FP8 tensor-core model "
            "(Accumulation.profile('h100'))")
    accumulation = "h100"


class Block(Recipe):
    """A block format (softfp8.mx) per role, blocks along each matmul's reduction axis;
    gradients optionally rounded stochastically (seeded per step, layer and axis); the
    matmuls of the dequantised operands in float32."""

    scaling = "mx"
    kinds = None
    sr_gradients = False

    def layer_recipe(self):
        return nn.Recipe(self.scaling, kinds=self.kinds, stochastic_gradients=self.sr_gradients,
                         seed=self.seed)


class MxFp8(Block):
    name = "mxfp8"
    what = "OCP MXFP8 (softfp8.mx): E4M3 activations and weights, E5M2 gradients, blocks of 32"


class MxFp4(Block):
    name, kinds, sr_gradients = "mxfp4", "mxfp4", True
    what = "OCP MXFP4 (E2M1, blocks of 32, E8M0 scales) for every operand, gradients SR"


class NvFp4(Block):
    name, scaling, sr_gradients = "nvfp4", "nvfp4", True
    what = "NVFP4 (E2M1, blocks of 16, UE4M3 and float32 scales) for every operand, gradients SR"


class WeightStore(Recipe):
    """Weights held in ``fmt`` only (no float32 master copy): every Adam update is rounded
    back into fmt, to nearest or stochastically (seeded per step and layer).  E4M3 has
    4 significant bits: an update smaller than half a spacing is lost to round-to-nearest,
    while stochastic rounding keeps it in expectation."""

    fmt = E4M3
    stochastic = False

    def store(self, w, layer, step):
        if self.stochastic:
            seed = (self.seed * 1_000_003 + step * 8 + layer) % 2**64
            with rounding("stochastic", seed=seed):
                q = _cast(w, self.fmt)
        else:
            with rounding("nearest_even"):
                q = _cast(w, self.fmt)
        return q


class WeightsNearest(WeightStore):
    name = "e4m3-weights-rne"
    what = "weights kept only in E4M3, Adam updates rounded to nearest even"


class WeightsStochastic(WeightStore):
    name = "e4m3-weights-sr"
    what = "weights kept only in E4M3, Adam updates rounded stochastically (SR)"
    stochastic = True


RECIPES = [Recipe, Fp8Delayed, Hfp8, MxFp8, MxFp4, NvFp4, WeightsNearest, WeightsStochastic,
           Fp8ExactDot, Fp8H100]


# ------------------------------------------------------------- the training ----

def _layers(recipe, rng, sizes):
    """softfp8.nn.Linear layers (He-normal weights, zero biases); the recipe's layers use
    its layer_recipe.  The float32 matmuls are NumPy's einsum loops on one thread (no
    BLAS): the products of these small matrices are cheaper than BLAS's threads on a busy
    machine, and the results repeat exactly run after run."""
    ws = [(rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32)
          for a, b in zip(sizes[:-1], sizes[1:])]
    out = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        lr = recipe.layer_recipe() if i in recipe.layers else None
        out.append(nn.Linear(a, b, recipe=lr, weight=ws[i].T, bias_init=np.zeros(b), index=i))
    return out


def _store(recipe, w, layer, step):
    """recipe.store of a weight (out, in), seen as the (in, out) C-ordered array the
    recipes round (a stochastic store draws its random bits in that order)."""
    return recipe.store(np.ascontiguousarray(w.T), layer, step).T


def _forward(layers, x):
    acts = [x]
    for i, layer in enumerate(layers):
        z = layer(acts[-1])
        acts.append(np.maximum(z, 0) if i < len(layers) - 1 else z)
    return acts


def _softmax_xent(logits, y):
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    loss = -np.log(np.maximum(p[np.arange(len(y)), y], 1e-30)).mean()
    return float(loss), p


@dataclass
class Result:
    recipe: str
    what: str
    loss: float            # cross entropy on the test set, the recipe's own forward pass
    accuracy: float        # on the test set
    seconds: float
    curve: list = field(repr=False, default_factory=list)    # training loss per step
    errors: dict = field(repr=False, default_factory=dict)   # label -> (exact, quantised)


def train(recipe_cls, data, steps: int, seed: int, *, sizes=None,
          batch: int = BATCH, lr: float = LR) -> Result:
    """Train one recipe (an MLP of softfp8.nn.Linear layers of widths ``sizes``, by default
    the recipe's own or (2, HIDDEN, HIDDEN, CLASSES); Adam with a cosine decay from ``lr``,
    ``steps`` batches of ``batch`` points drawn with replacement); the batches and the
    initial weights depend only on seed.  At the last step the hidden layer keeps (exact,
    quantised) pairs of its quantised activations and gradients for the histograms."""
    sizes = sizes or recipe_cls.sizes or (2, HIDDEN, HIDDEN, CLASSES)
    (x, y), (xt, yt) = data
    recipe = recipe_cls(seed)
    rng = np.random.default_rng(seed)
    layers = _layers(recipe, rng, sizes)
    n = len(layers)
    watched = layers[1 % n] if layers[1 % n].recipe.scaling != "none" else None
    for i, layer in enumerate(layers):
        layer.weight = _store(recipe, layer.weight, i, 0)
    params = [layer.weight for layer in layers] + [layer.bias for layer in layers]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    b1, b2, eps = 0.9, 0.999, 1e-8
    curve = []
    t0 = time.perf_counter()
    with np.errstate(over="ignore", invalid="ignore"):
        for step in range(steps):
            if watched is not None:
                watched.record = step == steps - 1
            idx = rng.integers(0, len(y), batch)
            acts = _forward(layers, x[idx])
            loss, p = _softmax_xent(acts[-1], y[idx])
            curve.append(loss)
            g = p
            g[np.arange(batch), y[idx]] -= 1
            g = (g / batch).astype(np.float32)
            for i in reversed(range(n)):
                gx = layers[i].backward(g, input_grad=i > 0)
                if i > 0:
                    g = gx * (acts[i] > 0)
            rate = lr * 0.5 * (1 + np.cos(np.pi * step / steps))   # cosine decay to 0
            params = [layer.weight for layer in layers] + [layer.bias for layer in layers]
            grads = [layer.weight_grad for layer in layers] + [layer.bias_grad for layer in layers]
            for k, (p_, g_) in enumerate(zip(params, grads)):
                m[k] = b1 * m[k] + (1 - b1) * g_
                v[k] = b2 * v[k] + (1 - b2) * g_ * g_
                mh = m[k] / (1 - b1 ** (step + 1))
                vh = v[k] / (1 - b2 ** (step + 1))
                new = (p_ - rate * mh / (np.sqrt(vh) + eps)).astype(np.float32)
                if k < n:
                    layers[k].weight = _store(recipe, new, k, step + 1)
                else:
                    layers[k - n].bias = new
        if watched is not None:
            watched.record = False
        loss, p = _softmax_xent(_forward(layers, xt)[-1], yt)
    seconds = time.perf_counter() - t0
    acc = float((p.argmax(axis=1) == yt).mean())
    rec = watched.recorded if watched is not None else {}
    errors = {label: rec[k] for k, label in (("x", "activations"), ("g", "gradients")) if k in rec}
    return Result(recipe.name, recipe.what, loss, acc, seconds, curve, errors)


def _sizes(quick):
    """(training points per class, test points per class, spiral turns)"""
    return ((QUICK_TRAIN_PER_CLASS, QUICK_TEST_PER_CLASS, QUICK_TURNS) if quick
            else (TRAIN_PER_CLASS, TEST_PER_CLASS, TURNS))


def make_data(seed: int, quick: bool = False):
    n, nt, turns = _sizes(quick)
    return (spirals(n, seed=2 * seed + 1, turns=turns),
            spirals(nt, seed=2 * seed + 2, turns=turns))


def run(steps: int | None = None, seed: int = 0, quick: bool = False, recipes=None,
        progress=None) -> list:
    """Train every recipe (float32 first) on one data set; [Result]."""
    if steps is None:
        steps = QUICK_STEPS if quick else FULL_STEPS
    data = make_data(seed, quick)
    out = []
    for cls in (RECIPES if recipes is None else recipes):
        res = train(cls, data, steps, seed)
        if progress is not None:
            progress(res)
        out.append(res)
    return out


# ----------------------------------------------------------------- the output ----

HEADER = ["recipe", "final loss", "accuracy", "gap vs float32", "time"]


def table(results) -> str:
    """The demo's table: recipe, test loss, test accuracy, accuracy gap vs float32
    (percentage points; results[0] is float32), seconds."""
    base = results[0].accuracy
    rows = [[r.recipe, f"{r.loss:.4f}", f"{100 * r.accuracy:.1f}%",
             "-" if i == 0 else f"{100 * (r.accuracy - base):+.1f} pt", f"{r.seconds:.1f} s"]
            for i, r in enumerate(results)]
    rows = [HEADER] + rows
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = ["  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                       for j, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _rel_errors(exact, quantised):
    """log10 |quantised - exact| / max|exact| of the elements quantisation changed."""
    err = np.abs(quantised.astype(np.float64) - exact)
    scale = float(np.max(np.abs(exact))) or 1.0
    err = err[np.isfinite(err) & (err > 0)]
    return np.log10(err / scale)


def write_png(results, path: str) -> bool:
    """Loss curves and quantisation-error histograms as a PNG at path; False (nothing
    written) without matplotlib."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.backends.backend_agg import FigureCanvasAgg
    except ImportError:
        return False
    fig = Figure(figsize=(15, 4.6), dpi=100)
    FigureCanvasAgg(fig)
    ax_loss, *ax_err = fig.subplots(1, 3)
    colours = {}
    for r in results:
        c = np.asarray(r.curve)
        k = max(1, len(c) // 40)                      # moving average over ~2.5% of steps
        smooth = np.convolve(c, np.ones(k) / k, mode="valid")
        line, = ax_loss.plot(np.arange(len(smooth)) + k - 1, smooth, label=r.recipe, lw=1.2)
        colours[r.recipe] = line.get_color()
    ax_loss.set_yscale("log")
    ax_loss.set_xlabel("step")
    ax_loss.set_ylabel("training loss (moving average)")
    ax_loss.set_title("loss curves")
    ax_loss.legend(fontsize=8)
    bins = np.linspace(-9, 0, 73)
    for ax, role in zip(ax_err, ("activations", "gradients")):
        for r in results:
            if role in r.errors:
                e = _rel_errors(*r.errors[role])
                if e.size:
                    ax.hist(e, bins=bins, histtype="step", density=True, lw=1.2,
                            color=colours[r.recipe], label=r.recipe)
        ax.set_xlabel("log10 |quantised - exact| / amax of the tensor")
        ax.set_ylabel("density")
        ax.set_title(f"quantisation error: layer 1 {role}, last step")
        if ax.has_data():
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return True


def _progress(result):
    """A line on a terminal's stderr per trained recipe (the table comes at the end)."""
    print(f"  trained {result.recipe} in {result.seconds:.1f} s", file=sys.stderr, flush=True)


def main(quick=False, seed=0, steps=None, png=DEFAULT_PNG, out=print) -> int:
    """The ``softfp8 demo`` command."""
    steps = (QUICK_STEPS if quick else FULL_STEPS) if steps is None else steps
    if steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer in 0..2**32-1, got {seed!r}")
    n, nt, turns = _sizes(quick)
    out(f"softfp8 demo: a 2-{HIDDEN}-{HIDDEN}-{CLASSES} ReLU MLP on {CLASSES} spirals of "
        f"{turns} turns ({CLASSES * n} training / {CLASSES * nt} test points, generated), "
        f"Adam, batch {BATCH}, {steps} steps, seed {seed}")
    out("")
    t0 = time.perf_counter()
    results = run(steps=steps, seed=seed, quick=quick,
                  progress=_progress if sys.stderr.isatty() else None)
    out(table(results))
    out("")
    for r in results:
        out(f"  {r.recipe}: {r.what}")
    out("  (each recipe with its source: docs/training.md, \"The demo\")")
    out("")
    out(f"total {time.perf_counter() - t0:.1f} s")
    if png is not None:
        if write_png(results, png):
            out(f"loss curves and quantisation-error histograms: {png}")
        else:
            out("no PNG: matplotlib is not installed (pip install 'softfp8[plot]')")
    return 0
