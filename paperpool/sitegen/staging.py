"""Building beside the output and swapping it in: how `build` (and --keep-pages) replace
a folder without losing it to a failure, and without touching anything they did not make.

Each run builds in a scratch folder of its own beside the output (`.site.building-XXXX`,
on the same file system, so that the swap is two renames), which it marks and locks
while it runs. The swap moves the old output into that scratch folder and the new one
into its place; the scratch folder, with the old output, is then removed. A run killed
between the two renames leaves the old output in its scratch folder, and the next run
puts it back.

Two runs in one pool (a maintainer's build while `serve` rebuilds, two CI steps in one
workspace) each build in their own scratch folder, and the last swap wins: the swap,
the recovery and the clean-up of abandoned scratch folders are done holding a lock on
the output's parent folder, so that no run removes another's scratch folder or swaps
while another is half-way through its swap.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from paperpool.files.git import GIT, bare_layout, refused_bare
from paperpool.files.oserrors import shown_path
from paperpool.files.problems import PaperpoolError
from paperpool.files.yamlio import holding_folder

LOCK = ".lock"  # in a scratch folder: held by its run for as long as the run goes on
MARK = ".paperpool-staging"  # in a scratch folder: paperpool made it (a folder without it is never removed)
PREVIOUS = "previous"  # in a scratch folder: the output it replaced, until the folder goes


def _pattern(out: Path) -> str:
    return f".{out.name}.building-"


def committed(folder: Path) -> list[str]:
    """The files in `folder` that git tracks, when it lies in a repository: none of them
    is a command's output to replace, whatever marker a pull request committed beside
    them. Without git, or outside a repository, none is known. A folder laid out as a
    bare repository is refused (files/git.py: git would have run its config's commands)."""
    if not folder.is_dir():
        return []
    try:
        listed = subprocess.run(
            [*GIT, "-C", str(folder), "ls-files", "-z", "--", "."], check=False, capture_output=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if listed.returncode != 0 and refused_bare(listed.stderr):
        laid_out = bare_layout(folder.absolute()) or folder
        raise PaperpoolError(
            f"{shown_path(os.path.relpath(laid_out))}: is laid out as a git repository (a HEAD file, objects/ and "
            "refs/), which git would take for the pool's and run its commands from; remove those files (nothing was written)"
        )
    if listed.returncode != 0:
        return []
    return sorted(name.decode("utf-8", "backslashreplace") for name in listed.stdout.split(b"\0") if name)


@contextlib.contextmanager
def staging(out: Path, marker: str) -> Iterator[Path]:
    """A scratch folder of this run beside `out`, removed whatever happens. `marker`:
    the file every output of this kind holds, by which a killed run's output is told
    from anything else in its scratch folder."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as held:
        with holding_folder(out.parent):
            _recover(out, marker)
            _remove_abandoned(out)
            folder = Path(tempfile.mkdtemp(prefix=_pattern(out), dir=out.parent))
            held.callback(shutil.rmtree, folder, ignore_errors=True)
            (folder / MARK).write_text("a build's scratch folder; paperpool removes it\n", encoding="utf-8")
            held.enter_context(_held(folder / LOCK))  # before the parent's lock goes: no other run sees it unlocked
        yield folder


def swap(new: Path, out: Path, folder: Path) -> None:
    """Put `new` where `out` is: the old output goes into this run's scratch `folder`
    (removed with it), then `new` into its place."""
    with holding_folder(out.parent):
        if os.path.lexists(out):
            out.rename(folder / PREVIOUS)
        new.rename(out)


def _recover(out: Path, marker: str) -> None:
    """The output a killed run had moved aside and not replaced, put back: a folder (not
    a link, which a pull request could have laid there) holding the output's marker."""
    if os.path.lexists(out):
        return
    for folder in _abandoned(out):
        previous = folder / PREVIOUS
        if previous.is_dir() and not previous.is_symlink() and (previous / marker).is_file():
            previous.rename(out)
            return


def _remove_abandoned(out: Path) -> None:
    for folder in _abandoned(out):
        shutil.rmtree(folder, ignore_errors=True)


def _abandoned(out: Path) -> list[Path]:
    """The scratch folders of this output whose run is gone: paperpool's mark in them,
    their lock free. Called holding the parent folder's lock."""
    found = []
    for folder in sorted(out.parent.glob(_pattern(out) + "*")):
        if folder.is_symlink() or not (folder / MARK).is_file() or not (folder / LOCK).is_file():
            continue
        with contextlib.suppress(OSError), _held(folder / LOCK, wait=False):
            found.append(folder)
    return found


@contextlib.contextmanager
def _held(lock: Path, wait: bool = True) -> Iterator[None]:
    """An exclusive lock on a file; OSError at once when another process holds it and
    `wait` is false. Without fcntl (Windows), no lock: scratch folders then stay."""
    try:
        import fcntl
    except ImportError:
        if not wait:
            raise OSError("no file locks here") from None
        yield
        return
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
