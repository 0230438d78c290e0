"""The strict YAML reader and the atomic writer."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from paperpool.files.yamlio import YamlProblem, dump_yaml, parse_yaml, write_atomic

HERE = Path("x.yaml")


def test_yes_and_no_stay_words():
    doc = parse_yaml("is_rl: yes\nverified: no\nflag: true\n", HERE)
    assert doc.data == {"is_rl": "yes", "verified": "no", "flag": True}


def test_field_lines_are_remembered():
    doc = parse_yaml("key: a\ntitle: b\nsub:\n  inner: c\nlist:\n  - d\n", HERE)
    assert (doc.line("title"), doc.line("sub", "inner"), doc.line("list", 0), doc.line("missing")) == (2, 4, 6, 1)


def test_duplicate_keys_are_refused_with_both_lines():
    with pytest.raises(YamlProblem) as info:
        parse_yaml("key: a\ntitle: b\ntitle: c\n", HERE)
    assert (info.value.line, info.value.message) == (3, "duplicate field 'title' (first on line 2); keep one of them")


def test_an_alias_bomb_is_refused_at_the_first_alias():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9)
    )
    with pytest.raises(YamlProblem) as info:
        parse_yaml(bomb, HERE)
    assert (info.value.line, info.value.field, info.value.message) == (
        2,
        "b",
        "YAML alias '*a' is not allowed in pool files; write the value out in full",
    )


def test_a_scalar_alias_is_refused():
    with pytest.raises(YamlProblem) as info:
        parse_yaml("key: &k magrpo\ntitle: *k\n", HERE)
    assert "YAML alias" in info.value.message


def test_python_tags_are_refused():
    with pytest.raises(YamlProblem) as info:
        parse_yaml("key: !!python/object/apply:os.system ['true']\n", HERE)
    assert (info.value.field, info.value.message) == (
        "key",
        "YAML tag '!!python/object/apply:os.system' is not allowed; write a plain value",
    )


def test_dump_quotes_what_other_readers_would_misread():
    text = dump_yaml({"is_rl": "yes", "arxiv_id": "2510.04670", "date": dt.date(2026, 4, 26), "n": None})
    assert text == "is_rl: 'yes'\narxiv_id: '2510.04670'\ndate: 2026-04-26\nn: null\n"
    assert parse_yaml(text, HERE).data["arxiv_id"] == "2510.04670"


def test_write_atomic_replaces_whole_and_leaves_no_temporary(tmp_path):
    (tmp_path / "a").mkdir()
    target = tmp_path / "a" / "b.yaml"
    write_atomic(target, "one\n")
    write_atomic(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in target.parent.iterdir()] == ["b.yaml"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: !!bool foo\n", "'foo' is not a value YAML can read; correct it (dates are YYYY-MM-DD)"),
        ("a: !!timestamp foo\n", "'foo' is not a real date; correct it (dates are YYYY-MM-DD)"),
        ("a:\n  - !!int x\n", "'x' is not a value YAML can read; correct it (dates are YYYY-MM-DD)"),
    ],
)
def test_a_tagged_value_its_tag_cannot_read_is_a_problem_not_a_crash(text, message):
    # pyyaml answers `!!bool foo` with KeyError and `!!timestamp foo` with AttributeError
    with pytest.raises(YamlProblem) as info:
        parse_yaml(text, HERE)
    assert (info.value.line, info.value.field, info.value.message) == (text.count("\n"), "a", message)


def test_every_kind_of_scalar_keeps_its_type_its_text_and_its_line():
    text = (
        "n: 3\nf: 1.5\nx: 0x1F\nd: 2026-04-26\nt: 2026-04-26 10:00:00+05:30\nb: false\nz: ~\ne:\nq: '3'\n"
        "w: word\ns: !!str 12\nl:\n  - 1\n  - 'two'\n  - yes\n=x: 1\n"
    )
    doc = parse_yaml(text, HERE)
    assert doc.data == {
        "n": 3,
        "f": 1.5,
        "x": 31,
        "d": dt.date(2026, 4, 26),
        "t": dt.datetime(2026, 4, 26, 10, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
        "b": False,
        "z": None,
        "e": None,
        "q": "3",
        "w": "word",
        "s": "12",
        "l": [1, "two", "yes"],
        "=x": 1,
    }
    assert (doc.raw[("x",)], doc.raw[("q",)], doc.raw[("l", 2)]) == ("0x1F", "3", "yes")
    assert (doc.line("s"), doc.line("l", 1), doc.line("=x")) == (11, 14, 16)


@pytest.mark.parametrize(
    "text, message",
    [
        ("=: 1\n", "a field name with YAML tag '!!value' is not allowed; write a plain word"),
        ("a: =\n", "YAML tag '!!value' is not allowed; write a plain value"),
        ("<<: {b: 1}\n", "YAML merge key '<<' is not allowed in pool files; write the fields out in full"),
    ],
)
def test_words_a_resolver_reads_as_a_tag_are_refused(text, message):
    with pytest.raises(YamlProblem) as info:
        parse_yaml(text, HERE)
    assert info.value.message == message


def test_two_equal_dates_are_two_objects_so_that_a_writer_does_not_alias_them():
    # one date object in two places would be written back as `&id001 2026-05-03` and `*id001`
    doc = parse_yaml("date_added: 2026-05-03\nsecond_reading:\n  date: 2026-05-03\n", HERE)
    assert doc.data["date_added"] == doc.data["second_reading"]["date"]
    assert doc.data["date_added"] is not doc.data["second_reading"]["date"]
    assert "&" not in dump_yaml(doc.data)
    again = parse_yaml("d: 2026-05-03\n", HERE)
    assert again.data["d"] is not doc.data["date_added"]


def test_every_bidirectional_control_is_escaped_in_messages_and_dropped_from_text_for_people():
    """The marks (U+061C, U+200E, U+200F), embeddings, overrides and isolates, from their
    one home: escaped where a message quotes a value, dropped where a page shows it."""
    from paperpool.files.problems import printable
    from paperpool.rendering.markdown import visible

    for character in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069":
        assert printable(f"a{character}b") == f"a\\u{ord(character):04x}b"
        assert visible(f"a{character}b") == "ab"
