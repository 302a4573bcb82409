"""Matrix-unit models (docs/matrix-units.md): bit-exact against the published real-GPU
inner products, against the independent Fraction reference (tests/models/matrix_units_ref.py)
on random and special-value inputs for every profile and for random BlockFMA settings,
the Accumulation orders with addends, and bad input."""
from __future__ import annotations

import io
import json
import lzma
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import softfp8
from softfp8 import _ext, matrix_units
from tests.models import fraction_model as fm
from tests.models import matrix_units_ref as ref

DATA = Path(__file__).resolve().parent.parent / "data" / "matrix_units" / "gpu_dot_products.npz.xz"

# ---------------------------------------------------------------- the GPUs' own outputs

_GPU_FORMAT = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
               "E4M3": softfp8.e4m3, "E5M2": softfp8.e5m2}
# (gpu, input, output) -> indices where the profile and the GPU differ (docs/matrix-units.md,
# "Validation": one B200 E5M2 case that no model variant tried explains)
KNOWN_MISMATCHES = {("B200", "E5M2", "fp32"): [3935]}
# FP8 inputs with fp16 outputs: published, not modelled (the profiles refuse them)
UNMODELLED = {(g, f, "fp16") for g in ("Ada", "H100", "H200", "B200") for f in ("E4M3", "E5M2")}


def _load():
    z = np.load(io.BytesIO(lzma.decompress(DATA.read_bytes())))
    return z, json.loads(bytes(z["index"]))


_Z, _INDEX = _load()
_SETS = [(g, f, o) for g, f, _, _, _, outs in _INDEX for o in outs]


def test_gpu_data_inventory():
    """Every published data set is here: 8 GPUs, 32 (GPU, input) pairs, 48 result sets of
    5,000 cases; 40 modelled (200,000 cases), 8 FP8 -> fp16 sets refused."""
    assert len(_INDEX) == 32 and len(_SETS) == 48
    assert {g for g, *_ in _INDEX} == {"V100", "A100", "A2", "Ada", "L40S", "H100", "H200", "B200"}
    assert all(_Z[d].shape == (5000,) for *_, outs in _INDEX for d in outs.values())
    assert UNMODELLED <= set(_SETS) and len(set(_SETS) - UNMODELLED) == 40


@pytest.mark.parametrize("gpu,fmt,out", _SETS, ids=["-".join(s) for s in _SETS])
def test_gpu_data(gpu, fmt, out):
    """The profile reproduces the GPU's results bit for bit (5,000 cases per set)."""
    (K, abk, ck, outs), = [(K, abk, ck, outs) for g, f, K, abk, ck, outs in _INDEX if (g, f) == (gpu, fmt)]
    ab, c, want = _Z[abk], _Z[ck].view(np.float32), _Z[outs[out]]
    view = _GPU_FORMAT[fmt]
    a, b = ab[0].view(view), ab[1].view(view)
    assert a.shape == (5000, K) and K in (4, 8, 16, 32)
    unit = softfp8.Accumulation.profile(gpu.lower())
    if (gpu, fmt, out) in UNMODELLED:
        with pytest.raises(ValueError, match="not modelled"):
            softfp8.matmul(a[:1, None, :], b[:1, :, None], c=c[:1, None, None].astype(np.float16),
                           out_dtype=np.float16, accumulation=unit)
        return
    if gpu in ("H100", "H200") and fmt in ("E4M3", "E5M2"):
        # these sets were measured with the addend zero (wgmma's D = A B + D with D = 0:
        # the toolbox's model_validation/Validate_TC_models.m); the c file is not used
        c = np.zeros_like(c)
    if out == "fp16":
        cc = c.astype(np.float16)        # the CUDA program's __float2half: nearest even
        got = softfp8.matmul(a[:, None, :], b[:, :, None], c=cc[:, None, None], out_dtype=np.float16,
                             accumulation=unit).reshape(-1).view(np.uint16)
    else:
        got = softfp8.matmul(a[:, None, :], b[:, :, None], c=c[:, None, None],
                             accumulation=unit).reshape(-1).view(np.uint32)
    bad = np.flatnonzero(got != want).tolist()
    assert got.shape == (5000,)
    assert bad == KNOWN_MISMATCHES.get((gpu, fmt, out), []), (gpu, fmt, out, bad[:10])


# ---------------------------------------------------------------- inputs for the reference tests

_IN_VIEW = {"float16": np.float16, "bfloat16": softfp8.bfloat16, "tf32": np.float32, "e4m3": softfp8.e4m3,
            "e5m2": softfp8.e5m2, "e4m3fnuz": softfp8.e4m3fnuz, "e5m2fnuz": softfp8.e5m2fnuz}
_CODE_T = {"float16": np.uint16, "bfloat16": np.uint16, "tf32": np.uint32, "e4m3": np.uint8, "e5m2": np.uint8,
           "e4m3fnuz": np.uint8, "e5m2fnuz": np.uint8}


# operands are generated as codes of these specs (TF32: its 19-bit layout, shifted into
# binary32 bit patterns at the end)
_TF32 = fm.Spec(19, True, 8, 10, 127, "ieee", "ieee", False)


def _spec(fmt):
    return _TF32 if fmt == "tf32" else ref.SPECS[fmt]


def _enc(fmt, v):
    """Code of the exact value v (a Fraction) of fmt (tf32: binary32 bits)."""
    return fm.encode_finite(_spec(fmt), int(v < 0), abs(Fraction(v)))


