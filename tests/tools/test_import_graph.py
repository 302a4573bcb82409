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
ORDER = ["_svgen", "_cache", "_validation", "_registry", "_formats", "_context", "_explain", "bits", "_dtypes",
         "_printing", "_io", "_interop", "matrix_units", "gemm", "p3109", "ieee754", "scaling", "mx", "nn", "demo", "torch_nn",
         "torch", "dask", "_jax_ffi", "jax_nn", "jax", "testing", "pytest_plugin", "vectors", "dot_vectors", "_reach", "coverage", "cocotb",
         "audit", "conformance", "__main__"]
# modules of optional extras: imported at run time only when their dependency is installed
OPTIONAL = {"dask": "dask.array", "torch": "torch", "torch_nn": "torch", "_jax_ffi": "jax", "jax_nn": "jax", "jax": "jax"}


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
    assert len(ORDER) == 36


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


# ==========================================================================
# C: layers, no include or call cycle, no Python import by name, file sizes
# ==========================================================================
#
# The C sources depend downward only: the NumPy glue (npy/) -> the array driver and the
# matrix engine -> the fast paths (fast/) -> the exact core.  The glue reaches fast/ only
# through the driver and the matrix engine ("one way into fast/").  A dependency is an
# #include or a call of a function defined in another file (tests/tools/csource.py reads
# the definitions and calls); a header and the source of its name (x.h, x.c) are one
# module; every other file is a module of its own.  Cycles are forbidden between modules of
# any layer, so between files.

import re as _re

from . import csource as _C

GLUE, ENGINE, FAST, CORE = 3, 2, 1, 0
LAYER_NAMES = {GLUE: "NumPy glue", ENGINE: "driver / matrix engine", FAST: "fast paths", CORE: "exact core"}
# files outside npy/ and fast/, by layer (a new file must be placed here)
# (and every file of mm/, the matrix engine)
ENGINE_FILES = {"driver.c", "driver.h", "quantize.c", "quantize.h"}
CORE_FILES = {"core.c", "core_x.h", "accum.c", "accum.h", "codes.h", "order.h", "rng.h", "ops.c", "ops.h",
              "ops.def", "elem.c", "elem.h", "elem_explog.c", "elem_trig.c", "include/softfp8/softfp8.h",
              # the matrix-unit models: exact definitions like accum.c (docs/matrix-units.md)
              "bfma.c", "bfma.h", "bfma_params.c", "core_exact.c", "core_ieee.c", "core_isa.c", "core_explain.c",
              "core_api.c", "core_reduce.c", "elem_ieee.c", "elem_pi.c", "core_p3109.c", "core_p3109.h", "core_p3109_block.c"}
# what _ext.pyx may use of fast/: its switches, the cache's diagnostics and the counters --
# no table getter and no kernel (the way into fast/ is the driver)
PYX_FAST_ALLOWED = {"sfp8f_enabled", "sfp8f_set_enabled", "sfp8f_simd_level", "sfp8f_set_simd", "sfp8f_cache_info",
                    "sfp8f_cache_stats", "sfp8f_set_cache_cap", "sfp8f_cache_reclaim", "sfp8f_read_begin",
                    "sfp8f_read_end", "sfp8f_family_info", "sfp8f_family_total", "sfp8f_family_calls",
                    "sfp8f_family_calls_reset"}
MAX_LINES = 1200


# glue to other frameworks outside npy/: the XLA FFI handlers of softfp8.jax
GLUE_FILES = {"xla_ffi.c", "xla_ffi.h"}


def c_layer(name):
    if name.startswith("npy/") or name in GLUE_FILES:
        return GLUE
    if name.startswith("fast/"):
        return FAST
    if name in ENGINE_FILES or name.startswith("mm/"):
        return ENGINE
    if name in CORE_FILES:
        return CORE
    return None


def layer_violations(graph):
    out = []
    for a, deps in sorted(graph.items()):
        for b, why in sorted(deps.items()):
            la, lb = c_layer(a), c_layer(b)
            if lb > la:
                out.append(f"{a} ({LAYER_NAMES[la]}) depends on {b} ({LAYER_NAMES[lb]}): {why[0]}")
            elif la == GLUE and lb == FAST:
                out.append(f"{a} (NumPy glue) reaches fast/ directly ({b}): {why[0]} -- go through the driver "
                           f"or the matrix engine")
    return out


