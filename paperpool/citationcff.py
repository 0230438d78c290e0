"""CITATION.cff, where a pool has one (GitHub's "Cite this repository" reads it): what it
cites is the survey, whose title lives in registry.yaml's survey block. validate reports a
CITATION.cff that gives another title, so that the repository and the site cannot cite
the survey under two names."""

from __future__ import annotations

from pathlib import Path

from .problems import Problem
from .registry import REGISTRY_FILE
from .yamlio import YamlProblem, load_yaml

FILE = "CITATION.cff"


def problems(root: Path, survey: dict) -> list[Problem]:
    """The title CITATION.cff cites (its preferred-citation's, else its own), when it
    differs from the registry's survey.title."""
    path = root / FILE
    title = survey.get("title")
    if not isinstance(title, str) or not (path.is_file() or path.is_symlink()):
        return []
    try:
        document = load_yaml(path, empty_hint="write the citation's fields (cff-version, title, authors, ...), or delete the file")
    except YamlProblem as exc:
        return [Problem(FILE, exc.line, exc.field, exc.message)]
    except OSError as exc:
        return [Problem(FILE, 1, "", f"cannot be read ({exc.strerror}); make it a readable file")]
    data = document.data if isinstance(document.data, dict) else {}
    preferred = data.get("preferred-citation")
    where = ("preferred-citation", "title") if isinstance(preferred, dict) and "title" in preferred else ("title",)
    given = preferred["title"] if len(where) == 2 else data.get("title")
    if given is None or given == title:
        return []
    return [Problem(FILE, document.line(*where), ".".join(where),
                    f"'{given}' differs from {REGISTRY_FILE}'s survey.title ('{title}'); write the title as the registry "
                    f"has it (the survey's title is edited in {REGISTRY_FILE})")]
