"""The source's CSV format, both ways: import a CSV pool into YAML records, and export
records as CSV (the source's columns first, in its vocabulary, then paperpool's)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from paperpool.files import csvcells
from paperpool.files.inputs import read_input, read_table
from paperpool.files.problems import PaperpoolError, Problem, plural
from paperpool.pool import identity
from paperpool.pool.fileschemas import header
from paperpool.pool.reading import Pool
from paperpool.pool.stubs import (
    Planned,
    PoolIndex,
    check_planned,
    complete,
    identifiers_from_links,
    planned_record,
)
from paperpool.registry import KEY_RE, CsvColumn, Registry
from paperpool.registry.convert import ConvertError, converter

from .bibtex.reading import BibRecord, parse_bib

BIB_FIELDS = ("journal", "booktitle", "howpublished", "publisher", "volume", "number", "pages")


# ---------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------


def export_csv(pool: Pool, kind: str) -> str:
    """The records of `kind` as CSV, every cell formula-safe (csvcells; import-csv reads
    them back)."""
    columns = list({c.column: c for c in reversed(_columns(pool.registry, kind))}.values())[::-1]
    records = sorted(pool.records[kind], key=lambda r: r.key)
    return csvcells.table(
        ([converter(c.convert).write(record.data.get(c.field)) for c in columns] for record in records),
        [column.column for column in columns],
    )


def export_json(pool: Pool) -> str:
    document = {
        "survey": pool.registry.survey,
        **{kind: [record.data for record in sorted(pool.records[kind], key=lambda r: r.key)] for kind in pool.records},
    }
    return json.dumps(document, ensure_ascii=False, indent=2, default=_json_default) + "\n"


def _json_default(value):
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _columns(registry: Registry, kind: str) -> list[CsvColumn]:
    layout = registry.csv.get(kind)
    if not layout:
        raise PaperpoolError(f"registry.yaml has no csv layout for {kind}; add one under csv: {kind}:")
    return layout.get("source_columns", []) + layout.get("extra_columns", [])


# ---------------------------------------------------------------------------------
# Import
# ---------------------------------------------------------------------------------

SHOWN_PROBLEMS = 50


class _Problems:
    """The problems of rows read in order: those of the lines up to the one that brought
    the count to SHOWN_PROBLEMS are kept (the first shown, in order), the rest counted
    (3.4 million problems of a 50 MB CSV took 1.7 GB as objects)."""

    def __init__(self):
        self.kept: list[Problem] = []
        self.counted = 0
        self._last_line: int | None = None

    def __iadd__(self, found: list[Problem]):
        for problem in found:
            self.append(problem)
        return self

    def append(self, problem: Problem) -> None:
        self.counted += 1
        if self._last_line is None or problem.line <= self._last_line:
            self.kept.append(problem)
            if len(self.kept) >= SHOWN_PROBLEMS and self._last_line is None:
                self._last_line = problem.line


def import_csv(
    pool: Pool, csv_path: Path, kind: str, bib_path: Path | None = None, date_added: dt.date | None = None
) -> list[Planned]:
    """Read a CSV in the source's format and return the records to write. Raises
    PaperpoolError listing every problem; nothing is written here."""
    registry = pool.registry
    rows = _read_rows(csv_path, registry, kind)
    bib = _BibIndex(_read_bib(bib_path)) if bib_path else None
    specs = registry.fields[kind]
    existing = {record.key.casefold() for record in pool.all_records()}
    index = PoolIndex(pool)  # a paper the pool (or an earlier row) records, by id, link or title
    read = [(line, *_record_from_row(row, line, csv_path.name, registry, kind)) for line, row in rows]
    index.prepare([record.get("title") for _, record, _ in read if record])  # titles compared at once, not row by row
    planned, problems, seen = [], _Problems(), {}
    for line, record, row_problems in read:
        problems += row_problems
        if record is None:
            continue
        if bib is not None:
            _merge_bib(record, bib.match(record))
        identifiers_from_links(record, specs)
        record = complete(record, specs, registry, kind, date_added or dt.date.today())
        key = record.get("key")
        if not isinstance(key, str) or not KEY_RE.match(key):
            problems.append(
                Problem(csv_path.name, line, "key", f"'{key}' is not a safe key; use lower-case letters, digits and hyphens")
            )
            continue
        if key.casefold() in seen:
            problems.append(
                Problem(csv_path.name, line, "key", f"'{key}' is also on line {seen[key.casefold()]}; keys must be unique")
            )
            continue
        seen[key.casefold()] = line
        target = registry.record_path(kind, key)
        if key.casefold() in existing or target.exists():
            problems.append(
                Problem(
                    csv_path.name,
                    line,
                    "key",
                    f"'{key}' is already in the pool ({target.relative_to(registry.root)}); import never overwrites: remove the row or the file",
                )
            )
            continue
        candidate = planned_record(record, target, f"{csv_path.name}:{line}", kind)
        duplicate = index.same_paper(candidate)
        if duplicate:
            problems.append(
                Problem(csv_path.name, line, "key", f"'{key}' is a paper the pool already records: {duplicate}; remove the row")
            )
            continue
        index.add(candidate)
        problems += check_planned(record, target, line, csv_path.name, registry, kind)
        planned.append(Planned(target, record, header(registry, kind, target)))
    if problems.counted:
        shown = [str(p) for p in sorted(problems.kept)[:SHOWN_PROBLEMS]]
        raise PaperpoolError(f"{csv_path.name}: nothing imported, {plural(problems.counted, 'problem')}:", shown)
    return planned


def _read_rows(csv_path: Path, registry: Registry, kind: str) -> list[tuple[int, dict]]:
    layout = registry.csv.get(kind, {})
    required = [c.column for c in layout.get("source_columns", [])]
    known = {c.column for c in _columns(registry, kind)}

    def check_header(header: list[str]) -> None:
        missing = [name for name in required if name not in header]
        if missing:
            raise PaperpoolError(
                f"{csv_path.name}:1: header lacks column(s) {', '.join(missing)}; the {kind} CSV needs {', '.join(required)}"
            )
        unknown = [name for name in header if name not in known]
        if unknown:
            raise PaperpoolError(
                f"{csv_path.name}:1: unknown column(s) {', '.join(unknown)}; remove them or declare them under csv: {kind}: in registry.yaml"
            )

    return list(read_table(csv_path, check_header, ""))


def _record_from_row(row: dict, line: int, name: str, registry: Registry, kind: str):
    record, problems = {}, []
    layout = registry.csv[kind]
    # The extra columns come last so that a full `authors` column wins over `first_author`.
    for column in layout.get("source_columns", []) + layout.get("extra_columns", []):
        if column.column not in row:
            continue
        try:
            value = converter(column.convert).read(row[column.column])
        except ConvertError as exc:
            problems.append(Problem(name, line, column.column, f"{exc}; correct the cell"))
            continue
        if value in (None, [], {}) and record.get(column.field) not in (None, [], {}):
            continue
        record[column.field] = value
    return (None if problems else record), problems


def _read_bib(path: Path) -> list[BibRecord]:
    from .bibtex.importing import MAX_BIB_BYTES  # the .bib an import reads, by whichever command

    return parse_bib(read_input(path, MAX_BIB_BYTES), path.name)


class _BibIndex:
    """A .bib's records by arXiv id, link and title, found once: matched row by row, each
    row read every record three times (8,000 rows against 8,000 records: five minutes)."""

    def __init__(self, records: list[BibRecord]):
        self.by_arxiv: dict[str, list[BibRecord]] = {}
        self.by_token: dict[object, list[BibRecord]] = {}
        self.by_title: dict[str, list[BibRecord]] = {}
        for record in records:
            if record.arxiv_id:
                self.by_arxiv.setdefault(record.arxiv_id, []).append(record)
            for token in {token for url in record.urls for token in identity.url_tokens(url)}:
                self.by_token.setdefault(token, []).append(record)
            self.by_title.setdefault(identity.title_key(record.title), []).append(record)

    def match(self, record: dict) -> BibRecord | None:
        """The .bib record of a CSV row: the one with its arXiv id, else the one sharing a
        link with it, else the one with its title; none where two or more would."""
        # a registry may type these fields otherwise (a number, a mapping): only text is matched
        arxiv, urls, title = record.get("arxiv_id"), record.get("urls"), record.get("title")
        links = [url for url in (urls if isinstance(urls, list) else []) if isinstance(url, str)]
        tokens = {token for url in links for token in identity.url_tokens(url)}
        found = [
            self.by_arxiv.get(identity.arxiv_id(arxiv), []) if isinstance(arxiv, str) and arxiv else [],
            list({id(b): b for token in tokens for b in self.by_token.get(token, [])}.values()),
            self.by_title.get(identity.title_key(title), []) if isinstance(title, str) else [],
        ]
        return next((matches[0] for matches in found if len(matches) == 1), None)


def _merge_bib(record: dict, bib: BibRecord | None) -> None:
    if bib is None:
        return
    authors = [a for a in bib.authors if a.lower() != "others"]
    if authors:
        record["authors"] = authors
        record["authors_complete"] = len(authors) == len(bib.authors)
    if bib.doi and not record.get("doi"):
        record["doi"] = bib.doi
    urls = record.get("urls")
    if urls is None or isinstance(urls, list):  # (a registry may type them otherwise: then they stay as the row gave them)
        urls = list(urls or [])
        record["urls"] = urls + [url for url in bib.urls if url not in urls]
    record["bibtex"] = {"type": bib.type, "key": bib.key, **{f: bib.fields[f] for f in BIB_FIELDS if bib.fields.get(f)}}
    if bib.fields.get("year") and bib.fields["year"] != str(record.get("year")):
        record["bibtex"]["year"] = bib.fields["year"]  # e.g. the venue's year where the entry gives the preprint's
