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

from paperpool.analysis import claims, gaps, stats
from paperpool.analysis.analyse import Analysis
from paperpool.files.problems import PaperpoolError
from paperpool.files.yamlio import check_output, write_atomic
from paperpool.formats import citationcff, export
from paperpool.registry import linked_step
from paperpool.sitegen import siteconfig, staging

from . import readme

OUT = "build"  # where the outputs go, inside the pool, unless --out says otherwise


def outputs(analysis: Analysis) -> dict[str, str]:
    """File name -> text of every output but the README and the site."""
    sparse = gaps.sparse_at_most(analysis.registry)
    files = {
        "stats.json": stats.to_json(analysis.stats),
        "stats.md": stats.to_markdown(analysis.stats),
        "gaps.json": gaps.to_json(analysis.gap_tables, sparse),
        "gaps.md": gaps.to_markdown(analysis.gap_tables, sparse),
        "claims.json": claims.to_json(analysis.outcomes),
        "claims.txt": claims.to_text(analysis.outcomes),
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
    return Plan(outputs(analysis), readme.plan_update(analysis) if has_readme else None, citationcff.render(analysis.registry))


def out_folder(root: Path, given: Path | None) -> Path:
    """Where the outputs go: --out as given, else the pool's build/, which must be a
    folder of the pool, not a link (a pull request's `build -> /elsewhere` would have
    publish write there)."""
    if given is not None:
        return given.absolute()  # not resolved: a link on its way is refused as for every output
    linked = linked_step(root, OUT)
    if linked:
        raise PaperpoolError(
            f"{linked}: is a symbolic link, which publish would write its files through; replace the link "
            "with a folder, or give --out DIR (nothing was written)"
        )
    return root.absolute() / OUT


def check(planned: Plan, out: Path, root: Path, site: Path) -> None:
    """Every output refused now, as writing it would refuse it (a link, a device, a pipe,
    a folder in its place), or where the site (`site`) would be built, before the site or
    any file is written: a refusal that says nothing was written has written nothing.
    (The README was checked by its plan.)"""
    outputs = {out / name: f"{out.name}/{name}" for name in planned.files}
    committed = set(staging.committed(out)) & set(planned.files)
    if committed:  # someone's own file, not an earlier publish's output (build/ is not committed)
        raise PaperpoolError(
            f"--out {out}: {min(committed)} is committed to the repository, and publish replaces only its own "
            "outputs; choose another folder, such as build (nothing was written)"
        )
    if planned.readme is not None:
        outputs[planned.readme.path] = readme.README
    if planned.citation is not None:
        outputs[root / citationcff.FILE] = citationcff.FILE
    for path, shown in outputs.items():
        place = path.resolve()
        if place == site or place.is_relative_to(site) or site.is_relative_to(place):
            if site == (root / siteconfig.DEFAULT_SITE).resolve():  # the default site: --out put the files there
                raise PaperpoolError(
                    f"--out {out}: would put {shown} where the site is built ({siteconfig.DEFAULT_SITE}); "
                    "choose another folder (nothing was written)"
                )
            raise PaperpoolError(
                f"{siteconfig.CONFIG}: site_dir: the site would be built where publish writes {shown}; "
                "give the site a folder of its own, such as build/site (nothing was written)"
            )
        if planned.readme is None or path != planned.readme.path:
            check_output(path, shown, new_folders=True)


def write(planned: Plan, out: Path, root: Path) -> None:
    """The outputs into `out`, each file replaced whole, the README's block and the pool's
    CITATION.cff."""
    out.mkdir(parents=True, exist_ok=True)
    for name, text in planned.files.items():
        write_atomic(out / name, text, f"{out.name}/{name}")
    if planned.readme is not None:
        readme.write(readme.refreshed(planned.readme))
    if planned.citation is not None:
        write_atomic(root / citationcff.FILE, planned.citation, citationcff.FILE)
