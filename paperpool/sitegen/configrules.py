"""What each setting of a pool's mkdocs.yml may hold: a check per kind of value, and the
tables that give each setting its check (SETTINGS at the end; the theme's, the
extensions', the plugins' and the extras' settings above it).

A setting the tables allow is data. A setting they do not know, or one that can run
code, read files or reach the network, is a problem with its line unless the
maintainer trusts the config (siteconfig has the why). Every string of the settings is
also looked at on its own (_Checker.words), because the theme writes many of them into
its pages as they are.
"""

from __future__ import annotations

import html
import importlib.util
import ipaddress
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from paperpool.files.problems import Problem, kind_of, suggest
from paperpool.files.yamlio import Document

from ..registry import BIDI_CONTROLS, refused_character_message, refused_characters

CONFIG = "mkdocs.yml"
TRUST_OPTION = "--trust-config"
THEME = "material"
# how a setting that needs trust is refused: what it can do, then how to allow it
NEEDS_TRUST = f"remove it, or pass {TRUST_OPTION} if the maintainers accept that (docs/security.md: what a pull request can do)"

MAX_NAME_CHARS = 255  # a file or folder name, on every common file system
SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)  # another site's: a scheme, or // and a host
MARKUP = re.compile(r"[<>\"`]")
BROWSER_DROPS = re.compile(r"[\x00-\x20\x7f]")  # in an address: what a browser skips or removes
MAX_SETTING_CHARS = 2_000
# the installed theme's own files, where its icons and languages are (None without it)
_THEME_SPEC = importlib.util.find_spec(THEME)
THEME_FILES = Path(_THEME_SPEC.submodule_search_locations[0]) / "templates" if _THEME_SPEC else None
LANGUAGE = re.compile(r"^[a-z]{2,3}([-_][A-Za-z]{2,4})?\Z")
ICON = re.compile(r"^[a-z0-9][a-z0-9_-]*(/[a-z0-9][a-z0-9_-]*)+\Z")  # material/library, fontawesome/brands/github
COLOURS = frozenset(
    (
        "red",
        "pink",
        "purple",
        "indigo",
        "blue",
        "cyan",
        "teal",
        "green",
        "lime",
        "yellow",
        "amber",
        "orange",
        "brown",
        "grey",
        "black",
        "white",
        "custom",
        "deep-purple",
        "deep-orange",
        "light-blue",
        "light-green",
        "blue-grey",
    )
) | {"deep purple", "deep orange", "light blue", "light green", "blue grey"}
CLASS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_ -]*\Z")
# extension settings that name a Python function for the extension to run
RUNS_CODE = {"slugify", "format", "validator", "custom_fences", "custom_inline", "emoji_index", "emoji_generator"}
# what an extension that needs trust does, where it says more than that it is code
EXTENSION_RISKS = {
    "pymdownx.snippets": "reads files from the build machine into the pages",
    "pymdownx.b64": "reads files from the build machine into the pages",
    "pymdownx.emoji": "makes every emoji an image fetched from another site when a page is viewed",
    "pymdownx.magiclink": "turns words of every page, records included, into links",
    "pymdownx.pathconverter": "rewrites the pages' links to paths it computes",
    "pymdownx.critic": "rewrites {++ ++} and the like into elements before anything else reads a page, inside records' "
    "text, code blocks and attributes too",
}
WEB = re.compile(r"^https?://[^\s<>\"'`]+$", re.IGNORECASE)


def check_settings(document: Document, root: Path, trusted: bool) -> list[Problem]:
    """Every problem with mkdocs.yml's settings, each once, with its line."""
    checker = _Checker(document, root.resolve(), trusted)
    for path, char in refused_characters(document, BIDI_CONTROLS):
        checker.problem(path, refused_character_message(char))
    checker.words(document.data, ())
    for name, value in document.data.items():
        setting = SETTINGS.get(name)
        if setting is None:
            checker.unknown(name)
        else:
            setting(checker, value, (name,))
    return checker.problems


