"""A corpus as tables: the rows of `trace metrics` (JSON Lines, CSV or Parquet) and the
Parquet tables of `trace export` (traces, events, edges, rewards).

Workers measure a batch of traces and encode it themselves (text, or an Arrow record
batch), so that this process only reads the corpus and writes what comes back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import orjson

from paperpool.files import csvcells
from paperpool.files.problems import PaperpoolError, printable
from paperpool.files.yamlio import written_as_it_comes

from . import corpus, rows, source, validation, workers
from .batch import measure as measure_rows
from .limits import Limits
from .loading import no_gc_pauses
from .mapping import Subdecisions
from .rows import Column

FORMATS = ("jsonl", "csv", "parquet")
BATCH = 200  # traces a worker measures at a time: large enough that handing it over costs little

EVENT_COLUMNS = (
    Column("event", "string", "the event's id"),
    Column("t", "float", "its time, in the trace's time unit"),
    Column("type", "string", "its type"),
    Column("agent", "string", "the agent that acts"),
    Column("role", "string", "the role it plays"),
    Column("from", "string", "a message's or return's sender, when not the agent"),
    Column("to", "string", "whom a spawn creates or a message or return goes to"),
    Column("tool", "string", "the tool a call calls or a result comes from"),
    Column("call", "string", "the tool call a result answers"),
    Column("decision", "string", "the sub-decision the event takes, when it says"),
    Column("reason", "string", "why (a stop's, a safety event's)"),
    Column("tokens", "float", "its cost in tokens"),
    Column("seconds", "float", "its cost in seconds"),
)
EDGE_COLUMNS = (
    Column("src", "string", "the event the edge leaves"),
    Column("dst", "string", "the event it reaches"),
    Column("type", "string", "the edge's type"),
)
REWARD_COLUMNS = (
    Column("event", "string", "the event the reward is attached to; null for one the trace declares for the run"),
    Column("unit", "string", "its credit unit; null for a run's declared reward"),
    Column("channel", "string", "its channel"),
    Column("value", "float", "the reward"),
    Column("target", "string", "who receives it, when not the event's agent"),
)
KEY = ("file", "line", "trace_id")  # which trace a row of events, edges or rewards belongs to
_AS_GIVEN = [
    column.name for column in EVENT_COLUMNS if column.name not in ("event", "tokens", "seconds")
]  # an event's own fields
_EDGE_FIELDS = tuple(column.name for column in EDGE_COLUMNS)
_REWARD_FIELDS = tuple(column.name for column in REWARD_COLUMNS if column.name != "event")


def export_columns(mapping: Subdecisions, partition: tuple[str, ...] = ()) -> dict[str, list[Column]]:
    """Each table of `trace export` and its columns."""
    traces = rows.columns(mapping)
    by_name = {column.name: column for column in traces}
    keys = [_repeated(by_name[name]) for name in (*KEY, *(p for p in partition if p not in KEY))]
    return {
        "traces": traces,
        "events": keys + list(EVENT_COLUMNS),
        "edges": keys + list(EDGE_COLUMNS),
        "rewards": keys + list(REWARD_COLUMNS),
    }


def _repeated(column: Column) -> Column:
    """A trace's key as its events', edges' and rewards' tables hold it: text written by
    dictionary, once per batch, however many rows repeat it (each row held a copy: a
    trace_id of a million characters over 5,000 events took 3.2 GB)."""
    return Column(column.name, "key", column.about) if column.type == "string" else column


# ---- in the workers -------------------------------------------------------------------


@dataclass
class Done:
    payload: object  # bytes (jsonl, csv) or {table: Arrow record batch}
    problems: list[str] = field(default_factory=list)
    traces: int = 0


_job: dict = {}  # a worker's settings: the mapping, the format, the columns


def _setup_job(settings: dict) -> None:
    _job.clear()
    _job.update(settings)


def measure_batch(piece: list[corpus.Record] | corpus.Lines) -> Done:
    with no_gc_pauses():  # the records, rows and Arrow columns of a piece hold no cycles: nothing for the collector
        batch = corpus.unpack(piece)
        measured = measure_rows(batch, _job["mapping"], _job.get("limits"))
        return Done(encode_table(measured.table, _job["fmt"], _job["columns"]), measured.problems, len(batch))


def export_batch(piece: list[corpus.Record] | corpus.Lines) -> Done:
    batch = corpus.unpack(piece)
    tables = _job["tables"]
    measured = measure_rows(batch, _job["mapping"], _job.get("limits"))
    found: dict[str, list[dict]] = {name: [] for name in tables if name != "traces"}
    for k, record in enumerate(batch):
        if measured.table["valid"][k]:  # read again for its events: the rows keep none of them
            key = {name: measured.table[name][k] for name in _job["keys"]}
            _parts(source.from_bytes(record.data, validation.CHUNK_ABOVE_BYTES, source.CHUNK), key, found)
    batches = {"traces": encode_table(measured.table, "parquet", tables["traces"])}
    batches |= {name: encode(rows_of, "parquet", tables[name]) for name, rows_of in found.items()}
    return Done(batches, measured.problems, len(batch))


def _parts(trace_source, key: dict, found: dict) -> None:
    """A valid trace's events, edges and rewards as rows."""
    for _, events in trace_source.chunks("events"):
        for event in events:
            cost = event.get("cost") if isinstance(event.get("cost"), dict) else {}
            found["events"].append(
                {
                    **key,
                    "event": event.get("id"),
                    **{name: event.get(name) for name in _AS_GIVEN},
                    "tokens": cost.get("tokens"),
                    "seconds": cost.get("seconds"),
                }
            )
            given = event.get("rewards")  # a trace in the artifact's format may hold anything here (a warning)
            for reward in given if isinstance(given, list) else ():
                if isinstance(reward, dict):
                    found["rewards"].append({**key, "event": event.get("id"), **_own(reward, _REWARD_FIELDS)})
    for _, edges in trace_source.chunks("edges"):
        found["edges"].extend({**key, **_own(edge, _EDGE_FIELDS)} for edge in edges if isinstance(edge, dict))
    declared = trace_source.top.get("rewards")
    if isinstance(declared, dict):
        found["rewards"].extend({**key, "channel": channel, "value": value} for channel, value in declared.items())


