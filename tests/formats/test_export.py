"""`paperpool export --format bib|ris`: the pool as citations that read back to the records."""

from __future__ import annotations

import json

import bibtexparser
import pytest
import rispy
import yaml
from bibtexparser import middlewares

from paperpool.rendering.tex import readable

from ..conftest import edit

# Characters that mean something to BibTeX or LaTeX, in a title and an author name.
HOSTILE_TITLE = 'Costs {and} 100% of $x$ & y_1 #2 ~ \\emph{z} "quoted" Über'


def _read_bib(text: str) -> dict:
    library = bibtexparser.parse_string(
        text, append_middleware=[middlewares.LatexDecodingMiddleware(), middlewares.SeparateCoAuthors()]
    )
    assert not library.failed_blocks
    return {entry.key: {field.key: field.value for field in entry.fields} for entry in library.entries}


def _records(root) -> dict:
    return {path.stem: yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted((root / "papers").glob("*.yaml"))}


@pytest.mark.slow
def test_bib_export_reads_back_to_the_records(run, pool_copy):
    edit(
        pool_copy / "papers" / "malt.yaml",
        "title: 'MALT: Improving Reasoning with Multi-Agent LLM Training'",
        f"title: '{HOSTILE_TITLE}'",
    )
    result = run("export", "--format", "bib", cwd=pool_copy)
    assert result.exit_code == 0
    cited = _read_bib(result.output)
    records = _records(pool_copy)
    assert list(cited) == sorted(records)  # keyed by the entries' keys, in key order
    for key, record in records.items():
        fields = cited[key]
        assert fields["title"] == record["title"], key
        assert [str(name) for name in fields["author"] if name != "others"] == record["authors"], key
        assert ("others" in fields["author"]) == (record["authors_complete"] is False), key
        assert fields["year"] == str((record.get("bibtex") or {}).get("year") or record["year"]), key
        assert fields.get("doi") == record["doi"], key
        assert fields.get("eprint") == record["arxiv_id"], key
        assert fields["url"] == record["urls"][0], key
    assert cited["malt"]["title"] == HOSTILE_TITLE  # the BibTeX keeps TeX math as written


@pytest.mark.slow
def test_ris_export_reads_back_to_the_records(run, pool_copy):
    edit(
        pool_copy / "papers" / "malt.yaml",
        "title: 'MALT: Improving Reasoning with Multi-Agent LLM Training'",
        f"title: '{HOSTILE_TITLE}'",
    )
    result = run("export", "--format", "ris", cwd=pool_copy)
    assert result.exit_code == 0
    cited = {entry["id"]: entry for entry in rispy.loads(result.output)}
    records = _records(pool_copy)
    assert list(cited) == sorted(records)
    for key, record in records.items():
        entry = cited[key]
        assert entry["title"] == readable(record["title"]), key  # TeX math as text (issue 38)
        assert entry["authors"] == record["authors"], key
        assert entry["year"] == str((record.get("bibtex") or {}).get("year") or record["year"]), key
        assert entry.get("doi") == record["doi"], key
        assert entry["urls"] == record["urls"], key
    assert cited["malt"]["type_of_reference"] == "CPAPER"  # @inproceedings
    assert cited["malt"]["title"] == readable(HOSTILE_TITLE)


def test_ris_record_exactly(run, pool_copy):
    result = run("export", "--format", "ris", cwd=pool_copy)
    records = result.output.split("\n\n")
    assert records[[r.split("\n")[1] for r in records].index("ID  - malt")] + "\n" == (
        "TY  - CPAPER\nID  - malt\nTI  - MALT: Improving Reasoning with Multi-Agent LLM Training\nAU  - Motwani, Sumeet Ramesh\n"
        "AU  - Smith, Chandler\nAU  - Das, Rocktim Jyoti\nAU  - Rafailov, Rafael\nAU  - Laptev, Ivan\nAU  - Torr, Philip\n"
        "AU  - Pizzati, Fabio\nAU  - Clark, Ronald\nAU  - Schroeder de Witt, Christian\n"
        "PY  - 2025\nT2  - Conference on Language Modeling (COLM)\nN1  - arXiv:2412.01928\nUR  - https://arxiv.org/abs/2412.01928\nER  -\n"
    )


