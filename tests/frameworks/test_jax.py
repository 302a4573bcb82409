"""softfp8.jax (docs/frameworks.md, "JAX"): the XLA FFI ops against softfp8's NumPy casts and
softfp8.matmul over every code of every preset, under jit, vmap and grad; the C ABI
declarations against the installed jaxlib's header; the exchange; bad calls."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import softfp8

jax = pytest.importorskip("jax", reason="softfp8[jax] not installed")
import jax.numpy as jnp  # noqa: E402

import softfp8.jax as sj  # noqa: E402

PRESETS = sorted(softfp8.presets())
MODES = softfp8._context.ROUNDING_MODES           # the seven modes of the environment
DETERMINISTIC = [m for m in MODES if m != "stochastic"]
SEED = 0x0123456789ABCDEF
ROOT = Path(__file__).resolve().parents[2]


def _codes(fmt):
    return np.arange(2 ** fmt.bits, dtype=fmt.storage)


def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def _inputs(fmt):
    """float32 inputs: every finite value of fmt, the midpoints of neighbours and the
    float32 neighbours of both, signed zeros, infinities, NaN, the largest float32."""
    with np.errstate(all="ignore"):
        v = _codes(fmt).view(fmt.dtype).astype(np.float64)
    fin = np.unique(v[np.isfinite(v)])
    mids = (fin[:-1] + fin[1:]) / 2
    base = np.concatenate([fin, mids]).astype(np.float32)
    out = np.concatenate([base, np.nextafter(base, np.float32(np.inf)), np.nextafter(base, np.float32(-np.inf)),
                          np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38], np.float32)])
    return out


def _np_quantize(x, fmt, mode, sat):
    with softfp8.rounding(mode, seed=SEED if mode == "stochastic" else None), softfp8.saturation(sat), \
            softfp8.collect_flags() as fl, np.errstate(all="ignore"):
        y = x.astype(fmt.dtype)
    return y.view(fmt.storage), int(fl.flags)


def test_abi_declarations_match_installed_jaxlib(tmp_path):
    """softfp8/_core/xla_ffi.h (softfp8's own declarations) against jaxlib's c_api.h: every
    size, offset, struct-size constant and enumerator the handlers use."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "abi.c"
    fields = {
        ("sfx_ext_base", "XLA_FFI_Extension_Base"): [("struct_size",) * 2, ("type",) * 2, ("next",) * 2],
        ("sfx_api_version", "XLA_FFI_Api_Version"): [(f,) * 2 for f in ("struct_size", "extension_start",
                                                                         "major_version", "minor_version")],
        ("sfx_error_create_args", "XLA_FFI_Error_Create_Args"): [(f,) * 2 for f in (
            "struct_size", "extension_start", "message", "errc")],
        ("sfx_api", "XLA_FFI_Api"): [("struct_size",) * 2, ("extension_start",) * 2, ("api_version",) * 2,
                                     ("internal_api",) * 2, ("error_create", "XLA_FFI_Error_Create")],
        ("sfx_buffer", "XLA_FFI_Buffer"): [(f,) * 2 for f in ("struct_size", "extension_start", "dtype", "data",
                                                              "rank", "dims")],
        ("sfx_list", "XLA_FFI_Args"): [("struct_size",) * 2, ("extension_start",) * 2, ("size",) * 2,
                                       ("types",) * 2, ("items", "args")],
        ("sfx_list", "XLA_FFI_Rets"): [("struct_size",) * 2, ("extension_start",) * 2, ("size",) * 2,
                                       ("types",) * 2, ("items", "rets")],
        ("sfx_bytespan", "XLA_FFI_ByteSpan"): [("ptr",) * 2, ("len",) * 2],
        ("sfx_scalar", "XLA_FFI_Scalar"): [("dtype",) * 2, ("value",) * 2],
        ("sfx_array", "XLA_FFI_Array"): [("dtype",) * 2, ("size",) * 2, ("data",) * 2],
        ("sfx_attrs", "XLA_FFI_Attrs"): [(f,) * 2 for f in ("struct_size", "extension_start", "size", "types",
                                                            "names", "attrs")],
        ("sfx_call_frame", "XLA_FFI_CallFrame"): [(f,) * 2 for f in (
            "struct_size", "extension_start", "api", "ctx", "stage", "args", "rets", "attrs", "future")],
        ("sfx_metadata", "XLA_FFI_Metadata"): [(f,) * 2 for f in ("struct_size", "api_version", "traits")],
        ("sfx_metadata_ext", "XLA_FFI_Metadata_Extension"): [("extension_base",) * 2, ("metadata",) * 2],
    }
    lines = ["#include <stddef.h>", '#include "xla/ffi/api/c_api.h"', '#include "xla_ffi.h"']
    n = 0
    for (mine, xla), fs in fields.items():
        for a, b in fs:
            lines.append(f"_Static_assert(offsetof({mine}, {a}) == offsetof({xla}, {b}) && "
                         f"sizeof(((({mine} *)0)->{a})) == sizeof(((({xla} *)0)->{b})), \"{mine}.{a}\");")
            n += 1
    # whole structs whose every field is read (sfx_api and sfx_metadata are heads / prefixes)
    for mine, xla in [("sfx_ext_base", "XLA_FFI_Extension_Base"), ("sfx_buffer", "XLA_FFI_Buffer"),
                      ("sfx_list", "XLA_FFI_Args"), ("sfx_attrs", "XLA_FFI_Attrs"),
                      ("sfx_call_frame", "XLA_FFI_CallFrame"), ("sfx_scalar", "XLA_FFI_Scalar"),
                      ("sfx_array", "XLA_FFI_Array"), ("sfx_bytespan", "XLA_FFI_ByteSpan")]:
        lines.append(f'_Static_assert(sizeof({mine}) == sizeof({xla}), "sizeof {mine}");')
        n += 1
    consts = [("SFX_API_VERSION_SIZE", "XLA_FFI_Api_Version_STRUCT_SIZE"),
              ("SFX_ERROR_CREATE_ARGS_SIZE", "XLA_FFI_Error_Create_Args_STRUCT_SIZE"),
              ("SFX_BUFFER_SIZE", "XLA_FFI_Buffer_STRUCT_SIZE"), ("SFX_LIST_SIZE", "XLA_FFI_Args_STRUCT_SIZE"),
              ("SFX_LIST_SIZE", "XLA_FFI_Rets_STRUCT_SIZE"), ("SFX_ATTRS_SIZE", "XLA_FFI_Attrs_STRUCT_SIZE"),
              ("SFX_CALL_FRAME_SIZE", "XLA_FFI_CallFrame_STRUCT_SIZE"),
              ("SFX_METADATA_SIZE", "XLA_FFI_Metadata_STRUCT_SIZE"),
              ("SFX_METADATA_EXT_SIZE", "XLA_FFI_Metadata_Extension_STRUCT_SIZE"),
              ("SFX_EXT_METADATA", "XLA_FFI_Extension_Metadata"),
              ("SFX_ERR_INVALID_ARGUMENT", "XLA_FFI_Error_Code_INVALID_ARGUMENT"),
              ("SFX_ERR_RESOURCE_EXHAUSTED", "XLA_FFI_Error_Code_RESOURCE_EXHAUSTED"),
              ("SFX_ERR_UNIMPLEMENTED", "XLA_FFI_Error_Code_UNIMPLEMENTED"),
              ("SFX_ERR_INTERNAL", "XLA_FFI_Error_Code_INTERNAL"),
              ("SFX_BUFFER", "XLA_FFI_ArgType_BUFFER"), ("SFX_BUFFER", "XLA_FFI_RetType_BUFFER"),
              ("SFX_ATTR_ARRAY", "XLA_FFI_AttrType_ARRAY"), ("SFX_ATTR_SCALAR", "XLA_FFI_AttrType_SCALAR"),
              ("SFX_STAGE_EXECUTE", "XLA_FFI_ExecutionStage_EXECUTE")]
    consts += [(f"SFX_{t}", f"XLA_FFI_DataType_{t}") for t in (
        "PRED", "S8", "S16", "S32", "S64", "U8", "U16", "U32", "U64", "F16", "F32", "F64", "BF16", "F8E5M2",
        "F8E4M3FN", "F8E4M3B11FNUZ", "F8E5M2FNUZ", "F8E4M3FNUZ", "F8E4M3", "F8E3M4", "F8E8M0FNU")]
    for a, b in consts:
        lines.append(f'_Static_assert({a} == {b}, "{a}");')
        n += 1
    # the reported API version is one this jaxlib's header knows
    lines.append('_Static_assert(SFX_API_MAJOR == XLA_FFI_API_MAJOR && SFX_API_MINOR <= XLA_FFI_API_MINOR, "v");')
    src.write_text("\n".join(lines) + "\n")
    r = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-I", jax.ffi.include_dir(),
                        "-I", str(ROOT / "softfp8" / "_core"), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert n == 107, n
    # the check can fail: one wrong size is a compile error
    src.write_text("\n".join(lines + ['_Static_assert(sizeof(sfx_buffer) == sizeof(XLA_FFI_Buffer) + 8, "off");'])
                   + "\n")
    r = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-I", jax.ffi.include_dir(),
                        "-I", str(ROOT / "softfp8" / "_core"), str(src)], capture_output=True, text=True)
    assert r.returncode != 0 and "off" in r.stderr


