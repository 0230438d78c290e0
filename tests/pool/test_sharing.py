"""Work shared with forked copies: every part done once, results in order, and the parts
of a copy that fails done again by this process."""

from __future__ import annotations

import os

import pytest

from paperpool.pool import sharing

pytestmark = pytest.mark.skipif(not sharing.available(), reason="forked copies are used on Linux with two cores or more")


def test_every_part_is_done_once_and_the_results_come_in_order():
    here = os.getpid()
    results, extra = sharing.share(
        lambda part: [(item * 2, os.getpid() == here) for item in part],
        list(range(1000)),
        7,
        copies=2,
        meanwhile=lambda: "read meanwhile",
    )
    assert [value for value, _ in results] == [item * 2 for item in range(1000)]
    assert extra == "read meanwhile"


def test_the_parts_of_a_copy_that_fails_are_done_here():
    here = os.getpid()

    def work(part):
        if os.getpid() != here:
            raise RuntimeError("a copy fails")  # it exits with status 1, its results unsent
        return [item + 1 for item in part]

    results, _ = sharing.share(work, list(range(500)), 5, copies=1)
    assert results == [item + 1 for item in range(500)]


def test_a_copy_that_exits_at_once_loses_nothing():
    here = os.getpid()

    def work(part):
        if os.getpid() != here:
            os._exit(0)  # no results at all, and a clean exit status
        return list(part)

    assert sharing.share(work, list(range(300)), 3, copies=1)[0] == list(range(300))
