"""One renderer for everything paperpool writes from templates.

Templates are found by name, first in the pool's own templates/ folder, then among
the defaults shipped with paperpool, so a survey overrides any of them by adding a
file of the same name. Record text reaches a template as data and is shown through
the `md` filter; a template never re-parses it, so jinja syntax in a title stays text.

A template of the pool is a file a pull request can change, so it is treated as
untrusted: it is read only as a plain file inside templates/ (never through a link),
and it runs in Jinja's sandbox, where it can read the data it is given but reach no
file, module or process: attributes are readable only on plain data, on paperpool's
own objects and on Jinja's (see _Sandbox). Nor can it take the machine: it renders in
a child process with a limit on processor time and memory (see render_all), so that a
loop inside a loop stops the command with a message instead of running CI out of its
time, and the sandbox refuses to repeat a string or list into millions of items.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import gc
import math
import os
import posixpath
import re
import select
import signal
import struct
import time
from pathlib import Path
from types import ModuleType

import jinja2
import jinja2.debug
from jinja2.sandbox import ImmutableSandboxedEnvironment

from paperpool.files import walk
from paperpool.files.problems import PaperpoolError, plural
from paperpool.files.yamlio import YamlProblem, read_text, write_all
from paperpool.registry import TEMPLATES_FOLDER, linked_step

from . import markdown

OVERRIDES = TEMPLATES_FOLDER
TEMPLATE_SUFFIX = ".j2"
MAX_TEMPLATE_BYTES = 1_000_000
# what a template may read attributes of, besides paperpool's own objects
DATA = (str, int, float, list, tuple, dict, set, frozenset, dt.date)
JINJA_MODULES = ("jinja2.runtime", "jinja2.utils", "jinja2.environment")
MODULES = ("paperpool.sitegen.paths",)  # the modules templates are given

# A pool's templates render in a child process, under these limits. Processor time:
# the pages of a build of 10,000 entries (13,810 records, 10,064 pages) render in 5 s
# with a template of the pool's own, 0.5 ms a page, its README block in 0.85 s; the
# limit grows with the pool, to 244 s there.
BASE_SECONDS = 5
SECONDS_PER_ITEM = 0.01  # for each record of the pool and each page rendered
GRACE_SECONDS = 5  # past the limit, for a template stuck in one long operation, before the system kills it
WAIT_FACTOR = 10  # the parent gives up on a child that has not finished in this many times its limit, in real time
# Memory: what the templates may allocate beyond what paperpool holds when it starts
# them (rendering 10,000 entries takes 300 MB more).
MEMORY_HEADROOM = 2 * 1024**3
# What one `*`, `+` or `**` may make: a page is at most a few megabytes.
MAX_LENGTH = 10_000_000  # characters of a string, items of a list
MAX_POWER_BITS = 100_000  # a number of 30,000 digits
MAX_PAGE_CHARS = 5_000_000  # what the templates write: see _OutputBudget
BASE_OUTPUT_CHARS = 32_000_000
OUTPUT_CHARS_PER_ITEM = 32_000


class Renderer:
    def __init__(self, root: Path, packages: tuple[str, ...] = ()):
        """`packages`: other packages whose templates/ folder holds templates (the site's
        parts'), found after the pool's and paperpool's own."""
        self.root = root
        loader = jinja2.ChoiceLoader(
            [
                _PoolTemplates(root, OVERRIDES),
                jinja2.PackageLoader("paperpool.rendering", "templates"),
                *(jinja2.PackageLoader(package, "templates") for package in packages),
            ]
        )
        # paperpool's own templates are its code; the sandbox (which doubles the time a
        # page takes) is for a pool that brings templates of its own, and then for every
        # template, since its templates and paperpool's include and extend each other
        self.sandboxed = _overrides(root)
        environment = _Sandbox if self.sandboxed else jinja2.Environment
        self.env = environment(
            loader=loader,
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )
        self.env.filters["md"] = markdown.text
        self.env.filters["joined"] = markdown.joined
        self.env.filters["md_link"] = markdown.link
        self.env.filters["code"] = markdown.code  # an id, a name or a query of the pool shown as code
        self.env.filters["html"] = markdown.html_text  # record text inside a raw HTML block
        self.env.filters["plural"] = plural  # {{ n | plural("entry", "entries") }} -> "1 entry"
        self.env.globals["href"] = href
        if self.sandboxed:  # Jinja's own filters that pad to a width a template gives
            for name in ("center", "indent", "format"):
                self.env.filters[name] = _width_checked(self.env.filters[name])

    def render_all(self, items: list[tuple[str, dict]], records: int = 0) -> list[str]:
        """Each (template name, context) of `items` rendered, in order. When the pool has
        templates of its own, they render in a child process with BASE_SECONDS of
        processor time, plus SECONDS_PER_ITEM for each of the pool's `records` and each
        item, and MEMORY_HEADROOM of memory: a template that runs out of either stops
        the command with one message naming it. Without fork (Windows), in this process."""
        if self.sandboxed and hasattr(os, "fork"):
            return _Child(self, items, math.ceil(BASE_SECONDS + SECONDS_PER_ITEM * (records + len(items)))).texts()
        budget = _OutputBudget(len(items))
        return [budget.take(name, self.render(name, **context)) for name, context in items]

    def render(self, name: str, **context) -> str:
        try:
            template = self.env.get_template(name)
            return template.render(**context)
        except PaperpoolError:
            raise
        except _OutOfTime:
            exc = jinja2.debug.rewrite_traceback_stack()  # the template's lines, as Jinja gives them for an error
            raise PaperpoolError(f"{_where(exc, name)}: template error: {OUT_OF_TIME}") from None
        except MemoryError as exc:
            raise PaperpoolError(f"{_where(exc, name)}: template error: {OUT_OF_MEMORY}") from None
        except _TooBig as exc:
            raise PaperpoolError(f"{_where(exc, name)}: template error: {exc}") from None
        except jinja2.exceptions.SecurityError as exc:
            raise PaperpoolError(
                f"{_where(exc, name)}: template error: {str(exc).rstrip('.')}; a template may only show the data it is given"
            ) from None
        except jinja2.TemplateNotFound as exc:
            raise PaperpoolError(
                f"no template named {exc.name} (needed by {name}); add it to {OVERRIDES}/ or correct the name"
            ) from None
        except jinja2.TemplateSyntaxError as exc:
            raise PaperpoolError(
                f"{_shown(exc.filename, exc.name or name)}:{exc.lineno}: template error: {exc.message}; fix the template"
            ) from None
        except Exception as exc:  # a pool's template is code its author wrote; a failure in it is theirs to fix
            if not self.sandboxed:  # paperpool's own templates alone: the failure is paperpool's, an internal error to report
                raise
            raise PaperpoolError(
                f"{_where(exc, name)}: template error while rendering: {type(exc).__name__}: {exc}; fix the template"
            ) from None


OUT_OF_TIME = (
    f"rendering ran out of time (a pool's templates get {BASE_SECONDS} s of processor time, plus "
    f"{SECONDS_PER_ITEM * 1000:.0f} ms for each record and page); make the template do less work, "
    "such as fewer or shorter loops"
)
OUT_OF_MEMORY = (
    f"rendering ran out of memory (a pool's templates get {MEMORY_HEADROOM // 1024**3} GiB); "
    "make the template build smaller values"
)


def _where(exc: BaseException, name: str) -> str:
    """The template file and line a rendering failed at: Jinja rewrites the traceback so
    that its frames name the templates."""
    where = name
    frame = exc.__traceback__
    while frame is not None:
        filename = frame.tb_frame.f_code.co_filename
        if filename.endswith(TEMPLATE_SUFFIX):
            where = f"{_shown(filename, name)}:{frame.tb_lineno}"
        frame = frame.tb_next
    return where


def _shown(filename: str | None, name: str) -> str:
    """A template as the user knows it: the pool's by its path, paperpool's by its name."""
    if filename and filename.startswith(f"{OVERRIDES}/"):
        return filename
    return f"{name} (paperpool's own template)"


class _Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's sandbox (no underscore attributes, no changing the data), narrowed to the
    objects a page is made from: a Path, a DataFrame or an imported module would
    otherwise hand a template the file system."""

    intercepted_binops = frozenset(["*", "+", "**", "%"])

    def is_safe_attribute(self, obj, attr: str, value) -> bool:
        return super().is_safe_attribute(obj, attr, value) and _readable(obj)

    def call(self, context, obj, *args, **kwargs):
        """A string method that pads (`center`, `ljust`, `rjust`, `zfill`, `expandtabs`) to
        a width, refused past MAX_LENGTH before it makes the string: `"x".center(2000000000)`
        is 2 GB."""
        if isinstance(getattr(obj, "__self__", None), str):
            name = getattr(obj, "__name__", "")
            if name in _PADDING:
                _check_widths([], args)
        return super().call(context, obj, *args, **kwargs)

    def wrap_str_format(self, value):
        """str.format and format_map, which the sandbox wraps when a template reads them:
        their widths checked first (`"{:>1000000000}".format(1)` is a gigabyte)."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        text = value.__self__

        def checked(*args, **kwargs):
            given = list(args[0].values()) if value.__name__ == "format_map" and args and isinstance(args[0], dict) else []
            _check_widths(_brace_widths(text), [*args, *kwargs.values(), *given])
            return wrapped(*args, **kwargs)

        return checked

    def call_binop(self, context, operator: str, left, right):
        """`*`, `+` and `**`, refused before they make a value too big to show: memory
        would run out first (`"x" * 2000000000` is 2 GB)."""
        if operator == "*":
            _check_repeat(left, right)
            _check_repeat(right, left)
        elif operator == "+" and isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
            length = len(left) + len(right)
            if length > MAX_LENGTH:
                raise _TooBig(
                    f"joining {_sized(left)} and {_sized(right)} would make {_sized(left, length)}, over the "
                    f"limit of {MAX_LENGTH:,}; join shorter ones"
                )
        elif operator == "%" and isinstance(left, str):
            _check_widths(_percent_widths(left), right)
        elif operator == "**" and _integer(left) and _integer(right) and abs(left) > 1 and right > 0:
            bits = (abs(left) - 1).bit_length() * right
            if bits > MAX_POWER_BITS:
                raise _TooBig(
                    f"{left} ** {right} would be a number of about {bits:,} bits, over the limit of "
                    f"{MAX_POWER_BITS:,}; use a smaller power"
                )
        return super().call_binop(context, operator, left, right)


_SEQUENCES = (str, list, tuple)
_PADDING = {"center", "ljust", "rjust", "zfill", "expandtabs"}
_PERCENT = re.compile(r"%[-+ #0]*(\d+|\*)?(?:\.(\d+|\*))?")
_BRACE = re.compile(r"\{[^{}:]*:[^{}]*?(\d+)(?:\.(\d+))?[^{}\d]*\}")


def _width_checked(jinja_filter):
    """A Jinja filter that pads (center, indent) or %-formats (format), refused past
    MAX_LENGTH before it runs."""

    def checked(value, *args, **kwargs):
        widths = _percent_widths(value) if jinja_filter.__name__ == "do_format" and isinstance(value, str) else []
        _check_widths(widths, [*args, *kwargs.values()])
        return jinja_filter(value, *args, **kwargs)

    return checked


def _percent_widths(text: str) -> list[int]:
    """The widths and precisions written in a %-format: `%01000000000d` pads to a gigabyte."""
    return [int(number) for match in _PERCENT.finditer(text) for number in match.groups() if number and number != "*"]


def _brace_widths(text: str) -> list[int]:
    """The widths and precisions written in a str.format spec: `{:>1000000000}`."""
    return [int(number) for match in _BRACE.finditer(text) for number in match.groups() if number]


def _check_widths(widths: list[int], arguments) -> None:
    """Refuse a width past MAX_LENGTH, written in the format or given as a number (a
    `*` width, a padding method's width)."""
    given = arguments if isinstance(arguments, (tuple, list)) else [arguments]
    numbers = widths + [value for value in given if _integer(value)]
    if any(abs(number) > MAX_LENGTH for number in numbers):
        raise _TooBig(
            f"a width of {max(map(abs, numbers)):,} would make a string over the limit of {MAX_LENGTH:,} "
            "characters; use a smaller width"
        )


class _TooBig(jinja2.exceptions.SecurityError):
    """A value a template asked for that is too big to make."""


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_repeat(sequence, times) -> None:
    if isinstance(sequence, _SEQUENCES) and _integer(times) and len(sequence) * times > MAX_LENGTH:
        raise _TooBig(
            f"repeating {_sized(sequence)} {times:,} times would make {_sized(sequence, len(sequence) * times)}, "
            f"over the limit of {MAX_LENGTH:,}; repeat it fewer times"
        )


def _sized(sequence, length: int | None = None) -> str:
    """'a string of 3 characters', or with `length`, '3 characters'."""
    unit = plural(len(sequence) if length is None else length, *(("character",) if isinstance(sequence, str) else ("item",)))
    return unit if length is not None else f"a {'string' if isinstance(sequence, str) else 'list'} of {unit}"


def _readable(obj) -> bool:
    if isinstance(obj, ModuleType):
        return obj.__name__ in MODULES
    return _readable_type(type(obj))


@functools.lru_cache(maxsize=256)  # a page reads thousands of attributes of a dozen types
def _readable_type(kind: type) -> bool:
    if issubclass(kind, Path):
        return False
    return issubclass(kind, DATA) or kind.__module__.startswith("paperpool.") or kind.__module__ in JINJA_MODULES


def _overrides(root: Path) -> bool:
    """Whether the pool has templates of its own (anything but a README in templates/)."""
    folder = root / OVERRIDES
    return os.path.lexists(folder) and (
        folder.is_symlink() or any(path.name != "README.md" for path in walk.files(folder, OVERRIDES))
    )


class _PoolTemplates(jinja2.BaseLoader):
    """The pool's templates: plain UTF-8 files inside its templates/ folder, reached
    without following a link (a template linked to /etc/passwd would print it)."""

    def __init__(self, root: Path, folder: str):
        self.root, self.folder = root, folder

    def get_source(self, environment, name: str):
        parts = jinja2.loaders.split_template_path(name)  # refuses '..'
        path = self.root.joinpath(self.folder, *parts)
        shown = "/".join([self.folder, *parts])
        if not os.path.lexists(path):
            raise jinja2.TemplateNotFound(name)
        linked = linked_step(self.root, shown)
        if linked:
            raise PaperpoolError(
                f"{linked}: is a link; templates must be files of the pool's {self.folder}/ folder: copy the file there instead"
            )
        try:
            source = read_text(path, MAX_TEMPLATE_BYTES)
        except YamlProblem as exc:
            raise PaperpoolError(f"{shown}:{exc.line}: {exc.message}") from None
        modified = os.lstat(path).st_mtime_ns
        return source, shown, lambda: os.path.lexists(path) and os.lstat(path).st_mtime_ns == modified


@jinja2.pass_context
def href(context, target: str) -> str:
    """The relative link from the page being rendered (the context's `here`, a path in
    the site's docs folder) to `target` (such a path, maybe with #anchor)."""
    return relative(target, context["here"])


def relative(target: str, here: str) -> str:
    """The link from page `here` to `target` (both paths in one folder tree)."""
    path, _, anchor = target.partition("#")
    link = posixpath.relpath(path, posixpath.dirname(here) or ".") if path else ""
    return link + (f"#{anchor}" if anchor else "")


# ---------------------------------------------------------------------------------
# The child process a pool's templates render in
# ---------------------------------------------------------------------------------


class _OutOfTime(BaseException):
    """Raised in the child when its processor time is up: not an Exception, so that no
    `except Exception` on the way (Jinja's, a filter's) can swallow it."""


def _out_of_time(signum, frame) -> None:
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)  # once: the next second's signal must not cut the report short
    raise _OutOfTime


