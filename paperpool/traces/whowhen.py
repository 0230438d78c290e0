"""The `who-and-when` format of `paperpool trace import`: the logs of Who&When, a public
dataset of multi-agent failure logs (Yin et al., ICML 2025; MIT licence).

A log is one JSON object: `history`, the run's steps in order, each {content, role} (and
`name` in the algorithm-generated part), the task (`question`, `question_ID`) and the
failure labels its annotators gave: `mistake_agent`, `mistake_step` (the index in history
of the decisive error, as a number or a string of digits) and `mistake_reason`. The two
parts of the dataset are told apart by their steps:

- hand-crafted (Magentic-One): no step has a `name`; the role says who acts and how:
  `human` (the task), `NAME (thought)`, `NAME (-> AGENT)` (the orchestrator addressing an
  agent), `NAME (termination condition)`, or an agent's own name (what it did);
- algorithm-generated (CaptainAgent's group chats of experts): every step names its
  speaker in `name` (its `role`, user or assistant, is as the recording agent saw it).

Each step becomes one event, `step-N`, at t = N: the logs keep no clock, so t counts steps.
- `NAME (thought)`: an orchestrator_decision of NAME.
- `NAME (-> AGENT)`: a message from NAME to AGENT marked as a delegation (the sub-decision
  subdecisions.yaml's `marks: delegation` names); to a code executor (CODE_EXECUTORS), a
  tool_call of it.
- an agent's step after it was addressed: a return to whoever addressed it; a code
  executor's step after it was called: the call's tool_result; `human`: the task, a
  message to the orchestrator; any other step: a message to everyone.
- `NAME (termination condition)`: a stop of NAME, its reason the condition's first line.
- group chats: a step holding a code block that a code executor answers next is a
  tool_call, the executor's step its tool_result; the last step, when it ends with
  TERMINATE (the word that ends an AG2 chat), a stop; every other step a message to
  everyone.
Edges: each agent's events in turn (causal); a message to an agent, to that agent's next
event (message); a return, to its receiver's next event (return); a call, to its result
(tool_dependency); a message to everyone, to the next step; and, in a group chat, where
every speaker reads all before it, each step to the next (message from a message, causal
otherwise). The failure labels are kept as `x_failure` {agent, step, event, reason}, the
event being the failing step's; the site's gallery marks it.

Every field read is checked: a log that is no JSON object, a step that is no {content,
role}, a name the trace schema cannot hold, labels that do not go together or a step
number past the history, each is one line with its JSON pointer, and nothing is converted.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from paperpool.files.problems import plural

from .importing import Imported, ImportOptions, TraceFormat, Unreadable
from .otlp import kind_of, shown
from .schema import Finding, pointer

DATA_FILE = "whowhen.yaml"
FOLDERS = {"hand-crafted": "Hand-Crafted", "algorithm-generated": "Algorithm-Generated"}  # each part's folder in the dataset
# Magentic-One's and AG2's code executors: they run the code they are given, with no model.
CODE_EXECUTORS = ("ComputerTerminal", "Computer_terminal")
TERMINATE = "TERMINATE"  # AG2's termination word: a message ending with it ends the chat
HUMAN = "human"  # the role of the task's step in a Magentic-One log
LABELS = ("mistake_agent", "mistake_step", "mistake_reason")
MAX_NAME = 200  # the schema's longest name
MAX_QUESTION = 300  # characters of the task shown in the trace's description
MAX_TITLE = 100  # characters of its title (the name, then the task as far as it fits)
SHAPE = (
    "a JSON object whose `history` lists the run's steps ({content, role} or {content, role, name}), with the "
    "failure labels mistake_agent, mistake_step and mistake_reason"
)
EXPECTS = f"a Who&When log: {SHAPE}"
_ACTION = re.compile(r"(?P<agent>.+?) \((?P<action>.*)\)", re.DOTALL)  # NAME (thought), NAME (-> AGENT), ...
_CODE_BLOCK = "```"


@dataclass
class Step:
    agent: str  # who acts
    kind: str  # human, thought, delegation, termination or said (anything an agent says or does)
    content: str
    to: str | None = None  # whom a delegation addresses


@dataclass
class Log:
    path: Path
    part: str  # hand-crafted or algorithm-generated
    steps: list[Step]
    question: str | None = None
    question_id: str | None = None
    labels: tuple[str, int, str] | None = None  # (agent, step, reason)

    @property
    def ref(self) -> str:
        """The log as the dataset's folders place it, for references into it."""
        return f"{FOLDERS[self.part]}/{self.path.name}"


