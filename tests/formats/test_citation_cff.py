"""CITATION.cff, made from the registry's survey block by `paperpool publish`: valid
against the Citation File Format's own schema (1.2.0, as the cffconvert package on PyPI
ships it, fetched at test time), current in this repository, and read back by validate."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema_rs
import pytest
import yaml

from paperpool.formats import citationcff
from paperpool.registry import load_registry

from ..conftest import REPO


@pytest.fixture(scope="module")
def cff_schema(tmp_path_factory) -> dict:
    """CFF 1.2.0's JSON Schema, from the cffconvert wheel (its dependencies are not
    installed: only the schema file is read)."""
    folder = tmp_path_factory.mktemp("cffconvert")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "--disable-pip-version-check",
            "--dest",
            str(folder),
            "cffconvert==2.0.0",
        ],
        check=True,
        timeout=300,
    )
    with zipfile.ZipFile(next(folder.glob("cffconvert-*.whl"))) as wheel:
        return json.loads(wheel.read("cffconvert/schemas/1.2.0/schema.json"))


def _rendered(root: Path) -> str:
    registry, problems = load_registry(root)
    assert registry is not None, problems
    return citationcff.render(registry)


@pytest.mark.slow
def test_the_shipped_citation_is_valid_cff(cff_schema):
    document = yaml.safe_load((REPO / citationcff.FILE).read_text(encoding="utf-8"))
    validator = jsonschema_rs.validator_for(cff_schema)
    assert [error.message for error in validator.iter_errors(document)] == []
    assert document["preferred-citation"]["title"] == document["title"]
    assert document["authors"] == [{"family-names": "Zhang", "given-names": "Chenchen"}]


@pytest.mark.slow
def test_the_shipped_citation_is_the_registrys(cff_schema):
    """Kept current: publish rewrites it, so a registry edit without it shows here."""
    assert (REPO / citationcff.FILE).read_text(encoding="utf-8") == _rendered(REPO)


def test_a_new_surveys_citation_is_valid_and_validate_reads_it(tmp_path, cff_schema, run):
    run("new-survey", str(tmp_path / "wm"), "--title", "LLM watermarking", cwd=tmp_path)
    root = tmp_path / "wm"
    registry_file = root / "registry.yaml"
    registry_file.write_text(
        registry_file.read_text(encoding="utf-8").replace("authors: [", 'authors: ["Doe, Jane", ', 1), encoding="utf-8"
    )
    text = _rendered(root)
    document = yaml.safe_load(text)
    assert [error.message for error in jsonschema_rs.validator_for(cff_schema).iter_errors(document)] == []
    assert document["authors"][0] == {"family-names": "Doe", "given-names": "Jane"}
    (root / citationcff.FILE).write_text(text, encoding="utf-8")
    assert run("validate", "--strict", cwd=root).exit_code == 0


@pytest.mark.slow
def test_the_publication_url_is_written_as_a_uri(run, pool_copy):
    """survey.publication.url is an http(s) address, which may hold a quote (issue 39's
    fresh review: written into CITATION.cff as it was, not a URI as CFF's schema asks)."""
    registry = pool_copy / "registry.yaml"
    text = registry.read_text(encoding="utf-8")
    registry.write_text(
        text.replace('url: "https://arxiv.org/abs/2605.02801v1"', 'url: "https://e.org/a\\"onmouseover=alert(3)//"'),
        encoding="utf-8",
    )
    assert run("publish", cwd=pool_copy).exit_code == 0
    cited = yaml.safe_load((pool_copy / "CITATION.cff").read_text(encoding="utf-8"))
    assert cited["preferred-citation"]["url"] == "https://e.org/a%22onmouseover=alert(3)//"
