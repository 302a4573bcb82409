#!/usr/bin/env python
"""Run NumPy's and ml_dtypes' own behaviour suites against softfp8's types.

    python tools/peer_suites.py [-v] [--json OUT] [--known-failures FILE] [-k EXPR]
                                [--keep-going] [--finfo numpy|softfp8] PEER_TEST.py ...

Each peer test file is read from where it lives (NumPy ships ``test_half.py`` in
``numpy/_core/tests/``; ml_dtypes' ``custom_float_test.py`` and ``finfo_test.py``
live in ml_dtypes' source repository, next to its ``multi_thread_utils.py``).  Nothing
of them is copied: the runner parses the file, rewrites names on the syntax tree
before compiling so that the peer's types denote softfp8's, and lets pytest collect
and run the compiled module (warnings as errors, as both projects run them):

* NumPy ``test_half.py``: ``np.float16`` / ``numpy.float16`` and
  ``from numpy import float16`` become softfp8.float16's scalar type.
* ml_dtypes' suites: ``import ml_dtypes`` binds a stand-in namespace whose
  ``bfloat16``, ``float8_e3m4``, ``float8_e4m3``, ``float8_e4m3b11fnuz``,
  ``float8_e4m3fn``, ``float8_e4m3fnuz``, ``float8_e5m2``, ``float8_e5m2fnuz`` are
  softfp8's scalar types and whose ``finfo`` is ``np.finfo`` for them (ml_dtypes.finfo
  is a subclass of it; ``--finfo softfp8`` uses ``softfp8.finfo``).  ml_dtypes' types
  softfp8 has no preset for (float4/float6/e8m0) stay ml_dtypes' own: the tests
  parametrised by them are not run ("not-run"), but they remain the foreign side of
  cast tests.  ``absl.testing`` is replaced by the small stand-in below (absl-py is no
  dependency of softfp8).

Every test is then classified: passed, failed, skipped (by the test itself),
inapplicable (``INAPPLICABLE``: whole tests whose every failure matches the stated
cause; ``INAPPLICABLE_STATEMENTS``: single statements replaced by ``pass`` so the rest
of the test runs), or known failure (``--known-failures``: a JSON object {test id:
reason}; a known failure that passes is reported as XPASS, like pytest's strict
xfail).  The exit status is 0 when nothing outside those lists failed and no known
failure passed.  ``--keep-going`` is a diagnostic mode (not for counting): every
statement of a test runs even after one failed, and all failing lines are reported.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import re
import sys
import tempfile
import types
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import softfp8  # noqa: E402

# ---------------------------------------------------------------------------
# the suites and what is substituted in each
# ---------------------------------------------------------------------------

SUITES = {  # file name -> suite name
    "test_half.py": "numpy/test_half",
    "custom_float_test.py": "ml_dtypes/custom_float_test",
    "finfo_test.py": "ml_dtypes/finfo_test",
}


def scalar_type(fmt):
    return np.dtype(fmt).type


# ml_dtypes name -> softfp8 format
ML_DTYPES_SUBSTITUTES = {
    "bfloat16": softfp8.bfloat16,
    "float8_e3m4": softfp8.float8_e3m4,
    "float8_e4m3": softfp8.float8_e4m3,
    "float8_e4m3b11fnuz": softfp8.float8_e4m3b11fnuz,
    "float8_e4m3fn": softfp8.e4m3,
    "float8_e4m3fnuz": softfp8.e4m3fnuz,
    "float8_e5m2": softfp8.e5m2,
    "float8_e5m2fnuz": softfp8.e5m2fnuz,
}

# Whole tests that assert something that cannot apply to softfp8: test-id pattern ->
# (failure pattern or None, reason).  The id pattern is matched (re.search) against
# "suite::test id".  A failing test is "inapplicable" only if every one of its
# failures (the first error line, subtests as "[subtest <label>] <line>") matches the
# failure pattern; otherwise it counts as failed.  They are run all the same.
_ML = r"^ml_dtypes/custom_float_test::\w+::"
INAPPLICABLE = {
    _ML + r"testModuleName_": (None,
        "asserts the scalar type's __module__ is 'ml_dtypes'"),
    _ML + r"test(Str|Repr)_": (None,
        "asserts ml_dtypes' text: str() and repr() of a scalar are '%.6g' % value; "
        "softfp8 prints like NumPy's float16 (str '0.0', repr 'e4m3(0.0)')"),
    _ML + r"testCastToDtype_": (None,
        "asserts ml_dtypes' text: repr(dtype) == 'dtype(<type name>)' and dtype.name "
        "== the scalar type's __name__; softfp8 prints 'softfp8.e4m3' and names a "
        "dtype by its format ('e4m3'), the scalar type by its family ('E4M3')"),
    _ML + r"testDtypeFromString_": (None,
        "np.dtype('<name>') is a name lookup in np.sctypeDict, which NumPy 2.4 fills "
        "only with its own and legacy user types; a DType-API dtype cannot be "
        "registered there"),
    _ML + r"testHash_": (None,
        "np.dtype(<type>.dtype) needs ml_dtypes' class attribute `dtype` (NumPy's "
        "own np.float16.dtype is an instance attribute too, and np.dtype() refuses "
        "it), and np.dtype('<name>') is the np.sctypeDict lookup"),
    _ML + r"testAddScalarTypePromotion_": (r"!= <class 'numpy\.float16'>",
        "asserts ml_dtypes' promotion table, where every type with float16 gives "
        "float32; softfp8 promotes to the smallest NumPy float holding both exactly "
        "(docs/numpy.md, Promotion): float16 for the 8-bit formats, as NumPy gives "
        "for int8 + float16.  Every other pair of the test was checked to agree"),
    _ML + r"testArray_": (r"'\[\[1 2 4\]\]' != '\[\[1\. 2\. 4\.\]\]'",
        "asserts ml_dtypes' array text '[[1 2 4]]'; softfp8 prints arrays as NumPy "
        "prints float16 ('[[1. 2. 4.]]')"),
    _ML + r"testCanCast_": (r"^\[subtest (float16|int8|uint8)\]",
        "asserts ml_dtypes' table of safe casts: format -> float16 unsafe and int8 / "
        "uint8 -> 8-bit format safe; softfp8 calls a cast safe exactly when every "
        "value converts exactly (docs/numpy.md, Casts): E4M3 -> float16 is exact, "
        "int8 127 -> E4M3 is not"),
}

# Single statements inside otherwise applicable tests that cannot apply: (suite, test
# function, statement as ast.unparse prints it, reason).  The statement is replaced
# by ``pass`` before compiling, so the rest of the test still runs; each must match
# exactly once, or the runner stops (the peer file changed).
INAPPLICABLE_STATEMENTS = [
    ("numpy/test_half", "test_half_funcs", "a = a.byteswap()",
     "swaps the bytes only to read them back through the non-native byte order of "
     "the next statement"),
    ("numpy/test_half", "test_half_funcs", "a = a.view(a.dtype.newbyteorder())",
     "NumPy 2.4 has no non-native byte order for DType-API dtypes: "
     "dtype.newbyteorder() raises 'Cannot use DescrNewByteOrder for this new style "
     "DTypes' (numpy/_core/src/multiarray/descriptor.c)"),
    ("numpy/test_half", "test_spacing_nextafter",
     "assert_equal(np.spacing(a_f16[1:]), a_f16[:-1] - a_f16[1:])",
     "NumPy's float16 returns a positive np.spacing for negative values (against "
     "its documentation and its float32/float64); softfp8 keeps the signed spacing"),
    ("numpy/test_half", "test_half_fpe", "np.spacing(float16(-65504))",
     "with signed spacing, np.spacing(-max) is -inf and overflows, as for float32"),
    ("numpy/test_half", "test_half_array_interface", "assert_(c.dtype == float16)",
     "the array interface describes data by a typestr, which NumPy reads with "
     "np.dtype(typestr): only NumPy's own types can travel through it.  softfp8's "
     "float16 arrives as NumPy's float16 with the same bits, which the next "
     "statement checks"),
]

if np.lib.NumpyVersion(np.__version__) < "2.5.0":
    # NumPy 2.5 lets DType-API dtypes into np.dot (their dotfunc, softfp8/_core/npy/dot.c)
    INAPPLICABLE_STATEMENTS.append((
        "numpy/test_half", "test_half_funcs", "assert_equal(np.dot(a, b), 95)",
        "np.dot takes the operands' type number (PyArray_ObjectType in "
        "numpy/_core/src/multiarray/multiarraymodule.c), which raises 'This function "
        "currently only supports native NumPy dtypes and old-style user dtypes' for "
        "every DType-API dtype before any dtype slot is consulted; np.matmul works"))

# Warnings filters besides 'error' (NumPy and ml_dtypes both run their suites with
# warnings as errors), per family of suites, with the reason.
WARNING_FILTERS = {
    "numpy": [],
    "ml_dtypes": [
        ("ignore:Casting complex values to real discards the imaginary part:"
         "numpy.exceptions.ComplexWarning",
         "softfp8 warns when a cast drops imaginary parts, as NumPy's own float16 does "
         "(np.array([1j]).astype(np.float16) warns); ml_dtypes' casts from complex drop "
         "them silently and its tests (testCasts) do not expect the warning"),
        ("ignore:overflow encountered:RuntimeWarning",
         "softfp8 reports an overflow (cast, divide, np.spacing(max), np.nextafter(max, "
         "inf), ...) through NumPy's FP error state as NumPy's float16 does "
         "(test_half.py's test_half_fpe and test_to_half_cast_error assert it); "
         "ml_dtypes computes in float32 and rounds without reporting, and its tests "
         "do not expect the warning"),
    ],
}
COMMON_FILTERS = ["ignore:Module already imported:pytest.PytestAssertRewriteWarning"]

# ---------------------------------------------------------------------------
# a stand-in for absl.testing (absltest, parameterized), written here
# ---------------------------------------------------------------------------


def _label(value, key, index):
    name = getattr(value, "__name__", None)
    if isinstance(name, str):
        return name
    text = repr(value)
    if re.fullmatch(r"[A-Za-z0-9_.]{1,20}", text):
        return text
    return f"{key}{index}"


class _Params:
    """A test method awaiting expansion: (suffix, args, kwargs) per case."""

    def __init__(self, func, cases):
        self.func = func
        self.cases = cases


def _expand(name, func, cases):
    out = {}
    for suffix, args, kwargs in cases:
        def case(self, *more, _f=func, _a=args, _k=kwargs, **more_kw):
            return _f(self, *_a, *more, **_k, **more_kw)
        case.__name__ = case.__qualname__ = name + suffix
        case.__doc__ = func.__doc__
        case._peer_params = [*getattr(func, "_peer_params", ()), *args, *kwargs.values()]
        assert name + suffix not in out, f"duplicate parameterized test {name + suffix}"
        out[name + suffix] = case
    return out


def _named_cases(testcases):
    cases = []
    for tc in testcases:
        if isinstance(tc, dict):
            tc = dict(tc)
            cases.append(("_" + str(tc.pop("testcase_name")).lstrip("_"), (), tc))
        else:
            cases.append(("_" + str(tc[0]).lstrip("_"), tuple(tc[1:]), {}))
    return cases


def _apply(obj, cases):
    if isinstance(obj, type):  # class decorator: every test method gets the cases
        for name, attr in list(vars(obj).items()):
            if name.startswith("test") and callable(attr):
                delattr(obj, name)
                for new, f in _expand(name, attr, cases).items():
                    setattr(obj, new, f)
        return obj
    return _Params(obj, cases)


class _ParamMeta(type):
    def __new__(mcs, cls_name, bases, ns):
        for name, attr in list(ns.items()):
            if isinstance(attr, _Params):
                del ns[name]
                ns.update(_expand(name, attr.func, attr.cases))
        return super().__new__(mcs, cls_name, bases, ns)


class _ParamTestCase(unittest.TestCase, metaclass=_ParamMeta):
    pass


def _named_parameters(*testcases):
    if len(testcases) == 1 and not isinstance(testcases[0], (dict, tuple)):
        testcases = testcases[0]
    cases = _named_cases(list(testcases))
    return lambda obj: _apply(obj, cases)


def _parameters(*testcases):
    if len(testcases) == 1 and not isinstance(testcases[0], (dict, tuple)):
        testcases = testcases[0]
    cases = []
    for i, tc in enumerate(testcases):
        if isinstance(tc, dict):
            cases.append((str(i), (), dict(tc)))
        else:
            cases.append((str(i), tc if isinstance(tc, tuple) else (tc,), {}))
    return lambda obj: _apply(obj, cases)


def _product(**grid):
    keys = list(grid)
    cases = []
    for combo in itertools.product(*(list(enumerate(grid[k])) for k in keys)):
        suffix = "_" + "_".join(_label(v, k, i) for k, (i, v) in zip(keys, combo))
        cases.append((suffix, (), {k: v for k, (_, v) in zip(keys, combo)}))
    seen = {}
    for j, (suffix, a, k) in enumerate(cases):  # make labels unique
        if suffix in seen:
            cases[j] = (f"{suffix}_{j}", a, k)
        seen[suffix] = True
    return lambda obj: _apply(obj, cases)


def _absl_modules():
    parameterized = types.ModuleType("absl.testing.parameterized")
    parameterized.TestCase = _ParamTestCase
    parameterized.named_parameters = _named_parameters
    parameterized.parameters = _parameters
    parameterized.product = _product
    absltest = types.ModuleType("absl.testing.absltest")
    absltest.TestCase = unittest.TestCase

    def main():
        raise SystemExit("run peer suites through tools/peer_suites.py")
    absltest.main = main
    return absltest, parameterized


def _ml_dtypes_namespace(finfo_impl="numpy"):
    import ml_dtypes as real

    ns = types.ModuleType("ml_dtypes")
    for name in dir(real):
        if not name.startswith("_"):
            setattr(ns, name, getattr(real, name))
    ours = {}
    for name, fmt in ML_DTYPES_SUBSTITUTES.items():
        setattr(ns, name, scalar_type(fmt))
        ours[np.dtype(fmt)] = fmt

    def finfo(obj):
        if isinstance(obj, str):
            try:
                fmt = softfp8.lookup(obj)
            except (ValueError, KeyError, TypeError):
                return real.finfo(obj)
            return _finfo(fmt)
        dt = obj.dtype if isinstance(obj, np.ndarray) else None
        if dt is None:
            try:
                dt = np.dtype(obj)
            except TypeError:
                dt = None
        if dt is not None and dt in ours:
            return _finfo(ours[dt])
        return real.finfo(obj)

    def _finfo(fmt):
        return np.finfo(np.dtype(fmt)) if finfo_impl == "numpy" else softfp8.finfo(fmt)

    ns.finfo = finfo
    return ns


FOREIGN_TYPES = tuple(  # ml_dtypes' types left in place: tests on them are not run
    getattr(__import__("ml_dtypes"), n) for n in (
        "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e8m0fnu"))



def _is_foreign(param):
    if isinstance(param, np.dtype):
        param = param.type
    return isinstance(param, type) and param in FOREIGN_TYPES


# ---------------------------------------------------------------------------
# rewriting the peer module
# ---------------------------------------------------------------------------


class _Neutraliser(ast.NodeTransformer):
    """Replaces the listed statements of the listed test functions by ``pass``."""

    def __init__(self, suite):
        self.rules = [r for r in INAPPLICABLE_STATEMENTS if r[0] == suite]
        self.hits = dict.fromkeys(range(len(self.rules)), 0)
        self.func = None

    def visit_FunctionDef(self, node):
        outer, self.func = self.func, node.name
        self.generic_visit(node)
        self.func = outer
        return node

    def generic_visit(self, node):
        node = super().generic_visit(node)
        if self.func is not None and isinstance(node, ast.stmt) \
                and not isinstance(node, ast.FunctionDef):
            for i, (_, func, text, _) in enumerate(self.rules):
                if func == self.func and ast.unparse(node) == text:
                    self.hits[i] += 1
                    return ast.copy_location(ast.Pass(), node)
        return node

    def check(self, path):
        for i, n in self.hits.items():
            if n != 1:
                raise RuntimeError(f"{path}: inapplicable statement {self.rules[i][2]!r} "
                                   f"in {self.rules[i][1]} matched {n} times, not once")


class _Rewriter(ast.NodeTransformer):
    """Substitutes names: ``<module alias>.<attr>`` and ``from <module> import <attr>``
    for the (module, attr) pairs in ``attrs``; ``import <module>`` / ``from
    <package> import <module>`` for the modules in ``modules``.  Replacements are
    names bound in the module's globals before it runs (``_softfp8_peer_*``)."""

    def __init__(self, attrs, modules):
        self.attrs = attrs          # {(module, attr): global name}
        self.modules = modules      # {dotted module: global name}
        self.aliases = {}           # local alias -> module, for attrs' modules
        self.count = 0

    def _bind(self, target, source, node):
        self.count += 1
        return ast.copy_location(
            ast.Assign(targets=[ast.Name(target, ast.Store())],
                       value=ast.Name(source, ast.Load())), node)

    def visit_Import(self, node):
        keep, binds = [], []
        for a in node.names:
            if a.name in self.modules:
                binds.append(self._bind(a.asname or a.name, self.modules[a.name], node))
                continue
            if any(m == a.name for m, _ in self.attrs):
                self.aliases[a.asname or a.name] = a.name
            keep.append(a)
        out = [ast.copy_location(ast.Import(names=keep), node)] if keep else []
        return out + binds

    def visit_ImportFrom(self, node):
        keep, binds = [], []
        for a in node.names:
            full = f"{node.module}.{a.name}"
            if full in self.modules:
                binds.append(self._bind(a.asname or a.name, self.modules[full], node))
            elif (node.module, a.name) in self.attrs:
                binds.append(self._bind(a.asname or a.name,
                                        self.attrs[(node.module, a.name)], node))
            else:
                keep.append(a)
        out = []
        if keep:
            out.append(ast.copy_location(
                ast.ImportFrom(module=node.module, names=keep, level=node.level), node))
        return out + binds

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id in self.aliases:
            key = (self.aliases[node.value.id], node.attr)
            if key in self.attrs and isinstance(node.ctx, ast.Load):
                self.count += 1
                return ast.copy_location(ast.Name(self.attrs[key], ast.Load()), node)
        return node


