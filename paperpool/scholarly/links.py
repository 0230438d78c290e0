"""Whether the pool's external links still answer, for `refresh`: HEAD, then GET where a
server refuses HEAD, a few hosts at a time, each host asked no faster than one request a
second, with the client's retries. A link is dead only when it fails in two runs at
least DEAD_AFTER_DAYS apart with no success between: one flaky failure never counts.
The failures are kept in the cache folder (links.json), never in the pool."""

from __future__ import annotations

import contextlib
import json
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

from paperpool.files.caches import cache_folder
from paperpool.files.problems import PaperpoolError
from paperpool.files.yamlio import write_atomic

from .client import Client
from .services import Service

DEAD_AFTER_DAYS = 7
HOSTS_AT_ONCE = 4  # bounded concurrency: never more than this many requests in flight


def failures_file() -> Path | None:
    folder = cache_folder()
    return folder / "links.json" if folder is not None else None


def _load() -> dict[str, float]:
    """url -> when it first failed in the current run of failures."""
    path = failures_file()
    with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
        stored = json.loads(path.read_text(encoding="utf-8"))
        return {str(url): float(when) for url, when in stored.items()}
    return {}


def _save(failures: dict[str, float]) -> None:
    path = failures_file()
    if path is None:
        return
    with contextlib.suppress(OSError, PaperpoolError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(path, json.dumps(failures, indent=0, sort_keys=True))


def dead_links(client: Client, urls: list[str], now: float | None = None) -> dict[str, str]:
    """The links that are dead, each with what failed ("HTTP 404"); the log of failures
    updated for the next run."""
    now = time.time() if now is None else now
    by_host: dict[str, list[str]] = defaultdict(list)
    for url in sorted(set(urls)):
        by_host[urlsplit(url).hostname or ""].append(url)
    with ThreadPoolExecutor(HOSTS_AT_ONCE) as pool:
        results = dict(
            item for found in pool.map(lambda host: _check_host(client, host, by_host[host]), by_host) for item in found
        )
    if len(results) > 1 and all(failed is not None for failed in results.values()):
        # every link failing at once is this machine's network, not the links: logging
        # them would call every link dead after two offline runs
        raise PaperpoolError(
            f"none of the pool's {len(results)} links answered (the first: {next(iter(results.values()))}); "
            "check the network connection, or run refresh --no-links. Nothing was written."
        )
    failures, dead = _load(), {}
    for url, failed in results.items():
        if failed is None:
            failures.pop(url, None)
            continue
        first = failures.setdefault(url, now)
        if now - first >= DEAD_AFTER_DAYS * 86400:
            dead[url] = failed
    _save(failures)
    return dead


def _check_host(client: Client, host: str, urls: list[str]) -> list[tuple[str, str | None]]:
    service = Service(f"the web ({host})", "", "")
    return [(url, client.link_failure(service, url)) for url in urls]
