"""A taxonomy of several levels (registry: a field's `parent_field`, each value's
`parent`): a record holding a value holds its parent too, and the registry's levels are
checked before any record. On a copy of examples/rl4lrm, whose topics sit in areas."""

from __future__ import annotations

import shutil

import pytest
import yaml

from ..conftest import REPO, edit

EXAMPLE = REPO / "examples" / "rl4lrm"


@pytest.fixture
def pool(tmp_path):
    root = tmp_path / "rl4lrm"
    shutil.copytree(EXAMPLE, root)
    return root


def _a_record_with_a_topic(root):
    """A record with one area and a topic in it: its file, area and topic."""
    registry = yaml.safe_load((root / "registry.yaml").read_text(encoding="utf-8"))
    parents = {value["id"]: value["parent"] for value in registry["vocabularies"]["topic"]["values"]}
    for path in sorted((root / "papers").glob("*.yaml")):
        record = yaml.safe_load(path.read_text(encoding="utf-8"))
        if len(record["area"]) == 1 and record.get("topic") and parents[record["topic"][0]] == record["area"][0]:
            return path, record["area"][0], record["topic"][0]
    raise AssertionError("the example has no record with one area and a topic in it")


@pytest.mark.slow
def test_a_topic_without_its_area_is_reported_with_the_fix(run, pool, snapshot):
    path, area, topic = _a_record_with_a_topic(pool)
    registry = yaml.safe_load((pool / "registry.yaml").read_text(encoding="utf-8"))
    other_area = next(value["id"] for value in registry["vocabularies"]["area"]["values"] if value["id"] != area)
    edit(path, f"area:\n- {area}\n", f"area:\n- {other_area}\n")
    line = next(number for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text == "topic:")
    before = snapshot(pool)
    result = run("validate", cwd=pool)
    assert result.exit_code == 1
    assert (
        f"papers/{path.name}:{line}: topic: topic '{topic}' is part of area '{area}', which area does not hold; add it: "
        f"`area: [{other_area}, {area}]`"
    ) in result.output.splitlines()
    assert snapshot(pool) == before


@pytest.mark.slow
def test_the_registry_names_a_parent_field_that_is_not_one(run, pool):
    edit(pool / "registry.yaml", "parent_field: area", "parent_field: areas")
    result = run("validate", cwd=pool)
    assert result.exit_code == 1
    assert result.output.splitlines()[0].endswith(
        "entry_fields.topic.parent_field: 'areas' is not another choice or choice_list field of the record; did you mean 'area'?"
    )


@pytest.mark.slow
def test_a_value_whose_parent_is_unknown_or_missing_is_reported(run, pool):
    registry = yaml.safe_load((pool / "registry.yaml").read_text(encoding="utf-8"))
    first = registry["vocabularies"]["topic"]["values"][0]
    edit(pool / "registry.yaml", f"  parent: {first['parent']}\n", f"  parent: {first['parent']}x\n")
    result = run("validate", cwd=pool)
    assert result.exit_code == 1
    assert (
        f"vocabularies.topic.values.0.parent: '{first['parent']}x', the parent of value '{first['id']}', is not a value of "
        f"vocabulary 'area' (field 'topic' has parent_field 'area'); did you mean '{first['parent']}'?"
    ) in result.output
    edit(pool / "registry.yaml", f"\n      parent: {first['parent']}x\n", "\n")
    result = run("validate", cwd=pool)
    assert (
        f"vocabularies.topic.values.0: value '{first['id']}' names no `parent`, which field 'topic' needs (its "
        "parent_field is 'area'); give it `parent:` one of "
    ) in result.output


@pytest.mark.slow
def test_levels_that_go_round_are_reported_once(run, pool):
    edit(
        pool / "registry.yaml",
        "  area:\n    type: choice_list\n    vocabulary: area\n",
        "  area:\n    type: choice_list\n    vocabulary: area\n    parent_field: topic\n",
    )
    result = run("validate", cwd=pool)
    assert result.exit_code == 1
    assert result.output.splitlines()[0].endswith(
        "entry_fields.area.parent_field: the levels go round: area -> topic -> area; a taxonomy's levels go one way, so "
        "remove parent_field from the top level"
    )
    assert result.output.endswith("\n1 error, 0 warnings.\n")


@pytest.mark.slow
def test_only_a_link_or_identifier_field_may_say_whether_it_identifies(run, pool):
    edit(pool / "registry.yaml", "  title:\n    type: text\n", "  title:\n    type: text\n    identifies: false\n")
    result = run("validate", cwd=pool)
    assert result.exit_code == 1
    assert result.output.splitlines()[0].endswith(
        "entry_fields.title.identifies: only a url, url_list or identifier field can tell papers apart, and 'title' is a "
        "text; remove `identifies`"
    )
