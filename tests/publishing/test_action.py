"""paperpool's GitHub Action (action.yml) and the workflow `new-survey` writes, which uses
it. The end-to-end test builds a wheel of this checkout, installs it into a fresh virtual
environment the way a package index would serve it (pip finds it in a --find-links folder;
paperpool is not on PyPI), starts a survey with that paperpool, and runs the `run:` steps
of action.yml as GitHub runs a composite action's steps, with the inputs the generated
workflow gives, on a simulated pull request: the survey's pinned requirements.txt is
installed, validate --strict, claims --check and readme --check pass, the diff against the
base branch goes to the job summary, and the site is built under the survey's name.
Nothing is mocked: the steps are read from the YAML files, so a broken change to either
fails here. The `uses:` steps stand for what the runner provides: setup-python is the
fresh environment's Python on PATH, upload-pages-artifact is checked by the folder it
would upload."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from paperpool.publishing import newsurvey

from ..conftest import REPO

pytestmark = pytest.mark.slow  # real builds, installs or long runs: left out of the quick run, run by scripts/test and CI

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
REPOSITORY = PROJECT["urls"]["Repository"]
VERSION = PROJECT["version"]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
CONDITION = re.compile(r"^([\w.-]+) == '([^']*)'$")
TITLE = "LLM watermarking"
SITE_URL = "https://acme.github.io/watermarking/"


# --- GitHub's expressions, as far as action.yml uses them ----------------------------------


def _lookup(name: str, context: dict) -> str:
    value = context
    for part in name.split("."):
        assert isinstance(value, dict) and part in value, f"${{{{ {name} }}}}: not in the test's context"
        value = value[part]
    return str(value)


def _substitute(text: str, context: dict) -> str:
    return EXPRESSION.sub(lambda match: _lookup(match[1], context), str(text))


def _holds(condition: str, context: dict) -> bool:
    """An `if:`: comparisons of a name with a string, joined by &&; any other form fails
    the test (teach it here when action.yml needs one)."""
    results = []
    for term in EXPRESSION.sub(lambda m: m[1], condition).split("&&"):
        match = CONDITION.match(term.strip())
        assert match, f"if: {condition!r}: a form this test does not evaluate"
        results.append(_lookup(match[1], context) == match[2])
    return all(results)


def _inputs(given: dict) -> dict:
    unknown = set(given) - set(ACTION["inputs"])
    assert not unknown, f"inputs action.yml does not declare: {unknown}"
    return {name: str(given.get(name, spec.get("default", ""))) for name, spec in ACTION["inputs"].items()}


# --- action.yml's structure -----------------------------------------------------------------


def test_the_action_is_composite_and_runs_every_check():
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) == {"requirements-file", "python-version", "root", "site-url", "pages"}
    assert all(spec.get("description") and "default" in spec for spec in ACTION["inputs"].values())
    steps = ACTION["runs"]["steps"]
    assert [step.get("uses") or step["run"] for step in steps] == [
        "actions/setup-python@v5",
        'python -m pip install --quiet -r "$REQUIREMENTS"',
        "paperpool validate --strict",
        "paperpool claims --check",
        "paperpool readme --check",
        'paperpool diff "origin/$BASE_REF" >> "$GITHUB_STEP_SUMMARY"',
        "paperpool build",
        "actions/upload-pages-artifact@v3",
    ]
    assert [step.get("if") for step in steps if "if" in step] == [
        "github.event_name == 'pull_request'",
        "inputs.pages == 'true' && github.event_name == 'push'",
    ]
    used = set()
    for step in steps:
        if "run" in step:
            assert step["shell"] == "bash"  # a composite action's run step names its shell
            assert "${{" not in step["run"], (
                f"{step['run']!r}: an expression in a script (script injection); pass it through env:"
            )
            assert step["working-directory"] == "${{ inputs.root }}"
        used |= {
            m[1]
            for value in [
                *step.get("env", {}).values(),
                *step.get("with", {}).values(),
                step.get("working-directory", ""),
                step.get("if", ""),
            ]
            for m in re.finditer(r"inputs\.([\w-]+)", str(value))
        }
    assert used == set(ACTION["inputs"])  # every input does something


# --- the generated workflow's steps, run against a wheel of this checkout --------------------


def _environment(**extra: str) -> dict[str, str]:
    """This process's environment without what would put this checkout's paperpool (or the
    test's virtual environment) in front of the one under test."""
    environment = {
        k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE"}
    }
    return {**environment, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


def _run(command: list[str], cwd: Path, environment: dict[str, str], timeout: int = 1200) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
    )
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _git(cwd: Path, *args: str) -> str:
    author = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    return _run(["git", *args], cwd, _environment(**author))


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    """A folder holding one wheel of this checkout as it is now (files not yet committed
    included), built from a copy so that the checkout gains no build/ or egg-info."""
    copy = tmp_path_factory.mktemp("checkout")
    listed = _git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            (copy / name).write_bytes((REPO / name).read_bytes())
    folder = tmp_path_factory.mktemp("wheels")
    _run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(folder), str(copy)],
        copy,
        _environment(),
    )
    built = [p.name for p in folder.iterdir()]  # for this Python and platform: it holds the compiled loops (setup.py)
    assert len(built) == 1 and built[0].startswith(f"paperpool-{VERSION}-cp3") and built[0].endswith(".whl"), built
    return folder


