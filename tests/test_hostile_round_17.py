"""The pool side of issue 39's seventeenth hostile review: imports whose work grew with the
square of their input (the times are the benchmark's to show; these tests hold the shapes
that made the work grow)."""

from __future__ import annotations

import csv
import json
import random
import string

from paperpool.pool import stubs

from .conftest import edit


def test_records_of_one_citation_key_are_numbered_in_one_pass(run, tiny, tmp_path, monkeypatch):
    """16,000 CSL-JSON items of one citation-key took 32 s: each tried every number before
    its own. Each key now costs a try or two."""
    rng = random.Random(17)
    items = [
        {
            "type": "article-journal",
            "citation-key": "x",
            "title": _title(rng),
            "author": [{"family": "Doe", "given": "J"}],
            "issued": {"date-parts": [[2024]]},
        }
        for n in range(300)
    ]
    (tmp_path / "same.json").write_text(json.dumps(items), encoding="utf-8")
    asked = []
    taken = stubs.PoolIndex.key_taken
    monkeypatch.setattr(stubs.PoolIndex, "key_taken", lambda self, key: asked.append(key) or taken(self, key))
    result = run("import-csljson", "--dry-run", str(tmp_path / "same.json"), cwd=tiny)
    assert result.exit_code == 0, result.output
    assert "would create papers/x.yaml" in result.output and "would create papers/x-300.yaml" in result.output
    assert len(asked) < 3 * len(items)  # (it was 45,000)


def _title(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase + " ") for _ in range(60))


