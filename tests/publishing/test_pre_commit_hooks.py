"""The hooks of .pre-commit-hooks.yaml, run by pre-commit itself as another survey's
repository runs them: that repository names this one (here, a git copy of this checkout)
and a commit of it, pre-commit installs paperpool from it into an environment of its own,
and each hook checks the survey's pool."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from paperpool.publishing import newsurvey, release

from ..conftest import REPO

pytestmark = pytest.mark.slow  # real builds, installs or long runs: left out of the quick run, run by scripts/test and CI

HOOKS = ["paperpool-validate", "paperpool-claims", "paperpool-readme"]


def _git(*args: str, cwd: Path) -> str:
    environment = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=environment).stdout


def _committed(folder: Path) -> str:
    _git("init", "-q", "-b", "main", cwd=folder)
    _git("add", "-A", cwd=folder)
    _git("commit", "-q", "-m", "as it is", cwd=folder)
    return _git("rev-parse", "HEAD", cwd=folder).strip()


@pytest.fixture(scope="module")
def paperpool_repository(tmp_path_factory) -> tuple[Path, str]:
    """This checkout's files as they are now (changes not yet committed included), as a
    git repository at one commit, which is what pre-commit installs a hook from."""
    copy = tmp_path_factory.mktemp("paperpool-repository")
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO).split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    return copy, _committed(copy)


def _run_hooks(survey: Path, home: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        check=False,
        cwd=survey,
        capture_output=True,
        text=True,
        env=environment,
        timeout=1800,
    )


def test_the_hooks_check_another_surveys_repository(tmp_path, paperpool_repository):
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra")
    repository, commit = paperpool_repository
    survey = tmp_path / "survey"
    newsurvey.create(survey, "LLM watermarking", dt.date(2026, 11, 23))
    # new-survey's own config names these hooks by paperpool's repository at this release's
    # tag; here the repository is the copy of this checkout, at its commit
    config = yaml.safe_load((survey / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    this = release.current()
    assert [(repo["repo"], repo["rev"], [hook["id"] for hook in repo["hooks"]]) for repo in config["repos"]] == [
        (this.repository, this.tag, HOOKS)
    ]
    config["repos"][0].update(repo=str(repository), rev=commit)
    (survey / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    _committed(survey)
    home = tmp_path / "pre-commit-home"

    passed = _run_hooks(survey, home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert [line.rsplit(".", 1)[-1] for line in passed.stdout.splitlines() if line.startswith("paperpool ")] == ["Passed"] * len(
        HOOKS
    )

    record = next((survey / "papers").glob("*.yaml"))
    record.write_text(record.read_text(encoding="utf-8").replace("year: ", "year: soon # ", 1), encoding="utf-8")
    failed = _run_hooks(survey, home)
    assert failed.returncode == 1
    assert f"papers/{record.name}:" in failed.stdout  # the hook's output names the broken record
    assert "paperpool validate --strict" in failed.stdout and "Failed" in failed.stdout
