"""A small filter language over a Frame's columns, for claims and gap tables.

    credit_unit = message and credit_strict = yes
    reward_families in [R6, R7] or not (year < 2024)
    subdecisions.trained = O5
    reward_family = null

`=` and `!=` compare a value; on a multi-valued column they ask whether the value is
among the record's values. `<`, `<=`, `>`, `>=` compare numbers. `in [a, b]` is any of.
Values are bare words or quoted strings; `null` is a missing value. Nothing is ever
evaluated as code: a query is tokenised, parsed into a tree of conditions, and each
condition becomes a pandas mask.
"""

from __future__ import annotations

import difflib
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from .frame import Frame

TOKEN_RE = re.compile(
    r"""\s*(?:
        (?P<string>"[^"]*"|'[^']*')
      | (?P<op><=|>=|!=|=|<|>)
      | (?P<punct>[()\[\],])
      | (?P<word>[A-Za-z0-9_.\-/:+]+)
      | (?P<bad>\S)
    )""",
    re.VERBOSE,
)
KEYWORDS = {"and", "or", "not", "in", "null"}
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}

Mask = Callable[[Frame], pd.Series]


class QueryError(Exception):
    """A query that cannot be parsed or names what does not exist; the message says how to fix it."""


@dataclass
class Token:
    kind: str  # string, op, punct, word, end
    text: str
    position: int


@dataclass
class Query:
    text: str
    mask: Mask

    def keys(self, frame: Frame) -> list[str]:
        """The keys of the records the query selects, in key order."""
        return sorted(frame.keys[self.mask(frame).to_numpy(dtype=bool)])


def parse(text: str, frame: Frame) -> Query:
    """Parse `text` against a frame's columns and vocabularies; an empty query selects all."""
    if text is None or not str(text).strip():
        return Query("", lambda f: pd.Series(True, index=f.keys))
    parser = _Parser(str(text), frame)
    return Query(str(text), parser.parse())


def _tokenise(text: str) -> list[Token]:
    tokens = []
    for match in TOKEN_RE.finditer(text):
        kind = match.lastgroup
        if kind is None:
            continue
        value = match.group(kind)
        if kind == "bad":
            raise QueryError(f"unexpected character {value!r} at position {match.start(kind) + 1}; "
                             "a query is conditions like `field = value` joined by and / or / not")
        if kind == "string":
            value = value[1:-1]
        tokens.append(Token(kind, value, match.start(kind) + 1))
    tokens.append(Token("end", "", len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, text: str, frame: Frame):
        self.tokens = _tokenise(text)
        self.index = 0
        self.frame = frame

    def parse(self) -> Mask:
        mask = self.disjunction()
        token = self.peek()
        if token.kind != "end":
            raise QueryError(f"unexpected {token.text!r} at position {token.position}; join conditions with and / or")
        return mask

    def peek(self) -> Token:
        return self.tokens[self.index]

    def take(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def accept_word(self, word: str) -> bool:
        token = self.peek()
        if token.kind == "word" and token.text.lower() == word:
            self.index += 1
            return True
        return False

    def expect(self, text: str, what: str) -> None:
        token = self.take()
        if token.text != text:
            found = "the end of the query" if token.kind == "end" else repr(token.text)
            raise QueryError(f"expected {what} at position {token.position}, found {found}")

    def disjunction(self) -> Mask:
        parts = [self.conjunction()]
        while self.accept_word("or"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else lambda f: _reduce(operator.or_, parts, f)

    def conjunction(self) -> Mask:
        parts = [self.negation()]
        while self.accept_word("and"):
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else lambda f: _reduce(operator.and_, parts, f)

    def negation(self) -> Mask:
        if self.accept_word("not"):
            inner = self.negation()
            return lambda f: ~inner(f)
        if self.peek().text == "(" and self.peek().kind == "punct":
            self.take()
            inner = self.disjunction()
            self.expect(")", "')'")
            return inner
        return self.condition()

    def condition(self) -> Mask:
        token = self.take()
        if token.kind != "word" or token.text.lower() in KEYWORDS:
            found = "the end of the query" if token.kind == "end" else repr(token.text)
            raise QueryError(f"expected a field name at position {token.position}, found {found}")
        name = self.column_name(token.text)
        if self.accept_word("in"):
            self.expect("[", "'[' after in")
            values = [self.value(name)]
            while self.peek().text == ",":
                self.take()
                values.append(self.value(name))
            self.expect("]", "']' closing the list")
            return lambda f: _equals(f, name, values)
        op = self.take()
        if op.kind != "op":
            found = "the end of the query" if op.kind == "end" else repr(op.text)
            raise QueryError(f"expected =, !=, <, <=, >, >= or in after '{name}' at position {op.position}, found {found}")
        value = self.value(name, numeric=op.text in COMPARE)
        if op.text == "=":
            return lambda f: _equals(f, name, [value])
        if op.text == "!=":
            return lambda f: ~_equals(f, name, [value])
        return lambda f: _compare(f, name, COMPARE[op.text], value)

    def column_name(self, name: str) -> str:
        if name in self.frame.columns:
            return name
        close = difflib.get_close_matches(name, list(self.frame.columns), n=1)
        hint = f"did you mean '{close[0]}'?" if close else "use a field of the records (as in the export's CSV columns)"
        raise QueryError(f"unknown field '{name}'; {hint}")

    def value(self, name: str, numeric: bool = False):
        token = self.take()
        if token.kind not in ("word", "string"):
            found = "the end of the query" if token.kind == "end" else repr(token.text)
            raise QueryError(f"expected a value for '{name}' at position {token.position}, found {found}")
        if token.kind == "word" and token.text.lower() == "null" and not numeric:
            return None
        column = self.frame.columns[name]
        if numeric or column.numeric:
            try:
                return int(token.text)
            except ValueError:
                if numeric:
                    raise QueryError(f"'{name}' is compared with {token.text!r}, which is not a number") from None
        if column.vocabulary is not None and token.text not in column.vocabulary:
            close = difflib.get_close_matches(token.text, column.vocabulary, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"use one of {', '.join(column.vocabulary)}"
            raise QueryError(f"'{token.text}' is not a value of '{name}'; {hint}")
        return token.text


def _reduce(combine, parts: list[Mask], frame: Frame) -> pd.Series:
    result = parts[0](frame)
    for part in parts[1:]:
        result = combine(result, part(frame))
    return result


def _equals(frame: Frame, name: str, values: list) -> pd.Series:
    series = frame.table[name]
    wanted = [v for v in values if v is not None]
    if frame.columns[name].multi:
        long = frame.long(name)
        mask = frame.keys.isin(long.loc[long["value"].isin(wanted), "key"])
        if None in values:
            mask |= (series.map(len) == 0).to_numpy(dtype=bool)
        return pd.Series(mask, index=frame.keys)
    mask = series.isin(wanted)
    if None in values:
        mask |= series.isna()
    return mask.astype(bool)


def _compare(frame: Frame, name: str, compare, value: int) -> pd.Series:
    numbers = pd.to_numeric(frame.table[name], errors="coerce")
    return compare(numbers, value).fillna(False).astype(bool)
