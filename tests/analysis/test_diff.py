"""diff: the pool at a git revision against the working tree, as a reviewer reads it."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from ..conftest import EXPECTED, TINY


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=cwd, check=True, capture_output=True
    )


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
        delta.replace("delta", "zeta").replace("Delta step rewards", "Zeta turn rewards"), encoding="utf-8"
    )
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
        1,
        "Error: git knows no revision 'no-such-branch'; give a commit, branch or tag (e.g. HEAD~1 or main)\n",
    )
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
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: at HEAD: the pool is not valid: papers/gamma.yaml:6: method: 'prompted' is not an allowed value; "
            "did you mean 'prompting'? use one of rl, prompting, search; run paperpool validate\n"
        ),
    )


def _grafted(repo_root: Path, folder: str, tree: str) -> str:
    """A commit on top of HEAD whose pool/FOLDER/bomb is `tree`."""

    def out(*args: str, given: str | None = None) -> str:
        return subprocess.run(
            ["git", *args], cwd=repo_root, input=given, capture_output=True, text=True, check=True
        ).stdout.strip()

    def with_entry(parent: str, name: str, mode: str, kind: str, obj: str) -> str:
        lines = [line for line in out("ls-tree", parent).splitlines() if not line.endswith(f"\t{name}")]
        return out("mktree", given="\n".join(lines + [f"{mode} {kind} {obj}\t{name}"]) + "\n")

    folder_tree = with_entry(f"HEAD:pool/{folder}", "bomb", "040000", "tree", tree)
    pool_tree = with_entry("HEAD:pool", folder, "040000", "tree", folder_tree)
    root_tree = with_entry("HEAD", "pool", "040000", "tree", pool_tree)
    return out("commit-tree", root_tree, "-p", "HEAD", "-m", "a tree made to expand")


def _expanding_tree(repo_root: Path, levels: int) -> str:
    """A tree of 10**levels files, ten entries naming one tree at each level: a few
    objects, however many files."""

    def out(*args: str, given: str | None = None) -> str:
        return subprocess.run(
            ["git", *args], cwd=repo_root, input=given, capture_output=True, text=True, check=True
        ).stdout.strip()

    blob = out("hash-object", "-w", "--stdin", given="x")
    tree = out("mktree", given="".join(f"100644 blob {blob}\tf{i}\n" for i in range(10)))
    for _ in range(levels - 1):
        tree = out("mktree", given="".join(f"040000 tree {tree}\td{i}\n" for i in range(10)))
    return tree


def test_diff_writes_out_only_the_pools_own_files_of_a_revision(repo, run):
    """A hundred thousand files in a folder the pool does not read (issue 39's fresh
    review: diff wrote every file of the revision out, 84 s for 33 objects): not written."""
    (repo / "site").mkdir()
    (repo / "site" / "index.md").write_text("# Home\n", encoding="utf-8")
    git(repo.parent, "add", "-A")
    git(repo.parent, "commit", "-qm", "a page")
    commit = _grafted(repo.parent, "site", _expanding_tree(repo.parent, 5))
    result = run("diff", commit, cwd=repo)
    assert (result.exit_code, result.output) == (0, f"No change to the pool since {commit}.\n")


@pytest.mark.slow
def test_diff_refuses_a_revision_whose_records_expand_past_its_limit(repo, run):
    commit = _grafted(repo.parent, "papers", _expanding_tree(repo.parent, 6))
    result = run("diff", commit, cwd=repo)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: the pool at {commit} holds more than 100,000 files or 1,024 MiB in its registry, records and claims, which "
            "diff does not write out (a tree made to expand?); compare with another revision\n"
        ),
    )


@pytest.mark.slow
def test_diff_of_the_shipped_pool_whose_registry_names_corpora_and_traces(tmp_path, run):
    """diff writes out only the pool's registry, records and claims; the corpora and the
    traces folder its registry names stand in empty, as the registry's checks only look
    for them (without them, the revision's pool was refused for a missing corpus)."""
    from ..conftest import REPO

    root = tmp_path / "repo"
    shutil.copytree(
        REPO, root, ignore=shutil.ignore_patterns(".git", ".venv", "build", "site-build", "*.egg-info", "__pycache__")
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the survey's pool")
    result = run("diff", "HEAD", cwd=root)
    assert (result.exit_code, result.output) == (0, "No change to the pool since HEAD.\n")


def test_diff_refuses_a_revision_of_empty_trees_nested_past_its_limit(repo, run):
    """Sixteen names for one tree, eight deep, ending in the empty tree: no file at all,
    four billion trees (issue 39's fresh review: the files' count missed them, and git
    archive walked them all, for ever). Trees count as entries."""

    def out(*args: str, given: str = "") -> str:
        return subprocess.run(
            ["git", *args], cwd=repo.parent, input=given, capture_output=True, text=True, check=True
        ).stdout.strip()

    tree = out("hash-object", "-t", "tree", "-w", "--stdin")
    for _ in range(8):
        tree = out("mktree", given="".join(f"040000 tree {tree}\td{i}\n" for i in range(16)))
    commit = _grafted(repo.parent, "papers", tree)
    result = run("diff", commit, cwd=repo)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: the pool at {commit} holds more than 100,000 files or 1,024 MiB in its registry, records and claims, which "
            "diff does not write out (a tree made to expand?); compare with another revision\n"
        ),
    )


