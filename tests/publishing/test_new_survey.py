"""`paperpool new-survey`: another survey's pool that validates and builds at once."""

from __future__ import annotations

import tomllib

import pytest
import yaml

from paperpool.publishing import release

from ..conftest import REPO

REPOSITORY = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]


@pytest.mark.slow
def test_new_survey_validates_and_builds(run, tmp_path):
    result = run("new-survey", "halting", "--title", 'Halting in agent systems: a "survey"', cwd=tmp_path)
    assert result.exit_code == 0
    assert result.output == (
        "created halting: .github/workflows/paperpool.yml, .gitignore, .pre-commit-config.yaml, README.md, claims.yaml, exclusions/, "
        "mkdocs.yml, papers/schulman2017proximal.yaml, registry.yaml, requirements.txt, schemas/, site/index.md\n"
        # the tests run paperpool from this checkout, whose pyproject.toml has no address yet
        f"warning: paperpool's address is not filled in ([project.urls] Repository of its pyproject.toml says {REPOSITORY}): "
        "requirements.txt, .pre-commit-config.yaml's rev and the workflow's uses: name that placeholder; replace it in those "
        "three places with the repository paperpool is published at.\n"
        "next: cd halting, edit registry.yaml (the taxonomy), then paperpool add --arxiv ID (or --doi, or import-bib), "
        "paperpool validate and paperpool build.\n"
    )
    root = tmp_path / "halting"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["halting"]  # no staging folder left
    assert (
        yaml.safe_load((root / "registry.yaml").read_text(encoding="utf-8"))["survey"]["title"]
        == 'Halting in agent systems: a "survey"'
    )
    assert (
        run("validate", cwd=root).output,
        run("claims", "--check", cwd=root).output,
        run("readme", "--check", cwd=root).output,
    ) == (
        "ok: 1 entry and 0 exclusions, no problems.\n",
        "1 claim: all hold.\n",
        "README.md: the generated block is up to date.\n",
    )
    result = run("build", cwd=root)
    assert result.exit_code == 0, result.output
    assert result.output.endswith("/index.html\n") and (root / "build" / "site" / "index.html").is_file()
    assert (root / "build" / "site" / "entries" / "schulman2017proximal.html").is_file()
    assert "Approach x setting" in (root / "build" / "site" / "gaps.html").read_text(encoding="utf-8")
    # the pool takes new papers straight away
    result = run(
        "add",
        "--no-interactive",
        "--set",
        "title=Learning to halt",
        "--set",
        "authors=Roe, Rick",
        "--set",
        "year=2026",
        "--set",
        "urls=https://example.org/halt",
        "--set",
        "approach=training",
        "--set",
        "summary=Halts early.",
        cwd=root,
    )
    assert result.exit_code == 0 and result.output.startswith("created papers/roe2026learning.yaml. Then:")
    assert run("validate", cwd=root).output == "ok: 2 entries and 0 exclusions, no problems.\n"


