"""`paperpool new-survey DIR`: a working pool for another survey, from the skeleton
shipped in paperpool/publishing/skeleton/ (files ending in .j2 are rendered with the survey's
title, the date and how to install this paperpool again; the others are copied as they
are). The survey pins paperpool once, in its requirements.txt (paperpool/publishing/release.py says
what the line is), and its workflow and pre-commit hooks name paperpool's repository at
this release's tag.

The pool is assembled in a temporary folder beside DIR and renamed into place once it
validates, so DIR is either untouched or complete.
"""

from __future__ import annotations

import datetime as dt
import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import jinja2

from paperpool.files.problems import PaperpoolError, printable
from paperpool.files.yamlio import Document, new_folder
from paperpool.pool import fileschemas
from paperpool.project import Project
from paperpool.registry import (
    BIDI_CONTROLS,
    CONTROL_CHARACTERS,
    REGISTRY_FILE,
    refused_character_message,
)
from paperpool.sitegen.configrules import check_settings

from . import readme, release

# Names a Python package cannot ship as they are (hidden files, a folder with a dot)
RENAMES = {"gitignore": ".gitignore", "github": ".github", "pre-commit-config.yaml.j2": ".pre-commit-config.yaml.j2"}
EMPTY_FOLDERS = ("exclusions",)
SKIP = {"__init__.py", "__pycache__"}
SITE_URL = re.compile(r"^https://[^\s/?#]+(/[^\s?#]*)?\Z")


SITE_URL_EXAMPLE = "https://OWNER.github.io/REPO/"


def create(
    target: Path, title: str | None, today: dt.date, site_url: str | None = None, this: release.Release | None = None
) -> list[str]:
    """Write the new pool to `target` (a new or empty folder); the files written. With
    `site_url` (where the site will be published), mkdocs.yml sets it: the sitemap then
    lists every page, and the feed's links are absolute. `this` is the running paperpool's
    release (paperpool/publishing/release.py), which the survey pins."""
    target = target.absolute()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise PaperpoolError(f"{target}: already exists and is not empty; new-survey starts a pool in a new or empty folder")
    # the title given, else one made of the folder's name, which may hold anything a name may
    said = "--title" if title is not None else f"the folder's name {printable(repr(target.name))} (the title without --title)"
    fix = "" if title is not None else "; give --title, or choose another folder name"
    title = title if title is not None else f"The {target.name} survey"
    if not title.strip() or any(ch in title for ch in "\r\n"):
        raise PaperpoolError(f"{said}: give the survey's title on one line{fix}")
    invisible = CONTROL_CHARACTERS.search(title) or BIDI_CONTROLS.search(title)
    if invisible:  # the registry refuses them: the new pool would not load
        raise PaperpoolError(f"{said}: {refused_character_message(invisible.group())}{fix}")
    if site_url is not None and not SITE_URL.match(site_url):
        raise PaperpoolError(
            f"--site-url: '{site_url}' is not an https:// address; give the address the site will be published "
            f"at, such as {SITE_URL_EXAMPLE}"
        )
    if site_url is not None and (wrong := check_settings(Document(target / "mkdocs.yml", {"site_url": site_url}), target, False)):
        # as validate would say of mkdocs.yml, but for the trust a pool's maintainers may give it
        raise PaperpoolError(f"--site-url: {wrong[0].message.split(', or pass --trust-config')[0]}")
    _refuse_inside_a_pool(target)
    this = this or release.current()  # how the survey installs this paperpool again
    context = {
        "title": title,
        "today": today.isoformat(),
        "year": today.year,
        "version": this.version,
        "requirement": this.requirement,
        "repository": this.repository,
        "rev": this.rev,
        "action": this.action,
        "site_url": site_url,
        "site_url_example": SITE_URL_EXAMPLE,
    }
    with new_folder(target) as staging:
        written = _copy(resources.files("paperpool.publishing.skeleton"), staging, context, Path())
        for folder in EMPTY_FOLDERS:
            (staging / folder).mkdir()
            (staging / folder / ".gitkeep").touch()  # git keeps no empty folder, and validate needs it in a clone (CI's)
        written += fileschemas.install(staging)  # editors complete and check the files from the start
        _fill_readme(staging)
    return sorted(written + [f"{folder}/" for folder in EMPTY_FOLDERS])


def _refuse_inside_a_pool(target: Path) -> None:
    for folder in [target, *target.parents]:
        if (folder / REGISTRY_FILE).is_file():
            raise PaperpoolError(f"{target}: inside the pool at {folder}; start a new survey in a folder of its own")


def _copy(source: Traversable, destination: Path, context: dict, relative: Path) -> list[str]:
    written = []
    for item in sorted(source.iterdir(), key=lambda t: t.name):
        if item.name in SKIP:
            continue
        name = RENAMES.get(item.name, item.name)
        if item.is_dir():
            (destination / name).mkdir()
            written += _copy(item, destination / name, context, relative / name)
            continue
        text = item.read_text(encoding="utf-8")
        if name.endswith(".j2"):
            name = name.removesuffix(".j2")
            text = jinja2.Environment(keep_trailing_newline=True, autoescape=False).from_string(text).render(context)
        (destination / name).write_text(text, encoding="utf-8")
        written.append(str(relative / name))
    return written


def _fill_readme(root: Path) -> None:
    """The README's generated block, so that `readme --check` passes from the start."""
    readme.write(readme.plan_update(Project(root).analysis))
