"""`paperpool trace ...`: parse, call the library, report."""

from __future__ import annotations

from pathlib import Path

import click

from ..problems import PaperpoolError, plural
from ..yamlio import write_atomic
from . import schema

METRICS_FORMATS = ["text", "json"]  # metrics.FORMATS, which imports numpy: a test keeps them equal


def _pool_root() -> Path | None:
    """The top-level --root, when given (the trace commands also work outside a pool)."""
    return click.get_current_context().find_root().params.get("root")


@click.group("trace")
def trace() -> None:
    """Orchestration traces of multi-agent LLM systems: validate, measure, import."""


@trace.command("validate")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
def validate_command(files: tuple[Path, ...]) -> None:
    """Check traces against the trace schema and the graph rules; list every problem.

    Each problem is one line, `FILE: /json/pointer: what is wrong; how to fix it`, then
    one summary line per file. Without FILE: every .json file of the pool's traces
    folder. Exit status 0 when every file is valid, 1 otherwise."""
    from . import mapping, validation

    paths = list(files) or mapping.pool_traces(_pool_root())
    invalid = 0
    for path in paths:
        valid, lines = validation.report(str(path), path)
        invalid += not valid
        for line in lines:
            click.echo(line)
    if len(paths) > 1:
        click.echo(f"{plural(len(paths), 'file')}: {len(paths) - invalid} valid, {invalid} invalid.")
    if invalid:
        raise click.exceptions.Exit(1)


@trace.command("metrics")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(METRICS_FORMATS), default="text", show_default=True)
def metrics_command(file: Path, fmt: str) -> None:
    """Orchestration measures recomputed from a valid trace's event graph: agents,
    spawns, fan-out and depth, sub-decision counts O1-O5, work against critical path and
    the parallelism speedup, protocol overhead, costs, rewards by credit unit, and each
    agent's share. Which events count for which sub-decision comes from the pool's
    registry.yaml (traces: subdecisions) when there is one, else from paperpool's default."""
    from . import mapping, metrics, validation

    subdecisions = mapping.for_pool(_pool_root())
    checked = validation.require_valid(file)
    result = metrics.compute(checked.index, checked.top, subdecisions)
    click.echo(metrics.to_json(result) if fmt == "json" else metrics.to_text(result, subdecisions), nl=False)


@trace.command("import-otlp")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the trace to this file instead of standard output.")
@click.option("--trace-id", help="The OTLP trace to convert, when the export holds several (hex).")
@click.option("--topology", type=click.Choice(schema.topologies()), help="Record the system's topology, which spans do not say.")
def import_otlp_command(file: Path, output: Path | None, trace_id: str | None, topology: str | None) -> None:
    """Convert an OTLP/JSON export of OpenTelemetry GenAI spans (create_agent,
    invoke_agent, execute_tool, chat) into an orchestration trace, and validate it:
    spawns and returns from agent spans, tool calls and results from tool spans,
    decisions from the orchestrator's model calls, costs from token usage and durations."""
    from . import otlp
    from .loading import dump_trace

    try:
        converted = otlp.convert_file(file, trace_id, topology)
    except otlp.OtlpProblem as exc:
        for finding in exc.findings[:-1]:
            click.echo(finding.line(str(file)), err=True)
        raise PaperpoolError(exc.findings[-1].line(str(file))) from None
    text = dump_trace(converted)
    if output:
        write_atomic(output, text, f"-o {output}")
        click.echo(f"wrote {output}: {plural(len(converted['events']), 'event')}, {plural(len(converted['edges']), 'edge')}", err=True)
    else:
        click.echo(text, nl=False)
