"""CSL-JSON, the Citation Style Language's data format, which Zotero, Mendeley, pandoc
and every citeproc read and write: the entries as CSL items (`paperpool export --format
csljson`, the site's Cite blocks and downloads), and Zotero's CSL-JSON export read back
as the BibTeX records import-bib reads (`paperpool import-csljson`).

An item is made from the same Citation the BibTeX and RIS are (bibtex.writing.citation): the
registry's `bibtex_export` says what a citation holds, and this module only says how
each BibTeX field is written in CSL. Values are plain text, as the records hold them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from pathlib import Path

from paperpool.files.inputs import read_input
from paperpool.files.problems import PaperpoolError, lone_surrogate, plural, printable
from paperpool.pool.adding import suggested_key
from paperpool.pool.reading import Pool
from paperpool.registry import Registry
from paperpool.rendering.tex import readable

from .bibtex.importing import BibImport, import_records
from .bibtex.reading import ARXIV_IN_TEXT, BibRecord
from .bibtex.writing import Citation, citation

# BibTeX's standard entry types -> CSL types (CSL 1.0.1, which every citeproc knows). A
# misc is a preprint (CSL's `article`) when it has an eprint, a web page when it has a
# link, else a manuscript.
TYPES = {
    "article": "article-journal",
    "inproceedings": "paper-conference",
    "conference": "paper-conference",
    "incollection": "chapter",
    "inbook": "chapter",
    "book": "book",
    "phdthesis": "thesis",
    "mastersthesis": "thesis",
    "techreport": "report",
    "unpublished": "manuscript",
}
# BibTeX field -> CSL variable; names, the year, pages and eprint are written below
VARIABLES = {
    "title": "title",
    "journal": "container-title",
    "booktitle": "container-title",
    "publisher": "publisher",
    "address": "publisher-place",
    "series": "collection-title",
    "edition": "edition",
    "volume": "volume",
    "number": "issue",
    "doi": "DOI",
    "url": "URL",
    "isbn": "ISBN",
    "issn": "ISSN",
    "abstract": "abstract",
    "note": "note",
    "howpublished": "note",
}
NAMES = {"author": "author", "editor": "editor"}


# ---------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------


_YEAR = re.compile(r"[0-9]{1,6}")


def entry_item(registry: Registry, data: dict) -> dict:
    """One entry as a CSL item: its id is the entry's citation key."""
    cited = citation(registry, data)
    item: dict = {"id": cited.key, "type": _type(cited)}
    links = {link for name, value in cited.fields if name == "url" for link in (value if isinstance(value, list) else [value])}
    notes = []
    for name, value in cited.fields:
        if name in NAMES:
            item.setdefault(NAMES[name], [_name(one) for one in (value if isinstance(value, list) else [value])])
        elif name == "year":
            # ASCII digits only: str.isdigit() is true of "²", which int() refuses
            year = str(value)
            item.setdefault("issued", {"date-parts": [[int(year)]]} if _YEAR.fullmatch(year) else {"literal": value})
        elif name == "pages":
            item.setdefault("page", value.replace("--", "-"))
        elif name == "eprint":
            notes.append(f"arXiv:{value}" if any(field == "archiveprefix" for field, _ in cited.fields) else value)
        elif VARIABLES.get(name) == "note":
            notes += [] if _only_links(value, links) else [value]
        elif name == "title":  # TeX math as text: a CSL item is read by people, not by TeX
            item.setdefault("title", readable(value))
        elif name in VARIABLES:
            item.setdefault(VARIABLES[name], value[0] if isinstance(value, list) else value)
    if notes:
        item["note"] = "; ".join(notes)
    return item


def entry_csljson(registry: Registry, data: dict) -> str:
    """One entry as a CSL-JSON file: a list of one item, as reference managers import it."""
    return dumps([entry_item(registry, data)])


def pool_csljson(registry: Registry, entries: list[dict]) -> str:
    """Every entry as CSL-JSON, in key order."""
    return dumps([entry_item(registry, data) for data in sorted(entries, key=lambda d: str(d.get("key")))])


def dumps(items: list[dict]) -> str:
    """Items as a CSL-JSON file."""
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