@functools.cache
def settings() -> dict:
    """whowhen.yaml: each part's system and topology."""
    from paperpool.files.yamlio import parse_yaml

    text = resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8")
    return parse_yaml(text, Path(DATA_FILE)).data


def detect(path: Path, head: str) -> bool:
    """A JSON object with `history` and the failure labels. The history comes first and
    may be longer than the head, so a head that has the history but not the labels is
    settled by reading the file."""
    text = head.lstrip()
    if not text.startswith("{") or not re.search(r'"history"\s*:\s*\[', text):
        return False
    if '"mistake_agent"' in text:
        return True
    from .loading import TraceUnreadable, read_trace

    try:
        document = read_trace(path)
    except TraceUnreadable:
        return False
    return isinstance(document, dict) and isinstance(document.get("history"), list) and "mistake_agent" in document


def convert(paths: list[Path], options: ImportOptions) -> list[Imported]:
    from .validation import InvalidTrace, check_trace

    imported = []
    for path in paths:
        log = read_log(path)
        trace = to_trace(log, options.topology)
        checked = check_trace(trace)
        if not checked.valid:  # every name and number was checked first: this is paperpool's mistake
            raise InvalidTrace(
                f"the trace converted from {path}",
                checked.findings,
                "please report it, with the log, as a bug of paperpool's who-and-when format",
            )
        imported.append(Imported(trace["trace_id"], trace, path, trace["trace_id"]))
    return imported


def describe(paths: list[Path]) -> str:
    """What an input held, when it converted to no events."""
    try:
        logs = [read_log(path) for path in paths]
    except Unreadable:
        return ""
    return "; ".join(f"{log.path.name}: a history of {plural(len(log.steps), 'step')}" for log in logs)


# Reading a log


def read_log(path: Path) -> Log:
    """A log, every field the conversion reads checked; Unreadable lists each problem."""
    from .loading import TraceUnreadable, read_trace

    try:
        document = read_trace(path)
    except TraceUnreadable as exc:
        raise Unreadable.capped([_for_a_log(finding).line(str(path)) for finding in exc.findings], str(path)) from None
    findings: list[Finding] = []
    log = _log(document, path, findings)
    if findings:  # the first hundred shown, as trace validate shows a trace's
        raise Unreadable.capped([finding.line(str(path)) for finding in findings], str(path), all_found=True)
    return log


# The loader's words for a trace file, and what they say of a log instead.
_OF_A_LOG = (
    ("a trace nests only a few levels, so this is not a trace file", "a log nests only a few levels, so this is not a log"),
    ("check that the file is a JSON trace", "check that the file is a Who&When log"),
)


def _for_a_log(finding: Finding) -> Finding:
    """The loader's finding, said of a log where it speaks of a trace."""
    if finding.message.startswith("file is empty"):
        return Finding(finding.pointer, f"file is empty; a Who&When log is {SHAPE}")
    message = finding.message
    for trace_words, log_words in _OF_A_LOG:
        message = message.replace(trace_words, log_words)
    return Finding(finding.pointer, message)


def _log(document, path: Path, findings: list[Finding]) -> Log | None:
    if not isinstance(document, dict):
        findings.append(Finding("", f"the file holds {kind_of(document)}, not a Who&When log; a log is {SHAPE}"))
        return None
    history = document.get("history")
    part, steps = "hand-crafted", []
    if "history" not in document:
        findings.append(
            Finding(
                "/history",
                "missing: a Who&When log lists the run's steps in `history`; add it, or name the input's format with --from",
            )
        )
    elif not isinstance(history, list):
        findings.append(
            Finding("/history", f"is {kind_of(history)}, not a list of steps {{content, role}}; write the run's steps as a list")
        )
    else:
        part, steps = _steps(history, findings)
    return Log(
        path,
        part,
        steps,
        _text(document, "question", findings),
        _name(document, ["question_ID"], findings),
        _labels(document, len(history) if isinstance(history, list) else 0, findings),
    )


