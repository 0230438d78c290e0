"""The contributing page's field guide: every field a record has, what it holds, and
for a controlled field each value with its description, linked to the value's page
where the site has one. All of it read from the registry."""

from __future__ import annotations

from dataclasses import dataclass

from paperpool.pool.recordchecks import expected_value

from .analysis import SiteAnalysis
from .entrypage import axis_of_field


@dataclass
class GuideValue:
    id: str
    label: str
    description: str
    page: str | None  # the value's page, when its field is one of the site's axes
    maps_to: str | None  # the value a derived field takes from it (a reward type's family)


@dataclass
class GuideField:
    name: str
    label: str
    expects: str  # "text", "one of R1, R2, ...", "a list of http(s) links"
    required: bool
    help: str
    vocabulary: str  # the vocabulary's description, for a controlled field
    values: list[GuideValue]
    modes: list[GuideValue]  # a map's values (trained, designed), whose keys are `values`
    derives: str  # the label of the field whose value follows from this one's, if any


def field_guide(analysis: SiteAnalysis) -> dict[str, list[GuideField]]:
    """kind -> its fields in the registry's order."""
    registry = analysis.registry
    axes = axis_of_field(analysis)
    guide = {}
    for kind, specs in registry.fields.items():
        fields = []
        for name, spec in specs.items():
            listed = spec.keys or spec.vocabulary
            vocabulary = registry.vocabularies[listed] if listed else None
            axis = axes.get(name) if kind == "entries" else None
            values = [_value(analysis, value, axis) for value in vocabulary.values] if vocabulary else []
            modes = (
                [_value(analysis, value, None) for value in registry.vocabularies[spec.vocabulary].values] if spec.keys else []
            )
            derives = next((other.title for other in specs.values() if other.derived_from == name), "")
            fields.append(
                GuideField(
                    name,
                    spec.title,
                    expected_value(spec, registry),
                    spec.required,
                    spec.help,
                    vocabulary.description if vocabulary else "",
                    values,
                    modes,
                    derives,
                )
            )
        guide[kind] = fields
    return guide


def _value(analysis: SiteAnalysis, value, axis: str | None) -> GuideValue:
    paths = analysis.value_paths.get(axis) if axis else None
    page = paths[value.id] if paths is not None and value.id in paths else None
    maps_to = value.extra.get("maps_to")
    return GuideValue(value.id, value.label, value.description, page, None if maps_to is None else str(maps_to))
