"""A small reader of softfp8's C sources for the structure tests (test_import_graph.py,
test_rounding_sites.py): includes, function definitions with their bodies, the calls in
them, macro bodies, and string-literal arguments.

It is not a C parser: it blanks comments, string and character literals (keeping line
numbers and lengths), then finds top-level `name(...) {` definitions by brace matching.
Every function definition in softfp8/_core and include/ has that shape; the tests check
that the reader found them (counts against a plain text search).
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import softfp8

PKG = Path(softfp8.__file__).resolve().parent
CORE = PKG / "_core"
INCLUDE = PKG.parent / "include"

KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "_Alignof", "alignof", "case",
            "do", "else", "goto", "_Static_assert", "static_assert", "__attribute__", "__typeof__", "typeof",
            "_Generic", "__builtin_expect", "__asm__", "asm", "__declspec"}


def c_files():
    """Every C source and header of the package and its public headers, relative names."""
    out = {}
    for base, pre in ((CORE, ""), (INCLUDE, "include/")):
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*")):
            if p.suffix in (".c", ".h", ".def"):
                out[pre + str(p.relative_to(base))] = p
    return out


_TOKENS = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank(text):
    """text with comments and string / char literals replaced by spaces (newlines kept);
    and the list of (offset, literal text) of the string literals."""
    strings = []

    def sub(m):
        t = m.group(0)
        if t[0] == '"':
            strings.append((m.start(), t[1:-1]))
        if t[0] in "\"'":
            return t[0] + re.sub(r"[^\n]", " ", t[1:-1]) + t[-1]
        return re.sub(r"[^\n]", " ", t)
    return _TOKENS.sub(sub, text), strings


@dataclasses.dataclass
class Func:
    name: str
    file: str
    static: bool
    start: int      # offset of the body's "{"
    end: int        # offset after its "}"
    line: int
    body: str       # blanked text of the body


@dataclasses.dataclass
class Source:
    name: str
    path: Path
    text: str             # raw
    code: str             # blanked (comments, literals)
    strings: list
    includes: list        # quoted includes as written
    funcs: list
    macros: dict          # name -> blanked body of function-like and object-like macros

    def line_of(self, offset):
        return self.text.count("\n", 0, offset) + 1


_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def _strip_preprocessor(code):
    """code with every preprocessor line (and its continuations) blanked; macro bodies."""
    lines = code.split("\n")
    macros = {}
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("#"):
            j = i
            while lines[j].rstrip().endswith("\\") and j + 1 < len(lines):
                j += 1
            block = "\n".join(lines[i:j + 1])
            m = _DEFINE.match(block)
            if m:
                # the body, preceded by blank lines so that offsets count lines as the file does
                macros[m.group(1)] = "\n" * i + " " * m.end() + block[m.end():]
            for k in range(i, j + 1):
                lines[k] = " " * len(lines[k])
            i = j + 1
        else:
            i += 1
    return "\n".join(lines), macros


_BRACE = re.compile(r"[{}]")
_HEAD = re.compile(r"\b([A-Za-z_]\w*)\s*\(([^()]|\([^()]*\))*\)\s*(__attribute__\s*\(\(.*?\)\)\s*)*$", re.S)


def _functions(name, code):
    """Top-level `name(...) {` definitions (their bodies by brace matching)."""
    funcs = []
    depth, start, last_end = 0, 0, 0
    for m in _BRACE.finditer(code):
        if m.group(0) == "{":
            if depth == 0:
                start = m.start()
            depth += 1
            continue
        depth -= 1
        if depth:
            continue
        head = code[max(last_end, code.rfind(";", last_end, start) + 1):start]
        last_end = m.end()
        h = _HEAD.search(head[-2000:])
        if h and h.group(1) not in KEYWORDS and not re.search(r"=\s*$", head):
            funcs.append(Func(h.group(1), name, bool(re.search(r"\bstatic\b", head)), start, m.end(),
                              code.count("\n", 0, start) + 1, code[start:m.end()]))
    return funcs


_CACHE: dict = {}


def read(name, path):
    if name not in _CACHE:
        text = path.read_text()
        code, strings = blank(text)
        includes = _INCLUDE.findall(text)
        code_np, macros = _strip_preprocessor(code)
        _CACHE[name] = Source(name, path, text, code_np, strings, includes, _functions(name, code_np), macros)
    return _CACHE[name]


def sources():
    return {n: read(n, p) for n, p in c_files().items()}


def calls_in(body):
    return {m.group(1) for m in _CALL.finditer(body) if m.group(1) not in KEYWORDS}


# the extension's include path (setup.py), relative to softfp8/_core
INCLUDE_DIRS = ("include/", "", "fast/", "npy/")


def resolve_include(src_name, inc, names):
    """The file an #include "inc" of src_name names: beside it, else along the include path."""
    base = src_name.rsplit("/", 1)[0] + "/" if "/" in src_name else ""
    for cand in (base + inc,) + tuple(d + inc for d in INCLUDE_DIRS):
        parts = []
        for p in cand.split("/"):
            if p == "..":
                if parts:
                    parts.pop()
            elif p and p != ".":
                parts.append(p)
        cand = "/".join(parts)
        if cand in names:
            return cand
    return None


def dependency_graph(srcs=None):
    """{file: {file it depends on: [why, ...]}} -- its includes, and every call of a
    function defined (non-static) in another file or used from a macro defined there."""
    srcs = srcs or sources()
    names = set(srcs)
    defined = {}
    for s in srcs.values():
        for f in s.funcs:
            if not f.static or s.name.endswith(".h"):
                defined.setdefault(f.name, set()).add(s.name)
    macro_home = {}
    for s in srcs.values():
        for m in s.macros:
            macro_home.setdefault(m, set()).add(s.name)
    graph = {n: {} for n in names}
    for s in srcs.values():
        for inc in s.includes:
            t = resolve_include(s.name, inc, names)
            if t and t != s.name:
                graph[s.name].setdefault(t, []).append(f'#include "{inc}"')
        local = {f.name for f in s.funcs}
        bodies = [(f.name, f.body) for f in s.funcs] + [(f"macro {m}", b) for m, b in s.macros.items()]
        for fname, body in bodies:
            for callee in calls_in(body):
                if callee in local:
                    continue
                for t in defined.get(callee, ()):
                    if t != s.name:
                        graph[s.name].setdefault(t, []).append(f"{fname} calls {callee}")
    return graph


def module_of(name):
    """A header and the source of the same name in the same folder are one module
    (x.h declares what x.c defines); every other file is a module of its own, so a
    cycle between modules is a cycle between files."""
    stem, _, ext = name.rpartition(".")
    return stem if ext in ("c", "h") else name


def module_graph(graph):
    """The file graph with each x.c / x.h pair merged into module x."""
    out = {}
    for a, deps in graph.items():
        ma = module_of(a)
        out.setdefault(ma, {})
        for b, why in deps.items():
            mb = module_of(b)
            if mb != ma:
                out[ma].setdefault(mb, []).extend(f"{a}: {w}" for w in why)
    return out


def cycles(graph, nodes=None):
    """The strongly connected components with more than one file (Tarjan)."""
    nodes = sorted(nodes or graph)
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in nodes:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10000))
    try:
        for v in nodes:
            if v not in index:
                strong(v)
    finally:
        sys.setrecursionlimit(old)
    return sorted(out)
