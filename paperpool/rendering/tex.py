"""TeX math in a title, shown as text: `$\\sqrt{s}$` as √(s), `$\\Omega$` as Ω. An import
reads a .bib's LaTeX as text but keeps its math as written (bibtex.reading), and the
BibTeX a pool exports writes it back as written (bibtex.writing, with pieces()); the site
and the citations meant for reading (CSL-JSON, RIS, COinS) show it with readable()."""

from __future__ import annotations

import functools
import logging
import re

# pylatexenc logs a warning for what it cannot read or write (a character with no LaTeX
# form, a macro without its arguments); paperpool says what matters itself, and a build
# must not print a line per title
logging.getLogger("pylatexenc").setLevel(logging.ERROR)

# math between $$ and $$, or single dollars: at least one character, no dollar inside,
# and not a dollar escaped as \$ (a price in a title stays as written)
_MATH = re.compile(r"\$\$([^$]+?)\$\$|(?<!\\)\$((?:[^$\\]|\\.)+?)(?<!\\)\$")
LONGEST = 1000  # characters of math read as text in one text; the rest (no title's) is kept as written


def pieces(text: str) -> list[tuple[bool, str]]:
    """`text` cut into (whether it is math, the piece), math pieces with their dollars."""
    found, at = [], 0
    for match in _MATH.finditer(text):
        found += [(False, text[at : match.start()])] if match.start() > at else []
        found.append((True, match.group()))
        at = match.end()
    return found + ([(False, text[at:])] if at < len(text) else [])


# The commands a math piece may hold to be written back into BibTeX as it is: symbols and
# the few that shape a formula. Any other (\input, \write18, \def, \catcode, \csname ...)
# would run when someone compiles the citation, so a piece holding one is written as text.
_SAFE_COMMANDS = frozenset(
    """alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi
    rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon
    Phi Psi Omega aleph hbar ell nabla partial infty sqrt frac dfrac tfrac mathrm mathbf mathit mathsf mathtt
    mathcal mathbb mathfrak text textrm textit textbf operatorname left right big Big bigl bigr cdot cdots
    ldots dots times div pm mp le leq ge geq ne neq approx sim simeq equiv propto in notin subset subseteq
    supset supseteq cup cap setminus emptyset forall exists neg land lor to rightarrow leftarrow
    leftrightarrow Rightarrow Leftarrow Leftrightarrow mapsto hookrightarrow uparrow downarrow sum prod int
    oint lim log ln exp sin cos tan max min sup inf arg det dim ker Pr hat tilde bar vec dot ddot overline
    underline widehat widetilde prime circ star ast bullet oplus otimes odot langle rangle lceil rceil lfloor
    rfloor mid vert Vert quad qquad""".split()
)
# a command's name, or one character escaped (\{ \} \_ \% \& \# \$ \, \; \! and a space)
_COMMAND = re.compile(r"\\([A-Za-z]+|.)", re.DOTALL)
_ESCAPED_SAFE = frozenset("{}_%&#$,;:! ")
_BARE = re.compile(r"(?<!\\)[%#&]")


def safe_math(piece: str) -> bool:
    """Whether a math piece ($...$) may be written into BibTeX as it is: only known
    commands, and braces that pair however a reader counts them (BibTeX counts every brace,
    bibtexparser only those after no backslash: `\\{\\{}}` pairs for one and closes the
    field for the other)."""
    if _BARE.search(piece) or "^^" in piece:  # a comment, parameter or tab outside its place; ^^5c is TeX's \\
        return False
    for match in _COMMAND.finditer(piece):
        name = match.group(1)
        if name not in _SAFE_COMMANDS and name not in _ESCAPED_SAFE:
            return False
    return braces_pair(piece) and braces_pair(re.sub(r"\\[{}]", "", piece))


def braces_pair(text: str) -> bool:
    """Whether every brace of `text` closes one opened before it, and all are closed (as
    BibTeX counts them: escaped ones too)."""
    depth = 0
    for character in text:
        depth += {"{": 1, "}": -1}.get(character, 0)
        if depth < 0:
            return False
    return depth == 0


# pylatexenc tries each `[` after a command as the start of an optional argument and, when
# none closes, every way of reading them: its time doubles with each (20 `\cite[` in a title
# of 120 characters took minutes; four before 90 kB of text, 10 s). A `[` that no `]`
# closes is read as text, and a text with more than a few that are closed has all of
# them read as text.
_OPTIONAL_OPENER = re.compile(r"(\\[A-Za-z@]+\*?\s*)\[")
MOST_OPENERS = 4


def bounded_brackets(latex: str) -> str:
    """`latex` as pylatexenc can read it in time linear in its length."""
    if "[" not in latex:
        return latex
    openers = {match.end() - 1 for match in _OPTIONAL_OPENER.finditer(latex)}
    if not openers:
        return latex
    closed = _closed(latex, openers)
    if len(closed) > MOST_OPENERS:
        closed = set()
    return _OPTIONAL_OPENER.sub(lambda match: match.group() if match.end() - 1 in closed else match.group(1) + "{[}", latex)


def _closed(latex: str, openers: set[int]) -> set[int]:
    """The openers (positions of `[`) that a `]` closes as pylatexenc reads them: in the
    same group, not escaped, not in a comment or in math (each passed over whole), the
    latest open one first. Where the reading is in doubt, an opener counts as open."""
    closed: set[int] = set()
    waiting: list[tuple[int, int]] = []  # (an opener, its group's depth)
    depth, at, end = 0, 0, len(latex)
    while at < end:
        character = latex[at]
        if character == "\\":
            at += 2  # an escaped character, or a command's first letter
            continue
        if character == "%":
            at = _past(latex, "\n", at)
            continue
        if character == "$":
            at = _past(latex, "$", at)
            continue
        if character == "{":
            depth += 1
        elif character == "}":
            while waiting and waiting[-1][1] == depth:  # the group ends with them open
                waiting.pop()
            depth -= 1
        elif character == "[" and at in openers:
            waiting.append((at, depth))
        elif character == "]" and waiting and waiting[-1][1] == depth:
            closed.add(waiting.pop()[0])
        at += 1
    return closed


def _past(text: str, mark: str, at: int) -> int:
    """Just past the next `mark` after `at` (the text's end when there is none)."""
    found = text.find(mark, at + 1)
    return len(text) if found < 0 else found + 1


def readable(text: str) -> str:
    """`text` with each $...$ span written as text, up to LONGEST characters of math in
    all (pylatexenc reads some 20,000 characters a second: a title of 27,000 spans took
    a build minutes); the rest as it is."""
    if "$" not in text:
        return text
    left = LONGEST

    def shown(match: re.Match) -> str:
        nonlocal left
        math = match.group(1) or match.group(2)
        left -= len(math)
        return _as_text(math) if left >= 0 else match.group()

    return _MATH.sub(shown, text)


@functools.lru_cache(maxsize=4096)
def _as_text(math: str) -> str:
    if not braces_pair(math):  # (unclosed: pylatexenc tries every reading, 3.4 times longer each two)
        return f"${math}$"
    try:
        shown = _converter().latex_to_text(bounded_brackets(math))
    except Exception:  # noqa: BLE001  (pylatexenc's errors have no common base: the span is kept as written)
        return f"${math}$"
    return " ".join(shown.split())


@functools.cache
def _converter():
    """One converter for every span (making one costs more than reading a short span)."""
    from pylatexenc.latex2text import LatexNodes2Text  # only where a title holds math

    return LatexNodes2Text(math_mode="text")