def _specials(fmt):
    sp = _spec(fmt)
    out = {"zero": 0, "max": fm.max_code(sp), "minsub": _enc(fmt, fm.min_subnormal(sp)),
           "minnorm": _enc(fmt, fm.min_normal(sp))}
    if sp.specials != "none":
        out["nan"] = fm.canonical_nan(sp)
    if sp.specials == "ieee":
        out["inf"] = fm.inf_code(sp)
    if sp.specials != "fnuz":
        out["negzero"] = fm.sign_bit(sp)
    return out


def _random_finite(rng, fmt, n, spread, centre=0):
    """n codes of finite values with binades within +-spread of 2^centre (random signs)."""
    sp = _spec(fmt)
    M = sp.M
    e = centre + rng.integers(-spread, spread + 1, n)
    m = rng.integers(0, 1 << M, n)
    emin = 1 - sp.bias
    out = []
    for ei, mi, s in zip(e, m, rng.integers(0, 2, n)):
        ei = int(max(min(ei, sp.bias), emin))
        v = (Fraction((1 << M) + int(mi), 1 << M)) * Fraction(2) ** ei
        v = min(v, fm.max_value(sp))
        out.append(_enc(fmt, -v if s else v))
    return out


def _case(rng, fmt, K, kind, W=25):
    """(a codes, b codes): structured inputs of a kind."""
    sp = _spec(fmt)
    spec_codes = _specials(fmt)
    if kind == "random":
        a = _random_finite(rng, fmt, K, 3)
        b = _random_finite(rng, fmt, K, 3)
    elif kind == "wide":                 # exponents spread far: products at and past the window
        a = _random_finite(rng, fmt, K, min(sp.bias, 40))
        b = _random_finite(rng, fmt, K, min(sp.bias, 40))
    elif kind == "tiny":                 # products near the bottom of the range (min_exponent,
        centre = (1 - sp.bias) // 2 - 1  # binary32 / binary16 subnormal results)
        a = _random_finite(rng, fmt, K, 3, centre)
        b = _random_finite(rng, fmt, K, 3, centre)
    elif kind == "huge":                 # products around the output's overflow threshold
        centre = min(sp.bias // 2 + 1, 64)
        a = _random_finite(rng, fmt, K, 2, centre)
        b = _random_finite(rng, fmt, K, 2, centre)
    elif kind == "cancel":               # pairs of equal and opposite products plus a small rest
        a = _random_finite(rng, fmt, K, 2)
        b = _random_finite(rng, fmt, K, 2)
        for i in range(0, K - 1, 2):
            a[i + 1] = a[i] ^ (fm.sign_bit(sp) if sp.specials != "fnuz" or a[i] else 0)
            b[i + 1] = b[i]
    elif kind == "subnormal":            # subnormal and tiny operands, some zeros
        lo = [spec_codes["minsub"], spec_codes["minnorm"], 0, spec_codes["minsub"] + 1]
        a = [int(rng.choice(lo)) if rng.random() < 0.6 else x for x in _random_finite(rng, fmt, K, 2)]
        b = [int(rng.choice(lo)) if rng.random() < 0.6 else x for x in _random_finite(rng, fmt, K, 2)]
    elif kind == "align":                # one big product and products near 2^-W below it
        a = _random_finite(rng, fmt, K, 1)
        b = _random_finite(rng, fmt, K, 1)
        for i in range(1, K):
            tgt = Fraction(2) ** -int(rng.integers(W - 3, W + 3)) * (1 + Fraction(int(rng.integers(0, 8)), 8))
            if fm.min_subnormal(sp) <= tgt <= fm.max_value(sp) and rng.random() < 0.7:
                v = fm.decode(sp, fm.round_value(sp, 0, tgt, "toward_zero")[0])[2]
                if v:
                    a[i] = _enc(fmt, -v if rng.random() < 0.5 else v)
                    b[i] = _enc(fmt, Fraction(1))
    else:                                # "special": a NaN / inf / max somewhere
        a = _random_finite(rng, fmt, K, 2)
        b = _random_finite(rng, fmt, K, 2)
        keys = [k for k in ("nan", "inf", "max", "zero", "negzero") if k in spec_codes]
        for _ in range(int(rng.integers(1, 3))):
            i = int(rng.integers(0, K))
            (a if rng.random() < 0.5 else b)[i] = spec_codes[str(rng.choice(keys))]
            if rng.random() < 0.3:
                a[i] ^= fm.sign_bit(sp) if sp.specials != "fnuz" else 0
    if fmt == "tf32":   # binary32 bit patterns of the TF32 values
        a = [x << 13 for x in a]
        b = [x << 13 for x in b]
    return a, b


def _addends(rng, fo, n):
    sp = ref.SPECS[fo]
    vals = []
    for _ in range(n):
        r = rng.random()
        if r < 0.08:
            vals.append(0)
        elif r < 0.12:
            vals.append(fm.sign_bit(sp))
        elif r < 0.18:
            vals.append(_enc(fo, fm.min_subnormal(sp) * int(rng.integers(1, 9))) | (fm.sign_bit(sp) * int(rng.integers(0, 2))))
        elif r < 0.21:
            vals.append(fm.inf_code(sp) | (fm.sign_bit(sp) * int(rng.integers(0, 2))))
        elif r < 0.23:
            vals.append(fm.canonical_nan(sp))
        elif r < 0.28:
            vals.append(fm.max_code(sp) | (fm.sign_bit(sp) * int(rng.integers(0, 2))))
        else:
            e = int(rng.integers(-6, 4))
            m = Fraction(int(rng.integers(1 << 23, 1 << 24)), 1 << 23) if fo == "binary32" else \
                Fraction(int(rng.integers(1 << 10, 1 << 11)), 1 << 10)
            v = m * Fraction(2) ** e
            vals.append(_enc(fo, -v if rng.random() < 0.5 else v))
    return vals


def _run_c(unit, fa, fb, fo, a, b, c, flags=False):
    """softfp8.matmul on dot products given as code lists: a, b (n, K), c (n,)."""
    A = np.array(a, dtype=_CODE_T[fa]).view(_IN_VIEW[fa])
    B = np.array(b, dtype=_CODE_T[fb]).view(_IN_VIEW[fb])
    ct, dt = (np.uint32, np.float32) if fo == "binary32" else (np.uint16, np.float16)
    C = np.array(c, dtype=ct).view(dt)
    if not flags:
        r = softfp8.matmul(A[:, None, :], B[:, :, None], c=C[:, None, None], out_dtype=dt, accumulation=unit)
        return r.reshape(-1).view(ct).tolist(), None
    codes, fls = [], []
    for i in range(len(a)):
        softfp8.clear_flags()
        r = softfp8.matmul(A[i:i + 1], B[i][:, None], c=C[i:i + 1, None], out_dtype=dt, accumulation=unit)
        codes.append(int(r.reshape(-1).view(ct)[0]))
        fls.append(int(softfp8.get_flags()))
    softfp8.clear_flags()
    return codes, fls


KINDS = ("random", "wide", "tiny", "huge", "cancel", "subnormal", "align", "special")


def _compare(model, fa, fb, fo, rng, n_per_kind, K, flag_every=4):
    """C (through softfp8.matmul) against the Fraction reference; returns the case count."""
    prm = model.params()
    W = 23 + (prm["extra_bits"] or 0)
    cases = 0
    for kind in KINDS:
        ab = [_case(rng, fa, K, kind, W) for _ in range(n_per_kind)]
        a = [x for x, _ in ab]
        b = [_case(rng, fb, K, kind, W)[1] if fb != fa else y for _, y in ab]
        c = _addends(rng, fo, n_per_kind)
        if kind == "tiny":
            c = [x if rng.random() < 0.5 else 0 for x in _addends(rng, fo, n_per_kind)]
        got, _ = _run_c(model, fa, fb, fo, a, b, c)
        sel = list(range(0, n_per_kind, flag_every))
        got_f, fls = _run_c(model, fa, fb, fo, [a[i] for i in sel], [b[i] for i in sel], [c[i] for i in sel],
                            flags=True)
        for i in range(n_per_kind):
            want, wfl = ref.block_dot(prm, fa, fb, fo, a[i], b[i], c[i])
            assert got[i] == want, (model, fa, fb, fo, kind, a[i], b[i], hex(c[i]), hex(got[i]), hex(want))
            if i in sel:
                j = sel.index(i)
                assert got_f[j] == want
                assert fls[j] == wfl, (model, fa, fo, kind, a[i], b[i], hex(c[i]), fls[j], wfl)
            cases += 1
    return cases


def _profile_rows():
    rows = []
    for name in matrix_units.profiles():
        unit = softfp8.Accumulation.profile(name)
        for fin in unit.inputs:
            for fout in unit.outputs(fin):
                rows.append((name, fin, fout))
    return rows


_ROWS = _profile_rows()


def test_profile_table():
    """12 profiles; the (input, output) rows each offers (docs/matrix-units.md table)."""
    assert len({r[0] for r in _ROWS}) == 12
    # v100 2, a100/a2/a30 4 each, ada/l40s/h100/h200/b200 6 each, mi100 2, mi250 2, mi300x 5
    assert len(_ROWS) == 2 + 3 * 4 + 5 * 6 + 2 + 2 + 5 == 53
    h = softfp8.Accumulation.profile("h100")
    assert h.model("e4m3", "float32") == softfp8.BlockFMA(block=32, extra_bits=-10, min_exponent=-133)
    assert h.model("float16", "float16") == softfp8.BlockFMA(block=16, extra_bits=2, rounding="nearest_even",
                                                               min_exponent=-21)


@pytest.mark.parametrize("name,fin,fout", _ROWS, ids=["-".join(r) for r in _ROWS])
def test_profiles_against_reference(name, fin, fout):
    """Every profile row on random, wide-range, cancelling, subnormal, alignment-limit and
    special-value inputs (and addends), codes and flags, against the Fraction reference."""
    unit = softfp8.Accumulation.profile(name)
    model = unit.model(fin, fout)
    rng = np.random.default_rng(abs(hash((name, fin, fout))) % 2**32)
    K = 2 * model.block + 3 if model.block <= 8 else model.block + 5
    fo = "binary32" if fout == "float32" else "binary16"
    assert _compare(model, fin, fin, fo, rng, 4, K) == 4 * len(KINDS)


_GENERIC = [
    dict(block=4, extra_bits=3, sticky=True, rounding="nearest_even"),
    dict(block=5, extra_bits=-4, rounding="upward", min_exponent=-3),
    dict(block=3, extra_bits=0, rounding="downward", normalized_products=True),
    dict(block=8, extra_bits=None, rounding="nearest_away", input_subnormals=False, output_subnormals=False),
    dict(block=6, extra_bits=2, addend="late", alignment_rounding="nearest_even", addend_extra_bits=3,
         min_exponent=2),
    dict(block=4, extra_bits=1, addend="late", alignment_rounding="upward", zero_addend_exponent=-10,
         rounding="toward_zero", product_overflow=False),
    dict(block=6, extra_bits=0, grouping="odd_even", alignment_rounding="toward_zero", rounding="nearest_even",
         min_exponent=1),
    dict(block=4, extra_bits=None, grouping="pairwise", rounding="toward_zero", output_subnormals=False),
    dict(block=2, extra_bits=-12, rounding="nearest_even", promote_every=4),
    dict(block=16, extra_bits=6, sticky=True, rounding="toward_zero", promote_every=32),
]


@pytest.mark.parametrize("fin,fo", [("e4m3", "binary32"), ("float16", "binary16"), ("bfloat16", "binary32"),
                                     ("e5m2fnuz", "binary32"), ("tf32", "binary32")])
@pytest.mark.parametrize("prm", _GENERIC, ids=[str(i) for i in range(len(_GENERIC))])
def test_generic_against_reference(prm, fin, fo):
    """Settings no profile uses (sticky bits, negative and zero windows, late addends with
    every alignment rounding, odd/even and pairwise grouping, promotion) in every format."""
    if prm.get("promote_every") and fo != "binary32":
        pytest.skip("promotion is defined for binary32 outputs")
    if fo == "binary16" and (prm["extra_bits"] or 0) < -9:
        pytest.skip("no fraction bit left in a binary16 result")
    model = softfp8.BlockFMA(**prm)
    rng = np.random.default_rng(len(str(prm)) * 7 + len(fin))
    assert _compare(model, fin, fin, fo, rng, 3, 2 * model.block + 1, flag_every=3) == 3 * len(KINDS)


def test_mixed_fp8_operands():
    """E4M3 x E5M2 (as Hopper multiplies them) against the reference."""
    model = softfp8.Accumulation.profile("h100").model("e4m3", "float32", "e5m2")
    rng = np.random.default_rng(5)
    assert _compare(model, "e4m3", "e5m2", "binary32", rng, 4, 40) == 4 * len(KINDS)


@pytest.mark.parametrize("model", [
    softfp8.Accumulation.profile("mi300x").model("e4m3fnuz", "float32"),
    softfp8.BlockFMA(block=8, extra_bits=3, grouping="odd_even", alignment_rounding="upward"),
    softfp8.BlockFMA(block=8, extra_bits=1, addend="late", alignment_rounding="nearest_even",
                     zero_addend_exponent=-20, addend_extra_bits=2),
    softfp8.Accumulation.profile("mi300x").model("float16", "float32")], ids=["mi300x-fp8", "oddeven", "late", "mi300x"])
def test_two_term_alignment_boundaries(model):
    """Addends 18 .. 32 binades below the products (the odd/even grouping truncates those
    more than 25 below instead of rounding them) and products below the addend, both signs,
    against the reference."""
    fin = "e4m3fnuz" if model.grouping == "odd_even" and model.alignment_rounding == "downward" else "float16"
    rng = np.random.default_rng(11)
    one = _enc(fin, Fraction(1))
    a, b, c = [], [], []
    for d in range(-12, 33):
        for rep in range(4):
            # products of nominal exponent 0 exactly (1 * [1, 2)), both signs; the addend at 2^-d
            y = [_enc(fin, Fraction(int(rng.integers(8, 16)), 8)) for _ in range(8)]
            a.append([one ^ (fm.sign_bit(_spec(fin)) * int(rng.integers(0, 2))) for _ in range(8)])
            b.append(y)
            m = Fraction(int(rng.integers(1 << 23, 1 << 24)) | 1, 1 << 23)
            cv = m * Fraction(2) ** -d
            c.append(_enc("binary32", -cv if rep % 2 else cv))
    got, _ = _run_c(model, fin, fin, "binary32", a, b, c)
    for i in range(len(a)):
        want, _ = ref.block_dot(model.params(), fin, fin, "binary32", a[i], b[i], c[i])
        assert got[i] == want, (i, hex(got[i]), hex(want))
    assert len(a) == 45 * 4


def test_pairwise_zero_signs():
    """CDNA2's pairwise grouping: a flushed (subnormal) sum keeps its sign, a flushed product
    is +0, the addend keeps its sign (the published model's flushes), against the reference."""
    unit = softfp8.Accumulation.profile("mi250")
    model = unit.model("bfloat16", "float32")
    v = Fraction(2) ** -126
    cases = [  # (products as bf16 pairs (x, 1), addend)
        ([-2 * v, 1.5 * v, 0, 0], -0.0), ([-2 * v, 1.5 * v, 0, 0], 0.0), ([2 * v, -1.5 * v, 0, 0], -0.0),
        ([-v / 2, 0, 0, 0], -0.0), ([-v / 2, -v / 4, 0, 0], -0.0), ([0, 0, 0, 0], -0.0), ([-0.0, 0, 0, 0], -0.0),
        ([-2 * v, 1.5 * v, -2 * v, 1.5 * v], -0.0), ([-v, 0, 0, 0], -(v / 4)),
    ]
    one = _enc("bfloat16", Fraction(1))
    a, b, c = [], [], []
    for prods, cv in cases:
        a.append([_enc("bfloat16", Fraction(x)) if x != 0 or str(x) != "-0.0" else fm.sign_bit(_spec("bfloat16"))
                  for x in prods])
        b.append([one] * 4)
        cb = np.array(cv, dtype=np.float32).view(np.uint32) if isinstance(cv, float) else _enc("binary32", cv)
        c.append(int(cb))
    got, fls = _run_c(model, "bfloat16", "bfloat16", "binary32", a, b, c, flags=True)
    for i in range(len(a)):
        want, wfl = ref.block_dot(model.params(), "bfloat16", "bfloat16", "binary32", a[i], b[i], c[i])
        assert (got[i], fls[i]) == (want, wfl), (i, hex(got[i]), hex(want), fls[i], wfl)
    # -2v + 1.5v flushes to -0 in both pairs, -0 + -0 + c(-0) = -0; a +0 pair makes it +0
    assert (hex(got[7]), hex(got[0]), len(got)) == ("0x80000000", "0x0", 9)


# ---------------------------------------------------------------- Accumulation orders, addends

_OUT = {"float32": (np.float32, np.uint32, ref.BINARY32), "float16": (softfp8.float16, np.uint16, fm.SPECS["float16"]),
        "e5m2": (softfp8.e5m2, np.uint8, fm.SPECS["e5m2"]), "bfloat16": (softfp8.bfloat16, np.uint16, fm.SPECS["bfloat16"])}
_ACC_SPEC = {"float32": ref.BINARY32, "float16": fm.SPECS["float16"], "bfloat16": fm.SPECS["bfloat16"],
             "e5m2": fm.SPECS["e5m2"], "e4m3": fm.SPECS["e4m3"]}

_ORDER_CASES = [  # (order, fa, fb, out, Accumulation kwargs)
    ("pairwise", "e4m3", "e4m3", "float32", dict(accumulator="float16", rounding="nearest_even")),
    ("pairwise", "e5m2", "e4m3", "bfloat16", dict(accumulator="bfloat16", rounding="toward_zero")),
    ("pairwise", "e4m3", "e4m3", "float32", dict(accumulator="e5m2", rounding="upward", promote_every=5)),
    ("kahan", "e4m3", "e4m3", "float32", dict(accumulator="float16", rounding="nearest_even")),
    ("kahan", "e5m2", "e5m2", "float16", dict(accumulator="bfloat16", rounding="toward_zero", promote_every=7)),
    ("kahan", "float16", "float16", "float32", dict(accumulator="e4m3", rounding="downward")),
    ("sequential", "e4m3", "e5m2", "float32", dict(accumulator="float16", rounding="nearest_even")),
    ("sequential", "e4m3", "e4m3", "e5m2", dict(accumulator="float32", product="e5m2", rounding="toward_zero",
                                                 product_rounding="nearest_even", promote_every=4)),
    ("exact", "e4m3", "e5m2", "float32", None),
    ("exact", "float16", "float16", "float16", None),
    ("exact", "e5m2", "e5m2", "e5m2", None),
]


@pytest.mark.parametrize("order,fa,fb,out,kw", _ORDER_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(_ORDER_CASES)])
@pytest.mark.parametrize("with_c", [True, False], ids=["c", "noc"])
def test_orders_against_reference(order, fa, fb, out, kw, with_c):
    """softfp8.Accumulation's pairwise and Kahan orders (with and without an addend), and the
    sequential and exact models with an addend, against the Fraction reference (codes, flags)."""
    if order in ("sequential", "exact") and not with_c:
        pytest.skip("without an addend these run in the matrix engine, softfp8/_core/mm/ (test_orders_equal_gemm)")
    acc = None if kw is None else softfp8.Accumulation(order=order, **kw)
    dt, ct, ospec = _OUT[out]
    rng = np.random.default_rng(len(_ORDER_CASES) * 3 + _ORDER_CASES.index((order, fa, fb, out, kw)))
    K, n = 11, 6
    cases = 0
    for kind in KINDS:
        a = [_case(rng, fa, K, kind)[0] for _ in range(n)]
        b = [_case(rng, fb, K, kind)[1] for _ in range(n)]
        c = [int(x) for x in rng.integers(0, 1 << ospec.bits, n)] if with_c else None
        for i in range(n):
            A = np.array([a[i]], dtype=_CODE_T[fa]).view(_IN_VIEW[fa])
            B = np.array(b[i], dtype=_CODE_T[fb]).view(_IN_VIEW[fb])[:, None]
            C = None if c is None else np.array([[c[i]]], dtype=ct).view(dt)
            softfp8.clear_flags()
            got = int(softfp8.matmul(A, B, c=C, out_dtype=dt, accumulation=acc).view(ct)[0, 0])
            gfl = int(softfp8.get_flags())
            want, wfl = ref.order_dot(order, fa, fb, ospec, "nearest_even", a[i], b[i], None if c is None else c[i],
                                      acc_spec=kw and _ACC_SPEC[kw["accumulator"]],
                                      acc_mode=kw and kw["rounding"],
                                      prod_spec=kw and kw.get("product") and _ACC_SPEC[kw["product"]],
                                      prod_mode=kw and kw.get("product_rounding"),
                                      promote=kw and kw.get("promote_every"), prom_spec=ref.BINARY32)
            assert (got, gfl) == (want, wfl), (order, kind, a[i], b[i], c and hex(c[i]), hex(got), hex(want), gfl, wfl)
            cases += 1
    softfp8.clear_flags()
    assert cases == n * len(KINDS)


