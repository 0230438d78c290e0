"""`paperpool trace import --from who-and-when`: the logs of Who&When, a real dataset of
multi-agent failure logs (../shared/real-traces/who-and-when, MIT licence), as orchestration
traces. Every one of its 184 logs is converted and validated; three ship in traces/ with
the traces made from them; each kind of bad log is one line naming the file and the place.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from paperpool.files.problems import PaperpoolError
from paperpool.traces import mapping, otlp_format, schema, section, timeline, whowhen
from paperpool.traces.importing import ImportOptions, formats, import_traces
from paperpool.traces.importing import detect as detect_format
from paperpool.traces.loading import dump_trace
from paperpool.traces.validation import check_trace

from ..conftest import REPO

DATASET = REPO.parent / "shared" / "real-traces" / "who-and-when"
LOGS = DATASET / "Who&When"
SHIPPED = REPO / "traces" / "who-and-when"
# the shipped logs (paths as in the dataset) and the traces made from them
EXAMPLES = {
    "Hand-Crafted/14.json": "who-and-when-hand-crafted-14",
    "Algorithm-Generated/1.json": "who-and-when-algorithm-generated-1",
    "Algorithm-Generated/10.json": "who-and-when-algorithm-generated-10",
}
needs_dataset = pytest.mark.skipif(not LOGS.is_dir(), reason="the Who&When dataset (shared/real-traces) is not beside this clone")
KNOWN = {"otlp": otlp_format.FORMAT, "who-and-when": whowhen.FORMAT}  # as the entry points register them


def convert(*paths: Path, topology: str | None = None) -> list:
    return import_traces(list(paths), whowhen.FORMAT, ImportOptions(topology))[0]


def dataset_logs() -> list[Path]:
    return sorted(LOGS.glob("*/*.json"), key=lambda path: (path.parent.name, int(path.stem)))


# The real dataset: every log


@needs_dataset
def test_every_log_of_the_dataset_converts_to_a_valid_trace():
    paths = dataset_logs()
    imported = convert(*paths)
    assert len(imported) == 184
    assert all(check_trace(item.trace).valid for item in imported)
    parts = Counter(item.trace["x_source"]["part"] for item in imported)
    assert parts == {"hand-crafted": 58, "algorithm-generated": 126}
    # one event per step, at t = the step's index
    for item, path in zip(imported, paths, strict=True):
        steps = len(json.loads(path.read_bytes())["history"])
        assert [event["t"] for event in item.trace["events"]] == list(range(steps)), path
        assert [event["id"] for event in item.trace["events"]] == [f"step-{step}" for step in range(steps)]

    def counted(part: str, key: str) -> dict:
        return dict(
            Counter(thing["type"] for item in imported if item.trace["x_source"]["part"] == part for thing in item.trace[key])
        )

    # Magentic-One: 1,563 thoughts; 679 instructions to agents (the delegations, O2), of which
    # 10 to the code executor are tool calls; 58 tasks from the human; 642 replies; 31 runs
    # end on a termination condition
    assert counted("hand-crafted", "events") == {
        "message": 737,
        "orchestrator_decision": 1563,
        "return": 642,
        "stop": 31,
        "tool_call": 10,
        "tool_result": 10,
    }
    assert sum(event.get("decision") == "O2" for item in imported for event in item.trace["events"]) == 679
    # the group chats: 238 steps with code that the executor ran next, 79 chats ending on TERMINATE
    assert counted("algorithm-generated", "events") == {"message": 544, "stop": 79, "tool_call": 238, "tool_result": 238}
    assert counted("hand-crafted", "edges") == {"causal": 2789, "message": 723, "return": 619, "tool_dependency": 10}
    assert counted("algorithm-generated", "edges") == {"causal": 620, "message": 363, "tool_dependency": 238}


@pytest.mark.slow
@needs_dataset
def test_the_whole_dataset_through_the_commands(run, tmp_path):
    """trace import writes a file per log, named by its part and file; trace validate
    finds every one valid."""
    result = run("trace", "import", "--from", "who-and-when", *map(str, dataset_logs()), "-o", "out", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 184 and lines[0] == "wrote out/who-and-when-algorithm-generated-1.json: 6 events, 5 edges"
    assert lines[-1] == "wrote out/who-and-when-hand-crafted-58.json: 106 events, 145 edges"
    files = sorted(str(path.relative_to(tmp_path)) for path in (tmp_path / "out").iterdir())
    assert len(files) == 184
    assert run("trace", "validate", *files, cwd=tmp_path).output.splitlines()[-1] == "184 files: 184 valid, 0 invalid."


@needs_dataset
def test_the_failure_labels_are_kept_as_given():
    """x_failure keeps each log's labels; the labelled agent is the failing step's own in
    176 logs. In the other 8 the dataset names another: a case variant (Websurfer), the
    agent addressed at that step, or the caller of the code whose output the step is."""
    imported = convert(*dataset_logs())
    differ = []
    for item in imported:
        failure = item.trace["x_failure"]
        log = json.loads(item.source.read_bytes())
        assert failure == {
            "agent": log["mistake_agent"],
            "step": int(log["mistake_step"]),
            "event": f"step-{log['mistake_step']}",
            "reason": log["mistake_reason"],
        }
        event = item.trace["events"][failure["step"]]
        if event["agent"] != failure["agent"]:
            differ.append((item.trace["x_source"]["log"], failure["agent"], event["type"], event["agent"], event.get("to")))
    assert differ == [
        ("Algorithm-Generated/14.json", "Culinary_Awards_Expert", "tool_result", "Computer_terminal", None),
        ("Algorithm-Generated/15.json", "Boggle_Board_Expert", "tool_call", "Verification_Expert", None),
        ("Algorithm-Generated/59.json", "DataExtraction_Expert", "tool_result", "Computer_terminal", None),
        ("Hand-Crafted/11.json", "Websurfer", "return", "WebSurfer", "Orchestrator"),
        ("Hand-Crafted/13.json", "Websurfer", "return", "WebSurfer", "Orchestrator"),
        ("Hand-Crafted/20.json", "WebSurfer", "message", "Orchestrator", "WebSurfer"),
        ("Hand-Crafted/22.json", "FileSurfer", "return", "WebSurfer", "Orchestrator"),
        ("Hand-Crafted/49.json", "WebSurfer", "return", "Assistant", "Orchestrator"),
    ]


@needs_dataset
def test_every_log_is_recognised_by_its_content():
    for path in dataset_logs():
        assert detect_format([path], KNOWN) is whowhen.FORMAT, path
    # and nothing else is taken for a log: the OTLP export, paperpool's own traces
    assert detect_format([REPO / "traces" / "otlp" / "research-team.otlp.json"], KNOWN) is otlp_format.FORMAT
    for path in sorted((REPO / "traces").glob("*.json")):
        assert not whowhen.detect(path, path.read_text(encoding="utf-8")[:65536]), path


@needs_dataset
def test_the_shipped_logs_are_unchanged_copies_with_the_licence():
    for log in EXAMPLES:
        assert (SHIPPED / log).read_bytes() == (LOGS / log).read_bytes(), log
    assert (SHIPPED / "LICENSE").read_bytes() == (DATASET / "LICENSE").read_bytes()


# The shipped examples


def test_the_shipped_traces_are_what_the_import_makes_of_the_shipped_logs():
    imported = convert(*(SHIPPED / log for log in EXAMPLES))
    assert [item.name for item in imported] == list(EXAMPLES.values())
    for item in imported:
        assert (REPO / "traces" / f"{item.name}.json").read_text(encoding="utf-8") == dump_trace(item.trace), item.name


def test_the_readmes_command_remakes_the_shipped_traces(run, tmp_path):
    shutil.copytree(SHIPPED, tmp_path / "traces" / "who-and-when")
    inputs = [f"traces/who-and-when/{log}" for log in EXAMPLES]
    result = run("trace", "import", *inputs, "-o", "traces", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        0,
        (
            "wrote traces/who-and-when-hand-crafted-14.json: 32 events, 41 edges\n"
            "wrote traces/who-and-when-algorithm-generated-1.json: 6 events, 5 edges\n"
            "wrote traces/who-and-when-algorithm-generated-10.json: 10 events, 10 edges\n"
        ),
    )
    for name in EXAMPLES.values():
        assert (tmp_path / "traces" / f"{name}.json").read_bytes() == (REPO / "traces" / f"{name}.json").read_bytes()
    command = "paperpool trace import " + " ".join(inputs) + " -o traces"
    assert f"    {command}\n" in (SHIPPED / "README.md").read_text(encoding="utf-8")


def shipped(name: str) -> dict:
    return json.loads((REPO / "traces" / f"{name}.json").read_text(encoding="utf-8"))


def test_a_group_chat_step_by_step():
    """Algorithm-Generated/10: an expert alone with the code executor. Step 1 answers a
    message with no code (the executor says so): a message; steps 5 and 7 hold code the
    executor runs next: tool calls, answered by their results; the last step ends with
    TERMINATE: the stop. Each step leads to the next, which reads it."""
    trace = shipped("who-and-when-algorithm-generated-10")
    assert [(event["type"], event["agent"]) for event in trace["events"]] == [
        ("message", "Validation_Expert"),
        ("message", "Computer_terminal"),
        ("message", "Validation_Expert"),
        ("message", "Validation_Expert"),
        ("message", "Validation_Expert"),
        ("tool_call", "Validation_Expert"),
        ("tool_result", "Computer_terminal"),
        ("tool_call", "Validation_Expert"),
        ("tool_result", "Computer_terminal"),
        ("stop", "Validation_Expert"),
    ]
    assert trace["events"][6] == {
        "id": "step-6",
        "t": 6,
        "type": "tool_result",
        "agent": "Computer_terminal",
        "tool": "Computer_terminal",
        "call": "step-5",
        "content_ref": "Algorithm-Generated/10.json#/history/6",
    }
    assert trace["events"][9]["reason"] == "the message ends with TERMINATE, which ends the chat"
    assert [(edge["src"], edge["dst"], edge["type"]) for edge in trace["edges"]] == [
        ("step-0", "step-1", "message"),
        ("step-0", "step-2", "causal"),
        ("step-1", "step-2", "message"),
        ("step-2", "step-3", "causal"),
        ("step-3", "step-4", "causal"),
        ("step-4", "step-5", "causal"),
        ("step-5", "step-6", "tool_dependency"),
        ("step-6", "step-7", "causal"),
        ("step-7", "step-8", "tool_dependency"),
        ("step-8", "step-9", "causal"),
    ]
    assert {key: trace[key] for key in ("trace_id", "task_id", "system", "x_failure", "x_source")} == {
        "trace_id": "who-and-when-algorithm-generated-10",
        "task_id": "d1af70ea-a9a4-421a-b9cc-94b5e02f1788",
        "system": "CaptainAgent group chat",
        "x_failure": {
            "agent": "Validation_Expert",
            "step": 5,
            "event": "step-5",
            "reason": (
                "The agent fabricated the population figures for Seattle and Colville, resulting in an incorrect calculation "
                "of the population difference."
            ),
        },
        "x_source": {"format": "who-and-when", "part": "algorithm-generated", "log": "Algorithm-Generated/10.json"},
    }
    assert "topology" not in trace  # the logs do not say who picks each speaker
    assert trace["description"].startswith(
        "Converted by paperpool from the Who&When log Algorithm-Generated/10.json (algorithm-generated part, CaptainAgent "
        "group chat): 10 steps, one event each, t counting steps. The task: As of the 2020 census, what was the population"
    )


def test_a_magentic_one_run_step_by_step():
    """Hand-Crafted/14: the human's task goes to the Orchestrator; its thoughts are its
    decisions; each instruction to an agent is a delegation answered by the agent's return;
    the two to ComputerTerminal are tool calls answered by its output; the termination
    condition is the stop."""
    trace = shipped("who-and-when-hand-crafted-14")
    events = trace["events"]
    assert events[0] == {
        "id": "step-0",
        "t": 0,
        "type": "message",
        "agent": "human",
        "to": "Orchestrator",
        "content_ref": "Hand-Crafted/14.json#/history/0",
    }
    # the Orchestrator's steps: T a thought, M an instruction to an agent, C a call of the executor, S the stop
    letters = {"orchestrator_decision": "T", "message": "M", "tool_call": "C", "stop": "S"}
    assert "".join(letters[event["type"]] for event in events if event["agent"] == "Orchestrator") == "TTMTMTTCTTCTTMTTMTTMTTTS"
    assert events[6] == {
        "id": "step-6",
        "t": 6,
        "type": "message",
        "agent": "Orchestrator",
        "to": "FileSurfer",
        "decision": "O2",
        "content_ref": "Hand-Crafted/14.json#/history/6",
    }
    assert events[8] == {
        "id": "step-8",
        "t": 8,
        "type": "return",
        "agent": "FileSurfer",
        "to": "Orchestrator",
        "content_ref": "Hand-Crafted/14.json#/history/8",
    }
    assert [
        (event["id"], event["type"], event.get("call"))
        for event in events
        if event["agent"] == "ComputerTerminal" or event.get("tool") == "ComputerTerminal"
    ] == [
        ("step-10", "tool_call", None),
        ("step-12", "tool_result", "step-10"),
        ("step-14", "tool_call", None),
        ("step-16", "tool_result", "step-14"),
    ]
    assert events[-1] == {
        "id": "step-31",
        "t": 31,
        "type": "stop",
        "agent": "Orchestrator",
        "reason": "No agent selected.",
        "content_ref": "Hand-Crafted/14.json#/history/31",
    }
    edges = {(edge["src"], edge["dst"]): edge["type"] for edge in trace["edges"]}
    assert (
        edges[("step-0", "step-1")],
        edges[("step-6", "step-8")],
        edges[("step-8", "step-9")],
        edges[("step-10", "step-12")],
        edges[("step-12", "step-13")],
    ) == ("message", "message", "return", "tool_dependency", "causal")
    assert (trace["topology"], trace["system"]) == ("centralized", "Magentic-One")
    assert trace["x_failure"] == {"agent": "Orchestrator", "step": 14, "event": "step-14", "reason": "The code is wrong."}


def test_the_measures_of_a_magentic_one_run(run, tmp_path):
    """Outside a pool, paperpool's default mapping: the delegations count for O2 with the
    tool calls (5 + 2), the human's task for O3, the termination for O5."""
    result = run("trace", "metrics", str(REPO / "traces" / "who-and-when-hand-crafted-14.json"), "--format", "json", cwd=tmp_path)
    measured = json.loads(result.output)
    assert {
        key: measured[key]
        for key in (
            "events",
            "edges",
            "agents",
            "spawns",
            "messages",
            "tool_calls",
            "stopped",
            "stop_t",
            "subdecisions",
            "critical_path_events",
        )
    } == {
        "events": 32,
        "edges": 41,
        "agents": 4,
        "spawns": 0,
        "messages": 6,
        "tool_calls": 2,
        "stopped": True,
        "stop_t": 31,
        "subdecisions": {"O1": 0, "O2": 7, "O3": 1, "O4": 0, "O5": 1},
        "critical_path_events": 28,
    }
    assert list(measured["agent_share"]) == ["human", "Orchestrator", "WebSurfer", "FileSurfer"]


