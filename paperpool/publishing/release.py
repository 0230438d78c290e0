"""Which paperpool is running, and how another repository installs the same one: the one
home of the pinned requirement that `new-survey` writes into a new survey (its
requirements.txt, which its workflow, paperpool's action and its README install), of the
action's `uses:` reference and of the pre-commit hooks' repository.

Everything comes from pyproject.toml: the version, and the repository's address in
`[project.urls] Repository`. An installed paperpool reads them from its distribution's
metadata (`Version`, `Project-URL`); one run from a source checkout (an editable
install, or the folder on PYTHONPATH) reads the checkout's pyproject.toml.

Whether the version is on the package index is decided by how it was installed, never by
asking the index (new-survey works offline): pip and uv record a `direct_url.json` in
the distribution's metadata (PEP 610) for every install that did not come from an index
(a wheel file, a folder, a VCS URL, an editable install); without one, this release was
taken from an index and `paperpool==X.Y.Z` installs it again. One installed from a git
repository (`pip install git+URL@REV`) is that repository at the very commit pip recorded,
which exists wherever it was installed from. Otherwise (a wheel file, a folder, a source
checkout) nothing recorded says where this release is published, so the requirement is
the declared repository at this version's tag, `paperpool @ git+URL@vX.Y.Z`, and
new-survey says so (`inferred`). A paperpool
installed from a private index or a --find-links folder counts as on the index too: the
new survey's requirements.txt is then the line to change.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from paperpool import __version__
from paperpool.files.problems import PaperpoolError

DISTRIBUTION = "paperpool"
URL_LABEL = "repository"  # [project.urls] Repository, as PEP 753 normalizes labels
CHECKOUT = Path(__file__).resolve().parents[2]  # the source checkout's root, when run from one
GITHUB = re.compile(r"^https://github\.com/(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<name>[A-Za-z0-9._-]+?)(?:\.git)?/?\Z")


@dataclass(frozen=True)
class Release:
    version: str
    repository: str  # [project.urls] Repository
    on_index: bool  # installed from a package index, which holds this version
    commit: str | None = None  # the commit of a git install, as pip recorded it

    @property
    def tag(self) -> str:
        return f"v{self.version}"

    @property
    def rev(self) -> str:
        """The revision of paperpool's repository this release is: the commit a git install
        came from, else this version's tag (pre-commit's `rev`, the action's `@`)."""
        return self.commit or self.tag

    @property
    def placeholder(self) -> bool:
        """Whether the declared repository is still pyproject.toml's placeholder (OWNER)."""
        return "/OWNER/" in self.repository + "/"

    @property
    def inferred(self) -> bool:
        """Whether the requirement is the declared repository's tag for this version,
        not a source this paperpool is known to have come from."""
        return not self.on_index and self.commit is None

    @property
    def requirement(self) -> str:
        """The pip requirement that installs this release again."""
        if self.on_index:
            return f"{DISTRIBUTION}=={self.version}"
        return f"{DISTRIBUTION} @ git+{self.repository}@{self.rev}"

    @property
    def github(self) -> str:
        """OWNER/NAME of the repository on GitHub, which `uses:` names an action by."""
        match = GITHUB.match(self.repository)
        if match is None:
            raise PaperpoolError(
                f"{DISTRIBUTION}'s repository {self.repository!r} (pyproject.toml's [project.urls] Repository) "
                "is not a https://github.com/OWNER/NAME address; GitHub Actions names paperpool's action by one"
            )
        return f"{match['owner']}/{match['name']}"

    @property
    def action(self) -> str:
        """paperpool's GitHub Action (action.yml at the repository's root) at this release's
        tag, or at the commit a git install came from."""
        return f"{self.github}@{self.rev}"


def current() -> Release:
    """The paperpool running now."""
    distribution = _running_distribution()
    if distribution is not None:
        return of_distribution(distribution)
    pyproject = CHECKOUT / "pyproject.toml"
    if pyproject.is_file():
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == DISTRIBUTION:
            return Release(__version__, _repository(project.get("urls", {}), pyproject), on_index=False)
    raise PaperpoolError(
        f"{DISTRIBUTION} {__version__} at {CHECKOUT}: neither an installed distribution nor a source checkout "
        "(pyproject.toml); install it with pip to start a new survey"
    )


def of_distribution(distribution: metadata.Distribution) -> Release:
    """The release an installed distribution of paperpool is."""
    urls = {}
    for line in distribution.metadata.get_all("Project-URL") or []:
        label, _, url = line.partition(",")
        urls[label] = url.strip()
    direct = distribution.read_text("direct_url.json")
    repository = _repository(urls, f"{DISTRIBUTION} {distribution.version}'s metadata")
    vcs = _git_source(direct)
    if vcs is not None:  # installed from a git repository: that repository, at the commit pip recorded
        repository, commit = vcs
        return Release(distribution.version, repository, on_index=False, commit=commit)
    return Release(distribution.version, repository, on_index=direct is None)


def _git_source(direct: str | None) -> tuple[str, str] | None:
    """(url, commit) of a git install's direct_url.json (PEP 610's vcs_info), else None."""
    try:
        found = json.loads(direct) if direct else None
    except ValueError:
        return None
    info = found.get("vcs_info") if isinstance(found, dict) else None
    if not isinstance(info, dict) or info.get("vcs") != "git":
        return None
    url, commit = found.get("url"), info.get("commit_id")
    if not (
        isinstance(url, str) and url.startswith("https://") and isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{40}", commit)
    ):
        return None
    return url, commit


def _repository(urls: dict[str, str], where: object) -> str:
    for label, url in urls.items():
        if re.sub(r"[^a-z0-9]", "", label.lower()) == URL_LABEL:
            return url
    raise PaperpoolError(f"{where}: no Repository in [project.urls]; it names where paperpool is published")


def _running_distribution() -> metadata.Distribution | None:
    """The installed distribution whose files are the code running now (not one that a
    source checkout on PYTHONPATH, or an editable install, stands in front of). Only what
    an installer wrote counts (its INSTALLER file): the paperpool.egg-info folder that
    setuptools leaves in a checkout it built would otherwise pass for a release from an
    index, having no direct_url.json."""
    for distribution in metadata.distributions(name=DISTRIBUTION):
        if distribution.read_text("INSTALLER") is None:
            continue
        installed = Path(distribution.locate_file(f"{DISTRIBUTION}/__init__.py"))
        if installed.is_file() and installed.resolve() == Path(__file__).resolve().parents[1] / "__init__.py":
            return distribution
    return None
