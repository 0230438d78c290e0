"""What a change to the pool changes: records added, removed or retagged, and every
count, gap cell and claim that moved. This is what a pull request's reviewer reads.

The pool at a git revision (its registry, records and claims) is written to a temporary
folder from git's objects and read like any other pool, with the registry and claims of
that revision.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from paperpool.files.git import GIT
from paperpool.files.problems import PaperpoolError, printable
from paperpool.files.yamlio import MAX_FILE_BYTES, YamlProblem, load_yaml
from paperpool.pool.reading import Pool
from paperpool.pool.validate import require_valid_pool
from paperpool.registry import CLAIMS_FILE, RECORD_KINDS, REGISTRY_FILE, outside_pool
from paperpool.registry.sections import named_paths
from paperpool.rendering import markdown

from . import claims, stats
from .analyse import Analysis, analyse


@dataclass
class Snapshot:
    pool: Pool
    stats: stats.Stats
    cells: dict[tuple[str, str, str], list[str]]  # (table id, row, column id) -> keys
    claims: dict[str, claims.Outcome]


@dataclass
class Diff:
    revision: str
    added: list[str] = field(default_factory=list)  # "kind/key"
    removed: list[str] = field(default_factory=list)
    retagged: dict[str, list[tuple[str, object, object]]] = field(default_factory=dict)  # kind/key -> (field, old, new)
    counts: list[tuple[str, str, int | None, int | None]] = field(
        default_factory=list
    )  # (table, value, old, new); None: not counted
    cells: list[tuple[tuple[str, str, str], list[str], list[str]]] = field(default_factory=list)
    claims: list[tuple[str, claims.Outcome | None, claims.Outcome | None]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.retagged or self.counts or self.cells or self.claims)


def snapshot(analysis: Analysis) -> Snapshot:
    # keyed by ids, so that renaming a table or relabelling a value moves no cell
    cells = {(t.id, r, c): cell.keys for t in analysis.gap_tables for r, row in t.cells.items() for c, cell in row.items()}
    return Snapshot(analysis.pool, analysis.stats, cells, {o.claim.id: o for o in analysis.outcomes})


# What diff takes from a revision: the pool's own files (its registry, records and
# claims), at most this many and this large together. A repository can hold a tree that
# names one blob a million times, or itself ten levels deep, in a few kilobytes of
# objects; written out, that is gigabytes of files.
MAX_FILES = 100_000
MAX_BYTES = 1 << 30


@contextlib.contextmanager
def analysis_at_revision(root: Path, revision: str):
    """The valid pool at `revision` of the git repository holding `root`, in a temporary folder."""
    top = Path(
        _git(
            root,
            "rev-parse",
            "--show-toplevel",
            failure=f"diff compares git revisions, but {root} is not in a git repository ({{detail}})",
        ).strip()
    )
    inside = root.resolve().relative_to(top.resolve()).as_posix()
    commit = _git(
        root,
        "rev-parse",
        "--verify",
        "--quiet",
        f"{revision}^{{commit}}",
        failure=f"git knows no revision '{revision}'; give a commit, branch or tag (e.g. HEAD~1 or main)",
    ).strip()
    with tempfile.TemporaryDirectory(prefix="paperpool-diff-") as folder:
        at = _Revision(top, commit, revision, inside, Path(folder))
        at.extract([REGISTRY_FILE])
        if not (at.root / REGISTRY_FILE).is_file():
            raise PaperpoolError(f"the pool at {revision} has no {REGISTRY_FILE}; compare with a revision that has one")
        read, named = _pool_files(at.root)
        at.extract(read)
        at.stand_in(named)
        try:
            # a temporary folder: its cache would never be read again
            yield analyse(require_valid_pool(at.root, cache=False), None)
        except PaperpoolError as exc:
            raise PaperpoolError(f"at {revision}: {exc.message}") from None


def _pool_files(root: Path) -> tuple[list[str], list[str]]:
    """What the pool at `root` is read from, as its registry (written out alone) names
    it: the registry, its records' folders and its claims; and the other files and
    folders its sections name (traces, corpora), which the registry's checks only look
    for. A registry that cannot be read names nothing more, and says why when the pool
    is read."""
    try:
        data = load_yaml(root / REGISTRY_FILE).data
    except YamlProblem:
        return [REGISTRY_FILE], []
    pool = data.get("pool") if isinstance(data, dict) else None
    if not isinstance(pool, dict):
        return [REGISTRY_FILE], []
    read = [pool.get(kind) for kind in RECORD_KINDS] + [pool.get("claims", CLAIMS_FILE)]
    inside = [path for path in read if isinstance(path, str) and not outside_pool(path)]
    named = [path for path in named_paths(data) if not outside_pool(path)]
    return [REGISTRY_FILE, *inside], [path for path in named if path not in inside]


@dataclass
class _Revision:
    """The pool's folder (`inside` the repository at `top`) at one commit, written out
    under `folder` a few files at a time."""

    top: Path
    commit: str
    revision: str
    inside: str
    folder: Path

    @property
    def root(self) -> Path:
        return self.folder / "tree" / ("" if self.inside == "." else self.inside)

    def extract(self, names: list[str]) -> None:
        """These files and folders of the pool, those the revision has, within MAX_FILES
        entries (trees counted) and MAX_BYTES, counted from git's listing before anything
        is written. Each file is read by its object id: `git archive` walks the whole tree
        whatever paths it is given, which a tree naming itself sixteen ways eight deep
        makes billions of trees."""
        paths = [name if self.inside == "." else f"{self.inside}/{name}" for name in names]
        paths = [path for path in paths if self._has(path)]
        if paths:
            self._write(self._listed(paths))

    def _listed(self, paths: list[str]) -> list[tuple[str, str, str]]:
        """(mode, object, path) of each file under `paths`, read from git's listing as it
        comes and stopped past a limit."""
        files, entries, size = [], 0, 0
        listing = subprocess.Popen(
            [*GIT, "ls-tree", "-r", "-t", "-l", "-z", self.commit, "--", *paths],
            cwd=self.top,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            for mode, kind, obj, length, path in _entries(listing.stdout):
                entries += 1
                size += int(length) if length.isdigit() else 0
                if kind == "blob" and length.isdigit() and int(length) > MAX_FILE_BYTES:
                    raise PaperpoolError(
                        f"the pool at {self.revision} holds {printable(path)}, {int(length):,} bytes, over the "
                        f"{MAX_FILE_BYTES:,} bytes a file of a pool may be; compare with another revision"
                    )
                if entries > MAX_FILES or size > MAX_BYTES:
                    raise PaperpoolError(
                        f"the pool at {self.revision} holds more than {MAX_FILES:,} files or "
                        f"{MAX_BYTES >> 20:,} MiB in its registry, records and claims, which diff does not "
                        "write out (a tree made to expand?); compare with another revision"
                    )
                if kind == "blob":
                    files.append((mode, obj, path))
        finally:
            listing.kill()
            listing.wait()
            listing.stdout.close()
        return files

    def _write(self, files: list[tuple[str, str, str]]) -> None:
        """Each file's bytes, from `git cat-file --batch`, one at a time. A symbolic link
        is written as a link that leads nowhere: the pool then refuses it as validate
        refuses any linked record, naming it, and nothing outside the tree is read."""
        batch = subprocess.Popen(
            [*GIT, "cat-file", "--batch"], cwd=self.top, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        try:
            for mode, obj, path in files:
                batch.stdin.write(obj.encode("ascii") + b"\n")
                batch.stdin.flush()
                header = batch.stdout.readline().split()
                if len(header) != 3 or header[1] != b"blob":
                    raise PaperpoolError(
                        f"cannot read the pool at {self.revision}: git gave no file for {path}; compare with another revision"
                    )
                data = batch.stdout.read(int(header[2]) + 1)[:-1]  # the bytes, then a line break
                target = self._target(path)
                if os.path.lexists(target):  # written already (the registry, first read alone), or named twice
                    continue
                try:
                    self._write_one(target, mode, data)
                except OSError as exc:  # a name too long for this file system, say: the revision's, not the user's
                    raise PaperpoolError(
                        f"the pool at {self.revision} names a file {printable(path)!r} this system cannot write "
                        f"({exc.strerror or exc}); compare with another revision"
                    ) from None
        finally:
            batch.stdin.close()
            batch.kill()
            batch.wait()
            batch.stdout.close()

    @staticmethod
    def _write_one(target: Path, mode: str, data: bytes) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            target.symlink_to(_NOWHERE)
            return
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)

    def _target(self, path: str) -> Path:
        """Where a file of the revision is written: under the temporary folder, by a path
        of plain names. git's trees may name an entry `..` (git mktree takes it, and a
        fetch checks nothing by default): such a path would climb out and write anywhere."""
        parts = path.split("/")
        if path.startswith("/") or any(part in ("", ".", "..") or "\\" in part for part in parts):
            raise PaperpoolError(
                f"the pool at {self.revision} names a file {printable(path)!r}, a path out of its folder; "
                "compare with another revision"
            )
        return self.folder.joinpath("tree", *parts)

    def stand_in(self, names: list[str]) -> None:
        """An empty file or folder for each of these the revision has: the registry's
        checks ask only whether a corpus or a traces folder is there, and what diff
        compares never reads them (a corpus can be gigabytes). One `git cat-file
        --batch-check` answers for all of them: a process a name took 36 s for the 20,000
        corpora a hostile revision's registry named (its schema then refuses them)."""
        names = [name for name in names if "\n" not in name]  # one a line; such a name is no path of a pool
        paths = [name if self.inside == "." else f"{self.inside}/{name}" for name in names]
        answer = subprocess.run(
            [*GIT, "cat-file", "--batch-check=%(objecttype)"],
            input="".join(f"{self.commit}:{path}\n" for path in paths),
            cwd=self.top,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.splitlines()
        answer += [""] * (len(names) - len(answer))  # git failed: none is stood in, and the pool's reading says so
        for name, kind in zip(names, answer, strict=True):
            target = self.root / name
            if kind == "tree":
                target.mkdir(parents=True, exist_ok=True)
            elif kind == "blob" and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.touch()

    def _has(self, path: str) -> bool:
        return (
            subprocess.run(
                [*GIT, "cat-file", "-e", f"{self.commit}:{path}"], cwd=self.top, capture_output=True, check=False
            ).returncode
            == 0
        )


def _entries(stream) -> Iterator[tuple[str, str, str, str, str]]:
    """(mode, type, object, size, path) of each entry of `git ls-tree -l -z` (size '-'
    for a tree or a submodule)."""
    pending = b""
    while chunk := stream.read(1 << 16):
        *whole, pending = (pending + chunk).split(b"\0")
        for entry in whole:
            yield _entry(entry)
    if pending:
        yield _entry(pending)


def _entry(entry: bytes) -> tuple[str, str, str, str, str]:
    fields, _, path = entry.partition(b"\t")
    mode, kind, obj, size = fields.decode("ascii", "replace").split()
    return mode, kind, obj, size, path.decode("utf-8", "surrogateescape")


# What a link of the revision is made to point at: a name longer than a file name may be
# (255 bytes), so that no file can have it and the link leads nowhere.
_NOWHERE = "paperpool-diff:" + "a-link-out-of-the-tree-led-here" * 8


def _git(cwd: Path, *args: str, failure: str, out=None) -> str:
    """git's output; on failure a PaperpoolError from `failure` with {detail}, git's last words."""
    try:
        result = subprocess.run([*GIT, *args], cwd=cwd, stdout=out or subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    except FileNotFoundError:
        raise PaperpoolError("diff needs git, which is not installed or not on PATH") from None
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise PaperpoolError(failure.replace("{detail}", detail[-1] if detail else f"git {args[0]} failed"))
    return "" if out else result.stdout.decode("utf-8", "replace")


def compare(revision: str, old: Snapshot, new: Snapshot) -> Diff:
    diff = Diff(revision)
    for kind in new.pool.records:
        before = {r.key: r.data for r in old.pool.records.get(kind, [])}
        after = {r.key: r.data for r in new.pool.records[kind]}
        diff.added += [f"{kind}/{key}" for key in sorted(set(after) - set(before))]
        diff.removed += [f"{kind}/{key}" for key in sorted(set(before) - set(after))]
        for key in sorted(set(before) & set(after)):
            changes = [
                (name, before[key].get(name), after[key].get(name))
                for name in dict.fromkeys([*before[key], *after[key]])
                if _comparable(before[key].get(name)) != _comparable(after[key].get(name))
            ]
            if changes:
                diff.retagged[f"{kind}/{key}"] = changes
    diff.counts = _changed_counts(old.stats, new.stats)
    diff.cells = [(cell, old.cells.get(cell, []), keys) for cell, keys in new.cells.items() if old.cells.get(cell, []) != keys]
    diff.cells += [(cell, keys, []) for cell, keys in old.cells.items() if cell not in new.cells and keys]
    for claim_id in dict.fromkeys([*old.claims, *new.claims]):
        before, after = old.claims.get(claim_id), new.claims.get(claim_id)
        if before is None or after is None or (before.value, before.holds, before.rows) != (after.value, after.holds, after.rows):
            diff.claims.append((claim_id, before, after))
    return diff


def _comparable(value):
    """An absent field, null, [] and {} all mean "nothing here"."""
    return None if value in (None, [], {}) else value


def _changed_counts(old: stats.Stats, new: stats.Stats) -> list[tuple[str, str, int | None, int | None]]:
    changed = []
    for section in ("totals", "counts", "crosstabs"):
        flat_old, flat_new = _flatten(getattr(old, section), section), _flatten(getattr(new, section), section)
        for name in dict.fromkeys([*flat_old, *flat_new]):
            if flat_old.get(name) != flat_new.get(name):
                changed.append((*name, flat_old.get(name), flat_new.get(name)))
    return changed


def _flatten(table: dict, section: str) -> dict[tuple[str, str], int]:
    if section == "totals":
        return {("totals", name): n for name, n in table.items()}
    if section == "counts":
        return {(name, value): n for name, counts in table.items() for value, n in counts.items()}
    return {(name, f"{row} x {col}"): n for name, rows in table.items() for row, cols in rows.items() for col, n in cols.items()}


# ---------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------


def to_markdown(diff: Diff) -> str:
    if diff.empty:
        return f"No change to the pool since {diff.revision}.\n"
    parts = [f"# Changes to the pool since {markdown.text(diff.revision)}"]
    if diff.added or diff.removed or diff.retagged:
        parts += ["", "## Records", ""]
        parts += [f"- added: {markdown.text(key)}" for key in diff.added]
        parts += [f"- removed: {markdown.text(key)}" for key in diff.removed]
        for key, changes in diff.retagged.items():
            parts.append(f"- changed: {markdown.text(key)}: " + "; ".join(_change(*c) for c in changes))
    if diff.claims:
        parts += [
            "",
            "## Claims",
            "",
            markdown.table(
                ["claim", "before", "after", "rows moved"],
                [
                    [
                        markdown.text(claim_id),
                        _outcome(before),
                        _outcome(after),
                        _moved(before.rows if before else [], after.rows if after else []),
                    ]
                    for claim_id, before, after in diff.claims
                ],
            ),
        ]
    if diff.counts:
        parts += [
            "",
            "## Counts",
            "",
            markdown.table(
                ["table", "value", "before", "after"],
                [[markdown.text(t), markdown.text(v), _count(old), _count(new)] for t, v, old, new in diff.counts],
                ["l", "l", "r", "r"],
            ),
        ]
    if diff.cells:
        parts += [
            "",
            "## Gap cells",
            "",
            markdown.table(
                ["table", "cell", "before", "after", "entries moved"],
                [
                    [markdown.text(t), markdown.text(f"{r} x {c}"), len(old), len(new), _moved(old, new)]
                    for (t, r, c), old, new in diff.cells
                ],
                ["l", "l", "r", "r", "l"],
            ),
        ]
    return "\n".join(parts) + "\n"


def _change(name: str, old, new) -> str:
    if isinstance(old, str) and isinstance(new, str) and max(len(old), len(new)) > 40:
        return f"{markdown.text(name)} edited"
    return f"{markdown.text(name)} {markdown.text(_shown(old))} → {markdown.text(_shown(new))}"


def _shown(value) -> str:
    if value is None or value == [] or value == {}:
        return "(none)"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def _outcome(outcome: claims.Outcome | None) -> str:
    if outcome is None:
        return "(not in the ledger)"
    return f"{outcome.value} ({'holds' if outcome.holds else 'FAILS'}, expected {markdown.text(outcome.claim.expected_text)})"


def _count(n: int | None) -> str:
    return "not counted" if n is None else str(n)


def _moved(before: list[str], after: list[str]) -> str:
    """Keys that joined (+) and left (-), e.g. `+gamma -delta`."""
    had, has = set(before), set(after)  # (lists: a key looked up in each made a cell cost keys squared)
    joined = [f"+{key}" for key in after if key not in had]
    left = [f"-{key}" for key in before if key not in has]
    return markdown.text(" ".join(joined + left)) or "(none)"


def to_json(diff: Diff) -> str:
    document = {
        "revision": diff.revision,
        "added": diff.added,
        "removed": diff.removed,
        "changed": {
            key: [{"field": f, "before": o, "after": n} for f, o, n in changes] for key, changes in diff.retagged.items()
        },
        "claims": [
            {"id": i, "before": b.as_json() if b else None, "after": a.as_json() if a else None} for i, b, a in diff.claims
        ],
        "counts": [{"table": t, "value": v, "before": o, "after": n} for t, v, o, n in diff.counts],
        "gap_cells": [{"table": t, "row": r, "column": c, "before": o, "after": n} for (t, r, c), o, n in diff.cells],
    }
    return json.dumps(document, ensure_ascii=False, indent=2, default=str) + "\n"


FORMATS = {"markdown": to_markdown, "json": to_json}
