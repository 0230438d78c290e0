"""Reading a trace file: refuse what is too big before reading it, then parse with orjson.

orjson is three times faster than the standard library on large traces and refuses NaN,
Infinity and numbers too large for a double by itself; when it does, the file is parsed a
second time with the standard library (only then) to name every offending number by its
JSON pointer. Any other defect is one line with the line and column.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
import stat
from pathlib import Path

import orjson

from .duplicates import exact
from .schema import MAX_DEPTH, MOST_PROBLEMS, Finding, pointer

# A million events with their edges is about 200 MB of JSON; past this a file is a
# mistake, or needs splitting into runs, and parsing it would take more memory than a
# laptop has to spare.
MAX_TRACE_BYTES = 512 * 1024 * 1024


class TraceUnreadable(Exception):
    """A file that is no trace at all: its findings say why, one line each; `shape`, what
    it is instead when that is known (a compression of COMPRESSIONS, or JSON_LINES), for a
    command to say what to do with it."""

    def __init__(self, findings: list[Finding], shape: str | None = None):
        super().__init__(findings[0].message)
        self.findings = findings
        self.shape = shape


# Compressed files, by their first bytes (magic numbers), with the command that decompresses them
COMPRESSIONS = {"gzip": (b"\x1f\x8b", "gzip -dk"), "zstd": (b"\x28\xb5\x2f\xfd", "zstd -d")}
JSON_LINES = "JSON Lines"


def compression(data: bytes) -> str | None:
    """The compression a file's first bytes announce ("gzip", "zstd"), else None."""
    return next((name for name, (magic, _) in COMPRESSIONS.items() if data.startswith(magic)), None)


