"""The cells of every CSV paperpool writes, made safe to open in a spreadsheet, and read
back: the one home of the rule.

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` as a formula
(`=HYPERLINK(...)`, `=cmd|' /C calc'!A0`), and some read past a leading tab, carriage
return or spaces first. So, as OWASP advises, a text cell that starts so is written
with a `'` before it, which a spreadsheet shows as text. The rule holds wherever a
spreadsheet may start a cell: at the start of ours, and after a semicolon or tab (the
separator a spreadsheet of another locale splits a comma-separated line on, where our
quoting no longer holds) or a line break. A cell that is exactly a number (`-0.5`,
`+3`, `-1e5`) is left as it is, whatever field it comes from: a spreadsheet reads it as
that number and runs nothing.

Reading (`read`) takes away exactly the quotes `text` put in: one `'` wherever a start
holds quotes followed by what a spreadsheet runs. So a text that itself starts with
`'=` is written `''=` and read back as `'=`, and a text such as `'Tis` is written and
read as it is: `read(text(s)) == s` for every text.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable

# what a spreadsheet may run where it starts a cell, after any of our quotes: a tab or a
# carriage return, or = + - @ after spaces (not the separators or line breaks: each
# starts a cell of its own) and double quotes (a spreadsheet that splits on semicolons
# reads our quoting as text)
_RUNS = r"'*(?:[\t\r]|(?:[^\S\t\r\n]|\")*[=+\-@])"
_RUNS_HERE = re.compile(_RUNS)
# where else it may start one: after a semicolon or tab (its separator), or a line break
_AFTER_SEPARATOR = re.compile(rf"([;\t\r\n])(?={_RUNS})")
_QUOTED_AFTER_SEPARATOR = re.compile(rf"([;\t\r\n])'(?={_RUNS})")
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def text(value: str) -> str:
    """The cell of a text: a `'` before each start a spreadsheet could run (see above)."""
    if not value[:1].isalnum() and _RUNS_HERE.match(value) and not NUMBER.fullmatch(value):
        value = "'" + value
    if ";" in value or "\t" in value or "\n" in value or "\r" in value:  # (a search of each is quicker than the regex's)
        value = _AFTER_SEPARATOR.sub(r"\1'", value)
    return value


def read(cell: str) -> str:
    """The text a cell holds: the quotes `text` put in taken away."""
    if "'" not in cell:
        return cell
    if cell[0] == "'" and _RUNS_HERE.match(cell, 1):
        cell = cell[1:]
    return _QUOTED_AFTER_SEPARATOR.sub(r"\1", cell)


def cell(value) -> str:
    """A value as a cell: nothing for None, true or false, a number as Python writes it
    (a number is never run: only one past a double's range, written -inf, is quoted), and
    any other value's text through `text`."""
    if value is None:
        return ""
    kind = type(value)
    if kind is str:
        return text(value)
    if kind is int or (kind is float and math.isfinite(value)):
        return str(value)
    if kind is bool:
        return "true" if value else "false"
    return text(str(value))


def table(rows: Iterable[Iterable], header: Iterable[str] | None = None) -> str:
    """CSV text (a line a row, ended by a newline) of `header`, when given, and `rows`,
    each cell through `cell`."""
    lines = _Lines()
    # the csv module quotes a cell holding a character of its line terminator: with \r\n,
    # a carriage return too (with \n, it wrote one raw, and a reader ended the row there)
    writer = csv.writer(lines, lineterminator="\r\n")
    if header is not None:
        writer.writerow(map(cell, header))
    writer.writerows(map(cell, row) for row in rows)
    return "".join(lines)


class _Lines(list):
    """The rows the csv module writes (a whole row a call), each ended by a newline."""

    def write(self, line: str) -> None:
        self.append(line[:-2] + "\n")
