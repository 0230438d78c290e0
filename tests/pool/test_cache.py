"""The cache of checked records: used only for a file whose bytes, path, registry, date
and paperpool are the same; never changes what validate reports; and a cache that is
damaged, altered, foreign or unwritable is ignored, silently.

To see whether an entry was used, a test plants a problem in it that no check would
ever report (MARKER): reported means the cache answered for that file.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from paperpool.bench.synthpool import write_pool
from paperpool.files.yamlio import dump_yaml, load_yaml, parse_yaml
from paperpool.pool import cache
from paperpool.pool.reading import load_pool
from paperpool.pool.validate import require_valid_pool, validate

from ..conftest import REPO, TINY, edit

MARKER = "planted in the cache by the test"
RECORD = "papers/agent-lightning.yaml"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PAPERPOOL_CACHE_DIR", str(folder))
    return folder


def cache_file(root: Path) -> Path:
    return cache.cache_path(root.resolve())


def read_index(root: Path) -> tuple[dict, bytes]:
    data = cache_file(root).read_bytes()
    start = len(cache.MAGIC) + 4
    size = int.from_bytes(data[start : start + 8], "big")
    return json.loads(data[start + 8 : start + 8 + size]), data[start + 8 + size :]


def write_index(root: Path, index: dict, blob: bytes) -> None:
    """The cache file with this index, its checksum made right: as if paperpool wrote it."""
    head = json.dumps(index).encode()
    payload = len(head).to_bytes(8, "big") + head + blob
    cache_file(root).write_bytes(cache.MAGIC + cache._checksum(payload) + payload)


def plant(root: Path, rel: str = RECORD, **changes) -> None:
    """A problem no check reports, in the cache entry of `rel`; `changes` replace parts of the index."""
    index, blob = read_index(root)
    index["problems"].append([index["rels"].index(rel), 1, "title", MARKER, "error"])
    index.update(changes)
    write_index(root, index, blob)


def lines(root: Path, cache_on: bool = True) -> list[str]:
    return [str(problem) for problem in validate(root, cache=cache_on)[1]]


def planted_is_used(root: Path) -> bool:
    return any(MARKER in line for line in lines(root))


def test_the_cache_lives_outside_the_pool_and_answers_for_unchanged_files(pool_copy, cache_dir, snapshot):
    before = snapshot(pool_copy)
    fresh = lines(pool_copy)
    assert snapshot(pool_copy) == before  # nothing written in the pool
    assert [path.name for path in cache_dir.iterdir()] == [cache_file(pool_copy).name]
    assert cache_file(pool_copy).parent == cache_dir
    plant(pool_copy)
    assert planted_is_used(pool_copy)  # a hit: the record was not read again
    assert [line for line in lines(pool_copy) if MARKER not in line] == fresh


def test_an_edited_file_is_read_and_checked_again(pool_copy, cache_dir):
    lines(pool_copy)
    plant(pool_copy)
    edit(pool_copy / RECORD, "year: 2025", "year: 1066")
    found = lines(pool_copy)
    assert not any(MARKER in line for line in found)
    assert any(line.startswith(f"{RECORD}:14: year: 1066 is outside") for line in found)
    assert found == lines(pool_copy, cache_on=False)


def test_a_file_with_the_same_bytes_under_another_name_is_checked_again(pool_copy, cache_dir):
    lines(pool_copy)
    plant(pool_copy)
    (pool_copy / RECORD).rename(pool_copy / "papers" / "renamed.yaml")
    found = lines(pool_copy)
    assert not any(MARKER in line for line in found)
    assert any(line.startswith("papers/renamed.yaml:1: key: 'agent-lightning' does not match") for line in found)


def test_a_changed_registry_makes_every_entry_stale(pool_copy, cache_dir):
    lines(pool_copy)
    plant(pool_copy)
    with (pool_copy / "registry.yaml").open("a", encoding="utf-8") as registry:
        registry.write("# a comment changes the registry's bytes, and so the key\n")
    assert not planted_is_used(pool_copy)


def test_a_cache_written_by_another_version_of_paperpool_is_not_used(pool_copy, cache_dir):
    lines(pool_copy)
    software = read_index(pool_copy)[0]["software"]
    assert f"paperpool {cache.__version__} " in software and " code " in software
    plant(pool_copy, software=software.replace(f"paperpool {cache.__version__} ", "paperpool 0.0.1 "))
    assert not planted_is_used(pool_copy)
    plant(pool_copy)  # the file paperpool wrote again, with this version: used
    assert planted_is_used(pool_copy)


def test_an_entry_whose_digest_is_not_the_files_is_not_used(pool_copy, cache_dir):
    lines(pool_copy)
    index, _ = read_index(pool_copy)
    position = index["rels"].index(RECORD)
    digests = bytearray.fromhex(index["digests"])
    digests[16 * position] ^= 0xFF  # the entry now claims other bytes than the file's
    plant(pool_copy, digests=digests.hex())
    assert not planted_is_used(pool_copy)


def test_an_entry_moved_to_another_files_name_is_not_used(pool_copy, cache_dir):
    # a clean record's entry put under the name of a record that has a problem
    edit(pool_copy / RECORD, "year: 2025", "year: 1066")
    fresh = lines(pool_copy)
    index, blob = read_index(pool_copy)
    clean = next(rel for rel in index["rels"] if rel != RECORD and rel.startswith("papers/"))
    a, b = index["rels"].index(RECORD), index["rels"].index(clean)
    index["rels"][a], index["rels"][b] = clean, RECORD
    write_index(pool_copy, index, blob)
    assert lines(pool_copy) == fresh


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "a byte changed", "not a cache", "empty", "a folder", "a link"])
def test_a_damaged_cache_is_ignored_and_written_anew(pool_copy, cache_dir, damage):
    fresh = lines(pool_copy, cache_on=False)
    lines(pool_copy)
    path = cache_file(pool_copy)
    data = path.read_bytes()
    path.unlink()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "a byte changed":
        path.write_bytes(data[:-100] + bytes([data[-100] ^ 1]) + data[-99:])
    elif damage == "not a cache":
        path.write_bytes(b"\x80\x04\x95 not JSON, not ours" * 100)
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "a folder":
        path.mkdir()
    else:
        (cache_dir / "elsewhere").write_bytes(data)
        path.symlink_to(cache_dir / "elsewhere")
    assert lines(pool_copy) == fresh
    if damage in ("a folder",):
        return  # nothing can be written over a folder; validate still works
    plant(pool_copy)  # a cache paperpool wrote anew, in place of the damaged one
    assert planted_is_used(pool_copy)


@pytest.mark.slow
def test_an_altered_index_of_the_wrong_shape_is_ignored(pool_copy, cache_dir):
    fresh = lines(pool_copy)
    index, blob = read_index(pool_copy)
    titles, distinct, tokens, unique = index["facts"]
    for change in (
        {"rels": index["rels"][:-1]},
        {"facts": [[1] * len(titles), distinct, tokens, unique]},
        {"ends": list(reversed(index["ends"]))},
        {"facts": [titles, distinct, [["url", "x"], *tokens[1:]], unique]},
        {"facts": [titles, distinct, tokens, [{"record_id": ["E1"]}, *unique[1:]]]},
        {"facts": [titles]},
        {"problems": [[0, "one"]]},
        {"digests": "zz"},
        {"records": None},
        {"titles": {"threshold": 93, "keys": ["a"], "pairs": [0, 5, 99]}},
    ):
        write_index(pool_copy, {**index, **change}, blob)
        assert lines(pool_copy) == fresh, change


def test_no_cache_neither_reads_nor_writes_it(pool_copy, cache_dir, run):
    lines(pool_copy)
    plant(pool_copy)
    written = cache_file(pool_copy).read_bytes()
    result = run("validate", "--no-cache", cwd=pool_copy)
    assert (result.exit_code, MARKER in result.output) == (0, False)
    assert result.output.splitlines()[-1] == "ok: 84 entries and 32 exclusions, no problems."
    assert cache_file(pool_copy).read_bytes() == written
    result = run("validate", cwd=pool_copy)
    assert (result.exit_code, MARKER in result.output) == (1, True)


@pytest.mark.parametrize("where", ["under a file", "a file"])
def test_an_unwritable_cache_folder_changes_nothing(pool_copy, tmp_path, monkeypatch, run, where):
    # as root, permissions do not stop a write: a folder that cannot be made does
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder\n", encoding="utf-8")
    monkeypatch.setenv("PAPERPOOL_CACHE_DIR", str(blocker / "cache" if where == "under a file" else blocker))
    for _ in range(2):
        result = run("validate", cwd=pool_copy)
        assert (result.exit_code, result.output) == (0, "ok: 84 entries and 32 exclusions, no problems.\n")
    assert blocker.read_text(encoding="utf-8") == "a file, not a folder\n"


def test_a_cache_file_of_another_user_is_not_read(pool_copy, cache_dir):
    if not hasattr(os, "chown") or os.getuid() != 0:
        pytest.skip("only root can give a file to another user")
    lines(pool_copy)
    plant(pool_copy)
    os.chown(cache_file(pool_copy), 12345, 12345)
    assert not planted_is_used(pool_copy)


def test_records_from_the_cache_hold_the_data_and_lines_of_a_fresh_read(pool_copy, cache_dir):
    require_valid_pool(pool_copy)
    cached = require_valid_pool(pool_copy)  # every record from the cache
    plain, _ = load_pool(pool_copy)
    for kind in plain.records:
        assert [r.key for r in cached.records[kind]] == [r.key for r in plain.records[kind]]
        for ours, theirs in zip(cached.records[kind], plain.records[kind], strict=True):
            assert (ours.rel, ours.data, ours.doc.lines, ours.doc.path) == (
                theirs.rel,
                theirs.data,
                theirs.doc.lines,
                theirs.doc.path,
            )
            assert list(ours.doc.lines) == list(theirs.doc.lines)  # in the same order
            assert [type(value) for value in ours.data.values()] == [type(value) for value in theirs.data.values()]


def test_a_record_whose_cached_form_was_altered_is_read_from_its_file(pool_copy, cache_dir):
    lines(pool_copy)
    index, blob = read_index(pool_copy)
    position = index["rels"].index(RECORD)
    start = index["ends"][position - 1] if position else 0
    damaged = blob[:start] + b"!" + blob[start + 1 :]  # its body no longer decodes; the checksum is made right
    write_index(pool_copy, index, damaged)
    pool = require_valid_pool(pool_copy)
    record = next(r for r in pool.entries if r.rel == RECORD)
    assert record.data["title"] == "Agent Lightning: Train ANY AI Agents with Reinforcement Learning"


def test_the_cache_is_used_by_the_commands_that_need_a_valid_pool(pool_copy, cache_dir, run):
    lines(pool_copy)
    plant(pool_copy)
    result = run("stats", "--format", "json", cwd=pool_copy)
    assert result.exit_code == 1 and MARKER in result.output  # the planted error makes the pool invalid


TITLE = "title: 'Agent Lightning: Train ANY AI Agents with Reinforcement Learning'"
OTHER_TITLE = "Agent Q-Mix: Selecting the Right Action for LLM Multi-Agent Systems through Reinforcement Learning"


@pytest.mark.slow
def test_near_identical_titles_are_found_alike_with_and_without_the_cache(pool_copy, cache_dir):
    # the record loses its arXiv id first: two records with different ids are two works, whatever their titles
    edit(pool_copy / RECORD, "arxiv_id: '2508.03680'", "arxiv_id: null")
    edit(pool_copy / RECORD, "- https://arxiv.org/abs/2508.03680", "- https://example.org/agent-lightning")
    lines(pool_copy)  # the cache knows every title
    steps = [
        (TITLE, f"title: '{OTHER_TITLE}s'"),  # now nearly the same title as agent-qmix2026
        (f"title: '{OTHER_TITLE}s'", f"title: '{OTHER_TITLE[:60]}'"),  # no longer
        (f"title: '{OTHER_TITLE[:60]}'", f"title: '{OTHER_TITLE}'"),
    ]  # the same title
    expected = [True, False, True]
    for (old, new), alike in zip(steps, expected, strict=True):
        edit(pool_copy / RECORD, old, new)
        cached, fresh = lines(pool_copy), lines(pool_copy, cache_on=False)
        assert cached == fresh
        assert (
            any(line.startswith(f"papers/agent-qmix2026.yaml:2: title: nearly the same title as {RECORD}") for line in cached)
            is alike
        )


@pytest.mark.slow
def test_near_identical_titles_in_a_large_pool_with_the_cache_are_those_without(tmp_path, cache_dir):
    # 1,500 entries and their exclusions: checked in two processes, titles compared in
    # blocks, and a cache rewritten only when more than one record in 1,000 changed
    root = tmp_path / "large"
    write_pool(REPO, root, 1500, seed=4)
    assert lines(root) == lines(root, cache_on=False) == []
    papers = sorted((root / "papers").iterdir())
    first, second, third = papers[10], papers[20], papers[30]
    original = first.read_text(encoding="utf-8")
    record = load_yaml(first).data
    record["title"] = load_yaml(second).data["title"] + "s"  # nearly the title of `second`
    # and no ids of its own: two records with different ids are two works, whatever their titles
    record.update(arxiv_id=None, doi=None, openreview_id=None, urls=[f"https://example.org/{first.stem}"])
    steps = [
        (first, dump_yaml(record), True),
        (third, third.read_text(encoding="utf-8").replace("year:", "year: 1066\nx_unknown:", 1), True),
        (first, original, False),
    ]
    for path, text, alike in steps:
        path.write_text(text, encoding="utf-8")
        cached, fresh = lines(root), lines(root, cache_on=False)
        assert cached == fresh
        assert any(f"title: nearly the same title as papers/{min(first.name, second.name)}" in line for line in cached) is alike
    assert [line.split(":")[0] for line in cached] == [f"papers/{third.name}"] * 2


def test_a_packed_record_comes_back_with_every_value_of_its_type_and_every_line():
    from paperpool.pool.packed import pack, unpack

    text = (
        "n: 3\nf: .nan\ni: -.inf\nz: -0.0\nbig: 123456789012345678901234567890\nd: 2026-04-26\n"
        "t: 2026-04-26 10:00:00+05:30\nu: 2026-04-26T10:00:00Z\nnaive: 2026-04-26 10:00:00.123456\n"
        "l:\n  - [1, 2026-01-01, {x: 2026-02-02}]\n  - {}\n  - []\ne: {}\nw: 'é ✓ 学'\nb: no\nnull_: ~\n"
    )
    doc = parse_yaml(text, Path("x.yaml"))
    data, lines = unpack(pack(doc))
    assert list(lines.items()) == list(doc.lines.items())
    assert repr(data) == repr(doc.data)  # nan, -0.0, the time zones and the microseconds included
    assert [type(value) for value in data.values()] == [type(value) for value in doc.data.values()]
    assert type(data["l"][0][2]["x"]) is type(doc.data["l"][0][2]["x"])


@pytest.mark.slow
def test_one_title_shared_by_many_records_is_one_problem_each(tmp_path, cache_dir):
    """600 copies of one record under other keys and links (issue 39's fresh review: 3,000
    copies made 4.5 million problems, 133 s and 1.9 GB): each copy is one line, naming the
    earliest record by file, with and without the cache."""
    root = tmp_path / "pool"
    shutil.copytree(TINY, root)
    text = (root / "papers" / "alpha.yaml").read_text(encoding="utf-8")
    for number in range(600):
        copy = text.replace("key: alpha", f"key: p{number}").replace(
            "https://example.org/alpha", f"https://example.org/p{number}"
        )
        (root / "papers" / f"p{number}.yaml").write_text(copy, encoding="utf-8")
    for found in (lines(root), lines(root, cache_on=False)):
        assert sorted(found) == sorted(
            f"papers/p{number}.yaml:2: title: nearly the same title as papers/alpha.yaml (100% alike); keep one record if "
            "they are the same paper, or add `distinct_from: [alpha]` if they differ"
            for number in range(600)
        )
