"""The browser tests' Chromium and tabs (tests marked `browser`): Debian's chromium driven
by playwright, never a browser download. Where no Chromium is found the browser tests are
skipped with the reason, except on CI (the CI variable set), where a skipped browser test
would hide a broken site: there they fail."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .browsing import CHROMIUM, CHROMIUM_ARGS, SITE_URL, Tab, unavailable


@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).is_file():
        unavailable(
            f"no Chromium at {CHROMIUM}: the browser tests need one; run scripts/test, which installs "
            "Debian's chromium, or set PAPERPOOL_CHROMIUM to a Chromium binary"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install -e '.[test]'")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def tab(chromium, site):
    # A context per test: no hash, download or search state leaks between tests.
    context = chromium.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)  # a local site answers at once; fail fast rather than hang
    recorded = Tab(context.new_page(), site.url)

    def console(message):
        if message.type in ("error", "warning"):
            recorded.problems.append(f"{message.type}: {message.text} ({message.location.get('url')})")

    # On the context, so pages a test opens itself are recorded as well.
    context.on("console", console)
    context.on("weberror", lambda error: recorded.problems.append(f"uncaught: {error.error}"))

    def only_this_site(route):
        url = urlsplit(route.request.url)
        if route.request.url.startswith(SITE_URL):  # the site where it is published (the theme asks it for the sitemap)
            route.fulfill(path=site.folder / route.request.url.removeprefix(SITE_URL).split("?")[0])
        elif url.scheme in ("http", "https", "ws", "wss") and url.hostname != "127.0.0.1":
            recorded.outside.append(route.request.url)
            route.abort()
        else:  # the site itself, and blob:/data: URLs, which never touch the network
            route.continue_()

    context.route("**/*", only_this_site)
    yield recorded
    context.close()
    # Every test, not only the home page's, shows that the site works offline.
    assert recorded.outside == [], "the site asked for something outside itself"
