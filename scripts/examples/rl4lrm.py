"""Make the example pool examples/rl4lrm from the paper list of another survey: "A Survey
of Reinforcement Learning for Large Reasoning Models" (Zhang et al., arXiv 2509.08827),
whose list is the README of https://github.com/TsinghuaC3I/Awesome-RL-for-LRMs (MIT
licence, copyright (c) 2025 TsinghuaC3I), read at the commit pinned below.

    git clone https://github.com/TsinghuaC3I/Awesome-RL-for-LRMs
    git -C Awesome-RL-for-LRMs checkout 8e1040a66d430ee6951187c1a471253e5c669d02
    python scripts/examples/rl4lrm.py Awesome-RL-for-LRMs          # rewrite examples/rl4lrm
    python scripts/examples/rl4lrm.py Awesome-RL-for-LRMs --check  # change nothing; exit 1 if it differs

SNAPSHOT is a clone of that repository (a work tree, or a bare git directory): the README
is read at the pinned commit with `git show`, whatever is checked out.

Only facts of the list carry over: each work's title, the short name the list gives it, the
date it lists (its year), its links (the paper; the code, which several works may share)
and where the list files it: the
section (`area`) and subsection (`topic`) of the survey's taxonomy. The list has no authors,
venues or summaries, so the example's registry does not ask for them. A work listed in
several places is one record holding each of its places (one work: the same arXiv id, else
the same title). The vocabularies' ids are made from the headings, their labels are the
headings; nothing else is written about them.

The script writes every file of the pool (registry.yaml, papers/, claims.yaml, mkdocs.yml,
site/index.md, schemas/) from the README alone, so the same snapshot gives the same files,
byte for byte; tests/publishing/test_example_pools.py checks that when the snapshot is on the machine.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from paperpool.files.yamlio import dump_yaml  # noqa: E402 (the repository put on the path first)
from paperpool.pool import identity  # noqa: E402

SOURCE = "https://github.com/TsinghuaC3I/Awesome-RL-for-LRMs"
COMMIT = "8e1040a66d430ee6951187c1a471253e5c669d02"
OUT = REPO / "examples" / "rl4lrm"
PAPER_LIST = "## 📄 Paper List"  # the README's section that holds the taxonomy's tables
ROW = re.compile(r"^\|(.*)\|\s*$")
LINK = re.compile(r"\]\((https?://[^)\s]+)\)\s*$")  # the last link of a cell: [![badge](...)](URL)
BADGE = re.compile(r"img\.shields\.io/badge/([A-Za-z]+)-")
DATE = re.compile(r"^(\d{4})-(\d{2})$")
NEW_ARXIV = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}$")


def readme(snapshot: Path) -> str:
    """The list's README at the pinned commit."""
    git = (
        ["git", f"--git-dir={snapshot}"]
        if (snapshot / "HEAD").is_file() and not (snapshot / ".git").exists()
        else ["git", "-C", str(snapshot)]
    )
    done = subprocess.run([*git, "show", f"{COMMIT}:README.md"], capture_output=True, check=False)
    if done.returncode:
        raise SystemExit(
            f"{snapshot}: no README.md at {COMMIT} ({done.stderr.decode(errors='replace').strip()}); "
            f"clone {SOURCE} and fetch that commit"
        )
    return done.stdout.decode("utf-8")


def slug(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.replace("+", " plus ")).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def heading(line: str) -> str:
    return line.lstrip("#").strip().replace("\\&", "&")


def cell_link(cell: str) -> str | None:
    match = LINK.search(cell.strip())
    return match.group(1) if match else None


