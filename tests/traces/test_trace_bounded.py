"""Traces that made the trace commands work out of proportion to their size (issue 39, the
hostile review's findings): each is generated here, small enough to run in a second or
two now, and the test asserts on what is said and counted, never on time."""

from __future__ import annotations

import difflib
import gzip
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zstandard

from paperpool.files.problems import SUGGEST_AMONG, SUGGEST_LONGEST, PaperpoolError, suggest
from paperpool.traces import rules, schema, validation

from ..conftest import REPO, children, edit
from .artifact_traces import ARTIFACT_ASKS


def _write(path: Path, events: list, edges: list) -> Path:
    path.write_text(
        json.dumps({"trace_id": "t", "schema": schema.schema_id(), "events": events, "edges": edges}), encoding="utf-8"
    )
    return path


def _closed_chain(path: Path, events: int, closing: int) -> Path:
    """Events 0..events-1 at one time, a causal chain through them, closed `closing` times by the same edge back to 0."""
    chain = [{"src": str(i), "dst": str(i + 1), "type": "causal"} for i in range(events - 1)]
    back = [{"src": str(events - 1), "dst": "0", "type": "causal"}] * closing
    return _write(path, [{"id": str(i), "t": 0, "type": "message", "agent": "a"} for i in range(events)], chain + back)


# ---- F1: many edges closing one long cycle ------------------------------------------


def test_many_edges_closing_a_long_cycle_give_the_first_hundred_each_shortened(run, tmp_path):
    """3,000 copies of one edge close a cycle of 3,000 events: each was a copy of the
    search's path (20,000 x 20,000 took 3 GB); now the first hundred cycles are built,
    each line naming its first and last events and how many between."""
    path = _closed_chain(tmp_path / "closed.json", 3000, 3000)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == schema.MOST_PROBLEMS + 1
    assert [line.split(": ")[1] for line in lines[:-1]] == [f"/edges/{k}" for k in range(2999, 3099)]
    assert lines[0] == (
        f"{path}: /edges/2999: causal, spawn, return and aggregate edges form a cycle 0 -> 1 -> 2 -> 3 -> "
        "4 -> 5 -> 6 -> (2,991 more events) -> 2998 -> 2999 -> 0; an event cannot wait on itself: "
        "remove or reverse one of these edges"
    )
    assert lines[-1].startswith(f"{path}: invalid, more than 100 problems")


def test_a_cycle_of_ten_events_is_named_whole(tmp_path):
    checked = validation.check_file(_closed_chain(tmp_path / "ten.json", 10, 1))
    assert [f.message.split("cycle ")[1].split(";")[0] for f in checked.findings] == [" -> ".join("0123456789") + " -> 0"]


def test_find_cycles_gives_each_closing_edges_cycle_in_order_of_the_edge():
    """On random graphs: each cycle is a closed walk of edges of the graph that ends with
    the edge closing it, the cycles come in the order of those edges, and `most` keeps
    the first of them."""
    generator = random.Random(39)
    for _ in range(200):
        nodes, count = generator.randint(1, 12), generator.randint(0, 30)
        sources = [generator.randrange(nodes) for _ in range(count)]
        targets = [generator.randrange(nodes) for _ in range(count)]
        ids = generator.sample(range(1000), count)
        ends = {k: (a, b) for a, b, k in zip(sources, targets, ids, strict=True)}
        cycles = rules.find_cycles(sources, targets, ids)
        for cycle in cycles:
            walk = [ends[k] for k in cycle]
            assert all(walk[i][1] == walk[i + 1][0] for i in range(len(walk) - 1)) and walk[-1][1] == walk[0][0]
        assert [cycle[-1] for cycle in cycles] == sorted(cycle[-1] for cycle in cycles)
        assert rules.find_cycles(sources, targets, ids, 2) == cycles[:2]


# ---- F2: guessing at unknown names ---------------------------------------------------


def _ab(generator: random.Random, length: int) -> str:
    return "".join(generator.choice("ab") for _ in range(length))


def test_long_unknown_ids_are_not_guessed_at(run, tmp_path):
    """101 edges from unknown 199-character ids, against 3,000 events of such ids (776 kB):
    difflib took seconds a guess, and never finished; a name past SUGGEST_LONGEST is not guessed at."""
    generator = random.Random(39)
    ids = [_ab(generator, 199) for _ in range(3000)]
    edges = [{"src": _ab(generator, 199), "dst": ids[0], "type": "message"} for _ in range(101)]
    path = _write(tmp_path / "long-ids.json", [{"id": i, "t": 0, "type": "message", "agent": "a"} for i in ids], edges)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == schema.MOST_PROBLEMS + 1
    assert [line.split(": ")[1] for line in lines[:-1]] == [f"/edges/{k}/src" for k in range(100)]
    assert all(
        line.endswith(f"no event has id '{edge['src']}'; name an event of this trace, or add the event")
        for line, edge in zip(lines[:-1], edges[: schema.MOST_PROBLEMS], strict=True)
    )


