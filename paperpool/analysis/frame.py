"""The pool as pandas tables, one per record kind: what statistics, gaps and claims read.

A frame has one row per record, indexed by key, and one column per column of
paperpool.columns. Single-valued columns hold a value or None; multi-valued ones a tuple.
"""

from __future__ import annotations

import functools
import operator

import pandas as pd

from paperpool.pool.reading import Pool
from paperpool.registry import lookup
from paperpool.registry.columns import NONE, Column, assessed, columns_for
from paperpool.registry.query import Combine, Negate, Node

ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


class Frame:
    """One record kind as a DataFrame indexed by key, plus what each column may hold."""

    def __init__(self, kind: str, table: pd.DataFrame, columns: dict[str, Column], judged: dict[str, pd.Series] | None = None):
        self.kind = kind
        self.table = table
        self.columns = columns
        self.judged = judged or {}  # per column that can leave a record unassessed: whether each is assessed
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
                series = series.explode()  # a record with no values keeps one row, NaN
            if not pd.api.types.is_numeric_dtype(series):  # pandas may infer str or object
                series = series.fillna(NONE)
            self._long[name] = pd.DataFrame({"key": series.index, "value": series.to_numpy()})
        return self._long[name]

    def select(self, tree: Node) -> list[str]:
        """The keys of the records a parsed query selects, in key order."""
        if tree is None:
            return sorted(self.keys)
        return sorted(self.keys[self.mask(tree).to_numpy(dtype=bool)])

    def mask(self, node: Node) -> pd.Series:
        if isinstance(node, Combine):
            masks = [self.mask(part) for part in node.parts]
            return functools.reduce(operator.and_ if node.op == "and" else operator.or_, masks)
        if isinstance(node, Negate):
            return ~self.mask(node.part)
        if node.op in ORDER:
            column, value = self.table[node.name], node.values[0]
            if self.columns[node.name].kind == "number":
                return ORDER[node.op](pd.to_numeric(column, errors="coerce"), value).fillna(False).astype(bool)
            # ISO dates order as text
            return column.map(lambda v: v is not None and ORDER[node.op](v, value)).astype(bool)
        equal = self._equals(node.name, node.values)
        return ~equal if node.op == "!=" else equal

    def _equals(self, name: str, values: tuple) -> pd.Series:
        series = self.table[name]
        wanted = [v for v in values if v is not None]
        if self.columns[name].multi:
            long = self.long(name)
            mask = pd.Series(self.keys.isin(long.loc[long["value"].isin(wanted), "key"]), index=self.keys)
            return mask | (series.map(len) == 0) if None in values else mask
        mask = series.isin(wanted)
        return (mask | series.isna() if None in values else mask).astype(bool)

    def assessed(self, names) -> pd.Series:
        """Whether each record is assessed on every one of the columns."""
        mask = pd.Series(True, index=self.keys, dtype=bool)
        for name in names:
            if name in self.judged:
                mask &= self.judged[name]
        return mask

    def possible(self, node: Node) -> pd.Series:
        """The records a query might select once their unassessed columns are judged: it
        holds on what they were assessed on, and what it reads beyond that is open."""
        if node is None:
            return pd.Series(True, index=self.keys, dtype=bool)
        if isinstance(node, Combine):
            masks = [self.possible(part) for part in node.parts]
            return functools.reduce(operator.and_ if node.op == "and" else operator.or_, masks)
        if isinstance(node, Negate):
            return ~self.certain(node.part)
        return self.mask(node) | ~self.assessed([node.name])

    def certain(self, node: Node) -> pd.Series:
        """The records a query selects whatever their unassessed columns turn out to hold."""
        if node is None:
            return pd.Series(True, index=self.keys, dtype=bool)
        if isinstance(node, Combine):
            masks = [self.certain(part) for part in node.parts]
            return functools.reduce(operator.and_ if node.op == "and" else operator.or_, masks)
        if isinstance(node, Negate):
            return ~self.possible(node.part)
        return self.mask(node) & self.assessed([node.name])

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
    judged = {
        name: pd.Series([assessed(record.data, column, columns) for record in pool.records[kind]], index=table.index, dtype=bool)
        for name, column in columns.items()
        if column.can_be_unassessed
    }
    return Frame(kind, table, columns, judged)


def _read(data: dict, name: str, column: Column):
    if column.map_field:
        chosen = lookup(data, column.map_field) or {}
        return tuple(k for k, v in chosen.items() if column.map_mode in (None, v))
    value = lookup(data, name)
    if column.multi:
        return _as_tuple(value)
    return value if value is None else SHOWN.get(column.kind, _same)(value)


def _same(value):
    return value


# Dates and booleans are held as the text a query writes: 2026-04-26, true, false.
SHOWN = {"date": lambda value: value.isoformat(), "bool": lambda value: "true" if value else "false"}


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)
