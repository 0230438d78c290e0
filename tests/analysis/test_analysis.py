"""stats, gaps and claims: exact tables on a tiny pool of another survey, the source's
statistics reproduced on the shipped pool, and claims that break when the data moves."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest

from ..conftest import EXPECTED, REPO, SOURCE, edit

# ---------------------------------------------------------------------------------
# stats
# ---------------------------------------------------------------------------------


def test_stats_crosstab_of_two_fields(run, tiny):
    result = run("stats", "--by", "method", "--vs", "unit", cwd=tiny)
    assert result.exit_code == 0
    assert result.output.split("## method x unit\n\n")[1] == (
        "| method x unit | team | agent | step | (none) |\n"
        "|---------------|-----:|------:|-----:|-------:|\n"
        "| rl            |    1 |     1 |    1 |      0 |\n"
        "| prompting     |    0 |     1 |    0 |      0 |\n"
        "| search        |    0 |     0 |    0 |      1 |\n"
    )


def test_stats_json_has_the_documented_shape(run, tiny):
    result = run("stats", "--format", "json", cwd=tiny)
    assert result.exit_code == 0
    assert json.loads(result.output) == {
        "totals": {"retained": 5, "excluded": 2, "audited": 7},
        "counts": {
            "method": {"rl": 3, "prompting": 1, "search": 1},
            "unit": {"team": 1, "agent": 2, "step": 1, "(none)": 1},
            "decisions": {"D1": 2, "D2": 1, "(none)": 2},
            "decisions.trained": {"D1": 1, "D2": 0, "(none)": 4},
            "year": {"2024": 1, "2025": 2, "2026": 2},
            "stage": {"abstract": 1, "full_text": 1},
        },
        "crosstabs": {
            "method x unit": {
                "rl": {"team": 1, "agent": 1, "step": 1, "(none)": 0},
                "prompting": {"team": 0, "agent": 1, "step": 0, "(none)": 0},
                "search": {"team": 0, "agent": 0, "step": 0, "(none)": 1},
            }
        },
        "multi_valued": ["decisions", "decisions.trained"],
    }


def test_stats_csv_is_one_tidy_table(run, tiny):
    result = run("stats", "--by", "decisions", "--format", "csv", cwd=tiny)
    assert (result.exit_code, result.output) == (
        0,
        (
            "table,row,column,count\n"
            "totals,retained,,5\ntotals,excluded,,2\ntotals,audited,,7\n"
            "decisions,D1,,2\ndecisions,D2,,1\ndecisions,(none),,2\n"
        ),
    )


def test_stats_says_multi_valued_fields_count_once_per_value(run, tiny):
    result = run("stats", "--by", "decisions", cwd=tiny)
    assert (
        "Multi-valued fields (decisions) count a record once per value, so their counts "
        "can add up to more than the number of records."
    ) in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--by", "methd"], "Error: unknown field 'methd'; did you mean 'method'?\n"),
        (
            ["--by", "method", "--vs", "stage"],
            (
                "Error: 'method' and 'stage' are fields of different record kinds; cross-tabulate two fields "
                "of the entries or two of the exclusions\n"
            ),
        ),
    ],
)
def test_stats_refuses_unknown_or_mismatched_fields(run, tiny, args, message):
    result = run("stats", *args, cwd=tiny)
    assert (result.exit_code, result.output) == (1, message)


def test_stats_refuses_an_invalid_pool(run, tiny, snapshot):
    edit(tiny / "papers" / "gamma.yaml", "method: prompting", "method: prompted")
    before = snapshot(tiny)
    result = run("stats", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: the pool is not valid: papers/gamma.yaml:6: method: 'prompted' is not an allowed value; "
            "did you mean 'prompting'? use one of rl, prompting, search; run paperpool validate\n"
        ),
    )
    assert snapshot(tiny) == before


def source_counts(name: str) -> dict[str, Counter]:
    with (SOURCE / name).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {column: Counter(row[column] for row in rows) for column in rows[0]}


@pytest.mark.parametrize(
    "column",
    [
        "category",
        "is_rl",
        "reward_type",
        "credit_granularity",
        "orchestration_form",
        "scenario",
        "is_core",
        "verified",
        "year",
    ],
)
def test_stats_reproduces_the_source_counts_of_entries(run, column):
    """The pool as published (its later changes undone) is the source's."""
    stats = json.loads(run("stats", "--format", "json", "--as-of", "2026-05-04", cwd=REPO).output)
    source = source_counts("papers-facts.csv")[column]
    assert {value: n for value, n in stats["counts"][column].items() if n} == dict(source)


