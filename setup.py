"""Build script: one Cython extension that compiles the C core in, and libsoftfp8
(shared and static) built from the same core sources (see docs/architecture.md)."""
import importlib.util
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# the fast paths: tables built from the core, SIMD kernels, derived roundings
FAST = ["softfp8/_core/fast/" + f for f in (
    "switches.c", "cache.c", "families.c", "round64.c", "sr_common.c",
    # the families (families.def): one file each (sr_table8.c: three rows)
    "binary8.c", "unary.c", "convert.c", "sum8.c", "order16.c", "fma8.c", "from_float8.c", "arith16.c",
    "cast16.c", "sr_table8.c", "sr_arith16.c", "sr_fma.c", "sr_wide.c", "sr_from_float8.c", "sr_cast16.c",
    "blockq.c")]
# the matrix engine: one entry (mm_gemm.c) for every matrix product, its generic kernels and paths
MM = ["softfp8/_core/mm/" + name + ".c" for name in
      ("mm_gemm", "mm_paths", "mm_value", "mm_ref", "mm_model", "mm_narrow", "mm_intdot", "mm_blas", "mm_simd",
       "mm_units", "mm_units_fp", "mm_units_fc", "mm_units_late", "mm_units_ldec", "mm_udecode", "mm_orders")]
CORE = ["softfp8/_core/core.c", "softfp8/_core/ops.c", "softfp8/_core/driver.c",
        "softfp8/_core/accum.c", "softfp8/_core/bfma.c", "softfp8/_core/bfma_params.c", "softfp8/_core/elem.c",
        "softfp8/_core/elem_trig.c", "softfp8/_core/elem_explog.c", "softfp8/_core/core_isa.c",
        "softfp8/_core/core_explain.c", "softfp8/_core/core_api.c",
        "softfp8/_core/core_exact.c", "softfp8/_core/core_ieee.c", "softfp8/_core/elem_ieee.c",
        "softfp8/_core/elem_pi.c", "softfp8/_core/core_reduce.c", "softfp8/_core/quantize.c",
        "softfp8/_core/core_p3109.c", "softfp8/_core/core_p3109_block.c"] + MM + FAST
# libraries the core links (the extension and libsoftfp8 both link these): libm, and
# libquadmath for the elementary functions' binary128 stage
LIBS = ["quadmath", "m"]
# the NumPy glue, one file per concern (softfp8/_core/npy/glue.h is its private header)
NPY_GLUE = ["softfp8/_core/npy/" + name + ".c" for name in
            ("api", "module", "context", "family", "dtype", "longdouble", "scalar", "casts", "promotion",
             "pyscalar", "loops", "matmul", "dot", "order")]
# the XLA FFI handlers of softfp8.jax (plain C against softfp8's own declarations of
# XLA's C ABI, softfp8/_core/xla_ffi.h: no jax at build time); the extension only
XLA_FFI = ["softfp8/_core/xla_ffi.c"]


def write_sv_package():
    """Regenerate dpi/softfp8_pkg.sv from the operation table (ops.def) when it differs,
    so that the SystemVerilog package always has one function per operation."""
    spec = importlib.util.spec_from_file_location("_svgen", os.path.join(HERE, "softfp8", "_svgen.py"))
    svgen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(svgen)
    with open(os.path.join(HERE, "softfp8", "_core", "ops.def")) as fh:
        text = svgen.render(svgen.ops_def_rows(fh.read()))
    path = os.path.join(HERE, "dpi", "softfp8_pkg.sv")
    old = None
    if os.path.exists(path):
        with open(path) as fh:
            old = fh.read()
    if old != text:
        with open(path, "w") as fh:
            fh.write(text)


class BuildPyWithHeaders(build_py):
    """Ship include/softfp8/*.h inside the package (softfp8/include/softfp8/) and the
    SystemVerilog DPI-C files of dpi/ (softfp8/dpi/)."""

    def run(self):
        super().run()
        write_sv_package()
        for src, dst, exts in ((("include", "softfp8"), ("include", "softfp8"), (".h",)),
                               (("dpi",), ("dpi",), (".c", ".sv", ".md"))):
            src = os.path.join(HERE, *src)
            dst = os.path.join(self.build_lib, "softfp8", *dst)
            os.makedirs(dst, exist_ok=True)
            for fn in os.listdir(src):
                if fn.endswith(exts):
                    shutil.copy2(os.path.join(src, fn), os.path.join(dst, fn))


# libsoftfp8: only the public sfp8_ symbols are global (the rest of the core is internal)
LIB_EXPORTS = "sfp8_*"


def _jobs():
    """Compiler processes at once: SOFTFP8_BUILD_JOBS, else the CPUs this process may use."""
    env = os.environ.get("SOFTFP8_BUILD_JOBS", "")
    if env:
        if not env.isdigit() or int(env) < 1:
            raise SystemExit(f"SOFTFP8_BUILD_JOBS={env!r}: a positive whole number of jobs")
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


def parallel_compile(compiler, jobs):
    """compiler.compile with its sources compiled `jobs` at a time (the same commands and
    objects as the serial loop of distutils' CCompiler.compile, in threads: each waits on
    its compiler process)."""
    def compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0, extra_preargs=None,
                extra_postargs=None, depends=None):
        macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs)
        cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)

        def one(obj):
            if obj in build:
                src, ext = build[obj]
                compiler._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, objects))
        return objects
    return compile


