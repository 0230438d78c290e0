"""Strict YAML reading and safe writing for pool files.

pyyaml's safe_load is too forgiving for data that people edit by hand: it keeps the
last of two duplicate keys, reads `yes` as True and expands aliases without limit.
This reader composes the node tree itself so that it can refuse those cases, and it
remembers the line of every field so that validation can point at it.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

MAX_FILE_BYTES = 1_000_000  # an entry is a few KB; anything this big is a mistake or an attack
MAX_DEPTH = 64  # mappings and lists inside each other; a record nests two or three, the registry five

_PLAIN_TAGS = {
    "tag:yaml.org,2002:" + name
    for name in ("str", "int", "float", "bool", "null", "timestamp", "map", "seq")
}


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
    data = read_bytes(path, max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlProblem(line, f"byte 0x{data[exc.start]:02x} is not UTF-8; save the file as UTF-8") from None
    if text.startswith("\ufeff"):
        raise YamlProblem(1, "file starts with a byte-order mark; save it as UTF-8 without BOM")
    return text


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """A plain file's bytes, refusing what is not a plain file or is too big. Never reads
    more than `max_bytes` + 1 bytes: a device such as /dev/zero (behind a link, say)
    reports no size and never ends."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise YamlProblem(1, "not a plain file (a device, pipe or socket, or a link to one); give a text file")
    if info.st_size > max_bytes:
        raise YamlProblem(1, f"file is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit; is it the right file?")
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew while being read
        raise YamlProblem(1, f"file is over the {max_bytes:,}-byte limit; is it the right file?")
    return data


RECORD_HINT = "write the record's fields as `field: value` lines"


def parse_yaml(text: str, path: Path, empty_hint: str = RECORD_HINT) -> Document:
    """Parse YAML text into a Document, raising YamlProblem with a line on any defect;
    `empty_hint` says what an empty file should hold."""
    if not text.strip():
        raise YamlProblem(1, f"file is empty; {empty_hint}")
    loader = _StrictLoader(text)
    loader.text = text  # kept for the alias report
    try:
        check_depth(text)
        node = loader.get_single_node()
        doc = Document(path, None)
        doc.data = _convert(node, (), doc, loader, set())
        return doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = (exc.problem or str(exc)).strip()
        if "another document" in problem:
            raise YamlProblem(line, "YAML syntax: a second document starts here (a line '---'); a file holds one document: "
                                    "remove the '---' line, or split the file") from None
        hint = _syntax_hint(problem, text.split("\n")[line - 1] if 0 < line <= text.count("\n") + 1 else "")
        raise YamlProblem(line, f"YAML syntax: {problem}{hint}") from None
    except yaml.YAMLError as exc:
        raise YamlProblem(1, f"YAML syntax: {exc}; check indentation and quoting") from None
    except RecursionError:
        raise YamlProblem(1, "YAML nesting is too deep; pool records are flat field: value lists") from None
    finally:
        loader.dispose()


def check_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before the node tree is built: libyaml's
    composer recurses in C, and a few hundred kilobytes of `[[[[...` would crash the
    process. The parser's events come one at a time, without recursion."""
    depth = 0
    for event in yaml.parse(text, Loader=_BaseLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlProblem(event.start_mark.line + 1, f"YAML nesting is deeper than {MAX_DEPTH} levels; "
                                                             "a pool file nests a few levels: remove the extra brackets or indentation")
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
    return parse_yaml(read_text(path, max_bytes), path, empty_hint)


def _field(path: tuple) -> str:
    return ".".join(str(part) for part in path if not isinstance(part, int))


def _shown_tag(tag: str) -> str:
    return tag.replace("tag:yaml.org,2002:", "!!", 1)


def _alias_line(text: str) -> tuple[int, str]:
    """Where the first alias is. Only called on the error path: libyaml's composer
    does not report aliases, so re-read the events with the pure-Python parser."""
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            return event.start_mark.line + 1, event.anchor
    return 1, "?"


def _convert(node, path: tuple, doc: Document, loader: _StrictLoader, seen: set[int]):
    line = node.start_mark.line + 1
    # The composer turns an alias into a second reference to the anchored node, so a
    # node met twice is an alias. Refusing it here also stops "billion laughs" at once.
    if id(node) in seen:
        alias_line, anchor = _alias_line(loader.text)
        raise YamlProblem(alias_line, f"YAML alias '*{anchor}' is not allowed in pool files; write the value out in full", _field(path))
    seen.add(id(node))
    if node.tag not in _PLAIN_TAGS:
        raise YamlProblem(line, f"YAML tag '{_shown_tag(node.tag)}' is not allowed; write a plain value", _field(path))
    if isinstance(node, MappingNode):
        result = {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if not isinstance(key_node, ScalarNode):
                raise YamlProblem(key_line, "a field name must be a plain word, not a list or mapping; write `name: value`", _field(path))
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlProblem(key_line, "YAML merge key '<<' is not allowed in pool files; write the fields out in full", _field(path))
            if key_node.tag not in _PLAIN_TAGS:
                raise YamlProblem(key_line, f"a field name with YAML tag '{_shown_tag(key_node.tag)}' is not allowed; "
                                            "write a plain word", _field(path))
            key = str(key_node.value)
            if key in result:
                first = doc.lines[path + (key,)]
                raise YamlProblem(key_line, f"duplicate field '{key}' (first on line {first}); keep one of them", _field(path + (key,)))
            doc.lines[path + (key,)] = key_line
            result[key] = _convert(value_node, path + (key,), doc, loader, seen)
        return result
    if isinstance(node, SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            doc.lines[path + (index,)] = item.start_mark.line + 1
            items.append(_convert(item, path + (index,), doc, loader, seen))
        return items
    doc.raw[path] = node.value
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, yaml.YAMLError):
        what = "a real date" if node.tag.endswith(":timestamp") else "a value YAML can read"
        raise YamlProblem(line, f"'{node.value}' is not {what}; correct it (dates are YYYY-MM-DD)", _field(path)) from None


def dump_yaml(data: dict) -> str:
    """Emit a record as block YAML, keeping field order; strings that another YAML
    reader would take for a number, date or boolean are quoted."""
    return yaml.dump(
        data,
        Dumper=yaml.SafeDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename it into place, so a
    reader (or a crash) sees the old file or the new one, never half of one."""
    _write_then(path, text, os.replace)


def write_new(path: Path, text: str) -> None:
    """Write a file that must not exist yet, atomically: a complete temporary file is
    hard-linked to the name, which fails (FileExistsError) when the name is taken, even
    if another process took it a moment ago."""
    _write_then(path, text, os.link)


def _write_then(path: Path, text: str, put) -> None:
    """Write `text` to a complete temporary file beside `path`, then put(tmp, path)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())  # on disk before the rename, so a power cut cannot leave an empty file
        os.chmod(tmp, _mode_for(path))
        put(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)  # gone already after a replace


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
