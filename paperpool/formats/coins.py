"""COinS (ContextObjects in Spans): an entry's citation as an OpenURL ContextObject
(Z39.88-2004, key/encoded-value form) in the title of a `<span class="Z3988">`, which
the Zotero Connector and other reference managers read from a page to save the paper it
describes. Unlike Google Scholar's `citation_*` meta tags, it does not pass the page off
as the paper: it cites a work the page is about.

Made from the entry's CSL item (csljson.entry_item), so that the page, the downloads and
the exports cite the same thing. Field names follow the OpenURL formats Zotero writes and
reads: journal articles in the journal format, conference papers, chapters, books and
reports in the book format, theses as dissertations, anything else in Dublin Core.
"""

from __future__ import annotations

from urllib.parse import quote

CONTEXT_VERSION = "Z39.88-2004"
FORMATS = {
    "journal": "info:ofi/fmt:kev:mtx:journal",
    "book": "info:ofi/fmt:kev:mtx:book",
    "dissertation": "info:ofi/fmt:kev:mtx:dissertation",
    "dc": "info:ofi/fmt:kev:mtx:dc",
}
# CSL type -> (format, genre, where the title goes, where the container's title goes)
KINDS = {
    "article-journal": ("journal", "article", "atitle", "jtitle"),
    "paper-conference": ("book", "proceeding", "atitle", "btitle"),
    "chapter": ("book", "bookitem", "atitle", "btitle"),
    "book": ("book", "book", "btitle", None),
    "report": ("book", "report", "btitle", None),
    "thesis": ("dissertation", None, "title", None),
}
DUBLIN_CORE = ("dc", None, "title", "source")


def context_object(item: dict) -> str:
    """The CSL item as an OpenURL ContextObject: `ctx_ver=Z39.88-2004&rft_val_fmt=...`,
    every value percent-encoded (so nothing in it is markup; escape the `&` for HTML)."""
    fmt, genre, title_key, container_key = KINDS.get(item.get("type"), DUBLIN_CORE)
    pairs = [("ctx_ver", CONTEXT_VERSION), ("rft_val_fmt", FORMATS[fmt])]
    if item.get("DOI"):
        pairs.append(("rft_id", f"info:doi/{item['DOI']}"))
    if item.get("URL"):
        pairs.append(("rft_id", item["URL"]))
    if genre:
        pairs.append(("rft.genre", genre))
    pairs.append((f"rft.{title_key}", item.get("title", "")))
    if container_key and item.get("container-title"):
        pairs.append((f"rft.{container_key}", item["container-title"]))
    if fmt == "journal":
        pairs += [(f"rft.{key}", item[name]) for key, name in (("volume", "volume"), ("issue", "issue")) if item.get(name)]
    if fmt in ("book", "dc") and item.get("publisher"):
        pairs.append(("rft.publisher", item["publisher"]))
    if fmt == "dissertation" and item.get("publisher"):
        pairs.append(("rft.inst", item["publisher"]))
    pairs += _authors(item.get("author") or [])
    if item.get("issued", {}).get("date-parts"):
        pairs.append(
            (
                "rft.date",
                "-".join(
                    f"{part:02d}" if isinstance(part, int) and index else str(part)
                    for index, part in enumerate(item["issued"]["date-parts"][0])
                ),
            )
        )
    elif item.get("issued", {}).get("literal"):
        pairs.append(("rft.date", item["issued"]["literal"]))
    if item.get("page"):
        start, _, end = item["page"].partition("-")
        pairs += [("rft.pages", item["page"]), ("rft.spage", start.strip())] + (
            [("rft.epage", end.strip())] if end.strip() else []
        )
    return "&".join(f"{key}={quote(str(value), safe='')}" for key, value in pairs if str(value).strip())


def _authors(names: list[dict]) -> list[tuple[str, str]]:
    """The first author as aulast and aufirst (or aucorp, a company), then every author as au."""
    if not names:
        return []
    first = names[0]
    pairs = (
        [("rft.aucorp", first["literal"])]
        if "literal" in first
        else [("rft.aulast", first.get("family", "")), ("rft.aufirst", first.get("given", ""))]
    )
    for name in names:
        pairs.append(
            ("rft.au", name.get("literal") or ", ".join(part for part in (name.get("family"), name.get("given")) if part))
        )
    return pairs
