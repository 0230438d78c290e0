"""A checked record in a compact form that crosses process boundaries and goes into the
cache: its own problems, the facts the checks across records need, and its data and field
lines packed as JSON, decoded only when something reads them.

JSON (the standard library's): never pickle, since a cache file may have been altered by
anyone who could write it and decoding it must not run code; and not msgspec, which
validate must not import (it starts in pre-commit hooks; msgspec is for traces).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import NamedTuple

from paperpool.files.caches import cache_folder
from paperpool.files.problems import PaperpoolError
from paperpool.files.yamlio import Document


class Facts(NamedTuple):
    """What the checks across records read of a record, computed where it is parsed."""

    title: str | None  # identity.title_key of its title; None when it has no title
    distinct_from: list[str]  # the keys it names in distinct_from, once each
    tokens: list[str]  # kind, normalised id and field of each identifier and link, one after another
    unique: dict  # value of each field declared unique that holds text or a number


class Entry(NamedTuple):
    """One file's outcome: a record with its problems, or the problem that kept it from being one."""

    digest: bytes  # yamlio.file_digest of the bytes it came from
    problems: list  # (line, field, message, severity) of its own checks
    facts: Facts | None  # None: not a record (unreadable, or no mapping); `problems` says why
    body: bytes | memoryview = b""  # pack(data, lines) of a record


def problem_rows(problems) -> list[tuple[int, str, str, str]]:
    return [(problem.line, problem.field, problem.message, problem.severity) for problem in problems]


def pack(doc: Document) -> bytes:
    """A record's data and field lines as JSON: [data, lines, dates].

    The lines are the numbers alone, in the order of the document: yamlio's builder notes
    the line of each field and item as it meets them, which is the order of a walk through
    the data (each field, then what it holds, then the next), so the walk gives each its
    path back. `dates` names the values YAML read as dates and times (the builder notes
    them too), which JSON holds as their ISO text. Every other YAML value is JSON's own
    (integers of any size; NaN and infinities as Python's json writes them); text is UTF-8
    with surrogatepass, as json.loads reads bytes."""
    dates = []
    for path in doc.dates:
        value = doc.data
        for step in path:
            value = value[step]
        dates.append([path, type(value).__name__])
    text = json.dumps([doc.data, list(doc.lines.values()), dates], ensure_ascii=False, separators=(",", ":"), default=_iso)
    return text.encode("utf-8", "surrogatepass")


def _iso(value) -> str:
    if isinstance(value, dt.date):  # datetime too
        return value.isoformat()
    raise TypeError(f"a YAML value of type {type(value).__name__} cannot be packed")  # yamlio builds no other


def unpack(body: bytes | memoryview, lines: bool = True) -> tuple[dict, dict[tuple, int]]:
    """What pack wrote (without the lines, which cost as much as the rest, unless
    `lines`); ValueError, TypeError, KeyError or IndexError if it is not that."""
    data, numbers, dates = json.loads(bytes(body))
    if type(data) is not dict or type(numbers) is not list or set(map(type, numbers)) - {int}:
        raise TypeError("not a packed record")
    for path, kind in dates:
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = _parse_iso(kind, parent[path[-1]])
    found: dict[tuple, int] = {}
    if lines and _number(data, (), iter(numbers), found) != len(numbers):
        raise ValueError("more line numbers than fields")
    return data, found


def _number(value, path: tuple, numbers, lines: dict) -> int:
    """pack's walk again, giving each field and item its line."""
    pairs = value.items() if type(value) is dict else enumerate(value) if type(value) is list else ()
    count = 0
    for name, item in pairs:
        where = (*path, name)
        lines[where] = next(numbers, None)
        if lines[where] is None:
            raise ValueError("fewer line numbers than fields")
        count += 1 + _number(item, where, numbers, lines)
    return count


def _parse_iso(kind: str, text: str):
    if kind == "date":
        return dt.date.fromisoformat(text)
    if kind == "datetime":
        return dt.datetime.fromisoformat(text)
    raise ValueError(f"unknown kind {kind!r}")


class DamagedBody(PaperpoolError):
    """A cache entry whose body does not decode although the cache's checksum holds, and
    whose file changed since: one line, as any bad input."""


class PackedDocument(Document):
    """A record's Document as the cache or a worker process gave it: its path, data and
    lines are made when first read (a warm validate reads none of them). It keeps no raw
    texts: the checks that quote them ran when the file was parsed."""

    def __init__(self, path: str, body: bytes | memoryview, digest: bytes):
        self._path, self.digest, self._body = path, digest, body

    def __getattr__(self, name: str):
        # each made when first asked for, from the packed form, which is never changed: a
        # reader of the data (stats, the site) needs no lines, and validate only the lines
        # of a record it reports
        if name == "path":  # 10,000 Paths cost more than reading the cache
            self.path = Path(self._path)
        elif name == "data":
            self.data = self._unpacked(lines=False)[0]
        elif name == "lines":
            self.lines = self._unpacked(lines=True)[1]
        elif name == "raw":
            self.raw = {}
        else:
            raise AttributeError(name)
        return self.__dict__[name]

    def _unpacked(self, lines: bool) -> tuple[dict, dict[tuple, int]]:
        try:
            return unpack(self._body, lines)
        except (ValueError, TypeError, KeyError, IndexError, RecursionError):
            return self._reread()

    def _reread(self) -> tuple[object, dict[tuple, int]]:
        """The file itself, parsed again, when its cached form does not decode (a cache
        altered on purpose, checksum and all): the same data, if its bytes are unchanged."""
        from paperpool.files.yamlio import YamlProblem, load_yaml

        try:
            doc = load_yaml(Path(self._path))
        except (YamlProblem, OSError):
            doc = None
        if doc is None or doc.digest != self.digest:
            raise DamagedBody(
                f"{self._path}: its entry in paperpool's cache of checked records does not decode, and the "
                f"file changed since it was checked; run the command again (the cache is in "
                f"{cache_folder()}; deleting it is safe)"
            ) from None
        return doc.data, doc.lines
