"""Adding papers by identifier (`add --arxiv/--doi/--openreview`, `import-ids`) against a
local server answering in each service's real format (tests/scholarly/: arXiv's Atom
feed, Crossref's works JSON, OpenReview's API v2 notes, OpenAlex's works JSON, made from
the pool's own papers' real metadata), and the client's manners: retries, Retry-After,
timeouts, redirects, malformed answers, unreachable services."""

from __future__ import annotations

import contextlib
import shutil
import socket
import time
from pathlib import Path

import pytest
from werkzeug import Response

from paperpool.scholarly import client, services

from ..conftest import FILLED, edit
from .answers import FIXTURES, GRESHAKE, GRESHAKE_PUBLISHED, JSON, MALT, NO_WORKS, XML

NEXT = "Then: paperpool validate, and paperpool diff main"  # not printed by the import-style report


def arxiv_answers(server, arxiv_id: str, body: str, status: int = 200, **kwargs):
    server.expect_request("/api/query", query_string={"id_list": arxiv_id}).respond_with_data(
        body, status=status, content_type=XML, **kwargs
    )


def openalex_answers(server, body: str = NO_WORKS, arxiv_id: str | None = None):
    asked = {"filter": f"doi:10.48550/arxiv.{arxiv_id}", "per-page": "1"} if arxiv_id else None
    server.expect_request("/openalex/works", query_string=asked).respond_with_data(body, content_type=JSON)


def without(root: Path, key: str) -> Path:
    (root / "papers" / f"{key}.yaml").unlink()
    return root


# ---------------------------------------------------------------------------------
# The services' real addresses
# ---------------------------------------------------------------------------------


def test_the_default_base_urls_are_the_services_real_ones(monkeypatch):
    for service in services.SERVICES:
        monkeypatch.delenv(service.variable, raising=False)
    assert [service.base_url for service in services.SERVICES] == [
        "https://export.arxiv.org/api/query",
        "https://api.crossref.org",
        "https://api2.openreview.net",
        "https://api.openalex.org",
    ]
    assert [service.variable for service in services.SERVICES] == [
        "PAPERPOOL_ARXIV_URL",
        "PAPERPOOL_CROSSREF_URL",
        "PAPERPOOL_OPENREVIEW_URL",
        "PAPERPOOL_OPENALEX_URL",
    ]
    assert services.MIN_INTERVAL["arXiv"] >= 3  # arXiv's API terms: one request every 3 seconds


def test_the_user_agent_names_paperpool_its_repository_and_the_registrys_contact():
    survey = {"repository": "https://github.com/o/r", "contact": "keeper@example.org"}
    assert client.user_agent(survey) == "paperpool/0.1.0 (+https://github.com/o/r; mailto:keeper@example.org)"
    assert client.user_agent({}) == "paperpool/0.1.0"


def test_an_address_in_any_letters_is_carried_in_the_header_percent_encoded(run, pool_copy, server):
    """A registry's repository and contact may be written in any letters (validate accepts
    them); an HTTP header is ASCII, so those are percent-encoded (the header crashed every
    command that asks a service, before any request)."""
    survey = {"repository": "https://exämple.org/r", "contact": "jürgen@example.org"}
    assert client.user_agent(survey) == "paperpool/0.1.0 (+https://ex%C3%A4mple.org/r; mailto:j%C3%BCrgen@example.org)"
    pool = without(pool_copy, "dec-pomdp2002")
    edit(pool / "registry.yaml", "  year: 2026\n", '  year: 2026\n  contact: "jürgen@example.org"\n')
    assert run("validate", cwd=pool).exit_code == 0
    server.expect_request("/crossref/works/10.1287/moor.27.4.819.297").respond_with_data(
        (FIXTURES / "crossref-10.1287-moor.27.4.819.297.json").read_text(encoding="utf-8"), content_type=JSON
    )
    result = run("add", "--doi", "10.1287/moor.27.4.819.297", "--date-added", "2026-11-23", "--dry-run", cwd=pool)
    assert result.exit_code == 0, result.output
    assert server.log[0][0].headers["User-Agent"] == "paperpool/0.1.0 (mailto:j%C3%BCrgen@example.org)"


def test_the_contact_is_declared_in_the_registrys_survey_block(run, pool_copy):
    edit(pool_copy / "registry.yaml", "  year: 2026\n", '  year: 2026\n  contact: "not an address"\n')
    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 1 and "survey.contact" in result.output and "email address" in result.output


