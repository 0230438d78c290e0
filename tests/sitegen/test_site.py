"""`paperpool build`: the real mkdocs-material (and Zensical) build of a fixture pool.

The fixture is the tiny pool plus one hostile entry whose text holds a script, an
image with onerror, markdown links and template syntax. The golden pages are in
tests/pools/tiny-expected/site/; after a deliberate change to the pages, regenerate
them with (a build keeps its pages in a folder of its own, never over committed files)

    paperpool --root tests/pools/tiny build --out /tmp/tiny-site --keep-pages /tmp/tiny-pages
    cp -r /tmp/tiny-pages/. tests/pools/tiny-expected/site/

and review the diff.
"""

from __future__ import annotations

import html
import html.parser
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import bibtexparser
import pytest
from bibtexparser import middlewares

from paperpool.analysis.frame import build_frames
from paperpool.pool.reading import require_pool
from paperpool.registry.query import parse
from paperpool.sitegen import staging
from paperpool.sitegen.build import MARKER
from paperpool.sitegen.linkcheck import check_site

from ..conftest import EXPECTED, REPO, TINY, edit
from .elements import Elements
from .pools import HOSTILE_TITLE, hostile_pool

pytestmark = pytest.mark.slow  # real builds, installs or long runs: left out of the quick run, run by scripts/test and CI

STAGES = ("validate", "traces", "analyse", "render", "write", "mkdocs", "search", "charts", "replace")


# the shipped pool's corpus, as its registry declares it
WHO_AND_WHEN = """
traces:
  corpora:
    - {name: who-and-when, path: corpora/who-and-when.jsonl.gz, title: "Who&When", about: "Failure logs.", by: [system],
       count: [x_failure.agent]}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The hostile tiny pool, built once: (pool root, site, kept pages, CLI output)."""
    from click.testing import CliRunner

    from paperpool.cli.commands import cli

    base = tmp_path_factory.mktemp("built")
    root = hostile_pool(base / "pool")
    shutil.copytree(REPO / "corpora", root / "corpora")
    with (root / "registry.yaml").open("a", encoding="utf-8") as registry:
        registry.write(WHO_AND_WHEN)
    site, kept = base / "site", base / "pages"
    result = CliRunner().invoke(cli, ["--root", str(root), "build", "--out", str(site), "--keep-pages", str(kept)])
    assert result.exit_code == 0, result.output
    return root, site, kept, result.output


def test_build_reports_each_stage_and_where_the_site_is(built):
    _, site, _, output = built
    lines = output.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == list(STAGES)
    assert all(re.fullmatch(r"\s*\w+\s+\d+\.\d\d s", line) for line in lines[:-1])
    assert re.fullmatch(rf"built 32 pages in \d+\.\d s: {re.escape(str(site / 'index.html'))}", lines[-1])


def test_every_page_the_issue_names_is_built(built):
    _, site, _, _ = built
    for page in (
        "index",
        "browse",
        "statistics",
        "gaps",
        "claims",
        "exclusions",
        "recent",
        "downloads",
        "traces",
        "contributing",
        "axes/method",
        "axes/method/rl",
        "axes/unit/step",
        "axes/decisions/d2",
        "entries/alpha",
        "entries/hostile",
        "gaps/method-unit",
    ):
        assert (site / f"{page}.html").is_file(), page
    for download in ("feed.xml", "downloads/pool.bib", "downloads/pool.json", "assets/paperpool/charts/per-method-light.svg"):
        assert (site / download).is_file(), download
    assert (site / MARKER).is_file()


