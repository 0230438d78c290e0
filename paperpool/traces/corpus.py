"""A corpus of traces: what `trace metrics`, `export` and `summary` read.

An input is a trace file, a folder (every trace file in it, recursively), a glob pattern,
or a JSON Lines file holding one trace per line (how RL frameworks dump rollouts), plain
or compressed with gzip or zstd. Records are yielded one at a time and never all kept,
so that memory stays bounded whatever the corpus's size: a JSON Lines file is read a line
at a time, through the decompressor when it is compressed.

A file that cannot be read, or a line too long, is a record with a problem instead of
bytes, so that one bad file is one invalid row and the corpus goes on.
"""

from __future__ import annotations

import glob
import io
import os
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from paperpool.files import walk
from paperpool.files.problems import PaperpoolError, name_problem, utf8_name

from .limits import LINE_CHARGE, RATIO_FREE, CorpusTooLarge, Limits, TooCompressed, default
from .loading import TraceUnreadable, read_bytes
from .schema import printable

WHOLE = (".json",)  # one trace per file
LINES = (".jsonl", ".ndjson")  # one trace per line
COMPRESSED = {".gz": "gzip", ".zst": "zstd"}
SUFFIXES_SAID = ".json, .jsonl or .ndjson, each optionally .gz or .zst"
READ_BUFFER = 1 << 20  # a line of a corpus is some 10 KB: read a line at a time through 8 KB, it is copied piece by piece


@dataclass(frozen=True)
class Record:
    """One trace of the corpus: its bytes, or why it could not be read."""

    file: str
    line: int | None  # the line of a JSON Lines file; None for a file holding one trace
    data: bytes | None
    problem: str | None = None

    @property
    def label(self) -> str:
        """How problem lines name it: FILE, or FILE:LINE."""
        shown = printable(self.file)
        return shown if self.line is None else f"{shown}:{self.line}"


def kind(path: Path) -> tuple[bool, str | None] | None:
    """(one trace per line?, compression) of a corpus file by its name, or None when
    the name is no trace file's."""
    suffixes = [suffix.lower() for suffix in path.suffixes[-2:]]
    compression = COMPRESSED.get(suffixes[-1]) if suffixes else None
    if compression:
        suffixes = suffixes[:-1]
    if not suffixes:
        return None
    if suffixes[-1] in LINES:
        return True, compression
    if suffixes[-1] in WHOLE:
        return False, compression
    return None


def expand(inputs: Iterable[str]) -> list[Path]:
    """The files the inputs name, in order, each once: a file as given, a folder's trace
    files (recursively, by name, hidden ones and symbolic links left out), a pattern's
    matches. An input that names nothing is an error."""
    found: list[Path] = []
    for given in inputs:
        path = Path(given)
        if given and os.path.lexists(path):
            found += _folder(path) if path.is_dir() else [_utf8(path)]
        elif glob.has_magic(given):
            matches = _matches(given)
            if not matches:
                raise PaperpoolError(
                    f"{printable(given)}: the pattern matches no file; check it (quote it, so that "
                    "paperpool expands it rather than the shell)"
                )
            for match in matches:
                found += _folder(match) if match.is_dir() else [match] if kind(match) else []
        else:
            raise PaperpoolError(
                f"{printable(given)}: no such file or folder; name trace files ({SUFFIXES_SAID}), "
                "folders of them, or a glob pattern"
            )
    seen: set[Path] = set()
    unique = [path for path in found if not (path.resolve() in seen or seen.add(path.resolve()))]
    if not unique:
        raise PaperpoolError(f"{', '.join(printable(i) for i in inputs)}: no trace files there ({SUFFIXES_SAID})")
    return unique


def _matches(pattern: str) -> list[Path]:
    """The paths a glob pattern matches, sorted, as glob.glob would give them but never
    through a link to a folder (** over a folder that links to itself would go on for
    ever), never a link to a file and never a hidden one, as in a folder."""
    parts = Path(pattern).parts
    fixed = next(k for k, part in enumerate(parts) if glob.has_magic(part))
    root = Path(*parts[:fixed]) if fixed else Path()
    found = []
    for match in root.glob(str(Path(*parts[fixed:]))):
        # a linked file is left out, as a folder's are: a pattern reaches no further than a folder
        if not any(part.startswith(".") for part in match.relative_to(root).parts) and not match.is_symlink():
            found.append(_utf8(match))
    return sorted(found)


def _folder(folder: Path) -> list[Path]:
    return [_utf8(path) for path in walk.files(folder, hidden=False) if kind(path) and not path.is_symlink()]


