"""The pool side of issue 39's seventeenth hostile review: imports whose work grew with the
square of their input (the times are the benchmark's to show; these tests hold the shapes
that made the work grow)."""

from __future__ import annotations

import csv
import json
import random
import string

from paperpool.pool import stubs


def test_records_of_one_citation_key_are_numbered_in_one_pass(run, tiny, tmp_path, monkeypatch):
    """16,000 CSL-JSON items of one citation-key took 32 s: each tried every number before
    its own. Each key now costs a try or two."""
    rng = random.Random(17)
    items = [
        {
            "type": "article-journal",
            "citation-key": "x",
            "title": _title(rng),
            "author": [{"family": "Doe", "given": "J"}],
            "issued": {"date-parts": [[2024]]},
        }
        for n in range(300)
    ]
    (tmp_path / "same.json").write_text(json.dumps(items), encoding="utf-8")
    asked = []
    taken = stubs.PoolIndex.key_taken
    monkeypatch.setattr(stubs.PoolIndex, "key_taken", lambda self, key: asked.append(key) or taken(self, key))
    result = run("import-csljson", "--dry-run", str(tmp_path / "same.json"), cwd=tiny)
    assert result.exit_code == 0, result.output
    assert "would create papers/x.yaml" in result.output and "would create papers/x-300.yaml" in result.output
    assert len(asked) < 3 * len(items)  # (it was 45,000)


def _title(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase + " ") for _ in range(60))


def test_import_csv_compares_the_file_s_titles_at_once(run, pool_copy, tmp_path, monkeypatch):
    """A CSV of 16,000 rows took 106 s: each row's title was compared with every title
    before it, one by one. The titles are now compared at once, as import-bib does."""
    exported = run("export", "--format", "csv", cwd=pool_copy).output.splitlines()
    rng = random.Random(17)
    rows = list(csv.DictReader(exported))
    with (tmp_path / "many.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        for n in range(200):
            row = dict(rows[0], key=f"k{n}", title=_title(rng))
            row.update({name: "" for name in ("arxiv_id", "doi", "openreview_id") if name in row})
            row["url"] = f"https://example.org/p{n}" if "url" in row else row.get("url")
            writer.writerow(row)
    one_by_one = []
    monkeypatch.setattr(stubs.process, "extractOne", lambda *args, **kwargs: one_by_one.append(args) or None)
    result = run("import-csv", "--dry-run", str(tmp_path / "many.csv"), cwd=pool_copy)
    assert result.exit_code == 0, result.output
    assert result.output == "would write 200 entries to papers/\n"
    assert one_by_one == []
