"""The JSON Schemas of a pool's files: registry.yaml, an entry, an exclusion and the claim
ledger, for editors (a `# yaml-language-server: $schema=...` line at the top of a file
gives completion, hover text and inline errors) and for anyone checking the files with
another tool.

The registry's schema is paperpool's, the same for every pool (joined from the core's
file and the features' sections into one file, so that it needs nothing beside it). The
records' schemas are made from the pool's own registry: the fields it declares, the
values of its vocabularies, its unknown marker; none of a survey's taxonomy is written
here. The claim ledger's schema states what paperpool.pool.ledger reads.

A schema says what a file may hold; validate says more (a key that matches its file's
name, a date not in the future, a derived value, the rules, the checks across records),
so a file a schema accepts can still have problems, never the other way round.

`paperpool schemas` writes them to the pool's schemas/ folder, which the files' modelines
name by relative path: an editor then finds them offline, and they describe the pool's
own taxonomy, not paperpool's shipped survey. `paperpool schemas --check` says when the
registry has changed since.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from urllib.parse import quote

from paperpool.files.problems import PaperpoolError
from paperpool.files.yamlio import MAX_FILE_BYTES, YamlProblem, read_bytes
from paperpool.registry import KEY_RE, MAX_TEXT_CHARS, RECORD_KINDS, REGISTRY_FILE, FieldSpec, Registry
from paperpool.registry import schema as registry_schema

from . import evidence, history, identity, ledger
from .recordchecks import expected_value

FOLDER = "schemas"  # in the pool, beside registry.yaml
DIALECT = "https://json-schema.org/draft/2020-12/schema"
MODELINE = "# yaml-language-server: $schema="
# The file of each schema in FOLDER, by what it describes.
FILES = {
    "registry": "registry.schema.json",
    "entries": "entries.schema.json",
    "exclusions": "exclusions.schema.json",
    "claims": "claims.schema.json",
    "pool": "pool.schema.json",
}
# What a record holds for a field it leaves empty: validate reads each as the field absent.
EMPTY = [None, "", [], {}]
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"  # a day (validate checks that the calendar has it)
URL_PATTERN = r"^https?://\S"
NOUNS = {"entries": "a retained entry", "exclusions": "an excluded record"}
# What one record kind's fields may take in its schema, in characters of JSON. A
# vocabulary is written once, under $defs, whatever the number of fields using it; what
# each field still repeats is its description, which names up to 12 values of each of
# its vocabularies (ids of up to 2,000 characters): 20,000 choice_map fields of a 1 MB
# registry would otherwise make a schema of about a GB. The shipped survey's is 40 kB.
MAX_SCHEMA_CHARS = 5_000_000


def registry() -> dict:
    """registry.yaml's schema, in one file: the core's sections and every installed
    feature's, with their definitions."""
    return {"$schema": DIALECT, **{key: value for key, value in registry_schema.schema().items() if key != "$schema"}}


def record(reg: Registry, kind: str) -> dict:
    """The schema of one record of `kind` (entries or exclusions) of this registry."""
    title = reg.survey.get("title") or "the pool"
    about = (
        f"{NOUNS[kind].capitalize()} of {title}: one YAML file in {reg.pool[kind]}/, named by its key. Made by "
        f"`paperpool schemas` from registry.yaml's {RECORD_KINDS[kind]}; `paperpool validate` checks more than this schema can."
    )
    mapping = _mapping(reg, reg.fields[kind], _Budget(kind))
    found = {"$schema": DIALECT, "title": f"{title}: {NOUNS[kind]}", "description": about, **mapping}
    definitions = _definitions(reg, reg.fields[kind])
    return found | ({"$defs": definitions} if definitions else {})  # none for fields without a vocabulary


class _Budget:
    """The characters left for one record kind's fields in its schema (MAX_SCHEMA_CHARS):
    spent field by field as they are made, so that a registry past it is refused after
    making at most that much, never after making the whole schema."""

    def __init__(self, kind: str):
        self.kind, self.left = kind, MAX_SCHEMA_CHARS
        self.depth = 0  # mappings the fields being made are nested in

    def spend(self, part) -> None:
        """Spend what `part` takes as texts() writes it, each of its lines indented two
        spaces a level (counted compact, the fields of a mapping nested 30 deep were
        written 20 times the size counted: 443 MB from an 863 kB registry)."""
        compact = json.dumps(part, ensure_ascii=False)
        lines = sum(map(compact.count, "{[,")) + 1
        self.left -= len(compact) + lines * 2 * (INDENT_LEVELS + FIELD_LEVELS * self.depth)
        if self.left < 0:
            raise PaperpoolError(
                f"{REGISTRY_FILE}: {RECORD_KINDS[self.kind]}: the schema of {NOUNS[self.kind]} would be over "
                f"{MAX_SCHEMA_CHARS:,} characters (each field is written with its label and help, a choice field "
                "with its vocabulary's values); declare fewer fields, or choice fields over shorter vocabularies"
            )


