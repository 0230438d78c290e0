"""The pool as pandas tables, one per record kind: what statistics, gaps and claims read.

Every column is named as in the export's CSV. Besides the declared fields there are
columns derived from them, all named in the registry's `statistics` section or by rule:
- a choice_map field F (sub-decision -> trained/designed) gives F, the keys it has
  (the sub-decisions an entry touches), and F.VALUE for each value of its value
  vocabulary (F.trained: the sub-decisions it trains);
- a mapping field's choice fields appear dotted (second_reading.agreement);
- `statistics.combined` joins fields into one multi-valued column (the primary and
  further reward families).
Single-valued columns hold a value or None; multi-valued ones hold a tuple.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .pool import Pool
from .problems import Problem
from .registry import REGISTRY_FILE, FieldSpec, Registry, lookup

NONE = "(none)"  # how a missing value is counted
SINGLE = {"key", "text", "bool", "integer", "date", "url", "identifier", "choice"}
MULTI = {"text_list", "url_list", "key_list", "choice_list"}


@dataclass
class Column:
    name: str
    label: str
    multi: bool
    vocabulary: list[str] | None = None  # the possible values in display order; None: open
    numeric: bool = False
    map_field: str | None = None  # a choice_map column reads this field's keys
    map_mode: str | None = None  # ... only the keys whose value is this
    parts: list[str] = field(default_factory=list)  # a combined column joins these columns


class Frame:
    """One record kind as a DataFrame indexed by key, plus what each column may hold."""

    def __init__(self, kind: str, table: pd.DataFrame, columns: dict[str, Column]):
        self.kind = kind
        self.table = table
        self.columns = columns
        self._long: dict[str, pd.DataFrame] = {}

    def __len__(self) -> int:
        return len(self.table)

    @property
    def keys(self) -> pd.Index:
        return self.table.index

    def long(self, name: str) -> pd.DataFrame:
        """Columns `key` and `value`: one row per value (a missing value counts as NONE)."""
        if name not in self._long:
            series = self.table[name]
            if self.columns[name].multi:
                series = series.explode().dropna()
            else:
                series = series.fillna(NONE) if series.dtype == object else series
            self._long[name] = pd.DataFrame({"key": series.index, "value": series.to_numpy()})
        return self._long[name]

    def values_in_order(self, name: str, observed) -> list:
        """A column's values for display: its vocabulary (zeros included), then what else occurs."""
        column = self.columns[name]
        seen = list(dict.fromkeys(observed))
        if column.vocabulary is None:
            return sorted(seen, key=lambda v: (v == NONE, v))
        return column.vocabulary + [v for v in seen if v not in column.vocabulary]


def build_frames(pool: Pool) -> dict[str, Frame]:
    return {kind: build_frame(pool, kind) for kind in pool.records}


def build_frame(pool: Pool, kind: str) -> Frame:
    columns = columns_for(pool.registry, kind)
    rows = []
    for record in pool.records[kind]:
        row = {name: _read(record.data, name, column) for name, column in columns.items() if not column.parts}
        for name, column in columns.items():
            if column.parts:
                row[name] = tuple(dict.fromkeys(v for part in column.parts for v in _as_tuple(row[part])))
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(columns), dtype=object)
    table.index = pd.Index(table["key"] if rows else [], name="key", dtype=object)
    return Frame(kind, table, columns)


def empty_frame(registry: Registry, kind: str) -> Frame:
    """A frame with a kind's columns and no records: enough to check a query."""
    columns = columns_for(registry, kind)
    return Frame(kind, pd.DataFrame(columns=list(columns), dtype=object), columns)


def columns_for(registry: Registry, kind: str) -> dict[str, Column]:
    """Every column of a kind's frame, declared fields first, then the combined ones."""
    columns = _columns(registry, registry.fields[kind])
    for name, body in _combined_settings(registry, kind).items():
        parts = [part for part in body.get("fields") or [] if part in columns]
        vocabulary = list(dict.fromkeys(v for part in parts for v in (columns[part].vocabulary or [])))
        columns[name] = Column(name, str(body.get("label") or name), True, vocabulary or None, parts=parts)
    return columns


def check_combined(registry: Registry) -> list[Problem]:
    """Problems in `statistics.combined`: each joins declared choice fields of one kind."""
    problems = []
    for name, body in (registry.statistics.get("combined") or {}).items():
        path = ("statistics", "combined", name)
        if not isinstance(body, dict) or not isinstance(body.get("fields"), list) or not body["fields"]:
            problems.append(_registry_problem(registry, path, "give `fields: [FIELD, ...]`, the fields whose values it joins"))
            continue
        kind = body.get("applies_to", "entries")
        if kind not in registry.fields:
            problems.append(_registry_problem(registry, path + ("applies_to",), "applies_to must be entries or exclusions"))
            continue
        declared = _columns(registry, registry.fields[kind])
        if name in declared:
            problems.append(_registry_problem(registry, path, f"'{name}' is already a field; choose another name"))
        for part in body["fields"]:
            if part not in declared or declared[part].vocabulary is None:
                problems.append(_registry_problem(
                    registry, path + ("fields",), f"'{part}' is not a choice field of the {kind}; join fields that have a vocabulary"))
    return problems


def _combined_settings(registry: Registry, kind: str) -> dict:
    combined = registry.statistics.get("combined") or {}
    return {name: body for name, body in combined.items()
            if isinstance(body, dict) and body.get("applies_to", "entries") == kind}


def _registry_problem(registry: Registry, path: tuple, message: str) -> Problem:
    return Problem(REGISTRY_FILE, registry.document.line(*path), ".".join(map(str, path)), message)


def _columns(registry: Registry, specs: dict[str, FieldSpec], prefix: str = "") -> dict[str, Column]:
    columns = {}
    for spec in specs.values():
        name = prefix + spec.name
        vocabulary = registry.vocabularies[spec.vocabulary].ids if spec.vocabulary else None
        if spec.type == "mapping":
            columns.update(_columns(registry, spec.fields, name + "."))
        elif spec.type == "choice_map":
            keys = registry.vocabularies[spec.keys].ids
            columns[name] = Column(name, spec.title, True, keys, map_field=name)
            for mode in vocabulary:
                label = registry.vocabularies[spec.vocabulary].get(mode).label
                columns[f"{name}.{mode}"] = Column(f"{name}.{mode}", f"{spec.title}: {label}", True, keys, map_field=name, map_mode=mode)
        elif spec.type in SINGLE | MULTI:
            columns[name] = Column(name, spec.title, spec.type in MULTI, vocabulary, spec.type == "integer")
    return columns


def _read(data: dict, name: str, column: Column):
    if column.map_field:
        chosen = lookup(data, column.map_field) or {}
        return tuple(k for k, v in chosen.items() if column.map_mode in (None, v))
    value = lookup(data, name)
    return _as_tuple(value) if column.multi else value


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)
