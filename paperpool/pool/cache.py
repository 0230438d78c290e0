"""paperpool's cache of checked records, so that validating a pool after an edit re-reads
and re-checks only the files that changed.

One file per pool, in the user's cache folder ($PAPERPOOL_CACHE_DIR, else
$XDG_CACHE_HOME/paperpool, else ~/.cache/paperpool), named from a hash of the pool's
resolved path: never in the pool, where a pull request could put a cache that calls a
bad record clean. It holds, for each record file, what checking it alone gave (packed.Entry:
its problems, the facts the checks across records read, its data and field lines) under
the file's path in the pool and a digest of its bytes; and the pairs of near-identical
titles among the titles it has seen.

An entry is used only for a file of the same path whose bytes have the same digest, and
only when everything else its checks depend on is the same: the registry's bytes, the
date (some checks compare with today), the cache format, paperpool's version and the
digest of its code, and the versions of Python, PyYAML and rapidfuzz. Title pairs are
used for the same threshold and software. Whatever differs, the entry is not used. The
checks across records (the same paper twice, near-identical titles, references, claims)
are run on every validate, from each record's facts.

The cache is a convenience: deleting it is always safe, and a cache that is missing,
truncated, damaged, unreadable, unwritable or not the user's own is treated as empty,
silently. It is written whole to a temporary file and renamed into place. It is JSON
(the standard library's), never pickle: loading an altered file cannot run code, and
every part of it is checked for its type before use.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import itertools
import json
import operator
import os
import stat
import sys
import tempfile
import time
import zlib
from pathlib import Path

from paperpool import __version__
from paperpool.files.caches import cache_folder
from paperpool.files.yamlio import write_all

from .packed import Entry, Facts

FORMAT = 2  # raised whenever what is stored, or how, changes
MAGIC = b"paperpool-cache\n"
_CHECKSUM = 4  # bytes of CRC-32 over the rest of the file: a truncated or damaged file is not read
MAX_BYTES = 1 << 30  # a pool of 100,000 records caches about 300 MB
KEEP_DAYS = 30  # a cache file not written for this long (a pool moved or deleted) is removed


def cache_path(root: Path) -> Path | None:
    folder = cache_folder()
    if folder is None:
        return None
    name = hashlib.blake2b(os.fsencode(root), digest_size=16).hexdigest()
    return folder / f"{name}.cache"


@functools.cache
def software_key() -> str:
    """What the stored results depend on besides the files: paperpool's format, version
    and code (an edited checkout keeps its version number), Python, and the libraries
    that read YAML and score titles."""
    import rapidfuzz
    import yaml

    return " ".join(
        (
            f"format {FORMAT}",
            f"paperpool {__version__}",
            f"code {_code_digest()}",
            f"python {sys.version.split()[0]}",
            f"pyyaml {yaml.__version__} libyaml {yaml.__with_libyaml__}",
            f"rapidfuzz {rapidfuzz.__version__}",
        )
    )


def _code_digest() -> str:
    """A digest of paperpool's Python files (2 ms): any change to the code that checks
    records makes every entry stale."""
    package = Path(__file__).resolve().parents[1]  # paperpool/: every wing's code checks records
    digest = hashlib.blake2b(digest_size=16)
    for folder, folders, files in os.walk(package):
        folders.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = Path(folder, name)
                digest.update(path.relative_to(package).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def records_key(registry_digest: bytes) -> str:
    """What the entries' checks depend on in the pool, besides each file: the registry's
    bytes, and the date (a date in the future, a year after next year)."""
    return f"registry {registry_digest.hex()} on {dt.date.today().isoformat()}"


def likely_usable(root: Path, registry_digest: bytes) -> bool:
    """Whether the pool's cache file was written for this software, registry and day, as
    its first bytes say (unchecked: only to plan the reading; Store checks everything)."""
    path = cache_path(root.resolve())
    try:
        with open(path, "rb") as file:
            start = file.read(4096)
    except (OSError, TypeError):  # TypeError: no cache folder (path None)
        return False
    return (
        start.startswith(MAGIC)
        and json.dumps(software_key()).encode() in start
        and json.dumps(records_key(registry_digest)).encode() in start
    )


class Store:
    """The cache file of one pool: what it knew when read, and the new one to write."""

    def __init__(self, root: Path, registry_digest: bytes):
        self.root = str(root.resolve())
        self.path = cache_path(Path(self.root))
        self.records_key = records_key(registry_digest)
        self.entries: dict[str, Entry] = {}  # usable entries, by path in the pool
        self.titles: tuple[float, list[str], list[tuple[str, str, float]]] | None = None
        self._written: dict[str, Entry] = {}  # every entry of the file as read, usable or not
        if self.path is None:
            return
        read = _load(self.path)
        if read is None or read.get("software") != software_key() or read.get("root") != self.root:
            return
        with contextlib.suppress(ValueError, TypeError, KeyError, IndexError):
            self.titles = _titles(read["titles"])
        with contextlib.suppress(ValueError, TypeError, KeyError, IndexError):
            self._written = _entries(read, read["blob"])
            if read["records_key"] == self.records_key:
                self.entries = self._written

    def known_titles(self, threshold: float) -> tuple[list[str], list[tuple[str, str, float]]] | None:
        """The title pairs stored for this threshold, as identity.similar_key_pairs takes them."""
        if self.titles is None or self.titles[0] != threshold:
            return None
        return self.titles[1], self.titles[2]

    def save(self, entries: dict[str, Entry], titles: tuple[float, list[str], list[tuple[str, str, float]]] | None) -> None:
        """Write the cache anew when enough changed; silently not when it cannot be written.
        A few changed records are not worth rewriting a cache of thousands (50 ms at 10,000
        records): until more change, they are read and checked again on each run."""
        if self.path is None:
            return
        changed = sum(1 for rel, entry in entries.items() if self.entries.get(rel) is not entry)
        changed += sum(1 for rel in self.entries if rel not in entries)
        if self.entries and changed <= len(entries) // REWRITE_AT:
            return
        if not self.entries and not entries and self._written == {}:
            return  # nothing known, nothing to keep
        with contextlib.suppress(OSError, ValueError, TypeError, UnicodeError):
            _write(self.path, _encoded(self.root, self.records_key, entries, titles))
            _remove_old(self.path)


REWRITE_AT = 1000  # the cache is rewritten when more than one record in this many changed


def _encoded(root: str, key: str, entries: dict[str, Entry], titles) -> bytes:
    """The cache as JSON columns (a list per field, not an object per record: read and
    checked several times faster), followed by the records' bodies one after another."""
    rels = list(entries)
    facts = [entry.facts for entry in entries.values() if entry.facts is not None]
    ends, end = [], 0
    for entry in entries.values():
        end += len(entry.body)
        ends.append(end)
    index = {
        "software": software_key(),
        "root": root,
        "records_key": key,
        "rels": rels,
        "digests": b"".join(entry.digest for entry in entries.values()).hex(),
        "ends": ends,
        "records": [entry.facts is not None for entry in entries.values()],
        "problems": [[number, *row] for number, entry in enumerate(entries.values()) for row in entry.problems],
        "facts": [
            [item.title for item in facts],
            [item.distinct_from for item in facts],
            [item.tokens for item in facts],
            [item.unique for item in facts],
        ],
        "titles": None
        if titles is None
        else {
            "threshold": titles[0],
            "keys": titles[1],
            "pairs": _pair_positions(titles[1], titles[2]),
        },
    }
    head = json.dumps(index, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return len(head).to_bytes(8, "big") + head + b"".join(entry.body for entry in entries.values())


def _pair_positions(keys: list[str], pairs: list[tuple[str, str, float]]) -> list:
    position = {key: number for number, key in enumerate(keys)}
    return [part for a, b, score in pairs for part in (position[a], position[b], score)]


def _load(path: Path) -> dict | None:
    """The cache file's index, with its bodies as "blob"; None when it cannot be used."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return None  # only a file the user wrote: another user could have left anything
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 24):
            chunks.append(chunk)
        data = b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
    start = len(MAGIC) + _CHECKSUM
    view = memoryview(data)
    if data[: len(MAGIC)] != MAGIC or _checksum(view[start:]) != data[len(MAGIC) : start]:
        return None
    try:
        size = int.from_bytes(data[start : start + 8], "big")
        index = json.loads(bytes(view[start + 8 : start + 8 + size]))
    except (ValueError, RecursionError):
        return None
    if type(index) is not dict:
        return None
    index["blob"] = view[start + 8 + size :]
    return index


def _entries(index: dict, blob: memoryview) -> dict[str, Entry]:
    """The entries of a cache's index, every part checked for its type and length first
    (by C loops over whole columns: a loop over records in Python would cost more than
    reading the file): an altered file yields ValueError, TypeError, KeyError or
    IndexError, never an entry of the wrong shape."""
    rels, ends, records = index["rels"], index["ends"], index["records"]
    digests = bytes.fromhex(index["digests"])
    titles, distinct, tokens, unique = index["facts"]
    count, readable = len(rels), sum(_of_types(records, bool))
    _of_types(rels, str)
    _of_types(ends, int)
    _of_types(titles, str, type(None))
    _of_types(distinct, list)
    _of_types(_items(distinct), str)
    _of_types(tokens, list)
    _of_types(_items(tokens), str)
    if any(map((3).__rmod__, map(len, tokens))):
        raise ValueError("a token is kind, id and field")
    _of_types(unique, dict)
    _of_types(_items(map(dict.values, unique)), str, int, float, bool, type(None))
    if len(digests) != 16 * count or {len(ends), len(records)} != {count} or len(set(rels)) != count:
        raise ValueError("columns of different lengths")
    if {len(titles), len(distinct), len(tokens), len(unique)} != {readable}:
        raise ValueError("columns of different lengths")
    if any(map(operator.gt, [0, *ends], [*ends, len(blob)])):
        raise ValueError("bodies out of order or beyond the file")
    problems: dict[int, list] = {}
    for row in index["problems"]:
        number, line, field, message, severity = row
        if type(number) is not int or type(line) is not int or {type(field), type(message), type(severity)} != {str}:
            raise TypeError("a problem is [record, line, field, message, severity]")
        problems.setdefault(number, []).append((line, field, message, severity))
    made = iter(list(map(Facts, titles, distinct, tokens, unique)))
    bodies = map(blob.__getitem__, map(slice, [0, *ends], ends))
    return {
        rel: Entry(digests[16 * number : 16 * number + 16], problems.get(number, []), next(made) if record else None, body)
        for number, (rel, record, body) in enumerate(zip(rels, records, bodies, strict=True))
    }


def _items(lists):
    return itertools.chain.from_iterable(lists)


def _of_types(items, *types):
    """`items` if it is a list (or a chain of lists) of these types only, else TypeError."""
    if type(items) not in (list, itertools.chain) or not set(map(type, items)) <= set(types):
        raise TypeError(f"expected a list of {', '.join(kind.__name__ for kind in types)}")
    return items


def _titles(stored) -> tuple[float, list[str], list[tuple[str, str, float]]] | None:
    if stored is None:
        return None
    threshold, keys, flat = stored["threshold"], stored["keys"], stored["pairs"]
    _of_types(keys, str)
    _of_types(flat, int, float)
    if type(threshold) not in (int, float) or len(flat) % 3:
        raise ValueError("title pairs come in threes")
    pairs = [(keys[flat[i]], keys[flat[i + 1]], float(flat[i + 2])) for i in range(0, len(flat), 3)]
    if any(type(flat[i]) is not int or flat[i] < 0 for i in range(len(flat)) if i % 3 != 2):
        raise ValueError("a title's position is not a position")
    return float(threshold), keys, pairs


def _checksum(data) -> bytes:
    # CRC-32 finds damage (a digest would cost 30 ms more at 10,000 records); against a
    # deliberate change no checksum kept beside the data helps: see packed.PackedDocument
    return zlib.crc32(data).to_bytes(_CHECKSUM, "big")


def _write(path: Path, payload: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        write_all(fd, MAGIC + _checksum(payload))
        write_all(fd, payload)
        os.close(fd)
        fd = -1
        os.replace(name, path)
    finally:
        if fd >= 0:
            os.close(fd)
        Path(name).unlink(missing_ok=True)  # gone already once renamed


def _remove_old(kept: Path) -> None:
    """Remove the cache files of pools not validated for KEEP_DAYS (moved, deleted, or
    temporary folders), and temporary files left by a killed writer."""
    limit = time.time() - KEEP_DAYS * 86400
    with os.scandir(kept.parent) as found:
        for entry in found:
            ours = entry.name.endswith(".cache") or (entry.name.startswith(".") and entry.name.endswith(".tmp"))
            if (
                ours
                and entry.is_file(follow_symlinks=False)
                and entry.path != str(kept)
                and entry.stat(follow_symlinks=False).st_mtime < limit
            ):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