INDENT_LEVELS = 6  # levels a record's fields are nested in a schema file, pool.schema.json's the deepest
FIELD_LEVELS = 5  # levels a mapping's fields are below the mapping's own (anyOf, [ ], {}, properties, field)


def _mapping(reg: Registry, specs: dict[str, FieldSpec], budget: _Budget) -> dict:
    budget.depth += 1
    try:
        properties = {name: _field(reg, spec, specs, budget) for name, spec in specs.items()}
    finally:
        budget.depth -= 1
    return {
        "type": "object",
        "properties": properties,
        "required": [name for name, spec in specs.items() if spec.required],
        "additionalProperties": False,
    }


def _field(reg: Registry, spec: FieldSpec, specs: dict[str, FieldSpec], budget: _Budget) -> dict:
    """A field's schema: its type's, or the unknown marker (a value not known yet, a
    warning of validate), or, when the field is optional, an empty value."""
    typed = _typed(reg, spec, specs, budget)
    # a mapping's own fields were spent as they were made
    budget.spend({"type": spec.type} if spec.type == "mapping" else typed)
    allowed = [typed]
    if reg.unknown_marker is not None:
        allowed.append({"const": reg.unknown_marker, "description": "Not known yet: validate warns until it is filled in."})
    if not spec.required:
        allowed.append({"enum": EMPTY, "description": "Empty: the same as leaving the field out."})
    # what validate would ask for, and the registry's hint for contributors
    about = f"{spec.title}: {expected_value(spec, reg)}" + (f". {spec.help}" if spec.help else "")
    field = {"title": spec.title, "description": about + (" (required)" if spec.required else " (optional)"), "anyOf": allowed}
    budget.spend(field | {"anyOf": allowed[1:]})  # (its type's part was spent above)
    return field


def _typed(reg: Registry, spec: FieldSpec, specs: dict[str, FieldSpec], budget: _Budget) -> dict:
    kind = spec.type
    if kind == "key":
        return {"type": "string", "pattern": _ecma(KEY_RE), "description": "The file's name without .yaml."}
    if kind == "text":
        return {"type": "string"} | ({"maxLength": spec.max_length} if spec.max_length else {})
    if kind == "text_list":
        item = {"type": "string", "minLength": 1} | ({"maxLength": spec.max_length} if spec.max_length else {})
        return {"type": "array", "items": item}
    if kind == "bool":
        return {"type": "boolean"}
    if kind == "integer":
        found = {"type": "integer"}
        if spec.min is not None:
            found["minimum"] = spec.min
        if isinstance(spec.max, int):
            found["maximum"] = spec.max
        elif spec.max is not None:  # next_year moves every year: validate checks it
            found["description"] = f"At most {spec.max}."
        return found
    if kind == "date":
        return {"type": "string", "pattern": DATE_PATTERN, "description": "A day as YYYY-MM-DD."}
    if kind == "url":
        return _url()
    if kind == "url_list":
        return {"type": "array", "items": _url(), "uniqueItems": True}
    if kind == "identifier":
        pattern, example = identity.PATTERNS[spec.scheme]
        return {"type": "string", "pattern": _ecma(pattern), "description": example[:1].upper() + example[1:] + "."}
    if kind == "choice":
        return _choice(spec.vocabulary)
    if kind == "choice_list":
        return {"type": "array", "items": _choice(spec.vocabulary), "uniqueItems": True}
    if kind == "choice_map":
        # the keys' vocabulary (which keys, each described) and the values' are each
        # written once under $defs: a field costs the same whatever their sizes
        return {"type": "object", "allOf": [_ref(KEYS + spec.keys)], "additionalProperties": _choice(spec.vocabulary)}
    if kind == "key_list":
        return {"type": "array", "items": {"type": "string"}, "description": "Keys of other records."}
    if kind == "mapping":
        return _mapping(reg, spec.fields, budget)
    if kind == "history":
        return _history(specs, spec)
    if kind == "evidence":
        return _evidence()
    raise ValueError(f"{spec.name}: no schema for the field type {kind}")  # a new field type needs one here


