"""Validating a trace: the JSON Schema first (jsonschema-rs), then the graph rules on
every part the schema accepted. Problems are collected, never raised, and come back in
document order.

A trace that declares paperpool's schema (`schema`) is held to all of it. One that does
not is read as the survey artifact's format allows (artifact.py): only what that format
refuses too is an error, and what paperpool's schema and graph rules find beyond it are
warnings, alike ones counted together.

A file of some size has its links (the events each edge and each result's `call` name)
resolved in a second process while this one parses and validates (see links.py). A large
file is also read in chunks (see source.py): each chunk of events or edges is validated
and indexed, then dropped.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import click

from paperpool.files.problems import PaperpoolError, plural

from . import artifact, duplicates, links, rules, schema, source
from .artifact import Doubt
from .index import Builder, TraceIndex
from .limits import Limits, too_many_events
from .limits import default as default_limits
from .loading import COMPRESSIONS, JSON_LINES, TraceUnreadable, no_gc_pauses, read_bytes
from .schema import MOST_PROBLEMS, Finding, item_findings, printable, schema_findings

# Files above this size are read in chunks; below it, parsing the whole file at once is
# faster (measured: 200,000 events, 46 MB, 0.15 s faster whole).
CHUNK_ABOVE_BYTES = 64 * 1024 * 1024


@dataclass
class Checked:
    top: object  # the trace's top-level fields (events and edges aside), or what the file held instead
    findings: list[Finding]  # the first MOST_PROBLEMS, in document order
    index: TraceIndex | None  # None when the trace has no lists of events and edges
    warnings: list[Doubt] = field(default_factory=list)  # for a trace that declares no schema
    more: bool = False  # it has problems past the findings, which were not looked for

    @property
    def valid(self) -> bool:
        return not self.findings


def declares_schema(top) -> bool:
    """Whether a trace names paperpool's schema, and so is held to all of it."""
    return isinstance(top, dict) and "schema" in top


def check_trace(trace) -> Checked:
    """Check a trace given as parsed JSON."""
    return check_source(source.WholeSource(trace))


def check_file(
    path: Path,
    limits: Limits | None = None,
    chunk_above: int = CHUNK_ABOVE_BYTES,
    chunk: int = source.CHUNK,
    apart_above: int = links.APART_ABOVE_BYTES,
) -> Checked:
    """Read and check a trace file; TraceUnreadable when it is no JSON at all, or over
    the limit of a trace's bytes."""
    limits = limits or default_limits()
    data = read_bytes(path, limits.trace_bytes, " (traces.limits.trace_bytes)")
    with links.Apart(data, apart_above) as resolving:  # the edges' ends, found in another process meanwhile
        return check_source(source.from_bytes(data, chunk_above, chunk), resolving, limits)


def check_source(trace_source, resolving: links.Apart | None = None, limits: Limits | None = None) -> Checked:
    """Check a trace; TraceUnreadable when its file gives a key twice in an object. A
    trace with more events than its limit has that one problem, and none is checked."""
    limits = limits or default_limits()
    events = _events(trace_source)
    if events > limits.trace_events:
        return Checked(trace_source.top, [Finding("/events", too_many_events(events, limits))], None)
    top = trace_source.top if trace_source.shaped else trace_source.trace
    if (channels := too_many_channels(top)) is not None:
        return Checked(top, [channels], None)
    try:
        return _check_source(trace_source, resolving)
    except ValueError as exc:  # any of the schema's checks, on a trace nested past what it reads
        if not schema.too_deep(exc):
            raise
        return Checked(trace_source.top if trace_source.shaped else trace_source.trace, [schema.TOO_DEEP], None)


# Reward channels a trace may declare in `rewards` (a run has a few): the schema checks each
# channel's name with an error of its own that holds the whole object, so 4,000 badly named
# ones took 10 s and 2.6 GB (round fourteen), growing with the square of their number.
MOST_CHANNELS = 256