# ---------------------------------------------------------------------------------
# add --arxiv / --doi / --openreview
# ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_add_arxiv_writes_a_full_stub_that_validates_once_tagged(run, pool_copy, server, snapshot):
    pool = without(pool_copy, "greshake2023")
    arxiv_answers(server, "2302.12173", GRESHAKE)  # arXiv names no journal reference or DOI for it
    openalex_answers(server, GRESHAKE_PUBLISHED, "2302.12173")  # OpenAlex has its version of record
    before = snapshot(pool)
    result = run("add", "--arxiv", "arXiv:2302.12173v1", "--date-added", "2026-11-23", cwd=pool)
    assert (result.exit_code, result.output) == (
        0,
        (
            "created papers/greshake2023what.yaml from arXiv 2302.12173 (greshake2023what)\n"
            "created 1 entry, skipped 0 duplicates; fill in the TODO fields, then run paperpool validate.\n"
        ),
    )
    assert sorted(set(snapshot(pool)) - set(before)) == ["papers/greshake2023what.yaml"]
    stub = (pool / "papers" / "greshake2023what.yaml").read_text(encoding="utf-8")
    assert stub.startswith(
        "key: greshake2023what\n"
        "title: 'Not what you''ve signed up for: Compromising Real-World LLM-Integrated Applications with Indirect\n"
        "  Prompt Injection'\n"
        "authors:\n- Greshake, Kai\n- Abdelnabi, Sahar\n- Mishra, Shailesh\n- Endres, Christoph\n- Holz, Thorsten\n"
        "- Fritz, Mario\n"
        "authors_complete: true\n"
        "affiliation: null\n"
        "year: 2023\n"
        "preprint_year: null\n"
        "venue: ACM AISec 2023\n"
        "arxiv_id: '2302.12173'\n"
        "doi: 10.1145/3605764.3623985\n"
        "openreview_id: null\n"
        "urls:\n- https://arxiv.org/abs/2302.12173\n"
        "category: TODO\n"
    )
    assert "bibtex:\n  type: inproceedings\n  key: greshake2023what\n  booktitle: ACM AISec 2023\n" in stub
    assert "\nreward_type: TODO\n" in stub and "\nsubdecision_evidence: TODO\n" in stub  # never guessed
    for name, value in FILLED.items():
        edit(pool / "papers" / "greshake2023what.yaml", f"\n{name}: TODO\n", f"\n{name}: {value}\n")
    result = run("validate", cwd=pool)
    assert (result.exit_code, result.output) == (0, "ok: 84 entries and 32 exclusions, no problems.\n")


def test_add_arxiv_of_a_paper_already_in_the_pool_is_refused_naming_its_file(run, pool_copy, server, snapshot):
    """The pool knows its own ids without the network: no service is asked (issue 38:
    offline, this was a network error)."""
    before = snapshot(pool_copy)
    result = run("add", "--arxiv", "2412.01928", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        0,
        (
            "skipped arXiv 2412.01928: duplicate of papers/malt.yaml (same arXiv id 2412.01928)\n"
            "created 0 entries, skipped 1 duplicate.\n"
        ),
    )
    assert server.log == []
    assert snapshot(pool_copy) == before


def test_add_dry_run_prints_the_stub_and_writes_nothing(run, pool_copy, server, snapshot):
    openalex_answers(server)  # OpenAlex holds no version of record: the stub stays arXiv's
    pool = without(pool_copy, "greshake2023")
    arxiv_answers(server, "2302.12173", GRESHAKE)
    before = snapshot(pool)
    result = run("add", "--arxiv", "2302.12173", "--dry-run", "--date-added", "2026-11-23", cwd=pool)
    assert result.exit_code == 0
    assert result.output.startswith("# papers/greshake2023what.yaml\nkey: greshake2023what\n")
    assert "\nvenue: arXiv\n" in result.output and "\ndoi: null\n" in result.output
    assert result.output.endswith(
        "would create papers/greshake2023what.yaml from arXiv 2302.12173 (greshake2023what)\n"
        "would create 1 entry, skipped 0 duplicates (dry run: nothing written).\n"
    )
    assert snapshot(pool) == before