def test_quantize_every_preset_mode_saturation():
    """quantize == NumPy's cast (codes and flags) for every preset, over every value of the
    format, the midpoints and their float32 neighbours, in every rounding mode (stochastic
    seeded) and, nearest even, with saturation on and off."""
    cases = elements = 0
    for name in PRESETS:
        fmt = softfp8.lookup(name)
        x = _inputs(fmt)
        xj = jnp.asarray(x)
        for mode, sat in [(m, None) for m in MODES] + [("nearest_even", True), ("nearest_even", False)]:
            want, wfl = _np_quantize(x, fmt, mode, sat)
            y, fl = sj.quantize(xj, fmt, rounding=mode, seed=SEED if mode == "stochastic" else None,
                                saturate=sat, codes=True, return_flags=True)
            np.testing.assert_array_equal(np.asarray(y), want, err_msg=f"{name} {mode} sat={sat}")
            assert int(fl) == wfl, (name, mode, sat, int(fl), wfl)
            cases += 1
            elements += x.size
    assert cases == len(PRESETS) * 9 == 162
    assert elements > 2_000_000


def test_native_dtypes_and_dequantize_every_code():
    """Every code of every preset: dequantize == NumPy's astype(float32) bit for bit (NaN
    payloads included) with its flags; the native JAX dtype holds the same codes."""
    natives = 0
    for name in PRESETS:
        fmt = softfp8.lookup(name)
        c = _codes(fmt)
        assert c.size == 2 ** fmt.bits
        with softfp8.collect_flags() as wfl, np.errstate(all="ignore"):
            want = c.view(fmt.dtype).astype(np.float32)
        y, fl = sj.dequantize(jnp.asarray(c), fmt, return_flags=True)
        np.testing.assert_array_equal(_bits(y), _bits(want), err_msg=name)
        assert int(fl) == int(wfl.flags), name
        nd = sj.native_dtype(fmt)
        if nd is not None:
            natives += 1
            xn = jax.lax.bitcast_convert_type(jnp.asarray(c), nd)
            np.testing.assert_array_equal(_bits(sj.dequantize(xn)), _bits(want), err_msg=name)
            q = sj.quantize(sj.dequantize(xn), fmt)
            assert q.dtype == nd
    # float16, bfloat16 and the 8-bit types JAX and softfp8 share (float4 / float6: codes):
    # ten, nine before JAX had float8_e8m0fnu (JAX 0.5.0, the extra's lower bound)
    assert natives == 9 + hasattr(jnp, "float8_e8m0fnu"), natives