def _only_links(text: str, links: set[str]) -> bool:
    """Whether a note only repeats the item's links (a howpublished holding its URL)."""
    return all(part in links for part in re.split(r"[;,\s]+", text) if part)


def _type(cited: Citation) -> str:
    kind = cited.type.lower()
    if kind in TYPES:
        return TYPES[kind]
    names = {name for name, _ in cited.fields}
    return "article" if "eprint" in names else "webpage" if "url" in names else "manuscript"


def _name(name: str) -> dict:
    """A name as the pool holds it, "Last, First" (or "von Last, Jr, First"), as CSL's
    parts; a name without a comma (a company, "Kimi Team") is one literal name."""
    parts = [part.strip() for part in name.split(",")]
    if len(parts) == 2 and parts[0]:
        return {"family": parts[0], "given": parts[1]} if parts[1] else {"family": parts[0]}
    if len(parts) == 3 and parts[0]:
        return {"family": parts[0], "given": parts[2], "suffix": parts[1]}
    return {"literal": name}


# ---------------------------------------------------------------------------------
# Reading (import-csljson): each item as the BibTeX record import-bib would read
# ---------------------------------------------------------------------------------

# Zotero exports a library of 10,000 items with their abstracts in about 20 MB.
MAX_CSLJSON_BYTES = 20_000_000
# CSL types -> the BibTeX type import-bib keeps (anything else is a misc)
BIBTEX_TYPES = {
    "article-journal": "article",
    "article-magazine": "article",
    "article-newspaper": "article",
    "paper-conference": "inproceedings",
    "chapter": "incollection",
    "book": "book",
    "thesis": "phdthesis",
    "report": "techreport",
    "manuscript": "unpublished",
}
# CSL variable -> BibTeX field, for the text variables import-bib reads
FIELDS = {
    "publisher": "publisher",
    "publisher-place": "address",
    "collection-title": "series",
    "edition": "edition",
    "volume": "volume",
    "issue": "number",
    "page": "pages",
    "DOI": "doi",
    "URL": "url",
    "ISBN": "isbn",
    "ISSN": "issn",
    "note": "note",
    "genre": "howpublished",
}
# a container is a book's (booktitle) for these types, a journal's for the others
IN_A_BOOK = {"paper-conference", "chapter", "entry", "entry-dictionary", "entry-encyclopedia"}
# The rich text CSL allows in a value (citeproc's markup): dropped, the words kept.
_MARKUP = re.compile(r'</?(?:i|b|sub|sup|span(?: class="nocase"| style="[^"<>]*")?)>')
_YEAR = re.compile(r"\b(\d{4})\b")
_KEY_LIKE = re.compile(r"^[A-Za-z0-9_:.+-]{1,70}\Z")
_STRING = (str,)
_NUMBER = (str, int, float)  # CSL's number variables (volume, issue, page) may be numbers
SHOWN_PROBLEMS = 50
MAX_DIGITS = 20  # a year, a volume or a page is a few digits long


def import_csljson(pool: Pool, path: Path, kind: str, added: dt.date, all_or_nothing: bool = False) -> BibImport:
    """What import-bib does, for the items of a CSL-JSON file: each read as the BibTeX
    record it would be, then stubs planned and duplicates skipped by the same code."""
    records, unreadable, counted = read_items(path)  # read once, whatever is done with its problems
    if all_or_nothing or not records:  # nothing to import: the file's problems as one error
        _refuse_items(path.name, unreadable, counted)
    refused = len({number for number, _ in unreadable})
    return import_records(
        pool,
        records,
        path.name,
        kind,
        added,
        lambda record: f"{path.name}: item {record.line}",
        unreadable,
        all_or_nothing,
        refused,
    )


def read_records(path: Path) -> list[BibRecord]:
    """The items of a CSL-JSON file as BibTeX records, `line` being the item's number
    (from 1). Raises a PaperpoolError listing every item that cannot be read."""
    records, problems, counted = read_items(path)
    _refuse_items(path.name, problems, counted)
    return records


