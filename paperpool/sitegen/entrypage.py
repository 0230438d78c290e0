"""The metadata table of an entry's page: every field the registry declares, each value
shown as a reader wants it (labels, not ids; tags linked to their axis pages; links only
to http(s) addresses). Record text is escaped here, once, by paperpool.rendering.markdown."""

from __future__ import annotations

from dataclasses import dataclass

from paperpool.formats.bibtex import writing
from paperpool.pool.evidence import NONE
from paperpool.rendering import markdown
from paperpool.rendering.render import relative

from ..registry import FieldSpec
from . import paths
from .analysis import SiteAnalysis

SHOWN_ELSEWHERE = {"key", "title", "summary"}  # the page's heading and lead paragraph
LIST_SEPARATOR = "; "
EVIDENCE_SEPARATOR = "<br>"  # a map's keys, each with its evidence, one per line of the cell


@dataclass
class Row:
    label: str
    value: str  # markdown, already escaped


@dataclass
class Section:
    title: str
    rows: list[Row]
    headers: tuple[str, str] = ("Field", "Value")


def metadata(analysis: SiteAnalysis, data: dict, here: str) -> tuple[list[Row], list[Section]]:
    """The entry's rows, and a section per nested mapping (such as a second reading).
    The mapping the BibTeX is written from is left out: the page shows the BibTeX itself."""
    formatter = _Formatter(analysis, here)
    rows, sections = [], []
    bibtex_sources = {source.split(".")[0] for sources in _bibtex_sources(analysis) for source in sources if "." in source}
    specs = analysis.registry.fields["entries"]
    evidence = _evidence(specs, data)
    for name, spec in specs.items():
        value = data.get(name)
        if spec.type == "evidence":
            continue  # shown beside the tags it supports
        if spec.type == "history":
            if isinstance(value, list) and value:
                sections.append(
                    Section(
                        spec.title,
                        [formatter.change(specs, change) for change in value if isinstance(change, dict)],
                        ("Date", "Change"),
                    )
                )
            continue
        if name in SHOWN_ELSEWHERE or value in (None, "", [], {}):
            if spec.type == "choice_map" and evidence.get(name, {}).get(NONE):
                rows.append(Row(spec.title, "none" + formatter.sources(evidence[name][NONE])))
            continue
        if spec.type == "mapping":
            if name not in bibtex_sources:
                inner = [
                    Row(sub.title, formatter.value(sub, value.get(sub_name), f"{name}.{sub_name}"))
                    for sub_name, sub in spec.fields.items()
                    if value.get(sub_name) not in (None, "", [], {})
                ]
                sections.append(Section(spec.title, inner))
            continue
        rows.append(Row(spec.title, formatter.value(spec, value, name, evidence.get(name, {}))))
    return rows, sections


def _evidence(specs: dict[str, FieldSpec], data: dict) -> dict[str, dict[str, list[dict]]]:
    """Field -> what the evidence is about (a map's key, the field itself, or none) -> its items."""
    found: dict[str, dict[str, list[dict]]] = {}
    for name, spec in specs.items():
        items = data.get(name) if spec.type == "evidence" else None
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, dict):
                continue
            about = str(item.get("about"))
            field = about if about in spec.targets else spec.targets[0] if len(spec.targets) == 1 else None
            if field is not None:
                found.setdefault(field, {}).setdefault(about if field != about else field, []).append(item)
    return found


def _bibtex_sources(analysis: SiteAnalysis) -> list[list[str]]:
    settings = writing.export_settings(analysis.registry)
    return [settings.get("key") or [], settings.get("type") or []] + [
        writing.field_sources(given)[0] for given in (settings.get("fields") or {}).values()
    ]


