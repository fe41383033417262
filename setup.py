"""Build the Cython extensions of sklearn-sketch.

Set ``SKLEARN_SKETCH_DEBUG=1`` to compile with bounds checks and wraparound on
(slow, for catching indexing bugs in a debug run).
"""
import os
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("SKLEARN_SKETCH_DEBUG", "0") == "1"

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
    "autotestdict": False,
}

extensions = [
    Extension(
        ".".join(pyx.with_suffix("").parts),
        [str(pyx)],
        include_dirs=[np.get_include(), str(pyx.parent)],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"] if not DEBUG else ["-O0", "-g"],
    )
    for pyx in sorted(Path("sklearn_sketch").rglob("*.pyx"))
]

# Cythonize and compile the extensions on every core (one core took 74 s).
JOBS = os.cpu_count() or 1

setup(
    ext_modules=cythonize(extensions, compiler_directives=COMPILER_DIRECTIVES, nthreads=JOBS),
    options={"build_ext": {"parallel": JOBS}},
)
