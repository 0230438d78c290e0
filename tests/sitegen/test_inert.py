"""Every string a pool holds lands as text (issue 16).

One pool puts a hostile value into every string a contributor can change and the site
shows: the registry's survey, labels, descriptions and gap titles; the claims' statements
and boundaries; every text field of the records; a trace's description and agents; the
name of a hand-written page; mkdocs.yml's words (which may not hold `<`, so they try to
break out of an attribute instead). The site is built for real with mkdocs-material, and
then every page, the feed, every chart and the search index is parsed: no element, event
handler, script or link came out of the data.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from paperpool.sitegen.configrules import EXTENSIONS

from ..conftest import REPO, TINY, edit

pytestmark = pytest.mark.slow  # real builds, installs or long runs: left out of the quick run, run by scripts/test and CI

# markup, an attribute break-out, template and markdown syntax, a CDATA end, a link
HOSTILE = (
    "<script>alert(1)</script><img src=x onerror=alert(2)>\"'><svg onload=alert(3)> ]]> {{7*7}} "
    "[x](javascript:alert(4)) {: onclick=alert(5)} $alert(8)$ $$x$$ ==m== ^^i^^ ++ctrl+alt++ {++a++} [[wiki]] "
    "~~s~~ https://evil.example/x www.evil.example @octocat \\[x\\] \U0001f916"
)  # an emoji: JSON writes it as two escapes
MARKUP_ONLY = HOSTILE.split(" ]]>")[0]  # for names with a length limit (a trace's agents)
AT_LINE_START = '!!! danger "Hacked"'
# mkdocs.yml's words may not hold `<` (validate refuses it), so they try the quotes instead
ATTRIBUTE_BREAK = 'Survey" onmouseover="alert(6)" x=\''
MARKERS = ("alert(", "onerror", "onload", "onclick", "onmouseover")


def _hostile_registry(text: str) -> str:
    registry = yaml.safe_load(text)
    registry["survey"]["title"] = f"Tiny {HOSTILE}"
    registry["survey"]["authors"] = [f"Author {HOSTILE}"]
    # the site's name and description, which the theme writes into every page's head
    registry["survey"]["short_title"] = registry["survey"]["description"] = ATTRIBUTE_BREAK
    for vocabulary in registry["vocabularies"].values():
        vocabulary["label"] += f" {HOSTILE}"
        vocabulary["description"] = f"{AT_LINE_START} {HOSTILE}"
        for value in vocabulary["values"]:
            value["label"] += f" {HOSTILE}"
            value["description"] = f"{AT_LINE_START} {HOSTILE}"
    for kind in ("entry_fields", "exclusion_fields"):
        for spec in registry[kind].values():
            if "label" in spec:
                spec["label"] += f" {HOSTILE}"
            spec["help"] = f"{AT_LINE_START} {HOSTILE}"
    for table in registry["gaps"]["tables"]:
        table["title"] += f" {HOSTILE}"
        for column in table["columns"] if isinstance(table["columns"], list) else []:
            column["label"] += f" {HOSTILE}"
    # settings, names and ids, which the pages show as code or in sentences (issue 39): a
    # backtick in them used to end the code span they are shown in
    registry["pool"]["unknown_marker"] = f"TODO`{MARKUP_ONLY}`"
    registry["survey"]["publication"] = {
        "date": "2026-05-01",
        "version": f"v1`{MARKUP_ONLY}`",
        "label": f"`{HOSTILE}",
        "citation": f"`{HOSTILE}",
    }
    registry["exclusion_fields"]["screened"] = {"type": "date"}
    registry["pool"]["dated_by"] = {"entries": "added", "exclusions": "screened"}
    registry["survey"]["artifact"] = f"`{MARKUP_ONLY}`"  # (an arXiv id has a pattern, which validate checks)
    values = registry["vocabularies"]["method"]["values"]
    values[[value["id"] for value in values].index("search")]["id"] = HOSTILE_ID
    registry["entry_fields"] = {
        (HOSTILE_NAME if name == "summary" else name): spec for name, spec in registry["entry_fields"].items()
    }
    registry["statistics"]["entries"]["counts"].append(HOSTILE_NAME)
    return yaml.safe_dump(registry, sort_keys=False, allow_unicode=True, width=10_000)


# a vocabulary id and a field name: anything a YAML key or string holds
HOSTILE_ID = f"search`{MARKUP_ONLY}`"
HOSTILE_NAME = f"summary`{MARKUP_ONLY}`"


def _hostile_records(root: Path) -> None:
    for path in sorted((root / "papers").glob("*.yaml")) + sorted((root / "exclusions").glob("*.yaml")):
        record = yaml.safe_load(path.read_text(encoding="utf-8"))
        if path.stem == "alpha":  # one title (hostile in every title would make them all alike)
            record["title"] = f"{AT_LINE_START} {record['title']} {HOSTILE}"
        elif path.stem == "x1":
            record["title"] = f"{AT_LINE_START} {record['title']} <b onclick=alert(9)>x</b> $alert(10)$"
        if "summary" in record:
            del record["summary"]
            record[HOSTILE_NAME] = f"{AT_LINE_START} {HOSTILE}"
        if record.get("method") == "search":
            record["method"] = HOSTILE_ID
        if "authors" in record:
            record["authors"] = [f"{HOSTILE}, Eve"] + record["authors"]
        path.write_text(yaml.safe_dump(record, sort_keys=False, allow_unicode=True, width=10_000), encoding="utf-8")


def hostile_everywhere(root: Path) -> Path:
    shutil.copytree(TINY, root)
    registry = root / "registry.yaml"
    # dated entries: the recently added page and the feed hold their hostile titles
    edit(
        registry, "  summary: {type: text, required: true}\n", "  summary: {type: text, required: true}\n  added: {type: date}\n"
    )
    registry.write_text(_hostile_registry(registry.read_text(encoding="utf-8")), encoding="utf-8")
    _hostile_records(root)
    for number, path in enumerate(sorted((root / "papers").glob("*.yaml")), 1):
        path.write_text(path.read_text(encoding="utf-8") + f"added: 2026-05-{number:02}\n", encoding="utf-8")
    for path in sorted((root / "exclusions").glob("*.yaml")):
        path.write_text(path.read_text(encoding="utf-8") + "screened: 2026-04-01\n", encoding="utf-8")
    claims = yaml.safe_load((root / "claims.yaml").read_text(encoding="utf-8"))
    for claim in claims["claims"]:
        claim["statement"] = f"{AT_LINE_START} {HOSTILE}"
        claim["boundary"] = f"{AT_LINE_START} {HOSTILE}"
    (root / "claims.yaml").write_text(yaml.safe_dump(claims, sort_keys=False, allow_unicode=True, width=10_000), encoding="utf-8")
    (root / "traces").mkdir()
    trace = json.loads((REPO / "traces" / "debate-two-rounds.json").read_text(encoding="utf-8"))
    trace["description"] = f"{AT_LINE_START} {HOSTILE}"
    (root / "traces" / "debate.json").write_text(json.dumps(trace).replace('"con"', json.dumps(MARKUP_ONLY)), encoding="utf-8")
    _hostile_corpus(root, trace)
    (root / "site").mkdir()
    (root / "site" / 'notes " onload=alert(7) x.md').write_text("# Notes\n\nWritten by hand.\n", encoding="utf-8")
    # every extension a pool may turn on without --trust-config, so that the data meets them all
    (root / "mkdocs.yml").write_text(
        yaml.safe_dump(
            {
                "site_author": ATTRIBUTE_BREAK,
                "copyright": ATTRIBUTE_BREAK,
                "repo_name": ATTRIBUTE_BREAK,
                "theme": {"name": "material", "font": False},
                "markdown_extensions": [{"pymdownx.arithmatex": {"generic": True}}]
                + sorted(set(EXTENSIONS) - {"pymdownx.arithmatex"}),
            }
        ),
        encoding="utf-8",
    )
    return root


def _hostile_corpus(root: Path, trace: dict) -> None:
    """A corpus whose declaration, groups, counted values and invalid trace are hostile."""
    import gzip

    lines = []
    for number in range(3):
        one = dict(trace, trace_id=f"t{number}", system=f"{MARKUP_ONLY} {number % 2}", x_failure={"agent": f"{HOSTILE} {number}"})
        lines.append(json.dumps(one))
    lines.append(json.dumps(dict(trace, trace_id="bad", events=[{"id": HOSTILE, "t": 0, "type": MARKUP_ONLY, "agent": "a"}])))
    (root / "corpora").mkdir()
    (root / "corpora" / "hostile.jsonl.gz").write_bytes(gzip.compress("\n".join(lines).encode("utf-8") + b"\n", mtime=0))
    with (root / "registry.yaml").open("a", encoding="utf-8") as registry:
        registry.write(
            yaml.safe_dump(
                {
                    "traces": {
                        "corpora": [
                            {
                                "name": "hostile",
                                "path": "corpora/hostile.jsonl.gz",
                                "title": f"Corpus {MARKUP_ONLY}",
                                "about": f"{AT_LINE_START} {HOSTILE}",
                                "source": f"{AT_LINE_START} {HOSTILE}",
                                "by": ["system"],
                                "count": ["x_failure.agent", "description"],
                            }
                        ]
                    }
                },
                sort_keys=False,
                allow_unicode=True,
                width=10_000,
            )
        )


class _Markup(HTMLParser):
    """What a browser would make of a page: its elements with their attributes, and the
    text of its inline scripts."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def live_markup(html: str) -> list[str]:
    """Every place where a value became markup: an element the data named, an event
    handler, a script or a link that came from it."""
    page = _Markup()
    page.feed(html)
    found = []
    for tag, attrs in page.elements:
        if tag in ("img", "svg", "iframe") and (attrs.get("src") == "x" or "onload" in attrs):
            found.append(f"<{tag}> from the data")
        found += [f"<{tag} {name}>" for name in attrs if name.startswith("on") or any(m in name for m in MARKERS)]
        found += [
            f"<{tag} {name}={value}>"
            for name, value in attrs.items()
            if name in ("href", "src", "action", "formaction", "content")
            and value
            and value.strip().lower().startswith(("javascript:", "data:text", "vbscript:"))
        ]
    found += [f"script: {text[:60]}" for text in page.scripts if any(marker in text for marker in MARKERS)]
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, Path]:
    from click.testing import CliRunner

    from paperpool.cli.commands import cli

    base = tmp_path_factory.mktemp("inert")
    root = hostile_everywhere(base / "pool")
    runner = CliRunner()
    result = runner.invoke(cli, ["--root", str(root), "validate"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["--root", str(root), "build", "--out", str(base / "site")])
    assert result.exit_code == 0, result.output
    return root, base / "site"


def test_no_page_holds_markup_from_the_data(site):
    _, built = site
    pages = sorted(built.rglob("*.html"))
    assert len(pages) >= 30
    found = {page.relative_to(built).as_posix(): live_markup(page.read_text(encoding="utf-8")) for page in pages}
    assert {page: markup for page, markup in found.items() if markup} == {}


def test_no_page_links_off_the_site_but_to_the_records_links(site):
    root, built = site
    allowed = {url for path in root.glob("*/*.yaml") for url in yaml.safe_load(path.read_text(encoding="utf-8")).get("urls", [])}
    allowed |= {"https://squidfunk.github.io/mkdocs-material/"}  # the theme's own credit in every footer
    found = set()
    for page in built.rglob("*.html"):
        markup = _Markup()
        markup.feed(page.read_text(encoding="utf-8"))
        found |= {
            attrs.get("href") or attrs.get("src")
            for _, attrs in markup.elements
            if (attrs.get("href") or attrs.get("src") or "").startswith(("http:", "https:", "//", "ftp:", "mailto:"))
        }
    assert found - allowed == set()


def test_the_hostile_text_is_shown_on_the_pages_as_typed(site):
    _, built = site
    home = (built / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in home
    entry = (built / "entries" / "alpha.html").read_text(encoding="utf-8")
    assert "!!! danger" in entry.replace("&#33;", "!") and 'class="admonition' not in entry
    # the extensions a pool may turn on read none of it as marks, keys, maths or lists
    # (issue 39's fresh review); and the page's title, emoji and all, stayed its title
    for page in built.rglob("*.html"):
        shown = page.read_text(encoding="utf-8")
        assert not re.search(r"<(mark|ins|sup|kbd|del)\b|math/tex|<ol type=|>title: ", shown), page
    corpus = (built / "trace-corpora" / "hostile.html").read_text(encoding="utf-8")
    assert "<strong>4 traces</strong>, 3 valid and 1 invalid" in corpus
    assert corpus.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 5  # title, about, source, groups, counted values
    assert "<li>corpora/hostile.jsonl.gz:4: /events/0/id: is 257 characters long" in corpus and 'class="admonition' not in corpus


def test_the_feed_and_the_charts_are_well_formed_and_hold_no_markup(site):
    _, built = site
    feed = ET.parse(built / "feed.xml").getroot()
    assert len(feed.findall("{http://www.w3.org/2005/Atom}entry")) >= 2  # the hostile entries among them
    assert [element.tag for element in feed.iter() if not element.tag.startswith("{http://www.w3.org/2005/Atom}")] == []
    charts = sorted((built / "assets" / "paperpool" / "charts").glob("*.svg")) + sorted((built / "traces").glob("*.svg"))
    assert len(charts) >= 4
    for chart in charts:
        drawing = ET.parse(chart).getroot()  # well-formed XML, or this raises
        tags = {element.tag.rsplit("}", 1)[-1] for element in drawing.iter()}
        assert not tags & {"script", "foreignObject", "iframe", "img", "a"}, chart.name
        assert not [name for element in drawing.iter() for name in element.attrib if name.startswith("on")], chart.name


def test_the_search_index_is_json_and_the_data_scripts_hold_no_markup(site):
    _, built = site
    # Pagefind's index: a gzipped JSON fragment for each page, holding the page's words as
    # text; its script escapes < and > in the excerpts it shows and its UI writes titles
    # as text (tests/sitegen/test_search.py searches for the hostile entry in a browser)
    fragments = [
        json.loads(gzip.decompress(path.read_bytes()).removeprefix(b"pagefind_dcd"))
        for path in (built / "pagefind" / "fragment").glob("*.pf_fragment")
    ]
    assert {fragment["url"].lstrip("/") for fragment in fragments} == {
        path.relative_to(built).as_posix() for path in built.rglob("*.html")
    }
    assert not (built / "search").exists()  # the engine's own index, which Pagefind replaces
    for script in (built / "assets" / "paperpool" / "data").glob("*.js"):
        text = script.read_text(encoding="utf-8")
        assert "</script" not in text.lower() and "<!--" not in text, script.name
