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

Every check is a function of (value, path) returning problems; the table SETTINGS says
which check each top-level setting gets.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..problems import Problem, suggest
from ..yamlio import Document, YamlProblem, load_yaml
from . import paths

CONFIG = "mkdocs.yml"
DEFAULT_DOCS = "site"  # the hand-written pages
DEFAULT_SITE = "build/site"
TRUST_OPTION = "--trust-config"
THEME = "material"
# how a setting that needs trust is refused: what it can do, then how to allow it
NEEDS_TRUST = f"remove it, or pass {TRUST_OPTION} if the maintainers accept that (README: what a pull request can do)"

# Python-Markdown's own extensions and the pymdownx ones that read no files and run no
# code named in the config (snippets and b64 read files, so they are not here)
EXTENSIONS = frozenset(
    "abbr admonition attr_list codehilite def_list extra fenced_code footnotes legacy_attrs legacy_em md_in_html meta "
    "nl2br sane_lists smarty tables toc wikilinks".split()) | {
    f"pymdownx.{name}" for name in
    "arithmatex betterem blocks.admonition blocks.caption blocks.definition blocks.details blocks.tab caret critic "
    "details emoji escapeall extra fancylists highlight inlinehilite keys magiclink mark pathconverter progressbar "
    "saneheaders smartsymbols striphtml superfences tabbed tasklist tilde".split()}
# plugins that ship with mkdocs or the Material theme and fetch nothing
PLUGINS = {"search": {"lang", "separator", "min_search_length"}, "offline": {"enabled"}, "tags": {"enabled", "tags_file"}}
THEME_KEYS = {"name", "language", "locale", "direction", "features", "palette", "icon", "logo", "favicon", "font"}
PALETTE_KEYS = {"scheme", "primary", "accent", "media", "toggle"}
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
WEB = re.compile(r"^https?://[^\s<>\"'`]+$", re.IGNORECASE)


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
    if not path.is_file() and not path.is_symlink():
        return SiteConfig({}), []
    try:
        document = load_yaml(path, empty_hint="write settings such as `site_name: ...`, or delete the file")
    except YamlProblem as exc:
        return SiteConfig({}), [Problem(CONFIG, exc.line, exc.field, exc.message)]
    except OSError as exc:
        return SiteConfig({}), [Problem(CONFIG, 1, "", f"cannot be read ({exc.strerror}); make it a readable file")]
    if not isinstance(document.data, dict):
        return SiteConfig({}), [Problem(CONFIG, 1, "", "must be a mapping of settings (site_name, theme, ...); fix the file")]
    return SiteConfig(document.data, document), []


def check(root: Path, trusted: bool = False) -> tuple[SiteConfig, list[Problem]]:
    """mkdocs.yml and every problem with it; with `trusted`, the settings that can run
    code, read files or reach the network are allowed, their types still checked."""
    config, problems = load(root)
    if config.document is None:
        return config, problems or handwritten_problems(root, config.docs_dir)
    checker = _Checker(config.document, root.resolve(), trusted)
    for name, value in config.settings.items():
        setting = SETTINGS.get(name)
        if setting is None:
            checker.unknown(name)
        else:
            setting(checker, value, (name,))
    if not checker.problems:
        checker.problems += handwritten_problems(root, config.docs_dir)
    return config, checker.problems


def handwritten_problems(root: Path, docs_dir: str) -> list[Problem]:
    """The hand-written files that would clash with the site's own: at a path the build
    writes (feed.xml, gaps/, search/, ...), or a link out of the folder (which would
    publish what it points at). The build checks the same against the files it writes."""
    folder = (root / docs_dir).resolve()
    if not folder.is_relative_to(root.resolve()):
        return [Problem(docs_dir, 1, "", "is a link to a folder outside the pool, whose files would go onto the site; "
                                         "make it a folder of the pool")]
    if not folder.is_dir():
        return []
    problems = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        shown = f"{docs_dir.rstrip('/')}/{relative}"
        if path.is_symlink() and not path.resolve().is_relative_to(folder):
            problems.append(Problem(shown, 1, "", f"is a link to a file outside {folder.name}/; copy the file there instead"))
        elif path.is_file() and paths.reserved(relative):
            problems.append(Problem(shown, 1, "", "the build writes this path itself; rename or move your file"))
    return problems


class _Checker:
    def __init__(self, document: Document, root: Path, trusted: bool):
        self.document, self.root, self.trusted = document, root, trusted
        self.problems: list[Problem] = []

    def problem(self, path: tuple, message: str) -> None:
        field = ".".join(str(part) for part in path)
        self.problems.append(Problem(CONFIG, self.document.line(*path), field, message))

    def needs_trust(self, path: tuple, what: str) -> None:
        if not self.trusted:
            self.problem(path, f"{what}; {NEEDS_TRUST}")

    def unknown(self, name: str) -> None:
        if name in CODE_SETTINGS:
            self.needs_trust((name,), CODE_SETTINGS[name])
        elif not self.trusted:
            self.problem((name,), f"is not a setting paperpool builds with by default; "
                                  f"{suggest(name, SETTINGS, 'remove it')} (or build with {TRUST_OPTION})")

    def kind(self, value, path: tuple, kind: type | tuple, what: str) -> bool:
        if isinstance(value, kind) and not isinstance(value, bool) or kind is bool and isinstance(value, bool):
            return True
        self.problem(path, f"is {kind_of(value)}; give {what}")
        return False


