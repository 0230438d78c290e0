"""What makes two records the same paper: normalised identifiers, URLs and titles."""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from urllib.parse import parse_qs, quote, urlsplit

from paperpool.files.problems import BIDI_CHARACTERS

ARXIV_RE = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?\Z")
DOI_RE = re.compile(r"^10\.\d{4,9}/[^\s\\{}^]+\Z")  # no \ { } ^: no DOI has one, and TeX reads them (^^5c is \)
OPENREVIEW_RE = re.compile(r"^[A-Za-z0-9_-]{6,20}\Z")
PREFIXED_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 ._/-]*:\S+\Z|^[A-Za-z0-9][A-Za-z0-9._/-]*\Z")

PATTERNS = {
    "arxiv": (ARXIV_RE, "an arXiv id like 2508.04652 or cs/0112017, without 'arXiv:'"),
    "doi": (DOI_RE, "a DOI like 10.1287/moor.27.4.819.297, without https://doi.org/ (and without spaces, \\, {, } or ^)"),
    "openreview": (OPENREVIEW_RE, "the id after ?id= in an OpenReview link, like 7Yayy5fNLg"),
    "prefixed": (PREFIXED_RE, "an identifier like arXiv:2305.14325, OpenReview:ZIpdu0cHYu or a plain NAME-WITHOUT-SPACES"),
}

# Characters that change how text is displayed without being visible: never legitimate in a link.
_INVISIBLE = re.compile(f"[\u0000-\u001f\u007f\u200b-\u200f\ufeff{BIDI_CHARACTERS}]")


def invisible(text: str) -> bool:
    """Whether `text` holds a control or bidirectional character, never legitimate in a
    link or an identifier (it would show one address and lead to another)."""
    return _INVISIBLE.search(text) is not None


# What a link must not hold: an invisible character, or a space of any kind (re's \s is
# str.isspace, character by character)
_NOT_IN_LINKS = re.compile(_INVISIBLE.pattern[:-1] + r"\s]")
_TEX_IN_LINKS = re.compile(r"[\\{}^]")  # \ { } and ^ (TeX writes any character as ^^ and its hex: ^^5c is \)


@functools.lru_cache(maxsize=1024)  # asked twice of each link: by its field's check, then for its identity
def url_problem(url: str) -> str | None:
    """Why a string is not an acceptable web link, or None when it is."""
    if _NOT_IN_LINKS.search(url):
        return "contains spaces or invisible control characters"
    tex = _TEX_IN_LINKS.search(url)
    if tex:  # RFC 3986 allows neither; written into BibTeX, TeX would read them as commands and groups
        return f"holds '{tex.group()}', which no link may hold; percent-encode it as {quote(tex.group())}"
    try:
        parts = urlsplit(url)
    except ValueError:  # an unbalanced [ of an IPv6 host, say
        return "is not a well-formed link (check its brackets)"
    if parts.scheme.lower() not in ("http", "https"):
        return f"uses scheme '{parts.scheme}', not http or https" if parts.scheme else "has no http:// or https:// at the start"
    try:
        hostname = parts.hostname
    except ValueError:
        return "is not a well-formed link (check its brackets)"
    if not hostname:
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


# The identifier schemes by which two records are two works when their ids differ: two
# arXiv ids or two DOIs (a link may lead to either version of one paper: links do not count).
WORK_IDS = ("arxiv", "doi", "openreview")


def ids_differ(mine, theirs) -> bool:
    """Whether two records' (scheme, id) tokens give ids of one scheme and share none of
    them: two works, whatever their titles, unless someone says otherwise."""
    by_scheme: dict[str, tuple[set, set]] = {}
    for side, tokens in enumerate((mine, theirs)):
        for scheme, value in tokens:
            if scheme in WORK_IDS:
                by_scheme.setdefault(scheme, (set(), set()))[side].add(value)
    return any(ours and others and not ours & others for ours, others in by_scheme.values())


def ids_in_url(url: str) -> dict[str, str]:
    """Paper identifiers a link carries, as written in it: {"arxiv": "2508.04652"}; none
    for a link that is not well formed (url_problem says why, where links are checked)."""
    try:
        return _ids_in_parts(urlsplit(url.strip()))
    except ValueError:  # an unbalanced [ of an IPv6 host, say, from urlsplit or .hostname
        return {}


