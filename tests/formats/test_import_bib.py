"""`paperpool import-bib`: stubs for new papers only, duplicates named, nothing overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from paperpool.files.yamlio import load_yaml
from paperpool.pool.stubs import Planned, write_planned

from ..conftest import FILLED, REPO, edit

BIB = REPO / "tests" / "bib"

# The 5 records of tests/bib/new-papers.bib: MALT again (same arXiv id as papers/malt.yaml),
# a new TMLR paper, the Puppeteer paper again (its title with a full stop), a new arXiv
# paper, and the same new paper a second time.
REPORT = (
    "{verb} papers/garcia2026-swarm.yaml from new-papers.bib:9 (Garcia2026:Swarm)\n"
    "{verb} papers/newone.yaml from new-papers.bib:22 (newone)\n"
    "skipped new-papers.bib:1 (motwani2024malt): duplicate of papers/malt.yaml (same arXiv id 2412.01928)\n"
    "skipped new-papers.bib:17 (dup2): duplicate of papers/puppeteer.yaml (title 100% alike)\n"
    "skipped new-papers.bib:28 (newone2): duplicate of new-papers.bib:22 (newone) (title 100% alike)\n"
)


def test_import_bib_writes_exactly_the_new_papers(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run("import-bib", str(BIB / "new-papers.bib"), "--date-added", "2026-11-20", cwd=pool_copy)
    assert result.exit_code == 0
    assert result.output == REPORT.format(verb="created") + (
        "created 2 entries, skipped 3 duplicates; fill in the TODO fields, then run paperpool validate.\n"
    )
    after = snapshot(pool_copy)
    assert {name: digest for name, digest in after.items() if name in before} == before  # no file changed
    assert sorted(set(after) - set(before)) == ["papers/garcia2026-swarm.yaml", "papers/newone.yaml"]

    stub = (pool_copy / "papers" / "garcia2026-swarm.yaml").read_text(encoding="utf-8")
    assert stub.startswith(
        "key: garcia2026-swarm\n"
        "title: 'Learning to Stop: RL for Orchestrator Halting in Agent Swarms'\n"
        "authors:\n- García, María\n- Müller, Jörg\n- van der Berg, Anna\n"  # LaTeX decoded, "Last, First"
        "authors_complete: true\n"
        "affiliation: null\n"
        "year: 2026\n"
        "preprint_year: null\n"
        "venue: Transactions on Machine Learning Research\n"
        "arxiv_id: null\n"
        "doi: 10.1234/tmlr.2026.0042\n"
        "openreview_id: AbCdEf1234\n"  # from the OpenReview link
        "urls:\n- https://openreview.net/forum?id=AbCdEf1234\n"
        "category: TODO\n"
    )
    assert "date_added: 2026-11-20\n" in stub
    assert stub.endswith(
        "bibtex:\n  type: article\n  key: Garcia2026:Swarm\n  journal: Transactions on Machine Learning Research\n"
        "second_reading: null\n"
    )
    other = (pool_copy / "papers" / "newone.yaml").read_text(encoding="utf-8")
    assert "arxiv_id: '2610.01234'\n" in other  # from `note = {arXiv:2610.01234}`
    assert "urls:\n- https://arxiv.org/abs/2610.01234\n" in other  # no link in the .bib: the id's page

    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 0 and result.output.endswith("0 errors, 26 warnings.\n")
    for key in ("garcia2026-swarm", "newone"):
        for name, value in FILLED.items():
            edit(pool_copy / "papers" / f"{key}.yaml", f"\n{name}: TODO\n", f"\n{name}: {value}\n")
    result = run("validate", cwd=pool_copy)
    assert (result.exit_code, result.output) == (0, "ok: 86 entries and 32 exclusions, no problems.\n")


def test_import_bib_dry_run_writes_nothing(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run("import-bib", str(BIB / "new-papers.bib"), "--dry-run", cwd=pool_copy)
    assert result.exit_code == 0
    assert result.output == REPORT.format(verb="would create") + (
        "would create 2 entries, skipped 3 duplicates (dry run: nothing written).\n"
    )
    assert snapshot(pool_copy) == before


def test_import_bib_twice_skips_everything_the_second_time(run, pool_copy):
    assert run("import-bib", str(BIB / "new-papers.bib"), cwd=pool_copy).exit_code == 0
    result = run("import-bib", str(BIB / "new-papers.bib"), cwd=pool_copy)
    assert result.exit_code == 0
    assert result.output.splitlines()[:2] == [
        "skipped new-papers.bib:1 (motwani2024malt): duplicate of papers/malt.yaml (same arXiv id 2412.01928)",
        "skipped new-papers.bib:9 (Garcia2026:Swarm): duplicate of papers/garcia2026-swarm.yaml (same DOI 10.1234/tmlr.2026.0042)",
    ]
    assert result.output.endswith("created 0 entries, skipped 5 duplicates.\n")


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "@misc{a,\n  title = {Unbalanced {braces},\n  year = 2023\n}\n@misc{b, title={Fine}}\n",
            (
                "Error: bad.bib:1: this record cannot be read (Unexpected block start: `@misc`. Was still looking for "
                "field-value closing `,` or `}`, noticed on line 5); check its braces, quotes and commas\n"
            ),
        ),
        (
            "@misc{a, title={One}, year={2024}}\n\n@misc{a, title={Two}, year={2024}}\n",
            "Error: bad.bib:3: citation key 'a' is used twice (first on line 1); give each record its own key\n",
        ),
        (
            "@misc{a, title={A paper on credit}, year={2024}}\n@misc{b, author={Doe, Jane}, year={2024}}\n",
            "Error: bad.bib: nothing imported, 1 problem:\nbad.bib:2: title: record 'b' has no title; add title = {...} to it\n",
        ),
        (
            "@misc{a, title={A paper on credit}, year={2024}, url={javascript:alert(1)}}\n",
            "Error: bad.bib: nothing imported, 1 problem:\nbad.bib:1: urls: 'javascript:alert(1)' uses scheme 'javascript', not http or https; give an http:// or https:// link\n",
        ),
        ("% only a comment\n", "Error: bad.bib: no BibTeX records found; a record starts like @article{key, ...\n"),
        (
            "@misc{a, title={x}}\n".ljust(5_000_001, " "),
            "Error: bad.bib:1: file is 5,000,001 bytes, over the 5,000,000-byte limit; is it the right file?\n",
        ),
    ],
    ids=["unbalanced-braces", "duplicate-citation-key", "no-title", "javascript-link", "no-records", "too-large"],
)
def test_import_bib_bad_input_writes_nothing(run, pool_copy, tmp_path, snapshot, text, message):
    (tmp_path / "bad.bib").write_text(text, encoding="utf-8")
    before = snapshot(pool_copy)
    result = run("import-bib", "--all-or-nothing", str(tmp_path / "bad.bib"), cwd=pool_copy)
    assert (result.exit_code, result.output) == (1, message)
    assert snapshot(pool_copy) == before


def test_import_bib_reads_arxivs_own_bibtex(run, pool_copy, tmp_path):
    """The BibTeX arXiv's "Export citation" gives: the venue is arXiv, not the journal line."""
    (tmp_path / "a.bib").write_text(
        "@article{chen2024optima,\n  title={Optima: Optimizing Effectiveness and Efficiency for LLM-Based "
        "Multi-Agent System},\n  author={Chen, Weize and Yuan, Jiarui and others},\n  "
        "journal={arXiv preprint arXiv:2410.08115},\n  year={2024}\n}\n",
        encoding="utf-8",
    )
    assert run("import-bib", str(tmp_path / "a.bib"), cwd=pool_copy).exit_code == 0
    text = (pool_copy / "papers" / "chen2024optima.yaml").read_text(encoding="utf-8")
    assert "authors_complete: false\n" in text and "venue: arXiv\n" in text and "arxiv_id: '2410.08115'\n" in text
    assert "urls:\n- https://arxiv.org/abs/2410.08115\n" in text


