"""The pool's own documentation on the site (registry `site.documentation`): its pages
under Documentation in the navigation, its README first, links within it kept, links out
of it made links into the survey's repository."""

from __future__ import annotations

import shutil

import pytest

from ..conftest import REPO, TINY, edit

pytestmark = pytest.mark.slow  # a real build


def _pool(tmp_path, repository: str | None = "https://github.com/o/r"):
    root = tmp_path / "pool"
    shutil.copytree(TINY, root)
    (root / "docs").mkdir()
    (root / "docs" / "README.md").write_text(
        "# Our documentation\n\nSee [the guide](guide.md) and [how to contribute](../CONTRIBUTING.md).\n", encoding="utf-8"
    )
    (root / "docs" / "guide.md").write_text("# The guide\n\nBack to [the index](README.md).\n", encoding="utf-8")
    survey = f"  year: 2026\n  repository: {repository}\n" if repository else "  year: 2026\n"
    edit(
        root / "registry.yaml",
        "  year: 2026\n",
        survey + "site:\n  documentation: docs\n" if "site:" not in (root / "registry.yaml").read_text() else survey,
    )
    return root


def test_the_documentation_folder_is_published_with_its_links(run, tmp_path):
    root = _pool(tmp_path)
    result = run("build", "--out", str(tmp_path / "site"), cwd=root)
    assert result.exit_code == 0, result.output
    index = (tmp_path / "site" / "documentation" / "index.html").read_text(encoding="utf-8")
    assert 'href="guide.html"' in index
    assert 'href="https://github.com/o/r/blob/HEAD/CONTRIBUTING.md"' in index
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert home.index('href="documentation/index.html"') < home.index('href="documentation/guide.html"')


def test_a_repository_address_reaches_the_documentation_s_links_encoded(run, tmp_path):
    """Issue 39's seventeenth review: the registry's repository went raw into each link out
    of the folder, so a `)` in it ended the link and the rest was live HTML."""
    root = _pool(tmp_path, repository='"https://github.com/o/r)<img/src=x/onerror=alert(1)>"')
    assert run("validate", cwd=root).exit_code == 0
    assert run("build", "--out", str(tmp_path / "site"), cwd=root).exit_code == 0
    index = (tmp_path / "site" / "documentation" / "index.html").read_text(encoding="utf-8")
    assert "<img" not in index
    assert 'href="https://github.com/o/r)%3Cimg/src=x/onerror=alert(1)%3E/blob/HEAD/CONTRIBUTING.md"' in index


def test_without_a_repository_a_link_out_of_the_folder_is_its_text(run, tmp_path):
    root = _pool(tmp_path, repository=None)
    assert run("build", "--out", str(tmp_path / "site"), cwd=root).exit_code == 0
    index = (tmp_path / "site" / "documentation" / "index.html").read_text(encoding="utf-8")
    assert "how to contribute" in index and "CONTRIBUTING" not in index


@pytest.mark.parametrize(
    ("setting", "why"),
    [
        ("../elsewhere", "'../elsewhere' leads out of the pool ('..')"),
        ("linked", "'linked' leads through linked, a symbolic link; name the folder itself"),
    ],
)
def test_the_documentation_folder_is_one_of_the_pool_s(run, tmp_path, setting, why):
    root = _pool(tmp_path)
    (root / "linked").symlink_to(root / "docs")
    edit(root / "registry.yaml", "documentation: docs", f"documentation: {setting}")
    result = run("validate", cwd=root)
    assert result.exit_code == 1
    assert f"site.documentation: {why}" in result.output, result.output


def test_the_shipped_pool_publishes_paperpool_s_docs(run, pool_copy, tmp_path):
    shutil.copytree(REPO / "docs", pool_copy / "docs")
    assert run("build", "--out", str(tmp_path / "site"), cwd=pool_copy).exit_code == 0
    for page in ("index", "architecture", "security", "traces", "commands"):
        assert (tmp_path / "site" / "documentation" / f"{page}.html").is_file(), page