def test_topology_given_on_the_command_line_wins(run, tmp_path):
    result = run("trace", "import", str(SHIPPED / "Algorithm-Generated" / "1.json"), "--topology", "swarm", cwd=tmp_path)
    assert result.exit_code == 0 and json.loads(result.output)["topology"] == "swarm"


def test_time_counts_steps_and_says_so_where_the_schema_can():
    """The logs keep no clock: t is the step's index. The schema's `time_unit` and `title`
    are written as soon as the schema has those fields."""
    trace = shipped("who-and-when-algorithm-generated-1")
    assert [event["t"] for event in trace["events"]] == [0, 1, 2, 3, 4, 5]
    assert "t counting steps" in trace["description"]
    converted = convert(SHIPPED / "Algorithm-Generated" / "1.json")[0].trace
    fields = schema.schema()["properties"]
    assert converted.get("time_unit") == ("steps" if "time_unit" in fields else None)
    assert converted.get("title") == (
        whowhen.title(whowhen.read_log(SHIPPED / "Algorithm-Generated" / "1.json")) if "title" in fields else None
    )


def test_a_title_people_read():
    """The part, the file and the task, in at most 100 characters."""
    titles = [whowhen.title(whowhen.read_log(SHIPPED / log)) for log in EXAMPLES]
    assert titles == [
        "Who&When hand-crafted 14: What percentage of the total penguin population according to the upper es\u2026",
        "Who&When algorithm-generated 1: This spreadsheet contains a list of clients for a retractable awnin\u2026",
        "Who&When algorithm-generated 10: As of the 2020 census, what was the population difference between\u2026",
    ]
    assert [len(title) for title in titles] == [100, 100, 99]  # a space before the cut is dropped


