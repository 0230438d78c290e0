"""What one record's file must hold, checked alone: each field by its type and the
registry's vocabularies and rules, and the facts about it that the checks across records
read (unique fields, identities). A function of the file's bytes and the registry, which
is what lets paperpool.pool.cache keep the result."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from paperpool.files.problems import Problem, shown_name, suggest
from paperpool.files.yamlio import Document
from paperpool.registry import (
    CONTROL_CHARACTERS,
    KEY_RE,
    REGISTRY_FILE,
    FieldSpec,
    Registry,
    lookup,
)
from paperpool.registry.columns import MULTI

from . import evidence, history, identity
from .packed import Facts
from .reading import Record


def record_problems(registry: Registry, record: Record) -> list[Problem]:
    """The problems of one record on its own: its fields, and the registry's rules."""
    return RecordChecker(registry, record).check() + check_rules(registry, record)


# ---------------------------------------------------------------------------------
# One record against its field specs
# ---------------------------------------------------------------------------------


class RecordChecker:
    def __init__(self, registry: Registry, record: Record):
        self.registry = registry
        self.record = record
        self.specs = registry.fields[record.kind]
        self.problems: list[Problem] = []

    def problem(self, path: tuple, message: str, severity: str = "error") -> None:
        name = ".".join(str(part) for part in path if not isinstance(part, int))
        self.problems.append(Problem(self.record.rel, self.record.line(*path), name, message, severity))

    def check(self) -> list[Problem]:
        self.check_mapping(self.record.data, self.specs, ())
        self.check_derived(self.record.data, self.specs)
        self.check_parents(self.record.data, self.specs)
        evidence.check_given(self)
        return self.problems

    def check_mapping(self, data: dict, specs: dict[str, FieldSpec], path: tuple) -> None:
        for name in data:
            if name not in specs and (not str(name).strip() or str(name) != str(name).strip()):
                # a blank name would print as nothing: say which it is, on its own line
                line = self.record.line(*path, name)
                where = ".".join(str(part) for part in path if not isinstance(part, int))
                self.problems.append(
                    Problem(
                        self.record.rel,
                        line,
                        where,
                        f"field name {name!r} is blank or has spaces around it; write the field's name alone before the colon",
                    )
                )
            elif name not in specs:
                hint = suggest(name, specs, f"declare it in {REGISTRY_FILE} or remove it")
                self.problem(path + (name,), f"unknown field; {hint}")
        marker = self.registry.unknown_marker
        for name, spec in specs.items():
            value = data.get(name)
            field_path = path + (name,)
            if _absent(value, spec):
                if spec.required:
                    where = f" under {'.'.join(path)}" if path else ""
                    self.problem(
                        field_path, f"missing required field{where}; add `{name}: ...` ({expected_value(spec, self.registry)})"
                    )
                continue
            if marker is not None and value == marker:
                if spec.derived_from and self.registry.derivation_source(specs, spec).get(data.get(spec.derived_from)):
                    continue  # its source is filled in, so check_derived says what to write
                self.problem(
                    field_path, f"not filled in yet; replace {value} with {expected_value(spec, self.registry)}", "warning"
                )
                continue
            CHECKS[spec.type](self, value, spec, field_path)

    def check_derived(self, data: dict, specs: dict[str, FieldSpec]) -> None:
        for spec in specs.values():
            if spec.derived_from is None:
                continue
            source_value = data.get(spec.derived_from)
            source_vocab = self.registry.derivation_source(specs, spec)
            if source_vocab.get(source_value) is None:
                continue  # the source field's own check reports it
            expected = source_vocab.maps_to(source_value)
            actual = data.get(spec.name)
            if actual == expected:
                continue
            if spec.name not in data:  # reported on the line of the field it derives from
                self.problem(
                    (spec.derived_from,),
                    f"{spec.name} is missing; {spec.derived_from} '{source_value}' "
                    f"maps to {expected}, so add `{spec.name}: {expected}`",
                )
                continue
            maps = f"which maps to {expected}" if expected is not None else "which maps to no value"
            self.problem(
                (spec.name,),
                f"{'null' if actual is None else actual} does not match {spec.derived_from} '{source_value}', "
                f"{maps}; write `{spec.name}: {expected if expected is not None else 'null'}`",
            )

    def check_parents(self, data: dict, specs: dict[str, FieldSpec]) -> None:
        """A record holding a value one level down a taxonomy holds its parent too (a
        topic's area): the registry's parent_field."""
        for spec in specs.values():
            if spec.parent_field is None or spec.parent_field not in specs:
                continue
            vocabulary = self.registry.vocabularies[spec.vocabulary]
            held = _choice_values(data.get(spec.parent_field))
            for value in _choice_values(data.get(spec.name)):
                parent = vocabulary.parent(value)
                if parent is None or parent in held:
                    continue  # an unknown value is reported by the field's own check
                upper = specs[spec.parent_field]
                fix = (
                    f"add it: `{upper.name}: [{', '.join([*held, parent])}]`"
                    if upper.type == "choice_list"
                    else f"write `{upper.name}: {parent}`, or choose another {spec.name}"
                )
                self.problem(
                    (spec.name,),
                    f"{spec.name} '{value}' is part of {upper.name} '{parent}', which {upper.name} does not hold; {fix}",
                )

    def mapping_items(self, value, path: tuple, items: str, item: str, fields: tuple, example: str) -> list[tuple[tuple, dict]]:
        """The (path, mapping) of each item of a list of mappings; a problem for what is not
        one (the list, an item) and for each unknown field of an item."""
        if not isinstance(value, list):
            self.problem(path, f"must be a list of {items}, each like {example}")
            return []
        found = []
        for index, entry in enumerate(value):
            here = path + (index,)
            if not isinstance(entry, dict):
                self.problem(here, f"{item} is a mapping like {example}")
                continue
            for name in sorted(set(entry) - set(fields), key=str):
                self.problem(here + (name,), f"unknown field; {item} has {', '.join(fields)}")
            found.append((here, entry))
        return found

    def check_field(self, spec: FieldSpec, value, path: tuple) -> None:
        """One value as its field's type checks it (a change's earlier value, for one)."""
        CHECKS[spec.type](self, value, spec, path)

    def text_value(self, value, path: tuple, what: str = "text") -> bool:
        if isinstance(value, str):
            return True
        if isinstance(value, (list, dict)):
            self.problem(path, f"must be {what}, not {_yaml_type(value)}; write a single plain value")
            return False
        raw = self.record.doc.raw.get(path)
        shown = raw if raw is not None else value
        self.problem(path, f'must be {what}, but YAML read {shown!r} as {_yaml_type(value)}; quote it: "{shown}"')
        return False