@contextlib.contextmanager
def no_gc_pauses():
    """A trace parses into millions of small dicts and lists that hold no reference
    cycles; the cycle collector would walk them again and again while they are made
    (a third of the parse time), so it waits until they are all built. Then what was
    made is frozen out of its reach (gc.freeze), else the first collection after the
    block would walk every one of them once more (measured: 0.19 s for 200,000 events).
    Frozen objects are still freed as usual when no longer used; only a reference cycle
    made inside the block would outlive its use, and a trace makes none."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] > _FREEZE_ABOVE:
                gc.freeze()
            gc.enable()


_FREEZE_ABOVE = 100_000  # objects made and kept; fewer are walked in no time


def read_trace(path: Path, max_bytes: int = MAX_TRACE_BYTES):
    """The parsed JSON of a trace file, whole, or TraceUnreadable (also when an object
    gives a key twice: see duplicates.py)."""
    data = read_bytes(path, max_bytes)
    document = parse_trace(data)
    repeated = exact(data, document)
    if repeated:
        raise TraceUnreadable(repeated)
    return document


def read_bytes(path: Path, max_bytes: int = MAX_TRACE_BYTES, setting: str = "") -> bytes:
    """A trace file's bytes, refused by its size before any is read, and never more than
    the limit (`setting`, said after it: the registry's, where it comes from there): a device such as /dev/zero reports no size and never ends, and a named
    pipe would wait for a writer, so neither is read at all."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise TraceUnreadable([Finding("", "is a folder, not a trace file; name a .json trace file")])
        if not stat.S_ISREG(info.st_mode):
            raise TraceUnreadable(
                [Finding("", "not a plain file (a device, pipe or socket, or a link to one); name a .json file")]
            )
        if info.st_size > max_bytes:
            raise TraceUnreadable([_too_big(f"file is {info.st_size:,} bytes, over", max_bytes, setting)])
        with path.open("rb") as handle:  # no more than the file holds: read(n) reserves n bytes first
            data = handle.read(min(info.st_size, max_bytes) + 1)
            if len(data) > info.st_size:  # it grew since stat: read on to the limit
                data += handle.read(max(max_bytes + 1 - len(data), 0))
        if len(data) > max_bytes:  # it grew while being read
            raise TraceUnreadable([_too_big("file is over", max_bytes, setting)])
    except OSError as exc:
        raise TraceUnreadable(
            [Finding("", f"cannot read the file: {exc.strerror}; check the path and its permissions")]
        ) from None
    if not data or data.isspace():  # isspace stops at the first other byte; strip would copy the file
        raise TraceUnreadable([Finding("", "file is empty; a trace is a JSON object with trace_id, events and edges")])
    if data.startswith(b"\xef\xbb\xbf"):
        raise TraceUnreadable([Finding("", "file starts with a byte-order mark; save it as UTF-8 without BOM")])
    return data


def read_start(path: Path, size: int) -> bytes:
    """At most the first `size` bytes of a plain file (TraceUnreadable for anything else: a
    device never ends, a pipe waits for a writer)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise TraceUnreadable([Finding("", "not a plain file (a device, pipe or socket, or a link to one)")])
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError as exc:
        raise TraceUnreadable([Finding("", f"cannot read the file: {exc.strerror}")]) from None


def _too_big(size: str, max_bytes: int, setting: str = "") -> Finding:
    return Finding(
        "",
        f"{size} the {max_bytes:,}-byte limit for a trace{setting}; is it the right file? "
        "(a longer run can be split into several traces)",
    )


def parse_trace(data: bytes):
    try:
        with no_gc_pauses():
            return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        shape = _shape(exc, data)
        raise TraceUnreadable(_explain(exc, data, shape), shape) from None


def explain_bytes(data: bytes) -> list[Finding]:
    """Why `data` is no JSON trace (it is known not to parse)."""
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return _explain(exc, data, _shape(exc, data))
    return [Finding("", "the file could not be read as a trace; check that it is a JSON trace")]


def _explain(exc: orjson.JSONDecodeError, data: bytes, shape: str | None) -> list[Finding]:
    if "memory" in exc.msg:  # orjson says so when it cannot allocate: the machine's problem, not the file's
        raise MemoryError(exc.msg)
    if shape == JSON_LINES:
        return [
            Finding(
                "",
                "holds several JSON documents, one per line (JSON Lines), where a trace file holds one; "
                "named .jsonl, it is read as a corpus of traces, one per line",
            )
        ]
    if shape is not None:
        return [Finding("", f"is a {shape}-compressed file, not JSON text; decompress it first ({COMPRESSIONS[shape][1]} FILE)")]
    where = f"line {exc.lineno}, column {exc.colno}"
    if "depth limit" in exc.msg:
        return [
            Finding(
                "",
                f"nesting is deeper than {MAX_DEPTH:,} levels at {where}; "
                "a trace nests only a few levels, so this is not a trace file",
            )
        ]
    if "end of data" in exc.msg or "EOF" in exc.msg:
        return [Finding("", f"the JSON stops in the middle ({where}): the file is truncated; export or copy it again")]
    findings = _non_finite_numbers(data)
    if findings:
        return findings
    if "not valid UTF-8" in exc.msg:  # orjson says where no byte of it is (line 1, column 1)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            line = data.count(b"\n", 0, bad.start) + 1
            column = bad.start - data.rfind(b"\n", 0, bad.start)
            return [
                Finding(
                    "",
                    f"byte 0x{data[bad.start]:02x} at line {line}, column {column} is not UTF-8; a trace is "
                    "UTF-8 text: save the file as UTF-8 (or fix the program that wrote it)",
                )
            ]
    return [Finding("", f"not JSON at {where}: {exc.msg}; check that the file is a JSON trace")]


def _shape(exc: orjson.JSONDecodeError, data: bytes) -> str | None:
    """What a file that is no JSON document is instead, when that is plain: compressed
    (its magic number), or JSON Lines (its first line a JSON document, and the content
    past it, on a later line, a line that is one too)."""
    compressed = compression(data)
    if compressed or "after document" not in exc.msg or exc.lineno < 2:
        return compressed
    first = data.find(b"\n")
    start = first
    for _ in range(exc.lineno - 1):  # to the start of the line the rest begins on
        start = data.find(b"\n", start) + 1
    end = data.find(b"\n", start)
    return JSON_LINES if _is_json(data[:first]) and _is_json(data[start : end if end >= 0 else len(data)]) else None


def _is_json(data: bytes) -> bool:
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return True


_NOT_FINITE = object()


def _non_finite_numbers(data: bytes) -> list[Finding]:
    """The pointers of NaN, Infinity and too-large numbers, which JSON does not allow and
    a trace's costs and rewards must not hold; empty when the problem is another one."""

    def constant(text: str):
        return _NOT_FINITE, text

    def number(text: str):
        try:
            value = float(text)
        except OverflowError:  # an integer literal with hundreds of digits
            value = float("inf")
        return (_NOT_FINITE, text) if value in (float("inf"), float("-inf")) else value

    try:
        document = json.loads(
            data,
            parse_constant=constant,
            parse_float=number,
            parse_int=lambda text: number(text) if len(text) > 300 else int(text),
        )
    except (ValueError, RecursionError):
        return []
    findings: list[Finding] = []
    _collect(document, [], findings)
    return findings


def _collect(node, path: list, findings: list[Finding]) -> None:
    if len(findings) > MOST_PROBLEMS:  # one past what is shown: there are more
        return
    if isinstance(node, tuple) and node and node[0] is _NOT_FINITE:
        text = node[1] if len(node[1]) <= 24 else node[1][:21] + "..."
        what = "NaN" if node[1] == "NaN" else text
        findings.append(
            Finding(
                pointer(path),
                f"{what} is not a finite number, which JSON and traces require; "
                "write a finite number (costs and rewards must be finite)",
            )
        )
    elif isinstance(node, dict):
        for key, value in node.items():
            _collect(value, path + [key], findings)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _collect(value, path + [index], findings)


# Characters JSON may hold raw that a terminal would act on or show in another order (C1
# controls, bidirectional and other format characters): written as \u escapes instead,
# which a JSON reader reads as the same string. The rest of non-ASCII text stays as it is.
_NOT_ASCII = re.compile(r"[^\x00-\x7e]+")


def _escaped(match: re.Match) -> str:
    run = match.group()
    return run if run.isprintable() else "".join(char if char.isprintable() else json.dumps(char)[1:-1] for char in run)


def inert(text: str) -> str:
    """JSON text with what a terminal would act on written as escapes (see _NOT_ASCII)."""
    return text if text.isascii() else _NOT_ASCII.sub(_escaped, text)


def dump_trace(trace: dict) -> str:
    """A trace as the JSON paperpool writes: two-space indents, one event or edge a line,
    nothing a terminal would act on written raw (`trace import` writes to standard output)."""
    lines = ["{"]
    items = list(trace.items())
    for position, (key, value) in enumerate(items):
        comma = "," if position < len(items) - 1 else ""
        if key in ("events", "edges") and value:
            body = ",\n".join("    " + json.dumps(item, ensure_ascii=False) for item in value)
            lines.append(f'  "{key}": [\n{body}\n  ]{comma}')
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    return inert("\n".join(lines) + "\n}\n")
