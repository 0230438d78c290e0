"""Reading BibTeX with bibtexparser: records with @string macros expanded, LaTeX decoded
(links and identifiers read as written), authors split and cross-references resolved."""

from __future__ import annotations

import bisect
import itertools
import logging
import re
from dataclasses import dataclass, field

import bibtexparser
from bibtexparser import middlewares
from bibtexparser.middlewares.names import (
    InvalidNameError,
    NameParts,
    parse_single_name_into_parts,
)
from bibtexparser.model import (
    DuplicateBlockKeyBlock,
    DuplicateFieldKeyBlock,
    Entry,
    Field,
    MiddlewareErrorBlock,
    String,
)
from pylatexenc import latexwalker, macrospec
from pylatexenc.latex2text import (
    LatexNodes2Text,
    MacroTextSpec,
    get_default_latex_context_db,
)

from paperpool.files.problems import PaperpoolError, plural
from paperpool.pool import identity
from paperpool.rendering.tex import bounded_brackets

ARXIV_IN_TEXT = re.compile(r"arxiv[:\s/]*(?:abs/)?(\d{4}\.\d{4,5})(?:v\d+)?", re.IGNORECASE)
# A link in text ends at a space, a brace, a quote or angle bracket around it (<link>), or
# a ; followed by a space or another link (a ; inside a link is part of it, as in a query
# string a=1;b=2).
URL_IN_TEXT = re.compile(r"""https?://(?:[^\s;{}<>"]|;(?!\s|$|https?://))+""")
# The library logs each unreadable block as well; the command reports them itself.
logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)
# BibTeX's standard styles define the month macros, so a .bib uses them without @string.
MONTHS = {
    "jan": "January",
    "feb": "February",
    "mar": "March",
    "apr": "April",
    "may": "May",
    "jun": "June",
    "jul": "July",
    "aug": "August",
    "sep": "September",
    "oct": "October",
    "nov": "November",
    "dec": "December",
}
# Macros can double a text at each level (b = a # a, c = b # b, ...): a few kilobytes
# of .bib would expand to gigabytes, and one long macro used by every record multiplies
# the LaTeX to decode (about 100,000 characters a second when dense with accents). All
# the values of a file together, expanded, may be at most twice the file's own length
# and this much more, so that macros cost a small file a few seconds at most (a 100 kB
# file of one 96,000-character macro used 100 times took 75 s) and a large one at most
# twice its own decoding.
MACROS_MAY_ADD_CHARS = 500_000
# Decoding LaTeX takes time growing faster than the text (a value of 400,000 characters
# takes ten seconds), so one value may be at most this long; an abstract is a few
# thousand characters, the author list of a 3,000-strong collaboration under 100,000.
MAX_VALUE_CHARS = 100_000
# LaTeX is decoded recursively, a level of braces costing several stack frames; real
# records nest three or four levels.
MAX_BRACE_DEPTH = 64
_MACRO_NAME = re.compile(r"""[^\s"#%'(),={}]+""")
_SPACES = re.compile(r"\s*")
# Delimiters as bibtexparser's splitter reads them: one after a backslash is escaped.
_BRACES = re.compile(r"(?<!\\)[{}]")
_BRACES_AND_QUOTES = re.compile(r'(?<!\\)[{}"]')
# biblatex's verbatim fields (links, identifiers, file names) and crossref, a citation key,
# read as written, never as LaTeX (which reads & as a column break, % as a comment, -- as
# a dash and ~ as a space).
VERBATIM_FIELDS = {"url", "doi", "eprint", "file", "pdf", "verba", "verbb", "verbc", "crossref"}
# What a .bib written for LaTeX without the url package escapes in a link: \_ is _.
_LATEX_ESCAPE = re.compile(r"\\([_%&#$])")
_URL_MACRO = re.compile(r"\\url\s*\{([^{}]*)\}", re.DOTALL)
# A link in a text field, as written (LaTeX escapes included), which is kept whole while
# the text around it is decoded.
_LINK_IN_LATEX = re.compile(r"https?://(?:\\[_%&#$]|[^\s\\{}])+")
_HIDDEN_LINK = re.compile("\ue000(\\d+)\ue001")
# The link that a url field separates from the next: spaces, or a ; before the next link.
_LINK_SEPARATOR = re.compile(r"\s+|;(?=\s*https?://)")
# BibTeX separates names by the word "and", in any case, between whitespace, outside braces.
_NAME_TOKENS = re.compile(r"\\.|[{}]|[ \t\r\n]+and[ \t\r\n]+", re.IGNORECASE | re.DOTALL)
# The fields of a crossref'd record (a proceedings volume, a book) that are its own and
# not its papers': their title is the papers' booktitle, and its identifiers and links
# would make every paper of a volume a duplicate of the first.
NOT_INHERITED = {"title", "doi", "url", "eprint", "archiveprefix", "primaryclass", "howpublished", "note", "crossref"}


