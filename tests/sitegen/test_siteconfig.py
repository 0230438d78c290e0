"""mkdocs.yml is data unless the maintainers say otherwise (issue 16): validate lists what
build refuses, and --trust-config is the one way to let mkdocs.yml run code."""

from __future__ import annotations

import shutil

import pytest

from paperpool.files.yamlio import load_yaml

from ..conftest import REPO, TINY

BUILD_CASES = REPO / "tests" / "hostile" / "build"
CONFIG_CASES = sorted(
    name
    for name, case in load_yaml(BUILD_CASES / "expected.yaml").data.items()
    if case.get("place") == "mkdocs.yml" and "append" not in case and case["args"][0] == "build" and "--out" in case["args"]
)


@pytest.mark.parametrize("name", CONFIG_CASES)
def test_validate_lists_what_build_refuses(name, tmp_path, run):
    root = shutil.copytree(TINY, tmp_path / "pool")
    shutil.copyfile(BUILD_CASES / name, root / "mkdocs.yml")
    expected = load_yaml(BUILD_CASES / "expected.yaml").data[name]["output"].splitlines()[:-1]  # without its Error line
    result = run("validate", cwd=root)
    assert (result.exit_code, result.output.splitlines()) == (1, expected + ["1 error, 0 warnings."])


def test_the_shipped_and_the_new_survey_configs_need_no_trust(run, tmp_path):
    assert run("validate", cwd=REPO).exit_code == 0
    assert run("new-survey", str(tmp_path / "other"), cwd=tmp_path).exit_code == 0
    result = run("validate", cwd=tmp_path / "other")
    assert "mkdocs.yml" not in result.output


@pytest.mark.slow
def test_a_hook_runs_only_with_trust_config(tmp_path, run):
    """A real mkdocs hook: refused by default, run when the maintainer passes the flag."""
    root = shutil.copytree(TINY, tmp_path / "pool")
    marker = tmp_path / "hook-ran"
    (root / "hook.py").write_text(f"def on_config(config):\n    open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    (root / "mkdocs.yml").write_text(
        f"site_name: A tiny survey of tool-using agents\nhooks:\n  - {root / 'hook.py'}\n", encoding="utf-8"
    )
    refused = run("build", "--out", str(tmp_path / "site"), cwd=root)
    assert refused.exit_code == 1 and not marker.exists() and not (tmp_path / "site").exists()
    assert refused.output.splitlines()[0] == (
        "mkdocs.yml:2: hooks: runs the Python files it names when the site is built; "
        "remove it, or pass --trust-config if the maintainers accept that "
        "(docs/security.md: what a pull request can do)"
    )
    assert run("validate", "--trust-config", cwd=root).exit_code == 0
    trusted = run("build", "--trust-config", "--out", str(tmp_path / "site"), cwd=root)
    assert trusted.exit_code == 0, trusted.output
    assert marker.exists()


def test_kept_pages_may_not_go_where_the_next_build_would_publish_them(tmp_path, run):
    root = shutil.copytree(TINY, tmp_path / "pool")
    (root / "site").mkdir()
    result = run("build", "--out", str(tmp_path / "site"), "--keep-pages", str(root / "site" / "kept"), cwd=root)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: --keep-pages {root}/site/kept: is inside the hand-written pages (site/), which every build copies onto "
            "the site; choose a folder outside it, such as build/pages\n"
        ),
    )
    assert not (root / "site" / "kept").exists() and not (tmp_path / "site").exists()