def _absent(value, spec: FieldSpec) -> bool:
    """Whether a field is left empty: no value, empty text, or an empty list or mapping;
    but a mapping, even empty, where a list belongs is a mistake its check names (the
    counts would take `{}` for a list)."""
    if value == {} and spec.type in MULTI:
        return False
    return value is None or value == [] or value == {} or value == ""


def check_value(registry: Registry, kind: str, spec: FieldSpec, value) -> list[str]:
    """What validate would say about one value of one field, before any file exists."""
    if registry.unknown_marker is not None and value == registry.unknown_marker:
        return []
    checker = RecordChecker(registry, Record(kind, "", Document(Path(spec.name), {spec.name: value})))
    CHECKS[spec.type](checker, value, spec, (spec.name,))
    return [problem.message for problem in checker.problems]


def _yaml_type(value) -> str:
    kinds = {
        str: "text",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        dt.date: "a date",
        list: "a list",
        dict: "a mapping",
    }
    return kinds.get(type(value), "a " + type(value).__name__)


def _listed(ids: list[str]) -> str:
    return ", ".join(ids[:12]) + (", ..." if len(ids) > 12 else "")


def expected_value(spec: FieldSpec, registry: Registry) -> str:
    if spec.vocabulary:
        listed = _listed(registry.vocabularies[spec.vocabulary].ids)
        if spec.keys:
            return f"a mapping from {_listed(registry.vocabularies[spec.keys].ids)} to one of {listed}"
        return f"a list of any of {listed}" if spec.type == "choice_list" else f"one of {listed}"
    return {
        "key": "a lower-case slug matching the file name",
        "text": "text",
        "text_list": "a list of names",
        "bool": "true or false",
        "integer": "a whole number",
        "date": "a date like 2026-04-26",
        "url": "an http(s) link",
        "url_list": "a list of http(s) links",
        "identifier": identity.PATTERNS[spec.scheme][1] if spec.scheme in identity.PATTERNS else "an identifier",
        "key_list": "a list of record keys",
        "mapping": "the sub-fields",
        "history": "a list of changes, oldest first",
        "evidence": "a list of evidence items (about, url, note)",
    }.get(spec.type, spec.type)