def verbatim(value: str) -> str:
    """A link or identifier as a .bib writes it: taken as it is, but for the backslash
    before _ % & # $ that LaTeX without the url package needs, and \\url{...} around it.
    A link's braces, ^ and other backslashes, which no link may hold as they are (RFC 3986),
    are percent-encoded, as a browser sends them."""
    value = " ".join(value.split())
    if match := _URL_MACRO.fullmatch(value):
        value = match.group(1).strip()
    value = _LATEX_ESCAPE.sub(r"\1", value)
    return value.translate(_ENCODED_IN_LINKS) if "://" in value else value


_ENCODED_IN_LINKS = str.maketrans({"{": "%7B", "}": "%7D", "\\": "%5C", "^": "%5E"})


class _Latex(LatexNodes2Text):
    """LaTeX read as text, as bibtexparser reads it (\\url{...} is its link, math is kept as
    written), but with every link in the text kept whole, as written."""

    def latex_to_text(self, latex: str, **parse_flags) -> str:
        links: list[str] = []

        def hide(match: re.Match) -> str:
            links.append(verbatim(match.group()))
            return f"\ue000{len(links) - 1}\ue001"

        if "\ue000" not in latex:
            latex = _LINK_IN_LATEX.sub(hide, latex)
        text = super().latex_to_text(latex, latex_context=_PARSED_MACROS, **parse_flags)
        return _HIDDEN_LINK.sub(lambda match: links[int(match.group(1))], text) if links else text


# pylatexenc's parser does not know \href (its text then fails for want of the second
# argument: the record could not be read), and its second definition of \textasciicircum
# gives ˆ, not the ^ that BibTeX exports write as {\textasciicircum}.
_PARSED_MACROS = latexwalker.get_default_latex_context_db()
_PARSED_MACROS.add_context_category("paperpool", prepend=True, macros=[macrospec.std_macro("href", False, 2)])
_TEX_NAMES = {
    "TeX": "TeX",
    "LaTeX": "LaTeX",
    "LaTeXe": "LaTeX2ε",
    "BibTeX": "BibTeX",
    "XeTeX": "XeTeX",
    "XeLaTeX": "XeLaTeX",
    "LuaTeX": "LuaTeX",
    "LuaLaTeX": "LuaLaTeX",
    "pdfTeX": "pdfTeX",
    "pdfLaTeX": "pdfLaTeX",
    "eTeX": "ε-TeX",
    "ConTeXt": "ConTeXt",
    "AmS": "AMS",
    "AmSTeX": "AMS-TeX",
    "AmSLaTeX": "AMS-LaTeX",
    "METAFONT": "METAFONT",
    "MF": "METAFONT",
    "MP": "MetaPost",
}
_TEXT_MACROS = get_default_latex_context_db()
_TEXT_MACROS.add_context_category(
    "paperpool",
    prepend=True,
    macros=[
        MacroTextSpec("url", simplify_repl="%s"),
        MacroTextSpec("textasciicircum", simplify_repl="^"),
        # how paperpool's exports write a brace that does not pair (bibtex.writing._latex)
        MacroTextSpec("textbraceleft", simplify_repl="{"),
        MacroTextSpec("textbraceright", simplify_repl="}"),
        # the names of TeX's family, which pylatexenc drops ({\LaTeX} 2.09 read as " 2.09")
        *(MacroTextSpec(macro, simplify_repl=name) for macro, name in _TEX_NAMES.items()),
    ],
)
_LATEX = _Latex(latex_context=_TEXT_MACROS, math_mode="verbatim", keep_braced_groups=False)