def test_the_settings_are_the_surveys_terms():
    """whowhen.yaml: each part a part of the dataset, each topology one of the schema's; a
    delegation is marked with the sub-decision of paperpool's mapping that the other
    importers use."""
    settings = whowhen.settings()
    assert list(settings) == ["parts"]
    delegation = mapping.default().marks["delegation"]
    assert delegation in mapping.default().events
    assert shipped("who-and-when-hand-crafted-14")["events"][3]["decision"] == delegation
    assert list(settings["parts"]) == list(whowhen.FOLDERS)
    assert {part.get("topology") for part in settings["parts"].values()} <= set(schema.topologies()) | {None}


def test_the_format_is_registered():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    assert declared["paperpool.trace_formats"]["who-and-when"] == "paperpool.traces.whowhen:FORMAT"
    assert formats()["who-and-when"] is whowhen.FORMAT  # installed: `pip install -e .` again after adding it


# Logs that are not right: one line per problem, naming the file and the place

LOG = {
    "history": [
        {"content": "What is 2 + 2?", "role": "human"},
        {"content": "Plan: ask the assistant.", "role": "Orchestrator (thought)"},
        {"content": "Add 2 and 2.", "role": "Orchestrator (-> Assistant)"},
        {"content": "4", "role": "Assistant"},
    ],
    "question": "What is 2 + 2?",
    "mistake_agent": "Assistant",
    "mistake_step": "3",
    "mistake_reason": "It is right.",
}