@pytest.mark.parametrize("column", ["stage", "source", "query_family"])
def test_stats_reproduces_the_source_counts_of_exclusions(run, column):
    stats = json.loads(run("stats", "--format", "json", "--as-of", "2026-05-04", cwd=REPO).output)
    source = source_counts("excluded-facts.csv")[column]
    assert {value: n for value, n in stats["counts"][column].items() if n} == dict(source)


@pytest.mark.parametrize(
    "rows, columns",
    [
        ("reward_type", "credit_granularity"),
        ("orchestration_form", "credit_granularity"),
        ("category", "verified"),
    ],
)
def test_stats_reproduces_the_source_crosstabs(run, rows, columns):
    stats = json.loads(run("stats", "--format", "json", "--as-of", "2026-05-04", cwd=REPO).output)
    with (SOURCE / "papers-facts.csv").open(encoding="utf-8", newline="") as handle:
        pairs = Counter((row[rows], row[columns]) for row in csv.DictReader(handle))
    table = stats["crosstabs"][f"{rows} x {columns}"]
    assert {(r, c): n for r, cells in table.items() for c, n in cells.items() if n} == dict(pairs)


def test_stats_headline_totals_of_the_shipped_pool(run):
    stats = json.loads(run("stats", "--format", "json", "--as-of", "2026-05-04", cwd=REPO).output)
    assert stats["totals"] == {"retained": 84, "excluded": 32, "audited": 116}


# ---------------------------------------------------------------------------------
# gaps
# ---------------------------------------------------------------------------------


def test_gaps_markdown_of_the_tiny_pool(run, tiny):
    result = run("gaps", cwd=tiny)
    assert (result.exit_code, result.output) == (0, (EXPECTED / "gaps.md").read_text(encoding="utf-8"))


def test_gaps_json_cells_carry_counts_keys_and_marks(run, tiny):
    tables = json.loads(run("gaps", "--format", "json", cwd=tiny).output)["tables"]
    decisions = tables[1]["cells"]
    judged = {"unassessed": [], "representatives": []}  # the tiny registry leaves nothing unassessed and names none
    assert decisions["D2"] == {
        "touched": {"count": 1, "mark": "sparse", "keys": ["beta"], **judged},
        "trained": {"count": 0, "mark": "empty", "keys": [], **judged},
        "rl-touched": {"count": 1, "mark": "sparse", "keys": ["beta"], **judged},
    }
    assert decisions["D1"]["touched"] == {"count": 2, "mark": "", "keys": ["alpha", "gamma"], **judged}
    # epsilon has no unit, so it is in no cell of method x unit
    assert sum(cell["count"] for row in tables[0]["cells"].values() for cell in row.values()) == 4


def test_gaps_of_the_shipped_pool_hold_the_papers_numbers(run):
    """As published: the paper's cells (the pool's later readings undone)."""
    tables = {t["id"]: t for t in json.loads(run("gaps", "--format", "json", "--as-of", "2026-05-04", cwd=REPO).output)["tables"]}
    family_unit = tables["family-unit"]
    assert len(family_unit["cells"]) * len(family_unit["columns"]) == 64
    subdecisions = tables["subdecisions"]["cells"]
    # no assessed entry trains O5, but 67 entries have no sub-decision tags yet: not a gap
    o5 = subdecisions["O5"]["trained"]
    assert (o5["count"], o5["mark"], len(o5["unassessed"])) == (0, "not assessed", 67)
    readings = tables["credit-readings"]["cells"]
    assert (readings["message"]["broad"]["keys"], readings["message"]["strict"]["keys"]) == (["c3", "debate-as-reward"], ["c3"])
    assert (readings["orchestrator"]["broad"]["count"], readings["orchestrator"]["strict"]["count"]) == (8, 5)


def test_sparse_threshold_is_a_setting(run, tiny):
    edit(tiny / "registry.yaml", "sparse_at_most: 1", "sparse_at_most: 2")
    result = run("gaps", cwd=tiny)
    assert "| D1        | 2 sparse |" in result.output
    assert "a cell with 1 to 2 entries is sparse" in result.output


