"""CITATION.cff, where a pool has one (GitHub's "Cite this repository" reads it): what it
cites is the survey, whose title lives in registry.yaml's survey block. validate reports a
CITATION.cff that gives another title, so that the repository and the site cannot cite
the survey under two names."""

from __future__ import annotations

from pathlib import Path

from paperpool.files.problems import Problem
from paperpool.files.yamlio import YamlProblem, dump_yaml, load_yaml
from paperpool.registry import LINKED_FILE, REGISTRY_FILE
from paperpool.rendering.markdown import address

FILE = "CITATION.cff"


def problems(root: Path, survey: dict) -> list[Problem]:
    """The title CITATION.cff cites (its preferred-citation's, else its own), when it
    differs from the registry's survey.title."""
    path = root / FILE
    title = survey.get("title")
    if not isinstance(title, str) or not (path.is_file() or path.is_symlink()):
        return []
    if path.is_symlink():
        return [Problem(FILE, 1, "", LINKED_FILE.format(what=FILE))]
    try:
        document = load_yaml(
            path, empty_hint="write the citation's fields (cff-version, title, authors, ...), or delete the file"
        )
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
    return [
        Problem(
            FILE,
            document.line(*where),
            ".".join(where),
            f"'{given}' differs from {REGISTRY_FILE}'s survey.title ('{title}'); write the title as the registry "
            f"has it (the survey's title is edited in {REGISTRY_FILE})",
        )
    ]


# ---- writing it ------------------------------------------------------------------------

CFF_VERSION = "1.2.0"
MESSAGE = "If you use this paper pool, please cite the survey it belongs to, as below."


def render(registry) -> str | None:
    """CITATION.cff (Citation File Format 1.2.0) made from the registry's survey block:
    the pool as a dataset, and the survey as its preferred citation; None when the block
    gives no title or no authors, which a citation cannot do without."""
    survey = registry.survey
    title, authors = survey.get("title"), [_person(name) for name in survey.get("authors") or [] if isinstance(name, str)]
    if not isinstance(title, str) or not authors:
        return None
    # each list its own copy: the same list twice would be written as a YAML alias, which
    # paperpool's reader (and validate) refuses
    cited = {"type": "article", "title": title, "authors": [dict(person) for person in authors]}
    if isinstance(survey.get("year"), int):
        cited["year"] = survey["year"]
    if isinstance(survey.get("arxiv_id"), str):
        cited |= {
            "journal": "arXiv",
            "identifiers": [{"type": "other", "value": f"arXiv:{survey['arxiv_id']}", "description": "the survey's arXiv id"}],
            "url": f"https://arxiv.org/abs/{survey['arxiv_id']}",
        }
    if registry.publication is not None and registry.publication.url:
        cited["url"] = address(registry.publication.url)  # a URI, as CFF's schema says: a quote or space percent-encoded
    document = {"cff-version": CFF_VERSION, "message": MESSAGE, "type": "dataset", "title": title, "authors": authors}
    if isinstance(survey.get("repository"), str):
        document["repository-code"] = survey["repository"]
    document["preferred-citation"] = cited
    header = f"# Generated from {REGISTRY_FILE}'s survey block by `paperpool publish`; edit the registry, not this file.\n"
    return header + dump_yaml(document)


def _person(name: str) -> dict:
    """A name as CFF's family-names and given-names: "Family, Given" as BibTeX writes it,
    else the last word is the family name; a single word is a name of its own."""
    if "," in name:
        family, given = (part.strip() for part in name.split(",", 1))
        return {"family-names": family, "given-names": given}
    words = name.split()
    if len(words) < 2:
        return {"name": name.strip()}
    return {"family-names": words[-1], "given-names": " ".join(words[:-1])}