def _own(item: dict, fields: tuple[str, ...]) -> dict:
    """An edge's or a reward's own fields, which no key of it can override (a trace in
    the artifact's format may give an edge or a reward a `file` or a `trace_id`)."""
    return {name: item.get(name) for name in fields}


def encode(found: list[dict], fmt: str, columns: list[Column]):
    """Rows (dicts) of what traces give (their events, edges, rewards) in `fmt`: text, or
    an Arrow record batch, where a value of another type than its column's is null."""
    if fmt == "parquet":
        return encode_table(
            {column.name: [_typed(row.get(column.name), column.type) for row in found] for column in columns}, fmt, columns
        )
    return encode_table({column.name: [row.get(column.name) for row in found] for column in columns}, fmt, columns)


# What orjson leaves raw in a string and a terminal may act on or show reordered: DEL, the C1
# controls (U+009B starts an escape sequence), the line and paragraph separators and the
# bidirectional controls. Each is written \uXXXX, which reads back as the same text.
_ACTIVE = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]")


def _escaped(match: re.Match) -> bytes:
    return b"\\u%04x" % ord(match.group().decode("utf-8"))


def encode_table(table: dict[str, list], fmt: str, columns: list[Column]):
    """Rows given as columns (name -> one value per row) in `fmt`."""
    names = [column.name for column in columns]
    if fmt == "jsonl":
        text = b"".join(
            orjson.dumps(dict(zip(names, values, strict=True))) + b"\n"
            for values in zip(*(table[name] for name in names), strict=True)
        )
        return _ACTIVE.sub(_escaped, text)  # the same object back when there is none
    if fmt == "csv":
        return csvcells.table(zip(*(table[name] for name in names), strict=True)).encode("utf-8")
    import pyarrow as pa

    schema = arrow_schema(columns)
    # every value is of its column's type: the measures as computed, a trace's own fields as rows.identity fits them
    return pa.RecordBatch.from_arrays(
        [_array(table[column.name], field.type) for column, field in zip(columns, schema, strict=True)], schema=schema
    )