def kind_of(value) -> str:
    """What a YAML value is, for a message: a list, a mapping, a number, text."""
    kinds = {list: "a list", dict: "a mapping", str: "text", bool: "a boolean", int: "a number", float: "a number"}
    return "nothing" if value is None else kinds.get(type(value), "a " + type(value).__name__)


# ---------------------------------------------------------------------------------
# One check per kind of setting
# ---------------------------------------------------------------------------------

def _text(checker: _Checker, value, path: tuple) -> None:
    """Words shown on every page (the theme writes some of them unescaped)."""
    if checker.kind(value, path, str, "text"):
        if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", value):
            checker.problem(path, "contains control characters; remove them")
        elif "<" in value:
            checker.needs_trust(path, "holds HTML, which would go live on every page")


def _flag(checker: _Checker, value, path: tuple) -> None:
    checker.kind(value, path, bool, "true or false")


def _web_address(checker: _Checker, value, path: tuple) -> None:
    if checker.kind(value, path, str, "a web address, such as https://example.org/survey/") and not WEB.match(value):
        checker.problem(path, f"'{value}' is not an http(s) address; give one, such as https://example.org/survey/")


def _page_path(checker: _Checker, value, path: tuple) -> bool:
    """A file of the site itself: relative, inside it, no scheme."""
    if not checker.kind(value, path, str, "a path inside the site, such as extra.css"):
        return False
    if SCHEME.match(value) or value.startswith(("/", "\\")) or ".." in re.split(r"[/\\]", value) or "//" in value:
        checker.needs_trust(path, f"'{value}' is not a file of the site (it is another site's, or outside the pages), "
                                  "so every page would load it from there")
        return False
    return True


def _link(checker: _Checker, value, path: tuple) -> None:
    """A link a reader follows: a page of the site or an http(s) address."""
    if checker.kind(value, path, str, "a page of the site or an http(s) address") and SCHEME.match(value) and not WEB.match(value):
        checker.problem(path, f"'{value}' is neither a page of the site nor an http(s) address; give one of those")


def _folder(checker: _Checker, value, path: tuple) -> bool:
    """A folder whose files go onto the site: it must be the pool's own."""
    if not checker.kind(value, path, str, "a folder inside the pool, such as site/"):
        return False
    folder = (checker.root / value).resolve()
    if folder == checker.root or not folder.is_relative_to(checker.root):
        checker.problem(path, f"'{value}' is outside the pool or the pool itself, and its files would go onto the site; "
                              "name a folder inside the pool, such as site/")
        return False
    return True


def _output_folder(checker: _Checker, value, path: tuple) -> None:
    checker.kind(value, path, str, "a folder, such as build/site/")


def _names(checker: _Checker, value, path: tuple) -> None:
    if checker.kind(value, path, list, "a list of names"):
        for index, item in enumerate(value):
            checker.kind(item, path + (index,), str, "a name")


def _anything(checker: _Checker, value, path: tuple) -> None:
    """Read by mkdocs alone and harmless whatever it holds."""


def _theme(checker: _Checker, value, path: tuple) -> None:
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, dict):
        checker.problem(path, f"is {kind_of(value)}; give the theme's name, or a mapping such as `theme: {{name: {THEME}}}`")
        return
    if value.get("name", THEME) != THEME:
        checker.needs_trust(path + ("name",), f"'{value.get('name')}' is not the {THEME} theme paperpool's pages are made for, "
                                              "and another theme's templates are code")
    for key, item in value.items():
        inner = path + (key,)
        if key == "custom_dir":
            if _folder(checker, item, inner):
                checker.needs_trust(inner, "holds Jinja templates, which run with full access to the build machine")
        elif key == "font":
            if item is not False:
                checker.needs_trust(inner, "makes every page fetch its fonts from Google when it is viewed (`font: false` keeps them local)")
        elif key == "palette":
            for index, scheme in enumerate(value[key] if isinstance(item, list) else [item]):
                _palette(checker, scheme, inner + ((index,) if isinstance(item, list) else ()))
        elif key in ("logo", "favicon"):
            _page_path(checker, item, inner)
        elif key == "features":
            _names(checker, item, inner)
        elif key not in THEME_KEYS:
            checker.needs_trust(inner, "is not a theme setting paperpool builds with by default")


def _palette(checker: _Checker, value, path: tuple) -> None:
    if checker.kind(value, path, dict, "a colour scheme: {scheme, primary, accent, toggle}"):
        for key in value:
            if key not in PALETTE_KEYS:
                checker.problem(path + (key,), f"is not a palette setting; {suggest(key, PALETTE_KEYS, 'remove it')}")


