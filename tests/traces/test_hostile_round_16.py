"""The trace side of issue 39's sixteenth hostile review: values nested as deep as orjson
reads them (1,024 levels) but deeper than it or Python's json writes them, and JSON text
inside an attribute holding a lone surrogate, which no trace file can hold."""

from __future__ import annotations

import json
from pathlib import Path

from paperpool.traces import summary

from ..conftest import REPO
from .fixtures import SOURCE_EXAMPLE


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_a_counted_value_nested_past_what_orjson_writes_is_counted_as_such(run, tmp_path):
    """A corpus trace whose counted x_failure.agent nested 255 levels ended the site's
    build in an internal error (orjson writes 254 levels; it reads 1,024)."""
    trace = json.loads(SOURCE_EXAMPLE.read_text(encoding="utf-8"))
    corpus = tmp_path / "deep.jsonl"
    deep = dict(trace, x_failure={"event": "e1", "agent": json.loads(_nested(255))})
    corpus.write_text(json.dumps(deep) + "\n" + json.dumps(dict(trace, trace_id="t2")) + "\n", encoding="utf-8")
    result = run("trace", "export", str(corpus), "-o", str(tmp_path / "tables"), cwd=tmp_path)
    assert result.exit_code == 0, result.output
    counted = summary.field_counts(tmp_path / "tables", [str(corpus)], [], ["x_failure.agent"])
    assert [(row["value"], row["traces"]) for row in counted] == [(summary.TOO_DEEP, 1), (None, 1)]


def _otlp(arguments: str) -> dict:
    def text(value: str) -> dict:
        return {"stringValue": value}

    def span(number: int, parent: int | None, name: str, start: int, attributes: dict) -> dict:
        made = {
            "traceId": "7e5ea7c4000000000000000000000001",
            "spanId": f"{number:016x}",
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(1767225600000000000 + start * 10**8),
            "endTimeUnixNano": str(1767225600000000000 + (start + 1) * 10**8),
            "attributes": [{"key": key, "value": text(value)} for key, value in attributes.items()],
        }
        return made | ({"parentSpanId": f"{parent:016x}"} if parent else {})

    spans = [
        span(1, None, "invoke_agent Lead", 0, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Lead"}),
        span(
            2,
            1,
            "execute_tool transfer_to_agent",
            1,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "transfer_to_agent",
                "gen_ai.tool.call.arguments": arguments,
                "gen_ai.agent.name": "Lead",
            },
        ),
    ]
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}]}


def test_tool_arguments_holding_a_lone_surrogate_name_no_agent(run, tmp_path):
    """`{"agent_name": "\\ud800bad"}` as a transfer's arguments: Python's json read the lone
    surrogate, it became an agent's name, and the import wrote (exit 0) a trace that
    `trace validate` then refused as no JSON. Attribute text is read as orjson reads a
    trace file: no object, so no agent is named from it."""
    export = tmp_path / "surrogate.otlp.json"
    export.write_text(json.dumps(_otlp('{"agent_name": "\\ud800bad"}')), encoding="utf-8")
    imported = run("trace", "import", str(export), "-o", str(tmp_path / "out.json"), cwd=tmp_path)
    assert imported.exit_code == 0, imported.output
    checked = run("trace", "validate", str(tmp_path / "out.json"), cwd=tmp_path)
    assert checked.exit_code == 0, checked.output
    assert "\\ud800" not in (tmp_path / "out.json").read_text(encoding="utf-8")
    # the same arguments without the surrogate name the agent handed to
    export.write_text(json.dumps(_otlp('{"agent_name": "Helper"}')), encoding="utf-8")
    run("trace", "import", str(export), "-o", str(tmp_path / "named.json"), cwd=tmp_path)
    assert '"to": "Helper"' in Path(tmp_path / "named.json").read_text(encoding="utf-8")


