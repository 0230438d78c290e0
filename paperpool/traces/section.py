"""The registry's `traces` section: the pool's traces folder, which trace events count as
which orchestration sub-decision (see paperpool.traces.mapping), and the corpora of traces
the site summarises (see paperpool.traces.site.corpora). Registered with the registry
(SECTION; its schema is registry-traces.schema.json beside this module), which checks it
when it reads the registry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paperpool.files.problems import NOT_UTF8_NAME, PaperpoolError, Problem, printable, suggest, utf8_name

from ..registry import Registry, Section, linked_step, outside_pool, registry_problem
from ..registry.tables import unknown_keys
from . import extra, schema

NAME = "traces"
DEFAULT_FOLDER = "traces"
SETTINGS = {"pages", "folder", "vocabulary", "subdecisions", "limits", "corpora"}
# The trace fields a corpus's distributions may be grouped by: those of a row of `trace
# metrics` that say which share of a corpus a trace belongs to (paperpool.traces.rows).
GROUPABLE = ("task_id", "run", "step", "group", "system", "topology", "time_unit")


def check(registry: Registry) -> list[Problem]:
    """Problems in the registry's `traces:` section, each with its line."""
    section = registry.section(NAME)
    document = registry.document
    problems = unknown_keys(registry, (NAME,), section, SETTINGS)
    folder = section.get("folder", DEFAULT_FOLDER)
    if not isinstance(folder, str) or not folder.strip():
        problems.append(
            registry_problem(document, (NAME, "folder"), "name the folder of the pool's traces, e.g. `folder: traces`")
        )
    elif why := outside_pool(folder):
        problems.append(
            registry_problem(
                document, (NAME, "folder"), f"'{folder}' {why}; name a folder of the pool for its traces, e.g. `folder: traces`"
            )
        )
    vocabulary = section.get("vocabulary")
    ids = None
    if vocabulary is not None:
        if vocabulary not in registry.vocabularies:
            problems.append(
                registry_problem(
                    document,
                    (NAME, "vocabulary"),
                    f"no vocabulary named '{vocabulary}'; "
                    + suggest(str(vocabulary), registry.vocabularies, "name one declared under vocabularies"),
                )
            )
        else:
            ids = registry.vocabularies[vocabulary].ids
    problems += _corpora_problems(registry, section.get("corpora"))
    mapping = section.get("subdecisions")
    if mapping is None:
        return problems
    if not isinstance(mapping, dict) or not mapping:
        return problems + [
            registry_problem(document, (NAME, "subdecisions"), "map each sub-decision to its event types, e.g. `O1: [spawn]`")
        ]
    if ids is None and vocabulary is None:
        problems.append(
            registry_problem(
                document, (NAME, "vocabulary"), "name the vocabulary of the sub-decisions, e.g. `vocabulary: subdecision`"
            )
        )
    types = schema.event_types()
    for key, value in mapping.items():
        path = (NAME, "subdecisions", key)
        if ids is not None and key not in ids:
            problems.append(
                registry_problem(
                    document,
                    path,
                    f"'{key}' is not a value of vocabulary '{vocabulary}'; "
                    + suggest(str(key), ids, "use one of " + ", ".join(ids)),
                )
            )
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            problems.append(registry_problem(document, path, "list the event types that count for it, e.g. [spawn, despawn]"))
            continue
        for index, event_type in enumerate(value):
            if event_type not in types:
                problems.append(
                    registry_problem(
                        document,
                        path + (index,),
                        f"'{event_type}' is not an event type of the trace schema; "
                        + suggest(event_type, types, "use one of " + ", ".join(types)),
                    )
                )
    return problems


def pages_wanted(registry: Registry) -> bool:
    """Whether the registry asks for the site's trace pages (`pages: true`) before the
    pool has any trace or corpus of its own."""
    return registry.section(NAME).get("pages") is True


def _corpora_problems(registry: Registry, corpora) -> list[Problem]:
    """Each corpus named once, found where it says, inside the pool, through no link, its
    files no other corpus's (each corpus is read for its page: twenty corpora of one file
    read it twenty times), and grouped by fields a row has (the schema checks the rest of
    its shape)."""
    problems = []
    names: set = set()
    places: dict[Path, str] = {}  # each corpus's resolved path: its name
    for index, corpus in enumerate(corpora if isinstance(corpora, list) else []):
        if not isinstance(corpus, dict):
            continue
        where = (NAME, "corpora", index)
        again = corpus.get("name") in names  # said once: its files are then the earlier one's to say nothing of
        if again:
            problems.append(
                registry_problem(
                    registry.document,
                    (*where, "name"),
                    f"'{corpus['name']}' names an earlier corpus too; give each corpus a name of its own",
                )
            )
        names.add(corpus.get("name"))
        if isinstance(corpus.get("path"), str):
            why = corpus_path_problem(registry.root, corpus["path"])
            if why:
                problems.append(registry_problem(registry.document, (*where, "path"), why))
            elif not again:
                place = (registry.root / corpus["path"]).resolve()
                other = next(
                    (name for at, name in places.items() if at == place or at in place.parents or place in at.parents), None
                )
                if other is not None:
                    problems.append(
                        registry_problem(
                            registry.document,
                            (*where, "path"),
                            f"'{printable(corpus['path'])}' holds files of corpus '{printable(str(other))}' too; give each "
                            "corpus files of its own",
                        )
                    )
                places.setdefault(place, corpus.get("name"))
        for position, name in enumerate(corpus.get("by") or []):
            if name not in GROUPABLE:
                problems.append(
                    registry_problem(
                        registry.document,
                        (*where, "by", position),
                        f"'{name}' is no trace field "
                        "to group by; " + suggest(str(name), GROUPABLE, "use one of " + ", ".join(GROUPABLE)),
                    )
                )
    return problems


