"""The site's search (Pagefind) in a real headless Chromium over http, and opened from
disk: stemmed words, authors and tags find their pages, the hostile entry shows as text,
and from disk the search says it needs the served site and loads nothing.

The pool is the hostile tiny pool with three entries that delegate (in their words and
a tag of their own); what each search must find is read off the built pages, not off
Pagefind's index.
"""

from __future__ import annotations

import gzip
import html
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from playwright.sync_api import Page, expect

from paperpool.cli.commands import cli
from paperpool.pool.reading import require_pool
from paperpool.sitegen import engine, search

from ..conftest import TINY, edit
from .browsing import WIDTHS, Site, assert_not_poisoned, built_and_served
from .pools import HOSTILE_TITLE, hostile_pool

pytestmark = pytest.mark.browser

# the browser tests' browser and tab, which open the pages of this module's `site`

OPEN = ".pp-search-open"
INPUT = ".pagefind-ui__search-input"
STATE = ".pp-search__body[data-pp-search-state]"
# the three entries that delegate; `auction`, a method of their own, is the tag searched for
DELEGATING = {
    "okonkwo2025": (
        "Learning whom to ask",
        ["Okonkwo, Adaeze", "Bell, Bo"],
        "auction",
        "The orchestrator delegates each sub-task to a specialist agent.",
    ),
    "lindqvist2024": (
        "Routing work by bids",
        ["Lindqvist, Maja"],
        "auction",
        "Sub-tasks are delegated by auction among the agents.",
    ),
    "delegation2026": ("Delegation without training", ["Abara, Chi"], "rl", "Hands whole tasks to one worker."),
}
# the words Pagefind reduces to the stem of "delegation": every word starting "deleg"
DELEG = re.compile(r"\bdeleg\w*", re.IGNORECASE)


def delegating_pool(root: Path) -> Path:
    hostile_pool(root)
    edit(
        root / "registry.yaml",
        '      - {id: search, label: "Search"}\n',
        '      - {id: search, label: "Search"}\n      - {id: auction, label: "Auction"}\n',
    )
    for key, (title, authors, method, summary) in DELEGATING.items():
        (root / "papers" / f"{key}.yaml").write_text(
            f"key: {key}\ntitle: {title}\nauthors: {authors}\nyear: 2025\nurls: ['https://example.org/{key}']\n"
            f"method: {method}\nunit: agent\nsummary: {summary}\n",
            encoding="utf-8",
        )
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The pool built once and served over http on 127.0.0.1 (the `tab` fixture of
    test_browser opens pages of this site)."""
    base = tmp_path_factory.mktemp("search")
    with built_and_served(delegating_pool(base / "pool"), base / "site") as site:
        yield site


# ---------------------------------------------------------------------------------
# What a search must find, read off the built pages
# ---------------------------------------------------------------------------------


def content(page: Path) -> str:
    """A built page's content as text: its article (what the search indexes), without
    the permalink marks and tags."""
    text = page.read_text(encoding="utf-8")
    article = re.search(r'<article class="md-content__inner[^"]*">(.*?)</article>', text, re.DOTALL)
    body = re.sub(r'<a class="headerlink"[^>]*>.*?</a>', "", article.group(1) if article else "", flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def pages_matching(site: Site, pattern: re.Pattern) -> set[str]:
    return {path.relative_to(site.folder).as_posix() for path in site.folder.rglob("*.html") if pattern.search(content(path))}


def search_for(page: Page, words: str, root: str) -> list[str]:
    """Type into the header's search and return every result's page, relative to the
    site's `root` address, in the order shown, after loading all of them."""
    page.locator(OPEN).click()
    page.locator(INPUT).press_sequentially(words)
    summary = page.locator(".pagefind-ui__message")  # "Searching for ...", then "N results for ..."
    expect(summary).to_have_text(re.compile(rf"^(\d+ results?|No results) for {re.escape(words)}$"))
    more = page.locator(".pagefind-ui__button")  # "Load more results", while there are more
    while more.count() and more.is_visible():
        more.click()
    total = int(summary.text_content().split()[0]) if summary.text_content()[0].isdigit() else 0
    links = page.locator(".pagefind-ui__result-link")
    expect(links).to_have_count(total)
    return [href.removeprefix(root) for href in links.evaluate_all("links => links.map(l => l.href)")]


# ---------------------------------------------------------------------------------
# What the build writes
# ---------------------------------------------------------------------------------


def test_the_build_writes_pagefinds_index_and_no_engine_index(site):
    index = site.folder / search.INDEX
    assert (index / "pagefind.js").is_file() and (index / "pagefind-ui.js").is_file()
    assert list(index.glob("fragment/*.pf_fragment")) and list(index.glob("*.pf_meta"))
    assert not (site.folder / "search").exists() and not (site.folder / "search.json").exists()
    home = (site.folder / "index.html").read_text(encoding="utf-8")
    assert "search_index" not in home and 'data-md-component="search"' not in home
    assert "assets/paperpool/search.js" in home


@pytest.mark.parametrize("plugins", [None, ["search"], [{"search": {"lang": "de"}}, "tags"], {"search": None, "offline": {}}])
def test_the_engines_search_is_turned_off_whatever_mkdocs_yml_says(tmp_path, plugins):
    config = {"plugins": plugins} if plugins is not None else {}
    built = engine.site_config(config, tmp_path, tmp_path / "docs", tmp_path / "site", [], [])
    assert built["plugins"][-1] == {"search": {"enabled": False}}
    others = [item for item in built["plugins"][:-1] if item != "search" and "search" not in item]
    assert len(others) == len(built["plugins"]) - 1  # the pool's search settings are dropped, its other plugins kept


