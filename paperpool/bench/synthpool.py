"""Synthetic paper pools of any size, resampled from a real one, for benchmarks: the same
files for the same seed and template, and a pool that `paperpool validate` accepts.

    python -m paperpool.bench.synthpool --entries 10000 [--exclusions M] [--seed S] [--from POOL] -o OUT

Each record is a copy of a template record drawn at random, so its tags, year, venue,
dates and second reading come together and their joint mix stays real; then what
makes it a paper of its own is replaced. Its key, ids and links are renewed together,
so they still agree with each other and with its citation key; unique fields get a
running number; references to other records are dropped. Authors are recombined from
the pool's surnames and given names, as many as the template has. Titles and prose
(long text that differs between records, such as summaries) are drawn from the words
of that field across the pool, as many as the template value has; a title ends in the
record's number, and no two are the pool's `title_similarity` alike. The registry's
field types decide all this; the one field name used is `title`, which validate
compares. Vocabulary lists of entry keys (representatives) are pointed at a synthetic
copy of each entry, leaving out entries never drawn, and the registry is rewritten from
its parsed data, losing its comments. The claim ledger, mkdocs.yml, hand-written pages,
template overrides, traces and README are copied as they are; claims about named real
entries then fail, as they should in a pool that does not hold those entries.
"""

from __future__ import annotations

import copy
import random
import shutil
import string
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import click
from rapidfuzz import fuzz, process

from paperpool.cli.context import Command
from paperpool.files.problems import PaperpoolError
from paperpool.files.yamlio import dump_yaml, new_folder
from paperpool.pool import identity
from paperpool.pool.reading import Pool
from paperpool.pool.validate import require_valid_pool
from paperpool.publishing import readme
from paperpool.registry import (
    RECORD_SUFFIX,
    REGISTRY_FILE,
    NoRegistry,
    find_root,
    lookup,
)
from paperpool.rendering.render import OVERRIDES
from paperpool.sitegen import siteconfig
from paperpool.traces.section import corpora, traces_folder

TITLE = "title"  # the field validate's near-duplicate check compares
# Text is prose, redrawn from its words, when it runs this long on average and nearly
# every record's differs; shorter or shared text (venues, affiliations) is kept.
PROSE_WORDS, PROSE_DISTINCT = 4, 0.9
# Titles up to this long are compared with each other before they are accepted: a few
# words, often the frequent ones, do come out alike by chance. Longer ones never came
# closer than 82% in three pools of 13,810 titles, far from the usual 93.
CHECKED_UP_TO = 48
ATTEMPTS = 200
LINKS = ("identifier", "url", "url_list")


def _leaves(specs: dict, prefix: str = "") -> list:
    """(dotted name, spec) of every field, sub-fields of mappings included."""
    return [
        leaf
        for name, spec in specs.items()
        for leaf in (_leaves(spec.fields, f"{prefix}{name}.") if spec.type == "mapping" else [(prefix + name, spec)])
    ]


def _fit(text: str, limit: int | None) -> str:
    while limit and len(text) > limit and " " in text:
        text = text.rsplit(" ", 1)[0]
    return text