def _utf8(path: Path) -> Path:
    """A trace file paperpool can name in its rows, pages and messages: one whose name
    is not UTF-8 is refused, before anything is read."""
    if not utf8_name(path):
        raise PaperpoolError(name_problem(str(path), "rename it with UTF-8 characters (nothing was read)"))
    return path


class Tally:
    """The bytes (decompressed) and lines of a corpus read so far, against its limits:
    CorpusTooLarge at the line that crosses one. And its compressed files' bytes read and
    given, whose ratio is held to the limit past the first RATIO_FREE given in all: a
    corpus of many small files gets that allowance once, not once a file."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.bytes = 0
        self.lines = 0
        self.compressed_read = 0
        self.compressed_given = 0

    def expands(self) -> bool:
        """Whether the compressed files give more than their ratio allows, so far."""
        ratio = self.limits.compression_ratio
        return self.compressed_given > max(RATIO_FREE, ratio * self.compressed_read)

    def add(self, file: str, line: int, size: int, lines: int = 1) -> None:
        """`lines` more lines read (the first of them is `line` of `file`), `size` bytes in all."""
        self.lines += lines
        self.bytes += size
        limits = self.limits
        if self.lines > limits.corpus_lines:
            raise CorpusTooLarge(
                file, line + lines - (self.lines - limits.corpus_lines), "lines", limits.corpus_lines, "corpus_lines", limits
            )
        if self.bytes > limits.corpus_bytes:
            raise CorpusTooLarge(file, line + lines - 1, "bytes", limits.corpus_bytes, "corpus_bytes", limits)


def records(paths: Iterable[Path], limits: Limits | None = None, tally: Tally | None = None) -> Iterator[Record]:
    """Every trace of the files, in order, one at a time; CorpusTooLarge past the
    corpus's limits (`tally`: what was read before, of the same corpus)."""
    limits = limits or default()
    tally = tally or Tally(limits)
    max_bytes = limits.trace_bytes
    for path in paths:
        lines, compression = kind(path) or (False, None)
        try:
            if lines:
                yield from _lines(path, compression, max_bytes, tally)
                continue
            if compression:
                with _open(path, compression, tally) as handle:
                    data = _read(handle, max_bytes + 1, str(path), 1, limits)
                found = _sized(str(path), None, data, max_bytes)
            else:
                found = Record(str(path), None, read_bytes(path, max_bytes, f" ({_SETTING}trace_bytes)"))
            tally.add(str(path), 1, len(found.data or b""))
            yield found
        except TraceUnreadable as exc:
            yield Record(str(path), None, None, exc.findings[0].message)
        except (OSError, EOFError, ValueError) as exc:  # unreadable, or a corrupt compressed stream
            yield _unreadable(str(path), None, exc)


def within_limits(paths: Iterable[Path], limits: Limits | None = None) -> None:
    """CorpusTooLarge or TooCompressed, as records() raises them, when the files together
    are past the corpus's limits: read once, one line at a time, nothing kept (for an engine
    whose workers read the files apart, such as Ray's)."""
    for _ in records(paths, limits):
        pass


def _lines(path: Path, compression: str | None, max_bytes: int, tally: Tally) -> Iterator[Record]:
    number = 0
    with _open(path, compression, tally) as handle:
        while True:
            try:
                line = _read(handle, max_bytes + 1, str(path), number + 1, tally.limits, handle.readline)
            except (OSError, EOFError, ValueError) as exc:  # the lines before a cut or corrupt part are read
                yield _unreadable(str(path), number + 1, exc)
                return
            if not line:
                return
            number += 1
            size = len(line)
            if size > max_bytes and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest of it, unread (but counted)
                    line = _read(handle, 1 << 20, str(path), number, tally.limits, handle.readline)
                    size += len(line)
                    if size > tally.limits.corpus_bytes:
                        break
                tally.add(str(path), number, size)
                yield _over(str(path), number, max_bytes)
                continue
            tally.add(str(path), number, size)
            if compression and size < LINE_CHARGE:
                # a line of a compressed file counts as LINE_CHARGE bytes against the ratio: 3 kB of
                # gzip gave a million empty lines, each an invalid trace to report, inside the allowance
                tally.compressed_given += LINE_CHARGE - size
                if tally.expands():
                    raise TooCompressed(str(path), number, tally.limits)
            if line.strip():
                yield Record(str(path), number, line)


def _sized(file: str, line: int | None, data: bytes, max_bytes: int) -> Record:
    if len(data) > max_bytes:
        return Record(file, line, None, f"the trace is over the {max_bytes:,}-byte limit ({_SETTING}trace_bytes)")
    return Record(file, line, data)


