"""`trace summary`: how the measures of a corpus are distributed (count, mean, quantiles),
overall or by task, run, step or any other trace column, and which event types the
events table holds, computed by DuckDB over the Parquet tables of `trace export` (the
embedded engine: no server; it reads the files where they are, in parallel). And, for
fields the tables do not keep (an extension such as x_failure.agent), how many valid
traces hold each value (field_counts).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from paperpool.files import csvcells
from paperpool.files.problems import PaperpoolError, printable, suggest

from .rows import IDENTITY
from .tables import KEY

FORMATS = ("markdown", "json", "csv")
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
STATISTICS = ("traces", "count", "mean", "min", *(f"p{round(q * 100)}" for q in QUANTILES), "max")
# what is summarised: the numbers of a row; its identity and texts are what it is grouped by
_SKIPPED = {"line", "valid", "problems", "warnings"}


@dataclass
class Summary:
    by: list[str]
    metrics: list[dict]  # one per group and measure: the group's values, measure, then STATISTICS
    event_types: list[dict]  # one per group and event type: events, share of the group's events

    def to_json(self) -> str:
        """The summary as JSON, where a statistic past a double's range (a mean of values
        near 1e308) is null: JSON has no Infinity."""

        def finite(rows: list[dict]) -> list[dict]:
            return [
                {key: None if isinstance(value, float) and not math.isfinite(value) else value for key, value in row.items()}
                for row in rows
            ]

        return (
            json.dumps(
                {"by": self.by, "metrics": finite(self.metrics), "event_types": finite(self.event_types)},
                indent=2,
                allow_nan=False,
            )
            + "\n"
        )


def is_export(folder: Path) -> bool:
    """Whether `folder` holds `trace export`'s tables (not, say, a pool with a traces/ folder)."""
    return (folder / "traces").is_dir() and any((folder / "traces").rglob("*.parquet"))


MAX_GROUPS = 500  # groups a summary shows, each a row per measure (the corpus page too: some 700 fill its 5 MB)


def summarise(folder: Path, by: list[str]) -> Summary:
    import duckdb

    try:
        return _summarise(duckdb.connect(), folder, by)
    except duckdb.Error as exc:  # a table that is not paperpool's, or a file cut short
        first = str(exc).strip().splitlines()[0]
        raise PaperpoolError(
            f"{printable(str(folder))}: cannot read its tables ({first}); give a folder that `paperpool trace export` wrote"
        ) from None


def _summarise(connection, folder: Path, by: list[str]) -> Summary:
    traces = _glob(folder, "traces")
    types = dict(connection.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {traces})").fetchall())
    for field in by:
        if field not in types:
            usual = ", ".join(column.name for column in IDENTITY if column.name not in _SKIPPED)
            raise PaperpoolError(
                f"--by {field}: not a column of the traces table; "
                f"{suggest(field, list(types), f'use {usual} or a measure (docs/traces.md: the rows)')}"
            )
    identity = {column.name for column in IDENTITY}
    measures = [name for name, kind in types.items() if name not in identity and name not in by and _numeric(kind)]
    groups = ", ".join(_quoted(field) for field in by)
    if by:  # one row per group and measure: counted first, in one pass, before any is built
        count = connection.execute(f"SELECT count(*) FROM (SELECT DISTINCT {groups} FROM {traces} WHERE valid)").fetchone()[0]
        if count > MAX_GROUPS:
            raise PaperpoolError(
                f"by {', '.join(by)}: the valid traces fall into {count:,} groups, over the {MAX_GROUPS:,} a "
                f"summary shows (a row per group and measure); group by a field with fewer values"
            )
    # every measure's statistics in one pass over the table (a query per measure would read it once each)
    quantiles = f"[{', '.join(map(str, QUANTILES))}]"
    columns = [f"CAST({_quoted(measure)} AS DOUBLE)" for measure in measures]
    aggregates = ", ".join(f"count({c}), avg({c}), min({c}), quantile_cont({c}, {quantiles}), max({c})" for c in columns)
    query = (
        f"SELECT {(groups + ', ') if by else ''}count(*), {aggregates} FROM {traces} WHERE valid "
        f"{'GROUP BY ' + groups + ' ORDER BY ' + groups if by else ''}"
    )
    found = connection.execute(query).fetchall()
    metrics = []
    for index, measure in enumerate(measures):
        for row in found:
            count, mean, low, middle, high = row[len(by) + 1 + 5 * index : len(by) + 6 + 5 * index]
            numbers = [row[len(by)], count, mean, low, *(middle or [None] * len(QUANTILES)), high]
            metrics.append(
                {
                    **dict(zip(by, row[: len(by)], strict=True)),
                    "measure": measure,
                    **dict(zip(STATISTICS, map(_rounded, numbers), strict=True)),
                }
            )
    return Summary(by, metrics, _event_types(connection, folder, by))


