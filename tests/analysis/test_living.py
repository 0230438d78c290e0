"""A living survey (issue 18): the published claims count the pool as it stood at the
survey's publication (registry.yaml survey.publication), so papers added later never
break them; live claims count the pool now; a retagged record keeps its earlier values
in its `changes`; claims can count only the records assessed on what they read; gap
cells are empty, not assessed or filled."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from paperpool.files.yamlio import dump_yaml, load_yaml

from ..conftest import REPO, SOURCE, edit

FIVE = REPO / "tests" / "bib" / "living-five.bib"  # five real papers the pool does not hold
FIVE_KEYS = ["agentflow2026", "cory2024", "flowreasoner2025", "socialdeduction2025", "w4s2025"]


def _add_the_five(run, pool) -> None:
    """What a contributor does: import the BibTeX, tag the stubs, regenerate the README."""
    if not (pool / "README.md").exists():
        shutil.copyfile(REPO / "README.md", pool / "README.md")
    assert run("import-bib", str(FIVE), "--date-added", "2026-11-20", cwd=pool).exit_code == 0
    tags = yaml.safe_load((SOURCE / "living-five-tags.yaml").read_text(encoding="utf-8"))
    assert sorted(tags) == FIVE_KEYS
    for key, tagged in tags.items():
        path = pool / "papers" / f"{key}.yaml"
        path.write_text(dump_yaml(load_yaml(path).data | tagged), encoding="utf-8")
    assert run("readme", cwd=pool).exit_code == 0


@pytest.mark.slow
def test_five_new_papers_break_no_claim_and_need_no_edit_to_the_ledger(run, pool_copy):
    ledger = (pool_copy / "claims.yaml").read_bytes()
    _add_the_five(run, pool_copy)
    assert run("validate", cwd=pool_copy).output == "ok: 89 entries and 32 exclusions, no problems.\n"
    assert (run("claims", "--check", cwd=pool_copy).exit_code, run("claims", "--check", cwd=pool_copy).output) == (
        0,
        "15 claims: all hold, 14 published ones counted over the pool as of May 4, 2026 (arXiv 2605.02801v1) and 1 live one counted now; 7 published claims have a different value now.\n",
    )
    assert run("readme", "--check", cwd=pool_copy).exit_code == 0
    assert (pool_copy / "claims.yaml").read_bytes() == ledger
    text = run("claims", cwd=pool_copy).output
    added = ", ".join(f"{key} (added 2026-11-20)" for key in FIVE_KEYS)
    assert text.split("\n\n")[0] == (
        "[holds] retained-total: The pool retains 84 entries.\n"
        "  kind:     published, counted over the pool as of May 4, 2026 (arXiv 2605.02801v1)\n"
        "  query:    (every record) (over entries)\n"
        "  value:    84 at publication (expected 84)\n"
        f"  now:      89 (+5 since publication: {added})\n"
        "  rows:     84 records (agent-lightning, agent-qmix2026, agentdojo2024, agents-under-siege2025, agentspawn, ...) (at publication)\n"
        "  boundary: Counts records retained after screening, of every category, including surveys, benchmarks, "
        "classical MARL and industrial cases; not only RL methods."
    )
    live = next(block for block in text.split("\n\n") if "stopping-trained-now" in block)
    assert live.splitlines()[1:4] == [
        "  kind:     live, counted over the pool now",
        "  query:    subdecisions.trained = O5 (over entries, among the assessed)",
        "  value:    9 of the 89 entries assessed on subdecisions (expected 9)",
    ]
    readme = (pool_copy / "README.md").read_text(encoding="utf-8")
    assert (
        "Since the published version (arXiv 2605.02801v1, as of May 4, 2026): 5 entries added, 54 records retagged.\n"
        "15 claims: all hold, 14 published ones counted over the pool as of May 4, 2026 (arXiv 2605.02801v1) and 1 live "
        "one counted now; 7 published claims have a different value now."
    ) in readme


@pytest.mark.slow
def test_published_claims_keep_their_value_and_name_what_moved_them_since(run, pool_copy):
    _add_the_five(run, pool_copy)
    claims = {o["id"]: o for o in json.loads(run("claims", "--format", "json", cwd=pool_copy).output)}
    audited = claims["audited-total"]
    assert (audited["kind"], audited["value"], audited["now"]["value"], audited["holds"]) == ("published", 116, 121, True)
    assert [item["key"] for item in audited["since_publication"]] == FIVE_KEYS  # the 2026-11-23 reading moved no record in or out
    assert {item["change"] for item in audited["since_publication"]} == {"+"}
    o5 = claims["stopping-never-trained"]
    assert (o5["value"], o5["assessed"], o5["now"]["value"], o5["now"]["assessed"]) == (0, 17, 9, 89)
    live = claims["stopping-trained-now"]
    assert (live["kind"], live["value"], live["assessed"], "now" in live) == ("live", 9, 89, False)


def _add_change(path, item: str) -> None:
    """Append a change to a record's changes (the last field of an entry), starting the list if need be."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text + ("" if "\nchanges:\n" in text else "changes:\n") + item, encoding="utf-8")


