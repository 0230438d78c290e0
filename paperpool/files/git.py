"""How paperpool runs git: never on a repository that a pool's files could make.

git looks for its repository from the folder it runs in, upward, and takes any folder laid
out as a bare repository (a HEAD file, objects/ and refs/) for one, reading that folder's
config, whose core.fsmonitor is a shell command git runs before reading the index. A pull
request can commit such a layout into a site folder or a pool in a subfolder. So every
git command paperpool runs refuses a bare repository it was not given explicitly
(safe.bareRepository, git 2.38 and later), and takes no fsmonitor command from any
repository's config (what is given on the command line wins over it).
"""

from __future__ import annotations

from pathlib import Path

GIT = ("git", "-c", "safe.bareRepository=explicit", "-c", "core.fsmonitor=false")


def bare_layout(folder: Path) -> Path | None:
    """The folder, `folder` or one above it below the first holding .git, laid out as a
    bare repository (which git would take for one), or None."""
    for place in (folder, *folder.parents):
        if (place / ".git").exists():
            return None
        if (place / "HEAD").is_file() and (place / "objects").is_dir() and (place / "refs").is_dir():
            return place
    return None


def refused_bare(stderr: bytes | str) -> bool:
    """Whether git stopped because the repository it found is a bare one, not given explicitly."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    return "safe.bareRepository" in text or "cannot use bare repository" in text
