"""Build script: one Cython extension that compiles the C core in."""
import os
import shutil

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# the fast paths: tables built from the core, SIMD kernels, derived roundings
FAST = ["softfp8/_core/fast/fast.c", "softfp8/_core/fast/cache.c", "softfp8/_core/fast/round_f64.c",
        "softfp8/_core/fast/stochastic.c", "softfp8/_core/fast/fast_simd.c"]
CORE = ["softfp8/_core/core.c", "softfp8/_core/ops.c", "softfp8/_core/driver.c",
        "softfp8/_core/accum.c", "softfp8/_core/elem.c",
        "softfp8/_core/elem_explog.c"] + FAST
# libraries the core links: libm, and libquadmath for the elementary functions' binary128 stage
LIBS = ["quadmath", "m"]
# the NumPy glue, one file per concern (softfp8/_core/npy/glue.h is its private header)
NPY_GLUE = ["softfp8/_core/npy/" + name + ".c" for name in
            ("module", "context", "dtype", "scalar", "casts", "promotion", "loops", "matmul")]


class BuildPyWithHeaders(build_py):
    """Ship include/softfp8/*.h inside the package (softfp8/include/softfp8/)."""

    def run(self):
        super().run()
        src = os.path.join(HERE, "include", "softfp8")
        dst = os.path.join(self.build_lib, "softfp8", "include", "softfp8")
        os.makedirs(dst, exist_ok=True)
        for fn in os.listdir(src):
            if fn.endswith(".h"):
                shutil.copy2(os.path.join(src, fn), os.path.join(dst, fn))


extra_compile_args = ["-std=c11", "-O2"]
if os.environ.get("SOFTFP8_DEBUG_BUILD"):
    extra_compile_args = ["-std=c11", "-O0", "-g"]

extensions = [
    Extension(
        "softfp8._ext",
        sources=["softfp8/_ext.pyx"] + CORE + NPY_GLUE,
        include_dirs=["include", "softfp8/_core", "softfp8/_core/fast", "softfp8/_core/npy",
                      numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
        extra_compile_args=extra_compile_args,
        libraries=LIBS,
    )
]

setup(
    ext_modules=cythonize(extensions, language_level=3),
    cmdclass={"build_py": BuildPyWithHeaders},
)
