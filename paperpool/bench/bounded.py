"""Inputs that once made paperpool work out of proportion to their size (issue 39), each
run as a user runs it (a fresh process, start-up included) and timed with its peak
memory: a trace of a million problems, a corpus line of 500,000 empty events, a megabyte
of gzip holding a gigabyte of blank lines, an exclude_docs pattern that backtracks, the
hostile review's traces (edges closing one long cycle, long unknown ids, a deep spawn
chain, a gzip bomb), and a corpus page of many groups. Each must stay in seconds: the first ones because the
problems past a cap are not built and the corpus's limits stop the reading, the last
one because the page's counts are grouped in one pass (its two sizes give a ratio).
"""

from __future__ import annotations

import csv
import gzip
import json
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..traces.schema import schema_id
from .measure import Series, paperpool, repeat, run

CORPUS = "corpora/bounded.jsonl.gz"  # the corpus each case's pool declares, in place of any it had
VALUES = 13  # per group: one more than the page shows, so that each group has a row of the others


@dataclass
class BoundedRow:
    measurement: str
    size: str
    series: Series
    items: int | None = None  # what ms per item divides by (groups)


def _timer(shipped: Path, folder: Path, times: int, expect: int = 1) -> Callable[..., Series]:
    """A paperpool command on the pool at `shipped`, run `times` times in `folder`, ending
    with `expect` unless told otherwise."""

    def timed(*arguments: str, expect: int = expect) -> Series:
        return repeat(lambda: run(paperpool(shipped, *arguments), folder, expect=expect), times)

    return timed


def measure(shipped: Path, folder: Path, times: int, groups: tuple[int, ...] = (100, 500)) -> list[BoundedRow]:
    """Every case, each build on its own copy of the pool at `shipped` (--root)."""
    found = []
    empty = folder / "empty-events.json"
    empty.write_bytes(_empty_trace(250_000))
    found.append(
        BoundedRow(
            "trace validate: a trace of 1.5 million problems (the first 100 shown)",
            f"250,000 empty events, {empty.stat().st_size / 1e3:,.0f} kB",
            repeat(lambda: run(paperpool(shipped, "trace", "validate", str(empty)), folder, expect=1), times),
        )
    )
    pool = _pool(shipped, folder / "pool-empty-events")
    with gzip.open(pool / CORPUS, "wb") as handle:
        handle.write(_empty_trace(500_000) + b"\n")
    found.append(
        BoundedRow(
            "build: a corpus line of 500,000 empty events (its first problems shown)",
            f"{(pool / CORPUS).stat().st_size / 1e3:,.1f} kB of gzip",
            _build(pool, folder, times, 0),
        )
    )
    blank = folder / "blank.jsonl.gz"
    with gzip.open(blank, "wb") as handle:
        for _ in range(1024):
            handle.write(b"\n" * (1 << 20))
    said = f"{blank.stat().st_size / 1e6:,.1f} MB of gzip, 1 GiB of blank lines"
    found.append(
        BoundedRow(
            "trace metrics: past the corpus's lines (stops)",
            said,
            repeat(lambda: run(paperpool(shipped, "trace", "metrics", str(blank)), folder, expect=1), times),
        )
    )
    pool = _pool(shipped, folder / "pool-blank")
    shutil.copyfile(blank, pool / CORPUS)
    found.append(BoundedRow("build: a corpus past its lines (stops)", said, _build(pool, folder, times, 1)))
    blank.unlink()
    pool = _pool(shipped, folder / "pool-pattern")
    with (pool / "mkdocs.yml").open("a", encoding="utf-8") as handle:
        handle.write("exclude_docs: |\n  " + "*[!x]" * 14 + "x\n")
    found.append(
        BoundedRow(
            "build: an exclude_docs pattern of 14 wildcards (refused)", "the pool at --root", _build(pool, folder, times, 1)
        )
    )
    found += _graph_cases(shipped, folder, times)
    found += _deep_cases(shipped, folder, times)
    found += _import_cases(shipped, folder, times)
    found += _pool_cases(shipped, folder, times)
    found += _unshaped_cases(shipped, folder, times)
    found += _seventh_cases(shipped, folder, times)
    found += _eighth_cases(shipped, folder, times)
    found += _thirteenth_cases(shipped, folder, times)
    found += _sixteenth_cases(shipped, folder, times)
    for count in groups:
        pool = _pool(shipped, folder / f"pool-groups-{count}", "task_id", "x_value")
        _grouped_corpus(pool, count)
        found.append(
            BoundedRow(
                "build: a corpus page of many groups (by task_id, counting x_value)",
                f"{count:,} groups of {VALUES} values, {count * VALUES:,} traces",
                _build(pool, folder, times, 0),
                count,
            )
        )
    return found


