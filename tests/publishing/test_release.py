"""paperpool/publishing/release.py: the requirement a new survey pins, from how this paperpool was
installed. Each case is a real distribution's metadata folder, read by importlib.metadata."""

from __future__ import annotations

import json
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from paperpool import __version__
from paperpool.files.problems import PaperpoolError
from paperpool.publishing import release

from ..conftest import REPO

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _installed(site: Path, version: str, urls: dict[str, str], direct_url: dict | None) -> metadata.Distribution:
    """A distribution's metadata as pip writes it into site-packages."""
    info = site / f"paperpool-{version}.dist-info"
    info.mkdir(parents=True)
    lines = [
        "Metadata-Version: 2.4",
        "Name: paperpool",
        f"Version: {version}",
        *(f"Project-URL: {k}, {v}" for k, v in urls.items()),
    ]
    (info / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url), encoding="utf-8")
    return metadata.PathDistribution(info)


def test_a_release_from_the_index_pins_its_version(tmp_path):
    installed = _installed(
        tmp_path,
        "1.4.2",
        {"Homepage": "https://example.org/", "Repository": "https://github.com/acme/paperpool"},
        direct_url=None,
    )
    this = release.of_distribution(installed)
    assert (this.on_index, this.requirement) == (True, "paperpool==1.4.2")
    assert (this.github, this.action, this.tag) == ("acme/paperpool", "acme/paperpool@v1.4.2", "v1.4.2")


def test_a_release_not_from_an_index_pins_the_repository_at_its_tag(tmp_path):
    wheel = {"url": "file:///tmp/paperpool-1.4.2-py3-none-any.whl", "archive_info": {}}
    installed = _installed(
        tmp_path,
        "1.4.2",
        {"Source Code": "https://example.org/", "repository": "https://github.com/acme/paperpool.git"},
        direct_url=wheel,
    )
    this = release.of_distribution(installed)
    assert (this.on_index, this.requirement) == (False, "paperpool @ git+https://github.com/acme/paperpool.git@v1.4.2")
    assert this.action == "acme/paperpool@v1.4.2"  # the .git ending is not part of the action's name


def test_a_release_without_a_repository_is_refused(tmp_path):
    installed = _installed(tmp_path / "a", "1.0", {"Homepage": "https://example.org/"}, direct_url=None)
    with pytest.raises(PaperpoolError, match="no Repository in \\[project.urls\\]"):
        release.of_distribution(installed)
    elsewhere = release.of_distribution(
        _installed(tmp_path / "b", "1.0", {"Repository": "https://gitlab.com/acme/paperpool"}, None)
    )
    assert elsewhere.requirement == "paperpool==1.0"
    with pytest.raises(PaperpoolError, match="not a https://github.com/OWNER/NAME address"):
        assert elsewhere.action


def test_this_checkout_pins_the_repository_of_pyproject():
    """The tests run paperpool from this checkout, which is not a release from an index:
    the repository and the version are pyproject.toml's, the one place they are stated."""
    this = release.current()
    assert this == release.Release(PROJECT["version"], PROJECT["urls"]["Repository"], on_index=False)
    assert this.version == __version__
    assert this.requirement == f"paperpool @ git+{PROJECT['urls']['Repository']}@v{PROJECT['version']}"


def test_a_git_install_pins_the_commit_it_came_from(tmp_path):
    """pip records the commit of `pip install git+URL@REV` (PEP 610's vcs_info): the pin,
    the hooks' rev and the action's ref name that commit, which exists where it came from."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    git = {
        "url": "https://github.com/acme/paperpool",
        "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": "main"},
    }
    this = release.of_distribution(_installed(tmp_path, "1.4.2", {"Repository": "https://github.com/OWNER/paperpool"}, git))
    assert (this.on_index, this.inferred) == (False, False)
    assert this.requirement == f"paperpool @ git+https://github.com/acme/paperpool@{commit}"
    assert (this.rev, this.action) == (commit, f"acme/paperpool@{commit}")


def test_a_wheel_or_folder_install_pins_the_declared_tag_and_says_it_is_inferred(tmp_path):
    folder = {"url": "file:///home/me/paperpool", "dir_info": {"editable": True}}
    this = release.of_distribution(_installed(tmp_path, "1.4.2", {"Repository": "https://github.com/acme/paperpool"}, folder))
    assert (this.inferred, this.rev, this.requirement) == (
        True,
        "v1.4.2",
        "paperpool @ git+https://github.com/acme/paperpool@v1.4.2",
    )


def test_the_placeholder_address_is_told_apart(tmp_path):
    placeholder = release.of_distribution(
        _installed(
            tmp_path / "a", "1.0", {"Repository": "https://github.com/OWNER/paperpool"}, {"url": "file:///x", "dir_info": {}}
        )
    )
    real = release.of_distribution(
        _installed(
            tmp_path / "b", "1.0", {"Repository": "https://github.com/acme/paperpool"}, {"url": "file:///x", "dir_info": {}}
        )
    )
    assert (placeholder.placeholder, real.placeholder) == (True, False)
