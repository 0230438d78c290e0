"""How every command parses and reports: the context each is given (the pool's folder,
opened as one Project), the options several commands share, declared once here, and the
one-line `Error: ...` for bad usage and for what the system refuses."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from paperpool.files import entrypoints
from paperpool.files.oserrors import explain
from paperpool.files.problems import PaperpoolError
from paperpool.registry import REGISTRY_FILE, find_root, holds_registry

if TYPE_CHECKING:
    from paperpool.project import Project


class Context:
    """What every command is given: the pool's folder (--root), opened as one Project."""

    def __init__(self, root: Path | None):
        self._root = root

    @property
    def root(self) -> Path:
        if self._root is None:
            return find_root(Path.cwd())
        if not holds_registry(self._root):
            raise PaperpoolError(
                f"--root {self._root}: no {REGISTRY_FILE} there; pass the folder that holds the pool's {REGISTRY_FILE}"
            )
        return self._root.resolve()

    @functools.cached_property
    def project(self) -> Project:
        from paperpool.project import Project  # when a command opens the pool: `paperpool trace` may never

        return Project(self.root)


class OneLineUsageErrors:
    """Usage errors are bad input like any other: one `Error: ...` line and exit status 1,
    not click's usage block and status 2."""

    def make_context(self, info_name, args, parent=None, **extra):
        with _one_line_usage_errors():
            _refuse_bytes_that_are_not_utf8(args)
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx):
        try:
            with _one_line_usage_errors(), _environment_errors():
                return super().invoke(ctx)
        except KeyboardInterrupt:  # click would print "Aborted!" and exit 1; main says it, and exits 130
            raise Interrupted from None


COMMAND_ENTRY_POINTS = "paperpool.commands"


class Ending:
    """Whether the command that ran asked to end without freeing what it built, and what it
    built (held here: a function's locals are freed as it returns, before main can end)."""

    hard_exit = False  # set by the command line's main, which alone ends the process so
    unfreed = False
    kept: tuple = ()


def end_unfreed(*built) -> None:
    """Let the process end, once the command succeeded and its output is flushed, without
    freeing `built` one object at a time (main ends it with os._exit): a parsed trace of
    millions of objects takes a tenth of a second or more to free, and the system takes
    the memory back at once (mypy's hard_exit does the same). Only the command line's main
    acts on it; a command run inside another program returns and frees as usual."""
    if Ending.hard_exit:
        Ending.unfreed, Ending.kept = True, built


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM while a command ran, passed to main past click's own handling."""


class Commands(OneLineUsageErrors, click.Group):
    """paperpool's commands, and those that other wings and packages register (entry points
    `paperpool.commands` in pyproject.toml: `paperpool trace`), each imported when it runs
    or its help is shown."""

    def list_commands(self, ctx) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_registered_commands()))

    def get_command(self, ctx, name: str):
        found = super().get_command(ctx, name)
        point = _registered_commands().get(name) if found is None else None
        if point is None:
            return found
        return entrypoints.load(point, lambda _, found: isinstance(found, click.Command), "a click command")


@functools.cache
def _registered_commands() -> dict:
    return entrypoints.declared(COMMAND_ENTRY_POINTS)


class Command(OneLineUsageErrors, click.Command):
    """A command run on its own (python -m paperpool.bench, the synthetic generators)."""


@contextlib.contextmanager
def _one_line_usage_errors():
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise
    except click.UsageError as exc:
        where = f"{exc.ctx.command_path} --help" if exc.ctx else "--help"
        raise PaperpoolError(f"{exc.format_message()} (see {where})") from None


@contextlib.contextmanager
def _environment_errors():
    """What the system refuses (a full disk, a read-only mount, a file without permission)
    is the user's to fix: one line naming the path and what to do, for every command."""
    try:
        yield
    except BrokenPipeError:  # what reads standard output stopped reading (`| head`): nothing is wrong to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that exiting flushes nowhere, silently
        raise click.exceptions.Exit(141) from None  # as a shell reports a command SIGPIPE ended (128 + 13)
    except OSError as exc:
        raise PaperpoolError(explain(exc)) from None


