"""Trace corpora: `trace metrics`, `export` and `summary` over files, folders, glob
patterns and JSON Lines (plain, gzip, zstd). Each row is checked against the single-trace
command on the same trace (its own path through the code), the Parquet tables are read
back by DuckDB and pandas, and the summary's statistics are recomputed here with numpy."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import shutil
from dataclasses import replace
from pathlib import Path

import duckdb
import numpy as np
import orjson
import pandas as pd
import pytest
import zstandard

from paperpool.traces import limits, rows, schema, synth
from paperpool.traces.mapping import default

from ..conftest import REPO, descendants, edit
from .artifact_traces import ARTIFACT_ASKS

SWARM = REPO / "traces" / "swarm-six-workers.json"
BAD_LINE = b'{"trace_id": "broken", "events": [{"id": "a", "t": 0, "type": "stop", "agent": "x"}], "edges": [], "schema": "nope"}'


def _rollouts(count: int, seed: int) -> list[dict]:
    return list(synth.corpus(count, events=30, group_size=2, seed=seed))


@pytest.fixture
def corpus(tmp_path) -> Path:
    """runs/: a trace file, a JSON Lines file with a blank line, a line that is no JSON and
    an invalid trace, a gzip and a zstd file in a subfolder, and files that are no traces."""
    folder = tmp_path / "runs"
    (folder / "more").mkdir(parents=True)
    shutil.copy(SWARM, folder / "a-swarm.json")
    lines = [orjson.dumps(trace) for trace in _rollouts(3, 0)]
    (folder / "b.jsonl").write_bytes(lines[0] + b"\n\n" + lines[1] + b"\nnot json\n" + BAD_LINE + b"\n" + lines[2] + b"\n")
    with gzip.open(folder / "more" / "c.jsonl.gz", "wb") as handle:
        handle.write(b"".join(orjson.dumps(t) + b"\n" for t in _rollouts(2, 1)))
    (folder / "more" / "d.ndjson.zst").write_bytes(
        zstandard.ZstdCompressor().compress(b"".join(orjson.dumps(t) + b"\n" for t in _rollouts(2, 2)))
    )
    (folder / "notes.txt").write_text("not a trace\n")
    (folder / ".hidden.json").write_text("{}")
    return folder


def _single(run, path: Path, cwd: Path) -> dict:
    result = run("trace", "metrics", str(path), "--format", "json", cwd=cwd)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _expected_rows(run, corpus: Path, tmp_path: Path) -> list[dict]:
    """Each trace's row as the single-trace command measures it, one file at a time."""
    expected = []
    sources = [(corpus / "a-swarm.json", None, SWARM.read_bytes())]
    sources += [(corpus / "b.jsonl", n, line) for n, line in enumerate((corpus / "b.jsonl").read_bytes().split(b"\n"), 1)]
    sources += [
        (corpus / "more" / "c.jsonl.gz", n, line)
        for n, line in enumerate(gzip.decompress((corpus / "more" / "c.jsonl.gz").read_bytes()).split(b"\n"), 1)
    ]
    sources += [
        (corpus / "more" / "d.ndjson.zst", n, line)
        for n, line in enumerate(
            zstandard.ZstdDecompressor().decompress((corpus / "more" / "d.ndjson.zst").read_bytes()).split(b"\n"), 1
        )
    ]
    for file, line, data in sources:
        if not data.strip() or data in (b"not json", BAD_LINE):
            continue
        alone = tmp_path / "alone.json"
        alone.write_bytes(data)
        measured = _single(run, alone, tmp_path)
        trace = orjson.loads(data)
        row = {
            "file": str(file),
            "line": line,
            **{k: trace.get(k) for k in ("trace_id", "task_id", "run", "step", "group", "system", "topology", "time_unit")},
            "valid": True,
            "problem": None,
            "problems": 0,
            "warnings": 0,
        }
        row.update(_as_row(measured))
        expected.append(row)
    return expected


def _as_row(report: dict) -> dict:
    """`trace metrics --format json`'s report read as a corpus's row: the report and the
    row are two views of the same measures, put together in two places (metrics.compute
    and rows.table), which this test holds to each other."""
    row = {column.name: report[column.name] for column in rows.MEASURES if column.name in report}
    costs, rewards = report["costs"], report["rewards"]
    notes = [f"{note['key']}: {note['why']}" for note in report["notes"]]
    row |= {f"n_{name}": count for name, count in report["event_types"].items()}
    row |= {f"subdecision_{key}": count for key, count in report["subdecisions"].items()}
    row |= {f"reward_{unit}": None for unit in schema.credit_units()}
    for unit, channels in rewards["by_unit"].items():
        row[f"reward_{unit}"] = round(sum(channels.values()), 6)
    declared = list(rewards["declared"].values())
    row |= {
        "tokens": costs["tokens"]["events"],
        "compute_s": costs["seconds"]["events"],
        "tokens_declared": costs["tokens"]["declared"],
        "compute_s_declared": costs["seconds"]["declared"],
        "wall_clock_s_declared": costs["wall_clock_s"]["declared"],
        "tool_calls_declared": costs["tool_calls"]["declared"],
        "messages_declared": costs["messages"]["declared"],
        "reward_declared": round(sum(declared), 6) if declared else None,
        "notes": "; ".join(notes) or None,
    }
    return {key: float(value) if key.endswith("_declared") and value is not None else value for key, value in row.items()}


