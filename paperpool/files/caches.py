"""Where paperpool keeps what it caches (checked records, answers of scholarly services):
the user's cache folder, never the pool, where a pull request could put a cache."""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder() -> Path | None:
    """Where the cache files are; None when there is no home folder to hold them."""
    configured = os.environ.get("PAPERPOOL_CACHE_DIR")
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG specification ignores a relative path
        return Path(xdg) / "paperpool"
    try:
        return Path.home() / ".cache" / "paperpool"
    except (RuntimeError, KeyError):  # no HOME and no entry in the user database
        return None
