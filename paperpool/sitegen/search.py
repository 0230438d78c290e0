"""The site's search: a Pagefind index of the built pages, and the engine's own search
turned off.

Material's search builds a lunr index in the reader's browser without a stemmer, and
with one its prefix queries miss the stemmed terms ("delegation" finds nothing in pages
that say "Delegate"), so neither setting finds words. Pagefind indexes the built HTML
once, at build time, stems each word in the page's language and ships a small index that
the browser fetches in pieces, with its own search UI (assets/search.js opens it from
the header). It runs over either engine's output, since both write the same article
element around a page's content.

Pagefind's index is fetched by the browser, so it needs the site served over http;
opened from disk, the header's search says so instead of loading anything.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from paperpool.files.problems import PaperpoolError

INDEX = "pagefind"  # the folder of the built site that holds the index and its UI
# What is indexed: a page's content (its title, text, tables and code), not the header,
# the navigation, the table of contents or the footer, which every page repeats; the
# permalink marks and the engine's page buttons are left out of the text.
ROOT_SELECTOR = "article.md-content__inner"
EXCLUDED = (".headerlink", ".md-content__button")
# Zensical writes an empty index of its own even with its search off; it is removed
ENGINE_INDEX = "search.json"
BASE_SECONDS = 60  # Pagefind indexes a few hundred pages in under a second
SECONDS_PER_PAGE = 0.05


def engine_plugins(plugins) -> list:
    """The pool's plugins (a list or a mapping, as mkdocs reads either) with the engine's
    search turned off, so that no browser-side index or worker is built: both Material
    and Zensical read `search: {enabled: false}`."""
    if isinstance(plugins, dict):
        plugins = [{name: options} if options is not None else name for name, options in plugins.items()]
    kept = [item for item in plugins or [] if _name(item) != "search"]
    return kept + [{"search": {"enabled": False}}]


def _name(item) -> str | None:
    return next(iter(item)) if isinstance(item, dict) and item else item if isinstance(item, str) else None


def index(site: Path, pages: int) -> None:
    """Index the built site in `site` into site/pagefind/ (and remove the engine's empty
    index, if it wrote one); PaperpoolError when Pagefind is
    missing, fails, or takes longer than BASE_SECONDS plus SECONDS_PER_PAGE a page. It
    runs in the build's scratch folder, so that no pagefind.yml of anyone else's (the
    pool's, the working folder's) changes what it does."""
    command = [
        str(_executable()),
        "--site",
        str(site),
        "--output-subdir",
        INDEX,
        "--keep-index-url",
        "--root-selector",
        ROOT_SELECTOR,
        "--quiet",
    ]
    for selector in EXCLUDED:
        command += ["--exclude-selectors", selector]
    allowed = BASE_SECONDS + SECONDS_PER_PAGE * pages
    try:
        result = subprocess.run(command, capture_output=True, text=True, cwd=site.parent, check=False, timeout=allowed)
    except subprocess.TimeoutExpired:
        raise PaperpoolError(
            f"the search index (Pagefind) was not built in {allowed:.0f} s; the previous site was left as it was"
        ) from None
    except OSError as exc:
        raise PaperpoolError(
            f"the search index could not be built: Pagefind did not start ({exc.strerror}); "
            "reinstall it with `pip install 'pagefind[extended]'`"
        ) from None
    if result.returncode != 0 or not (site / INDEX / "pagefind.js").is_file():
        output = " ".join((result.stderr or result.stdout).split())[-500:] or "no output"
        raise PaperpoolError(f"the search index (Pagefind) failed: {output}; the previous site was left as it was")
    (site / ENGINE_INDEX).unlink(missing_ok=True)


def _executable() -> Path:
    try:
        from pagefind.service import get_executable
    except ImportError:
        get_executable = None
    executable = get_executable() if get_executable else None
    if executable is None:
        raise PaperpoolError(
            "the site's search needs Pagefind, which is not installed; install it with "
            "`pip install 'pagefind[extended]'` (a dependency of paperpool)"
        )
    return executable