def _ids_in_parts(parts) -> dict[str, str]:
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
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower().removeprefix("www.")
    except ValueError:  # not well formed: url_problem says so where links are checked
        return {("url", url.strip())}
    path = parts.path.rstrip("/")
    tokens = {("url", f"{host}{path}" + (f"?{parts.query}" if parts.query else ""))}
    for scheme, value in _ids_in_parts(parts).items():
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


COMPARED = 1000  # characters of a title compared for near-duplicates: no title is longer


def title_key(title: str) -> str:
    """A title reduced to lower-case words, for near-duplicate comparison: its first
    COMPARED characters (comparing two titles costs the product of their lengths: four of
    900 kB, which a registry without a max_length allows, took validate 26 s)."""
    text = unicodedata.normalize("NFKC", title[: COMPARED * 4]).casefold()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())[:COMPARED]


TOKEN_NAMES = {"arxiv": "arXiv id", "doi": "DOI", "openreview": "OpenReview id", "url": "URL", "identifier": "identifier"}


def similar_pairs(keys: list[str], threshold: float) -> list[tuple[int, int, float]]:
    """Every pair (i, j, score), i < j, of title keys at least `threshold` alike
    (rapidfuzz's ratio, 0-100).

    Titles that alike differ little in length: the ratio is at most 200 * shorter /
    (shorter + longer), so in length order each title is compared only with the titles
    after it, up to the longest that can reach the threshold. The comparisons run in
    rapidfuzz's C, a title against its window at a time in a small pool. A large pool
    first rules out, with numpy, the pairs whose letters alone keep them apart (see
    _block_pairs), which needs numpy, whose import alone costs more than a small pool's
    whole comparison.
    """
    import bisect

    order = sorted(range(len(keys)), key=lambda i: len(keys[i]))
    lengths = [len(keys[i]) for i in order]
    ordered = [keys[i] for i in order]
    stretch = (200.0 - threshold) / threshold  # longest/shortest that can reach the threshold

    def window_end(position: int) -> int:
        return bisect.bisect_right(lengths, lengths[position] * stretch + 1e-9)

    found = _block_pairs if len(keys) >= BLOCKS_FROM else _single_pairs
    return [(min(order[a], order[b]), max(order[a], order[b]), score) for a, b, score in found(ordered, window_end, threshold)]


def similar_key_pairs(
    keys: list[str], threshold: float, known: tuple[list[str], list[tuple[str, str, float]]] | None = None
) -> list[tuple[str, str, float]]:
    """Every pair of the distinct title keys `keys` at least `threshold` alike, as (key,
    key, score), each pair once.

    `known` is (keys, pairs) from an earlier call with the same threshold: a pair's score
    depends on its two keys alone, so the pairs among keys found in both are taken from
    it, and only the pairs with a key it lacks are computed, each new key against every
    key. With more new keys than REUSE_AT_MOST, everything is computed afresh."""
    if known is not None:
        old = set(known[0])
        new = [key for key in keys if key not in old]
        if len(new) <= REUSE_AT_MOST:
            present = set(keys)
            pairs = [pair for pair in known[1] if pair[0] in present and pair[1] in present]
            kept = [key for key in keys if key in old]
            return pairs + _new_pairs(new, kept, threshold)
    return [(keys[i], keys[j], score) for i, j, score in similar_pairs(keys, threshold)]


REUSE_AT_MOST = 1000  # new titles compared one by one with every title; above this, all pairs at once


def _new_pairs(new: list[str], old: list[str], threshold: float) -> list[tuple[str, str, float]]:
    """The pairs among the keys `new`, and between each of them and the keys `old`."""
    from rapidfuzz import fuzz, process

    pairs = [(new[i], new[j], score) for i, j, score in similar_pairs(new, threshold)]
    for key in new:
        pairs += [
            (key, other, score)
            for other, score, _ in process.extract(key, old, scorer=fuzz.ratio, score_cutoff=threshold, limit=None)
        ]
    return pairs


BLOCKS_FROM = 2000  # titles
_BLOCK = 128  # titles a block: its table of letter distances (titles x window) stays in the processor's cache
_GROUPS = 16  # groups of characters counted per title


