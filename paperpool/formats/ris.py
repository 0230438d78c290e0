"""The pool as RIS, for reference managers that do not read BibTeX (EndNote, RefWorks,
Zotero's RIS import): the same citation the registry's `bibtex_export` describes,
field by field, with one `TAG  - value` line each and nothing encoded."""

from __future__ import annotations

from paperpool.registry import Registry
from paperpool.rendering.tex import readable

from .bibtex.writing import Citation, citation

# BibTeX's standard entry types -> RIS reference types
TYPES = {
    "article": "JOUR",
    "inproceedings": "CPAPER",
    "conference": "CPAPER",
    "incollection": "CHAP",
    "inbook": "CHAP",
    "book": "BOOK",
    "phdthesis": "THES",
    "mastersthesis": "THES",
    "techreport": "RPRT",
    "unpublished": "UNPB",
    "misc": "GEN",
}
# BibTeX field -> RIS tag; pages and eprint are split or labelled below
TAGS = {
    "title": "TI",
    "author": "AU",
    "editor": "ED",
    "year": "PY",
    "journal": "JO",
    "booktitle": "T2",
    "publisher": "PB",
    "volume": "VL",
    "number": "IS",
    "doi": "DO",
    "url": "UR",
    "howpublished": "N1",
}


def entry_ris(registry: Registry, data: dict) -> str:
    cited = citation(registry, data)
    lines = [("TY", TYPES.get(cited.type.lower(), "GEN")), ("ID", cited.key)]
    for name, value in cited.fields:
        lines += _tagged(name, value, cited)
    lines.append(("ER", ""))
    return "".join(f"{tag}  - {_one_line(text)}".rstrip() + "\n" for tag, text in lines)


def pool_ris(registry: Registry, entries: list[dict]) -> str:
    """Every entry as RIS, in key order, records separated by a blank line."""
    return "\n".join(entry_ris(registry, data) for data in sorted(entries, key=lambda d: str(d.get("key"))))


def _tagged(name: str, value, cited: Citation) -> list[tuple[str, str]]:
    values = value if isinstance(value, list) else [value]
    if name == "pages":
        start, _, end = value.replace("--", "-").replace("\u2013", "-").partition("-")  # 7--9, 7-9 or 7\u20139
        return [("SP", start.strip())] + ([("EP", end.strip())] if end.strip() else [])
    if name == "eprint":
        return [("N1", f"arXiv:{value}")]
    if name == "title":  # TeX math as text, as in CSL-JSON; the BibTeX keeps it as written
        return [("TI", readable(value))]
    if name == "archiveprefix" or name not in TAGS:
        return []
    return [(TAGS[name], item) for item in values]


def _one_line(text: str) -> str:
    # a line break inside a value would start a new, unknown tag (bidirectional controls
    # are already gone: citation() drops them for BibTeX and RIS alike)
    return " ".join(str(text).split())
