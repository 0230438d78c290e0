"""`paperpool trace import`: the one front door for traces recorded elsewhere.

Each input format is a TraceFormat that a module declares and registers through the
entry-point group `paperpool.trace_formats` (pyproject.toml), as the registry's sections
are: this module names no format. A format says how to recognise its files and converts
one or more of them into orchestration traces, each already validated.

An input that converts to a trace without events is refused, naming what the format
expected and what the input held: an empty trace written with exit status 0 is how a
wrong --from (or spans of conventions the importer does not read) would go unnoticed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from paperpool.files.problems import PaperpoolError, plural, printable

GROUP = "paperpool.trace_formats"
# The files one import writes, as trace export's partitions: an export whose every span
# is a trace of its own would make a file each (5,000 spans in 1 MB: 5,000 files).
MAX_FILES = 1_000
NAME_FIELDS = ("name", "index", "trace_id")  # what --name may use
DEFAULT_NAME = "{name}"


class Unreadable(PaperpoolError):
    """An input a format cannot read: one line per problem, each naming the file and where."""

    def __init__(self, lines: list[str]):
        super().__init__(lines[-1])
        self.lines = lines

    @classmethod
    def capped(cls, lines: list[str], file: str, all_found: bool = False) -> Unreadable:
        """The problem lines of `file`, at most MOST_PROBLEMS + 1 of them shown: the first
        MOST_PROBLEMS, then, when there was one more, a line saying so (as trace validate
        does). `all_found`: every problem was found (a reader that does not stop), so the
        line counts them."""
        from .schema import MOST_PROBLEMS, printable

        if len(lines) <= MOST_PROBLEMS:
            return cls(lines)
        if all_found:
            more = (
                f"{printable(file)}: {len(lines):,} problems (the first {MOST_PROBLEMS} above): fix these, often one "
                "mistake repeated, and import it again"
            )
            return cls(lines[:MOST_PROBLEMS] + [more])
        more = (
            f"{printable(file)}: more than {plural(MOST_PROBLEMS, 'problem')} (the first {MOST_PROBLEMS} above; past "
            "them problems are not looked for: fix these, often one mistake repeated, and import it again)"
        )
        return cls(lines[:MOST_PROBLEMS] + [more])


@dataclass
class Imported:
    """One converted trace, with the readable name its file is given."""

    name: str  # the run's own name (the root span's, the log's), not an id
    trace: dict
    source: Path
    trace_id: str = ""


@dataclass
class ImportOptions:
    topology: str | None = None
    trace_id: str | None = None  # convert only this trace of an export holding several


@dataclass(frozen=True)
class TraceFormat:
    name: str  # the value of --from
    title: str  # what it is, for --help and messages
    expects: str  # what an input of this format holds, for the "no events" message
    detect: Callable[[Path, str], bool]  # (path, the file's first 64 KiB as text) -> whether it is of this format
    convert: Callable[[list[Path], ImportOptions], list[Imported]]
    describe: Callable[[list[Path]], str] = field(default=lambda paths: "")  # what an input held, when it gave no events


def formats() -> dict[str, TraceFormat]:
    """The registered formats, by name, in the order their packages declare them."""
    found = {}
    for entry in metadata.entry_points(group=GROUP):
        declared = entry.load()
        found[declared.name] = declared
    return found


def registered(name: str) -> TraceFormat | None:
    """The registered format of that name, or None (also when its module cannot be loaded):
    for a format to ask another about a file, without importing its module."""
    for entry in metadata.entry_points(group=GROUP, name=name):
        try:
            declared = entry.load()
        except (ImportError, AttributeError):
            continue
        if declared.name == name:
            return declared
    return None


def detect(paths: list[Path], known: dict[str, TraceFormat]) -> TraceFormat:
    """The format of the inputs, from the first one's content; PaperpoolError when none reads it."""
    refuse_compressed(paths)
    head = _head(paths[0])
    for trace_format in known.values():
        if trace_format.detect(paths[0], head):
            return trace_format
    raise PaperpoolError(f"{paths[0]}: not a trace export paperpool recognises; name its format with --from ({', '.join(known)})")


def recognise(path: Path) -> TraceFormat | None:
    """The registered format whose detect accepts the file, or None (also when it cannot
    be read): for `trace validate` to name the importer of a file that is no trace. A
    format whose module cannot be loaded (an entry point left behind by an older
    install) is passed over: `trace import` is where it gets reported."""
    try:
        head = _head(path)
    except PaperpoolError:
        return None
    for entry in metadata.entry_points(group=GROUP):
        try:
            declared = entry.load()
        except (ImportError, AttributeError):
            continue
        if declared.detect(path, head):
            return declared
    return None


