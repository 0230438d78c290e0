"""The shipped pool's dates are its history (issue 18): each entry's date_added is the
day it first appeared in the source artifact (tests/source/history-facts.csv)."""

from __future__ import annotations

import csv

from paperpool.files.yamlio import load_yaml

from ..conftest import REPO


def test_every_entry_is_dated_the_day_it_first_appeared_in_the_artifact():
    with (REPO / "tests" / "source" / "history-facts.csv").open(encoding="utf-8") as handle:
        facts = {row["key"]: row["first_published"] for row in csv.DictReader(handle)}
    dated = {path.stem: str(load_yaml(path).data["date_added"]) for path in sorted((REPO / "papers").glob("*.yaml"))}
    assert dated == facts
    assert sum(date == "2026-04-28" for date in dated.values()) == 73
