"""Reading a pool: the registry plus one YAML file per entry and per exclusion."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from paperpool.files import processes
from paperpool.files.problems import NOT_UTF8_NAME, PaperpoolError, Problem, utf8_name
from paperpool.files.yamlio import Document, YamlProblem, load_yaml
from paperpool.registry import (
    RECORD_KINDS,
    RECORD_SUFFIX,
    Registry,
    linked_step,
    load_registry,
)

from .history import as_of as history_as_of
from .history import history_field

TEXT_TYPES = ("text", "text_list")  # the field types whose values the unknown marker is one of


@dataclass
class Record:
    kind: str  # "entries" or "exclusions"
    rel: str  # path relative to the pool root, for messages
    doc: Document
    facts: object = None  # packed.Facts, what the checks across records read; made when first needed
    key: str = ""  # its file's name without .yaml; taken from doc.path when not given

    def __post_init__(self):
        if not self.key:
            self.key = self.doc.path.stem

    @property
    def data(self) -> dict:
        return self.doc.data

    def line(self, *path) -> int:
        return self.doc.line(*path)

    def without(self, marker: str, fields: set[str]) -> Record:
        """The record with those of `fields` that hold `marker` left out (itself if none)."""
        if not any(self.data.get(name) == marker for name in fields):
            return self
        data = {name: value for name, value in self.data.items() if not (name in fields and value == marker)}
        return Record(self.kind, self.rel, Document(self.doc.path, data, self.doc.lines), self.facts, self.key)

    def as_of(self, day: dt.date, history: str | None) -> Record:
        """The record as it stood on `day`, its later changes undone (itself if none); for
        counting, not for messages, so its lines are not kept."""
        data = history_as_of(self.data, history, day)
        if data is self.data:
            return self
        return Record(self.kind, self.rel, Document(self.doc.path, data), None, self.key)


@dataclass
class Pool:
    registry: Registry
    records: dict[str, list[Record]] = field(default_factory=dict)
    # keys of files that exist but could not be read: already reported, so references
    # to them are not reported again as missing
    unreadable: set[str] = field(default_factory=set)
    claims: list | None = None  # the claim ledger, once validate has read and checked it

    @property
    def root(self) -> Path:
        return self.registry.root

    @property
    def entries(self) -> list[Record]:
        return self.records["entries"]

    @property
    def exclusions(self) -> list[Record]:
        return self.records["exclusions"]

    def as_of(self, day: dt.date) -> Pool:
        """The pool as it stood on `day`: the records the registry's pool.dated_by dates on
        or before it (a record without its date is not known to have been there), each
        with the changes its history records after that day undone."""
        dated_by = self.registry.pool.get("dated_by") or {}
        missing = [kind for kind in RECORD_KINDS if kind not in dated_by]
        if missing:
            raise PaperpoolError(
                f"registry.yaml: pool.dated_by names no date field of the {' and '.join(missing)}, so the pool "
                f"as of a date is not known; add e.g. `dated_by: {{entries: date_added, exclusions: date_screened}}`"
            )
        kept = {
            kind: [
                record.as_of(day, history_field(self.registry, kind))
                for record in records
                if _on_or_before(record.data.get(dated_by[kind]), day)
            ]
            for kind, records in self.records.items()
        }
        return Pool(self.registry, kept, self.unreadable, self.claims)

    def known(self) -> Pool:
        """The pool with the unknown marker (TODO) taken out of every field it is no value
        of (a year, a date, a choice, a link): validate warns of each, and what is not known
        yet is counted as not given, not as a value of the wrong type. In a text field it
        is a text, shown as written."""
        marker = self.registry.unknown_marker
        if marker is None:
            return self
        kept = {}
        for kind, records in self.records.items():
            unknown = {name for name, spec in self.registry.fields[kind].items() if spec.type not in TEXT_TYPES}
            kept[kind] = [record.without(marker, unknown) for record in records]
        return Pool(self.registry, kept, self.unreadable, self.claims)

    def all_records(self) -> list[Record]:
        return [record for kind in RECORD_KINDS for record in self.records[kind]]


def load_pool(root: Path) -> tuple[Pool | None, list[Problem]]:
    """Read every record that can be read; files that cannot are reported, not fatal."""
    registry, problems = readable_registry(root)
    if registry is None:
        return None, problems
    pool = Pool(registry)
    for kind in RECORD_KINDS:
        pool.records[kind] = _load_folder(registry, kind, problems, pool.unreadable)
    return pool, problems


def readable_registry(root: Path) -> tuple[Registry | None, list[Problem]]:
    """The pool's registry, if it is usable and its records folders are plain folders
    (nothing is read or written through a link); else None and the problems."""
    registry, problems = load_registry(root)
    if registry is None:
        return None, problems
    linked = linked_folders(registry)
    return (None, linked) if linked else (registry, problems)


def linked_folders(registry: Registry) -> list[Problem]:
    """A records folder reached through a symbolic link (the folder, or one on its way)
    would have every command read records from, and add and the imports write them to,
    wherever the link points: refused, as linked records are."""
    problems = []
    for kind in RECORD_KINDS:
        linked = linked_step(registry.root, registry.pool[kind])
        if linked:
            problems.append(
                Problem(
                    linked,
                    1,
                    "",
                    f"is a symbolic link; the {kind} are kept in a plain folder of the pool: "
                    "replace the link with the folder itself",
                )
            )
    return problems


def require_pool(root: Path) -> Pool:
    """A pool whose registry is usable, or a PaperpoolError naming the first problem."""
    pool, problems = load_pool(root)
    if pool is None:
        raise PaperpoolError(f"{problems[0]} (and {len(problems) - 1} more)" if len(problems) > 1 else str(problems[0]))
    return pool


def _load_folder(registry: Registry, kind: str, problems: list[Problem], unreadable: set[str]) -> list[Record]:
    readable = [(rel, Path(path)) for rel, path in record_files(registry, kind, problems, unreadable)]
    records = []
    for (rel, path), (doc, problem) in zip(readable, read_records([path for _, path in readable]), strict=True):
        problem = problem or not_a_mapping(rel, doc.data)
        if problem is not None:
            problems.append(Problem(rel, problem.line, problem.field, problem.message))
            unreadable.add(path.stem)
        else:
            records.append(Record(kind, rel, doc))
    return records


def record_files(registry: Registry, kind: str, problems: list[Problem], unreadable: set[str]) -> list[tuple[str, str]]:
    """The files of a records folder to read, as (path relative to the pool, path); what
    is not read is reported (a missing folder, a link, a file that is no record). Paths
    are strings: at 10,000 records, making Path objects costs more than listing the folder."""
    folder = registry.folder(kind)
    rel_folder = registry.pool[kind]
    if not folder.is_dir():
        problems.append(Problem(rel_folder, 1, "", f"folder is missing; create {rel_folder}/ (it may be empty)"))
        return []
    readable = []
    # scandir's entries know whether they are links or folders without a call per file
    with os.scandir(folder) as found:
        entries = sorted(found, key=lambda entry: os.path.normcase(entry.name))  # as sorted Paths
    for entry in entries:
        name = entry.name
        rel = f"{rel_folder}/{name}"
        if name.startswith("."):
            continue  # editor swap files, .gitkeep, our own temporary files
        if not utf8_name(name):
            problems.append(Problem(rel, 1, "", f"{NOT_UTF8_NAME}; rename it to its key: KEY{RECORD_SUFFIX}"))
            unreadable.add(stem(name))
            continue
        if entry.is_symlink():
            # git stores a link as a link: the record would be whatever it points at on
            # each machine (another file, a device, a secret), so records are plain files
            problems.append(
                Problem(rel, 1, "", "is a symbolic link; a record is a plain file: replace the link with the file itself")
            )
            unreadable.add(stem(name))
            continue
        if entry.is_dir() or not name.endswith(RECORD_SUFFIX) or stem(name) == name:
            problems.append(
                Problem(rel, 1, "", f"not read: records are files ending in {RECORD_SUFFIX}; rename or move it", "warning")
            )
            continue
        readable.append((rel, entry.path))
    return readable


def stem(name: str) -> str:
    """A file name without its suffix, as Path(name).stem has it."""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def not_a_mapping(rel: str, data) -> Problem | None:
    if isinstance(data, dict):
        return None
    found = "a list" if isinstance(data, list) else "a single value"
    return Problem(rel, 1, "", f"the file holds {found}, but a record is a mapping: one `field: value` per line")


PARALLEL_FROM = 1000  # records; below this, starting worker processes costs more than it saves


def read_records(paths: list[Path]) -> list[tuple[Document | None, Problem | None]]:
    """Each file's document, or the problem that stopped it being read. A large pool
    is parsed by one process per core: parsing YAML is most of reading a pool, and it
    runs in Python."""
    workers = min(os.cpu_count() or 1, len(paths) // (PARALLEL_FROM // 2))
    if workers < 2:
        return [_read_record(path) for path in paths]
    chunks = [paths[start : start + 250] for start in range(0, len(paths), 250)]
    with concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=processes.context(), initializer=processes.start_worker, initargs=(os.getpid(),)
    ) as executor:
        return [result for chunk in executor.map(_read_chunk, chunks) for result in chunk]


def _read_chunk(paths: list[Path]) -> list[tuple[Document | None, Problem | None]]:
    return [_read_record(path) for path in paths]


def _read_record(path: Path) -> tuple[Document | None, Problem | None]:
    # a Problem, not the exception: exceptions do not always survive the trip between processes
    try:
        return load_yaml(path), None
    except YamlProblem as exc:
        return None, Problem("", exc.line, exc.field, exc.message)
    except OSError as exc:
        return None, Problem("", 1, "", f"cannot read: {exc.strerror}; check the file's permissions")


def _on_or_before(value, day: dt.date) -> bool:
    return isinstance(value, dt.date) and not isinstance(value, dt.datetime) and value <= day
