"""Reading a trace that declares no schema as the survey artifact's trace format allows.

paperpool's format is a superset of the artifact's: every trace valid under the
artifact's trace_schema.json must validate. A trace that names paperpool's schema in its
`schema` field (which the artifact's format has no room for) is held to all of it; any
other trace is read with the artifact's weaker requirements where the two differ, and
what paperpool's schema asks beyond them is a warning, not an error.

Where they differ is written in the schema file itself: a node with `x-artifact` states
what the artifact's format asks there (its keywords replace the node's; null removes
one; true allows anything). `artifact_schema()` is the schema with every such node
replaced: its findings are errors. The warnings are what the full schema finds besides.

Asking jsonschema-rs for every error of a large trace costs some 50 microseconds each
(5 s for a 200,000-event trace with a warning on half its events), so the events and
edges are not asked that way. Each place where the two readings differ is a probe: a
small schema holding only paperpool's requirement there. A chunk of events (or edges)
that paperpool's schema refuses as a whole has the probes checked on the list of its
items the artifact's reading accepts (one pass each, in jsonschema-rs), and item by
item only for a probe that fails there. Only the first item each probe refuses is asked
for its errors, to word the warning; the others are counted with it. Unknown fields are
found by name, once per set of keys (items written by one program share a few).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass

import jsonschema_rs

from paperpool.files.problems import plural, shown_name

from . import schema
from .compiled import loops as _native
from .schema import Finding, printable

MARK = "x-artifact"
ITEMS = {"events": "event", "edges": "edge"}


@dataclass(frozen=True)
class Doubt:
    """Places alike that paperpool's format doubts and the artifact's allows: the first
    of them, worded as a problem, and how many there are."""

    first: Finding
    count: int = 1
    alike: str = "like it"  # what the others share with the first
    at_least: bool = False  # whether more were left uncounted (a graph rule stops at its cap)

    def line(self, file: str) -> str:
        """One line, as Finding.line writes a problem, with `warning:` after the file."""
        first = self.first
        text = f"{first.pointer}: {first.message}" if first.pointer else first.message
        more = ""
        if self.count > 1:
            section = self.first.pointer.split("/")[1] if self.first.pointer.count("/") > 1 else ""
            noun = {"events": "event", "edges": "edge"}.get(section, "place")
            more = f" (and {'at least ' if self.at_least else ''}{plural(self.count - 1, 'more ' + noun)} {self.alike})"
        return f"{printable(file)}: warning: {printable(text)}{more}"

    def sort_key(self) -> tuple:
        return self.first.sort_key()


@functools.cache
def artifact_schema() -> dict:
    """paperpool's schema as a trace that declares none is read: each x-artifact node replaced."""
    return _relaxed(schema.schema())


def _relaxed(node):
    if isinstance(node, list):
        return [_relaxed(item) for item in node]
    if not isinstance(node, dict):
        return node
    if MARK in node:
        override = node[MARK]
        if override is True:
            return True
        node = {key: value for key, value in {**node, **override}.items() if value is not None and key != MARK}
    return {key: _relaxed(value) for key, value in node.items()}


@functools.cache
def _whole(reading: str):
    return jsonschema_rs.validator_for(artifact_schema() if reading == "artifact" else schema.schema())


@functools.cache
def _items(section: str, reading: str):
    document = artifact_schema() if reading == "artifact" else schema.schema()
    return jsonschema_rs.validator_for(
        {
            "$schema": document["$schema"],
            "$defs": document["$defs"],
            "type": "array",
            "items": {"$ref": f"#/$defs/{ITEMS[section]}"},
        }
    )


@dataclass(frozen=True)
class Probe:
    """One place where the two readings of an event or edge differ."""

    key: tuple  # ("property", name), ("allOf", k) or (keyword,): which errors it stands for
    one: object  # a validator of one item against paperpool's requirement there alone
    many: object  # the same for a list of items
    drops: str | None  # the property a warned item is read without (None: read as it is)