def test_gap_table_naming_an_unknown_field_is_a_registry_problem(run, tiny):
    edit(tiny / "registry.yaml", "      rows: method\n", "      rows: methods\n")
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "registry.yaml:73: gaps.tables.0.rows: unknown field 'methods' of the entries; did you mean 'method'?\n"
            "1 error, 0 warnings.\n"
        ),
    )


# ---------------------------------------------------------------------------------
# claims
# ---------------------------------------------------------------------------------


def test_claims_hold_on_the_tiny_pool(run, tiny):
    result = run("claims", cwd=tiny)
    assert (result.exit_code, result.output) == (0, (EXPECTED / "claims.txt").read_text(encoding="utf-8"))


def test_claims_check_passes_quietly(run, tiny):
    assert run("claims", "--check", cwd=tiny).output == "4 claims: all hold.\n"


def test_a_retag_that_breaks_a_claim_names_it_and_the_entry_that_moved_it(run, tiny, snapshot):
    edit(tiny / "papers" / "gamma.yaml", "method: prompting", "method: rl")
    before = snapshot(tiny)
    result = run("claims", "--check", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "claims.yaml:2: claim 'rl-entries' no longer holds: expected 3, found 4 (now matching: gamma); if the records are right, update the claim's expected value (and its statement and rows)\n"
            "4 claims: 1 no longer holds.\n"
        ),
    )
    assert snapshot(tiny) == before


def test_a_bound_claim_breaks_past_its_bound(run, tiny):
    edit(tiny / "papers" / "epsilon.yaml", "unit: null", "unit: step")
    result = run("claims", "--check", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "claims.yaml:13: claim 'few-step-units' no longer holds: expected <= 1, found 2 (rows: delta, epsilon); if the records are right, update the claim's expected value (and its statement and rows)\n"
            "4 claims: 1 no longer holds.\n"
        ),
    )


def test_removing_a_recorded_row_breaks_the_claim(run, tiny):
    (tiny / "papers" / "delta.yaml").unlink()
    result = run("claims", "--check", cwd=tiny)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "claims.yaml:2: claim 'rl-entries' no longer holds: expected 3, found 2 (not in the pool: delta); if the records are right, update the claim's expected value (and its statement and rows)"
    )


def test_claims_json_lists_id_statement_value_expected_holds_rows(run, tiny):
    outcomes = json.loads(run("claims", "--format", "json", cwd=tiny).output)
    first = outcomes[0]
    assert {k: first[k] for k in ("id", "statement", "value", "expected", "holds", "rows")} == {
        "id": "rl-entries",
        "statement": "Three entries use RL.",
        "value": 3,
        "expected": 3,
        "holds": True,
        "rows": ["alpha", "beta", "delta"],
    }
    assert [o["holds"] for o in outcomes] == [True, True, True, True]


def test_shipped_claims_all_hold(run):
    result = run("claims", "--check", cwd=REPO)
    assert (result.exit_code, result.output) == (
        0,
        "15 claims: all hold, 14 published ones counted over the pool as of May 4, 2026 (arXiv 2605.02801v1) and 1 live one counted now; 2 published claims have a different value now.\n",
    )


def test_shipped_claims_carry_the_papers_numbers(run):
    outcomes = {o["id"]: o for o in json.loads(run("claims", "--format", "json", cwd=REPO).output)}
    assert {
        i: outcomes[i]["value"]
        for i in (
            "message-credit-broad",
            "message-credit-strict",
            "orchestrator-credit-broad",
            "orchestrator-credit-strict",
            "stopping-never-trained",
            "retained-total",
            "excluded-total",
            "audited-total",
        )
    } == {
        "message-credit-broad": 2,
        "message-credit-strict": 1,
        "orchestrator-credit-broad": 8,
        "orchestrator-credit-strict": 5,
        "stopping-never-trained": 0,
        "retained-total": 84,
        "excluded-total": 32,
        "audited-total": 116,
    }
    assert outcomes["kimi-k2-5-trained-orchestrator"]["rows"] == ["kimi-k2-5"]
    assert outcomes["kimi-k2-6-not-an-rl-anchor"]["rows"] == ["kimi-k2-6"]