_SETTING = "traces.limits."


def _read(handle, size: int, file: str, line: int, limits: Limits, how=None) -> bytes:
    """handle.read(size), or `how`(size); TooCompressed at `line` of `file` when the
    decompressor finds the file expanding past its limit."""
    try:
        return (how or handle.read)(size)
    except _Expands:
        raise TooCompressed(file, line, limits) from None


def _open(path: Path, compression: str | None, tally: Tally | None = None):
    """The file, read through its decompressor when it is compressed, which raises
    _Expands when the corpus's compressed files expand past their limit (`tally`)."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise OSError(0, "not a plain file (a device, pipe or socket)")
    if compression:
        return io.BufferedReader(_Decompressed(path, compression, tally), READ_BUFFER)
    return path.open("rb", buffering=READ_BUFFER)


class _Expands(Exception):
    """A compressed file giving more bytes per byte read than its ratio allows: caught by
    _read, which knows the line; no OSError or ValueError, which would make it a record."""


class _Decompressed(io.RawIOBase):
    """A compressed file's bytes, each decompressed byte given before any error: a stream
    in another format raises ValueError, one cut off inside a frame (a gzip member, a
    zstd frame) EOFError, once the lines before the cut are read. (gzip's own reader loses
    what it decompressed in the read that meets the cut; python-zstandard's ends quietly
    at a cut.) When the corpus's compressed files give more than their ratio allows
    (Tally.expands), it raises _Expands: a few kilobytes may expand to gigabytes."""

    # Compressed bytes given at a time, so that what one feed expands to stays bounded
    # before the ratio is checked: deflate expands at most some 1,000 times (8 MB), zstd's
    # blocks of one repeated byte 40,000 times (3 bytes for 128 KiB: 40 MB a kilobyte).
    FEED: ClassVar[dict[str, int]] = {"gzip": 8 << 10, "zstd": 1 << 10}

    def __init__(self, path: Path, compression: str, tally: Tally | None = None):
        if compression == "gzip":
            self._new, self._errors = lambda: zlib.decompressobj(wbits=31), (zlib.error,)
        else:
            import zstandard

            self._new, self._errors = zstandard.ZstdDecompressor().decompressobj, (zstandard.ZstdError,)
        self._feed, self._tally = self.FEED[compression], tally
        self._file = path.open("rb")
        self._frame = self._new()
        self._in_frame = False  # a frame has begun and its end has not come yet
        self._out = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._out:
            given = b""
            if self._frame.eof:  # a file may hold several frames: the next starts after this one
                given = self._frame.unused_data
                self._frame, self._in_frame = self._new(), False
            if not given:
                given = self._file.read(self._feed)
                if self._tally is not None:
                    self._tally.compressed_read += len(given)
            if not given:
                if self._in_frame:
                    raise EOFError("the compressed stream ends in the middle: the file is truncated")
                return 0
            self._in_frame = True
            try:
                self._out = memoryview(self._frame.decompress(given))
            except self._errors as exc:
                raise ValueError(f"not the compression its name says ({exc})") from None
            if self._tally is not None:
                self._tally.compressed_given += len(self._out)
                if self._tally.expands():
                    raise _Expands()
        size = min(len(buffer), len(self._out))
        buffer[:size] = self._out[:size]
        self._out = self._out[size:]
        return size

    def close(self) -> None:
        self._file.close()
        super().close()


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


@dataclass(frozen=True)
class Lines:
    """Whole lines of a plain JSON Lines file, by where they are in it: a worker reads and
    splits them, so that this process only finds where the lines end, some megabytes at
    a time, rather than reading, copying and handing over a line at a time."""

    file: str
    first: int  # the number of the first line
    offset: int
    length: int
    max_bytes: int

    def records(self) -> Iterator[Record]:
        """Its records, as records() gives them (a blank line is none; a line over the
        limit is one with a problem)."""
        try:
            with _open(Path(self.file), None) as handle:
                handle.seek(self.offset)
                data = handle.read(self.length)
        except OSError as exc:  # the file went, or changed, since its lines were found
            yield _unreadable(self.file, self.first, exc)
            return
        number, at = self.first, 0
        while at < len(data):
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end + 1
            if end - at - (data[end - 1] == NEWLINE) > self.max_bytes:  # its length without the newline
                yield _over(self.file, number, self.max_bytes)
            elif data[at] not in _WHITE_SPACE or data[at:end].strip():  # a line is rarely blank: no copy to strip
                yield Record(self.file, number, data[at:end])
            number += 1
            at = end


NEWLINE = ord("\n")
_WHITE_SPACE = b" \t\n\r\x0b\x0c"  # what bytes.strip() removes


BLOCK = 4 << 20  # bytes of a JSON Lines file a worker is handed at a time,
MAX_LINES = 1000  # and at most this many lines (some 400 rollouts of 50 events fill a block)


def pieces(paths: Iterable[Path], size: int, limits: Limits | None = None) -> Iterator[list[Record] | Lines]:
    """The corpus as the workers take it, in order: each plain JSON Lines file in blocks
    of whole lines (Lines), the other records in lists of `size`; CorpusTooLarge past
    the corpus's limits."""
    limits = limits or default()
    max_bytes = limits.trace_bytes
    tally = Tally(limits)
    pending: list[Record] = []
    held = 0  # the bytes of the records pending
    for path in paths:
        lines, compression = kind(path) or (False, None)
        if not lines or compression:  # a compressed file is read a line at a time, as its stream allows
            for record in records([path], limits, tally):
                pending.append(record)
                held += len(record.data or b"")
                if len(pending) >= size or held >= BLOCK:  # a few long lines are a piece too
                    yield pending
                    pending, held = [], 0
            continue
        if pending:
            yield pending
            pending, held = [], 0
        try:
            with _open(path, None) as handle:
                yield from _blocks(str(path), handle, max_bytes, tally)
        except (OSError, EOFError, ValueError) as exc:  # as records() says it, after the lines found
            yield [_unreadable(str(path), None, exc)]
    if pending:
        yield pending