@pytest.mark.slow
def test_suggest_gives_difflibs_answer_for_ordinary_names():
    """Short names among a few hundred: the closest by difflib, or the one that differs only in case, as before the bounds."""
    generator = random.Random(39)
    for _ in range(2000):
        letters = "abcdefghijklmnopqrstuvwxyz_"[: generator.randint(2, 27)]
        words = [
            "".join(generator.choice(letters) for _ in range(generator.randint(1, 20))) for _ in range(generator.randint(1, 300))
        ]
        name = words.pop()
        same = [word for word in words if word.casefold() == name.casefold()]
        close = same or difflib.get_close_matches(name, words, n=1)
        assert suggest(name, words, "none") == (f"did you mean '{close[0]}'?" if close else "none")


@pytest.mark.slow
def test_suggest_past_its_bounds():
    long = "x" * (SUGGEST_LONGEST + 1)
    assert suggest(long + "1", [long + "2"], "none") == "none"
    assert suggest(long.upper(), [long], "none") == f"did you mean '{long}'?"  # a case apart is still said
    many = [f"name-{k}" for k in range(SUGGEST_AMONG + 1)]
    assert suggest("name-1x", many, "none") == "none"
    assert suggest("name-1x", iter(many[:SUGGEST_AMONG]), "none") == "did you mean 'name-1'?"
    # 10,000 ids of 64 to 149 characters past SUGGEST_WORK: difflib ranks rapidfuzz's shortlist
    generator = random.Random(39)
    ids = [_ab(generator, generator.randint(64, 149)) for _ in range(SUGGEST_AMONG)]
    name = _ab(generator, 64)
    guess = suggest(name, ids, "none").removeprefix("did you mean '").removesuffix("'?")
    assert guess in ids and difflib.SequenceMatcher(None, guess, name).ratio() >= 0.6


# ---- F3: a spawn tree deeper than numpy's passes --------------------------------------


def _spawn_chain(length: int, loop: bool = False) -> list[dict]:
    """Agent i spawns agent i+1 at t=i, written latest first; with `loop`, the last spawns the first."""
    events = [{"id": f"s{i}", "t": i, "type": "spawn", "agent": str(i), "to": str(i + 1)} for i in range(length)]
    if loop:
        events[-1]["to"] = "0"
    return events[::-1]


def test_a_spawn_chain_of_thousands_has_its_depth_alone_and_in_a_corpus(run, tmp_path):
    """A chain of 5,000 spawns, deeper than the 64 passes of numpy, is walked once per
    agent (60,000 took 18 s: each step searched the chain walked so far)."""
    path = _write(tmp_path / "deep.json", _spawn_chain(5000), [])
    result = run("trace", "metrics", str(path), "--format", "json", cwd=tmp_path)
    assert result.exit_code == 0 and json.loads(result.output)["depth"] == 5000
    lines = tmp_path / "deep.jsonl"
    lines.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    result = run("trace", "metrics", str(lines), "--format", "jsonl", cwd=tmp_path)
    assert result.exit_code == 0 and json.loads(result.output.splitlines()[0])["depth"] == 5000


def test_a_spawn_loop_counts_each_agent_once(tmp_path):
    from paperpool.traces import metrics
    from paperpool.traces.mapping import default

    checked = validation.check_file(_write(tmp_path / "loop.json", _spawn_chain(101, loop=True), []))
    assert metrics.compute(checked.index, checked.top, default())["depth"] == 101


# ---- F4: compressed files that expand out of proportion; a trace past the memory ----------

PAD = '{"trace_id": "pad", "schema": "%s", "events": [{"id": "e", "t": 0, "type": "stop", "agent": "a", "x_pad": "%s"}], "edges": []}\n'


def _padded(size: int) -> bytes:
    return (PAD % (schema.schema_id(), "a" * size)).encode()


@pytest.mark.slow
def test_a_compressed_file_past_its_ratio_stops_the_command(run, tmp_path, pool_copy):
    """32 MiB of gzip'd padding in 32 kB (1,000 times): stopped past the first 16 MiB, a
    line naming the file and the setting; a pool that raises the setting reads it."""
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(_padded(32 << 20)))
    result = run("trace", "metrics", str(path), cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: {path}:1: the corpus's compressed files decompress to more than 200 bytes for each compressed byte by "
            "this line of this file (a line counting as at least 4,096 bytes); a corpus compresses some 10 to 20 times and a "
            "compression bomb thousands: raise "
            "traces.limits.compression_ratio in the pool's registry.yaml if it is meant to be this large\n"
        ),
    )
    edit(pool_copy / "registry.yaml", "traces:\n", "traces:\n  limits: {compression_ratio: 2000}\n")
    result = run("trace", "metrics", str(path), cwd=pool_copy)
    assert result.exit_code == 0 and result.output.endswith("1 trace: 1 valid, 0 invalid.\n")