@pytest.mark.parametrize(
    "where, message",
    [
        (
            "method = reinforcement",
            "claims.yaml:4: claims[0].where: 'reinforcement' is not a value of 'method'; use one of rl, prompting, search",
        ),
        ("methd = rl", "claims.yaml:4: claims[0].where: unknown field 'methd'; did you mean 'method'?"),
        (
            "__import__('os').system('true')",
            (
                "claims.yaml:4: claims[0].where: unknown field '__import__'; "
                "use a field of the records (as in the export's CSV columns)"
            ),
        ),
        (
            "method = rl; rm -rf /",
            (
                "claims.yaml:4: claims[0].where: unexpected character ';' at position 12; "
                "a query is conditions like `field = value` joined by and / or / not"
            ),
        ),
        ("method = rl and", "claims.yaml:4: claims[0].where: expected a field name at position 16, found the end of the query"),
        ("(method = rl", "claims.yaml:4: claims[0].where: expected ')' at position 13, found the end of the query"),
        ("year >= soon", "claims.yaml:4: claims[0].where: 'year' is compared with 'soon', which is not a whole number"),
    ],
)
def test_a_bad_query_is_a_validation_problem_naming_the_line(run, tiny, where, message):
    edit(tiny / "claims.yaml", 'where: "method = rl"', f'where: "{where}"')
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"{message}\n1 error, 0 warnings.\n")


def test_claims_with_a_bad_expected_value_and_unknown_field(run, tiny):
    edit(tiny / "claims.yaml", "    expected: 3\n", "    expected: lots\n    weight: 2\n")
    result = run("validate", cwd=tiny)
    assert result.output == (
        'claims.yaml:5: claims[0].expected: give the expected count (e.g. 2) or a bound in quotes (e.g. "<= 2")\n'
        "claims.yaml:6: claims[0].weight: unknown field; a claim has among, boundary, dispute, expected, id, kind, over, rows, statement, where\n"
        "2 errors, 0 warnings.\n"
    )


def test_query_language_operators(run, tiny):
    from paperpool.analysis.frame import build_frame
    from paperpool.pool.reading import require_pool
    from paperpool.registry.query import parse

    frame = build_frame(require_pool(tiny), "entries")
    cases = {
        "method = rl": ["alpha", "beta", "delta"],
        "method != rl": ["epsilon", "gamma"],
        "method in [prompting, search]": ["epsilon", "gamma"],
        "unit = null": ["epsilon"],
        "decisions = null": ["delta", "epsilon"],
        "decisions = D1 and not decisions.trained = D1": ["gamma"],
        "year >= 2026 or (unit = team)": ["beta", "delta", "epsilon"],
        "year < 2025": ["beta"],
        "title = 'Gamma prompting'": ["gamma"],
        "": ["alpha", "beta", "delta", "epsilon", "gamma"],
    }
    assert {query: frame.select(parse(query, frame.columns).tree) for query in cases} == cases


def test_stats_markdown_of_the_tiny_pool(run, tiny):
    result = run("stats", cwd=tiny)
    assert (result.exit_code, result.output) == (0, (EXPECTED / "stats.md").read_text(encoding="utf-8"))


def test_commands_work_on_a_pool_with_no_records(run, tiny):
    for folder in ("papers", "exclusions"):
        for path in (tiny / folder).iterdir():
            path.unlink()
    assert json.loads(run("stats", "--format", "json", cwd=tiny).output)["counts"]["method"] == {
        "rl": 0,
        "prompting": 0,
        "search": 0,
    }
    gaps = json.loads(run("gaps", "--format", "json", cwd=tiny).output)
    assert [(t["empty"], t["sparse"]) for t in gaps["tables"]] == [(9, 0), (6, 0)]
    result = run("claims", "--check", cwd=tiny)
    assert (result.exit_code, result.output.splitlines()[-1]) == (1, "4 claims: 2 no longer hold.")


