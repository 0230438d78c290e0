"""The command line: exact output, exit codes, and that every command has help."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import click
import pytest
import yaml

from paperpool.cli import commands as cli_module
from paperpool.cli.commands import cli

from ..conftest import REPO, SOURCE

SHIPPED_OK = "ok: 84 entries and 32 exclusions, no problems.\n"


def _commands(group, path=()):
    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


def test_every_command_has_help(run, pool_copy):
    assert cli.commands, "no commands registered"
    for path, command in _commands(cli):
        result = run(*path, "--help", cwd=pool_copy)
        name = " ".join(path)
        assert result.exit_code == 0, name
        assert result.output.startswith(f"Usage: paperpool {name}"), name
        assert command.help and len(command.help.split()) >= 5, f"{name} needs a real description"


def test_top_level_help_lists_commands(run, pool_copy):
    result = run("--help", cwd=pool_copy)
    assert result.exit_code == 0
    for name in cli.commands:
        assert f"  {name}" in result.output


def test_validate_shipped_pool_is_clean(run):
    result = run("validate", cwd=REPO)
    assert (result.exit_code, result.output) == (0, SHIPPED_OK)


def test_validate_strict_on_clean_pool(run, pool_copy):
    assert run("validate", "--strict", cwd=pool_copy).output == SHIPPED_OK


def test_root_is_found_from_a_subfolder(run, pool_copy):
    result = run("validate", cwd=pool_copy / "papers")
    assert (result.exit_code, result.output) == (0, SHIPPED_OK)


def test_root_option_points_at_a_pool(run, pool_copy, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run("--root", str(pool_copy), "validate", cwd=elsewhere)
    assert (result.exit_code, result.output) == (0, SHIPPED_OK)


def test_no_registry_anywhere_is_one_clear_error(run, tmp_path):
    result = run("validate", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output == (
        f"Error: no registry.yaml in {tmp_path.resolve()} or any folder above it; run inside a pool or pass --root DIR\n"
    )


def _rows(text: str, key: str) -> dict[str, dict]:
    return {row[key]: row for row in csv.DictReader(io.StringIO(text))}


@pytest.mark.slow
def test_export_csv_reproduces_the_source_entries(run, pool_copy):
    result = run("export", "--format", "csv", cwd=pool_copy)
    assert result.exit_code == 0
    exported = _rows(result.output, "key")
    source_text = (SOURCE / "papers-facts.csv").read_text(encoding="utf-8")
    source = _rows(source_text, "key")
    assert len(source) == 84 and exported.keys() == source.keys()
    columns = next(csv.reader(io.StringIO(source_text)))
    # a field the pool has corrected since the source (a venue found, a year) is the source's in its `changes`
    later = {key: _changed_since_source(pool_copy / "papers" / f"{key}.yaml") for key in source}
    for key, row in source.items():
        assert {c: exported[key][c] for c in columns if c not in later[key]} == {
            c: v for c, v in row.items() if c not in later[key]
        }, key
        for column, was in later[key].items():
            if column in columns:
                assert ("" if was is None else str(was)) == row[column], (key, column)


def _changed_since_source(path) -> dict:
    """Field -> the value a record's changes say it held before the pool changed it (a source
    column of the same name then holds that value)."""
    changes = yaml.safe_load(path.read_text(encoding="utf-8")).get("changes") or []
    found = {}
    for change in reversed(changes):  # the earliest change after the source's data holds its value
        if str(change["date"]) > "2026-05-04":
            found.update(change["was"])
    return found


def test_export_csv_starts_with_the_source_columns(run, pool_copy):
    header = run("export", cwd=pool_copy).output.splitlines()[0].split(",")
    assert header[:18] == [
        "key",
        "title",
        "first_author",
        "affiliation",
        "year",
        "arxiv_id",
        "venue",
        "url",
        "category",
        "is_rl",
        "reward_type",
        "credit_granularity",
        "orchestration_form",
        "scenario",
        "is_core",
        "one_liner",
        "verified",
        "notes",
    ]
    assert "reward_family" in header[18:] and "subdecisions" in header[18:]


def test_export_csv_reproduces_the_source_exclusions(run, pool_copy):
    result = run("export", "--exclusions", cwd=pool_copy)
    assert result.exit_code == 0
    assert result.output.splitlines()[0].startswith(
        "record_id,source,query_family,screening_label,identifier,url,date_screened,stage,exclusion_reason"
    )
    exported = _rows(result.output, "record_id")
    source = _rows((SOURCE / "excluded-facts.csv").read_text(encoding="utf-8"), "record_id")
    assert len(source) == 32 and exported.keys() == source.keys()
    for record_id, row in source.items():
        assert {c: exported[record_id][c] for c in row} == row, record_id


def test_export_json_holds_every_record(run, pool_copy):
    result = run("export", "--format", "json", cwd=pool_copy)
    document = json.loads(result.output)
    assert len(document["entries"]) == 84 and len(document["exclusions"]) == 32
    assert document["survey"]["arxiv_id"] == "2605.02801"
    kimi = next(e for e in document["entries"] if e["key"] == "kimi-k2-5")
    assert (kimi["reward_family"], kimi["credit_unit"], kimi["subdecisions"]) == (
        "R7",
        "orchestrator",
        {"O1": "trained", "O2": "trained", "O4": "trained", "O5": "designed"},
    )
    # every tag with its evidence: the export keeps it (issue 19)
    assert [item["about"] for item in kimi["subdecision_evidence"]] == ["O1", "O2", "O4", "O5"]
    assert all(item["url"].startswith("https://") and item["note"] for item in kimi["subdecision_evidence"])
    assert all(len(e["subdecision_evidence"]) >= 1 for e in document["entries"])


def test_export_to_a_file(run, pool_copy):
    (pool_copy / "out").mkdir()  # -o creates no folder (test_environment has the refusal)
    result = run("export", "-o", "out/pool.csv", cwd=pool_copy)
    assert (result.exit_code, result.output) == (0, "wrote out/pool.csv\n")
    assert (pool_copy / "out" / "pool.csv").read_text(encoding="utf-8").startswith("key,title,")


@pytest.mark.slow
def test_export_refuses_an_invalid_pool(run, pool_copy, snapshot):
    path = pool_copy / "papers" / "magrpo.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("is_rl: 'yes'", "is_rl: maybe", 1), encoding="utf-8")
    before = snapshot(pool_copy)
    result = run("export", "-o", "x.csv", cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output == (
        "Error: the pool is not valid: papers/magrpo.yaml:18: is_rl: 'maybe' is not an allowed value; "
        "use one of yes, partial, no; run paperpool validate\n"
    )
    assert snapshot(pool_copy) == before


@pytest.mark.slow
def test_exported_csv_imports_back_to_the_same_csv(run, pool_copy, empty_pool, tmp_path):
    exported = run("export", cwd=pool_copy).output
    (tmp_path / "pool.csv").write_text(exported, encoding="utf-8")
    result = run("import-csv", str(tmp_path / "pool.csv"), cwd=empty_pool)
    assert (result.exit_code, result.output) == (0, "wrote 84 entries to papers/\n")
    assert run("export", cwd=empty_pool).output == exported


SMALL_CSV = (
    "key,title,first_author,affiliation,year,arxiv_id,venue,url,category,is_rl,reward_type,"
    "credit_granularity,orchestration_form,scenario,is_core,one_liner,verified,notes\n"
    'new-paper,A New Paper on Orchestration,"Doe, Jane",unknown,2026,2611.00001,arXiv,'
    "https://arxiv.org/abs/2611.00001,rl_method,yes,role,role,hierarchical,coding,core,"
    "Trains a planner.,yes,\n"
)


@pytest.mark.slow
def test_import_csv_writes_one_file_per_row(run, pool_copy, tmp_path):
    (tmp_path / "new.csv").write_text(SMALL_CSV, encoding="utf-8")
    result = run("import-csv", str(tmp_path / "new.csv"), "--date-added", "2026-11-01", cwd=pool_copy)
    assert (result.exit_code, result.output) == (0, "wrote 1 entry to papers/\n")
    text = (pool_copy / "papers" / "new-paper.yaml").read_text(encoding="utf-8")
    assert "reward_family: R3\n" in text and "credit_unit: role\n" in text
    assert "evidence_level: TODO\n" in text and "date_added: 2026-11-01\n" in text
    assert "affiliation: null\n" in text
    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 0
    assert result.output == (
        "papers/new-paper.yaml:26: subdecision_evidence: warning: not filled in yet; replace TODO with a list of evidence "
        "items (about, url, note)\n"
        "papers/new-paper.yaml:30: evidence_level: warning: not filled in yet; replace TODO with one of "
        "peer_reviewed, preprint, technical_report, product_documentation, blog, case_study\n"
        "0 errors, 2 warnings.\n"
    )


def test_import_csv_never_overwrites(run, pool_copy, tmp_path, snapshot):
    (tmp_path / "again.csv").write_text(SMALL_CSV.replace("new-paper", "magrpo"), encoding="utf-8")
    before = snapshot(pool_copy)
    result = run("import-csv", str(tmp_path / "again.csv"), cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output == (
        "Error: again.csv: nothing imported, 1 problem:\n"
        "again.csv:2: key: 'magrpo' is already in the pool (papers/magrpo.yaml); import never overwrites: "
        "remove the row or the file\n"
    )
    assert snapshot(pool_copy) == before


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "key,title\nx,y\n",
            (
                "Error: bad.csv:1: header lacks column(s) first_author, affiliation, year, arxiv_id, venue, url, "
                "category, is_rl, reward_type, credit_granularity, orchestration_form, scenario, is_core, one_liner, verified, notes; "
                "the entries CSV needs key, title, first_author, affiliation, year, arxiv_id, venue, url, category, is_rl, "
                "reward_type, credit_granularity, orchestration_form, scenario, is_core, one_liner, verified, notes\n"
            ),
        ),
        (SMALL_CSV + "short,row\n", "Error: bad.csv:3: row has 2 cells but the header has 18; check for an unquoted comma\n"),
        (
            SMALL_CSV.replace(",2026,", ",soon,"),
            "Error: bad.csv: nothing imported, 1 problem:\nbad.csv:2: year: 'soon' is not a whole number; correct the cell\n",
        ),
        (
            SMALL_CSV.replace(",yes,role,", ",maybe,role,"),
            "Error: bad.csv: nothing imported, 1 problem:\nbad.csv:2: is_rl: 'maybe' is not an allowed value; use one of yes, partial, no\n",
        ),
        ("", "Error: bad.csv:1: the file is empty; the first line must name the columns\n"),
        (
            SMALL_CSV.replace("key,", "key,colour,", 1),
            "Error: bad.csv:1: unknown column(s) colour; remove them or declare them under csv: entries: in registry.yaml\n",
        ),
    ],
    ids=["wrong-header", "ragged-row", "bad-number", "bad-vocabulary", "empty", "unknown-column"],
)
def test_import_csv_bad_input_writes_nothing(run, pool_copy, tmp_path, snapshot, text, message):
    (tmp_path / "bad.csv").write_text(text, encoding="utf-8")
    before = snapshot(pool_copy)
    result = run("import-csv", str(tmp_path / "bad.csv"), cwd=pool_copy)
    assert (result.exit_code, result.output) == (1, message)
    assert snapshot(pool_copy) == before


def test_import_csv_dry_run_writes_nothing(run, pool_copy, tmp_path, snapshot):
    (tmp_path / "new.csv").write_text(SMALL_CSV, encoding="utf-8")
    before = snapshot(pool_copy)
    result = run("import-csv", str(tmp_path / "new.csv"), "--dry-run", cwd=pool_copy)
    assert (result.exit_code, result.output) == (0, "would write 1 entry to papers/\n")
    assert snapshot(pool_copy) == before


def test_an_unexpected_failure_prints_one_line_not_a_traceback(monkeypatch, capsys, pool_copy):
    def broken(root):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("paperpool.pool.validate.validate", broken)
    monkeypatch.setattr(sys, "argv", ["paperpool", "--root", str(pool_copy), "validate"])
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main()
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: internal error (RuntimeError: disk on fire); please report it")
    assert "Traceback" not in err


@pytest.mark.slow
def test_the_installed_command_runs(pool_copy):
    result = subprocess.run(
        [sys.executable, "-m", "paperpool", "validate"], cwd=pool_copy, capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, SHIPPED_OK, "")


def test_format_choices_match_what_each_module_can_write():
    from paperpool.analysis import audit, claims, diff, gaps, stats
    from paperpool.formats import export

    modules = {"stats": stats, "gaps": gaps, "diff": diff, "audit": audit, "claims": claims, "export": export}
    assert {name: list(module.FORMATS) for name, module in modules.items()} == cli_module.FORMAT_CHOICES
    from paperpool.traces import cli as trace_cli
    from paperpool.traces import metrics, summary, tables

    assert list(metrics.FORMATS) == trace_cli.METRICS_FORMATS
    assert list(tables.FORMATS) == trace_cli.CORPUS_FORMATS
    assert list(summary.FORMATS) == trace_cli.SUMMARY_FORMATS


@pytest.mark.slow
def test_validate_does_not_import_numpy_pandas_or_the_trace_libraries():
    # validate runs in pre-commit hooks: it must not pay for numpy or pandas, nor for what traces need
    code = (
        "import sys; from paperpool.cli.commands import main; sys.argv = ['paperpool', 'validate']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\nprint([m for m in ('numpy', 'pandas', 'orjson', 'msgspec') if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.stdout.splitlines()[-1] == "[]"