def _url() -> dict:
    return {"type": "string", "pattern": URL_PATTERN, "description": "An http(s) link."}


# The names of a vocabulary's definitions under $defs: its values, and its values as the
# keys of a choice_map. The prefixes differ in their first letter, so no two names meet.
CHOICE, KEYS = "choice-", "keys-"


def _choice(name: str) -> dict:
    return _ref(CHOICE + name)


def _ref(definition: str) -> dict:
    """A reference to a definition of the document's $defs: a JSON Pointer (~ and / escaped)
    in a URI fragment (the rest percent-encoded, as a vocabulary's name may be any text)."""
    return {"$ref": "#/$defs/" + quote(definition.replace("~", "~0").replace("/", "~1"), safe="")}


def _definitions(reg: Registry, specs: dict[str, FieldSpec]) -> dict:
    """The $defs of the schema of fields `specs`: each vocabulary they use, once, in the
    registry's order."""
    values, keys = _vocabularies(specs)
    found = {CHOICE + name: _values(reg, name) for name in reg.vocabularies if name in values}
    return found | {KEYS + name: _keys(reg, name) for name in reg.vocabularies if name in keys}


def _vocabularies(specs: dict[str, FieldSpec]) -> tuple[set[str], set[str]]:
    """The vocabularies of the values, and of the choice_map keys, of `specs` and the fields
    of their mappings."""
    values, keys = set(), set()
    for spec in specs.values():
        if spec.type in ("choice", "choice_list", "choice_map"):
            values.add(spec.vocabulary)
        if spec.type == "choice_map":
            keys.add(spec.keys)
        if spec.type == "mapping":
            inner_values, inner_keys = _vocabularies(spec.fields)
            values |= inner_values
            keys |= inner_keys
    return values, keys


def _values(reg: Registry, name: str) -> dict:
    vocabulary = reg.vocabularies[name]
    # enumDescriptions: the labels, which editors that know the keyword show beside each value
    return {"enum": vocabulary.ids, "enumDescriptions": [value.label for value in vocabulary.values]}


def _keys(reg: Registry, name: str) -> dict:
    """A choice_map's keys: the values of vocabulary `name`, each described by its label
    (an editor's hover and completion); its values' schema is the field's own."""
    vocabulary = reg.vocabularies[name]
    return {
        "propertyNames": {"enum": vocabulary.ids},
        "properties": {value.id: {"description": value.label} for value in vocabulary.values},
        "additionalProperties": False,
    }


def _history(specs: dict[str, FieldSpec], spec: FieldSpec) -> dict:
    change = {
        "type": "object",
        "additionalProperties": False,
        "required": list(history.CHANGE_FIELDS),
        "properties": {
            "date": {"description": "The day of the change, YYYY-MM-DD.", "type": "string", "pattern": DATE_PATTERN},
            "was": {
                "description": "The values before the change, by field (null: the field was not set).",
                "type": "object",
                "minProperties": 1,
                "propertyNames": {"enum": [name for name in specs if name not in ("key", spec.name)]},
            },
            "why": {"description": "Why the record changed.", "type": "string", "minLength": 1},
        },
    }
    return {"type": "array", "items": change, "description": f"The record's changes, oldest first, each like {history.EXAMPLE}"}


def _evidence() -> dict:
    about = {
        "about": "What the item supports: a key of the map it is evidence of, or one of its fields.",
        "url": "The page that says it, with its section where possible.",
        "note": "What the page says, in one sentence of our own.",
    }
    item = {
        "type": "object",
        "additionalProperties": False,
        "required": list(evidence.ITEM_FIELDS),
        "properties": {
            name: {"description": about[name], "type": "string"} | ({"pattern": URL_PATTERN} if name == "url" else {})
            for name in evidence.ITEM_FIELDS
        },
    }
    return {"type": "array", "items": item, "description": f"Evidence items, each like {evidence.EXAMPLE}"}


