"""The exclusion page's screening diagram (issue 18): by default only what the log records
(records audited, retained and excluded, and the excluded per stage with their reasons),
a chain of stages with "assessed" counts only when the registry declares the stages
sequential, titled as the registry says, each stage linked to the log filtered to it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from paperpool.analysis.analyse import analyse
from paperpool.pool.reading import require_pool
from paperpool.sitegen.analysis import for_site
from paperpool.sitegen.charts import FlowStage, StageExclusions
from paperpool.sitegen.figures import Link, _flow

from ..conftest import REPO, TINY, edit
from .pools import flow_pool


def figure_of(root: Path):
    return _flow(for_site(analyse(require_pool(root))))


# ---------------------------------------------------------------------------------
# The shipped pool: a structured mapping review, its stages not sequential
# ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    return figure_of(REPO)


def test_the_shipped_pool_shows_the_exclusions_per_stage_and_no_assessed_count(shipped):
    chart = shipped.chart
    assert (chart.kind, chart.id, shipped.sequential) == ("stages", "screening-flow", False)
    title, audited, retained, excluded, stages, *labels, note = chart.arguments
    assert title == "Screening in a structured mapping review: exclusions by stage"
    assert (audited, retained, excluded) == (116, 84, 32)
    assert labels == ["Records audited", "Retained", "Excluded"]
    assert stages == [
        StageExclusions(
            "Abstract screening",
            16,
            [
                ("Prompted framework only", 6),
                ("Single-agent RL or tuning", 5),
                ("Benchmark or safety work without trace relevance", 2),
                ("Background, not load-bearing", 1),
                ("Outside LLM-MAS scope", 2),
            ],
        ),
        StageExclusions(
            "Full-text screening",
            9,
            [
                ("Duplicate or overlapping signal", 1),
                ("Benchmark or safety work without trace relevance", 4),
                ("Background, not load-bearing", 4),
            ],
        ),
        StageExclusions("Artifact screening", 6, [("Prompted framework only", 1), ("Insufficient product detail", 5)]),
        StageExclusions("Duplicate screening", 1, [("Duplicate or overlapping signal", 1)]),
    ]
    assert note == (
        "The log records the stage at which each record was excluded, not how many records each stage "
        "assessed, so the stages are not drawn as a sequence."
    )


def test_the_shipped_diagram_s_alt_text_holds_every_number_and_says_no_prisma(shipped):
    # with every reason it would pass the alt text's 600 characters: the reasons are in the table below it
    assert shipped.chart.alt == (
        "Diagram: Screening in a structured mapping review: exclusions by stage. Records audited 116: retained 84, "
        "excluded 32. Excluded, by the stage at which each was excluded: Abstract screening 16; Full-text screening 9; "
        "Artifact screening 6; Duplicate screening 1. Reasons for exclusion in the full table below."
    )
    for svg in (shipped.chart.light, shipped.chart.dark):
        assert "PRISMA" not in svg and "ssessed at" not in svg


def test_each_shipped_stage_links_to_the_log_filtered_to_it(shipped):
    assert shipped.links == [
        Link("Abstract screening", 16, "stage=abstract_screen"),
        Link("Full-text screening", 9, "stage=full_text_screen"),
        Link("Artifact screening", 6, "stage=artifact_screen"),
        Link("Duplicate screening", 1, "stage=duplicate_screen"),
    ]


# ---------------------------------------------------------------------------------
# A tiny pool, as its registry declares it
# ---------------------------------------------------------------------------------


def test_without_sequential_the_stages_stand_side_by_side_under_a_neutral_title(tmp_path):
    figure = figure_of(flow_pool(tmp_path / "pool"))
    assert (figure.chart.kind, figure.sequential) == ("stages", False)
    assert figure.chart.alt == STAGES_ALT
    assert figure.links == [Link("Abstract", 2, "stage=abstract"), Link("Full text", 1, "stage=full_text")]


def test_declared_sequential_the_stages_chain_and_each_assessed_what_the_ones_before_kept(tmp_path):
    figure = figure_of(flow_pool(tmp_path / "pool", "{stage: stage, reason: reason, sequential: true}"))
    assert (figure.chart.kind, figure.sequential) == ("flow", True)
    title, audited, stages, retained, *_ = figure.chart.arguments
    assert (title, audited, retained) == ("Screening flow", 8, 5)
    assert stages == [
        FlowStage("Abstract", 8, 2, [("Off topic", 1), ("No training", 1)]),
        FlowStage("Full text", 6, 1, [("No training", 1)]),
    ]
    assert figure.chart.alt == FLOW_ALT
    assert figure.links == [Link("Abstract", 2, "stage=abstract"), Link("Full text", 1, "stage=full_text")]


def test_the_diagram_takes_the_title_the_registry_gives(tmp_path):
    figure = figure_of(
        flow_pool(tmp_path / "pool", '{stage: stage, reason: reason, sequential: true, title: "PRISMA 2020 flow diagram"}')
    )
    assert figure.chart.title == "PRISMA 2020 flow diagram"
    assert figure.chart.alt.startswith("Screening flow diagram: PRISMA 2020 flow diagram. ")


def test_a_stage_the_log_does_not_filter_by_gets_no_link_and_a_stage_without_exclusions_a_box_but_no_link(tmp_path):
    root = flow_pool(tmp_path / "pool")
    edit(root / "registry.yaml", "    facets: [stage, reason]\n", "    facets: [reason]\n")
    assert figure_of(root).links == []
    edit(root / "registry.yaml", "    facets: [reason]\n", "    facets: [stage]\n")
    (root / "exclusions" / "x2.yaml").unlink()
    figure = figure_of(root)
    assert figure.chart.arguments[4] == [
        StageExclusions("Abstract", 2, [("Off topic", 1), ("No training", 1)]),
        StageExclusions("Full text", 0, []),
    ]
    assert figure.links == [Link("Abstract", 2, "stage=abstract")]


def test_no_flow_setting_no_diagram(tmp_path):
    assert figure_of(shutil.copytree(TINY, tmp_path / "pool")) is None


# ---------------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------------

STAGES_ALT = (
    "Diagram: Exclusions by screening stage. Records audited 8: retained 5, excluded 3. Excluded, by the stage "
    "at which each was excluded: Abstract 2 (Off topic 1, No training 1); Full text 1 (No training 1)."
)
FLOW_ALT = (
    "Screening flow diagram: Screening flow. Records audited 8. Abstract: assessed 8, excluded 2 (Off topic 1, "
    "No training 1). Full text: assessed 6, excluded 1 (No training 1). Retained 5."
)
SECTION = """## Screening

