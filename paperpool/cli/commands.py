"""The paperpool command line. Each command parses its options, calls the library and
reports; library errors are PaperpoolError and print as `Error: ...`.

Each command imports the modules it uses in its own body: the whole library takes a
third of a second to import (pandas, numpy), which `paperpool validate` in a pre-commit
hook must not pay for."""

from __future__ import annotations

import datetime as dt
import functools
import os
import signal
import sys
from pathlib import Path

import click

from paperpool import __version__
from paperpool.files.oserrors import explain
from paperpool.files.problems import PaperpoolError, errors, plural, printable, warnings
from paperpool.files.yamlio import check_output, dump_yaml, write_atomic
from paperpool.registry import sections

from .context import (
    Commands,
    Context,
    Ending,
    Interrupted,
    as_of_option,
    date_added_option,
    dry_run_option,
    engine_option,
    exclusions_option,
    format_option,
    pass_context,
    site_url_option,
    trust_config_option,
)

# The --format choices of the commands whose modules load lazily (a test checks them
# against each module's FORMATS).
FORMAT_CHOICES = {
    "stats": ["markdown", "json", "csv"],
    "gaps": ["markdown", "json"],
    "diff": ["markdown", "json"],
    "audit": ["text", "json"],
    "claims": ["text", "json"],
    "export": ["csv", "json", "bib", "ris", "csljson"],
}

RECORD_WORDS = {"entries": ("entry", "entries"), "exclusions": ("exclusion", "exclusions")}


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="paperpool")
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    help="The pool's folder (the one holding registry.yaml). Default: the nearest such folder at or above the current one.",
)
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """paperpool: a survey's paper pool as data, checked and published.

    Entries and exclusions are YAML files tagged on the taxonomy declared in
    registry.yaml; every command reads them from the pool's folder."""
    ctx.obj = Context(root)


@cli.command()
@click.option("--strict", is_flag=True, help="Treat warnings as errors (exit 1 when there are any).")
@click.option("--no-cache", is_flag=True, help="Read and check every record again, without paperpool's cache of checked records.")
@trust_config_option
@pass_context
def validate(context: Context, strict: bool, no_cache: bool, trust_config: bool) -> None:
    """Check every entry, exclusion, the registry, the claims and mkdocs.yml; list
    every problem.

    Each problem is one line, `path:line: field: what is wrong; how to fix it`,
    followed by a count. Exit status 0 when clean, 1 on errors."""
    from paperpool.formats import citationcff
    from paperpool.sitegen import siteconfig

    pool, problems = context.project.without_cache().checked if no_cache else context.project.checked
    config, config_problems = siteconfig.check(context.root, trust_config)
    problems = problems + config_problems
    if pool is not None:
        problems += sections.file_problems(pool.registry) + siteconfig.survey_problems(config, pool.registry.survey)
        problems += siteconfig.site_dir_problems(config, pool.registry)
        problems += citationcff.problems(context.root, pool.registry.survey)
    problems = sorted(set(problems))
    for problem in problems:
        click.echo(str(problem))
    found_errors, found_warnings = len(errors(problems)), len(warnings(problems))
    if found_errors or found_warnings:
        strictly = " (--strict: warnings count as errors)" if strict and found_warnings else ""
        click.echo(f"{plural(found_errors, 'error')}, {plural(found_warnings, 'warning')}{strictly}.")
    else:
        click.echo(
            f"ok: {plural(len(pool.entries), 'entry', 'entries')} and {plural(len(pool.exclusions), 'exclusion')}, no problems."
        )
    if found_errors or (strict and found_warnings):
        raise click.exceptions.Exit(1)