class _Formatter:
    def __init__(self, analysis: SiteAnalysis, here: str):
        self.analysis = analysis
        self.here = here
        self.axis_of = axis_of_field(analysis)

    def value(self, spec: FieldSpec, value, name: str, evidence: dict[str, list[dict]] | None = None) -> str:
        """A field's value as readers see it, with the evidence for it (or, for a map, for each key) beside it."""
        evidence = evidence or {}
        kind = spec.type
        if kind == "choice_map":
            modes = self.analysis.registry.vocabularies[spec.vocabulary]
            return EVIDENCE_SEPARATOR.join(
                f"{self.choice(name, spec.keys, key)} ({markdown.text(_label(modes.get(mode), mode))})"
                + self.sources(evidence.get(str(key), []))
                for key, mode in value.items()
            )
        return self.plain(spec, value, name) + self.sources(evidence.get(name, []))

    def change(self, specs: dict[str, FieldSpec], change: dict) -> Row:
        """One change of the record's history: its day, what the fields were before, and why."""
        was = change.get("was") if isinstance(change.get("was"), dict) else {}
        before = [
            f"{markdown.text(specs[name].title)} was {self.value(specs[name], value, name) if value not in (None, {}, []) else 'not set'}"
            for name, value in was.items()
            if name in specs and specs[name].type != "evidence"
        ]
        replaced = [name for name in was if name in specs and specs[name].type == "evidence"]
        if replaced:
            given = any(was[name] not in (None, []) for name in replaced)
            before.append("its evidence then is kept in the record" if given else "no evidence was recorded")
        why = markdown.text(change.get("why") or "")
        return Row(str(change.get("date", "")), "; ".join(before) + (f". {why}" if why else ""))

    def sources(self, items: list[dict]) -> str:
        """Evidence items as `: sentence (source)`, each linking to its page."""
        return markdown.joined(
            (
                f": {markdown.text(item.get('note') or '')}"
                + (f" ({markdown.link('source', item['url'])})" if _is_web(str(item.get("url", ""))) else "")
                for item in items
            ),
            "",
        )

    def plain(self, spec: FieldSpec, value, name: str) -> str:
        kind = spec.type
        if kind == "choice":
            return self.choice(name, spec.vocabulary, value)
        if kind == "choice_list":
            return LIST_SEPARATOR.join(self.choice(name, spec.vocabulary, item) for item in value)
        if kind in ("url", "url_list"):
            urls = value if isinstance(value, list) else [value]
            return LIST_SEPARATOR.join(markdown.link(url, url) for url in urls if _is_web(url))
        if kind == "key_list":
            return LIST_SEPARATOR.join(self.entry_link(key) for key in value)
        if kind == "bool":
            return "yes" if value else "no"
        if isinstance(value, list):
            return markdown.joined((markdown.text(item) for item in value), LIST_SEPARATOR)
        return markdown.text(value)

    def choice(self, name: str, vocabulary_name: str, value) -> str:
        vocabulary = self.analysis.registry.vocabularies[vocabulary_name]
        label = markdown.text(_label(vocabulary.get(value), value))
        axis = self.axis_of.get(name)
        if axis and value in self.analysis.value_paths[axis]:
            return f"[{label}]({relative(self.analysis.value_paths[axis][value], self.here)})"
        return label

    def entry_link(self, key: str) -> str:
        view = self.analysis.views.get(key)
        if view is None:
            return markdown.text(key)  # an exclusion, or a paper not in the pool
        return f"[{markdown.text(view.title)}]({relative(paths.entry(key), self.here)})"


def axis_of_field(analysis: SiteAnalysis) -> dict[str, str]:
    """Field -> the axis whose value pages show it: the field itself, the combined column
    that joins it (further reward families -> reward families), or the column derived
    from a sub-decision map."""
    found = {}
    for axis in analysis.site.get("axes") or []:
        column = analysis.frames["entries"].columns[axis]
        for name in column.parts or [column.map_field or axis]:
            found.setdefault(name, axis)
    return found


def _label(value, fallback) -> str:
    return value.label if value is not None else str(fallback)


def _is_web(url: str) -> bool:
    return str(url).lower().startswith(("http://", "https://"))