def _check_key(checker: RecordChecker, value, spec, path) -> None:
    if not checker.text_value(value, path):
        return
    if not KEY_RE.match(value):
        checker.problem(path, f"'{value}' is not a safe key; use lower-case letters, digits and hyphens (e.g. magrpo, kimi-k2-5)")
    elif value != checker.record.key:
        checker.problem(
            path, f"'{value}' does not match the file name {checker.record.key}.yaml; rename the file or change the key"
        )


def _check_text(checker: RecordChecker, value, spec, path) -> None:
    if not checker.text_value(value, path):
        return
    if CONTROL_CHARACTERS.search(value):
        checker.problem(path, "contains control characters; remove them")
    if spec.max_length and len(value) > spec.max_length:
        checker.problem(path, f"is {len(value)} characters, over the limit of {spec.max_length}; shorten it")


def _check_text_list(checker: RecordChecker, value, spec, path) -> None:
    if not isinstance(value, list):
        checker.problem(path, "must be a list, one item per line starting with '- '")
        return
    for index, item in enumerate(value):
        if item is None or item == "":
            checker.problem(path + (index,), "empty item; remove it")
        else:
            _check_text(checker, item, spec, path + (index,))


def _check_bool(checker: RecordChecker, value, spec, path) -> None:
    if not isinstance(value, bool):
        checker.problem(path, f"must be true or false, not {value!r}")


def _check_integer(checker: RecordChecker, value, spec, path) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raw = checker.record.doc.raw.get(path, value)
        quoted = isinstance(value, str) and value.strip().lstrip("+-").isdigit()
        fix = "write the number without quotes" if quoted else "write a whole number, e.g. 2025"
        checker.problem(path, f"must be a whole number, but YAML read '{raw}' as {_yaml_type(value)}; {fix}")
        return
    if not _in_range(value, spec):
        limit = "next year" if spec.max == "next_year" else spec.max
        checker.problem(path, f"{value} is outside {spec.min} to {limit}; check the number")


def _in_range(value: int, spec: FieldSpec) -> bool:
    top = dt.date.today().year + 1 if spec.max == "next_year" else spec.max
    return (spec.min is None or value >= spec.min) and (top is None or value <= top)


def _check_date(checker: RecordChecker, value, spec, path) -> None:
    why = history.day_problem(value)
    if why is not None:
        checker.problem(path, why)
        return
    date = value
    if date > dt.date.today():
        checker.problem(path, f"{date} is in the future; use the date it actually happened")
    if spec.not_before_field:
        year = checker.record.data.get(spec.not_before_field)
        year_spec = checker.specs.get(spec.not_before_field)
        plausible = isinstance(year, int) and not isinstance(year, bool) and (year_spec is None or _in_range(year, year_spec))
        if plausible and date.year < year:
            checker.problem(path, f"{date} is before the {spec.not_before_field} {year}; one of them is wrong")


def _check_url(checker: RecordChecker, value, spec, path) -> None:
    if not checker.text_value(value, path, "a link"):
        return
    why = identity.url_problem(value)
    if why:
        checker.problem(path, f"'{value}' {why}; give an http:// or https:// link")


