"""What a survey made by `paperpool new-survey` gets without configuring anything: every
export format, one name for the site, and no trace pages while it has no traces."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml


@pytest.fixture
def survey(run, tmp_path) -> Path:
    assert run("new-survey", "wm", "--title", "A first title", cwd=tmp_path).exit_code == 0
    return tmp_path / "wm"


@pytest.mark.slow
def test_trace_pages_appear_only_with_traces_or_when_the_registry_asks(run, survey, tmp_path):
    site = tmp_path / "site"
    assert run("build", "--out", str(site), cwd=survey).exit_code == 0
    assert not (site / "traces.html").exists() and not (site / "trace-schema.html").exists() and not (site / "traces").exists()
    assert "Orchestration traces" not in (site / "index.html").read_text(encoding="utf-8")
    with (survey / "registry.yaml").open("a", encoding="utf-8") as registry:
        registry.write("\ntraces:\n  pages: true\n")
    assert run("validate", cwd=survey).output == "ok: 1 entry and 0 exclusions, no problems.\n"
    assert run("build", "--out", str(site), cwd=survey).exit_code == 0
    assert (site / "traces.html").is_file() and (site / "trace-schema.html").is_file()
    assert "Orchestration traces" in (site / "index.html").read_text(encoding="utf-8")


ICML_BIB = """@inproceedings{kirchenbauer2023watermark,
  title = {A Watermark for Large Language Models},
  author = {Kirchenbauer, John and Geiping, Jonas and Wen, Yuxin and Katz, Jonathan and Miers, Ian and Goldstein, Tom},
  booktitle = {Proceedings of the 40th International Conference on Machine Learning},
  year = {2023},
  pages = {17061--17084},
  eprint = {2301.10226},
  archivePrefix = {arXiv},
  primaryClass = {cs.LG},
  url = {https://proceedings.mlr.press/v202/kirchenbauer23a.html}
}
"""
ICML_EXPORTED = """@inproceedings{kirchenbauer2023watermark,
  title = {A Watermark for Large Language Models},
  author = {Kirchenbauer, John and Geiping, Jonas and Wen, Yuxin and Katz, Jonathan and Miers, Ian and Goldstein, Tom},
  year = {2023},
  booktitle = {Proceedings of the 40th International Conference on Machine Learning},
  pages = {17061--17084},
  eprint = {2301.10226},
  archiveprefix = {arXiv},
  url = {https://proceedings.mlr.press/v202/kirchenbauer23a.html}
}
"""
NAME = "Watermarking LLM outputs"


@pytest.mark.slow
def test_a_new_survey_renamed_once_in_the_registry_validates_exports_and_builds_under_one_name(run, survey, tmp_path):
    registry = survey / "registry.yaml"
    text = registry.read_text(encoding="utf-8")
    assert text.count('"A first title"') == 1  # the one place of the title
    registry.write_text(text.replace('"A first title"', f'"{NAME}"'), encoding="utf-8")
    assert run("readme", cwd=survey).output == "README.md: block rewritten.\n"
    # the editors' schemas are made from the registry, and made again after it changes
    assert run("schemas", "--check", cwd=survey).exit_code == 1
    assert run("schemas", cwd=survey).exit_code == 0

    (tmp_path / "icml.bib").write_text(ICML_BIB, encoding="utf-8")
    assert run("import-bib", str(tmp_path / "icml.bib"), cwd=survey).exit_code == 0
    stub = survey / "papers" / "kirchenbauer2023watermark.yaml"
    stub.write_text(
        stub.read_text(encoding="utf-8")
        .replace("approach: TODO", "approach: analysis")
        .replace("summary: TODO", "summary: A green-list watermark."),
        encoding="utf-8",
    )
    assert run("validate", "--strict", cwd=survey).output == "ok: 2 entries and 0 exclusions, no problems.\n"
    assert run("readme", "--check", cwd=survey).exit_code == 1  # the new paper is not in the block yet
    run("readme", cwd=survey)

    exported = {fmt: run("export", "--format", fmt, cwd=survey) for fmt in ("csv", "json", "bib", "ris", "csljson")}
    assert {fmt: result.exit_code for fmt, result in exported.items()} == dict.fromkeys(exported, 0)
    assert exported["bib"].output.split("\n\n")[0] + "\n" == ICML_EXPORTED
    assert "@misc{schulman2017proximal," in exported["bib"].output and "archiveprefix = {arXiv}" in exported["bib"].output
    # the venue is kept once, in `venue`; the BibTeX mapping holds the type and what else a citation needs
    assert yaml.safe_load(stub.read_text(encoding="utf-8"))["bibtex"] == {
        "type": "inproceedings",
        "key": "kirchenbauer2023watermark",
        "pages": "17061\u201317084",
    }
    assert exported["csv"].output.splitlines()[0] == (
        "key,title,authors,authors_complete,year,venue,arxiv_id,doi,urls,approach,setting,date_added,summary"
    )
    assert "kirchenbauer2023watermark,A Watermark for Large Language Models," in exported["csv"].output
    assert run("export", "--format", "csv", "--exclusions", cwd=survey).output == "key,title,url,stage,reason,date_screened\n"
    ris = exported["ris"].output.split("\n\n")[0].splitlines()
    assert ris[:2] == ["TY  - CPAPER", "ID  - kirchenbauer2023watermark"]
    assert {
        "T2  - Proceedings of the 40th International Conference on Machine Learning",
        "SP  - 17061",
        "EP  - 17084",
        "N1  - arXiv:2301.10226",
    } <= set(ris)
    item = json.loads(exported["csljson"].output)[0]
    assert (item["type"], item["container-title"], item["note"]) == (
        "paper-conference",
        "Proceedings of the 40th International Conference on Machine Learning",
        "arXiv:2301.10226",
    )
    assert json.loads(exported["json"].output)["survey"]["title"] == NAME

    site = tmp_path / "site"
    assert run("build", "--out", str(site), cwd=survey).exit_code == 0
    home = (site / "index.html").read_text(encoding="utf-8")
    assert f"<title>Home - {NAME}</title>" in home
    assert re.search(rf'<div class="md-header__topic">\s*<span class="md-ellipsis">\s*{NAME}\s*</span>', home)
    assert re.search(rf"<h1[^>]*>{NAME}<a", home)
    assert f"<title>Browse - {NAME}</title>" in (site / "browse.html").read_text(encoding="utf-8")
    # the home page's intro promises these formats, and the downloads page has each
    assert "BibTeX, RIS, CSL-JSON, CSV or JSON" in home
    for name in ("pool.bib", "pool.ris", "pool.csljson", "entries.csv", "exclusions.csv", "pool.json"):
        assert (site / "downloads" / name).is_file(), name
    assert f"The paper pool of *{NAME}*" in (survey / "README.md").read_text(encoding="utf-8")
    # the first title is gone from every file of the pool and the site
    assert [
        path
        for folder in (survey, site)
        for path in folder.rglob("*")
        if path.is_file() and b"A first title" in path.read_bytes()
    ] == []


def test_a_site_name_in_mkdocs_yml_must_be_the_registry_s(run, survey, tmp_path):
    config = survey / "mkdocs.yml"
    config.write_text('site_name: "Another name"\n' + config.read_text(encoding="utf-8"), encoding="utf-8")
    problem = (
        "mkdocs.yml:1: site_name: 'Another name' differs from registry.yaml's survey.title ('A first title'); delete the "
        "line: the build takes the site's name from registry.yaml (edit it there)\n"
    )
    assert run("validate", cwd=survey).output == problem + "1 error, 0 warnings.\n"
    result = run("build", "--out", str(tmp_path / "site"), cwd=survey)
    assert (result.exit_code, result.output) == (
        1,
        problem + "Error: mkdocs.yml contradicts registry.yaml (1 problem above); "
        "nothing was built, the previous site is unchanged\n",
    )
    assert not (tmp_path / "site").exists()


def test_a_journal_article_and_an_arxiv_preprint_export_as_their_bibtex_types(run, survey, tmp_path):
    (tmp_path / "two.bib").write_text(
        "@article{aaronson2024, title = {Watermarking of Large Language Models}, author = {Aaronson, Scott and Kirchner, Hendrik},\n"
        "  journal = {Journal of Cryptology}, volume = {37}, number = {2}, pages = {1--20}, year = {2024}, doi = {10.1007/s00145-024-09400-0}}\n"
        "@misc{christ2023, title = {Undetectable Watermarks for Language Models}, author = {Christ, Miranda and Gunn, Sam},\n"
        "  year = {2023}, eprint = {2306.09194}, archivePrefix = {arXiv}}\n",
        encoding="utf-8",
    )
    assert run("import-bib", str(tmp_path / "two.bib"), cwd=survey).exit_code == 0
    records = run("export", "--format", "bib", cwd=survey).output.split("\n\n")
    assert records[0] == (
        "@article{aaronson2024,\n  title = {Watermarking of Large Language Models},\n  author = {Aaronson, Scott and Kirchner, Hendrik},\n"
        "  year = {2024},\n  journal = {Journal of Cryptology},\n  volume = {37},\n  number = {2},\n  pages = {1--20},\n"
        "  doi = {10.1007/s00145-024-09400-0},\n  url = {https://doi.org/10.1007/s00145-024-09400-0}\n}"
    )
    assert records[1] == (
        "@misc{christ2023,\n  title = {Undetectable Watermarks for Language Models},\n  author = {Christ, Miranda and Gunn, Sam},\n"
        "  year = {2023},\n  eprint = {2306.09194},\n  archiveprefix = {arXiv},\n  url = {https://arxiv.org/abs/2306.09194}\n}"
    )
    items = json.loads(run("export", "--format", "csljson", cwd=survey).output)
    assert [(item["type"], item.get("container-title"), item.get("DOI")) for item in items[:2]] == [
        ("article-journal", "Journal of Cryptology", "10.1007/s00145-024-09400-0"),
        ("article", None, None),
    ]


def test_a_field_written_for_some_bibtex_types_is_checked(run, survey):
    registry = survey / "registry.yaml"
    text = registry.read_text(encoding="utf-8")
    line = text.splitlines().index("    journal: {from: [venue], types: [article]}") + 1
    for written, problem in [
        ("{from: [venue], type: [article]}", "journal.type: unknown setting 'type'; did you mean 'types'?"),
        (
            "7",
            (
                "journal: give the entry fields to take the value from, [FIELD, ...], or write it for some BibTeX types only: "
                "{from: [FIELD, ...], types: [article, ...]}"
            ),
        ),
        (
            "{from: [venu], types: [article]}",
            "journal.from.0: 'venu' is not a field of the entries; name one declared in entry_fields",
        ),
        ("{from: [venue], types: []}", "journal.types: list the BibTeX types this field is written for, e.g. [article]"),
    ]:
        registry.write_text(text.replace("{from: [venue], types: [article]}", written), encoding="utf-8")
        result = run("validate", cwd=survey)
        assert result.exit_code == 1
        assert result.output.splitlines()[0].startswith(f"registry.yaml:{line}: bibtex_export.fields.journal")
        assert result.output.splitlines()[0].endswith(problem)