def test_add_doi_reads_crossref(run, pool_copy, server):
    pool = without(pool_copy, "dec-pomdp2002")
    server.expect_request("/crossref/works/10.1287/moor.27.4.819.297").respond_with_data(
        (FIXTURES / "crossref-10.1287-moor.27.4.819.297.json").read_text(encoding="utf-8"), content_type=JSON
    )
    result = run("add", "--doi", "https://doi.org/10.1287/moor.27.4.819.297", "--date-added", "2026-11-23", cwd=pool)
    assert result.output.splitlines()[0] == (
        "created papers/bernstein2002complexity.yaml from DOI 10.1287/moor.27.4.819.297 (bernstein2002complexity)"
    )
    stub = (pool / "papers" / "bernstein2002complexity.yaml").read_text(encoding="utf-8")
    assert stub.startswith(
        "key: bernstein2002complexity\n"
        "title: The Complexity of Decentralized Control of Markov Decision Processes\n"
        "authors:\n- Bernstein, Daniel S.\n- Givan, Robert\n- Immerman, Neil\n- Zilberstein, Shlomo\n"
        "authors_complete: true\naffiliation: null\nyear: 2002\npreprint_year: null\n"
        "venue: Mathematics of Operations Research\n"
        "arxiv_id: null\ndoi: 10.1287/moor.27.4.819.297\nopenreview_id: null\n"
        "urls:\n- https://doi.org/10.1287/moor.27.4.819.297\n"
    )
    assert "  volume: '27'\n  number: '4'\n  pages: 819-840\n" in stub


def test_add_doi_that_crossref_does_not_hold_asks_openalex(run, pool_copy, server):
    server.expect_request("/crossref/works/10.48550/arxiv.2412.01928").respond_with_data("Resource not found.", status=404)
    server.expect_request("/openalex/works/doi:10.48550/arxiv.2412.01928").respond_with_data(
        (FIXTURES / "openalex-10.48550-arxiv.2412.01928.json").read_text(encoding="utf-8"), content_type=JSON
    )
    result = run("add", "--doi", "10.48550/arXiv.2412.01928", "--dry-run", cwd=pool_copy)
    # OpenAlex gives the arXiv copy too, so the pool's MALT is found
    assert result.output == (
        "skipped DOI 10.48550/arxiv.2412.01928 (motwani2024malt): duplicate of papers/malt.yaml (same arXiv id 2412.01928)\n"
        "would create 0 entries, skipped 1 duplicate (dry run: nothing written).\n"
    )


def openreview_answers(server):
    server.expect_request("/openreview/notes", query_string={"id": "Q4Nk6PlZYH"}).respond_with_data(
        (FIXTURES / "openreview-Q4Nk6PlZYH.json").read_text(encoding="utf-8"), content_type=JSON
    )


def test_add_openreview_of_a_paper_in_the_pool_is_refused(run, pool_copy, server):
    result = run("add", "--openreview", "Q4Nk6PlZYH", "--dry-run", cwd=pool_copy)
    assert result.output == (
        "skipped OpenReview Q4Nk6PlZYH: duplicate of papers/depart2026.yaml (same OpenReview id Q4Nk6PlZYH)\n"
        "would create 0 entries, skipped 1 duplicate (dry run: nothing written).\n"
    )
    assert server.log == []  # known without asking


def test_add_openreview_reads_the_note(run, pool_copy, server):
    openreview_answers(server)
    result = run("add", "--openreview", "Q4Nk6PlZYH", "--dry-run", cwd=without(pool_copy, "depart2026"))
    assert result.output.startswith(
        "# papers/hsu2025depart.yaml\nkey: hsu2025depart\n"
        "title: 'DEPART: Hierarchical Multi-Agent System for Multi-Turn Interaction'\n"
        "authors:\n- Hsu, Hao-Lun\n- Xu, Jing\n- Vichare, Nikhil\n- Carbone, Francesco\n- Pajic, Miroslav\n- Carenini, Giuseppe\n"
        "authors_complete: true\naffiliation: null\nyear: 2025\npreprint_year: null\nvenue: Submitted to ICLR 2026\n"
        "arxiv_id: null\ndoi: null\nopenreview_id: Q4Nk6PlZYH\nurls:\n- https://openreview.net/forum?id=Q4Nk6PlZYH\n"
    )


def test_add_by_identifier_refuses_set_and_key(run, pool_copy):
    result = run("add", "mykey", "--arxiv", "2302.12173", cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output.startswith("Error: KEY, --set and --interactive are for a paper added by hand")


def test_add_a_bad_identifier_is_one_line(run, pool_copy):
    result = run("add", "--arxiv", "not an id", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: --arxiv not an id: not an arXiv id; write it as arxiv:2412.01928, doi:10.18653/v1/2024.acl-long.1 or "
            "openreview:AbCdEf123, or as a link to its page\n"
        ),
    )