def test_a_who_and_when_step_nested_a_thousand_levels_is_one_line(run, tmp_path):
    """mistake_step as a list nested 1,000 levels (orjson reads it) was quoted through
    Python's json, which ran past the stack: an internal error."""
    log = tmp_path / "deep.json"
    log.write_text(
        '{"history": [{"content": "hi", "role": "human"}], "question": "q", "question_ID": "id1", '
        '"mistake_agent": "Orchestrator", "mistake_reason": "r", "mistake_step": ' + _nested(1000) + "}",
        encoding="utf-8",
    )
    for given in ([], ["--from", "who-and-when"]):
        result = run("trace", "import", *given, str(log), "-o", str(tmp_path / "out.json"), cwd=tmp_path)
        assert result.exit_code == 1
        assert result.output == (
            f"Error: {log}: /mistake_step: [...] is not a step number; write the index in `history` of the failing "
            "step, counting from 0\n"
        )
        assert not (tmp_path / "out.json").exists()


def _no_schema(events: list, edges: list) -> dict:
    return {"trace_id": "t", "task_id": "t", "rewards": {}, "costs": {}, "events": events, "edges": edges}


def test_a_cycle_in_a_trace_without_a_schema_is_cut_where_it_closes(run, tmp_path):
    """Six messages at one time, each waiting on the next and the last on the first (a
    warning in the artifact's format): the critical path came out 7 events long, longer
    than the trace. The edge that closes the cycle is left out, as paths.py says."""
    events = [{"id": f"e{i}", "t": 0, "type": "message", "agent": f"a{i}", "to": f"a{(i + 1) % 6}"} for i in range(6)]
    edges = [{"src": f"e{i + 1}", "dst": f"e{i}", "type": "causal"} for i in range(5)]
    edges.append({"src": "e0", "dst": "e5", "type": "causal"})
    trace = tmp_path / "cycle.json"
    trace.write_text(json.dumps(_no_schema(events, edges)), encoding="utf-8")
    result = run("trace", "metrics", str(trace), "--format", "json", cwd=tmp_path)
    measured = json.loads(result.output[result.output.index("{") :])
    assert (measured["critical_path_events"], measured["parallelism_speedup_events"]) == (6, 1)


def test_warnings_say_what_the_places_they_count_share_and_when_counting_stopped(run, tmp_path):
    """A property's warnings were counted as "like" the first whatever each said, and a
    graph rule's, which stop at MOST_PROBLEMS + 1, as if that were all of them."""
    events = [{"id": f"e{i}", "t": 0, "type": "message", "agent": "a", "to": "a"} for i in range(400)]
    events[4]["call"] = {"a": 1}
    events[5]["call"] = "x" * 300
    edges = []
    for i in range(0, 400, 2):
        edges += [{"src": f"e{i}", "dst": f"e{i + 1}", "type": "causal"}, {"src": f"e{i + 1}", "dst": f"e{i}", "type": "causal"}]
    trace = tmp_path / "warned.json"
    trace.write_text(json.dumps(_no_schema(events, edges)), encoding="utf-8")
    result = run("trace", "validate", str(trace), cwd=tmp_path)
    assert result.exit_code == 0
    assert result.output.splitlines()[:2] == [
        f'{trace}: warning: /events/4/call: {{"a": 1}} is an object, not text in quotes; write text in quotes '
        "(and 1 more event with a warning on `call`)",
        f"{trace}: warning: /edges/1: causal, spawn, return and aggregate edges form a cycle e0 -> e1 -> e0; an event "
        "cannot wait on itself: remove or reverse one of these edges (and at least 100 more edges like it)",
    ]


def test_an_event_holding_a_long_list_of_bad_values_is_worded_by_its_first(run, tmp_path):
    """Round eighteen: one event whose rewards held a million empty objects (3 MB) made
    3 million errors, 6 GB, before the first was worded: jsonschema-rs gathers them all.
    An item of over LARGE_ITEM values gives its first error, and says so."""
    events = [{"id": "e0", "t": 0, "type": "message", "agent": "a", "to": "a", "rewards": [{}] * 30_000}]
    declared = tmp_path / "declared.json"
    declared.write_text(
        json.dumps({"schema": "urn:paperpool:schema:orchestration-trace:1.0.0", "trace_id": "t", "events": events, "edges": []}),
        encoding="utf-8",
    )
    result = run("trace", "validate", str(declared), cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            f"{declared}: /events/0: holds over 10,000 values, so only its first problem was looked for; correct it and "
            "check again",
            f"{declared}: /events/0/rewards/0/channel: missing: add `channel` (the reward channel (for example team, "
            "orchestration, tool, debate))",
            f"{declared}: invalid, 2 problems.",
        ],
    )
    loose = tmp_path / "loose.json"
    loose.write_text(json.dumps(_no_schema(events, [])), encoding="utf-8")
    warned = run("trace", "validate", str(loose), cwd=tmp_path)
    assert warned.exit_code == 0
    assert warned.output.splitlines()[0] == (
        f"{loose}: warning: /events/0/rewards/0/channel: missing: add `channel` (the reward channel (for example team, "
        "orchestration, tool, debate))"
    )