def test_import_csv_compares_the_file_s_titles_at_once(run, pool_copy, tmp_path, monkeypatch):
    """A CSV of 16,000 rows took 106 s: each row's title was compared with every title
    before it, one by one. The titles are now compared at once, as import-bib does."""
    exported = run("export", "--format", "csv", cwd=pool_copy).output.splitlines()
    rng = random.Random(17)
    rows = list(csv.DictReader(exported))
    with (tmp_path / "many.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        for n in range(200):
            row = dict(rows[0], key=f"k{n}", title=_title(rng))
            row.update({name: "" for name in ("arxiv_id", "doi", "openreview_id") if name in row})
            row["url"] = f"https://example.org/p{n}" if "url" in row else row.get("url")
            writer.writerow(row)
    one_by_one = []
    monkeypatch.setattr(stubs.process, "extractOne", lambda *args, **kwargs: one_by_one.append(args) or None)
    result = run("import-csv", "--dry-run", str(tmp_path / "many.csv"), cwd=pool_copy)
    assert result.exit_code == 0, result.output
    assert result.output == "would write 200 entries to papers/\n"
    assert one_by_one == []


def test_only_web_links_are_made_links_whatever_the_registry_types_them(run, pool_copy):
    """Round eighteen: a registry typing `urls` as text let `javascript:alert(...)` pass
    validate and go live on the entry's page, the README block and the feed; a link of one
    `[` (`http://[x`) and a DOI typed as a number ended build and readme in an internal
    error. Only the web links validate accepts are links, whatever the field's type."""
    from paperpool.analysis.views import links

    assert links({"urls": ["javascript:alert(1)", "http://[x", 5, "https://example.org/a"], "doi": 5}) == links(
        {"urls": ["https://example.org/a"]}
    )
    assert [link.url for link in links({"url": "https://example.org/b", "doi": "10.1234/x"})] == [
        "https://example.org/b",
        "https://doi.org/10.1234/x",
    ]
    edit(
        pool_copy / "registry.yaml",
        '  urls: {type: url_list, required: true, label: "Links"}',
        '  urls: {type: text_list, required: true, label: "Links"}',
    )
    edit(pool_copy / "papers" / "c3.yaml", "- https://arxiv.org/abs/2603.06859\n", "- 'javascript:alert(document.domain)'\n")
    assert run("validate", cwd=pool_copy).exit_code == 0
    assert run("build", cwd=pool_copy).exit_code == 0
    page = (pool_copy / "build" / "site" / "entries" / "c3.html").read_text(encoding="utf-8")
    assert 'href="javascript:' not in page and "javascript:alert" not in (pool_copy / "build" / "site" / "feed.xml").read_text(
        encoding="utf-8"
    )


def test_values_outside_a_wide_vocabulary_are_named_within_bounds(run, pool_copy):
    """Round eighteen: each of 1,000 values outside a vocabulary of 200 ids of 50 characters
    was compared by difflib with every id (19 s) and its line listed all 200 (10 MB of
    output). The closest id is looked for within problems.suggest's bounds, and a line
    lists the first 20."""
    ids = [f"value-{n:03d}-" + "x" * 40 for n in range(200)]
    values = "".join(f"      - id: {value}\n        label: V{n}\n" for n, value in enumerate(ids))
    edit(pool_copy / "registry.yaml", "vocabularies:\n", f"vocabularies:\n  wide:\n    label: Wide\n    values:\n{values}")
    edit(pool_copy / "registry.yaml", "entry_fields:\n", "entry_fields:\n  picked: {type: choice_list, vocabulary: wide}\n")
    bad = "".join(f"- other-{n:04d}-" + "y" * 40 + "\n" for n in range(1_000))
    path = pool_copy / "papers" / "c3.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "picked:\n" + bad, encoding="utf-8")
    result = run("validate", cwd=pool_copy)
    lines = [line for line in result.output.splitlines() if "is not an allowed value" in line]
    assert result.exit_code == 1 and len(lines) == 1_000
    assert all(len(line) < 2_000 and line.endswith(f"{ids[19]} or the 180 more in registry.yaml") for line in lines)


def test_titles_are_compared_by_their_first_thousand_characters():
    """Round eighteen: four titles of 900 kB, nearly alike, took validate 26 s (comparing
    two titles costs the product of their lengths). A title's key keeps its first
    COMPARED characters: long titles alike there are still found alike."""
    from paperpool.pool import identity

    long = "word " * 200_000
    assert len(identity.title_key(long)) == identity.COMPARED
    assert identity.similar_pairs([identity.title_key(long + "a"), identity.title_key(long + "b")], 90) == [(0, 1, 100.0)]


def test_a_claim_statement_of_a_5000_digit_number_is_no_stated_count(run, pool_copy):
    """Round nineteen: the stale-statement warning read every run of digits with int(),
    which refuses past 4,300 digits: every command ended in an internal error."""
    claim = (
        '\n  - id: big-number\n    statement: "The pool retains ' + "1" * 5_000 + ' entries."\n'
        '    over: entries\n    where: ""\n    expected: 84\n    boundary: "x"\n'
    )
    path = pool_copy / "claims.yaml"
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n" + claim, encoding="utf-8")
    result = run("validate", cwd=pool_copy)
    assert (result.exit_code, result.output) == (0, "ok: 84 entries and 32 exclusions, no problems.\n")


def test_descriptions_saying_no_entry_are_checked_in_one_pass_over_the_entries(run, pool_copy, monkeypatch):
    """Round nineteen: each value whose description said "no paper" was looked for in every
    entry's every field (19,000 of them over 1,000 entries: a minute a command). The
    entries' values are gathered once."""
    from paperpool.pool import validate

    values = "".join(f"      - {{id: v{n}, label: a, description: no paper}}\n" for n in range(200))
    unused = "".join(f"  unused{k}:\n    label: U{k}\n    values:\n{values}" for k in range(10))  # (200 values a vocabulary)
    edit(pool_copy / "registry.yaml", "vocabularies:\n", f"vocabularies:\n{unused}")
    passes = []
    gathered = validate._held
    monkeypatch.setattr(validate, "_held", lambda pool: passes.append(1) or gathered(pool))
    result = run("validate", "--no-cache", cwd=pool_copy)
    assert (result.exit_code, result.output, len(passes)) == (0, "ok: 84 entries and 32 exclusions, no problems.\n", 1)


def test_many_values_on_one_line_are_shown_up_to_a_bound(run, tiny, tmp_path):
    """Round twenty: 4,500 authors of 30 `*` each (180 kB, validate --strict clean) made the
    entry page one line of 135,000 escapes, and the build took 66 s (Python-Markdown's time
    on a line grows faster than its escapes). A line of many values shows as many as fit
    JOINED_SHOWN characters and says how many more there are."""
    from paperpool.rendering import markdown

    parts = [markdown.text("*" * 30 + f"{n:05d}") for n in range(4_500)]
    line = markdown.joined(parts, "; ")
    assert len(line) <= markdown.JOINED_SHOWN + 100 and line.endswith(f"; … and {4_500 - line.count('; '):,} more")
    assert markdown.joined(["a", "b"], ", ") == "a, b"
    record = tiny / "papers" / "alpha.yaml"
    names = ", ".join(f'"{"*" * 30}{n:05d}"' for n in range(4_500))
    edit(record, 'authors: ["Ames, Ann", "Bell, Bo"]', f"authors: [{names}]")
    built = run("build", "--out", str(tmp_path / "site"), "--keep-pages", str(tmp_path / "pages"), cwd=tiny)
    assert built.exit_code == 0, built.output
    lines = (tmp_path / "pages" / "entries" / "alpha.md").read_text(encoding="utf-8").splitlines()
    markdown_lines = [line for line in lines if line.count("\\*") > 30]  # (the BibTeX and RIS blocks are code)
    assert markdown_lines and all(len(line) < markdown.JOINED_SHOWN + 200 for line in markdown_lines)
    assert all("; … and 4,351 more" in line for line in markdown_lines)


def test_import_csv_with_a_bib_reads_fields_a_registry_types_otherwise(run, tmp_path):
    """Round twenty: a registry typing `urls` as a whole number (validate: ok) made
    `import-csv --bib` end in an internal error matching the row to its .bib record."""
    import yaml

    assert run("new-survey", "fresh", cwd=tmp_path).exit_code == 0
    pool = tmp_path / "fresh"
    for path in (pool / "papers").glob("*.yaml"):
        path.unlink()
    registry = yaml.safe_load((pool / "registry.yaml").read_text(encoding="utf-8"))
    for column in registry["csv"]["entries"]["source_columns"]:
        if column["field"] == "urls":
            column["convert"] = "integer"
    registry["entry_fields"]["urls"] = {"type": "integer", "label": "Links"}
    (pool / "registry.yaml").write_text(yaml.safe_dump(registry, sort_keys=False), encoding="utf-8")
    (pool / "new.csv").write_text(
        "key,title,authors,authors_complete,year,venue,arxiv_id,doi,urls,approach,setting,date_added,summary\n"
        'newone,Some title,"Doe, J",true,2020,X,2301.00001,,7,training,benchmark,2024-01-01,A sum\n',
        encoding="utf-8",
    )
    (pool / "new.bib").write_text(
        "@article{b1, title={Some title}, author={Doe, J}, year={2020}, eprint={2301.00001}}\n", encoding="utf-8"
    )
    result = run("import-csv", "new.csv", "--bib", "new.bib", cwd=pool)
    assert (result.exit_code, result.output) == (0, "wrote 1 entry to papers/\n")
