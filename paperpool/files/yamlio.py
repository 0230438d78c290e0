"""Strict YAML reading and safe writing for pool files.

pyyaml's safe_load is too forgiving for data that people edit by hand: it keeps the
last of two duplicate keys, reads `yes` as True and expands aliases without limit.
This reader composes the node tree itself so that it can refuse those cases, and it
remembers the line of every field so that validation can point at it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import functools
import glob
import hashlib
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from yaml.nodes import ScalarNode

from .oserrors import explain, shown_path
from .problems import PaperpoolError

MAX_FILE_BYTES = 1_000_000  # an entry is a few KB; anything this big is a mistake or an attack
MAX_DEPTH = 64  # mappings and lists inside each other; a record nests two or three, the registry five
TOO_DEEP = (
    f"YAML nesting is deeper than {MAX_DEPTH} levels; a pool file nests a few levels: remove the extra brackets or indentation"
)

_PLAIN_TAGS = {"tag:yaml.org,2002:" + name for name in ("str", "int", "float", "bool", "null", "timestamp", "map", "seq")}


class YamlProblem(Exception):
    """A file that cannot be read as pool data; carries the line it concerns."""

    def __init__(self, line: int, message: str, field: str = ""):
        super().__init__(message)
        self.line = line
        self.message = message
        self.field = field


# libyaml's parser when present (pure-Python composition is ten times slower).
_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BaseLoader):
    """YAML 1.2-style booleans: only true/false."""


# Drop YAML 1.1's yes/no/on/off booleans so that `is_rl: yes` stays the word "yes".
_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


@dataclass
class Document:
    """A parsed YAML file: its data and the line of each field path."""

    path: Path
    data: object
    lines: dict[tuple, int] = field(default_factory=dict)
    raw: dict[tuple, str] = field(default_factory=dict)
    digest: bytes = b""  # file_digest of the bytes it was read from (load_yaml), for caches keyed by content
    dates: list[tuple] = field(default_factory=list)  # the paths of the values YAML read as dates or times

    def line(self, *path) -> int:
        """The line of a field, or of its nearest enclosing field, or 1."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return 1