@pytest.mark.slow
def test_export_to_a_file(run, pool_copy, tmp_path):
    result = run("export", "--format", "bib", "-o", str(tmp_path / "pool.bib"), cwd=pool_copy)
    assert (result.exit_code, result.output) == (0, f"wrote {tmp_path / 'pool.bib'}\n")
    assert len(_read_bib((tmp_path / "pool.bib").read_text(encoding="utf-8"))) == 84


def test_exclusions_only_as_csv(run, pool_copy):
    result = run("export", "--format", "ris", "--exclusions", cwd=pool_copy)
    assert (result.exit_code, result.output) == (
        1,
        "Error: --exclusions goes with --format csv; the other formats hold the whole pool or its entries (see paperpool export --help)\n",
    )


def _exported_malt(run, root) -> str:
    exported = run("export", "--format", "bib", cwd=root).output
    malt = exported[exported.index("@inproceedings{malt,") :]
    return malt[: malt.index("\n}\n") + 3]


MALT_AUTHORS = (
    "authors:\n- Motwani, Sumeet Ramesh\n- Smith, Chandler\n- Das, Rocktim Jyoti\n- Rafailov, Rafael\n- Laptev, Ivan\n"
    "- Torr, Philip\n- Pizzati, Fabio\n- Clark, Ronald\n- Schroeder de Witt, Christian\nauthors_complete: true\n"
)


def _set_malt_authors(root, names: list[str]) -> None:
    edit(
        root / "papers" / "malt.yaml",
        MALT_AUTHORS,
        "authors:\n" + "".join(f"- {name}\n" for name in names) + "authors_complete: true\n",
    )


def test_bib_export_braces_a_name_holding_the_word_and(run, pool_copy, empty_pool, tmp_path):
    """BibTeX separates names by the word "and", in any case: a company's name holding it
    is braced whole, so that it stays one author."""
    _set_malt_authors(pool_copy, ["Procter and Gamble Research", "Motwani, Sumeet Ramesh", "Research AND Development Team"])
    malt = _exported_malt(run, pool_copy)
    assert "  author = {{Procter and Gamble Research} and Motwani, Sumeet Ramesh and {Research AND Development Team}},\n" in malt

    library = bibtexparser.parse_string(malt, append_middleware=[middlewares.SeparateCoAuthors()])
    assert library.entries[0]["author"] == [
        "{Procter and Gamble Research}",
        "Motwani, Sumeet Ramesh",
        "{Research AND Development Team}",
    ]

    # import-bib reads the export back to the names the record holds
    (tmp_path / "malt.bib").write_text(malt, encoding="utf-8")
    assert run("import-bib", str(tmp_path / "malt.bib"), cwd=empty_pool).exit_code == 0
    stub = (empty_pool / "papers" / "malt.yaml").read_text(encoding="utf-8")
    assert (
        "authors:\n- Procter and Gamble Research\n- Motwani, Sumeet Ramesh\n- Research AND Development Team\nauthors_complete: true\n"
        in stub
    )


def test_bib_export_braces_other_names_bibtex_would_misread(run, pool_copy):
    """A bare "others" is BibTeX's "and more authors", and a name has at most two commas
    (von Last, Jr, First): an author called others, or with more commas, is braced."""
    _set_malt_authors(pool_copy, ["Motwani, Sumeet Ramesh", "others", "Lab, Dept. of CS, Univ. X, UK"])
    malt = _exported_malt(run, pool_copy)
    assert "  author = {Motwani, Sumeet Ramesh and {others} and {Lab, Dept. of CS, Univ. X, UK}},\n" in malt
    library = bibtexparser.parse_string(malt, append_middleware=[middlewares.SeparateCoAuthors(), middlewares.SplitNameParts()])
    assert not library.failed_blocks  # three commas unbraced: "Too many commas"
    assert [parts.last for parts in library.entries[0]["author"]] == [
        ["Motwani"],
        ["{others}"],
        ["{Lab, Dept. of CS, Univ. X, UK}"],
    ]