@cli.command("import-csv")
@click.argument("csv_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@exclusions_option("The file is an exclusion log, not retained entries.")
@click.option(
    "--bib",
    "bib_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A .bib file whose records complete the entries (full author lists, BibTeX fields); matched by arXiv id, link or title.",
)
@date_added_option
@dry_run_option
@pass_context
def import_csv_command(
    context: Context, csv_file: Path, exclusions: bool, bib_file: Path | None, date_added: dt.date, dry_run: bool
) -> None:
    """Turn a pool in the source's CSV format into one YAML file per row.

    Refuses to overwrite: if any row's key is already in the pool, or any row is
    invalid, nothing is written. A cell that export wrote with a ' before a formula
    (=, +, -, @) is read without it."""
    from paperpool.formats import csvio
    from paperpool.pool import stubs

    pool = context.project.pool()
    kind = "exclusions" if exclusions else "entries"
    planned = csvio.import_csv(pool, csv_file, kind, bib_file, date_added)
    if not dry_run:
        stubs.write_planned(planned)
    verb = "would write" if dry_run else "wrote"
    folder = pool.registry.pool[kind]
    click.echo(f"{verb} {plural(len(planned), *RECORD_WORDS[kind])} to {folder}/")


@cli.command("add")
@click.argument("key", required=False)
@click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="FIELD=VALUE",
    help="A field's value, e.g. --set title='...' --set authors='Doe, Jane; Roe, Rick' --set year=2026 "
    "--set subdecisions='O1:trained'. Lists are separated by ;. Repeat for each field.",
)
@click.option(
    "--arxiv",
    "arxiv_ids",
    multiple=True,
    metavar="ID",
    help="Add the paper arXiv has under this id (2412.01928, arXiv:2412.01928 or its link), its metadata fetched "
    "from arXiv's API. Repeat for more papers.",
)
@click.option(
    "--doi",
    "dois",
    multiple=True,
    metavar="DOI",
    help="Add the paper with this DOI, its metadata fetched from Crossref (OpenAlex for DOIs Crossref does not hold).",
)
@click.option(
    "--openreview",
    "openreview_ids",
    multiple=True,
    metavar="ID",
    help="Add the submission OpenReview has under this id (the id after ?id= in its link).",
)
@exclusions_option("Add a record to the exclusion log instead of an entry.")
@click.option(
    "--interactive/--no-interactive",
    default=None,
    help="Ask for each field not given with --set, offering the registry's values (default: when the input is a terminal).",
)
@date_added_option
@dry_run_option
@pass_context
def add_command(
    context: Context,
    key: str | None,
    assignments: tuple[str, ...],
    arxiv_ids: tuple[str, ...],
    dois: tuple[str, ...],
    openreview_ids: tuple[str, ...],
    exclusions: bool,
    interactive: bool | None,
    date_added: dt.date,
    dry_run: bool,
) -> None:
    """Add one paper to the pool as a new YAML record with every field present.

    With --arxiv, --doi or --openreview: each paper's title, every author, year, venue,
    identifiers and link are fetched from the service that holds it, and written as the
    stub import-bib writes; the taxonomy fields are left TODO.

    Otherwise values come from --set options and, at a terminal, from questions that list
    the registry's values for each field; what stays unknown is marked TODO, which
    validate lists. KEY defaults to the first author's surname, the year and a title word.
    Refuses a taken key and a paper the pool already records (same id, link or title)."""
    from paperpool.pool import adding, stubs
    from paperpool.scholarly import lookup

    kind = "exclusions" if exclusions else "entries"
    if arxiv_ids or dois or openreview_ids:
        if key or assignments or interactive:
            raise click.UsageError(
                "KEY, --set and --interactive are for a paper added by hand; a paper added by its "
                "identifier takes its fields from the service: edit the file after"
            )
        wanted = [
            one
            for scheme, given in (("arxiv", arxiv_ids), ("doi", dois), ("openreview", openreview_ids))
            for one in lookup.from_options(scheme, list(given))
        ]
        _import_ids(context, wanted, "the identifiers given", kind, date_added, dry_run)
        return
    pool = context.project.pool()
    given = adding.parse_assignments(pool.registry, kind, list(assignments))
    if interactive if interactive is not None else sys.stdin.isatty():
        for question in adding.questions(pool.registry, kind, given):
            click.echo("\n".join(["", *question.explanation]) if question.explanation else "")
            value = click.prompt(
                question.prompt, default="", show_default=False, value_proc=_prompt_reader(question, pool.registry, kind)
            )
            if value is not None:
                given[question.name] = value
        key = key or click.prompt("\nKey (the file name)", default=adding.suggested_key(given))
    planned = adding.plan_record(pool, kind, key or adding.suggested_key(given), given, date_added)
    if dry_run:
        click.echo(dump_yaml(planned.record), nl=False)
    else:
        stubs.write_planned([planned])
    left = adding.unknown_fields(pool.registry, planned.record)
    verb = "would create" if dry_run else "created"
    todo = f"; still {pool.registry.unknown_marker}: {', '.join(left)}" if left else ""
    click.echo(
        f"{verb} {planned.path.relative_to(pool.root)}{todo}. "
        "Then: paperpool validate, and paperpool diff main to see which counts, gap cells and claims it moves."
    )