def parse(text: str) -> tuple[list[dict], list[dict]]:
    """The taxonomy (areas, each with its topics, in the README's order) and its table rows,
    each with the area and topic it is filed under."""
    lines = text.splitlines()
    start = lines.index(PAPER_LIST)
    areas: list[dict] = []
    rows: list[dict] = []
    for number, line in enumerate(lines[start + 1 :], start + 2):
        if line.startswith("## "):
            break
        if line.startswith("#### "):
            areas[-1]["topics"].append(heading(line))
            continue
        if line.startswith("### "):
            areas.append({"label": heading(line), "topics": []})
            continue
        match = ROW.match(line)
        if not match:
            continue
        cells = [cell.strip() for cell in match.group(1).split("|")]
        if cells[0] in ("Date", ":-:"):
            continue
        if len(cells) != 5:
            raise SystemExit(f"README.md:{number}: a row of {len(cells)} cells, not Date | Name | Title | Paper | Github")
        date, name, title, paper, code = cells
        dated = DATE.match(date)
        if not dated and date != "-":
            raise SystemExit(f"README.md:{number}: date {date!r} is neither YYYY-MM nor -")
        badge = BADGE.search(paper)
        rows.append(
            {
                "line": number,
                "area": areas[-1]["label"],
                "topic": areas[-1]["topics"][-1] if areas[-1]["topics"] else None,
                "year": int(dated.group(1)) if dated else None,
                "name": name.strip("`").strip(),
                "title": " ".join(title.split()),
                "paper": cell_link(paper),
                "code": cell_link(code),
                "link_kind": badge.group(1).lower() if badge and cell_link(paper) else None,
            }
        )
    return areas, rows


def arxiv_of(url: str | None) -> str | None:
    return identity.ids_in_url(url).get("arxiv") if url else None


def works(rows: list[dict]) -> list[dict]:
    """One work per arXiv id, else per title, in the order of its first row."""
    found: dict[str, dict] = {}
    for row in rows:
        arxiv = arxiv_of(row["paper"])
        same = f"arxiv:{arxiv}" if arxiv else f"title:{identity.title_key(row['title'])}"
        work = found.setdefault(same, {"rows": [], "arxiv": arxiv})
        work["rows"].append(row)
    return list(found.values())


def year_of(work: dict) -> int | None:
    """The year the list dates the work (its first dated row), else the year of its
    arXiv id (YYMM.NNNNN), else none."""
    for row in work["rows"]:
        if row["year"] is not None:
            return row["year"]
    match = NEW_ARXIV.match(work["arxiv"] or "")
    return 2000 + int(match.group(1)) if match else None


def unique(values) -> list:
    return list(dict.fromkeys(value for value in values if value))


def records(areas: list[dict], rows: list[dict]) -> list[dict]:
    area_id = {area["label"]: slug(area["label"]) for area in areas}
    topic_id = {topic: slug(topic) for area in areas for topic in area["topics"]}
    found = works(rows)
    keys: dict[str, int] = {}
    out = []
    for work in found:
        first = work["rows"][0]
        base = slug(first["name"]) or slug(first["title"])[:40].strip("-")
        keys[base] = keys.get(base, 0) + 1
        key = base if keys[base] == 1 else f"{base}-{keys[base]}"
        record: dict = {"key": key, "title": first["title"]}
        record["names"] = unique(row["name"] for row in work["rows"])
        year = year_of(work)
        if year is not None:
            record["year"] = year
        if work["arxiv"]:
            record["arxiv_id"] = work["arxiv"]
        urls = unique(row["paper"] for row in work["rows"])
        if urls:
            record["urls"] = urls
            record["link_kind"] = next(row["link_kind"] for row in work["rows"] if row["paper"])
        code = unique(row["code"] for row in work["rows"] if row["code"])
        if code:
            record["code"] = code
        record["area"] = unique(area_id[row["area"]] for row in work["rows"])
        topics = unique(topic_id[row["topic"]] for row in work["rows"] if row["topic"])
        if topics:
            record["topic"] = topics
        out.append(record)
    # two keys made from different names may still meet (a name and a name-2): keep them apart
    seen: set[str] = set()
    for record in out:
        if record["key"] in seen:
            raise SystemExit(f"two works would both be {record['key']}: give the script a way to tell them apart")
        seen.add(record["key"])
    return out


def vocabulary(label: str, description: str, values: list[dict]) -> dict:
    return {"label": label, "description": description, "values": values}


