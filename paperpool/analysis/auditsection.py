"""The registry's `audit` section: what the pool's second reading is, in the survey's
words, which `paperpool audit` prints with every agreement figure. Registered with the
registry (SECTION; its schema is registry-audit.schema.json beside this module); light on
purpose, since every reading of a registry imports it (paperpool.analysis.audit needs pandas)."""

from __future__ import annotations

from paperpool.registry import Registry, Section

NAME = "audit"


def about(registry: Registry) -> str:
    return registry.section(NAME).get("about", "")


SECTION = Section(NAME, __package__, f"registry-{NAME}.schema.json")
