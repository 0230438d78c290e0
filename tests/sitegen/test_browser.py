"""The built site in a real headless Chromium: pages load cleanly and offline, the
faceted browser selects exactly what the data (through paperpool's own query language)
says, an entry page shows its BibTeX, and the hostile entry's markup never runs.

The browser is Debian's chromium driven by playwright (no browser download); set
PAPERPOOL_CHROMIUM to use another binary. A missing browser fails the module: these
tests are part of every run, never skipped.
"""

from __future__ import annotations

import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import bibtexparser
import pytest
import rispy
from bibtexparser import middlewares
from playwright.sync_api import Locator, Page, expect

from paperpool.analysis.frame import Frame, build_frames
from paperpool.pool.reading import require_pool
from paperpool.registry.query import parse
from paperpool.sitegen.section import effective

from .browsing import READY, SITE_URL, WIDTHS, Site, Tab, assert_not_poisoned, built_and_served
from .pools import HOSTILE_TITLE, flow_pool, hostile_pool

pytestmark = pytest.mark.browser

NAV_PAGES = ("browse", "statistics", "gaps", "claims", "exclusions", "recent", "downloads")
RESULTS = ".pp-browser .pp-results [data-key]"  # a table's rows on a wide screen, cards on a narrow one
# Where the hostile title is shown; gaps.html only counts, so only the script must not run there.
HOSTILE_PAGES = ("entries/hostile.html", "recent.html", "axes/unit/step.html", "gaps/method-unit.html")


# ---------------------------------------------------------------------------------
# One build, one server, one browser for the whole module
# ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The hostile tiny pool built once and served over HTTP on 127.0.0.1 (the search
    index and the data scripts need http://, not file://)."""
    base = tmp_path_factory.mktemp("browser")
    root = hostile_pool(base / "pool")
    # where the site would be published: the sitemap and the feed's links need it
    (root / "mkdocs.yml").write_text(f"site_url: {SITE_URL}\n", encoding="utf-8")
    with built_and_served(root, base / "site") as site:
        yield site


# ---------------------------------------------------------------------------------
# What the data says: the data file's facets, and the query language's answers
# ---------------------------------------------------------------------------------


def browser_data(site: Site, name: str) -> dict:
    script = (site.folder / "assets" / "paperpool" / "data" / f"{name}.js").read_text(encoding="utf-8")
    return json.loads(script.split(f'["{name}"]=', 1)[1].rstrip().rstrip(";"))


@pytest.fixture(scope="module")
def frames(site) -> dict[str, Frame]:
    return build_frames(require_pool(site.root))


@pytest.fixture(scope="module")
def records(site) -> dict[str, dict]:
    return {record.key: record.data for record in require_pool(site.root).entries}


def query(frame: Frame, text: str) -> list[str]:
    """The keys `text` selects, in paperpool's query language."""
    return sorted(frame.select(parse(text, frame.columns).tree))


def condition(selection: dict[str, list[str]], skip: str | None = None) -> str:
    """The query for a browser selection: values in a facet are OR-ed, facets AND-ed."""
    return " and ".join(
        "(" + " or ".join(f"{name} = {value}" for value in values) + ")"
        for name, values in selection.items()
        if values and name != skip
    )


def expected_counts(frame: Frame, data: dict, selection: dict[str, list[str]]) -> dict[tuple[str, str], int]:
    """What each value's count should read under a selection: how many records choosing
    that value would show, that is the other facets' selections and this value."""
    counts = {}
    for facet in data["facets"]:
        others = condition(selection, skip=facet["field"])
        for value in facet["values"]:
            this = f"{facet['field']} = {value['id']}"
            counts[facet["field"], value["id"]] = len(query(frame, f"{others} and {this}" if others else this))
    return counts


