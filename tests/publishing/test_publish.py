"""`paperpool publish`, the main job in one process (issue 17): every output from one
validation and one analysis, the same as each command writes on its own."""

from __future__ import annotations

import json
import subprocess

import pytest

from ..conftest import edit


@pytest.mark.slow
def test_publish_writes_what_each_command_prints_the_readme_block_and_the_site(run, tiny):
    result = run("publish", cwd=tiny)
    assert result.exit_code == 0, result.output
    out = tiny / "build"
    assert sorted(path.name for path in out.iterdir()) == [  # the tiny registry has no CSV layout, so no CSV
        "claims.json",
        "claims.txt",
        "gaps.json",
        "gaps.md",
        "pool.bib",
        "pool.csljson",
        "pool.json",
        "pool.ris",
        "site",
        "stats.json",
        "stats.md",
    ]
    for name, args in {
        "stats.json": ["stats", "--format", "json"],
        "stats.md": ["stats"],
        "gaps.json": ["gaps", "--format", "json"],
        "gaps.md": ["gaps"],
        "claims.json": ["claims", "--format", "json"],
        "claims.txt": ["claims"],
        "pool.json": ["export", "--format", "json"],
        "pool.bib": ["export", "--format", "bib"],
        "pool.ris": ["export", "--format", "ris"],
        "pool.csljson": ["export", "--format", "csljson"],
    }.items():
        assert (out / name).read_text(encoding="utf-8") == run(*args, cwd=tiny).output, name
    assert json.loads((out / "stats.json").read_text(encoding="utf-8"))["totals"]["retained"] == len(
        list((tiny / "papers").glob("*.yaml"))
    )
    assert run("readme", "--check", cwd=tiny).exit_code == 0  # the block was rewritten
    assert (out / "site" / "index.html").is_file()
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines[:-2]] == [
        "validate",
        "traces",
        "analyse",
        "render",
        "write",
        "mkdocs",
        "search",
        "charts",
        "replace",
    ]
    assert lines[-2] == (
        f"wrote 10 files to {out} (stats.json, stats.md, gaps.json, gaps.md, claims.json, claims.txt, pool.json, "
        "pool.bib, pool.ris, pool.csljson) and README.md's generated block, and CITATION.cff"
    )
    assert lines[-1].startswith("built ") and lines[-1].endswith(f"{out / 'site' / 'index.html'}")


@pytest.mark.slow
def test_publish_writes_the_csv_of_each_kind_the_registry_lays_out(run, pool_copy):
    result = run("publish", cwd=pool_copy)
    assert result.exit_code == 0
    assert result.output.splitlines()[-2].endswith(
        "(no README.md, so no generated block), and CITATION.cff"
    )  # this copy has no README
    assert (pool_copy / "build" / "entries.csv").read_text(encoding="utf-8") == run("export", cwd=pool_copy).output
    assert (pool_copy / "build" / "exclusions.csv").read_text(encoding="utf-8") == run(
        "export", "--exclusions", cwd=pool_copy
    ).output


def test_publish_writes_nothing_when_a_claim_no_longer_holds(run, tiny, snapshot):
    edit(tiny / "papers" / "delta.yaml", "method: rl", "method: search")
    before = snapshot(tiny)
    result = run("publish", cwd=tiny)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == "Error: 4 claims: 1 no longer holds; nothing was published"
    assert snapshot(tiny) == before


def test_publish_writes_nothing_for_an_invalid_pool(run, tiny, snapshot):
    edit(tiny / "papers" / "alpha.yaml", "year: ", "year: soon\nx_year: ")
    before = snapshot(tiny)
    result = run("publish", cwd=tiny)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith("Error: the pool is not valid (")
    assert result.output.splitlines()[-1].endswith("above); nothing was published")
    assert snapshot(tiny) == before


@pytest.mark.slow
def test_the_shared_options_have_one_spelling_and_add_keeps_its_old_one_hidden(run, pool_copy):
    for command in ("add", "import-bib", "import-csv", "export"):
        shown = run(command, "--help", cwd=pool_copy).output
        assert "--exclusions" in shown and "--exclusion " not in shown and "--exclusion," not in shown, command
    for command in ("add", "import-bib", "import-csv"):
        shown = run(command, "--help", cwd=pool_copy).output
        assert "--date-added YYYY-MM-DD" in shown and "--dry-run" in shown, command
    old = run("add", "--no-interactive", "--dry-run", "--exclusion", "--set", "title=A screened paper", "screened", cwd=pool_copy)
    new = run(
        "add", "--no-interactive", "--dry-run", "--exclusions", "--set", "title=A screened paper", "screened", cwd=pool_copy
    )
    assert old.exit_code == new.exit_code == 0
    assert old.output == new.output and "would create exclusions/screened.yaml" in new.output


def test_publish_writes_nothing_when_the_build_refuses_the_pool(run, tiny, snapshot):
    (tiny / "mkdocs.yml").write_text("hooks: [evil.py]\n", encoding="utf-8")
    before = snapshot(tiny)
    result = run("publish", cwd=tiny)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith("Error: mkdocs.yml or the hand-written pages are not accepted")
    assert snapshot(tiny) == before


def test_publish_keeps_an_edit_made_to_the_readme_while_it_builds(tiny):
    """publish plans the README's block, builds the site, then writes: the README is
    read again at the write, so that a line edited meanwhile outside the block stays
    (issue 39: the plan's copy was written back over it)."""
    from paperpool.project import Project
    from paperpool.publishing import publish as publishing
    from paperpool.publishing import readme

    planned = publishing.plan(Project(tiny).analysis)
    edit(tiny / "README.md", readme.END, f"{readme.END}\nA line written while the site was being built.")
    publishing.write(planned, tiny / "build", tiny)
    text = (tiny / "README.md").read_text(encoding="utf-8")
    assert "A line written while the site was being built." in text and planned.readme.block in text


def test_publish_replaces_no_committed_file_in_its_folder(run, tiny):
    """A file of the repository that shares a name with an output (issue 39's fresh review:
    `--out o` replaced the maintainer's own o/stats.md): refused, nothing written."""
    (tiny / "o").mkdir()
    (tiny / "o" / "stats.md").write_text("mine\n", encoding="utf-8")
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    for command in (["git", "init", "-q"], ["git", "add", "-A"], [*git, "commit", "-qm", "mine"]):
        subprocess.run(command, cwd=tiny, check=True)
    result = run("publish", "--out", "o", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: --out {tiny / 'o'}: stats.md is committed to the repository, and publish replaces only its own outputs; "
            "choose another folder, such as build (nothing was written)\n"
        ),
    )
    changed = subprocess.run(["git", "status", "--porcelain"], cwd=tiny, capture_output=True, text=True, check=True).stdout
    assert changed == ""
