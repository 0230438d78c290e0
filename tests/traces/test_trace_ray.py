"""`--engine ray`: trace metrics and trace export run by Ray Data, in a Ray started in
this process (local mode, two CPUs), give the local engine's tables exactly, its problem
lines and its exit status."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from paperpool.cli.commands import cli
from paperpool.traces import synth

pytestmark = pytest.mark.slow  # real builds, installs or long runs: left out of the quick run, run by scripts/test and CI

pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def ray_local():
    """One Ray for the module: the commands find it connected and use it."""
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A folder: a .json trace, a .jsonl with a line that is no JSON and a trace that is
    invalid, and a .jsonl.gz of another run (for partitioning)."""
    folder = tmp_path_factory.mktemp("corpus")
    first = list(synth.corpus(12, events=20, group_size=4, seed=0))
    synth.write(first[0], folder / "one.json")
    lines = [orjson.dumps(trace) for trace in first[1:]]
    lines[3:3] = [b"{not json", orjson.dumps({**first[4], "edges": "none"})]
    (folder / "rollouts.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    synth.write_corpus(synth.corpus(9, events=30, group_size=3, seed=1), folder / "more.jsonl.gz")
    return folder


def paperpool(where: Path, *args: str):
    """`paperpool ARGS` in the folder `where` (each engine writes its own)."""
    where.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(where)
        return CliRunner().invoke(cli, list(args), prog_name="paperpool", catch_exceptions=False)


def both(tmp_path: Path, *args: str):
    """The command run by each engine: (local result, ray result), each in its own folder."""
    return paperpool(tmp_path / "local", *args), paperpool(tmp_path / "ray", *args, "--engine", "ray")


def same_outcome(local, ray) -> None:
    assert (local.exit_code, local.stdout, local.stderr) == (ray.exit_code, ray.stdout, ray.stderr)
    assert local.exit_code == 1  # two invalid traces
    problems = local.stderr.splitlines()
    assert [line.split(": ", 1)[0].rsplit("/", 1)[1] for line in problems[:2]] == ["rollouts.jsonl:4", "rollouts.jsonl:5"]
    assert problems[2].startswith("23 traces to ") and problems[2].endswith(": 21 valid, 2 invalid.")


def test_metrics_parquet_is_the_local_table(ray_local, corpus, tmp_path):
    local, ray = both(tmp_path, "trace", "metrics", str(corpus), "--format", "parquet", "-o", "rows.parquet")
    same_outcome(local, ray)
    expected = pq.read_table(tmp_path / "local" / "rows.parquet")
    got = pq.read_table(tmp_path / "ray" / "rows.parquet")
    assert got.schema == expected.schema and got.equals(expected)  # same columns, types, rows, order
    assert expected.num_rows == 23 and expected.column("valid").to_pylist().count(False) == 2


def test_export_is_the_local_tables(ray_local, corpus, tmp_path):
    local, ray = both(tmp_path, "trace", "export", str(corpus), "-o", "tables")
    same_outcome(local, ray)
    for table in ("traces", "events", "edges", "rewards"):
        files = [
            sorted(p.relative_to(tmp_path / engine).as_posix() for p in (tmp_path / engine).rglob("*.parquet"))
            for engine in ("local", "ray")
        ]
        assert files[0] == files[1]
        expected = pq.read_table(tmp_path / "local" / "tables" / table / "part-0.parquet")
        got = pq.read_table(tmp_path / "ray" / "tables" / table / "part-0.parquet")
        assert got.schema == expected.schema and got.equals(expected), table
        assert expected.num_rows > 0


def test_partitioned_export_is_the_local_tables(ray_local, corpus, tmp_path):
    import duckdb

    local, ray = both(tmp_path, "trace", "export", str(corpus), "-o", "tables", "--partition-by", "run,step")
    same_outcome(local, ray)
    # the same partitions (how many files each holds is how the engine batched the corpus)
    folders = [
        sorted({p.parent.relative_to(tmp_path / engine).as_posix() for p in (tmp_path / engine).rglob("*.parquet")})
        for engine in ("local", "ray")
    ]
    assert folders[0] == folders[1] and "tables/events/run=run-1/step=0" in folders[0]
    for table in ("traces", "events", "edges", "rewards"):
        read = [
            duckdb.sql(
                f"SELECT * FROM read_parquet('{tmp_path / engine / 'tables' / table}/**/*.parquet', "
                "hive_partitioning = true) ORDER BY ALL"
            ).fetchall()
            for engine in ("local", "ray")
        ]
        assert read[0] == read[1] and read[0], table


def test_a_cluster_named_by_ray_address_gives_the_local_rows(ray_local, corpus, tmp_path):
    """Another process, as on a cluster's machine: RAY_ADDRESS names the module's Ray; the
    rows go to standard output as JSON Lines, which Ray's logging must leave alone."""
    import os

    local = paperpool(tmp_path, "trace", "metrics", str(corpus))
    env = {**os.environ, "RAY_ADDRESS": ray_local.get_runtime_context().gcs_address}
    ray = subprocess.run(
        [sys.executable, "-m", "paperpool", "trace", "metrics", str(corpus), "--engine", "ray"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert (ray.returncode, ray.stdout, ray.stderr) == (local.exit_code, local.stdout, local.stderr)
    assert len(ray.stdout.splitlines()) == 23


def test_without_ray_one_line_says_how_to_install(corpus, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    result = paperpool(tmp_path, "trace", "export", str(corpus), "-o", "tables", "--engine", "ray")
    assert result.exit_code == 1
    assert result.output == "Error: --engine ray needs Ray, which is not installed: pip install 'paperpool[ray]'\n"
    assert not (tmp_path / "tables").exists()


def test_the_cli_does_not_import_ray():
    code = "import sys, paperpool.cli.commands; sys.exit('ray' in sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)  # exit status 1 when it does


def test_the_corpus_limits_hold_for_all_its_files_together_on_ray(ray_local, tmp_path):
    """Issue 39's fourth review: Ray's tasks read the files apart, each under the whole
    corpus's limits, so two files of 6 lines passed a limit of 8 lines (and many small
    compressed files each got the compression allowance). The limits are now held over the
    corpus before any task runs, as the local engine holds them."""
    from ..conftest import TINY, edit

    pool = tmp_path / "pool"
    shutil.copytree(TINY, pool)
    edit(pool / "registry.yaml", "pool:\n", "traces:\n  limits: {corpus_lines: 8}\npool:\n")
    folder = tmp_path / "two"
    folder.mkdir()
    for name, seed in (("a", 0), ("b", 1)):
        synth.write_corpus(synth.corpus(6, events=10, group_size=3, seed=seed), folder / f"{name}.jsonl")
    local, ray = both(tmp_path, "--root", str(pool), "trace", "metrics", str(folder), "--format", "csv")
    assert (local.exit_code, local.stderr) == (ray.exit_code, ray.stderr)
    assert local.exit_code == 1 and local.stderr.startswith(
        f"Error: {folder / 'b.jsonl'}:3: the corpus is over the limit of 8 lines"
    )


def test_a_file_that_only_the_corpus_allowance_lets_expand_is_read_on_ray(ray_local, tmp_path):
    """Issue 39's sixth review: each Ray task held its file to the compression ratio alone,
    with a fresh allowance, so a file the corpus's limits accept stopped its task, and the
    command ended in Ray's traceback and an internal error."""
    import gzip
    import os

    folder = tmp_path / "corpus"
    folder.mkdir()
    traces = list(synth.corpus(70, events=10, group_size=5, seed=5))
    with gzip.open(folder / "a.jsonl.gz", "wb") as handle:  # random padding: it compresses little
        for trace in traces[:50]:
            handle.write(orjson.dumps(trace | {"x_pad": os.urandom(4000).hex()}) + b"\n")
    with gzip.open(folder / "b.jsonl.gz", "wb", compresslevel=9) as handle:  # a megabyte of one letter each
        for trace in traces[50:]:
            handle.write(orjson.dumps(trace | {"x_pad": "a" * 1_000_000}) + b"\n")
    local, ray = both(tmp_path, "trace", "metrics", str(folder), "--format", "csv", "-o", "rows.csv")
    assert (local.exit_code, ray.exit_code) == (0, 0), ray.output
    assert (tmp_path / "local" / "rows.csv").read_bytes() == (tmp_path / "ray" / "rows.csv").read_bytes()