def _graph_cases(shipped: Path, folder: Path, times: int) -> list[BoundedRow]:
    """The hostile review's traces: many edges closing one long cycle, long unknown ids
    to guess at, a spawn chain deeper than numpy's passes, and a gzip bomb."""

    timed = _timer(shipped, folder, times)

    found = []
    closed = folder / "closed-cycle.json"
    closed.write_bytes(_closed_cycle(20_000, 20_000))
    found.append(
        BoundedRow(
            "trace validate: 20,000 edges closing one cycle of 20,000 events (the first 100 shown)",
            f"{closed.stat().st_size / 1e6:,.1f} MB",
            timed("trace", "validate", str(closed)),
        )
    )
    unknown = folder / "long-unknown-ids.json"
    unknown.write_bytes(_long_unknown_ids(3000, 101))
    found.append(
        BoundedRow(
            "trace validate: 101 unknown 199-character ids among 3,000 (none guessed at)",
            f"{unknown.stat().st_size / 1e3:,.0f} kB",
            timed("trace", "validate", str(unknown)),
        )
    )
    deep = folder / "spawn-chain.json"
    deep.write_bytes(
        _trace(
            "deep", [{"id": f"s{i}", "t": i, "type": "spawn", "agent": str(i), "to": str(i + 1)} for i in reversed(range(60_000))]
        )
    )
    found.append(
        BoundedRow(
            "trace metrics: a spawn chain of 60,000, latest first",
            f"{deep.stat().st_size / 1e6:,.1f} MB",
            timed("trace", "metrics", str(deep), expect=0),
        )
    )
    bomb = folder / "bomb.json.gz"
    mebibyte = gzip.compress(b"a" * (1 << 20), 9)  # gzip members one after another are one stream: made once
    bomb.write_bytes(
        gzip.compress(
            b'{"trace_id": "bomb", "schema": "' + schema_id().encode() + b'", "edges": [], "events": '
            b'[{"id": "e", "t": 0, "type": "stop", "agent": "a", "x_pad": "'
        )
        + mebibyte * 500
        + gzip.compress(b'"}]}')
    )
    found.append(
        BoundedRow(
            "trace metrics: a gzip bomb, one event of 500 MiB (stops at the compression ratio)",
            f"{bomb.stat().st_size / 1e3:,.0f} kB of gzip",
            timed("trace", "metrics", str(bomb)),
        )
    )
    for path in (closed, unknown, deep, bomb):
        path.unlink()
    return found


def _deep_cases(shipped: Path, folder: Path, times: int) -> list[BoundedRow]:
    """The fifth round's traces: keys given twice past the 255 levels orjson writes back, and
    an OTLP attribute whose values nest as deep, valid and not."""

    timed = _timer(shipped, folder, times)

    found = []
    twice = folder / "twice-deep.json"
    twice.write_bytes(
        _trace("twice", [], x_a=[]).replace(
            b'"x_a": []', b'"x_a": ' + b"[" * 1000 + b"[" + b",".join([b'{"a": 0, "a": 0}'] * 30_000) + b"]" * 1001
        )
    )
    found.append(
        BoundedRow(
            "trace validate: 30,000 objects giving a key twice, 1,000 levels down (the first 100 shown)",
            f"{twice.stat().st_size / 1e3:,.0f} kB",
            timed("trace", "validate", str(twice)),
        )
    )
    wide = folder / "wide-value.json"
    wide.write_bytes(_deep_attribute(300, [b"{}"] * 320_000))
    found.append(
        BoundedRow(
            "trace import: an attribute of 320,000 empty values 300 levels down",
            f"{wide.stat().st_size / 1e3:,.0f} kB",
            timed("trace", "import", "--from", "otlp", str(wide), expect=0),
        )
    )
    broken = folder / "broken-values.json"
    broken.write_bytes(_deep_attribute(300, [b"1"] * 450_000))
    found.append(
        BoundedRow(
            "trace import: 450,000 values that are no AnyValue, 300 levels down (the first 100 shown)",
            f"{broken.stat().st_size / 1e3:,.0f} kB",
            timed("trace", "import", "--from", "otlp", str(broken)),
        )
    )
    for path in (twice, wide, broken):
        path.unlink()
    return found


def _seventh_cases(shipped: Path, folder: Path, times: int) -> list[BoundedRow]:
    """The seventh round's: a few kilobytes of gzip holding a million empty lines, a plain
    file of 100,000 of them (each an invalid trace), a second reading of 20 MB whose every
    pair of cells differs, and a traces table of 8,000 columns given to trace summary."""

    timed = _timer(shipped, folder, times)

    found = []
    lines = folder / "empty-lines.jsonl.gz"
    lines.write_bytes(gzip.compress(b"{}\n" * 1_000_000, 9))
    found.append(
        BoundedRow(
            "trace metrics: a million lines of {} in gzip (stops)",
            f"{lines.stat().st_size / 1e3:,.1f} kB of gzip",
            timed("trace", "metrics", str(lines), "--jobs", "1"),
        )
    )
    plain = folder / "empty-lines.jsonl"
    plain.write_bytes(b"{}\n" * 100_000)
    found.append(
        BoundedRow(
            "trace metrics: 100,000 lines of {} (each an invalid trace)",
            f"{plain.stat().st_size / 1e3:,.0f} kB",
            timed("trace", "metrics", str(plain), "--jobs", "1"),
        )
    )
    fields = 500
    header = ",".join(["key", *(f"{side}f{k}" for k in range(fields) for side in ("orig_", "ann_"))])
    readings = folder / "second-reading.csv"
    with readings.open("w", encoding="utf-8") as handle:
        handle.write(header + "\n")
        row = 0
        while handle.tell() < 20_000_000:
            handle.write(f"k{row}," + ",".join(["a", "b"] * fields) + "\n")
            row += 1
    found.append(
        BoundedRow(
            "audit: a second reading whose every pair of cells differs (10,000 listed)",
            f"{readings.stat().st_size / 1e6:,.0f} MB, {row:,} rows of {fields} fields",
            timed("audit", str(readings), expect=0),
        )
    )
    wide = folder / "wide-tables"
    (wide / "traces").mkdir(parents=True)
    # written by another process: pyarrow's memory here would count in each later child's peak
    made = (
        "import sys, pyarrow as pa, pyarrow.parquet as pq\n"
        "columns = {'file': ['f'], 'line': [1], 'trace_id': ['t'], 'valid': [True], **{f'm{k}': [1.0] for k in range(8000)}}\n"
        "pq.write_table(pa.table(columns), sys.argv[1])\n"
    )
    run([sys.executable, "-c", made, str(wide / "traces" / "part-0.parquet")], folder)
    found.append(
        BoundedRow(
            "trace summary: a traces table of 8,000 columns (refused)",
            f"{(wide / 'traces' / 'part-0.parquet').stat().st_size / 1e6:,.1f} MB",
            timed("trace", "summary", str(wide)),
        )
    )
    for path in (lines, plain, readings):
        path.unlink()
    shutil.rmtree(wide)
    return found