def claims_schema() -> dict:
    """The claim ledger's schema, from what paperpool.pool.ledger reads."""
    bound = _ecma(ledger.BOUND_RE)
    rows = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    dispute = {
        "description": "A published claim the pool no longer bears out: its value now, the records behind it, why, and the evidence.",
        "type": "object",
        "required": ["now", "note", "evidence"],
        "additionalProperties": False,
        "properties": {
            "now": {"description": "The claim's value on the pool now.", "type": "integer", "minimum": 0},
            "rows": {"description": "The keys of the records the query selects now.", **rows},
            "note": {
                "description": "What the reading found that the published claim does not, in one sentence.",
                "type": "string",
                "minLength": 1,
            },
            "evidence": {
                "description": "The evidence: items with about (a record's key), url (an http(s) page) and note.",
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["url", "note"],
                    "properties": {
                        "about": {"type": "string", "description": "The record's key."},
                        "url": {"type": "string", "pattern": URL_PATTERN, "description": "The page."},
                        "note": {"type": "string", "description": "What the page says."},
                    },
                },
            },
        },
    }
    properties = {
        "id": {
            "description": "The claim's name: lower-case letters, digits and hyphens, unique in the ledger.",
            "type": "string",
            "pattern": _ecma(KEY_RE),
        },
        "statement": {"description": "The claim, in one sentence.", "type": "string", "minLength": 1},
        "kind": {
            "description": "published: the survey's own claim, counted over the pool as it stood on the publication date "
            "(registry.yaml's survey.publication); live: a claim about the pool now.",
            "enum": list(ledger.KINDS),
            "default": ledger.KINDS[0],
        },
        "over": {
            "description": "The records counted: entries, exclusions, or all (both).",
            "enum": list(ledger.OVER),
            "default": "entries",
        },
        "among": {
            "description": "all: every record; assessed: only the records assessed on every field the query reads.",
            "enum": list(ledger.AMONG),
            "default": ledger.AMONG[0],
        },
        "where": {
            "description": "The query: conditions like `category = method` joined by and / or / not; `in [a, b]`, `!=`, "
            "`<`, `>=`; `null` for a missing value. Empty: every record.",
            "type": ["string", "null"],
            "default": "",
            "maxLength": MAX_TEXT_CHARS,
        },
        "expected": {
            "description": 'The count the claim needs: a whole number, or a bound in quotes such as "<= 2".',
            "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": bound}],
        },
        "rows": {
            "description": "The keys of the records the claim rests on: when given, it holds only while exactly these match.",
            "maxItems": ledger.MAX_ROWS,
            **rows,
        },
        "boundary": {"description": "What the number does and does not mean.", "type": ["string", "null"]},
        "dispute": dispute,
    }
    claim = {
        "description": "One claim: a number the survey states, as a query over the pool.",
        "type": "object",
        "required": ["id", "statement", "expected"],
        "additionalProperties": False,
        "properties": properties,
    }
    return {
        "$schema": DIALECT,
        "title": "paperpool claim ledger",
        "description": "The claim ledger (claims.yaml, or the file registry.yaml's pool.claims names): every number the "
        "survey states, each a query with the value it needs. `paperpool claims --check` recomputes them.",
        "type": "object",
        "required": ["claims"],
        "additionalProperties": False,
        "properties": {"claims": {"description": "The claims.", "type": "array", "items": claim}},
    }


def pool_export(reg: Registry) -> dict:
    """The schema of the JSON export (`paperpool export --format json`, the site's and
    publish's pool.json): the registry's survey block, then each kind's records, each as
    its kind's schema says (its dates written as YYYY-MM-DD)."""
    title = reg.survey.get("title") or "the pool"
    records = {kind: record(reg, kind) for kind in reg.fields}
    kinds = {
        kind: {
            "description": f"Every {NOUNS[kind][NOUNS[kind].index(' ') + 1 :]}, by key.",
            "type": "array",
            "items": {key: value for key, value in document.items() if key not in ("$schema", "$defs")},
        }
        for kind, document in records.items()
    }
    # a $ref's pointer starts at the document's root: the records' definitions move there
    definitions = {name: body for document in records.values() for name, body in document.get("$defs", {}).items()}
    return {
        "$schema": DIALECT,
        "title": f"{title}: pool.json",
        "description": "The pool as one JSON document (`paperpool export --format json`).",
        "type": "object",
        "required": ["survey", *kinds],
        "additionalProperties": False,
        "properties": {"survey": {"type": "object", "description": "registry.yaml's survey block, as it is there."}, **kinds},
    } | ({"$defs": definitions} if definitions else {})


