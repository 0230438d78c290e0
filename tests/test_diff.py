"""diff: the pool at a git revision against the working tree, as a reviewer reads it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import EXPECTED, TINY


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    """The tiny pool committed in a git repository of its own, as pool/ inside it."""
    root = tmp_path / "repo"
    shutil.copytree(TINY, root / "pool")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tiny pool")
    return root / "pool"


def change_the_pool(pool: Path) -> None:
    """Retag gamma, add zeta, remove exclusion x2."""
    gamma = pool / "papers" / "gamma.yaml"
    gamma.write_text(gamma.read_text(encoding="utf-8").replace("method: prompting", "method: rl"), encoding="utf-8")
    delta = (pool / "papers" / "delta.yaml").read_text(encoding="utf-8")
    (pool / "papers" / "zeta.yaml").write_text(
        delta.replace("delta", "zeta").replace("Delta step rewards", "Zeta turn rewards"), encoding="utf-8")
    (pool / "exclusions" / "x2.yaml").unlink()


def test_diff_without_changes(run, repo):
    result = run("diff", "HEAD", cwd=repo)
    assert (result.exit_code, result.output) == (0, "No change to the pool since HEAD.\n")


def test_diff_lists_records_claims_counts_and_gap_cells(run, repo):
    change_the_pool(repo)
    result = run("diff", "HEAD", cwd=repo)
    assert (result.exit_code, result.output) == (0, (EXPECTED / "diff.md").read_text(encoding="utf-8"))


def test_diff_json(run, repo):
    change_the_pool(repo)
    document = json.loads(run("diff", "HEAD", "--format", "json", cwd=repo).output)
    assert (document["added"], document["removed"]) == (["entries/zeta"], ["exclusions/x2"])
    assert document["changed"] == {"entries/gamma": [{"field": "method", "before": "prompting", "after": "rl"}]}
    claims = {c["id"]: (c["before"]["value"], c["after"]["value"], c["after"]["holds"]) for c in document["claims"]}
    assert claims == {"rl-entries": (3, 5, False), "few-step-units": (1, 2, False), "audited": (7, 7, True)}


def test_diff_refuses_an_unknown_revision(run, repo, snapshot):
    before = snapshot(repo)
    result = run("diff", "no-such-branch", cwd=repo)
    assert (result.exit_code, result.output) == (
        1, "Error: git knows no revision 'no-such-branch'; give a commit, branch or tag (e.g. HEAD~1 or main)\n")
    assert snapshot(repo) == before


def test_diff_outside_git(run, tmp_path):
    pool = tmp_path / "loose"
    shutil.copytree(TINY, pool)
    result = run("diff", "HEAD", cwd=pool)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: diff compares git revisions, but {pool} is not in a git repository (")


def test_diff_refuses_a_revision_whose_pool_is_invalid(run, repo):
    gamma = repo / "papers" / "gamma.yaml"
    gamma.write_text(gamma.read_text(encoding="utf-8").replace("method: prompting", "method: prompted"), encoding="utf-8")
    git(repo, "commit", "-qam", "broken")
    gamma.write_text(gamma.read_text(encoding="utf-8").replace("method: prompted", "method: prompting"), encoding="utf-8")
    result = run("diff", "HEAD", cwd=repo)
    assert (result.exit_code, result.output) == (1, (
        "Error: at HEAD: the pool is not valid: papers/gamma.yaml:6: method: 'prompted' is not an allowed value; "
        "did you mean 'prompting'? use one of rl, prompting, search; run paperpool validate\n"))