def test_new_survey_workflow_runs_the_checks(run, tmp_path):
    """The workflow checks with paperpool's action at this release's tag, which installs
    the one pinned requirement; the pre-commit hooks are paperpool's, at the same tag."""
    run("new-survey", "s", cwd=tmp_path)
    this = release.current()
    workflow = yaml.safe_load((tmp_path / "s" / ".github" / "workflows" / "paperpool.yml").read_text(encoding="utf-8"))
    assert workflow["jobs"]["check"]["steps"] == [
        {"uses": "actions/checkout@v4", "with": {"fetch-depth": 0}},
        {"uses": this.action, "with": {"requirements-file": "requirements.txt"}},
    ]
    assert this.action == f"{this.github}@v{this.version}" and this.repository == f"https://github.com/{this.github}"
    assert workflow["jobs"]["deploy"]["steps"][0]["uses"] == "actions/deploy-pages@v4"
    assert workflow["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    requirements = (tmp_path / "s" / "requirements.txt").read_text(encoding="utf-8")
    assert [line for line in requirements.splitlines() if not line.startswith("#")] == [this.requirement]
    readme = (tmp_path / "s" / "README.md").read_text(encoding="utf-8")
    assert "pip install -r requirements.txt" in readme and "paperpool==" not in readme and "paperpool @" not in readme
    hooks = yaml.safe_load((tmp_path / "s" / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert hooks == {
        "repos": [
            {
                "repo": this.repository,
                "rev": f"v{this.version}",
                "hooks": [{"id": "paperpool-validate"}, {"id": "paperpool-claims"}, {"id": "paperpool-readme"}],
            }
        ]
    }
    assert yaml.safe_load((tmp_path / "s" / "registry.yaml").read_text(encoding="utf-8"))["survey"]["title"] == "The s survey"


def test_new_survey_refuses_a_folder_in_use(run, tmp_path, snapshot):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine\n", encoding="utf-8")
    before = snapshot(tmp_path)
    result = run("new-survey", "taken", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {tmp_path / 'taken'}: already exists and is not empty; new-survey starts a pool in a new or empty folder\n",
    )
    result = run("new-survey", "other", "--title", "two\nlines", cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, "Error: --title: give the survey's title on one line\n")
    # the registry refuses controls: the new pool would not load (an internal error before)
    for title, code in (("A\x1b[2Jb", "001B"), ("A\u202eb", "202E")):
        result = run("new-survey", "other", "--title", title, cwd=tmp_path)
        assert (result.exit_code, result.output) == (
            1,
            f"Error: --title: contains the invisible control character U+{code}; remove it\n",
        )
    assert snapshot(tmp_path) == before and sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_new_survey_in_an_empty_folder(run, tmp_path):
    (tmp_path / "empty").mkdir(mode=0o750)
    (tmp_path / "empty").chmod(0o750)
    assert run("new-survey", "empty", cwd=tmp_path).exit_code == 0
    assert (tmp_path / "empty" / "registry.yaml").is_file()
    assert (tmp_path / "empty").stat().st_mode & 0o777 == 0o750  # the folder keeps its permissions
    assert run("new-survey", "fresh", cwd=tmp_path).exit_code == 0
    assert (tmp_path / "fresh").stat().st_mode & 0o777 == 0o777 & ~_umask()  # not mkdtemp's private 0700


def test_new_survey_refuses_a_folder_inside_a_pool(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run("new-survey", "papers/sub", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {pool_copy / 'papers' / 'sub'}: inside the pool at {pool_copy}; start a new survey in a folder of its own\n",
    )
    assert snapshot(pool_copy) == before


def _umask() -> int:
    import os

    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def test_new_survey_takes_the_site_url(run, tmp_path):
    result = run("new-survey", "s", "--site-url", "https://me.github.io/s/", cwd=tmp_path)
    assert result.exit_code == 0
    assert yaml.safe_load((tmp_path / "s" / "mkdocs.yml").read_text(encoding="utf-8"))["site_url"] == "https://me.github.io/s/"
    assert (
        run("new-survey", "t", cwd=tmp_path).exit_code == 0
    )  # no terminal, no --site-url: none, and a comment says where it goes
    assert '# site_url: "https://OWNER.github.io/REPO/"' in (tmp_path / "t" / "mkdocs.yml").read_text(encoding="utf-8")
    result = run("new-survey", "u", "--site-url", "javascript:alert(1)", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: --site-url: 'javascript:alert(1)' is not an https:// address; give the "
            "address the site will be published at, such as https://OWNER.github.io/REPO/\n"
        ),
    )
    assert not (tmp_path / "u").exists()


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("e\x1bx", "'e\\x1bx' (the title without --title): contains the invisible control character U+001B; remove it"),
        ("r\u202eev", "'r\\u202eev' (the title without --title): contains the invisible control character U+202E; remove it"),
        ("a\nb", "'a\\nb' (the title without --title): give the survey's title on one line"),
    ],
    ids=["escape", "right-to-left-override", "line-break"],
)
def test_a_folder_name_the_title_cannot_hold_is_refused_in_one_line(run, tmp_path, name, said):
    """The title made of the folder's name was an internal error (the new registry did not
    load) where --title's own was refused; nothing is left behind."""
    result = run("new-survey", name, cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: the folder's name {said}; give --title, or choose another folder name\n",
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ('https://x/"><script>alert(1)</script>', "holds '\"', which the theme would write into every page as markup; remove it"),
        ("https://x:99999/", "'https://x:99999/' cannot be read as an address (port out of range 0-65535); correct the address"),
    ],
    ids=["markup", "port"],
)
def test_a_site_url_that_validate_would_refuse_is_refused_at_once(run, tmp_path, address, said):
    result = run("new-survey", "s", "--site-url", address, cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, f"Error: --site-url: {said}\n")
    assert list(tmp_path.iterdir()) == []
