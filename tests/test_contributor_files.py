"""The repository's contributor files: valid YAML, and the commands they run are the
ones CI runs and that exist."""

from __future__ import annotations

import shlex

import yaml

from paperpool.cli.commands import cli

from .conftest import REPO


def _load(relative: str):
    return yaml.safe_load((REPO / relative).read_text(encoding="utf-8"))


def _paperpool_commands(lines):
    """Each `paperpool ...` command in shell lines, as its words after `paperpool`."""
    for line in lines:
        words = shlex.split(line.split(">>")[0])
        for index, word in enumerate(words):
            if word.endswith("paperpool"):
                yield words[index + 1 :]


def _assert_real(words):
    command = cli.commands.get(words[0])
    assert command is not None, f"paperpool {words[0]} is not a command"
    options = {opt for param in command.params for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]}
    for word in words[1:]:
        assert not word.startswith("-") or word in options, f"paperpool {' '.join(words)}: unknown option {word}"


def test_ci_workflow_runs_the_ci_command_and_posts_the_diff():
    workflow = _load(".github/workflows/ci.yml")
    assert set(workflow[True]) == {"pull_request", "push"}  # YAML 1.1 reads the key `on` as true
    steps = workflow["jobs"]["check"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    # the same command as CI anywhere (validate, tests, claims --check, readme --check), in two jobs that run every test
    assert runs[0] == '.ci/run -m "${{ matrix.tests }}"'
    assert workflow["jobs"]["check"]["strategy"]["matrix"]["tests"] == ["not traces", "traces"]
    assert runs[1] == '.venv/bin/paperpool diff "origin/${{ github.base_ref }}" >> "$GITHUB_STEP_SUMMARY"'
    assert steps[0]["with"]["fetch-depth"] == 0
    site = {step.get("id") or step.get("run") or step["uses"]: step for step in workflow["jobs"]["site"]["steps"]}
    assert site["pages"]["uses"] == "actions/configure-pages@v5"  # the Pages address, which the build is given
    assert site["scripts/run"]["env"] == {"PAPERPOOL_SITE_URL": "${{ steps.pages.outputs.base_url }}/"}
    assert list(site).index("pages") < list(site).index("scripts/run")
    assert workflow["jobs"]["deploy"]["steps"][0]["uses"] == "actions/deploy-pages@v4"
    for words in _paperpool_commands(runs):
        _assert_real(words)
    test_script = (REPO / "scripts" / "test").read_text(encoding="utf-8")
    for check in (
        "ruff check .",
        "ruff format --check .",
        "paperpool validate --strict",
        "pytest",
        "paperpool claims --check",
        "paperpool readme --check",
    ):
        assert check in test_script


def test_pre_commit_hooks_are_ruff_and_paperpool_checks():
    hooks = _load(".pre-commit-config.yaml")["repos"][0]["hooks"]
    assert [hook["entry"] for hook in hooks] == [
        "ruff check --force-exclude",
        "ruff format --check --force-exclude",
        "paperpool validate",
        "paperpool claims --check",
        "paperpool readme --check",
    ]
    for words in _paperpool_commands(hook["entry"] for hook in hooks):
        _assert_real(words)


def test_issue_form_and_pull_request_template():
    form = _load(".github/ISSUE_TEMPLATE/suggest-a-paper.yml")
    assert {"name", "description", "body"} <= set(form)
    ids = [item["id"] for item in form["body"] if "id" in item]
    assert ids == ["title", "link", "kind", "bibtex", "tags"]
    template = (REPO / ".github" / "pull_request_template.md").read_text(encoding="utf-8")
    assert template.count("- [ ]") == 6 and "paperpool diff main" in template


def test_contributing_guide_commands_exist():
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    blocks = [block.split("```", 1)[0] for block in text.split("```sh\n")[1:]]
    lines = [line.split("#")[0] for block in blocks for line in block.splitlines() if line.strip().startswith("paperpool")]
    assert len(lines) >= 8
    for words in _paperpool_commands(lines):
        _assert_real(words)