def test_import_bib_gives_a_taken_key_a_suffix(run, pool_copy, tmp_path):
    (tmp_path / "k.bib").write_text(
        "@misc{MALT, title={A different paper called MALT}, year={2026}, author={Roe, Rick}}\n", encoding="utf-8"
    )
    result = run("import-bib", str(tmp_path / "k.bib"), cwd=pool_copy)
    assert result.output.splitlines()[0] == "created papers/malt-2.yaml from k.bib:1 (MALT); key 'malt' is taken"
    assert (pool_copy / "papers" / "malt.yaml").read_text(encoding="utf-8").startswith("key: malt\ntitle: 'MALT: Improving")


def test_import_bib_exclusions(run, pool_copy):
    result = run("import-bib", "--exclusions", str(BIB / "new-papers.bib"), "--date-added", "2026-11-20", cwd=pool_copy)
    assert result.exit_code == 0
    text = (pool_copy / "exclusions" / "newone.yaml").read_text(encoding="utf-8")
    assert text == (
        "key: newone\nrecord_id: TODO\ntitle: 'Spawn Budgets: Credit for Sub-Agent Creation'\nsource: TODO\nquery_family: TODO\n"
        "identifier: arXiv:2610.01234\nurl: https://arxiv.org/abs/2610.01234\ndate_screened: 2026-11-20\nstage: TODO\n"
        "reason_code: TODO\nreason: TODO\ndistinct_from: []\n"
    )
    assert run("validate", cwd=pool_copy).output.endswith("0 errors, 12 warnings.\n")