def words_of(text: str) -> list[str]:
    """Words as the free-text search splits them: letters and digits, case and accents folded."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()
    return re.findall(r"[^\W_]+", folded)


@pytest.fixture(scope="module")
def searched(site, records) -> dict[str, tuple[list[str], list[str]]]:
    """Each entry's words, computed from the YAML and the registry rather than the data
    file: (those of its title and authors, those of the rest: key, venue, summary and the
    labels of the values of the browser's columns)."""
    registry = require_pool(site.root).registry
    specs = registry.fields["entries"]

    def label(vocabulary, value):
        found = registry.vocabularies[vocabulary].get(value)
        return found.label if found else str(value)

    out = {}
    for key, data in records.items():
        rest = [key, str(data.get("venue") or ""), str(data.get("summary") or "")]
        for name in effective(registry)["browser"]["columns"]:
            spec, value = specs[name], data.get(name)
            if spec.type == "choice_map":
                rest += [f"{label(spec.keys, k)} {label(spec.vocabulary, mode)}" for k, mode in (value or {}).items()]
            elif spec.vocabulary:
                rest += [label(spec.vocabulary, v) for v in (value if isinstance(value, list) else [value]) if v is not None]
            elif value is not None:
                rest.append(str(value))
        out[key] = (words_of(" ".join([str(data["title"]), *data.get("authors", [])])), words_of(" ".join(rest)))
    return out


def text_matches(searched: dict, query: str) -> list[str]:
    """The entries where every word of the query starts a word: the browser's free text."""

    def holds(key, word):
        return any(w.startswith(word) for part in searched[key] for w in part)

    return sorted(key for key in searched if all(holds(key, word) for word in words_of(query)))


def newest_first(records: dict[str, dict], keys) -> list[str]:
    """The browser's default order: year, newest first, then title."""
    return sorted(keys, key=lambda key: (-records[key]["year"], str(records[key]["title"]).casefold()))


# ---------------------------------------------------------------------------------
# Reading the browser's state off the page
# ---------------------------------------------------------------------------------


def shown_keys(page: Page) -> list[str]:
    return page.locator(RESULTS).evaluate_all("rows => rows.map(row => row.dataset.key)")


def open_filters(page: Page) -> None:
    """Open the filter panel (a drawer on a phone) unless it is open."""
    toggle = page.locator("button.pp-filters-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    expect(page.locator("dialog.pp-panel")).to_be_visible()


def shown_counts(page: Page) -> dict[tuple[str, str], int]:
    values = page.locator("fieldset.pp-facet label.pp-value").evaluate_all(
        "labels => labels.map(l => [l.closest('fieldset').dataset.field, l.dataset.value, l.dataset.count,"
        " l.querySelector('.pp-count').textContent])"
    )
    # the attribute is for tests and styling, the text for readers: they must agree
    assert all(attribute == text for _, _, attribute, text in values), values
    return {(name, value): int(count) for name, value, count, _ in values}


def checked_values(page: Page) -> dict[str, list[str]]:
    values = page.locator("fieldset.pp-facet label.pp-value:has(input:checked)").evaluate_all(
        "labels => labels.map(l => [l.closest('fieldset').dataset.field, l.dataset.value])"
    )
    chosen: dict[str, list[str]] = {}
    for name, value in values:
        chosen.setdefault(name, []).append(value)
    return chosen


def checkbox(page: Page, name: str, value: str) -> Locator:
    open_filters(page)
    return page.locator(f'fieldset.pp-facet[data-field="{name}"] label.pp-value[data-value="{value}"] input[type=checkbox]')


def expect_shown(page: Page, keys: list[str], total: int) -> None:
    """The table lists exactly `keys` (in any order) and the summary says so; waits out
    the debounce of the text and range inputs."""
    summary = page.locator("p.pp-total")
    expect(summary).to_have_attribute("data-shown", str(len(keys)))
    expect(summary).to_have_attribute("data-total", str(total))
    assert summary.text_content().startswith(f"Showing {len(keys)} of {total} ")  # what a reader sees
    assert sorted(shown_keys(page)) == keys


def heading(page: Page) -> str:
    """The page's h1 as text, without mkdocs' permalink mark."""
    return page.locator("h1").first.evaluate(
        "h => Array.from(h.childNodes).filter(n => !(n.classList && n.classList.contains('headerlink')))"
        ".map(n => n.textContent).join('')"
    )


# ---------------------------------------------------------------------------------
# Pages load
# ---------------------------------------------------------------------------------


def test_home_page_loads_without_errors_or_outside_requests(tab, site):
    page = tab.open("index.html")
    assert page.title() == "Home - A tiny survey of tool-using agents"  # the registry's survey.title
    assert heading(page) == require_pool(site.root).registry.survey["title"]
    page.wait_for_load_state("networkidle")  # charts and fonts included
    assert tab.problems == []
    assert tab.outside == []


def test_every_page_in_the_navigation_loads_without_errors(tab):
    page = tab.open("index.html")
    links = page.locator(".md-nav--primary a.md-nav__link[href]").evaluate_all("links => links.map(a => a.href)")
    pages = sorted({link.split("#")[0] for link in links})
    assert {tab.url + f"{name}.html" for name in NAV_PAGES} <= set(pages)
    for url in pages:
        page.goto(url)  # returns after the load event: images and scripts have run or failed
        if page.locator(".pp-browser").count():
            page.locator(READY).wait_for()
        assert heading(page).strip(), url
        assert tab.problems == [], url


# ---------------------------------------------------------------------------------
# The faceted browser against the query language
# ---------------------------------------------------------------------------------


def check_each_facet_value(page: Page, data: dict, frame: Frame) -> None:
    """Choose every value of every facet alone: its count beforehand, the rows and the
    summary it gives, and every facet's counts under it are the query language's."""
    total = len(data["records"])
    assert shown_counts(page) == expected_counts(frame, data, {})
    assert sorted(shown_keys(page)) == sorted(r["key"] for r in data["records"])
    for facet in data["facets"]:
        name = facet["field"]
        for value in (v["id"] for v in facet["values"]):
            keys = query(frame, f"{name} = {value}")
            assert shown_counts(page)[name, value] == len(keys), (name, value)
            checkbox(page, name, value).check()
            expect_shown(page, keys, total)
            assert shown_counts(page) == expected_counts(frame, data, {name: [value]}), (name, value)
            checkbox(page, name, value).uncheck()
            expect_shown(page, sorted(r["key"] for r in data["records"]), total)


def test_each_facet_value_shows_what_the_query_language_selects(tab, site, frames):
    data = browser_data(site, "entries")
    page = tab.open_browser("browse.html")
    shown_facets = {(name, value) for name, value in shown_counts(page)}
    assert shown_facets == {(f["field"], v["id"]) for f in data["facets"] for v in f["values"]}
    check_each_facet_value(page, data, frames["entries"])
    assert tab.problems == []


def test_values_of_one_facet_are_or_ed_and_facets_and_ed(tab, site, frames):
    data, frame = browser_data(site, "entries"), frames["entries"]
    total = len(data["records"])
    page = tab.open_browser("browse.html")
    checkbox(page, "method", "rl").check()
    checkbox(page, "method", "search").check()
    expect_shown(page, query(frame, "method = rl or method = search"), total)
    assert shown_counts(page) == expected_counts(frame, data, {"method": ["rl", "search"]})

    checkbox(page, "unit", "step").check()
    keys = query(frame, "(method = rl or method = search) and unit = step")
    assert keys  # the tiny pool has such entries: an empty table would prove little
    expect_shown(page, keys, total)
    assert shown_counts(page) == expected_counts(frame, data, {"method": ["rl", "search"], "unit": ["step"]})

    page.locator("button.pp-clear").click()
    expect_shown(page, query(frame, ""), total)
    assert checked_values(page) == {}
    assert shown_counts(page) == expected_counts(frame, data, {})


def test_year_range_filters_to_the_years_asked_for(tab, site, frames):
    frame, total = frames["entries"], len(browser_data(site, "entries")["records"])
    page = tab.open_browser("browse.html")
    open_filters(page)
    year = page.locator('fieldset.pp-range[data-field="year"]')
    year.locator("input.pp-range-from").fill("2025")
    year.locator("input.pp-range-to").fill("2025")
    expect_shown(page, query(frame, "year >= 2025 and year <= 2025"), total)
    year.locator("input.pp-range-to").fill("")  # open-ended: from 2025 on
    expect_shown(page, query(frame, "year >= 2025"), total)
    year.locator("input.pp-range-from").fill("")
    year.locator("input.pp-range-to").fill("2024")
    expect_shown(page, query(frame, "year <= 2024"), total)


@pytest.mark.parametrize("words", ["split", "SPLIT prompt", "pwned", "no such word", "li", "Li link", "spl tas", "step"])
def test_free_text_keeps_entries_where_every_word_starts_a_word(tab, records, searched, words):
    page = tab.open_browser("browse.html")
    page.locator("input.pp-q").fill(words)
    expect_shown(page, text_matches(searched, words), len(records))
    if not text_matches(searched, words):
        expect(page.locator("p.pp-empty")).to_be_visible()


def test_a_word_inside_another_word_is_no_match(tab, records, searched):
    # "li" is inside "split" (alpha's title) but starts no word of alpha's
    assert "alpha" not in text_matches(searched, "li") and "li" in str(records["alpha"]["title"]).lower()
    page = tab.open_browser("browse.html")
    page.locator("input.pp-q").fill("li")
    expect_shown(page, text_matches(searched, "li"), len(records))


def test_a_surname_finds_that_authors_entries(tab, records, searched):
    page = tab.open_browser("browse.html")
    surnames = sorted(
        {
            author.split(",")[0]
            for data in records.values()
            for author in data["authors"]
            if re.fullmatch(r"\w+", author.split(",")[0])
        }
    )
    assert len(surnames) > 3
    for surname in surnames:
        page.locator("input.pp-q").fill(surname)
        expect(page).to_have_url(re.compile(f"#q={surname}$"))  # this search is applied, not the last one
        authored = {key for key, data in records.items() if any(a.startswith(surname + ",") for a in data["authors"])}
        expect_shown(page, text_matches(searched, surname), len(records))
        assert authored and authored <= set(shown_keys(page)), surname


@pytest.mark.parametrize("words", ["step", "split", "s"])
def test_title_and_author_matches_rank_first(tab, records, searched, words):
    """Best match: the entries matching in their title or authors first, then the others,
    each group newest first then by title."""

    def in_title_or_authors(key):
        return all(any(w.startswith(word) for w in searched[key][0]) for word in words_of(words))

    keys = text_matches(searched, words)
    first = [key for key in keys if in_title_or_authors(key)]
    page = tab.open_browser("browse.html")
    page.locator("input.pp-q").fill(words)
    expect_shown(page, keys, len(records))
    shown = shown_keys(page)
    assert set(shown[: len(first)]) == set(first), (shown, first)
    expect(page.locator("select.pp-order")).to_have_value("relevance")


def test_the_default_order_is_newest_first_then_title(tab, records):
    page = tab.open_browser("browse.html")
    assert shown_keys(page) == newest_first(records, records)
    expect(page.locator('table.pp-table th[data-field="year"]')).to_have_attribute("aria-sort", "descending")
    expect(page.locator("select.pp-order")).to_have_value("year-desc")
    assert "sort" not in urlsplit(page.url).fragment


def test_sorting_by_year_orders_the_rows_and_marks_the_column(tab, records):
    page = tab.open_browser("browse.html")
    header = page.locator('table.pp-table th[data-field="year"]')
    header.locator("button.pp-sort").click()  # the default is newest first: the first click turns it
    expect(header).to_have_attribute("aria-sort", "ascending")
    # ties in the default order: by title
    assert shown_keys(page) == sorted(records, key=lambda key: (records[key]["year"], str(records[key]["title"]).casefold()))
    header.locator("button.pp-sort").click()
    expect(header).to_have_attribute("aria-sort", "descending")
    assert shown_keys(page) == newest_first(records, records)
    assert page.locator("table.pp-table th[aria-sort]").count() == 1


@pytest.mark.parametrize("width", WIDTHS)
def test_choosing_another_order_sorts_the_results(tab, records, width):
    page = tab.open_browser("browse.html")
    page.set_viewport_size(WIDTHS[width])
    page.locator("select.pp-order").select_option("title-asc")
    assert shown_keys(page) == sorted(records, key=lambda key: str(records[key]["title"]).casefold())
    assert parse_qs(urlsplit(page.url).fragment) == {"sort": ["title-asc"]}
    page.locator("select.pp-order").select_option("year-asc")
    assert [records[key]["year"] for key in shown_keys(page)] == sorted(data["year"] for data in records.values())


def test_the_url_holds_the_selection_and_reopens_it(tab, site, frames, records, searched):
    frame, total = frames["entries"], len(records)
    page = tab.open_browser("browse.html")
    checkbox(page, "method", "rl").check()
    checkbox(page, "method", "search").check()
    page.locator("input.pp-range-from").fill("2025")
    page.locator("input.pp-range-to").fill("2026")
    page.locator("input.pp-q").fill("reward")
    keys = sorted(
        set(query(frame, "(method = rl or method = search) and year >= 2025 and year <= 2026"))
        & set(text_matches(searched, "reward"))
    )
    assert len(keys) > 1  # enough rows for the order to mean something
    # Sort straight after typing: the press that leaves the search box re-filters the
    # table and moves the columns, and the sort must still land on the column pressed.
    page.locator('th[data-field="year"] button.pp-sort').click()
    page.locator('th[data-field="year"] button.pp-sort').click()
    rows = shown_keys(page)
    assert rows == newest_first(records, keys)
    assert parse_qs(urlsplit(page.url).fragment) == {
        "method": ["rl,search"],
        "year": ["2025-2026"],
        "q": ["reward"],
        "sort": ["year-desc"],
    }

    reopened = tab.open_browser(page.url.removeprefix(tab.url), page=tab.context.new_page())
    assert checked_values(reopened) == {"method": ["rl", "search"]}
    assert reopened.locator("input.pp-range-from").input_value() == "2025"
    assert reopened.locator("input.pp-range-to").input_value() == "2026"
    assert reopened.locator("input.pp-q").input_value() == "reward"
    expect(reopened.locator('th[data-field="year"]')).to_have_attribute("aria-sort", "descending")
    expect_shown(reopened, keys, total)
    assert shown_keys(reopened) == rows
    assert shown_counts(reopened) == shown_counts(page)
    assert tab.problems == []


def test_the_download_is_the_selection_as_bibtex(tab, frames, records):
    page = tab.open_browser("browse.html")
    checkbox(page, "method", "search").check()  # includes the hostile entry: its title must survive
    keys = query(frames["entries"], "method = search")
    expect_shown(page, keys, len(records))
    button = page.locator("button.pp-download")
    expect(button).to_have_attribute("data-count", str(len(keys)))
    with page.expect_download() as download_info:
        button.click()
    download = download_info.value
    assert download.suggested_filename.endswith(".bib")
    library = bibtexparser.parse_string(
        Path(download.path()).read_text(encoding="utf-8"), append_middleware=[middlewares.LatexDecodingMiddleware()]
    )
    assert not library.failed_blocks
    assert {entry.key: entry["title"] for entry in library.entries} == {key: records[key]["title"] for key in keys}
    assert len(library.entries) == len(keys)  # no record twice


def test_the_exclusion_log_filters_by_stage(tab, site, frames):
    data = browser_data(site, "exclusions")
    assert [f["field"] for f in data["facets"]] == ["stage"]
    page = tab.open_browser("exclusions.html")
    check_each_facet_value(page, data, frames["exclusions"])
    assert tab.problems == []


# ---------------------------------------------------------------------------------
# Browse at a desktop's width and a phone's: results first, chips, cards, the drawer
# ---------------------------------------------------------------------------------


def open_at(tab: Tab, width: str, path: str = "browse.html") -> Page:
    tab.page.set_viewport_size(WIDTHS[width])
    return tab.open_browser(path)


def test_the_results_table_reads_left_to_right_from_the_top(tab, records):
    """Titles and tags start at the left and the top of their cells, as text is read; only
    numbers (the year) line up on the right. The site's tables of counts style their own
    class, never the browser's."""
    page = open_at(tab, "desktop")
    row = page.locator(RESULTS).first
    aligned = {
        cell.get_attribute("data-field"): cell.evaluate(
            "td => [getComputedStyle(td).textAlign, getComputedStyle(td).verticalAlign]"
        )
        for cell in row.locator("td").all()
    }
    assert aligned.pop("year") == ["right", "top"]
    assert aligned and all(value == ["left", "top"] for value in aligned.values()), aligned


@pytest.mark.parametrize("width", WIDTHS)
def test_the_first_result_is_in_view_on_load(tab, records, width):
    page = open_at(tab, width)
    first = page.locator(RESULTS).first
    assert first.get_attribute("data-key") == newest_first(records, records)[0]
    box, viewport = first.bounding_box(), WIDTHS[width]
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], box
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], box
    # the count is in view as well, and stays in view (sticky) when the reader scrolls
    total = page.locator("p.pp-total")
    expect(total).to_be_in_viewport()
    assert total.evaluate("p => getComputedStyle(p.closest('.pp-bar')).position") == "sticky"
    assert tab.problems == []


