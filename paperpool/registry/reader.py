"""The registry's core sections read into their classes, with the checks the schema
cannot make: names that must exist, ids that must be unique."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from paperpool.files.problems import Problem, suggest
from paperpool.files.yamlio import NOT_A_REAL_DATE, Document, calendar_day

from . import schema
from .convert import CONVERTERS
from .model import (
    RECORD_KINDS,
    CsvColumn,
    FieldSpec,
    Registry,
    Rule,
    Value,
    ValueSet,
    Vocabulary,
    registry_problem,
    resolve_spec,
)

FIELD_TYPES = set(schema.enum("$defs", "field", "properties", "type"))
IDENTIFIER_SCHEMES = set(schema.enum("$defs", "field", "properties", "scheme"))


class RegistryReader:
    """The registry's sections read into their classes, with the checks the schema cannot
    make (names that must exist, ids that must be unique), on data of the schema's shape."""

    def __init__(self, root: Path, doc: Document, features: list[str]):
        self.root = root
        self.doc = doc
        self.features = features  # the sections the registered features read
        self.problems: list[Problem] = []

    def problem(self, path: tuple, message: str) -> None:
        self.problems.append(registry_problem(self.doc, path, message))

    def section(self, name: str, kind=dict):
        return self.doc.data.get(name) or kind()

    def read(self) -> tuple[Registry | None, list[Problem]]:
        survey = self.section("survey")
        pool = self.section("pool")
        vocabularies = self.read_vocabularies()
        fields = {
            kind: self.read_fields(self.section(section), (section,), vocabularies) for kind, section in RECORD_KINDS.items()
        }
        for kind, specs in fields.items():
            if "key" not in specs or specs["key"].type != "key":
                self.problem((RECORD_KINDS[kind],), "declare a `key: {type: key, required: true}` field")
            elif not specs["key"].required:  # every record is found, sorted and linked by its key
                self.problem(
                    (RECORD_KINDS[kind], "key"), "a record's key must be given; write `key: {type: key, required: true}`"
                )
            self.check_derivations(specs, (RECORD_KINDS[kind],), vocabularies)
            self.check_parents(specs, (RECORD_KINDS[kind],), vocabularies)
        self.check_dated_by(pool, fields)
        self.check_publication(survey, pool)
        rules = self.read_rules(fields)
        csv = self.read_csv(fields)
        statistics = self.section("statistics")
        gaps = self.section("gaps")
        display = self.read_display(fields["entries"])
        sections = {name: self.section(name) for name in self.features}
        if self.problems:
            return None, self.problems
        registry = Registry(
            self.root, self.doc, survey, pool, vocabularies, fields, rules, csv, statistics, gaps, display, sections
        )
        return registry, []

    def check_dated_by(self, pool: dict, fields: dict) -> None:
        """pool.dated_by names a date field of each kind it dates."""
        for kind, name in (pool.get("dated_by") or {}).items():
            spec = fields[kind].get(name)
            if spec is None or spec.type != "date":
                dates = [other for other, found in fields[kind].items() if found.type == "date"]
                hint = f"name one of {', '.join(dates)}" if dates else f"declare a date field under {RECORD_KINDS[kind]}"
                self.problem(("pool", "dated_by", kind), f"'{name}' is not a date field of the {kind}; {hint}")

    def check_publication(self, survey: dict, pool: dict) -> None:
        """survey.publication.date is a real day, not in the future, and the pool can be
        dated: the published claims count the pool as it stood that day."""
        body = survey.get("publication")
        if not isinstance(body, dict):
            return
        path = ("survey", "publication", "date")
        day = calendar_day(body["date"])  # the schema has its pattern, YYYY-MM-DD, not its calendar
        if day is None:
            self.problem(path, f"'{body['date']}' {NOT_A_REAL_DATE}")
        elif day > dt.date.today():
            self.problem(path, f"{day} is in the future; give the day the survey was published")
        if not pool.get("dated_by"):
            self.problem(
                ("survey", "publication"),
                "the published claims count the pool as it stood on this date, so pool.dated_by "
                "must name each kind's date field, e.g. `dated_by: {entries: date_added, exclusions: date_screened}`",
            )

    def read_vocabularies(self) -> dict[str, Vocabulary]:
        vocabularies = {}
        for name, body in self.section("vocabularies").items():
            path = ("vocabularies", name)
            values, seen = [], set()
            for index, item in enumerate(body["values"]):
                value_id = item["id"]
                if value_id in seen:
                    self.problem(
                        path + ("values", index, "id"), f"duplicate id '{value_id}' in vocabulary '{name}'; ids must be unique"
                    )
                    continue
                seen.add(value_id)
                extra = {k: v for k, v in item.items() if k not in ("id", "label", "description")}
                values.append(Value(value_id, str(item.get("label") or value_id), str(item.get("description") or ""), extra))
            vocabularies[name] = Vocabulary(name, str(body.get("label") or name), str(body.get("description") or ""), values)
        return vocabularies

    def read_fields(self, section: dict, path: tuple, vocabularies: dict) -> dict[str, FieldSpec]:
        specs = {}
        for name, body in section.items():
            spec_path = path + (name,)
            kind = body["type"]
            spec = FieldSpec(name, kind, **{k: v for k, v in body.items() if k not in ("type", "fields")})
            for setting in ("vocabulary", "keys"):
                vocab = getattr(spec, setting)
                if vocab is not None and vocab not in vocabularies:
                    self.problem(spec_path + (setting,), f"no vocabulary named '{vocab}'; declare it under vocabularies")
            if kind in ("choice", "choice_list", "choice_map") and spec.vocabulary is None:
                self.problem(spec_path, f"a {kind} field needs `vocabulary:`")
            if kind == "choice_map" and spec.keys is None:
                self.problem(spec_path, "a choice_map field needs `keys:` naming the vocabulary of its keys")
            if "identifies" in body and kind not in ("url", "url_list", "identifier"):
                self.problem(
                    spec_path + ("identifies",),
                    f"only a url, url_list or identifier field can tell papers apart, "
                    f"and '{name}' is a {kind}; remove `identifies`",
                )
            if kind == "identifier" and spec.scheme is None:
                self.problem(spec_path, f"an identifier field needs `scheme:`, one of {', '.join(sorted(IDENTIFIER_SCHEMES))}")
            if kind == "mapping":
                spec.fields = self.read_fields(body.get("fields") or {}, spec_path + ("fields",), vocabularies)
                if any(inner.type == "history" for inner in spec.fields.values()):
                    self.problem(
                        spec_path,
                        "a history field lists a whole record's changes, so it sits among the record's own fields, not in a mapping",
                    )
            specs[name] = spec
        for name, spec in specs.items():
            self.check_evidence(spec, specs, path + (name,))
        histories = [name for name, spec in specs.items() if spec.type == "history"]
        if len(histories) > 1:
            self.problem(
                path + (histories[1],), f"a record has one history, and '{histories[0]}' is already it; remove this field"
            )
        return specs

    def check_evidence(self, spec: FieldSpec, specs: dict, path: tuple) -> None:
        """An evidence field names the fields it is evidence of; only an evidence field has `of`."""
        if spec.type != "evidence":
            if spec.of is not None:
                self.problem(
                    path + ("of",), "only an evidence field is evidence of other fields; remove `of` or make the type evidence"
                )
            return
        if not spec.targets:
            self.problem(path, "an evidence field needs `of:` naming the field (or fields) it is the evidence of")
        for target in spec.targets:
            if target not in specs or specs[target].type == "evidence":
                self.problem(
                    path + ("of",),
                    f"'{target}' is not a field of the record this evidence could support; "
                    + suggest(target, [n for n, s in specs.items() if s.type != "evidence"], "name one of its fields"),
                )

    def check_derivations(self, specs: dict, path: tuple, vocabularies: dict) -> None:
        for spec in specs.values():
            for other in (spec.derived_from, spec.not_before_field):
                if other is not None and other not in specs:
                    self.problem(path + (spec.name,), f"refers to field '{other}', which is not declared")
            if spec.derived_from in specs:
                source = specs[spec.derived_from]
                vocab = vocabularies.get(source.vocabulary)
                if vocab and any("maps_to" not in value.extra for value in vocab.values):
                    self.problem(
                        path + (spec.name,),
                        f"derived from '{source.name}', so every value of vocabulary '{vocab.name}' needs `maps_to`",
                    )
                elif vocab and spec.vocabulary in vocabularies:
                    self.check_maps_to(vocab, vocabularies[spec.vocabulary])

    def check_parents(self, specs: dict, path: tuple, vocabularies: dict) -> None:
        """A field one level down a taxonomy names a choice field as its parent_field, and
        each value of its vocabulary names a parent among that field's values."""
        levels = ("choice", "choice_list")
        for spec in specs.values():
            if spec.parent_field is None:
                continue
            upper = specs.get(spec.parent_field)
            if upper is None or upper.type not in levels or spec.type not in levels or upper is spec:
                choices = [name for name, other in specs.items() if other.type in levels and other is not spec]
                self.problem(
                    path + (spec.name, "parent_field"),
                    f"'{spec.parent_field}' is not another choice or choice_list field of the record; "
                    + (
                        suggest(spec.parent_field, choices, f"name one of {', '.join(choices)}")
                        if spec.type in levels
                        else f"only a choice or choice_list field has a parent field, and '{spec.name}' is a {spec.type}"
                    ),
                )
                continue
            cycle = _levels_cycle(specs, spec.name)
            if cycle:
                if spec.name == next(name for name in specs if name in cycle):  # said once, at the cycle's first field
                    self.problem(
                        path + (spec.name, "parent_field"),
                        f"the levels go round: {' -> '.join([*cycle, cycle[0]])}; a taxonomy's levels go one way, "
                        "so remove parent_field from the top level",
                    )
                continue
            lower, above = vocabularies.get(spec.vocabulary), vocabularies.get(upper.vocabulary)
            if lower is None or above is None:
                continue  # the unknown vocabulary is reported on its own
            for index, value in enumerate(lower.values):
                parent = value.extra.get("parent")
                if above.get(parent) is not None:
                    continue
                where = ("vocabularies", lower.name, "values", index)
                fix = f"give it `parent:` one of {', '.join(above.ids)}"
                if parent is None:
                    self.problem(
                        where,
                        f"value '{value.id}' names no `parent`, which field '{spec.name}' needs (its parent_field "
                        f"is '{upper.name}'); {fix}",
                    )
                else:
                    self.problem(
                        where + ("parent",),
                        f"'{parent}', the parent of value '{value.id}', is not a value of "
                        f"vocabulary '{above.name}' (field '{spec.name}' has parent_field "
                        f"'{upper.name}'); " + suggest(str(parent), above.ids, fix),
                    )

    def check_maps_to(self, source: Vocabulary, target: Vocabulary) -> None:
        """Each value's maps_to must be a value of the derived field's vocabulary (or null)."""
        for index, value in enumerate(source.values):
            maps_to = value.extra["maps_to"]
            if maps_to is not None and target.get(maps_to) is None:
                self.problem(
                    ("vocabularies", source.name, "values", index, "maps_to"),
                    f"'{maps_to}' is not a value of vocabulary '{target.name}'; "
                    + suggest(maps_to, target.ids, f"use one of {', '.join(target.ids)}, or null"),
                )

    def read_rules(self, fields: dict) -> list[Rule]:
        rules = []
        for index, body in enumerate(self.section("rules", list)):
            path = ("rules", index)
            kind = body.get("applies_to", "entries")
            rule = Rule(
                id=body["id"],
                applies_to=kind,
                when_field=body["when"]["field"],
                when_in=ValueSet(body["when"]["in"]),
                forbid_field=body["forbid"]["field"],
                forbid_in=ValueSet(body["forbid"]["in"]),
                problem=body["problem"],
                fix=body["fix"],
                line=self.doc.line(*path),
            )
            for part, field_path in (("when", rule.when_field), ("forbid", rule.forbid_field)):
                if resolve_spec(fields[kind], field_path) is None:
                    hint = suggest(field_path, fields[kind], f"use a field declared under {RECORD_KINDS[kind]}")
                    self.problem(path + (part, "field"), f"rule '{rule.id}' names unknown field '{field_path}'; {hint}")
            rules.append(rule)
        return rules

    def read_display(self, specs: dict[str, FieldSpec]) -> dict:
        display = self.section("display")
        group_by = display.get("group_by")
        if group_by is not None and (group_by not in specs or specs[group_by].type != "choice"):
            self.problem(
                ("display", "group_by"), f"'{group_by}' is not a choice field of the entries; group by one, e.g. category"
            )
        for index, name in enumerate(display.get("tags", [])):
            if name not in specs or specs[name].type not in ("choice", "choice_list", "choice_map"):
                self.problem(
                    ("display", "tags", index), f"'{name}' is not a choice field of the entries; tags show choice fields"
                )
        return display

    def read_csv(self, fields: dict) -> dict:
        layouts = {}
        for kind, body in self.section("csv").items():
            layouts[kind] = {}
            for part in ("source_columns", "extra_columns"):
                columns = []
                for index, item in enumerate(body.get(part) or []):
                    path = ("csv", kind, part, index)
                    column = CsvColumn(item["column"], item["field"], item.get("convert"))
                    if column.field not in fields[kind]:
                        self.problem(path, f"column '{column.column}' maps to unknown field '{column.field}'")
                    if column.convert is not None and column.convert not in CONVERTERS:
                        self.problem(path, f"unknown convert '{column.convert}'; use one of {', '.join(sorted(CONVERTERS))}")
                    columns.append(column)
                layouts[kind][part] = columns
        return layouts


def _levels_cycle(specs: dict, start: str) -> list[str]:
    """The fields of a cycle of parent_field that `start` is on (each field's parent_field
    leading back to it), else []."""
    chain, name = [], start
    while name in specs and name not in chain:
        chain.append(name)
        name = specs[name].parent_field
    return chain if name == start else []
