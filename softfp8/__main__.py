"""Command-line interface: ``python -m softfp8`` / ``softfp8``.

    softfp8 formats                          every preset and its parameters
    softfp8 info e4m3                        properties (+ every code of an 8-bit format)
    softfp8 info cfloat8_143 --bias 20       Tesla families need --bias 0..63
    softfp8 calc e4m3 mul 0x5c 0x7e --rounding toward_zero
    softfp8 demo                             train a small MLP in float32 and FP8 / FP4
                                             recipes (softfp8.demo; --quick, --seed, --steps,
                                             --png PATH / --no-png)
    softfp8 tour                             a short tour of the commands above (= demo --tour)
    softfp8 config --cflags --libs           compile and link flags for libsoftfp8
    softfp8 gen e4m3 add --rounding upward   TestFloat-style test vectors (docs/vectors.md)
    softfp8 ver e4m3 add < device.txt        check a device's results against the model

The formats and their names come from the format registry (softfp8/_registry.py via
softfp8._formats); otherwise only the public API (docs/python-api.md) is used.  Usage
errors (unknown format or operation, missing/bad bias, bad operand) print a message and
exit with status 2.
"""
from __future__ import annotations

import argparse
import math
import os
import sys

import softfp8
import softfp8.bits
from softfp8 import _formats, audit, coverage, dot_vectors, vectors
from softfp8 import demo as training_demo
from softfp8._validation import as_format

FAMILIES = tuple(_formats.FAMILIES)  # parametric: bias is a required keyword
ROUNDINGS = softfp8.bits.ROUNDING_MODES
# --rounding of gen / ver / calc also takes TestFloat's names (rnear_even, rminMag, ...)
ROUNDING_CHOICES = list(ROUNDINGS) + list(vectors.ROUNDING_ALIASES)
# calc's operations: every row of the operation table (softfp8/_core/ops.def)
OPERATIONS = softfp8.bits.OPERATIONS
ARITY = {name: op.arity for name, op in OPERATIONS.items()}
RELATIONS = {-1: "less", 0: "equal", 1: "greater", 2: "unordered"}
PROPERTIES = ("name", "bits", "signed", "exp_bits", "man_bits", "bias", "specials",
              "subnormals", "saturate", "max", "min_normal", "min_subnormal", "eps",
              "storage")


class UsageError(Exception):
    """A bad command line; reported by argparse (message, exit status 2)."""


# ---------------------------------------------------------------- formats ----

def _presets() -> dict:
    """{canonical name: (Format, [aliases])} of the non-parametric presets (registry order)."""
    out = {name: (fmt, []) for name, fmt in _formats.PRESETS.items()}
    for alias, name in _formats.ALIASES.items():
        if name in out:
            out[name][1].append(alias)
    return out


def _lookup(name: str):
    """Format (or family name) for a preset name or alias (case-insensitive)."""
    key = name.strip().lower()
    if key in FAMILIES:
        return key
    for canonical, (fmt, aliases) in _presets().items():
        if key == canonical.lower() or key in (a.lower() for a in aliases):
            return fmt
    known = ", ".join(sorted(_presets()) + list(FAMILIES))
    raise UsageError(f"unknown format {name!r} (known: {known})")


def resolve_format(name: str, bias=None, subnormals=None):
    if "(" in name:  # a full format name such as "cfloat8_143(bias=20)"
        if bias is not None or subnormals is not None:
            raise UsageError(f"{name!r} already names its parameters; drop --bias/--subnormals")
        try:
            return softfp8.lookup(name)
        except (ValueError, TypeError) as exc:
            raise UsageError(str(exc)) from None
    fmt = _lookup(name)
    if isinstance(fmt, str):  # a Tesla family
        if bias is None:
            raise UsageError(f"format {fmt} needs --bias N (an integer 0..63)")
        if not 0 <= bias <= 63:
            raise UsageError(f"--bias must be an integer 0..63 (got {bias})")
        kwargs = {"bias": bias}
        if subnormals is not None:
            kwargs["subnormals"] = subnormals
        try:
            return getattr(softfp8, fmt)(**kwargs)
        except (ValueError, TypeError) as exc:
            raise UsageError(str(exc)) from None
    if bias is not None:
        raise UsageError(f"--bias applies only to {', '.join(FAMILIES)}; "
                         f"{fmt.name} has the fixed bias {fmt.bias}")
    if subnormals is not None:
        raise UsageError(f"--subnormals applies only to {', '.join(FAMILIES)}")
    return fmt


# ------------------------------------------------------------- formatting ----

def fmt_code(fmt, code: int) -> str:
    fmt = as_format(fmt)
    return f"0x{code:0{(fmt.bits + 3) // 4}x}"