class _Synth:
    def __init__(self, pool: Pool, seed: int):
        self.rng, self.registry, self.templates = random.Random(seed), pool.registry, pool.records
        self.marker = pool.registry.unknown_marker
        self.words, self.prose, self.names, self.links = {}, set(), {}, {}
        for kind, specs in self.registry.fields.items():
            self.links[kind] = [(path, spec) for path, spec in _leaves(specs) if spec.type in LINKS]
            for path, spec in _leaves(specs):
                values = [lookup(record.data, path) for record in pool.records[kind]]
                texts = [value for value in values if isinstance(value, str) and value.strip() and value != self.marker]
                if spec.type == "text" and texts:
                    # words keep inner punctuation (Multi-Agent, K2.5), not a sentence's
                    self.words[kind, path] = [word.rstrip(".,;:") or word for text in texts for word in text.split()]
                    long = sum(len(text.split()) for text in texts) >= PROSE_WORDS * len(texts)
                    if path == TITLE or long and len(set(texts)) >= PROSE_DISTINCT * len(texts):
                        self.prose.add((kind, path))
                elif spec.type == "text_list":
                    items = [item for value in values if isinstance(value, list) for item in value if isinstance(item, str)]
                    pairs = [item.split(", ", 1) for item in items if ", " in item]
                    self.names[kind, path] = ([p[0] for p in pairs], [p[1] for p in pairs], [i for i in items if ", " not in i])
        self.serial = Counter()  # per family of ids (an arXiv month, doi, ...): the last number given
        self.title_words, self.short_titles = set(), {}  # every title's words; the short titles by length
        self.clones = {}  # template key -> the first synthetic key copied from it

    def record(self, kind: str, number: int, index: int) -> dict:
        template, specs = self.rng.choice(self.templates[kind]), self.registry.fields[kind]
        title = template.data.get(TITLE)
        if TITLE in specs and isinstance(title, str) and title.strip() and title != self.marker:
            title = self.title(kind, title, number, specs[TITLE].max_length)
        longest = max(str(title).lower().split()[:-1] or [""], key=len)  # not the number
        slug = "".join(ch for ch in longest if ch in string.ascii_lowercase + string.digits + "-").strip("-")[:30]
        self.key, self.old_key, self.new, self.ids = f"{slug or 'record'}-{number}", template.key, {}, {}
        self.clones.setdefault(template.key, self.key)
        for path, spec in self.links[kind]:  # first, so that the text kept can follow the new ids
            value = lookup(template.data, path)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item != self.marker and item not in self.new:
                    self.new[item] = self.identifier(spec.scheme, item) if spec.type == "identifier" else self.url(item)
        return self.fill(kind, specs, template.data, "", title, index)

    def fill(self, kind: str, specs: dict, data: dict, prefix: str, title, index: int) -> dict:
        out = {}
        for name, value in data.items():  # in the template's order, keeping the fields it has
            spec, here = specs.get(name), prefix + name
            if spec is None or value in (None, "", self.marker):
                out[name] = value
            elif spec.type == "key":
                out[name] = self.key
            elif spec.type == "key_list":
                out[name] = []  # they name real records; synthetic titles need no distinct_from
            elif spec.type == "mapping":
                out[name] = self.fill(kind, spec.fields, value, f"{here}.", title, index)
            elif spec.type in LINKS:
                out[name] = [self.new.get(url, url) for url in value] if isinstance(value, list) else self.new[value]
            elif spec.type == "text_list":  # "Surname, Given" recombined; other names (OpenAI) drawn whole
                surnames, given, whole = self.names[kind, here]
                out[name] = [
                    f"{self.rng.choice(surnames)}, {self.rng.choice(given)}" if ", " in item else self.rng.choice(whole)
                    for item in value
                ]
            elif spec.type == "text" and spec.unique:  # a running number in place of the template's (E017 -> E2291)
                stem = value.rstrip(string.digits)
                out[name] = stem + str(index).zfill(len(value) - len(stem))
            elif spec.type == "text" and here == TITLE:
                out[name] = title
            elif spec.type == "text" and (kind, here) in self.prose:
                text, end = self.drawn(self.words[kind, here], value), (value.strip() or ".")[-1]
                out[name] = _fit(text + end if end in ".!?" else text, spec.max_length)
            elif spec.type == "text":
                out[name] = self.swap(value)
            else:  # tags, numbers, dates: the template's, so that their joint mix stays real
                out[name] = value
        return out

    def drawn(self, words: list[str], like: str) -> str:
        text = " ".join(self.rng.choices(words, k=max(1, len(like.split()))))
        return text[0].upper() + text[1:]

    def title(self, kind: str, like: str, number: int, limit: int | None) -> str:
        threshold = self.registry.title_similarity
        for _ in range(ATTEMPTS):
            words = _fit(self.drawn(self.words[kind, TITLE], like), limit and limit - len(f" {number}"))
            key = identity.title_key(f"{words} {number}")
            if identity.title_key(words) in self.title_words:  # another number does not make another paper
                continue
            if len(key) <= CHECKED_UP_TO:  # only titles of about the same length can be that alike
                sizes = range(int(len(key) * threshold / 100) - 1, int(len(key) * 100 / threshold) + 2)
                if any(
                    process.extractOne(key, self.short_titles.get(size, ()), scorer=fuzz.ratio, score_cutoff=threshold)
                    for size in sizes
                ):
                    continue
                self.short_titles.setdefault(len(key), []).append(key)
            self.title_words.add(identity.title_key(words))
            return f"{words} {number}"
        raise PaperpoolError(
            f"cannot draw {number:,} titles that differ enough from the template's title words; "
            "ask for fewer records, or use a template with more titles"
        )

    def renew(self, scheme: str, value: str) -> str:
        """A new id for one of the template record's, the same wherever it is written."""
        token = min(identity.identifier_tokens(scheme, value))
        if token not in self.ids:
            family = "".join(ch for ch in value if ch.isdigit())[:4].ljust(4, "0") if scheme == "arxiv" else scheme
            self.serial[family] += 1
            serial = self.serial[family]
            if scheme == "arxiv":  # a new number in the template id's month
                if serial > 99_999:
                    raise PaperpoolError(f"more than 99,999 synthetic arXiv ids in month {family}; ask for fewer records")
                self.ids[token] = f"{family}.{serial:05d}"
            elif scheme == "doi":  # a new number under the template DOI's registrant
                self.ids[token] = f"{value.strip().split('/', 1)[0]}/synthpool.{serial}"
            else:  # OpenReview: digits then letters, as real ids mix them
                self.ids[token] = f"{serial:05d}" + "".join(self.rng.choices(string.ascii_letters, k=5))
        self.new.setdefault(value, self.ids[token])
        return self.ids[token]

    def identifier(self, scheme: str, value: str) -> str:
        prefix, colon, rest = value.partition(":")
        if scheme != "prefixed":
            return self.renew(scheme, value)
        if colon and prefix.strip().lower() in ("arxiv", "doi", "openreview"):
            return f"{prefix}:{self.renew(prefix.strip().lower(), rest)}"
        self.serial["identifier"] += 1
        return f"{value}-{self.serial['identifier']}"

    def url(self, url: str) -> str:
        new = url
        for scheme, found in identity.ids_in_url(url).items():
            new = new.replace(found, self.renew(scheme, found))
        if new == url:  # a link with no paper id in it: the record's key makes it its own
            parts = urlsplit(url)
            new = urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{self.key}"))
        return new

    def swap(self, text: str) -> str:
        """Kept text with the template's ids, links and leading key replaced (a citation
        key like magrpo2025, a journal like "arXiv preprint arXiv:2508.04652")."""
        for old in sorted(self.new, key=len, reverse=True):
            text = text.replace(old, self.new[old])
        return self.key + text[len(self.old_key) :] if text.startswith(self.old_key) and " " not in text else text

    def registry_text(self) -> str | None:
        """The registry with its vocabularies' lists of entry keys naming synthetic
        entries, or None when it lists none."""
        data, changed = copy.deepcopy(self.registry.document.data), False
        keys = {record.key for record in self.templates["entries"]}
        for vocabulary in data["vocabularies"].values():
            for value in vocabulary["values"]:
                for name, listed in value.items():
                    if isinstance(listed, list) and listed and all(isinstance(k, str) and k in keys for k in listed):
                        value[name], changed = [self.clones[k] for k in listed if k in self.clones], True
        note = (
            "# Written by paperpool.bench.synthpool: the template's registry, its lists of entry keys naming synthetic entries.\n"
        )
        return note + dump_yaml(data) if changed else None