class _Checker:
    def __init__(self, document: Document, root: Path, trusted: bool):
        self.document, self.root, self.trusted = document, root, trusted
        self.problems: list[Problem] = []
        self.reported: set[tuple] = set()  # one problem per value: the first found

    def problem(self, path: tuple, message: str) -> None:
        if any(path[:length] in self.reported for length in range(1, len(path) + 1)):
            return
        self.reported.add(path)
        field = ".".join(str(part) for part in path)
        self.problems.append(Problem(CONFIG, self.document.line(*path), field, message))

    def words(self, value, path: tuple) -> None:
        """Every string of the settings, wherever it is: the theme writes many of them into
        its pages as they are (a palette colour into an attribute, a logo into an <img>),
        so none may hold what ends an attribute or starts an element. The site's words
        (WORDS) are handed to the theme as look-alike text instead (engine.site_config),
        so that a title may quote; the copyright, which may be HTML when trusted, may not."""
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str):  # a key can be words too: a navigation title
                    self.words(key, path + (key,))
                self.words(item, path + (key,))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self.words(item, path + (index,))
        elif isinstance(value, str):
            if len(value) > MAX_SETTING_CHARS:
                self.problem(path, f"is {len(value):,} characters long, over {MAX_SETTING_CHARS:,}; shorten it")
            elif MARKUP.search(html.unescape(value)) and not self.trusted and not (path and path[0] in WORDS):
                # read as a browser reads it: the theme passes some words through Jinja's
                # striptags, which turns &lt; back into <
                found = MARKUP.search(html.unescape(value)).group()
                written = "" if found in value else " (written as a character reference)"
                self.problem(
                    path, f"holds {found!r}{written}, which the theme would write into every page as markup; {NEEDS_TRUST}"
                )

    def needs_trust(self, path: tuple, what: str) -> None:
        if not self.trusted:
            self.problem(path, f"{what}; {NEEDS_TRUST}")

    def unknown(self, name: str) -> None:
        if name in CODE_SETTINGS:
            self.needs_trust((name,), CODE_SETTINGS[name])
        elif not self.trusted:
            self.problem(
                (name,),
                f"is not a setting paperpool builds with by default; "
                f"{suggest(name, SETTINGS, 'remove it')} (or build with {TRUST_OPTION})",
            )

    def kind(self, value, path: tuple, kind: type | tuple, what: str) -> bool:
        if path in self.reported:  # its words were refused already (they may not even name a file)
            return False
        if isinstance(value, kind) and not isinstance(value, bool) or kind is bool and isinstance(value, bool):
            return True
        self.problem(path, f"is {kind_of(value)}; give {what}")
        return False


# ---------------------------------------------------------------------------------
# One check per kind of setting
# ---------------------------------------------------------------------------------


def _text(checker: _Checker, value, path: tuple) -> None:
    """Words shown on pages (their markup is refused with every setting's, in words())."""
    checker.kind(value, path, str, "text")


# The engine matches every page's path against each pattern of not_in_nav, exclude_docs
# and draft_docs, as a regular expression that Python's re backtracks in: each wildcard
# multiplies the tries on a long name (3 of them: 60 ms a page at worst; 14: minutes).
MAX_PATTERN_WILDCARDS = 2  # 1.6 ms a page at worst, over paths of 1,000 characters
MAX_PATTERNS = 50
MAX_PATTERN_CHARS = 255


