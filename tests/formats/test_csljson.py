"""CSL-JSON: `paperpool export --format csljson` (read back by citeproc-py and by
import-csljson) and `paperpool import-csljson` (Zotero's export: stubs as import-bib
writes them, the same duplicates skipped, bad input refused with nothing written)."""

from __future__ import annotations

import json

import pytest
import yaml
from citeproc import (
    Citation,
    CitationItem,
    CitationStylesBibliography,
    CitationStylesStyle,
    formatter,
)
from citeproc.source.json import CiteProcJSON

from paperpool.formats import csljson

from ..conftest import REPO, edit

ZOTERO = REPO / "tests" / "bib" / "zotero.json"
MALT = {
    "id": "malt",
    "type": "paper-conference",
    "title": "MALT: Improving Reasoning with Multi-Agent LLM Training",
    "author": [
        {"family": "Motwani", "given": "Sumeet Ramesh"},
        {"family": "Smith", "given": "Chandler"},
        {"family": "Das", "given": "Rocktim Jyoti"},
        {"family": "Rafailov", "given": "Rafael"},
        {"family": "Laptev", "given": "Ivan"},
        {"family": "Torr", "given": "Philip"},
        {"family": "Pizzati", "given": "Fabio"},
        {"family": "Clark", "given": "Ronald"},
        {"family": "Schroeder de Witt", "given": "Christian"},
    ],
    "issued": {"date-parts": [[2025]]},
    "container-title": "Conference on Language Modeling (COLM)",
    "URL": "https://arxiv.org/abs/2412.01928",
    "note": "arXiv:2412.01928",
}


def render_bibliography(items: list[dict]) -> list[str]:
    """The items as citeproc-py's bibliography in the Harvard style it ships, as plain text."""
    style = CitationStylesStyle("harvard-cite-them-right", validate=False)
    bibliography = CitationStylesBibliography(style, CiteProcJSON(items), formatter.plain)
    for item in items:
        bibliography.register(Citation([CitationItem(item["id"])]))
    return [str(entry) for entry in bibliography.bibliography()]


def test_an_entry_as_csl_json_exactly(run, pool_copy):
    result = run("export", "--format", "csljson", cwd=pool_copy)
    assert result.exit_code == 0
    items = json.loads(result.output)
    assert [item["id"] for item in items] == sorted(path.stem for path in (pool_copy / "papers").glob("*.yaml"))
    assert next(item for item in items if item["id"] == "malt") == MALT
    by_id = {item["id"]: item for item in items}
    # a company is one literal name; a misc with an arXiv id is a preprint, one with a link a web page
    assert by_id["kimi-k2-5"]["author"] == [{"literal": "Kimi Team"}] and by_id["kimi-k2-5"]["type"] == "article"
    assert (
        by_id["openai-codex"]["type"] == "webpage" and "note" not in by_id["openai-codex"]
    )  # howpublished only repeats the links
    assert {item["type"] for item in items} == {"article-journal", "paper-conference", "article", "webpage"}


@pytest.mark.slow
def test_the_csl_json_export_renders_through_citeproc(run, pool_copy):
    items = json.loads(run("export", "--format", "csljson", cwd=pool_copy).output)
    rendered = render_bibliography(items)
    assert len(rendered) == len(items)
    malt = next(text for text in rendered if "MALT" in text)
    assert malt == (
        "Motwani, S.R. et al. (2025) “MALT: Improving Reasoning with Multi-Agent LLM Training”, Conference on "
        "Language Modeling (COLM). Available at: https://arxiv.org/abs/2412.01928."
    )
    assert "Kimi Team (2026) Kimi K2.6 Tech Blog. Available at: https://www.kimi.com/blog/kimi-k2-6." in rendered