def test_the_trace_gallery_draws_and_measures_every_trace(built):
    root, site, kept, _ = built
    page = (kept / "traces.md").read_text(encoding="utf-8")
    names = sorted(path.stem for path in (root / "traces").glob("*.json"))
    assert len(names) == 10
    for name in names:
        assert f"{{ #trace-{name} }}" in page, name
        for variant in ("light", "dark"):
            assert (site / "traces" / f"{name}-{variant}.svg").read_text(encoding="utf-8").startswith("<svg color=")
        assert (site / "traces" / f"{name}.json").read_bytes() == (root / "traces" / f"{name}.json").read_bytes()
    # the measures are trace metrics' own: the debate has 8 events, 3 agents, no stop
    assert "| [example-debate](#trace-debate-two-rounds) | debate | 8 | 3 | 2.17 | no stop event |" in page
    # a Who&When trace: its labelled failing step said under its description and ringed in its drawing
    assert (
        "**Labelled failing step** (ringed in the drawing): step 5 (step-5), by Validation\\_Expert: The agent fabricated "
        "the population figures for Seattle and Colville, resulting in an incorrect calculation of the population "
        "difference."
    ) in page
    drawing = (site / "traces" / "who-and-when-algorithm-generated-10-light.svg").read_text(encoding="utf-8")
    assert '<circle cx="' in drawing and 'r="9" fill="none" stroke="#e45756"' in drawing and ">failing step 5</text>" in drawing
    html = (site / "traces.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    timeline = (site / "traces" / "hostile-trace-light.svg").read_text(encoding="utf-8")
    assert "contxt.exe&lt;b&gt;" in timeline
    assert "\u202e" not in timeline and "\u202e" not in html
    schema = (site / "trace-schema.html").read_text(encoding="utf-8")
    assert (
        "urn:paperpool:schema:orchestration-trace:1.0.0" in schema
        and (site / "traces" / "orchestration-trace.v1.schema.json").is_file()
    )


def _figure(value) -> str:
    """A number as the corpus page shows it, worked out here on its own: whole numbers as
    they are, others to three significant digits."""
    return f"{round(value):,}" if float(value).is_integer() else f"{value:.3g}"


def _pipe_rows(text: str) -> str:
    """The HTML table rows of a page (a corpus page's tables scroll in a region of their
    own) written as pipe rows, `| a | b |`, each cell's text unescaped."""

    def row(match):
        cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", match.group(1))
        return "| " + " | ".join(html.unescape(cell) for cell in cells) + " |"

    return re.sub(r"<tr>(.*?)</tr>", row, text)


def test_a_corpus_page_shows_the_corpus_figures_as_the_data_has_them(built):
    """The shipped Who&When corpus, counted here by reading its lines with numpy and a Counter."""
    import gzip
    from collections import Counter

    import numpy as np

    root, site, kept, _ = built
    traces = [
        json.loads(line) for line in gzip.decompress((root / "corpora" / "who-and-when.jsonl.gz").read_bytes()).splitlines()
    ]
    assert len(traces) == 184
    page = _pipe_rows((kept / "trace-corpora" / "who-and-when.md").read_text(encoding="utf-8"))
    assert (site / "trace-corpora" / "who-and-when.html").is_file()
    assert (
        "Corpora of traces, each summarised on a page of its own: [Who&amp;When](trace-corpora/who-and-when.md) (184 traces)."
        in (kept / "traces.md").read_text(encoding="utf-8")
    )
    assert "**184 traces**, 184 valid and 0 invalid" in page
    systems = Counter(trace["system"] for trace in traces)
    assert systems == {"CaptainAgent group chat": 126, "Magentic-One": 58}
    assert (
        f"Valid traces by system: CaptainAgent group chat {systems['CaptainAgent group chat']}, Magentic-One {systems['Magentic-One']}."
        in page
    )
    assert "Their time unit (the `time_unit` the traces declare; times and durations below count it): steps (184 traces)." in page
    # a measure's distribution: the events of each trace, by system
    for number, system in enumerate(sorted(systems)):
        events = np.array([len(trace["events"]) for trace in traces if trace["system"] == system], dtype=float)
        stats = [events.mean(), events.min(), *np.percentile(events, [10, 25, 50, 75, 90]), events.max()]
        label = "events: events" if number == 0 else ""
        row = f"| {label} | {system} | {len(events)} | {len(events)} | " + " | ".join(_figure(value) for value in stats) + " |"
        assert row in page, row
    assert "Each measure's distribution over the 184 valid traces of the corpus (184 in all), by system:" in page
    # the events by type, and each type's share of its system's events
    for system in systems:
        types = Counter(event["type"] for trace in traces if trace["system"] == system for event in trace["events"])
        total = sum(types.values())
        for kind, count in types.items():
            assert f"| {system} | {kind} | {count:,} | {100 * count / total:.1f} % |" in page
    # the failure labels: who failed, by system (Magentic-One has five agents named)
    failed = Counter(trace["x_failure"]["agent"] for trace in traces if trace["system"] == "Magentic-One")
    for agent, count in failed.items():
        assert f"| Magentic-One | {agent} | {count} | {100 * count / 58:.1f} % |" in page
    captain = Counter(trace["x_failure"]["agent"] for trace in traces if trace["system"] == "CaptainAgent group chat")
    others = sorted(captain.items(), key=lambda item: (-item[1], item[0]))[12:]
    assert (
        f"| CaptainAgent group chat | {len(others)} other values, together | {sum(n for _, n in others)} | "
        f"{100 * sum(n for _, n in others) / 126:.1f} % |"
    ) in page


def test_an_invalid_trace_stops_the_build(tmp_path, run, snapshot):
    root = hostile_pool(tmp_path / "pool")
    assert run("build", "--out", str(tmp_path / "site"), cwd=root).exit_code == 0
    before = snapshot(tmp_path / "site")
    declared = '"schema": "urn:paperpool:schema:orchestration-trace:1.0.0"'  # held to all of paperpool's rules
    (root / "traces" / "broken.json").write_text(
        "{" + declared + ', "trace_id": "x", "events": [], "edges": [{"src": "a", "dst": "b", "type": "causal"}]}',
        encoding="utf-8",
    )
    result = run("build", "--out", str(tmp_path / "site"), cwd=root)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: traces/broken.json is not a valid trace (2 problems above); "
        "fix it first: paperpool trace validate traces/broken.json"
    )
    assert snapshot(tmp_path / "site") == before