def too_many_channels(top) -> Finding | None:
    rewards = top.get("rewards") if isinstance(top, dict) else None
    if not isinstance(rewards, dict) or len(rewards) <= MOST_CHANNELS:
        return None
    return Finding(
        "/rewards",
        f"declares {len(rewards):,} reward channels, over the {MOST_CHANNELS} a trace may; keep the run's channels "
        "there and put any other numbers in an x_ field",
    )


def _events(trace_source) -> int:
    """The events a trace holds, whether or not the graph rules can read it (a trace of
    five million events and no edges is over the limit as well)."""
    if trace_source.shaped:
        return trace_source.count("events")
    events = trace_source.trace.get("events") if isinstance(trace_source.trace, dict) else None
    return len(events) if isinstance(events, list) else 0


def _check_source(trace_source, resolving: links.Apart | None) -> Checked:
    with no_gc_pauses():
        if not trace_source.shaped:
            _refuse_duplicates(trace_source, {}, None)
            trace = trace_source.trace
            if declares_schema(trace):
                return _capped(trace, schema_findings(trace), None)
            findings, doubts = artifact.whole_findings(trace)
            return _capped(trace, findings, None, sorted(doubts, key=Doubt.sort_key))
        top = trace_source.top
        declared = declares_schema(top)
        if declared:
            findings, doubts = schema_findings({**top, "events": [], "edges": []}), []
        else:
            findings, doubts = artifact.top_findings({**top, "events": [], "edges": []})
            findings += [] if trace_source.count("events") else [artifact.NO_EVENTS]
        groups: dict = {}  # the warnings on events and edges, alike ones together
        capped: set[str] = set()  # the graph rules that found more than they word
        builder = Builder()
        refused: dict[str, set[int]] = {"events": set(), "edges": set()}
        for offset, events in trace_source.chunks("events"):
            found, broken, read_as = _items_checked("events", events, offset, declared, groups, MOST_PROBLEMS - len(findings))
            findings += found
            refused["events"] |= broken
            builder.add_events(events, offset, broken, read_as)
        resolved = resolving is not None and resolving.started
        for offset, edges in trace_source.chunks("edges"):
            found, broken, _ = _items_checked("edges", edges, offset, declared, groups, MOST_PROBLEMS - len(findings))
            findings += found
            refused["edges"] |= broken
            builder.count_edge_keys(edges, broken)
            if not resolved:
                builder.add_edges(edges, offset, broken)
        if resolved:
            _add_links(builder, trace_source, resolving.result(), refused)
        _refuse_duplicates(trace_source, builder.keys, resolving.census if resolved else None)
        ix = builder.build(trace_source)
        if len(findings) > MOST_PROBLEMS:  # past the cap no more are looked for, the graph rules' either
            pass
        elif declared:
            findings += rules.check(ix, top, findings, MOST_PROBLEMS - len(findings))
        else:
            for rule, found in rules.by_rule(ix, top, findings, MOST_PROBLEMS).items():
                if rule in REFUSED_BY_THE_ARTIFACT:
                    findings += found
                    continue
                if len(found) > MOST_PROBLEMS:
                    capped.add(rule)
                for finding in found:
                    artifact.merge(groups, {("rule", rule, alike(finding.message)): [finding, 1]})
        doubts += artifact.warnings_of(groups, frozenset(capped))
        return _capped(top, findings, ix, sorted(doubts, key=Doubt.sort_key))


# The graph rules whose breach the survey artifact's own checker (validate_trace.py) refuses
# too: a trace in its format that breaks them is invalid, not warned of (paperpool reads the
# artifact's format as a superset of what it accepts, never of what it refuses).
REFUSED_BY_THE_ARTIFACT = ("unique_ids", "edge_ends")


def _capped(top, findings: list[Finding], ix: TraceIndex | None, doubts: list[Doubt] | None = None) -> Checked:
    """The first MOST_PROBLEMS findings in document order, and whether there were more
    (each step builds at most one past what is left)."""
    ordered = sorted(findings, key=Finding.sort_key)
    return Checked(top, ordered[:MOST_PROBLEMS], ix, doubts or [], len(ordered) > MOST_PROBLEMS)


