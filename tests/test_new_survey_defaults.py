"""What a survey made by `paperpool new-survey` gets without configuring anything: every
export format, one name for the site, and no trace pages while it has no traces."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def survey(run, tmp_path) -> Path:
    assert run("new-survey", "wm", "--title", "A first title", cwd=tmp_path).exit_code == 0
    return tmp_path / "wm"


def test_trace_pages_appear_only_with_traces_or_when_the_registry_asks(run, survey, tmp_path):
    site = tmp_path / "site"
    assert run("build", "--out", str(site), cwd=survey).exit_code == 0
    assert not (site / "traces.html").exists() and not (site / "trace-schema.html").exists() and not (site / "traces").exists()
    assert "Orchestration traces" not in (site / "index.html").read_text(encoding="utf-8")
    with (survey / "registry.yaml").open("a", encoding="utf-8") as registry:
        registry.write("\ntraces:\n  pages: true\n")
    assert run("validate", cwd=survey).output == "ok: 1 entry and 0 exclusions, no problems.\n"
    assert run("build", "--out", str(site), cwd=survey).exit_code == 0
    assert (site / "traces.html").is_file() and (site / "trace-schema.html").is_file()
    assert "Orchestration traces" in (site / "index.html").read_text(encoding="utf-8")