@pytest.mark.parametrize("width", WIDTHS)
def test_a_ticked_filter_is_a_chip_that_removes_it(tab, frames, records, width):
    frame, total = frames["entries"], len(records)
    page = open_at(tab, width)
    chips = page.locator("ul.pp-chips button.pp-chip")
    expect(chips).to_have_count(0)
    checkbox(page, "method", "rl").check()
    checkbox(page, "unit", "step").check()
    if width == "phone":  # the drawer covers the page: its button shows the results
        keys = query(frame, "method = rl and unit = step")
        button = page.locator("dialog.pp-panel button.pp-apply")
        expect(button).to_have_text(f"Show {len(keys)} entr{'y' if len(keys) == 1 else 'ies'}")
        button.click()
        expect(page.locator("dialog.pp-panel")).to_be_hidden()
    expect(page.locator("button.pp-filters-toggle")).to_have_attribute("aria-label", "Filters, 2 active")
    expect_shown(page, query(frame, "method = rl and unit = step"), total)
    expect(chips).to_have_count(2)
    # a chip is a button named for what it removes; removing it unticks the box
    chip = page.get_by_role("button", name="Remove filter Method: Reinforcement learning")
    expect(chip).to_be_visible()
    expect(chip).to_be_in_viewport()
    chip.click()
    expect(chips).to_have_count(1)
    expect_shown(page, query(frame, "unit = step"), total)
    assert checked_values(page) == {"unit": ["step"]}
    assert parse_qs(urlsplit(page.url).fragment) == {"unit": ["step"]}
    # the focus stays among the chips, then goes back to the filters button
    expect(page.get_by_role("button", name="Remove filter Unit: Step")).to_be_focused()
    page.keyboard.press("Enter")
    expect(chips).to_have_count(0)
    expect(page.locator("button.pp-filters-toggle")).to_be_focused()
    expect_shown(page, sorted(records), total)
    assert tab.problems == []