def changed(**fields) -> dict:
    return {key: value for key, value in (LOG | fields).items() if value is not ...}


def step(position: int, **fields) -> dict:
    history = [dict(entry) for entry in LOG["history"]]
    history[position] = {key: value for key, value in (history[position] | fields).items() if value is not ...}
    return changed(history=history)


SHAPE = (
    "a JSON object whose `history` lists the run's steps ({content, role} or {content, role, name}), with the failure "
    "labels mistake_agent, mistake_step and mistake_reason"
)
NO_STEP = "write the index in `history` of the failing step, counting from 0"


@pytest.mark.parametrize(
    ("document", "line"),
    [
        ([LOG], f": the file holds a list, not a Who&When log; a log is {SHAPE}"),
        (
            changed(history=...),
            (
                ": /history: missing: a Who&When log lists the run's steps in `history`; add it, or name the input's "
                "format with --from"
            ),
        ),
        (
            changed(history={"0": {}}),
            ": /history: is an object, not a list of steps {content, role}; write the run's steps as a list",
        ),
        (step(1, content=...), ": /history/1/content: missing: a step has `content`; add it"),
        (step(1, content=["x"]), ": /history/1/content: is a list, not text; write the step's content as text"),
        (step(1, role=None), ": /history/1/role: is null, not text; write the step's role as text"),
        (step(1, role=""), ": /history/1/role: the name is empty; write who it is"),
        (
            step(1, role="Orchestrator (plan)"),
            (
                ": /history/1/role: 'Orchestrator (plan)' is no step of a Magentic-One log; a step's "
                "role is an agent's name, human, or NAME (thought), NAME (-> AGENT) or NAME "
                "(termination condition)"
            ),
        ),
        (
            step(2, role="Orchestrator (-> " + "A" * 201 + ")"),
            ": /history/2/role: the name after -> is 201 characters long, over the limit of 200; shorten it",
        ),
        (
            step(3, name="Assistant"),
            (
                ": /history/3/name: a step of a Magentic-One log (the hand-crafted part, whose first step has no "
                "name) says who acts in `role`; remove it"
            ),
        ),
        (
            changed(history=[{"content": "x", "role": "user", "name": "A"}, {"content": "y", "role": "user"}], mistake_step=0),
            (
                ": /history/1/name: missing: every step of a group chat log (the algorithm-generated part) names its speaker, as its "
                "first step does; add it"
            ),
        ),
        (
            changed(history=[{"content": "x", "role": "user", "name": 7}], mistake_step=0),
            ": /history/0/name: is the number 7, not text; write the step's name as text",
        ),
        (
            step(0, content="x") | {"history": LOG["history"][:3] + [5]},
            (": /history/3: is the number 5, not a step {content, role}; write the step as an object"),
        ),
        (
            changed(mistake_reason=...),
            (
                ": /mistake_reason: missing: the failure labels go together (mistake_agent, mistake_step, "
                "mistake_reason): add it, or remove mistake_agent and mistake_step"
            ),
        ),
        (changed(mistake_step="three"), f": /mistake_step: 'three' is not a step number; {NO_STEP}"),
        (changed(mistake_step=-1), f": /mistake_step: -1 is not a step number; {NO_STEP}"),
        (changed(mistake_step=True), f": /mistake_step: true is not a step number; {NO_STEP}"),
        (changed(mistake_step="4"), f": /mistake_step: step 4 is past the log's last step, 3; {NO_STEP}"),
        (changed(mistake_agent=["Assistant"]), ": /mistake_agent: is a list, not text; write the name as text"),
        (changed(mistake_reason=None), ": /mistake_reason: is null, not text; write why the step failed, as text"),
        (changed(question_ID=12), ": /question_ID: is the number 12, not text; write the name as text"),
        (changed(question=["?"]), ": /question: is a list, not text; write it as text, or leave it out"),
    ],
)
def test_a_bad_log_is_one_line_and_nothing_is_written(run, tmp_path, snapshot, document, line):
    (tmp_path / "log.json").write_text(json.dumps(document), encoding="utf-8")
    before = snapshot(tmp_path)
    result = run("trace", "import", "--from", "who-and-when", "log.json", "-o", "out.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, f"Error: log.json{line}\n")
    assert snapshot(tmp_path) == before


def test_every_problem_of_a_log_is_listed(run, tmp_path):
    document = step(1, content=5, role="Orchestrator (dance)") | {"mistake_step": "9"}
    document["history"].append(7)
    (tmp_path / "log.json").write_text(json.dumps(document), encoding="utf-8")
    result = run("trace", "import", "--from", "who-and-when", "log.json", "-o", "out.json", cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            "log.json: /history/1/content: is the number 5, not text; write the step's content as text",
            (
                "log.json: /history/1/role: 'Orchestrator (dance)' is no step of a Magentic-One log; a step's role is an agent's name, "
                "human, or NAME (thought), NAME (-> AGENT) or NAME (termination condition)"
            ),
            "log.json: /history/4: is the number 7, not a step {content, role}; write the step as an object",
            f"Error: log.json: /mistake_step: step 9 is past the log's last step, 4; {NO_STEP}",
        ],
    )
    assert not (tmp_path / "out.json").exists()


