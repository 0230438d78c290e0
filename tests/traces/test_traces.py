"""`paperpool trace validate`: the schema, the loader's refusals and one fixture per graph
rule, each failing with its own message, checked as exact output and exit status."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import jsonschema_rs
import pytest

from paperpool.traces import loading, schema, validation
from paperpool.traces.validation import check_trace

from ..conftest import REPO, edit
from .fixtures import FIXTURES, SOURCE_EXAMPLE


def fixture(name: str) -> str:
    return str(FIXTURES / name)


def test_schema_is_a_versioned_draft_2020_12_schema():
    document = json.loads(schema.schema_text())
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"] == "urn:paperpool:schema:orchestration-trace:1.0.0"
    assert document["x-version"] == "1.0.0" and document["$id"].endswith(document["x-version"])
    assert jsonschema_rs.meta.is_valid(document)


def test_schema_lists_every_event_and_edge_type_of_the_issue():
    assert schema.event_types() == [
        "orchestrator_decision",
        "spawn",
        "despawn",
        "message",
        "tool_call",
        "tool_result",
        "return",
        "aggregate",
        "human_intervention",
        "safety_event",
        "stop",
    ]
    assert schema.edge_types() == [
        "temporal",
        "causal",
        "spawn",
        "message",
        "tool_dependency",
        "return",
        "aggregate",
        "safety_flow",
    ]
    assert schema.credit_units() == ["team", "orchestrator", "role", "agent", "turn", "message", "tool", "token"]
    assert schema.ordering_edge_types() == {"causal", "spawn", "return", "aggregate"}


@pytest.mark.skipif(not SOURCE_EXAMPLE.is_file(), reason="the source artifact (shared/) is not beside this clone")
def test_the_source_example_validates_unchanged(run, tmp_path):
    result = run("trace", "validate", str(SOURCE_EXAMPLE), cwd=tmp_path)
    assert (result.exit_code, result.output) == (0, f"{SOURCE_EXAMPLE}: valid: 8 events, 8 edges.\n")


def test_a_valid_trace(run, tmp_path):
    result = run("trace", "validate", fixture("valid.json"), cwd=tmp_path)
    assert (result.exit_code, result.output) == (0, f"{fixture('valid.json')}: valid: 10 events, 11 edges.\n")


# One fixture per graph rule: each differs from valid.json in the one way its rule forbids.
RULES = {
    "duplicate-id.json": "/events/10/id: id 'm1' is already the id of /events/5; give each event its own id",
    "edge-to-missing-event.json": "/edges/10/dst: no event has id 'x9'; name an event of this trace, or add the event",
    "edge-back-in-time.json": "/edges/11: causal edge b1 -> m1 goes back in time (t=4 -> t=3); it must lead to an event "
    "at the same time or later: swap src and dst, or correct the times",
    "cycle.json": "/edges/12: causal, spawn, return and aggregate edges form a cycle b1 -> b2 -> b1; an event cannot wait "
    "on itself: remove or reverse one of these edges",
    "acts-before-spawn.json": "/events/5/t: agent 'worker_b' acts at t=0.5, before the spawn that creates it (/events/2, t=1); "
    "correct the times, or spawn it earlier",
    "result-without-call.json": "/events/4: tool_result of 'fetch' answers no tool_call: there is no call of 'fetch' at or "
    "before t=3; add the tool_call, or name it in `call`",
    "result-names-no-call.json": "/events/4/call: 'm1' is a message event, not a tool_call; name the tool_call this result answers",
    "return-to-unknown-agent.json": "/events/7/to: return goes to 'leed', which is no agent of this trace; did you mean 'lead'?",
    "negative-cost.json": "/events/3/cost/tokens: -100 is negative; tokens cannot be negative, write 0 or more",
    "costs-over-total.json": "/costs/tokens: the events' costs add up to 350 tokens, more than the declared 300; "
    "correct the total or the events' costs",
    "event-longer-than-run.json": "/events/8/cost/seconds: the event took 2 s, longer than the whole run (wall_clock_s 1.5); "
    "correct one of them",
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_graph_rule_fails_with_its_own_message(run, tmp_path, name):
    result = run("trace", "validate", fixture(name), cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output == f"{fixture(name)}: {RULES[name]}\n{fixture(name)}: invalid, 1 problem.\n"


def test_the_rule_fixtures_differ_in_their_messages():
    assert len(set(RULES.values())) == len(RULES)


def test_every_schema_problem_is_reported_with_its_pointer(run, tmp_path):
    name = fixture("schema-errors.json")
    result = run("trace", "validate", name, cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"{name}: /trace_id: missing: add `trace_id` (the trace's own identifier, unique among the traces of a collection)",
        (
            f"{name}: /events/2/to: missing: a spawn event needs `to` (the agent a spawn creates, a message is sent to, "
            "or a return goes to); add it"
        ),
        f'{name}: /events/3/t: "2" is text, not a number; write a number',
        f"{name}: /events/5/type: \"mesage\" is not a known event type; did you mean 'message'?",
        f"{name}: /events/6/agnet: unknown field 'agnet'; did you mean 'agent'?",
        f"{name}: /events/9/rewards/0/unit: \"teem\" is not a known credit unit; did you mean 'team'?",
        f"{name}: /edges/0/type: \"spawned\" is not a known edge type; did you mean 'spawn'?",
        f"{name}: invalid, 7 problems.",
    ]


def test_non_finite_numbers_are_named_by_pointer(run, tmp_path):
    name = fixture("not-finite.json")
    result = run("trace", "validate", name, cwd=tmp_path)
    why = "is not a finite number, which JSON and traces require; write a finite number (costs and rewards must be finite)"
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            f"{name}: /events/3/cost/seconds: NaN {why}",
            f"{name}: /events/9/rewards/0/value: Infinity {why}",
            f"{name}: /rewards/team: 1e999 {why}",
            f"{name}: invalid, 3 problems.",
        ],
    )


def test_non_finite_numbers_given_in_memory_are_refused_too():
    trace = json.loads((FIXTURES / "valid.json").read_text(encoding="utf-8"))
    trace["costs"]["tokens"] = math.nan
    trace["events"][9]["rewards"][0]["value"] = math.inf
    assert [f.line("T") for f in check_trace(trace).findings] == [
        "T: /events/9/rewards/0/value: Infinity is not a finite number; write a finite number",
        "T: /costs/tokens: NaN is not a finite number; write a finite number",
    ]


UNREADABLE = {
    "empty.json": "file is empty; a trace is a JSON object with trace_id, events and edges",
    "not-json.json": "not JSON at line 1, column 1: invalid literal, expected 'true'; check that the file is a JSON trace",
    "truncated.json": "the JSON stops in the middle (line 78, column 21): the file is truncated; export or copy it again",
    "too-deep.json": "nesting is deeper than 1,024 levels at line 1, column 1059; a trace nests only a few levels, "
    "so this is not a trace file",
    "top-level-list.json": "the file holds a list, not a trace; a trace is a JSON object with trace_id, events and edges",
}


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_a_file_that_is_no_trace_is_one_clear_line(run, tmp_path, name):
    result = run("trace", "validate", fixture(name), cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"{fixture(name)}: {UNREADABLE[name]}\n{fixture(name)}: invalid, 1 problem.\n",
    )


def test_a_byte_order_mark_is_refused(run, tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / "valid.json").read_bytes())
    result = run("trace", "validate", str(path), cwd=tmp_path)
    assert result.output.splitlines()[0] == f"{path}: file starts with a byte-order mark; save it as UTF-8 without BOM"


def test_a_file_over_the_limit_is_refused_before_it_is_read(run, tmp_path):
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # sparse: the size is there, the bytes are not
        handle.truncate(loading.MAX_TRACE_BYTES + 1)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()[0]) == (
        1,
        (
            f"{path}: file is 536,870,913 bytes, over the 536,870,912-byte limit for a trace (traces.limits.trace_bytes); "
            "is it the right file? "
            "(a longer run can be split into several traces)"
        ),
    )


def test_the_limit_is_checked_on_the_size_not_on_the_content(tmp_path):
    path = tmp_path / "small.json"
    path.write_text((FIXTURES / "valid.json").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(loading.TraceUnreadable) as caught:
        loading.read_trace(path, max_bytes=100)
    assert "over the 100-byte limit" in caught.value.findings[0].message


def test_a_missing_file_and_a_folder(run, tmp_path):
    result = run("trace", "validate", "nowhere.json", str(tmp_path), cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "nowhere.json: cannot read the file: No such file or directory; check the path and its permissions",
        "nowhere.json: invalid, 1 problem.",
        f"{tmp_path}: is a folder, not a trace file; name a .json trace file",
        f"{tmp_path}: invalid, 1 problem.",
        "2 files: 0 valid, 2 invalid.",
    ]


def test_several_files_each_get_their_result(run, tmp_path):
    result = run("trace", "validate", fixture("valid.json"), fixture("cycle.json"), cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"{fixture('valid.json')}: valid: 10 events, 11 edges.",
        f"{fixture('cycle.json')}: {RULES['cycle.json']}",
        f"{fixture('cycle.json')}: invalid, 1 problem.",
        "2 files: 1 valid, 1 invalid.",
    ]


def test_a_longer_cycle_is_reported_with_its_whole_path():
    trace = json.loads((FIXTURES / "valid.json").read_text(encoding="utf-8"))
    for event in trace["events"]:
        event["t"] = 0  # one time for all: only the edges order the events
    trace["edges"].append({"src": "x1", "dst": "d1", "type": "causal"})
    # d1 -> s1 -> c1 stops there (c1 -> r1 is a tool_dependency, not an ordering edge), so the
    # only cycle runs through worker_b's branch
    assert [f.line("T") for f in check_trace(trace).findings] == [
        (
            "T: /edges/11: causal, spawn, return and aggregate edges form a cycle d1 -> s2 -> m1 -> b2 -> a1 -> x1 -> d1; "
            "an event cannot wait on itself: remove or reverse one of these edges"
        )
    ]


def test_a_self_loop_is_a_cycle():
    trace = json.loads((FIXTURES / "valid.json").read_text(encoding="utf-8"))
    trace["edges"].append({"src": "a1", "dst": "a1", "type": "aggregate"})
    assert [f.line("T") for f in check_trace(trace).findings] == [
        (
            "T: /edges/11: causal, spawn, return and aggregate edges form a cycle a1 -> a1; an event cannot wait on itself: "
            "remove or reverse one of these edges"
        )
    ]


def test_graph_rules_do_not_repeat_what_the_schema_said():
    trace = json.loads((FIXTURES / "valid.json").read_text(encoding="utf-8"))
    trace["events"][3]["t"] = "late"  # the tool_call: its edges and its result are not judged on a time it lacks
    assert [f.pointer for f in check_trace(trace).findings] == ["/events/3/t"]


def test_registry_traces_section_is_checked(run, pool_copy):
    edit(pool_copy / "registry.yaml", "  folder: traces\n", "  folder: traces\n  colour: blue\n")
    edit(pool_copy / "registry.yaml", "    O2: [tool_call]\n", "    O2: [tool_cal]\n    O9: [message]\n")
    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "traces" in line]
    assert [line.split(": ", 1)[1] for line in lines] == [
        "traces.colour: unknown setting 'colour'; use one of corpora, folder, limits, pages, subdecisions, vocabulary",
        "traces.subdecisions.O2.0: 'tool_cal' is not an event type of the trace schema; did you mean 'tool_call'?",
        "traces.subdecisions.O9: 'O9' is not a value of vocabulary 'subdecision'; use one of O1, O2, O3, O4, O5",
    ]


CORPUS = "      path: corpora/who-and-when.jsonl.gz\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (
            CORPUS,
            "      path: ../who-and-when.jsonl.gz\n",
            (
                "traces.corpora.0.path: '../who-and-when.jsonl.gz' leads out of the pool "
                "('..'); give the path, in the pool, of a JSON Lines file (.jsonl, .jsonl.gz, .jsonl.zst), a trace file or a folder of them"
            ),
        ),
        (
            CORPUS,
            "      path: /etc/passwd\n",
            (
                "traces.corpora.0.path: '/etc/passwd' is an absolute path, outside the pool; give the "
                "path, in the pool, of a JSON Lines file (.jsonl, .jsonl.gz, .jsonl.zst), a trace file or a folder of them"
            ),
        ),
        (
            CORPUS,
            "      path: linked/who-and-when.jsonl.gz\n",
            (
                "traces.corpora.0.path: 'linked/who-and-when.jsonl.gz': linked is a "
                "symbolic link; put the corpus itself in the pool, not a link to it"
            ),
        ),
        (
            "    - name: who-and-when\n",
            "    - name: Who&When\n",
            ("traces.corpora.0.name: give a name of lower-case letters, digits and single hyphens, e.g. `name: who-and-when`"),
        ),
        (
            "      by: [system]\n",
            "      by: [system]\n      colour: blue\n",
            ("traces.corpora.0.colour: unknown setting 'colour'; use one of about, by, count, name, path, source, title"),
        ),
        (
            "      count: [x_failure.agent]\n",
            "      count: [x_failure..agent]\n",
            ("traces.corpora.0.count.0: name a trace field, dotted for a field inside another, e.g. x_failure.agent"),
        ),
        (
            "      count: [x_failure.agent]\n",
            "      count: [x_failure.agent]\n    - {name: who-and-when, path: corpora, title: T}\n",
            "traces.corpora.1.name: 'who-and-when' names an earlier corpus too; give each corpus a name of its own",
        ),
        (
            '      title: "Who&When: 184 multi-agent failure logs"\n',
            "",
            ("traces.corpora.0.title: missing `title`; add it (what the page calls the corpus)"),
        ),
    ],
)
def test_a_corpus_is_a_place_in_the_pool_declared_once(run, pool_copy, old, new, said):
    (pool_copy / "linked").symlink_to(pool_copy / "corpora")
    edit(pool_copy / "registry.yaml", old, new)
    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 1
    assert [line.split(": ", 1)[1] for line in result.output.splitlines()[:-1]] == [said]


def test_validate_without_files_checks_the_pools_traces_folder(run, pool_copy):
    folder = pool_copy / "traces"
    folder.mkdir()
    (folder / "one.json").write_text((FIXTURES / "valid.json").read_text(encoding="utf-8"), encoding="utf-8")
    result = run("trace", "validate", cwd=pool_copy)
    assert (result.exit_code, result.output) == (0, f"{folder / 'one.json'}: valid: 10 events, 11 edges.\n")


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(run, tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    result = run("trace", "validate", "pipe.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            "pipe.json: not a plain file (a device, pipe or socket, or a link to one); name a .json file\n"
            "pipe.json: invalid, 1 problem.\n"
        ),
    )


@pytest.mark.parametrize("folder", ["traces", "data/traces"])
def test_a_linked_traces_folder_is_refused(run, pool_copy, tmp_path, folder):
    """The link is the folder itself, or a folder on its way (registry traces.folder: data/traces)."""
    elsewhere = tmp_path / "elsewhere" / "traces"
    elsewhere.mkdir(parents=True)
    (elsewhere / "one.json").write_text((FIXTURES / "valid.json").read_text(encoding="utf-8"), encoding="utf-8")
    linked = folder.split("/")[0]
    (pool_copy / linked).symlink_to(elsewhere if linked == "traces" else elsewhere.parent)
    if folder != "traces":
        edit(pool_copy / "registry.yaml", "  folder: traces\n", f"  folder: {folder}\n")
    result = run("trace", "validate", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: {linked}: is a symbolic link; the pool's traces are a plain folder of the pool: "
            "replace the link with the folder itself\n"
        ),
    )


def test_a_linked_trace_stops_the_build(run, tiny, tmp_path, snapshot):
    (tiny / "traces").mkdir()
    (tiny / "traces" / "leak.json").symlink_to(FIXTURES / "valid.json")  # a valid trace, outside the pool
    before = snapshot(tmp_path)
    result = run("build", "--out", str(tmp_path / "site"), cwd=tiny)
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        1,
        (
            "Error: traces/leak.json: is a symbolic link; a trace of the pool is a plain file: replace the link with the file itself"
        ),
    )
    assert snapshot(tmp_path) == before  # no site, nothing published


def test_validate_without_files_outside_a_pool(run, tmp_path):
    result = run("trace", "validate", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        ("Error: no trace files named and no pool here; name the files: paperpool trace validate FILE...\n"),
    )


def test_the_shipped_examples_validate(run):
    files = sorted((REPO / "traces").glob("*.json"))
    assert len(files) >= 5
    result = run("trace", "validate", *map(str, files), cwd=REPO)
    assert result.exit_code == 0, result.output
    assert result.output.endswith(f"{len(files)} files: {len(files)} valid, 0 invalid.\n")


def test_loader_refuses_nan_literals_that_the_standard_library_accepts(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"trace_id": "t", "events": [], "edges": [], "costs": {"tokens": -Infinity}}', encoding="utf-8")
    with pytest.raises(loading.TraceUnreadable) as caught:
        loading.read_trace(Path(path))
    assert [f.line("t") for f in caught.value.findings] == [
        (
            "t: /costs/tokens: -Infinity is not a finite number, which JSON and traces require; write a finite number "
            "(costs and rewards must be finite)"
        )
    ]


def test_a_file_read_in_chunks_gets_the_same_report():
    """Large files are read a chunk of events at a time: every fixture, read so in chunks of
    three, gives the report it gives when parsed whole."""
    for path in sorted(FIXTURES.glob("*.json")):
        assert validation.report(path.name, path, chunk_above=0, chunk=3) == validation.report(path.name, path), path.name


def test_validate_names_the_importer_of_a_who_and_when_log(run):
    """The Who&When logs shipped beside their traces (one of each part) are no traces:
    validate says so in one line each and names the command that converts them."""
    logs = ["traces/who-and-when/Hand-Crafted/14.json", "traces/who-and-when/Algorithm-Generated/1.json"]
    result = run("trace", "validate", *logs, cwd=REPO)
    said = (
        "is who-and-when input, not an orchestration trace: Who&When multi-agent failure logs (Magentic-One runs, "
        "CaptainAgent group chats); convert it first: paperpool trace import --from who-and-when {} -o TRACE.json"
    )
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            f"{logs[0]}: " + said.format(logs[0]),
            f"{logs[0]}: invalid, 1 problem.",
            f"{logs[1]}: " + said.format(logs[1]),
            f"{logs[1]}: invalid, 1 problem.",
            "2 files: 0 valid, 2 invalid.",
        ],
    )


def test_a_corpus_is_grouped_by_fields_a_row_of_trace_metrics_has():
    from paperpool.traces import rows, section

    assert set(section.GROUPABLE) <= {column.name for column in rows.IDENTITY}


def _empty_events(path: Path, count: int, declared: bool = True) -> Path:
    head = f'"schema": "{schema.schema_id()}", ' if declared else ""
    path.write_text(
        '{"trace_id": "empty", "task_id": "t", "rewards": {}, "costs": {}, '
        + head
        + '"edges": [], "events": ['
        + ",".join(["{}"] * count)
        + "]}",
        encoding="utf-8",
    )
    return path


@pytest.mark.slow
@pytest.mark.parametrize("declared", [True, False])
def test_a_trace_with_a_million_problems_shows_the_first_hundred_and_says_there_are_more(run, tmp_path, declared):
    """250,000 empty events break the schema 1.5 million times: the first MOST_PROBLEMS are
    built, in document order, and the rest are not looked for (issue 39: 18 s and 1.8 GB)."""
    path = _empty_events(tmp_path / "empty.json", 250_000, declared)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == schema.MOST_PROBLEMS + 1
    assert (
        lines[0]
        == f"{path}: /events/0/agent: missing: add `agent` (the agent that acts (for a tool_result, the tool or the agent that called it))"
    )
    assert lines[-1] == (
        f"{path}: invalid, more than 100 problems (the first 100 above; past them problems are not looked "
        "for: fix these, often one mistake repeated, and validate it again)."
    )
    # the first hundred are those of the whole list, in the same order
    small = _empty_events(tmp_path / "small.json", 40, declared)
    assert lines[:-1] == [line.replace(str(small), str(path)) for line in validation.report(str(small), small)[1][:100]]
    # read in chunks, the same
    assert validation.report(str(path), path, chunk_above=0, chunk=1000) == (False, lines)


def test_a_trace_of_a_hundred_problems_is_counted_exactly(tmp_path):
    checked = validation.check_file(_empty_events(tmp_path / "t.json", 20))  # six problems each
    assert (len(checked.findings), checked.more) == (100, True)
    checked = validation.check_file(_empty_events(tmp_path / "t.json", 16))
    assert (len(checked.findings), checked.more) == (96, False)


def test_each_graph_rule_builds_at_most_the_cap(tmp_path):
    """1,000 edges that run back in time: the first hundred are said, and there are more."""
    events = [{"id": f"e{k}", "t": k, "type": "message", "agent": "a", "to": "a"} for k in range(1001)]
    edges = [{"src": f"e{k + 1}", "dst": f"e{k}", "type": "causal"} for k in range(1000)]
    path = tmp_path / "back.json"
    path.write_text(
        json.dumps({"trace_id": "b", "schema": schema.schema_id(), "events": events, "edges": edges}), encoding="utf-8"
    )
    checked = validation.check_file(path)
    assert checked.more and len(checked.findings) == 100
    assert [f.pointer for f in checked.findings] == [f"/edges/{k}" for k in range(100)]


def test_a_trace_over_the_limit_of_events_is_refused_before_it_is_checked(tmp_path):
    from dataclasses import replace

    from paperpool.traces import limits

    path = _empty_events(tmp_path / "t.json", 11)
    checked = validation.check_file(path, replace(limits.default(), trace_events=10))
    assert [f.line("t.json") for f in checked.findings] == [
        (
            "t.json: /events: the trace has 11 events, over the limit of 10; split the run into several traces, or raise "
            "traces.limits.trace_events in the pool's registry.yaml if it is meant to be this large"
        )
    ]


def test_the_limits_default_to_the_schemas_and_a_pool_sets_them(run, pool_copy, tmp_path):
    from paperpool.registry import load_registry
    from paperpool.traces import limits

    defaults = limits.default()
    assert (defaults.corpus_lines, defaults.trace_events, defaults.trace_bytes) == (1_000_000, 2_000_000, loading.MAX_TRACE_BYTES)
    edit(pool_copy / "registry.yaml", "traces:\n", "traces:\n  limits: {trace_events: 10, corpus_lines: 0}\n")
    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 1 and "traces.limits.corpus_lines" in result.output
    edit(pool_copy / "registry.yaml", "corpus_lines: 0", "corpus_lines: 3")
    registry, _ = load_registry(pool_copy)
    assert limits.for_registry(registry) == limits.Limits(
        defaults.corpus_bytes, 3, defaults.trace_bytes, 10, defaults.compression_ratio
    )
    path = _empty_events(tmp_path / "t.json", 11)
    result = run("trace", "validate", str(path), cwd=pool_copy)
    assert result.output.splitlines()[0] == (
        f"{path}: /events: the trace has 11 events, over the limit of 10; split the run "
        "into several traces, or raise traces.limits.trace_events in the pool's "
        "registry.yaml if it is meant to be this large"
    )
