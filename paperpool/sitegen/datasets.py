"""The data the faceted browsers filter: one script per data set, setting
`window.paperpoolData[NAME]`. A script rather than a JSON file so that the site works
when opened from disk, where a page may not fetch() its neighbours.

Facet values come from the same frame columns as the statistics, so choosing a value in
the browser selects exactly the records `paperpool stats` counts under it.
"""

from __future__ import annotations

import json
import math

from ..markdown import visible
from ..registry.columns import NONE
from . import paths
from .analysis import SiteAnalysis

TITLE, AUTHORS, YEAR = "title", "authors", "year"


def entries(analysis: SiteAnalysis) -> dict:
    settings = analysis.site.get("browser") or {}
    facets = settings.get("facets", [])
    columns = settings.get("columns", [])
    range_field = settings.get("range")
    frame = analysis.frames["entries"]
    facet_values = {name: _values_by_key(analysis, name, "entries") for name in facets}
    records = []
    for key, view in analysis.views.items():
        cells = {TITLE: view.title, AUTHORS: view.authors, YEAR: view.year}
        cells.update({name: _cell(analysis, name, key, "entries") for name in columns})
        searchable = [view.title, view.key, view.venue, view.summary, *(view.record.get("authors") or [])]
        records.append({
            "key": key,
            "href": paths.html(paths.entry(key)),
            "cells": cells,
            "facets": {name: facet_values[name].get(key, []) for name in facets},
            "range": _number(frame.table.at[key, range_field]) if range_field else None,
            "text": visible(" ".join(str(part) for part in searchable if part)).lower(),
            "bibtex": analysis.bibtex[key],
        })
    return {
        "noun": ["entry", "entries"],
        "facets": [_facet(analysis, name, "entries") for name in facets],
        "range": {"field": range_field, "label": analysis.column_label(range_field)} if range_field else None,
        "columns": [{"field": TITLE, "label": "Title", "kind": "text", "link": True},
                    {"field": AUTHORS, "label": "Authors", "kind": "text"},
                    {"field": YEAR, "label": "Year", "kind": "number"}]
                   + [_column(analysis, name, "entries") for name in columns],
        "records": records,
    }


def exclusions(analysis: SiteAnalysis) -> dict:
    settings = analysis.site.get("exclusion_log") or {}
    kind = "exclusions"
    facets = settings.get("facets", [])
    columns = settings.get("columns", [])
    facet_values = {name: _values_by_key(analysis, name, kind) for name in facets}
    records = []
    for record in analysis.pool.exclusions:
        data = record.data
        cells = {TITLE: visible(data.get(TITLE) or record.key)}
        cells.update({name: _cell(analysis, name, record.key, kind) for name in columns})
        url = str(data.get("url") or "")
        records.append({
            "key": record.key,
            "href": url if url.lower().startswith(("http://", "https://")) else None,
            "cells": cells,
            "facets": {name: facet_values[name].get(record.key, []) for name in facets},
            "range": None,
            "text": " ".join(str(v) for v in (record.key, *cells.values()) if v).lower(),
        })
    return {
        "noun": ["exclusion", "exclusions"],
        "facets": [_facet(analysis, name, kind) for name in facets],
        "range": None,
        "columns": [{"field": TITLE, "label": "Record", "kind": "text", "link": True}]
                   + [_column(analysis, name, kind) for name in columns],
        "records": records,
    }


def script(name: str, data: dict) -> str:
    # ensure_ascii leaves only ASCII in the file, so no character of a title can be read
    # differently by a browser guessing the encoding; `<` as \u003c, so that the data
    # could not end a script even if it were ever written inline
    body = json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")
    return f"window.paperpoolData=window.paperpoolData||{{}};\nwindow.paperpoolData[{json.dumps(name)}]={body};\n"


def _values_by_key(analysis: SiteAnalysis, name: str, kind: str) -> dict[str, list[str]]:
    long = analysis.frames[kind].long(name)
    long = long[long["value"] != NONE]
    return long.groupby("key")["value"].agg(lambda values: [str(v) for v in dict.fromkeys(values)]).to_dict()


def _facet(analysis: SiteAnalysis, name: str, kind: str) -> dict:
    return {"field": name, "label": analysis.column_label(name, kind),
            "values": [{"id": v, "label": label} for v, label, _ in analysis.values(name, kind)]}


def _column(analysis: SiteAnalysis, name: str, kind: str) -> dict:
    column = analysis.frames[kind].columns[name]
    return {"field": name, "label": column.label, "kind": "number" if column.kind == "number" else "text"}


def _cell(analysis: SiteAnalysis, name: str, key: str, kind: str):
    frame = analysis.frames[kind]
    column = frame.columns[name]
    value = frame.table.at[key, name]
    if column.kind == "number":
        return _number(value)
    values = list(value) if isinstance(value, (tuple, list)) else ([] if value is None else [value])
    if column.vocabulary_name:
        return ", ".join(analysis.label(name, v, kind) for v in values)
    return ", ".join(str(v) for v in values)


def _number(value):
    try:
        return None if value is None or math.isnan(value) else int(value)
    except (TypeError, ValueError):
        return None