class _KeepGoing(ast.NodeTransformer):
    """Diagnostic mode (--keep-going): every statement of a test function, also inside
    ``with`` / ``for`` / ``if`` blocks (not inside ``pytest.raises`` / ``warns`` /
    ``assertRaises`` blocks), runs under try/except; the test goes on after a failing
    statement and fails at the end with every failing line.  Later statements may then
    fail only because an earlier one did: read the first of a chain."""

    ERRS = "_softfp8_peer_errs"

    def visit_FunctionDef(self, node):
        if not node.name.startswith("test"):
            return node
        body = node.body
        doc = body[:1] if body and isinstance(body[0], ast.Expr) and \
            isinstance(body[0].value, ast.Constant) else []
        init = ast.parse(f"{self.ERRS} = []").body
        final = ast.parse(
            f"if {self.ERRS}:\n"
            f"    raise AssertionError(f'{{len({self.ERRS})}} failing statements: ' + "
            f"' | '.join({self.ERRS}))").body
        node.body = doc + init + self._wrap(body[len(doc):]) + final
        return node

    @staticmethod
    def _expects_error(with_node):
        for item in with_node.items:
            text = ast.unparse(item.context_expr)
            if re.search(r"\b(raises|warns|assertRaises\w*|assertWarns\w*)\(", text):
                return True
        return False

    def _wrap(self, stmts):
        out = []
        for st in stmts:
            if isinstance(st, (ast.With, ast.For, ast.If)) and not (
                    isinstance(st, ast.With) and self._expects_error(st)):
                st.body = self._wrap(st.body)
                if isinstance(st, (ast.For, ast.If)):
                    st.orelse = self._wrap(st.orelse)
                out.append(st)
                continue
            if isinstance(st, (ast.FunctionDef, ast.ClassDef, ast.Return)):
                out.append(st)
                continue
            handler = ast.parse(
                f"try:\n    pass\nexcept Exception as _softfp8_peer_e:\n"
                f"    {self.ERRS}.append('L{st.lineno}: ' + type(_softfp8_peer_e).__name__"
                f" + ': ' + str(_softfp8_peer_e).strip().split(chr(10))[0][:200])").body[0]
            handler.body = [st]
            out.append(ast.copy_location(handler, st))
        return out