def test_diff_refuses_a_revision_whose_tree_names_an_entry_dot_dot(repo, run, tmp_path):
    """git mktree takes an entry named `..`, and a fetch checks nothing by default (issue
    39's fresh review: papers/../../../x.txt was written outside the temporary folder,
    anywhere the user may write): refused before anything leaves the folder."""

    def out(*args: str, given: str = "") -> str:
        return subprocess.run(
            ["git", *args], cwd=repo.parent, input=given, capture_output=True, text=True, check=True
        ).stdout.strip()

    blob = out("hash-object", "-w", "--stdin", given="written by diff\n")
    tree = out("mktree", given=f"100644 blob {blob}\tescaped.txt\n")
    for _ in range(6):
        tree = out("mktree", given=f"040000 tree {tree}\t..\n")
    papers = out("mktree", given=out("ls-tree", "HEAD:pool/papers") + f"\n040000 tree {tree}\t..\n")
    pool = out(
        "mktree",
        given="\n".join(line for line in out("ls-tree", "HEAD:pool").splitlines() if not line.endswith("\tpapers"))
        + f"\n040000 tree {papers}\tpapers\n",
    )
    root = out("mktree", given=f"040000 tree {pool}\tpool\n")
    commit = out("commit-tree", root, "-p", "HEAD", "-m", "an entry named ..")
    result = run("diff", commit, cwd=repo)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: the pool at {commit} names a file 'pool/papers/../../") and result.output.endswith(
        "escaped.txt', a path out of its folder; compare with another revision\n"
    ), result.output
    assert not list(Path("/tmp").glob("escaped.txt")) and not list(tmp_path.rglob("escaped.txt"))


@pytest.mark.slow
def test_a_revision_whose_registry_names_twenty_thousand_corpora_is_refused_at_once(repo, run):
    """Issue 39's fourth review: each path a revision's registry named was asked of git by a
    process of its own, before the registry's schema (at most 20 corpora) was checked:
    20,000 corpora took 36 s. git now answers for all of them in one process (scripts/bench
    times it: paperpool/bench/bounded.py)."""
    registry = repo / "registry.yaml"
    kept = registry.read_text(encoding="utf-8")
    corpora = ", ".join(f"{{name: c{k}, path: c{k}, title: C}}" for k in range(20_000))
    registry.write_text(kept + f"traces:\n  corpora: [{corpora}]\n", encoding="utf-8")
    git(repo, "commit", "-qam", "many corpora")
    registry.write_text(kept, encoding="utf-8")
    result = run("diff", "HEAD", cwd=repo)
    assert result.exit_code == 1 and result.output.startswith("Error: at HEAD: the pool is not valid: registry.yaml:")
    assert result.output.count("\n") == 1


def test_a_revision_s_file_over_a_pool_file_s_limit_is_refused_before_it_is_read(repo, run, tmp_path):
    """Issue 39's fifth review: a 900 MB record (2 MB of git objects) was read whole and
    written out, 1.9 GB at the peak, before the reader refused it; git's listing gives its
    size, and it is refused at once (here 5 MB)."""
    record = repo / "papers" / "zz-big.yaml"
    record.write_text("a" * 5_000_000, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "big")
    git(repo, "rm", "-q", str(record))
    git(repo, "commit", "-qm", "gone")
    result = run("diff", "HEAD~1", cwd=repo)
    assert (result.exit_code, result.output) == (
        1,
        "Error: the pool at HEAD~1 holds pool/papers/zz-big.yaml, 5,000,000 bytes, over the 1,000,000 bytes a file of "
        "a pool may be; compare with another revision\n",
    )
    assert not list(Path(tempfile.gettempdir()).glob("paperpool-diff-*"))


def test_a_revision_naming_a_file_too_long_for_the_file_system_says_it_is_the_revision_s(repo, run):
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=repo.parent, input="x", capture_output=True, text=True, check=True
    ).stdout.strip()
    listing = subprocess.run(["git", "ls-tree", "HEAD:pool/papers"], cwd=repo.parent, capture_output=True, text=True, check=True)
    name = "a" * 300 + ".yaml"
    papers = subprocess.run(
        ["git", "mktree"],
        cwd=repo.parent,
        input=listing.stdout + f"100644 blob {blob}\t{name}\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    commit = _grafted(repo.parent, "papers", papers).strip()
    # _grafted puts the tree at papers/bomb: the long name is one level further down
    result = run("diff", commit, cwd=repo)
    assert result.exit_code == 1
    assert result.output.startswith(
        f"Error: the pool at {commit} names a file 'pool/papers/bomb/{name}' this system cannot write"
    )
    assert result.output.endswith("; compare with another revision\n")