@pytest.mark.parametrize("kw", [dict(accumulator="float16"), dict(accumulator="bfloat16", promote_every=3),
                                dict(accumulator="float32", product="e5m2", rounding="toward_zero"),
                                dict(accumulator="e4m3", rounding="upward", promote_every=2, promoted="float16")])
def test_orders_equal_gemm(kw):
    """The sequential order and the exact model computed by bfma.c (no addend) equal
    the matrix engine's (softfp8/_core/mm/) on random and special inputs (two implementations of one spec)."""
    rng = np.random.default_rng(3)
    acc = softfp8.Accumulation(**kw)
    n = 0
    for kind in KINDS:
        a = np.array([_case(rng, "e4m3", 13, kind)[0] for _ in range(5)], dtype=np.uint8).view(softfp8.e4m3)
        b = np.array([_case(rng, "e5m2", 13, kind)[1] for _ in range(4)], dtype=np.uint8).view(softfp8.e5m2).T
        for model, md in ((acc, matrix_units._order_model(acc, softfp8.e4m3.params, softfp8.e5m2.params,
                                                            _ext.BINARY32, None)),
                          (None, matrix_units._order_model(None, softfp8.e4m3.params, softfp8.e5m2.params,
                                                             _ext.BINARY32, None))):
            want = softfp8.matmul(a, b, out_dtype=np.float32, accumulation=model)
            got = np.empty_like(want)
            _ext.mu_gemm(matrix_units.model_ints(md), a, b, None, got)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (kw, kind)
            n += want.size
    assert n == len(KINDS) * 2 * 20