def test_a_year_range_is_a_chip_too(tab, records):
    page = open_at(tab, "desktop")
    open_filters(page)
    page.locator("input.pp-range-from").fill("2025")
    chip = page.get_by_role("button", name="Remove filter Year: from 2025")
    chip.click()
    expect(page.locator("input.pp-range-from")).to_have_value("")
    expect_shown(page, sorted(records), len(records))


def test_on_a_phone_each_result_is_a_card_and_nothing_scrolls_sideways(tab, records):
    page = open_at(tab, "phone")
    assert page.locator(".pp-browser table").count() == 0
    cards = page.locator(".pp-results li.pp-card")
    expect(cards).to_have_count(len(records))
    width = WIDTHS["phone"]["width"]
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width
    sideways = page.locator(".pp-results, .pp-results *").evaluate_all(
        "nodes => nodes.filter(n => n.scrollWidth > n.clientWidth + 1 && /auto|scroll/.test(getComputedStyle(n).overflowX))"
        ".map(n => n.className)"
    )
    assert sideways == []
    for key in ("alpha", "hostile"):
        card = page.locator(f'.pp-results li.pp-card[data-key="{key}"]')
        data = records[key]
        assert card.locator(".pp-card-title a").text_content() == data["title"]
        meta = card.locator(".pp-meta").inner_text()
        assert str(data["year"]) in meta and data["authors"][0].split(",")[0] in meta
        box = card.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
    assert tab.problems == []