def _array(values: list, kind):
    """A column's values as Arrow's: a key's each distinct value once, its rows pointing to
    it (the same text object per trace, found by identity before it is hashed)."""
    import pyarrow as pa

    if not pa.types.is_dictionary(kind):
        return pa.array(values, type=kind)
    distinct: dict = {}
    codes = [None if value is None else distinct.setdefault(value, len(distinct)) for value in values]
    return pa.DictionaryArray.from_arrays(pa.array(codes, type=kind.index_type), pa.array(list(distinct), type=kind.value_type))


_PY_TYPES = {"string": (str,), "key": (str,), "int": (int,), "float": (int, float), "bool": (bool,)}


def _typed(value, kind: str):
    """What a column of `kind` keeps of a value (a trace that declares no schema may hold
    another type in a field): the value, or null."""
    if value is None or isinstance(value, bool) != (kind == "bool") or not isinstance(value, _PY_TYPES[kind]):
        return None
    return float(value) if kind == "float" else value


def arrow_schema(columns: list[Column]):
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "key": pa.dictionary(pa.int32(), pa.string()),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
    }
    return pa.schema([pa.field(column.name, types[column.type]) for column in columns])


def csv_header(columns: list[Column]) -> bytes:
    return csvcells.table([], [column.name for column in columns]).encode("utf-8")


# ---- in this process ------------------------------------------------------------------


@dataclass
class Outcome:
    traces: int = 0
    invalid: int = 0


def run(
    work: Callable,
    inputs: list[str],
    settings: dict,
    take: Callable[[Done], None],
    report: Callable[[str], None],
    strict: bool,
    jobs: int | None,
    engine: str = "local",
    before: str = "nothing was written",
) -> Outcome:
    """work over every batch of the corpus, each result given to `take` in order; problem
    lines to `report`; with `strict`, an error at the first invalid trace, its problem
    line the only one reported (`before`: what became of the rows before it). The engine
    runs the batches: local processes, or Ray Data (engine "ray")."""
    paths = corpus.expand(inputs)
    outcome = Outcome()
    if engine == "ray":
        from . import raydata

        results = raydata.ordered_map(work, paths, BATCH, jobs, _setup_job, settings)
    else:
        pieces = corpus.pieces(paths, BATCH, settings.get("limits"))
        results = workers.ordered_map(work, pieces, jobs or workers.cores(), _setup_job, settings)
    try:
        for done in results:
            if strict and done.problems:
                report(done.problems[0])
                raise PaperpoolError(f"the trace above is not valid; --strict stops at the first invalid trace ({before})")
            for line in done.problems:
                report(line)
            outcome.traces += done.traces
            outcome.invalid += len(done.problems)
            take(done)
    except workers.WorkerLost as lost:
        raise PaperpoolError(_lost(lost, before)) from None
    if not outcome.traces:  # "0 traces" and exit status 0 would pass for success; raised before any output is put in place
        raise PaperpoolError(_no_trace(inputs))
    return outcome


def _no_trace(inputs: list[str]) -> str:
    shown = ", ".join(printable(given) for given in inputs[:3]) + (f" and {len(inputs) - 3:,} more" if len(inputs) > 3 else "")
    return (
        f"{shown}: {'holds' if len(inputs) == 1 else 'hold'} no trace, only blank lines or none; a corpus is trace files, "
        "or JSON Lines of one trace per line (plain, .gz or .zst); nothing was written"
    )


def _lost(lost: workers.WorkerLost, before: str) -> str:
    """The line for a batch that ran out of memory: where it begins, and what to do."""
    what = "its process was killed (the system kills one when memory runs out)" if lost.killed else "it ran out of memory"
    return (
        f"{corpus.where(lost.batch)}: measuring the traces from this line on, {what}, and {before}; a trace needs "
        "some five times its bytes of memory in each of the --jobs processes: give fewer --jobs or more memory, "
        "or split the longest traces"
    )


ROW_GROUP = 64 * 1024  # rows a Parquet row group holds: one per batch of the workers would be hundreds of small ones


