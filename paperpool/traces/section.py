"""The registry's `traces` section: the pool's traces folder, and which trace events
count as which orchestration sub-decision (see paperpool.traces.mapping). Registered with
the registry (SECTION; its schema is registry-traces.schema.json beside this module),
which checks it when it reads the registry."""

from __future__ import annotations

from pathlib import Path

from ..problems import Problem, suggest
from ..registry import Registry, Section, registry_problem
from ..registry.tables import unknown_keys
from . import schema

NAME = "traces"
DEFAULT_FOLDER = "traces"
SETTINGS = {"folder", "vocabulary", "subdecisions"}


def check(registry: Registry) -> list[Problem]:
    """Problems in the registry's `traces:` section, each with its line."""
    section = registry.section(NAME)
    document = registry.document
    problems = unknown_keys(registry, (NAME,), section, SETTINGS)
    folder = section.get("folder", DEFAULT_FOLDER)
    if not isinstance(folder, str) or not folder.strip() or Path(folder).is_absolute() or ".." in Path(folder).parts:
        problems.append(registry_problem(document, (NAME, "folder"), "name the folder of the pool's traces, e.g. `folder: traces`"))
    vocabulary = section.get("vocabulary")
    ids = None
    if vocabulary is not None:
        if vocabulary not in registry.vocabularies:
            problems.append(registry_problem(document, (NAME, "vocabulary"), f"no vocabulary named '{vocabulary}'; "
                                             + suggest(str(vocabulary), registry.vocabularies, "name one declared under vocabularies")))
        else:
            ids = registry.vocabularies[vocabulary].ids
    mapping = section.get("subdecisions")
    if mapping is None:
        return problems
    if not isinstance(mapping, dict) or not mapping:
        return problems + [registry_problem(document, (NAME, "subdecisions"), "map each sub-decision to its event types, e.g. `O1: [spawn]`")]
    if ids is None and vocabulary is None:
        problems.append(registry_problem(document, (NAME, "vocabulary"), "name the vocabulary of the sub-decisions, e.g. `vocabulary: subdecision`"))
    types = schema.event_types()
    for key, value in mapping.items():
        path = (NAME, "subdecisions", key)
        if ids is not None and key not in ids:
            problems.append(registry_problem(document, path, f"'{key}' is not a value of vocabulary '{vocabulary}'; "
                                             + suggest(str(key), ids, "use one of " + ", ".join(ids))))
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            problems.append(registry_problem(document, path, "list the event types that count for it, e.g. [spawn, despawn]"))
            continue
        for index, event_type in enumerate(value):
            if event_type not in types:
                problems.append(registry_problem(document, path + (index,), f"'{event_type}' is not an event type of the trace schema; "
                                                 + suggest(event_type, types, "use one of " + ", ".join(types))))
    return problems


SECTION = Section(NAME, __package__, f"registry-{NAME}.schema.json", check=check)
