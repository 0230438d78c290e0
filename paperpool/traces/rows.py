"""One row per trace: who the trace is (file, line, ids, run, step, group) and every
measure of `trace metrics`, flattened into named columns with one type each, so that a
corpus of a million rollouts is a table that DuckDB, Polars, pandas or Spark read as is.

The columns are a table (COLUMNS), not code: the sub-decision columns come from the
pool's mapping and the reward and event-type columns from the trace schema, so another
survey's taxonomy gives its own columns. docs/traces.md's "Corpora: many traces at once" lists them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

from . import metrics, schema, source, validation
from .corpus import Record
from .loading import TraceUnreadable
from .mapping import Subdecisions


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # string, int, float or bool: one Arrow and DuckDB type each
    about: str


IDENTITY = (
    Column("file", "string", "the file the trace was read from, as found"),
    Column("line", "int", "its line in a JSON Lines file; null for a file holding one trace"),
    Column("trace_id", "string", "the trace's trace_id"),
    Column("task_id", "string", "the task, when the trace says"),
    Column("run", "string", "the run it belongs to, when the trace says"),
    Column("step", "int", "the training step, when the trace says"),
    Column("group", "string", "the group of rollouts it was sampled in, when the trace says"),
    Column("system", "string", "the system that produced it, when the trace says"),
    Column("topology", "string", "the topology, when the trace says"),
    Column("time_unit", "string", "seconds or steps, when the trace says"),
    Column("valid", "bool", "whether the trace is valid; the measures of an invalid one are null"),
    Column("problem", "string", "an invalid trace's first problem (JSON pointer: what is wrong)"),
    Column(
        "problems",
        "int",
        f"how many problems it has; null for more than {schema.MOST_PROBLEMS}, past which they are not looked for",
    ),
    Column("warnings", "int", "how many warnings validation gave (a trace that declares no schema)"),
)

MEASURES = (
    Column("events", "int", "events"),
    Column("edges", "int", "edges"),
    Column("agents", "int", "agents that act or are spawned"),
    Column("spawns", "int", "spawn events"),
    Column("max_fanout", "int", "the most sub-agents one agent spawns in one wave (a wave ends when that agent aggregates)"),
    Column("depth", "int", "the depth of the spawn tree"),
    Column("stopped", "bool", "whether the trace has a stop event"),
    Column("stop_t", "float", "the time of its first stop"),
    Column("total_work_events", "int", "every event is a unit of work"),
    Column("critical_path_events", "int", "the longest chain of dependencies, in events (null without any dependency)"),
    Column("parallelism_speedup_events", "float", "total_work_events / critical_path_events"),
    Column("total_work_s", "float", "the agents' busy time, summed, in the trace's time unit"),
    Column("critical_path_s", "float", "the critical path's length in time"),
    Column("parallelism_speedup", "float", "total_work_s / critical_path_s"),
    Column("protocol_overhead", "float", "messages per tool call"),
    Column("tokens", "float", "tokens, summed over the events' costs"),
    Column("compute_s", "float", "seconds of compute, summed over the events' costs"),
    Column("tokens_declared", "float", "the tokens the trace declares in costs"),
    Column("compute_s_declared", "float", "the compute seconds the trace declares"),
    Column("wall_clock_s_declared", "float", "the wall-clock seconds the trace declares"),
    Column("tool_calls_declared", "float", "the tool calls the trace declares"),
    Column("messages_declared", "float", "the messages the trace declares"),
    Column(
        "reward_declared",
        "float",
        "the rewards the trace declares for the run (`rewards`), every channel summed; "
        "null when none (each channel is a row of the export's rewards table)",
    ),
    Column("notes", "string", "why a measure is null (JSON pointer: reason; ...)"),
)


def columns(mapping: Subdecisions) -> list[Column]:
    """Every column of a row, in order."""
    by_type = [Column(f"n_{name}", "int", f"{name} events") for name in schema.event_types()]
    decisions = [
        Column(f"subdecision_{key}", "int", f"events counted for {key} ({mapping.label(key)})") for key in mapping.events
    ]
    rewards = [
        Column(f"reward_{unit}", "float", f"rewards attached to events with credit unit {unit}, every channel summed")
        for unit in schema.credit_units()
    ]
    return [*IDENTITY, *MEASURES, *by_type, *decisions, *rewards]


@dataclass
class Measured:
    row: dict
    problem: str | None  # the problem line of an invalid trace: `FILE:LINE: what is wrong`
    checked: validation.Checked | None = None  # a valid trace's checked form and its events and edges, for export
    source: object = None


def measure(record: Record, mapping: Subdecisions, limits=None) -> Measured:
    """The row of one trace of a corpus, never an exception for what the record holds
    (`limits`: a Limits, the trace's events; the defaults without)."""
    row = {"file": record.file, "line": record.line}
    if record.data is None:
        return _invalid(row, record, [record.problem])
    try:
        trace_source = source.from_bytes(record.data, validation.CHUNK_ABOVE_BYTES, source.CHUNK)
        checked = validation.check_source(trace_source, None, limits)
    except TraceUnreadable as exc:
        findings = _importable(record) or exc.findings
        return _invalid(
            row, record, [finding.said for finding in findings[: schema.MOST_PROBLEMS]], len(findings) > schema.MOST_PROBLEMS
        )
    top = checked.top if isinstance(checked.top, dict) else {}
    row.update(identity(top))
    if not checked.valid or checked.index is None:
        hint = checked.index is None and _importable(record)
        problems = [finding.said for finding in hint or checked.findings] or ["no lists of events and edges: not a trace"]
        return _invalid(row, record, problems, not hint and checked.more)
    result = metrics.compute(checked.index, top, mapping, len(checked.warnings))
    row.update(valid=True, problem=None, problems=0, warnings=len(checked.warnings))
    row.update(flatten(result))
    return Measured(row, None, checked, trace_source)


def _importable(record: Record) -> list:
    """For a file holding one record, what `trace validate` says of an importer's input
    (a Who&When log: convert it first) rather than the schema's findings on it."""
    return validation.importable(Path(record.file), record.file) if record.line is None else []


IDENTITY_FIELDS = ("trace_id", "task_id", "run", "step", "group", "system", "topology", "time_unit")  # a trace's own
_IDENTITY_TYPES = [(column.name, column.type) for column in IDENTITY if column.name in IDENTITY_FIELDS]


def identity(top: dict) -> dict:
    return {name: _fitting(top.get(name), kind) for name, kind in _IDENTITY_TYPES}


def identities(tops: list[dict]) -> dict[str, list]:
    """identity() of many traces, a column at a time (batch.py): a text column is taken
    without a call per value, as _fitting takes it."""
    return {
        name: [_fitting(top.get(name), kind) for top in tops]
        if kind == "int"
        else [value if isinstance(value, str) else None for value in map(dict.get, tops, repeat(name))]
        for name, kind in _IDENTITY_TYPES
    }


_INT64 = range(-(1 << 63), 1 << 63)


def _fitting(value, kind: str):
    """A trace's field as its column holds it, in every format alike: a whole number may
    be written 2.0 (JSON Schema's integer allows it); what does not fit the column's type
    is null (an invalid trace, or one in the artifact's format, may hold anything)."""
    if kind == "int":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return value if type(value) is int and value in _INT64 else None
    return value if isinstance(value, str) else None


# What the readers of a trace file say of the file, as said of one line of a JSON Lines file
# (whose JSON's own line 1 is the file's line the label names).
_OF_A_LINE = (
    ("at line 1, column", "at column"),
    ("(line 1, column", "(column"),
    ("the file holds", "the line holds"),
    (
        "the file is truncated; export or copy it again",
        (
            "a JSON Lines file holds one whole trace per line (one written over several lines belongs in a .json "
            "file), or the file is truncated"
        ),
    ),
)


def _invalid(row: dict, record: Record, problems: list[str], more: bool = False) -> Measured:
    """An invalid trace's row and problem line: its first problem, and how many it has
    (`more`: past the problems given, which were not looked for: null)."""
    first = problems[0]
    for said, instead in _OF_A_LINE if record.line is not None else ():
        first = first.replace(said, instead)
    saved = "" if record.line is None else ", given the line saved as a file of its own"  # it reads one trace per file
    if more:
        rest = f" (and more than {len(problems) - 1}: `paperpool trace validate` lists the first {len(problems)}{saved})"
    else:
        rest = f" (and {len(problems) - 1} more: `paperpool trace validate` lists them{saved})" if len(problems) > 1 else ""
    row.update(valid=False, problem=first, problems=None if more else len(problems))
    return Measured(row, f"{record.label}: {first}{rest}")


def flatten(result: dict) -> dict:
    """The measures of metrics.compute as the row's columns."""
    row = {column.name: result.get(column.name) for column in MEASURES if column.name in result}
    costs = result["costs"]
    notes = [f"{note['key']}: {note['why']}" for note in result["notes"]]
    row.update({f"n_{name}": count for name, count in result["event_types"].items()})
    row.update({f"subdecision_{key}": count for key, count in result["subdecisions"].items()})
    for unit, channels in result["rewards"]["by_unit"].items():  # a channel past a double's range has its own note
        row[f"reward_{unit}"], why = channels_summed(list(channels.values()), ["rewards", "by_unit", unit])
        notes += [why] if why else []
    reward, why = declared_reward(result["rewards"]["declared"])
    notes += [why] if why else []
    row.update(
        tokens=costs["tokens"]["events"],
        compute_s=costs["seconds"]["events"],
        tokens_declared=number(costs["tokens"]["declared"]),
        compute_s_declared=number(costs["seconds"]["declared"]),
        wall_clock_s_declared=number(costs["wall_clock_s"]["declared"]),
        tool_calls_declared=number(costs["tool_calls"]["declared"]),
        messages_declared=number(costs["messages"]["declared"]),
        reward_declared=reward,
        notes="; ".join(notes) or None,
    )
    return row


def declared_reward(declared) -> tuple[float | None, str | None]:
    """The run's declared rewards summed over their channels (a trace in the artifact's
    format may hold anything there: then none)."""
    values = [number(value) for value in declared.values()] if isinstance(declared, dict) else []
    return channels_summed(values, ["rewards", "declared"])


def channels_summed(values: list, where: list) -> tuple[float | None, str | None]:
    """Channels' values summed and rounded as a measure, and a note (at `where`) when the
    sum is past a double's range; None, with no note, when there are none or one is not
    a number."""
    if not values or None in values:
        return None, None
    summed = round(sum(values), 6)
    if not math.isfinite(summed):
        return None, f"{schema.pointer(where)}: {metrics.NOT_FINITE}"
    return summed, None


def number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
