"""Writing entries as BibTeX, with bibtexparser, as the registry's `bibtex_export` says.

Text fields are LaTeX-encoded (so `{`, `%`, `&` or `$` in a title cannot break the
record or turn into markup when cited), and names so that BibTeX reads each back as the
one name it is. Identifiers and links are biblatex's verbatim fields, written as they
are (`&`, `%`, `#`, `~` and paired braces included), which import-bib and biblatex read
back as they were; see `_verbatim` for the few links that cannot be.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import quote

import bibtexparser
from bibtexparser import model
from pylatexenc.latexencode import UnicodeToLatexEncoder

from paperpool.registry import Registry, lookup, resolve_spec
from paperpool.rendering.markdown import visible
from paperpool.rendering.tex import braces_pair, pieces, safe_math

from . import sections
from .reading import VERBATIM_FIELDS
from .sections import BIBTEX_NAME

VERBATIM_TYPES = {"url", "url_list", "identifier"}
DEFAULT_TYPE = "misc"
# Without a bibtex_export section, the conventional field names are used where declared.
DEFAULT_FIELDS = {"title": ["title"], "author": ["authors"], "year": ["year"], "doi": ["doi"], "url": ["urls", "url"]}

# Characters with no LaTeX form (CJK, say) are kept as they are (pylatexenc's warning for
# each is silenced in rendering/tex.py, which this module imports).
_ENCODER = UnicodeToLatexEncoder(non_ascii_only=False, replacement_latex_protection="braces", unknown_char_policy="keep")
# In a name every LaTeX form is braced, {\~n} and {\"U}: BibTeX reads a brace group as one
# special character, where it would split Ma\~nana at the ~ and take \"U apart for initials.
_NAME_ENCODER = UnicodeToLatexEncoder(non_ascii_only=False, replacement_latex_protection="braces-all", unknown_char_policy="keep")
# Characters written as they are: a straight double quote is safe inside a braced value
# (pylatexenc would write ''), and a brace is escaped, never braced itself ({\{} would
# leave BibTeX, which counts every brace, one short). BibTeX counts an escaped brace as
# well, so braces that do not pair are written as LaTeX's commands for them, in braces
# of their own: a title `Alpha}, url = {javascript:...}` would otherwise end its field at
# the brace and give the record a field of its own making.
_KEPT = {'"': '"', "{": "\\{", "}": "\\}"}
_UNPAIRED = {'"': '"', "{": "{\\textbraceleft}", "}": "{\\textbraceright}"}
_KEPT_SPLIT = re.compile(r'(["{}])')
# pylatexenc adds each character's LaTeX to a string it keeps on an object, which CPython
# copies whole every time: a text of n characters takes time in n squared (400,000
# characters, 4 s). Longer text is encoded in pieces of about this many characters, each
# quick; see _unicode_to_latex for why the pieces' LaTeX, joined, is the whole text's.
_PIECE = 1_000
_FORMAT = bibtexparser.BibtexFormat()
_FORMAT.indent = "  "
_FORMAT.block_separator = "\n"
# BibTeX separates names by the word "and" in any case, between any whitespace.
_AND = re.compile(r"(?:^|\s)and(?:\s|$)", re.IGNORECASE)


def entry_bibtex(registry: Registry, data: dict) -> str:
    """One entry as a BibTeX record."""
    library = bibtexparser.Library()
    library.add(_entry(registry, data))
    return bibtexparser.write_string(library, bibtex_format=_FORMAT)


def export_settings(registry: Registry) -> dict:
    """The registry's bibtex_export, or the conventional fields where it has none."""
    if registry.section(sections.EXPORT):
        return registry.section(sections.EXPORT)
    specs = registry.fields["entries"]
    fields = {name: [s for s in sources if s in specs] for name, sources in DEFAULT_FIELDS.items()}
    return {
        "fields": {name: sources for name, sources in fields.items() if sources},
        "authors_complete": "authors_complete" if "authors_complete" in specs else None,
    }


@dataclass
class Citation:
    """An entry as the registry says it is cited, before any encoding: BibTeX's type,
    key, and (field, value) pairs; a value is a string, or a list of names."""

    type: str
    key: str
    fields: list[tuple[str, str | list[str]]]
    verbatim: set[str]  # fields written as they are (links, identifiers)
    others: bool  # the author list is incomplete


NAME_FIELDS = ("author", "editor")  # BibTeX's fields of names, each a list joined by `and`


