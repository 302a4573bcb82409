"""The Python modules of softfp8 import each other in one direction only.

ORDER is the layering (docs/python-api.md): a module may import only modules before
it, never at function level (no lazy imports hiding a cycle).  Checked twice: on the
source (every import statement, parsed with ast) and at run time (importing the modules
one by one in a fresh interpreter, without the package's __init__, loads no module that
comes later).
"""
import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import softfp8

PKG = Path(softfp8.__file__).resolve().parent
ORDER = ["_svgen", "_cache", "_validation", "_registry", "_formats", "_context", "bits", "_dtypes",
         "_printing", "_io", "_interop", "gemm", "p3109", "ieee754", "scaling", "mx", "demo", "dask", "testing",
         "pytest_plugin", "vectors", "audit", "conformance", "__main__"]
# modules of optional extras: imported at run time only when their dependency is installed
OPTIONAL = {"dask": "dask.array"}


def _softfp8_imports(tree, module):
    """[(imported softfp8 module or 'softfp8', node, at function level)] of a parsed module."""
    out = []
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def in_function(node):
        while node in parents:
            node = parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return True
        return False

    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "softfp8"]
            names = [n.split(".")[1] if "." in n else "softfp8" for n in names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 1 or node.module == "softfp8" or (node.module or "").startswith("softfp8."):
                base = node.module if node.level == 0 else ("softfp8." + node.module if node.module
                                                             else "softfp8")
                if base == "softfp8":
                    names = [a.name for a in node.names]   # from . import bits
                else:
                    names = [base.split(".")[1]]           # from ._formats import Format
            elif node.level > 1:
                raise AssertionError(f"{module}: relative import beyond the package")
        for n in names:
            out.append((n, node, in_function(node)))
    return out


def test_every_module_is_placed():
    modules = {p.stem for p in PKG.glob("*.py")} - {"__init__"}
    assert modules == set(ORDER), f"add new modules to ORDER: {sorted(modules ^ set(ORDER))}"
    assert len(ORDER) == 24


def test_imports_go_down_only():
    checked = 0
    for i, module in enumerate(ORDER):
        tree = ast.parse((PKG / f"{module}.py").read_text(), filename=module)
        for name, node, lazy in _softfp8_imports(tree, module):
            where = f"softfp8/{module}.py:{node.lineno}"
            assert not lazy, f"{where}: function-level import of softfp8 module {name}"
            if name == "_ext":
                continue            # the compiled extension: below every Python module
            if name == "softfp8":
                # only the command line may import the package as a whole
                assert module == "__main__", f"{where}: imports the softfp8 package"
                continue
            assert name in ORDER, f"{where}: imports unknown softfp8 module {name}"
            assert ORDER.index(name) < i, f"{where}: {module} imports {name}, which comes later"
            checked += 1
    assert checked >= 20   # the check saw the real imports


def test_runtime_import_order():
    """Each module imports (in a fresh interpreter, the package's __init__ bypassed)
    with only the modules before it loaded."""
    import importlib.util
    order = [m for m in ORDER[:-1]
             if m not in OPTIONAL or importlib.util.find_spec(OPTIONAL[m].split(".")[0])]
    code = textwrap.dedent(f"""
        import importlib, sys, types
        pkg = types.ModuleType("softfp8")
        pkg.__path__ = [{str(PKG)!r}]
        sys.modules["softfp8"] = pkg
        order = {order!r}
        for i, m in enumerate(order):
            importlib.import_module("softfp8." + m)
            later = [n for n in order[i + 1:] if "softfp8." + n in sys.modules]
            assert not later, (m, later)
        print("ok", len(order))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=PKG.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok", str(len(order))] and len(order) >= 13
    # and the whole package, then the command line, in a fresh interpreter
    proc = subprocess.run([sys.executable, "-c", "import softfp8.__main__ as m; print(m.FAMILIES)"],
                          capture_output=True, text=True, timeout=120, cwd=PKG.parent)
    assert proc.returncode == 0, proc.stderr
    assert "cfloat8_143" in proc.stdout
