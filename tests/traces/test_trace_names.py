"""Names in traces are untrusted input (issue 16): a pull request can name a trace file
anything a file system allows, and a trace's ids and agents anything JSON allows.

A file name reaches the site's pages only as text; the site's file names and links are
built from a unique slug of it. Every message of `trace validate`, `metrics` and
`import-otlp` shows a name with its escape sequences and bidirectional controls escaped.
Names with a hostile name cannot be committed portably, so they are made here.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import posixpath
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from paperpool.sitegen.linkcheck import check_site
from paperpool.traces.site.gallery import MAX_SITE_NAME, site_names

from ..conftest import REPO, TINY
from ..sitegen.elements import Elements

TRACE = REPO / "traces" / "debate-two-rounds.json"
# Sequences a terminal acts on that click does not strip (an OSC title, a bell) and a
# right-to-left override; and one it strips (clear the screen), which must not reach it either.
ESCAPES = "\x1b[2J\x1b]0;pwned\x07\u202e"
SHOWN_ESCAPES = "\\x1b[2J\\x1b]0;pwned\\x07\\u202e"
# Stems of trace files (each gets .json): markup, link syntax, paths, slashes of other
# scripts, letter case, a slug shared, length, escapes, nothing a slug keeps.
HOSTILE_STEMS = [
    "x.svg#x) <img src=x onerror=alert(1)> (y",
    '"><svg onload=alert(2)>',
    "'><iframe src=javascript:alert(3)>",
    "[x](javascript:alert(4))",
    "..",
    "%2e%2e%2fetc%2fpasswd",
    "a\u2215b",  # division slash
    "a\uff0fb",  # fullwidth solidus
    "a.b",
    "a-b",
    "Plan",
    "plan",
    "PLAN",
    "L" * 240,
    f"esc{ESCAPES}",
    "line\nbreak",
    "\u6e2c\u8a66",
    "-",
    "orchestration-trace.v1.schema",  # the name of the schema's file in the site
    "q?x=1#frag",
]
UNDECODABLE = b"bytes\xff"  # not UTF-8: Python names it with a lone surrogate; refused (test_a_name_that_is_not_utf8...)


def _lay_traces(folder: Path) -> list[str]:
    """The debate trace under every hostile name; the files' names as listed."""
    folder.mkdir(parents=True, exist_ok=True)
    for stem in HOSTILE_STEMS:
        shutil.copyfile(TRACE, folder / f"{stem}.json")
    return sorted(path.name for path in folder.glob("*.json"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The tiny pool with the hostile trace names, built: (pool root, site)."""
    from click.testing import CliRunner

    from paperpool.cli.commands import cli

    base = tmp_path_factory.mktemp("trace-names")
    root = base / "pool"
    shutil.copytree(TINY, root)
    _lay_traces(root / "traces")
    site = base / "site"
    result = CliRunner().invoke(cli, ["--root", str(root), "build", "--out", str(site)])
    assert result.exit_code == 0, result.output
    return root, site


def _pages(site: Path):
    for path in sorted(site.rglob("*.html")):
        page = Elements()
        page.feed(path.read_text(encoding="utf-8"))
        yield path.relative_to(site).as_posix(), page


def _target(page: str, link: str) -> str | None:
    """The site path a relative link of `page` names, or None for other links."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(parts.path))).lstrip("/")  # 404.html's are absolute


@pytest.mark.slow
def test_no_file_name_puts_markup_on_a_page(built):
    _, site = built
    for name, page in _pages(site):
        assert not [(tag, a) for tag, attrs in page.elements for a in attrs if a.startswith("on")], name
        assert not [tag for tag, _ in page.elements if tag == "iframe"], name
        links = [value for _, attrs in page.elements for key, value in attrs.items() if key in ("href", "src") and value]
        assert not [link for link in links if link.strip().lower().startswith(("javascript:", "data:"))], name
        assert not [text for text in page.scripts if "alert(" in text], name
        # every image and script is a file of the site (or a CDN's, which paperpool's theme names)
        for tag, attrs in page.elements:
            if tag in ("img", "script") and attrs.get("src"):
                target = _target(name, attrs["src"])
                assert target is None or (site / target).is_file(), (name, attrs["src"])


@pytest.mark.slow
def test_every_link_to_a_trace_file_resolves_to_a_file_of_the_site(built):
    _, site = built
    names = site_names([Path(name).stem for name in sorted(os.listdir(built[0] / "traces"))])
    linked = set()
    for name, page in _pages(site):
        for _, attrs in page.elements:
            for key in ("href", "src"):
                target = _target(name, attrs.get(key) or "")
                if target and target.startswith("traces/"):
                    assert (site / target).is_file(), (name, attrs[key])
                    linked.add(target)
    expected = {f"traces/{site_name}{suffix}" for site_name in names for suffix in ("-light.svg", "-dark.svg", ".json")}
    assert linked >= expected
    written = {path.relative_to(site).as_posix() for path in (site / "traces").iterdir()}
    assert written == expected | {"traces/orchestration-trace.v1.schema.json"}
    assert [str(broken) for broken in check_site(site)] == []


@pytest.mark.slow
def test_each_trace_is_shown_by_its_file_name_as_text(built):
    _, site = built
    page = (site / "traces.html").read_text(encoding="utf-8")
    shown = html.unescape(page)  # as a browser shows it: `[` is written &#91;, which no extension reads
    for stem in HOSTILE_STEMS[:4] + ["..", "a\u2215b", "Plan", "PLAN", "L" * 240]:
        assert f"<code>paperpool trace metrics traces/{stem}.json --format json</code>" in shown, stem
    # escapes and line breaks as messages show them
    assert f"<code>paperpool trace metrics traces/esc{SHOWN_ESCAPES}.json --format json</code>" in shown
    assert "<code>paperpool trace metrics traces/line\\nbreak.json --format json</code>" in shown
    assert "\x1b" not in page and "\u202e" not in page


def test_site_names_are_short_unique_slugs():
    assert site_names(
        ["Plan", "plan", "PLAN", "a.b", "a-b", "a\u2215b", "..", "\u6e2c\u8a66", "-", "x" * 300, "a", "a-2", "A"]
    ) == [
        "plan",
        "plan-2",
        "plan-3",
        "a-b",
        "a-b-2",
        "a-b-3",
        "value",
        "value-2",
        "value-3",
        "x" * MAX_SITE_NAME,
        "a",
        "a-2",
        "a-3",
    ]
    # cut where the slug has a dash: no name ends in one
    assert site_names(["x" * (MAX_SITE_NAME - 1) + ".y"]) == ["x" * (MAX_SITE_NAME - 1)]


def test_trace_validate_in_a_pool_escapes_the_file_names(run, built):
    root, _ = built
    result = run("trace", "validate", cwd=root)
    lines = result.output.splitlines()
    assert result.exit_code == 0 and lines[-1] == f"{len(HOSTILE_STEMS)} files: {len(HOSTILE_STEMS)} valid, 0 invalid."
    assert f"traces/esc{SHOWN_ESCAPES}.json: valid: 8 events, 10 edges." in [line.removeprefix(f"{root}/") for line in lines]
    assert "traces/line\\nbreak.json: valid: 8 events, 10 edges." in [line.removeprefix(f"{root}/") for line in lines]
    assert "\x1b" not in result.output and "\u202e" not in result.output


@pytest.fixture
def hostile_file(tmp_path) -> Path:
    """A file whose name holds terminal escapes; the test writes what it holds."""
    return tmp_path / f"esc{ESCAPES}.json"


def test_validate_escapes_a_file_name(run, tmp_path, hostile_file):
    shown = f"esc{SHOWN_ESCAPES}.json"
    shutil.copyfile(TRACE, hostile_file)
    result = run("trace", "validate", hostile_file.name, cwd=tmp_path)
    assert (result.exit_code, result.output) == (0, f"{shown}: valid: 8 events, 10 edges.\n")
    hostile_file.write_text('{"task_id": "t", "rewards": {}, "costs": {}}', encoding="utf-8")
    result = run("trace", "validate", hostile_file.name, cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()[0], result.output.splitlines()[-1]) == (
        1,
        f"{shown}: /trace_id: missing: add `trace_id` (the trace's own identifier, unique among the traces of a collection)",
        f"{shown}: invalid, 3 problems.",
    )
    hostile_file.write_text("<html>", encoding="utf-8")
    result = run("trace", "validate", hostile_file.name, cwd=tmp_path)
    assert result.output == (
        f"{shown}: not JSON at line 1, column 1: unexpected character, expected a JSON value; "
        f"check that the file is a JSON trace\n{shown}: invalid, 1 problem.\n"
    )


def test_metrics_escape_a_file_name(run, tmp_path, hostile_file):
    shown = f"esc{SHOWN_ESCAPES}.json"
    hostile_file.write_text('{"trace_id": "t", "events": [], "edges": [], "x_n": NaN}', encoding="utf-8")
    result = run("trace", "metrics", hostile_file.name, cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"{shown}: /x_n: NaN is not a finite number, which JSON and traces require; write a finite number "
            "(costs and rewards must be finite)\n"
            f"Error: {shown} is not a valid trace (1 problem above); fix it first: paperpool trace validate '{shown}'\n"
        ),
    )


def test_import_otlp_escapes_a_file_name(run, tmp_path, hostile_file):
    shown = f"esc{SHOWN_ESCAPES}.json"
    hostile_file.write_text('{"resourceSpans": []}', encoding="utf-8")
    result = run("trace", "import-otlp", hostile_file.name, cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, f"Error: {shown}: the export holds no spans; record a run first\n")


def test_import_otlp_escapes_the_file_name_of_a_conversion_that_breaks_a_rule(run, tmp_path, hostile_file):
    """A helper's tool span stamped before the helper was invoked (a skewed clock): the
    converted trace has the helper act before its spawn."""
    spans = [
        {
            "traceId": "ab" * 16,
            "spanId": f"{n:016x}",
            "startTimeUnixNano": f"{start}00000000",
            "endTimeUnixNano": f"{end}00000000",
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": operation}},
                {"key": "gen_ai.agent.name", "value": {"stringValue": agent}},
            ],
            **({"parentSpanId": f"{n - 1:016x}"} if n > 1 else {}),
        }
        for n, operation, agent, start, end in [
            (1, "invoke_agent", "lead", 50, 80),
            (2, "invoke_agent", "helper", 60, 70),
            (3, "execute_tool", "helper", 40, 45),
        ]
    ]
    hostile_file.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    result = run("trace", "import-otlp", hostile_file.name, cwd=tmp_path)
    assert result.exit_code == 1
    *problems, last = result.output.splitlines()
    assert last == (
        f"Error: the trace converted from esc{SHOWN_ESCAPES}.json is not a valid trace (3 problems above); "
        "the export's spans make a trace that breaks the rules above; check the spans they name in the export"
    )
    assert len(problems) == 3 and all(
        line.startswith(f"the trace converted from esc{SHOWN_ESCAPES}.json: /events/") for line in problems
    ), problems