def _prompt_reader(question, registry, kind):
    def read(answer: str):
        try:
            return question.read(answer, registry, kind)
        except ValueError as exc:
            raise click.UsageError(f"{exc}; try again, or press Enter to leave it unknown") from None

    return read


@cli.command("new-survey")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--title", help="The survey's title (default: made from the folder's name); edit registry.yaml to change it later.")
@click.option(
    "--site-url",
    metavar="URL",
    help="Where the site will be published, e.g. https://OWNER.github.io/REPO/ (asked for at a terminal); mkdocs.yml's "
    "site_url, which the sitemap and the feed's links need.",
)
def new_survey_command(directory: Path, title: str | None, site_url: str | None) -> None:
    """Start the pool of another survey in DIRECTORY (new or empty): a registry with an
    example axis, a sample entry, the claim ledger, mkdocs.yml, a README with its
    generated block, and a GitHub Actions workflow. validate and build work in it at once."""
    from paperpool.publishing import newsurvey, release

    if site_url is None and sys.stdin.isatty():
        site_url = (
            click.prompt(
                f"Site URL, where the site will be published (e.g. {newsurvey.SITE_URL_EXAMPLE}; Enter: none yet)",
                default="",
                show_default=False,
            ).strip()
            or None
        )
    this = release.current()
    written = newsurvey.create(directory, title, dt.date.today(), site_url, this)
    click.echo(f"created {directory}: {', '.join(written)}")
    pins = "requirements.txt, .pre-commit-config.yaml's rev and the workflow's uses:"
    if this.placeholder:
        click.echo(
            f"warning: paperpool's address is not filled in ([project.urls] Repository of its pyproject.toml says "
            f"{this.repository}): {pins} name that placeholder; replace it in those three places with the "
            "repository paperpool is published at."
        )
    elif this.inferred:
        click.echo(
            f"note: {pins} name {this.repository} at {this.rev}, this version's tag: this paperpool was installed "
            "from a file or folder, which records no published source. Change those three places if your paperpool "
            "is published elsewhere."
        )
    click.echo(
        f"next: cd {directory}, edit registry.yaml (the taxonomy), then paperpool add --arxiv ID (or --doi, or import-bib), "
        "paperpool validate and paperpool build."
    )


def _import_command(name: str, argument: str):
    """A command that writes one stub per record of the file it is given (import-bib,
    import-csljson): the decorated function plans the stubs, this reports and writes them."""

    def register(plan):
        @cli.command(name)
        @click.argument(argument, type=click.Path(exists=True, dir_okay=False, path_type=Path))
        @exclusions_option("Write exclusion records (to be given a stage and reason), not entries.")
        @date_added_option
        @click.option(
            "--all-or-nothing",
            is_flag=True,
            help="Import nothing when any record cannot be imported (by default the others are, and each is listed).",
        )
        @dry_run_option
        @pass_context
        @functools.wraps(plan)
        def command(
            context: Context, exclusions: bool, date_added: dt.date, all_or_nothing: bool, dry_run: bool, **given
        ) -> None:
            pool = context.project.pool()
            kind = "exclusions" if exclusions else "entries"
            _report_import(pool, kind, plan(pool, given[argument], kind, date_added, all_or_nothing), dry_run)

        return command

    return register


@_import_command("import-bib", "bib_file")
def import_bib_command(pool, bib_file: Path, kind: str, date_added: dt.date, all_or_nothing: bool):
    """Write one stub record per BibTeX record, for the tags to be filled in.

    A record with the same arXiv id, DOI, OpenReview id or link as a record of the pool
    (or of the file), or a title at least pool.title_similarity alike, is skipped and
    named as a duplicate; a title alike with a different arXiv id or DOI is another work,
    kept with distinct_from. What the .bib cannot say is marked TODO, which validate
    lists. A record that cannot be imported is listed with its line and the fix, and the
    others are imported (exit status 1; --all-or-nothing imports none). Never overwrites."""
    from paperpool.formats.bibtex.importing import import_bib

    return import_bib(pool, bib_file, kind, date_added, all_or_nothing)


