"""`paperpool refresh` on a copy of the pool against the local server, with three changes
planted in the fixtures: Agent Lightning's arXiv record now carries a journal reference
and a DOI (tests/scholarly/arxiv-2508.03680-published.xml), Crossref holds a retraction
notice for the Dec-POMDP paper's DOI (crossref-planted-retraction-*.json: the real work,
the notice added), and a link of agentspawn that failed 8 days ago fails again."""

from __future__ import annotations

import json
import re
import time

import pytest
from werkzeug import Response

from paperpool.scholarly import client

from ..conftest import edit
from .answers import FIXTURES, GRESHAKE, GRESHAKE_PUBLISHED, JSON, NO_WORKS, XML

# test_scholarly's fixtures: its local server, with the client's waits recorded

EMPTY_FEED = (FIXTURES / "arxiv-empty.xml").read_text(encoding="utf-8")


def _entry(feed: str) -> str:
    return feed[feed.index("<entry>") : feed.index("</entry>") + len("</entry>")] + "\n"


@pytest.fixture
def planted(pool_copy, request, monkeypatch, tmp_path):
    server = request.getfixturevalue("server")
    published = (FIXTURES / "arxiv-2508.03680-published.xml").read_text(encoding="utf-8")
    asked = []

    listed = {"2508.03680": _entry(published), "2302.12173": _entry(GRESHAKE)}
    request.node.arxiv_listed = listed  # a test may list more

    def arxiv_batch(request):  # refresh asks for many ids at once: the planted one has news, Greshake et al.'s
        ids = request.args["id_list"].split(",")  # none (arXiv knows nothing of its publication), the others are not listed
        asked.append(len(ids))
        entries = "".join(listed[one] for one in ids if one in listed)
        feed = EMPTY_FEED.replace("xmlns:opensearch=", 'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns:opensearch=')
        return Response(feed.replace("</feed>", entries + "</feed>"), content_type=XML)

    def openalex_works(request):  # the version of record of Greshake et al.'s preprint; no other work
        held = "doi:10.48550/arxiv.2302.12173" in request.args["filter"].split("|")
        return Response(GRESHAKE_PUBLISHED if held else NO_WORKS, content_type=JSON)

    server.expect_request("/api/query").respond_with_handler(arxiv_batch)
    server.expect_request("/openalex/works").respond_with_handler(openalex_works)
    retraction = (FIXTURES / "crossref-planted-retraction-10.1287-moor.27.4.819.297.json").read_text(encoding="utf-8")
    request.node.crossref_retraction = json.loads(retraction)  # a test may change it
    server.expect_request("/crossref/works/10.1287/moor.27.4.819.297").respond_with_handler(
        lambda _: Response(json.dumps(request.node.crossref_retraction), content_type=JSON)
    )
    server.expect_request("/gone").respond_with_data("Not Found", status=404)
    # every other DOI: Crossref does not hold it
    server.expect_request(re.compile("^/crossref/")).respond_with_data("Resource not found.", status=404)
    gone = server.url_for("/gone")
    edit(pool_copy / "papers" / "agentspawn.yaml", "urls:\n", f"urls:\n- {gone}\n")
    (tmp_path / "cache").mkdir(exist_ok=True)
    (tmp_path / "cache" / "links.json").write_text(json.dumps({gone: time.time() - 8 * 86400}), encoding="utf-8")
    real = client.Client.link_failure
    # the pool's other links are on the real web, which the tests never reach
    monkeypatch.setattr(
        client.Client, "link_failure", lambda self, service, url: real(self, service, url) if url == gone else None
    )
    request.node.arxiv_batches = asked
    return pool_copy, gone