# ---------------------------------------------------------------------------------
# import-ids
# ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_import_ids_reads_every_form_and_reports_like_import_bib(run, pool_copy, server, tmp_path, snapshot):
    openalex_answers(server)
    pool = without(pool_copy, "greshake2023")
    arxiv_answers(server, "2302.12173", GRESHAKE)
    arxiv_answers(server, "2412.01928", MALT)
    ids = tmp_path / "ids.txt"
    ids.write_text(
        "# papers to add\n\nhttps://arxiv.org/abs/2302.12173v2\narxiv:2412.01928  # MALT, already here\n2302.12173\n",
        encoding="utf-8",
    )
    result = run("import-ids", str(ids), "--date-added", "2026-11-23", cwd=pool)
    assert (result.exit_code, result.output) == (
        0,
        (
            "created papers/greshake2023what.yaml from ids.txt:3 (greshake2023what)\n"
            "skipped ids.txt:4: duplicate of papers/malt.yaml (same arXiv id 2412.01928)\n"
            "skipped ids.txt:5 (greshake2023what): duplicate of ids.txt:3 (greshake2023what) (same arXiv id 2302.12173)\n"
            "created 1 entry, skipped 2 duplicates; fill in the TODO fields, then run paperpool validate.\n"
        ),
    )


def test_import_ids_reports_bad_lines_with_their_numbers_and_fetches_nothing(run, pool_copy, server, tmp_path, snapshot):
    ids = tmp_path / "ids.txt"
    ids.write_text("2302.12173\nisbn:978-3-16\n\nhello world\n", encoding="utf-8")
    before = snapshot(pool_copy)
    result = run("import-ids", str(ids), cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output == (
        "Error: ids.txt: nothing fetched or written, 2 problems:\n"
        "ids.txt:2: 'isbn:978-3-16' is not an arXiv id, DOI or OpenReview id; write it as arxiv:2412.01928, "
        "doi:10.18653/v1/2024.acl-long.1 or openreview:AbCdEf123, or as a link to its page\n"
        "ids.txt:4: 'hello world' is not an arXiv id, DOI or OpenReview id; write it as arxiv:2412.01928, "
        "doi:10.18653/v1/2024.acl-long.1 or openreview:AbCdEf123, or as a link to its page\n"
    )
    assert snapshot(pool_copy) == before
    assert server.log == []


# ---------------------------------------------------------------------------------
# The client's manners, and every way a service can fail
# ---------------------------------------------------------------------------------


def url_of(server, arxiv_id: str) -> str:
    return f"{server.url_for('/api/query')}?id_list={arxiv_id}"


def arxiv_failure(run, pool: Path, server) -> str:
    """What `add --arxiv 2302.12173` says went wrong, after its one line's start
    "Error: arXiv (URL) "; it must have failed. The pool must not hold that paper (one it
    holds is known without asking): the callers ask it of a pool without greshake2023."""
    result = run("add", "--arxiv", "2302.12173", cwd=pool)
    start = f"Error: arXiv ({url_of(server, '2302.12173')}) "
    assert result.exit_code == 1 and result.output.startswith(start), result.output
    return result.output[len(start) :]


def test_not_found_is_one_line(run, pool_copy, server, snapshot):
    arxiv_answers(server, "2412.99999", (FIXTURES / "arxiv-empty.xml").read_text(encoding="utf-8"))
    before = snapshot(pool_copy)
    result = run("add", "--arxiv", "2412.99999", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: arXiv 2412.99999: arXiv ({server.url_for('/api/query')}) has no paper 2412.99999; check the "
            "identifier. Nothing was written.\n"
        ),
    )
    assert snapshot(pool_copy) == before


def test_a_404_is_not_found(run, pool_copy, server):
    server.expect_request("/crossref/works/10.1234/nothing").respond_with_data("Resource not found.", status=404)
    server.expect_request("/openalex/works/doi:10.1234/nothing").respond_with_json({"error": "not found"}, status=404)
    result = run("add", "--doi", "10.1234/nothing", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: DOI 10.1234/nothing: neither Crossref ({server.url_for('/crossref')}) nor OpenAlex "
            f"({server.url_for('/openalex')}) has a paper 10.1234/nothing; check the identifier. Nothing was written.\n"
        ),
    )


def test_a_500_then_success_is_retried(run, pool_copy, server, waits):
    openalex_answers(server)
    pool = without(pool_copy, "greshake2023")
    server.expect_ordered_request("/api/query").respond_with_data("Internal Server Error", status=500)
    server.expect_ordered_request("/api/query").respond_with_data(GRESHAKE, content_type=XML)
    result = run("add", "--arxiv", "2302.12173", "--dry-run", cwd=pool)
    assert result.exit_code == 0 and "would create 1 entry" in result.output
    assert waits == [client.BACKOFF]  # one backoff before the one retry
    assert [request.path for request, _ in server.log] == ["/api/query", "/api/query", "/openalex/works"]