def test_every_internal_link_and_anchor_resolves(built):
    _, site, _, _ = built
    assert [str(broken) for broken in check_site(site)] == []


def test_entry_pages_are_not_in_the_navigation(built):
    _, site, _, _ = built
    home = (site / "index.html").read_text(encoding="utf-8")
    # mkdocs-material's sidebars come before the content: the primary one is the navigation
    nav = home[home.index("md-sidebar--primary") : home.index("md-sidebar--secondary")]
    assert "browse.html" in nav and "axes/method.html" in nav
    assert "entries/" not in nav and "axes/method/rl.html" not in nav


def test_hostile_text_is_shown_as_text_on_every_page(built):
    _, site, _, _ = built
    for path in site.rglob("*.html"):
        page = Elements()
        page.feed(path.read_text(encoding="utf-8"))
        name = path.relative_to(site).as_posix()
        assert not [tag for tag, _ in page.elements if tag in ("iframe", "b")], name
        assert not [(tag, a) for tag, attrs in page.elements for a in attrs if a.startswith("on")], name
        assert not [
            v for _, attrs in page.elements for v in attrs.values() if v and v.strip().lower().startswith("javascript:")
        ], name
        assert not [text for text in page.scripts if "pwned" in text], name
    page = (site / "entries" / "hostile.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page
    assert "{{ 7*7 }}" in page and "{% if 1 %}x{% endif %}" in page and "49" not in page


def test_only_web_links_leave_the_site(built):
    _, site, _, _ = built
    hrefs = []
    for path in site.rglob("*.html"):
        page = Elements()
        page.feed(path.read_text(encoding="utf-8"))
        hrefs += [attrs[a] for _, attrs in page.elements for a in ("href", "src") if attrs.get(a)]
    schemes = {href.split(":", 1)[0].lower() for href in hrefs if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href)}
    assert schemes <= {"http", "https"}


def test_the_feed_is_atom_with_titles_as_text(built):
    _, site, _, _ = built
    feed = ET.parse(site / "feed.xml").getroot()
    atom = "{http://www.w3.org/2005/Atom}"
    titles = [entry.find(f"{atom}title").text for entry in feed.iter(f"{atom}entry")]
    assert titles == [HOSTILE_TITLE]  # the only entry with a date of addition
    assert "<script>" not in (site / "feed.xml").read_text(encoding="utf-8")


def test_the_bibtex_download_reads_back_as_the_records(built):
    root, site, _, _ = built
    library = bibtexparser.parse_string(
        (site / "downloads" / "pool.bib").read_text(encoding="utf-8"), append_middleware=[middlewares.LatexDecodingMiddleware()]
    )
    assert not library.failed_blocks
    titles = {entry.key: entry["title"] for entry in library.entries}
    pool = require_pool(root)
    assert titles == {record.key: record.data["title"] for record in pool.entries}


def test_gap_cells_on_the_site_are_the_gaps_command_s(built, run):
    root, _, kept, _ = built
    expected = json.loads(run("gaps", "--format", "json", cwd=root).output)
    shown = {}
    for table in expected["tables"]:
        page = (kept / "gaps" / f"{table['id']}.md").read_text(encoding="utf-8")
        shown[table["id"]] = {
            (row, col): int(n)
            for row, col, n in re.findall(
                r'<a class="pp-gap[^"]*" href="[^"#]*#cell-([a-z0-9-]+?)-([a-z0-9-]+)"[^>]*>(\d+)</a>', page
            )
        }
        assert shown[table["id"]] == {
            (row.lower(), col.lower()): cell["count"] for row, cells in table["cells"].items() for col, cell in cells.items()
        }


def test_claims_page_shows_every_claim_with_its_values(built, run):
    """A live claim with its value (the tiny pool declares no publication; tests/analysis/test_living.py
    builds the shipped pool's published claims)."""
    root, _, kept, _ = built
    page = (kept / "claims.md").read_text(encoding="utf-8")
    for claim in json.loads(run("claims", "--format", "json", cwd=root).output):
        assert f"Live: value **{claim['value']}**" in page.split(f"#claim-{claim['id']}")[-1]


def test_browser_facets_select_what_the_query_language_selects(built):
    root, _, kept, _ = built
    script = (kept / "assets" / "paperpool" / "data" / "entries.js").read_text(encoding="utf-8")
    data = json.loads(script.split('["entries"]=', 1)[1].rstrip().rstrip(";"))
    frames = build_frames(require_pool(root))
    for facet in data["facets"]:
        for value in facet["values"]:
            chosen = sorted(r["key"] for r in data["records"] if value["id"] in r["facets"][facet["field"]])
            query = parse(f"{facet['field']} = {value['id']}", frames["entries"].columns)
            assert chosen == sorted(frames["entries"].select(query.tree)), (facet["field"], value["id"])