def _single_pairs(ordered: list[str], window_end, threshold: float):
    from rapidfuzz import fuzz, process

    for position, key in enumerate(ordered):
        window = ordered[position + 1 : window_end(position)]
        for _, score, index in process.extract(key, window, scorer=fuzz.ratio, score_cutoff=threshold, limit=None):
            yield position, position + 1 + index, score


def _block_pairs(ordered: list[str], window_end, threshold: float):
    """The pairs of a large pool, exactly: a pair is compared by rapidfuzz only if its
    characters allow the threshold.

    rapidfuzz's ratio is 100 * (1 - d / (m + n)), where d is the fewest insertions and
    deletions that turn one title (length m) into the other (n). Each insertion or deletion
    changes the count of one character by one, so d is at least the sum, over characters,
    of the difference of their counts; and at least that sum over groups of characters
    (the difference of a group's totals is at most the sum of its characters'). A pair
    whose group counts differ by more than (1 - threshold / 100) * (m + n) cannot reach the
    threshold. With 16 groups that leaves a few thousand of the 27 million pairs in a
    window at 13,810 titles, which rapidfuzz then scores in C. A block at a time, so that
    what is held is one block's, whatever the titles (titles of the same words in another
    order pass the bound in their millions)."""
    import numpy as np
    from rapidfuzz import fuzz, process

    counts = _group_counts(ordered, np)
    lengths = np.array([len(key) for key in ordered], dtype=np.float64)
    slack = 1.0 - threshold / 100.0
    workers = min(2, os.cpu_count() or 1)
    titles = np.array(ordered, dtype=object)  # indexed by arrays of positions, with no list made per pair

    for start in range(0, len(ordered), _BLOCK):  # one block at a time: its candidates, then their scores
        stop = min(start + _BLOCK, len(ordered))
        end = window_end(stop - 1)
        apart = np.zeros((stop - start, end - start), dtype=np.int16)
        step = np.empty((stop - start, end - start), dtype=np.int8)
        for group in counts:
            np.subtract(group[start:stop, None], group[None, start:end], out=step)
            np.abs(step, out=step)
            np.add(apart, step, out=apart, casting="unsafe")  # int8 into int16: 16 groups of at most 127
        # the margin keeps every pair whose bound is within rounding of the threshold
        allowed = (lengths[start:stop, None] + lengths[None, start:end]) * slack + 1e-6
        rows, columns = np.nonzero(apart <= allowed)
        keep = columns > rows  # each pair once: the block's own titles are also its first columns
        firsts, seconds = start + rows[keep], start + columns[keep]
        if not firsts.size:
            continue
        # scored in rapidfuzz's C, pair by pair: titles made of the same words in another order
        # pass the letters' bound in their millions, and a call each from Python took 48 s
        scores = process.cpdist(titles[firsts], titles[seconds], scorer=fuzz.ratio, score_cutoff=threshold, workers=workers)
        for k in np.flatnonzero(scores).tolist():
            yield int(firsts[k]), int(seconds[k]), float(scores[k])


_MOST_COUNTED = 127  # a group's count is capped here (a cap keeps the bound true), to fit int8


def _group_counts(keys: list[str], np):
    """For each of _GROUPS groups of characters, how many characters of each key are in it
    (an array of groups x keys). Characters are dealt to groups by frequency, most frequent
    first, each to the group with the fewest so far, so that the groups tell titles apart;
    any grouping gives a true bound."""
    import heapq

    codes = np.frombuffer("".join(keys).encode("utf-32-le"), dtype=np.uint32)
    frequency = np.bincount(codes)  # by code point: a table, not a sort of a million characters
    group_of = np.zeros(len(frequency), dtype=np.int64)
    loads = [(0, group) for group in range(_GROUPS)]
    present = np.flatnonzero(frequency)
    for character in present[np.argsort(-frequency[present], kind="stable")].tolist():
        load, group = heapq.heappop(loads)
        group_of[character] = group
        heapq.heappush(loads, (load + int(frequency[character]), group))
    owner = np.repeat(np.arange(len(keys)), [len(key) for key in keys])
    table = np.bincount(group_of[codes] * len(keys) + owner, minlength=_GROUPS * len(keys))
    return np.minimum(table, _MOST_COUNTED).astype(np.int8).reshape(_GROUPS, len(keys))
