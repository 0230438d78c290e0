"""Random input (hypothesis): validate and trace validate accept or say why, never crash;
whatever validate accepts, build renders.

Each property runs the real command in-process on a copy of the tiny pool with one
random file in it. A crash is an exception out of the command (the runner does not
catch them), so hypothesis shrinks it to the smallest input that causes it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperpool.cli.commands import cli

from .conftest import REPO, TINY

pytestmark = pytest.mark.slow  # real builds, installs or long runs: left out of the quick run, run by scripts/test and CI

ENTRY_FIELDS = ["key", "title", "authors", "year", "urls", "method", "unit", "decisions", "summary"]
PROBLEM = re.compile(r"^[\w./-]+\.yaml:\d+: \S")
SUMMARY = re.compile(r"^(\d+ errors?, \d+ warnings?\.|ok: \d+ entr(y|ies) and \d+ exclusions?, no problems\.)$")
FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(root: Path, *args: str):
    return CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)


def _copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz") / "tiny"
    shutil.copytree(TINY, root)
    return root


def _accepted_or_explained(result) -> None:
    """Exit 0, or exit 1 with one problem per line and the count; never anything else."""
    assert result.exit_code in (0, 1), result.output
    lines = result.output.splitlines()
    assert lines and SUMMARY.match(lines[-1]), result.output
    assert all(PROBLEM.match(line) for line in lines[:-1]), result.output
    errors = int(lines[-1].split()[0]) if lines[-1][0].isdigit() else 0
    assert (result.exit_code == 1) == (errors > 0), result.output


# ---------------------------------------------------------------------------------
# Values of any shape: wrong types, any unicode, huge strings, nesting
# ---------------------------------------------------------------------------------

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)  # lone surrogates cannot be UTF-8
huge = st.builds(lambda piece, times: piece * times, st.text(min_size=1, max_size=4), st.integers(1_000, 300_000))
tricky = st.sampled_from(
    [
        "TODO",
        "",
        "yes",
        "no",
        "null",
        "~",
        "2025",
        "rl",
        "D1",
        "https://example.org/x",
        "javascript:alert(1)",
        "data:text/html,<b>x</b>",
        "\u202ertl",
        "<script>x</script>",
        "{{ 7*7 }}",
        "[a](b)",
        "| a |",
        "../x",
        "a\nb",
        "\x00",
        "\x1b[2J",
        "9" * 5000,
    ]
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(10**30), 10**30),
    st.floats(),
    text,
    tricky,
    huge,
    st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)),
)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text | tricky, inner, max_size=4), max_leaves=12
)


@st.composite
def entries(draw) -> dict:
    """A record shaped like the tiny pool's, every field possibly wrong, possibly more fields."""
    entry = {name: draw(values) for name in draw(st.lists(st.sampled_from(ENTRY_FIELDS), unique=True))}
    if draw(st.booleans()):
        entry["key"] = "fuzz"
    entry.update(draw(st.dictionaries(text | tricky, values, max_size=2)))
    return entry


def _dump(entry: dict) -> str:
    return yaml.safe_dump(entry, allow_unicode=True, sort_keys=False, width=10**9)


def test_validate_accepts_or_explains_any_random_entry(tmp_path_factory):
    root = _copy(tmp_path_factory)
    target = root / "papers" / "fuzz.yaml"

    @FAST
    @given(entry=entries())
    def check(entry):
        target.write_text(_dump(entry), encoding="utf-8")
        _accepted_or_explained(_run(root, "validate"))

    check()


@st.composite
def mangled(draw) -> bytes:
    """A real record with random bytes or characters put in, cut out or swapped."""
    data = bytearray((TINY / "papers" / f"{draw(st.sampled_from(['alpha', 'beta', 'gamma']))}.yaml").read_bytes())
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        choice = draw(st.integers(0, 2))
        if choice == 0:
            data[at:at] = draw(
                st.binary(min_size=1, max_size=8)
                | st.sampled_from(
                    [
                        b"\t",
                        b": ",
                        b"- ",
                        b"&a ",
                        b"*a",
                        b"!!python/object:os.system ",
                        b"{",
                        b"[",
                        b"'",
                        b'"',
                        b"\n  ",
                        b"---\n",
                        b"\xef\xbb\xbf",
                        b"\xff",
                        b"%YAML 1.1\n",
                        b"? ",
                        b"<<: ",
                        b"!!binary ",
                        b"\\u202e",
                    ]
                )
            )
        elif choice == 1:
            del data[at : at + draw(st.integers(1, 10))]
        else:
            data[at : at + 1] = bytes([draw(st.integers(0, 255))])
    return bytes(data)


