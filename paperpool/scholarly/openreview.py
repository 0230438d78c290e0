"""OpenReview's API (api2.openreview.net/notes?id=ID): a submission's note as JSON, read
as the BibTeX record of a conference paper, so that import-bib's code makes the stub. API
version 2 wraps each content field as {"value": ...}; version 1 notes (older venues, on
api.openreview.net) hold the value itself: both are read."""

from __future__ import annotations

import datetime as dt

from paperpool.formats.bibtex.reading import BibRecord, person
from paperpool.pool.adding import suggested_key

from .client import Client, malformed, parsed_json
from .services import OPENREVIEW


def fetch(client: Client, forum_id: str, line: int = 1) -> BibRecord | None:
    """The submission OpenReview has under this id, or None."""
    answer = client.get(OPENREVIEW, "/notes", {"id": forum_id})
    if answer is None:
        return None
    return parse(answer.text, answer.url, forum_id, line)


def parse(text: str, url: str, forum_id: str, line: int = 1) -> BibRecord | None:
    body = parsed_json(OPENREVIEW, url, text)
    notes = body.get("notes") if isinstance(body, dict) else None
    if not isinstance(notes, list):
        raise malformed(OPENREVIEW, url, "no `notes` list")
    if not notes:
        return None
    note = notes[0]
    content = note.get("content") if isinstance(note, dict) else None
    if not isinstance(content, dict):
        raise malformed(OPENREVIEW, url, "a note without content")
    title, authors, venue = _value(content, "title"), _value(content, "authors"), _value(content, "venue")
    if not isinstance(title, str) or not title.strip():
        raise malformed(OPENREVIEW, url, "a note without a title")
    people = [person(name) for name in authors if isinstance(name, str) and name.strip()] if isinstance(authors, list) else []
    fields = {"title": " ".join(title.split()), "url": f"https://openreview.net/forum?id={note.get('forum') or forum_id}"}
    if isinstance(venue, str) and venue.strip():
        fields["booktitle"] = " ".join(venue.split())
    year = _year(note)
    if year:
        fields["year"] = year
    key = suggested_key({"authors": people, "year": year, "title": fields["title"]})
    return BibRecord(key, "inproceedings", line, fields, people)


def _value(content: dict, name: str):
    value = content.get(name)
    return value.get("value") if isinstance(value, dict) else value


def _year(note: dict) -> str | None:
    """The year it was published (pdate), else created (cdate): milliseconds since 1970."""
    for stamp in (note.get("pdate"), note.get("odate"), note.get("cdate")):
        if isinstance(stamp, int) and not isinstance(stamp, bool) and 0 < stamp < 10**14:
            return str(dt.datetime.fromtimestamp(stamp / 1000, dt.UTC).year)
    return None
