"""`paperpool publish`: everything the pool publishes, from one validation and one
analysis: the statistics, gap tables and claims as JSON and as text for people, the
exports, README.md's generated block, CITATION.cff (from the registry's survey block), and
the site. The outputs are planned and checked first
(each must be a regular file or a new one) and written only once the site is built, so a
pool the build refuses (its mkdocs.yml, a hand-written page) or an output in the way
changes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import citationcff, claims, export, gaps, readme, stats
from .analysis import Analysis
from .yamlio import check_output, write_atomic

OUT = "build"  # where the outputs go, inside the pool, unless --out says otherwise


def outputs(analysis: Analysis) -> dict[str, str]:
    """File name -> text of every output but the README and the site."""
    sparse = gaps.sparse_at_most(analysis.registry)
    files = {
        "stats.json": stats.to_json(analysis.stats), "stats.md": stats.to_markdown(analysis.stats),
        "gaps.json": gaps.to_json(analysis.gap_tables, sparse), "gaps.md": gaps.to_markdown(analysis.gap_tables, sparse),
        "claims.json": claims.to_json(analysis.outcomes), "claims.txt": claims.to_text(analysis.outcomes),
    }
    pool = analysis.pool
    files |= {f"{kind}.csv": export.FORMATS["csv"](pool, kind) for kind in pool.registry.fields if kind in pool.registry.csv}
    files |= {f"pool.{fmt}": export.FORMATS[fmt](pool, "entries") for fmt in ("json", "bib", "ris", "csljson")}
    return files


@dataclass
class Plan:
    files: dict[str, str]  # name -> text, for the output folder
    readme: readme.Update | None  # None: the pool has no README.md
    citation: str | None  # CITATION.cff at the pool's root; None: the survey block names no title or authors


def plan(analysis: Analysis) -> Plan:
    """Every output but the site, computed before anything is written: a README whose
    markers are wrong stops the run here."""
    has_readme = (analysis.pool.root / readme.README).exists()
    return Plan(outputs(analysis), readme.plan_update(analysis) if has_readme else None,
                citationcff.render(analysis.registry))


def check(planned: Plan, out: Path, root: Path) -> None:
    """Every output refused now, as writing it would refuse it (a link, a device, a pipe,
    a folder in its place), before the site or any file is written: a refusal that says
    nothing was written has written nothing. (The README was checked by its plan.)"""
    for name in planned.files:
        check_output(out / name, f"{out.name}/{name}", new_folders=True)
    if planned.citation is not None:
        check_output(root / citationcff.FILE, citationcff.FILE)


def write(planned: Plan, out: Path, root: Path) -> None:
    """The outputs into `out`, each file replaced whole, the README's block and the pool's
    CITATION.cff."""
    out.mkdir(parents=True, exist_ok=True)
    for name, text in planned.files.items():
        write_atomic(out / name, text, f"{out.name}/{name}")
    if planned.readme is not None:
        readme.write(planned.readme)
    if planned.citation is not None:
        write_atomic(root / citationcff.FILE, planned.citation, citationcff.FILE)
