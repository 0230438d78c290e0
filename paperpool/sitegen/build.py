"""`paperpool build`: validate, the site's parts, analyse, render, write, build, replace.

The new site is built beside the old one and swapped in only when the engine succeeded,
so a failed or interrupted build leaves the last good site as it was.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from paperpool.files import walk
from paperpool.files.oserrors import shown_path
from paperpool.files.problems import (
    InvalidPool,
    PaperpoolError,
    errors,
    plural,
    printable,
)
from paperpool.formats import csljson, export
from paperpool.pool import fileschemas
from paperpool.rendering.markdown import safe_title
from paperpool.rendering.render import Renderer

from ..project import Project
from ..registry import REGISTRY_FILE, linked_step
from . import (
    configrules,
    datasets,
    documentation,
    engine,
    feed,
    parts,
    paths,
    search,
    siteconfig,
    staging,
)
from .analysis import SiteAnalysis, for_site
from .drawing import Drawing
from .figures import draw
from .handwritten import read_page
from .pages import Page, page_context, plan, recent

# the engine reads a page's front matter with libyaml where it has it, as paperpool does
ENGINE_YAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MARKER = ".paperpool-site"  # marks a folder as a site paperpool built, safe to replace
ASSET_FILES = ("browser.js", "browser.css", "site.css", "site.js", "search.js", "search.css")
INTRO = "index.md"  # the pool's own home-page text, shown above the generated parts


@dataclass
class Result:
    out: Path
    pages: int
    timings: list[tuple[str, float]] = field(default_factory=list)


def build(
    project: Project,
    out: Path | None = None,
    engine_name: str = "mkdocs",
    report: Callable[[str, float], None] | None = None,
    extra_js: list[str] | None = None,
    extra_files: dict[str, str] | None = None,
    keep_pages: Path | None = None,
    trust_config: bool = False,
    site_url: str | None = None,
) -> Result:
    """Build the site of the project's pool into `out` (validated and analysed by the
    project, once, whoever asks first); `extra_files` are added to the docs and `extra_js` to
    every page (the live preview's reload script). With `keep_pages`, the generated
    pages and data files (not the charts or paperpool's own assets) are also written
    there, for reviewing what the templates produce. With `trust_config`, mkdocs.yml
    may use the settings that run code, read files or reach the network. `site_url`, where
    the site will be published, overrides mkdocs.yml's."""
    root = project.root
    config = _accepted_config(root, trust_config, site_url)
    option = "--out" if out is not None else f"{siteconfig.CONFIG}: site_dir"
    out = out.resolve() if out is not None else _default_out(root, config)
    handwritten = (root / config.docs_dir).resolve()
    _check_out(root, out, handwritten, option)
    if keep_pages is not None:
        keep_pages = keep_pages.resolve()
        _check_out(root, keep_pages, handwritten, "--keep-pages")
    stage = _Stages(report)
    with stage("validate"):
        pool = project.buildable_pool("nothing was built, the previous site is unchanged")
        _check_names(config, pool.registry.survey)
        for folder, name in ((out, option), (keep_pages, "--keep-pages")):
            if folder is not None:
                _check_pool_files(folder, pool.registry, name)
    made = []  # what the site's parts add (the trace gallery and corpora: traces validated, measured and drawn)
    for part in parts.registered():
        with stage(part.name):
            made.append(part.make(pool.registry))
    with stage("analyse"):
        analysis = for_site(project.analysis)
        figures = draw(analysis)
    with staging.staging(out, MARKER) as scratch, Drawing(figures.charts, scratch / "charts") as charts:
        with stage("render"):
            intro = _read_intro(handwritten)
            pages = plan(analysis, figures, intro, [page for one in made for page in one.pages])
            files = render(analysis, pages, config.get("site_url")) | {
                path: text for one in made for path, text in one.files.items()
            }
            documented, documented_nav = documentation.pages(pool.registry)
            files |= documented
            files |= _handwritten(handwritten, set(files) | set(charts.placeholders(paths.CHARTS))) | (extra_files or {})
        with stage("write"):
            docs, site = scratch / "docs", scratch / "site"
            write_files(docs, files | charts.placeholders(paths.CHARTS))
            config_path = scratch / siteconfig.CONFIG
            nav = [{safe_title(page.title): page.path} for page in pages if page.in_nav] + documented_nav
            nav += _handwritten_nav(handwritten)
            engine.write_config(
                engine.site_config(
                    config.settings | siteconfig.survey_settings(pool.registry.survey), root, docs, site, nav, extra_js or []
                ),
                config_path,
            )
        with stage(engine_name):
            engine.run(engine_name, config_path, len(files))
            if paths.FEED in files:  # every page the engine wrote links the feed in its head
                feed.link_from_pages(
                    site,
                    [paths.html(path) for path in files if path.endswith(".md")] + [paths.NOT_FOUND],
                    analysis.registry,
                    config.get("site_url"),
                )
        with stage("search"):  # the index of the built pages, which the header's search reads
            search.index(site, len(files))
        with stage("charts"):  # what of the drawing the engine's build did not cover
            charts.finish(site / paths.CHARTS)
        with stage("replace"):
            # the build's time tells the live preview that a new site has landed
            (site / MARKER).write_text(
                f"built by paperpool at {time.time()}; `paperpool build` replaces this folder\n", encoding="utf-8"
            )
            staging.swap(site, out, scratch)
    if keep_pages is not None:
        keep(files, keep_pages)
    return Result(out, len(pages), stage.timings)


def keep(files: dict[str, str | bytes], folder: Path) -> None:
    """The generated pages and data files, without the charts and paperpool's own assets."""
    generated = {
        path: text
        for path, text in files.items()
        if not path.startswith((paths.CHARTS, *(f"{paths.ASSETS}/{name}" for name in ASSET_FILES)))
    }
    with staging.staging(folder, MARKER) as scratch:
        write_files(
            scratch / "pages", generated | {MARKER: "generated pages; `paperpool build --keep-pages` replaces this folder\n"}
        )
        staging.swap(scratch / "pages", folder, scratch)


def render(analysis: SiteAnalysis, pages: list[Page], site_url: str | None) -> dict[str, str]:
    """Every generated file of the docs folder but the parts' own: path -> text."""
    texts = Renderer(analysis.pool.root, parts.template_packages()).render_all(
        [(page.template, page_context(analysis, page)) for page in pages], records=len(analysis.pool.all_records())
    )
    files = {page.path: front_matter(page) + text for page, text in zip(pages, texts, strict=True)}
    # the two data sets share one size: each repeats its values' labels per record
    files[f"{paths.DATA}/entries.js"] = datasets.script("entries", datasets.entries(analysis))
    files[f"{paths.DATA}/exclusions.js"] = datasets.script(
        "exclusions", datasets.exclusions(analysis), datasets.MAX_DATA_BYTES - len(files[f"{paths.DATA}/entries.js"])
    )
    if any(page.path == paths.RECENT for page in pages):  # the feed goes with its page: the entries' dates
        files[paths.FEED] = feed.atom(analysis, recent(analysis), site_url)
    files |= downloads(analysis)
    for name in ASSET_FILES:
        files[f"{paths.ASSETS}/{name}"] = resources.files("paperpool.sitegen.assets").joinpath(name).read_text(encoding="utf-8")
    return files


def front_matter(page: Page) -> str:
    """The page's title for the browser tab, the navigation and search, set explicitly:
    left to itself, the engine takes it from the first heading, and mkdocs-material
    writes that into <title> with its HTML entities decoded, so a title holding
    `&lt;/title&gt;&lt;script&gt;` would become live markup there. A wide page hides
    the table of contents to give its table the room.
    Written as YAML the engine's reader (libyaml) takes whole: JSON's escapes, such as an
    emoji's surrogate pair, are refused by it, and a block it refuses stays in the page,
    where the title, never escaped for markdown, would be read as markdown. So what is
    written is read back as the engine reads it, and must come back the same."""
    data = {"title": safe_title(page.title)} | ({"hide": ["toc"]} if page.wide else {})
    block = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1_000_000)
    try:
        read = yaml.load(block, Loader=ENGINE_YAML)
    except yaml.YAMLError:
        read = None
    if read != data:
        raise RuntimeError(f"the front matter of {page.path} does not read back as written")  # ours to fix: an internal error
    return f"---\n{block}---\n\n"


def downloads(analysis: SiteAnalysis) -> dict[str, str]:
    """The whole pool in each format, and each entry's citation in each citation format
    (its page's Cite block links them). Each entry is written once, in the analysis, and
    a pool's file joins them (bibtexparser refuses a library in which two records share
    a citation key)."""
    pool = analysis.pool
    keys = sorted(analysis.bibtex)
    files = {
        paths.pool_download("bib"): "\n".join(analysis.bibtex[key] for key in keys),
        paths.pool_download("ris"): "\n".join(analysis.ris[key] for key in keys),
        paths.pool_download("csljson"): csljson.dumps([analysis.csl[key] for key in keys]),
        paths.pool_download("json"): export.FORMATS["json"](pool, "entries"),
    }
    files |= {paths.entry_download(key, fmt): analysis.citation(key, fmt) for key in keys for fmt in paths.CITATION_FORMATS}
    # the schemas an editor or another tool checks the pool's files with, made from its registry
    files |= {paths.schema_download(name): text for name, text in fileschemas.texts(pool.registry).items()}
    for kind in pool.registry.fields:
        if kind in pool.registry.csv:  # a registry without a CSV layout has no CSV to offer
            files[f"{paths.DOWNLOAD_FILES}/{kind}.csv"] = export.FORMATS["csv"](pool, kind)
    return files


def write_files(docs: Path, files: dict[str, str | bytes]) -> None:
    for relative, text in files.items():
        path = docs / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")


def _check_out(root: Path, out: Path, handwritten: Path, option: str = "--out") -> None:
    """Refuse an output folder whose replacement would lose something: the pool, its
    pages, or a folder paperpool did not build."""
    root = root.resolve()
    if out == root or root.is_relative_to(out) or out == handwritten or handwritten.is_relative_to(out):
        raise PaperpoolError(
            f"{option} {out}: would replace the pool's own files; choose a folder of its own, such as build/site"
        )
    if out.is_relative_to(handwritten):  # the next build would publish it as hand-written pages
        raise PaperpoolError(
            f"{option} {out}: is inside the hand-written pages ({handwritten.name}/), which every build "
            "copies onto the site; choose a folder outside it, such as build/pages"
        )
    if out.is_file():
        raise PaperpoolError(f"{option} {out}: is a file; choose a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise PaperpoolError(
            f"{option} {out}: holds files paperpool did not build; choose an empty or new folder (nothing was changed)"
        )
    committed = staging.committed(out)
    if committed:  # a marker proves nothing when a pull request can commit one, beside the pool's records
        raise PaperpoolError(
            f"{option} {out}: holds files committed to the repository ({committed[0]}"
            f"{f' and {len(committed) - 1:,} more' if len(committed) > 1 else ''}), which a build never "
            "replaces; choose a folder of its own, such as build/site (nothing was changed)"
        )


def _check_pool_files(out: Path, registry, option: str) -> None:
    """Refuse an output folder that is, holds or lies in a folder or file the pool is read
    from (its records, claims, templates): replacing it would delete them, marker or not."""
    found = siteconfig.overlapping(out, registry)
    if found is not None:
        raise PaperpoolError(
            f"{option} {out}: the pool is read from {printable(shown_path(found))}, which building "
            "there would replace; choose a folder of its own, such as build/site (nothing was changed)"
        )


def default_out(root: Path) -> Path:
    """Where `build` writes the site without --out (`publish` keeps its other outputs
    out of it): mkdocs.yml's site_dir, else build/site."""
    return _default_out(root, siteconfig.load(root)[0])


def _default_out(root: Path, config: siteconfig.SiteConfig) -> Path:
    """The site folder mkdocs.yml names (or the default one), a folder of the pool: a
    link on the way (`build -> ../elsewhere`, laid by a pull request) would have the build
    write, and replace, whatever it points at. An --out given on the command line is the
    maintainer's own choice and may be anywhere."""
    linked = linked_step(root, config.site_dir)
    if linked:
        raise PaperpoolError(
            f"{linked}: is a symbolic link, which the site ({siteconfig.CONFIG}'s site_dir, or its default "
            f"{config.site_dir}) would be written through; replace the link with a folder, or give --out DIR "
            "(nothing was built)"
        )
    return (root / config.site_dir).resolve()


def _check_names(config: siteconfig.SiteConfig, survey: dict) -> None:
    """mkdocs.yml may not name the site otherwise than the registry (validate says the same)."""
    problems = siteconfig.survey_problems(config, survey)
    if problems:
        raise InvalidPool(
            problems,
            f"{siteconfig.CONFIG} contradicts {REGISTRY_FILE} ({plural(len(problems), 'problem')} above); "
            "nothing was built, the previous site is unchanged",
        )


def _accepted_config(root: Path, trusted: bool, site_url: str | None = None) -> siteconfig.SiteConfig:
    config, problems = siteconfig.check(root, trusted)
    if site_url is not None:
        if not configrules.WEB.match(site_url):
            raise PaperpoolError(
                f"--site-url: '{printable(site_url)}' is not an http(s) address; give the address the site "
                "will be published at, such as https://owner.github.io/repository/"
            )
        config.settings["site_url"] = site_url
    if errors(problems):
        raise InvalidPool(
            errors(problems),
            f"{siteconfig.CONFIG} or the hand-written pages are not accepted "
            f"({plural(len(errors(problems)), 'problem')} above); nothing was built, "
            "the previous site is unchanged",
        )
    return config


def _read_intro(handwritten: Path) -> str:
    path = handwritten / INTRO
    if not path.is_file():
        return ""
    text = read_page(path, handwritten)
    # the generated home page has its own title; the intro's first heading is dropped
    lines = text.lstrip().splitlines()
    return "\n".join(lines[1:] if lines and lines[0].startswith("# ") else lines).strip()


def _handwritten(handwritten: Path, generated: set[str]) -> dict[str, str]:
    """The pool's own pages and files besides the intro, copied as they are; a name the
    build or the engine writes is refused rather than silently overwritten."""
    if not handwritten.is_dir():
        return {}
    files = {}
    for path in sorted(walk.files(handwritten, handwritten.name)):
        relative = path.relative_to(handwritten).as_posix()
        if not path.is_file() or relative == INTRO:
            continue
        if paths.reserved(relative, generated):
            raise PaperpoolError(f"{handwritten.name}/{relative}: the build writes this path itself; rename or move your file")
        files[relative] = read_page(path, handwritten)
    return files


def _handwritten_nav(handwritten: Path) -> list:
    if not handwritten.is_dir():
        return []
    return [
        path.relative_to(handwritten).as_posix()
        for path in sorted(walk.files(handwritten, handwritten.name))
        if path.suffix == ".md"
        if path.relative_to(handwritten).as_posix() != INTRO
    ]


class _Stages:
    def __init__(self, report):
        self.report = report
        self.timings: list[tuple[str, float]] = []

    @contextlib.contextmanager
    def __call__(self, name: str):
        start = time.perf_counter()
        yield
        elapsed = time.perf_counter() - start
        self.timings.append((name, elapsed))
        if self.report:
            self.report(name, elapsed)