@pytest.mark.slow
def test_the_csl_json_export_imports_back_to_the_records(run, pool_copy, empty_pool, tmp_path):
    edit(
        pool_copy / "papers" / "malt.yaml",
        "title: 'MALT: Improving Reasoning with Multi-Agent LLM Training'",
        "title: 'MALT <i>and</i> {braces} 100% of $x$ & y_1'",
    )
    exported = tmp_path / "pool.json"
    assert run("export", "--format", "csljson", "-o", str(exported), cwd=pool_copy).exit_code == 0
    result = run("import-csljson", str(exported), cwd=empty_pool)
    assert result.exit_code == 0 and result.output.endswith(
        "created 84 entries, skipped 0 duplicates; fill in the TODO fields, then run paperpool validate.\n"
    )
    for path in sorted((pool_copy / "papers").glob("*.yaml")):
        record = yaml.safe_load(path.read_text(encoding="utf-8"))
        stub = yaml.safe_load((empty_pool / "papers" / path.name).read_text(encoding="utf-8"))
        bibtex = record.get("bibtex") or {}
        assert stub["authors"] == record["authors"], path.stem
        assert stub["year"] == int(bibtex.get("year") or record["year"]), path.stem
        assert stub["doi"] == (record["doi"] and record["doi"].lower()), path.stem  # DOIs are read in lower case
        assert stub["arxiv_id"] == record["arxiv_id"], path.stem
        assert stub["urls"][0] == record["urls"][0], path.stem
        assert stub["bibtex"]["type"] == bibtex["type"], path.stem
        if path.stem != "malt":
            assert stub["title"] == record["title"], path.stem
    # CSL's rich text (<i>) is read as markup, as every citeproc reads it; TeX math is
    # written as text for people (issue 38: only the BibTeX keeps it); the rest as it was
    assert yaml.safe_load((empty_pool / "papers" / "malt.yaml").read_text())["title"] == "MALT and {braces} 100% of x & y_1"


REPORT = (
    "{verb} papers/okafor2026learning.yaml from zotero.json: item 2 (okafor2026learning)\n"
    "{verb} papers/lee2026swarm.yaml from zotero.json: item 3 (lee2026swarm)\n"
    "skipped zotero.json: item 1 (motwani2024malt): duplicate of papers/malt.yaml (same arXiv id 2412.01928)\n"
    "skipped zotero.json: item 4 (lee2026swarm): duplicate of zotero.json: item 3 (lee2026swarm) (title 100% alike)\n"
)


