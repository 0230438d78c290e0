"""Turning the rendered markdown into HTML with mkdocs-material or Zensical.

paperpool never imports mkdocs: it writes a config file and runs the engine's own
command, so the pages do not depend on mkdocs internals and Zensical (which reads the
same mkdocs.yml) builds the same site. The config is the pool's mkdocs.yml with what
the build needs put in: where the pages are, the navigation, the browser's script and
style, and the markdown extensions the pages use, all keys both engines understand.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from ..inputs import read_input
from ..problems import PaperpoolError
from ..yamlio import YamlProblem, check_depth
from . import paths

CONFIG = "mkdocs.yml"
DEFAULT_DOCS = "site"
DEFAULT_SITE = "build/site"
ENGINES = ("mkdocs", "zensical")
EXTENSIONS = ["tables", "attr_list", "admonition", "pymdownx.superfences", {"toc": {"permalink": True}}]
STYLES = [f"{paths.ASSETS}/browser.css", f"{paths.ASSETS}/site.css"]
SCRIPTS = [f"{paths.ASSETS}/browser.js"]
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def read_config(root: Path) -> dict:
    """The pool's mkdocs.yml as a mapping ({} when there is none)."""
    path = root / CONFIG
    if not path.is_file():
        return {}
    text = read_input(path)
    try:
        check_depth(text)  # safe_load recurses once per level of nesting
        config = yaml.safe_load(text)
    except YamlProblem as exc:
        raise PaperpoolError(f"{CONFIG}:{exc.line}: {exc.message}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        problem = str(getattr(exc, "problem", None) or exc)
        tag = re.search(r"constructor for the tag '([^']*)'", problem)
        if tag:  # !!python/name:... and the like: the config names code to run
            shown = tag.group(1).replace("tag:yaml.org,2002:", "!!")
            raise PaperpoolError(f"{CONFIG}{where}: YAML tag '{shown}' is not allowed (it names code to run); "
                                 "remove it, or give the setting a plain value") from None
        raise PaperpoolError(f"{CONFIG}{where}: not valid YAML ({problem}); fix the file") from None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise PaperpoolError(f"{CONFIG}: must be a mapping of settings (site_name, theme, ...); fix the file")
    _check_settings(config)
    return config


# The settings paperpool reads or adds to, and what each must be (the engine checks the rest).
SETTING_TYPES = {"site_url": (str, "a web address, such as https://example.org/survey/"),
                 "extra_css": (list, "a list of style sheets"), "extra_javascript": (list, "a list of scripts"),
                 "markdown_extensions": (list, "a list of extensions")}


def _check_settings(config: dict) -> None:
    if config.get("theme") is not None and not isinstance(config["theme"], (str, dict)):
        raise PaperpoolError(f"{CONFIG}: theme: is {kind_of(config['theme'])}; give the theme's name, or a mapping such as "
                             "`theme: {name: material}`")
    for name, (kind, what) in SETTING_TYPES.items():
        if config.get(name) is not None and not isinstance(config[name], kind):
            raise PaperpoolError(f"{CONFIG}: {name}: is {kind_of(config[name])}; give {what}")
    for index, item in enumerate(config.get("markdown_extensions") or []):
        if not (isinstance(item, str) or isinstance(item, dict) and len(item) == 1 and isinstance(next(iter(item)), str)):
            raise PaperpoolError(f"{CONFIG}: markdown_extensions.{index}: is {kind_of(item)}; give an extension's name, or its "
                                 "name with its settings, such as `- toc: {permalink: true}`")


def kind_of(value) -> str:
    """What a YAML value is, for a message: a list, a mapping, a number, text."""
    kinds = {list: "a list", dict: "a mapping", str: "text", bool: "a boolean", int: "a number", float: "a number"}
    return kinds.get(type(value), "a " + type(value).__name__)


def site_config(config: dict, root: Path, docs: Path, site: Path, nav: list, extra_js: list[str]) -> dict:
    # docs and site are folders beside the config file
    """The config the engine runs with: the pool's, plus what the generated pages need."""
    built = dict(config)
    built.setdefault("site_name", "Paper pool")
    # relative to the config file, which is written beside them (Zensical requires it)
    built["docs_dir"] = docs.name
    built["site_dir"] = site.name
    # page.html, not page/index.html: the site then also works opened from disk
    built["use_directory_urls"] = False
    built.setdefault("nav", nav)
    theme = built.get("theme") or {"name": "material"}
    theme = {"name": theme} if isinstance(theme, str) else dict(theme)  # `theme: material` is mkdocs's short form
    # Material fetches Google Fonts unless told not to; the site must work offline
    theme.setdefault("font", False)
    if isinstance(theme.get("custom_dir"), str):
        theme["custom_dir"] = str((root / theme["custom_dir"]).resolve())
    built["theme"] = theme
    built["extra_css"] = list(built.get("extra_css") or []) + STYLES
    built["extra_javascript"] = list(built.get("extra_javascript") or []) + SCRIPTS + extra_js
    built["markdown_extensions"] = _with_extensions(built.get("markdown_extensions") or [])
    return built


def _with_extensions(extensions: list) -> list:
    names = {next(iter(item)) if isinstance(item, dict) else item for item in extensions}
    return list(extensions) + [item for item in EXTENSIONS if (next(iter(item)) if isinstance(item, dict) else item) not in names]


def write_config(config: dict, path: Path) -> None:
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")


def run(engine: str, config_path: Path) -> None:
    """Build the HTML; PaperpoolError with the engine's own complaint when it fails."""
    if engine not in ENGINES:
        raise PaperpoolError(f"unknown engine '{engine}'; use one of {', '.join(ENGINES)}")
    command = _command(engine, config_path)
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", NO_COLOR="1")
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=config_path.parent, check=False)
    if result.returncode != 0:
        raise PaperpoolError(f"{engine} build failed: {_complaint(result.stdout + result.stderr)}; the previous site was left as it was")


def _command(engine: str, config_path: Path) -> list[str]:
    if engine == "mkdocs":
        return [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config_path)]
    if shutil.which("zensical", path=str(Path(sys.executable).parent)) is None and shutil.which("zensical") is None:
        raise PaperpoolError("the zensical engine is not installed; install it with `pip install zensical` (or paperpool[zensical])")
    return [sys.executable, "-m", "zensical", "build", "--strict", "--config-file", str(config_path)]


def _complaint(output: str) -> str:
    """The engine's first warning or error, on one line."""
    lines = [_ANSI.sub("", line).strip() for line in output.splitlines()]
    for line in lines:
        if line.startswith(("WARNING", "ERROR")) or "Warning:" in line or "Error:" in line:
            return " ".join(line.split())
    meaningful = [line for line in lines if line and not line.startswith(("INFO", "Traceback", "File "))]
    return meaningful[-1] if meaningful else "no output"
