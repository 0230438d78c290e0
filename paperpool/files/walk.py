"""The files below a folder of a pool, found without recursion and without following a
link to a folder: Python 3.11's os.walk and Path.rglob call themselves once a level, so a
folder some 990 levels deep (git keeps such a path, some 2,000 characters) ended every
command that looked in it with a RecursionError. Past MAX_DEPTH levels, one line says so."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from .problems import PaperpoolError, printable

MAX_DEPTH = 64  # levels of folders below the one walked; no pool's pages or corpora need more


def files(folder: Path, shown: str | None = None, hidden: bool = True) -> Iterator[Path]:
    """Every file below `folder`, and every link (a link to a folder is given, not
    entered), a folder's entries in name order, depth first; without `hidden`, no name
    that starts with a dot. PaperpoolError naming the path (as `shown`, the folder's name
    for messages) past MAX_DEPTH levels."""
    pending = [(folder, 0)]
    while pending:
        current, depth = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        folders = []
        for entry in entries:
            if not hidden and entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                folders.append(Path(entry.path))
            else:
                yield Path(entry.path)
        if folders and depth >= MAX_DEPTH:
            where = Path(shown) / folders[0].relative_to(folder) if shown else folders[0]
            raise PaperpoolError(
                f"{printable(str(where))}: folders nested more than {MAX_DEPTH} levels deep; "
                "flatten them (paperpool looks no deeper)"
            )
        pending += [(sub, depth + 1) for sub in reversed(folders)]
