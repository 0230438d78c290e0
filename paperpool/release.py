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
taken from an index and `paperpool==X.Y.Z` installs it again. Otherwise the requirement
is the repository at this version's tag, `paperpool @ git+URL@vX.Y.Z`. A paperpool
installed from a private index or a --find-links folder counts as on the index too: the
new survey's requirements.txt is then the line to change.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from . import __version__
from .problems import PaperpoolError

DISTRIBUTION = "paperpool"
URL_LABEL = "repository"  # [project.urls] Repository, as PEP 753 normalizes labels
CHECKOUT = Path(__file__).resolve().parent.parent  # the source checkout's root, when run from one
GITHUB = re.compile(r"^https://github\.com/(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<name>[A-Za-z0-9._-]+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class Release:
    version: str
    repository: str  # [project.urls] Repository
    on_index: bool  # installed from a package index, which holds this version

    @property
    def tag(self) -> str:
        return f"v{self.version}"

    @property
    def requirement(self) -> str:
        """The pip requirement that installs this release again."""
        if self.on_index:
            return f"{DISTRIBUTION}=={self.version}"
        return f"{DISTRIBUTION} @ git+{self.repository}@{self.tag}"

    @property
    def github(self) -> str:
        """OWNER/NAME of the repository on GitHub, which `uses:` names an action by."""
        match = GITHUB.match(self.repository)
        if match is None:
            raise PaperpoolError(f"{DISTRIBUTION}'s repository {self.repository!r} (pyproject.toml's [project.urls] Repository) "
                                 "is not a https://github.com/OWNER/NAME address; GitHub Actions names paperpool's action by one")
        return f"{match['owner']}/{match['name']}"

    @property
    def action(self) -> str:
        """paperpool's GitHub Action (action.yml at the repository's root) at this release's tag."""
        return f"{self.github}@{self.tag}"


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
    raise PaperpoolError(f"{DISTRIBUTION} {__version__} at {CHECKOUT}: neither an installed distribution nor a source checkout "
                         "(pyproject.toml); install it with pip to start a new survey")


def of_distribution(distribution: metadata.Distribution) -> Release:
    """The release an installed distribution of paperpool is."""
    urls = {}
    for line in distribution.metadata.get_all("Project-URL") or []:
        label, _, url = line.partition(",")
        urls[label] = url.strip()
    on_index = distribution.read_text("direct_url.json") is None
    return Release(distribution.version, _repository(urls, f"{DISTRIBUTION} {distribution.version}'s metadata"), on_index)


def _repository(urls: dict[str, str], where: object) -> str:
    for label, url in urls.items():
        if re.sub(r"[^a-z0-9]", "", label.lower()) == URL_LABEL:
            return url
    raise PaperpoolError(f"{where}: no Repository in [project.urls]; it names where paperpool is published")


def _running_distribution() -> metadata.Distribution | None:
    """The installed distribution whose files are the code running now (not one that a
    source checkout on PYTHONPATH, or an editable install, stands in front of)."""
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    installed = Path(distribution.locate_file(f"{DISTRIBUTION}/__init__.py"))
    if installed.is_file() and installed.resolve() == Path(__file__).resolve().parent / "__init__.py":
        return distribution
    return None