def _thirteenth_cases(shipped: Path, folder: Path, times: int) -> list[BoundedRow]:
    """The thirteenth round's, in copies of the shipped pool: a venue of 100 kB of `*`
    (escaped as markdown, a placeholder each), an author of 700 kB among 20,000 (every row
    of the table padded to it), and registries of 10,000 text fields and of 5,000
    choice_maps over 200-value vocabularies (columns rebuilt, values searched, for each)."""
    found = []
    pool = folder / "pool-starred-venue"
    shutil.copytree(shipped, pool, symlinks=True)
    record = sorted((pool / "papers").glob("*.yaml"))[0]
    text = record.read_text(encoding="utf-8")
    record.write_text(re.sub(r"(?m)^venue: .*$", "venue: '" + "*" * 100_000 + "'", text, count=1), encoding="utf-8")
    found.append(BoundedRow("build: a venue of 100,000 `*` (shown to 3,000)", "a 100 kB record", _build(pool, folder, times, 0)))
    pool = folder / "pool-long-author"
    shutil.copytree(shipped, pool, symlinks=True)
    record = sorted((pool / "papers").glob("*.yaml"))[0]
    text = record.read_text(encoding="utf-8")
    authors = "authors:\n- " + "a" * 700_000 + "\n" + "".join(f"- N{k:05d}\n" for k in range(20_000))
    record.write_text(text.replace("authors:\n", authors, 1), encoding="utf-8")
    found.append(
        BoundedRow(
            "stats --by authors: an author of 700,000 characters among 20,000",
            f"a {record.stat().st_size / 1e3:,.0f} kB record",
            repeat(lambda: run(paperpool(pool, "stats", "--by", "authors"), pool, expect=0), times),
        )
    )
    values = "".join(f"      - id: v{n}\n        label: Value {n}\n" for n in range(200))
    for fields, declared, expect in (
        (10_000, "  t{n}:\n    type: text\n", 0),
        (5_000, "  m{n}:\n    type: choice_map\n    keys: vb\n    vocabulary: va\n", 1),
    ):
        pool = folder / f"pool-fields-{fields}"
        shutil.copytree(shipped, pool, symlinks=True)
        registry = pool / "registry.yaml"
        text = registry.read_text(encoding="utf-8")
        text = text.replace("vocabularies:\n", f"vocabularies:\n  va:\n    label: A\n    values:\n{values}", 1)
        text = text.replace("vocabularies:\n", f"vocabularies:\n  vb:\n    label: B\n    values:\n{values}", 1)
        registry.write_text(
            text.replace("entry_fields:\n", "entry_fields:\n" + "".join(declared.format(n=n) for n in range(fields)), 1)
        )
        kind = "text fields" if expect == 0 else "choice_maps over 200-value vocabularies (refused)"
        found.append(
            BoundedRow(
                f"validate --no-cache: a registry of {fields:,} {kind}",
                f"{registry.stat().st_size / 1e3:,.0f} kB registry",
                repeat(
                    lambda pool=pool, expect=expect: run(paperpool(pool, "validate", "--no-cache"), pool, expect=expect), times
                ),
            )
        )
    return found


ITEMS = 4_000  # the imports' items (the review's 16,000 took 32 s and 106 s before; see BENCHMARKS.md)


def _sixteenth_cases(shipped: Path, folder: Path, times: int) -> list[BoundedRow]:
    """The sixteenth and seventeenth rounds', in copies of the shipped pool: BibTeX values
    whose optional arguments no bracket closes (pylatexenc tried every reading), a title of
    27,000 math spans (each read, with a converter of its own), and imports whose rows were
    compared, and whose keys numbered, one by one against all before them."""
    found = []
    bib = folder / "open-brackets.bib"
    title = "\\cite[a" * 4 + "{a}" * 29_900
    bib.write_text(
        "\n".join(
            f"@article{{k{n},\n  title = {{{title} {n}}},\n  author = {{Doe, Jane}},\n  year = {{2024}}\n}}\n" for n in range(10)
        ),
        encoding="utf-8",
    )
    pool = folder / "pool-open-brackets"
    shutil.copytree(shipped, pool, symlinks=True)
    found.append(
        BoundedRow(
            "import-bib --dry-run: 10 titles of four open `\\cite[` and 90 kB (refused where a title's length is limited)",
            f"{bib.stat().st_size / 1e3:,.0f} kB of BibTeX",
            repeat(lambda: run(paperpool(pool, "import-bib", "--dry-run", str(bib)), pool, expect=None), times),
        )
    )
    pool = folder / "pool-math-spans"
    shutil.copytree(shipped, pool, symlinks=True)
    registry = pool / "registry.yaml"
    registry.write_text(re.sub(r"(?m)^(  title: \{type: text, required: true), max_length: \d+", r"\1", registry.read_text()))
    record = sorted((pool / "papers").glob("*.yaml"))[0]
    spans = " ".join(f"$\\cite[a\\cite[a\\cite[a\\cite[a {n}$" for n in range(27_000))
    record.write_text(re.sub(r"(?m)^title: .*$", lambda _: "title: '" + spans + "'", record.read_text(), count=1))
    found.append(
        BoundedRow(
            "export --format ris: a title of 27,000 math spans (1,000 characters of math read)",
            f"a {record.stat().st_size / 1e3:,.0f} kB record",
            repeat(
                lambda: run(paperpool(pool, "export", "--format", "ris", "-o", str(folder / "out.ris")), pool, expect=0), times
            ),
        )
    )
    rng = random.Random(17)
    items = [
        {
            "type": "article-journal",
            "citation-key": "x",
            "title": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(60)),
            "author": [{"family": "Doe", "given": "J"}],
            "issued": {"date-parts": [[2024]]},
        }
        for _ in range(ITEMS)
    ]
    same = folder / "same-key.json"
    same.write_text(json.dumps(items), encoding="utf-8")
    found.append(
        BoundedRow(
            f"import-csljson --dry-run: {ITEMS:,} items of one citation key",
            f"{same.stat().st_size / 1e6:,.1f} MB of CSL-JSON",
            repeat(lambda: run(paperpool(shipped, "import-csljson", "--dry-run", str(same)), folder, expect=0), times),
        )
    )
    rows = folder / "rows.csv"
    exported = subprocess.run(paperpool(shipped, "export", "--format", "csv"), capture_output=True, text=True)
    if exported.returncode != 0:  # a pool whose registry lays out no CSV
        return found
    header, first = exported.stdout.splitlines()[:2]
    names = header.split(",")
    with rows.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(names)
        template = next(csv.reader([first]))
        for n in range(ITEMS):
            row = dict(zip(names, template, strict=True))
            row |= {"key": f"k{n}", "title": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(200))}
            row |= {name: "" for name in ("arxiv_id", "doi", "openreview_id") if name in row}
            if "url" in row:
                row["url"] = f"https://example.org/p{n}"
            writer.writerow(row.values())
    found.append(
        BoundedRow(
            f"import-csv --dry-run: {ITEMS:,} rows of distinct titles",
            f"{rows.stat().st_size / 1e6:,.1f} MB of CSV",
            repeat(lambda: run(paperpool(shipped, "import-csv", "--dry-run", str(rows)), folder, expect=0), times),
        )
    )
    return found


