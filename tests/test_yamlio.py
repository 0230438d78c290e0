"""The strict YAML reader and the atomic writer."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from paperpool.yamlio import YamlProblem, dump_yaml, parse_yaml, write_atomic

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
        2, "b", "YAML alias '*a' is not allowed in pool files; write the value out in full"
    )


def test_a_scalar_alias_is_refused():
    with pytest.raises(YamlProblem) as info:
        parse_yaml("key: &k magrpo\ntitle: *k\n", HERE)
    assert "YAML alias" in info.value.message


def test_python_tags_are_refused():
    with pytest.raises(YamlProblem) as info:
        parse_yaml("key: !!python/object/apply:os.system ['true']\n", HERE)
    assert (info.value.field, info.value.message) == (
        "key", "YAML tag '!!python/object/apply:os.system' is not allowed; write a plain value"
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
