"""`paperpool trace ...`: parse, call the library, report."""

from __future__ import annotations

import contextlib
import glob
import os
import sys
from pathlib import Path

import click

from paperpool.cli.context import end_unfreed
from paperpool.files.oserrors import shown_path
from paperpool.files.problems import PaperpoolError, plural, printable
from paperpool.files.yamlio import (
    check_output,
    holding_folder,
    linked_folder,
    write_new,
)

from . import extra, schema
from .importing import ImportOptions

METRICS_FORMATS = ["text", "json"]  # metrics.FORMATS, which imports numpy: a test keeps them equal
CORPUS_FORMATS = ["jsonl", "csv", "parquet"]  # tables.FORMATS, likewise
SUMMARY_FORMATS = ["markdown", "json", "csv"]  # summary.FORMATS, likewise


# trace metrics, export and summary: what runs the per-trace work over a corpus
TRACE_ENGINES = ["local", "ray"]
trace_engine_option = click.option(
    "--engine",
    type=click.Choice(TRACE_ENGINES),
    default=TRACE_ENGINES[0],
    show_default=True,
    help="What measures a corpus: local worker processes, or Ray Data (on the Ray cluster RAY_ADDRESS names, else on "
    "a Ray started for the command; pip install 'paperpool[ray]'), giving the same rows. With ray, --jobs caps "
    "the tasks measuring at once.",
)


def _pool_root() -> Path | None:
    """The top-level --root, when given (the trace commands also work outside a pool)."""
    return click.get_current_context().find_root().params.get("root")


@click.group("trace")
def trace() -> None:
    """Orchestration traces of multi-agent LLM systems: validate, measure, import; corpora of them as tables."""
    extra.require("`paperpool trace`")


@trace.command("validate")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
def validate_command(files: tuple[Path, ...]) -> None:
    """Check traces against the trace schema and the graph rules; list every problem.

    Each problem is one line, `FILE: /json/pointer: what is wrong; how to fix it`, then
    one summary line per file. Without FILE: every .json file of the pool's traces
    folder. Exit status 0 when every file is valid, 1 otherwise."""
    from . import limits, mapping, validation

    paths = list(files) or mapping.pool_traces(_pool_root())
    bounds = limits.for_pool(_pool_root())
    invalid = 0
    for path in paths:
        with _memory_for(path):
            valid, lines = validation.report(str(path), path, limits=bounds)
        invalid += not valid
        for line in lines:
            click.echo(line)
    if len(paths) > 1:
        click.echo(f"{plural(len(paths), 'file')}: {len(paths) - invalid} valid, {invalid} invalid.")
    if invalid:
        raise click.exceptions.Exit(1)


@trace.command("metrics")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(METRICS_FORMATS + CORPUS_FORMATS),
    help="text or json (the default: text) for one trace file; jsonl (the default), csv or parquet for a corpus.",
)
@click.option(
    "-o",
    "--output",
    type=str,
    help="A corpus's table goes to this file (parquet needs one; the others default to standard output).",
)
@click.option("--strict", is_flag=True, help="A corpus: stop at the first invalid trace (nothing is written).")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes for a corpus (default: one per core).")
@trace_engine_option
def metrics_command(
    inputs: tuple[str, ...], fmt: str | None, output: str | None, strict: bool, jobs: int | None, engine: str
) -> None:
    """Orchestration measures recomputed from a valid trace's event graph: agents,
    spawns, fan-out and depth, sub-decision counts O1-O5, work against critical path and
    the parallelism speedup, protocol overhead, costs, rewards by credit unit, and each
    agent's share. Which events count for which sub-decision comes from the pool's
    registry.yaml (traces: subdecisions) when there is one, else from paperpool's default.

    INPUT is one trace file, or a corpus: several files, folders (every trace file in
    them, recursively), glob patterns and JSON Lines files of one trace per line (.jsonl,
    .ndjson; plain, .gz or .zst). A corpus gives one row per trace (--format jsonl, csv
    or parquet), computed on every core; an invalid trace is a row marked invalid and
    one line on standard error, and the exit status is 1 when any trace is invalid."""
    from . import limits, mapping

    subdecisions, bounds = mapping.for_pool(_pool_root()), limits.for_pool(_pool_root())
    if _one_trace(inputs) and fmt in (None, *METRICS_FORMATS):
        _one_trace_metrics(Path(inputs[0]), fmt or "text", subdecisions, bounds)
        return
    if fmt in METRICS_FORMATS:
        raise PaperpoolError(f"--format {fmt} reports on one trace file; for a corpus give --format jsonl, csv or parquet")
    fmt = fmt or "jsonl"
    target = _corpus_output(output, fmt)
    from .corpus import expand
    from .tables import metrics_table

    if target is not None and target.exists() and target.resolve() in {path.resolve() for path in expand(inputs)}:
        raise PaperpoolError(f"-o {output}: is one of the inputs; write the rows to another file (nothing was written)")

    outcome = metrics_table(list(inputs), fmt, target, subdecisions, _problem, strict, jobs, sys.stdout.buffer, engine, bounds)
    _corpus_summary(outcome, target)


