"""The foundation: a survey's registry.yaml read and checked, with its JSON Schema, the
column model and the query language. It imports no feature: the features (the site,
BibTeX, traces) register the sections they read (paperpool.registry.sections), and
everything else in paperpool builds on this package."""

from .characters import (
    BIDI_CONTROLS,
    CONTROL_CHARACTERS,
    refused_character_message,
    refused_characters,
)
from .loading import (
    LINKED_FILE,
    SECTIONS_HINT,
    NoRegistry,
    find_root,
    holds_registry,
    linked_step,
    load_registry,
    outside_pool,
    shape_problems,
)
from .model import (
    CLAIMS_FILE,
    KEY_RE,
    RECORD_KINDS,
    RECORD_SUFFIX,
    REGISTRY_FILE,
    TITLE_SIMILARITY,
    CsvColumn,
    FieldSpec,
    Publication,
    Registry,
    Rule,
    Value,
    ValueSet,
    Vocabulary,
    lookup,
    registry_problem,
    resolve_spec,
)
from .reader import FIELD_TYPES, IDENTIFIER_SCHEMES
from .sections import Section

__all__ = [
    "BIDI_CONTROLS",
    "CLAIMS_FILE",
    "CONTROL_CHARACTERS",
    "FIELD_TYPES",
    "IDENTIFIER_SCHEMES",
    "KEY_RE",
    "LINKED_FILE",
    "RECORD_KINDS",
    "RECORD_SUFFIX",
    "REGISTRY_FILE",
    "SECTIONS_HINT",
    "TITLE_SIMILARITY",
    "CsvColumn",
    "FieldSpec",
    "NoRegistry",
    "Publication",
    "Registry",
    "Rule",
    "Section",
    "Value",
    "ValueSet",
    "Vocabulary",
    "find_root",
    "holds_registry",
    "linked_step",
    "load_registry",
    "lookup",
    "outside_pool",
    "refused_character_message",
    "refused_characters",
    "registry_problem",
    "resolve_spec",
    "shape_problems",
]
