"""What the operating system refused, said the way paperpool reports bad input: one line
naming the path, what happened and what to do. A full disk, a read-only mount or a file
without permissions is the user's to fix, not a bug to report.

This table is the one place where an errno becomes words; the command line (for any
OSError a command lets through), the writers (yamlio) and the readers of files given on
the command line (inputs) all go through `explain`.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

# errno -> (what happened, how to fix it)
_EXPLAINED = {
    errno.ENOSPC: ("no space left on the device", "free some space, then run the command again"),
    errno.EDQUOT: ("the disk quota is used up", "free some space or ask for a larger quota, then run the command again"),
    errno.EROFS: ("the file system is read-only", "give a path on a writable disk, or mount this one read-write"),
    errno.EACCES: ("permission denied", "check the permissions of the file and of its folder (ls -l)"),
    errno.EPERM: (
        "operation not permitted",
        "check the permissions and attributes of the file and of its folder (ls -l, lsattr)",
    ),
    errno.ENOENT: ("no such file or folder", "check the path"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "check the path"),
    errno.EISDIR: ("is a folder", "give the path of a file"),
    errno.ELOOP: ("too many symbolic links in the path (a link pointing back at itself?)", "check the links on the path"),
    errno.ENAMETOOLONG: ("the name is too long for the file system", "give a shorter path"),
    errno.EIO: (
        "input/output error: the disk or the network file system failed",
        "check the device (dmesg), then run the command again",
    ),
    errno.EMFILE: ("too many open files", "raise the limit (ulimit -n), then run the command again"),
    errno.ENFILE: ("the system has too many open files", "close some programs, then run the command again"),
}


def explain(exc: OSError, shown: str | os.PathLike | None = None, doing: str = "") -> str:
    """`exc` as one message: `path: cannot <doing>: what happened; how to fix it`.
    `shown` is how the path is named to the user (`-o out.csv`, `README.md`); by
    default the error's own file name, relative to the current folder."""
    what, fix = _EXPLAINED.get(exc.errno, (_plain(exc), "check the path and the disk, then run the command again"))
    where = shown if shown is not None else exc.filename
    cannot = f"cannot {doing}: " if doing else ""
    return f"{shown_path(where)}: {cannot}{what}; {fix}" if where is not None else f"{cannot}{what}; {fix}"


def shown_path(path: str | os.PathLike | bytes) -> str:
    """A path as the user would type it: relative to the current folder when inside it.
    A name given as text (an option and its value) is kept as it is."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if isinstance(path, str) and not os.path.isabs(path):
        return path
    try:
        return Path(path).relative_to(Path.cwd()).as_posix()
    except (ValueError, OSError):  # outside the current folder, or the folder is gone
        return str(path)


def _plain(exc: OSError) -> str:
    """The system's own words for an errno the table does not cover, in lower case."""
    text = exc.strerror or os.strerror(exc.errno or 0) or type(exc).__name__
    return text[:1].lower() + text[1:]