def _patterns(checker: _Checker, value, path: tuple) -> None:
    """gitignore-style patterns of the pages' paths, one per line: limited in number,
    length and wildcards before the engine compiles them. A * is a wildcard, and so is a
    ** that is a whole part of the path (a/**/b); other runs of * count each star."""
    if not checker.kind(value, path, str, "patterns of file names, one per line"):
        return
    patterns = [line.strip() for line in value.splitlines() if line.strip() and not line.strip().startswith("#")]
    if len(patterns) > MAX_PATTERNS:
        checker.problem(path, f"holds {len(patterns):,} patterns, over {MAX_PATTERNS}; match more files with fewer patterns")
        return
    for pattern in patterns:
        wildcards = sum(1 if part == "**" else part.count("*") for part in pattern.split("/"))
        if len(pattern) > MAX_PATTERN_CHARS:
            checker.problem(path, f"a pattern is {len(pattern):,} characters long, over {MAX_PATTERN_CHARS}; shorten it")
        elif wildcards > MAX_PATTERN_WILDCARDS:
            shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
            checker.problem(
                path,
                f"'{shown}' has {wildcards} wildcards (*), over {MAX_PATTERN_WILDCARDS}: the engine's "
                "matching of each page's path takes longer with each (14 kept a build busy for minutes); "
                f"write at most {MAX_PATTERN_WILDCARDS}, e.g. drafts/**/*.md, or one pattern per folder",
            )
        else:
            continue
        return


def _copyright(checker: _Checker, value, path: tuple) -> None:
    """Shown as HTML in every page's footer: an element (a link, say) needs trust."""
    if checker.kind(value, path, str, "text") and re.search("[<>]", value):
        checker.needs_trust(path, "holds HTML, which would go live on every page")


def _flag(checker: _Checker, value, path: tuple) -> None:
    checker.kind(value, path, bool, "true or false")


def _flag_or_text(checker: _Checker, value, path: tuple) -> None:
    if not isinstance(value, bool):
        checker.kind(value, path, str, "true, false or text")


def _class_name(checker: _Checker, value, path: tuple) -> None:
    if checker.kind(value, path, str, "a CSS class name") and not CLASS_NAME.match(value):
        checker.problem(path, f"'{value}' is not a CSS class name; give letters, digits, - and _")


def _levels(checker: _Checker, value, path: tuple) -> None:
    """toc's depth: a level (3) or a range of them ("2-4")."""
    if (
        not (isinstance(value, int) and not isinstance(value, bool))
        and checker.kind(value, path, str, "a level or a range such as 2-4")
        and not re.fullmatch(r"[1-6](-[1-6])?", value)
    ):
        checker.problem(path, f"'{value}' is not a heading level or a range of them; give one such as 3 or 2-4")


def _count(checker: _Checker, value, path: tuple) -> None:
    checker.kind(value, path, int, "a whole number")


def _web_address(checker: _Checker, value, path: tuple) -> None:
    value = _address(checker, value, path, "a web address, such as https://example.org/survey/")
    if value is not None and not WEB.match(value):
        checker.problem(path, f"'{value}' is not an http(s) address; give one, such as https://example.org/survey/")


def _repository(checker: _Checker, value, path: tuple) -> None:
    _web_address(checker, value, path)
    checker.needs_trust(
        path,
        "makes every page fetch the repository's stars, forks and latest version from its host "
        "when it is viewed (link the repository from a page or the nav instead)",
    )


def _address(checker: _Checker, value, path: tuple, what: str) -> str | None:
    """A link or path as a browser reads it (leading spaces and controls dropped, tabs and
    line breaks removed anywhere: ` javascript:` and `java<tab>script:` are javascript:),
    or None after a problem. Such characters have no place in an address, so they are
    refused rather than read round."""
    if not checker.kind(value, path, str, what):
        return None
    if value != value.strip() or BROWSER_DROPS.search(value):
        checker.problem(
            path,
            f"{value!r} holds spaces, tabs or line breaks, which a browser skips (' javascript:' is "
            "javascript:); write the address without them",
        )
        return None
    if html.unescape(value) != value:
        checker.problem(
            path,
            f"'{value}' holds a character reference (such as &colon;), which a browser reads as another "
            "character in a link; write the address with the characters themselves",
        )
        return None
    why = _unreadable_address(value)
    if why:
        checker.problem(path, f"'{value}' {why}; correct the address")
        return None
    return value