def test_a_sub_decision_column_shows_what_is_trained_and_what_designed(tab, site, records):
    registry = require_pool(site.root).registry
    spec = registry.fields["entries"]["decisions"]
    page = open_at(tab, "desktop")
    for key, data in records.items():
        for decision, mode in (data.get("decisions") or {}).items():
            mode_label = registry.vocabularies[spec.vocabulary].get(mode).label
            decision_label = registry.vocabularies[spec.keys].get(decision).label
            cell = page.locator(f'tr[data-key="{key}"] td[data-field="decisions"]')
            expect(cell).to_contain_text(f"{mode_label}: {decision_label}")


def test_the_drawer_on_a_phone_is_a_modal_dialog(tab):
    page = open_at(tab, "phone")
    toggle = page.locator("button.pp-filters-toggle")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    drawer = page.locator("dialog.pp-panel")
    expect(drawer).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("dialog", name="Filter entries")).to_be_visible()
    assert drawer.evaluate("d => d.matches(':modal')")
    expect(page.get_by_role("button", name="Close filters")).to_be_focused()
    box = drawer.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTHS["phone"]["width"]
    page.keyboard.press("Escape")
    expect(drawer).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_be_focused()
    # on a desktop the same filters open in place, under the bar: no dialog in the way
    page.set_viewport_size(WIDTHS["desktop"])
    toggle.click()
    expect(drawer).to_be_visible()
    assert not drawer.evaluate("d => d.matches(':modal')")
    expect(page.locator(RESULTS).first).to_be_visible()
    assert tab.problems == []