def read_text(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Read a UTF-8 text file, refusing what is not a plain file, too big, not UTF-8, or
    carries a BOM."""
    return decode_text(read_bytes(path, max_bytes))


def decode_text(data: bytes) -> str:
    """A file's bytes as text, refusing what is not UTF-8 or carries a BOM."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlProblem(line, f"byte 0x{data[exc.start]:02x} is not UTF-8; save the file as UTF-8") from None
    if text.startswith("\ufeff"):
        raise YamlProblem(1, "file starts with a byte-order mark; save it as UTF-8 without BOM")
    return text


def file_digest(data: bytes) -> bytes:
    """What identifies a file's content: 16 bytes of BLAKE2b (a cache entry is reused only
    for a file whose bytes give the same digest)."""
    return hashlib.blake2b(data, digest_size=16).digest()


def read_bytes(path: Path | str, max_bytes: int) -> bytes:
    """A plain file's bytes, refusing what is not a plain file or is too big. Never reads
    more than `max_bytes` + 1 bytes: a device such as /dev/zero (behind a link, say)
    reports no size and never ends. The file is checked before it is opened (opening a
    named pipe would wait for a writer; opening a device may act on it), with os calls
    rather than a file object: a pool of 10,000 records is 10,000 reads."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise YamlProblem(1, "not a plain file (a device, pipe or socket, or a link to one); give a text file")
    if info.st_size > max_bytes:
        raise YamlProblem(1, f"file is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit; is it the right file?")
    fd = os.open(path, _READ)
    try:
        data = os.read(fd, info.st_size + 1)  # one read for the usual file; a byte more tells if it grew
        if len(data) != info.st_size:  # it changed since stat: read on to its end, or past the limit
            chunks, size = [data], len(data)
            while data and size <= max_bytes:
                data = os.read(fd, max_bytes + 1 - size)
                chunks.append(data)
                size += len(data)
            data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while being read
        raise YamlProblem(1, f"file is over the {max_bytes:,}-byte limit; is it the right file?")
    return data


_READ = os.O_RDONLY | getattr(os, "O_BINARY", 0)  # no newline translation on Windows

RECORD_HINT = "write the record's fields as `field: value` lines"


def parse_yaml(text: str, path: Path, empty_hint: str = RECORD_HINT) -> Document:
    """Parse YAML text into a Document, raising YamlProblem with a line on any defect;
    `empty_hint` says what an empty file should hold."""
    if not text.strip():
        raise YamlProblem(1, f"file is empty; {empty_hint}")
    loader = _StrictLoader(text)
    try:
        doc = Document(path, None)
        doc.data = _Builder(doc, loader).build(loader)
        return doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = (exc.problem or str(exc)).strip()
        if "maximum nesting depth" in problem:  # libyaml's own limit, in newer PyYAML, met before paperpool's
            raise YamlProblem(line, TOO_DEEP) from None
        hint = _syntax_hint(problem, text.split("\n")[line - 1] if 0 < line <= text.count("\n") + 1 else "")
        raise YamlProblem(line, f"YAML syntax: {problem}{hint}") from None
    except yaml.YAMLError as exc:
        raise YamlProblem(1, f"YAML syntax: {exc}; check indentation and quoting") from None
    finally:
        loader.dispose()


class _Builder:
    """The document's data, built from the parser's events in one pass (no node tree,
    which libyaml composes recursively: a few hundred kilobytes of `[[[[...` would crash
    the process), remembering each field's line and refusing what pool files must not
    hold: aliases, tags, merge keys, duplicate fields, nesting deeper than MAX_DEPTH.

    build() is the hot loop of reading a pool (a million events at 10,000 records): the
    common events (a plain field name, a plain or quoted value) are handled inline with
    local names, and everything unusual (a tag, a word YAML could read as something other
    than text, an alias, a second document) goes through the general code below."""

    def __init__(self, doc: Document, loader):
        self.doc, self.loader = doc, loader
        # open collections: [value, path, the key awaiting its value (mappings), that key's path]
        self.stack: list[list] = []
        self.documents = 0
        self.result = None

    def build(self, loader):
        lines, raw, stack = self.doc.lines, self.doc.raw, self.stack
        get_event = loader.get_event
        scalar_event, resolvable, no_key, text = yaml.ScalarEvent, _RESOLVABLE, _NO_KEY, _STR
        mapping_start, sequence_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
        ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
        while True:
            event = get_event()
            kind = type(event)
            if kind is not scalar_event:
                if kind in ends:
                    done = stack.pop()[0]
                    if not stack:
                        self.result = done
                    elif type(stack[-1][0]) is list:
                        stack[-1][0].append(done)
                    else:
                        top = stack[-1]
                        top[0][top[2]] = done
                        top[2] = no_key
                elif (
                    (kind is mapping_start or kind is sequence_start)
                    and event.tag is None
                    and stack
                    and len(stack) < MAX_DEPTH
                    and (type(stack[-1][0]) is list or stack[-1][2] is not no_key)
                ):
                    top = stack[-1]
                    if type(top[0]) is list:
                        path = top[1] + (len(top[0]),)
                        lines[path] = event.start_mark.line + 1  # an item's line is its own
                    else:
                        path = top[3]
                    stack.append([{} if kind is mapping_start else [], path, no_key, None])
                elif self.other(event):
                    return self.result
                continue
            value = event.value
            if event.tag is None and event.implicit[0] and value[:1] in resolvable:
                known = _plain(value)  # a number, a boolean, null or a date, as the text implies
                if known is None:  # anything else (a merge key, '=', a bad date): the general code
                    tag = _tag(event)
                elif stack and (type(stack[-1][0]) is list or stack[-1][2] is not no_key):
                    top = stack[-1]
                    if type(top[0]) is list:
                        path = top[1] + (len(top[0]),)
                        lines[path] = event.start_mark.line + 1
                        raw[path] = value
                        top[0].append(known[1])
                    else:
                        raw[top[3]] = value
                        top[0][top[2]] = known[1]
                        top[2] = no_key
                    continue
                else:
                    tag = known[0]
            else:
                # the tag `_tag` would give, without resolving text that no resolver can claim
                tag = text if event.tag is None else _tag(event)
            if not stack:
                self.scalar(event, tag, ())
                continue
            top = stack[-1]
            container = top[0]
            if type(container) is list:
                path = top[1] + (len(container),)
                lines[path] = event.start_mark.line + 1  # an item's line is its own
                if tag is not text:
                    self.scalar(event, tag, path)
                    continue
                raw[path] = value
                container.append(value)
            elif top[2] is no_key:  # a field name
                if tag is not text:
                    self.key(event, top, tag)
                    continue
                path = top[1] + (value,)
                if value in container:
                    self.duplicate(event, top, value)
                lines[path] = event.start_mark.line + 1
                top[2], top[3] = value, path
            else:  # a field's value; its line is its name's
                if tag is not text:
                    self.scalar(event, tag, top[3])
                    continue
                raw[top[3]] = value
                container[top[2]] = value
                top[2] = no_key

    def other(self, event) -> bool:
        """Any event but a scalar; True at the end of the stream."""
        kind = type(event)
        if kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            self.open(event, {} if kind is yaml.MappingStartEvent else [])
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            self.attach(self.stack.pop()[0])
        elif kind is yaml.AliasEvent:
            raise YamlProblem(
                event.start_mark.line + 1,
                f"YAML alias '*{event.anchor}' is not allowed in pool files; write the value out in full",
                self.field(),
            )
        elif kind is yaml.StreamEndEvent:
            return True
        elif kind is yaml.DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                raise YamlProblem(
                    event.start_mark.line + 1,
                    "YAML syntax: a second document starts here (a line '---'); "
                    "a file holds one document: remove the '---' line, or split the file",
                )
        return False

    def field(self, extra: tuple = ()) -> str:
        return _field(self.path() + extra)

    def path(self) -> tuple:
        """The path of the value the parser is at."""
        if not self.stack:
            return ()
        value, path, key, _ = self.stack[-1]
        return path + ((len(value),) if isinstance(value, list) else (key,) if key is not _NO_KEY else ())

    def open(self, event, value) -> None:
        line = event.start_mark.line + 1
        if self.stack and self.stack[-1][2] is _NO_KEY and isinstance(self.stack[-1][0], dict):
            raise YamlProblem(line, "a field name must be a plain word, not a list or mapping; write `name: value`", self.field())
        default = "tag:yaml.org,2002:map" if isinstance(value, dict) else "tag:yaml.org,2002:seq"
        if event.tag is not None and event.tag not in (default, "!"):
            raise YamlProblem(line, f"YAML tag '{_shown_tag(event.tag)}' is not allowed; write a plain value", self.field())
        if len(self.stack) >= MAX_DEPTH:
            raise YamlProblem(line, TOO_DEEP)
        path = self.path()
        if path and isinstance(path[-1], int):  # a field's line is its key's (set in build), an item's its own start
            self.doc.lines[path] = line
        self.stack.append([value, path, _NO_KEY, None])

    def scalar(self, event, tag: str, path: tuple) -> None:
        """A value that is not plain text: a number, a boolean, null, a date, or a tag."""
        line = event.start_mark.line + 1
        if tag not in _PLAIN_TAGS:
            raise YamlProblem(line, f"YAML tag '{_shown_tag(tag)}' is not allowed; write a plain value", _field(path))
        self.doc.raw[path] = event.value
        if tag == _TIMESTAMP:
            self.doc.dates.append(path)
        self.attach(event.value if tag == _STR else _construct(self.loader, tag, event, line, path))

    def key(self, event, top: list, tag: str) -> None:
        """A field name that is not plain text (or may not be): refused if it is a merge key or tagged."""
        line = event.start_mark.line + 1
        if tag == "tag:yaml.org,2002:merge":
            raise YamlProblem(
                line, "YAML merge key '<<' is not allowed in pool files; write the fields out in full", _field(top[1])
            )
        if tag not in _PLAIN_TAGS:
            raise YamlProblem(
                line, f"a field name with YAML tag '{_shown_tag(tag)}' is not allowed; write a plain word", _field(top[1])
            )
        key = event.value  # as written: `1.0:` is the field "1.0"
        if key in top[0]:
            self.duplicate(event, top, key)
        self.doc.lines[top[1] + (key,)] = line
        top[2], top[3] = key, top[1] + (key,)

    def duplicate(self, event, top: list, key: str) -> None:
        first = self.doc.lines[top[1] + (key,)]
        raise YamlProblem(
            event.start_mark.line + 1,
            f"duplicate field '{key}' (first on line {first}); keep one of them",
            _field(top[1] + (key,)),
        )

    def attach(self, value) -> None:
        if not self.stack:
            self.result = value
            return
        top = self.stack[-1]
        if isinstance(top[0], list):
            top[0].append(value)
        else:
            top[0][top[2]] = value
            top[2] = _NO_KEY


_NO_KEY = object()  # a mapping waiting for its next key, not for a value
_STR = "tag:yaml.org,2002:str"


def _tag(event) -> str:
    """A scalar's tag: its own, or the one its plain text implies (`3` an int)."""
    if event.tag not in (None, "!"):
        return event.tag
    return _implied_tag(event.value) if event.implicit[0] else _STR


@functools.lru_cache(maxsize=8192)  # the same words come back in every record: R1, true, 2025
def _implied_tag(value: str) -> str:
    return _RESOLVER.resolve(ScalarNode, value, (True, False))


_RESOLVER = _StrictLoader("")  # only its resolver is used
# The first characters of the plain scalars a resolver may read as something other than
# text (digits, signs, t/f, n/N/~, '' for null, '<' for merge, '=', ...): plain text starting
# with any other character is text, as resolve() itself decides by the first character.
_RESOLVABLE = frozenset(
    first for first, resolvers in _StrictLoader.yaml_implicit_resolvers.items() if first is not None and resolvers
)


# A whole number is read from at most this many characters: YAML reads 0x and 5,000 hex
# digits as a number of 6,021 digits, which Python cannot write out again (its limit is
# 4,300), so every message and cache that showed it ended in an internal error.
MAX_INT_CHARS = 100


def _construct(loader, tag: str, event, line: int, path: tuple):
    """A plain scalar that is not a string: a number, a boolean, null or a date."""
    if tag.endswith(":int") and len(event.value) > MAX_INT_CHARS:
        raise YamlProblem(
            line,
            f"a whole number written with {len(event.value):,} characters, over the {MAX_INT_CHARS} paperpool reads; "
            "write a smaller number, or quote it to make it text",
            _field(path),
        )
    try:
        return _scalar(tag, event.value)
    except _NotScalar:
        pass
    except (ValueError, KeyError, AttributeError, yaml.YAMLError):
        raise _unreadable(tag, event.value, line, path) from None
    node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, KeyError, AttributeError, yaml.YAMLError):
        # KeyError and AttributeError: pyyaml's answer to `!!bool foo` and `!!timestamp foo`
        raise _unreadable(tag, event.value, line, path) from None