def _check_url_list(checker: RecordChecker, value, spec, path) -> None:
    if not isinstance(value, list):
        checker.problem(path, "must be a list of links, one per line starting with '- '")
        return
    seen = set()
    for index, item in enumerate(value):
        _check_url(checker, item, spec, path + (index,))
        if isinstance(item, str):
            if item in seen:
                checker.problem(path + (index,), f"'{item}' is listed twice; remove one")
            seen.add(item)


def _check_identifier(checker: RecordChecker, value, spec, path) -> None:
    if not checker.text_value(value, path, "text"):
        return
    pattern, example = identity.PATTERNS[spec.scheme]
    if identity.invisible(value):
        checker.problem(path, f"'{value}' contains invisible control characters; write {example}")
    elif not pattern.match(value):
        checker.problem(path, f"'{value}' is not {example}")


def _check_choice(checker: RecordChecker, value, spec, path) -> None:
    vocab = checker.registry.vocabularies[spec.vocabulary]
    if not isinstance(value, (str, int, float)) or value not in _value_ids(vocab):
        checker.problem(path, _not_in_vocabulary(value, vocab.ids, checker.record.doc.raw.get(path)))


_IDS: dict[int, tuple[object, frozenset]] = {}  # id(vocabulary) -> (the vocabulary, its value ids)


def _value_ids(vocab) -> frozenset:
    """A vocabulary's value ids as a set: vocab.get searches its values one by one, and
    every choice of every record is looked up. Ids are text, so `in` finds what get finds."""
    known = _IDS.get(id(vocab))
    if known is None or known[0] is not vocab:  # a vocabulary since freed may have had this id
        if len(_IDS) > 256:  # registries come and go in a long process: keep the last few
            _IDS.clear()
        known = _IDS[id(vocab)] = (vocab, frozenset(vocab.ids))
    return known[1]


SHOWN_IDS = 20  # a vocabulary's ids a problem line lists; a larger one is named by count


def _not_in_vocabulary(value, ids: list[str], raw: str | None = None, noun: str = "value") -> str:
    """A value outside its vocabulary: the closest id (looked for within problems.suggest's
    bounds: difflib over 200 ids of 50 characters, for each of 17,000 values, took minutes)
    and the ids to choose from, the first SHOWN_IDS of a large vocabulary."""
    shown = shown_name(str(raw if raw is not None else value))
    hint = suggest(shown, ids, "")
    listed = ", ".join(ids[:SHOWN_IDS]) + (
        f" or the {len(ids) - SHOWN_IDS} more in registry.yaml" if len(ids) > SHOWN_IDS else ""
    )
    return f"'{shown}' is not an allowed {noun}; {hint + ' ' if hint else ''}use one of {listed}"


def _check_choice_list(checker: RecordChecker, value, spec, path) -> None:
    if not isinstance(value, list):
        example = ", ".join(checker.registry.vocabularies[spec.vocabulary].ids[:2])
        checker.problem(path, f"must be a list; write its values in brackets, e.g. [{example}], or leave the field out")
        return
    for index, item in enumerate(value):
        _check_choice(checker, item, spec, path + (index,))
    if len(set(map(str, value))) != len(value):
        checker.problem(path, "lists a value twice; remove the repeat")


def _check_choice_map(checker: RecordChecker, value, spec, path) -> None:
    keys = checker.registry.vocabularies[spec.keys]
    if not isinstance(value, dict):
        checker.problem(path, f"must be a mapping like `{keys.ids[0]}: {checker.registry.vocabularies[spec.vocabulary].ids[0]}`")
        return
    for name, item in value.items():
        if keys.get(name) is None:
            checker.problem(path + (name,), _not_in_vocabulary(name, keys.ids, noun=keys.label.lower()))
        else:
            _check_choice(checker, item, spec, path + (name,))


# Each key of a key list is a link on the record's page with the other record's title:
# 333,000 repeats of one key in a 1 MB record made a page of 800 million characters.
MAX_KEYS = 100


def _check_key_list(checker: RecordChecker, value, spec, path) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        checker.problem(path, "must be a list of record keys")
    elif len(value) > MAX_KEYS:
        checker.problem(path, f"lists {len(value):,} keys, over {MAX_KEYS}; keep the records it is about")
    elif len(set(value)) != len(value):
        checker.problem(path, "lists a key twice; remove the repeat")