def _eighth_cases(shipped: Path, folder: Path, times: int) -> list[BoundedRow]:
    """The eighth round's: "spans" keys nested 450 deep around 7 MB and 80,000 deep with no
    end (each decoded again to guess whether a file is OpenInference), and a trace whose
    caller of a 100,000-character name is answered 6,000 times (each mark's title quoted
    it whole: 1.2 GB of drawings), built into the shipped pool."""
    timed = _timer(shipped, folder, times)
    around = folder / "spans-around.json"
    depth = 450
    around.write_text(
        '{"resourceSpans":[],"a":' + '{"spans":[' * depth + '"' + "a" * (7 << 20) + '"' + "]}" * depth + "}", encoding="utf-8"
    )
    endless = folder / "spans-endless.json"
    endless.write_text('{"resourceSpans":[],"a":' + '{"spans":[' * 80_000, encoding="utf-8")
    found = [
        BoundedRow(
            'trace validate: "spans" keys nested 450 deep around one long value',
            f"{around.stat().st_size / 1e6:,.1f} MB",
            timed("trace", "validate", str(around)),
        ),
        BoundedRow(
            'trace validate: "spans" keys nested 80,000 deep, with no end',
            f"{endless.stat().st_size / 1e3:,.0f} kB",
            timed("trace", "validate", str(endless)),
        ),
    ]
    pool = _pool(shipped, folder / "pool-answered")
    caller = "A" * 100_000
    events = [{"id": "c", "t": 0, "type": "tool_call", "agent": caller, "tool": "x"}]
    events += [{"id": f"r{k}", "t": 1, "type": "tool_result", "agent": "r", "tool": "x", "call": "c"} for k in range(6_000)]
    answered = pool / "traces" / "answered.json"
    answered.parent.mkdir(exist_ok=True)  # a pool given with --root may hold no traces yet
    answered.write_text(
        json.dumps({"trace_id": "answered", "task_id": "t", "rewards": {}, "costs": {}, "events": events, "edges": []}),
        encoding="utf-8",
    )
    found.append(
        BoundedRow(
            "build: a caller of a 100,000-character name answered 6,000 times (drawn as one mark)",
            f"{answered.stat().st_size / 1e3:,.0f} kB trace",
            _build(pool, folder, times, 0),
        )
    )
    broken = folder / "broken-records.bib"
    broken.write_text("@a{x,\n" * 800_000, encoding="utf-8")
    found.append(
        BoundedRow(
            "import-bib --dry-run: 800,000 broken records (refused)",
            f"{broken.stat().st_size / 1e6:,.1f} MB",
            timed("import-bib", "--dry-run", str(broken)),
        )
    )
    blocks = folder / "unnamed-blocks.bib"
    blocks.write_text("@{,\n" * 1_225_000, encoding="utf-8")
    undefined = folder / "undefined-macros.bib"
    undefined.write_text("".join(f"@a{{k{k}, title = undefinedmacro}}\n" for k in range(50_000)), encoding="utf-8")
    found += [
        BoundedRow(
            "import-bib --dry-run: 1.2 million records of no type, `@{,` (refused)",
            f"{blocks.stat().st_size / 1e6:,.1f} MB",
            timed("import-bib", "--dry-run", str(blocks)),
        ),
        BoundedRow(
            "import-bib --dry-run: 50,000 records using an undefined @string (each listed, the first 100 shown)",
            f"{undefined.stat().st_size / 1e6:,.1f} MB",
            timed("import-bib", "--dry-run", str(undefined)),
        ),
    ]
    claims = _claims_over_wide_vocabularies(shipped, folder / "pool-claims", 850)
    if claims is not None:  # a pool given with --root whose registry is not the survey's has none
        found.append(
            BoundedRow(
                "validate: 850 claims of 70 columns over 200-value vocabularies",
                f"{(claims / 'claims.yaml').stat().st_size / 1e6:,.1f} MB of claims",
                repeat(lambda: run(paperpool(claims, "validate", "--no-cache"), folder, expect=0), times),
            )
        )
    for path in (around, endless, broken, blocks, undefined):
        path.unlink()
    return found


