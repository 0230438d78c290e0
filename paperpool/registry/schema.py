"""The registry's JSON Schema: the shape of registry.yaml, checked before anything else
reads it, so that a value of the wrong type or over a size limit is one problem with its
line rather than a crash or a slow command further on. registry.schema.json beside this
module holds the core's sections; each feature's section has its own file in the
feature's package, joined in here from the registrations (paperpool.registry.sections).
Editors read the same files for completion (`# yaml-language-server: $schema=...`): the
core file points at the features' files by relative `$ref`.

Each of the library's errors becomes one message saying what is wrong and how to fix it;
a setting with an `x-fix` in the schema gets that fix as its message.
"""

from __future__ import annotations

import functools
import json
import math
import operator
from importlib import resources

from paperpool.files.problems import suggest

from .sections import registered

SCHEMA_FILE = "registry.schema.json"
SECTIONS_SOURCE = "the shipped registry.yaml"

# How a JSON type is asked for, and how a value of one is described.
_WANTED = {
    "integer": "a whole number",
    "number": "a number",
    "string": "text",
    "array": "a list",
    "object": "a mapping",
    "boolean": "true or false",
    "null": "nothing",
}


@functools.cache
def core() -> dict:
    """The core's sections and definitions, as the file holds them."""
    return json.loads(resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


@functools.cache
def schema() -> dict:
    """The whole schema: the core's sections and each registered feature's. A section the
    core file points to that no installed feature registers is not allowed."""
    whole = json.loads(json.dumps(core()))  # a copy: core() stays as the file says
    whole["properties"] = {name: body for name, body in whole["properties"].items() if not _external(body)}
    for section in registered().values():
        part = _local(section.schema())
        defs = part.pop("$defs", {})
        twice = set(defs) & set(whole["$defs"])
        if twice or section.name in whole["properties"]:
            raise ValueError(f"{section.schema_file}: defines {', '.join(sorted(twice)) or section.name} again")
        whole["$defs"] |= defs
        whole["properties"][section.name] = part
    return whole


def _external(body: dict) -> bool:
    """A section the core file leaves to a feature's own file (`$ref` to another file)."""
    return not body.get("$ref", "#").startswith("#")


def _local(node):
    """A feature's schema with its references to the core file's definitions made local,
    as they are once the two are joined."""
    if isinstance(node, list):
        return [_local(item) for item in node]
    if not isinstance(node, dict):
        return node
    found = {key: _local(value) for key, value in node.items()}
    if isinstance(found.get("$ref"), str) and "#" in found["$ref"]:
        found["$ref"] = "#" + found["$ref"].split("#", 1)[1]
    return found


@functools.cache
def _validator():
    import jsonschema_rs  # only a registry being read needs it, not every import of the registry

    return jsonschema_rs.validator_for(schema())


def sections() -> list[str]:
    return list(schema()["properties"])


def enum(*path: str) -> list[str]:
    """The values a core setting may take, such as the field types ("$defs", "field", "type")."""
    return list(functools.reduce(operator.getitem, path, core())["enum"])


def path_settings() -> dict[tuple, dict]:
    """The settings that name a folder or file of the pool (x-path), by path of keys."""
    found = {}

    def walk(node: dict, path: tuple) -> None:
        if "x-path" in node:
            found[path] = node
        for name, inner in node.get("properties", {}).items():
            walk(inner, path + (name,))

    walk(schema(), ())
    return found


def schema_problems(data) -> list[tuple[tuple, str]]:
    """Every way `data`, a parsed registry, breaks the schema: (path of keys, message)."""
    validator = _validator()
    if validator.is_valid(data):  # the usual case, and cheaper than collecting nothing
        return []
    return [found for error in validator.iter_errors(data) for found in _explain(error, data)]


def _explain(error, data) -> list[tuple[tuple, str]]:
    path = tuple(error.instance_path)
    kind, name = error.kind, error.kind.name
    node = _node(tuple(error.schema_path)[:-1])
    if name == "additionalProperties":
        known = list(node.get("properties", {}))
        return [(path + (key,), _unknown(path, key, known)) for key in kind.unexpected]
    if name == "required":
        return [(path + (kind.property,), _missing(path, kind.property, node))]
    value = functools.reduce(operator.getitem, path, data)
    if name in ("maxItems", "maxProperties"):
        noun, fix = node.get("x-noun", "items"), node.get("x-fix-limit", "list fewer")
        return [(path, f"lists {len(value):,} {noun}, over the limit of {kind.limit:,}; {fix}")]
    if name == "maximum":  # before x-fix, which says what to write but not that there is a ceiling
        return [(path, f"{_shown(value)} is over the most paperpool allows, {kind.limit:,}; give {kind.limit:,} or less")]
    if "x-fix" in node:
        return [(path, node["x-fix"])]
    if name == "type":
        wanted = " or ".join(_WANTED[t] for t in sorted(kind.types, key=list(_WANTED).index))
        return [(path, f"{_described(value)}; give {wanted}")]
    if name == "enum":
        options = [str(option) for option in kind.options]
        return [
            (path, f"{_shown(value)} is not allowed here; " + suggest(str(value), options, "use one of " + ", ".join(options)))
        ]
    if name == "uniqueItems":  # the first name listed again (each one is a pass over the records or the pages)
        seen = set()
        twice = next(item for item in value if (key := json.dumps(item, sort_keys=True, default=str)) in seen or seen.add(key))
        return [(path, f"lists {_shown(twice)} more than once; list each once")]
    if name == "minItems":
        return [(path, "is an empty list; list at least one")]
    if name == "minLength":
        return [(path, "is empty; fill it in")]
    if name == "minimum":
        return [(path, f"{_shown(value)} is below {kind.limit}; give {kind.limit} or more")]
    return [(path, f"{error.message}; see paperpool's {SCHEMA_FILE}")]


def _unknown(path: tuple, key: str, known: list[str]) -> str:
    if not path:
        return f"unknown section '{key}'; {suggest(str(key), known, 'sections are: ' + ', '.join(known))}"
    return f"unknown setting '{key}'; {suggest(str(key), known, 'use one of ' + ', '.join(sorted(known)))}"


def _missing(path: tuple, name: str, node: dict) -> str:
    if not path:
        return f"missing section '{name}'; add it (see {SECTIONS_SOURCE})"
    about = _resolved(node.get("properties", {}).get(name, {})).get("description", "")
    return f"missing `{name}`; add it" + (f" ({about[:1].lower()}{about[1:].rstrip('.')})" if about else "")


def _node(schema_path: tuple) -> dict:
    """The schema object a schema path leads to (the library reports paths through a
    $ref at the referenced definition, so no reference is followed here)."""
    node = schema()
    for part in schema_path:
        node = node[part] if isinstance(node, dict) else node[int(part)]
    return _resolved(node)


def _resolved(node: dict) -> dict:
    """A property's own settings merged over its $ref's (a description beside a $ref)."""
    if "$ref" not in node:
        return node
    target = schema()
    for part in node["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    return {**target, **{key: value for key, value in node.items() if key != "$ref"}}


def _described(value) -> str:
    """What a wrong value is: "is text", "is a list", "is empty"."""
    if value is None:
        return "is empty"
    if isinstance(value, bool):
        return "is true or false"
    if isinstance(value, float) and not math.isfinite(value):
        return f"is {value}, not a finite number"
    if isinstance(value, (int, float)):
        return "is a number"
    if isinstance(value, str):
        return "is text"
    return "is a list" if isinstance(value, list) else "is a mapping"


def _shown(value) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)