def fmt_value(v: float) -> str:
    return repr(float(v))  # shortest round-tripping form: exact enough for FP8/16


def fmt_pow2(v: float, bias_param: bool = False) -> str:
    """Exact binary form, '1.75*2^8' or '2^-9'; with bias_param, v is the bias-0 value
    of a Tesla family and the exponent is written as '(k-bias)'."""
    v = float(v)
    if v == 0 or not math.isfinite(v):
        return fmt_value(v)
    m, e = math.frexp(v)  # v = m * 2^e, 0.5 <= m < 1
    m, e = m * 2, e - 1
    exp = (f"({e}-bias)" if bias_param else str(e))
    return f"2^{exp}" if m == 1 else f"{m!r}*2^{exp}"


def code_class(fmt, code: int) -> str:
    """zero / subnormal / normal / inf / qnan / snan / nan, signed by the value."""
    fmt = as_format(fmt)
    v = fmt.decode(code)
    m_mask = (1 << fmt.man_bits) - 1
    e = (code >> fmt.man_bits) & ((1 << fmt.exp_bits) - 1)
    m = code & m_mask
    if math.isnan(v):
        if fmt.specials == "ieee" and fmt.man_bits > 0:
            return "qnan" if m >> (fmt.man_bits - 1) else "snan"
        return "nan"
    sign = "-" if math.copysign(1.0, v) < 0 else "+"
    if math.isinf(v):
        return sign + "inf"
    if e == 0 and fmt.subnormals != "nozero":
        if m == 0:
            return sign + "zero"
        return sign + ("subnormal(flushed)" if fmt.subnormals == "flush" else "subnormal")
    return sign + "normal"


def flag_names(flags: int) -> str:
    names = [f.name for f in sorted(softfp8.Flags, key=int) if flags & int(f)]
    return "|".join(names) if names else "none"


def _table(rows, header) -> str:
    rows = [header] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# --------------------------------------------------------------- commands ----

def cmd_formats(args, out=print) -> int:
    header = ["name", "bits", "signed", "exp_bits", "man_bits", "bias", "specials",
              "subnormals", "saturate", "max", "min_normal", "min_subnormal"]
    rows = []
    for name, (f, aliases) in _presets().items():
        label = f"{name} ({', '.join(aliases)})" if aliases else name
        rows.append([label, f.bits, f.signed, f.exp_bits, f.man_bits, f.bias, f.specials,
                     f.subnormals, f.saturate, fmt_value(f.max), fmt_pow2(f.min_normal),
                     fmt_pow2(f.min_subnormal)])
    for fam in FAMILIES:
        f = getattr(softfp8, fam)(bias=0)  # the values scale with 2^-bias
        rows.append([f"{fam}(bias)", f.bits, f.signed, f.exp_bits, f.man_bits,
                     "0..63 param", f.specials, f.subnormals, f.saturate,
                     *(fmt_pow2(v, bias_param=True)
                       for v in (f.max, f.min_normal, f.min_subnormal))])
    out(_table(rows, header))
    out("\nTesla families: softfp8 info cfloat8_143 --bias 20 (subnormals 'tesla' by "
        "default, --subnormals ieee allowed).")
    return 0


def cmd_info(args, out=print, codes=None) -> int:
    fmt = resolve_format(args.format, args.bias, args.subnormals)
    width = max(len(p) for p in PROPERTIES)
    for prop in PROPERTIES:
        val = getattr(fmt, prop)
        if isinstance(val, float):
            exact = fmt_pow2(val)
            val = fmt_value(val) + ("" if exact == fmt_value(val) else f"  (= {exact})")
        out(f"{prop.ljust(width)}  {val}")
    if fmt.subnormals == "tesla" and fmt.man_bits > 0:
        largest_sub = fmt.decode((1 << fmt.man_bits) - 1)
        out(f"{'note'.ljust(width)}  tesla subnormals: gap between the largest "
            f"subnormal {fmt_value(largest_sub)} and the smallest normal "
            f"{fmt_value(fmt.min_normal)}")
    if fmt.bits == 8:
        out("")
        out("code  value  class")
        for code in (range(256) if codes is None else codes):
            out(f"{fmt_code(fmt, code)}  {fmt_value(fmt.decode(code))}  "
                f"{code_class(fmt, code)}")
    return 0


def parse_code(fmt, text: str) -> int:
    fmt = as_format(fmt)
    t = text.strip().lower()
    try:
        code = int(t, 16) if t.startswith("0x") else int(t, 10)
    except ValueError:
        raise UsageError(f"bad operand {text!r}: expected a code in hex (0x..) "
                         f"or decimal") from None
    if not 0 <= code < (1 << fmt.bits):
        raise UsageError(f"operand {text!r} is not a code of {fmt.name} "
                         f"(0..{fmt_code(fmt, (1 << fmt.bits) - 1)})")
    return code