def citation(registry: Registry, data: dict) -> Citation:
    settings = export_settings(registry)
    specs = registry.fields["entries"]
    key = _first(data, settings.get("key", ["key"])) or data.get("key")
    kind = _first(data, settings.get("type", [])) or DEFAULT_TYPE
    if not BIBTEX_NAME.fullmatch(str(kind)):  # a record's value, written after `@`: `misc{evil, ...}\n@misc` would be two
        kind = DEFAULT_TYPE
    fields, verbatim, made = [], set(), {}
    for name, given in (settings.get("fields") or {}).items():
        if not BIBTEX_NAME.fullmatch(str(name)):  # validate refuses it
            continue
        sources, types = field_sources(given)
        if types is not None and str(kind).lower() not in types:
            continue
        value, source = _first_with_source(data, sources)
        if value in (None, "", [], {}):
            continue
        spec = resolve_spec(specs, source)
        # a link or identifier is written as it is only where biblatex reads it so: in any
        # other field (a registry may put a DOI in `note`) TeX reads it, so it is encoded
        as_is = spec is not None and spec.type in VERBATIM_TYPES and name.lower() in VERBATIM_FIELDS
        if as_is:
            verbatim.add(name)
        # Fields that take the same entry field share its value, made once: the registry
        # may map many to one, which would otherwise hold as many copies of a long value.
        how = (source, as_is, name in NAME_FIELDS)
        if how not in made:
            made[how] = _cited_value(value, as_is, name in NAME_FIELDS)
        fields.append((name, made[how]))
        if spec is not None and spec.scheme == "arxiv" and name == "eprint":
            fields.append(("archiveprefix", "arXiv"))
    others = bool(settings.get("authors_complete")) and lookup(data, settings["authors_complete"]) is False
    return Citation(str(kind), str(key), fields, verbatim, others)


def _cited_value(value, as_is: bool, names: bool) -> str | list[str]:
    if as_is:  # links and identifiers
        return [str(item) for item in value] if isinstance(value, list) else str(value)
    if isinstance(value, list):
        # a list is names only for the fields of names; any other (pages from a list
        # field, say) is one text, as BibTeX, RIS and CSL-JSON each take it
        items = [visible(item) for item in value]
        return items if names else ", ".join(items)
    # bidirectional controls would reorder the citation on screen; they are dropped
    return " ".join(visible(value).split())


def field_sources(given) -> tuple[list[str], list[str] | None]:
    """A bibtex_export field's entry fields, and the BibTeX types it is written for (None:
    every type). A field is a list of entry fields, or `{from: [...], types: [...]}`, which
    lets one entry field (a venue) go where each type puts it: journal for an article,
    booktitle for a conference paper."""
    if isinstance(given, dict):
        types = given.get("types")
        return list(given.get("from") or []), None if types is None else [str(kind).lower() for kind in types]
    return list(given or []), None


def _entry(registry: Registry, data: dict) -> model.Entry:
    cited = citation(registry, data)
    written = {}  # fields sharing a value (see citation) share its encoding, made once
    fields = []
    for name, value in cited.fields:
        how = (id(value), name in cited.verbatim, name == "pages")
        if how not in written:
            written[how] = _field_text(name, value, cited)
        fields.append(model.Field(name, written[how]))
    return model.Entry(cited.type, _citation_key(cited.key), fields)


def _field_text(name: str, value, cited: Citation) -> str:
    if name in cited.verbatim:
        return _verbatim(value[0] if isinstance(value, list) else value)
    if isinstance(value, list):
        return " and ".join([_one_name(item) for item in value] + (["others"] if cited.others else []))
    if name == "pages":
        # import-bib reads BibTeX's range `7--9` as the en dash it typesets; written back
        # as {\textendash}, biblatex would no longer see a range
        return _latex(value.replace("\u2013", "--"))
    return _latex(value)


def pool_bibtex(registry: Registry, entries: list[dict]) -> str:
    """Every entry as BibTeX, in key order, each record written on its own (bibtexparser
    refuses a library in which two records share a citation key)."""
    return "\n".join(entry_bibtex(registry, data) for data in sorted(entries, key=lambda d: str(d.get("key"))))


def _latex(text: str, encoder: UnicodeToLatexEncoder = _ENCODER) -> str:
    if encoder is _ENCODER and "$" in text:  # TeX math as the record holds it (import-bib keeps it): written as it is
        return "".join(piece if math and safe_math(piece) else _encoded(piece, encoder) for math, piece in pieces(text))
    return _encoded(text, encoder)


