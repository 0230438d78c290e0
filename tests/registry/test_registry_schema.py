"""The registry's JSON Schema and the checks made before anything reads the registry:
types, size limits, control characters, and the folders and files it names (issue 16).

A wrong-typed registry value crashed validate in 19 places. The test over every path
of the shipped registry gives each setting a value of another type and runs validate:
each must be a registry.yaml problem, never a crash.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil

import jsonschema_rs
import pytest

from paperpool.files.yamlio import load_yaml
from paperpool.pool import identity
from paperpool.pool.recordchecks import CHECKS
from paperpool.registry import FIELD_TYPES, IDENTIFIER_SCHEMES, schema, sections

from ..conftest import REPO, TINY, edit

# ---------------------------------------------------------------------------------
# The schema itself
# ---------------------------------------------------------------------------------


def _schema_objects(node, path=()):
    """Every schema object that describes a setting: each property and each definition."""
    if isinstance(node, dict):
        for name, inner in node.get("properties", {}).items():
            yield path + ("properties", name), inner
        for name, inner in node.get("$defs", {}).items():
            yield path + ("$defs", name), inner
        for key, inner in node.items():
            if key not in ("properties", "$defs"):
                yield from _schema_objects(inner, path + (key,))
        for name, inner in {**node.get("properties", {}), **node.get("$defs", {})}.items():
            yield from _schema_objects(inner, path + (name,))


def test_the_schema_is_draft_2020_12_and_describes_every_section_and_setting():
    document = schema.schema()
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert jsonschema_rs.meta.is_valid(document)
    # every setting and every definition (the reference page's tables and the editors' hover text)
    undescribed = sorted(
        {
            "/".join(path)
            for path, node in _schema_objects(document)
            if "description" not in node and path[-2] in ("properties", "$defs")
        }
    )
    assert undescribed == []
    assert list(document["properties"]) == schema.sections()


def test_the_defaults_the_schema_states_are_the_ones_the_code_uses():
    from paperpool.registry import model, tables
    from paperpool.registry.convert import CONVERTERS

    core = schema.core()
    pool = core["properties"]["pool"]["properties"]
    assert pool["title_similarity"]["default"] == model.TITLE_SIMILARITY
    assert pool["claims"]["default"] == model.CLAIMS_FILE
    assert core["properties"]["gaps"]["properties"]["sparse_at_most"]["default"] == tables.DEFAULT_SPARSE
    converting = core["$defs"]["csv_column"]["properties"]["convert"]["description"]
    assert [name for name in CONVERTERS if name not in converting] == []


def test_the_schema_states_the_field_types_and_identifier_schemes_that_validate_checks():
    assert FIELD_TYPES == set(CHECKS)
    assert IDENTIFIER_SCHEMES == set(identity.PATTERNS)


def test_the_shipped_registry_names_its_schema_for_editors():
    first = (REPO / "registry.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=paperpool/registry/registry.schema.json"
    core = REPO / "paperpool" / "registry" / "registry.schema.json"
    assert core.is_file()


def test_the_core_schema_points_editors_at_each_features_section_schema():
    """Editors read the core file and follow its relative `$ref`s; paperpool joins the
    same files from the registrations: both must name the same file for each section."""
    core = REPO / "paperpool" / "registry" / "registry.schema.json"
    pointed = {
        name: (core.parent / body["$ref"]).resolve()
        for name, body in schema.core()["properties"].items()
        if not body.get("$ref", "#").startswith("#")
    }
    registered = {
        name: (REPO / section.package.replace(".", "/") / section.schema_file).resolve()
        for name, section in sections.registered().items()
    }
    assert pointed == registered
    assert set(registered) == {"site", "bibtex_export", "bibtex_import", "traces", "audit"}
    for path in registered.values():  # a feature's references to the core's definitions resolve for editors too
        text = path.read_text(encoding="utf-8")
        for ref in {part.split('"')[0] for part in text.split('"$ref": "')[1:]}:
            target, _, pointer = ref.partition("#")
            document = json.loads((path.parent / target).read_text(encoding="utf-8")) if target else json.loads(text)
            for step in pointer.strip("/").split("/"):
                document = document[step]


def test_the_schema_accepts_the_shipped_tiny_and_new_survey_registries(run, tmp_path):
    assert run("new-survey", "fresh", cwd=tmp_path).exit_code == 0
    for path in (REPO / "registry.yaml", TINY / "registry.yaml", tmp_path / "fresh" / "registry.yaml"):
        # as the loader reads it: a date in the registry is the text it was written as
        assert schema.schema_problems(json.loads(json.dumps(load_yaml(path).data, default=str))) == [], path


# ---------------------------------------------------------------------------------
# Every setting of the shipped registry, given a value of the wrong type
# ---------------------------------------------------------------------------------

WRONG = {"text": "x1", "number": 7, "true or false": True, "list": ["x1"], "mapping": {"x1": 1}, "nothing": None}
# Values of another type that a setting takes by design.
ACCEPTED = {
    "maps_to": {"nothing"},  # a value that maps to no value of the derived field
    "max": {"number"},  # a whole number, or next_year
    "in": {"number", "true or false", "nothing"},  # the values a rule compares with a record's
}
VALUE_SETTINGS = set(schema.schema()["$defs"]["value"]["properties"])
SAMPLE = ["malt", "matpo", "magrpo", "puppeteer", "c3"]  # a few entries the registry names


def _kind(value) -> str:
    if isinstance(value, dt.date):
        return "text"  # the registry's loader reads a date as the text it was written as
    return next(
        kind for kind, wrong in WRONG.items() if type(wrong) is type(value) or (kind == "number" and type(value) is float)
    )


def _paths(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield path + (key,)
            yield from _paths(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield path + (index,)
            yield from _paths(value, path + (index,))


def _accepts(path: tuple, kind: str) -> bool:
    """Whether a value of `kind` at `path` is allowed: a vocabulary value's own extra keys
    (typical_unit) take anything, for the templates that read them."""
    if path[0] == "vocabularies" and len(path) == 5 and path[4] not in VALUE_SETTINGS:
        return True
    named = [part for part in path if isinstance(part, str)]
    return kind in ACCEPTED.get(named[-1], set())


@pytest.fixture(scope="module")
def small_pool(tmp_path_factory):
    """The shipped registry and claims with a few of its records (validate in milliseconds);
    representatives name only those records."""
    root = tmp_path_factory.mktemp("registry") / "pool"
    (root / "papers").mkdir(parents=True)
    shutil.copytree(REPO / "exclusions", root / "exclusions", ignore=lambda folder, names: sorted(names)[3:])
    for key in SAMPLE:
        shutil.copyfile(REPO / "papers" / f"{key}.yaml", root / "papers" / f"{key}.yaml")
    shutil.copyfile(REPO / "claims.yaml", root / "claims.yaml")
    shutil.copytree(REPO / "corpora", root / "corpora")  # the trace corpora the registry declares
    data = load_yaml(REPO / "registry.yaml").data
    for vocabulary in data["vocabularies"].values():
        for value in vocabulary["values"]:
            if "representatives" in value:
                value["representatives"] = [key for key in value["representatives"] if key in SAMPLE]
    return root, data


@pytest.mark.slow
@pytest.mark.parametrize("section", list(load_yaml(REPO / "registry.yaml").data))
def test_every_setting_given_a_wrong_type_is_a_registry_problem(small_pool, run, section):
    """Each path of the section gets one wrong type, the types taken in turn from path to
    path (all types at every path, 6,550 runs, is a minute: run by hand when changing the
    schema). The registry is written as JSON, which YAML reads, to keep each run short."""
    root, data = small_pool
    (root / "registry.yaml").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    assert run("validate", cwd=root).exit_code == 0
    kinds = list(WRONG)
    tried = 0
    for number, path in enumerate(_paths(data[section], (section,))):
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        original = parent[path[-1]]
        turn = kinds[number % len(kinds) :] + kinds[: number % len(kinds)]
        wrong = next((kind for kind in turn if kind != _kind(original) and not _accepts(path, kind)), None)
        if wrong is None:
            continue
        parent[path[-1]] = WRONG[wrong]
        try:
            (root / "registry.yaml").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
            result = run("validate", cwd=root)
        finally:
            parent[path[-1]] = original
        shown = ".".join(map(str, path))
        assert result.exit_code == 1, (shown, wrong, result.output)
        assert "Traceback" not in result.output and "internal error" not in result.output, (shown, wrong)
        lines = [line for line in result.output.splitlines() if line.startswith("registry.yaml:")]
        assert any(f": {shown}" in line or f": {shown}." in line for line in lines), (shown, wrong, result.output)
        tried += 1
    assert tried > 0


# ---------------------------------------------------------------------------------
# What each problem says
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (
            "  title: {type: text, required: true}\n",
            '  title: {type: text, required: true, max_length: "400"}\n',
            "registry.yaml:46: entry_fields.title.max_length: is text; give a whole number",
        ),
        (
            (
                '  unit:\n    label: "Unit"\n    values:\n      - {id: team, label: "Team"}\n      - {id: agent, label: "Agent"}\n'
                '      - {id: step, label: "Step"}\n'
            ),
            "  unit: team, agent, step\n",
            "registry.yaml:22: vocabularies.unit: is text; give a mapping",
        ),
        ("      rows: method\n", "      rows: 3\n", "registry.yaml:73: gaps.tables.0.rows: is a number; give text"),
        (
            "  title: {type: text, required: true}\n",
            "  title: {type: txt, required: true}\n",
            "registry.yaml:46: entry_fields.title.type: 'txt' is not allowed here; did you mean 'text'?",
        ),
        (
            "  title: {type: text, required: true}\n",
            "  title: {required: true}\n",
            "registry.yaml:46: entry_fields.title.type: missing `type`; add it (what the field holds)",
        ),
        ("display:\n", "dispaly:\n", "registry.yaml:83: dispaly: unknown section 'dispaly'; did you mean 'display'?"),
        (
            '  unknown_marker: "TODO"\n',
            '  unknown_marker: "TODO"\n  colour: red\n',
            "registry.yaml:12: pool.colour: unknown setting 'colour'; use one of claims, dated_by, entries, exclusions, title_similarity, unknown_marker",
        ),
        ("  year: 2026\n", "  year: 2026-05-01\n", "registry.yaml:6: survey.year: is text; give a whole number"),
        (
            "  title_similarity: 93\n",
            "  title_similarity: .nan\n",
            "registry.yaml:12: pool.title_similarity: give a number from 1 to 100, e.g. `title_similarity: 93`",
        ),
        (
            '      - {id: designed, label: "Designed"}\n',
            '      - {id: designed, label: "Designed", maps_to: {a: 1}}\n',
            "registry.yaml:37: vocabularies.mode.values.1.maps_to: is a mapping; give text or nothing",
        ),
        (
            "    crosstabs:\n      - [method, unit]\n",
            "    crosstabs:\n      - [method]\n",
            "registry.yaml:64: statistics.entries.crosstabs.0: a cross-tab is a pair: [ROWS, COLUMNS]",
        ),
        (
            "display:\n",
            "site:\n  exclusion_log:\n    flow: {stage: stage}\ndisplay:\n",  # a build failed on it
            "registry.yaml:85: site.exclusion_log.flow.reason: missing `reason`; add it (the choice field holding the exclusion reason)",
        ),
        (
            "display:\n",
            'site:\n  exclusion_log:\n    flow: {stage: stage, reason: stage, sequential: "yes"}\ndisplay:\n',
            "registry.yaml:85: site.exclusion_log.flow.sequential: is text; give true or false",
        ),
        (
            "display:\n",
            "site:\n  exclusion_log:\n    flow: {stage: stage, reason: stage, sequentail: true}\ndisplay:\n",
            "registry.yaml:85: site.exclusion_log.flow.sequentail: unknown setting 'sequentail'; did you mean 'sequential'?",
        ),
        (
            "display:\n",
            "site:\n  exclusion_log:\n    flow: {stage: stage, reason: stage, title: [Screening]}\ndisplay:\n",
            "registry.yaml:85: site.exclusion_log.flow.title: is a list; give text",
        ),
        (
            "display:\n",
            "site:\n  charts:\n    - {id: m, type: stacked_bars, x: method, stack: unit, cumulative: true}\ndisplay:\n",
            (
                "registry.yaml:85: site.charts.0.cumulative: counts up along x, but 'method' is neither a date nor a number field; "
                "remove `cumulative`, or use such a field as x"
            ),
        ),
        (
            "display:\n",
            "site:\n  charts:\n    - {id: m, type: bars, field: method, cumulative: true}\ndisplay:\n",
            "registry.yaml:85: site.charts.0.cumulative: unknown setting 'cumulative'; use one of field, id, title, type",
        ),
        (
            "display:\n",
            "site:\n  charts:\n    - {id: m, type: stacked_bars, x: year, stack: unit, cumulative: 1}\ndisplay:\n",
            "registry.yaml:85: site.charts.0.cumulative: is a number; give true or false",
        ),
    ],
)
def test_a_wrong_shape_is_one_line_naming_the_setting_and_the_fix(run, tiny, old, new, expected):
    edit(tiny / "registry.yaml", old, new)
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"{expected}\n1 error, 0 warnings.\n")


def test_a_derived_value_must_map_to_a_value_of_the_derived_fields_vocabulary(run, pool_copy):
    edit(pool_copy / "registry.yaml", '{id: hybrid, label: "Hybrid", maps_to: R8}', '{id: hybrid, label: "Hybrid", maps_to: R88}')
    result = run("validate", cwd=pool_copy)
    assert result.output.splitlines()[0] == (
        "registry.yaml:98: vocabularies.reward_type.values.8.maps_to: 'R88' is not a value of "
        "vocabulary 'reward_family'; did you mean 'R8'?"
    )


# ---------------------------------------------------------------------------------
# Size limits
# ---------------------------------------------------------------------------------


def _vocabulary(name: str, size: int) -> str:
    values = ", ".join(f"{{id: {name}{index}}}" for index in range(size))
    return f"  {name}:\n    values: [{values}]\n"


def _big_registry(tiny, rows: int, columns: int, tables: int = 1) -> None:
    edit(tiny / "registry.yaml", "vocabularies:\n", "vocabularies:\n" + _vocabulary("a", rows) + _vocabulary("b", columns))
    edit(
        tiny / "registry.yaml",
        "  summary: {type: text, required: true}\n",
        "  summary: {type: text, required: true}\n  a: {type: choice, vocabulary: a}\n  b: {type: choice, vocabulary: b}\n",
    )
    edit(
        tiny / "registry.yaml",
        "  tables:\n",
        "  tables:\n" + "".join(f"    - {{id: big{n}, rows: a, columns: b}}\n" for n in range(tables)),
    )


def test_a_vocabulary_holds_at_most_200_values(run, tiny):
    _big_registry(tiny, 201, 2)
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "registry.yaml:17: vocabularies.a.values: lists 201 values, over the limit of 200; every value is a page, a filter "
            "option and a row or column of the tables; merge values or split the vocabulary\n1 error, 0 warnings.\n"
        ),
    )


def test_a_gap_table_holds_at_most_2500_cells(run, tiny):
    _big_registry(tiny, 200, 200)
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "registry.yaml:77: gaps.tables.0: has 200 rows x 200 columns = 40,000 cells, over the limit of 2,500; split it, "
            "or use fields with fewer values\n1 error, 0 warnings.\n"
        ),
    )
    for command in (["gaps"], ["readme", "--check"], ["build"]):
        result = run(*command, cwd=tiny)
        assert result.exit_code == 1 and "40,000 cells" in result.output, command


def test_the_tables_hold_at_most_10000_cells_together(run, tiny):
    _big_registry(tiny, 50, 50, tables=4)  # 10,000 cells: the tiny registry's own first table (3 x 3) goes over
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "registry.yaml:81: gaps.tables.4: brings the gap tables, cross-tabs and charts to 10,009 cells, over the limit of "
            "10,000 together; remove or narrow some of them\n1 error, 0 warnings.\n"
        ),
    )


@pytest.mark.slow
def test_at_the_limits_the_commands_work(run, tiny):
    _big_registry(tiny, 50, 50, tables=3)
    assert run("validate", cwd=tiny).exit_code == 0
    gaps = json.loads(run("gaps", "--format", "json", cwd=tiny).output)
    assert [len(table["cells"]) * len(table["columns"]) for table in gaps["tables"]] == [2500, 2500, 2500, 9, 6]


UNBOUNDED = (
    "so the {} would have a row or column for each of its values in the pool, as many as the records; "
    "use fields with a vocabulary, true/false fields or whole numbers with min and max"
)


# A cross-tab of two fields without a vocabulary has a row and a column per record: with
# [title, authors] and [key, year] added, `stats` took 106 s and printed 38 MB at 1,505
# entries, and every build computed the same tables.
@pytest.mark.parametrize(
    "old, new, expected",
    [
        (
            "      - [method, unit]\n",
            "      - [title, authors]\n",
            "registry.yaml:66: statistics.entries.crosstabs.0: 'title' has no vocabulary, " + UNBOUNDED.format("cross-tab"),
        ),
        (
            "      - [method, unit]\n",
            "      - [method, key]\n",
            "registry.yaml:66: statistics.entries.crosstabs.0: 'key' has no vocabulary, " + UNBOUNDED.format("cross-tab"),
        ),
        (
            "    counts: [stage]\n",
            "    counts: [stage]\n    crosstabs: [[stage, title]]\n",
            "registry.yaml:69: statistics.exclusions.crosstabs.0: 'title' has no vocabulary, " + UNBOUNDED.format("cross-tab"),
        ),
        (
            "      - [method, unit]\n",
            "      - [pages, method]\n",
            "registry.yaml:66: statistics.entries.crosstabs.0: 'pages' is a whole number without both min and max, "
            + UNBOUNDED.format("cross-tab"),
        ),
        (
            "display:\n",
            "site:\n  charts:\n    - {id: per-venue, type: stacked_bars, x: venue, stack: method}\ndisplay:\n",
            "registry.yaml:87: site.charts.0.x: 'venue' has no vocabulary, " + UNBOUNDED.format("chart") + ", or a date field",
        ),
    ],
)
def test_a_table_is_drawn_on_fields_whose_values_the_registry_fixes(run, tiny, old, new, expected):
    edit(
        tiny / "registry.yaml",
        "  summary: {type: text, required: true}\n",
        "  summary: {type: text, required: true}\n  venue: {type: text}\n  pages: {type: integer, min: 1}\n",
    )
    edit(tiny / "registry.yaml", old, new)
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"{expected}\n1 error, 0 warnings.\n")
    result = run("stats", cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"Error: the pool is not valid: {expected}; run paperpool validate\n")


def test_a_whole_number_with_min_and_max_is_an_axis_of_as_many_values(run, tiny):
    """Counted as its whole range against the limits; shown with the values the records hold."""
    edit(
        tiny / "registry.yaml",
        "  summary: {type: text, required: true}\n",
        "  summary: {type: text, required: true}\n  pages: {type: integer, min: 1, max: 1000}\n",
    )
    edit(tiny / "registry.yaml", "      - [method, unit]\n", "      - [method, unit]\n      - [year, unit]\n")
    assert run("validate", cwd=tiny).exit_code == 0
    crosstabs = json.loads(run("stats", "--format", "json", cwd=tiny).output)["crosstabs"]
    assert list(crosstabs["year x unit"]) == ["2024", "2025", "2026"]
    edit(tiny / "registry.yaml", "      - [year, unit]\n", "      - [pages, method]\n")
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "registry.yaml:66: statistics.entries.crosstabs.1: has 1,000 rows x 3 columns = 3,000 cells, over the limit of 2,500; "
            "split it, or use fields with fewer values\n1 error, 0 warnings.\n"
        ),
    )


def test_the_screening_flow_and_stacked_bars_count_among_the_tables(run, tiny):
    _big_registry(tiny, 60, 60, tables=0)
    edit(
        tiny / "registry.yaml",
        '  stage: {type: choice, vocabulary: stage, required: true, label: "Stage"}\n',
        '  stage: {type: choice, vocabulary: stage, required: true, label: "Stage"}\n  a: {type: choice, vocabulary: a}\n'
        "  b: {type: choice, vocabulary: b}\n",
    )
    edit(
        tiny / "registry.yaml",
        "display:\n",
        (
            "site:\n  exclusion_log:\n    flow: {stage: a, reason: b}\n"
            "  charts:\n    - {id: a-by-b, type: stacked_bars, x: a, stack: b}\ndisplay:\n"
        ),
    )
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "registry.yaml:93: site.exclusion_log.flow: has 60 rows x 60 columns = 3,600 cells, over the limit of 2,500; split it, "
            "or use fields with fewer values\n"
            "registry.yaml:95: site.charts.0: has 60 rows x 60 columns = 3,600 cells, over the limit of 2,500; split it, or use "
            "fields with fewer values\n2 errors, 0 warnings.\n"
        ),
    )


def test_a_chart_of_dates_counts_as_36_periods_among_the_tables(run, tiny):
    _big_registry(tiny, 2, 70, tables=0)
    edit(
        tiny / "registry.yaml",
        "  summary: {type: text, required: true}\n",
        "  summary: {type: text, required: true}\n  added: {type: date}\n",
    )
    edit(
        tiny / "registry.yaml",
        "display:\n",
        "site:\n  charts:\n    - {id: growth, type: stacked_bars, x: added, stack: a}\ndisplay:\n",
    )
    assert run("validate", cwd=tiny).exit_code == 0
    edit(tiny / "registry.yaml", "x: added, stack: a}", "x: added, stack: b}")
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "registry.yaml:92: site.charts.0: has 36 rows x 70 columns = 2,520 cells, over the limit of 2,500; split it, or use "
            "fields with fewer values\n1 error, 0 warnings.\n"
        ),
    )


def test_stats_by_and_vs_cross_tabulate_by_the_same_rule(run, tiny):
    result = run("stats", "--by", "title", "--vs", "method", cwd=tiny)
    assert (result.exit_code, result.output) == (1, "Error: 'title' has no vocabulary, " + UNBOUNDED.format("cross-tab") + "\n")
    result = run("stats", "--by", "year", "--vs", "method", "--format", "json", cwd=tiny)
    assert (result.exit_code, list(json.loads(result.output)["crosstabs"])) == (0, ["year x method"])


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (
            "    counts: [method, unit,",
            "    counts: [method, unit, method,",
            "registry.yaml:62: statistics.entries.counts: lists 'method' more than once; list each once",
        ),
        (
            "  tags: [unit, decisions]\n",
            "  tags: [unit, decisions, unit]\n",
            "registry.yaml:85: display.tags: lists 'unit' more than once; list each once",
        ),
        (
            "display:\n",
            "site:\n  browser:\n    facets: [unit, method, unit]\ndisplay:\n",
            "registry.yaml:85: site.browser.facets: lists 'unit' more than once; list each once",
        ),
    ],
)
def test_a_list_of_names_names_each_once(run, tiny, old, new, expected):
    """Each name is a table, a page per value or a filter; fifty thousand copies of one
    axis kept a build of the shipped pool busy for more than 5 minutes."""
    edit(tiny / "registry.yaml", old, new)
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"{expected}\n1 error, 0 warnings.\n")


RULE = (
    "rules:\n  - id: no-mallory\n    when: {{field: method, in: [{}]}}\n    forbid: {{field: authors, in: [Mallory]}}\n"
    '    problem: "Mallory wrote no RL entry"\n    fix: "remove the name"\n'
)


def test_a_rule_lists_at_most_200_values(run, tiny):
    edit(
        tiny / "registry.yaml", "statistics:\n", RULE.format(", ".join(["rl"] + [f"v{n}" for n in range(200)])) + "statistics:\n"
    )
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "registry.yaml:62: rules.0.when.in: lists 201 values, over the limit of 200; a rule names values of one field, and a "
            "vocabulary holds at most 200; list fewer\n1 error, 0 warnings.\n"
        ),
    )


def test_a_rule_finds_its_values_in_a_record_that_holds_a_list_or_a_mapping_where_a_value_belongs(run, tiny):
    edit(tiny / "registry.yaml", "statistics:\n", RULE.format("rl, [x], {y: 1}") + "statistics:\n")
    assert run("validate", cwd=tiny).exit_code == 1  # the schema: a value is text, a number, true/false or null
    edit(tiny / "registry.yaml", "[rl, [x], {y: 1}]", "[rl]")
    edit(tiny / "papers" / "alpha.yaml", '["Ames, Ann", "Bell, Bo"]', "[{name: Mallory}, [Mallory], Mallory]")
    result = run("validate", cwd=tiny)
    assert [line for line in result.output.splitlines() if "Mallory wrote" in line] == [
        "papers/alpha.yaml:3: authors: Mallory wrote no RL entry; remove the name"
    ]


# ---------------------------------------------------------------------------------
# Control characters
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "file, old, new, expected",
    [
        (
            "registry.yaml",
            'label: "Prompting"',
            'label: "Prompt\\x9bing"',
            "registry.yaml:20: vocabularies.method.values.1.label: contains the invisible control character U+009B; remove it",
        ),
        (
            "registry.yaml",
            '  title: "A tiny survey of tool-using agents"',
            '  title: "A tiny survey\\u2066 of agents"',
            "registry.yaml:4: survey.title: contains the invisible control character U+2066; remove it",
        ),
        (
            "registry.yaml",
            "  method:\n    label:",
            '  "meth\\x07od":\n    label:',
            "registry.yaml:16: vocabularies.meth\\x07od: contains the invisible control character U+0007; remove it",
        ),
        (
            "claims.yaml",
            'statement: "Three entries use RL."',
            'statement: "Three entries \\e[31muse RL."',
            "claims.yaml:3: claims[0].statement: contains the invisible control character U+001B; remove it",
        ),
        (
            "claims.yaml",
            "rows: [alpha, beta, delta]",
            'rows: [alpha, "beta\\u202e", delta]',
            "claims.yaml:6: claims[0].rows[1]: contains the invisible control character U+202E; remove it",
        ),
        (  # the Arabic letter mark, a bidirectional mark as U+200F is (the eighth review)
            "claims.yaml",
            'statement: "Three entries use RL."',
            'statement: "Three entries\\u061c use RL."',
            "claims.yaml:3: claims[0].statement: contains the invisible control character U+061C; remove it",
        ),
    ],
)
def test_control_characters_in_the_registry_and_claims_are_refused(run, tiny, file, old, new, expected):
    edit(tiny / file, old, new)
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"{expected}\n1 error, 0 warnings.\n")


def test_a_c1_control_in_a_record_is_refused_as_other_controls_are(run, tiny):
    edit(tiny / "papers" / "alpha.yaml", 'title: "Alpha', 'title: "\\x85Alpha')
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        ("papers/alpha.yaml:2: title: contains control characters; remove them\n1 error, 0 warnings.\n"),
    )


# ---------------------------------------------------------------------------------
# Folders and files the registry names
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (
            "  entries: papers\n",
            "  entries: ../..\n",
            "registry.yaml:9: pool.entries: '../..' leads out of the pool ('..'); name the folder that holds the entries, e.g. `entries: papers`",
        ),
        (
            "  exclusions: exclusions\n",
            "  exclusions: /etc\n",
            (
                "registry.yaml:10: pool.exclusions: '/etc' is an absolute path, outside the pool; name the folder that holds the exclusions, "
                "e.g. `exclusions: exclusions`"
            ),
        ),
        (
            "  entries: papers\n",
            "  entries: .\n",
            "registry.yaml:9: pool.entries: '.' is the pool's own folder; name the folder that holds the entries, e.g. `entries: papers`",
        ),
        (
            "  exclusions: exclusions\n",
            "  exclusions: ./papers/\n",
            (
                "registry.yaml:10: pool.exclusions: is the folder of the entries too; give the exclusions a folder of their own, "
                "e.g. `exclusions: exclusions`"
            ),
        ),
        (
            "  claims: claims.yaml\n",
            "  claims: ../../etc/passwd\n",
            (
                "registry.yaml:13: pool.claims: '../../etc/passwd' leads out of the pool ('..'); name the claim ledger's file, "
                "e.g. `claims: claims.yaml` (or remove the setting)"
            ),
        ),
        (
            "display:\n",
            "traces:\n  folder: /tmp\ndisplay:\n",
            (
                "registry.yaml:84: traces.folder: '/tmp' is an absolute path, outside the pool; name the folder of the pool's traces, "
                "e.g. `folder: traces`"
            ),
        ),
    ],
)
def test_every_path_the_registry_names_stays_inside_the_pool(run, tiny, old, new, expected):
    edit(tiny / "registry.yaml", old, new)
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"{expected}\n1 error, 0 warnings.\n")


LINKED = (
    "papers:1: is a symbolic link; the entries are kept in a plain folder of the pool: replace the link with the folder itself"
)
ADD = [
    "add",
    "--no-interactive",
    "--set",
    "title=Halting",
    "--set",
    "authors=Roe, Rick",
    "--set",
    "year=2026",
    "--set",
    "urls=https://example.org/halting",
    "--set",
    "method=rl",
    "--set",
    "summary=Halts.",
    "roe2026",
]


def _linked_papers(tiny, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(tiny / "papers", elsewhere)
    (tiny / "papers").symlink_to(elsewhere)
    return elsewhere


def test_a_linked_records_folder_is_refused_by_every_command_that_reads_or_writes_records(run, tiny, tmp_path, snapshot):
    elsewhere = _linked_papers(tiny, tmp_path)
    (tmp_path / "new.bib").write_text(
        "@article{Roe2026, title={Halting}, author={Rick Roe}, year={2026}, url={https://example.org/halting}}\n",
        encoding="utf-8",
    )
    (tmp_path / "new.csv").write_text(
        (REPO / "tests" / "source" / "papers-facts.csv").read_text(encoding="utf-8"), encoding="utf-8"
    )
    before = snapshot(tmp_path)
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"{LINKED}\n1 error, 0 warnings.\n")
    for command in (
        ADD,
        ["import-bib", str(tmp_path / "new.bib")],
        ["import-csv", str(tmp_path / "new.csv")],
        ["stats"],
        ["export"],
    ):
        result = run(*command, cwd=tiny)
        assert result.exit_code == 1 and LINKED in result.output, command
    assert snapshot(tmp_path) == before and sorted(p.name for p in elsewhere.iterdir()) == sorted(
        p.name for p in (TINY / "papers").iterdir()
    )


def test_a_link_on_the_way_to_a_records_folder_is_refused(run, tiny, tmp_path):
    (tmp_path / "data" / "papers").mkdir(parents=True)
    (tiny / "data").symlink_to(tmp_path / "data")
    edit(tiny / "registry.yaml", "  entries: papers\n", "  entries: data/papers\n")
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "data:1: is a symbolic link; the entries are kept in a plain folder of the pool: replace the link with the folder itself\n"
            "1 error, 0 warnings.\n"
        ),
    )


def test_a_linked_claims_file_is_refused(run, tiny, tmp_path):
    shutil.move(tiny / "claims.yaml", tmp_path / "claims.yaml")
    (tiny / "claims.yaml").symlink_to(tmp_path / "claims.yaml")
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "claims.yaml:1: is a symbolic link; the claim ledger is a plain file of the pool: replace the link with the file itself\n"
            "1 error, 0 warnings.\n"
        ),
    )


def test_the_survey_arxiv_id_pattern_is_the_identifier_one():
    """The home page links the survey's arXiv id: the schema holds it to the form
    identity.py reads, so that it cannot carry markup or another address (issue 39)."""
    from paperpool.pool.identity import ARXIV_RE

    schema = json.loads((REPO / "paperpool" / "registry" / "registry.schema.json").read_text(encoding="utf-8"))
    assert schema["properties"]["survey"]["properties"]["arxiv_id"]["pattern"] == ARXIV_RE.pattern.replace(
        "\\Z", "$"
    )  # ECMA-262's end
