"""The dependencies point one way (issues 17 and 36). paperpool's code lives in wings, each a
folder named for what it holds, stacked in the order WINGS gives: a module imports, even
inside a function, only from its own wing and the wings below it, and no two modules import
each other. The registry is the foundation: it imports no feature, and the features
register the sections they read through entry points."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from .conftest import REPO

PACKAGE = REPO / "paperpool"
FOUNDATION = PACKAGE / "registry"
# The wings from the ground up; paperpool/project.py, the front door, is a wing of its own
# (it reads, checks and analyses a pool once for every output); __main__ runs the commands,
# and the package's own __init__ is the library's face (Project, analyse) above them all.
WINGS = [
    "files",
    "registry",
    "rendering",
    "pool",
    "analysis",
    "project",
    "formats",
    "scholarly",
    "sitegen",
    "publishing",
    "cli",
    "traces",
    "bench",
    "__main__",
    "__init__",
]
# What the registry may build on besides itself: the one-line problems, the strict YAML
# reader, the table of system errors these two use, and the one way entry points are read.
BENEATH = {"paperpool.files.problems", "paperpool.files.yamlio", "paperpool.files.oserrors", "paperpool.files.entrypoints"}
HEAVY = ["pandas", "numpy", "bibtexparser", "rapidfuzz", "jsonschema_rs", "matplotlib", "jinja2"]


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _wing(module: str) -> str:
    return module.split(".")[1] if "." in module else "__init__"


def _imports(typing: bool = True) -> dict[str, set[str]]:
    """Each module of paperpool and the modules of paperpool it imports (a name imported
    from a package counts as that module when it is one); without `typing`, those imported
    only for type checking (`if TYPE_CHECKING:`), which never run."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module(path) for path in paths}
    found: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        module = _module(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not typing:
            tree.body = [node for node in tree.body if not _type_checking(node)]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] == "paperpool":
                    for alias in node.names:
                        named = f"{source}.{alias.name}"
                        found[module].add(named if named in modules else source)
            elif isinstance(node, ast.Import):
                found[module] |= {alias.name for alias in node.names if alias.name.split(".")[0] == "paperpool"}
    return found


def _type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imported(snippet: str) -> set[str]:
    """The modules a fresh interpreter holds after running `snippet`."""
    code = snippet + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.slow
def test_every_module_is_in_a_wing():
    assert sorted({_wing(module) for module in _imports()} - set(WINGS)) == []
    flat = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert flat == ["__init__.py", "__main__.py", "project.py"]


@pytest.mark.slow
def test_each_wing_imports_only_itself_and_the_wings_below():
    upward = {}
    for module, targets in _imports().items():
        for target in targets:
            if target == "paperpool":  # the package itself: its version
                continue
            if WINGS.index(_wing(target)) > WINGS.index(_wing(module)):
                upward[(module, target)] = f"{_wing(module)} -> {_wing(target)}"
    assert upward == {}


@pytest.mark.slow
def test_no_two_modules_import_each_other():
    imports = _imports(typing=False)  # an import for type checking alone never runs
    circles = sorted((a, b) for a, targets in imports.items() for b in targets if a < b and a in imports.get(b, ()))
    assert circles == []


@pytest.mark.slow
def test_the_library_api_is_project_and_analyse_imported_on_first_use():
    assert [name for name in HEAVY if name in _imported("import paperpool")] == []
    totals = _imported_value("import paperpool, pathlib; print(paperpool.Project(pathlib.Path('.')).analysis.totals)")
    assert totals == "{'retained': 84, 'excluded': 32, 'audited': 116}"
    # analyse sees the pool as it stood on a day, as the published analysis does
    past = "import paperpool, pathlib; p = paperpool.Project(pathlib.Path('.')); day = p.analysis.registry.publication.date"
    past += "; print(paperpool.analyse(p.valid_pool(), day).totals == p.analysis.published.totals)"
    assert _imported_value(past) == "True"
    before = "import paperpool, pathlib, datetime as dt; p = paperpool.Project(pathlib.Path('.'))"
    assert _imported_value(before + "; print(paperpool.analyse(p.valid_pool(), dt.date(2025, 1, 1)).totals['retained'])") == "0"


def _imported_value(snippet: str) -> str:
    return subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, check=True, cwd=REPO).stdout.strip()


@pytest.mark.slow
def test_importing_the_registry_imports_no_feature_and_no_heavy_library():
    modules = _imported("import paperpool.registry")
    ours = {name for name in modules if name.startswith("paperpool.")}
    assert ours - BENEATH - {"paperpool.files"} == {name for name in ours if name.startswith("paperpool.registry")}
    assert [name for name in HEAVY if name in modules] == []


@pytest.mark.slow
def test_reading_a_registry_imports_only_the_features_sections():
    modules = _imported(
        "from pathlib import Path; from paperpool.registry import load_registry; "
        "registry, problems = load_registry(Path('.')); assert registry is not None, problems"
    )
    ours = {name for name in modules if name.startswith("paperpool.")}
    features = ours - BENEATH - {"paperpool.files"} - {name for name in ours if name.startswith("paperpool.registry")}
    # (the site's section checks that each gap table and axis has a page of its own: sitegen.paths names them)
    assert features == {
        "paperpool.sitegen",
        "paperpool.sitegen.section",
        "paperpool.sitegen.paths",
        "paperpool.sitegen.documentation",  # the section checks the documentation folder it names
        "paperpool.sitegen.handwritten",
        "paperpool.files.walk",
        "paperpool.formats",
        "paperpool.formats.bibtex",
        "paperpool.formats.bibtex.sections",
        "paperpool.analysis",
        "paperpool.analysis.auditsection",
        "paperpool.traces",
        "paperpool.traces.section",
        "paperpool.traces.schema",
        "paperpool.traces.extra",  # which says, for validate, what a pool with traces needs installed
    }
    assert [name for name in HEAVY if name in modules] == ["jsonschema_rs"]  # the schema check itself


@pytest.mark.slow
def test_no_module_of_the_registry_names_a_feature_even_inside_a_function():
    for module, targets in _imports().items():
        if _wing(module) == "registry":
            assert sorted(target for target in targets if _wing(target) != "registry" and target not in BENEATH) == [], module


def test_the_bibtex_section_names_the_field_types_the_import_can_fill():
    from paperpool.formats.bibtex import importing, sections

    assert set(importing.READERS) == set(sections.READABLE_TYPES)