def test_the_generated_workflow_checks_and_builds_a_new_survey_with_a_wheel(tmp_path, wheels):
    # pip finds the wheel as it would on an index (with the machine's own find-links kept)
    environment = _environment(PIP_FIND_LINKS=" ".join(filter(None, [os.environ.get("PIP_FIND_LINKS"), str(wheels)])))
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, environment)
    _run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"paperpool=={VERSION}"],
        tmp_path,
        environment,
        timeout=1800,
    )
    environment["PATH"] = f"{venv / 'bin'}{os.pathsep}{environment['PATH']}"  # what setup-python does: its Python first on PATH
    assert _run(["paperpool", "--version"], tmp_path, environment) == f"paperpool, version {VERSION}\n"
    where = _run(
        ["python", "-c", "import paperpool, sys; print(paperpool.__file__); print(sys.prefix)"], tmp_path, environment
    ).split()
    assert Path(where[0]).is_relative_to(venv) and Path(where[1]) == venv  # the wheel's paperpool, not this checkout's

    # the wheel's paperpool starts the survey, with the files this checkout's writes
    created = _run(["paperpool", "new-survey", "survey", "--title", TITLE, "--site-url", SITE_URL], tmp_path, environment)
    expected = newsurvey.create(tmp_path / "expected", TITLE, dt.date.today(), SITE_URL)
    assert created.splitlines()[0] == f"created survey: {', '.join(expected)}"
    survey = tmp_path / "survey"
    requirements = (survey / "requirements.txt").read_text(encoding="utf-8")
    assert [line for line in requirements.splitlines() if not line.startswith("#")] == [
        f"paperpool=={VERSION}"
    ]  # found as on an index

    # the workflow: checkout, then paperpool's action at this release's tag
    workflow = yaml.safe_load((survey / ".github" / "workflows" / "paperpool.yml").read_text(encoding="utf-8"))
    checkout, action = workflow["jobs"]["check"]["steps"]
    assert checkout == {"uses": "actions/checkout@v4", "with": {"fetch-depth": 0}}
    assert action["uses"] == f"{REPOSITORY.removeprefix('https://github.com/')}@v{VERSION}"  # this repository's action.yml
    assert (
        workflow["jobs"]["deploy"]["needs"] == "check"
        and workflow["jobs"]["deploy"]["steps"][-1]["uses"] == "actions/deploy-pages@v4"
    )

    # a pull request adding a paper to main
    _git(survey, "init", "-q", "-b", "main")
    _git(survey, "add", "-A")
    _git(survey, "commit", "-q", "-m", "the survey")
    _git(survey, "switch", "-q", "-c", "add-a-paper")
    _run(
        [
            "paperpool",
            "add",
            "--no-interactive",
            "--set",
            "title=Watermarks that survive paraphrase",
            "--set",
            "authors=Roe, Rick",
            "--set",
            "year=2026",
            "--set",
            "urls=https://example.org/wm",
            "--set",
            "approach=training",
            "--set",
            "summary=Marks text.",
            "--set",
            "setting=benchmark",
        ],
        survey,
        environment,
    )
    _run(["paperpool", "readme"], survey, environment)
    _git(survey, "add", "-A")
    _git(survey, "commit", "-q", "-m", "a paper")
    clone = tmp_path / "checkout"  # what actions/checkout leaves: a clone, origin's branches fetched, empty folders gone
    _git(tmp_path, "clone", "-q", "--branch", "add-a-paper", str(survey), str(clone))

    summary = tmp_path / "summary.md"
    inputs = _inputs(action["with"])
    pull_request = {"inputs": inputs, "github": {"event_name": "pull_request", "base_ref": "main"}}
    ran, outputs = [], {}
    for step in ACTION["runs"]["steps"]:
        if "if" in step and not _holds(step["if"], pull_request):
            continue
        if "uses" in step:
            assert step["uses"] == "actions/setup-python@v5", f"{step['uses']}: what stands for it in this test?"
            assert tuple(map(int, _substitute(step["with"]["python-version"], pull_request).split("."))) >= (3, 11)
            ran.append(step["uses"])
            continue
        step_environment = {
            **environment,
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_EVENT_NAME": "pull_request",
            **{name: _substitute(value, pull_request) for name, value in step.get("env", {}).items()},
        }
        script = tmp_path / "step.sh"
        script.write_text(step["run"], encoding="utf-8")
        cwd = clone / _substitute(step["working-directory"], pull_request)
        outputs[step["run"]] = _run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd, step_environment)
        ran.append(step["run"].split(" >>")[0])
    assert ran == [
        "actions/setup-python@v5",
        'python -m pip install --quiet -r "$REQUIREMENTS"',
        "paperpool validate --strict",
        "paperpool claims --check",
        "paperpool readme --check",
        'paperpool diff "origin/$BASE_REF"',
        "paperpool build",
    ]
    assert outputs["paperpool validate --strict"] == "ok: 2 entries and 0 exclusions, no problems.\n"
    assert "- added: entries/roe2026watermarks" in summary.read_text(
        encoding="utf-8"
    )  # the diff names the paper the pull request adds

    # the site, built under the survey's one name, is what a push uploads for Pages
    upload = ACTION["runs"]["steps"][-1]
    push = {"inputs": inputs, "github": {"event_name": "push", "base_ref": ""}}
    assert upload["uses"] == "actions/upload-pages-artifact@v3" and _holds(upload["if"], push)
    site = clone / _substitute(upload["with"]["path"], push)
    assert f"<title>Home - {TITLE}</title>" in (site / "index.html").read_text(encoding="utf-8")
    assert (site / "entries" / "roe2026watermarks.html").is_file()
    assert f"<loc>{SITE_URL}index.html</loc>" in (site / "sitemap.xml").read_text(encoding="utf-8")
