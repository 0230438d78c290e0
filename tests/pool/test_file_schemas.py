"""The JSON Schemas of a pool's files (paperpool.pool.fileschemas): the records' made from the
pool's registry, the claim ledger's and the registry's; `paperpool schemas` writes them
where the files' yaml-language-server lines point."""

from __future__ import annotations

import json

import jsonschema_rs
import pytest

from paperpool.files.yamlio import load_yaml
from paperpool.pool import fileschemas, ledger
from paperpool.registry import load_registry

from ..conftest import REPO, TINY, edit


def _data(path):
    """A YAML file as an editor's schema check sees it: JSON, a date the text it was written as."""
    return json.loads(json.dumps(load_yaml(path).data, default=str))


def _registry(root):
    registry, problems = load_registry(root)
    assert registry is not None, problems
    return registry


@pytest.mark.parametrize("root", [REPO, TINY], ids=["shipped", "tiny"])
def test_the_schemas_accept_every_file_of_the_pool(root):
    registry = _registry(root)
    documents = fileschemas.documents(registry)
    assert sorted(documents) == sorted(fileschemas.FILES.values())
    for name, document in documents.items():
        assert jsonschema_rs.meta.is_valid(document), name
    checked = 0
    for kind in registry.fields:
        validator = jsonschema_rs.validator_for(documents[fileschemas.FILES[kind]])
        for path in sorted(registry.folder(kind).glob("*.yaml")):
            assert [error.message for error in validator.iter_errors(_data(path))] == [], path
            checked += 1
    assert checked == len(list(registry.folder("entries").glob("*.yaml"))) + len(
        list(registry.folder("exclusions").glob("*.yaml"))
    )
    assert jsonschema_rs.validator_for(documents["claims.schema.json"]).is_valid(_data(registry.claims_path))
    assert jsonschema_rs.validator_for(documents["registry.schema.json"]).is_valid(_data(root / "registry.yaml"))


@pytest.mark.parametrize("root", [REPO, TINY], ids=["shipped", "tiny"])
def test_the_pool_json_export_follows_its_schema(root, run):
    """What `export --format json` writes (publish's and the site's pool.json)."""
    exported = json.loads(run("export", "--format", "json", cwd=root).output)
    validator = jsonschema_rs.validator_for(fileschemas.pool_export(_registry(root)))
    assert [error.message for error in validator.iter_errors(exported)] == []
    exported["entries"][0]["year"] = "soon"
    exported["exclusions"].append({"key": "e-broken"})
    found = {"/".join(map(str, error.instance_path)) for error in validator.iter_errors(exported)}
    assert found == {
        "entries/0/year",
        f"exclusions/{len(exported['exclusions']) - 1}",
    }  # text for a year; required fields missing


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("method", "no-such-method"),  # a value outside its vocabulary
        ("year", "2024"),  # text where a whole number belongs
        ("nonsense", 1),  # a field the registry does not declare
        ("urls", ["ftp://example.org"]),  # not an http(s) link
        ("title", None),  # a required field left empty
    ],
)
def test_the_record_schema_rejects_a_broken_record(field, value):
    registry = _registry(TINY)
    data = _data(registry.record_path("entries", "alpha"))  # holds method, year, urls and title
    validator = jsonschema_rs.validator_for(fileschemas.record(registry, "entries"))
    assert validator.is_valid(data)
    assert not validator.is_valid(data | {field: value})
    assert validator.is_valid(data | {"year": registry.unknown_marker})  # not known yet: validate's warning, not an error


def test_the_record_schema_is_made_from_the_registry_not_written_for_one_survey():
    registry = _registry(TINY)
    document = fileschemas.record(registry, "entries")
    method = document["properties"]["method"]["anyOf"][0]  # its vocabulary, written once under $defs
    vocabulary = registry.fields["entries"]["method"].vocabulary
    assert method == {"$ref": f"#/$defs/choice-{vocabulary}"}
    assert document["$defs"][f"choice-{vocabulary}"]["enum"] == registry.vocabularies[vocabulary].ids
    assert "TODO" in json.dumps(fileschemas.record(registry, "entries")) and registry.unknown_marker == "TODO"


def test_the_claims_schema_names_what_the_claims_reader_reads():
    document = fileschemas.claims_schema()
    claim = document["properties"]["claims"]["items"]
    assert set(claim["properties"]) == ledger.CLAIM_FIELDS
    assert set(claim["properties"]["dispute"]["properties"]) == set(ledger.DISPUTE_FIELDS)
    validator = jsonschema_rs.validator_for(document)
    good = {"claims": [{"id": "a-b", "statement": "S.", "expected": "<= 2", "over": "all"}]}
    assert validator.is_valid(good)
    for broken in ({"expected": "about 2"}, {"over": "papers"}, {"kind": "draft"}, {"id": "A B"}, {"extra": 1}):
        assert not validator.is_valid({"claims": [good["claims"][0] | broken]}), broken