class Options:
    """Run options: what ml_dtypes.finfo becomes; keep-going diagnostics."""

    def __init__(self, finfo="numpy", keep_going=False):
        self.finfo = finfo
        self.keep_going = keep_going


def build_module(path: Path, suite: str, config=None, opts=None) -> types.ModuleType:
    opts = opts or Options()
    source = path.read_bytes()
    tree = ast.parse(source, filename=str(path))
    neutral = _Neutraliser(suite)
    tree = neutral.visit(tree)
    neutral.check(path)
    if opts.keep_going:
        tree = _KeepGoing().visit(tree)
    env = {}
    if suite == "numpy/test_half":
        env["_softfp8_peer_float16"] = scalar_type(softfp8.float16)
        rw = _Rewriter({("numpy", "float16"): "_softfp8_peer_float16"}, {})
    else:
        absltest, parameterized = _absl_modules()
        env["_softfp8_peer_ml_dtypes"] = _ml_dtypes_namespace(opts.finfo)
        env["_softfp8_peer_absltest"] = absltest
        env["_softfp8_peer_parameterized"] = parameterized
        rw = _Rewriter({}, {"ml_dtypes": "_softfp8_peer_ml_dtypes",
                            "absl.testing.absltest": "_softfp8_peer_absltest",
                            "absl.testing.parameterized": "_softfp8_peer_parameterized"})
    tree = ast.fix_missing_locations(rw.visit(tree))
    if rw.count == 0:
        raise RuntimeError(f"{path}: nothing to substitute; is this the right file?")
    try:  # pytest's assertion rewriting, for readable failures of bare asserts
        from _pytest.assertion.rewrite import rewrite_asserts
        rewrite_asserts(tree, source, str(path), config)
    except Exception:  # noqa: BLE001 - only the messages get poorer
        pass
    name = "peer_" + re.sub(r"\W", "_", suite)
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    mod.__dict__.update(env)
    sys.modules[name] = mod
    helper_dir = str(path.parent)  # ml_dtypes' multi_thread_utils lives beside it
    if helper_dir not in sys.path:
        sys.path.append(helper_dir)
    exec(compile(tree, str(path), "exec"), mod.__dict__)  # noqa: S102
    return mod