def parse_int(text: str) -> int:
    """an integer operand (ldexp's exponent), decimal or 0x hex, any sign"""
    t = text.strip().lower()
    try:
        return int(t, 0)
    except ValueError:
        raise UsageError(f"bad integer operand {text!r}") from None


def cmd_calc(args, out=print) -> int:
    fmt = resolve_format(args.format, args.bias, args.subnormals)
    need = ARITY[args.op]
    if len(args.operands) != need:
        raise UsageError(f"{args.op} takes {need} operand{'s' if need > 1 else ''}, "
                         f"got {len(args.operands)}")
    op = OPERATIONS[args.op]
    if op.kind == "binary_i64":  # ldexp: the second operand is an integer exponent
        codes = [parse_code(fmt, args.operands[0]), parse_int(args.operands[1])]
    else:
        codes = [parse_code(fmt, t) for t in args.operands]
    opts = {}
    if op.rounds:
        opts = {"rounding": vectors.rounding_name(args.rounding), "saturate": args.saturate,
                "tininess": args.tininess}
        if args.seed is not None:
            opts["seed"] = args.seed
    if not op.noflags:
        opts["isa"] = args.isa
    if args.explain:
        return _calc_explain(args, fmt, op, codes, opts, out)
    try:
        res = getattr(softfp8.bits, args.op)(fmt, *codes, **opts)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    result, flags = (res, 0) if op.noflags else res
    flags = int(flags)
    if op.kind in ("compare", "predicate"):
        text = str(bool(result))
    elif op.kind == "relation":
        text = RELATIONS[int(result)]
    elif op.kind == "unary_i64":  # convertToInteger, class: an integer
        text = str(int(result))
    elif op.kind == "unary_i32":  # frexp: mantissa code, int exponent
        text = f"{fmt_code(fmt, int(result[0]))}  {fmt_value(fmt.decode(int(result[0])))}  exp {int(result[1])}"
    elif op.nout == 2:  # divmod, modf: two codes
        text = "  ".join(f"{fmt_code(fmt, int(r))}  {fmt_value(fmt.decode(int(r)))}" for r in result)
    else:
        text = f"{fmt_code(fmt, int(result))}  {fmt_value(fmt.decode(int(result)))}"
    out(f"{text}  flags: {flag_names(flags)}")
    return 0


def _calc_explain(args, fmt, op, codes, opts, out):
    """calc --explain: the result and the core's rounding record (softfp8._explain)."""
    if not op.rounds or op.kind not in ("binary", "unary", "ternary"):
        raise UsageError(f"--explain applies to operations that round a code result; "
                         f"{op.name} does not")
    try:
        _, _, why = getattr(softfp8.bits, op.name)(fmt, *codes, explain=True, **opts)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    out(str(why))
    return 0


def cmd_demo(args, out=print) -> int:
    """Train the demo MLP in every recipe and print the table (softfp8/demo.py)."""
    if args.tour:
        return cmd_tour(args, out=out)
    if args.steps is not None and args.steps < 1:
        raise UsageError(f"--steps must be a positive integer (got {args.steps})")
    if not 0 <= args.seed < 2**32:
        raise UsageError(f"--seed must be an integer 0..2**32-1 (got {args.seed})")
    png = None if args.no_png else (args.png or training_demo.DEFAULT_PNG)
    return training_demo.main(quick=args.quick, seed=args.seed, steps=args.steps, png=png,
                              out=out)


def cmd_tour(args, out=print) -> int:
    def show(argv, **kw):
        out(f"$ softfp8 {' '.join(argv)}")
        ns = build_parser().parse_args(argv)
        ns.func(ns, out=out, **kw)
        out("")

    out(f"softfp8 {getattr(softfp8, '__version__', '')}: bit-exact small-float "
        f"arithmetic\n")
    show(["formats"])
    out("(excerpt: a few of the 256 codes)")
    show(["info", "e4m3"], codes=[0x00, 0x01, 0x07, 0x08, 0x38, 0x7e, 0x7f, 0x80, 0xfe])
    for argv in (["calc", "e4m3", "mul", "0x5c", "0x7e"],
                 ["calc", "e4m3", "mul", "0x5c", "0x7e", "--rounding", "toward_zero"],
                 ["calc", "e4m3", "mul", "0x5c", "0x7e", "--saturate"],
                 ["calc", "e4m3", "div", "0x38", "0x00"],
                 ["calc", "e5m2", "add", "0x3c", "0x01"],
                 ["calc", "float16", "sqrt", "0x4000"],
                 ["calc", "cfloat8_143", "add", "0x7f", "0x7f", "--bias", "20"],
                 ["calc", "cfloat8_143", "fma", "0x40", "0x40", "0x01", "--bias", "20"]):
        show(argv)
    return 0