def test_c_every_file_is_placed():
    srcs = _C.c_files()
    unplaced = sorted(n for n in srcs if c_layer(n) is None)
    assert not unplaced, f"place these C files in a layer (ENGINE_FILES / CORE_FILES): {unplaced}"
    assert len(srcs) >= 40 and {c_layer(n) for n in srcs} == {GLUE, ENGINE, FAST, CORE}


def test_c_reader_finds_every_definition():
    """csource finds each function definition a plain text search finds (a line starting a
    definition at column 0: `type name(...)` ending in `{` on it or the next lines)."""
    checked = 0
    for name, s in _C.sources().items():
        found = {f.name for f in s.funcs}
        for m in _re.finditer(r"^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\(([^;{]*?)\)\s*\{",
                              s.code, _re.M):
            assert m.group(1) in found or m.group(1) in _C.KEYWORDS, f"{name}: {m.group(1)} not read"
            checked += 1
    assert checked >= 500


def test_c_layers():
    errs = layer_violations(_C.dependency_graph())
    assert not errs, "C dependencies against the layers:\n  " + "\n  ".join(errs)


def test_c_no_cycles():
    g = _C.module_graph(_C.dependency_graph())
    found = []
    for comp in _C.cycles(g):
        edges = [f"{a} -> {b} ({g[a][b][0]})" for a in comp for b in comp if b in g[a]]
        found.append(" <-> ".join(comp) + ":\n      " + "\n      ".join(edges))
    assert not found, "C files depend on each other in cycles:\n  " + "\n  ".join(found)


def test_c_cycle_and_layer_checks_can_fail():
    g = {"npy/a.c": {"npy/b.c": ["f calls g"]}, "npy/b.c": {"npy/a.c": ["g calls f"]},
         "core.c": {"driver.c": ["x calls y"]}, "driver.c": {}}
    assert _C.cycles(_C.module_graph(g)) == [["npy/a", "npy/b"]]
    assert layer_violations(g) == ["core.c (exact core) depends on driver.c (driver / matrix engine): x calls y"]
    g = {"npy/m.c": {"fast/fast.c": ["h calls sfp8f_convert"]}}
    assert len(layer_violations(g)) == 1 and "reaches fast/ directly" in layer_violations(g)[0]


def test_c_imports_no_python_module_of_the_package():
    bad, imports = [], 0
    for name, s in _C.sources().items():
        for m in _re.finditer(r"\bPyImport_\w+\s*\(", s.code):
            imports += 1
            lits = [t for off, t in s.strings if m.end() - 1 <= off <= m.end() + 2]
            if not lits:
                bad.append(f"{name}:{s.line_of(m.start())}: a PyImport call whose module is not a literal")
            elif lits[0] == "softfp8" or lits[0].startswith("softfp8."):
                bad.append(f"{name}:{s.line_of(m.start())}: imports the Python module {lits[0]!r}")
    assert imports >= 3          # the check saw the real imports (numpy, ml_dtypes, ...)
    assert not bad, "C code importing softfp8's Python modules by name:\n  " + "\n  ".join(bad)


def test_pyx_reaches_fast_only_through_switches():
    pyx = (_C.PKG / "_ext.pyx").read_text()
    used = set(_re.findall(r"\b(sfp8f_\w+)", pyx))
    assert {"sfp8f_enabled", "sfp8f_set_simd"} <= used
    extra = sorted(used - PYX_FAST_ALLOWED)
    assert not extra, f"_ext.pyx reaches fast/ kernels or tables directly (not through the driver): {extra}"


def test_no_source_file_over_1200_lines():
    files = [p for p in _C.c_files().values()]
    files += [p for p in _C.PKG.glob("*.py")] + [_C.PKG / "_ext.pyx"]
    assert len(files) >= 60
    long = sorted(f"{p.relative_to(_C.PKG.parent)}: {n} lines" for p in files
                  if (n := len(p.read_text().splitlines())) > MAX_LINES)
    assert not long, f"source files over {MAX_LINES} lines: {long}"