@pytest.fixture(scope="module")
def flow_site(tmp_path_factory):
    """The tiny pool with a screening diagram (tests/sitegen/test_screening_flow.py), built and served."""
    base = tmp_path_factory.mktemp("flow")
    with built_and_served(flow_pool(base / "pool"), base / "site") as site:
        yield site.url


def test_a_stage_of_the_screening_diagram_opens_the_log_filtered_to_it(chromium, flow_site):
    context = chromium.new_context(viewport={"width": 390, "height": 700})
    problems = []
    context.on("console", lambda message: problems.append(message.text) if message.type in ("error", "warning") else None)
    page = context.new_page()
    page.goto(flow_site + "exclusions.html")
    page.locator(READY).wait_for()
    assert shown_keys(page) == ["x1", "x2", "x3"]
    page.get_by_role("link", name="Abstract", exact=True).click()
    expect(page.locator(".pp-total")).to_have_text("Showing 2 of 3 exclusions")
    assert shown_keys(page) == ["x1", "x3"]
    assert page.url.endswith("exclusions.html#stage=abstract")
    expect(page.locator('fieldset[data-field="stage"] input[value="abstract"]')).to_be_checked()
    expect(page.locator(".pp-browser")).to_be_in_viewport()  # the link brought the log into view
    page.get_by_role("link", name="Full text", exact=True).click()
    expect(page.locator(".pp-total")).to_have_text("Showing 1 of 3 exclusions")
    page.go_back()
    expect(page.locator(".pp-total")).to_have_text("Showing 2 of 3 exclusions")
    # the same link from elsewhere opens the page filtered
    page.goto(flow_site + "index.html")
    page.goto(flow_site + "exclusions.html#stage=full_text")
    page.locator(READY).wait_for()
    assert shown_keys(page) == ["x2"]
    context.close()
    assert problems == []