def _unreadable(tag: str, value: str, line: int, path: tuple) -> YamlProblem:
    if tag.endswith(":timestamp"):
        return YamlProblem(line, f"'{value}' {NOT_A_REAL_DATE}", _field(path))
    return YamlProblem(line, f"'{value}' is not a value YAML can read; correct it (dates are YYYY-MM-DD)", _field(path))


# A day as every file of a pool writes it: YYYY-MM-DD, and a day of the calendar (not
# 2026-02-30, not 0000-00-00, which fit the pattern; not 20260101 or 2026-W01-1, which
# date.fromisoformat also reads).
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
NOT_A_REAL_DATE = "is not a real date; correct it (dates are YYYY-MM-DD)"


def calendar_day(text: str) -> dt.date | None:
    """`text` as a day when it is one written YYYY-MM-DD, else None."""
    if not DAY.fullmatch(text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:  # fits the pattern, but the calendar has no such day
        return None


class _NotScalar(Exception):
    """A tag whose values are built by the loader itself (a mapping or list tag on a scalar)."""


# The constructors of the scalar tags, called directly (construct_object would also
# remember every node of the file).
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_SCALAR_CONSTRUCTORS = {
    tag: yaml.SafeLoader.yaml_constructors[tag]
    for tag in ("tag:yaml.org,2002:" + name for name in ("int", "float", "bool", "null", "timestamp"))
}


def _scalar(tag: str, value: str):
    """A scalar built from its text. Numbers, booleans and null may be shared between
    records (one object for every `2025`); a date never is: a YAML writer would write the
    second place holding the same date object as an alias."""
    if tag == _TIMESTAMP:
        return _SCALAR_CONSTRUCTORS[tag](_RESOLVER, ScalarNode(tag, value))
    return _shared_scalar(tag, value)


@functools.lru_cache(maxsize=8192)
def _shared_scalar(tag: str, value: str):
    constructor = _SCALAR_CONSTRUCTORS.get(tag)
    if constructor is None:
        raise _NotScalar
    if tag.endswith(":int") and len(value) > MAX_INT_CHARS:  # refused, with its line, by _construct
        raise ValueError("too long a number")
    return constructor(_RESOLVER, ScalarNode(tag, value))


@functools.lru_cache(maxsize=8192)
def _plain(value: str) -> tuple[str, object] | None:
    """A plain scalar's tag and value when its text implies text, a number, a boolean or
    null, and reads as one (`3`, `true`, `null`, or text such as `NA`); None for anything
    else (a date, which is never shared; '<<', '='; what does not read), which the general
    code builds or refuses with its line."""
    tag = _implied_tag(value)
    if tag == _STR:
        return tag, value
    if tag not in _SCALAR_CONSTRUCTORS or tag == _TIMESTAMP:
        return None
    try:
        return tag, _shared_scalar(tag, value)
    except (ValueError, KeyError, AttributeError, yaml.YAMLError):
        return None


def check_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before the node tree is built: libyaml's
    composer recurses in C, and a few hundred kilobytes of `[[[[...` would crash the
    process. The parser's events come one at a time, without recursion."""
    depth = 0
    for event in yaml.parse(text, Loader=_BaseLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlProblem(event.start_mark.line + 1, TOO_DEEP)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _syntax_hint(problem: str, line_text: str) -> str:
    """How to fix the usual hand-editing mistakes behind libyaml's terse messages."""
    if "\\t" in problem or "tab" in problem or "\t" in line_text:
        return "; the line holds a tab: indent with spaces"
    if "mapping values are not allowed" in problem:
        return "; a value holding ': ' must be quoted, e.g. notes: 'See also: ...'"
    return "; check indentation and quoting"


def load_yaml(path: Path, max_bytes: int = MAX_FILE_BYTES, empty_hint: str = RECORD_HINT) -> Document:
    data = read_bytes(path, max_bytes)
    doc = parse_yaml(decode_text(data), path, empty_hint)
    doc.digest = file_digest(data)
    return doc


def _field(path: tuple) -> str:
    return ".".join(str(part) for part in path if not isinstance(part, int))


def _shown_tag(tag: str) -> str:
    return tag.replace("tag:yaml.org,2002:", "!!", 1)


_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter: the same text, five times faster


def dump_yaml(data: dict) -> str:
    """Emit a record as block YAML, keeping field order; strings that another YAML
    reader would take for a number, date or boolean are quoted."""
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def write_atomic(path: Path, text: str, shown: str | None = None) -> None:
    """Write `text` to `path`, replacing the regular file there, so that a reader (or a
    crash) sees the old file or the new one, never half of one. `shown` names the output
    in messages (`-o out.csv`); by default its path."""
    _write(path, text, shown, replace=True)


def write_new(path: Path, text: str, shown: str | None = None) -> None:
    """Write a file that must not exist yet, atomically: the complete file is hard-linked
    to the name, which fails (FileExistsError) when the name is taken, even if another
    process took it a moment ago."""
    _write(path, text, shown, replace=False)


@contextlib.contextmanager
def holding_folder(folder: Path) -> Iterator[None]:
    """An exclusive lock on a folder itself (its descriptor), which writes no file into
    it: commands that write into one folder (two builds swapping a site, two trace
    imports) take turns. Without fcntl (Windows), no lock."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


OUTPUT_FIX = "give the path of a regular file or of a new one"
NEW_FILE_FIX = "remove it, or choose another name"  # write_new: the name must be free


def check_output(path: Path, shown: str | None = None, fix: str = OUTPUT_FIX, new_folders: bool = False) -> None:
    """Refuse to write to anything but a regular file or an absent path: a device (as
    root, replacing /dev/null would replace the real one), a named pipe, a socket, a
    folder, or a symbolic link, which paperpool never writes through, at the file or at a
    folder on its way (see linked_folder). Refuse as well a path that names no file (an
    empty one, or `-`, which many tools take for standard output) and, unless
    `new_folders`, a file in a folder that does not exist: an output goes where it was
    asked to, or nowhere. `fix` says what to do instead. The check and the rename are two
    steps; only someone who can already write the folder can swap the file between them."""
    where = _shown(path, shown)
    option = shown.split(" ", 1)[0] if shown and shown.startswith("-") else None  # `-o` of `-o out.json`
    standard = f"leave out {option} to write to standard output, or " if option else ""
    if not path.parts:  # '' (which pathlib reads as '.') or '.': a folder, never a file
        raise PaperpoolError(
            f"{option or where}: the path names no file (it is empty, or the current folder); {standard}give the name "
            "of a file (nothing was written)"
        )
    if str(path) == "-":
        raise PaperpoolError(
            f"{where}: '-' is not taken for standard output here; {standard}give a file name (nothing was written)"
        )
    linked = linked_folder(path)
    if linked is not None:
        raise PaperpoolError(
            f"{where}: the folder {shown_path(linked)} is a symbolic link; paperpool never writes "
            "through one: give the path the link leads to, or another one (nothing was written)"
        )
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        if not new_folders and not os.path.isdir(path.parent):
            raise PaperpoolError(
                f"{where}: the folder {shown_path(path.parent)} does not exist; create it first (nothing was written)"
            ) from None
        return
    except OSError as exc:
        raise PaperpoolError(explain(exc, where, "write")) from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISLNK(mode):
        raise PaperpoolError(f"{where}: is a symbolic link; paperpool never writes through one: {fix} (nothing was written)")
    raise PaperpoolError(f"{where}: is {file_kind(mode)}, not a regular file; {fix} (nothing was written)")


def linked_folder(path: Path) -> Path | None:
    """The first folder on `path` that is a symbolic link paperpool would write through.
    Below the current folder every link counts: one laid in the pool (by a pull request,
    say) would send the file wherever it points. Above it, the system's own links are
    followed: the first folder of an absolute path (/tmp is a link on macOS) and links
    that lead to the current folder or to a folder above it."""
    folders = path.parts[:-1]
    if not path.is_absolute():  # every folder is below the current one
        return next((Path(*folders[:n]) for n in range(1, len(folders) + 1) if os.path.islink(Path(*folders[:n]))), None)
    here, above = _where_we_are()
    below = False
    for n in range(2, len(folders) + 1):
        folder = Path(*folders[:n])
        try:
            info = os.lstat(folder)
        except OSError:  # missing, or not a folder: check_output says what
            return None
        identity = _identity(folder) if stat.S_ISLNK(info.st_mode) else (info.st_dev, info.st_ino)
        if stat.S_ISLNK(info.st_mode) and (below or (n > 2 and identity not in above)):
            return folder
        below = below or identity == here
    return None


def _where_we_are() -> tuple[tuple | None, set[tuple]]:
    """The current folder's identity (device, inode), and those of it and every folder above it."""
    try:
        here = Path.cwd()
    except OSError:  # the current folder was removed
        return None, set()
    above = {_identity(folder) for folder in (here, *here.parents)}
    return _identity(here), above


def _identity(path: Path) -> tuple | None:
    try:
        info = os.stat(path)
    except OSError:  # a dangling link
        return None
    return info.st_dev, info.st_ino


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, by its mode: a folder, a device, a named pipe, a socket."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    return "a socket" if stat.S_ISSOCK(mode) else "not a file"


def _shown(path: Path, shown: str | None) -> str:
    return shown if shown is not None else shown_path(path)


def _write(path: Path, text: str, shown: str | None, replace: bool) -> None:
    """Write `text` in full to a temporary file beside `path`, flush it to disk, then
    put it in place: rename it over the old file (`replace`) or link it to the free name.
    An OSError (a full disk, a read-only mount, no permission) becomes one message naming
    the output, and the temporary file goes with it."""
    data = text.encode("utf-8")  # before anything exists: text that is not UTF-8 fails here
    # a record may start its records folder; any other output goes into a folder that exists
    check_output(path, shown, OUTPUT_FIX if replace else NEW_FILE_FIX, new_folders=not replace)
    try:
        if not replace:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = _open_temporary(path)
    except OSError as exc:
        raise PaperpoolError(explain(exc, _shown(path, shown), "write")) from None
    try:
        write_all(fd, data)
        os.fsync(fd)  # on disk before it appears, so that a power cut cannot leave an empty file
        os.fchmod(fd, _mode_for(path))
        _put(fd, name, path, replace)
        _mark(fd, False)
    except OSError as exc:
        if isinstance(exc, FileExistsError) and not replace:
            # write_new's answer that the name is taken, for its caller to word: naming the
            # file, not the descriptor the link was made from
            raise FileExistsError(exc.errno, exc.strerror, str(path)) from None
        raise PaperpoolError(explain(exc, _shown(path, shown), "write")) from None
    finally:
        os.close(fd)
        if name is not None:
            Path(name).unlink(missing_ok=True)  # gone already once put in place
    if replace:
        _remove_abandoned_temporaries(path)


@contextlib.contextmanager
def written_as_it_comes(path: Path, shown: str | None = None) -> Iterator:
    """A binary file for output that is written as it is computed (a corpus's rows), put
    in place as write_atomic puts a file, once the block ends without an error: a command
    that fails or is stopped leaves the old file, or none. An error of the block is its
    own; only writing and putting in place are reported as this output's."""
    check_output(path, shown)
    try:
        fd, name = _open_temporary(path)
    except OSError as exc:
        raise PaperpoolError(explain(exc, _shown(path, shown), "write")) from None
    handle = os.fdopen(fd, "wb", closefd=False)
    try:
        yield handle
        try:
            handle.flush()
            os.fsync(fd)
            os.fchmod(fd, _mode_for(path))
            _put(fd, name, path, True)
            _mark(fd, False)
        except OSError as exc:
            raise PaperpoolError(explain(exc, _shown(path, shown), "write")) from None
    finally:
        handle.close()
        os.close(fd)
        if name is not None:
            Path(name).unlink(missing_ok=True)
    _remove_abandoned_temporaries(path)


# On Linux the temporary file is opened with O_TMPFILE: it has no name in the folder
# until it is complete and linked in (through /proc/self/fd), so that a command killed
# while writing leaves nothing behind. Elsewhere, or on a file system without O_TMPFILE,
# it is a hidden named file, `.NAME.PID.XXXXXXXX.tmp`; a kill leaves it behind, and the
# next replacement of NAME removes it once its writer is gone. Only a file paperpool
# marked as its temporary (an extended attribute, which no repository can carry) is
# removed: a file of that name that a pool holds is left alone.
_O_TMPFILE = getattr(os, "O_TMPFILE", None)
_PROC_FD = "/proc/self/fd"
_NO_TMPFILE = {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL}  # the kernel or the file system has no O_TMPFILE


def _open_temporary(path: Path) -> tuple[int, str | None]:
    """A file to write, in `path`'s folder, marked as paperpool's temporary: (descriptor,
    None) while it has no name, else (descriptor, its name)."""
    if _O_TMPFILE is not None and os.path.isdir(_PROC_FD):
        try:
            fd = os.open(path.parent, _O_TMPFILE | os.O_WRONLY, 0o600)
            _mark(fd, True)
            return fd, None
        except OSError as exc:
            if exc.errno not in _NO_TMPFILE:
                raise
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=_temporary_prefix(path), suffix=".tmp")
    _mark(fd, True)
    return fd, name


_MARK = "user.paperpool.temporary"


def _mark(fd: int, on: bool) -> None:
    """Mark a temporary file as paperpool's, or take the mark off once it is in place.
    Where there are no extended attributes nothing is marked, and nothing is removed."""
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: a system without os.setxattr
        if on:
            os.setxattr(fd, _MARK, b"1")
        else:
            os.removexattr(fd, _MARK)


def _marked(path: Path) -> bool:
    try:
        return os.getxattr(path, _MARK, follow_symlinks=False) == b"1"
    except (OSError, AttributeError):
        return False


def _temporary_prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."  # the writer's pid: a later write knows when it is gone


def write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd` (a pipe or a file may take less than asked at each write)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _put(fd: int, name: str | None, path: Path, replace: bool) -> None:
    """Make the complete temporary file appear as `path`."""
    if name is not None:
        (os.replace if replace else os.link)(name, path)
    elif not replace:
        _link_unnamed(fd, path)  # fails if the name is taken: a new file never replaces one
    else:
        # a rename needs a name to move: the file has one for the instant between the two calls
        name = str(path.parent / f"{_temporary_prefix(path)}{secrets.token_hex(4)}.tmp")
        _link_unnamed(fd, name)
        try:
            os.replace(name, path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise


def _link_unnamed(fd: int, target: Path | str) -> None:
    """Give the unnamed file open as `fd` the name `target`. Through /proc/self/fd/N with
    linkat's AT_SYMLINK_FOLLOW, which os.link uses only when given a folder descriptor
    (plain link(2) would link the /proc entry itself, and fail)."""
    proc = os.open(_PROC_FD, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.link(str(fd), target, src_dir_fd=proc, follow_symlinks=True)
    finally:
        os.close(proc)


def _remove_abandoned_temporaries(path: Path) -> None:
    """Remove the temporary files of earlier writes of `path` whose writer is gone
    (killed between writing and renaming): named as paperpool names them and marked as
    its own. A writer still running keeps its file."""
    with contextlib.suppress(OSError):  # tidying up; the write itself has succeeded
        for candidate in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            found = _TEMPORARY.fullmatch(candidate.name[len(path.name) + 2 :])  # PID.XXXXXXXX.tmp
            if found and _marked(candidate) and not _running(int(found[1])):
                candidate.unlink(missing_ok=True)


_TEMPORARY = re.compile(r"([0-9]{1,7})\.[a-z0-9_]{8}\.tmp", re.ASCII)  # a pid is at most 4,194,304 on Linux


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0 only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


@contextlib.contextmanager
def new_folder(target: Path) -> Iterator[Path]:
    """A folder to fill, renamed to `target` (which must be missing or empty) once the
    block ends, so that `target` appears only complete; removed if anything fails."""
    target = target.absolute()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.new-"))
    except OSError as exc:  # said of the folder asked for, not of the hidden one beside it
        raise OSError(exc.errno, exc.strerror, str(target)) from None
    try:
        yield staging
        # mkdtemp makes its folder private; the result gets an ordinary folder's permissions
        os.chmod(staging, target.stat().st_mode & 0o7777 if target.exists() else 0o777 & ~UMASK)
        if target.exists():
            target.rmdir()
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _mode_for(path: Path) -> int:
    """The replaced file's permissions, or a new file's usual ones: mkstemp creates its
    file readable by its owner only, which a README or a record must not end up with."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~UMASK


def _read_umask() -> int:
    # os.umask can only be read by setting it; done once, at import, before any thread
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


UMASK = _read_umask()