def test_golden_pages(tmp_path, run):
    """The whole generated markdown of the tiny pool's build, byte for byte (see the
    module's docstring for the command that regenerates it)."""
    kept = tmp_path / "pages"
    assert (
        run("--root", str(TINY), "build", "--out", str(tmp_path / "site"), "--keep-pages", str(kept), cwd=tmp_path).exit_code == 0
    )
    expected_dir = EXPECTED / "site"
    produced = {p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file() and p.name != MARKER}
    expected = {p.relative_to(expected_dir).as_posix() for p in expected_dir.rglob("*") if p.is_file() and p.name != MARKER}
    assert produced == expected
    for name in sorted(produced):
        assert (kept / name).read_text(encoding="utf-8") == (expected_dir / name).read_text(encoding="utf-8"), name


# ---------------------------------------------------------------------------------
# Failures leave the last good site as it was
# ---------------------------------------------------------------------------------


@pytest.fixture
def pool_and_site(tmp_path, run):
    root = hostile_pool(tmp_path / "pool")
    site = tmp_path / "site"
    assert run("build", "--out", str(site), cwd=root).exit_code == 0
    return root, site


def _snapshot(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def test_an_invalid_pool_is_not_built(pool_and_site, run):
    root, site = pool_and_site
    before = _snapshot(site)
    edit(root / "papers" / "alpha.yaml", "method: rl", "method: telepathy")
    result = run("build", "--out", str(site), cwd=root)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "papers/alpha.yaml:6: method: 'telepathy' is not an allowed value; use one of rl, prompting, search",
        "Error: the pool is not valid (1 error above); nothing was built, the previous site is unchanged",
    ]
    assert _snapshot(site) == before
    assert [p.name for p in site.parent.iterdir() if p.name.startswith(".")] == []


def test_a_failed_engine_build_keeps_the_previous_site(pool_and_site, run):
    root, site = pool_and_site
    before = _snapshot(site)
    (root / "site").mkdir()
    (root / "site" / "notes.md").write_text("# Notes\n\nSee [the missing page](missing.md).\n", encoding="utf-8")
    result = run("build", "--out", str(site), cwd=root)
    assert result.exit_code == 1
    error = result.output.splitlines()[-1]
    assert error.startswith("Error: mkdocs build failed: WARNING")
    assert "notes.md" in error and "missing.md" in error and error.endswith("; the previous site was left as it was")
    assert _snapshot(site) == before
    assert [p.name for p in site.parent.iterdir() if p.name.startswith(".")] == []


def test_a_build_interrupted_between_the_two_renames_is_recovered(pool_and_site, run):
    root, site = pool_and_site
    scratch = site.with_name(".site.building-killed")  # as if the process died after moving the old site aside
    scratch.mkdir()
    (scratch / staging.MARK).touch()
    (scratch / staging.LOCK).touch()
    site.rename(scratch / staging.PREVIOUS)
    before = _snapshot(scratch / staging.PREVIOUS)
    # the next build fails in the engine: the old site is back all the same
    (root / "site").mkdir()
    (root / "site" / "notes.md").write_text("# Notes\n\nSee [the missing page](missing.md).\n", encoding="utf-8")
    assert run("build", "--out", str(site), cwd=root).exit_code == 1
    assert _snapshot(site) == before
    (root / "site" / "notes.md").unlink()
    assert run("build", "--out", str(site), cwd=root).exit_code == 0
    assert (site / "index.html").is_file() and not scratch.exists()


def test_a_scratch_folder_laid_by_a_pull_request_puts_nothing_in_the_site_s_place(tmp_path, run):
    """A committed scratch folder, marked and unlocked as a killed build's, whose
    `previous` is a link out of the pool (or a folder paperpool did not build): it is
    removed, never renamed into the site's place (issue 39)."""
    root = hostile_pool(tmp_path / "pool")
    (tmp_path / "outside").mkdir()
    for previous in ("link", "foreign"):
        scratch = root / "build" / f".site.building-{previous}"
        scratch.mkdir(parents=True)
        (scratch / staging.MARK).touch()
        (scratch / staging.LOCK).touch()
        if previous == "link":
            (scratch / staging.PREVIOUS).symlink_to(tmp_path / "outside")
        else:
            (scratch / staging.PREVIOUS).mkdir()
            (scratch / staging.PREVIOUS / "thesis.tex").write_text("mine", encoding="utf-8")
        (root / "site").mkdir(exist_ok=True)
        (root / "site" / "notes.md").write_text("# Notes\n\nSee [the missing page](missing.md).\n", encoding="utf-8")
        assert run("build", cwd=root).exit_code == 1  # the engine refuses the page
        assert not os.path.lexists(root / "build" / "site") and sorted(os.listdir(root / "build")) == []


