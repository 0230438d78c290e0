"""One case per validation rule: tests/cases/validate/<case>/ holds files laid over a
copy of the shipped pool (papers/, exclusions/, registry.yaml), an optional `remove`
file listing paths to delete, and `expected`: the exact output of `paperpool validate`,
whose first line is the expected exit status."""

from __future__ import annotations

import pytest

from ..conftest import CASE_NAMES, CASES, lay_case


@pytest.mark.parametrize("name", CASE_NAMES)
def test_validate_case(name, pool_copy, run, snapshot):
    case = CASES / name
    lay_case(case, pool_copy)
    args = (case / "args").read_text().split() if (case / "args").exists() else []
    before = snapshot(pool_copy)
    result = run("validate", *args, cwd=pool_copy)
    status, _, expected = (case / "expected").read_text().partition("\n")
    assert (result.exit_code, result.output) == (int(status), expected)
    assert snapshot(pool_copy) == before, "validate must not write anything"


def test_there_is_a_case_per_rule():
    assert len(CASE_NAMES) >= 35