![{alt}](assets/paperpool/charts/screening-flow-light.svg#only-light){{ .pp-chart }}
![{alt}](assets/paperpool/charts/screening-flow-dark.svg#only-dark){{ .pp-chart }}


{sequential}The exclusion log below, filtered to one stage:

- <a href="#stage=abstract">Abstract</a>: 2 excluded
- <a href="#stage=full_text">Full text</a>: 1 excluded

"""
SEQUENTIAL = (
    "The registry declares these stages sequential: each stage assessed the records the stages before it kept, "
    "so the records it assessed are those audited less those excluded before it.\n\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("sequential", [False, True])
def test_the_exclusion_page_shows_the_diagram_and_a_link_per_stage(tmp_path, run, sequential):
    flow = "{stage: stage, reason: reason, sequential: true}" if sequential else "{stage: stage, reason: reason}"
    root = flow_pool(tmp_path / "pool", flow)
    kept = tmp_path / "pages"
    result = run("build", "--out", str(tmp_path / "site"), "--keep-pages", str(kept), cwd=root)
    assert result.exit_code == 0, result.output
    page = (kept / "exclusions.md").read_text(encoding="utf-8")
    assert "\n# Exclusion log\n\n3 of the 8 records audited were excluded; 5 were retained.\n\n## Screening\n" in page
    section = page[page.index("## Screening\n") : page.index("## Exclusions per stage and reason\n")]
    assert section == SECTION.format(alt=FLOW_ALT if sequential else STAGES_ALT, sequential=SEQUENTIAL if sequential else "")