def test_import_bib_into_another_surveys_pool(run, tiny, tmp_path):
    """No bibtex_import section: the conventional field names the tiny registry declares."""
    (tmp_path / "t.bib").write_text(
        "@article{Roe2026, title={Halting {RL} agents}, author={Rick Roe and others}, year={2026}, "
        "url={https://example.org/halting}}\n",
        encoding="utf-8",
    )
    result = run("import-bib", str(tmp_path / "t.bib"), "--date-added", "2026-11-20", cwd=tiny)
    assert (result.exit_code, result.output.splitlines()[0]) == (0, "created papers/roe2026.yaml from t.bib:1 (Roe2026)")
    assert (tiny / "papers" / "roe2026.yaml").read_text(encoding="utf-8") == (
        "key: roe2026\ntitle: Halting RL agents\nauthors:\n- Roe, Rick\nyear: 2026\nurls:\n- https://example.org/halting\n"
        "method: TODO\nunit: null\ndecisions: {}\nsummary: TODO\n"
    )


def test_registry_bibtex_import_section_is_checked(run, pool_copy):
    edit(pool_copy / "registry.yaml", "    venue: [journal, booktitle, publisher]", "    venu: [journal, booktitle, publisher]")
    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 1
    assert "registry.yaml:" in result.output and "'venu' is not a field of the entries" in result.output


def test_write_planned_never_replaces_a_file(tmp_path):
    target = tmp_path / "papers" / "x.yaml"
    target.parent.mkdir()
    target.write_text("key: x\n", encoding="utf-8")
    with pytest.raises(Exception, match="already exists; paperpool never overwrites a record"):
        write_planned([Planned(tmp_path / "papers" / "y.yaml", {"key": "y"}), Planned(target, {"key": "x"})])
    assert target.read_text(encoding="utf-8") == "key: x\n"
    assert not (tmp_path / "papers" / "y.yaml").exists()  # refused before writing any
    assert sorted(p.name for p in Path(tmp_path / "papers").iterdir()) == ["x.yaml"]


def test_import_bib_expands_string_macros_and_concatenation(run, pool_copy, tmp_path):
    """@string macros (any letter case, one built from others), `#` joining braced, quoted,
    numeric and macro pieces, and BibTeX's month names, read as BibTeX reads them."""
    (tmp_path / "m.bib").write_text(
        '@String{stop = "Learning to Stop"}\n'
        '@string{TMLR = {Transactions on } # "Machine Learning Research"}\n'
        "@string{full = stop # {: {RL} for Orchestrator Halting}}\n"
        "\n"
        "@article{roe2026,\n"
        '  title = full # " in " # "Agent " # {Swarms},\n'
        '  author = "Roe, Rick" # { and } # {M{\\"u}ller, J{\\"o}rg},\n'
        "  journal = tmlr,\n"
        '  volume = 3 # "/" # 2,\n'
        '  month = jan # "~" # 10,\n'
        "  year = 2026,\n"
        "}\n",
        encoding="utf-8",
    )
    result = run("import-bib", str(tmp_path / "m.bib"), "--date-added", "2026-11-20", cwd=pool_copy)
    assert (result.exit_code, result.output.splitlines()[0]) == (0, "created papers/roe2026.yaml from m.bib:5 (roe2026)")
    stub = (pool_copy / "papers" / "roe2026.yaml").read_text(encoding="utf-8")
    assert stub.startswith(
        "key: roe2026\n"
        "title: 'Learning to Stop: RL for Orchestrator Halting in Agent Swarms'\n"
        "authors:\n- Roe, Rick\n- Müller, Jörg\n"
        "authors_complete: true\n"
        "affiliation: null\n"
        "year: 2026\n"
        "preprint_year: null\n"
        "venue: Transactions on Machine Learning Research\n"
    )
    assert stub.endswith(
        "bibtex:\n  type: article\n  key: roe2026\n  journal: Transactions on Machine Learning Research\n"
        "  volume: 3/2\nsecond_reading: null\n"
    )