@pytest.mark.parametrize("mode", ["nearest_even", "downward"])
def test_addend_zero_signs(mode):
    """Sums of signed zeros and of exactly cancelling products with a signed-zero addend
    (x + x = x; +0 + -0 = +0, -0 rounding downward) in the exact, sequential, pairwise and
    Kahan models, against the reference."""
    z, nz, one = 0x00, 0x80, 0x38          # E4M3 +0, -0, 1.0
    rows = [[z, z], [nz, z], [nz, nz], [one, one]]
    cols = [[z, z], [z, z], [one, one], [one, one | 0x80]]
    n = 0
    for order, kw in (("exact", None), ("sequential", dict(accumulator="float16")),
                      ("pairwise", dict(accumulator="float16")), ("kahan", dict(accumulator="bfloat16"))):
        acc = None if kw is None else softfp8.Accumulation(order=order, rounding=mode, **kw)
        for r in rows:
            for cl in cols:
                for cz in (0x00000000, 0x80000000):
                    A = np.array([r], dtype=np.uint8).view(softfp8.e4m3)
                    B = np.array(cl, dtype=np.uint8).view(softfp8.e4m3)[:, None]
                    C = np.array([[cz]], dtype=np.uint32).view(np.float32)
                    with softfp8.rounding(mode):
                        got = int(softfp8.matmul(A, B, c=C, out_dtype=np.float32, accumulation=acc).view(np.uint32)[0, 0])
                        want, _ = ref.order_dot(order, "e4m3", "e4m3", ref.BINARY32, mode, r, cl, cz,
                                                acc_spec=kw and _ACC_SPEC[kw["accumulator"]], acc_mode=mode,
                                                prom_spec=ref.BINARY32)
                    assert got == want, (order, mode, r, cl, hex(cz), hex(got), hex(want))
                    n += 1
    softfp8.clear_flags()
    assert n == 4 * 4 * 4 * 2


