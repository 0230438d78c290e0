"""Markdown written from records: text shown as text, tables lined up.

Titles, summaries and venues come from contributors; whatever they hold must render
as the characters they typed, never as a link, an HTML element, a table cell break or
code. Everything that writes markdown from record text goes through `text`.
"""

from __future__ import annotations

import html
import re
import urllib.parse

from paperpool.files.problems import BIDI_CHARACTERS, shown_name

# Characters that start markdown syntax anywhere in a line or a table cell ({ } because
# attribute lists turn `{: onclick=...}` into HTML attributes), escaped with a backslash.
# `<` and `&` are HTML-escaped. Some become character references instead, shown the same
# and read as nothing: `~` (strike-through) and `$` (maths, whose extension can write it
# into a tag), which Python-Markdown does not take escaped; `[`, `]` and `\`, since `\[`
# and `\(` open maths (arithmatex); `^`, which an extension a pool may turn on reads as
# insertions and superscripts (`^^x^^`, `^x^`); and `==` and `++`, marks and keys
# (`==x==`, `++ctrl++`: a single one is left as it is, so that C+ reads as typed).
SPECIAL = re.compile(r"([`*_{}|])")
REFERENCES = {ord(character): f"&#{ord(character)};" for character in "~$[]\\^"}
DOUBLED = re.compile(r"==|\+\+")
BRACES = {ord("{"): "&#123;", ord("}"): "&#125;"}
# ... and those that do only at the start of a line: headings and quotes, list items
# ("- x", "+ x", "1. x", "2) x", and fancylists' "a. x", "iv) x", "#. x") and rules ("---").
LINE_START = re.compile(r"^(\d*|[A-Za-z]|[ivxlcdmIVXLCDM]+|#)([#>]|[+\-.)](?=\s|$|[+\-]))")
OPENER = re.compile(r"^[!?:/=$]")
# Bidirectional controls reorder what follows them on screen; a reader must see the
# text in the order it was written, so they are dropped.
BIDI_CONTROLS = dict.fromkeys(map(ord, BIDI_CHARACTERS))
WHITESPACE = re.compile(r"\s+")
# look-alikes of the five characters HTML gives meaning to, for words a theme writes into
# its pages as it likes (escaped, unescaped, inside an attribute): they then stay text
TITLE_LOOKALIKES = str.maketrans({"<": "\u2039", ">": "\u203a", "&": "\uff06", '"': "\u201d", "'": "\u2019"})


def visible(value) -> str:
    """`value` as text without its bidirectional controls, for every output meant for
    people (pages, the feed, citations), so that it reads in the order it was written."""
    return str(value).translate(BIDI_CONTROLS)


def safe_title(title: str) -> str:
    """A title or other words handed to the theme rather than written into markdown."""
    return visible(title).translate(TITLE_LOOKALIKES)


# Characters of one value written as markdown (a summary is some 2,000): each escape is a
# placeholder Python-Markdown puts back by rebuilding the value's text, so a value's cost
# grows with the square of its escapes (round thirteen: a venue of 100 kB of `*` took the
# build 46 s); a longer value is shown cut, saying how many characters more the record holds.
TEXT_SHOWN = 3_000


JOINED_SHOWN = 10_000  # characters of markdown one line of many values holds


def joined(parts, separator: str = ", ") -> str:
    """Values already written as markdown, on one line, as many as fit JOINED_SHOWN
    characters, then how many more there are: Python-Markdown's time on one line grows
    faster than its escapes (4,500 authors of 35 `*` each took a build 66 s)."""
    parts = list(parts)
    shown, length = [], 0
    for part in parts:
        if shown and length + len(part) > JOINED_SHOWN:
            break
        shown.append(part)
        length += len(part) + len(separator)
    more = len(parts) - len(shown)
    return separator.join(shown) + (f"{separator}… and {more:,} more" if more else "")


def text(value) -> str:
    """`value` as inert markdown on one line: HTML escaped, markdown punctuation escaped."""
    if value is None:
        return ""
    flat = shown_name(WHITESPACE.sub(" ", visible(value)).strip(), TEXT_SHOWN)
    escaped = html.escape(flat, quote=False).translate(REFERENCES)
    escaped = SPECIAL.sub(r"\\\1", DOUBLED.sub(lambda found: f"&#{ord(found[0][0])};" * 2, escaped))
    escaped = LINE_START.sub(lambda found: f"{found[1]}&#{ord(found[2])};", escaped)
    if OPENER.match(escaped):
        escaped = f"&#{ord(escaped[0])};{escaped[1:]}"
    return escaped


def html_text(value) -> str:
    """`value` as inert HTML text on one line, for the raw HTML blocks of a page (a
    collapsed list, a table that scrolls), where markdown is not read."""
    if value is None:
        return ""
    # braces as references: critic, an extension a pool may turn on, rewrites `{++a++}`
    # into an element before anything else reads the page, inside an attribute too
    return html.escape(WHITESPACE.sub(" ", visible(value)).strip(), quote=True).translate(BRACES)


def code(value) -> str:
    """`value` shown as code, inert: an identifier, a file name or a query the pool wrote
    (a field's name, a vocabulary's id, the unknown marker). A backtick code span cannot
    hold it safely, since a backtick in the value ends the span and what follows is
    markdown again; an HTML code element around the escaped text looks the same and
    holds anything."""
    return f"<code>{text(value)}</code>"


def link(label: str, url: str) -> str:
    """A link whose label is inert and whose address cannot close the link early nor
    leave the attribute it is written into. Only http(s) addresses reach here: validate
    refuses every other scheme."""
    return f"[{text(label)}](<{address(url)}>)"


def address(url: str) -> str:
    """`url` with every character an address may not hold percent-encoded (RFC 3986:
    what is left are its unreserved and reserved characters and the `%` of an escape
    already there), so that a quote, a space or `<` in it stays part of the address."""
    return urllib.parse.quote(url, safe=URL_CHARACTERS)


URL_CHARACTERS = "-._~:/?#[]@!$&()*+,;=%"  # RFC 3986's, but `'`: an attribute may be quoted with it


PADDED = 200  # characters a table's cells are padded to at most; a longer cell is written as it is


def table(headers: list[str], rows: list[list], align: list[str] | None = None) -> str:
    """A pipe table whose columns line up in a terminal. Cells are used as given:
    escape record text with `text` first. `align` is "l" or "r" per column."""
    cells = [[str(cell) for cell in row] for row in rows]
    # padded to the column's widest cell, up to PADDED: one cell of a megabyte padding every
    # other row to it made a table of rows x that megabyte (round thirteen: 558 MB of stats)
    widths = [min(max([len(h)] + [len(row[i]) for row in cells]), PADDED) for i, h in enumerate(headers)]
    align = align or ["l"] * len(headers)

    def line(row: list[str]) -> str:
        padded = [cell.rjust(w) if a == "r" else cell.ljust(w) for cell, w, a in zip(row, widths, align, strict=True)]
        return "| " + " | ".join(padded) + " |"

    rule = (
        "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2)) for w, a in zip(widths, align, strict=True)) + "|"
    )
    return "\n".join([line(headers), rule] + [line(row) for row in cells])