def test_import_bib_keeps_a_link_with_a_query_string_whole(run, tiny, tmp_path):
    """The hostile review's case: `&` in a link was read as LaTeX's column break."""
    (tmp_path / "u.bib").write_text(
        "@misc{u1, title={T1}, author={A, B}, year={2024}, url={https://example.org/w?a=1&b=2}}\n", encoding="utf-8"
    )
    result = run("import-bib", str(tmp_path / "u.bib"), cwd=tiny)
    assert (result.exit_code, result.output.splitlines()[0]) == (0, "created papers/u1.yaml from u.bib:1 (u1)")
    assert "\nurls:\n- https://example.org/w?a=1&b=2\n" in (tiny / "papers" / "u1.yaml").read_text(encoding="utf-8")


def test_import_bib_reads_links_and_identifiers_as_written(run, empty_pool, tmp_path):
    """url and doi are biblatex's verbatim fields, read as written (only the backslash of a
    LaTeX escape such as \\_ dropped), never as LaTeX, where % is a comment, -- a dash and ~
    a space; a ; inside a link is part of it. Links in other fields are kept whole too, in
    \\url{...} and \\href{...}{...} (which made the record unreadable) alike."""
    (tmp_path / "l.bib").write_text(
        "@misc{links,\n"
        "  title = {Links as written},\n"
        "  author = {Roe, Rick},\n"
        "  year = 2026,\n"
        "  doi = {10.1234/a--b_c},\n"
        "  url = {https://example.org/w?a=1&b={2}&c=%7C#x~y--z; https://example.org/a\\_b?x=1;y=2},\n"
        "  howpublished = {\\url{https://example.org/h?a=1&b=2%20c}},\n"
        "  note = {Code at \\href{https://example.org/n?a=1&b=2}{the site}.},\n"
        "}\n",
        encoding="utf-8",
    )
    result = run("import-bib", str(tmp_path / "l.bib"), "--date-added", "2026-11-20", cwd=empty_pool)
    assert (result.exit_code, result.output.splitlines()[0]) == (0, "created papers/links.yaml from l.bib:1 (links)")
    stub = (empty_pool / "papers" / "links.yaml").read_text(encoding="utf-8")
    assert (
        "\ndoi: 10.1234/a--b_c\nopenreview_id: null\nurls:\n"
        "- https://example.org/w?a=1&b=%7B2%7D&c=%7C#x~y--z\n"  # braces as a browser sends them
        "- https://example.org/a_b?x=1;y=2\n"
        "- https://example.org/h?a=1&b=2%20c\n"
        "- https://example.org/n?a=1&b=2\n"
        "category: TODO\n" in stub
    )
    assert stub.endswith(
        "bibtex:\n  type: misc\n  key: links\n  howpublished: https://example.org/h?a=1&b=2%20c\nsecond_reading: null\n"
    )


def test_import_bib_reads_names_that_start_with_an_escape(run, tiny, tmp_path):
    """A name after " and " starting with a LaTeX escape lost its first characters."""
    (tmp_path / "n.bib").write_text(
        "@misc{n1, title={T2}, year={2024}, url={https://example.org/n1},\n"
        '  author={Bob Smith and \\"Uber, Ann and \\% pct, Dan and \\{Brace\\}, Bob}}\n',
        encoding="utf-8",
    )
    result = run("import-bib", str(tmp_path / "n.bib"), cwd=tiny)
    assert (result.exit_code, result.output.splitlines()[0]) == (0, "created papers/n1.yaml from n.bib:1 (n1)")
    assert (
        (tiny / "papers" / "n1.yaml")
        .read_text(encoding="utf-8")
        .startswith("key: n1\ntitle: T2\nauthors:\n- Smith, Bob\n- Über, Ann\n- '% pct, Dan'\n- '{Brace}, Bob'\nyear: 2024\n")
    )