def test_a_corpus_gives_one_row_per_trace_as_the_single_trace_command_measures_it(run, corpus, tmp_path):
    result = run("trace", "metrics", str(corpus), "--jobs", "2", cwd=tmp_path)
    assert result.exit_code == 1  # two lines of b.jsonl are invalid
    printed = result.output.splitlines()
    found = [json.loads(line) for line in printed if line.startswith("{")]
    said = [line for line in printed if not line.startswith("{")]
    b = corpus / "b.jsonl"
    assert said == [
        f"{b}:4: not JSON at column 1: invalid literal, expected 'null'; check that the file is a JSON trace",
        (
            f'{b}:5: /schema: "nope" is not this schema; write "urn:paperpool:schema:orchestration-trace:1.0.0" or leave the '
            "field out"
        ),
        "10 traces: 8 valid, 2 invalid.",
    ]
    assert said[-1] == "10 traces: 8 valid, 2 invalid."
    assert [(row["file"], row["line"], row["valid"]) for row in found] == [
        (str(corpus / "a-swarm.json"), None, True),
        (str(b), 1, True),
        (str(b), 3, True),
        (str(b), 4, False),
        (str(b), 5, False),
        (str(b), 6, True),
        (str(corpus / "more" / "c.jsonl.gz"), 1, True),
        (str(corpus / "more" / "c.jsonl.gz"), 2, True),
        (str(corpus / "more" / "d.ndjson.zst"), 1, True),
        (str(corpus / "more" / "d.ndjson.zst"), 2, True),
    ]
    names = [column.name for column in rows.columns(default())]
    assert all(list(row) == names for row in found)
    valid = [row for row in found if row["valid"]]
    assert valid == [{name: row.get(name) for name in names} for row in _expected_rows(run, corpus, tmp_path)]
    invalid = [row for row in found if not row["valid"]]
    assert [row["trace_id"] for row in invalid] == [None, "broken"]
    assert all(row[name] is None for row in invalid for name in names[14:])
    assert valid[1]["run"] == "run-0" and valid[1]["step"] == 0 and valid[1]["group"] == "group-0"


@pytest.mark.slow
def test_csv_and_parquet_hold_the_same_rows_read_back_by_duckdb_and_pandas(run, corpus, tmp_path):
    assert run("trace", "metrics", str(corpus), "-o", "rows.jsonl", cwd=tmp_path).exit_code == 1
    assert run("trace", "metrics", str(corpus), "--format", "csv", "-o", "rows.csv", cwd=tmp_path).exit_code == 1
    assert run("trace", "metrics", str(corpus), "--format", "parquet", "-o", "rows.parquet", cwd=tmp_path).exit_code == 1
    expected = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    columns = rows.columns(default())
    from_parquet = duckdb.sql(f"SELECT * FROM '{tmp_path / 'rows.parquet'}'").fetchall()
    assert [dict(zip([c.name for c in columns], row, strict=True)) for row in from_parquet] == expected
    frame = pd.read_parquet(tmp_path / "rows.parquet")
    assert list(frame.columns) == [c.name for c in columns]
    assert frame["events"].dropna().astype(int).tolist() == [row["events"] for row in expected if row["valid"]]
    read = list(csv.DictReader(io.StringIO((tmp_path / "rows.csv").read_text())))
    assert [row["trace_id"] for row in read] == [row["trace_id"] or "" for row in expected]
    assert [row["parallelism_speedup"] for row in read] == [
        "" if row["parallelism_speedup"] is None else str(row["parallelism_speedup"]) for row in expected
    ]


def test_globs_files_and_folders_mix_and_each_file_is_read_once(run, corpus, tmp_path):
    result = run(
        "trace",
        "metrics",
        str(corpus / "**" / "*.jsonl*"),
        str(corpus / "b.jsonl"),
        str(corpus / "a-swarm.json"),
        "--format",
        "csv",
        "-o",
        "rows.csv",
        cwd=tmp_path,
    )
    assert result.output.splitlines()[-1] == "8 traces to rows.csv: 6 valid, 2 invalid."
    files = [row["file"] for row in csv.DictReader(io.StringIO((tmp_path / "rows.csv").read_text()))]
    assert files == [str(corpus / "b.jsonl")] * 5 + [str(corpus / "more" / "c.jsonl.gz")] * 2 + [str(corpus / "a-swarm.json")]


@pytest.mark.parametrize(
    "given, said",
    [
        (
            "missing",
            (
                "Error: missing: no such file or folder; name trace files (.json, .jsonl or .ndjson, each optionally .gz "
                "or .zst), folders of them, or a glob pattern"
            ),
        ),
        (
            "*.nothing",
            (
                "Error: *.nothing: the pattern matches no file; check it (quote it, so that paperpool expands it rather "
                "than the shell)"
            ),
        ),
    ],
)
def test_an_input_that_names_nothing_is_an_error(run, tmp_path, given, said):
    result = run("trace", "metrics", given, "--format", "jsonl", cwd=tmp_path)
    assert (result.exit_code, result.output.strip()) == (1, said)


def test_strict_stops_at_the_first_invalid_trace_and_writes_nothing(run, corpus, tmp_path):
    result = run("trace", "metrics", str(corpus), "--format", "parquet", "-o", "rows.parquet", "--strict", cwd=tmp_path)
    assert result.exit_code == 1
    problem, error = result.output.splitlines()  # the first invalid trace's problem line, and none after it
    assert problem.startswith(f"{corpus / 'b.jsonl'}:4: not JSON at column 1")
    assert error == "Error: the trace above is not valid; --strict stops at the first invalid trace (nothing was written)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]
    printed = run("trace", "metrics", str(corpus), "--strict", cwd=tmp_path)
    assert printed.output.splitlines()[-1].endswith("(the rows before it are on standard output)")


def test_a_stopped_command_leaves_the_previous_rows_as_they_were(run, corpus, tmp_path):
    (tmp_path / "rows.csv").write_text("the previous rows\n", encoding="utf-8")
    result = run("trace", "metrics", str(corpus), "--format", "csv", "-o", "rows.csv", "--strict", cwd=tmp_path)
    assert result.exit_code == 1
    assert (tmp_path / "rows.csv").read_text(encoding="utf-8") == "the previous rows\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv", "runs"]  # no half-written file beside it


def test_one_trace_file_keeps_the_single_trace_report(run, tmp_path):
    result = run("trace", "metrics", str(SWARM), cwd=tmp_path)
    assert result.exit_code == 0 and result.output.startswith("trace example-swarm (swarm)\n")
    refused = run("trace", "metrics", str(SWARM), str(SWARM), "--format", "text", cwd=tmp_path)
    assert refused.output.strip() == (
        "Error: --format text reports on one trace file; for a corpus give --format jsonl, csv or parquet"
    )