@pytest.mark.slow
def test_the_first_16_mib_are_the_whole_corpus_s_not_each_file_s(run, tmp_path):
    """200 files of 560 bytes of zstd, each 16 MiB of one line (3.2 GiB in 112 kB): each file
    alone is within the first 16 MiB, which took a minute; the corpus is stopped in its
    second file."""
    folder = tmp_path / "many"
    folder.mkdir()
    one = zstandard.ZstdCompressor(level=19).compress(b'{"trace_id": "t", "x": "' + b"A" * ((16 << 20) - 64) + b'"}\n')
    for k in range(200):
        (folder / f"{k:03}.jsonl.zst").write_bytes(one)
    result = run("trace", "metrics", str(folder), "--format", "csv", cwd=tmp_path)
    assert result.exit_code == 1 and result.output.endswith(
        f"Error: {folder / '001.jsonl.zst'}:1: the corpus's compressed files decompress to more than 200 bytes for each "
        "compressed byte by this line of this file (a line counting as at least 4,096 bytes); a corpus compresses some 10 to 20 times and a compression bomb "
        "thousands: raise traces.limits.compression_ratio in the pool's registry.yaml if it is meant to be this large\n"
    )


def test_the_first_16_mib_are_read_whatever_their_ratio(run, tmp_path):
    path = tmp_path / "small.json.gz"
    path.write_bytes(gzip.compress(_padded(15 << 20)))
    result = run("trace", "metrics", str(path), cwd=tmp_path)
    assert result.exit_code == 0 and result.output.endswith("1 trace: 1 valid, 0 invalid.\n")


def _paperpool(*args: str, cwd: Path, memory: int | None = None) -> subprocess.CompletedProcess:
    """paperpool in a process of its own, its address space limited to `memory` bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "paperpool", *args],
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        preexec_fn=limit if memory else None,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=300,
    )


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_trace_past_the_memory_is_one_line_naming_it(tmp_path, jobs):
    """A trace of 128 MiB in 800 MB of address space: the worker's MemoryError (orjson's
    'not enough memory', once said as 'not JSON') is one line, never an internal error."""
    path = tmp_path / "big.jsonl"
    path.write_bytes(_padded(128 << 20))
    done = _paperpool("trace", "metrics", str(path), "--jobs", jobs, cwd=tmp_path, memory=800 << 20)
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        (
            f"Error: {path}:1: measuring the traces from this line on, it ran out of memory, and the rows before it are on "
            "standard output; a trace needs some five times its bytes of memory in each of the --jobs processes: give fewer "
            "--jobs or more memory, or split the longest traces\n"
        ),
    )
    single = path.rename(tmp_path / "big.json")
    done = _paperpool("trace", "validate", str(single), cwd=tmp_path, memory=800 << 20)
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        (
            f"Error: {single}: not enough memory to read this trace (it needs some five times its bytes); give paperpool "
            "more memory, or split the trace into several\n"
        ),
    )


@pytest.mark.slow
def test_a_worker_killed_midway_is_one_line_naming_where(tmp_path):
    """A worker killed (as the system kills one when memory runs out) broke the pool: an
    internal error. The corpus is long enough for the kill to come while it is measured."""
    events = [{"id": f"e{i}", "t": i, "type": "message", "agent": f"a{i % 7}", "to": "a0"} for i in range(10_000)]
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        (json.dumps({"trace_id": "t", "schema": schema.schema_id(), "events": events, "edges": []}) + "\n") * 150,
        encoding="utf-8",
    )
    output = tmp_path / "rows.csv"
    command = subprocess.Popen(
        [sys.executable, "-m", "paperpool", "trace", "metrics", str(path), "--jobs", "2", "-o", str(output)],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    while command.poll() is None and not (workers := children(command.pid)):
        time.sleep(0.01)
    os.kill(min(workers), signal.SIGKILL)
    _, stderr = command.communicate(timeout=300)
    assert command.returncode == 1 and not output.exists()
    assert re.fullmatch(
        rf"Error: {re.escape(str(path))}:\d+: measuring the traces from this line on, its process was killed "
        r"\(the system kills one when memory runs out\), and nothing was written; a trace needs some five "
        r"times its bytes of memory in each of the --jobs processes: give fewer --jobs or more memory, or "
        r"split the longest traces\n",
        stderr,
    )


# ---- a fresh review (issue 39, last rounds) ---------------------------------------------


def test_a_quote_in_a_long_name_is_said_in_one_pass(run, tmp_path):
    """A trace without a schema whose edges name missing events of 100 kB after a quote:
    the warning's words were grouped by a regular expression that backtracked over the
    name (a minute of CPU for 100 kB). An edge naming no event is now an error, as the
    artifact's own checker has it (issue 38): each is said once, in its own line."""
    name = "x'" + "a" * 100_000  # no digit after it: the pattern's part for numbers tried every place
    path = tmp_path / "quoted.json"
    path.write_text(
        json.dumps(
            {
                "trace_id": "t",
                "events": [{"id": "e", "t": 0, "type": "message", "agent": "a"}],
                "edges": [{"src": "e", "dst": name + "b" * k, "type": "message"} for k in range(3)],
            }
            | ARTIFACT_ASKS
        ),
        encoding="utf-8",
    )
    result = run("trace", "validate", str(path), cwd=tmp_path)
    lines = result.output.splitlines()
    assert (result.exit_code, lines[-1]) == (
        1,
        f"{path}: invalid, 3 problems; 1 warning.",
    )  # names over 200 characters, warned of
    assert [line for line in lines if "no event has id" in line] == [
        f"{path}: /edges/{k}/dst: no event has id '{name + 'b' * k}'; name an event of this trace, or add the event"
        for k in range(3)
    ]