def test_an_empty_history_is_an_error_naming_what_was_expected(run, tmp_path):
    (tmp_path / "log.json").write_text(json.dumps(changed(history=[], mistake_step=0)), encoding="utf-8")
    result = run("trace", "import", "--from", "who-and-when", "log.json", "-o", "out.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: log.json: converted to a trace with no events, so nothing was written; --from who-and-when expects a Who&When "
            f"log: {SHAPE}; the input holds log.json: a history of 0 steps\n"
        ),
    )
    assert not (tmp_path / "out.json").exists()


def test_one_bad_log_among_good_ones_writes_nothing(run, tmp_path, snapshot):
    shutil.copytree(SHIPPED, tmp_path / "logs")
    (tmp_path / "logs" / "bad.json").write_text(json.dumps(changed(mistake_step="40")), encoding="utf-8")
    before = snapshot(tmp_path)
    result = run("trace", "import", "logs/Hand-Crafted/14.json", "logs/bad.json", "-o", "out", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: logs/bad.json: /mistake_step: step 40 is past the log's last step, 3; {NO_STEP}\n",
    )
    assert snapshot(tmp_path) == before


def test_a_small_log_converts_and_is_recognised_without_from(run, tmp_path):
    (tmp_path / "run.json").write_text(json.dumps(LOG), encoding="utf-8")
    result = run("trace", "import", "run.json", cwd=tmp_path)
    trace = json.loads(result.output)
    assert [(event["type"], event["agent"], event.get("to")) for event in trace["events"]] == [
        ("message", "human", "Orchestrator"),
        ("orchestrator_decision", "Orchestrator", None),
        ("message", "Orchestrator", "Assistant"),
        ("return", "Assistant", "Orchestrator"),
    ]
    assert trace["trace_id"] == "who-and-when-hand-crafted-run" and trace["x_source"]["log"] == "Hand-Crafted/run.json"
    assert trace["description"] == (
        "Converted by paperpool from the Who&When log Hand-Crafted/run.json (hand-crafted part, "
        "Magentic-One): 4 steps, one event each, t counting steps. The task: What is 2 + 2?"
    )


