"""`trace summary TABLES` over a folder a stranger made (issue 39's seventh review): a file
that is no Parquet table, a name DuckDB reads as a glob pattern, a table of thousands of
columns, a folder nested 1,500 deep: each is one line naming the file, exit status 1."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ..conftest import REPO, remove_deep

SWARM = REPO / "traces" / "swarm-six-workers.json"
DEBATE = REPO / "traces" / "debate-two-rounds.json"
AGAIN = "export the corpus again with paperpool trace export\n"
TRACES_HOLD = (
    "a traces table: the columns docs/traces.md lists (the rows), with subdecision_ID for at most 200 "
    "sub-decisions (a vocabulary's values)"
)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """An export of two traces, made once: each test copies it."""
    from click.testing import CliRunner

    from paperpool.cli.commands import cli

    folder = tmp_path_factory.mktemp("summary-hostile") / "tables"
    result = CliRunner().invoke(cli, ["trace", "export", str(SWARM), str(DEBATE), "-o", str(folder)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return folder


def _copy(exported: Path, tmp_path: Path, name: str = "t") -> Path:
    shutil.copytree(exported, tmp_path / name)
    return tmp_path / name


def _traces(result) -> int:
    return next(row for row in json.loads(result.output)["metrics"] if row["measure"] == "events")["traces"]


def _truncated_footer(data: bytes) -> bytes:
    """The file with the second half of its footer's metadata cut out, the length fixed."""
    length = struct.unpack("<I", data[-8:-4])[0]
    start = len(data) - 8 - length
    return data[:start] + data[start : start + length // 2] + struct.pack("<I", length // 2) + b"PAR1"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"garbage\n", "Parquet magic bytes not found in footer"),
        (b"", "Parquet file size is 0 bytes"),
        (None, "Couldn't deserialize thrift: .*"),  # what thrift says depends on the bytes cut
    ],
    ids=["garbage", "empty", "truncated-footer"],
)
def test_a_file_that_is_no_parquet_table_is_one_line_naming_it(run, exported, tmp_path, content, reason):
    """pyarrow's errors were an internal error, and a cut footer `Error: success` naming no file."""
    folder = _copy(exported, tmp_path)
    own = (folder / "traces" / "part-0.parquet").read_bytes()
    (folder / "traces" / "bad.parquet").write_bytes(_truncated_footer(own) if content is None else content)
    result = run("trace", "summary", "t", cwd=tmp_path)
    assert result.exit_code == 1
    assert re.fullmatch(
        re.escape("Error: t/traces/bad.parquet: not a Parquet table `paperpool trace export` wrote (")
        + reason
        + re.escape("); " + AGAIN),
        result.output,
    ), result.output


GLOB_LINE = (
    "which DuckDB reads as a pattern of file names (it would read whichever files match); "
    "rename the file or folder without * ? [ (nothing was read)\n"
)


@pytest.mark.parametrize("name", ["*.parquet", "part-?.parquet", "[lp]*.parquet"])
def test_a_file_named_as_a_glob_is_refused_before_duckdb_reads_the_link_it_matches(run, exported, tmp_path, name):
    """DuckDB expands a glob in each path of read_parquet's list: `traces/*.parquet` read the
    linked leak.parquet beside it, another place's rows, past the row count's check."""
    folder = _copy(exported, tmp_path)
    _copy(exported, tmp_path, "outside")
    (folder / "traces" / "part-0.parquet").rename(folder / "traces" / name)
    (folder / "traces" / "leak.parquet").symlink_to(tmp_path / "outside" / "traces" / "part-0.parquet")
    result = run("trace", "summary", "t", cwd=tmp_path)
    glob = next(character for character in name if character in "*?[")
    assert (result.exit_code, result.output) == (1, f"Error: t/traces/{name}: its path holds {glob}, " + GLOB_LINE)


def test_a_folder_named_as_a_glob_is_refused(run, exported, tmp_path):
    folder = _copy(exported, tmp_path)
    _copy(exported, tmp_path, "outside")
    (folder / "traces" / "*").mkdir()
    (folder / "traces" / "part-0.parquet").rename(folder / "traces" / "*" / "part-0.parquet")
    (folder / "traces" / "elsewhere").symlink_to(tmp_path / "outside" / "traces")
    result = run("trace", "summary", "t", cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, "Error: t/traces/*/part-0.parquet: its path holds *, " + GLOB_LINE)