def test_a_build_removes_and_replaces_only_what_it_made(pool_and_site, run):
    """A folder beside the site named like an old scratch or backup folder is someone's own
    (issue 39: `site.old` was renamed over and deleted, so was `DIR.old` beside --out DIR)."""
    root, site = pool_and_site
    theirs = [site.with_name("site.old"), site.with_name(".site.building-theirs")]
    for folder in theirs:
        folder.mkdir()
        (folder / "thesis.tex").write_text("mine", encoding="utf-8")
        (folder / ".lock").touch()
    assert run("build", "--out", str(site), cwd=root).exit_code == 0
    assert [(folder / "thesis.tex").read_text(encoding="utf-8") for folder in theirs] == ["mine", "mine"]
    assert sorted(p.name for p in site.parent.iterdir()) == sorted(["pool", "site", *(folder.name for folder in theirs)])


@pytest.mark.parametrize(
    "target, message",
    [
        (".", "would replace the pool's own files; choose a folder of its own, such as build/site"),
        ("papers/..", "would replace the pool's own files; choose a folder of its own, such as build/site"),
        ("foreign", "holds files paperpool did not build; choose an empty or new folder (nothing was changed)"),
    ],
)
def test_out_is_never_a_folder_paperpool_did_not_build(tmp_path, run, target, message):
    root = hostile_pool(tmp_path / "pool")
    (root / "foreign").mkdir()
    (root / "foreign" / "thesis.tex").write_text("mine", encoding="utf-8")
    result = run("build", "--out", target, cwd=root)
    assert result.exit_code == 1
    assert result.output == f"Error: --out {(root / target).resolve()}: {message}\n"
    assert (root / "foreign" / "thesis.tex").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("in_git", [True, False])
def test_a_marker_a_pull_request_laid_does_not_make_the_records_a_site(tmp_path, run, in_git):
    """site_dir: papers with a committed papers/.paperpool-site (issue 39's fresh review: the
    build deleted every record): refused because the pool is read from there, and, in a
    repository, because the folder holds committed files, whatever folder it is."""
    root = hostile_pool(tmp_path / "pool")
    (root / "papers" / MARKER).touch()
    (root / "notes").mkdir()
    (root / "notes" / MARKER).touch()
    (root / "notes" / "thesis.tex").write_text("mine", encoding="utf-8")
    if in_git:
        git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run([*git, "commit", "-qm", "pull request"], cwd=root, check=True)
    records = sorted(path.name for path in (root / "papers").iterdir())
    result = run("build", "--out", "papers", cwd=root)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: --out {root / 'papers'}: holds files committed to the repository (.paperpool-site and {len(records) - 1} more), "
            "which a build never replaces; choose a folder of its own, such as build/site (nothing was changed)\n"
            if in_git
            else f"Error: --out {root / 'papers'}: the pool is read from papers, which building there would replace; choose a "
            "folder of its own, such as build/site (nothing was changed)\n"
        ),
    )
    result = run("build", "--out", "notes", cwd=root)
    assert result.exit_code == (1 if in_git else 0), result.output
    assert sorted(path.name for path in (root / "papers").iterdir()) == records
    assert ((root / "notes" / "thesis.tex").is_file()) == in_git


def test_a_handwritten_page_may_not_take_a_generated_page_s_name(tmp_path, run):
    root = hostile_pool(tmp_path / "pool")
    (root / "site").mkdir()
    (root / "site" / "browse.md").write_text("# Mine\n", encoding="utf-8")
    result = run("build", "--out", str(tmp_path / "out"), cwd=root)
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            "site/browse.md:1: the build writes this path itself; rename or move your file",
            "Error: mkdocs.yml or the hand-written pages are not accepted (1 problem above); nothing was built, the previous site is unchanged",
        ],
    )


def test_handwritten_pages_and_the_intro_are_used(tmp_path, run):
    root = hostile_pool(tmp_path / "pool")
    (root / "site").mkdir()
    (root / "site" / "index.md").write_text("# Ignored title\n\nOur own words about the pool.\n", encoding="utf-8")
    (root / "site" / "method.md").write_text("# How we searched\n\nBack [home](index.md).\n", encoding="utf-8")
    out = tmp_path / "out"
    assert run("build", "--out", str(out), cwd=root).exit_code == 0
    assert "Our own words about the pool." in (out / "index.html").read_text(encoding="utf-8")
    assert "How we searched" in (out / "method.html").read_text(encoding="utf-8")
    assert check_site(out) == []


def test_a_pool_template_overrides_the_default_by_name(tmp_path, run):
    root = hostile_pool(tmp_path / "pool")
    (root / "templates" / "site").mkdir(parents=True)
    (root / "templates" / "site" / "traces.md.j2").write_text("# Traces\n\nOur traces live elsewhere.\n", encoding="utf-8")
    out = tmp_path / "out"
    assert run("build", "--out", str(out), cwd=root).exit_code == 0
    assert "Our traces live elsewhere." in (out / "traces.html").read_text(encoding="utf-8")


