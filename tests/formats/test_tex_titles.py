"""TeX math in a title (issue 38: 155 titles of a real living review's .bib hold `$\\sqrt{s}$`
and the like): import-bib keeps it as written, the BibTeX export writes it back as
written, and what people read (the site, CSL-JSON, RIS) shows it as text."""

from __future__ import annotations

import json

import pytest

from paperpool.rendering.tex import LONGEST, bounded_brackets, readable

from ..conftest import edit

TITLE = r"Agents at $\sqrt{s}$ scale: $\Omega$ and $$\alpha_s$$"


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        (r"Designing packages for $ \Lambda $: An overview", "Designing packages for Λ: An overview"),
        (r"{\LaTeX} 2.09 $ \hookrightarrow $ {\LaTeX}3", r"{\LaTeX} 2.09 ↪ {\LaTeX}3"),  # only the math is read
        (TITLE, "Agents at √(s) scale: Ω and α_s"),
        (r"Costs of \$5 and \$10", r"Costs of \$5 and \$10"),  # escaped: no math
        ("A price of $5 and no more", "A price of $5 and no more"),  # one dollar: no math
        ("$" + "{" * 600 + "x" + "}" * 600 + "$", "$" + "{" * 600 + "x" + "}" * 600 + "$"),  # past what is read
        ("No math at all", "No math at all"),
    ],
)
def test_math_in_a_title_reads_as_text(written, shown):
    assert readable(written) == shown


def test_a_title_with_math_is_text_on_the_site_and_in_citations_and_tex_in_bibtex(run, pool_copy, tmp_path):
    paper = sorted((pool_copy / "papers").glob("*.yaml"))[0]
    key = paper.stem
    text = paper.read_text(encoding="utf-8")
    first = next(line for line in text.splitlines() if line.startswith("title:"))
    edit(paper, first, "title: " + json.dumps(TITLE))
    shown = readable(TITLE)
    ris = run("export", "--format", "ris", cwd=pool_copy).output
    assert f"TI  - {shown}" in ris
    items = json.loads(run("export", "--format", "csljson", cwd=pool_copy).output)
    assert next(item["title"] for item in items if item["id"] == key) == shown
    bib = run("export", "--format", "bib", cwd=pool_copy).output
    assert r"title = {Agents at $\sqrt{s}$ scale: $\Omega$ and $$\alpha_s$$}" in bib
    # read back by import-bib into an empty survey, the title is the one written
    (tmp_path / "pool.bib").write_text(bib, encoding="utf-8")
    assert run("new-survey", "fresh", "--title", "Fresh", cwd=tmp_path).exit_code == 0
    assert run("import-bib", str(tmp_path / "pool.bib"), cwd=tmp_path / "fresh").exit_code == 0
    imported = [p.read_text(encoding="utf-8") for p in (tmp_path / "fresh" / "papers").glob("*.yaml")]
    assert sum(TITLE.replace("\\", "\\\\") in t or TITLE in t for t in imported) == 1
    # the site: the entry's page and the tables that list it
    built = run("build", "--out", str(tmp_path / "site"), cwd=pool_copy)
    assert built.exit_code == 0, built.output
    page = (tmp_path / "site" / "entries" / f"{key}.html").read_text(encoding="utf-8")
    assert "<h1" in page and shown in page
    assert page.count(r"\sqrt") == 1  # in the Cite block's BibTeX only


def test_math_that_could_end_its_field_or_run_a_command_is_written_as_text_in_bibtex(run, pool_copy):
    """Round fourteen: `\\{\\{}}` pairs for BibTeX, which counts every brace, but closes the
    field for bibtexparser (import-bib's reader), which skips a brace after a backslash; and
    `\\input` or `\\write18` kept as written would run where the citation is compiled. Such
    math is written as text, as any other title is; known math is kept."""
    import bibtexparser

    paper = sorted((pool_copy / "papers").glob("*.yaml"))[0]
    first = next(line for line in paper.read_text(encoding="utf-8").splitlines() if line.startswith("title:"))
    hostile = (
        r"Proximal $\{\{}}@misc{evil, title = {Injected}, url = {https://evil.example/}}\{\{}}$ and "
        r"$\input{/etc/passwd}$ or $^^5cinput^^7b/etc/passwd^^7d$ but $\alpha_1 \le \sqrt{s}$"
    )
    edit(paper, first, "title: " + json.dumps(hostile))
    bib = run("export", "--format", "bib", cwd=pool_copy).output
    library = bibtexparser.parse_string(bib)
    assert "evil" not in [entry.key for entry in library.entries] and not library.failed_blocks
    title = next(entry for entry in library.entries if entry.key == paper.stem)["title"]
    assert r"$\alpha_1 \le \sqrt{s}$" in title  # kept as written
    assert r"\input" not in title.replace(r"{\textbackslash}input", "")  # written as text
    assert "$^^5c" not in title  # TeX reads ^^5c as a backslash (round fifteen)


def test_a_title_of_many_unclosed_optional_arguments_reads_in_time(run, tmp_path):
    """pylatexenc's time doubled with each `\\cite[` left open (22 in a title of 130
    characters: minutes; 30: days), on import and when math is shown as text."""
    slow = r"\cite[" * 30
    assert readable(f"Slow ${slow}$ title").startswith("Slow ")
    fractions = "$" + r"\frac{" * 30 + "x$"  # braces left open: kept as written (round fifteen: 20 took a minute)
    assert readable(f"Fractions {fractions}") == f"Fractions {fractions}"
    (tmp_path / "slow.bib").write_text(
        f"@article{{slow2025,\n  title = {{Slow {slow}}},\n  author = {{Doe, Jane}},\n  year = {{2025}}\n}}\n", encoding="utf-8"
    )
    assert run("new-survey", "fresh", "--title", "Fresh", cwd=tmp_path).exit_code == 0
    result = run("import-bib", "--dry-run", str(tmp_path / "slow.bib"), cwd=tmp_path / "fresh")
    assert result.exit_code == 0 and "would create papers/" in result.output


@pytest.mark.parametrize(
    ("latex", "read"),
    [
        (r"\cite[a]{b}", r"\cite[a]{b}"),  # closed: an optional argument
        (r"\cite[a" * 4 + "{a}" * 3, r"\cite{[}a" * 4 + "{a}" * 3),  # round sixteen: four open ones made 90 kB take 10 s
        (r"\sqrt[3]{x} + \sqrt[", r"\sqrt[3]{x} + \sqrt{[}"),
        (r"{\cite[a} b]", r"{\cite{[}a} b]"),  # its group ends first
        (r"\cite[a $]$ b", r"\cite{[}a $]$ b"),  # in math
        ("\\cite[a % ]\n b", "\\cite{[}a % ]\n b"),  # in a comment
        (r"\cite[a \] b", r"\cite{[}a \] b"),  # escaped
        (r"\cite[ \foo[ ] ]", r"\cite[ \foo[ ] ]"),  # the latest open one first
    ],
)
def test_an_optional_argument_no_bracket_closes_is_read_as_text(latex, read):
    assert bounded_brackets(latex) == read


def test_math_past_longest_characters_in_one_title_is_kept_as_written():
    """Round sixteen: a title of 27,000 small spans had each read by pylatexenc (a build
    took minutes); LONGEST characters of math are read, the rest is kept as written."""
    span = r"$\Omega$ "
    title = span * (LONGEST // len(r"\Omega") + 5)
    shown = readable(title)
    assert shown.startswith("Ω " * 10) and shown.endswith(span * 5)
    assert shown.count("Ω") == LONGEST // len(r"\Omega")
