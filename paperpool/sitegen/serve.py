"""`paperpool serve`: build, serve the site on localhost, and rebuild whenever an entry,
the registry, a template or a hand-written page changes.

Changes are found by polling modification times, which works the same on every system
and needs no extra package. Pages built for the preview carry a small script that
reloads the browser when a new build lands. A failed rebuild is reported and the last
good site stays up.
"""

from __future__ import annotations

import functools
import http
import http.server
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from paperpool.files import walk
from paperpool.files.problems import PaperpoolError, printable

from ..project import Project
from . import build

POLL_SECONDS = 0.5
IGNORED = {"build", "__pycache__", "node_modules", "tests"}
RELOAD_SCRIPT = "assets/paperpool/reload.js"
# Asks for the build marker every second and reloads the page when it changes.
RELOAD_JS = """(function () {
  var marker = new URL("../../MARKER", document.currentScript.src).href, last = null;
  setInterval(function () {
    fetch(marker, {cache: "no-store"}).then(function (r) { return r.text(); }).then(function (text) {
      if (last !== null && text !== last) { location.reload(); }
      last = text;
    }).catch(function () {});
  }, 1000);
})();
""".replace("MARKER", build.MARKER)


def watched_files(root: Path, out: Path) -> dict[Path, float]:
    """Every file whose change may alter the site, with its modification time: the
    pool's top-level YAML files and everything in its folders, but for hidden folders,
    build/ and the site itself. Only the pool's own files: a link is watched as a link
    (its own time), never followed, so that one laid into the pool (to / or /proc, say)
    does not have every poll walk a system's folders; the build refuses it anyway."""
    found = {}
    for top in sorted(root.iterdir()):
        if top.name.startswith(".") or top.name in IGNORED:
            continue
        if top.suffix in (".yaml", ".yml") or top.is_symlink():
            _watch(top, found)
        elif out.is_relative_to(top.resolve()):
            continue
        elif top.is_dir():
            try:
                for path in walk.files(top, top.name):  # never into a link to a folder
                    if not any(part.startswith(".") for part in path.relative_to(top).parts[:-1]):
                        _watch(path, found)
            except PaperpoolError:  # nested past what paperpool reads: what is deeper is not watched
                continue  # (a build that reads the folder says so itself; serving goes on)
    return found


def _watch(path: Path, found: dict[Path, float]) -> None:
    try:
        info = path.lstat()
    except OSError:
        return  # removed while we looked; the next poll sees it gone
    if not stat.S_ISDIR(info.st_mode):
        found[path] = info.st_mtime_ns


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass

    def send_head(self):
        """The file asked for, or an error page. A path the system cannot take (`%00`
        decodes to a NUL byte, which every os.path call refuses with ValueError) is a bad
        request, answered as one rather than with a traceback."""
        try:
            return super().send_head()
        except ValueError:
            self.send_error(http.HTTPStatus.BAD_REQUEST, "The path cannot name a file")
            return None


def serve(
    root: Path,
    out: Path | None,
    engine_name: str,
    host: str,
    port: int,
    say: Callable[[str], None],
    should_stop: Callable[[], bool] = lambda: False,
    trust_config: bool = False,
) -> None:
    def rebuild() -> build.Result:  # the pool as it is now: each rebuild reads it afresh
        return build.build(
            Project(root),
            out,
            engine_name,
            extra_js=[RELOAD_SCRIPT],
            extra_files={RELOAD_SCRIPT: RELOAD_JS},
            trust_config=trust_config,
        )

    result = rebuild()  # the first build must succeed: there is nothing to serve otherwise
    handler = functools.partial(_Quiet, directory=str(result.out))
    try:
        server = http.server.ThreadingHTTPServer((host, port), handler)
    except OSError as exc:
        raise PaperpoolError(f"cannot listen on {host}:{port} ({exc.strerror}); choose another --port") from None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    say(
        f"serving {printable(str(result.out))} at http://{host}:{server.server_port}/ ; watching the pool for changes (Ctrl-C stops)"
    )
    seen = watched_files(root, result.out)
    try:
        while not should_stop():
            time.sleep(POLL_SECONDS)
            now = watched_files(root, result.out)
            if now == seen:
                continue
            changed = sorted({str(p.relative_to(root)) for p in set(now) ^ set(seen) | {p for p in now if seen.get(p) != now[p]}})
            seen = now
            started = time.perf_counter()
            try:
                rebuild()
                # a file's name is the pool's, anything Linux allows: shown escaped, as every name paperpool prints
                names = ", ".join(printable(name) for name in changed[:3])
                say(
                    f"rebuilt after a change to {names}{' ...' if len(changed) > 3 else ''} in {time.perf_counter() - started:.1f} s"
                )
            except PaperpoolError as exc:
                for problem in getattr(exc, "problems", []):
                    say(str(problem))
                say(f"Error: {exc.format_message()} (still serving the last good site)")
    finally:
        server.shutdown()
