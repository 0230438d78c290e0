"""What the trace wing needs beyond paperpool itself, installed by `pip install
'paperpool[traces]'` (pyproject.toml's traces extra). The wing's commands, site pages and
checks are registered whether or not it is installed; each says, in one line, what to
install before it reads a trace."""

from __future__ import annotations

import functools
import importlib.util

from paperpool.files.problems import PaperpoolError

# the modules the extra's packages install: orjson and msgspec read traces, pyarrow and
# duckdb write and summarise corpora as tables, zstandard reads .zst corpora
MODULES = ("orjson", "msgspec", "pyarrow", "duckdb", "zstandard")
INSTALL = "pip install 'paperpool[traces]'"


@functools.cache
def missing() -> tuple[str, ...]:
    return tuple(name for name in MODULES if importlib.util.find_spec(name) is None)


def needed(what: str) -> str | None:
    """Why `what` cannot run here, in words, or None when the extra is installed."""
    if not missing():
        return None
    return f"{what} needs paperpool's traces extra, which is not installed (no {', '.join(missing())}); install it: {INSTALL}"


def require(what: str) -> None:
    why = needed(what)
    if why:
        raise PaperpoolError(why)
