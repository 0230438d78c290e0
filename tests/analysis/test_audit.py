"""paperpool audit: the second reader's agreement, with exact outputs and kappas
worked out by hand from counts checked against the pool."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction

import pytest

from paperpool.analysis import audit
from paperpool.files.yamlio import load_yaml
from paperpool.pool.history import as_of

from ..conftest import REPO, SOURCE

# tests/source/spotcheck-facts.csv: the source artifact's independent_spotcheck_2026-05-03.csv
# cut down to its facts (key, orig_*, ann_*, strict_explicit_credit); its note columns
# are left out.
SPOTCHECK = SOURCE / "spotcheck-facts.csv"

TABLE = """\
| field              | rows | agree |  share | kappa |
|--------------------|-----:|------:|-------:|------:|
| category           |   32 |    32 | 100.0% | 1.000 |
| is_rl              |   32 |    32 | 100.0% | 1.000 |
| reward_type        |   32 |    32 | 100.0% | 1.000 |
| credit_granularity |   32 |    31 |  96.9% | 0.959 |
| orchestration_form |   32 |    32 | 100.0% | 1.000 |
"""
KAPPA_NOTE = "kappa: Cohen's, the agreement beyond what chance would give two readers with these value frequencies.\n"

# What the second reading is, in the survey's words (registry.yaml's audit.about), and
# what the figures cover, computed: 32 of the 84 entries.
ABOUT = load_yaml(REPO / "registry.yaml").data["audit"]["about"]
SCOPE = "These figures cover the 32 entries the second reading re-tagged, of the pool's 84; they say nothing of the other 52."
SHIPPED_TEXT = (
    "Agreement of two readers over 32 entries with a second_reading: "
    "each entry's values (first reader) against its second reading.\n\n"
    + SCOPE
    + "\n"
    + ABOUT
    + "\n\n"
    + TABLE
    + "\n"
    + KAPPA_NOTE
    + "\n"
    "1 disagreement:\n"
    "halo: credit_granularity: role (entry) vs orchestrator (second reader)\n"
)

# Value counts of the 32 second-read entries, tallied by hand from the source's
# spot-check and checked against the pool below: (entry's values, second reader's).
SAME = object()
COUNTS = {
    "category": ({"rl_method": 18, "industry": 5, "benchmark": 3, "framework": 2, "survey": 2, "classical_marl": 2}, SAME),
    "is_rl": ({"yes": 18, "partial": 7, "no": 7}, SAME),
    "reward_type": ({"NA": 11, "hybrid": 7, "orchestration": 6, "shared": 3, "debate": 3, "process": 1, "verifier": 1}, SAME),
    "credit_granularity": (
        {"NA": 11, "orchestrator": 7, "agent": 7, "role": 3, "message": 2, "turn": 2},
        {"NA": 11, "orchestrator": 8, "agent": 7, "role": 2, "message": 2, "turn": 2},
    ),
    "orchestration_form": ({"centralized": 7, "hierarchical": 7, "NA": 7, "debate": 4, "swarm": 4, "harness": 3}, SAME),
}
AGREE = {"category": 32, "is_rl": 32, "reward_type": 32, "credit_granularity": 31, "orchestration_form": 32}
# Worked on paper: credit_granularity p_o = 31/32, p_e = (11*11 + 7*8 + 7*7 + 3*2 + 2*2 + 2*2) / 32**2
# = 240/1024 = 15/64, kappa = (62/64 - 15/64) / (49/64) = 47/49. Full agreement gives 1.
KAPPA = {
    "category": Fraction(1),
    "is_rl": Fraction(1),
    "reward_type": Fraction(1),
    "credit_granularity": Fraction(47, 49),
    "orchestration_form": Fraction(1),
}

FIGURES = {
    "rows": 32,
    "fields": {
        name: {"rows": 32, "agree": AGREE[name], "share": AGREE[name] / 32, "kappa": float(KAPPA[name])} for name in COUNTS
    },
    "disagreements": [{"key": "halo", "field": "credit_granularity", "first": "role", "second": "orchestrator"}],
    "disagreements_not_listed": 0,
}
SHIPPED_JSON = {**FIGURES, "scope": SCOPE, "about": ABOUT}


def kappa_by_hand(first: dict[str, int], second: dict[str, int], agree: int) -> Fraction:
    n = sum(first.values())
    p_o = Fraction(agree, n)
    p_e = sum(Fraction(first[v] * second.get(v, 0), n * n) for v in first)
    return (p_o - p_e) / (1 - p_e)


def second_read_entries(root) -> list[dict]:
    """The entries with a second reading, each as it stood on the reading's day (its later
    changes undone): the spot-check compared the first reader's tags of that day."""
    entries = [load_yaml(path).data for path in sorted((root / "papers").glob("*.yaml"))]
    return [as_of(entry, "changes", entry["second_reading"]["date"]) for entry in entries if entry.get("second_reading")]


