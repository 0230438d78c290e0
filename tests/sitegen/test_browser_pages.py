"""The shipped pool's site in a real Chromium: long lists fold behind a short preview,
a gap table's empty cells are one compact list, wide tables fit or say that they scroll,
and axe-core finds no serious or critical violation on any kind of page, light or dark.

axe-core comes from npm at test time (scripts/test installs npm where it is missing);
the browser is the one tests/sitegen/test_browser.py drives.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from playwright.sync_api import Page

from paperpool.cli.commands import cli
from paperpool.sitegen.paths import cell_anchor

from ..conftest import REPO
from .browsing import WIDTHS, built_and_served, unavailable

pytestmark = pytest.mark.browser

AXE_VERSION = "4"
PREVIEW = 10  # the items a long list shows before its "Show all N"
SCHEMES = ("default", "slate")  # Material's light and dark palettes, switched by the header's toggle
# One page of each kind the site has (a trace corpus page only when the registry declares one).
PAGE_KINDS = {
    "home": "index.html",
    "browse": "browse.html",
    "entry": "entries/agent-lightning.html",
    "axis": "axes/category.html",
    "axis value": "axes/category/benchmark.html",
    "statistics": "statistics.html",
    "gaps": "gaps.html",
    "gap table": "gaps/family-unit.html",
    "claims": "claims.html",
    "exclusions": "exclusions.html",
    "recent": "recent.html",
    "downloads": "downloads.html",
    "traces": "traces.html",
    "trace corpus": "trace-corpora/who-and-when.html",
    "trace schema": "trace-schema.html",
    "contributing": "contributing.html",
    "registry reference": "registry.html",
}
WIDE_PAGES = (
    "statistics.html",
    "gaps.html",
    "gaps/family-unit.html",
    "gaps/scenario-family.html",
    "claims.html",
    "trace-corpora/who-and-when.html",
    "registry.html",
)
# Violations inside Material itself that paperpool cannot fix, as (rule id, selector of
# the first node): none today; each one added needs a comment saying why.
THEME_EXCLUSIONS: set[tuple[str, str]] = set()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The shipped pool built once and served on 127.0.0.1."""
    with built_and_served(REPO, tmp_path_factory.mktemp("pages") / "site") as site:
        yield site


@pytest.fixture(scope="module")
def claims(site) -> dict[str, dict]:
    """Each claim with `count`, the records behind it (as `paperpool claims` computes them)."""
    return {claim["id"]: claim | {"count": len(claim["rows"])} for claim in _json("claims", "--format", "json")}


@pytest.fixture(scope="module")
def gap_tables(site) -> dict[str, dict]:
    return {table["id"]: table for table in _json("gaps", "--format", "json")["tables"]}