@functools.cache
def properties_probe(section: str):
    """All the property probes of `section` as one list validator: most items pass them
    all, and one pass over a list costs what one probe's does (converting the items)."""
    document = schema.schema()
    definition = document["$defs"][ITEMS[section]]
    together = {name: _strict(spec) for name, spec in definition.get("properties", {}).items() if _marked(spec, document, set())}
    return jsonschema_rs.validator_for(
        {"$schema": document["$schema"], "$defs": document["$defs"], "type": "array", "items": {"properties": together}}
    )


@functools.cache
def probes(section: str) -> tuple[Probe, ...]:
    document = schema.schema()
    definition = document["$defs"][ITEMS[section]]
    required = set(_relaxed(definition).get("required", []))
    found = []
    for name, spec in definition.get("properties", {}).items():
        if _marked(spec, document, set()):
            # an optional property paperpool cannot read is left out; a required one is kept as it is
            found.append((("property", name), {"properties": {name: _strict(spec)}}, None if name in required else name))
    for keyword in definition.get(MARK, {}) if isinstance(definition.get(MARK), dict) else ():
        if keyword == "allOf":
            found += [(("allOf", k), dict(branch), None) for k, branch in enumerate(definition["allOf"])]
        elif keyword == "additionalProperties":
            found.append(
                (
                    ("additionalProperties",),
                    {
                        "properties": dict.fromkeys(definition["properties"], True),
                        "patternProperties": definition.get("patternProperties", {}),
                        "additionalProperties": definition["additionalProperties"],
                    },
                    None,
                )
            )
        elif keyword in definition:
            found.append(((keyword,), {keyword: definition[keyword]}, None))
    made = []
    for key, probe, drops in found:
        one = {"$schema": document["$schema"], "$defs": document["$defs"], **probe}
        many = {"$schema": document["$schema"], "$defs": document["$defs"], "type": "array", "items": probe}
        made.append(Probe(key, jsonschema_rs.validator_for(one), jsonschema_rs.validator_for(many), drops))
    return tuple(made)


def _strict(spec: dict) -> dict:
    return {key: value for key, value in spec.items() if key not in (MARK, "description")}


def _marked(node, document: dict, seen: set) -> bool:
    """Whether an x-artifact node is in `node` or what it refers to."""
    if isinstance(node, list):
        return any(_marked(item, document, seen) for item in node)
    if not isinstance(node, dict):
        return False
    if MARK in node:
        return True
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        seen.add(ref)
        target = document
        for part in ref.lstrip("#/").split("/"):
            target = target[part]
        if _marked(target, document, seen):
            return True
    return any(_marked(value, document, seen) for key, value in node.items() if key != "$ref")


def _key_of(error, section: str) -> tuple:
    """The probe an error of paperpool's full schema on a list of items belongs to: a
    property's, else the keyword of the item's definition that failed."""
    local = list(error.instance_path)
    if len(local) > 1:
        return ("property", local[1])
    parts = list(error.schema_path)
    if parts[:2] != ["$defs", ITEMS[section]]:
        return ()
    rest = parts[2:]
    return ("allOf", rest[1]) if rest[:1] == ["allOf"] else tuple(rest[:1])


def top_findings(top: dict) -> tuple[list[Finding], list[Doubt]]:
    """(errors, warnings) of a trace's top level (its events and edges left empty), or of a
    document that is no trace at all."""
    errors = _findings(_whole("artifact"), top, artifact_schema())
    strict = _findings(_whole("paperpool"), top, schema.schema())
    wrong = {finding.pointer for finding in errors}
    return errors, [Doubt(finding) for finding in strict if finding.pointer not in wrong]


def whole_findings(trace, most: int = schema.MOST_PROBLEMS) -> tuple[list[Finding], list[Doubt]]:
    """(errors, warnings) of a trace read whole that the graph rules cannot read (a list
    missing, or not a list): its top level with its lists emptied, then each list an item
    at a time, as a large trace's chunks are (items), the errors capped past `most`."""
    if not isinstance(trace, dict):
        return top_findings(trace)
    top, lists = schema.lists_apart(trace)
    errors, doubts = top_findings(top)
    groups: dict = {}
    for section, found in lists.items():
        read = items(section, found, 0, most - len(errors))
        errors += read.errors
        merge(groups, read.warnings)
    return errors, doubts + warnings_of(groups)


