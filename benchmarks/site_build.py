"""How the site build scales: build time per entry at 84, 1,000 and 10,000 entries.

    .venv/bin/python benchmarks/site_build.py [--sizes 84,1000,10000] [--engine mkdocs|zensical]

Synthetic pools are made from the shipped one: its registry (claims and the
registry's representative lists dropped, since they name real entries) and copies of
its entries under new keys, titles and links, keeping their tags. Each size is built
once, as `paperpool build` does, and the stages' times are printed with the time per
entry and its ratio to the smallest size's: a flat ratio means the build scales
linearly, which is the goal (the navigation must not grow with the pool).
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from paperpool.sitegen.build import build

WORDS = ["agent", "credit", "reward", "orchestration", "team", "planner", "verifier", "critic", "debate", "swarm", "spawn", "delegate", "message", "aggregate", "stop", "policy", "gradient", "token", "turn", "role", "tool", "trace", "latent", "hierarchy", "budget", "search", "proof", "code", "web", "math", "memory", "routing", "consensus", "shaping", "advantage", "baseline", "sparse", "dense", "curriculum", "self", "play", "market"]


def synthetic_pool(folder: Path, size: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    registry = (REPO / "registry.yaml").read_text(encoding="utf-8")
    registry = re.sub(r"representatives: \[[^\]]*\]", "representatives: []", registry)
    registry = re.sub(r"\n  claims: claims.yaml\n", "\n", registry)
    root = folder / f"pool-{size}"
    (root / "papers").mkdir(parents=True)
    (root / "registry.yaml").write_text(registry, encoding="utf-8")
    shutil.copytree(REPO / "exclusions", root / "exclusions")
    shutil.copyfile(REPO / "mkdocs.yml", root / "mkdocs.yml")
    templates = [yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted((REPO / "papers").glob("*.yaml"))]
    for number in range(size):
        entry = dict(templates[number % len(templates)])
        key = f"syn-{number:05d}"
        entry.update(key=key, title=" ".join(rng.sample(WORDS, 9)).capitalize() + f" {number}",
                     urls=[f"https://example.org/{key}"], arxiv_id=None, doi=None, openreview_id=None,
                     distinct_from=[], second_reading=None)
        if entry.get("bibtex"):
            entry["bibtex"] = {k: v for k, v in entry["bibtex"].items() if k != "key"}
        (root / "papers" / f"{key}.yaml").write_text(yaml.safe_dump(entry, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="84,1000,10000")
    parser.add_argument("--engine", default="mkdocs", choices=["mkdocs", "zensical"])
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="paperpool-bench-") as scratch:
        rows = []
        for size in sizes:
            root = synthetic_pool(Path(scratch), size)
            result = build(root, Path(scratch) / f"site-{size}", args.engine)
            total = sum(seconds for _, seconds in result.timings)
            rows.append((size, result.pages, total, dict(result.timings)))
            shutil.rmtree(root)
            shutil.rmtree(Path(scratch) / f"site-{size}")
        stages = list(rows[0][3])
        print(f"site build with {args.engine}: time per entry (2-core machine figures vary by ~10%)")
        print(f"{'entries':>8} {'pages':>7} {'total s':>8} {'ms/entry':>9} {'ratio':>6}  " + " ".join(f"{s:>9}" for s in stages))
        base = rows[0][2] / rows[0][0]
        for size, pages, total, timings in rows:
            per_entry = total / size
            print(f"{size:>8} {pages:>7} {total:>8.1f} {per_entry * 1000:>9.1f} {per_entry / base:>6.2f}  "
                  + " ".join(f"{timings[s]:>9.2f}" for s in stages))


if __name__ == "__main__":
    main()
