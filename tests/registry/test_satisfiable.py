"""Whether a claim's query could select any record (registry/satisfiable.py): judged when
its `and`s stay small, and left unjudged, at once, when they would not."""

from __future__ import annotations

import pytest

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