# ---------------------------------------------------------------- bad input

_H = np.ones((2, 4), np.float16)
_H2 = np.ones((4, 3), np.float16)
_E4 = np.ones((2, 32), np.float32).astype(softfp8.e4m3)
_E4b = np.ones((32, 3), np.float32).astype(softfp8.e4m3)
_BAD = [
    ("unknown profile", lambda: softfp8.Accumulation.profile("h300"), ValueError, r"'h300'.*h100"),
    ("profile upper case", lambda: softfp8.Accumulation.profile("H100"), ValueError, r"'H100'"),
    ("profile not a string", lambda: softfp8.Accumulation.profile(100), TypeError, r"100"),
    ("unsupported input", lambda: softfp8.matmul(_H.astype(softfp8.bfloat16), _H2.astype(softfp8.bfloat16),
                                                 accumulation=softfp8.Accumulation.profile("v100")),
     ValueError, r"'v100' does not take bf16 inputs; it supports fp16 -> fp32, fp16"),
    ("fp8 on a100", lambda: softfp8.matmul(_E4, _E4b, accumulation=softfp8.Accumulation.profile("a100")),
     ValueError, r"does not take e4m3.*tf32 -> fp32"),
    ("ocp fp8 on mi300x", lambda: softfp8.matmul(_E4, _E4b, accumulation=softfp8.Accumulation.profile("mi300x")),
     ValueError, r"'mi300x' does not take e4m3 inputs.*e4m3fnuz -> fp32"),
    ("unsupported output", lambda: softfp8.matmul(_H.astype(softfp8.bfloat16), _H2.astype(softfp8.bfloat16),
                                                  out_dtype=np.float16, accumulation=softfp8.Accumulation.profile("h100")),
     ValueError, r"bf16 inputs delivers fp32, not fp16"),
    ("fp8 to fp16", lambda: softfp8.matmul(_E4, _E4b, out_dtype=np.float16, accumulation=softfp8.Accumulation.profile("h100")),
     ValueError, r"e4m3 inputs with fp16 outputs are not modelled"),
    ("amd fp16 out", lambda: softfp8.matmul(_H, _H2, out_dtype=np.float16, accumulation=softfp8.Accumulation.profile("mi100")),
     ValueError, r"'mi100' with fp16 inputs delivers fp32, not fp16"),
    ("mixed 16-bit", lambda: softfp8.matmul(_H, _H2.astype(softfp8.bfloat16), accumulation=softfp8.Accumulation.profile("h100")),
     ValueError, r"one format \(or e4m3 with e5m2\); got fp16 and bf16"),
    ("float64 out", lambda: softfp8.matmul(_H, _H2, out_dtype=np.float64, accumulation=softfp8.Accumulation.profile("h100")),
     TypeError, r"float32 or float16.*float64"),
    ("e4m3 out", lambda: softfp8.matmul(_H, _H2, out_dtype=softfp8.e4m3, accumulation=softfp8.Accumulation.profile("h100")),
     ValueError, r"float32 or float16, not e4m3"),
    ("not tf32", lambda: softfp8.matmul(np.array([[1.0, 1 + 2 ** -20]], np.float32), np.ones((2, 1), np.float32),
                                        accumulation=softfp8.Accumulation.profile("a100")),
     ValueError, r"1\.0000009536743164 \(0x3f800008\) is not TF32-representable"),
    ("float64 operands", lambda: softfp8.matmul(np.ones((2, 2)), np.ones((2, 2)), accumulation=softfp8.Accumulation.profile("h100")),
     TypeError, r"dtype float64"),
    ("c shape", lambda: softfp8.matmul(_H, _H2, c=np.ones((3, 2), np.float32), accumulation=softfp8.Accumulation.profile("h100")),
     ValueError, r"c has shape \(3, 2\).*\(2, 3\)"),
    ("c dtype", lambda: softfp8.matmul(_H, _H2, c=np.ones((2, 3), np.float16), accumulation=softfp8.Accumulation.profile("h100")),
     TypeError, r"c must have the output's type float32.*float16"),
    ("c fp16 out dtype", lambda: softfp8.matmul(_H, _H2, c=np.ones((2, 3), np.float32), out_dtype=np.float16,
                                               accumulation=softfp8.Accumulation.profile("h100")),
     TypeError, r"type float16.*float32"),
    ("c python float", lambda: softfp8.matmul(_H, _H2, c=0.5, accumulation=softfp8.Accumulation.profile("h100")),
     TypeError, r"float64"),
    ("c given a dtype", lambda: softfp8.matmul(_E4, _E4b, np.float32), TypeError, r"third argument is the addend c"),
    ("c exact wrong dtype", lambda: softfp8.matmul(_E4, _E4b, c=np.ones((2, 3), np.float32)), TypeError,
     r"output's type e4m3"),
    ("c bad accumulation", lambda: softfp8.matmul(_E4, _E4b, c=np.ones((2, 3), np.float32), out_dtype=np.float32,
                                                  accumulation="fp16"), TypeError, r"'fp16'"),
    ("block 0", lambda: softfp8.BlockFMA(block=0, extra_bits=1), ValueError, r"block must be in 1 \.\. 65536, got 0"),
    ("extra_bits 41", lambda: softfp8.BlockFMA(block=4, extra_bits=41), ValueError, r"extra_bits.*got 41"),
    ("extra_bits float", lambda: softfp8.BlockFMA(block=4, extra_bits=1.5), TypeError, r"extra_bits.*1\.5"),
    ("stochastic", lambda: softfp8.BlockFMA(block=4, extra_bits=1, rounding="stochastic"), ValueError, r"'stochastic'"),
    ("grouping", lambda: softfp8.BlockFMA(block=4, extra_bits=1, grouping="tree"), ValueError, r"'tree'"),
    ("late odd_even", lambda: softfp8.BlockFMA(block=4, extra_bits=1, grouping="odd_even", addend="late"),
     ValueError, r"addend='late' applies to grouping='global'"),
    ("late negative", lambda: softfp8.BlockFMA(block=4, extra_bits=-1, addend="late"), ValueError, r"extra_bits >= 0, got -1"),
    ("promote multiple", lambda: softfp8.BlockFMA(block=4, extra_bits=1, promote_every=6), ValueError,
     r"promote_every=6 must be a multiple of block=4"),
    ("sticky flag", lambda: softfp8.BlockFMA(block=4, extra_bits=1, sticky=1), TypeError, r"sticky"),
    ("promote fp16", lambda: softfp8.matmul(_H, _H2, out_dtype=np.float16,
                                            accumulation=softfp8.BlockFMA(block=2, extra_bits=1, promote_every=2)),
     ValueError, r"promotion needs binary32"),
    ("no fraction bit", lambda: softfp8.matmul(_H, _H2, out_dtype=np.float16,
                                               accumulation=softfp8.BlockFMA(block=2, extra_bits=-10)),
     ValueError, r"no fraction bit"),
    ("unknown order", lambda: softfp8.Accumulation(order="tree"), ValueError, r"'tree'"),
    ("scaled_mm profile", lambda: softfp8.scaled_mm(_E4, _E4b, np.float32(1), np.float32(1),
                                                    accumulation=softfp8.Accumulation.profile("h100")),
     TypeError, r"scaled_mm does not model .*'h100'"),
    ("scaled_mm kahan", lambda: softfp8.scaled_mm(_E4, _E4b, np.float32(1), np.float32(1),
                                                  accumulation=softfp8.Accumulation(order="kahan")),
     TypeError, r"order='kahan'"),
]


