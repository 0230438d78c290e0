"""The pool side of issue 39's thirteenth to fifteenth hostile reviews: work that grew
with the square of its input, each now in proportion to it (the times themselves are the
benchmark's to show, paperpool/bench/bounded.py; these tests hold the shapes that made
the work grow), and a registry typing the fields the pages show otherwise."""

from __future__ import annotations

import re
from pathlib import Path

from paperpool.analysis import diff
from paperpool.registry import load_registry
from paperpool.registry.columns import columns_for
from paperpool.rendering import markdown

from .conftest import edit


def test_a_table_pads_its_cells_to_at_most_padded_characters():
    """One cell of 700,000 characters padded each of 20,000 rows to it (558 MB of stats)."""
    rows = [["a" * 700_000]] + [[f"N{k:05d}"] for k in range(20_000)]
    table = markdown.table(["author"], rows)
    lines = table.splitlines()
    assert len(table) < 700_000 + 20_003 * (markdown.PADDED + 5)  # (it was 20,001 x 700,000)
    assert lines[2] == f"| {'a' * 700_000} |"
    assert lines[3] == f"| {'N00000'.ljust(markdown.PADDED)} |"
    # a column no wider than PADDED lines up as before
    assert markdown.table(["n", "count"], [["a", 1], ["bb", 22]], ["l", "r"]).splitlines() == [
        "| n  | count |",
        "|----|------:|",
        "| a  |     1 |",
        "| bb |    22 |",
    ]


def test_a_long_value_is_written_cut_saying_how_much_more_the_record_holds():
    """A venue of 100 kB of `*` took the site's build 46 s: every escape is a placeholder that
    Python-Markdown puts back by rebuilding the value's text."""
    written = markdown.text("*" * 100_000)
    assert written == "\\*" * markdown.TEXT_SHOWN + f"… ({100_000 - markdown.TEXT_SHOWN:,} characters more)"
    assert markdown.text("a short venue") == "a short venue"


def test_keys_that_moved_between_cells_are_found_in_one_pass():
    before = [f"k{n}" for n in range(50_000)]
    after = before[1:] + ["new"]
    assert diff._moved(before, after) == "+new -k0"


def test_columns_are_made_once_per_registry_and_handed_out_as_copies(pool_copy):
    registry, problems = load_registry(pool_copy)
    assert registry is not None, problems
    first = columns_for(registry, "entries")
    first["made-up"] = None
    again = columns_for(registry, "entries")
    assert "made-up" not in again and again.keys() == first.keys() - {"made-up"}
    assert registry.__dict__["_columns"]["entries"] is registry.__dict__["_columns"]["entries"]


def test_a_vocabulary_finds_a_value_by_its_id_and_nothing_for_a_list(pool_copy):
    registry, _ = load_registry(pool_copy)
    vocabulary = next(iter(registry.vocabularies.values()))
    first = vocabulary.values[0]
    assert vocabulary.get(first.id) is first
    assert vocabulary.get(["a", "list"]) is None and vocabulary.get("no such value") is None


def _wide_choice_maps(pool: Path, fields: int) -> None:
    values = "".join(f"      - id: v{n}\n        label: Value {n}\n" for n in range(200))
    vocabularies = f"  va:\n    label: A\n    values:\n{values}  vb:\n    label: B\n    values:\n{values}"
    declared = "".join(f"  m{n}:\n    type: choice_map\n    keys: vb\n    vocabulary: va\n" for n in range(fields))
    edit(pool / "registry.yaml", "vocabularies:\n", "vocabularies:\n" + vocabularies)
    edit(pool / "registry.yaml", "entry_fields:\n", "entry_fields:\n" + declared)


def test_a_registry_whose_fields_make_too_many_columns_is_refused(run, pool_copy):
    """5,000 choice_maps over 200-value vocabularies (322 kB) made a million columns: every
    command took 8 s and 600 MB. 120 make 24,120, and the shipped fields 56 more: over MOST_COLUMNS."""
    _wide_choice_maps(pool_copy, 120)
    result = run("validate", cwd=pool_copy)
    line = next(n for n, text in enumerate((pool_copy / "registry.yaml").read_text().splitlines(), 1) if text == "entry_fields:")
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            f"registry.yaml:{line}: entry_fields: the fields make 24,176 columns (a choice_map one per value of its "
            "vocabulary, and one more), over the 20,000 paperpool reads; declare fewer fields, or choice_maps over smaller "
            "vocabularies",
            "1 error, 0 warnings.",
        ],
    )


def test_a_registry_of_many_choice_maps_over_wide_vocabularies_validates(run, pool_copy):
    """2,000 choice_map fields over two 200-value vocabularies took validate 61 s (now
    refused: too many columns, above); 90 such fields read quickly: each
    field's modes were looked up value by value and its evidence field searched for among
    every field. Now a column is made once and each lookup is one step."""
    _wide_choice_maps(pool_copy, 90)  # 18,090 columns and the shipped fields', under MOST_COLUMNS
    result = run("validate", cwd=pool_copy)
    assert (result.exit_code, result.output.splitlines()[-1]) == (0, "ok: 84 entries and 32 exclusions, no problems.")


