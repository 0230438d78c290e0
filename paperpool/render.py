"""One renderer for everything paperpool writes from templates.

Templates are found by name, first in the pool's own templates/ folder, then among
the defaults shipped with paperpool, so a survey overrides any of them by adding a
file of the same name. Record text reaches a template as data and is shown through
the `md` filter; a template never re-parses it, so jinja syntax in a title stays text.

A template of the pool is a file a pull request can change, so it is treated as
untrusted: it is read only as a plain file inside templates/ (never through a link),
and it runs in Jinja's sandbox, where it can read the data it is given but reach no
file, module or process: attributes are readable only on plain data, on paperpool's
own objects and on Jinja's (see _Sandbox).
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import posixpath
from pathlib import Path
from types import ModuleType

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from . import markdown
from .problems import PaperpoolError, plural
from .yamlio import YamlProblem, read_text

OVERRIDES = "templates"
TEMPLATE_SUFFIX = ".j2"
MAX_TEMPLATE_BYTES = 1_000_000
# what a template may read attributes of, besides paperpool's own objects
DATA = (str, int, float, list, tuple, dict, set, frozenset, dt.date)
JINJA_MODULES = ("jinja2.runtime", "jinja2.utils", "jinja2.environment")
MODULES = ("paperpool.sitegen.paths",)  # the modules templates are given


class Renderer:
    def __init__(self, root: Path):
        loader = jinja2.ChoiceLoader([
            _PoolTemplates(root, OVERRIDES),
            jinja2.PackageLoader("paperpool", "templates"),
        ])
        # paperpool's own templates are its code; the sandbox (which doubles the time a
        # page takes) is for a pool that brings templates of its own, and then for every
        # template, since its templates and paperpool's include and extend each other
        environment = _Sandbox if _overrides(root) else jinja2.Environment
        self.env = environment(
            loader=loader, undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
            trim_blocks=True, lstrip_blocks=True, autoescape=False,
        )
        self.env.filters["md"] = markdown.text
        self.env.filters["md_link"] = markdown.link
        self.env.filters["plural"] = plural  # {{ n | plural("entry", "entries") }} -> "1 entry"
        self.env.globals["href"] = href

    def render(self, name: str, **context) -> str:
        try:
            template = self.env.get_template(name)
            return template.render(**context)
        except PaperpoolError:
            raise
        except jinja2.exceptions.SecurityError as exc:
            raise PaperpoolError(f"{_where(exc, name)}: template error: {str(exc).rstrip('.')}; "
                                 "a template may only show the data it is given") from None
        except jinja2.TemplateNotFound as exc:
            raise PaperpoolError(f"no template named {exc.name} (needed by {name}); add it to {OVERRIDES}/ or correct the name") from None
        except jinja2.TemplateSyntaxError as exc:
            raise PaperpoolError(f"{_shown(exc.filename, exc.name or name)}:{exc.lineno}: template error: {exc.message}; "
                                 "fix the template") from None
        except Exception as exc:  # noqa: BLE001 - a template is code its author wrote; any failure in it is theirs to fix
            raise PaperpoolError(f"{_where(exc, name)}: template error while rendering: {type(exc).__name__}: {exc}; "
                                 "fix the template") from None


def _where(exc: Exception, name: str) -> str:
    """The template file and line a rendering failed at: Jinja rewrites the traceback so
    that its frames name the templates."""
    where = name
    frame = exc.__traceback__
    while frame is not None:
        filename = frame.tb_frame.f_code.co_filename
        if filename.endswith(TEMPLATE_SUFFIX):
            where = f"{_shown(filename, name)}:{frame.tb_lineno}"
        frame = frame.tb_next
    return where


def _shown(filename: str | None, name: str) -> str:
    """A template as the user knows it: the pool's by its path, paperpool's by its name."""
    if filename and filename.startswith(f"{OVERRIDES}/"):
        return filename
    return f"{name} (paperpool's own template)"


class _Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's sandbox (no underscore attributes, no changing the data), narrowed to the
    objects a page is made from: a Path, a DataFrame or an imported module would
    otherwise hand a template the file system."""

    def is_safe_attribute(self, obj, attr: str, value) -> bool:
        return super().is_safe_attribute(obj, attr, value) and _readable(obj)


def _readable(obj) -> bool:
    if isinstance(obj, ModuleType):
        return obj.__name__ in MODULES
    return _readable_type(type(obj))


@functools.lru_cache(maxsize=256)  # a page reads thousands of attributes of a dozen types
def _readable_type(kind: type) -> bool:
    if issubclass(kind, Path):
        return False
    return issubclass(kind, DATA) or kind.__module__.startswith("paperpool.") or kind.__module__ in JINJA_MODULES


def _overrides(root: Path) -> bool:
    """Whether the pool has templates of its own (anything but a README in templates/)."""
    folder = root / OVERRIDES
    return os.path.lexists(folder) and (folder.is_symlink() or any(
        path.name != "README.md" for path in folder.rglob("*") if not path.is_dir() or path.is_symlink()))


class _PoolTemplates(jinja2.BaseLoader):
    """The pool's templates: plain UTF-8 files inside its templates/ folder, reached
    without following a link (a template linked to /etc/passwd would print it)."""

    def __init__(self, root: Path, folder: str):
        self.root, self.folder = root, folder

    def get_source(self, environment, name: str):
        parts = jinja2.loaders.split_template_path(name)  # refuses '..'
        path = self.root.joinpath(self.folder, *parts)
        shown = "/".join([self.folder, *parts])
        if not os.path.lexists(path):
            raise jinja2.TemplateNotFound(name)
        for step in range(len(parts) + 1):
            if self.root.joinpath(self.folder, *parts[:step]).is_symlink():
                raise PaperpoolError(f"{'/'.join([self.folder, *parts[:step]])}: is a link; templates must be files of the "
                                     f"pool's {self.folder}/ folder: copy the file there instead")
        try:
            source = read_text(path, MAX_TEMPLATE_BYTES)
        except YamlProblem as exc:
            raise PaperpoolError(f"{shown}:{exc.line}: {exc.message}") from None
        modified = os.lstat(path).st_mtime_ns
        return source, shown, lambda: os.path.lexists(path) and os.lstat(path).st_mtime_ns == modified


@jinja2.pass_context
def href(context, target: str) -> str:
    """The relative link from the page being rendered (the context's `here`, a path in
    the site's docs folder) to `target` (such a path, maybe with #anchor)."""
    return relative(target, context["here"])


def relative(target: str, here: str) -> str:
    """The link from page `here` to `target` (both paths in one folder tree)."""
    path, _, anchor = target.partition("#")
    link = posixpath.relpath(path, posixpath.dirname(here) or ".") if path else ""
    return link + (f"#{anchor}" if anchor else "")