@dataclass
class BibRecord:
    key: str
    type: str
    line: int
    fields: dict[str, str]
    people: list[str] = field(default_factory=list)  # the authors, 'Last, First'
    more_authors: bool = False  # the list ends in BibTeX's "and others" (et al.)

    @property
    def authors(self) -> list[str]:
        """The authors as the .bib lists them, "others" for BibTeX's et al."""
        return self.people + ["others"] * self.more_authors

    @property
    def title(self) -> str:
        return " ".join(self.fields.get("title", "").split())

    @property
    def urls(self) -> list[str]:
        found = []
        for name in ("url", "howpublished"):
            for url in self.links(name):
                if URL_IN_TEXT.match(url) and url not in found:
                    found.append(url)
        return found

    def links(self, name: str) -> list[str]:
        """The links a field holds: all of `url`, which holds links only, one after another;
        the http and https links in the text of any other field."""
        value = self.fields.get(name, "")
        return [link for link in _LINK_SEPARATOR.split(value) if link] if name == "url" else URL_IN_TEXT.findall(value)

    @property
    def arxiv_id(self) -> str | None:
        if self.fields.get("eprint") and self.fields.get("archiveprefix", "arxiv").lower() == "arxiv":
            return identity.arxiv_id(self.fields["eprint"])
        for name in ("journal", "note", "url", "howpublished"):
            match = ARXIV_IN_TEXT.search(self.fields.get(name, ""))
            if match:
                return identity.arxiv_id(match.group(1))
        return None

    @property
    def doi(self) -> str | None:
        value = self.fields.get("doi", "").strip()
        return value.removeprefix("https://doi.org/").removeprefix("doi:") or None


@dataclass
class ReadBib:
    """A .bib as an import reads it: the records it could read, and one line for each it
    could not (with its line and the fix), or whose reading it had to decide."""

    records: list[BibRecord]
    refused: list[tuple[int, str]] = field(default_factory=list)  # (line, "new.bib:12: what is wrong; the fix")
    notes: list[str] = field(default_factory=list)  # records read, with a field given twice
    records_refused: int = 0  # the records the refused lines stand for (an @string's names those built on it)


def parse_bib(text: str, name: str) -> list[BibRecord]:
    """Every record of a .bib, or a PaperpoolError listing each one it cannot read."""
    read = read_bib(text, name)
    if read.refused:
        refuse_unreadable(read.refused, name)
    return read.records


def refuse_unreadable(refused: list[tuple[int, str]], name: str) -> None:
    """The records a .bib could not read, as one PaperpoolError: the first SHOWN_FAILED by
    line, and how many more."""
    lines = [line for _, line in sorted(refused, key=lambda found: found[0])]
    if len(lines) == 1:
        raise PaperpoolError(lines[0])
    more = [f"(and {len(lines) - SHOWN_FAILED:,} more)"] if len(lines) > SHOWN_FAILED else []
    raise PaperpoolError(f"{name}: {len(lines):,} unreadable records:", lines[:SHOWN_FAILED] + more)


def read_bib(text: str, name: str) -> ReadBib:
    """The records of a .bib, as BibTeX reads them, and each record it cannot read: a block
    bibtexparser cannot read (unbalanced braces, a missing comma, a citation key used
    twice), a value or macro that cannot be expanded, a name that cannot be split, LaTeX
    that cannot be decoded. Field names are read in any case (`Author =` is `author`), and
    a field given twice keeps its first value, as BibTeX does, with a note."""
    # no parse stack: the values as written, delimiters, macros and `#` included, which
    # expand_macros reads as BibTeX does (bibtexparser resolves a macro only when it is
    # the whole value, and leaves `ttl # " Extended"` as it is)
    _refuse_too_many_blocks(text, name)
    library = bibtexparser.parse_string(text, parse_stack=[])
    read = ReadBib([])
    lines = _Lines(text)
    library = _fields_as_bibtex_reads_them(library, name, read)
    library = _refuse_failed_blocks(library, lines, name, read)
    library = expand_macros(library, name, 2 * len(text) + MACROS_MAY_ADD_CHARS, read)
    for middleware in (_SeparateCoAuthors(), middlewares.SplitNameParts()):
        library = middleware.transform(library)
    library = _refuse_failed_blocks(library, lines, name, read)  # a middleware turns a record it cannot read into a failed block
    for entry in library.entries:
        record = BibRecord(entry.key, entry.entry_type.lower(), entry.start_line + 1, {})
        try:
            for item in entry.fields:
                try:
                    _read_field(record, item.key, item.value)
                except _UnreadableLatex:
                    line = item.start_line if item.start_line is not None else entry.start_line
                    raise _Refused(
                        line + 1,
                        f"{name}:{line + 1}: record '{entry.key}', {item.key}: its LaTeX cannot be read; write "
                        "the text without LaTeX, or give each macro its arguments in braces",
                    ) from None
        except _Refused as refused:
            read.refused.append((refused.line, refused.message))
            read.records_refused += 1
            continue
        read.records.append(record)
    read.records = resolve_crossrefs(read.records)
    return read


