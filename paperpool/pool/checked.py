"""Reading a pool for validate: each record file is read, parsed and checked on its own
in one step (in a large pool by this process and forked copies of it, paperpool.pool.sharing),
and what crosses back is small (a packed.Entry, its data packed as JSON); a file whose
bytes the cache already knows is only read and hashed. The checks across records run
afterwards (validate.check_across).
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

from paperpool.files.problems import Problem
from paperpool.files.yamlio import (
    MAX_FILE_BYTES,
    YamlProblem,
    decode_text,
    file_digest,
    parse_yaml,
    read_bytes,
)
from paperpool.registry import RECORD_KINDS, Registry

from . import identity, sharing
from .packed import Entry, PackedDocument, pack, problem_rows
from .reading import Pool, Record, not_a_mapping, readable_registry, record_files, stem
from .recordchecks import record_facts, record_problems

# Seconds of work per file, measured at 10,000 entries: reading and hashing a file the cache
# knows, and reading, parsing and checking one it does not.
KNOWN_COST, NEW_COST = 0.00002, 0.0003
PARALLEL_FROM = 0.15  # seconds of work; below this, a second process costs more than it saves
CHECKED_A_PART, HASHED_A_PART = 50, 500  # files a process takes at a time: a few tens of milliseconds


class CheckedRead:
    """One validate's reading of a pool, with the cache when `use_cache`."""

    def __init__(self, root: Path, use_cache: bool):
        self.root, self.use_cache = root, use_cache
        self.store = None
        self.entries: dict[str, Entry] = {}
        self.titles = None  # (threshold, keys, pairs) found by title_pairs, for the cache

    def load(self) -> tuple[Pool | None, list[Problem]]:
        """The pool with every record checked on its own, and the problems found so far."""
        registry, problems = readable_registry(self.root)
        if registry is None:
            return None, problems
        pool = Pool(registry)
        files = []
        for kind in RECORD_KINDS:
            pool.records[kind] = []
            files += [(kind, rel, path) for rel, path in record_files(registry, kind, problems, pool.unreadable)]
        known, outcomes = self._outcomes(registry, files)
        for (kind, rel, path), outcome in zip(files, outcomes, strict=True):
            key = stem(rel.rpartition("/")[2])
            if isinstance(outcome, Problem):  # not read: nothing to keep
                problems.append(outcome)
                pool.unreadable.add(key)
                continue
            entry = known[rel] if outcome is None else outcome
            self.entries[rel] = entry
            if entry.problems:
                problems += [Problem(rel, *row) for row in entry.problems]
            if entry.facts is None:
                pool.unreadable.add(key)
            else:
                pool.records[kind].append(Record(kind, rel, PackedDocument(path, entry.body, entry.digest), entry.facts, key))
        return pool, problems

    def _outcomes(self, registry: Registry, files: list[tuple]) -> tuple[dict[str, Entry], list]:
        """The cache's usable entries, and each file's outcome (see _check_files)."""
        if not self.use_cache:
            return {}, _check_files(registry, [(kind, rel, path, None) for kind, rel, path in files])
        from .cache import Store, likely_usable

        digest = registry.document.digest
        hashing = len(files) * KNOWN_COST
        if hashing < PARALLEL_FROM or not sharing.available() or not likely_usable(self.root, digest):
            self.store = Store(self.root, digest)
            known = self.store.entries
            return known, _check_files(
                registry, [(kind, rel, path, known[rel].digest if rel in known else None) for kind, rel, path in files]
            )
        # A cache that will likely answer for most files: forked copies hash the files while
        # this process reads the cache, then helps them; the files whose digest the cache
        # does not know are checked afterwards.
        named = [(rel, path) for _, rel, path in files]
        digests, self.store = sharing.share(
            _hash_files, named, HASHED_A_PART, _copies(hashing), meanwhile=lambda: Store(self.root, digest)
        )
        known = self.store.entries
        outcomes = [
            None if rel in known and known[rel].digest == found else found
            for (_, rel, _), found in zip(files, digests, strict=True)
        ]
        changed = [
            (kind, rel, path, None) for (kind, rel, path), outcome in zip(files, outcomes, strict=True) if type(outcome) is bytes
        ]
        checked = iter(_check_files(registry, changed))
        return known, [next(checked) if type(outcome) is bytes else outcome for outcome in outcomes]

    def title_pairs(self, keys: list[str], threshold: float) -> list[tuple[str, str, float]]:
        """identity.similar_key_pairs, reusing the pairs the cache holds among known titles."""
        known = self.store.known_titles(threshold) if self.store is not None else None
        pairs = identity.similar_key_pairs(keys, threshold, known)
        self.titles = (threshold, keys, pairs)
        return pairs

    def save(self) -> None:
        if self.store is not None:
            self.store.save(self.entries, self.titles)


