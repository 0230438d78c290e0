"""Files given on the command line (CSV pools, second-reader files, READMEs): read
whole, checked, and turned into one clear error when they cannot be used."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

from .problems import PaperpoolError
from .yamlio import YamlProblem, read_text

MAX_INPUT_BYTES = 50_000_000


def read_input(path: Path, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The text of a file given on the command line, or a PaperpoolError saying why not."""
    try:
        return read_text(path, max_bytes)
    except YamlProblem as exc:
        raise PaperpoolError(f"{path.name}:{exc.line}: {exc.message}") from None
    except OSError as exc:
        raise PaperpoolError(f"{path}: cannot read: {exc.strerror}") from None


def read_table(path: Path, check_header: Callable[[list[str]], None], empty_hint: str) -> list[tuple[int, dict]]:
    """(line, {column: cell}) per non-blank row of a CSV file. `check_header` raises a
    PaperpoolError for a header the caller cannot use; ragged rows and CSV syntax
    errors are reported with their line."""
    name = path.name
    reader = csv.reader(io.StringIO(read_input(path), newline=""))
    try:
        header = next(reader, None)
        if not header:
            raise PaperpoolError(f"{name}:1: the file is empty; the first line must name the columns{empty_hint}")
        check_header(header)
        rows = []
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                raise PaperpoolError(f"{name}:{reader.line_num}: row has {len(cells)} cells but the header has "
                                     f"{len(header)}; check for an unquoted comma")
            rows.append((reader.line_num, dict(zip(header, cells, strict=True))))
    except csv.Error as exc:
        raise PaperpoolError(f"{name}:{reader.line_num}: CSV syntax: {exc}; check the quoting") from None
    return rows