def test_bib_export_keeps_a_brace_that_does_not_pair_inside_its_field(run, pool_copy, empty_pool, tmp_path):
    """BibTeX counts every brace, escaped or not: a title whose brace does not pair would
    end its field there and give the record fields of its own making (issue 39: a `url`
    of `javascript:`). Unpaired braces are written as LaTeX's commands for them, and
    import-bib reads the title back as it was."""
    title = 'MALT}, url = "javascript:alert(1)", note = {x'
    edit(
        pool_copy / "papers" / "malt.yaml",
        "title: 'MALT: Improving Reasoning with Multi-Agent LLM Training'",
        f"title: '{title}'",
    )
    malt = _exported_malt(run, pool_copy)
    assert '  title = {MALT{\\textbraceright}, url = "javascript:alert(1)", note = {\\textbraceleft}x},\n' in malt
    library = bibtexparser.parse_string(malt)
    assert not library.failed_blocks and "note" not in library.entries[0].fields_dict
    assert library.entries[0]["url"].startswith("https://")
    (tmp_path / "malt.bib").write_text(malt, encoding="utf-8")
    assert run("import-bib", str(tmp_path / "malt.bib"), cwd=empty_pool).exit_code == 0
    assert yaml.safe_load((empty_pool / "papers" / "malt.yaml").read_text(encoding="utf-8"))["title"] == title