@pytest.mark.parametrize("what,fn,exc,pattern", _BAD, ids=[b[0] for b in _BAD])
def test_bad_input(what, fn, exc, pattern):
    with pytest.raises(exc, match=pattern):
        fn()


def test_addend_broadcast_and_batches():
    """C broadcasts (a bias row), batches broadcast, 1-D operands, out=, K = 0 gives C."""
    unit = softfp8.Accumulation.profile("a100")
    rng = np.random.default_rng(2)
    a = rng.integers(-4, 5, (3, 2, 5)).astype(np.float16)
    b = rng.integers(-4, 5, (5, 4)).astype(np.float16)
    bias = np.float32([0.5, -1, 2, 0.25])
    full = softfp8.matmul(a, b, c=np.broadcast_to(bias, (3, 2, 4)).copy(), accumulation=unit)
    assert np.array_equal(softfp8.matmul(a, b, c=bias, accumulation=unit), full)
    # small integers: every model is exact here
    assert np.array_equal(full, (a.astype(np.float64) @ b.astype(np.float64) + bias).astype(np.float32))
    v = softfp8.matmul(a[0, 0], b, c=bias, accumulation=unit)
    assert v.shape == (4,) and np.array_equal(v, full[0, 0])
    out = np.empty((3, 2, 4), np.float32)
    assert softfp8.matmul(a, b, c=bias, out=out, accumulation=unit) is out and np.array_equal(out, full)
    k0 = softfp8.matmul(np.ones((2, 0), np.float16), np.ones((0, 4), np.float16), c=bias, accumulation=unit)
    assert np.array_equal(k0, np.broadcast_to(bias, (2, 4)))
    e4 = a.astype(softfp8.e4m3)
    exact = softfp8.matmul(e4, b.astype(softfp8.e4m3), c=bias, out_dtype=np.float32, accumulation="exact")
    assert np.array_equal(exact, full)


