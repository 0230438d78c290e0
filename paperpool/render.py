"""One renderer for everything paperpool writes from templates.

Templates are found by name, first in the pool's own templates/ folder, then among
the defaults shipped with paperpool, so a survey overrides any of them by adding a
file of the same name. Record text reaches a template as data and is shown through
the `md` filter; a template never re-parses it, so jinja syntax in a title stays text.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

import jinja2

from . import markdown
from .problems import PaperpoolError, plural

OVERRIDES = "templates"


class Renderer:
    def __init__(self, root: Path):
        loader = jinja2.ChoiceLoader([
            jinja2.FileSystemLoader(root / OVERRIDES),
            jinja2.PackageLoader("paperpool", "templates"),
        ])
        self.env = jinja2.Environment(
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
        except jinja2.TemplateNotFound as exc:
            raise PaperpoolError(f"no template named {exc.name} (needed by {name}); add it to {OVERRIDES}/ or correct the name") from None
        except jinja2.TemplateSyntaxError as exc:
            raise PaperpoolError(f"{exc.filename or name}:{exc.lineno}: template error: {exc.message}; fix the template") from None
        except UnicodeDecodeError:
            raise PaperpoolError(f"{OVERRIDES}/{name}: not UTF-8; save the template as UTF-8") from None
        except Exception as exc:  # noqa: BLE001 - a template is code its author wrote; any failure in it is theirs to fix
            raise PaperpoolError(f"{name}: template error while rendering: {type(exc).__name__}: {exc}; fix the template") from None


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
