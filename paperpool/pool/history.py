"""A record's history: the retaggings it went through, kept in the record itself.

A field of type `history` (the shipped registry calls it `changes`) lists, oldest
first, each change made to a record after it entered the pool:

    changes:
      - date: 2026-04-30
        was: {is_rl: "yes", reward_type: orchestration}
        why: "The blog discloses no reward."

`was` holds the values the fields had before that day (null: the field was not set).
The pool as it stood on a day is then the records dated on or before it, each with the
changes made after it undone, newest first. The history lives in the file, not in git,
so that it survives squashed merges, copies of the pool and exports, and a reviewer
sees the change and its reason in the same diff.
"""

from __future__ import annotations

import datetime as dt

from paperpool.files.problems import kind_of
from paperpool.files.yamlio import DAY, NOT_A_REAL_DATE, calendar_day
from paperpool.registry import Registry

from . import evidence

CHANGE_FIELDS = ("date", "was", "why")
RETAGGED = "retagged"  # how `since` names a change of tags
EXAMPLE = '- {date: 2026-05-01, was: {FIELD: OLD VALUE}, why: "what the reading found"}'


def history_field(registry: Registry, kind: str) -> str | None:
    """The name of the kind's history field, if the registry declares one."""
    return next((name for name, spec in registry.fields[kind].items() if spec.type == "history"), None)


def as_of(data: dict, history: str | None, day: dt.date) -> dict:
    """A record's fields as they stood on `day`: the changes made after it undone."""
    changes = data.get(history) if history else None
    if not isinstance(changes, list):
        return data
    later = [
        change
        for change in changes
        if isinstance(change, dict)
        and as_date(change.get("date")) is not None
        and as_date(change["date"]) > day
        and isinstance(change.get("was"), dict)
    ]
    if not later:
        return data
    state = dict(data)
    for change in reversed(later):
        for name, value in change["was"].items():
            if value is None:
                state.pop(name, None)
            else:
                state[name] = value
    undone = {id(change) for change in later}  # by identity: comparing the mappings would be quadratic
    state[history] = [change for change in changes if id(change) not in undone]
    return state


def changed_fields(data: dict, history: str | None, after: dt.date) -> list[tuple[str, str]]:
    """The (date, field) of every change made after a day, oldest first."""
    changes = data.get(history) if history else None
    if not isinstance(changes, list):
        return []
    return [
        (str(as_date(change.get("date"))), name)
        for change in changes
        if isinstance(change, dict) and (as_date(change.get("date")) or dt.date.min) > after
        for name in (change.get("was") if isinstance(change.get("was"), dict) else {})
    ]


def since(pool, day: dt.date) -> dict[str, str]:
    """What happened to each record after `day`, in a few words, for the records that
    changed: "added 2026-11-23", "retagged 2026-06-01: Sub-decisions" (fields by their labels), or, when a change
    only added evidence for tags that stayed, "evidence added 2026-11-23"."""
    dated_by = pool.registry.pool.get("dated_by") or {}
    found = {}
    for kind, records in pool.records.items():
        history = history_field(pool.registry, kind)
        specs = pool.registry.fields[kind]
        for record in records:
            events = []
            added = as_date(record.data.get(dated_by.get(kind, "")))
            if added is not None and added > day:
                events.append(f"added {added}")
            by_day: dict[str, list[str]] = {}
            for when, name in changed_fields(record.data, history, day):
                by_day.setdefault(when, []).append(name)
            for when, names in by_day.items():
                tags = [
                    specs[name].title if name in specs else name
                    for name in names
                    if name not in specs or specs[name].type != "evidence"
                ]
                events.append(f"{RETAGGED} {when}: {', '.join(tags)}" if tags else f"evidence added {when}")
            if events:
                found[record.key] = "; ".join(events)
    return found


def last_changed(pool, dated_by: dict[str, str] | None = None) -> dt.date | None:
    """The latest day any record of the pool names: the day it entered the pool (its
    field of `pool.dated_by`, or of `dated_by` where the registry declares none) or the
    day of a change in its history. Never the day of a build: a rebuild changes nothing.
    None when no record carries such a day."""
    dated_by = pool.registry.pool.get("dated_by") or dated_by or {}
    days = []
    for kind, records in pool.records.items():
        history = history_field(pool.registry, kind)
        for record in records:
            days.append(as_date(record.data.get(dated_by.get(kind, ""))))
            changes = record.data.get(history) if history else None
            days += [as_date(change.get("date")) for change in changes or [] if isinstance(change, dict)]
    return max((day for day in days if day is not None), default=None)


