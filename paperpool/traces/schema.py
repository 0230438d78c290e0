"""The orchestration-trace JSON Schema: loading it, validating a trace against it with
jsonschema-rs, and turning each of the library's errors into one line that says what is
wrong and how to fix it.

The schema file is the single statement of the format: the event, edge and credit-unit
vocabularies and the edge types that must run forward in time are read from it here, so
that no list of them is written twice.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from importlib import resources

import jsonschema_rs

from paperpool.files.problems import NAME_SHOWN, shown_name, suggest

SCHEMA_FILE = "orchestration-trace.v1.schema.json"


@dataclass(frozen=True)
class Finding:
    """One problem in a trace: where (a JSON pointer, "" for the whole document) and what."""

    pointer: str
    message: str

    def line(self, file: str) -> str:
        """One line, always: a line break or other control character from the trace (a key
        may hold one) or from its file's name is shown escaped."""
        return f"{printable(file)}: {self.said}"

    @property
    def said(self) -> str:
        """`/pointer: what is wrong`, on one line, without the file."""
        return printable(f"{self.pointer}: {self.message}" if self.pointer else self.message)

    def sort_key(self) -> tuple:
        # The schema's order of the top-level fields (trace_id ... events, edges, ...), then
        # /edges/2 before /edges/10, and a field after its object.
        parts = self.pointer.split("/")[1:]
        return (top_order(parts[0]) if parts else -1,) + tuple(map(part_order, parts))


def printable(text: str) -> str:
    """`text` on one line, shown as written: as problems.printable escapes what a terminal
    would act on (\\x1b, \\u202e), and also every other character str.isprintable refuses;
    a byte of a file name that is not UTF-8 by its code (\\xff), as problems.printable shows it."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in text)


def _escaped(char: str) -> str:
    if "\udc80" <= char <= "\udcff":  # os.fsdecode's stand-in for a byte that is not UTF-8
        return f"\\x{ord(char) - 0xDC00:02x}"
    return char.encode("unicode_escape").decode("ascii")


def top_order(part: str) -> int:
    """Where a top-level field comes in sort_key's order: the schema's, unknown ones last."""
    return _TOP_LEVEL_ORDER.get(part, len(_TOP_LEVEL_ORDER))


def part_order(part: str) -> tuple:
    """Where one part of a pointer (as written in it, escaped) comes among its siblings in
    sort_key's order: list positions by number, before keys by their text."""
    return (0, int(part), "") if _is_index(part) else (1, 0, part)


def _is_index(part: str) -> bool:
    """A pointer part that is a list position (not any Unicode digit, such as '²')."""
    return part.isascii() and part.isdigit()


def schema_text() -> str:
    return resources.files(__package__).joinpath("schema", SCHEMA_FILE).read_text(encoding="utf-8")


@functools.cache
def schema() -> dict:
    return json.loads(schema_text())


@functools.cache
def _validator():
    return jsonschema_rs.validator_for(schema())


def _enum(*path: str) -> list[str]:
    node = schema()
    for part in path:
        node = node[part]
    return list(node["enum"])


_TOP_LEVEL_ORDER = {name: position for position, name in enumerate(schema()["properties"])}


def event_types() -> list[str]:
    return _enum("$defs", "event", "properties", "type")


def edge_types() -> list[str]:
    return _enum("$defs", "edge", "properties", "type")


def topologies() -> list[str]:
    return _enum("properties", "topology")


def credit_units() -> list[str]:
    return _enum("$defs", "credit_unit")


def ordering_edge_types() -> frozenset[str]:
    """The edge types that must run forward in time and form no cycle."""
    return frozenset(schema()["x-ordering-edge-types"])


def schema_id() -> str:
    return schema()["$id"]


CYCLE_SHOWN = (
    10  # names of a cycle said in its line: a cycle of a million events would be a line of megabytes, a hundred times over
)


def shown_cycle(names: list[str], things: str) -> str:
    """A cycle's names, first to first again; past CYCLE_SHOWN the first and the last few,
    and how many `things` between."""
    if len(names) <= CYCLE_SHOWN + 1:
        return " -> ".join(names)
    head, tail = names[: CYCLE_SHOWN - 3], names[-3:]
    return " -> ".join(head + [f"({len(names) - len(head) - len(tail):,} more {things})"] + tail)


