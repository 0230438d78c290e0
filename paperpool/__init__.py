"""paperpool: a survey's curated paper pool as data, checked, measured and published.

The library's API is two names, the ones every command uses:

    import paperpool

    project = paperpool.Project(Path("my-survey"))  # the folder holding registry.yaml
    pool, problems = project.checked                # every record read and checked
    analysis = project.analysis                     # counts, gap tables, claims: once
    analysis.totals, analysis.stats, analysis.gap_tables, analysis.outcomes

    past = paperpool.analyse(project.valid_pool(), as_of=date(2026, 5, 4))

Both are imported on first use, so that `import paperpool` (and the registry, which
`paperpool validate` reads in a pre-commit hook) stays free of pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"
__all__ = ["Project", "analyse", "__version__"]

if TYPE_CHECKING:
    from .analysis.analyse import analyse
    from .project import Project


def __getattr__(name: str):
    if name == "Project":
        from .project import Project

        return Project
    if name == "analyse":
        from .analysis.analyse import analyse

        return analyse
    raise AttributeError(f"module 'paperpool' has no attribute {name!r}")