def _json(*args: str):
    result = CliRunner().invoke(cli, ["--root", str(REPO), *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture(scope="session")
def axe_script(tmp_path_factory) -> str:
    """axe-core's axe.min.js, installed from npm into a temporary folder."""
    npm = shutil.which("npm")
    if npm is None:
        unavailable("npm is not installed: the accessibility tests install axe-core with it (scripts/test installs npm)")
    folder = tmp_path_factory.mktemp("axe")
    subprocess.run(
        [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--silent", f"axe-core@{AXE_VERSION}"],
        check=True,
        timeout=300,
    )
    return (folder / "node_modules" / "axe-core" / "axe.min.js").read_text(encoding="utf-8")


def _dark(page: Page) -> None:
    """Switch to the dark palette with the header's toggle, as a reader does."""
    page.locator("label[for='__palette_1']").click()
    page.wait_for_selector("body[data-md-color-scheme='slate']")


def _height(page: Page) -> int:
    return page.evaluate("document.documentElement.scrollHeight")


# ---------------------------------------------------------------------------------
# Long lists fold
# ---------------------------------------------------------------------------------


def _listed(page: Page, claim_id: str) -> tuple[int, int, str]:
    """The records a claim's section lists: (shown, folded away, the fold's summary)."""
    return page.evaluate(
        """id => {
        const heading = document.getElementById('claim-' + id);
        let shown = 0, folded = 0, summary = '';
        for (let node = heading.nextElementSibling; node && node.tagName !== 'H2'; node = node.nextElementSibling) {
            if (node.matches('ul.pp-list')) shown += node.children.length;
            if (node.matches('details.pp-more')) {
                folded += node.querySelectorAll('li').length;
                summary = node.querySelector('summary').textContent;
            }
        }
        return [shown, folded, summary];
    }""",
        claim_id,
    )


def test_a_claim_shows_its_first_records_and_folds_the_rest(tab, claims):
    page = tab.open("claims.html")
    long = [claim for claim in claims.values() if claim["count"] > PREVIEW]
    assert long, "the shipped ledger has claims with long record lists"
    for claim in claims.values():
        shown, folded, summary = _listed(page, claim["id"])
        assert shown + folded == claim["count"], claim["id"]
        assert shown == min(claim["count"], PREVIEW), claim["id"]
        if folded:
            assert summary.startswith(f"Show all {claim['count']} rows ({folded} more)"), summary
    # every fold is closed: the page is much shorter than with the lists open
    assert page.locator("details.pp-more[open]").count() == 0
    closed = _height(page)
    page.evaluate("document.querySelectorAll('details.pp-more').forEach(d => d.open = true)")
    assert closed < 0.75 * _height(page)


def test_show_all_opens_by_keyboard(tab, claims):
    page = tab.open("claims.html")
    first = next(claim for claim in claims.values() if claim["count"] > PREVIEW)  # in the ledger's order, as the page
    # the first claim's fold (the "since publication" list above the claims folds too)
    summary = page.locator(f"#claim-{first['id']} ~ details.pp-more > summary").first
    items = summary.locator("xpath=..").locator("li")
    assert not items.first.is_visible()
    page.keyboard.press("Tab")  # into the page, then on to the summary as a reader tabbing would
    summary.focus()
    page.keyboard.press("Enter")
    assert items.first.is_visible() and items.last.is_visible()
    assert items.count() == first["count"] - PREVIEW
    page.keyboard.press("Enter")
    assert not items.first.is_visible()


def test_a_gap_table_lists_its_empty_cells_compactly(tab, gap_tables):
    for table in gap_tables.values():
        page = tab.open(f"gaps/{table['id']}.html")
        empty = {
            cell_anchor(row, col)
            for row, cells in table["cells"].items()
            for col, cell in cells.items()
            if cell["mark"] == "empty"
        }
        compact = set(page.locator("ul.pp-gap-list .pp-gap-cell").evaluate_all("cells => cells.map(c => c.id)"))
        headed = set(page.locator("h3[id^='cell-']").evaluate_all("hs => hs.map(h => h.id)"))
        assert compact <= empty
        # an empty cell has a section of its own only when its history has something to say
        assert compact | (headed & empty) == empty, table["id"]
        assert not compact & headed
        if empty:
            assert page.get_by_role("heading", name="No entries: the gaps").count() == (1 if compact else 0)
        # a filled cell lists its first entries, the rest folded
        lists = page.locator(":not(details) > ul.pp-list").evaluate_all("uls => uls.map(u => u.children.length)")
        assert all(n <= PREVIEW for n in lists)


def test_the_gap_table_is_shorter_than_a_section_per_cell(tab, gap_tables):
    """The page of the largest table: one line per row of empty cells, not a heading each."""
    table = max(
        gap_tables.values(), key=lambda t: sum(c["mark"] == "empty" for cells in t["cells"].values() for c in cells.values())
    )
    page = tab.open(f"gaps/{table['id']}.html")
    empty = sum(c["mark"] == "empty" for cells in table["cells"].values() for c in cells.values())
    rows_with_gaps = sum(any(c["mark"] == "empty" for c in cells.values()) for cells in table["cells"].values())
    assert page.locator("ul.pp-gap-list > li").count() <= rows_with_gaps < empty


# ---------------------------------------------------------------------------------
# Wide tables fit or say that they scroll
# ---------------------------------------------------------------------------------

TABLES = """() => [...document.querySelectorAll('article table')].filter(t => t.checkVisibility()).map(t => {
    const region = t.closest('.pp-scroll'), scroller = region || t.closest('.md-typeset__scrollwrap') || t;
    const hint = region && region.parentElement.querySelector('.pp-scroll-hint');
    // a markdown table Material wraps says it with its wrapper's ::after (site.css)
    const after = !region && t.closest('.md-typeset__table') && getComputedStyle(t.closest('.md-typeset__table'), '::after');
    return {name: region ? region.getAttribute('aria-label') : t.rows[0].textContent.trim().slice(0, 60),
            overflows: scroller.scrollWidth > scroller.clientWidth + 1,
            region: !!region && region.getAttribute('role') === 'region' && region.tabIndex === 0 && !!region.getAttribute('aria-label'),
            hint: region ? !!hint && hint.getBoundingClientRect().height > 0 && getComputedStyle(hint).visibility === 'visible'
                         : !!after && after.content !== 'none' && after.visibility === 'visible' && after.height !== '0px',
            wrapped: !region};
})"""


@pytest.mark.parametrize("path", WIDE_PAGES)
@pytest.mark.parametrize("width", [1280, 390])
def test_a_wide_table_fits_or_says_it_scrolls(tab, path, width):
    page = tab.page
    page.set_viewport_size({"width": width, "height": 900})
    tab.open(path)
    tables = page.evaluate(TABLES)
    assert tables
    for table in tables:
        if width == 1280 and path != "trace-corpora/who-and-when.html":
            assert not table["overflows"], f"{path}: {table['name']} does not fit at 1280 px"
        if table["overflows"]:
            assert table["region"] or table["wrapped"], f"{path}: {table['name']} scrolls, not in a named region"
            assert table["hint"], f"{path}: {table['name']} scrolls without saying so"
        elif table["region"]:
            assert not table["hint"], f"{path}: {table['name']} fits yet says it scrolls"


def test_on_a_phone_the_cross_tabulations_say_they_scroll(tab):
    page = tab.page
    page.set_viewport_size({"width": 390, "height": 844})
    tab.open("statistics.html")
    tables = [t for t in page.evaluate(TABLES) if t["overflows"]]
    assert any(t["region"] for t in tables), "some cross-tabulation is wider than a phone"
    assert [t for t in tables if not t["hint"]] == []


# ---------------------------------------------------------------------------------
# axe-core on every kind of page, light and dark
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("kind", PAGE_KINDS)
def test_axe_finds_no_serious_violation(tab, site, axe_script, kind, scheme, width):
    """At both widths, with every fold open: what a reader reaches by a click is checked too."""
    path = PAGE_KINDS[kind]
    if not (site.folder / path).is_file():
        pytest.fail(f"no {kind} page at {path}: the site changed, name another page of that kind")
    tab.page.set_viewport_size(WIDTHS[width])
    page = tab.open(path)
    page.wait_for_load_state("networkidle")
    if scheme == "slate":
        _dark(page)
    page.evaluate("document.querySelectorAll('details').forEach(fold => { fold.open = true; })")
    page.add_script_tag(content=axe_script)
    violations = page.evaluate("axe.run(document, {resultTypes: ['violations']}).then(r => r.violations)")
    found = [
        f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']} and {len(v['nodes']) - 1} more; {v['help']}"
        for v in violations
        if v["impact"] in ("serious", "critical")
        and (v["id"], " ".join(map(str, v["nodes"][0]["target"]))) not in THEME_EXCLUSIONS
    ]
    assert not found, f"axe on {path} ({scheme}):\n" + "\n".join(found)


def test_the_axe_pages_cover_every_page_kind(site):
    """A new kind of page must be added to PAGE_KINDS: every top-level page is one of them."""
    top = {p.name for p in Path(site.folder).glob("*.html") if p.name != "404.html"}
    assert top <= set(PAGE_KINDS.values()), top - set(PAGE_KINDS.values())