# ---------------------------------------------------------------------------
# pytest plugin: collection from the rewritten module, result capture
# ---------------------------------------------------------------------------


class _PeerModule(pytest.Module):
    peer_suite = ""
    peer_opts = None

    def _getobj(self):
        return build_module(Path(self.path), self.peer_suite, self.config, self.peer_opts)


class Collector:
    def __init__(self, paths, opts):
        self.opts = opts
        self.suites = {str(p.resolve()): SUITES[p.name] for p in paths}
        self.results = {}   # test id -> dict
        self.not_run = {}   # test id -> reason

        self.ids = {}       # pytest node id -> test id

    def test_id(self, item):
        rest = item.nodeid.partition("::")[2]
        tid = f"{self.suites.get(str(Path(item.path).resolve()), item.path)}::{rest}"
        self.ids[item.nodeid] = tid
        return tid

    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makemodule(self, module_path, parent):
        suite = self.suites.get(str(Path(module_path).resolve()))
        if suite is None:
            return None
        mod = _PeerModule.from_parent(parent, path=module_path)
        mod.peer_suite = suite
        mod.peer_opts = self.opts
        return mod

    def pytest_collection_modifyitems(self, session, config, items):
        keep = []
        for item in items:
            params = getattr(getattr(item, "obj", None), "_peer_params", ())
            if any(_is_foreign(p) for p in params):
                self.not_run[self.test_id(item)] = "no softfp8 type"
            else:
                self.test_id(item)
                keep.append(item)
        items[:] = keep

    def pytest_runtest_logreport(self, report):
        tid = self.ids.get(report.nodeid, report.nodeid)
        rec = self.results.setdefault(tid, {"outcome": "passed", "error": "",
                                             "failures": []})
        sub = getattr(report, "context", None) is not None  # a failing subTest
        if report.failed:
            rec["failures"].append(_error_line(report, sub))
            if rec["outcome"] != "failed":
                rec["outcome"] = "failed"
                rec["error"] = rec["failures"][0]
        elif report.skipped and report.when in ("setup", "call") and not sub:
            if rec["outcome"] == "passed":
                rec["outcome"] = "skipped"
                rec["error"] = _error_line(report, sub)