# What a reviewer broke: each bad setting is a validation problem with its line, never a crash.
@pytest.mark.parametrize(
    "file, old, new, expected",
    [
        (
            "claims.yaml",
            '    where: "method = rl"\n',
            '    over: [entries]\n    where: "method = rl"\n',
            "claims.yaml:4: claims[0].over: over is one of entries, exclusions, all",
        ),
        (
            "claims.yaml",
            'where: "method = rl"',
            "where: 0",
            'claims.yaml:4: claims[0].where: write the query as text in quotes, e.g. "credit_unit = message" (empty: every record)',
        ),
        (
            "claims.yaml",
            "rows: [alpha, beta, delta]",
            "rows: [alpha, beta]",
            "claims.yaml:6: claims[0].rows: lists 2 records, which cannot satisfy expected 3; make rows and expected agree",
        ),
        (
            "claims.yaml",
            "rows: [alpha, beta, delta]",
            "rows: [alpha, alpha, delta]",
            "claims.yaml:6: claims[0].rows: lists alpha more than once; list each record once",
        ),
        (
            "claims.yaml",
            "rows: [alpha, beta, delta]",
            f"rows: [{', '.join(f'k{n}' for n in range(22) for _ in 'ab')}]",
            (
                "claims.yaml:6: claims[0].rows: lists k0, k1, k10, k11, k12, k13, k14, k15, k16, k17, k18, k19, k2, k20, k21, k3, k4, k5, "
                "k6, k7 and 2 other keys more than once; list each record once"
            ),
        ),
        (
            "claims.yaml",
            "rows: [alpha, beta, delta]",
            f"rows: [{', '.join(f'k{n}' for n in range(10_000))}]",
            "claims.yaml:6: claims[0].rows: lists 10000 records, which cannot satisfy expected 3; make rows and expected agree",
        ),
        (
            "claims.yaml",
            "rows: [alpha, beta, delta]",
            f"rows: [{', '.join(f'k{n}' for n in range(10_001))}]",
            (
                "claims.yaml:6: claims[0].rows: lists 10,001 keys, over the limit of 10,000; rows are for a reviewer to read: narrow the "
                "claim, or leave rows out and keep expected"
            ),
        ),
        (
            "claims.yaml",
            "    over: all\n",
            '    over: all\n    where: "unit = team"\n',
            (
                "claims.yaml:20: claims[3].where: unknown field 'unit'; use a field of the records (as in the export's CSV columns) "
                "(over: all queries the entries and the exclusions, so use fields both have)"
            ),
        ),
        (
            "claims.yaml",
            'where: "method = rl"',
            'where: "year = soon"',
            "claims.yaml:4: claims[0].where: 'year' is compared with 'soon', which is not a whole number",
        ),
        (
            "claims.yaml",
            'where: "method = rl"',
            f'where: "{" or ".join(["method = rl"] * 134)}"',
            "claims.yaml:4: claims[0].where: is 2,006 characters long, over 2,000; shorten the query, or split the claim",
        ),
        (
            "claims.yaml",
            'where: "method = rl"',
            'where: "unit < 3"',
            "claims.yaml:4: claims[0].where: 'unit' cannot be compared with <, <=, > or >=; those compare numbers and dates",
        ),
        (
            "registry.yaml",
            "  claims: claims.yaml\n",
            "  claims:\n",
            "registry.yaml:13: pool.claims: name the claim ledger's file, e.g. `claims: claims.yaml` (or remove the setting)",
        ),
        (
            "registry.yaml",
            "  title_similarity: 93\n",
            "  title_similarity: abc\n",
            "registry.yaml:12: pool.title_similarity: give a number from 1 to 100, e.g. `title_similarity: 93`",
        ),
        (
            "registry.yaml",
            '        - {id: trained, label: "Trained", field: decisions.trained}\n',
            '        - {id: touched, label: "Trained", field: decisions.trained}\n',
            "registry.yaml:80: gaps.tables.1.columns.1: a second column with id 'touched'; give each column its own id",
        ),
        (
            "registry.yaml",
            "    - id: decisions\n",
            "    - id: method-unit\n",
            "registry.yaml:75: gaps.tables.1.id: a second table with id 'method-unit'; give each table its own id",
        ),
        (
            "registry.yaml",
            "      rows: decisions\n",
            "      rows: year\n",
            "registry.yaml:77: gaps.tables.1.rows: 'year' has no vocabulary, so it has no rows to draw; use a choice field",
        ),
        (
            "registry.yaml",
            "      columns: unit\n",
            "      columns: unit\n      colour: red\n",
            "registry.yaml:75: gaps.tables.0.colour: unknown setting 'colour'; did you mean 'columns'?",
        ),
        (
            "registry.yaml",
            "    counts: [method, unit",
            "    counts: [methd, unit",
            "registry.yaml:62: statistics.entries.counts.0: unknown field 'methd' of the entries; did you mean 'method'?",
        ),
        (
            "registry.yaml",
            "  sparse_at_most: 1\n",
            "  sparse_at_most: two\n",
            "registry.yaml:69: gaps.sparse_at_most: give a whole number of 0 or more, e.g. `sparse_at_most: 2`",
        ),
        (
            "registry.yaml",
            "  group_by: method\n",
            "  group_by: [method]\n",
            "registry.yaml:84: display.group_by: name a choice field of the entries to group by, e.g. `group_by: category`",
        ),
        (
            "registry.yaml",
            "  group_by: method\n",
            "  group_by: summary\n",
            "registry.yaml:84: display.group_by: 'summary' is not a choice field of the entries; group by one, e.g. category",
        ),
        (
            "registry.yaml",
            "  tags: [unit, decisions]\n",
            "  tags: [unit, summary]\n",
            "registry.yaml:85: display.tags.1: 'summary' is not a choice field of the entries; tags show choice fields",
        ),
    ],
)
def test_bad_settings_are_validation_problems(run, tiny, file, old, new, expected):
    edit(tiny / file, old, new)
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output.splitlines()[0]) == (1, expected)