def _event_types(connection, folder: Path, by: list[str]) -> list[dict]:
    """Events by type, and each type's share of the group's events. Grouped by a field
    the events table carries (its trace's key, the partition columns), it is read alone;
    by another, it is joined to its trace's row."""
    events, traces = _glob(folder, "events"), _glob(folder, "traces")
    if set(by) <= set(_columns(connection, events)):
        source, owner = f"{events} e", "e"
    else:
        key = " AND ".join(f"e.{_quoted(k)} IS NOT DISTINCT FROM t.{_quoted(k)}" for k in KEY)
        source, owner = f"{events} e JOIN {traces} t ON {key}", "t"
    groups = [f"{owner}.{_quoted(field)}" for field in by]
    within = f"PARTITION BY {', '.join(groups)}" if by else ""
    query = (
        f"SELECT {''.join(g + ', ' for g in groups)}e.type, count(*) AS events, "
        f"count(*) / sum(count(*)) OVER ({within}) FROM {source} "
        f"GROUP BY {''.join(g + ', ' for g in groups)}e.type ORDER BY {''.join(g + ', ' for g in groups)}events DESC, e.type"
    )
    n = len(by)
    return [
        {**dict(zip(by, found[:n], strict=True)), "type": found[n], "events": found[n + 1], "share": _rounded(found[n + 2])}
        for found in connection.execute(query).fetchall()
    ]


def field_counts(folder: Path, inputs: list[str], by: list[str], fields: list[str], limits=None) -> list[dict]:
    """How many valid traces hold each value of each field (dotted for a field inside
    another: x_failure.agent), by the `by` fields: one row {by..., field, value, traces}
    per group, field and value, the most frequent first. The tables keep no extension
    field, so each valid trace of the corpus (`inputs`, as exported to `folder`) is read
    again; which traces are valid, and their groups, are the export's traces table's. A
    value is the field's text, or its JSON (a number, true, a list); None when the trace
    does not have the field. A value longer than KEPT_CHARS is kept as its first KEPT_CHARS
    characters, told apart from others by a digest of the whole, with its length in
    `chars` (every row has it): ten counted fields of a megabyte each, nested in one
    another, had made each trace cost ten times its size, whatever the corpus's size."""
    import duckdb
    import orjson

    from . import corpus

    groups = "".join(f", {_quoted(field)}" for field in by)
    query = f"SELECT file, line{groups} FROM {_glob(folder, 'traces')} WHERE valid"
    valid = {(found[0], found[1]): tuple(found[2:]) for found in duckdb.connect().execute(query).fetchall()}
    counted: Counter = Counter()
    for record in corpus.records(corpus.expand(inputs), limits):
        group = valid.get((record.file, record.line))
        if group is not None:
            trace = orjson.loads(record.data)
            counted.update((group, name, _kept(_value(trace, name))) for name in fields)
    order = {name: position for position, name in enumerate(fields)}
    ranked = sorted(
        counted.items(), key=lambda item: (_sortable(item[0][0]), order[item[0][1]], -item[1], _sortable((_text(item[0][2]),)))
    )
    return [
        {**dict(zip(by, group, strict=True)), "field": name, "value": _text(kept), "chars": _chars(kept), "traces": traces}
        for (group, name, kept), traces in ranked
    ]


KEPT_CHARS = 200  # of a counted value: what a corpus page shows of it


def _kept(value: str | None):
    """A value as field_counts counts it: itself, or, past KEPT_CHARS, (its first
    KEPT_CHARS characters, its length, a digest of the whole)."""
    if value is None or len(value) <= KEPT_CHARS:
        return value
    return value[:KEPT_CHARS], len(value), hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _text(kept) -> str | None:
    return kept[0] if isinstance(kept, tuple) else kept


def _chars(kept) -> int | None:
    return kept[1] if isinstance(kept, tuple) else None if kept is None else len(kept)


def _value(trace: dict, dotted: str) -> str | None:
    value = trace
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if value is None or isinstance(value, str):
        return value
    import orjson

    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def _sortable(values: tuple) -> tuple:
    """Groups and values in order, None (not given) last, whatever their types."""
    return tuple((value is None, str(value)) for value in values)


def _glob(folder: Path, table: str) -> str:
    pattern = str(folder / table / "**" / "*.parquet").replace("'", "''")
    return f"read_parquet('{pattern}', hive_partitioning = true, union_by_name = true)"


def _columns(connection, source: str) -> list[str]:
    return [row[0] for row in connection.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]


def _numeric(kind: str) -> bool:
    return kind in ("BIGINT", "DOUBLE", "BOOLEAN", "INTEGER")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _rounded(value):
    return round(value, 6) if isinstance(value, float) else value


def to_markdown(summary: Summary) -> str:
    lines = []
    heads = [*summary.by, "measure", *STATISTICS]
    lines += [
        f"## Measures (valid traces{', by ' + ', '.join(summary.by) if summary.by else ''})",
        "",
        "| " + " | ".join(heads) + " |",
        "|" + "---|" * len(heads),
    ]
    lines += ["| " + " | ".join(_cell(row.get(head)) for head in heads) + " |" for row in summary.metrics]
    heads = [*summary.by, "type", "events", "share"]
    lines += ["", "## Event types", "", "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(_cell(row.get(head)) for head in heads) + " |" for row in summary.event_types]
    return "\n".join(lines) + "\n"


def to_csv(summary: Summary) -> str:
    heads = [*summary.by, "measure", *STATISTICS]
    return csvcells.table(([row.get(head) for head in heads] for row in summary.metrics), heads)


def _cell(value) -> str:
    if value is None:
        return "(none)"
    return printable(str(value)).replace("|", "\\|")
