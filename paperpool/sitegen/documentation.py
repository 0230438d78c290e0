"""The pool's own documentation on the site (registry `site.documentation`): a folder of
markdown pages, published under Documentation in the navigation as the hand-written pages
of site/ are. Its README.md is the section's first page (the engine makes it the folder's
index). A link out of the folder, such as ../CONTRIBUTING.md, has no page on the site: it
goes to that file in the survey's repository, or stays text where the registry names none.
A pool without the folder (a copy of its records alone) publishes no documentation.
"""

from __future__ import annotations

import posixpath
import re

from paperpool.files import walk
from paperpool.files.problems import Problem

from ..registry import Registry, linked_step, outside_pool, registry_problem
from . import paths
from .handwritten import read_page

SETTING = "documentation"
INDEX = "README.md"
# a markdown link whose target leaves the folder: [text](../X), with an optional title
_OUT = re.compile(r"\[([^\]\n]*)\]\((\.\./[^)\s]*)\)")


def folder(registry: Registry) -> str | None:
    return registry.section("site").get(SETTING)


def problems(registry: Registry) -> list[Problem]:
    """The folder is one of the pool's, reached through no link (the site would publish
    whatever a link leads to). A pool without it (a copy of the records alone) publishes
    no documentation."""
    rel = folder(registry)
    if rel is None:
        return []
    why = outside_pool(rel)
    linked = None if why else linked_step(registry.root, rel)
    if not why and linked:
        why = f"leads through {linked}, a symbolic link; name the folder itself"
    return (
        [registry_problem(registry.document, ("site", SETTING), f"'{rel}' {why}; name a folder of the pool, e.g. docs")]
        if why
        else []
    )


def pages(registry: Registry) -> tuple[dict[str, str | bytes], list]:
    """The folder's files as the site's (under paths.DOCUMENTATION) and the navigation's
    section of its pages, the README first."""
    rel = folder(registry)
    if rel is None:
        return {}, []
    root = registry.root / rel
    if problems(registry) or not root.is_dir():  # validate says what is wrong; a build of an invalid pool stops before
        return {}, []
    repository = registry.survey.get("repository")
    files, nav = {}, []
    for path in sorted(walk.files(root, rel)):
        if not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        content = read_page(path, root)
        if path.suffix == ".md":
            content = _links_out(content, f"{rel}/{relative}", repository)
            nav.append(f"{paths.DOCUMENTATION}/{relative}")
        files[f"{paths.DOCUMENTATION}/{relative}"] = content
    nav.sort(key=lambda page: (not page.endswith(f"/{INDEX}"), page))
    return files, [{"Documentation": nav}] if nav else []


def _links_out(text: str, page: str, repository: str | None) -> str:
    """Each link leaving the folder (`page`: the page's path in the pool) made a link to
    that path in the repository, whose top the pool's folder is, or its text alone."""

    def replaced(match: re.Match) -> str:
        label, target = match.groups()
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), target))
        if not repository or resolved.startswith("../"):
            return label
        # the registry's address, like any value of a pool file, is encoded (a `)` in it
        # ended the link and what followed was read as raw HTML); imported here, as the
        # pages are made, not when the registry's sections are read (test_architecture)
        from ..rendering.markdown import address

        return f"[{label}](<{address(repository.rstrip('/') + '/blob/HEAD/' + resolved)}>)"

    return _OUT.sub(replaced, text)