def test_bib_export_writes_a_link_as_it_is(run, pool_copy, empty_pool, tmp_path):
    """A link is one of biblatex's verbatim fields: written as it is, &, %, #, ~ and ;
    included, and import-bib reads it back as it was."""
    link = "https://example.org/w?a=1&b=%7B2%7D&c=%7C;d=--#x~y"
    edit(pool_copy / "papers" / "malt.yaml", "urls:\n- https://arxiv.org/abs/2412.01928\n", f"urls:\n- '{link}'\n")
    malt = _exported_malt(run, pool_copy)
    assert malt.endswith(f"  url = {{{link}}}\n}}\n")
    (tmp_path / "malt.bib").write_text(malt, encoding="utf-8")
    assert run("import-bib", str(tmp_path / "malt.bib"), cwd=empty_pool).exit_code == 0
    assert f"\nurls:\n- {link}\n" in (empty_pool / "papers" / "malt.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("field", "before", "after", "problem"),
    [
        (
            "urls",
            "urls:\n- https://arxiv.org/abs/2412.01928\n",
            "urls:\n- 'https://example.org/a\\input{/etc/hostname}'\n",
            "papers/malt.yaml:22: urls: 'https://example.org/a\\input{/etc/hostname}' holds '\\', which no link may hold; "
            "percent-encode it as %5C; give an http:// or https:// link",
        ),
        (
            "doi",
            "doi: null\n",
            "doi: '10.1234/x\\input{/etc/hostname}'\n",
            "papers/malt.yaml:19: doi: '10.1234/x\\input{/etc/hostname}' is not a DOI like 10.1287/moor.27.4.819.297, "
            "without https://doi.org/ (and without spaces, \\, {, } or ^)",
        ),
        (  # round seventeen: ^^5c is TeX's way of writing a backslash
            "urls",
            "urls:\n- https://arxiv.org/abs/2412.01928\n",
            "urls:\n- 'https://example.org/^^5cinput^^7b/etc/hostname^^7d'\n",
            "papers/malt.yaml:22: urls: 'https://example.org/^^5cinput^^7b/etc/hostname^^7d' holds '^', which no link may "
            "hold; percent-encode it as %5E; give an http:// or https:// link",
        ),
        (
            "doi",
            "doi: null\n",
            "doi: '10.1234/x^^5cinput'\n",
            "papers/malt.yaml:19: doi: '10.1234/x^^5cinput' is not a DOI like 10.1287/moor.27.4.819.297, "
            "without https://doi.org/ (and without spaces, \\, {, } or ^)",
        ),
    ],
)
def test_a_link_or_doi_holding_tex_is_refused(run, pool_copy, field, before, after, problem):
    """Issue 39's sixteenth review: `\\input{/etc/hostname}` in a DOI or a link passed
    validate and went into the BibTeX as written, where TeX ran it when a style handed
    the value to a macro, or a registry put it in `note`. No DOI or link (RFC 3986) holds
    a backslash or a brace."""
    edit(pool_copy / "papers" / "malt.yaml", before, after)
    result = run("validate", cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == problem


def test_bib_export_never_writes_a_backslash_or_an_unpaired_brace_into_a_link():
    """What validate refuses is still never written for TeX to read: every backslash of a
    link and braces that do not pair are percent-encoded."""
    from paperpool.formats.bibtex.reading import verbatim
    from paperpool.formats.bibtex.writing import _citation_key, _verbatim

    assert _verbatim("https://example.org/a\\input{b}") == "https://example.org/a%5Cinput{b}"
    assert _verbatim("https://example.org/a{b") == "https://example.org/a%7Bb"
    assert _verbatim("https://example.org/a b") == "https://example.org/a%20b"
    assert _verbatim("https://example.org/^^5cinput") == "https://example.org/%5E%5E5cinput"
    assert _citation_key("malt^^5cinput^^7bx^^7d") == "malt5cinput7bx7d"  # a key a registry takes from a record
    assert verbatim("https://example.org/^^5c{x}") == "https://example.org/%5E%5E5c%7Bx%7D"  # as import-bib reads a link


def test_a_link_mapped_to_a_text_field_is_written_as_text(run, pool_copy):
    """A registry may put a DOI or a link in `note`, which TeX reads as text, not verbatim:
    there it is encoded as text is."""
    edit(pool_copy / "registry.yaml", "    doi: [doi]\n", "    doi: [doi]\n    note: [doi]\n")
    edit(pool_copy / "papers" / "malt.yaml", "doi: null\n", "doi: 10.1234/a_b%c\n")
    malt = _exported_malt(run, pool_copy)
    assert "  doi = {10.1234/a_b%c},\n" in malt
    assert "  note = {10.1234/a\\_b\\%c},\n" in malt


# Names BibTeX would misread unless written with care: accents, LaTeX's special characters,
# braces paired and not, the word "and", "others", companies, too many commas, other scripts.
AWKWARD_NAMES = [
    "Ünïcödé, Ærø",
    "% comment, X",
    "{Brace}, Bob",
    "Brace}, Bob",
    "{Open, Ann",
    "Smith & Sons, Ltd",
    "Back\\slash, Cy",
    "Tilde~Name, Di",
    "Mañana, José",
    "$x$, Math",
    "#hash, Hal",
    "_under, Uma",
    "^caret, Cat",
    'Quote "Q", Quinn',
    "\\emph{x}, Y",
    "Procter and Gamble Research",
    "Research AND Development Team",
    "and, Andy",
    "Anderson, Andrea",
    "others",
    "Others",
    "Kimi Team",
    "Lab, Dept. of CS, Univ. X, UK",
    "de la Fuente, Juan",
    "Smith, Jr., John",
    "张, 伟",
    "Иванов, Иван",
    "محمد, علي",
    "Łukasz, Żaneta",
    "Straße, Groß",
    "Ø, ø",
]


def test_bib_export_and_import_give_back_the_same_authors(run, pool_copy, empty_pool, tmp_path):
    edit(
        pool_copy / "papers" / "malt.yaml",
        MALT_AUTHORS,
        "authors:\n" + "".join(f"- {json.dumps(name)}\n" for name in AWKWARD_NAMES) + "authors_complete: true\n",
    )
    malt = _exported_malt(run, pool_copy)
    assert '  author = {{\\"U}n{\\"\\i}c{\\"o}d{\\\'e}, {\\AE}r{\\o} and {\\%} comment, X and \\{Brace\\}, Bob and ' in malt
    (tmp_path / "malt.bib").write_text(malt, encoding="utf-8")
    assert run("import-bib", str(tmp_path / "malt.bib"), cwd=empty_pool).exit_code == 0
    record = yaml.safe_load((empty_pool / "papers" / "malt.yaml").read_text(encoding="utf-8"))
    assert (record["authors"], record["authors_complete"]) == (AWKWARD_NAMES, True)


def test_bib_export_writes_a_type_that_is_no_bibtex_type_as_misc(run, pool_copy):
    """The type is a record's value (issue 39's fresh review: `misc{evil, url = {...}}\\n@misc`
    ended its record and started one of its own making): a type that is not a letter and
    then letters, digits, - or _ is written as misc."""
    edit(pool_copy / "registry.yaml", "  type: [bibtex.type]\n", "  type: [bibtex.key, bibtex.type]\n")
    edit(pool_copy / "papers" / "malt.yaml", "  key: malt2025", '  key: "misc{evil,\\n  url = {javascript:alert(1)}}\\n@misc"')
    assert run("validate", cwd=pool_copy).exit_code == 0
    exported = run("export", "--format", "bib", cwd=pool_copy).output
    library = bibtexparser.parse_string(exported)
    assert not library.failed_blocks and "evil" not in [entry.key for entry in library.entries]
    assert "@misc{malt," in exported and "javascript" not in exported


def test_csv_export_writes_the_unknown_marker_of_a_list_field_whole(run, pool_copy):
    """A stub's `authors: TODO` (what add and import-csljson write into a field they cannot
    fill) is the marker in the CSV, not its letters (issue 39's fresh review: T and O and
    D and O)."""
    edit(pool_copy / "papers" / "malt.yaml", "authors:\n", "authors: TODO\nwas_authors:\n")
    text = (pool_copy / "papers" / "malt.yaml").read_text(encoding="utf-8")
    lines = text.splitlines()
    start = lines.index("was_authors:")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("- "))
    (pool_copy / "papers" / "malt.yaml").write_text("\n".join(lines[:start] + lines[end:]) + "\n", encoding="utf-8")
    exported = run("export", "--format", "csv", cwd=pool_copy).output
    row = next(line for line in exported.splitlines() if line.startswith("malt,"))
    assert ",TODO," in row and "T and O" not in row