@pytest.mark.slow
def test_export_writes_four_tables_that_duckdb_and_pandas_read(run, corpus, tmp_path):
    result = run("trace", "export", str(corpus), "-o", "tables", cwd=tmp_path)
    assert result.exit_code == 1 and result.output.splitlines()[-1] == "10 traces to tables: 8 valid, 2 invalid."
    tables = tmp_path / "tables"
    assert sorted(str(p.relative_to(tables)) for p in tables.rglob("*.parquet")) == [
        "edges/part-0.parquet",
        "events/part-0.parquet",
        "rewards/part-0.parquet",
        "traces/part-0.parquet",
    ]
    traces = pd.read_parquet(tables / "traces")
    events = pd.read_parquet(tables / "events")
    edges = duckdb.sql(f"SELECT count(*) FROM '{tables}/edges/*.parquet'").fetchall()[0][0]
    valid = traces[traces["valid"]]
    assert len(traces) == 10 and len(events) == valid["events"].sum() and edges == valid["edges"].sum()
    per_trace = events.groupby(["file", "line", "trace_id"], dropna=False).size()
    assert sorted(per_trace.tolist()) == sorted(valid["events"].tolist())
    assert set(events["type"]) <= set(schema.event_types())
    stops = duckdb.sql(f"SELECT count(*) FROM '{tables}/events/*.parquet' WHERE type = 'stop'").fetchall()[0][0]
    assert stops == valid["n_stop"].sum()
    rewards = pd.read_parquet(tables / "rewards")
    declared = rewards[rewards["unit"].isna()]
    on_events = rewards[rewards["unit"].notna()].groupby("unit")["value"].sum()
    assert on_events.round(6).to_dict() == {unit: round(valid[f"reward_{unit}"].sum(), 6) for unit in on_events.index}
    assert len(declared) == 8  # every valid trace declares its rewards: the swarm and each rollout one channel


def test_export_partitions_by_run_and_step(run, corpus, tmp_path):
    assert run("trace", "export", str(corpus / "more"), "-o", "tables", "--partition-by", "run,step", cwd=tmp_path).exit_code == 0
    found = sorted(str(p.parent.relative_to(tmp_path / "tables")) for p in (tmp_path / "tables").rglob("*.parquet"))
    assert found == [f"{table}/run=run-{seed}/step=0" for table in ("edges", "events", "rewards", "traces") for seed in (1, 2)]
    counted = duckdb.sql(
        f"SELECT run, count(*) FROM read_parquet('{tmp_path}/tables/traces/**/*.parquet', "
        "hive_partitioning = true) GROUP BY run ORDER BY run"
    ).fetchall()
    assert counted == [("run-1", 2), ("run-2", 2)]
    refused = run("trace", "export", str(corpus), "-o", "other", "--partition-by", "rn", cwd=tmp_path)
    assert refused.output.strip() == "Error: --partition-by rn: not a trace field to partition by; did you mean 'run'?"