def test_audit_shipped_pool_text(run):
    result = run("audit", cwd=REPO)
    assert (result.exit_code, result.output) == (0, SHIPPED_TEXT)


def test_hand_counts_match_the_pool_and_give_the_kappas():
    read = second_read_entries(REPO)
    assert len(read) == 32
    for name, (first, second) in COUNTS.items():
        second = first if second is SAME else second
        assert Counter(entry[name] for entry in read) == first, name
        assert Counter(entry["second_reading"][name] for entry in read) == second, name
        assert sum(entry[name] == entry["second_reading"][name] for entry in read) == AGREE[name], name
        assert kappa_by_hand(first, second, AGREE[name]) == KAPPA[name], name


def test_audit_shipped_pool_json(run):
    result = run("audit", "--format", "json", cwd=REPO)
    assert result.exit_code == 0
    # The kappas are whole-count quotients, correctly rounded, so they equal the
    # fractions worked out by hand exactly.
    assert json.loads(result.output) == SHIPPED_JSON


def test_audit_follows_the_entries_current_values(run, pool_copy):
    path = pool_copy / "papers" / "c3.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("  is_rl: 'yes'\n", "  is_rl: partial\n"), encoding="utf-8")
    result = run("audit", "--format", "json", cwd=pool_copy)
    assert result.exit_code == 0
    is_rl = json.loads(result.output)["fields"]["is_rl"]
    # Entry: yes 18, partial 7, no 7; second reader now yes 17, partial 8, no 7.
    kappa = kappa_by_hand({"yes": 18, "partial": 7, "no": 7}, {"yes": 17, "partial": 8, "no": 7}, 31)
    assert kappa == Fraction(581, 613)
    assert is_rl == {"rows": 32, "agree": 31, "share": 31 / 32, "kappa": float(kappa)}
    assert json.loads(result.output)["disagreements"] == [
        {"key": "c3", "field": "is_rl", "first": "yes", "second": "partial"},
        SHIPPED_JSON["disagreements"][0],
    ]


def test_audit_of_the_source_spotcheck_gives_the_same_agreement(run, pool_copy):
    scope = "These figures cover the 32 rows of spotcheck-facts.csv; they say nothing of records it does not hold."
    as_json = run("audit", str(SPOTCHECK), "--format", "json", cwd=pool_copy)
    assert (as_json.exit_code, json.loads(as_json.output)) == (0, {**FIGURES, "scope": scope, "about": ""})
    as_text = run("audit", str(SPOTCHECK), cwd=pool_copy)
    assert (as_text.exit_code, as_text.output) == (
        0,
        (
            "Agreement of two readers over 32 rows of spotcheck-facts.csv: "
            "orig_FIELD (first reader) against ann_FIELD (second reader).\n\n" + scope + "\n\n" + TABLE + "\n" + KAPPA_NOTE + "\n"
            "1 disagreement:\n"
            "halo: credit_granularity: role (first reader) vs orchestrator (second reader)\n"
        ),
    )


# Ten rows, two readers saying yes or no:
#                 second yes  second no
#   first yes          4          2       (first: 6 yes, 4 no)
#   first no           1          3       (second: 5 yes, 5 no)
# p_o = 7/10, p_e = (6*5 + 4*5) / 100 = 1/2, kappa = (7/10 - 1/2) / (1 - 1/2) = 2/5.
# `flag`: both readers say x every time (k10's second reading left empty), so
# p_e = 1 and kappa is undefined. `orig_extra` has no ann_extra and `note` is no
# reader's column: neither is compared.
HAND_MADE = "key,orig_label,ann_label,orig_flag,ann_flag,orig_extra,note\n" + "".join(
    f"k{i:02},{first},{second},x,{'' if i == 10 else 'x'},e,some note\n"
    for i, (first, second) in enumerate(
        [("yes", "yes")] * 4 + [("no", "no")] * 3 + [("yes", "no")] * 2 + [("no", "yes")], start=1
    )
)


