"""Whether a claim's query could select any record (registry/satisfiable.py): judged when
its `and`s stay small, and left unjudged, at once, when they would not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperpool.registry import load_registry
from paperpool.registry.columns import columns_for
from paperpool.registry.query import parse
from paperpool.registry.satisfiable import satisfiable

from ..conftest import TINY


@pytest.fixture(scope="module")
def columns():
    registry, problems = load_registry(TINY)
    assert registry is not None, problems
    return columns_for(registry, "entries")


def test_a_query_no_record_could_satisfy_is_found(columns):
    assert satisfiable(parse("year = 2024 and year = 2025", columns).tree, columns) is False
    assert satisfiable(parse("year = 2024 or year = 2025", columns).tree, columns) is True


@pytest.mark.slow
@pytest.mark.parametrize(
    "query",
    [
        # 256 terms, each growing by a condition per `and`: every step copied them all (8,000 ands: 26 s; 60,000: hours)
        "(" + " or ".join(["year = 1"] * 256) + ") and " + " and ".join(["year = 2"] * 60_000),
        # 256 times 90,000 terms, built whole before their number was looked at (2 GB)
        "(" + " or ".join(["year = 1"] * 256) + ") and (" + " or ".join(["year = 2"] * 90_000) + ")",
    ],
)
def test_a_query_whose_ands_would_spread_too_far_is_left_unjudged(columns, query):
    """Issue 39's fresh review: sized before each product is built, it is not judged
    (taken as satisfiable, as any query too large to judge) instead of taking minutes."""
    assert satisfiable(parse(query, columns).tree, columns) is True


def _by_enumeration(column, excluded: set, judged_only: bool) -> bool:
    """Whether a single-valued vocabulary column can hold a value the term does not
    exclude, found by going through every value (as it was judged before)."""
    unjudged = column.unassessed_values if judged_only else frozenset()
    left = (set(column.vocabulary) | {None}) - excluded - unjudged
    if judged_only and column.missing_unassessed:
        left.discard(None)
    return bool(left)


@given(data=st.data(), judged_only=st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_vocabulary_column_is_judged_from_its_exclusions_as_by_going_through_it(data, judged_only):
    """The count from a term's exclusions (the review's 200-value vocabularies read for each
    column of each term took minutes) agrees with going through every value, whatever the
    values marked not assessed and whatever a missing value means."""
    from paperpool.registry.columns import Column
    from paperpool.registry.satisfiable import _Demands, _possible

    vocabulary = data.draw(st.lists(st.sampled_from("abcdefgh"), min_size=1, unique=True))
    column = Column(
        "c",
        "C",
        False,
        vocabulary=vocabulary,
        unassessed_values=frozenset(data.draw(st.sets(st.sampled_from(vocabulary)))),
        missing_unassessed=data.draw(st.booleans()),
    )
    excluded = data.draw(st.sets(st.sampled_from([*vocabulary, None, "not-a-value"])))
    assert _possible(column, _Demands(excluded=excluded), judged_only) is _by_enumeration(column, excluded, judged_only)


class _Counted(list):
    """A vocabulary that counts how often it is gone through."""

    passes = 0

    def __iter__(self):
        _Counted.passes += 1
        return super().__iter__()


def test_a_column_s_vocabulary_is_gone_through_once_whatever_the_terms(columns):
    """The review's claims: 8 `or`s and 54 exclusions over columns of a 200-value
    vocabulary, each term reading 63 columns (each vocabulary was gone through once per
    column of each term: 850 claims took minutes); now once per column."""
    from paperpool.registry.columns import Column

    values = _Counted(f"v{k}" for k in range(200))
    names = [f"f{k}" for k in range(55)] + [f"a{k}" for k in range(4)] + [f"b{k}" for k in range(4)]
    wide = {name: Column(name, name, False, vocabulary=values) for name in names}
    either = " and ".join(f"(a{k} = v1 or b{k} = v1)" for k in range(4))
    query = f"{either} and " + " and ".join(f"f{k} != v{k}" for k in range(54)) + " and f54 = v1 and f54 = v2"
    _Counted.passes = 0
    assert satisfiable(parse(query, wide).tree, wide) is False  # 16 terms, each judged to the last column
    assert _Counted.passes <= len(names)
