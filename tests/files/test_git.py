"""git run by paperpool never takes a folder of the pool for its repository: a pull request
can commit a bare repository's layout (HEAD, objects/, refs/, config) whose config names
a command for git to run (core.fsmonitor). The eighth hostile round's finding: build,
publish and serve ran it from the site folder's check for committed files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

GIT_USER = ["-c", "user.email=test@example.org", "-c", "user.name=test"]


def _lay_bare_repository(folder: Path, marker: Path) -> None:
    """What the pull request commits: a bare repository's files, and a config whose
    fsmonitor command writes `marker`."""
    (folder / "objects").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "objects" / "keep").touch()
    (folder / "refs" / "keep").touch()
    (folder / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (folder / "config").write_text(
        f'[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch {marker}; false"\n',
        encoding="utf-8",
    )


def _commit(repository: Path) -> None:
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    subprocess.run(["git", "-C", str(repository), "add", "-A", "-f"], check=True)
    subprocess.run(["git", "-C", str(repository), *GIT_USER, "commit", "-qm", "pull request"], check=True)


@pytest.mark.parametrize("command", [["build"], ["publish"]])
def test_a_bare_repository_in_the_output_folder_runs_nothing_and_is_refused(run, tiny, tmp_path, command):
    marker = tmp_path / "ran"
    _lay_bare_repository(tiny / "build", marker)
    (tiny / "build" / "site").mkdir()
    (tiny / "build" / "site" / ".paperpool-site").touch()
    _commit(tiny)
    result = run(*command, cwd=tiny)
    assert not marker.exists()
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        1,
        "Error: build: is laid out as a git repository (a HEAD file, objects/ and refs/), which git would take for the "
        "pool's and run its commands from; remove those files (nothing was written)",
    )


def test_diff_in_a_pool_laid_out_as_a_bare_repository_runs_nothing(run, tiny, tmp_path):
    """A pool kept in a subfolder of its repository, the pull request laying it out as a
    bare repository: diff's git refuses it and runs nothing."""
    repository = tmp_path / "repository"
    pool = repository / "survey"
    pool.parent.mkdir()
    tiny.rename(pool)
    marker = tmp_path / "ran"
    _lay_bare_repository(pool, marker)
    _commit(repository)
    result = run("diff", "HEAD", cwd=pool)
    assert not marker.exists()
    assert result.exit_code == 1 and "cannot use bare repository" in result.output