def test_audit_of_a_hand_made_two_by_two(run, pool_copy, tmp_path):
    (tmp_path / "readers.csv").write_text(HAND_MADE, encoding="utf-8")
    as_json = run("audit", str(tmp_path / "readers.csv"), "--format", "json", cwd=pool_copy)
    assert as_json.exit_code == 0
    scope = "These figures cover the 10 rows of readers.csv; they say nothing of records it does not hold."
    assert json.loads(as_json.output) == {
        "rows": 10,
        "scope": scope,
        "about": "",
        "fields": {
            "label": {"rows": 10, "agree": 7, "share": 0.7, "kappa": 0.4},
            "flag": {"rows": 9, "agree": 9, "share": 1.0, "kappa": None},
        },
        "disagreements": [
            {"key": "k08", "field": "label", "first": "yes", "second": "no"},
            {"key": "k09", "field": "label", "first": "yes", "second": "no"},
            {"key": "k10", "field": "label", "first": "no", "second": "yes"},
        ],
        "disagreements_not_listed": 0,
    }
    as_text = run("audit", str(tmp_path / "readers.csv"), cwd=pool_copy)
    assert (as_text.exit_code, as_text.output) == (
        0,
        (
            "Agreement of two readers over 10 rows of readers.csv: orig_FIELD (first reader) against ann_FIELD (second reader).\n"
            "\n" + scope + "\n\n"
            "| field | rows | agree |  share | kappa |\n"
            "|-------|-----:|------:|-------:|------:|\n"
            "| label |   10 |     7 |  70.0% | 0.400 |\n"
            "| flag  |    9 |     9 | 100.0% |   n/a |\n"
            "\n"
            + KAPPA_NOTE
            + "kappa n/a for flag: both readers gave every row the same one value, so chance agreement is 1 and kappa is undefined.\n"
            "\n"
            "3 disagreements:\n"
            "k08: label: yes (first reader) vs no (second reader)\n"
            "k09: label: yes (first reader) vs no (second reader)\n"
            "k10: label: no (first reader) vs yes (second reader)\n"
        ),
    )


PAIR = "key,orig_category,ann_category\n"


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "{path}: no such file; give the path of a CSV with a key column and orig_FIELD, ann_FIELD columns"),
        (b"", "bad.csv:1: the file is empty; the first line must name the columns: key, then orig_FIELD and ann_FIELD per field"),
        (PAIR.encode() + b"c3,rl_m\xe9thod,rl_method\n", "bad.csv:2: byte 0xe9 is not UTF-8; save the file as UTF-8"),
        (
            b"id,orig_category,ann_category\nc3,rl_method,rl_method\n",
            "bad.csv:1: no key column; name the column of entry keys `key`",
        ),
        (
            b"key,orig_category,ann_is_rl\nc3,rl_method,yes\n",
            (
                "bad.csv:1: no pair of orig_FIELD and ann_FIELD columns; give both readers' values of a field, "
                "e.g. orig_category and ann_category"
            ),
        ),
        (
            PAIR.encode() + b"c3,rl_method,rl_method\nhalo,rl_method\n",
            "bad.csv:3: row has 2 cells but the header has 3; check for an unquoted comma",
        ),
        (PAIR.encode(), "bad.csv:2: no rows after the header; add one row per entry read twice"),
        (
            PAIR.encode() + b"c3,rl_method,rl_method\nc3,rl_method,survey\n",
            "bad.csv:3: key 'c3' is also on line 2; give one row per entry",
        ),
        (PAIR.encode() + b",rl_method,rl_method\n", "bad.csv:2: the key is empty; give the entry's key"),
        (
            b"key,orig_category,ann_category,key\nc3,rl_method,rl_method,c3\n",
            "bad.csv:1: column(s) key appear more than once; keep one of each",
        ),
    ],
    ids=[
        "missing",
        "empty",
        "not-utf8",
        "no-key",
        "no-pair",
        "ragged",
        "header-only",
        "duplicate-key",
        "empty-key",
        "duplicate-column",
    ],
)
def test_audit_bad_file_is_one_error_and_writes_nothing(run, pool_copy, tmp_path, snapshot, content, message):
    path = tmp_path / "bad.csv"
    if content is not None:
        path.write_bytes(content)
    before = snapshot(tmp_path)
    result = run("audit", str(path), cwd=pool_copy)
    assert (result.exit_code, result.output) == (1, f"Error: {message.format(path=path)}\n")
    assert snapshot(tmp_path) == before