def _dpi_dir() -> str:
    """softfp8/dpi/ of an installed package, dpi/ of a source tree (editable install)."""
    here = os.path.dirname(os.path.abspath(softfp8.__file__))
    installed = os.path.join(here, "dpi")
    if os.path.isfile(os.path.join(installed, "softfp8_pkg.sv")):
        return installed
    return os.path.join(os.path.dirname(here), "dpi")


def cmd_config(args, out=print) -> int:
    """Flags for compiling and linking against libsoftfp8, as pkg-config prints them."""
    libdir = softfp8.get_library_dir()
    pc = os.path.join(libdir, "pkgconfig", "softfp8.pc")
    if not os.path.isfile(pc):
        raise UsageError(f"libsoftfp8 is not built ({pc} is missing); reinstall softfp8")
    private = ""
    with open(pc) as fh:
        for line in fh:
            if line.startswith("Libs.private:"):
                private = line.split(":", 1)[1].strip()
    words = []
    if args.cflags:
        words.append(f"-I{softfp8.get_include()}")
    if args.libs:
        if args.static:
            words += [os.path.join(libdir, "libsoftfp8.a")] + private.split()
        else:
            words += [f"-L{libdir}", f"-Wl,-rpath,{libdir}"] + [f"-l{n}" for n in
                                                               softfp8.get_libraries()]
    for flag, value in (("includedir", softfp8.get_include()), ("libdir", libdir),
                        ("pkgconfigdir", os.path.dirname(pc)),
                        ("dpidir", _dpi_dir())):
        if getattr(args, flag):
            words.append(value)
    if not words:
        raise UsageError("give at least one of --cflags, --libs, --includedir, --libdir, "
                         "--pkgconfigdir, --dpidir")
    out(" ".join(words))
    return 0


def _vector_format(args):
    if args.format.startswith("format("):
        try:
            return softfp8.lookup(args.format)
        except (ValueError, TypeError) as exc:
            raise UsageError(str(exc)) from None
    return resolve_format(args.format, args.bias, args.subnormals)


def _vector_env(args):
    return {"rounding": vectors.rounding_name(args.rounding), "saturate": args.saturate,
            "tininess": args.tininess, "sr_bits": args.sr_bits, "isa": args.isa,
            "testfloat": args.testfloat}


def _read_input(path, fn):
    """fn(binary stream) of a file, or of stdin for None / "-"."""
    if path in (None, "-"):
        return fn(sys.stdin.buffer)
    with open(path, "rb") as fh:
        return fn(fh)


def _coverage_of(args, fmt, stream):
    env = _vector_env(args)
    return coverage.measure(stream, fmt, args.op, rounding=env["rounding"], saturate=args.saturate,
                            tininess=args.tininess, sr_bits=args.sr_bits, isa=args.isa)


def _guarded(fn, name, err):
    """(fn(), None), or (None, 1) after reporting a malformed vector file on err; bad
    options and unreadable files are usage errors."""
    try:
        return fn(), None
    except vectors.VectorError as exc:
        err(f"softfp8 {name}: {exc}")
        return None, 1
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(_os_error(exc)) from None


def _write_sv(args, fmt, out):
    text = coverage.covergroup(fmt, args.op, saturate=args.saturate, tininess=args.tininess,
                               isa=args.isa)
    if args.sv == "-":
        out(text)
    else:
        with open(args.sv, "w") as fh:
            fh.write(text + "\n")


def cmd_cov(args, out=print, err=None) -> int:
    """Coverage of a vector file: the closure table, or a SystemVerilog covergroup."""
    err = err or _stderr
    if not 0.0 <= args.fail_under <= 100.0:     # also refuses nan
        raise UsageError(f"--fail-under {args.fail_under:g}: a percentage from 0 to 100")
    if args.op in ("convert", "dot"):
        raise UsageError(f"cov measures operations of the table; {args.op} coverage is not "
                         "implemented (docs/golden-model.md)")
    fmt = _vector_format(args)
    if args.sv is not None:
        _guarded(lambda: _write_sv(args, fmt, out), "cov", err)
        if args.input is None:
            return 0
    cov, rc = _guarded(lambda: _read_input(args.input, lambda fh: _coverage_of(args, fmt, fh)),
                       "cov", err)
    if rc:
        return rc
    if args.json:
        import json
        out(json.dumps(cov.to_dict()))
    else:
        out(cov.table(show_unreachable=not args.no_unreachable))
    if cov.cases.sum() == 0:
        err(f"{fmt.name} {args.op}: no test lines read")
        return 1
    return 0 if (not args.fail_under or cov.percent() >= args.fail_under) else 1


