"""Problems found in a pool: collected, never raised, so a contributor sees all of them."""

from __future__ import annotations

import difflib
import itertools
import re
from dataclasses import dataclass

import click

# Characters that would act on a terminal (escape sequences), reorder a line (bidirectional
# controls) or break it, instead of being shown: a value from a file quoted in a message
# is printed with them escaped, as \x1b or \u202e.
# A lone surrogate cannot be written out at all: it is how Python holds each byte of a file
# name that is not UTF-8 (os.fsdecode's surrogateescape, U+DC80 to U+DCFF), shown as the
# byte it stands for (\xff), or a JSON text's unpaired \ud800, shown as written.
# The bidirectional controls: the marks (Arabic letter mark, left-to-right and right-to-left
# marks), the embeddings and overrides, and the isolates. Their one home.
BIDI_CHARACTERS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNPRINTABLE = re.compile(f"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff\ud800-\udfff{BIDI_CHARACTERS}]")
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


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value) -> bool:
    """Whether a value parsed from JSON holds a lone surrogate in some text: Python's json
    reads an unpaired \\ud800 as one, and no file (a record, a page) can then hold it. (A
    pair is read as the one character it stands for.)"""
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(lone_surrogate(key) or lone_surrogate(item) for key, item in value.items())
    if isinstance(value, list):
        return any(map(lone_surrogate, value))
    return False


def utf8_name(path) -> bool:
    """Whether a path (str or Path) is UTF-8 text throughout, as every name paperpool
    reads must be: one that is not (Linux allows any byte but / in a name) is refused or
    passed over with a line saying so (name_problem), never read on."""
    return not _NOT_UTF8.search(str(path))


def name_problem(shown: str, fix: str = "rename it with UTF-8 characters") -> str:
    """The one line that refuses a file whose name is not UTF-8: its name, escaped, and how to fix it."""
    return f"{printable(shown)}: {NOT_UTF8_NAME}; {fix}"


class PaperpoolError(click.ClickException):
    """An error a command reports as one `Error: ...` line with exit status 1, and, when
    it has `details` (the problems of an input), one line for each after it. Every
    character a terminal would act on is escaped, line breaks included: a file named
    with a line break in it (Linux allows one) cannot make a line of its own."""

    def __init__(self, message: str, details: list[str] | tuple[str, ...] = ()):
        super().__init__(message)
        self.details = list(details)

    def format_message(self) -> str:
        return "\n".join(printable(line) for line in [self.message, *self.details])


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
        what = f"{shown_name(self.field)}: " if self.field else ""  # a key of a record may be a megabyte long
        tag = "warning: " if self.severity == "warning" else ""
        return printable(f"{where}{what}{tag}{self.message}")


NAME_SHOWN = 100  # characters of a name a message quotes: a name of a megabyte made each line two


def shown_name(name: str, most: int = NAME_SHOWN) -> str:
    """A name (or text) from a file as a problem or a page quotes it: whole when short,
    else its first `most` characters and how many more there are."""
    return name if len(name) <= most else f"{name[:most]}… ({len(name) - most:,} characters more)"


def errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def warnings(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "warning"]


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {many or word + 's'}"


# What `suggest` compares, so that its work stays bounded whatever a file holds: difflib's
# ratio costs up to the product of the two names' lengths, and a trace may name a million
# events (a hundred unknown 199-character ids against 3,000 took minutes). A mistyped name
# is short and its fix one of a few thousand names: past these bounds no name is guessed.
SUGGEST_LONGEST = 64  # characters of a name guessed at (a longer one is still matched whatever its case)
SUGGEST_AMONG = 10_000  # known names: with more, none is suggested
SUGGEST_WORK = 100_000  # characters of the name times those of the known names: difflib compares with them all,
SUGGEST_SHORTLIST = 10  # else with the closest by rapidfuzz's ratio (some 2 ms for 10,000 names)
CLOSE = 0.6  # difflib.get_close_matches's cutoff


def suggest(name: str, known, otherwise: str) -> str:
    """How to fix an unknown name: the closest known one, or `otherwise`."""
    close = _closest(str(name), known)
    return f"did you mean '{close}'?" if close is not None else otherwise


def _closest(name: str, known) -> str | None:
    """The known name that differs from `name` only in case, else difflib's closest one
    (past SUGGEST_WORK, among a shortlist); None past the bounds above."""
    known = known if hasattr(known, "__len__") else list(itertools.islice(known, SUGGEST_AMONG + 1))
    if len(known) > SUGGEST_AMONG:
        return None
    known = [str(item) for item in known]
    folded = name.casefold()
    same_but_case = next((item for item in known if item.casefold() == folded), None)
    if same_but_case is not None or len(name) > SUGGEST_LONGEST:
        return same_but_case
    known = [item for item in known if _may_be_close(len(name), len(item))]
    if len(name) * sum(map(len, known)) > SUGGEST_WORK:
        known = _shortlist(name, known)
    close = difflib.get_close_matches(name, known, n=1, cutoff=CLOSE)
    return close[0] if close else None


def _may_be_close(length: int, other: int) -> bool:
    """difflib's first test (real_quick_ratio, as it computes it): names whose lengths
    are too far apart to reach the cutoff, the many long ids against a short name, are
    not compared at all."""
    return bool(length + other) and 2.0 * min(length, other) / (length + other) >= CLOSE


def _shortlist(name: str, known: list[str]) -> list[str]:
    """The known names closest to `name` by rapidfuzz's ratio. It is never below difflib's
    (the longest common subsequence against matching blocks, which are a common
    subsequence), so no name difflib would accept is left out for being under the cutoff
    (a hair under it, for rounding); difflib's best may be, when ten others rank above it
    here, and another close name is suggested."""
    from rapidfuzz import fuzz, process

    found = process.extract(name, known, scorer=fuzz.ratio, limit=SUGGEST_SHORTLIST, score_cutoff=CLOSE * 100 - 1e-6)
    return [item for item, _, _ in found]


def kind_of(value) -> str:
    """What a YAML value is, for a message: a list, a mapping, a number, text."""
    kinds = {list: "a list", dict: "a mapping", str: "text", bool: "a boolean", int: "a number", float: "a number"}
    return "nothing" if value is None else kinds.get(type(value), "a " + type(value).__name__)
