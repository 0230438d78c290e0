"""The benchmark's one table, the targets it checks, and the machine it ran on."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

from .bounded import BoundedRow
from .corpora import KINDS, CorpusRow
from .measure import Series
from .pools import MainJob, PoolRow
from .traces import ARTIFACT, TraceRow
from .validator import ValidatorRow

HEADER = (
    "| measurement | size | median s | min s | max s | peak MB | ms per item | ratio | the ratio is |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---|"
)


def machine() -> str:
    try:
        memory = f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        memory = "unknown memory"
    versions = ", ".join(f"{name} {_version(name)}" for name in ("paperpool", "mkdocs", "mkdocs-material"))
    return (
        f"{os.cpu_count()} cores, {memory}, {platform.system()} {platform.machine()}, Python {sys.version.split()[0]}; {versions}"
    )


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _row(
    measurement: str, size: str, series: Series, per_item: float | None = None, ratio: float | None = None, ratio_is: str = ""
) -> str:
    peak = f"{series.peak_mb:,.0f}" if series.peak_mb is not None else ""
    item = f"{per_item * 1000:.3f}" if per_item is not None else ""
    shown = f"{ratio:.2f}" if ratio is not None else ""
    return (
        f"| {measurement} | {size} | {series.median:.3f} | {series.low:.3f} | {series.high:.3f} | {peak} | {item} | "
        f"{shown} | {ratio_is} |"
    )


def table(
    pools: list[PoolRow],
    main_job: MainJob | None,
    traces: list[TraceRow],
    corpora: list[CorpusRow] = (),
    bounded: list[BoundedRow] = (),
    checker: list[ValidatorRow] = (),
) -> str:
    lines = [HEADER]
    by_size = {row.entries: row for row in pools}
    if main_job is not None:
        size = f"{pools[0].entries:,} entries, shipped"
        lines.append(
            _row(
                "main job (scripts/run after install: paperpool publish)",
                size,
                main_job.run,
                None,
                main_job.ratio,
                "/ the engine's build, same runs",
            )
        )
        lines.append(_row("main job: the engine's build of its pages", size, main_job.engine))
    for name in pools[0].commands if pools else []:
        for row in pools:
            series = row.commands[name]
            ratio, ratio_is = _growth(name, row, by_size)
            lines.append(
                _row(name, f"{row.entries:,} entries, {row.label}", series, series.median / row.entries, ratio, ratio_is)
            )
    for row in pools:
        lines.append(
            _row(
                "validate --no-cache (every record read and checked)",
                f"{row.entries:,} entries, {row.label}",
                row.cold,
                row.cold.median / row.entries,
            )
        )
    for row in pools:
        lines.append(
            _row(
                "validate after one record's title changed (cache warm)",
                f"{row.entries:,} entries, {row.label}",
                row.edited,
                row.edited.median / row.entries,
                row.edited.median / row.cold.median,
                "/ validate --no-cache",
            )
        )
    for row in pools:
        share = row.own.median / (row.own.median + row.engine.median)
        lines.append(
            _row(
                "build: paperpool's own generation",
                f"{row.entries:,} entries, {row.pages:,} pages",
                row.own,
                row.own.median / row.entries,
                share,
                "own / (own + engine)",
            )
        )
        lines.append(
            _row(
                "build: the engine (mkdocs build)",
                f"{row.entries:,} entries, {row.pages:,} pages",
                row.engine,
                row.engine.median / row.entries,
            )
        )
    for row in traces:
        size = f"{row.events:,} events, {row.edges:,} edges, {row.megabytes:.0f} MB" + _dialect(row)
        lines.append(_row("trace validate + metrics", size, row.ours, row.ours.median / row.events, row.ratio, "/ json.load"))
        lines.append(_row("json.load of the same file", size, row.plain, row.plain.median / row.events))
        lines.append(
            _row(
                "json.load, garbage collector paused",
                size,
                row.paused,
                row.paused.median / row.events,
                row.ours.median / row.paused.median,
                "validate + metrics / this",
            )
        )
    for row in checker:
        size = (f"{row.events:,} events, " if row.events else "") + f"{row.megabytes:,.1f} MB, {row.label}"
        lines.append(_row("trace metrics FILE (a whole command)", size, row.ours, None, row.ratio, "/ validate_trace.py"))
        lines.append(_row("the artifact's validate_trace.py FILE", size, row.theirs, None))
    for row in corpora:
        size = f"{row.traces:,} traces, {row.events:,} events, {row.megabytes:,.0f} MB of JSON Lines"
        if row.kind != "synth":
            size += f": {KINDS[row.kind]}"
        lines.append(
            _row(
                "trace metrics --format parquet (a corpus, every core)",
                size,
                row.metrics,
                row.metrics.median / row.traces,
                row.ratio,
                "/ the orjson loop",
            )
        )
        lines.append(_row("a loop parsing every line with orjson, one process", size, row.plain, row.plain.median / row.traces))
        if row.export.samples:
            lines.append(
                _row("trace export (traces, events, edges, rewards as Parquet)", size, row.export, row.export.median / row.traces)
            )
            lines.append(_row("trace summary: DuckDB over the exported tables", size, row.summary))
    smallest = next((row for row in bounded if row.items), None)
    for row in bounded:
        grown = row.items and smallest is not None and row is not smallest
        lines.append(
            _row(
                row.measurement,
                row.size,
                row.series,
                row.series.median / row.items if row.items else None,
                row.series.median / smallest.series.median if grown else None,
                f"{row.items:,} / {smallest.items:,} groups" if grown else "",
            )
        )
    if not checker:
        lines += ["", "trace metrics against the artifact's validate_trace.py: not measured (give --artifact-validator)."]
    return "\n".join(lines) + "\n"


def _growth(name: str, row: PoolRow, by_size: dict[int, PoolRow]) -> tuple[float | None, str]:
    """The ratio of this size's time to the time at a tenth of it, when both were run."""
    smaller = by_size.get(row.entries // 10)
    if smaller is None or row.entries % 10:
        return None, ""
    return row.commands[name].median / smaller.commands[name].median, f"{row.entries:,} / {smaller.entries:,} entries"


def targets(
    pools: list[PoolRow],
    main_job: MainJob | None,
    traces: list[TraceRow],
    corpora: list[CorpusRow] = (),
    bounded: list[BoundedRow] = (),
    checker: list[ValidatorRow] = (),
) -> list[tuple[str, str, bool]]:
    """(target, what was measured, whether it holds) for each target measured."""
    found = []
    shipped = next((row for row in pools if row.label == "shipped"), None)
    if main_job is not None:
        found.append(
            (
                "the main job on the shipped pool at most 1.3 x the engine's own build of the same pages",
                f"{main_job.run.median:.2f} s / {main_job.engine.median:.2f} s = {main_job.ratio:.2f} x",
                main_job.ratio <= 1.3,
            )
        )
    if shipped is not None:
        seconds = shipped.cold.median
        found.append(
            (
                f"validate --no-cache on the shipped pool ({shipped.entries} entries) under 0.5 s",
                f"{seconds:.2f} s",
                seconds < 0.5,
            )
        )
    for row in pools:
        if row.entries == 10_000:
            seconds = row.cold.median
            found.append(("validate --no-cache at 10,000 entries under 3 s", f"{seconds:.2f} s", seconds < 3))
            seconds = row.edited.median
            found.append(
                ("validate after one edit, the cache warm, at 10,000 entries under 0.5 s", f"{seconds:.2f} s", seconds < 0.5)
            )
            seconds = row.commands["build"].median
            found.append(("build at 10,000 entries under 90 s", f"{seconds:.1f} s", seconds < 90))
        by_size = {other.entries: other for other in pools}
        for name in row.commands:
            ratio, ratio_is = _growth(name, row, by_size)
            if ratio is not None:
                found.append((f"{name}: {ratio_is} at most 12", f"{ratio:.1f}", ratio <= 12))
        share = row.own.median / (row.own.median + row.engine.median)
        found.append((f"own generation at most a quarter of the build at {row.entries:,} entries", f"{share:.0%}", share <= 0.25))
    for row in traces:
        found.append(
            (
                f"trace validate + metrics at most 1.5 x json.load at {row.events:,} events{_dialect(row)}",
                f"{row.ratio:.2f} x",
                row.ratio <= 1.5,
            )
        )
        if row.events >= 1_000_000:
            peak = row.ours.peak_mb or 0
            found.append(
                (
                    f"{row.events:,} events validated and measured in under 10 s and 2 GB",
                    f"{row.ours.median:.1f} s, {peak:,.0f} MB",
                    row.ours.median < 10 and peak < 2048,
                )
            )
    for row in checker:
        if row.events >= 200_000:
            found.append(
                (
                    f"trace metrics at most the artifact's validate_trace.py at {row.events:,} events in its format",
                    f"{row.ours.median:.2f} s / {row.theirs.median:.2f} s = {row.ratio:.2f} x",
                    row.ratio <= 1.0,
                )
            )
    return found + _corpus_targets(corpora) + _bounded_targets(bounded)


def _bounded_targets(bounded: list[BoundedRow]) -> list[tuple[str, str, bool]]:
    """Each input that once took minutes and gigabytes, now in seconds; the corpus page's
    counts growing no faster than its groups."""
    found = []
    for row in bounded:
        peak = row.series.peak_mb or 0
        found.append(
            (
                f"{row.measurement}, {row.size}: under 10 s and 1 GB",
                f"{row.series.median:.2f} s, {peak:,.0f} MB",
                row.series.median < 10 and peak < 1024,
            )
        )
    grouped = [row for row in bounded if row.items]
    if len(grouped) > 1:
        growth = grouped[-1].series.median / grouped[0].series.median
        size = grouped[-1].items / grouped[0].items
        found.append(
            (
                (
                    f"build with a corpus page of {grouped[-1].items:,} groups at most {size:.0f} x its time at "
                    f"{grouped[0].items:,} (linear)"
                ),
                f"{growth:.2f} x",
                growth <= size,
            )
        )
    return found


def _corpus_targets(corpora: list[CorpusRow]) -> list[tuple[str, str, bool]]:
    found = []
    for row in corpora:
        size = f"{row.traces:,} traces" + (f" ({KINDS[row.kind]})" if row.kind != "synth" else "")
        if row.traces >= 100_000:
            found.append(
                (f"trace metrics --format parquet at most 2 x the orjson loop at {size}", f"{row.ratio:.2f} x", row.ratio <= 2)
            )
        if row.kind != "synth":
            continue
        peak = row.metrics.peak_mb or 0
        found.append((f"trace metrics under 1 GB at {size}", f"{peak:,.0f} MB", peak < 1024))
        found.append(
            (
                f"DuckDB's summary over the tables of {size} ({row.events:,} events) under 2 s",
                f"{row.summary.median:.2f} s",
                row.summary.median < 2,
            )
        )
    synth = [row for row in corpora if row.kind == "synth"]
    peaks = [row.metrics.peak_mb or 0 for row in synth]
    if len(peaks) > 1 and min(peaks) > 0:
        growth = max(peaks) / min(peaks)
        target = f"trace metrics' memory the same from {synth[0].traces:,} to {synth[-1].traces:,} traces (within 25%)"
        found.append((target, f"{growth:.2f} x", growth <= 1.25))
    return found


def _dialect(row: TraceRow) -> str:
    return f", {ARTIFACT}" if row.dialect == "artifact" else ""


def targets_text(found: list[tuple[str, str, bool]]) -> str:
    return "".join(f"- {'holds' if holds else 'MISSED'}: {target}: {measured}\n" for target, measured, holds in found)
