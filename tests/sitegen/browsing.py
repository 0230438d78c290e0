"""A built site served to a real headless Chromium, as the browser tests drive it."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from paperpool.cli.commands import cli

if TYPE_CHECKING:  # playwright is imported where a browser test runs: its absence skips them, not collection
    from playwright.sync_api import BrowserContext, Page

WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


@dataclass
class Site:
    root: Path  # the pool
    folder: Path  # the built site
    url: str  # where it is served, ending in /


@contextlib.contextmanager
def built_and_served(root: Path, folder: Path) -> Iterator[Site]:
    """The pool at `root` built into `folder` and served over HTTP on 127.0.0.1 while in use."""
    result = CliRunner().invoke(cli, ["--root", str(root), "build", "--out", str(folder)])
    assert result.exit_code == 0, result.output
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Site(root, folder, f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()


def assert_not_poisoned(page: Page) -> None:
    assert page.evaluate("window.pwned") is None, page.url
    # the onerror image would only fire after a failed load; its mere presence is the bug
    assert page.evaluate("Array.from(document.images).filter(i => i.src.endsWith('/x')).length") == 0, page.url
    assert page.locator("iframe").count() == 0, page.url


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass  # pytest would show every request of a failing test otherwise


CHROMIUM = os.environ.get("PAPERPOOL_CHROMIUM", "/usr/bin/chromium")


# No sandbox: CI containers run as root. The rest keeps Chromium from phoning home, so
# the only requests are the site's own (and the tests can demand exactly that).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


READY = '.pp-browser[data-pp-state="ready"]'


SITE_URL = "https://example.org/pool/"


@dataclass
class Tab:
    """A page in a fresh browser context, with what went wrong on it recorded."""

    page: Page
    url: str
    problems: list[str] = field(default_factory=list)  # console errors and warnings, uncaught exceptions
    outside: list[str] = field(default_factory=list)  # requests that would have left 127.0.0.1

    @property
    def context(self) -> BrowserContext:
        return self.page.context

    def open(self, path: str, page: Page | None = None) -> Page:
        page = page or self.page
        page.goto(self.url + path)
        return page

    def open_browser(self, path: str, page: Page | None = None) -> Page:
        """Open a page with a faceted browser and wait until it has drawn its table."""
        page = self.open(path, page)
        page.locator(READY).wait_for()
        return page


def unavailable(reason: str) -> None:
    """Skip a browser test for `reason`; on CI, fail it (a skipped browser test there would hide a broken site)."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (on CI the browser tests must run)", pytrace=False)
    pytest.skip(reason)
