"""What the trace tests read: the hand-written cases, the survey artifact's example trace, and the OTLP example script as a module."""

from __future__ import annotations

import importlib.util

from ..conftest import REPO

FIXTURES = REPO / "tests" / "cases" / "traces"


SOURCE_EXAMPLE = REPO.parent / "shared" / "source-artifact" / "example_trace.json"


# The scenario that regenerates the shipped example: the test runs the very same code.
_spec = importlib.util.spec_from_file_location("otlp_example", REPO / "scripts" / "otlp_example.py")


example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)