def _unreadable_address(value: str) -> str | None:
    """Why an address cannot be read as one (None when it can), as the engine reads it
    (urllib.parse): a host in brackets that is no IPv6 address (http://[x), a port that
    is no number or out of range, an http(s) address without a host."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- reading it checks it
    except ValueError as exc:
        said = str(exc)
        return f"cannot be read as an address ({said[:1].lower()}{said[1:]})"
    if parts.scheme.lower() in ("http", "https") and not parts.hostname:
        return "names no host after its //"
    return None


def _page_path(checker: _Checker, value, path: tuple) -> bool:
    """A file of the site itself: relative, inside it, no scheme."""
    value = _address(checker, value, path, "a path inside the site, such as extra.css")
    if value is None:
        return False
    if SCHEME.match(value) or value.startswith(("/", "\\")) or ".." in re.split(r"[/\\]", value):
        checker.needs_trust(path, f"'{value}' is not a file of the site (it is another site's, or outside the pages)")
        return False
    return True


def _link(checker: _Checker, value, path: tuple) -> None:
    """A link a reader follows: a page of the site or an http(s) address."""
    value = _address(checker, value, path, "a page of the site or an http(s) address")
    if value is not None and SCHEME.match(value) and not WEB.match(value):
        checker.problem(path, f"'{value}' is neither a page of the site nor an http(s) address; give one of those")


def _folder(checker: _Checker, value, path: tuple) -> bool:
    """A folder whose files go onto the site: it must be the pool's own."""
    if not checker.kind(value, path, str, "a folder inside the pool, such as site/"):
        return False
    if any(len(part) > MAX_NAME_CHARS for part in re.split(r"[/\\]", value)):
        checker.problem(path, f"names a folder longer than {MAX_NAME_CHARS} characters; give a shorter name")
        return False
    folder = (checker.root / value).resolve()
    if folder == checker.root or not folder.is_relative_to(checker.root):
        checker.problem(
            path,
            f"'{value}' is outside the pool or the pool itself, and its files would go onto the site; "
            "name a folder inside the pool, such as site/",
        )
        return False
    if _hidden(checker.root, folder):  # .git holds the repository's history and CI's token (.git/config)
        checker.problem(
            path,
            f"'{value}' is a hidden folder of the pool or inside one (such as .git or .github), whose "
            "files would go onto the site; name a folder of pages, such as site/",
        )
        return False
    return True


def _hidden(root: Path, folder: Path) -> bool:
    """Whether `folder` (resolved, inside `root`) is a hidden folder or inside one."""
    return any(part.startswith(".") for part in folder.relative_to(root).parts)


def _output_folder(checker: _Checker, value, path: tuple) -> None:
    """Where the site is built: the pool's own folder (a pull request could otherwise have
    the build machine write anywhere it may); `build --out` goes anywhere."""
    if not checker.kind(value, path, str, "a folder, such as build/site/"):
        return
    if any(len(part) > MAX_NAME_CHARS for part in re.split(r"[/\\]", value)):
        checker.problem(path, f"names a folder longer than {MAX_NAME_CHARS} characters; give a shorter name")
    elif not (checker.root / value).resolve().is_relative_to(checker.root):
        checker.problem(
            path, f"'{value}' is outside the pool; name a folder inside it, such as build/site, or build elsewhere with --out"
        )
    elif _hidden(checker.root, (checker.root / value).resolve()):
        checker.problem(
            path,
            f"'{value}' is a hidden folder of the pool or inside one (such as .git or .github); name a "
            "folder such as build/site, or build elsewhere with --out",
        )


def _host_and_port(checker: _Checker, value, path: tuple) -> None:
    """dev_addr, which the engine reads as an IP address (or localhost) and a port even when it only builds."""
    if not checker.kind(value, path, str, "an IP address and a port, such as 127.0.0.1:8000"):
        return
    host, _, port = value.rpartition(":")
    try:
        if host != "localhost":
            ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
        good = port.isascii() and port.isdigit() and int(port) <= 65535
    except ValueError:
        good = False
    if not good:
        checker.problem(path, f"'{value}' is not an IP address and a port; give one such as 127.0.0.1:8000")


