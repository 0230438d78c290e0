"""The local server the scholarly tests answer from, standing in for arXiv, Crossref,
OpenReview and OpenAlex, and no waiting between its answers."""

from __future__ import annotations

import pytest

from paperpool.scholarly import client, services


@pytest.fixture
def waits(monkeypatch, tmp_path) -> list[float]:
    """No waiting between requests or before retries, a fresh cache of responses, and the
    waits the client asked for, recorded."""
    asked: list[float] = []
    monkeypatch.setattr(client, "SLEEP", asked.append)
    monkeypatch.setattr(services, "MIN_INTERVAL", dict.fromkeys(services.MIN_INTERVAL, 0.0))
    monkeypatch.setattr(client, "MIN_INTERVAL", services.MIN_INTERVAL)
    monkeypatch.setattr(client, "TIMEOUT", 1.0)
    monkeypatch.setenv("PAPERPOOL_CACHE_DIR", str(tmp_path / "cache"))
    return asked


@pytest.fixture
def server(httpserver, monkeypatch, waits):
    """The local server, standing in for all four services."""
    for service, path in (
        ("ARXIV", "/api/query"),
        ("CROSSREF", "/crossref"),
        ("OPENREVIEW", "/openreview"),
        ("OPENALEX", "/openalex"),
    ):
        monkeypatch.setenv(f"PAPERPOOL_{service}_URL", httpserver.url_for(path))
    return httpserver
