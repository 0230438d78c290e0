"""The one compiled module, paperpool/traces/_columns.pyx (the per-event loops of
`trace metrics` and `trace export` over a corpus), built by Cython and the machine's C
compiler. It is optional: where it cannot be built (no compiler, no Python headers, or
no Cython in a build without isolation), paperpool installs all the same and batch.py
runs its own Python version of those loops, slower and with the same results.
Everything else about the package is in pyproject.toml."""

import sys

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # pip's isolated build installs it (pyproject.toml); a build without it gets the Python loops
    print("warning: Cython is not installed: paperpool's compiled loops are not built", file=sys.stderr)
    extensions = []
else:
    # the per-trace sums must add up as numpy does, to the last bit: no reassociation, whatever CFLAGS says
    strict = [] if sys.platform == "win32" else ["-fno-fast-math"]
    extensions = cythonize(
        [Extension("paperpool.traces._columns", ["paperpool/traces/_columns.pyx"], extra_compile_args=strict)], quiet=True
    )
    for extension in extensions:
        extension.optional = True  # a failed build is a warning, not a failed install
setup(ext_modules=extensions)
