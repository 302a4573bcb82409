"""The machinery of tools/peer_suites.py: name substitution on the syntax tree, the
absl.testing stand-in, inapplicable statements, keep-going diagnostics, classification."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

RUNNER = Path(__file__).resolve().parents[2] / "tools" / "peer_suites.py"


@pytest.fixture(scope="module")
def runner():
    spec = importlib.util.spec_from_file_location("peer_suites_under_test", RUNNER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(tree, env):
    exec(compile(ast.fix_missing_locations(tree), "<peer>", "exec"), env)  # noqa: S102
    return env


def test_rewriter_substitutes_attribute_and_from_import(runner):
    src = ("import numpy as np\nfrom numpy import float16, float32 as f32\n"
           "A = np.float16\nB = float16\nC = f32\nD = np.float32\n"
           "def f():\n    return np.float16\n")
    marker = object()
    rw = runner._Rewriter({("numpy", "float16"): "_S"}, {})
    env = _run(rw.visit(ast.parse(src)), {"_S": marker})
    assert env["A"] is marker and env["B"] is marker and env["f"]() is marker
    assert env["C"] is np.float32 and env["D"] is np.float32
    assert rw.count == 3


def test_rewriter_substitutes_modules(runner):
    src = "import ml_dtypes\nfrom absl.testing import parameterized, absltest\nimport math\n"
    a, b, c = object(), object(), object()
    rw = runner._Rewriter({}, {"ml_dtypes": "_A", "absl.testing.parameterized": "_B",
                               "absl.testing.absltest": "_C"})
    env = _run(rw.visit(ast.parse(src)), {"_A": a, "_B": b, "_C": c})
    assert env["ml_dtypes"] is a and env["parameterized"] is b and env["absltest"] is c
    assert env["math"].sqrt(4.0) == 2.0


def test_absl_stand_in_names_and_arguments(runner):
    _, parameterized = runner._absl_modules()
    calls = []

    @parameterized.named_parameters(
        {"testcase_name": "_one", "x": 1}, {"testcase_name": "_two", "x": 2})
    class T(parameterized.TestCase):
        def testA(self, x):
            calls.append(("A", x))

        @parameterized.product(y=[np.float32, None], op=[min, max])
        def testB(self, x, y, op):
            calls.append(("B", x, y, op))

    names = sorted(n for n in vars(T) if n.startswith("test"))
    assert names == ["testA_one", "testA_two",
                     "testB_None_max_one", "testB_None_max_two",
                     "testB_None_min_one", "testB_None_min_two",
                     "testB_float32_max_one", "testB_float32_max_two",
                     "testB_float32_min_one", "testB_float32_min_two"], names
    T("testA_two").testA_two()
    T("testB_None_max_one").testB_None_max_one()
    assert calls == [("A", 2), ("B", 1, None, max)]
    assert T.testB_float32_min_two._peer_params == [np.float32, min, 2]


def test_neutraliser_removes_exactly_once(runner, monkeypatch):
    src = "def test_x():\n    a = 1\n    with open('f') as fh:\n        a = a.byteswap()\n"
    monkeypatch.setattr(runner, "INAPPLICABLE_STATEMENTS",
                        [("s", "test_x", "a = a.byteswap()", "why")])
    n = runner._Neutraliser("s")
    tree = n.visit(ast.parse(src))
    n.check("f")
    assert "byteswap" not in ast.unparse(tree)
    monkeypatch.setattr(runner, "INAPPLICABLE_STATEMENTS",
                        [("s", "test_x", "a = a.swap()", "why")])
    n = runner._Neutraliser("s")
    n.visit(ast.parse(src))
    with pytest.raises(RuntimeError, match="matched 0 times"):
        n.check("f")


def test_keep_going_reports_every_failing_statement(runner):
    src = ("import pytest\n"
           "def test_x():\n"
           "    '''doc'''\n"
           "    assert 1 == 2\n"
           "    with pytest.raises(ZeroDivisionError):\n"
           "        1 / 0\n"
           "    for i in range(2):\n"
           "        assert i == 0, i\n"
           "    ok = True\n")
    env = _run(runner._KeepGoing().visit(ast.parse(src)), {})
    with pytest.raises(AssertionError) as exc:
        env["test_x"]()
    msg = str(exc.value)
    assert msg.startswith("2 failing statements: "), msg
    assert "L4: AssertionError" in msg and "L8: AssertionError: 1" in msg, msg


def test_classification(runner):
    tid = "ml_dtypes/custom_float_test::CustomFloatNumPyTest::testCanCast_E4M3"
    assert runner.inapplicable_reason(tid, ["[subtest float16] AssertionError: x"])
    assert runner.inapplicable_reason(
        tid, ["[subtest float16] x", "[subtest complex64] x"]) is None
    assert runner.inapplicable_reason(
        "ml_dtypes/custom_float_test::CustomFloatTest::testModuleName_E4M3", ["any"])
    assert runner.inapplicable_reason("numpy/test_half::TestHalf::test_half_fpe", ["x"]) is None
