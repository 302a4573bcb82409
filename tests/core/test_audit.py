"""softfp8.audit (issue 25): the counts, the ulp error and the P3109 kappa figure
(Interim Report v4.0, 4.4) on implementations whose errors are known by
construction, through the Python API, a vector file and the CLI."""
import io
import math

import numpy as np
import pytest

import softfp8
from softfp8 import audit, bits, vectors
from softfp8.__main__ import main

F16 = softfp8.float16


def _codes():
    return np.arange(1 << 16, dtype=np.uint16)


def test_correct_implementation():
    """softfp8's own results: every one correct, kappa 0, max ulp error <= 1/2."""
    c = _codes()
    r, _ = bits.exp(F16, c)
    row = audit.audit_results(F16, "exp", (c,), r)
    assert (row.total, row.correct, row.faithful, row.kappa) == (65536, 65536, 65536, 0)
    assert row.max_ulp <= 0.5 and row.nan_mismatches == row.inf_mismatches == 0


def test_directed_rounding_is_faithful_with_kappa_one():
    """Results rounded toward zero: faithful everywhere; the incorrect ones are one
    value from the correct one (kappa 1); their count is that of the elements where
    toward zero and nearest even differ, and the ulp error stays below 1."""
    c = _codes()
    tz, _ = bits.log(F16, c, rounding="toward_zero")
    ne, _ = bits.log(F16, c)
    row = audit.audit_results(F16, "log", (c,), tz)
    differ = int((tz != ne).sum())
    assert differ > 1000
    assert (row.correct, row.faithful, row.kappa) == (65536 - differ, 65536, 1)
    assert 0.5 < row.max_ulp < 1


def test_kappa_nan_and_infinity_and_steps():
    c = _codes()
    ne, _ = bits.sin(F16, c)
    bad = ne.copy()
    i = np.nonzero(np.isfinite(ne.view(np.float16)) & (ne.view(np.float16) > 0.25))[0][:3]
    bad[i] = bad[i] + np.array([3, 1, 2], np.uint16)                  # 3 values off at most
    row = audit.audit_results(F16, "sin", (c,), bad)
    assert (row.correct, row.kappa, row.nan_mismatches, row.inf_mismatches) == (65533, 3, 0, 0)
    # +1 value is the other neighbour where the correct result was the lower one
    assert row.faithful in (65533, 65534)
    inf = ne.copy()
    inf[i[0]] = 0x7C00                                                # a finite result made +inf
    assert math.isinf(audit.audit_results(F16, "sin", (c,), inf).kappa)
    nan = ne.copy()
    nan[i[0]] = 0x7E00
    row = audit.audit_results(F16, "sin", (c,), nan)
    assert math.isnan(row.kappa) and row.nan_mismatches == 1


def test_vector_file_and_cli(tmp_path, capsys):
    fmt = softfp8.e4m3
    buf = io.BytesIO()
    vectors.write(buf, fmt, "mul")
    data = buf.getvalue().decode()
    row = audit.audit_vectors(data, fmt, "mul")
    assert row.total == 65536 and row.correct == 65536 and row.kappa == 0
    lines = data.splitlines()
    a, b, r, fl = lines[1000].split()
    lines[1000] = " ".join([a, b, "%02X" % ((int(r, 16) + 1) % 256), fl])
    p = tmp_path / "mul.txt"
    p.write_text("\n".join(lines) + "\n")
    assert main(["audit", "e4m3", "mul", str(p)]) == 0
    out = capsys.readouterr().out
    assert "65535 (100.00%)" in out and "kappa 1" in out
    with pytest.raises(SystemExit):
        main(["audit", "e4m3", "mul", "--callable", "numpy:multiply"])      # no --dtype


def test_callable_ml_dtypes_bfloat16():
    """ml_dtypes computes bfloat16 functions in float32 and rounds again; the audit
    of its exp is complete (every code) and its faithful count covers every result."""
    ml = pytest.importorskip("ml_dtypes")
    row = audit.audit_callable(np.exp, softfp8.bfloat16, "exp", ml.bfloat16)
    assert row.total == 65536 and row.faithful == 65536 and row.kappa <= 1
    with pytest.raises(ValueError, match="bytes per element"):
        audit.audit_callable(np.exp, softfp8.e4m3, "exp", ml.bfloat16)
