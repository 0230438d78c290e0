"""TeX math in a title, shown as text: `$\\sqrt{s}$` as √(s), `$\\Omega$` as Ω. An import
reads a .bib's LaTeX as text but keeps its math as written (bibtex.reading), and the
BibTeX a pool exports writes it back as written (bibtex.writing, with pieces()); the site
and the citations meant for reading (CSL-JSON, RIS, COinS) show it with readable()."""

from __future__ import annotations

import functools
import re

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


def readable(text: str) -> str:
    """`text` with each $...$ span written as text; the rest as it is."""
    if "$" not in text:
        return text
    return _MATH.sub(lambda match: _as_text(match.group(1) or match.group(2)), text)


@functools.lru_cache(maxsize=4096)
def _as_text(math: str) -> str:
    from pylatexenc.latex2text import LatexNodes2Text  # only where a title holds math

    if len(math) > LONGEST:
        return f"${math}$"
    try:
        shown = LatexNodes2Text(math_mode="text").latex_to_text(math)
    except Exception:  # noqa: BLE001  (pylatexenc's errors have no common base: the span is kept as written)
        return f"${math}$"
    return " ".join(shown.split())