_TEXT, _ERROR, _CRASH = b"T", b"E", b"C"  # a page, a message for the user, a failure of paperpool's own
_FRAME = struct.Struct("<cQ")  # a frame's kind and the length of what follows


class _Child:
    """Templates rendered in a child process: forked, so that it has the data without
    copying it, and limited where no template can lift the limit. At `seconds` of
    processor time the system signals SIGXCPU, which stops the rendering with a message
    naming the template and line (GRACE_SECONDS later it kills the child, stuck in one
    long operation); an allocation past the memory limit fails with MemoryError. The
    texts come back through a pipe, a frame each; an error is a last frame, its message."""

    def __init__(self, renderer: Renderer, items: list[tuple[str, dict]], seconds: int):
        self.renderer, self.items, self.seconds = renderer, items, seconds

    def texts(self) -> list[str]:
        read_end, write_end = os.pipe()
        gc.freeze()  # the child's collector leaves the parent's objects alone: fewer pages copied
        try:
            pid = os.fork()
        except BaseException:
            gc.unfreeze()
            raise
        if pid == 0:
            os.close(read_end)
            status = 1
            try:
                self._render(write_end)
                status = 0
            except Exception as exc:  # noqa: BLE001 - a failure of paperpool's own, for the parent to report
                with contextlib.suppress(Exception):
                    _send(write_end, _CRASH, f"{type(exc).__name__}: {exc}".encode("utf-8", "surrogatepass"))
            finally:  # whatever happens, the child never returns into the parent's code
                os._exit(status)
        gc.unfreeze()
        os.close(write_end)
        try:
            data = self._read(read_end)
        except BaseException:  # Ctrl-C, or a child that stopped answering
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
        finally:
            os.close(read_end)
        _, status, usage = os.wait4(pid, 0)
        texts, last = _frames(data)
        if last is not None and last[0] == _ERROR:
            raise PaperpoolError(last[1])
        if last is not None:
            raise RuntimeError(f"rendering the templates in a child process failed: {last[1]}")
        if len(texts) == len(self.items) and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            return texts
        stopped = self._template(len(texts))
        if usage.ru_utime + usage.ru_stime >= self.seconds:
            raise PaperpoolError(f"{stopped}: template error: {OUT_OF_TIME}")
        how = (
            f"by signal {signal.Signals(os.WTERMSIG(status)).name}"
            if os.WIFSIGNALED(status)
            else f"with exit status {os.WEXITSTATUS(status)}"
        )
        raise PaperpoolError(
            f"{stopped}: template error: rendering stopped {how}, perhaps for want of memory; make the "
            "template build smaller values, or run the command again"
        )

    def _render(self, out: int) -> None:
        """In the child: each text sent as soon as it is rendered, until an error."""
        _limit(self.seconds)
        budget = _OutputBudget(len(self.items))
        for index, (name, context) in enumerate(self.items):
            try:
                text = budget.take(self._template(index), self.renderer.render(name, **context)).encode("utf-8", "surrogatepass")
            except PaperpoolError as exc:
                _send(out, _ERROR, exc.message.encode("utf-8", "surrogatepass"))
                return
            except MemoryError:  # encoding a text the template just managed to make
                _send(out, _ERROR, f"{self._template(index)}: template error: {OUT_OF_MEMORY}".encode())
                return
            _send(out, _TEXT, text)

    def _read(self, fd: int) -> bytearray:
        """Everything the child sends, until it closes the pipe; a child that has not
        finished in WAIT_FACTOR times its processor time, in real time, is waiting for
        something that will not come, and is given up."""
        data = bytearray()
        waited = WAIT_FACTOR * (self.seconds + GRACE_SECONDS)
        deadline = time.monotonic() + waited
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not poll.poll(left * 1000):
                stopped = self._template(len(_frames(data)[0]))
                raise PaperpoolError(
                    f"{stopped}: template error: rendering did not finish in {waited} s while using "
                    "little processor time; run the command again"
                )
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return data
            data += chunk

    def _template(self, index: int) -> str:
        """The template of item `index`, as the user knows it."""
        if index >= len(self.items):
            return "the templates"
        name = self.items[index][0]
        return f"{OVERRIDES}/{name}" if os.path.lexists(self.renderer.root / OVERRIDES / name) else _shown(None, name)