def _names(checker: _Checker, value, path: tuple) -> None:
    if checker.kind(value, path, list, "a list of names"):
        for index, item in enumerate(value):
            checker.kind(item, path + (index,), str, "a name")


def _choice(*allowed: str) -> Check:
    def check(checker: _Checker, value, path: tuple) -> None:
        if checker.kind(value, path, str, f"one of {', '.join(allowed)}") and value not in allowed:
            checker.problem(path, f"'{value}' is not one of {', '.join(allowed)}; {suggest(value, allowed, 'give one of them')}")

    return check


def _language(checker: _Checker, value, path: tuple) -> None:
    """A language the theme has words for (it reads a template named after it)."""
    if checker.kind(value, path, str, "a language code, such as en") and (
        not LANGUAGE.match(value) or THEME_FILES and not (THEME_FILES / "partials" / "languages" / f"{value}.html").is_file()
    ):
        checker.problem(path, f"'{value}' is not a language the theme knows; give a code such as en, de or zh-TW")


def _icon(checker: _Checker, value, path: tuple) -> None:
    """One of the theme's icons, by name (material/library)."""
    if checker.kind(value, path, str, "an icon's name, such as material/library") and (
        not ICON.match(value) or THEME_FILES and not (THEME_FILES / ".icons" / f"{value}.svg").is_file()
    ):
        checker.problem(
            path,
            f"'{value}' is not an icon of the theme; give one such as material/library "
            "(https://squidfunk.github.io/mkdocs-material/reference/icons-emojis/)",
        )


def _icons(checker: _Checker, value, path: tuple) -> None:
    """theme.icon: icon names, some grouped (admonition: {note: ...})."""
    if isinstance(value, dict):
        for key, item in value.items():
            _icons(checker, item, path + (key,))
    else:
        _icon(checker, value, path)


def _colour(checker: _Checker, value, path: tuple) -> None:
    if checker.kind(value, path, str, "a colour name, such as indigo") and value.lower() not in COLOURS:
        checker.problem(
            path, f"'{value}' is not one of the theme's colours; {suggest(value, sorted(COLOURS), 'give one such as indigo')}"
        )


def _scheme(checker: _Checker, value, path: tuple) -> None:
    if checker.kind(value, path, str, "a colour scheme, such as default or slate") and not re.match(r"^[a-z][a-z0-9-]*$", value):
        checker.problem(path, f"'{value}' is not a colour scheme's name; give default, slate or a name in lower-case letters")


def _mapping(table: dict[str, Check], what: str) -> Check:
    """A mapping whose every setting has its check in `table`; any other needs trust."""

    def check(checker: _Checker, value, path: tuple) -> None:
        if not checker.kind(value, path, dict, what):
            return
        for key, item in value.items():
            inner = path + (key,)
            if key in table:
                table[key](checker, item, inner)
            elif key in RUNS_CODE:
                checker.needs_trust(inner, "names a Python function for the extension to run")
            else:
                checker.needs_trust(
                    inner,
                    f"is not a setting paperpool builds with by default "
                    f"({suggest(key, table, 'docs/security.md lists those it allows')})",
                )

    return check


def _each(check: Check, what: str) -> Check:
    def each(checker: _Checker, value, path: tuple) -> None:
        if checker.kind(value, path, list, what):
            for index, item in enumerate(value):
                check(checker, item, path + (index,))

    return each


def _one_or_each(check: Check, what: str) -> Check:
    def either(checker: _Checker, value, path: tuple) -> None:
        (_each(check, what) if isinstance(value, list) else check)(checker, value, path)

    return either


def _needs_trust(what: str) -> Check:
    def check(checker: _Checker, value, path: tuple) -> None:
        checker.needs_trust(path, what)

    return check