def test_a_log_without_labels_converts_without_x_failure(run, tmp_path):
    """The labels go together or not at all: an unlabelled log in this format is a run like any other."""
    (tmp_path / "run.json").write_text(
        json.dumps(changed(mistake_agent=..., mistake_step=..., mistake_reason=...)), encoding="utf-8"
    )
    result = run("trace", "import", "--from", "who-and-when", "run.json", cwd=tmp_path)
    assert result.exit_code == 0 and "x_failure" not in json.loads(result.output)
    detected = run("trace", "import", "run.json", cwd=tmp_path)  # not recognised without the labels
    assert detected.exit_code == 1 and detected.output.startswith("Error: run.json: not a trace export paperpool recognises")


def test_a_step_after_nobody_addressed_it_is_a_message_to_everyone(tmp_path):
    """An agent speaking unasked, and a code executor's output with no call before it,
    are messages: neither a return nor a result can be paired with what never came."""
    history = [
        {"content": "go", "role": "human"},
        {"content": "hello", "role": "WebSurfer"},
        {"content": "ok", "role": "Orchestrator (thought)"},
        {"content": "exit 0", "role": "ComputerTerminal"},
        {"content": "Max rounds (30) reached.\nFINAL ANSWER: 4", "role": "Orchestrator (termination condition)"},
    ]
    (tmp_path / "run.json").write_text(json.dumps(changed(history=history, mistake_step=1)), encoding="utf-8")
    trace = convert(tmp_path / "run.json")[0].trace
    assert [(event["type"], event["agent"]) for event in trace["events"]] == [
        ("message", "human"),
        ("message", "WebSurfer"),
        ("orchestrator_decision", "Orchestrator"),
        ("message", "ComputerTerminal"),
        ("stop", "Orchestrator"),
    ]
    assert trace["events"][-1]["reason"] == "Max rounds (30) reached."
    assert [(edge["src"], edge["dst"], edge["type"]) for edge in trace["edges"]] == [
        ("step-0", "step-2", "message"),
        ("step-1", "step-2", "message"),
        ("step-2", "step-4", "causal"),
        ("step-3", "step-4", "message"),
    ]