def _findings(validator, document, root) -> list[Finding]:
    """Every finding (the warnings are all counted; the caller keeps the first errors)."""
    if validator.is_valid(document):
        return []
    return schema.first_findings(validator, document, schema.MOST_PROBLEMS, root, every=True)


def added_types(section: str, chunk: list) -> bool:
    """Whether some item of a chunk has a type paperpool's format adds to the artifact's
    (a stop event): the one place where the artifact's reading of an item paperpool's
    schema accepts is stricter, so the items are then checked against it as well."""
    added = _added(section)
    return bool(added) and not added.isdisjoint(item.get("type") for item in chunk if isinstance(item, dict))


def read_whole(trace: dict) -> tuple[int, list] | None:
    """How batch.py reads a trace that declares no schema, its lists in one chunk: how many
    warnings validation gives it before the graph rules, and its events as paperpool reads
    them; None when the artifact's reading refuses it (rows.measure then says why). The
    same checks as validation's, the warnings counted but not worded."""
    top = {key: value for key, value in trace.items() if key not in ITEMS}
    if not _whole("artifact").is_valid({**top, "events": [], "edges": []}):
        return None
    if schema.valid(trace) and not added_types("events", trace["events"]):  # the common case: nothing to doubt
        return 0, trace["events"]
    _, doubts = top_findings({**top, "events": [], "edges": []})
    groups: dict = {}
    events = trace["events"]
    for section in ITEMS:
        read = items(section, trace[section], 0, -1, worded=False)
        if read.refused:
            return None
        merge(groups, read.warnings)
        if section == "events" and read.read_as:
            events = [read.read_as.get(k, event) for k, event in enumerate(events)]
    return len(doubts) + len(groups), events


@functools.cache
def _added(section: str) -> frozenset:
    def types(document: dict) -> set:
        return set(document["$defs"][ITEMS[section]]["properties"]["type"]["enum"])

    return frozenset(types(schema.schema()) - types(artifact_schema()))


NO_EVENTS = Finding(
    "/events",
    "is empty: the survey artifact's format, as which a trace that declares no `schema` is read, asks for at least one "
    "event; add the run's events",
)


@dataclass
class Items:
    """What the two readings say of a chunk of events or edges."""

    errors: list[Finding]  # at most `most` + 1 built (schema.capped_items)
    warnings: dict  # group key -> [first Finding, count]
    read_as: dict  # position -> the item as paperpool reads it (what it cannot read left out)
    refused: set[int] = frozenset()  # the positions of every item the artifact's reading refuses


def items(section: str, chunk: list, offset: int, most: int = schema.MOST_PROBLEMS, worded: bool = True) -> Items:
    """What the two readings say of a chunk; without `worded`, each warning is counted
    but not worded (its first place's finding is None, and how many places it has is None
    unless the items it drops a field from had to be found: batch.py only counts them)."""
    if _items(section, "paperpool").is_valid(chunk) and not added_types(section, chunk):  # the common case: nothing to doubt
        return Items([], {}, {})
    errors, wrong = schema.capped_items(_items(section, "artifact"), section, chunk, offset, most, artifact_schema())
    broken = {position - offset for position in wrong}
    # every item the artifact's reading accepts is probed: asking each first whether
    # paperpool's schema accepts it would cost about what probing it does
    doubted = [k for k in range(len(chunk)) if k not in broken] if broken else list(range(len(chunk)))
    subset = [chunk[k] for k in doubted] if broken else chunk
    warnings: dict = {}
    read_as: dict = {}
    properties_pass = properties_probe(section).is_valid(subset)
    for probe in probes(section):
        if (properties_pass and probe.key[0] == "property") or probe.many.is_valid(subset):
            continue
        if probe.key == ("additionalProperties",):  # which fields, found by name
            _unknown_fields(section, chunk, doubted, offset, warnings)
            continue
        if not worded and probe.drops is None:  # counted as one warning: which items, and how many, is not asked
            warnings[(section, probe.key)] = [None, None]
            continue
        one = probe.one.is_valid
        refused = [k for k in doubted if not one(chunk[k])]
        first = _worded(section, chunk[refused[0]], offset + refused[0], probe.key) if worded else None
        warnings[(section, probe.key)] = [first, len(refused)]
        if probe.drops is not None:
            for k in refused:
                item = read_as.get(k, chunk[k])
                read_as[k] = {key: value for key, value in item.items() if key != probe.drops}
    return Items(errors, warnings, {offset + k: item for k, item in read_as.items()}, wrong)