# ---------------------------------------------------------------- the published MATLAB models

MATLAB = Path(__file__).resolve().parent.parent / "data" / "matrix_units" / "matlab_vectors.npz.xz"
_MVIEW = {"fp16": np.float16, "bf16": softfp8.bfloat16, "tf32": np.float32, "fp8-e4m3": softfp8.e4m3,
          "fp8-e5m2": softfp8.e5m2, "fp8-e4m3fnuz": softfp8.e4m3fnuz, "fp8-e5m2fnuz": softfp8.e5m2fnuz}
_MKEY = {"fp16": "float16", "bf16": "bfloat16", "tf32": "tf32", "fp8-e4m3": "e4m3", "fp8-e5m2": "e5m2",
         "fp8-e4m3fnuz": "e4m3fnuz", "fp8-e5m2fnuz": "e5m2fnuz"}
_MUNIT = {"V100TC": "v100", "A100TC": "a100", "AdaTC": "ada", "H100TC": "h100", "B200TC": "b200",
          "MI100MC": "mi100", "MI250MC": "mi250", "MI300XMC": "mi300x"}
_MZ = np.load(io.BytesIO(lzma.decompress(MATLAB.read_bytes())))
_MINDEX = json.loads(bytes(_MZ["index"]))


def _published(call, fin, fout):
    """The BlockFMA of a MATLAB model: the profile's, except B200's FP8 row, where the profile
    follows the GPU data and B200TC.m has 2 extra bits and truncation."""
    fn = call.split("(")[0]
    if fn == "B200TC" and fin.startswith("fp8"):
        return softfp8.BlockFMA(block=32, extra_bits=2, min_exponent=-133)
    return softfp8.Accumulation.profile(_MUNIT[fn]).model(_MKEY[fin], "float32" if fout == "fp32" else "float16")