def _refuse_items(name: str, problems: list[tuple[int, str]], counted: int) -> None:
    """The items that cannot be read as one PaperpoolError (with none, nothing is raised)."""
    if counted == 1:
        raise PaperpoolError(problems[0][1])
    if counted:
        more = [f"... and {counted - len(problems):,} more"] if counted > len(problems) else []
        raise PaperpoolError(f"{name}: nothing imported, {plural(counted, 'problem')}:", [line for _, line in problems] + more)


def read_items(path: Path) -> tuple[list[BibRecord], list[tuple[int, str]], int]:
    """(the items that can be read, as BibTeX records; (item number, problem) for the
    first SHOWN_PROBLEMS problems of the others; how many problems in all)."""
    name = path.name
    items = _load(read_input(path, MAX_CSLJSON_BYTES), name)
    if not isinstance(items, list):
        raise PaperpoolError(
            f"{name}: is a JSON {_kind(items)}, not a list of CSL items; export the items from Zotero with the format CSL JSON"
        )
    if not items:
        raise PaperpoolError(f"{name}: holds no items; export the items from Zotero with the format CSL JSON")
    # the first problems are worded, the rest counted: 20 MB of items took 4 GB as strings
    problems, counted, records = [], 0, []
    for number, item in enumerate(items, 1):
        found, many = item_problems(item, SHOWN_PROBLEMS - len(problems))
        problems += [(number, f"{name}: item {number}: {problem}") for problem in found]
        counted += many
        if not many:
            records.append(item_record(item, number))
    return records, problems, counted