@pytest.mark.slow
def test_a_bibtex_field_from_a_list_field_is_one_text_in_every_format(run, pool_copy):
    """pages mapped to a list field (issue 39's fresh review: validate said ok, then RIS,
    CSL-JSON and the build ended in an internal error): the values joined as one text."""
    edit(pool_copy / "registry.yaml", "    pages: [bibtex.pages]\n", "    pages: [further_families]\n")
    assert run("validate", cwd=pool_copy).exit_code == 0
    for fmt in ("ris", "csljson", "bib"):
        result = run("export", "--format", fmt, cwd=pool_copy)
        assert result.exit_code == 0 and "internal error" not in result.output, (fmt, result.output[-300:])
    malt = json.loads(run("export", "--format", "csljson", cwd=pool_copy).output)
    families = {item["id"]: item.get("page") for item in malt}
    assert any(page and ", " in page for page in families.values())


# Text of every kind the LaTeX encoding meets: accents precomposed and combining (e + U+0301
# is é once in NFC), marks that stay apart (ạ + U+0301), CJK, braces, quotes, % and &.
VARIED = 'Über naïve cafe\u0301 漢字 {a} "q" ạ\u0301 %& '
VARIED_LATEX = '\\"Uber na{\\"\\i}ve caf\\\'e 漢字 \\{a\\} "q" ạ\u0301 \\%\\& '


def test_bib_export_encodes_a_long_field_as_it_encodes_a_short_one(run, pool_copy):
    """pylatexenc takes time in the square of a text's length (400 kB of é: 4 s; issue 41's
    review), so a long text is encoded in pieces: the LaTeX is the same, here 300 times
    the short text's, in each of the fields that take the value."""
    edit(pool_copy / "registry.yaml", "    url: [urls]\n", "    url: [urls]\n    venue: [bibtex.booktitle]\n")
    edit(
        pool_copy / "papers" / "malt.yaml",
        "  booktitle: Conference on Language Modeling (COLM)",
        f"  booktitle: '{VARIED * 300}'",
    )
    malt = _exported_malt(run, pool_copy)
    value = "{" + (VARIED_LATEX * 300).rstrip() + "}"
    assert f"  booktitle = {value},\n" in malt and f"  venue = {value}\n" in malt