def _steps(history: list, findings: list[Finding]) -> tuple[str, list[Step]]:
    """The part the steps belong to (a group chat's steps name their speaker) and the steps."""
    first = next((entry for entry in history if isinstance(entry, dict)), {})
    group = "name" in first
    part = "algorithm-generated" if group else "hand-crafted"
    shape = "{content, role, name}" if group else "{content, role}"
    steps = []
    for i, entry in enumerate(history):
        here = ["history", i]
        if not isinstance(entry, dict):
            findings.append(Finding(pointer(here), f"is {kind_of(entry)}, not a step {shape}; write the step as an object"))
            continue
        found = len(findings)
        content = _required_text(entry, here, "content", findings)
        role = _required_text(entry, here, "role", findings)
        step = None
        if group and "name" not in entry:
            findings.append(
                Finding(
                    pointer(here + ["name"]),
                    "missing: every step of a group chat log (the algorithm-generated "
                    "part) names its speaker, as its first step does; add it",
                )
            )
        elif not group and "name" in entry:
            findings.append(
                Finding(
                    pointer(here + ["name"]),
                    "a step of a Magentic-One log (the hand-crafted part, whose "
                    "first step has no name) says who acts in `role`; remove it",
                )
            )
        elif group:
            speaker = _required_text(entry, here, "name", findings)
            if speaker is not None and _check_name(speaker, here + ["name"], findings):
                step = Step(speaker, "said", content or "")
        elif role is not None:
            step = _magentic_step(role, content or "", here + ["role"], findings)
        if step is not None and len(findings) == found:
            steps.append(step)
    return part, steps


def _magentic_step(role: str, content: str, here: list, findings: list[Finding]) -> Step:
    """What a Magentic-One step's role says: who acts, and how. A role too long to be a
    name is not matched at all (the pattern backtracks on `x (x (x (...`: 60 kB took 20 s)."""
    action = _ACTION.fullmatch(role) if len(role) <= 2 * MAX_NAME + 4 else None
    if action is None:
        _check_name(role, here, findings)
        return Step(role, HUMAN if role == HUMAN else "said", content)
    agent, what = action["agent"], action["action"]
    _check_name(agent, here, findings, "the name before the parentheses")
    if what == "thought":
        return Step(agent, "thought", content)
    if what == "termination condition":
        return Step(agent, "termination", content)
    if what.startswith("-> ") and what[3:].strip():
        _check_name(what[3:], here, findings, "the name after ->")
        return Step(agent, "delegation", content, what[3:])
    findings.append(
        Finding(
            pointer(here),
            f"{shown(role)} is no step of a Magentic-One log; a step's role is an agent's "
            "name, human, or NAME (thought), NAME (-> AGENT) or NAME (termination condition)",
        )
    )
    return Step(agent, "said", content)


def _labels(document: dict, steps: int, findings: list[Finding]) -> tuple[str, int, str] | None:
    """(agent, step, reason) of the failure labels, which go together; None without them."""
    given = [key for key in LABELS if key in document]
    if not given:
        return None
    for key in LABELS:
        if key not in document:
            findings.append(
                Finding(
                    f"/{key}",
                    f"missing: the failure labels go together ({', '.join(LABELS)}): add it, or remove {' and '.join(given)}",
                )
            )
    if len(given) < len(LABELS):
        return None
    found = len(findings)
    agent = _name(document, ["mistake_agent"], findings)
    step = _step_number(document["mistake_step"], steps, findings)
    reason = document["mistake_reason"]
    if not isinstance(reason, str):
        findings.append(Finding("/mistake_reason", f"is {kind_of(reason)}, not text; write why the step failed, as text"))
    return (agent, step, reason) if len(findings) == found else None


def _step_number(value, steps: int, findings: list[Finding]) -> int | None:
    """A step's index in the history, given as a whole number or a string of digits."""
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 18:
        number = int(value.strip())  # (past 18 digits no history is that long, and int() refuses 4,300)
    if number is None or number < 0:
        findings.append(
            Finding(
                "/mistake_step",
                f"{shown(value)} is not a step number; write the index in `history` of the failing step, counting from 0",
            )
        )
        return None
    if steps and number >= steps:
        findings.append(
            Finding(
                "/mistake_step",
                f"step {number} is past the log's last step, {steps - 1}; write the index "
                "in `history` of the failing step, counting from 0",
            )
        )
        return None
    return number


