"""The import of a real bibliography nobody here wrote: TUGboat's complete bibliography
(tugboat.bib, 4,839 records kept by Nelson Beebe since 1980, public domain), as Debian's
texlive-bibtex-extra ships it; scripts/test fetches it and names it in PAPERPOOL_REAL_BIB.
Every record is either imported, skipped as a paper already read, or listed with its
line and the fix; none stops the others."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REAL_BIB = os.environ.get("PAPERPOOL_REAL_BIB")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(REAL_BIB is None, reason="PAPERPOOL_REAL_BIB names no bibliography (scripts/test fetches one)"),
]


def test_every_record_of_a_real_bibliography_is_imported_skipped_or_listed_with_its_line(run, pool_copy):
    path = Path(REAL_BIB)
    assert path.is_file(), f"PAPERPOOL_REAL_BIB names {path}, which is not there: scripts/test fetches it"
    text = path.read_text(encoding="utf-8", errors="replace")
    records = len(re.findall(r"(?im)^@(?!string\b|preamble\b|comment\b)[a-z]+\s*[{(]", text))
    result = run("import-bib", "--dry-run", str(path), cwd=pool_copy)
    lines = result.output.splitlines()
    created = [line for line in lines if line.startswith("would create papers/")]
    skipped = [line for line in lines if line.startswith("skipped ")]
    refused = [line for line in lines if line.startswith("not imported: ")]
    assert records > 4_000
    assert len(created) + len(skipped) + len(refused) == records
    assert all(re.match(rf"not imported: {re.escape(path.name)}:\d+: .+; ", line) for line in refused)
    assert result.exit_code == (1 if refused else 0)
    assert len(created) > 2_000
    # BibTeX's own reading: a field given twice keeps its first value, noted (the file has such records)
    assert any(line.startswith(f"note: {path.name}:") and "is given twice" in line for line in lines)


def test_its_titles_read_as_text_with_their_math_kept_for_bibtex():
    """TeX's names ({\\LaTeX}, \\TeX) are words, not dropped; math stays as written in the
    record (BibTeX writes it back) and reads as text wherever people read it."""
    from paperpool.formats.bibtex.reading import read_bib
    from paperpool.rendering.tex import readable

    path = Path(REAL_BIB)
    titles = [record.title for record in read_bib(path.read_text(encoding="utf-8", errors="replace"), path.name).records]
    with_math = [title for title in titles if "$" in title]
    assert len(with_math) >= 10
    assert all("\\" in title for title in with_math if "Omega" in title)  # kept as written
    assert [readable(title) for title in with_math if "\\" in readable(title)] == []
    assert any("Ω" in readable(title) for title in with_math)
    assert sum("LaTeX" in title for title in titles) > 100