def registry(areas: list[dict]) -> dict:
    area_values = [{"id": slug(area["label"]), "label": area["label"]} for area in areas]
    topic_values = [
        {"id": slug(topic), "label": topic, "parent": slug(area["label"])} for area in areas for topic in area["topics"]
    ]
    if len({value["id"] for value in topic_values}) != len(topic_values):
        raise SystemExit("two subsections make the same topic id")
    return {
        "survey": {
            "title": "A Survey of Reinforcement Learning for Large Reasoning Models",
            "short_title": "RL for Large Reasoning Models: an example pool",
            "description": (
                "An example paperpool pool: the paper list of the survey 'A Survey of Reinforcement "
                "Learning for Large Reasoning Models' (arXiv 2509.08827), filed on its taxonomy."
            ),
            # no authors: the list's citation names the first ten "and others", which is not the survey's author list
            "arxiv_id": "2509.08827",
            "year": 2025,
            "artifact": f"TsinghuaC3I/Awesome-RL-for-LRMs, commit {COMMIT[:7]} (MIT licence)",
            "repository": SOURCE,
        },
        "pool": {"entries": "papers", "exclusions": "exclusions", "unknown_marker": "TODO", "title_similarity": 93},
        "vocabularies": {
            "area": vocabulary("Area", "The section of the survey's paper list a work is filed under.", area_values),
            "topic": vocabulary(
                "Topic",
                "The subsection of the survey's paper list a work is filed under (a value's parent is its section, its area).",
                topic_values,
            ),
            "link_kind": vocabulary(
                "Link",
                "What the list's link for the work is badged as.",
                [{"id": "paper", "label": "Paper"}, {"id": "blog", "label": "Blog"}],
            ),
        },
        "entry_fields": {
            "key": {"type": "key", "required": True, "label": "Key"},
            "title": {"type": "text", "required": True, "max_length": 400, "label": "Title"},
            "names": {"type": "text_list", "label": "Name in the list", "help": "the short name(s) the list gives the work"},
            "authors": {"type": "text_list", "label": "Authors", "help": "'Last, First' per author (the source list gives none)"},
            "year": {
                "type": "integer",
                "min": 1900,
                "max": "next_year",
                "label": "Year",
                "help": "the year of the list's date, else of the arXiv id",
            },
            "arxiv_id": {"type": "identifier", "scheme": "arxiv", "unique": True, "label": "arXiv id"},
            "urls": {"type": "url_list", "label": "Links"},
            "link_kind": {"type": "choice", "vocabulary": "link_kind", "label": "Link"},
            # several works of the list share one repository: a code link does not tell papers apart
            "code": {"type": "url_list", "label": "Code", "identifies": False},
            "area": {"type": "choice_list", "vocabulary": "area", "required": True, "label": "Area"},
            "topic": {"type": "choice_list", "vocabulary": "topic", "label": "Topic", "parent_field": "area"},
            "distinct_from": {"type": "key_list", "label": "Not a duplicate of"},
        },
        "exclusion_fields": {
            "key": {"type": "key", "required": True, "label": "Key"},
            "title": {"type": "text", "required": True, "label": "Title"},
        },
        "statistics": {"entries": {"counts": ["area", "topic", "link_kind", "year"], "crosstabs": [["area", "link_kind"]]}},
        "gaps": {
            "sparse_at_most": 1,
            "tables": [{"id": "topic-link", "title": "Topic x link", "rows": "topic", "columns": "link_kind"}],
        },
        "site": {
            "axes": ["area", "topic", "link_kind"],
            "home_axes": ["area", "topic"],
            "browser": {"facets": ["area", "topic", "link_kind"], "range": "year", "columns": ["area", "topic"]},
            "charts": [{"id": "per-year", "type": "stacked_bars", "x": "year", "stack": "area"}],
        },
    }


REGISTRY_HEAD = f"""# yaml-language-server: $schema=schemas/registry.schema.json
# An example pool, made by scripts/examples/rl4lrm.py from the paper list of "A Survey of
# Reinforcement Learning for Large Reasoning Models" (arXiv 2509.08827): {SOURCE},
# commit {COMMIT}, MIT licence. Do not edit by hand: run the script again.
"""

RECORD_HEAD = "# yaml-language-server: $schema=../schemas/entries.schema.json\n"

CLAIMS_HEAD = """# yaml-language-server: $schema=schemas/claims.schema.json
# The example's claims, recomputed by `paperpool claims --check`: how many works the source
# list files under each section, each count made by scripts/examples/rl4lrm.py from the
# list's rows (distinct works per section), checked here against the records.
"""


