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
LONGEST = 1000  # characters of math read as text; a longer span (no title's) is kept as written


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
# of 120 characters took minutes). A text with more than a few is read with its `[` as text.
_OPTIONAL_OPENER = re.compile(r"(\\[A-Za-z@]+\*?\s*)\[")
MOST_OPENERS = 4


def bounded_brackets(latex: str) -> str:
    """`latex` as pylatexenc can read it in time linear in its length."""
    if len(_OPTIONAL_OPENER.findall(latex)) <= MOST_OPENERS:
        return latex
    return _OPTIONAL_OPENER.sub(lambda match: match.group(1) + "{[}", latex)


def readable(text: str) -> str:
    """`text` with each $...$ span written as text; the rest as it is."""
    if "$" not in text:
        return text
    return _MATH.sub(lambda match: _as_text(match.group(1) or match.group(2)), text)


@functools.lru_cache(maxsize=4096)
def _as_text(math: str) -> str:
    from pylatexenc.latex2text import LatexNodes2Text  # only where a title holds math

    if len(math) > LONGEST or not braces_pair(math):  # (unclosed: pylatexenc tries every reading, 3.4 times longer each two)
        return f"${math}$"
    try:
        shown = LatexNodes2Text(math_mode="text").latex_to_text(bounded_brackets(math))
    except Exception:  # noqa: BLE001  (pylatexenc's errors have no common base: the span is kept as written)
        return f"${math}$"
    return " ".join(shown.split())