def _one_trace(inputs: tuple[str, ...]) -> bool:
    """Whether the inputs are one trace file, which `trace metrics` reports on as before."""
    from .corpus import kind

    if len(inputs) != 1:
        return False
    path = Path(inputs[0])
    named = path.exists() or not glob.has_magic(inputs[0])
    return named and not path.is_dir() and kind(path) in (None, (False, None))


@contextlib.contextmanager
def _memory_for(file: Path):
    """A trace too large for the memory left (MemoryError) is one line naming it."""
    try:
        yield
    except MemoryError:
        raise PaperpoolError(
            f"{printable(str(file))}: not enough memory to read this trace (it needs some five times "
            "its bytes); give paperpool more memory, or split the trace into several"
        ) from None


def _one_trace_metrics(file: Path, fmt: str, subdecisions, bounds) -> None:
    from . import metrics, validation

    with _memory_for(file):
        checked = validation.require_valid(file, limits=bounds)
        for warning in validation.shown_doubts(
            checked.warnings
        ):  # what the measures read past; the report itself stays on standard output
            click.echo(warning.line(str(file)), err=True)
        result = metrics.compute(checked.index, checked.top, subdecisions, len(checked.warnings))
    click.echo(metrics.to_json(result) if fmt == "json" else metrics.to_text(result, subdecisions), nl=False)
    end_unfreed(checked)  # the parsed trace is not freed object by object


def _corpus_output(given: str | None, fmt: str) -> Path | None:
    if given is None:
        if fmt == "parquet":
            raise PaperpoolError("--format parquet needs -o FILE (Parquet goes to a file, not to standard output)")
        return None
    path = Path(given)
    check_output(path, f"-o {given}")
    return path


def _problem(line: str) -> None:
    click.echo(line, err=True)


def _corpus_summary(outcome, target: Path | None) -> None:
    where = f" to {target}" if target is not None else ""
    click.echo(
        f"{plural(outcome.traces, 'trace')}{where}: {outcome.traces - outcome.invalid:,} valid, {outcome.invalid:,} invalid.",
        err=True,
    )
    if outcome.invalid:
        raise click.exceptions.Exit(1)


@trace.command("export")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", type=str, required=True, help="The folder of the tables (new, or empty).")
@click.option(
    "--partition-by",
    "partition",
    metavar="FIELD[,FIELD...]",
    default="",
    help="Partition every table by these trace fields (for example run,step): hive-style KEY=VALUE folders.",
)
@click.option("--strict", is_flag=True, help="Stop at the first invalid trace (nothing is written).")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per core).")
@trace_engine_option
def export_command(inputs: tuple[str, ...], output: str, partition: str, strict: bool, jobs: int | None, engine: str) -> None:
    """A corpus of traces as Parquet tables: traces (one row per trace: what `trace
    metrics` gives), events, edges and rewards (each row with its trace's file, line and
    trace_id), read as they are by DuckDB, Polars, pandas, Spark and Ray. INPUT is as
    for `trace metrics`. The folder appears only once complete."""
    from . import limits, mapping
    from .tables import export_tables, partition_fields

    target = _export_folder(output)
    keys = partition_fields(partition)
    outcome = export_tables(
        list(inputs), target, mapping.for_pool(_pool_root()), _problem, keys, strict, jobs, engine, limits.for_pool(_pool_root())
    )
    _corpus_summary(outcome, target)


def _export_folder(given: str) -> Path:
    path = Path(given)
    if not given or (path.exists() and (not path.is_dir() or any(path.iterdir()))):
        raise PaperpoolError(f"-o {given}: give a new or empty folder for the tables (nothing was written)")
    if path.is_symlink() or (path.exists() and path.resolve() != path.absolute()):
        raise PaperpoolError(f"-o {given}: is a symbolic link; give the folder it leads to (nothing was written)")
    linked = linked_folder(path)  # a folder on its way, as every other output is checked
    if linked is not None:
        raise PaperpoolError(
            f"-o {given}: the folder {shown_path(linked)} is a symbolic link; paperpool never writes "
            "through one: give the path the link leads to, or another one (nothing was written)"
        )
    return path