def test_audit_of_a_folder_is_one_error(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run("audit", str(pool_copy / "papers"), cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {pool_copy / 'papers'}: is a folder; give the path of a CSV with a key column and orig_FIELD, ann_FIELD columns\n",
    )
    assert snapshot(pool_copy) == before


def test_audit_of_a_device_says_so(run, pool_copy):
    """/dev/null was "no such file" (the eleventh review)."""
    result = run("audit", "/dev/null", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        "Error: /dev/null: is a device, pipe or socket; give the path of a CSV with a key column and orig_FIELD, ann_FIELD "
        "columns\n",
    )


def test_audit_help(run, pool_copy):
    result = run("audit", "--help", cwd=pool_copy)
    assert result.exit_code == 0
    assert result.output.startswith("Usage: paperpool audit [OPTIONS] [FILE]\n")
    assert "Cohen's" in result.output and "--format [text|json]" in result.output


def test_audit_shows_a_right_to_left_override_escaped(run, pool_copy, tmp_path):
    """A cell holding U+202E, printed raw, would show the rest of the terminal's line
    reversed (issue 39's fresh review): the text report shows it as \\u202e."""
    (tmp_path / "readers.csv").write_text("key,orig_method,ann_method\nmalt,rl,\u202eevil\n", encoding="utf-8")
    result = run("audit", str(tmp_path / "readers.csv"), cwd=pool_copy)
    assert result.exit_code == 0 and "\u202e" not in result.output
    assert result.output.endswith("vs \\u202eevil (second reader)\n"), result.output


@pytest.mark.slow
def test_a_csv_of_empty_cells_costs_about_its_size(run, pool_copy, tmp_path):
    """Issue 39's fourth review: every row was kept as a dict of all its cells, and every
    cell made a pair, so 49 MB of empty cells (1,000 columns) took 4.4 GB. A row now keeps
    the readers' values it has, and a pair is made where both readers gave one."""
    import tracemalloc

    header = ["key", *(f"orig_f{i}" for i in range(500)), *(f"ann_f{i}" for i in range(500))]
    rows = [f"{key}" + "," * 1000 for key in ("hong2024metagpt", *(f"k{i}" for i in range(4_999)))]
    rows[0] = "hong2024metagpt,a" + "," * 500 + "b" + "," * 499  # one pair: f0, a against b
    path = tmp_path / "readers.csv"
    path.write_text("\n".join([",".join(header), *rows]) + "\n", encoding="utf-8")
    tracemalloc.start()
    try:
        result = run("audit", str(path), "--format", "json", cwd=pool_copy)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0, result.output
    audited = json.loads(result.output)
    assert audited["fields"]["f0"]["rows"] == 1 and len(audited["disagreements"]) == 1
    assert peak < 10 * path.stat().st_size, f"{peak:,} bytes at the peak for {path.stat().st_size:,}"


def test_a_large_second_reading_is_counted_as_it_is_read_and_its_disagreements_listed_up_to_a_cap(run, pool_copy, tmp_path):
    """A CSV of 12,000 rows, every cell filled and every pair differing: counted in full,
    the first MAX_LISTED disagreements listed and the rest counted (a 20 MB CSV took 2 GB
    and wrote 252 MB when each row was kept and each disagreement listed)."""
    rows = ["key,orig_category,ann_category"] + [f"k{k},a,b" for k in range(12_000)]
    (tmp_path / "big.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = run("audit", str(tmp_path / "big.csv"), "--format", "json", cwd=pool_copy)
    found = json.loads(result.output)
    assert (result.exit_code, found["rows"], found["fields"]["category"]) == (
        0,
        12_000,
        {"rows": 12_000, "agree": 0, "share": 0.0, "kappa": 0.0},
    )
    assert (len(found["disagreements"]), found["disagreements_not_listed"]) == (audit.MAX_LISTED, 2_000)
    assert found["disagreements"][-1] == {"key": "k9999", "field": "category", "first": "a", "second": "b"}
    text = run("audit", str(tmp_path / "big.csv"), cwd=pool_copy).output.splitlines()
    assert text[-1] == "... and 2,000 more, not listed (the first 10,000 are); audit fewer rows to see them"
    assert "12,000 disagreements:" in text