def test_a_retag_recorded_in_changes_keeps_the_published_claim(run, pool_copy):
    """hera retagged from orchestrator to agent credit: with its earlier values in
    `changes`, the published orchestrator count holds and shows it leaving since."""
    path = pool_copy / "papers" / "hera.yaml"
    edit(path, "credit_granularity: orchestrator\ncredit_unit: orchestrator\n", "credit_granularity: agent\ncredit_unit: agent\n")
    _add_change(
        path, "- date: 2026-11-23\n  was: {credit_granularity: orchestrator, credit_unit: orchestrator}\n  why: A test retag.\n"
    )
    assert run("claims", "--check", cwd=pool_copy).output == (
        "15 claims: all hold, 14 published ones counted over the pool as of May 4, 2026 (arXiv 2605.02801v1) and 1 live one counted now; 3 published claims have a different value now.\n"
    )
    block = next(b for b in run("claims", cwd=pool_copy).output.split("\n\n") if "[holds] orchestrator-credit-broad" in b)
    assert block.splitlines()[3:5] == [
        "  value:    8 at publication (expected 8)",
        "  now:      7 (-1 since publication: hera (retagged 2026-11-23: Sub-decisions, Credit granularity, Credit unit))",
    ]


def test_a_retag_without_changes_fails_the_published_claim_and_says_how_to_fix_it(run, pool_copy):
    edit(
        pool_copy / "papers" / "kimi-k2-5.yaml",
        "credit_granularity: orchestrator\ncredit_unit: orchestrator\n",
        "credit_granularity: agent\ncredit_unit: agent\n",
    )
    result = run("claims", "--check", cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "claims.yaml:103: published claim 'orchestrator-credit-broad' no longer holds as of May 4, 2026 (arXiv 2605.02801v1): "
        "expected 8, found 7 (no longer matching: kimi-k2-5); it counts the pool as it stood then, so a record retagged "
        "since keeps its earlier values in its `changes` (date, was, why); if the claim itself is wrong, correct it"
    )


def test_the_history_of_kimi_k2_6_restores_its_first_tags(run, pool_copy):
    """HISTORY.md: kimi-k2-6 was retagged on 2026-04-30 (is_rl yes -> partial, reward
    orchestration -> NA, credit orchestrator -> NA): before that day it counts as it was."""
    block = next(
        b for b in run("claims", "--as-of", "2026-04-29", cwd=pool_copy).output.split("\n\n") if "orchestrator-credit-broad" in b
    )
    assert block.splitlines()[4] == (
        "  as of:    2026-04-29: 8 (+1 before publication: kimi-k2-6 (retagged 2026-04-30: Uses RL, Reward type, Reward family, "
        "Credit granularity, Credit unit; retagged 2026-11-23: Sub-decisions); -1 before publication: wideseek-r1-2026 "
        "(added 2026-05-04; retagged 2026-11-23: Sub-decisions, Reward type, Reward family, Strict explicit credit, Topology))"
    )
    stats = json.loads(run("stats", "--by", "is_rl", "--as-of", "2026-04-29", "--format", "json", cwd=pool_copy).output)
    now = json.loads(run("stats", "--by", "is_rl", "--format", "json", cwd=pool_copy).output)
    assert json.dumps(stats) != json.dumps(now)


