"""The data the faceted browsers filter: one script per data set, setting
`window.paperpoolData[NAME]`. A script rather than a JSON file so that the site works
when opened from disk, where a page may not fetch() its neighbours.

Facet values come from the same frame columns as the statistics, so choosing a value in
the browser selects exactly the records `paperpool stats` counts under it.
"""

from __future__ import annotations

import json
import math

from paperpool.files.problems import PaperpoolError
from paperpool.rendering.markdown import visible

from ..registry.columns import NONE
from ..registry.model import lookup, resolve_spec
from . import paths
from .analysis import SiteAnalysis

TITLE, AUTHORS, YEAR = "title", "authors", "year"
# The entries' order before the reader sorts: newest first, then by title.
ENTRY_ORDER = [{"field": YEAR, "desc": True}, {"field": TITLE, "desc": False}]


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
        cells.update({name: _cell(analysis, name, key, "entries", view.record) for name in columns})
        records.append(
            {
                "key": key,
                "href": paths.html(paths.entry(key)),
                "cells": cells,
                "facets": {name: facet_values[name].get(key, []) for name in facets},
                "range": _number(frame.table.at[key, range_field]) if range_field else None,
                # what free text searches, in the order it ranks: the title, the authors'
                # full names, then the rest (key, venue, summary and the columns' values)
                "find": [
                    view.title,
                    " ".join(view.names),
                    _words(key, view.venue, view.summary, *(cells[name] for name in columns)),
                ],
                "bibtex": analysis.bibtex[key],
            }
        )
    return {
        "noun": ["entry", "entries"],
        "facets": [_facet(analysis, name, "entries") for name in facets],
        "range": {"field": range_field, "label": analysis.column_label(range_field)} if range_field else None,
        "columns": [
            {"field": TITLE, "label": "Title", "kind": "text", "link": True},
            {"field": AUTHORS, "label": "Authors", "kind": "text"},
            {"field": YEAR, "label": "Year", "kind": "number", "orders": ["Oldest first", "Newest first"]},
        ]
        + [_column(analysis, name, "entries") for name in columns],
        "order": ENTRY_ORDER,
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
        cells.update({name: _cell(analysis, name, record.key, kind, data) for name in columns})
        url = str(data.get("url") or "")
        records.append(
            {
                "key": record.key,
                "href": url if url.lower().startswith(("http://", "https://")) else None,
                "cells": cells,
                "facets": {name: facet_values[name].get(record.key, []) for name in facets},
                "range": None,
                "find": [cells[TITLE], "", _words(record.key, *(cells[name] for name in columns))],
            }
        )
    return {
        "noun": ["exclusion", "exclusions"],
        "facets": [_facet(analysis, name, kind) for name in facets],
        "range": None,
        "columns": [{"field": TITLE, "label": "Record", "kind": "text", "link": True}]
        + [_column(analysis, name, kind) for name in columns],
        "records": records,
    }


# The data sets' size, together: each record's cells repeat its values' labels (six bytes
# a character once escaped), so 700 kB of records and labels made 1.2 GB.
MAX_DATA_BYTES = 64 << 20


def script(name: str, data: dict, most: int = MAX_DATA_BYTES) -> str:
    """The data set as a script. Written record by record, its size counted as it grows:
    past `most` bytes (what is left of MAX_DATA_BYTES) it is refused before the rest is built."""
    head = _json({key: value for key, value in data.items() if key != "records"})
    parts, size = [], len(head)
    for record in data.get("records", []):
        parts.append(_json(record))
        size += len(parts[-1]) + 1
        if size > most:
            raise PaperpoolError(
                f"the Browse pages' data passes {MAX_DATA_BYTES >> 20} MB at the {name}' {record.get('key')}; "
                "shorten the labels of the values its columns and facets show, or show fewer columns "
                "(registry.yaml: site)"
            )
    body = f'{head[:-1]}{"," if len(head) > 2 else ""}"records":[{",".join(parts)}]}}'
    return f"window.paperpoolData=window.paperpoolData||{{}};\nwindow.paperpoolData[{json.dumps(name)}]={body};\n"


def _json(value) -> str:
    # ensure_ascii leaves only ASCII in the file, so no character of a title can be read
    # differently by a browser guessing the encoding; `<` as \u003c, so that the data
    # could not end a script even if it were ever written inline
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")


def _values_by_key(analysis: SiteAnalysis, name: str, kind: str) -> dict[str, list[str]]:
    long = analysis.frames[kind].long(name)
    long = long[long["value"] != NONE]
    return long.groupby("key")["value"].agg(lambda values: [str(v) for v in dict.fromkeys(values)]).to_dict()


def _facet(analysis: SiteAnalysis, name: str, kind: str) -> dict:
    return {
        "field": name,
        "label": analysis.column_label(name, kind),
        "values": [{"id": v, "label": label} for v, label, _ in analysis.values(name, kind)],
    }


def _column(analysis: SiteAnalysis, name: str, kind: str) -> dict:
    column = analysis.frames[kind].columns[name]
    return {
        "field": name,
        "label": column.label,
        "kind": "number" if column.kind == "number" else "text",
        # a value of a vocabulary: shown as a tag on a result's card
        "tag": bool(column.vocabulary_name),
    }


def _cell(analysis: SiteAnalysis, name: str, key: str, kind: str, data: dict):
    """What a column shows of a record: a number, a text, or a list of values (labels
    for a vocabulary's); a sub-decision map shows its keys by mode ("Designed: Spawn, Stop")."""
    frame = analysis.frames[kind]
    column = frame.columns[name]
    value = frame.table.at[key, name]
    if column.kind == "number":
        return _number(value)
    values = list(value) if isinstance(value, (tuple, list)) else ([] if value is None else [value])
    if column.map_field and not column.map_mode:
        modes = lookup(data, column.map_field) or {}
        by_mode: dict = {}
        for v in values:
            by_mode.setdefault(modes.get(v), []).append(analysis.label(name, v, kind))
        vocabulary = analysis.registry.vocabularies[resolve_spec(analysis.registry.fields[kind], column.map_field).vocabulary]
        order = {mode: i for i, mode in enumerate(vocabulary.ids)}
        return [
            f"{_label(vocabulary, mode)}: {', '.join(keys)}"
            for mode, keys in sorted(by_mode.items(), key=lambda item: order.get(item[0], len(order)))
        ]
    shown = [analysis.label(name, v, kind) if column.vocabulary_name else visible(str(v)) for v in values]
    return shown if column.multi else (shown[0] if shown else "")


def _label(vocabulary, value) -> str:
    found = vocabulary.get(value)
    return found.label if found else str(value)


def _words(*parts) -> str:
    """Text for the free-text search: lists flattened, empty parts left out."""
    flat = [" ".join(str(v) for v in part) if isinstance(part, list) else part for part in parts]
    return visible(" ".join(str(part) for part in flat if part not in (None, "")))


def _number(value):
    try:
        return None if value is None or math.isnan(value) else int(value)
    except (TypeError, ValueError):
        return None