def test_empty_events_without_edges_are_checked_an_event_at_a_time(run, tmp_path):
    """200,000 empty events and no edges, no schema: the trace was checked whole, a
    million errors worded (16 s, 1.4 GB) before the first hundred were shown."""
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"trace_id": "t", "events": [{}] * 200_000} | ARTIFACT_ASKS), encoding="utf-8")
    result = run("trace", "validate", str(path), cwd=tmp_path)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == schema.MOST_PROBLEMS + 1
    assert lines[0].startswith(f"{path}: /events/0/agent: missing: add `agent`")
    assert [line.split(": ")[1] for line in lines[:-1]] == [
        f"/events/{k}/{field}" for k in range(25) for field in ("agent", "id", "t", "type")
    ]
    assert lines[-1].startswith(f"{path}: invalid, more than 100 problems")


@pytest.mark.slow
def test_a_top_level_of_many_unknown_fields_words_the_first_ones(tmp_path):
    """300,000 unknown fields at the top level are one error of the schema naming them
    all; each was worded with a close name looked for (16 s): the first ones are, and the
    rest are named plainly, so that every one is counted."""
    trace = {"trace_id": "t", "events": [], "edges": [], **{f"k{i}": 0 for i in range(300_000)}}
    found = schema.first_findings(schema._validator(), trace, schema.MOST_PROBLEMS)
    assert len(found) == 300_000  # every one counted
    assert found[0] == schema.Finding(
        "/k0", "unknown field 'k0'; remove it, or prefix its name with x_ to keep it as an extension"
    )
    close = schema.first_findings(schema._validator(), {"trace_ib": "t", **trace}, schema.MOST_PROBLEMS)
    assert [f.message for f in close if f.pointer == "/trace_ib"] == ["unknown field 'trace_ib'; did you mean 'trace_id'?"]
    checked = validation.check_trace(trace)
    assert (len(checked.findings), checked.more) == (schema.MOST_PROBLEMS, True)


def test_a_trace_without_edges_is_held_to_the_events_limit(run, tmp_path, pool_copy):
    edit(pool_copy / "registry.yaml", "traces:\n", "traces:\n  limits: {trace_events: 1000}\n")
    path = pool_copy / "many.json"
    path.write_text(json.dumps({"trace_id": "t", "events": [[]] * 1001}), encoding="utf-8")
    result = run("--root", str(pool_copy), "trace", "validate", "many.json", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        (
            "many.json: /events: the trace has 1,001 events, over the limit of 1,000; split the run into several traces, or "
            "raise traces.limits.trace_events in the pool's registry.yaml if it is meant to be this large\n"
            "many.json: invalid, 1 problem.\n"
        ),
    )


# ---- a fresh review (issue 39, last rounds): OTLP imports -------------------------------

T0 = 1767225600000000000


def _span(number: int, parent: int | None, start: int, end: int, **attributes) -> dict:
    return {
        "traceId": "7e5ea7c4000000000000000000000001",
        "spanId": f"{number:016x}",
        **({"parentSpanId": f"{parent:016x}"} if parent else {}),
        "name": str(attributes.get("gen_ai.operation.name", "")),
        "startTimeUnixNano": str(T0 + start),
        "endTimeUnixNano": str(T0 + end),
        "attributes": [{"key": key.replace("__", "."), "value": {"stringValue": value}} for key, value in attributes.items()],
    }


