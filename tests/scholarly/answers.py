"""The services' answers the scholarly tests serve from a local server: recorded from arXiv, OpenAlex and Crossref."""

from __future__ import annotations

from ..conftest import REPO

FIXTURES = REPO / "tests" / "scholarly"


XML = "application/atom+xml; charset=utf-8"


JSON = "application/json"


GRESHAKE = (FIXTURES / "arxiv-2302.12173.xml").read_text(encoding="utf-8")


MALT = (FIXTURES / "arxiv-2412.01928.xml").read_text(encoding="utf-8")


# OpenAlex's answer to the works filter add --arxiv sends for arXiv's DOI of the paper: Greshake et al.'s
# version of record (the pool's venue and DOI for it), or no work at all
GRESHAKE_PUBLISHED = (FIXTURES / "openalex-works-arxiv-2302.12173.json").read_text(encoding="utf-8")


NO_WORKS = '{"meta": {"count": 0, "page": 1, "per_page": 1}, "results": [], "group_by": []}'
