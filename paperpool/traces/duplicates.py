"""Keys given twice in one object of a trace file: refused, each by its JSON pointer.

JSON leaves open which of two values of one key counts (orjson, msgspec and Python's json
keep the last, other readers the first or either), so a trace that gives a key twice
means what its reader picks: paperpool refuses it, as it refuses a YAML file's. No fast
JSON parser reports them, and Python's json reading every object as its list of pairs
takes three times as long as the whole of validation (3.8 s for 200,000 events, against
1.0 s), so they are first ruled out by counting:

- a file's text holds at most as many keys as it has colons right after a quote or
  white space (a key is a string, maybe white space, then its colon): `at_most`, counted
  in compiled code (_columns.pyx; numpy where it is not built) in the second process while the first parses (links.py);
- the parsed trace holds at least as many keys as the objects the index counts on its
  way (each event and edge, its cost and rewards; other objects, such as an x_ field's,
  are left out);
- when the two are equal, every key of the text is a key of the parsed trace: none was
  given twice. They are compared per section (events, edges); the rest of the file, the
  trace's top level, is at most 16 MB (source.py) and read with Python's json.

A section whose counts differ (a key given twice, or objects the index leaves out) is
checked exactly: the colons of its text against those of orjson's writing of what was
parsed, equal exactly when nothing was dropped (0.12 s for 200,000 events); when they
differ too, Python's json names each key given twice. A file read whole and not shaped like a trace, or read
without a second process, is checked exactly at once (at most 4 MB: milliseconds).
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from dataclasses import dataclass

import numpy as np
import orjson

from .compiled import loops as _native
from .schema import MAX_DEPTH, MOST_PROBLEMS, Finding, part_order, pointer, top_order

SECTIONS = ("events", "edges")
BLOCK = 8 * 1024 * 1024  # bytes counted at a time, to keep memory down
_KEY_END = np.zeros(256, dtype=bool)  # the bytes a key's colon can follow: its closing quote, white space
_KEY_END[[ord('"'), ord(" "), ord("\t"), ord("\n"), ord("\r")]] = True


@dataclass
class Census:
    """Where the events and edges are in a file's bytes, and how many keys each holds at most."""

    spans: dict  # section -> (start, end) of its list in the bytes
    at_most: dict  # section -> the most keys its text can hold


def census(data: bytes, sections: dict) -> Census | None:
    """The census of `data`, whose events and edges lists are the msgspec.Raw slices
    `sections` (views into `data`, not copies); None when they are not."""
    base = np.frombuffer(data, dtype=np.uint8).ctypes.data
    spans, at_most_keys = {}, {}
    for name in SECTIONS:
        view = np.frombuffer(sections[name], dtype=np.uint8)
        start = view.ctypes.data - base
        if not 0 <= start <= len(data) - view.size:
            return None
        spans[name] = (start, start + view.size)
        at_most_keys[name] = at_most(view)
    return Census(spans, at_most_keys)


def at_most(text) -> int:
    """How many keys JSON `text` (bytes, or a uint8 array of them) can hold at most: its
    colons that follow a quote or white space."""
    if _native is not None:
        return _native.keys_at_most(text)
    a = np.frombuffer(text, dtype=np.uint8) if not isinstance(text, np.ndarray) else text
    total = 0
    for start in range(1, a.size, BLOCK):
        stop = min(start + BLOCK, a.size)
        colons = np.flatnonzero(a[start:stop] == ord(":"))  # few: taking them is faster than masking the block
        total += int(np.count_nonzero(_KEY_END[a[colons + (start - 1)]]))
    return total


def find(trace_source, counted: dict, found: Census | None) -> list[Finding]:
    """The keys given twice in the file `trace_source` was read from (none for a trace
    given parsed): the first MOST_PROBLEMS + 1, as locate finds them. `counted`: keys per
    section the index counted, `found`: the file's census (from the second process), when
    there is one."""
    data = getattr(trace_source, "data", None)
    if data is None:
        return []
    if found is None and getattr(trace_source, "sections", None) is not None:  # read in chunks, with no second process
        found = census(data, trace_source.sections)
    if found is None or not trace_source.shaped:  # read whole (a chunked file always has its census)
        return exact(data, trace_source.trace) if hasattr(trace_source, "trace") else locate(data)
    findings = locate(_top_level(data, found))
    for name in SECTIONS:
        if counted.get(name) == found.at_most[name]:
            continue
        if hasattr(trace_source, "texts"):  # read in chunks: checked a chunk at a time
            kept = len(findings)
            for offset, text in trace_source.texts(name):
                if len(findings) - kept > MOST_PROBLEMS:  # a later chunk's come after those kept
                    break
                findings += exact(text, orjson.loads(text), [name], offset)
        else:
            start, end = found.spans[name]
            findings += exact(data[start:end], trace_source.trace[name], [name])
    return sorted(findings, key=Finding.sort_key)[: MOST_PROBLEMS + 1]


