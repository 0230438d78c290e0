"""What makes two records the same paper: normalised identifiers, URLs and titles."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import parse_qs, urlsplit

ARXIV_RE = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$")
DOI_RE = re.compile(r"^10\.\d{4,9}/\S+$")
OPENREVIEW_RE = re.compile(r"^[A-Za-z0-9_-]{6,20}$")
PREFIXED_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 ._/-]*:\S+$|^[A-Za-z0-9][A-Za-z0-9._/-]*$")

PATTERNS = {
    "arxiv": (ARXIV_RE, "an arXiv id like 2508.04652 or cs/0112017, without 'arXiv:'"),
    "doi": (DOI_RE, "a DOI like 10.1287/moor.27.4.819.297, without https://doi.org/"),
    "openreview": (OPENREVIEW_RE, "the id after ?id= in an OpenReview link, like 7Yayy5fNLg"),
    "prefixed": (PREFIXED_RE, "an identifier like arXiv:2305.14325, OpenReview:ZIpdu0cHYu or a plain NAME-WITHOUT-SPACES"),
}

# Characters that change how text is displayed without being visible: never legitimate in a link.
_INVISIBLE = re.compile("[\u0000-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def invisible(text: str) -> bool:
    """Whether `text` holds a control or bidirectional character, never legitimate in a
    link or an identifier (it would show one address and lead to another)."""
    return _INVISIBLE.search(text) is not None


def url_problem(url: str) -> str | None:
    """Why a string is not an acceptable web link, or None when it is."""
    if invisible(url) or any(ch.isspace() for ch in url):
        return "contains spaces or invisible control characters"
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        return f"uses scheme '{parts.scheme}', not http or https" if parts.scheme else "has no http:// or https:// at the start"
    if not parts.hostname:
        return "has no host name"
    return None


def arxiv_id(value: str) -> str:
    value = value.strip()
    if value.lower().startswith("arxiv:"):
        value = value[6:]
    return re.sub(r"v\d+$", "", value).lower()


def doi(value: str) -> str:
    value = value.strip().lower()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        value = value.removeprefix(prefix)
    return value


def ids_in_url(url: str) -> dict[str, str]:
    """Paper identifiers a link carries, as written in it: {"arxiv": "2508.04652"}."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    path = parts.path.rstrip("/")
    if host.endswith("arxiv.org"):
        match = re.match(r"^/(?:abs|pdf|html)/(.+?)(?:\.pdf)?$", path)
        if match:
            return {"arxiv": re.sub(r"v\d+$", "", match.group(1))}
    elif host.endswith("doi.org") and path:
        return {"doi": path.lstrip("/")}
    elif "/doi/10." in path:  # publisher pages such as pubsonline.informs.org/doi/10.1287/...
        return {"doi": path.split("/doi/", 1)[1]}
    elif host.endswith("openreview.net"):
        ids = parse_qs(parts.query).get("id")
        if ids:
            return {"openreview": ids[0]}
    return {}


def url_tokens(url: str) -> set[tuple[str, str]]:
    """Identity tokens of a link: the normalised URL, plus the paper id it carries."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.")
    path = parts.path.rstrip("/")
    tokens = {("url", f"{host}{path}" + (f"?{parts.query}" if parts.query else ""))}
    for scheme, value in ids_in_url(url).items():
        tokens |= identifier_tokens(scheme, value)
    return tokens


def prefixed_tokens(value: str) -> set[tuple[str, str]]:
    scheme, sep, rest = value.partition(":")
    scheme = scheme.strip().lower()
    if sep and scheme == "arxiv":
        return {("arxiv", arxiv_id(rest))}
    if sep and scheme == "doi":
        return {("doi", doi(rest))}
    if sep and scheme == "openreview":
        return {("openreview", rest.strip())}
    return {("identifier", value.strip().lower())}


def identifier_tokens(scheme: str, value: str) -> set[tuple[str, str]]:
    if scheme == "arxiv":
        return {("arxiv", arxiv_id(value))}
    if scheme == "doi":
        return {("doi", doi(value))}
    if scheme == "openreview":
        return {("openreview", value.strip())}
    return prefixed_tokens(value)


def title_key(title: str) -> str:
    """A title reduced to lower-case words, for near-duplicate comparison."""
    text = unicodedata.normalize("NFKC", title).casefold()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


TOKEN_NAMES = {"arxiv": "arXiv id", "doi": "DOI", "openreview": "OpenReview id", "url": "URL", "identifier": "identifier"}


def similar_pairs(keys: list[str], threshold: float) -> list[tuple[int, int, float]]:
    """Every pair (i, j, score), i < j, of title keys at least `threshold` alike
    (rapidfuzz's ratio, 0-100).

    Titles that alike differ little in length: the ratio is at most 200 * shorter /
    (shorter + longer), so in length order each title is compared only with the titles
    after it, up to the longest that can reach the threshold. The comparisons run in
    rapidfuzz's C: a title against its window at a time in a small pool, a block of
    titles against theirs on every core in a large one (which needs numpy, whose import
    alone costs more than a small pool's whole comparison).
    """
    import bisect

    order = sorted(range(len(keys)), key=lambda i: len(keys[i]))
    lengths = [len(keys[i]) for i in order]
    ordered = [keys[i] for i in order]
    stretch = (200.0 - threshold) / threshold  # longest/shortest that can reach the threshold

    def window_end(position: int) -> int:
        return bisect.bisect_right(lengths, lengths[position] * stretch + 1e-9)

    found = _block_pairs if len(keys) >= BLOCKS_FROM else _single_pairs
    return [(min(order[a], order[b]), max(order[a], order[b]), score)
            for a, b, score in found(ordered, window_end, threshold)]


BLOCKS_FROM = 2000  # titles
_BLOCK = 256


def _single_pairs(ordered: list[str], window_end, threshold: float):
    from rapidfuzz import fuzz, process

    for position, key in enumerate(ordered):
        window = ordered[position + 1:window_end(position)]
        for _, score, index in process.extract(key, window, scorer=fuzz.ratio, score_cutoff=threshold, limit=None):
            yield position, position + 1 + index, score


def _block_pairs(ordered: list[str], window_end, threshold: float):
    import numpy as np
    from rapidfuzz import fuzz, process

    for start in range(0, len(ordered), _BLOCK):
        stop = min(start + _BLOCK, len(ordered))
        scores = process.cdist(ordered[start:stop], ordered[start:window_end(stop - 1)], scorer=fuzz.ratio,
                               score_cutoff=threshold, dtype=np.float64, workers=-1)
        for row, column in zip(*np.nonzero(scores)):
            if column > row:  # each pair once: the block's own titles are also its first columns
                yield start + row, start + column, float(scores[row, column])
