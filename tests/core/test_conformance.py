"""docs/conformance.md is generated (softfp8/conformance.py) and current; every
operation of IEEE 754-2019 and of the P3109 Interim Report v4.0 is listed; every
softfp8 name it gives exists and every test it cites exists."""
import importlib
from pathlib import Path
import re

import pytest

import softfp8
from softfp8 import bits, conformance

REPO = Path(__file__).resolve().parents[2]


def test_docs_are_generated_and_current():
    doc = REPO / "docs" / "conformance.md"
    if not doc.is_file():
        pytest.skip("docs/ not beside the tests (installed package)")
    assert doc.read_text() == conformance.render(), \
        "docs/conformance.md is stale: python -m softfp8.conformance > docs/conformance.md"


def test_every_operation_is_listed():
    """The operations of each clause (IEEE 754-2019 5 and 9; P3109 4 and 5 and the
    groups of its Annex G), counted."""
    ieee = [e[0] for e in conformance.IEEE754]
    assert len(ieee) == len(set(ieee)) == 155
    by_clause = {}
    for op, clause, *_ in conformance.IEEE754:
        by_clause.setdefault(clause.split(",")[0], []).append(op)
    assert {c: len(v) for c, v in by_clause.items()} == {
        "5.3.1": 9, "5.3.2": 2, "5.3.3": 2, "5.4.1": 17, "5.4.2": 3, "5.4.3": 2, "5.5.1": 4, "5.5.2": 4,
        "5.6.1": 22, "5.7.1": 3, "5.7.2": 13, "5.7.3": 1, "5.7.4": 6, "9.2": 39, "9.3.1": 4, "9.3.2": 3,
        "9.4": 7, "9.5": 3, "9.6": 8, "9.7": 3}
    p = [e[0] for e in conformance.P3109]
    assert len(p) == len(set(p)) == 91
    # Annex G's groups A, B, C, M, E and the block groups are all present
    for op in ("Convert", "FAA", "Clamp", "MinimumFinite", "IsOne", "Softplus", "NextGreaterThan", "TotalOrder",
               "Class", "ArcTan2Pi", "MinNormalOf", "BlockReduceAdd", "BlockReduceMultiply", "BlockDotProduct",
               "ConvertToBlockMaxAbsFinite", "ConvertFromBlock", "ConvertToBlock"):
        assert op in p, op


def _resolve(name):
    if "." not in name:
        return name in bits.OPERATIONS
    mod, _, attr = name.rpartition(".")
    return hasattr(importlib.import_module(mod), attr)


def test_every_name_and_test_exists():
    n = 0
    for op, clause, names, test, note in conformance.IEEE754 + conformance.P3109:
        if names is None:
            assert "decimal" in note, op
            continue
        for name in names.split("|"):
            assert _resolve(name), (op, name)
        path, _, fn = test.partition("::")
        text = (REPO / path).read_text()
        assert re.search(r"^def %s\(" % re.escape(fn), text, re.M), (op, test)
        n += 1
    assert n == 146 + 91    # 9 IEEE operations are for decimal formats only


def test_every_row_of_the_op_table_is_accounted_for():
    listed = {n for e in conformance.IEEE754 + conformance.P3109 if e[2] for n in e[2].split("|")}
    rows = set(bits.OPERATIONS)
    beyond = rows - listed
    # NumPy's / C99's functions outside both standards
    assert beyond == {"floordiv", "remainder", "nextafter", "ne", "square", "sign", "round_integral", "spacing",
                      "logical_not", "fmod", "heaviside", "divmod", "modf", "frexp", "cbrt", "logaddexp",
                      "logaddexp2", "degrees", "radians"}