def test_a_429_waits_as_long_as_retry_after_says(run, pool_copy, server, waits):
    openalex_answers(server)
    pool = without(pool_copy, "greshake2023")
    server.expect_ordered_request("/api/query").respond_with_data("Rate exceeded.", status=429, headers={"Retry-After": "7"})
    server.expect_ordered_request("/api/query").respond_with_data(GRESHAKE, content_type=XML)
    result = run("add", "--arxiv", "2302.12173", "--dry-run", cwd=pool)
    assert result.exit_code == 0
    assert waits == [7.0]


@pytest.mark.parametrize(
    ("retry_after", "waited"),
    [
        ("\u00b2", [client.BACKOFF, 2 * client.BACKOFF, 4 * client.BACKOFF]),  # isdigit(), not a number float() reads
        # an Arabic-Indic 3, sent as UTF-8 (the server sends latin-1), which httpx reads first
        ("\u0663".encode().decode("latin-1"), [client.BACKOFF, 2 * client.BACKOFF, 4 * client.BACKOFF]),
        ("9" * 5000, [client.MAX_WAIT] * 3),
    ],
)
def test_a_retry_after_of_other_digits_is_no_retry_after(run, pool_copy, server, waits, snapshot, retry_after, waited):
    """A hostile review: Retry-After: \u00b2 passed str.isdigit() and crashed float(). Only
    ASCII digits are seconds; anything else neither seconds nor a date is no Retry-After."""
    server.expect_request("/crossref/works/10.1234/abcd").respond_with_data(
        "Service Unavailable", status=503, headers={"Retry-After": retry_after}
    )
    before = snapshot(pool_copy)
    result = run("add", "--doi", "10.1234/abcd", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: Crossref ({server.url_for('/crossref/works/10.1234/abcd')}) failed (HTTP 503, 4 tries); try again "
            "later. Nothing was written.\n"
        ),
    )
    assert waits == waited
    assert snapshot(pool_copy) == before


def test_429_every_time_gives_up_after_the_retries(run, pool_copy, server, waits, snapshot):
    pool_copy = without(pool_copy, "greshake2023")  # a paper the pool holds is known without asking
    server.expect_request("/api/query").respond_with_data("Rate exceeded.", status=429)
    before = snapshot(pool_copy)
    assert arxiv_failure(run, pool_copy, server) == (
        "asks paperpool to slow down (HTTP 429, 4 tries); try again later. Nothing was written.\n"
    )
    assert len(server.log) == client.ATTEMPTS
    assert snapshot(pool_copy) == before


@pytest.mark.slow
def test_a_timeout_is_retried_then_reported(run, pool_copy, server, monkeypatch):
    pool_copy = without(pool_copy, "greshake2023")  # a paper the pool holds is known without asking
    monkeypatch.setattr(client, "TIMEOUT", 0.2)

    def slow(request):
        time.sleep(0.5)
        return Response(GRESHAKE, content_type=XML)

    server.expect_request("/api/query").respond_with_handler(slow)
    assert arxiv_failure(run, pool_copy, server) == (
        "did not answer within 0.2 s (4 tries); try again later. Nothing was written.\n"
    )


@pytest.mark.slow
def test_a_server_that_drips_its_answer_is_given_up_at_the_deadline(run, pool_copy, server, monkeypatch):
    """Issue 39's fifth review: a server sending a byte every few seconds never tripped the
    timeout of each read, and one link of a pull request kept `refresh` waiting for good.
    The whole answer now has DEADLINE; here a second, each of the four tries."""
    import socket
    import threading

    monkeypatch.setattr(client, "DEADLINE", 1.0)
    listener = socket.create_server(("127.0.0.1", 0))

    def drip():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nX-a: ")
            threading.Thread(target=_drip_into, args=(connection,), daemon=True).start()

    threading.Thread(target=drip, daemon=True).start()
    monkeypatch.setenv("PAPERPOOL_CROSSREF_URL", f"http://127.0.0.1:{listener.getsockname()[1]}")
    try:
        result = run("add", "--doi", "10.1234/abcd", "--dry-run", cwd=pool_copy)
    finally:
        listener.close()
    assert result.exit_code == 1
    assert result.output.endswith("did not give its whole answer within 1 s (4 tries); try again later. Nothing was written.\n")