class _BuiltOnUnreadable(Exception):
    """A value using an @string macro that could not be read (on line `root`, itself or the
    one it is built on): said with that macro's problem."""

    def __init__(self, root: int):
        super().__init__(root)
        self.root = root


def _listed(names: list[str], most: int = 5) -> str:
    """The records named (the first `most`, and how many more), then how many @strings."""
    records = [name for name in names if name.startswith("record ")]
    strings = len(names) - len(records)
    parts = records[:most] + ([f"{len(records) - most:,} more records"] if len(records) > most else [])
    parts += [plural(strings, "@string macro")] if strings else []
    return ", ".join(parts)


class _Refused(Exception):
    """A record that cannot be read: its line, and the message saying why and how to fix it."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line, self.message = line, message


def _fields_as_bibtex_reads_them(library: bibtexparser.Library, name: str, read: ReadBib) -> bibtexparser.Library:
    """Each record's field names in lower case, as BibTeX reads them, and a field given
    twice (in any case) read as BibTeX reads it: its first value, noted. bibtexparser
    refuses a record giving a field twice in the same case; that record is read here (the
    library made again once: its own replace looks each block up in a list)."""
    blocks, replaced = [], False
    for block in library.blocks:
        entry = block.ignore_error_block if isinstance(block, DuplicateFieldKeyBlock) else block
        blocks.append(entry if isinstance(entry, Entry) else block)
        if not isinstance(entry, Entry):
            continue
        kept: dict[str, Field] = {}
        for item in entry.fields:
            item.key = item.key.lower()
            if item.key in kept:
                read.notes.append(
                    f"{name}:{(item.start_line if item.start_line is not None else entry.start_line) + 1}: record "
                    f"'{entry.key}': field '{item.key}' is given twice; the first value is read, as BibTeX reads it"
                )
            else:
                kept[item.key] = item
        entry.fields = list(kept.values())
        replaced = replaced or entry is not block
    return bibtexparser.Library(blocks, fail_on_duplicate_key=False) if replaced else library


def _without(library: bibtexparser.Library, dropped: list) -> bibtexparser.Library:
    """The library without the blocks `dropped`, made again once (its own remove looks each
    block up in a list: 50,000 refused records took minutes)."""
    if not dropped:
        return library
    gone = set(map(id, dropped))
    return bibtexparser.Library([block for block in library.blocks if id(block) not in gone], fail_on_duplicate_key=False)


class _Lines:
    """The line of any place in a text, each found by bisection in the line breaks' places,
    counted once (a count of the breaks before each place was once per failed record)."""

    def __init__(self, text: str):
        self.text = text
        self.breaks: list[int] | None = None

    def of(self, at: int) -> int:
        if self.breaks is None:
            self.breaks = [found.start() for found in re.finditer("\n", self.text)]
        return bisect.bisect_left(self.breaks, at) + 1


def _read_field(record: BibRecord, key: str, value) -> None:
    if key == "author" and isinstance(value, list):
        for parts in value:
            if _is_others(parts):
                record.more_authors = True
            elif author := _name(parts):
                record.people.append(author)
    elif key == "author":
        record.people = [author] if (author := _decode(str(value))) else []
    else:
        record.fields[key] = verbatim(str(value)) if key in VERBATIM_FIELDS else _decode(str(value))


SHOWN_FAILED = 100  # unreadable records named in the error; the rest are counted
# The places a record, @string, @comment or @preamble may begin: a 5 MB .bib of real records
# holds some 20,000. The parser keeps each block it cannot read with its error (2.5 kB apiece:
# 800,000 broken records in 4.8 MB took 2 GB), so a file of more is refused before it is parsed.
MOST_BLOCKS = 50_000
_BLOCK_START = re.compile(r"@\w*[ \t]*(?=[{(])")  # where bibtexparser's splitter starts one (its _BLOCK_START)


def _refuse_too_many_blocks(text: str, name: str) -> None:
    starts = sum(1 for _ in itertools.islice(_BLOCK_START.finditer(text), MOST_BLOCKS + 1))
    if starts > MOST_BLOCKS:
        raise PaperpoolError(
            f"{name}: nothing imported: more than {MOST_BLOCKS:,} records begin in it (@type{{ or @type( ), more "
            "than an import reads at once; split it into several files"
        )


def _refuse_failed_blocks(library: bibtexparser.Library, lines: _Lines, name: str, read: ReadBib) -> bibtexparser.Library:
    """Each block the library could not read, said in `read` (with its line and the fix);
    the library without them."""
    failed = library.failed_blocks
    if not failed:
        return library
    # each record's first line by key, found once: library.entries rebuilds its list on
    # every call, and 20,000 records of one key took 33 s when each looked for the first
    first_lines: dict[str, int] = {}
    for entry in library.entries:
        first_lines.setdefault(entry.key, entry.start_line + 1)
    for block in failed:
        read.refused.append((block.start_line + 1, _failed_block(block, first_lines, lines, name)))
        read.records_refused += not isinstance(getattr(block, "ignore_error_block", None), String)
    return _without(library, failed)


def _failed_block(block, first_lines: dict[str, int], lines: _Lines, name: str) -> str:
    line = block.start_line + 1  # bibtexparser counts from 0
    if isinstance(block, DuplicateBlockKeyBlock) and isinstance(block.ignore_error_block, String):
        first = block.previous_block.start_line + 1
        return f"{name}:{line}: @string macro '{block.key}' is defined twice (first on line {first}); keep one definition"
    if isinstance(block, MiddlewareErrorBlock) and isinstance(block.error, InvalidNameError):
        return (
            f"{name}:{line}: record '{block.ignore_error_block.key}': the name {block.error.name!r} cannot be split into "
            f"parts ({block.error.reason.lower()}); write each name as 'Last, First' or 'First Last', joined by ' and '"
        )
    if isinstance(block, DuplicateBlockKeyBlock):
        first = first_lines.get(block.key)
        where = f" (first on line {first})" if first else ""
        return f"{name}:{line}: citation key '{block.key}' is used twice{where}; give each record its own key"
    error = getattr(block, "error", None)
    reason = " ".join(str(getattr(error, "abort_reason", "") or "").split()).rstrip(".")
    end = getattr(error, "end_index", None)
    stopped = f", noticed on line {lines.of(end)}" if isinstance(end, int) else ""
    detail = f" ({reason}{stopped})" if reason else ""
    return f"{name}:{line}: this record cannot be read{detail}; check its braces, quotes and commas"


# ---------------------------------------------------------------------------------
# @string macros and # concatenation, expanded as BibTeX does
# ---------------------------------------------------------------------------------


def expand_macros(library: bibtexparser.Library, name: str, most_chars: int, read: ReadBib) -> bibtexparser.Library:
    """Replace every field's value as written (`ttl # " Extended"`, `{Title}`, `jan`,
    `2026`) with its text, in file order as BibTeX reads it: a macro is known from its
    @string on. A record (or @string) with a value that cannot be expanded (a macro not
    defined, braces too deep, a value too long) is said in `read` and left out of the library
    returned; a file whose expanded text grows past `most_chars` is a PaperpoolError."""
    macros = dict(MONTHS)
    expansion = _Expansion(name, most_chars)
    unreadable = []
    built_on: dict[int, list[str]] = {}  # the line of an unreadable @string -> the blocks not read with it
    for block in library.blocks:
        try:
            if isinstance(block, String):
                owner = f"@string '{block.key}'"
                macros[block.key.lower()] = expansion.text(block.value, macros, block.start_line, owner, block.key)
            elif isinstance(block, Entry):
                for item in block.fields:
                    line = item.start_line if item.start_line is not None else block.start_line
                    item.value = expansion.text(item.value, macros, line, f"record '{block.key}', {item.key}", item.key)
        except _BuiltOnUnreadable as built:
            unreadable.append(block)
            read.records_refused += isinstance(block, Entry)
            built_on.setdefault(built.root, []).append(
                f"@string '{block.key}'" if isinstance(block, String) else f"record '{block.key}' (line {block.start_line + 1})"
            )
            if isinstance(block, String):
                expansion.unreadable[block.key.lower()] = built.root
        except _Refused as refused:
            read.refused.append((refused.line, refused.message))
            read.records_refused += isinstance(block, Entry)
            unreadable.append(block)
            if isinstance(block, String):
                expansion.unreadable[block.key.lower()] = refused.line
    for at, (line, message) in enumerate(read.refused):
        if line in built_on:  # one line for the macro and what is built on it, which its fix mends
            read.refused[at] = (line, f"{message} (not read either, being built on it: {_listed(built_on[line])})")
    return _without(library, unreadable)


class _Expansion:
    """One file's expansion, counting the characters it has produced."""

    def __init__(self, name: str, most_chars: int):
        self.name, self.most_chars = name, most_chars
        self.produced = 0
        self.unreadable: dict[str, int] = {}  # the @string macros that could not be read, and their lines

    def text(self, value: str, macros: dict[str, str], line: int, owner: str, assigned: str) -> str:
        """The text of `value`, assigned to `assigned` (a field or @string name) on `line`
        (counted from 0, as bibtexparser does) by `owner`, which messages name."""
        where = f"{self.name}:{line + 1}: {owner}"
        pieces = _pieces(value.strip())
        if pieces is None:
            shown = value if len(value) <= 60 else value[:57] + "..."
            raise _Refused(
                line + 1,
                f"{where}: the value {shown!r} cannot be read; write it in braces, "
                "or as pieces in braces, quotes or @string names joined by #",
            )
        texts = []
        for kind, piece in pieces:
            if kind == "text" and (depth := _brace_depth(piece)) > MAX_BRACE_DEPTH:
                raise _Refused(
                    line + 1, f"{where}: braces nested {depth:,} deep, more than {MAX_BRACE_DEPTH}; remove the extra braces"
                )
            if kind == "name" and not piece.isdigit():
                if piece.lower() in self.unreadable:
                    raise _BuiltOnUnreadable(self.unreadable[piece.lower()])
                if piece.lower() not in macros:
                    raise _Refused(
                        line + 1,
                        f"{where}: @string macro '{piece}' is not defined; define it above this line with "
                        f"@string{{{piece} = {{...}}}}, or put the text in braces: {assigned} = {{{piece}}}",
                    )
                piece = macros[piece.lower()]
            texts.append(piece)
        length = sum(len(text) for text in texts)  # counted before the texts are joined
        if length > MAX_VALUE_CHARS:
            raise _Refused(
                line + 1,
                f"{where}: the value is {length:,} characters long, over the limit of {MAX_VALUE_CHARS:,}; "
                "shorten it or leave it out",
            )
        self.produced += length
        if self.produced > self.most_chars:
            raise PaperpoolError(
                f"{where}: with its @string macros expanded the file's text grows past "
                f"{self.most_chars:,} characters (twice the file's and {MACROS_MAY_ADD_CHARS:,} more); "
                "write the long text once instead of through a macro, or split the file"
            )
        return "".join(texts)