def _check_mapping(checker: RecordChecker, value, spec, path) -> None:
    if not isinstance(value, dict):
        checker.problem(path, f"must be a mapping of sub-fields: {', '.join(spec.fields)}")
        return
    checker.check_mapping(value, spec.fields, path)


CHECKS = {
    "key": _check_key,
    "text": _check_text,
    "text_list": _check_text_list,
    "bool": _check_bool,
    "integer": _check_integer,
    "date": _check_date,
    "url": _check_url,
    "url_list": _check_url_list,
    "identifier": _check_identifier,
    "choice": _check_choice,
    "choice_list": _check_choice_list,
    "choice_map": _check_choice_map,
    "key_list": _check_key_list,
    "mapping": _check_mapping,
    "history": history.check,
    "evidence": evidence.check,
}


def record_facts(registry: Registry, record: Record) -> Facts:
    """What the checks across records need of a record: a function of the record alone
    (and the registry), so that it is computed where the record is parsed, and cached."""
    title = record.data.get("title")
    unique = {}
    for name in _unique_names(registry.fields[record.kind]):
        value = record.data.get(name)
        # missing, of the wrong type or not filled in: the field check reports it
        if isinstance(value, (str, int)) and value != registry.unknown_marker:
            unique[name] = value
    return Facts(
        identity.title_key(title) if isinstance(title, str) and title.strip() else None,
        _distinct_from(record),
        [
            part
            for (kind, value), name in identity_tokens(record, registry.fields[record.kind]).items()
            for part in (kind, value, name)
        ],
        unique,
    )


_UNIQUE: dict[int, tuple[dict, list[str]]] = {}  # id(specs) -> (specs, the names of its unique fields)


def _unique_names(specs: dict[str, FieldSpec]) -> list[str]:
    known = _UNIQUE.get(id(specs))
    if known is None or known[0] is not specs:  # specs since freed may have had this id
        if len(_UNIQUE) > 64:  # registries come and go in a long process: keep the last few
            _UNIQUE.clear()
        known = _UNIQUE[id(specs)] = (specs, [spec.name for spec in specs.values() if spec.unique])
    return known[1]


def identity_tokens(record: Record, specs: dict[str, FieldSpec]) -> dict[tuple, str]:
    """Each (kind, normalised id) the record carries, with the field it came from."""
    tokens = {}
    for spec in specs.values():
        if spec.type not in _IDENTIFYING or not spec.identifies:
            continue
        value = record.data.get(spec.name)
        if not value or not isinstance(value, (str, list)):
            continue
        if spec.type == "identifier" and isinstance(value, str):
            found = identity.identifier_tokens(spec.scheme, value)
        elif spec.type in ("url", "url_list"):
            found = set()
            for url in [value] if isinstance(value, str) else value:
                if isinstance(url, str) and identity.url_problem(url) is None:
                    found |= identity.url_tokens(url)
        else:
            continue
        for token in found:
            tokens.setdefault(token, spec.name)
    return tokens


_IDENTIFYING = {"identifier", "url", "url_list"}  # the field types identity_tokens reads


def check_rules(registry: Registry, record: Record) -> list[Problem]:
    """The registry's rules (a value forbidden when another field holds some value) on one record."""
    problems = []
    for rule in registry.rules:
        if rule.applies_to != record.kind or lookup(record.data, rule.when_field) not in rule.when_in:
            continue
        value = lookup(record.data, rule.forbid_field)
        values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
        if any(item in rule.forbid_in for item in values):
            path = tuple(rule.forbid_field.split("."))
            problems.append(Problem(record.rel, record.line(*path), rule.forbid_field, f"{rule.problem}; {rule.fix}"))
    return problems


def _distinct_from(record: Record) -> list[str]:
    value = record.data.get("distinct_from")
    return list(dict.fromkeys(key for key in value if isinstance(key, str))) if isinstance(value, list) else []


def _choice_values(value) -> list:
    """A choice field's values: a choice_list's items, a choice's one value, or none."""
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return [value] if isinstance(value, str) else []