def test_matmul_every_code_against_softfp8_matmul():
    """matmul == softfp8.matmul(a, b, out_dtype=float32) (codes and flags) with every code
    of each operand's format in the operands, each 8-bit preset with itself and E4M3 x
    E5M2, in every deterministic mode for E4M3 (nearest even / toward zero for the rest),
    and bfloat16 x bfloat16."""
    rng = np.random.default_rng(26)
    cases = 0
    pairs = [(n, n) for n in PRESETS if softfp8.lookup(n).bits <= 8] + [("e4m3", "e5m2"), ("bfloat16", "bfloat16")]
    for na, nb in pairs:
        fa, fb = softfp8.lookup(na), softfp8.lookup(nb)
        if fa.bits <= 8:
            r, k = 2 ** (fa.bits // 2), 2 ** (fa.bits - fa.bits // 2)
            a = rng.permutation(_codes(fa)).reshape(r, k)
            b = rng.permutation(_codes(fb)).reshape(k, r)
        else:
            a = rng.integers(0, 2 ** 16, (8, 40)).astype(np.uint16)
            b = rng.integers(0, 2 ** 16, (40, 6)).astype(np.uint16)
        modes = DETERMINISTIC if (na, nb) == ("e4m3", "e4m3") else ["nearest_even", "toward_zero"]
        for mode in modes:
            with softfp8.rounding(mode), softfp8.collect_flags() as wfl, np.errstate(all="ignore"):
                want = softfp8.matmul(a.view(fa.dtype), b.view(fb.dtype), out_dtype=np.float32)
            y, fl = sj.matmul(jnp.asarray(a), jnp.asarray(b), fa, fb, rounding=mode, return_flags=True)
            np.testing.assert_array_equal(_bits(y), _bits(want), err_msg=f"{na} x {nb} {mode}")
            assert int(fl) == int(wfl.flags), (na, nb, mode)
            cases += 1
    # 14 presets of <= 8 bits in two modes, E4M3's four more modes, E4M3 x E5M2, bfloat16
    assert len(pairs) == 16 and cases == 14 * 2 + 4 + 2 + 2, cases


def test_matmul_accumulation_models():
    """matmul(accumulation=) == softfp8.matmul(accumulation=) (codes and flags): product,
    accumulator and promotion formats, roundings, E4M3, E5M2 and E4M3 x E5M2 operands
    holding every code, K across promotion chunk boundaries."""
    rng = np.random.default_rng(7)
    Acc = softfp8.Accumulation
    models = [Acc(accumulator="float16"), Acc(accumulator="bfloat16", rounding="toward_zero"),
              Acc(product="bfloat16", accumulator="bfloat16", promote_every=32),
              Acc(product="e5m2", product_rounding="upward", accumulator="float16", promote_every=7),
              Acc(accumulator="float32", rounding="downward", promote_every=4),
              Acc(accumulator="float16", promote_every=16, promoted="bfloat16")]
    cases = 0
    for na, nb in [("e4m3", "e4m3"), ("e5m2", "e5m2"), ("e4m3", "e5m2")]:
        fa, fb = softfp8.lookup(na), softfp8.lookup(nb)
        a = rng.permutation(_codes(fa)).reshape(4, 64)
        b = rng.permutation(_codes(fb)).reshape(64, 4)
        for acc in models:
            with softfp8.collect_flags() as wfl, np.errstate(all="ignore"):
                want = softfp8.matmul(a.view(fa.dtype), b.view(fb.dtype), out_dtype=np.float32, accumulation=acc)
            y, fl = jax.jit(lambda p, q: sj.matmul(p, q, fa, fb, accumulation=acc, return_flags=True))(
                jnp.asarray(a), jnp.asarray(b))
            np.testing.assert_array_equal(_bits(y), _bits(want), err_msg=f"{na} x {nb} {acc}")
            assert int(fl) == int(wfl.flags), (na, nb, acc)
            cases += 1
    assert cases == 18
    with pytest.raises(TypeError, match="sequential softfp8.Accumulation models only"):
        sj.scaled_mm(jnp.zeros((2, 2), jnp.float8_e4m3fn), jnp.zeros((2, 2), jnp.float8_e4m3fn), 1.0, 1.0,
                     accumulation=softfp8.Accumulation(accumulator="float16", order="pairwise"))


def test_matmul_matrix_units():
    """matmul(accumulation=) with every matrix-unit profile on every input format it takes
    (TF32 aside: JAX float32 operands are not codes), BlockFMA variants and the pairwise /
    Kahan orders == softfp8.matmul(accumulation=) (codes and flags).  The operands hold every
    code of 8-bit formats (NaN, infinities, subnormals included) and random 16-bit codes;
    K = 64 crosses every block size (2 .. 32); a batch of 2 (vmap-style leading dims)."""
    rng = np.random.default_rng(22)
    cases = 0
    units = [(name, k) for name in sorted(softfp8.matrix_units._PROFILES)
             for k in softfp8.Accumulation.profile(name).inputs if k != "tf32"]
    others = [(acc, k) for k in ("e4m3", "e5m2", "float16") for acc in (
        softfp8.BlockFMA(block=8, extra_bits=3, sticky=True), softfp8.BlockFMA(block=5, extra_bits=-4),
        softfp8.Accumulation(accumulator="float16", order="pairwise"),
        softfp8.Accumulation(accumulator="bfloat16", order="kahan"))]
    for acc, k in [(softfp8.Accumulation.profile(n), k) for n, k in units] + others:
        f = softfp8.lookup(k)
        if f.bits <= 8:
            a = np.stack([rng.permutation(_codes(f)).reshape(4, 64) for _ in range(2)])
            b = np.stack([rng.permutation(_codes(f)).reshape(64, 4) for _ in range(2)])
        else:
            a = rng.integers(0, 2 ** 16, (2, 4, 64)).astype(np.uint16)
            b = rng.integers(0, 2 ** 16, (2, 64, 4)).astype(np.uint16)
        with softfp8.collect_flags() as wfl, np.errstate(all="ignore"):
            want = softfp8.matmul(a.view(f.dtype), b.view(f.dtype), out_dtype=np.float32, accumulation=acc)
        y, fl = jax.jit(lambda p, q: sj.matmul(p, q, f, f, accumulation=acc, return_flags=True))(
            jnp.asarray(a), jnp.asarray(b))
        np.testing.assert_array_equal(_bits(y), _bits(want), err_msg=f"{acc} {k}")
        assert int(fl[0] | fl[1]) == int(wfl.flags), (acc, k)
        cases += 1
    assert len(units) == 35 and cases == 35 + 12, (len(units), cases)   # 12 profiles
    e4 = jnp.zeros((2, 2), jnp.float8_e4m3fn)
    with pytest.raises(ValueError, match="matrix unit 'v100' does not take e4m3 inputs; it supports fp16"):
        sj.matmul(e4, e4, accumulation=softfp8.Accumulation.profile("v100"))
    with pytest.raises(ValueError, match="rounding='toward_zero' does not apply to"):
        sj.matmul(e4, e4, rounding="toward_zero", accumulation=softfp8.Accumulation.profile("h100"))
    # the handler's own check of the model encoding
    softfp8._jax_ffi._register()
    call = jax.ffi.ffi_call("softfp8_unit_matmul", (jax.ShapeDtypeStruct((2, 2), jnp.float32),
                                                    jax.ShapeDtypeStruct((), jnp.uint8)))
    with pytest.raises(Exception, match="unit_matmul: the model is not valid: a model encoding of the wrong length"):
        jax.block_until_ready(call(e4.view(jnp.uint8), e4.view(jnp.uint8), unit=np.zeros(5, np.int32)))
    ints = softfp8._jax_ffi._unit_ints(softfp8.Accumulation.profile("h100"), softfp8.e4m3, softfp8.e4m3)
    bad = ints.copy()
    bad[2] = 99                                  # fa's exponent bits
    with pytest.raises(Exception, match="unit_matmul: the model is not valid: an invalid format descriptor"):
        jax.block_until_ready(call(e4.view(jnp.uint8), e4.view(jnp.uint8), unit=bad))


def test_scaled_mm_against_softfp8_scaled_mm():
    """scaled_mm == softfp8.scaled_mm (codes and flags): E4M3 x E5M2 operands holding every
    code, per-tensor, per-row / per-column and K-blocked scale grids, exact and two
    accumulation models (one promoting within the K-blocks); traced scales under jit and
    vmap; a bad traced scale is the handler's error."""
    rng = np.random.default_rng(11)
    e4, e5 = softfp8.lookup("e4m3"), softfp8.lookup("e5m2")
    a = rng.permutation(np.tile(_codes(e4), 8)).reshape(8, 256)
    b = rng.permutation(np.tile(_codes(e5), 6)).reshape(256, 6)
    grids = [(np.float32(0.5), np.float32(3.0)),
             (rng.uniform(0.1, 4, (8, 1)).astype(np.float32), rng.uniform(0.1, 4, (1, 6)).astype(np.float32)),
             (rng.uniform(0.1, 4, (8, 2)).astype(np.float32), rng.uniform(0.1, 4, (2, 3)).astype(np.float32))]
    models = [None, softfp8.Accumulation(accumulator="float16"),
              softfp8.Accumulation(product="bfloat16", accumulator="bfloat16", promote_every=32)]
    f = jax.jit(lambda p, q, x, y, acc: sj.scaled_mm(p, q, x, y, e4, e5, accumulation=acc, return_flags=True),
                static_argnums=4)
    cases = 0
    for sa, sb in grids:
        for acc in models:
            with softfp8.collect_flags() as wfl, np.errstate(all="ignore"):
                want = softfp8.scaled_mm(a.view(e4.dtype), b.view(e5.dtype), sa, sb, accumulation=acc)
            y, fl = f(jnp.asarray(a), jnp.asarray(b), jnp.asarray(sa), jnp.asarray(sb), acc)
            np.testing.assert_array_equal(_bits(y), _bits(want), err_msg=f"{np.shape(sa)} {acc}")
            assert int(fl) == int(wfl.flags)
            cases += 1
    assert cases == 9
    # vmap over per-example scales
    sas = jnp.asarray(np.array([0.25, 1.0, 8.0], np.float32))
    ys = jax.vmap(lambda s: sj.scaled_mm(jnp.asarray(a), jnp.asarray(b), s, 2.0, e4, e5))(sas)
    for i, s in enumerate([0.25, 1.0, 8.0]):
        with np.errstate(all="ignore"):
            want = softfp8.scaled_mm(a.view(e4.dtype), b.view(e5.dtype), np.float32(s), np.float32(2.0))
        np.testing.assert_array_equal(_bits(ys[i]), _bits(want))
    with pytest.raises(Exception, match="softfp8 scaled_mm: scale_a holds 0xbf800000 at flat index 0"):
        jax.block_until_ready(f(jnp.asarray(a), jnp.asarray(b), jnp.float32(-1.0), jnp.float32(1.0), None))
    with pytest.raises(ValueError, match=r"scale_a grid \(3, 1\) does not divide its operand \(8, 256\)"):
        sj.scaled_mm(jnp.asarray(a), jnp.asarray(b), jnp.ones((3, 1), jnp.float32), 1.0, e4, e5)


def test_jit_vmap_and_traced_seeds():
    fmt = softfp8.lookup("e4m3")
    x = _inputs(fmt)[:1000].reshape(10, 100)
    f = jax.jit(lambda v, s: sj.quantize(v, fmt, rounding="stochastic", seed=s, codes=True))
    seeds = np.array([[i * 7919, i] for i in range(10)], np.uint32)
    rows = jax.vmap(f)(jnp.asarray(x), jnp.asarray(seeds))
    for i in range(10):
        with softfp8.rounding("stochastic", seed=int(seeds[i, 0]) | int(seeds[i, 1]) << 32), \
                np.errstate(all="ignore"):
            want = x[i].astype(fmt.dtype).view(np.uint8)
        np.testing.assert_array_equal(np.asarray(rows[i]), want)
        np.testing.assert_array_equal(np.asarray(f(x[i], jnp.asarray(seeds[i]))), want)
    # vmapped matmul: each batch element is the unbatched product; nested vmap too
    a = jnp.asarray(np.random.default_rng(1).integers(0, 256, (3, 2, 5, 7)).astype(np.uint8))
    b = jnp.asarray(np.random.default_rng(2).integers(0, 256, (3, 2, 7, 4)).astype(np.uint8))
    mm = jax.jit(lambda p, q: sj.matmul(p, q, "e5m2", "e5m2"))
    batched = jax.vmap(jax.vmap(mm))(a, b)
    whole = mm(a, b)  # leading batch dims of the op itself
    for i in range(3):
        for j in range(2):
            one = mm(a[i, j], b[i, j])
            np.testing.assert_array_equal(_bits(batched[i, j]), _bits(one))
            np.testing.assert_array_equal(_bits(whole[i, j]), _bits(one))


def test_gradients():
    x = jnp.asarray(np.linspace(-3, 3, 50, dtype=np.float32))
    g = jax.jit(jax.grad(lambda v: (sj.fake_quantize(v, "e4m3") * jnp.arange(50.0)).sum()))(x)
    np.testing.assert_array_equal(np.asarray(g), np.arange(50.0, dtype=np.float32))
    g2 = jax.jit(jax.grad(lambda v: sj.quantize(v, "e5m2").astype(jnp.float32).sum()))(x)
    np.testing.assert_array_equal(np.asarray(g2), np.ones(50, np.float32))
    # per-example gradients (vmap of grad) of the stochastic fake quantisation: straight through
    xs = jnp.stack([x, -x])
    g3 = jax.vmap(jax.grad(lambda v: (sj.fake_quantize(v, "e4m3", rounding="stochastic", seed=9) ** 2).sum()))(xs)
    want = []
    for r in (x, -x):  # each vmapped row draws as one unbatched call: its own block in NumPy
        with softfp8.rounding("stochastic", seed=9), np.errstate(all="ignore"):
            want.append(np.asarray(r).astype(softfp8.lookup("e4m3").dtype).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(g3), 2 * np.stack(want))
    assert not np.any(np.asarray(jax.grad(lambda v: sj.quantize(v, "uhp", codes=True).sum().astype(
        jnp.float32))(x)))
    # matmul: dA = q(G) @ B^T and dB = A^T @ q(G), q = E5M2 nearest even, rounded into E4M3
    rng = np.random.default_rng(3)
    e4, e5 = softfp8.lookup("e4m3"), softfp8.lookup("e5m2")
    a = (rng.standard_normal((6, 8)) * 4).astype(np.float32).astype(e4.dtype)
    b = (rng.standard_normal((8, 5)) * 4).astype(np.float32).astype(e4.dtype)
    w = rng.standard_normal((6, 5)).astype(np.float32)
    A, B = sj.to_jax(a), sj.to_jax(b)
    da, db = jax.jit(jax.grad(lambda p, q: (sj.matmul(p, q) * w).sum(), argnums=(0, 1)))(A, B)
    gq = w.astype(e5.dtype)
    want_a = softfp8.matmul(gq, b.T, out_dtype=np.float32).astype(e4.dtype)
    want_b = softfp8.matmul(a.T, gq, out_dtype=np.float32).astype(e4.dtype)
    np.testing.assert_array_equal(_bits(da), _bits(want_a))
    np.testing.assert_array_equal(_bits(db), _bits(want_b))


def _aligned(codes):
    buf = np.empty(codes.nbytes + 64, np.uint8)
    off = (-buf.ctypes.data) % 64
    out = buf[off:off + codes.nbytes].view(codes.dtype)
    out[...] = codes
    return out


def test_exchange_every_preset_shares_memory():
    shared = 0
    for name in PRESETS:
        fmt = softfp8.lookup(name)
        a = _aligned(_codes(fmt)).view(fmt.dtype)
        r = sj.to_jax(a)
        x, f2 = (r, fmt) if sj.native_dtype(fmt) is not None else r
        assert f2 is fmt or f2 == fmt
        assert x.unsafe_buffer_pointer() == a.ctypes.data, name
        back = sj.from_jax(x, None if sj.native_dtype(fmt) is not None else fmt)
        assert back.dtype == fmt.dtype and back.ctypes.data == x.unsafe_buffer_pointer(), name
        np.testing.assert_array_equal(back.view(fmt.storage), _codes(fmt))
        shared += 1
    assert shared == len(PRESETS) == 18


def test_refusals_quoted_in_docs():
    """The messages docs/frameworks.md, "JAX" quotes: NumPy's DLPack export and jnp.asarray
    refuse softfp8's dtypes (softfp8.jax.to_jax is the way)."""
    a = np.arange(4, dtype=np.float32).astype(softfp8.lookup("e4m3").dtype)
    with pytest.raises(BufferError, match="DLPack only supports signed/unsigned integers, float and complex"):
        jnp.from_dlpack(a)
    # (JAX 0.5 words it "Dtype e4m3 is not a valid JAX array type. Only arrays of numeric types
    # are supported by JAX.")
    with pytest.raises(TypeError, match="Error interpreting argument to .* as a JAX value|is not a valid JAX array type"):
        jnp.asarray(a)
    docs = (ROOT / "docs" / "frameworks.md").read_text()
    assert "`BufferError: DLPack only supports signed/unsigned integers, float and complex dtypes.`" in docs
    assert ("`TypeError: Error interpreting argument to stage as a JAX value. The problematic value is of type "
            "<class 'numpy.ndarray'> and was passed to stage at position 0.`") in docs


def test_bad_calls():
    x = jnp.ones(4, jnp.float32)
    with pytest.raises(TypeError, match="float32.*int32"):
        sj.quantize(jnp.ones(4, jnp.int32), "e4m3")
    with pytest.raises(ValueError, match="needs seed="):
        sj.quantize(x, "e4m3", rounding="stochastic")
    with pytest.raises(ValueError, match="unknown rounding mode 'nearest'"):
        sj.quantize(x, "e4m3", rounding="nearest")
    with pytest.raises(ValueError, match="seed must be in 0..2\\*\\*64-1, got -1"):
        sj.quantize(x, "e4m3", rounding="stochastic", seed=-1)
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(2, 3\) do not fit"):
        sj.matmul(jnp.zeros((2, 3), jnp.float8_e4m3fn), jnp.zeros((2, 3), jnp.float8_e4m3fn))
    with pytest.raises(TypeError, match="cannot tell the format of an array of dtype float32"):
        sj.from_jax(x)
    with pytest.raises(TypeError, match="an array of e5m2 must have dtype uint8 or float8_e5m2, got uint16"):
        sj.dequantize(jnp.zeros(3, jnp.uint16), "e5m2")
    # the C handler's own checks (an XLA error raised by JAX), reached through ffi_call
    softfp8._jax_ffi._register()
    good = dict(dir=np.int32(1), fmt=np.array(softfp8.lookup("e4m3").params, np.int32),
                env=np.array([0, -1, 0, 32], np.int32))
    seed = jnp.zeros((2,), jnp.uint32)

    def call(out_dtype, **attrs):
        c = jax.ffi.ffi_call("softfp8_convert", (jax.ShapeDtypeStruct((4,), out_dtype),
                                                 jax.ShapeDtypeStruct((), jnp.uint8)))
        return c(x, seed, **{**good, **attrs})
    call(jnp.uint8)  # the good call runs
    bad = [((jnp.uint16,), {}, "cannot hold the codes of a 8-bit format"),
           ((jnp.uint8,), {"fmt": np.array([9, 1, 4, 3, 7, 1, 0, 0], np.int32)},
            "not a valid format descriptor \\(bad field bits\\)"),
           ((jnp.uint8,), {"env": np.array([9, -1, 0, 32], np.int32)}, "rounding mode 9 out of range"),
           ((jnp.uint8,), {"env": np.array([0, -1, 0], np.int32)}, "attribute env must be an int32 array of 4"),
           ((jnp.uint8,), {"dir": np.int32(2)}, "attribute dir 2 not 0")]
    for (dt,), attrs, msg in bad:
        with pytest.raises(Exception, match="softfp8 convert: .*" + msg):
            jax.block_until_ready(call(dt, **attrs))
    e4 = np.array(softfp8.lookup("e4m3").params, np.int32)
    mm = jax.ffi.ffi_call("softfp8_matmul", (jax.ShapeDtypeStruct((2, 2), jnp.float32),
                                             jax.ShapeDtypeStruct((), jnp.uint8)))
    a = jnp.zeros((2, 3), jnp.uint8)
    for b, attrs, msg in [(jnp.zeros((4, 2), jnp.uint8), {}, r"shapes \(2, 3\) @ \(4, 2\) do not fit"),
                          (jnp.zeros((3, 2), jnp.uint8), {"model": np.zeros(5, np.int32)},
                           "attribute model must be an int32 array of 38 entries"),
                          (jnp.zeros((3, 2), jnp.uint8), {"env": np.array([6, -1, 0, 32], np.int32)},
                           "stochastic rounding of the products is not offered")]:
        with pytest.raises(Exception, match="softfp8 matmul: " + msg):
            jax.block_until_ready(mm(a, b, **{"fmt_a": e4, "fmt_b": e4, "env": np.array([0, -1, 0, 32], np.int32),
                                              **attrs}))


def test_without_jax_a_clear_import_error():
    """softfp8 itself never imports JAX; softfp8.jax without JAX names the extra."""
    code = ("import sys; sys.modules['jax'] = None\n"
            "import softfp8, softfp8.gemm, softfp8.mx\n"
            "assert 'jaxlib' not in sys.modules\n"
            "try:\n    import softfp8.jax\nexcept ImportError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "pip install 'softfp8[jax]'" in r.stdout


def test_dequantize_ignores_bits_above_the_width():
    """Raw codes above a format's width (docs/architecture.md: those bits are ignored): all
    256 uint8 codes of every sub-byte preset dequantise as code & mask, decoded by ml_dtypes
    where it has the format, else by softfp8's NumPy cast of the masked codes."""
    import ml_dtypes
    codes = np.arange(256, dtype=np.uint8)
    checked = 0
    for name, fmt in softfp8.presets().items():
        if fmt.bits % 8 == 0:
            continue
        masked = codes & np.uint8((1 << fmt.bits) - 1)
        ml = getattr(ml_dtypes, name, None)
        want = (masked.view(ml) if ml is not None else masked.view(fmt.dtype)).astype(np.float32)
        got = np.asarray(jax.jit(lambda c: sj.dequantize(c, fmt))(codes))
        assert np.array_equal(got, want, equal_nan=True), name
        checked += codes.size
    assert checked == 4 * 256