def _font(checker: _Checker, value, path: tuple) -> None:
    if value is not False:
        checker.needs_trust(
            path, "makes every page fetch its fonts from Google when it is viewed (`font: false` keeps them local)"
        )


def _custom_dir(checker: _Checker, value, path: tuple) -> None:
    if _folder(checker, value, path):
        checker.needs_trust(path, "holds Jinja templates, which run with full access to the build machine")


def _theme_name(checker: _Checker, value, path: tuple) -> None:
    if value != THEME:
        checker.needs_trust(
            path, f"'{value}' is not the {THEME} theme paperpool's pages are made for, and another theme's templates are code"
        )


def _theme(checker: _Checker, value, path: tuple) -> None:
    if isinstance(value, str):
        _theme_name(checker, value, path)
    elif not isinstance(value, dict):
        checker.problem(path, f"is {kind_of(value)}; give the theme's name, or a mapping such as `theme: {{name: {THEME}}}`")
    else:
        _mapping(THEME_SETTINGS, "the theme's settings")(checker, value, path)


def _extensions(checker: _Checker, value, path: tuple) -> None:
    if not checker.kind(value, path, list, "a list of extensions"):
        return
    for index, item in enumerate(value):
        inner = path + (index,)
        if isinstance(item, dict) and len(item) == 1 and isinstance(next(iter(item)), str):
            name, options = next(iter(item.items()))
        elif isinstance(item, str):
            name, options = item, None
        else:
            checker.problem(
                inner,
                f"is {kind_of(item)}; give an extension's name, or its name with its settings, "
                "such as `- toc: {permalink: true}`",
            )
            continue
        table = EXTENSIONS.get(name.removeprefix("markdown.extensions."))
        if table is None:
            what = EXTENSION_RISKS.get(
                name,
                "is not one of the extensions paperpool allows by default (Python-Markdown's "
                "own and pymdownx's that read no files), and an extension is a Python module "
                "that runs when the site is built",
            )
            checker.needs_trust(inner, f"'{name}' {what}")
        elif options is not None:
            _mapping(table, f"{name}'s settings as a mapping")(checker, options, inner + (name,))


def _plugins(checker: _Checker, value, path: tuple) -> None:
    items = list(value.items()) if isinstance(value, dict) else None
    if items is None:
        if not checker.kind(value, path, list, "a list of plugins"):
            return
        items = [
            (next(iter(item)), item[next(iter(item))]) if isinstance(item, dict) and len(item) == 1 else (item, None)
            for item in value
        ]
    for index, (name, options) in enumerate(items):
        inner = path + ((name,) if isinstance(value, dict) else (index,))
        if not isinstance(name, str):
            checker.problem(inner, f"is {kind_of(name)}; give a plugin's name, or its name with its settings")
        elif name not in PLUGINS:
            checker.needs_trust(
                inner,
                f"'{name}' is not one of the plugins paperpool allows by default "
                f"({', '.join(PLUGINS)}), and a plugin is code that runs when the site is built",
            )
        elif options is not None:
            _mapping(PLUGINS[name], f"{name}'s settings as a mapping")(
                checker, options, inner + ((name,) if isinstance(value, list) else ())
            )


def _script(checker: _Checker, value, path: tuple) -> None:
    """One of extra_javascript: a file of the site, or {path, type, async, defer}."""
    if isinstance(value, dict):
        _mapping(SCRIPT_SETTINGS, "a script: its path, or {path, type, async, defer}")(checker, value, path)
    else:
        _page_path(checker, value, path)


def _nav(checker: _Checker, value, path: tuple) -> None:
    if isinstance(value, str):
        _link(checker, value, path)
        if not SCHEME.match(value) and (value.startswith(("/", "\\")) or ".." in re.split(r"[/\\]", value)):
            # a page outside the pages folder, which the engine refuses at the build: validate says so first
            checker.problem(
                path, f"'{value}' leads out of the pages; give a page of the site, such as notes.md, or an http(s) address"
            )
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _nav(checker, item, path + (index,))
    elif isinstance(value, dict):
        for title, target in value.items():
            _text(checker, title, path + (title,))
            _nav(checker, target, path + (title,))
    else:
        checker.problem(path, f"is {kind_of(value)}; give a page, an http(s) address, or a mapping of titles to them")