def _load(text: str, name: str):
    def refuse_constant(constant: str):
        raise ValueError(f"{constant} is not a JSON number")

    def short_int(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_DIGITS:
            raise ValueError(f"holds a number of {len(digits.lstrip('-')):,} digits, longer than any CSL value")
        return int(digits)

    def refuse_twice(pairs: list[tuple[str, object]]) -> dict:
        found = {}
        for key, value in pairs:
            if key in found:
                raise ValueError(f"the key {json.dumps(key, ensure_ascii=False)} is given twice in one object")
            found[key] = value
        return found

    try:
        return json.loads(text, parse_constant=refuse_constant, parse_int=short_int, object_pairs_hook=refuse_twice)
    except json.JSONDecodeError as error:
        raise PaperpoolError(
            f"{name}:{error.lineno}: is not JSON ({error.msg}, column {error.colno}); export the items "
            "from Zotero with the format CSL JSON"
        ) from None
    except RecursionError:
        raise PaperpoolError(
            f"{name}: is nested too deep to be CSL-JSON; export the items from Zotero with the format CSL JSON"
        ) from None
    except ValueError as error:  # a constant, a key given twice, a number of thousands of digits
        raise PaperpoolError(f"{name}: {printable(str(error))}; export the items from Zotero with the format CSL JSON") from None


def _kind(value) -> str:
    kinds = {dict: "object", list: "list", str: "string", bool: "true or false", type(None): "null"}
    return kinds.get(type(value), "number")


def item_problems(item, most: int | None = None) -> tuple[list[str], int]:
    """What makes an item unreadable, `field: what; how to fix` each: the first `most` of
    them worded (all when None), and how many there are."""
    worded, counted = [], 0
    for problem in _item_problems(item):
        counted += 1
        if most is None or len(worded) < most:
            worded.append(problem)
    return worded, counted


def _item_problems(item) -> Iterator[str]:
    if not isinstance(item, dict):
        yield f'is a JSON {_kind(item)}, not an object; each item is an object such as {{"type": ..., "title": ...}}'
        return
    if lone_surrogate(item):
        yield "a text holds half of a character (an unpaired \\ud800 to \\udfff), which no record can hold; export the item again"
    for variable, kinds in [
        ("id", _NUMBER),
        ("citation-key", _STRING),
        ("type", _STRING),
        ("title", _STRING),
        ("container-title", _STRING),
        ("event-title", _STRING),
    ] + [(variable, _NUMBER) for variable in FIELDS]:
        value = item.get(variable)
        if value is not None and (not isinstance(value, kinds) or isinstance(value, bool)):
            wanted = "text" if kinds is _STRING else "text or a number"
            yield f"{variable}: is a JSON {_kind(value)}, not {wanted}; give it as text"
    title = item.get("title")
    if isinstance(title, str) and not title.strip() or title is None:
        yield 'title: missing; every item needs a title, such as "title": "..."'
    authors = item.get("author")
    if authors is not None:
        if not isinstance(authors, list):
            yield (
                f"author: is a JSON {_kind(authors)}, not a list; give the names as a list of objects "
                'such as {"family": "Doe", "given": "Jane"}'
            )
        else:
            yield from (
                f"author: name {index}: {problem}" for index, name in enumerate(authors, 1) if (problem := _name_problem(name))
            )
    issued = item.get("issued")
    if issued is not None and not _is_date(issued):
        yield 'issued: is not a CSL date; give it as {"date-parts": [[2026]]} or {"literal": "2026"}'


def _name_problem(name) -> str | None:
    if not isinstance(name, dict):
        return f'is a JSON {_kind(name)}, not an object; give it as {{"family": "Doe", "given": "Jane"}} or {{"literal": "..."}}'
    for part, value in name.items():
        if part in ("family", "given", "literal", "suffix", "non-dropping-particle", "dropping-particle") and not isinstance(
            value, str
        ):
            return f"{part}: is a JSON {_kind(value)}, not text; give it as text"
    if not any(str(name.get(part) or "").strip() for part in ("family", "given", "literal")):
        return 'has no family, given or literal name; give it as {"family": "Doe", "given": "Jane"}'
    return None


def _is_date(issued) -> bool:
    if not isinstance(issued, dict):
        return False
    parts = issued.get("date-parts")
    if parts is not None:
        return (
            isinstance(parts, list)
            and all(isinstance(part, list) for part in parts)
            and all(isinstance(value, (int, str)) and not isinstance(value, bool) for part in parts for value in part)
        )
    return all(isinstance(issued.get(key), (str, int, type(None))) for key in ("literal", "raw", "season"))


def item_record(item: dict, number: int) -> BibRecord:
    """One CSL item (checked by item_problems) as a BibTeX record; `number` is its place."""
    kind = item.get("type") or ""
    fields = {"title": _text(item["title"])}
    container = item.get("container-title") or (item.get("event-title") if kind == "paper-conference" else None)
    if container:
        fields["booktitle" if kind in IN_A_BOOK else "journal"] = _text(container)
    for variable, field in FIELDS.items():
        if item.get(variable) not in (None, ""):
            fields.setdefault(field, _text(str(item[variable])))
    if year := _year(item.get("issued")):
        fields["year"] = year
    # Zotero writes a preprint's arXiv id as its number ("arXiv:2412.01928")
    number_found = ARXIV_IN_TEXT.search(str(item.get("number") or ""))
    if number_found:
        fields["eprint"], fields["archiveprefix"] = number_found.group(1), "arXiv"
    people = [_person(name) for name in item.get("author") or []]
    return BibRecord(_citation_key(item, people, fields), BIBTEX_TYPES.get(kind, "misc"), number, fields, people)


def _text(value: str) -> str:
    return " ".join(_MARKUP.sub("", value).split())


def _person(name: dict) -> str:
    """A CSL name as the pool writes one: "von Last, Jr, First", or the literal name."""
    if str(name.get("literal") or "").strip():
        return _text(name["literal"])
    family = _text(" ".join(str(name.get(part) or "") for part in ("dropping-particle", "non-dropping-particle", "family")))
    given, suffix = _text(str(name.get("given") or "")), _text(str(name.get("suffix") or ""))
    return ", ".join(part for part in (family, suffix, given) if part)


def _year(issued) -> str | None:
    if not isinstance(issued, dict):
        return None
    parts = issued.get("date-parts") or []
    first = str(parts[0][0]) if parts and parts[0] else str(issued.get("literal") or issued.get("raw") or "")
    found = _YEAR.search(first)
    return found.group(1) if found else None


def _citation_key(item: dict, people: list[str], fields: dict) -> str:
    """The item's citation key (Better BibTeX's, or an id that is one); Zotero's own
    ids are links, so otherwise surname, year and a title word, as `add` suggests."""
    for given in (item.get("citation-key"), item.get("id")):
        if given is not None and _KEY_LIKE.match(str(given)) and not str(given).isdigit():
            return str(given)
    return suggested_key({"authors": people, "year": fields.get("year"), "title": fields["title"]})
