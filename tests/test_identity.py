"""Near-duplicate titles: the windowed search finds exactly the pairs that comparing
every title with every other finds, on both of its paths (small and large pools)."""

from __future__ import annotations

import random

import pytest
from rapidfuzz import fuzz

from paperpool import identity

WORDS = ["agent", "reward", "credit", "team", "token", "learning", "multi", "orchestration", "policy", "debate", "swarm", "planner", "critic"]


@pytest.fixture(scope="module")
def titles() -> list[str]:
    rng = random.Random(3)
    keys = [" ".join(rng.choices(WORDS, k=rng.randint(2, 12))) for _ in range(1200)]
    # near-duplicates of every length: a letter added, dropped or changed
    return keys + [key + "s" for key in keys[:60]] + [key[1:] for key in keys[60:120]] + [key.replace("a", "e", 1) for key in keys[120:180]]


@pytest.mark.parametrize("blocks_from", [0, 10**9], ids=["blocks", "one-by-one"])
def test_similar_pairs_are_exactly_those_every_pair_comparison_finds(titles, blocks_from, monkeypatch):
    monkeypatch.setattr(identity, "BLOCKS_FROM", blocks_from)
    everything = {(i, j) for i in range(len(titles)) for j in range(i + 1, len(titles))
                  if fuzz.ratio(titles[i], titles[j]) >= 93}
    found = identity.similar_pairs(titles, 93)
    assert {(i, j) for i, j, _ in found} == everything and len(found) == len(everything) > 150
    assert all(score == pytest.approx(fuzz.ratio(titles[i], titles[j])) for i, j, score in found)
