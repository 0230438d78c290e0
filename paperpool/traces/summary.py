"""`trace summary`: how the measures of a corpus are distributed (count, mean, quantiles),
overall or by task, run, step or any other trace column, and which event types the
events table holds, computed by DuckDB over the Parquet tables of `trace export` (the
embedded engine: no server; it reads the files where they are, in parallel). And, for
fields the tables do not keep (an extension such as x_failure.agent), how many valid
traces hold each value (field_counts).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from paperpool.files import csvcells, walk
from paperpool.files.problems import PaperpoolError, name_problem, printable, suggest, utf8_name

from .limits import Limits
from .limits import default as default_limits
from .rows import IDENTITY
from .rows import columns as rows_columns
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
    traces = folder / "traces"  # walked a level at a time: rglob recursed once a level (RecursionError)
    return traces.is_dir() and any(path.name.endswith(".parquet") for path in walk.files(traces, str(traces)))


MAX_GROUPS = 500  # groups a summary shows, each a row per measure (the corpus page too: some 700 fill its 5 MB)


# DuckDB's share of the machine: a summary of a corpus within its limits takes far less,
# and a folder made to take more stops with one line rather than the machine's memory
DUCKDB = {"memory_limit": "2GB", "temp_directory": ""}


def summarise(folder: Path, by: list[str], limits: Limits | None = None) -> Summary:
    """The summary of `trace export`'s tables in `folder`, which may be a stranger's:
    its files are listed here (never through a link), its rows counted from the files'
    metadata against the corpus's limits, and its traces' keys checked to be unique
    before any query joins or sorts them."""
    import duckdb

    sources = _Sources(folder, limits or default_limits())
    connection = duckdb.connect(config=DUCKDB)
    try:
        sources.check(connection)
        return _summarise(connection, sources, by)
    except RuntimeError as exc:  # Ctrl-C or SIGTERM, as DuckDB reports it while a query runs
        if "interrupted" not in str(exc).lower():
            raise
        connection.interrupt()
        raise KeyboardInterrupt from None
    except duckdb.Error as exc:  # a table that is not paperpool's, or a file cut short
        first = str(exc).strip().splitlines()[0]
        raise PaperpoolError(
            f"{printable(str(folder))}: cannot read its tables ({first}); give a folder that `paperpool trace export` wrote"
        ) from None
    finally:
        connection.close()


class _Sources:
    """The Parquet files of each table of an export, as DuckDB is given them."""

    def __init__(self, folder: Path, limits: Limits):
        self.folder, self.limits = folder, limits
        above = next((part for part in folder.absolute().parts if "=" in part), None)
        if above is not None:  # DuckDB reads every key=value folder of a path as a column, those above the tables too
            raise PaperpoolError(
                f"{printable(str(folder))}: its path holds the folder {printable(above[:100])}, which DuckDB would read "
                "as a column of every row; give the tables a path without = in its folders' names (nothing was read)"
            )
        self.files = {table: _parquet_files(folder / table) for table in ("traces", "events")}

    def __getitem__(self, table: str) -> str:
        listed = ", ".join("'" + _for_duckdb(path).replace("'", "''") + "'" for path in self.files[table])
        return f"read_parquet([{listed}], hive_partitioning = true, union_by_name = true{self._partition_types(table)})"

    def _partition_types(self, table: str) -> str:
        """The key=value folders' values as `trace export` wrote them: DuckDB would guess a
        type for each, and a run named 2024-1-1 became the date of another run named
        2024-01-01 (round fifteen: their groups merged, and JSON could not hold the date).
        A whole-number column of a row (step) stays one; every other value is text."""
        keys = sorted(
            {
                part.split("=", 1)[0]
                for path in self.files[table]
                for part in path.relative_to(self.folder / table).parts[:-1]
                if "=" in part
            }
        )
        if not keys:
            return ""
        kinds = {column.name: column.type for column in IDENTITY}
        typed = ", ".join(
            f"'{key.replace(chr(39), chr(39) * 2)}': {'BIGINT' if kinds.get(key) == 'int' else 'VARCHAR'}" for key in keys
        )
        return f", hive_types_autocast = false, hive_types = {{{typed}}}"

    def check(self, connection) -> None:
        """Refuse a folder no export within the corpus's limits writes: more traces than
        corpus_lines, more events than its traces may hold, or a trace's key given twice
        (each events row would then join every copy: 32 kB made a billion rows)."""
        where = printable(str(self.folder))
        counted = {
            table: [(path, *_rows(path, self.folder / table, table)) for path in files] for table, files in self.files.items()
        }
        rows = {table: sum(found[1] for found in listed) for table, listed in counted.items()}
        most = {"traces": self.limits.corpus_lines, "events": rows["traces"] * self.limits.trace_events}
        for table, count in rows.items():
            if count > most[table]:
                raise PaperpoolError(
                    f"{where}: its {table} table holds {count:,} rows, more than {most[table]:,} "
                    f"(traces.limits: {'corpus_lines' if table == 'traces' else 'trace_events for each trace'}); "
                    "give a folder that `paperpool trace export` wrote, or raise the limit in the pool's registry.yaml"
                )
        keys = ", ".join(_quoted(name) for name in KEY)
        twice = connection.execute(f"SELECT count(*) - count(DISTINCT ({keys})) FROM {self['traces']}").fetchone()[0]
        if twice:
            raise PaperpoolError(
                f"{where}: its traces table gives {twice:,} traces' keys ({', '.join(KEY)}) more than once, which "
                "`paperpool trace export` never writes; give a folder it wrote"
            )
        for path, count, size in counted["events"]:  # before any query reads the events
            if count > MOST_ROWS_PER_BYTE * max(size, 1):
                raise PaperpoolError(
                    f"{printable(str(path))}: holds {count:,} rows in {size:,} bytes, more than {MOST_ROWS_PER_BYTE} a byte, "
                    "which no events table `paperpool trace export` writes holds (each row has its own time); export the "
                    "corpus again with paperpool trace export"
                )


def _parquet_files(folder: Path) -> list[Path]:
    """A table's .parquet files, its partitions' folders walked without following a link:
    a linked file or folder, or the table's folder itself a link, would put another place's
    rows into the summary."""
    if os.path.islink(folder):
        raise PaperpoolError(
            f"{printable(str(folder))}: is a symbolic link; give the folder `paperpool trace export` wrote itself"
        )
    found = []
    for path in walk.files(folder, str(folder)):
        if not utf8_name(path.relative_to(folder)):
            raise PaperpoolError(name_problem(str(path), "rename it with UTF-8 characters (nothing was read)"))
        if path.name.endswith(".parquet") and stat.S_ISREG(os.lstat(path).st_mode):
            _for_duckdb(path)  # refused here, before anything is read
            found.append(path)
    if not found:
        raise PaperpoolError(
            f"{printable(str(folder))}: holds no .parquet file; give a folder that `paperpool trace export` wrote"
        )
    return sorted(found)


# what DuckDB's read_parquet expands in a path, even one of a list of files (tried on DuckDB
# 2.0: `{}`, `!` and `\` are read as they are): a file named `*.parquet` read the links beside it
GLOB = "*?["


def _for_duckdb(path: Path) -> str:
    """The path as DuckDB is given it, which it reads as that one file. A relative path
    starting with `~` (DuckDB's home folder) or with a colon in its first name (`file:`,
    a URL to DuckDB) is made absolute; a path holding a glob character is refused."""
    text = str(path)
    if text.startswith("~") or ":" in text.split(os.sep)[0]:
        text = str(path.absolute())
    glob = next((character for character in text if character in GLOB), None)
    if glob is not None:
        shown = str(path) if glob in str(path) else text
        raise PaperpoolError(
            f"{printable(shown)}: its path holds {glob}, which DuckDB reads as a pattern of file names "
            f"(it would read whichever files match); rename the file or folder without {' '.join(GLOB)} (nothing was read)"
        )
    return text


def _rows(path: Path, table_folder: Path, table: str) -> tuple[int, int]:
    """A file's rows, from its metadata, once its columns are found to be ones `trace
    export` writes (each numeric one is five aggregates of one query: 16,000 columns of
    one row took DuckDB 155 s). Its rows and its bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shown = printable(str(path))
    try:  # opened here, not through a link: pyarrow reads a path such as `file:/x` as a URL
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            metadata = pq.read_metadata(handle)
            schema = metadata.schema.to_arrow_schema()
            names = schema.names
    except (pa.ArrowException, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else (str(exc).strip() or type(exc).__name__)
        reason = reason.splitlines()[0].split(". ")[0].rstrip(".")
        raise PaperpoolError(
            f"{shown}: not a Parquet table `paperpool trace export` wrote ({printable(reason[:200])}); "
            "export the corpus again with paperpool trace export"
        ) from None
    # a partitioned table's fields are its folders' names, which DuckDB reads as columns too
    names += [part.split("=")[0] for part in path.parent.relative_to(table_folder).parts if "=" in part]
    allowed, decisions = _allowed(table), 0
    for name in names:
        if name.startswith(SUBDECISION) and table == "traces":
            decisions += 1
        elif name not in allowed:
            raise PaperpoolError(
                f"{shown}: its column {printable(name[:100])}{'…' if len(name) > 100 else ''} is not one "
                f"`paperpool trace export` writes in "
                f"{_told(table)}; export the corpus again with paperpool trace export"
            )
    if decisions > _most_subdecisions():
        raise PaperpoolError(
            f"{shown}: its {decisions:,} {SUBDECISION}ID columns are more than `paperpool trace export` writes in "
            f"{_told(table)}; export the corpus again with paperpool trace export"
        )
    for column in schema:
        if not _written_by_export(column.type):
            raise PaperpoolError(
                f"{shown}: its column {printable(column.name[:100])} holds {printable(str(column.type)[:100])}, a type "
                "`paperpool trace export` never writes (text, whole numbers, numbers, true or false); export the "
                "corpus again with paperpool trace export"
            )
    # the rows DuckDB reads are those of each row group; the footer's own total is one more
    # number a file may state (a footer listing one group a thousand times held a billion
    # rows against a total of a million)
    grouped = sum(metadata.row_group(k).num_rows for k in range(metadata.num_row_groups))
    if grouped != metadata.num_rows or any(metadata.row_group(k).num_rows < 0 for k in range(metadata.num_row_groups)):
        raise PaperpoolError(
            f"{shown}: its row groups hold {grouped:,} rows where the file says {metadata.num_rows:,}, which no table "
            "`paperpool trace export` writes does; export the corpus again with paperpool trace export"
        )
    _text_within_bounds(path, shown, metadata, schema, table)
    return grouped, size


MOST_TEXT = 1 << 30  # bytes of text a table file may hold once each row has its own, as DuckDB reads it


def _text_within_bounds(path: Path, shown: str, metadata, schema, table: str) -> None:
    """Refuse a file whose text columns the summary reads (a trace's every one; an
    event's key, partitions and type), each row's value written out, pass MOST_TEXT. A
    column written by dictionary holds each value once, however many rows use it, and
    DuckDB copies it for each (a 6.5 kB events table of one 8 MiB type over 60,000 rows
    took 6.6 GB): its dictionary is read as such and its rows' lengths summed. A column
    written plain is as large as its pages say, before they are decompressed."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from .tables import PARTITIONABLE

    read = None if table == "traces" else {*KEY, *PARTITIONABLE, "type"}
    texts = [
        field.name
        for field in schema
        if (pa.types.is_string(_plain(field.type)) or pa.types.is_large_string(_plain(field.type)))
        and (read is None or field.name in read)
    ]
    if not texts:
        return
    positions = {metadata.schema.column(k).name: k for k in range(metadata.num_columns)}
    pages = sum(
        metadata.row_group(g).column(positions[name]).total_uncompressed_size
        for g in range(metadata.num_row_groups)
        for name in texts
        if name in positions
    )
    written = 0
    if pages <= MOST_TEXT:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:  # (read_table imports pyarrow.dataset: 0.15 s)
            columns = pq.ParquetFile(handle, read_dictionary=texts).read(columns=texts).columns
        for column in columns:
            for chunk in column.chunks:  # in Arrow's compute: numpy's conversions import pandas (0.13 s)
                if pa.types.is_dictionary(chunk.type) and len(chunk.dictionary):
                    written += pc.sum(pc.take(pc.binary_length(chunk.dictionary), chunk.indices)).as_py() or 0
    if pages > MOST_TEXT or written > MOST_TEXT:
        raise PaperpoolError(
            f"{shown}: its text, each row's written out, is {max(pages, written):,} bytes, over the {MOST_TEXT:,} "
            "paperpool reads of a table (a long trace_id, file name or value repeated over many rows); shorten them in "
            "the traces, and export the corpus again with paperpool trace export"
        )


def _plain(kind):
    import pyarrow as pa

    return kind.value_type if pa.types.is_dictionary(kind) else kind


# A table `trace export` writes spends some bytes on every row (its time, at least): a file of
# more rows than this a byte is made to hold rows it does not store (2 MB held 100 million, a
# summary of an hour).
MOST_ROWS_PER_BYTE = 10


def _written_by_export(kind) -> bool:
    """Whether a column's Arrow type is one trace export writes: text (plain or by dictionary),
    a whole number, a number, true or false, or nothing (a column with no value)."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return any(
        test(kind)
        for test in (
            pa.types.is_string,
            pa.types.is_large_string,
            pa.types.is_integer,
            pa.types.is_floating,
            pa.types.is_boolean,
            pa.types.is_null,
        )
    )


SUBDECISION = "subdecision_"  # a traces table's column for each sub-decision of the exporting pool's mapping


def _told(table: str) -> str:
    """What a message says a table holds."""
    from .tables import PARTITIONABLE

    if table == "traces":
        return (
            f"a traces table: the columns docs/traces.md lists (the rows), with {SUBDECISION}ID for at most "
            f"{_most_subdecisions():,} sub-decisions (a vocabulary's values)"
        )
    return f"an events table: {', '.join(KEY)}, the partition fields ({', '.join(PARTITIONABLE)}) and the events' columns"


@functools.cache
def _most_subdecisions() -> int:
    """The sub-decisions a pool may map: each is a value of its registry's vocabulary
    (traces.vocabulary), which the registry schema bounds; or the default mapping's."""
    from paperpool.registry.schema import core

    from .mapping import default

    return max(core()["$defs"]["vocabulary"]["properties"]["values"]["maxItems"], len(default().events))


@functools.cache
def _allowed(table: str) -> frozenset[str]:
    """The columns `trace export` writes in a table whatever the pool's mapping, but for
    the sub-decisions' (the traces table's SUBDECISION columns)."""
    from .mapping import Subdecisions
    from .tables import EVENT_COLUMNS, PARTITIONABLE

    if table == "traces":
        return frozenset(column.name for column in rows_columns(Subdecisions({}, {}, "")))
    return frozenset({*KEY, *PARTITIONABLE, *(column.name for column in EVENT_COLUMNS)})


def _summarise(connection, sources: _Sources, by: list[str]) -> Summary:
    traces = sources["traces"]
    types = dict(connection.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {traces})").fetchall())
    for field in by:
        if field not in types:
            usual = ", ".join(column.name for column in IDENTITY if column.name not in _SKIPPED)
            raise PaperpoolError(
                f"--by {field}: not a column of the traces table; "
                f"{suggest(field, list(types), f'use {usual} or a measure (docs/traces.md: the rows)')}"
            )
        if field in ROW_NAMES:
            raise PaperpoolError(
                f"--by {field}: the summary's rows name their own {', '.join(ROW_NAMES)} so, and a group of that name "
                "would lose its value; group by another column"
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
                    **dict(zip(by, map(_group, row[: len(by)]), strict=True)),
                    "measure": measure,
                    **dict(zip(STATISTICS, map(_rounded, numbers), strict=True)),
                }
            )
    return Summary(by, metrics, _event_types(connection, sources, by))


# The names a summary row gives its own values (a measure's, an event type's): no group's.
ROW_NAMES = ("measure", *STATISTICS, "type", "events", "share")


def _event_types(connection, sources: _Sources, by: list[str]) -> list[dict]:
    """Events by type, and each type's share of the group's events. Grouped by a field
    the events table carries (its trace's key, the partition columns), it is read alone;
    by another, it is joined to its trace's row."""
    events, traces = sources["events"], sources["traces"]
    from .tables import EVENT_COLUMNS

    carried = set(_columns(connection, events)) - {column.name for column in EVENT_COLUMNS}  # its trace's key, partitions
    if set(by) <= carried:  # (an event's own `tokens` is not its trace's)
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
        {
            **dict(zip(by, map(_group, found[:n]), strict=True)),
            "type": _group(found[n]),  # a stranger's table may hold any text there
            "events": found[n + 1],
            "share": _rounded(found[n + 2]),
        }
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
    query = f"SELECT file, line{groups} FROM {_Sources(folder, limits or default_limits())['traces']} WHERE valid"
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
        {
            **dict(zip(by, map(_group, group), strict=True)),
            "field": name,
            "value": _text(kept),
            "chars": _chars(kept),
            "traces": traces,
        }
        for (group, name, kept), traces in ranked
    ]


KEPT_CHARS = 200  # of a counted value or a group's: what a corpus page shows of it


def _group(value):
    """A group's value as every row of the summary names it: past KEPT_CHARS, its first
    characters, how many it has more and a digest of the whole (written once per measure,
    60 of them, a group of 32,000 characters made 822 MB of summary from 21 kB of gzip;
    without the digest, two values alike in their first characters and their length were
    one group on the corpus page)."""
    if isinstance(value, str) and len(value) > KEPT_CHARS:
        digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
        return f"{value[:KEPT_CHARS]}… ({len(value) - KEPT_CHARS:,} characters more, #{digest})"
    return value


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

    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:  # nested past the 254 levels orjson writes (it reads 1,024)
        return TOO_DEEP


TOO_DEEP = "(a value nested too deep to show)"  # what is counted for it


def _sortable(values: tuple) -> tuple:
    """Groups and values in order, None (not given) last, whatever their types."""
    return tuple((value is None, str(value)) for value in values)


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