def test_long_text_is_encoded_in_pieces_as_pylatexenc_encodes_it_whole():
    """The pieces are cut where NFC changes nothing: never inside a combining sequence
    (but between the marks of a run too long for any text), a Hangul syllable's jamo or a
    surrogate pair, so their LaTeX, joined, is the whole text's."""
    import random

    from paperpool.formats.bibtex import writing

    marks = ["\u0301", "\u0323", "\u0308", "\u031b", "\u0345"]
    jamo = ["\u1100", "\u1161", "\u11a8", "\uac00"]  # L, V, T and an LV syllable: L+V and LV+T compose
    alphabet = [*VARIED, "e\u0301", *marks, "\ud83d\ude00", "😀", "\u0b47", "\u0b3e", "\u0b56", "\u0f73", "\u212b", *jamo]
    rng = random.Random(41)
    for trial in range(60):
        text = "".join(rng.choice(alphabet) for _ in range(3_000))
        if trial % 3 == 0:  # a base with more marks than a piece holds
            text = "a" + "".join(rng.choice(marks) for _ in range(2_500)) + text
        if trial % 5 == 0:
            text = "".join(rng.choice(jamo) for _ in range(3_000))
        for encoder in (writing._ENCODER, writing._NAME_ENCODER):
            assert writing._unicode_to_latex(text, encoder) == encoder.unicode_to_latex(text), trial


def test_fields_taking_one_entry_field_share_its_value(pool_copy):
    """A registry may map many BibTeX fields to one entry field (issue 41's review: 2,000
    to a 600 kB journal took RIS and CSL-JSON 633 MB): the value is made once."""
    from paperpool.formats.bibtex.writing import citation
    from paperpool.registry import load_registry

    extra = "".join(f"    x{number}: [bibtex.booktitle]\n" for number in range(150))
    edit(pool_copy / "registry.yaml", "    url: [urls]\n", "    url: [urls]\n" + extra)
    registry, problems = load_registry(pool_copy)
    assert not problems
    cited = citation(registry, _records(pool_copy)["malt"])
    values = [value for name, value in cited.fields if name == "booktitle" or name.startswith("x")]
    assert len(values) == 151 and all(value is values[0] for value in values)
    assert values[0] == "Conference on Language Modeling (COLM)"


def test_a_conference_paper_is_cited_by_its_conference_in_every_format(run, pool_copy):
    """Issue 37: context-folding (ICML 2026) and seven other peer-reviewed entries were
    exported as `@article{..., journal = {arXiv preprint ...}}`, and cited so in RIS and
    CSL-JSON; the year is the version cited's, the arXiv id stays as eprint."""
    bib = _read_bib(run("export", "--format", "bib", cwd=pool_copy).output)
    assert bib["context-folding"] | {"author": None, "title": None} == {
        "title": None,
        "author": None,
        "year": "2026",
        "booktitle": "International Conference on Machine Learning (ICML)",
        "eprint": "2510.11967",
        "archiveprefix": "arXiv",
        "url": "https://arxiv.org/abs/2510.11967",
    }
    assert bib["gaia2023"]["year"] == "2024"  # ICLR 2024; its first arXiv version (2023) is the record's preprint_year
    ris = {record["id"]: record for record in rispy.loads(run("export", "--format", "ris", cwd=pool_copy).output)}
    assert (ris["context-folding"]["type_of_reference"], ris["context-folding"]["secondary_title"]) == (
        "CPAPER",
        "International Conference on Machine Learning (ICML)",
    )
    csl = {item["id"]: item for item in json.loads(run("export", "--format", "csljson", cwd=pool_copy).output)}
    assert (csl["context-folding"]["type"], csl["context-folding"]["container-title"], csl["context-folding"]["issued"]) == (
        "paper-conference",
        "International Conference on Machine Learning (ICML)",
        {"date-parts": [[2026]]},
    )
    records = _records(pool_copy)
    cited_as_preprints = [
        key
        for key, data in records.items()
        if data.get("evidence_level") == "peer_reviewed"
        and str((data.get("bibtex") or {}).get("journal", "")).startswith("arXiv preprint")
    ]
    assert cited_as_preprints == []
