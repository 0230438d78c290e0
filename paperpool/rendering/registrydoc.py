"""The reference of registry.yaml, written from its JSON Schema: a table per section
(setting, type, required, default, description), then the definitions the sections share
(a field, a vocabulary, a rule, ...). The schema is the one source: a setting added to it
with its description appears here, and a test fails while one has none.

The same markdown is docs/registry.md in paperpool's repository (`paperpool registry-doc
docs/registry.md`, kept current by `--check`) and the registry reference page of every
site that paperpool builds.
"""

from __future__ import annotations

import json
import re

import yaml

from paperpool.registry import schema as registry_schema

HEADER = "| Setting | Type | Required | Default | Description |\n|---|---|---|---|---|"
DEFS = "#/$defs/"
_CODE = re.compile(r"(`+[^`]*`+)")


def markdown() -> str:
    """The whole reference, as markdown that GitHub and the site's engine both render."""
    document = registry_schema.schema()
    lines = [
        "# registry.yaml reference",
        "",
        "<!-- Generated from paperpool's JSON Schema of the registry by `paperpool registry-doc`; do not edit. -->",
        "",
        _text(document["description"]),
        "",
        "Each section below is a top-level key of registry.yaml. A setting written `a.b` is `b` inside `a`; "
        "`a[].b` is `b` in each item of the list `a`. Required sections: "
        + ", ".join(f"`{name}`" for name in document.get("required", []))
        + ".",
        "",
    ]
    for name, body in document["properties"].items():
        lines += [f"## {name}", "", _text(body.get("description", "")), ""]
        rows = list(_rows(document, body, ""))
        if rows:
            lines += [HEADER, *rows, ""]
        elif isinstance(body.get("additionalProperties"), dict):
            lines += [f"Each key is a name you choose; its value is {_type(document, body['additionalProperties'])}.", ""]
        else:
            lines += [f"Type: {_type(document, body)}.", ""]
        for example in body.get("examples", []):
            lines += ["For example:", "", "```yaml", _yaml({name: example}).rstrip(), "```", ""]
    lines += ["## Definitions", "", "The shapes that several settings share, named in the Type column above.", ""]
    for name in document["$defs"]:
        body = document["$defs"][name]
        lines += [f"### {name}", "", _text(body.get("description", "")), ""]
        rows = list(_rows(document, body, ""))
        lines += [HEADER, *rows, ""] if rows else [f"Type: {_type(document, body)}.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _rows(document: dict, node: dict, prefix: str):
    """A table row for each setting of `node`, and for the settings nested in it that are
    not one of the shared definitions (those have their own table)."""
    node = _resolved(document, node) if "$ref" in node and not _named(node) else node
    required = set(node.get("required", []))
    for name, body in node.get("properties", {}).items():
        whole = _resolved(document, body)
        description = body.get("description") or whole.get("description", "")
        if "enumDescriptions" in whole:  # what each value means, as editors show it beside the value
            description += (
                " "
                + "; ".join(f"`{value}`: {about}" for value, about in zip(whole["enum"], whole["enumDescriptions"], strict=True))
                + "."
            )
        default = f"`{json.dumps(whole['default'])}`" if "default" in whole else ""
        yield (
            f"| `{prefix}{name}` | {_type(document, body)} | {'yes' if name in required else ''} | {default} "
            f"| {_cell(description)} |"
        )
        if _named(body):
            continue
        if whole.get("properties"):
            yield from _rows(document, whole, f"{prefix}{name}.")
        items = whole.get("items")
        if isinstance(items, dict) and not _named(items) and items.get("properties"):
            yield from _rows(document, items, f"{prefix}{name}[].")


def _named(node: dict) -> str | None:
    """The shared definition a schema object is, if it is one."""
    ref = node.get("$ref", "")
    return ref.removeprefix(DEFS) if ref.startswith(DEFS) else None


def _resolved(document: dict, node: dict) -> dict:
    name = _named(node)
    return {**document["$defs"][name], **{k: v for k, v in node.items() if k != "$ref"}} if name else node


def _type(document: dict, node) -> str:
    """What a setting holds, in words, linking a shared definition to its table."""
    if not isinstance(node, dict) or node == {}:
        return "anything"
    name = _named(node)
    if name:
        return f"[{name}](#{name})" if document["$defs"][name].get("properties") else _type(document, document["$defs"][name])
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(value) if not isinstance(value, str) else value}`" for value in node["enum"])
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    words = []
    for kind in kinds or (["object"] if "properties" in node else []):
        if kind == "array":
            items = node.get("items")
            words.append("list of " + _type(document, items) if isinstance(items, dict) else "list")
        elif kind == "object":
            extra = node.get("additionalProperties")
            words.append(
                f"mapping of names to {_type(document, extra)}"
                if isinstance(extra, dict) and extra.get("$ref", extra.get("type"))
                else "mapping"
            )
        else:
            words.append(
                {"string": "text", "integer": "whole number", "number": "number", "boolean": "true or false", "null": "null"}.get(
                    kind, kind
                )
            )
    return " or ".join(words) or "anything"


def _text(value: str) -> str:
    """paperpool's own description, as markdown: its `code` kept, a < outside code shown as written."""
    return "".join(part if _CODE.fullmatch(part) else part.replace("<", "&lt;") for part in _CODE.split(value))


def _cell(value: str) -> str:
    """A description inside a table cell, where a | would end the cell."""
    return _text(" ".join(value.split())).replace("|", "\\|")


def _yaml(value) -> str:
    """An example as a registry would write it: blocks outside, short lists and mappings inline."""
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, default_flow_style=None, width=100)