def _extra(checker: _Checker, value, path: tuple) -> None:
    """The theme's extras: the ones paperpool knows are checked; any other needs trust,
    since the theme reads extras of its own into its pages (polyfills become scripts,
    scope goes into one) and a theme override may read any."""
    if not checker.kind(value, path, dict, "a mapping of the theme's extras"):
        return
    for key, item in value.items():
        if key in EXTRA_SETTINGS:
            EXTRA_SETTINGS[key](checker, item, path + (key,))
        else:
            checker.needs_trust(
                path + (key,),
                f"is not one of the extras paperpool checks ({', '.join(EXTRA_SETTINGS)}); "
                "the theme writes some extras into every page as scripts",
            )


Check = Callable[[_Checker, object, tuple], None]
THEME_SETTINGS: dict[str, Check] = {
    "name": _theme_name,
    "language": _language,
    "locale": _language,
    "direction": _choice("ltr", "rtl"),
    "features": _names,
    "icon": _icons,
    "logo": _page_path,
    "favicon": _page_path,
    "font": _font,
    "custom_dir": _custom_dir,
    "palette": _one_or_each(
        _mapping(
            {
                "scheme": _scheme,
                "primary": _colour,
                "accent": _colour,
                "media": _text,
                "toggle": _mapping({"icon": _icon, "name": _text}, "the toggle: {icon, name}"),
            },
            "a colour scheme: {scheme, primary, accent, toggle}",
        ),
        "colour schemes",
    ),
}
_SMART = dict.fromkeys(
    (
        "smart_enable",
        "smart_insert",
        "insert",
        "superscript",
        "smart_mark",
        "smart_delete",
        "delete",
        "subscript",
        "smart_dashes",
        "smart_quotes",
        "smart_angled_quotes",
        "smart_ellipses",
    ),
    _flag_or_text,
)
_HIGHLIGHT = {
    "linenums": _flag,
    "linenums_style": _choice("table", "pymdownx-inline", "inline"),
    "anchor_linenums": _flag,
    "line_spans": _class_name,
    "pygments_lang_class": _flag,
    "use_pygments": _flag,
    "auto_title": _flag,
    "css_class": _class_name,
    "pygments_style": _text,
    "guess_lang": _flag,
    "noclasses": _flag,
}
# Python-Markdown's own extensions and the pymdownx ones that read no files, fetch nothing
# and make no links of their own, each with the settings it may take; any other setting
# (arithmatex's inline_tag: script, codehilite's cssstyles, superfences' custom_fences
# naming a function) needs trust
EXTENSIONS: dict[str, dict[str, Check]] = {
    **{
        name: {}
        for name in (
            "abbr",
            "admonition",
            "attr_list",
            "def_list",
            "extra",
            "footnotes",
            "legacy_attrs",
            "legacy_em",
            "md_in_html",
            "meta",
            "nl2br",
            "sane_lists",
            "wikilinks",
        )
    },
    "fenced_code": {"lang_prefix": _class_name},
    "smarty": _SMART,
    "tables": {"use_align_attribute": _flag},
    "toc": {
        "permalink": _flag_or_text,
        "permalink_title": _text,
        "title": _text,
        "toc_depth": _levels,
        "baselevel": _count,
        "anchorlink": _flag,
        "permalink_class": _class_name,
        "toc_class": _class_name,
    },
    "codehilite": _HIGHLIGHT,
    **{
        f"pymdownx.{name}": {}
        for name in (
            "blocks.admonition",
            "blocks.caption",
            "blocks.definition",
            "blocks.details",
            "blocks.tab",
            "details",
            "extra",
            "fancylists",
            "progressbar",
            "saneheaders",
            "striphtml",
        )
    },
    "pymdownx.arithmatex": {"generic": _flag, "preview": _flag, "smart_dollar": _flag},
    **{f"pymdownx.{name}": _SMART for name in ("betterem", "caret", "mark", "tilde", "smartsymbols")},
    "pymdownx.escapeall": {"hardbreak": _flag, "nbsp": _flag},
    "pymdownx.highlight": _HIGHLIGHT,
    "pymdownx.inlinehilite": {"style_plain_text": _flag},
    "pymdownx.keys": {"separator": _text, "strict": _flag, "camel_case": _flag},
    "pymdownx.superfences": {"disable_indented_code_blocks": _flag, "preserve_tabs": _flag},
    "pymdownx.tabbed": {"alternate_style": _flag, "combine_header_slug": _flag},
    "pymdownx.tasklist": {"custom_checkbox": _flag, "clickable_checkbox": _flag},
}
SCRIPT_SETTINGS: dict[str, Check] = {
    "path": _page_path,
    "type": _choice("module", "text/javascript"),
    "async": _flag,
    "defer": _flag,
}
# plugins that ship with mkdocs or the Material theme and fetch nothing, with their settings
# (the build turns `search` off whatever it says: the site searches with Pagefind, whose
# settings are paperpool's own, sitegen/search.py)
PLUGINS: dict[str, dict[str, Check]] = {
    "search": {
        "lang": _one_or_each(_language, "languages"),
        "min_search_length": _count,
        "separator": _needs_trust("is a regular expression that every reader's browser runs on each search"),
    },
    "offline": {"enabled": _flag},
    "tags": {"enabled": _flag, "tags_file": _page_path},
}
EXTRA_SETTINGS: dict[str, Check] = {
    "social": _each(_mapping({"icon": _icon, "link": _link, "name": _text}, "a link: {icon, link, name}"), "a list of links"),
    "alternate": _each(
        _mapping({"name": _text, "link": _link, "lang": _language}, "a language: {name, link, lang}"), "a list of languages"
    ),
    "homepage": _link,
    "generator": _flag,
    "analytics": _needs_trust("makes every page report its visitors to another site when it is viewed"),
    "consent": _needs_trust("shows its words as HTML on every page, and only serves analytics"),
    "polyfills": _needs_trust("loads each address it names as a script on every page"),
    "scope": _needs_trust("is written into a script on every page"),
    "version": _needs_trust("makes every page fetch a list of the site's versions when it is viewed"),
}
SETTINGS: dict[str, Check] = {
    "site_name": _text,
    "site_description": _text,
    "site_author": _text,
    "copyright": _copyright,
    "repo_name": _text,
    "site_url": _web_address,
    "repo_url": _repository,
    "edit_uri": _link,
    "docs_dir": _folder,
    "site_dir": _output_folder,
    "use_directory_urls": _flag,
    "strict": _flag,
    "theme": _theme,
    "markdown_extensions": _extensions,
    "plugins": _plugins,
    "extra_css": _each(_page_path, "a list of style sheets of the site"),
    "extra_javascript": _each(_script, "a list of scripts of the site"),
    "extra": _extra,
    "nav": _nav,
    "not_in_nav": _patterns,
    "exclude_docs": _patterns,
    "draft_docs": _patterns,  # patterns of file names, one per line
    "dev_addr": _host_and_port,
    "remote_branch": _text,
    "remote_name": _text,
}
WORDS = [name for name, check in SETTINGS.items() if check in (_text, _copyright)]  # shown on every page
# settings that make mkdocs run code or read files, and what each does
CODE_SETTINGS = {
    "hooks": "runs the Python files it names when the site is built",
    "INHERIT": "reads another YAML file into the settings, where paperpool cannot check it",
    "extra_templates": "renders files of the pages as Jinja templates, with full access to the build machine",
    "watch": "names folders outside the pages for the engine to read",
    "validation": "turns off the engine's checks of links and navigation, which keep every link of the site to a page of it",
}
