"""The README's generated block: headline counts, gap highlights and the paper list.

Only the text between the two markers is paperpool's; everything around it is the
authors'. Refusing to guess where the block goes when a marker is missing or doubled
is what keeps the rest of the README safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paperpool.analysis import gaps
from paperpool.analysis.analyse import Analysis
from paperpool.analysis.since import since_publication
from paperpool.analysis.views import grouped
from paperpool.files.inputs import read_input
from paperpool.files.problems import PaperpoolError
from paperpool.files.yamlio import check_output, write_atomic
from paperpool.rendering.render import Renderer

README = "README.md"
START = "<!-- paperpool:readme:start -->"
END = "<!-- paperpool:readme:end -->"
TEMPLATE = "readme.md.j2"
# Small tables list their empty cells by name; large ones only count them.
LIST_EMPTY_UP_TO = 20


@dataclass
class Update:
    path: Path
    text: str  # the README with the new block
    changed: bool
    block: str  # the block itself


def refreshed(update: Update) -> Update:
    """The update made again from the README as it is now: `publish` builds the site
    between its plan and its write, and an edit made meanwhile outside the block stays."""
    return replace_block(update.path, START, END, update.block)


def render_block(analysis: Analysis) -> str:
    pool, registry, outcomes = analysis.pool, analysis.registry, analysis.outcomes
    context = {
        "survey": registry.survey,
        "totals": analysis.totals,
        "gap_tables": analysis.gap_tables,
        "sparse_range": gaps.sparse_range(gaps.sparse_at_most(registry)),
        "list_empty_up_to": LIST_EMPTY_UP_TO,
        "claims": outcomes,
        "claims_failing": [o for o in outcomes if not o.holds],
        "claims_said": analysis.claims_said,
        "publication": registry.publication,
        "since": since_publication(analysis),
        "groups": grouped(pool),
    }
    return Renderer(pool.root).render_all([(TEMPLATE, context)], records=len(pool.all_records()))[0].strip("\n")


def plan_update(analysis: Analysis) -> Update:
    """The README with its block replaced; PaperpoolError when the markers are not one pair."""
    path = analysis.pool.root / README
    if path.is_dir() and not path.is_symlink():
        raise PaperpoolError(f"{README} is a folder; the generated block goes into a file {README}")
    # the block is written back to it: a link, device or pipe is refused before it is read
    check_output(path, README, fix=f"make {README} a regular file")
    if not path.is_file():
        raise PaperpoolError(f"{README} is missing; create it with the lines {START} and {END} where the block goes")
    return replace_block(path, START, END, render_block(analysis))


def replace_block(path: Path, start: str, end: str, block: str) -> Update:
    """The file with the lines between its one `start` line and its one `end` line
    replaced by `block`, everything else kept byte for byte; PaperpoolError when the
    markers are not one pair."""
    text = read_input(path)
    newline = "\r\n" if "\r\n" in text else "\n"  # keep the file's own line endings
    lines = text.split(newline)
    starts = [n for n, line in enumerate(lines, 1) if line.strip() == start]
    ends = [n for n, line in enumerate(lines, 1) if line.strip() == end]
    if len(starts) != 1 or len(ends) != 1:
        found = ", ".join(f"{marker} on line {n}" for marker, found in ((start, starts), (end, ends)) for n in found)
        raise PaperpoolError(
            f"{path.name}: the generated block needs exactly one line {start} and one line {end} "
            f"(found: {found or 'neither'}); fix the markers, nothing was changed"
        )
    if starts[0] > ends[0]:
        raise PaperpoolError(f"{path.name}:{ends[0]}: the end marker comes before the start marker (line {starts[0]}); swap them")
    new_lines = lines[: starts[0]] + ["", block.replace("\n", newline), ""] + lines[ends[0] - 1 :]
    new_text = newline.join(new_lines)
    return Update(path, new_text, new_text != text, block)


def write(update: Update) -> None:
    if update.changed:
        write_atomic(update.path, update.text, README)