@pytest.mark.parametrize("name", ["~", "file:"])
def test_a_folder_duckdb_would_read_as_home_or_a_url_is_read_where_it_is(run, exported, tmp_path, monkeypatch, name):
    """DuckDB reads `~/traces/...` in the home folder and `file:/traces/...` at the root:
    the folder's own tables are summarised, not another place's."""
    _copy(exported, tmp_path, name)
    home = tmp_path / "home"
    home.mkdir()
    one = home / "one"  # the home folder's tables: one trace, not two
    assert run("trace", "export", str(SWARM), "-o", str(one), cwd=tmp_path).exit_code == 0
    shutil.move(one / "traces", home / "traces")
    shutil.move(one / "events", home / "events")
    monkeypatch.setenv("HOME", str(home))
    result = run("trace", "summary", name, "--format", "json", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert _traces(result) == 2


def _widened(folder: Path, columns: dict[str, pa.Array]) -> None:
    """The traces table with `columns` added to its rows."""
    path = folder / "traces" / "part-0.parquet"
    table = pq.read_table(path)
    for name, values in columns.items():
        table = table.append_column(name, values)
    pq.write_table(table, path)


def test_a_traces_table_of_thousands_of_columns_is_refused_before_any_query(run, exported, tmp_path):
    """8,000 numeric columns of one row were 40,000 aggregates in one query: 32 s, 1 GB, then
    DuckDB out of memory; 16,000 held SIGTERM for 155 s. A column no export writes is refused
    from the files' metadata."""
    folder = _copy(exported, tmp_path)
    table = pa.table(
        {"file": ["f"], "line": pa.array([0], pa.int64()), "trace_id": ["t"], "valid": [True]}
        | {f"m{index}": [float(index)] for index in range(8000)}
    )
    pq.write_table(table, folder / "traces" / "part-0.parquet")
    result = run("trace", "summary", "t", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: t/traces/part-0.parquet: its column m0 is not one `paperpool trace export` writes in {TRACES_HOLD}; " + AGAIN,
    )


def test_sub_decision_columns_of_another_pool_are_summarised_up_to_what_a_registry_maps(run, exported, tmp_path):
    """An export made in another pool has its own sub-decisions' columns: any are read, up
    to the most a registry's vocabulary holds (200, with the export's own 5)."""
    folder = _copy(exported, tmp_path)
    rows = pq.read_metadata(folder / "traces" / "part-0.parquet").num_rows
    _widened(folder, {f"subdecision_X{index}": pa.array([1] * rows, pa.int64()) for index in range(195)})
    result = run("trace", "summary", "t", "--format", "json", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert _traces(result) == 2
    _widened(folder, {"subdecision_Y": pa.array([1] * rows, pa.int64())})
    result = run("trace", "summary", "t", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        "Error: t/traces/part-0.parquet: its 201 subdecision_ID columns are more than `paperpool trace export` "
        f"writes in {TRACES_HOLD}; " + AGAIN,
    )


def test_a_partition_folder_export_never_writes_is_a_column_refused(run, exported, tmp_path):
    """DuckDB reads each `KEY=VALUE` folder as a column: only the partition fields are."""
    folder = _copy(exported, tmp_path)
    (folder / "events" / "score=7").mkdir()
    (folder / "events" / "part-0.parquet").rename(folder / "events" / "score=7" / "part-0.parquet")
    result = run("trace", "summary", "t", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        "Error: t/events/score=7/part-0.parquet: its column score is not one `paperpool trace export` writes in an "
        "events table: file, line, trace_id, the partition fields (run, step, group, task_id, system, topology) "
        "and the events' columns; " + AGAIN,
    )


@pytest.mark.slow
def test_a_traces_folder_1500_levels_deep_is_one_line(run, tmp_path):
    """Whether a folder is an export was asked of Path.rglob, which recursed once a level."""
    path = str(tmp_path / "deep" / "traces")
    os.makedirs(path)
    shutil.copy(SWARM, tmp_path / "deep")
    for _ in range(1500):  # a level at a time, and removed likewise: both recurse otherwise
        path = os.path.join(path, "d")
        os.mkdir(path)
    try:
        result = run("trace", "summary", "deep", cwd=tmp_path)
    finally:
        remove_deep(tmp_path / "deep")
    assert (result.exit_code, result.output) == (
        1,
        f"Error: deep/traces{'/d' * 65}: folders nested more than 64 levels deep; flatten them (paperpool looks no deeper)\n",
    )


def _retyped(exported: Path, into: Path, table: str, column: str, values) -> Path:
    """A copy of the export whose `column` of `table` holds `values` (one per row)."""
    shutil.copytree(exported, into)
    path = into / table / "part-0.parquet"
    read = pq.read_table(path)
    array = values(read.num_rows)
    pq.write_table(read.set_column(read.schema.get_field_index(column), pa.field(column, array.type), array), path)
    return into


@pytest.mark.parametrize(
    ("table", "column", "values", "shown"),
    [
        ("traces", "system", lambda n: pa.array([__import__("datetime").date(2020, 1, 1)] * n), "date32[day]"),
        ("events", "type", lambda n: pa.array([b"\xff\x00abc"] * n), "binary"),
        ("traces", "system", lambda n: pa.array([["A" * 1000] * 100] * n), "list<element: string>"),
    ],
    ids=["date", "binary", "list"],
)
def test_a_column_of_a_type_export_never_writes_is_refused(run, exported, tmp_path, table, column, values, shown):
    """A date or bytes reached `--format json` as an internal error; a list of long text
    was written whole once per measure (24 kB of Parquet, 542 MB of summary): the eleventh
    review. Every column must be of a type export writes."""
    folder = _retyped(exported, tmp_path / "retyped", table, column, values)
    result = run("trace", "summary", str(folder), "--by", "system", "--format", "json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {folder / table / 'part-0.parquet'}: its column {column} holds {shown}, a type `paperpool trace export` "
        f"never writes (text, whole numbers, numbers, true or false); {AGAIN}",
    )


def test_a_key_value_folder_above_the_tables_is_refused(run, exported, tmp_path):
    """DuckDB read `agents=999` above the tables as a column of every row (the eleventh review)."""
    folder = tmp_path / "agents=999" / "tables"
    shutil.copytree(exported, folder)
    result = run("trace", "summary", str(folder), cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {folder}: its path holds the folder agents=999, which DuckDB would read as a column of every row; give "
        "the tables a path without = in its folders' names (nothing was read)\n",
    )


def test_an_events_table_of_rows_it_does_not_store_is_refused_before_it_is_read(run, exported, tmp_path):
    """Three million events (within the two traces' limit) in a few kB, dictionary-encoded
    runs of one row: a summary of 2 MB such files ran over a minute (the eleventh review);
    a table export writes spends bytes on every row."""
    folder = tmp_path / "runs"
    shutil.copytree(exported, folder)
    first = pq.read_table(folder / "events" / "part-0.parquet").slice(0, 1).to_pylist()[0]
    count = 3_000_000
    zeros = pa.array([0] * count, pa.int8())
    columns = {
        name: pa.DictionaryArray.from_arrays(zeros, pa.array([first[name]])) for name in ("file", "trace_id", "event", "type")
    }
    pq.write_table(pa.table(columns), folder / "events" / "part-0.parquet", compression="zstd")
    size = (folder / "events" / "part-0.parquet").stat().st_size
    result = run("trace", "summary", str(folder), cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {folder / 'events' / 'part-0.parquet'}: holds {count:,} rows in {size:,} bytes, more than 10 a byte, "
        "which no events table `paperpool trace export` writes holds (each row has its own time); " + AGAIN
    )


def test_a_footer_listing_a_row_group_many_times_is_refused(run, exported, tmp_path):
    """The rows-per-byte and row limits were held to the footer's own total, one number
    a file states: a footer listing one row group a thousand times held a billion rows
    against a total of a million, and DuckDB read them all (the twelfth review)."""
    from .parquet_footer import row_groups_repeated

    folder = tmp_path / "repeated"
    shutil.copytree(exported, folder)
    path = folder / "events" / "part-0.parquet"
    path.write_bytes(row_groups_repeated(path.read_bytes(), 100))
    rows = pq.read_metadata(path).num_rows
    assert sum(pq.read_metadata(path).row_group(k).num_rows for k in range(100)) == 100 * rows
    result = run("trace", "summary", str(folder), cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {path}: its row groups hold {100 * rows:,} rows where the file says {rows:,}, which no table "
        f"`paperpool trace export` writes does; {AGAIN}",
    )


def test_partition_values_are_read_as_export_wrote_them(run, tmp_path):
    """Round fifteen: DuckDB guessed each key=value folder's type, so runs named 2024-1-1
    and 2024-01-01 became one date (their groups merged, and the JSON summary crashed on
    the date). A partition's value is now text, and a step a whole number."""
    schema_id = "urn:paperpool:schema:orchestration-trace:1.0.0"

    def trace(number: int, run_name: str, events: int) -> str:
        made = [{"id": f"e{k}", "t": k, "type": "message", "agent": "a", "to": "b"} for k in range(events)]
        return json.dumps(
            {"schema": schema_id, "trace_id": f"t{number}", "run": run_name, "step": number, "events": made, "edges": []}
        )

    (tmp_path / "runs.jsonl").write_text(trace(0, "2024-1-1", 2) + "\n" + trace(1, "2024-01-01", 9) + "\n", encoding="utf-8")
    for by in ("run", "step"):
        assert run("trace", "export", "runs.jsonl", "-o", f"by-{by}", "--partition-by", by, cwd=tmp_path).exit_code == 0
        result = run("trace", "summary", f"by-{by}", "--by", by, "--format", "json", cwd=tmp_path)
        assert result.exit_code == 0, result.output
        events = {row[by]: row["max"] for row in json.loads(result.output)["metrics"] if row["measure"] == "events"}
        assert events == ({"2024-1-1": 2.0, "2024-01-01": 9.0} if by == "run" else {0: 2.0, 1: 9.0})
