"""Whether any record could ever satisfy a query, from the columns alone.

A claim whose query asks one column for two things it cannot hold at once (`stage =
abstract_screen and stage = full_text_screen`, `year > 2030 and year < 2020`) counts
zero forever: it cannot fail, so it says nothing. The query is spread into its `or` of
`and`s; it can be satisfied when one of those asks each column for something the
column can hold. Only the columns are read, not the records, so the answer does not
change as the pool grows. A query too large to spread is given the benefit of the doubt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .columns import Column
from .query import Combine, Condition, Negate, Node

MAX_TERMS = 64  # `and`s a query may spread into before it is not judged (real claims spread into a few)
MAX_LITERALS = 2_048  # conditions in all those `and`s together (each costs a few microseconds)
Literal = tuple[Condition, bool]  # a condition and whether it must hold (False: must not)


class _TooLarge(Exception):
    pass


def columns_read(tree: Node) -> list[str]:
    """The columns a query reads, each once, in the order they are written."""
    if tree is None:
        return []
    if isinstance(tree, Combine):
        return list(dict.fromkeys(name for part in tree.parts for name in columns_read(part)))
    if isinstance(tree, Negate):
        return columns_read(tree.part)
    return [tree.name]


def satisfiable(tree: Node, columns: dict[str, Column], judged_only: bool = False) -> bool:
    """Whether some record could satisfy the query. With `judged_only`, a value that means
    "not assessed" counts as no value a record can hold (the claim counts assessed records)."""
    try:
        terms = _spread(tree, True)
    except _TooLarge:
        return True
    return any(_term_satisfiable(term, columns, judged_only) for term in terms)


def _spread(node: Node, positive: bool) -> list[list[Literal]]:
    """The query as an `or` of `and`s of literals, negations pushed down to the conditions."""
    if node is None:
        return [[]] if positive else []
    if isinstance(node, Negate):
        return _spread(node.part, not positive)
    if isinstance(node, Condition):
        return [[(node, positive)]]
    parts = [_spread(part, positive) for part in node.parts]
    if (node.op == "or") == positive:  # an or, or a negated and: any part
        return [term for terms in parts for term in terms]
    terms = [[]]
    for options in parts:  # an and, or a negated or: every part
        # sized before it is built: 256 terms times a 90,000-term or took 2 GB, and 256
        # terms each growing by one condition per `and` copied N squared literals
        size = sum(map(len, terms)) * len(options) + len(terms) * sum(map(len, options))
        if len(terms) * len(options) > MAX_TERMS or size > MAX_LITERALS:
            raise _TooLarge
        terms = [term + option for term in terms for option in options]
    return terms


@dataclass
class _Demands:
    """What one `and` asks of one column."""

    allowed: set | None = None  # a single value among these (None: not narrowed)
    excluded: set = field(default_factory=set)
    required_any: list[set] = field(default_factory=list)  # multi-valued: one of each set among its values
    emptiness: set = field(default_factory=set)  # multi-valued: True, it has no value; False, it has some
    low: float = float("-inf")
    high: float = float("inf")


def _term_satisfiable(term: list[Literal], columns: dict[str, Column], judged_only: bool) -> bool:
    demands: dict[str, _Demands] = {}
    for condition, positive in term:
        column = columns[condition.name]
        wants = demands.setdefault(condition.name, _Demands())
        if condition.op not in ("=", "!="):
            _order(wants, condition, positive)
        elif column.multi:
            _multi(wants, condition, positive == (condition.op == "="))
        else:
            values = set(condition.values)
            if positive == (condition.op == "="):
                wants.allowed = values if wants.allowed is None else wants.allowed & values
            else:
                wants.excluded |= values
    return all(_possible(columns[name], wants, judged_only) for name, wants in demands.items())


def _order(wants: _Demands, condition: Condition, positive: bool) -> None:
    value = condition.values[0]
    if not isinstance(value, int):
        return  # dates order as text; not judged
    op = condition.op if positive else {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[condition.op]
    if op in ("<", "<="):
        wants.high = min(wants.high, value - (op == "<"))
    else:
        wants.low = max(wants.low, value + (op == ">"))


def _multi(wants: _Demands, condition: Condition, holds: bool) -> None:
    values = {v for v in condition.values if v is not None}
    if holds:  # one of the values is among the record's, or (null) it has none
        if None in condition.values and not values:
            wants.emptiness.add(True)
        elif None not in condition.values:
            wants.required_any.append(values)
    else:  # none of them is among its values, and (null) it has some
        wants.excluded |= values
        if None in condition.values:
            wants.emptiness.add(False)


def _possible(column: Column, wants: _Demands, judged_only: bool) -> bool:
    unjudged = column.unassessed_values if judged_only else frozenset()
    if column.multi:
        needed = [options - wants.excluded - unjudged for options in wants.required_any]
        if any(not options for options in needed) or len(wants.emptiness) > 1:
            return False
        return not (True in wants.emptiness and (needed or judged_only and column.missing_unassessed))
    if wants.low > wants.high:
        return False
    allowed = wants.allowed
    if allowed is None:
        if column.vocabulary is None:
            return True  # an open column can hold a value not yet excluded
        return _vocabulary_left(column, wants, judged_only)
    allowed = {
        v for v in allowed - wants.excluded - unjudged if v is None or not isinstance(v, int) or wants.low <= v <= wants.high
    }
    if judged_only and column.missing_unassessed:
        allowed.discard(None)
    return bool(allowed)


def _vocabulary_left(column: Column, wants: _Demands, judged_only: bool) -> bool:
    """Whether a value of the column's vocabulary (text, which no range excludes), or no
    value, is left once the term's exclusions are taken out. Counted from the exclusions,
    a few conditions, not by going through the vocabulary: 200 values for each column of
    each of a claim's terms made a claims file of 1 MB take minutes."""
    vocabulary = column.vocabulary_set
    unjudged = column.unassessed_values if judged_only else frozenset()
    left = column.judged_values if judged_only else len(vocabulary)
    left -= sum(1 for value in wants.excluded if value in vocabulary and value not in unjudged)
    if left > 0:
        return True
    return None not in wants.excluded and None not in unjudged and not (judged_only and column.missing_unassessed)