def test_import_bib_resolves_a_crossref(run, empty_pool, tmp_path):
    """A paper with crossref takes the fields it lacks from the volume it names (its title
    as the booktitle; not its DOI or links, which are the volume's), and the volume, a
    container only, is not imported as a paper of its own."""
    (tmp_path / "c.bib").write_text(
        "@inproceedings{p1, title={Paper One}, author={Roe, Rick}, crossref={proc}, pages={7}}\n"
        "@inproceedings{p2, title={Paper Two}, author={Doe, Jane}, crossref={PROC}, year={2026}, doi={10.1234/p2}}\n"
        "@proceedings{proc, title={Proceedings of the Workshop on Halting}, year={2025}, publisher={ACM},\n"
        "  editor={Ed, Ed}, doi={10.1234/proc}, url={https://example.org/proc}}\n",
        encoding="utf-8",
    )
    result = run("import-bib", str(tmp_path / "c.bib"), "--date-added", "2026-11-20", cwd=empty_pool)
    assert (result.exit_code, result.output) == (
        0,
        (
            "created papers/p1.yaml from c.bib:1 (p1)\n"
            "created papers/p2.yaml from c.bib:2 (p2)\n"
            "created 2 entries, skipped 0 duplicates; fill in the TODO fields, then run paperpool validate.\n"
        ),
    )
    assert sorted(path.name for path in (empty_pool / "papers").iterdir()) == ["p1.yaml", "p2.yaml"]
    one = (empty_pool / "papers" / "p1.yaml").read_text(encoding="utf-8")
    assert one.startswith(
        "key: p1\ntitle: Paper One\nauthors:\n- Roe, Rick\nauthors_complete: true\naffiliation: null\nyear: 2025\npreprint_year: null\n"
        "venue: Proceedings of the Workshop on Halting\narxiv_id: null\ndoi: null\nopenreview_id: null\nurls: TODO\n"
    )
    assert one.endswith(
        "bibtex:\n  type: inproceedings\n  key: p1\n  booktitle: Proceedings of the Workshop on Halting\n"
        "  publisher: ACM\n  pages: '7'\nsecond_reading: null\n"
    )
    two = (empty_pool / "papers" / "p2.yaml").read_text(encoding="utf-8")
    assert (
        "\nyear: 2026\npreprint_year: null\nvenue: Proceedings of the Workshop on Halting\narxiv_id: null\ndoi: 10.1234/p2\n"
        in two
    )


def test_two_records_that_cross_reference_each_other_are_two_papers(run, empty_pool, tmp_path):
    """Each names the other in crossref (issue 39's fresh review: both were taken for
    containers and the file read as holding no records at all)."""
    (tmp_path / "cycle.bib").write_text(
        "@article{a, crossref={b}, title={T}, author={Doe, Jane}, year={2024}}\n"
        "@article{b, crossref={a}, title={U}, author={Roe, Rick}, year={2024}}\n",
        encoding="utf-8",
    )
    result = run("import-bib", str(tmp_path / "cycle.bib"), "--date-added", "2026-11-20", cwd=empty_pool)
    assert (result.exit_code, result.output) == (
        0,
        (
            "created papers/a.yaml from cycle.bib:1 (a)\n"
            "created papers/b.yaml from cycle.bib:2 (b)\n"
            "created 2 entries, skipped 0 duplicates; fill in the TODO fields, then run paperpool validate.\n"
        ),
    )


def test_titles_prepared_at_once_find_what_one_by_one_finds(pool_copy):
    """PoolIndex.prepare finds a whole file's likenesses at once (a 4.9 MB file of 11,000
    long titles took two minutes one by one; issue 39's fresh review): each record is
    found a duplicate of the same record, at the same score, as by asking one by one,
    the pool's titles and the file's earlier ones included, near-identical ones and ties."""
    import random

    from paperpool.pool.reading import require_pool
    from paperpool.pool.stubs import PoolIndex, planned_record

    pool = require_pool(pool_copy)
    rng = random.Random(7)
    pool_titles = [record.data["title"] for record in pool.entries[:20]]
    titles = []
    for number in range(300):
        base = rng.choice(pool_titles + titles) if titles and rng.random() < 0.5 else f"A study of topic {number} in agents"
        titles.append(base if rng.random() < 0.3 else base[:-1] + rng.choice("sxyz"))
    answers = []
    for prepared in (False, True):
        index = PoolIndex(pool)
        if prepared:
            index.prepare(titles)
        found = []
        for number, title in enumerate(titles):
            record = planned_record(
                {"key": f"new-{number}", "title": title},
                pool_copy / "papers" / f"new-{number}.yaml",
                f"new.bib:{number}",
                "entries",
            )
            found.append(index.same_paper(record))
            if found[-1] is None:
                index.add(record)
        answers.append(found)
    assert answers[0] == answers[1]
    assert sum(answer is not None for answer in answers[0]) > 100