def _drip_into(connection) -> None:
    with contextlib.suppress(OSError):
        while True:
            time.sleep(0.2)
            connection.sendall(b"x")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ("<html><body>Service Unavailable</body></html>", "not an Atom feed"),
        ("<feed xmlns='http://www.w3.org/2005/Atom'><entry>", "not XML: no element found: line 1, column 49"),
        ('<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY a "aaaa">]><feed/>', "the XML declares a document type"),
        (
            (
                "<feed xmlns='http://www.w3.org/2005/Atom'><entry><id>http://arxiv.org/api/errors#incorrect_id_format_for_x</id>"
                "<title>Error</title><summary>incorrect id format for x</summary></entry></feed>"
            ),
            "arXiv says: incorrect id format for x",
        ),
    ],
)
def test_a_malformed_arxiv_answer_is_one_line(run, pool_copy, server, body, detail):
    pool_copy = without(pool_copy, "greshake2023")  # a paper the pool holds is known without asking
    server.expect_request("/api/query").respond_with_data(body, content_type=XML)
    assert arxiv_failure(run, pool_copy, server) == (
        f"gave an answer paperpool cannot read ({detail}); try again later; if it persists, check PAPERPOOL_ARXIV_URL "
        "or report it. Nothing was written.\n"
    )


def test_an_arxiv_version_of_thousands_of_digits_is_a_malformed_answer(run, pool_copy, server, snapshot):
    """A hostile review: an entry id ending in v and 5,000 digits crashed int() (its limit
    is 4,300 digits). arXiv's versions are a few digits: the answer is not arXiv's."""
    pool_copy = without(pool_copy, "greshake2023")  # a paper the pool holds is known without asking
    arxiv_answers(server, "2302.12173", GRESHAKE.replace("2302.12173v2</id>", "2302.12173v" + "1" * 5000 + "</id>"))
    before = snapshot(pool_copy)
    assert arxiv_failure(run, pool_copy, server) == (
        "gave an answer paperpool cannot read (an entry's id with a version 5,000 digits long); try again later; if it "
        "persists, check PAPERPOOL_ARXIV_URL or report it. Nothing was written.\n"
    )
    assert snapshot(pool_copy) == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ("{not json", "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        ('{"status": "ok", "message": []}', "no `message` object"),
        ('{"status": "ok", "message": {"title": [], "author": "Doe"}}', "title: missing; every item needs a title"),
        (  # issue 39's sixteenth review: Python's json reads an unpaired surrogate, which no record can hold
            '{"status": "ok", "message": {"title": ["Bad \\ud800 title"]}}',
            "a text holds half of a character (an unpaired \\ud800 to \\udfff)",
        ),
    ],
)
def test_a_malformed_crossref_answer_is_one_line(run, pool_copy, server, body, detail):
    server.expect_request("/crossref/works/10.1234/x").respond_with_data(body, content_type=JSON)
    result = run("add", "--doi", "10.1234/x", cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output.startswith(
        f"Error: Crossref ({server.url_for('/crossref/works/10.1234/x')}) gave an answer paperpool cannot read ({detail}"
    )


def test_a_redirect_is_followed(run, pool_copy, server):
    openalex_answers(server)
    pool = without(pool_copy, "greshake2023")
    server.expect_request("/api/query").respond_with_data(
        "", status=301, headers={"Location": "/moved/api/query?id_list=2302.12173"}
    )
    server.expect_request("/moved/api/query").respond_with_data(GRESHAKE, content_type=XML)
    result = run("add", "--arxiv", "2302.12173", "--dry-run", cwd=pool)
    assert result.exit_code == 0 and "would create 1 entry" in result.output


def test_an_unreachable_service_is_one_line_and_nothing_is_written(run, pool_copy, waits, monkeypatch, snapshot):
    pool_copy = without(pool_copy, "greshake2023")  # a paper the pool holds is known without asking
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("PAPERPOOL_ARXIV_URL", f"http://127.0.0.1:{port}/api/query")
    before = snapshot(pool_copy)
    result = run("add", "--arxiv", "2302.12173", cwd=pool_copy)
    assert result.exit_code == 1
    assert len(result.output.splitlines()) == 1
    assert result.output.startswith(f"Error: arXiv (http://127.0.0.1:{port}/api/query?id_list=2302.12173) could not be reached (")
    assert result.output.endswith(
        "); check the network connection, or set PAPERPOOL_ARXIV_URL to a mirror. Nothing was written.\n"
    )
    assert snapshot(pool_copy) == before


@pytest.mark.slow
def test_answers_are_cached_so_a_second_run_asks_nothing(run, pool_copy, server):
    openalex_answers(server)
    pool = without(pool_copy, "greshake2023")
    arxiv_answers(server, "2302.12173", GRESHAKE)
    assert run("add", "--arxiv", "2302.12173", "--dry-run", cwd=pool).exit_code == 0
    assert run("add", "--arxiv", "2302.12173", "--dry-run", cwd=pool).exit_code == 0
    assert [request.path for request, _ in server.log] == ["/api/query", "/openalex/works"]  # the first run's only
    assert {request.headers["User-Agent"] for request, _ in server.log} == {"paperpool/0.1.0"}


def test_an_answer_too_big_to_be_one_paper_is_malformed(run, pool_copy, server, monkeypatch):
    pool_copy = without(pool_copy, "greshake2023")  # a paper the pool holds is known without asking
    monkeypatch.setattr(client, "MAX_BYTES", 1000)
    arxiv_answers(server, "2302.12173", GRESHAKE)
    assert arxiv_failure(run, pool_copy, server) == (
        "gave an answer paperpool cannot read (the answer is over 1,000 bytes); try again later; if it persists, check "
        "PAPERPOOL_ARXIV_URL or report it. Nothing was written.\n"
    )


@pytest.mark.slow
def test_a_gzip_answer_is_read_and_a_bomb_is_stopped_at_the_limit_in_bounded_memory(run, pool_copy, server, tmp_path):
    """Issue 39's fourth review: httpx decoded each chunk whole, so 131 kB of zstd grew to
    gigabytes before the limit was checked. An answer in gzip is read as before; 64 MiB of
    zeros in 64 kB of gzip stop at the 20 MB limit, having held little more than it."""
    import gzip
    import tracemalloc

    pool = without(pool_copy, "greshake2023")
    openalex_answers(server)
    arxiv_answers(server, "2302.12173", gzip.compress(GRESHAKE.encode()), headers={"Content-Encoding": "gzip"})
    assert run("add", "--arxiv", "2302.12173", "--dry-run", cwd=pool).exit_code == 0
    server.clear()
    shutil.rmtree(tmp_path / "cache")  # the answers of the first run (the waits fixture's folder)
    arxiv_answers(server, "2302.12173", gzip.compress(bytes(64 << 20)), headers={"Content-Encoding": "gzip"})
    tracemalloc.start()
    try:
        said = arxiv_failure(run, pool, server)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert said == (
        "gave an answer paperpool cannot read (the answer is over 20,000,000 bytes); try again later; if it persists, "
        "check PAPERPOOL_ARXIV_URL or report it. Nothing was written.\n"
    )
    assert peak < 3 * client.MAX_BYTES, f"{peak:,} bytes at the peak"
    assert {request.headers["Accept-Encoding"] for request, _ in server.log} == {"gzip, deflate"}


def test_an_answer_in_an_encoding_paperpool_does_not_ask_for_is_refused(run, pool_copy, server):
    """zstd (which httpx decodes when zstandard is installed, whole chunks at once) and any
    other encoding but gzip and deflate: refused, never decoded."""
    pool_copy = without(pool_copy, "greshake2023")  # a paper the pool holds is known without asking
    import zstandard

    arxiv_answers(server, "2302.12173", zstandard.compress(bytes(1 << 20)), headers={"Content-Encoding": "zstd"})
    assert arxiv_failure(run, pool_copy, server) == (
        "gave an answer paperpool cannot read (the answer is encoded as 'zstd', which paperpool does not read); try "
        "again later; if it persists, check PAPERPOOL_ARXIV_URL or report it. Nothing was written.\n"
    )


def test_a_malformed_openreview_answer_is_one_line(run, pool_copy, server):
    pool_copy = without(pool_copy, "depart2026")  # a paper the pool holds is known without asking
    server.expect_request("/openreview/notes").respond_with_json({"notes": [{"id": "Q4Nk6PlZYH", "content": {}}]})
    result = run("add", "--openreview", "Q4Nk6PlZYH", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: OpenReview ({server.url_for('/openreview/notes')}?id=Q4Nk6PlZYH) gave an answer paperpool cannot read "
            "(a note without a title); try again later; if it persists, check PAPERPOOL_OPENREVIEW_URL or report it. "
            "Nothing was written.\n"
        ),
    )


