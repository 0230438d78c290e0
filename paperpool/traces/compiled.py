"""The compiled loops of `trace metrics` and `trace export` (_columns.pyx, built by
setup.py), or None where paperpool was installed without a C compiler: their callers
then run their Python versions, with the same results."""

try:
    from . import _columns as loops
except ImportError:
    loops = None
