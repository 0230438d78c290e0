"""The pool's own pages and files, read for the site as they are: a plain file inside
its folder, never through a link, within a size."""

from __future__ import annotations

from pathlib import Path

from paperpool.files.problems import PaperpoolError
from paperpool.files.yamlio import YamlProblem, read_bytes, read_text

MAX_PAGE_BYTES = 50_000_000  # a hand-written page or file of the site (a PDF, an image)


def read_page(path: Path, handwritten: Path) -> str | bytes:
    """A hand-written file of the site: a page as text, anything else (an image, a PDF) as
    bytes. It must be a plain file of the pool: a link to a file elsewhere would publish
    that file, a link to a device would never end."""
    shown = f"{handwritten.name}/{path.relative_to(handwritten).as_posix()}"
    if not path.resolve().is_relative_to(handwritten):
        raise PaperpoolError(f"{shown}: is a link to a file outside {handwritten.name}/; copy the file there instead")
    try:
        return read_text(path, MAX_PAGE_BYTES) if path.suffix == ".md" else read_bytes(path, MAX_PAGE_BYTES)
    except YamlProblem as exc:
        raise PaperpoolError(f"{shown}:{exc.line}: {exc.message}") from None