# the published model fails (an Octave/MATLAB error: a block of zero products in CDNA3's
# late-addend path takes dot() of arrays of different sizes) on these many cases
_MODEL_ERRORS = {"MI300XMC(1, a, b, 1, c, 'fp16')": 6, "MI300XMC(1, a, b, 1, c, 'tf32')": 2}


def test_published_models():
    """softfp8's model with the published parameters against the MATLAB toolbox's own models
    (run in Octave by tools/matrix_unit_octave.py on random, wide, tiny, huge, cancelling,
    subnormal, alignment-limit and special-value inputs, K = 2 FMA + 3): 33 settings, 4,224
    cases.  Results compare as values (the models return +0 for most zeros).  Where they
    differ, softfp8's result is an infinity or NaN of an overflow (docs/matrix-units.md,
    "Validation"): the published model continues after an overflow with a finite value
    (2^128 for an infinite addend, or a value past the format's range: its overflow test
    looks at one exponent), and for AMD's product limit returns +inf whatever the sign,
    block by block."""
    equal = deviations = errors = 0
    for key, call, fin, fout, *_ in _MINDEX:
        model = _published(call, fin, fout)
        dt = np.float32 if fout == "fp32" else np.float16
        a, b = _MZ[key + "_a"].view(_MVIEW[fin]), _MZ[key + "_b"].view(_MVIEW[fin])
        c, D, err = _MZ[key + "_c"].view(dt), _MZ[key + "_d"], _MZ[key + "_err"]
        got = softfp8.matmul(a[:, None, :], b[:, :, None], c=c[:, None, None], out_dtype=dt,
                             accumulation=model).reshape(-1).astype(np.float64)
        same = (got == D) | (np.isnan(got) & np.isnan(D))
        dev = np.flatnonzero(~same & (err == 0))
        lim = 2.0 ** (128 if fout == "fp32" else 16)
        for i in dev:
            softfp8.clear_flags()
            softfp8.matmul(a[i:i + 1], b[i][:, None], c=c[i:i + 1, None], out_dtype=dt, accumulation=model)
            overflow = bool(softfp8.get_flags() & softfp8.Flags.OVERFLOW)
            big_product = not model.product_overflow and bool(
                (np.abs(a[i].astype(np.float64) * b[i].astype(np.float64)) >= lim).any())
            assert not np.isfinite(got[i]) and (overflow or big_product), (call, i, got[i], D[i])
        assert len(D) == 128 and int(err.sum()) == _MODEL_ERRORS.get(call, 0), call
        errors += int(err.sum())
        deviations += len(dev)
        equal += len(D) - int(err.sum()) - len(dev)
    softfp8.clear_flags()
    assert len(_MINDEX) == 33 and equal + deviations + errors == 33 * 128
    assert (equal, deviations, errors) == (3883, 333, 8)