class BuildExtWithLibrary(build_ext):
    """Build the extension, then libsoftfp8.so and libsoftfp8.a from the core sources
    (CORE: the same list the extension compiles, so a new core file joins both) into
    softfp8/lib/ beside the extension (in place for `pip install -e .`, in the wheel
    otherwise), with the pkg-config file softfp8/lib/pkgconfig/softfp8.pc."""

    def build_extensions(self):
        jobs = _jobs()
        if jobs > 1 and hasattr(self.compiler, "_setup_compile") and hasattr(self.compiler, "_compile"):
            self.compiler.compile = parallel_compile(self.compiler, jobs)
        super().build_extensions()
        write_sv_package()
        ext = next(e for e in self.extensions if e.name == "softfp8._ext")
        libdir = os.path.join(os.path.dirname(self.get_ext_fullpath(ext.name)), "lib")
        os.makedirs(os.path.join(libdir, "pkgconfig"), exist_ok=True)
        tmp = os.path.join(self.build_temp, "libsoftfp8")
        objects = self.compiler.compile(
            CORE, output_dir=tmp, include_dirs=["include", "softfp8/_core", "softfp8/_core/fast"],
            macros=[("SFP8_PUBLIC_CHECKS", "1")],   # the C API reports codes above the width
            extra_postargs=extra_compile_args + ["-fPIC"])
        libs = list(ext.libraries)
        script = os.path.join(tmp, "libsoftfp8.map")
        with open(script, "w") as fh:
            fh.write("{\n  global:\n    %s;\n  local:\n    *;\n};\n" % LIB_EXPORTS)
        self.compiler.link_shared_object(
            objects, "libsoftfp8.so", output_dir=libdir, libraries=libs,
            extra_postargs=["-Wl,--version-script=" + script, "-Wl,-soname,libsoftfp8.so"])
        # static: one relocatable object whose internal symbols are made local, so a
        # program linking it sees the same sfp8_ symbols as with the shared library
        merged = os.path.join(tmp, "softfp8_all.o")
        subprocess.check_call(["ld", "-r", "-o", merged] + objects)
        subprocess.check_call(["objcopy", "-w", "--keep-global-symbol=" + LIB_EXPORTS, merged])
        archive = os.path.join(libdir, "libsoftfp8.a")
        if os.path.exists(archive):
            os.remove(archive)
        subprocess.check_call(["ar", "rcs", archive, merged])
        with open(os.path.join(libdir, "pkgconfig", "softfp8.pc"), "w") as fh:
            fh.write(PKG_CONFIG.format(version=VERSION,
                                       libs=" ".join("-l" + name for name in libs)))

    def copy_extensions_to_source(self):
        """In-place builds (`build_ext --inplace`, `pip install -e .`) get softfp8/lib/ too."""
        super().copy_extensions_to_source()
        built = os.path.join(self.build_lib, "softfp8", "lib")
        package_dir = self.get_finalized_command("build_py").get_package_dir("softfp8")
        shutil.copytree(built, os.path.join(package_dir, "lib"), dirs_exist_ok=True)
        # the source tree keeps its headers in include/, not softfp8/include/
        pc = os.path.join(package_dir, "lib", "pkgconfig", "softfp8.pc")
        with open(pc) as fh:
            text = fh.read()
        with open(pc, "w") as fh:
            fh.write(text.replace("includedir=${prefix}/include",
                                  "includedir=" + os.path.join(HERE, "include")))


VERSION = "0.1.0"
# relocatable: every path is relative to the .pc file (softfp8/lib/pkgconfig/)
PKG_CONFIG = """prefix=${{pcfiledir}}/../..
includedir=${{prefix}}/include
libdir=${{prefix}}/lib

Name: softfp8
Description: Bit-exact FP8 and small-float arithmetic (the softfp8 C core)
Version: {version}
Cflags: -I${{includedir}}
Libs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lsoftfp8
Libs.private: {libs}
"""


# -falign-loops=32: a hot loop of up to 32 bytes (the table kernels' one-load loops) never
# straddles a 64-byte fetch line wherever the link puts it; without it a change elsewhere
# moved the unary table loop across one and made every 8-bit unary operation 60% slower
# (docs/performance.md, "Code alignment")
extra_compile_args = ["-std=c11", "-O2", "-falign-loops=32"]
extra_link_args = []
if os.environ.get("SOFTFP8_DEBUG_BUILD"):
    extra_compile_args = ["-std=c11", "-O0", "-g"]
if os.environ.get("SOFTFP8_SANITIZE"):
    # the CI's sanitizer job (.ci/run): AddressSanitizer + UndefinedBehaviorSanitizer,
    # every report fatal, and signed overflow checked (Python's flags add -fwrapv)
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    extra_compile_args = ["-std=c11", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-wrapv"] + san
    extra_link_args = san

extensions = [
    Extension(
        "softfp8._ext",
        sources=["softfp8/_ext.pyx"] + CORE + NPY_GLUE + XLA_FFI,
        include_dirs=["include", "softfp8/_core", "softfp8/_core/fast", "softfp8/_core/npy",
                      numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
        extra_compile_args=extra_compile_args,
        libraries=LIBS,
        extra_link_args=extra_link_args,
    )
]

setup(
    # the generated C depends on the interpreter and on NumPy's Cython declarations
    # (numpy/__init__.pxd): one copy per (Python, NumPy), so that in-place builds for
    # several interpreters in one tree (Python 3.11 with NumPy 2.4, 3.13 with NumPy 2.5)
    # never compile another one's file
    ext_modules=cythonize(extensions, language_level=3, build_dir=os.path.join(
        "build", f"cython-{sys.implementation.cache_tag}-numpy{numpy.__version__}")),
    cmdclass={"build_py": BuildPyWithHeaders, "build_ext": BuildExtWithLibrary},
)