def test_a_server_error_every_time_is_reported_after_the_retries(run, pool_copy, server):
    pool_copy = without(pool_copy, "greshake2023")  # a paper the pool holds is known without asking
    server.expect_request("/api/query").respond_with_data("Service Unavailable", status=503)
    assert arxiv_failure(run, pool_copy, server) == "failed (HTTP 503, 4 tries); try again later. Nothing was written.\n"
    assert len(server.log) == client.ATTEMPTS


@pytest.mark.slow
@pytest.mark.parametrize(
    "answer",
    [
        {"response_data": '{"meta": {"count": 0}}', "content_type": JSON},  # no results list: malformed
        {"response_data": "Service Unavailable", "status": 503},  # down, after the retries
    ],
)
def test_openalex_failing_keeps_arxivs_record_and_says_so(run, pool_copy, server, answer):
    """OpenAlex only adds to what arXiv says (a venue arXiv does not know): when it fails,
    the paper is added as arXiv has it, and a note says the venue was not checked."""
    pool = without(pool_copy, "greshake2023")
    arxiv_answers(server, "2302.12173", GRESHAKE)
    server.expect_request("/openalex/works").respond_with_data(**answer)
    result = run("add", "--arxiv", "2302.12173", "--date-added", "2026-11-23", cwd=pool)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].startswith("note: OpenAlex (") and lines[0].endswith(
        "; the venues OpenAlex lists for arXiv papers were not checked, and arXiv's record was kept"
    )
    assert lines[1:] == [
        "created papers/greshake2023what.yaml from arXiv 2302.12173 (greshake2023what)",
        "created 1 entry, skipped 0 duplicates; fill in the TODO fields, then run paperpool validate.",
    ]
    assert "\nvenue: arXiv\n" in (pool / "papers" / "greshake2023what.yaml").read_text(encoding="utf-8")