@trace.command("summary")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...|TABLES")
@click.option(
    "--by",
    "by",
    multiple=True,
    metavar="FIELD",
    help="Group by this trace field (task_id, run, step, group, "
    "topology, system, or any column of the traces table); repeat for several.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(SUMMARY_FORMATS),
    default="markdown",
    show_default=True,
    help="markdown tables, json (measures and event types), or csv (the measures' table).",
)
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes when INPUT is a corpus (default: one per core).")
def summary_command(inputs: tuple[str, ...], by: tuple[str, ...], fmt: str, jobs: int | None) -> None:
    """How a corpus's measures are distributed (count, mean, quantiles, min, max), over
    its valid traces, with its events by type: computed by DuckDB over the Parquet tables
    of `trace export` (TABLES, that folder), or over a corpus (INPUT as for `trace
    metrics`, exported first to a temporary folder; the exit status is 1 when any of its
    traces is invalid)."""
    import tempfile

    from . import limits, mapping, summary

    invalid = 0
    with tempfile.TemporaryDirectory(prefix="paperpool-summary-") as scratch:
        exports = [given for given in inputs if summary.is_export(Path(given))]
        if exports and len(inputs) > 1:
            raise PaperpoolError(
                f"{printable(exports[0])}: the tables of `trace export` are summarised alone; give the "
                "folder as the only input, or the traces it was exported from with the others"
            )
        if exports:
            folder = Path(inputs[0])
        else:
            from .tables import export_tables

            folder = Path(scratch, "tables")
            outcome = export_tables(
                list(inputs),
                folder,
                mapping.for_pool(_pool_root()),
                _problem,
                (),
                False,
                jobs,
                limits=limits.for_pool(_pool_root()),
            )
            click.echo(
                f"{plural(outcome.traces, 'trace')}: {outcome.traces - outcome.invalid:,} valid, {outcome.invalid:,} invalid.",
                err=True,
            )
            invalid = outcome.invalid
        result = summary.summarise(folder, list(by), limits.for_pool(_pool_root()))
    text = {"json": result.to_json, "csv": summary.to_csv, "markdown": summary.to_markdown}[fmt](
        *(() if fmt == "json" else (result,))
    )
    # a CSV cell holds a trace's text as it is: to a terminal, what it would act on is shown escaped
    click.echo(printable(text, lines=True) if fmt == "csv" and sys.stdout.isatty() else text, nl=False)
    if invalid:  # as `trace metrics` says it: the summary is over the valid traces only
        raise click.exceptions.Exit(1)


@trace.command("import")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--from",
    "from_format",
    metavar="FORMAT",
    help="The inputs' format (default: recognised from the first input): "
    "otlp, openinference, who-and-when, or one a plugin installs (an unknown name lists those installed).",
)
@click.option(
    "-o",
    "--output",
    type=str,
    help="The trace file, or, when the inputs hold several traces, the folder they are written to (one file each). "
    "Without it, a single trace goes to standard output.",
)
@click.option(
    "--name",
    "name_pattern",
    default="{name}",
    show_default=True,
    help="How each trace's file in the folder is named: {name} (the run's own name), {index}, {trace_id}.",
)
@click.option("--trace-id", help="Convert only this trace of an export holding several.")
@click.option(
    "--topology", type=click.Choice(schema.topologies()), help="Record the system's topology, which the input does not say."
)
def import_command(
    inputs: tuple[Path, ...],
    from_format: str | None,
    output: str | None,
    name_pattern: str,
    trace_id: str | None,
    topology: str | None,
) -> None:
    """Convert traces recorded by other systems into orchestration traces, each validated.

    Every trace of the inputs is converted: an export holding several gives one file per
    trace in the folder -o names. An input that converts to no events is an error that
    says what the format expected and what the input holds; nothing is written."""
    _import(list(inputs), from_format, output, name_pattern, ImportOptions(topology, trace_id))


@trace.command("import-otlp")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=str, help="Write the trace to this file instead of standard output.")
@click.option("--trace-id", help="The OTLP trace to convert, when the export holds several (hex).")
@click.option("--topology", type=click.Choice(schema.topologies()), help="Record the system's topology, which spans do not say.")
def import_otlp_command(file: Path, output: str | None, trace_id: str | None, topology: str | None) -> None:
    """The same as `paperpool trace import --from otlp`: an OTLP/JSON export of OpenTelemetry
    GenAI spans (create_agent, invoke_agent, execute_tool, chat) to an orchestration trace."""
    _import([file], "otlp", output, "{name}", ImportOptions(topology, trace_id))


