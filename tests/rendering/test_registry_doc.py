"""The registry's reference (paperpool.rendering.registrydoc): written from its JSON Schema, kept in
the repository as docs/registry.md and published on every site paperpool builds."""

from __future__ import annotations

import jsonschema_rs
import pytest

from paperpool.pool import fileschemas
from paperpool.registry import schema
from paperpool.rendering import registrydoc

from ..conftest import EXPECTED, REPO

DOC = REPO / "docs" / "registry.md"


def test_docs_registry_md_is_the_reference_as_the_schema_writes_it(run):
    """Regenerate with `paperpool registry-doc docs/registry.md`."""
    assert DOC.read_text(encoding="utf-8") == registrydoc.markdown()
    assert run("registry-doc", str(DOC), "--check", cwd=REPO).output == f"{DOC}: the registry reference is up to date.\n"


def test_registry_doc_check_fails_on_an_old_copy_and_writes_a_new_one(run, tmp_path):
    copy = tmp_path / "registry.md"
    copy.write_text("# old\n", encoding="utf-8")
    result = run("registry-doc", str(copy), "--check", cwd=tmp_path)
    assert result.exit_code == 1 and "out of date; run paperpool registry-doc" in result.output
    assert run("registry-doc", str(copy), cwd=tmp_path).output == f"{copy}: written.\n"
    assert copy.read_text(encoding="utf-8") == registrydoc.markdown()
    assert run("registry-doc", cwd=tmp_path).output == registrydoc.markdown()  # standard output, outside any pool


def test_registry_doc_compares_a_file_that_is_not_utf8_as_out_of_date(run, tmp_path):
    """Round eighteen: a docs/registry.md holding the byte 0xff ended registry-doc, with and
    without --check, in an internal error (it was read as UTF-8 text, whole)."""
    copy = tmp_path / "registry.md"
    copy.write_bytes(b"abc\xff\n")
    result = run("registry-doc", str(copy), "--check", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {copy}: the registry reference is out of date; run paperpool registry-doc {copy} and commit the result\n",
    )
    assert run("registry-doc", str(copy), cwd=tmp_path).output == f"{copy}: written.\n"
    assert copy.read_text(encoding="utf-8") == registrydoc.markdown()


def _settings(node: dict, document: dict, prefix: str = ""):
    """Every setting's name as the reference writes it, down to the shared definitions."""
    for name, body in node.get("properties", {}).items():
        yield prefix + name
        if "$ref" in body:
            continue
        if body.get("properties"):
            yield from _settings(body, document, f"{prefix}{name}.")
        items = body.get("items")
        if isinstance(items, dict) and items.get("properties") and "$ref" not in items:
            yield from _settings(items, document, f"{prefix}{name}[].")


def test_every_section_definition_and_setting_has_its_row_and_every_section_an_example():
    document = schema.schema()
    text = registrydoc.markdown()
    headings = [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith(("## ", "### "))]
    assert headings == [*document["properties"], "Definitions", *document["$defs"]]
    assert len(set(headings)) == len(headings)  # each is its own anchor, which the Type column links
    for name, body in [*document["properties"].items(), *document["$defs"].items()]:
        section = text.split(f"\n## {name}\n" if name in document["properties"] else f"\n### {name}\n", 1)[1]
        section = section.split("\n## ", 1)[0].split("\n### ", 1)[0]
        assert body["description"].split(".")[0].replace("<", "&lt;") in section, name
        for setting in _settings(schema._resolved(body) if "$ref" in body else body, document):
            assert f"| `{setting}` |" in section, (name, setting)
    for name, body in document["properties"].items():
        assert body.get("examples"), f"section {name} has no example"
        validator = jsonschema_rs.validator_for({"$defs": document["$defs"], **body})
        for example in body["examples"]:
            assert validator.is_valid(example), name


def test_the_site_has_the_reference_in_its_contributing_pages_and_the_schemas_in_its_downloads():
    """The tiny pool's golden pages (test_site.test_golden_pages builds them)."""
    site = EXPECTED / "site"
    page = (site / "registry.md").read_text(encoding="utf-8")
    assert registrydoc.markdown() in page and "## Schema files" in page
    assert "](registry.md)" in (site / "contributing.md").read_text(encoding="utf-8")
    assert "registry.md#schema-files" in (site / "downloads.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in (site / "downloads" / "schemas").iterdir()) == sorted(fileschemas.FILES.values())


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("/dev/zero", "/dev/zero: is a device, not a regular file; give the path of a regular file or of a new one"),
        ("missing.md", "missing.md: no such file; run paperpool registry-doc missing.md to write the reference, and commit it"),
        ("nowhere/x.md", "nowhere/x.md: the folder nowhere does not exist; create it first"),
    ],
    ids=["device", "missing", "no-folder"],
)
def test_registry_doc_check_says_what_it_cannot_compare(run, tmp_path, given, said):
    """It said "out of date" of anything it could not compare, and offered a command that
    would itself be refused (the ninth review)."""
    result = run("registry-doc", "--check", given, cwd=tmp_path)
    assert result.exit_code == 1 and result.output.startswith(f"Error: {said}")