@_import_command("import-csljson", "json_file")
def import_csljson_command(pool, json_file: Path, kind: str, date_added: dt.date, all_or_nothing: bool):
    """Write one stub record per item of a CSL-JSON file (Zotero: Export Items, format
    CSL JSON), as import-bib does for a BibTeX record.

    Each item is read as the BibTeX record it would be (title, authors, year, container,
    publisher, DOI, link, note, an arXiv number), then duplicates are skipped and stubs
    written exactly as import-bib does. An unreadable file writes nothing."""
    from paperpool.formats import csljson

    return csljson.import_csljson(pool, json_file, kind, date_added, all_or_nothing)


@cli.command("import-ids")
@click.argument("ids_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@exclusions_option("Write exclusion records (to be given a stage and reason), not entries.")
@date_added_option
@dry_run_option
@pass_context
def import_ids_command(context: Context, ids_file: Path, exclusions: bool, date_added: dt.date, dry_run: bool) -> None:
    """Add the papers a file names, one identifier a line: arxiv:ID, doi:DOI,
    openreview:ID, the bare id or a link to the paper's page. Blank lines and lines
    starting with # are skipped.

    Each paper's metadata is fetched (arXiv, Crossref or OpenAlex, OpenReview), then
    stubs are written, and duplicates skipped and named, as import-bib does. A line that
    is no identifier, or a service that fails, writes nothing."""
    from paperpool.scholarly import lookup

    wanted = lookup.from_file(ids_file)
    _import_ids(context, wanted, ids_file.name, "exclusions" if exclusions else "entries", date_added, dry_run)


def _import_ids(context: Context, wanted, name: str, kind: str, date_added: dt.date, dry_run: bool) -> None:
    from paperpool.scholarly import lookup
    from paperpool.scholarly.client import Client

    pool = context.project.pool()
    with Client(pool.registry.survey) as client:
        result = lookup.import_ids(pool, wanted, name, kind, date_added, client)
    for note in client.notes:
        click.echo(printable(note), err=True)
    if dry_run:
        for created in result.created:
            planned = created.planned
            # the services' text shown escaped where a terminal would act on it (a right-to-left override)
            click.echo(
                printable(f"# {planned.path.relative_to(pool.root)}\n{planned.header}{dump_yaml(planned.record)}", lines=True),
                nl=False,
            )
    _report_import(pool, kind, result, dry_run)


@cli.command("refresh")
@click.option("--check", is_flag=True, help="Exit 1 when anything changed outside (for CI); write nothing.")
@click.option(
    "--write", is_flag=True, help="Apply the factual updates (venue, DOI, dead links) and record each in the record's history."
)
@click.option("--links/--no-links", default=True, show_default=True, help="Check every external link (HEAD, then GET).")
@pass_context
def refresh_command(context: Context, check: bool, write: bool, links: bool) -> None:
    """What has changed outside the pool: preprints now published, newer arXiv versions,
    withdrawals and retractions, and links dead in two runs a week apart. Asks arXiv,
    OpenAlex and Crossref about each record's paper; taxonomy fields are never touched."""
    from paperpool.scholarly.client import Client
    from paperpool.scholarly.refresh import apply, refresh

    if check and write:
        raise click.UsageError("--check reports and --write applies; give one of them")
    pool = context.project.valid_pool()
    with Client(pool.registry.survey) as client:
        findings = refresh(pool, client, links)
    for note in client.notes:
        click.echo(printable(note), err=True)
    for finding in findings:
        click.echo(printable(finding.line()))  # what a service says is text from strangers too
    written = apply(pool, findings, dt.date.today()) if write else []
    applied = f", {plural(len(written), 'record')} updated" if write else ""
    click.echo(f"{plural(len(findings), 'change')} found outside the pool{applied}.")
    if check and findings:
        raise click.exceptions.Exit(1)


def _report_import(pool, kind: str, result, dry_run: bool) -> None:
    from paperpool.pool import stubs

    if not dry_run:
        stubs.write_planned([created.planned for created in result.created])
    verb = "would create" if dry_run else "created"
    for created in result.created:
        renamed = f"; key '{created.renamed_from}' is taken" if created.renamed_from else ""
        # a source's key or title is the input's, anything a .bib holds: shown escaped
        click.echo(printable(f"{verb} {created.planned.path.relative_to(pool.root)} from {created.source}{renamed}"))
    for skipped in result.skipped:
        click.echo(printable(f"skipped {skipped.source}: duplicate of {skipped.duplicate_of}"))
    for line in result.distinct:
        click.echo(printable(f"kept {line}"))
    for note in result.notes:
        click.echo(f"note: {printable(note)}", err=True)
    for refused in result.refused:
        click.echo(f"not imported: {refused}", err=True)
    summary = f"{verb} {plural(len(result.created), *RECORD_WORDS[kind])}, skipped {plural(len(result.skipped), 'duplicate')}"
    todo = pool.registry.unknown_marker
    hint = f"; fill in the {todo} fields, then run paperpool validate" if result.created and todo and not dry_run else ""
    click.echo(f"{summary}{' (dry run: nothing written)' if dry_run else ''}{hint}.")
    if result.refused and not result.records_refused:  # only @string macros no record uses: every record came in
        click.echo(f"({plural(len(result.refused), 'line')} above: no record uses what could not be read.)", err=True)
    elif result.refused:
        raise PaperpoolError(
            f"{plural(result.records_refused, 'record')} not imported ({plural(len(result.refused), 'line')} above); fix "
            "them and import the file again (what was imported is then skipped as a duplicate), or give --all-or-nothing "
            "to import none"
        )


@cli.command("export")
@format_option(FORMAT_CHOICES["export"], "csv")
@exclusions_option("CSV only: export the exclusion log instead of the entries.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to this file instead of standard output."
)
@pass_context
def export_command(context: Context, fmt: str, exclusions: bool, output: Path | None) -> None:
    """Write the pool as CSV (the source's columns first, then paperpool's), JSON (every
    record, every field), BibTeX, RIS or CSL-JSON (the retained entries, keyed by their
    keys, cited as the registry's bibtex_export says). A CSV text cell a spreadsheet
    would run as a formula (=, +, -, @ at its start) is written with a ' before it, which
    import-csv takes away."""
    from paperpool.formats import export

    if exclusions and fmt != "csv":
        raise click.UsageError("--exclusions goes with --format csv; the other formats hold the whole pool or its entries")
    text = export.FORMATS[fmt](context.project.valid_pool(), "exclusions" if exclusions else "entries")
    if output:
        write_atomic(output, text, f"-o {output}")
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


@cli.command()
@click.option("--by", metavar="FIELD", help="Count this field only; with --vs, the rows of a cross-tab.")
@click.option("--vs", metavar="FIELD", help="With --by: the columns of the cross-tab.")
@format_option(FORMAT_CHOICES["stats"], "markdown")
@as_of_option
@pass_context
def stats_command(context: Context, by: str | None, vs: str | None, fmt: str, as_of) -> None:
    """Headline totals, counts per field and cross-tabs, recomputed from the records.

    Without options: the registry's standard set (statistics section). FIELD is named
    as in the export's CSV columns, or a derived field such as subdecisions.trained or
    reward_families. Multi-valued fields count a record once per value."""
    from paperpool.analysis import stats

    if vs and not by:
        raise click.UsageError("--vs needs --by: paperpool stats --by FIELD --vs FIELD")
    analysis = context.project.analysis_as_of(as_of)
    result = stats.compute(analysis.registry, analysis.frames, by, vs) if by else analysis.stats
    click.echo(stats.FORMATS[fmt](result), nl=False)


@cli.command("gaps")
@format_option(FORMAT_CHOICES["gaps"], "markdown")
@as_of_option
@pass_context
def gaps_command(context: Context, fmt: str, as_of) -> None:
    """The gap tables of the registry's gaps section: every cell with its count and
    entries, empty and sparse cells marked."""
    from paperpool.analysis import gaps

    analysis = context.project.analysis_as_of(as_of)
    click.echo(gaps.FORMATS[fmt](analysis.gap_tables, gaps.sparse_at_most(analysis.registry)), nl=False)


@cli.command("claims")
@click.option("--check", is_flag=True, help="Exit 1 when any claim no longer holds, naming it and the records that moved it.")
@format_option(FORMAT_CHOICES["claims"], "text")
@as_of_option
@pass_context
def claims_command(context: Context, check: bool, fmt: str, as_of) -> None:
    """Recompute every claim of the claim ledger (claims.yaml): its value, the rows
    behind it, and whether it still holds."""
    from paperpool.analysis import claims

    outcomes = context.project.analysis_as_of(as_of).outcomes
    failing = [o for o in outcomes if not o.holds]
    if check and fmt == "text":
        for outcome in failing:
            click.echo(claims.failure_line(outcome))
        click.echo(claims.summary(outcomes))
    else:
        click.echo(claims.FORMATS[fmt](outcomes), nl=False)
    if check and failing:
        raise click.exceptions.Exit(1)


@cli.command("diff")
@click.argument("revision")
@format_option(FORMAT_CHOICES["diff"], "markdown")
@pass_context
def diff_command(context: Context, revision: str, fmt: str) -> None:
    """Compare the pool at a git REVISION (a commit, branch or tag) with the working
    tree: records added, removed or changed, and every count, gap cell and claim that moved."""
    from paperpool.analysis import diff

    new = diff.snapshot(context.project.analysis)
    with diff.analysis_at_revision(context.root, revision) as old_analysis:
        old = diff.snapshot(old_analysis)
    click.echo(diff.FORMATS[fmt](diff.compare(revision, old, new)), nl=False)


@cli.command("readme")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 when the block is out of date.")
@pass_context
def readme_command(context: Context, check: bool) -> None:
    """Rewrite the generated block of README.md (between its paperpool:readme markers):
    headline counts, gap highlights and the paper list by category."""
    from paperpool.publishing import readme

    update = readme.plan_update(context.project.analysis)
    if check:
        if update.changed:
            raise PaperpoolError(
                f"{readme.README}: the generated block is out of date; run paperpool readme and commit the result"
            )
        click.echo(f"{readme.README}: the generated block is up to date.")
        return
    readme.write(update)
    click.echo(f"{readme.README}: {'block rewritten' if update.changed else 'block already up to date'}.")


@cli.command("schemas")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 when a schema file is missing or out of date.")
@pass_context
def schemas_command(context: Context, check: bool) -> None:
    """Write the JSON Schemas of registry.yaml, an entry, an exclusion and the claim ledger
    to the pool's schemas/ folder, which the files' `# yaml-language-server: $schema=...`
    lines name: editors then complete and check them offline. The records' schemas are
    made from the registry: run it again after changing the registry."""
    from paperpool.pool import fileschemas

    registry = context.project.pool().registry
    folder = registry.root / fileschemas.FOLDER
    if folder.is_symlink():  # read through, --check would compare files anywhere (writing refuses it too)
        raise PaperpoolError(
            f"{fileschemas.FOLDER}/: is a symbolic link, which paperpool neither reads nor writes through; "
            "remove it, then run paperpool schemas"
        )
    stale = fileschemas.stale(registry)
    if check:
        for name in stale:  # a file there that is not read says so first, by its name
            why = fileschemas.unreadable(folder / name) if os.path.lexists(folder / name) else None
            if why:
                raise PaperpoolError(f"{fileschemas.FOLDER}/{name}: {why}")
        if stale:
            raise PaperpoolError(
                f"{fileschemas.FOLDER}/: {', '.join(stale)} missing or out of date (the registry changed, or "
                "paperpool did); run paperpool schemas and commit the result"
            )
        click.echo(f"{fileschemas.FOLDER}/: the schemas are up to date.")
        return
    texts = {name: text for name, text in fileschemas.texts(registry).items() if name in stale}
    for name in texts:  # every file checked before any is written (a link, a device in its place)
        check_output(folder / name, f"{fileschemas.FOLDER}/{name}", new_folders=True)
    if stale:
        folder.mkdir(exist_ok=True)
    for name, text in texts.items():
        write_atomic(folder / name, text, f"{fileschemas.FOLDER}/{name}")
    click.echo(f"{fileschemas.FOLDER}/: {'wrote ' + ', '.join(stale) if stale else 'already up to date'}.")


@cli.command("registry-doc")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--check", is_flag=True, help="Change nothing; exit 1 when FILE differs from the reference.")
def registry_doc_command(file: Path | None, check: bool) -> None:
    """The reference of registry.yaml, every section and setting with its type, default
    and description, as markdown from paperpool's JSON Schema: to standard output, or to
    FILE (paperpool's repository keeps it as docs/registry.md). The site has it too."""
    from paperpool.rendering import registrydoc

    text = registrydoc.markdown()
    if file is None:
        if check:
            raise PaperpoolError("--check: name the file to compare, e.g. paperpool registry-doc docs/registry.md --check")
        click.echo(text, nl=False)
        return
    check_output(file, str(file))  # a file, or the place for one: what --check compares is what it would write
    written = text.encode("utf-8")
    current = None
    if file.is_file():  # compared as bytes, as far as it could equal the reference: any other file is out of date
        with file.open("rb") as handle:
            current = handle.read(len(written) + 1)
    if check:
        if current is None:
            raise PaperpoolError(f"{file}: no such file; run paperpool registry-doc {file} to write the reference, and commit it")
        if current != written:
            raise PaperpoolError(
                f"{file}: the registry reference is out of date; run paperpool registry-doc {file} and commit the result"
            )
        click.echo(f"{file}: the registry reference is up to date.")
        return
    if current != written:
        write_atomic(file, text)
    click.echo(f"{file}: {'written' if current != written else 'already up to date'}.")


@cli.command("audit")
@click.argument("file", required=False, type=click.Path(path_type=Path))
@format_option(FORMAT_CHOICES["audit"], "text")
@pass_context
def audit_command(context: Context, file: Path | None, fmt: str) -> None:
    """Agreement of two readers: per field, the rows, agreements, share and Cohen's
    kappa, then every disagreement.

    Without FILE: each entry's values against its second_reading, for the fields the
    second reading re-tags. With FILE: a CSV with a key column and, per field,
    orig_FIELD (first reader) and ann_FIELD (second reader)."""
    from paperpool.analysis import audit

    pool = context.project.valid_pool()
    result = audit.audit_file(pool, file) if file else audit.audit_pool(pool)
    click.echo(audit.FORMATS[fmt](result), nl=False)


def _report_stage(stage: str, seconds: float) -> None:
    click.echo(f"{stage:>9}  {seconds:6.2f} s")


@cli.command("publish")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the statistics, gap tables, claims and exports (default: build/ in the pool). The site goes "
    "where build puts it (mkdocs.yml's site_dir, else build/site).",
)
@engine_option
@site_url_option
@trust_config_option
@pass_context
def publish_command(context: Context, out: Path | None, engine: str, site_url: str | None, trust_config: bool) -> None:
    """Everything the pool publishes, in one run: validate it, analyse it once, write its
    statistics, gap tables and claims (JSON, and markdown or text), the exports (CSV,
    JSON, BibTeX, RIS, CSL-JSON), rewrite README.md's generated block (when there is a README.md),
    and build the site.

    Exit 1, with nothing written, when the pool is not valid, a claim no longer holds or
    the build refuses the pool (its mkdocs.yml, a hand-written page)."""
    from paperpool.analysis import claims
    from paperpool.formats import citationcff
    from paperpool.publishing import publish, readme
    from paperpool.sitegen.build import build, default_out

    project = context.project
    project.buildable_pool("nothing was published")
    failing = [outcome for outcome in project.analysis.outcomes if not outcome.holds]
    if failing:
        for outcome in failing:
            click.echo(claims.failure_line(outcome), err=True)
        raise PaperpoolError(f"{claims.summary(project.analysis.outcomes).rstrip('.')}; nothing was published")
    out = publish.out_folder(context.root, out)
    planned = publish.plan(project.analysis)
    publish.check(planned, out, context.root, default_out(context.root))
    result = build(project, None, engine, _report_stage, trust_config=trust_config, site_url=site_url)
    publish.write(planned, out, context.root)
    block = f"and {readme.README}'s generated block" if planned.readme else f"(no {readme.README}, so no generated block)"
    citation = f", and {citationcff.FILE}" if planned.citation else ""
    click.echo(f"wrote {plural(len(planned.files), 'file')} to {out} ({', '.join(planned.files)}) {block}{citation}")
    click.echo(f"built {plural(result.pages, 'page')}: {result.out / 'index.html'}")


