"""The conformance table of softfp8 (docs/conformance.md is GENERATED from it:
``python -m softfp8.conformance > docs/conformance.md``; a test checks it is up
to date).

Every operation of IEEE 754-2019 (clauses 5 and 9: required and recommended) and
of the IEEE P3109 Interim Report v4.0 (26 June 2026; clauses 4 and 5), with the
clause that defines it, softfp8's name for it and the test that proves it.  The
softfp8 names of element operations are rows of the operation table
(softfp8/_core/ops.def: ``softfp8.bits.<name>``, its NumPy ufunc, the CLI's
``calc``, the C API and the DPI-C wrapper); the table adds each row's kind and
ufunc from the op table itself.  Other names are Python functions (dotted
paths).  Operations that apply to decimal formats only are listed as such.
"""
from __future__ import annotations

from . import bits

# (operation, clause, softfp8 name(s) -- "|" separates several --, test, note)
T = "tests/core/"
IEEE754 = [
    # 5.3.1 general operations
    ("roundToIntegralTiesToEven", "5.3.1", "round_ties_even", T + "test_ieee_ops.py::test_round_ties_every_code", ""),
    ("roundToIntegralTiesToAway", "5.3.1", "round_ties_away", T + "test_ieee_ops.py::test_round_ties_every_code", ""),
    ("roundToIntegralTowardZero", "5.3.1", "trunc", "tests/numpy_glue/test_numpy_ufuncs.py::test_rounding_to_integral_all_codes", "NumPy's trunc"),
    ("roundToIntegralTowardPositive", "5.3.1", "ceil", "tests/numpy_glue/test_numpy_ufuncs.py::test_rounding_to_integral_all_codes", "NumPy's ceil"),
    ("roundToIntegralTowardNegative", "5.3.1", "floor", "tests/numpy_glue/test_numpy_ufuncs.py::test_rounding_to_integral_all_codes", "NumPy's floor"),
    ("roundToIntegralExact", "5.3.1", "round_integral_exact", T + "test_api.py::test_round_integral", "rint (round_integral) is the non-exact form in the current mode"),
    ("nextUp", "5.3.1", "nextup", T + "test_ieee_ops.py::test_neighbours_every_code", ""),
    ("nextDown", "5.3.1", "nextdown", T + "test_ieee_ops.py::test_neighbours_every_code", ""),
    ("remainder", "5.3.1", "ieee_remainder", T + "test_ieee_ops.py::test_ieee_remainder_every_pair", "NumPy's floored remainder is the row remainder"),
    ("quantize", "5.3.2", None, None, "decimal formats only"),
    ("quantum", "5.3.2", None, None, "decimal formats only"),
    ("scaleB", "5.3.3", "scaleb|ldexp", T + "test_exact_functions.py::test_ldexp_exhaustive", "logBFormat: int64"),
    ("logB", "5.3.3", "logb", T + "test_ieee_ops.py::test_logb_every_code_every_configuration", "logBFormat: the format itself"),
    # 5.4.1 arithmetic
    ("addition", "5.4.1", "add", T + "test_exhaustive.py::test_binary_exhaustive", ""),
    ("subtraction", "5.4.1", "sub", T + "test_exhaustive.py::test_binary_exhaustive", ""),
    ("multiplication", "5.4.1", "mul", T + "test_exhaustive.py::test_binary_exhaustive", ""),
    ("division", "5.4.1", "div", T + "test_exhaustive.py::test_binary_exhaustive", ""),
    ("squareRoot", "5.4.1", "sqrt", T + "test_exhaustive.py::test_sqrt_exhaustive", ""),
    ("fusedMultiplyAdd", "5.4.1", "fma", T + "test_fma_random.py::test_fma_random", ""),
    ("convertFromInt", "5.4.1", "softfp8.bits.from_int64", T + "test_api.py::test_from_int64", ""),
] + [
    ("convertToInteger" + ("Exact" if x else "") + d, "5.4.1, 5.8",
     "to_int_" + ("exact_" if x else "") + n, T + "test_ieee_ops.py::test_convert_to_integer_every_code", "into int64")
    for x in (False, True) for d, n in (("TiesToEven", "ties_even"), ("TowardZero", "toward_zero"),
                                        ("TowardPositive", "upward"), ("TowardNegative", "downward"),
                                        ("TiesToAway", "ties_away"))
] + [
    # 5.4.2, 5.4.3 conversions
    ("convertFormat", "5.4.2", "softfp8.bits.convert", T + "test_conversions.py::test_8bit_to_8bit", ""),
    ("convertFromDecimalCharacter", "5.4.2, 5.12", "softfp8.ieee754.from_decimal_string", T + "test_ieee754_module.py::test_decimal_strings", ""),
    ("convertToDecimalCharacter", "5.4.2, 5.12", "softfp8.ieee754.to_decimal_string", T + "test_ieee754_module.py::test_decimal_strings", ""),
    ("convertFromHexCharacter", "5.4.3, 5.12.3", "softfp8.ieee754.from_hex_string", T + "test_ieee754_module.py::test_hex_strings", ""),
    ("convertToHexCharacter", "5.4.3, 5.12.3", "softfp8.ieee754.to_hex_string", T + "test_ieee754_module.py::test_hex_strings", ""),
    # 5.5 quiet computational
    ("copy", "5.5.1", "pos", T + "test_api.py::test_neg_abs_copysign", ""),
    ("negate", "5.5.1", "neg", T + "test_api.py::test_neg_abs_copysign", ""),
    ("abs", "5.5.1", "abs", T + "test_api.py::test_neg_abs_copysign", ""),
    ("copySign", "5.5.1", "copysign", T + "test_api.py::test_neg_abs_copysign", ""),
    ("encodeDecimal", "5.5.2", None, None, "decimal formats only"),
    ("decodeDecimal", "5.5.2", None, None, "decimal formats only"),
    ("encodeBinary", "5.5.2", None, None, "decimal formats only"),
    ("decodeBinary", "5.5.2", None, None, "decimal formats only"),
] + [
    (name, "5.6.1, 5.11", "softfp8.ieee754.compare|cmp_quiet|cmp_signaling",
     T + "test_ieee754_module.py::test_comparison_predicates", "")
    for name in ("compareQuietEqual", "compareQuietNotEqual", "compareSignalingEqual", "compareSignalingGreater",
                 "compareSignalingGreaterEqual", "compareSignalingLess", "compareSignalingLessEqual",
                 "compareSignalingNotEqual", "compareSignalingNotGreater", "compareSignalingLessUnordered",
                 "compareSignalingNotLess", "compareSignalingGreaterUnordered", "compareQuietGreater",
                 "compareQuietGreaterEqual", "compareQuietLess", "compareQuietLessEqual", "compareQuietUnordered",
                 "compareQuietNotGreater", "compareQuietLessUnordered", "compareQuietNotLess",
                 "compareQuietGreaterUnordered", "compareQuietOrdered")
] + [
    # 5.7 non-computational
    ("is754version1985", "5.7.1", "softfp8.ieee754.is754version1985", T + "test_ieee754_module.py::test_predicates_and_modes", ""),
    ("is754version2008", "5.7.1", "softfp8.ieee754.is754version2008", T + "test_ieee754_module.py::test_predicates_and_modes", ""),
    ("is754version2019", "5.7.1", "softfp8.ieee754.is754version2019", T + "test_ieee754_module.py::test_predicates_and_modes", ""),
    ("class", "5.7.2", "fpclass", T + "test_ieee_ops.py::test_class_and_predicates_every_code", "int64 (enum sfp8_ieee_class)"),
    ("isSignMinus", "5.7.2", "signbit", T + "test_api.py::test_neg_abs_copysign", ""),
] + [
    (name, "5.7.2", fn, T + "test_ieee_ops.py::test_class_and_predicates_every_code", "")
    for name, fn in (("isNormal", "isnormal"), ("isFinite", "isfinite"), ("isZero", "iszero"),
                     ("isSubnormal", "issubnormal"), ("isInfinite", "isinf"), ("isNaN", "isnan"),
                     ("isSignaling", "issignaling"), ("isCanonical", "iscanonical"))
] + [
    ("radix", "5.7.2", "softfp8.ieee754.radix", T + "test_ieee754_module.py::test_predicates_and_modes", ""),
    ("totalOrder", "5.7.2, 5.10", "total_order", T + "test_ieee_ops.py::test_total_orders_every_pair", ""),
    ("totalOrderMag", "5.7.2, 5.10", "total_order_mag", T + "test_ieee_ops.py::test_total_orders_every_pair", ""),
    ("sameQuantum", "5.7.3", None, None, "decimal formats only"),
] + [
    (name, "5.7.4", "softfp8.ieee754." + fn, T + "test_ieee754_module.py::test_flags_operations", "")
    for name, fn in (("lowerFlags", "lower_flags"), ("raiseFlags", "raise_flags"), ("testFlags", "test_flags"),
                     ("testSavedFlags", "test_saved_flags"), ("restoreFlags", "restore_flags"),
                     ("saveAllFlags", "save_all_flags"))
] + [
    # 9.2 recommended correctly rounded functions
    (name, "9.2", sf, T + test, "")
    for name, sf, test in (
        ("exp", "exp", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("expm1", "expm1", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("exp2", "exp2", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("exp2m1", "exp2m1", "test_elementary_ieee.py::test_unary"),
        ("exp10", "exp10", "test_elementary_ieee.py::test_unary"),
        ("exp10m1", "exp10m1", "test_elementary_ieee.py::test_unary"),
        ("log", "log", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("log2", "log2", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("log10", "log10", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("logp1", "log1p", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("log2p1", "log2p1", "test_elementary_ieee.py::test_unary"),
        ("log10p1", "log10p1", "test_elementary_ieee.py::test_unary"),
        ("hypot", "hypot", "test_elementary.py::test_binary_8bit_exhaustive"),
        ("rSqrt", "rsqrt", "test_elementary_ieee.py::test_unary"),
        ("compound", "compound", "test_elementary_ieee.py::test_integer_operand"),
        ("rootn", "rootn", "test_elementary_ieee.py::test_integer_operand"),
        ("pown", "pown", "test_elementary_ieee.py::test_integer_operand"),
        ("pow", "power", "test_elementary.py::test_binary_8bit_exhaustive"),
        ("powr", "powr", "test_elementary_ieee.py::test_binary"),
        ("sin", "sin", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("cos", "cos", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("tan", "tan", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("sinPi", "sinpi", "test_elementary_ieee.py::test_unary"),
        ("cosPi", "cospi", "test_elementary_ieee.py::test_unary"),
        ("tanPi", "tanpi", "test_elementary_ieee.py::test_unary"),
        ("asin", "arcsin", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("acos", "arccos", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("atan", "arctan", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("atan2", "arctan2", "test_elementary.py::test_binary_8bit_exhaustive"),
        ("asinPi", "arcsinpi", "test_elementary_ieee.py::test_unary"),
        ("acosPi", "arccospi", "test_elementary_ieee.py::test_unary"),
        ("atanPi", "arctanpi", "test_elementary_ieee.py::test_unary"),
        ("atan2Pi", "arctan2pi", "test_elementary_ieee.py::test_binary"),
        ("sinh", "sinh", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("cosh", "cosh", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("tanh", "tanh", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("asinh", "arcsinh", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("acosh", "arccosh", "test_elementary.py::test_unary_8bit_exhaustive"),
        ("atanh", "arctanh", "test_elementary.py::test_unary_8bit_exhaustive"))
] + [
    # 9.3 dynamic modes
    ("getBinaryRoundingDirection", "9.3.1", "softfp8.ieee754.get_binary_rounding_direction", T + "test_ieee754_module.py::test_predicates_and_modes", "softfp8.get_rounding"),
    ("setBinaryRoundingDirection", "9.3.1", "softfp8.ieee754.set_binary_rounding_direction", T + "test_ieee754_module.py::test_predicates_and_modes", "softfp8.rounding() scopes a mode to a block"),
    ("getDecimalRoundingDirection", "9.3.1", None, None, "decimal formats only"),
    ("setDecimalRoundingDirection", "9.3.1", None, None, "decimal formats only"),
    ("saveModes", "9.3.2", "softfp8.ieee754.save_modes", T + "test_ieee754_module.py::test_predicates_and_modes", ""),
    ("restoreModes", "9.3.2", "softfp8.ieee754.restore_modes", T + "test_ieee754_module.py::test_predicates_and_modes", ""),
    ("defaultModes", "9.3.2", "softfp8.ieee754.default_modes", T + "test_ieee754_module.py::test_predicates_and_modes", ""),
    # 9.4 reductions
    ("sum", "9.4", "softfp8.bits.sum", T + "test_reductions.py::test_sums_and_dots", "exact, rounded once"),
    ("dot", "9.4", "softfp8.bits.dot", T + "test_reductions.py::test_sums_and_dots", "exact, rounded once"),
    ("sumSquare", "9.4", "softfp8.bits.sum_square", T + "test_reductions.py::test_sums_and_dots", "exact, rounded once"),
    ("sumAbs", "9.4", "softfp8.bits.sum_abs", T + "test_reductions.py::test_sums_and_dots", "exact, rounded once"),
    ("scaledProd", "9.4", "softfp8.bits.scaled_prod", T + "test_reductions.py::test_scaled_products", "(pr, sf), pr in [1, 2]"),
    ("scaledProdSum", "9.4", "softfp8.bits.scaled_prod_sum", T + "test_reductions.py::test_scaled_products", ""),
    ("scaledProdDiff", "9.4", "softfp8.bits.scaled_prod_diff", T + "test_reductions.py::test_scaled_products", ""),
    # 9.5 augmented arithmetic
    ("augmentedAddition", "9.5", "augmented_add", T + "test_ieee_ops.py::test_augmented_pairs", "roundTiesTowardZero"),
    ("augmentedSubtraction", "9.5", "augmented_sub", T + "test_ieee_ops.py::test_augmented_pairs", "roundTiesTowardZero"),
    ("augmentedMultiplication", "9.5", "augmented_mul", T + "test_ieee_ops.py::test_augmented_pairs", "roundTiesTowardZero"),
    # 9.6 minimum / maximum
    ("minimum", "9.6", "min", "tests/numpy_glue/test_numpy_exhaustive.py::test_selection_all_pairs", ""),
    ("minimumNumber", "9.6", "minnum", "tests/numpy_glue/test_numpy_exhaustive.py::test_selection_all_pairs", ""),
    ("maximum", "9.6", "max", "tests/numpy_glue/test_numpy_exhaustive.py::test_selection_all_pairs", ""),
    ("maximumNumber", "9.6", "maxnum", "tests/numpy_glue/test_numpy_exhaustive.py::test_selection_all_pairs", ""),
    ("minimumMagnitude", "9.6", "minmag", T + "test_ieee_ops.py::test_selections_every_pair", ""),
    ("minimumMagnitudeNumber", "9.6", "minmagnum", T + "test_ieee_ops.py::test_selections_every_pair", ""),
    ("maximumMagnitude", "9.6", "maxmag", T + "test_ieee_ops.py::test_selections_every_pair", ""),
    ("maximumMagnitudeNumber", "9.6", "maxmagnum", T + "test_ieee_ops.py::test_selections_every_pair", ""),
    # 9.7 NaN payloads
    ("getPayload", "9.7", "get_payload", T + "test_ieee_ops.py::test_payload_operations_every_code", "IEEE-style formats"),
    ("setPayload", "9.7", "set_payload", T + "test_ieee_ops.py::test_payload_operations_every_code", "IEEE-style formats"),
    ("setPayloadSignaling", "9.7", "set_payload_signaling", T + "test_ieee_ops.py::test_payload_operations_every_code", "IEEE-style formats"),
]

P = T + "test_p3109_ops.py::"
_EL = P + "test_elementwise_projection"
_B = T + "test_p3109_blocks.py::test_block_operations_every_mode"
P3109 = [
    ("Convert", "4.9.1", "softfp8.p3109.project|softfp8.bits.convert", T + "test_p3109.py::test_projection_deterministic_dense", ""),
    ("Abs", "4.10.1", "abs", _EL, ""), ("Negate", "4.10.1", "neg", _EL, ""),
    ("CopySign", "4.10.2", "copysign", _EL, ""),
    ("Add", "4.10.3", "add", _EL, ""), ("Subtract", "4.10.3", "sub", _EL, ""),
    ("Multiply", "4.10.4", "mul", _EL, ""), ("Divide", "4.10.5", "div", _EL, "Divide(x, 0) = NaN: softfp8.p3109.apply"),
    ("FMA", "4.10.6", "fma", _EL, ""), ("FAA", "4.10.7", "faa", T + "test_ieee_ops.py::test_faa_triples_every_configuration", ""),
    ("Sqrt", "4.10.8", "sqrt", _EL, ""), ("Recip", "4.10.8", "reciprocal", _EL, "Recip(0) = NaN: softfp8.p3109.apply"),
    ("RSqrt", "4.10.8", "rsqrt", _EL, "RSqrt(0) = NaN: softfp8.p3109.apply"),
    ("Exp", "4.10.9", "exp", _EL, ""), ("Exp2", "4.10.9", "exp2", _EL, ""), ("Log", "4.10.9", "log", _EL, ""),
    ("Log2", "4.10.9", "log2", _EL, ""), ("LogOnePlus", "4.10.9", "log1p", _EL, ""),
    ("ExpMinusOne", "4.10.9", "expm1", _EL, ""),
    ("Sin", "4.10.10", "sin", _EL, ""), ("Cos", "4.10.10", "cos", _EL, ""), ("Tan", "4.10.10", "tan", _EL, ""),
    ("ArcSin", "4.10.10", "arcsin", _EL, ""), ("ArcCos", "4.10.10", "arccos", _EL, ""),
    ("ArcTan", "4.10.10", "arctan", _EL, ""),
    ("Sinh", "4.10.11", "sinh", _EL, ""), ("Cosh", "4.10.11", "cosh", _EL, ""), ("Tanh", "4.10.11", "tanh", _EL, ""),
    ("ArcSinh", "4.10.11", "arcsinh", _EL, ""), ("ArcCosh", "4.10.11", "arccosh", _EL, ""),
    ("ArcTanh", "4.10.11", "arctanh", _EL, ""),
    ("SinPi", "4.10.12", "sinpi", _EL, ""), ("CosPi", "4.10.12", "cospi", _EL, ""),
    ("TanPi", "4.10.12", "tanpi", _EL, "TanPi(n + 1/2) = NaN: softfp8.p3109.apply"),
    ("ArcSinPi", "4.10.12", "arcsinpi", _EL, ""), ("ArcCosPi", "4.10.12", "arccospi", _EL, ""),
    ("ArcTanPi", "4.10.12", "arctanpi", _EL, ""),
    ("Softplus", "4.10.13", "softplus", _EL, ""),
    ("Hypot", "4.10.14", "hypot", _EL, "Hypot(NaN, inf) = NaN: softfp8.p3109.apply"),
    ("ArcTan2", "4.10.15", "arctan2", _EL, "ArcTan2(0, 0), (inf, inf) = NaN: softfp8.p3109.apply"),
    ("ArcTan2Pi", "4.10.16", "arctan2pi", _EL, "as ArcTan2"),
    ("Minimum", "4.11.1", "min", _EL, ""), ("Maximum", "4.11.1", "max", _EL, ""),
    ("MinimumNumber", "4.11.1", "minnum", _EL, ""), ("MaximumNumber", "4.11.1", "maxnum", _EL, ""),
    ("MinimumMagnitude", "4.11.2", "minmag", _EL, ""), ("MaximumMagnitude", "4.11.2", "maxmag", _EL, ""),
    ("MinimumMagnitudeNumber", "4.11.2", "minmagnum", _EL, ""),
    ("MaximumMagnitudeNumber", "4.11.2", "maxmagnum", _EL, ""),
    ("MinimumFinite", "4.11.3", "min_finite", _EL, ""), ("MaximumFinite", "4.11.3", "max_finite", _EL, ""),
    ("Clamp", "4.11.4", "clamp", T + "test_ieee_ops.py::test_clamp_triples", ""),
    ("CompareLess", "4.12", "lt", "tests/numpy_glue/test_numpy_exhaustive.py::test_comparisons_all_pairs", ""),
    ("CompareLessEqual", "4.12", "le", "tests/numpy_glue/test_numpy_exhaustive.py::test_comparisons_all_pairs", ""),
    ("CompareEqual", "4.12", "eq", "tests/numpy_glue/test_numpy_exhaustive.py::test_comparisons_all_pairs", ""),
    ("CompareGreater", "4.12", "gt", "tests/numpy_glue/test_numpy_exhaustive.py::test_comparisons_all_pairs", ""),
    ("CompareGreaterEqual", "4.12", "ge", "tests/numpy_glue/test_numpy_exhaustive.py::test_comparisons_all_pairs", ""),
    ("TotalOrder", "4.12.1", "total_order_p3109", T + "test_ieee_ops.py::test_total_orders_every_pair", "the NaN first"),
    ("IsZero", "4.13", "iszero", T + "test_ieee_ops.py::test_class_and_predicates_every_code", ""),
    ("IsOne", "4.13", "isone", T + "test_ieee_ops.py::test_class_and_predicates_every_code", ""),
    ("IsNaN", "4.13", "isnan", T + "test_ieee_ops.py::test_class_and_predicates_every_code", ""),
    ("IsInfinite", "4.13", "isinf", T + "test_ieee_ops.py::test_class_and_predicates_every_code", ""),
    ("IsFinite", "4.13", "isfinite", T + "test_ieee_ops.py::test_class_and_predicates_every_code", ""),
    ("IsSignMinus", "4.13", "signbit", T + "test_api.py::test_neg_abs_copysign", ""),
    ("IsNormal", "4.13", "isnormal", T + "test_ieee_ops.py::test_class_and_predicates_every_code", ""),
    ("IsSubnormal", "4.13", "issubnormal", T + "test_ieee_ops.py::test_class_and_predicates_every_code", ""),
    ("Class", "4.13.1", "fpclass", T + "test_ieee_ops.py::test_class_and_predicates_every_code", "IEEE's ten classes: NaN is quietNaN, zero positiveZero"),
] + [
    (name, "4.14", "softfp8.p3109.format_info", P + "test_format_level_operations", "")
    for name in ("BitwidthOf", "PrecisionOf", "SignednessOf", "DomainOf", "ExponentBitwidthOf",
                 "TrailingSignificandBitwidthOf", "ExponentBiasOf", "MaxFiniteOf", "MinFiniteOf", "MinPositiveOf",
                 "MaxSubnormalOf", "MinNormalOf")
] + [
    ("RoundOf", "4.15", "softfp8.p3109.round_of", P + "test_format_level_operations", ""),
    ("SatOf", "4.15", "softfp8.p3109.sat_of", P + "test_format_level_operations", ""),
    ("NextGreaterThan", "4.16", "next_greater", T + "test_ieee_ops.py::test_neighbours_every_code", ""),
    ("NextLessThan", "4.16", "next_less", T + "test_ieee_ops.py::test_neighbours_every_code", ""),
    ("ConvertFromBlock", "5.2.1", "softfp8.p3109.convert_from_block", _B, "C: `sfp8_p3109_from_block`"),
    ("ConvertToBlock", "5.2.2", "softfp8.p3109.convert_to_block", _B, "C: `sfp8_p3109_to_block`"),
    ("ConvertToBlockMaxAbsFinite", "5.2.3", "softfp8.p3109.convert_to_block_max_abs_finite", _B,
     "C: `sfp8_p3109_max_abs_finite`, then `sfp8_p3109_to_block`"),
    ("BlockReduceAdd", "5.3.1", "softfp8.p3109.block_reduce_add", _B,
     "exact (superaccumulator), one projection; C: `sfp8_p3109_block_reduce_add`"),
    ("BlockReduceMultiply", "5.3.1", "softfp8.p3109.block_reduce_multiply", _B,
     "exact (big integer), one projection; C: `sfp8_p3109_block_reduce_multiply`"),
    ("BlockDotProduct", "5.3.2", "softfp8.p3109.block_dot_product", _B,
     "exact (superaccumulator), one projection; C: `sfp8_p3109_block_dot`"),
    ("BlockOp (elementwise)", "5.4", "softfp8.p3109.block_op", T + "test_p3109_blocks.py::test_elementary_block_ops_every_mode",
     "C: `sfp8_p3109_block_op`, each operand block in its own formats: Convert, Abs, Negate, Recip, Sqrt, RSqrt, "
     "Add, Subtract, Multiply, Divide, CopySign, the ten selections of 4.11.1-4.11.3, FMA, FAA, Clamp "
     "(`test_mixed_format_quotients_and_selections`); the 25 unary elementary functions (Exp, Exp2, Log, Log2, "
     "LogOnePlus, ExpMinusOne, the trigonometric, hyperbolic and pi-trigonometric functions and their inverses, "
     "Softplus) and Hypot, ArcTan2, ArcTan2Pi of two blocks, f at the exact S X correctly rounded through the "
     "functions' value-level entries (this test, `test_elementary_block_ops_two_blocks`, "
     "`test_elementary_block_ops_overflow_underflow`, `test_elementary_block_ops_wide_products`, "
     "`test_hypot_block_exact_hypotenuses`)"),
    ("ScaledAdd / ScaledSubtract / ScaledMultiply", "5.5", "softfp8.p3109.scaled_op", P + "test_block_operations",
     "blocks of one element, every operation of BlockOp"),
]


# the operations of 4.10-4.11 (and Convert) run in C with the report's projection:
# softfp8.p3109.apply -> sfp8_p3109_apply (core_p3109.c), proven against the NumPy
# projection of the rows on every 8-bit P3109 format (tests/core/test_p3109_c.py)
_PROOF = {1: "test_unary_every_code", 2: "test_binary_every_pair", 3: "test_ternary_sampled"}


def _with_projection(entry):
    op, clause, names, test, note = entry
    if not (clause.startswith(("4.10", "4.11")) or op == "Convert"):
        return entry
    row = "pos" if op == "Convert" else names
    proof = "C: `sfp8_p3109_apply`; every 8-bit P3109 format: `tests/core/test_p3109_c.py::%s`" % (
        _PROOF[bits.OPERATIONS[row].arity])
    return (op, clause, names + "|softfp8.p3109.apply", test, (note + "; " if note else "") + proof)


P3109 = [_with_projection(e) for e in P3109]


def _row(op_rows, name):
    """(kind, ufunc, rounds) of an op-table row, or None for a Python function."""
    op = op_rows.get(name)
    if op is None:
        return None
    return op.kind, op.ufunc or "", "yes" if op.rounds else ""


def render():
    """The text of docs/conformance.md."""
    rows = bits.OPERATIONS
    out = ["# Conformance: IEEE 754-2019 and IEEE P3109", "",
           "GENERATED by `python -m softfp8.conformance` from softfp8/conformance.py and the",
           "operation table (softfp8/_core/ops.def); tests/core/test_conformance.py checks that",
           "this file is current, that every name exists and that every test exists.", "",
           "Every operation of IEEE 754-2019 (clauses 5 and 9, required and recommended) and of",
           "the IEEE P3109 Interim Report v4.0 (clauses 4 and 5) is listed with the clause that",
           "defines it, softfp8's name for it and the test that proves it against an independent",
           "reference.  Names without a dot are rows of the operation table: `softfp8.bits.<name>`,",
           "the NumPy ufunc in the *ufunc* column (`softfp8.<name>` where NumPy has none), the",
           "CLI's `softfp8 calc <name>`, `sfp8_op_lookup(\"<name>\")` in the C API and, for",
           "operations of one code result, `sfp8_<name>` in dpi/softfp8_pkg.sv.  Dotted names are",
           "Python functions.  P3109's operations are the rows on one format with softfp8's",
           "rounding modes and saturation; `softfp8.p3109.apply` runs each with the report's",
           "projection (SatFinite / SatPropagate / SatNone) and its special values where they",
           "differ from IEEE 754 in C (`sfp8_p3109_apply`, core_p3109.c, from the SFP8_P3109",
           "companions of ops.def); with operands of different formats or `out_format=` (the",
           "report's Op<fx, fy, fr>) it runs them as block operations of scale 1.  The block",
           "operations of clause 5 are C too (core_p3109_block.c; docs/semantics.md, \"P3109",
           "operations\").", ""]
    for title, entries in (("IEEE 754-2019", IEEE754), ("IEEE P3109 Interim Report v4.0", P3109)):
        out += ["## " + title, "", "| operation | clause | softfp8 | kind | ufunc | rounds | test | note |",
                "|---|---|---|---|---|---|---|---|"]
        for op, clause, names, test, note in entries:
            if names is None:
                out.append(f"| {op} | {clause} | — | | | | | {note} |")
                continue
            first = names.split("|")[0]
            info = _row(rows, first)
            kind, uf, rounds = info if info else ("function", "", "")
            shown = ", ".join(f"`{n}`" for n in names.split("|"))
            tshow = f"`{test}`" if test else ""
            out.append(f"| {op} | {clause} | {shown} | {kind} | {uf} | {rounds} | {tshow} | {note} |")
        out.append("")
        n_ok = sum(1 for e in entries if e[2] is not None)
        out += [f"{len(entries)} operations, {n_ok} provided, {len(entries) - n_ok} for decimal formats only.", ""]
    extra = sorted(set(rows) - {n for e in IEEE754 + P3109 if e[2] for n in e[2].split("|")})
    out += ["## Operations of softfp8 beyond the two standards", "",
            "NumPy's and C99's functions: " + ", ".join(f"`{n}`" for n in extra) + ".", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render(), end="")
