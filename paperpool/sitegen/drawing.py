"""The charts drawn in another process while the site engine builds the pages.

Drawing takes matplotlib's import and a fraction of a second per chart: on a small pool,
longer than every other step paperpool takes. The pages need only each chart's title
and alt text, and the engine only needs its files to exist (mkdocs --strict checks
every image a page links to), so the pages are written with a placeholder file per
chart, the engine builds, and the drawn charts replace the placeholders in the new site
before it is swapped in. A build killed at any moment still leaves the old site whole.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sys
import traceback
from pathlib import Path
from typing import Self

from paperpool.files import processes
from paperpool.files.problems import PaperpoolError

from .charts import Chart

PLACEHOLDER = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>\n'
_FAILED = "failed.txt"


class Drawing:
    """Charts being drawn into `folder` (a scratch folder of the build's)."""

    def __init__(self, charts: list[Chart], folder: Path):
        self.names = [f"{chart.id}-{variant}.svg" for chart in charts for variant in ("light", "dark")]
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        context = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
        self.process = context.Process(target=_draw_all, args=(charts, folder, os.getpid()), daemon=True) if charts else None
        if self.process is not None:
            self.process.start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        # a build that stopped early (bad input, an engine failure) leaves no drawing behind
        if self.process is not None and self.process.is_alive():
            self.process.terminate()
            self.process.join()

    def placeholders(self, prefix: str) -> dict[str, str]:
        return {f"{prefix}/{name}": PLACEHOLDER for name in self.names}

    def finish(self, into: Path) -> None:
        """Wait for the drawing, then put the charts into `into` over the placeholders."""
        if self.process is None:
            return
        self.process.join()
        failed = self.folder / _FAILED
        if failed.exists() or self.process.exitcode != 0:
            why = failed.read_text(encoding="utf-8").strip() if failed.exists() else f"exit status {self.process.exitcode}"
            raise PaperpoolError(f"drawing the charts failed ({why}); the previous site was left as it was")
        into.mkdir(parents=True, exist_ok=True)
        for name in self.names:
            shutil.copyfile(self.folder / name, into / name)


def _draw_all(charts: list[Chart], folder: Path, parent: int) -> None:
    processes.start_worker(parent)  # ends with the build, however it ends
    try:
        for chart in charts:
            light, dark = chart.svgs()
            (folder / f"{chart.id}-light.svg").write_text(light, encoding="utf-8")
            (folder / f"{chart.id}-dark.svg").write_text(dark, encoding="utf-8")
    except Exception as exc:  # noqa: BLE001 - any failure is reported by the build, in the parent process
        last = traceback.extract_tb(exc.__traceback__)[-1]
        (folder / _FAILED).write_text(
            f"{type(exc).__name__}: {exc} at {Path(last.filename).name}:{last.lineno}", encoding="utf-8"
        )
        raise SystemExit(1) from None
