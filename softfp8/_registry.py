"""The format registry: one row per preset of the C table ``sfp8_presets``.

The C row (softfp8/_core/core.c) holds the value semantics (bits, exponent and
mantissa widths, bias, specials, subnormals, default saturation, whether the bias
is a parameter); the Python row below holds everything else about the preset's
names.  The two join by ``name``, and softfp8._formats refuses to import if a row
is missing on either side.  Derived from these rows: the module attributes of
``softfp8`` and ``__all__``, ``softfp8.lookup`` and ``presets()``, the CLI's
``formats`` list, the NumPy DType classes and scalar types, and the ml_dtypes /
PyTorch interop tables.  Promotion ranks are computed from the value sets.

Adding a preset = one C row (plus its enum constant in include/softfp8/softfp8.h)
+ one row here + tests.
"""
from __future__ import annotations

from typing import NamedTuple, Optional, Tuple


class PresetRow(NamedTuple):
    name: str                       # canonical name, as in the C table
    dtype: str                      # NumPy DType class name (scalar type: without "DType")
    aliases: Tuple[str, ...] = ()   # other names: module attributes and lookup()
    ml_dtypes: Optional[str] = None  # attribute of the ml_dtypes module with the same codes
    torch: Optional[str] = None      # attribute of torch with the same codes


ROWS = (
    PresetRow("e4m3", "E4M3DType", ("float8_e4m3fn",), "float8_e4m3fn", "float8_e4m3fn"),
    PresetRow("e5m2", "E5M2DType", ("float8_e5m2",), "float8_e5m2", "float8_e5m2"),
    PresetRow("e4m3fnuz", "E4M3FNUZDType", ("float8_e4m3fnuz",), "float8_e4m3fnuz",
              "float8_e4m3fnuz"),
    PresetRow("e5m2fnuz", "E5M2FNUZDType", ("float8_e5m2fnuz",), "float8_e5m2fnuz",
              "float8_e5m2fnuz"),
    PresetRow("cfloat8_143", "CFloat8_143DType"),
    PresetRow("cfloat8_152", "CFloat8_152DType"),
    PresetRow("shp", "SHPDType"),
    PresetRow("uhp", "UHPDType"),
    PresetRow("hfp8_143", "HFP8_143DType"),
    PresetRow("hfp8_152", "HFP8_152DType"),
    PresetRow("hfp16_169", "HFP16_169DType"),
    PresetRow("float16", "Float16DType", torch="float16"),
    PresetRow("bfloat16", "BFloat16DType", ml_dtypes="bfloat16", torch="bfloat16"),
    PresetRow("float8_e4m3", "Float8_E4M3DType", ml_dtypes="float8_e4m3"),
    PresetRow("float8_e3m4", "E3M4DType", ("e3m4",), "float8_e3m4"),
    PresetRow("float8_e4m3b11fnuz", "E4M3B11FNUZDType", ("e4m3b11fnuz",), "float8_e4m3b11fnuz"),
    # OCP MX v1.0 element formats (no inf/NaN, saturating), its E8M0 scale, NVFP4's scale
    PresetRow("float4_e2m1fn", "Float4_E2M1FNDType", ("e2m1",), "float4_e2m1fn"),
    PresetRow("float6_e2m3fn", "Float6_E2M3FNDType", ("e2m3",), "float6_e2m3fn"),
    PresetRow("float6_e3m2fn", "Float6_E3M2FNDType", ("e3m2",), "float6_e3m2fn"),
    PresetRow("float8_e8m0fnu", "Float8_E8M0FNUDType", ("e8m0",), "float8_e8m0fnu", "float8_e8m0fnu"),
    PresetRow("ue4m3", "UE4M3DType"),
)

# the DType family of formats built by softfp8.format(...)
FACTORY_FAMILY = "format"
FACTORY_DTYPE = "SoftFloatDType"
