"""Files given on the command line (CSV pools, second-reader files, READMEs): read
whole, checked, and turned into one clear error when they cannot be used."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from . import csvcells
from .oserrors import explain
from .problems import PaperpoolError
from .yamlio import YamlProblem, read_text

MAX_INPUT_BYTES = 50_000_000
# Control characters other than tab and line breaks (C0, DEL and C1): never data, and
# printed back they could move a reader's terminal cursor or rewrite what it shows.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def read_input(path: Path, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The text of a file given on the command line, or a PaperpoolError saying why not."""
    try:
        return read_text(path, max_bytes)
    except YamlProblem as exc:
        raise PaperpoolError(f"{path.name}:{exc.line}: {exc.message}") from None
    except OSError as exc:
        raise PaperpoolError(explain(exc, path, "read")) from None


def read_table(path: Path, check_header: Callable[[list[str]], None], empty_hint: str) -> Iterator[tuple[int, dict]]:
    """(line, {column: cell}) per non-blank row of a CSV file, one row at a time (a caller
    keeps what it needs of each: a row of a thousand empty cells is a thousand entries),
    each cell (the header's too) read back to the text paperpool wrote it from (csvcells:
    a formula's quote taken away). `check_header` raises a PaperpoolError for a header the
    caller cannot use; a column named twice, ragged rows, control characters and CSV
    syntax errors (strict quoting: a stray quote is an error, not part of a cell) are
    reported with their line, as the rows come to them."""
    name = path.name
    text = read_input(path)
    control = _CONTROL.search(text)
    if control:
        line = text.count("\n", 0, control.start()) + 1
        raise PaperpoolError(
            f"{name}:{line}: control character U+{ord(control.group()):04X} in the file; "
            "remove it (a CSV holds text, tabs and line breaks only)"
        )
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1  # the line the row being read starts on
    try:
        header = [csvcells.read(cell) for cell in next(reader, [])]
        if not header:
            raise PaperpoolError(f"{name}:1: the file is empty; the first line must name the columns{empty_hint}")
        separator = next((sep for sep in ";\t|" if len(header) == 1 and sep in header[0]), None)
        if separator:
            raise PaperpoolError(
                f"{name}:1: the header is one column holding {separator!r}: the columns are separated by "
                f"{separator!r}, not commas; save the file as CSV with commas"
            )
        twice = sorted(column for column, times in Counter(header).items() if times > 1)
        if twice:
            raise PaperpoolError(f"{name}:1: column(s) {', '.join(twice)} appear more than once; keep one of each")
        check_header(header)
        start = reader.line_num + 1
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                start = reader.line_num + 1
                continue
            if len(cells) != len(header):
                raise PaperpoolError(
                    f"{name}:{reader.line_num}: row has {len(cells)} cells but the header has "
                    f"{len(header)}; check for an unquoted comma"
                )
            yield reader.line_num, dict(zip(header, map(csvcells.read, cells), strict=True))
            start = reader.line_num + 1
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise PaperpoolError(
                f"{name}:{start}: CSV syntax: a quote opened in this row is never closed; "
                'close it, or double a quote that belongs to the text ("")'
            ) from None
        raise PaperpoolError(f"{name}:{reader.line_num}: CSV syntax: {exc}; check the quoting") from None
