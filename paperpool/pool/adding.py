"""`paperpool add`: one new record from values typed at prompts or given as
`--set FIELD=VALUE`, checked like any record, compared with the pool, never replacing one.

The fields, their order, their help and the values offered all come from the registry;
how a typed answer becomes a value depends on the field's type (READERS below, the same
small conversions the CSV import uses).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from paperpool.files.problems import PaperpoolError, Problem, suggest
from paperpool.registry import KEY_RE, FieldSpec, Registry
from paperpool.registry.convert import ConvertError, converter

from .fileschemas import header
from .reading import Pool
from .recordchecks import RecordChecker, check_value, expected_value
from .stubs import Planned, PoolIndex, complete, identifiers_from_links, planned_record

# How a typed answer is read, by field type; lists are separated by ";" (names hold commas).
READERS = {
    "text": "",
    "identifier": "",
    "url": "",
    "choice": "",
    "key": "",
    "integer": "integer",
    "bool": "boolean",
    "date": "date",
    "text_list": "value_list",
    "url_list": "value_list",
    "choice_list": "value_list",
    "key_list": "value_list",
    "choice_map": "value_map",
}
LIST_HINT = {
    "text_list": "separate them with ;",
    "url_list": "separate them with ;",
    "choice_list": "separate them with ;",
    "key_list": "separate them with ;",
    "choice_map": "like NAME:VALUE;NAME:VALUE",
}


@dataclass
class Question:
    """One field to ask about: what to show, and what is allowed."""

    name: str
    spec: FieldSpec
    prompt: str
    explanation: list[str]  # the field's help and, for a choice, each value with its label

    def read(self, answer: str, registry: Registry, kind: str):
        """The value an answer gives (None for an empty one); ValueError saying what is
        wrong otherwise, so that the prompt can ask again."""
        if not answer.strip():
            return None
        try:
            value = converter(READERS[self.spec.type] or None).read(answer)
        except ConvertError as exc:
            hint = f" ({expected_value(self.spec, registry)})" if self.spec.vocabulary else ""  # which names and values
            raise ValueError(f"{exc}{hint}") from None
        problems = check_value(registry, kind, self.spec, value)
        if problems:
            raise ValueError(problems[0])
        return value


def askable(spec: FieldSpec) -> bool:
    # derived values follow from their source; dates added are today; keys and
    # distinct_from are asked apart or set by hand; nested mappings
    # (BibTeX details, a second reading) are for later edits, not a first record
    return spec.type in READERS and not spec.derived_from and spec.type not in ("date", "key", "key_list")


def questions(registry: Registry, kind: str, given: dict) -> list[Question]:
    """A question per field a contributor fills in and has not given yet, in the
    registry's order."""
    asked = []
    for name, spec in registry.fields[kind].items():
        if name in given or not askable(spec):
            continue
        explanation = [spec.help] if spec.help else []
        if spec.vocabulary or spec.keys:
            vocabulary = registry.vocabularies[spec.keys or spec.vocabulary]
            explanation += [f"  {value.id:<24} {value.label}" for value in vocabulary.values]
            if spec.keys:
                modes = registry.vocabularies[spec.vocabulary].ids
                explanation.append(f"  each as NAME:MODE, MODE one of {', '.join(modes)}")
        hint = f" ({LIST_HINT[spec.type]})" if spec.type in LIST_HINT else ""
        need = "" if spec.required else ", optional"
        asked.append(Question(name, spec, f"{spec.title}{hint}{need}", explanation))
    return asked


def parse_assignments(registry: Registry, kind: str, pairs: list[str]) -> dict:
    """`--set FIELD=VALUE` options as field values; every problem in one error."""
    specs = registry.fields[kind]
    record, problems = {}, []
    for pair in pairs:
        name, sep, answer = pair.partition("=")
        name = name.strip()
        if not sep:
            problems.append(f"--set {pair}: write FIELD=VALUE")
            continue
        spec = specs.get(name)
        if spec is None:
            problems.append(f"--set {name}: not a field of the {kind}; {suggest(name, specs, 'see paperpool add --help')}")
            continue
        if spec.type not in READERS:
            problems.append(f"--set {name}: a {spec.type} field cannot be set here; edit the file after adding it")
            continue
        try:
            value = Question(name, spec, name, []).read(answer, registry, kind)
        except ValueError as exc:
            problems.append(f"--set {name}: {exc}")
            continue
        if value is not None:
            record[name] = value
    if problems:
        raise PaperpoolError("; ".join(problems))
    return record


def suggested_key(record: dict) -> str:
    """A key in the pool's usual form, first author's surname, year and the title's first
    word (motwani2024malt); the contributor may type another."""
    authors = record.get("authors") or []
    surname = str(authors[0]).split(",")[0].split()[-1] if authors and str(authors[0]).strip() else ""
    title_word = next((w for w in re.findall(r"[A-Za-z0-9]+", str(record.get("title") or "")) if len(w) > 3), "")
    key = f"{surname}{record.get('year') or ''}{title_word}".lower()
    return re.sub(r"[^a-z0-9]+", "", key)[:40] or "new-record"


def plan_record(pool: Pool, kind: str, key: str, given: dict, added: dt.date) -> Planned:
    """The record to write: completed, checked, and refused when its key is taken or the
    pool already records the same paper."""
    registry = pool.registry
    if not KEY_RE.match(key):  # before the key becomes a path: '/tmp/x' or '../x' must never reach one
        raise PaperpoolError(
            f"key: '{key}' is not a safe key; use lower-case letters, digits and hyphens "
            "(e.g. magrpo, kimi-k2-5); nothing written"
        )
    index = PoolIndex(pool)
    specs = registry.fields[kind]
    given = dict(given)
    identifiers_from_links(given, specs)
    record = complete({**given, "key": key}, specs, registry, kind, added)
    target = registry.record_path(kind, key)
    planned = planned_record(record, target, str(target.relative_to(registry.root)), kind)
    duplicate = index.same_paper(planned)  # before the key: "already here" says more than "key taken"
    if duplicate:
        raise PaperpoolError(
            f"this paper is already in the pool: {duplicate}; if it is a different paper, "
            f"add --set distinct_from=KEY naming that record"
        )
    taken = index.key_taken(key)
    if taken:
        raise PaperpoolError(f"key '{key}' is taken by {taken}; paperpool never overwrites a record: choose another key")
    problems = [p for p in RecordChecker(registry, planned).check() if p.severity == "error"]
    if problems:
        raise PaperpoolError(f"{_described(problems)}; nothing written")
    return Planned(target, record, header(registry, kind, target))


def unknown_fields(registry: Registry, record: dict) -> list[str]:
    marker = registry.unknown_marker
    return [name for name, value in record.items() if marker is not None and value == marker]


def _described(problems: list[Problem]) -> str:
    return "; ".join(f"{p.field}: {p.message}" for p in problems)