def _gen_cover(args, fmt, opts):
    """gen --cover FILE: cases for the reachable bins FILE leaves empty."""
    with open(args.cover, "rb") as fh:
        cov = _coverage_of(args, fmt, fh)
    lines, left = coverage.cover_holes(cov, rounding=opts["rounding"], seed=args.seed,
                                       testfloat=args.testfloat)
    if args.output in (None, "-"):
        sys.stdout.buffer.write(lines)
        sys.stdout.buffer.flush()
    else:
        with open(args.output, "wb") as fh:
            fh.write(lines)
    for mode, name in left:
        _stderr(f"softfp8 gen --cover: no case found for {mode} {name}")
    return 0


def _conversion_ends(args):
    """(src, dst) endpoints of `gen/ver FMT convert --from SRC | --to DST`."""
    if (args.src is None) == (args.dst is None):
        raise UsageError("convert needs exactly one of --from SRC (into FMT) or --to DST (from FMT)")
    fmt = args.format if args.bias is None and args.subnormals is None else _vector_format(args)
    try:
        ends = (args.src, fmt) if args.src is not None else (fmt, args.dst)
        return tuple(vectors.endpoint(e) for e in ends)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None


def _gen_conversion(args):
    src, dst = _conversion_ends(args)
    opts = dict(_vector_env(args), level=args.level, count=args.count, seed=args.seed,
                random_only=args.random_only)
    try:
        chunks = vectors.generate_conversion(src, dst, **opts)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    return _write_chunks(args, chunks)


def _dot_setting(args):
    """(positional args, keyword args) of dot_vectors.generate_dot / verify_dot from `gen/ver FMT dot`."""
    if args.src is not None or args.dst is not None:
        raise UsageError("--from / --to belong to convert; dot takes --b, -k, --out, --accumulation")
    if args.isa != "default":
        raise UsageError("dot products follow softfp8's convention; --isa applies to operations "
                         "and conversions")
    a = args.format if args.bias is None and args.subnormals is None else _vector_format(args)
    kw = dict(out=args.out, accumulation=args.accumulation, rounding=vectors.rounding_name(args.rounding),
              saturate=args.saturate, tininess=args.tininess, testfloat=args.testfloat)
    try:
        dot_vectors.dot_spec(a, args.b, args.k, out=args.out, accumulation=args.accumulation)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    return (a, args.b, args.k), kw


def _write_chunks(args, chunks):
    """Write generated byte chunks to --output or stdout (usage errors for bad options)."""
    try:
        if args.output in (None, "-"):
            for c in chunks:
                sys.stdout.buffer.write(c)
            sys.stdout.buffer.flush()
        else:
            with open(args.output, "wb") as fh:
                for c in chunks:
                    fh.write(c)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(_os_error(exc)) from None
    return 0


def _gen_dot(args):
    pos, kw = _dot_setting(args)
    try:
        chunks = dot_vectors.generate_dot(*pos, count=args.count, seed=args.seed, **kw)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    return _write_chunks(args, chunks)


def cmd_gen(args, out=None) -> int:
    if args.op == "convert":
        return _gen_conversion(args)
    if args.op == "dot":
        return _gen_dot(args)
    fmt = _vector_format(args)
    opts = dict(_vector_env(args), level=args.level, count=args.count, seed=args.seed,
                random_only=args.random_only, max_lines=args.max_lines)
    try:
        if args.cover:
            return _gen_cover(args, fmt, opts)
        vectors.case_set(fmt, args.op, args.level, args.count, args.random_only)
        if args.output in (None, "-"):
            vectors.write(sys.stdout.buffer, fmt, args.op, **opts)
            sys.stdout.buffer.flush()
        else:
            with open(args.output, "wb") as fh:
                vectors.write(fh, fmt, args.op, **opts)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise UsageError(_os_error(exc)) from None
    return 0


def _os_error(exc):
    """A file that cannot be opened, as a usage error naming it."""
    return f"cannot open {exc.filename!r}: {exc.strerror}" if exc.filename else str(exc)


def _stderr(text):
    print(text, file=sys.stderr)


def _ver_opts(args):
    try:
        ignore = vectors.parse_flags(args.ignore_flags or 0)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return dict(_vector_env(args), nan=args.nan, ignore_flags=ignore, max_report=args.errors)


