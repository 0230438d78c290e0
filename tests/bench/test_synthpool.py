"""The synthetic-pool generator (python -m paperpool.bench.synthpool): its pools validate, repeat
for a seed, keep the template's tag mix, and never land in a folder already in use."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from paperpool.bench import synthpool
from paperpool.files.yamlio import dump_yaml, load_yaml
from paperpool.pool.reading import load_pool

from ..conftest import REPO, TINY

TAG_TYPES = ("choice", "choice_list", "choice_map", "bool")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    """300 entries resampled from the shipped pool, with its share of exclusions (114)."""
    out = tmp_path_factory.mktemp("synth") / "pool"
    assert synthpool.write_pool(REPO, out, 300, seed=7) == {"entries": 300, "exclusions": 114}
    return out


def tag_sets(root: Path) -> list[str]:
    """Each entry's whole tag set: every field the registry declares as a choice or a flag."""
    pool, _ = load_pool(root)
    tags = [name for name, spec in pool.registry.fields["entries"].items() if spec.type in TAG_TYPES]
    return [repr([entry.data.get(name) for name in tags]) for entry in pool.entries]


@pytest.mark.slow
def test_validate_accepts_the_synthetic_pool(synthetic, run):
    result = run("validate", cwd=synthetic)
    assert (result.exit_code, result.output) == (0, "ok: 300 entries and 114 exclusions, no problems.\n")


@pytest.mark.slow
def test_every_tag_set_is_a_template_entrys(synthetic):
    real, synthetic_sets = set(tag_sets(REPO)), tag_sets(synthetic)
    assert set(synthetic_sets) <= real
    assert len(set(synthetic_sets)) > len(real) / 2  # drawn from across the template, not a few entries


@pytest.mark.slow
def test_the_same_seed_writes_the_same_files(tmp_path, snapshot):
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        synthpool.write_pool(REPO, tmp_path / name, 60, seed=seed)
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")
    assert snapshot(tmp_path / "a") != snapshot(tmp_path / "c")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a", "b", "c"]  # no staging folder left


def test_records_are_written_as_paperpool_writes_them(synthetic):
    for path in sorted((synthetic / "papers").glob("*.yaml"))[:40] + sorted((synthetic / "exclusions").glob("*.yaml"))[:20]:
        assert path.read_text(encoding="utf-8") == dump_yaml(load_yaml(path).data), path


@pytest.mark.slow
def test_representatives_name_synthetic_copies_of_the_real_ones(synthetic):
    real = load_yaml(REPO / "registry.yaml").data["vocabularies"]
    made = load_yaml(synthetic / "registry.yaml").data["vocabularies"]
    tags = dict(zip([path.stem for path in sorted((synthetic / "papers").glob("*.yaml"))], tag_sets(synthetic), strict=True))
    real_tags = dict(zip([path.stem for path in sorted((REPO / "papers").glob("*.yaml"))], tag_sets(REPO), strict=True))
    named = 0
    for name, vocabulary in real.items():
        for value, copied in zip(vocabulary["values"], made[name]["values"], strict=True):
            for key in copied.get("representatives", []):
                assert tags[key] in {real_tags[original] for original in value["representatives"]}
                named += 1
    assert named > 30


@pytest.mark.slow
def test_the_pool_commands_run(synthetic, run):
    for args in (["stats"], ["gaps"], ["claims"], ["readme"]):
        result = run(*args, cwd=synthetic)
        assert result.exit_code == 0, (args, result.output)
    assert "<!-- paperpool:readme:start -->" in (synthetic / "README.md").read_text(encoding="utf-8")
    result = run("claims", "--check", cwd=synthetic)  # claims about named real entries cannot hold
    assert result.exit_code == 1 and "claim 'kimi-k2-5-trained-orchestrator' no longer holds" in result.output


def test_another_surveys_pool_works_as_template(tmp_path, run):
    result = CliRunner().invoke(synthpool.main, ["--entries", "200", "--from", str(TINY), "-o", str(tmp_path / "out")])
    assert (result.exit_code, result.output) == (0, f"wrote {tmp_path / 'out'}: 200 entries, 80 exclusions\n")
    assert run("validate", cwd=tmp_path / "out").output == "ok: 200 entries and 80 exclusions, no problems.\n"
    assert (tmp_path / "out" / "registry.yaml").read_bytes() == (TINY / "registry.yaml").read_bytes()  # no keys to remap


def test_an_empty_folder_is_used(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(
        synthpool.main, ["--entries", "5", "--exclusions", "0", "--from", str(REPO), "-o", str(tmp_path / "empty")]
    )
    assert (result.exit_code, result.output) == (0, f"wrote {tmp_path / 'empty'}: 5 entries, 0 exclusions\n")
    assert len(list((tmp_path / "empty" / "papers").iterdir())) == 5


def test_refuses_a_folder_in_use(tmp_path, snapshot):
    out = tmp_path / "busy"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    before = snapshot(tmp_path)
    result = CliRunner().invoke(synthpool.main, ["--entries", "5", "--from", str(REPO), "-o", str(out)])
    assert (result.exit_code, result.output) == (
        1,
        f"Error: -o {out}: already exists and is not an empty folder; choose a new or empty one (nothing was written)\n",
    )
    assert snapshot(tmp_path) == before