def import_traces(paths: list[Path], trace_format: TraceFormat, options: ImportOptions) -> tuple[list[Imported], list[Imported]]:
    """(the traces of the inputs, converted and validated; those passed over). A trace in
    which nothing orchestrates (an OTLP root span starts a trace of its own, so an export
    holds an agent's create_agent, a memory store's operations, A2A transport spans beside
    the runs) is passed over where the inputs hold a run; inputs of nothing else are a
    PaperpoolError that says what the format expects."""
    refuse_compressed(paths)
    converted = trace_format.convert(paths, options)
    imported = [item for item in converted if item.trace.get("events")]
    if not imported:
        where = converted[0].source if converted else paths[0]
        held = trace_format.describe(paths)
        raise PaperpoolError(
            f"{where}: converted to a trace with no events, so nothing was written; --from "
            f"{trace_format.name} expects {trace_format.expects}{'; the input holds ' + held if held else ''}"
        )
    return imported, [item for item in converted if not item.trace.get("events")]


def plan_outputs(imported: list[Imported], out: Path, pattern: str) -> list[tuple[Path, Imported]]:
    """Where each trace is written: OUT itself for one trace (unless OUT is a folder), else a
    file per trace in the folder OUT, named by the pattern, each name made unique."""
    if len(imported) == 1 and not out.is_dir():
        return [(out, imported[0])]
    refuse_too_many(len(imported), f"-o {out}")
    used: set[str] = set()
    following: dict[str, int] = {}  # per name, the number its next copy may take: none taken is tried again
    planned = []
    for index, item in enumerate(imported, 1):
        stem = fill_name(pattern, {"name": item.name, "index": str(index), "trace_id": item.trace_id})
        stem = _file_stem(stem) or f"trace-{index}"
        unique, n = stem, following.get(stem, 2)
        while unique in used:
            unique, n = f"{stem}-{n}", n + 1
        used.add(unique)
        following[stem] = n
        planned.append((out / f"{unique}.json", item))
    return planned


def refuse_compressed(paths: list[Path]) -> None:
    """An input that is a compressed file (its magic number): one line saying so and what
    to do, not a format's complaint about the bytes it finds (the importers read exports
    as they are written, uncompressed)."""
    from .loading import COMPRESSIONS, TraceUnreadable, compression, read_start

    for path in paths:
        try:
            compressed = compression(read_start(path, 4))
        except TraceUnreadable:  # the format's own reading says why
            continue
        if compressed:
            raise PaperpoolError(
                f"{printable(str(path))}: is a {compressed}-compressed file; trace import reads exports uncompressed: "
                f"decompress it first ({COMPRESSIONS[compressed][1]} {shlex.quote(str(path))}) and import the file it "
                "gives (nothing was written)"
            )


def refuse_too_many(traces: int, where: str) -> None:
    """More traces than the MAX_FILES one import writes: refused before any is written."""
    if traces > MAX_FILES:
        raise PaperpoolError(
            f"{where}: the inputs hold {traces:,} traces, more than the {MAX_FILES:,} files one import "
            "writes; choose one with --trace-id, or split the input and import each part (nothing was "
            "written)"
        )


def fill_name(pattern: str, fields: dict[str, str]) -> str:
    """A --name pattern with its {field}s filled in: only the plain names, no attribute,
    index or format spec (str.format would reach into objects and allocate at will)."""

    def field_value(match: re.Match) -> str:
        if match.group(1) not in fields:
            raise PaperpoolError(
                f"--name {pattern!r}: {{{match.group(1)}}} is not a field; use {', '.join('{' + f + '}' for f in fields)}"
            )
        return fields[match.group(1)]

    if not re.fullmatch(r"(?:[^{}]|\{\w+\})*", pattern):
        raise PaperpoolError(
            f"--name {pattern!r}: write fields as {{name}}, {{index}} or {{trace_id}}, with nothing inside the braces but the name"
        )
    return re.sub(r"\{(\w+)\}", field_value, pattern)


def summary(item: Imported) -> str:
    trace = item.trace
    return f"{plural(len(trace['events']), 'event')}, {plural(len(trace.get('edges') or []), 'edge')}"


def _file_stem(text: str) -> str:
    """A name safe as a file name on every system: letters, digits, dot, dash, underscore."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip(".-")[:80]


def _head(path: Path) -> str:
    """The file's first 64 KiB as text, read only from a plain file (a pipe would block)."""
    from .loading import TraceUnreadable, read_bytes

    try:
        return read_bytes(path)[:65536].decode("utf-8", "replace")
    except TraceUnreadable as exc:
        raise PaperpoolError(f"{path}: {exc.findings[0].message}") from None