def test_an_exported_trace_s_key_is_written_once_per_batch_not_per_row(run, tmp_path):
    """Round eighteen: each event, edge and reward row held its own copy of the trace's key,
    and a trace in the artifact's format may have a trace_id of any length: one of a million
    characters over 5,000 events took `trace export` 3.2 GB. The key is written by
    dictionary: its text once, the rows pointing to it."""
    import pyarrow.parquet as pq

    events = [{"id": f"e{i}", "t": i, "type": "message", "agent": "o", "to": "o"} for i in range(2_000)]
    trace = _no_schema(events, []) | {"trace_id": "x" * 100_000}
    (tmp_path / "long.json").write_text(json.dumps(trace), encoding="utf-8")
    result = run("trace", "export", "long.json", "-o", "tables", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    table = pq.read_table(tmp_path / "tables" / "events")
    assert str(table.schema.field("trace_id").type) == "dictionary<values=string, indices=int32, ordered=0>"
    assert table.column("trace_id").chunk(0).dictionary.to_pylist() == ["x" * 100_000]
    assert table.num_rows == 2_000
    summary = run("trace", "summary", "tables", "--format", "json", cwd=tmp_path)
    assert summary.exit_code == 0, summary.output


def test_a_summary_refuses_tables_whose_text_written_out_passes_its_bound(run, tmp_path):
    """Round eighteen: an events table of 6.5 kB held one type of 8 MiB, by dictionary, over
    60,000 rows; DuckDB copies it for each row (6.6 GB). The text each row's value makes is
    summed from the dictionary before any query, and a table past MOST_TEXT refused."""
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    from paperpool.traces import summary

    assert run("trace", "export", str(REPO / "traces" / "debate-two-rounds.json"), "-o", "tables", cwd=tmp_path).exit_code == 0
    events = tmp_path / "tables" / "events" / "part-0.parquet"
    table = pq.read_table(events)
    row, rows = table.slice(0, 1).to_pylist()[0], 1_100
    huge = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["x" * (1 << 20)]))
    columns = {
        name: huge if name == "type" else pa.array([row[name]] * rows, table.schema.field(name).type)
        for name in table.schema.names
    }
    os.remove(events)
    pq.write_table(pa.table(columns), events, compression="zstd")
    result = run("trace", "summary", "tables", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        "Error: tables/events/part-0.parquet: its text, each row's written out, is "
        f"{rows * (1 << 20) + sum(len(str(row[k])) for k in ('file', 'trace_id')) * rows:,} bytes, over the "
        f"{summary.MOST_TEXT:,} paperpool reads of a table (a long trace_id, file name or value repeated over many rows); "
        "shorten them in the traces, and export the corpus again with paperpool trace export\n",
    )


def test_a_summary_by_an_event_column_groups_by_the_trace_s_and_never_by_a_row_name(run, tmp_path):
    """Round eighteen: `--by tokens` grouped the event types by each event's own tokens (the
    events table has a column of that name), and `--by events` gave the event types' rows
    two values of one name, losing the group's."""
    assert run("trace", "export", str(REPO / "traces" / "debate-two-rounds.json"), "-o", "tables", cwd=tmp_path).exit_code == 0
    by_tokens = json.loads(run("trace", "summary", "tables", "--by", "tokens", "--format", "json", cwd=tmp_path).output)
    trace_tokens = {row["tokens"] for row in by_tokens["metrics"]}
    assert len(trace_tokens) == 1 and {row["tokens"] for row in by_tokens["event_types"]} == trace_tokens
    result = run("trace", "summary", "tables", "--by", "events", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        "Error: --by events: the summary's rows name their own measure, traces, count, mean, min, p10, p25, p50, p75, "
        "p90, max, type, events, share so, and a group of that name would lose its value; group by another column\n",
    )