class ParquetSink:
    """A Parquet writer for record batches, to a path or an open binary file; zstd, as
    the readers expect by now. pyarrow's ParquetWriter, writing a row group of ROW_GROUP
    rows at a time (each row group costs per column, whatever its size)."""

    def __init__(self, path, columns: list[Column]):
        import pyarrow.parquet as pq

        self.schema = arrow_schema(columns)
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self.pending: list = []
        self.rows = 0

    def write_batch(self, batch) -> None:
        self.pending.append(batch)
        self.rows += batch.num_rows
        if self.rows >= ROW_GROUP:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if self.pending:
            self.writer.write_table(pa.Table.from_batches(self.pending, schema=self.schema), row_group_size=ROW_GROUP)
        self.pending, self.rows = [], 0

    def close(self) -> None:
        self.flush()
        self.writer.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def metrics_table(
    inputs: list[str],
    fmt: str,
    output: Path | None,
    mapping: Subdecisions,
    report: Callable[[str], None],
    strict: bool = False,
    jobs: int | None = None,
    out=None,
    engine: str = "local",
    limits: Limits | None = None,
) -> Outcome:
    """`trace metrics` over a corpus: one row per trace, in `fmt`, to `output` (or `out`,
    standard output's binary stream, for text formats); `limits`: the corpus's and its
    traces' (the defaults without)."""
    columns = rows.columns(mapping)
    settings = {"mapping": mapping, "fmt": fmt, "columns": columns, "limits": limits}

    def measure(take: Callable[[Done], None]) -> Outcome:
        before = "the rows before it are on standard output" if output is None else "nothing was written"
        return run(measure_batch, inputs, settings, take, report, strict, jobs, engine, before)

    if fmt == "parquet":
        with written_as_it_comes(output) as handle, ParquetSink(handle, columns) as sink:
            return measure(lambda done: sink.write_batch(done.payload))
    header = csv_header(columns) if fmt == "csv" else b""
    if output is None:
        shown = _for_a_terminal if fmt == "csv" and out.isatty() else bytes
        first = [header]  # written with the first rows: a corpus of no trace writes nothing

        def write(done: Done) -> None:
            if done.payload:
                out.write(first.pop() + shown(done.payload) if first else shown(done.payload))

        return measure(write)
    with written_as_it_comes(output) as handle:
        handle.write(header)
        return measure(lambda done: handle.write(done.payload))


def _for_a_terminal(data: bytes) -> bytes:
    """CSV rows as a terminal may show them: what it would act on (an escape sequence, a
    bidirectional control) written as an escape, line breaks kept. JSON Lines says such
    characters as JSON escapes already; a CSV written to a file keeps them as they are."""
    return printable(data.decode("utf-8"), lines=True).encode("utf-8")


TABLES = ("traces", "events", "edges", "rewards")


def export_tables(
    inputs: list[str],
    folder: Path,
    mapping: Subdecisions,
    report: Callable[[str], None],
    partition: tuple[str, ...] = (),
    strict: bool = False,
    jobs: int | None = None,
    engine: str = "local",
    limits: Limits | None = None,
) -> Outcome:
    """`trace export`: the corpus as Parquet tables in `folder` (made whole, then put in
    place): `TABLE/part-0.parquet` each, or, partitioned, `TABLE/KEY=VALUE/.../part-N.parquet`."""
    from paperpool.files.yamlio import new_folder

    tables = export_columns(mapping, partition)
    keys = [column.name for column in tables["events"] if column not in EVENT_COLUMNS]
    settings = {"mapping": mapping, "tables": tables, "keys": keys, "limits": limits}
    with new_folder(folder) as staging:
        sinks = _Sinks(staging, tables, partition)
        try:
            return run(export_batch, inputs, settings, sinks.write, report, strict, jobs, engine)
        finally:
            sinks.close()