def _pieces(value: str) -> list[tuple[str, str]] | None:
    """A value as written, split into its pieces joined by `#`: ("text", what a pair of
    braces or quotes holds) or ("name", a macro name or number). None when it is not
    such a value (a quote or brace that does not pair)."""
    if not value:
        return [("text", "")]
    pieces: list[tuple[str, str]] = []
    position = 0
    while True:
        position = _SPACES.match(value, position).end()
        opening = value[position : position + 1]
        if opening in ("{", '"'):
            end = _closing(value, position)
            if end is None:
                return None
            pieces.append(("text", value[position + 1 : end]))
            position = end + 1
        else:
            word = _MACRO_NAME.match(value, position)
            if word is None:
                return None
            pieces.append(("name", word.group()))
            position = word.end()
        position = _SPACES.match(value, position).end()
        if position == len(value):
            return pieces
        if value[position] != "#":
            return None
        position += 1


def _brace_depth(text: str) -> int:
    depth = deepest = 0
    for match in _BRACES.finditer(text):
        depth += 1 if match.group() == "{" else -1
        deepest = max(deepest, depth)
    return deepest


def _closing(value: str, start: int) -> int | None:
    """Where the brace or quote opened at `start` closes; a quote closes only outside
    braces, as in "a {"} b"."""
    quoted = value[start] == '"'
    depth = 0 if quoted else 1
    for match in (_BRACES_AND_QUOTES if quoted else _BRACES).finditer(value, start + 1):
        char = match.group()
        if char == '"':
            if depth == 0:
                return match.start()
        elif char == "{":
            depth += 1
        else:
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and not quoted:
                return match.start()
    return None


