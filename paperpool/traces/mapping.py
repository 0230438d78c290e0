"""Which trace events count as which orchestration sub-decision: the survey's taxonomy,
so it is data. The package ships a default (subdecisions.yaml beside this module); a pool
whose registry.yaml has a `traces:` section with `subdecisions` replaces it.

The registry's section:

    traces:
      folder: traces            # the pool's example traces (the site's gallery)
      vocabulary: subdecision   # the vocabulary whose ids and labels the keys below are
      subdecisions:             # sub-decision id -> the event types that count for it
        O1: [spawn, despawn]
        ...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from paperpool.files.problems import (
    InvalidPool,
    PaperpoolError,
)
from paperpool.files.yamlio import parse_yaml

from ..registry import (
    REGISTRY_FILE,
    NoRegistry,
    find_root,
    holds_registry,
    load_registry,
)
from .section import NAME, trace_files, traces_folder

DEFAULT_FILE = "subdecisions.yaml"


@dataclass(frozen=True)
class Subdecisions:
    events: dict[str, list[str]]  # sub-decision id -> event types, in display order
    labels: dict[str, str]
    source: str  # where the mapping was read from, for the text report
    marks: dict[str, str] = field(default_factory=dict)  # what an importer marks with `decision`: {"delegation": "O2"}

    def label(self, decision: str) -> str:
        return self.labels.get(decision, decision)


def default() -> Subdecisions:
    text = resources.files(__package__).joinpath(DEFAULT_FILE).read_text(encoding="utf-8")
    data = parse_yaml(text, Path(DEFAULT_FILE)).data
    return Subdecisions(
        {key: list(value) for key, value in data["subdecisions"].items()},
        dict(data.get("labels") or {}),
        f"paperpool's {DEFAULT_FILE}",
        dict(data.get("marks") or {}),
    )


def for_registry(registry) -> Subdecisions:
    """The registry's mapping when it declares one (a checked registry), else the default."""
    section = registry.section(NAME)
    if "subdecisions" not in section:
        return default()
    vocabulary = registry.vocabularies.get(section.get("vocabulary"))
    labels = {value.id: value.label for value in vocabulary.values} if vocabulary else {}
    return Subdecisions({key: list(value) for key, value in section["subdecisions"].items()}, labels, "registry.yaml")


def _pool_registry(root: Path | None):
    """The registry of the pool at `root` (--root), or of the pool around the current
    folder, or None outside any pool. An invalid registry is an error: its mapping could
    be the wrong one."""
    if root is None:
        try:
            root = find_root(Path.cwd())
        except NoRegistry:
            return None
    elif not holds_registry(root):
        raise PaperpoolError(f"--root {root}: no {REGISTRY_FILE} there; pass the folder that holds the pool's {REGISTRY_FILE}")
    registry, problems = load_registry(root)
    if registry is None:
        raise InvalidPool(
            problems,
            f"{REGISTRY_FILE} is not valid (problems above); fix it, or run outside the pool "
            "to use paperpool's default sub-decision mapping",
        )
    return registry


def for_pool(root: Path | None) -> Subdecisions:
    registry = _pool_registry(root)
    return default() if registry is None else for_registry(registry)


def pool_traces(root: Path | None) -> list[Path]:
    """The .json files of the pool's traces folder, for `trace validate` without FILE."""
    registry = _pool_registry(root)
    if registry is None:
        raise PaperpoolError("no trace files named and no pool here; name the files: paperpool trace validate FILE...")
    files = trace_files(registry)
    if not files:
        raise PaperpoolError(
            f"no .json traces in {registry.root / traces_folder(registry)}; name the files: paperpool trace validate FILE..."
        )
    return files
