"""Problems found in a pool: collected, never raised, so a contributor sees all of them."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import click

# Characters that would act on a terminal (escape sequences), reorder a line (bidirectional
# controls) or break it, instead of being shown: a value from a file quoted in a message
# is printed with them escaped, as \x1b or \u202e.
# A lone surrogate cannot be written out at all: it is how Python holds each byte of a file
# name that is not UTF-8 (os.fsdecode's surrogateescape, U+DC80 to U+DCFF), shown as the
# byte it stands for (\xff), or a JSON text's unpaired \ud800, shown as written.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
_NOT_UTF8 = re.compile("[\udc80-\udcff]")
NOT_UTF8_NAME = "its name is not UTF-8 text, which paperpool cannot write into a page, a table or a message"


def printable(text: str, lines: bool = False) -> str:
    """`text` with its unprintable characters escaped; with `lines`, line breaks are kept."""
    def escape(match: re.Match) -> str:
        char = match.group()
        if _NOT_UTF8.match(char):
            return f"\\x{ord(char) - 0xDC00:02x}"
        return char if lines and char == "\n" else char.encode("unicode_escape").decode("ascii")
    return _UNPRINTABLE.sub(escape, text)


def utf8_name(path) -> bool:
    """Whether a path (str or Path) is UTF-8 text throughout, as every name paperpool
    reads must be: one that is not (Linux allows any byte but / in a name) is refused or
    passed over with a line saying so (name_problem), never read on."""
    return not _NOT_UTF8.search(str(path))


def name_problem(shown: str, fix: str = "rename it with UTF-8 characters") -> str:
    """The one line that refuses a file whose name is not UTF-8: its name, escaped, and how to fix it."""
    return f"{printable(shown)}: {NOT_UTF8_NAME}; {fix}"


class PaperpoolError(click.ClickException):
    """An error a command reports as one `Error: ...` line with exit status 1."""

    def format_message(self) -> str:
        return printable(self.message, lines=True)


class InvalidPool(PaperpoolError):
    """A pool a command refuses to work on: every problem is listed, one per line, then
    the one `Error: ...` line."""

    def __init__(self, problems: list[Problem], message: str):
        super().__init__(message)
        self.problems = problems

    def show(self, file=None) -> None:
        for problem in self.problems:
            click.echo(str(problem), err=True)
        super().show(file)


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    line: int
    field: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}: "
        what = f"{self.field}: " if self.field else ""
        tag = "warning: " if self.severity == "warning" else ""
        return printable(f"{where}{what}{tag}{self.message}")


def errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def warnings(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "warning"]


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {many or word + 's'}"


def suggest(name: str, known, otherwise: str) -> str:
    """How to fix an unknown name: the closest known one, or `otherwise`."""
    known = [str(item) for item in known]
    same_but_case = [item for item in known if item.casefold() == str(name).casefold()]
    close = same_but_case or difflib.get_close_matches(str(name), known, n=1)
    return f"did you mean '{close[0]}'?" if close else otherwise


def kind_of(value) -> str:
    """What a YAML value is, for a message: a list, a mapping, a number, text."""
    kinds = {list: "a list", dict: "a mapping", str: "text", bool: "a boolean", int: "a number", float: "a number"}
    return "nothing" if value is None else kinds.get(type(value), "a " + type(value).__name__)