@pytest.mark.slow
def test_refresh_check_reports_the_planted_changes_and_exits_1(run, planted, snapshot, request):
    pool, gone = planted
    before = snapshot(pool)
    result = run("refresh", "--check", cwd=pool)
    assert (result.exit_code, result.output) == (
        1,
        (
            "papers/agent-lightning.yaml: published: arXiv 2508.03680 is now published: venue Planted Conference on "
            "Agents 2026, doi 10.5555/planted.2026.42\n"
            "papers/dec-pomdp2002.yaml: retracted: Crossref holds a retraction notice for 10.1287/moor.27.4.819.297: "
            "10.1287/moor.planted.retraction (2026-10-01) (not changed by --write: for a maintainer to judge)\n"
            f"papers/agentspawn.yaml: dead_link: {gone} failed twice, 7+ days apart (HTTP 404)\n"
            "3 changes found outside the pool.\n"
        ),
    )
    assert snapshot(pool) == before
    named = {
        m
        for path in (pool / "papers").glob("*.yaml")
        for m in re.findall(r"^arxiv_id: '([^']+)'$", path.read_text(encoding="utf-8"), re.MULTILINE)
    }
    named |= {
        m
        for path in (pool / "exclusions").glob("*.yaml")
        for m in re.findall(r"^identifier: arXiv:(\S+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    }
    # every arXiv id of the entries and the exclusions, 50 to a request, not one request each
    assert request.node.arxiv_batches == [50, len(named) - 50]


@pytest.mark.slow
def test_an_exclusions_dead_link_is_reported_and_kept(run, planted):
    """An exclusion's one link (its `url`) is checked too; being its only link, it is
    reported for a maintainer to find the new address, not removed."""
    pool, gone = planted
    edit(pool / "papers" / "agentspawn.yaml", f"- {gone}\n", "")  # the dead address moves to the exclusion
    edit(pool / "exclusions" / "e001.yaml", "url: https://arxiv.org/abs/2305.14325", f"url: {gone}")
    result = run("refresh", "--check", cwd=pool)
    assert result.exit_code == 1
    assert (
        f"exclusions/e001.yaml: dead_link: {gone} failed twice, 7+ days apart (HTTP 404) (not changed by --write: for a "
        "maintainer to judge)"
    ) in result.output.splitlines()
    before = (pool / "exclusions" / "e001.yaml").read_text(encoding="utf-8")
    assert run("refresh", "--write", cwd=pool).exit_code == 0
    assert (pool / "exclusions" / "e001.yaml").read_text(encoding="utf-8") == before


@pytest.mark.slow
def test_refresh_write_applies_the_facts_and_records_them(run, planted):
    pool, gone = planted
    path = pool / "papers" / "agent-lightning.yaml"
    modeline = "# yaml-language-server: $schema=../schemas/entry.schema.json\n"
    path.write_text(modeline + path.read_text(encoding="utf-8"), encoding="utf-8")
    result = run("refresh", "--write", cwd=pool)
    assert result.exit_code == 0 and result.output.endswith("3 changes found outside the pool, 2 records updated.\n")
    lightning = path.read_text(encoding="utf-8")
    assert lightning.startswith(modeline + "key: agent-lightning\n")  # the file's comments kept above the record
    assert "\nvenue: Planted Conference on Agents 2026\n" in lightning and "\ndoi: 10.5555/planted.2026.42\n" in lightning
    assert lightning.endswith(
        "  was:\n    venue: arXiv\n    doi: null\n"
        "  why: 'refresh: arXiv 2508.03680 is now published: venue Planted Conference on Agents 2026, doi "
        "10.5555/planted.2026.42'\n"
    )
    spawn = (pool / "papers" / "agentspawn.yaml").read_text(encoding="utf-8")
    assert "\nurls:\n- https://arxiv.org/abs/2602.07072\ncategory:" in spawn  # the dead link gone, in `was` only
    assert f"  was:\n    urls:\n    - {gone}\n    - https://arxiv.org/abs/2602.07072\n" in spawn
    result = run("validate", cwd=pool)
    assert (result.exit_code, result.output) == (0, "ok: 84 entries and 32 exclusions, no problems.\n")


@pytest.mark.slow
def test_one_failure_of_a_link_is_not_dead(run, planted, tmp_path):
    pool, gone = planted
    (tmp_path / "cache" / "links.json").unlink()
    result = run("refresh", "--check", cwd=pool)
    assert gone not in result.output and result.output.endswith("2 changes found outside the pool.\n")
    assert gone in json.loads((tmp_path / "cache" / "links.json").read_text(encoding="utf-8"))  # remembered


@pytest.mark.slow
def test_every_link_failing_is_the_network_not_the_links(run, planted, monkeypatch, snapshot):
    pool, _ = planted
    monkeypatch.setattr(client.Client, "link_failure", lambda self, service, url: "could not be reached (offline)")
    before = snapshot(pool)
    result = run("refresh", "--write", cwd=pool)
    assert result.exit_code == 1
    assert result.output.startswith("Error: none of the pool's ") and result.output.endswith(
        " links answered (the first: could not be reached (offline)); check the network connection, or run "
        "refresh --no-links. Nothing was written.\n"
    )
    assert snapshot(pool) == before


@pytest.mark.slow
def test_a_preprint_whose_version_of_record_openalex_lists_is_published(run, planted):
    """arXiv often learns nothing of a paper's publication (no journal reference, no DOI)
    while OpenAlex joins the preprint to its version of record: Greshake et al.'s record,
    set back to before its publication, gets the venue and DOI OpenAlex lists."""
    pool, _ = planted
    path = pool / "papers" / "greshake2023.yaml"
    edit(path, "\nvenue: ACM AISec 2023\n", "\nvenue: arXiv\n")
    edit(path, "\ndoi: 10.1145/3605764.3623985\n", "\ndoi: null\n")
    result = run("refresh", "--check", cwd=pool)
    assert result.exit_code == 1
    assert (
        "papers/greshake2023.yaml: published: arXiv 2302.12173 is now published (venue and doi of its version of "
        "record, as OpenAlex lists it): venue ACM AISec 2023, doi 10.1145/3605764.3623985"
    ) in result.output.splitlines()
    assert result.output.endswith("4 changes found outside the pool.\n")
    assert run("refresh", "--write", cwd=pool).exit_code == 0
    record = path.read_text(encoding="utf-8")
    assert "\nvenue: ACM AISec 2023\n" in record and "\ndoi: 10.1145/3605764.3623985\n" in record
    assert record.endswith(
        "  was:\n    venue: arXiv\n    doi: null\n  why: 'refresh: arXiv 2302.12173 is now published (venue "
        "and doi of its version of record, as OpenAlex\n    lists it): venue ACM AISec 2023, doi 10.1145/3605764.3623985'\n"
    )
    result = run("validate", cwd=pool)
    assert (result.exit_code, result.output) == (0, "ok: 84 entries and 32 exclusions, no problems.\n")


@pytest.mark.slow
def test_an_exclusions_withdrawn_paper_is_reported_for_a_maintainer(run, planted, request):
    """An exclusion names its paper by a prefixed identifier (arXiv:2305.14325): arXiv is
    asked about it too. Planted: arXiv lists that paper as withdrawn."""
    pool, _ = planted
    withdrawn = (
        _entry(GRESHAKE)
        .replace("2302.12173", "2305.14325")
        .replace("</entry>", "  <arxiv:comment>This paper has been withdrawn by the authors.</arxiv:comment>\n  </entry>")
    )
    request.node.arxiv_listed["2305.14325"] = withdrawn
    result = run("refresh", "--check", "--no-links", cwd=pool)
    assert result.exit_code == 1
    assert (
        "exclusions/e001.yaml: withdrawn: arXiv 2305.14325v2 says: This paper has been withdrawn by the authors. "
        "(not changed by --write: for a maintainer to judge)"
    ) in result.output.splitlines()


@pytest.mark.slow
def test_refresh_write_refuses_a_service_value_validate_would_refuse(run, planted, request, snapshot):
    """Issue 39's sixth review: a journal reference holding a control character (XML allows
    &#x9b;) was written into the record, and printed raw; validate then refused the pool."""
    pool, _ = planted
    published = (FIXTURES / "arxiv-2508.03680-published.xml").read_text(encoding="utf-8")
    hostile = published.replace("Planted Conference on Agents 2026", "Evil &#x9b;2J &#x202e;lanruoJ")
    request.node.arxiv_listed["2508.03680"] = _entry(hostile)
    before = snapshot(pool)
    result = run("refresh", "--write", cwd=pool)
    assert result.exit_code == 1 and "\x9b" not in result.output and "\u202e" not in result.output
    assert "papers/agent-lightning.yaml: the services' answers would make a record validate refuses" in result.output
    assert snapshot(pool) == before


@pytest.mark.slow
@pytest.mark.parametrize("date_parts", [5, {"0": [2026]}, [5], [[None]], "2026-10-01", [[2026, {"month": 10}]]])
def test_a_retraction_notice_with_a_date_of_another_shape_is_reported_undated(run, planted, request, snapshot, date_parts):
    """A hostile review: Crossref's `updated.date-parts` as a number or a mapping crashed
    refresh (TypeError, KeyError); the notice is still reported, undated."""
    pool, _ = planted
    request.node.crossref_retraction["message"]["updated-by"][0]["updated"]["date-parts"] = date_parts
    before = snapshot(pool)
    result = run("refresh", "--check", "--no-links", cwd=pool)
    assert (result.exit_code, result.output) == (
        1,
        (
            "papers/agent-lightning.yaml: published: arXiv 2508.03680 is now published: venue Planted Conference on "
            "Agents 2026, doi 10.5555/planted.2026.42\n"
            "papers/dec-pomdp2002.yaml: retracted: Crossref holds a retraction notice for 10.1287/moor.27.4.819.297: "
            "10.1287/moor.planted.retraction (undated) (not changed by --write: for a maintainer to judge)\n"
            "2 changes found outside the pool.\n"
        ),
    )
    assert snapshot(pool) == before


@pytest.mark.slow
@pytest.mark.parametrize("field", ["updated-by", "relation"])
def test_crossref_lists_of_another_shape_are_read_as_none(run, planted, request, snapshot, field):
    """A hostile review: Crossref's `updated-by`, or `relation`'s `is-preprint-of`, as a
    number crashed refresh and add (TypeError); read as no notice, or no relation."""
    pool, _ = planted
    message = request.node.crossref_retraction["message"]
    if field == "updated-by":
        message["updated-by"] = 5
    else:
        message["relation"] = {"is-preprint-of": 5}
    before = snapshot(pool)
    result = run("refresh", "--check", "--no-links", cwd=pool)
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert result.exit_code == 1
    assert ("retracted:" in result.output) == (field != "updated-by")
    assert snapshot(pool) == before


@pytest.mark.slow
def test_a_link_whose_version_is_thousands_of_digits_is_no_versioned_link(run, planted, request, snapshot):
    """A hostile review: a link to arXiv's page with v and 5,000 digits passes validate, and
    refresh crashed reading its version (int() refuses over 4,300 digits). No arXiv version
    is that long: it is no versioned link, while a link to an older version is still one."""
    pool, _ = planted
    request.node.arxiv_listed["1707.06347"] = _entry(GRESHAKE).replace("2302.12173", "1707.06347")  # v2
    hostile = "https://arxiv.org/abs/1707.06347v" + "1" * 5000
    edit(
        pool / "papers" / "ppo2017.yaml",
        "urls:\n- https://arxiv.org/abs/1707.06347\n",
        f"urls:\n- https://arxiv.org/abs/1707.06347\n- https://arxiv.org/abs/1707.06347v1\n- {hostile}\n",
    )
    assert run("validate", cwd=pool).exit_code == 0
    before = snapshot(pool)
    result = run("refresh", "--check", "--no-links", cwd=pool)
    assert (result.exit_code, result.output) == (
        1,
        (
            "papers/agent-lightning.yaml: published: arXiv 2508.03680 is now published: venue Planted Conference on "
            "Agents 2026, doi 10.5555/planted.2026.42\n"
            "papers/dec-pomdp2002.yaml: retracted: Crossref holds a retraction notice for 10.1287/moor.27.4.819.297: "
            "10.1287/moor.planted.retraction (2026-10-01) (not changed by --write: for a maintainer to judge)\n"
            "papers/ppo2017.yaml: version: https://arxiv.org/abs/1707.06347v1 links version 1; arXiv has v2 (not changed "
            "by --write: for a maintainer to judge)\n"
            "3 changes found outside the pool.\n"
        ),
    )
    assert snapshot(pool) == before


@pytest.mark.slow
@pytest.mark.parametrize("distinct", [False, True], ids=["plain", "distinct_from-on-the-updated-record"])
def test_refresh_write_refuses_to_give_a_record_an_id_another_holds(run, planted, snapshot, distinct):
    """The published version's DOI OpenAlex lists is one another record already holds:
    written, it left a pool validate refuses, with exit 0 (the eleventh review). Now
    nothing is written, and the line names both records."""
    pool, _ = planted
    path = pool / "papers" / "greshake2023.yaml"
    edit(path, "\nvenue: ACM AISec 2023\n", "\nvenue: arXiv\n")
    edit(path, "\ndoi: 10.1145/3605764.3623985\n", "\ndoi: null\n")
    edit(pool / "papers" / "malt.yaml", "\ndoi: null\n", "\ndoi: 10.1145/3605764.3623985\n")
    if distinct:  # validate lets a shared id pass in one order of the files only: refresh never relies on it (the twelfth review)
        edit(path, "\ndistinct_from: []\n", "\ndistinct_from: [malt]\n")
    before = snapshot(pool)
    result = run("refresh", "--write", cwd=pool)
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        1,
        "Error: papers/greshake2023.yaml: the services' answers would give it DOI 10.1145/3605764.3623985, which "
        "papers/malt.yaml holds; nothing was written (if the two are one paper, merge them by hand; else check the "
        "paper's page)",
    )
    assert snapshot(pool) == before


@pytest.mark.slow
def test_a_history_with_no_room_is_said_as_such(run, planted, snapshot):
    """A record already holding 200 changes: the update's entry would make 201, and the
    refusal blamed the services' answers (the eleventh review)."""
    pool, _ = planted
    path = pool / "papers" / "greshake2023.yaml"
    edit(path, "\nvenue: ACM AISec 2023\n", "\nvenue: arXiv\n")
    edit(path, "\ndoi: 10.1145/3605764.3623985\n", "\ndoi: null\n")
    entry = "- date: 2026-11-23\n  was:\n    venue: arXiv\n  why: Read again.\n"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(entry * 199)
    assert run("validate", cwd=pool).exit_code == 0
    before = snapshot(pool)
    result = run("refresh", "--write", cwd=pool)
    assert result.exit_code == 1
    assert result.output.splitlines()[-2:] == [
        "Error: papers/greshake2023.yaml: its changes cannot take the entry this update records; nothing was written "
        "(move its older entries out of changes by hand, then run refresh --write again)",
        "papers/greshake2023.yaml:1: changes: lists 201 changes, over 200; keep the retaggings that changed what the record says",
    ]
    assert snapshot(pool) == before


@pytest.mark.slow
def test_refresh_write_refuses_a_doi_holding_tex(run, planted, request, snapshot):
    """Issue 39's sixteenth review: Crossref's `is-preprint-of` naming
    `10.9999/...\\input{/etc/hostname}` was written as the record's DOI, which validate
    accepted and the BibTeX export wrote for TeX to run. No DOI holds a backslash or a
    brace: validate refuses it, and so refresh --write writes nothing."""
    pool, _ = planted
    hostile = "10.9999/x\\input{/etc/hostname}"
    request.node.crossref_retraction["message"]["relation"] = {"is-preprint-of": [{"id-type": "doi", "id": hostile}]}
    before = snapshot(pool)
    result = run("refresh", "--write", "--no-links", cwd=pool)
    assert result.exit_code == 1
    assert "papers/dec-pomdp2002.yaml: the services' answers would make a record validate refuses" in result.output
    assert snapshot(pool) == before