def test_paperpool_schemas_writes_them_and_check_says_when_the_registry_moved(run, tiny):
    assert run("schemas", "--check", cwd=tiny).exit_code == 1
    result = run("schemas", cwd=tiny)
    assert result.output == (
        "schemas/: wrote registry.schema.json, claims.schema.json, entries.schema.json, exclusions.schema.json, "
        "pool.schema.json.\n"
    )
    assert run("schemas", "--check", cwd=tiny).output == "schemas/: the schemas are up to date.\n"
    # a value added: the records' schema changes with the registry
    edit(
        tiny / "registry.yaml",
        '- {id: search, label: "Search"}',
        '- {id: search, label: "Search"}\n      - {id: other, label: "Other"}',
    )
    result = run("schemas", "--check", cwd=tiny)
    assert result.exit_code == 1 and "entries.schema.json" in result.output and "run paperpool schemas" in result.output
    written = json.loads((tiny / "schemas" / "entries.schema.json").read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(fileschemas.record(_registry(TINY), "entries")))


# ---------------------------------------------------------------------------------
# new-survey's files name their schemas, and the records added later do too
# ---------------------------------------------------------------------------------


def _schema_named(path):
    """The schema a file's first line points editors at, resolved as the YAML language
    server resolves it: relative to the file."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(fileschemas.MODELINE), path
    return (path.parent / first.removeprefix(fileschemas.MODELINE)).resolve()


@pytest.mark.slow
def test_new_survey_writes_the_schemas_and_points_each_file_at_its_own(run, tmp_path):
    assert run("new-survey", "wm", "--title", "LLM watermarking", cwd=tmp_path).exit_code == 0
    root = tmp_path / "wm"
    registry = _registry(root)
    assert {p.name: p.read_text(encoding="utf-8") for p in (root / "schemas").iterdir()} == fileschemas.texts(registry)
    files = {
        root / "registry.yaml": "registry",
        root / "claims.yaml": "claims",
        root / "papers" / "schulman2017proximal.yaml": "entries",
    }
    for path, what in files.items():
        schema_file = _schema_named(path)
        assert schema_file == (root / "schemas" / fileschemas.FILES[what]).resolve()
        validator = jsonschema_rs.validator_for(json.loads(schema_file.read_text(encoding="utf-8")))
        assert [error.message for error in validator.iter_errors(_data(path))] == [], path
    assert run("validate", "--strict", cwd=root).exit_code == 0  # every reader takes the comment line
    assert run("schemas", "--check", cwd=root).exit_code == 0
    result = run("build", cwd=root)  # the site has the registry's reference and serves the same schemas
    assert result.exit_code == 0, result.output
    site = root / "build" / "site"
    assert "registry.yaml reference" in (site / "registry.html").read_text(encoding="utf-8")
    for name in fileschemas.FILES.values():
        assert (site / "downloads" / "schemas" / name).read_bytes() == (root / "schemas" / name).read_bytes(), name
    # records added later start with the line too
    assert (
        run(
            "add",
            "--no-interactive",
            "--set",
            "title=Marks in the tokens",
            "--set",
            "authors=Roe, Rick",
            "--set",
            "year=2026",
            "--set",
            "urls=https://example.org/marks",
            "--set",
            "approach=training",
            "--set",
            "summary=Marks.",
            cwd=root,
        ).exit_code
        == 0
    )
    (tmp_path / "new.bib").write_text(
        "@inproceedings{kirchenbauer2023watermark, title={A Watermark for Large Language Models},\n"
        "  author={Kirchenbauer, John and Geiping, Jonas}, booktitle={ICML}, year={2023}}\n",
        encoding="utf-8",
    )
    assert run("import-bib", str(tmp_path / "new.bib"), cwd=root).exit_code == 0
    validator = jsonschema_rs.validator_for(fileschemas.record(registry, "entries"))
    added = sorted(set((root / "papers").glob("*.yaml")) - set(files))
    assert len(added) == 2
    for path in added:
        assert _schema_named(path) == (root / "schemas" / "entries.schema.json").resolve()
        assert validator.is_valid(_data(path)), path
    assert run("validate", cwd=root).exit_code == 0


def test_a_pool_without_schemas_gets_records_without_the_line(run, tiny):
    result = run(
        "add",
        "--no-interactive",
        "--set",
        "title=Plain",
        "--set",
        "authors=Roe, Rick",
        "--set",
        "year=2026",
        "--set",
        "urls=https://example.org/plain",
        "--set",
        "method=rl",
        cwd=tiny,
    )
    assert result.exit_code == 0, result.output
    created = result.output.split("created ", 1)[1].split(".", 1)[0] + ".yaml"
    assert not (tiny / created).read_text(encoding="utf-8").startswith("#")


def _undescribed(node, path=()):
    """The properties, at any depth, that say nothing about themselves."""
    if isinstance(node, dict):
        for name, inner in node.get("properties", {}).items():
            if "description" not in inner:
                yield "/".join((*path, name))
        for key, inner in node.items():
            yield from _undescribed(inner, (*path, str(key)))
    elif isinstance(node, list):
        for index, inner in enumerate(node):
            yield from _undescribed(inner, (*path, str(index)))


@pytest.mark.parametrize("root", [REPO, TINY], ids=["shipped", "tiny"])
def test_every_property_of_the_records_and_claims_schemas_is_described(root):
    documents = fileschemas.documents(_registry(root))
    assert {name: list(_undescribed(document)) for name, document in documents.items()} == {name: [] for name in documents}


# ---------------------------------------------------------------------------------
# a schema grows with its registry, not with fields x keys x values
# ---------------------------------------------------------------------------------


def _with_maps(root, fields: int, ids: tuple[str, str] = ("a", "b"), values: int = 200, label: str = "L" * 290) -> None:
    """Give the pool at `root` two vocabularies of `values` values (va's with long labels)
    and `fields` choice_map fields from vb's values to va's."""
    va = "".join(f'      - {{id: {ids[0]}{j}, label: "{label}{j}"}}\n' for j in range(values))
    vb = "".join(f'      - {{id: {ids[1]}{j}, label: "B{j}"}}\n' for j in range(values))
    vocabularies = f'  va:\n    label: "VA"\n    values:\n{va}  vb:\n    label: "VB"\n    values:\n{vb}'
    edit(root / "registry.yaml", "vocabularies:\n", "vocabularies:\n" + vocabularies)
    maps = "".join(f"  m{i}: {{type: choice_map, keys: vb, vocabulary: va}}\n" for i in range(fields))
    edit(root / "registry.yaml", "entry_fields:\n", "entry_fields:\n" + maps)
    with (root / "registry.yaml").open("a", encoding="utf-8") as registry:
        registry.write("\nsite:\n  axes: [method]\n")  # a page for each value of every map is another limit


def test_many_choice_maps_write_each_vocabulary_once(run, tiny):
    """50 choice_map fields over two 200-value vocabularies wrote 674 MB entries and 698 MB
    pool schemas (a copy of va's 200 labels for each of vb's 200 keys in each field)."""
    _with_maps(tiny, 50)
    assert run("schemas", cwd=tiny).exit_code == 0
    registry_bytes = (tiny / "registry.yaml").stat().st_size
    sizes = {path.name: path.stat().st_size for path in (tiny / "schemas").iterdir()}
    assert max(sizes.values()) < 2 * registry_bytes, (sizes, registry_bytes)
    document = json.loads((tiny / "schemas" / "entries.schema.json").read_text(encoding="utf-8"))
    # each vocabulary the entries use, once, in the registry's order (vb as the maps' keys only)
    assert list(document["$defs"]) == ["choice-va", "choice-method", "choice-unit", "choice-mode", "keys-vb", "keys-decision"]
    # what the maps accept is what they did: keys of vb, each to a value of va
    validator = jsonschema_rs.validator_for(document)
    alpha = _data(tiny / "papers" / "alpha.yaml")
    assert validator.is_valid(alpha | {"m0": {"b0": "a1", "b199": "a199"}, "m49": {}})
    for broken in ({"b0": "b1"}, {"a0": "a1"}, {"b0": ["a1"]}, ["b0"], {"b200": "a0"}):
        assert not validator.is_valid(alpha | {"m7": broken}), broken
    pool = jsonschema_rs.validator_for(json.loads((tiny / "schemas" / "pool.schema.json").read_text(encoding="utf-8")))
    exported = json.loads(run("export", "--format", "json", cwd=tiny).output)
    assert pool.is_valid(exported)
    exported["entries"][0]["m3"] = {"b0": "a200"}
    assert not pool.is_valid(exported)


def test_a_registry_whose_schema_would_be_too_large_is_refused_in_one_line(run, tiny):
    """What a field still repeats is its description, which names 12 values of each
    vocabulary: ids of 2,000 characters make each choice_map field's 48,000."""
    _with_maps(tiny, 110, ids=("a" * 1995, "b" * 1995), values=12, label="L")
    result = run("schemas", cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        "Error: registry.yaml: entry_fields: the schema of a retained entry would be over 5,000,000 characters "
        "(each field is written with its label and help, a choice field with its vocabulary's values); declare fewer "
        "fields, or choice fields over shorter vocabularies\n",
    )
    assert not (tiny / "schemas").exists()
