"""Near-duplicate titles: the windowed search finds exactly the pairs that comparing
every title with every other finds, on both of its paths (small and large pools)."""

from __future__ import annotations

import random

import pytest
from rapidfuzz import fuzz

from paperpool.pool import identity

WORDS = [
    "agent",
    "reward",
    "credit",
    "team",
    "token",
    "learning",
    "multi",
    "orchestration",
    "policy",
    "debate",
    "swarm",
    "planner",
    "critic",
]


@pytest.fixture(scope="module")
def titles() -> list[str]:
    rng = random.Random(3)
    keys = [" ".join(rng.choices(WORDS, k=rng.randint(2, 12))) for _ in range(1200)]
    # near-duplicates of every length: a letter added, dropped or changed
    return (
        keys
        + [key + "s" for key in keys[:60]]
        + [key[1:] for key in keys[60:120]]
        + [key.replace("a", "e", 1) for key in keys[120:180]]
    )


@pytest.mark.slow
@pytest.mark.parametrize("blocks_from", [0, 10**9], ids=["blocks", "one-by-one"])
def test_similar_pairs_are_exactly_those_every_pair_comparison_finds(titles, blocks_from, monkeypatch):
    monkeypatch.setattr(identity, "BLOCKS_FROM", blocks_from)
    everything = {(i, j) for i in range(len(titles)) for j in range(i + 1, len(titles)) if fuzz.ratio(titles[i], titles[j]) >= 93}
    found = identity.similar_pairs(titles, 93)
    assert {(i, j) for i, j, _ in found} == everything and len(found) == len(everything) > 150
    assert all(score == pytest.approx(fuzz.ratio(titles[i], titles[j])) for i, j, score in found)


@pytest.mark.parametrize("threshold", [60, 85, 93, 99, 100])
def test_the_character_bound_drops_no_pair_at_any_threshold(threshold, monkeypatch):
    # titles in several scripts, with letters dropped, doubled and swapped: the block path
    # rules pairs out by their characters' counts, and must rule out none that qualify
    monkeypatch.setattr(identity, "BLOCKS_FROM", 0)
    rng = random.Random(threshold)
    alphabet = "abcdeéüß 强化学习多智能体 0123"
    base = ["".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(300)]
    titles = base + ["".join(c for c in key if rng.random() > 0.05) + rng.choice(alphabet) for key in base]
    everything = {
        (i, j) for i in range(len(titles)) for j in range(i + 1, len(titles)) if fuzz.ratio(titles[i], titles[j]) >= threshold
    }
    found = identity.similar_pairs(titles, threshold)
    assert {(i, j) for i, j, _ in found} == everything and len(found) == len(everything) > 0


def test_pairs_known_from_before_are_reused_only_among_keys_still_there(titles):
    keys = sorted(set(titles))
    fresh = identity.similar_key_pairs(keys, 93)
    # a cache of an earlier pool: one key since removed, one since added, one pair that
    # could only come from the cache (its keys are both still there)
    added = fresh[0][1]
    gone = next(key for key in keys if key != added)
    earlier = [key for key in keys if key != added] + ["a title since deleted"]
    known_pairs = [pair for pair in fresh if added not in pair[:2]] + [("a title since deleted", gone, 99.0)]
    reused = identity.similar_key_pairs(keys, 93, known=(earlier, known_pairs))

    def unordered(pairs):
        return sorted((min(a, b), max(a, b), score) for a, b, score in pairs)

    assert unordered(reused) == unordered(fresh)  # the new key's pairs computed, the deleted title's dropped


@pytest.mark.slow
def test_titles_of_the_same_words_in_another_order_are_compared_in_bounded_memory():
    """Issue 39's sixth review: titles of one set of words in shuffled order all pass the
    letters' bound, and every candidate pair was held at once (10,000 titles: 6.1 GB, and
    48 s of a Python call each); now a block at a time, scored in rapidfuzz's C."""
    import random
    import tracemalloc

    from paperpool.pool import identity

    words = "alpha bravo charl delta echox foxtr golfy hotel india julie kilom limax".split()
    generator = random.Random(1)
    titles = []
    for _ in range(3000):
        generator.shuffle(words)
        titles.append(" ".join(words))
    tracemalloc.start()
    try:
        pairs = identity.similar_pairs(titles, 90)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60_000_000, f"{peak:,} bytes at the peak"  # it held 4.5 million pairs: some 450 MB
    expected = [(i, j) for i in range(3000) for j in range(i + 1, 3000) if titles[i] == titles[j]]
    assert sorted((i, j) for i, j, score in pairs if score == 100) == expected