def test_changes_are_checked_like_the_fields_they_restore(run, pool_copy):
    path = pool_copy / "papers" / "kimi-k2-6.yaml"
    text = path.read_text(encoding="utf-8").split("changes:")[0]
    path.write_text(
        text
        + (
            "changes:\n"
            "- date: 2026-05-02\n  was: {reward_type: orchestrtion, titel: x}\n  why: ''\n"
            "- date: 2026-05-01\n  was: {key: other, date_added: 2026-04-20}\n  why: out of order\n"
            "- date: 2026-04-01\n  was: {is_rl: 'yes'}\n  why: before the entry\n"
            "- date: 2099-01-01\n  was: {}\n  why: to come\n"
        ),
        encoding="utf-8",
    )
    result = run("validate", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        (
            "papers/kimi-k2-6.yaml:77: changes.was.reward_type: 'orchestrtion' is not an allowed value; did you mean "
            "'orchestration'? use one of shared, individual, role, process, tool, debate, verifier, orchestration, hybrid, NA\n"
            "papers/kimi-k2-6.yaml:77: changes.was.titel: 'titel' is not a field of the record; name the fields the change edited\n"
            'papers/kimi-k2-6.yaml:78: changes.why: say why the record changed, e.g. why: "the paper\'s section 4 trains the router"\n'
            "papers/kimi-k2-6.yaml:79: changes.date: 2026-05-01 is before the change above it (2026-05-02); list changes oldest first\n"
            "papers/kimi-k2-6.yaml:80: changes.was.date_added: 'date_added' is not a field whose changes are recorded; name the fields the change edited\n"
            "papers/kimi-k2-6.yaml:80: changes.was.key: 'key' is not a field whose changes are recorded; name the fields the change edited\n"
            "papers/kimi-k2-6.yaml:82: changes.date: 2026-04-01 is before the record's date_added 2026-04-28; a change comes after the record entered the pool\n"
            "papers/kimi-k2-6.yaml:85: changes.date: 2099-01-01 is in the future; use the day the record changed\n"
            "papers/kimi-k2-6.yaml:86: changes.was: give the values before the change, e.g. was: {credit_unit: agent} (null: the field was not set)\n"
            "9 errors, 0 warnings.\n"
        ),
    )


def test_the_publication_is_checked(run, pool_copy):
    edit(pool_copy / "registry.yaml", "publication: {date: 2026-05-04, version:", "publication: {date: 2026-02-30, version:")
    assert run("validate", cwd=pool_copy).output == (
        "registry.yaml:16: survey.publication.date: '2026-02-30' is not a real date; correct it (dates are YYYY-MM-DD)\n"
        "1 error, 0 warnings.\n"
    )
    edit(pool_copy / "registry.yaml", 'date: 2026-02-30, version: "arXiv 2605.02801v1", ', "date: 2026-05-04, ")
    assert run("validate", cwd=pool_copy).output.splitlines()[0] == (
        "registry.yaml:16: survey.publication.version: missing `version`; add it (which version was published, e.g. arXiv 2605.02801v1)"
    )


def test_a_published_claim_needs_a_publication(run, pool_copy):
    edit(pool_copy / "registry.yaml", "  publication: {", "  unpublished: {")
    result = run("validate", cwd=pool_copy)
    assert result.output.splitlines()[0] == (
        "claims.yaml:28: claims[0].kind: is published, but registry.yaml declares no survey.publication to count it at; "
        "declare it (date and version) or make the claim live"
    )
    assert result.output.splitlines()[-1] == "14 errors, 0 warnings."


def test_a_claim_that_can_never_fail_is_a_warning(run, tiny):
    """A query no record could satisfy, and one over a field no record is assessed on."""
    edit(tiny / "registry.yaml", "vocabulary: mode", "vocabulary: mode, missing_means: not_assessed")
    for name in ("alpha", "beta", "gamma"):
        path = tiny / "papers" / f"{name}.yaml"
        path.write_text(
            "".join(
                line for line in path.read_text(encoding="utf-8").splitlines(keepends=True) if not line.startswith("decisions:")
            ),
            encoding="utf-8",
        )
    edit(tiny / "claims.yaml", 'where: "unit = step"', 'where: "unit = step and unit = team"')
    result = run("validate", cwd=tiny)
    assert (result.exit_code, result.output) == (
        0,
        (
            "claims.yaml:10: claims[1].where: warning: counts over no assessed record: no record is assessed on decisions.trained, "
            "so the claim can never fail; assess the records on it, or remove the claim\n"
            "claims.yaml:15: claims[2].where: warning: no record could ever satisfy this query (it asks a field for values it "
            'cannot hold at once, or for "not assessed" among assessed records), so the claim can never fail; correct the query\n'
            "0 errors, 2 warnings.\n"
        ),
    )