def _items_checked(
    section: str, items: list, offset: int, declared: bool, groups: dict, most: int
) -> tuple[list[Finding], set[int], dict | None]:
    """The errors in a chunk of events or edges (at most `most` + 1 built: none when `most`
    is below 0, the cap passed), the positions of those it refuses, and the items
    paperpool reads otherwise than given (a trace that declares no schema); its warnings
    go to `groups`."""
    if declared:
        found, broken = item_findings(section, items, offset, most)
        return found, broken, None
    read = artifact.items(section, items, offset, most)
    artifact.merge(groups, read.warnings)
    return read.errors, set(read.refused), read.read_as


def alike(message: str) -> str:
    """What a graph rule's message says, without the names, times and places it quotes:
    the rule's findings alike in it are counted as one warning. Word by word, in one
    pass: a regular expression trying each place in a long name (a trace without a schema
    may give an id of 100 kB, a quote in it ending the quoted part early) backtracks over
    the rest of it, a minute for one name."""
    words = _QUOTED.sub(" ", message).split()
    kept: list[str] = []
    for at, word in enumerate(words):
        if word == "->" or (at + 1 < len(words) and words[at + 1] == "->") or (at and words[at - 1] == "->"):
            continue  # an edge, `source -> target`
        if not word.startswith("/") and "'" not in word and not any(character.isdigit() for character in word):
            kept.append(word)  # (a quote left over: a name holding one ended its quoted part early)
    return " ".join(kept)


_QUOTED = re.compile(r"'[^']*'")


def _refuse_duplicates(trace_source, counted: dict, census) -> None:
    repeated = duplicates.find(trace_source, counted, census)
    if repeated:
        raise TraceUnreadable(repeated)


def _add_links(builder: Builder, trace_source, resolved: links.Links | None, refused: dict[str, set[int]]) -> None:
    """The other process's links when every event and edge passed the schema; else the
    edges are read again here, where the broken ones are marked."""
    fits = resolved is not None and resolved.call.size == builder.n and resolved.src.size == trace_source.count("edges")
    if fits and not refused["events"] and not refused["edges"]:
        builder.add_links(resolved)
        return
    for offset, edges in trace_source.chunks("edges"):
        builder.add_edges(edges, offset, {k for k in refused["edges"] if offset <= k < offset + len(edges)})


class InvalidTrace(PaperpoolError):
    """A trace a command refuses to measure: its problems, one per line, then `Error: ...`."""

    def __init__(self, file: str, findings: list[Finding], advice: str | None = None, more: bool = False):
        file = printable(file)  # a file name holding escapes, shown as every line of paperpool shows one
        findings, more = findings[:MOST_PROBLEMS], more or len(findings) > MOST_PROBLEMS
        super().__init__(
            f"{file} is not a valid trace ({counted(findings, more)} above); "
            + (advice or f"fix it first: paperpool trace validate {shlex.quote(file)}")
        )
        self.lines = [finding.line(file) for finding in findings]

    def show(self, file=None) -> None:
        for line in self.lines:
            click.echo(line, err=True)
        super().show(file)


def require_valid(path: Path, shown: str | None = None, limits: Limits | None = None) -> Checked:
    """A valid trace, or InvalidTrace listing its problems (the first MOST_PROBLEMS)."""
    shown = shown or str(path)
    try:
        checked = check_file(path, limits)
    except TraceUnreadable as exc:
        hint = importable(path, shown)
        raise InvalidTrace(shown, hint or exc.findings, "convert it first, as above" if hint else None) from None
    if not checked.valid:
        hint = checked.index is None and importable(path, shown)
        raise InvalidTrace(
            shown, hint or checked.findings, "convert it first, as above" if hint else None, not hint and checked.more
        )
    return checked


