"""`paperpool trace ...`: parse, call the library, report."""

from __future__ import annotations

import click


@click.group("trace")
def trace() -> None:
    """Orchestration traces of multi-agent LLM systems: validate, measure, import."""
