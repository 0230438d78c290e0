"""A file given to the wrong command, or holding nothing: each is one line that says what the
file is and what to do with it, and exit status 1 (a compressed trace was "not UTF-8", a
JSON Lines corpus had "unexpected content", a corpus of blank lines "0 traces" and exit 0)."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest
import zstandard

from paperpool.traces import loading

from ..conftest import REPO

SWARM = REPO / "traces" / "swarm-six-workers.json"
OTLP_EXPORT = REPO / "traces" / "otlp" / "research-team.otlp.json"
CORPUS_IS = "a corpus is trace files, or JSON Lines of one trace per line (plain, .gz or .zst); nothing was written"


def test_validate_says_a_compressed_trace_is_compressed_and_what_reads_it(run, tmp_path):
    (tmp_path / "sw.json.gz").write_bytes(gzip.compress(SWARM.read_bytes(), mtime=0))
    (tmp_path / "sw.json.zst").write_bytes(zstandard.ZstdCompressor().compress(SWARM.read_bytes()))
    result = run("trace", "validate", "sw.json.gz", "sw.json.zst", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        "sw.json.gz: is a gzip-compressed file: trace validate reads one uncompressed trace; decompress it "
        "(gzip -dk sw.json.gz), or give it to paperpool trace metrics, which reads compressed corpora\n"
        "sw.json.gz: invalid, 1 problem.\n"
        "sw.json.zst: is a zstd-compressed file: trace validate reads one uncompressed trace; decompress it "
        "(zstd -d sw.json.zst), or give it to paperpool trace metrics, which reads compressed corpora\n"
        "sw.json.zst: invalid, 1 problem.\n"
        "2 files: 0 valid, 2 invalid.\n",
    )
    measured = run("trace", "metrics", "sw.json.gz", cwd=tmp_path)  # as the message says
    assert measured.exit_code == 0 and measured.output.endswith("1 trace: 1 valid, 0 invalid.\n")


def test_validate_says_a_file_of_json_lines_is_a_corpus(run, tmp_path):
    line = json.dumps(json.loads(SWARM.read_text(encoding="utf-8")))
    (tmp_path / "two.jsonl").write_text(f"{line}\n{line}\n", encoding="utf-8")
    result = run("trace", "validate", "two.jsonl", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        "two.jsonl: holds several JSON documents, one per line: JSON Lines, which paperpool trace metrics reads "
        "as a corpus, one trace per line (named .jsonl); trace validate checks one trace file\n"
        "two.jsonl: invalid, 1 problem.\n",
    )
    measured = run("trace", "metrics", "two.jsonl", cwd=tmp_path)
    assert measured.exit_code == 0 and measured.output.endswith("2 traces: 2 valid, 0 invalid.\n")
    # a trace file named .json read as one trace: the loader's own words, for every command
    shutil.copy(tmp_path / "two.jsonl", tmp_path / "two.json")
    one = run("trace", "metrics", "two.json", cwd=tmp_path)
    assert (one.exit_code, one.output.splitlines()[0]) == (
        1,
        "two.json: holds several JSON documents, one per line (JSON Lines), where a trace file holds one; named "
        ".jsonl, it is read as a corpus of traces, one per line",
    )


@pytest.mark.parametrize(
    ("data", "shape", "message"),
    [
        (b'{"a": 1}\n{"b": 2}\n', loading.JSON_LINES, None),
        (b'{"a": 1}\r\n\r\n\r\n[2]', loading.JSON_LINES, None),
        # what follows the first document is no JSON: the parser's own words
        (b'{"a": 1}\nnot json\n', None, "not JSON at line 2, column 1: unexpected content after document; "),
        # several documents, but not one per line
        (b'{"a":\n1}\n{"b": 2}\n', None, "not JSON at line 3, column 1: unexpected content after document; "),
        (b'{"a": 1} {"b": 2}\n', None, "not JSON at line 1, column 10: unexpected content after document; "),
        (b"\x1f\x8b\x08\x00", "gzip", "is a gzip-compressed file, not JSON text; decompress it first (gzip -dk FILE)"),
        (b"\x28\xb5\x2f\xfd\x00", "zstd", "is a zstd-compressed file, not JSON text; decompress it first (zstd -d FILE)"),
    ],
)
def test_the_loader_tells_json_lines_and_compressed_files_by_their_content(data, shape, message):
    with pytest.raises(loading.TraceUnreadable) as caught:
        loading.parse_trace(data)
    assert caught.value.shape == shape
    if message is not None:
        assert caught.value.findings[0].message.startswith(message)


def test_import_says_a_compressed_export_is_compressed(run, tmp_path, snapshot):
    (tmp_path / "r.otlp.json.gz").write_bytes(gzip.compress(OTLP_EXPORT.read_bytes(), mtime=0))
    before = snapshot(tmp_path)
    said = (
        "Error: r.otlp.json.gz: is a gzip-compressed file; trace import reads exports uncompressed: decompress it "
        "first (gzip -dk r.otlp.json.gz) and import the file it gives (nothing was written)\n"
    )
    for given in ([], ["--from", "otlp"], ["--from", "who-and-when"]):
        result = run("trace", "import", *given, "r.otlp.json.gz", "-o", "t.json", cwd=tmp_path)
        assert (result.exit_code, result.output) == (1, said), given
    assert snapshot(tmp_path) == before
    (tmp_path / "r.otlp.json").write_bytes(OTLP_EXPORT.read_bytes())
    both = run("trace", "import", "r.otlp.json", "r.otlp.json.gz", "-o", "t.json", cwd=tmp_path)
    assert (both.exit_code, both.output) == (1, said)  # every input, not only the first


def test_a_corpus_holding_no_trace_is_an_error_naming_it(run, tmp_path):
    (tmp_path / "blank.jsonl").write_text("\n\n", encoding="utf-8")
    (tmp_path / "empty.jsonl.gz").write_bytes(gzip.compress(b"", mtime=0) * 3)  # three empty gzip members
    for given, holds in (
        (["blank.jsonl"], "blank.jsonl: holds"),
        (["empty.jsonl.gz"], "empty.jsonl.gz: holds"),
        (["blank.jsonl", "empty.jsonl.gz"], "blank.jsonl, empty.jsonl.gz: hold"),
    ):
        result = run("trace", "metrics", *given, cwd=tmp_path)
        assert (result.exit_code, result.output) == (1, f"Error: {holds} no trace, only blank lines or none; {CORPUS_IS}\n")
    many = [f"b{n}.jsonl" for n in range(5)]
    for name in many:
        (tmp_path / name).write_text("\n", encoding="utf-8")
    result = run("trace", "metrics", *many, cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: b0.jsonl, b1.jsonl, b2.jsonl and 2 more: hold no trace, only blank lines or none; {CORPUS_IS}\n",
    )


@pytest.mark.slow
def test_export_and_summary_of_a_corpus_holding_no_trace_are_errors_too(run, tmp_path):
    (tmp_path / "blank.jsonl").write_text("\n\n", encoding="utf-8")
    commands = (
        ["export", "blank.jsonl", "-o", "tables"],
        ["summary", "blank.jsonl"],
        ["metrics", "blank.jsonl", "--format", "csv", "-o", "rows.csv"],
        ["metrics", "blank.jsonl", "--format", "parquet", "-o", "rows.parquet"],
        ["metrics", "blank.jsonl", "--format", "csv"],
    )
    for command in commands:
        result = run("trace", *command, cwd=tmp_path)
        assert (result.exit_code, result.output) == (
            1,
            f"Error: blank.jsonl: holds no trace, only blank lines or none; {CORPUS_IS}\n",
        ), command
        assert sorted(path.name for path in tmp_path.iterdir()) == ["blank.jsonl"], command  # nothing written
