"""What a spreadsheet would run in a CSV cell, said here without csvcells's own
expressions: the tests of formula-safe CSV (files/test_csvcells.py, test_hostile.py) read
every cell paperpool writes with it."""

from __future__ import annotations

import csv
import io

from paperpool.files import csvcells

# what a spreadsheet may start a cell after, in a line it splits on semicolons or tabs
SEPARATORS = ";\t\r\n"


def runnable(cell: str) -> list[int]:
    """Where in a cell a spreadsheet could start a formula, said here without
    csvcells's expressions: at the start and after each separator, a tab or carriage
    return, or = + - @ after spaces and double quotes. A cell that is exactly a number is
    read as that number."""
    if csvcells.NUMBER.fullmatch(cell):
        return []
    found = []
    for start in [0] + [i + 1 for i, char in enumerate(cell) if char in SEPARATORS]:
        rest = cell[start:]
        if rest[:1] in ("\t", "\r"):
            found.append(start)
            continue
        skipped = 0
        while skipped < len(rest) and (rest[skipped] == '"' or (rest[skipped].isspace() and rest[skipped] not in SEPARATORS)):
            skipped += 1
        if rest[skipped : skipped + 1] in ("=", "+", "-", "@"):
            found.append(start)
    return found


def runnable_cells(text: str) -> list[str]:
    """The cells of a CSV text a spreadsheet would run."""
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row if runnable(cell)]
