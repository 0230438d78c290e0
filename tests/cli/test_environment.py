"""The environment as bad input (issue 16): outputs that are not regular files, a full
disk, a read-only file system, files without permission, arguments that are not UTF-8,
writers killed mid-way, and requests and revisions that crashed `serve` and `diff`.

Everything here is real: named pipes, device nodes, symbolic links, a small tmpfs
mounted for the test, processes killed with SIGKILL. What needs a privilege the machine
does not grant (mounting, making a device node) is skipped, saying why. Permissions are
tested by a paperpool process that does not have root's power to ignore them: as root,
one started by setpriv without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH.
"""

from __future__ import annotations

import errno
import functools
import http.client
import http.server
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from paperpool.files import yamlio
from paperpool.files.problems import PaperpoolError

from ..conftest import REPO, TINY

OTLP = REPO / "traces" / "otlp" / "research-team.otlp.json"
OUTPUT_FIX = "give the path of a regular file or of a new one (nothing was written)"
NO_SPACE = "cannot write: no space left on the device; free some space, then run the command again"
READ_ONLY = "cannot write: the file system is read-only; give a path on a writable disk, or mount this one read-write"
DENIED = "permission denied; check the permissions of the file and of its folder (ls -l)"


def paperpool(*args: str | bytes, cwd: Path, prefix: tuple[str, ...] = ()) -> tuple[int, str, str]:
    """`paperpool ARGS` in its own process, as a user runs it: (exit status, stdout, stderr)."""
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "paperpool", *args], cwd=cwd, capture_output=True, timeout=300, check=False
    )
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def files_under(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder`, hidden ones too, without following links or opening
    pipes: what a failed command must leave as it was."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        kind = stat.S_IFMT(info.st_mode)
        content = path.read_bytes() if stat.S_ISREG(info.st_mode) else os.readlink(path) if path.is_symlink() else None
        found[path.relative_to(folder).as_posix()] = (kind, content)
    return found


# ---------------------------------------------------------------------------------
# Outputs: a regular file or an absent path, nothing else
# ---------------------------------------------------------------------------------


def lay(path: Path, kind: str) -> None:
    """Lay what is not a regular file where an output goes."""
    if kind == "named pipe":
        os.mkfifo(path)
    elif kind == "device":
        try:  # a copy of /dev/null's node: the real one must never be at stake in a test
            os.mknod(path, stat.S_IFCHR | 0o666, os.stat("/dev/null").st_rdev)
        except PermissionError:
            pytest.skip("making a device node needs root (CAP_MKNOD)")
    elif kind == "link to a file":
        (path.parent / "victim.json").write_text("the file the link points at\n", encoding="utf-8")
        path.symlink_to("victim.json")
    elif kind == "dangling link":
        path.symlink_to("not-there-yet.json")


REFUSALS = {
    "named pipe": "is a named pipe, not a regular file; " + OUTPUT_FIX,
    "device": "is a device, not a regular file; " + OUTPUT_FIX,
    "link to a file": "is a symbolic link; paperpool never writes through one: " + OUTPUT_FIX,
    "dangling link": "is a symbolic link; paperpool never writes through one: " + OUTPUT_FIX,
}


@pytest.mark.parametrize("kind", list(REFUSALS))
def test_trace_import_otlp_refuses_an_output_that_is_not_a_regular_file(kind, tmp_path, run):
    out = tmp_path / "out"
    out.mkdir()
    lay(out / "trace.json", kind)
    before = files_under(out)
    result = run("trace", "import-otlp", str(OTLP), "-o", str(out / "trace.json"), cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, f"Error: -o {out / 'trace.json'}: {REFUSALS[kind]}\n")
    assert files_under(out) == before


def test_export_refuses_dev_null_by_its_own_name(tmp_path, run, tiny):
    """The real /dev/null, named as the user would: refused before anything is written,
    so that the test never puts the device at stake (a device node's copy is the corpus's
    export/output-is-a-device.json)."""
    before = os.stat("/dev/null")
    result = run("export", "--format", "json", "-o", "/dev/null", cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"Error: -o /dev/null: {REFUSALS['device']}\n")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_regular_file_is_replaced_keeping_its_permissions(tmp_path, run, tiny):
    out = tmp_path / "pool.json"
    out.write_text("old\n", encoding="utf-8")
    out.chmod(0o640)
    result = run("export", "--format", "json", "-o", str(out), cwd=tiny)
    assert (result.exit_code, result.output) == (0, f"wrote {out}\n")
    assert out.read_text(encoding="utf-8").startswith('{\n  "survey"') and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool.json", "tiny"]


LINKED_FOLDER = "is a symbolic link; paperpool never writes through one: give the path the link leads to, or another one"
WRITERS = {
    "export": ("export", "--format", "json", "-o"),
    "import-otlp": ("trace", "import-otlp", str(OTLP), "-o"),
}


@pytest.fixture
def workplace(tmp_path) -> Path:
    """A folder to run in, holding `linkdir`, a link to the folder `elsewhere` beside it."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "linkdir").symlink_to("../elsewhere")
    return tmp_path / "work"


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize(
    "given, link",
    [
        ("linkdir/x.json", "linkdir"),
        ("linkdir/sub/x.json", "linkdir"),
        ("../work/linkdir/x.json", "../work/linkdir"),
        ("{work}/linkdir/x.json", "linkdir"),  # absolute, inside the current folder: named from it
    ],
)
def test_a_folder_on_the_way_that_is_a_link_is_refused(writer, given, link, workplace, run, tiny):
    """The review's case: `-o linkdir/x.json` wrote into the folder the link points at."""
    (workplace.parent / "elsewhere" / "sub").mkdir()
    output = given.replace("{work}", str(workplace))
    before = files_under(workplace.parent)
    result = run("--root", str(tiny), *WRITERS[writer], output, cwd=workplace)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: -o {output}: the folder {link} {LINKED_FOLDER} (nothing was written)\n",
    )
    assert files_under(workplace.parent) == before


def test_a_link_outside_the_current_folder_is_refused_too(workplace, run, tiny):
    """An absolute path outside the current folder: its links count from its second folder on."""
    output = workplace / "linkdir" / "x.json"
    result = run("--root", str(tiny), *WRITERS["export"], str(output), cwd=tiny)
    assert (result.exit_code, result.output) == (
        1,
        (f"Error: -o {output}: the folder {output.parent} {LINKED_FOLDER} (nothing was written)\n"),
    )
    assert list((workplace.parent / "elsewhere").iterdir()) == []


def test_links_leading_to_the_current_folder_or_above_it_are_followed(tmp_path, run, tiny):
    """The system's own links above one's work (a home folder that is a link, /tmp on
    macOS) are followed: here `alias` leads to the current folder, `top` to the one above."""
    here = tmp_path / "here"
    here.mkdir()
    (tmp_path / "alias").symlink_to("here")
    (tmp_path / "top").symlink_to(".")
    for output in (tmp_path / "alias" / "x.json", tmp_path / "top" / "here" / "y.json"):
        result = run("--root", str(tiny), *WRITERS["export"], str(output), cwd=here)
        assert (result.exit_code, result.output) == (0, f"wrote {output}\n")
    assert sorted(path.name for path in here.iterdir()) == ["x.json", "y.json"]


def test_the_first_folder_of_an_absolute_path_may_be_a_link():
    """Such as /tmp on macOS, or /bin on a system whose /bin is /usr/bin: only checked, nothing written."""
    if not os.path.islink("/bin") or not os.path.isdir("/bin"):
        pytest.skip("/bin is not a link to a folder here")
    yamlio.check_output(Path("/bin/paperpool-never-writes-this.json"), "-o /bin/paperpool-never-writes-this.json")


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize(
    "given, message",
    [
        (
            "",
            "-o: the path names no file (it is empty, or the current folder); leave out -o to write to standard output, or give the name of a file",
        ),
        ("-", "-o -: '-' is not taken for standard output here; leave out -o to write to standard output, or give a file name"),
        ("missing/dir/x.json", "-o missing/dir/x.json: the folder missing/dir does not exist; create it first"),
    ],
)
def test_an_output_that_names_no_file_or_a_missing_folder_is_refused(writer, given, message, tmp_path, run, tiny):
    """`-o ''` was reported as `-o .: is a folder`, `-o -` wrote a file named `-`, and a
    missing folder was created (and left behind by a failed write)."""
    (tmp_path / "work").mkdir()
    before = files_under(tmp_path)
    result = run("--root", str(tiny), *WRITERS[writer], given, cwd=tmp_path / "work")
    assert (result.exit_code, result.output) == (1, f"Error: {message} (nothing was written)\n")
    assert files_under(tmp_path) == before


def test_a_new_record_may_start_its_records_folder(tmp_path):
    """Only outputs named on the command line need their folder: a record (write_new) is
    written into the records folder the registry names, made if missing."""
    yamlio.write_new(tmp_path / "exclusions" / "first.yaml", "title: one\n")
    assert (tmp_path / "exclusions" / "first.yaml").read_text(encoding="utf-8") == "title: one\n"


# ---------------------------------------------------------------------------------
# A full disk and a read-only file system: a real tmpfs of 64 KB
# ---------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KB tmpfs mounted in the test's folder (root only), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True, text=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.strip() or 'mount failed'}); it needs root")
    yield disk
    subprocess.run(["umount", "--lazy", str(disk)], check=True)


def fill(disk: Path) -> None:
    """Use up every free block of `disk`."""
    with (disk / "filler").open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def make_read_only(disk: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)


def tiny_on(disk: Path) -> Path:
    return Path(shutil.copytree(TINY, disk / "pool"))


def test_export_to_a_full_disk(small_disk, tmp_path, run, tiny):
    fill(small_disk)
    before = files_under(small_disk)
    result = run("export", "--format", "json", "-o", str(small_disk / "pool.json"), cwd=tiny)
    assert (result.exit_code, result.output) == (1, f"Error: -o {small_disk / 'pool.json'}: {NO_SPACE}\n")
    assert files_under(small_disk) == before


@pytest.mark.parametrize(
    "command, written",
    [
        (["add", "--no-interactive", "zeta", "--set", "title=Zeta"], "papers/zeta.yaml"),
        (["readme"], "README.md"),
    ],
)
def test_writing_the_pool_on_a_full_disk(command, written, small_disk, run):
    pool = tiny_on(small_disk)
    fill(small_disk)
    before = files_under(small_disk)
    result = run(*command, cwd=pool)
    assert (result.exit_code, result.output) == (1, f"Error: {written}: {NO_SPACE}\n")
    assert files_under(small_disk) == before


@pytest.mark.parametrize(
    "command, written",
    [
        (["add", "--no-interactive", "zeta", "--set", "title=Zeta"], "papers/zeta.yaml"),
        (["readme"], "README.md"),
        (["export", "--format", "json", "-o", "pool.json"], "-o pool.json"),
    ],
)
def test_writing_on_a_read_only_file_system(command, written, small_disk, run):
    pool = tiny_on(small_disk)
    make_read_only(small_disk)
    before = files_under(small_disk)
    result = run(*command, cwd=pool)
    assert (result.exit_code, result.output) == (1, f"Error: {written}: {READ_ONLY}\n")
    assert files_under(small_disk) == before


# ---------------------------------------------------------------------------------
# Permission denied, reading and writing
# ---------------------------------------------------------------------------------


@pytest.fixture
def without_root_powers() -> tuple[str, ...]:
    """The prefix that starts paperpool without the power to ignore permissions: none for
    an ordinary user; as root, setpriv dropping CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
    (root ignores permissions otherwise, and the test would prove nothing)."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: root ignores file permissions, so permission denied cannot happen")
    return ("setpriv", "--bounding-set=-dac_override,-dac_read_search")


@pytest.mark.slow
@pytest.mark.parametrize(
    "command, locked, mode, message",
    [
        (["claims"], "claims.yaml", 0o000, f"claims.yaml: {DENIED}"),
        (["readme"], "README.md", 0o000, f"README.md: cannot read: {DENIED}"),
        (["readme"], ".", 0o555, f"README.md: cannot write: {DENIED}"),
        (
            ["add", "--no-interactive", "zeta", "--set", "title=Zeta"],
            "papers",
            0o555,
            f"papers/zeta.yaml: cannot write: {DENIED}",
        ),
    ],
)
def test_permission_denied(command, locked, mode, message, tiny, without_root_powers):
    before = files_under(tiny.parent)
    (tiny / locked).chmod(mode)
    try:
        status, out, err = paperpool(*command, cwd=tiny, prefix=without_root_powers)
    finally:
        (tiny / locked).chmod(0o755 if (tiny / locked).is_dir() else 0o644)
    assert (status, out, err) == (1, "", f"Error: {message}\n")
    assert files_under(tiny.parent) == before


@pytest.mark.slow
def test_an_immutable_readme_as_root(tiny):
    """Root's own refusal: a file marked immutable (chattr +i) cannot be replaced, whatever
    the permissions. Needs root and a file system with the attribute (ext4, not tmpfs)."""
    readme = tiny / "README.md"
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        pytest.skip("marking a file immutable needs root and chattr")
    if subprocess.run(["chattr", "+i", str(readme)], capture_output=True, check=False).returncode != 0:
        pytest.skip("this file system has no immutable attribute")
    try:
        before = files_under(tiny)
        status, out, err = paperpool("readme", cwd=tiny)
    finally:
        subprocess.run(["chattr", "-i", str(readme)], check=True)
    assert (status, out, err) == (
        1,
        "",
        (
            "Error: README.md: cannot write: operation not permitted; check the permissions "
            "and attributes of the file and of its folder (ls -l, lsattr)\n"
        ),
    )
    assert files_under(tiny) == before


@pytest.mark.slow
def test_an_unreadable_page_stops_the_build_and_leaves_the_site(tiny, tmp_path, without_root_powers):
    (tiny / "site").mkdir()
    page = tiny / "site" / "method.md"
    page.write_text("# Method\n", encoding="utf-8")
    page.chmod(0o000)
    status, out, err = paperpool("build", "--out", str(tmp_path / "built"), cwd=tiny, prefix=without_root_powers)
    assert (status, re.sub(r"\d+\.\d\d", "0.00", out), err) == (
        1,
        " validate    0.00 s\n   traces    0.00 s\n  analyse    0.00 s\n",
        f"Error: site/method.md: {DENIED}\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny"]


# ---------------------------------------------------------------------------------
# Arguments that are not UTF-8
# ---------------------------------------------------------------------------------

UTF8_FIX = "give the argument as UTF-8 text (check the terminal's or the script's encoding, or rename the file)"


def test_a_value_that_is_not_utf8(tiny):
    before = files_under(tiny)
    status, out, err = paperpool("add", "--no-interactive", "--set", b"title=Caf\xe9", cwd=tiny)
    assert (status, out, err) == (1, "", f"Error: --set title=Caf\\xe9: byte 0xe9 is not UTF-8; {UTF8_FIX}\n")
    assert files_under(tiny) == before


def test_a_file_name_that_is_not_utf8(tiny):
    bib = os.fsencode(tiny.parent) + b"/r\xe9f\xe9rences.bib"
    with open(bib, "w", encoding="utf-8") as handle:
        handle.write("@article{zeta, title={Zeta}, author={Doe, Jane}, year={2026}}\n")
    before = files_under(tiny)
    status, out, err = paperpool("import-bib", bib, cwd=tiny)
    shown = os.fsdecode(bib).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    assert (status, out, err) == (1, "", f"Error: {shown}: byte 0xe9 is not UTF-8; {UTF8_FIX}\n")
    assert files_under(tiny) == before


# ---------------------------------------------------------------------------------
# No temporary file outlives its writer
# ---------------------------------------------------------------------------------


def test_the_temporary_file_has_no_name_until_it_is_complete(tmp_path):
    """On Linux the file is written unnamed (O_TMPFILE) and linked in once complete, so a
    kill at any moment of the write leaves nothing: the construction, step by step."""
    target = tmp_path / "record.yaml"
    fd, name = yamlio._open_temporary(target)
    try:
        if name is not None:
            pytest.skip("no O_TMPFILE here: the named temporary file is the fallback")
        os.write(fd, b"title: complete\n")
        os.fsync(fd)
        assert os.listdir(tmp_path) == []
        yamlio._put(fd, name, target, replace=False)
    finally:
        os.close(fd)
    assert os.listdir(tmp_path) == ["record.yaml"] and target.read_text(encoding="utf-8") == "title: complete\n"


WRITER = """
import sys
from pathlib import Path
from paperpool.files.yamlio import write_new
folder, text = Path(sys.argv[1]), "x" * 1_000_000 + "\\n"
for n in range(100_000):
    write_new(folder / f"record-{n}.yaml", text)
"""


def test_a_writer_killed_mid_way_leaves_only_complete_files(tmp_path):
    """A real process writing 1 MB records one after another, killed with SIGKILL once a
    few are written: every file left is complete, and there is no temporary file."""
    folder = tmp_path / "papers"
    folder.mkdir()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder)], cwd=REPO)
    try:
        while len(os.listdir(folder)) < 5 and writer.poll() is None:
            time.sleep(0.005)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert writer.returncode == -signal.SIGKILL
    left = sorted(os.listdir(folder))
    assert len(left) >= 5 and all(re.fullmatch(r"record-\d+\.yaml", name) for name in left), left
    assert {(folder / name).stat().st_size for name in left} == {1_000_001}


@pytest.mark.slow
def test_a_killed_import_bib_leaves_no_temporary_file(tiny):
    """The issue's case: `paperpool import-bib` killed while it writes its records."""
    bib = tiny.parent / "many.bib"
    bib.write_text(
        "".join(
            f"@article{{paper{n}, title={{Study number {n} of {n * 7919 % 1000} agents}}, "
            f"author={{Doe, Jane}}, year={{2026}}, url={{https://example.org/{n}}}}}\n"
            for n in range(400)
        ),
        encoding="utf-8",
    )
    papers = tiny / "papers"
    before = set(os.listdir(papers))
    importer = subprocess.Popen(
        [sys.executable, "-m", "paperpool", "import-bib", str(bib)],
        cwd=tiny,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while len(os.listdir(papers)) < len(before) + 20 and importer.poll() is None:
            time.sleep(0.002)
    finally:
        importer.send_signal(signal.SIGKILL)
        importer.wait()
    new = set(os.listdir(papers)) - before
    assert new and not [name for name in new if name.startswith(".")]
    for name in new:  # each record complete
        assert yamlio.load_yaml(papers / name).data["title"].startswith("Study number")


def test_a_later_write_removes_the_temporary_files_of_writers_that_are_gone(tmp_path):
    """Where a temporary file has a name (the instant of a replacement's rename, or where
    there is no O_TMPFILE), it carries its writer's pid and paperpool's mark; the next
    write of the same file removes those whose writer is gone and keeps those of a writer
    still running, and every file paperpool did not mark (a pool's own, whatever its name)."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    target = tmp_path / "README.md"
    abandoned = tmp_path / f".README.md.{gone.pid}.0a1b2c3d.tmp"
    running = tmp_path / f".README.md.{os.getpid()}.0a1b2c3d.tmp"
    committed = [
        tmp_path / f".README.md.{gone.pid}.notes123.tmp",  # paperpool's form, not its mark
        tmp_path / ".README.md.notes.tmp",
        tmp_path / ".README.md.\u00b2.abcdefgh.tmp",  # a digit to str.isdigit, not to int()
        tmp_path / f".README.md.{'9' * 20}.abcdefgh.tmp",
    ]
    for path in (abandoned, running, *committed):
        path.write_text("half\n", encoding="utf-8")
    for path in (abandoned, running):
        os.setxattr(path, yamlio._MARK, b"1")
    yamlio.write_atomic(target, "whole\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, running.name, *(p.name for p in committed)])
    with pytest.raises(OSError):
        os.getxattr(target, yamlio._MARK)  # the mark goes once the file is in place


def test_without_o_tmpfile_the_named_temporary_file_works_the_same(tmp_path, monkeypatch):
    """The fallback (another system, or a file system without O_TMPFILE)."""
    monkeypatch.setattr(yamlio, "_O_TMPFILE", None)
    target = tmp_path / "record.yaml"
    yamlio.write_new(target, "title: one\n")
    with pytest.raises(FileExistsError):
        yamlio.write_new(target, "title: two\n")
    yamlio.write_atomic(target, "title: three\n")
    assert os.listdir(tmp_path) == ["record.yaml"] and target.read_text(encoding="utf-8") == "title: three\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~yamlio.UMASK


def test_write_new_refuses_a_name_taken_by_a_link(tmp_path):
    (tmp_path / "record.yaml").symlink_to("elsewhere.yaml")
    with pytest.raises(PaperpoolError) as refused:
        yamlio.write_new(tmp_path / "record.yaml", "title: one\n", shown="papers/record.yaml")
    assert refused.value.message == (
        "papers/record.yaml: is a symbolic link; paperpool never writes through one: "
        "remove it, or choose another name (nothing was written)"
    )
    assert sorted(os.listdir(tmp_path)) == ["record.yaml"]


# ---------------------------------------------------------------------------------
# serve: a request for a path the system cannot take
# ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_serve_answers_a_nul_byte_in_the_path_with_400_and_keeps_serving(tmp_path, capfd):
    from paperpool.sitegen.serve import _Quiet

    (tmp_path / "index.html").write_text("<p>home</p>\n", encoding="utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:

        def ask(method: str, path: str) -> tuple[int, bytes]:
            connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=10)
            connection.request(method, path)
            response = connection.getresponse()
            answer = response.status, response.read()
            connection.close()
            return answer

        assert ask("GET", "/%00")[0] == 400
        assert ask("HEAD", "/index.html%00.html")[0] == 400
        assert ask("GET", "/index.html") == (200, b"<p>home</p>\n")
    finally:
        server.shutdown()
        server.server_close()
    assert "Traceback" not in capfd.readouterr().err


def test_serve_watches_the_pool_s_own_files_never_through_a_link(tmp_path):
    """A link laid into the pool (to /usr, say) is watched as a link, not walked on each
    poll (issue 39); a change to a record still shows."""
    from paperpool.sitegen.serve import watched_files

    pool = Path(shutil.copytree(TINY, tmp_path / "pool"))
    (pool / "system").symlink_to("/usr")
    (pool / "papers" / "elsewhere").symlink_to("/usr/lib")
    watched = watched_files(pool, tmp_path / "site")
    shown = sorted(path.relative_to(pool).as_posix() for path in watched)
    assert "system" in shown and "papers/elsewhere" in shown and "registry.yaml" in shown and "papers/alpha.yaml" in shown
    assert not [name for name in shown if name.startswith(("system/", "papers/elsewhere/"))]
    assert len(shown) < 30


# ---------------------------------------------------------------------------------
# diff: a revision holding a link out of the tree
# ---------------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=cwd, check=True, capture_output=True
    )


@pytest.mark.parametrize("points_at", ["/etc/passwd", "../../../../../../etc/passwd"])
def test_diff_refuses_a_record_linked_out_of_the_tree_at_the_revision(points_at, tmp_path, run):
    """Extracted as validate reads a linked record: refused, never read."""
    pool = Path(shutil.copytree(TINY, tmp_path / "repo" / "pool"))
    (pool / "papers" / "leak.yaml").symlink_to(points_at)
    git(pool.parent, "init", "-q")
    git(pool.parent, "add", "-A")
    git(pool.parent, "commit", "-qm", "a record linked out of the tree")
    (pool / "papers" / "leak.yaml").unlink()
    before = files_under(tmp_path)
    result = run("diff", "HEAD", cwd=pool)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: at HEAD: the pool is not valid: papers/leak.yaml:1: is a symbolic link; a record is a plain file: "
            "replace the link with the file itself; run paperpool validate\n"
        ),
    )
    assert files_under(tmp_path) == before


def test_trace_metrics_into_the_current_folder_says_so(run, tmp_path):
    """Issue 39's fifth review: `-o .` was "the path is empty"."""
    for name in ("a.json", "b.json"):
        shutil.copyfile(REPO / "traces" / "debate-two-rounds.json", tmp_path / name)
    result = run("trace", "metrics", "a.json", "b.json", "-o", ".", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        "Error: -o: the path names no file (it is empty, or the current folder); leave out -o to write to standard "
        "output, or give the name of a file (nothing was written)\n",
    )


def test_an_export_into_a_place_no_folder_can_be_made_names_that_place(run, tmp_path):
    """Issue 39's fifth review: `trace export -o /proc/xx` named the hidden folder made beside it."""
    shutil.copyfile(REPO / "traces" / "debate-two-rounds.json", tmp_path / "a.json")
    result = run("trace", "export", "a.json", "-o", "/proc/paperpool-xx", cwd=tmp_path)
    assert result.exit_code == 1 and result.output.startswith("Error: /proc/paperpool-xx: ")