def _error_line(report, sub):
    text = report.longreprtext or ""
    lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    line = next((ln for ln in lines if ln), "")
    src = [ln[1:].strip() for ln in text.splitlines()
           if ln.startswith("> ") and "_f(self, *_a, *more, **_k, **more_kw)" not in ln]
    if src and line:
        line = f"{line}  @ {src[0]}"
    if not line and report.skipped and isinstance(report.longrepr, tuple):
        line = str(report.longrepr[2])
    if not line:
        line = text.strip().splitlines()[-1] if text.strip() else ""
    if sub:
        ctx = report.context
        label = getattr(ctx, "msg", None)
        if label is None:
            label = ",".join(f"{k}={v}" for k, v in (getattr(ctx, "kwargs", {}) or {}).items())
        line = f"[subtest {label}] {line}"
    return line if "failing statements:" in line else line[:300]


def inapplicable_reason(test_id, failures):
    for pat, (fail_pat, reason) in INAPPLICABLE.items():
        if re.search(pat, test_id):
            if fail_pat is None or all(re.search(fail_pat, f) for f in failures):
                return reason
            return None
    return None


def _family(path):
    return SUITES[Path(path).name].split("/")[0]


def run(paths, known=None, extra_args=(), opts=None):
    paths = [Path(p) for p in paths]
    for p in paths:
        if p.name not in SUITES:
            raise SystemExit(f"{p}: unknown peer suite (expected one of {sorted(SUITES)})")
        if not p.is_file():
            raise SystemExit(f"{p}: no such file")
    col = Collector(paths, opts or Options())
    for family in sorted({_family(p) for p in paths}):
        filters = ["error", *COMMON_FILTERS, *(f for f, _ in WARNING_FILTERS[family])]
        with tempfile.TemporaryDirectory() as tmp:
            ini = Path(tmp) / "pytest.ini"
            ini.write_text("[pytest]\nfilterwarnings =\n" +
                           "".join(f"    {f}\n" for f in filters))
            args = ["-c", str(ini), "--rootdir", tmp, "--noconftest",
                    "-p", "no:cacheprovider", "-p", "no:terminal", "-p", "no:randomly",
                    *extra_args, *[str(p.resolve()) for p in paths if _family(p) == family]]
            status = pytest.main(args, plugins=[col])
        if status not in (0, 1, 5):
            raise SystemExit(f"pytest could not run the {family} suites (exit status {status})")
    return classify(col, known or {})