@cli.command("build")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the built site (default: mkdocs.yml's site_dir, else build/site). Replaced only when the build succeeds.",
)
@engine_option
@click.option(
    "--keep-pages",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write the generated markdown pages and data files to this folder, to review what the templates produce.",
)
@site_url_option
@trust_config_option
@pass_context
def build_command(
    context: Context, out: Path | None, engine: str, keep_pages: Path | None, site_url: str | None, trust_config: bool
) -> None:
    """Build the browsable site: validate the pool (an invalid pool is not built),
    render every page from the templates, build the HTML, then swap the new site in
    for the old one. Prints how long each stage took and where the site is."""
    from paperpool.sitegen.build import build

    result = build(
        context.project, out, engine, _report_stage, keep_pages=keep_pages, trust_config=trust_config, site_url=site_url
    )
    total = sum(seconds for _, seconds in result.timings)
    click.echo(f"built {plural(result.pages, 'page')} in {total:.1f} s: {result.out / 'index.html'}")


@cli.command("serve")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Folder of the built site (as for build).")
@engine_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="0 picks a free port.")
@trust_config_option
@pass_context
def serve_command(context: Context, out: Path | None, engine: str, host: str, port: int, trust_config: bool) -> None:
    """A live preview: build the site, serve it, and rebuild when an entry, the
    registry, a template or a hand-written page changes; open pages reload by themselves."""
    from paperpool.sitegen.serve import serve

    serve(context.root, out, engine, host, port, click.echo, trust_config=trust_config)