def report(
    shown: str,
    path: Path,
    chunk_above: int = CHUNK_ABOVE_BYTES,
    chunk: int = source.CHUNK,
    apart_above: int = links.APART_ABOVE_BYTES,
    limits: Limits | None = None,
) -> tuple[bool, list[str]]:
    """(valid, lines) for one file as `trace validate` prints it: its problems (the first
    MOST_PROBLEMS), then a summary."""
    try:
        checked = check_file(path, limits, chunk_above=chunk_above, chunk=chunk, apart_above=apart_above)
    except TraceUnreadable as exc:
        return False, _invalid(shown, importable(path, shown) or _instead(exc, shown) or exc.findings, [])
    if checked.valid:
        ix = checked.index
        said = f"{printable(shown)}: valid: {plural(ix.n, 'event')}, {plural(ix.n_edges, 'edge')}"
        if not checked.warnings:
            return True, [said + "."]
        closing = (
            f"{said}; {plural(len(checked.warnings), 'warning')}{_first_shown(checked.warnings)} (it declares no schema, "
            "so what paperpool's format asks beyond the survey artifact's is a warning)."
        )
        return True, [doubt.line(shown) for doubt in shown_doubts(checked.warnings)] + [closing]
    if checked.index is None:  # no trace's lists of events and edges: perhaps the input of an importer
        hint = importable(path, shown)
        if hint:
            return False, _invalid(shown, hint, [])
    return False, _invalid(shown, checked.findings, checked.warnings, checked.more)


def _instead(exc: TraceUnreadable, shown: str) -> list[Finding]:
    """What a file that is no trace is, and what to do with it, when it is a compressed
    trace or a corpus in JSON Lines, which `trace metrics` reads: none otherwise."""
    quoted = shlex.quote(shown)
    if exc.shape == JSON_LINES:
        said = (
            "holds several JSON documents, one per line: JSON Lines, which paperpool trace metrics reads as a "
            "corpus, one trace per line (named .jsonl); trace validate checks one trace file"
        )
    elif exc.shape in COMPRESSIONS:
        said = (
            f"is a {exc.shape}-compressed file: trace validate reads one uncompressed trace; decompress it "
            f"({COMPRESSIONS[exc.shape][1]} {quoted}), or give it to paperpool trace metrics, which reads compressed corpora"
        )
    else:
        return []
    return [Finding("", said)]


def _invalid(shown: str, findings: list[Finding], doubts: list[Doubt], more: bool = False) -> list[str]:
    findings, more = findings[:MOST_PROBLEMS], more or len(findings) > MOST_PROBLEMS
    lines = sorted(
        [(f.sort_key(), f.line(shown)) for f in findings] + [(d.sort_key(), d.line(shown)) for d in shown_doubts(doubts)]
    )
    also = f"; {plural(len(doubts), 'warning')}{_first_shown(doubts)}" if doubts else ""
    rest = (
        (
            f" (the first {MOST_PROBLEMS} above; past them problems are not looked for: fix these, often one mistake "
            "repeated, and validate it again)"
        )
        if more
        else ""
    )
    return [line for _, line in lines] + [f"{printable(shown)}: invalid, {counted(findings, more)}{also}{rest}."]


def shown_doubts(doubts: list[Doubt]) -> list[Doubt]:
    """The first MOST_PROBLEMS warnings in the file's order: one per unknown field name,
    120,000 names printed 120,000 lines."""
    return sorted(doubts, key=lambda doubt: doubt.sort_key())[:MOST_PROBLEMS] if len(doubts) > MOST_PROBLEMS else doubts


def _first_shown(doubts: list[Doubt]) -> str:
    return f" (the first {MOST_PROBLEMS} shown)" if len(doubts) > MOST_PROBLEMS else ""


def counted(findings: list[Finding], more: bool) -> str:
    """How many problems a trace has, as far as they were looked for."""
    return f"more than {plural(MOST_PROBLEMS, 'problem')}" if more else plural(len(findings), "problem")


def importable(path: Path, shown: str) -> list[Finding]:
    """A file that some importer's format recognises (an OTLP export, a Who&When log): one
    finding that names the importer, instead of the trace schema's findings on it."""
    from .importing import recognise

    if not path.is_file():  # a pipe would wait for a writer, a device never ends
        return []
    found = recognise(path)
    if found is None:
        return []
    return [
        Finding(
            "",
            f"is {found.name} input, not an orchestration trace: {found.title}; convert it first: "
            f"paperpool trace import --from {found.name} {shlex.quote(shown)} -o TRACE.json",
        )
    ]