def _worded(section: str, item, position: int, key: tuple) -> Finding:
    validator = _items(section, "paperpool")

    def located(local: list) -> list:
        return [section, position, *local[1:]]

    try:
        for error in schema.item_errors(validator, item)[0]:
            if _key_of(error, section) == key:
                return schema.explain(error, [item], located, schema.schema())[0]
    except ValueError as exc:  # nested past what jsonschema-rs words (the artifact's format allows anything there)
        if not schema.too_deep(exc):
            raise
        where = [section, position, key[1]] if key[0] == "property" else [section, position]
        return Finding(schema.pointer(where), f"nested deeper than {schema.CHECKED_DEPTH} levels: paperpool does not read it")
    return Finding(schema.pointer([section, position]), "does not follow paperpool's trace schema here; see the schema")


def _unknown_fields(section: str, chunk: list, doubted: list[int], offset: int, warnings: dict) -> None:
    """A warning per field name that the item's definition does not know (as its
    additionalProperties: false and patternProperties say): the first item that has it,
    and how many do."""
    known, extension = _known_names(section)
    found: dict = {}  # name -> [first item, count]
    for keys, (first, count) in _key_sets(chunk, doubted).items():
        for name in keys:
            if name in known or extension(name):
                continue
            if name in found:
                found[name][0] = min(found[name][0], first)
                found[name][1] += count
            else:
                found[name] = [first, count]
    for name, (first, count) in sorted(found.items(), key=lambda item: item[1][0]):
        message = (
            f"unknown field '{printable(shown_name(name))}', which paperpool does not read; prefix its name with x_ "
            "to keep it as an extension"
        )
        warnings[(section, "field", name)] = [
            Finding(schema.pointer([section, offset + first, shown_name(name)]), message),
            count,
        ]


def _key_sets(chunk: list, doubted: list[int]) -> dict:
    """{the keys of an item of chunk[doubted], in order: [the first such item, how many]}.
    Items written by one program share a few sets of keys, so each set is judged once."""
    items = chunk if len(doubted) == len(chunk) else [chunk[k] for k in doubted]
    groups = _native.key_sets(items) if _native is not None else None
    if groups is not None:
        return {keys: [doubted[first], count] for keys, (first, count) in groups.items()}
    # counted in C (Counter over the items' key tuples); each set's first item is then
    # found by a scan that stops once every set has been met
    counts = Counter(map(tuple, items))
    by_keys: dict = {}
    for k, item in zip(doubted, items, strict=True):
        keys = tuple(item)
        if keys not in by_keys:
            by_keys[keys] = [k, counts[keys]]
            if len(by_keys) == len(counts):
                break
    return by_keys


@functools.cache
def _known_names(section: str):
    """(the properties of an item's definition, whether a name matches its patternProperties)."""
    definition = schema.schema()["$defs"][ITEMS[section]]
    patterns = list(definition.get("patternProperties", {}))
    matches = re.compile("|".join(f"(?:{pattern})" for pattern in patterns)).search if patterns else lambda name: None
    return frozenset(definition["properties"]), matches


def merge(into: dict, found: dict) -> None:
    """Add a chunk's warning groups to the trace's: the first place stays the earliest."""
    for key, (first, count) in found.items():
        if key in into:
            into[key][1] += count
        else:
            into[key] = [first, count]


def warnings_of(groups: dict, capped: frozenset = frozenset()) -> list[Doubt]:
    """The warnings of a trace's groups (`capped`: the graph rules whose findings reached
    their cap, so that each of their counts is a least one)."""
    return [Doubt(first, count, _alike(key), key[0] == "rule" and key[1] in capped) for key, (first, count) in groups.items()]


def _alike(key: tuple) -> str:
    """What a group's places share: a property's probe gathers every warning on that
    property, whatever it says (an object where text goes, text too long)."""
    kind = key[1] if len(key) > 1 else None
    if isinstance(kind, tuple) and kind[:1] == ("property",):
        return f"with a warning on `{printable(shown_name(str(kind[1])))}`"
    return "like it"
