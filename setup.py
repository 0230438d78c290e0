"""The one compiled module, paperpool/traces/_columns.pyx (the per-event loops of
`trace metrics` and `trace export` over a corpus), built by Cython and the machine's C
compiler. It is optional: where it cannot be built, paperpool installs all the same and
batch.py runs its own Python version of those loops, slower and with the same results.
Everything else about the package is in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = cythonize([Extension("paperpool.traces._columns", ["paperpool/traces/_columns.pyx"])], quiet=True)
for extension in extensions:
    extension.optional = True  # a failed build is a warning, not a failed install
setup(ext_modules=extensions)