def test_validate_accepts_or_explains_any_mangled_file(tmp_path_factory):
    root = _copy(tmp_path_factory)
    target = root / "papers" / "alpha.yaml"

    @FAST
    @given(data=mangled())
    def check(data):
        target.write_bytes(data)
        _accepted_or_explained(_run(root, "validate"))

    check()


# ---------------------------------------------------------------------------------
# Whatever validate accepts, build renders
# ---------------------------------------------------------------------------------

readable = st.text(
    st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from(list("<>&\"'[](){}|*_`#!\\\u202e\n")),
    min_size=1,
    max_size=60,
).filter(lambda s: s.strip())
valid_entries = st.fixed_dictionaries(
    {
        "key": st.just("fuzz"),
        "title": readable,
        "authors": st.lists(readable, min_size=1, max_size=3),
        "year": st.integers(1900, dt.date.today().year),
        "urls": st.lists(
            st.builds("https://example.org/{}".format, st.text("abc/?=&%#<>'\"", max_size=12)),
            min_size=1,
            max_size=2,
            unique=True,
        ),
        "method": st.sampled_from(["rl", "prompting", "search"]),
        "unit": st.sampled_from(["team", "agent", "step", None]),
        "decisions": st.dictionaries(st.sampled_from(["D1", "D2"]), st.sampled_from(["trained", "designed"])),
        "summary": readable,
    }
)


def test_whatever_validate_accepts_build_renders(tmp_path_factory):
    root = _copy(tmp_path_factory)
    target = root / "papers" / "fuzz.yaml"
    site = root.parent / "site"

    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entry=valid_entries)
    def check(entry):
        target.write_text(_dump(entry), encoding="utf-8")
        result = _run(root, "validate")
        _accepted_or_explained(result)
        if result.exit_code == 0:
            built = _run(root, "build", "--out", str(site))
            assert built.exit_code == 0, built.output
            assert (site / "entries" / "fuzz.html").is_file()

    check()


# ---------------------------------------------------------------------------------
# Traces: random JSON documents and mutated copies of the example traces
# ---------------------------------------------------------------------------------

TRACE_LINE = re.compile(r"^\S+\.json: \S")
EXAMPLES = sorted((REPO / "traces").glob("*.json"))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False, allow_infinity=False) | text | tricky,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(text | st.sampled_from(["id", "t", "type", "src", "dst", "events", "edges"]), inner, max_size=5)
    ),
    max_leaves=20,
)


def _trace_checked(root: Path, path: Path) -> None:
    result = _run(root, "trace", "validate", str(path))
    assert result.exit_code in (0, 1), result.output
    lines = result.output.rstrip("\n").split("\n")  # not splitlines(), which also breaks at \x1c-\x1e and \x85
    assert lines and all(TRACE_LINE.match(line) for line in lines), result.output
    # (as lines of their own: a trace may quote any text, a key named "Traceback" among them)
    assert not any(line.startswith(("Traceback (most recent call last)", "Error: internal error")) for line in lines)


def test_trace_validate_accepts_or_explains_any_json(tmp_path_factory):
    root = _copy(tmp_path_factory)
    target = root / "random.json"

    @FAST
    @given(document=json_values)
    def check(document):
        target.write_text(json.dumps(document), encoding="utf-8")
        _trace_checked(root, target)

    check()


@st.composite
def mutated_traces(draw) -> bytes:
    """An example trace with values replaced, keys removed, or its text cut or spliced."""
    source = draw(st.sampled_from(EXAMPLES))
    document = json.loads(source.read_text(encoding="utf-8"))
    for _ in range(draw(st.integers(1, 4))):
        node, parent, key = document, None, None
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            parent, key = node, draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
            node = node[key]
        if parent is None:
            continue
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = draw(json_values)
    text = json.dumps(document).encode("utf-8")
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from([b"", b"NaN", b"Infinity", b"-Infinity", b"1e999", b"[", b"}", b"\xff", b"\x00"]))
    return text


def test_trace_validate_accepts_or_explains_any_mutated_example(tmp_path_factory):
    root = _copy(tmp_path_factory)
    target = root / "mutated.json"

    @FAST
    @given(data=mutated_traces())
    def check(data):
        target.write_bytes(data)
        _trace_checked(root, target)

    check()