def test_zensical_builds_the_same_site(built, tmp_path, run):
    root, site, _, _ = built
    out = tmp_path / "zensical"
    result = run("build", "--engine", "zensical", "--out", str(out), cwd=root)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[5].split()[0] == "zensical"

    def pages(folder: Path) -> set[str]:
        return {p.relative_to(folder).as_posix() for p in folder.rglob("*.html")}

    assert pages(out) == pages(site)
    assert check_site(out) == []
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in (out / "entries" / "hostile.html").read_text(encoding="utf-8")


def test_serve_rebuilds_when_an_entry_changes(tmp_path):
    """The live preview, as a contributor runs it: a real server, a real edit."""
    import subprocess
    import sys
    import urllib.request

    root = hostile_pool(tmp_path / "pool")
    server = subprocess.Popen(
        [sys.executable, "-m", "paperpool", "serve", "--port", "0", "--out", str(tmp_path / "site")],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        first = server.stdout.readline()
        url = re.search(r"at (http://127\.0\.0\.1:\d+/)", first).group(1)

        def heading() -> str:
            page = urllib.request.urlopen(url + "entries/alpha.html", timeout=10).read().decode()
            return re.search(r"<h1[^>]*>([^<]*)", page).group(1)

        assert heading() == "Alpha: learning to split tasks"
        edit(root / "papers" / "alpha.yaml", "Alpha: learning", "Alpha: learning again")
        assert server.stdout.readline().startswith("rebuilt after a change to papers/alpha.yaml in ")
        assert heading() == "Alpha: learning again to split tasks"
        edit(root / "papers" / "alpha.yaml", "method: rl", "method: telepathy")
        assert server.stdout.readline().startswith("papers/alpha.yaml:6: method: 'telepathy' is not an allowed value")
        assert server.stdout.readline().startswith("Error: the pool is not valid (1 error above)")
        assert heading() == "Alpha: learning again to split tasks"  # the last good site stays up
        edit(root / "papers" / "alpha.yaml", "method: telepathy", "method: rl")
        assert server.stdout.readline().startswith("rebuilt after a change to papers/alpha.yaml in ")
        # a name with a terminal's escape and a line break (issue 39's fifth review): shown escaped, on one line
        (root / "notes").mkdir()
        (root / "notes" / "a\x1b]0;HACKED\x07\nError: forged").write_text("", encoding="utf-8")
        assert server.stdout.readline().startswith("rebuilt after a change to notes/a\\x1b]0;HACKED\\x07\\nError: forged in ")
        # a folder nested past what paperpool reads, which the build never reads (the ninth review):
        # it is not watched below that depth, and serving goes on
        deep = root / "notes" / "/".join(["d"] * 70)
        deep.mkdir(parents=True)
        (deep / "f").write_text("", encoding="utf-8")
        edit(root / "papers" / "alpha.yaml", "Alpha: learning again", "Alpha: learning")
        assert server.stdout.readline().startswith("rebuilt after a change to papers/alpha.yaml in ")
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_charts_that_fail_to_draw_stop_the_build_and_leave_the_site(tmp_path, run, snapshot, monkeypatch):
    """The charts are drawn in another process while the engine builds (sitegen/drawing.py);
    a failure there reaches the user as one line, and the last site stays as it was."""
    root = hostile_pool(tmp_path / "pool")
    assert run("build", "--out", str(tmp_path / "site"), cwd=root).exit_code == 0
    before = snapshot(tmp_path / "site")

    def broken(chart):
        raise RuntimeError("no ink")

    monkeypatch.setattr("paperpool.sitegen.chartdraw.svgs", broken)  # the drawing process is forked with it
    result = run("build", "--out", str(tmp_path / "site"), cwd=root)
    assert result.exit_code == 1
    assert re.fullmatch(
        r"Error: drawing the charts failed \(RuntimeError: no ink at test_site\.py:\d+\); "
        r"the previous site was left as it was",
        result.output.splitlines()[-1],
    )
    assert snapshot(tmp_path / "site") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool", "site"]


def test_the_built_site_holds_the_drawn_charts_not_their_placeholders(built):
    _, site, _, _ = built
    charts = sorted((site / "assets" / "paperpool" / "charts").glob("*.svg"))
    assert len(charts) >= 4
    assert all(path.read_text(encoding="utf-8").startswith("<?xml") for path in charts), "a placeholder was left"


# ---------------------------------------------------------------------------------
# Citing and discovery
# ---------------------------------------------------------------------------------


def _coins(page: str) -> dict[str, list[str]]:
    """The ContextObject of a page's COinS span, decoded as Zotero decodes it."""
    from html import unescape
    from urllib.parse import parse_qs

    spans = re.findall(r'<span class="Z3988" title="([^"]*)"></span>', page)
    assert len(spans) == 1
    return parse_qs(unescape(spans[0]), keep_blank_values=True, strict_parsing=True)


def test_an_entry_page_cites_in_three_formats_with_coins_and_no_scholar_tags(built):
    root, site, _, _ = built
    from paperpool.formats.bibtex.writing import entry_bibtex
    from paperpool.formats.csljson import entry_csljson
    from paperpool.formats.ris import entry_ris

    pool = require_pool(root)
    for record in pool.entries:
        downloads = site / "downloads" / "entries"
        assert (downloads / f"{record.key}.bib").read_text(encoding="utf-8") == entry_bibtex(pool.registry, record.data)
        assert (downloads / f"{record.key}.ris").read_text(encoding="utf-8") == entry_ris(pool.registry, record.data)
        assert (downloads / f"{record.key}.csljson").read_text(encoding="utf-8") == entry_csljson(pool.registry, record.data)
        page = (site / "entries" / f"{record.key}.html").read_text(encoding="utf-8")
        for name, fmt in (("BibTeX", "bib"), ("RIS", "ris"), ("CSL-JSON", "csljson")):
            assert (
                f'<a download="{record.key}.{fmt}" href="../downloads/entries/{record.key}.{fmt}">Download {record.key}.{fmt}</a>'
                in page
            ), name
        assert 'name="citation_' not in page  # no Google Scholar tags: the page is about the paper, not the paper
        coins = _coins(page)
        assert coins["ctx_ver"] == ["Z39.88-2004"]
        assert coins["rft.title"] == [record.data["title"]]  # the tiny pool's entries are misc: Dublin Core
        assert coins["rft.au"] == record.data["authors"]
        assert coins["rft.date"] == [str(record.data["year"])]
        assert coins["rft_id"] == record.data["urls"][:1]
    # the hostile title is in the span's title, percent-encoded: no quote, bracket or space can end the attribute
    hostile = (site / "entries" / "hostile.html").read_text(encoding="utf-8")
    assert _coins(hostile)["rft.title"] == [HOSTILE_TITLE]
    assert re.fullmatch(r"[A-Za-z0-9_.~%=&;-]+", re.search(r'class="Z3988" title="([^"]*)"', hostile).group(1))


def test_the_downloads_hold_the_pool_as_csl_json(built):
    root, site, _, _ = built
    items = json.loads((site / "downloads" / "pool.csljson").read_text(encoding="utf-8"))
    assert [item["id"] for item in items] == sorted(record.key for record in require_pool(root).entries)
    assert 'href="downloads/pool.csljson"' in (site / "downloads.html").read_text(encoding="utf-8")


def test_every_page_links_the_feed_in_its_head(built):
    _, site, _, _ = built
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 30
    for path in pages:
        head = path.read_text(encoding="utf-8").split("</head>")[0]
        root = "../" * (len(path.relative_to(site).parts) - 1)
        link = (
            f'<link rel="alternate" type="application/atom+xml" title="A tiny survey of tool-using agents: recently added" '
            f'href="{root}feed.xml">'
        )
        assert head.count('rel="alternate"') == 1 and link in head, path


def test_the_home_page_links_the_survey_its_repository_and_form_and_says_when_the_pool_changed(pool_copy, tmp_path, run):
    edit(
        pool_copy / "registry.yaml",
        '  arxiv_id: "2605.02801"\n',
        '  arxiv_id: "2605.02801"\n'
        "  repository: https://github.com/example/pool\n  suggest_url: https://github.com/example/pool/issues/new\n",
    )
    edit(
        pool_copy / "registry.yaml",
        'citation: "Chenchen Zhang. Reinforcement Learning for LLM-based Multi-Agent Systems through '
        'Orchestration Traces. arXiv:2605.02801v1, 2026."',
        'citation: "@article{zhang2026,\\n  title = {Reinforcement Learning '
        '<b>for</b> LLM-based Multi-Agent Systems},\\n  year = {2026}\\n}"',
    )
    assert run("build", "--out", str(tmp_path / "site"), cwd=pool_copy).exit_code == 0
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    # the latest date_added or change of any record: the citations by venue of 2026-11-29
    assert (
        '<p>The survey: <a href="https://arxiv.org/abs/2605.02801v1">arXiv 2605.02801v1</a> · '
        '<a href="https://github.com/example/pool">repository</a> · '
        '<a href="https://github.com/example/pool/issues/new">suggest a paper</a> · '
        "Pool last changed: 2026-11-29 (the latest day a record entered the pool or was changed, as the records say)</p>"
    ) in home
    # issue 37: "all hold" beside changed values said which count holds only on another page
    said = (
        "15 claims: all hold, 14 published ones counted over the pool as of May 4, 2026 (arXiv 2605.02801v1) and 1 live one counted now; "
        "2 published claims have a different value now."
    )
    assert f'<a href="claims.html">{said}</a>' in home
    assert f"<p>{said}</p>" in (tmp_path / "site" / "claims.html").read_text(encoding="utf-8")
    block = home.split('id="cite-this-survey"')[1].split("</code>")[0]
    assert html.unescape(re.sub(r"<[^>]+>", "", block.split("<code>")[1])) == (
        "@article{zhang2026,\n  title = {Reinforcement Learning <b>for</b> LLM-based Multi-Agent Systems},\n  year = {2026}\n}\n"
    )
    assert "<b>for</b>" not in block  # shown as text


@pytest.mark.parametrize("given", ["mkdocs.yml", "--site-url", "PAPERPOOL_SITE_URL"])
def test_with_site_url_the_sitemap_lists_every_page_and_the_feed_links_are_absolute(tmp_path, run, monkeypatch, given):
    """From mkdocs.yml, or at build time (CI knows where Pages publishes only as it deploys)."""
    root = hostile_pool(tmp_path / "pool")
    url = "https://example.org/tiny/"
    if given == "mkdocs.yml":  # the site's name is the registry's, so mkdocs.yml has only the address
        (root / "mkdocs.yml").write_text(f'site_url: "{url}"\n', encoding="utf-8")
    if given == "PAPERPOOL_SITE_URL":
        monkeypatch.setenv(given, url)
    site = tmp_path / "site"
    assert run("build", "--out", str(site), *(["--site-url", url] if given == "--site-url" else []), cwd=root).exit_code == 0
    sitemap = ET.parse(site / "sitemap.xml").getroot()
    listed = sorted(loc.text for loc in sitemap.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc"))
    pages = sorted(
        f"https://example.org/tiny/{path.relative_to(site).as_posix()}"
        for path in site.rglob("*.html")
        if path.name != "404.html"
    )
    assert listed == pages and len(pages) >= 30
    feed = ET.parse(site / "feed.xml").getroot()
    hrefs = [link.get("href") for link in feed.iter("{http://www.w3.org/2005/Atom}link")]
    assert hrefs and all(href.startswith("https://") for href in hrefs)
    assert (
        '<link rel="alternate" type="application/atom+xml" title="A tiny survey of tool-using agents: recently added" '
        'href="https://example.org/tiny/feed.xml">' in (site / "entries" / "alpha.html").read_text(encoding="utf-8")
    )


def test_a_site_url_that_is_not_a_web_address_is_refused(tmp_path, run):
    root = hostile_pool(tmp_path / "pool")
    result = run("build", "--out", str(tmp_path / "site"), "--site-url", "javascript:alert(1)", cwd=root)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: --site-url: 'javascript:alert(1)' is not an http(s) address; give the "
            "address the site will be published at, such as "
            "https://owner.github.io/repository/\n"
        ),
    )
    assert not (tmp_path / "site").exists()