def classify(col, known):
    rows = []
    for tid, rec in sorted(col.results.items()):
        reason = inapplicable_reason(tid, rec["failures"])
        outcome = rec["outcome"]
        if reason is not None and outcome != "passed":
            cls = "inapplicable"
        elif tid in known:
            cls = "known-failure" if outcome == "failed" else "XPASS"
            reason = known[tid]
        else:
            cls = outcome
        rows.append({"id": tid, "class": cls, "outcome": outcome,
                     "error": rec["error"], "reason": reason, "failures": rec["failures"]})
    for tid, why in sorted(col.not_run.items()):
        rows.append({"id": tid, "class": "not-run", "outcome": "not-run",
                     "error": "", "reason": why, "failures": []})
    missing = sorted(set(known) - {r["id"] for r in rows})
    return rows, missing


COLUMNS = ("passed", "failed", "inapplicable", "known-failure", "XPASS", "skipped",
           "not-run")


def summary(rows):
    table = {}
    for r in rows:
        suite = r["id"].split("::", 1)[0]
        table.setdefault(suite, dict.fromkeys(COLUMNS, 0))[r["class"]] += 1
    return table


def print_report(rows, missing, verbose):
    table = summary(rows)
    if verbose:
        for r in rows:
            extra = r["error"] if r["class"] in ("failed", "known-failure") else ""
            if r["class"] == "inapplicable":
                extra = f"{r['error']}  [{r['reason']}]"
            print(f"{r['class']:<13} {r['id']}  {extra}".rstrip())
        print()
    else:
        for r in rows:
            if r["class"] in ("failed", "XPASS"):
                print(f"{r['class']:<13} {r['id']}  {r['error']}".rstrip())
    width = max([len(s) for s in table] + [5])
    print(f"{'suite':<{width}} " + " ".join(f"{c:>13}" for c in COLUMNS))
    for suite, counts in table.items():
        print(f"{suite:<{width}} " + " ".join(f"{counts[c]:>13}" for c in COLUMNS))
    for tid in missing:
        print(f"listed known failure not collected: {tid}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="peer test files (test_half.py, "
                    "custom_float_test.py, finfo_test.py)")
    ap.add_argument("--json", help="write every test's classification to this file")
    ap.add_argument("--known-failures", help="JSON file {test id: reason}")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    ap.add_argument("-k", help="pytest -k expression")
    ap.add_argument("--keep-going", action="store_true",
                    help="diagnostics: run every statement of a test even after one "
                    "failed, and report all failing lines (not for counting)")
    ap.add_argument("--finfo", choices=("numpy", "softfp8"), default="numpy",
                    help="what ml_dtypes.finfo becomes for softfp8's types: np.finfo "
                    "(default; ml_dtypes.finfo is a subclass of it) or softfp8.finfo")
    ns = ap.parse_args(argv)
    known = json.loads(Path(ns.known_failures).read_text()) if ns.known_failures else {}
    extra = ["-k", ns.k] if ns.k else []
    rows, missing = run(ns.paths, known, extra, Options(ns.finfo, ns.keep_going))
    print_report(rows, missing, ns.verbose)
    if ns.json:
        Path(ns.json).write_text(json.dumps({"tests": rows, "missing": missing,
                                             "summary": summary(rows)}, indent=1))
    bad = [r for r in rows if r["class"] in ("failed", "XPASS")]
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
