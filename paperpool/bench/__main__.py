"""`python -m paperpool.bench` (or scripts/bench): how paperpool's cost grows with the
pool and with a trace, in one table, and which of its speed targets hold.

Each pool command is run --repeat times in a fresh process, as a user runs it, on a
copy of the pool at --root (the shipped pool by default) and on synthetic pools of the
--sizes made from it (paperpool.bench.synthpool, seeded); each trace size is a synthetic trace
(paperpool.traces.synth). validate is timed three ways: without the cache of checked
records (--no-cache), with it and nothing changed, and after one record's title changed.
Nothing outside a scratch folder is written (the cache goes there too), except the file
--write names, whose block between the bench markers is replaced by the results.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from paperpool.cli.context import Command
from paperpool.files.problems import PaperpoolError

from ..registry import find_root
from . import bounded, corpora, pools, report, traces, validator

START, END = "<!-- paperpool:bench:start -->", "<!-- paperpool:bench:end -->"


def _numbers(context, parameter, text: str) -> list[int]:
    try:
        return [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r}: give whole numbers separated by commas, e.g. 1000,10000") from None


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The pool to measure and to make synthetic pools from (default: the pool around the current folder).",
)
@click.option(
    "--sizes", default="1000,10000", show_default=True, callback=_numbers, help="Synthetic pool sizes, in entries; 0 for none."
)
@click.option(
    "--events",
    default="10000,200000,1000000",
    show_default=True,
    callback=_numbers,
    help="Synthetic trace sizes, in events; 0 for none.",
)
@click.option(
    "--artifact-events",
    default="200000",
    show_default=True,
    callback=_numbers,
    help="Sizes of synthetic traces in the survey artifact's format (no schema declared, warnings on every "
    "event: synth --dialect artifact); 0 for none.",
)
@click.option(
    "--artifact-validator",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="The survey artifact's trace-schema/validate_trace.py (not shipped: its authors' code), to time trace "
    "metrics against on the artifact-format traces and on the example_trace.json beside it.",
)
@click.option(
    "--corpus-traces",
    default="10000,100000",
    show_default=True,
    callback=_numbers,
    help="Sizes of synthetic trace corpora (JSON Lines, 50 events a trace) for trace metrics, export and summary; 0 for none.",
)
@click.option(
    "--corpus-kinds",
    default="artifact,warned,imported",
    show_default=True,
    help="Other corpora timed at the same sizes, trace metrics against the orjson loop: "
    + "; ".join(f"{name}: {said}" for name, said in corpora.KINDS.items() if name != "synth")
    + " (none: an empty value).",
)
@click.option(
    "--bounded-groups",
    default="100,500",
    show_default=True,
    callback=_numbers,
    help="The inputs that once took work out of proportion to their size (issue 39), with a corpus page of "
    "these many groups; 0 for none of them.",
)
@click.option("--repeat", type=click.IntRange(1), default=3, show_default=True, help="Runs of each measurement.")
@click.option("--engine", type=click.Choice(["mkdocs", "zensical"]), default="mkdocs", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the synthetic pools and traces.")
@click.option(
    "--write",
    "write_to",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"Also put the results into this file (BENCHMARKS.md), between the lines {START} and {END}.",
)
def main(
    root: Path | None,
    sizes: list[int],
    events: list[int],
    artifact_events: list[int],
    artifact_validator: Path | None,
    corpus_traces: list[int],
    corpus_kinds: str,
    bounded_groups: list[int],
    repeat: int,
    engine: str,
    seed: int,
    write_to: Path | None,
) -> None:
    """Time paperpool's commands on the shipped pool and on synthetic pools, and trace
    validation against json.load; print one table and the targets."""
    template = (root or find_root(Path.cwd())).resolve()
    if write_to is not None:
        _write(write_to, "", check_only=True)  # a file that cannot take the results is refused before the long run
    with tempfile.TemporaryDirectory(prefix="paperpool-bench-") as scratch:
        folder = Path(scratch)
        # the cache of checked records goes to the scratch folder too, for every command run
        os.environ["PAPERPOOL_CACHE_DIR"] = str(folder / "cache")
        shipped = pools.shipped_copy(template, folder)
        entries = len(list((shipped / "papers").glob("*.yaml")))
        rows = [pools.measure(shipped, entries, "shipped", repeat, engine)]
        _progress(f"shipped pool ({entries} entries) measured")
        main_job = pools.main_job(pools.shipped_copy(template, folder / "main-job"), repeat, engine)
        for size in (size for size in sizes if size > 0):
            rows.append(pools.measure(pools.synthetic(template, folder, size, seed), size, "synthetic", repeat, engine))
            _progress(f"{size:,} entries measured")
        trace_rows = []
        for size in (size for size in events if size > 0):
            trace_rows.append(traces.measure(folder, size, repeat, seed))
            _progress(f"{size:,}-event trace measured")
        for size in (size for size in artifact_events if size > 0):
            trace_rows.append(traces.measure(folder, size, repeat, seed, "artifact"))
            _progress(f"{size:,}-event trace in the artifact's format measured")
        checker_rows = []
        if artifact_validator is not None:
            example = artifact_validator.parent / "example_trace.json"
            if example.is_file():
                checker_rows.append(
                    validator.measure(example, "the artifact's example_trace.json", 0, artifact_validator, repeat)
                )
            for size in (size for size in artifact_events if size > 0):
                path = validator.synthetic(folder, size, seed)
                checker_rows.append(validator.measure(path, "synth, the artifact's format", size, artifact_validator, repeat))
                path.unlink()
            _progress("trace metrics timed against the artifact's validate_trace.py")
        corpus_rows = []
        for size in (size for size in corpus_traces if size > 0):
            corpus_rows.append(corpora.measure(folder, size, repeat, seed))
            _progress(f"{size:,}-trace corpus measured")
            for kind in _kinds(corpus_kinds):
                row = corpora.measure_kind(folder, kind, size, repeat, template, seed)
                corpus_rows += [row] if row is not None else []
                _progress(f"{size:,}-trace corpus ({kind}) measured")
        bounded_rows = []
        if any(size > 0 for size in bounded_groups):
            bounded_rows = bounded.measure(shipped, folder, repeat, tuple(size for size in bounded_groups if size > 0))
            _progress("the bounded cases measured")
    results = (
        f"Measured on {report.machine()}; each figure over {repeat} run{'s' if repeat > 1 else ''}.\n\n"
        + report.table(rows, main_job, trace_rows, corpus_rows, bounded_rows, checker_rows)
        + "\nTargets:\n\n"
        + report.targets_text(report.targets(rows, main_job, trace_rows, corpus_rows, bounded_rows, checker_rows))
    )
    click.echo(results, nl=False)
    if write_to is not None:
        _write(write_to, results)


def _kinds(given: str) -> list[str]:
    kinds = [kind.strip() for kind in given.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in corpora.KINDS or kind == "synth"]
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)}: name some of artifact, warned, imported", param_hint="'--corpus-kinds'")
    return kinds


def _write(path: Path, results: str, check_only: bool = False) -> None:
    from paperpool.publishing.readme import replace_block, write

    if not path.is_file():
        raise PaperpoolError(f"{path}: no such file; create it with the lines {START} and {END} where the results go")
    update = replace_block(path, START, END, results.rstrip("\n"))
    if not check_only:
        write(update)
        click.echo(f"{path}: results written.", err=True)


def _progress(message: str) -> None:
    click.echo(message, err=True)


if __name__ == "__main__":
    main(prog_name="python -m paperpool.bench")