@pytest.mark.slow
def test_many_records_of_one_key_name_the_first_hundred_and_count_the_rest(run, tiny, tmp_path):
    """20,000 records of one citation key (200 kB): each looked for the key's first record
    through the whole library (33 s); the error names the first hundred and counts the rest."""
    bib = tmp_path / "one-key.bib"
    bib.write_text("@misc{a,}\n" * 20_000, encoding="utf-8")
    result = run("import-bib", "--all-or-nothing", str(bib), cwd=tiny)
    lines = result.output.splitlines()
    assert (result.exit_code, len(lines)) == (1, 102)
    assert lines[0] == "Error: one-key.bib: 19,999 unreadable records:"
    assert lines[1:101] == [
        f"one-key.bib:{line}: citation key 'a' is used twice (first on line 1); give each record its own key"
        for line in range(2, 102)
    ]
    assert lines[101] == "(and 19,899 more)"


def test_a_record_key_is_shown_escaped(run, tiny, tmp_path):
    """A .bib's key with a terminal's escape sequence (a title set, a screen cleared) was
    printed raw in the import's report."""
    bib = tmp_path / "escape.bib"
    bib.write_text("@misc{a\x1b]0;HACK\x07b, title={Hello world paper}, author={Doe, Jane}, year={2024}}\n", encoding="utf-8")
    result = run("import-bib", str(bib), "--dry-run", cwd=tiny)
    assert result.exit_code == 0 and "\x1b" not in result.output
    assert "from escape.bib:1 (a\\x1b]0;HACK\\x07b)" in result.output


# ---------------------------------------------------------------------------------
# BibTeX as people write it (issue 38)
# ---------------------------------------------------------------------------------

AS_WRITTEN = """@Article{alpha2021,
  Author = {Roe, Rick and Poe, Pat},
  Title = {Orchestrating agents by reward},
  eprint = "{2102.02278}",
  archivePrefix = {arXiv},
  Year = {2021},
  note = {first},
  note = {second},
}

@misc{broken2021,
  title = {A record whose braces do not close,
  year = {2021},
}

@article{beta2021,
  title = {Orchestrating Agents by Reward},
  author = {Roe, Rick},
  eprint = {arXiv:2102.09999},
  year = {2021},
}

@misc{untitled2021,
  author = {Doe, Jane},
  year = {2021},
}
"""


def test_a_bib_as_people_write_it_imports_every_record_it_can_and_lists_the_others(run, pool_copy, tmp_path):
    """Field names in any case, an id in braces or after arXiv:, a field given twice (its
    first value, as BibTeX reads it), a record that cannot be read and one without a title
    (listed with their lines, the others imported), and two titles alike with different
    arXiv ids (two works: both kept, the second with distinct_from)."""
    bib = tmp_path / "written.bib"
    bib.write_text(AS_WRITTEN, encoding="utf-8")
    result = run("import-bib", str(bib), "--date-added", "2026-11-28", cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "created papers/alpha2021.yaml from written.bib:1 (alpha2021)",
        "created papers/beta2021.yaml from written.bib:16 (beta2021)",
        "kept written.bib:16 (beta2021): its title is like written.bib:1 (alpha2021)'s, its ids differ: both kept "
        "(distinct_from written)",
        "note: written.bib:8: record 'alpha2021': field 'note' is given twice; the first value is read, as BibTeX reads it",
        "not imported: written.bib:11: this record cannot be read (Unexpected block start: `@article`. Was still looking "
        "for field-value closing `,` or `}`, noticed on line 16); check its braces, quotes and commas",
        "not imported: written.bib:23: title: record 'untitled2021' has no title; add title = {...} to it",
        "created 2 entries, skipped 0 duplicates; fill in the TODO fields, then run paperpool validate.",
        "Error: 2 records not imported (2 lines above); fix them and import the file again (what was imported is then "
        "skipped as a duplicate), or give --all-or-nothing to import none",
    ]
    alpha = load_yaml(pool_copy / "papers" / "alpha2021.yaml").data
    beta = load_yaml(pool_copy / "papers" / "beta2021.yaml").data
    assert (alpha["authors"], alpha["arxiv_id"], alpha["year"]) == (["Roe, Rick", "Poe, Pat"], "2102.02278", 2021)
    assert (beta["arxiv_id"], beta["distinct_from"]) == ("2102.09999", ["alpha2021"])
    assert run("validate", cwd=pool_copy).output.endswith("0 errors, 26 warnings.\n")  # titles alike, ids apart: no error
    again = run("import-bib", str(bib), "--date-added", "2026-11-28", cwd=pool_copy)
    assert "created 0 entries, skipped 2 duplicates" in again.output  # imported again once fixed: the rest only


