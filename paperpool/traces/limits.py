"""How much a corpus or a trace may hold before paperpool stops reading it: the registry's
`traces: limits`, whose defaults are written once, in the section's schema
(registry-traces.schema.json), and read from there.

A corpus over its bytes or lines, or whose compressed files expand, together, more than
compression_ratio times, is an error that names the file and the line where the limit was
crossed, and the setting that raises it (CorpusTooLarge, TooCompressed); a trace over its
bytes or events is an invalid trace with one problem that says the same.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path

from paperpool.files.problems import PaperpoolError

from ..registry import REGISTRY_FILE
from .schema import printable
from .section import NAME

SETTING = "limits"
RATIO_FREE = 16 << 20  # decompressed bytes of a corpus's compressed files given before their ratio is held to the limit
# A line of a compressed file counts as at least this many bytes against the ratio: a trace of
# a real corpus is some 5 to 30 kB, so it never binds one that compresses as text does.
LINE_CHARGE = 4096


@dataclass(frozen=True)
class Limits:
    corpus_bytes: int  # decompressed, all the corpus's files together
    corpus_lines: int  # blank ones included; a trace file counts one
    trace_bytes: int  # one trace: a file, or a line of a JSON Lines file
    trace_events: int
    compression_ratio: int  # decompressed bytes per compressed byte read, past RATIO_FREE

    def raise_it(self, name: str) -> str:
        """How a limit is raised: its setting in the registry."""
        return f"raise {NAME}.{SETTING}.{name} in the pool's {REGISTRY_FILE} if it is meant to be this large"


@functools.cache
def _defaults() -> dict[str, int]:
    text = resources.files(__package__).joinpath(f"registry-{NAME}.schema.json").read_text(encoding="utf-8")
    settings = json.loads(text)["properties"][SETTING]["properties"]
    return {name: body["default"] for name, body in settings.items()}


def default() -> Limits:
    return Limits(**_defaults())


def for_registry(registry) -> Limits:
    """The limits of a checked registry: each setting it gives, else its default."""
    given = registry.section(NAME).get(SETTING) or {}
    return Limits(**{item.name: given.get(item.name, _defaults()[item.name]) for item in fields(Limits)})


def for_pool(root: Path | None) -> Limits:
    """The limits of the pool at `root` (--root), or around the current folder; the
    defaults outside any pool."""
    from .mapping import _pool_registry

    registry = _pool_registry(root)
    return default() if registry is None else for_registry(registry)


class CorpusTooLarge(PaperpoolError):
    """A corpus past its bytes or lines: where, the limit, and how to raise it."""

    def __init__(self, file: str, line: int, what: str, limit: int, name: str, limits: Limits):
        super().__init__(
            f"{printable(file)}:{line}: the corpus is over the limit of {limit:,} {what} by this line; {limits.raise_it(name)}"
        )


class TooCompressed(PaperpoolError):
    """A compressed file that gives more bytes per byte read than compression_ratio."""

    def __init__(self, file: str, line: int, limits: Limits):
        super().__init__(
            f"{printable(file)}:{line}: the corpus's compressed files decompress to more than {limits.compression_ratio:,} "
            f"bytes for each compressed byte by this line of this file (a line counting as at least {LINE_CHARGE:,} bytes); "
            "a corpus compresses some 10 to 20 times and a "
            f"compression bomb thousands: {limits.raise_it('compression_ratio')}"
        )


def too_many_events(count: int, limits: Limits) -> str:
    return (
        f"the trace has {count:,} events, over the limit of {limits.trace_events:,}; split the run into several "
        f"traces, or {limits.raise_it('trace_events')}"
    )