def write_pool(template: Path, out: Path, entries: int, exclusions: int | None = None, seed: int = 0) -> dict[str, int]:
    """Write a synthetic pool resampled from the pool at `template` into `out`, a new or
    empty folder that appears only when complete; the records written per kind."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PaperpoolError(
            f"-o {out}: already exists and is not an empty folder; choose a new or empty one (nothing was written)"
        )
    if not (template / REGISTRY_FILE).is_file():
        raise PaperpoolError(f"--from {template}: no {REGISTRY_FILE} there; pass the folder that holds the template pool")
    pool = require_valid_pool(template.resolve())  # a template's problem would be copied into every record
    found = {kind: len(records) for kind, records in pool.records.items()}
    counts = {
        "entries": entries,
        "exclusions": round(entries * found["exclusions"] / max(found["entries"], 1)) if exclusions is None else exclusions,
    }
    for kind, count in counts.items():
        if count and not found[kind]:
            raise PaperpoolError(f"--from {template}: the template has no {kind} to resample; ask for 0 {kind}")
    synth = _Synth(pool, seed)
    with new_folder(out) as staging:
        number = 0
        for kind, count in counts.items():
            folder = staging / pool.registry.pool[kind]
            folder.mkdir(parents=True, exist_ok=True)
            for index in range(1, count + 1):
                number += 1  # across both kinds, so that keys, titles and ids never meet
                record = synth.record(kind, number, index)
                (folder / f"{synth.key}{RECORD_SUFFIX}").write_text(dump_yaml(record), encoding="utf-8", newline="\n")
        registry = synth.registry_text()
        if registry is None:
            shutil.copyfile(pool.registry.path, staging / REGISTRY_FILE)
        else:
            (staging / REGISTRY_FILE).write_text(registry, encoding="utf-8", newline="\n")
        _copy_companions(pool, staging)
    return counts


def _copy_companions(pool: Pool, staging: Path) -> None:
    """The files around the records that the commands read, as the template has them."""
    root, registry = pool.root, pool.registry
    names = [
        registry.pool.get("claims"),
        siteconfig.CONFIG,
        siteconfig.load(root)[0].docs_dir,
        OVERRIDES,
        traces_folder(registry),
        *(corpus.path for corpus in corpora(registry)),
    ]
    text = (root / readme.README).read_text(encoding="utf-8") if (root / readme.README).is_file() else ""
    marks = Counter(line.strip() for line in text.splitlines())
    names += [readme.README] if marks[readme.START] == marks[readme.END] == 1 else []  # what `paperpool readme` needs
    for name in (name for name in names if isinstance(name, str)):
        source, target = root / name, staging / name
        if not source.resolve().is_relative_to(root) or target.exists():
            continue  # never copy from outside the template, nor over a record folder
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


@click.command(cls=Command)
@click.option("--entries", type=click.IntRange(1), required=True, help="How many entries the pool has.")
@click.option(
    "--exclusions", type=click.IntRange(0), help="How many exclusions (default: as many per entry as the template has)."
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--from",
    "template",
    type=click.Path(file_okay=False, path_type=Path),
    help="The template pool's folder (default: the nearest folder at or above the current one holding registry.yaml).",
)
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="A new or empty folder for the pool.")
def main(entries: int, exclusions: int | None, seed: int, template: Path | None, output: Path) -> None:
    """Write a synthetic pool resampled from a real one: the same files for the same options."""
    if template is None:
        try:
            template = find_root(Path.cwd())
        except NoRegistry:
            raise PaperpoolError(
                f"no {REGISTRY_FILE} here or in any folder above; run inside a pool or pass --from DIR"
            ) from None
    counts = write_pool(template, output, entries, exclusions, seed)
    click.echo(f"wrote {output}: {counts['entries']:,} entries, {counts['exclusions']:,} exclusions", err=True)


if __name__ == "__main__":
    main()
