"""TeX math in a title (issue 38: 155 titles of a real living review's .bib hold `$\\sqrt{s}$`
and the like): import-bib keeps it as written, the BibTeX export writes it back as
written, and what people read (the site, CSL-JSON, RIS) shows it as text."""

from __future__ import annotations

import json

import pytest

from paperpool.rendering.tex import readable

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
