"""`paperpool add`: a new record from --set options or answered questions."""

from __future__ import annotations

import os

from click.testing import CliRunner

from paperpool.cli.commands import cli

SETS = [
    "--set",
    "title=Learning When to Stop Spawning",
    "--set",
    "authors=Doe, Jane; Roe, Rick",
    "--set",
    "year=2026",
    "--set",
    "urls=https://example.org/stop",
    "--set",
    "reward_type=orchestration",
    "--set",
    "subdecisions=O5:trained",
]


def test_add_from_options_writes_every_field(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run("add", "--no-interactive", "--date-added", "2026-11-20", *SETS, cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        0,
        (
            "created papers/doe2026learning.yaml; still TODO: category, is_rl, credit_granularity, credit_unit, orchestration_form, "
            "subdecision_evidence, scenario, is_core, verified, evidence_level, summary. Then: paperpool validate, and paperpool diff main to see which "
            "counts, gap cells and claims it moves.\n"
        ),
    )
    after = snapshot(pool_copy)
    assert set(after) - set(before) == {"papers/doe2026learning.yaml"}
    assert {name: after[name] for name in before} == before
    text = (pool_copy / "papers" / "doe2026learning.yaml").read_text(encoding="utf-8")
    assert text.startswith("key: doe2026learning\ntitle: Learning When to Stop Spawning\nauthors:\n- Doe, Jane\n- Roe, Rick\n")
    assert "reward_type: orchestration\nreward_family: R7\n" in text  # derived from the reward type
    assert "subdecisions:\n  O5: trained\n" in text and "date_added: 2026-11-20\n" in text
    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 0 and result.output.endswith("0 errors, 11 warnings.\n")


def test_add_refuses_what_the_pool_has(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run("add", "malt", "--no-interactive", *SETS, cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        "Error: key 'malt' is taken by papers/malt.yaml; paperpool never overwrites a record: choose another key\n",
    )
    result = run(
        "add",
        "malt-again",
        "--no-interactive",
        "--set",
        "title=MALT: improving reasoning with multi-agent LLM training!",
        "--set",
        "year=2024",
        cwd=pool_copy,
    )
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: this paper is already in the pool: papers/malt.yaml (title 100% alike); if it is a different paper, "
            "add --set distinct_from=KEY naming that record\n"
        ),
    )
    result = run("add", "x", "--no-interactive", "--set", "urls=https://arxiv.org/abs/2412.01928v2", cwd=pool_copy)
    assert result.output == (
        "Error: this paper is already in the pool: papers/malt.yaml (same arXiv id 2412.01928); "
        "if it is a different paper, add --set distinct_from=KEY naming that record\n"
    )
    assert snapshot(pool_copy) == before


def test_add_bad_options_write_nothing(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run(
        "add",
        "x",
        "--no-interactive",
        "--set",
        "titel=A",
        "--set",
        "year=soon",
        "--set",
        "category=rl",
        "--set",
        "urls=javascript:alert(1)",
        "--set",
        "novalue",
        cwd=pool_copy,
    )
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: --set titel: not a field of the entries; did you mean 'title'?; --set year: 'soon' is not a whole number; "
            "--set category: 'rl' is not an allowed value; use one of rl_method, survey, benchmark, framework, industry, classical_marl; "
            "--set urls: 'javascript:alert(1)' uses scheme 'javascript', not http or https; give an http:// or https:// link; "
            "--set novalue: write FIELD=VALUE\n"
        ),
    )
    result = run("add", "Bad Key", "--no-interactive", "--set", "title=A new paper on halting", cwd=pool_copy)
    assert result.exit_code == 1 and result.output.startswith("Error: key: ")
    assert snapshot(pool_copy) == before


def test_add_asks_offering_the_registry_values(tiny):
    """At a terminal (here --interactive) every field not given is asked, with the
    registry's values listed; a wrong answer is asked again."""
    answers = [
        "Halting agents with RL",
        "Roe, Rick",
        "2026",
        "https://example.org/halting",
        "rl-ish",
        "rl",  # not a method, then one
        "",
        "D2:trained",
        "Learns when to halt.",
        "",
    ]  # unit left unknown; the suggested key
    old = os.getcwd()
    os.chdir(tiny)
    try:
        result = CliRunner().invoke(
            cli, ["add", "--interactive", "--date-added", "2026-11-20"], input="\n".join(answers) + "\n", prog_name="paperpool"
        )
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    assert "Method: \n" not in result.output
    assert "  rl                       Reinforcement learning\n  prompting                Prompting\n" in result.output
    assert (
        "Error: 'rl-ish' is not an allowed value; use one of rl, prompting, search; try again, or press Enter to leave it unknown\n"
        in result.output
    )
    assert (
        "  D1                       Split\n  D2                       Halt\n  each as NAME:MODE, MODE one of trained, designed\n"
        in result.output
    )
    assert result.output.endswith(
        "Key (the file name) [roe2026halting]: \ncreated papers/roe2026halting.yaml. Then: paperpool validate, "
        "and paperpool diff main to see which counts, gap cells and claims it moves.\n"
    )
    assert (tiny / "papers" / "roe2026halting.yaml").read_text(encoding="utf-8") == (
        "key: roe2026halting\ntitle: Halting agents with RL\nauthors:\n- Roe, Rick\nyear: 2026\nurls:\n- https://example.org/halting\n"
        "method: rl\nunit: null\ndecisions:\n  D2: trained\nsummary: Learns when to halt.\n"
    )


def test_add_takes_the_arxiv_id_from_a_link(run, pool_copy):
    result = run(
        "add",
        "x2026",
        "--no-interactive",
        "--set",
        "title=A paper found by its link",
        "--set",
        "urls=https://arxiv.org/abs/2609.00001v2",
        cwd=pool_copy,
    )
    assert result.exit_code == 0
    assert "arxiv_id: '2609.00001'\n" in (pool_copy / "papers" / "x2026.yaml").read_text(encoding="utf-8")


def test_add_dry_run_shows_the_record(run, pool_copy, snapshot):
    before = snapshot(pool_copy)
    result = run(
        "add",
        "--no-interactive",
        "--dry-run",
        "--exclusion",
        "--set",
        "title=A screened paper",
        "--set",
        "identifier=arXiv:2601.00001",
        "--set",
        "url=https://arxiv.org/abs/2601.00001",
        "--date-added",
        "2026-11-20",
        cwd=pool_copy,
    )
    assert result.exit_code == 0
    assert result.output.startswith("key: screened\nrecord_id: TODO\ntitle: A screened paper\n")
    assert result.output.endswith(
        "would create exclusions/screened.yaml; still TODO: record_id, source, query_family, stage, "
        "reason_code, reason. Then: paperpool validate, and paperpool diff main to see which counts, "
        "gap cells and claims it moves.\n"
    )
    assert snapshot(pool_copy) == before