def test_a_version_of_record_is_a_published_location_and_its_doi_its_own():
    """OpenAlex's locations as its works API gives them: only one marked as the published
    version, at a journal or conference, is a version of record; its DOI is its own link's,
    never the work's (another copy's, such as a preprint server's)."""
    from paperpool.scholarly.openalex import Published, published

    conference = {
        "source": {"type": "conference", "display_name": "NeurIPS"},
        "landing_page_url": "https://openreview.net/forum?id=abc",
    }
    work = {"doi": "https://doi.org/10.5281/zenodo.123", "locations": [conference]}
    assert published(work) is None  # not marked as the published version
    assert published({**work, "locations": [{**conference, "version": "publishedVersion"}]}) == Published(
        "NeurIPS", "conference", None
    )
    journal = {
        "source": {"type": "journal", "display_name": "JMLR"},
        "is_published": True,
        "landing_page_url": "https://doi.org/10.5555/jmlr.1",
    }
    repository = {
        "source": {"type": "repository", "display_name": "arXiv"},
        "version": "publishedVersion",
        "landing_page_url": "https://doi.org/10.48550/arXiv.2401.00001",
    }
    assert published({"locations": [repository, journal]}) == Published("JMLR", "journal", "10.5555/jmlr.1")
    assert published({"primary_location": "not a location", "locations": [None, 3, journal]}).venue == "JMLR"


def test_a_404_from_arxiv_is_the_address_failing_not_a_paper_missing(run, pool_copy, server):
    """arXiv's API answers a paper it lacks with an empty feed; its 404 means the address
    is wrong (a mirror that moved, a proxy's page), said as the service failing, naming
    the address asked (issue 38: it read as "arXiv has no paper")."""
    server.expect_request("/api/query").respond_with_data("Not Found", status=404)
    result = run("add", "--arxiv", "2412.99999", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: arXiv ({url_of(server, '2412.99999')}) refused the request (HTTP 404); check PAPERPOOL_ARXIV_URL, "
        "which names where arXiv is. Nothing was written.\n",
    )


def test_an_address_of_a_port_past_65535_is_the_service_not_reached(run, pool_copy, waits, monkeypatch):
    """A port past 65535 (a service's address, or where a redirect leads) raised an exception
    group from the socket layer: an internal error (the eleventh review)."""
    monkeypatch.setenv("PAPERPOOL_ARXIV_URL", "http://127.0.0.1:99999/api/query")
    result = run("add", "--arxiv", "2412.99999", "--dry-run", cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output.startswith(
        "Error: arXiv (http://127.0.0.1:99999/api/query?id_list=2412.99999) could not be reached (cannot connect: "
    )


def test_a_retraction_notice_of_a_type_that_is_not_text_is_no_retraction():
    """A notice whose type is a list or an object could not be looked up (unhashable):
    `refresh` ended in an internal error (the eleventh review)."""
    from paperpool.scholarly.crossref import CrossrefWork

    work = CrossrefWork("10.1234/abc", None, [{"type": ["retraction"]}, {"type": {"a": 1}}, {"type": "retraction", "DOI": "x"}])
    assert work.retraction == {"type": "retraction", "DOI": "x"}