def test_zensical_builds_the_same_search(tmp_path):
    folder = tmp_path / "site"
    result = CliRunner().invoke(cli, ["--root", str(TINY), "build", "--engine", "zensical", "--out", str(folder)])
    assert result.exit_code == 0, result.output
    assert (folder / search.INDEX / "pagefind.js").is_file()
    assert not (folder / "search.json").exists() and not (folder / "search").exists()
    assert "assets/paperpool/search.js" in (folder / "index.html").read_text(encoding="utf-8")


def test_a_pagefind_yml_of_the_pool_changes_nothing(tmp_path, monkeypatch):
    # Pagefind reads pagefind.yml from its working folder: paperpool runs it in the
    # build's scratch folder, so a pool's file (here, where the build is started) is never read
    root = tmp_path / "pool"
    shutil.copytree(TINY, root)
    for folder in (root, root / "site"):
        folder.mkdir(exist_ok=True)
        (folder / "pagefind.yml").write_text(
            "output_subdir: hijacked\nroot_selector: footer\nexclude_selectors: [h1]\n", encoding="utf-8"
        )
    monkeypatch.chdir(root)
    folder = tmp_path / "site"
    result = CliRunner().invoke(cli, ["--root", str(root), "build", "--out", str(folder)])
    assert result.exit_code == 0, result.output
    assert not list(tmp_path.rglob("hijacked")) and (folder / search.INDEX / "pagefind.js").is_file()
    fragments = [gzip.decompress(path.read_bytes()) for path in (folder / search.INDEX).glob("fragment/*.pf_fragment")]
    assert any(b"Alpha: learning to split tasks" in fragment for fragment in fragments)


# ---------------------------------------------------------------------------------
# Over http
# ---------------------------------------------------------------------------------


def test_delegation_finds_every_page_that_says_delegate_or_delegated(tab, site):
    expected = pages_matching(site, DELEG)
    # every delegating entry, whichever form of the word it uses, and trace pages' "Delegate"
    assert {f"entries/{key}.html" for key in DELEGATING} <= expected
    page = tab.open("index.html")
    assert sorted(search_for(page, "delegation", site.url)) == sorted(expected)
    assert tab.problems == []


def test_an_authors_surname_finds_their_entry_first(tab, site):
    page = tab.open("browse.html")
    found = search_for(page, "Lindqvist", site.url)
    assert found[0] == "entries/lindqvist2024.html"
    assert set(found) == pages_matching(site, re.compile(r"\bLindqvist\b"))


def test_a_tag_finds_the_entries_that_carry_it(tab, site):
    tagged = {
        f"entries/{key}.html"
        for key, data in ((entry.key, entry.data) for entry in require_pool(site.root).entries)
        if data["method"] == "auction"
    }
    assert len(tagged) == 2
    page = tab.open("entries/delegation2026.html")
    found = search_for(page, "Auction", site.url)
    assert {path for path in found if path.startswith("entries/")} == tagged
    assert "axes/method/auction.html" in found  # the tag's own page


def test_slash_opens_the_search_and_escape_closes_it(tab):
    page = tab.open("statistics.html")
    page.keyboard.press("/")
    expect(page.locator(INPUT)).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("dialog.pp-search")).not_to_be_visible()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_search_opens_from_the_header_on_a_phone_and_a_desktop(tab, width):
    tab.page.set_viewport_size(WIDTHS[width])
    page = tab.open("recent.html")
    button = page.locator(f".md-header {OPEN}")
    expect(button).to_be_visible()
    button.click()
    dialog = page.locator("dialog.pp-search")
    expect(dialog).to_be_visible()
    box = dialog.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTHS[width]["width"]
    if width == "phone":
        assert box["width"] == WIDTHS[width]["width"]  # the whole screen
    expect(page.locator(INPUT)).to_be_focused()


def test_the_hostile_entry_shows_as_text_in_the_results(tab, site):
    page = tab.open("index.html")
    assert "entries/hostile.html" in search_for(page, "onerror", site.url)
    result = page.locator('.pagefind-ui__result-link[href$="entries/hostile.html"]')
    assert HOSTILE_TITLE.split("<img")[0] in result.text_content()  # the script tag, as text
    # the excerpt is written as HTML: Pagefind escapes the page's text, so only its marks are elements
    excerpt = page.locator(".pagefind-ui__result:has(a[href$='entries/hostile.html']) .pagefind-ui__result-excerpt")
    assert "window.pwned" in excerpt.text_content()
    assert set(excerpt.evaluate("e => Array.from(e.querySelectorAll('*')).map(n => n.tagName)")) <= {"MARK"}
    assert_not_poisoned(page)
    assert tab.problems == []


# ---------------------------------------------------------------------------------
# From disk
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["index.html", "entries/okonkwo2025.html", "browse.html"])
def test_from_disk_the_search_says_it_needs_the_served_site_and_loads_nothing(tab, site, path):
    requests = []
    tab.page.on("request", lambda request: requests.append(request.url))
    page = tab.page
    page.goto((site.folder / path).as_uri())
    page.wait_for_load_state("load")
    page.locator(OPEN).click()
    message = page.locator(f"{STATE.replace(']', '=offline]')} .pp-search__message").first
    expect(message).to_be_visible()
    assert "paperpool serve" in message.text_content() and "http://127.0.0.1:8000/" in message.text_content()
    assert page.get_by_text("Initializing search").count() == 0
    page.wait_for_timeout(300)  # anything the search would load would have been asked for by now
    assert [url for url in requests if search.INDEX in url] == []
    # no failed load, no script error, but one that is not the search's: Material's script
    # fetches sitemap.xml beside each <link rel="alternate"> of a page (it means language
    # versions), and the feed's link in every page's head is one, so from disk that fetch fails
    assert [problem for problem in tab.problems if "/sitemap.xml" not in problem] == []