# The gallery's mark


def test_the_drawing_rings_the_failing_step_on_its_agents_lane():
    trace = shipped("who-and-when-algorithm-generated-10")
    drawing = timeline.draw(trace)
    root = ET.fromstring(drawing)
    svg = "{http://www.w3.org/2000/svg}"
    rings = [circle for circle in root.iter(f"{svg}circle") if circle.get("r") == "9"]
    marks = {
        circle.find(f"{svg}title").text: (circle.get("cx"), circle.get("cy"))
        for circle in root.iter(f"{svg}circle")
        if circle.find(f"{svg}title") is not None and circle.get("r") == "4.0"
    }
    assert len(rings) == 1 and (rings[0].get("cx"), rings[0].get("cy")) == marks["tool_call by Validation_Expert at t=5"]
    assert rings[0].find(f"{svg}title").text == (
        "labelled failing step 5 (step-5), by Validation_Expert: The agent fabricated the population figures for Seattle and "
        "Colville, resulting in an incorrect calculation of the population difference."
    )
    assert [text.text for text in root.iter(f"{svg}text") if text.get("fill") == timeline.FAILURE] == ["failing step 5"]
    assert root.find(f"{svg}desc").text.endswith(
        " Labelled failing step 5 (step-5), by Validation_Expert: The agent "
        "fabricated the population figures for Seattle and Colville, resulting in "
        "an incorrect calculation of the population difference."
    )
    assert "labelled failing step</text>" in drawing  # in the legend


@pytest.mark.parametrize("failure", ["step-5", {"event": 5}, {"event": "step-99"}, {"step": 5}, ["step-5"]])
def test_an_x_failure_that_names_no_event_is_not_drawn(failure):
    """An extension is the trace's own: one that names no event of it is left out, not refused."""
    trace = shipped("who-and-when-algorithm-generated-10") | {"x_failure": failure}
    drawing = timeline.draw(trace)
    assert 'r="9"' not in drawing and "failing step" not in drawing
    assert timeline.labelled_failure(trace) is None


def test_a_failures_text_is_escaped_in_the_drawing():
    trace = shipped("who-and-when-algorithm-generated-10")
    trace["x_failure"] = {"event": "step-5", "agent": "<b>x</b>", "step": "5\x1b[2J", "reason": "\u202e<script>"}
    drawing = timeline.draw(trace)
    ET.fromstring(drawing)
    assert "<b>" not in drawing and "<script>" not in drawing and "\u202e" not in drawing and "\x1b" not in drawing
    assert ">failing step 5\\x1b[2J</text>" in drawing


# The corpus the site summarises: every log, one compressed JSON Lines file

CORPUS = REPO / "corpora" / "who-and-when.jsonl.gz"