class _Sinks:
    """Where each table's record batches go: one Parquet file per table, or hive-style
    partition folders, one file per batch and partition."""

    def __init__(self, folder: Path, tables: dict[str, list[Column]], partition: tuple[str, ...]):
        self.folder, self.tables, self.partition = folder, tables, partition
        self.writers = {}
        self.batches = 0
        self.empty = set(tables)  # partitioned tables no row has reached yet
        self.partitions: set[tuple] = set()  # the partitions' values written so far
        self.files = 0  # the files written, at most
        for name, columns in tables.items():
            (folder / name).mkdir()
            if not partition:
                self.writers[name] = ParquetSink(folder / name / "part-0.parquet", columns)

    def write(self, done: Done) -> None:
        if self.partition:
            _refuse_unnamable(done.payload["traces"], self.partition)
            self._count_partitions(done.payload["traces"])
        for name, batch in done.payload.items():
            if not self.partition:
                self.writers[name].write_batch(batch)
            elif batch.num_rows:
                import pyarrow.dataset as ds

                self.empty.discard(name)
                ds.write_dataset(
                    batch,
                    self.folder / name,
                    format="parquet",
                    partitioning=list(self.partition),
                    partitioning_flavor="hive",
                    basename_template=f"part-{self.batches}-{{i}}.parquet",
                    existing_data_behavior="overwrite_or_ignore",
                )
        self.batches += 1

    def _count_partitions(self, traces) -> None:
        """A folder and its files per partition: a corpus whose every trace has a run of
        its own would make one each (105,000 traces in 582 kB of gzip: 210,000 files). And
        a file per table for each partition a batch holds: runs interleaved across the
        corpus made some three files a trace (20,000 traces, 140 kB of gzip: 60,001 files)."""
        columns = [traces.column(name).to_pylist() for name in self.partition]
        for k, values in enumerate(zip(*columns, strict=True)):
            self.partitions.add(values)
            if len(self.partitions) > MAX_PARTITIONS:
                where = corpus.Record(traces.column("file")[k].as_py(), traces.column("line")[k].as_py(), None).label
                raise PaperpoolError(
                    f"{where}: --partition-by {','.join(self.partition)}: past {MAX_PARTITIONS:,} partitions, "
                    "a folder of files each; partition by a field with fewer values"
                )
        self.files += len(set(zip(*columns, strict=True))) * len(self.tables)
        if self.files > MAX_FILES:
            where = corpus.Record(traces.column("file")[0].as_py(), traces.column("line")[0].as_py(), None).label
            raise PaperpoolError(
                f"{where}: --partition-by {','.join(self.partition)}: past {MAX_FILES:,} files (one for each table, "
                f"each batch of {BATCH} traces and each partition the batch holds); put the corpus's traces in the "
                "order of the partition's fields, or partition by fewer"
            )

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()
        for name in sorted(self.empty) if self.partition else ():  # a table with no rows is still one that readers find
            with ParquetSink(self.folder / name / "part-0.parquet", self.tables[name]):
                pass


PARTITIONABLE = ("run", "step", "group", "task_id", "system", "topology")
MAX_NAME = 255  # bytes of a folder's name on common file systems
MAX_PARTITIONS = 1_000
MAX_FILES = 20_000  # of a partitioned export: each batch writes a file per table and partition it holds
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"  # the folder Arrow writes for a missing value, and reads as one


def _refuse_unnamable(traces, partition: tuple[str, ...]) -> None:
    """A partition value that cannot name a folder (over MAX_NAME bytes once
    percent-encoded, or holding a control character, which would cut or merge it) is an
    error that names the trace and the field, before any file of its batch is written."""
    from urllib.parse import quote

    for name in partition:
        for k, value in enumerate(traces.column(name).to_pylist()):
            if not isinstance(value, str):
                continue
            where = corpus.Record(traces.column("file")[k].as_py(), traces.column("line")[k].as_py(), None).label
            if len(quote(value, safe="")) + len(name) + 1 > MAX_NAME or not value.isprintable():
                raise PaperpoolError(
                    f"{where}: /{name}: cannot name a partition's folder (too long once encoded, or "
                    f"a control character); --partition-by another field, or shorten the {name}"
                )
            if value == HIVE_NULL:
                raise PaperpoolError(
                    f"{where}: /{name}: '{HIVE_NULL}' names the folder of the traces without a {name}, "
                    f"and readers would take this one for missing; --partition-by another field, or "
                    f"rename the {name}"
                )


def partition_fields(given: str) -> tuple[str, ...]:
    """--partition-by's fields, each a trace field that identifies a share of the corpus."""
    from paperpool.files.problems import suggest

    fields = tuple(dict.fromkeys(part.strip() for part in given.split(",") if part.strip()))  # each once
    for name in fields:
        if name not in PARTITIONABLE:
            choices = f"use {', '.join(PARTITIONABLE)}"
            raise PaperpoolError(
                f"--partition-by {name}: not a trace field to partition by; {suggest(name, PARTITIONABLE, choices)}"
            )
    return fields
