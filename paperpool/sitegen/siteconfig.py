"""What a pool's mkdocs.yml may say.

mkdocs.yml is a file of the pool like any other, so a pull request can change it, and
mkdocs reads much of it as code: `hooks` and `INHERIT`, a plugin or markdown extension
named after a module, a theme folder of Jinja templates, snippets that paste any file
into the pages, scripts and fonts fetched from elsewhere. By default paperpool allows the
settings that are data: the Material theme and its look, the search plugin, Python-
Markdown's and pymdownx's extensions that read no files, and style sheets and scripts
of the site itself. Anything else is a problem that `validate` lists with its line and
`build` refuses, unless the maintainer passes `--trust-config`, a flag that lives in
the workflow file, so that the opt-in shows in review.

This module reads mkdocs.yml and checks the pages folder; configrules says what each
setting may hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paperpool.files import walk
from paperpool.files.problems import NOT_UTF8_NAME, Problem, utf8_name
from paperpool.files.yamlio import Document, YamlProblem, load_yaml

from ..registry import (
    CONTROL_CHARACTERS,
    LINKED_FILE,
    RECORD_KINDS,
    REGISTRY_FILE,
    TEMPLATES_FOLDER,
    linked_step,
)
from . import paths
from .configrules import CONFIG, THEME, TRUST_OPTION, WORDS, check_settings

__all__ = [
    "CONFIG",
    "THEME",
    "TRUST_OPTION",
    "WORDS",
    "SiteConfig",
    "check",
    "handwritten_problems",
    "load",
    "site_dir_problems",
    "survey_problems",
    "survey_settings",
]

DEFAULT_DOCS = "site"  # the hand-written pages
DEFAULT_SITE = "build/site"


@dataclass
class SiteConfig:
    """mkdocs.yml as read: its settings ({} without a file) and its document (for lines)."""

    settings: dict
    document: Document | None = None

    def get(self, name: str, default=None):
        return self.settings.get(name, default)

    @property
    def docs_dir(self) -> str:
        return self.settings.get("docs_dir", DEFAULT_DOCS)

    @property
    def site_dir(self) -> str:
        return self.settings.get("site_dir", DEFAULT_SITE)


def load(root: Path) -> tuple[SiteConfig, list[Problem]]:
    """mkdocs.yml read strictly (no tags, aliases or duplicate keys), with its problems."""
    path = root / CONFIG
    if path.is_symlink():  # read, it would put whatever it points at (/proc/self/status, say) into every page
        return SiteConfig({}), [Problem(CONFIG, 1, "", LINKED_FILE.format(what=f"{CONFIG}"))]
    if not path.is_file():
        return SiteConfig({}), []
    try:
        document = load_yaml(path, empty_hint="write settings such as `theme: ...`, or delete the file")
    except YamlProblem as exc:
        return SiteConfig({}), [Problem(CONFIG, exc.line, exc.field, exc.message)]
    except OSError as exc:
        return SiteConfig({}), [Problem(CONFIG, 1, "", f"cannot be read ({exc.strerror}); make it a readable file")]
    if not isinstance(document.data, dict):
        return SiteConfig({}), [Problem(CONFIG, 1, "", "must be a mapping of settings (theme, site_url, ...); fix the file")]
    return SiteConfig(document.data, document), []


def check(root: Path, trusted: bool = False) -> tuple[SiteConfig, list[Problem]]:
    """mkdocs.yml and every problem with it; with `trusted`, the settings that can run
    code, read files or reach the network are allowed, their types still checked."""
    config, problems = load(root)
    if config.document is not None:
        problems = check_settings(config.document, root, trusted)
    return config, problems or handwritten_problems(root, config.docs_dir)


def handwritten_problems(root: Path, docs_dir: str) -> list[Problem]:
    """The hand-written files that would clash with the site's own: at a path the build
    writes (feed.xml, gaps/, search/, ...), a link out of the folder (which would
    publish what it points at), or a name that is not UTF-8 (no page can link it). The build checks the same against the files it writes."""
    folder = (root / docs_dir).resolve()
    linked = linked_step(root, docs_dir)
    if linked:
        return [
            Problem(
                linked,
                1,
                "",
                f"is a symbolic link, which the hand-written pages ({CONFIG}'s docs_dir) would be "
                "read through; replace the link with a folder of the pool",
            )
        ]
    if not folder.is_relative_to(root.resolve()):
        return [
            Problem(
                docs_dir,
                1,
                "",
                "is a link to a folder outside the pool, whose files would go onto the site; make it a folder of the pool",
            )
        ]
    if not folder.is_dir():
        return []
    problems = []
    for path in sorted(walk.files(folder, docs_dir.rstrip("/"))):
        relative = path.relative_to(folder).as_posix()
        shown = f"{docs_dir.rstrip('/')}/{relative}"
        if not utf8_name(relative):
            problems.append(Problem(shown, 1, "", f"{NOT_UTF8_NAME}; rename it with UTF-8 characters"))
        elif path.is_symlink():  # out of the folder, it publishes what it points at; inside, a copy per link
            where = "" if path.resolve().is_relative_to(folder) else f", to a file outside {folder.name}/"
            problems.append(
                Problem(
                    shown,
                    1,
                    "",
                    LINKED_FILE.format(what="a hand-written page or file").replace(
                        "is a symbolic link;", f"is a symbolic link{where};"
                    ),
                )
            )
        elif path.is_file() and paths.reserved(relative):
            problems.append(Problem(shown, 1, "", "the build writes this path itself; rename or move your file"))
    return problems


# The settings the build takes from the registry's survey block: the survey's name and
# description are facts of the survey, kept in registry.yaml alone, so that the site's
# header, its browser tab, its home page and the README cannot each name it differently.
# Setting -> the survey fields it is taken from, the first one set.
FROM_SURVEY = {"site_name": ("short_title", "title"), "site_description": ("description",)}


def survey_settings(survey: dict) -> dict[str, str]:
    """The settings the registry's survey block gives the engine's config."""
    return {setting: value for setting, (_, value) in _from_survey(survey).items()}


def survey_problems(config: SiteConfig, survey: dict) -> list[Problem]:
    """mkdocs.yml's settings that say otherwise than the registry's survey block: one
    fact in two files, which would drift apart the first time one is edited."""
    problems = []
    for setting, (source, value) in _from_survey(survey).items():
        given = config.get(setting)
        if given is None or given == value or config.document is None:
            continue
        problems.append(
            Problem(
                CONFIG,
                config.document.line(setting),
                setting,
                f"'{given}' differs from {REGISTRY_FILE}'s survey.{source} ('{value}'); delete the line: "
                f"the build takes the site's {setting.removeprefix('site_')} from {REGISTRY_FILE} (edit it there)",
            )
        )
    return problems


def pool_paths(registry) -> list[Path]:
    """What the pool is read from (its records' folders, the claims, the templates): a
    site folder that is, holds or lies in one of them would replace it."""
    return [(registry.folder(kind)).resolve() for kind in RECORD_KINDS] + [
        registry.claims_path.resolve(),
        (registry.root / TEMPLATES_FOLDER).resolve(),
    ]


def overlapping(out: Path, registry) -> Path | None:
    """The first of pool_paths that `out` (resolved) is, holds or lies in."""
    return next(
        (path for path in pool_paths(registry) if out == path or path.is_relative_to(out) or out.is_relative_to(path)), None
    )


def site_dir_problems(config: SiteConfig, registry) -> list[Problem]:
    """site_dir may not be where the pool is read from (validate says so before a build)."""
    value = config.get("site_dir")
    if not isinstance(value, str) or config.document is None or CONTROL_CHARACTERS.search(value):
        return []  # not a folder's name, as check() says
    found = overlapping((registry.root / value).resolve(), registry)
    if found is None:
        return []
    shown = found.relative_to(registry.root.resolve()).as_posix()
    return [
        Problem(
            CONFIG,
            config.document.line("site_dir"),
            "site_dir",
            f"'{value}': the pool is read from {shown}, which a build there would replace; name a folder of its own, "
            "such as build/site",
        )
    ]


def _from_survey(survey: dict) -> dict[str, tuple[str, str]]:
    """setting -> (the survey field it comes from, its value), for those set."""
    found = {}
    for setting, sources in FROM_SURVEY.items():
        for source in sources:
            value = survey.get(source)
            if isinstance(value, str) and value.strip():
                found[setting] = (source, value)
                break
    return found
