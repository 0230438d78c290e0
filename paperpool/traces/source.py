"""Where a trace's events and edges come from: a parsed document, or a large file read
in chunks.

A large trace parsed whole takes about eight times its file's size in Python objects,
and more time per event once they no longer fit the caches (a million events, 235 MB:
2.2 GB and 10 s). Read in chunks it needs little more than the file: msgspec skims the
file into raw byte slices, one per event and edge, without building objects, and each
chunk of slices is parsed, validated and indexed, then dropped (0.5 GB and 6 s).

Only the events and edges may be large: the rest of the file, the trace's top level, is
parsed whole and read once more with Python's json for keys given twice (duplicates.py),
which takes some 70 times its size in memory (a 72 MB x_ field: 26 s and 5.4 GB). So a
file over MAX_TOP_BYTES is first skimmed into its top-level fields as byte slices, and
refused when all but its events and edges take more than that, before any is parsed.
"""

from __future__ import annotations

import msgspec
import orjson

from .loading import TraceUnreadable, explain_bytes, no_gc_pauses, parse_trace
from .schema import Finding, pointer

CHUNK = 20_000  # events or edges parsed at a time
SECTIONS = ("events", "edges")
MAX_TOP_BYTES = 16 * 1024 * 1024  # the most a trace's top level may take, events and edges aside
_MB = 1024 * 1024
_fields = msgspec.json.Decoder(dict[str, msgspec.Raw])


class WholeSource:
    """A trace already in memory: parsed whole from a file's `data`, or given by a caller."""

    def __init__(self, trace, data: bytes | None = None):
        self.trace = trace
        self.data = data

    @property
    def shaped(self) -> bool:
        """Whether it has the lists that the graph rules read."""
        return isinstance(self.trace, dict) and all(isinstance(self.trace.get(name), list) for name in SECTIONS)

    @property
    def top(self) -> dict:
        return {key: value for key, value in self.trace.items() if key not in SECTIONS}

    def count(self, section: str) -> int:
        return len(self.trace[section])

    def chunks(self, section: str):
        yield 0, self.trace[section]

    def item(self, section: str, position: int):
        return self.trace[section][position]


class ChunkedSource:
    """A trace file whose events and edges are parsed a chunk at a time."""

    def __init__(self, data: bytes, top: dict, raw: dict, chunk: int = CHUNK, sections: dict | None = None):
        self.data = data
        self.top = top
        self.raw = raw  # section -> one msgspec.Raw slice per item
        self.chunk = chunk
        self.sections = sections  # section -> the msgspec.Raw slice of its whole list
        self.shaped = True

    def count(self, section: str) -> int:
        return len(self.raw[section])

    def chunks(self, section: str):
        for offset, text in self.texts(section):
            yield offset, self._parse(text)

    def texts(self, section: str):
        """(offset, the JSON text of a list of the section's items from there on), a chunk at a time."""
        raw = self.raw[section]
        for offset in range(0, len(raw), self.chunk):
            yield offset, b"[" + b",".join(raw[offset : offset + self.chunk]) + b"]"

    def item(self, section: str, position: int):
        return self._parse(memoryview(self.raw[section][position]))

    def _parse(self, data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:  # a number the skim let by: explained on the whole file
            raise TraceUnreadable(explain_bytes(self.data)) from None


def from_bytes(data: bytes, chunk_above: int, chunk: int = CHUNK):
    """The source of a trace file's bytes: chunked when it is large and shaped like a
    trace, else parsed whole (which also explains any defect the same way for all);
    TraceUnreadable when its top level is too large (a smaller file's cannot be)."""
    fields = _top_fields(data) if len(data) > min(chunk_above, MAX_TOP_BYTES) else None
    if fields is not None:
        _bound_top_level(data, fields)
        if len(data) > chunk_above:
            chunked = _skim(data, fields, chunk)
            if chunked is not None:
                return chunked
    return WholeSource(parse_trace(data), data)


def _top_fields(data: bytes) -> dict | None:
    """The file's top-level fields as slices of its bytes (not parsed), or None when it is
    no JSON object (parsing it whole then says why)."""
    try:
        with no_gc_pauses():
            return _fields.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None


def _bound_top_level(data: bytes, fields: dict) -> None:
    """Refuse a top level over MAX_TOP_BYTES: every byte outside the events' and edges'
    lists (as read: a key given twice counts each time), named by its largest field."""
    size = len(data) - sum(len(fields[name]) for name in SECTIONS if name in fields)
    if size <= MAX_TOP_BYTES:
        return
    others = [key for key in fields if key not in SECTIONS]
    largest = max(others, key=lambda key: len(fields[key]), default=None)
    where = pointer([largest]) if largest is not None and len(fields[largest]) * 2 > size else ""
    raise TraceUnreadable(
        [
            Finding(
                where,
                f"the trace's fields other than events and edges take "
                f"{-(-size // _MB):,} MB, over the limit of {MAX_TOP_BYTES // _MB} MB; "
                "keep large data in events, or in a file of its own",
            )
        ]
    )


def _skim(data: bytes, top: dict, chunk: int) -> ChunkedSource | None:
    try:
        with no_gc_pauses():
            sections = {name: top.pop(name) for name in SECTIONS}
            raw = {name: msgspec.json.decode(sections[name], type=list[msgspec.Raw]) for name in SECTIONS}
            fields = {key: orjson.loads(memoryview(value)) for key, value in top.items()}
    except (msgspec.DecodeError, msgspec.ValidationError, KeyError, RecursionError, orjson.JSONDecodeError):
        return None  # no lists of events and edges: read whole
    return ChunkedSource(data, fields, raw, chunk, sections)