def test_dates_and_booleans_are_queryable(run, tiny):
    from paperpool.analysis.frame import build_frame
    from paperpool.pool.reading import require_pool
    from paperpool.registry.query import QueryError, parse

    registry_path = tiny / "registry.yaml"
    edit(
        registry_path,
        "  summary: {type: text, required: true}\n",
        "  summary: {type: text, required: true}\n  added: {type: date}\n  open: {type: bool}\n",
    )
    edit(tiny / "papers" / "alpha.yaml", "summary:", "added: 2026-04-26\nopen: true\nsummary:")
    edit(tiny / "papers" / "beta.yaml", "summary:", "added: 2025-01-02\nopen: false\nsummary:")
    frame = build_frame(require_pool(tiny), "entries")
    cases = {
        "added = 2026-04-26": ["alpha"],
        "added < 2026-01-01": ["beta"],
        "open = true": ["alpha"],
        "open = false": ["beta"],
        "open = null": ["delta", "epsilon", "gamma"],
    }
    assert {query: frame.select(parse(query, frame.columns).tree) for query in cases} == cases
    with pytest.raises(QueryError, match="write a date as YYYY-MM-DD"):
        parse("added = yesterday", frame.columns)
    with pytest.raises(QueryError, match="'yes' is not a value of 'open'; use one of true, false"):
        parse("open = yes", frame.columns)


def test_not_applicable_values_are_no_gap_cells(run):
    tables = {t["id"]: t for t in json.loads(run("gaps", "--format", "json", cwd=REPO).output)["tables"]}
    assert "NA" not in tables["topology-unit"]["cells"]
    assert len(tables["topology-unit"]["cells"]) * len(tables["topology-unit"]["columns"]) == 6 * 8


def test_claims_check_in_json(run, tiny):
    edit(tiny / "papers" / "gamma.yaml", "method: prompting", "method: rl")
    result = run("claims", "--check", "--format", "json", cwd=tiny)
    assert result.exit_code == 1
    assert [o["holds"] for o in json.loads(result.output)] == [False, True, True, True]


def test_usage_errors_are_one_line(run, tiny):
    result = run("stats", "--format", "xml", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        ("Error: Invalid value for '--format': 'xml' is not one of 'markdown', 'json', 'csv'. (see paperpool stats --help)\n"),
    )


@pytest.mark.slow
def test_the_unknown_marker_in_a_field_of_another_type_counts_as_not_given(run, tiny):
    """`add` writes TODO into every field it cannot fill, validate warns of each, and every
    command counts it as not given (issue 39: a year, a date or a mapping holding TODO made
    stats, gaps, claims, readme and build end in an internal error)."""
    edit(
        tiny / "registry.yaml",
        "  summary: {type: text, required: true}\n",
        "  summary: {type: text, required: true}\n  added: {type: date}\n",
    )
    (tiny / "papers" / "zz.yaml").write_text(
        "key: zz\ntitle: TODO\nauthors: TODO\nyear: TODO\nurls: TODO\nmethod: TODO\n"
        "decisions: TODO\nadded: TODO\nsummary: TODO\n",
        encoding="utf-8",
    )
    assert run("validate", cwd=tiny).output.endswith("0 errors, 8 warnings.\n")
    before = json.loads(run("stats", "--format", "json", cwd=tiny).output)
    assert before["totals"]["retained"] == 6
    assert before["counts"]["year"].get("(none)") == 1 and before["counts"]["method"].get("(none)") == 1  # not known yet
    for command in (["gaps"], ["claims"], ["export", "--format", "bib"], ["build", "--out", str(tiny.parent / "site")]):
        result = run(*command, cwd=tiny)
        assert result.exit_code == 0 and "internal error" not in result.output, (command, result.output)
