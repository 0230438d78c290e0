"""`--engine ray`: a corpus's traces measured by Ray Data, on a Ray cluster or on a Ray
started for the command, with the local engine's own functions.

The pipeline: the corpus's files (corpus.expand, in this process, so that an input that
names nothing is the same error) -> each file's records, read by corpus.records in a Ray
task (the same JSON Lines line numbers, the same records for what cannot be read) ->
batches of tables.BATCH records, each measured and encoded by the work function the
local engine runs (tables.measure_batch or export_batch, over rows.measure) -> back to
this process, which writes them as the local engine does. Nothing is computed here in a
second way: Ray Data only moves the records and the results and schedules the work.

The results come back rather than being written by the workers (Dataset.write_parquet):
-o names a path on the machine that runs the command, which the cluster's nodes may not
share, and the outputs (one Parquet file, or the export's folder put in place whole) are
then the very files the local engine writes, through the same writers.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pickle
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from paperpool.files.problems import PaperpoolError

from . import corpus
from .limits import default as default_limits

NEEDS_RAY = "--engine ray needs Ray, which is not installed: pip install 'paperpool[ray]'"


def connect():
    """Ray, connected: to the cluster RAY_ADDRESS names (ray://HEAD:10001 through Ray
    Client, or HEAD:6379 on one of its nodes), else to a Ray started for this command
    and stopped with it; to the one already connected, when a caller connected it.
    Ray's own logging stays off standard output, which may be the table."""
    try:
        import ray
    except ImportError:
        raise PaperpoolError(NEEDS_RAY) from None
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS") or None
        local = {} if address else {"include_dashboard": False}
        try:  # address "local": a Ray of its own, not one that `ray start` left on this machine
            ray.init(address=address or "local", logging_level=logging.ERROR, log_to_driver=False, **local)
        except ConnectionError as exc:  # an OSError, which would otherwise be reported as a file's
            where = f"RAY_ADDRESS={address}: cannot connect to a Ray cluster there" if address else "cannot start Ray"
            raise PaperpoolError(
                f"{where} ({exc}); check that the cluster is up and the address is its "
                "ray://HEAD:10001, or unset RAY_ADDRESS to run Ray on this machine"
            ) from None
    import ray.data

    logging.getLogger("ray.data").setLevel(logging.ERROR)
    context = ray.data.DataContext.get_current()
    # The batches come back in input order (Ray Data runs them in any order and holds
    # what finishes early): the rows, the problem lines and --strict's first invalid trace
    # are then the local engine's, at no more cost than some results held back. Sorting
    # afterwards would need a key the tables lack (a file's place among the inputs and a
    # trace's in its file: `line` is null for a .json file) and a shuffle of the corpus.
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    return ray


def ordered_map(work: Callable, paths: list[Path], batch: int, jobs: int | None, setup: Callable, *settings) -> Iterator:
    """work(records) for every `batch` records of the files, in order, as workers.ordered_map
    gives them; computed by Ray Data (`jobs` tasks at a time at the most), each task set up
    by setup(*settings)."""
    limits = settings[0].get("limits") if settings else None
    corpus.within_limits(paths, limits)
    ray = connect()
    # each file by its absolute path, for nodes that do not share this process's folder;
    # named as found, as the local engine names it
    files = ray.data.from_items([{"file": str(path), "path": str(path.absolute())} for path in paths])
    # one row per record, then batches of `batch` records, each measured by one task: a
    # large file's batches on many cores. (Ray Data fuses map_batches into the task before
    # it; after flat_map, which changes the rows' count, it keeps them apart.)
    records = files.flat_map(_read, fn_kwargs={"limits": limits})
    done = records.map_batches(
        _work,
        batch_size=batch,
        batch_format="pyarrow",
        concurrency=jobs,
        fn_kwargs={"work": work, "setup": setup, "settings": settings},
    )
    for row in done.iter_rows():
        yield pickle.loads(row["done"])


def _read(file: dict, limits=None) -> Iterator[dict]:
    """A file's records, one row each (a Ray task; one file at a time, a line at a time).
    The tasks read the files apart, so the corpus's limits for all its files together were
    held before (corpus.within_limits); a task holds only a trace's own (a file that only
    the whole corpus's allowance lets expand would stop a task that counted it alone)."""
    bounds = limits or default_limits()
    unbounded = sys.maxsize
    held = dataclasses.replace(bounds, corpus_bytes=unbounded, corpus_lines=unbounded, compression_ratio=unbounded)
    for record in corpus.records([Path(file["path"])], held):
        yield {"file": file["file"], "line": record.line, "data": record.data, "problem": record.problem}


def _work(records, work: Callable, setup: Callable, settings: tuple) -> dict:
    """One batch measured by the local engine's work function (a Ray task); what it gives
    goes back whole, as from a local worker."""
    setup(*settings)
    batch = [corpus.Record(**row) for row in records.to_pylist()]
    return {"done": [pickle.dumps(work(batch))]}
