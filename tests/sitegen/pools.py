"""Pools the site tests build: one with a hostile value in its records, one with a screening flow."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..conftest import REPO, TINY, edit

HOSTILE_TITLE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> {{ 7*7 }} {% if 1 %}x{% endif %} [click](javascript:alert(1))'


def hostile_pool(root: Path) -> Path:
    shutil.copytree(TINY, root)
    edit(
        root / "registry.yaml",
        "  summary: {type: text, required: true}\n",
        '  summary: {type: text, required: true}\n  added: {type: date, label: "Added"}\n',
    )
    (root / "papers" / "hostile.yaml").write_text(HOSTILE, encoding="utf-8")
    shutil.copytree(REPO / "traces", root / "traces", ignore=shutil.ignore_patterns("otlp", "who-and-when"))
    trace = json.loads((root / "traces" / "debate-two-rounds.json").read_text(encoding="utf-8"))
    trace["description"] = HOSTILE_TRACE_TEXT
    text = json.dumps(trace).replace('"con"', json.dumps(HOSTILE_AGENT))
    (root / "traces" / "hostile-trace.json").write_text(text, encoding="utf-8")
    return root


def flow_pool(root: Path, flow: str = "{stage: stage, reason: reason}") -> Path:
    """The tiny pool with a reason for each of its exclusions (one more than it has:
    two excluded at abstract screening, one at full text) and a screening diagram."""
    shutil.copytree(TINY, root)
    edit(root / "registry.yaml", "entry_fields:\n", REASONS + "\nentry_fields:\n")
    edit(
        root / "registry.yaml",
        '  stage: {type: choice, vocabulary: stage, required: true, label: "Stage"}\n',
        '  stage: {type: choice, vocabulary: stage, required: true, label: "Stage"}\n'
        '  reason: {type: choice, vocabulary: reason, required: true, label: "Reason"}\n',
    )
    edit(
        root / "registry.yaml",
        "display:\n",
        f"site:\n  exclusion_log:\n    facets: [stage, reason]\n    flow: {flow}\ndisplay:\n",
    )
    for key, (stage, reason) in EXCLUSIONS.items():
        (root / "exclusions" / f"{key}.yaml").write_text(
            f"key: {key}\ntitle: Excluded record {key}\nstage: {stage}\nreason: {reason}\n", encoding="utf-8"
        )
    return root


HOSTILE = f"""key: hostile
title: '{HOSTILE_TITLE}'
authors: ["O'Brien, <b>Eve</b>", "{{{{ user }}}}, Mallory"]
year: 2026
urls: ["https://example.org/hostile?a=1&b=<2>"]
method: search
unit: step
decisions: {{D2: designed}}
added: 2026-05-01
summary: 'Pretends: <iframe src="javascript:alert(1)"></iframe> ![x](javascript:alert(2)) {{: onclick="alert(3)"}} `code` $x$ 100%'
"""


HOSTILE_TRACE_TEXT = "<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) {{ 7*7 }}"


HOSTILE_AGENT = "con\u202etxt.exe<b>"  # a right-to-left override and markup in an agent's name


REASONS = """  reason:
    label: "Reason"
    values:
      - {id: off_topic, label: "Off topic"}
      - {id: no_training, label: "No training"}
      - {id: unused, label: "Never given"}
"""


EXCLUSIONS = {"x1": ("abstract", "off_topic"), "x2": ("full_text", "no_training"), "x3": ("abstract", "no_training")}