class _SeparateCoAuthors(middlewares.SeparateCoAuthors):
    """bibtexparser's, with the names split by `split_names`."""

    def _transform_field_value(self, name: str) -> list[str]:
        return split_names(name)


def split_names(text: str) -> list[str]:
    """The names of a name field, split at the word "and" outside braces, as BibTeX splits
    them. A backslash escapes the character after it (bibtexparser's own splitter then
    skipped the start of the next name: `A and \\"Uber, Ann` gave `Uber, Ann`)."""
    names, start, depth = [], 0, 0
    for match in _NAME_TOKENS.finditer(text):
        token = match.group()
        if token == "{":
            depth += 1
        elif token == "}":
            depth = max(depth - 1, 0)
        elif depth == 0 and not token.startswith("\\"):
            names.append(text[start : match.start()])
            start = match.end()
    names.append(text[start:])
    return [name.strip() for name in names if name.strip()]


def _is_others(parts: NameParts) -> bool:
    """Whether a name is BibTeX's "others", which ends a list of authors that goes on; a
    name braced {others} is an author called so."""
    return not (parts.first or parts.von or parts.jr) and len(parts.last) == 1 and parts.last[0].lower() == "others"


def resolve_crossrefs(records: list[BibRecord]) -> list[BibRecord]:
    """The records as a reference manager reads them: a record with `crossref` takes
    the fields it lacks from the record it names (BibTeX's rule, one level deep), the
    title of that record as its booktitle, but not its identifiers and links
    (NOT_INHERITED). A record that others cross-reference (a proceedings volume, a book)
    is their container, not a paper of its own, and is left out, unless it names a
    container itself: two records naming each other are two papers."""
    # each record as the file gives it, so that what a record inherits does not depend on
    # whether the record it names comes before or after it
    own = {
        record.key.lower(): BibRecord(
            record.key, record.type, record.line, dict(record.fields), list(record.people), record.more_authors
        )
        for record in records
    }
    containers = set()
    for record in records:
        parent = own.get(record.fields.get("crossref", "").lower())
        if parent is None or parent.key == record.key:
            continue
        if not parent.fields.get("crossref"):  # one that names a container itself is a paper (a cycle: two papers)
            containers.add(parent.key.lower())
        for key, value in parent.fields.items():
            if key not in NOT_INHERITED:
                record.fields.setdefault(key, value)
        if parent.fields.get("title"):
            record.fields.setdefault("booktitle", parent.fields["title"])
        if not record.people and not record.more_authors:
            record.people, record.more_authors = list(parent.people), parent.more_authors
    return [record for record in records if record.key.lower() not in containers]