def test_a_gap_table_whose_records_fall_in_too_many_cells_is_refused_naming_it(run, pool_copy, monkeypatch):
    """400 records holding 45 values of two fields each fell in 810,000 cells of one table:
    `gaps` wrote 72 MB from 1.6 MB of records and `diff`, which computes it twice, took
    minutes. A table of more than MOST_PLACES places is refused (lowered here to the
    shipped pool's size: its first table has 95 places)."""
    from paperpool.analysis import stats

    monkeypatch.setattr(stats, "MOST_PLACES", 90)
    result = run("gaps", "--format", "json", cwd=pool_copy)
    first = result.output.splitlines()[0]
    assert result.exit_code == 1
    assert re.fullmatch(
        r"Error: registry\.yaml: gaps table 'family-unit' of reward_families and credit_unit: its records fall in "
        r"[0-9,]+ cells in all \(a record is in every cell its values of both fields make\), more than the 90 a table "
        r"holds; cross fields whose records hold fewer values each",
        first,
    ), first


def test_a_registry_typing_year_and_authors_otherwise_builds_without_showing_them_raw(run, tmp_path):
    """Round fourteen: `year: {type: text}` crashed the build's sort (and would have been
    written into pages unescaped), `authors: {type: integer}` the entry page, the feed and
    the CSV downloads. A year that is not a whole number is not shown as the year; authors
    that are not names are not listed."""
    assert run("new-survey", "typed", "--title", "Typed", cwd=tmp_path).exit_code == 0
    pool = tmp_path / "typed"
    registry = pool / "registry.yaml"
    text = registry.read_text(encoding="utf-8")
    year = next(line for line in text.splitlines() if line.startswith("  year: {type: integer"))
    authors = next(line for line in text.splitlines() if line.startswith("  authors: {type: text_list"))
    edit(registry, year, '  year: {type: text, required: true, label: "Year"}')
    edit(registry, authors, '  authors: {type: integer, label: "Authors"}')
    paper = next((pool / "papers").glob("*.yaml"))
    lines = paper.read_text(encoding="utf-8").splitlines()
    start = lines.index("authors:")
    end = next(k for k in range(start + 1, len(lines)) if not lines[k].startswith("- "))
    lines[start:end] = ["authors: 5"]
    paper.write_text("\n".join(lines).replace("year: 2017", "year: '<b>2017</b>'") + "\n", encoding="utf-8")
    assert run("validate", cwd=pool).exit_code == 0
    built = run("build", cwd=pool)
    assert built.exit_code == 0, built.output
    page = (pool / "build" / "site" / "entries" / f"{paper.stem}.html").read_text(encoding="utf-8")
    assert "<b>2017" not in page
    assert run("publish", cwd=pool).exit_code == 0 and run("readme", cwd=pool).exit_code == 0


def _nested_mapping(depth: int, fields: int) -> str:
    """An entry field `deep`: mappings nested `depth` deep around `fields` text fields."""
    inner = "{" + ", ".join(f"f{n}: {{type: text}}" for n in range(fields)) + "}"
    for _ in range(depth):
        inner = f"{{m: {{type: mapping, fields: {inner}}}}}"
    return f"  deep: {{type: mapping, fields: {inner}}}\n"


def test_schemas_count_what_they_write_indented(run, pool_copy):
    """Round fifteen: the schemas' size bound counted fields compact, and texts() writes them
    indented two spaces a level: 19,900 fields in mappings 30 deep (863 kB of registry) were
    written as 443 MB. Counted as written, 5,000 such fields are over the bound; as many
    at the top level are not."""
    registry = pool_copy / "registry.yaml"
    original = registry.read_text(encoding="utf-8")
    edit(registry, "entry_fields:\n", "entry_fields:\n" + _nested_mapping(28, 5_000))
    result = run("schemas", cwd=pool_copy)
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        1,
        "Error: registry.yaml: entry_fields: the schema of a retained entry would be over 5,000,000 characters (each "
        "field is written with its label and help, a choice field with its vocabulary's values); declare fewer fields, "
        "or choice fields over shorter vocabularies",
    )
    assert not (pool_copy / "schemas").exists()
    registry.write_text(original.replace("entry_fields:\n", "entry_fields:\n" + _nested_mapping(0, 5_000), 1), encoding="utf-8")
    assert run("schemas", cwd=pool_copy).exit_code == 0


def test_schemas_check_reads_no_folder_that_is_a_link(run, pool_copy, tmp_path):
    assert run("schemas", cwd=pool_copy).exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    (pool_copy / "schemas").rename(elsewhere)
    (pool_copy / "schemas").symlink_to(elsewhere)
    result = run("schemas", "--check", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        "Error: schemas/: is a symbolic link, which paperpool neither reads nor writes through; remove it, then run "
        "paperpool schemas\n",
    )
