"""Regenerate the Who&When corpus the site summarises: every one of the dataset's 184 logs
(both parts) converted by `paperpool trace import --from who-and-when`, stored as one
gzip-compressed JSON Lines file, one trace a line.

    python scripts/who_and_when_corpus.py [DATASET]

DATASET is the folder holding the dataset's `Who&When/` (default: ../shared/real-traces/
who-and-when beside the repository). It writes corpora/who-and-when.jsonl.gz; the
lines come in the dataset's order (hand-crafted, then algorithm-generated, each by log
number), each trace as the import wrote it, with no spaces; the gzip header holds no name
and no time, so that the same logs give the same file. tests/traces/test_whowhen.py checks that
the shipped file holds what this script makes.
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATASET = REPO.parent / "shared" / "real-traces" / "who-and-when"
CORPUS = REPO / "corpora" / "who-and-when.jsonl.gz"
PARTS = ("Hand-Crafted", "Algorithm-Generated")  # the dataset's folders, in the corpus's order


def logs(dataset: Path) -> list[Path]:
    """The dataset's logs, part by part, each by its number."""
    found = [path for part in PARTS for path in sorted((dataset / "Who&When" / part).glob("*.json"), key=lambda p: int(p.stem))]
    if len(found) != 184:
        raise SystemExit(f"{dataset}: expected the 184 logs of Who&When in Who&When/{{{','.join(PARTS)}}}, found {len(found)}")
    return found


def lines(dataset: Path) -> bytes:
    """The corpus, uncompressed: the import's traces of every log, one a line."""
    from paperpool.cli.commands import cli

    with tempfile.TemporaryDirectory(prefix="who-and-when-") as scratch:
        out = Path(scratch, "traces")
        cli.main(
            ["trace", "import", "--from", "who-and-when", *map(str, logs(dataset)), "-o", str(out)],
            prog_name="paperpool",
            standalone_mode=False,
        )
        traces = [json.loads(path.read_text(encoding="utf-8")) for path in out.glob("*.json")]
    order = {f"{part}/{path.name}": index for index, path in enumerate(logs(dataset)) for part in [path.parent.name]}
    traces.sort(key=lambda trace: order[trace["x_source"]["log"]])
    return b"".join(json.dumps(trace, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n" for trace in traces)


def compressed(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def main() -> None:
    dataset = Path(sys.argv[1]) if len(sys.argv) > 1 else DATASET
    text = lines(dataset)
    data = compressed(text)
    CORPUS.parent.mkdir(parents=True, exist_ok=True)
    CORPUS.write_bytes(data)
    print(f"wrote {CORPUS.relative_to(REPO)}: {len(text.splitlines())} traces, {len(data):,} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