def _name(parts: NameParts) -> str:
    """One author as 'von Last, Jr., First', the pool's form, whatever form the .bib used."""
    last = _decode(" ".join(parts.von + parts.last))
    rest = [_decode(" ".join(part)) for part in (parts.jr, parts.first) if part]
    return ", ".join([last, *rest]) if last else ", ".join(rest)


def person(name: str) -> str:
    """A name as a web service writes it, "First von Last" (arXiv, OpenReview, OpenAlex),
    in the pool's form, 'von Last, First', split by BibTeX's rules as a .bib name would be.
    The text is plain, not LaTeX: it is not decoded."""
    name = " ".join(name.split())
    try:
        parts = parse_single_name_into_parts(name.replace("{", "").replace("}", ""))
    except InvalidNameError:
        return name
    last = " ".join(parts.von + parts.last)
    rest = [" ".join(part) for part in (parts.jr, parts.first) if part]
    return ", ".join([last, *rest]) if last else ", ".join(rest) or name


class _UnreadableLatex(ValueError):
    pass


def _decode(text: str) -> str:
    try:
        return " ".join(_LATEX.latex_to_text(bounded_brackets(text)).split())
    except Exception as error:  # pylatexenc fails in many ways on LaTeX it cannot read (a macro without its arguments)
        raise _UnreadableLatex from error