# ---------------------------------------------------------------------------------
# Entry pages and the hostile entry
# ---------------------------------------------------------------------------------


def test_an_entry_page_shows_its_bibtex(tab, records):
    page = tab.open("entries/alpha.html")
    code = page.locator("pre code", has_text="@misc{alpha,")
    expect(code).to_be_visible()
    library = bibtexparser.parse_string(code.text_content())
    assert [entry.key for entry in library.entries] == ["alpha"]
    assert library.entries[0]["title"] == records["alpha"]["title"]
    assert tab.problems == []


@pytest.mark.parametrize("path", HOSTILE_PAGES)
def test_the_hostile_title_is_shown_as_text_and_never_runs(tab, path):
    page = tab.open(path)  # after the load event: an image's onerror would have fired
    assert_not_poisoned(page)
    expect(page.get_by_text(HOSTILE_TITLE).first).to_be_visible()
    if path == "entries/hostile.html":
        assert heading(page) == HOSTILE_TITLE
    assert tab.problems == []


def test_the_feed_carries_the_hostile_title_as_text(tab):
    page = tab.open("feed.xml")
    # Chromium shows XML as a tree drawn beside the document, so read the document itself
    assert page.evaluate("document.contentType").endswith("xml")  # parsed as XML, never as HTML
    titles = page.evaluate("Array.from(document.querySelectorAll('entry > title')).map(t => t.textContent)")
    assert titles == [HOSTILE_TITLE]
    assert page.evaluate("document.getElementsByTagName('script').length") == 0
    assert_not_poisoned(page)
    # the XML viewer asks for /favicon.ico, which a static site need not have: not a page error
    assert [p for p in tab.problems if "/favicon.ico" not in p] == []


def test_the_hostile_entry_on_the_gaps_page_and_in_the_browser_never_runs(tab, records):
    page = tab.open("gaps.html")
    assert_not_poisoned(page)
    page = tab.open_browser("browse.html")
    assert_not_poisoned(page)  # rows are built before any filter: the hostile one among them
    page.locator("input.pp-q").fill("pwned")
    expect_shown(page, ["hostile"], len(records))
    title = page.locator('tbody tr[data-key="hostile"] td').first.locator("a")
    assert title.text_content() == HOSTILE_TITLE
    assert title.get_attribute("href") == "entries/hostile.html"
    assert_not_poisoned(page)
    assert tab.problems == []