def claims(areas: list[dict], rows: list[dict]) -> str:
    found = works(rows)
    claims = []
    for area in areas:
        count = sum(any(row["area"] == area["label"] for row in work["rows"]) for work in found)
        claims.append(
            {
                "id": f"works-in-{slug(area['label'])}",
                "statement": f"The list files {count} distinct works under {area['label']}.",
                "where": f"area = {slug(area['label'])}",
                "expected": f"== {count}",
                "boundary": "A work is counted once however many of the section's tables list it.",
            }
        )
    return CLAIMS_HEAD + dump_yaml({"claims": claims})


MKDOCS = """# The example pool's site. `paperpool build` adds the generated pages, the navigation and
# the browser's script and style.
site_url: "https://example.org/paperpool/rl4lrm/"
docs_dir: site
site_dir: build/site
theme:
  name: material
  font: false  # no web fonts: the site works offline
  features:
    - navigation.sections
    - navigation.top
    - search.highlight
    - content.code.copy
  palette:
    - scheme: default
      toggle: {icon: material/weather-night, name: Dark theme}
    - scheme: slate
      toggle: {icon: material/weather-sunny, name: Light theme}
"""

INDEX = f"""An example of paperpool on another survey: the paper list of
[A Survey of Reinforcement Learning for Large Reasoning Models](https://arxiv.org/abs/2509.08827),
as published in [TsinghuaC3I/Awesome-RL-for-LRMs]({SOURCE}/tree/{COMMIT})
(commit `{COMMIT[:7]}`, MIT licence), filed on the survey's sections (areas) and subsections
(topics). Titles, names, links and places in the taxonomy are the list's, and so are the
years where it dates a work (else the year of the work's arXiv id); the list gives no
authors. `scripts/examples/rl4lrm.py` in the paperpool repository made every file.
"""


def pool_files(text: str) -> dict[str, str]:
    """Every file of the pool, by its path under the pool's folder."""
    areas, rows = parse(text)
    reg = registry(areas)
    files = {
        "registry.yaml": REGISTRY_HEAD + dump_yaml(reg),
        "claims.yaml": claims(areas, rows),
        "exclusions/.gitkeep": "",  # the list records no exclusions: this keeps the (empty) folder in git
        "mkdocs.yml": MKDOCS,
        "site/index.md": INDEX,
    }
    for record in records(areas, rows):
        files[f"papers/{record['key']}.yaml"] = RECORD_HEAD + dump_yaml(record)
    files.update(schema_files(reg))
    return dict(sorted(files.items()))


def schema_files(reg: dict) -> dict[str, str]:
    """schemas/: what `paperpool schemas` writes for this registry."""
    import tempfile

    from paperpool.pool import fileschemas
    from paperpool.registry import load_registry

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "registry.yaml").write_text(dump_yaml(reg), encoding="utf-8")
        loaded, problems = load_registry(Path(tmp))
        if loaded is None:
            raise SystemExit(f"the registry made does not load: {problems[0]}")
        return {f"{fileschemas.FOLDER}/{name}": text for name, text in fileschemas.texts(loaded).items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", type=Path, help=f"a clone of {SOURCE} holding commit {COMMIT}")
    parser.add_argument("--out", type=Path, default=OUT, help="the pool's folder (default: examples/rl4lrm)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a file differs")
    args = parser.parse_args(argv)
    files = pool_files(readme(args.snapshot))
    owned = ("registry.yaml", "claims.yaml", "mkdocs.yml", "site", "papers", "schemas", "exclusions")
    present = {
        str(path.relative_to(args.out))
        for name in owned
        for path in ([args.out / name] if (args.out / name).is_file() else sorted((args.out / name).rglob("*")))
        if path.is_file()
    }
    stale = sorted(present - set(files))
    changed = sorted(
        path
        for path, text in files.items()
        if not (args.out / path).is_file() or (args.out / path).read_text(encoding="utf-8") != text
    )
    if args.check:
        for path in changed:
            print(f"differs: {path}")
        for path in stale:
            print(f"not made by the script: {path}")
        print(f"{len(files)} files; {len(changed)} differ, {len(stale)} extra")
        return 1 if changed or stale else 0
    for path in stale:
        (args.out / path).unlink()
    for path in changed:
        target = args.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[path], encoding="utf-8")
    papers = sum(path.startswith("papers/") for path in files)
    print(f"{args.out}: {papers} papers; {len(changed)} files written, {len(stale)} removed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