def test_all_or_nothing_imports_none_of_a_bib_with_a_bad_record(run, tiny, tmp_path, snapshot):
    bib = tmp_path / "written.bib"
    bib.write_text(AS_WRITTEN, encoding="utf-8")
    before = snapshot(tiny)
    result = run("import-bib", "--all-or-nothing", str(bib), cwd=tiny)
    assert (result.exit_code, result.output.splitlines()[0]) == (
        1,
        "Error: written.bib:11: this record cannot be read (Unexpected block start: `@article`. Was still looking for "
        "field-value closing `,` or `}`, noticed on line 16); check its braces, quotes and commas",
    )
    assert snapshot(tiny) == before


def test_every_place_the_parser_starts_a_record_counts_against_the_limit(run, tiny, tmp_path):
    """`@{`, `@1{` and `@é{` start records as bibtexparser reads them; the count of records
    missed them (the tenth review: 4.9 MB of `@{,` ran past two minutes and 3 GB)."""
    bib = tmp_path / "blocks.bib"
    bib.write_text("@{,\n" * 50_001, encoding="utf-8")
    result = run("import-bib", "--dry-run", str(bib), cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        "Error: blocks.bib: nothing imported: more than 50,000 records begin in it (@type{ or @type( ), more than an "
        "import reads at once; split it into several files\n",
    )


def test_refused_and_rewritten_records_leave_the_library_made_again_once(monkeypatch):
    """Records refused (broken, an undefined macro) or read again (a field given twice) are
    left out of, or put into, a library made again once: bibtexparser's own remove and
    replace look each block up in a list (the tenth review: 50,000 such records, minutes)."""
    import bibtexparser

    from paperpool.formats.bibtex import reading

    def refused(*args, **kwargs):
        raise AssertionError("a block taken out or put in one at a time")

    monkeypatch.setattr(bibtexparser.Library, "remove", refused)
    monkeypatch.setattr(bibtexparser.Library, "replace", refused)
    text = "".join(
        f"@a{{u{k}, title = undefinedmacro}}\n@a{{d{k}, title = {{T{k}}}, title = {{U}}}}\n@a{{,\n" for k in range(200)
    )
    read = reading.read_bib(text, "many.bib")
    assert [record.key for record in read.records] == [f"d{k}" for k in range(200)]
    assert (len(read.refused), read.records_refused, len(read.notes)) == (400, 400, 200)


def test_a_link_named_like_a_record_is_a_taken_key(run, tiny, tmp_path):
    """A pull request's link papers/zzz.yaml, leading nowhere: the import took the key, wrote
    the records before it, then stopped at the link saying nothing was written (the tenth
    review). Now the key is taken and the record written beside it."""
    (tiny / "papers" / "zzz.yaml").symlink_to(tmp_path / "nowhere.yaml")
    bib = tmp_path / "two.bib"
    bib.write_text(
        "@article{aaa, title = {Alpha unique paper one}, author = {A, B}, year = 2024}\n"
        "@article{zzz, title = {Zeta unique paper two}, author = {A, B}, year = 2024}\n",
        encoding="utf-8",
    )
    result = run("import-bib", str(bib), cwd=tiny)
    assert result.output.splitlines()[:2] == [
        "created papers/aaa.yaml from two.bib:1 (aaa)",
        "created papers/zzz-2.yaml from two.bib:2 (zzz); key 'zzz' is taken",
    ]
    assert not (tmp_path / "nowhere.yaml").exists()