def pointer(path) -> str:
    """A JSON pointer (RFC 6901) from a sequence of keys and indexes."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


# The problems of one trace that are built and reported: a trace with more is almost
# always one mistake repeated by the program that wrote it (a trace of 250,000 empty
# events has 1.5 million), and past this many they are no longer looked for.
MAX_DEPTH = 1024  # orjson's own limit: deeper nesting is refused before Python recurses
MOST_PROBLEMS = 100


def schema_findings(trace, most: int = MOST_PROBLEMS) -> list[Finding]:
    """The ways a whole trace breaks the schema, each with its JSON pointer: at most
    `most` + 1 of them built (so that a caller can tell there were more), events and
    edges an item at a time (capped_items)."""
    if valid(trace):  # the common case, and cheaper than collecting nothing
        return []
    if not isinstance(trace, dict):
        return [finding for error in _validator().iter_errors(trace) for finding in explain(error, trace, list)][: most + 1]
    top, lists = lists_apart(trace)
    found = first_findings(_validator(), top, most)[: most + 1] if not valid(top) else []
    for section, items in lists.items():
        if len(found) <= most:
            found += item_findings(section, items, 0, most - len(found))[0]
    return found[: most + 1]


def lists_apart(trace: dict) -> tuple[dict, dict]:
    """(the trace with its lists of events and edges emptied, those lists): the lists it has
    are checked an item at a time, even when the other is missing (a trace of a million
    empty events and no edges is a million errors when checked whole)."""
    lists = {section: trace[section] for section in ("events", "edges") if isinstance(trace.get(section), list)}
    return {**trace, **{section: [] for section in lists}}, lists


def valid(trace) -> bool:
    """Whether a whole trace keeps the schema (False for one nested too deep to check)."""
    try:
        return _validator().is_valid(trace)
    except ValueError as exc:
        if not too_deep(exc):
            raise
        return False


CHECKED_DEPTH = 255  # the levels jsonschema-rs reads a document down to; deeper, it raises
TOO_DEEP = Finding(
    "",
    f"nesting is deeper than {CHECKED_DEPTH} levels, where the schema check stops; "
    "a trace nests only a few levels: remove the extra brackets",
)


def too_deep(exc: ValueError) -> bool:
    """Whether jsonschema-rs refused a document for its depth (orjson reads up to 1,024 levels)."""
    return str(exc) == "Recursion limit reached"


@functools.cache
def _items_validator(section: str):
    """A validator of a list of events or edges, for a trace read in chunks."""
    item = {"events": "event", "edges": "edge"}[section]
    return jsonschema_rs.validator_for(
        {"$schema": schema()["$schema"], "$defs": schema()["$defs"], "type": "array", "items": {"$ref": f"#/$defs/{item}"}}
    )


def item_findings(section: str, items: list, offset: int, most: int = MOST_PROBLEMS) -> tuple[list[Finding], set[int]]:
    """The schema's findings on `items`, the events or edges from position `offset` on
    (at most `most` + 1 built: see capped_items), and the position of every item it refuses."""
    return capped_items(_items_validator(section), section, items, offset, most)


def capped_items(
    validator, section: str, items: list, offset: int, most: int, root: dict | None = None
) -> tuple[list[Finding], set[int]]:
    """(findings, refused positions) of a list validator on `items`: every item it refuses
    is found (a pass of is_valid per item, which stops at an item's first error), and only
    the first ones are asked for their errors, until more than `most` findings are built.
    jsonschema-rs's iter_errors gathers every error before it gives the first (some 10
    microseconds each: 250,000 empty events, 1.5 million errors, took 18 s and 1.8 GB), so
    it is asked of one refused item at a time; of none when `most` is below 0 (the cap passed)."""
    if validator.is_valid(items):
        return [], set()
    refused = [k for k, item in enumerate(items) if not validator.is_valid([item])]
    found: list[Finding] = []
    for k in refused:
        if len(found) > most:
            break

        def located(local: list, k: int = k) -> list:
            return [section, offset + k, *local[1:]] if local else [section, offset + k]

        errors, unlooked = item_errors(validator, items[k])
        found += [finding for error in errors for finding in explain(error, [items[k]], located, root)]
        if unlooked:
            found.append(
                Finding(
                    pointer([section, offset + k]),
                    f"holds over {LARGE_ITEM:,} values, so only its first problem was looked for; correct it and check again",
                )
            )
    return found, {offset + k for k in refused}


LARGE_ITEM = 10_000  # values in one event or edge past which only its first error is asked for


def item_errors(validator, item) -> tuple[list, bool]:
    """The errors of one item (as a list of one, which the item validators take), and
    whether more were left unlooked-for. iter_errors gathers every error before it gives
    the first (an event whose rewards held a million empty objects: 3 million errors, 6 GB);
    validate stops at the first, so a large item gives that one only."""
    if _values(item, LARGE_ITEM) < LARGE_ITEM:
        return list(validator.iter_errors([item])), False
    try:
        validator.validate([item])
    except jsonschema_rs.ValidationError as error:
        return [error], True
    return [], False


def _values(node, most: int) -> int:
    """How many values `node` holds, counted up to `most`."""
    count, waiting = 0, [node]
    while waiting and count < most:
        value = waiting.pop()
        count += 1
        if isinstance(value, dict):
            waiting.extend(value.values())
        elif isinstance(value, list):
            waiting.extend(value)
    return count


def _declare_it() -> str:
    """The other way out for a trace held to what the survey artifact's format asks
    because it declares no schema (artifact.py)."""
    return f'declare paperpool\'s schema in the trace ("schema": "{schema_id()}")'


# How an expected JSON type is asked for in a message.
_TYPE_WORDS = {
    "number": "a number",
    "integer": "a whole number",
    "string": "text in quotes",
    "object": "an object {...}",
    "array": "a list [...]",
    "boolean": "true or false",
    "null": "null",
}
# What a field holding a vocabulary value is called in a message.
_ENUM_NOUNS = {
    ("events", "type"): "event type",
    ("edges", "type"): "edge type",
    ("unit",): "credit unit",
    ("topology",): "topology",
}


def first_findings(validator, document, most: int, root: dict | None = None, every: bool = False) -> list[Finding]:
    """The findings of a document's errors in the order they are shown: the first `most`
    + 1 errors' in full; with `every` (warnings, which are all counted), the rest's as well,
    no close name looked for. Looking for one costs some 50 microseconds: a top level of
    300,000 unknown field names took 15 s."""
    errors = list(validator.iter_errors(document))
    if len(errors) > most + 1:
        errors = sorted(errors, key=lambda error: Finding(pointer(error.instance_path), "").sort_key())
    found = [finding for error in errors[: most + 1] for finding in explain(error, document, list, root)]
    if every:
        found += [finding for error in errors[most + 1 :] for finding in explain(error, document, list, root, suggesting=False)]
    return found


def explain(error, document, located, root: dict | None = None, suggesting: bool = True) -> list[Finding]:
    """Findings for one of the library's errors on `document`; `located` turns a path in
    the document into the path in the whole trace; `root` is the schema the error is of
    (this one by default, or the reading of it for a trace that declares none). An unknown
    field is given the known one it is closest to, unless not `suggesting`, and past the
    first MOST_PROBLEMS + 1 of one error (which names them all)."""
    root = root or schema()
    local = _local(error, document)
    path = located(local)
    kind = error.kind
    name = kind.name
    if name == "additionalProperties":
        known = _known_fields(error.schema_path, root)
        fix = "remove it, or prefix its name with x_ to keep it as an extension"
        return [
            Finding(
                pointer(path + [shown_name(key)]),
                f"unknown field '{shown_name(key)}'; "
                + (suggest(key, known, fix) if suggesting and number <= MOST_PROBLEMS and len(key) <= NAME_SHOWN else fix),
            )
            for number, key in enumerate(kind.unexpected)
        ]
    if name == "required":
        field = kind.property
        what = _description(error.schema_path, field, root)
        if "then" in error.schema_path:
            event_type = _value_at(document, local + ["type"])
            return [Finding(pointer(path + [field]), f"missing: a {event_type} event needs `{field}` ({what}); add it")]
        if root is not schema() and field not in _schema_node(error.schema_path, schema()):
            return [
                Finding(
                    pointer(path + [field]),
                    f"missing: add `{field}` ({what}), which the survey artifact's format asks for, as which a trace that "
                    f"declares no `schema` is read; or {_declare_it()}",
                )
            ]
        return [Finding(pointer(path + [field]), f"missing: add `{field}` ({what})")]
    value = _value_at(document, local)
    shown = _show(value)
    if name == "type":
        if isinstance(value, float) and not math.isfinite(value):
            return [Finding(pointer(path), f"{shown} is not a finite number; write a finite number")]
        wanted = " or ".join(_TYPE_WORDS.get(t, t) for t in kind.types)
        if not path:
            return [
                Finding(
                    "",
                    f"the file holds {_json_type(value)}, not a trace; a trace is a JSON object with trace_id, events and edges",
                )
            ]
        if kind.types == ["integer"] and isinstance(value, float):
            return [Finding(pointer(path), f"{shown} is not a whole number; write a whole number")]
        what = "null is" if value is None else f"{shown} is {_json_type(value)},"
        return [Finding(pointer(path), f"{what} not {wanted}; write {wanted}")]
    if name == "enum":
        options = [str(option) for option in kind.options]
        noun = _enum_noun(path)
        if root is not schema() and value in _schema_node(error.schema_path, schema()):
            return [
                Finding(
                    pointer(path),
                    f"{shown} is an {noun} of paperpool's format, not of the survey artifact's, as which a trace that declares "
                    f"no `schema` is read; {_declare_it()}, or use one of {', '.join(options)}",
                )
            ]
        return [
            Finding(
                pointer(path),
                f"{shown} is not a known {noun}; " + suggest(str(value), options, "use one of " + ", ".join(options)),
            )
        ]
    if name == "minimum" and kind.limit == 0:
        named = path[-1] if isinstance(path[-1], str) and path[-1] else "it"  # (a list's item, or an empty key)
        return [Finding(pointer(path), f"{shown} is negative; {named} cannot be negative, write 0 or more")]
    if name == "minimum":
        return [Finding(pointer(path), f"{shown} is below the minimum {kind.limit}; write {kind.limit} or more")]
    if name == "maximum":
        return [Finding(pointer(path), f"{shown} is above the maximum {kind.limit:,}; write {kind.limit:,} or less")]
    if name == "minLength":
        return [Finding(pointer(path), "is empty; write a name")]
    if name == "maxLength":
        return [Finding(pointer(path), f"is {len(value):,} characters long, over the limit of {kind.limit:,}; shorten it")]
    if name == "pattern":
        return [
            Finding(
                pointer(path), f"{shown} is not a valid channel name; start with a letter, then use letters, digits, _ . or -"
            )
        ]
    if name == "propertyNames":
        key = kind.error.instance
        return [
            Finding(
                pointer(path + [key]),
                f"{_show(key)} is not a valid channel name; start with a letter, then use letters, digits, _ . or -",
            )
        ]
    if name == "const":
        return [Finding(pointer(path), f'{shown} is not this schema; write "{schema_id()}" or leave the field out')]
    return [Finding(pointer(path), f"{error.message}; see the schema {SCHEMA_FILE}")]


def _local(error, document) -> list:
    """Where in `document` the error is. jsonschema-rs leaves an empty key ("") out of the
    path it gives, so a value refused under one is found one step further down."""
    local = list(error.instance_path)
    here = _value_at(document, local)
    if isinstance(here, dict) and "" in here and here is not error.instance and here[""] == error.instance:
        local.append("")
    return local


def _schema_node(schema_path, root: dict) -> dict:
    """The schema object a schema path leads to, following $ref as the validator did."""
    node = root
    for part in schema_path:
        if "$ref" in node and part not in node:
            node = _resolve(node["$ref"], root)
        node = node[part] if isinstance(node, dict) else node[int(part)]
    return node


def _resolve(ref: str, root: dict) -> dict:
    node = root
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


def _owner(schema_path, root: dict) -> dict:
    """The object schema a keyword at the end of `schema_path` belongs to."""
    owner = _schema_node(list(schema_path)[:-1], root)
    while "properties" not in owner and "$ref" in owner:
        owner = _resolve(owner["$ref"], root)
    return owner


def _known_fields(schema_path, root: dict) -> list[str]:
    return list(_owner(schema_path, root).get("properties", {}))


def _description(schema_path, field: str, root: dict) -> str:
    path = list(schema_path)
    # a conditional `then: {required: [...]}` describes fields of the object the allOf sits in
    while "allOf" in path:
        path = path[: path.index("allOf")] + ["required"]
    spec = _owner(path, root).get("properties", {}).get(field, {})
    if isinstance(spec, dict) and "$ref" in spec and "description" not in spec:
        spec = _resolve(spec["$ref"], root)
    if not isinstance(spec, dict):
        spec = {}
    text = spec.get("description", "see the schema").rstrip(".")
    return text[:1].lower() + text[1:]


def _enum_noun(path: list) -> str:
    names = [part for part in path if isinstance(part, str)]
    for key, noun in _ENUM_NOUNS.items():
        if tuple(names[-len(key) :]) == key:
            return noun
    return f"value of {names[-1]}" if names else "value"


def _value_at(document, path):
    for part in path:
        try:
            document = document[part]
        except (KeyError, IndexError, TypeError):
            return None
    return document


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _show(value) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