def _top_level(data: bytes, found: Census) -> bytes:
    """The file with its events and edges lists left empty: the trace's top level."""
    parts, at = [], 0
    for start, end in sorted(found.spans.values()):
        parts += [data[at:start], b"[]"]
        at = end
    return b"".join(parts + [data[at:]])


def exact(text: bytes, parsed, prefix: list | None = None, offset: int = 0) -> list[Finding]:
    """The keys given twice in JSON `text` (as locate finds them), which orjson parsed as `parsed`; `prefix` and
    `offset` place the text in its file (a section, or a chunk of one from `offset` on).

    Every key of the text is followed by a colon, and so is every key orjson writes;
    both also hold the colons inside strings, unless the text escapes one (\\u003a). So
    with no escaped colon the counts are equal exactly when no key was dropped."""
    escaped = text.find(b"\\") >= 0 and (b"\\u003a" in text or b"\\u003A" in text)
    try:
        if not escaped and text.count(b":") == orjson.dumps(parsed).count(b":"):
            return []
    except TypeError:  # nested past the 255 levels orjson writes
        pass
    return locate(text, prefix, offset)


class _Repeated(dict):
    """An object that gives keys twice: what Python's json keeps, and how often each
    repeated key was given."""

    repeated: dict


def _pairs(pairs: list) -> dict:
    kept = dict(pairs)
    if len(kept) == len(pairs):
        return kept
    repeated = _Repeated(kept)
    counts: dict = {}
    for key, _ in pairs:
        counts[key] = counts.get(key, 0) + 1
    repeated.repeated = {key: count for key, count in counts.items() if count > 1}
    return repeated


def locate(text: bytes, prefix: list | None = None, offset: int = 0) -> list[Finding]:
    """The keys given twice in JSON `text`, each by its pointer, read with Python's json
    (whose numbers are not needed, so not converted): the first MOST_PROBLEMS + 1 in
    document order (Finding.sort_key's), so that a caller can tell there are more; past
    them none is looked for.

    The file may nest 1,024 levels, so the walk keeps a stack of its own, and each node on
    it holds a link to its parent's place, not a copy of its path: copies cost the depth
    for every object (300,000 empty objects 1,000 levels down took 2.5 GB). A pointer is
    spelt out only for a key found twice."""
    with _deep_enough():
        document = json.loads(text, object_pairs_hook=_pairs, parse_int=lambda _: 0, parse_float=lambda _: 0)
    findings: list[Finding] = []
    waiting = [(document, None, 0)]  # (node, its place: (the parent's place, its key), how often a key is given)
    while waiting and len(findings) <= MOST_PROBLEMS:
        node, place, count = waiting.pop()
        if count:  # the key at `place`, given `count` times
            findings.append(_given_twice(place, count, prefix, offset))
        elif isinstance(node, dict):
            repeated = getattr(node, "repeated", {})
            wanted = [key for key, value in node.items() if key in repeated or isinstance(value, (dict, list))]
            for key in sorted(wanted, key=functools.partial(_order, top=place is None and not prefix), reverse=True):
                if isinstance(node[key], (dict, list)):  # taken after the key's own finding, as sort_key orders them
                    waiting.append((node[key], (place, key), 0))
                if key in repeated:
                    waiting.append((None, (place, key), repeated[key]))
        elif isinstance(node, list):
            waiting += [(node[k], (place, k), 0) for k in range(len(node) - 1, -1, -1) if isinstance(node[k], (dict, list))]
    return findings


def _order(key: str, top: bool) -> tuple:
    """Where a key comes among its object's in Finding.sort_key's order (the trace's top
    level's in the schema's)."""
    part = pointer([key])[1:]
    return (top_order(part), part_order(part)) if top else (part_order(part),)


def _given_twice(place: tuple, count: int, prefix: list | None, offset: int) -> Finding:
    path = []
    while place is not None:
        place, key = place
        path.append(key)
    path.reverse()
    if offset and path and isinstance(path[0], int):  # a chunk of a section: its first index counts from the chunk's start
        path[0] += offset
    return Finding(
        pointer(list(prefix or []) + path),
        f"'{path[-1]}' is given {'twice' if count == 2 else f'{count} times'} "
        "in one object; JSON readers differ on which value they keep: "
        "keep one of them",
    )


@contextlib.contextmanager
def _deep_enough():
    """Room for Python's json to read the 1,024 levels orjson allows: each is a recursion
    of its C scanner, counted against Python's limit (1,000 by default)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, MAX_DEPTH + 1000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