def _import(paths: list[Path], from_format: str | None, given: str | None, name_pattern: str, options: ImportOptions) -> None:
    # -o as typed: pathlib reads '' as '.', the current folder, which an empty -o is not
    output = None if given is None else Path(given)
    from .importing import (
        Unreadable,
        detect,
        formats,
        import_traces,
        plan_outputs,
        summary,
    )
    from .loading import dump_trace

    seen: set[Path] = set()
    paths = [path for path in paths if not (path.resolve() in seen or seen.add(path.resolve()))]  # each input once, in order
    known = formats()
    if from_format is not None and from_format not in known:
        raise PaperpoolError(f"--from {from_format}: not a format paperpool reads; use one of {', '.join(known)}")
    trace_format = known[from_format] if from_format else detect(paths, known)
    try:
        imported, passed_over = import_traces(paths, trace_format, options)
    except Unreadable as exc:
        for line in exc.lines[:-1]:
            click.echo(line, err=True)
        raise
    for item in passed_over:
        click.echo(
            f"passed over trace {printable(item.trace_id or item.name)} of {printable(str(item.source))}: it converts "
            "to no events (nothing in it orchestrates: no agent, tool or model call)",
            err=True,
        )
    if output is None:
        if len(imported) > 1:
            raise PaperpoolError(f"the inputs hold {len(imported)} traces; give -o FOLDER to write one file each")
        click.echo(dump_trace(imported[0].trace), nl=False)
        return
    if given in ("", "-") or (len(imported) == 1 and not output.is_dir()):
        check_output(output, f"-o {output}")  # an empty path, '-', a link on the way: refused with the reason
    if len(imported) > 1 and output.suffix.lower() == ".json" and not output.is_dir():
        raise PaperpoolError(
            f"the inputs hold {len(imported)} traces, but -o {output} names one file; give -o a folder "
            "to write one file each, or choose one with --trace-id"
        )
    planned = plan_outputs(imported, output, name_pattern)
    # two imports into one folder take turns: the second then finds the first's files and
    # refuses before writing any, instead of both writing half of their files
    with holding_folder(_nearest_folder(output.parent)):
        _check_free(planned, output, {path.resolve() for path in paths})
        written = _write_all(planned, output)
    for path, item in written:
        click.echo(f"wrote {path}: {summary(item)}", err=True)


def _check_free(planned: list, output: Path, inputs: set[Path]) -> None:
    """Every file checked before any is written, or a folder made."""
    for path, _ in planned:
        check_output(path, f"-o {output}" if path == output else str(path), new_folders=len(planned) > 1)
        if path.resolve() in inputs:
            raise PaperpoolError(f"-o {output}: {path} is one of the inputs; write the traces elsewhere (nothing was written)")
        if os.path.lexists(path):  # a maintainer's trace, say, whose name is the run's: an import only adds files
            raise PaperpoolError(
                f"-o {output}: {path} exists; an import writes new files only: remove it, or choose another "
                f"{'folder' if len(planned) > 1 else 'name'} (nothing was written)"
            )


def _write_all(planned: list, output: Path) -> list:
    """Write every planned file, or none: should a name be taken meanwhile (by a command
    that writes without the folder's lock), or the run be stopped (Ctrl-C, SIGTERM), the
    files this run wrote are removed, and the folder too when this run made it."""
    from .loading import dump_trace

    made = len(planned) > 1 and not output.exists()
    if len(planned) > 1:
        output.mkdir(parents=True, exist_ok=True)
    written = []
    writing = None  # the file being written: a stop may come once it is in place, before it is counted
    try:
        for path, item in planned:
            writing = path
            write_new(path, dump_trace(item.trace), f"-o {output}")
            written.append((path, item))
            writing = None
    except BaseException as exc:
        taken = isinstance(exc, FileExistsError)  # that name is another command's file
        for path in [path for path, _ in written] + ([writing] if writing is not None and not taken else []):
            path.unlink(missing_ok=True)
        if made:
            with contextlib.suppress(OSError):
                output.rmdir()  # only if empty: another command's files stay
        if taken:
            raise PaperpoolError(
                f"-o {output}: {exc.filename} appeared while this import wrote (another command writing "
                "there?); an import writes new files only: the files it had written were removed "
                "(nothing was written)"
            ) from None
        raise
    return written


def _nearest_folder(path: Path) -> Path:
    """The folder itself, or the nearest one above it that exists."""
    path = path.absolute()
    while not path.is_dir() and path != path.parent:
        path = path.parent
    return path