def _export(path: Path, spans: list[dict]) -> Path:
    path.write_text(
        json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]}, ensure_ascii=False),
        encoding="utf-8",
    )
    return path


def _agent(number: int, parent: int | None, start: int, end: int, name: str) -> dict:
    return _span(number, parent, start, end, **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name})


@pytest.mark.slow
def test_handoffs_under_a_chain_of_agents_of_one_name_pass_the_chain_once(run, tmp_path):
    """3,000 nested agents of one name starting together, and 3,000 handoffs to that name
    under the deepest: each handoff walked the whole chain again (16,000: 82 s)."""
    count = 3000
    spans = [_agent(k, k - 1 or None, 0, 10**9, "x") for k in range(1, count + 1)]
    spans += [
        _span(count + 1 + k, count, 0, 1, **{"gen_ai.operation.name": "agent_handoff", "gen_ai.handoff.to_agent": "x"})
        for k in range(count)
    ]
    result = run("trace", "import", str(_export(tmp_path / "chain.json", spans)), "-o", "out.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (0, "wrote out.json: 8,999 events, 11,997 edges\n")


@pytest.mark.slow
def test_an_orchestrator_of_many_agents_keeps_the_latest_end(run, tmp_path):
    """One agent that runs 20,000 others: each child took the maximum of every earlier
    child's end (120,000: 2 minutes)."""
    spans = [_agent(1, None, 0, 10**9, "lead")] + [_agent(k, 1, k, k + 1, f"w{k}") for k in range(2, 20_002)]
    result = run("trace", "import", str(_export(tmp_path / "wide.json", spans)), "-o", "out.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (0, "wrote out.json: 60,000 events, 79,999 edges\n")


def test_an_attribute_of_json_nested_past_pythons_stack_is_no_transfer(run, tmp_path):
    """A transfer tool's arguments nested 200,000 deep: Python's json raised RecursionError,
    an internal error; such arguments name no agent, as any that are not JSON."""
    deep = "[" * 200_000 + "]" * 200_000
    spans = [
        _agent(1, None, 0, 10**9, "lead"),
        _span(
            2,
            1,
            1,
            2,
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "transfer_to_agent",
                "gen_ai.tool.call.arguments": deep,
            },
        ),
    ]
    result = run("trace", "import", str(_export(tmp_path / "deep.json", spans)), "-o", "out.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (0, "wrote out.json: 3 events, 2 edges\n")


def test_a_handoff_to_an_agent_named_in_another_script_finds_that_agent(run, tmp_path):
    """Agents named in Chinese letters all had one empty key: a handoff to 作家 started 研究者."""
    spans = [
        _agent(1, None, 0, 100, "lead"),
        _span(2, 1, 10, 11, **{"gen_ai.operation.name": "agent_handoff", "gen_ai.handoff.to_agent": "作家"}),
        _agent(3, 1, 20, 50, "研究者"),
    ]
    result = run("trace", "import", str(_export(tmp_path / "names.json", spans)), "-o", "out.json", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    events = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["events"]
    # no agent 作家 ran: the handoff is a message to it, and 研究者 is started on its own
    assert [(event["type"], event.get("to")) for event in events] == [
        ("message", "作家"),
        ("spawn", "研究者"),
        ("return", "lead"),
        ("stop", None),
    ]


def test_export_never_writes_through_a_linked_folder_on_its_way(run, tmp_path):
    """`-o link/tables` wrote into the folder the link leads to, where import and metrics
    refuse the same path."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    result = run("trace", "export", str(REPO / "traces" / "debate-two-rounds.json"), "-o", "link/tables", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: -o link/tables: the folder link is a symbolic link; paperpool never writes through one: give the path the "
            "link leads to, or another one (nothing was written)\n"
        ),
    )
    assert list((tmp_path / "real").iterdir()) == []


def test_a_partition_value_that_reads_back_as_missing_is_refused(run, tmp_path):
    """Arrow names the folder of a missing value __HIVE_DEFAULT_PARTITION__ and reads it
    back as missing: a run of that name merged with the traces without one."""
    trace = json.loads((REPO / "traces" / "debate-two-rounds.json").read_text(encoding="utf-8"))
    (tmp_path / "c.jsonl").write_text(json.dumps({**trace, "run": "__HIVE_DEFAULT_PARTITION__"}) + "\n", encoding="utf-8")
    result = run("trace", "export", "c.jsonl", "-o", "tables", "--partition-by", "run", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: c.jsonl:1: /run: '__HIVE_DEFAULT_PARTITION__' names the folder of the traces without a run, and readers "
            "would take this one for missing; --partition-by another field, or rename the run\n"
        ),
    )
    assert not (tmp_path / "tables").exists()


def test_a_glob_leaves_out_a_linked_file_as_a_folder_does(run, tmp_path):
    (tmp_path / "corpus").mkdir()
    shutil.copy(REPO / "traces" / "debate-two-rounds.json", tmp_path / "corpus" / "own.json")
    (tmp_path / "corpus" / "link.json").symlink_to(REPO / "traces" / "swarm-six-workers.json")
    by_folder = run("trace", "metrics", "corpus", "-o", "a.csv", cwd=tmp_path)
    by_glob = run("trace", "metrics", "corpus/*.json", "-o", "b.csv", cwd=tmp_path)
    assert by_folder.output == by_glob.output.replace("b.csv", "a.csv") == "1 trace to a.csv: 1 valid, 0 invalid.\n"


@pytest.mark.slow
def test_counted_values_of_a_megabyte_cost_what_a_page_shows_of_them(pool_copy):
    """60 traces, each with a megabyte nested nine fields deep and all ten fields counted
    (issue 39's fourth review: each value was kept whole, 10 x the corpus, and 6 MB of gzip
    took 9 GB); now each value counted is its first 200 characters, its length and a digest."""
    import tracemalloc

    from paperpool.registry import load_registry
    from paperpool.traces.site import corpora

    base = json.loads((REPO / "traces" / "debate-two-rounds.json").read_text(encoding="utf-8"))
    lines = []
    for k in range(60):
        big: object = f"{k:04}" + "A" * (1 << 20)
        for name in "ihgfedcba":
            big = {name: big}
        lines.append(json.dumps(base | {"trace_id": f"big-{k}", "x_big": big}))
    (pool_copy / "corpora" / "big.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    fields = ["x_big", *("x_big." + ".".join("abcdefghi"[:depth]) for depth in range(1, 10))]
    declared = f"    - name: big\n      path: corpora/big.jsonl\n      title: Big\n      count: [{', '.join(fields)}]\n"
    edit(pool_copy / "registry.yaml", "  corpora:\n", "  corpora:\n" + declared)
    registry, problems = load_registry(pool_copy)
    assert registry is not None, problems
    tracemalloc.start()
    try:
        pages = corpora.pages(registry)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 150_000_000, f"{peak:,} bytes at the peak for a 63 MB corpus"  # it was over 600 MB
    deepest = pages[0].counts[-1]
    assert len(deepest.rows) == corpora.MOST_VALUES + 1  # every value differs: a digest tells them apart
    assert deepest.rows[0][0] == f"{0:04}" + "A" * 196 + f"… ({(1 << 20) + 4 - 200:,} characters more)"


@pytest.mark.slow
def test_the_limits_have_ceilings_and_a_trace_is_read_in_what_it_holds(run, pool_copy):
    """Issue 39's fifth review: `trace_bytes: 9223372036854775807` passed validate and made
    every trace command an internal error (read() was asked for the limit and a byte), and
    64 GiB made a 3 kB trace "not enough memory". Each limit now has a ceiling, and a
    trace is read in the bytes it holds: at the ceiling, 600 MB of address space reads one."""
    edit(pool_copy / "registry.yaml", "traces:\n", "traces:\n  limits: {trace_bytes: 9223372036854775807}\n")
    line = next(n for n, text in enumerate((pool_copy / "registry.yaml").read_text().splitlines(), 1) if "trace_bytes" in text)
    checked = run("validate", cwd=pool_copy)
    assert checked.output == (
        f"registry.yaml:{line}: traces.limits.trace_bytes: 9223372036854775807 is over the most paperpool allows, "
        "4,294,967,296; give 4,294,967,296 or less\n1 error, 0 warnings.\n"
    )
    edit(pool_copy / "registry.yaml", "trace_bytes: 9223372036854775807", "trace_bytes: 4294967296")
    assert run("validate", cwd=pool_copy).exit_code == 0
    shutil.copytree(REPO / "traces", pool_copy / "traces")
    result = _paperpool("trace", "validate", "traces/debate-two-rounds.json", cwd=pool_copy, memory=600_000_000)
    assert (result.returncode, result.stdout) == (0, "traces/debate-two-rounds.json: valid: 8 events, 10 edges.\n")


@pytest.mark.slow
def test_workers_end_with_a_command_killed_outright(tmp_path):
    """Issue 39's fifth review: a command killed with SIGKILL (timeout -s KILL, the
    out-of-memory killer) left its workers running for good, holding its output open, so
    a pipeline reading it never ended. The kernel now ends them with it."""
    from paperpool.traces import synth

    from ..conftest import descendants

    synth.write_corpus(synth.corpus(20_000, events=50, group_size=8, seed=3), tmp_path / "corpus.jsonl")
    command = subprocess.Popen(
        [sys.executable, "-m", "paperpool", "trace", "metrics", "corpus.jsonl", "--format", "csv", "--jobs", "2"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    command.stdout.read(200_000)  # rows are coming: the workers are measuring
    workers = descendants(command.pid)
    assert workers, "the corpus is measured by workers"
    command.kill()
    command.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in workers):
        time.sleep(0.1)
    assert [pid for pid in workers if Path(f"/proc/{pid}").exists()] == []
    command.stdout.read()  # the pipe ends: no worker holds it open
    command.stdout.close()


@pytest.mark.slow
def test_an_export_stopped_by_sigterm_says_so_and_exits_130(tmp_path):
    """Issue 39's sixth review: click turned the stop into "Aborted!" and exit status 1."""
    from paperpool.traces import synth

    synth.write_corpus(synth.corpus(20_000, events=50, group_size=8, seed=4), tmp_path / "corpus.jsonl")
    command = subprocess.Popen(
        [sys.executable, "-m", "paperpool", "trace", "export", "corpus.jsonl", "-o", "tables"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    time.sleep(1.5)
    command.send_signal(signal.SIGTERM)
    _, errors = command.communicate(timeout=60)
    assert (command.returncode, errors) == (130, "Error: interrupted; nothing was left half-written.\n")
    assert [path.name for path in tmp_path.iterdir()] == ["corpus.jsonl"]


def test_a_small_gzip_of_a_million_empty_lines_is_refused_early(run, tmp_path):
    """A hostile review: 2.9 kB of gzip holding a million lines of {} stayed inside the
    first 16 MiB, and each line was an invalid trace to report: a minute a command, and
    a minute per corpus in a build. A line of a compressed file counts as 4,096 bytes."""
    path = tmp_path / "empty.jsonl.gz"
    path.write_bytes(gzip.compress(b"{}\n" * 1_000_000, 9))
    result = run("trace", "metrics", str(path), "--jobs", "1", cwd=tmp_path)
    assert result.exit_code == 1
    last = result.output.splitlines()[-1]
    assert re.fullmatch(
        rf"Error: {re.escape(str(path))}:\d+: the corpus's compressed files decompress to more than 200 bytes for each "
        r"compressed byte by this line of this file \(a line counting as at least 4,096 bytes\); .*",
        last,
    )
    assert int(last.split(":")[2]) < 5_000


def test_corpora_sharing_files_are_refused(run, pool_copy):
    """A hostile review: one small file declared as 19 corpora was read 19 times by a build."""
    declared = "".join(f"    - name: again{k}\n      path: corpora/who-and-when.jsonl.gz\n      title: Again\n" for k in range(2))
    edit(pool_copy / "registry.yaml", "  corpora:\n", "  corpora:\n" + declared)
    result = run("validate", cwd=pool_copy)
    lines = [line for line in result.output.splitlines() if "holds files of corpus" in line]
    assert (
        result.exit_code == 1
        and [line.split(": ", 2)[2] for line in lines]
        == ["'corpora/who-and-when.jsonl.gz' holds files of corpus 'again0' too; give each corpus files of its own"] * 2
    )


def test_a_field_name_of_a_megabyte_is_quoted_cut(run, tmp_path):
    """A hostile review: a corpus line whose unknown field's name was a megabyte made its
    problem line two megabytes, and ten such lines made a corpus page too large to build
    (the build blamed paperpool's template). A problem quotes a name's first 100 characters."""
    trace = json.loads((REPO / "traces" / "debate-two-rounds.json").read_text(encoding="utf-8"))
    path = tmp_path / "named.json"
    path.write_text(json.dumps(trace | {"Z" * (1 << 20): 1}), encoding="utf-8")
    result = run("trace", "validate", str(path), cwd=tmp_path)
    cut = "Z" * 100 + f"… ({(1 << 20) - 100:,} characters more)"
    assert (result.exit_code, result.output.splitlines()[0]) == (
        1,
        f"{path}: /{cut}: unknown field '{cut}'; remove it, or prefix its name with x_ to keep it as an extension",
    )


def test_a_failure_reason_of_megabytes_is_drawn_cut():
    """A hostile review: an x_failure.reason of 15 MB was drawn six times into a gallery
    trace's timeline, and the page was too large to build."""
    from paperpool.traces import timeline

    trace = json.loads((REPO / "traces" / "swarm-six-workers.json").read_text(encoding="utf-8"))
    trace["x_failure"] = {"event": trace["events"][3]["id"], "agent": "B" * 300, "step": 3, "reason": "R" * (15 << 20)}
    failure = timeline.labelled_failure(trace)
    assert failure["reason"] == "R" * 500 + f"… ({(15 << 20) - 500:,} characters more)"
    assert failure["agent"] == "B" * 100 + "… (200 characters more)" and failure["event"] == trace["events"][3]["id"]
    assert len(timeline.draw(trace)) < 20_000


@pytest.mark.parametrize(
    ("text", "decodes"),
    [
        # "spans" keys nested around one long value: each was decoded again, with its own copy
        ('{"resourceSpans":[],"a":' + '{"spans":[' * 450 + '"' + "a" * 100_000 + '"' + "]}" * 450 + "}", 1),
        # nested with no end: each key was a decode failing 1,000 levels down
        ('{"resourceSpans":[],"a":' + '{"spans":[' * 80_000, 1),
        # keys before garbage: each decode fails at once, and the scan goes on past it
        ('{"resourceSpans":[' + '{"spans":[x' * 1_000, 1_000),
    ],
    ids=["nested-around-a-long-value", "nested-with-no-end", "each-followed-by-garbage"],
)
def test_recognising_openinference_decodes_each_part_of_the_text_once(tmp_path, monkeypatch, text, decodes):
    """openinference.first_spans decodes no part of the text twice (the review's 7 MB file
    took 3.3 GB, and 800 kB 20 s): counted by the characters its decoder is given."""
    from paperpool.traces import openinference

    path = tmp_path / "spans.json"
    path.write_text(text, encoding="utf-8")
    calls = []
    decode = json.JSONDecoder.raw_decode

    def counted(self, s, idx=0):
        calls.append(idx)
        return decode(self, s, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counted)
    assert len(openinference.first_spans(path)) <= 1
    assert len(calls) == decodes


@pytest.mark.slow
def test_a_corpus_page_of_too_many_counted_rows_names_the_setting(pool_copy):
    """200 groups of 13 traces, ten counted fields each holding 13 values per group: 26,000
    rows (the ninth review's 500 groups made an 11 MB page, refused by the page limit with
    "look for a very long value" although no value was long); now refused naming the corpus
    and the settings to change."""
    from paperpool.registry import load_registry
    from paperpool.traces.site import corpora

    stop = [{"id": "a", "t": 0, "type": "stop", "agent": "o"}]
    lines = [
        json.dumps(
            {"schema": schema.schema_id(), "trace_id": f"t{g}-{k}", "task_id": f"T{g}", "events": stop, "edges": []}
            | {f"x_f{j}": f"v{k}-{j}" for j in range(10)}
        )
        for g in range(200)
        for k in range(13)
    ]
    (pool_copy / "corpora" / "many.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    fields = ", ".join(f"x_f{j}" for j in range(10))
    declared = (
        f"    - name: many\n      path: corpora/many.jsonl\n      title: Many\n      by: [task_id]\n      count: [{fields}]\n"
    )
    edit(pool_copy / "registry.yaml", "  corpora:\n", "  corpora:\n" + declared)
    registry, problems = load_registry(pool_copy)
    assert registry is not None, problems
    with pytest.raises(PaperpoolError) as refused:
        corpora.pages(registry)
    assert refused.value.message == (
        "registry.yaml: traces.corpora: many: its 10 counted fields over 200 groups make 26,000 rows, over the 20,000 a "
        "corpus page shows; count fewer fields (count), or group by a field with fewer values (by)"
    )


def test_a_trace_of_thousands_of_reward_channels_is_refused_before_the_schema(run, tmp_path):
    """Round fourteen: the schema words each badly named channel with an error holding the
    whole `rewards` object, so 4,000 took 10 s and 2.6 GB, 120,000 over 23 GB, declared or
    not, alone or in a corpus or a pool's build. More than MOST_CHANNELS is one problem."""
    from paperpool.traces import batch, corpus, mapping, rows
    from paperpool.traces.validation import MOST_CHANNELS

    trace = {
        "trace_id": "t1",
        "task_id": "task",
        "events": [{"id": "e1", "t": 0, "type": "orchestrator_decision", "agent": "lead"}],
        "edges": [],
        "costs": {},
        "rewards": {str(n): 0 for n in range(5_000)},
    }
    (tmp_path / "many.json").write_text(json.dumps(trace), encoding="utf-8")
    (tmp_path / "many.jsonl").write_text(json.dumps(trace) + "\n" + json.dumps({"schema": schema.schema_id(), **trace}) + "\n")
    said = (
        f"/rewards: declares 5,000 reward channels, over the {MOST_CHANNELS} a trace may; keep the run's channels there "
        "and put any other numbers in an x_ field"
    )
    result = run("trace", "validate", "many.json", cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()) == (1, [f"many.json: {said}", "many.json: invalid, 1 problem."])
    records = list(corpus.records([tmp_path / "many.jsonl"]))
    measured = batch.measure(records, mapping.default())
    assert measured.table["problem"] == [said, said] == [rows.measure(r, mapping.default()).row["problem"] for r in records]