def test_import_csv_reads_a_bib_within_the_limit_import_bib_keeps(run, pool_copy, tmp_path):
    """import-csv --bib read a .bib of up to 50 MB, where import-bib reads 5 MB: 5.1 MB took
    52 s and 48 MB would take minutes (the eleventh review)."""
    table = tmp_path / "pool.csv"
    assert run("export", "--format", "csv", "-o", str(table), cwd=pool_copy).exit_code == 0
    bib = tmp_path / "big.bib"
    bib.write_text("% a comment line of a bibliography\n" * 150_000, encoding="utf-8")
    result = run("import-csv", str(table), "--bib", str(bib), "--dry-run", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: big.bib:1: file is {bib.stat().st_size:,} bytes, over the 5,000,000-byte limit; is it the right file?\n",
    )


def test_import_csv_refuses_a_row_of_a_paper_the_pool_records(run, pool_copy, tmp_path, snapshot):
    """A row under a new key for a paper the pool already records (same arXiv id) was
    written, and validate then refused the pool (the eleventh review)."""
    table = tmp_path / "all.csv"
    assert run("export", "--format", "csv", "-o", str(table), cwd=pool_copy).exit_code == 0
    lines = table.read_text(encoding="utf-8").splitlines(keepends=True)
    row = lines[1].replace("agent-lightning,", "agent-lightning-copy,", 1)
    (tmp_path / "dup.csv").write_text(lines[0] + row, encoding="utf-8")
    before = snapshot(pool_copy)
    result = run("import-csv", str(tmp_path / "dup.csv"), cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        "Error: dup.csv: nothing imported, 1 problem:\ndup.csv:2: key: 'agent-lightning-copy' is a paper the pool already "
        "records: papers/agent-lightning.yaml (same arXiv id 2508.03680); remove the row\n",
    )
    assert snapshot(pool_copy) == before


def test_import_csljson_imports_the_items_it_can_read_and_lists_the_others(run, pool_copy, tmp_path):
    """An item of the wrong shape stopped the whole file, against --all-or-nothing's help
    (the twelfth review); now it is listed, and the others imported."""
    items = tmp_path / "items.json"
    items.write_text(
        '[{"type":"article-journal","title":"A Wholly Different Paper About Quokkas","author":[{"family":"Doe","given":'
        '"Jane"}],"issued":{"date-parts":[[2024]]},"DOI":"10.9999/q.1","id":"q1"},'
        '{"type":"article-journal","title":["bad"],"author":[{"family":"Roe","given":"R"}],"issued":{"date-parts":[[2024]]},'
        '"id":"q2"}]',
        encoding="utf-8",
    )
    result = run("import-csljson", str(items), "--dry-run", cwd=pool_copy)
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            "would create papers/q1.yaml from items.json: item 1 (q1)",
            "not imported: items.json: item 2: title: is a JSON list, not text; give it as text",
            "would create 1 entry, skipped 0 duplicates (dry run: nothing written).",
            "Error: 1 record not imported (1 line above); fix them and import the file again (what was imported is then "
            "skipped as a duplicate), or give --all-or-nothing to import none",
        ],
    )


def test_an_unused_string_that_cannot_be_read_stops_no_record(run, pool_copy, tmp_path):
    """Every record imported, only an @string defined twice refused: the summary said "0
    records not imported" and exit 1 (the twelfth review)."""
    bib = tmp_path / "s.bib"
    bib.write_text(
        '@string{jn = "Journal One"}\n@string{jn = "Journal Two"}\n'
        "@article{good2024, title = {A Wholly Different Paper About Numbats}, author = {Doe, Jane}, year = {2024}}\n",
        encoding="utf-8",
    )
    result = run("import-bib", str(bib), "--dry-run", cwd=pool_copy)
    assert (result.exit_code, result.output.splitlines()) == (
        0,
        [
            "would create papers/good2024.yaml from s.bib:3 (good2024)",
            "not imported: s.bib:2: @string macro 'jn' is defined twice (first on line 1); keep one definition",
            "would create 1 entry, skipped 0 duplicates (dry run: nothing written).",
            "(1 line above: no record uses what could not be read.)",
        ],
    )
