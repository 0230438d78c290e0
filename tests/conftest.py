from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperpool.cli.commands import cli

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "tests" / "source"
TINY = REPO / "tests" / "pools" / "tiny"  # a tiny pool of another survey, with its own registry
EXPECTED = REPO / "tests" / "pools" / "tiny-expected"  # its commands' exact outputs


TRACES_EXTRA = ("orjson", "msgspec", "pyarrow", "duckdb", "zstandard")
FRAMEWORKS = ("opentelemetry.sdk", "pydantic_ai", "agents", "langgraph", "strands")
# Test modules that need a package the traces or test extra installs (pyproject.toml): where
# one is missing they are left out of collection, not an error of it, and the header says
# which and how to install it. On CI (the CI variable set) every test must run.
NEEDS = [
    ("traces/*.py", TRACES_EXTRA, "pip install -e '.[traces]'"),
    ("traces/test_frameworks_*.py", FRAMEWORKS, "pip install -e '.[test]'"),
    ("traces/test_genai_reference.py", FRAMEWORKS, "pip install -e '.[test]'"),
    ("traces/test_otlp*.py", ("opentelemetry.sdk", "google.protobuf"), "pip install -e '.[test]'"),
    ("sitegen/test_browser*.py", ("playwright",), "pip install -e '.[test]'"),
    ("sitegen/test_search.py", ("playwright",), "pip install -e '.[test]'"),
    ("scholarly/*.py", ("pytest_httpserver",), "pip install -e '.[test]'"),
    ("files/test_csvcells.py", ("hypothesis",), "pip install -e '.[test]'"),
    ("test_fuzz.py", ("hypothesis", *TRACES_EXTRA), "pip install -e '.[test]'"),
    ("formats/test_csljson.py", ("citeproc",), "pip install -e '.[test]'"),
    ("formats/test_export.py", ("rispy",), "pip install -e '.[test]'"),
    ("test_hostile.py", ("rispy", *TRACES_EXTRA), "pip install -e '.[test]'"),
]
LEFT_OUT = []
collect_ignore_glob = []
for pattern, modules, install in NEEDS:
    missing = [module for module in modules if importlib.util.find_spec(module.split(".")[0]) is None]
    if missing:
        collect_ignore_glob.append(pattern)
        LEFT_OUT.append(f"left out {pattern}: {', '.join(missing)} not installed ({install})")


def pytest_report_header(config):
    return LEFT_OUT


def pytest_sessionstart(session):
    if LEFT_OUT and os.environ.get("CI"):
        pytest.exit("on CI every test runs, and " + "; ".join(LEFT_OUT), returncode=1)


# Markers by the folder a test lives in (declared, with the others, in pyproject.toml): the
# trace wing's tests are `traces`; the scholarly tests answer from a local server standing in
# for the services (`network-fixture`). `browser` and `slow` are marked where they apply.
FOLDER_MARKS = {"traces": "traces", "scholarly": "network-fixture"}


def pytest_collection_modifyitems(items):
    for item in items:
        parts = Path(item.fspath).relative_to(REPO / "tests").parts
        if len(parts) > 1 and parts[0] in FOLDER_MARKS:
            item.add_marker(getattr(pytest.mark, FOLDER_MARKS[parts[0]]))


@pytest.fixture(scope="session", autouse=True)
def _cache_of_this_session(tmp_path_factory):
    """paperpool's cache of checked records goes to a folder of the test session, not to
    the user's (every test pool would leave a file there); commands the tests start as
    processes inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PAPERPOOL_CACHE_DIR", str(tmp_path_factory.mktemp("paperpool-cache")))
        yield


@pytest.fixture
def tiny(tmp_path) -> Path:
    """A copy of the tiny pool: its own registry (method, unit, decisions), 5 entries, 2 exclusions."""
    root = tmp_path / "tiny"
    shutil.copytree(TINY, root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    """Replace the first `old` in a file, failing loudly when it is not there."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def copy_shipped_pool(root: Path) -> Path:
    """Copy the shipped pool's registry, claims, entries, exclusions and trace corpora to a new folder."""
    root.mkdir()
    for name in ("registry.yaml", "claims.yaml"):
        shutil.copyfile(REPO / name, root / name)
    for folder in ("papers", "exclusions", "corpora"):  # the corpora the registry declares
        shutil.copytree(REPO / folder, root / folder)
    return root