def test_gap_cells_are_empty_not_assessed_or_filled(run, tiny):
    """Halt x Trained has no entry: a gap while every entry is tagged on its decisions,
    not assessed once one is not, filled once one trains it."""

    def state():
        tables = json.loads(run("gaps", "--format", "json", cwd=tiny).output)["tables"]
        cell = tables[1]["cells"]["D2"]["trained"]
        return cell["count"], cell["mark"], cell["unassessed"]

    assert state() == (0, "empty", [])
    edit(tiny / "registry.yaml", "vocabulary: mode", "vocabulary: mode, missing_means: not_assessed")
    assert state() == (0, "not assessed", ["delta", "epsilon"])  # tagged on no decision ({} or none): either may train D2
    edit(tiny / "papers" / "delta.yaml", "decisions: {}", "decisions: {D2: trained}")
    assert state() == (1, "sparse", ["epsilon"])
    markdown = run("gaps", cwd=tiny).output
    row = next(line for line in markdown.splitlines() if line.startswith("| D2 "))
    assert [cell.strip() for cell in row.strip("|").split("|")] == ["D2", "2", "1 sparse", "2"]
    assert "- D2 x trained (1; 1 more not assessed): delta" in markdown


def test_the_gap_tables_mark_the_surveys_representatives(run):
    tables = {t["id"]: t for t in json.loads(run("gaps", "--format", "json", cwd=REPO).output)["tables"]}
    cell = tables["family-unit"]["cells"]["R1"]["agent"]
    assert (cell["count"], cell["representatives"]) == (11, ["dr-mas", "magrpo", "maporl"])
    assert (
        "- R1 x agent (11): agent-qmix2026, collm-maac2026, coma2018, dr-mas*, ippo2020, magrpo*, maporl*, mappo2022, "
        "qmix2018, shapley-q2020, vdn2018"
    ) in run("gaps", cwd=REPO).output
    strict = tables["credit-readings"]["cells"]["role"]["strict"]
    assert (strict["count"], strict["mark"], len(strict["unassessed"])) == (3, "", 6)


@pytest.mark.slow
def test_the_site_says_what_the_pool_adds_to_the_published_survey(run, pool_copy, tmp_path):
    _add_the_five(run, pool_copy)
    pages = tmp_path / "pages"
    assert run("build", "--out", str(tmp_path / "site"), "--keep-pages", str(pages), cwd=pool_copy).exit_code == 0
    home = (pages / "index.md").read_text(encoding="utf-8")
    since = home.split("## Since publication\n\n", 1)[1].split("\n## ", 1)[0].splitlines()
    assert since[0] == (
        "The survey's published version is [arXiv 2605.02801v1](<https://arxiv.org/abs/2605.02801v1>), as of "
        "May 4, 2026. Its published claims are counted over the pool as it stood then."
    )
    bullets = {line.split("**")[1]: line for line in since if line.startswith("- **")}
    assert bullets["5 entries added"].startswith("- **5 entries added** since 2026-05-04: [Weak-for-Strong: ")
    assert bullets["54 records retagged"].startswith(
        "- **54 records retagged**: [Agent Lightning: Train ANY AI Agents with Reinforcement Learning](entries/agent-lightning.md) "
        "(retagged 2026-11-23: Sub-decisions, Strict explicit credit), "
    )
    assert bullets["7 published claims"] == (
        "- **7 published claims** have a different value now: [retained-total](claims.md#claim-retained-total) (84 at "
        "publication, 89 now), [audited-total](claims.md#claim-audited-total) (116 at publication, 121 now), "
        "[message-credit-broad](claims.md#claim-message-credit-broad) (2 at publication, 3 now), "
        "[message-credit-strict](claims.md#claim-message-credit-strict) (1 at publication, 2 now), "
        "[orchestrator-credit-broad](claims.md#claim-orchestrator-credit-broad) (8 at publication, 10 now), "
        "[orchestrator-credit-strict](claims.md#claim-orchestrator-credit-strict) (5 at publication, 6 now, disputed), "
        "[stopping-never-trained](claims.md#claim-stopping-never-trained) (0 of 17 assessed at publication, 9 of 89 now, disputed)."
    )
    assert bullets["59 gap cells"].startswith(
        "- **59 gap cells** changed: [Shared team / outcome reward × Orchestrator decision]"
        "(gaps/family-unit.md#cell-r1-orchestrator) in Reward family x credit unit "
        "(0 empty → 1 sparse), "
    )
    claims = (pages / "claims.md").read_text(encoding="utf-8")
    assert (
        "- Published, counted over the pool as of May 4, 2026 (arXiv 2605.02801v1): value at publication **0** of the 17 "
        "entries assessed on Sub-decisions; expected: **0**; holds.\n- Now: **9** of the 89 assessed; since publication +"
    ) in claims
    assert '!!! warning "Disputed: 9 now"' in claims
    cell = (pages / "gaps" / "subdecisions.md").read_text(encoding="utf-8").split("{ #cell-o2-trained }")[1].split("###")[0]
    # the history folds into its counts; what came or went, and why, is one click away
    assert "<summary>History: 4 at publication (as of May 4, 2026); 11 now; +8 since; −1</summary>" in cell
    assert '<li>+ <a href="../entries/agentflow2026.html">In-the-Flow' in cell
    # its coordinator, not its trained planner, routes
    assert '<li>− <a href="../entries/owl2025.html">OWL: Optimized Workforce Learning' in cell
    assert "(retagged 2026-11-23: Sub-decisions, arXiv id)</li>" in cell
    assert (
        '<li>+ <a href="../entries/w4s2025.html">Weak-for-Strong: Training Weak Meta-Agent to Harness Strong Executors</a> '
        "(added 2026-11-20)</li>"
    ) in cell


