"""The pool commands on the shipped pool and on synthetic pools of chosen sizes, each
timed as a user runs it (a fresh process, start-up included), and the site build split
into paperpool's own generation and the engine's build of the same pages."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .measure import Sample, Series, paperpool, repeat, run

COMMANDS = {
    "validate": ["validate"],
    "stats": ["stats", "--format", "json"],
    "gaps": ["gaps", "--format", "json"],
    "claims": ["claims", "--format", "json"],
    "readme": ["readme"],
}
_STAGE = re.compile(r"^\s*(\w+)\s+(\d+\.\d+) s$")
_NOT_POOL = shutil.ignore_patterns(
    ".git", ".venv", "venv", "build", "node_modules", "__pycache__", ".pytest_cache", "*.egg-info", "tests", "paperpool"
)  # the toolkit's own source, when the pool is its repository


@dataclass
class PoolRow:
    entries: int
    label: str  # "shipped" or "synthetic"
    commands: dict[str, Series] = field(default_factory=dict)  # the cache made by an earlier validate
    cold: Series = field(default_factory=Series)  # validate --no-cache: every record read and checked
    edited: Series = field(default_factory=Series)  # validate after one record's title changed, the cache warm
    own: Series = field(default_factory=Series)  # the build's own stages: validate ... write
    engine: Series = field(default_factory=Series)  # the engine's build of the pages
    pages: int = 0


def shipped_copy(template: Path, folder: Path) -> Path:
    """The pool at `template`, copied so that readme and build write in the copy."""
    out = folder / "pool-shipped"
    shutil.copytree(template, out, ignore=_NOT_POOL, symlinks=True)
    return out


def synthetic(template: Path, folder: Path, entries: int, seed: int) -> Path:
    from .synthpool import write_pool

    out = folder / f"pool-{entries}"
    write_pool(template, out, entries, seed=seed)
    return out


def measure(root: Path, entries: int, label: str, times: int, engine: str) -> PoolRow:
    """Every command on the pool at `root`. The cache of checked records is wherever
    PAPERPOOL_CACHE_DIR says (the benchmark's scratch folder): validate --no-cache first,
    then one validate that fills the cache, then the commands, which use it."""
    row = PoolRow(entries, label)
    row.cold = repeat(lambda: run(paperpool(root, "validate", "--no-cache"), root), times)
    run(paperpool(root, "validate"), root)
    for name, arguments in COMMANDS.items():
        row.commands[name] = repeat(lambda arguments=arguments: run(paperpool(root, *arguments), root), times)
    row.edited = edit_loop(root, times)
    site = root.parent / f"site-{root.name}"
    builds = repeat(lambda: run(paperpool(root, "build", "--engine", engine, "--out", str(site)), root), times)
    row.commands["build"] = builds
    for sample in builds.samples:
        stages = dict(_stages(sample.output))
        engine_seconds = stages.pop(engine, 0.0)
        row.own.samples.append(Sample(sum(stages.values()), None))
        row.engine.samples.append(Sample(engine_seconds, None))
    row.pages = int(re.search(r"built ([\d,]+) pages?", builds.samples[-1].output).group(1).replace(",", ""))
    shutil.rmtree(site, ignore_errors=True)
    return row


def edit_loop(root: Path, times: int) -> Series:
    """validate after a contributor's edit: each run follows a new title in one record
    (written as paperpool writes records), the cache holding the rest. The record is put
    back as it was at the end."""
    from paperpool.files.yamlio import dump_yaml, load_yaml

    path = min((root / "papers").glob("*.yaml"))
    original = path.read_bytes()
    record = load_yaml(path).data
    title = record["title"]
    series = Series()
    try:
        for number in range(times):
            record["title"] = f"{title} (revised {number + 1})"
            path.write_text(dump_yaml(record), encoding="utf-8")
            series.samples.append(run(paperpool(root, "validate"), root))
    finally:
        path.write_bytes(original)
    return series


def _stages(output: str):
    for line in output.splitlines():
        match = _STAGE.match(line)
        if match:
            yield match.group(1), float(match.group(2))


@dataclass
class MainJob:
    run: Series  # `paperpool publish`, start-up included
    engine: Series  # the engine's build of the same pages, inside the same runs

    @property
    def ratio(self) -> float:
        return self.run.median / self.engine.median


def main_job(root: Path, times: int, engine: str) -> MainJob:
    """The main job as scripts/run runs it after installing (`paperpool publish`), on a
    copy of the shipped pool; the engine's own build of its pages is read from the stage
    times the same run prints, so the two are measured side by side."""
    runs = repeat(lambda: run(paperpool(root, "publish", "--engine", engine), root), times)
    engines = Series([Sample(dict(_stages(sample.output)).get(engine, 0.0), None) for sample in runs.samples])
    return MainJob(runs, engines)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
