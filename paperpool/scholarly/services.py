"""The services paperpool asks, each with its real base URL, the environment variable
that points it elsewhere (a mirror, a test server), and the least time between two
requests to it (MIN_INTERVAL), from each service's own published limits."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Service:
    name: str  # as messages name it
    default_url: str
    variable: str  # PAPERPOOL_<SERVICE>_URL
    absent: tuple[int, ...] = (404, 410)  # the HTTP statuses by which it says it holds no such thing

    @property
    def base_url(self) -> str:
        return (os.environ.get(self.variable) or self.default_url).rstrip("/")


# arXiv's API answers a paper it does not hold with an empty feed: its 404 says the address is wrong
ARXIV = Service("arXiv", "https://export.arxiv.org/api/query", "PAPERPOOL_ARXIV_URL", absent=())
CROSSREF = Service("Crossref", "https://api.crossref.org", "PAPERPOOL_CROSSREF_URL")
OPENREVIEW = Service("OpenReview", "https://api2.openreview.net", "PAPERPOOL_OPENREVIEW_URL")
OPENALEX = Service("OpenAlex", "https://api.openalex.org", "PAPERPOOL_OPENALEX_URL")
SERVICES = (ARXIV, CROSSREF, OPENREVIEW, OPENALEX)

# The least time, in seconds, between two requests to a service. arXiv's API terms ask
# for no more than one request every 3 seconds; Crossref's public pool allows a few a
# second and OpenAlex ten; OpenReview publishes no figure, so one a second; any other
# host (`refresh`'s check of the pool's links), one a second. Tests set them to 0.
MIN_INTERVAL = {"arXiv": 3.0, "Crossref": 1.0, "OpenReview": 1.0, "OpenAlex": 0.2, "web": 1.0}
