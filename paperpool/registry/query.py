"""A small filter language over a pool's columns, for claims and gap tables.

    credit_unit = message and credit_strict = yes
    reward_families in [R6, R7] or not (year < 2024)
    subdecisions.trained = O5
    reward_family = null

`=` and `!=` compare a value; on a multi-valued column they ask whether the value is
among the record's values. `<`, `<=`, `>`, `>=` compare numbers. `in [a, b]` is any of.
Values are bare words or quoted strings; `null` is a missing value. Nothing is ever
evaluated as code: a query is tokenised and parsed into a tree of conditions, checked
against the columns and their vocabularies; paperpool.analysis.frame turns the tree into a
pandas mask. Parsing needs the columns only, not the records (nor pandas).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from paperpool.files.problems import suggest

from .columns import Column

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
MAX_NESTING = 50  # parentheses and `not`s inside each other; a real query needs a few
ORDER = {"<", "<=", ">", ">="}
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\Z")


class QueryError(Exception):
    """A query that cannot be parsed or names what does not exist; the message says how to fix it."""


@dataclass
class Token:
    kind: str  # string, op, punct, word, end
    text: str
    position: int


@dataclass(frozen=True)
class Condition:
    name: str  # a column
    op: str  # "=" (any of `values`), "!=", or an order: <, <=, >, >=
    values: tuple


@dataclass(frozen=True)
class Combine:
    op: str  # "and" or "or"
    parts: tuple


@dataclass(frozen=True)
class Negate:
    part: object


Node = Condition | Combine | Negate | None  # None: every record


@dataclass
class Query:
    text: str
    tree: Node


def parse(text: str, columns: dict[str, Column]) -> Query:
    """Parse `text` against the columns and their vocabularies; an empty query selects all."""
    if text is None or not str(text).strip():
        return Query("", None)
    return Query(str(text), _Parser(str(text), columns).parse())


def _tokenise(text: str) -> list[Token]:
    tokens = []
    for match in TOKEN_RE.finditer(text):
        kind = match.lastgroup
        if kind is None:
            continue
        value = match.group(kind)
        if kind == "bad":
            raise QueryError(
                f"unexpected character {value!r} at position {match.start(kind) + 1}; "
                "a query is conditions like `field = value` joined by and / or / not"
            )
        if kind == "string":
            value = value[1:-1]
        tokens.append(Token(kind, value, match.start(kind) + 1))
    tokens.append(Token("end", "", len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, text: str, columns: dict[str, Column]):
        self.tokens = _tokenise(text)
        self.index = 0
        self.columns = columns
        self.depth = 0

    def parse(self) -> Node:
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

    def disjunction(self) -> Node:
        parts = [self.conjunction()]
        while self.accept_word("or"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else Combine("or", tuple(parts))

    def conjunction(self) -> Node:
        parts = [self.negation()]
        while self.accept_word("and"):
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else Combine("and", tuple(parts))

    def negation(self) -> Node:
        token = self.peek()
        if token.kind == "word" and token.text.lower() == "not" or token.kind == "punct" and token.text == "(":
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise QueryError(
                    f"the query nests more than {MAX_NESTING} levels of parentheses and not (at position "
                    f"{token.position}); simplify it"
                )
            try:
                return self.nested()
            finally:
                self.depth -= 1
        return self.condition()

    def nested(self) -> Node:
        if self.accept_word("not"):
            return Negate(self.negation())
        self.take()  # (
        inner = self.disjunction()
        self.expect(")", "')'")
        return inner

    def condition(self) -> Condition:
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
            return Condition(name, "=", tuple(values))
        op = self.take()
        if op.kind != "op":
            found = "the end of the query" if op.kind == "end" else repr(op.text)
            raise QueryError(f"expected =, !=, <, <=, >, >= or in after '{name}' at position {op.position}, found {found}")
        return Condition(name, op.text, (self.value(name, numeric=op.text in ORDER),))

    def column_name(self, name: str) -> str:
        if name in self.columns:
            return name
        hint = suggest(name, self.columns, "use a field of the records (as in the export's CSV columns)")
        raise QueryError(f"unknown field '{name}'; {hint}")

    def value(self, name: str, numeric: bool = False):
        token = self.take()
        if token.kind not in ("word", "string"):
            found = "the end of the query" if token.kind == "end" else repr(token.text)
            raise QueryError(f"expected a value for '{name}' at position {token.position}, found {found}")
        if token.kind == "word" and token.text.lower() == "null" and not numeric:
            return None
        column = self.columns[name]
        if numeric and column.kind not in ("number", "date"):
            raise QueryError(f"'{name}' cannot be compared with <, <=, > or >=; those compare numbers and dates")
        if column.kind == "number":
            try:
                return int(token.text)
            except ValueError:
                raise QueryError(f"'{name}' is compared with {token.text!r}, which is not a whole number") from None
        if column.kind == "date" and not DATE_RE.match(token.text):
            raise QueryError(f"'{name}' is compared with {token.text!r}; write a date as YYYY-MM-DD, e.g. 2026-04-26")
        if column.vocabulary is not None and token.text not in column.vocabulary:
            hint = suggest(token.text, column.vocabulary, f"use one of {', '.join(column.vocabulary)}")
            raise QueryError(f"'{token.text}' is not a value of '{name}'; {hint}")
        return token.text
