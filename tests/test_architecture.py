"""The dependencies point one way (issue 17): the registry package is the foundation and
imports no feature, even lazily; the features register the sections they read."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from .conftest import REPO

FOUNDATION = REPO / "paperpool" / "registry"
# What the registry may build on besides itself: the one-line problems, the strict YAML
# reader, and the table of system errors these two use.
BENEATH = {"paperpool.problems", "paperpool.yamlio", "paperpool.oserrors"}
HEAVY = ["pandas", "numpy", "bibtexparser", "rapidfuzz", "jsonschema_rs", "matplotlib", "jinja2"]


def _imported(snippet: str) -> set[str]:
    """The modules a fresh interpreter holds after running `snippet`."""
    code = snippet + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_importing_the_registry_imports_no_feature_and_no_heavy_library():
    modules = _imported("import paperpool.registry")
    ours = {name for name in modules if name.startswith("paperpool.")}
    assert ours - BENEATH == {name for name in ours if name.startswith("paperpool.registry")}
    assert [name for name in HEAVY if name in modules] == []


def test_reading_a_registry_imports_only_the_features_sections():
    modules = _imported("from pathlib import Path; from paperpool.registry import load_registry; "
                        "registry, problems = load_registry(Path('.')); assert registry is not None, problems")
    ours = {name for name in modules if name.startswith("paperpool.")}
    features = ours - BENEATH - {name for name in ours if name.startswith("paperpool.registry")}
    # (the site's section checks that each gap table and axis has a page of its own: sitegen.paths names them)
    assert features == {"paperpool.sitegen", "paperpool.sitegen.section", "paperpool.sitegen.paths", "paperpool.bibsections", "paperpool.auditsection",
                        "paperpool.traces", "paperpool.traces.section", "paperpool.traces.schema"}
    assert [name for name in HEAVY if name in modules] == ["jsonschema_rs"]  # the schema check itself


def test_no_module_of_the_registry_names_a_feature_even_inside_a_function():
    for path in sorted(FOUNDATION.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                # relative: one dot stays in the package, two reach paperpool's top level
                target = "paperpool.registry" if node.level == 1 else "paperpool"
                target += f".{node.module}" if node.module else ""
                if not target.startswith("paperpool.registry"):
                    assert target in BENEATH, f"{path.name}:{node.lineno} imports {target}"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module] if isinstance(node, ast.ImportFrom) else [alias.name for alias in node.names]
                assert not any(name.startswith("paperpool") for name in names), f"{path.name}:{node.lineno}"


def test_the_bibtex_section_names_the_field_types_the_import_can_fill():
    from paperpool import bibimport, bibsections

    assert set(bibimport.READERS) == set(bibsections.READABLE_TYPES)