def _claims_over_wide_vocabularies(shipped: Path, pool: Path, count: int) -> Path | None:
    """The eighth review's claims: 72 choice fields sharing a vocabulary of 200 values, and
    claims no record can satisfy whose impossible column is read last; None for a pool
    whose registry declares no venue field to add them after."""
    venue = '  venue: {type: text, label: "Venue"}\n'
    if venue not in (shipped / "registry.yaml").read_text(encoding="utf-8"):
        return None
    shutil.copytree(shipped, pool, symlinks=True, ignore=shutil.ignore_patterns(".git", ".venv", "build"))
    registry = (pool / "registry.yaml").read_text(encoding="utf-8")
    values = "".join(f'      - {{id: v{k}, label: "V{k}"}}\n' for k in range(200))
    registry = registry.replace("vocabularies:\n", 'vocabularies:\n  wide:\n    label: "Wide"\n    values:\n' + values, 1)
    names = [f"f{k}" for k in range(56)] + [f"a{k}" for k in range(8)] + [f"b{k}" for k in range(8)]
    fields = "".join(f'  {name}: {{type: choice, vocabulary: wide, label: "F {name}"}}\n' for name in names)
    (pool / "registry.yaml").write_text(registry.replace(venue, venue + fields, 1), encoding="utf-8")
    claims = []
    for n in range(count):
        either = " and ".join(f"(a{k} = v{n % 200} or b{k} = v{n % 200})" for k in range(8))
        rest = " and ".join(f"f{k} != v{(k + n) % 200}" for k in range(54))
        where = f"{either} and {rest} and f55 = v1 and f55 = v2"
        claims.append(
            f'  - id: c{n}\n    statement: "x"\n    over: entries\n    where: "{where}"\n    expected: 0\n    boundary: "b"\n'
        )
    (pool / "claims.yaml").write_text("claims:\n" + "".join(claims), encoding="utf-8")
    return pool


def _unshaped_cases(shipped: Path, folder: Path, times: int) -> list[BoundedRow]:
    """The last round's traces, in the survey artifact's format (no schema declared): empty
    events and no edges, alone and as a corpus line of the pool; an edge naming a missing
    event of 100 kB after a quote; a top level of 300,000 unknown fields."""

    timed = _timer(shipped, folder, times)

    found = []
    no_edges = b'{"trace_id": "no-edges", "events": [' + b",".join([b"{}"] * 349_526) + b"]}"
    empty = folder / "no-edges.json"
    empty.write_bytes(no_edges)
    found.append(
        BoundedRow(
            "trace validate: 349,526 empty events, no edges, no schema (the first 100 shown)",
            f"{empty.stat().st_size / 1e6:,.1f} MB",
            timed("trace", "validate", str(empty)),
        )
    )
    pool = _pool(shipped, folder / "pool-no-edges")
    with gzip.open(pool / CORPUS, "wb") as handle:
        handle.write(no_edges + b"\n")
    found.append(
        BoundedRow(
            "build: the same as a corpus line (its first problems shown)",
            f"{(pool / CORPUS).stat().st_size / 1e3:,.1f} kB of gzip",
            _build(pool, folder, times, 0),
        )
    )
    quoted = folder / "quoted-name.json"
    quoted.write_bytes(
        json.dumps(
            {
                "trace_id": "quoted",
                "events": [{"id": "e", "t": 0, "type": "message", "agent": "a"}],
                "edges": [{"src": "e", "dst": "x'" + "a" * 100_000 + "b" * k, "type": "message"} for k in range(4)],
            }
        ).encode()
    )
    found.append(
        BoundedRow(
            "trace validate: 4 edges to missing events of 100 kB names after a quote (refused)",
            f"{quoted.stat().st_size / 1e3:,.0f} kB",
            timed("trace", "validate", str(quoted)),
        )
    )
    unknown = folder / "unknown-fields.json"
    unknown.write_bytes(json.dumps({"trace_id": "t", "events": [], "edges": [], **{f"k{i}": 0 for i in range(300_000)}}).encode())
    found.append(
        BoundedRow(
            "trace validate: 300,000 unknown fields at the top level (the first 100 shown)",
            f"{unknown.stat().st_size / 1e6:,.1f} MB",
            timed("trace", "validate", str(unknown)),
        )
    )
    for path in (empty, quoted, unknown):
        path.unlink()
    return found