def _encoded(text: str, encoder: UnicodeToLatexEncoder) -> str:
    kept = _KEPT if braces_pair(text) else _UNPAIRED
    # split's empty parts (between two kept characters) skipped: a call costs pylatexenc a class of its own
    return "".join(kept.get(part) or _unicode_to_latex(part, encoder) for part in _KEPT_SPLIT.split(text) if part)


def _unicode_to_latex(text: str, encoder: UnicodeToLatexEncoder) -> str:
    """`encoder.unicode_to_latex(text)`, in time linear in the text's length. pylatexenc
    puts the text in NFC and writes each character's LaTeX in turn (the rules paperpool
    gives it are one character's each), so a text in NFC cut into pieces that NFC leaves
    as they are has, joined, the pieces' LaTeX for its own: the cuts are made where no
    character composes or reorders with the one before it (_cut)."""
    if len(text) <= _PIECE:
        return encoder.unicode_to_latex(text)
    return "".join(encoder.unicode_to_latex(piece) for piece in _pieces(unicodedata.normalize("NFC", text)))


def _pieces(text: str):
    start = 0
    while len(text) - start > _PIECE:
        end = _cut(text, start + _PIECE)
        yield text[start:end]
        start = end
    yield text[start:]


def _cut(text: str, at: int) -> int:
    """The first place from `at` before a character that starts a combining sequence
    and does not compose with the one before it (in NFC text such a place is reached by
    neither composition nor reordering). A base followed by more than _PIECE combining
    marks (no text has that many; a hostile record can) is cut between two of its marks:
    marks that start a piece have no base to compose with and are already in order."""
    end = min(len(text), at + _PIECE)
    for place in range(at, end):
        if _starts_sequence(text[place - 1], text[place]):
            return place
    for place in range(at, end):
        if unicodedata.combining(text[place - 1]) and unicodedata.combining(text[place]):
            return place
    return end


def _starts_sequence(before: str, char: str) -> bool:
    return (
        unicodedata.combining(char) == 0
        and not ("\ud800" <= before <= "\udbff" and "\udc00" <= char <= "\udfff")  # a surrogate pair, as some decoders leave one
        and unicodedata.normalize("NFC", before + char) == before + char
    )


def _one_name(name: str) -> str:
    """A name, LaTeX-encoded. One that BibTeX would not read back as this one name is
    braced whole, which makes it one name with one part: a company ("Procter and Gamble
    Research", which the word "and" would split in two; "Kimi Team", which would become
    "Team, Kimi": a name of the pool without a comma is one whole name), an author called
    "others" (BibTeX's "et al."), or a name with more commas than "von Last, Jr, First"."""
    text = _latex(name, _NAME_ENCODER)
    if (
        _AND.search(text)
        or name.strip().lower() == "others"
        or name.count(",") > 2
        or ("," not in name and len(name.split()) > 1)
    ):
        return f"{{{text}}}"
    return text


def _first(data: dict, sources: list[str]):
    return _first_with_source(data, sources)[0]


def _first_with_source(data: dict, sources: list[str]):
    for source in sources:
        value = lookup(data, source)
        if value not in (None, "", [], {}):
            return value, source
    return None, sources[0] if sources else ""


def _verbatim(value) -> str:
    """A link or identifier as it is, which biblatex and import-bib read back as it was.
    A link that no BibTeX reader could read back, or that TeX could run, has the
    characters at fault percent-encoded: braces that do not pair (BibTeX counts every
    brace, escaped or not), every backslash and ^ (a style may hand the link to a macro,
    which reads \\input, or ^^5cinput, as TeX), and spaces, which end a link. None of these belongs in a link
    (RFC 3986), and validate refuses them in links and DOIs."""
    text = re.sub(r"\s", lambda match: quote(match.group()), str(value))
    # a style may pass the link to a macro, where TeX would run \input, or ^^5cinput (^^5c is \)
    text = text.replace("\\", "%5C").replace("^", "%5E")
    if not braces_pair(text):
        text = text.replace("{", "%7B").replace("}", "%7D")
    return text


def _citation_key(key: str) -> str:
    # a key holding a comma, brace or space would end the record's header early
    return "".join(char for char in key if char not in ',{}()"#%~\\^ \t\n') or "entry"
