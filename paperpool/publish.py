"""`paperpool publish`: everything the pool publishes, from one validation and one
analysis: the statistics, gap tables and claims as JSON and as text for people, the
exports, README.md's generated block, then the site."""

from __future__ import annotations

from pathlib import Path

from . import claims, export, gaps, readme, stats
from .analysis import Analysis
from .yamlio import write_atomic

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
    files |= {f"pool.{fmt}": export.FORMATS[fmt](pool, "entries") for fmt in ("json", "bib", "ris")}
    return files


def write_outputs(analysis: Analysis, out: Path) -> tuple[list[str], bool]:
    """Write the outputs into `out` (each file replaced whole) and the README's block when
    the pool has a README; returns the files written and whether the block was. The
    README is planned first: one whose markers are wrong stops the run before any file
    is written."""
    has_readme = (analysis.pool.root / readme.README).exists()
    update = readme.plan_update(analysis) if has_readme else None
    files = outputs(analysis)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_atomic(out / name, text, f"{out.name}/{name}")
    if update is not None:
        readme.write(update)
    return list(files), has_readme