def _end_on_sigterm() -> None:
    """SIGTERM (a CI job cancelled, `timeout`, `kill`) ends a command as Ctrl-C does: what
    it was writing is removed and its worker processes stop with it. A process forked
    from this one (a corpus's worker, the chart drawer, which a build stops with SIGTERM)
    ends at once, as SIGTERM ends it by default."""
    main_process = os.getpid()

    def terminated(signum, frame) -> None:
        if os.getpid() != main_process:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminated)


def _end_now() -> None:
    """End the process as it is (context.end_unfreed), once its output is flushed; a flush
    that fails (a closed pipe) leaves the ending to the usual path, which reports it."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(0)


def main() -> None:
    """Entry point: no traceback reaches the user, whatever the input."""
    _end_on_sigterm()
    Ending.hard_exit = True
    try:
        cli.main(standalone_mode=True)
    except SystemExit as exc:
        if Ending.unfreed and exc.code in (0, None):
            _end_now()
        raise
    except (KeyboardInterrupt, Interrupted):
        click.echo("Error: interrupted; nothing was left half-written.", err=True)
        sys.exit(130)
    except OSError as exc:  # outside a command (commands report their own in _environment_errors)
        click.echo(f"Error: {printable(explain(exc))}", err=True)
        sys.exit(1)
    except Exception as exc:
        if isinstance(exc, MemoryError) or _out_of_memory(exc):  # what a command did not say itself
            click.echo(OUT_OF_MEMORY, err=True)
            sys.exit(1)
        if os.environ.get("PAPERPOOL_DEBUG"):
            raise
        click.echo(
            f"Error: internal error ({type(exc).__name__}: {exc}); please report it with the command you ran "
            "(set PAPERPOOL_DEBUG=1 to see the traceback).",
            err=True,
        )
        sys.exit(1)


# the input is too large for the memory left
OUT_OF_MEMORY = (
    "Error: paperpool ran out of memory; give it more memory, or split the largest input "
    "(`paperpool trace ...` names the trace when it can)."
)


def _out_of_memory(exc: Exception) -> bool:
    """orjson says it cannot allocate its buffer as a JSONDecodeError, not a MemoryError."""
    return type(exc).__name__ == "JSONDecodeError" and str(exc).startswith("Not enough memory")