def _import_cases(shipped: Path, folder: Path, times: int) -> list[BoundedRow]:
    """The fifth round's OTLP exports: many handoffs among many agents, and many traces."""

    timed = _timer(shipped, folder, times, expect=0)

    found = []
    handoffs = folder / "handoffs.json"
    spans = [_otlp_span(0, None, "root", 0, 10**12, "invoke_agent")]
    spans += [_otlp_span(1 + k, 0, "transfer_to_zz", 1 + k, 2 + k, "execute_tool") for k in range(1700)]
    spans += [_otlp_span(1701 + k, 0, "a-" * 95, 10**6 + k, 10**6 + k + 1, "invoke_agent") for k in range(1200)]
    handoffs.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    found.append(
        BoundedRow(
            "trace import: 1,700 handoffs to an agent never invoked, among 1,200 agents",
            f"{handoffs.stat().st_size / 1e3:,.0f} kB",
            timed("trace", "import", "--from", "otlp", str(handoffs)),
        )
    )
    many = folder / "many-traces.json"
    spans = [_otlp_span(0, None, "x", 1, 2, "execute_tool") | {"traceId": f"{k + 1:032x}"} for k in range(5000)]
    many.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    found.append(
        BoundedRow(
            "trace import -o FOLDER: 5,000 traces of one span each (refused)",
            f"{many.stat().st_size / 1e3:,.0f} kB",
            timed("trace", "import", "--from", "otlp", str(many), "-o", str(folder / "many"), expect=1),
        )
    )
    chain = folder / "handoff-chain.json"
    spans = [
        _named(_otlp_span(k, k - 1 if k else None, "invoke_agent x", 0, 10**9, "invoke_agent"), "gen_ai.agent.name", "x")
        for k in range(16_000)
    ]
    spans += [
        _named(_otlp_span(16_000 + k, 15_999, "agent_handoff", 0, 1, "agent_handoff"), "gen_ai.handoff.to_agent", "x")
        for k in range(16_000)
    ]
    chain.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    found.append(
        BoundedRow(
            "trace import: 16,000 handoffs under a chain of 16,000 agents of one name",
            f"{chain.stat().st_size / 1e6:,.1f} MB",
            timed("trace", "import", "--from", "otlp", str(chain)),
        )
    )
    wide = folder / "wide-orchestrator.json"
    spans = [_named(_otlp_span(0, None, "invoke_agent lead", 0, 10**12, "invoke_agent"), "gen_ai.agent.name", "lead")]
    spans += [
        _named(_otlp_span(k, 0, f"invoke_agent w{k}", k, k + 1, "invoke_agent"), "gen_ai.agent.name", f"w{k}")
        for k in range(1, 120_001)
    ]
    wide.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    found.append(
        BoundedRow(
            "trace import: one agent running 120,000 others",
            f"{wide.stat().st_size / 1e6:,.0f} MB",
            timed("trace", "import", "--from", "otlp", str(wide)),
        )
    )
    for path in (handoffs, many, chain, wide):
        path.unlink()
    return found


def _named(span: dict, key: str, value: str) -> dict:
    """A span with one more string attribute."""
    return span | {"attributes": span["attributes"] + [{"key": key, "value": {"stringValue": value}}]}


def _otlp_span(number: int, parent: int | None, name: str, start: int, end: int, operation: str) -> dict:
    span = {
        "traceId": "0" * 31 + "1",
        "spanId": f"{number + 1:016x}",
        "name": name,
        "startTimeUnixNano": start,
        "endTimeUnixNano": end,
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": operation}}],
    }
    return span | ({"parentSpanId": f"{parent + 1:016x}"} if parent is not None else {})


def _deep_attribute(depth: int, members: list[bytes]) -> bytes:
    """An OTLP export of one tool call whose attribute is an arrayValue of `members`, `depth` arrays down."""
    value = b'{"arrayValue": {"values": [' * (depth + 1) + b",".join(members) + b"]}}" * (depth + 1)
    return (
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "AAAAAAAAAAAAAAAAAAAAAA==", "spanId": "AAAAAAAAAAA=", '
        b'"name": "t", "startTimeUnixNano": 1, "endTimeUnixNano": 2, "attributes": [{"key": "gen_ai.operation.name", '
        b'"value": {"stringValue": "execute_tool"}}, {"key": "a", "value": ' + value + b"}]}]}]}]}"
    )