def _corpus_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("who_and_when_corpus", REPO / "scripts" / "who_and_when_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@needs_dataset
def test_the_shipped_corpus_is_what_its_script_makes_of_the_dataset():
    """Compared uncompressed: another zlib may compress the same lines to other bytes."""
    import gzip

    made = _corpus_script().lines(DATASET)
    assert gzip.decompress(CORPUS.read_bytes()) == made
    traces = [json.loads(line) for line in made.splitlines()]
    assert len(traces) == 184 and all(check_trace(trace).valid for trace in traces)
    assert [trace["x_source"]["log"] for trace in traces] == [
        f"{path.parent.name}/{path.name}" for path in sorted(dataset_logs(), key=lambda p: p.parent.name != "Hand-Crafted")
    ]
    # each line is the trace the import writes for that log (here: a shipped example's)
    assert json.loads((REPO / "traces" / "who-and-when-hand-crafted-14.json").read_text(encoding="utf-8")) == traces[13]


def test_the_corpus_is_small_attributed_and_no_trace_of_the_gallery():
    assert CORPUS.stat().st_size < 1_000_000
    beside = CORPUS.parent
    assert "MIT License" in (beside / "who-and-when.LICENSE").read_text(encoding="utf-8")
    assert "mingyin1/Agents_Failure_Attribution" in (beside / "README.md").read_text(encoding="utf-8")
    from paperpool.registry import load_registry

    registry, problems = load_registry(REPO)
    assert registry is not None, problems
    assert all(path.parent == REPO / "traces" for path in section.trace_files(registry))


@pytest.mark.slow
def test_two_imports_into_one_folder_take_turns(tmp_path):
    """Two imports of the same logs into one folder at once (issue 39's fresh review: both
    failed, each had written part of its files, and the error named file descriptor 3):
    the folder's lock makes them take turns, so one writes all three files and the other
    refuses, naming a file, having written none."""
    logs = [str(SHIPPED / name) for name in EXAMPLES]
    command = [sys.executable, "-m", "paperpool", "trace", "import", "--from", "who-and-when", "-o", "out"]
    for round_ in range(4):
        folder = tmp_path / str(round_)
        folder.mkdir()
        runs = [
            subprocess.Popen(command[:-2] + order + command[-2:], cwd=folder, stderr=subprocess.PIPE, text=True)
            for order in (logs, logs[::-1])
        ]
        said = [(run.wait(), run.stderr.read()) for run in runs]
        for run in runs:
            run.stderr.close()
        assert sorted(code for code, _ in said) == [0, 1], said
        refusal = next(text for code, text in said if code == 1)
        assert refusal.startswith("Error: -o out: out/who-and-when-") and refusal.endswith(
            " exists; an import writes new files only: remove it, or choose another folder (nothing was written)\n"
        ), refusal
        assert sorted(os.listdir(folder / "out")) == sorted(f"{name}.json" for name in EXAMPLES.values())


def test_an_import_that_finds_a_name_taken_midway_removes_what_it_wrote(tmp_path):
    """Should a file appear between the checks and the writes (a command writing without
    the lock), the files the import wrote go again, as does the folder it made: its
    refusal says nothing was written, and nothing was."""
    from paperpool.traces.cli import _write_all

    imported = convert(*(SHIPPED / name for name in EXAMPLES))
    out = tmp_path / "out"
    planned = [(out / f"{item.name}.json", item) for item in imported]
    out.mkdir()
    planned[2][0].write_text("theirs\n", encoding="utf-8")  # taken after the checks
    with pytest.raises(PaperpoolError) as refused:
        _write_all(planned, out)
    assert str(refused.value) == (
        f"-o {out}: {planned[2][0]} appeared while this import wrote (another command writing "
        "there?); an import writes new files only: the files it had written were removed "
        "(nothing was written)"
    )
    assert os.listdir(out) == [planned[2][0].name] and planned[2][0].read_text(encoding="utf-8") == "theirs\n"


def test_a_log_of_many_bad_steps_shows_the_first_hundred_and_counts_them_all(run, tmp_path):
    """Every problem of a log is found, and the first hundred are shown with their count
    (5,000 lines were printed, one per step)."""
    (tmp_path / "log.json").write_text(
        json.dumps({"history": [{"content": "hi", "role": 5}] * 5000, "question": "q", "question_ID": "1"}), encoding="utf-8"
    )
    result = run("trace", "import", "--from", "who-and-when", "log.json", "-o", "trace.json", cwd=tmp_path)
    lines = result.output.splitlines()
    assert (result.exit_code, len(lines)) == (1, 101)
    assert lines[99] == "log.json: /history/99/role: is the number 5, not text; write the step's role as text"
    assert lines[100] == (
        "Error: log.json: 5,000 problems (the first 100 above): fix these, often one mistake repeated, and import it again"
    )
    assert not (tmp_path / "trace.json").exists()


@pytest.mark.slow
@needs_dataset
@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_an_import_stopped_midway_leaves_no_file_and_no_folder(tmp_path, stop):
    """Ctrl-C or SIGTERM once the import's first file is in place (a fresh review found
    4 and 10 files left, and the next run then refused the folder): every file it wrote
    goes, and the folder it made."""
    import signal
    import time

    logs = sorted(str(path) for path in LOGS.rglob("*.json"))
    command = subprocess.Popen(
        [sys.executable, "-m", "paperpool", "trace", "import", "--from", "who-and-when", *logs, "-o", "out"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = tmp_path / "out"
    while command.poll() is None and not (out.is_dir() and any(path.suffix == ".json" for path in out.iterdir())):
        time.sleep(0.001)
    command.send_signal(getattr(signal, stop))
    _, said = command.communicate(timeout=60)
    assert command.returncode != 0 and "Traceback" not in said, said
    assert os.listdir(tmp_path) == []


def test_a_mistake_step_of_thousands_of_digits_is_one_line(run, tmp_path):
    """int() of a 5,000-digit string raised inside the importer (the eleventh review)."""
    log = {
        "history": [
            {"content": "task", "role": "human"},
            {"content": "plan", "role": "Orchestrator (thought)"},
            {"content": "done", "role": "WebSurfer"},
        ],
        "question": "q",
        "question_ID": "id1",
        "mistake_agent": "WebSurfer",
        "mistake_step": "9" * 5000,
        "mistake_reason": "r",
    }
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    result = run("trace", "import", "--from", "who-and-when", str(path), cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}: /mistake_step: '9999")
    assert result.output.endswith("is not a step number; write the index in `history` of the failing step, counting from 0\n")
