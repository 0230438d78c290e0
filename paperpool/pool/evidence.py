"""Evidence for the tags a reader gives a record: where in the paper each tag comes from.

A field of type `evidence` lists items, each saying what it supports (`about`), where
(`url`, the paper's page, with its section where possible) and what the page says, in
one sentence of our own (`note`). The field names what it is evidence `of`:

- one choice_map field (`of: subdecisions`): each item is about one of the map's keys,
  or `none` for a record assessed as touching none of them. Every key the record tags
  needs an item, and an item for a key it does not tag is a mistake; the evidence is
  also what says the record was assessed (an empty map with a `none` item is a record
  that touches nothing, an empty map without evidence one nobody has assessed).
- a list of fields (`of: [credit_unit, evidence_level]`): each item is about one of them.
"""

from __future__ import annotations

from .identity import url_problem

ITEM_FIELDS = ("about", "url", "note")
NONE = "none"  # a record assessed as touching none of a map's keys
EXAMPLE = '- {about: O2, url: "https://arxiv.org/html/2501.00001#S3", note: "the router is trained with PPO"}'


def check(checker, value, spec, path: tuple) -> None:
    """Each item: what it is about, an http(s) link, a sentence; about a key the record
    tags (or none, for a record that tags none), or one of the fields it is evidence of."""
    _check(checker, value, spec, path, against_tags=True)


def check_given(checker) -> None:
    """Tags that need their evidence, given without it: a warning, which CI's
    `validate --strict` fails on."""
    data = checker.record.data
    for name, spec in checker.specs.items():
        if spec.type != "evidence" or len(spec.targets) != 1 or spec.targets[0] not in checker.specs:
            continue
        target = checker.specs[spec.targets[0]]
        if (
            target.type == "choice_map"
            and target.missing_means == "not_assessed"
            and data.get(target.name)
            and data.get(name) in (None, [], "")
        ):
            checker.problem((target.name,), f"is tagged, but {name} is missing; give one item per tag: {EXAMPLE}", "warning")


def check_earlier(checker, value, spec, path: tuple) -> None:
    """Evidence a record held before a change (its `was`): each item as `check` reads it,
    but not against the tags the record holds now, which the change replaced."""
    _check(checker, value, spec, path, against_tags=False)


def _check(checker, value, spec, path: tuple, against_tags: bool) -> None:
    allowed, tagged = _allowed(checker, spec)
    seen = set()
    for here, item in checker.mapping_items(value, path, "evidence items", "an evidence item", ITEM_FIELDS, EXAMPLE):
        about = item.get("about")
        if not isinstance(about, str) or about not in allowed:
            checker.problem(
                here + ("about",), f"{about!r} is not what this evidence can be about; give one of {', '.join(allowed)}"
            )
        else:
            seen.add(about)
        url = item.get("url")
        why = url_problem(url) if isinstance(url, str) else "is not a link"
        if why:
            checker.problem(
                here + ("url",), f"{url!r} {why}; give the http(s) page the evidence is on, with its section where possible"
            )
        note = item.get("note")
        if not isinstance(note, str) or not note.strip():
            checker.problem(here + ("note",), "say in one sentence what the page shows, in your own words")
    if tagged is not None and against_tags:
        _check_tagged(checker, spec, path, tagged, seen)


def _allowed(checker, spec) -> tuple[list[str], list[str] | None]:
    """What the items may be about, and (for a map's evidence) the keys the record tags."""
    fields = spec.targets
    if len(fields) == 1 and fields[0] in checker.specs and checker.specs[fields[0]].type == "choice_map":
        target = checker.specs[fields[0]]
        chosen = checker.record.data.get(target.name)
        tagged = [str(key) for key in chosen] if isinstance(chosen, dict) else []
        return checker.registry.vocabularies[target.keys].ids + [NONE], tagged
    return fields, None


def _check_tagged(checker, spec, path: tuple, tagged: list[str], seen: set) -> None:
    target = spec.targets[0]
    for key in tagged:
        if key not in seen:
            checker.problem(
                path, f"{target} tags {key}, but no item is about {key}; add one with the page and sentence that support it"
            )
    for key in sorted(str(about) for about in seen if about not in tagged and about != NONE):
        checker.problem(path, f"an item is about {key}, which {target} does not tag; tag it or remove the item")
    if NONE in seen and tagged:
        checker.problem(path, f"an item says the record touches none, but {target} tags {', '.join(tagged)}; remove one of them")