def test_metrics_text_escapes_the_names_a_trace_holds(run, tmp_path):
    """Ids and agents of a valid trace reach the text report as escapes; the JSON report
    writes them as JSON's \\u escapes, the same strings to a reader."""
    trace = json.loads(TRACE.read_text(encoding="utf-8"))
    trace["trace_id"] = f"debate{ESCAPES}"
    text = json.dumps(trace).replace('"con"', json.dumps(f"con{ESCAPES}"))
    (tmp_path / "t.json").write_text(text, encoding="utf-8")
    report = run("trace", "metrics", "t.json", cwd=tmp_path).output
    assert report.startswith(f"trace debate{SHOWN_ESCAPES} (debate)\n")
    assert f"\n  con{SHOWN_ESCAPES}: 2, 0.25, 3.5, 0.269231\n" in report
    measured = run("trace", "metrics", "t.json", "--format", "json", cwd=tmp_path).output
    assert '"trace_id": "debate\\u001b[2J\\u001b]0;pwned\\u0007\\u202e"' in measured
    assert json.loads(measured)["trace_id"] == f"debate{ESCAPES}"
    for output in (report, measured):
        assert not set(output) & {"\x1b", "\x07", "\u202e"}, output


def test_a_line_break_in_an_input_s_name_cannot_make_a_line_of_its_own(run, tmp_path):
    """Issue 39's fourth review: `trace import` put a file's name into its error as it is,
    so a name holding a line break printed a second line that looked like another
    message; every error now escapes line breaks, however it was made."""
    name = "x\nFAKE.json: valid: 1 events, 0 edges.\ny.json"
    (tmp_path / name).write_text("{}", encoding="utf-8")
    result = run("trace", "import", name, cwd=tmp_path)
    assert (result.exit_code, result.output.count("\n")) == (1, 1)
    assert result.output.startswith("Error: x\\nFAKE.json: valid: 1 events, 0 edges.\\ny.json: not a trace export")