def test_an_entry_without_its_optional_authors_is_built(tiny, tmp_path, run):
    """A registry whose authors field is optional: an entry without authors (a source
    list that names none) gets its page, with no author line."""
    edit(tiny / "registry.yaml", "authors: {type: text_list, required: true}", "authors: {type: text_list}")
    edit(tiny / "papers" / "alpha.yaml", 'authors: ["Ames, Ann", "Bell, Bo"]\n', "")
    kept = tmp_path / "pages"
    result = run("build", "--out", str(tmp_path / "site"), "--keep-pages", str(kept), cwd=tiny)
    assert result.exit_code == 0, result.output
    page = next(kept.rglob("alpha.md")).read_text(encoding="utf-8")
    assert "# Alpha: learning to split tasks\n\n(2025)\n" in page and "Ames" not in page


def test_a_browse_data_set_is_written_record_by_record_within_its_size():
    """The data script is what json.dumps writes of the whole, built record by record; past
    MAX_DATA_BYTES it is refused before the rest is built (issue 39's fresh review: 700 kB
    of records whose values had 2,000-character labels made an exclusions.js of 1.2 GB)."""
    import json as _json

    from paperpool.files.problems import PaperpoolError
    from paperpool.sitegen import datasets

    data = {
        "noun": ["entry", "entries"],
        "facets": [],
        "records": [{"key": f"k{i}", "cells": {"t": "é<" * i}} for i in range(50)],
    }
    expected = _json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")
    assert (
        datasets.script("entries", data)
        == f'window.paperpoolData=window.paperpoolData||{{}};\nwindow.paperpoolData["entries"]={expected};\n'
    )
    label = "é" * 2000
    big = {
        "noun": ["exclusion", "exclusions"],
        "records": [{"key": f"x{i}", "cells": {"tags": [label] * 100}} for i in range(500)],
    }
    with pytest.raises(PaperpoolError) as refused:
        datasets.script("exclusions", big)
    assert str(refused.value).startswith("the Browse pages' data passes 64 MB at the exclusions' x")
