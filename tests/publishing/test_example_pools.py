"""The example pools under examples/: each validates --strict, its claims hold, and its site
builds (a real mkdocs-material build) showing what its files hold. examples/rl4lrm is
another survey's paper list ("A Survey of Reinforcement Learning for Large Reasoning
Models", arXiv 2509.08827), made by scripts/examples/rl4lrm.py; when a clone of its source
is on the machine, the script must make the committed pool again, byte for byte."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ..conftest import REPO

pytestmark = pytest.mark.slow  # real builds, installs or long runs: left out of the quick run, run by scripts/test and CI

RL4LRM = REPO / "examples" / "rl4lrm"
SCRIPT = REPO / "scripts" / "examples" / "rl4lrm.py"


def _records(root: Path) -> dict[str, dict]:
    return {path.stem: yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted((root / "papers").glob("*.yaml"))}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A copy of the example pool (validate and build may write caches), its site built."""
    from click.testing import CliRunner

    from paperpool.cli.commands import cli

    tmp = tmp_path_factory.mktemp("rl4lrm")
    root = tmp / "pool"
    shutil.copytree(RL4LRM, root)
    runner = CliRunner()
    results = {}
    for name, args in (
        ("validate", ["validate", "--strict"]),
        ("claims", ["claims", "--check"]),
        ("build", ["build", "--out", str(tmp / "site")]),
    ):
        result = runner.invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
        results[name] = result
    return root, tmp / "site", results


def test_the_example_pool_validates_strictly_and_its_claims_hold(built):
    _, _, results = built
    assert results["validate"].exit_code == 0, results["validate"].output
    assert results["claims"].exit_code == 0, results["claims"].output


def test_the_example_site_builds_with_a_page_per_record(built):
    root, site, results = built
    assert results["build"].exit_code == 0, results["build"].output
    records = _records(root)
    assert len(records) >= 300  # the issue asks for a survey of a few hundred papers
    assert {path.stem for path in (site / "entries").glob("*.html")} == set(records)


def test_each_category_page_lists_the_records_tagged_with_it(built):
    root, site, _ = built
    records = _records(root)
    registry = yaml.safe_load((root / "registry.yaml").read_text(encoding="utf-8"))
    for field in ("area", "topic"):
        for value in registry["vocabularies"][field]["values"]:
            page = (site / "axes" / field / f"{value['id']}.html").read_text(encoding="utf-8")
            listed = set(re.findall(r'href="\.\./\.\./entries/([^"/]+)\.html"', page))
            tagged = {key for key, record in records.items() if value["id"] in record.get(field, [])}
            assert tagged, f"{field} {value['id']}: no record holds it"
            assert listed == tagged, f"{field} {value['id']}"


def test_a_topic_implies_its_area(built):
    """The taxonomy has two levels: each topic (subsection) names its area (section) as its parent, and
    a record filed under a topic is filed under that topic's area too."""
    root, _, _ = built
    registry = yaml.safe_load((root / "registry.yaml").read_text(encoding="utf-8"))
    parent = {value["id"]: value["parent"] for value in registry["vocabularies"]["topic"]["values"]}
    areas = {value["id"] for value in registry["vocabularies"]["area"]["values"]}
    assert set(parent.values()) <= areas and len(areas) >= 2
    for key, record in _records(root).items():
        assert {parent[topic] for topic in record.get("topic", [])} <= set(record["area"]), key


def test_the_topic_pages_name_the_area_each_topic_is_part_of(built):
    root, site, _ = built
    registry = yaml.safe_load((root / "registry.yaml").read_text(encoding="utf-8"))
    areas = {value["id"]: value["label"] for value in registry["vocabularies"]["area"]["values"]}
    listing = (site / "axes" / "topic.html").read_text(encoding="utf-8")
    for value in registry["vocabularies"]["topic"]["values"]:
        page = (site / "axes" / "topic" / f"{value['id']}.html").read_text(encoding="utf-8")
        parts = re.findall(r'Part of Area: <a href="\.\./area/([^"]+)\.html">([^<]+)</a>', page)
        assert parts == [(value["parent"], areas[value["parent"]])], value["id"]
        row = re.search(rf'<tr>\s*<td><a href="topic/{re.escape(value["id"])}\.html">.*?</tr>', listing, re.DOTALL)
        assert row and f'href="area/{value["parent"]}.html"' in row.group(0), value["id"]


def _snapshot() -> Path | None:
    """A clone of TsinghuaC3I/Awesome-RL-for-LRMs: $PAPERPOOL_RL4LRM_SNAPSHOT, else
    Awesome-RL-for-LRMs beside the repository."""
    named = os.environ.get("PAPERPOOL_RL4LRM_SNAPSHOT")
    candidate = Path(named) if named else REPO.parent / "Awesome-RL-for-LRMs"
    return candidate if candidate.exists() else None


def test_the_script_makes_the_committed_pool_from_the_snapshot():
    snapshot = _snapshot()
    if snapshot is None:
        pytest.skip(
            "no clone of https://github.com/TsinghuaC3I/Awesome-RL-for-LRMs here: set PAPERPOOL_RL4LRM_SNAPSHOT "
            "to one (holding commit 8e1040a) to check that scripts/examples/rl4lrm.py makes examples/rl4lrm"
        )
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(snapshot), "--check"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_code_repository_several_works_share_does_not_make_them_one_paper(run, tmp_path):
    """The example's `code` links are `identifies: false`: works sharing a repository are
    not duplicates. The same links in a field that identifies are reported, naming both."""
    root = tmp_path / "pool"
    shutil.copytree(RL4LRM, root)
    shared: dict[str, list[str]] = {}
    for key, record in _records(root).items():
        for url in record.get("code", []):
            shared.setdefault(url, []).append(key)
    url, keys = next((url, keys) for url, keys in sorted(shared.items()) if len(keys) > 1)
    assert run("validate", "--strict", cwd=root).exit_code == 0
    text = (root / "registry.yaml").read_text(encoding="utf-8")
    (root / "registry.yaml").write_text(text.replace("    identifies: false\n", ""), encoding="utf-8")
    result = run("validate", cwd=root)
    shown = url.removeprefix("https://")
    assert result.exit_code == 1
    assert any(
        f"code: URL {shown} is also on papers/" in line and line.startswith(tuple(f"papers/{key}.yaml:" for key in keys))
        for line in result.output.splitlines()
    ), result.output


def test_a_pool_without_exclusions_or_dates_is_shown_without_them(built):
    """The example excludes nothing and dates no addition: its site has no exclusion log,
    no recently added page and no feed, and no page links or counts them."""
    _, site, _ = built
    assert not [name for name in ("exclusions.html", "recent.html", "feed.xml") if (site / name).exists()]
    pages = {path.relative_to(site).as_posix(): path.read_text(encoding="utf-8") for path in site.rglob("*.html")}
    linking = sorted(
        path for path, text in pages.items() if re.search(r'href="[^"]*(?:exclusions\.html|recent\.html|feed\.xml)"', text)
    )
    assert linking == []
    for page in ("index.html", "statistics.html"):
        assert "records audited" not in pages[page] and "Audited (both)" not in pages[page], page
