"""The one way paperpool finds what other wings and packages register: entry points
(pyproject.toml's [project.entry-points."paperpool.*"]), each checked to be what its
group holds, so that a wrong declaration is one line naming it rather than a failure
wherever the object is first used."""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata

from .problems import PaperpoolError


def registered(group: str, fits: Callable[[str, object], bool], what: str) -> dict[str, object]:
    """Every entry point of `group`, loaded, by name in name order; PaperpoolError for one
    whose object `fits(name, object)` refuses (`what` says what it should be)."""
    return {point.name: load(point, fits, what) for point in sorted(metadata.entry_points(group=group), key=lambda p: p.name)}


def load(point: metadata.EntryPoint, fits: Callable[[str, object], bool], what: str) -> object:
    """One entry point's object, checked as registered() checks each."""
    loaded = point.load()
    if not fits(point.name, loaded):
        raise PaperpoolError(
            f"the entry point '{point.name} = {point.value}' ({point.group}) is not {what}; fix the package that declares it"
        )
    return loaded


def declared(group: str) -> dict[str, metadata.EntryPoint]:
    """The entry points of `group` by name, not loaded (what loads only when it is used)."""
    return {point.name: point for point in metadata.entry_points(group=group)}