class _OutputBudget:
    """What the templates may write: a page (or the README block) at most MAX_PAGE_CHARS,
    all of them at most BASE_OUTPUT_CHARS plus OUTPUT_CHARS_PER_ITEM each (a page of a
    10,000-entry pool is a few kilobytes, the longest about 130). Markdown that large
    would only make the engine and the parent process run out of time or memory."""

    def __init__(self, items: int):
        self.left = BASE_OUTPUT_CHARS + OUTPUT_CHARS_PER_ITEM * items

    def take(self, name: str, text: str) -> str:
        self.left -= len(text)
        if len(text) > MAX_PAGE_CHARS or self.left < 0:
            what = (
                f"wrote {len(text):,} characters for one page, over the limit of {MAX_PAGE_CHARS:,}"
                if len(text) > MAX_PAGE_CHARS
                else "wrote more than the pages' limit together"
            )
            # paperpool's own template writes what the pool holds: the data is what to look at
            fix = (
                "make the template write less"
                if name.startswith(f"{OVERRIDES}/")
                else "the pool's data it shows is too large for a page: look for a very long value in the records, "
                "traces or corpora this page shows"
            )
            raise PaperpoolError(f"{name}: template error: {what}; {fix}")
        return text


def _frames(data: bytearray) -> tuple[list[str], tuple[bytes, str] | None]:
    """The texts in what the child sent, and the kind and message of the error it sent
    last if it did; a frame cut short (the child was killed while sending it) is left out."""
    texts, view, at = [], memoryview(data), 0
    while at + _FRAME.size <= len(data):
        kind, length = _FRAME.unpack_from(data, at)
        start, at = at + _FRAME.size, at + _FRAME.size + length
        if at > len(data):
            break
        text = str(view[start:at], "utf-8", "surrogatepass")
        if kind != _TEXT:
            return texts, (kind, text)
        texts.append(text)
    return texts, None


def _send(fd: int, kind: bytes, data: bytes) -> None:
    write_all(fd, _FRAME.pack(kind, len(data)))
    write_all(fd, data)


def _limit(seconds: int) -> None:
    """The child's limits: `seconds` of processor time, and MEMORY_HEADROOM of memory
    beyond what it holds now (where the system says how much that is: Linux). A limit
    already lower (ulimit) is kept."""
    import resource  # Unix only, as fork is

    def lower(kind: int, soft: int, hard: int | None) -> None:
        old_soft, old_hard = resource.getrlimit(kind)

        def within(value: int, old: int) -> int:
            return value if old == resource.RLIM_INFINITY else min(value, old)

        resource.setrlimit(kind, (within(within(soft, old_soft), old_hard), old_hard if hard is None else within(hard, old_hard)))

    signal.signal(signal.SIGXCPU, _out_of_time)
    lower(resource.RLIMIT_CPU, seconds, seconds + GRACE_SECONDS)
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return
    lower(resource.RLIMIT_AS, size + MEMORY_HEADROOM, None)