def test_the_stopping_claim_stays_as_published_and_shows_its_dispute(run, pool_copy):
    """The reading of 2026-11-23 finds 9 entries whose trained policy ends the run: the
    published claim keeps its 0 of 17 and carries the dispute; the live claim counts 9."""
    claims = {o["id"]: o for o in json.loads(run("claims", "--format", "json", cwd=pool_copy).output)}
    published, live = claims["stopping-never-trained"], claims["stopping-trained-now"]
    assert (published["value"], published["assessed"], published["holds"]) == (0, 17, True)
    assert (published["now"]["value"], published["now"]["assessed"]) == (9, 84)
    assert (
        published["dispute"]["rows"]
        == live["rows"]
        == [
            "collabuiagents2025",
            "context-folding",
            "dr-mas",
            "m-grpo",
            "matpo",
            "openai-codex",
            "puppeteer",
            "rema2025",
            "wideseek-r1-2026",
        ]
    )
    assert {item["about"] for item in published["dispute"]["evidence"]} == set(live["rows"])
    block = next(b for b in run("claims", cwd=pool_copy).output.split("\n\n") if "] stopping-never-trained" in b)
    assert block.splitlines()[4].startswith("  disputed: Reading every entry for the sub-decision axis (2026-11-23) finds 9 ")
    # the dispute is checked like a value: a record that moves it fails the check
    edit(pool_copy / "papers" / "puppeteer.yaml", "  O5: trained\n", "  O5: designed\n")
    result = run("claims", "--check", cwd=pool_copy)
    assert (result.exit_code, result.output.splitlines()[0]) == (
        1,
        (
            "claims.yaml:125: the dispute of published claim 'stopping-never-trained' no longer matches the pool now: "
            "no longer matching: puppeteer; if the records are right, update the dispute's now and rows (and its note and evidence)"
        ),
    )


@pytest.mark.slow
def test_the_publications_words_reach_the_site_as_text(run, pool_copy, tmp_path):
    """registry.yaml is part of a pull request: the publication's label and link are
    written as text and an inert link, never as markup."""
    edit(
        pool_copy / "registry.yaml",
        'label: "as of May 4, 2026", url: "https://arxiv.org/abs/2605.02801v1"',
        'label: "as of <script>alert(5)</script> May", url: "https://x.y/)<script>alert(8)</script>[z](https://x.y/"',
    )
    assert run("validate", cwd=pool_copy).exit_code == 0
    assert run("build", "--out", str(tmp_path / "site"), cwd=pool_copy).exit_code == 0
    pages = [path.read_text(encoding="utf-8") for path in (tmp_path / "site").rglob("*.html")]
    assert not any("<script>alert" in page for page in pages)
    assert any("&lt;script&gt;alert(5)" in page for page in pages)


def test_a_dispute_that_disputes_nothing_is_a_warning(run, pool_copy):
    edit(
        pool_copy / "claims.yaml",
        "    dispute:\n      now: 4\n      rows: [kimi-k2-5, owl2025, paramanager, puppeteer]\n",
        "    dispute:\n      now: 5\n      rows: [kimi-k2-5, owl2025, paramanager, puppeteer, wideseek-r1-2026]\n",
    )
    result = run("validate", cwd=pool_copy)
    assert (
        "claims.yaml:117: claims[10].dispute: warning: records the claim's own value and rows, so it disputes nothing; remove it, or "
        "record what the reading found" in result.output
    )


def test_a_bound_past_any_count_is_refused(run, tiny):
    edit(tiny / "claims.yaml", '    expected: "<= 1"\n', '    expected: "<= ' + "9" * 5000 + '"\n')
    result = run("validate", cwd=tiny)
    assert result.exit_code == 1 and "give the expected count (e.g. 2) or a bound in quotes" in result.output