def _extensions(checker: _Checker, value, path: tuple) -> None:
    if not checker.kind(value, path, list, "a list of extensions"):
        return
    for index, item in enumerate(value):
        inner = path + (index,)
        if isinstance(item, dict) and len(item) == 1 and isinstance(next(iter(item)), str):
            name = next(iter(item))
        elif isinstance(item, str):
            name = item
        else:
            checker.problem(inner, f"is {kind_of(item)}; give an extension's name, or its name with its settings, "
                                   "such as `- toc: {permalink: true}`")
            continue
        if name.removeprefix("markdown.extensions.") not in EXTENSIONS:
            what = ("reads files from the build machine into the pages" if name in ("pymdownx.snippets", "pymdownx.b64")
                    else "is not one of the extensions paperpool allows by default (Python-Markdown's own and pymdownx's "
                         "that read no files), and an extension is a Python module that runs when the site is built")
            checker.needs_trust(inner, f"'{name}' {what}")


def _plugins(checker: _Checker, value, path: tuple) -> None:
    items = list(value.items()) if isinstance(value, dict) else None
    if items is None:
        if not checker.kind(value, path, list, "a list of plugins"):
            return
        items = [(next(iter(item)), item[next(iter(item))]) if isinstance(item, dict) and len(item) == 1 else (item, None)
                 for item in value]
    for index, (name, options) in enumerate(items):
        inner = path + ((name,) if isinstance(value, dict) else (index,))
        if not isinstance(name, str):
            checker.problem(inner, f"is {kind_of(name)}; give a plugin's name, or its name with its settings")
        elif name not in PLUGINS:
            checker.needs_trust(inner, f"'{name}' is not one of the plugins paperpool allows by default "
                                       f"({', '.join(PLUGINS)}), and a plugin is code that runs when the site is built")
        elif isinstance(options, dict):
            for key in options:
                if key not in PLUGINS[name]:
                    checker.needs_trust(inner + (key,), f"is not a {name} setting paperpool builds with by default")


def _page_files(checker: _Checker, value, path: tuple) -> None:
    """extra_css and extra_javascript: files of the site, each a path or {path, type, async, defer}."""
    if not checker.kind(value, path, list, "a list of files of the site"):
        return
    for index, item in enumerate(value):
        if isinstance(item, dict):
            _page_path(checker, item.get("path"), path + (index, "path"))
        else:
            _page_path(checker, item, path + (index,))


def _nav(checker: _Checker, value, path: tuple) -> None:
    if isinstance(value, str):
        _link(checker, value, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _nav(checker, item, path + (index,))
    elif isinstance(value, dict):
        for title, target in value.items():
            _text(checker, str(title), path)
            _nav(checker, target, path + (title,))
    else:
        checker.problem(path, f"is {kind_of(value)}; give a page, an http(s) address, or a mapping of titles to them")


def _extra(checker: _Checker, value, path: tuple) -> None:
    """The theme's extras: social links are links; analytics reach the network on every view."""
    if not checker.kind(value, path, dict, "a mapping of the theme's extras"):
        return
    for key, item in value.items():
        if key == "analytics":
            checker.needs_trust(path + (key,), "makes every page report its visitors to another site when it is viewed")
        else:
            for inner, link in _links_in(item, path + (key,)):
                _link(checker, link, inner)


def _links_in(value, path: tuple) -> Iterator[tuple[tuple, str]]:
    """Every `link` under `value` (extra.social, extra.alternate)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("link", "homepage") and isinstance(item, str):
                yield path + (key,), item
            else:
                yield from _links_in(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _links_in(item, path + (index,))


Check = Callable[[_Checker, object, tuple], None]
SETTINGS: dict[str, Check] = {
    "site_name": _text, "site_description": _text, "site_author": _text, "copyright": _text, "repo_name": _text,
    "site_url": _web_address, "repo_url": _web_address, "edit_uri": _link,
    "docs_dir": _folder, "site_dir": _output_folder, "use_directory_urls": _flag, "strict": _flag,
    "theme": _theme, "markdown_extensions": _extensions, "plugins": _plugins,
    "extra_css": _page_files, "extra_javascript": _page_files, "extra": _extra, "nav": _nav,
    "not_in_nav": _anything, "exclude_docs": _anything, "draft_docs": _anything, "validation": _anything,
    "dev_addr": _anything, "remote_branch": _anything, "remote_name": _anything,
}
WORDS = [name for name, check in SETTINGS.items() if check is _text]  # shown on every page
# settings that make mkdocs run code or read files, and what each does
CODE_SETTINGS = {
    "hooks": "runs the Python files it names when the site is built",
    "INHERIT": "reads another YAML file into the settings, where paperpool cannot check it",
    "extra_templates": "renders files of the pages as Jinja templates, with full access to the build machine",
    "watch": "names folders outside the pages for the engine to read",
}