@pytest.mark.slow
def test_summary_gives_the_distributions_numpy_gives(run, corpus, tmp_path):
    assert run("trace", "export", str(corpus), "-o", "tables", cwd=tmp_path).exit_code == 1
    result = run("trace", "summary", "tables", "--by", "run", "--format", "json", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    traces = pd.read_parquet(tmp_path / "tables" / "traces")
    valid = traces[traces["valid"]]
    for row in found["metrics"]:
        group = valid[valid["run"].isna()] if row["run"] is None else valid[valid["run"] == row["run"]]
        values = group[row["measure"]].dropna().astype(float).to_numpy()
        assert row["traces"] == len(group) and row["count"] == len(values)
        if len(values):
            numpy_gives = [values.mean(), *np.quantile(values, [0.1, 0.25, 0.5, 0.75, 0.9]), values.min(), values.max()]
            found_gives = [row[name] for name in ("mean", "p10", "p25", "p50", "p75", "p90", "min", "max")]
            assert found_gives == pytest.approx(numpy_gives, abs=1e-6), row
    assert {row["run"] for row in found["metrics"]} == {None, "run-0", "run-1", "run-2"}
    events = pd.read_parquet(tmp_path / "tables" / "events")
    counts = {(r["run"], r["type"]): r["events"] for r in found["event_types"]}
    merged = events.merge(traces[["file", "line", "trace_id", "run"]], on=["file", "line", "trace_id"], how="left")
    assert counts == {
        (None if pd.isna(k[0]) else k[0], k[1]): v
        for k, v in merged.groupby(["run", "type"], dropna=False).size().to_dict().items()
    }


def test_summary_of_a_corpus_exports_it_first_and_reports_markdown(run, corpus, tmp_path):
    result = run("trace", "summary", str(corpus / "more"), cwd=tmp_path)
    lines = result.output.splitlines()
    assert lines[0] == "4 traces: 4 valid, 0 invalid."
    assert lines[1:5] == [
        "## Measures (valid traces)",
        "",
        "| measure | traces | count | mean | min | p10 | p25 | p50 | p75 | p90 | max |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    assert lines[5].startswith("| events | 4 | 4 | 30.0 | 30 |") or lines[5].startswith("| events | 4 | 4 | 30.0 | 30.0 |")
    unknown = run("trace", "summary", str(corpus / "more"), "--by", "stepp", cwd=tmp_path)
    assert unknown.output.splitlines()[-1] == "Error: --by stepp: not a column of the traces table; did you mean 'step'?"


def test_the_trace_docs_list_every_column_of_a_row():
    text = (REPO / "docs" / "traces.md").read_text(encoding="utf-8")
    section = text[text.index("## Corpora: many traces at once") : text.index("## Examples")]
    listed = [line for line in section.splitlines() if line.startswith("| `")]
    fixed = [f"| `{column.name}` | {column.type} | {column.about} |" for column in (*rows.IDENTITY, *rows.MEASURES)]
    assert listed[: len(fixed)] == fixed  # each column's one description is rows.py's
    assert [line.split("`")[1] for line in listed[len(fixed) :]] == ["n_TYPE", "subdecision_ID", "reward_UNIT"]


@pytest.mark.parametrize(("block", "max_lines"), [(1, 1000), (3, 2), (7, 1000), (64, 3), (4096, 1), (4096, 1000)])
def test_blocks_of_lines_hold_the_records_read_a_line_at_a_time(tmp_path, monkeypatch, block, max_lines):
    """The workers' blocks of whole lines (corpus.pieces) split into the records that
    corpus.records reads a line at a time: blank lines (of any white space), lines over the limit (inside a
    block or longer than one), a last line with no newline, whatever the block's size
    and however many lines it may hold."""
    import random

    from paperpool.traces import corpus

    monkeypatch.setattr(corpus, "BLOCK", block)
    monkeypatch.setattr(corpus, "MAX_LINES", max_lines)
    rng = random.Random(block)
    for trial in range(60):
        lines = [
            rng.choice([b"", b"   ", b"\t\r\x0b\x0c ", b"  x", b"x" * rng.randint(1, 60)]) for _ in range(rng.randint(0, 30))
        ]
        path = tmp_path / f"t{trial}.jsonl"
        path.write_bytes(b"\n".join(lines) + rng.choice([b"\n", b""]))
        limit = replace(limits.default(), trace_bytes=rng.choice([5, 20, 40, 1000]))
        pieces = corpus.pieces([path, SWARM], 3, limit)
        assert [record for piece in pieces for record in corpus.unpack(piece)] == list(corpus.records([path, SWARM], limit))


def test_a_block_of_short_lines_holds_a_bounded_number_of_them(tmp_path):
    from paperpool.traces import corpus

    path = tmp_path / "tiny.jsonl"
    path.write_bytes(b"1\n" * 2500)
    pieces = list(corpus.pieces([path], 200))
    assert [piece.first for piece in pieces] == [1, 1001, 2001]
    assert [len(corpus.unpack(piece)) for piece in pieces] == [1000, 1000, 500]


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
def test_a_cut_off_or_mislabelled_compressed_file_keeps_its_whole_lines_and_says_where_it_stops(run, tmp_path, compression):
    lines = b"".join(orjson.dumps(trace) + b"\n" for trace in _rollouts(40, 3))  # zstd gives its output a block at a time
    packed = gzip.compress(lines) if compression == "gzip" else zstandard.ZstdCompressor().compress(lines)
    suffix = {"gzip": "gz", "zstd": "zst"}[compression]
    (tmp_path / f"cut.jsonl.{suffix}").write_bytes(packed[: len(packed) * 2 // 3])
    (tmp_path / f"plain.jsonl.{suffix}").write_bytes(lines)
    result = run("trace", "metrics", f"cut.jsonl.{suffix}", f"plain.jsonl.{suffix}", "-o", "rows.jsonl", cwd=tmp_path)
    rows_of = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    kept = [row for row in rows_of if row["valid"]]
    assert 0 < len(kept) < 40 and [row["line"] for row in kept] == list(range(1, len(kept) + 1))
    said = result.output.splitlines()
    assert said[0] == (
        f"cut.jsonl.{suffix}:{len(kept) + 1}: cannot read the file: the compressed stream ends in the "
        "middle: the file is truncated; check that it is complete"
    )
    assert said[1].startswith(f"plain.jsonl.{suffix}:1: cannot read the file: not the compression its name says (")
    assert result.exit_code == 1


def test_a_trace_nested_past_what_the_schema_reads_is_one_invalid_row(run, tmp_path):
    deep = orjson.dumps(_rollouts(1, 4)[0] | {"metrics": {"m": []}}).replace(b'"m":[]', b'"m":' + b"[" * 300 + b"]" * 300)
    (tmp_path / "deep.jsonl").write_bytes(deep + b"\n" + orjson.dumps(_rollouts(1, 5)[0]) + b"\n")
    result = run("trace", "metrics", "deep.jsonl", "-o", "rows.jsonl", cwd=tmp_path)
    assert result.output.splitlines() == [
        (
            "deep.jsonl:1: nesting is deeper than 255 levels, where the schema check stops; a trace nests only a few levels: "
            "remove the extra brackets"
        ),
        "2 traces to rows.jsonl: 1 valid, 1 invalid.",
    ]


def test_identity_fields_are_held_as_their_columns_type_in_every_format(run, tmp_path):
    base = _rollouts(3, 6)
    given = [base[0] | {"step": 2.0}, base[1] | {"step": 2**63}, base[2] | {"run": 7}]
    (tmp_path / "c.jsonl").write_bytes(b"".join(orjson.dumps(trace) + b"\n" for trace in given))
    for fmt in ("jsonl", "parquet"):
        result = run("trace", "metrics", "c.jsonl", "--format", fmt, "-o", f"rows.{fmt}", cwd=tmp_path)
        assert result.exit_code == 1
        table = (
            pd.read_parquet(tmp_path / "rows.parquet") if fmt == "parquet" else pd.read_json(tmp_path / "rows.jsonl", lines=True)
        )
        found = [
            (
                row["valid"],
                None if pd.isna(row["step"]) else int(row["step"]),
                row["run"] if isinstance(row["run"], str) else None,
            )
            for row in table.to_dict("records")
        ]
        assert found == [(True, 2, base[0]["run"]), (False, None, base[1]["run"]), (False, base[2]["step"], None)]
    assert result.output.splitlines()[0] == (
        "c.jsonl:2: /step: 9223372036854775808 is above the maximum "
        "9,223,372,036,854,775,807; write 9,223,372,036,854,775,807 or less"
    )


def test_export_keeps_each_row_to_its_own_trace(run, tmp_path):
    """An edge's or a reward's keys cannot claim another trace's file, line or trace_id
    (a trace in the artifact's format may give them any key, with a warning)."""
    spoof = {
        **ARTIFACT_ASKS,
        "trace_id": "art",
        "events": [
            {
                "id": "e0",
                "t": 0,
                "type": "aggregate",
                "agent": "a",
                "rewards": [
                    {"channel": "c", "unit": "team", "value": 2.0, "trace_id": "honest", "file": "other.jsonl", "line": 9}
                ],
            },
            {"id": "e1", "t": 1, "type": "aggregate", "agent": "a", "rewards": 5},
        ],
        "edges": [{"src": "e0", "dst": "e1", "type": "causal"}],
    }
    (tmp_path / "s.jsonl").write_bytes(orjson.dumps(spoof) + b"\n")
    assert run("trace", "export", "s.jsonl", "-o", "tables", cwd=tmp_path).exit_code == 0
    rewards = pd.read_parquet(tmp_path / "tables" / "rewards")
    edges = pd.read_parquet(tmp_path / "tables" / "edges")
    assert rewards[["file", "line", "trace_id", "event", "value"]].values.tolist() == [["s.jsonl", 1, "art", "e0", 2.0]]
    assert edges[["file", "line", "trace_id", "src"]].values.tolist() == [["s.jsonl", 1, "art", "e0"]]


def test_a_partition_value_that_cannot_name_a_folder_is_an_error_naming_the_trace(run, tmp_path):
    traces = [trace | {"run": run_name} for trace, run_name in zip(_rollouts(2, 7), ["ok", "a\x00b"], strict=True)]
    (tmp_path / "p.jsonl").write_bytes(b"".join(orjson.dumps(trace) + b"\n" for trace in traces))
    result = run("trace", "export", "p.jsonl", "-o", "tables", "--partition-by", "run,run", cwd=tmp_path)
    assert (result.exit_code, result.output.strip()) == (
        1,
        (
            "Error: p.jsonl:2: /run: cannot name a partition's folder (too long once encoded, or a control character); "
            "--partition-by another field, or shorten the run"
        ),
    )
    assert not (tmp_path / "tables").exists()


@pytest.mark.slow
def test_a_run_of_its_own_per_trace_is_refused_past_the_partitions_and_groups(run, tmp_path):
    """1,001 traces, each with its own run (issue 39's fresh review: 105,000 such traces in
    582 kB of gzip made 210,000 files in 3.3 GB by --partition-by, and 5.1 GB of memory for
    summary --by): refused in one line, nothing written."""
    from paperpool.traces.summary import MAX_GROUPS
    from paperpool.traces.tables import MAX_PARTITIONS

    traces = [trace | {"run": f"r{number}"} for number, trace in enumerate(_rollouts(MAX_PARTITIONS + 1, 9))]
    (tmp_path / "runs.jsonl").write_bytes(b"".join(orjson.dumps(trace) + b"\n" for trace in traces))
    result = run("trace", "export", "runs.jsonl", "-o", "tables", "--partition-by", "run", cwd=tmp_path)
    assert (result.exit_code, result.output.strip()) == (
        1,
        (
            f"Error: runs.jsonl:{MAX_PARTITIONS + 1}: --partition-by run: past {MAX_PARTITIONS:,} partitions, a folder of files "
            "each; partition by a field with fewer values"
        ),
    )
    assert not (tmp_path / "tables").exists()
    result = run("trace", "summary", "runs.jsonl", "--by", "run", cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        1,
        (
            f"Error: by run: the valid traces fall into {MAX_PARTITIONS + 1:,} groups, over the {MAX_GROUPS:,} a summary shows "
            "(a row per group and measure); group by a field with fewer values"
        ),
    )


def test_a_glob_never_follows_a_link_to_a_folder_and_the_output_is_never_an_input(run, tmp_path):
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "a.jsonl").write_bytes(orjson.dumps(_rollouts(1, 8)[0]) + b"\n")
    (tmp_path / "loop" / "again").symlink_to(".")
    result = run("trace", "metrics", "loop/**/*.jsonl", "-o", "rows.jsonl", cwd=tmp_path)
    assert result.output.strip() == "1 trace to rows.jsonl: 1 valid, 0 invalid."
    refused = run("trace", "metrics", "loop/a.jsonl", "-o", "loop/a.jsonl", cwd=tmp_path)
    assert refused.output.strip() == (
        "Error: -o loop/a.jsonl: is one of the inputs; write the rows to another file (nothing was written)"
    )


def test_summary_json_holds_no_infinity_and_says_when_traces_were_invalid(run, tmp_path):
    huge = [trace | {"costs": {}} for trace in _rollouts(2, 9)]
    for trace in huge:
        trace["events"][0]["cost"] = {"tokens": 1.7e308, "seconds": 1}
    (tmp_path / "h.jsonl").write_bytes(b"".join(orjson.dumps(trace) + b"\n" for trace in huge) + BAD_LINE + b"\n")
    result = run("trace", "summary", "h.jsonl", "--format", "json", cwd=tmp_path)
    assert result.exit_code == 1
    found = json.loads(result.output[result.output.index("{") :], parse_constant=lambda name: pytest.fail(name))
    tokens = next(row for row in found["metrics"] if row["measure"] == "tokens")
    assert (tokens["count"], tokens["mean"]) == (2, None)


def test_an_importers_input_is_named_as_such_by_metrics_as_by_validate(run, tmp_path):
    log = tmp_path / "W&W log.json"
    shutil.copy(REPO / "traces" / "who-and-when" / "Algorithm-Generated" / "1.json", log)
    hint = (
        f"{log.name}: is who-and-when input, not an orchestration trace: Who&When multi-agent failure logs "
        f"(Magentic-One runs, CaptainAgent group chats); convert it first: paperpool trace import --from who-and-when "
        f"'{log.name}' -o TRACE.json"
    )
    single = run("trace", "metrics", log.name, cwd=tmp_path)
    assert (single.exit_code, single.output.splitlines()) == (
        1,
        [hint, f"Error: {log.name} is not a valid trace (1 problem above); convert it first, as above"],
    )
    corpus = run("trace", "metrics", log.name, str(SWARM), "-o", "rows.jsonl", cwd=tmp_path)
    assert corpus.output.splitlines() == [hint, "2 traces to rows.jsonl: 1 valid, 1 invalid."]


def test_a_partitioned_table_without_rows_still_holds_a_file_and_pandas_reads_null_partitions(run, corpus, tmp_path):
    import pyarrow.dataset as ds

    plain = [{key: value for key, value in trace.items() if key != "run"} for trace in _rollouts(2, 10)]
    for trace in plain:
        for event in trace["events"]:
            event.pop("rewards", None)
        trace.pop("rewards", None)
    (tmp_path / "p.jsonl").write_bytes(b"".join(orjson.dumps(trace) + b"\n" for trace in [*plain, *_rollouts(1, 11)]))
    assert run("trace", "export", "p.jsonl", "-o", "tables", "--partition-by", "run", cwd=tmp_path).exit_code == 0
    traces = pd.read_parquet(tmp_path / "tables" / "traces", partitioning=ds.partitioning(flavor="hive"))
    assert sorted(traces["run"].fillna("(none)")) == ["(none)", "(none)", "run-11"]
    (tmp_path / "q.jsonl").write_bytes(b"".join(orjson.dumps(trace) + b"\n" for trace in plain))
    assert run("trace", "export", "q.jsonl", "-o", "bare", "--partition-by", "run", cwd=tmp_path).exit_code == 0
    assert (tmp_path / "bare" / "rewards" / "part-0.parquet").is_file()
    assert duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{tmp_path}/bare/rewards/**/*.parquet', hive_partitioning = true)"
    ).fetchall() == [(0,)]


def test_json_lines_rows_escape_what_a_terminal_acts_on_and_read_back_the_same(run, tmp_path):
    named = "a\u009b2J\u007f\u202eb\u2028c\x1bd"
    (tmp_path / "c.jsonl").write_bytes(orjson.dumps(_rollouts(1, 12)[0] | {"trace_id": named}) + b"\n")
    result = run("trace", "metrics", "c.jsonl", cwd=tmp_path)
    line = result.output.splitlines()[0]
    assert '"trace_id":"a\\u009b2J\\u007f\\u202eb\\u2028c\\u001bd"' in line and line.isascii()
    assert json.loads(line)["trace_id"] == named


def test_a_row_holds_the_run_s_declared_reward_and_totals(run, tmp_path):
    first, second = _rollouts(2, 13)
    first |= {"rewards": {"team": 0.5, "format": 0.25}}
    first["costs"] |= {"tool_calls": first["costs"].get("tool_calls", 0), "messages": 4}
    second.pop("rewards", None)
    (tmp_path / "r.jsonl").write_bytes(orjson.dumps(first) + b"\n" + orjson.dumps(second) + b"\n")
    result = run("trace", "metrics", "r.jsonl", cwd=tmp_path)
    found = [json.loads(line) for line in result.output.splitlines()[:2]]
    assert [row["reward_declared"] for row in found] == [0.75, None]
    assert found[0]["messages_declared"] == 4.0
    assert found[0]["tool_calls_declared"] == float(first["costs"]["tool_calls"])
    summary = run("trace", "summary", "r.jsonl", "--format", "json", cwd=tmp_path)
    reward = next(
        row for row in json.loads(summary.output[summary.output.index("{") :])["metrics"] if row["measure"] == "reward_declared"
    )
    assert (reward["traces"], reward["count"], reward["mean"]) == (2, 1, 0.75)


def _corpus_file(path: Path, count: int) -> Path:
    path.write_bytes(b"".join(orjson.dumps(trace) + b"\n" for trace in _rollouts(count, 14)))
    return path


@pytest.mark.slow
def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path):
    import subprocess
    import sys

    _corpus_file(tmp_path / "c.jsonl", 3000)  # rows beyond what a pipe holds
    command = subprocess.Popen(
        [sys.executable, "-m", "paperpool", "trace", "metrics", "c.jsonl"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert command.stdout.readline().startswith(b'{"file":"c.jsonl","line":1,')
    command.stdout.close()  # as `| head -1` does
    assert (command.wait(timeout=120), command.stderr.read()) == (141, b"")


@pytest.mark.slow
def test_sigterm_ends_an_export_as_ctrl_c_does_leaving_no_worker_and_no_folder(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    _corpus_file(tmp_path / "c.jsonl", 3000)
    said = (tmp_path.parent / f"{tmp_path.name}.stderr").open("w+b")  # a file: a worker left behind would hold a pipe open
    command = subprocess.Popen(
        [sys.executable, "-m", "paperpool", "trace", "export", "c.jsonl", "-o", "tables"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=said,
    )
    while command.poll() is None and not any(p.name.startswith(".tables") for p in tmp_path.iterdir()):
        time.sleep(0.01)
    time.sleep(0.5)  # its workers started
    children = descendants(command.pid)  # the workers
    assert children
    command.send_signal(signal.SIGTERM)
    assert command.wait(timeout=60) != 0
    deadline = time.monotonic() + 10  # they see the command's end when their pipes close
    while (left := [pid for pid in children if os.path.exists(f"/proc/{pid}")]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(int(pid), signal.SIGKILL)
    said.seek(0)
    assert (left, b"Traceback" in said.read()) == ([], False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def test_summary_takes_an_export_folder_alone(run, corpus, tmp_path):
    assert run("trace", "export", str(corpus / "more"), "-o", "tables", cwd=tmp_path).exit_code == 0
    result = run("trace", "summary", "tables", str(SWARM), cwd=tmp_path)
    assert (result.exit_code, result.output.strip()) == (
        1,
        (
            "Error: tables: the tables of `trace export` are summarised alone; give the folder as the only input, or the "
            "traces it was exported from with the others"
        ),
    )


def test_what_is_wrong_with_a_line_is_said_of_the_line(run, tmp_path):
    (tmp_path / "m.jsonl").write_bytes(b'{"trace_id": "x\xffy", "events": [], "edges": []}\n[1]\n{\n  "trace_id": "p"\n}\n')
    result = run("trace", "metrics", "m.jsonl", "-o", "rows.jsonl", cwd=tmp_path)
    assert result.output.splitlines()[:3] == [
        (
            "m.jsonl:1: byte 0xff at column 16 is not UTF-8; a trace is UTF-8 text: save the file as UTF-8 (or fix the "
            "program that wrote it)"
        ),
        "m.jsonl:2: the line holds a list, not a trace; a trace is a JSON object with trace_id, events and edges",
        (
            "m.jsonl:3: the JSON stops in the middle (line 2, column 1): a JSON Lines file holds one whole trace per line "
            "(one written over several lines belongs in a .json file), or the file is truncated"
        ),
    ]
    (tmp_path / "u.json").write_bytes(b'{"trace_id": "a",\n "task_id": "b\xc3"}')
    said = run("trace", "validate", "u.json", cwd=tmp_path)
    assert said.output.splitlines()[0] == (
        "u.json: byte 0xc3 at line 2, column 15 is not UTF-8; a trace is UTF-8 text: "
        "save the file as UTF-8 (or fix the program that wrote it)"
    )


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_a_corpus_past_its_lines_or_bytes_stops_at_the_line_that_crosses_it(run, tmp_path, compression):
    """A corpus's limits count every file together, blank lines included, decompressed."""
    from paperpool.traces import corpus

    line = SWARM.read_bytes().replace(b"\n", b" ") + b"\n"
    first, second = tmp_path / "a.jsonl", tmp_path / ("b.jsonl.gz" if compression else "b.jsonl")
    first.write_bytes(line * 3)
    (gzip.open if compression else open)(second, "wb").write(b"\n" * 4 + line * 3)
    few = replace(limits.default(), corpus_lines=8)
    with pytest.raises(limits.CorpusTooLarge) as caught:
        list(corpus.pieces([first, second], 200, few))
    assert caught.value.message == (
        f"{second}:6: the corpus is over the limit of 8 lines by this line; raise "
        "traces.limits.corpus_lines in the pool's registry.yaml if it is meant to be this large"
    )
    assert (
        len(
            [
                record
                for piece in corpus.pieces([first, second], 200, replace(few, corpus_lines=10))
                for record in corpus.unpack(piece)
            ]
        )
        == 6
    )
    small = replace(limits.default(), corpus_bytes=len(line) * 4 + 4)  # the second file's fourth line crosses it
    with pytest.raises(
        limits.CorpusTooLarge, match=r"over the limit of [\d,]+ bytes by this line; raise traces.limits.corpus_bytes"
    ):
        list(corpus.records([first, second], small))


def test_a_trace_with_more_problems_than_the_cap_is_one_line_and_a_row_without_a_count(run, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text('{"trace_id": "e", "edges": [], "events": [' + ",".join(["{}"] * 20_000) + "]}\n", encoding="utf-8")
    result = run("trace", "metrics", str(path), cwd=tmp_path)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == 3, lines  # the row, the trace's line, the total
    said, row = (lines[0], lines[1]) if lines[1].startswith("{") else (lines[1], lines[0])
    assert said.endswith(
        "(and more than 99: `paperpool trace validate` lists the first 100, given the line saved as a file of its own)"
    )
    assert json.loads(row)["problems"] is None


def test_the_corpus_page_counts_many_groups_in_one_pass():
    """Each group's first MOST_VALUES values, the others summed in one row (the sums were
    found by reading every row again per group: quadratic; scripts/bench times 20,000 groups)."""
    from paperpool.traces.site import corpora

    counted = [
        {"system": f"s{g}", "field": "x", "value": f"v{v}", "chars": len(f"v{v}"), "traces": 20 - v}
        for g in range(300)
        for v in range(15)
    ]
    groups = [((f"s{g}",), 195) for g in range(300)]
    table = corpora._counts("x", counted, ["system"], groups, "over", "")
    assert len(table.rows) == 300 * (corpora.MOST_VALUES + 1)
    assert table.rows[12] == ["s0", "3 other values, together", "21", "10.8 %"]
    assert table.rows[13][:2] == ["s1", "v0"] and table.rows[-1] == ["s299", "3 other values, together", "21", "10.8 %"]


def test_a_corpus_page_cuts_a_long_value_and_tells_how_much_it_left_out():
    """A counted value of a million characters (issue 39's fresh review: fifteen of them in
    16 kB of gzip made the corpus page 35 MB, over a page's 5 MB, and the build blamed the
    template): each cell shows 200 characters and says how many more there were; groups
    are still told apart by their whole values. (field_counts keeps a long value's first
    characters and its length: test_trace_bounded's ten counted megabytes.)"""
    from paperpool.traces.site.corpora import MAX_SHOWN, _counts
    from paperpool.traces.summary import _group  # how the summary names a group: long ones cut

    value = "<b>" * 330_000
    counted = [
        {"field": "x", "value": value[:MAX_SHOWN], "chars": len(value) + 1, "traces": 1, "run": _group("r" * 1000 + str(i % 2))}
        for i in range(4)
    ]
    groups = [((_group("r" * 1000 + "0"),), 2), ((_group("r" * 1000 + "1"),), 2)]
    table = _counts("x", counted, ["run"], groups, "over 4", ", by run")
    cells = [cell for row in table.rows for cell in row]
    assert all(len(cell) < MAX_SHOWN + 50 for cell in cells)
    assert table.rows[0][1] == value[:MAX_SHOWN] + f"… ({len(value) + 1 - MAX_SHOWN:,} characters more)"
    assert [row[-1] for row in table.rows] == ["50.0 %"] * 4  # each group's own size, not one merged


def test_groups_whose_values_read_alike_are_counted_apart():
    """A hostile review: groups were told apart by their values joined with " · ", so
    ("a · b", "c") and ("a", "b · c") were one group, and a trace without the field one
    with a value written "(none)": each value's share was of the wrong group."""
    from paperpool.traces.site.corpora import NONE, _counts

    counted = [
        {"field": "x", "value": "v", "chars": 1, "traces": 2, "system": "a · b", "run": "c"},
        {"field": "x", "value": "v", "chars": 1, "traces": 1, "system": "a", "run": "b · c"},
        {"field": "x", "value": "v", "chars": 1, "traces": 1, "system": NONE, "run": "r"},
        {"field": "x", "value": "v", "chars": 1, "traces": 4, "system": None, "run": "r"},
    ]
    groups = [(("a · b", "c"), 2), (("a", "b · c"), 4), ((NONE, "r"), 1), ((None, "r"), 8)]
    table = _counts("x", counted, ["system", "run"], groups, "over", ", by system, run")
    assert [row[-1] for row in table.rows] == ["100.0 %", "25.0 %", "100.0 %", "50.0 %"]


def _tables(folder: Path, traces: dict, events: dict) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    for table, columns in (("traces", traces), ("events", events)):
        (folder / table).mkdir(parents=True)
        pq.write_table(pa.table(columns), folder / table / "part-0.parquet", compression="zstd")
    return folder


@pytest.mark.slow
def test_a_summary_refuses_tables_whose_traces_share_a_key(run, tmp_path):
    """Issue 39's fifth review: 1,000 traces rows of one key and a million events (32 kB)
    joined each event to every copy, 11 s and a count of a billion events."""
    n, m = 1000, 1 << 20
    folder = _tables(
        tmp_path / "joined",
        {"file": ["f"] * n, "line": [1] * n, "trace_id": ["t"] * n, "valid": [True] * n, "system": ["s"] * n},
        {"file": ["f"] * m, "line": [1] * m, "trace_id": ["t"] * m, "type": ["spawn"] * m},
    )
    result = run("trace", "summary", str(folder), "--by", "system", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {folder}: its traces table gives 999 traces' keys (file, line, trace_id) more than once, which "
        "`paperpool trace export` never writes; give a folder it wrote\n",
    )


@pytest.mark.slow
def test_a_summary_refuses_tables_past_the_corpus_limits_from_their_metadata(run, tmp_path):
    """A row bomb: 2 million rows of a traces table in some kilobytes of Parquet (268 million
    in 1.2 MB took 4.5 GB); the rows are counted from the files' metadata first."""
    n = 2_000_001
    folder = _tables(tmp_path / "rows", {"valid": [True] * n, "events": [1.5] * n}, {"type": ["spawn"]})
    result = run("trace", "summary", str(folder), cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {folder}: its traces table holds 2,000,001 rows, more than 1,000,000 (traces.limits: corpus_lines); "
        "give a folder that `paperpool trace export` wrote, or raise the limit in the pool's registry.yaml\n",
    )


def test_a_summary_reads_no_file_through_a_link(run, tmp_path):
    """A .parquet file linked from outside the folder was summarised with the export's own."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    traces = sorted(str(path) for path in (REPO / "traces").glob("*.json"))  # the folder's own, not the logs below it
    assert run("trace", "export", *traces, "-o", str(tmp_path / "tables"), cwd=tmp_path).exit_code == 0
    own = pq.read_table(tmp_path / "tables" / "traces" / "part-0.parquet")
    outside = own.set_column(own.schema.get_field_index("events"), "events", pa.array([123456] * own.num_rows))
    pq.write_table(outside, tmp_path / "secret.parquet")
    (tmp_path / "tables" / "traces" / "s.parquet").symlink_to(tmp_path / "secret.parquet")
    result = run("trace", "summary", str(tmp_path / "tables"), "--format", "json", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    events = next(row for row in json.loads(result.output)["metrics"] if row["measure"] == "events")
    assert events["traces"] == own.num_rows and events["max"] < 123456


@pytest.mark.slow
def test_a_summary_names_a_long_group_by_its_first_characters(run, tmp_path):
    """Issue 39's sixth review: each group's whole value was written once per measure (some
    60), so 500 task ids of 32,000 characters (21 kB of gzip) made 822 MB of summary, and
    a corpus page of them was over a page's limit."""
    base = json.loads((REPO / "traces" / "debate-two-rounds.json").read_text(encoding="utf-8"))
    del base["schema"]  # the artifact's format: no limit on a task id's length
    lines = [json.dumps(base | {"trace_id": f"t{i}", "task_id": f"{i:05d}" + "x" * 32_000}) for i in range(50)]
    (tmp_path / "long.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("trace", "summary", "long.jsonl", "--by", "task_id", "--format", "json", cwd=tmp_path)
    summary = json.loads(result.output[result.output.index("{") :])

    def named(value: str) -> str:
        digest = hashlib.blake2b(value.encode(), digest_size=4).hexdigest()
        return value[:200] + f"… (31,805 characters more, #{digest})"

    assert {row["task_id"] for row in summary["metrics"]} == {named(f"{i:05d}" + "x" * 32_000) for i in range(50)}
    assert len(result.output) < 2_000_000


def test_groups_alike_in_their_first_characters_and_length_are_two_groups(run, tmp_path):
    """Round eighteen: two task ids sharing their first 200 characters and their length
    were named alike, so the corpus page gave one of them the other's size (a share of
    200 %), and cut the name again, counting its characters wrong."""
    base = json.loads((REPO / "traces" / "debate-two-rounds.json").read_text(encoding="utf-8"))
    del base["schema"]
    ids = ["x" * 250 + "a", "x" * 250 + "b"]
    lines = [json.dumps(base | {"trace_id": f"t{i}", "task_id": ids[i % 2]}) for i in range(3)]
    (tmp_path / "alike.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("trace", "summary", "alike.jsonl", "--by", "task_id", "--format", "json", cwd=tmp_path)
    summary = json.loads(result.output[result.output.index("{") :])
    traces = {row["task_id"]: row["traces"] for row in summary["metrics"] if row["measure"] == summary["metrics"][0]["measure"]}
    assert sorted(traces.values()) == [1, 2] and len(traces) == 2
    assert all(name.startswith("x" * 200 + "… (51 characters more, #") for name in traces)


@pytest.mark.slow
def test_a_partitioned_export_of_interleaved_runs_stops_past_its_files(run, tmp_path):
    """Issue 39's sixth review: each batch writes a file per table and partition it holds,
    so runs interleaved over 20,000 traces (140 kB of gzip) made 60,001 files and 559 MB."""
    traces = list(synth.corpus(6000, events=8, group_size=1, seed=9))
    with (tmp_path / "mixed.jsonl").open("wb") as handle:
        for k, trace in enumerate(traces):
            handle.write(orjson.dumps(trace | {"run": f"r{k % 1000}"}) + b"\n")
    result = run("trace", "export", "mixed.jsonl", "-o", "tables", "--partition-by", "run", cwd=tmp_path)
    assert result.exit_code == 1 and result.output.splitlines()[-1].endswith(
        "--partition-by run: past 20,000 files (one for each table, each batch of 200 traces and each partition the "
        "batch holds); put the corpus's traces in the order of the partition's fields, or partition by fewer"
    )
    assert not (tmp_path / "tables").exists()


def test_a_corpus_that_counts_time_unit_states_it_once(pool_copy):
    """A hostile review: `count: [time_unit]` counted each trace's time unit twice on the
    page (it is stated whether or not a corpus counts it): "seconds (6 traces)" for 3."""
    from paperpool.registry import load_registry
    from paperpool.traces.site import corpora

    lines = [
        json.dumps(json.loads((REPO / "traces" / "debate-two-rounds.json").read_text(encoding="utf-8")) | {"trace_id": f"t{k}"})
        for k in range(3)
    ]
    (pool_copy / "corpora" / "three.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    declared = "    - name: three\n      path: corpora/three.jsonl\n      title: Three\n      count: [time_unit]\n"
    edit(pool_copy / "registry.yaml", "  corpora:\n", "  corpora:\n" + declared)
    registry, problems = load_registry(pool_copy)
    assert registry is not None, problems
    page = next(page for page in corpora.pages(registry) if page.corpus.name == "three")
    unit = json.loads(lines[0]).get("time_unit")
    assert page.time_units == [(unit if unit is not None else corpora.NONE, 3)]
    assert [row[1:] for row in page.counts[0].rows] == [["3", "100.0 %"]]


def test_a_step_past_what_a_whole_number_column_holds_is_null_in_its_row(run, tmp_path):
    """A step below int64 is read as a double (-9.223372036854776e+18), which rounds into
    int64: the row held -9223372036854775808, a value the file does not hold; past 2**53 a
    double is not the number written, so the row says null, as for 2**64 - 1."""
    path = tmp_path / "steps.jsonl"
    path.write_text(
        '{"trace_id":"a","step":-9223372036854775809,"events":[],"edges":[]}\n'
        '{"trace_id":"b","step":18446744073709551615,"events":[],"edges":[]}\n'
        '{"trace_id":"c","step":2.0,"events":[],"edges":[]}\n',
        encoding="utf-8",
    )
    result = run("trace", "metrics", str(path), cwd=tmp_path)
    rows = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert [row["step"] for row in rows] == [None, None, 2]
