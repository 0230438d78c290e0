"""Folders of a pool walked without recursion (issue 39's sixth review: a folder 990
levels deep ended validate, build, readme, serve and trace metrics with a RecursionError):
past 64 levels, one line names the path."""

from __future__ import annotations

import os
import shutil

import pytest

from paperpool.files import walk

from ..conftest import REPO, TINY, remove_deep


def _deep(folder, levels: int, name: str = "x.md") -> None:
    path = str(folder)
    os.makedirs(path, exist_ok=True)
    for _ in range(levels):  # a level at a time: os.makedirs calls itself once a level
        path = os.path.join(path, "a")
        os.mkdir(path)
    with open(os.path.join(path, name), "w", encoding="utf-8") as handle:
        handle.write("# x\n")


def test_the_walk_finds_every_file_in_order_and_enters_no_linked_folder(tmp_path):
    (tmp_path / "b").mkdir()
    for name in ("b/z.md", "a.md", "c.md"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "b")
    found = sorted(path.relative_to(tmp_path).as_posix() for path in walk.files(tmp_path))
    assert found == ["a.md", "b/z.md", "c.md", "link"]


LINE = "folders nested more than 64 levels deep; flatten them (paperpool looks no deeper)\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("where", "command", "name"),
    [
        ("site", ["validate"], "x.md"),
        ("templates", ["readme", "--check"], "x.txt"),
        ("corpora/c", ["trace", "metrics", "corpora/c"], "x.jsonl"),
    ],
)
def test_a_folder_990_levels_deep_is_one_line(run, tmp_path, where, command, name):
    root = tmp_path / "pool"
    shutil.copytree(TINY, root)
    shutil.copyfile(REPO / "README.md", root / "README.md")
    _deep(root / where, 990, name)
    try:
        result = run(*command, cwd=root)
    finally:
        remove_deep(root / where)  # pytest's own clean-up of old folders would meet the RecursionError
    assert result.exit_code == 1 and "Traceback" not in result.output and "internal error" not in result.output
    assert result.output.splitlines()[-1].startswith(f"Error: {where}/a/a/") and result.output.endswith(LINE)
