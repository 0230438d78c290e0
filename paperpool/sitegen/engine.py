"""Turning the rendered markdown into HTML with mkdocs-material or Zensical.

paperpool never imports mkdocs: it writes a config file and runs the engine's own
command, so the pages do not depend on mkdocs internals and Zensical (which reads the
same mkdocs.yml) builds the same site. The config is the pool's mkdocs.yml (checked by
siteconfig) with what the build needs put in: where the pages are, the navigation, the browser's script and
style, and the markdown extensions the pages use, all keys both engines understand. The
engine's own search is turned off: the site searches with Pagefind (see search).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from paperpool.files.problems import PaperpoolError
from paperpool.rendering.markdown import safe_title

from . import paths, search, siteconfig

ENGINES = ("mkdocs", "zensical")
EXTENSIONS = ["tables", "attr_list", "admonition", "pymdownx.superfences", {"toc": {"permalink": True}}]
FEATURES = ["content.code.copy"]
STYLES = [f"{paths.ASSETS}/browser.css", f"{paths.ASSETS}/site.css", f"{paths.ASSETS}/search.css"]
SCRIPTS = [f"{paths.ASSETS}/browser.js", f"{paths.ASSETS}/site.js", f"{paths.ASSETS}/search.js"]
BASE_SECONDS = 300  # the engine's time: mkdocs builds a 10,000-page site in about 110 s on two cores
SECONDS_PER_PAGE = 0.1
# `python -m` would put the working folder, which holds the pool's pages, first on the
# module path; -P leaves it off, so that no file of the pool can stand in for a module
SAFE_PATH = ["-P"]
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def site_config(config: dict, root: Path, docs: Path, site: Path, nav: list, extra_js: list[str]) -> dict:
    # docs and site are folders beside the config file
    """The config the engine runs with: the pool's, plus what the generated pages need."""
    built = dict(config)
    built.setdefault("site_name", "Paper pool")
    for name in siteconfig.WORDS:  # the theme writes some of them into attributes unescaped
        if isinstance(built.get(name), str) and name != "copyright":
            built[name] = safe_title(built[name])
    # relative to the config file, which is written beside them (Zensical requires it)
    built["docs_dir"] = docs.name
    built["site_dir"] = site.name
    # page.html, not page/index.html: the site then also works opened from disk
    built["use_directory_urls"] = False
    built.setdefault("nav", nav)
    theme = built.get("theme") or {}
    theme = {"name": theme} if isinstance(theme, str) else dict(theme)  # `theme: material` is mkdocs's short form
    theme.setdefault("name", siteconfig.THEME)
    # Material fetches Google Fonts unless told not to; the site must work offline
    theme.setdefault("font", False)
    # every code block (the Cite blocks above all) gets the theme's copy button
    features = list(theme.get("features") or [])
    theme["features"] = features + [feature for feature in FEATURES if feature not in features]
    if isinstance(theme.get("custom_dir"), str):
        theme["custom_dir"] = str((root / theme["custom_dir"]).resolve())
    built["theme"] = theme
    built["extra_css"] = list(built.get("extra_css") or []) + STYLES
    built["extra_javascript"] = list(built.get("extra_javascript") or []) + SCRIPTS + extra_js
    built["markdown_extensions"] = _with_extensions(built.get("markdown_extensions") or [])
    built["plugins"] = search.engine_plugins(built.get("plugins"))
    return built


def _with_extensions(extensions: list) -> list:
    names = {next(iter(item)) if isinstance(item, dict) else item for item in extensions}
    return list(extensions) + [item for item in EXTENSIONS if (next(iter(item)) if isinstance(item, dict) else item) not in names]


def write_config(config: dict, path: Path) -> None:
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")


def run(engine: str, config_path: Path, pages: int) -> None:
    """Build the HTML; PaperpoolError with the engine's own complaint when it fails, or
    when it takes longer than BASE_SECONDS plus SECONDS_PER_PAGE for each of `pages` (a
    page of a few kilobytes of pathological markdown, thousands of `[` from a template,
    keeps Python-Markdown busy for hours: a build must end, on CI above all)."""
    if engine not in ENGINES:
        raise PaperpoolError(f"unknown engine '{engine}'; use one of {', '.join(ENGINES)}")
    command = _command(engine, config_path)
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", NO_COLOR="1")
    allowed = BASE_SECONDS + SECONDS_PER_PAGE * pages
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=config_path.parent, check=False, timeout=allowed
        )
    except subprocess.TimeoutExpired:
        raise PaperpoolError(
            f"{engine} build did not finish in {allowed:.0f} s ({BASE_SECONDS} s and "
            f"{SECONDS_PER_PAGE} s a page); a page's markdown may be pathological (thousands of "
            "brackets from a template or a hand-written page); the previous site was left as it was"
        ) from None
    if result.returncode != 0:
        raise PaperpoolError(
            f"{engine} build failed: {_complaint(result.stdout + result.stderr)}; the previous site was left as it was"
        )


def _command(engine: str, config_path: Path) -> list[str]:
    if engine == "mkdocs":
        return [sys.executable, *SAFE_PATH, "-m", "mkdocs", "build", "--strict", "--config-file", str(config_path)]
    if shutil.which("zensical", path=str(Path(sys.executable).parent)) is None and shutil.which("zensical") is None:
        raise PaperpoolError(
            "the zensical engine is not installed; install it with `pip install zensical` (or paperpool[zensical])"
        )
    return [sys.executable, *SAFE_PATH, "-m", "zensical", "build", "--strict", "--config-file", str(config_path)]


def _complaint(output: str) -> str:
    """The engine's first warning or error, on one line."""
    lines = [_ANSI.sub("", line).strip() for line in output.splitlines()]
    for line in lines:
        if line.startswith(("WARNING", "ERROR")) or "Warning:" in line or "Error:" in line:
            return " ".join(line.split())
    meaningful = [line for line in lines if line and not line.startswith(("INFO", "Traceback", "File "))]
    return meaningful[-1] if meaningful else "no output"