def _refuse_bytes_that_are_not_utf8(args: list[str]) -> None:
    """An argument that is not UTF-8 reaches Python with each bad byte as a lone surrogate
    (U+DC80-U+DCFF), which no file or terminal can take; say which one, before any use."""
    for position, arg in enumerate(args):
        bad = next((char for char in arg if "\udc80" <= char <= "\udcff"), None)
        if bad is None:
            continue
        before = args[position - 1] if position else ""
        shown = os.fsencode(arg).decode("utf-8", "backslashreplace")
        if before.startswith("-") and "=" not in before and not arg.startswith("-"):
            shown = f"{before} {shown}"  # the option whose value it is
        raise PaperpoolError(
            f"{shown}: byte 0x{ord(bad) - 0xDC00:02x} is not UTF-8; give the argument as UTF-8 text "
            "(check the terminal's or the script's encoding, or rename the file)"
        )


pass_context = click.make_pass_decorator(Context)
# validate, build and serve: mkdocs.yml may use the settings that run code, read files or
# reach the network only when the maintainer says so here (docs/security.md: what a pull request can do)
trust_config_option = click.option(
    "--trust-config",
    is_flag=True,
    help="Allow mkdocs.yml's settings that run code, read files or reach the network (hooks, plugins, other "
    "extensions, theme overrides, remote scripts). Pass it only where the maintainers review mkdocs.yml as code.",
)


def _day_option(name: str, help: str, default=lambda: None):
    """An option taking a day as YYYY-MM-DD, given to the command as a date (`default()` when left out)."""
    return click.option(
        name,
        type=click.DateTime(formats=["%Y-%m-%d"]),
        metavar="YYYY-MM-DD",
        help=help,
        callback=lambda ctx, param, value: value.date() if value else default(),
    )


# --date-added: the date a new record is added (an exclusion: screened) on; today by default
date_added_option = _day_option(
    "--date-added", "The date to record as the date the record was added or screened (default: today).", default=dt.date.today
)
# --as-of: the pool as it stood on a day, by the registry's pool.dated_by
as_of_option = _day_option(
    "--as-of",
    "Count the pool as it stood on this day: the records dated on or before it (registry.yaml's pool.dated_by names the dates).",
)


dry_run_option = click.option("--dry-run", is_flag=True, help="Check and report what would be written; write nothing.")


def exclusions_option(help: str):
    """--exclusions: work on the exclusion log instead of the retained entries. `add`
    spelled it --exclusion; that spelling is kept, hidden, for one release."""

    def decorate(f):
        @functools.wraps(f)
        def command(*args, exclusions: bool, exclusion_old_spelling: bool, **kwargs):
            return f(*args, exclusions=exclusions or exclusion_old_spelling, **kwargs)

        command = click.option("--exclusion", "exclusion_old_spelling", is_flag=True, hidden=True)(command)
        return click.option("--exclusions", is_flag=True, help=help)(command)

    return decorate


def format_option(formats: list[str], default: str):
    return click.option("--format", "fmt", type=click.Choice(formats), default=default, show_default=True)


def engine_option(f):
    return click.option(
        "--engine",
        type=click.Choice(ENGINES),
        default=ENGINES[0],
        show_default=True,
        help="The engine that turns the pages into HTML: mkdocs-material, or its successor Zensical.",
    )(f)


ENGINES = ["mkdocs", "zensical"]

# build and publish: where the site will live, for the sitemap and the feed's absolute links.
# CI knows the address only when it deploys (GitHub Pages' configure-pages gives it), so it
# comes from the environment there; it overrides mkdocs.yml's site_url.
SITE_URL_ENV = "PAPERPOOL_SITE_URL"
site_url_option = click.option(
    "--site-url",
    metavar="URL",
    envvar=SITE_URL_ENV,
    show_envvar=True,
    help="The address the site will be published at (overrides mkdocs.yml's site_url): the sitemap lists every page "
    "under it and the feed's links are absolute.",
)
