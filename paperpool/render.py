"""One renderer for everything paperpool writes from templates.

Templates are found by name, first in the pool's own templates/ folder, then among
the defaults shipped with paperpool, so a survey overrides any of them by adding a
file of the same name. Record text reaches a template as data and is shown through
the `md` filter; a template never re-parses it, so jinja syntax in a title stays text.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from . import markdown
from .problems import PaperpoolError

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
        self.env.filters["md_table"] = markdown.table

    def render(self, name: str, **context) -> str:
        try:
            template = self.env.get_template(name)
            return template.render(**context)
        except jinja2.TemplateNotFound:
            raise PaperpoolError(f"no template named {name}; add it to {OVERRIDES}/ or reinstall paperpool") from None
        except jinja2.TemplateError as exc:
            where = f"{exc.filename or name}:{exc.lineno}: " if getattr(exc, "lineno", None) else f"{name}: "
            raise PaperpoolError(f"{where}template error: {exc.message}; fix the template") from None
