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

from . import measures, schema, source, validation
from .corpus import Record
from .loading import TraceUnreadable
from .mapping import Subdecisions
from .measures import Column

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

DECLARED = (
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
MEASURES = (*measures.MEASURES, *DECLARED)  # the measures, as measures.py computes them, then what the trace declares


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
    values = measures.Values(measures.of_index(checked.index))
    row.update(valid=True, problem=None, problems=0, warnings=len(checked.warnings))
    row.update({name: column[0] for name, column in table(values, [top], mapping).items()})
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
        if (
            isinstance(value, float) and value.is_integer() and abs(value) <= 2**53
        ):  # past 2**53 a double is not the number written
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


def table(values: measures.Values, tops: list[dict], mapping: Subdecisions) -> dict[str, list]:
    """The measure columns of a batch's traces (`tops`: each trace's fields but its events
    and edges), as the same code measured them for one trace or for many."""
    m = values.m
    found = dict(values.columns)
    types = schema.event_types()
    found |= {f"n_{name}": counts.tolist() for name, counts in zip(types, m.by_type.T, strict=True)}
    found |= {
        f"subdecision_{key}": counts.tolist() for key, counts in zip(mapping.events, m.subdecisions(mapping).T, strict=True)
    }
    units = {unit: [None] * m.B for unit in schema.credit_units()}
    notes, rewards_declared = [], []
    for k, top in enumerate(tops):
        said = values.said(k)
        for unit, channels in values.by_unit(k).items():  # a channel past a double's range has its own note
            if unit in units:
                units[unit][k], why = channels_summed(list(channels.values()), ["rewards", "by_unit", unit])
                said += [why] if why else []
        reward, why = declared_reward(top.get("rewards") or {})
        rewards_declared.append(reward)
        said += [why] if why else []
        notes.append("; ".join(said) or None)
    declared = [top.get("costs") or {} for top in tops]
    found |= {
        f"{name}_declared": [number(given.get(name)) for given in declared]
        for name in ("tokens", "compute_s", "wall_clock_s", "tool_calls", "messages")
    }
    found |= {f"reward_{unit}": sums for unit, sums in units.items()}
    found["reward_declared"], found["notes"] = rewards_declared, notes
    return found


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
        return None, f"{schema.pointer(where)}: {measures.NOT_FINITE}"
    return summed, None


def number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
