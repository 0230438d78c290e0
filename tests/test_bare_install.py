"""`pip install paperpool`, without extras, is the survey toolkit alone (issue 36): none of
the trace wing's libraries is installed, a pool without traces is validated, counted and
built, and a pool with traces, or a trace command, says in one line what to install.
A real install into a virtual environment of its own, from the package index."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, copy_shipped_pool

pytestmark = pytest.mark.slow

TRACE_ONLY = ("orjson", "msgspec", "pyarrow", "duckdb", "zstandard")
NEEDED = (
    "needs paperpool's traces extra, which is not installed (no orjson, msgspec, pyarrow, duckdb, zstandard); "
    "install it: pip install 'paperpool[traces]'"
)
READING = "reading the pool's traces (traces/ and the corpora of registry.yaml's traces: section) "


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> Path:
    """A virtual environment holding `pip install paperpool` from this repository: its bin/."""
    folder = tmp_path_factory.mktemp("bare")
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    python = folder / "venv" / "bin" / "python"
    # a copy without the repository's own .venv and build/, as a clone has none of them
    source = folder / "paperpool"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".venv", ".git", "*.so", "*.egg-info", ".*_cache", ".hypothesis"))
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(source)], check=True, cwd=folder)
    return folder / "venv" / "bin"


def _paperpool(bare: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([bare / "paperpool", *args], cwd=cwd, capture_output=True, text=True, check=False)


def test_no_trace_library_is_installed(bare):
    found = subprocess.run(
        [bare / "python", "-c", f"import importlib.util; print([m for m in {TRACE_ONLY!r} if importlib.util.find_spec(m)])"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout == "[]\n"


def test_a_pool_without_traces_is_validated_counted_and_built(bare, tmp_path):
    made = _paperpool(bare, "new-survey", "s", "--title", "Bare", "--site-url", "https://example.org/s/", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    survey = tmp_path / "s"
    checked = _paperpool(bare, "validate", cwd=survey)
    assert (checked.returncode, checked.stdout) == (0, "ok: 1 entry and 0 exclusions, no problems.\n")
    counted = _paperpool(bare, "stats", "--format", "json", cwd=survey)
    assert counted.returncode == 0 and '"retained": 1' in counted.stdout
    built = _paperpool(bare, "build", cwd=survey)
    assert built.returncode == 0 and built.stdout.endswith(f"{survey / 'build' / 'site' / 'index.html'}\n")
    assert not (survey / "build" / "site" / "traces.html").exists()


def test_a_pool_with_traces_and_the_trace_commands_say_what_to_install(bare, tmp_path):
    pool = copy_shipped_pool(tmp_path / "pool")
    shutil.copytree(REPO / "traces", pool / "traces")
    line = next(n for n, text in enumerate((pool / "registry.yaml").read_text().splitlines(), 1) if text == "traces:")
    checked = _paperpool(bare, "validate", cwd=pool)
    assert (checked.returncode, checked.stdout) == (
        1,
        f"registry.yaml:{line}: traces: {READING}{NEEDED}\n1 error, 0 warnings.\n",
    )
    built = _paperpool(bare, "build", cwd=pool)
    assert (built.returncode, built.stderr) == (1, f"Error: {READING}{NEEDED}\n")
    assert not (pool / "build").exists()
    command = _paperpool(bare, "trace", "validate", cwd=pool)
    assert (command.returncode, command.stderr) == (1, f"Error: `paperpool trace` {NEEDED}\n")