def _ver_conversion(args, out, err):
    src, dst = _conversion_ends(args)
    opts = _ver_opts(args)
    report, rc = _guarded(lambda: _read_input(args.input, lambda fh: vectors.verify_conversion(
        fh, src, dst, **opts)), "ver", err)
    if rc:
        return rc
    w = dst.width
    for m in report.first:
        err(f"line {m.line}: convert {src.name} {m.operands[0]:0{src.width}X} -> {dst.name}: expected "
            f"{m.expected:0{w}X} flags {m.expected_flags:02X} ({vectors.flag_names(m.expected_flags)}), "
            f"got {m.actual:0{w}X} flags {m.actual_flags:02X}")
    return _ver_summary(report, f"{src.name} -> {dst.name}", out, err)


def _ver_summary(report, what, out, err):
    if report.mismatches > len(report.first):
        err(f"... {report.mismatches - len(report.first)} more")
    if report.lines == 0:
        err(f"{what}: no test lines read")
        return 1
    out(f"{what}: {report.lines} lines, {report.mismatches} mismatches")
    return 0 if report.ok else 1


def _ver_dot(args, out, err):
    pos, kw = _dot_setting(args)
    opts = _ver_opts(args)
    kw.update(nan=opts["nan"], ignore_flags=opts["ignore_flags"], max_report=opts["max_report"])
    spec = dot_vectors.dot_spec(*pos, out=kw["out"], accumulation=kw["accumulation"])
    report, rc = _guarded(lambda: _read_input(args.input, lambda fh: dot_vectors.verify_dot(fh, *pos, **kw)),
                          "ver", err)
    if rc:
        return rc
    for m in report.first:
        err(dot_vectors.describe_dot(spec, m))
    names = spec.a if spec.mx else spec.a.name, spec.b if spec.mx else spec.b.name
    return _ver_summary(report, f"dot {names[0]} x {names[1]} k={spec.k} {spec.model_name} -> {spec.out}",
                        out, err)


def cmd_ver(args, out=print, err=_stderr) -> int:
    """Verify; mismatches and errors go to stderr (err), the summary line to stdout."""
    if args.op == "convert":
        return _ver_conversion(args, out, err)
    if args.op == "dot":
        return _ver_dot(args, out, err)
    fmt = _vector_format(args)
    opts = _ver_opts(args)
    report, rc = _guarded(lambda: _read_input(args.input, lambda fh: vectors.verify(
        fh, fmt, args.op, **opts)), "ver", err)
    if rc:
        return rc
    for m in report.first:
        err(vectors.describe(fmt, args.op, m, args.rounding))
    return _ver_summary(report, f"{fmt.name} {args.op}", out, err)


def cmd_audit(args, out=print) -> int:
    """Audit another implementation (softfp8/audit.py)."""
    fmt = resolve_format(args.format, args.bias, args.subnormals)
    try:
        return audit.cli(args, fmt, out)
    except (ValueError, TypeError, ImportError, AttributeError, KeyError) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(_os_error(exc)) from None