def _required_text(entry: dict, here: list, key: str, findings: list[Finding]) -> str | None:
    if key not in entry:
        findings.append(Finding(pointer(here + [key]), f"missing: a step has `{key}`; add it"))
        return None
    value = entry[key]
    if not isinstance(value, str):
        findings.append(Finding(pointer(here + [key]), f"is {kind_of(value)}, not text; write the step's {key} as text"))
        return None
    return value


def _text(document: dict, key: str, findings: list[Finding]) -> str | None:
    value = document.get(key)
    if value is None or isinstance(value, str):
        return value
    findings.append(Finding(f"/{key}", f"is {kind_of(value)}, not text; write it as text, or leave it out"))
    return None


def _name(node: dict, path: list, findings: list[Finding]) -> str | None:
    """A name (an agent's, a task's id), as the trace schema holds one; None when absent."""
    value = node.get(path[-1])
    if value is None:
        return None
    if not isinstance(value, str):
        findings.append(Finding(pointer(path), f"is {kind_of(value)}, not text; write the name as text"))
        return None
    return value if _check_name(value, path, findings) else None


def _check_name(name: str, path: list, findings: list[Finding], what: str = "the name") -> bool:
    if not name.strip():
        findings.append(Finding(pointer(path), f"{what} is empty; write who it is"))
        return False
    if len(name) > MAX_NAME:
        findings.append(
            Finding(pointer(path), f"{what} is {len(name):,} characters long, over the limit of {MAX_NAME}; shorten it")
        )
        return False
    return True


# Converting a log


def to_trace(log: Log, topology: str | None = None) -> dict:
    """The orchestration trace of a log whose fields were checked (read_log)."""
    from .mapping import default
    from .schema import schema, schema_id

    part = settings()["parts"][log.part]
    events = _Events(log, default().marks.get("delegation")).build()
    stem = log.path.stem[: MAX_NAME - 40] or "log"
    fields = schema()["properties"]  # title and time_unit are written once the schema has them
    trace = {"schema": schema_id(), "trace_id": f"who-and-when-{log.part}-{stem}"}
    if log.question_id:
        trace["task_id"] = log.question_id
    trace["system"] = str(part["system"])
    if "title" in fields:
        trace["title"] = title(log)
    topology = topology or part.get("topology")
    if topology:
        trace["topology"] = str(topology)
    if "time_unit" in fields:
        trace["time_unit"] = "steps"
    question = " ".join((log.question or "").split())
    task = f" The task: {_cut(question, MAX_QUESTION)}" if question else ""
    trace["description"] = (
        f"Converted by paperpool from the Who&When log {log.ref} ({log.part} part, {part['system']}): "
        f"{plural(len(log.steps), 'step')}, one event each, t counting steps.{task}"
    )
    trace.update(events=events.events, edges=events.edges)
    if log.labels is not None:
        agent, step, reason = log.labels
        trace["x_failure"] = {"agent": agent, "step": step, "event": _id(step), "reason": reason}
    trace["x_source"] = {"format": "who-and-when", "part": log.part, "log": log.ref}
    return trace


def title(log: Log) -> str:
    """The name people read: the part, the file, and the task as far as it fits."""
    name = f"Who&When {log.part} {log.path.stem[: MAX_NAME - 40] or 'log'}"
    question = " ".join((log.question or "").split())
    return f"{name}: {_cut(question, MAX_TITLE - len(name) - 2)}" if question else name


def _id(step: int) -> str:
    return f"step-{step}"


def _cut(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters (at least one and the ellipsis)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 1)].rstrip() + "\u2026"