def test_import_csljson_writes_exactly_the_new_papers(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run("import-csljson", str(ZOTERO), "--date-added", "2026-11-20", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        0,
        REPORT.format(verb="created")
        + ("created 2 entries, skipped 2 duplicates; fill in the TODO fields, then run paperpool validate.\n"),
    )
    after = snapshot(pool_copy)
    assert {name: digest for name, digest in after.items() if name in before} == before
    assert sorted(set(after) - set(before)) == ["papers/lee2026swarm.yaml", "papers/okafor2026learning.yaml"]
    stub = (pool_copy / "papers" / "okafor2026learning.yaml").read_text(encoding="utf-8")
    assert stub.startswith(
        "key: okafor2026learning\n"
        "title: 'Learning When to Stop: Credit for Orchestrators'\n"  # CSL's <i> markup dropped
        "authors:\n- Okafor, Chidi\n- van der Berg, Anna\n- Müller, Jörg\n"  # the particle joins the family name
        "authors_complete: true\naffiliation: null\nyear: 2026\npreprint_year: null\n"
        "venue: Proceedings of the 43rd International Conference on Machine Learning\n"
        "arxiv_id: null\ndoi: null\nopenreview_id: AbCdEf9876\nurls:\n- https://openreview.net/forum?id=AbCdEf9876\n"
    )
    assert stub.endswith(
        "bibtex:\n  type: inproceedings\n  key: okafor2026learning\n"
        "  booktitle: Proceedings of the 43rd International Conference on Machine Learning\n  pages: 1200-1215\n"
        "second_reading: null\n"
    )
    other = (pool_copy / "papers" / "lee2026swarm.yaml").read_text(encoding="utf-8")
    assert "authors:\n- DeepLab Research Team\n" in other and "doi: 10.1234/tmlr.2026.0077\n" in other
    assert other.endswith(
        "bibtex:\n  type: article\n  key: lee2026swarm\n  journal: Transactions on Machine Learning Research\n"
        "  volume: '3'\n  number: '2'\nsecond_reading: null\n"
    )


def test_import_csljson_dry_run_writes_nothing(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run("import-csljson", str(ZOTERO), "--dry-run", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        0,
        REPORT.format(verb="would create") + ("would create 2 entries, skipped 2 duplicates (dry run: nothing written).\n"),
    )
    assert snapshot(pool_copy) == before


def test_import_csljson_as_exclusions(run, pool_copy):
    result = run("import-csljson", str(ZOTERO), "--exclusions", "--dry-run", cwd=pool_copy)
    assert result.exit_code == 0
    assert (
        result.output.splitlines()[0]
        == "would create exclusions/okafor2026learning.yaml from zotero.json: item 2 (okafor2026learning)"
    )


FIX = "export the items from Zotero with the format CSL JSON"


@pytest.mark.slow
@pytest.mark.parametrize(
    "text, message",
    [
        ("<html><body>Not found</body></html>", f"Error: bad.json:1: is not JSON (Expecting value, column 1); {FIX}\n"),
        ('{"title": "One paper"}', f"Error: bad.json: is a JSON object, not a list of CSL items; {FIX}\n"),
        ("[]", f"Error: bad.json: holds no items; {FIX}\n"),
        ('[{"title": "A", "issued": {"date-parts": [[NaN]]}}]', f"Error: bad.json: NaN is not a JSON number; {FIX}\n"),
        ('[{"title": "A", "title": "B"}]', f'Error: bad.json: the key "title" is given twice in one object; {FIX}\n'),
        ("[" * 100_000 + "]" * 100_000, f"Error: bad.json: is nested too deep to be CSL-JSON; {FIX}\n"),
        (
            '[{"title": "A"}, "B"]',
            'Error: bad.json: item 2: is a JSON string, not an object; each item is an object such as {"type": ..., "title": ...}\n',
        ),
        ('[{"type": "book"}]', 'Error: bad.json: item 1: title: missing; every item needs a title, such as "title": "..."\n'),
        ('[{"title": ["A", "list"]}]', "Error: bad.json: item 1: title: is a JSON list, not text; give it as text\n"),
        (
            '[{"title": "A", "author": "Doe, Jane"}]',
            (
                "Error: bad.json: item 1: author: is a JSON string, not a list; give the names as a list of objects such as "
                '{"family": "Doe", "given": "Jane"}\n'
            ),
        ),
        (
            '[{"title": "A", "author": [{"family": 7}]}, {"title": "B", "issued": "2026", "volume": {"v": 1}}]',
            (
                "Error: bad.json: nothing imported, 3 problems:\n"
                "bad.json: item 1: author: name 1: family: is a JSON number, not text; give it as text\n"
                "bad.json: item 2: volume: is a JSON object, not text or a number; give it as text\n"
                'bad.json: item 2: issued: is not a CSL date; give it as {"date-parts": [[2026]]} or {"literal": "2026"}\n'
            ),
        ),
        (
            '[{"title": "A paper on credit", "URL": "javascript:alert(1)"}]',
            (
                "Error: bad.json: nothing imported, 1 problem:\n"
                "bad.json: item 1: urls: 'javascript:alert(1)' uses scheme 'javascript', not http or https; give an http:// or https:// link\n"
            ),
        ),
        (
            '[{"title": "x"}]'.ljust(20_000_001),
            "Error: bad.json:1: file is 20,000,001 bytes, over the 20,000,000-byte limit; is it the right file?\n",
        ),
    ],
    ids=[
        "html-page",
        "not-a-list",
        "no-items",
        "nan",
        "key-twice",
        "nested-too-deep",
        "item-not-an-object",
        "no-title",
        "title-a-list",
        "authors-as-text",
        "several-problems",
        "javascript-link",
        "too-large",
    ],
)
def test_import_csljson_bad_input_writes_nothing(run, pool_copy, tmp_path, snapshot, text, message):
    (tmp_path / "bad.json").write_text(text, encoding="utf-8")
    before = snapshot(pool_copy)
    result = run("import-csljson", "--all-or-nothing", str(tmp_path / "bad.json"), cwd=pool_copy)
    assert (result.exit_code, result.output) == (1, message)
    assert snapshot(pool_copy) == before


@pytest.mark.slow
def test_an_item_of_many_bad_names_words_the_first_and_counts_them_all(run, tiny, tmp_path):
    """An item of 200,000 authors that are numbers: every problem was a string, twice (20 MB
    took 4 GB); the first fifty are worded and all counted."""
    path = tmp_path / "names.json"
    path.write_text(json.dumps([{"title": "T", "author": [1] * 200_000}]), encoding="utf-8")
    worded, counted = csljson.item_problems({"title": "T", "author": [1] * 200_000}, 3)
    assert (len(worded), counted) == (3, 200_000)
    result = run("import-csljson", str(path), cwd=tiny)
    lines = result.output.splitlines()
    assert (result.exit_code, len(lines)) == (1, 52)
    assert lines[0] == "Error: names.json: nothing imported, 200,000 problems:"
    assert lines[1] == (
        "names.json: item 1: author: name 1: is a JSON number, not an object; give it as "
        '{"family": "Doe", "given": "Jane"} or {"literal": "..."}'
    )
    assert lines[-1] == "... and 199,950 more"


@pytest.mark.parametrize("year", ["\u00b2", "9" * 5000])
def test_a_bibtex_year_that_is_no_number_is_exported_as_written(run, pool_copy, year):
    """A hostile review: a record's bibtex.year of '²' passes validate (str.isdigit() is
    true of it) and crashed the CSL-JSON export, and so the build, in int(); a year of
    5,000 digits would too (int() refuses past 4,300). Both go out as the text written."""
    edit(pool_copy / "papers" / "malt.yaml", "  year: '2025'", f"  year: '{year}'")
    result = run("export", "--format", "csljson", cwd=pool_copy)
    assert result.exit_code == 0, result.output
    assert next(item for item in json.loads(result.output) if item["id"] == "malt")["issued"] == {"literal": year}


def test_an_item_holding_half_a_character_is_listed_and_the_others_imported(run, tiny, tmp_path):
    """Issue 39's sixteenth review: a title with an unpaired \\ud800, which Python's json
    reads as a lone surrogate, ended the import in an internal error when the record was
    written. It is that item's problem; the good item is imported."""
    path = tmp_path / "half.json"
    path.write_text(
        '[{"id": "bad", "type": "article-journal", "title": "Bad \\ud800 title", "issued": {"date-parts": [[2024]]}},'
        ' {"id": "good", "type": "article-journal", "title": "A good title", "author": [{"family": "Doe", "given": "J"}],'
        ' "issued": {"date-parts": [[2024]]}}]',
        encoding="utf-8",
    )
    result = run("import-csljson", str(path), cwd=tiny)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "created papers/good.yaml from half.json: item 2 (good)",
        "not imported: half.json: item 1: a text holds half of a character (an unpaired \\ud800 to \\udfff), which no "
        "record can hold; export the item again",
        "created 1 entry, skipped 0 duplicates; fill in the TODO fields, then run paperpool validate.",
        "Error: 1 record not imported (1 line above); fix them and import the file again (what was imported is then "
        "skipped as a duplicate), or give --all-or-nothing to import none",
    ]
