"""readme: the generated block, its markers, --check, and record text that stays text."""

from __future__ import annotations

import re

import markdown as python_markdown
import pytest

from ..conftest import EXPECTED, REPO, edit

START, END = "<!-- paperpool:readme:start -->", "<!-- paperpool:readme:end -->"


def test_shipped_readme_block_is_current(run):
    result = run("readme", "--check", cwd=REPO)
    assert (result.exit_code, result.output) == (0, "README.md: the generated block is up to date.\n")


def test_readme_writes_the_block_and_nothing_else(run, tiny):
    result = run("readme", cwd=tiny)
    assert (result.exit_code, result.output) == (0, "README.md: block rewritten.\n")
    assert (tiny / "README.md").read_text(encoding="utf-8") == (EXPECTED / "README.md").read_text(encoding="utf-8")
    again = run("readme", cwd=tiny)
    assert again.output == "README.md: block already up to date.\n"


def test_readme_check_reports_a_stale_block_and_writes_nothing(run, tiny, snapshot):
    run("readme", cwd=tiny)
    edit(tiny / "papers" / "gamma.yaml", "title: Gamma prompting", "title: Gamma prompting, revised")
    before = snapshot(tiny)
    result = run("readme", "--check", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        "Error: README.md: the generated block is out of date; run paperpool readme and commit the result\n",
    )
    assert snapshot(tiny) == before


@pytest.mark.parametrize(
    "readme, message",
    [
        (
            "# No markers\n",
            (
                f"Error: README.md: the generated block needs exactly one line {START} and one line {END} (found: neither); "
                "fix the markers, nothing was changed\n"
            ),
        ),
        (
            f"{START}\n{END}\n{START}\n{END}\n",
            (
                f"Error: README.md: the generated block needs exactly one line {START} and one line {END} "
                f"(found: {START} on line 1, {START} on line 3, {END} on line 2, {END} on line 4); fix the markers, nothing was changed\n"
            ),
        ),
        (
            f"{START}\ntext\n",
            (
                f"Error: README.md: the generated block needs exactly one line {START} and one line {END} "
                f"(found: {START} on line 1); fix the markers, nothing was changed\n"
            ),
        ),
        (f"intro\n{END}\n{START}\n", "Error: README.md:2: the end marker comes before the start marker (line 3); swap them\n"),
    ],
)
def test_readme_refuses_missing_doubled_or_swapped_markers(run, tiny, snapshot, readme, message):
    (tiny / "README.md").write_text(readme, encoding="utf-8")
    before = snapshot(tiny)
    result = run("readme", cwd=tiny)
    assert (result.exit_code, result.output) == (1, message)
    assert snapshot(tiny) == before


def test_record_text_cannot_break_the_readme(run, tiny):
    edit(
        tiny / "papers" / "gamma.yaml",
        "title: Gamma prompting",
        "title: 'Gamma ](https://evil.example) <img src=x onerror=alert(1)> | cell `tick` {: onclick=x} # \u202eevil'",
    )
    run("readme", cwd=tiny)
    html = python_markdown.markdown((tiny / "README.md").read_text(encoding="utf-8"), extensions=["attr_list", "tables"])
    assert set(re.findall(r"<(\w+)", html)) <= {"h1", "h3", "h4", "p", "ul", "li", "strong", "em", "a", "br", "code"}
    assert set(re.findall(r'href="([^"]*)"', html)) <= {
        f"https://example.org/{k}" for k in ("alpha", "beta", "gamma", "delta", "epsilon")
    }
    assert not re.search(r"\s(onerror|onclick)=\"", html)
    gamma = html.split("Gamma", 1)[1].split("</li>")[0]
    assert "<code>" not in gamma and "\u202e" not in gamma
    assert gamma.startswith(
        " &#93;(https://evil.example) &lt;img src=x onerror=alert(1)&gt; | cell `tick` {: onclick=x} # evil</strong>"
    )


def test_a_template_in_the_pools_templates_folder_overrides_the_default(run, tiny):
    (tiny / "templates").mkdir()
    (tiny / "templates" / "readme.md.j2").write_text("Custom block: {{ totals.retained }} entries.\n", encoding="utf-8")
    run("readme", cwd=tiny)
    assert f"{START}\n\nCustom block: 5 entries.\n\n{END}" in (tiny / "README.md").read_text(encoding="utf-8")


def test_a_broken_template_is_one_error_line(run, tiny, snapshot):
    (tiny / "templates").mkdir()
    (tiny / "templates" / "readme.md.j2").write_text("Broken {% if %}\n", encoding="utf-8")
    before = snapshot(tiny)
    result = run("readme", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: templates/readme.md.j2:1: template error: Expected an expression, "
            "got 'end of statement block'; fix the template\n"
        ),
    )
    assert snapshot(tiny) == before