def test_an_imported_trace_on_standard_output_holds_no_control_a_terminal_acts_on(run, tmp_path):
    """An agent named with the 8-bit CSI (U+009B) and a right-to-left override: the trace
    written to standard output says them as JSON escapes, which read back as the same name."""
    agent = "x\u009b31mRED\u202eevil"
    spans = [
        {
            "traceId": "ab" * 16,
            "spanId": f"{1:016x}",
            "startTimeUnixNano": "5000000000",
            "endTimeUnixNano": "8000000000",
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
                {"key": "gen_ai.agent.name", "value": {"stringValue": agent}},
            ],
        }
    ]
    (tmp_path / "run.json").write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    result = run("trace", "import", "run.json", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "\u009b" not in result.output and "\u202e" not in result.output
    assert "\\u009b31mRED\\u202eevil" in result.output
    trace = json.loads(result.output[result.output.index("{") :])
    assert {event["agent"] for event in trace["events"]} == {agent}


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [["metrics", "ctl.jsonl", "--format", "csv"], ["summary", "ctl.jsonl", "--by", "system", "--format", "csv"]]
)
def test_a_csv_to_a_terminal_shows_what_a_terminal_would_act_on_escaped(tmp_path, command):
    """Issue 39's fifth review: the CSV of `trace metrics` and `trace summary` wrote a
    trace's escape sequences raw to the terminal (a file keeps them: they are the data)."""
    import pty
    import subprocess
    import sys

    trace = json.loads(TRACE.read_text(encoding="utf-8")) | {"system": "\x1b]0;PWNED\x07\x1b[2J", "trace_id": "ok\u202egnp"}
    (tmp_path / "ctl.jsonl").write_text(json.dumps(trace) + "\n", encoding="utf-8")
    parent, child = pty.openpty()
    process = subprocess.run(
        [sys.executable, "-m", "paperpool", "trace", *command], cwd=tmp_path, stdout=child, stderr=subprocess.DEVNULL, check=False
    )
    os.close(child)
    shown = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(parent, 65536):
            shown += chunk
    os.close(parent)
    assert process.returncode == 0
    assert b"\x1b" not in shown and "\u202e".encode() not in shown
    assert b"\\x1b]0;PWNED\\x07" in shown
    to_file = subprocess.run(
        [sys.executable, "-m", "paperpool", "trace", *command], cwd=tmp_path, capture_output=True, check=False
    )
    assert b"\x1b]0;PWNED\x07" in to_file.stdout  # written to a file or a pipe, the data as it is
