"""Checks over a built site's HTML: every internal link and anchor resolves, and no
link leaves by a scheme other than http(s). Used by the tests on every build they make;
a survey's own CI can call `check_site` the same way."""

from __future__ import annotations

import html.parser
import posixpath
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

LINKING = {("a", "href"), ("link", "href"), ("img", "src"), ("script", "src"), ("source", "src")}
WEB = ("http", "https")
ALLOWED_SCHEMES = WEB + ("mailto",)


@dataclass(frozen=True)
class Broken:
    page: str
    target: str
    reason: str

    def __str__(self) -> str:
        return f"{self.page}: {self.target}: {self.reason}"


class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value and (name == "id" or tag == "a"):
                self.ids.add(value)
            if (tag, name) in LINKING and value is not None:
                self.links.append(value)


def check_site(site: Path) -> list[Broken]:
    pages = {}
    for path in sorted(site.rglob("*.html")):
        parser = _Page()
        parser.feed(path.read_text(encoding="utf-8"))
        pages[path.relative_to(site).as_posix()] = parser
    broken = []
    for name, page in pages.items():
        for link in page.links:
            problem = _check(site, pages, name, link)
            if problem:
                broken.append(Broken(name, link, problem))
    return broken


def _check(site: Path, pages: dict, name: str, link: str) -> str | None:
    parts = urlsplit(link.strip())
    if parts.scheme:
        return None if parts.scheme.lower() in ALLOWED_SCHEMES else f"scheme {parts.scheme}: is not allowed"
    if parts.netloc:
        return None  # protocol-relative //host/...: leaves the site
    if not parts.path:
        target = name
    elif parts.path.startswith("/"):  # root-relative, as mkdocs writes the 404 page's links
        target = posixpath.normpath(unquote(parts.path).lstrip("/"))
    else:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(name), unquote(parts.path)))
    if target.startswith("../"):
        return "points above the site's root"
    path = site / target
    if path.is_dir():
        target, path = posixpath.join(target, "index.html"), path / "index.html"
    if not path.is_file():
        return "no such file"
    # a fragment holding "=" is a page's state (the faceted browser's filter), not an anchor
    state = "=" in parts.fragment
    if parts.fragment and not state and target.endswith(".html") and unquote(parts.fragment) not in pages[target].ids:
        return f"no anchor #{parts.fragment} in {target}"
    return None