# ----------------------------------------------------------------- parser ----

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="softfp8",
        description="Bit-exact FP8 / small-float arithmetic (see docs/ and SPEC).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def fmt_opts(sp):
        sp.add_argument("format", help="preset name, e.g. e4m3, float16, cfloat8_143")
        sp.add_argument("--bias", type=int, metavar="N",
                        help="bias 0..63 (required for cfloat8_143, cfloat8_152, shp)")
        sp.add_argument("--subnormals", choices=("tesla", "ieee"),
                        help="subnormal convention of a Tesla family (default tesla)")

    sp = sub.add_parser("formats", help="list every preset with its parameters")
    sp.set_defaults(func=cmd_formats)

    sp = sub.add_parser("info", help="properties of a format (+ all codes if 8-bit)")
    fmt_opts(sp)
    sp.set_defaults(func=cmd_info)

    sp = sub.add_parser("calc", help="one operation on codes: result, value, flags")
    fmt_opts(sp)
    sp.add_argument("op", choices=sorted(ARITY))
    sp.add_argument("operands", nargs="*", metavar="CODE",
                    help="operand codes, hex (0x5c) or decimal (92); ldexp's second "
                         "operand is an integer exponent (e.g. -3)")
    sp.add_argument("--rounding", choices=ROUNDING_CHOICES, default="nearest_even",
                    metavar="MODE", help="%s (or TestFloat's rnear_even, rminMag, rmin, rmax, "
                    "rnear_maxMag, rodd)" % ", ".join(ROUNDINGS))
    sp.add_argument("--isa", default="default", metavar="ISA",
                    help="ISA convention for NaN results, FTZ, DAZ: default, x86, arm, arm_dn, "
                         "riscv, with +ftz / +daz (docs/golden-model.md)")
    sp.add_argument("--explain", action="store_true",
                    help="the exact value before rounding and the rounding decision")
    sat = sp.add_mutually_exclusive_group()
    sat.add_argument("--saturate", dest="saturate", action="store_true", default=None,
                     help="deliver +-max instead of inf on overflow")
    sat.add_argument("--no-saturate", dest="saturate", action="store_false",
                     help="IEEE overflow rules (the default for ieee/fn/fnuz formats)")
    sp.add_argument("--tininess", choices=("after", "before"), default="after")
    sp.add_argument("--seed", type=int, help="seed for --rounding stochastic")
    sp.set_defaults(func=cmd_calc)

    sp = sub.add_parser("demo", help="train a small MLP in float32 and in FP8 / MX / "
                        "stochastic-rounding recipes; print a table (and a PNG)",
                        description="Train a 2-64-64-3 MLP on generated spirals in float32 "
                        "and in low-precision recipes simulated by softfp8; print final "
                        "loss, accuracy, gap vs float32 and time per recipe "
                        "(docs/training.md, 'The demo').")
    sp.add_argument("--quick", action="store_true",
                    help="an easier, smaller data set and %d steps (seconds; for tests)"
                    % training_demo.QUICK_STEPS)
    sp.add_argument("--seed", type=int, default=0, help="seed of data, weights, batches "
                    "and stochastic rounding (default 0)")
    sp.add_argument("--steps", type=int, metavar="N",
                    help="training steps (default %d, %d with --quick)"
                    % (training_demo.FULL_STEPS, training_demo.QUICK_STEPS))
    png = sp.add_mutually_exclusive_group()
    png.add_argument("--png", metavar="PATH", help="write the loss curves and error "
                     "histograms there (needs matplotlib; default ./%s)"
                     % training_demo.DEFAULT_PNG)
    png.add_argument("--no-png", action="store_true", help="print the table only")
    sp.add_argument("--tour", action="store_true",
                    help="instead: the short tour of the commands (softfp8 tour)")
    sp.set_defaults(func=cmd_demo)

    sp = sub.add_parser("tour", help="a short tour: formats, info, calc")
    sp.set_defaults(func=cmd_tour)

    sp = sub.add_parser("config", help="compile/link flags for libsoftfp8 (C, C++, DPI-C)")
    for flag, text in (("cflags", "the include flag"), ("libs", "the link flags"),
                       ("includedir", "the header folder"), ("libdir", "the library folder"),
                       ("pkgconfigdir", "the folder of softfp8.pc (for PKG_CONFIG_PATH)"),
                       ("dpidir", "the SystemVerilog DPI-C files")):
        sp.add_argument("--" + flag, action="store_true", help=text)
    sp.add_argument("--static", action="store_true", help="with --libs: link libsoftfp8.a")
    sp.set_defaults(func=cmd_config)

    def vector_opts(sp):
        sp.add_argument("format", help="preset, 'cfloat8_143(bias=20)' or 'format(...)'")
        sp.add_argument("op", choices=list(vectors.VECTOR_OPERATIONS) + ["convert", "dot"], metavar="OP",
                        help="an operation of the op table with code operands and one result "
                             "(softfp8.vectors.VECTOR_OPERATIONS), convert (with --from / --to), or dot "
                             "(FORMAT x --b FORMAT, K products plus an addend; FORMAT may be an MX kind)")
        sp.add_argument("--from", dest="src", metavar="SRC",
                        help="convert: the source (binary64, binary32, binary16, bfloat16, a "
                             "format, int8 ... int64, uint8 ... uint64) converted into FORMAT")
        sp.add_argument("--to", dest="dst", metavar="DST",
                        help="convert: the destination (a format, binary32, binary64, int8 ... "
                             "uint64) FORMAT is converted into")
        sp.add_argument("--b", dest="b", metavar="FMT", help="dot: the format of B (default FORMAT)")
        sp.add_argument("-k", dest="k", type=int, metavar="K",
                        help="dot: products per line (default 16; MX: one block)")
        sp.add_argument("--out", default="float32", metavar="FMT",
                        help="dot: the format of the addend and the result (default float32)")
        sp.add_argument("--accumulation", default="exact", metavar="MODEL",
                        help="dot: exact, float32, profile:NAME, blockfma:KEY=VALUE,... or "
                             "KEY=VALUE,... (softfp8.Accumulation's parameters)")
        sp.add_argument("--bias", type=int, metavar="N", help="bias of a Tesla family")
        sp.add_argument("--subnormals", choices=("tesla", "ieee"),
                        help="subnormal convention of a Tesla family")
        sp.add_argument("--rounding", choices=ROUNDING_CHOICES, default="nearest_even",
                        metavar="MODE", help="%s, or TestFloat's names (rnear_even, rminMag, "
                        "rmin, rmax, rnear_maxMag, rodd)" % ", ".join(ROUNDINGS))
        sp.add_argument("--isa", default="default", metavar="ISA",
                        help="ISA convention: default, x86, arm, arm_dn, riscv (+ftz, +daz)")
        sp.add_argument("--testfloat", action="store_true",
                        help="TestFloat's flag byte (no denormal bit); ver: NaNs by class "
                             "unless --nan bits, as testfloat_ver")
        sat = sp.add_mutually_exclusive_group()
        sat.add_argument("--saturate", dest="saturate", action="store_true", default=None)
        sat.add_argument("--no-saturate", dest="saturate", action="store_false")
        sp.add_argument("--tininess", choices=("after", "before"), default="after")
        sp.add_argument("--sr-bits", type=int, default=32, metavar="N",
                        help="stochastic rounding: random bits used (1..32; default 32)")

    sp = sub.add_parser("gen", help="TestFloat-style test vectors (docs/vectors.md)")
    vector_opts(sp)
    sp.add_argument("--level", type=int, choices=(1, 2), default=1,
                    help="special-value grid of 16-bit formats (default 1)")
    sp.add_argument("-n", "--count", type=int, default=10000,
                    help="seeded random cases after the grid of 16-bit formats")
    sp.add_argument("--random-only", action="store_true",
                    help="only the --count random cases (any format; no exhaustive set or grid)")
    sp.add_argument("--seed", type=int, default=1, help="seed of every random choice")
    sp.add_argument("--max-lines", type=int, metavar="N", help="stop after N lines")
    sp.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default stdout)")
    sp.add_argument("--cover", metavar="FILE",
                    help="instead: cases for the reachable coverage bins FILE leaves empty "
                         "(softfp8 cov)")
    sp.set_defaults(func=cmd_gen)

    sp = sub.add_parser("cov", help="functional coverage of a vector file: closure table, "
                                    "SystemVerilog covergroup (docs/golden-model.md)")
    vector_opts(sp)
    sp.add_argument("input", nargs="?", metavar="FILE", help="vector file (default stdin)")
    sp.add_argument("--sv", metavar="OUT", help="write the SystemVerilog covergroup of the bins "
                    "to OUT ('-': stdout); with no FILE, only that")
    sp.add_argument("--json", action="store_true", help="the bin counts as JSON")
    sp.add_argument("--no-unreachable", action="store_true",
                    help="leave the list of derived unreachable bins out of the table")
    sp.add_argument("--fail-under", type=float, default=0.0, metavar="PCT",
                    help="exit 1 when the closure is below PCT percent")
    sp.set_defaults(func=cmd_cov)

    sp = sub.add_parser("ver", help="verify a device's results (same line format as gen)")
    vector_opts(sp)
    sp.add_argument("input", nargs="?", metavar="FILE", help="vector file (default stdin)")
    sp.add_argument("--nan", choices=("bits", "class"), default=None,
                    help="compare NaN results bit for bit (default; with --testfloat: class) "
                         "or by class")
    sp.add_argument("--ignore-flags", metavar="FLAGS",
                    help="flags left out of the comparison: names (inexact,denormal) or hex")
    sp.add_argument("--errors", type=int, default=20, metavar="N",
                    help="mismatches to print (default 20)")
    sp.set_defaults(func=cmd_ver)

    sp = sub.add_parser("audit", help="measure another implementation against correct rounding: "
                                      "correct / faithful counts, max ulp error, P3109 kappa")
    fmt_opts(sp)
    sp.add_argument("op", help="operation (a softfp8.bits name) or convert")
    sp.add_argument("input", nargs="?", metavar="FILE", help="vector file in ver's format (default stdin)")
    sp.add_argument("--callable", metavar="MODULE:FUNC", help="run this function instead (numpy:exp)")
    sp.add_argument("--dtype", metavar="MODULE:TYPE", help="its array type (ml_dtypes:bfloat16)")
    sp.add_argument("--from", dest="src", choices=("float32", "float64"), default="float32",
                    help="convert: the source floats handed to the callable (default float32)")
    sp.add_argument("--rounding", default="nearest_even", choices=softfp8.bits.ROUNDING_MODES[:-1],
                    help="the rounding mode the results should have (default nearest_even)")
    sp.set_defaults(func=cmd_audit)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # `softfp8 ver FMT OP --rounding upward FILE`: argparse fills the optional FILE
    # before it sees the options; take a single trailing operand as FILE
    if (extra and args.command in ("ver", "cov") and args.input is None and len(extra) == 1
            and not extra[0].startswith("-")):
        args.input, extra = extra[0], []
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args)
    except UsageError as exc:
        parser.exit(2, f"{parser.prog} {args.command}: error: {exc}\n")
    except BrokenPipeError:  # e.g. `softfp8 info e4m3 | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