def _pool_cases(shipped: Path, folder: Path, times: int) -> list[BoundedRow]:
    """The pool side's: 3,000 records of one title, a .bib of 5,000 long titles alike in
    their letters, a .bib of one long macro used by every record, and a revision whose
    records' folder names one tree ten ways six deep."""
    found = []
    pool = folder / "pool-one-title"
    shutil.copytree(shipped, pool, symlinks=True)
    record = next(iter(sorted((pool / "papers").glob("*.yaml")))).read_text(encoding="utf-8")
    for number in range(3000):
        (pool / "papers" / f"copy-{number}.yaml").write_text(_renamed(record, f"copy-{number}"), encoding="utf-8")
    found.append(
        BoundedRow(
            "validate --no-cache: 3,000 records of one title (one problem each)",
            "3,000 records",
            repeat(lambda: run(paperpool(pool, "validate", "--no-cache"), folder, expect=1), times),
        )
    )
    shutil.rmtree(pool)
    pool = folder / "pool-shuffled-titles"
    shutil.copytree(shipped, pool, symlinks=True)
    words = "alpha bravo charl delta echox foxtr golfy hotel india julie kilom limax".split()
    generator = random.Random(39)
    for number in range(10_000):
        generator.shuffle(words)
        (pool / "papers" / f"zz{number}.yaml").write_text(f"key: zz{number}\ntitle: {' '.join(words)}\n", encoding="utf-8")
    found.append(
        BoundedRow(
            "validate --no-cache: 10,000 titles of the same twelve words in other orders",
            "10,000 records",
            repeat(lambda: run(paperpool(pool, "validate", "--no-cache"), folder, expect=1), times),
        )
    )
    shutil.rmtree(pool)
    titles = folder / "long-titles.bib"
    titles.write_text(_long_titles_bib(5000), encoding="utf-8")
    found.append(
        BoundedRow(
            "import-bib --dry-run: 5,000 titles of 390 characters from 50 words",
            f"{titles.stat().st_size / 1e6:,.1f} MB",
            repeat(lambda: run(paperpool(shipped, "import-bib", "--dry-run", str(titles)), folder), times),
        )
    )
    macro = folder / "long-macro.bib"
    macro.write_text(
        "\n".join(
            ['@string{a = "%s"}' % ("\\'e " * 24000)]
            + [f'@article{{k{i}, title = a # " {i}", author = "Doe, J", year = 2020}}' for i in range(100)]
        ),
        encoding="utf-8",
    )
    found.append(
        BoundedRow(
            "import-bib: one 96,000-character macro used 100 times (refused)",
            f"{macro.stat().st_size / 1e3:,.0f} kB",
            repeat(lambda: run(paperpool(shipped, "import-bib", "--dry-run", str(macro)), folder, expect=1), times),
        )
    )
    readers = folder / "readers.csv"
    readers.write_text(
        ",".join(["key", *(f"orig_f{i}" for i in range(30_000)), *(f"ann_f{i}" for i in range(30_000))])
        + "\n"
        + ",".join(["k1", *["a"] * 30_000, *["b"] * 30_000])
        + "\n",
        encoding="utf-8",
    )
    found.append(
        BoundedRow(
            "audit: a second reader's CSV of 30,000 fields",
            f"{readers.stat().st_size / 1e3:,.0f} kB",
            repeat(lambda: run(paperpool(shipped, "audit", str(readers)), folder), times),
        )
    )
    empty = folder / "empty-cells.csv"
    with empty.open("w", encoding="utf-8") as handle:
        handle.write(",".join(["key", *(f"orig_f{i}" for i in range(500)), *(f"ann_f{i}" for i in range(500))]) + "\n")
        handle.writelines(f"k{i}" + "," * 1000 + "\n" for i in range(48_000))
    found.append(
        BoundedRow(
            "audit: a second reader's CSV of 48,000 rows of 1,000 empty cells",
            f"{empty.stat().st_size / 1e6:,.0f} MB",
            repeat(lambda: run(paperpool(shipped, "audit", str(empty)), folder), times),
        )
    )
    rows, bib = folder / "rows.csv", folder / "rows.bib"
    exported = subprocess.run(
        paperpool(shipped, "export", "--format", "csv"), cwd=folder, capture_output=True, text=True, check=False
    )
    if exported.returncode == 0:  # a pool whose registry lays out a CSV (the tiny test pool has none)
        header = exported.stdout.splitlines()[0]
        rows.write_text(
            header + "\n" + "".join(f"r{i},Row title number {i}" + "," * (header.count(",") - 1) + "\n" for i in range(8000)),
            encoding="utf-8",
        )
        bib.write_text("".join(f"@misc{{b{i}, title={{Bib title number {i}}}}}\n" for i in range(8000)), encoding="utf-8")
        found.append(
            BoundedRow(
                "import-csv --bib --dry-run: 8,000 rows matched against 8,000 BibTeX records",
                f"{(rows.stat().st_size + bib.stat().st_size) / 1e3:,.0f} kB",
                repeat(
                    lambda: run(paperpool(shipped, "import-csv", str(rows), "--bib", str(bib), "--dry-run"), folder, expect=1),
                    times,
                ),
            )
        )
    repository = _expanding_revision(shipped, folder / "repository")
    found.append(
        BoundedRow(
            "diff: a revision whose records' folder expands to a million files (refused)",
            "nine git objects more than the pool",
            repeat(lambda: run(paperpool(repository, "diff", "expanding"), folder, expect=1), times),
        )
    )
    found.append(
        BoundedRow(
            "diff: a revision whose registry names 20,000 corpora (refused)",
            "a registry of 0.7 MB",
            repeat(lambda: run(paperpool(repository, "diff", "many-corpora"), folder, expect=1), times),
        )
    )
    keys = folder / "one-key.bib"
    keys.write_text("@misc{a,}\n" * 20_000, encoding="utf-8")
    found.append(
        BoundedRow(
            "import-bib: 20,000 records of one key (the first 100 named)",
            f"{keys.stat().st_size / 1e3:,.0f} kB",
            repeat(lambda: run(paperpool(shipped, "import-bib", "--dry-run", str(keys)), folder, expect=1), times),
        )
    )
    names = folder / "names.json"
    names.write_text('[{"title": "T", "author": [' + ",".join(["1"] * 5_000_000) + "]}]", encoding="utf-8")
    found.append(
        BoundedRow(
            "import-csljson: one item of 5 million authors that are numbers (the first 50 named)",
            f"{names.stat().st_size / 1e6:,.0f} MB",
            repeat(lambda: run(paperpool(shipped, "import-csljson", "--dry-run", str(names)), folder, expect=1), times),
        )
    )
    pool = folder / "pool-long-claim"
    shutil.copytree(shipped, pool, symlinks=True)
    (pool / "claims.yaml").write_text(
        'claims:\n  - id: long\n    statement: long\n    kind: published\n    expected: ">= 0"\n'
        '    where: "' + " or ".join(["further_families = R1"] * 37_000) + '"\n',
        encoding="utf-8",
    )
    found.append(
        BoundedRow(
            "claims: a published claim's query of 37,000 conditions (refused)",
            f"{(pool / 'claims.yaml').stat().st_size / 1e3:,.0f} kB",
            repeat(lambda: run(paperpool(pool, "claims"), folder, expect=1), times),
        )
    )
    shutil.rmtree(pool)
    for path in (titles, macro, readers, empty, rows, bib, keys, names):
        path.unlink(missing_ok=True)
    shutil.rmtree(repository)
    return found


def _renamed(record: str, key: str) -> str:
    """A record's text under another key, with no id or link of the original's."""
    data = yaml.safe_load(record)
    data.update({"key": key, "arxiv_id": None, "doi": None, "openreview_id": None, "urls": [f"https://example.org/{key}"]})
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _long_titles_bib(records: int) -> str:
    generator = random.Random(39)
    words = ["".join(generator.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(generator.randint(3, 9))) for _ in range(50)]
    lines = []
    for number in range(records):
        title: list[str] = []
        while sum(len(word) + 1 for word in title) < 390:
            title.append(generator.choice(words))
        lines.append(f"@misc{{r{number}, title={{{' '.join(title)}}}, author={{Doe, Jane}}, year={{2024}}}}")
    return "\n".join(lines) + "\n"