def _blocks(file: str, handle, max_bytes: int, tally: Tally) -> Iterator[list[Record] | Lines]:
    """Where the file's lines are, a block of whole lines at a time; a line over the limit
    is a record with a problem, never read whole."""
    buffer = bytearray(BLOCK)
    number, offset = 1, 0
    while True:
        handle.seek(offset)
        size = handle.readinto(buffer)
        if not size:
            return
        cut = size if size < BLOCK else buffer.rfind(b"\n", 0, size) + 1  # a short read: the file's end
        if cut:
            lines = _newlines(buffer, cut)
            if lines > MAX_LINES:  # short lines: a block's rows, not its bytes, would fill the memory
                cut, lines = _after_lines(buffer, MAX_LINES), MAX_LINES
            ends = cut == size and buffer[cut - 1] != NEWLINE  # the file's last line, without a newline
            tally.add(file, number, cut, lines + ends)
            yield Lines(file, number, offset, cut, max_bytes)
            number += lines
            offset += cut
            continue
        length = _line_length(handle, offset, buffer)  # one line longer than a block
        tally.add(file, number, length - 1)
        if length - 1 > max_bytes:
            yield [_over(file, number, max_bytes)]
        else:
            yield Lines(file, number, offset, length, max_bytes)
        number += 1
        offset += length


def _newlines(buffer: bytearray, end: int) -> int:
    """The newlines in buffer[:end], counted by numpy (six times bytes.count's speed: this
    process counts every byte of a corpus while the workers measure it)."""
    return int(np.count_nonzero(np.frombuffer(buffer, dtype=np.uint8, count=end) == NEWLINE))


def _after_lines(buffer: bytearray, count: int) -> int:
    """Where the first `count` lines of `buffer` end (it holds more)."""
    at = 0
    for _ in range(count):
        at = buffer.find(b"\n", at) + 1
    return at


def _line_length(handle, offset: int, buffer: bytearray) -> int:
    """The length of the line at `offset`, its newline included (the file's end may end it)."""
    handle.seek(offset)
    length = 0
    while size := handle.readinto(buffer):
        end = buffer.find(b"\n", 0, size)
        if end >= 0:
            return length + end + 1
        length += size
    return length + 1


def _unreadable(file: str, line: int | None, exc: Exception) -> Record:
    return Record(file, line, None, f"cannot read the file: {_reason(exc)}; check that it is complete")


def _over(file: str, number: int, max_bytes: int) -> Record:
    return Record(file, number, None, f"the line is over the {max_bytes:,}-byte limit for a trace ({_SETTING}trace_bytes)")


def where(piece: list[Record] | Lines) -> str:
    """Where a piece begins, as problem lines name a record: FILE:LINE, or FILE."""
    return f"{printable(piece.file)}:{piece.first}" if isinstance(piece, Lines) else piece[0].label


def unpack(piece: list[Record] | Lines) -> list[Record]:
    """A piece's records (in a worker)."""
    return list(piece.records()) if isinstance(piece, Lines) else piece