def _check_files(registry: Registry, work: list[tuple]) -> list[Entry | Problem | None]:
    """For each (kind, rel, path, digest the cache knows): None when the file still has
    that digest, else its packed.Entry, or the Problem that kept it from being read. A
    large pool is shared with forked copies of this process (paperpool.pool.sharing), which
    have the registry already: nothing is sent."""
    seconds = sum(KNOWN_COST if digest is not None else NEW_COST for *_, digest in work)
    if seconds < PARALLEL_FROM or not sharing.available():
        return _check_chunk(registry, work)
    return sharing.share(functools.partial(_check_chunk, registry), work, CHECKED_A_PART, _copies(seconds))[0]


def _copies(seconds: float) -> int:
    """Forked copies worth starting for this much work: one per further core, and no
    more than one per PARALLEL_FROM / 2 seconds of it."""
    return max(1, min((os.cpu_count() or 1) - 1, int(seconds / (PARALLEL_FROM / 2)) - 1))


def _check_chunk(registry: Registry, work: list[tuple]) -> list[Entry | Problem | None]:
    buffer = bytearray(MAX_FILE_BYTES + 1)  # for the files only hashed: one per call, never shared by threads
    return [_check_file(registry, buffer, *item) for item in work]


def _check_file(
    registry: Registry, buffer: bytearray, kind: str, rel: str, path: str, known: bytes | None
) -> Entry | Problem | None:
    if known is not None and _digest_of(path, buffer) == known:
        return None
    data = _read(rel, path)
    if isinstance(data, Problem):
        return data
    digest = file_digest(data)
    if digest == known:
        return None
    return check_record(registry, kind, rel, Path(path), data, digest)


def _hash_files(named: list[tuple[str, str]]) -> list[bytes | Problem]:
    """The digest of each (rel, path), or the Problem that kept it from being read."""
    buffer = bytearray(MAX_FILE_BYTES + 1)
    return [_digest_of(path, buffer) or _digest_read(rel, path) for rel, path in named]


def _digest_read(rel: str, path: str) -> bytes | Problem:
    data = _read(rel, path)
    return data if isinstance(data, Problem) else file_digest(data)


def _read(rel: str, path: str) -> bytes | Problem:
    try:
        return read_bytes(path, MAX_FILE_BYTES)  # a string: a Path costs as much as hashing the file
    except YamlProblem as exc:
        return Problem(rel, exc.line, exc.field, exc.message)
    except OSError as exc:
        return Problem(rel, 1, "", f"cannot read: {exc.strerror}; check the file's permissions")


# Opening without following a link and without waiting (a named pipe put in the file's place
# since the folder was listed opens at once, and fstat refuses it)
_OPEN = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_READV = getattr(os, "readv", None)


def _digest_of(path: str, buffer: bytearray) -> bytes | None:
    """The digest of a plain file read whole into `buffer` (reused from file to file),
    the way a file the cache knows is checked: one open, fstat, read and close, and no
    bytes object. None for anything else (not a plain file, too big, an error), which
    read_bytes then reports."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        if _READV is None:  # Windows
            return file_digest(data) if len(data := os.read(fd, info.st_size + 1)) == info.st_size else None
        size = _READV(fd, [buffer])
    except OSError:
        return None
    finally:
        os.close(fd)
    if size != info.st_size:  # changed while read, or read short: read_bytes reads it again
        return None
    return file_digest(memoryview(buffer)[:size])


def check_record(registry: Registry, kind: str, rel: str, path: Path, data: bytes, digest: bytes) -> Entry:
    """A record file's bytes parsed and checked on its own: a function of the bytes, the
    path and the registry (and today's date), which is what makes it cacheable."""
    try:
        doc = parse_yaml(decode_text(data), path)
    except YamlProblem as exc:
        return Entry(digest, [(exc.line, exc.field, exc.message, "error")], None)
    problem = not_a_mapping(rel, doc.data)
    if problem is not None:
        return Entry(digest, problem_rows([problem]), None)
    record = Record(kind, rel, doc)
    return Entry(digest, problem_rows(record_problems(registry, record)), record_facts(registry, record), pack(doc))
