"""The metadata table of an entry's page: every field the registry declares, each value
shown as a reader wants it (labels, not ids; tags linked to their axis pages; links only
to http(s) addresses). Record text is escaped here, once, by paperpool.markdown."""

from __future__ import annotations

from dataclasses import dataclass

from .. import bibwrite, markdown
from ..registry import FieldSpec
from ..render import relative
from . import paths
from .analysis import SiteAnalysis

SHOWN_ELSEWHERE = {"key", "title", "summary"}  # the page's heading and lead paragraph
LIST_SEPARATOR = "; "


@dataclass
class Row:
    label: str
    value: str  # markdown, already escaped


@dataclass
class Section:
    title: str
    rows: list[Row]


def metadata(analysis: SiteAnalysis, data: dict, here: str) -> tuple[list[Row], list[Section]]:
    """The entry's rows, and a section per nested mapping (such as a second reading).
    The mapping the BibTeX is written from is left out: the page shows the BibTeX itself."""
    formatter = _Formatter(analysis, here)
    rows, sections = [], []
    bibtex_sources = {source.split(".")[0] for sources in _bibtex_sources(analysis) for source in sources if "." in source}
    for name, spec in analysis.registry.fields["entries"].items():
        value = data.get(name)
        if name in SHOWN_ELSEWHERE or value in (None, "", [], {}):
            continue
        if spec.type == "mapping":
            if name not in bibtex_sources:
                inner = [Row(sub.title, formatter.value(sub, value.get(sub_name), f"{name}.{sub_name}"))
                         for sub_name, sub in spec.fields.items() if value.get(sub_name) not in (None, "", [], {})]
                sections.append(Section(spec.title, inner))
            continue
        rows.append(Row(spec.title, formatter.value(spec, value, name)))
    return rows, sections


def _bibtex_sources(analysis: SiteAnalysis) -> list[list[str]]:
    settings = bibwrite.export_settings(analysis.registry)
    return [settings.get("key") or [], settings.get("type") or []] + list((settings.get("fields") or {}).values())


class _Formatter:
    def __init__(self, analysis: SiteAnalysis, here: str):
        self.analysis = analysis
        self.here = here
        self.axis_of = axis_of_field(analysis)

    def value(self, spec: FieldSpec, value, name: str) -> str:
        kind = spec.type
        if kind == "choice":
            return self.choice(name, spec.vocabulary, value)
        if kind == "choice_list":
            return LIST_SEPARATOR.join(self.choice(name, spec.vocabulary, item) for item in value)
        if kind == "choice_map":
            modes = self.analysis.registry.vocabularies[spec.vocabulary]
            return LIST_SEPARATOR.join(
                f"{self.choice(name, spec.keys, key)} ({markdown.text(_label(modes.get(mode), mode).lower())})"
                for key, mode in value.items())
        if kind in ("url", "url_list"):
            urls = value if isinstance(value, list) else [value]
            return LIST_SEPARATOR.join(markdown.link(url, url) for url in urls if _is_web(url))
        if kind == "key_list":
            return LIST_SEPARATOR.join(self.entry_link(key) for key in value)
        if kind == "bool":
            return "yes" if value else "no"
        if isinstance(value, list):
            return LIST_SEPARATOR.join(markdown.text(item) for item in value)
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