def as_date(value) -> dt.date | None:
    """A record's date as a day: what YAML read as a day (validate refuses any other
    value, day_problem); None for anything else."""
    return value if isinstance(value, dt.date) and not isinstance(value, dt.datetime) else None


def day_problem(value) -> str | None:
    """Why a record's date is not a day, and how to write it (None when it is one). A day
    is written YYYY-MM-DD without quotes, which YAML reads as a date: every command counts
    and orders the records by it as such."""
    if isinstance(value, dt.datetime):
        return f"'{value}' is a time, not a day; write the day alone: {value.date()}"
    if isinstance(value, dt.date):
        return None
    if isinstance(value, str) and DAY.fullmatch(value.strip()):
        day = calendar_day(value.strip())
        if day is None:
            return f"'{value}' {NOT_A_REAL_DATE}"
        return f"'{value}' is quoted, so YAML reads it as text, not as a date; write it without quotes: {day}"
    if isinstance(value, (list, dict)):
        return f"is {kind_of(value)}, not a date; write one day as YYYY-MM-DD, e.g. 2026-04-26"
    return f"{value!r} is not a date; write it as YYYY-MM-DD, e.g. 2026-04-26"


MAX_CHANGES = 200


def check(checker, value, spec, path: tuple) -> None:
    """The problems of a history field: each change dated, in order, after the record
    entered the pool and not in the future, with the earlier values of declared fields
    (each checked as the field itself is) and the reason."""
    dated_by = (checker.registry.pool.get("dated_by") or {}).get(checker.record.kind)
    entered = as_date(checker.record.data.get(dated_by)) if dated_by else None
    protected = {spec.name, "key", dated_by}
    previous = None
    if isinstance(value, list) and len(value) > MAX_CHANGES:  # each is a row of the record's page, labels and all
        checker.problem(
            path, f"lists {len(value):,} changes, over {MAX_CHANGES}; keep the retaggings that changed what the record says"
        )
        return
    for here, change in checker.mapping_items(value, path, "changes, oldest first", "a change", CHANGE_FIELDS, EXAMPLE):
        day = _check_change_day(checker, change.get("date"), here + ("date",), entered, dated_by, previous)
        previous = day or previous
        why = change.get("why")
        if not isinstance(why, str) or not why.strip():
            checker.problem(here + ("why",), 'say why the record changed, e.g. why: "the paper\'s section 4 trains the router"')
        _check_was(checker, change.get("was"), here + ("was",), protected)


def _check_change_day(checker, value, path: tuple, entered, dated_by, previous) -> dt.date | None:
    why = day_problem(value)
    if why is not None:  # a day written otherwise is said so; anything else is asked for
        said = isinstance(value, dt.date) or isinstance(value, str) and DAY.fullmatch(value.strip())
        checker.problem(path, why if said else "give the day of the change as YYYY-MM-DD, e.g. date: 2026-05-01")
        return None
    day = value
    if day > dt.date.today():
        checker.problem(path, f"{day} is in the future; use the day the record changed")
    elif entered is not None and day < entered:
        checker.problem(
            path, f"{day} is before the record's {dated_by} {entered}; a change comes after the record entered the pool"
        )
    elif previous is not None and day < previous:
        checker.problem(path, f"{day} is before the change above it ({previous}); list changes oldest first")
    return day


def _check_was(checker, was, path: tuple, protected: set) -> None:
    specs = checker.specs
    if not isinstance(was, dict) or not was:
        checker.problem(path, "give the values before the change, e.g. was: {credit_unit: agent} (null: the field was not set)")
        return
    for name, value in was.items():
        spec = specs.get(name)
        if spec is None or name in protected:
            why = "is not a field of the record" if spec is None else "is not a field whose changes are recorded"
            checker.problem(path + (name,), f"'{name}' {why}; name the fields the change edited")
        elif value is not None and spec.type == "evidence":
            evidence.check_earlier(checker, value, spec, path + (name,))
        elif value is not None:  # null: the field was not set (a field the registry added later, say)
            checker.check_field(spec, value, path + (name,))