@pytest.fixture
def pool_copy(tmp_path) -> Path:
    """A copy of the shipped pool: registry, entries and exclusions."""
    return copy_shipped_pool(tmp_path / "pool")


@pytest.fixture
def empty_pool(tmp_path) -> Path:
    """The shipped registry with no records yet (representatives relaxed) and no claims."""
    root = tmp_path / "empty"
    root.mkdir()
    text = (REPO / "registry.yaml").read_text(encoding="utf-8")
    import re

    text = re.sub(r"representatives: \[[^\]]*\]", "representatives: []", text)
    text = re.sub(r"\n  claims: claims.yaml\n", "\n", text)
    (root / "registry.yaml").write_text(text, encoding="utf-8")
    (root / "papers").mkdir()
    (root / "exclusions").mkdir()
    shutil.copytree(REPO / "corpora", root / "corpora")  # the trace corpora the registry declares
    return root


class Result:
    def __init__(self, exit_code: int, output: str):
        self.exit_code = exit_code
        self.output = output


@pytest.fixture
def run():
    """Run the CLI in a folder, as `paperpool ARGS` would, with stderr merged."""

    def invoke(*args: str, cwd: Path) -> Result:
        runner = CliRunner()
        import os

        old = Path.cwd()
        os.chdir(cwd)
        try:
            result = runner.invoke(cli, list(args), prog_name="paperpool", catch_exceptions=False)
        finally:
            os.chdir(old)
        return Result(result.exit_code, result.output)

    return invoke


@pytest.fixture
def snapshot():
    """A fingerprint of every file under a folder, to prove nothing was written."""

    def take(root: Path) -> dict[str, str]:
        return {
            str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*"))
            if path.is_file()
        }

    return take


def children(pid: int) -> list[int]:
    """The processes pid started that still run."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:  # the task ended meanwhile
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below pid: its children, theirs, and so on."""
    found, todo = [], [pid]
    while todo:
        below = children(todo.pop())
        found += below
        todo += below
    return found


# What a contributor fills in after the import: every TODO the stubs carry.
FILLED = {
    "category": "rl_method",
    "is_rl": "'yes'",
    "reward_type": "orchestration",
    "reward_family": "R7",
    "credit_granularity": "orchestrator",
    "credit_unit": "orchestrator",
    "orchestration_form": "swarm",
    "scenario": "general",
    "is_core": "core",
    "verified": "partial",
    "evidence_level": "preprint",
    "summary": "Learns when an orchestrator should stop spawning sub-agents.",
    "subdecision_evidence": '[{about: none, url: "https://example.org/paper", note: "A test record that makes no orchestration decision."}]',
}


CASES = REPO / "tests" / "cases" / "validate"  # one case per validation rule (tests/pool/test_validate_cases.py)


CASE_NAMES = sorted(p.name for p in CASES.iterdir() if p.is_dir())


def lay_case(case: Path, pool: Path) -> None:
    for source in case.rglob("*"):
        relative = source.relative_to(case)
        if source.is_dir() or relative.parts[0] in ("expected", "remove", "args"):
            continue
        target = pool / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    remove = case / "remove"
    if remove.exists():
        for line in remove.read_text().split():
            (pool / line).unlink()


def remove_deep(folder) -> None:
    """Remove a folder however deep, a level at a time (shutil.rmtree calls itself once a level)."""
    pending = [str(folder)]
    while pending:
        current = pending[-1]
        entries = list(os.scandir(current))
        folders = [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        if folders:
            pending += folders
        else:
            os.rmdir(current)
            pending.pop()
