"""The second reader's agreement: per field, how often two readers tagged a paper the
same way, and Cohen's kappa, which discounts the agreement two readers with the same
habits would reach by chance.

The readings come from the entries (each entry's own values against its second
reading, the mapping field whose fields re-tag the entry's) or from a CSV with a `key` column and, per field, `orig_FIELD` (the
first reader) and `ann_FIELD` (the second reader). Which fields the entries' second
readings re-tag is read from the registry, never listed here.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from paperpool.files.inputs import read_table
from paperpool.files.problems import PaperpoolError, plural, printable
from paperpool.pool.history import as_date, as_of, history_field
from paperpool.pool.reading import Pool
from paperpool.registry import Registry
from paperpool.rendering import markdown

from . import auditsection

FIRST, SECOND = "orig_", "ann_"  # column prefixes of the two readers in a CSV


@dataclass
class FieldAgreement:
    rows: int  # rows where both readers gave a value
    agree: int
    kappa: float | None  # None when chance agreement is 1 (or there are no rows)

    @property
    def share(self) -> float | None:
        return self.agree / self.rows if self.rows else None

    def as_json(self) -> dict:
        return {"rows": self.rows, "agree": self.agree, "share": self.share, "kappa": self.kappa}


@dataclass
class Disagreement:
    key: str
    field: str
    first: str
    second: str


@dataclass
class Audit:
    source: str  # what was read and which side is which, for the heading
    first_reader: str  # what the first reader's values are called in the disagreements
    rows: int
    fields: dict[str, FieldAgreement] = field(default_factory=dict)
    disagreements: list[Disagreement] = field(default_factory=list)  # the first MAX_LISTED
    not_listed: int = 0  # disagreements past those
    scope: str = ""  # what the figures cover and what they do not, computed
    about: str = ""  # what the second reading is, in the survey's words (registry audit.about)

    def as_json(self) -> dict:
        return {
            "rows": self.rows,
            "scope": self.scope,
            "about": self.about,
            "fields": {name: f.as_json() for name, f in self.fields.items()},
            "disagreements": [vars(d) for d in self.disagreements],
            "disagreements_not_listed": self.not_listed,
        }


def second_reading(registry: Registry) -> str:
    """The entries' field holding a second reader's tags: the mapping field whose fields
    re-tag entry fields (a choice field of the same name as one of the entry's)."""
    entry = registry.fields["entries"]
    found = [name for name, spec in entry.items() if spec.type == "mapping" and _retagged(entry, spec)]
    if len(found) != 1:
        named = f"declares {', '.join(found)}" if found else "declares none"
        raise PaperpoolError(
            f"registry.yaml {named} under entry_fields as a second reading; audit needs one mapping field "
            "whose choice fields re-tag entry fields of the same names"
        )
    return found[0]


def _retagged(entry: dict, spec) -> list[str]:
    return [
        name for name, inner in spec.fields.items() if inner.type == "choice" and name in entry and entry[name].type == "choice"
    ]


def compared_fields(registry: Registry) -> list[str]:
    """The second reading's single-choice fields that re-tag an entry field of the same
    name, also a single choice: there both readers picked one value from a vocabulary,
    so agreement and kappa mean something. (Dates, notes and fields the entry lacks
    are not comparisons.)"""
    entry = registry.fields["entries"]
    return _retagged(entry, entry[second_reading(registry)])


def _example_field(registry: Registry) -> str:
    """A field to name in a message about a CSV's columns, whatever the registry declares."""
    try:
        return next(iter(compared_fields(registry)), "FIELD")
    except PaperpoolError:
        return "FIELD"


def audit_pool(pool: Pool) -> Audit:
    """Each entry that has a second reading: its values on the reading's date (its later
    changes undone) against the reading's."""
    fields, reading = compared_fields(pool.registry), second_reading(pool.registry)
    read = sorted((r for r in pool.entries if isinstance(r.data.get(reading), dict)), key=lambda r: r.key)
    # each entry as it stood when the second reader read it: a retag since (kept in its
    # changes) is no disagreement of the spot-check's
    history = history_field(pool.registry, "entries")
    then = {r.key: as_of(r.data, history, as_date(r.data[reading].get("date")) or dt.date.max) for r in read}
    pairs = ((r.key, name, then[r.key].get(name), r.data[reading].get(name)) for r in read for name in fields)
    source = (
        f"{plural(len(read), 'entry', 'entries')} with a {reading}: each entry's values (first reader) against its second reading"
    )
    audit = _compare(Audit(source, "entry", len(read)), fields, pairs)
    total = len(pool.entries)
    audit.scope = (
        f"These figures cover the {plural(len(read), 'entry', 'entries')} the second reading re-tagged, of the "
        f"pool's {total:,}; they say nothing of the other {total - len(read):,}."
    )
    audit.about = auditsection.about(pool.registry)
    return audit


def audit_file(pool: Pool, path: Path) -> Audit:
    """A second reader's CSV: each row's orig_FIELD against its ann_FIELD, for every
    field that has both columns. Other columns (notes, say) are not read. Counted as the
    rows are read: a row is not kept."""
    readings = _Readings(pool, path)
    rows = iter(readings)
    first_row = next(rows)  # the header is read and checked, and the file has a row
    fields = _paired(readings.header)
    # An empty cell is a field that reader did not tag: left out of that field's rows; a
    # pair is made only where both readers gave a value.
    pairs = (
        (row["key"], name, row.get(FIRST + name), row.get(SECOND + name))
        for row in itertools.chain([first_row], rows)
        for name in fields
    )
    audit = _compare(Audit("", "first reader", 0), fields, pairs)
    audit.rows = rows_read = len(readings.keys)
    audit.source = f"{plural(rows_read, 'row')} of {path.name}: {FIRST}FIELD (first reader) against {SECOND}FIELD (second reader)"
    audit.scope = (
        f"These figures cover the {plural(rows_read, 'row')} of {path.name}; they say nothing of records it does not hold."
    )
    return audit


def _paired(header: list[str]) -> list[str]:
    """The fields with both readers' columns, in the header's order (the header as a set:
    30,000 columns were 30,000 scans of it)."""
    columns = set(header)
    return [column[len(FIRST) :] for column in header if column.startswith(FIRST) and SECOND + column[len(FIRST) :] in columns]


MAX_LISTED = 10_000  # disagreements listed; the rest are counted (a CSV of 50 MB can hold millions)


def _compare(audit: Audit, fields: list[str], pairs) -> Audit:
    """pairs: (key, field, first reader's value, second reader's value), in output order.
    A pair counts where both readers gave a value. Counted in one pass, each field's
    values as counts (which is all Cohen's kappa needs), not kept."""
    tallies = {name: _Tally() for name in fields}
    for key, name, first, second in pairs:
        if first is None or second is None:
            continue
        tally = tallies[name]
        tally.first[first] += 1
        tally.second[second] += 1
        if first == second:
            tally.agree += 1
        elif len(audit.disagreements) < MAX_LISTED:
            audit.disagreements.append(Disagreement(key, name, first, second))
        else:
            audit.not_listed += 1
    for name, tally in tallies.items():
        rows = tally.first.total()
        audit.fields[name] = FieldAgreement(rows, tally.agree, kappa(rows, tally.agree, tally.first, tally.second))
    return audit


@dataclass
class _Tally:
    agree: int = 0
    first: Counter = field(default_factory=Counter)
    second: Counter = field(default_factory=Counter)


def kappa(n: int, agree: int, first: Counter, second: Counter) -> float | None:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e), over n rows: p_o the share of rows where the readers agree,
    p_e the chance that two readers tagging independently, each with their own value
    frequencies (`first`, `second`: each value's count), would agree. None when p_e is 1
    (both gave every row one same value) or there are no rows: then there is no agreement
    beyond chance to measure."""
    # p_e = sum over values of (first's count / n) * (second's count / n). Kept in whole
    # counts (p_o = agree / n, p_e = chance / n**2) so that p_e == 1 is an exact test.
    chance = sum(count * second[value] for value, count in first.items())
    if chance == n * n:
        return None
    return (n * agree - chance) / (n * n - chance)


class _Readings:
    """The rows of a second-reader CSV, one at a time, each with the readers' values it
    gives and its key; a PaperpoolError saying what to fix (before the first row, for a
    file without any)."""

    def __init__(self, pool: Pool, path: Path):
        self.pool, self.path = pool, path
        self.header: list[str] = []
        self.keys: dict[str, int] = {}  # each row's key: its line

    def check_header(self, header: list[str]) -> None:
        name = self.path.name
        if "key" not in header:
            raise PaperpoolError(f"{name}:1: no key column; name the column of entry keys `key`")
        if not _paired(header):
            example = _example_field(self.pool.registry)
            raise PaperpoolError(
                f"{name}:1: no pair of {FIRST}FIELD and {SECOND}FIELD columns; give both readers' "
                f"values of a field, e.g. {FIRST}{example} and {SECOND}{example}"
            )
        self.header.extend(header)

    def __iter__(self) -> Iterator[dict]:
        path, name = self.path, self.path.name
        if not path.is_file():
            what = "is a folder" if path.is_dir() else "is a device, pipe or socket" if path.exists() else "no such file"
            raise PaperpoolError(f"{path}: {what}; give the path of a CSV with a key column and orig_FIELD, ann_FIELD columns")
        wanted = None
        for line, row in read_table(path, self.check_header, ": key, then orig_FIELD and ann_FIELD per field"):
            wanted = wanted or {FIRST + field for field in _paired(self.header)} | {
                SECOND + field for field in _paired(self.header)
            }
            key = row["key"].strip()
            if not key:
                raise PaperpoolError(f"{name}:{line}: the key is empty; give the entry's key")
            if key in self.keys:
                raise PaperpoolError(f"{name}:{line}: key '{key}' is also on line {self.keys[key]}; give one row per entry")
            self.keys[key] = line
            # the readers' values the row gives: a row of 1,000 empty cells is an empty row
            yield {column: value.strip() for column, value in row.items() if column in wanted and value.strip()} | {"key": key}
        if not self.keys:
            raise PaperpoolError(f"{name}:2: no rows after the header; add one row per entry read twice")


# ---------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------


def to_text(audit: Audit) -> str:
    lines = [f"Agreement of two readers over {audit.source}.", "", _one_line(audit.scope)]
    lines += [_one_line(audit.about)] if audit.about else []
    lines += [
        "",
        markdown.table(
            ["field", "rows", "agree", "share", "kappa"],
            [[_one_line(name), f.rows, f.agree, _percent(f.share), _decimal(f.kappa)] for name, f in audit.fields.items()],
            ["l", "r", "r", "r", "r"],
        ),
        "",
        "kappa: Cohen's, the agreement beyond what chance would give two readers with these value frequencies.",
    ]
    for name, f in audit.fields.items():
        if f.kappa is None:
            why = (
                "no row has both readers' values"
                if not f.rows
                else "both readers gave every row the same one value, so chance agreement is 1 and kappa is undefined"
            )
            lines.append(f"kappa n/a for {_one_line(name)}: {why}.")
    total = len(audit.disagreements) + audit.not_listed
    lines += ["", f"{plural(total, 'disagreement')}{':' if total else '.'}"]
    lines += [
        f"{_one_line(d.key)}: {_one_line(d.field)}: {_one_line(d.first)} ({audit.first_reader}) "
        f"vs {_one_line(d.second)} (second reader)"
        for d in audit.disagreements
    ]
    if audit.not_listed:
        lines.append(
            f"... and {audit.not_listed:,} more, not listed (the first {MAX_LISTED:,} are); audit fewer rows to see them"
        )
    return "\n".join(lines) + "\n"


def _one_line(value) -> str:
    """A value from a file on one line, with `|` escaped so it cannot split a table cell,
    and its controls escaped (a right-to-left override would reorder the terminal's line)."""
    return printable(" ".join(str(value).split())).replace("|", "\\|")


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.1%}"


def _decimal(kappa: float | None) -> str:
    return "n/a" if kappa is None else f"{kappa:.3f}"


def to_json(audit: Audit) -> str:
    return json.dumps(audit.as_json(), ensure_ascii=False, indent=2) + "\n"


FORMATS = {"text": to_text, "json": to_json}
