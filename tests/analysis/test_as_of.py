"""The pool as it stood on a day (issue 18): `stats`, `gaps` and `claims --as-of DATE`
count the records the registry's pool.dated_by dates on or before DATE."""

from __future__ import annotations

import json

import pytest

from ..conftest import edit


def _totals(run, pool, *args):
    return json.loads(run("stats", "--format", "json", *args, cwd=pool).output)["totals"]


@pytest.mark.slow
def test_as_of_counts_the_pool_as_it_stood_that_day(run, pool_copy):
    assert _totals(run, pool_copy, "--as-of", "2026-04-28") == {"retained": 73, "excluded": 32, "audited": 105}
    assert (
        _totals(run, pool_copy, "--as-of", "2026-05-04")
        == _totals(run, pool_copy)
        == {"retained": 84, "excluded": 32, "audited": 116}
    )
    assert _totals(run, pool_copy, "--as-of", "2026-04-25") == {"retained": 0, "excluded": 0, "audited": 0}


def test_claims_and_gaps_as_of_a_day_leave_out_what_came_later(run, pool_copy):
    result = run("claims", "--as-of", "2026-04-28", "--format", "json", cwd=pool_copy)
    retained = next(o for o in json.loads(result.output) if o["id"] == "retained-total")
    # a published claim is checked at the publication, and counted as of the day beside it
    assert (retained["value"], retained["now"]["value"], retained["holds"]) == (84, 73, True)
    gaps = json.loads(run("gaps", "--format", "json", "--as-of", "2026-04-28", cwd=pool_copy).output)
    keys = {key for table in gaps["tables"] for row in table["cells"].values() for cell in row.values() for key in cell["keys"]}
    assert "wideseek-r1-2026" not in keys and keys


def test_as_of_needs_the_registry_to_say_which_dates(run, pool_copy):
    edit(pool_copy / "registry.yaml", "  dated_by: {entries: date_added, exclusions: date_screened}\n", "")
    edit(pool_copy / "registry.yaml", "  publication: {", "  unpublished: {")
    (pool_copy / "claims.yaml").write_text("claims: []\n", encoding="utf-8")  # published claims need the publication
    result = run("stats", "--as-of", "2026-04-28", cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output == (
        "Error: registry.yaml: pool.dated_by names no date field of the entries and exclusions, so the "
        "pool as of a date is not known; add e.g. `dated_by: {entries: date_added, exclusions: "
        "date_screened}`\n"
    )


def test_dated_by_must_name_a_date_field(run, pool_copy):
    edit(pool_copy / "registry.yaml", "dated_by: {entries: date_added,", "dated_by: {entries: title,")
    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 1
    assert (
        "registry.yaml:31: pool.dated_by.entries: 'title' is not a date field of the entries; name one of date_added"
        in result.output
    )