def _expanding_revision(shipped: Path, root: Path) -> Path:
    """The pool in a repository of its own, with a branch `expanding` whose papers/ holds
    a tree of ten trees, six levels deep (a million files from a few objects), and a
    branch `many-corpora` whose registry names 20,000 corpora."""
    shutil.copytree(shipped, root, symlinks=True, ignore=shutil.ignore_patterns(".git", ".venv", "build"))

    def git(*arguments: str, given: str | None = None) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", *arguments],
            cwd=root,
            input=given,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "the pool")
    tree = git(
        "mktree", given="".join(f"100644 blob {git('hash-object', '-w', '--stdin', given='x')}\tf{i}\n" for i in range(10))
    )
    for _ in range(5):
        tree = git("mktree", given="".join(f"040000 tree {tree}\td{i}\n" for i in range(10)))
    papers = git("mktree", given=git("ls-tree", "HEAD:papers") + f"\n040000 tree {tree}\tbomb\n")
    top = git(
        "mktree",
        given="\n".join(line for line in git("ls-tree", "HEAD").splitlines() if not line.endswith("\tpapers"))
        + f"\n040000 tree {papers}\tpapers\n",
    )
    git("branch", "expanding", git("commit-tree", top, "-p", "HEAD", "-m", "expanding"))
    # a branch whose registry names 20,000 corpora (its schema allows 20): each was asked of git on its own
    corpora = ", ".join(f"{{name: c{k}, path: c{k}, title: C}}" for k in range(20_000))
    registry_text = git("show", "HEAD:registry.yaml")
    if "\n  corpora:\n" in registry_text:  # the shipped pool's: its own corpora set aside under another name
        written = registry_text.replace("\n  corpora:\n", f"\n  corpora: [{corpora}]\n  corpora_before:\n", 1)
    else:  # a pool without traces (the test's tiny pool)
        written = registry_text + f"\ntraces:\n  corpora: [{corpora}]\n"
    registry = git("hash-object", "-w", "--stdin", given=written)
    named = git(
        "mktree",
        given="\n".join(line for line in git("ls-tree", "HEAD").splitlines() if not line.endswith("\tregistry.yaml"))
        + f"\n100644 blob {registry}\tregistry.yaml\n",
    )
    git("branch", "many-corpora", git("commit-tree", named, "-p", "HEAD", "-m", "many corpora"))
    return root


def _closed_cycle(events: int, closing: int) -> bytes:
    """Events at one time, a causal chain through them, and `closing` copies of the edge back to the first."""
    chain = [{"src": str(i), "dst": str(i + 1), "type": "causal"} for i in range(events - 1)]
    back = [{"src": str(events - 1), "dst": "0", "type": "causal"}] * closing
    return json.dumps(
        {
            "trace_id": "closed",
            "schema": schema_id(),
            "edges": chain + back,
            "events": [{"id": str(i), "t": 0, "type": "message", "agent": "a"} for i in range(events)],
        }
    ).encode()


def _long_unknown_ids(events: int, edges: int) -> bytes:
    """Events of random 199-character ids of a and b (under difflib's 200 past which it
    skips common characters), and edges from other such ids."""
    generator = random.Random(39)
    ids = ["".join(generator.choice("ab") for _ in range(199)) for _ in range(events + edges)]
    return json.dumps(
        {
            "trace_id": "ids",
            "schema": schema_id(),
            "events": [{"id": i, "t": 0, "type": "message", "agent": "a"} for i in ids[:events]],
            "edges": [{"src": i, "dst": ids[0], "type": "message"} for i in ids[events:]],
        }
    ).encode()


def _empty_trace(events: int) -> bytes:
    return (
        b'{"trace_id": "empty", "schema": "'
        + schema_id().encode()
        + b'", "edges": [], "events": ['
        + b",".join([b"{}"] * events)
        + b"]}"
    )


def _pool(shipped: Path, out: Path, by: str = "system", count: str = "x_failure.agent") -> Path:
    """A copy of the pool whose registry declares one corpus, CORPUS (a case writes it)."""
    from paperpool.files.yamlio import load_yaml

    shutil.copytree(shipped, out, symlinks=True)
    registry = out / "registry.yaml"
    data = load_yaml(registry).data
    data.setdefault("traces", {})["corpora"] = [
        {"name": "bounded", "path": CORPUS, "title": "Bounded", "by": [by], "count": [count]}
    ]
    registry.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    (out / CORPUS).parent.mkdir(exist_ok=True)
    with gzip.open(out / CORPUS, "wb") as handle:  # one trace, until a case writes its own
        handle.write(_trace("t", [{"id": "e", "t": 0, "type": "stop", "agent": "a"}]) + b"\n")
    return out


def _trace(name: str, events: list, **fields) -> bytes:
    return json.dumps({"trace_id": name, "schema": schema_id(), **fields, "events": events, "edges": []}).encode()


def _build(pool: Path, folder: Path, times: int, expect: int) -> Series:
    return repeat(lambda: run(paperpool(pool, "build", "--out", str(folder / "site")), pool, expect=expect), times)


def _grouped_corpus(pool: Path, groups: int) -> None:
    """A corpus of one-event traces in `groups` tasks, each with VALUES values of x_value."""
    event = {"id": "e", "t": 0, "type": "stop", "agent": "a"}
    with gzip.open(pool / CORPUS, "wb") as handle:
        for g in range(groups):
            handle.write(
                b"".join(_trace(f"t{g}-{v}", [event], task_id=f"task-{g}", x_value=f"v{v}") + b"\n" for v in range(VALUES))
            )