@dataclass
class _Events:
    """The events and edges of a log's steps, one event per step."""

    log: Log
    delegation: str | None  # the sub-decision a delegation is marked with
    events: list[dict] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)
    actors: list[str] = field(default_factory=list)  # each event's lane: its agent, or for a tool_result its caller
    links: list[tuple[int, str, str]] = field(default_factory=list)  # (step, the lane whose next event it leads to, edge type)
    direct: list[tuple[int, int, str]] = field(default_factory=list)  # (step, step, edge type)

    def build(self) -> _Events:
        group = self.log.part == "algorithm-generated"
        (self._group_chat if group else self._magentic)(self.log.steps)
        self._edges(group)
        return self

    def _emit(self, kind: str, agent: str, actor: str | None = None, **fields) -> None:
        step = len(self.events)
        event = {"id": _id(step), "t": step, "type": kind, "agent": agent}
        event.update({key: value for key, value in fields.items() if value is not None})
        event["content_ref"] = f"{self.log.ref}#/history/{step}"
        self.events.append(event)
        self.actors.append(actor or agent)

    def _magentic(self, steps: list[Step]) -> None:
        orchestrator = next((step.agent for step in steps if step.kind in ("thought", "delegation", "termination")), None)
        addressed: dict[str, str] = {}  # agent -> who addressed it last, until it answers
        called: dict[str, int] = {}  # code executor -> the step that called it, until it answers
        for i, step in enumerate(steps):
            if step.kind == "thought":
                self._emit("orchestrator_decision", step.agent)
            elif step.kind == "termination":
                self._emit("stop", step.agent, reason=_first_line(step.content) or "termination condition")
            elif step.kind == "delegation" and step.to in CODE_EXECUTORS:
                self._emit("tool_call", step.agent, tool=step.to)
                called[step.to] = i
            elif step.kind == "delegation":
                self._emit("message", step.agent, to=step.to, decision=self.delegation)
                addressed[step.to] = step.agent
                self.links.append((i, step.to, "message"))
            elif step.kind == HUMAN and orchestrator is not None and orchestrator != step.agent:
                self._emit("message", step.agent, to=orchestrator)
                self.links.append((i, orchestrator, "message"))
            elif step.agent in called:
                self._result(i, called.pop(step.agent), step.agent)
            elif step.agent in addressed:
                receiver = addressed.pop(step.agent)
                self._emit("return", step.agent, to=receiver)
                self.links.append((i, receiver, "return"))
            else:
                self._emit("message", step.agent)

    def _group_chat(self, steps: list[Step]) -> None:
        last = len(steps) - 1
        for i, step in enumerate(steps):
            answering = step.agent in CODE_EXECUTORS and i > 0 and self.events[i - 1]["type"] == "tool_call"
            following = steps[i + 1] if i < last else None
            if answering:
                self._result(i, i - 1, step.agent)
            elif i == last and step.content.rstrip().endswith(TERMINATE):
                self._emit("stop", step.agent, reason=f"the message ends with {TERMINATE}, which ends the chat")
            elif (
                following is not None
                and following.agent in CODE_EXECUTORS
                and step.agent not in CODE_EXECUTORS
                and _CODE_BLOCK in step.content
            ):
                self._emit("tool_call", step.agent, tool=following.agent)
            else:
                self._emit("message", step.agent)

    def _result(self, step: int, call: int, tool: str) -> None:
        self._emit("tool_result", tool, actor=self.actors[call], tool=tool, call=_id(call))
        self.direct.append((call, step, "tool_dependency"))

    def _edges(self, group: bool) -> None:
        """Each lane's events in turn, the links to a lane's next event, a message to
        everyone (and in a group chat every step) to the next step."""
        lanes: dict[str, list[int]] = {}
        for step, actor in enumerate(self.actors):
            lanes.setdefault(actor, []).append(step)
        found: dict[tuple[int, int], str] = {}
        for src, dst, kind in self.direct:
            found.setdefault((src, dst), kind)
        for src, lane, kind in self.links:
            steps = lanes.get(lane, [])
            at = bisect.bisect_right(steps, src)
            if at < len(steps):
                found.setdefault((src, steps[at]), kind)
        for steps in lanes.values():
            for before, after in itertools.pairwise(steps):
                found.setdefault((before, after), "causal")
        for src in range(len(self.events) - 1):
            broadcast = self.events[src]["type"] == "message" and "to" not in self.events[src]
            if (group or broadcast) and self.actors[src] != self.actors[src + 1]:
                found.setdefault((src, src + 1), "message" if self.events[src]["type"] == "message" else "causal")
        self.edges = [
            {"src": _id(src), "dst": _id(dst), "type": kind}
            for (src, dst), kind in sorted(found.items(), key=lambda item: (item[0][1], item[0][0]))
        ]


def _first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _cut(line, MAX_NAME)


FORMAT = TraceFormat(
    "who-and-when",
    "Who&When multi-agent failure logs (Magentic-One runs, CaptainAgent group chats)",
    EXPECTS,
    detect,
    convert,
    describe,
)
