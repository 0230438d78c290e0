"""The Atom feed of recently added entries (RFC 4287), written with ElementTree so that
every title and summary is escaped as text, whatever it holds."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from paperpool.analysis.views import EntryView
from paperpool.rendering.markdown import safe_title, visible

from ..registry import Registry
from . import paths
from .analysis import SiteAnalysis

ATOM = "http://www.w3.org/2005/Atom"
MEDIA_TYPE = "application/atom+xml"  # the feed is Atom, not RSS
# XML 1.0 cannot carry most control characters, even escaped; a title holding one would
# make the whole feed unreadable, so they are dropped
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def atom(analysis: SiteAnalysis, recent: list[EntryView], site_url: str | None) -> str:
    registry = analysis.registry
    date_field = (analysis.site.get("recent") or {}).get("field")
    base = site_url.rstrip("/") + "/" if site_url else ""
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    _text(feed, "title", title(registry))
    _text(feed, "id", base + paths.FEED if base else f"urn:paperpool:{paths.slug(registry.survey.get('title', 'pool'))}:feed")
    _text(feed, "updated", _timestamp(recent[0].record.get(date_field)) if recent and date_field else "1970-01-01T00:00:00Z")
    ET.SubElement(feed, f"{{{ATOM}}}link", rel="self", href=base + paths.FEED)
    ET.SubElement(feed, f"{{{ATOM}}}link", rel="alternate", type="text/html", href=base + paths.html(paths.RECENT))
    author = ET.SubElement(feed, f"{{{ATOM}}}author")
    _text(author, "name", ", ".join(registry.survey.get("authors") or ["paperpool"]))
    for view in recent:
        entry = ET.SubElement(feed, f"{{{ATOM}}}entry")
        _text(entry, "title", view.title)
        # the paper's own address is its lasting identity; the site's page may move
        _text(entry, "id", view.links[0].url if view.links else f"urn:paperpool:entry:{view.key}")
        _text(entry, "updated", _timestamp(view.record.get(date_field)))
        ET.SubElement(entry, f"{{{ATOM}}}link", rel="alternate", type="text/html", href=base + paths.html(paths.entry(view.key)))
        for link in view.links[:1]:
            ET.SubElement(entry, f"{{{ATOM}}}link", rel="related", href=link.url)
        for name in view.names:
            author = ET.SubElement(entry, f"{{{ATOM}}}author")
            _text(author, "name", name)
        if view.summary:
            _text(entry, "summary", view.summary)
    ET.indent(feed)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(feed, encoding="unicode") + "\n"


def title(registry: Registry) -> str:
    return f"{registry.survey.get('title', 'Paper pool')}: recently added"


def link_from_pages(site: Path, pages: list[str], registry: Registry, site_url: str | None) -> None:
    """Put a link to the feed in the head of each page of the built site (`pages`, paths
    in it), where browsers and feed readers discover it: `<link rel="alternate"
    type="application/atom+xml">`, absolute when mkdocs.yml sets site_url, else relative
    to the page. The engine has no setting for it, and Material's template blocks are
    the theme's, not Zensical's, so it is added to the HTML the engine wrote."""
    named = html.escape(safe_title(title(registry)), quote=True)
    base = site_url.rstrip("/") + "/" if site_url else None
    for page in pages:
        path = site / page
        if not path.is_file():
            continue
        href = html.escape((base or paths.root_of(page)) + paths.FEED, quote=True)
        link = f'<link rel="alternate" type="{MEDIA_TYPE}" title="{named}" href="{href}">'.encode()
        text = path.read_bytes()
        if b"</head>" in text:
            path.write_bytes(text.replace(b"</head>", link + b"</head>", 1))


def _text(parent: ET.Element, tag: str, text: str) -> None:
    ET.SubElement(parent, f"{{{ATOM}}}{tag}").text = _NOT_XML.sub("", visible(text))


def _timestamp(value) -> str:
    return f"{value}T00:00:00Z" if value else "1970-01-01T00:00:00Z"