# ---------------------------------------------------------------------------------
# Citing and discovery
# ---------------------------------------------------------------------------------


def _cite_block(page: Page, name: str) -> Locator:
    """The code block under the Cite block's heading `name` (BibTeX, RIS, CSL-JSON)."""
    return page.locator(f"h3:has-text('{name}') ~ div.highlight").first


def _copied(page: Page, block: Locator) -> str:
    """What the theme's copy button of a code block puts on the clipboard."""
    block.hover()
    block.locator("button[data-clipboard-target]").click()  # the theme's copy button
    return page.evaluate("navigator.clipboard.readText()")


def _downloaded(page: Page, file_name: str) -> str:
    with page.expect_download() as download_info:
        page.get_by_role("link", name=f"Download {file_name}").click()
    download = download_info.value
    assert download.suggested_filename == file_name
    return Path(download.path()).read_text(encoding="utf-8")


def test_the_cite_block_copies_and_downloads_each_format(tab, records):
    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
        formatter,
    )
    from citeproc.source.json import CiteProcJSON

    tab.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = tab.open("entries/alpha.html")
    title = records["alpha"]["title"]
    texts = {}
    for name, fmt in (("BibTeX", "bib"), ("RIS", "ris"), ("CSL-JSON", "csljson")):
        block = _cite_block(page, name)
        expect(block).to_be_visible()
        texts[fmt] = _downloaded(page, f"alpha.{fmt}")
        assert block.locator("code").text_content().rstrip() == texts[fmt].rstrip(), name  # the block shows the file
        assert _copied(page, block).rstrip() == texts[fmt].rstrip(), name  # and its copy button copies it
    library = bibtexparser.parse_string(texts["bib"])
    assert [(entry.key, entry["title"]) for entry in library.entries] == [("alpha", title)]
    assert [(entry["id"], entry["title"], entry["authors"]) for entry in rispy.loads(texts["ris"])] == [
        ("alpha", title, records["alpha"]["authors"])
    ]
    # the CSL-JSON reads back through a CSL processor, which renders the entry's title
    items = json.loads(texts["csljson"])
    style = CitationStylesStyle("harvard-cite-them-right", validate=False)
    bibliography = CitationStylesBibliography(style, CiteProcJSON(items), formatter.plain)
    bibliography.register(Citation([CitationItem("alpha")]))
    assert [str(text) for text in bibliography.bibliography()] == [
        f"Ames, A. and Bell, B. (2025) {title}. Available at: https://example.org/alpha."
    ]
    assert tab.problems == []


def test_the_hostile_entry_cites_its_title_as_text(tab):
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = tab.open("entries/hostile.html")
    items = json.loads(_copied(page, _cite_block(page, "CSL-JSON")))
    assert items[0]["title"] == HOSTILE_TITLE
    assert_not_poisoned(page)
    # the COinS span holds the metadata Zotero's Connector reads, and nothing else
    span = page.locator("span.Z3988")
    assert span.count() == 1 and span.inner_html() == ""
    assert "rft.title=" in span.get_attribute("title")
    assert page.locator("meta[name^='citation_']").count() == 0


@pytest.mark.parametrize(
    "path", ("index.html", *(f"{name}.html" for name in NAV_PAGES), "entries/alpha.html", "axes/unit/step.html")
)
def test_every_page_links_the_feed_in_its_head(tab, path):
    page = tab.open(path)
    links = page.locator("head link[rel='alternate'][type='application/atom+xml']")
    assert links.count() == 1
    assert links.get_attribute("href") == f"{SITE_URL}feed.xml"  # absolute: mkdocs.yml sets site_url


def test_the_sitemap_lists_every_built_page(tab, site):
    response = tab.page.request.get(site.url + "sitemap.xml")
    assert response.ok
    locations = [loc.text for loc in ET.fromstring(response.body()).iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    built = sorted(path.relative_to(site.folder).as_posix() for path in site.folder.rglob("*.html") if path.name != "404.html")
    assert sorted(location.removeprefix(SITE_URL) for location in locations) == built
    assert len(built) == 31  # the tiny pool with the hostile entry: every page, entry and value pages included
    for page in built:  # each page it lists is served
        assert tab.page.request.get(site.url + page).ok, page