def corpus_path_problem(root: Path, rel: str) -> str | None:
    """What is wrong with a corpus's path (None when nothing): it must lead to a file or a
    folder inside the pool, through no symbolic link (git keeps a link as a link, so the
    site would publish whatever it points at on each machine)."""
    fix = "give the path, in the pool, of a JSON Lines file (.jsonl, .jsonl.gz, .jsonl.zst), a trace file or a folder of them"
    why = outside_pool(rel)
    if why:
        return f"'{rel}' {why}; {fix}"
    linked = linked_step(root, rel)
    if linked:
        return f"'{rel}': {linked} is a symbolic link; put the corpus itself in the pool, not a link to it"
    path = root / rel
    if not path.exists():
        return f"'{rel}': no such file or folder in the pool; {fix}"
    if not (path.is_file() or path.is_dir()):
        return f"'{rel}' is neither a plain file nor a folder (a device, pipe or socket); {fix}"
    return None


@dataclass(frozen=True)
class Corpus:
    """A corpus the registry declares (`traces: corpora`), as the site shows it."""

    name: str  # a slug: its page's name
    path: str  # relative to the pool
    title: str
    about: str = ""
    source: str = ""
    by: tuple[str, ...] = ()  # trace fields its distributions are grouped by (GROUPABLE)
    count: tuple[str, ...] = ()  # trace fields, dotted, whose values are counted


def corpora(registry: Registry) -> list[Corpus]:
    """The corpora of a checked registry, in the order it declares them."""
    return [
        Corpus(
            item["name"],
            item["path"],
            item["title"],
            item.get("about", ""),
            item.get("source", ""),
            tuple(item.get("by") or ()),
            tuple(item.get("count") or ()),
        )
        for item in registry.section(NAME).get("corpora") or []
    ]


def named_paths(section: dict) -> list[str]:
    """The traces folder and each corpus's path, as the section writes them."""
    corpora = section.get("corpora") if isinstance(section.get("corpora"), list) else []
    return [section.get("folder", DEFAULT_FOLDER)] + [corpus.get("path") for corpus in corpora if isinstance(corpus, dict)]


def traces_folder(registry) -> str:
    return registry.section(NAME).get("folder") or DEFAULT_FOLDER


def trace_files(registry) -> list[Path]:
    """The .json files of the pool's traces folder (registry `traces.folder`, default
    traces), in name order; none without the folder. A symbolic link, for the folder (or
    a folder on its way) or for a file, is refused: git stores a link as a link, so the
    trace would be whatever it points at on each machine (another file, a device, a
    secret), and the site would publish it. So is a file whose name is not UTF-8."""
    files, links = _traces_and_links(registry)
    if links:
        raise PaperpoolError(f"{links[0].path}: {links[0].message}")
    return files


def link_problems(registry) -> list[Problem]:
    """The files trace_files refuses (links, names not UTF-8), as validate's problems (validate does not read the
    traces, but the build would refuse the pool for them)."""
    return _traces_and_links(registry)[1]


def _traces_and_links(registry) -> tuple[list[Path], list[Problem]]:
    linked = linked_step(registry.root, traces_folder(registry))
    if linked:
        return [], [
            Problem(
                linked,
                1,
                "",
                "is a symbolic link; the pool's traces are a plain folder of the pool: replace the link with the folder itself",
            )
        ]
    folder = registry.root / traces_folder(registry)
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    refused = [
        Problem(path.relative_to(registry.root).as_posix(), 1, "", f"{NOT_UTF8_NAME}; rename it with UTF-8 characters")
        for path in files
        if not utf8_name(path.name)
    ]
    refused += [
        Problem(
            path.relative_to(registry.root).as_posix(),
            1,
            "",
            "is a symbolic link; a trace of the pool is a plain file: replace the link with the file itself",
        )
        for path in files
        if path.is_symlink()
    ]
    return files, refused


def file_problems(registry: Registry) -> list[Problem]:
    """The trace files the build would refuse (links, names not UTF-8), and, for a pool
    with traces or corpora, the traces extra when it is not installed: validate does not
    read the traces, but the build does."""
    refused = link_problems(registry)
    if refused or not (trace_files(registry) or corpora(registry)):
        return refused
    why = extra_needed(registry)
    return [registry_problem(registry.document, (NAME,), why)] if why else []


def extra_needed(registry: Registry) -> str | None:
    """Why the pool's traces cannot be read here (the traces extra is not installed), or None."""
    return extra.needed(
        f"reading the pool's traces ({traces_folder(registry)}/ and the corpora of registry.yaml's {NAME}: section)"
    )


SECTION = Section(NAME, __package__, f"registry-{NAME}.schema.json", check=check, paths=named_paths, file_problems=file_problems)