def documents(reg: Registry) -> dict[str, dict]:
    """Each schema of the pool, by its file's name in FOLDER."""
    found = {FILES["registry"]: registry(), FILES["claims"]: claims_schema()}
    found |= {FILES[kind]: record(reg, kind) for kind in reg.fields}
    found[FILES["pool"]] = pool_export(reg)
    return found


def texts(reg: Registry) -> dict[str, str]:
    return {name: json.dumps(document, indent=2, ensure_ascii=False) + "\n" for name, document in documents(reg).items()}


def modeline(reg: Registry, path: Path, what: str) -> str:
    """The first line of the file at `path` (in the pool), pointing editors at the
    schema of `what` (registry, entries, exclusions or claims) by a relative path."""
    target = os.path.relpath(reg.root / FOLDER / FILES[what], path.parent)
    return MODELINE + Path(target).as_posix() + "\n"


def header(reg: Registry, kind: str, path: Path) -> str:
    """What a new record at `path` starts with: the modeline of its kind's schema when the
    pool holds that schema (a pool without a schemas/ folder gets records as before)."""
    return modeline(reg, path, kind) if (reg.root / FOLDER / FILES[kind]).is_file() else ""


def install(root: Path) -> list[str]:
    """Give a new pool its schemas and point its files at them: the schemas/ folder, and a
    modeline at the top of registry.yaml, the claim ledger and every record. The files
    written or changed, relative to `root`."""
    from paperpool.registry import load_registry

    reg, problems = load_registry(root)
    if reg is None:
        raise ValueError(f"the new pool's registry does not load: {problems[0]}")  # the skeleton is paperpool's own
    (root / FOLDER).mkdir(exist_ok=True)
    for name, text in texts(reg).items():
        (root / FOLDER / name).write_text(text, encoding="utf-8")
    targets = [(reg.path, "registry"), (reg.claims_path, "claims")]
    targets += [(path, kind) for kind in reg.fields for path in sorted(reg.folder(kind).glob("*.yaml"))]
    for path, what in targets:
        if path.is_file():
            path.write_text(with_modeline(path.read_text(encoding="utf-8"), modeline(reg, path, what)), encoding="utf-8")
    return [f"{FOLDER}/"]


def stale(reg: Registry) -> list[str]:
    """The schema files of the pool's schemas/ folder that are missing or out of date."""
    folder = reg.root / FOLDER
    return [name for name, text in texts(reg).items() if _written(folder / name) != text.encode("utf-8")]


def _written(path: Path) -> bytes | None:
    """What a schema file holds, or None when it is missing or not a file paperpool reads
    (see unreadable): such a file is stale."""
    return _read(path)[0] if os.path.lexists(path) else None


def unreadable(path: Path) -> str | None:
    """Why a schema file that is there is not read, or None: a link is never read through
    (it could lead anywhere: /etc/passwd, /proc/self/mem), nor is a device, a file past the
    size a pool's file may be, or one that is not UTF-8."""
    return _read(path)[1]


def _read(path: Path) -> tuple[bytes | None, str | None]:
    """(a schema file's bytes, None), or (None, why it is not read), in one read."""
    try:
        if os.path.islink(path):
            return (
                None,
                "is a symbolic link, which paperpool neither reads nor writes through; remove it, then run paperpool schemas",
            )
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None, "is not a plain file; remove it, then run paperpool schemas"
        data = read_bytes(path, MAX_FILE_BYTES)
        data.decode("utf-8")
    except (OSError, YamlProblem, UnicodeDecodeError) as exc:
        why = (
            exc.message if isinstance(exc, YamlProblem) else "not UTF-8" if isinstance(exc, UnicodeDecodeError) else exc.strerror
        )
        return None, f"cannot be read ({why}); run paperpool schemas to write it again"
    return data, None


def with_modeline(text: str, line: str) -> str:
    """`text` with `line` as its first line, replacing a modeline it already has."""
    rest = text.split("\n", 1)[1] if text.startswith(MODELINE) else text
    return line + rest


def _ecma(pattern) -> str:
    """A pattern of paperpool's as JSON Schema writes it: Python's \\Z (the very end, where
    $ would also match before a last line break) is ECMA-262's $."""
    return pattern.pattern.replace("\\Z", "$")
